//! LOCK TABLES / UNLOCK TABLES: table locks a session takes explicitly, at the SQL layer (as
//! MySQL's metadata locks of LOCK TABLES; the engine's row locks are not involved).
//! (MySQL: sql_parse.cc lock_tables_open_and_lock_tables, mdl.cc.)
//!
//! INVARIANTS
//! - L1: a table is held by one session for WRITE or by any number of sessions for READ, never
//!   both; a session's LOCK TABLES takes all its tables at once or none (it waits until every
//!   one is free for it), so two LOCK TABLES never wait for each other.
//! - L2: while a session holds table locks, its statements reach only those tables (1100) and
//!   write only the ones held WRITE (1099); system schemas are outside LOCK TABLES.
//! - L3: a statement of another session on a table held WRITE, or writing one held READ, waits
//!   until the table is released, at most lock_wait_timeout seconds (then 1205), and stops at
//!   KILL QUERY (1317), checked at least every 100 ms.
//! - L4: a session's locks go at UNLOCK TABLES, at the next LOCK TABLES, at START TRANSACTION
//!   / BEGIN, when the connection is reset and when it ends; waiters are woken each time.
//! - L5: FLUSH TABLES WITH READ LOCK is a read lock on every table: other sessions' writes
//!   (and WRITE locks) wait as for a READ lock; the holder's own writes fail (1223). It goes
//!   at UNLOCK TABLES and when the connection is reset or ends.
//!
//! Limits: statements already running when LOCK TABLES is granted are not waited for (there
//! are no statement-duration metadata locks yet), and a table is named by its own name, not
//! by the alias given in LOCK TABLES.
//!
//! Latch order: the lock table's mutex only, never held while waiting (the condvar releases
//! it); it is a leaf (no engine latch is taken under it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use innoxide_engine::latch::{Condvar, Mutex};
use innoxide_sql::error::*;

/// Who holds one table.
#[derive(Default)]
struct Holders {
    /// The session holding it for WRITE.
    writer: Option<u32>,
    /// The sessions holding it for READ.
    readers: Vec<u32>,
}

impl Holders {
    /// True if session `id` may have the table in this mode (its own locks never stand in its
    /// way).
    fn admits(&self, id: u32, write: bool) -> bool {
        self.writer.is_none_or(|w| w == id) && (!write || self.readers.iter().all(|&r| r == id))
    }
}

/// The server's table locks: `db/table` → holders, and the sessions holding the global read
/// lock (L5).
#[derive(Default)]
pub struct TableLocks {
    held: Mutex<Held>,
    freed: Condvar,
    /// Tables with a holder plus global read locks: statements skip the mutex while there
    /// are none.
    tables: AtomicUsize,
}

#[derive(Default)]
struct Held {
    tables: HashMap<String, Holders>,
    global: Vec<u32>,
}

impl Held {
    /// True if session `id` may have `table` in this mode (L1, L5).
    fn admits(&self, id: u32, table: &str, write: bool) -> bool {
        self.tables.get(table).is_none_or(|h| h.admits(id, write))
            && (!write || self.global.iter().all(|&g| g == id))
    }

    fn count(&self) -> usize {
        self.tables.len() + self.global.len()
    }
}

/// What a wait needs from the session.
pub struct Waiter<'a> {
    pub id: u32,
    pub timeout: Duration,
    pub interrupt: &'a AtomicBool,
}

impl TableLocks {
    /// Waits until `ok` holds for the lock table, then runs `take` on it (L3).
    fn wait_for(
        &self,
        w: &Waiter<'_>,
        ok: impl Fn(&Held) -> bool,
        take: impl FnOnce(&mut Held),
    ) -> Result<(), SqlError> {
        let deadline = Instant::now() + w.timeout;
        let mut g = self.held.lock();
        loop {
            if ok(&g) {
                take(&mut g);
                self.tables.store(g.count(), Ordering::Release);
                return Ok(());
            }
            if w.interrupt.load(Ordering::Acquire) {
                return Err(SqlError::new(ER_QUERY_INTERRUPTED, &[]));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(SqlError::new(ER_LOCK_WAIT_TIMEOUT, &[]));
            }
            let slice = (deadline - now).min(Duration::from_millis(100));
            self.freed.wait_for(&mut g, slice);
        }
    }

    /// LOCK TABLES: takes every `(db/table, write)` for session `w.id`, all at once (L1).
    pub fn lock(&self, w: &Waiter<'_>, tables: &[(String, bool)]) -> Result<(), SqlError> {
        let ok = |g: &Held| tables.iter().all(|(t, write)| g.admits(w.id, t, *write));
        self.wait_for(w, ok, |g| {
            for (t, write) in tables {
                let h = g.tables.entry(t.clone()).or_default();
                if *write {
                    h.writer = Some(w.id);
                } else if !h.readers.contains(&w.id) {
                    h.readers.push(w.id);
                }
            }
        })
    }

