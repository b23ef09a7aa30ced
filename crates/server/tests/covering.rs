//! Covering reads: a query using only columns a secondary index holds (its own and the
//! primary key's) reads them from the index entries, not the rows (engine row::scan S1, S2).
//! Shown from outside: EXPLAIN says "Using index", the buffer pool is asked for a few pages
//! instead of one clustered lookup per row, and every isolation outcome stays what the row
//! lookups gave: a snapshot keeps seeing what it saw while others update, delete and insert
//! (committed or not), a transaction sees its own changes, READ UNCOMMITTED sees others'
//! uncommitted ones, and an index built after a snapshot was taken gives it the snapshot's rows.

mod common;

use common::{connect, global_status as status, start};
use mysql::prelude::*;

/// `EXPLAIN sql`'s Extra column of its first row.
fn extra(c: &mut mysql::Conn, sql: &str) -> String {
    let row: mysql::Row = c.query_first(format!("EXPLAIN {sql}")).unwrap().unwrap();
    row.get::<Option<String>, _>("Extra")
        .unwrap()
        .unwrap_or_default()
}

/// Rows of `sql` as (id, k) pairs.
fn pairs(c: &mut mysql::Conn, sql: &str) -> Vec<(i64, i64)> {
    c.query(sql).unwrap()
}

fn setup(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE cv").unwrap();
    c.query_drop("USE cv").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(30) NOT NULL, \
         KEY k_1 (k))",
    )
    .unwrap();
    let ins = c.prep("INSERT INTO t VALUES (?, ?, ?)").unwrap();
    c.query_drop("BEGIN").unwrap();
    for i in 1..=3000i64 {
        c.exec_drop(&ins, (i, i % 100, format!("row {i:05}")))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
}

#[test]
fn a_covering_read_uses_the_index_entries_only() {
    let s = start();
    let mut c = connect(&s);
    setup(&mut c);
    let covering = "SELECT id, k FROM t WHERE k BETWEEN 10 AND 14";
    let lookups = "SELECT id, c FROM t WHERE k BETWEEN 10 AND 14";
    assert_eq!(extra(&mut c, covering), "Using index");
    assert_eq!(extra(&mut c, "SELECT id FROM t WHERE k = 3"), "Using index");
    assert_eq!(extra(&mut c, lookups), "");
    assert_eq!(extra(&mut c, "SELECT id FROM t WHERE k = 3 FOR UPDATE"), "");
    // ORDER BY the index's columns without LIMIT: read in order from the index, no sort.
    assert_eq!(
        extra(&mut c, "SELECT k, id FROM t ORDER BY k, id"),
        "Using index"
    );

    let want: Vec<(i64, i64)> = (1..=3000)
        .filter(|i| (10..=14).contains(&(i % 100)))
        .map(|i| (i, i % 100))
        .collect();
    let sorted = |mut v: Vec<(i64, i64)>| {
        v.sort();
        v
    };
    let before = status(&mut c, "Innodb_buffer_pool_read_requests");
    let got = pairs(&mut c, covering);
    let covered_pages = status(&mut c, "Innodb_buffer_pool_read_requests") - before;
    assert_eq!(sorted(got), want);

    let before = status(&mut c, "Innodb_buffer_pool_read_requests");
    let rows: Vec<(i64, String)> = c.query(lookups).unwrap();
    let looked_up_pages = status(&mut c, "Innodb_buffer_pool_read_requests") - before;
    assert_eq!(rows.len(), want.len());
    // 150 entries sit on a handful of leaves; the lookups fix at least one page per row.
    assert!(
        covered_pages < 40 && looked_up_pages >= 150,
        "page requests: covering {covered_pages}, with lookups {looked_up_pages}"
    );

    let ordered: Vec<(i64, i64)> = c.query("SELECT k, id FROM t ORDER BY k, id").unwrap();
    let mut all: Vec<(i64, i64)> = (1..=3000).map(|i| (i % 100, i)).collect();
    all.sort();
    assert_eq!(ordered, all);
}

