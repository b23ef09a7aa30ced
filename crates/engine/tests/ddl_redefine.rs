//! REDEFINE (`Engine::redefine_table`, ALTER TABLE's INSTANT changes): a table takes a new
//! definition that stores rows as the old one (column and index names, SQL-layer options),
//! together with other tables' new options, in one transaction. A definition that would store
//! rows differently is refused and changes nothing; an obsolete handle finds the new table (a
//! write through it gets TableDefChanged when the column names changed); the change survives
//! a restart; and power loss at any sync point leaves the old definition and options or the
//! new ones, both whole, with every row readable through both indexes.

use std::sync::Arc;

use innoxide_engine::{ColumnDef, ColumnKind, Engine, Error, KeyBound, TableDef, Value};
use innoxide_io::SimFs;
use innoxide_testkit::{
    at_every_crash_point, both_outcomes, id_v_def as def, id_v_filled as filled, recovered,
    sim_config, syncs_of_setup,
};

/// `def` with column `v` named `val`, index `k_v` named `k_val` and options `opts`.
fn renamed(name: &str, opts: &str) -> TableDef {
    let mut d = def(name);
    d.columns[1].name = "val".into();
    d.indexes[0].name = "k_val".into();
    d.options = opts.into();
    d
}

/// The rows of `name` by the clustered index, checked equal to those read through its
/// secondary index (whatever that is named now).
fn rows(engine: &Engine, name: &str) -> Vec<(i64, String)> {
    let t = engine.table(name).unwrap();
    let index = t.def.indexes[0].name.clone();
    let mut trx = engine.begin();
    let read = |trx: &mut innoxide_engine::Trx, i: Option<&str>| -> Vec<(i64, String)> {
        let mut v: Vec<(i64, String)> = trx
            .scan(&t, i, KeyBound::Unbounded, KeyBound::Unbounded, true)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                let Value::Int(id) = r[0] else {
                    panic!("id {:?}", r[0])
                };
                (id, String::from_utf8_lossy(r[1].as_bytes().unwrap()).into())
            })
            .collect();
        v.sort();
        v
    };
    let by_pk = read(&mut trx, None);
    let by_sec = read(&mut trx, Some(&index));
    trx.commit().unwrap();
    assert_eq!(by_pk, by_sec, "{name}: the indexes disagree");
    by_pk
}

fn expected(n: i64) -> Vec<(i64, String)> {
    (0..n).map(|i| (i, format!("r{i}"))).collect()
}

#[test]
fn redefine_changes_names_and_options_only() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = || innoxide_testkit::small_config(dir.path(), 1);
    let engine = Engine::open(cfg()).unwrap();
    filled(&engine, "d/t", 500).unwrap();
    filled(&engine, "d/other", 5).unwrap();
    let old = engine.table("d/t").unwrap();
    // A definition that stores rows differently is refused; nothing changes.
    let mut wider = renamed("d/t", "x");
    wider.columns[1].kind = ColumnKind::Var { max_len: 200 };
    assert!(matches!(
        engine.redefine_table(wider, &[("d/other".into(), "x".into())]),
        Err(Error::InvalidArgument(_))
    ));
    let mut more = def("d/t");
    more.columns
        .push(ColumnDef::new("z", ColumnKind::INT).nullable());
    assert!(engine.redefine_table(more, &[]).is_err());
    assert!(matches!(
        engine.redefine_table(renamed("d/nope", ""), &[]),
        Err(Error::NoSuchTable(_))
    ));
    assert!(Arc::ptr_eq(&engine.table("d/t").unwrap(), &old));
    assert_eq!(engine.table("d/other").unwrap().def.options, "");

    engine
        .redefine_table(
            renamed("d/t", "t-new"),
            &[("d/other".into(), "o-new".into())],
        )
        .unwrap();
    let t = engine.table("d/t").unwrap();
    assert_eq!(t.def, renamed("d/t", "t-new"));
    assert_eq!(t.id, old.id, "the same table, not a copy");
    assert_eq!(engine.table("d/other").unwrap().def.options, "o-new");
    assert_eq!(rows(&engine, "d/t"), expected(500));
    // The old handle is obsolete: a write through it finds the new table, whose columns are
    // named otherwise (the caller made its values for the old ones).
    let mut trx = engine.begin();
    assert!(matches!(
        trx.insert(&old, &[Value::Int(1000), Value::from("x")]),
        Err(Error::TableDefChanged)
    ));
    trx.insert(&t, &[Value::Int(1000), Value::from("r1000")])
        .unwrap();
    trx.commit().unwrap();
    // Only names and options changed, so an options-only change through an obsolete handle
    // of the other table goes on.
    let other = engine.table("d/other").unwrap();
    engine
        .redefine_table(
            {
                let mut d = def("d/other");
                d.options = "o-2".into();
                d
            },
            &[],
        )
        .unwrap();
    let mut trx = engine.begin();
    trx.insert(&other, &[Value::Int(7), Value::from("r7")])
        .unwrap();
    trx.commit().unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();

    let engine = Engine::open(cfg()).unwrap();
    let t = engine.table("d/t").unwrap();
    assert_eq!(t.def, renamed("d/t", "t-new"));
    let mut want = expected(500);
    want.push((1000, "r1000".into()));
    assert_eq!(rows(&engine, "d/t"), want);
    assert_eq!(engine.table("d/other").unwrap().def.options, "o-2");
    assert_eq!(rows(&engine, "d/other").len(), 6);
    engine.check().unwrap();
    engine.shutdown().unwrap();
}

