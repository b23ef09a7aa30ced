//! Flushing dirty pages, checkpoints, and the page cleaner and master threads.
//! (InnoDB: buf0flu, log0chkp, srv0srv master thread.)
//!
//! OVERVIEW
//! A batch copies each page under a short S latch (writers never wait for I/O), makes the redo
//! durable up to the newest copied LSN, writes the copies to a doublewrite area and syncs it,
//! writes them home (coalescing runs of consecutive pages), syncs the tablespaces, and only then
//! marks the frames clean if they did not change meanwhile. Page cleaners
//! (`innodb_page_cleaners`) run batches from the flush-list tail (adaptive flushing, `policy`)
//! and from the LRU tail (so user threads find free frames); the master thread writes
//! checkpoints and, for `innodb_flush_log_at_trx_commit` 0/2, flushes the log once per
//! `innodb_flush_log_at_timeout`.
//!
//! NEIGHBOURS (innodb_flush_neighbors, `neighbors`): a page taken from the flush list or the
//! LRU tail (a victim) brings the dirty pages of its extent that `neighbors::select` picks into
//! the same batch, so they share its redo flush, doublewrite write and home write (I1, I2 hold
//! for them as for any page). Only victims count against a flush-list batch's page budget
//! (io_capacity): a victim and its contiguous neighbours go home in one write. InnoDB counts
//! neighbours against the budget too; here SET GLOBAL innodb_flush_neighbors=1 makes an idle
//! server write back many more pages a second at the same innodb_io_capacity.
//!
//! INVARIANTS
//! - I1 (write-ahead): a page copy reaches any file only after `log.flushed_lsn >=` its LSN.
//! - I2: a frame leaves the flush list only after its copy is durable at home, and only if its
//!   newest_modification still equals the copy's LSN.
//! - I3: a checkpoint LSN is at most the oldest_modification of every dirty page, computed with
//!   the log mutex held so no mtr commit interleaves.
//! - I4: user threads wait in `log_free_check` (no latches held) when the checkpoint age passes
//!   the async checkpoint point, so the log writer never needs to wait for space while a thread
//!   holds page latches.
//!
//! WRITE THREADS (innodb_write_io_threads, `write_threads`): once the doublewrite copy is
//! synced, the batch's home writes go out in parallel, one per run, and the batch waits for all
//! of them before it syncs the tablespaces; a failed one fails the batch and stops every later
//! write (fail-stop).
//!
//! LATCHING: a batch only tries page S latches (never waits for one: the holder may be a thread
//! waiting for this very flush to free a frame), one at a time, for the copy; the area mutex is
//! held across the I/O. Assembling a batch looks neighbours up in the page hash (a partition's
//! read lock at a time) before the area mutex is taken, with no page latch held. `sync_mutex`
//! serialises synchronous flushes by user threads.

pub mod neighbors;
pub mod policy;
pub mod write_threads;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::latch::{Condvar, Mutex};

use crate::buffer_pool::FrameIdx;
use crate::doublewrite::{CLEANER_AREAS, DBLWR_AREA_PAGES, SINGLE_PAGE_AREA};
use crate::engine::Inner;
use crate::error::Result;
use crate::page;
use crate::types::{Lsn, PageId};

/// Who asked for a flush (the BUFFER FLUSH section of SHOW ENGINE INNODB STATUS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// Page cleaner, flush list, adaptive (redo pressure).
    Adaptive,
    /// Page cleaner, flush list, dirty-page percentage.
    DirtyPct,
    /// Page cleaner on an idle server.
    Background,
    /// Page cleaner, LRU tail (free frames).
    Lru,
    /// A user thread waiting on the checkpoint limit (redo pressure, synchronous).
    Sync,
    /// A user thread that found no free frame.
    SinglePage,
    /// Shutdown or an explicit full flush.
    Shutdown,
}

const N_CALLERS: usize = 7;

impl Caller {
    pub const ALL: [Caller; N_CALLERS] = [
        Caller::Adaptive,
        Caller::DirtyPct,
        Caller::Background,
        Caller::Lru,
        Caller::Sync,
        Caller::SinglePage,
        Caller::Shutdown,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Caller::Adaptive => "adaptive (redo)",
            Caller::DirtyPct => "dirty pages pct",
            Caller::Background => "background (idle)",
            Caller::Lru => "LRU",
            Caller::Sync => "sync (checkpoint age)",
            Caller::SinglePage => "single page",
            Caller::Shutdown => "shutdown",
        }
    }
    fn idx(self) -> usize {
        self as usize
    }
}

