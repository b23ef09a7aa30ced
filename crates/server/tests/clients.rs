//! The server with real clients: each program under tests/clients/ connects, runs prepared
//! statements, a transaction that commits and one that rolls back, and reads warnings,
//! asserting exact values, first over TCP and then over the Unix socket. The programs exit
//! non-zero with a message on any wrong result:
//! - `mariadb_cli.py`: the mariadb CLI with `-e` and in an interactive session on a pty;
//! - `pymysql_client.py`: PyMySQL; `mysqldb_client.py`: mysqlclient (libmariadb);
//! - `go/`: go-sql-driver/mysql (server-side prepared statements).
//!
//! A missing client fails the test when the CI environment variable is set (.ci/run
//! installs them) and is skipped with a notice otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{start_with, Server};

/// The Debian-packaged Python, which has python3-pymysql and python3-mysqldb (a python3
/// earlier on PATH may be another installation without them).
const PYTHON: &str = "/usr/bin/python3";

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients")
}

/// Runs `cmd` to its end, killing it after `limit`.
fn run(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} still running after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// True if `probe` succeeds. Otherwise panics under CI, or prints a notice and returns false.
/// Whether mariadb-dump is installed (`available`).
fn dump_available() -> bool {
    available(
        "mariadb-dump",
        Command::new("mariadb-dump").arg("--version"),
        "apt-get install mariadb-client",
    )
}

fn available(what: &str, probe: &mut Command, install: &str) -> bool {
    let ok = probe
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing ({install}); .ci/run must install it"
        );
        eprintln!("NOTICE: skipping the {what} test: it is not installed ({install})");
    }
    ok
}

