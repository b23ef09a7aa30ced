//! Instant ADD COLUMN (`Engine::redefine_table` with columns added last, record.rs "added
//! fields"): no record is rewritten; rows stored before read the added columns' values from
//! the dictionary, through every path (clustered and secondary scans, point reads, older
//! versions, rollback, purge, an index built later, a restart); rows written after store every
//! column; and power loss at any sync point of the change leaves the old definition or the new
//! one, whole, with every row readable.

use std::sync::Arc;

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, IndexSpec, InstantValue, KeyBound, TableDef, Value,
};
use innoxide_io::SimFs;
use innoxide_testkit::{
    at_every_crash_point, both_outcomes, id_v_def as def, id_v_filled as filled, recovered,
    sim_config, syncs_of_setup,
};

/// `def` plus `n INT NULL` (older rows: NULL) and `s VARCHAR(20) NOT NULL` (older rows:
/// "dflt"), added instantly.
fn with_n_s(name: &str) -> TableDef {
    let mut d = def(name);
    let n = ColumnDef::new("n", ColumnKind::INT).nullable();
    let s = ColumnDef::new("s", ColumnKind::Var { max_len: 80 });
    d.columns.push(n.added_instantly(&Value::Null).unwrap());
    d.columns
        .push(s.added_instantly(&Value::from("dflt")).unwrap());
    d
}

/// `with_n_s` plus `b LONGBLOB NULL`, added instantly with a 3,000-byte value.
fn with_b(name: &str) -> TableDef {
    let mut d = with_n_s(name);
    let b = ColumnDef::new("b", ColumnKind::Var { max_len: 1 << 24 }).nullable();
    d.columns
        .push(b.added_instantly(&Value::Bytes(blob())).unwrap());
    d
}

fn blob() -> Vec<u8> {
    (0..3000u32).map(|i| (i % 251) as u8).collect()
}

/// Every row of `name` by the clustered index, checked equal to the rows read through each
/// secondary index and to point reads.
fn rows(engine: &Engine, name: &str) -> Vec<Vec<Value>> {
    let t = engine.table(name).unwrap();
    let mut trx = engine.begin();
    let by_pk: Vec<Vec<Value>> = trx
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    for ix in &t.def.indexes {
        let mut by_ix: Vec<Vec<Value>> = trx
            .scan(
                &t,
                Some(&ix.name),
                KeyBound::Unbounded,
                KeyBound::Unbounded,
                true,
            )
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        by_ix.sort_by_key(|r| r[0].as_i64());
        assert_eq!(by_pk, by_ix, "{name}: index {} disagrees", ix.name);
    }
    for r in by_pk.iter().step_by(97) {
        assert_eq!(trx.get(&t, &r[..1]).unwrap().as_ref(), Some(r));
    }
    trx.commit().unwrap();
    by_pk
}

fn row(id: i64, v: &str, rest: &[Value]) -> Vec<Value> {
    let mut r = vec![Value::Int(id), Value::from(v)];
    r.extend_from_slice(rest);
    r
}

#[test]
fn added_columns_read_their_value_in_older_rows() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = || innoxide_testkit::small_config(dir.path(), 2);
    let engine = Engine::open(cfg()).unwrap();
    filled(&engine, "d/t", 2000).unwrap();
    let old = engine.table("d/t").unwrap();
    // Redo generated: a rewrite of 2,000 rows would log well over 40 KB.
    let lsn = |e: &Engine| e.inner().log.lsn();
    // An uncommitted update from before the change, rolled back after it: the short record
    // comes back from undo.
    let mut early = engine.begin();
    early
        .update(&old, &[Value::Int(7)], &[(1, Value::from("early"))])
        .unwrap();
    // A read view from before the change: it still reads the rows as they were.
    let mut reader = engine.begin();
    reader.start_consistent_snapshot();

    let before = lsn(&engine);
    engine.redefine_table(with_n_s("d/t"), &[]).unwrap();
    let t = engine.table("d/t").unwrap();
    assert_eq!(t.id, old.id, "the same table, not a copy");
    assert!(t.clustered.leaf.has_added());
    let logged = lsn(&engine) - before;
    assert!(logged < 4096, "no row rewritten: {logged} bytes of redo");
    early.rollback().unwrap();
    let dflt = [Value::Null, Value::from("dflt")];
    let want: Vec<Vec<Value>> = (0..2000).map(|i| row(i, &format!("r{i}"), &dflt)).collect();
    assert_eq!(rows(&engine, "d/t"), want);
    assert_eq!(
        reader.get(&t, &[Value::Int(7)]).unwrap(),
        Some(row(7, "r7", &dflt))
    );

    // Writes after the change: inserts store every column, updates rewrite a short record
    // whole, a delete marks one in place, a rolled-back delete and update restore it.
    let mut trx = engine.begin();
    trx.insert(&t, &row(5000, "new", &[Value::Int(1), Value::from("x")]))
        .unwrap();
    trx.update(&t, &[Value::Int(3)], &[(2, Value::Int(33))])
        .unwrap();
    trx.update(&t, &[Value::Int(4)], &[(1, Value::from("moved"))])
        .unwrap();
    assert!(trx.delete(&t, &[Value::Int(5)]).unwrap());
    trx.commit().unwrap();
    let mut undone = engine.begin();
    assert!(undone.delete(&t, &[Value::Int(6)]).unwrap());
    undone
        .update(&t, &[Value::Int(8)], &[(3, Value::from("gone"))])
        .unwrap();
    undone.rollback().unwrap();
    assert_eq!(
        reader.get(&t, &[Value::Int(3)]).unwrap(),
        Some(row(3, "r3", &dflt)),
        "the older version comes from undo"
    );
    reader.commit().unwrap();
    engine.purge_all().unwrap();
    let mut want = want;
    want[3][2] = Value::Int(33);
    want[4][1] = Value::from("moved");
    want.remove(5);
    want.push(row(5000, "new", &[Value::Int(1), Value::from("x")]));
    assert_eq!(rows(&engine, "d/t"), want);
    engine.check().unwrap();

    // A second instant ADD COLUMN: rows of both earlier layouts read its long value.
    engine.redefine_table(with_b("d/t"), &[]).unwrap();
    for r in &mut want {
        r.push(Value::Bytes(blob()));
    }
    assert_eq!(rows(&engine, "d/t"), want);
    // An index on an added column, built from the stored rows.
    engine
        .create_index(
            "d/t",
            IndexSpec {
                name: "k_s".into(),
                columns: vec![3],
                unique: false,
            },
        )
        .unwrap();
    assert_eq!(rows(&engine, "d/t"), want);
    engine.check().unwrap();
    engine.shutdown().unwrap();

    let engine = Engine::open(cfg()).unwrap();
    let t = engine.table("d/t").unwrap();
    assert_eq!(
        t.def.columns[4].instant,
        Some(InstantValue::Bytes(blob())),
        "kept in the dictionary"
    );
    assert_eq!(rows(&engine, "d/t"), want);
    engine.check().unwrap();
    engine.shutdown().unwrap();
}

