//! Parser tests: a corpus of client, sysbench, DDL, DML, SHOW, SET and transaction statements
//! (every one must parse), exact ASTs for many of them, syntax errors, placeholder numbering,
//! statement splitting, and no panic on any prefix of any corpus statement.

use super::*;
use crate::ast::*;

const CORPUS: &[&str] = &[
    // sysbench oltp_* (prepared forms and literal forms)
    "SELECT c FROM sbtest1 WHERE id=?",
    "SELECT c FROM sbtest1 WHERE id=42",
    "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109",
    "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 104",
    "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
    "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 7 AND 106 ORDER BY c",
    "UPDATE sbtest1 SET k=k+1 WHERE id=?",
    "UPDATE sbtest1 SET k=k+1 WHERE id=5001",
    "UPDATE sbtest1 SET c=? WHERE id=?",
    "UPDATE sbtest1 SET c='83868641912-28773972837-60736120486' WHERE id=77",
    "DELETE FROM sbtest1 WHERE id=?",
    "DELETE FROM sbtest1 WHERE id=4989",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (4989, 5012, '1234-5678', '9999-0000')",
    "INSERT INTO sbtest1(k, c, pad) VALUES(5012, 'a', 'b'),(4987, 'c', 'd'),(5001, 'e', 'f')",
    "INSERT INTO sbtest1 VALUES(1, 2, 'x', 'y')",
    "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?",
    "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */",
    "CREATE INDEX k_1 ON sbtest1(k)",
    "BEGIN",
    "COMMIT",
    "DROP TABLE IF EXISTS sbtest1",
    "ANALYZE TABLE sbtest1",
    "SET tmp_table_size=2*1024*1024*1024",
    "SET max_heap_table_size=2*1024*1024*1024",
    "SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT 10000) t",
    "SELECT COUNT(*) FROM (SELECT * FROM sbtest1 WHERE k LIKE '%0%' LIMIT 10000) t",
    // connect-time queries
    "select @@version_comment limit 1",
    "SELECT @@version_comment LIMIT 1",
    "SELECT DATABASE()",
    "select DATABASE(), USER() limit 1",
    "select @@character_set_client, @@character_set_connection, @@character_set_server, @@character_set_database limit 1",
    "SET NAMES utf8mb4",
    "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
    "SET AUTOCOMMIT = 0",
    "SET autocommit=0",
    "SET autocommit=1",
    "SELECT @@max_allowed_packet",
    "SHOW VARIABLES LIKE 'lower_case_%'",
    "SHOW VARIABLES LIKE 'lower_case_table_names'",
    "/* mysql-connector-j-9.1.0 (Revision: abc) */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@character_set_server AS character_set_server, @@collation_server AS collation_server, @@collation_connection AS collation_connection, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout",
    "SET character_set_results = NULL",
    "SET sql_mode='ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE'",
    "SELECT @@session.transaction_read_only",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET SESSION TRANSACTION READ ONLY",
    "SET SESSION TRANSACTION READ WRITE",
    "SHOW WARNINGS",
    "SET lock_wait_timeout = 2",
    "SELECT @@version;",
    "SHOW GLOBAL STATUS",
    "SHOW GLOBAL VARIABLES",
    "SHOW ALL SLAVES STATUS",
    "SHOW SLAVE STATUS NONBLOCKING",
    "SHOW REPLICA STATUS",
    "SELECT page_size, compress_ops, compress_ops_ok, compress_time, uncompress_ops, uncompress_time FROM information_schema.innodb_cmp",
    "SELECT @@query_response_time_stats",
    "SHOW ENGINE INNODB STATUS",
    "SET sql_mode=(SELECT CONCAT(@@sql_mode, ',PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION')),time_zone='+00:00',NAMES utf8mb4 COLLATE utf8mb4_unicode_ci",
    "SHOW CHARSET",
    "SHOW COLLATION",
    "SHOW ENGINES",
    "SHOW PLUGINS",
    "SELECT @@GLOBAL.character_set_server, @@GLOBAL.collation_server",
    "SHOW VARIABLES WHERE Variable_name in ('a', 'b')",
    "show databases",
    "show tables",
    // DDL
    "CREATE DATABASE d",
    "CREATE DATABASE IF NOT EXISTS d DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    "CREATE SCHEMA s CHARSET latin1",
    "DROP DATABASE IF EXISTS d",
    "DROP SCHEMA s",
    "USE d",
    "USE `my db`",
    "CREATE TABLE t (a TINYINT, b SMALLINT(5) UNSIGNED, c MEDIUMINT, d INT(11) UNSIGNED ZEROFILL, e BIGINT(20) UNSIGNED NOT NULL, f BOOL, g BOOLEAN, h DECIMAL(10,2), i DECIMAL, j FLOAT, k DOUBLE, l BIT(8), m CHAR(10), n VARCHAR(255), o BINARY(16), p VARBINARY(32), q TINYTEXT, r TEXT, s MEDIUMTEXT, t LONGTEXT, u TINYBLOB, v BLOB, w MEDIUMBLOB, x LONGBLOB, y DATE, z DATETIME(6), aa TIMESTAMP, ab TIME(3), ac YEAR, ad ENUM('a','b','c'), ae SET('x','y'), af JSON)",
    "CREATE TABLE `t2` (`id` bigint(20) unsigned NOT NULL AUTO_INCREMENT, `name` varchar(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '' COMMENT 'the name', `ts` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (`id`), UNIQUE KEY `uk` (`name`(10) DESC), KEY `k_ts` (`ts`), FULLTEXT KEY `ft` (`name`)) ENGINE=InnoDB AUTO_INCREMENT=100 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 COMMENT='tbl'",
    "CREATE TEMPORARY TABLE IF NOT EXISTS tmp (a INT PRIMARY KEY, b INT UNIQUE)",
    "CREATE TABLE c1 (id INT, pid INT, FOREIGN KEY (pid) REFERENCES p(id))",
    "CREATE TABLE t3 LIKE t2",
    "CREATE TABLE t4 AS SELECT * FROM t2",
    "DROP TABLE a, b",
    "DROP TEMPORARY TABLE IF EXISTS tmp",
    "TRUNCATE TABLE t",
    "TRUNCATE t",
    "CREATE UNIQUE INDEX ui ON t (a, b DESC)",
    "DROP INDEX k_1 ON sbtest1",
    "ALTER TABLE t ADD COLUMN z INT NOT NULL DEFAULT 0 AFTER a",
    "ALTER TABLE t ADD z2 VARCHAR(10) FIRST",
    "ALTER TABLE t DROP COLUMN z",
    "ALTER TABLE t ADD INDEX iz (z)",
    "ALTER TABLE t ADD UNIQUE KEY uz (z)",
    "ALTER TABLE t ADD PRIMARY KEY (id)",
    "ALTER TABLE t DROP INDEX iz",
    "ALTER TABLE t DROP PRIMARY KEY",
    "ALTER TABLE t RENAME TO t9",
    "ALTER TABLE t ENGINE=InnoDB",
    "ALTER TABLE t ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=4",
    "RENAME TABLE a TO b, c TO d",
    "OPTIMIZE TABLE t",
    "CHECK TABLE t1, t2",
    // DML
    "INSERT IGNORE INTO t (a, b) VALUES (1, 'x')",
    "INSERT INTO t SET a = 1, b = 'x'",
    "INSERT INTO t (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE b = VALUES(b), a = a + 1",
    "INSERT INTO t (a) SELECT a FROM u WHERE a > 1",
    "INSERT INTO t VALUES (DEFAULT, NULL)",
    "REPLACE INTO t (a, b) VALUES (1, 2)",
    "UPDATE t SET a = 1 WHERE b = 2 ORDER BY c DESC LIMIT 10",
    "UPDATE IGNORE t SET a = 1",
    "DELETE FROM t WHERE a < 5 ORDER BY a LIMIT 3",
    "SELECT a, b AS bb, t.c, db.t.d FROM db.t AS x JOIN u ON x.a = u.a LEFT JOIN v USING (a) RIGHT OUTER JOIN w ON 1 CROSS JOIN y STRAIGHT_JOIN z",
    "SELECT * FROM t1, t2 WHERE t1.a = t2.a",
    "SELECT t.* FROM t USE INDEX (i1) IGNORE INDEX (i2)",
    "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1 ORDER BY a DESC, 2 ASC LIMIT 5 OFFSET 10",
    "SELECT a FROM t LIMIT 10, 20",
    "SELECT * FROM t WHERE id = 1 FOR UPDATE",
    "SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT",
    "SELECT * FROM t WHERE id = 1 FOR SHARE SKIP LOCKED",
    "SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE",
    "SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v",
    "SELECT a MOD 3, 10 DIV 3, 7 % 2, a <=> NULL, a XOR b, a & b | c ^ d, ~a, a << 2, a >> 1, NOT a",
    "SELECT a IS NULL, b IS NOT NULL, c IS TRUE, d IS NOT FALSE",
    "SELECT * FROM t WHERE a NOT IN (1, 2) AND b IN (SELECT x FROM u) AND c NOT BETWEEN 1 AND 2 AND d NOT LIKE 'a%' ESCAPE '!'",
    "SELECT COUNT(DISTINCT a), SUM(b), AVG(c), MIN(d), MAX(e), GROUP_CONCAT(f) FROM t",
    "SELECT CASE a WHEN 1 THEN 'one' ELSE 'other' END, CASE WHEN b > 0 THEN 1 END FROM t",
    "SELECT CAST(a AS SIGNED), CAST(b AS UNSIGNED), CAST(c AS DECIMAL(10,2)), CAST(d AS CHAR(10)), CAST(e AS DATE), CAST(f AS DATETIME), CONVERT(g, CHAR), CONVERT(h USING utf8mb4)",
    "SELECT 'a' COLLATE utf8mb4_bin, _utf8mb4'x', _binary'y', X'0A0B', 0xFF, b'101', TRUE, FALSE, NULL, 1.5e3, -2",
    "SELECT DATE_ADD(d, INTERVAL 1 DAY), d - INTERVAL 2 HOUR FROM t",
    "SELECT CURRENT_TIMESTAMP, NOW(), CURRENT_DATE, SUBSTRING(s FROM 2 FOR 3), TRIM(LEADING 'x' FROM s), POSITION('a' IN s), EXTRACT(YEAR FROM d), CHAR(65, 66)",
    "SELECT EXISTS (SELECT 1 FROM t), (SELECT MAX(a) FROM t), (1, 2) = (1, 2)",
    "SELECT @u, @@session.sql_mode, @@global.max_connections",
    "SELECT 1 FROM DUAL",
    "SELECT a FROM t WHERE b = \"dq\"",
    "SELECT 'it\\'s', 'a''b'",
    // Hermitage
    "select * from test where value % 3 = 0",
    "update test set value = value + 1 where id = 1",
    "select * from test where id in (1,2) for update",
    "delete from test where value = 20",
    "insert into test (id, value) values (1, 10), (2, 20)",
    // SHOW
    "SHOW FULL TABLES FROM db LIKE 'sb%'",
    "SHOW TABLES IN db WHERE Tables_in_db = 't'",
    "SHOW FULL COLUMNS FROM t FROM db LIKE 'c%'",
    "SHOW FIELDS IN t",
    "SHOW INDEX FROM t",
    "SHOW INDEXES FROM t IN db",
    "SHOW KEYS FROM db.t",
    "SHOW CREATE TABLE t",
    "SHOW CREATE DATABASE d",
    "SHOW CREATE SCHEMA d",
    "SHOW TABLE STATUS LIKE 'sbtest1'",
    "SHOW TABLE STATUS FROM db",
    "SHOW WARNINGS LIMIT 10",
    "SHOW ERRORS LIMIT 5, 10",
    "SHOW COUNT(*) WARNINGS",
    "SHOW FULL PROCESSLIST",
    "SHOW CHARACTER SET LIKE 'utf8%'",
    "SHOW ENGINE INNODB MUTEX",
    "SHOW GRANTS",
    "SHOW GRANTS FOR 'root'@'localhost'",
    "SHOW DATABASES LIKE 'd%'",
    "SHOW SCHEMAS",
    "SHOW MASTER STATUS",
    "SHOW BINARY LOGS",
    "SHOW SESSION VARIABLES LIKE 'x'",
    "SHOW STATUS LIKE 'Threads%'",
    // transactions
    "START TRANSACTION",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    "START TRANSACTION READ ONLY",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE",
    "BEGIN WORK",
    "COMMIT WORK",
    "ROLLBACK",
    "ROLLBACK WORK",
    "SAVEPOINT s1",
    "ROLLBACK TO SAVEPOINT s1",
    "ROLLBACK TO s1",
    "RELEASE SAVEPOINT s1",
    "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "SET GLOBAL TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE",
    "XA START 'x1'",
    "XA END 'x1'",
    "XA PREPARE 'x1'",
    "XA COMMIT 'x1' ONE PHASE",
    "XA ROLLBACK 'x1'",
    "XA RECOVER",
    // SET
    "SET a=1",
    "SET @@session.a=2",
    "SET @@global.a=3",
    "SET GLOBAL a=4",
    "SET SESSION a=5",
    "SET @u=6",
    "SET @u := 7",
    "SET a=DEFAULT",
    "SET autocommit=ON",
    "SET sql_mode=TRADITIONAL",
    "SET a = 1, @@global.b = 2, @c = 3",
    "SET CHARACTER SET utf8mb4",
    "SET CHARSET latin1",
    // other
    "KILL 5",
    "KILL QUERY 7",
    "KILL CONNECTION 8",
    "FLUSH TABLES",
    "FLUSH PRIVILEGES",
    "FLUSH TABLES WITH READ LOCK",
    "DO 1, SLEEP(0)",
    "LOCK TABLES t READ, u WRITE",
    "LOCK TABLE t AS x READ LOCAL",
    "UNLOCK TABLES",
    "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
    "CREATE USER IF NOT EXISTS u2",
    "ALTER USER 'u'@'%' IDENTIFIED BY 'pw2'",
    "DROP USER IF EXISTS 'u'@'%', u2",
    "GRANT ALL PRIVILEGES ON *.* TO 'u'@'%' WITH GRANT OPTION",
    "GRANT SELECT, INSERT ON db.* TO 'u'@'localhost'",
    "REVOKE SELECT ON db.t FROM 'u'@'%'",
    "EXPLAIN SELECT * FROM t WHERE a = 1",
    "EXPLAIN FORMAT=TRADITIONAL SELECT 1",
    "DESCRIBE t",
    "DESC t",
    "EXPLAIN t",
    "EXPLAIN UPDATE t SET a = 1",
];

