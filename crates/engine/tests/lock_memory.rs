//! Row lock memory and lock-system throughput (issue #3, "shared/exclusive record locks kept
//! compactly"). Both tests are `#[ignore]`d measurements; run them in release mode:
//!
//! ```sh
//! cargo test --release -p innoxide-engine --test lock_memory -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - `row_lock_memory`: one REPEATABLE READ transaction reads every row of a table with
//!   `SELECT ... FOR UPDATE` (a locking scan taking a next-key X lock per record) and holds the
//!   locks; the bytes the lock system holds are the live heap bytes the scan left allocated
//!   (a counting global allocator; the scan's own buffers are freed by then), divided by the
//!   rows, and also the bytes the commit frees (less: hash maps keep their capacity). Two key layouts: dense (ids 0, 1, 2, ...)
//!   and sparse (ids 1000 apart). `LOCK_MEM_ROWS` sets the row count (default 1,000,000).
//! - `lock_sys_throughput`: 4 threads, each running transactions that take 64 record locks on
//!   random keys of 1,000,000 (a quarter of them X) with `try_lock`, then release them all;
//!   prints requests per second.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use innoxide_engine::lock::{Kind, LockKey, LockSys, Mode, Outcome};
use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, Isolation, KeyBound, LockRead, TableDef, Value,
};

/// Live heap bytes of the process.
static LIVE: AtomicI64 = AtomicI64::new(0);

struct Counting;

// SAFETY: forwards to the system allocator and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as i64 - l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> i64 {
    LIVE.load(Ordering::Relaxed)
}

/// Locks every row of a table of `n` rows with ids `i * step` FOR UPDATE; returns (bytes per
/// row the scan left allocated, bytes per row freed by the commit, seconds for the locking
/// scan).
fn measure(e: &Engine, name: &str, n: i64, step: i64) -> (f64, f64, f64) {
    let t = e
        .create_table(TableDef::new(
            name,
            vec![
                ColumnDef::new("id", ColumnKind::BIGINT),
                ColumnDef::new("v", ColumnKind::INT),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut i = 0;
    while i < n {
        let mut w = e.begin();
        for id in i..(i + 10_000).min(n) {
            w.insert(&t, &[Value::Int(id * step), Value::Int(id)])
                .unwrap();
        }
        w.commit().unwrap();
        i += 10_000;
    }
    let locks = &e.inner().trx.locks;
    let mut x = e.begin();
    x.set_isolation(Isolation::RepeatableRead);
    // Take the transaction's id and table lock first, so only row locks are counted.
    x.get_locking(&t, &[Value::Int(-1)], LockRead::Exclusive)
        .unwrap();
    let before_locks = locks.n_locks();
    let before = live();
    let start = Instant::now();
    let rows = x
        .scan_locking(
            &t,
            None,
            KeyBound::Unbounded,
            KeyBound::Unbounded,
            true,
            LockRead::Exclusive,
            false,
            &mut |_| false,
        )
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert!(rows.is_empty());
    // One next-key lock per record, plus the supremum.
    assert!(
        locks.n_locks() >= before_locks + n as usize,
        "{} locks for {n} rows",
        locks.n_locks()
    );
    let held = live();
    x.commit().unwrap();
    let freed = held - live();
    assert_eq!(locks.n_locks(), 0, "commit releases every lock");
    e.drop_table(name).unwrap();
    let per_row = |b: i64| b as f64 / n as f64;
    (per_row(held - before), per_row(freed), secs)
}

#[test]
#[ignore = "measurement; run in release with --ignored --nocapture"]
fn row_lock_memory() {
    let n: i64 = std::env::var("LOCK_MEM_ROWS")
        .ok()
        .map_or(1_000_000, |s| s.parse().expect("LOCK_MEM_ROWS"));
    for (layout, step) in [("dense", 1), ("sparse", 1000)] {
        // A fresh engine each time: the lock table's hash maps keep their capacity.
        let dir = tempfile::tempdir().unwrap();
        let mut c = innoxide_testkit::small_config(dir.path(), 64);
        c.page_size = 16384;
        c.buffer_pool_size = 512 << 20;
        c.log_file_size = 256 << 20;
        let e = Engine::open(c).unwrap();
        let (held, freed, secs) = measure(&e, &format!("test/{layout}"), n, step);
        eprintln!(
            "row lock memory: {layout:6} {n} rows locked FOR UPDATE: {held:.2} bytes/row \
             allocated by the scan, {freed:.2} bytes/row freed by the commit; scan {secs:.2} s \
             ({:.0} rows/s)",
            n as f64 / secs
        );
        assert!(held > 0.0 && freed > 0.0);
        e.shutdown().unwrap();
    }
}

fn key(i: u64) -> LockKey {
    // The encoding of one non-NULL BIGINT field (row::lock::key_of).
    let mut k = vec![1, 0, 0, 0, 8];
    k.extend_from_slice(&(i ^ (1 << 63)).to_be_bytes());
    LockKey {
        table: 1,
        index: 1,
        key: k,
    }
}

#[test]
#[ignore = "measurement; run in release with --ignored --nocapture"]
fn lock_sys_throughput() {
    let sys = Arc::new(LockSys::new());
    let threads = 4;
    let trxs_per_thread = 20_000u64;
    let per_trx = 64;
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|th| {
            let sys = sys.clone();
            std::thread::spawn(move || {
                let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ th;
                let mut granted = 0u64;
                for i in 0..trxs_per_thread {
                    let t = sys.register(1 + th * trxs_per_thread + i);
                    for j in 0..per_trx {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let mode = if j % 4 == 0 { Mode::X } else { Mode::S };
                        let kind = if j % 2 == 0 {
                            Kind::NextKey
                        } else {
                            Kind::RecNotGap
                        };
                        if sys.try_lock(&t, &key(seed % 1_000_000), mode, kind) == Outcome::Granted
                        {
                            granted += 1;
                        }
                    }
                    sys.release_all(&t);
                }
                granted
            })
        })
        .collect();
    let granted: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    let secs = start.elapsed().as_secs_f64();
    let reqs = threads * trxs_per_thread * per_trx;
    eprintln!(
        "lock sys throughput: {threads} threads, {reqs} try_lock requests + releases in \
         {secs:.2} s: {:.0} requests/s ({granted} granted)",
        reqs as f64 / secs
    );
    assert!(granted > reqs / 2);
    assert_eq!(sys.n_locks(), 0);
}
