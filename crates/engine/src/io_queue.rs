//! The queue between the threads that ask for I/O and the I/O threads that do it (read-ahead's
//! `innodb_read_io_threads`, flush batches' `innodb_write_io_threads`): InnoDB's simulated AIO
//! arrays, one per kind.
//!
//! INVARIANTS
//! - Q1: nothing is queued once `stop` ran: `submit` hands the item back to its caller, who
//!   does the work itself or drops it. `running` changes under the queue mutex, so an item is
//!   either queued before `stop` or refused after it.
//! - Q2: `next` returns None only once stopped with the queue empty, so every item queued is
//!   taken by an I/O thread before the last one ends.
//!
//! LATCHING: the queue mutex is a leaf.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use crate::latch::{Condvar, Mutex};

/// Items waiting for the I/O threads, and the threads' state.
pub struct IoQueue<T> {
    /// Protected by its mutex (a leaf), with `running`'s changes.
    queue: Mutex<VecDeque<T>>,
    ready: Condvar,
    running: AtomicBool,
    /// Per I/O thread: the pages it has in hand now (SHOW ENGINE INNODB STATUS).
    pub threads: Box<[AtomicU32]>,
}

impl<T> IoQueue<T> {
    /// State for `threads` I/O threads; none runs until `start`.
    pub fn new(threads: usize) -> Self {
        IoQueue {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            running: AtomicBool::new(false),
            threads: (0..threads).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The I/O threads are about to run: items are queued from now on.
    pub fn start(&self) {
        let _q = self.queue.lock();
        self.running.store(true, Ordering::Release);
    }

    /// Queues no more items; the threads take what is queued, then end (Q1, Q2).
    pub fn stop(&self) {
        let _q = self.queue.lock();
        self.running.store(false, Ordering::Release);
        self.ready.notify_all();
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Queues `item` while the threads run; hands it back otherwise (Q1).
    pub fn submit(&self, item: T) -> Result<(), T> {
        let mut q = self.queue.lock();
        if !self.is_running() {
            return Err(item);
        }
        q.push_back(item);
        self.ready.notify_one();
        Ok(())
    }

    /// The next item, waiting for one; None once stopped and empty (Q2).
    pub fn next(&self) -> Option<T> {
        let mut q = self.queue.lock();
        loop {
            if let Some(item) = q.pop_front() {
                return Some(item);
            }
            if !self.is_running() {
                return None;
            }
            self.ready.wait_for(&mut q, Duration::from_secs(1));
        }
    }
}
