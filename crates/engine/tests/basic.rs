//! End-to-end behaviour of the engine API on the real file system: create, write, read, scan,
//! restart, check.

use std::sync::Arc;

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, EngineConfig, IndexSpec, KeyBound, TableDef, Value,
};

fn cfg(dir: &std::path::Path) -> EngineConfig {
    innoxide_testkit::small_config(dir, 1)
}

fn people(engine: &Engine) -> Arc<innoxide_engine::Table> {
    engine
        .create_table(
            TableDef::new(
                "test/people",
                vec![
                    ColumnDef::new("id", ColumnKind::INT),
                    ColumnDef::new("name", ColumnKind::Var { max_len: 100 }),
                    ColumnDef::new(
                        "age",
                        ColumnKind::Int {
                            bytes: 2,
                            unsigned: true,
                        },
                    )
                    .nullable(),
                    ColumnDef::new("bio", ColumnKind::Var { max_len: 1 << 20 }).nullable(),
                ],
                Some(vec![0]),
            )
            .index("k_name", vec![1], false),
        )
        .unwrap()
}

fn row(id: i64, name: &str, age: Option<u64>, bio_len: usize) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::from(name),
        age.map_or(Value::Null, Value::UInt),
        if bio_len == 0 {
            Value::Null
        } else {
            Value::Bytes(vec![(id % 251) as u8; bio_len])
        },
    ]
}

#[test]
fn crud_scan_restart_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(cfg(dir.path())).unwrap();
    assert!(engine.open_report().initialised);
    let t = people(&engine);
    let mut trx = engine.begin();
    for i in 0..2000 {
        let bio = if i % 97 == 0 { 20_000 } else { 0 };
        trx.insert(
            &t,
            &row(
                i,
                &format!("name{:05}", (i * 7919) % 2000),
                Some((i % 90) as u64),
                bio,
            ),
        )
        .unwrap();
    }
    trx.commit().unwrap();
    let err = engine
        .begin()
        .insert(&t, &row(5, "dup", None, 0))
        .unwrap_err();
    assert!(
        matches!(err, innoxide_engine::Error::DuplicateKey { .. }),
        "{err}"
    );

    let mut trx = engine.begin();
    assert_eq!(
        trx.get(&t, &[Value::Int(42)]).unwrap().unwrap()[1],
        Value::from("name00598")
    );
    let big = trx.get(&t, &[Value::Int(97)]).unwrap().unwrap();
    assert_eq!(big[3], Value::Bytes(vec![97; 20_000]));
    assert!(trx.get(&t, &[Value::Int(5000)]).unwrap().is_none());
    // Range scans both ways.
    let fwd: Vec<i64> = trx
        .scan(
            &t,
            None,
            KeyBound::Included(vec![Value::Int(100)]),
            KeyBound::Excluded(vec![Value::Int(110)]),
            true,
        )
        .unwrap()
        .map(|r| r.unwrap()[0].as_i64().unwrap())
        .collect();
    assert_eq!(fwd, (100..110).collect::<Vec<_>>());
    let back: Vec<i64> = trx
        .scan(
            &t,
            None,
            KeyBound::Unbounded,
            KeyBound::Included(vec![Value::Int(1999)]),
            false,
        )
        .unwrap()
        .map(|r| r.unwrap()[0].as_i64().unwrap())
        .collect();
    assert_eq!(back, (0..2000).rev().collect::<Vec<_>>());
    // Secondary index scan returns rows in name order.
    let names: Vec<Value> = trx
        .scan(
            &t,
            Some("k_name"),
            KeyBound::Included(vec![Value::from("name00010")]),
            KeyBound::Included(vec![Value::from("name00019")]),
            true,
        )
        .unwrap()
        .map(|r| r.unwrap()[1].clone())
        .collect();
    assert_eq!(names.len(), 10);
    assert!(names.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
    // Update (incl. an indexed column and a big value), delete.
    assert!(trx
        .update(
            &t,
            &[Value::Int(10)],
            &[(1, Value::from("zzz")), (3, Value::Bytes(vec![1; 50_000]))]
        )
        .unwrap());
    assert!(trx.delete(&t, &[Value::Int(11)]).unwrap());
    assert!(!trx.delete(&t, &[Value::Int(11)]).unwrap());
    trx.commit().unwrap();
    engine.purge_all().unwrap();
    let rep = engine.check().unwrap();
    assert_eq!(
        rep.records,
        1999 + rep.delete_marked + 1 /* SYS_TABLES row */
    );
    engine.shutdown().unwrap();

    // Reopen: everything is still there, nothing to recover.
    let engine = Engine::open(cfg(dir.path())).unwrap();
    assert!(!engine.open_report().initialised);
    assert_eq!(engine.open_report().redo_groups, 0);
    let t = engine.table("test/people").unwrap();
    let mut trx = engine.begin();
    assert_eq!(
        trx.get(&t, &[Value::Int(10)]).unwrap().unwrap()[3],
        Value::Bytes(vec![1; 50_000])
    );
    assert!(trx.get(&t, &[Value::Int(11)]).unwrap().is_none());
    let z: Vec<_> = trx
        .scan(
            &t,
            Some("k_name"),
            KeyBound::Included(vec![Value::from("zzz")]),
            KeyBound::Unbounded,
            true,
        )
        .unwrap()
        .collect();
    assert_eq!(z.len(), 1);
    drop(trx);
    engine.check().unwrap();
    // DDL: index build, drop index, drop table.
    engine
        .create_index(
            "test/people",
            IndexSpec {
                name: "k_age".into(),
                columns: vec![2, 0],
                unique: true,
            },
        )
        .unwrap();
    let t = engine.table("test/people").unwrap();
    let mut trx = engine.begin();
    let n = trx
        .scan(
            &t,
            Some("k_age"),
            KeyBound::Included(vec![Value::UInt(3)]),
            KeyBound::Included(vec![Value::UInt(3)]),
            true,
        )
        .unwrap()
        .count();
    assert!(n > 10);
    trx.commit().unwrap();
    engine.check().unwrap();
    engine.drop_index("test/people", "k_name").unwrap();
    engine.check().unwrap();
    engine.drop_table("test/people").unwrap();
    assert!(engine.table("test/people").is_err());
    engine.purge_all().unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();
}