fn p(sql: &str) -> Statement {
    match parse(sql) {
        Ok(s) => s,
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn col(name: &str) -> Expr {
    Expr::Column {
        table: None,
        name: name.into(),
    }
}

fn qcol(t: &str, name: &str) -> Expr {
    Expr::Column {
        table: Some(t.into()),
        name: name.into(),
    }
}

fn num(n: &str) -> Expr {
    Expr::Literal(Literal::Number(n.into()))
}

fn s(v: &str) -> Expr {
    Expr::Literal(Literal::String {
        bytes: v.as_bytes().to_vec(),
        charset: None,
    })
}

fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
    }
}

fn f(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function {
        name: name.into(),
        args,
        distinct: false,
        star: false,
    }
}

fn between(e: Expr, lo: Expr, hi: Expr) -> Expr {
    Expr::Between {
        expr: Box::new(e),
        low: Box::new(lo),
        high: Box::new(hi),
        negated: false,
    }
}

fn item(expr: Expr, text: &str) -> SelectItem {
    SelectItem::Expr {
        expr,
        alias: None,
        text: text.into(),
    }
}

fn aliased(expr: Expr, alias: &str, text: &str) -> SelectItem {
    SelectItem::Expr {
        expr,
        alias: Some(alias.into()),
        text: text.into(),
    }
}

fn on(name: &str) -> ObjectName {
    ObjectName {
        db: None,
        name: name.into(),
    }
}

fn table(name: &str) -> TableRef {
    TableRef::Table {
        name: on(name),
        alias: None,
        hints: vec![],
    }
}

fn select(items: Vec<SelectItem>, from: Vec<TableRef>) -> Select {
    Select {
        distinct: false,
        items,
        from,
        selection: None,
        group_by: vec![],
        having: None,
        order_by: vec![],
        limit: None,
        offset: None,
        lock: None,
        lock_of: Vec::new(),
        unions: vec![],
    }
}

fn sel(s: Select) -> Statement {
    Statement::Select(Box::new(s))
}

fn sys(scope: VarScope, name: &str) -> Expr {
    Expr::SysVar {
        scope,
        name: name.into(),
    }
}

fn assign(scope: VarScope, name: &str, value: Expr) -> SetAssignment {
    SetAssignment {
        target: SetTarget::System {
            scope,
            name: name.into(),
        },
        value,
    }
}

fn asc(e: Expr) -> OrderItem {
    OrderItem {
        expr: e,
        desc: false,
    }
}

fn ty(name: TypeName, length: Option<u64>) -> ColumnType {
    ColumnType {
        name,
        length,
        scale: None,
        unsigned: false,
        zerofill: false,
        charset: None,
        collate: None,
        values: vec![],
    }
}

fn column(name: &str, t: ColumnType) -> ColumnSpec {
    ColumnSpec {
        name: name.into(),
        ty: t,
        nullable: None,
        default: None,
        default_text: None,
        auto_increment: false,
        on_update_now: false,
        comment: None,
        generated: None,
    }
}

fn key_col(name: &str) -> IndexColumn {
    IndexColumn {
        name: name.into(),
        prefix: None,
        desc: false,
    }
}

#[test]
fn corpus_parses() {
    assert!(CORPUS.len() >= 150, "{}", CORPUS.len());
    for sql in CORPUS {
        p(sql);
    }
}

#[test]
fn no_panic_on_prefixes() {
    for sql in CORPUS {
        for (i, _) in sql.char_indices() {
            let _ = parse(&sql[..i]);
            let _ = split_statements(&sql[..i]);
            let _ = count_params(&sql[..i]);
        }
    }
    for junk in [
        "\u{0}\u{1}'",
        "`",
        "/*!",
        "/*! */",
        "@@",
        "SET @",
        "SHOW COUNT(",
        "((((",
        "X'1",
        "0x",
        "select 1e",
        "ALTER TABLE",
        "KILL",
        "'\\",
    ] {
        let _ = parse(junk);
    }
}

#[test]
fn sysbench_exact() {
    let p0 = Expr::Param(0);
    let p1 = Expr::Param(1);
    let mut point = select(vec![item(col("c"), "c")], vec![table("sbtest1")]);
    point.selection = Some(bin(BinaryOp::Eq, col("id"), p0.clone()));
    assert_eq!(p("SELECT c FROM sbtest1 WHERE id=?"), sel(point));

    let mut range = select(vec![item(col("c"), "c")], vec![table("sbtest1")]);
    range.selection = Some(between(col("id"), p0.clone(), p1.clone()));
    assert_eq!(
        p("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"),
        sel(range.clone())
    );
    range.order_by = vec![asc(col("c"))];
    assert_eq!(
        p("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
        sel(range.clone())
    );
    range.distinct = true;
    assert_eq!(
        p("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
        sel(range)
    );

    let mut sum = select(
        vec![item(f("sum", vec![col("k")]), "SUM(k)")],
        vec![table("sbtest1")],
    );
    sum.selection = Some(between(col("id"), num("1"), num("100")));
    assert_eq!(
        p("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100"),
        sel(sum)
    );

    assert_eq!(
        p("UPDATE sbtest1 SET k=k+1 WHERE id=?"),
        Statement::Update(Box::new(Update {
            table: on("sbtest1"),
            alias: None,
            hints: vec![],
            assignments: vec![("k".into(), bin(BinaryOp::Add, col("k"), num("1")))],
            selection: Some(bin(BinaryOp::Eq, col("id"), p0.clone())),
            order_by: vec![],
            limit: None,
            ignore: false,
        }))
    );
    assert_eq!(
        p("UPDATE sbtest1 SET c=? WHERE id=?"),
        Statement::Update(Box::new(Update {
            table: on("sbtest1"),
            alias: None,
            hints: vec![],
            assignments: vec![("c".into(), p0.clone())],
            selection: Some(bin(BinaryOp::Eq, col("id"), p1.clone())),
            order_by: vec![],
            limit: None,
            ignore: false,
        }))
    );
    assert_eq!(
        p("DELETE FROM sbtest1 WHERE id=?"),
        Statement::Delete(Box::new(Delete {
            table: on("sbtest1"),
            alias: None,
            selection: Some(bin(BinaryOp::Eq, col("id"), p0)),
            order_by: vec![],
            limit: None,
            ignore: false,
        }))
    );
    assert_eq!(
        p("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        Statement::Insert(Box::new(Insert {
            table: on("sbtest1"),
            columns: vec!["id".into(), "k".into(), "c".into(), "pad".into()],
            source: InsertSource::Values(vec![(0..4).map(Expr::Param).collect()]),
            ignore: false,
            replace: false,
            on_duplicate: vec![],
        }))
    );
    assert_eq!(
        p("INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'x', 'y'), (3, 4, 'z', '')"),
        Statement::Insert(Box::new(Insert {
            table: on("sbtest1"),
            columns: vec!["id".into(), "k".into(), "c".into(), "pad".into()],
            source: InsertSource::Values(vec![
                vec![num("1"), num("2"), s("x"), s("y")],
                vec![num("3"), num("4"), s("z"), s("")],
            ]),
            ignore: false,
            replace: false,
            on_duplicate: vec![],
        }))
    );
    let int = ty(TypeName::Int, None);
    let mut id = column("id", int.clone());
    id.nullable = Some(false);
    id.auto_increment = true;
    let mut k = column("k", int);
    k.nullable = Some(false);
    k.default = Some(s("0"));
    let mut c = column("c", ty(TypeName::Char, Some(120)));
    c.nullable = Some(false);
    c.default = Some(s(""));
    let mut pad = column("pad", ty(TypeName::Char, Some(60)));
    pad.nullable = Some(false);
    pad.default = Some(s(""));
    assert_eq!(
        p(CORPUS[22]),
        Statement::CreateTable(Box::new(CreateTable {
            name: on("sbtest1"),
            if_not_exists: false,
            temporary: false,
            columns: vec![id, k, c, pad],
            keys: vec![KeySpec {
                kind: KeyKind::Primary,
                name: None,
                columns: vec![key_col("id")],
            }],
            checks: vec![],
            foreign_keys: vec![],
            options: TableOptions {
                engine: Some("innodb".into()),
                ..TableOptions::default()
            },
            like: None,
            as_select: None,
            on_duplicate: None,
        }))
    );
    assert_eq!(
        p("CREATE INDEX k_1 ON sbtest1(k)"),
        Statement::CreateIndex {
            name: "k_1".into(),
            table: on("sbtest1"),
            columns: vec![key_col("k")],
            unique: false,
        }
    );
    assert_eq!(
        p("BEGIN"),
        Statement::Begin {
            consistent_snapshot: false,
            read_only: false
        }
    );
    assert_eq!(p("COMMIT"), Statement::Commit);
    assert_eq!(
        p("DROP TABLE IF EXISTS sbtest1"),
        Statement::DropTable {
            names: vec![on("sbtest1")],
            if_exists: true,
            temporary: false
        }
    );
    assert_eq!(
        p("ANALYZE TABLE sbtest1"),
        Statement::TableMaintenance {
            op: MaintenanceOp::Analyze,
            tables: vec![on("sbtest1")]
        }
    );
    let derived =
        p("SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT 10000) t");
    let mut inner = select(
        vec![SelectItem::Wildcard],
        vec![TableRef::Table {
            name: on("sbtest1"),
            alias: None,
            hints: vec![IndexHint::Force(vec!["PRIMARY".into()])],
        }],
    );
    inner.limit = Some(num("10000"));
    assert_eq!(
        derived,
        sel(select(
            vec![item(f("avg", vec![col("id")]), "AVG(id)")],
            vec![TableRef::Derived {
                subquery: Box::new(inner),
                alias: "t".into()
            }]
        ))
    );
}

