//! innoxide's storage engine: an InnoDB-style, crash-safe, concurrent page store with
//! transactions. See ARCHITECTURE.md for the map and docs/format/ for every on-disk structure.
//!
//! The API an upper layer uses:
//! ```no_run
//! use innoxide_engine::{Engine, EngineConfig, TableDef, ColumnDef, ColumnKind, Value};
//! let engine = Engine::open(EngineConfig::new("/tmp/data"))?;
//! let t = engine.create_table(TableDef::new(
//!     "db/t",
//!     vec![ColumnDef::new("id", ColumnKind::BIGINT),
//!          ColumnDef::new("v", ColumnKind::Var { max_len: 100 })],
//!     Some(vec![0]),
//! ))?;
//! let mut trx = engine.begin();
//! trx.insert(&t, &[Value::Int(1), Value::from("one")])?;
//! trx.commit()?;
//! engine.shutdown()?;
//! # Ok::<(), innoxide_engine::Error>(())
//! ```

#![allow(clippy::disallowed_types)] // only in doc examples above; no std::fs in code

pub mod btree;
pub mod buffer_pool;
pub mod check;
pub mod collation;
pub mod config;
pub mod counter;
mod ddl;
pub mod dict;
pub mod doublewrite;
pub mod engine;
pub mod error;
pub mod flush;
pub mod io_queue;
pub mod latch;
pub mod lock;
pub mod mach;
pub mod monitor;
pub mod mtr;
pub mod page;
pub mod purge;
pub mod recovery;
pub mod redo;
pub mod row;
mod startup;
pub mod stats;
pub mod sync_stats;
pub mod tablespace;
#[cfg(test)]
mod test_tables;
pub mod trx;
pub mod types;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::latch::Mutex;
use innoxide_io::{FileSystem, OsFs};

pub use check::CheckReport;
pub use collation::Collation;
pub use config::{EngineConfig, FlushMethod, TunableValues, Tunables};
pub use dict::schema::{
    ColumnDef, ColumnKind, IndexSpec, InstantValue, RowFormat, TableDef, Value,
};
pub use dict::Table;
pub use error::{Error, Result};
pub use lock::Mode as LockMode;
pub use row::lock::LockRead;
pub use row::scan::KeyBound;
pub use row::{FieldTest, RowFilter, RowMaker, Values};
pub use startup::OpenReport;
pub use trx::{Isolation, WaitPolicy};

use engine::Inner;

/// An open data directory.
pub struct Engine {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    report: OpenReport,
}

impl Engine {
    /// Opens `cfg.datadir` on the real file system, initialising it if it is empty.
    pub fn open(cfg: EngineConfig) -> Result<Engine> {
        Self::open_with(cfg, Arc::new(OsFs::new()))
    }

    /// Opens a data directory through any file system (tests use the simulated disk).
    pub fn open_with(cfg: EngineConfig, fs: Arc<dyn FileSystem>) -> Result<Engine> {
        let (inner, report) = startup::open(cfg.clone(), fs.clone())?;
        if startup::resize_log(&inner)?.is_some() {
            drop(inner);
            let (inner, mut r2) = startup::open(cfg, fs)?;
            r2.initialised = report.initialised;
            return Ok(Self::start(inner, r2));
        }
        Ok(Self::start(inner, report))
    }

    fn start(inner: Arc<Inner>, report: OpenReport) -> Engine {
        let e = Engine {
            inner,
            threads: Mutex::new(Vec::new()),
            report,
        };
        if e.inner.cfg.background_threads {
            e.spawn_threads();
        }
        tracing::info!(
            "InnoDB: ready: {} tables, buffer pool {} pages of {} bytes, log sequence number {}",
            e.inner.dict.names().len(),
            e.inner.bp.n_frames(),
            e.inner.bp.page_size(),
            e.inner.log.lsn()
        );
        e
    }

    fn spawn_threads(&self) {
        let mut th = self.threads.lock();
        let n = self
            .inner
            .cfg
            .page_cleaners
            .min(self.inner.bp.instances().len())
            .max(1);
        for id in 0..n {
            let inner = self.inner.clone();
            th.push(spawn(&format!("page_cleaner_{id}"), move || {
                page_cleaner(&inner, id, n)
            }));
        }
        let inner = self.inner.clone();
        th.push(spawn("master", move || master(&inner)));
        self.inner.write_threads.start();
        for slot in 0..self.inner.write_threads.threads.len() {
            let inner = self.inner.clone();
            th.push(spawn(&format!("io_write_{slot}"), move || {
                flush::write_threads::run(&inner, slot)
            }));
        }
        self.inner.read_ahead.start();
        for slot in 0..self.inner.read_ahead.threads.len() {
            let inner = self.inner.clone();
            th.push(spawn(&format!("io_read_{slot}"), move || {
                buffer_pool::read_ahead::run(&inner, slot)
            }));
        }
        if self.inner.cfg.buffer_pool_load_at_startup {
            let inner = self.inner.clone();
            th.push(spawn("buf_load", move || {
                if let Err(e) = buffer_pool::dump::load(&inner) {
                    tracing::warn!("InnoDB: buffer pool load stopped: {e}");
                }
            }));
        }
        if !self.inner.trx.to_roll_back.lock().is_empty() {
            let inner = self.inner.clone();
            th.push(spawn("trx_rollback", move || {
                if let Err(e) = inner.trx.roll_back_recovered(&inner) {
                    tracing::error!("InnoDB: rollback of recovered transactions stopped: {e}");
                }
            }));
        }
        for i in 0..self.inner.cfg.purge_threads {
            let inner = self.inner.clone();
            th.push(spawn(&format!("purge_{i}"), move || purge::run(inner)));
        }
    }

