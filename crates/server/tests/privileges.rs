//! Privileges from the outside: an account created without grants can do nothing with
//! data until granted, at the global, database and table levels; each refusal carries
//! MySQL's error (1142 table, 1044 database, 1227 global, 1095 KILL, 1045 GRANT ON *.*); GRANT
//! and REVOKE check levels (1221, 1144, 3929) and accounts (1410, 1141, 1147); SHOW GRANTS
//! writes MySQL 8.0's lines; grants survive a restart and go with DROP USER.

mod common;

use common::{connect, start, start_in, start_with, Server};
use mysql::prelude::Queryable;

fn as_user(s: &Server, user: &str, pw: &str, db: Option<&str>) -> Result<mysql::Conn, u16> {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some(user))
        .pass(Some(pw))
        .db_name(db);
    mysql::Conn::new(opts).map_err(|e| code_of(&e))
}

fn code_of(e: &mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("not a server error: {other}"),
    }
}

/// The error number of `sql` (it must fail).
fn err(c: &mut mysql::Conn, sql: &str) -> u16 {
    match c.query_drop(sql) {
        Ok(()) => panic!("`{sql}` succeeded"),
        Err(e) => code_of(&e),
    }
}

fn grants(c: &mut mysql::Conn, sql: &str) -> Vec<String> {
    c.query(sql).unwrap()
}

fn list(c: &mut mysql::Conn, sql: &str) -> Vec<String> {
    c.query(sql).unwrap()
}

