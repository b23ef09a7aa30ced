//! Row locks: deadlock detection, lock wait timeouts and gap locking, as InnoDB does them.
//!
//! - Deadlock cycles of 2 ... 8 transactions (each holds row i and asks for row i+1, the last
//!   asks for row 0): the cycle is found within 100 ms of the closing request, exactly one
//!   transaction is the victim and is rolled back whole, every other one finishes and commits.
//!   The victim follows InnoDB's rule (the requester, unless another member is lighter).
//! - innodb_lock_wait_timeout (session value and global value, 1 s and 2 s) ends a wait after
//!   100% to 110% of the timeout; with innodb_rollback_on_timeout OFF only the statement fails,
//!   with ON the whole transaction is rolled back. With innodb_deadlock_detect OFF a cycle ends
//!   by a lock wait timeout.
//! - Gap, next-key and insert-intention locks: which inserts a locking range scan, a locking
//!   read through a secondary index and a locking read of a missing key block at REPEATABLE
//!   READ and READ COMMITTED, the gap-lock deadlock of two inserters, and gap locks inherited
//!   when purge removes a locked delete-marked record.
//! - A transaction that waited for a shared table lock sees every change of the transaction
//!   whose commit let it in (a committing transaction leaves the active set before its locks
//!   go, as in InnoDB; ALTER TABLE's copy relies on it).
//! - SELECT ... FOR UPDATE returns the newest committed version under contention: 4 clients
//!   appending to 8 rows (read FOR UPDATE, then UPDATE) lose no append.
//!
//! Blocking is observed, not guessed from time: a request blocks when the lock system counts
//! one more current wait (Innodb_row_lock_current_waits). The timing tests run one at a time.
//!
//! Reproduce: `cargo test -p innoxide-engine --test locks -- --nocapture` (prints the deadlock
//! detection time per cycle length and the measured timeouts).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, Error, Isolation, KeyBound, LockRead, Table, TableDef, Trx,
    Value,
};

/// The tests run one at a time, so that the timed ones have the CPU to themselves.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn open(dir: &Path, background: bool) -> Arc<Engine> {
    let mut c = innoxide_testkit::small_config(dir, 4);
    c.background_threads = background;
    Arc::new(Engine::open(c).unwrap())
}

