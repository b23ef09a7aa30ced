//! The planner from outside: which rows the engine reads (Innodb_rows_read) for sysbench's
//! queries and for ORDER BY ... LIMIT, what EXPLAIN shows, and prepared statements that keep
//! their plan between executions yet follow DDL, privileges and session values.

mod common;

use common::{connect, start};
use mysql::prelude::*;

const ROWS: i64 = 2000;

fn rows_read(c: &mut mysql::Conn) -> u64 {
    common::global_status(c, "Innodb_rows_read")
}

fn com(c: &mut mysql::Conn, name: &str) -> u64 {
    let v: (String, u64) = c
        .query_first(format!("SHOW SESSION STATUS LIKE '{name}'"))
        .unwrap()
        .unwrap();
    v.1
}

/// A sysbench-like table: id primary key, k secondary, c and pad text.
fn sbtest(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE p").unwrap();
    c.query_drop("USE p").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL, k INT NOT NULL DEFAULT 0, c CHAR(20) NOT NULL, \
         PRIMARY KEY (id), KEY k_1 (k))",
    )
    .unwrap();
    let ins = c.prep("INSERT INTO t VALUES (?, ?, ?)").unwrap();
    c.query_drop("BEGIN").unwrap();
    for i in 1..=ROWS {
        // k repeats every 100 ids; c runs against id.
        c.exec_drop(&ins, (i, i % 100, format!("c{:05}", ROWS - i)))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
}

/// Runs a prepared statement twice and returns its rows and the rows the engine read for
/// the second execution (the plan is then the kept one).
fn measured(c: &mut mysql::Conn, sql: &str, params: (i64, i64)) -> (Vec<mysql::Row>, u64) {
    let st = c.prep(sql).unwrap();
    let first: Vec<mysql::Row> = c.exec(&st, params).unwrap();
    let before = rows_read(c);
    let rows: Vec<mysql::Row> = c.exec(&st, params).unwrap();
    let read = rows_read(c) - before;
    assert_eq!(
        first, rows,
        "{sql}: a kept plan returns what the first execution did"
    );
    (rows, read)
}

#[test]
fn index_paths_and_order_by_limit() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    // sysbench's point and range queries read only the rows they ask for.
    let (rows, read) = measured(&mut c, "SELECT c FROM t WHERE id = ? + ?", (7, 0));
    assert_eq!(rows.len(), 1);
    assert!(read <= 1, "point select read {read} rows");
    for sql in [
        "SELECT c FROM t WHERE id BETWEEN ? AND ?",
        "SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?",
        "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c",
        "SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c",
    ] {
        let (_, read) = measured(&mut c, sql, (1000, 1099));
        assert!(
            read <= 100,
            "{sql}: read {read} rows, not just the range's 100"
        );
    }
    // ORDER BY a key with LIMIT stops after the rows it returns, both ways, and returns what
    // sorting (an expression: no index has its order) returns after reading every row.
    for (sql, sorted, from) in [
        (
            "SELECT id FROM t WHERE id > ? ORDER BY id LIMIT ?",
            "SELECT id FROM t WHERE id > ? ORDER BY id + 0 LIMIT ?",
            0,
        ),
        (
            "SELECT id FROM t WHERE id > ? ORDER BY id DESC LIMIT ?",
            "SELECT id FROM t WHERE id > ? ORDER BY id + 0 DESC LIMIT ?",
            0,
        ),
        (
            "SELECT id FROM t WHERE id > ? ORDER BY id LIMIT ?",
            "SELECT id FROM t WHERE id > ? ORDER BY id + 0 LIMIT ?",
            1500,
        ),
    ] {
        let (got, read) = measured(&mut c, sql, (from, 5));
        let (want, full) = measured(&mut c, sorted, (from, 5));
        assert_eq!(got.len(), 5);
        assert_eq!(got, want, "{sql}");
        assert!(read < 200, "{sql}: read {read} rows for 5");
        assert!(
            full >= (ROWS - from) as u64,
            "{sorted}: a sort reads every row"
        );
    }
    let (got, read) = measured(
        &mut c,
        "SELECT id FROM t WHERE id > ? ORDER BY id LIMIT ?",
        (0, 5),
    );
    assert!(read < 200, "ORDER BY id LIMIT 5 read {read} rows");
    let ids: Vec<i64> = got.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    let (got, read) = measured(
        &mut c,
        "SELECT id FROM t WHERE id > ? ORDER BY id DESC LIMIT ?",
        (0, 3),
    );
    assert!(read < 200, "ORDER BY id DESC LIMIT 3 read {read} rows");
    let ids: Vec<i64> = got.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(ids, vec![ROWS, ROWS - 1, ROWS - 2]);
    // A secondary index gives ORDER BY k LIMIT its order; ties come in primary-key order
    // there, any order being right for them.
    let (got, read) = measured(
        &mut c,
        "SELECT k FROM t WHERE ? = ? ORDER BY k LIMIT 30",
        (1, 1),
    );
    assert!(read < 200, "ORDER BY k LIMIT 30 read {read} rows");
    let ks: Vec<i64> = got.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(ks, [vec![0; 20], vec![1; 10]].concat());
    // Equality on the key prefix: WHERE k = ? ORDER BY k DESC reads k's rows only.
    let (got, read) = measured(
        &mut c,
        "SELECT id FROM t WHERE k = ? AND ? ORDER BY k DESC",
        (42, 1),
    );
    assert_eq!(got.len(), 20);
    assert!(read <= 20, "k = 42 read {read} rows");
    // IN on the primary key, in descending order.
    let got: Vec<i64> = c
        .query("SELECT id FROM t WHERE id IN (5, 900, 17) ORDER BY id DESC")
        .unwrap();
    assert_eq!(got, vec![900, 17, 5]);
    // A join ordered by the first table's key stops early too.
    let got: Vec<(i64, i64)> = c
        .query("SELECT a.id, b.id FROM t a JOIN t b ON b.id = a.id + 1 ORDER BY a.id DESC LIMIT 2")
        .unwrap();
    assert_eq!(got, vec![(ROWS - 1, ROWS), (ROWS - 2, ROWS - 1)]);
}

fn explain(c: &mut mysql::Conn, sql: &str) -> (String, Option<String>, String) {
    let row: mysql::Row = c.query_first(format!("EXPLAIN {sql}")).unwrap().unwrap();
    let ty: String = row.get("type").unwrap();
    let key: Option<String> = row.get("key").unwrap();
    let extra: Option<String> = row.get("Extra").unwrap();
    (ty, key, extra.unwrap_or_default())
}

#[test]
fn explain_shows_the_path_run() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let pk = Some("PRIMARY".to_string());
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE id = 5"),
        ("const".into(), pk.clone(), String::new())
    );
    assert_eq!(
        explain(
            &mut c,
            "SELECT c FROM t WHERE id BETWEEN 5 AND 10 ORDER BY c"
        ),
        ("range".into(), pk.clone(), "Using filesort".into())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t ORDER BY id DESC LIMIT 3"),
        ("index".into(), pk.clone(), String::new())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t ORDER BY k LIMIT 3"),
        ("index".into(), Some("k_1".into()), String::new())
    );
    // Without LIMIT a secondary index is not worth a lookup per row: scan and sort.
    assert_eq!(
        explain(&mut c, "SELECT c FROM t ORDER BY k"),
        ("ALL".into(), None, "Using filesort".into())
    );
    // A secondary index holds the primary key after its columns: k fixed, rows come in id
    // order (no sort, as in MySQL), forward or backward.
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE k = 3 ORDER BY id"),
        ("ref".into(), Some("k_1".into()), String::new())
    );
    let ids: Vec<i64> = c
        .query("SELECT id FROM t WHERE k = 3 ORDER BY id DESC LIMIT 3")
        .unwrap();
    assert_eq!(ids, vec![ROWS - 97, ROWS - 197, ROWS - 297]);
    let ids: Vec<i64> = c
        .query("SELECT id FROM t WHERE k = 3 ORDER BY id LIMIT 2")
        .unwrap();
    assert_eq!(ids, vec![3, 103]);
    // Joins: the inner table is looked up per row of the outer one, as run_select does.
    let join = |c: &mut mysql::Conn, sql: &str| -> Vec<(String, String, Option<String>)> {
        let rows: Vec<mysql::Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
        rows.into_iter()
            .map(|r| {
                (
                    r.get::<String, _>("table").unwrap(),
                    r.get::<String, _>("type").unwrap(),
                    r.get::<Option<String>, _>("key").unwrap(),
                )
            })
            .collect()
    };
    let row =
        |t: &str, ty: &str, k: Option<&str>| (t.to_string(), ty.to_string(), k.map(str::to_string));
    assert_eq!(
        join(
            &mut c,
            "SELECT a.c, b.c FROM t a JOIN t b ON b.id = a.k WHERE a.id < 10"
        ),
        vec![
            row("a", "range", Some("PRIMARY")),
            row("b", "eq_ref", Some("PRIMARY"))
        ]
    );
    assert_eq!(
        join(
            &mut c,
            "SELECT a.c, b.c FROM t a LEFT JOIN t b ON b.k = a.id"
        ),
        vec![row("a", "ALL", None), row("b", "ref", Some("k_1"))]
    );
    assert_eq!(
        join(
            &mut c,
            "SELECT a.c, b.c FROM t a, t b WHERE b.id = 5 AND a.id = 7"
        ),
        vec![
            row("a", "const", Some("PRIMARY")),
            row("b", "const", Some("PRIMARY"))
        ]
    );
    assert_eq!(
        join(&mut c, "SELECT a.c, b.c FROM t a JOIN t b ON b.c = a.c"),
        vec![row("a", "ALL", None), row("b", "ALL", None)]
    );
    // Row estimates from the table statistics and the two ends of a key range.
    let est = |c: &mut mysql::Conn, sql: &str| -> Vec<u64> {
        let rows: Vec<mysql::Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
        rows.into_iter()
            .map(|r| r.get::<u64, _>("rows").unwrap())
            .collect()
    };
    let near = |got: u64, want: u64| got * 10 >= want * 7 && got * 10 <= want * 13;
    assert_eq!(est(&mut c, "SELECT c FROM t WHERE id = 5"), vec![1]);
    assert_eq!(
        est(&mut c, "SELECT c FROM t WHERE id IN (5, 6, 70)"),
        vec![3]
    );
    let all = est(&mut c, "SELECT c FROM t")[0];
    assert!(near(all, ROWS as u64), "{all}");
    for (sql, want) in [
        ("SELECT c FROM t WHERE id BETWEEN 100 AND 1099", 1000),
        ("SELECT c FROM t WHERE id > 1500", ROWS as u64 - 1500),
        ("SELECT c FROM t WHERE k = 3", ROWS as u64 / 100),
        (
            "SELECT c FROM t WHERE k BETWEEN 10 AND 19",
            ROWS as u64 / 10,
        ),
    ] {
        let got = est(&mut c, sql)[0];
        assert!(near(got, want), "{sql}: {got} rows estimated, {want} true");
    }
    let per_row = est(
        &mut c,
        "SELECT a.c, b.c FROM t a JOIN t b ON b.k = a.id WHERE a.id < 10",
    );
    assert_eq!(per_row[0], 9);
    assert!(near(per_row[1], ROWS as u64 / 100), "{per_row:?}");
    // Several usable keys: the one reading fewest estimated rows. A secondary index's key
    // goes on with the primary key (MySQL's index extensions): k = 3 and the id range are
    // both one range of k_1, with nothing left to test.
    assert_eq!(
        explain(
            &mut c,
            "SELECT c FROM t WHERE k = 3 AND id BETWEEN 5 AND 10"
        ),
        ("range".into(), Some("k_1".into()), String::new())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE k = 3 AND id > 10"),
        ("range".into(), Some("k_1".into()), String::new())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE k > 0"),
        ("ALL".into(), None, "Using where".into())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE k > 97"),
        ("range".into(), Some("k_1".into()), String::new())
    );
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k = 3 AND id BETWEEN 5 AND 210")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2);
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k > 0")
        .unwrap()
        .unwrap();
    assert_eq!(n, ROWS - ROWS / 100);
    // A key compared with NULL matches nothing: MySQL's "Impossible WHERE" row.
    let r: mysql::Row = c
        .query_first("EXPLAIN SELECT c FROM t WHERE id = NULL")
        .unwrap()
        .unwrap();
    assert_eq!(r.get::<Option<String>, _>("table").unwrap(), None);
    assert_eq!(
        r.get::<String, _>("Extra").unwrap(),
        "Impossible WHERE".to_string()
    );
    // A derived table read whole, and a JSON_TABLE, have their rows too (as MySQL: the
    // outer SELECT is PRIMARY, the derived table `<derived2>` with the rows it holds: one per
    // k, WHERE tested on them; then the derived table's own SELECT, DERIVED).
    let shown = |c: &mut mysql::Conn, sql: &str| -> Vec<(String, String, String, u64, String)> {
        c.query_map(format!("EXPLAIN {sql}"), |r: mysql::Row| {
            let extra: Option<String> = r.get("Extra").unwrap();
            (
                r.get("select_type").unwrap(),
                r.get("table").unwrap(),
                r.get("type").unwrap(),
                r.get("rows").unwrap(),
                extra.unwrap_or_default(),
            )
        })
        .unwrap()
    };
    assert_eq!(
        shown(
            &mut c,
            "SELECT * FROM (SELECT k, COUNT(*) n FROM t GROUP BY k) AS d WHERE n > 1"
        ),
        [
            (
                "PRIMARY".into(),
                "<derived2>".into(),
                "ALL".into(),
                100,
                "Using where".into()
            ),
            (
                "DERIVED".into(),
                "t".into(),
                "index".into(),
                ROWS as u64,
                "Using index".into()
            )
        ]
    );
    assert_eq!(
        shown(
            &mut c,
            "SELECT * FROM JSON_TABLE('[1, 2, 3]', '$[*]' COLUMNS (x INT PATH '$')) AS j"
        ),
        [(
            "SIMPLE".into(),
            "j".into(),
            "ALL".into(),
            2,
            "Table function: json_table; Using temporary".into()
        )]
    );
    // A view over a view is merged down to its base table (merge.rs G9): the key serves it.
    c.query_drop("CREATE VIEW tv1 AS SELECT id, k, c FROM t WHERE id > 0")
        .unwrap();
    c.query_drop("CREATE VIEW tv2 AS SELECT id AS i, c FROM tv1")
        .unwrap();
    c.query_drop("CREATE VIEW tv3 AS SELECT i, c FROM tv2")
        .unwrap();
    let (ty, key, _) = explain(&mut c, "SELECT c FROM tv3 WHERE i = 5");
    assert!(ty != "ALL" && key == pk, "{ty} {key:?}");
}

