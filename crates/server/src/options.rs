//! Command-line options, named as mysqld's (dashes or underscores). Sizes take K, M and G
//! suffixes. Option files (my.cnf) and the variable registry come with the configuration work
//! (issue #5).

use std::path::PathBuf;

use clap::Parser;
use innoxide_engine::{EngineConfig, Isolation};

/// Parses a size like 134217728, 128M, 1G, 64K (as mysqld does).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        Some('T') => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (a number with an optional K, M, G or T)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses ON/OFF/1/0/TRUE/FALSE (as mysqld does).
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_uppercase().as_str() {
        "ON" | "1" | "TRUE" | "YES" => Ok(true),
        "OFF" | "0" | "FALSE" | "NO" => Ok(false),
        _ => Err(format!(
            "'{s}' is not a boolean (ON, OFF, 1, 0, TRUE, FALSE)"
        )),
    }
}

#[derive(Parser, Debug)]
#[command(name = "innoxide", version, about = "innoxide: a MySQL-compatible server with an InnoDB-style storage engine", long_about = None)]
pub struct Options {
    /// The data directory; an empty one is initialised on first start.
    #[arg(long, default_value = "./data")]
    pub datadir: PathBuf,
    /// Log level: error, warn, info, debug, trace (or a RUST_LOG filter).
    #[arg(long, default_value = "info")]
    pub log_level: String,
    /// TCP port for client connections (0: no TCP listener).
    #[arg(long, default_value_t = 3306)]
    pub port: u16,
    /// Address the TCP listener binds to (127.0.0.1, ::1, 0.0.0.0, a host name...).
    #[arg(
        long = "bind-address",
        alias = "bind_address",
        default_value = "127.0.0.1"
    )]
    pub bind_address: String,
    /// Unix socket for local clients ('' for none).
    #[arg(long, default_value = "/tmp/innoxide.sock")]
    pub socket: String,
    /// Most client connections at once; one more is refused with error 1040.
    #[arg(long = "max-connections", alias = "max_connections", default_value_t = 151, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub max_connections: u32,
    /// Largest packet (and query) a client may send; larger ones get error 1153.
    #[arg(long = "max-allowed-packet", alias = "max_allowed_packet", default_value = "64M", value_parser = parse_size)]
    pub max_allowed_packet: u64,
    /// Page size of a new data directory: 4K, 8K, 16K, 32K or 64K (fixed once initialised).
    #[arg(long = "innodb-page-size", alias = "innodb_page_size", default_value = "16K", value_parser = parse_size)]
    pub page_size: u64,
    /// Size of the buffer pool, allocated at start.
    #[arg(long = "innodb-buffer-pool-size", alias = "innodb_buffer_pool_size", default_value = "128M", value_parser = parse_size)]
    pub buffer_pool_size: u64,
    /// Number of buffer pool instances (each with its own lists and locks).
    #[arg(
        long = "innodb-buffer-pool-instances",
        alias = "innodb_buffer_pool_instances",
        default_value_t = 1
    )]
    pub buffer_pool_instances: usize,
    /// Page cleaner threads (at most one per buffer pool instance).
    #[arg(
        long = "innodb-page-cleaners",
        alias = "innodb_page_cleaners",
        default_value_t = 1
    )]
    pub page_cleaners: usize,
    /// Size of each redo log file.
    #[arg(long = "innodb-log-file-size", alias = "innodb_log_file_size", default_value = "48M", value_parser = parse_size)]
    pub log_file_size: u64,
    /// Number of redo log files; capacity = size x files (a change resizes the log at start).
    #[arg(
        long = "innodb-log-files-in-group",
        alias = "innodb_log_files_in_group",
        default_value_t = 2
    )]
    pub log_files_in_group: u32,
    /// Size of the redo log buffer.
    #[arg(long = "innodb-log-buffer-size", alias = "innodb_log_buffer_size", default_value = "16M", value_parser = parse_size)]
    pub log_buffer_size: u64,
    /// 1: flush the redo at every commit (durable); 2: write at commit, flush about once a
    /// second (survives a process crash); 0: write and flush about once a second.
    #[arg(long = "innodb-flush-log-at-trx-commit", alias = "innodb_flush_log_at_trx_commit", default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub flush_log_at_trx_commit: u8,
    /// Seconds between redo flushes for innodb_flush_log_at_trx_commit 0 and 2.
    #[arg(
        long = "innodb-flush-log-at-timeout",
        alias = "innodb_flush_log_at_timeout",
        default_value_t = 1
    )]
    pub flush_log_at_timeout: u32,
    /// Write pages to the doublewrite area before writing them in place (torn page repair).
    #[arg(long = "innodb-doublewrite", alias = "innodb_doublewrite", default_value = "ON", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "ON")]
    pub doublewrite: bool,
    /// Background page writes per second the page cleaners aim for.
    #[arg(
        long = "innodb-io-capacity",
        alias = "innodb_io_capacity",
        default_value_t = 200
    )]
    pub io_capacity: u64,
    /// Upper bound of background page writes per second under redo pressure.
    #[arg(
        long = "innodb-io-capacity-max",
        alias = "innodb_io_capacity_max",
        default_value_t = 2000
    )]
    pub io_capacity_max: u64,
    /// Percentage of dirty pages at which flushing runs at full io_capacity.
    #[arg(
        long = "innodb-max-dirty-pages-pct",
        alias = "innodb_max_dirty_pages_pct",
        default_value_t = 90.0
    )]
    pub max_dirty_pages_pct: f64,
    /// Percentage of dirty pages at which flushing starts (0 disables the low-water mark).
    #[arg(
        long = "innodb-max-dirty-pages-pct-lwm",
        alias = "innodb_max_dirty_pages_pct_lwm",
        default_value_t = 10.0
    )]
    pub max_dirty_pages_pct_lwm: f64,
    /// Adapt the flushing rate to the redo generation rate.
    #[arg(long = "innodb-adaptive-flushing", alias = "innodb_adaptive_flushing", default_value = "ON", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "ON")]
    pub adaptive_flushing: bool,
    /// Percentage of the redo async limit below which adaptive flushing stays off.
    #[arg(
        long = "innodb-adaptive-flushing-lwm",
        alias = "innodb_adaptive_flushing_lwm",
        default_value_t = 10.0
    )]
    pub adaptive_flushing_lwm: f64,
    /// How deep the page cleaner looks into each LRU list for pages to flush or free.
    #[arg(
        long = "innodb-lru-scan-depth",
        alias = "innodb_lru_scan_depth",
        default_value_t = 1024
    )]
    pub lru_scan_depth: u32,
    /// Percentage of the LRU list kept as the old sublist (where new pages enter).
    #[arg(
        long = "innodb-old-blocks-pct",
        alias = "innodb_old_blocks_pct",
        default_value_t = 37
    )]
    pub old_blocks_pct: u32,
    /// Milliseconds a page must stay in the old sublist before an access moves it to the young one.
    #[arg(
        long = "innodb-old-blocks-time",
        alias = "innodb_old_blocks_time",
        default_value_t = 1000
    )]
    pub old_blocks_time: u32,
    /// Seconds a transaction waits for a row lock before error 1205.
    #[arg(
        long = "innodb-lock-wait-timeout",
        alias = "innodb_lock_wait_timeout",
        default_value_t = 50
    )]
    pub lock_wait_timeout: u64,
    /// Roll back the whole transaction, not just the statement, on a lock wait timeout.
    #[arg(long = "innodb-rollback-on-timeout", alias = "innodb_rollback_on_timeout", default_value = "OFF", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "ON")]
    pub rollback_on_timeout: bool,
    /// Detect deadlocks when a transaction starts to wait (OFF: only the lock wait timeout
    /// ends them).
    #[arg(long = "innodb-deadlock-detect", alias = "innodb_deadlock_detect", default_value = "ON", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "ON")]
    pub deadlock_detect: bool,
    /// MariaDB's innodb_snapshot_isolation: at REPEATABLE READ and SERIALIZABLE, locking or
    /// changing a row changed after the transaction's read view fails with error 1020.
    #[arg(long = "innodb-snapshot-isolation", alias = "innodb_snapshot_isolation", default_value = "OFF", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "ON")]
    pub snapshot_isolation: bool,
    /// Default isolation level: READ-UNCOMMITTED, READ-COMMITTED, REPEATABLE-READ or
    /// SERIALIZABLE.
    #[arg(
        long = "transaction-isolation",
        alias = "transaction_isolation",
        default_value = "REPEATABLE-READ"
    )]
    pub transaction_isolation: String,
    /// Purge threads (1-32).
    #[arg(
        long = "innodb-purge-threads",
        alias = "innodb_purge_threads",
        default_value_t = 4
    )]
    pub purge_threads: usize,
    /// History list length above which changes are delayed (0: never).
    #[arg(
        long = "innodb-max-purge-lag",
        alias = "innodb_max_purge_lag",
        default_value_t = 0
    )]
    pub max_purge_lag: u64,
    /// Largest such delay in microseconds (0: no cap).
    #[arg(
        long = "innodb-max-purge-lag-delay",
        alias = "innodb_max_purge_lag_delay",
        default_value_t = 0
    )]
    pub max_purge_lag_delay: u64,
    /// Threads allowed inside the engine at once (0: no limit).
    #[arg(
        long = "innodb-thread-concurrency",
        alias = "innodb_thread_concurrency",
        default_value_t = 0
    )]
    pub thread_concurrency: u64,
    /// Engine entries a thread makes before it must queue again for a slot.
    #[arg(long = "innodb-concurrency-tickets", alias = "innodb_concurrency_tickets", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency_tickets: u64,
}

