//! The state of an open engine (`Inner`) and the page access path every module uses.
//! (InnoDB: srv0srv's globals, made fields of one struct; buf_page_get_gen.)
//!
//! `Inner` owns each subsystem as a field; modules receive `&Inner` and use the fields they
//! need. There are no globals.
//!
//! INVARIANTS
//! - I1: `fix` returns a frame pinned and latched in the requested mode whose bytes are the
//!   verified current image of the page (buffer_pool I5, page I2). At a page's first access
//!   since it came into the pool it may start read-ahead (buffer_pool::read_ahead), which
//!   never waits.
//! - I2: after `fail_stop`, no page or log byte is written again until the engine is reopened.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use innoxide_io::FileSystem;

use crate::buffer_pool::read_ahead::ReadAhead;
use crate::buffer_pool::{BufferPool, FrameIdx, Install, LatchMode};
use crate::config::{EngineConfig, Tunables};
use crate::dict::Dict;
use crate::doublewrite::Doublewrite;
use crate::error::{Error, Result};
use crate::flush::write_threads::WriteThreads;
use crate::flush::FlushState;
use crate::page;
use crate::purge::PurgeStats;
use crate::redo::Log;
use crate::tablespace::file::Fil;
use crate::trx::TrxSys;
use crate::types::PageId;

/// Engine-wide counters that belong to no single subsystem.
#[derive(Default)]
pub struct EngineStats {
    /// Pages read whose LSN was ahead of the log ("is in the future").
    pub future_lsn_pages: AtomicU64,
    /// Checksum or identity failures found when reading pages.
    pub corrupt_reads: AtomicU64,
    /// Times a user thread had to flush a page itself to find a free frame.
    pub user_single_page_flushes: AtomicU64,
    /// Innodb_rows_*: rows of user tables returned to or changed by the layer above.
    pub rows: RowCounters,
    /// Innodb_system_rows_*: the same for tables of the `mysql` database (the catalog), as
    /// InnoDB counts its data dictionary tables apart.
    pub system_rows: RowCounters,
    /// Master thread iterations with and without new redo since the previous one, and its
    /// timed log flushes (innodb_flush_log_at_timeout).
    pub master_active: AtomicU64,
    pub master_idle: AtomicU64,
    pub master_log_flushes: AtomicU64,
    pub master_last_lsn: AtomicU64,
    /// Buffer pool dump and load progress (Innodb_buffer_pool_dump_status / _load_status).
    pub bp_dump: crate::buffer_pool::dump::DumpStatus,
    /// Online resize progress (Innodb_buffer_pool_resize_status).
    pub bp_resize: crate::buffer_pool::resize::ResizeStatus,
    /// The counters at the previous SHOW ENGINE INNODB STATUS (its per-second averages).
    pub monitor_last: crate::latch::Mutex<Option<crate::monitor::Sample>>,
}

pub struct Inner {
    pub cfg: EngineConfig,
    pub tun: Arc<Tunables>,
    pub fs: Arc<dyn FileSystem>,
    pub fil: Fil,
    pub bp: BufferPool,
    /// Read-ahead requests and the I/O threads' state (innodb_read_io_threads).
    pub read_ahead: ReadAhead,
    /// The adaptive hash index (btree::adaptive_hash).
    pub ahi: crate::btree::adaptive_hash::AdaptiveHash,
    pub log: Log,
    pub dblwr: Doublewrite,
    pub flush: FlushState,
    /// The write threads of flush batches (innodb_write_io_threads).
    pub write_threads: WriteThreads,
    pub dict: Dict,
    pub trx: TrxSys,
    pub purge_stats: PurgeStats,
    pub failed: Arc<AtomicBool>,
    pub shutting_down: AtomicBool,
    /// Held shared by each unit of background work (purge batch, page cleaner iteration,
    /// master tick) and exclusively by `check()`, which needs a still picture.
    pub bg_gate: crate::latch::RwLock<()>,
    /// Held shared by each purge batch (inside `bg_gate`) and exclusively by
    /// `check::check_one_table`, so purge does not change the table being checked (and for a
    /// moment by `Engine::purge_all`, to wait out the batches under way).
    pub purge_gate: crate::latch::RwLock<()>,
    pub stats: EngineStats,
}

/// Rows read, inserted, updated and deleted.
#[derive(Default)]
pub struct RowCounters {
    pub read: crate::counter::Counter,
    pub inserted: crate::counter::Counter,
    pub updated: crate::counter::Counter,
    pub deleted: crate::counter::Counter,
}

impl EngineStats {
    /// Counts `n` rows of `table_name` read, in the engine's counters and in the calling
    /// thread's (the slow log's Rows_examined).
    pub fn rows_read(&self, table_name: &str, n: u64) {
        self.rows_of(table_name).read.add(n);
        crate::monitor::note_thread_rows(n);
    }

    /// The row counters a table's rows count in.
    pub fn rows_of(&self, table_name: &str) -> &RowCounters {
        if table_name.starts_with("mysql/") {
            &self.system_rows
        } else {
            &self.rows
        }
    }
}

impl Inner {
    /// Enters fail-stop (I2).
    pub fn fail_stop(&self, why: &str) {
        if !self.failed.swap(true, Ordering::AcqRel) {
            tracing::error!("InnoDB: {why}; refusing further writes until restart");
        }
    }