/// Runs a client program against `s` over TCP, then over the Unix socket; each run must exit
/// 0 and print "<name>: OK".
fn run_client(s: &Server, name: &str, program: &mut dyn FnMut() -> Command) {
    let socket = s.socket.as_ref().expect("started with a socket");
    let tcp = ["--host", "127.0.0.1", "--port", &s.port.to_string()].map(String::from);
    let unix = ["--socket".to_string(), socket.display().to_string()];
    for args in [&tcp[..], &unix[..]] {
        let mut cmd = program();
        cmd.args(args);
        let out = run(&mut cmd, Duration::from_secs(240));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        for notice in stderr.lines().filter(|l| l.contains("NOTICE")) {
            eprintln!("{notice}");
        }
        assert!(
            out.status.success() && stdout.contains(&format!("{name}: OK")),
            "{name} {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
    }
    assert_eq!(s.panics(), Vec::<String>::new(), "a server thread panicked");
}

fn python_client(module: &str, script: &str, name: &str, package: &str) {
    let probe = format!("import {module}");
    if !available(
        name,
        Command::new(PYTHON).args(["-c", &probe]),
        &format!("apt-get install {package}"),
    ) {
        return;
    }
    let s = start_with(true, &[]);
    let path = clients_dir().join(script);
    run_client(&s, name, &mut || {
        let mut c = Command::new(PYTHON);
        c.arg(&path);
        c
    });
}

#[test]
fn pymysql() {
    python_client("pymysql", "pymysql_client.py", "pymysql", "python3-pymysql");
}

/// latin1 connections (handshake and SET NAMES): statements and results converted.
#[test]
fn latin1_connections() {
    python_client("pymysql", "latin1_client.py", "latin1", "python3-pymysql");
}

#[test]
fn mysqlclient() {
    python_client(
        "MySQLdb",
        "mysqldb_client.py",
        "mysqlclient",
        "python3-mysqldb",
    );
}

#[test]
fn mariadb_cli() {
    if !available(
        "mariadb CLI",
        Command::new("mariadb").arg("--version"),
        "apt-get install mariadb-client",
    ) || !available(
        "mariadb CLI",
        Command::new(PYTHON).arg("--version"),
        "apt-get install python3",
    ) {
        return;
    }
    let s = start_with(true, &[]);
    let path = clients_dir().join("mariadb_cli.py");
    run_client(&s, "mariadb CLI", &mut || {
        let mut c = Command::new(PYTHON);
        c.arg(&path);
        c
    });
}

/// The Go toolchain: `go` on PATH, else /usr/local/go/bin/go.
fn go() -> Option<PathBuf> {
    let on_path = Command::new("go")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if on_path {
        return Some("go".into());
    }
    let local = PathBuf::from("/usr/local/go/bin/go");
    local.exists().then_some(local)
}

#[test]
fn go_sql_driver() {
    let Some(go) = go() else {
        available("Go toolchain", &mut Command::new("go"), "https://go.dev/dl");
        return;
    };
    let dir = clients_dir().join("go");
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("goclient");
    // go.sum pins the driver; the module proxy serves it on the first build.
    let out = run(
        Command::new(&go)
            .args(["build", "-mod=readonly", "-o"])
            .arg(&exe)
            .arg(".")
            .current_dir(&dir)
            .env("GOTOOLCHAIN", "local")
            .env("GOFLAGS", ""),
        Duration::from_secs(600),
    );
    assert!(
        out.status.success(),
        "go build failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = start_with(true, &[]);
    run_client(&s, "go-sql-driver", &mut || Command::new(&exe));
}

/// Runs a shell pipeline (the mariadb tools with their redirections), failing on a non-zero
/// exit.
fn sh(script: &str) -> String {
    let out = run(
        Command::new("bash").args(["-c", &format!("set -euo pipefail; {script}")]),
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "{script}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every table of `db` as (SHOW CREATE TABLE, rows as text: values as bytes, None for NULL).
#[allow(clippy::type_complexity)]
fn snapshot(port: u16, db: &str) -> Vec<(String, Vec<Vec<Option<Vec<u8>>>>)> {
    use mysql::prelude::*;
    let mut c = common::connect_port(port);
    let tables: Vec<String> = c.query(format!("SHOW TABLES FROM {db}")).unwrap();
    tables
        .iter()
        .map(|t| {
            let (_, create): (String, String) = c
                .query_first(format!("SHOW CREATE TABLE {db}.{t}"))
                .unwrap()
                .unwrap();
            let rows: Vec<mysql::Row> = c
                .query(format!("SELECT * FROM {db}.{t} ORDER BY 1"))
                .unwrap();
            let rows = rows
                .into_iter()
                .map(|r| {
                    r.unwrap()
                        .into_iter()
                        .map(|v| match v {
                            mysql::Value::Bytes(b) => Some(b),
                            mysql::Value::NULL => None,
                            other => panic!("text protocol value {other:?}"),
                        })
                        .collect()
                })
                .collect();
            (create, rows)
        })
        .collect()
}

/// mariadb-dump, in its default mode (LOCK TABLES), with --single-transaction, with
/// --lock-all-tables and with --all-databases, and the dumps restored with the mariadb CLI into a new server: the same
/// table definitions and the same rows, bytes and NULLs included.
#[test]
fn mariadb_dump_round_trip() {
    use mysql::prelude::*;
    if !dump_available() {
        return;
    }
    let s = start_with(false, &[]);
    let mut c = common::connect_port(s.port);
    c.query_drop("CREATE DATABASE shop").unwrap();
    c.query_drop(
        "CREATE TABLE shop.items (id INT AUTO_INCREMENT PRIMARY KEY, \
         name VARCHAR(40) NOT NULL, price DECIMAL(10,2), made DATETIME(6), \
         raw BLOB, l1 VARCHAR(10) CHARACTER SET latin1, \
         stamp TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), \
         UNIQUE KEY u_name (name), KEY k_price (price)) COMMENT='stock'",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO shop.items (name, price, made, raw, l1) VALUES \
         ('apple', 1.50, '2026-01-02 03:04:05.123456', 0x00FF0A27, 'caf\u{e9}'), \
         ('it''s \"quoted\"\\\\ and\\nnewline', NULL, NULL, NULL, NULL), \
         ('emoji \u{1F600}', -0.01, '1999-12-31 23:59:59', '', 'x')",
    )
    .unwrap();
    c.query_drop("CREATE TABLE shop.empty (k BIGINT UNSIGNED PRIMARY KEY, v DOUBLE)")
        .unwrap();
    c.query_drop("CREATE TABLE shop.nopk (a INT, b TEXT)")
        .unwrap();
    c.query_drop("INSERT INTO shop.nopk VALUES (1, 'x'), (1, 'x'), (NULL, NULL)")
        .unwrap();
    let before = snapshot(s.port, "shop");
    assert!(before[1].0.contains("AUTO_INCREMENT=4"), "{}", before[1].0);
    let dir = tempfile::tempdir().unwrap();
    let p = s.port;
    for (i, opts) in [
        "--databases shop",
        "--single-transaction --databases shop",
        // FLUSH TABLES WITH READ LOCK, and COM_REFRESH.
        "--lock-all-tables --flush-logs --databases shop",
        "--all-databases",
    ]
    .iter()
    .enumerate()
    {
        let file = dir.path().join(format!("dump{i}.sql"));
        let file = file.display();
        sh(&format!(
            "mariadb-dump -h127.0.0.1 -P{p} -uroot {opts} > {file}"
        ));
        let target = start_with(false, &[]);
        let q = target.port;
        sh(&format!("mariadb -h127.0.0.1 -P{q} -uroot < {file}"));
        assert_eq!(
            snapshot(q, "shop"),
            before,
            "restored from mariadb-dump {opts}"
        );
        // The restored table goes on numbering where the original stopped.
        let mut t = common::connect_port(q);
        t.query_drop("INSERT INTO shop.items (name) VALUES ('next')")
            .unwrap();
        assert_eq!(t.last_insert_id(), 4);
    }
}

/// mariadb-dump --system=users writes accounts, roles, their grants and default roles for a
/// MySQL 8.0 server in executable comments nested in one another (`/*!80001 CREATE ROLE
/// 'r'/*!80001 @'%'*/ */`) beside MariaDB-only ones (`/*M!100005 ... */`, comments to us):
/// restored with the mariadb CLI into a new server, the same grants, role grants and default
/// roles come back, and the account logs in with its password.
#[test]
fn mariadb_dump_users_and_roles_round_trip() {
    use mysql::prelude::*;
    if !dump_available() {
        return;
    }
    let s = start_with(false, &[]);
    let mut c = common::connect_port(s.port);
    for sql in [
        "CREATE DATABASE d",
        "CREATE ROLE r1, r2",
        "GRANT SELECT ON d.* TO r1",
        "GRANT INSERT ON d.* TO r2",
        "GRANT r2 TO r1",
        "CREATE USER u1 IDENTIFIED BY 'pw1'",
        "GRANT r1 TO u1",
        "SET DEFAULT ROLE r1 TO u1",
    ] {
        c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let state = |port: u16| {
        let mut c = common::connect_port(port);
        let edges: Vec<(String, String, String)> = c
            .query(
                "SELECT FROM_USER, TO_USER, WITH_ADMIN_OPTION FROM mysql.role_edges ORDER BY 1, 2",
            )
            .unwrap();
        let defaults: Vec<(String, String)> = c
            .query("SELECT USER, DEFAULT_ROLE_USER FROM mysql.default_roles")
            .unwrap();
        let grants: Vec<Vec<String>> = ["r1", "r2", "u1"]
            .iter()
            .map(|a| c.query(format!("SHOW GRANTS FOR {a}")).unwrap())
            .collect();
        (edges, defaults, grants)
    };
    let before = state(s.port);
    assert_eq!(before.0.len(), 2, "{before:?}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.sql");
    let file = file.display();
    let p = s.port;
    sh(&format!(
        "mariadb-dump -h127.0.0.1 -P{p} -uroot --system=users --insert-ignore > {file}"
    ));
    let target = start_with(false, &[]);
    let q = target.port;
    sh(&format!("mariadb -h127.0.0.1 -P{q} -uroot < {file}"));
    assert_eq!(state(q), before);
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(q)
        .user(Some("u1"))
        .pass(Some("pw1"));
    let mut u = mysql::Conn::new(opts).unwrap();
    let role: String = u.query_first("SELECT CURRENT_ROLE()").unwrap().unwrap();
    assert_eq!(role, "`r1`@`%`");
}

/// SHUTDOWN (the statement, MySQL 8.0) and COM_SHUTDOWN (`mariadb-admin shutdown`) stop the
/// server cleanly, as SIGTERM does; an account without the SHUTDOWN privilege gets 1227.
#[test]
fn shutdown_by_statement_and_by_mariadb_admin() {
    use mysql::prelude::*;
    let mut s = start_with(false, &[]);
    let mut c = common::connect_port(s.port);
    c.query_drop("CREATE USER plain@localhost").unwrap();
    c.query_drop("GRANT ALL ON test.* TO plain@localhost")
        .unwrap();
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some("plain"));
    let mut p = mysql::Conn::new(opts).unwrap();
    match p.query_drop("SHUTDOWN").unwrap_err() {
        mysql::Error::MySqlError(e) => assert_eq!(
            (e.code, e.message.as_str()),
            (
                1227,
                "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this \
                 operation"
            )
        ),
        other => panic!("{other}"),
    }
    assert!(s.alive());
    c.query_drop("SHUTDOWN").unwrap();
    let st = s
        .exited_within(Duration::from_secs(60))
        .expect("the server stops");
    assert!(st.success(), "{st}");
    assert!(
        s.log_lines()
            .iter()
            .any(|l| l.contains("Received SHUTDOWN from user root")),
        "{:#?}",
        s.log_lines()
    );

    if !available(
        "mariadb-admin",
        Command::new("mariadb-admin").arg("--version"),
        "apt-get install mariadb-client",
    ) {
        return;
    }
    drop(s);
    let mut s = start_with(false, &[]);
    let out = Command::new("mariadb-admin")
        .args(["--no-defaults", "-h127.0.0.1", "-uroot", "--skip-ssl"])
        .args(["-P", &s.port.to_string(), "shutdown"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = s
        .exited_within(Duration::from_secs(60))
        .expect("the server stops");
    assert!(st.success(), "{st}");
}

/// LOAD DATA as MySQL 8.0: a server file under secure_file_priv (outside it, or with it NULL:
/// 1290; FILE needed), the default tab format with `\N` and escapes, CSV with quotes, IGNORE n
/// LINES, @variables and SET, short and long lines (1261/1262), REPLACE; LOAD DATA LOCAL
/// through the mariadb CLI with local_infile ON, 3948 with it OFF; Records/Skipped counts.
#[test]
fn load_data_as_mysql() {
    use mysql::prelude::*;
    if !available(
        "mariadb CLI",
        Command::new("mariadb").arg("--version"),
        "apt-get install mariadb-client",
    ) {
        return;
    }
    let files = tempfile::tempdir().unwrap();
    let dir = files.path().display().to_string();
    let s = start_with(
        false,
        &[&format!("--secure-file-priv={dir}"), "--local-infile=ON"],
    );
    let mut c = common::connect_port(s.port);
    for q in [
        "CREATE DATABASE ld",
        "CREATE TABLE ld.t (id INT PRIMARY KEY, v VARCHAR(20) DEFAULT 'dflt', n INT)",
        "CREATE USER plain@'%'",
        "GRANT ALL ON ld.* TO plain@'%'",
    ] {
        c.query_drop(q).unwrap();
    }
    let tsv = files.path().join("a.tsv");
    std::fs::write(&tsv, b"1\tone\t10\n2\t\\N\t\\N\n3\ta\\tb\t30\n").unwrap();
    c.query_drop(format!(
        "LOAD DATA INFILE '{}' INTO TABLE ld.t",
        tsv.display()
    ))
    .unwrap();
    assert_eq!(c.affected_rows(), 3);
    assert_eq!(
        c.info_str(),
        "Records: 3  Deleted: 0  Skipped: 0  Warnings: 0"
    );
    let rows: Vec<(i64, Option<String>, Option<i64>)> =
        c.query("SELECT id, v, n FROM ld.t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        [
            (1, Some("one".into()), Some(10)),
            (2, None, None),
            (3, Some("a\tb".into()), Some(30)),
        ]
    );
    // CSV: quotes, a doubled quote, a header skipped, @variables and SET.
    let csv = files.path().join("b.csv");
    std::fs::write(&csv, b"id,v,n\n4,\"x,y\",4\n5,\"say \"\"hi\"\"\",5\n").unwrap();
    c.query_drop(format!(
        "LOAD DATA INFILE '{}' INTO TABLE ld.t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' \
         IGNORE 1 LINES (@i, v, @n) SET id = @i, n = @n * 100",
        csv.display()
    ))
    .unwrap();
    let rows: Vec<(i64, String, i64)> = c
        .query("SELECT id, v, n FROM ld.t WHERE id >= 4 ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        [(4, "x,y".into(), 400), (5, "say \"hi\"".into(), 500)]
    );
    // A short line takes the defaults, a long one loses its extra field: errors in strict
    // mode, warnings otherwise; REPLACE replaces a duplicate.
    let odd = files.path().join("odd.tsv");
    std::fs::write(&odd, b"6\n7\tseven\t7\textra\n1\tuno\t11\n").unwrap();
    let load_odd = format!(
        "LOAD DATA INFILE '{}' REPLACE INTO TABLE ld.t",
        odd.display()
    );
    let e = c.query_drop(&load_odd).unwrap_err();
    assert!(e.to_string().contains("1261"), "{e}");
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop(&load_odd).unwrap();
    assert_eq!(
        c.info_str(),
        "Records: 3  Deleted: 1  Skipped: 0  Warnings: 2"
    );
    let codes: Vec<u16> = c
        .query_map("SHOW WARNINGS", |r: mysql::Row| r.get::<u16, _>(1).unwrap())
        .unwrap();
    assert_eq!(codes, [1261, 1262]);
    let rows: Vec<(i64, String)> = c
        .query("SELECT id, v FROM ld.t WHERE id IN (1, 6, 7) ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        [(1, "uno".into()), (6, "dflt".into()), (7, "seven".into())]
    );
    // Outside secure_file_priv, and without FILE: refused.
    let e = c
        .query_drop("LOAD DATA INFILE '/etc/hostname' INTO TABLE ld.t")
        .unwrap_err();
    assert!(e.to_string().contains("1290"), "{e}");
    let p = s.port;
    let mut plain = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(p)
            .user(Some("plain")),
    )
    .unwrap();
    let e = plain
        .query_drop(format!(
            "LOAD DATA INFILE '{}' INTO TABLE ld.t",
            tsv.display()
        ))
        .unwrap_err();
    assert!(e.to_string().contains("1227"), "{e}");
    // LOCAL: the client sends the file; duplicates are skipped (LOCAL implies IGNORE).
    let local = files.path().join("local.csv");
    std::fs::write(&local, b"100,l1,1\n101,l2,2\n1,dup,3\n").unwrap();
    let l = local.display();
    let out = sh(&format!(
        "mariadb --local-infile=1 -h127.0.0.1 -P{p} -uroot -vvv ld -e \
         \"LOAD DATA LOCAL INFILE '{l}' INTO TABLE t FIELDS TERMINATED BY ','\""
    ));
    assert!(out.contains("Records: 3  Deleted: 0  Skipped: 1"), "{out}");
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM ld.t WHERE id >= 100")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2);
    c.query_drop("SET GLOBAL local_infile = OFF").unwrap();
    let out = Command::new("mariadb")
        .args([
            "--local-infile=1",
            "-h127.0.0.1",
            &format!("-P{p}"),
            "-uroot",
            "ld",
            "-e",
            &format!("LOAD DATA LOCAL INFILE '{l}' INTO TABLE t"),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3948"), "{err}");
    // The connection that was refused still works.
    let n: i64 = c.query_first("SELECT COUNT(*) FROM ld.t").unwrap().unwrap();
    assert_eq!(n, 9);

    // SELECT ... INTO OUTFILE and back with LOAD DATA: the same rows (NULLs, quotes, commas,
    // tabs); an existing file is 1086; DUMPFILE of two rows is 1172 and leaves no file.
    c.query_drop("INSERT INTO ld.t VALUES (200, CONCAT('q\"u,o', CHAR(9), 'te', CHAR(92)), NULL)")
        .unwrap();
    let out = files.path().join("dump.csv");
    let opts = "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n'";
    let export = format!("SELECT * FROM ld.t INTO OUTFILE '{}' {opts}", out.display());
    c.query_drop(&export).unwrap();
    assert_eq!(c.affected_rows(), 10);
    let e = c.query_drop(&export).unwrap_err();
    assert!(e.to_string().contains("1086"), "{e}");
    c.query_drop("CREATE TABLE ld.t2 LIKE ld.t").unwrap();
    c.query_drop(format!(
        "LOAD DATA INFILE '{}' INTO TABLE ld.t2 {opts}",
        out.display()
    ))
    .unwrap();
    let all = |c: &mut mysql::Conn, t: &str| -> Vec<(i64, Option<String>, Option<i64>)> {
        c.query(format!("SELECT id, v, n FROM ld.{t} ORDER BY id"))
            .unwrap()
    };
    assert_eq!(all(&mut c, "t2"), all(&mut c, "t"));
    let dump = files.path().join("two.bin");
    let e = c
        .query_drop(format!(
            "SELECT v FROM ld.t WHERE id IN (1, 3) INTO DUMPFILE '{}'",
            dump.display()
        ))
        .unwrap_err();
    assert!(e.to_string().contains("1172"), "{e}");
    assert!(!dump.exists());
    c.query_drop(format!(
        "SELECT v FROM ld.t WHERE id = 200 INTO DUMPFILE '{}'",
        dump.display()
    ))
    .unwrap();
    assert_eq!(std::fs::read(&dump).unwrap(), b"q\"u,o\tte\\");
}
