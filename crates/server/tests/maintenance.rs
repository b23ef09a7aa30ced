//! Table maintenance statements and what they show: statistics through SHOW TABLE STATUS,
//! SHOW INDEX and information_schema (exact when every leaf is sampled, close when sampled,
//! recomputed after a tenth of the rows changed (innodb_stats_auto_recalc) or by ANALYZE
//! TABLE, sized in whole pages), and CHECK TABLE.

mod common;

use common::{connect, start};
use mysql::prelude::*;

/// (Rows, Data_length, Index_length) from information_schema.TABLES.
fn sizes(c: &mut mysql::Conn, table: &str) -> (u64, u64, u64) {
    c.query_first(format!(
        "SELECT TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = '{table}'"
    ))
    .unwrap()
    .unwrap()
}

/// Cardinality by (index, seq) from SHOW INDEX.
fn cardinality(c: &mut mysql::Conn, table: &str) -> Vec<(String, u32, Option<u64>)> {
    let rows: Vec<mysql::Row> = c.query(format!("SHOW INDEX FROM {table}")).unwrap();
    rows.into_iter()
        .map(|r| {
            (
                r.get::<String, _>("Key_name").unwrap(),
                r.get::<u32, _>("Seq_in_index").unwrap(),
                r.get::<Option<u64>, _>("Cardinality").unwrap(),
            )
        })
        .collect()
}

fn fill(c: &mut mysql::Conn, table: &str, from: u32, to: u32) {
    let mut q = format!("INSERT INTO {table} VALUES ");
    for i in from..=to {
        if i > from {
            q.push(',');
        }
        q.push_str(&format!("({i}, {}, 'c{i}', {})", i % 50, i % 7));
    }
    c.query_drop(q).unwrap();
}

/// Database d and its table t: a primary key, a plain, a unique and a two-column index.
fn table_t(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(40), g INT, \
         KEY k_1 (k), UNIQUE KEY uc (c), KEY kg (k, g))",
    )
    .unwrap();
}

#[test]
fn statistics_count_rows_and_distinct_keys() {
    let s = start();
    let mut c = connect(&s);
    table_t(&mut c);
    // An empty table: no rows, one root page per index.
    let (rows, data, index) = sizes(&mut c, "t");
    assert_eq!(rows, 0);
    assert!(data >= 16384 && data % 16384 == 0, "{data}");
    assert!(index >= 3 * 16384 && index % 16384 == 0, "{index}");
    // A few leaves, all sampled: exact.
    for chunk in 0..4 {
        fill(&mut c, "t", chunk * 500 + 1, chunk * 500 + 500);
    }
    let (rows, data, index) = sizes(&mut c, "t");
    assert_eq!(rows, 2000);
    assert!(data > 16384 && index > 3 * 16384, "{data} {index}");
    let status: mysql::Row = c
        .query_first("SHOW TABLE STATUS LIKE 't'")
        .unwrap()
        .unwrap();
    assert_eq!(status.get::<u64, _>("Rows"), Some(2000));
    assert_eq!(status.get::<u64, _>("Data_length"), Some(data));
    assert_eq!(status.get::<u64, _>("Avg_row_length"), Some(data / 2000));
    assert_eq!(status.get::<u64, _>("Max_data_length"), Some(0));
    assert_eq!(
        cardinality(&mut c, "t"),
        vec![
            ("PRIMARY".into(), 1, Some(2000)),
            ("k_1".into(), 1, Some(50)),
            ("uc".into(), 1, Some(2000)),
            ("kg".into(), 1, Some(50)),
            ("kg".into(), 2, Some(350)),
        ]
    );
    let mut stat: Vec<(String, u64)> = c
        .query(
            "SELECT INDEX_NAME, CARDINALITY FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = 'd' AND SEQ_IN_INDEX = 1",
        )
        .unwrap();
    stat.sort();
    assert_eq!(
        stat,
        vec![
            ("PRIMARY".into(), 2000),
            ("k_1".into(), 50),
            ("kg".into(), 50),
            ("uc".into(), 2000),
        ]
    );
    // With innodb_stats_auto_recalc OFF the figures stay until ANALYZE TABLE.
    c.query_drop("SET GLOBAL innodb_stats_auto_recalc = OFF")
        .unwrap();
    fill(&mut c, "t", 2001, 2500);
    assert_eq!(sizes(&mut c, "t").0, 2000);
    let r: Vec<(String, String, String, String)> = c.query("ANALYZE TABLE t").unwrap();
    assert_eq!(r[0].2, "status");
    assert_eq!(sizes(&mut c, "t").0, 2500);
    // ON: recomputed once more than a tenth of the rows changed (250 here), not before.
    c.query_drop("SET GLOBAL innodb_stats_auto_recalc = ON")
        .unwrap();
    c.query_drop("DELETE FROM t WHERE id <= 100").unwrap();
    assert_eq!(sizes(&mut c, "t").0, 2500);
    c.query_drop("DELETE FROM t WHERE id <= 300").unwrap();
    assert_eq!(sizes(&mut c, "t").0, 2200);
    // Many leaves, 20 sampled per index: within 10% of the truth.
    fill(&mut c, "t", 10_001, 30_000);
    c.query_drop("ANALYZE TABLE t").unwrap();
    let (rows, ..) = sizes(&mut c, "t");
    assert!((19_800..=24_200).contains(&rows), "{rows}");
    // EXPLAIN's estimate of a key range over many leaves (both ends looked up).
    for (sql, want) in [
        ("SELECT * FROM t WHERE id BETWEEN 15000 AND 19999", 5000u64),
        ("SELECT * FROM t WHERE k = 7", 20_000 / 50),
        ("SELECT * FROM t WHERE c >= 'c2' AND c < 'c3'", 10_500),
    ] {
        let r: mysql::Row = c.query_first(format!("EXPLAIN {sql}")).unwrap().unwrap();
        let got: u64 = r.get("rows").unwrap();
        assert!(
            got * 10 >= want * 7 && got * 10 <= want * 13,
            "{sql}: {got} estimated, {want} true"
        );
    }
    // One sampled leaf still gives an estimate, and the variable shows the setting.
    c.query_drop("SET GLOBAL innodb_stats_persistent_sample_pages = 1")
        .unwrap();
    c.query_drop("ANALYZE TABLE t").unwrap();
    assert!(sizes(&mut c, "t").0 > 0);
    let v: Option<(String, String)> = c
        .query_first("SHOW GLOBAL VARIABLES LIKE 'innodb_stats_persistent_sample_pages'")
        .unwrap();
    assert_eq!(v.unwrap().1, "1");
    // ANALYZE of a table that does not exist reports it in the result set.
    let r: Vec<(String, String, String, String)> = c.query("ANALYZE TABLE nope").unwrap();
    assert_eq!(r[0].2, "Error");
    assert_eq!(r[0].3, "Table 'd.nope' doesn't exist");
}