#[test]
fn connect_time_exact() {
    let mut q = select(
        vec![item(
            sys(VarScope::Default, "version_comment"),
            "@@version_comment",
        )],
        vec![],
    );
    q.limit = Some(num("1"));
    assert_eq!(p("select @@version_comment limit 1"), sel(q));
    assert_eq!(
        p("SELECT DATABASE()"),
        sel(select(
            vec![item(f("database", vec![]), "DATABASE()")],
            vec![]
        ))
    );
    assert_eq!(
        p("SET NAMES utf8mb4"),
        Statement::SetNames {
            charset: "utf8mb4".into(),
            collate: None
        }
    );
    assert_eq!(
        p("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'"),
        Statement::SetNames {
            charset: "utf8mb4".into(),
            collate: Some("utf8mb4_bin".into())
        }
    );
    assert_eq!(
        p("SET autocommit=0"),
        Statement::Set(vec![assign(VarScope::Default, "autocommit", num("0"))])
    );
    assert_eq!(
        p("SET AUTOCOMMIT = ON"),
        Statement::Set(vec![assign(VarScope::Default, "autocommit", s("ON"))])
    );
    assert_eq!(
        p("SHOW VARIABLES LIKE 'lower_case_%'"),
        Statement::Show(Show::Variables {
            global: false,
            filter: Some(ShowFilter::Like("lower_case_%".into()))
        })
    );
    assert_eq!(
        p("/* mysql-connector-j */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client"),
        sel(select(
            vec![
                aliased(
                    sys(VarScope::Session, "auto_increment_increment"),
                    "auto_increment_increment",
                    "@@session.auto_increment_increment"
                ),
                aliased(sys(VarScope::Default, "character_set_client"), "character_set_client", "@@character_set_client"),
            ],
            vec![]
        ))
    );
    assert_eq!(
        p("SET character_set_results = NULL"),
        Statement::Set(vec![assign(
            VarScope::Default,
            "character_set_results",
            Expr::Literal(Literal::Null)
        )])
    );
    assert_eq!(
        p("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
        Statement::SetTransaction {
            scope: TrxScope::Session,
            isolation: Some(IsolationLevel::ReadCommitted),
            read_only: None
        }
    );
    assert_eq!(
        p("SET TRANSACTION READ ONLY"),
        Statement::SetTransaction {
            scope: TrxScope::Next,
            isolation: None,
            read_only: Some(true)
        }
    );
    assert_eq!(
        p("SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE"),
        Statement::SetTransaction {
            scope: TrxScope::Global,
            isolation: Some(IsolationLevel::Serializable),
            read_only: Some(false)
        }
    );
    assert_eq!(
        p("SHOW WARNINGS"),
        Statement::Show(Show::Warnings {
            errors_only: false,
            count: false,
            limit: None
        })
    );
    assert_eq!(
        p("SELECT @@version;"),
        sel(select(
            vec![item(sys(VarScope::Default, "version"), "@@version")],
            vec![]
        ))
    );
    assert_eq!(
        p("SHOW GLOBAL STATUS"),
        Statement::Show(Show::Status {
            global: true,
            filter: None
        })
    );
    assert_eq!(
        p("SHOW SLAVE STATUS NONBLOCKING"),
        Statement::Show(Show::Replication("SLAVE STATUS NONBLOCKING".into()))
    );
    assert_eq!(
        p("SHOW ENGINE INNODB STATUS"),
        Statement::Show(Show::EngineStatus {
            engine: "INNODB".into(),
            mutex: false
        })
    );
    // sqlx: NAMES inside a multi-assignment expands to the variables it sets.
    let Statement::Set(list) = p(CORPUS
        .iter()
        .find(|s| s.contains("PIPES_AS_CONCAT"))
        .copied()
        .unwrap_or_default())
    else {
        panic!("not a SET");
    };
    assert_eq!(list.len(), 6);
    assert!(matches!(&list[0].value, Expr::Subquery(_)));
    assert_eq!(list[1], assign(VarScope::Default, "time_zone", s("+00:00")));
    assert_eq!(
        list[5],
        assign(
            VarScope::Session,
            "collation_connection",
            s("utf8mb4_unicode_ci")
        )
    );
}

#[test]
fn show_exact() {
    let show = |sql| match p(sql) {
        Statement::Show(s) => s,
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(
        show("SHOW TABLE STATUS LIKE 'sbtest1'"),
        Show::TableStatus {
            db: None,
            filter: Some(ShowFilter::Like("sbtest1".into()))
        }
    );
    assert_eq!(
        show("SHOW WARNINGS LIMIT 10"),
        Show::Warnings {
            errors_only: false,
            count: false,
            limit: Some((0, 10))
        }
    );
    assert_eq!(
        show("SHOW ERRORS LIMIT 5, 10"),
        Show::Warnings {
            errors_only: true,
            count: false,
            limit: Some((5, 10))
        }
    );
    assert_eq!(
        show("SHOW COUNT(*) WARNINGS"),
        Show::Warnings {
            errors_only: false,
            count: true,
            limit: None
        }
    );
    assert_eq!(
        show("SHOW FULL TABLES FROM db LIKE 'sb%'"),
        Show::Tables {
            db: Some("db".into()),
            full: true,
            filter: Some(ShowFilter::Like("sb%".into()))
        }
    );
    assert_eq!(
        show("SHOW FULL COLUMNS FROM t FROM db LIKE 'c%'"),
        Show::Columns {
            table: ObjectName {
                db: Some("db".into()),
                name: "t".into()
            },
            full: true,
            filter: Some(ShowFilter::Like("c%".into()))
        }
    );
    assert_eq!(
        show("SHOW INDEXES FROM t IN db"),
        Show::Index {
            table: ObjectName {
                db: Some("db".into()),
                name: "t".into()
            }
        }
    );
    assert_eq!(
        show("SHOW VARIABLES WHERE Variable_name = 'a'"),
        Show::Variables {
            global: false,
            filter: Some(ShowFilter::Where(bin(
                BinaryOp::Eq,
                col("Variable_name"),
                s("a")
            )))
        }
    );
    assert_eq!(
        show("SHOW GRANTS FOR 'root'@'localhost'"),
        Show::Grants {
            user: Some(UserName {
                user: "root".into(),
                host: "localhost".into()
            }),
            using: vec![]
        }
    );
    assert_eq!(
        show("SHOW GRANTS FOR u USING r1, 'r2'@'h'"),
        Show::Grants {
            user: Some(UserName {
                user: "u".into(),
                host: "%".into()
            }),
            using: vec![
                UserName {
                    user: "r1".into(),
                    host: "%".into()
                },
                UserName {
                    user: "r2".into(),
                    host: "h".into()
                }
            ]
        }
    );
    assert_eq!(
        show("SHOW CREATE TABLE `my t`"),
        Show::CreateTable(on("my t"))
    );
    assert_eq!(
        show("SHOW FULL PROCESSLIST"),
        Show::Processlist { full: true }
    );
    assert_eq!(
        show("SHOW CHARACTER SET"),
        Show::CharacterSet { filter: None }
    );
    assert_eq!(show("SHOW DATABASES"), Show::Databases { filter: None });
    assert_eq!(
        show("DESC t"),
        Show::Columns {
            table: on("t"),
            full: false,
            filter: None
        }
    );
}

#[test]
fn transactions_and_set_exact() {
    assert_eq!(
        p("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"),
        Statement::Begin {
            consistent_snapshot: true,
            read_only: true
        }
    );
    assert_eq!(
        p("ROLLBACK TO SAVEPOINT s1"),
        Statement::RollbackToSavepoint("s1".into())
    );
    assert_eq!(
        p("RELEASE SAVEPOINT s1"),
        Statement::ReleaseSavepoint("s1".into())
    );
    assert_eq!(p("SAVEPOINT s1"), Statement::Savepoint("s1".into()));
    assert_eq!(p("ROLLBACK WORK"), Statement::Rollback);
    assert_eq!(
        p("SET GLOBAL a=4, b=5, @@session.c=6, @U=7, d=DEFAULT"),
        Statement::Set(vec![
            assign(VarScope::Global, "a", num("4")),
            assign(VarScope::Global, "b", num("5")),
            assign(VarScope::Session, "c", num("6")),
            SetAssignment {
                target: SetTarget::User("u".into()),
                value: num("7")
            },
            assign(VarScope::Global, "d", Expr::Default),
        ])
    );
    assert_eq!(
        p("SET tmp_table_size=2*1024"),
        Statement::Set(vec![assign(
            VarScope::Default,
            "tmp_table_size",
            bin(BinaryOp::Mul, num("2"), num("1024"))
        )])
    );
    assert_eq!(
        p("XA COMMIT 'x1' ONE PHASE"),
        Statement::Xa(XaCommand::Commit {
            xid: b"x1".to_vec(),
            one_phase: true
        })
    );
    assert_eq!(
        p("KILL QUERY 7"),
        Statement::Kill {
            id: num("7"),
            query_only: true
        }
    );
    assert_eq!(
        p("LOCK TABLES t READ, u WRITE"),
        Statement::LockTables(vec![(on("t"), false), (on("u"), true)])
    );
    assert_eq!(
        p("GRANT SELECT, INSERT ON db.* TO 'u'@'localhost'"),
        Statement::Grant {
            privileges: vec!["SELECT".into(), "INSERT".into()],
            columns: vec![],
            on: GrantOn::Database(Some("db".into())),
            users: vec![UserName {
                user: "u".into(),
                host: "localhost".into()
            }]
        }
    );
    let u = || UserName {
        user: "u".into(),
        host: "%".into(),
    };
    assert_eq!(
        p("GRANT ALL PRIVILEGES ON *.* TO u WITH GRANT OPTION"),
        Statement::Grant {
            privileges: vec!["ALL PRIVILEGES".into(), "GRANT OPTION".into()],
            columns: vec![],
            on: GrantOn::Global,
            users: vec![u()]
        }
    );
    assert_eq!(
        p("REVOKE SELECT, SHOW VIEW ON TABLE `d`.`t` FROM u"),
        Statement::Revoke {
            privileges: vec!["SELECT".into(), "SHOW VIEW".into()],
            columns: vec![],
            on: GrantOn::Table(ObjectName {
                db: Some("d".into()),
                name: "t".into()
            }),
            users: vec![u()]
        }
    );
    assert_eq!(
        p("GRANT INSERT ON * TO u"),
        Statement::Grant {
            privileges: vec!["INSERT".into()],
            columns: vec![],
            on: GrantOn::Database(None),
            users: vec![u()]
        }
    );
    assert_eq!(
        p("GRANT SELECT (a, `b c`), UPDATE (a), INSERT ON d.t TO u"),
        Statement::Grant {
            privileges: vec!["INSERT".into()],
            columns: vec![
                ("SELECT".into(), vec!["a".into(), "b c".into()]),
                ("UPDATE".into(), vec!["a".into()])
            ],
            on: GrantOn::Table(ObjectName {
                db: Some("d".into()),
                name: "t".into()
            }),
            users: vec![u()]
        }
    );
    assert_eq!(
        p("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u, v"),
        Statement::RevokeAll {
            users: vec![
                u(),
                UserName {
                    user: "v".into(),
                    host: "%".into()
                }
            ]
        }
    );
    assert!(parse("REVOKE SELECT FROM u").is_err());
    assert!(parse("GRANT SELECT ON *.t TO u").is_err());
    assert_eq!(
        p("CREATE USER 'u'@'%' IDENTIFIED BY 'pw'"),
        Statement::CreateUser {
            if_not_exists: false,
            users: vec![(
                UserName {
                    user: "u".into(),
                    host: "%".into()
                },
                Some(UserAuth {
                    password: Some("pw".into()),
                    ..UserAuth::default()
                })
            )]
        }
    );
    let Statement::AlterUser { users, .. } =
        p("ALTER USER u IDENTIFIED WITH Mysql_Native_Password AS '*0123'")
    else {
        panic!("not an ALTER USER");
    };
    assert_eq!(
        users[0].1,
        Some(UserAuth {
            plugin: Some("mysql_native_password".into()),
            password: None,
            hash: Some("*0123".into())
        })
    );
    assert!(parse("CREATE USER u IDENTIFIED AS 'x'").is_err());
    assert!(matches!(
        p(
            "CREATE USER `u`@`%` IDENTIFIED WITH 'caching_sha2_password' REQUIRE NONE PASSWORD \
           EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL \
           DEFAULT PASSWORD REQUIRE CURRENT DEFAULT"
        ),
        Statement::CreateUser { .. }
    ));
    assert!(parse("CREATE USER u ACCOUNT LOCK").is_err());
    let un = |u: &str, h: &str| UserName {
        user: u.into(),
        host: h.into(),
    };
    assert_eq!(
        p("CREATE ROLE IF NOT EXISTS r1, 'r2'@'localhost'"),
        Statement::CreateRole {
            if_not_exists: true,
            roles: vec![un("r1", "%"), un("r2", "localhost")]
        }
    );
    assert_eq!(
        p("GRANT r1, r2 TO u WITH ADMIN OPTION"),
        Statement::GrantRole {
            roles: vec![un("r1", "%"), un("r2", "%")],
            users: vec![un("u", "%")],
            admin: true
        }
    );
    assert_eq!(
        p("REVOKE r1 FROM u"),
        Statement::RevokeRole {
            roles: vec![un("r1", "%")],
            users: vec![un("u", "%")]
        }
    );
    assert!(matches!(
        p("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u"),
        Statement::RevokeAll { .. }
    ));
    assert_eq!(
        p("SET ROLE ALL EXCEPT r1"),
        Statement::SetRole(RoleSpec::All(vec![un("r1", "%")]))
    );
    assert_eq!(p("SET ROLE DEFAULT"), Statement::SetRole(RoleSpec::Default));
    assert_eq!(
        p("SET DEFAULT ROLE r1 TO u"),
        Statement::SetDefaultRole {
            spec: RoleSpec::List(vec![un("r1", "%")]),
            users: vec![un("u", "%")]
        }
    );
    assert_eq!(
        p("ALTER USER u DEFAULT ROLE NONE"),
        Statement::SetDefaultRole {
            spec: RoleSpec::None,
            users: vec![un("u", "%")]
        }
    );
    assert_eq!(
        p("SHOW CREATE USER 'a'@'localhost'"),
        Statement::Show(Show::CreateUser(UserName {
            user: "a".into(),
            host: "localhost".into()
        }))
    );
    assert_eq!(
        p("RENAME TABLE a TO b, c TO d"),
        Statement::RenameTable(vec![(on("a"), on("b")), (on("c"), on("d"))])
    );
    assert_eq!(
        p("CREATE DATABASE IF NOT EXISTS d DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
        Statement::CreateDatabase {
            name: "d".into(),
            if_not_exists: true,
            charset: Some("utf8mb4".into()),
            collate: Some("utf8mb4_bin".into())
        }
    );
    assert_eq!(p("USE `my db`"), Statement::Use("my db".into()));
}

#[test]
fn dml_exact() {
    // Hermitage
    let mut q = select(vec![SelectItem::Wildcard], vec![table("test")]);
    q.selection = Some(bin(
        BinaryOp::Eq,
        bin(BinaryOp::Mod, col("value"), num("3")),
        num("0"),
    ));
    assert_eq!(p("select * from test where value % 3 = 0"), sel(q.clone()));
    assert_eq!(p("select * from test where value MOD 3 = 0"), sel(q));
    let mut q = select(vec![SelectItem::Wildcard], vec![table("test")]);
    q.selection = Some(Expr::InList {
        expr: Box::new(col("id")),
        list: vec![num("1"), num("2")],
        negated: false,
    });
    q.lock = Some(LockClause::ForUpdate {
        nowait: false,
        skip_locked: false,
    });
    assert_eq!(
        p("select * from test where id in (1,2) for update"),
        sel(q.clone())
    );
    q.lock = Some(LockClause::ForShare {
        nowait: false,
        skip_locked: false,
    });
    assert_eq!(
        p("select * from test where id in (1,2) LOCK IN SHARE MODE"),
        sel(q)
    );

    let Statement::Insert(i) =
        p("INSERT INTO t (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE b = VALUES(b)")
    else {
        panic!()
    };
    assert_eq!(i.on_duplicate, vec![("b".into(), Expr::Values("b".into()))]);
    let Statement::Insert(i) = p("INSERT INTO t SET a = 1, b = DEFAULT") else {
        panic!()
    };
    assert_eq!(i.columns, vec!["a".to_string(), "b".into()]);
    assert_eq!(
        i.source,
        InsertSource::Values(vec![vec![num("1"), Expr::Default]])
    );
    let Statement::Insert(i) = p("REPLACE INTO t VALUES (1)") else {
        panic!()
    };
    assert!(i.replace && !i.ignore);
    let Statement::Update(u) = p("UPDATE IGNORE t SET a = 1 ORDER BY c DESC LIMIT 10") else {
        panic!()
    };
    assert!(u.ignore);
    assert_eq!(u.table, on("t"));
    assert_eq!(
        u.order_by,
        vec![OrderItem {
            expr: col("c"),
            desc: true
        }]
    );
    assert_eq!(u.limit, Some(num("10")));

    let Statement::Select(q) = p(
        "SELECT a, b AS bb, t.c, db.t.d FROM db.t AS x JOIN u ON x.a = u.a LEFT JOIN v USING (a)",
    ) else {
        panic!()
    };
    assert_eq!(
        q.items,
        vec![
            item(col("a"), "a"),
            aliased(col("b"), "bb", "b"),
            item(qcol("t", "c"), "t.c"),
            item(qcol("t", "d"), "db.t.d")
        ]
    );
    let TableRef::Join {
        left, kind, using, ..
    } = &q.from[0]
    else {
        panic!()
    };
    assert_eq!(*kind, JoinKind::Left);
    assert_eq!(using, &vec!["a".to_string()]);
    let TableRef::Join {
        left,
        on: cond,
        kind,
        ..
    } = left.as_ref()
    else {
        panic!()
    };
    assert_eq!(*kind, JoinKind::Inner);
    assert_eq!(
        cond,
        &Some(bin(BinaryOp::Eq, qcol("x", "a"), qcol("u", "a")))
    );
    assert_eq!(
        left.as_ref(),
        &TableRef::Table {
            name: ObjectName {
                db: Some("db".into()),
                name: "t".into()
            },
            alias: Some("x".into()),
            hints: vec![]
        }
    );

    let Statement::Select(q) =
        p("SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v ORDER BY 1 LIMIT 2")
    else {
        panic!()
    };
    // ORDER BY and LIMIT of the whole UNION: a SELECT * over it as a derived table.
    assert_eq!(q.limit, Some(num("2")));
    assert_eq!((q.items.len(), q.order_by.len()), (1, 1));
    let [TableRef::Derived { subquery: u, .. }] = &q.from[..] else {
        panic!("{:?}", q.from)
    };
    assert_eq!(u.unions.len(), 2);
    assert!(u.unions[0].0 && !u.unions[1].0);
    assert_eq!((u.limit.as_ref(), u.order_by.len()), (None, 0));

    let Statement::Select(q) = p("SELECT a FROM t LIMIT 10, 20") else {
        panic!()
    };
    assert_eq!((q.offset, q.limit), (Some(num("10")), Some(num("20"))));
    let Statement::Select(q) = p("SELECT a FROM t LIMIT 20 OFFSET 10") else {
        panic!()
    };
    assert_eq!((q.offset, q.limit), (Some(num("10")), Some(num("20"))));
}

#[test]
fn expressions_exact() {
    let items = |sql| match p(sql) {
        Statement::Select(s) => s
            .items
            .into_iter()
            .map(|i| match i {
                SelectItem::Expr { expr, .. } => expr,
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        items("SELECT _utf8mb4'x', _binary'y', X'0A0B', 0xFF, b'101', TRUE, NULL, 1.5e3, -2, \"dq\", 'it\\'s'"),
        vec![
            Expr::Literal(Literal::String {
                bytes: b"x".to_vec(),
                charset: Some("utf8mb4".into())
            }),
            Expr::Literal(Literal::String {
                bytes: b"y".to_vec(),
                charset: Some("binary".into())
            }),
            Expr::Literal(Literal::Hex(vec![0x0a, 0x0b])),
            Expr::Literal(Literal::Hex(vec![0xff])),
            Expr::Literal(Literal::Hex(vec![5])),
            Expr::Literal(Literal::Bool(true)),
            Expr::Literal(Literal::Null),
            num("1.5e3"),
            Expr::Unary {
                op: UnaryOp::Neg,
                expr: Box::new(num("2"))
            },
            s("dq"),
            s("it's"),
        ]
    );
    assert_eq!(
        items("SELECT 10 DIV 3, a <=> NULL, a XOR b, COUNT(*), COUNT(DISTINCT a), @u, @@global.x"),
        vec![
            bin(BinaryOp::IntDiv, num("10"), num("3")),
            bin(BinaryOp::NullSafeEq, col("a"), Expr::Literal(Literal::Null)),
            bin(BinaryOp::Xor, col("a"), col("b")),
            Expr::Function {
                name: "count".into(),
                args: vec![],
                distinct: false,
                star: true
            },
            Expr::Function {
                name: "count".into(),
                args: vec![col("a")],
                distinct: true,
                star: false
            },
            Expr::UserVar("u".into()),
            sys(VarScope::Global, "x"),
        ]
    );
    assert_eq!(
        items("SELECT CURRENT_TIMESTAMP, NOW(), CURRENT_DATE, SUBSTRING(s FROM 2 FOR 3), POSITION('a' IN s), EXTRACT(YEAR FROM d)"),
        vec![
            f("now", vec![]),
            f("now", vec![]),
            f("curdate", vec![]),
            f("substring", vec![col("s"), num("2"), num("3")]),
            f("locate", vec![s("a"), col("s")]),
            f("extract", vec![s("year"), col("d")]),
        ]
    );
    assert_eq!(
        items("SELECT CAST(a AS UNSIGNED), CONVERT(b, DECIMAL(10,2)), CONVERT(c USING utf8mb4), d - INTERVAL 2 HOUR"),
        vec![
            Expr::Cast {
                expr: Box::new(col("a")),
                ty: CastType::Unsigned
            },
            Expr::Cast {
                expr: Box::new(col("b")),
                ty: CastType::Decimal(Some(10), Some(2))
            },
            Expr::Cast {
                expr: Box::new(col("c")),
                ty: CastType::Char(None, Some("utf8mb4".into()))
            },
            bin(
                BinaryOp::Sub,
                col("d"),
                Expr::Interval {
                    value: Box::new(num("2")),
                    unit: IntervalUnit::Hour
                }
            ),
        ]
    );
    // The column name is the item as written.
    let Statement::Select(q) = p("SELECT 1 + 1, COUNT( * ) AS n, (SELECT a FROM t), `x`") else {
        panic!()
    };
    let texts: Vec<_> = q
        .items
        .iter()
        .map(|i| match i {
            SelectItem::Expr { text, .. } => text.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(
        texts,
        vec!["1 + 1", "COUNT( * )", "(SELECT a FROM t)", "`x`"]
    );
}

#[test]
fn ddl_exact() {
    let Statement::CreateTable(t) = p(CORPUS
        .iter()
        .find(|s| s.starts_with("CREATE TABLE `t2`"))
        .copied()
        .unwrap_or_default())
    else {
        panic!()
    };
    let mut id_ty = ty(TypeName::BigInt, Some(20));
    id_ty.unsigned = true;
    let mut id = column("id", id_ty);
    id.nullable = Some(false);
    id.auto_increment = true;
    let mut name_ty = ty(TypeName::VarChar, Some(64));
    name_ty.charset = Some("utf8mb4".into());
    name_ty.collate = Some("utf8mb4_bin".into());
    let mut name = column("name", name_ty);
    name.nullable = Some(false);
    name.default = Some(s(""));
    name.comment = Some("the name".into());
    let mut ts = column("ts", ty(TypeName::Timestamp, None));
    ts.nullable = Some(false);
    ts.default = Some(f("now", vec![]));
    ts.on_update_now = true;
    assert_eq!(t.columns, vec![id, name, ts]);
    assert_eq!(
        t.keys,
        vec![
            KeySpec {
                kind: KeyKind::Primary,
                name: None,
                columns: vec![key_col("id")]
            },
            KeySpec {
                kind: KeyKind::Unique,
                name: Some("uk".into()),
                columns: vec![IndexColumn {
                    name: "name".into(),
                    prefix: Some(10),
                    desc: true
                }]
            },
            KeySpec {
                kind: KeyKind::Index,
                name: Some("k_ts".into()),
                columns: vec![key_col("ts")]
            },
            KeySpec {
                kind: KeyKind::Fulltext,
                name: Some("ft".into()),
                columns: vec![key_col("name")]
            },
        ]
    );
    assert_eq!(
        t.options,
        TableOptions {
            engine: Some("InnoDB".into()),
            row_format: Some("COMPRESSED".into()),
            charset: Some("utf8mb4".into()),
            collate: Some("utf8mb4_bin".into()),
            auto_increment: Some(100),
            key_block_size: Some(8),
            comment: Some("tbl".into()),
        }
    );

    let Statement::CreateTable(t) = p(CORPUS
        .iter()
        .find(|s| s.starts_with("CREATE TABLE t (a TINYINT"))
        .copied()
        .unwrap_or_default())
    else {
        panic!()
    };
    let names: Vec<TypeName> = t.columns.iter().map(|c| c.ty.name).collect();
    use TypeName::*;
    assert_eq!(
        names,
        vec![
            TinyInt, SmallInt, MediumInt, Int, BigInt, Bool, Bool, Decimal, Decimal, Float, Double,
            Bit, Char, VarChar, Binary, VarBinary, TinyText, Text, MediumText, LongText, TinyBlob,
            Blob, MediumBlob, LongBlob, Date, DateTime, Timestamp, Time, Year, Enum, Set, Json
        ]
    );
    let d = &t.columns[3].ty;
    assert!(d.unsigned && d.zerofill && d.length == Some(11));
    assert!(!t.columns[2].ty.zerofill && !t.columns[4].ty.zerofill);
    assert_eq!(
        (t.columns[7].ty.length, t.columns[7].ty.scale),
        (Some(10), Some(2))
    );
    assert_eq!(t.columns[25].ty.length, Some(6));
    assert_eq!(
        t.columns[29].ty.values,
        vec!["a".to_string(), "b".into(), "c".into()]
    );

    let Statement::CreateTable(t) =
        p("CREATE TEMPORARY TABLE IF NOT EXISTS tmp (a INT PRIMARY KEY, b INT UNIQUE)")
    else {
        panic!()
    };
    assert!(t.temporary && t.if_not_exists);
    assert_eq!(t.keys.len(), 2);
    assert_eq!(t.keys[1].kind, KeyKind::Unique);

    assert_eq!(
        p("ALTER TABLE t ADD COLUMN z INT NOT NULL DEFAULT 0 AFTER a"),
        Statement::AlterTable {
            table: on("t"),
            ops: vec![AlterOp::AddColumn {
                column: ColumnSpec {
                    nullable: Some(false),
                    default: Some(num("0")),
                    ..column("z", ty(TypeName::Int, None))
                },
                position: Some(Some("a".into()))
            }]
        }
    );
    assert_eq!(
        p("ALTER TABLE t ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=4"),
        Statement::AlterTable {
            table: on("t"),
            ops: vec![AlterOp::Options(TableOptions {
                row_format: Some("COMPRESSED".into()),
                key_block_size: Some(4),
                ..TableOptions::default()
            })]
        }
    );
    assert_eq!(
        p("ALTER TABLE t DROP PRIMARY KEY"),
        Statement::AlterTable {
            table: on("t"),
            ops: vec![AlterOp::DropPrimaryKey]
        }
    );
    assert_eq!(
        p("ALTER TABLE t MODIFY a BIGINT FIRST, CHANGE COLUMN b c INT AFTER a, DROP COLUMN d"),
        Statement::AlterTable {
            table: on("t"),
            ops: vec![
                AlterOp::ChangeColumn {
                    old: "a".into(),
                    column: column("a", ty(TypeName::BigInt, None)),
                    position: Some(None),
                },
                AlterOp::ChangeColumn {
                    old: "b".into(),
                    column: column("c", ty(TypeName::Int, None)),
                    position: Some(Some("a".into())),
                },
                AlterOp::DropColumn("d".into()),
            ]
        }
    );
    for sql in ["ALTER TABLE t RENAME d2.u", "ALTER TABLE t RENAME TO d2.u"] {
        assert_eq!(
            p(sql),
            Statement::AlterTable {
                table: on("t"),
                ops: vec![AlterOp::RenameTo(ObjectName {
                    db: Some("d2".into()),
                    name: "u".into()
                })]
            },
            "{sql}"
        );
    }
    assert_eq!(
        p("DROP INDEX k_1 ON sbtest1"),
        Statement::DropIndex {
            name: "k_1".into(),
            table: on("sbtest1")
        }
    );
    assert_eq!(p("TRUNCATE t"), Statement::TruncateTable(on("t")));
    let Statement::CreateTable(t) = p("CREATE TABLE t3 LIKE t2") else {
        panic!()
    };
    assert_eq!(t.like, Some(on("t2")));
}

#[test]
fn placeholders_in_text_order() {
    for sql in [
        "INSERT INTO t (a, b, c) VALUES (?, ?, ?), (?, ?, ?)",
        "UPDATE t SET a = ?, b = ? WHERE c = ? AND d = ? LIMIT ?",
        "SELECT ?, a + ? FROM t WHERE b = ? AND c IN (?, ?) ORDER BY ? LIMIT ?",
        "SELECT a FROM t WHERE b = ? LIMIT ? OFFSET ?",
        "SELECT (SELECT ? FROM u WHERE x = ?) FROM t WHERE y = ? AND z = (SELECT ?)",
        "INSERT INTO t (a) VALUES (?) ON DUPLICATE KEY UPDATE a = ?",
        "SET @a = ?, @b = ?",
        "SELECT ? FROM t WHERE a = ? LOCK IN SHARE MODE",
        "SELECT a MOD ?, ? FROM t",
    ] {
        let stmt = p(sql);
        let n = count_params(sql);
        let debug = format!("{stmt:?}");
        let mut found: Vec<usize> = Vec::new();
        let mut rest = debug.as_str();
        while let Some(pos) = rest.find("Param(") {
            rest = &rest[pos + 6..];
            let end = rest.find(')').unwrap_or(0);
            found.push(rest[..end].parse().unwrap_or(usize::MAX));
        }
        let mut sorted = found.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "{sql}");
        // Debug prints fields in lowering order, which here is text order too.
        assert_eq!(found, (0..n).collect::<Vec<_>>(), "{sql}");
    }
    let Statement::Select(q) = p("SELECT a FROM t WHERE b = ? LIMIT ?, ?") else {
        panic!()
    };
    assert_eq!(
        (q.offset, q.limit),
        (Some(Expr::Param(1)), Some(Expr::Param(2)))
    );
    assert_eq!(
        count_params("SELECT '?', `?`, \"?\" -- ?\n, ? /* ? */ # ?"),
        1
    );
}

#[test]
fn errors() {
    let e = parse("").unwrap_err();
    assert_eq!(e.code, 1065);
    // Comments alone: a statement that does nothing (MySQL's SQLCOM_EMPTY_QUERY).
    assert!(matches!(parse(" /* c */ -- x\n"), Ok(Statement::Do(v)) if v.is_empty()));
    assert_eq!(parse(";").unwrap_err().code, 1065);
    let near = |sql: &str| {
        let e = parse(sql).unwrap_err();
        assert_eq!(e.code, 1064, "{sql}: {e}");
        assert!(
            e.message
                .starts_with("You have an error in your SQL syntax; check the manual"),
            "{e}"
        );
        e.message
    };
    assert!(
        near("SELECT * FORM t").contains("near 'FORM t' at line 1"),
        "{}",
        near("SELECT * FORM t")
    );
    assert!(near("SELEC 1").contains("near 'SELEC 1' at line 1"));
    assert!(near("SELECT 1 +").contains("near '' at line 1"));
    let m = near("SELECT a,\nb FROM t GROUP x");
    assert!(m.contains("x' at line 2"), "{m}");
    assert!(near("SELECT 'abc").contains("near ''abc' at line 1"));
    assert!(near("SHOW TABLES FROM").contains("near '' at line 1"));
    assert!(near("SET @@foo.x = 1").contains("near"));
    assert!(near("START TRANSACTION BOGUS").contains("near 'BOGUS' at line 1"));
    assert!(near("SELECT 1; SELECT 2").contains("near 'SELECT 2' at line 1"));
    assert!(near("SHOW VARIABLES WHERE a = = 1").contains("near '= 1'"));
    // LIMIT takes unsigned integers and `?` only; an empty column list is a syntax error.
    near("SELECT 1 LIMIT -1");
    near("SELECT 1 LIMIT 'a'");
    near("SELECT 1 LIMIT 1 OFFSET -2");
    near("CREATE TABLE t ()");
    assert!(parse("SELECT 1 LIMIT 2, 3").is_ok());
    assert!(parse("SELECT 1 LIMIT ?").is_ok());
    // Column names: no trailing space (1166), at most 64 characters (1059).
    assert_eq!(
        parse("CREATE TABLE t (`a ` INT)").map_err(|e| e.code).err(),
        Some(1166)
    );
    let long = format!("CREATE TABLE t ({} INT)", "c".repeat(65));
    assert_eq!(parse(&long).map_err(|e| e.code).err(), Some(1059));
    assert!(parse(&format!("CREATE TABLE t ({} INT)", "c".repeat(64))).is_ok());
    assert_eq!(
        parse("CREATE TABLE t (a VARCHAR(5) AUTO_INCREMENT PRIMARY KEY)")
            .map_err(|e| e.code)
            .err(),
        Some(1063)
    );
    assert!(parse("CREATE TABLE t (a BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY)").is_ok());
    assert_eq!(
        parse("PREPARE S FROM @q").unwrap(),
        Statement::Prepare {
            name: "s".into(),
            source: PrepareSource::UserVar("q".into())
        }
    );
    assert_eq!(
        parse("EXECUTE s USING @a, @B").unwrap(),
        Statement::Execute {
            name: "s".into(),
            using: vec!["a".into(), "b".into()]
        }
    );
    assert_eq!(
        parse("DROP PREPARE s").unwrap(),
        Statement::DeallocatePrepare("s".into())
    );
    for sql in ["PREPARE s 'x'", "EXECUTE s USING a", "DEALLOCATE s"] {
        assert_eq!(parse(sql).map_err(|e| e.code), Err(1064), "{sql}");
    }
    for sql in [
        "LOAD DATA INFILE 'x' INTO TABLE t CHARACTER SET latin1",
        "SELECT 1 INTO OUTFILE 'x' CHARACTER SET latin1",
        "SELECT SUM(a) OVER (ORDER BY a GROUPS 1 PRECEDING) FROM t",
    ] {
        assert_eq!(parse(sql).map_err(|e| e.code), Err(1235), "{sql}");
    }
    let ld = |sql: &str| match parse(sql) {
        Ok(Statement::LoadData(ld)) => *ld,
        other => panic!("{sql}: {other:?}"),
    };
    let l = ld(
        "LOAD DATA LOCAL INFILE '/f.csv' REPLACE INTO TABLE d.t FIELDS TERMINATED BY ',' \
         OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES STARTING BY '>' TERMINATED BY '\\r\\n' \
         IGNORE 2 LINES (a, @b) SET c = @b + 1",
    );
    assert!(l.local);
    assert_eq!(l.duplicates, Some(true));
    assert_eq!(
        (
            l.format.field_end.as_slice(),
            l.format.enclosed,
            l.format.escaped
        ),
        (&b","[..], Some(b'"'), None)
    );
    assert_eq!(
        (l.format.line_start.as_slice(), l.format.line_end.as_slice()),
        (&b">"[..], &b"\r\n"[..])
    );
    assert!(l.format.optionally);
    assert_eq!(l.skip, 2);
    assert_eq!(
        l.targets,
        [LoadTarget::Column("a".into()), LoadTarget::Var("b".into())]
    );
    assert_eq!(l.sets.len(), 1);
    assert_eq!(
        parse("LOAD DATA INFILE 'x' INTO TABLE t FIELDS ENCLOSED BY 'ab'").map_err(|e| e.code),
        Err(1083)
    );
    assert_eq!(parse("SELECT * FROM (SELECT 1)").unwrap_err().code, 1248);
}

#[test]
fn splitting() {
    assert_eq!(
        split_statements("SELECT 1; SELECT 2"),
        vec!["SELECT 1", "SELECT 2"]
    );
    assert_eq!(
        split_statements("SELECT ';'; SELECT \";\" ;"),
        vec!["SELECT ';'", "SELECT \";\""]
    );
    assert_eq!(
        split_statements("SELECT `a;b` FROM t;;  ; "),
        vec!["SELECT `a;b` FROM t"]
    );
    assert_eq!(
        split_statements("SELECT 'it\\';s'; SELECT 2"),
        vec!["SELECT 'it\\';s'", "SELECT 2"]
    );
    assert_eq!(
        split_statements("SELECT 1 -- a;b\n; SELECT 2 # c;d\n"),
        vec!["SELECT 1 -- a;b", "SELECT 2 # c;d"]
    );
    assert_eq!(
        split_statements("SELECT 1 /* ; */; /* only a comment */"),
        vec!["SELECT 1 /* ; */"]
    );
    assert_eq!(split_statements("SELECT 1 /*! ; */"), vec!["SELECT 1 /*!"]);
    assert_eq!(
        split_statements("SELECT 1--1; SELECT 2"),
        vec!["SELECT 1--1", "SELECT 2"]
    );
    assert_eq!(split_statements(""), Vec::<&str>::new());
    assert_eq!(split_statements(" \n\t "), Vec::<&str>::new());
    assert_eq!(
        split_statements("  INSERT INTO t VALUES (1, 'a-b', -2)\n"),
        vec!["INSERT INTO t VALUES (1, 'a-b', -2)"]
    );
    assert_eq!(split_statements("-- only a comment"), Vec::<&str>::new());
    assert_eq!(split_statements("# only a comment"), Vec::<&str>::new());
    assert_eq!(split_statements("SELECT 1 -- c"), vec!["SELECT 1 -- c"]);
    assert_eq!(
        split_statements("SELECT 'unterminated; SELECT 2"),
        vec!["SELECT 'unterminated; SELECT 2"]
    );
}

/// Release-mode timing: `cargo test -p innoxide-sql --release -- --ignored timing --nocapture`.
#[test]
#[ignore]
fn timing() {
    for sql in [
        "SELECT c FROM sbtest1 WHERE id=?",
        "UPDATE sbtest1 SET k=k+1 WHERE id=?",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "BEGIN",
    ] {
        let n = 100_000;
        let start = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(parse(std::hint::black_box(sql)).is_ok());
        }
        println!(
            "{:>8.2} µs  {sql}",
            start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        );
    }
}

#[test]
fn select_into_variables() {
    let Statement::SelectInto(q, vars) = p("SELECT a, b INTO @x, @`Y` FROM t WHERE a = 1") else {
        panic!()
    };
    assert_eq!(vars, vec!["x".to_string(), "y".to_string()]);
    assert_eq!(q.items.len(), 2);
    assert!(q.selection.is_some());
    let Statement::SelectInto(_, vars) = p("SELECT a FROM t LIMIT 1 INTO @v") else {
        panic!()
    };
    assert_eq!(vars, vec!["v".to_string()]);
    let Statement::SelectOutfile(q, e) =
        p("SELECT a INTO OUTFILE '/tmp/x' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' FROM t WHERE a > 1")
    else {
        panic!()
    };
    assert!(q.selection.is_some() && !e.dump);
    assert_eq!(
        (e.file.as_str(), e.format.field_end.as_slice()),
        ("/tmp/x", &b","[..])
    );
    assert!(e.format.optionally && e.format.enclosed == Some(b'"'));
    let Statement::SelectOutfile(_, e) = p("SELECT a FROM t LIMIT 1 INTO DUMPFILE '/tmp/y'") else {
        panic!()
    };
    assert!(e.dump && e.file == "/tmp/y");
    // INTO inside a subquery or an INSERT is not this clause.
    assert!(matches!(p("INSERT INTO t SELECT 1"), Statement::Insert(_)));
}

#[test]
fn group_concat_clauses() {
    let Statement::Select(q) =
        p("SELECT GROUP_CONCAT(DISTINCT a, b ORDER BY a DESC, b SEPARATOR '-') FROM t")
    else {
        panic!()
    };
    let SelectItem::Expr { expr, .. } = &q.items[0] else {
        panic!()
    };
    assert_eq!(
        expr,
        &Expr::GroupConcat {
            args: vec![col("a"), col("b")],
            distinct: true,
            order_by: vec![
                OrderItem {
                    expr: col("a"),
                    desc: true
                },
                asc(col("b"))
            ],
            separator: Some(b"-".to_vec()),
        }
    );
}

#[test]
fn natural_join_and_quantified_comparisons() {
    let Statement::Select(q) =
        p("SELECT * FROM a NATURAL LEFT JOIN b WHERE x > ALL (SELECT y FROM c)")
    else {
        panic!()
    };
    let TableRef::Join { kind, natural, .. } = &q.from[0] else {
        panic!()
    };
    assert_eq!((*kind, *natural), (JoinKind::Left, true));
    assert!(matches!(
        q.selection,
        Some(Expr::Quantified {
            op: BinaryOp::Gt,
            all: true,
            ..
        })
    ));
    let Statement::CreateTable(ct) = p("CREATE TABLE t (PRIMARY KEY (a)) REPLACE SELECT a FROM s")
    else {
        panic!()
    };
    assert_eq!(ct.on_duplicate, Some(true));
    assert!(ct.as_select.is_some());
}

#[test]
fn latin1_statements() {
    assert_eq!(
        super::latin1_statement(b"SELECT 'caf\xe9 \x80', _binary'\x80\\'\xe9', _BINARY \"\x00\""),
        "SELECT 'café €', X'8027E9', X'00'"
    );
    // Inside another string or a comment, `_binary` is text.
    assert_eq!(
        super::latin1_statement(b"SELECT '_binary' /* _binary'\xe9' */"),
        "SELECT '_binary' /* _binary'é' */"
    );
}

#[test]
fn utf8_statements_keep_the_bytes_of_binary_literals() {
    // Valid UTF-8 is the text itself.
    assert_eq!(super::utf8_statement("SELECT 'é'".as_bytes()), "SELECT 'é'");
    // mysqldump writes BLOB bytes into string literals as they are: the literal becomes hex,
    // its escapes resolved; other literals and the rest stay text.
    assert_eq!(
        super::utf8_statement(b"INSERT INTO t VALUES ('\\0\xff\\n\\'', 'caf\xc3\xa9', \"\x80\")"),
        "INSERT INTO t VALUES (X'00FF0A27', 'café', X'80')"
    );
    // Outside literals, invalid bytes are replacement characters.
    assert_eq!(
        super::utf8_statement(b"SELECT 1 -- \xff"),
        "SELECT 1 -- \u{fffd}"
    );
}

#[test]
fn ctes_are_inlined_as_derived_tables() {
    let Statement::Select(q) =
        p("WITH a AS (SELECT 1 AS v), b (w) AS (SELECT v FROM a) SELECT w FROM b x")
    else {
        panic!("not a SELECT");
    };
    let [TableRef::Derived { subquery, alias }] = q.from.as_slice() else {
        panic!("{:?}", q.from);
    };
    assert_eq!(alias, "x");
    // b's body reads a, inlined in turn; b's column list renamed its item.
    assert!(matches!(&subquery.items[0], SelectItem::Expr { alias: Some(w), .. } if w == "w"));
    assert!(matches!(subquery.from.as_slice(), [TableRef::Derived { alias, .. }] if alias == "a"));
    let code = |sql: &str| parse(sql).map(|_| 0).unwrap_or_else(|e| e.code);
    assert_eq!(code("WITH c (a, b) AS (SELECT 1) SELECT * FROM c"), 1353);
    assert_eq!(
        code("WITH c AS (SELECT 1), c AS (SELECT 2) SELECT * FROM c"),
        1066
    );
    // WITH RECURSIVE: a CTE that does not read itself is inlined as any other; one that does
    // is split into its anchor and recursive SELECTs, which must come after the anchor (3573).
    let Statement::Select(q) = p("WITH RECURSIVE c AS (SELECT 1) SELECT * FROM c") else {
        panic!("not a SELECT");
    };
    assert!(matches!(q.from.as_slice(), [TableRef::Derived { .. }]));
    let Statement::Select(q) = p(
        "WITH RECURSIVE n (x) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT x + 1 FROM n) \
         SELECT * FROM n AS m",
    ) else {
        panic!("not a SELECT");
    };
    let [TableRef::Recursive { cte, alias }] = q.from.as_slice() else {
        panic!("{q:?}");
    };
    assert_eq!(
        (alias.as_str(), cte.name.as_str(), cte.distinct),
        ("m", "n", false)
    );
    assert_eq!((cte.anchor.unions.len(), cte.recursive.len()), (1, 1));
    assert!(
        matches!(&cte.recursive[0].from[..], [TableRef::Table { name, .. }] if name.name == "n")
    );
    assert_eq!(
        code("WITH RECURSIVE n AS (SELECT x FROM n UNION SELECT 1) SELECT * FROM n"),
        3573
    );
    // A qualified name is a table, not the CTE.
    let Statement::Select(q) = p("WITH t AS (SELECT 1) SELECT * FROM d.t") else {
        panic!("not a SELECT");
    };
    assert!(matches!(q.from.as_slice(), [TableRef::Table { .. }]));
}

/// `sql` takes the short path `fast`, which makes of it what the general path makes, as
/// `parse` does.
fn short_path_matches(sql: &str, fast: impl Fn(&str, &[lexer::Token]) -> Option<Statement>) {
    let tokens = lexer::tokenize(sql);
    let taken = fast(sql, &tokens).unwrap_or_else(|| panic!("not taken: {sql}"));
    let general = parse_general(sql, &tokens).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(taken, general, "{sql}");
    assert_eq!(parse(sql).expect("parses"), general, "{sql}");
}

/// The short path `fast` leaves `sql` to the general path.
fn short_path_declines(sql: &str, fast: impl Fn(&str, &[lexer::Token]) -> Option<Statement>) {
    let tokens = lexer::tokenize(sql);
    assert_eq!(fast(sql, &tokens), None, "{sql}");
}

/// fast.rs FP1/FP2: every statement the short path takes comes out as the general path makes
/// it; what it must leave alone it leaves alone.
#[test]
fn insert_short_path_matches_the_general_parser() {
    let taken = [
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 50123, '83868641912-28773972837', '6736')",
        "INSERT INTO t VALUES (1), (2), (3)",
        "insert into T values (-1, -2.5, 3.25, 0.0, 18446744073709551615, 007)",
        "INSERT IGNORE INTO `my table` (`a b`, c) VALUES ('x', \"dq\")",
        "REPLACE INTO d.t (a) VALUES (NULL), (TRUE), (FALSE)",
        "INSERT INTO `d`.`t` VALUES ('it''s', 'a\\'b', 'tab\\there', 'nl\\n', 'pct\\%_\\_', 'bs\\\\')",
        "INSERT INTO t VALUES ('\\0\\Z\\b\\r', '', 'é ü 中文', \"a\"\"b\", 'a\\\"b')",
        "INSERT INTO t (a, b) VALUES (?, ?), (?, -5)",
        "INSERT INTO t VALUES (1.)",
        "INSERT INTO t (id, name, value, status, user) VALUES (1, 'n', 2, 3, 'u')",
        "INSERT INTO HISTORY (REF_OBJECT, HORDER, REF_STAT, VALUE, NOTE, CREATED) \
         VALUES (1, 2, 3, 4.50, 'n', '2026-01-01 00:00:00')",
    ];
    for sql in taken {
        short_path_matches(sql, |_, tokens| fast::insert_values(tokens));
    }
    let left = [
        "INSERT INTO t VALUES (1 + 2)",
        "INSERT INTO t VALUES (DEFAULT)",
        "INSERT INTO t VALUES (1e5)",
        "INSERT INTO t VALUES (.5)",
        "INSERT INTO t VALUES (0x1F)",
        "INSERT INTO t VALUES (X'1F')",
        "INSERT INTO t VALUES (_utf8mb4'a')",
        "INSERT INTO t VALUES ('a' 'b')",
        "INSERT INTO t VALUES (+1)",
        "INSERT INTO t VALUES (- -1)",
        "INSERT INTO t VALUES (NOW())",
        "INSERT INTO t VALUE (1)",
        "INSERT t VALUES (1)",
        "INSERT LOW_PRIORITY INTO t VALUES (1)",
        "REPLACE IGNORE INTO t VALUES (1)",
        "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1",
        "INSERT INTO t SET a = 1",
        "INSERT INTO t SELECT 1",
        "INSERT INTO select VALUES (1)",
        "INSERT INTO t (key) VALUES (1)",
        "INSERT INTO t VALUES (1),",
        "INSERT INTO t VALUES (1) (2)",
        "INSERT INTO t VALUES ()",
        "INSERT INTO t () VALUES (1)",
        "INSERT INTO t VALUES (1",
        "INSERT INTO t.u.v VALUES (1)",
    ];
    for sql in left {
        short_path_declines(sql, |_, tokens| fast::insert_values(tokens));
    }
}

/// fast.rs FP1/FP3: single-table SELECT, UPDATE and DELETE the short path takes come out as
/// the general path makes them; the forms whose reading differs or that it does not know it
/// leaves alone.
#[test]
fn query_short_path_matches_the_general_parser() {
    let taken = [
        // sysbench, text protocol
        "SELECT c FROM sbtest1 WHERE id=5023",
        "SELECT c FROM sbtest3 WHERE id BETWEEN 5023 AND 5122",
        "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100",
        "SELECT c FROM sbtest2 WHERE id BETWEEN 10 AND 109 ORDER BY c",
        "SELECT DISTINCT c FROM sbtest4 WHERE id BETWEEN 10 AND 109 ORDER BY c",
        "UPDATE sbtest1 SET k=k+1 WHERE id=77",
        "UPDATE sbtest2 SET c='0123-4567' WHERE id=78",
        "DELETE FROM sbtest3 WHERE id=79",
        // prepared-statement forms
        "SELECT c FROM sbtest1 WHERE id=?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c LIMIT ?, ?",
        "UPDATE sbtest1 SET k=k+1 WHERE id=?",
        // names: keywords of sqlparser's that are columns and tables to both, qualified,
        // backquoted
        "SELECT id, name, value, status, date, time, data, type FROM HISTORY WHERE id = 1",
        "SELECT REF_OBJECT, VALUE FROM OBJECT WHERE ZONE = 3 AND `user` = 'u'",
        "select t.a, d.t.b, `x y`.`c d` from d.t where t.a >= -1.50",
        "SELECT t.*, * FROM t",
        "SELECT a AS x, b y, c AS `z w`, d `q` FROM t AS u",
        "SELECT a FROM t u WHERE u.a <> 1",
        // expressions
        "SELECT a + b * c - d / e % f, -a, - -b, +c, (a + b) * c FROM t",
        "SELECT a FROM t WHERE a DIV 2 + 1 = 3 AND b = 7 DIV -c * 2",
        "SELECT a FROM t WHERE a = 1 AND b != 2 OR NOT c < 3 AND d <= 4 OR e > 5 AND f >= 6",
        "SELECT a FROM t WHERE a <=> NULL OR b IS NULL OR c IS NOT NULL",
        "SELECT a FROM t WHERE a IN (1, 2, 3) AND b NOT IN ('x', \"y\") AND c IN (?)",
        "SELECT a FROM t WHERE a NOT BETWEEN b + 1 AND c * 2 AND d LIKE 'x%' AND e NOT LIKE ?",
        "SELECT a FROM t WHERE NOT (a = 1 OR b = 2) AND (c)",
        "SELECT a FROM t WHERE a = TRUE OR b = FALSE OR c = 'it''s \\n'",
        // aggregates, grouping, order, limits, locks
        "SELECT COUNT(*), count(a), Sum(DISTINCT b), MIN(c), MAX(d), AVG(e + 1) FROM t",
        "SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k DESC, 2 ASC LIMIT 10",
        "SELECT a FROM t LIMIT 5 OFFSET 10",
        "SELECT a FROM t LIMIT 5, 10",
        "SELECT a FROM t WHERE id = 1 FOR UPDATE",
        "SELECT a FROM t WHERE id = 1 FOR UPDATE NOWAIT",
        "SELECT a FROM t WHERE id = 1 FOR SHARE SKIP LOCKED",
        "SELECT a FROM t WHERE id = 1 LOCK IN SHARE MODE",
        "UPDATE d.t SET a = a * 2, t.b = NULL, `c` = ? WHERE id > 5 ORDER BY id DESC LIMIT 3",
        "DELETE FROM t WHERE a IS NULL ORDER BY id LIMIT 10",
        "DELETE FROM `d`.`t`",
        "SELECT a FROM user WHERE date - 1 > 0 AND text = 'x' AND json IS NULL",
        "UPDATE user SET status = status + 1 WHERE name = 'n'",
        "SELECT /* c */ a /*! , b */ FROM t -- trailing",
        "SELECT prénom, `名前` FROM t WHERE prénom = 'é'",
    ];
    for sql in taken {
        short_path_matches(sql, fast::query);
    }
    let left = [
        "SELECT 1",
        "SELECT a FROM t, u",
        "SELECT a FROM t JOIN u ON t.id = u.id",
        "SELECT a FROM t USE INDEX (k) WHERE a = 1",
        "SELECT a FROM t WHERE a = 1 || b = 2",
        "SELECT a FROM t WHERE a = 1 && b = 2",
        "SELECT a FROM t WHERE a = b = c",
        "SELECT a FROM t WHERE a = b IS NULL",
        "SELECT a FROM t WHERE a LIKE 'x' = 1",
        "SELECT a FROM t WHERE a LIKE 'x' ESCAPE '!'",
        "SELECT a FROM t WHERE a BETWEEN 1 AND 2 BETWEEN 0 AND 1",
        "SELECT a FROM t WHERE a IS TRUE",
        "SELECT user FROM t",
        "SELECT a FROM t WHERE position = 1",
        "SELECT CAST(a AS CHAR) FROM t",
        "SELECT NOW() FROM t",
        "SELECT a 'x' FROM t",
        "SELECT a AS 'x' FROM t",
        "SELECT a FROM t HAVING a > 1",
        "SELECT a FROM t UNION SELECT b FROM u",
        "SELECT a INTO @x FROM t",
        "SELECT ALL a FROM t",
        "SELECT SQL_NO_CACHE a FROM t",
        "SELECT /*!40001 SQL_NO_CACHE */ * FROM t",
        "SELECT SQL_BUFFER_RESULT a FROM t",
        "SELECT SQL_CACHE a FROM t",
        "SELECT a FROM t WHERE a = DATE '2020-01-01'",
        "SELECT a FROM t WHERE a = _utf8mb4'x'",
        "SELECT a FROM t WHERE a = X'0A' OR b = 0x0A OR c = 1e3",
        "SELECT a FROM t WHERE a = @v",
        "SELECT a FROM t WHERE a MOD 2 = 0",
        "SELECT a FROM t LIMIT -1",
        "SELECT a FROM t FOR UPDATE OF t",
        "SELECT (a, b) FROM t",
        "SELECT a FROM t WHERE (a, 1) IS NULL",
        "SELECT a FROM t WHERE a = 1 OR a IN (SELECT 1)",
        "UPDATE IGNORE t SET a = 1",
        "UPDATE t AS x SET a = 1",
        "UPDATE t, u SET t.a = 1",
        "DELETE t FROM t JOIN u",
        "DELETE IGNORE FROM t",
        "SELECT a FROM t WHERE",
        "SELECT a FROM t WHERE a = 1 GARBAGE",
        "SELECT FROM t",
        "SELECT a, FROM t",
    ];
    for sql in left {
        short_path_declines(sql, fast::query);
    }
}

/// dialect.rs D2: `||` and `&&` are OR and AND with MySQL's precedence (sqlparser bound them
/// tighter than comparisons).
#[test]
fn pipes_and_ampersands_bind_as_or_and_and() {
    fn first_item(sql: &str) -> Expr {
        match parse(sql) {
            Ok(Statement::Select(s)) => match &s.items[0] {
                SelectItem::Expr { expr, .. } => expr.clone(),
                other => panic!("{sql}: {other:?}"),
            },
            other => panic!("{sql}: {other:?}"),
        }
    }
    for (sql, same_as) in [
        ("SELECT 2 = 2 || 3 = 4", "SELECT (2 = 2) OR (3 = 4)"),
        ("SELECT 1 || 0 AND 0", "SELECT 1 OR (0 AND 0)"),
        ("SELECT 0 = 1 && 0", "SELECT (0 = 1) AND 0"),
        ("SELECT 1 OR 0 && 0 OR 1", "SELECT (1 OR (0 AND 0)) OR 1"),
        ("SELECT NOT 1 && 0", "SELECT (NOT 1) AND 0"),
        ("SELECT a||b FROM t", "SELECT a OR b FROM t"),
    ] {
        assert_eq!(first_item(sql), first_item(same_as), "{sql}");
    }
}

/// fast.rs FP1 over the conformance suite: every statement of
/// crates/server/tests/conformance that a short path takes comes out as the general path makes
/// it (the suite's results come from MariaDB, so these are statements people write).
#[test]
fn short_paths_match_the_general_parser_over_the_conformance_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/conformance");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the conformance suite")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    files.sort();
    let (mut seen, mut taken) = (0, 0);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a suite file");
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if !(line.starts_with("statement") || line.starts_with("query")) {
                continue;
            }
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.trim().is_empty() && *l != "----")
                .collect();
            let sql = body.join("\n");
            seen += 1;
            let tokens = lexer::tokenize(&sql);
            let mut body_tokens: &[lexer::Token] = &tokens;
            while let [rest @ .., last] = body_tokens {
                if !last.is_punct(";") {
                    break;
                }
                body_tokens = rest;
            }
            let fast = fast::insert_values(body_tokens).or_else(|| fast::query(&sql, body_tokens));
            if let Some(fast) = fast {
                taken += 1;
                let general = parse_general(&sql, body_tokens)
                    .unwrap_or_else(|e| panic!("{}: {sql}: {e}", f.display()));
                assert_eq!(fast, general, "{}: {sql}", f.display());
            }
        }
    }
    assert!(seen > 1000, "{seen} statements read");
    assert!(
        taken > 400,
        "{taken} of {seen} statements took a short path"
    );
}

