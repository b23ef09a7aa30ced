//! The engine's blocking primitives: a mutex, a reader/writer latch (the page latch of every
//! buffer-pool frame and the engine's rw-locks) and a condition variable, all on the Linux futex.
//!
//! WHY NOT parking_lot
//! parking_lot's locks spin before they sleep by calling sched_yield. With many more runnable
//! threads than cores (sysbench's 64 connections on this 2-core machine) each yield hands the
//! core to another thread for a scheduler slice, and when the yielding thread holds another
//! latch (a descent waiting for a leaf holds its parent; an update waiting for the undo page
//! holds a hot leaf) everyone queued behind that latch waits too. With the yields turned off
//! (an LD_PRELOAD no-op sched_yield) the p95 of oltp_read_write at 64 threads fell from 95-98
//! to 63-67 ms at the same throughput. These primitives spin briefly with the CPU's pause hint
//! (`SPINS` reads of the lock word, a few microseconds), then sleep in the kernel until an
//! unlock wakes them. They never yield and never hand a lock to a sleeping thread: a released
//! lock is free for whichever thread runs first, so a lock is never held by a thread that is
//! still waiting for a core.
//!
//! INVARIANTS
//! - F1 (Mutex): the word is FREE, LOCKED or CONTENDED. A thread sleeps on the word only while
//!   it reads CONTENDED; unlock swaps in FREE and, if it took CONTENDED, wakes one sleeper. A
//!   woken thread re-locks with CONTENDED (it cannot know whether others still sleep), so a
//!   sleeper is never left behind a FREE word.
//! - F2 (RawRwLatch): `state` holds the reader count, or WRITE_LOCKED for an exclusive holder,
//!   plus READERS_WAITING and WRITERS_WAITING. Readers sleep on `state` only with
//!   READERS_WAITING set; writers sleep on `writer_seq` only after setting WRITERS_WAITING and
//!   re-reading the state. New readers do not enter while a writer waits (no writer
//!   starvation), so a thread must never take S on a latch it already holds in S (the mtr memo
//!   guarantees that for pages: mtr I3).
//! - F5 (`RwLock::read_recursive`): a reader that enters past waiting writers, waiting only
//!   while a writer holds the latch. For a reader a waiting writer may be waiting for (a
//!   transaction taking a table's metadata lock again while another transaction, holding it
//!   and blocking the DDL, waits for one of its row locks).
//! - F3 (RawRwLatch wake-up): the thread that leaves the latch free with waiters clears a
//!   waiting bit before it wakes its sleepers: one writer first; the readers if no writer was
//!   asleep. A woken writer sets WRITERS_WAITING again when it locks, as other writers may
//!   still sleep; at its unlock they are woken in turn.
//! - F4 (Condvar): `wait` counts itself among the sleepers and reads the sequence number under
//!   the mutex, then sleeps only while the number is unchanged; a notify bumps the number and
//!   calls the kernel only if someone sleeps. A notify after a state change made under the
//!   mutex is therefore never lost. Wake-ups may be spurious: every caller re-checks its
//!   condition in a loop.
//!
//! LATCH ORDER
//! None of their own: a thread blocks in these primitives holding only what its caller holds.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How many times a waiter re-reads a lock word (with a pause hint) before it sleeps.
const SPINS: u32 = 100;

/// Sleeps while `word` holds `expected`, at most `timeout`. May return early or spuriously.
#[cfg(target_os = "linux")]
fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word outlives the call; FUTEX_WAIT only reads it. EINTR, EAGAIN (the word
    // changed) and ETIMEDOUT all mean "look again", which every caller does.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            tsp,
        );
    }
}

/// Wakes up to `n` threads sleeping on `word`; true if it woke any.
#[cfg(target_os = "linux")]
fn wake(word: &AtomicU32, n: i32) -> bool {
    // SAFETY: FUTEX_WAKE does not touch the word's memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        ) > 0
    }
}

/// Without a futex a sleeper polls: correct (every caller re-checks), only slower.
#[cfg(not(target_os = "linux"))]
fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    if word.load(Ordering::Relaxed) == expected {
        std::thread::sleep(timeout.map_or(Duration::from_micros(50), |t| {
            t.min(Duration::from_micros(50))
        }));
    }
}

#[cfg(not(target_os = "linux"))]
fn wake(_word: &AtomicU32, _n: i32) -> bool {
    false
}

