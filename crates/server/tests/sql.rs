//! The server through the MySQL protocol with a real client (the `mysql` crate): connect as
//! root without a password, DDL, DML in text and prepared form, transactions, result values.

mod common;

use std::time::Duration;

use common::{connect, start};
use mysql::prelude::*;

#[test]
fn ddl_dml_prepared_and_transactions() {
    let s = start();
    let mut c = connect(&s);
    let v: String = c.query_first("SELECT @@version").unwrap().unwrap();
    assert!(v.starts_with("8.0."), "{v}");
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, \
         c CHAR(20) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
    )
    .unwrap();
    c.query_drop("INSERT INTO t (k, c) VALUES (10, 'a'), (20, 'b'), (10, 'c')")
        .unwrap();
    assert_eq!(c.last_insert_id(), 1);
    // Prepared statements, parameters reused across executions.
    let ins = c.prep("INSERT INTO t (id, k, c) VALUES (?, ?, ?)").unwrap();
    for i in 4..=10 {
        c.exec_drop(&ins, (i, i * 10, format!("r{i}"))).unwrap();
    }
    let sel = c.prep("SELECT c FROM t WHERE id = ?").unwrap();
    let got: Option<String> = c.exec_first(&sel, (5,)).unwrap();
    assert_eq!(got.as_deref(), Some("r5"));
    let rows: Vec<(i64, String)> = c
        .exec(
            "SELECT k, c FROM t WHERE id BETWEEN ? AND ? ORDER BY c DESC",
            (1, 3),
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![(10, "c".into()), (20, "b".into()), (10, "a".into())]
    );
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE k = 10")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2);
    let sum: String = c.query_first("SELECT SUM(k) FROM t").unwrap().unwrap();
    assert_eq!(
        sum,
        (10 + 20 + 10 + (4..=10).map(|i| i * 10).sum::<i64>()).to_string()
    );
    // Duplicate key: error 1062 and the server stays up.
    let e = c.query_drop("INSERT INTO t (id) VALUES (1)").unwrap_err();
    match e {
        mysql::Error::MySqlError(m) => assert_eq!(m.code, 1062, "{m:?}"),
        other => panic!("{other:?}"),
    }
    // A transaction rolled back leaves nothing; one committed is seen by another client.
    c.query_drop("BEGIN").unwrap();
    c.query_drop("UPDATE t SET k = k + 1 WHERE id = 1").unwrap();
    assert_eq!(c.affected_rows(), 1);
    c.query_drop("ROLLBACK").unwrap();
    let k: i64 = c
        .query_first("SELECT k FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(k, 10);
    c.query_drop("START TRANSACTION").unwrap();
    c.query_drop("DELETE FROM t WHERE id = 2").unwrap();
    c.query_drop("COMMIT").unwrap();
    let mut c2 = connect(&s);
    c2.query_drop("USE d").unwrap();
    let n: i64 = c2.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 9);
    // Unknown table: 1146.
    match c2.query_drop("SELECT * FROM nope").unwrap_err() {
        mysql::Error::MySqlError(m) => assert_eq!(m.code, 1146, "{m:?}"),
        other => panic!("{other:?}"),
    }
}

fn code(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(m) => m.code,
        other => panic!("not a server error: {other:?}"),
    }
}

#[test]
fn session_variables_act() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE v").unwrap();
    c.query_drop("USE v").unwrap();
    c.query_drop(
        "CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, g INT NOT NULL, s VARCHAR(10))",
    )
    .unwrap();
    // auto_increment_increment/offset shape the generated values; @@last_insert_id agrees
    // with LAST_INSERT_ID(); SET insert_id gives the next one.
    c.query_drop("SET auto_increment_increment = 10, auto_increment_offset = 3")
        .unwrap();
    c.query_drop("INSERT INTO a (g, s) VALUES (1, 'x'), (1, 'yy'), (2, 'zzz')")
        .unwrap();
    let ids: Vec<u64> = c.query("SELECT id FROM a ORDER BY id").unwrap();
    assert_eq!(ids, vec![3, 13, 23]);
    let (l, v): (u64, u64) = c
        .query_first("SELECT LAST_INSERT_ID(), @@last_insert_id")
        .unwrap()
        .unwrap();
    assert_eq!((l, v), (3, 3));
    c.query_drop("SET auto_increment_increment = 1, auto_increment_offset = 1")
        .unwrap();
    c.query_drop("SET insert_id = 100").unwrap();
    c.query_drop("INSERT INTO a (g, s) VALUES (3, 'w')")
        .unwrap();
    assert_eq!(c.last_insert_id(), 100);
    // sql_select_limit caps a SELECT without LIMIT.
    c.query_drop("SET sql_select_limit = 2").unwrap();
    let n: Vec<u64> = c.query("SELECT id FROM a").unwrap();
    assert_eq!(n.len(), 2);
    c.query_drop("SET sql_select_limit = DEFAULT").unwrap();
    // sql_safe_updates refuses an UPDATE that no key narrows.
    c.query_drop("SET sql_safe_updates = 1").unwrap();
    assert_eq!(code(c.query_drop("UPDATE a SET g = 0").unwrap_err()), 1175);
    c.query_drop("UPDATE a SET g = 9 WHERE id = 3").unwrap();
    c.query_drop("SET sql_safe_updates = 0").unwrap();
    // group_concat_max_len cuts with warning 1260.
    c.query_drop("SET group_concat_max_len = 4").unwrap();
    let gc: String = c
        .query_first("SELECT GROUP_CONCAT(s) FROM a WHERE g IN (1, 2)")
        .unwrap()
        .unwrap();
    assert_eq!(gc, "yy,z");
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(w[0].1, 1260, "{w:?}");
    // A read-only transaction refuses writes (1792) and reads fine.
    c.query_drop("START TRANSACTION READ ONLY").unwrap();
    assert_eq!(
        code(c.query_drop("DELETE FROM a WHERE id = 3").unwrap_err()),
        1792
    );
    c.query_drop("COMMIT").unwrap();
    c.query_drop("SET SESSION TRANSACTION READ ONLY").unwrap();
    assert_eq!(
        code(c.query_drop("INSERT INTO a (g) VALUES (5)").unwrap_err()),
        1792
    );
    c.query_drop("SET SESSION TRANSACTION READ WRITE").unwrap();
    c.query_drop("INSERT INTO a (g) VALUES (5)").unwrap();
    // SET timestamp fixes NOW(); NOW() + INTERVAL works (time zones: `time_zones`).
    c.query_drop("SET timestamp = 1000000000").unwrap();
    let (now, next): (String, String) = c
        .query_first("SELECT NOW(), NOW() + INTERVAL 1 DAY")
        .unwrap()
        .unwrap();
    assert_eq!(
        (now.as_str(), next.as_str()),
        ("2001-09-09 01:46:40", "2001-09-10 01:46:40")
    );
    c.query_drop("SET timestamp = DEFAULT").unwrap();
    // latin1 connections are converted (tests/clients/latin1_client.py); back to UTF-8.
    c.query_drop("SET NAMES latin1").unwrap();
    c.query_drop("SET NAMES utf8mb4").unwrap();
    // max_execution_time stops a long SELECT with 3024.
    c.query_drop("CREATE TABLE big (id INT PRIMARY KEY)")
        .unwrap();
    let vals: Vec<String> = (1..=300).map(|i| format!("({i})")).collect();
    c.query_drop(format!("INSERT INTO big VALUES {}", vals.join(",")))
        .unwrap();
    c.query_drop("SET max_execution_time = 1").unwrap();
    let e = c
        .query_drop("SELECT COUNT(*) FROM big x JOIN big y JOIN big z")
        .unwrap_err();
    assert_eq!(code(e), 3024);
    c.query_drop("SET max_execution_time = 0").unwrap();
    // FLUSH TABLES reloads descriptions (Opened_tables grows).
    let opened = |c: &mut mysql::Conn| -> u64 {
        let r: (String, String) = c
            .query_first("SHOW STATUS LIKE 'Opened_tables'")
            .unwrap()
            .unwrap();
        r.1.parse().unwrap()
    };
    let before = opened(&mut c);
    c.query_drop("FLUSH TABLES").unwrap();
    c.query_drop("SELECT * FROM a WHERE id = 3").unwrap();
    assert_eq!(opened(&mut c), before + 1);
    // FLUSH TABLES WITH READ LOCK closes the tables too (the lock itself: `lock_tables`).
    c.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    c.query_drop("SELECT * FROM a WHERE id = 3").unwrap();
    assert_eq!(opened(&mut c), before + 2);
    c.query_drop("UNLOCK TABLES").unwrap();
    // KILL of an idle connection closes it at once; wait_timeout closes an idle one.
    let mut victim = connect(&s);
    let vid: u64 = victim
        .query_first("SELECT CONNECTION_ID()")
        .unwrap()
        .unwrap();
    c.query_drop(format!("KILL {vid}")).unwrap();
    assert!(victim.query_drop("SELECT 1").is_err());
    let mut sleepy = connect(&s);
    sleepy.query_drop("SET wait_timeout = 1").unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert!(sleepy.query_drop("SELECT 1").is_err());
    // max_prepared_stmt_count bounds the statements of all connections (1461).
    c.query_drop("SET GLOBAL max_prepared_stmt_count = 1")
        .unwrap();
    let _p = c.prep("SELECT 1").unwrap();
    let mut c3 = connect(&s);
    assert_eq!(code(c3.prep("SELECT 2").unwrap_err()), 1461);
}

#[test]
fn accounts_and_connection_commands() {
    let s = start();
    let mut c = connect(&s);
    // CREATE USER with a password: the right one logs in (caching_sha2 fast path), a wrong
    // one is 1045, DROP USER removes the account.
    c.query_drop("CREATE USER 'app'@'%' IDENTIFIED BY 's3cret'")
        .unwrap();
    assert_eq!(
        code(c.query_drop("CREATE USER 'app'@'%'").unwrap_err()),
        1396
    );
    let login = |pw: &str| {
        mysql::Conn::new(
            mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(s.port)
                .user(Some("app"))
                .pass(Some(pw)),
        )
    };
    let mut app = login("s3cret").unwrap();
    let who: String = app.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
    assert_eq!(who, "app@%");
    assert_eq!(code(login("wrong").map(|_| ()).unwrap_err()), 1045);
    // Multi-statement queries return one result per statement.
    let mut sets = Vec::new();
    let mut r = c.query_iter("SELECT 1; SELECT 2, 3; DO 0").unwrap();
    while let Some(set) = r.iter() {
        sets.push(set.map(|row| row.unwrap().len()).collect::<Vec<_>>());
    }
    drop(r);
    assert_eq!(sets, vec![vec![1], vec![2], vec![]]);
    // COM_PING, COM_RESET_CONNECTION (session state goes), COM_CHANGE_USER.
    assert!(c.ping().is_ok());
    c.query_drop("SET @x = 5, sql_select_limit = 3").unwrap();
    c.reset().unwrap();
    let (x, l): (Option<i64>, u64) = c
        .query_first("SELECT @x, @@sql_select_limit")
        .unwrap()
        .unwrap();
    assert_eq!((x, l), (None, u64::MAX));
    c.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("app".into()))
            .with_pass(Some("s3cret".into())),
    )
    .unwrap();
    let who: String = c.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
    assert_eq!(who, "app@%");
    drop(app);
    // c is app now, without the CREATE USER privilege.
    assert_eq!(code(c.query_drop("DROP USER 'app'@'%'").unwrap_err()), 1227);
    connect(&s).query_drop("DROP USER 'app'@'%'").unwrap();
    assert_eq!(code(login("s3cret").map(|_| ()).unwrap_err()), 1045);
}

#[test]
fn warnings_are_counted_and_shown() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE w").unwrap();
    c.query_drop("USE w").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(5), n INT)")
        .unwrap();
    // Outside strict mode a bad value is adjusted with a warning; the OK packet counts them
    // and SHOW WARNINGS lists them in column order.
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'abcdefgh', 'x1')")
        .unwrap();
    assert_eq!(c.warnings(), 2);
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![
            (
                "Warning".to_string(),
                1265,
                "Data truncated for column 'name' at row 1".to_string()
            ),
            (
                "Warning".to_string(),
                1366,
                "Incorrect integer value: 'x1' for column 'n' at row 1".to_string()
            ),
        ]
    );
    // SHOW WARNINGS adds none of its own (its EOF counts 0) and keeps the list.
    assert_eq!(c.warnings(), 0);
    let warnings: u64 = c.query_first("SHOW COUNT(*) WARNINGS").unwrap().unwrap();
    let errors: u64 = c.query_first("SHOW COUNT(*) ERRORS").unwrap().unwrap();
    assert_eq!((warnings, errors), (2, 0));
    let counts: (u64, u64) = c
        .query_first("SELECT @@warning_count, @@error_count")
        .unwrap()
        .unwrap();
    assert_eq!(counts, (2, 0));
    assert!(c.query_drop("SELECT * FROM no_such_table").is_err());
    let counts: (u64, u64) = c
        .query_first("SELECT @@warning_count, @@error_count")
        .unwrap()
        .unwrap();
    assert_eq!(counts, (1, 1), "the error of the previous statement");
    let row: (String, i64) = c
        .query_first("SELECT name, n FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(row, ("abcde".to_string(), 0));
    // A statement without warnings clears them.
    c.query_drop("DO 1").unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert!(w.is_empty(), "{w:?}");
    // The binary protocol's OK counts them too.
    let st = c.prep("INSERT INTO t VALUES (?, ?, ?)").unwrap();
    c.exec_drop(&st, (2, "toolongvalue", 3)).unwrap();
    assert_eq!(c.warnings(), 1);
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(w[0].1, 1265, "{w:?}");
    // In strict mode the same values are errors, and SHOW WARNINGS shows the error.
    c.query_drop("SET sql_mode = DEFAULT").unwrap();
    assert_eq!(
        code(
            c.query_drop("INSERT INTO t VALUES (3, 'abcdefgh', 1)")
                .unwrap_err()
        ),
        1406
    );
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![(
            "Error".to_string(),
            1406,
            "Data too long for column 'name' at row 1".to_string()
        )]
    );
    assert_eq!(
        code(
            c.query_drop("INSERT INTO t VALUES (3, 'a', 'x1')")
                .unwrap_err()
        ),
        1366
    );
    // Storage engines as MySQL 8.0: one MySQL has is made InnoDB with a warning; a name no
    // engine has is 1286 under NO_ENGINE_SUBSTITUTION (the default), else two warnings.
    c.query_drop("CREATE TABLE m (id INT) ENGINE=MyISAM")
        .unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    let using_innodb = |t: &str| {
        (
            "Warning".to_string(),
            1266,
            format!("Using storage engine InnoDB for table '{t}'"),
        )
    };
    assert_eq!(w, vec![using_innodb("m")]);
    assert_eq!(
        code(
            c.query_drop("CREATE TABLE f (id INT) ENGINE=Nope")
                .unwrap_err()
        ),
        1286
    );
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("CREATE TABLE f (id INT) ENGINE=Nope").unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![
            (
                "Warning".to_string(),
                1286,
                "Unknown storage engine 'Nope'".to_string()
            ),
            using_innodb("f")
        ]
    );
}