    /// What opening found (initialisation, recovery figures).
    pub fn open_report(&self) -> &OpenReport {
        &self.report
    }

    /// The engine's internals, for diagnostics and tests.
    pub fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    pub fn tunables(&self) -> &Tunables {
        &self.inner.tun
    }

    /// Runs `f` on `t`'s clustered root latched in `mode`, in a mini-transaction of its own
    /// (a writer first makes room in the redo log, holding no latch).
    fn on_clustered_root<R>(
        &self,
        t: &Table,
        mode: buffer_pool::LatchMode,
        f: impl FnOnce(&mut mtr::Mtr<'_>, mtr::PageRef) -> R,
    ) -> Result<R> {
        if mode == buffer_pool::LatchMode::X {
            self.inner.log_free_check()?;
        }
        let idx = &t.clustered;
        let mut mtr = mtr::Mtr::new(&self.inner);
        let r = mtr.get(types::PageId::new(idx.space, idx.root), mode)?;
        let v = f(&mut mtr, r);
        mtr.commit()?;
        Ok(v)
    }

    /// The AUTO_INCREMENT mark persisted for `t` (0: none): the largest value the server said
    /// may have been handed out, kept in the clustered index root's PAGE_ROOT_AUTO_INC
    /// (docs/format/index-page.md) so a restart, or a crash, never hands a value out twice
    /// (MySQL 8.0's persistent counter).
    pub fn persisted_autoinc(&self, t: &Table) -> Result<u64> {
        self.on_clustered_root(t, buffer_pool::LatchMode::S, |mtr, r| {
            page::index_page::max_trx_id(mtr.page(r))
        })
    }

    /// Raises `t`'s persisted AUTO_INCREMENT mark to `v` (nothing is written when it is there
    /// already). Its redo precedes any commit that uses a value up to `v`, so after a crash the
    /// mark covers every committed value.
    pub fn persist_autoinc(&self, t: &Table, v: u64) -> Result<()> {
        self.on_clustered_root(t, buffer_pool::LatchMode::X, |mtr, r| {
            mtr.raise_max_trx_id(r, v)
        })
    }

    /// Sets `t`'s persisted AUTO_INCREMENT mark to exactly `v` (a clean shutdown writes the
    /// largest value handed out, lowering a mark that ran ahead of it).
    pub fn set_autoinc_mark(&self, t: &Table, v: u64) -> Result<()> {
        self.on_clustered_root(t, buffer_pool::LatchMode::X, |mtr, r| {
            mtr.write_u64(r, page::index_page::PAGE_MAX_TRX_ID, v)
        })
    }

    /// Whether a transaction holds or waits for `t`'s AUTO-INC lock (innodb_autoinc_lock_mode
    /// 1: an insert of a known number of rows then waits for the lock too, as in InnoDB).
    pub fn autoinc_requested(&self, t: &Table) -> bool {
        self.inner
            .trx
            .locks
            .has_requests(&crate::lock::LockKey::autoinc(t.id))
    }

    /// SET GLOBAL innodb_adaptive_hash_index: OFF stops its use at once and frees its entries;
    /// ON lets the searches build it again.
    pub fn set_adaptive_hash_index(&self, on: bool) {
        self.inner.ahi.switch(&self.inner.tun, on);
    }

    /// Starts a transaction at the default isolation level (`transaction_isolation`).
    pub fn begin(&self) -> Trx {
        let mut state = trx::TrxState::new();
        state.isolation = self.inner.tun.isolation();
        Trx {
            inner: self.inner.clone(),
            state,
            done: false,
            serializable_reads_lock: true,
        }
    }

    pub fn create_table(&self, def: TableDef) -> Result<Arc<Table>> {
        ddl::create_table(&self.inner, def)
    }

    pub fn drop_table(&self, name: &str) -> Result<()> {
        ddl::drop_table(&self.inner, name)
    }

    pub fn create_index(&self, table: &str, spec: IndexSpec) -> Result<()> {
        ddl::create_index(&self.inner, table, spec)
    }

    pub fn drop_index(&self, table: &str, index: &str) -> Result<()> {
        ddl::drop_index(&self.inner, table, index)
    }

    /// RENAME TABLE `from` TO `to` (`db/name`); the file moves with the name.
    pub fn rename_table(&self, from: &str, to: &str) -> Result<()> {
        ddl::rename_tables(&self.inner, &[(from.into(), to.into())], &[])
    }

    /// RENAME TABLE a TO b, c TO d, ...: applied in order, atomically (crash-safe as a whole).
    pub fn rename_tables(&self, renames: &[(String, String)]) -> Result<()> {
        ddl::rename_tables(&self.inner, renames, &[])
    }

    /// `rename_tables`, giving tables (named as the renames leave them) new SQL-layer
    /// options (`TableDef::options`) in the same atomic step.
    pub fn rename_tables_with_options(
        &self,
        renames: &[(String, String)],
        options: &[(String, String)],
    ) -> Result<()> {
        ddl::rename_tables(&self.inner, renames, options)
    }

    /// ALTER TABLE that changes only names and SQL-layer options, or adds columns instantly:
    /// table `def.name` takes `def`, under which its stored rows must read as they are
    /// (`TableDef::readable_as`), and the tables in `options` new options, atomically. No
    /// row is read or written.
    pub fn redefine_table(&self, def: TableDef, options: &[(String, String)]) -> Result<()> {
        ddl::redefine_table(&self.inner, def, options)
    }

    /// The open table `db/name`.
    pub fn table(&self, name: &str) -> Result<Arc<Table>> {
        self.inner
            .dict
            .get(name)
            .ok_or_else(|| Error::NoSuchTable(name.into()))
    }

    pub fn table_names(&self) -> Vec<String> {
        self.inner.dict.names()
    }

    /// Waits until the transactions active at a crash have been rolled back (they are rolled
    /// back in the background while the engine serves).
    pub fn wait_recovery_rollback(&self) {
        self.inner.trx.wait_recovery_rollback();
    }

    /// XIDs of the transactions recovered in the prepared state (XA RECOVER).
    pub fn prepared_xids(&self) -> Vec<Vec<u8>> {
        self.inner
            .trx
            .prepared
            .lock()
            .iter()
            .filter_map(|t| t.xid.clone())
            .collect()
    }

    /// Finishes a recovered prepared transaction (XA COMMIT / XA ROLLBACK `xid`). Returns false
    /// if no recovered prepared transaction has that XID.
    pub fn finish_prepared(&self, xid: &[u8], commit: bool) -> Result<bool> {
        let t = {
            let mut g = self.inner.trx.prepared.lock();
            match g.iter().position(|t| t.xid.as_deref() == Some(xid)) {
                Some(i) => g.remove(i),
                None => return Ok(false),
            }
        };
        let mut trx = Trx {
            inner: self.inner.clone(),
            state: t,
            done: false,
            serializable_reads_lock: true,
        };
        if commit {
            trx.done = true;
            trx.state.commit(&self.inner)?;
        } else {
            trx.done = true;
            trx.state.rollback(&self.inner)?;
        }
        Ok(true)
    }

    /// Sizes and row and distinct-key estimates of table `t`, sampling at most `sample`
    /// leaves of each index (stats.rs).
    pub fn table_stats(&self, t: &Table, sample: usize) -> Result<stats::TableStats> {
        stats::table_stats(&self.inner, t, sample)
    }

    /// CHECK TABLE: verifies `t`'s B-trees and its secondary indexes against its clustered
    /// index. The caller must hold a shared lock on `t` (`Trx::lock_table`), so no change of
    /// the table is in progress or uncommitted.
    pub fn check_table(&self, t: &Arc<Table>) -> Result<CheckReport> {
        self.wait_recovery_rollback();
        check::check_one_table(&self.inner, t)
    }

    /// Estimated rows of `t` between two bounds of an index (None: the clustered one; a name
    /// the engine does not know is an error), with the index's statistics `st`.
    pub fn estimate_range(
        &self,
        t: &Table,
        index: Option<&str>,
        from: &KeyBound,
        to: &KeyBound,
        st: &stats::IndexStats,
    ) -> Result<u64> {
        let i = match index {
            None => None,
            Some(name) => Some(
                t.secondary
                    .iter()
                    .position(|s| s.spec.name == name)
                    .ok_or_else(|| Error::NoSuchIndex(name.to_string()))?,
            ),
        };
        stats::range_rows(&self.inner, t, i, from, to, st)
    }

    /// Verifies checksums, B-tree structure, index agreement, undo and space accounting.
    /// Expects no concurrent writers; waits for the rollback of recovered transactions first.
    pub fn check(&self) -> Result<CheckReport> {
        self.wait_recovery_rollback();
        let _still = self.inner.bg_gate.write();
        check::check(&self.inner)
    }

    /// Flushes all dirty pages and writes a checkpoint at the current LSN.
    pub fn flush_and_checkpoint(&self) -> Result<()> {
        self.inner.flush_all_and_checkpoint()
    }

    /// Flushes up to `n` of the oldest dirty pages and writes a checkpoint (deterministic tests).
    pub fn flush_some(&self, n: usize) -> Result<usize> {
        let all: Vec<usize> = (0..self.inner.bp.instances().len()).collect();
        let k = self
            .inner
            .flush_list_batch(&all, u64::MAX, n, 0, flush::Caller::Background)?;
        self.inner.checkpoint()?;
        Ok(k)
    }

    /// Runs purge until the history list is empty (tests and shutdown with slow purge).
    pub fn purge_all(&self) -> Result<usize> {
        let mut n = 0;
        loop {
            let mut k = purge::purge_batch(&self.inner, 1024)?;
            if k == 0 {
                // A purge thread may be amid a batch it took (or may give a log back after a
                // failure): wait it out through the gate every batch holds, then look again.
                drop(self.inner.purge_gate.write());
                k = purge::purge_batch(&self.inner, 1024)?;
                if k == 0 {
                    return Ok(n);
                }
            }
            n += k;
        }
    }

    /// One page cleaner and master iteration, for deterministic tests without background
    /// threads.
    pub fn background_tick(&self) -> Result<()> {
        self.inner
            .page_cleaner_iteration(0, 1, Duration::from_secs(1), &mut 0.0)?;
        let mut t = Instant::now() - Duration::from_secs(3600);
        self.inner.master_tick(&mut t)
    }

    fn stop_threads(&self) {
        self.inner.shutting_down.store(true, Ordering::Release);
        self.inner.read_ahead.stop();
        self.inner.write_threads.stop();
        self.inner.flush.wake_cleaners();
        self.inner.trx.wake_all_purge();
        for h in self.threads.lock().drain(..) {
            let _ = h.join();
        }
    }

    /// SET GLOBAL innodb_buffer_pool_dump_now = ON: writes `ib_buffer_pool` now, in the
    /// background (progress in Innodb_buffer_pool_dump_status). A request while a dump runs
    /// is ignored, as InnoDB does.
    pub fn buffer_pool_dump_now(&self) {
        if !buffer_pool::dump::claim(&self.inner.stats.bp_dump.dump) {
            return;
        }
        let inner = self.inner.clone();
        self.threads.lock().push(spawn("buf_dump", move || {
            let pct = inner.tun.buffer_pool_dump_pct.load(Ordering::Relaxed);
            match buffer_pool::dump::dump(&inner, pct) {
                Ok(n) => tracing::info!(
                    "InnoDB: Buffer pool(s) dump completed: {n} pages in {}",
                    buffer_pool::dump::FILE_NAME
                ),
                Err(e) => tracing::warn!("InnoDB: buffer pool dump failed: {e}"),
            }
        }));
    }

    /// SET GLOBAL innodb_buffer_pool_load_now = ON: reads the pages `ib_buffer_pool` lists,
    /// in the background, as at startup (only into free frames). Ignored while a load runs.
    pub fn buffer_pool_load_now(&self) {
        if !buffer_pool::dump::claim(&self.inner.stats.bp_dump.load) {
            return;
        }
        let inner = self.inner.clone();
        self.threads.lock().push(spawn("buf_load", move || {
            if let Err(e) = buffer_pool::dump::load(&inner) {
                tracing::warn!("InnoDB: buffer pool load stopped: {e}");
            }
        }));
    }

    /// SET GLOBAL innodb_buffer_pool_size: resizes the pool online, in chunks, in the
    /// background (progress in Innodb_buffer_pool_resize_status). Returns the size the pool
    /// will have (rounded up to a multiple of chunk size x instances), or a message if a resize
    /// is already running or the size is beyond what the chunk table holds.
    pub fn resize_buffer_pool(&self, bytes: u64) -> std::result::Result<u64, String> {
        let geo = self.inner.bp.geometry();
        let Some(chunks) = geo.chunks_for(bytes) else {
            return Err(format!(
                "innodb_buffer_pool_size can be at most {} bytes with innodb_buffer_pool_chunk_size                  {} and {} instances",
                geo.max_pool_bytes(),
                geo.chunk_bytes(),
                geo.instances
            ));
        };
        let want = buffer_pool::Geometry { chunks, ..geo };
        if !self.inner.stats.bp_resize.claim() {
            return Err("Another buffer pool resize is already in progress.".into());
        }
        buffer_pool::resize::begin(&self.inner, chunks);
        let inner = self.inner.clone();
        self.threads.lock().push(spawn("buf_resize", move || {
            buffer_pool::resize::run(&inner, chunks);
        }));
        Ok(want.pool_bytes())
    }

    /// SET GLOBAL innodb_buffer_pool_load_abort = ON: stops a running load.
    pub fn buffer_pool_load_abort(&self) {
        let running = matches!(
            *self.inner.stats.bp_dump.load.lock(),
            buffer_pool::dump::Phase::Running { .. }
        );
        if running {
            self.inner
                .stats
                .bp_dump
                .abort_load
                .store(true, Ordering::Release);
        }
    }

    /// Clean shutdown: stops background work, flushes every page, writes a checkpoint.
    pub fn shutdown(self) -> Result<()> {
        self.stop_threads();
        let tun = &self.inner.tun;
        if tun.buffer_pool_dump_at_shutdown.load(Ordering::Relaxed) {
            let pct = tun.buffer_pool_dump_pct.load(Ordering::Relaxed);
            match buffer_pool::dump::dump(&self.inner, pct) {
                Ok(n) => tracing::info!(
                    "InnoDB: Buffer pool(s) dump completed: {n} pages in {}",
                    buffer_pool::dump::FILE_NAME
                ),
                // The dump only warms the next start: its failure does not stop the shutdown.
                Err(e) => tracing::warn!("InnoDB: buffer pool dump failed: {e}"),
            }
        }
        let r = self.inner.flush_all_and_checkpoint();
        match &r {
            Ok(()) => tracing::info!(
                "InnoDB: Shutdown completed; log sequence number {}",
                self.inner.log.lsn()
            ),
            Err(e) => tracing::error!("InnoDB: shutdown could not flush: {e}"),
        }
        r
    }

    /// Stops without flushing anything, as a crash would (tests).
    pub fn kill(self) {
        self.inner.fail_stop("killed by a test");
        self.stop_threads();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_threads();
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .expect("spawn a background thread")
}

fn page_cleaner(inner: &Inner, id: usize, n: usize) {
    let mut seen = 0;
    let mut last = Instant::now();
    let mut credit = 0.0;
    while !inner.shutting_down.load(Ordering::Acquire) {
        let r = {
            let _gate = inner.bg_gate.read();
            let dt = last.elapsed();
            last = Instant::now();
            inner.page_cleaner_iteration(id, n, dt, &mut credit)
        };
        // Under redo pressure the cleaner comes back after 50 ms; otherwise once a second (or
        // when woken: a user thread short of frames or of log space).
        let mut nap = Duration::from_secs(1);
        match r {
            Ok((_, true)) => nap = Duration::from_millis(50),
            Ok(_) => {}
            Err(e) => {
                if !e.is_fatal() {
                    tracing::error!("InnoDB: page cleaner {id}: {e}");
                }
                if inner.failed.load(Ordering::Acquire) {
                    return;
                }
            }
        }
        inner.flush.wait(&mut seen, nap);
    }
}

fn master(inner: &Inner) {
    let mut last_flush = Instant::now();
    while !inner.shutting_down.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(200));
        let r = {
            let _gate = inner.bg_gate.read();
            inner.master_tick(&mut last_flush)
        };
        if let Err(e) = r {
            if !e.is_fatal() {
                tracing::error!("InnoDB: master thread: {e}");
            }
            if inner.failed.load(Ordering::Acquire) {
                return;
            }
        }
    }
}

