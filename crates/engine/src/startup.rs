//! Opening a data directory: initialise it if empty, otherwise recover. (InnoDB: srv0start.)
//!
//! STATE MACHINE (the life of a restart)
//! ```text
//!  empty dir --create ibdata1, redo--> bootstrap --------------------------------+
//!  existing  --page size check, open redo--> parse redo from checkpoint          |
//!     no redo after the checkpoint ------------------------------------------+   |
//!     redo found: doublewrite restore (space 0) -> apply space 0 ->          |   |
//!       map spaces from SYS_TABLES -> doublewrite restore -> apply the rest  |   |
//!                                                                            v   v
//!  read rsegs + id counters -> roll back incomplete transactions -> load dictionary ->
//!  finish interrupted DDL -> remove orphan files -> (resize redo) -> ready
//! ```
//! Every step reads what the previous one made consistent; a crash during any of them is
//! recovered by running the sequence again (recovery I2, rollback idempotence).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use innoxide_io::FileSystem;

use crate::btree::adaptive_hash::AdaptiveHash;
use crate::buffer_pool::read_ahead::ReadAhead;
use crate::buffer_pool::{BufferPool, Geometry};
use crate::config::{EngineConfig, Tunables};
use crate::dict::{self, Dict};
use crate::doublewrite::{self, Doublewrite};
use crate::engine::{EngineStats, Inner};
use crate::error::{Error, Result};
use crate::flush::write_threads::WriteThreads;
use crate::flush::FlushState;
use crate::mach::read_u32;
use crate::purge::PurgeStats;
use crate::recovery::{self, Parsed};
use crate::redo::file::{self, LogFiles};
use crate::redo::Log;
use crate::tablespace::file::Fil;
use crate::tablespace::fsp;
use crate::trx::{self, TrxSys};
use crate::types::SYSTEM_SPACE;
use crate::{ddl, page};

/// What opening found and did.
#[derive(Debug, Default, Clone)]
pub struct OpenReport {
    pub initialised: bool,
    pub checkpoint_lsn: u64,
    pub end_lsn: u64,
    pub redo_groups: u64,
    pub redo_records: u64,
    pub pages_recovered: usize,
    pub pages_restored_from_doublewrite: usize,
    /// Transactions active at the crash, rolled back (in the background when background
    /// threads run: `Engine::wait_recovery_rollback`).
    pub trx_rolled_back: usize,
    /// Transactions found prepared (XA), kept for XA COMMIT / XA ROLLBACK.
    pub trx_prepared: usize,
    pub recovery_secs: f64,
}

fn startup_io(path: &Path, e: std::io::Error) -> Error {
    Error::Startup(format!("InnoDB: cannot access {}: {e}", path.display()))
}

/// True if ibdata1 exists but a crash during initialisation left nothing to recover: its
/// header page was never flushed (zeros or the LSN-0 creation image) and the redo log is
/// missing or holds nothing.
fn initialisation_interrupted(
    fs: &Arc<dyn FileSystem>,
    datadir: &Path,
    cfg: &EngineConfig,
    failed: &Arc<AtomicBool>,
) -> Result<bool> {
    let p = datadir.join("ibdata1");
    let f = fs.open(&p).map_err(|e| startup_io(&p, e))?;
    let mut b = vec![0u8; cfg.page_size];
    if f.len().map_err(|e| startup_io(&p, e))? >= b.len() as u64 {
        f.read_at(&mut b, 0).map_err(|e| startup_io(&p, e))?;
    }
    // Bootstrap's first flush gives page 0 an LSN; before that it is zeros or the creation image.
    if !page::is_all_zero(&b) && page::lsn(&b) != 0 {
        return Ok(false);
    }
    if !LogFiles::exists(fs, datadir)? {
        return Ok(true);
    }
    let files = LogFiles::open(
        fs,
        datadir,
        cfg.page_size as u32,
        cfg.flush_method.log_flags(),
        failed.clone(),
    )?;
    let cp = files.read_checkpoint()?;
    Ok(recovery::parse(&files, cp.lsn)?.is_empty())
}

/// Removes ibdata1 and the redo log of a data directory whose initialisation never finished.
fn wipe_system_files(fs: &Arc<dyn FileSystem>, datadir: &Path) -> Result<()> {
    let names = ["ibdata1".to_string(), "ib_logfile101".to_string()];
    for name in names.into_iter().chain((0..100).map(file::file_name)) {
        let p = datadir.join(name);
        if fs.exists(&p).unwrap_or(false) {
            fs.remove(&p).map_err(|e| startup_io(&p, e))?;
        }
    }
    fs.sync_dir(datadir).map_err(|e| startup_io(datadir, e))
}

