//! Engine configuration, named after InnoDB's variables. Static settings are fixed at open;
//! dynamic ones live in [`Tunables`] (atomics) so `SET GLOBAL` takes effect at once.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

use innoxide_io::OpenFlags;

/// `innodb_flush_method`: how data files and redo log files reach the disk (MySQL 8.0 on
/// Linux, less the testing values `littlesync` and `nosync`, which skip fsyncs and which
/// innoxide refuses: it never skips one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlushMethod {
    /// Buffered writes, made durable with fdatasync (data and log files).
    #[default]
    Fsync,
    /// Log files opened O_DSYNC: each log write is durable when it returns, so the log is
    /// never fdatasync'ed; data files as `Fsync`.
    ODsync,
    /// Data files (ibdata1 with the doublewrite areas, and every .ibd) opened O_DIRECT,
    /// bypassing the page cache, and still fdatasync'ed; log files as `Fsync`.
    ODirect,
    /// Data files opened O_DIRECT|O_DSYNC: each page write is durable when it returns, so
    /// data files are fdatasync'ed only after their size changed; log files as `Fsync`.
    ODirectNoFsync,
}

impl FlushMethod {
    /// Every method, in the order MySQL lists them.
    pub const ALL: [FlushMethod; 4] = [
        FlushMethod::Fsync,
        FlushMethod::ODsync,
        FlushMethod::ODirect,
        FlushMethod::ODirectNoFsync,
    ];

    /// The variable's value (`SHOW VARIABLES`).
    pub fn name(self) -> &'static str {
        match self {
            FlushMethod::Fsync => "fsync",
            FlushMethod::ODsync => "O_DSYNC",
            FlushMethod::ODirect => "O_DIRECT",
            FlushMethod::ODirectNoFsync => "O_DIRECT_NO_FSYNC",
        }
    }

    /// The method named `name` (any case).
    pub fn from_name(name: &str) -> Option<FlushMethod> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }

    /// How tablespace files (ibdata1 and .ibd) are opened.
    pub fn data_flags(self) -> OpenFlags {
        match self {
            FlushMethod::Fsync | FlushMethod::ODsync => OpenFlags::BUFFERED,
            FlushMethod::ODirect => OpenFlags::DIRECT,
            FlushMethod::ODirectNoFsync => OpenFlags::DIRECT_DSYNC,
        }
    }

    /// How redo log files are opened.
    pub fn log_flags(self) -> OpenFlags {
        match self {
            FlushMethod::ODsync => OpenFlags::DSYNC,
            _ => OpenFlags::BUFFERED,
        }
    }
}

/// `innodb_open_files`' default: MySQL 8.0 sizes it as the larger of 300 and
/// table_open_cache, whose default is 4000 (innoxide's table cache has no limit, so the
/// default is MySQL's default server's).
pub const DEFAULT_OPEN_FILES: usize = 4000;
/// `innodb_open_files`' smallest value.
pub const MIN_OPEN_FILES: usize = 10;