/// How many replacements of a table one statement follows (`Trx::with_table`) before it
/// gives up with NoSuchTable.
const MAX_TABLE_FOLLOWS: usize = 1000;

/// A transaction. Dropping it without commit rolls it back.
pub struct Trx {
    inner: Arc<Inner>,
    state: trx::TrxState,
    done: bool,
    serializable_reads_lock: bool,
}

impl Trx {
    /// The current definition of `t` with its metadata lock held shared, and first, with
    /// `lock`, the table lock a change (IX) or a locking read (IS, IX) takes. The table lock
    /// is had before the metadata lock, never while holding it: a DDL holding a conflicting
    /// table lock (ALTER TABLE's copy holds S until its new table has the name) can take the
    /// metadata lock to swap the table while this waits. A handle whose table was replaced by
    /// one with other columns (ALTER TABLE) is error 1412: the caller made its values for
    /// the old columns.
    fn with_table<R>(
        &mut self,
        t: &Arc<Table>,
        lock: Option<LockMode>,
        f: impl FnOnce(&mut Self, &Arc<Table>) -> Result<R>,
    ) -> Result<R> {
        let first = t.clone();
        let mut t = t.clone();
        // Each pass that goes round follows a DDL that replaced the table (a rebuild, a
        // redefinition, a rename swap); a run of them, as a migration issues, is followed to
        // the end, a table replaced without end is not.
        for _ in 0..MAX_TABLE_FOLLOWS {
            if t.dropped.load(Ordering::Acquire) {
                let mut next = self.inner.dict.get(&t.name);
                if next
                    .as_ref()
                    .is_none_or(|n| n.dropped.load(Ordering::Acquire))
                {
                    // The DDL that replaced it (which holds `ddl` throughout) may not have
                    // published the successor yet (a swap of names removes the old ones
                    // first): wait for it to end. No metadata lock is held here.
                    drop(self.inner.dict.ddl.lock());
                    next = self.inner.dict.get(&t.name);
                }
                t = next.ok_or_else(|| Error::NoSuchTable(t.name.clone()))?;
                if t.def.columns != first.def.columns {
                    return Err(Error::TableDefChanged);
                }
                continue;
            }
            if let Some(mode) = lock {
                let r = self.table_lock(&t, mode);
                self.after(r)?;
                if t.dropped.load(Ordering::Acquire) {
                    continue;
                }
            }
            // A transaction that holds a table lock on the table already has a stake in it
            // (MySQL holds a transaction's metadata locks until it ends): it enters past a
            // DDL waiting for the metadata lock (latch F5), which may be waiting for a
            // statement that waits for this transaction's row locks.
            let _g = if self.state.has_table_lock(t.id) {
                t.mdl.read_recursive()
            } else {
                t.mdl.read()
            };
            if t.dropped.load(Ordering::Acquire) {
                continue;
            }
            // With innodb_snapshot_isolation, SERIALIZABLE takes its read view at its first
            // statement, whatever it is (MariaDB), so later conflicts are detected.
            if self.state.isolation == Isolation::Serializable
                && self.inner.tun.snapshot_isolation.load(Ordering::Relaxed)
            {
                let _ = self.state.read_view(&self.inner);
            }
            self.state.enter(&self.inner);
            let r = f(self, &t);
            self.state.leave(&self.inner);
            return self.after(r);
        }
        Err(Error::NoSuchTable(t.name.clone()))
    }