#[derive(Default)]
pub struct FlushStats {
    pub calls: [AtomicU64; N_CALLERS],
    pub pages: [AtomicU64; N_CALLERS],
    /// Innodb_buffer_pool_pages_flushed
    pub pages_flushed: AtomicU64,
    /// Neighbours written with their victims (INNODB_METRICS buffer_flush_neighbor_total_pages).
    pub neighbor_pages: AtomicU64,
    /// Victims written with at least one neighbour (buffer_flush_neighbor).
    pub neighbor_calls: AtomicU64,
}

/// The frames pinned for one batch: victims, each followed by the neighbours it brought.
#[derive(Default)]
struct Batch {
    frames: Vec<FrameIdx>,
    /// Per frame: the position in `frames` of the victim it came with; None for a victim.
    came_with: Vec<Option<usize>>,
}

/// What flushing a list of victims did.
#[derive(Default, Clone, Copy)]
struct Flushed {
    /// Victims pinned into a batch (a victim being freed or already in a batch is not).
    pinned: usize,
    /// Victims written.
    victims: usize,
    /// Pages written, victims and neighbours.
    pages: usize,
}

/// Redo and page rates sampled by the page cleaner.
struct Rates {
    last: Instant,
    last_lsn: Lsn,
    last_flushed: u64,
    avg_lsn_rate: f64,
    avg_page_rate: f64,
}

pub struct FlushState {
    wake: (Mutex<u64>, Condvar),
    sync_mutex: Mutex<()>,
    rates: Mutex<Rates>,
    /// The page cleaners should run another iteration at once (sync flush pending).
    pub urgent: AtomicBool,
    pub stats: FlushStats,
}

impl FlushState {
    pub fn new(lsn: Lsn) -> Self {
        FlushState {
            wake: (Mutex::new(0), Condvar::new()),
            sync_mutex: Mutex::new(()),
            rates: Mutex::new(Rates {
                last: Instant::now(),
                last_lsn: lsn,
                last_flushed: 0,
                avg_lsn_rate: 0.0,
                avg_page_rate: 0.0,
            }),
            urgent: AtomicBool::new(false),
            stats: FlushStats::default(),
        }
    }

    pub fn wake_cleaners(&self) {
        let mut g = self.wake.0.lock();
        *g += 1;
        self.wake.1.notify_all();
    }

    /// Sleeps until woken or `timeout`; returns true if woken.
    pub fn wait(&self, seen: &mut u64, timeout: Duration) -> bool {
        let mut g = self.wake.0.lock();
        if *g == *seen {
            self.wake.1.wait_for(&mut g, timeout);
        }
        let woke = *g != *seen;
        *seen = *g;
        woke
    }
}

impl Inner {
    /// Flushes frames already pinned for flush (`pin_for_flush`), at most DBLWR_AREA_PAGES, as
    /// one batch through doublewrite area `area`. Returns the pages written.
    pub fn flush_frames(
        &self,
        frames: Vec<FrameIdx>,
        area: usize,
        caller: Caller,
    ) -> Result<usize> {
        Ok(self.write_frames(frames, area, caller)?.len())
    }

    /// `flush_frames`, returning the frames written (each was unpinned).
    fn write_frames(
        &self,
        mut frames: Vec<FrameIdx>,
        area: usize,
        caller: Caller,
    ) -> Result<Vec<FrameIdx>> {
        debug_assert!(frames.len() <= DBLWR_AREA_PAGES as usize);
        let ps = self.bp.page_size();
        frames.sort_by_key(|&f| self.bp.frame(f).page_id());
        let mut staged = self.dblwr.lock_area(area);
        let mut batch: Vec<(FrameIdx, PageId, Lsn)> = Vec::with_capacity(frames.len());
        let mut max_lsn = 0;
        // Only redo the writer can write now (below checkpoint + capacity) may be required: a page
        // changed beyond that waits for a later batch, so the checkpoint can always advance.
        let writable = self.log.checkpoint_lsn() + self.log.files.capacity;
        for f in frames {
            let fr = self.bp.frame(f);
            // Never wait for a page latch while flushing: the holder may be a thread that
            // needs a free frame (and so this flush). A busy page waits for a later batch.
            if !self.bp.try_latch(f, crate::buffer_pool::LatchMode::S) {
                fr.in_flush.store(false, Ordering::Release);
                self.bp.unpin(f);
                continue;
            }
            if !self.bp.is_valid(f)
                || fr.oldest_modification.load(Ordering::Acquire) == 0
                || fr.newest_modification.load(Ordering::Acquire) > writable
            {
                self.bp.unlatch(f, crate::buffer_pool::LatchMode::S);
                fr.in_flush.store(false, Ordering::Release);
                self.bp.unpin(f);
                continue;
            }
            let i = batch.len();
            let dst = &mut staged[i * ps..(i + 1) * ps];
            // SAFETY: S latch held for the copy.
            dst.copy_from_slice(unsafe { self.bp.data(f) });
            let lsn = fr.newest_modification.load(Ordering::Acquire);
            self.bp.unlatch(f, crate::buffer_pool::LatchMode::S);
            page::stamp(dst);
            max_lsn = max_lsn.max(lsn);
            batch.push((f, fr.page_id(), lsn));
        }
        let res = self.write_batch(&mut staged, &batch, max_lsn, area);
        drop(staged);
        let n = batch.len();
        for &(f, _, lsn) in &batch {
            if res.is_ok() {
                self.bp.mark_clean_if_unchanged(f, lsn);
            }
            self.bp.frame(f).in_flush.store(false, Ordering::Release);
            self.bp.unpin(f);
        }
        res?;
        let st = &self.flush.stats;
        st.calls[caller.idx()].fetch_add(1, Ordering::Relaxed);
        st.pages[caller.idx()].fetch_add(n as u64, Ordering::Relaxed);
        st.pages_flushed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(batch.into_iter().map(|(f, _, _)| f).collect())
    }

