//! The thread cache (thread_cache_size; MySQL's Per_thread_connection_handler): when a
//! connection ends, its thread waits for the next connection instead of exiting, as long as
//! fewer than thread_cache_size threads wait; a new connection goes to a waiting thread when
//! there is one, else to a new thread (Threads_created). Threads_cached is the number waiting.
//!
//! OVERVIEW
//! ```text
//!  listener ──dispatch(job)──> idle > 0 ? ── yes: idle -= 1, jobs.push, notify_one ──┐
//!                                         └─ no:  spawn "connection" thread (created++) │
//!  connection thread: run job ─> wait_for_work: idle < size ? idle += 1, wait <────────┘
//!                                              : exit
//! ```
//! A job is the whole of one connection (net.rs: serve it, then reset the thread's per-
//! connection state). Threads keep their name ("connection") and the default stack size.
//!
//! INVARIANTS
//! - H1: `idle` (Threads_cached) counts the threads waiting in `wait_for_work` that no job
//!   or exit request has claimed. A thread enters the wait only while `idle < size` and the
//!   cache is not stopping, and `set_size` claims the excess at once, so `idle <= size`.
//! - H2: every claim (a job queued by `dispatch`, an exit asked by `set_size` or `shutdown`)
//!   takes one from `idle` under the mutex and is taken by exactly one waiting thread, so
//!   `jobs.len() + exits` never exceeds the threads waiting and no job waits for a thread
//!   that will not come.
//! - H3: a waiting thread holds nothing of the connection it served: the job and what it
//!   captured (the server handle, the socket, the session) are dropped before it waits.
//! - H4: after `shutdown`, no thread waits: the idle ones exit, and a thread whose
//!   connection ends then exits instead of waiting.
//!
//! LATCHING: one mutex, a leaf, held only to count and queue (never while a job runs or a
//! thread is created).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use innoxide_engine::latch::{Condvar, Mutex};

/// One connection's work, run on a cached or a new thread.
pub type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    /// Threads waiting and not claimed (H1).
    idle: u64,
    /// Jobs handed to claimed threads that have not taken them yet (H2).
    jobs: VecDeque<Job>,
    /// Claimed threads asked to exit (H2).
    exits: u64,
    /// thread_cache_size in force.
    size: u64,
    /// Set by `shutdown` (H4).
    stopping: bool,
}

pub struct ThreadCache {
    state: Mutex<State>,
    wake: Condvar,
    /// Threads created since start (Threads_created).
    created: AtomicU64,
}

impl ThreadCache {
    /// A cache keeping up to `size` threads (thread_cache_size).
    pub fn new(size: u64) -> ThreadCache {
        ThreadCache {
            state: Mutex::new(State {
                size,
                ..State::default()
            }),
            wake: Condvar::new(),
            created: AtomicU64::new(0),
        }
    }

    /// Runs `job` on a waiting thread, or on a new one when none waits. An error only when
    /// no thread can be created (the job is dropped).
    pub fn dispatch(self: &Arc<Self>, job: Job) -> std::io::Result<()> {
        let job = {
            let mut st = self.state.lock();
            if st.idle > 0 {
                st.idle -= 1;
                st.jobs.push_back(job);
                drop(st);
                self.wake.notify_one();
                return Ok(());
            }
            job
        };
        // Counted first: the new thread may answer its client (SHOW STATUS included) before
        // `spawn` returns here.
        self.created.fetch_add(1, Ordering::Relaxed);
        let cache = self.clone();
        let r = std::thread::Builder::new()
            .name("connection".into())
            .spawn(move || cache.run(job));
        if r.is_err() {
            self.created.fetch_sub(1, Ordering::Relaxed);
        }
        r.map(drop)
    }

    /// A connection thread: its first job, then whatever `wait_for_work` hands it.
    fn run(&self, mut job: Job) {
        loop {
            job();
            // H3: `job` was consumed by the call; nothing of its connection is left here.
            match self.wait_for_work() {
                Some(next) => job = next,
                None => return,
            }
        }
    }

