//! Read views: which transactions' changes a consistent read sees. (InnoDB: read0read.)
//!
//! OVERVIEW
//! A view is taken from the transaction system in one step (under its lock, so no id can be
//! handed out or finish committing half-way): every id at or above `low_limit_id` started after
//! the view, every id in `active` had not committed, every other id had. A transaction always
//! sees its own changes. `low_limit_no` bounds purge: an undo log whose transaction number is
//! below it was committed before the view and is seen by it, so purge may remove what it
//! replaced once every open view has a `low_limit_no` above its number.
//!
//! Views register a weak reference in one of several stripes (picked by thread) so purge can
//! find every open view without a shared counter on the read path. A view is closed when its
//! last holder drops it; purge and later registrations prune dead entries. Purge works with
//! the intersection of all open views and a fresh one ([`ViewRegistry::purge_view`]): it sees
//! a transaction only if every open view does.
//!
//! INVARIANTS
//! - V1: `up_limit_id <= every id in active < low_limit_id`; `active` is sorted.
//! - V2: a view is registered before the transaction system's lock is released, so purge,
//!   which takes its fresh view under the same lock, either finds it or sees less than it.
//!
//! LATCHING: a stripe mutex is a leaf.

use std::sync::{Arc, Weak};

use crate::latch::Mutex;

/// A consistent-read snapshot.
#[derive(Debug)]
pub struct ReadView {
    /// Ids at or above this had not started.
    pub low_limit_id: u64,
    /// Ids below this had committed.
    pub up_limit_id: u64,
    /// Ids between the limits that were active (sorted), the creator excluded.
    pub active: Vec<u64>,
    /// Undo logs with a transaction number below this are seen by the view.
    pub low_limit_no: u64,
}

impl ReadView {
    /// True if changes made by transaction `id` are visible to a reader whose own transaction
    /// id is `own` (0 if it has none).
    #[inline]
    pub fn sees(&self, id: u64, own: u64) -> bool {
        if id < self.up_limit_id || (id == own && own != 0) {
            return true;
        }
        if id >= self.low_limit_id {
            return false;
        }
        self.active.binary_search(&id).is_err()
    }
}

const STRIPES: usize = 16;

/// Open views, for purge.
pub struct ViewRegistry {
    stripes: Vec<Mutex<Vec<Weak<ReadView>>>>,
}

impl Default for ViewRegistry {
    fn default() -> Self {
        Self::new()
    }
}

fn stripe_of_thread() -> usize {
    thread_local! {
        static STRIPE: usize = {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(std::thread::current().id())
                as usize
        };
    }
    STRIPE.with(|s| *s) % STRIPES
}

impl ViewRegistry {
    pub fn new() -> Self {
        ViewRegistry {
            stripes: (0..STRIPES).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    /// Registers a new view (the caller holds the transaction system's lock, V2).
    pub fn register(&self, v: &Arc<ReadView>) {
        let mut s = self.stripes[stripe_of_thread()].lock();
        if s.len() >= 32 && s.len().is_power_of_two() {
            s.retain(|w| w.strong_count() > 0);
        }
        s.push(Arc::downgrade(v));
    }

    /// A view that sees a transaction only if `fresh` and every open view see it (pruning
    /// closed views). `fresh` must be taken before this is called (V2).
    pub fn purge_view(&self, fresh: ReadView) -> ReadView {
        let mut m = fresh;
        let mut union: Vec<u64> = std::mem::take(&mut m.active);
        for st in &self.stripes {
            let mut s = st.lock();
            s.retain(|w| w.strong_count() > 0);
            for w in s.iter() {
                if let Some(v) = w.upgrade() {
                    m.low_limit_id = m.low_limit_id.min(v.low_limit_id);
                    m.up_limit_id = m.up_limit_id.min(v.up_limit_id);
                    m.low_limit_no = m.low_limit_no.min(v.low_limit_no);
                    union.extend_from_slice(&v.active);
                }
            }
        }
        union.sort_unstable();
        union.dedup();
        union.retain(|&id| id < m.low_limit_id);
        m.active = union;
        m
    }

    /// Number of open views (SHOW ENGINE INNODB STATUS "read views open inside InnoDB").
    pub fn n_open(&self) -> usize {
        self.stripes
            .iter()
            .map(|s| s.lock().iter().filter(|w| w.strong_count() > 0).count())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(low: u64, up: u64, active: Vec<u64>) -> ReadView {
        ReadView {
            low_limit_id: low,
            up_limit_id: up,
            active,
            low_limit_no: low,
        }
    }

    #[test]
    fn visibility_rules() {
        let v = view(20, 10, vec![10, 15]);
        assert!(v.sees(9, 0));
        assert!(!v.sees(10, 0));
        assert!(v.sees(11, 0));
        assert!(!v.sees(15, 0));
        assert!(!v.sees(20, 0));
        assert!(!v.sees(25, 0));
        // Own changes, even with an id assigned after the view.
        assert!(v.sees(25, 25));
        assert!(v.sees(15, 15));
        assert!(!v.sees(15, 0));
    }

    #[test]
    fn purge_view_sees_only_what_every_open_view_sees() {
        let r = ViewRegistry::new();
        // a: taken when 5 and 8 were active; b: later, when 8 and 12 were.
        let a = Arc::new(view(10, 5, vec![5, 8]));
        let b = Arc::new(view(14, 8, vec![8, 12]));
        r.register(&a);
        r.register(&b);
        let p = r.purge_view(view(20, 20, vec![]));
        for id in 0..25 {
            assert_eq!(p.sees(id, 0), a.sees(id, 0) && b.sees(id, 0), "id {id}");
        }
        assert_eq!(p.low_limit_no, 10);
        drop(a);
        let p = r.purge_view(view(20, 20, vec![]));
        for id in 0..25 {
            assert_eq!(p.sees(id, 0), b.sees(id, 0), "id {id}");
        }
        assert_eq!(r.n_open(), 1);
        drop(b);
        assert_eq!(r.purge_view(view(20, 20, vec![])).low_limit_id, 20);
    }
}