/// `name (id INT PRIMARY KEY, v VARCHAR(100))` with rows `ids`, v = "init".
fn plain_table(e: &Engine, name: &str, ids: impl IntoIterator<Item = i64>) -> Arc<Table> {
    let t = e
        .create_table(TableDef::new(
            name,
            vec![
                ColumnDef::new("id", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 100 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut w = e.begin();
    for id in ids {
        w.insert(&t, &[Value::Int(id), Value::from("init")])
            .unwrap();
    }
    w.commit().unwrap();
    t
}

/// `name (id INT PRIMARY KEY, k INT, v VARCHAR(100), KEY k (k))` with ids 10, 20, ..., 90 and
/// k = 2 * id.
fn indexed_table(e: &Engine, name: &str) -> Arc<Table> {
    let t = e
        .create_table(
            TableDef::new(
                name,
                vec![
                    ColumnDef::new("id", ColumnKind::INT),
                    ColumnDef::new("k", ColumnKind::INT),
                    ColumnDef::new("v", ColumnKind::Var { max_len: 100 }),
                ],
                Some(vec![0]),
            )
            .index("k", vec![1], false),
        )
        .unwrap();
    let mut w = e.begin();
    for id in (10..=90).step_by(10) {
        w.insert(
            &t,
            &[Value::Int(id), Value::Int(2 * id), Value::from("init")],
        )
        .unwrap();
    }
    w.commit().unwrap();
    t
}

fn current_waits(e: &Engine) -> u64 {
    e.inner()
        .trx
        .locks
        .stats
        .current_waits
        .load(Ordering::Acquire)
}

fn deadlocks(e: &Engine) -> u64 {
    e.inner().trx.locks.stats.deadlocks.load(Ordering::Acquire)
}

/// Polls `cond` every millisecond until it holds; panics after 10 s.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn text(v: &Value) -> String {
    String::from_utf8(v.as_bytes().expect("a string column").to_vec()).unwrap()
}

/// The committed value of column `col` of row `id` (None if absent).
fn value_of(e: &Engine, t: &Arc<Table>, id: i64, col: usize) -> Option<String> {
    let mut r = e.begin();
    let row = r.get(t, &[Value::Int(id)]).unwrap();
    r.commit().unwrap();
    row.map(|row| text(&row[col]))
}

// ------------------------------------------------------------------------------------------
// Deadlocks

#[derive(Debug)]
enum RingOutcome {
    Committed,
    Victim,
}

/// A ring of `n` transactions; returns the time from the closing request to the deadlock
/// error.
fn deadlock_ring(e: &Arc<Engine>, n: usize) -> Duration {
    let t = plain_table(e, &format!("test/ring{n}"), 0..n as i64);
    let deadlocks_before = deadlocks(e);
    let (ready_tx, ready_rx) = channel::<usize>();
    let (res_tx, res_rx) = channel::<(usize, Instant, Instant, RingOutcome)>();
    let mut go = Vec::new();
    let mut handles = Vec::new();
    for i in 0..n {
        let (gtx, grx) = channel::<()>();
        go.push(gtx);
        let (e, t, ready_tx, res_tx) = (e.clone(), t.clone(), ready_tx.clone(), res_tx.clone());
        handles.push(std::thread::spawn(move || {
            let mut trx = e.begin();
            trx.set_lock_wait_timeout(30);
            let mine = format!("t{i}");
            assert!(trx
                .update(
                    &t,
                    &[Value::Int(i as i64)],
                    &[(1, Value::from(mine.as_str()))]
                )
                .unwrap());
            ready_tx.send(i).unwrap();
            grx.recv().unwrap();
            let next = ((i + 1) % n) as i64;
            let before = Instant::now();
            let r = trx.update(&t, &[Value::Int(next)], &[(1, Value::from(mine.as_str()))]);
            let after = Instant::now();
            let outcome = match r {
                Ok(true) => {
                    trx.commit().unwrap();
                    RingOutcome::Committed
                }
                Err(Error::Deadlock) => {
                    // The transaction was rolled back; the Trx is a fresh one.
                    trx.rollback().unwrap();
                    RingOutcome::Victim
                }
                other => panic!("transaction {i} of {n}: unexpected {other:?}"),
            };
            res_tx.send((i, before, after, outcome)).unwrap();
        }));
    }
    for _ in 0..n {
        ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
    for g in go.iter().take(n - 1) {
        g.send(()).unwrap();
    }
    wait_until("the first n-1 transactions to wait", || {
        current_waits(e) == (n - 1) as u64 && e.inner().trx.locks.waits().len() == n - 1
    });
    go[n - 1].send(()).unwrap();
    let mut results = Vec::new();
    for _ in 0..n {
        results.push(res_rx.recv_timeout(Duration::from_secs(20)).unwrap());
    }
    for h in handles {
        h.join().unwrap();
    }
    let closing_start = results
        .iter()
        .find(|r| r.0 == n - 1)
        .map(|r| r.1)
        .expect("the closing transaction answered");
    let victims: Vec<_> = results
        .iter()
        .filter(|r| matches!(r.3, RingOutcome::Victim))
        .collect();
    assert_eq!(victims.len(), 1, "n={n}: exactly one victim: {results:?}");
    let (v, _, v_at, _) = *victims[0];
    let detection = v_at.duration_since(closing_start);
    // The transactions that are not the victim committed (checked above: Ok(true) then
    // commit). The victim's update of its own row was undone: row v holds the write of v-1,
    // row v+1 only its owner's write; every other row j holds the write of j-1.
    for j in 0..n {
        let prev = (j + n - 1) % n;
        let want = if prev == v {
            format!("t{j}")
        } else {
            format!("t{prev}")
        };
        assert_eq!(
            value_of(e, &t, j as i64, 1).as_deref(),
            Some(want.as_str()),
            "n={n}, victim {v}: row {j}"
        );
    }
    assert_eq!(deadlocks(e) - deadlocks_before, 1, "n={n}: one deadlock");
    assert_eq!(current_waits(e), 0);
    eprintln!(
        "deadlock ring n={n}: victim t{v} (closing transaction t{}), detected {:.3} ms after the \
         closing request",
        n - 1,
        detection.as_secs_f64() * 1e3
    );
    detection
}

#[test]
fn deadlock_cycles_of_2_to_8_are_detected_within_100ms() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let mut worst = Duration::ZERO;
    for n in 2..=8 {
        let d = deadlock_ring(&e, n);
        assert!(
            d < Duration::from_millis(100),
            "n={n}: deadlock detected after {d:?}"
        );
        worst = worst.max(d);
    }
    eprintln!(
        "deadlock rings: worst detection {:.3} ms",
        worst.as_secs_f64() * 1e3
    );
    assert_eq!(
        e.inner().trx.locks.stats.timeouts.load(Ordering::Relaxed),
        0
    );
}

/// Two transactions deadlock; `extra` more rows changed by the closing one first. Returns
/// (victim is the closing transaction, the survivor's value in both rows).
fn two_cycle_victim(e: &Arc<Engine>, name: &str, extra: i64) -> (bool, String, String) {
    let t = plain_table(e, name, 0..(2 + extra));
    let mut a = e.begin();
    a.set_lock_wait_timeout(30);
    assert!(a
        .update(&t, &[Value::Int(0)], &[(1, Value::from("a"))])
        .unwrap());
    let (e2, t2) = (e.clone(), t.clone());
    let (go_tx, go_rx) = channel::<()>();
    let (ready_tx, ready_rx) = channel::<()>();
    let b = std::thread::spawn(move || {
        let mut b = e2.begin();
        b.set_lock_wait_timeout(30);
        assert!(b
            .update(&t2, &[Value::Int(1)], &[(1, Value::from("b"))])
            .unwrap());
        for id in 2..(2 + extra) {
            assert!(b
                .update(&t2, &[Value::Int(id)], &[(1, Value::from("b"))])
                .unwrap());
        }
        ready_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        // Closes the cycle.
        match b.update(&t2, &[Value::Int(0)], &[(1, Value::from("b"))]) {
            Ok(true) => {
                b.commit().unwrap();
                false
            }
            Err(Error::Deadlock) => {
                b.rollback().unwrap();
                true
            }
            other => panic!("{other:?}"),
        }
    });
    ready_rx.recv().unwrap();
    // `a` waits for row 1 in its own thread.
    let t3 = t.clone();
    let a_thread = std::thread::spawn(move || {
        match a.update(&t3, &[Value::Int(1)], &[(1, Value::from("a"))]) {
            Ok(true) => {
                a.commit().unwrap();
                false
            }
            Err(Error::Deadlock) => {
                a.rollback().unwrap();
                true
            }
            other => panic!("{other:?}"),
        }
    });
    wait_until("a to wait", || current_waits(e) == 1);
    go_tx.send(()).unwrap();
    let b_victim = b.join().unwrap();
    let a_victim = a_thread.join().unwrap();
    assert!(a_victim != b_victim, "exactly one victim");
    (
        b_victim,
        value_of(e, &t, 0, 1).unwrap(),
        value_of(e, &t, 1, 1).unwrap(),
    )
}

#[test]
fn deadlock_victim_is_the_requester_unless_another_is_lighter() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    // Equal weights: the requester that closes the cycle is the victim.
    let (closer_victim, r0, r1) = two_cycle_victim(&e, "test/equal", 0);
    assert!(closer_victim, "equal weights: the requester is the victim");
    assert_eq!((r0.as_str(), r1.as_str()), ("a", "a"));
    // The requester changed 5 more rows (heavier): the waiting transaction is the victim.
    let (closer_victim, r0, r1) = two_cycle_victim(&e, "test/heavy", 5);
    assert!(
        !closer_victim,
        "the lighter waiting transaction is the victim"
    );
    assert_eq!((r0.as_str(), r1.as_str()), ("b", "b"));
    assert_eq!(deadlocks(&e), 2);
}

// ------------------------------------------------------------------------------------------
// Lock wait timeouts

struct TimeoutCase {
    /// `set_lock_wait_timeout` of the waiting transaction.
    session: Option<u64>,
    /// The global innodb_lock_wait_timeout.
    global: u64,
    rollback_on_timeout: bool,
}

/// Returns the measured wait.
fn timeout_case(e: &Arc<Engine>, no: usize, c: &TimeoutCase) -> Duration {
    let t = plain_table(e, &format!("test/to{no}"), [1, 2]);
    e.tunables()
        .lock_wait_timeout
        .store(c.global, Ordering::Relaxed);
    e.tunables()
        .rollback_on_timeout
        .store(c.rollback_on_timeout, Ordering::Relaxed);
    let expect = Duration::from_secs(c.session.unwrap_or(c.global));
    let mut holder = e.begin();
    assert!(holder
        .update(&t, &[Value::Int(1)], &[(1, Value::from("holder"))])
        .unwrap());
    let mut w = e.begin();
    if let Some(s) = c.session {
        w.set_lock_wait_timeout(s);
    }
    // Earlier changes of the waiting transaction.
    assert!(w
        .update(&t, &[Value::Int(2)], &[(1, Value::from("w"))])
        .unwrap());
    w.insert(&t, &[Value::Int(3), Value::from("w")]).unwrap();
    let timeouts_before = e.inner().trx.locks.stats.timeouts.load(Ordering::Relaxed);
    let start = Instant::now();
    let r = w.update(&t, &[Value::Int(1)], &[(1, Value::from("w"))]);
    let waited = start.elapsed();
    assert!(
        matches!(r, Err(Error::LockWaitTimeout)),
        "expected a lock wait timeout, got {r:?}"
    );
    assert_eq!(
        e.inner().trx.locks.stats.timeouts.load(Ordering::Relaxed),
        timeouts_before + 1
    );
    assert!(
        waited >= expect && waited <= expect.mul_f64(1.1),
        "timeout {expect:?} (session {:?}, global {}): waited {waited:?}",
        c.session,
        c.global
    );
    if c.rollback_on_timeout {
        // The whole transaction was rolled back: its changes are gone and its locks released.
        assert_eq!(
            w.get(&t, &[Value::Int(3)]).unwrap(),
            None,
            "the insert was undone"
        );
        assert_eq!(
            w.get(&t, &[Value::Int(2)]).unwrap().map(|r| text(&r[1])),
            Some("init".into())
        );
        let mut other = e.begin();
        other.set_lock_wait_timeout(1);
        let s = Instant::now();
        assert!(other
            .update(&t, &[Value::Int(2)], &[(1, Value::from("other"))])
            .unwrap());
        other
            .insert(&t, &[Value::Int(3), Value::from("other")])
            .unwrap();
        assert!(
            s.elapsed() < Duration::from_millis(500),
            "row 2 was unlocked"
        );
        other.commit().unwrap();
        w.commit().unwrap();
        holder.commit().unwrap();
        assert_eq!(value_of(e, &t, 2, 1).as_deref(), Some("other"));
        assert_eq!(value_of(e, &t, 3, 1).as_deref(), Some("other"));
    } else {
        // Only the statement failed: the earlier changes stay, and the transaction goes on.
        assert_eq!(
            w.get(&t, &[Value::Int(3)]).unwrap().map(|r| text(&r[1])),
            Some("w".into())
        );
        assert_eq!(
            w.get(&t, &[Value::Int(2)]).unwrap().map(|r| text(&r[1])),
            Some("w".into())
        );
        assert!(w
            .update(&t, &[Value::Int(2)], &[(1, Value::from("w2"))])
            .unwrap());
        w.commit().unwrap();
        holder.commit().unwrap();
        assert_eq!(value_of(e, &t, 2, 1).as_deref(), Some("w2"));
        assert_eq!(value_of(e, &t, 3, 1).as_deref(), Some("w"));
    }
    assert_eq!(value_of(e, &t, 1, 1).as_deref(), Some("holder"));
    eprintln!(
        "lock wait timeout {}s ({}, rollback_on_timeout {}): waited {:.1} ms ({:+.2}%)",
        expect.as_secs(),
        match c.session {
            Some(_) => "session value",
            None => "global value",
        },
        if c.rollback_on_timeout { "ON" } else { "OFF" },
        waited.as_secs_f64() * 1e3,
        (waited.as_secs_f64() / expect.as_secs_f64() - 1.0) * 100.0
    );
    waited
}

#[test]
fn lock_wait_timeout_is_honoured_within_10_percent() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let cases = [
        TimeoutCase {
            session: Some(1),
            global: 50,
            rollback_on_timeout: false,
        },
        TimeoutCase {
            session: None,
            global: 2,
            rollback_on_timeout: false,
        },
        // The session value wins over the global one.
        TimeoutCase {
            session: Some(2),
            global: 1,
            rollback_on_timeout: true,
        },
        TimeoutCase {
            session: None,
            global: 1,
            rollback_on_timeout: true,
        },
    ];
    for (no, c) in cases.iter().enumerate() {
        timeout_case(&e, no, c);
    }
    assert_eq!(deadlocks(&e), 0);
}

#[test]
fn without_deadlock_detection_a_cycle_ends_by_lock_wait_timeout() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    e.tunables().deadlock_detect.store(false, Ordering::Relaxed);
    let t = plain_table(&e, "test/nodetect", [1, 2]);
    let (b_go_tx, b_go_rx) = channel::<()>();
    let (b_ready_tx, b_ready_rx) = channel::<()>();
    let (e2, t2) = (e.clone(), t.clone());
    let b = std::thread::spawn(move || {
        let mut b = e2.begin();
        b.set_lock_wait_timeout(1);
        assert!(b
            .update(&t2, &[Value::Int(2)], &[(1, Value::from("b"))])
            .unwrap());
        b_ready_tx.send(()).unwrap();
        b_go_rx.recv().unwrap();
        let s = Instant::now();
        let r = b.update(&t2, &[Value::Int(1)], &[(1, Value::from("b"))]);
        let waited = s.elapsed();
        assert!(matches!(r, Ok(true)), "b: {r:?}");
        b.commit().unwrap();
        waited
    });
    b_ready_rx.recv().unwrap();
    let (e3, t3) = (e.clone(), t.clone());
    let a = std::thread::spawn(move || {
        let mut a = e3.begin();
        a.set_lock_wait_timeout(1);
        assert!(a
            .update(&t3, &[Value::Int(1)], &[(1, Value::from("a"))])
            .unwrap());
        let s = Instant::now();
        let r = a.update(&t3, &[Value::Int(2)], &[(1, Value::from("a"))]);
        let waited = s.elapsed();
        assert!(
            matches!(r, Err(Error::LockWaitTimeout)),
            "a: expected a lock wait timeout, got {r:?}"
        );
        // What an application does after 1205 in a deadlock: give up the transaction.
        a.rollback().unwrap();
        waited
    });
    wait_until("a to wait", || current_waits(&e) == 1);
    // Let a wait a while before b closes the cycle, so that b outlives a's timeout.
    std::thread::sleep(Duration::from_millis(300));
    b_go_tx.send(()).unwrap();
    wait_until("both to wait", || current_waits(&e) == 2);
    // The cycle stays: nobody is chosen as a victim.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(current_waits(&e), 2, "both still wait in the cycle");
    let a_waited = a.join().unwrap();
    let b_waited = b.join().unwrap();
    eprintln!(
        "innodb_deadlock_detect=OFF: a timed out after {:.3} s; b waited {:.3} s",
        a_waited.as_secs_f64(),
        b_waited.as_secs_f64()
    );
    assert!(
        a_waited >= Duration::from_secs(1) && a_waited <= Duration::from_millis(1100),
        "a waited {a_waited:?}"
    );
    assert!(
        b_waited >= Duration::from_millis(400),
        "b waited {b_waited:?}"
    );
    assert_eq!(deadlocks(&e), 0, "no deadlock was reported");
    assert_eq!(value_of(&e, &t, 1, 1).as_deref(), Some("b"));
    assert_eq!(value_of(&e, &t, 2, 1).as_deref(), Some("b"));
    e.tunables().deadlock_detect.store(true, Ordering::Relaxed);
}