/// Settings fixed for the life of an open engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The data directory (`--datadir`).
    pub datadir: PathBuf,
    /// `innodb_page_size`: 4, 8, 16 (default), 32 or 64 KiB; fixed at initialisation.
    pub page_size: usize,
    /// `innodb_buffer_pool_size` in bytes (default 128 MiB).
    pub buffer_pool_size: u64,
    /// `innodb_buffer_pool_chunk_size` in bytes (default 128 MiB): the unit the pool grows and
    /// shrinks by. The engine cuts it to pool / instances when larger and rounds the pool size
    /// up to a multiple of chunk x instances (both written back here at open).
    pub buffer_pool_chunk_size: u64,
    /// `innodb_buffer_pool_instances` (default 1 below 1 GiB of pool, else 8).
    pub buffer_pool_instances: usize,
    /// `innodb_page_cleaners` (default 4, at most the number of pool instances... and at least 1).
    pub page_cleaners: usize,
    /// `innodb_log_buffer_size` in bytes (default 16 MiB).
    pub log_buffer_size: usize,
    /// `innodb_log_file_size` in bytes (default 48 MiB).
    pub log_file_size: u64,
    /// `innodb_log_files_in_group` (default 2).
    pub log_files_in_group: u32,
    /// `innodb_doublewrite` (default ON).
    pub doublewrite: bool,
    /// `innodb_flush_method` (default fsync).
    pub flush_method: FlushMethod,
    /// `innodb_open_files` (default [`DEFAULT_OPEN_FILES`], at least [`MIN_OPEN_FILES`]): the
    /// files the engine keeps open, ibdata1 and the redo log files included (those stay
    /// open); idle tablespace files beyond it are closed, least recently used first.
    pub open_files: usize,
    /// Threads applying redo during crash recovery (default: available cores, at least 2).
    pub recovery_threads: usize,
    /// `innodb_purge_threads` (default 4, 1..32).
    pub purge_threads: usize,
    /// `innodb_read_io_threads` (default 4, 1..64): threads serving read-ahead requests.
    pub read_io_threads: usize,
    /// `innodb_write_io_threads` (default 4, 1..64): threads issuing a flush batch's home
    /// writes in parallel.
    pub write_io_threads: usize,
    /// `innodb_buffer_pool_load_at_startup` (default ON): read the pages it lists in the
    /// background after startup.
    pub buffer_pool_load_at_startup: bool,
    /// `innodb_adaptive_hash_index_parts` (default 8, 1..512): the adaptive hash index's
    /// partitions, each behind its own latch.
    pub adaptive_hash_index_parts: usize,
    /// Start page cleaner and master threads. Deterministic tests turn this off and drive
    /// flushing and checkpoints themselves.
    pub background_threads: bool,
    /// Initial values of the dynamic settings.
    pub tunables: TunableValues,
}

/// Values of the dynamic settings, used to seed [`Tunables`].
#[derive(Clone, Debug)]
pub struct TunableValues {
    pub flush_log_at_trx_commit: u8,
    pub flush_log_at_timeout: u32,
    pub io_capacity: u64,
    pub io_capacity_max: u64,
    pub max_dirty_pages_pct: f64,
    pub max_dirty_pages_pct_lwm: f64,
    pub adaptive_flushing: bool,
    pub adaptive_flushing_lwm: f64,
    pub old_blocks_pct: u32,
    pub old_blocks_time: u32,
    pub lru_scan_depth: u32,
    /// innodb_flush_neighbors: 0 flushes a page alone, 1 also its contiguous dirty
    /// neighbours in its extent, 2 every dirty page of its extent.
    pub flush_neighbors: u8,
    /// innodb_read_ahead_threshold (0..64): pages of an extent accessed in order that make
    /// linear read-ahead read the next one; 0 turns linear read-ahead off, as in InnoDB.
    pub read_ahead_threshold: u32,
    /// innodb_random_read_ahead: an extent with 13 recently used pages in the pool is read
    /// whole.
    pub random_read_ahead: bool,
    /// innodb_lock_wait_timeout, seconds.
    pub lock_wait_timeout: u64,
    /// innodb_rollback_on_timeout (static in MySQL): a lock wait timeout rolls back the whole
    /// transaction instead of the statement.
    pub rollback_on_timeout: bool,
    /// innodb_deadlock_detect.
    pub deadlock_detect: bool,
    /// innodb_snapshot_isolation (MariaDB): at REPEATABLE READ, a locking read or write of a
    /// row changed after the transaction's read view fails with error 1020.
    pub snapshot_isolation: bool,
    /// transaction_isolation: the level new transactions start with.
    pub isolation: crate::trx::Isolation,
    /// innodb_max_purge_lag: history list length above which DML is delayed (0: never).
    pub max_purge_lag: u64,
    /// innodb_max_purge_lag_delay: the largest such delay in microseconds (0: no cap).
    pub max_purge_lag_delay: u64,
    /// innodb_thread_concurrency: threads inside the engine at once (0: no limit).
    pub thread_concurrency: u64,
    /// innodb_concurrency_tickets: engine calls a thread makes before it queues again.
    pub concurrency_tickets: u64,
    /// innodb_adaptive_hash_index: point searches try the adaptive hash index first.
    pub adaptive_hash_index: bool,
    /// `innodb_buffer_pool_dump_at_shutdown` (default ON): write `ib_buffer_pool` at shutdown.
    pub buffer_pool_dump_at_shutdown: bool,
    /// `innodb_buffer_pool_dump_pct` (default 25, 1..100): the part of each LRU list dumped.
    pub buffer_pool_dump_pct: u32,
}

