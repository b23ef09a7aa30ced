//! One dbSTRESS session: a connection with its five prepared statements, and the loop that
//! runs READ and WRITE transactions on random objects until the step stops.
//!
//! A session hands what it measured to the step's reporter through its `Sink` (a mutex the
//! reporter takes once a second, so the session's own lock is uncontended). Row accounting
//! (`inserted`, `deleted`) counts only transactions whose COMMIT returned OK: that is what
//! `verify` compares with HISTORY's row count (invariant V2 of `dbstress`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::step::{Plan, Shared};
use super::{ConnArgs, HISTORY_PER_OBJECT, STATS};

/// Transaction and statement types, the index of their figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sel1 = 0,
    Sel2 = 1,
    Del = 2,
    Ins = 3,
    Upd = 4,
    /// A READ transaction (SEL1 + SEL2).
    Read = 5,
    /// A WRITE transaction (BEGIN, DEL, INS, UPD, COMMIT).
    Write = 6,
}

/// Number of `Kind`s; the step adds an eighth figure, ALL (READ and WRITE together).
pub const KINDS: usize = 7;
pub const KIND_NAMES: [&str; KINDS + 1] =
    ["SEL1", "SEL2", "DEL", "INS", "UPD", "READ", "WRITE", "ALL"];
/// Index of the ALL figure.
pub const ALL: usize = KINDS;

const SEL1: &str = "SELECT O.REF_OBJECT, O.NAME, O.NOTE, S.NAME, Z.NAME FROM OBJECT O \
                    JOIN SECTION S ON S.REF_SECTION = O.REF_SECTION \
                    JOIN ZONE Z ON Z.REF_ZONE = S.REF_ZONE WHERE O.REF_OBJECT = ?";
const SEL2: &str = "SELECT H.HORDER, H.VALUE, H.NOTE, S.NAME, S.UNIT FROM HISTORY H \
                    JOIN STAT S ON S.REF_STAT = H.REF_STAT WHERE H.REF_OBJECT = ?";
const DEL: &str = "DELETE FROM HISTORY WHERE REF_OBJECT = ? ORDER BY HORDER LIMIT 1";
const INS: &str = "INSERT INTO HISTORY (REF_OBJECT, HORDER, REF_STAT, VALUE, NOTE, CREATED) \
                   VALUES (?, ?, ?, ?, ?, NOW())";
const UPD: &str = "UPDATE HISTORY SET VALUE = ?, NOTE = ? WHERE REF_OBJECT = ? \
                   ORDER BY HORDER DESC LIMIT 1";

/// MySQL's lock wait timeout and deadlock errors: expected under contention, counted but not
/// a failure of the run.
pub const RETRYABLE: [u16; 2] = [1205, 1213];

/// A connection and its prepared statements.
pub struct Session {
    conn: mysql::Conn,
    sel1: mysql::Statement,
    sel2: mysql::Statement,
    del: mysql::Statement,
    ins: mysql::Statement,
    upd: mysql::Statement,
}

impl Session {
    pub fn open(args: &ConnArgs) -> Result<Session> {
        let mut conn = args.connect()?;
        let mut prep = |sql: &str| conn.prep(sql).with_context(|| format!("prepare {sql}"));
        let (sel1, sel2, del, ins, upd) =
            (prep(SEL1)?, prep(SEL2)?, prep(DEL)?, prep(INS)?, prep(UPD)?);
        Ok(Session {
            conn,
            sel1,
            sel2,
            del,
            ins,
            upd,
        })
    }
}

/// What a session reports to the step's reporter.
#[derive(Default)]
pub struct Sink {
    /// (kind, microseconds) of each statement and transaction finished while measuring;
    /// drained each second.
    pub samples: Vec<(u8, u32)>,
    /// Errors per kind while measuring; drained each second.
    pub errors: [u64; KINDS],
    /// Errors other than lock wait timeouts and deadlocks, while measuring; drained.
    pub hard_errors: u64,
    /// Transactions finished while measuring; drained each second.
    pub txns: u64,
    /// Transactions finished while measuring in this step (the per-session rate).
    pub step_txns: u64,
    /// The latest error message.
    pub last_error: Option<String>,
    /// Reads that returned the wrong number of rows, and the latest such message (any time).
    pub wrong: u64,
    pub last_wrong: Option<String>,
    /// HISTORY rows inserted and deleted by committed transactions (any time).
    pub inserted: u64,
    pub deleted: u64,
    /// Write transactions whose connection broke before COMMIT answered.
    pub unknown: u64,
    /// Reconnections after a broken connection.
    pub reconnects: u64,
}

