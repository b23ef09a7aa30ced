//! Consistent reads: what each isolation level sees of other transactions' changes, through the
//! clustered index and a secondary index, with off-page values, while purge runs.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use innoxide_engine::{ColumnDef, ColumnKind, Engine, Isolation, KeyBound, Table, TableDef, Value};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(innoxide_testkit::small_config(dir, 2)).unwrap()
}

/// `t (id INT PRIMARY KEY, k INT, v VARCHAR, KEY k (k))`.
fn table(e: &Engine) -> Arc<Table> {
    e.create_table(
        TableDef::new(
            "test/t",
            vec![
                ColumnDef::new("id", ColumnKind::INT),
                ColumnDef::new("k", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 1 << 20 }),
            ],
            Some(vec![0]),
        )
        .index("k", vec![1], false),
    )
    .unwrap()
}

/// The table with one committed row (1, k, v).
fn table_with_row(e: &Engine, k: i64, v: &[u8]) -> Arc<Table> {
    let t = table(e);
    let mut w = e.begin();
    w.insert(&t, &row(1, k, v)).unwrap();
    w.commit().unwrap();
    t
}

fn row(id: i64, k: i64, v: &[u8]) -> Vec<Value> {
    vec![Value::Int(id), Value::Int(k), Value::Bytes(v.to_vec())]
}

fn ids_by_pk(trx: &mut innoxide_engine::Trx, t: &Arc<Table>) -> Vec<(i64, i64)> {
    trx.scan(t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            match (&r[0], &r[1]) {
                (Value::Int(a), Value::Int(b)) => (*a, *b),
                other => panic!("{other:?}"),
            }
        })
        .collect()
}

fn ids_by_k(trx: &mut innoxide_engine::Trx, t: &Arc<Table>, forward: bool) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = trx
        .scan(
            t,
            Some("k"),
            KeyBound::Unbounded,
            KeyBound::Unbounded,
            forward,
        )
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            match (&r[0], &r[1]) {
                (Value::Int(a), Value::Int(b)) => (*a, *b),
                other => panic!("{other:?}"),
            }
        })
        .collect();
    if !forward {
        v.reverse();
    }
    v
}

fn set(e: &Engine, t: &Arc<Table>, id: i64, k: i64) {
    let mut w = e.begin();
    assert!(w
        .update(t, &[Value::Int(id)], &[(1, Value::Int(k))])
        .unwrap());
    w.commit().unwrap();
}

#[test]
fn repeatable_read_keeps_its_snapshot_through_both_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = table(&e);
    let mut w = e.begin();
    for id in 1..=20 {
        w.insert(&t, &row(id, id * 10, b"x")).unwrap();
    }
    w.commit().unwrap();

    let mut r = e.begin();
    let before = ids_by_pk(&mut r, &t);
    assert_eq!(before.len(), 20);

    // Committed changes after the view: updates (twice, moving in the k index), a delete,
    // an insert, a delete followed by a re-insert with another k.
    set(&e, &t, 3, 35);
    set(&e, &t, 3, 1000);
    let mut w = e.begin();
    assert!(w.delete(&t, &[Value::Int(5)]).unwrap());
    w.insert(&t, &row(21, 210, b"new")).unwrap();
    assert!(w.delete(&t, &[Value::Int(7)]).unwrap());
    w.commit().unwrap();
    let mut w = e.begin();
    w.insert(&t, &row(7, 7, b"again")).unwrap();
    w.commit().unwrap();
    // An uncommitted change as well.
    let mut open_w = e.begin();
    open_w
        .update(&t, &[Value::Int(9)], &[(1, Value::Int(-1))])
        .unwrap();

    // Purge may run: the view keeps what it needs.
    e.purge_all().unwrap();
    assert_eq!(ids_by_pk(&mut r, &t), before);
    let mut by_k = before.clone();
    by_k.sort_by_key(|&(_, k)| k);
    assert_eq!(ids_by_k(&mut r, &t, true), by_k);
    assert_eq!(ids_by_k(&mut r, &t, false), by_k);
    assert_eq!(
        r.get(&t, &[Value::Int(5)]).unwrap().unwrap()[1],
        Value::Int(50)
    );
    assert_eq!(r.get(&t, &[Value::Int(21)]).unwrap(), None);
    assert_eq!(
        r.get(&t, &[Value::Int(9)]).unwrap().unwrap()[1],
        Value::Int(90)
    );
    r.commit().unwrap();

    // A new transaction sees the committed state, not the open change.
    let mut r2 = e.begin();
    let now = ids_by_pk(&mut r2, &t);
    assert!(now.contains(&(3, 1000)) && now.contains(&(7, 7)) && now.contains(&(21, 210)));
    assert!(!now.iter().any(|&(id, _)| id == 5));
    assert!(now.contains(&(9, 90)));
    let mut by_k = now.clone();
    by_k.sort_by_key(|&(_, k)| k);
    assert_eq!(ids_by_k(&mut r2, &t, true), by_k);
    r2.commit().unwrap();
    open_w.commit().unwrap();

    e.purge_all().unwrap();
    let rep = e.check().unwrap();
    assert_eq!(rep.active_undo_logs, 0);
    e.shutdown().unwrap();
}