    /// Pins victims, in order, each followed by its neighbours (innodb_flush_neighbors; with
    /// `lru` only neighbours in the LRU's old sublist, as InnoDB: they are soon evicted), until
    /// the batch holds DBLWR_AREA_PAGES frames. Returns the batch and how many victims it
    /// consumed (at least one): the others stay on their list for the next batch.
    fn assemble(&self, victims: &[FrameIdx], lru: bool) -> (Batch, usize) {
        let cap = DBLWR_AREA_PAGES as usize;
        let mode = self.tun.flush_neighbors.load(Ordering::Relaxed);
        let area = neighbors::flush_area(self.bp.page_size(), self.bp.n_frames());
        let mut b = Batch::default();
        let mut used = 0;
        for &v in victims {
            if b.frames.len() >= cap {
                break;
            }
            used += 1;
            if !self.bp.pin_for_flush(v) {
                continue;
            }
            let at = b.frames.len();
            b.frames.push(v);
            b.came_with.push(None);
            if mode == 0 {
                continue;
            }
            // Pinned: the frame keeps its page.
            let id = self.bp.frame(v).page_id();
            let near = |p| PageId::new(id.space, p);
            let picked = neighbors::select(id.page, area, mode, |p| {
                self.bp.neighbor_for_flush(near(p), lru, false).is_some()
            });
            for p in picked {
                if b.frames.len() >= cap {
                    break;
                }
                if let Some(f) = self.bp.neighbor_for_flush(near(p), lru, true) {
                    b.frames.push(f);
                    b.came_with.push(Some(at));
                }
            }
        }
        (b, used)
    }

    /// Flushes `victims` with their neighbours, in as many batches as they need.
    fn flush_victims(
        &self,
        victims: &[FrameIdx],
        lru: bool,
        area: usize,
        caller: Caller,
    ) -> Result<Flushed> {
        let mut out = Flushed::default();
        let mut rest = victims;
        while !rest.is_empty() {
            let (b, used) = self.assemble(rest, lru);
            rest = &rest[used..];
            if b.frames.is_empty() {
                continue;
            }
            out.pinned += b.came_with.iter().filter(|c| c.is_none()).count();
            let written = self.write_frames(b.frames.clone(), area, caller)?;
            let mut brought = vec![0u64; b.frames.len()];
            for (i, f) in b.frames.iter().enumerate() {
                if !written.contains(f) {
                    continue;
                }
                out.pages += 1;
                match b.came_with[i] {
                    None => out.victims += 1,
                    Some(v) => brought[v] += 1,
                }
            }
            let st = &self.flush.stats;
            let calls = brought.iter().filter(|&&n| n > 0).count() as u64;
            if calls > 0 {
                st.neighbor_calls.fetch_add(calls, Ordering::Relaxed);
                st.neighbor_pages
                    .fetch_add(brought.iter().sum(), Ordering::Relaxed);
            }
        }
        Ok(out)
    }