#[test]
fn json_table_is_lowered_with_its_columns() {
    let Statement::Select(q) = p(
        "SELECT * FROM t, JSON_TABLE(t.doc, '$.a[*]' COLUMNS (n FOR ORDINALITY, \
         x INT PATH '$.x' DEFAULT '1' ON EMPTY ERROR ON ERROR, e INT EXISTS PATH '$.y', \
         NESTED PATH '$.z[*]' COLUMNS (z VARCHAR(5) PATH '$'))) AS j",
    ) else {
        panic!("not a SELECT");
    };
    let [_, TableRef::JsonTable(jt)] = q.from.as_slice() else {
        panic!("{:?}", q.from);
    };
    assert_eq!((jt.alias.as_str(), jt.path.as_str()), ("j", "$.a[*]"));
    assert_eq!(jt.expr, qcol("t", "doc"));
    let [JtColumn::Ordinality(n), JtColumn::Path {
        name,
        path,
        exists: false,
        on_empty: JtResponse::Default(d),
        on_error: JtResponse::Error,
        ..
    }, JtColumn::Path {
        exists: true,
        on_empty: JtResponse::Null,
        ..
    }, JtColumn::Nested { path: np, columns }] = jt.columns.as_slice()
    else {
        panic!("{:?}", jt.columns);
    };
    assert_eq!(
        (n.as_str(), name.as_str(), path.as_str(), d.as_str()),
        ("n", "x", "$.x", "1")
    );
    assert_eq!((np.as_str(), columns.len()), ("$.z[*]", 1));
    // An alias is required (3667); the document may not hold a subquery (1210).
    let code = |sql: &str| parse(sql).map(|_| 0).unwrap_or_else(|e| e.code);
    assert_eq!(
        code("SELECT * FROM JSON_TABLE('[]', '$[*]' COLUMNS (a INT PATH '$'))"),
        3667
    );
    assert_eq!(
        code("SELECT * FROM JSON_TABLE((SELECT 1), '$' COLUMNS (a INT PATH '$')) AS j"),
        1210
    );
}