/// The workload: two tables, then one redefinition of `d/t` that also gives `d/keep` new
/// options. Returns whether it was acknowledged.
fn workload(fs: Arc<SimFs>) -> Option<bool> {
    let engine = Engine::open_with(sim_config(64), fs).ok()?;
    let setup = (|| {
        filled(&engine, "d/t", 300)?;
        filled(&engine, "d/keep", 10)?;
        engine.flush_and_checkpoint()
    })();
    if setup.is_err() {
        engine.kill();
        return None;
    }
    let acked = engine
        .redefine_table(
            renamed("d/t", "t-new"),
            &[("d/keep".into(), "keep-new".into())],
        )
        .is_ok();
    if !acked || engine.shutdown().is_err() {
        return Some(acked);
    }
    Some(true)
}

#[test]
fn power_loss_during_redefine_leaves_old_or_new_definition() {
    let before = syncs_of_setup(|e| {
        filled(e, "d/t", 300).unwrap();
        filled(e, "d/keep", 10).unwrap();
    });
    let probe = Arc::new(SimFs::new(3));
    assert_eq!(workload(probe.clone()), Some(true));
    let total = probe.sync_count();
    assert!(total > before, "the redefinition syncs: {before}..{total}");
    let (mut old_states, mut new_states) = (0, 0);
    at_every_crash_point(before + 1, total, workload, |what, img, acked| {
        let engine = recovered(what, img);
        let t = engine.table("d/t").unwrap();
        let keep = engine.table("d/keep").unwrap().def.options.clone();
        if t.def == renamed("d/t", "t-new") {
            assert_eq!(keep, "keep-new", "{what}");
            new_states += 1;
        } else {
            assert!(!acked, "{what}: an acknowledged redefinition was lost");
            assert_eq!(t.def, def("d/t"), "{what}: neither old nor new");
            assert_eq!(keep, "", "{what}");
            old_states += 1;
        }
        assert_eq!(rows(&engine, "d/t"), expected(300), "{what}");
        let mut trx = engine.begin();
        trx.insert(&t, &[Value::Int(-1), Value::from("x")]).unwrap();
        trx.commit().unwrap();
        engine.check().unwrap();
        engine.shutdown().unwrap();
    });
    both_outcomes("redefine", old_states, new_states);
}

/// A transaction holding a row lock and the table's lock takes the metadata lock again while a
/// DDL waits for it, and that DDL waits for a statement that waits for the row: the
/// transaction must get in past the waiting DDL (latch F5, as MySQL's transaction-long
/// metadata locks let it), or the three wait until the statement's lock wait times out (seen
/// as a 1205 in the SQL suite's writers during instant ALTERs).
#[test]
fn a_transaction_with_a_stake_in_the_table_passes_a_waiting_ddl() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(innoxide_testkit::small_config(dir.path(), 4)).unwrap());
    filled(&engine, "d/t", 10).unwrap();
    let t = engine.table("d/t").unwrap();
    let mut a = engine.begin();
    assert!(a
        .update(&t, &[Value::Int(1)], &[(1, Value::from("a1"))])
        .unwrap());
    // B waits for A's row, inside its statement (holding the metadata lock shared).
    let b = {
        let (engine, t) = (engine.clone(), t.clone());
        std::thread::spawn(move || {
            let mut b = engine.begin();
            b.set_lock_wait_timeout(20);
            let r = b.update(&t, &[Value::Int(1)], &[(1, Value::from("b1"))]);
            b.commit().unwrap();
            r
        })
    };
    while engine.inner().trx.locks.waiting().is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The DDL waits for B's shared metadata lock.
    let ddl = {
        let engine = engine.clone();
        let mut d = def("d/t");
        d.options = "after".into();
        std::thread::spawn(move || engine.redefine_table(d, &[]))
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    assert!(a
        .update(&t, &[Value::Int(2)], &[(1, Value::from("a2"))])
        .unwrap());
    let waited = started.elapsed();
    a.commit().unwrap();
    assert!(
        waited < std::time::Duration::from_secs(5),
        "A waited {waited:?} behind the DDL, which waited for B, which waited for A"
    );
    assert!(b.join().unwrap().unwrap());
    ddl.join().unwrap().unwrap();
    let rows = rows(&engine, "d/t");
    assert_eq!(rows[1], (1, "b1".to_string()));
    assert_eq!(rows[2], (2, "a2".to_string()));
    assert_eq!(engine.table("d/t").unwrap().def.options, "after");
}
