//! The configuration of a running server (issue #5 items 1 and 2): values from an option file
//! and the command line reach SHOW VARIABLES and the engine, the log says what was adjusted,
//! an unknown option stops startup with mysqld's message, and SET GLOBAL of a static variable
//! is error 1238 while a dynamic one changes at once.
//!
//! Run: `cargo test -p innoxide-server --test config_server`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mysql::prelude::Queryable;

/// A server started with `args` (after --defaults-file); the log lines up to "ready".
struct Started {
    child: Child,
    port: u16,
    log: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn start(cnf: &str, args: &[&str]) -> Started {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cnf_path = dir.path().join("my.cnf");
    let data = dir.path().join("data");
    let cnf = cnf
        .replace("$DATA", data.to_str().unwrap())
        .replace("$PORT", &port.to_string());
    std::fs::write(&cnf_path, cnf).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .arg(format!("--defaults-file={}", cnf_path.display()))
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    let mut log = Vec::new();
    loop {
        let l = lines
            .next()
            .unwrap_or_else(|| panic!("server exited: {log:#?}"))
            .unwrap();
        let ready = l.contains("ready for connections");
        log.push(l);
        if ready {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    Started {
        child,
        port,
        log,
        _dir: dir,
    }
}

fn connect(s: &Started) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some("root"))
        .tcp_connect_timeout(Some(Duration::from_secs(10)));
    mysql::Conn::new(opts).unwrap()
}

fn var(c: &mut mysql::Conn, name: &str) -> String {
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
        .unwrap();
    row.unwrap_or_else(|| panic!("no variable {name}")).1
}

const CNF: &str = "\
# an option file as a DBA writes one
[client]
port = 1

[mysqld]
datadir = $DATA
port = $PORT
socket =
innodb-buffer-pool-size = 24M     # with a suffix
innodb_log_file_size = 4M
innodb_io_capacity = 1234
innodb_io_capacity_max = 5000
innodb_flush_log_at_trx_commit = 2
innodb_lock_wait_timeout = 7
max_connections = 77
wait_timeout = 100
long_query_time = 2.5
transaction-isolation = READ-COMMITTED
innodb_old_blocks_pct = 200
loose-innodb_no_such_knob = 1
innodb_doublewrite = OFF

[server]
sql_mode = \"STRICT_ALL_TABLES\"
";

#[test]
fn option_file_values_are_in_force_and_static_ones_refuse_set() {
    let s = start(CNF, &["--wait-timeout=200"]);
    let joined = s.log.join("\n");
    assert!(
        joined.contains("unknown variable 'loose-innodb_no_such_knob=1'"),
        "{joined}"
    );
    assert!(
        joined.contains("option 'innodb_old_blocks_pct': unsigned value 200 adjusted to 95"),
        "{joined}"
    );
    let mut c = connect(&s);
    for (name, want) in [
        ("innodb_buffer_pool_size", "25165824"),
        ("innodb_io_capacity", "1234"),
        ("innodb_io_capacity_max", "5000"),
        ("innodb_flush_log_at_trx_commit", "2"),
        ("innodb_lock_wait_timeout", "7"),
        ("innodb_old_blocks_pct", "95"),
        ("innodb_doublewrite", "OFF"),
        ("max_connections", "77"),
        // The command line overrides the file.
        ("wait_timeout", "200"),
        ("long_query_time", "2.500000"),
        ("transaction_isolation", "READ-COMMITTED"),
        ("sql_mode", "STRICT_ALL_TABLES"),
    ] {
        assert_eq!(var(&mut c, name), want, "{name}");
    }
    // Sessions start from the globals the options set.
    let (iso, lwt): (String, u64) = c
        .query_first("SELECT @@transaction_isolation, @@innodb_lock_wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!((iso.as_str(), lwt), ("READ-COMMITTED", 7));
    // Static variables: error 1238.
    for stmt in [
        "SET GLOBAL innodb_page_size = 4096",
        "SET GLOBAL innodb_buffer_pool_chunk_size = 33554432",
        "SET GLOBAL innodb_log_file_size = 8388608",
        "SET GLOBAL table_open_cache_instances = 4",
    ] {
        match c.query_drop(stmt) {
            Err(mysql::Error::MySqlError(e)) => {
                assert_eq!(e.code, 1238, "{stmt}: {e:?}");
                assert!(e.message.ends_with("is a read only variable"), "{e:?}");
            }
            other => panic!("{stmt}: {other:?}"),
        }
    }
    // Dynamic ones change at once, and SHOW VARIABLES reports what is in force.
    c.query_drop("SET GLOBAL innodb_io_capacity = 700").unwrap();
    assert_eq!(var(&mut c, "innodb_io_capacity"), "700");
    c.query_drop("SET GLOBAL max_connections = 90").unwrap();
    assert_eq!(var(&mut c, "max_connections"), "90");
}

#[test]
fn an_unknown_option_stops_startup_with_mysqlds_message() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("my.cnf");
    std::fs::write(
        &cnf,
        "[mysqld]\ninnodb_io_capacity = 300\ninnodb_bogus = 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .arg(format!("--defaults-file={}", cnf.display()))
        .arg(format!("--datadir={}", dir.path().join("data").display()))
        .args(["--port=0", "--socket="])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown variable 'innodb_bogus=1'"), "{err}");
    assert!(err.contains("Aborting"), "{err}");
    // Nothing was initialised.
    assert!(!dir.path().join("data").exists());
}