#[test]
fn json_value_keeps_its_on_empty_and_on_error_clauses() {
    let Statement::Select(q) = p(
        "SELECT JSON_VALUE(j, '$.a' RETURNING SIGNED DEFAULT (1 + 2) ON EMPTY ERROR ON ERROR), \
         JSON_VALUE(j, '$.b'), JSON_VALUE(JSON_VALUE(j, '$.c' ERROR ON ERROR), '$' DEFAULT ? \
         ON EMPTY) FROM t",
    ) else {
        panic!("not a SELECT");
    };
    let values: Vec<&JsonValue> = q
        .items
        .iter()
        .map(|i| match i {
            SelectItem::Expr {
                expr: Expr::JsonValue(v),
                ..
            } => &**v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(values[0].returning, Some(CastType::Signed));
    assert_eq!(
        values[0].on_empty,
        OnJson::Default(bin(BinaryOp::Add, num("1"), num("2")))
    );
    assert_eq!(values[0].on_error, OnJson::Error);
    assert_eq!(
        (&values[1].on_empty, &values[1].on_error),
        (&OnJson::Null, &OnJson::Null)
    );
    // The inner call's clause stays with it; the outer one's DEFAULT is a placeholder.
    let Expr::JsonValue(inner) = &values[2].doc else {
        panic!("{:?}", values[2].doc);
    };
    assert_eq!(inner.on_error, OnJson::Error);
    assert_eq!(values[2].on_error, OnJson::Null);
    assert_eq!(values[2].on_empty, OnJson::Default(Expr::Param(0)));
    let code = |sql: &str| parse(sql).map(|_| 0).unwrap_or_else(|e| e.code);
    assert_eq!(
        code("SELECT JSON_VALUE(j, '$' ERROR ON ERROR NULL ON EMPTY) FROM t"),
        1064
    );
    assert_eq!(
        code("SELECT JSON_VALUE(j, '$' NULL ON EMPTY NULL ON EMPTY) FROM t"),
        1064
    );
    assert_eq!(code("SELECT JSON_VALUE(j) FROM t"), 1582);
}

#[test]
fn intersect_binds_tighter_than_union_and_except() {
    // a UNION (b INTERSECT c): the INTERSECT is a FROM item of the union's second part.
    let Statement::Select(q) = p("SELECT 1 UNION SELECT 2 INTERSECT ALL SELECT 3") else {
        panic!("not a SELECT");
    };
    let [(false, second)] = q.unions.as_slice() else {
        panic!("{:?}", q.unions);
    };
    assert!(matches!(
        second.from.as_slice(),
        [TableRef::SetOp {
            op: SetOp::Intersect,
            all: true,
            ..
        }]
    ));
    // (a EXCEPT b) EXCEPT c: left to right.
    let Statement::Select(q) = p("SELECT 1 EXCEPT SELECT 2 EXCEPT SELECT 3") else {
        panic!("not a SELECT");
    };
    let [TableRef::SetOp {
        op: SetOp::Except,
        all: false,
        left,
        ..
    }] = q.from.as_slice()
    else {
        panic!("{:?}", q.from);
    };
    assert!(matches!(
        left.from.as_slice(),
        [TableRef::SetOp {
            op: SetOp::Except,
            ..
        }]
    ));
}

#[test]
fn multiple_table_update_and_delete_are_lowered() {
    for sql in [
        "UPDATE t1, t2 SET t1.a = t2.b, c = ? WHERE t1.id = t2.id",
        "UPDATE LOW_PRIORITY t1 AS x JOIN t2 ON x.id = t2.id SET x.a = 1",
    ] {
        let Statement::UpdateMulti(u) = p(sql) else {
            panic!("{sql}");
        };
        assert_eq!(
            u.assignments[0].0.as_deref(),
            Some(if sql.contains(" x") { "x" } else { "t1" })
        );
    }
    let Statement::UpdateMulti(u) = p("UPDATE t1, t2 SET t1.a = t2.b, c = ? WHERE t1.id = ?")
    else {
        panic!("not a multiple-table UPDATE");
    };
    assert_eq!(u.from.len(), 2);
    assert_eq!(u.assignments[1], (None, "c".into(), Expr::Param(0)));
    assert!(matches!(&u.selection, Some(Expr::Binary { right, .. }) if **right == Expr::Param(1)));
    for sql in [
        "DELETE t1, t2 FROM t1 JOIN t2 ON t1.id = t2.id WHERE t2.x = 1",
        "DELETE FROM t1, t2 USING t1 JOIN t2 ON t1.id = t2.id WHERE t2.x = 1",
    ] {
        let Statement::DeleteMulti(d) = p(sql) else {
            panic!("{sql}");
        };
        let names: Vec<&str> = d.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t1", "t2"], "{sql}");
        assert_eq!(d.from.len(), 1, "{sql}");
    }
    let code = |sql: &str| parse(sql).map(|_| 0).unwrap_or_else(|e| e.code);
    assert_eq!(
        code("UPDATE t1 JOIN t2 ON t1.id = t2.id SET a = 1 LIMIT 1"),
        1221
    );
    assert_eq!(
        code("DELETE t1 FROM t1 JOIN t2 ON t1.id = t2.id ORDER BY t1.id"),
        1221
    );
    assert_eq!(code("UPDATE t1, t2 SET a = 1 LIMIT 1"), 1221);
    assert_eq!(code("UPDATE t1, t2 SET a = 1 ORDER BY a"), 1221);
    assert_eq!(code("UPDATE t1, t2 SET a = 1 GARBAGE"), 1064);
    assert_eq!(code("UPDATE t1, t2 x y SET a = 1"), 1064);
}

#[test]
fn create_alter_and_drop_view() {
    let Statement::CreateView(v) = p("CREATE OR REPLACE ALGORITHM = MERGE DEFINER = `app`@`%` \
         SQL SECURITY INVOKER VIEW d.v (x, y) AS SELECT a, b FROM t WHERE a > 1 \
         WITH LOCAL CHECK OPTION")
    else {
        panic!("not a view");
    };
    assert!(v.or_replace && !v.alter && v.invoker);
    assert_eq!(v.algorithm, "MERGE");
    let definer = v
        .definer
        .as_ref()
        .map(|u| (u.user.as_str(), u.host.as_str()));
    assert_eq!(definer, Some(("app", "%")));
    assert_eq!(v.name.db.as_deref(), Some("d"));
    assert_eq!(v.columns, ["x", "y"]);
    assert_eq!(v.text, "SELECT a, b FROM t WHERE a > 1");
    assert_eq!(v.check_option.as_deref(), Some("LOCAL"));
    // mariadb-dump's form: the clauses in version comments.
    let Statement::CreateView(v) = p("/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 \
         DEFINER=`root`@`localhost` SQL SECURITY DEFINER */\n/*!50001 VIEW `v` AS select \
         `t`.`a` AS `a` from `t` */")
    else {
        panic!("not a view");
    };
    assert_eq!(v.text, "select `t`.`a` AS `a` from `t`");
    assert_eq!(v.check_option, None);
    let Statement::CreateView(v) = p("ALTER VIEW v AS SELECT 1 WITH CHECK OPTION") else {
        panic!("not a view");
    };
    assert!(v.alter && v.definer.is_none());
    assert_eq!(v.check_option.as_deref(), Some("CASCADED"));
    assert_eq!(
        p("DROP VIEW IF EXISTS a, d.b CASCADE"),
        Statement::DropView {
            names: vec![
                ObjectName {
                    db: None,
                    name: "a".into()
                },
                ObjectName {
                    db: Some("d".into()),
                    name: "b".into()
                },
            ],
            if_exists: true,
        }
    );
    let code = |sql: &str| parse(sql).map(|_| 0).unwrap_or_else(|e| e.code);
    assert_eq!(code("CREATE VIEW v AS SELECT * FROM t WHERE a = ?"), 1351);
    assert_eq!(code("CREATE VIEW v AS SELECT @x"), 1351);
    assert_eq!(code("CREATE VIEW v AS SELECT a INTO @x FROM t"), 1350);
    assert_eq!(code("CREATE VIEW v AS INSERT INTO t VALUES (1)"), 1064);
    assert_eq!(code("CREATE ALGORITHM = FAST VIEW v AS SELECT 1"), 1064);
    assert_eq!(code("CREATE VIEW v AS"), 1064);
}

#[test]
fn check_constraints_and_rename_column() {
    let Statement::CreateTable(ct) = p("CREATE TABLE t (a INT CONSTRAINT pos CHECK (a > 0), \
         b INT, CHECK (a < b) NOT ENFORCED, CONSTRAINT c3 CHECK (b <> 0))")
    else {
        panic!("not a CREATE TABLE");
    };
    let got: Vec<(Option<&str>, &str, bool, Option<&str>)> = ct
        .checks
        .iter()
        .map(|c| {
            (
                c.name.as_deref(),
                c.text.as_str(),
                c.enforced,
                c.column.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (Some("pos"), "a > 0", true, Some("a")),
            (None, "a < b", false, None),
            (Some("c3"), "b <> 0", true, None),
        ]
    );
    let ops = |sql: &str| match p(sql) {
        Statement::AlterTable { ops, .. } => ops,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        ops("ALTER TABLE t DROP CHECK pos"),
        [AlterOp::DropCheck("pos".into())]
    );
    assert_eq!(
        ops("ALTER TABLE t DROP INDEX pos"),
        [AlterOp::DropIndex("pos".into())]
    );
    assert_eq!(
        ops("ALTER TABLE t DROP CONSTRAINT pos"),
        [AlterOp::DropConstraint("pos".into())]
    );
    assert_eq!(
        ops("ALTER TABLE t RENAME COLUMN a TO b"),
        [AlterOp::RenameColumn {
            old: "a".into(),
            new: "b".into()
        }]
    );
    assert!(matches!(
        &ops("ALTER TABLE t ADD COLUMN z INT UNIQUE CHECK (z > 0), DROP COLUMN y")[..],
        [
            AlterOp::AddColumn { .. },
            AlterOp::AddKey(KeySpec { kind: KeyKind::Unique, .. }),
            AlterOp::AddCheck(c),
            AlterOp::DropColumn(_),
        ] if c.column.as_deref() == Some("z")
    ));
    assert_eq!(
        ops("ALTER TABLE t ALTER CHECK pos NOT ENFORCED"),
        [AlterOp::CheckEnforced {
            name: "pos".into(),
            enforced: false
        }]
    );
    assert_eq!(
        ops("ALTER TABLE t ALTER CONSTRAINT `pos` ENFORCED"),
        [AlterOp::CheckEnforced {
            name: "pos".into(),
            enforced: true
        }]
    );
    assert!(matches!(
        &ops("ALTER TABLE t ADD CONSTRAINT k CHECK (a > 1)")[..],
        [AlterOp::AddCheck(c)] if c.name.as_deref() == Some("k") && c.text == "a > 1"
    ));
}

#[test]
fn alter_table_definition_changes() {
    let ops = |sql: &str| match p(sql) {
        Statement::AlterTable { ops, .. } => ops,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        &ops("ALTER TABLE t ALTER COLUMN a SET DEFAULT 5, ALTER b DROP DEFAULT")[..],
        [
            AlterOp::AlterDefault { column: a, default: Some(Expr::Literal(Literal::Number(n))), text: None },
            AlterOp::AlterDefault { column: b, default: None, text: None },
        ] if a == "a" && n == "5" && b == "b"
    ));
    assert!(matches!(
        &ops("ALTER TABLE t ALTER COLUMN a SET DEFAULT (UUID())")[..],
        [AlterOp::AlterDefault { default: Some(Expr::Function { .. }), text: Some(t), .. }]
            if t == "UUID()"
    ));
    let Statement::CreateTable(ct) =
        p("CREATE TABLE t (a INT DEFAULT (1 + 2), b INT DEFAULT 3, j JSON DEFAULT ('[]'))")
    else {
        panic!("not a CREATE TABLE");
    };
    let texts: Vec<Option<&str>> = ct
        .columns
        .iter()
        .map(|c| c.default_text.as_deref())
        .collect();
    assert_eq!(texts, [Some("1 + 2"), None, Some("'[]'")]);
    assert_eq!(
        ops("ALTER TABLE t RENAME INDEX a TO b, RENAME KEY `c` TO d"),
        [
            AlterOp::RenameIndex {
                old: "a".into(),
                new: "b".into()
            },
            AlterOp::RenameIndex {
                old: "c".into(),
                new: "d".into()
            }
        ]
    );
    assert_eq!(
        ops("ALTER TABLE t COMMENT 'x', ALGORITHM=instant, LOCK = NONE"),
        [
            AlterOp::Algorithm("INSTANT".into()),
            AlterOp::Lock("NONE".into()),
            AlterOp::Options(TableOptions {
                comment: Some("x".into()),
                ..TableOptions::default()
            })
        ]
    );
    assert_eq!(
        ops("ALTER TABLE t LOCK=SHARED"),
        [AlterOp::Lock("SHARED".into())]
    );
    assert!(matches!(
        &ops("ALTER TABLE t ALGORITHM=INPLACE, ADD INDEX (a)")[..],
        [AlterOp::AddKey(_), AlterOp::Algorithm(_)]
    ));
    assert_eq!(
        ops("ALTER TABLE t ALTER CHECK a NOT ENFORCED, ALTER CONSTRAINT b ENFORCED, LOCK=SHARED"),
        [
            AlterOp::CheckEnforced {
                name: "a".into(),
                enforced: false
            },
            AlterOp::CheckEnforced {
                name: "b".into(),
                enforced: true
            },
            AlterOp::Lock("SHARED".into()),
        ]
    );
    assert!(matches!(
        &ops("ALTER TABLE t ADD COLUMN x INT, ALTER CHECK c NOT ENFORCED, DISABLE KEYS")[..],
        [
            AlterOp::AddColumn { .. },
            AlterOp::CheckEnforced {
                enforced: false,
                ..
            },
            AlterOp::Keys(false)
        ]
    ));
    assert!(parse("ALTER TABLE t ALTER CHECK c, ADD COLUMN x INT").is_err());
    assert!(parse("ALTER TABLE t RENAME INDEX a b").is_err());
    // Table options and RENAME INDEX among operations sqlparser reads.
    let comment = |c: &str| TableOptions {
        comment: Some(c.into()),
        ..TableOptions::default()
    };
    assert!(matches!(
        &ops("ALTER TABLE t ADD COLUMN x INT, COMMENT 'c', ENGINE=InnoDB, DROP COLUMN y")[..],
        [AlterOp::AddColumn { .. }, AlterOp::DropColumn(y), AlterOp::Options(o)]
            if y == "y" && o.engine.as_deref() == Some("InnoDB") && o.comment.as_deref() == Some("c")
    ));
    assert!(matches!(
        &ops("ALTER TABLE d.t COMMENT = 'c', RENAME COLUMN a TO b, DEFAULT CHARSET=latin1")[..],
        [AlterOp::RenameColumn { .. }, AlterOp::Options(o)]
            if o.charset.as_deref() == Some("latin1") && o.comment.as_deref() == Some("c")
    ));
    assert_eq!(
        ops("ALTER TABLE t RENAME KEY a TO b, ALTER COLUMN c DROP DEFAULT, COMMENT 'x'"),
        [
            AlterOp::AlterDefault {
                column: "c".into(),
                default: None,
                text: None
            },
            AlterOp::RenameIndex {
                old: "a".into(),
                new: "b".into()
            },
            AlterOp::Options(comment("x")),
        ]
    );
    assert!(parse("ALTER TABLE t ADD COLUMN x INT, COMMENT").is_err());
    assert!(parse("ALTER TABLE t ADD COLUMN x INT, RENAME INDEX a").is_err());
}

#[test]
fn generated_columns() {
    let Statement::CreateTable(ct) = p("CREATE TABLE t (a INT, b INT AS (a + 1), \
         c VARCHAR(9) GENERATED ALWAYS AS (CONCAT('x', b)) STORED NOT NULL)")
    else {
        panic!("not a CREATE TABLE");
    };
    let got: Vec<Option<(&str, bool)>> = ct
        .columns
        .iter()
        .map(|c| c.generated.as_ref().map(|g| (g.text.as_str(), g.stored)))
        .collect();
    assert_eq!(
        got,
        [None, Some(("a + 1", false)), Some(("CONCAT('x', b)", true))]
    );
    assert_eq!(ct.columns[2].nullable, Some(false));
}

#[test]
fn view_wildcards_are_found_with_their_probes() {
    let sites = |t: &str| -> Vec<(String, String)> {
        super::view_wildcards(t)
            .into_iter()
            .map(|s| (t[s.span.0..s.span.1].to_string(), s.probe))
            .collect()
    };
    let own = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        sites("SELECT DISTINCT *, COUNT(*) AS n FROM t WHERE a > 2 * b GROUP BY n ORDER BY n"),
        own(&[("*", "SELECT * FROM t WHERE a > 2 * b")])
    );
    assert_eq!(
        sites("select a, `t`.* , db.u.* from t join db.u using (id)"),
        own(&[
            ("`t`.*", "SELECT `t`.* from t join db.u using (id)"),
            ("db.u.*", "SELECT db.u.* from t join db.u using (id)"),
        ])
    );
    assert_eq!(
        sites("WITH c (x) AS (SELECT * FROM t), d AS (SELECT 1) (SELECT * FROM c) UNION ALL SELECT t.* FROM t LIMIT 3"),
        own(&[
            ("*", "WITH c (x) AS (SELECT * FROM t), d AS (SELECT 1) SELECT * FROM c"),
            ("t.*", "WITH c (x) AS (SELECT * FROM t), d AS (SELECT 1) SELECT t.* FROM t"),
        ])
    );
    // Subqueries in expressions and derived tables are not the view's own SELECTs (W1).
    assert_eq!(
        sites("SELECT a * 2, (SELECT MAX(b) FROM u) FROM (SELECT * FROM t) d WHERE EXISTS (SELECT * FROM u)"),
        own(&[])
    );
    assert_eq!(sites("SELECT 1 * 2"), own(&[]));
}

/// Executable comments nest (mariadb-dump's role lines for MySQL 8), and MariaDB's `/*M!`
/// comments are skipped whole, the comment nested in them included.
#[test]
fn nested_executable_and_mariadb_comments() {
    let words = |sql: &str| -> Vec<String> {
        lexer::tokenize(sql)
            .iter()
            .map(|t| t.text.to_string())
            .collect()
    };
    assert_eq!(
        words("/*!80001 CREATE ROLE 'r1'/*!80001 @'%'*/ */;"),
        ["CREATE", "ROLE", "'r1'", "@", "'%'", ";"]
    );
    assert_eq!(
        words("/*M!100005 CREATE ROLE 'r1'/*!80001 @'%'*/ WITH ADMIN x */; SELECT 1"),
        [";", "SELECT", "1"]
    );
    assert_eq!(words("/*M!100005 unclosed /* */"), Vec::<String>::new());
    // A version past ours (8.0.40) is a comment; ours and earlier ones run.
    assert_eq!(
        words("SELECT 1 /*!80041 , 2 */ /*!100005 , 3 */"),
        ["SELECT", "1"]
    );
    assert_eq!(
        words("SELECT 1 /*!80040 , 2 */ /*!40101 , 3 */"),
        ["SELECT", "1", ",", "2", ",", "3"]
    );
    assert!(matches!(parse("/* just this */"), Ok(Statement::Do(v)) if v.is_empty()));
    assert_eq!(parse("  ").unwrap_err().code, 1065);
    assert!(matches!(
        parse("/*!80001 CREATE ROLE 'r1'/*!80001 @'%'*/ */"),
        Ok(Statement::CreateRole { .. })
    ));
    assert!(parse("/*!80001 ALTER USER 'u1'@'%' DEFAULT ROLE 'r1'@'%' */").is_ok());
    assert!(
        matches!(parse("/*M!100005 SET DEFAULT ROLE NONE FOR 'r1'@'%' */"), Ok(Statement::Do(v)) if v.is_empty()),
        "nothing but a comment: a statement that does nothing"
    );
}

#[test]
fn from_dual_is_no_table() {
    let Statement::Select(q) = p("SELECT 1 FROM DUAL WHERE 1") else {
        panic!("not a SELECT");
    };
    assert!(q.from.is_empty());
    let Statement::Select(q) = p("SELECT 1 FROM db.dual") else {
        panic!("not a SELECT");
    };
    assert_eq!(q.from.len(), 1, "a qualified name is a table");
}