/// USE / FORCE / IGNORE INDEX act as in MySQL (EXPLAIN and the rows read, compared with what
/// MariaDB 10.11 shows for the same table), and an unknown name is error 1176.
/// EXPLAIN's key_len (bytes of the key parts used, +1 for a nullable one, +2 for a variable
/// length), ref ("const" per part, the column a join looks up by) and filtered (MySQL's
/// estimates for the conditions the path leaves to test: 10% for an equality, 33.33% for an
/// inequality, 11.11% for BETWEEN and LIKE; 100% when the key applies them all), as MySQL
/// 8.0 shows them.
#[test]
fn explain_columns_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    c.query_drop(
        "CREATE TABLE u (a BIGINT, b VARCHAR(10), n INT, d DATETIME(3), \
         PRIMARY KEY (a), KEY kb (b, n), KEY kd (d))",
    )
    .unwrap();
    c.query_drop("INSERT INTO u VALUES (1, 'x', 1, NOW()), (2, 'y', 2, NOW())")
        .unwrap();
    c.query_drop("ANALYZE TABLE t, u").unwrap();
    let cols = |c: &mut mysql::Conn, sql: &str| -> Vec<(Option<u64>, Option<String>, String)> {
        let rows: Vec<mysql::Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
        rows.into_iter()
            .map(|r| {
                let len: Option<String> = r.get("key_len").unwrap();
                (
                    len.map(|l| l.parse().unwrap()),
                    r.get("ref").unwrap(),
                    r.get("filtered").unwrap(),
                )
            })
            .collect()
    };
    let one = |l: Option<u64>, r: Option<&str>, f: &str| (l, r.map(String::from), f.to_string());
    for (sql, want) in [
        (
            "SELECT * FROM t WHERE id = 5",
            one(Some(4), Some("const"), "100.00"),
        ),
        // A const table's row is read once: its other conditions are no filter.
        (
            "SELECT * FROM t WHERE id = 5 AND c = 'x'",
            one(Some(4), Some("const"), "100.00"),
        ),
        (
            "SELECT * FROM t WHERE k = 5",
            one(Some(4), Some("const"), "100.00"),
        ),
        (
            "SELECT * FROM t WHERE k = 5 AND c = 'x'",
            one(Some(4), Some("const"), "10.00"),
        ),
        (
            "SELECT * FROM t WHERE id > 5 AND c > 'x'",
            one(Some(4), None, "33.33"),
        ),
        ("SELECT * FROM t WHERE c = 'x'", one(None, None, "10.00")),
        (
            "SELECT * FROM t WHERE c LIKE 'x%' OR c = 'y'",
            one(None, None, "20.00"),
        ),
        ("SELECT * FROM t", one(None, None, "100.00")),
        // VARCHAR(10) utf8mb4, nullable: 10 * 4 + 2 + 1; then INT, nullable: 4 + 1.
        (
            "SELECT * FROM u WHERE b = 'x'",
            one(Some(43), Some("const"), "100.00"),
        ),
        (
            "SELECT * FROM u WHERE b = 'x' AND n = 1",
            one(Some(48), Some("const,const"), "100.00"),
        ),
        // DATETIME(3): 5 + 2 bytes of fraction, nullable.
        (
            "SELECT * FROM u WHERE d = '2020-01-01'",
            one(Some(8), Some("const"), "100.00"),
        ),
        (
            "SELECT * FROM u WHERE a = 1",
            one(Some(8), Some("const"), "100.00"),
        ),
    ] {
        assert_eq!(cols(&mut c, sql), [want], "{sql}");
    }
    let joined = cols(
        &mut c,
        "SELECT * FROM t a JOIN t b ON b.id = a.k WHERE a.id < 10 AND b.c = 'z'",
    );
    assert_eq!(
        joined,
        [
            one(Some(4), None, "100.00"),
            one(Some(4), Some("p.a.k"), "10.00"),
        ]
    );
    let (_, _, extra) = explain(&mut c, "SELECT * FROM t WHERE k = 5 AND c = 'x'");
    assert_eq!(extra, "Using where");
}

#[test]
fn index_hints_steer_the_planner() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    c.query_drop("ALTER TABLE t ADD INDEX c_1 (c)").unwrap();
    let pk = Some("PRIMARY".to_string());
    let k1 = Some("k_1".to_string());
    // IGNORE INDEX (PRIMARY): no primary-key lookup; the narrowest index holding c and id
    // is read whole instead of the table, as MySQL reads the shortest covering key.
    assert_eq!(
        explain(
            &mut c,
            "SELECT c FROM t IGNORE INDEX (PRIMARY) WHERE id = 5"
        ),
        (
            "index".into(),
            Some("c_1".into()),
            "Using where; Using index".into()
        )
    );
    assert_eq!(
        explain(
            &mut c,
            "SELECT c, k FROM t IGNORE INDEX (PRIMARY) WHERE id = 5"
        ),
        ("ALL".into(), None, "Using where".into())
    );
    let one: Vec<String> = c
        .query("SELECT c FROM t IGNORE INDEX (PRIMARY) WHERE id = 5")
        .unwrap();
    assert_eq!(one, [format!("c{:05}", ROWS - 5)]);
    // USE INDEX (): no index at all.
    assert_eq!(
        explain(&mut c, "SELECT c FROM t USE INDEX () WHERE k = 5"),
        ("ALL".into(), None, "Using where".into())
    );
    // k > 0 holds for 99% of the rows: a scan unless FORCE INDEX.
    assert_eq!(
        explain(&mut c, "SELECT c FROM t WHERE k > 0"),
        ("ALL".into(), None, "Using where".into())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t FORCE INDEX (k_1) WHERE k > 0"),
        ("range".into(), k1.clone(), String::new())
    );
    // FORCE INDEX reads in the index's order instead of sorting, even without LIMIT.
    assert_eq!(
        explain(&mut c, "SELECT c FROM t FORCE INDEX (k_1) ORDER BY k"),
        ("index".into(), k1.clone(), String::new())
    );
    // USE INDEX limits the choice to the names given (another key, PRIMARY, is not used).
    assert_eq!(
        explain(
            &mut c,
            "SELECT c FROM t USE INDEX (k_1) WHERE id = 5 AND k = 5"
        ),
        // (k, id): both equalities are the key, nothing is left to test.
        ("ref".into(), k1.clone(), String::new())
    );
    assert_eq!(
        explain(
            &mut c,
            "SELECT c FROM t USE KEY (PRIMARY) WHERE id = 5 AND k = 5"
        ),
        ("const".into(), pk.clone(), String::new())
    );
    assert_eq!(
        explain(&mut c, "SELECT c FROM t IGNORE INDEX (k_1) WHERE k = 5"),
        ("ALL".into(), None, "Using where".into())
    );
    // The rows are the same whichever path is taken; the rows read follow the path.
    let want: Vec<i64> = (1..=ROWS).filter(|i| i % 100 == 5).collect();
    for sql in [
        "SELECT id FROM t WHERE k = 5 ORDER BY id",
        "SELECT id FROM t IGNORE INDEX (k_1) WHERE k = 5 ORDER BY id",
        "SELECT id FROM t USE INDEX () WHERE k = 5 ORDER BY id",
        "SELECT id FROM t FORCE INDEX (k_1) WHERE k = 5 ORDER BY id",
    ] {
        let before = rows_read(&mut c);
        let got: Vec<i64> = c.query(sql).unwrap();
        let read = rows_read(&mut c) - before;
        assert_eq!(got, want, "{sql}");
        let scanned = sql.contains("IGNORE") || sql.contains("USE INDEX ()");
        assert_eq!(
            read,
            if scanned {
                ROWS as u64
            } else {
                want.len() as u64
            },
            "{sql}"
        );
    }
    // A single-table UPDATE takes them too, and EXPLAIN UPDATE shows what it runs as MySQL
    // does (select_type UPDATE, a key lookup as a range, the rows tested).
    for (sql, scanned) in [
        ("UPDATE t IGNORE INDEX (k_1) SET c = c WHERE k = 5", true),
        ("UPDATE t FORCE INDEX (k_1) SET c = c WHERE k = 5", false),
    ] {
        let before = rows_read(&mut c);
        c.query_drop(sql).unwrap();
        let read = rows_read(&mut c) - before;
        let whole = if scanned {
            ROWS as u64
        } else {
            want.len() as u64
        };
        assert_eq!(read, whole, "{sql}");
        let shown = if scanned {
            ("ALL".to_string(), None, "Using where".to_string())
        } else {
            ("range".to_string(), k1.clone(), "Using where".to_string())
        };
        assert_eq!(explain(&mut c, sql), shown, "{sql}");
        let kind: String = c
            .query_first(format!("EXPLAIN {sql}"))
            .unwrap()
            .map(|r: mysql::Row| r.get::<String, _>(1).unwrap())
            .unwrap();
        assert_eq!(kind, "UPDATE");
    }
    // A name that is not an index of the table: 1176, naming the alias.
    let e = c
        .query_drop("SELECT * FROM t AS a USE INDEX (nope)")
        .unwrap_err();
    match e {
        mysql::Error::MySqlError(e) => {
            assert_eq!((e.code, e.state.as_str()), (1176, "42000"));
            assert_eq!(e.message, "Key 'nope' doesn't exist in table 'a'");
        }
        other => panic!("{other}"),
    }
}