    /// Applies InnoDB's rule for errors that end the transaction: a deadlock victim, a
    /// snapshot-isolation conflict, and (with innodb_rollback_on_timeout) a lock wait timeout
    /// roll the whole transaction back; the `Trx` then starts afresh.
    fn after<R>(&mut self, r: Result<R>) -> Result<R> {
        if let Err(e) = &r {
            let whole = matches!(e, Error::Deadlock | Error::RecordChanged(_))
                || (matches!(e, Error::LockWaitTimeout)
                    && self.inner.tun.rollback_on_timeout.load(Ordering::Relaxed));
            if whole {
                self.state.rollback(&self.inner)?;
                let mut fresh = trx::TrxState::new();
                fresh.isolation = self.state.isolation;
                fresh.lock_wait_timeout = self.state.lock_wait_timeout;
                fresh.owner = self.state.owner;
                self.state = fresh;
            }
        }
        r
    }

    /// Takes a table lock for this transaction (IX before changes, IS before locking reads,
    /// S or X for LOCK TABLES), waiting if another transaction holds a conflicting one.
    fn table_lock(&mut self, t: &Table, mode: LockMode) -> Result<()> {
        self.state.lock_table(&self.inner, t.id, mode)
    }

    /// innodb_max_purge_lag: waits before a change while purge is far behind (purge
    /// `dml_delay`), outside the engine.
    fn purge_lag_delay(&self) {
        let d = purge::dml_delay(&self.inner);
        if !d.is_zero() {
            std::thread::sleep(d);
        }
    }