#[test]
fn an_added_column_must_come_last_and_be_added_instantly() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(innoxide_testkit::small_config(dir.path(), 1)).unwrap();
    filled(&engine, "d/t", 10).unwrap();
    // Added without a value for the stored rows: refused.
    let mut plain = def("d/t");
    plain
        .columns
        .push(ColumnDef::new("n", ColumnKind::INT).nullable());
    assert!(engine.redefine_table(plain, &[]).is_err());
    // Added before a stored column: refused (id is the key, v is stored after it).
    let mut early = def("d/t");
    early.columns.insert(
        1,
        ColumnDef::new("n", ColumnKind::INT)
            .added_instantly(&Value::Int(1))
            .unwrap(),
    );
    early.indexes[0].columns = vec![2];
    assert!(engine.redefine_table(early, &[]).is_err());
    // A NOT NULL column cannot read NULL.
    assert!(ColumnDef::new("n", ColumnKind::INT)
        .added_instantly(&Value::Null)
        .is_err());
    assert_eq!(engine.table("d/t").unwrap().def, def("d/t"));
    engine.shutdown().unwrap();
}

/// The workload: a table, flushed; then an instant ADD COLUMN and updates of older rows.
fn workload(fs: Arc<SimFs>) -> Option<bool> {
    let engine = Engine::open_with(sim_config(64), fs).ok()?;
    if filled(&engine, "d/t", 300)
        .and_then(|()| engine.flush_and_checkpoint())
        .is_err()
    {
        engine.kill();
        return None;
    }
    let acked = engine.redefine_table(with_n_s("d/t"), &[]).is_ok();
    if acked {
        // Updates of older rows (short records rewritten whole), in one transaction.
        let _ = (|| {
            let t = engine.table("d/t")?;
            let mut trx = engine.begin();
            for id in (0..300).step_by(10) {
                trx.update(&t, &[Value::Int(id)], &[(2, Value::Int(id))])?;
            }
            trx.commit()?;
            engine.shutdown()
        })();
    }
    Some(acked)
}

#[test]
fn power_loss_during_instant_add_leaves_old_or_new_definition() {
    let before = syncs_of_setup(|e| filled(e, "d/t", 300).unwrap());
    let probe = Arc::new(SimFs::new(3));
    assert_eq!(workload(probe.clone()), Some(true));
    let total = probe.sync_count();
    let (mut old_states, mut new_states) = (0, 0);
    at_every_crash_point(before + 1, total, workload, |what, img, acked| {
        let engine = recovered(what, img);
        let t = engine.table("d/t").unwrap();
        let got = rows(&engine, "d/t");
        assert_eq!(got.len(), 300, "{what}");
        if t.def == with_n_s("d/t") {
            new_states += 1;
            // The updates' transaction is all there or not at all; other rows read NULL.
            let updated = got[0][2] == Value::Int(0);
            for (id, r) in got.iter().enumerate() {
                let id = id as i64;
                assert_eq!(r[..2], row(id, &format!("r{id}"), &[])[..], "{what}");
                assert_eq!(r[3], Value::from("dflt"), "{what}");
                let want = if id % 10 == 0 && updated {
                    Value::Int(id)
                } else {
                    Value::Null
                };
                assert_eq!(r[2], want, "{what}: row {id}");
            }
        } else {
            assert!(!acked, "{what}: an acknowledged change was lost");
            assert_eq!(t.def, def("d/t"), "{what}: neither old nor new");
            old_states += 1;
        }
        let mut trx = engine.begin();
        let mut r = row(-1, "x", &[]);
        if t.def.columns.len() == 4 {
            r.extend([Value::Int(1), Value::from("y")]);
        }
        trx.insert(&t, &r).unwrap();
        trx.commit().unwrap();
        engine.check().unwrap();
        engine.shutdown().unwrap();
    });
    both_outcomes("instant add", old_states, new_states);
}
