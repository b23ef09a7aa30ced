//! innodb_thread_concurrency: how many threads may be inside the engine at once.
//! (InnoDB: srv0conc.)
//!
//! OVERVIEW
//! With a limit N > 0, a transaction entering the engine (each API call, or each statement the
//! caller brackets with begin_statement/end_statement) takes one of N slots, waiting in FIFO-ish
//! order on a condition variable if none is free, and receives innodb_concurrency_tickets
//! tickets. While it holds the slot, each further entry spends a ticket instead of queueing;
//! with no ticket left it gives the slot back and queues again, so a long statement cannot
//! keep others out for ever. A transaction gives its slot back at the end of the call or
//! statement, at commit or rollback, and while it waits for a row lock (a waiting thread does
//! no work inside, and the holder it waits for may need the slot).
//!
//! INVARIANTS
//! - A1: `inside` equals the number of slots held (each `Slot` with `held` set counts once).
//!
//! LATCHING: the `inside` mutex is a leaf; nobody waits for a slot while holding a page latch
//! or a lock-table mutex (entries happen at API boundaries and after lock waits).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::latch::{Condvar, Mutex};

use crate::config::Tunables;

/// A transaction's admission state.
#[derive(Default, Debug)]
pub struct Slot {
    held: bool,
    tickets: u64,
}

impl Slot {
    pub fn is_held(&self) -> bool {
        self.held
    }
}

#[derive(Default)]
pub struct AdmissionStats {
    /// Entries that had to wait for a slot.
    pub waits: AtomicU64,
    /// The most slots ever held at once.
    pub max_inside: AtomicU64,
    /// Threads waiting for a slot now ("queries in queue").
    pub queued: AtomicU64,
}

#[derive(Default)]
pub struct Admission {
    inside: Mutex<u64>,
    cv: Condvar,
    pub stats: AdmissionStats,
}

impl Admission {
    /// Enters the engine (A1).
    pub fn enter(&self, tun: &Tunables, slot: &mut Slot) {
        let limit = tun.thread_concurrency.load(Ordering::Relaxed);
        if limit == 0 {
            self.exit(slot);
            return;
        }
        if slot.held {
            if slot.tickets > 0 {
                slot.tickets -= 1;
                return;
            }
            self.exit(slot);
        }
        let mut g = self.inside.lock();
        if *g >= limit {
            self.stats.waits.fetch_add(1, Ordering::Relaxed);
            self.stats.queued.fetch_add(1, Ordering::Relaxed);
            while *g >= tun.thread_concurrency.load(Ordering::Relaxed).max(1) {
                self.cv.wait(&mut g);
            }
            self.stats.queued.fetch_sub(1, Ordering::Relaxed);
        }
        *g += 1;
        self.stats.max_inside.fetch_max(*g, Ordering::Relaxed);
        slot.held = true;
        slot.tickets = tun
            .concurrency_tickets
            .load(Ordering::Relaxed)
            .saturating_sub(1);
    }

    /// Leaves the engine, giving the slot back (A1).
    pub fn exit(&self, slot: &mut Slot) {
        if slot.held {
            let mut g = self.inside.lock();
            *g -= 1;
            self.cv.notify_one();
            slot.held = false;
            slot.tickets = 0;
        }
    }

    /// Slots held now.
    pub fn inside(&self) -> u64 {
        *self.inside.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{TunableValues, Tunables};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn at_most_n_inside_and_tickets_bound_a_stay() {
        let tun = Arc::new(Tunables::new(&TunableValues {
            thread_concurrency: 2,
            concurrency_tickets: 3,
            ..TunableValues::default()
        }));
        let a = Arc::new(Admission::default());
        let mut hs = Vec::new();
        for _ in 0..6 {
            let (a, tun) = (a.clone(), tun.clone());
            hs.push(std::thread::spawn(move || {
                let mut s = Slot::default();
                for _ in 0..50 {
                    a.enter(&tun, &mut s);
                    assert!(a.inside() <= 2);
                    std::thread::sleep(Duration::from_micros(200));
                }
                a.exit(&mut s);
            }));
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(a.inside(), 0);
        assert_eq!(a.stats.max_inside.load(Ordering::Relaxed), 2);
        assert!(a.stats.waits.load(Ordering::Relaxed) > 0);
        // Tickets: 3 entries per slot, then the thread queues again.
        let mut s = Slot::default();
        a.enter(&tun, &mut s);
        a.enter(&tun, &mut s);
        a.enter(&tun, &mut s);
        assert!(s.is_held() && s.tickets == 0);
        a.enter(&tun, &mut s);
        assert_eq!(s.tickets, 2);
        a.exit(&mut s);
        assert_eq!(a.inside(), 0);
    }
}