#[test]
fn sql_level_prepared_statements() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE p").unwrap();
    c.query_drop("USE p").unwrap();
    c.query_drop("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))")
        .unwrap();
    c.query_drop("PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'")
        .unwrap();
    c.query_drop("SET @a = 1, @b = 'x'").unwrap();
    c.query_drop("EXECUTE ins USING @a, @b").unwrap();
    c.query_drop("SET @a = 2, @b = NULL").unwrap();
    c.query_drop("EXECUTE INS USING @a, @b").unwrap();
    // The text may come from a user variable; names are case-insensitive.
    c.query_drop("SET @q = 'SELECT a, b FROM t WHERE a >= ? ORDER BY a'")
        .unwrap();
    c.query_drop("PREPARE Sel FROM @q").unwrap();
    c.query_drop("SET @min = 1").unwrap();
    let rows: Vec<(i32, Option<String>)> = c.query("EXECUTE sel USING @min").unwrap();
    assert_eq!(rows, vec![(1, Some("x".into())), (2, None)]);
    let code = |r: mysql::Result<()>| match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("{other:?}"),
    };
    assert_eq!(code(c.query_drop("EXECUTE sel")), 1210);
    assert_eq!(code(c.query_drop("EXECUTE ins USING @a, @b")), 1062);
    assert_eq!(
        code(c.query_drop("PREPARE m FROM 'SELECT 1; SELECT 2'")),
        1064
    );
    assert_eq!(code(c.query_drop("PREPARE m FROM @unset")), 1064);
    c.query_drop("DEALLOCATE PREPARE sel").unwrap();
    assert_eq!(code(c.query_drop("EXECUTE sel USING @min")), 1243);
    assert_eq!(code(c.query_drop("DROP PREPARE sel")), 1243);
    // COM_RESET_CONNECTION drops them.
    c.reset().unwrap();
    c.query_drop("USE p").unwrap();
    assert_eq!(code(c.query_drop("EXECUTE ins USING @a, @b")), 1243);
}

/// latin1 columns hold one byte per character (VARCHAR(5) takes five 'é'), compare and index
/// under latin1_swedish_ci (case-insensitive: 'é' = 'É'), and refuse what latin1 lacks (1366
/// in strict mode, '?' with the warning otherwise); clients read them as UTF-8.
#[test]
fn latin1_columns() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE l").unwrap();
    c.query_drop("USE l").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5) CHARACTER SET latin1, \
         t TEXT CHARACTER SET latin1, UNIQUE KEY (a))",
    )
    .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'ééééé', '€uro'), (2, 'Öl', 'x'), (3, 'b', 'y')")
        .unwrap();
    let e = c
        .query_drop("INSERT INTO t VALUES (4, 'éééééé', '')")
        .unwrap_err();
    assert_eq!(code(e), 1406);
    let e = c
        .query_drop("INSERT INTO t VALUES (4, '日本', '')")
        .unwrap_err();
    assert_eq!(code(e), 1366);
    // The unique key compares latin1 case-insensitively.
    let e = c
        .query_drop("INSERT INTO t VALUES (4, 'öL', '')")
        .unwrap_err();
    assert_eq!(code(e), 1062);
    let id: u32 = c
        .query_first("SELECT id FROM t WHERE a = 'ÉÉÉÉÉ'")
        .unwrap()
        .unwrap();
    assert_eq!(id, 1);
    let rows: Vec<(u32, String, String)> = c.query("SELECT id, a, t FROM t ORDER BY a").unwrap();
    assert_eq!(
        rows,
        vec![
            (3, "b".into(), "y".into()),
            (1, "ééééé".into(), "€uro".into()),
            (2, "Öl".into(), "x".into()),
        ]
    );
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("INSERT INTO t VALUES (5, 'a日', '')").unwrap();
    assert_eq!(c.warnings(), 1);
    let a: String = c
        .query_first("SELECT a FROM t WHERE id = 5")
        .unwrap()
        .unwrap();
    assert_eq!(a, "a?");
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// GET_LOCK and SLEEP as MySQL 8.0 has them: names compare case-insensitively, '' is error
/// 3057, a waiter gets the lock as soon as its holder releases it or disconnects, KILL QUERY
/// ends a wait with 1317 and cuts a SLEEP short (it returns 1).
#[test]
fn named_locks_and_sleep() {
    let s = start();
    let mut a = connect(&s);
    let mut b = connect(&s);
    let b_id: u64 = b.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let one = |c: &mut mysql::Conn, q: &str| -> Option<i64> { c.query_first(q).unwrap().unwrap() };
    assert_eq!(one(&mut a, "SELECT GET_LOCK('Job', 0)"), Some(1));
    assert_eq!(
        one(&mut b, "SELECT GET_LOCK('JOB', 0)"),
        Some(0),
        "names ignore case"
    );
    assert_eq!(
        code(a.query_drop("SELECT GET_LOCK('', 1)").unwrap_err()),
        3057
    );
    let long = "x".repeat(65);
    assert_eq!(
        code(
            a.query_drop(format!("SELECT GET_LOCK('{long}', 1)"))
                .unwrap_err()
        ),
        3057
    );
    // b waits; a's release hands the lock over well before b's 10 s timeout.
    let waiter = std::thread::spawn(move || {
        let t = std::time::Instant::now();
        let got: Option<i64> = b
            .query_first("SELECT GET_LOCK('job', 10)")
            .unwrap()
            .unwrap();
        (got, t.elapsed(), b)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(one(&mut a, "SELECT RELEASE_LOCK('job')"), Some(1));
    let (got, waited, mut b) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    let holder: Option<u64> = a
        .query_first("SELECT IS_USED_LOCK('job')")
        .unwrap()
        .unwrap();
    assert_eq!(holder, Some(b_id));
    // KILL QUERY ends a wait with 1317 and cuts SLEEP short.
    let mut k = connect(&s);
    let a_id: u64 = a.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        k.query_drop(format!("KILL QUERY {a_id}")).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        k.query_drop(format!("KILL QUERY {a_id}")).unwrap();
    });
    assert_eq!(
        code(a.query_drop("SELECT GET_LOCK('job', 30)").unwrap_err()),
        1317
    );
    let t = std::time::Instant::now();
    assert_eq!(one(&mut a, "SELECT SLEEP(30)"), Some(1));
    assert!(t.elapsed() < Duration::from_secs(5));
    killer.join().unwrap();
    // b's locks go when b disconnects.
    assert_eq!(one(&mut b, "SELECT GET_LOCK('second', 0)"), Some(1));
    drop(b);
    let t = std::time::Instant::now();
    assert_eq!(one(&mut a, "SELECT GET_LOCK('job', 5)"), Some(1));
    assert_eq!(one(&mut a, "SELECT GET_LOCK('second', 5)"), Some(1));
    assert!(t.elapsed() < Duration::from_secs(3));
    let released: Option<i64> = a
        .query_first("SELECT RELEASE_ALL_LOCKS()")
        .unwrap()
        .unwrap();
    assert_eq!(released, Some(2));
    assert_eq!(one(&mut a, "SELECT SLEEP(0.2)"), Some(0));
}

/// LOCK TABLES: READ lets others read and makes their writes wait (lock_wait_timeout, 1205);
/// WRITE makes every access wait until UNLOCK TABLES; the holder reaches only its tables
/// (1100) and writes only those locked WRITE (1099); START TRANSACTION and a disconnect
/// release the locks; the LOCK TABLES privilege is needed (1044).
#[test]
fn lock_tables() {
    let s = start();
    let mut a = connect(&s);
    a.query_drop("CREATE DATABASE l").unwrap();
    a.query_drop("USE l").unwrap();
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    a.query_drop("CREATE TABLE u (id INT PRIMARY KEY)").unwrap();
    a.query_drop("INSERT INTO t VALUES (1, 10)").unwrap();
    let mut b = connect(&s);
    b.query_drop("USE l").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();

    a.query_drop("LOCK TABLES t READ").unwrap();
    let v: Option<i64> = b.query_first("SELECT v FROM t WHERE id = 1").unwrap();
    assert_eq!(v, Some(10));
    let t0 = std::time::Instant::now();
    assert_eq!(code(b.query_drop("UPDATE t SET v = 11").unwrap_err()), 1205);
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t0.elapsed()
    );
    // Another table is free for others, and out of reach for the holder.
    b.query_drop("INSERT INTO u VALUES (1)").unwrap();
    assert_eq!(code(a.query_drop("SELECT * FROM u").unwrap_err()), 1100);
    assert_eq!(code(a.query_drop("UPDATE t SET v = 12").unwrap_err()), 1099);
    let v: Option<i64> = a.query_first("SELECT v FROM t").unwrap();
    assert_eq!(v, Some(10));
    a.query_drop("UNLOCK TABLES").unwrap();
    b.query_drop("UPDATE t SET v = 11").unwrap();

    // WRITE: a reader waits until the holder unlocks, then sees its change.
    a.query_drop("LOCK TABLES t WRITE, u AS alias READ")
        .unwrap();
    a.query_drop("UPDATE t SET v = 20").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 30").unwrap();
    let reader = std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        let v: Option<i64> = b.query_first("SELECT v FROM t").unwrap();
        (v, t0.elapsed(), b)
    });
    std::thread::sleep(Duration::from_millis(300));
    a.query_drop("UNLOCK TABLES").unwrap();
    let (v, waited, mut b) = reader.join().unwrap();
    assert_eq!(v, Some(20));
    assert!(waited >= Duration::from_millis(250), "{waited:?}");

    // START TRANSACTION releases the locks; so does the end of the connection.
    a.query_drop("LOCK TABLES t WRITE").unwrap();
    a.query_drop("START TRANSACTION").unwrap();
    b.query_drop("UPDATE t SET v = 21").unwrap();
    a.query_drop("COMMIT").unwrap();
    a.query_drop("LOCK TABLES t WRITE").unwrap();
    drop(a);
    let t0 = std::time::Instant::now();
    loop {
        match b.query_drop("UPDATE t SET v = 22") {
            Ok(()) => break,
            Err(e) => {
                assert_eq!(code(e), 1205);
                assert!(t0.elapsed() < Duration::from_secs(60), "never released");
            }
        }
    }

    // FLUSH TABLES WITH READ LOCK: others read and wait to write; the holder cannot write.
    let mut a = connect(&s);
    a.query_drop("USE l").unwrap();
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    let v: Option<i64> = b.query_first("SELECT v FROM t").unwrap();
    assert_eq!(v, Some(22));
    assert_eq!(code(b.query_drop("DELETE FROM u").unwrap_err()), 1205);
    assert_eq!(code(a.query_drop("DELETE FROM u").unwrap_err()), 1223);
    a.query_drop("UNLOCK TABLES").unwrap();
    b.query_drop("DELETE FROM u").unwrap();

    // The privilege: SELECT alone is not enough.
    b.query_drop("CREATE USER lt IDENTIFIED BY 'pw'").unwrap();
    b.query_drop("GRANT SELECT ON l.* TO lt").unwrap();
    let opts = |user: &str| {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(s.port)
            .user(Some(user))
            .pass(Some("pw"))
            .db_name(Some("l"))
    };
    let mut u = mysql::Conn::new(opts("lt")).unwrap();
    assert_eq!(code(u.query_drop("LOCK TABLES t READ").unwrap_err()), 1044);
    b.query_drop("GRANT LOCK TABLES ON l.* TO lt").unwrap();
    let mut u = mysql::Conn::new(opts("lt")).unwrap();
    u.query_drop("LOCK TABLES t READ").unwrap();
    u.query_drop("UNLOCK TABLES").unwrap();
}

/// Window functions where MySQL 8.0 and MariaDB differ (the rest is in the conformance suite's
/// window.test): LAG/LEAD's default, PERCENT_RANK and CUME_DIST as whole doubles, MySQL's
/// error codes; and a window in a prepared statement run twice.
#[test]
fn window_functions_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE w").unwrap();
    c.query_drop("USE w").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30)")
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = c
        .query(
            "SELECT id, LAG(v, 1, -1) OVER (PARTITION BY g ORDER BY id), \
             LEAD(v, 2, 0) OVER (ORDER BY id) FROM t ORDER BY id",
        )
        .unwrap();
    assert_eq!(rows, vec![(1, -1, 30), (2, 10, 0), (3, -1, 0)]);
    let rows: Vec<(String, String)> = c
        .query("SELECT PERCENT_RANK() OVER (ORDER BY id), CUME_DIST() OVER (ORDER BY id) FROM t ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        vec![
            ("0".into(), "0.3333333333333333".into()),
            ("0.5".into(), "0.6666666666666666".into()),
            ("1".into(), "1".into())
        ]
    );
    for (sql, want) in [
        (
            "SELECT id FROM t WHERE ROW_NUMBER() OVER (ORDER BY id) > 1",
            3593,
        ),
        (
            "SELECT g FROM t GROUP BY g HAVING RANK() OVER (ORDER BY g) = 1",
            3593,
        ),
        ("SELECT SUM(ROW_NUMBER() OVER (ORDER BY id)) FROM t", 3593),
        ("SELECT NTILE(0) OVER (ORDER BY id) FROM t", 1210),
        ("SELECT RANK() OVER nope FROM t", 3579),
        (
            "SELECT RANK() OVER (w ORDER BY v) FROM t WINDOW w AS (ORDER BY id)",
            3583,
        ),
        (
            "SELECT RANK() OVER (w PARTITION BY v) FROM t WINDOW w AS (ORDER BY id)",
            3581,
        ),
        ("SELECT COUNT(DISTINCT v) OVER () FROM t", 1235),
    ] {
        assert_eq!(code(c.query_drop(sql).unwrap_err()), want, "{sql}");
    }
    // A prepared statement keeps its plan; the windows are computed again per execution.
    let st = c
        .prep("SELECT id, SUM(v) OVER (ORDER BY id) FROM t WHERE id >= ? ORDER BY id")
        .unwrap();
    let a: Vec<(i64, i64)> = c.exec(&st, (1,)).unwrap();
    assert_eq!(a, vec![(1, 10), (2, 30), (3, 60)]);
    let b: Vec<(i64, i64)> = c.exec(&st, (2,)).unwrap();
    assert_eq!(b, vec![(2, 20), (3, 50)]);
}

