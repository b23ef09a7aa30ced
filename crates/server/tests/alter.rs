//! RENAME TABLE and ALTER TABLE (ADD/DROP/CHANGE/MODIFY COLUMN by copying, ADD/DROP INDEX,
//! RENAME) from a MySQL client: definitions (SHOW CREATE TABLE), rows, indexes, errors as
//! MySQL 8.0 gives them, a failed ALTER leaving the table intact, restarts, and a SIGKILL in
//! the middle of a big ALTER.

mod common;

use common::text_rows;
use mysql::prelude::Queryable;
use mysql::{Conn, Row};

fn err_code<T: std::fmt::Debug>(r: Result<T, mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn show_create(c: &mut Conn, t: &str) -> String {
    let row: Row = c
        .query_first(format!("SHOW CREATE TABLE {t}"))
        .unwrap()
        .unwrap();
    row.get::<String, _>(1).unwrap()
}

fn tables(c: &mut Conn) -> Vec<String> {
    c.query("SHOW TABLES").unwrap()
}

#[test]
fn rename_table_within_and_across_databases() {
    let s = common::start();
    let mut c = common::connect(&s);
    c.query_drop("CREATE DATABASE d1").unwrap();
    c.query_drop("CREATE DATABASE d2").unwrap();
    c.query_drop("USE d1").unwrap();
    c.query_drop("CREATE TABLE a (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10), KEY kv (v))")
        .unwrap();
    c.query_drop("CREATE TABLE b (x INT)").unwrap();
    c.query_drop("INSERT INTO a (v) VALUES ('a1'), ('a2')")
        .unwrap();
    c.query_drop("INSERT INTO b VALUES (7)").unwrap();

    // Errors: 1146 for a missing source, 1050 for a taken target; nothing changes.
    assert_eq!(err_code(c.query_drop("RENAME TABLE nope TO x")), 1146);
    assert_eq!(err_code(c.query_drop("RENAME TABLE a TO b")), 1050);
    assert_eq!(
        err_code(c.query_drop("RENAME TABLE a TO z, nope TO y")),
        1146
    );
    assert_eq!(tables(&mut c), ["a", "b"]);

    // A swap through a temporary name is one atomic statement.
    c.query_drop("RENAME TABLE a TO tmp, b TO a, tmp TO b")
        .unwrap();
    assert_eq!(tables(&mut c), ["a", "b"]);
    assert_eq!(text_rows(&mut c, "SELECT * FROM a"), ["7"]);
    assert_eq!(
        text_rows(&mut c, "SELECT id, v FROM b ORDER BY id"),
        ["1,a1", "2,a2"]
    );
    assert!(show_create(&mut c, "b").contains("KEY `kv` (`v`)"));

    // Across databases, and ALTER TABLE ... RENAME.
    c.query_drop("RENAME TABLE d1.b TO d2.moved").unwrap();
    assert_eq!(tables(&mut c), ["a"]);
    assert_eq!(
        text_rows(&mut c, "SELECT v FROM d2.moved WHERE v = 'a2'"),
        ["a2"]
    );
    c.query_drop("ALTER TABLE d2.moved RENAME TO d2.m2")
        .unwrap();
    c.query_drop("ALTER TABLE d2.m2 RENAME d1.back").unwrap();
    assert_eq!(tables(&mut c), ["a", "back"]);
    assert_eq!(err_code(c.query_drop("RENAME TABLE back TO nodb.x")), 1049);
    // The AUTO_INCREMENT counter moved with the table.
    c.query_drop("INSERT INTO back (v) VALUES ('a3')").unwrap();
    assert_eq!(
        text_rows(&mut c, "SELECT id FROM back ORDER BY id"),
        ["1", "2", "3"]
    );
    // The old names are free again.
    c.query_drop("CREATE TABLE b (y INT)").unwrap();
    // CREATE TABLE ... LIKE copies the definition, not the rows (nor the counter).
    c.query_drop("CREATE TABLE d2.likeit LIKE back").unwrap();
    assert_eq!(
        show_create(&mut c, "d2.likeit").replace("`likeit`", "`back`"),
        show_create(&mut c, "back").replace(" AUTO_INCREMENT=4", "")
    );
    assert_eq!(text_rows(&mut c, "SELECT COUNT(*) FROM d2.likeit"), ["0"]);
    assert_eq!(err_code(c.query_drop("CREATE TABLE b LIKE back")), 1050);
    assert!(s.panics().is_empty());
}

#[test]
fn alter_columns_with_data_defaults_positions_and_indexes() {
    let s = common::start();
    let mut c = common::connect(&s);
    c.query_drop("CREATE DATABASE t").unwrap();
    c.query_drop("USE t").unwrap();
    c.query_drop(
        "CREATE TABLE p (id INT NOT NULL AUTO_INCREMENT, name VARCHAR(20) NOT NULL, \
         age INT, PRIMARY KEY (id), UNIQUE KEY uname (name), KEY kage (age))",
    )
    .unwrap();
    c.query_drop("INSERT INTO p (name, age) VALUES ('ann', 30), ('bob', NULL), ('cy', 41)")
        .unwrap();

    // ADD with a default, NOT NULL without one (the implicit default), FIRST and AFTER.
    c.query_drop(
        "ALTER TABLE p ADD COLUMN city VARCHAR(10) DEFAULT 'Oslo', \
         ADD score INT NOT NULL, ADD COLUMN tag CHAR(2) FIRST, ADD note TEXT AFTER name",
    )
    .unwrap();
    let sc = show_create(&mut c, "p");
    assert!(
        sc.contains(
            "  `tag` char(2) DEFAULT NULL,\n  `id` int NOT NULL AUTO_INCREMENT,\n  \
             `name` varchar(20) NOT NULL,\n  `note` text,\n  `age` int DEFAULT NULL,\n  \
             `city` varchar(10) DEFAULT 'Oslo',\n  `score` int NOT NULL,\n"
        ),
        "{sc}"
    );
    assert!(sc.contains("UNIQUE KEY `uname` (`name`)"), "{sc}");
    assert!(sc.contains("KEY `kage` (`age`)"), "{sc}");
    assert_eq!(
        text_rows(&mut c, "SELECT * FROM p ORDER BY id"),
        [
            "NULL,1,ann,NULL,30,Oslo,0",
            "NULL,2,bob,NULL,NULL,Oslo,0",
            "NULL,3,cy,NULL,41,Oslo,0"
        ]
    );
    // Indexes still work (and still enforce uniqueness); the counter carried over.
    assert_eq!(text_rows(&mut c, "SELECT id FROM p WHERE age = 41"), ["3"]);
    c.query_drop("INSERT INTO p (name, age, score) VALUES ('dee', 5, 0)")
        .unwrap();
    assert_eq!(
        text_rows(&mut c, "SELECT id FROM p WHERE name = 'dee'"),
        ["4"]
    );
    assert_eq!(
        err_code(c.query_drop("INSERT INTO p (name) VALUES ('eve')")),
        1364
    );
    assert_eq!(
        err_code(c.query_drop("INSERT INTO p (name, score) VALUES ('ann', 1)")),
        1062
    );

    // DROP columns (one in an index: removed from it, the index goes with its last column),
    // mixed with ADD/DROP INDEX and a MODIFY and a CHANGE.
    c.query_drop(
        "ALTER TABLE p DROP COLUMN tag, DROP note, DROP COLUMN age, ADD INDEX kcity (city, score), \
         DROP INDEX uname, MODIFY score BIGINT NOT NULL DEFAULT 7, CHANGE city town VARCHAR(12)",
    )
    .unwrap();
    let sc = show_create(&mut c, "p");
    assert!(!sc.contains("kage") && !sc.contains("uname"), "{sc}");
    assert!(sc.contains("KEY `kcity` (`town`,`score`)"), "{sc}");
    assert!(sc.contains("`score` bigint NOT NULL DEFAULT '7'"), "{sc}");
    // CHANGE redefines the column: its old DEFAULT is gone (as in MySQL).
    assert!(sc.contains("`town` varchar(12) DEFAULT NULL"), "{sc}");
    assert_eq!(
        text_rows(&mut c, "SELECT * FROM p ORDER BY id"),
        [
            "1,ann,Oslo,0",
            "2,bob,Oslo,0",
            "3,cy,Oslo,0",
            "4,dee,Oslo,0"
        ]
    );
    c.query_drop("INSERT INTO p (name) VALUES ('ann')").unwrap();
    assert_eq!(
        text_rows(&mut c, "SELECT COUNT(*), MAX(score) FROM p"),
        ["5,7"]
    );
    assert_eq!(
        text_rows(&mut c, "SELECT id > 4 FROM p WHERE score = 7"),
        ["1"]
    );

    // Errors as MySQL 8.0 gives them; the table is unchanged after each.
    let before = show_create(&mut c, "p");
    assert_eq!(err_code(c.query_drop("ALTER TABLE p ADD name INT")), 1060);
    assert_eq!(
        err_code(c.query_drop("ALTER TABLE p DROP COLUMN nope")),
        1091
    );
    assert_eq!(
        err_code(c.query_drop("ALTER TABLE p DROP INDEX nope")),
        1091
    );
    assert_eq!(
        err_code(c.query_drop("ALTER TABLE p ADD x INT AFTER nope")),
        1054
    );
    assert_eq!(err_code(c.query_drop("ALTER TABLE nope ADD x INT")), 1146);
    assert_eq!(
        err_code(c.query_drop("ALTER TABLE p ADD PRIMARY KEY (name)")),
        1068
    );
    c.query_drop("CREATE TABLE one (a INT)").unwrap();
    assert_eq!(err_code(c.query_drop("ALTER TABLE one DROP a")), 1090);
    assert_eq!(show_create(&mut c, "p"), before);
    assert_eq!(tables(&mut c), ["one", "p"], "no work table is listed");

    // Dropping the primary key column: the table gets a hidden row id; a new key can be added.
    c.query_drop("ALTER TABLE p DROP COLUMN id").unwrap();
    assert!(!show_create(&mut c, "p").contains("PRIMARY KEY"));
    assert_eq!(text_rows(&mut c, "SELECT COUNT(*) FROM p"), ["5"]);
    c.query_drop("DELETE FROM p WHERE name = 'ann' LIMIT 1")
        .unwrap();
    c.query_drop("ALTER TABLE p ADD PRIMARY KEY (name)")
        .unwrap();
    assert!(show_create(&mut c, "p").contains("PRIMARY KEY (`name`)"));
    assert_eq!(
        text_rows(&mut c, "SELECT name FROM p"),
        ["ann", "bob", "cy", "dee"]
    );
    assert!(s.panics().is_empty());
}

#[test]
fn strict_conversion_error_leaves_table_intact_and_restart_keeps_alter() {
    let s = common::start();
    let mut c = common::connect(&s);
    c.query_drop("CREATE DATABASE t").unwrap();
    c.query_drop("USE t").unwrap();
    c.query_drop("CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20), n INT)")
        .unwrap();
    c.query_drop("INSERT INTO w VALUES (1, '12', 1), (2, 'abc', NULL), (3, '7', 3)")
        .unwrap();
    let before = show_create(&mut c, "w");
    // 'abc' is no integer: strict mode (the default) refuses, nothing changes.
    assert_eq!(err_code(c.query_drop("ALTER TABLE w MODIFY s INT")), 1366);
    // NULL into NOT NULL: 1138.
    assert_eq!(
        err_code(c.query_drop("ALTER TABLE w MODIFY n INT NOT NULL")),
        1138
    );
    assert_eq!(show_create(&mut c, "w"), before);
    assert_eq!(
        text_rows(&mut c, "SELECT * FROM w ORDER BY id"),
        ["1,12,1", "2,abc,NULL", "3,7,3"]
    );
    assert_eq!(tables(&mut c), ["w"]);
    // Without strict mode the values are converted with warnings.
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("ALTER TABLE w MODIFY s INT, MODIFY n INT NOT NULL")
        .unwrap();
    let warnings: Vec<Row> = c.query("SHOW WARNINGS").unwrap();
    assert!(!warnings.is_empty());
    assert_eq!(
        text_rows(&mut c, "SELECT * FROM w ORDER BY id"),
        ["1,12,1", "2,0,0", "3,7,3"]
    );
    c.query_drop("ALTER TABLE w ADD COLUMN d DATE DEFAULT '2024-01-02' AFTER id")
        .unwrap();
    let def = show_create(&mut c, "w");
    drop(c);

    // A clean restart keeps the definition and the rows.
    let dir = s.stop_keep_dir(false);
    let s = common::start_in(dir, false, &[]);
    let mut c = common::connect(&s);
    c.query_drop("USE t").unwrap();
    assert_eq!(show_create(&mut c, "w"), def);
    assert_eq!(
        text_rows(&mut c, "SELECT * FROM w ORDER BY id"),
        ["1,2024-01-02,12,1", "2,2024-01-02,0,0", "3,2024-01-02,7,3"]
    );
    assert!(s.panics().is_empty());
}

#[test]
fn sigkill_during_big_alter_leaves_original_and_no_work_table() {
    let s = common::start();
    let mut c = common::connect(&s);
    c.query_drop("CREATE DATABASE big").unwrap();
    c.query_drop("USE big").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30), KEY kv (v))")
        .unwrap();
    let n: i64 = 200_000;
    for chunk in 0..n / 2000 {
        let vals: Vec<String> = (0..2000)
            .map(|i| {
                let id = chunk * 2000 + i;
                format!("({id},'v{}')", id % 977)
            })
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", vals.join(",")))
            .unwrap();
    }
    let def = show_create(&mut c, "t");
    // Run a long ALTER on another connection; kill the server while it copies.
    let port = s.port;
    let alter = std::thread::spawn(move || {
        let opts = mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root"))
            .db_name(Some("big"));
        let mut a = Conn::new(opts).unwrap();
        a.query_drop("ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 5, DROP INDEX kv")
    });
    // Wait until the work table's file exists and has grown, then SIGKILL.
    let dbdir = s.datadir().join("big");
    let started = std::time::Instant::now();
    loop {
        let work = std::fs::read_dir(&dbdir)
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().starts_with("#sql-"));
        if work.is_some_and(|e| e.metadata().map(|m| m.len()).unwrap_or(0) > 1 << 20) {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "the ALTER never started copying"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let dir = s.stop_keep_dir(true);
    assert!(alter.join().unwrap().is_err(), "the ALTER was cut off");

    let s = common::start_in(dir, false, &[]);
    let mut c = common::connect(&s);
    c.query_drop("USE big").unwrap();
    assert_eq!(tables(&mut c), ["t"]);
    assert_eq!(show_create(&mut c, "t"), def, "the original definition");
    assert_eq!(
        text_rows(&mut c, "SELECT COUNT(*), SUM(id) FROM t"),
        [format!("{n},{}", (n - 1) * n / 2)]
    );
    assert_eq!(
        text_rows(&mut c, "SELECT COUNT(*) FROM t WHERE v = 'v5'"),
        [format!("{}", (0..n).filter(|i| i % 977 == 5).count())]
    );
    let leftovers: Vec<String> = std::fs::read_dir(s.datadir().join("big"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "t.ibd")
        .collect();
    assert!(leftovers.is_empty(), "left on disk: {leftovers:?}");
    // The same ALTER now completes.
    c.query_drop("ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 5, DROP INDEX kv")
        .unwrap();
    assert_eq!(
        text_rows(&mut c, "SELECT SUM(extra) FROM t"),
        [format!("{}", 5 * n)]
    );
    assert!(s.panics().is_empty());
}

/// ALTER TABLE with table options alone (COMMENT, ROW_FORMAT, AUTO_INCREMENT, DEFAULT
/// CHARSET) changes the definition and keeps the rows; DISABLE/ENABLE KEYS is a note (1031)
/// as in MySQL with InnoDB; sql_quote_show_create=0 drops the backticks.
#[test]
fn table_options_alone() {
    let s = common::start();
    let mut c = common::connect(&s);
    c.query_drop("CREATE DATABASE o").unwrap();
    c.query_drop("USE o").unwrap();
    c.query_drop("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(5))")
        .unwrap();
    c.query_drop("INSERT INTO t (s) VALUES ('a'), ('b')")
        .unwrap();
    c.query_drop("ALTER TABLE t COMMENT='kept', ROW_FORMAT=COMPACT")
        .unwrap();
    c.query_drop("ALTER TABLE t AUTO_INCREMENT=100").unwrap();
    c.query_drop("ALTER TABLE t DEFAULT CHARSET=latin1")
        .unwrap();
    let sc = show_create(&mut c, "t");
    assert!(
        sc.ends_with(
            ") ENGINE=InnoDB AUTO_INCREMENT=100 DEFAULT CHARSET=latin1 \
             COLLATE=latin1_swedish_ci ROW_FORMAT=COMPACT COMMENT='kept'"
        ),
        "{sc}"
    );
    // The column keeps its own character set.
    assert!(
        sc.contains("`s` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci"),
        "{sc}"
    );
    let fmt = text_rows(
        &mut c,
        "SELECT ROW_FORMAT, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_NAME = 't'",
    );
    assert_eq!(fmt, ["Compact,kept"]);
    c.query_drop("INSERT INTO t (s) VALUES ('c')").unwrap();
    assert_eq!(
        text_rows(&mut c, "SELECT GROUP_CONCAT(id) FROM t"),
        ["1,2,100"]
    );
    c.query_drop("ALTER TABLE t DISABLE KEYS").unwrap();
    assert_eq!(
        text_rows(&mut c, "SHOW WARNINGS"),
        ["Note,1031,Table storage engine for 't' doesn't have this option"]
    );
    c.query_drop("SET sql_quote_show_create = 0").unwrap();
    let sc = show_create(&mut c, "t");
    assert!(
        sc.starts_with("CREATE TABLE t (\n  id int NOT NULL AUTO_INCREMENT,"),
        "{sc}"
    );
    assert!(sc.contains("PRIMARY KEY (id)"), "{sc}");
}