    /// Releases what session `id` holds on `tables` (L4).
    pub fn unlock(&self, id: u32, tables: &[(String, bool)]) {
        if tables.is_empty() {
            return;
        }
        let mut g = self.held.lock();
        for (t, _) in tables {
            if let Some(h) = g.tables.get_mut(t) {
                h.readers.retain(|&r| r != id);
                if h.writer == Some(id) {
                    h.writer = None;
                }
                if h.writer.is_none() && h.readers.is_empty() {
                    g.tables.remove(t);
                }
            }
        }
        self.tables.store(g.count(), Ordering::Release);
        drop(g);
        self.freed.notify_all();
    }

    /// FLUSH TABLES WITH READ LOCK for session `w.id` (L5): waits for WRITE locks of others.
    pub fn lock_global(&self, w: &Waiter<'_>) -> Result<(), SqlError> {
        let ok = |g: &Held| {
            g.tables
                .values()
                .all(|h| h.writer.is_none_or(|x| x == w.id))
        };
        self.wait_for(w, ok, |g| {
            if !g.global.contains(&w.id) {
                g.global.push(w.id);
            }
        })
    }

    /// Releases session `id`'s global read lock, if it holds one.
    pub fn unlock_global(&self, id: u32) {
        let mut g = self.held.lock();
        let before = g.global.len();
        g.global.retain(|&x| x != id);
        if g.global.len() == before {
            return;
        }
        self.tables.store(g.count(), Ordering::Release);
        drop(g);
        self.freed.notify_all();
    }

    /// True while no session holds a table lock or the global read lock.
    pub fn none_held(&self) -> bool {
        self.tables.load(Ordering::Acquire) == 0
    }

    /// A statement of session `w.id` reading (or writing) `table`: waits while another session
    /// holds it in a conflicting mode (L3).
    pub fn admit(&self, w: &Waiter<'_>, table: &str, write: bool) -> Result<(), SqlError> {
        if self.none_held() {
            return Ok(());
        }
        self.wait_for(w, |g| g.admits(w.id, table, write), |_| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn waiter(id: u32, ms: u64, flag: &AtomicBool) -> Waiter<'_> {
        Waiter {
            id,
            timeout: Duration::from_millis(ms),
            interrupt: flag,
        }
    }

    #[test]
    fn readers_share_writers_exclude_and_release_wakes() {
        let locks = Arc::new(TableLocks::default());
        let flag = AtomicBool::new(false);
        let t = |n: &str, w: bool| (format!("d/{n}"), w);
        locks.lock(&waiter(1, 10, &flag), &[t("a", false)]).unwrap();
        locks.lock(&waiter(2, 10, &flag), &[t("a", false)]).unwrap();
        // Reads pass, a write waits until its timeout.
        locks.admit(&waiter(3, 10, &flag), "d/a", false).unwrap();
        let e = locks.admit(&waiter(3, 10, &flag), "d/a", true).unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        // A WRITE lock waits for both readers, all or nothing: b stays free meanwhile.
        let e = locks
            .lock(&waiter(3, 10, &flag), &[t("b", true), t("a", true)])
            .unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        locks.admit(&waiter(4, 10, &flag), "d/b", true).unwrap();
        locks.unlock(1, &[t("a", false)]);
        let l2 = locks.clone();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            l2.unlock(2, &[t("a", false)]);
        });
        locks
            .lock(&waiter(3, 5000, &flag), &[t("b", true), t("a", true)])
            .unwrap();
        release.join().unwrap();
        // Now nobody else reads a or b; the holder itself does.
        let e = locks
            .admit(&waiter(1, 10, &flag), "d/a", false)
            .unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        locks.admit(&waiter(3, 10, &flag), "d/a", true).unwrap();
        // KILL QUERY ends a wait.
        let killed = AtomicBool::new(true);
        let e = locks
            .admit(&waiter(1, 5000, &killed), "d/b", false)
            .unwrap_err();
        assert_eq!(e.code, ER_QUERY_INTERRUPTED.code);
        locks.unlock(3, &[t("b", true), t("a", true)]);
        assert_eq!(locks.tables.load(Ordering::Acquire), 0);
        locks.admit(&waiter(1, 10, &flag), "d/a", true).unwrap();
        // The global read lock: reads pass, writes and WRITE locks of others wait.
        locks.lock(&waiter(2, 10, &flag), &[t("c", true)]).unwrap();
        let e = locks.lock_global(&waiter(1, 10, &flag)).unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        locks.unlock(2, &[t("c", true)]);
        locks.lock_global(&waiter(1, 10, &flag)).unwrap();
        locks.admit(&waiter(2, 10, &flag), "d/a", false).unwrap();
        let e = locks.admit(&waiter(2, 10, &flag), "d/a", true).unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        let e = locks
            .lock(&waiter(2, 10, &flag), &[t("a", true)])
            .unwrap_err();
        assert_eq!(e.code, ER_LOCK_WAIT_TIMEOUT.code);
        locks.unlock_global(1);
        locks.admit(&waiter(2, 10, &flag), "d/a", true).unwrap();
        assert_eq!(locks.tables.load(Ordering::Acquire), 0);
    }
}