#[test]
fn grant_check_revoke_persist() {
    let s = start();
    let mut root = connect(&s);
    for q in [
        "CREATE DATABASE d",
        "CREATE DATABASE e",
        "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE e.t (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE e.hidden (id INT PRIMARY KEY)",
        "INSERT INTO d.t VALUES (1, 1), (2, 2)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
        "CREATE USER 'v'@'%' IDENTIFIED BY 'pw'",
    ] {
        root.query_drop(q).unwrap();
    }
    let root_grants = grants(&mut root, "SHOW GRANTS");
    assert_eq!(root_grants.len(), 1);
    assert!(
        root_grants[0].starts_with("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD")
            && root_grants[0].ends_with("DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION"),
        "{root_grants:?}"
    );
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR 'u'@'%'"),
        vec!["GRANT USAGE ON *.* TO `u`@`%`"]
    );

    // Nothing granted: only the system schemas.
    let mut u = as_user(&s, "u", "pw", None).unwrap();
    assert_eq!(
        list(&mut u, "SHOW DATABASES"),
        vec!["information_schema", "performance_schema"]
    );
    assert_eq!(err(&mut u, "SELECT * FROM d.t"), 1142);
    assert_eq!(err(&mut u, "USE d"), 1044);
    assert_eq!(as_user(&s, "u", "pw", Some("d")).err(), Some(1044));
    assert_eq!(err(&mut u, "SET GLOBAL max_connections = 100"), 1227);
    assert_eq!(err(&mut u, "CREATE USER w"), 1227);
    assert_eq!(err(&mut u, "SHOW ENGINE INNODB STATUS"), 1227);
    assert_eq!(err(&mut u, "FLUSH STATUS"), 1227);
    assert_eq!(err(&mut u, "CREATE DATABASE f"), 1044);
    assert_eq!(err(&mut u, "GRANT SELECT ON d.* TO v"), 1044);
    assert_eq!(err(&mut u, "GRANT SELECT ON *.* TO v"), 1045);
    assert_eq!(err(&mut u, "SHOW GRANTS FOR 'root'@'localhost'"), 1044);
    assert_eq!(err(&mut u, "SELECT COUNT(*) FROM mysql.user"), 1142);
    let n: u64 = u
        .query_first("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd'")
        .unwrap()
        .unwrap();
    assert_eq!(
        n, 0,
        "information_schema shows only what the account may see"
    );
    let root_id: u64 = root.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    assert_eq!(err(&mut u, &format!("KILL {root_id}")), 1095);
    let users: Vec<String> = u
        .query_map("SHOW PROCESSLIST", |r: mysql::Row| {
            r.get::<String, _>(1).unwrap()
        })
        .unwrap();
    assert_eq!(
        users,
        vec!["u"],
        "without PROCESS, only the account's own threads"
    );
    let own: Vec<(String, String, String)> = u
        .query("SELECT USER, COMMAND, INFO FROM information_schema.PROCESSLIST ORDER BY ID")
        .unwrap();
    assert_eq!(
        own,
        vec![(
            "u".to_string(),
            "Query".to_string(),
            "SELECT USER, COMMAND, INFO FROM information_schema.PROCESSLIST ORDER BY ID"
                .to_string()
        )],
        "information_schema.PROCESSLIST holds the rows SHOW FULL PROCESSLIST gives"
    );

    // Database and table grants take effect at the session's next statement.
    root.query_drop("GRANT SELECT ON d.* TO 'u'@'%' WITH GRANT OPTION")
        .unwrap();
    root.query_drop("GRANT INSERT, UPDATE ON e.t TO 'u'@'%'")
        .unwrap();
    let n: u64 = u.query_first("SELECT COUNT(*) FROM d.t").unwrap().unwrap();
    assert_eq!(n, 2);
    assert_eq!(err(&mut u, "INSERT INTO d.t VALUES (3, 3)"), 1142);
    assert_eq!(err(&mut u, "DELETE FROM d.t WHERE id = 1"), 1142);
    assert_eq!(err(&mut u, "CREATE TABLE d.x (a INT)"), 1142);
    assert_eq!(err(&mut u, "DROP TABLE d.t"), 1142);
    assert_eq!(err(&mut u, "SELECT * FROM e.t"), 1142);
    u.query_drop("INSERT INTO e.t VALUES (1, 1)").unwrap();
    u.query_drop("UPDATE e.t SET v = 2").unwrap();
    // A WHERE reads the table: SELECT is needed too.
    assert_eq!(err(&mut u, "UPDATE e.t SET v = 3 WHERE id = 1"), 1142);
    assert_eq!(err(&mut u, "INSERT INTO e.t SELECT * FROM e.hidden"), 1142);
    assert_eq!(
        list(&mut u, "SHOW DATABASES"),
        vec!["d", "e", "information_schema", "performance_schema"]
    );
    assert_eq!(list(&mut u, "SHOW TABLES FROM e"), vec!["t"]);
    let status: Vec<mysql::Row> = u.query("SHOW TABLE STATUS FROM e").unwrap();
    assert_eq!(
        status.len(),
        1,
        "SHOW TABLE STATUS lists only what u may see"
    );
    assert_eq!(err(&mut u, "SHOW COLUMNS FROM e.hidden"), 1142);
    u.query_drop("USE d").unwrap();
    assert_eq!(
        grants(&mut u, "SHOW GRANTS"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `d`.* TO `u`@`%` WITH GRANT OPTION",
            "GRANT INSERT, UPDATE ON `e`.`t` TO `u`@`%`",
        ]
    );
    // u may pass on what it holds with GRANT OPTION, and nothing else.
    u.query_drop("GRANT SELECT ON d.* TO v").unwrap();
    assert_eq!(err(&mut u, "GRANT INSERT ON d.* TO v"), 1044);
    assert_eq!(err(&mut u, "GRANT INSERT ON e.t TO v"), 1142);
    let mut v = as_user(&s, "v", "pw", Some("d")).unwrap();
    let n: u64 = v.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 2);

    // Levels and accounts.
    assert_eq!(err(&mut root, "GRANT SUPER ON d.* TO u"), 1221);
    assert_eq!(err(&mut root, "GRANT EXECUTE ON d.t TO u"), 1144);
    assert_eq!(err(&mut root, "GRANT BACKUP_ADMIN ON *.* TO u"), 3929);
    assert_eq!(err(&mut root, "GRANT SELECT ON *.* TO nobody"), 1410);
    assert_eq!(err(&mut root, "GRANT SELECT ON d.nosuch TO u"), 1146);

    // REVOKE.
    root.query_drop("REVOKE SELECT ON d.* FROM v").unwrap();
    assert_eq!(err(&mut v, "SELECT COUNT(*) FROM t"), 1142);
    assert_eq!(err(&mut root, "REVOKE SELECT ON d.* FROM v"), 1141);
    assert_eq!(err(&mut root, "REVOKE SELECT ON e.hidden FROM v"), 1147);
    root.query_drop("GRANT PROCESS ON *.* TO v").unwrap();
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR v"),
        vec!["GRANT PROCESS ON *.* TO `v`@`%`"]
    );
    let all: Vec<String> = v
        .query_map("SHOW PROCESSLIST", |r: mysql::Row| {
            r.get::<String, _>(1).unwrap()
        })
        .unwrap();
    assert!(all.len() >= 3, "PROCESS shows every thread: {all:?}");
    let ids: Vec<u64> = v
        .query("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Sleep'")
        .unwrap();
    // (Another thread may not be back to Sleep yet the instant after it answered.)
    let me: u64 = v.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    assert!(ids.contains(&me), "the querying thread is running: {ids:?}");

    // Grants survive a restart; DROP USER takes them away.
    drop((u, v, root));
    let dir = s.stop_keep_dir(false);
    let s = start_in(dir, false, &[]);
    let mut root = connect(&s);
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR u"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `d`.* TO `u`@`%` WITH GRANT OPTION",
            "GRANT INSERT, UPDATE ON `e`.`t` TO `u`@`%`",
        ]
    );
    let mut u = as_user(&s, "u", "pw", Some("d")).unwrap();
    let n: u64 = u.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 2);
    root.query_drop("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u")
        .unwrap();
    assert_eq!(err(&mut u, "SELECT COUNT(*) FROM t"), 1142);
    root.query_drop("GRANT ALL ON d.* TO u").unwrap();
    root.query_drop("DROP USER u").unwrap();
    root.query_drop("CREATE USER u IDENTIFIED BY 'pw'").unwrap();
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR u"),
        vec!["GRANT USAGE ON *.* TO `u`@`%`"]
    );
    assert_eq!(err(&mut root, "SHOW GRANTS FOR nobody"), 1141);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// A view with SQL SECURITY DEFINER lets an account read through it what it may not read