/// ORDER BY ... LIMIT over one table scans only the key, WHERE and ORDER BY columns, then reads
/// the winning rows whole by primary key (select.rs S7): the same rows as a plain sort, one
/// extra row read per winner, and a snapshot still gets the versions it sees.
#[test]
fn top_n_reads_the_winners_whole_afterwards() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let q = "SELECT id, k, c FROM t WHERE id > 0 ORDER BY k DESC, id LIMIT 5";
    let before = rows_read(&mut c);
    let got: Vec<(i64, i64, String)> = c.query(q).unwrap();
    let read = rows_read(&mut c) - before;
    // k = id % 100: the largest k are ids 99, 199, ...
    let want: Vec<(i64, i64, String)> = (0..5)
        .map(|j| 99 + 100 * j)
        .map(|i| (i, i % 100, format!("c{:05}", ROWS - i)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(read, ROWS as u64 + 5, "the scan, then the five winners");
    // A derived table is sorted whole, without S7: the same rows.
    let plain: Vec<(i64, i64, String)> = c
        .query("SELECT id, k, c FROM (SELECT * FROM t) d WHERE id > 0 ORDER BY k DESC, id LIMIT 5")
        .unwrap();
    assert_eq!(plain, want);

    // A snapshot reads the winners in its own view: another session's later change of a
    // column the scan did not read is not seen.
    let mut b = connect(&s);
    b.query_drop("USE p").unwrap();
    c.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    b.query_drop("UPDATE t SET c = 'zzz' WHERE id = 2").unwrap();
    let q2 = "SELECT id, c FROM t WHERE id <= 10 ORDER BY k DESC LIMIT 3";
    let snap: Vec<(i64, String)> = c.query(q2).unwrap();
    assert_eq!(
        snap,
        vec![
            (10, "c01990".into()),
            (9, "c01991".into()),
            (8, "c01992".into())
        ]
    );
    let snap: Vec<(i64, String)> = c
        .query("SELECT id, c FROM t WHERE id <= 10 ORDER BY k LIMIT 2 OFFSET 1")
        .unwrap();
    assert_eq!(snap, vec![(2, "c01998".into()), (3, "c01997".into())]);
    c.query_drop("COMMIT").unwrap();
    let now: Vec<(i64, String)> = c
        .query("SELECT id, c FROM t WHERE id <= 10 ORDER BY k LIMIT 2 OFFSET 1")
        .unwrap();
    assert_eq!(now, vec![(2, "zzz".into()), (3, "c01997".into())]);
}

#[test]
fn prepared_plans_follow_ddl_privileges_and_session() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let st = c.prep("SELECT * FROM t WHERE id = ?").unwrap();
    for i in 1..=3 {
        let r: Vec<mysql::Row> = c.exec(&st, (i,)).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].len(), 3);
    }
    // Planned once: only the first execution has an "optimizing" stage.
    c.query_drop("SET profiling = 1").unwrap();
    let _: Vec<mysql::Row> = c.exec(&st, (1,)).unwrap();
    let _: Vec<mysql::Row> = c.query("SELECT c FROM t WHERE id = 1").unwrap();
    let profiles: Vec<(u32, String, String)> = c.query("SHOW PROFILES").unwrap();
    let stages = |c: &mut mysql::Conn, id: u32| -> Vec<String> {
        let s: Vec<(String, String)> = c.query(format!("SHOW PROFILE FOR QUERY {id}")).unwrap();
        s.into_iter().map(|x| x.0).collect()
    };
    let kept = stages(&mut c, profiles[0].0);
    assert!(kept.contains(&"executing".into()), "{kept:?}");
    assert!(!kept.contains(&"optimizing".into()), "{kept:?}");
    let text = stages(&mut c, profiles[1].0);
    assert!(text.contains(&"optimizing".into()), "{text:?}");
    c.query_drop("SET profiling = 0").unwrap();
    let before = com(&mut c, "Com_stmt_reprepare");
    // DDL: the kept plan is made again, with the new column.
    c.query_drop("ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 7")
        .unwrap();
    let r: Vec<mysql::Row> = c.exec(&st, (2,)).unwrap();
    assert_eq!(r[0].len(), 4);
    assert_eq!(r[0].get::<i64, _>(3), Some(7));
    assert_eq!(com(&mut c, "Com_stmt_reprepare"), before + 1);
    let _: Vec<mysql::Row> = c.exec(&st, (3,)).unwrap();
    assert_eq!(com(&mut c, "Com_stmt_reprepare"), before + 1);
    // A dropped table: 1146, and the statement works again once it is back.
    c.query_drop("RENAME TABLE t TO t_away").unwrap();
    let e = c.exec::<mysql::Row, _, _>(&st, (3,)).unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1146),
        "{e:?}"
    );
    c.query_drop("RENAME TABLE t_away TO t").unwrap();
    let r: Vec<mysql::Row> = c.exec(&st, (3,)).unwrap();
    assert_eq!(r.len(), 1);
    // Session values compiled into the statement are read at each execution.
    let sv = c
        .prep("SELECT @x + id, DATABASE() FROM t WHERE id = ?")
        .unwrap();
    c.query_drop("SET @x = 100").unwrap();
    let r: Option<(i64, String)> = c.exec_first(&sv, (1,)).unwrap();
    assert_eq!(r, Some((101, "p".into())));
    c.query_drop("SET @x = 200").unwrap();
    let r: Option<(i64, String)> = c.exec_first(&sv, (1,)).unwrap();
    assert_eq!(r, Some((201, "p".into())));
    // The current database resolves unqualified names: a new one, a new plan.
    c.query_drop("CREATE DATABASE q").unwrap();
    c.query_drop("CREATE TABLE q.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("INSERT INTO q.t VALUES (2, 22)").unwrap();
    c.query_drop("USE q").unwrap();
    let r: Vec<mysql::Row> = c.exec(&st, (2,)).unwrap();
    assert_eq!(r[0].len(), 2);
    assert_eq!(r[0].get::<i64, _>(1), Some(22));
    c.query_drop("USE p").unwrap();
    // sql_mode: ONLY_FULL_GROUP_BY is checked again when it changes.
    c.query_drop("SET sql_mode = ''").unwrap();
    let g = c
        .prep("SELECT k, c FROM t WHERE id < ? GROUP BY k")
        .unwrap();
    let _: Vec<mysql::Row> = c.exec(&g, (10,)).unwrap();
    c.query_drop("SET sql_mode = DEFAULT").unwrap();
    let e = c.exec::<mysql::Row, _, _>(&g, (10,)).unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1055),
        "{e:?}"
    );
    // Privileges are checked at every execution, kept plan or not.
    c.query_drop("CREATE USER u IDENTIFIED BY 'pw'").unwrap();
    c.query_drop("GRANT SELECT ON p.* TO u").unwrap();
    let mut u = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(s.port)
            .user(Some("u"))
            .pass(Some("pw"))
            .db_name(Some("p")),
    )
    .unwrap();
    let us = u.prep("SELECT c FROM t WHERE id = ?").unwrap();
    let r: Vec<String> = u.exec(&us, (1,)).unwrap();
    assert_eq!(r.len(), 1);
    c.query_drop("REVOKE SELECT ON p.* FROM u").unwrap();
    let e = u.exec::<String, _, _>(&us, (1,)).unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1142),
        "{e:?}"
    );
    // SQL-level PREPARE keeps its plan the same way.
    c.query_drop("PREPARE s FROM 'SELECT c FROM t WHERE id = ?'")
        .unwrap();
    c.query_drop("SET @i = 4").unwrap();
    let a: Option<String> = c.query_first("EXECUTE s USING @i").unwrap();
    c.query_drop("ALTER TABLE t DROP COLUMN extra").unwrap();
    let before = com(&mut c, "Com_stmt_reprepare");
    let b: Option<String> = c.query_first("EXECUTE s USING @i").unwrap();
    assert_eq!(a, b);
    assert_eq!(com(&mut c, "Com_stmt_reprepare"), before + 1);
}

/// A prepared UPDATE or DELETE is compiled once and runs that plan again (D3 in dml.rs): its
/// later executions have no "optimizing" stage; DDL, a parameter bound with another type or
/// a session value makes it again, and each execution still chooses its path from its own
/// parameters.
#[test]
fn prepared_changes_are_planned_once() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let up = c.prep("UPDATE t SET k = k + ? WHERE id = ?").unwrap();
    let del = c
        .prep("DELETE FROM t WHERE id > ? ORDER BY id DESC LIMIT ?")
        .unwrap();
    c.query_drop("SET profiling = 1").unwrap();
    for i in 1..=3 {
        c.exec_drop(&up, (1000, i)).unwrap();
        assert_eq!(c.affected_rows(), 1);
    }
    c.exec_drop(&del, (ROWS - 10, 2)).unwrap();
    assert_eq!(c.affected_rows(), 2);
    c.exec_drop(&del, (ROWS - 10, 3)).unwrap();
    assert_eq!(c.affected_rows(), 3);
    c.query_drop("UPDATE t SET k = k WHERE id = 1").unwrap();
    let profiles: Vec<(u32, String, String)> = c.query("SHOW PROFILES").unwrap();
    c.query_drop("SET profiling = 0").unwrap();
    let optimized: Vec<bool> = profiles
        .iter()
        .map(|p| {
            let st: Vec<(String, String)> =
                c.query(format!("SHOW PROFILE FOR QUERY {}", p.0)).unwrap();
            st.iter().any(|x| x.0 == "optimizing")
        })
        .collect();
    // The first execution of each is planned, the later ones and the text one as shown.
    assert_eq!(
        optimized,
        vec![true, false, false, true, false, true],
        "{profiles:?}"
    );
    // The highest ids went, five of them, from the top down.
    let top: Vec<i64> = c
        .query("SELECT id FROM t WHERE id > 1990 ORDER BY id")
        .unwrap();
    assert_eq!(top, (1991..=ROWS - 5).collect::<Vec<_>>());
    let k: Vec<i64> = c
        .query("SELECT k FROM t WHERE id <= 3 ORDER BY id")
        .unwrap();
    assert_eq!(k, vec![1001, 1002, 1003]);
    // A parameter bound with another type: made again (Com_stmt_reprepare), same result.
    let before = com(&mut c, "Com_stmt_reprepare");
    c.exec_drop(&up, (1, "4")).unwrap();
    assert_eq!(c.affected_rows(), 1);
    assert_eq!(com(&mut c, "Com_stmt_reprepare"), before + 1);
    // DDL: the plan is made again against the new table.
    c.query_drop("ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 7")
        .unwrap();
    let before = com(&mut c, "Com_stmt_reprepare");
    c.exec_drop(&up, (1, 4)).unwrap();
    assert_eq!(com(&mut c, "Com_stmt_reprepare"), before + 1);
    let row: Option<(i64, i64)> = c
        .query_first("SELECT k, extra FROM t WHERE id = 4")
        .unwrap();
    assert_eq!(row, Some((6, 7)));
    let ex = c
        .prep("UPDATE t SET extra = extra * ? WHERE id = ?")
        .unwrap();
    c.exec_drop(&ex, (3, 5)).unwrap();
    c.query_drop("ALTER TABLE t DROP COLUMN extra").unwrap();
    let e = c.exec_drop(&ex, (3, 5)).unwrap_err();
    assert!(
        matches!(&e, mysql::Error::MySqlError(m) if m.code == 1054),
        "{e:?}"
    );
    // A session value in the statement is read at each execution.
    let sv = c.prep("UPDATE t SET k = @x WHERE id = ?").unwrap();
    c.query_drop("SET @x = 77").unwrap();
    c.exec_drop(&sv, (6,)).unwrap();
    c.query_drop("SET @x = 88").unwrap();
    c.exec_drop(&sv, (7,)).unwrap();
    let k: Vec<i64> = c
        .query("SELECT k FROM t WHERE id IN (6, 7) ORDER BY id")
        .unwrap();
    assert_eq!(k, vec![77, 88]);
    // The path follows each execution's parameters: a range, then a single key.
    let r = c
        .prep("UPDATE t SET k = -k WHERE id BETWEEN ? AND ?")
        .unwrap();
    c.exec_drop(&r, (10, 19)).unwrap();
    assert_eq!(c.affected_rows(), 10);
    c.exec_drop(&r, (20, 20)).unwrap();
    assert_eq!(c.affected_rows(), 1);
    let neg: Option<i64> = c.query_first("SELECT COUNT(*) FROM t WHERE k < 0").unwrap();
    assert_eq!(neg, Some(11));
    // SQL-level PREPARE keeps its UPDATE's plan the same way.
    c.query_drop("PREPARE u FROM 'UPDATE t SET c = ? WHERE id = ?'")
        .unwrap();
    c.query_drop("SET @c = 'one', @i = 30").unwrap();
    c.query_drop("EXECUTE u USING @c, @i").unwrap();
    c.query_drop("SET @c = 'two', @i = 31").unwrap();
    c.query_drop("EXECUTE u USING @c, @i").unwrap();
    let cs: Vec<String> = c
        .query("SELECT c FROM t WHERE id IN (30, 31) ORDER BY id")
        .unwrap();
    assert_eq!(cs, vec!["one".to_string(), "two".to_string()]);
}

