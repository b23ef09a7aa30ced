//! Read-ahead: pages read before a thread needs them, by the `innodb_read_io_threads` I/O
//! threads. (InnoDB: buf0rea's buf_read_ahead_linear and buf_read_ahead_random, and the read
//! threads of its simulated AIO.)
//!
//! OVERVIEW
//! `Inner::fix` reports the first access to a page since it came into the pool
//! (`Inner::read_ahead_after_access`). The unit is an area: the extent, at most
//! 2^ceil(log2(pool pages / 32)) pages (64 at 16 KiB pages in pools of 32 MiB and more).
//! - Linear (innodb_read_ahead_threshold, 0 turns it off as in InnoDB's code): the page is the
//!   last (first) of its area and the area's pages were first accessed in ascending
//!   (descending) order, with at most 64 - threshold pages out of order or never accessed; if
//!   the page's FIL_PAGE_PREV (NEXT) is the page before (after) it, the area its NEXT (PREV)
//!   points into is requested: the leaf chain goes on there.
//! - Random (innodb_random_read_ahead): after a thread read a page itself, if 5 + area/8 pages
//!   of its area (13 of 64) are in the pool, accessed and recently used, the area is requested.
//!
//! The accessing thread installs the pages of the area that are not in the pool into free
//! frames (X-latched, READING, as InnoDB's buf_page_init_for_read does in the caller) and queues
//! them as one request; an I/O thread (`run`) reads each run of consecutive pages with one read
//! and releases them. A thread that needs one of those pages meanwhile finds it in the pool and
//! waits for its read. The system tablespace (dictionary, undo logs, the doublewrite area) is
//! never read ahead.
//!
//! INVARIANTS
//! - RA1: asking for read-ahead never waits: at most `cap` requests are pending (reserved
//!   before any page is installed, released when the read ends), the queue mutex is held for a
//!   push, and a request beyond them, or made when no I/O thread runs, is dropped.
//! - RA2: a page is read ahead only into a frame of its instance's free list (`take_free`):
//!   read-ahead never evicts or flushes a page; with no free frame the rest of the area is
//!   left.
//! - RA3: a page in the pool, or being read by anyone (installed, READING), is skipped.
//! - RA4: every frame of a queued request is made valid or taken out of the pool by an I/O
//!   thread; after `stop` the I/O threads empty the queue before they end, and no request is
//!   queued once it is stopped (both under the queue mutex), so no page stays READING.
//! - RA5: a page read ahead enters the LRU at the head of the old sublist, as every page read,
//!   and is marked read-ahead until its first access; evicted before that it counts in
//!   Innodb_buffer_pool_read_ahead_evicted.
//! - RA6: a page that fails verification, or whose read fails, leaves the pool again with no
//!   message: the thread that needs it reads it and reports the damage.
//! - RA7: a page installed after a DROP TABLE evicted its tablespace's pages stays clean and is
//!   never looked up (space ids are not reused) until the LRU evicts it.
//!
//! LATCHING: the queue mutex is a leaf. Installing takes the LRU mutex and hash partition
//! locks with page latches held, as any read does, and takes each new frame's latch with a
//! try that cannot fail (a free frame). The X latches of a request's frames pass from the
//! installing thread to the I/O thread, which releases them after the read and never waits for
//! a page latch.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::buffer_pool::{FrameIdx, Install, LatchMode};
use crate::engine::Inner;
use crate::io_queue::IoQueue;
use crate::page;
use crate::tablespace::fsp::extent_pages;
use crate::types::{PageId, PageNo, SpaceId, SYSTEM_SPACE};

/// Which algorithm asked for a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Linear,
    Random,
}

/// Pages of one space installed for read-ahead (X-latched, pinned, READING), in page order.
pub struct Request {
    space: SpaceId,
    kind: Kind,
    pages: Vec<(PageNo, FrameIdx)>,
}

/// The request queue and the I/O threads' state.
pub struct ReadAhead {
    /// The requests and the I/O threads (RA4 is the queue's Q1 and Q2).
    io: IoQueue<Request>,
    /// Requests reserved and not yet read (RA1), and their bound.
    pending: AtomicUsize,
    cap: usize,
}

impl std::ops::Deref for ReadAhead {
    type Target = IoQueue<Request>;
    fn deref(&self) -> &IoQueue<Request> {
        &self.io
    }
}

impl ReadAhead {
    /// State for `threads` I/O threads (innodb_read_io_threads); nothing runs until `start`.
    pub fn new(threads: usize) -> Self {
        ReadAhead {
            io: IoQueue::new(threads),
            pending: AtomicUsize::new(0),
            cap: 2 * threads.max(1),
        }
    }