/// Checks the format version and page size recorded in ibdata1 against this build and the
/// configuration.
fn check_page_size(fs: &Arc<dyn FileSystem>, datadir: &Path, want: usize) -> Result<()> {
    let p = datadir.join("ibdata1");
    let f = fs.open(&p).map_err(|e| startup_io(&p, e))?;
    let mut b = vec![0u8; 4096];
    f.read_at(&mut b, 0).map_err(|e| startup_io(&p, e))?;
    let flags = read_u32(&b, fsp::FSP_FLAGS);
    let version = flags >> 8 & 0xff;
    match fsp::page_size_of_flags(flags) {
        Some(_) if version != fsp::FORMAT_VERSION => Err(Error::Startup(format!(
            "InnoDB: Data file '{}' has format version {version}, this server reads version {} \
             (docs/format/tablespace.md lists what changed); dump the data with the server that \
             wrote it and load it into a new data directory",
            p.display(),
            fsp::FORMAT_VERSION
        ))),
        Some(ps) if ps == want => Ok(()),
        // Unreadable (torn) header: the redo header already vouched for the page size.
        None => Ok(()),
        Some(ps) => Err(Error::Startup(format!(
            "InnoDB: Data file '{}' uses page size {ps}, but the innodb_page_size start-up parameter \
             is {want}; start with innodb_page_size={ps} (the page size is fixed when a data \
             directory is initialised)",
            p.display()
        ))),
    }
}

fn build_inner(
    mut cfg: EngineConfig,
    fs: Arc<dyn FileSystem>,
    fil: Fil,
    files: LogFiles,
    cp: file::Checkpoint,
    end_lsn: u64,
    failed: Arc<AtomicBool>,
) -> Inner {
    let tun = Arc::new(Tunables::new(&cfg.tunables));
    let mut trx_sys = TrxSys::new();
    trx_sys.locks.deadlock_detect = tun.deadlock_detect.clone();
    let log = Log::new(files, cfg.log_buffer_size, cp, end_lsn);
    let geo = Geometry::new(
        cfg.page_size,
        cfg.buffer_pool_size,
        cfg.buffer_pool_chunk_size,
        cfg.buffer_pool_instances,
    );
    // What is in force, for SHOW VARIABLES (InnoDB adjusts both the same way).
    if geo.pool_bytes() != cfg.buffer_pool_size {
        tracing::info!(
            "InnoDB: innodb_buffer_pool_size is {} bytes and innodb_buffer_pool_chunk_size {} bytes \
             (the pool is a multiple of chunk size x innodb_buffer_pool_instances)",
            geo.pool_bytes(),
            geo.chunk_bytes()
        );
    }
    cfg.buffer_pool_size = geo.pool_bytes();
    cfg.buffer_pool_chunk_size = geo.chunk_bytes();
    let bp = BufferPool::new(geo, tun.clone());
    let ahi = AdaptiveHash::new(cfg.adaptive_hash_index_parts, cfg.buffer_pool_size);
    let dblwr = Doublewrite::new(cfg.doublewrite, cfg.page_size);
    Inner {
        tun,
        fs,
        fil,
        bp,
        read_ahead: ReadAhead::new(cfg.read_io_threads),
        ahi,
        log,
        dblwr,
        flush: FlushState::new(end_lsn),
        write_threads: WriteThreads::new(cfg.write_io_threads),
        dict: Dict::new(),
        trx: trx_sys,
        purge_stats: PurgeStats::default(),
        failed,
        shutting_down: AtomicBool::new(false),
        bg_gate: crate::latch::RwLock::new(()),
        purge_gate: crate::latch::RwLock::new(()),
        stats: EngineStats::default(),
        cfg,
    }
}