impl Default for TunableValues {
    fn default() -> Self {
        TunableValues {
            flush_log_at_trx_commit: 1,
            flush_log_at_timeout: 1,
            io_capacity: 200,
            io_capacity_max: 2000,
            max_dirty_pages_pct: 90.0,
            max_dirty_pages_pct_lwm: 10.0,
            adaptive_flushing: true,
            adaptive_flushing_lwm: 10.0,
            old_blocks_pct: 37,
            old_blocks_time: 1000,
            lru_scan_depth: 1024,
            flush_neighbors: 0,
            read_ahead_threshold: 56,
            random_read_ahead: false,
            lock_wait_timeout: 50,
            rollback_on_timeout: false,
            deadlock_detect: true,
            snapshot_isolation: false,
            isolation: crate::trx::Isolation::RepeatableRead,
            max_purge_lag: 0,
            max_purge_lag_delay: 0,
            thread_concurrency: 0,
            concurrency_tickets: 5000,
            adaptive_hash_index: true,
            buffer_pool_dump_at_shutdown: true,
            buffer_pool_dump_pct: 25,
        }
    }
}

impl EngineConfig {
    /// MySQL 8.0 defaults for everything but the data directory.
    pub fn new(datadir: impl Into<PathBuf>) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        EngineConfig {
            datadir: datadir.into(),
            page_size: 16384,
            buffer_pool_size: 128 << 20,
            buffer_pool_chunk_size: 128 << 20,
            buffer_pool_instances: 1,
            page_cleaners: 1,
            log_buffer_size: 16 << 20,
            log_file_size: 48 << 20,
            log_files_in_group: 2,
            doublewrite: true,
            flush_method: FlushMethod::Fsync,
            open_files: DEFAULT_OPEN_FILES,
            recovery_threads: cores.max(2),
            purge_threads: 4,
            read_io_threads: 4,
            write_io_threads: 4,
            buffer_pool_load_at_startup: true,
            adaptive_hash_index_parts: 8,
            background_threads: true,
            tunables: TunableValues::default(),
        }
    }

    /// Checks ranges the way mysqld does at startup; returns a message naming the variable.
    pub fn validate(&self) -> Result<(), String> {
        if ![4096, 8192, 16384, 32768, 65536].contains(&self.page_size) {
            return Err(format!(
                "innodb_page_size={} is not one of 4096, 8192, 16384, 32768, 65536",
                self.page_size
            ));
        }
        let min_pool = (self.page_size as u64) * 64;
        if self.buffer_pool_size < min_pool {
            return Err(format!(
                "innodb_buffer_pool_size={} is too small: at least {} bytes (64 pages) are needed",
                self.buffer_pool_size, min_pool
            ));
        }
        if self.buffer_pool_instances == 0 || self.buffer_pool_instances > 64 {
            return Err("innodb_buffer_pool_instances must be between 1 and 64".into());
        }
        if self.page_cleaners == 0 || self.page_cleaners > 64 {
            return Err("innodb_page_cleaners must be between 1 and 64".into());
        }
        if self.log_files_in_group < 1 || self.log_files_in_group > 100 {
            return Err("innodb_log_files_in_group must be between 1 and 100".into());
        }
        if self.log_file_size < 64 * 1024 || !self.log_file_size.is_multiple_of(4096) {
            return Err(
                "innodb_log_file_size must be at least 64 KiB and a multiple of 4096".into(),
            );
        }
        let capacity = (self.log_file_size - 4096) * u64::from(self.log_files_in_group);
        let need = 2 * 48 * self.page_size as u64;
        if capacity < need {
            return Err(format!(
                "innodb_log_file_size * innodb_log_files_in_group leaves {capacity} bytes of redo, \
                 too small for innodb_page_size={}: at least {need} bytes are needed",
                self.page_size
            ));
        }
        if self.purge_threads == 0 || self.purge_threads > 32 {
            return Err("innodb_purge_threads must be between 1 and 32".into());
        }
        if self.read_io_threads == 0 || self.read_io_threads > 64 {
            return Err("innodb_read_io_threads must be between 1 and 64".into());
        }
        if self.write_io_threads == 0 || self.write_io_threads > 64 {
            return Err("innodb_write_io_threads must be between 1 and 64".into());
        }
        if self.adaptive_hash_index_parts == 0 || self.adaptive_hash_index_parts > 512 {
            return Err("innodb_adaptive_hash_index_parts must be between 1 and 512".into());
        }
        if self.log_buffer_size < 64 * 1024 {
            return Err("innodb_log_buffer_size must be at least 64 KiB".into());
        }
        if self.open_files < MIN_OPEN_FILES {
            return Err(format!(
                "innodb_open_files must be at least {MIN_OPEN_FILES}"
            ));
        }
        Ok(())
    }
}