/// directly; one with SQL SECURITY INVOKER does not (1356). Creating a view needs CREATE VIEW
/// and SELECT on what it reads; naming another definer needs SUPER.
#[test]
fn views_read_with_their_definers_or_invokers_rights() {
    let s = start();
    let mut root = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.secret (id INT PRIMARY KEY, pay INT, name VARCHAR(10))",
        "INSERT INTO d.secret VALUES (1, 100, 'a'), (2, 200, 'b')",
        "CREATE VIEW d.names AS SELECT id, name FROM d.secret",
        "CREATE SQL SECURITY INVOKER VIEW d.names_inv AS SELECT id, name FROM d.secret",
        "CREATE USER u IDENTIFIED BY 'pw'",
        "GRANT SELECT ON d.names TO u",
        "GRANT SELECT ON d.names_inv TO u",
    ] {
        root.query_drop(sql).unwrap();
    }
    let mut u = as_user(&s, "u", "pw", Some("d")).unwrap();
    assert_eq!(err(&mut u, "SELECT pay FROM secret"), 1142);
    let names: Vec<String> = u.query("SELECT name FROM names WHERE id = 2").unwrap();
    assert_eq!(names, vec!["b"]);
    assert_eq!(err(&mut u, "SELECT pay FROM names"), 1054);
    assert_eq!(err(&mut u, "SELECT name FROM names_inv"), 1356);
    let tables = list(&mut u, "SHOW TABLES FROM d");
    assert_eq!(tables, vec!["names", "names_inv"]);
    assert_eq!(err(&mut u, "CREATE VIEW d.mine AS SELECT 1"), 1142);
    root.query_drop("GRANT CREATE VIEW ON d.* TO u").unwrap();
    assert_eq!(
        err(&mut u, "CREATE VIEW d.mine AS SELECT pay FROM d.secret"),
        1142
    );
    u.query_drop("CREATE VIEW d.mine AS SELECT 1 AS one")
        .unwrap();
    assert_eq!(
        err(
            &mut u,
            "CREATE DEFINER = root@localhost VIEW d.other AS SELECT 2"
        ),
        1227
    );
    assert_eq!(err(&mut u, "DROP VIEW d.mine"), 1142);
    // Changes through a view need their privileges on the view; the base table's rights are
    // the definer's (SQL SECURITY DEFINER) or the invoker's own (INVOKER).
    assert_eq!(
        err(&mut u, "UPDATE names SET name = 'x' WHERE id = 1"),
        1142
    );
    root.query_drop("GRANT INSERT, UPDATE, DELETE ON d.names TO u")
        .unwrap();
    root.query_drop("GRANT INSERT, UPDATE, DELETE ON d.names_inv TO u")
        .unwrap();
    u.query_drop("UPDATE names SET name = 'x' WHERE id = 1")
        .unwrap();
    assert_eq!(u.affected_rows(), 1);
    u.query_drop("INSERT INTO names VALUES (3, 'c')").unwrap();
    u.query_drop("DELETE FROM names WHERE id = 2").unwrap();
    assert_eq!(err(&mut u, "UPDATE names_inv SET name = 'y'"), 1356);
    assert_eq!(err(&mut u, "DELETE FROM names_inv"), 1356);
    assert_eq!(err(&mut u, "SELECT pay FROM secret"), 1142);
    let rows: Vec<(i64, Option<i64>, String)> =
        root.query("SELECT * FROM d.secret ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![(1, Some(100), "x".into()), (3, None, "c".into())]
    );
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Accounts as tools read and copy them (exec/accounts.rs): IDENTIFIED WITH a plugin, BY a
/// password or AS a stored form, SHOW CREATE USER's statement making the same account again,
/// a mysql_native_password form from MySQL logging in, the mysql account tables readable
/// and read-only.
#[test]
fn accounts_show_create_user_and_mysql_user() {
    let s = start();
    let mut root = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY)",
        "CREATE USER a IDENTIFIED BY 'pa'",
        // MySQL's form of SHA1(SHA1('password')).
        "CREATE USER n IDENTIFIED WITH mysql_native_password \
         AS '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
    ] {
        root.query_drop(sql).unwrap();
    }
    assert_eq!(
        err(
            &mut root,
            "CREATE USER x IDENTIFIED WITH sha256_password BY 'p'"
        ),
        1524
    );
    assert_eq!(
        err(
            &mut root,
            "CREATE USER x IDENTIFIED WITH caching_sha2_password AS '$A$005$abc'"
        ),
        1827
    );
    as_user(&s, "n", "password", None).unwrap();
    assert_eq!(as_user(&s, "n", "other", None).unwrap_err(), 1045);
    // SHOW CREATE USER's statement makes the same account again: the same password works.
    let row: mysql::Row = root.query_first("SHOW CREATE USER a").unwrap().unwrap();
    assert_eq!(row.columns_ref()[0].name_str(), "CREATE USER for a@%");
    let made: String = row.get(0).unwrap();
    assert!(
        made.starts_with(
            "CREATE USER `a`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '$innoxide$"
        ),
        "{made}"
    );
    root.query_drop("DROP USER a").unwrap();
    assert_eq!(as_user(&s, "a", "pa", None).unwrap_err(), 1045);
    root.query_drop(&made).unwrap();
    as_user(&s, "a", "pa", None).unwrap();
    root.query_drop("GRANT SELECT ON d.* TO a").unwrap();
    root.query_drop("GRANT INSERT ON d.t TO a").unwrap();
    // ALTER USER without IDENTIFIED keeps the password.
    root.query_drop("ALTER USER a").unwrap();
    as_user(&s, "a", "pa", None).unwrap();
    let users: Vec<(String, String, String, String)> = root
        .query("SELECT Host, User, Select_priv, plugin FROM mysql.user ORDER BY User")
        .unwrap();
    assert_eq!(
        users,
        vec![
            (
                "%".into(),
                "a".into(),
                "N".into(),
                "caching_sha2_password".into()
            ),
            (
                "%".into(),
                "n".into(),
                "N".into(),
                "mysql_native_password".into()
            ),
            (
                "localhost".into(),
                "root".into(),
                "Y".into(),
                "caching_sha2_password".into()
            ),
        ]
    );
    let dbs: Vec<(String, String, String)> = root
        .query("SELECT Db, User, Select_priv FROM mysql.db")
        .unwrap();
    assert_eq!(dbs, vec![("d".into(), "a".into(), "Y".into())]);
    let tables: Vec<(String, String)> = root
        .query("SELECT Table_name, Table_priv FROM mysql.tables_priv")
        .unwrap();
    assert_eq!(tables, vec![("t".into(), "Insert".into())]);
    assert_eq!(err(&mut root, "UPDATE mysql.user SET plugin = 'x'"), 1036);
    let mut a = as_user(&s, "a", "pa", None).unwrap();
    assert_eq!(err(&mut a, "SELECT * FROM mysql.user"), 1142);
    assert_eq!(err(&mut a, "SHOW CREATE USER n"), 1227);
    a.query_drop("SHOW CREATE USER a").unwrap();
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Roles (exec/roles.rs R1-R4): CREATE ROLE, GRANT privileges to a role and the role to an
/// account, SET DEFAULT ROLE, SET ROLE, CURRENT_ROLE(), SHOW GRANTS, mysql.role_edges and
/// default_roles, a role's account locked, activate_all_roles_on_login, roles persisting
/// across a restart, DROP ROLE taking the role's privileges away.
#[test]
fn roles_as_mysql() {
    let s = start();
    let mut root = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY)",
        "INSERT INTO d.t VALUES (1)",
        "CREATE ROLE reader, 'writer'",
        "GRANT SELECT ON d.* TO reader",
        "GRANT INSERT ON d.t TO writer",
        "CREATE USER u IDENTIFIED BY 'pu'",
        "GRANT reader, writer TO u",
        "SET DEFAULT ROLE reader TO u",
    ] {
        root.query_drop(sql).unwrap();
    }
    for (sql, want) in [
        ("CREATE ROLE reader", 1396),
        ("GRANT nosuch TO u", 3523),
        ("GRANT reader TO nobody", 3523),
        ("SET DEFAULT ROLE root TO u", 3530),
        ("GRANT reader TO reader", 4027),
    ] {
        assert_eq!(err(&mut root, sql), want, "{sql}");
    }
    // The graph of role grants stays acyclic (R4); a refused GRANT grants nothing.
    root.query_drop("CREATE ROLE r1, r2, r3").unwrap();
    root.query_drop("GRANT r1 TO r2").unwrap();
    root.query_drop("GRANT r2 TO r3").unwrap();
    match root.query_drop("GRANT r3 TO r1").unwrap_err() {
        mysql::Error::MySqlError(e) => assert_eq!(
            (e.code, e.message.as_str()),
            (
                4027,
                "User account `r1`@`%` is directly or indirectly granted to the role \
                 `r3`@`%`. The GRANT would create a loop"
            )
        ),
        e => panic!("{e}"),
    }
    assert_eq!(err(&mut root, "GRANT reader, r2 TO r1"), 4027);
    assert_eq!(
        list(&mut root, "SHOW GRANTS FOR r1"),
        ["GRANT USAGE ON *.* TO `r1`@`%`"]
    );
    root.query_drop("DROP ROLE r1, r2, r3").unwrap();
    let grants = list(&mut root, "SHOW GRANTS FOR u");
    assert_eq!(
        grants,
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT `reader`@`%`,`writer`@`%` TO `u`@`%`",
        ]
    );
    let using = list(&mut root, "SHOW GRANTS FOR u USING reader");
    assert_eq!(
        using,
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `d`.* TO `u`@`%`",
            "GRANT `reader`@`%`,`writer`@`%` TO `u`@`%`",
        ]
    );
    assert_eq!(err(&mut root, "SHOW GRANTS FOR u USING root"), 3530);
    let edges: Vec<(String, String)> = root
        .query("SELECT FROM_USER, TO_USER FROM mysql.role_edges ORDER BY FROM_USER")
        .unwrap();
    assert_eq!(
        edges,
        vec![("reader".into(), "u".into()), ("writer".into(), "u".into())]
    );
    // A role is a locked account.
    assert_eq!(as_user(&s, "reader", "", None).unwrap_err(), 3118);
    // The default role is active at login; SET ROLE changes what the session may do.
    let mut u = as_user(&s, "u", "pu", Some("d")).unwrap();
    let role: String = u.query_first("SELECT CURRENT_ROLE()").unwrap().unwrap();
    assert_eq!(role, "`reader`@`%`");
    let n: i64 = u.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 1);
    assert_eq!(err(&mut u, "INSERT INTO t VALUES (2)"), 1142);
    u.query_drop("SET ROLE ALL").unwrap();
    u.query_drop("INSERT INTO t VALUES (2)").unwrap();
    let mine = list(&mut u, "SHOW GRANTS");
    assert!(
        mine.contains(&"GRANT SELECT ON `d`.* TO `u`@`%`".to_string()),
        "{mine:?}"
    );
    u.query_drop("SET ROLE NONE").unwrap();
    assert_eq!(err(&mut u, "SELECT COUNT(*) FROM t"), 1142);
    assert_eq!(err(&mut u, "SET ROLE root"), 3530);
    u.query_drop("SET ROLE DEFAULT").unwrap();
    u.query_drop("SELECT COUNT(*) FROM t").unwrap();
    // A revoked role no longer counts, even while active.
    root.query_drop("REVOKE reader FROM u").unwrap();
    assert_eq!(err(&mut u, "SELECT COUNT(*) FROM t"), 1142);
    root.query_drop("GRANT reader TO u").unwrap();
    // activate_all_roles_on_login: every granted role at login.
    root.query_drop("SET DEFAULT ROLE NONE TO u").unwrap();
    assert_eq!(as_user(&s, "u", "pu", Some("d")).unwrap_err(), 1044);
    let mut u2 = as_user(&s, "u", "pu", None).unwrap();
    let role: String = u2.query_first("SELECT CURRENT_ROLE()").unwrap().unwrap();
    assert_eq!(role, "NONE");
    root.query_drop("SET GLOBAL activate_all_roles_on_login = ON")
        .unwrap();
    let mut u3 = as_user(&s, "u", "pu", Some("d")).unwrap();
    let role: String = u3.query_first("SELECT CURRENT_ROLE()").unwrap().unwrap();
    assert_eq!(role, "`reader`@`%`,`writer`@`%`");
    root.query_drop("SET GLOBAL activate_all_roles_on_login = OFF")
        .unwrap();
    // Persisted: after a restart the default role is still there.
    root.query_drop("ALTER USER u DEFAULT ROLE writer").unwrap();
    let dir = s.stop_keep_dir(false);
    let s = start_in(dir, false, &[]);
    let mut root = connect(&s);
    let defaults: Vec<(String, String)> = root
        .query("SELECT USER, DEFAULT_ROLE_USER FROM mysql.default_roles")
        .unwrap();
    assert_eq!(defaults, vec![("u".into(), "writer".into())]);
    let mut u = as_user(&s, "u", "pu", Some("d")).unwrap();
    u.query_drop("INSERT INTO t VALUES (3)").unwrap();
    root.query_drop("DROP ROLE writer").unwrap();
    let mut u = as_user(&s, "u", "pu", None).unwrap();
    assert_eq!(err(&mut u, "INSERT INTO d.t VALUES (4)"), 1142);
    assert_eq!(list(&mut root, "SHOW GRANTS FOR u").len(), 2);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// mandatory_roles (exec/roles.rs R5, privs.rs P4): the roles named are held by every