// ------------------------------------------------------------------------------------------
// Gap, next-key and insert-intention locks

/// A request run by another transaction in its own thread; `blocked` says whether it waited
/// for a lock when it was made.
struct Probe {
    what: String,
    blocked: bool,
    handle: JoinHandle<Result<(), Error>>,
}

impl Probe {
    /// Waits for the request to end (the transaction that blocked it must be gone).
    fn finish(self) {
        let what = self.what;
        let r = self.handle.join().unwrap();
        assert!(r.is_ok(), "{what}: {r:?}");
    }
}

/// Runs `f` in a new transaction (REPEATABLE READ, rolled back afterwards) in a thread and
/// finds out whether it blocks. Nothing else may start or end a lock wait meanwhile.
fn probe(
    e: &Arc<Engine>,
    what: &str,
    f: impl FnOnce(&mut Trx) -> Result<(), Error> + Send + 'static,
) -> Probe {
    let before = current_waits(e);
    let e2 = e.clone();
    let handle = std::thread::spawn(move || {
        let mut x = e2.begin();
        x.set_lock_wait_timeout(30);
        let r = f(&mut x);
        x.rollback().unwrap();
        r
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let blocked = loop {
        if current_waits(e) > before {
            break true;
        }
        if handle.is_finished() {
            break false;
        }
        assert!(Instant::now() < deadline, "{what}: neither ends nor waits");
        std::thread::sleep(Duration::from_millis(1));
    };
    Probe {
        what: what.to_string(),
        blocked,
        handle,
    }
}

fn probe_insert(e: &Arc<Engine>, t: &Arc<Table>, row: Vec<Value>) -> Probe {
    let t = t.clone();
    let what = format!("insert {row:?}");
    probe(e, &what, move |x| x.insert(&t, &row))
}

fn probe_insert_id(e: &Arc<Engine>, t: &Arc<Table>, id: i64) -> Probe {
    probe_insert(e, t, vec![Value::Int(id), Value::from("probe")])
}

/// A probe inserting (id, k) into an indexed table.
fn probe_insert_idk(e: &Arc<Engine>, t: &Arc<Table>, id: i64, k: i64) -> Probe {
    probe_insert(
        e,
        t,
        vec![Value::Int(id), Value::Int(k), Value::from("probe")],
    )
}

fn probe_for_update(e: &Arc<Engine>, t: &Arc<Table>, id: i64) -> Probe {
    let t = t.clone();
    probe(e, &format!("select id={id} for update"), move |x| {
        x.get_locking(&t, &[Value::Int(id)], LockRead::Exclusive)
            .map(|_| ())
    })
}

/// Checks which probes blocked, then ends `holder` and lets every probe finish.
fn expect_blocks(e: &Arc<Engine>, holder: Trx, probes: Vec<(Probe, bool)>, case: &str) {
    let mut wrong = Vec::new();
    for (p, want) in &probes {
        if p.blocked != *want {
            wrong.push(format!(
                "{}: {} (InnoDB: {})",
                p.what,
                if p.blocked {
                    "blocks"
                } else {
                    "does not block"
                },
                if *want { "blocks" } else { "does not block" }
            ));
        }
    }
    holder.commit().unwrap();
    for (p, _) in probes {
        p.finish();
    }
    assert_eq!(current_waits(e), 0);
    assert!(wrong.is_empty(), "{case}:\n  {}", wrong.join("\n  "));
}

fn ids_of(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter().map(|r| r[0].as_i64().unwrap()).collect()
}

/// A transaction at `level` holding a FOR UPDATE range read through `index` (None: the
/// primary key) that must return exactly row 20.
fn holder(
    e: &Arc<Engine>,
    t: &Arc<Table>,
    level: Isolation,
    index: Option<&str>,
    from: KeyBound,
    to: KeyBound,
) -> Trx {
    let mut h = e.begin();
    h.set_isolation(level);
    let rows = h
        .scan_locking(
            t,
            index,
            from,
            to,
            true,
            LockRead::Exclusive,
            false,
            &mut |_| true,
        )
        .unwrap();
    assert_eq!(ids_of(&rows), vec![20]);
    h
}

/// SELECT * FROM t WHERE id > 10 AND id < 30 FOR UPDATE at `level`.
fn range_holder(e: &Arc<Engine>, t: &Arc<Table>, level: Isolation) -> Trx {
    let (lo, hi) = (vec![Value::Int(10)], vec![Value::Int(30)]);
    holder(
        e,
        t,
        level,
        None,
        KeyBound::Excluded(lo),
        KeyBound::Excluded(hi),
    )
}

#[test]
fn range_scan_next_key_locks_at_repeatable_read_only() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let t = indexed_table(&e, "test/range");
    let row = |id: i64| vec![Value::Int(id), Value::Int(1000 + id), Value::from("p")];

    // REPEATABLE READ: next-key locks on 20 and on 30 (the first record beyond the range)
    // cover the gaps (10, 20) and (20, 30).
    let h = range_holder(&e, &t, Isolation::RepeatableRead);
    let probes = vec![
        (probe_insert(&e, &t, row(15)), true),
        (probe_insert(&e, &t, row(11)), true),
        (probe_insert(&e, &t, row(25)), true),
        (probe_insert(&e, &t, row(29)), true),
        (probe_insert(&e, &t, row(35)), false),
        (probe_insert(&e, &t, row(5)), false),
        (probe_for_update(&e, &t, 20), true),
        (probe_for_update(&e, &t, 10), false),
        (probe_for_update(&e, &t, 40), false),
    ];
    expect_blocks(&e, h, probes, "REPEATABLE READ range scan 10 < id < 30");

    // READ COMMITTED: the matching row only.
    let h = range_holder(&e, &t, Isolation::ReadCommitted);
    let probes = vec![
        (probe_insert(&e, &t, row(15)), false),
        (probe_insert(&e, &t, row(25)), false),
        (probe_insert(&e, &t, row(29)), false),
        (probe_insert(&e, &t, row(35)), false),
        (probe_for_update(&e, &t, 20), true),
        (probe_for_update(&e, &t, 30), false),
    ];
    expect_blocks(&e, h, probes, "READ COMMITTED range scan 10 < id < 30");
    // Every probe rolled back.
    let mut r = e.begin();
    let all = r
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(ids_of(&all), (10..=90).step_by(10).collect::<Vec<i64>>());
    r.commit().unwrap();
}

/// SELECT * FROM t WHERE k = 40 FOR UPDATE through index k at `level`.
fn sec_holder(e: &Arc<Engine>, t: &Arc<Table>, level: Isolation) -> Trx {
    let k = vec![Value::Int(40)];
    holder(
        e,
        t,
        level,
        Some("k"),
        KeyBound::Included(k.clone()),
        KeyBound::Included(k),
    )
}

#[test]
fn secondary_index_locking_read_locks_its_gaps() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let t = indexed_table(&e, "test/sec");
    // Index k holds (k, id) = (20,10) (40,20) (60,30) (80,40) ... At REPEATABLE READ the read
    // of k = 40 locks (40,20) with its gap, the row id = 20, and the gap before (60,30).
    let h = sec_holder(&e, &t, Isolation::RepeatableRead);
    let probes = vec![
        // Gap ((20,10), (40,20)): an id far from 20 in the clustered index.
        (probe_insert_idk(&e, &t, 5, 30), true),
        // The same k value on either side of (40,20): the phantom InnoDB prevents.
        (probe_insert_idk(&e, &t, 15, 40), true),
        (probe_insert_idk(&e, &t, 35, 40), true),
        // Gap ((40,20), (60,30)).
        (probe_insert_idk(&e, &t, 25, 50), true),
        // Outside the locked gaps.
        (probe_insert_idk(&e, &t, 36, 70), false),
        (probe_insert_idk(&e, &t, 1, 10), false),
        // The row found is locked in the clustered index; the next one is not.
        (probe_for_update(&e, &t, 20), true),
        (probe_for_update(&e, &t, 30), false),
        (probe_for_update(&e, &t, 10), false),
    ];
    expect_blocks(&e, h, probes, "REPEATABLE READ k = 40 through index k");

    let h = sec_holder(&e, &t, Isolation::ReadCommitted);
    let probes = vec![
        (probe_insert_idk(&e, &t, 5, 30), false),
        (probe_insert_idk(&e, &t, 15, 40), false),
        (probe_insert_idk(&e, &t, 35, 40), false),
        (probe_insert_idk(&e, &t, 25, 50), false),
        (probe_for_update(&e, &t, 20), true),
    ];
    expect_blocks(&e, h, probes, "READ COMMITTED k = 40 through index k");
}