    fn write_batch(
        &self,
        staged: &mut Vec<u8>,
        batch: &[(FrameIdx, PageId, Lsn)],
        max_lsn: Lsn,
        area: usize,
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let ps = self.bp.page_size();
        self.log.write_up_to(max_lsn, true)?; // I1
        self.dblwr.write(&self.fil, area, staged, batch.len())?;
        // Home writes, one per run of consecutive pages of one space, on the write threads.
        let mut i = 0;
        let mut runs = Vec::new();
        let mut spaces = Vec::new();
        while i < batch.len() {
            let id = batch[i].1;
            let mut j = i + 1;
            while j < batch.len()
                && batch[j].1.space == id.space
                && batch[j].1.page == batch[j - 1].1.page + 1
            {
                j += 1;
            }
            if let Some(sp) = self.fil.get(id.space) {
                if !spaces.iter().any(|s: &Arc<_>| Arc::ptr_eq(s, &sp)) {
                    spaces.push(sp.clone());
                }
                runs.push(write_threads::HomeWrite {
                    space: sp,
                    first: id.page,
                    range: i * ps..j * ps,
                });
            }
            i = j;
        }
        self.write_home(staged, runs)?;
        for sp in &spaces {
            self.fil.sync(sp)?;
        }
        Ok(())
    }

    /// Flushes up to `max` pages with oldest_modification below `lsn_limit` from the flush
    /// lists of the given instances (oldest first), with their neighbours (which `max` does not
    /// count). Returns the pages written, neighbours included.
    pub fn flush_list_batch(
        &self,
        instances: &[usize],
        lsn_limit: Lsn,
        max: usize,
        area: usize,
        caller: Caller,
    ) -> Result<usize> {
        let mut done = 0;
        let mut pages = 0;
        let per_batch = DBLWR_AREA_PAGES as usize;
        loop {
            let mut cand = Vec::new();
            let share = ((max - done) / instances.len().max(1)).clamp(1, per_batch);
            for &ii in instances {
                let before = cand.len();
                self.bp
                    .flush_list_tail(ii, lsn_limit, before + share, &mut cand);
                if cand.len() >= per_batch {
                    cand.truncate(per_batch);
                    break;
                }
            }
            let r = self.flush_victims(&cand, false, area, caller)?;
            if r.pinned == 0 {
                return Ok(pages);
            }
            done += r.victims;
            pages += r.pages;
            if done >= max {
                return Ok(pages);
            }
        }
    }

    /// LRU flush of one instance: writes dirty pages near the LRU tail and refills the free list
    /// to `innodb_lru_scan_depth` frames. Returns pages written.
    pub fn flush_lru(&self, ii: usize, area: usize) -> Result<usize> {
        let depth = self.tun.lru_scan_depth.load(Ordering::Relaxed).max(1);
        let want = (depth as usize).min(self.bp.n_frames() / self.bp.instances().len() / 4 + 1);
        self.bp.replenish_free(ii, want, depth);
        if self.bp.free_len(ii) >= want {
            return Ok(0);
        }
        // Only as many dirty pages as the free list lacks: the flush list does the rest.
        let need = want.saturating_sub(self.bp.free_len(ii));
        let mut cand = Vec::new();
        self.bp.lru_tail_dirty(ii, depth, need, &mut cand);
        let written = self.flush_victims(&cand, true, area, Caller::Lru)?.pages;
        self.bp.replenish_free(ii, want, depth);
        Ok(written)
    }

    /// A user thread with no free frame flushes the dirty page nearest the LRU tail itself.
    pub fn flush_single_page(&self, ii: usize) -> Result<bool> {
        let depth = self.tun.lru_scan_depth.load(Ordering::Relaxed).max(64);
        let mut cand = Vec::new();
        self.bp.lru_tail_dirty(ii, depth, 8, &mut cand);
        for f in cand {
            if self.bp.pin_for_flush(f) {
                return Ok(self.flush_frames(vec![f], SINGLE_PAGE_AREA, Caller::SinglePage)? > 0);
            }
        }
        Ok(false)
    }

    /// Writes a checkpoint at the oldest modification in the pool (or the current LSN if no
    /// page is dirty). Returns true if the checkpoint advanced (I3).
    pub fn checkpoint(&self) -> Result<bool> {
        self.check_writable()?;
        let cp = self
            .log
            .with_mutex(|lsn| self.bp.min_oldest_modification().unwrap_or(lsn));
        self.log.write_checkpoint(cp)
    }

    /// Called before every operation that may write redo, with no latch held (I4): if the
    /// checkpoint age is past the async checkpoint point, flush and checkpoint synchronously.
    pub fn log_free_check(&self) -> Result<()> {
        let m = self.log.margins;
        loop {
            let age = self.log.checkpoint_age();
            if age <= m.max_checkpoint_age_async {
                if age > m.max_modified_age_async {
                    self.flush.wake_cleaners();
                }
                return Ok(());
            }
            self.check_writable()?;
            self.sync_flush()?;
        }
    }