/// Opens (or initialises) a data directory and brings it to a consistent state.
pub fn open(cfg: EngineConfig, fs: Arc<dyn FileSystem>) -> Result<(Arc<Inner>, OpenReport)> {
    cfg.validate().map_err(Error::Startup)?;
    let started = std::time::Instant::now();
    let datadir = cfg.datadir.clone();
    fs.create_dir_all(&datadir)
        .map_err(|e| startup_io(&datadir, e))?;
    let failed = Arc::new(AtomicBool::new(false));
    let fil = Fil::new(
        fs.clone(),
        datadir.clone(),
        cfg.page_size,
        cfg.flush_method.data_flags(),
        cfg.open_files,
        failed.clone(),
    );
    let ibdata = Path::new("ibdata1");
    let mut fresh = !fs
        .exists(&datadir.join(ibdata))
        .map_err(|e| startup_io(&datadir, e))?;
    if !fresh && initialisation_interrupted(&fs, &datadir, &cfg, &failed)? {
        tracing::warn!(
            "InnoDB: the initialisation of {} was interrupted before anything reached disk; \
             initialising again",
            datadir.display()
        );
        wipe_system_files(&fs, &datadir)?;
        fresh = true;
    }
    let mut report = OpenReport {
        initialised: fresh,
        ..Default::default()
    };
    let (files, cp, parsed) = if fresh {
        if LogFiles::exists(&fs, &datadir)? {
            return Err(Error::Startup(format!(
                "InnoDB: {} has redo log files but no ibdata1; refusing to start",
                datadir.display()
            )));
        }
        tracing::warn!(
            "InnoDB: {} is empty: initialising a new data directory (innodb_page_size={})",
            datadir.display(),
            cfg.page_size
        );
        fil.create_space(SYSTEM_SPACE, ibdata, ddl::initial_system_pages())?;
        let files = LogFiles::create(
            &fs,
            &datadir,
            cfg.log_files_in_group,
            cfg.log_file_size,
            cfg.page_size as u32,
            file::LOG_START_LSN,
            cfg.flush_method.log_flags(),
            failed.clone(),
        )?;
        let cp = files.read_checkpoint()?;
        (files, cp, Parsed::empty_at(cp.lsn))
    } else {
        fil.open_space(SYSTEM_SPACE, ibdata)?;
        if fs.exists(&datadir.join("ib_logfile101")).unwrap_or(false) {
            return Err(Error::Startup(
                "InnoDB: a redo log resize was interrupted (ib_logfile101 exists); the log was clean \
                 before the resize: remove ib_logfile101 and restart"
                    .into(),
            ));
        }
        if !LogFiles::exists(&fs, &datadir)? {
            return Err(Error::Startup(format!(
                "InnoDB: {} has ibdata1 but no redo log (ib_logfile0); refusing to start",
                datadir.display()
            )));
        }
        // The redo header records the page size too (checked by open); ibdata1's header may be
        // torn (recovery repairs it), but if it is readable it must agree.
        let files = LogFiles::open(
            &fs,
            &datadir,
            cfg.page_size as u32,
            cfg.flush_method.log_flags(),
            failed.clone(),
        )?;
        check_page_size(&fs, &datadir, cfg.page_size)?;
        let cp = files.read_checkpoint()?;
        let parsed = recovery::parse(&files, cp.lsn)?;
        (files, cp, parsed)
    };
    fil.add_log_files(files.n_files() as usize);
    report.checkpoint_lsn = cp.lsn;
    report.end_lsn = parsed.end_lsn;
    report.redo_groups = parsed.groups;
    report.redo_records = parsed.records;
    let inner = Arc::new(build_inner(cfg, fs, fil, files, cp, parsed.end_lsn, failed));
    *inner.stats.monitor_last.lock() = Some(crate::monitor::sample(&inner));
    if fresh {
        ddl::bootstrap(&inner, ddl::initial_system_pages())?;
    } else if !parsed.is_empty() {
        recover_pages(&inner, &parsed, &mut report)?;
    }
    if !fresh && !ddl::bootstrap_complete(&inner)? {
        // A crash during the first start: nothing but the half-made system tablespace exists.
        let cfg = inner.cfg.clone();
        let fs = inner.fs.clone();
        drop(inner);
        tracing::warn!(
            "InnoDB: the initialisation of {} was interrupted; initialising again",
            datadir.display()
        );
        wipe_system_files(&fs, &datadir)?;
        return open(cfg, fs);
    }
    let rsegs = ddl::rseg_pages(&inner)?;
    inner
        .trx
        .init(rsegs, dict::header_u64(&inner, dict::DICT_HDR_TRX_ID)?);
    inner
        .dict
        .set_row_id(dict::header_u64(&inner, dict::DICT_HDR_ROW_ID)?);
    ddl::boot_sys_tables(&inner)?;
    let (prepared, active): (Vec<_>, Vec<_>) = trx::recover(&inner)?
        .into_iter()
        .partition(|t| t.xid.is_some());
    report.trx_prepared = prepared.len();
    report.trx_rolled_back = active.len();
    // The published purge view starts as a view of this moment: it sees every transaction
    // committed before the start, so version walks (rollback's, purge's) stop at the first
    // committed version instead of following roll pointers into undo logs purged before the
    // start, whose pages may hold other logs by now (trx purge_view, vers R1).
    *inner.trx.purge_view.write() = Arc::new(inner.trx.purge_view());
    for t in &prepared {
        tracing::warn!(
            "InnoDB: Transaction {} was in the XA prepared state; it keeps its locks until XA COMMIT or XA ROLLBACK",
            t.id
        );
    }
    *inner.trx.prepared.lock() = prepared;
    if !active.is_empty() {
        tracing::info!(
            "InnoDB: {} transaction(s) active at the crash will be rolled back{}",
            active.len(),
            if inner.cfg.background_threads {
                " in the background"
            } else {
                ""
            }
        );
        *inner.trx.recovery_rollback_done.0.lock() = false;
        *inner.trx.to_roll_back.lock() = active;
        if !inner.cfg.background_threads {
            inner.trx.roll_back_recovered(&inner)?;
        }
    }
    ddl::load_dictionary(&inner)?;
    ddl::finish_interrupted_ddl(&inner)?;
    ddl::remove_orphan_files(&inner)?;
    if fresh || !parsed.is_empty() {
        inner.flush_all_and_checkpoint()?;
    }
    report.recovery_secs = started.elapsed().as_secs_f64();
    Ok((inner, report))
}