/// A nested-loop join looks the inner table up per outer row with the outer row's values as
/// they are (DATE, case-insensitive VARCHAR, DECIMAL, BIGINT UNSIGNED, NULL), in the text and
/// the binary protocol, reading only the matching inner rows.
#[test]
fn join_lookups_take_outer_values_of_every_type() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE j").unwrap();
    c.query_drop("USE j").unwrap();
    c.query_drop(
        "CREATE TABLE o (id INT PRIMARY KEY, d DATE, s VARCHAR(10), m DECIMAL(6,2), \
         u BIGINT UNSIGNED)",
    )
    .unwrap();
    c.query_drop("CREATE TABLE byd (d DATE PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("CREATE TABLE bys (s VARCHAR(10) PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("CREATE TABLE bym (m DECIMAL(6,2) PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("CREATE TABLE byu (u BIGINT UNSIGNED PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop(
        "INSERT INTO o VALUES (1, '2024-02-29', 'Abc', 1.50, 18446744073709551615), \
         (2, '2024-03-01', 'xyz', 2.00, 7), (3, NULL, NULL, NULL, NULL)",
    )
    .unwrap();
    let filler = |c: &mut mysql::Conn, table: &str, rows: &str| {
        c.query_drop(format!("INSERT INTO {table} VALUES {rows}"))
            .unwrap();
    };
    filler(
        &mut c,
        "byd",
        "('2024-02-29', 10), ('2024-03-01', 20), ('2024-03-02', 30)",
    );
    filler(&mut c, "bys", "('abc', 10), ('XYZ', 20), ('zzz', 30)");
    filler(&mut c, "bym", "(1.5, 10), (2, 20), (3, 30)");
    filler(
        &mut c,
        "byu",
        "(18446744073709551615, 10), (7, 20), (8, 30)",
    );
    for (inner, col) in [("byd", "d"), ("bys", "s"), ("bym", "m"), ("byu", "u")] {
        let sql = format!(
            "SELECT o.id, i.v FROM o LEFT JOIN {inner} i ON i.{col} = o.{col} ORDER BY o.id"
        );
        let want = vec![(1, Some(10)), (2, Some(20)), (3, None)];
        let before = rows_read(&mut c);
        let text: Vec<(i64, Option<i64>)> = c.query(&sql).unwrap();
        // Three outer rows, two inner rows found.
        assert_eq!(rows_read(&mut c) - before, 5, "{sql}");
        assert_eq!(text, want, "{sql}");
        let bin: Vec<(i64, Option<i64>)> = c.exec(&sql, ()).unwrap();
        assert_eq!(bin, want, "{sql} (prepared)");
        let types: Vec<String> = c
            .query_map(
                format!("EXPLAIN SELECT o.id, i.v FROM o JOIN {inner} i ON i.{col} = o.{col}"),
                |r: mysql::Row| r.get::<String, _>("type").unwrap(),
            )
            .unwrap();
        assert_eq!(types, ["ALL", "eq_ref"], "{inner}");
    }
    // A value with no equal inner key finds nothing.
    c.query_drop("INSERT INTO o VALUES (4, '2024-03-02', 'zzz', 2.01, 8)")
        .unwrap();
    let got: Vec<(i64, Option<i64>)> = c
        .query("SELECT o.id, i.v FROM o LEFT JOIN bym i ON i.m = o.m WHERE o.id = 4")
        .unwrap();
    assert_eq!(got, vec![(4, None)]);
}

/// GROUP BY (and DISTINCT) over columns an index keeps in order reads the rows in that order
/// and finishes each group as the next begins (select.rs P4, group.rs G4, finish.rs F5): no
/// temporary table, the same groups as hashing them, and a LIMIT in the grouping order stops
/// the reading. Grouping follows the column's collation (utf8mb4_bin here, PAD SPACE as in
/// MySQL 8.0).
#[test]
fn grouping_in_index_order_needs_no_temporary_table() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    c.query_drop("ALTER TABLE t ADD COLUMN b VARCHAR(10) COLLATE utf8mb4_bin, ADD KEY b_1 (b)")
        .unwrap();
    c.query_drop("UPDATE t SET b = CASE id % 3 WHEN 0 THEN 'x' WHEN 1 THEN 'X' ELSE 'x ' END")
        .unwrap();
    c.query_drop("CREATE TABLE u (id INT PRIMARY KEY, w INT)")
        .unwrap();
    c.query_drop("INSERT INTO u SELECT id, id % 7 FROM t")
        .unwrap();
    let tmp = |c: &mut mysql::Conn| com(c, "Created_tmp_tables");
    // (grouping an index keeps in order, the same with that index ignored: hashed)
    let pairs = [
        (
            "SELECT k, COUNT(*), MIN(id), MAX(id), GROUP_CONCAT(id ORDER BY id) FROM t \
             GROUP BY k",
            "SELECT k, COUNT(*), MIN(id), MAX(id), GROUP_CONCAT(id ORDER BY id) FROM t \
             IGNORE INDEX (k_1) GROUP BY k",
        ),
        (
            "SELECT b, COUNT(*) FROM t GROUP BY b",
            "SELECT b, COUNT(*) FROM t IGNORE INDEX (b_1) GROUP BY b",
        ),
        (
            "SELECT DISTINCT k FROM t",
            "SELECT DISTINCT k FROM t IGNORE INDEX (k_1)",
        ),
        (
            "SELECT DISTINCT b FROM t",
            "SELECT DISTINCT b FROM t IGNORE INDEX (b_1)",
        ),
        (
            "SELECT t.k, COUNT(*), SUM(u.w) FROM t STRAIGHT_JOIN u ON u.id = t.id GROUP BY t.k",
            "SELECT t.k, COUNT(*), SUM(u.w) FROM t IGNORE INDEX (k_1) STRAIGHT_JOIN u \
             ON u.id = t.id GROUP BY t.k",
        ),
    ];
    for (ordered, hashed) in pairs {
        let (_, _, extra) = explain(&mut c, ordered);
        assert!(!extra.contains("Using temporary"), "{ordered}: {extra}");
        let (_, _, extra) = explain(&mut c, hashed);
        assert!(extra.contains("Using temporary"), "{hashed}: {extra}");
        let t0 = tmp(&mut c);
        let mut a: Vec<mysql::Row> = c.query(ordered).unwrap();
        assert_eq!(tmp(&mut c), t0, "{ordered}");
        let mut b: Vec<mysql::Row> = c.query(hashed).unwrap();
        assert_eq!(tmp(&mut c), t0 + 1, "{hashed}");
        let key = |r: &mysql::Row| format!("{:?}", r.get::<mysql::Value, _>(0));
        a.sort_by_key(key);
        b.sort_by_key(key);
        assert_eq!(a, b, "{ordered}");
    }
    // 'x' and 'x ' are one group under utf8mb4_bin (PAD SPACE), 'X' another.
    let groups: Vec<(String, i64)> = c
        .query("SELECT b, COUNT(*) FROM t GROUP BY b ORDER BY b")
        .unwrap();
    let third = ROWS / 3;
    assert_eq!(
        groups,
        vec![
            ("X".to_string(), third + 1),
            ("x ".to_string(), ROWS - third - 1)
        ],
        "the first row of a group names it"
    );
    // The grouping order is the ORDER BY's: LIMIT stops the scan.
    let q = "SELECT id, COUNT(*) FROM t GROUP BY id ORDER BY id DESC LIMIT 3";
    let (ty, key, extra) = explain(&mut c, q);
    assert_eq!(
        (ty.as_str(), key.as_deref(), extra.as_str()),
        ("index", Some("PRIMARY"), "")
    );
    let before = rows_read(&mut c);
    let got: Vec<(i64, i64)> = c.query(q).unwrap();
    assert_eq!(got, vec![(ROWS, 1), (ROWS - 1, 1), (ROWS - 2, 1)]);
    assert!(
        rows_read(&mut c) - before < 10,
        "the scan stopped at the third group"
    );
    // DISTINCT in index order keeps only the previous row, and LIMIT stops the scan (here a
    // loose one, backward: 20 rows a value).
    let q = "SELECT DISTINCT k FROM t ORDER BY k DESC LIMIT 3";
    let (_, key, extra) = explain(&mut c, q);
    assert_eq!(
        (key.as_deref(), extra.as_str()),
        (Some("k_1"), "Using index for group-by")
    );
    let before = rows_read(&mut c);
    let got: Vec<i64> = c.query(q).unwrap();
    assert_eq!(got, vec![99, 98, 97]);
    assert!(
        rows_read(&mut c) - before < 100,
        "the scan stopped in the third value"
    );
    // An ORDER BY on an aggregate still sorts the groups, read in order.
    let q = "SELECT k, SUM(id) FROM t GROUP BY k ORDER BY SUM(id) DESC, k LIMIT 2";
    let (_, _, extra) = explain(&mut c, q);
    assert_eq!(extra, "Using index; Using filesort");
    let got: Vec<(i64, i64)> = c.query(q).unwrap();
    let mut want: Vec<(i64, i64)> = (0..100)
        .map(|k| (k, (1..=ROWS).filter(|i| i % 100 == k).sum()))
        .collect();
    want.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    assert_eq!(got, want[..2]);
    assert!(s.panics().is_empty());
}

/// A join on an equality no index of the later table serves reads that table once and joins
/// it by hash (hashjoin.rs H4), as EXPLAIN says; with an index the column leads, it is looked
/// up per row instead. The rows are the same either way.
#[test]
fn unindexed_equality_joins_read_the_table_once() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    c.query_drop("CREATE TABLE u (id INT PRIMARY KEY, w INT, tag VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO u SELECT id, id % 50, CONCAT('T', id % 7) FROM t WHERE id <= 500")
        .unwrap();
    let n_t: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    let sql = "SELECT COUNT(*), SUM(t.id), SUM(u.id) FROM t JOIN u ON u.w = t.k";
    let extra: Vec<(String, Option<String>)> = c
        .query_map(format!("EXPLAIN {sql}"), |r: mysql::Row| {
            (r.get("table").unwrap(), r.get("Extra").unwrap())
        })
        .unwrap();
    assert_eq!(extra[1].0, "u");
    assert!(
        extra[1]
            .1
            .as_deref()
            .is_some_and(|e| e.contains("Using join buffer (hash join)")),
        "{extra:?}"
    );
    let before = rows_read(&mut c);
    let hashed: (i64, i64, i64) = c.query_first(sql).unwrap().unwrap();
    // Each table read once: t's rows and u's 500.
    assert_eq!(rows_read(&mut c) - before, n_t + 500);
    // The same join through an index on u.w, looked up per row of t.
    c.query_drop("ALTER TABLE u ADD KEY w_1 (w)").unwrap();
    let ty: Vec<String> = c
        .query_map(format!("EXPLAIN {sql}"), |r: mysql::Row| {
            r.get::<String, _>("type").unwrap()
        })
        .unwrap();
    assert_eq!(ty[1], "ref");
    let looked_up: (i64, i64, i64) = c.query_first(sql).unwrap().unwrap();
    assert_eq!(hashed, looked_up);
    assert!(hashed.0 > 0);
    // Strings, case-insensitively, and a LEFT JOIN keeping the rows without a match.
    let q = "SELECT COUNT(*), COUNT(u.id) FROM t LEFT JOIN u ON u.tag = t.c AND u.id < 100";
    c.query_drop("UPDATE t SET c = CONCAT('t', id % 9)")
        .unwrap();
    let left: (i64, i64) = c.query_first(q).unwrap().unwrap();
    // The same counts through a correlated subquery per row of t.
    let by_row: (String, String) = c
        .query_first(
            "SELECT SUM(GREATEST(1, (SELECT COUNT(*) FROM u WHERE u.tag = t.c AND u.id < 100))), \
             SUM((SELECT COUNT(*) FROM u WHERE u.tag = t.c AND u.id < 100)) FROM t",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (left.0.to_string(), left.1.to_string()),
        by_row,
        "case-insensitive: T1 = t1"
    );
    assert!(left.1 > 0);
    assert!(s.panics().is_empty());
}

/// EXPLAIN's one row for a SELECT that reads no table: its Extra.
fn explain_note(c: &mut mysql::Conn, sql: &str) -> (Option<String>, String) {
    let row: mysql::Row = c.query_first(format!("EXPLAIN {sql}")).unwrap().unwrap();
    let extra: Option<String> = row.get("Extra").unwrap();
    (row.get("table").unwrap(), extra.unwrap_or_default())
}

#[test]
fn min_max_come_from_the_ends_of_index_ranges() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let away = (None, "Select tables optimized away".to_string());
    // Each aggregate reads one row at the end of its index (k_1, the primary key).
    let before = rows_read(&mut c);
    let got: (i64, i64, i64, i64) = c
        .query_first("SELECT MIN(id), MAX(id), MIN(k), MAX(k) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(got, (1, ROWS, 0, 99));
    assert!(rows_read(&mut c) - before <= 4, "a row per aggregate");
    assert_eq!(
        explain_note(&mut c, "SELECT MIN(id), MAX(k) + 1 FROM t"),
        away
    );
    // A secondary index's entries hold the primary key after its own columns, in order.
    let q = "SELECT MIN(id), MAX(id) FROM t WHERE k = 7";
    assert_eq!(explain_note(&mut c, q), away);
    let got: (i64, i64) = c.query_first(q).unwrap().unwrap();
    assert_eq!(got, (7, ROWS - 93));
    let q = "SELECT k, MIN(id), MAX(id) FROM t GROUP BY k ORDER BY k DESC LIMIT 2";
    let (ty, _, extra) = explain(&mut c, q);
    assert_eq!(
        (ty.as_str(), extra.as_str()),
        ("range", "Using index for group-by")
    );
    let got: Vec<(i64, i64, i64)> = c.query(q).unwrap();
    assert_eq!(got, [(99, 99, 1999), (98, 98, 1998)]);
    c.query_drop(
        "CREATE TABLE m (id INT PRIMARY KEY, g INT NOT NULL, v INT NULL, s VARCHAR(10), \
         b VARCHAR(10) COLLATE utf8mb4_bin, KEY gv (g, v), KEY ks (s), KEY kb (b))",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO m VALUES (1, 1, NULL, 'b', 'x'), (2, 1, 5, 'A', 'X'), (3, 1, 7, 'c', NULL), \
         (4, 2, NULL, NULL, NULL), (5, 2, NULL, 'B', NULL)",
    )
    .unwrap();
    let one = |c: &mut mysql::Conn, sql: &str| -> Option<String> {
        let r: Option<Option<String>> = c.query_first(sql).unwrap();
        r.flatten()
    };
    // (query, result, EXPLAIN's table and Extra when no table is read)
    let cases: &[(&str, Option<&str>, Option<&str>)] = &[
        // NULLs are skipped; the ones of a group of NULLs give NULL, though rows matched.
        (
            "SELECT MIN(v) FROM m WHERE g = 1",
            Some("5"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 1",
            Some("7"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MIN(v) FROM m WHERE g = 2",
            None,
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE 2 = g",
            None,
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 3",
            None,
            Some("No matching min/max row"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 AND v < 7",
            Some("5"),
            Some("Select tables optimized away"),
        ),
        // A bound that converts inexactly to the column: rows past it are tested and skipped.
        (
            "SELECT MAX(v) FROM m WHERE g = 1 AND v < 6.5",
            Some("5"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MIN(v) FROM m WHERE g = 1 AND v > 5.5",
            Some("7"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MIN(v) FROM m WHERE g = 1 AND v BETWEEN 6 AND 9",
            Some("7"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 AND v IS NOT NULL",
            Some("7"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 AND v > 7",
            None,
            Some("No matching min/max row"),
        ),
        // Case-insensitive order, as the index keeps it.
        (
            "SELECT MIN(s) FROM m",
            Some("A"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(s) FROM m",
            Some("c"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(b) FROM m",
            Some("x"),
            Some("Select tables optimized away"),
        ),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 HAVING MAX(v) > 100",
            None,
            Some("Select tables optimized away"),
        ),
        // Not from an index: another aggregate, a condition on a later key part or another
        // column, a non-equality before the column, an index hint against it.
        (
            "SELECT MAX(v) + COUNT(*) FROM m WHERE g = 1",
            Some("10"),
            None,
        ),
        ("SELECT MAX(g) FROM m WHERE v = 5", Some("1"), None),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 AND s = 'A'",
            Some("5"),
            None,
        ),
        ("SELECT MAX(v) FROM m WHERE g > 0", Some("7"), None),
        ("SELECT MAX(v) FROM m WHERE g IN (1, 2)", Some("7"), None),
        ("SELECT MAX(s) FROM m IGNORE INDEX (ks)", Some("c"), None),
        (
            "SELECT MAX(v) FROM m WHERE g = 1 FOR UPDATE",
            Some("7"),
            None,
        ),
        // A comparison in another collation than the column's: not a key range.
        (
            "SELECT COUNT(*) FROM m WHERE b = 'x' COLLATE utf8mb4_general_ci",
            Some("2"),
            None,
        ),
        (
            "SELECT MIN(id) FROM m WHERE b = 'x' COLLATE utf8mb4_general_ci",
            Some("1"),
            None,
        ),
    ];
    for &(sql, want, note) in cases {
        assert_eq!(one(&mut c, sql).as_deref(), want, "{sql}");
        let (table, extra) = explain_note(&mut c, sql);
        match note {
            Some(n) => assert_eq!((table, extra.as_str()), (None, n), "EXPLAIN {sql}"),
            None => assert_eq!(table.as_deref(), Some("m"), "EXPLAIN {sql}: reads m"),
        }
    }
    // The same through a prepared statement, with the equality's value changing.
    let st = c.prep("SELECT MAX(v) FROM m WHERE g = ?").unwrap();
    for (g, want) in [(1, Some(7)), (2, None), (3, None), (1, Some(7))] {
        let got: Option<Option<i64>> = c.exec_first(&st, (g,)).unwrap();
        assert_eq!(got.flatten(), want, "g = {g}");
    }
    let nested: Option<i64> = c
        .query_first("SELECT x FROM (SELECT MAX(id) AS x FROM t) d")
        .unwrap();
    assert_eq!(nested, Some(ROWS));

    // A string key compared with a number is compared as a number: '05' and '5.0' match 5.
    c.query_drop("CREATE TABLE sv (id INT PRIMARY KEY, a VARCHAR(10), n INT, KEY (a, n))")
        .unwrap();
    c.query_drop("INSERT INTO sv VALUES (1, '5', 1), (2, '05', 2), (3, '5.0', 3), (4, '6', 4)")
        .unwrap();
    let got: (i64, i64) = c
        .query_first("SELECT COUNT(*), MAX(n) FROM sv WHERE a = 5")
        .unwrap()
        .unwrap();
    assert_eq!(got, (3, 3));
    let got: Vec<i64> = c.query("SELECT id FROM sv WHERE a = 5 ORDER BY n").unwrap();
    assert_eq!(got, [1, 2, 3]);

    // What a read view sees: rows committed after it began, deleted after it began, and the
    // transaction's own (each query read from index ends).
    let ends = |c: &mut mysql::Conn| -> (i64, Option<String>, Option<i64>) {
        for q in [
            "SELECT MAX(id), MAX(s) FROM m",
            "SELECT MAX(v) FROM m WHERE g = 1",
        ] {
            assert_eq!(explain_note(c, q), away, "{q}");
        }
        let (id, s): (i64, Option<String>) = c
            .query_first("SELECT MAX(id), MAX(s) FROM m")
            .unwrap()
            .unwrap();
        let v: Option<Option<i64>> = c.query_first("SELECT MAX(v) FROM m WHERE g = 1").unwrap();
        (id, s, v.flatten())
    };
    let mut other = connect(&s);
    other.query_drop("USE p").unwrap();
    other.query_drop("BEGIN").unwrap();
    assert_eq!(ends(&mut other), (5, Some("c".into()), Some(7)));
    c.query_drop("INSERT INTO m VALUES (9, 1, 50, 'z', NULL)")
        .unwrap();
    c.query_drop("DELETE FROM m WHERE id = 3").unwrap();
    assert_eq!(ends(&mut c), (9, Some("z".into()), Some(50)));
    assert_eq!(
        ends(&mut other),
        (5, Some("c".into()), Some(7)),
        "the view's rows"
    );
    other
        .query_drop("INSERT INTO m VALUES (10, 1, 60, 'zz', NULL)")
        .unwrap();
    assert_eq!(
        ends(&mut other),
        (10, Some("zz".into()), Some(60)),
        "its own insert"
    );
    other.query_drop("ROLLBACK").unwrap();
    c.query_drop("DELETE FROM m WHERE id = 9").unwrap();
    assert_eq!(
        ends(&mut c),
        (5, Some("B".into()), Some(5)),
        "deleted and rolled back rows: the last of the equal 'b' and 'B' in the index"
    );
}

/// GROUP BY and DISTINCT over an index's first key parts, with MIN/MAX of the next one or
/// DISTINCT aggregates, read a row or three per group by searching past each group
/// (select.rs S14), "Using index for group-by"; the rows equal the full read's.
#[test]
fn loose_index_scan_reads_a_row_per_group() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE l").unwrap();
    c.query_drop("USE l").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, g INT NULL, x INT NULL, pad CHAR(30) NOT NULL \
         DEFAULT 'p', KEY gx (g, x))",
    )
    .unwrap();
    let ins = c.prep("INSERT INTO t (id, g, x) VALUES (?, ?, ?)").unwrap();
    c.query_drop("BEGIN").unwrap();
    for i in 0..4000i64 {
        // 20 groups of 200 (g NULL for the last), x NULL every 7th row and in group 3.
        let g = (i % 21 != 20).then_some(i % 21);
        let x = (i % 7 != 0 && g != Some(3)).then_some(i);
        c.exec_drop(&ins, (i, g, x)).unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    c.query_drop("ANALYZE TABLE t").unwrap();
    let loose = |c: &mut mysql::Conn, q: &str| -> bool {
        let row: mysql::Row = c.query_first(format!("EXPLAIN {q}")).unwrap().unwrap();
        let extra: Option<String> = row.get("Extra").unwrap();
        extra
            .unwrap_or_default()
            .contains("Using index for group-by")
    };
    let rows = |c: &mut mysql::Conn, q: &str| -> Vec<Vec<Option<String>>> {
        c.query_map(q, |r: mysql::Row| {
            (0..r.len())
                .map(|i| r.get::<Option<String>, _>(i).unwrap())
                .collect()
        })
        .unwrap()
    };
    // Each query as the loose scan runs it and with the index ignored (every row read).
    let check = |c: &mut mysql::Conn, q: &str, from: &str, is_loose: bool| {
        assert_eq!(loose(c, q), is_loose, "EXPLAIN {q}");
        let before = rows_read(c);
        let got = rows(c, q);
        let read = rows_read(c) - before;
        if is_loose {
            assert!(read <= 3 * 21 + 3, "{q}: {read} rows read");
        }
        let mut full = rows(
            c,
            &q.replacen(from, &format!("{from} IGNORE INDEX (gx)"), 1),
        );
        let mut got = got;
        if !q.contains("ORDER BY") {
            // Groups come in no promised order.
            got.sort();
            full.sort();
        }
        assert_eq!(got, full, "{q}");
        assert!(!got.is_empty(), "{q}");
    };
    for q in [
        "SELECT g, MIN(x), MAX(x) FROM t GROUP BY g",
        "SELECT g, MAX(x) FROM t GROUP BY g ORDER BY g DESC LIMIT 3",
        "SELECT g, MIN(x), MAX(x) FROM t GROUP BY g ORDER BY g DESC",
        "SELECT DISTINCT g FROM t WHERE g < 12 ORDER BY g DESC",
        "SELECT g, MIN(x) FROM t GROUP BY g HAVING MIN(x) > 10",
        "SELECT DISTINCT g FROM t",
        "SELECT DISTINCT g FROM t ORDER BY g LIMIT 4",
        "SELECT COUNT(DISTINCT g), SUM(DISTINCT g), AVG(DISTINCT g) FROM t",
        "SELECT g FROM t WHERE g > 15 GROUP BY g",
        "SELECT g, MAX(x) FROM t WHERE g BETWEEN 2 AND 4 GROUP BY g",
        "SELECT g, MIN(x) FROM t WHERE g % 2 = 0 GROUP BY g",
        "SELECT MIN(x), MAX(x) FROM t GROUP BY g",
        "SELECT DISTINCT g, x FROM t WHERE g = 5 AND x < 100",
    ] {
        let is_loose = !q.contains("DISTINCT g, x");
        check(&mut c, q, "FROM t", is_loose);
    }
    // Not loose: an aggregate over every row, a condition on the column after the groups,
    // a column the index lacks, a locking read; the results are still right.
    for q in [
        "SELECT g, COUNT(*) FROM t GROUP BY g",
        "SELECT g, SUM(x) FROM t GROUP BY g",
        "SELECT g, MAX(x) FROM t WHERE x > 100 GROUP BY g",
        "SELECT g, MAX(pad) FROM t GROUP BY g",
    ] {
        check(&mut c, q, "FROM t", false);
    }
    let locked: Vec<(Option<i64>, Option<i64>)> = c
        .query("SELECT g, MAX(x) FROM t GROUP BY g FOR UPDATE")
        .unwrap();
    assert_eq!(locked.len(), 21);
    // A group of NULLs alone: MIN and MAX NULL, the group still there.
    let g3: Vec<(i64, Option<i64>, Option<i64>)> = c
        .query("SELECT g, MIN(x), MAX(x) FROM t WHERE g = 3 GROUP BY g")
        .unwrap();
    assert_eq!(g3, [(3, None, None)]);

    // The groups a read view sees while another transaction changes them.
    let mut other = connect(&s);
    other.query_drop("USE l").unwrap();
    other.query_drop("BEGIN").unwrap();
    let q = "SELECT g, MIN(x), MAX(x) FROM t GROUP BY g";
    let before = rows(&mut other, q);
    c.query_drop("DELETE FROM t WHERE g = 5").unwrap();
    c.query_drop("INSERT INTO t (id, g, x) VALUES (5000, 99, 1), (5001, 1, -5), (5002, 1, 99999)")
        .unwrap();
    assert_eq!(rows(&mut other, q), before, "the view's groups");
    let prepared = other
        .prep("SELECT g, MAX(x) FROM t WHERE g BETWEEN ? AND ? GROUP BY g")
        .unwrap();
    let seen: Vec<(i64, Option<i64>)> = other.exec(&prepared, (4, 6)).unwrap();
    assert_eq!(seen.iter().map(|r| r.0).collect::<Vec<_>>(), [4, 5, 6]);
    other.query_drop("COMMIT").unwrap();
    let now: Vec<(i64, Option<i64>)> = other.exec(&prepared, (4, 6)).unwrap();
    assert_eq!(now.iter().map(|r| r.0).collect::<Vec<_>>(), [4, 6]);
    let one: Vec<(i64, Option<i64>, Option<i64>)> = c
        .query("SELECT g, MIN(x), MAX(x) FROM t WHERE g IN (1, 99) GROUP BY g")
        .unwrap();
    assert_eq!(one, [(1, Some(-5), Some(99999)), (99, Some(1), Some(1))]);
    check(&mut c, q, "FROM t", true);

    // SERIALIZABLE: reads lock, so the groups (and MIN/MAX) are read by the locking scan,
    // with the same rows, and a writer into the range waits.
    let before = rows(&mut c, q);
    other
        .query_drop("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        .unwrap();
    other.query_drop("BEGIN").unwrap();
    assert_eq!(rows(&mut other, q), before);
    let max: Option<i64> = other.query_first("SELECT MAX(id) FROM t").unwrap().unwrap();
    assert_eq!(max, Some(5002));
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    match c.query_drop("INSERT INTO t (id, g, x) VALUES (6000, 1, 7)") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1205),
        r => panic!("the insert did not wait for the serializable reader: {r:?}"),
    }
    other.query_drop("COMMIT").unwrap();
}

/// EXPLAIN shows each derived table's SELECT after the outer one, numbered depth first as
/// MySQL numbers SELECTs, select_type DERIVED; the outer SELECT is PRIMARY.
#[test]
fn explain_shows_derived_selects() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    let q = "SELECT * FROM (SELECT * FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) i \
             WHERE n > 1) d JOIN (SELECT MAX(id) AS m FROM t) e WHERE d.k = 5";
    let rows: Vec<(u64, String, Option<String>, Option<String>)> = c
        .query_map(format!("EXPLAIN {q}"), |r: mysql::Row| {
            (
                r.get("id").unwrap(),
                r.get("select_type").unwrap(),
                r.get("table").unwrap(),
                r.get("Extra").unwrap(),
            )
        })
        .unwrap();
    let shown: Vec<(u64, &str, Option<&str>)> = rows
        .iter()
        .map(|r| (r.0, r.1.as_str(), r.2.as_deref()))
        .collect();
    assert_eq!(
        shown,
        [
            (1, "PRIMARY", Some("<derived2>")),
            (1, "PRIMARY", Some("<derived4>")),
            (2, "DERIVED", Some("<derived3>")),
            (3, "DERIVED", Some("t")),
            (4, "DERIVED", None),
        ],
        "{rows:?}"
    );
    assert_eq!(rows[4].3.as_deref(), Some("Select tables optimized away"));
    assert_eq!(rows[2].3.as_deref(), Some("Using where"), "{rows:?}");
    let got: Vec<(i64, i64, i64)> = c.query(q).unwrap();
    assert_eq!(got, [(5, 20, ROWS)]);
}

/// Subqueries in EXPLAIN: each SELECT numbered in the order written (select list, FROM,
/// WHERE), SUBQUERY when it reads nothing of the enclosing query, DEPENDENT SUBQUERY with the
/// path each run takes (a lookup by the enclosing column, shown in `ref`), nested ones too; an
/// EXISTS run as an IN shows as the SUBQUERY it became.
#[test]
fn explain_shows_subqueries() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    c.query_drop("CREATE TABLE u (id INT PRIMARY KEY, t_id INT, KEY (t_id))")
        .unwrap();
    c.query_drop("INSERT INTO u SELECT id, id % 50 + 1 FROM t")
        .unwrap();
    c.query_drop("ANALYZE TABLE t, u").unwrap();
    type Shown = (
        u64,
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
    );
    type Brief = (u64, String, Option<String>, String, Option<String>);
    let explain_all = |c: &mut mysql::Conn, q: &str| -> Vec<Shown> {
        c.query_map(format!("EXPLAIN {q}"), |r: mysql::Row| {
            (
                r.get("id").unwrap(),
                r.get("select_type").unwrap(),
                r.get("table").unwrap(),
                r.get::<Option<String>, _>("type")
                    .unwrap()
                    .unwrap_or_default(),
                r.get("key").unwrap(),
                r.get("ref").unwrap(),
            )
        })
        .unwrap()
    };
    let brief = |rows: &[Shown]| -> Vec<Brief> {
        rows.iter()
            .map(|r| (r.0, r.1.clone(), r.2.clone(), r.3.clone(), r.5.clone()))
            .collect()
    };
    // (id, select_type, table, type, ref)
    let b = |id: u64, st: &str, table: &str, ty: &str, rf: Option<&str>| -> Brief {
        let rf = rf.map(str::to_string);
        (id, st.into(), Some(table.into()), ty.into(), rf)
    };
    let q = "SELECT t.id, (SELECT COUNT(*) FROM u WHERE u.t_id = t.id) FROM t \
             WHERE t.k IN (SELECT k FROM t WHERE id < 10) ORDER BY t.id";
    let rows = explain_all(&mut c, q);
    let want = [
        b(1, "PRIMARY", "t", "index", None),
        b(2, "DEPENDENT SUBQUERY", "u", "ref", Some("p.t.id")),
        b(3, "SUBQUERY", "t", "range", None),
    ];
    assert_eq!(brief(&rows), want, "{rows:?}");
    assert_eq!(rows[1].4.as_deref(), Some("t_id"), "{rows:?}");
    // Nested: the innermost reads the middle one's row by its primary key.
    let q = "SELECT t.id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id \
             AND EXISTS (SELECT 1 FROM t t2 WHERE t2.id = u.id AND t2.k > t.k)) OR t.id = 0";
    let rows = explain_all(&mut c, q);
    let want = [
        b(1, "PRIMARY", "t", "index", None),
        b(2, "DEPENDENT SUBQUERY", "u", "ref", Some("p.t.id")),
        b(3, "DEPENDENT SUBQUERY", "t2", "eq_ref", Some("p.u.id")),
    ];
    assert_eq!(brief(&rows), want, "{rows:?}");
    // With a BETWEEN on t's key, EXISTS stays correlated; over all of t with a selective
    // condition of its own, it is read once as an IN (semijoin.rs).
    let q = "SELECT COUNT(*) FROM t WHERE t.id BETWEEN 1 AND 3 \
             AND EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id AND u.id > 5)";
    let rows = explain_all(&mut c, q);
    assert_eq!(rows[1].1, "DEPENDENT SUBQUERY", "{rows:?}");
    let q = "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.k AND u.t_id = 7)";
    let rows = explain_all(&mut c, q);
    let want = [
        b(1, "PRIMARY", "t", "index", None),
        b(2, "SUBQUERY", "u", "ref", Some("const")),
    ];
    assert_eq!(brief(&rows), want, "{rows:?}");
    let n: i64 = c.query_first(q).unwrap().unwrap();
    let want: i64 = c
        .query_first("SELECT COUNT(*) FROM t JOIN u ON u.id = t.k WHERE u.t_id = 7")
        .unwrap()
        .unwrap();
    assert_eq!(n, want);
}

/// A SELECT without tables (FROM DUAL is none): EXPLAIN says "No tables used", or "Impossible
/// WHERE" for a false WHERE; EXPLAIN FORMAT=TRADITIONAL is the table form, JSON and TREE are
/// refused (1235) rather than answered in another form, an unknown format is 1791.
#[test]
fn explain_without_tables_and_formats() {
    let s = start();
    let mut c = connect(&s);
    let one: Vec<i64> = c.query("SELECT 1 FROM DUAL").unwrap();
    assert_eq!(one, [1]);
    let none: Vec<i64> = c.query("SELECT 1 FROM dual WHERE 0").unwrap();
    assert!(none.is_empty());
    let note = |c: &mut mysql::Conn, sql: &str| -> (Option<String>, String) {
        let r: mysql::Row = c.query_first(sql).unwrap().unwrap();
        (r.get("table").unwrap(), r.get("Extra").unwrap())
    };
    assert_eq!(
        note(&mut c, "EXPLAIN SELECT 1"),
        (None, "No tables used".into())
    );
    assert_eq!(
        note(&mut c, "EXPLAIN SELECT 1 FROM DUAL WHERE 1 = 0"),
        (None, "Impossible WHERE".into())
    );
    assert_eq!(
        note(&mut c, "EXPLAIN FORMAT=TRADITIONAL SELECT 1 + 1"),
        (None, "No tables used".into())
    );
    for (sql, code) in [
        ("EXPLAIN FORMAT=JSON SELECT 1", 1235),
        ("EXPLAIN FORMAT=TREE SELECT 1", 1235),
        ("EXPLAIN FORMAT=yaml SELECT 1", 1791),
    ] {
        match c.query_drop(sql) {
            Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, code, "{sql}"),
            other => panic!("{sql}: {other:?}"),
        }
    }
}

/// A consistent scan decodes its rows straight from the page into SQL values; rows reached by
/// primary-key lookups, through a secondary index, by a covering read or by a locking read
/// (SERIALIZABLE), and off-page values, come from engine values. Every path gives the same
/// values, of every type; aggregates and comparisons of integers, which skip making values,
/// give what the general way gives.
#[test]
fn every_read_path_gives_the_same_values() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE v").unwrap();
    c.query_drop("USE v").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, u BIGINT UNSIGNED, d DECIMAL(20,4), f FLOAT, \
         g DOUBLE, dt DATETIME(3), ts TIMESTAMP(2) NULL, tm TIME(1), y YEAR, \
         e ENUM('a','b','c'), st SET('x','y','z'), b BIT(10), \
         l VARCHAR(20) CHARACTER SET latin1, ch CHAR(5), bl BLOB, j JSON, k INT, \
         KEY k_1 (k), KEY l_1 (l))",
    )
    .unwrap();
    let n = 60;
    for i in 1..=n {
        if i % 7 == 0 {
            c.query_drop(format!("INSERT INTO t (id) VALUES ({i})"))
                .unwrap();
            continue;
        }
        // Every fifth blob is long enough to go off-page.
        let blob_len = if i % 5 == 0 { 20000 } else { i * 3 };
        let v = |x: &dyn mysql::prelude::ToValue| x.to_value();
        let params = vec![
            v(&i),
            v(&(u64::MAX - i as u64)),
            v(&format!("{}.{:04}", i * 1001 - 30000, i)),
            v(&(i as f32 / 3.0)),
            v(&(-(i as f64) / 7.0)),
            v(&format!(
                "2024-0{}-1{} 10:2{}:33.{i:03}",
                1 + i % 9,
                i % 10,
                i % 10
            )),
            v(&format!("2023-11-{:02} 01:02:03.{:02}", 1 + i % 28, i)),
            v(&format!("-{i}:05:06.7")),
            v(&(1990 + i)),
            v(&["a", "b", "c"][i as usize % 3]),
            v(&["x", "x,y", "y,z", ""][i as usize % 4]),
            v(&(i * 17)),
            v(&format!("caf\u{e9} {}", i % 13)),
            v(&format!("c{}", i % 11)),
            v(&blob_len),
            v(&format!("{{\"n\": {i}, \"s\": \"v{i}\"}}")),
            v(&((i % 9) - 4)),
        ];
        c.exec_drop(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, REPEAT('q', ?), \
             ?, ?)",
            mysql::Params::Positional(params),
        )
        .unwrap();
    }
    let all = "id, u, d, f, g, dt, ts, tm, y, e, st, b + 0, l, ch, LENGTH(bl), MD5(bl), j, k";
    let lookups: Vec<mysql::Row> = (1..=n)
        .flat_map(|i| {
            c.query::<mysql::Row, _>(format!("SELECT {all} FROM t WHERE id = {i}"))
                .unwrap()
        })
        .collect();
    assert_eq!(lookups.len(), n as usize);
    let scan: Vec<mysql::Row> = c.query(format!("SELECT {all} FROM t ORDER BY id")).unwrap();
    assert_eq!(scan, lookups, "a scan gives what lookups give");
    let through_k: Vec<mysql::Row> = c
        .query(format!(
            "SELECT {all} FROM t FORCE INDEX (k_1) WHERE k >= -4 OR k IS NULL ORDER BY id"
        ))
        .unwrap();
    assert_eq!(
        through_k, lookups,
        "a secondary index gives what lookups give"
    );
    let covering: Vec<(i64, String)> = c
        .query("SELECT id, l FROM t FORCE INDEX (l_1) WHERE l >= '' ORDER BY id")
        .unwrap();
    let scanned: Vec<(i64, String)> = c
        .query("SELECT id, l FROM t IGNORE INDEX (l_1) WHERE l >= '' ORDER BY id")
        .unwrap();
    assert_eq!(covering, scanned);
    assert_eq!(covering.len(), (1..=n).filter(|i| i % 7 != 0).count());
    c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        .unwrap();
    c.query_drop("BEGIN").unwrap();
    let locked: Vec<mysql::Row> = c.query(format!("SELECT {all} FROM t ORDER BY id")).unwrap();
    c.query_drop("COMMIT").unwrap();
    c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    assert_eq!(locked, lookups, "a locking read gives what lookups give");

    // Aggregates of integers against the values computed here.
    let ks: Vec<i64> = (1..=n)
        .filter(|i| i % 7 != 0)
        .map(|i| (i % 9) - 4)
        .collect();
    let agg: (i64, i64, i64, String, i64, i64) = c
        .query_first("SELECT SUM(k), MIN(k), MAX(k), AVG(k), COUNT(k), COUNT(*) FROM t")
        .unwrap()
        .unwrap();
    let sum: i64 = ks.iter().sum();
    assert_eq!(agg.0, sum);
    assert_eq!(agg.1, *ks.iter().min().unwrap());
    assert_eq!(agg.2, *ks.iter().max().unwrap());
    assert_eq!(agg.3, format!("{:.4}", sum as f64 / ks.len() as f64));
    assert_eq!((agg.4, agg.5), (ks.len() as i64, n));
    // Grouping in k's order (NULLs first, one group) and by hash give the same groups.
    let q = "SELECT k, COUNT(*), MIN(id), MAX(id), SUM(id + 0) FROM t {} GROUP BY k ORDER BY k";
    let in_order: Vec<mysql::Row> = c.query(q.replace("{}", "FORCE INDEX (k_1)")).unwrap();
    let hashed: Vec<mysql::Row> = c.query(q.replace("{}", "IGNORE INDEX (k_1)")).unwrap();
    assert_eq!(in_order, hashed);
    assert_eq!(in_order.len(), 10, "nine values of k and NULL");
    // Integer comparisons and arithmetic in WHERE: the general way's results and errors.
    let big: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k * 2 + 1 > 3 AND id - 1 < 100")
        .unwrap()
        .unwrap();
    assert_eq!(big, ks.iter().filter(|&&k| k * 2 + 1 > 3).count() as i64);
    let e = c
        .query_drop("SELECT COUNT(*) FROM t WHERE k + 9223372036854775807 > 0")
        .unwrap_err();
    assert!(e.to_string().contains("1690"), "{e}");
    let mixed: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k + 0.5 > 1 OR u - 1 < 5")
        .unwrap()
        .unwrap();
    assert_eq!(
        mixed,
        ks.iter().filter(|&&k| k as f64 + 0.5 > 1.0).count() as i64
    );
}