#[test]
fn rollback_restores_everything() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(cfg(dir.path())).unwrap();
    let t = people(&engine);
    let mut trx = engine.begin();
    for i in 0..500 {
        trx.insert(
            &t,
            &row(
                i,
                &format!("n{i}"),
                Some(1),
                if i % 50 == 0 { 9000 } else { 0 },
            ),
        )
        .unwrap();
    }
    trx.commit().unwrap();
    let before = engine.check().unwrap();
    let mut trx = engine.begin();
    for i in 500..900 {
        trx.insert(
            &t,
            &row(
                i,
                &format!("n{i}"),
                None,
                if i % 40 == 0 { 9000 } else { 0 },
            ),
        )
        .unwrap();
    }
    for i in 0..300 {
        trx.update(
            &t,
            &[Value::Int(i)],
            &[
                (1, Value::from(format!("changed{i}").as_str())),
                (3, Value::Bytes(vec![7; 3000])),
            ],
        )
        .unwrap();
    }
    for i in 300..450 {
        trx.delete(&t, &[Value::Int(i)]).unwrap();
    }
    trx.rollback().unwrap();
    engine.purge_all().unwrap();
    let after = engine.check().unwrap();
    assert_eq!(before.records, after.records);
    let mut trx = engine.begin();
    for i in [0i64, 50, 299, 300, 449] {
        let r = trx.get(&t, &[Value::Int(i)]).unwrap().unwrap();
        assert_eq!(
            r,
            row(
                i,
                &format!("n{i}"),
                Some(1),
                if i % 50 == 0 { 9000 } else { 0 }
            )
        );
    }
    assert!(trx.get(&t, &[Value::Int(600)]).unwrap().is_none());
    drop(trx);
    engine.shutdown().unwrap();
}