/// Dynamic settings, read on every use so a change applies at once.
pub struct Tunables {
    pub flush_log_at_trx_commit: AtomicU8,
    pub flush_log_at_timeout: AtomicU32,
    pub io_capacity: AtomicU64,
    pub io_capacity_max: AtomicU64,
    /// Stored as percent * 1000.
    max_dirty_pages_pct_milli: AtomicU64,
    max_dirty_pages_pct_lwm_milli: AtomicU64,
    adaptive_flushing_lwm_milli: AtomicU64,
    pub adaptive_flushing: AtomicBool,
    pub old_blocks_pct: AtomicU32,
    pub old_blocks_time: AtomicU32,
    pub lru_scan_depth: AtomicU32,
    pub flush_neighbors: AtomicU8,
    pub read_ahead_threshold: AtomicU32,
    pub random_read_ahead: AtomicBool,
    pub lock_wait_timeout: AtomicU64,
    pub rollback_on_timeout: AtomicBool,
    pub deadlock_detect: std::sync::Arc<AtomicBool>,
    pub snapshot_isolation: AtomicBool,
    /// `Isolation as u8`.
    isolation: AtomicU8,
    pub max_purge_lag: AtomicU64,
    pub max_purge_lag_delay: AtomicU64,
    pub thread_concurrency: AtomicU64,
    pub concurrency_tickets: AtomicU64,
    /// Read by every search; SET GLOBAL goes through `Engine::set_adaptive_hash_index`, which
    /// also frees the entries when it turns the index off.
    pub adaptive_hash_index: AtomicBool,
    /// Read at shutdown and by each dump.
    pub buffer_pool_dump_at_shutdown: AtomicBool,
    pub buffer_pool_dump_pct: AtomicU32,
}

fn milli(v: f64) -> u64 {
    (v * 1000.0).round().max(0.0) as u64
}