/// A WHERE conjunct that reads only the tables up to a join level is tested there (S15), so
/// the rows it rejects are not joined on: the engine reads the first table and the joined
/// rows of the few that pass. Each query returns what the same query returns with its
/// conditions behind a function call (which keeps them to the end): LEFT JOIN's NULL rows,
/// RIGHT JOIN, three tables, a condition over two tables, constants.
#[test]
fn where_conditions_filter_early_in_joins() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE w").unwrap();
    c.query_drop("USE w").unwrap();
    c.query_drop("CREATE TABLE a (id INT PRIMARY KEY, x INT, s VARCHAR(10))")
        .unwrap();
    c.query_drop(
        "CREATE TABLE b (a_id INT NOT NULL, n INT NOT NULL, y INT, PRIMARY KEY (a_id, n))",
    )
    .unwrap();
    c.query_drop("CREATE TABLE d (y INT PRIMARY KEY, z INT)")
        .unwrap();
    c.query_drop("BEGIN").unwrap();
    for i in 1..=1000 {
        c.query_drop(format!(
            "INSERT INTO a VALUES ({i}, {}, 's{}')",
            i % 100,
            i % 7
        ))
        .unwrap();
        // a rows of id > 990 have no b rows (for the LEFT JOIN's NULL rows).
        if i <= 990 {
            let vals: Vec<String> = (1..=10)
                .map(|n| format!("({i}, {n}, {})", (i + n) % 13))
                .collect();
            c.query_drop(format!("INSERT INTO b VALUES {}", vals.join(",")))
                .unwrap();
        }
    }
    for y in 0..13 {
        c.query_drop(format!("INSERT INTO d VALUES ({y}, {})", y % 3))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    let before = rows_read(&mut c);
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM a JOIN b ON a.id = b.a_id WHERE a.x = 5")
        .unwrap()
        .unwrap();
    let read = rows_read(&mut c) - before;
    assert_eq!(n, 100);
    assert!(
        read <= 1000 + 100 + 10,
        "read {read} rows: the condition on a is tested before b is joined"
    );
    // The same results as with the conditions kept to the end (IF() is a function call).
    for (pushed, kept) in [
        (
            "SELECT a.id, b.n FROM a JOIN b ON a.id = b.a_id WHERE a.x = 5 AND b.y > 3",
            "SELECT a.id, b.n FROM a JOIN b ON a.id = b.a_id \
             WHERE IF(a.x = 5, 1, 0) = 1 AND IF(b.y > 3, 1, 0) = 1",
        ),
        (
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id WHERE a.x = 95 AND b.n IS NULL",
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id \
             WHERE IF(a.x = 95, 1, 0) = 1 AND IF(b.n IS NULL, 1, 0) = 1",
        ),
        (
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id AND b.n = 1 \
             WHERE a.s = 's3' AND (b.y IS NULL OR b.y < 5)",
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id AND b.n = 1 \
             WHERE IF(a.s = 's3', 1, 0) = 1 AND IF(b.y IS NULL OR b.y < 5, 1, 0) = 1",
        ),
        (
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id AND b.n = 1 \
             JOIN d ON d.y = a.x % 13 WHERE a.x < 30 AND (b.y IS NULL OR b.y < 3)",
            "SELECT a.id, b.n FROM a LEFT JOIN b ON a.id = b.a_id AND b.n = 1 \
             JOIN d ON d.y = a.x % 13 \
             WHERE IF(a.x < 30, 1, 0) = 1 AND IF(b.y IS NULL OR b.y < 3, 1, 0) = 1",
        ),
        (
            "SELECT a.id, b.n FROM b RIGHT JOIN a ON a.id = b.a_id WHERE a.x = 95",
            "SELECT a.id, b.n FROM b RIGHT JOIN a ON a.id = b.a_id WHERE IF(a.x = 95, 1, 0) = 1",
        ),
        (
            "SELECT a.id, b.n, d.z FROM a JOIN b ON a.id = b.a_id JOIN d ON d.y = b.y \
             WHERE a.x BETWEEN 10 AND 12 AND b.n + a.x > 15 AND d.z = 2 AND 1 = 1",
            "SELECT a.id, b.n, d.z FROM a JOIN b ON a.id = b.a_id JOIN d ON d.y = b.y \
             WHERE IF(a.x BETWEEN 10 AND 12, 1, 0) = 1 AND IF(b.n + a.x > 15, 1, 0) = 1 \
             AND IF(d.z = 2, 1, 0) = 1",
        ),
        (
            "SELECT COUNT(*) FROM a, b WHERE a.id = b.a_id AND a.s LIKE 's1%' AND 1 = 0",
            "SELECT COUNT(*) FROM a, b WHERE a.id = b.a_id AND IF(a.s LIKE 's1%', 1, 0) = 1 \
             AND IF(1 = 0, 1, 0) = 1",
        ),
    ] {
        let order = " ORDER BY 1, 2";
        let sort = |q: &str| {
            if q.contains("COUNT") {
                q.to_string()
            } else {
                format!("{q}{order}")
            }
        };
        let got: Vec<mysql::Row> = c.query(sort(pushed)).unwrap();
        let want: Vec<mysql::Row> = c.query(sort(kept)).unwrap();
        assert_eq!(got, want, "{pushed}");
        assert!(
            !want.is_empty() || pushed.contains("1 = 0"),
            "{kept}: no rows"
        );
    }
}