impl Options {
    pub fn engine_config(&self) -> Result<EngineConfig, String> {
        let mut c = EngineConfig::new(&self.datadir);
        c.page_size = usize::try_from(self.page_size).map_err(|_| "innodb_page_size too large")?;
        c.buffer_pool_size = self.buffer_pool_size;
        c.buffer_pool_instances = self.buffer_pool_instances;
        c.page_cleaners = self.page_cleaners;
        c.log_file_size = self.log_file_size;
        c.log_files_in_group = self.log_files_in_group;
        c.log_buffer_size = usize::try_from(self.log_buffer_size)
            .map_err(|_| "innodb_log_buffer_size too large")?;
        c.doublewrite = self.doublewrite;
        c.purge_threads = self.purge_threads;
        let t = &mut c.tunables;
        t.flush_log_at_trx_commit = self.flush_log_at_trx_commit;
        t.flush_log_at_timeout = self.flush_log_at_timeout;
        t.io_capacity = self.io_capacity;
        t.io_capacity_max = self.io_capacity_max;
        t.max_dirty_pages_pct = self.max_dirty_pages_pct;
        t.max_dirty_pages_pct_lwm = self.max_dirty_pages_pct_lwm;
        t.adaptive_flushing = self.adaptive_flushing;
        t.adaptive_flushing_lwm = self.adaptive_flushing_lwm;
        t.lru_scan_depth = self.lru_scan_depth;
        t.old_blocks_pct = self.old_blocks_pct;
        t.old_blocks_time = self.old_blocks_time;
        t.lock_wait_timeout = self.lock_wait_timeout;
        t.rollback_on_timeout = self.rollback_on_timeout;
        t.deadlock_detect = self.deadlock_detect;
        t.snapshot_isolation = self.snapshot_isolation;
        t.isolation = Isolation::parse(&self.transaction_isolation).ok_or_else(|| {
            format!(
                "transaction_isolation={} is not one of READ-UNCOMMITTED, READ-COMMITTED, \
                 REPEATABLE-READ, SERIALIZABLE",
                self.transaction_isolation
            )
        })?;
        t.max_purge_lag = self.max_purge_lag;
        t.max_purge_lag_delay = self.max_purge_lag_delay;
        t.thread_concurrency = self.thread_concurrency;
        t.concurrency_tickets = self.concurrency_tickets;
        c.validate()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_booleans_parse_like_mysqld() {
        assert_eq!(parse_size("128M"), Ok(128 << 20));
        assert_eq!(parse_size("16k"), Ok(16 << 10));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(parse_bool("on"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("maybe").is_err());
        let o = Options::parse_from([
            "innoxide",
            "--datadir",
            "/x",
            "--innodb_buffer_pool_size=64M",
            "--innodb-page-size=4K",
        ]);
        let c = o.engine_config().unwrap();
        assert_eq!((c.buffer_pool_size, c.page_size), (64 << 20, 4096));
        let o = Options::parse_from([
            "innoxide",
            "--transaction_isolation=read-committed",
            "--innodb-snapshot-isolation=ON",
        ]);
        let c = o.engine_config().unwrap();
        assert_eq!(c.tunables.isolation, Isolation::ReadCommitted);
        assert!(c.tunables.snapshot_isolation);
        // Booleans take mysqld's forms: a value, or the bare name for ON.
        let o = Options::parse_from([
            "innoxide",
            "--innodb-doublewrite=OFF",
            "--innodb_deadlock_detect",
        ]);
        let c = o.engine_config().unwrap();
        assert!(!c.doublewrite && c.tunables.deadlock_detect);
        let bad = Options::parse_from(["innoxide", "--transaction-isolation=SNAPSHOT"]);
        assert!(bad
            .engine_config()
            .unwrap_err()
            .contains("transaction_isolation"));
        let bad = Options::parse_from(["innoxide", "--innodb-page-size=3K"]);
        assert!(bad
            .engine_config()
            .unwrap_err()
            .contains("innodb_page_size"));
    }
}