    /// Flushes the oldest pages until the modified age is below the async point, then writes a
    /// checkpoint. One user thread does it; others wait on the mutex and recheck.
    pub fn sync_flush(&self) -> Result<()> {
        let _g = self.flush.sync_mutex.lock();
        let m = self.log.margins;
        if self.log.checkpoint_age() <= m.max_checkpoint_age_async {
            return Ok(());
        }
        let all: Vec<usize> = (0..self.bp.instances().len()).collect();
        let target = self.log.lsn().saturating_sub(m.max_modified_age_async / 2);
        loop {
            let n = self.flush_list_batch(&all, target, 1 << 20, SINGLE_PAGE_AREA, Caller::Sync)?;
            if n == 0 {
                break;
            }
        }
        if !self.checkpoint()? {
            // Everything old enough is busy right now; let its holders finish.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Ok(())
    }

    /// Flushes every dirty page and writes a checkpoint at the current LSN (clean shutdown).
    pub fn flush_all_and_checkpoint(&self) -> Result<()> {
        let all: Vec<usize> = (0..self.bp.instances().len()).collect();
        loop {
            self.flush_list_batch(&all, Lsn::MAX, 1 << 30, 0, Caller::Shutdown)?;
            if self.bp.n_dirty() == 0 {
                break;
            }
            std::thread::yield_now();
        }
        self.log.write_up_to(self.log.lsn(), true)?;
        self.checkpoint()?;
        Ok(())
    }

    /// Dirty pages whose oldest change is below `limit`, counting up to `cap` (policy input).
    fn count_pages_below(&self, limit: Lsn, cap: usize) -> u64 {
        let mut v = Vec::new();
        for ii in 0..self.bp.instances().len() {
            self.bp.flush_list_tail(ii, limit, cap, &mut v);
        }
        v.len() as u64
    }

    /// One page cleaner iteration for the instances of cleaner `id` of `n`, covering `dt` of
    /// time: it flushes the policy's per-second recommendation scaled to `dt`. `credit` carries
    /// the fraction of a page left over from the cleaner's earlier iterations, so a cleaner
    /// woken many times a second flushes the recommended rate (at most io_capacity_max), not a
    /// page per wake-up. Returns the pages written and whether the redo is under pressure (then
    /// the cleaner comes back soon instead of sleeping a second).
    pub fn page_cleaner_iteration(
        &self,
        id: usize,
        n: usize,
        dt: Duration,
        credit: &mut f64,
    ) -> Result<(usize, bool)> {
        let mine: Vec<usize> = (0..self.bp.instances().len())
            .filter(|i| i % n == id)
            .collect();
        let area = id % CLEANER_AREAS;
        let mut written = 0;
        for &ii in &mine {
            written += self.flush_lru(ii, area)?;
        }
        let (per_sec, reason) = self.flush_recommendation(id == 0);
        let budget = if per_sec == 0 {
            0.0
        } else {
            *credit + per_sec as f64 * dt.as_secs_f64().min(1.0)
        };
        let pages = budget.floor() as u64;
        *credit = budget - pages as f64;
        if pages > 0 {
            let share = (pages as usize * mine.len())
                .div_ceil(self.bp.instances().len())
                .max(1);
            let caller = match reason {
                policy::Reason::Idle => Caller::Background,
                policy::Reason::DirtyPct => Caller::DirtyPct,
                _ => Caller::Adaptive,
            };
            written += self.flush_list_batch(&mine, Lsn::MAX, share, area, caller)?;
        }
        let oldest = self.bp.min_oldest_modification().unwrap_or(self.log.lsn());
        let lwm = self.log.margins.max_modified_age_async as f64 * self.tun.adaptive_flushing_lwm()
            / 100.0;
        let pressure = (self.log.lsn().saturating_sub(oldest)) as f64 > lwm;
        // Under redo pressure the checkpoint follows the flushing at once, so the space the
        // flushing freed is usable before user threads reach the async point.
        if pressure && id == 0 && written > 0 {
            self.checkpoint()?;
        }
        Ok((written, pressure))
    }

    /// Samples rates and asks the policy how many pages to flush this second.
    fn flush_recommendation(&self, update_rates: bool) -> (u64, policy::Reason) {
        let lsn = self.log.lsn();
        let flushed_total = self.flush.stats.pages_flushed.load(Ordering::Relaxed);
        let (lsn_rate, page_rate, idle) = {
            let mut r = self.flush.rates.lock();
            let dt = r.last.elapsed().as_secs_f64().max(0.001);
            let idle = lsn == r.last_lsn;
            if update_rates && dt >= 0.5 {
                let lr = (lsn - r.last_lsn) as f64 / dt;
                let pr = flushed_total.saturating_sub(r.last_flushed) as f64 / dt;
                r.avg_lsn_rate = (r.avg_lsn_rate + lr) / 2.0;
                r.avg_page_rate = (r.avg_page_rate + pr) / 2.0;
                r.last = Instant::now();
                r.last_lsn = lsn;
                r.last_flushed = flushed_total;
            }
            (r.avg_lsn_rate, r.avg_page_rate, idle)
        };
        let oldest = self.bp.min_oldest_modification();
        let age = oldest.map_or(0, |o| lsn.saturating_sub(o));
        let cap = self.tun.io_capacity_max() as usize;
        let pages_for_lsn = oldest.map_or(0, |o| {
            self.count_pages_below(o.saturating_add((lsn_rate * 3.0) as u64), cap)
        });
        let inputs = policy::Inputs {
            dirty_pages: self.bp.n_dirty() as u64,
            pool_pages: self.bp.n_frames() as u64,
            max_dirty_pct: self.tun.max_dirty_pages_pct(),
            max_dirty_pct_lwm: self.tun.max_dirty_pages_pct_lwm(),
            modified_age: age,
            async_age: self.log.margins.max_modified_age_async,
            io_capacity: self.tun.io_capacity(),
            io_capacity_max: self.tun.io_capacity_max(),
            adaptive_flushing: self.tun.adaptive_flushing.load(Ordering::Relaxed),
            adaptive_flushing_lwm: self.tun.adaptive_flushing_lwm(),
            avg_page_rate: page_rate,
            pages_for_lsn,
            idle,
        };
        policy::recommend(&inputs)
    }

    /// Master thread work, once per second: checkpoint, and the log flush for
    /// innodb_flush_log_at_trx_commit 0 and 2.
    pub fn master_tick(&self, last_log_flush: &mut Instant) -> Result<()> {
        let timeout = u64::from(self.tun.flush_log_at_timeout.load(Ordering::Relaxed).max(1));
        let lsn = self.log.lsn();
        let st = &self.stats;
        if st.master_last_lsn.swap(lsn, Ordering::Relaxed) == lsn {
            st.master_idle.fetch_add(1, Ordering::Relaxed);
        } else {
            st.master_active.fetch_add(1, Ordering::Relaxed);
        }
        if last_log_flush.elapsed() >= Duration::from_secs(timeout) {
            self.log.write_up_to(lsn, true)?;
            st.master_log_flushes.fetch_add(1, Ordering::Relaxed);
            *last_log_flush = Instant::now();
        }
        self.checkpoint()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use innoxide_io::{Fault, FaultKind, FaultOp, SimFs};

    use super::Caller;
    use crate::buffer_pool::{FrameIdx, LatchMode};
    use crate::error::Error;
    use crate::page;
    use crate::types::{PageId, PageNo};
    use crate::{Engine, EngineConfig, Value};

    /// An engine on simulated disk `fs` with 16 KiB pages (64-page extents), a pool of 1,024
    /// pages (flush areas of 64), `write_threads` write threads (not started) and no
    /// background threads, holding a table of about 280 leaves that were written back and then
    /// all changed again. Returns the table's space.
    fn dirty_table_on(fs: Arc<SimFs>, write_threads: usize) -> (Engine, u32) {
        let mut c = EngineConfig::new("/data");
        c.buffer_pool_size = 1024 * 16384;
        c.background_threads = false;
        c.write_io_threads = write_threads;
        let engine = Engine::open_with(c, fs).unwrap();
        let t = crate::test_tables::kb_rows(&engine, "test/n");
        engine.flush_and_checkpoint().unwrap();
        let mut trx = engine.begin();
        for i in 0..4000i64 {
            trx.update(&t, &[Value::Int(i)], &[(1, Value::Bytes(vec![2; 1000]))])
                .unwrap();
        }
        trx.commit().unwrap();
        (engine, t.space)
    }

    fn dirty_table() -> (Engine, u32) {
        dirty_table_on(Arc::new(SimFs::new(7)), 4)
    }

    /// The dirty pages of `space`.
    fn dirty(engine: &Engine, space: u32) -> BTreeSet<PageNo> {
        let bp = &engine.inner().bp;
        let mut frames = Vec::new();
        bp.flush_list_tail(0, u64::MAX, usize::MAX, &mut frames);
        frames
            .into_iter()
            .map(|f| bp.frame(f).page_id())
            .filter(|id| id.space == space)
            .map(|id| id.page)
            .collect()
    }

    /// Flushes `page` as a victim of a flush-list batch under innodb_flush_neighbors `mode`.
    fn flush_victim(engine: &Engine, space: u32, page: PageNo, mode: u8) -> usize {
        let inner = engine.inner();
        inner.tun.flush_neighbors.store(mode, Ordering::Relaxed);
        let f = inner.bp.peek_pin(PageId::new(space, page)).unwrap();
        inner.bp.unpin(f);
        inner
            .flush_victims(&[f], false, 0, Caller::Background)
            .unwrap()
            .pages
    }

    /// A victim with at least 20 dirty pages on both sides within its extent, in an extent
    /// whose neighbours on both sides hold dirty pages next to it.
    fn victim(d: &BTreeSet<PageNo>) -> PageNo {
        let run = |p: PageNo| (p - 20..=p + 20).all(|q| d.contains(&q));
        (1..6)
            .map(|e| e * 64 + 32)
            .find(|&p| {
                let low = p - p % 64;
                run(p) && d.contains(&(low - 1)) && d.contains(&(low + 64))
            })
            .unwrap_or_else(|| panic!("no long dirty run in {d:?}"))
    }

    #[test]
    fn neighbours_are_the_contiguous_dirty_run_within_the_extent_and_skip_latched_pages() {
        let (engine, space) = dirty_table();
        let inner = engine.inner();
        let d = dirty(&engine, space);
        let p = victim(&d);
        let low = p - p % 64;
        // A gap at p + 6 (written alone, mode 0), a page latched by another thread at p + 3.
        assert_eq!(flush_victim(&engine, space, p + 6, 0), 1);
        let held = inner.fix(PageId::new(space, p + 3), LatchMode::X).unwrap();
        let before = dirty(&engine, space);
        let written = flush_victim(&engine, space, p, 1);
        inner.bp.unlatch(held, LatchMode::X);
        inner.bp.unpin(held);
        let after = dirty(&engine, space);
        let cleaned: BTreeSet<PageNo> = before.difference(&after).copied().collect();
        // Down to the first clean page or the extent's start, up to the gap.
        let mut start = p;
        while start > low && before.contains(&(start - 1)) {
            start -= 1;
        }
        let want: BTreeSet<PageNo> = (start..=p + 5).filter(|&q| q != p + 3).collect();
        assert_eq!(cleaned, want, "victim {p}, extent {low}..{}", low + 63);
        assert_eq!(written, want.len());
        assert!(after.contains(&(p + 3)), "the latched page was written");
        assert!(after.contains(&(p + 7)), "the run went past the gap");
        assert!(after.contains(&(low - 1)), "the run left the extent");
        let st = &inner.flush.stats;
        assert_eq!(st.neighbor_calls.load(Ordering::Relaxed), 1);
        assert_eq!(
            st.neighbor_pages.load(Ordering::Relaxed),
            want.len() as u64 - 1
        );
    }

    #[test]
    fn mode_2_takes_every_dirty_page_of_the_extent_and_mode_0_none() {
        let (engine, space) = dirty_table();
        let d = dirty(&engine, space);
        let p = victim(&d);
        let low = p - p % 64;
        // Gaps do not stop mode 2.
        assert_eq!(flush_victim(&engine, space, p + 2, 0), 1);
        assert_eq!(flush_victim(&engine, space, p - 2, 0), 1);
        let before = dirty(&engine, space);
        let in_extent: BTreeSet<PageNo> = before.range(low..low + 64).copied().collect();
        let written = flush_victim(&engine, space, p, 2);
        let after = dirty(&engine, space);
        assert_eq!(written, in_extent.len());
        assert!(after.range(low..low + 64).next().is_none());
        assert!(after.contains(&(low - 1)) && after.contains(&(low + 64)));
        assert_eq!(before.len() - after.len(), in_extent.len());
    }

    /// Starts the engine's write threads.
    fn start_write_threads(engine: &Engine) -> Vec<JoinHandle<()>> {
        let wt = &engine.inner().write_threads;
        wt.start();
        (0..wt.threads.len())
            .map(|slot| {
                let inner = engine.inner().clone();
                std::thread::spawn(move || super::write_threads::run(&inner, slot))
            })
            .collect()
    }

    fn stop_write_threads(engine: &Engine, threads: Vec<JoinHandle<()>>) {
        engine.inner().write_threads.stop();
        for t in threads {
            t.join().unwrap();
        }
    }

    /// Sixteen dirty pages two apart (sixteen runs, so sixteen home writes), and their frames.
    fn sixteen_runs(engine: &Engine, space: u32) -> Vec<(PageId, FrameIdx)> {
        let d = dirty(engine, space);
        let p = victim(&d);
        (0..16)
            .map(|k| {
                let id = PageId::new(space, p - 16 + 2 * k);
                let f = engine.inner().bp.peek_pin(id).unwrap();
                engine.inner().bp.unpin(f);
                (id, f)
            })
            .collect()
    }

    /// A batch's setting: the disk, the engine, its write threads and the pages.
    struct SlowBatch {
        fs: Arc<SimFs>,
        engine: Engine,
        writers: Vec<JoinHandle<()>>,
        pages: Vec<(PageId, FrameIdx)>,
    }

    /// `dirty_table_on` with `threads` write threads started, sixteen runs of dirty pages
    /// pinned for a batch, and the disk's tablespace writes taking 20 ms each from now on.
    fn sixteen_runs_on_a_slow_disk(threads: usize) -> SlowBatch {
        let fs = Arc::new(SimFs::new(7));
        let (engine, space) = dirty_table_on(fs.clone(), threads);
        let writers = start_write_threads(&engine);
        let pages = sixteen_runs(&engine, space);
        let latency = FaultKind::Latency(Duration::from_millis(20));
        fs.inject(
            Fault::new(FaultOp::Write, 1, latency)
                .persistent()
                .on_path(".ibd"),
        );
        SlowBatch {
            fs,
            engine,
            writers,
            pages,
        }
    }

    /// The time one batch of sixteen runs takes with `threads` write threads on a disk whose
    /// tablespace writes take 20 ms each; checks that every page went home.
    fn batch_of_sixteen_runs(threads: usize) -> Duration {
        let SlowBatch {
            engine,
            writers,
            pages,
            ..
        } = sixteen_runs_on_a_slow_disk(threads);
        let inner = engine.inner().clone();
        let frames: Vec<FrameIdx> = pages.iter().map(|&(_, f)| f).collect();
        let t = Instant::now();
        let r = inner
            .flush_victims(&frames, false, 0, Caller::Background)
            .unwrap();
        let took = t.elapsed();
        assert_eq!((r.victims, r.pages), (16, 16));
        let mut home = vec![0u8; inner.bp.page_size()];
        for &(id, f) in &pages {
            let fr = inner.bp.frame(f);
            assert_eq!(fr.oldest_modification.load(Ordering::Acquire), 0, "{id}");
            inner.fil.read_page(id, &mut home).unwrap();
            assert!(page::verify(&home, id).is_ok());
            assert_eq!(
                page::lsn(&home),
                fr.newest_modification.load(Ordering::Acquire)
            );
        }
        stop_write_threads(&engine, writers);
        took
    }

    #[test]
    fn a_batchs_home_writes_overlap_on_the_write_threads() {
        let one = batch_of_sixteen_runs(1);
        let four = batch_of_sixteen_runs(4);
        eprintln!("16 home writes of 20 ms: 1 write thread {one:?}, 4 write threads {four:?}");
        assert!(one >= Duration::from_millis(320), "{one:?}");
        assert!(four * 2 < one, "4 threads {four:?}, 1 thread {one:?}");
    }

    #[test]
    fn a_failed_home_write_fails_its_batch_and_stops_every_later_write() {
        let SlowBatch {
            fs,
            engine,
            writers,
            pages,
        } = sixteen_runs_on_a_slow_disk(4);
        let inner = engine.inner().clone();
        let frames: Vec<FrameIdx> = pages.iter().map(|&(_, f)| f).collect();
        fs.inject(Fault::new(FaultOp::Write, 3, FaultKind::Eio).on_path(".ibd"));
        let written = || inner.fil.stats.writes.load(Ordering::Relaxed);
        let before = written();
        let e = inner
            .flush_victims(&frames, false, 0, Caller::Background)
            .err()
            .expect("the batch fails");
        assert!(matches!(e, Error::Io { .. }), "the write's own error: {e}");
        assert!(inner.failed.load(Ordering::Acquire));
        // The doublewrite copy and the home writes issued before the failure was known.
        let home = written() - before - 1;
        assert!(home < 16, "{home} home writes after a failure");
        for &(id, f) in &pages {
            let fr = inner.bp.frame(f);
            let dirty = fr.oldest_modification.load(Ordering::Acquire) != 0;
            assert!(dirty, "{id} was marked clean in a failed batch");
        }
        std::thread::sleep(Duration::from_millis(100));
        let after = written();
        assert!(matches!(
            inner.flush_victims(&frames, false, 0, Caller::Background),
            Err(Error::PreviousIo)
        ));
        assert_eq!(written(), after, "a write after fail-stop");
        stop_write_threads(&engine, writers);
    }
}
