//! User-level named locks (GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK, IS_USED_LOCK,
//! RELEASE_ALL_LOCKS) and SLEEP: the functions that wait, so they need the session running the
//! statement (its connection id and its KILL QUERY flag). Session::execute installs that in a
//! thread-local (a connection's statements all run on its own thread) before a statement runs;
//! `leave` clears it when the connection ends, before the thread cache gives the thread to
//! another connection (net.rs L2).
//! (MySQL: item_func.cc's user locks, backed by the metadata lock subsystem.)
//!
//! INVARIANTS
//! - U1: a name (case-insensitive, at most 64 characters) is held by one session at a time; a
//!   session may take it again (each GET_LOCK counts, each RELEASE_LOCK takes one off).
//! - U2: a session's locks are released when it ends (Session's Drop) or resets its
//!   connection; waiters are woken whenever a lock is released.
//! - U3: a wait ends at its timeout, when the lock comes free, or at KILL QUERY / KILL
//!   (error 1317), checked at least every 100 ms.
//!
//! Latch order: the lock table's mutex only, never held while sleeping (the condvar releases
//! it).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::latch::{Condvar, Mutex};
use innoxide_sql::error::*;
use innoxide_sql::types::Datum;

/// The server's named locks: name (lower case) → (holder's connection id, times taken).
#[derive(Default)]
pub struct NamedLocks {
    held: Mutex<HashMap<String, (u32, u32)>>,
    freed: Condvar,
}

/// What the waiting functions need from the statement's session.
#[derive(Clone)]
struct StmtCtx {
    conn_id: u32,
    interrupt: Arc<AtomicBool>,
    locks: Arc<NamedLocks>,
}

thread_local! {
    static CTX: RefCell<Option<StmtCtx>> = const { RefCell::new(None) };
}

/// Makes `conn_id`'s session the one this thread's statements run for (cheap when it already
/// is).
pub fn enter(conn_id: u32, interrupt: &Arc<AtomicBool>, locks: &Arc<NamedLocks>) {
    CTX.with(|c| {
        let mut c = c.borrow_mut();
        // A reset connection (COM_RESET_CONNECTION, COM_CHANGE_USER) keeps its id but gets a
        // new session, with its own KILL QUERY flag.
        let current = c
            .as_ref()
            .is_some_and(|x| x.conn_id == conn_id && Arc::ptr_eq(&x.interrupt, interrupt));
        if !current {
            *c = Some(StmtCtx {
                conn_id,
                interrupt: interrupt.clone(),
                locks: locks.clone(),
            });
        }
    });
}

/// Forgets the session this thread ran statements for (its connection ended; net.rs L2).
pub fn leave() {
    CTX.with(|c| *c.borrow_mut() = None);
}

fn ctx() -> Result<StmtCtx, SqlError> {
    CTX.with(|c| c.borrow().clone())
        .ok_or_else(|| SqlError::new(ER_UNKNOWN_ERROR, &[]))
}

fn lock_name(d: &Datum) -> Result<String, SqlError> {
    let name = String::from_utf8_lossy(&d.to_text().unwrap_or_default()).to_lowercase();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(SqlError::new(ER_USER_LOCK_WRONG_NAME, &[&name]));
    }
    Ok(name)
}

impl NamedLocks {
    /// Releases everything `conn_id` holds (U2); the number of acquisitions released.
    pub fn release_all(&self, conn_id: u32) -> u64 {
        let mut g = self.held.lock();
        let mut n = 0u64;
        g.retain(|_, (owner, count)| {
            if *owner == conn_id {
                n += u64::from(*count);
                false
            } else {
                true
            }
        });
        drop(g);
        if n > 0 {
            self.freed.notify_all();
        }
        n
    }
}

/// GET_LOCK(name, timeout): 1 when taken, 0 at the timeout (a negative one waits forever).
pub fn get_lock(name: &Datum, timeout: f64) -> Result<Datum, SqlError> {
    let cx = ctx()?;
    let name = lock_name(name)?;
    let deadline =
        (timeout >= 0.0).then(|| Instant::now() + Duration::from_secs_f64(timeout.min(1e9)));
    let mut g = cx.locks.held.lock();
    loop {
        match g.get_mut(&name) {
            None => {
                g.insert(name, (cx.conn_id, 1));
                return Ok(Datum::Int(1));
            }
            Some((owner, count)) if *owner == cx.conn_id => {
                *count += 1;
                return Ok(Datum::Int(1));
            }
            Some(_) => {}
        }
        if cx.interrupt.load(Ordering::Acquire) {
            return Err(SqlError::new(ER_QUERY_INTERRUPTED, &[]));
        }
        let slice = Duration::from_millis(100);
        let wait = match deadline {
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return Ok(Datum::Int(0));
                }
                (d - now).min(slice)
            }
            None => slice,
        };
        cx.locks.freed.wait_for(&mut g, wait);
    }
}

/// RELEASE_LOCK(name): 1 released, 0 held by another session, NULL if nobody holds it.
pub fn release_lock(name: &Datum) -> Result<Datum, SqlError> {
    let cx = ctx()?;
    let name = lock_name(name)?;
    let mut g = cx.locks.held.lock();
    let r = match g.get_mut(&name) {
        None => Datum::Null,
        Some((owner, _)) if *owner != cx.conn_id => Datum::Int(0),
        Some((_, count)) => {
            *count -= 1;
            if *count == 0 {
                g.remove(&name);
                cx.locks.freed.notify_all();
            }
            Datum::Int(1)
        }
    };
    Ok(r)
}

/// IS_FREE_LOCK(name) (1 free, 0 held) or IS_USED_LOCK(name) (the holder's id or NULL).
pub fn lock_state(name: &Datum, used: bool) -> Result<Datum, SqlError> {
    let cx = ctx()?;
    let name = lock_name(name)?;
    let owner = cx.locks.held.lock().get(&name).map(|(o, _)| *o);
    Ok(match (used, owner) {
        (false, o) => Datum::Int(i64::from(o.is_none())),
        (true, Some(o)) => Datum::UInt(u64::from(o)),
        (true, None) => Datum::Null,
    })
}

/// RELEASE_ALL_LOCKS(): how many acquisitions the session released.
pub fn release_all() -> Result<Datum, SqlError> {
    let cx = ctx()?;
    Ok(Datum::UInt(cx.locks.release_all(cx.conn_id)))
}

/// SLEEP(seconds): 0 after sleeping, 1 when KILL QUERY cut it short.
pub fn sleep(seconds: f64) -> Result<Datum, SqlError> {
    let cx = ctx()?;
    let end = Instant::now() + Duration::from_secs_f64(seconds.clamp(0.0, 1e9));
    loop {
        if cx.interrupt.load(Ordering::Acquire) {
            return Ok(Datum::Int(1));
        }
        let now = Instant::now();
        if now >= end {
            return Ok(Datum::Int(0));
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}