    pub fn check_writable(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) {
            return Err(Error::PreviousIo);
        }
        Ok(())
    }

    /// Reads a page from its tablespace and verifies it (page I2).
    pub fn read_verified(&self, id: PageId, buf: &mut [u8]) -> Result<()> {
        self.fil.read_page(id, buf)?;
        if let Err(d) = page::verify(buf, id) {
            self.stats.corrupt_reads.fetch_add(1, Ordering::Relaxed);
            tracing::error!("InnoDB: Database page corruption on disk: page {id}: {d}");
            return Err(Error::corrupted(id.space, id.page, d.to_string()));
        }
        self.check_page_lsn(id, buf);
        Ok(())
    }

    /// Reports a page read from disk whose LSN is beyond the log's end (a sign of a lost log).
    pub fn check_page_lsn(&self, id: PageId, buf: &[u8]) {
        let lsn = page::lsn(buf);
        let sys = self.log.lsn();
        if lsn > sys {
            self.stats.future_lsn_pages.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                "InnoDB: Page {id} log sequence number {lsn} is in the future! \
                 Current system log sequence number {sys}."
            );
        }
    }

    /// Pins and latches a page, reading it if it is not in the pool (I1).
    pub fn fix(&self, id: PageId, mode: LatchMode) -> Result<FrameIdx> {
        self.fix_as(id, mode, true)
    }

    /// Reads a page into the pool if it is not there, as a buffer pool load does: the page is
    /// not accessed (its first access, which read-ahead watches, is still to come).
    pub fn load_page(&self, id: PageId) -> Result<()> {
        let f = self.fix_as(id, LatchMode::S, false)?;
        self.bp.unlatch(f, LatchMode::S);
        self.bp.unpin(f);
        Ok(())
    }

    /// `fix`; `access`: the caller uses the page (read-ahead looks at first accesses).
    fn fix_as(&self, id: PageId, mode: LatchMode, access: bool) -> Result<FrameIdx> {
        loop {
            if let Some(f) = self.bp.lookup_pin(id) {
                self.bp.latch(f, mode);
                if self.bp.is_valid(f) {
                    self.bp.on_access(f);
                    if access && self.bp.note_first_access(f) {
                        self.read_ahead_after_access(id, f, false);
                    }
                    return Ok(f);
                }
                // The read into this frame failed; retry (and report the error ourselves).
                self.bp.unlatch(f, mode);
                self.bp.unpin(f);
                std::thread::yield_now();
                continue;
            }
            let f = self.free_frame(self.bp.instance_of(id))?;
            match self.bp.install(id, f, false) {
                Install::Raced => continue,
                Install::Installed => {}
            }
            // SAFETY: install returned the frame X-latched by us.
            let buf = unsafe { self.bp.data_mut(f) };
            match self.read_verified(id, buf) {
                Ok(()) => {
                    self.bp.complete_read(f);
                    if mode == LatchMode::S {
                        self.bp.downgrade(f);
                    }
                    self.bp.on_access(f);
                    if access && self.bp.note_first_access(f) {
                        self.read_ahead_after_access(id, f, true);
                    }
                    return Ok(f);
                }
                Err(e) => {
                    self.bp.abort_read(f);
                    return Err(e);
                }
            }
        }
    }

    /// Pins and latches a page only if it is in the pool, valid, and its latch is free now
    /// (one try, no wait, no read): the adaptive hash index's guess.
    pub fn try_fix(&self, id: PageId, mode: LatchMode) -> Option<FrameIdx> {
        let f = self.bp.lookup_pin(id)?;
        if self.bp.try_latch(f, mode) {
            if self.bp.is_valid(f) {
                self.bp.on_access(f);
                return Some(f);
            }
            self.bp.unlatch(f, mode);
        }
        self.bp.unpin(f);
        None
    }

    /// Pins and X-latches the frame for a page being created; its bytes are not read (the caller
    /// initialises them). A stale cached image of a freed page is reused in place.
    pub fn fix_new(&self, id: PageId) -> Result<FrameIdx> {
        loop {
            if let Some(f) = self.bp.lookup_pin(id) {
                self.bp.latch(f, LatchMode::X);
                if self.bp.is_valid(f) {
                    // The page starts again: nothing of it is hashed.
                    self.bp.frame(f).ahi_index.store(0, Ordering::Relaxed);
                    self.bp.frame(f).ahi_info.store(0, Ordering::Relaxed);
                    return Ok(f);
                }
                self.bp.unlatch(f, LatchMode::X);
                self.bp.unpin(f);
                std::thread::yield_now();
                continue;
            }
            let f = self.free_frame(self.bp.instance_of(id))?;
            match self.bp.install(id, f, true) {
                Install::Raced => continue,
                Install::Installed => {
                    // SAFETY: X-latched by install.
                    unsafe { self.bp.data_mut(f) }.fill(0);
                    return Ok(f);
                }
            }
        }
    }

    /// A free frame of instance `ii`: from the free list, by evicting a clean page, or, when the
    /// LRU tail is all dirty, by flushing one page ourselves (rare; counted).
    fn free_frame(&self, ii: usize) -> Result<FrameIdx> {
        let depth = self.tun.lru_scan_depth.load(Ordering::Relaxed).max(64);
        let mut tries = 0u32;
        loop {
            if let Some(f) = self.bp.try_free_frame(ii, depth) {
                return Ok(f);
            }
            self.bp.stats.wait_free.inc();
            self.flush.wake_cleaners();
            self.check_writable()?;
            if tries > 0 && self.flush_single_page(ii)? {
                self.stats
                    .user_single_page_flushes
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            tries += 1;
            if tries > 2000 {
                return Err(Error::Startup(
                    "InnoDB: cannot find a free block in the buffer pool: every page is pinned; \
                     innodb_buffer_pool_size is too small for this workload"
                        .into(),
                ));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
