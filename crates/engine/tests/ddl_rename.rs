//! RENAME TABLE: the dictionary entry and the `.ibd` file move together, several renames in one
//! call are atomic (a swap through a temporary name, a move across databases), and power loss
//! at any sync point of the rename leaves either every old name or every new name, each with
//! its own rows, no stray file, and a usable engine; new SQL-layer options given with the
//! rename (a foreign key's child told its parent's new name) are there exactly when the new
//! names are.

use std::path::PathBuf;
use std::sync::Arc;

use innoxide_engine::{Engine, Error, KeyBound, Value};
use innoxide_io::SimFs;
use innoxide_testkit::{
    at_every_crash_point, both_outcomes, id_v_def as def, recovered, sim_config, syncs_of_setup,
};

/// Creates `name` holding `n` rows whose `v` is `tag`.
fn filled(engine: &Engine, name: &str, tag: &str, n: i64) -> innoxide_engine::Result<()> {
    let t = engine.create_table(def(name))?;
    let mut trx = engine.begin();
    for i in 0..n {
        trx.insert(&t, &[Value::Int(i), Value::from(tag)])?;
    }
    trx.commit()
}

/// The tags of a table's rows (through the clustered and the secondary index), None if the
/// table does not exist.
fn tags(engine: &Engine, name: &str) -> Option<Vec<String>> {
    let t = engine.table(name).ok()?;
    let mut trx = engine.begin();
    let rows: Vec<Vec<Value>> = trx
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let by_sec: Vec<Vec<Value>> = trx
        .scan(
            &t,
            Some("k_v"),
            KeyBound::Unbounded,
            KeyBound::Unbounded,
            true,
        )
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    trx.commit().unwrap();
    assert_eq!(rows.len(), by_sec.len(), "{name}: indexes disagree");
    Some(
        rows.iter()
            .map(|r| String::from_utf8_lossy(r[1].as_bytes().unwrap()).into_owned())
            .collect(),
    )
}

fn all(tag: &str, n: usize) -> Option<Vec<String>> {
    Some(vec![tag.to_string(); n])
}

#[test]
fn rename_moves_entry_and_file_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = || innoxide_testkit::small_config(dir.path(), 1);
    let engine = Engine::open(cfg()).unwrap();
    filled(&engine, "db1/a", "A", 50).unwrap();
    filled(&engine, "db1/b", "B", 30).unwrap();
    filled(&engine, "db1/c", "C", 10).unwrap();
    // Errors leave everything as it was.
    assert!(matches!(
        engine.rename_table("db1/nope", "db1/x"),
        Err(Error::NoSuchTable(_))
    ));
    assert!(matches!(
        engine.rename_table("db1/a", "db1/b"),
        Err(Error::TableExists(_))
    ));
    // The second step fails: the first is not applied either.
    assert!(matches!(
        engine.rename_tables(&[
            ("db1/a".into(), "db1/z".into()),
            ("db1/q".into(), "db1/r".into())
        ]),
        Err(Error::NoSuchTable(_))
    ));
    assert_eq!(engine.table_names(), ["db1/a", "db1/b", "db1/c"]);
    assert_eq!(tags(&engine, "db1/a"), all("A", 50));
    // A swap through a temporary name, and a move to another database, in one statement.
    engine
        .rename_tables(&[
            ("db1/a".into(), "db1/tmp".into()),
            ("db1/b".into(), "db1/a".into()),
            ("db1/tmp".into(), "db1/b".into()),
            ("db1/c".into(), "db2/c2".into()),
        ])
        .unwrap();
    assert_eq!(tags(&engine, "db1/a"), all("B", 30));
    assert_eq!(tags(&engine, "db1/b"), all("A", 50));
    assert_eq!(tags(&engine, "db2/c2"), all("C", 10));
    assert!(engine.table("db1/c").is_err() && engine.table("db1/tmp").is_err());
    assert!(dir.path().join("db2/c2.ibd").exists());
    assert!(!dir.path().join("db1/c.ibd").exists());
    assert!(!dir.path().join("db1/tmp.ibd").exists());
    // The old name is free again, writes reach the renamed table.
    filled(&engine, "db1/c", "new", 3).unwrap();
    let t = engine.table("db2/c2").unwrap();
    let mut trx = engine.begin();
    trx.insert(&t, &[Value::Int(100), Value::from("C")])
        .unwrap();
    trx.commit().unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();

    let engine = Engine::open(cfg()).unwrap();
    assert_eq!(tags(&engine, "db1/a"), all("B", 30));
    assert_eq!(tags(&engine, "db1/b"), all("A", 50));
    assert_eq!(tags(&engine, "db2/c2"), all("C", 11));
    assert_eq!(tags(&engine, "db1/c"), all("new", 3));
    engine.check().unwrap();
    // A renamed table drops cleanly (its file is found under the new name).
    engine.drop_table("db2/c2").unwrap();
    assert!(!dir.path().join("db2/c2.ibd").exists());
    engine.shutdown().unwrap();
}

