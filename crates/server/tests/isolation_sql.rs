//! Isolation over SQL (issue #3): the isolation cases of
//! `crates/engine/tests/isolation/cases.txt` (Hermitage's anomalies G0 ... G2 and our locking
//! cases) run as SQL over the MySQL protocol against the `innoxide` binary, at every isolation
//! level, with innodb_snapshot_isolation OFF and ON, and every step's outcome (rows, rows
//! affected, error number, whether it blocked and which step released it) must be what
//! MariaDB 10.11 did (`expected-mariadb-10.11.txt`, recorded by
//! `tools/hermitage/run_mariadb.py`). The engine's own replay is
//! `crates/engine/tests/isolation.rs`; both read the files with `innoxide_testkit::hermitage`.
//!
//! The runner is the script's: before each case the table is dropped and created again; each
//! transaction `T<n>` has its own connection (autocommit on, CLIENT_FOUND_ROWS off) and thread;
//! the session's isolation level is set with SET SESSION TRANSACTION ISOLATION LEVEL. A step
//! that has not answered within the block time is recorded as `blocks`; after each step,
//! while statements are pending, the runner waits up to the settle time for them and records
//! those that answer as released by that step. One guard against a slow machine: a statement
//! counts as blocked (or still blocked at the end of a settle) only when the server reports as
//! many lock waits (Innodb_row_lock_current_waits) as statements are pending; otherwise the
//! runner keeps waiting, up to 10 s.
//!
//! innodb_snapshot_isolation is a global variable here (MariaDB also has it per session), so
//! the runner sets it with SET GLOBAL between the two passes.
//!
//! Run: `cargo test -p innoxide-server --test isolation_sql -- --nocapture`. Environment:
//! `ISOLATION_CASE=<name>[,<name>]` runs some cases only; `ISOLATION_BLOCK_MS` (250) and
//! `ISOLATION_SETTLE_MS` (100) set the two waits.

mod common;

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{connect, start, Server};
use innoxide_testkit::hermitage::{self, Case};
use mysql::prelude::*;
use mysql::Conn;

const SETUP: [&str; 3] = [
    "DROP TABLE IF EXISTS test",
    "CREATE TABLE test (id INT PRIMARY KEY, value INT) ENGINE=InnoDB",
    "INSERT INTO test (id, value) VALUES (1, 10), (2, 20)",
];

/// The longest the guard extends a wait.
const GUARD: Duration = Duration::from_secs(10);

fn env_ms(name: &str, default: u64) -> Duration {
    Duration::from_millis(
        std::env::var(name)
            .ok()
            .map_or(default, |v| v.parse().expect(name)),
    )
}

fn level_sql(level: &str) -> &'static str {
    match level {
        "READ-UNCOMMITTED" => "READ UNCOMMITTED",
        "READ-COMMITTED" => "READ COMMITTED",
        "REPEATABLE-READ" => "REPEATABLE READ",
        "SERIALIZABLE" => "SERIALIZABLE",
        other => panic!("level {other}"),
    }
}

fn value_text(v: &mysql::Value) -> String {
    match v {
        mysql::Value::NULL => "null".into(),
        mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        mysql::Value::Int(i) => i.to_string(),
        mysql::Value::UInt(i) => i.to_string(),
        other => panic!("unexpected value {other:?}"),
    }
}

fn run_statement(c: &mut Conn, sql: &str) -> mysql::Result<String> {
    let mut r = c.query_iter(sql)?;
    if r.columns().as_ref().is_empty() {
        let n = r.affected_rows();
        drop(r);
        return Ok(if matches!(sql, "begin" | "commit" | "rollback") {
            "ok".into()
        } else {
            format!("ok affected={n}")
        });
    }
    let mut s = String::from("rows");
    for row in r.by_ref() {
        let row = row?.unwrap();
        let vals: Vec<String> = row.iter().map(value_text).collect();
        s.push_str(&format!(" ({})", vals.join(",")));
    }
    Ok(s)
}

/// One statement's outcome in the expected file's words.
fn execute(c: &mut Conn, sql: &str) -> String {
    match run_statement(c, sql) {
        Ok(s) => s,
        Err(mysql::Error::MySqlError(e)) => format!("error {}", e.code),
        Err(e) => format!("fatal {e}"),
    }
}

/// One transaction: a connection and its thread.
struct Worker {
    to: Option<Sender<(usize, String)>>,
    from: Receiver<(usize, String)>,
    /// The step in flight.
    pending: Option<usize>,
    /// Its answer, if it came while the runner was looking at the lock waits.
    ready: Option<(usize, String)>,
    conn_id: u32,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    fn new(s: &Server, level: &str) -> Worker {
        let mut c = connect(s);
        c.query_drop("USE hermitage").unwrap();
        c.query_drop(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            level_sql(level)
        ))
        .unwrap();
        let conn_id = c.connection_id();
        let (to, rx) = channel::<(usize, String)>();
        let (tx, from) = channel();
        let thread = std::thread::spawn(move || {
            for (step, sql) in rx {
                let out = execute(&mut c, &sql);
                if tx.send((step, out)).is_err() {
                    return;
                }
            }
        });
        Worker {
            to: Some(to),
            from,
            pending: None,
            ready: None,
            conn_id,
            thread: Some(thread),
        }
    }

    fn submit(&mut self, step: usize, sql: &str) {
        assert!(self.pending.is_none());
        self.pending = Some(step);
        self.to
            .as_ref()
            .expect("open")
            .send((step, sql.to_string()))
            .unwrap();
    }

    /// True if the statement in flight has not answered yet (keeping an answer that came).
    fn running(&mut self) -> bool {
        if self.pending.is_some() && self.ready.is_none() {
            self.ready = self.from.try_recv().ok();
        }
        self.pending.is_some() && self.ready.is_none()
    }

    /// The outcome of the statement in flight if it answers within `wait`.
    fn poll(&mut self, wait: Duration) -> Option<String> {
        let r = if let Some(r) = self.ready.take() {
            Some(r)
        } else if wait.is_zero() {
            self.from.try_recv().ok()
        } else {
            match self.from.recv_timeout(wait) {
                Ok(x) => Some(x),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => panic!("worker thread died"),
            }
        };
        r.map(|(step, out)| {
            assert_eq!(Some(step), self.pending);
            self.pending = None;
            out
        })
    }
}