/// A session's state that lasts across steps.
pub struct Worker {
    pub session: Option<Session>,
    pub sink: Arc<Mutex<Sink>>,
    rng: SmallRng,
    /// Transactions started: position in the cycle of `rw` reads and one write.
    started: u64,
}

/// How one statement failed.
enum Fail {
    /// The server answered with an error (the connection is fine).
    Server(u16, String),
    /// The connection broke.
    Broken(String),
}

fn classify(e: mysql::Error) -> Fail {
    match e {
        mysql::Error::MySqlError(m) => Fail::Server(m.code, format!("{} ({})", m.message, m.code)),
        other => Fail::Broken(other.to_string()),
    }
}

/// The samples, errors and row changes of one transaction, handed to the sink at once.
#[derive(Default)]
struct TxnLog {
    samples: Vec<(Kind, Duration)>,
    error: Option<(Kind, Fail)>,
    wrong: Option<String>,
    inserted: u64,
    deleted: u64,
    unknown: bool,
}

impl TxnLog {
    fn timed<T>(
        &mut self,
        kind: Kind,
        f: impl FnOnce() -> std::result::Result<T, mysql::Error>,
    ) -> Option<T> {
        let t = Instant::now();
        match f() {
            Ok(v) => {
                self.samples.push((kind, t.elapsed()));
                Some(v)
            }
            Err(e) => {
                self.error = Some((kind, classify(e)));
                None
            }
        }
    }
}

impl Worker {
    pub fn new(seed: u64) -> Worker {
        let mut rng = SmallRng::seed_from_u64(seed);
        let started = rng.random_range(0..1000);
        Worker {
            session: None,
            sink: Arc::new(Mutex::new(Sink::default())),
            rng,
            started,
        }
    }

    /// Runs transactions until `shared.stop`; reconnects when the connection breaks.
    pub fn run(&mut self, plan: &Plan, shared: &Shared, conn: &ConnArgs) {
        // Sessions of a thinking scenario start spread over one think time, not all at once.
        if !plan.think.is_zero() {
            let d = plan.think.mul_f64(self.rng.random::<f64>());
            sleep_unless_stopped(d, shared);
        }
        while !shared.stop.load(Ordering::Relaxed) {
            let Some(session) = self.session.as_mut() else {
                self.reconnect(shared, conn);
                continue;
            };
            let object = self.rng.random_range(1..=plan.objects);
            self.started += 1;
            let write = plan.rw > 0 && self.started.is_multiple_of(u64::from(plan.rw) + 1);
            let t0 = Instant::now();
            let mut log = TxnLog::default();
            let kind = if write {
                let horder = plan.horder_base + shared.horder.fetch_add(1, Ordering::Relaxed);
                write_txn(session, &mut log, object, horder, plan, &mut self.rng);
                Kind::Write
            } else {
                read_txn(session, &mut log, object);
                Kind::Read
            };
            if log.error.is_none() {
                log.samples.push((kind, t0.elapsed()));
            }
            let broken = matches!(log.error, Some((_, Fail::Broken(_))));
            self.record(log, kind, shared);
            if broken {
                self.session = None;
                continue;
            }
            if !plan.think.is_zero() {
                sleep_unless_stopped(plan.think, shared);
            }
        }
    }

    fn record(&mut self, log: TxnLog, kind: Kind, shared: &Shared) {
        let measuring = shared.measuring.load(Ordering::Relaxed);
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        s.inserted += log.inserted;
        s.deleted += log.deleted;
        s.unknown += u64::from(log.unknown);
        if let Some(w) = log.wrong {
            s.wrong += 1;
            s.last_wrong = Some(w);
        }
        if let Some((k, fail)) = log.error {
            let (hard, msg) = match fail {
                Fail::Server(code, m) => (!RETRYABLE.contains(&code), m),
                Fail::Broken(m) => (true, format!("connection lost: {m}")),
            };
            if measuring {
                s.errors[k as usize] += 1;
                if k != kind {
                    s.errors[kind as usize] += 1;
                }
                s.hard_errors += u64::from(hard);
            }
            s.last_error = Some(format!("{}: {msg}", KIND_NAMES[k as usize]));
        } else if measuring {
            s.txns += 1;
            s.step_txns += 1;
        }
        if measuring {
            for (k, d) in log.samples {
                let us = u32::try_from(d.as_micros()).unwrap_or(u32::MAX).max(1);
                s.samples.push((k as u8, us));
            }
        }
    }