#[test]
fn covering_reads_keep_every_isolation_outcome() {
    let s = start();
    let mut a = connect(&s);
    setup(&mut a);
    let mut b = connect(&s);
    b.query_drop("USE cv").unwrap();
    let q = "SELECT id, k FROM t WHERE k BETWEEN 5 AND 6 ORDER BY id";
    let original = pairs(&mut a, q);
    assert_eq!(original.len(), 60);

    // A snapshot taken before others change the index keeps its rows.
    a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    assert_eq!(pairs(&mut a, q), original);
    b.query_drop("UPDATE t SET k = 50 WHERE id = 5").unwrap();
    b.query_drop("UPDATE t SET k = 6 WHERE id = 7").unwrap();
    b.query_drop("DELETE FROM t WHERE id = 106").unwrap();
    b.query_drop("INSERT INTO t VALUES (5000, 5, 'new')")
        .unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE t SET k = 99 WHERE id = 205").unwrap();
    b.query_drop("INSERT INTO t VALUES (5001, 6, 'uncommitted')")
        .unwrap();
    assert_eq!(pairs(&mut a, q), original, "the snapshot's rows");

    // Its own changes it sees, through the same index.
    a.query_drop("UPDATE t SET k = 5 WHERE id = 1").unwrap();
    let mut own = original.clone();
    own.insert(0, (1, 5));
    assert_eq!(pairs(&mut a, q), own, "the snapshot plus its own change");
    a.query_drop("ROLLBACK").unwrap();

    // READ UNCOMMITTED sees b's open transaction; READ COMMITTED does not.
    let mut now: Vec<(i64, i64)> = original
        .iter()
        .copied()
        .filter(|&(id, _)| id != 5 && id != 106)
        .collect();
    now.push((7, 6));
    now.push((5000, 5));
    now.sort();
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    assert_eq!(pairs(&mut a, q), now, "READ COMMITTED");
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        .unwrap();
    let mut dirty: Vec<(i64, i64)> = now.iter().copied().filter(|&(id, _)| id != 205).collect();
    dirty.push((5001, 6));
    dirty.sort();
    assert_eq!(pairs(&mut a, q), dirty, "READ UNCOMMITTED");
    b.query_drop("ROLLBACK").unwrap();
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    assert_eq!(pairs(&mut a, q), now, "after b's rollback");

    // An index built after a snapshot was taken lacks the entries of the versions the
    // snapshot sees: reading through it is MySQL's error 1412, other paths still work.
    a.query_drop("CREATE TABLE other (x INT PRIMARY KEY)")
        .unwrap();
    a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let _: Vec<i64> = a.query("SELECT x FROM other").unwrap();
    b.query_drop("INSERT INTO t VALUES (6000, 6, 'after the snapshot')")
        .unwrap();
    b.query_drop("UPDATE t SET c = 'changed' WHERE id = 6")
        .unwrap();
    b.query_drop("ALTER TABLE t ADD INDEX kc (k, c)").unwrap();
    let by_kc = "SELECT id, c FROM t WHERE k = 6 AND c >= '' ORDER BY id";
    let row: mysql::Row = b.query_first(format!("EXPLAIN {by_kc}")).unwrap().unwrap();
    assert_eq!(row.get::<String, _>("key").unwrap(), "kc");
    let err = a.query_drop(by_kc).unwrap_err();
    match err {
        mysql::Error::MySqlError(e) => {
            assert_eq!((e.code, e.state.as_str()), (1412, "HY000"), "{}", e.message);
            assert_eq!(
                e.message,
                "Table definition has changed, please retry transaction"
            );
        }
        other => panic!("{other}"),
    }
    let snap: Vec<(i64, String)> = a
        .query("SELECT id, c FROM t WHERE k + 0 = 6 ORDER BY id")
        .unwrap();
    assert!(
        !snap.iter().any(|(id, _)| *id == 6000),
        "a row inserted after the snapshot"
    );
    assert!(
        snap.iter().any(|(id, c)| *id == 6 && c == "row 00006"),
        "the snapshot's c"
    );
    a.query_drop("COMMIT").unwrap();
    let after: Vec<(i64, String)> = a.query(by_kc).unwrap();
    assert!(after.iter().any(|(id, _)| *id == 6000));
    assert!(after.iter().any(|(id, c)| *id == 6 && c == "changed"));
    assert_eq!(after.len(), 31);
}