    /// The table's AUTO-INC lock until the statement ends (`end_statement`), as InnoDB takes
    /// it for innodb_autoinc_lock_mode 0 and 1: another statement that asks for it waits,
    /// so the values a statement allocates meanwhile are consecutive.
    pub fn lock_autoinc(&mut self, t: &Arc<Table>) -> Result<()> {
        self.with_table(t, None, |s, t| s.state.lock_autoinc(&s.inner, t.id))
    }

    /// LOCK TABLES: a shared (READ) or exclusive (WRITE) table lock until the transaction ends.
    pub fn lock_table(&mut self, t: &Arc<Table>, exclusive: bool) -> Result<()> {
        let mode = if exclusive { LockMode::X } else { LockMode::S };
        self.with_table(t, Some(mode), |_, _| Ok(()))
    }

    /// innodb_lock_wait_timeout for this transaction (the session value), in seconds.
    pub fn set_lock_wait_timeout(&mut self, secs: u64) {
        self.state.lock_wait_timeout = Some(Duration::from_secs(secs));
    }

    /// Plain reads at SERIALIZABLE are locking reads (InnoDB's rule for reads inside a
    /// transaction); the server turns this off for an autocommit SELECT.
    pub fn set_serializable_reads_lock(&mut self, on: bool) {
        self.serializable_reads_lock = on;
    }