/// The workload: three tables, then one atomic rename (a swap plus a move to another
/// database). Returns whether the rename was acknowledged.
fn workload(fs: Arc<SimFs>) -> Option<bool> {
    let engine = Engine::open_with(sim_config(64), fs).ok()?;
    let setup = (|| {
        filled(&engine, "db1/a", "A", 300)?;
        filled(&engine, "db1/b", "B", 200)?;
        filled(&engine, "db1/c", "C", 100)?;
        filled(&engine, "db1/keep", "K", 10)?;
        engine.flush_and_checkpoint()
    })();
    if setup.is_err() {
        engine.kill();
        return None;
    }
    // New SQL-layer options for a table that stays and for one that moves, in the same step.
    let r = engine.rename_tables_with_options(
        &[
            ("db1/a".into(), "db1/tmp".into()),
            ("db1/b".into(), "db1/a".into()),
            ("db1/tmp".into(), "db1/b".into()),
            ("db1/c".into(), "db2/c".into()),
        ],
        &[
            ("db1/keep".into(), "keep-new".into()),
            ("db2/c".into(), "c-new".into()),
        ],
    );
    let acked = r.is_ok();
    if !acked || engine.shutdown().is_err() {
        return Some(acked);
    }
    Some(true)
}

#[test]
fn power_loss_during_rename_leaves_old_or_new_names() {
    let probe = Arc::new(SimFs::new(3));
    // Sync points of the setup alone.
    let before = syncs_of_setup(|e| {
        filled(e, "db1/a", "A", 300).unwrap();
        filled(e, "db1/b", "B", 200).unwrap();
        filled(e, "db1/c", "C", 100).unwrap();
        filled(e, "db1/keep", "K", 10).unwrap();
    });
    assert_eq!(workload(probe.clone()), Some(true));
    let total = probe.sync_count();
    assert!(total > before + 6, "the rename syncs: {before}..{total}");
    let (mut old_states, mut new_states) = (0, 0);
    at_every_crash_point(before + 1, total, workload, |what, img, acked| {
        {
            let engine = recovered(what, img.clone());
            let state = (
                tags(&engine, "db1/a"),
                tags(&engine, "db1/b"),
                tags(&engine, "db1/c"),
                tags(&engine, "db2/c"),
            );
            let old = (all("A", 300), all("B", 200), all("C", 100), None);
            let new = (all("B", 200), all("A", 300), None, all("C", 100));
            let options = |n: &str| engine.table(n).map(|t| t.def.options.clone()).ok();
            let moved_options = (options("db1/keep"), options("db2/c").or(options("db1/c")));
            if state == new {
                assert_eq!(
                    moved_options,
                    (Some("keep-new".into()), Some("c-new".into())),
                    "{what}"
                );
                new_states += 1;
            } else {
                assert!(!acked, "{what}: an acknowledged rename was lost");
                assert!(state == old, "{what}: neither old nor new names: {state:?}");
                assert_eq!(
                    moved_options,
                    (Some(String::new()), Some(String::new())),
                    "{what}"
                );
                old_states += 1;
            }
            // No stray file: exactly the tables' files (and no staging file) remain.
            let mut ibds: Vec<PathBuf> = img
                .list_files()
                .into_iter()
                .filter(|p| p.starts_with("/data/db1") || p.starts_with("/data/db2"))
                .filter(|p| p.extension().is_some_and(|x| x == "ibd" || x == "tmp"))
                .collect();
            ibds.sort();
            let expect: Vec<PathBuf> = if state == new {
                vec![
                    "/data/db1/a.ibd",
                    "/data/db1/b.ibd",
                    "/data/db1/keep.ibd",
                    "/data/db2/c.ibd",
                ]
            } else {
                vec![
                    "/data/db1/a.ibd",
                    "/data/db1/b.ibd",
                    "/data/db1/c.ibd",
                    "/data/db1/keep.ibd",
                ]
            }
            .into_iter()
            .map(PathBuf::from)
            .collect();
            assert_eq!(ibds, expect, "{what}");
            // The recovered engine keeps working: a write to every table, a clean shutdown.
            for n in ["db1/a", "db1/b"] {
                let t = engine.table(n).unwrap();
                let mut trx = engine.begin();
                trx.insert(&t, &[Value::Int(-1), Value::from("x")]).unwrap();
                trx.commit().unwrap();
            }
            engine.check().unwrap();
            engine.shutdown().unwrap();
            let again = Engine::open_with(sim_config(64), img).unwrap();
            assert!(again.table("db1/a").is_ok() && again.table("db1/b").is_ok());
            again.check().unwrap();
            again.shutdown().unwrap();
        }
    });
    both_outcomes("rename", old_states, new_states);
}