/// Doublewrite restore and redo apply (space 0 first, then the spaces it maps).
fn recover_pages(inner: &Inner, parsed: &Parsed, report: &mut OpenReport) -> Result<()> {
    tracing::info!(
        "InnoDB: Starting crash recovery from checkpoint LSN={}: {} bytes of redo ({} groups, {} records, {} pages)",
        parsed.checkpoint_lsn,
        parsed.end_lsn - parsed.checkpoint_lsn,
        parsed.groups,
        parsed.records,
        parsed.n_pages()
    );
    let threads = inner.cfg.recovery_threads;
    let copies = if inner.dblwr.enabled {
        doublewrite::load_copies(&inner.fil, parsed.end_lsn)?
    } else {
        Default::default()
    };
    let r = doublewrite::restore(&inner.fil, &copies, |s| s == SYSTEM_SPACE)?;
    report.pages_restored_from_doublewrite += r.restored.len();
    report.pages_recovered +=
        recovery::apply(inner, parsed, &|s| s == SYSTEM_SPACE, threads)?.pages;
    ddl::boot_sys_tables(inner)?;
    for (space, path) in ddl::recovery_spaces(inner, &copies)? {
        inner.fil.open_space(space, &path)?;
    }
    let open = |s: u32| s != SYSTEM_SPACE && inner.fil.get(s).is_some();
    let r = doublewrite::restore(&inner.fil, &copies, open)?;
    report.pages_restored_from_doublewrite += r.restored.len();
    report.pages_recovered += recovery::apply(inner, parsed, &open, threads)?.pages;
    for s in parsed.spaces() {
        if inner.fil.get(s).is_none() {
            tracing::info!("InnoDB: ignoring redo for tablespace {s}, which was dropped");
        }
    }
    // Files must hold FSP_SIZE pages (growth is synced before FSP_SIZE is raised, but a file
    // created by a rolled-back CREATE may be short).
    for s in inner.fil.space_ids() {
        let sp = inner.fil.space(s)?;
        let mut buf = vec![0u8; inner.bp.page_size()];
        let f = inner.fix(
            crate::types::PageId::new(s, 0),
            crate::buffer_pool::LatchMode::S,
        )?;
        // SAFETY: S-latched by fix.
        buf.copy_from_slice(unsafe { inner.bp.data(f) });
        inner.bp.unlatch(f, crate::buffer_pool::LatchMode::S);
        inner.bp.unpin(f);
        if page::page_type(&buf) == Some(page::PageType::FspHdr)
            && sp.file_pages() < fsp::size(&buf)
        {
            inner.fil.grow(&sp, fsp::size(&buf))?;
        }
    }
    tracing::info!(
        "InnoDB: redo applied to {} pages ({} restored from the doublewrite buffer); log sequence number {}",
        report.pages_recovered,
        report.pages_restored_from_doublewrite,
        parsed.end_lsn
    );
    Ok(())
}

/// Recreates the redo log with the configured size (at a clean point: every page flushed and
/// a checkpoint at the current LSN, so the old log holds nothing needed).
pub fn resize_log(inner: &Inner) -> Result<Option<(u64, u32)>> {
    let f = &inner.log.files;
    let (cfg_size, cfg_n) = (inner.cfg.log_file_size, inner.cfg.log_files_in_group);
    if f.file_size == cfg_size && f.n_files() == cfg_n {
        return Ok(None);
    }
    inner.flush_all_and_checkpoint()?;
    tracing::warn!(
        "InnoDB: Resizing redo log from {}*{} to {}*{} bytes, LSN={}",
        f.n_files(),
        f.file_size,
        cfg_n,
        cfg_size,
        inner.log.lsn()
    );
    LogFiles::create(
        &inner.fs,
        &inner.cfg.datadir,
        cfg_n,
        cfg_size,
        inner.cfg.page_size as u32,
        inner.log.lsn(),
        inner.cfg.flush_method.log_flags(),
        inner.failed.clone(),
    )?;
    // Old extra files beyond the new count are removed.
    for i in cfg_n..f.n_files() {
        let p = inner.cfg.datadir.join(file::file_name(i));
        let _ = inner.fs.remove(&p);
    }
    let _ = inner.fs.sync_dir(&inner.cfg.datadir);
    inner.shutting_down.store(true, Ordering::Release);
    Ok(Some((cfg_size, cfg_n)))
}
