//! Prometheus's mysqld_exporter (Debian's prometheus-mysqld-exporter) scrapes innoxide with
//! its default collectors (global status and variables, replica status, InnoDB compression
//! tables, query response time) and reports mysql_up 1, the mysql_global_status_* and
//! mysql_global_variables_* series, and no scrape error.
//!
//! A missing exporter fails the test under CI (.ci/run installs it) and skips it otherwise.

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{connect, start};
use mysql::prelude::Queryable;

const EXPORTER: &str = "prometheus-mysqld-exporter";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// GET /metrics over plain HTTP/1.0; None while the exporter is not listening yet.
fn scrape(port: u16) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.contains("200 OK").then_some(body)
}

/// The value of an unlabelled series.
fn value(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn mysqld_exporter_scrapes_without_errors() {
    let installed = Command::new(EXPORTER)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var_os("CI").is_none(),
            "{EXPORTER} is missing; .ci/run must apt-get install it"
        );
        eprintln!("NOTICE: skipping: {EXPORTER} is not installed");
        return;
    }
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE USER exporter@localhost IDENTIFIED BY 'scrape-pw'")
        .unwrap();
    c.query_drop("GRANT ALL ON *.* TO exporter@localhost")
        .unwrap();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO d.t VALUES (1), (2), (3)")
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("exporter.cnf");
    std::fs::write(
        &cnf,
        format!(
            "[client]\nuser=exporter\npassword=scrape-pw\nhost=127.0.0.1\nport={}\n",
            s.port
        ),
    )
    .unwrap();
    let http = free_port();
    let _exporter = Child(
        Command::new(EXPORTER)
            .arg(format!("--config.my-cnf={}", cnf.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{http}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the exporter starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let metrics = loop {
        if let Some(m) = scrape(http) {
            break m;
        }
        assert!(Instant::now() < deadline, "the exporter never answered");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(value(&metrics, "mysql_up"), Some(1.0), "{metrics}");
    assert_eq!(
        value(&metrics, "mysql_exporter_last_scrape_error"),
        Some(0.0),
        "{metrics}"
    );
    let errors: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("mysql_exporter_scrape_errors_total{") && !l.ends_with(" 0"))
        .collect();
    assert!(errors.is_empty(), "scrape errors: {errors:?}");
    let status = metrics
        .lines()
        .filter(|l| l.starts_with("mysql_global_status_"))
        .count();
    let variables = metrics
        .lines()
        .filter(|l| l.starts_with("mysql_global_variables_"))
        .count();
    assert!(status >= 100, "{status} mysql_global_status_ series");
    assert!(
        variables >= 50,
        "{variables} mysql_global_variables_ series"
    );
    // A counter the workload moved, under the exporter's own name for it.
    assert!(
        metrics.lines().any(|l| l
            .starts_with("mysql_global_status_innodb_row_ops_total{operation=\"inserted\"} ")
            && !l.ends_with(" 0")),
        "no inserted rows in\n{metrics}"
    );
    assert_eq!(s.panics(), Vec::<String>::new());
}