    /// Reserves room for one request (RA1).
    fn reserve(&self) -> bool {
        if self.pending.fetch_add(1, Ordering::AcqRel) < self.cap {
            return true;
        }
        self.release();
        false
    }

    fn release(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Pages in a read-ahead area: the extent, at most 2^ceil(log2(pool pages / 32)).
pub fn area(page_size: usize, pool_pages: usize) -> u32 {
    let cap = u32::try_from(pool_pages / 32)
        .unwrap_or(u32::MAX)
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(u32::MAX);
    extent_pages(page_size).min(cap)
}

/// Linear read-ahead's decision at the first access to `page` (InnoDB's
/// buf_read_ahead_linear): `firsts[i]` is the first-access order of page `low + i` of its area
/// (None: not in the pool or never accessed), `prev`/`next` the page's FIL_PAGE_PREV/NEXT.
/// Returns the first page of the area to read.
pub fn linear_target(
    page: PageNo,
    area: u32,
    threshold: u32,
    firsts: &[Option<u64>],
    prev: PageNo,
    next: PageNo,
    file_pages: u32,
) -> Option<PageNo> {
    if threshold == 0 || area < 2 || firsts.len() != area as usize {
        return None;
    }
    let low = page - page % area;
    let ascending = page == low + area - 1;
    if page != low && !ascending {
        return None;
    }
    // Pages never accessed or accessed out of order that are tolerated.
    let tolerated = (64 - threshold.min(64)).min(area);
    let mut failed = 0;
    let mut pred: Option<u64> = None;
    for &first in firsts {
        let in_order = match (first, pred) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(a), Some(b)) => a == b || (a > b) == ascending,
        };
        if !in_order {
            failed += 1;
            if failed > tolerated {
                return None;
            }
        }
        if first.is_some() {
            pred = first;
        }
    }
    let to = if ascending {
        (prev == page.wrapping_sub(1)).then_some(next)?
    } else {
        (next == page.wrapping_add(1)).then_some(prev)?
    };
    let to_low = to - to % area;
    let border = to == to_low || to == to_low + (area - 1);
    let whole = u64::from(to_low) + u64::from(area) <= u64::from(file_pages);
    (border && whole).then_some(to_low)
}

/// Random read-ahead's decision: `recent` pages of an area of `area` pages were used recently.
pub fn random_due(recent: usize, area: u32) -> bool {
    recent as u64 >= 5 + u64::from(area) / 8
}

impl Inner {
    /// Called by `fix` at the first access to a page since it came into the pool, with the
    /// frame pinned and latched by the caller; `read`: the caller has just read the page
    /// itself. Starts the read-ahead the access calls for.
    pub(crate) fn read_ahead_after_access(&self, id: PageId, f: FrameIdx, read: bool) {
        if !self.read_ahead.is_running() || id.space == SYSTEM_SPACE {
            return;
        }
        let area = area(self.bp.page_size(), self.bp.n_frames());
        if area < 2 {
            return;
        }
        let low = id.page - id.page % area;
        let high = low.saturating_add(area);
        let threshold = self.tun.read_ahead_threshold.load(Ordering::Relaxed);
        if threshold > 0 && (id.page == low || id.page == high - 1) {
            let firsts = self.bp.first_accesses(id.space, low, high);
            // SAFETY: the caller holds the frame's latch (buffer_pool I5).
            let (prev, next) = {
                let p = unsafe { self.bp.data(f) };
                (page::prev(p), page::next(p))
            };
            let file_pages = self.fil.get(id.space).map_or(0, |sp| sp.file_pages());
            if let Some(to) =
                linear_target(id.page, area, threshold, &firsts, prev, next, file_pages)
            {
                self.read_area(id.space, to, to.saturating_add(area), Kind::Linear);
            }
        }
        if read
            && self.tun.random_read_ahead.load(Ordering::Relaxed)
            && random_due(self.bp.recently_used(id.space, low, high), area)
        {
            self.read_area(id.space, low, high, Kind::Random);
        }
    }