    /// NOWAIT or SKIP LOCKED for the locking reads of the current statement (reset to
    /// waiting when the statement ends).
    pub fn set_lock_wait_policy(&mut self, p: WaitPolicy) {
        self.state.wait_policy = p;
    }

    /// Whether a consistent read locks instead (SERIALIZABLE, outside an autocommit
    /// statement): `get` and `scan` then read as LOCK IN SHARE MODE.
    pub fn reads_lock(&self) -> bool {
        self.serializable_reads_lock && self.state.isolation == Isolation::Serializable
    }

    /// A locking read of the row with primary key `key` (SELECT ... FOR UPDATE with `how`
    /// Exclusive, LOCK IN SHARE MODE with Shared). Returns the newest version, locked.
    pub fn get_locking(
        &mut self,
        t: &Arc<Table>,
        key: &[Value],
        how: LockRead,
    ) -> Result<Option<Vec<Value>>> {
        self.with_table(t, Some(intention(how)), |s, t| {
            let k = row::encode_key(t, key)?;
            let r = row::lock::get(&s.inner, &mut s.state, t, &k, how)?;
            if r.is_some() {
                s.inner.stats.rows_read(&t.name, 1);
            }
            Ok(r)
        })
    }

    /// A locking range scan (forward or backward) of the clustered index or a secondary index:
    /// the rows `pred` accepts, each locked (InnoDB's locking rules per isolation level, see
    /// `row::lock`). `semi_consistent`: this is the read of an UPDATE or DELETE, which at READ
    /// COMMITTED skips rows locked by others whose committed version `pred` rejects.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_locking(
        &mut self,
        t: &Arc<Table>,
        index: Option<&str>,
        from: KeyBound,
        to: KeyBound,
        forward: bool,
        how: LockRead,
        semi_consistent: bool,
        pred: &mut dyn FnMut(&[Value]) -> bool,
    ) -> Result<Vec<Vec<Value>>> {
        self.scan_locking_limit(
            t,
            index,
            from,
            to,
            forward,
            how,
            semi_consistent,
            None,
            pred,
        )
    }

    /// `scan_locking` that stops after `limit` rows, in either direction, as InnoDB does for
    /// `UPDATE/DELETE ... [ORDER BY key] LIMIT n` and `SELECT ... ORDER BY key DESC LIMIT n
    /// FOR UPDATE` (no lock on the rows after them).
    #[allow(clippy::too_many_arguments)]
    pub fn scan_locking_limit(
        &mut self,
        t: &Arc<Table>,
        index: Option<&str>,
        from: KeyBound,
        to: KeyBound,
        forward: bool,
        how: LockRead,
        semi_consistent: bool,
        limit: Option<usize>,
        pred: &mut dyn FnMut(&[Value]) -> bool,
    ) -> Result<Vec<Vec<Value>>> {
        self.with_table(t, Some(intention(how)), |s, t| {
            let i = index_no(t, index)?;
            let lo = row::scan::bound_key(t, i, &from)?;
            let hi = row::scan::bound_key(t, i, &to)?;
            // Every row handed to the caller's test is a row read (InnoDB counts the rows it
            // returns to the server, which then tests WHERE), not only those kept.
            let mut seen = 0u64;
            let mut counted = |r: &[Value]| {
                seen += 1;
                pred(r)
            };
            let rows = row::lock::scan(
                &s.inner,
                &mut s.state,
                t,
                i,
                lo,
                hi,
                forward,
                how,
                semi_consistent,
                limit,
                &mut counted,
            )?;
            s.inner.stats.rows_read(&t.name, seen);
            Ok(rows)
        })
    }

    pub fn id(&self) -> u64 {
        self.state.id
    }

    pub fn isolation(&self) -> Isolation {
        self.state.isolation
    }

    /// Sets the isolation level (SET TRANSACTION ISOLATION LEVEL). It governs the reads that
    /// follow; a REPEATABLE READ view already taken stays.
    pub fn set_isolation(&mut self, level: Isolation) {
        self.state.isolation = level;
    }

    /// Who runs the transaction (the server's connection id), as INNODB_TRX and data_locks
    /// show it.
    pub fn set_owner(&mut self, owner: u64) {
        self.state.owner = owner;
    }

    /// Takes the read view now (START TRANSACTION WITH CONSISTENT SNAPSHOT).
    pub fn start_consistent_snapshot(&mut self) {
        let _ = self.state.read_view(&self.inner);
    }

    /// Starts a statement: at READ COMMITTED its reads share one view (module `trx`).
    pub fn begin_statement(&mut self) {
        self.state.begin_statement();
    }

    pub fn end_statement(&mut self) {
        self.state.end_statement(&self.inner);
    }

    fn read_mode_view(&mut self) -> Option<(Arc<trx::view::ReadView>, u64)> {
        self.state
            .read_view(&self.inner)
            .map(|v| (v, self.state.id))
    }

    /// Inserts a row (values in column order).
    pub fn insert(&mut self, t: &Arc<Table>, row: &[Value]) -> Result<()> {
        self.purge_lag_delay();
        self.with_table(t, Some(LockMode::IX), |s, t| {
            row::insert(&s.inner, &mut s.state, t, row)?;
            s.inner.stats.rows_of(&t.name).inserted.inc();
            t.note_modified();
            Ok(())
        })
    }

    /// The row with primary key `key` (for a table without a primary key: its row id), as a
    /// consistent read sees it.
    pub fn get(&mut self, t: &Arc<Table>, key: &[Value]) -> Result<Option<Vec<Value>>> {
        if self.reads_lock() {
            return self.get_locking(t, key, LockRead::Shared);
        }
        self.with_table(t, None, |s, t| {
            let k = row::encode_key(t, key)?;
            let view = s.read_mode_view();
            let mode = match &view {
                Some((v, own)) => row::ReadMode::View(v, *own),
                None => row::ReadMode::Latest,
            };
            let r = row::get(&s.inner, t, &k, mode)?;
            if r.is_some() {
                s.inner.stats.rows_read(&t.name, 1);
            }
            Ok(r)
        })
    }

    /// Sets columns (by number) of the row with primary key `key`; false if there is none.
    pub fn update(
        &mut self,
        t: &Arc<Table>,
        key: &[Value],
        changes: &[(usize, Value)],
    ) -> Result<bool> {
        self.purge_lag_delay();
        self.with_table(t, Some(LockMode::IX), |s, t| {
            let k = row::encode_key(t, key)?;
            let found = row::update(&s.inner, &mut s.state, t, &k, changes)?;
            if found {
                s.inner.stats.rows_of(&t.name).updated.inc();
                t.note_modified();
            }
            Ok(found)
        })
    }

    /// Deletes the row with primary key `key`; false if there is none.
    pub fn delete(&mut self, t: &Arc<Table>, key: &[Value]) -> Result<bool> {
        self.purge_lag_delay();
        self.with_table(t, Some(LockMode::IX), |s, t| {
            let k = row::encode_key(t, key)?;
            let found = row::delete(&s.inner, &mut s.state, t, &k)?;
            if found {
                s.inner.stats.rows_of(&t.name).deleted.inc();
                t.note_modified();
            }
            Ok(found)
        })
    }

    /// Rows of the clustered index (`index` None) or a secondary index between two key bounds
    /// (prefixes of the index's columns), forwards or backwards.
    pub fn scan(
        &mut self,
        t: &Arc<Table>,
        index: Option<&str>,
        from: KeyBound,
        to: KeyBound,
        forward: bool,
    ) -> Result<RowIter> {
        self.scan_by(t, index, (from, to), forward, Arc::new(row::Values))
    }

    /// `scan`, the rows made by `maker` (decoded straight from the page into the reader's own
    /// values where they are read in place).
    pub fn scan_by<M: RowMaker>(
        &mut self,
        t: &Arc<Table>,
        index: Option<&str>,
        (from, to): (KeyBound, KeyBound),
        forward: bool,
        maker: Arc<M>,
    ) -> Result<RowIter<M>> {
        if self.reads_lock() {
            let rows = self.scan_locking(
                t,
                index,
                from,
                to,
                forward,
                LockRead::Shared,
                false,
                &mut |_| true,
            )?;
            return Ok(RowIter {
                inner: self.inner.clone(),
                src: RowSrc::Locked(rows.into_iter(), maker),
                uncounted: 0,
            });
        }
        let i = index_no(t, index)?;
        let view = self.read_mode_view();
        let scan = row::scan::RowScan::new(t.clone(), i, (&from, &to), forward, view, maker)?;
        Ok(RowIter {
            inner: self.inner.clone(),
            src: RowSrc::Scan(Box::new(scan)),
            uncounted: 0,
        })
    }

    /// A savepoint to roll back to.
    pub fn savepoint(&self) -> u64 {
        self.state.savepoint()
    }

    pub fn rollback_to_savepoint(&mut self, sp: u64) -> Result<()> {
        self.state.rollback_to(&self.inner, sp)
    }

    /// XA PREPARE: after this returns (with innodb_flush_log_at_trx_commit=1) the transaction
    /// survives a crash in the prepared state; `commit` or `rollback` finishes it.
    pub fn prepare(&mut self, xid: &[u8]) -> Result<()> {
        self.state.prepare(&self.inner, xid)
    }

    /// Commits; with innodb_flush_log_at_trx_commit=1 the commit is durable when this returns.
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        self.state.commit(&self.inner).map(|_| ())
    }

    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.state.rollback(&self.inner)
    }
}