/// An inner join of base tables is read in the order statistics make cheapest (S16): a
/// large table named first, joined to a small one filtered by a constant, is read through
/// its key for the small table's few rows. The rows, and `*`'s columns in FROM order, are
/// what STRAIGHT_JOIN (FROM's order) gives; EXPLAIN shows the order read.
#[test]
fn joins_read_the_cheapest_order() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE j").unwrap();
    c.query_drop("USE j").unwrap();
    c.query_drop("CREATE TABLE big (id INT PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("CREATE TABLE small (id INT PRIMARY KEY, big_id INT, x INT)")
        .unwrap();
    c.query_drop("CREATE TABLE tag (small_id INT, t INT, PRIMARY KEY (small_id, t))")
        .unwrap();
    c.query_drop("BEGIN").unwrap();
    for i in 1..=3000 {
        c.query_drop(format!("INSERT INTO big VALUES ({i}, {})", i % 17))
            .unwrap();
    }
    for i in 1..=60 {
        c.query_drop(format!(
            "INSERT INTO small VALUES ({i}, {}, {})",
            i * 37 % 3000 + 1,
            i % 10
        ))
        .unwrap();
        c.query_drop(format!("INSERT INTO tag VALUES ({i}, 1), ({i}, 2)"))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    c.query_drop("ANALYZE TABLE big, small, tag").unwrap();
    let q = "SELECT * FROM big JOIN small ON small.big_id = big.id WHERE small.x = 3";
    let before = rows_read(&mut c);
    let rows: Vec<mysql::Row> = c.query(format!("{q} ORDER BY big.id")).unwrap();
    let read = rows_read(&mut c) - before;
    assert_eq!(rows.len(), 6);
    assert!(
        read <= 60 + 6,
        "read {read} rows: small first, then big by its key"
    );
    let straight: Vec<mysql::Row> = c
        .query(format!(
            "{} ORDER BY big.id",
            q.replace("JOIN small", "STRAIGHT_JOIN small")
        ))
        .unwrap();
    assert_eq!(rows, straight, "the same rows and columns as FROM's order");
    assert_eq!(rows[0].columns().len(), 5);
    assert_eq!(rows[0].columns()[0].name_str(), "id");
    assert_eq!(rows[0].columns()[1].name_str(), "v", "big's columns first");
    let tables: Vec<String> = c
        .query_map(format!("EXPLAIN {q}"), |r: mysql::Row| {
            r.get::<String, _>("table").unwrap_or_default()
        })
        .unwrap();
    assert_eq!(tables, ["small", "big"]);
    // Three tables, the ON conditions among them, a prepared statement.
    let q3 = "SELECT big.id, small.id, tag.t FROM big JOIN small ON small.big_id = big.id \
              JOIN tag ON tag.small_id = small.id WHERE small.x = ? AND tag.t = 2 \
              ORDER BY big.id";
    let st = c.prep(q3).unwrap();
    let before = rows_read(&mut c);
    let got: Vec<(i64, i64, i64)> = c.exec(&st, (3,)).unwrap();
    let read = rows_read(&mut c) - before;
    assert_eq!(got.len(), 6);
    assert!(read < 200, "read {read} rows");
    let again: Vec<(i64, i64, i64)> = c.exec(&st, (4,)).unwrap();
    let want: Vec<(i64, i64, i64)> = c
        .query(
            q3.replace("JOIN small", "STRAIGHT_JOIN small")
                .replace("JOIN tag", "STRAIGHT_JOIN tag")
                .replace('?', "4"),
        )
        .unwrap();
    assert_eq!(again, want);
    // A LEFT JOIN keeps FROM's order.
    let tables: Vec<String> = c
        .query_map(
            "EXPLAIN SELECT * FROM big LEFT JOIN small ON small.big_id = big.id WHERE big.v = 3",
            |r: mysql::Row| r.get::<String, _>("table").unwrap_or_default(),
        )
        .unwrap();
    assert_eq!(tables, ["big", "small"]);
}

/// ORDER BY columns with LIMIT over many rows: once the first rows are known, a row that
/// cannot come before the last of them is dropped as it comes. Ties, NULLs, DESC, OFFSET, a
/// case-insensitive string, and a join: the rows an ORDER BY of expressions (no early drop)
/// returns.
#[test]
fn top_n_drops_rows_that_cannot_make_the_cut() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE tn").unwrap();
    c.query_drop("USE tn").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT, d DECIMAL(8,2), s VARCHAR(10))")
        .unwrap();
    c.query_drop("BEGIN").unwrap();
    for chunk in (1..=5000).collect::<Vec<i64>>().chunks(500) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|i| {
                let v = if i % 97 == 0 {
                    "NULL".to_string()
                } else {
                    ((i * 7919) % 1000).to_string()
                };
                let s = ["a", "B", "c", "A", "b"][(*i as usize) % 5];
                format!("({i}, {v}, {}.{:02}, '{s}{}')", i % 300, i % 100, i % 40)
            })
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", vals.join(",")))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    for (fast, slow) in [
        (
            "SELECT id, v FROM t ORDER BY v DESC LIMIT 7",
            "SELECT id, v FROM t ORDER BY v + 0 DESC LIMIT 7",
        ),
        (
            "SELECT id, v FROM t ORDER BY v LIMIT 3, 7",
            "SELECT id, v FROM t ORDER BY v + 0 LIMIT 3, 7",
        ),
        (
            "SELECT id, d FROM t ORDER BY d DESC, id LIMIT 9",
            "SELECT id, d FROM t ORDER BY d + 0 DESC, id + 0 LIMIT 9",
        ),
        (
            "SELECT id, s FROM t ORDER BY s, id DESC LIMIT 6",
            "SELECT id, s FROM t ORDER BY CONCAT(s, ''), id + 0 DESC LIMIT 6",
        ),
        (
            "SELECT a.id, b.v FROM t a JOIN t b ON b.id = a.v WHERE a.id < 3000 \
             ORDER BY b.v DESC, a.id LIMIT 5",
            "SELECT a.id, b.v FROM t a JOIN t b ON b.id = a.v WHERE a.id < 3000 \
             ORDER BY b.v + 0 DESC, a.id + 0 LIMIT 5",
        ),
    ] {
        let got: Vec<mysql::Row> = c.query(fast).unwrap();
        let want: Vec<mysql::Row> = c.query(slow).unwrap();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{fast}");
    }
}

