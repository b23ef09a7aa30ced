//! The server through the MySQL protocol with a real client (the `mysql` crate): connect as
//! root without a password, DDL, DML in text and prepared form, transactions, result values.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mysql::prelude::*;

struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args([
            "--datadir",
            dir.path().to_str().unwrap(),
            "--innodb-buffer-pool-size=16M",
            "--innodb-log-file-size=4M",
            &format!("--port={port}"),
            "--socket=",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    loop {
        let l = lines.next().expect("server exited").unwrap();
        if l.contains("ready for connections") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        port,
        _dir: dir,
    }
}

fn connect(s: &Server) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some("root"))
        .tcp_connect_timeout(Some(Duration::from_secs(10)));
    mysql::Conn::new(opts).unwrap()
}

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
