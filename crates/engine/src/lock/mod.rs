//! Row locks. (InnoDB: lock0lock.)
//!
//! OVERVIEW
//! A transaction takes an exclusive lock on a row (its clustered key) before changing it and
//! keeps it until it commits or rolls back, so two transactions never interleave changes to one
//! row and a rollback only ever undoes its own changes. Waits are bounded by
//! `innodb_lock_wait_timeout` (MySQL error 1205). Shared locks, gap and next-key locks,
//! insert-intention locks and deadlock detection belong to the isolation work (issue 3).
//!
//! The table is sharded by key hash; each shard has a mutex and a condition variable that
//! waiters sleep on.
//!
//! INVARIANTS
//! - I1: at most one transaction holds the lock on a key; a holder's key is in its lock list.
//! - I2: a transaction waiting for a lock holds no page latch (callers lock before latching).
//!
//! LATCHING: a shard mutex is a leaf: nothing is acquired while holding it.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::types::{IndexId, TableId};

/// The locked row: index and the encoded clustered key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub table: TableId,
    pub index: IndexId,
    pub key: Vec<u8>,
}

struct Shard {
    map: Mutex<HashMap<LockKey, u64>>,
    cv: Condvar,
}

#[derive(Default)]
pub struct LockStats {
    /// Innodb_row_lock_waits
    pub waits: AtomicU64,
    /// Innodb_row_lock_time (ms)
    pub wait_ms: AtomicU64,
    /// Innodb_row_lock_current_waits
    pub current_waits: AtomicU64,
    pub timeouts: AtomicU64,
}

pub struct LockSys {
    shards: Vec<Shard>,
    hasher: std::collections::hash_map::RandomState,
    pub stats: LockStats,
}

impl Default for LockSys {
    fn default() -> Self {
        Self::new()
    }
}

impl LockSys {
    pub fn new() -> Self {
        LockSys {
            shards: (0..64)
                .map(|_| Shard {
                    map: Mutex::new(HashMap::new()),
                    cv: Condvar::new(),
                })
                .collect(),
            hasher: std::collections::hash_map::RandomState::new(),
            stats: LockStats::default(),
        }
    }

    fn shard(&self, k: &LockKey) -> &Shard {
        let h = self.hasher.hash_one(k);
        &self.shards[(h % self.shards.len() as u64) as usize]
    }

    /// Takes the exclusive lock on `key` for `trx`, waiting at most `timeout` (I2). Returns true
    /// if the lock is new for this transaction (the caller records it for release).
    pub fn lock_x(&self, trx: u64, key: &LockKey, timeout: Duration) -> Result<bool> {
        let sh = self.shard(key);
        let mut m = sh.map.lock();
        let mut waited: Option<Instant> = None;
        loop {
            match m.get(key) {
                None => {
                    m.insert(key.clone(), trx);
                    self.finish_wait(waited);
                    return Ok(true);
                }
                Some(&owner) if owner == trx => {
                    self.finish_wait(waited);
                    return Ok(false);
                }
                Some(_) => {}
            }
            let start = *waited.get_or_insert_with(|| {
                self.stats.waits.fetch_add(1, Ordering::Relaxed);
                self.stats.current_waits.fetch_add(1, Ordering::Relaxed);
                Instant::now()
            });
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.finish_wait(waited);
                self.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                return Err(Error::LockWaitTimeout);
            }
            sh.cv.wait_for(&mut m, left);
        }
    }

    fn finish_wait(&self, waited: Option<Instant>) {
        if let Some(s) = waited {
            self.stats.current_waits.fetch_sub(1, Ordering::Relaxed);
            self.stats
                .wait_ms
                .fetch_add(s.elapsed().as_millis() as u64, Ordering::Relaxed);
        }
    }

    /// Releases the given locks of `trx` and wakes their waiters.
    pub fn release(&self, trx: u64, keys: &[LockKey]) {
        for k in keys {
            let sh = self.shard(k);
            let mut m = sh.map.lock();
            if m.get(k) == Some(&trx) {
                m.remove(k);
                sh.cv.notify_all();
            }
        }
    }

    /// Number of locks held (SHOW ENGINE INNODB STATUS).
    pub fn n_locks(&self) -> usize {
        self.shards.iter().map(|s| s.map.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn exclusive_wait_and_timeout() {
        let ls = Arc::new(LockSys::new());
        let k = LockKey {
            table: 5,
            index: 9,
            key: vec![1, 2],
        };
        assert!(ls.lock_x(1, &k, Duration::from_secs(1)).unwrap());
        assert!(!ls.lock_x(1, &k, Duration::from_secs(1)).unwrap());
        let t0 = Instant::now();
        assert!(matches!(
            ls.lock_x(2, &k, Duration::from_millis(100)),
            Err(Error::LockWaitTimeout)
        ));
        let e = t0.elapsed();
        assert!(
            e >= Duration::from_millis(100) && e < Duration::from_millis(300),
            "{e:?}"
        );
        let ls2 = ls.clone();
        let k2 = k.clone();
        let h = std::thread::spawn(move || ls2.lock_x(3, &k2, Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        ls.release(1, std::slice::from_ref(&k));
        assert!(h.join().unwrap().unwrap());
        assert_eq!(ls.n_locks(), 1);
    }
}