#[test]
fn check_table_verifies_the_table_once_no_change_is_uncommitted() {
    let s = start();
    let mut c = connect(&s);
    table_t(&mut c);
    fill(&mut c, "t", 1, 3000);
    c.query_drop("DELETE FROM t WHERE id % 3 = 0").unwrap();
    c.query_drop("UPDATE t SET c = CONCAT(c, 'x'), k = k + 1 WHERE id % 5 = 0")
        .unwrap();
    let r: Vec<(String, String, String, String)> = c.query("CHECK TABLE t, nope").unwrap();
    assert_eq!(
        r,
        vec![
            ("d.t".into(), "check".into(), "status".into(), "OK".into()),
            (
                "d.nope".into(),
                "check".into(),
                "Error".into(),
                "Table 'd.nope' doesn't exist".into()
            ),
        ]
    );
    // An uncommitted change of the table: CHECK waits for it (here until the lock wait
    // timeout), and passes once it is committed.
    let mut w = connect(&s);
    w.query_drop("USE d").unwrap();
    w.query_drop("BEGIN").unwrap();
    w.query_drop("INSERT INTO t VALUES (5000, 1, 'new', 1)")
        .unwrap();
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    let r: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(r[0].2, "Error");
    assert_eq!(
        r[0].3,
        "Lock wait timeout exceeded; try restarting transaction"
    );
    w.query_drop("COMMIT").unwrap();
    let r: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(r[0].3, "OK");
}

#[test]
fn optimize_table_rebuilds_it_and_its_statistics() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, k INT NOT NULL, c VARCHAR(40), \
         g INT, KEY k_1 (k)) COMMENT 'kept'",
    )
    .unwrap();
    fill(&mut c, "t", 1, 20_000);
    c.query_drop("DELETE FROM t WHERE id > 2000").unwrap();
    let before = sizes(&mut c, "t");
    let r: Vec<(String, String, String, String)> = c.query("OPTIMIZE TABLE t").unwrap();
    assert_eq!(
        r,
        vec![
            (
                "d.t".into(),
                "optimize".into(),
                "note".into(),
                "Table does not support optimize, doing recreate + analyze instead".into()
            ),
            (
                "d.t".into(),
                "optimize".into(),
                "status".into(),
                "OK".into()
            ),
        ]
    );
    let after = sizes(&mut c, "t");
    assert_eq!(after.0, 2000);
    assert!(after.1 < before.1 / 2, "data {before:?} -> {after:?}");
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k < 50")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2000);
    // The definition and the AUTO_INCREMENT counter survive the rebuild.
    let create: (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(create.1.contains("COMMENT='kept'"), "{}", create.1);
    c.query_drop("INSERT INTO t (k) VALUES (1)").unwrap();
    assert_eq!(c.last_insert_id(), 20_001);
    let r: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(r[0].3, "OK");
}