/// WITH RECURSIVE where MySQL 8.0 and MariaDB differ (the rest is in the conformance suite's
/// cte_recursive.test): cte_max_recursion_depth (3636) and a CTE without an anchor (3573).
#[test]
fn recursive_cte_limits() {
    let s = start();
    let mut c = connect(&s);
    let count = "WITH RECURSIVE n (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20) \
                 SELECT COUNT(*) FROM n";
    let n: Option<i64> = c.query_first(count).unwrap();
    assert_eq!(n, Some(20));
    c.query_drop("SET SESSION cte_max_recursion_depth = 10")
        .unwrap();
    match c.query_drop(count).unwrap_err() {
        mysql::Error::MySqlError(m) => {
            assert_eq!(m.code, 3636);
            assert!(m.message.contains("after 11 iterations"), "{}", m.message);
        }
        other => panic!("{other:?}"),
    }
    // The round that reads the last row (and adds none) counts too.
    c.query_drop("SET SESSION cte_max_recursion_depth = 19")
        .unwrap();
    assert_eq!(code(c.query_drop(count).unwrap_err()), 3636);
    c.query_drop("SET SESSION cte_max_recursion_depth = 20")
        .unwrap();
    let n: Option<i64> = c.query_first(count).unwrap();
    assert_eq!(n, Some(20));
    assert_eq!(
        code(
            c.query_drop("WITH RECURSIVE n (x) AS (SELECT x FROM n) SELECT x FROM n")
                .unwrap_err()
        ),
        3573
    );
    // Without RECURSIVE the name inside is another table (here, none).
    assert_eq!(
        code(
            c.query_drop("WITH n (x) AS (SELECT 1 UNION ALL SELECT x FROM n) SELECT x FROM n")
                .unwrap_err()
        ),
        1046
    );
}

/// time_zone as an offset from UTC: NOW() and CURRENT_TIMESTAMP follow it, UTC_TIMESTAMP() and
/// UNIX_TIMESTAMP() do not; TIMESTAMP columns are stored in UTC and shown in the session's zone
/// (keys included), DATETIME columns as written; a named zone is 1298 (no time zone tables).
#[test]
fn time_zones() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE tz").unwrap();
    c.query_drop("USE tz").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP NULL, dt DATETIME, \
         made TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, KEY k_ts (ts))",
    )
    .unwrap();
    c.query_drop("SET time_zone = '+08:00', timestamp = 1000000000")
        .unwrap();
    let row: Option<(String, String, i64, i64, String, String)> = c
        .query_first(
            "SELECT NOW(), UTC_TIMESTAMP(), UNIX_TIMESTAMP(), \
             UNIX_TIMESTAMP('2001-09-09 09:46:40'), FROM_UNIXTIME(1000000000), @@time_zone",
        )
        .unwrap();
    assert_eq!(
        row,
        Some((
            "2001-09-09 09:46:40".into(),
            "2001-09-09 01:46:40".into(),
            1000000000,
            1000000000,
            "2001-09-09 09:46:40".into(),
            "+08:00".into()
        ))
    );
    c.query_drop(
        "INSERT INTO t (id, ts, dt) VALUES (1, '2020-01-01 12:00:00', '2020-01-01 12:00:00')",
    )
    .unwrap();
    let at = |c: &mut mysql::Conn| -> Vec<(String, String, String)> {
        c.query("SELECT ts, dt, made FROM t").unwrap()
    };
    assert_eq!(
        at(&mut c),
        vec![(
            "2020-01-01 12:00:00".into(),
            "2020-01-01 12:00:00".into(),
            "2001-09-09 09:46:40".into()
        )]
    );
    c.query_drop("SET time_zone = '-05:30'").unwrap();
    assert_eq!(
        at(&mut c),
        vec![(
            "2019-12-31 22:30:00".into(),
            "2020-01-01 12:00:00".into(),
            "2001-09-08 20:16:40".into()
        )]
    );
    // The index on ts is searched with the value converted to UTC.
    let id: Option<i64> = c
        .query_first("SELECT id FROM t WHERE ts = '2019-12-31 22:30:00'")
        .unwrap();
    assert_eq!(id, Some(1));
    let st = c.prep("SELECT id FROM t WHERE ts = ?").unwrap();
    let id: Option<i64> = c.exec_first(&st, ("2019-12-31 22:30:00",)).unwrap();
    assert_eq!(id, Some(1));
    c.query_drop("SET time_zone = SYSTEM").unwrap();
    let id: Option<i64> = c.exec_first(&st, ("2020-01-01 04:00:00",)).unwrap();
    assert_eq!(id, Some(1));
    let zones: Option<(String, String)> = c
        .query_first("SELECT @@time_zone, @@system_time_zone")
        .unwrap();
    assert_eq!(zones, Some(("SYSTEM".into(), "UTC".into())));
    // Named zones, as MySQL with its time zone tables loaded: the offset of each instant
    // (summer and winter time), a time the clocks skipped stored as the end of the gap, one
    // they went through twice as the first.
    c.query_drop("SET time_zone = 'Europe/Paris', timestamp = 1719835200")
        .unwrap();
    c.query_drop(
        "INSERT INTO t (id, ts) VALUES (2, '2024-07-01 14:00:00'), (3, '2024-01-01 13:00:00'),          (4, '2024-03-31 02:30:00'), (5, '2024-10-27 02:30:00')",
    )
    .unwrap();
    let now: Option<(String, String)> = c.query_first("SELECT NOW(), @@time_zone").unwrap();
    assert_eq!(
        now,
        Some(("2024-07-01 14:00:00".into(), "Europe/Paris".into()))
    );
    let utc = |c: &mut mysql::Conn| -> Vec<(i64, String, i64)> {
        c.query("SELECT id, ts, UNIX_TIMESTAMP(ts) FROM t WHERE id > 1 ORDER BY id")
            .unwrap()
    };
    c.query_drop("SET time_zone = 'utc'").unwrap();
    assert_eq!(
        utc(&mut c),
        vec![
            (2, "2024-07-01 12:00:00".into(), 1719835200),
            (3, "2024-01-01 12:00:00".into(), 1704110400),
            (4, "2024-03-31 01:00:00".into(), 1711846800),
            (5, "2024-10-27 00:30:00".into(), 1729989000),
        ]
    );
    c.query_drop("SET time_zone = 'America/New_York'").unwrap();
    let local: Vec<(i64, String)> = c
        .query("SELECT id, ts FROM t WHERE id IN (2, 3) ORDER BY id")
        .unwrap();
    assert_eq!(
        local,
        vec![
            (2, "2024-07-01 08:00:00".into()),
            (3, "2024-01-01 07:00:00".into())
        ]
    );
    let converted: Option<(String, String, Option<String>, String)> = c
        .query_first(
            "SELECT CONVERT_TZ('2024-07-01 12:00:00', 'UTC', 'Asia/Kolkata'),              FROM_UNIXTIME(1704110400), CONVERT_TZ('2024-01-01 00:00:00', 'Nowhere/Zone',              'UTC'), CONVERT_TZ('2024-01-01 12:00:00', 'Europe/Paris', '+05:00')",
        )
        .unwrap();
    assert_eq!(
        converted,
        Some((
            "2024-07-01 17:30:00".into(),
            "2024-01-01 07:00:00".into(),
            None,
            "2024-01-01 16:00:00".into()
        ))
    );
    assert_eq!(
        code(c.query_drop("SET time_zone = 'Nowhere/Zone'").unwrap_err()),
        1298
    );
}

/// Compound INTERVAL units with a prepared statement's parameter as the value, and after other
/// parameters (the parser's rewrite keeps their positions).
#[test]
fn compound_interval_parameters() {
    let s = start();
    let mut c = connect(&s);
    let st = c
        .prep("SELECT CONCAT(?, 'x'), DATE_ADD(?, INTERVAL ? DAY_HOUR), ? - INTERVAL '1-1' YEAR_MONTH")
        .unwrap();
    let r: Option<(String, String, String)> = c
        .exec_first(&st, ("w", "2020-01-01 00:00:00", "2 3", "2020-03-31"))
        .unwrap();
    assert_eq!(
        r,
        Some((
            "wx".into(),
            "2020-01-03 03:00:00".into(),
            "2019-02-28".into()
        ))
    );
    // Not a unit outside INTERVAL: a qualified column of that name is a column.
    c.query_drop("CREATE DATABASE ci").unwrap();
    c.query_drop("CREATE TABLE ci.t (`day_hour` INT)").unwrap();
    c.query_drop("INSERT INTO ci.t VALUES (7)").unwrap();
    let v: Option<i64> = c.query_first("SELECT t.day_hour FROM ci.t AS t").unwrap();
    assert_eq!(v, Some(7));
}

/// Result values as each protocol sends them: integers, ZEROFILL, YEAR, BIT, strings in
/// utf8mb4 and in latin1 results, NULL; a selected column read again by ORDER BY or by another
/// select item keeps its value.
#[test]
fn result_values_in_text_and_binary_rows() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE r").unwrap();
    c.query_drop("USE r").unwrap();
    c.query_drop(
        "CREATE TABLE v (id INT PRIMARY KEY, z INT(5) ZEROFILL, y YEAR, b BIT(4), \
         s VARCHAR(10), n INT, u BIGINT UNSIGNED)",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO v VALUES (1, 42, 2024, b'101', 'héllo', -7, 18446744073709551615), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, 7, 1999, b'1111', 'abc', 0, 0)",
    )
    .unwrap();
    let sql = "SELECT z, y, b, s, n, u FROM v ORDER BY id";
    let text: Vec<mysql::Row> = c.query(sql).unwrap();
    let bin: Vec<mysql::Row> = c.exec(sql, ()).unwrap();
    use mysql::Value as V;
    let b = |s: &str| V::Bytes(s.as_bytes().to_vec());
    assert_eq!(
        text[0].clone().unwrap(),
        vec![
            b("00042"),
            b("2024"),
            V::Bytes(vec![5]),
            b("héllo"),
            b("-7"),
            b("18446744073709551615")
        ]
    );
    assert_eq!(
        bin[0].clone().unwrap(),
        vec![
            V::Int(42),
            V::Int(2024),
            V::Bytes(vec![5]),
            b("héllo"),
            V::Int(-7),
            V::UInt(18446744073709551615)
        ]
    );
    assert_eq!(text[1].clone().unwrap(), vec![V::NULL; 6]);
    assert_eq!(bin[1].clone().unwrap(), vec![V::NULL; 6]);
    assert_eq!(
        text[2].clone().unwrap(),
        vec![
            b("00007"),
            b("1999"),
            V::Bytes(vec![15]),
            b("abc"),
            b("0"),
            b("0")
        ]
    );
    // latin1 results: the string converted, the numbers unchanged.
    c.query_drop("SET character_set_results = latin1").unwrap();
    let latin: Vec<(Vec<u8>, i64)> = c.query("SELECT s, n FROM v WHERE id = 1").unwrap();
    assert_eq!(latin, vec![(b"h\xe9llo".to_vec(), -7)]);
    let latin: Vec<(Vec<u8>, i64)> = c.exec("SELECT s, n FROM v WHERE id = 1", ()).unwrap();
    assert_eq!(latin, vec![(b"h\xe9llo".to_vec(), -7)]);
    c.query_drop("SET character_set_results = utf8mb4").unwrap();
    // A column selected once and sorted by an expression over it; selected twice; grouped.
    let got: Vec<(Option<String>, i64)> = c
        .query("SELECT s, id FROM v ORDER BY CONCAT(s, 'x') DESC, id")
        .unwrap();
    assert_eq!(
        got,
        vec![
            (Some("héllo".into()), 1),
            (Some("abc".into()), 3),
            (None, 2)
        ]
    );
    let got: Vec<(String, String, String)> = c
        .query("SELECT s, s, UPPER(s) FROM v WHERE s IS NOT NULL ORDER BY s")
        .unwrap();
    assert_eq!(
        got,
        vec![
            ("abc".into(), "abc".into(), "ABC".into()),
            ("héllo".into(), "héllo".into(), "HÉLLO".into())
        ]
    );
    let got: Vec<(Option<String>, i64)> = c
        .query("SELECT s, COUNT(*) FROM v GROUP BY s ORDER BY s")
        .unwrap();
    assert_eq!(
        got,
        vec![
            (None, 1),
            (Some("abc".into()), 1),
            (Some("héllo".into()), 1)
        ]
    );
}

#[test]
fn charset_and_collation_of_expressions() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci")
        .unwrap();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (a VARCHAR(5) CHARACTER SET latin1, b INT)")
        .unwrap();
    c.query_drop("INSERT INTO d.t VALUES ('x', 1)").unwrap();
    let row: (String, String, String, String, String, String, String) = c
        .query_first(
            "SELECT CHARSET('a'), COLLATION('a'), COLLATION(a), CHARSET(a), COLLATION(b), \
             COLLATION('a' COLLATE utf8mb4_bin), CHARSET(_binary'x') FROM d.t",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        row,
        (
            "utf8mb4".into(),
            "utf8mb4_0900_ai_ci".into(),
            "latin1_swedish_ci".into(),
            "latin1".into(),
            "binary".into(),
            "utf8mb4_bin".into(),
            "binary".into()
        )
    );
}