/// account without a grant: SET ROLE and activate_all_roles_on_login take them, SHOW GRANTS
/// lists them for the session's own account (not FOR another), REVOKE and DROP ROLE of one
/// are 3628, a name that is no account is passed over until it is created, a value that does
/// not parse is 1231; set in an option at startup it acts the same.
#[test]
fn mandatory_roles_as_mysql() {
    let s = start();
    let mut root = connect(&s);
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY)",
        "INSERT INTO d.t VALUES (1)",
        "CREATE ROLE reader",
        "GRANT SELECT ON d.* TO reader",
        "CREATE USER u IDENTIFIED BY 'pu'",
        "SET GLOBAL mandatory_roles = '`reader`@`%`, later'",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let shown: String = root
        .query_first("SELECT @@global.mandatory_roles")
        .unwrap()
        .unwrap();
    assert_eq!(shown, "`reader`@`%`, later");
    // Held but not active until activated.
    let mut u = as_user(&s, "u", "pu", None).unwrap();
    assert_eq!(err(&mut u, "SELECT COUNT(*) FROM d.t"), 1142);
    u.query_drop("SET ROLE reader").unwrap();
    let n: i64 = u.query_first("SELECT COUNT(*) FROM d.t").unwrap().unwrap();
    assert_eq!(n, 1);
    assert!(
        list(&mut u, "SHOW GRANTS").contains(&"GRANT `reader`@`%` TO `u`@`%`".to_string()),
        "listed for the session's own account"
    );
    assert_eq!(
        list(&mut root, "SHOW GRANTS FOR u").len(),
        1,
        "not for another's"
    );
    assert_eq!(err(&mut root, "REVOKE reader FROM u"), 3628);
    assert_eq!(err(&mut root, "DROP ROLE reader"), 3628);
    assert_eq!(err(&mut root, "SET GLOBAL mandatory_roles = 'a,,b'"), 1231);
    // `later` is no account yet; once created it is held.
    root.query_drop("CREATE ROLE later").unwrap();
    root.query_drop("GRANT INSERT ON d.t TO later").unwrap();
    root.query_drop("SET GLOBAL activate_all_roles_on_login = ON")
        .unwrap();
    let mut u2 = as_user(&s, "u", "pu", Some("d")).unwrap();
    let role: String = u2.query_first("SELECT CURRENT_ROLE()").unwrap().unwrap();
    assert_eq!(role, "`later`@`%`,`reader`@`%`");
    u2.query_drop("INSERT INTO t VALUES (2)").unwrap();
    // Lifted: the role can be dropped, and the account no longer holds it.
    root.query_drop("SET GLOBAL mandatory_roles = ''").unwrap();
    root.query_drop("DROP ROLE reader").unwrap();
    let mut u3 = as_user(&s, "u", "pu", None).unwrap();
    assert_eq!(err(&mut u3, "SELECT COUNT(*) FROM d.t"), 1142);
    assert_eq!(err(&mut u3, "SET ROLE later"), 3530);
    // From an option at startup.
    let dir = s.stop_keep_dir(false);
    let s = start_in(
        dir,
        false,
        &[
            "--mandatory-roles=later",
            "--activate-all-roles-on-login=ON",
        ],
    );
    let mut u4 = as_user(&s, "u", "pu", Some("d")).unwrap();
    u4.query_drop("INSERT INTO t VALUES (3)").unwrap();
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Column privileges (MySQL 8.0): GRANT/REVOKE SELECT, INSERT, UPDATE, REFERENCES on columns,
/// SHOW GRANTS' form, each statement checked on the columns it reads and writes (1143), SHOW
/// COLUMNS and information_schema.COLUMNS listing only columns with a privilege,
/// mysql.columns_priv and information_schema.COLUMN_PRIVILEGES, a restart, DROP USER.
#[test]
fn column_privileges_as_mysql() {
    let s = start();
    let mut root = connect(&s);
    for q in [
        "CREATE DATABASE cp",
        "CREATE TABLE cp.t (id INT PRIMARY KEY, a INT, b INT, secret VARCHAR(10))",
        "INSERT INTO cp.t VALUES (1, 10, 100, 'x'), (2, 20, 200, 'y')",
        "CREATE USER 'cu'@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT (id, a, b), UPDATE (b) ON cp.t TO cu",
        "GRANT INSERT (id, a) ON cp.t TO cu",
    ] {
        root.query_drop(q).unwrap();
    }
    let shown = vec![
        "GRANT USAGE ON *.* TO `cu`@`%`".to_string(),
        "GRANT SELECT (`a`, `b`, `id`), INSERT (`a`, `id`), UPDATE (`b`) ON `cp`.`t` TO `cu`@`%`"
            .to_string(),
    ];
    assert_eq!(grants(&mut root, "SHOW GRANTS FOR cu"), shown);
    // Bad grants: a column that does not exist, a privilege columns cannot have, a level
    // that has no columns, a REVOKE of a column grant that is not there.
    assert_eq!(err(&mut root, "GRANT SELECT (nope) ON cp.t TO cu"), 1054);
    assert_eq!(err(&mut root, "GRANT DELETE (a) ON cp.t TO cu"), 1144);
    assert_eq!(err(&mut root, "GRANT SELECT (a) ON cp.* TO cu"), 1144);
    assert_eq!(
        err(&mut root, "REVOKE SELECT (secret) ON cp.t FROM cu"),
        1147
    );

    let mut u = as_user(&s, "cu", "pw", Some("cp")).unwrap();
    let got: Vec<(i64, i64)> = u.query("SELECT id, a FROM t ORDER BY id").unwrap();
    assert_eq!(got, [(1, 10), (2, 20)]);
    let n: i64 = u
        .query_first("SELECT COUNT(*) FROM t WHERE b > 150")
        .unwrap()
        .unwrap();
    assert_eq!(n, 1);
    for q in [
        "SELECT * FROM t",
        "SELECT secret FROM t",
        "SELECT id FROM t WHERE secret = 'x'",
        "SELECT id FROM t ORDER BY secret",
        "SELECT (SELECT MAX(secret) FROM t) AS m",
        "UPDATE t SET a = 1",
        "UPDATE t SET b = 1 WHERE secret = 'x'",
        "INSERT INTO t (id, b) VALUES (3, 3)",
        "INSERT INTO t VALUES (3, 3, 3, 'z')",
    ] {
        assert_eq!(err(&mut u, q), 1143, "{q}");
    }
    // The first column lacking the privilege is named, as MySQL names it.
    let e = u.query_drop("SELECT * FROM t").unwrap_err();
    assert!(
        e.to_string().contains(
            "SELECT command denied to user 'cu'@'localhost' for column 'secret' in table 't'"
        ),
        "{e}"
    );
    // What the grants allow.
    u.query_drop("UPDATE t SET b = b + 1 WHERE a = 10").unwrap();
    u.query_drop("INSERT INTO t (id, a) VALUES (3, 30)")
        .unwrap();
    let b: Option<i64> = u
        .query_first("SELECT b FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(b, Some(101));
    // A multi-table UPDATE: UPDATE on the columns set, SELECT on those read.
    u.query_drop("UPDATE t AS x JOIN t AS y ON y.id = x.id SET x.b = y.b + 1 WHERE x.id = 2")
        .unwrap();
    assert_eq!(
        err(
            &mut u,
            "UPDATE t AS x JOIN t AS y ON y.id = x.id SET x.a = 1"
        ),
        1143
    );
    // No table-level privilege: DELETE and REPLACE are 1142.
    assert_eq!(err(&mut u, "DELETE FROM t WHERE id = 3"), 1142);
    assert_eq!(
        err(
            &mut u,
            "SELECT x.id FROM cp.t AS x, cp.t AS y WHERE y.secret = x.secret"
        ),
        1143
    );
    // A prepared statement keeps its plan and is checked again at each execution.
    let st = u.prep("SELECT a FROM t WHERE id = ?").unwrap();
    let a: Option<i64> = u.exec_first(&st, (2,)).unwrap();
    assert_eq!(a, Some(20));
    root.query_drop("REVOKE SELECT (a) ON cp.t FROM cu")
        .unwrap();
    let e = u.exec_first::<i64, _, _>(&st, (2,)).unwrap_err();
    assert_eq!(code_of(&e), 1143);
    // Only the columns with a privilege are listed.
    let cols: Vec<String> = u
        .query_map("SHOW COLUMNS FROM t", |r: mysql::Row| {
            r.get::<String, _>(0).unwrap()
        })
        .unwrap();
    assert_eq!(cols, ["id", "a", "b"]);
    let cols: Vec<String> = u
        .query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'cp' \
             ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    assert_eq!(cols, ["id", "a", "b"]);
    let privs: Vec<(String, String, String)> = u
        .query(
            "SELECT COLUMN_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM \
             information_schema.COLUMN_PRIVILEGES ORDER BY COLUMN_NAME, PRIVILEGE_TYPE",
        )
        .unwrap();
    let want: Vec<(String, String, String)> = [
        ("a", "INSERT"),
        ("b", "SELECT"),
        ("b", "UPDATE"),
        ("id", "INSERT"),
        ("id", "SELECT"),
    ]
    .iter()
    .map(|(c, p)| (c.to_string(), p.to_string(), "NO".to_string()))
    .collect();
    assert_eq!(privs, want);
    let rows: Vec<(String, String, String)> = root
        .query(
            "SELECT User, Column_name, Column_priv FROM mysql.columns_priv \
             ORDER BY Column_name",
        )
        .unwrap();
    assert_eq!(
        rows,
        [
            ("cu".into(), "a".into(), "Insert".into()),
            ("cu".into(), "b".into(), "Select,Update".into()),
            ("cu".into(), "id".into(), "Select,Insert".into()),
        ]
    );
    let tp: (String, String) = root
        .query_first("SELECT Table_priv, Column_priv FROM mysql.tables_priv WHERE User = 'cu'")
        .unwrap()
        .unwrap();
    assert_eq!(tp, ("".to_string(), "Select,Insert,Update".to_string()));
    // A table privilege beside column ones: named, then again with its columns.
    root.query_drop("GRANT SELECT ON cp.t TO cu WITH GRANT OPTION")
        .unwrap();
    let all = grants(&mut root, "SHOW GRANTS FOR cu");
    assert_eq!(
        all[1],
        "GRANT SELECT, SELECT (`b`, `id`), INSERT (`a`, `id`), UPDATE (`b`) ON `cp`.`t` TO \
         `cu`@`%` WITH GRANT OPTION"
    );
    let n: i64 = u
        .query_first("SELECT COUNT(secret) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2, "row 3 was inserted without one");
    root.query_drop("REVOKE SELECT, GRANT OPTION ON cp.t FROM cu")
        .unwrap();
    assert_eq!(err(&mut u, "SELECT secret FROM t"), 1143);

    // Column grants survive a restart; REVOKE ALL and DROP USER take them away.
    drop((u, root));
    let dir = s.stop_keep_dir(false);
    let s = start_in(dir, false, &[]);
    let mut root = connect(&s);
    let after = grants(&mut root, "SHOW GRANTS FOR cu");
    assert_eq!(
        after[1],
        "GRANT SELECT (`b`, `id`), INSERT (`a`, `id`), UPDATE (`b`) ON `cp`.`t` TO `cu`@`%`"
    );
    root.query_drop("REVOKE ALL PRIVILEGES, GRANT OPTION FROM cu")
        .unwrap();
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR cu"),
        ["GRANT USAGE ON *.* TO `cu`@`%`"]
    );
    root.query_drop("GRANT SELECT (a) ON cp.t TO cu").unwrap();
    root.query_drop("DROP USER cu").unwrap();
    root.query_drop("CREATE USER cu IDENTIFIED BY 'pw'")
        .unwrap();
    assert_eq!(
        grants(&mut root, "SHOW GRANTS FOR cu"),
        ["GRANT USAGE ON *.* TO `cu`@`%`"]
    );
    let n: i64 = root
        .query_first("SELECT COUNT(*) FROM mysql.columns_priv")
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
}

/// max_connections as MySQL's: that many connections for any account and one more for an
/// account with SUPER; past that 1040 (Too many connections), each refusal counted in
/// Connection_errors_max_connections, and a closed connection makes room again.
#[test]
fn max_connections_keeps_the_last_connection_for_super() {
    let s = start_with(false, &["--max-connections=2"]);
    let mut root = connect(&s);
    root.query_drop("CREATE USER 'u'@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    let u1 = as_user(&s, "u", "pw", None).unwrap();
    // Two open: the third is for SUPER only.
    assert_eq!(as_user(&s, "u", "pw", None).err(), Some(1040));
    let mut extra = as_user(&s, "root", "", None).unwrap();
    let count: u64 = extra.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(count, 1);
    // Three open: nobody else.
    assert_eq!(as_user(&s, "root", "", None).err(), Some(1040));
    assert_eq!(as_user(&s, "u", "pw", None).err(), Some(1040));
    let (_, refused): (String, u64) = root
        .query_first("SHOW GLOBAL STATUS LIKE 'Connection_errors_max_connections'")
        .unwrap()
        .unwrap();
    assert_eq!(refused, 3);
    drop(u1);
    drop(extra);
    // The server notices the closed connections on its own time.
    let mut again = None;
    for _ in 0..200 {
        if let Ok(c) = as_user(&s, "u", "pw", None) {
            again = Some(c);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(again.is_some(), "no room after two connections closed");
}