    /// Installs the pages `low..high` of `space` that are not in the pool into free frames
    /// and queues them for an I/O thread (RA1-RA4).
    fn read_area(&self, space: SpaceId, low: PageNo, high: PageNo, kind: Kind) {
        let ra = &self.read_ahead;
        let Some(sp) = self.fil.get(space) else {
            return;
        };
        if sp.dropped.load(Ordering::Acquire) || !ra.reserve() {
            return;
        }
        let mut pages = Vec::new();
        for p in low..high.min(sp.file_pages()) {
            let id = PageId::new(space, p);
            if self.bp.contains(id) {
                continue; // RA3
            }
            let Some(f) = self.bp.take_free(self.bp.instance_of(id)) else {
                break; // RA2
            };
            if let Install::Installed = self.bp.install_read_ahead(id, f) {
                pages.push((p, f));
            }
        }
        if pages.is_empty() {
            ra.release();
            return;
        }
        if let Err(r) = ra.submit(Request { space, kind, pages }) {
            for &(_, f) in &r.pages {
                self.bp.abort_read(f);
            }
            ra.release();
        }
    }
}

/// Longest run read with one read call.
const MAX_RUN: usize = 64;

/// I/O thread `slot`: reads queued requests until the engine stops and the queue is empty.
pub fn run(inner: &Inner, slot: usize) {
    let mut buf = vec![0u8; inner.bp.page_size() * MAX_RUN];
    while let Some(r) = inner.read_ahead.next() {
        serve(inner, slot, &r, &mut buf);
        inner.read_ahead.release();
    }
}