    /// Waits (cached) for the next job; None when the thread is to exit: the cache is full
    /// or stopping, or `set_size`/`shutdown` claimed this thread for an exit.
    fn wait_for_work(&self) -> Option<Job> {
        let mut st = self.state.lock();
        if st.stopping || st.idle >= st.size {
            return None;
        }
        st.idle += 1;
        loop {
            if let Some(j) = st.jobs.pop_front() {
                return Some(j);
            }
            if st.exits > 0 {
                st.exits -= 1;
                return None;
            }
            self.wake.wait(&mut st);
        }
    }

    /// SET GLOBAL thread_cache_size: threads waiting beyond the new size exit now (H1).
    pub fn set_size(&self, size: u64) {
        let mut st = self.state.lock();
        st.size = size;
        let excess = st.idle.saturating_sub(size);
        if excess > 0 {
            st.idle -= excess;
            st.exits += excess;
            drop(st);
            self.wake.notify_all();
        }
    }

    /// At shutdown: every waiting thread exits, and no thread waits from now on (H4).
    pub fn shutdown(&self) {
        let mut st = self.state.lock();
        st.stopping = true;
        st.exits += st.idle;
        st.idle = 0;
        drop(st);
        self.wake.notify_all();
    }

    /// Threads waiting for a connection (Threads_cached).
    pub fn cached(&self) -> u64 {
        self.state.lock().idle
    }

    /// Threads created since start (Threads_created).
    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// Waits up to 10 s (a loaded machine, a debug build) for `cond`.
    fn eventually(what: &str, cond: impl Fn() -> bool) {
        let end = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A job that reports its thread's id when it runs.
    fn job(tx: &mpsc::Sender<std::thread::ThreadId>) -> Job {
        let tx = tx.clone();
        Box::new(move || {
            let _ = tx.send(std::thread::current().id());
        })
    }

    fn recv(rx: &mpsc::Receiver<std::thread::ThreadId>) -> std::thread::ThreadId {
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the job ran")
    }

    /// Consecutive jobs reuse one cached thread; with size 0 each gets a new one.
    #[test]
    fn a_cached_thread_takes_the_next_job() {
        let (tx, rx) = mpsc::channel();
        let c = Arc::new(ThreadCache::new(4));
        c.dispatch(job(&tx)).unwrap();
        let first = recv(&rx);
        for _ in 0..20 {
            eventually("the thread to wait", || c.cached() == 1);
            c.dispatch(job(&tx)).unwrap();
            assert_eq!(recv(&rx), first);
        }
        assert_eq!(c.created(), 1);

        let z = Arc::new(ThreadCache::new(0));
        for _ in 0..5 {
            z.dispatch(job(&tx)).unwrap();
            recv(&rx);
        }
        assert_eq!((z.created(), z.cached()), (5, 0));
    }

    /// No more than `size` threads wait; lowering the size makes the excess exit, and
    /// shutdown empties the cache (H1, H4).
    #[test]
    fn the_size_bounds_the_waiting_threads() {
        let (tx, rx) = mpsc::channel();
        let c = Arc::new(ThreadCache::new(3));
        // Five jobs at once: each blocks until released, so five threads are created.
        let gate = Arc::new(std::sync::Barrier::new(6));
        for _ in 0..5 {
            let (tx, gate) = (tx.clone(), gate.clone());
            c.dispatch(Box::new(move || {
                gate.wait();
                let _ = tx.send(std::thread::current().id());
            }))
            .unwrap();
        }
        gate.wait();
        for _ in 0..5 {
            recv(&rx);
        }
        assert_eq!(c.created(), 5);
        eventually("three threads to wait", || c.cached() == 3);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(c.cached(), 3);
        c.set_size(1);
        assert_eq!(c.cached(), 1);
        c.dispatch(job(&tx)).unwrap();
        recv(&rx);
        eventually("the thread to wait again", || c.cached() == 1);
        assert_eq!(c.created(), 5);
        c.shutdown();
        assert_eq!(c.cached(), 0);
        // After shutdown a job still runs (on a new thread), which then exits.
        c.dispatch(job(&tx)).unwrap();
        recv(&rx);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!((c.cached(), c.created()), (0, 6));
    }
}