#[test]
fn locking_read_of_a_missing_key_gap_locks_at_repeatable_read() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let t = plain_table(&e, "test/missing", (10..=50).step_by(10));
    let holder = |level: Isolation| {
        let mut h = e.begin();
        h.set_isolation(level);
        assert_eq!(
            h.get_locking(&t, &[Value::Int(25)], LockRead::Exclusive)
                .unwrap(),
            None
        );
        h
    };
    // REPEATABLE READ: a gap lock on (20, 30), not on row 30 itself.
    let h = holder(Isolation::RepeatableRead);
    let t2 = t.clone();
    let probes = vec![
        (probe_insert_id(&e, &t, 25), true),
        (probe_insert_id(&e, &t, 21), true),
        (probe_insert_id(&e, &t, 29), true),
        (probe_insert_id(&e, &t, 15), false),
        (probe_insert_id(&e, &t, 35), false),
        (probe_for_update(&e, &t, 30), false),
        (probe_for_update(&e, &t, 20), false),
        // Gap locks never conflict with each other.
        (
            probe(&e, "second select id=25 for update", move |x| {
                x.get_locking(&t2, &[Value::Int(25)], LockRead::Exclusive)
                    .map(|_| ())
            }),
            false,
        ),
    ];
    expect_blocks(&e, h, probes, "REPEATABLE READ id = 25 (absent) for update");

    let h = holder(Isolation::ReadCommitted);
    let probes = vec![
        (probe_insert_id(&e, &t, 25), false),
        (probe_insert_id(&e, &t, 29), false),
    ];
    expect_blocks(&e, h, probes, "READ COMMITTED id = 25 (absent) for update");
}