impl Tunables {
    pub fn new(v: &TunableValues) -> Self {
        Tunables {
            flush_log_at_trx_commit: AtomicU8::new(v.flush_log_at_trx_commit),
            flush_log_at_timeout: AtomicU32::new(v.flush_log_at_timeout),
            io_capacity: AtomicU64::new(v.io_capacity),
            io_capacity_max: AtomicU64::new(v.io_capacity_max),
            max_dirty_pages_pct_milli: AtomicU64::new(milli(v.max_dirty_pages_pct)),
            max_dirty_pages_pct_lwm_milli: AtomicU64::new(milli(v.max_dirty_pages_pct_lwm)),
            adaptive_flushing_lwm_milli: AtomicU64::new(milli(v.adaptive_flushing_lwm)),
            adaptive_flushing: AtomicBool::new(v.adaptive_flushing),
            old_blocks_pct: AtomicU32::new(v.old_blocks_pct),
            old_blocks_time: AtomicU32::new(v.old_blocks_time),
            lru_scan_depth: AtomicU32::new(v.lru_scan_depth),
            flush_neighbors: AtomicU8::new(v.flush_neighbors.min(2)),
            read_ahead_threshold: AtomicU32::new(v.read_ahead_threshold.min(64)),
            random_read_ahead: AtomicBool::new(v.random_read_ahead),
            lock_wait_timeout: AtomicU64::new(v.lock_wait_timeout),
            rollback_on_timeout: AtomicBool::new(v.rollback_on_timeout),
            deadlock_detect: std::sync::Arc::new(AtomicBool::new(v.deadlock_detect)),
            snapshot_isolation: AtomicBool::new(v.snapshot_isolation),
            isolation: AtomicU8::new(v.isolation as u8),
            max_purge_lag: AtomicU64::new(v.max_purge_lag),
            max_purge_lag_delay: AtomicU64::new(v.max_purge_lag_delay),
            thread_concurrency: AtomicU64::new(v.thread_concurrency),
            concurrency_tickets: AtomicU64::new(v.concurrency_tickets.max(1)),
            adaptive_hash_index: AtomicBool::new(v.adaptive_hash_index),
            buffer_pool_dump_at_shutdown: AtomicBool::new(v.buffer_pool_dump_at_shutdown),
            buffer_pool_dump_pct: AtomicU32::new(v.buffer_pool_dump_pct.clamp(1, 100)),
        }
    }
    /// The isolation level new transactions start with.
    pub fn isolation(&self) -> crate::trx::Isolation {
        crate::trx::Isolation::from_u8(self.isolation.load(Ordering::Relaxed))
    }
    pub fn set_isolation(&self, v: crate::trx::Isolation) {
        self.isolation.store(v as u8, Ordering::Relaxed);
    }
    pub fn trx_commit(&self) -> u8 {
        self.flush_log_at_trx_commit.load(Ordering::Relaxed)
    }
    pub fn max_dirty_pages_pct(&self) -> f64 {
        self.max_dirty_pages_pct_milli.load(Ordering::Relaxed) as f64 / 1000.0
    }
    pub fn set_max_dirty_pages_pct(&self, v: f64) {
        self.max_dirty_pages_pct_milli
            .store(milli(v), Ordering::Relaxed);
    }
    pub fn max_dirty_pages_pct_lwm(&self) -> f64 {
        self.max_dirty_pages_pct_lwm_milli.load(Ordering::Relaxed) as f64 / 1000.0
    }
    pub fn set_max_dirty_pages_pct_lwm(&self, v: f64) {
        self.max_dirty_pages_pct_lwm_milli
            .store(milli(v), Ordering::Relaxed);
    }
    pub fn adaptive_flushing_lwm(&self) -> f64 {
        self.adaptive_flushing_lwm_milli.load(Ordering::Relaxed) as f64 / 1000.0
    }
    pub fn set_adaptive_flushing_lwm(&self, v: f64) {
        self.adaptive_flushing_lwm_milli
            .store(milli(v), Ordering::Relaxed);
    }
    pub fn io_capacity(&self) -> u64 {
        self.io_capacity.load(Ordering::Relaxed).max(1)
    }
    pub fn io_capacity_max(&self) -> u64 {
        self.io_capacity_max
            .load(Ordering::Relaxed)
            .max(self.io_capacity())
    }
}