/// Reads the pages of `r`, a run of consecutive ones at a time, and makes each valid or takes
/// it out of the pool again (RA4, RA6).
fn serve(inner: &Inner, slot: usize, r: &Request, buf: &mut [u8]) {
    let ps = inner.bp.page_size();
    let sp = inner.fil.get(r.space);
    let mut rest = &r.pages[..];
    while let Some(&(first, _)) = rest.first() {
        let n = rest
            .iter()
            .zip(first..)
            .take(MAX_RUN)
            .take_while(|((p, _), want)| p == want)
            .count();
        let (run, tail) = rest.split_at(n);
        rest = tail;
        let bytes = &mut buf[..n * ps];
        inner.read_ahead.threads[slot].store(n as u32, Ordering::Relaxed);
        let read = match &sp {
            Some(sp) if !inner.shutting_down.load(Ordering::Acquire) => {
                inner.fil.read_pages_in(sp, first, bytes).is_ok()
            }
            _ => false,
        };
        for (img, &(p, f)) in bytes.chunks_exact(ps).zip(run) {
            let id = PageId::new(r.space, p);
            if !read || page::verify(img, id).is_err() {
                inner.bp.abort_read(f);
                continue;
            }
            // SAFETY: installed X-latched for this request (buffer_pool I5).
            unsafe { inner.bp.data_mut(f) }.copy_from_slice(img);
            inner.check_page_lsn(id, img);
            inner.bp.complete_read(f);
            inner.bp.unlatch(f, LatchMode::X);
            inner.bp.unpin(f);
            match r.kind {
                Kind::Linear => inner.bp.stats.read_ahead.inc(),
                Kind::Random => inner.bp.stats.read_ahead_rnd.inc(),
            }
        }
        inner.read_ahead.threads[slot].store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use innoxide_io::{Fault, FaultKind, FaultOp, SimFs};

    use super::*;
    use crate::{Engine, EngineConfig, KeyBound};

    /// A table of about 280 leaves in key order on a simulated disk, then the engine opened
    /// again with a cold pool of 2,048 pages of 16 KiB (areas of 64), taking read-ahead
    /// requests. Returns the table's space.
    fn cold(random: bool, threshold: u32) -> (Engine, SpaceId) {
        cold_on(Arc::new(SimFs::new(3)), random, threshold)
    }

    fn cold_on(fs: Arc<SimFs>, random: bool, threshold: u32) -> (Engine, SpaceId) {
        let cfg = || {
            let mut c = EngineConfig::new("/data");
            c.buffer_pool_size = 2048 * 16384;
            c.background_threads = false;
            c.buffer_pool_load_at_startup = false;
            c.tunables.random_read_ahead = random;
            c.tunables.read_ahead_threshold = threshold;
            c
        };
        let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
        let t = crate::test_tables::kb_rows(&engine, "test/ra");
        engine.shutdown().unwrap();
        let engine = Engine::open_with(cfg(), fs).unwrap();
        engine.inner().read_ahead.start();
        (engine, t.space)
    }

    /// One I/O thread.
    fn io_thread(engine: &Engine) -> JoinHandle<()> {
        let inner = engine.inner().clone();
        std::thread::spawn(move || run(&inner, 0))
    }

    /// Accesses pages `pages` of `space` in order, as a reader would; returns the last one's
    /// (PREV, NEXT).
    fn touch(
        engine: &Engine,
        space: SpaceId,
        pages: impl IntoIterator<Item = PageNo>,
    ) -> (u32, u32) {
        let inner = engine.inner();
        let mut links = (0, 0);
        for p in pages {
            let f = inner.fix(PageId::new(space, p), LatchMode::S).unwrap();
            // SAFETY: S-latched.
            let img = unsafe { inner.bp.data(f) };
            links = (page::prev(img), page::next(img));
            inner.bp.unlatch(f, LatchMode::S);
            inner.bp.unpin(f);
        }
        links
    }

    /// Waits up to 10 s for `counter` to reach `n` (0: a moment), then a little more for
    /// anything beyond; returns its value.
    fn settle(counter: impl Fn() -> u64, n: u64) -> u64 {
        let start = Instant::now();
        while n > 0 && counter() < n && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        counter()
    }

    fn stop(engine: Engine, th: JoinHandle<()>) {
        engine.inner().read_ahead.stop();
        th.join().unwrap();
    }

    #[test]
    fn an_area_read_in_order_reads_the_next_skipping_pages_in_the_pool() {
        let (engine, space) = cold(false, 56);
        let th = io_thread(&engine);
        let inner = engine.inner().clone();
        let st = &inner.bp.stats;
        // Two pages of the next area are in the pool already.
        touch(&engine, space, [138, 139]);
        let (prev, next) = touch(&engine, space, 64..128);
        assert_eq!((prev, next), (126, 128), "the leaves are not in page order");
        assert_eq!(settle(|| st.read_ahead.get(), 62), 62);
        assert!((128..192).all(|p| inner.bp.contains(PageId::new(space, p))));
        assert_eq!(st.read_ahead_rnd.get(), 0);
        // Evicted without an access: the 62 read ahead; the accessed pages count nowhere.
        touch(&engine, space, [150]);
        let n = inner.bp.n_frames();
        inner.bp.replenish_free(0, n, u32::try_from(n).unwrap());
        assert_eq!(st.read_ahead_evicted.get(), 61);
        stop(engine, th);
    }

    #[test]
    fn stopped_io_threads_read_what_was_queued_before_they_end() {
        let (engine, space) = cold(false, 56);
        let inner = engine.inner().clone();
        // Queued (62 pages installed, READING) while no I/O thread runs yet.
        touch(&engine, space, 64..128);
        inner.read_ahead.stop();
        assert!(!inner.read_ahead.is_running());
        io_thread(&engine).join().unwrap();
        assert_eq!(inner.bp.stats.read_ahead.get(), 64);
        assert_eq!(inner.read_ahead.pending.load(Ordering::Relaxed), 0);
        // Every page is readable (none was left READING), without a read of its own.
        let reads = inner.bp.stats.reads.get();
        touch(&engine, space, 128..192);
        assert_eq!(inner.bp.stats.reads.get(), reads);
    }

    /// A full scan of the table after a cold start on a disk whose tablespace reads take 2 ms
    /// each: its time, the pages the scanning thread read, the pages read ahead.
    fn cold_scan_with_read_latency(threshold: u32) -> (Duration, u64, u64) {
        let fs = Arc::new(SimFs::new(3));
        let (engine, _) = cold_on(fs.clone(), false, threshold);
        let th = io_thread(&engine);
        let latency = FaultKind::Latency(Duration::from_millis(2));
        fs.inject(
            Fault::new(FaultOp::Read, 1, latency)
                .persistent()
                .on_path(".ibd"),
        );
        let st = &engine.inner().bp.stats;
        let reads = st.reads.get();
        let t = engine.table("test/ra").unwrap();
        let mut trx = engine.begin();
        let start = Instant::now();
        let rows = trx
            .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
            .unwrap()
            .count();
        let took = start.elapsed();
        assert_eq!(rows, 4000);
        trx.commit().unwrap();
        let out = (took, st.reads.get() - reads, st.read_ahead.get());
        stop(engine, th);
        out
    }

    #[test]
    fn with_read_latency_read_ahead_shortens_a_cold_scan() {
        let (off, off_reads, _) = cold_scan_with_read_latency(0);
        let (on, on_reads, ahead) = cold_scan_with_read_latency(56);
        eprintln!(
            "cold scan, 2 ms a read: threshold 0 {off:?} ({off_reads} pages read by the scan), \
             56 {on:?} ({on_reads} by the scan, {ahead} read ahead)"
        );
        assert!(off_reads > 250, "{off_reads}");
        assert!(ahead > off_reads / 2, "{ahead} of {off_reads} read ahead");
        // The scan reads the first extent itself; the CPU of a debug build adds to both.
        assert!(on * 3 < off * 2, "with read-ahead {on:?}, without {off:?}");
    }

    #[test]
    fn threshold_0_turns_linear_read_ahead_off() {
        let (engine, space) = cold(false, 0);
        let th = io_thread(&engine);
        let (prev, next) = touch(&engine, space, 64..128);
        assert_eq!((prev, next), (126, 128));
        assert_eq!(settle(|| engine.inner().bp.stats.read_ahead.get(), 0), 0);
        stop(engine, th);
    }

    #[test]
    fn random_read_ahead_reads_an_area_once_13_of_its_pages_were_used() {
        let (engine, space) = cold(true, 0);
        let th = io_thread(&engine);
        let st = &engine.inner().bp.stats;
        touch(&engine, space, 128..140);
        assert_eq!(settle(|| st.read_ahead_rnd.get(), 0), 0, "12 pages read");
        touch(&engine, space, [170]);
        assert_eq!(settle(|| st.read_ahead_rnd.get(), 51), 51);
        assert_eq!(st.read_ahead.get(), 0);
        stop(engine, th);
    }

    /// An area of 64 pages at 128..192 whose pages were first accessed in the order given.
    fn order(pages: impl IntoIterator<Item = PageNo>) -> Vec<Option<u64>> {
        let mut v = vec![None; 64];
        for (i, p) in pages.into_iter().enumerate() {
            v[(p - 128) as usize] = Some(i as u64 + 1);
        }
        v
    }

    #[test]
    fn areas_are_the_extent_cut_for_small_pools() {
        assert_eq!(area(16384, 8192), 64);
        assert_eq!(area(4096, 32768), 256);
        // 16 MiB of 16 KiB pages: 1,024 / 32 = 32.
        assert_eq!(area(16384, 1024), 32);
        assert_eq!(area(16384, 1000), 32);
        assert_eq!(area(16384, 10), 1);
    }

    #[test]
    fn an_ascending_scan_reads_the_area_the_last_page_points_into() {
        let seq = order(128..192);
        assert_eq!(linear_target(191, 64, 56, &seq, 190, 192, 1000), Some(192));
        // The leaf chain may go on elsewhere: the area holding NEXT is read.
        assert_eq!(linear_target(191, 64, 56, &seq, 190, 320, 1000), Some(320));
        // NEXT must be a border page of its area, and the area inside the file.
        assert_eq!(linear_target(191, 64, 56, &seq, 190, 330, 1000), None);
        assert_eq!(linear_target(191, 64, 56, &seq, 190, 192, 250), None);
        assert_eq!(linear_target(191, 64, 56, &seq, 190, u32::MAX, 1000), None);
        // PREV must be the page before: the chain runs through the area in page order.
        assert_eq!(linear_target(191, 64, 56, &seq, 17, 192, 1000), None);
        // Only border pages decide.
        assert_eq!(linear_target(150, 64, 56, &seq, 149, 151, 1000), None);
    }

    #[test]
    fn a_descending_scan_reads_the_area_before() {
        let seq = order((128..192).rev());
        assert_eq!(linear_target(128, 64, 56, &seq, 127, 129, 1000), Some(64));
        // An ascending history does not count at the first page.
        let up = order(128..192);
        assert_eq!(linear_target(128, 64, 56, &up, 127, 129, 1000), None);
    }

    #[test]
    fn the_threshold_counts_pages_out_of_order_or_missing() {
        // 8 pages never accessed: tolerated at 56 (64 - 56 = 8), not at 57.
        let seq = order(136..192);
        assert!(linear_target(191, 64, 56, &seq, 190, 192, 1000).is_some());
        assert!(linear_target(191, 64, 57, &seq, 190, 192, 1000).is_none());
        // Two pages swapped: one out of order.
        let mut swapped: Vec<PageNo> = (128..192).collect();
        swapped.swap(10, 11);
        let seq = order(swapped);
        assert!(linear_target(191, 64, 63, &seq, 190, 192, 1000).is_some());
        assert!(linear_target(191, 64, 64, &seq, 190, 192, 1000).is_none());
        // 64: every page, in order. 0: never.
        let seq = order(128..192);
        assert!(linear_target(191, 64, 64, &seq, 190, 192, 1000).is_some());
        assert!(linear_target(191, 64, 0, &seq, 190, 192, 1000).is_none());
        // Equal first accesses (a page read with another) are in order.
        let mut tied = order(128..192);
        tied[5] = tied[4];
        assert!(linear_target(191, 64, 64, &tied, 190, 192, 1000).is_some());
    }

    #[test]
    fn random_read_ahead_wants_13_recent_pages_of_64() {
        assert!(!random_due(12, 64));
        assert!(random_due(13, 64));
        assert!(random_due(37, 256));
        assert!(!random_due(36, 256));
    }
}