#[test]
fn two_inserters_behind_gap_locks_deadlock() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let t = plain_table(&e, "test/gapdl", (10..=50).step_by(10));
    // Both read the missing row 25 FOR UPDATE (gap locks, compatible), then both insert it.
    let mut a = e.begin();
    a.set_lock_wait_timeout(30);
    assert_eq!(
        a.get_locking(&t, &[Value::Int(25)], LockRead::Exclusive)
            .unwrap(),
        None
    );
    let mut b = e.begin();
    b.set_lock_wait_timeout(30);
    assert_eq!(
        b.get_locking(&t, &[Value::Int(25)], LockRead::Exclusive)
            .unwrap(),
        None
    );
    let t2 = t.clone();
    let a_thread = std::thread::spawn(move || {
        let r = a.insert(&t2, &[Value::Int(25), Value::from("a")]);
        let ok = r.is_ok();
        match r {
            Ok(()) => a.commit().unwrap(),
            Err(Error::Deadlock) => a.rollback().unwrap(),
            Err(other) => panic!("a: {other:?}"),
        }
        ok
    });
    wait_until("a's insert to wait", || current_waits(&e) == 1);
    let s = Instant::now();
    let r = b.insert(&t, &[Value::Int(25), Value::from("b")]);
    let took = s.elapsed();
    // Equal weights: b, whose request closes the cycle, is the victim (InnoDB's choice).
    assert!(matches!(r, Err(Error::Deadlock)), "b: {r:?}");
    assert!(took < Duration::from_millis(100), "detected after {took:?}");
    b.rollback().unwrap();
    assert!(a_thread.join().unwrap(), "a's insert goes through");
    assert_eq!(value_of(&e, &t, 25, 1).as_deref(), Some("a"));
    assert_eq!(deadlocks(&e), 1);
}

