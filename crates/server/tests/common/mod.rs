//! What the server tests share: start the `innoxide` binary on a free port with a temporary
//! data directory, and connect to it as root with the `mysql` crate.

// Each test crate uses a different part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running server; killed (and its data directory removed) when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    /// The Unix socket, when started with `socket: true`.
    pub socket: Option<PathBuf>,
    /// What the server wrote to stderr after "ready for connections" (at most 10,000 lines).
    log: Arc<Mutex<Vec<String>>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The lines of the server's stderr that contain "panicked" (a thread panicked).
    pub fn panics(&self) -> Vec<String> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter()
            .filter(|l| l.contains("panicked"))
            .cloned()
            .collect()
    }

    /// The lines the server wrote to stderr after "ready for connections" so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The data directory.
    pub fn datadir(&self) -> &std::path::Path {
        self._dir.path()
    }

    /// Stops the server (SIGKILL, or SIGTERM and a clean shutdown) and hands its data
    /// directory back for `start_in` (a restart).
    pub fn stop_keep_dir(mut self, sigkill: bool) -> tempfile::TempDir {
        let sig = if sigkill { "-KILL" } else { "-TERM" };
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        assert!(sigkill || status.success(), "shutdown failed: {status}");
        std::mem::replace(&mut self._dir, tempfile::tempdir().unwrap())
    }

    /// True while the server process runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to `limit` for the process to exit on its own; its status, or None.
    #[allow(dead_code)]
    pub fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server and returns once it logs "ready for connections".
pub fn start() -> Server {
    start_with(false, &[])
}

/// Starts the server with a Unix socket in its temporary directory (`socket`) and `extra`
/// options.
pub fn start_with(socket: bool, extra: &[&str]) -> Server {
    start_in(tempfile::tempdir().unwrap(), socket, extra)
}

/// Starts the server on an existing data directory (see `Server::kill_keep_dir`).
pub fn start_in(dir: tempfile::TempDir, socket: bool, extra: &[&str]) -> Server {
    // A free port is found by binding port 0 and letting it go: another test's server may
    // take it first, so a start that fails to bind it tries again with another.
    let mut attempts = 0;
    let (child, port, sock, lines) = loop {
        attempts += 1;
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let sock = socket.then(|| dir.path().join("innoxide.sock"));
        let sock_arg = format!(
            "--socket={}",
            sock.as_deref()
                .map_or(String::new(), |p| p.display().to_string())
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_innoxide"))
            .args([
                // Hermetic: no /etc/my.cnf or ~/.my.cnf (this must be the first option).
                "--no-defaults",
                "--datadir",
                dir.path().to_str().unwrap(),
                "--innodb-buffer-pool-size=16M",
                "--innodb-log-file-size=4M",
                &format!("--port={port}"),
                &sock_arg,
            ])
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let mut lines = BufReader::new(err).lines();
        let mut seen = Vec::new();
        let ready = loop {
            match lines.next() {
                Some(Ok(l)) if l.contains("ready for connections") => break true,
                Some(Ok(l)) => seen.push(l),
                _ => break false,
            }
        };
        if ready {
            break (child, port, sock, lines);
        }
        let _ = child.wait();
        let taken = seen.iter().any(|l| l.contains("Address already in use"));
        assert!(taken && attempts < 5, "server exited:\n{}", seen.join("\n"));
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let keep = log.clone();
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            let mut log = keep.lock().unwrap_or_else(|e| e.into_inner());
            if log.len() < 10_000 || l.contains("panicked") {
                log.push(l);
            }
        }
    });
    Server {
        child,
        port,
        socket: sock,
        log,
        _dir: dir,
    }
}

/// A new connection as root (no password) over TCP.
pub fn connect(s: &Server) -> mysql::Conn {
    connect_port(s.port)
}

/// A new connection as root to the server on `port` (for threads that do not hold `Server`).
pub fn connect_port(port: u16) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .tcp_connect_timeout(Some(Duration::from_secs(10)));
    mysql::Conn::new(opts).unwrap()
}

/// The rows of `q` as text, one string per row with its values joined by commas (NULL as
/// `NULL`).
pub fn text_rows(c: &mut mysql::Conn, q: &str) -> Vec<String> {
    use mysql::prelude::Queryable;
    c.query_map(q, |r: mysql::Row| {
        (0..r.len())
            .map(|i| match r.as_ref(i) {
                Some(mysql::Value::NULL) | None => "NULL".to_string(),
                Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                Some(v) => v.as_sql(true),
            })
            .collect::<Vec<_>>()
            .join(",")
    })
    .unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// A global status counter (SHOW GLOBAL STATUS).
pub fn global_status(c: &mut mysql::Conn, name: &str) -> u64 {
    use mysql::prelude::Queryable;
    let v: (String, u64) = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap()
        .unwrap();
    v.1
}

/// Creates `table` (id INT PRIMARY KEY, n INT, v VARCHAR(300)) with ids 1 to `rows` in key
/// order, rows of about 260 bytes (n = id % 7): consecutive leaf pages.
pub fn fill(c: &mut mysql::Conn, table: &str, rows: u64) {
    use mysql::prelude::Queryable;
    c.query_drop(format!(
        "CREATE TABLE {table} (id INT PRIMARY KEY, n INT, v VARCHAR(300))"
    ))
    .unwrap();
    c.query_drop("SET SESSION cte_max_recursion_depth = 10000000")
        .unwrap();
    c.query_drop(format!(
        "INSERT INTO {table} WITH RECURSIVE seq (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM \
         seq WHERE k < {rows}) SELECT k, k % 7, REPEAT('x', 250) FROM seq"
    ))
    .unwrap();
}

/// Pages written back over `secs` seconds (Innodb_buffer_pool_pages_flushed), and the dirty
/// pages left.
pub fn flushed_over(c: &mut mysql::Conn, secs: u64) -> (u64, u64) {
    let before = global_status(c, "Innodb_buffer_pool_pages_flushed");
    std::thread::sleep(Duration::from_secs(secs));
    (
        global_status(c, "Innodb_buffer_pool_pages_flushed") - before,
        global_status(c, "Innodb_buffer_pool_pages_dirty"),
    )
}

/// Options under which only the idle rate makes the page cleaners flush: a 128M pool,
/// innodb_io_capacity 100, a 90% dirty-page limit, no dirty-page low-water mark, and a redo
/// log a load of some 40 MB does not bring near its checkpoint margins.
pub const IDLE_FLUSHING: &[&str] = &[
    "--innodb-buffer-pool-size=128M",
    "--innodb-io-capacity=100",
    "--innodb-max-dirty-pages-pct=90",
    "--innodb-max-dirty-pages-pct-lwm=0",
    "--innodb-log-file-size=64M",
    "--innodb-adaptive-flushing-lwm=70",
];
