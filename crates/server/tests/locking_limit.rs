//! `UPDATE/DELETE ... [ORDER BY key] LIMIT n` lock only the rows they change, as InnoDB's
//! scans stop at the limit: another transaction can change the next rows of the same key
//! prefix at once (dbSTRESS's DEL deletes the oldest HISTORY row of an object while other
//! sessions touch the same object). `SELECT ... ORDER BY key DESC LIMIT n FOR UPDATE` scans
//! backwards and locks the gap above the range and the n rows it returns, as InnoDB does (the
//! "take the newest row" pattern), and so do `UPDATE/DELETE ... ORDER BY key DESC LIMIT n`.
//! An equality on a key prefix gap-locks the record after its matches without locking it; a
//! unique search locks its record alone.

mod common;

use common::{connect, start};
use mysql::prelude::Queryable;

/// Two sessions on a HISTORY-like table d.h (objects 1 and 2 with 3 and 2 rows); the second
/// waits at most a second for a lock.
fn history(s: &common::Server) -> (mysql::Conn, mysql::Conn) {
    let mut a = connect(s);
    let mut b = connect(s);
    a.query_drop("CREATE DATABASE d").unwrap();
    a.query_drop("CREATE TABLE d.h (obj INT, horder INT, v INT, PRIMARY KEY (obj, horder))")
        .unwrap();
    a.query_drop("INSERT INTO d.h VALUES (1,1,0),(1,2,0),(1,3,0),(2,1,0),(2,2,0)")
        .unwrap();
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    (a, b)
}