#[test]
fn only_full_group_by_names_the_select_item() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE g (a INT, b INT, v DOUBLE)")
        .unwrap();
    let e = c
        .query_drop("SELECT a, 1, b, SUM(v) FROM g GROUP BY a")
        .unwrap_err();
    match e {
        mysql::Error::MySqlError(m) => {
            assert_eq!(m.code, 1055);
            assert_eq!(
                m.message,
                "Expression #3 of SELECT list is not in GROUP BY clause and contains \
                 nonaggregated column 'd.g.b' which is not functionally dependent on columns in \
                 GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = c.query_drop("SELECT PI(), a, SUM(v) FROM g").unwrap_err();
    match e {
        mysql::Error::MySqlError(m) => {
            assert_eq!(m.code, 1140);
            assert!(
                m.message.contains("expression #2 of SELECT list"),
                "{}",
                m.message
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A text-protocol row's values as the text the server sent ("NULL" for NULL).
fn texts(row: &mysql::Row) -> Vec<String> {
    (0..row.len())
        .map(|i| match row.as_ref(i) {
            Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(mysql::Value::NULL) => "NULL".into(),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn doubles_keep_mysql_fixed_decimals() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.x (d DOUBLE(10,2), e DOUBLE)")
        .unwrap();
    c.query_drop("INSERT INTO d.x VALUES (1, 3)").unwrap();
    // Text rows as MariaDB 10.11 (and MySQL 8.0) send them.
    let row: mysql::Row = c
        .query_first(
            "SELECT PI(), PI() * 2, 10 * PI() / 180, d * d, d / 3, -d, ABS(d), d + e, \
             d * 2.5, ROUND(e, 2), TRUNCATE(e, 3), ROUND(1.5e0), d - 1, d * 1.5e0 FROM d.x",
        )
        .unwrap()
        .unwrap();
    let got = texts(&row);
    assert_eq!(
        got,
        [
            "3.141593",
            "6.283185",
            "0.1745329252",
            "1.00",
            "0.333333",
            "-1.00",
            "1.00",
            "4",
            "2.50",
            "3.00",
            "3.000",
            "2",
            "0.00",
            "1.5"
        ]
    );
    let agg: mysql::Row = c
        .query_first("SELECT SUM(d), AVG(d), MAX(d), AVG(e) FROM d.x")
        .unwrap()
        .unwrap();
    let got = texts(&agg);
    assert_eq!(got, ["1.00", "1.000000", "1.00", "3"]);
}

#[test]
fn parameters_take_the_type_of_their_value() {
    let s = start();
    let mut c = connect(&s);
    // An integer parameter makes `? + 1` a BIGINT, a double a DOUBLE, a string a DOUBLE
    // (MySQL 8.0); the statement is planned again when the types change.
    let st = c.prep("SELECT ? + 1, ?").unwrap();
    let r: Option<(i64, i64)> = c.exec_first(&st, (2, 5)).unwrap();
    assert_eq!(r, Some((3, 5)));
    let r: Option<(f64, f64)> = c.exec_first(&st, (2.5, 1.25)).unwrap();
    assert_eq!(r, Some((3.5, 1.25)));
    let r: Option<(f64, String)> = c.exec_first(&st, ("7", "x")).unwrap();
    assert_eq!(r, Some((8.0, "x".to_string())));
    let r: Option<(i64, i64)> = c.exec_first(&st, (4, 4)).unwrap();
    assert_eq!(r, Some((5, 4)));
    // A string column compared with an integer parameter compares as numbers, as with an
    // integer literal.
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.s (id INT PRIMARY KEY, c VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO d.s VALUES (1, '05'), (2, '5'), (3, 'x')")
        .unwrap();
    let ids: Vec<i32> = c
        .exec("SELECT id FROM d.s WHERE c = ? ORDER BY id", (5,))
        .unwrap();
    assert_eq!(ids, vec![1, 2]);
    let ids: Vec<i32> = c
        .exec("SELECT id FROM d.s WHERE c = ? ORDER BY id", ("5",))
        .unwrap();
    assert_eq!(ids, vec![2]);
}

#[test]
fn extract_takes_compound_units() {
    let s = start();
    let mut c = connect(&s);
    let cases = [
        ("YEAR_MONTH", 201907i64),
        ("DAY_HOUR", 201),
        ("DAY_MINUTE", 20102),
        ("DAY_SECOND", 2010203),
        ("DAY_MICROSECOND", 2010203000004),
        ("HOUR_MINUTE", 102),
        ("HOUR_SECOND", 10203),
        ("HOUR_MICROSECOND", 10203000004),
        ("MINUTE_SECOND", 203),
        ("MINUTE_MICROSECOND", 203000004),
        ("second_microsecond", 3000004),
        ("MONTH", 7),
    ];
    for (unit, want) in cases {
        let got: Option<i64> = c
            .query_first(format!(
                "SELECT EXTRACT({unit} FROM '2019-07-02 01:02:03.000004')"
            ))
            .unwrap();
        assert_eq!(got, Some(want), "{unit}");
    }
    // A compound INTERVAL in the same statement still works.
    let d: Option<String> = c
        .query_first(
            "SELECT CONCAT(EXTRACT(DAY_HOUR FROM '2019-07-02 01:00:00'), ' ', \
             '2019-07-02 01:00:00' + INTERVAL '1 2' DAY_HOUR)",
        )
        .unwrap();
    assert_eq!(d.as_deref(), Some("201 2019-07-03 03:00:00"));
}

#[test]
fn order_by_limit_keeps_only_the_first_rows_in_order() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE o (id INT PRIMARY KEY, v INT, w VARCHAR(8))")
        .unwrap();
    let mut q = String::from("INSERT INTO o VALUES ");
    for i in 1..=5000 {
        if i > 1 {
            q.push(',');
        }
        q.push_str(&format!("({i}, {}, 'w{}')", i % 7, i % 13));
    }
    c.query_drop(q).unwrap();
    // Ties keep the order rows are read in (the primary key here), as a stable sort would.
    let ids: Vec<i32> = c
        .query("SELECT id FROM o ORDER BY v LIMIT 10 OFFSET 5")
        .unwrap();
    assert_eq!(ids, (6..16).map(|k| k * 7).collect::<Vec<i32>>());
    let ids: Vec<i32> = c
        .query("SELECT id FROM o ORDER BY v DESC, w LIMIT 3")
        .unwrap();
    let mut all: Vec<(i32, i32, String)> = (1..=5000)
        .map(|i| (i, i % 7, format!("w{}", i % 13)))
        .collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
    assert_eq!(ids, all.iter().take(3).map(|r| r.0).collect::<Vec<_>>());
    let none: Vec<i32> = c.query("SELECT id FROM o ORDER BY v LIMIT 0").unwrap();
    assert!(none.is_empty());
    let n: Vec<i32> = c
        .query("SELECT id FROM o ORDER BY v LIMIT 100000 OFFSET 4998")
        .unwrap();
    assert_eq!(n.len(), 2);
}

#[test]
fn range_frames_with_offsets() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE w").unwrap();
    c.query_drop("USE w").unwrap();
    c.query_drop("CREATE TABLE r (id INT PRIMARY KEY, g INT, x INT, d DATE, f DOUBLE)")
        .unwrap();
    c.query_drop(
        "INSERT INTO r VALUES (1,1,1,'2024-01-01',0.5),(2,1,2,'2024-01-02',1.5), \
         (3,1,4,'2024-01-05',1.75),(4,1,5,'2024-01-06',NULL),(5,1,NULL,NULL,3.0), \
         (6,2,10,'2024-02-01',2.25),(7,2,13,'2024-02-10',2.75),(8,2,NULL,'2024-02-11',4.5), \
         (9,1,7,'2024-01-09',5.5)",
    )
    .unwrap();
    // Results as MariaDB 10.11 gives them (it has no INTERVAL offsets: column c is MySQL's
    // rule, the dates within 3 days before to 1 day after).
    let rows: Vec<mysql::Row> = c
        .query(
            "SELECT id, \
             SUM(x) OVER (PARTITION BY g ORDER BY x RANGE BETWEEN 2 PRECEDING AND CURRENT ROW), \
             COUNT(*) OVER (ORDER BY x DESC RANGE BETWEEN 1 PRECEDING AND 3 FOLLOWING), \
             COUNT(*) OVER (ORDER BY d RANGE BETWEEN INTERVAL 3 DAY PRECEDING \
                            AND INTERVAL 1 DAY FOLLOWING), \
             SUM(f) OVER (ORDER BY f RANGE BETWEEN 1.0 PRECEDING AND 0.5 FOLLOWING), \
             COUNT(*) OVER (PARTITION BY g ORDER BY x RANGE BETWEEN 1 FOLLOWING AND 5 FOLLOWING), \
             MAX(x) OVER (ORDER BY x DESC RANGE BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) \
             FROM r ORDER BY id",
        )
        .unwrap();
    let got: Vec<String> = rows.iter().map(|r| texts(r).join(" ")).collect();
    assert_eq!(
        got,
        [
            "1 1 2 2 0.5 3 13",
            "2 3 2 2 3.75 3 13",
            "3 6 4 3 5.5 2 13",
            "4 9 3 2 NULL 1 13",
            "5 NULL 2 1 8 1 13",
            "6 10 2 1 8.25 1 13",
            "7 13 2 2 9.75 0 NULL",
            "8 NULL 2 2 4.5 1 13",
            "9 12 3 2 10 0 13",
        ]
    );
    // RANGE with an offset needs one numeric or temporal ORDER BY value.
    for q in [
        "SELECT SUM(x) OVER (ORDER BY x, id RANGE 2 PRECEDING) FROM r",
        "SELECT SUM(x) OVER (RANGE 2 PRECEDING) FROM r",
    ] {
        match c.query_drop(q).unwrap_err() {
            mysql::Error::MySqlError(e) => assert_eq!(e.code, 3587, "{q}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn latin1_values_show_their_own_bytes() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("SET NAMES utf8mb4").unwrap();
    c.query_drop("CREATE DATABASE l").unwrap();
    c.query_drop(
        "CREATE TABLE l.t (c VARCHAR(10) CHARACTER SET latin1, \
         u VARCHAR(10) CHARACTER SET utf8mb4)",
    )
    .unwrap();
    c.query_drop("INSERT INTO l.t VALUES ('é', 'é')").unwrap();
    // As MariaDB 10.11 (and MySQL 8.0) answer.
    let row: mysql::Row = c
        .query_first(
            "SELECT LENGTH(c), HEX(c), CHAR_LENGTH(c), LENGTH(CONVERT('é' USING latin1)), \
             CHARSET(CONVERT('a' USING latin1)), HEX(CONVERT('é' USING latin1)), MD5(c), \
             CRC32(c), ASCII(c), ORD(c), TO_BASE64(c), BIT_LENGTH(c), LENGTH(u), HEX(u), \
             ORD(u) FROM l.t",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        texts(&row),
        [
            "1",
            "E9",
            "1",
            "1",
            "latin1",
            "E9",
            "3406877694691ddd1dfb0aca54681407",
            "198489425",
            "233",
            "233",
            "6Q==",
            "8",
            "2",
            "C3A9",
            "50089"
        ]
    );
    match c.query_drop("SELECT CONVERT('a' USING nope)").unwrap_err() {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1115),
        other => panic!("{other:?}"),
    }
}

#[test]
fn locking_reads_nowait_and_skip_locked() {
    let s = start();
    let mut a = connect(&s);
    let mut b = connect(&s);
    a.query_drop("CREATE DATABASE q").unwrap();
    a.query_drop("CREATE TABLE q.jobs (id INT PRIMARY KEY, state INT, KEY st (state))")
        .unwrap();
    a.query_drop("INSERT INTO q.jobs VALUES (1, 0), (2, 0), (3, 0), (4, 1)")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    let got: Vec<i32> = a
        .query("SELECT id FROM q.jobs WHERE state = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert_eq!(got, vec![1]);
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 30")
        .unwrap();
    b.query_drop("BEGIN").unwrap();
    // A second worker takes the next free job instead of waiting for the first one's.
    let got: Vec<i32> = b
        .query("SELECT id FROM q.jobs WHERE state = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert_eq!(got, vec![2]);
    let got: Vec<i32> = b
        .query("SELECT id FROM q.jobs FOR SHARE SKIP LOCKED")
        .unwrap();
    assert_eq!(got, vec![2, 3, 4]);
    let got: Vec<i32> = b
        .query("SELECT id FROM q.jobs WHERE id = 1 FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert!(got.is_empty());
    // NOWAIT: 3572 at once (not after innodb_lock_wait_timeout), the transaction goes on.
    let t = std::time::Instant::now();
    for q in [
        "SELECT id FROM q.jobs WHERE id = 1 FOR UPDATE NOWAIT",
        "SELECT id FROM q.jobs FOR SHARE NOWAIT",
    ] {
        match b.query_drop(q).unwrap_err() {
            mysql::Error::MySqlError(e) => {
                assert_eq!(e.code, 3572, "{q}");
                assert_eq!(
                    e.message,
                    "Statement aborted because lock(s) could not be acquired immediately and \
                     NOWAIT is set."
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    let got: Vec<i32> = b
        .query("SELECT id FROM q.jobs WHERE id = 3 FOR UPDATE NOWAIT")
        .unwrap();
    assert_eq!(got, vec![3]);
    b.query_drop("COMMIT").unwrap();
    a.query_drop("COMMIT").unwrap();
    // The policy is the statement's: a plain locking read waits again afterwards.
    let got: Vec<i32> = b.query("SELECT id FROM q.jobs FOR UPDATE").unwrap();
    assert_eq!(got, vec![1, 2, 3, 4]);
}

/// A multiple-table UPDATE or DELETE locks the rows it reads (exec/multi.rs M1): another
/// transaction's lock on a row of a table it only reads makes it wait, and the counters
/// MySQL keeps for it grow. The rows of a table it only reads are share-locked, as InnoDB
/// does: another reader's FOR SHARE passes, a writer waits. SELECT ... FOR UPDATE OF t locks
/// only t's rows.
#[test]
fn multi_table_changes_lock_the_rows_they_read() {
    let s = start();
    let mut a = connect(&s);
    a.query_drop("CREATE DATABASE m").unwrap();
    a.query_drop("USE m").unwrap();
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    a.query_drop("CREATE TABLE r (id INT PRIMARY KEY, w INT)")
        .unwrap();
    a.query_drop("INSERT INTO t VALUES (1, 0), (2, 0)").unwrap();
    a.query_drop("INSERT INTO r VALUES (1, 5), (2, 6)").unwrap();
    let mut b = connect(&s);
    b.query_drop("USE m").unwrap();
    b.query_drop("SET innodb_lock_wait_timeout = 1").unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SELECT * FROM r WHERE id = 1 FOR UPDATE")
        .unwrap();
    let update = "UPDATE t JOIN r ON r.id = t.id SET t.v = r.w";
    assert_eq!(code(b.query_drop(update).unwrap_err()), 1205);
    assert_eq!(
        code(
            b.query_drop("DELETE t FROM t JOIN r ON r.id = t.id")
                .unwrap_err()
        ),
        1205
    );
    a.query_drop("COMMIT").unwrap();
    let before = common::global_status(&mut b, "Com_update_multi");
    b.query_drop(update).unwrap();
    assert_eq!(b.affected_rows(), 2);
    assert_eq!(
        common::global_status(&mut b, "Com_update_multi"),
        before + 1
    );
    let rows: Vec<(i64, i64)> = b.query("SELECT id, v FROM t ORDER BY id").unwrap();
    assert_eq!(rows, vec![(1, 5), (2, 6)]);
    // EXPLAIN shows the join as it is read: r looked up by t's key.
    let plan: Vec<(String, String)> = b
        .query_map(format!("EXPLAIN {update}"), |r: mysql::Row| {
            (r.get(2).unwrap(), r.get(4).unwrap())
        })
        .unwrap();
    assert_eq!(
        plan,
        vec![("t".into(), "ALL".into()), ("r".into(), "eq_ref".into())]
    );
    a.query_drop("BEGIN").unwrap();
    a.query_drop(update).unwrap();
    let shared: Vec<i64> = b.query("SELECT w FROM r WHERE id = 1 FOR SHARE").unwrap();
    assert_eq!(shared, vec![5]);
    assert_eq!(
        code(b.query_drop("UPDATE r SET w = 0 WHERE id = 1").unwrap_err()),
        1205
    );
    assert_eq!(
        code(
            b.query_drop("SELECT v FROM t WHERE id = 1 FOR SHARE")
                .unwrap_err()
        ),
        1205
    );
    a.query_drop("ROLLBACK").unwrap();
    // FOR UPDATE OF / FOR SHARE OF: each table as its clause says, the others not locked.
    a.query_drop("BEGIN").unwrap();
    let got: Vec<(i64, i64)> = a
        .query("SELECT t.id, r.w FROM t JOIN r ON r.id = t.id WHERE t.id = 1 FOR UPDATE OF t")
        .unwrap();
    assert_eq!(got, vec![(1, 5)]);
    b.query_drop("UPDATE r SET w = 7 WHERE id = 1").unwrap();
    assert_eq!(
        code(b.query_drop("UPDATE t SET v = 0 WHERE id = 1").unwrap_err()),
        1205
    );
    a.query_drop("ROLLBACK").unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SELECT * FROM t JOIN r ON r.id = t.id FOR SHARE OF t FOR UPDATE OF r")
        .unwrap();
    b.query_drop("SELECT * FROM t FOR SHARE").unwrap();
    assert_eq!(
        code(
            b.query_drop("SELECT * FROM r WHERE id = 2 FOR SHARE")
                .unwrap_err()
        ),
        1205
    );
    a.query_drop("ROLLBACK").unwrap();
    for (sql, want) in [
        ("SELECT * FROM t FOR UPDATE OF nosuch", 3568),
        ("SELECT * FROM t FOR UPDATE OF t FOR SHARE OF t", 3569),
    ] {
        assert_eq!(code(a.query_drop(sql).unwrap_err()), want, "{sql}");
    }
}

/// WITH ROLLUP's MySQL 8.0 forms MariaDB lacks (the rest is in conformance/rollup.test):
/// GROUPING() and ORDER BY over the super-aggregate rows; ANY_VALUE is exempt from
/// ONLY_FULL_GROUP_BY.
#[test]
fn rollup_with_grouping_and_order_by() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE r").unwrap();
    c.query_drop("USE r").unwrap();
    c.query_drop("CREATE TABLE s (y INT, c VARCHAR(3), p INT)")
        .unwrap();
    c.query_drop(
        "INSERT INTO s VALUES (2020, 'fi', 10), (2020, 'fi', 20), (2020, 'in', 5), \
         (2021, 'fi', 7), (NULL, 'us', 1)",
    )
    .unwrap();
    let rows = common::text_rows(
        &mut c,
        "SELECT y, c, SUM(p), GROUPING(y), GROUPING(c), GROUPING(y, c) FROM s \
         GROUP BY y, c WITH ROLLUP",
    );
    assert_eq!(
        rows,
        [
            "NULL,us,1,0,0,0",
            "NULL,NULL,1,0,1,1",
            "2020,fi,30,0,0,0",
            "2020,in,5,0,0,0",
            "2020,NULL,35,0,1,1",
            "2021,fi,7,0,0,0",
            "2021,NULL,7,0,1,1",
            "NULL,NULL,43,1,1,3",
        ]
    );
    // The grand total told from a NULL key by GROUPING(), and ORDER BY over all rows.
    let rows = common::text_rows(
        &mut c,
        "SELECT IF(GROUPING(y), 'total', y) AS yy, SUM(p) AS t FROM s GROUP BY y WITH ROLLUP \
         ORDER BY t DESC, yy",
    );
    assert_eq!(rows, ["total,43", "2020,35", "2021,7", "NULL,1"]);
    let rows = common::text_rows(
        &mut c,
        "SELECT ANY_VALUE(c), y FROM s GROUP BY y ORDER BY y",
    );
    assert_eq!(rows.len(), 3);
    assert_eq!(
        code(c.query_drop("SELECT c, y FROM s GROUP BY y").unwrap_err()),
        1055
    );
    assert_eq!(
        code(
            c.query_drop("SELECT y, GROUPING(y, c) FROM s GROUP BY y WITH ROLLUP")
                .unwrap_err()
        ),
        3602
    );
}

/// Views from a real client: definitions survive a restart, SHOW CREATE VIEW gives MySQL's
/// form, DROP TABLE/VIEW errors are MySQL's (1051, 1347), a view merged into the query uses
/// the base table's index (EXPLAIN), a prepared statement follows a redefined view, LOCK
/// TABLES of a view locks what it reads, and DROP DATABASE drops the views.
#[test]
fn views_persist_and_behave_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY (k))",
        "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
        "CREATE VIEW v (ident, kk) AS SELECT id, k FROM t WHERE k > 10 WITH CHECK OPTION",
    ] {
        c.query_drop(sql).unwrap();
    }
    let shown: (String, String, String, String) =
        c.query_first("SHOW CREATE VIEW v").unwrap().unwrap();
    assert_eq!(
        shown.1,
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `v` \
         (`ident`,`kk`) AS SELECT id, k FROM t WHERE k > 10 WITH CASCADED CHECK OPTION"
    );
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    c.query_drop("USE d").unwrap();
    let rows: Vec<(i64, i64)> = c.query("SELECT ident, kk FROM v ORDER BY ident").unwrap();
    assert_eq!(rows, vec![(2, 20), (3, 30)]);
    let plan: Vec<mysql::Row> = c.query("EXPLAIN SELECT kk FROM v WHERE kk = 30").unwrap();
    let table: String = plan[0].get("table").unwrap();
    let key: Option<String> = plan[0].get("key").unwrap();
    assert_eq!((table.as_str(), key.as_deref()), ("t", Some("k")));
    assert_eq!(code(c.query_drop("DROP TABLE v").unwrap_err()), 1051);
    assert_eq!(code(c.query_drop("DROP VIEW t").unwrap_err()), 1347);
    assert_eq!(code(c.query_drop("DROP VIEW nosuch, v").unwrap_err()), 1051);
    assert_eq!(code(c.query_drop("SHOW CREATE VIEW t").unwrap_err()), 1347);
    // A prepared statement reads the view as it is defined when it runs.
    let sel = c.prep("SELECT COUNT(*) FROM v WHERE ident > ?").unwrap();
    let n: i64 = c.exec_first(&sel, (0,)).unwrap().unwrap();
    assert_eq!(n, 2);
    c.query_drop("CREATE OR REPLACE VIEW v (ident, kk) AS SELECT id, k FROM t")
        .unwrap();
    let n: i64 = c.exec_first(&sel, (0,)).unwrap().unwrap();
    assert_eq!(n, 3);
    // A prepared UPDATE through a view changes the rows the view shows when it runs.
    c.query_drop("CREATE VIEW small AS SELECT id, k FROM t WHERE k < 25")
        .unwrap();
    let upd = c.prep("UPDATE small SET k = k + ?").unwrap();
    c.exec_drop(&upd, (1,)).unwrap();
    assert_eq!(c.affected_rows(), 2);
    c.query_drop("CREATE OR REPLACE VIEW small AS SELECT id, k FROM t WHERE k > 25")
        .unwrap();
    c.exec_drop(&upd, (100,)).unwrap();
    assert_eq!(c.affected_rows(), 1);
    let ks: Vec<i64> = c.query("SELECT k FROM t ORDER BY id").unwrap();
    assert_eq!(ks, vec![11, 21, 130]);
    // LOCK TABLES of a view: the view and its table may be read, nothing else.
    c.query_drop("CREATE TABLE other (x INT)").unwrap();
    c.query_drop("LOCK TABLES v READ").unwrap();
    let n: i64 = c.query_first("SELECT COUNT(*) FROM v").unwrap().unwrap();
    assert_eq!(n, 3);
    assert_eq!(code(c.query_drop("SELECT * FROM other").unwrap_err()), 1100);
    c.query_drop("UNLOCK TABLES").unwrap();
    // A view's `*` stands for the columns its table had when it was created (V5): the view
    // keeps them when the table gains one, and SHOW CREATE VIEW writes them out.
    c.query_drop("CREATE VIEW star AS SELECT *, k * 2 AS k2 FROM t WHERE k > 20")
        .unwrap();
    let shown: (String, String, String, String) =
        c.query_first("SHOW CREATE VIEW star").unwrap().unwrap();
    assert!(
        shown.1.ends_with(
            "AS SELECT `t`.`id` AS `id`,`t`.`k` AS `k`, k * 2 AS k2 FROM t WHERE k > 20"
        ),
        "{}",
        shown.1
    );
    c.query_drop("ALTER TABLE t ADD COLUMN extra INT DEFAULT 7")
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = c.query("SELECT * FROM star").unwrap();
    assert_eq!(rows, vec![(2, 21, 42), (3, 130, 260)]);
    c.query_drop("ALTER TABLE t DROP COLUMN k").unwrap();
    assert_eq!(code(c.query_drop("SELECT * FROM star").unwrap_err()), 1356);
    c.query_drop("DROP DATABASE d").unwrap();
    c.query_drop("CREATE DATABASE d").unwrap();
    assert_eq!(code(c.query_drop("SELECT * FROM d.v").unwrap_err()), 1146);
    let views: i64 = c
        .query_first("SELECT COUNT(*) FROM information_schema.views")
        .unwrap()
        .unwrap();
    assert_eq!(views, 0);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// CHECK constraints as MySQL 8.0.16+ has them: named `<table>_chk_<n>` unless named, tested
/// on INSERT, UPDATE (one or several tables), ON DUPLICATE KEY UPDATE and REPLACE (3819, a
/// warning with IGNORE, NULL passes), NOT ENFORCED ones never; refused when they read what a
/// row alone does not decide; ALTER TABLE adds them against the rows there, drops them, and
/// keeps the columns they read; they survive a restart and SHOW CREATE TABLE round-trips.
#[test]
fn check_constraints_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT CHECK (a > 0), b INT, \
         CONSTRAINT b_pos CHECK (b >= 0), CHECK (a < b) NOT ENFORCED)",
        "INSERT INTO t VALUES (1, 5, 10), (2, NULL, NULL), (3, 50, 10)",
    ] {
        c.query_drop(sql).unwrap();
    }
    let names: Vec<(String, String)> = c
        .query(
            "SELECT constraint_name, check_clause FROM information_schema.check_constraints \
             WHERE constraint_schema = 'd' ORDER BY constraint_name",
        )
        .unwrap();
    assert_eq!(
        names,
        vec![
            ("b_pos".into(), "(`b` >= 0)".into()),
            ("t_chk_1".into(), "(`a` > 0)".into()),
            ("t_chk_2".into(), "(`a` < `b`)".into()),
        ]
    );
    let violated = |c: &mut mysql::Conn, sql: &str| match c.query_drop(sql) {
        Err(mysql::Error::MySqlError(e)) => (e.code, e.message),
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(
        violated(&mut c, "INSERT INTO t VALUES (4, 0, 1)"),
        (3819, "Check constraint 't_chk_1' is violated.".into())
    );
    assert_eq!(violated(&mut c, "UPDATE t SET b = -1 WHERE id = 1").0, 3819);
    assert_eq!(
        violated(
            &mut c,
            "INSERT INTO t VALUES (1, 1, 1) ON DUPLICATE KEY UPDATE a = -1"
        )
        .0,
        3819
    );
    assert_eq!(violated(&mut c, "REPLACE INTO t VALUES (1, -1, 1)").0, 3819);
    c.query_drop("INSERT IGNORE INTO t VALUES (5, -1, 1), (6, 1, 1)")
        .unwrap();
    let warnings: Vec<(String, u16)> = c
        .query("SHOW WARNINGS")
        .unwrap()
        .into_iter()
        .map(|(l, code, _): (String, u16, String)| (l, code))
        .collect();
    assert_eq!(warnings, vec![("Warning".to_string(), 3819)]);
    c.query_drop("UPDATE IGNORE t SET a = a - 5").unwrap();
    let rows: Vec<(i64, Option<i64>)> = c.query("SELECT id, a FROM t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![(1, Some(5)), (2, None), (3, Some(45)), (6, Some(1))]
    );
    c.query_drop("CREATE TABLE u (id INT PRIMARY KEY, w INT)")
        .unwrap();
    c.query_drop("INSERT INTO u VALUES (1, -3)").unwrap();
    assert_eq!(
        violated(&mut c, "UPDATE t JOIN u USING (id) SET t.a = u.w").0,
        3819
    );
    for (sql, code) in [
        ("CREATE TABLE x (p INT CHECK (q > 0), q INT)", 3813),
        ("CREATE TABLE x (p INT, CHECK (p > RAND()))", 3814),
        ("CREATE TABLE x (p INT, CHECK (p > (SELECT 1)))", 3815),
        ("CREATE TABLE x (p INT, CHECK (p > @v))", 3816),
        (
            "CREATE TABLE x (p INT AUTO_INCREMENT PRIMARY KEY, CHECK (p > 0))",
            3818,
        ),
        ("CREATE TABLE x (p INT, CHECK (z > 0))", 3820),
        (
            "CREATE TABLE x (p INT, CONSTRAINT b_pos CHECK (p > 0))",
            3822,
        ),
        ("ALTER TABLE t ADD CONSTRAINT small CHECK (a < 10)", 3819),
        ("ALTER TABLE t DROP COLUMN b", 3959),
        ("ALTER TABLE t RENAME COLUMN a TO aa", 3959),
        ("ALTER TABLE t DROP CONSTRAINT nosuch", 3940),
        ("ALTER TABLE t DROP CHECK nosuch", 3821),
    ] {
        assert_eq!(violated(&mut c, sql).0, code, "{sql}");
    }
    // ALTER CHECK / ALTER CONSTRAINT ... [NOT] ENFORCED: enforcing again tests every row.
    c.query_drop("ALTER TABLE t ALTER CHECK b_pos NOT ENFORCED")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (7, 1, -7)").unwrap();
    assert_eq!(
        violated(&mut c, "ALTER TABLE t ALTER CONSTRAINT b_pos ENFORCED").0,
        3819
    );
    assert_eq!(
        violated(&mut c, "ALTER TABLE t ALTER CHECK nosuch ENFORCED").0,
        3821
    );
    c.query_drop("DELETE FROM t WHERE id = 7").unwrap();
    c.query_drop("ALTER TABLE t ALTER CONSTRAINT b_pos ENFORCED")
        .unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO t VALUES (7, 1, -7)").0, 3819);
    c.query_drop("ALTER TABLE t ADD CONSTRAINT small CHECK (a < 100), DROP CHECK b_pos")
        .unwrap();
    c.query_drop("ALTER TABLE t RENAME COLUMN id TO ident")
        .unwrap();
    // A CHECK (and a key) written with ADD / MODIFY COLUMN is added with the column.
    c.query_drop("ALTER TABLE u ADD COLUMN z INT UNIQUE CHECK (z > 0)")
        .unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO u VALUES (2, 1, 0)").0, 3819);
    c.query_drop("INSERT INTO u VALUES (2, 1, 1)").unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO u VALUES (3, 1, 1)").0, 1062);
    c.query_drop("ALTER TABLE u MODIFY w INT CHECK (w < 50)")
        .unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO u VALUES (4, 60, 4)").0, 3819);
    c.query_drop("INSERT INTO t VALUES (7, 1, -1)").unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO t VALUES (8, 100, 1)").0, 3819);
    c.query_drop("CREATE TABLE t2 LIKE t").unwrap();
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE t2").unwrap().unwrap();
    assert!(
        shown.contains("CONSTRAINT `t2_chk_1` CHECK ((`a` > 0)),\n  CONSTRAINT `t2_chk_2` CHECK ((`a` < `b`)) /*!80016 NOT ENFORCED */,\n  CONSTRAINT `t2_chk_3` CHECK ((`a` < 100))\n"),
        "{shown}"
    );
    // SHOW CREATE TABLE's text creates the same table; the constraints survive a restart.
    c.query_drop("DROP TABLE t2").unwrap();
    c.query_drop(shown.replace("`t2`", "`t3`").replace("t2_chk", "t3_chk"))
        .unwrap();
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    c.query_drop("USE d").unwrap();
    assert_eq!(violated(&mut c, "INSERT INTO t3 VALUES (1, 0, 5)").0, 3819);
    c.query_drop("INSERT INTO t3 VALUES (1, 9, 5)").unwrap();
    assert_eq!(
        violated(&mut c, "UPDATE t SET a = 0 WHERE ident = 1").0,
        3819
    );
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// FOREIGN KEY constraints where MySQL 8.0's answers are its own (the conformance file
/// foreign_keys has the rest, recorded from MariaDB): the DDL errors, the parent row a child
/// row's writer holds locked, information_schema, and the definitions across a restart and
/// through SHOW CREATE TABLE.
#[test]
fn foreign_keys_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10), other INT, KEY (other))",
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) \
         ON DELETE CASCADE)",
        "INSERT INTO p VALUES (1, 'one', 1), (2, 'two', 2)",
        "INSERT INTO c VALUES (10, 1)",
    ] {
        c.query_drop(sql).unwrap();
    }
    let err = |c: &mut mysql::Conn, sql: &str| code(c.query_drop(sql).unwrap_err());
    for (sql, want) in [
        ("DROP TABLE p", 3730),
        ("TRUNCATE TABLE p", 1701),
        ("ALTER TABLE c DROP COLUMN pid", 1828),
        ("ALTER TABLE p DROP COLUMN id", 1829),
        ("DROP INDEX pid ON c", 1553),
        (
            "CREATE TABLE x (a INT, FOREIGN KEY (a) REFERENCES nosuch (id))",
            1824,
        ),
        (
            "CREATE TABLE x (a VARCHAR(5), FOREIGN KEY (a) REFERENCES p (id))",
            3780,
        ),
        (
            "CREATE TABLE x (a INT, FOREIGN KEY (a) REFERENCES p (nocol))",
            3734,
        ),
        (
            "CREATE TABLE x (a INT NOT NULL, FOREIGN KEY (a) REFERENCES p (id) ON DELETE SET NULL)",
            1830,
        ),
        (
            "CREATE TABLE x (a VARCHAR(10), FOREIGN KEY (a) REFERENCES p (code))",
            1822,
        ),
        (
            "CREATE TABLE x (a INT, CONSTRAINT c_ibfk_1 FOREIGN KEY (a) REFERENCES p (id))",
            1826,
        ),
        (
            "CREATE TABLE x (a INT, FOREIGN KEY (a) REFERENCES p (id) ON DELETE SET DEFAULT)",
            1215,
        ),
        ("ALTER TABLE c DROP FOREIGN KEY nosuch", 1091),
    ] {
        assert_eq!(err(&mut c, sql), want, "{sql}");
    }
    // A secondary index of the parent serves as well as its primary key.
    c.query_drop("CREATE TABLE by_other (o INT, FOREIGN KEY (o) REFERENCES p (other))")
        .unwrap();
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE c").unwrap().unwrap();
    assert!(
        shown.contains(
            "  KEY `pid` (`pid`),\n  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE\n"
        ),
        "{shown}"
    );
    let rules: Vec<(String, String, String, String)> = c
        .query(
            "SELECT constraint_name, unique_constraint_name, update_rule, delete_rule \
             FROM information_schema.referential_constraints ORDER BY constraint_name",
        )
        .unwrap();
    assert_eq!(
        rules,
        vec![
            (
                "by_other_ibfk_1".into(),
                "other".into(),
                "NO ACTION".into(),
                "NO ACTION".into()
            ),
            (
                "c_ibfk_1".into(),
                "PRIMARY".into(),
                "NO ACTION".into(),
                "CASCADE".into()
            ),
        ]
    );
    // A referenced table or column renamed: its children follow (fk.rs F5).
    let references = |c: &mut mysql::Conn| -> String {
        let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE c").unwrap().unwrap();
        let at = shown.find("REFERENCES").unwrap();
        shown[at..].lines().next().unwrap().to_string()
    };
    c.query_drop("RENAME TABLE p TO p2").unwrap();
    assert_eq!(
        references(&mut c),
        "REFERENCES `p2` (`id`) ON DELETE CASCADE"
    );
    c.query_drop("ALTER TABLE p2 RENAME COLUMN id TO pk, RENAME TO p")
        .unwrap();
    assert_eq!(
        references(&mut c),
        "REFERENCES `p` (`pk`) ON DELETE CASCADE"
    );
    assert_eq!(err(&mut c, "INSERT INTO c VALUES (13, 9)"), 1452);
    c.query_drop("ALTER TABLE p CHANGE pk id INT").unwrap();
    assert_eq!(
        references(&mut c),
        "REFERENCES `p` (`id`) ON DELETE CASCADE"
    );
    // The writer of a child row holds its parent row: deleting it waits.
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO c VALUES (11, 2)").unwrap();
    let mut other = connect(&s);
    other
        .query_drop("SET innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(err(&mut other, "DELETE FROM d.p WHERE id = 2"), 1205);
    c.query_drop("COMMIT").unwrap();
    other.query_drop("DELETE FROM d.p WHERE id = 2").unwrap();
    let left: Vec<i64> = c.query("SELECT id FROM c ORDER BY id").unwrap();
    assert_eq!(left, vec![10]);
    // The constraint survives a restart, and SHOW CREATE TABLE's text makes it again.
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    c.query_drop("USE d").unwrap();
    assert_eq!(err(&mut c, "INSERT INTO c VALUES (12, 9)"), 1452);
    c.query_drop("DROP TABLE c").unwrap();
    c.query_drop(&shown).unwrap();
    assert_eq!(err(&mut c, "INSERT INTO c VALUES (12, 9)"), 1452);
    c.query_drop("INSERT INTO c VALUES (12, 1)").unwrap();
    c.query_drop("DELETE FROM p WHERE id = 1").unwrap();
    let n: i64 = c.query_first("SELECT COUNT(*) FROM c").unwrap().unwrap();
    assert_eq!(n, 0);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Generated columns where MySQL 8.0's answers are its own (the conformance file
/// generated_columns has the rest): the value a statement may not give one (3105, and the
/// warning that lets mariadb-dump's output load outside strict mode), the DDL errors, SHOW
/// CREATE TABLE's text and information_schema's GENERATION_EXPRESSION, a restart.
#[test]
fn generated_columns_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, s INT AS (a * 2), \
         st INT GENERATED ALWAYS AS (s + 1) STORED NOT NULL, KEY (s))",
        "INSERT INTO t (id, a) VALUES (1, 1), (2, 5)",
        "CREATE TABLE u (id INT PRIMARY KEY, x INT)",
        "INSERT INTO u VALUES (1, 7)",
    ] {
        c.query_drop(sql).unwrap();
    }
    let err = |c: &mut mysql::Conn, sql: &str| code(c.query_drop(sql).unwrap_err());
    for (sql, want) in [
        ("INSERT INTO t VALUES (3, 1, 2, DEFAULT)", 3105),
        ("INSERT INTO t (id, a, s) SELECT 3, 1, 2", 3105),
        ("UPDATE t SET s = 1", 3105),
        (
            "INSERT INTO t (id, a) VALUES (1, 1) ON DUPLICATE KEY UPDATE st = 1",
            3105,
        ),
        ("UPDATE t JOIN u USING (id) SET t.s = u.x", 3105),
        ("INSERT INTO t (id, a) VALUES (3, NULL)", 1048),
        (
            "CREATE TABLE x (a INT, b INT AS (c + 1), c INT AS (a))",
            3107,
        ),
        ("CREATE TABLE x (a INT, b INT AS (RAND()))", 3102),
        ("CREATE TABLE x (a INT, b INT AS (@v))", 3102),
        (
            "CREATE TABLE x (a INT AUTO_INCREMENT PRIMARY KEY, b INT AS (a + 1))",
            3109,
        ),
        ("CREATE TABLE x (a INT, b INT AS (nosuch + 1))", 1054),
        ("ALTER TABLE t DROP COLUMN a", 3108),
        ("ALTER TABLE t RENAME COLUMN a TO aa", 3108),
    ] {
        assert_eq!(err(&mut c, sql), want, "{sql}");
    }
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("INSERT INTO t VALUES (3, 10, 99, 99)")
        .unwrap();
    let warnings: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        warnings
            .iter()
            .map(|w| (w.0.as_str(), w.1))
            .collect::<Vec<_>>(),
        [("Warning", 1906), ("Warning", 1906)]
    );
    c.query_drop("SET sql_mode = DEFAULT").unwrap();
    c.query_drop("UPDATE t JOIN u USING (id) SET t.a = u.x")
        .unwrap();
    let rows: Vec<(i64, i64, i64, i64)> = c.query("SELECT * FROM t ORDER BY id").unwrap();
    assert_eq!(rows, vec![(1, 7, 14, 15), (2, 5, 10, 11), (3, 10, 20, 21)]);
    let exprs: Vec<(String, String)> = c
        .query(
            "SELECT column_name, generation_expression FROM information_schema.columns \
             WHERE table_schema = 'd' AND table_name = 't' ORDER BY ordinal_position",
        )
        .unwrap();
    assert_eq!(
        exprs,
        vec![
            ("id".into(), String::new()),
            ("a".into(), String::new()),
            ("s".into(), "(`a` * 2)".into()),
            ("st".into(), "(`s` + 1)".into()),
        ]
    );
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(
        shown.contains(
            "  `s` int GENERATED ALWAYS AS ((`a` * 2)) VIRTUAL,\n  `st` int GENERATED ALWAYS AS ((`s` + 1)) STORED NOT NULL,\n"
        ),
        "{shown}"
    );
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    c.query_drop("USE d").unwrap();
    c.query_drop(shown.replace("`t`", "`t2`")).unwrap();
    c.query_drop("INSERT INTO t2 (id, a) SELECT id, a + 1 FROM t")
        .unwrap();
    let via_index: Vec<i64> = c.query("SELECT id FROM t2 WHERE s = 22").unwrap();
    assert_eq!(via_index, vec![3]);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Runs `ddl` while two `writers` write to `a.t`: every statement succeeds, no writer gets
/// an error, and every insert a writer was told of is in the table afterwards.
fn ddl_under_writers(s: &common::Server, c: &mut mysql::Conn, ddl: &[String]) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let running = writers(s, 2, &stop);
    for sql in ddl {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let acked: Vec<i64> = stop_writers(&stop, running)
        .into_iter()
        .map(|(_, i)| i)
        .collect();
    let have: std::collections::HashSet<i64> = c
        .query::<i64, _>("SELECT id FROM a.t WHERE id > 1000000")
        .unwrap()
        .into_iter()
        .collect();
    assert!(!acked.is_empty());
    assert!(acked.iter().all(|i| have.contains(i)), "writes lost");
}

/// Stops `writers` and gathers what they acknowledged.
fn stop_writers(
    stop: &std::sync::atomic::AtomicBool,
    running: Vec<std::thread::JoinHandle<Vec<(std::time::Instant, i64)>>>,
) -> Vec<(std::time::Instant, i64)> {
    stop.store(true, std::sync::atomic::Ordering::Release);
    running
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect()
}

/// `a.t (id INT PRIMARY KEY, v INT<more>)` with ids 1..=50,000 and v = 0, for `writers`.
fn writers_table(c: &mut mysql::Conn, more: &str) {
    c.query_drop("CREATE DATABASE a").unwrap();
    c.query_drop(format!(
        "CREATE TABLE a.t (id INT PRIMARY KEY, v INT{more})"
    ))
    .unwrap();
    c.query_drop("SET cte_max_recursion_depth = 100000")
        .unwrap();
    c.query_drop(
        "INSERT INTO a.t WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
         WHERE n < 50000) SELECT n, 0 FROM s",
    )
    .unwrap();
}

/// Expression defaults (MySQL 8.0.13, ddl/generated.rs N5): evaluated for each row, so
/// UUID() differs row by row; SHOW CREATE TABLE, SHOW COLUMNS and information_schema show
/// them as MySQL (DEFAULT_GENERATED; the expression as MySQL writes it: operations in
/// parentheses, columns quoted, function names lower-case, strings with their introducer);
/// MySQL's errors for what they may not read (3766-3772, 1054); they survive a restart, and a prepared INSERT evaluates them per execution.
#[test]
fn expression_defaults_as_mysql() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE e").unwrap();
    c.query_drop("USE e").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, x INT, u VARCHAR(36) DEFAULT (UUID()), \
         j JSON DEFAULT (JSON_ARRAY()), b BLOB DEFAULT ('bytes'), y INT DEFAULT (x * 2), \
         ts DATETIME DEFAULT CURRENT_TIMESTAMP)",
    )
    .unwrap();
    let ins = c.prep("INSERT INTO t (id, x) VALUES (?, ?)").unwrap();
    for i in 1..=3 {
        c.exec_drop(&ins, (i, i * 10)).unwrap();
    }
    let distinct: i64 = c
        .query_first("SELECT COUNT(DISTINCT u) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(distinct, 3, "UUID() evaluated once per row");
    let rows: Vec<(i64, String, String, i64)> = c
        .query("SELECT id, CAST(j AS CHAR), CAST(b AS CHAR), y FROM t ORDER BY id")
        .unwrap();
    assert_eq!(rows[2], (3, "[]".into(), "bytes".into(), 60));
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(
        shown.contains("`u` varchar(36) DEFAULT (uuid()),")
            && shown.contains("`y` int DEFAULT ((`x` * 2)),"),
        "{shown}"
    );
    let extra: Vec<(String, Option<String>, String)> = c
        .query(
            "SELECT COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'e' AND TABLE_NAME = 't' AND EXTRA <> '' ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    assert_eq!(
        extra,
        [
            (
                "u".into(),
                Some("uuid()".into()),
                "DEFAULT_GENERATED".into()
            ),
            (
                "j".into(),
                Some("json_array()".into()),
                "DEFAULT_GENERATED".into()
            ),
            (
                "b".into(),
                Some("_utf8mb4'bytes'".into()),
                "DEFAULT_GENERATED".into()
            ),
            (
                "y".into(),
                Some("(`x` * 2)".into()),
                "DEFAULT_GENERATED".into()
            ),
            (
                "ts".into(),
                Some("CURRENT_TIMESTAMP".into()),
                "DEFAULT_GENERATED".into()
            ),
        ]
    );
    for (sql, want) in [
        ("CREATE TABLE u2 (a INT DEFAULT (a + 1))", 3767),
        (
            "CREATE TABLE u3 (a INT DEFAULT (b + 1), b INT DEFAULT (a + 1))",
            3767,
        ),
        (
            "CREATE TABLE u4 (a INT AUTO_INCREMENT PRIMARY KEY, b INT DEFAULT (a + 1))",
            3768,
        ),
        (
            "CREATE TABLE u5 (a INT, g INT AS (a), b INT DEFAULT (g + 1))",
            0,
        ),
        (
            "CREATE TABLE u6 (b INT DEFAULT (g + 1), a INT, g INT AS (a))",
            3767,
        ),
        ("CREATE TABLE u7 (a INT DEFAULT (nope + 1))", 1054),
        ("CREATE TABLE u8 (a INT DEFAULT ((SELECT 1)))", 3769),
        ("CREATE TABLE u9 (a INT DEFAULT (@v))", 3772),
        ("CREATE TABLE u10 (a TEXT DEFAULT 'literal')", 1101),
        ("ALTER TABLE t DROP COLUMN x", 3766),
        ("ALTER TABLE t RENAME COLUMN x TO x2", 3766),
        (
            "ALTER TABLE t ALTER COLUMN x SET DEFAULT ((SELECT 1))",
            3769,
        ),
        ("SELECT DEFAULT(y) FROM t", 3773),
        ("SELECT DEFAULT(id) FROM t", 1364),
    ] {
        match c.query_drop(sql) {
            Ok(()) => assert_eq!(want, 0, "{sql} passed"),
            Err(e) => assert_eq!(code(e), want, "{sql}"),
        }
    }
    // A NOT NULL column whose expression gives NULL: 1048, as for a value written.
    c.query_drop("CREATE TABLE n (id INT PRIMARY KEY, x INT, y INT NOT NULL DEFAULT (x + 1))")
        .unwrap();
    assert_eq!(
        code(c.query_drop("INSERT INTO n (id) VALUES (1)").unwrap_err()),
        1048
    );
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    c.query_drop("INSERT INTO e.t (id, x) VALUES (4, 7)")
        .unwrap();
    let y: Option<i64> = c.query_first("SELECT y FROM e.t WHERE id = 4").unwrap();
    assert_eq!(y, Some(14));
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Writers for the DDL-against-writers tests: `n` connections each inserting (by text and
/// prepared statements) rows with ids from 1,000,000 up and updating `a.t`'s first 50,000
/// ids, until `stop`; each returns the ids it inserted, with when the server acknowledged
/// them. Any error fails the test.
fn writers(
    s: &common::Server,
    n: i64,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<Vec<(std::time::Instant, i64)>>> {
    (0..n)
        .map(|w| {
            let mut conn = connect(s);
            // A failing statement shows the locks and transactions of that moment.
            let mut diag = connect(s);
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut fail = |sql: &str, e: mysql::Error| -> ! {
                    let locks: Vec<mysql::Row> = diag
                        .query("SELECT * FROM performance_schema.data_locks")
                        .unwrap_or_default();
                    let trx: Vec<mysql::Row> = diag
                        .query("SELECT * FROM information_schema.INNODB_TRX")
                        .unwrap_or_default();
                    panic!("{sql}: {e}\nlocks: {locks:?}\ntransactions: {trx:?}")
                };
                let ins = conn.prep("INSERT INTO a.t (id, v) VALUES (?, 1)").unwrap();
                let mut acked = Vec::new();
                let mut i = 1_000_000 * (w + 1);
                while !stop.load(std::sync::atomic::Ordering::Acquire) {
                    i += 1;
                    if i % 2 == 0 {
                        if let Err(e) = conn.exec_drop(&ins, (i,)) {
                            fail("prepared INSERT", e);
                        }
                    } else {
                        let sql = format!("INSERT INTO a.t (id, v) VALUES ({i}, 1)");
                        if let Err(e) = conn.query_drop(&sql) {
                            fail(&sql, e);
                        }
                    }
                    acked.push((std::time::Instant::now(), i));
                    let sql = format!("UPDATE a.t SET v = v + 1 WHERE id = {}", i % 50000 + 1);
                    if let Err(e) = conn.query_drop(&sql) {
                        fail(&sql, e);
                    }
                }
                acked
            })
        })
        .collect()
}

/// ALTER TABLE's copy against writers (ddl/alter.rs, engine `with_table`): rows written
/// while the table is copied wait for the copy and then go to the new table, by text and
/// prepared statements, inserts and updates; every acknowledged write is in the table
/// afterwards (none was made to the old table after its rows were copied), and no writer
/// gets an error. TRUNCATE TABLE against writers: none gets an error (the table is never
/// missing), and what they wrote after it returned is there.
#[test]
fn alter_table_keeps_concurrent_writes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let s = start();
    let mut c = connect(&s);
    writers_table(&mut c, "");
    let stop = Arc::new(AtomicBool::new(false));
    let running = writers(&s, 2, &stop);
    std::thread::sleep(Duration::from_millis(100));
    c.query_drop("ALTER TABLE a.t ADD COLUMN z INT DEFAULT 7, ALGORITHM=COPY")
        .unwrap();
    c.query_drop("ALTER TABLE a.t DROP COLUMN z, ADD KEY (v)")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let acked: Vec<i64> = stop_writers(&stop, running)
        .into_iter()
        .map(|(_, i)| i)
        .collect();
    assert!(!acked.is_empty());
    let ids = |c: &mut mysql::Conn| -> std::collections::HashSet<i64> {
        c.query::<i64, _>("SELECT id FROM a.t WHERE id > 1000000")
            .unwrap()
            .into_iter()
            .collect()
    };
    let have = ids(&mut c);
    let lost: Vec<&i64> = acked.iter().filter(|i| !have.contains(i)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} writes lost",
        lost.len(),
        acked.len()
    );
    let n: i64 = c.query_first("SELECT COUNT(*) FROM a.t").unwrap().unwrap();
    assert_eq!(n as usize, 50000 + acked.len());
    c.query_drop("DELETE FROM a.t WHERE id > 1000000").unwrap();
    stop.store(false, Ordering::Release);
    let running = writers(&s, 2, &stop);
    std::thread::sleep(Duration::from_millis(100));
    c.query_drop("TRUNCATE TABLE a.t").unwrap();
    let truncated = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    let after: Vec<i64> = stop_writers(&stop, running)
        .into_iter()
        .filter(|(at, _)| *at > truncated)
        .map(|(_, i)| i)
        .collect();
    let have = ids(&mut c);
    assert!(after.iter().all(|i| have.contains(i)));
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// ALTER TABLE's ALGORITHM= and LOCK= clauses (ddl/alter.rs `how_altered`): granted when the
/// operations run that way, else MySQL's 1845/1846 naming what to try; ALGORITHM=COPY
/// rebuilds even for an index.
/// ALTER TABLE that changes only the definition (a default, a column's name or comment, an
/// index's name, the table comment, a foreign key dropped) is INSTANT: ALGORITHM=INSTANT and
/// LOCK=NONE are granted, no row is copied (Innodb_rows_inserted stays), writers running
/// meanwhile get no error and lose nothing, a prepared INSERT takes the new default, a child's
/// foreign key follows its parent's renamed column, and all of it survives a restart. A
/// change of type still needs the copy (1845).
#[test]
fn alter_table_definition_changes_are_instant() {
    let s = start();
    let mut c = connect(&s);
    writers_table(&mut c, ", KEY kv (v)");
    c.query_drop("CREATE TABLE a.p (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop(
        "CREATE TABLE a.ch (id INT PRIMARY KEY, pid INT, \
         CONSTRAINT fk FOREIGN KEY (pid) REFERENCES a.p (id))",
    )
    .unwrap();
    c.query_drop("INSERT INTO a.p VALUES (1)").unwrap();
    let mut p = connect(&s);
    let ins = p.prep("INSERT INTO a.t (id) VALUES (?)").unwrap();
    p.exec_drop(&ins, (60001,)).unwrap();
    let inserted = common::global_status(&mut c, "Innodb_rows_inserted");
    for sql in [
        "ALTER TABLE a.t ALTER COLUMN v SET DEFAULT 42, ALGORITHM=INSTANT, LOCK=NONE",
        "ALTER TABLE a.t RENAME INDEX kv TO kv2, ALGORITHM=INSTANT",
        "ALTER TABLE a.t COMMENT 'instant', ALGORITHM=INSTANT",
        "ALTER TABLE a.t CHANGE v v INT DEFAULT 42 COMMENT 'the value', ALGORITHM=INSTANT",
        "ALTER TABLE a.p RENAME COLUMN id TO pid, ALGORITHM=INSTANT",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(
        common::global_status(&mut c, "Innodb_rows_inserted"),
        inserted,
        "an instant change copied rows"
    );
    p.exec_drop(&ins, (60002,)).unwrap();
    let v: Option<i64> = c.query_first("SELECT v FROM a.t WHERE id = 60002").unwrap();
    assert_eq!(v, Some(42), "the prepared INSERT kept the old default");
    let by_index: i64 = c
        .query_first("SELECT COUNT(*) FROM a.t FORCE INDEX (kv2) WHERE v = 0")
        .unwrap()
        .unwrap();
    assert_eq!(by_index, 50000);
    let (_, child): (String, String) = c.query_first("SHOW CREATE TABLE a.ch").unwrap().unwrap();
    assert!(child.contains("REFERENCES `p` (`pid`)"), "{child}");
    assert_eq!(
        code(c.query_drop("INSERT INTO a.ch VALUES (1, 2)").unwrap_err()),
        1452
    );
    c.query_drop("INSERT INTO a.ch VALUES (1, 1)").unwrap();
    assert_eq!(
        code(
            c.query_drop("ALTER TABLE a.t CHANGE v v BIGINT, ALGORITHM=INSTANT")
                .unwrap_err()
        ),
        1845
    );
    // Writers meanwhile: none gets an error, every acknowledged insert is there.
    let ddl: Vec<String> = (0..20)
        .flat_map(|i| {
            [
                format!("ALTER TABLE a.t ALTER COLUMN v SET DEFAULT {i}"),
                format!("ALTER TABLE a.t RENAME KEY kv2 TO kv{i}, RENAME KEY kv{i} TO kv2"),
                format!("ALTER TABLE a.t COMMENT 'pass {i}', LOCK=NONE"),
            ]
        })
        .collect();
    ddl_under_writers(&s, &mut c, &ddl);
    drop(p);
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE a.t").unwrap().unwrap();
    for part in [
        "`v` int DEFAULT '19' COMMENT 'the value'",
        "KEY `kv2` (`v`)",
        "COMMENT='pass 19'",
    ] {
        assert!(shown.contains(part), "{part} not in {shown}");
    }
    let (_, child): (String, String) = c.query_first("SHOW CREATE TABLE a.ch").unwrap().unwrap();
    assert!(child.contains("REFERENCES `p` (`pid`)"), "{child}");
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// ADD COLUMN after the last column is INSTANT (MySQL 8.0's default): no row is copied, the
/// stored rows read the column's default (a constant, the ALTER's time for CURRENT_TIMESTAMP,
/// NULL, the type's implicit default), through scans, index reads and after a restart; rows
/// updated, deleted and inserted afterwards are right; columns that need a value per row
/// (expression default, generated, FIRST/AFTER) copy, and ALGORITHM=INSTANT refuses them
/// (1845). Writers running meanwhile lose nothing. A MODIFY that moves a column keeps each
/// column's values (it copies: stored fields are matched by position).
#[test]
fn alter_table_add_column_is_instant() {
    let s = start();
    let mut c = connect(&s);
    writers_table(&mut c, ", KEY kv (v)");
    c.query_drop("CREATE TABLE a.h (x INT)").unwrap();
    c.query_drop("INSERT INTO a.h VALUES (1), (2), (3)")
        .unwrap();
    let inserted = common::global_status(&mut c, "Innodb_rows_inserted");
    for sql in [
        "ALTER TABLE a.t ADD COLUMN n INT, ALGORITHM=INSTANT, LOCK=NONE",
        "ALTER TABLE a.t ADD COLUMN s VARCHAR(20) NOT NULL DEFAULT 'dflt', ADD z INT NOT NULL",
        "ALTER TABLE a.t ADD COLUMN ts DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6)",
        "ALTER TABLE a.t ADD COLUMN d DECIMAL(10,2) DEFAULT 1.5, RENAME COLUMN v TO val, \
         ALGORITHM=INSTANT",
        "ALTER TABLE a.h ADD COLUMN y INT DEFAULT 5, ALGORITHM=INSTANT",
        "ALTER TABLE a.t RENAME COLUMN val TO v, ALGORITHM=INSTANT",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(
        common::global_status(&mut c, "Innodb_rows_inserted"),
        inserted,
        "an instant ADD COLUMN copied rows"
    );
    let check = |c: &mut mysql::Conn| {
        let r: (i64, i64, i64, i64, i64) = c
            .query_first(
                "SELECT COUNT(*), SUM(n IS NULL), SUM(s = 'dflt' AND z = 0 AND d = 1.5), \
                 COUNT(DISTINCT ts), SUM(ts IS NULL) FROM a.t WHERE id <= 50000",
            )
            .unwrap()
            .unwrap();
        assert_eq!(r, (49950, 49850, 49949, 1, 0));
        let counts: (i64, i64) = c
            .query_first(
                "SELECT (SELECT COUNT(*) FROM a.t FORCE INDEX (kv) WHERE v = 0 AND s = 'dflt'), \
                 (SELECT COUNT(*) FROM a.t IGNORE INDEX (kv) WHERE v = 0 AND s = 'dflt')",
            )
            .unwrap()
            .unwrap();
        assert!(counts.0 == counts.1 && counts.0 > 40000, "{counts:?}");
        let h: Vec<(i64, i64)> = c.query("SELECT x, y FROM a.h ORDER BY x").unwrap();
        assert_eq!(h, [(1, 5), (2, 5), (3, 5), (4, 6)]);
        let row: (i64, Option<i64>, String) = c
            .query_first("SELECT id, n, s FROM a.t WHERE id = 7")
            .unwrap()
            .unwrap();
        assert_eq!(row, (7, Some(7), "seven".into()));
        assert_eq!(
            c.query_first::<i64, _>("SELECT COUNT(*) FROM a.t WHERE id BETWEEN 101 AND 150")
                .unwrap(),
            Some(0)
        );
    };
    // Writes to rows stored before the columns were added.
    c.query_drop("UPDATE a.t SET n = id WHERE id <= 100")
        .unwrap();
    c.query_drop("UPDATE a.t SET s = 'seven' WHERE id = 7")
        .unwrap();
    c.query_drop("DELETE FROM a.t WHERE id BETWEEN 101 AND 150")
        .unwrap();
    c.query_drop("INSERT INTO a.t (id, v, z) VALUES (101, 0, 1), (102, 0, 1), (110, 0, 1)")
        .unwrap();
    c.query_drop("DELETE FROM a.t WHERE id BETWEEN 101 AND 110")
        .unwrap();
    c.query_drop("INSERT INTO a.h (x, y) VALUES (4, 6)")
        .unwrap();
    c.query_drop("BEGIN").unwrap();
    c.query_drop("UPDATE a.t SET n = -1, s = 'undone' WHERE id > 40000")
        .unwrap();
    c.query_drop("ROLLBACK").unwrap();
    check(&mut c);
    let checked: Vec<(String, String, String, String)> = c.query("CHECK TABLE a.t").unwrap();
    assert_eq!(checked.last().unwrap().3, "OK", "{checked:?}");
    // Not instant: a value per row, or a column placed before stored ones.
    for sql in [
        "ALTER TABLE a.t ADD COLUMN u VARCHAR(36) DEFAULT (UUID())",
        "ALTER TABLE a.t ADD COLUMN g INT AS (id + 1) STORED",
        "ALTER TABLE a.t ADD COLUMN f INT FIRST",
        "ALTER TABLE a.t ADD COLUMN f INT AFTER id",
    ] {
        let e = c
            .query_drop(format!("{sql}, ALGORITHM=INSTANT"))
            .unwrap_err();
        assert_eq!(code(e), 1845, "{sql}");
    }
    c.query_drop("CREATE TABLE a.m (id INT PRIMARY KEY, p INT, q INT)")
        .unwrap();
    c.query_drop("INSERT INTO a.m VALUES (1, 10, 20)").unwrap();
    c.query_drop("ALTER TABLE a.m MODIFY p INT AFTER q")
        .unwrap();
    let m: (i64, i64, i64) = c.query_first("SELECT * FROM a.m").unwrap().unwrap();
    assert_eq!(m, (1, 20, 10), "columns moved with their values");
    // Instant ADD COLUMN while writers insert and update (z needs a default for them).
    c.query_drop("ALTER TABLE a.t ALTER COLUMN z SET DEFAULT 0")
        .unwrap();
    let ddl: Vec<String> = (0..10)
        .map(|i| format!("ALTER TABLE a.t ADD COLUMN w{i} INT DEFAULT {i}, ALGORITHM=INSTANT"))
        .collect();
    ddl_under_writers(&s, &mut c, &ddl);
    let w: (i64, i64) = c
        .query_first("SELECT SUM(w9 = 9), COUNT(*) FROM a.t WHERE id <= 50000")
        .unwrap()
        .unwrap();
    assert_eq!(w, (49950, 49950));
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    check(&mut c);
    let checked: Vec<(String, String, String, String)> = c.query("CHECK TABLE a.t").unwrap();
    assert_eq!(checked.last().unwrap().3, "OK", "{checked:?}");
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// ADD CHECK, ALTER CHECK ... ENFORCED and ADD FOREIGN KEY (foreign_key_checks on, with an
/// index to use) test the rows under a shared table lock and then change only the definition
/// (ALGORITHM=INPLACE, LOCK=SHARED; MySQL copies the table): no row is copied, a row that
/// fails is 3819/1452 and leaves the table as it was, writers running meanwhile get no error
/// and lose nothing.
#[test]
fn alter_table_validates_constraints_in_place() {
    let s = start();
    let mut c = connect(&s);
    writers_table(&mut c, ", KEY kv (v)");
    c.query_drop("CREATE TABLE a.p (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO a.p VALUES (0), (1)").unwrap();
    let inserted = common::global_status(&mut c, "Innodb_rows_inserted");
    for sql in [
        "ALTER TABLE a.t ADD CONSTRAINT nonneg CHECK (v >= 0), ALGORITHM=INPLACE, LOCK=SHARED",
        "ALTER TABLE a.t ALTER CHECK nonneg NOT ENFORCED",
        "ALTER TABLE a.t ALTER CHECK nonneg ENFORCED",
        "ALTER TABLE a.t ADD CONSTRAINT fk FOREIGN KEY (v) REFERENCES a.p (id)",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(
        common::global_status(&mut c, "Innodb_rows_inserted"),
        inserted,
        "a validation copied rows"
    );
    for (sql, want) in [
        ("ALTER TABLE a.t ADD CONSTRAINT small CHECK (id < 100)", 3819),
        ("ALTER TABLE a.t ADD CONSTRAINT x CHECK (v > 0), LOCK=NONE", 1846),
        ("ALTER TABLE a.t ADD CONSTRAINT x CHECK (v > 0), ALGORITHM=INSTANT", 1845),
        ("ALTER TABLE a.t DROP FOREIGN KEY fk, ADD CONSTRAINT fk2 FOREIGN KEY (id) REFERENCES a.p (id)", 1452),
    ] {
        assert_eq!(code(c.query_drop(sql).unwrap_err()), want, "{sql}");
    }
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE a.t").unwrap().unwrap();
    assert!(
        shown.contains("CONSTRAINT `nonneg` CHECK")
            && shown.contains("CONSTRAINT `fk` FOREIGN KEY (`v`) REFERENCES `p` (`id`)")
            && !shown.contains("small")
            && !shown.contains("fk2"),
        "{shown}"
    );
    assert_eq!(
        code(c.query_drop("INSERT INTO a.t VALUES (-1, -1)").unwrap_err()),
        3819
    );
    assert_eq!(
        code(c.query_drop("INSERT INTO a.t VALUES (-1, 5)").unwrap_err()),
        1452
    );
    // Writers meanwhile (their rows have v = 1, then v + 1: the foreign key goes first).
    c.query_drop("ALTER TABLE a.t DROP FOREIGN KEY fk").unwrap();
    let ddl: Vec<String> = (0..5)
        .flat_map(|i| {
            [
                format!("ALTER TABLE a.t ADD CONSTRAINT c{i} CHECK (v >= -{i})"),
                format!(
                    "ALTER TABLE a.t ALTER CHECK c{i} NOT ENFORCED, ALTER CHECK nonneg ENFORCED"
                ),
            ]
        })
        .collect();
    ddl_under_writers(&s, &mut c, &ddl);
    assert_eq!(s.panics(), Vec::<String>::new());
}

#[test]
fn alter_table_algorithm_and_lock_clauses() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE g").unwrap();
    c.query_drop("USE g").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
        .unwrap();
    for sql in [
        "ALTER TABLE t ADD COLUMN b INT, ALGORITHM=COPY, LOCK=SHARED",
        "ALTER TABLE t ADD INDEX ka (a), ALGORITHM=INPLACE, LOCK=EXCLUSIVE",
        "ALTER TABLE t ADD INDEX kb (b), ALGORITHM=COPY",
        "ALTER TABLE t RENAME TO u, ALGORITHM=INSTANT, LOCK=NONE",
        "ALTER TABLE u RENAME TO t, ALGORITHM=DEFAULT, LOCK=DEFAULT",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    for (sql, want) in [
        (
            "ALTER TABLE t ADD COLUMN x INT FIRST, ALGORITHM=INPLACE",
            1845,
        ),
        (
            "ALTER TABLE t ADD COLUMN x INT FIRST, ALGORITHM=INSTANT",
            1845,
        ),
        ("ALTER TABLE t ADD COLUMN x INT FIRST, LOCK=NONE", 1846),
        ("ALTER TABLE t DROP INDEX ka, LOCK=NONE", 1845),
        ("ALTER TABLE t DROP INDEX ka, ALGORITHM=INSTANT", 1845),
    ] {
        assert_eq!(code(c.query_drop(sql).unwrap_err()), want, "{sql}");
    }
    let (_, shown): (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(
        shown.contains("KEY `ka` (`a`)") && shown.contains("KEY `kb` (`b`)"),
        "{shown}"
    );
}

/// Two string columns of one character set under two collations, neither binary (a
/// utf8mb4_general_ci table next to MySQL 8.0's default utf8mb4_0900_ai_ci), cannot be
/// compared: error 1267, as in MySQL, for a join, an IN, a correlated EXISTS and a range;
/// an explicit COLLATE, a _bin column, another character set or a literal decide it.
#[test]
fn mixed_collations_are_refused_as_mysql_refuses_them() {
    let s = common::start();
    let mut c = common::connect(&s);
    for q in [
        "CREATE DATABASE mix",
        "USE mix",
        "CREATE TABLE g (id INT PRIMARY KEY, s VARCHAR(8) COLLATE utf8mb4_general_ci)",
        "CREATE TABLE z (id INT PRIMARY KEY, s VARCHAR(8))",
        "CREATE TABLE b (id INT PRIMARY KEY, s VARCHAR(8) COLLATE utf8mb4_bin)",
        "CREATE TABLE l (id INT PRIMARY KEY, s VARCHAR(8) CHARACTER SET latin1)",
        "INSERT INTO g VALUES (1, 'a')",
        "INSERT INTO z VALUES (1, 'A')",
        "INSERT INTO b VALUES (1, 'a')",
        "INSERT INTO l VALUES (1, 'A')",
    ] {
        c.query_drop(q).unwrap();
    }
    for q in [
        "SELECT g.id FROM g JOIN z ON g.s = z.s",
        "SELECT g.id FROM g WHERE g.s IN (SELECT s FROM z)",
        "SELECT g.id FROM g WHERE EXISTS (SELECT 1 FROM z WHERE z.s = g.s)",
        "SELECT g.id FROM g JOIN z ON g.s < z.s",
    ] {
        let e = c.query_drop(q).unwrap_err();
        assert_eq!(code(e), 1267, "{q}");
    }
    for (q, n) in [
        (
            "SELECT g.id FROM g JOIN z ON g.s = z.s COLLATE utf8mb4_general_ci",
            1,
        ),
        ("SELECT g.id FROM g JOIN b ON g.s = b.s", 1),
        ("SELECT g.id FROM g JOIN b ON b.s = g.s", 1),
        ("SELECT z.id FROM z JOIN l ON z.s = l.s", 1),
        ("SELECT g.id FROM g WHERE g.s = 'A'", 1),
        ("SELECT z.id FROM z JOIN b ON z.s = b.s", 0),
    ] {
        let rows: Vec<i64> = c.query(q).unwrap();
        assert_eq!(rows.len(), n, "{q}");
    }
}

/// MySQL 8.0's default collation, utf8mb4_0900_ai_ci, through SQL: the Unicode Collation
/// Algorithm's primary weights (punctuation and spaces before digits before letters; case and
/// accents ignored; 'ß' as 'ss'; NO PAD), in an index's order, ORDER BY, GROUP BY, a unique
/// key, an index lookup and LIKE.
#[test]
fn the_default_collation_orders_by_unicode_weights() {
    let s = common::start();
    let mut c = common::connect(&s);
    for q in [
        "CREATE DATABASE uca",
        "USE uca",
        "CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, KEY (s))",
        "INSERT INTO w VALUES (1, 'b'), (2, 'a_b'), (3, 'ab'), (4, 'A-b'), (5, 'Straße'), \
         (6, 'strasse'), (7, '1a'), (8, ' a'), (9, 'é'), (10, 'E'), (11, '中'), (12, 'a b'), \
         (13, 'ab '), (14, 'æ'), (15, 'Ω'), (16, '[x]')",
    ] {
        c.query_drop(q).unwrap();
    }
    let expect = [8, 16, 7, 12, 2, 4, 3, 13, 14, 1, 9, 10, 5, 6, 15, 11];
    for q in [
        "SELECT id FROM w ORDER BY s, id",
        "SELECT id FROM w FORCE INDEX (s) ORDER BY s, id",
        "SELECT id FROM w IGNORE INDEX (s) ORDER BY s, id",
    ] {
        let ids: Vec<i64> = c.query(q).unwrap();
        assert_eq!(ids, expect, "{q}");
    }
    let groups: Vec<(i64, i64)> = c
        .query("SELECT MIN(id), COUNT(*) FROM w GROUP BY s HAVING COUNT(*) > 1 ORDER BY 1")
        .unwrap();
    assert_eq!(groups, [(5, 2), (9, 2)], "Straße = strasse, é = E");
    let ids: Vec<i64> = c
        .query("SELECT id FROM w WHERE s = 'AE' ORDER BY id")
        .unwrap();
    assert_eq!(ids, [14], "æ weighs as ae");
    let ids: Vec<i64> = c
        .query("SELECT id FROM w FORCE INDEX (s) WHERE s BETWEEN 'A' AND 'AB' ORDER BY id")
        .unwrap();
    assert_eq!(
        ids,
        [2, 3, 4, 12],
        "'a_b', 'A-b' and 'a b' sort before 'ab'"
    );
    let ids: Vec<i64> = c
        .query("SELECT id FROM w WHERE s LIKE 'E' ORDER BY id")
        .unwrap();
    assert_eq!(ids, [9, 10]);
    c.query_drop("CREATE TABLE u (s VARCHAR(20) PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO u VALUES ('straße')").unwrap();
    let e = c
        .query_drop("INSERT INTO u VALUES ('STRASSE')")
        .unwrap_err();
    assert_eq!(code(e), 1062);
    c.query_drop("INSERT INTO u VALUES ('strasse ')").unwrap();
    let n: i64 = c.query_first("SELECT COUNT(*) FROM u").unwrap().unwrap();
    assert_eq!(n, 2, "a trailing space counts (NO PAD)");
}

/// MySQL 8.0's persistent AUTO_INCREMENT counter: values deleted at the top of the table are
/// not handed out again after a clean restart (the counter goes on exactly), after a kill -9
/// (it goes on past them, perhaps with a gap), nor after an explicit value was stored and
/// deleted, nor after an ALTER TABLE that copies the table.
#[test]
fn auto_increment_counter_survives_restarts_and_crashes() {
    let s = common::start();
    let mut c = common::connect(&s);
    for q in [
        "CREATE DATABASE ai",
        "CREATE TABLE ai.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
        "INSERT INTO ai.t (v) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)",
        "DELETE FROM ai.t WHERE id > 7",
        "CREATE TABLE ai.e (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
        "INSERT INTO ai.e VALUES (1000, 1)",
        "DELETE FROM ai.e",
    ] {
        c.query_drop(q).unwrap();
    }
    drop(c);
    let s = common::start_in(s.stop_keep_dir(false), false, &[]);
    let mut c = common::connect(&s);
    c.query_drop("INSERT INTO ai.t (v) VALUES (11)").unwrap();
    c.query_drop("INSERT INTO ai.e (v) VALUES (2)").unwrap();
    let ids = common::text_rows(
        &mut c,
        "SELECT id FROM ai.t WHERE v = 11 UNION ALL SELECT id FROM ai.e",
    );
    assert_eq!(ids, ["11", "1001"], "after a clean restart");
    // A copying ALTER TABLE carries the counter into the new table, persisted there.
    c.query_drop("ALTER TABLE ai.t ADD COLUMN w INT FIRST")
        .unwrap();
    c.query_drop("INSERT INTO ai.t (v) VALUES (12)").unwrap();
    c.query_drop("DELETE FROM ai.t WHERE id >= 11").unwrap();
    drop(c);
    let s = common::start_in(s.stop_keep_dir(true), false, &[]);
    let mut c = common::connect(&s);
    c.query_drop("INSERT INTO ai.t (v) VALUES (13)").unwrap();
    let id: u64 = c
        .query_first("SELECT id FROM ai.t WHERE v = 13")
        .unwrap()
        .unwrap();
    assert!(id > 12 && id <= 12 + 300, "after a kill -9: id {id}");
    let next: Option<u64> = c
        .query_first(
            "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ai' AND \
             TABLE_NAME = 't'",
        )
        .unwrap()
        .flatten();
    assert_eq!(next, Some(id + 1));
}
