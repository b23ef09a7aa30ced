//! Striped event counters for hot paths (InnoDB: ib_counter_t). Each thread adds to its own
//! cache-line-aligned slot, so counting a page access never bounces a shared cache line between
//! cores; reading sums the slots.
//!
//! Invariants: a slot only grows; `get` is a moment's sum (exact once the adders stop). No
//! latches.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub(crate) const SLOTS: usize = 16;

#[repr(align(64))]
#[derive(Default)]
struct Slot(AtomicU64);

#[derive(Default)]
pub struct Counter {
    slots: [Slot; SLOTS],
}

/// This thread's stripe (also used by `sync_stats::KeyedWaits`).
pub(crate) fn my_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
    }
    SLOT.with(|s| *s)
}

impl Counter {
    #[inline]
    pub fn add(&self, n: u64) {
        self.slots[my_slot()].0.fetch_add(n, Ordering::Relaxed);
    }

    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    pub fn get(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_thread() {
        let c = std::sync::Arc::new(Counter::default());
        let hs: Vec<_> = (0..20)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.inc();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        c.add(5);
        assert_eq!(c.get(), 20_005);
    }
}