impl Drop for Trx {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.state.rollback(&self.inner) {
                if !e.is_fatal() {
                    tracing::error!("InnoDB: rollback of an abandoned transaction failed: {e}");
                }
            }
        }
    }
}

fn index_no(t: &Table, index: Option<&str>) -> Result<Option<usize>> {
    match index {
        None => Ok(None),
        Some(n) => Ok(Some(
            t.secondary_by_name(n)
                .ok_or_else(|| Error::NoSuchIndex(n.into()))?,
        )),
    }
}

/// The table lock a locking read takes first.
fn intention(how: LockRead) -> LockMode {
    match how {
        LockRead::Shared => LockMode::IS,
        LockRead::Exclusive => LockMode::IX,
    }
}

enum RowSrc<M: RowMaker> {
    Scan(Box<row::scan::RowScan<M>>),
    /// Rows a locking read already returned (SERIALIZABLE), to be made by the maker.
    Locked(std::vec::IntoIter<Vec<Value>>, Arc<M>),
}

/// Rows from `Trx::scan` (engine values) or `Trx::scan_by` (made by a `RowMaker`).
pub struct RowIter<M: RowMaker = row::Values> {
    inner: Arc<Inner>,
    src: RowSrc<M>,
    /// Rows returned and not yet added to the read counters (added 64 at a time, at the end
    /// and when dropped).
    uncounted: u64,
}