struct Runner {
    server: Server,
    admin: Conn,
    block: Duration,
    settle: Duration,
}

impl Runner {
    fn lock_waits(&mut self) -> usize {
        let r: Option<(String, String)> = self
            .admin
            .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'")
            .unwrap();
        r.expect("Innodb_row_lock_current_waits").1.parse().unwrap()
    }

    /// True once every statement still running is waiting for a lock (or the guard ran out).
    fn all_waiting(&mut self, workers: &mut BTreeMap<usize, Worker>, since: Instant) -> bool {
        let pending = workers
            .values_mut()
            .map(|w| usize::from(w.running()))
            .sum::<usize>();
        since.elapsed() >= GUARD || self.lock_waits() >= pending
    }

    /// Waits up to the settle time (longer while the guard says a pending statement is not
    /// waiting for a lock) for pending statements; returns those that answered.
    fn collect(&mut self, workers: &mut BTreeMap<usize, Worker>) -> Vec<(usize, usize, String)> {
        let start = Instant::now();
        let mut done = Vec::new();
        loop {
            for (&t, w) in workers.iter_mut() {
                if let Some(step) = w.pending {
                    if let Some(out) = w.poll(Duration::ZERO) {
                        done.push((step, t, out));
                    }
                }
            }
            if workers.values().all(|w| w.pending.is_none()) {
                break;
            }
            if start.elapsed() >= self.settle && self.all_waiting(workers, start) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        done.sort();
        done
    }

    fn run_case(&mut self, case: &Case, level: &str) -> Vec<String> {
        for sql in SETUP {
            self.admin.query_drop(sql).unwrap();
        }
        let mut workers: BTreeMap<usize, Worker> = BTreeMap::new();
        for &(t, _) in &case.steps {
            workers
                .entry(t)
                .or_insert_with(|| Worker::new(&self.server, level));
        }
        let mut lines = Vec::new();
        for (i, (t, sql)) in case.steps.iter().enumerate() {
            let step = i + 1;
            let w = workers.get_mut(t).expect("worker");
            assert!(
                w.pending.is_none(),
                "case bug: {} step {step} gives T{t} a statement while one is blocked",
                case.name
            );
            w.submit(step, sql);
            let start = Instant::now();
            let mut out = w.poll(self.block);
            while out.is_none() && !self.all_waiting(&mut workers, start) {
                out = workers.get_mut(t).expect("worker").poll(self.settle);
            }
            match out {
                Some(o) => lines.push(format!("{step} T{t} {o}")),
                None => lines.push(format!("{step} T{t} blocks")),
            }
            if workers.values().any(|w| w.pending.is_some()) {
                for (s, tr, o) in self.collect(&mut workers) {
                    lines.push(format!("{s} T{tr} after {step} {o}"));
                }
            }
        }
        let stuck: Vec<String> = workers
            .iter()
            .filter_map(|(t, w)| w.pending.map(|s| format!("step {s} T{t}")))
            .collect();
        for w in workers.values_mut() {
            if w.pending.is_some() {
                let _ = self.admin.query_drop(format!("KILL {}", w.conn_id));
            }
            w.to = None;
        }
        for w in workers.values_mut() {
            if let Some(h) = w.thread.take() {
                h.join().unwrap();
            }
        }
        if !stuck.is_empty() {
            lines.push(format!("never returned: {}", stuck.join(", ")));
        }
        lines
    }
}

#[test]
fn hermitage_cases_over_sql_match_mariadb() {
    let server = start();
    let mut admin = connect(&server);
    admin.query_drop("CREATE DATABASE hermitage").unwrap();
    admin.query_drop("USE hermitage").unwrap();
    admin
        .query_drop("SET GLOBAL innodb_lock_wait_timeout = 5")
        .unwrap();
    let mut r = Runner {
        server,
        admin,
        block: env_ms("ISOLATION_BLOCK_MS", 250),
        settle: env_ms("ISOLATION_SETTLE_MS", 100),
    };
    let (cases, expected) = hermitage::load();
    let started = Instant::now();
    let mut runs = 0;
    let mut failures = Vec::new();
    for si in [false, true] {
        r.admin
            .query_drop(format!(
                "SET GLOBAL innodb_snapshot_isolation = {}",
                if si { "ON" } else { "OFF" }
            ))
            .unwrap();
        for case in cases.iter().filter(|c| hermitage::selected(c)) {
            for level in &case.levels {
                runs += 1;
                let got = r.run_case(case, level);
                failures.extend(hermitage::compare(&expected, &case.name, level, si, &got));
            }
        }
    }
    eprintln!(
        "isolation over SQL: {runs} runs compared with MariaDB in {:.0} s, {} differ",
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(runs > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