#[test]
fn exists_reads_its_table_once_when_cheaper() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE e").unwrap();
    c.query_drop("USE e").unwrap();
    c.query_drop(
        "CREATE TABLE a (id INT PRIMARY KEY, g INT, t VARCHAR(8) COLLATE utf8mb4_general_ci, \
         d DECIMAL(6,2), KEY (t))",
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE b (a_id INT NOT NULL, n INT NOT NULL, stat INT, \
         code VARCHAR(8) COLLATE utf8mb4_bin, num VARCHAR(8), PRIMARY KEY (a_id, n), \
         KEY (stat), KEY (code))",
    )
    .unwrap();
    c.query_drop("BEGIN").unwrap();
    let code = |i: i64| match i % 6 {
        0 => "NULL".to_string(),
        1 => format!("'x{}'", i % 40),
        2 => format!("'X{}'", i % 40),
        _ => format!("'x{} '", i % 40),
    };
    for i in 1..=2000 {
        let g = if i % 11 == 0 {
            "NULL".to_string()
        } else {
            (i % 300).to_string()
        };
        c.query_drop(format!(
            "INSERT INTO a VALUES ({i}, {g}, {}, {}.{:02})",
            code(i + 1),
            i % 50,
            i % 4 * 25
        ))
        .unwrap();
        let vals: Vec<String> = (1..=10)
            .map(|n| {
                let stat = if (i + n) % 17 == 0 {
                    "NULL".to_string()
                } else {
                    ((i * n) % 301).to_string()
                };
                format!("({i}, {n}, {stat}, {}, '{}')", code(i * n), (i + n) % 60)
            })
            .collect();
        c.query_drop(format!("INSERT INTO b VALUES {}", vals.join(",")))
            .unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    c.query_drop("ANALYZE TABLE a, b").unwrap();
    // One equality to the enclosing row and a selective one of its own: b's rows of stat 5
    // are read once (about 20000 / 300), not 10 rows per row of a.
    let q =
        "SELECT COUNT(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id AND b.stat = 5)";
    let before = rows_read(&mut c);
    let n: i64 = c.query_first(q).unwrap().unwrap();
    let read = rows_read(&mut c) - before;
    let by_join: i64 = c
        .query_first("SELECT COUNT(DISTINCT b.a_id) FROM b WHERE b.stat = 5")
        .unwrap()
        .unwrap();
    assert_eq!(n, by_join);
    assert!(
        read < 2 * (by_join as u64) + 200,
        "read {read} rows: b's matches once, then a by its key"
    );
    // An IN of few integers looks them up in the column's index; compared as numbers with a
    // string column, it reads every row; NOT IN never looks up.
    for (q, most) in [
        ("SELECT a.id FROM a WHERE a.id IN (SELECT b.a_id FROM b WHERE b.stat = 5) ORDER BY a.id", 200),
        ("SELECT a.id FROM a WHERE a.g IN (SELECT b.stat FROM b WHERE b.code = 'x7') ORDER BY a.id", 20_000),
        ("SELECT a.id FROM a WHERE a.t IN (SELECT b.stat FROM b WHERE b.n = 1) ORDER BY a.id", 22_000),
        ("SELECT a.id FROM a WHERE a.id NOT IN (SELECT b.a_id FROM b WHERE b.stat <> 5) ORDER BY a.id", 30_000),
    ] {
        let before = rows_read(&mut c);
        let got: Vec<i64> = c.query(q).unwrap();
        let read = rows_read(&mut c) - before;
        assert!(read <= most, "{q}: read {read} rows");
        let kept = q.replace(" WHERE a.", " WHERE (a.").replace(" ORDER BY", ") IS TRUE ORDER BY");
        let want: Vec<i64> = c.query(&kept).unwrap();
        assert_eq!(got, want, "{q}");
    }
    // A few rows of a: each looked up (10 rows of b apiece), b not read whole.
    let before = rows_read(&mut c);
    let n: i64 = c
        .query_first(
            "SELECT COUNT(*) FROM a WHERE a.id BETWEEN 1 AND 3 \
             AND EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id AND b.num <> 'z')",
        )
        .unwrap()
        .unwrap();
    let read = rows_read(&mut c) - before;
    assert_eq!(n, 3);
    assert!(
        read <= 3 + 3 * 10,
        "read {read} rows: a lookup per row of a"
    );
    // The same rows as the EXISTS evaluated per row (under IS TRUE, it stays correlated),
    // also inside an OR:
    // NULLs on both sides, strings under two collations, numbers against strings,
    // expressions, unqualified names.
    for cond in [
        "b.a_id = a.id AND b.stat = 5",
        "b.stat = a.g AND b.n = 3",
        "b.stat = a.g AND b.code = 'x7'",
        "a.t = b.code AND b.stat < 20",
        "b.code = a.t AND b.n = 2",
        "b.num = a.d AND b.stat > 150",
        "a.d = b.num AND b.code IS NULL",
        "b.stat + 1 = a.g * 2 AND b.n = 1",
        "stat = g AND n = 4",
        "b.code = CONCAT('x', a.g) AND b.stat BETWEEN 10 AND 30",
    ] {
        let q =
            format!("SELECT a.id FROM a WHERE EXISTS (SELECT * FROM b WHERE {cond}) ORDER BY a.id");
        let per_row = format!(
            "SELECT a.id FROM a WHERE (EXISTS (SELECT * FROM b WHERE {cond})) IS TRUE ORDER BY a.id"
        );
        let got: Vec<i64> = c.query(&q).unwrap();
        let want: Vec<i64> = c.query(&per_row).unwrap();
        assert_eq!(got, want, "{cond}");
        assert!(!want.is_empty(), "{cond}: some rows match");
        let or = |w: &str| {
            format!("SELECT a.id FROM a WHERE a.id % 7 = 0 OR {w} AND a.id > 100 ORDER BY a.id")
        };
        let exists = format!("EXISTS (SELECT * FROM b WHERE {cond})");
        let got: Vec<i64> = c.query(or(&exists)).unwrap();
        let want: Vec<i64> = c.query(or(&format!("({exists}) IS TRUE"))).unwrap();
        assert_eq!(got, want, "{cond} in an OR");
        let not_exists = format!("NOT {exists}");
        let got: Vec<i64> = c.query(or(&not_exists)).unwrap();
        let want: Vec<i64> = c.query(or(&format!("({not_exists}) IS TRUE"))).unwrap();
        assert_eq!(got, want, "NOT EXISTS {cond}");
    }
}