impl<M: RowMaker> RowIter<M> {
    /// Says which columns the reader uses (by position in the table definition); the others
    /// may come back as NULL instead of their value, saving their decoding.
    pub fn with_columns(mut self, wanted: Vec<bool>) -> RowIter<M> {
        if let RowSrc::Scan(s) = &mut self.src {
            s.set_columns(wanted);
        }
        self
    }

    /// Says the reader wants about `n` rows first (1: a single row), so no more are decoded
    /// ahead of it at first.
    pub fn first_batch(mut self, n: usize) -> RowIter<M> {
        if let RowSrc::Scan(s) = &mut self.src {
            s.first_batch(n);
        }
        self
    }

    /// Tests a consistent read applies to each record before making its row (row/scan.rs
    /// F1-F3); a locking read (SERIALIZABLE's) takes every row as before.
    pub fn with_filter(mut self, filter: Arc<RowFilter>) -> RowIter<M> {
        if let RowSrc::Scan(s) = &mut self.src {
            s.set_filter(filter);
        }
        self
    }
}

impl<M: RowMaker> RowIter<M> {
    fn count_read(&mut self) {
        if let RowSrc::Scan(s) = &self.src {
            let n = self.uncounted + s.take_filtered();
            if n > 0 {
                self.inner.stats.rows_read(s.table_name(), n);
            }
            self.uncounted = 0;
        }
    }
}

impl<M: RowMaker> Iterator for RowIter<M> {
    type Item = Result<M::Row>;
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.src {
            RowSrc::Scan(s) => {
                let r = s.next(&self.inner).transpose();
                if let Some(Ok(_)) = r {
                    self.uncounted += 1;
                    if self.uncounted < 64 {
                        return r;
                    }
                }
                self.count_read();
                r
            }
            // Counted by the locking scan that read them.
            RowSrc::Locked(v, maker) => v.next().map(|r| Ok(maker.of_values(r))),
        }
    }
}

impl<M: RowMaker> Drop for RowIter<M> {
    fn drop(&mut self) {
        self.count_read();
    }
}