#[test]
fn gap_lock_is_inherited_when_purge_removes_a_locked_record() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // No purge thread: this test decides when purge runs.
    let e = open(dir.path(), false);
    let t = plain_table(&e, "test/inherit", (10..=50).step_by(10));
    let mut d = e.begin();
    assert!(d.delete(&t, &[Value::Int(20)]).unwrap());
    d.commit().unwrap();
    // At REPEATABLE READ a locking read that finds the delete-marked record 20 takes a
    // next-key lock on it: the gap (10, 20) and the record.
    let mut h = e.begin();
    assert_eq!(
        h.get_locking(&t, &[Value::Int(20)], LockRead::Exclusive)
            .unwrap(),
        None
    );
    let p25 = probe_insert_id(&e, &t, 25);
    assert!(!p25.blocked, "before purge the gap (20, 30) is free");
    p25.finish();
    let p15 = probe_insert_id(&e, &t, 15);
    assert!(p15.blocked, "insert 15 waits for the next-key lock on 20");

    let purged = e.purge_all().unwrap();
    assert!(purged > 0, "purge removed the delete-marked record");
    assert_eq!(
        e.inner().trx.history_len.load(Ordering::Relaxed),
        0,
        "history list empty"
    );
    // The waiting insert is woken by the removal and waits again, now for the inherited gap
    // lock on 30 that covers the merged gap (10, 30).
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(current_waits(&e), 1, "insert 15 still waits after purge");
    assert!(!p15.handle.is_finished());
    let p25 = probe_insert_id(&e, &t, 25);
    let p35 = probe_insert_id(&e, &t, 35);
    let p30 = probe_for_update(&e, &t, 30);
    let probes = vec![(p15, true), (p25, true), (p35, false), (p30, false)];
    expect_blocks(&e, h, probes, "after purge of the locked record 20");
    let mut r = e.begin();
    let all = r
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(ids_of(&all), vec![10, 30, 40, 50]);
    r.commit().unwrap();
}