#[test]
fn read_committed_and_read_uncommitted_see_what_their_level_allows() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = table_with_row(&e, 10, b"a");

    let mut rc = e.begin();
    rc.set_isolation(Isolation::ReadCommitted);
    let mut ru = e.begin();
    ru.set_isolation(Isolation::ReadUncommitted);
    let mut rr = e.begin();
    assert_eq!(rr.isolation(), Isolation::RepeatableRead);
    let k = |trx: &mut innoxide_engine::Trx| {
        trx.get(&t, &[Value::Int(1)]).unwrap().map(|r| r[1].clone())
    };
    assert_eq!(k(&mut rc), Some(Value::Int(10)));
    assert_eq!(k(&mut ru), Some(Value::Int(10)));
    assert_eq!(k(&mut rr), Some(Value::Int(10)));

    let mut w = e.begin();
    w.update(&t, &[Value::Int(1)], &[(1, Value::Int(11))])
        .unwrap();
    // Uncommitted: only READ UNCOMMITTED sees it (a dirty read).
    assert_eq!(k(&mut rc), Some(Value::Int(10)));
    assert_eq!(k(&mut ru), Some(Value::Int(11)));
    assert_eq!(k(&mut rr), Some(Value::Int(10)));
    w.rollback().unwrap();
    assert_eq!(k(&mut ru), Some(Value::Int(10)));

    set(&e, &t, 1, 12);
    // Committed: READ COMMITTED sees it at its next statement, REPEATABLE READ does not.
    assert_eq!(k(&mut rc), Some(Value::Int(12)));
    assert_eq!(k(&mut rr), Some(Value::Int(10)));
    // Inside one statement, READ COMMITTED keeps one view.
    rc.begin_statement();
    assert_eq!(k(&mut rc), Some(Value::Int(12)));
    set(&e, &t, 1, 13);
    assert_eq!(k(&mut rc), Some(Value::Int(12)));
    rc.end_statement();
    assert_eq!(k(&mut rc), Some(Value::Int(13)));
    // A transaction always sees its own changes.
    rr.update(&t, &[Value::Int(1)], &[(2, Value::from("mine"))])
        .unwrap();
    let mine = rr.get(&t, &[Value::Int(1)]).unwrap().unwrap();
    assert_eq!(mine[2], Value::from("mine"));
    for trx in [rc, ru, rr] {
        trx.commit().unwrap();
    }
    e.shutdown().unwrap();
}

#[test]
fn old_versions_of_off_page_values_survive_purge_while_a_view_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = table(&e);
    let big = |c: u8| vec![c; 20_000];
    let mut w = e.begin();
    w.insert(&t, &row(1, 1, &big(b'a'))).unwrap();
    w.commit().unwrap();
    let mut r = e.begin();
    r.start_consistent_snapshot();
    for c in [b'b', b'c', b'd'] {
        let mut w = e.begin();
        w.update(&t, &[Value::Int(1)], &[(2, Value::Bytes(big(c)))])
            .unwrap();
        w.commit().unwrap();
        e.purge_all().unwrap();
    }
    let got = r.get(&t, &[Value::Int(1)]).unwrap().unwrap();
    assert_eq!(got[2], Value::Bytes(big(b'a')));
    // The old values' pages are in use (only undo records point to them): not leaked.
    e.check().unwrap();
    r.commit().unwrap();
    e.purge_all().unwrap();
    let mut r = e.begin();
    assert_eq!(
        r.get(&t, &[Value::Int(1)]).unwrap().unwrap()[2],
        Value::Bytes(big(b'd'))
    );
    r.commit().unwrap();
    let rep = e.check().unwrap();
    assert_eq!(rep.active_undo_logs, 0);
    e.shutdown().unwrap();
}

#[test]
fn purge_waits_for_the_oldest_view_then_drains() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = table_with_row(&e, 1, b"a");
    e.purge_all().unwrap();
    let mut r = e.begin();
    r.start_consistent_snapshot();
    for i in 0..50 {
        set(&e, &t, 1, i);
    }
    e.purge_all().unwrap();
    let hist = || {
        e.inner()
            .trx
            .history_len
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(
        hist(),
        50,
        "a view open since before the updates holds them all"
    );
    assert_eq!(
        r.get(&t, &[Value::Int(1)]).unwrap().unwrap()[1],
        Value::Int(1)
    );
    r.commit().unwrap();
    e.purge_all().unwrap();
    assert_eq!(hist(), 0);
    e.shutdown().unwrap();
}

#[test]
fn a_long_history_delays_changes_up_to_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    // No background purge: the history stays until purge_all.
    let mut c = innoxide_testkit::small_config(dir.path(), 2);
    c.background_threads = false;
    let e = Engine::open(c).unwrap();
    let t = table_with_row(&e, 1, b"a");
    e.tunables().max_purge_lag.store(20, Ordering::Relaxed);
    e.tunables()
        .max_purge_lag_delay
        .store(3_000, Ordering::Relaxed);
    // A view keeps the history from being purged.
    let mut r = e.begin();
    r.start_consistent_snapshot();
    for i in 0..40 {
        set(&e, &t, 1, i);
    }
    let delays = || e.inner().purge_stats.dml_delays.load(Ordering::Relaxed);
    let before = delays();
    assert!(before > 0, "changes past a history of 20 were delayed");
    // 41 logs: ratio 2.05 -> (2.05 - 0.5) * 10 ms = 15.5 ms, capped at 3 ms.
    let t0 = std::time::Instant::now();
    set(&e, &t, 1, 100);
    let took = t0.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(3) && took < std::time::Duration::from_millis(12),
        "{took:?}"
    );
    // The delay depends on the history length only: the same without any open view.
    r.commit().unwrap();
    assert_eq!(e.inner().trx.views.n_open(), 0);
    let n = delays();
    set(&e, &t, 1, 101);
    assert_eq!(delays(), n + 1);
    e.purge_all().unwrap();
    let n = delays();
    set(&e, &t, 1, 102);
    assert_eq!(delays(), n, "no delay once purge caught up");
    e.shutdown().unwrap();
}