/// Conditions on one column handed to the engine's scan (scanfilter.rs) drop only the rows
/// the WHERE clause refuses: every condition gives the rows its IF() form (kept in the SQL
/// layer) gives, for each kind of column, NULLs, collations, off-page values, parameters,
/// older row versions and covering index reads; the rows passed over still count as read.
#[test]
fn scan_filters_keep_the_where_clause_answers() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE sf").unwrap();
    c.query_drop("USE sf").unwrap();
    c.query_drop(
        "CREATE TABLE f (id INT PRIMARY KEY, u8 VARCHAR(20), \
         g VARCHAR(20) COLLATE utf8mb4_general_ci, bn VARCHAR(20) COLLATE utf8mb4_bin, \
         l1 VARCHAR(20) CHARACTER SET latin1, ch CHAR(8), vb VARBINARY(20), i INT, \
         u INT UNSIGNED, bi BIGINT, d DECIMAL(8,2), dt DATE, dtt DATETIME, big TEXT, \
         KEY ui (u8, i))",
    )
    .unwrap();
    let words = [
        "abc", "ABC", "Abc ", "résumé", "RESUME", "été", "ete", "zz", "xzzy", "a%c", "a_c",
        "straße", "ä", "Æ", "", " ",
    ];
    c.query_drop("BEGIN").unwrap();
    let ins = c
        .prep("INSERT INTO f VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .unwrap();
    for id in 0..400i64 {
        let w = words[id as usize % words.len()];
        let w2 = words[(id as usize / 3) % words.len()];
        let null = id % 11 == 0;
        let v = |s: &str| (!null).then(|| s.to_string());
        // Every 50th row has a value stored off-page.
        let big = if id % 50 == 7 {
            format!("{w}{}", "x".repeat(20000))
        } else {
            w2.to_string()
        };
        let row: Vec<mysql::Value> = vec![
            id.into(),
            v(w).into(),
            v(w2).into(),
            v(w).into(),
            v(w2).into(),
            v(w).into(),
            (!null).then(|| w2.as_bytes().to_vec()).into(),
            (!null).then_some(id % 37 - 18).into(),
            (!null).then_some(id as u64 * 13 % 97).into(),
            (!null).then_some((id - 200) * 1_000_000_007).into(),
            (!null)
                .then(|| format!("{}.{:02}", id % 13 - 6, id % 100))
                .into(),
            (!null)
                .then(|| format!("2024-{:02}-{:02}", id % 12 + 1, id % 28 + 1))
                .into(),
            (!null)
                .then(|| format!("2024-01-{:02} {:02}:00:00", id % 28 + 1, id % 24))
                .into(),
            big.into(),
        ];
        c.exec_drop(&ins, row).unwrap();
    }
    c.query_drop("COMMIT").unwrap();
    let conds = [
        "u8 = 'abc'",
        "u8 = 'resume'",
        "u8 <> 'ete'",
        "u8 < 'b'",
        "'b' <= u8",
        "u8 > 'zz'",
        "u8 >= ''",
        "u8 = ' '",
        "u8 LIKE '%zz%'",
        "u8 LIKE 'a\\_c'",
        "u8 LIKE 'a%c'",
        "u8 NOT LIKE '%e%'",
        "u8 LIKE 'E_E'",
        "u8 LIKE '%'",
        "u8 BETWEEN 'a' AND 'f'",
        "u8 IS NULL",
        "u8 IS NOT NULL",
        "g = 'ETE'",
        "g LIKE 'str%'",
        "g > 'e'",
        "bn = 'abc'",
        "bn LIKE 'A%'",
        "bn < 'a'",
        "l1 = 'ae'",
        "l1 = 'Ä'",
        "l1 LIKE 'e%'",
        "l1 > 'x'",
        "ch = 'Abc'",
        "ch LIKE 'Abc'",
        "ch LIKE '% '",
        "vb = 'abc'",
        "vb LIKE 'a%'",
        "vb > 'e'",
        "i = 0",
        "i < -5",
        "i >= 10 AND u < 50",
        "u > 90",
        "u BETWEEN 10 AND 20",
        "bi > 100000000000",
        "bi <= -150000000000",
        "d > 3",
        "d = 2.5",
        "d BETWEEN -1.5 AND 0.75",
        "dt >= DATE '2024-06-01'",
        "dtt < TIMESTAMP '2024-01-05 00:00:00'",
        "big LIKE 'ab%'",
        "big = 'zz'",
        "i > 3 AND u8 LIKE '%e%' AND bn <> 'ete'",
        "u8 IN ('abc', 'ete')",
        "u8 NOT IN ('abc', 'zz')",
        "i IN (1, 2, -3)",
        "i NOT IN (1, NULL)",
        "i IN (5, NULL)",
        "d IN (2.5, 3)",
        "l1 IN ('ae', 'E')",
        "vb NOT IN ('abc', '')",
        "dt >= '2024-06-01'",
        "dtt < '2024-01-05'",
        "dt = '2024-03-04 00:00:00'",
        "dtt > '2024-01-10 12:30'",
        "dt BETWEEN '2024-02-01' AND '2024-04-30'",
        "dt < 'not a date'",
        "d < 1.005",
        "u = 13",
        "i > -2",
        "u8 = 'abc' OR i = 1",
    ];
    let ids = |c: &mut mysql::Conn, w: &str| -> Vec<i64> {
        c.query(format!("SELECT id FROM f WHERE {w} ORDER BY id"))
            .unwrap()
    };
    for cond in conds {
        let got = ids(&mut c, cond);
        let want = ids(&mut c, &format!("IF({cond}, 1, 0) = 1"));
        assert_eq!(got, want, "{cond}");
    }
    // A covering read of index ui, its entries tested.
    for cond in [
        "i > 5 AND u8 LIKE '%e%'",
        "i < 0 AND u8 = 'abc'",
        "u8 IS NULL",
    ] {
        let got: Vec<(Option<String>, Option<i64>)> = c
            .query(format!(
                "SELECT u8, i FROM f FORCE INDEX (ui) WHERE {cond} ORDER BY u8, i"
            ))
            .unwrap();
        let want: Vec<(Option<String>, Option<i64>)> = c
            .query(format!(
                "SELECT u8, i FROM f WHERE IF({cond}, 1, 0) = 1 ORDER BY u8, i"
            ))
            .unwrap();
        assert_eq!(got, want, "covering: {cond}");
    }
    // A table joined by hash (b.i is the first column of no index) is read once with its own
    // conditions tested in the scan, for an inner and a LEFT JOIN.
    for (pushed, kept) in [
        (
            "SELECT a.id, b.id FROM f a JOIN f b ON b.i = a.i \
             WHERE b.u8 LIKE '%e%' AND b.d > 0 AND a.id < 60 ORDER BY a.id, b.id",
            "SELECT a.id, b.id FROM f a JOIN f b ON b.i = a.i \
             WHERE IF(b.u8 LIKE '%e%' AND b.d > 0, 1, 0) = 1 AND a.id < 60 ORDER BY a.id, b.id",
        ),
        (
            "SELECT a.id, b.id FROM f a LEFT JOIN f b ON b.i = a.i AND b.u8 IN ('abc', 'zz') \
             WHERE a.id < 60 ORDER BY a.id, b.id",
            "SELECT a.id, b.id FROM f a LEFT JOIN f b ON b.i = a.i \
             AND IF(b.u8 IN ('abc', 'zz'), 1, 0) = 1 WHERE a.id < 60 ORDER BY a.id, b.id",
        ),
    ] {
        let got: Vec<(i64, Option<i64>)> = c.query(pushed).unwrap();
        let want: Vec<(i64, Option<i64>)> = c.query(kept).unwrap();
        assert_eq!(got, want, "{pushed}");
        assert!(
            got.iter().any(|r| r.1.is_some()),
            "{pushed}: some rows join"
        );
    }
    // Parameters of a prepared statement.
    let st = c
        .prep("SELECT id FROM f WHERE u8 LIKE ? AND i > ? AND d < ? ORDER BY id")
        .unwrap();
    for (p, i, d) in [("%e%", -10, "4"), ("a%", 0, "1.5"), ("zz", -20, "10")] {
        let got: Vec<i64> = c.exec(&st, (p, i, d)).unwrap();
        let want = ids(
            &mut c,
            &format!("IF(u8 LIKE '{p}' AND i > {i} AND d < {d}, 1, 0) = 1"),
        );
        assert_eq!(got, want, "{p} {i} {d}");
    }
    // A snapshot tests the version it sees, not the newest.
    let mut other = connect(&s);
    c.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    other
        .query_drop("UPDATE sf.f SET u8 = 'new', i = 99 WHERE id % 3 = 0")
        .unwrap();
    let in_snapshot = ids(&mut c, "u8 = 'abc' AND i < 50");
    assert_eq!(
        in_snapshot,
        ids(&mut c, "IF(u8 = 'abc' AND i < 50, 1, 0) = 1")
    );
    assert!(in_snapshot.iter().any(|id| id % 3 == 0));
    assert!(ids(&mut c, "u8 = 'new'").is_empty());
    c.query_drop("COMMIT").unwrap();
    assert!(!ids(&mut c, "u8 = 'new'").is_empty());
    // F3: the rows passed over are read rows too.
    let before = rows_read(&mut c);
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM f WHERE u8 LIKE '%zz%'")
        .unwrap()
        .unwrap();
    assert!(n > 0);
    assert_eq!(rows_read(&mut c) - before, 400);
}

/// EXPLAIN INSERT / REPLACE as MySQL: a row naming the table written (select_type INSERT or
/// REPLACE, type ALL, nothing else), then the rows of the SELECT an INSERT ... SELECT reads; a
/// missing table is 1146.
#[test]
fn explain_shows_inserts() {
    let s = start();
    let mut c = connect(&s);
    sbtest(&mut c);
    type Row = (u64, String, String, String, Option<String>);
    let q = |c: &mut mysql::Conn, sql: &str| -> Vec<Row> {
        c.query_map(format!("EXPLAIN {sql}"), |r: mysql::Row| {
            (
                r.get::<u64, _>(0).unwrap(),
                r.get::<String, _>(1).unwrap(),
                r.get::<String, _>(2).unwrap(),
                r.get::<String, _>(4).unwrap(),
                r.get::<Option<String>, _>(6).unwrap(),
            )
        })
        .unwrap()
    };
    let ins = |kind: &str| {
        (
            1,
            kind.to_string(),
            "t".to_string(),
            "ALL".to_string(),
            None,
        )
    };
    assert_eq!(
        q(&mut c, "INSERT INTO t (id) VALUES (0)"),
        vec![ins("INSERT")]
    );
    assert_eq!(
        q(&mut c, "REPLACE INTO t (id) VALUES (0)"),
        vec![ins("REPLACE")]
    );
    let pk = Some("PRIMARY".to_string());
    assert_eq!(
        q(
            &mut c,
            "INSERT INTO t (id) SELECT id + 1000000 FROM t WHERE id = 5"
        ),
        vec![
            ins("INSERT"),
            (1, "SIMPLE".into(), "t".into(), "const".into(), pk)
        ]
    );
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE id = 0")
        .unwrap()
        .unwrap();
    assert_eq!(n, 0, "EXPLAIN wrote nothing");
    match c
        .query_drop("EXPLAIN INSERT INTO nope VALUES (1)")
        .unwrap_err()
    {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1146),
        other => panic!("{other}"),
    }
}