// ------------------------------------------------------------------------------------------
// Locking reads under contention

/// 4 clients append to 8 rows with SELECT ... FOR UPDATE then UPDATE (v = v + ",x"), 10000
/// appends in all, so rows outgrow one leaf and values go off-page. A locking read must return
/// the newest committed version: every committed append must be in the final rows, each once.
#[test]
fn for_update_reads_the_newest_version_under_contention() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let t = e
        .create_table(TableDef::new(
            "test/append",
            vec![
                ColumnDef::new("k", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 10000 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    const KEYS: i64 = 8;
    const APPENDS: u64 = 10_000;
    let mut w = e.begin();
    for k in 0..KEYS {
        w.insert(&t, &[Value::Int(k), Value::from("0")]).unwrap();
    }
    w.commit().unwrap();
    let next = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let handles: Vec<_> = (0..4)
        .map(|c| {
            let (e, t, next) = (e.clone(), t.clone(), next.clone());
            std::thread::spawn(move || -> Result<Vec<u64>, String> {
                let mut committed = Vec::new();
                loop {
                    let x = next.fetch_add(1, Ordering::Relaxed);
                    if x > APPENDS {
                        return Ok(committed);
                    }
                    let k = (x as i64 * 3 + c) % KEYS;
                    let mut trx = e.begin();
                    let row = trx
                        .get_locking(&t, &[Value::Int(k)], LockRead::Exclusive)
                        .map_err(|err| format!("FOR UPDATE of row {k} (append {x}): {err}"))?
                        .expect("the row exists");
                    let new = format!("{},{x}", text(&row[1]));
                    let found = trx
                        .update(&t, &[Value::Int(k)], &[(1, Value::from(new.as_str()))])
                        .map_err(|err| format!("UPDATE of row {k} (append {x}): {err}"))?;
                    assert!(found);
                    trx.commit().unwrap();
                    committed.push(x);
                }
            })
        })
        .collect();
    let mut committed = Vec::new();
    let mut errors = Vec::new();
    for h in handles {
        match h.join().unwrap() {
            Ok(c) => committed.extend(c),
            Err(err) => errors.push(err),
        }
    }
    let mut seen = std::collections::HashMap::new();
    for k in 0..KEYS {
        // Every row starts with element 0.
        for x in value_of(&e, &t, k, 1).unwrap().split(',').skip(1) {
            *seen.entry(x.parse::<u64>().unwrap()).or_insert(0) += 1;
        }
    }
    let lost: Vec<u64> = committed
        .iter()
        .filter(|x| !seen.contains_key(x))
        .copied()
        .collect();
    let doubled = seen.values().filter(|&&n| n > 1).count();
    eprintln!(
        "FOR UPDATE appends: {} committed, {} lost, {} duplicated, engine errors {errors:?}",
        committed.len(),
        lost.len(),
        doubled
    );
    assert!(errors.is_empty(), "engine errors: {errors:?}");
    assert!(
        lost.is_empty(),
        "{} committed appends lost (a locking read returned an old version), e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    assert_eq!(doubled, 0);
    // Every page is accounted for once purge is done (check() does not count the off-page
    // values only unpurged undo records reference).
    let deadline = Instant::now() + Duration::from_secs(20);
    while e.inner().trx.history_len.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
        e.purge_all().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    e.check().unwrap();
}

/// The transaction a commit lets through a table lock sees that commit: its read view is
/// opened after the lock is granted, and the committer left the active set before releasing
/// its locks. (With the opposite order the reader could find the writer still active, so its
/// row invisible: ALTER TABLE's copy lost an acknowledged insert that way.)
#[test]
fn a_table_lock_granted_by_a_commit_sees_that_commit() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), false);
    let t = plain_table(&e, "d/tlock", [0]);
    for id in 1..=300i64 {
        let mut w = e.begin();
        w.insert(&t, &[Value::Int(id), Value::from("new")]).unwrap();
        // Several readers, more than the cores: the commit's wake-ups then often preempt the
        // committer between releasing its locks and leaving the active set (the old order).
        let readers: Vec<_> = (0..6)
            .map(|_| {
                let e = e.clone();
                let t = t.clone();
                std::thread::spawn(move || {
                    let mut r = e.begin();
                    r.lock_table(&t, false).unwrap();
                    let row = r.get(&t, &[Value::Int(id)]).unwrap();
                    r.commit().unwrap();
                    row.is_some()
                })
            })
            .collect();
        wait_until("the readers to wait for their table lock", || {
            current_waits(&e) == 6
        });
        w.commit().unwrap();
        let blind = readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .filter(|saw| !saw)
            .count();
        assert_eq!(
            blind, 0,
            "round {id}: readers let in by the commit did not see its insert"
        );
    }
}