    fn reconnect(&mut self, shared: &Shared, conn: &ConnArgs) {
        match Session::open(conn) {
            Ok(s) => {
                self.session = Some(s);
                let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
                sink.reconnects += 1;
            }
            Err(e) => {
                let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
                sink.last_error = Some(format!("reconnect: {e:#}"));
                drop(sink);
                sleep_unless_stopped(Duration::from_secs(1), shared);
            }
        }
    }
}

fn sleep_unless_stopped(d: Duration, shared: &Shared) {
    let end = Instant::now() + d;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
}

/// READ: SEL1 (one row) then SEL2 (the object's 20 HISTORY rows, V1).
fn read_txn(s: &mut Session, log: &mut TxnLog, object: u64) {
    let conn = &mut s.conn;
    let Some(rows) = log.timed(Kind::Sel1, || {
        conn.exec::<mysql::Row, _, _>(&s.sel1, (object,))
    }) else {
        return;
    };
    if rows.len() != 1 {
        log.wrong = Some(format!(
            "SEL1 of object {object} returned {} rows, not 1",
            rows.len()
        ));
    }
    let Some(rows) = log.timed(Kind::Sel2, || {
        conn.exec::<mysql::Row, _, _>(&s.sel2, (object,))
    }) else {
        return;
    };
    if rows.len() as u64 != HISTORY_PER_OBJECT {
        log.wrong = Some(format!(
            "SEL2 of object {object} returned {} rows, not {HISTORY_PER_OBJECT}",
            rows.len()
        ));
    }
}

/// WRITE: BEGIN; DEL the oldest row; INS a row; UPD the newest row; COMMIT. On a server
/// error the transaction is rolled back; on a broken connection after COMMIT was sent its
/// outcome is unknown.
fn write_txn(
    s: &mut Session,
    log: &mut TxnLog,
    object: u64,
    horder: i64,
    plan: &Plan,
    rng: &mut SmallRng,
) {
    let conn = &mut s.conn;
    if let Err(e) = conn.query_drop("BEGIN") {
        log.error = Some((Kind::Write, classify(e)));
        return;
    }
    let mut deleted = 0;
    let body_ok = (plan.update_only || {
        let del = log.timed(Kind::Del, || {
            conn.exec_drop(&s.del, (object,))
                .map(|()| conn.affected_rows())
        });
        if let Some(d) = del {
            deleted = d;
            if d != 1 {
                log.wrong = Some(format!("DEL of object {object} deleted {d} rows, not 1"));
            }
        }
        del.is_some()
            && log
                .timed(Kind::Ins, || {
                    let stat = rng.random_range(1..=STATS);
                    let value = format!("{}.{:02}", rng.random_range(0..100_000), horder % 100);
                    conn.exec_drop(&s.ins, (object, horder, stat, value, "inserted"))
                })
                .is_some()
    }) && log
        .timed(Kind::Upd, || {
            let value = format!("{}.50", rng.random_range(0..100_000));
            conn.exec_drop(&s.upd, (value, "updated", object))
        })
        .is_some();
    if !body_ok {
        if matches!(log.error, Some((_, Fail::Server(..)))) {
            if let Err(e) = conn.query_drop("ROLLBACK") {
                log.error = Some((Kind::Write, classify(e)));
            }
        }
        return;
    }
    match conn.query_drop("COMMIT") {
        Ok(()) => {
            if !plan.update_only {
                log.inserted = 1;
                log.deleted = deleted;
            }
        }
        Err(e) => {
            let f = classify(e);
            log.unknown = matches!(f, Fail::Broken(_)) && !plan.update_only;
            log.error = Some((Kind::Write, f));
        }
    }
}