#[test]
fn limit_stops_the_locking_scan() {
    let s = start();
    let (mut a, mut b) = history(&s);
    for (stmt, free) in [
        // Only (obj, 1) is locked.
        ("DELETE FROM d.h WHERE obj = 1 ORDER BY horder LIMIT 1", 2),
        (
            "UPDATE d.h SET v = 5 WHERE obj = 1 ORDER BY horder LIMIT 1",
            2,
        ),
        ("UPDATE d.h SET v = 6 WHERE obj = 2 LIMIT 1", 2),
        ("DELETE FROM d.h WHERE obj = 1 ORDER BY horder LIMIT 2", 3),
    ] {
        a.query_drop("BEGIN").unwrap();
        a.query_drop(stmt).unwrap();
        assert_eq!(a.affected_rows(), free - 1, "{stmt}");
        let obj = if stmt.contains("obj = 2") { 2 } else { 1 };
        b.query_drop(format!(
            "UPDATE d.h SET v = v + 1 WHERE obj = {obj} AND horder = {free}"
        ))
        .unwrap_or_else(|e| panic!("after `{stmt}`, row ({obj},{free}) is locked: {e}"));
        a.query_drop("ROLLBACK").unwrap();
    }
    let n: u64 = a.query_first("SELECT COUNT(*) FROM d.h").unwrap().unwrap();
    assert_eq!(n, 5, "every change was rolled back");
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// A backward locking read with LIMIT (REPEATABLE READ): the gap above the range and the
/// rows returned are locked (inserts above the largest key and changes to those rows wait);
/// the rows below are not (changing them goes through at once). MariaDB 10.11 gives the
/// same outcomes.
#[test]
fn a_backward_locking_read_stops_at_its_limit() {
    let s = start();
    let mut a = connect(&s);
    let mut b = connect(&s);
    a.query_drop("CREATE DATABASE d").unwrap();
    a.query_drop("CREATE TABLE d.q (id INT PRIMARY KEY, k INT, v INT, KEY k (k))")
        .unwrap();
    a.query_drop("INSERT INTO d.q VALUES (1,1,0),(2,2,0),(3,3,0),(4,4,0),(5,5,0)")
        .unwrap();
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    let waits = |b: &mut mysql::Conn, sql: &str| -> bool {
        match b.query_drop(sql) {
            Ok(()) => false,
            Err(mysql::Error::MySqlError(e)) if e.code == 1205 => true,
            Err(e) => panic!("{sql}: {e}"),
        }
    };
    for (read, by) in [
        (
            "SELECT id FROM d.q ORDER BY id DESC LIMIT 2 FOR UPDATE",
            "id",
        ),
        (
            "SELECT id FROM d.q WHERE k <= 4 ORDER BY k DESC LIMIT 2 FOR UPDATE",
            "k",
        ),
    ] {
        a.query_drop("BEGIN").unwrap();
        let got: Vec<i64> = a.query(read).unwrap();
        let want = if by == "id" { vec![5, 4] } else { vec![4, 3] };
        assert_eq!(got, want, "{read}");
        // The rows below the ones returned are free.
        assert!(
            !waits(&mut b, "UPDATE d.q SET v = v + 1 WHERE id = 1"),
            "{read}"
        );
        assert!(
            !waits(&mut b, "UPDATE d.q SET v = v + 1 WHERE id = 2"),
            "{read}"
        );
        // The rows returned are locked.
        let top = want[0];
        assert!(
            waits(
                &mut b,
                &format!("UPDATE d.q SET v = v + 1 WHERE id = {top}")
            ),
            "{read}"
        );
        a.query_drop("ROLLBACK").unwrap();
    }
    // The gap above the largest key is locked: an insert there waits.
    a.query_drop("BEGIN").unwrap();
    let got: Vec<i64> = a
        .query("SELECT id FROM d.q ORDER BY id DESC LIMIT 1 FOR UPDATE")
        .unwrap();
    assert_eq!(got, vec![5]);
    assert!(waits(&mut b, "INSERT INTO d.q VALUES (9, 9, 0)"));
    assert!(!waits(&mut b, "UPDATE d.q SET v = v + 1 WHERE id = 4"));
    a.query_drop("ROLLBACK").unwrap();
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// `UPDATE/DELETE ... ORDER BY key DESC LIMIT n` read the key range from its top and lock only
/// the n rows they change; outcomes as MariaDB 10.11 gives them.
#[test]
fn descending_changes_with_limit_lock_only_their_rows() {
    let s = start();
    let (mut a, mut b) = history(&s);
    for (stmt, changed, locked) in [
        (
            "DELETE FROM d.h WHERE obj = 1 ORDER BY horder DESC LIMIT 1",
            1,
            [false, false, true, false],
        ),
        (
            "UPDATE d.h SET v = 9 WHERE obj = 1 ORDER BY horder DESC LIMIT 2",
            2,
            [false, true, true, false],
        ),
    ] {
        a.query_drop("BEGIN").unwrap();
        a.query_drop(stmt).unwrap();
        assert_eq!(a.affected_rows(), changed, "{stmt}");
        for ((obj, horder), want) in [(1, 1), (1, 2), (1, 3), (2, 1)].into_iter().zip(locked) {
            let r = b.query_drop(format!(
                "UPDATE d.h SET v = v + 1 WHERE obj = {obj} AND horder = {horder}"
            ));
            let waited = matches!(&r, Err(mysql::Error::MySqlError(e)) if e.code == 1205);
            assert!(r.is_ok() || waited, "{r:?}");
            assert_eq!(waited, want, "after `{stmt}`, row ({obj},{horder})");
        }
        a.query_drop("ROLLBACK").unwrap();
    }
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// An equality on a key prefix (REPEATABLE READ) locks the matching records and only the gap
/// before the first record past them (InnoDB's ROW_SEL_EXACT), not that record: another
/// transaction can lock or change it at once, while inserts into the locked gaps wait. MariaDB
/// 10.11 gives the same outcomes.
#[test]
fn an_equality_locks_only_the_gap_before_the_next_record() {
    let s = start();
    let (mut a, mut b) = history(&s);
    a.query_drop(
        "CREATE TABLE d.g (id INT PRIMARY KEY, v INT, KEY kv (v)); \
         INSERT INTO d.g VALUES (1, 10), (3, 30), (5, 50)",
    )
    .unwrap();
    let timeout = |r: mysql::Result<()>| match r {
        Err(mysql::Error::MySqlError(e)) => e.code == 1205,
        _ => false,
    };
    // A secondary index.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SELECT * FROM d.g FORCE INDEX (kv) WHERE v = 10 FOR SHARE")
        .unwrap();
    b.query_drop("BEGIN").unwrap();
    let next: Vec<(i64, i64)> = b
        .query("SELECT * FROM d.g FORCE INDEX (kv) WHERE v = 30 FOR UPDATE")
        .unwrap();
    assert_eq!(
        next,
        vec![(3, 30)],
        "the record after the match is not locked"
    );
    b.query_drop("ROLLBACK").unwrap();
    assert!(timeout(b.query_drop("INSERT INTO d.g VALUES (2, 20)")));
    assert!(timeout(b.query_drop("INSERT INTO d.g VALUES (4, 9)")));
    b.query_drop("INSERT INTO d.g VALUES (6, 31)").unwrap();
    a.query_drop("ROLLBACK").unwrap();
    // A prefix of the primary key.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE d.h SET v = 1 WHERE obj = 1").unwrap();
    b.query_drop("UPDATE d.h SET v = 2 WHERE obj = 2 AND horder = 1")
        .unwrap();
    assert!(timeout(b.query_drop("INSERT INTO d.h VALUES (1, 4, 0)")));
    assert!(timeout(b.query_drop("INSERT INTO d.h VALUES (0, 9, 0)")));
    a.query_drop("ROLLBACK").unwrap();
    b.query_drop("INSERT INTO d.h VALUES (1, 4, 0)").unwrap();
    // A unique search locks its record alone and nothing after it (MySQL: "for a unique
    // index with a unique search condition, InnoDB locks only the index record found").
    a.query_drop(
        "CREATE TABLE d.u (id INT PRIMARY KEY, u INT NOT NULL, UNIQUE KEY uk (u)); \
         INSERT INTO d.u VALUES (1, 10), (3, 30), (5, 50)",
    )
    .unwrap();
    a.query_drop("BEGIN").unwrap();
    let found: Vec<(i64, i64)> = a
        .query("SELECT * FROM d.u FORCE INDEX (uk) WHERE u = 30 FOR UPDATE")
        .unwrap();
    assert_eq!(found, vec![(3, 30)]);
    b.query_drop("BEGIN").unwrap();
    let next: Vec<(i64, i64)> = b
        .query("SELECT * FROM d.u FORCE INDEX (uk) WHERE u = 50 FOR UPDATE")
        .unwrap();
    assert_eq!(next, vec![(5, 50)]);
    b.query_drop("ROLLBACK").unwrap();
    b.query_drop("INSERT INTO d.u VALUES (4, 40)").unwrap();
    let r = b.query_drop("UPDATE d.u SET id = 33 WHERE u = 30");
    assert!(timeout(r), "the record found is locked");
    a.query_drop("ROLLBACK").unwrap();
    assert_eq!(s.panics(), Vec::<String>::new());
}