/// Re-reads `word` until `done` holds or the spin budget is spent; returns the last value.
#[inline]
fn spin_until(word: &AtomicU32, done: impl Fn(u32) -> bool) -> u32 {
    let mut left = SPINS;
    loop {
        let s = word.load(Ordering::Relaxed);
        if done(s) || left == 0 {
            return s;
        }
        std::hint::spin_loop();
        left -= 1;
    }
}

const FREE: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

/// A mutex word (F1).
pub struct RawMutex {
    word: AtomicU32,
}

impl RawMutex {
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut s = spin_until(&self.word, |s| s != LOCKED);
        if s == FREE {
            match self
                .word
                .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
        loop {
            if s != CONTENDED && self.word.swap(CONTENDED, Ordering::Acquire) == FREE {
                return;
            }
            wait(&self.word, CONTENDED, None);
            s = spin_until(&self.word, |s| s != LOCKED);
        }
    }
}

// SAFETY: lock/try_lock give exclusive ownership until unlock (F1).
unsafe impl lock_api::RawMutex for RawMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawMutex = RawMutex {
        word: AtomicU32::new(FREE),
    };
    type GuardMarker = lock_api::GuardSend;

    #[inline]
    fn lock(&self) {
        if self
            .word
            .compare_exchange_weak(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    #[inline]
    fn try_lock(&self) -> bool {
        self.word
            .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    unsafe fn unlock(&self) {
        if self.word.swap(FREE, Ordering::Release) == CONTENDED {
            wake(&self.word, 1);
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) != FREE
    }
}

const READ: u32 = 1;
const MASK: u32 = (1 << 30) - 1;
const WRITE_LOCKED: u32 = MASK;
const MAX_READERS: u32 = MASK - 1;
const READERS_WAITING: u32 = 1 << 30;
const WRITERS_WAITING: u32 = 1 << 31;

fn unlocked(s: u32) -> bool {
    s & MASK == 0
}
fn write_locked(s: u32) -> bool {
    s & MASK == WRITE_LOCKED
}
fn readers_waiting(s: u32) -> bool {
    s & READERS_WAITING != 0
}
fn writers_waiting(s: u32) -> bool {
    s & WRITERS_WAITING != 0
}
fn read_lockable(s: u32) -> bool {
    s & MASK < MAX_READERS && s & (READERS_WAITING | WRITERS_WAITING) == 0
}

/// A reader/writer latch (F2, F3).
pub struct RawRwLatch {
    state: AtomicU32,
    /// Bumped on every writer wake-up; writers sleep on it.
    writer_seq: AtomicU32,
}

impl RawRwLatch {
    pub const fn new() -> Self {
        RawRwLatch {
            state: AtomicU32::new(0),
            writer_seq: AtomicU32::new(0),
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_shared_slow(&self) {
        let spin = |s| !write_locked(s) || s & (READERS_WAITING | WRITERS_WAITING) != 0;
        let mut s = spin_until(&self.state, spin);
        loop {
            assert!(s & MASK != MAX_READERS, "page latch reader count overflow");
            // Not `then_some`: the sum must not be formed for a state that cannot take it.
            let locked = if read_lockable(s) {
                Some(s + READ)
            } else {
                None
            };
            match self.lock_or_mark(s, locked, READERS_WAITING) {
                Ok(None) => return,
                Ok(Some(marked)) => {
                    wait(&self.state, marked, None);
                    s = spin_until(&self.state, spin);
                }
                Err(now) => s = now,
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_exclusive_slow(&self) {
        let spin = |s| unlocked(s) || writers_waiting(s);
        let mut s = spin_until(&self.state, spin);
        let mut keep = 0;
        loop {
            let locked = unlocked(s).then_some(s | WRITE_LOCKED | keep);
            match self.lock_or_mark(s, locked, WRITERS_WAITING) {
                Ok(None) => return,
                Ok(Some(_)) => {}
                Err(now) => {
                    s = now;
                    continue;
                }
            }
            // Other writers may sleep too: whoever locks after a wake-up keeps the bit (F3).
            keep = WRITERS_WAITING;
            let seq = self.writer_seq.load(Ordering::Acquire);
            s = self.state.load(Ordering::Relaxed);
            if unlocked(s) || !writers_waiting(s) {
                continue;
            }
            wait(&self.writer_seq, seq, None);
            s = spin_until(&self.state, spin);
        }
    }

    /// One step of a slow path from state `s`: take the latch (state `locked`) if it can be
    /// taken, else make sure the waiting `bit` is set. Ok(None): taken; Ok(Some(state)): the
    /// bit is set in `state` and the caller may sleep; Err(now): the state moved, look again.
    fn lock_or_mark(&self, s: u32, locked: Option<u32>, bit: u32) -> Result<Option<u32>, u32> {
        if let Some(locked) = locked {
            return self
                .state
                .compare_exchange_weak(s, locked, Ordering::Acquire, Ordering::Relaxed)
                .map(|_| None);
        }
        if s & bit == 0 {
            self.state
                .compare_exchange(s, s | bit, Ordering::Relaxed, Ordering::Relaxed)?;
        }
        Ok(Some(s | bit))
    }

    /// Moves the state to `next(state)` unless that is None; true if it did.
    #[inline]
    fn try_to(&self, next: impl FnMut(u32) -> Option<u32>) -> bool {
        self.state
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, next)
            .is_ok()
    }

    /// Wakes one sleeping writer; true if there was one.
    fn wake_writer(&self) -> bool {
        self.writer_seq.fetch_add(1, Ordering::Release);
        wake(&self.writer_seq, 1)
    }

    /// The latch was left free with waiters (F3).
    #[cold]
    fn wake_waiters(&self, mut s: u32) {
        if s == WRITERS_WAITING {
            match self
                .state
                .compare_exchange(s, 0, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.wake_writer();
                    return;
                }
                Err(now) => s = now,
            }
        }
        if s == READERS_WAITING | WRITERS_WAITING {
            if self
                .state
                .compare_exchange(s, READERS_WAITING, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                // Locked meanwhile: its holder wakes the waiters when it leaves.
                return;
            }
            if self.wake_writer() {
                return;
            }
            s = READERS_WAITING;
        }
        if s == READERS_WAITING
            && self
                .state
                .compare_exchange(s, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            wake(&self.state, i32::MAX);
        }
    }
}

impl Default for RawRwLatch {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: exclusive holders exclude everyone, shared holders exclude exclusive ones (F2).
unsafe impl lock_api::RawRwLock for RawRwLatch {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawRwLatch = RawRwLatch::new();
    type GuardMarker = lock_api::GuardSend;

    #[inline]
    fn lock_shared(&self) {
        let s = self.state.load(Ordering::Relaxed);
        if !read_lockable(s)
            || self
                .state
                .compare_exchange_weak(s, s + READ, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            self.lock_shared_slow();
        }
    }

    #[inline]
    fn try_lock_shared(&self) -> bool {
        // Not `then_some`: the sum must not be formed for a state that cannot take it (all
        // bits set would overflow).
        self.try_to(|s| {
            if read_lockable(s) {
                Some(s + READ)
            } else {
                None
            }
        })
    }

    #[inline]
    unsafe fn unlock_shared(&self) {
        let s = self.state.fetch_sub(READ, Ordering::Release) - READ;
        if unlocked(s) && writers_waiting(s) {
            self.wake_waiters(s);
        }
    }

    #[inline]
    fn lock_exclusive(&self) {
        if self
            .state
            .compare_exchange_weak(0, WRITE_LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_exclusive_slow();
        }
    }

    #[inline]
    fn try_lock_exclusive(&self) -> bool {
        self.try_to(|s| unlocked(s).then_some(s | WRITE_LOCKED))
    }

    #[inline]
    unsafe fn unlock_exclusive(&self) {
        let s = self.state.fetch_sub(WRITE_LOCKED, Ordering::Release) - WRITE_LOCKED;
        if s & (READERS_WAITING | WRITERS_WAITING) != 0 {
            self.wake_waiters(s);
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        !unlocked(self.state.load(Ordering::Relaxed))
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        write_locked(self.state.load(Ordering::Relaxed))
    }
}

// SAFETY: a shared holder entering while no exclusive holder has the latch, as `lock_shared`
// does; only a waiting writer is passed (F5).
unsafe impl lock_api::RawRwLockRecursive for RawRwLatch {
    fn lock_shared_recursive(&self) {
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if !write_locked(s) {
                assert!(s & MASK != MAX_READERS, "latch reader count overflow");
                if self
                    .state
                    .compare_exchange_weak(s, s + READ, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if s & READERS_WAITING == 0
                && self
                    .state
                    .compare_exchange(s, s | READERS_WAITING, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            wait(&self.state, s | READERS_WAITING, None);
        }
    }

    fn try_lock_shared_recursive(&self) -> bool {
        self.try_to(|s| {
            if !write_locked(s) && s & MASK < MAX_READERS {
                Some(s + READ)
            } else {
                None
            }
        })
    }
}

// SAFETY: the exclusive holder becomes one shared holder without the latch ever being free.
unsafe impl lock_api::RawRwLockDowngrade for RawRwLatch {
    unsafe fn downgrade(&self) {
        let s =
            self.state.fetch_sub(WRITE_LOCKED - READ, Ordering::Release) - (WRITE_LOCKED - READ);
        // Sleeping readers may enter beside us unless a writer waits (then it goes first).
        if readers_waiting(s)
            && !writers_waiting(s)
            && readers_waiting(self.state.fetch_and(!READERS_WAITING, Ordering::Relaxed))
        {
            wake(&self.state, i32::MAX);
        }
    }
}

pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;
pub type RwLock<T> = lock_api::RwLock<RawRwLatch, T>;
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLatch, T>;
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLatch, T>;

/// A condition variable for `Mutex` (F4).
#[derive(Default)]
pub struct Condvar {
    seq: AtomicU32,
    /// Threads in `wait`: a notify with none skips the futex call (most commits wake the
    /// purge and lock waiters' condition variables with nobody asleep on them).
    sleepers: AtomicU32,
}

impl Condvar {
    pub const fn new() -> Self {
        Condvar {
            seq: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        }
    }

    /// Releases the mutex, sleeps until notified (or spuriously), takes the mutex again.
    pub fn wait<T>(&self, g: &mut MutexGuard<'_, T>) {
        self.sleep(g, None);
    }

    /// As `wait`, for at most `timeout`; true if the time ran out.
    pub fn wait_for<T>(&self, g: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        let start = Instant::now();
        self.sleep(g, Some(timeout));
        start.elapsed() >= timeout
    }

    /// F4: the sleeper is counted and reads the sequence number while it holds the mutex, so
    /// a notifier that changed the state under the mutex afterwards sees the count and a
    /// changed number.
    fn sleep<T>(&self, g: &mut MutexGuard<'_, T>, timeout: Option<Duration>) {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let seq = self.seq.load(Ordering::SeqCst);
        MutexGuard::unlocked(g, || wait(&self.seq, seq, timeout));
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn notify_one(&self) {
        self.notify(1);
    }

    pub fn notify_all(&self) {
        self.notify(i32::MAX);
    }

    fn notify(&self, n: i32) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            wake(&self.seq, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_api::{RawRwLock as _, RawRwLockDowngrade as _};
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    /// Many threads increment a counter under the mutex: no increment is lost.
    #[test]
    fn mutex_excludes() {
        let m = Arc::new(Mutex::new(0u64));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock(), 160_000);
    }

    /// Writers keep two words equal under X; readers under S never see them differ, and both
    /// make progress.
    #[test]
    fn rw_latch_excludes_writers_from_readers() {
        struct Pair {
            latch: RawRwLatch,
            a: AtomicU64,
            b: AtomicU64,
        }
        let p = Arc::new(Pair {
            latch: RawRwLatch::new(),
            a: AtomicU64::new(0),
            b: AtomicU64::new(0),
        });
        let reads = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let (p, reads) = (p.clone(), reads.clone());
                std::thread::spawn(move || {
                    for n in 0..5_000u64 {
                        if i % 2 == 0 {
                            p.latch.lock_exclusive();
                            let v = p.a.load(Ordering::Relaxed) + 1;
                            p.a.store(v, Ordering::Relaxed);
                            std::hint::spin_loop();
                            p.b.store(v, Ordering::Relaxed);
                            if n % 3 == 0 {
                                // SAFETY: held in X just above.
                                unsafe { p.latch.downgrade() };
                                assert_eq!(p.a.load(Ordering::Relaxed), v);
                                // SAFETY: downgraded to S.
                                unsafe { p.latch.unlock_shared() };
                            } else {
                                // SAFETY: held in X.
                                unsafe { p.latch.unlock_exclusive() };
                            }
                        } else {
                            p.latch.lock_shared();
                            let (a, b) = (p.a.load(Ordering::Relaxed), p.b.load(Ordering::Relaxed));
                            // SAFETY: held in S.
                            unsafe { p.latch.unlock_shared() };
                            assert_eq!(a, b, "a reader saw a half-done write");
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(p.a.load(Ordering::Relaxed), 4 * 5_000);
        assert_eq!(reads.load(Ordering::Relaxed), 4 * 5_000);
        assert!(!p.latch.is_locked());
    }

    /// A writer waiting behind a reader blocks new readers (F2) and gets the latch when the
    /// reader leaves; the blocked reader enters after the writer.
    #[test]
    fn waiting_writer_goes_before_new_readers() {
        let l = Arc::new(RawRwLatch::new());
        let order = Arc::new(Mutex::new(Vec::new()));
        l.lock_shared();
        let w = {
            let (l, order) = (l.clone(), order.clone());
            std::thread::spawn(move || {
                l.lock_exclusive();
                order.lock().push("writer");
                // SAFETY: held in X.
                unsafe { l.unlock_exclusive() };
            })
        };
        while l.state.load(Ordering::Relaxed) & WRITERS_WAITING == 0 {
            std::thread::yield_now();
        }
        assert!(
            !l.try_lock_shared(),
            "a reader entered past a waiting writer"
        );
        let r = {
            let (l, order) = (l.clone(), order.clone());
            std::thread::spawn(move || {
                l.lock_shared();
                order.lock().push("reader");
                // SAFETY: held in S.
                unsafe { l.unlock_shared() };
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        // SAFETY: held in S since the start.
        unsafe { l.unlock_shared() };
        w.join().unwrap();
        r.join().unwrap();
        assert_eq!(*order.lock(), vec!["writer", "reader"]);
        assert_eq!(l.state.load(Ordering::Relaxed), 0);
    }

    /// The tries fail, without arithmetic overflow, on a latch held in X with both kinds of
    /// waiters (every state bit set).
    #[test]
    fn tries_fail_on_a_latch_with_every_bit_set() {
        let l = RawRwLatch::new();
        l.lock_exclusive();
        l.state
            .fetch_or(READERS_WAITING | WRITERS_WAITING, Ordering::Relaxed);
        assert_eq!(l.state.load(Ordering::Relaxed), u32::MAX);
        assert!(!l.try_lock_shared());
        assert!(!l.try_lock_exclusive());
        assert!(l.is_locked_exclusive());
        l.state
            .fetch_and(!(READERS_WAITING | WRITERS_WAITING), Ordering::Relaxed);
        // SAFETY: held in X.
        unsafe { l.unlock_exclusive() };
        assert!(l.try_lock_shared());
    }

    /// Producers push under the mutex and notify after unlocking, consumers wait while the
    /// queue is empty: no wake-up is lost (a lost one would leave a consumer asleep with
    /// items queued until its timeout, counted here), and notifies with nobody asleep skip
    /// the kernel.
    #[test]
    fn condvar_loses_no_wakeup() {
        const ITEMS: u64 = 20_000;
        struct Q {
            m: Mutex<(Vec<u64>, u64)>,
            cv: Condvar,
            timeouts: AtomicU64,
        }
        let q = Arc::new(Q {
            m: Mutex::new((Vec::new(), 0)),
            cv: Condvar::new(),
            timeouts: AtomicU64::new(0),
        });
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let q = q.clone();
                std::thread::spawn(move || loop {
                    let mut g = q.m.lock();
                    while g.0.is_empty() && g.1 < ITEMS {
                        if q.cv.wait_for(&mut g, Duration::from_secs(2)) {
                            q.timeouts.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    if g.1 == ITEMS {
                        return;
                    }
                    g.0.pop();
                    g.1 += 1;
                    let last = g.1 == ITEMS;
                    drop(g);
                    if last {
                        q.cv.notify_all();
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..3)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..ITEMS / 4 {
                        q.m.lock().0.push(i);
                        q.cv.notify_one();
                    }
                    if p == 0 {
                        for i in 0..ITEMS / 4 {
                            q.m.lock().0.push(i);
                            q.cv.notify_one();
                        }
                    }
                })
            })
            .collect();
        for h in producers.into_iter().chain(consumers) {
            h.join().unwrap();
        }
        assert_eq!(q.m.lock().1, ITEMS);
        assert_eq!(
            q.timeouts.load(Ordering::Relaxed),
            0,
            "a consumer slept through an item"
        );
        assert_eq!(q.cv.sleepers.load(Ordering::Relaxed), 0);
    }

    /// A notify after the waiter checked its condition is not lost (F4); a timed wait times out.
    #[test]
    fn condvar_wakes_and_times_out() {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let h = {
            let pair = pair.clone();
            std::thread::spawn(move || {
                let (m, cv) = &*pair;
                let mut g = m.lock();
                while !*g {
                    cv.wait(&mut g);
                }
            })
        };
        std::thread::sleep(Duration::from_millis(10));
        *pair.0.lock() = true;
        pair.1.notify_all();
        h.join().unwrap();
        let (m, cv) = &*pair;
        let mut g = m.lock();
        let t = Instant::now();
        assert!(cv.wait_for(&mut g, Duration::from_millis(30)));
        assert!(t.elapsed() >= Duration::from_millis(30));
    }
}
