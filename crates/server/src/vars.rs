//! System variables: the one registry behind `SET`, `SELECT @@x`, `SHOW VARIABLES` and the
//! variables clients read on connect.
//!
//! INVARIANTS
//! - V1: every variable is one row of [`VARS`] (sorted by name, unique; a test checks both), and
//!   every value shown has a real source: the start-up options or engine configuration in force
//!   (read-only rows), the engine's [`Tunables`] (rows bound with [`Binding::Engine`]: reads load
//!   the atomics, `SET GLOBAL` stores into them, so the engine acts at once and `SHOW VARIABLES`
//!   reports what is in force), or the registry's own global table (every other row).
//! - V2: a variable innoxide cannot honour yet is read-only and shows what is really in force,
//!   or is absent. Each dynamic session variable names, in its row's comment, the code that
//!   honours it (the SQL layer reads it through the typed getters of [`SessionVars`]).
//! - V3: stored values always match their row's kind: `Bool` -> `VarValue::Bool`, `UInt` ->
//!   `UInt`, `Double` -> `Double`, `Enum` -> `UInt(index)`, `Set` -> `UInt(sql_mode bits)`,
//!   `Str` -> `Str` (or `Null` where the row allows NULL). Only
//!   [`convert`] and the start-up code produce stored values; `get`/`show` turn `Enum`/`Set`
//!   back into names.
//! - V4: client input never panics: unknown names, wrong scopes, types and values are MySQL's
//!   errors (1193, 1228, 1229, 1230, 1231, 1232, 1238...), out-of-range numbers are clamped
//!   with warning 1292 as mysqld does.
//! - V5: start-up options feed the same table (one source of truth): `option_kind` says how an
//!   option may set each row, options.rs parses option values into the stored form (V3), and
//!   [`Registry::new`] starts every global value from them; a row innoxide cannot honour is
//!   [`OptKind::Fixed`]: read-only, its option accepted only with the value in force.
//!
//! LOCKING: the registry's global values sit behind one `parking_lot::RwLock`. `SET GLOBAL`
//! takes it for writing for the whole check-and-store, including stores into the engine's
//! Tunables, so concurrent `SET GLOBAL`s (e.g. innodb_io_capacity against
//! innodb_io_capacity_max) cannot both pass their cross-checks. Readers (`get`, `show`,
//! `new_session`) take it for reading; engine threads read the Tunables atomics lock-free.
//! [`SessionVars`] belongs to one connection and needs no lock.

// used by the SQL layer being written (issue #4)

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};

use innoxide_engine::latch::RwLock;
use innoxide_engine::{EngineConfig, Isolation, Tunables};
use innoxide_sql::ast::VarScope;
use innoxide_sql::error::{
    SqlError, ER_COLLATION_CHARSET_MISMATCH, ER_GLOBAL_VARIABLE, ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_LOCAL_VARIABLE, ER_NOT_SUPPORTED_YET, ER_NO_DEFAULT, ER_TRUNCATED_WRONG_VALUE,
    ER_UNKNOWN_CHARACTER_SET, ER_UNKNOWN_COLLATION, ER_UNKNOWN_STORAGE_ENGINE,
    ER_UNKNOWN_SYSTEM_VARIABLE, ER_UNKNOWN_TIME_ZONE, ER_VARIABLE_IS_READONLY, ER_WRONG_ARGUMENTS,
    ER_WRONG_TYPE_FOR_VAR, ER_WRONG_VALUE_FOR_VAR,
};
use innoxide_sql::types::tz::Tz;
use innoxide_sql::types::SqlMode;
use innoxide_sql::types::{default_collation, CollationInfo};

use crate::options::Options;

/// `@@version` and the handshake's server version: `N.N.N` first (clients parse it), and not
/// `5.5.5-` (read as MariaDB). 8.0.40 makes Connector/J use transaction_isolation.
pub const SERVER_VERSION: &str = "8.0.40-innoxide";

/// A warning for SHOW WARNINGS: (code, message). Level is Warning.
pub type Warning = (u16, String);

/// A variable's value as `SELECT @@x` returns it.
#[derive(Clone, Debug, PartialEq)]
pub enum VarValue {
    UInt(u64),
    Double(f64),
    Bool(bool),
    Str(String),
    Null,
}

impl VarValue {
    /// The text `SHOW VARIABLES` prints: booleans ON/OFF, doubles with six decimals
    /// (`90.000000`), NULL as the empty string.
    pub fn to_text(&self) -> String {
        match self {
            VarValue::UInt(v) => v.to_string(),
            VarValue::Double(v) => format!("{v:.6}"),
            VarValue::Bool(true) => "ON".into(),
            VarValue::Bool(false) => "OFF".into(),
            VarValue::Str(s) => s.clone(),
            VarValue::Null => String::new(),
        }
    }
}

/// The right-hand side of `SET x = ...` after expression evaluation. A bare word
/// (`SET autocommit = ON`) arrives as `Str`; `SET x = DEFAULT` as `Default`.
#[derive(Clone, Debug, PartialEq)]
pub enum VarInput {
    Int(i64),
    UInt(u64),
    Double(f64),
    Str(String),
    Null,
    Default,
}

impl VarInput {
    /// The value as error 1231 and warning 1292 quote it.
    fn text(&self) -> String {
        match self {
            VarInput::Int(v) => v.to_string(),
            VarInput::UInt(v) => v.to_string(),
            VarInput::Double(v) => v.to_string(),
            VarInput::Str(s) => s.clone(),
            VarInput::Null => "NULL".into(),
            VarInput::Default => "DEFAULT".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Session,
    /// A global value, copied into each new session, which may change its own.
    Both,
}

/// How a string variable's values are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrCheck {
    /// Read-only text.
    Fixed,
    /// A character set name (`utf8` is `utf8mb3`); NULL allowed if `nullable`.
    Charset {
        nullable: bool,
    },
    Collation,
    /// `SYSTEM` or an offset `[+-]HH:MM` in -13:59..+14:00 (named zones need time zone
    /// tables, which innoxide does not have: error 1298, as mysqld without them).
    TimeZone,
    /// A storage engine: only InnoDB exists.
    Engine,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Bool,
    UInt {
        min: u64,
        max: u64,
    },
    Double {
        min: f64,
        max: f64,
    },
    /// Names in index order; set by name (any case) or index.
    Enum(&'static [&'static str]),
    /// sql_mode, through [`SqlMode`].
    Set,
    Str(StrCheck),
}

/// The compiled default (`SET GLOBAL x = DEFAULT`; `SET SESSION x = DEFAULT` copies the
/// global value instead).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Def {
    Bool(bool),
    UInt(u64),
    Double(f64),
    /// A string, or an enum value's name.
    Str(&'static str),
    Mode(SqlMode),
    Null,
    /// Read-only: the value is what the server started with (options, engine config, host).
    Startup,
    /// The connection id (pseudo_thread_id).
    ConnectionId,
    /// No default: `SET x = DEFAULT` is error 1230. The initial value is 0.
    NoDefault,
}

/// The engine's dynamic settings a variable is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tun {
    FlushLogAtTrxCommit,
    FlushLogAtTimeout,
    IoCapacity,
    IoCapacityMax,
    MaxDirtyPagesPct,
    MaxDirtyPagesPctLwm,
    AdaptiveFlushing,
    AdaptiveFlushingLwm,
    OldBlocksPct,
    OldBlocksTime,
    LruScanDepth,
    FlushNeighbors,
    ReadAheadThreshold,
    RandomReadAhead,
    LockWaitTimeout,
    RollbackOnTimeout,
    DeadlockDetect,
    SnapshotIsolation,
    Isolation,
    MaxPurgeLag,
    MaxPurgeLagDelay,
    ThreadConcurrency,
    ConcurrencyTickets,
    AdaptiveHashIndex,
    DumpAtShutdown,
    DumpPct,
}

/// Where the global value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// In the registry's global table.
    Registry,
    /// In the engine's Tunables (read live, written by SET GLOBAL).
    Engine(Tun),
}

/// One system variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VarDef {
    pub name: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    /// Settable with SET (else error 1238 "read only").
    pub dynamic: bool,
    pub default: Def,
    pub binding: Binding,
}

const fn v(name: &'static str, scope: Scope, kind: Kind, dynamic: bool, default: Def) -> VarDef {
    VarDef {
        name,
        scope,
        kind,
        dynamic,
        default,
        binding: Binding::Registry,
    }
}

const fn eng(
    name: &'static str,
    scope: Scope,
    kind: Kind,
    dynamic: bool,
    default: Def,
    t: Tun,
) -> VarDef {
    VarDef {
        name,
        scope,
        kind,
        dynamic,
        default,
        binding: Binding::Engine(t),
    }
}

use Scope::{Both, Global as G, Session as S};

const U32: u64 = u32::MAX as u64;
const YEAR_SECS: u64 = 31_536_000;
const fn u(min: u64, max: u64) -> Kind {
    Kind::UInt { min, max }
}
const RO_U: Kind = Kind::UInt {
    min: 0,
    max: u64::MAX,
};
const TEXT: Kind = Kind::Str(StrCheck::Fixed);
const CHARSET: Kind = Kind::Str(StrCheck::Charset { nullable: false });
const COLLATION: Kind = Kind::Str(StrCheck::Collation);
const ENGINE: Kind = Kind::Str(StrCheck::Engine);
/// innodb_flush_method's values in MySQL 8.0's order on Linux (srv_unix_flush_t); innoxide
/// refuses littlesync and nosync (`supported`).
pub const FLUSH_METHOD_NAMES: &[&str] = &[
    "fsync",
    "O_DSYNC",
    "littlesync",
    "nosync",
    "O_DIRECT",
    "O_DIRECT_NO_FSYNC",
];
const ISOLATION_NAMES: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];

/// Every variable, sorted by name. Defaults are MySQL 8.0's unless a comment says otherwise.
/// The comment above a row names the code that honours it.
#[rustfmt::skip]
pub const VARS: &[VarDef] = &[
    // SQL layer: a new session activates every role granted to its account, not only its
    // default roles (exec/roles.rs R2).
    v("activate_all_roles_on_login", G, Kind::Bool, true, Def::Bool(false)),
    // The protocol layer's account checks (8.0.27+ default).
    v("authentication_policy", G, TEXT, false, Def::Str("*,,")),
    // SQL layer: INSERT's auto-increment values.
    v("auto_increment_increment", Both, u(1, 65535), true, Def::UInt(1)),
    v("auto_increment_offset", Both, u(1, 65535), true, Def::UInt(1)),
    // SQL layer: statement end commits when ON; SET autocommit=1 inside a transaction
    // commits it. The protocol layer reports it in SERVER_STATUS_AUTOCOMMIT.
    v("autocommit", Both, Kind::Bool, true, Def::Bool(true)),
    v("basedir", G, TEXT, false, Def::Startup),
    v("bind_address", G, TEXT, false, Def::Startup),
    // Protocol/SQL layer: statement text is decoded from character_set_client, results are
    // sent in character_set_results (NULL: as stored), literals take character_set_connection
    // and collation_connection.
    v("character_set_client", Both, CHARSET, true, Def::Str("utf8mb4")),
    v("character_set_connection", Both, CHARSET, true, Def::Str("utf8mb4")),
    // SQL layer: USE sets the session value to the database's charset; CREATE DATABASE
    // without a charset takes character_set_server.
    v("character_set_database", Both, CHARSET, true, Def::Str("utf8mb4")),
    v("character_set_results", Both, Kind::Str(StrCheck::Charset { nullable: true }), true, Def::Str("utf8mb4")),
    v("character_set_server", Both, CHARSET, true, Def::Str("utf8mb4")),
    v("character_set_system", G, TEXT, false, Def::Str("utf8mb3")),
    v("collation_connection", Both, COLLATION, true, Def::Str("utf8mb4_0900_ai_ci")),
    v("collation_database", Both, COLLATION, true, Def::Str("utf8mb4_0900_ai_ci")),
    v("collation_server", Both, COLLATION, true, Def::Str("utf8mb4_0900_ai_ci")),
    v("cte_max_recursion_depth", Both, u(0, 4_294_967_295), true, Def::UInt(1000)),
    v("datadir", G, TEXT, false, Def::Startup),
    // The protocol layer's greeting plugin.
    v("default_authentication_plugin", G, TEXT, false, Def::Str("caching_sha2_password")),
    // SQL layer: CREATE TABLE without ENGINE; only InnoDB exists (else error 1286).
    v("default_storage_engine", Both, ENGINE, true, Def::Str("InnoDB")),
    v("default_tmp_storage_engine", Both, ENGINE, true, Def::Str("InnoDB")),
    // Scale added by `/`: the arithmetic in innoxide_sql::types uses 4; read-only until it
    // takes the session value.
    v("div_precision_increment", Both, u(0, 30), false, Def::UInt(4)),
    // SQL layer: the previous statement's errors (SessionVars::set_diagnostics).
    v("error_count", S, RO_U, false, Def::NoDefault),
    // The SQL layer implements only the ON behaviour (no implicit TIMESTAMP defaults).
    v("explicit_defaults_for_timestamp", Both, Kind::Bool, false, Def::Bool(true)),
    // SQL layer: foreign key checks (mysqldump turns them off while loading).
    v("foreign_key_checks", Both, Kind::Bool, true, Def::Bool(true)),
    // SQL layer: GROUP_CONCAT truncates its result here (warning 1260).
    v("group_concat_max_len", Both, u(4, u64::MAX), true, Def::UInt(1024)),
    // No replication: no GTIDs, no binary log.
    v("gtid_mode", G, TEXT, false, Def::Str("OFF")),
    // TLS through rustls: YES when ssl_cert and ssl_key are set, DISABLED otherwise.
    v("have_openssl", G, TEXT, false, Def::Startup),
    v("have_ssl", G, TEXT, false, Def::Startup),
    v("hostname", G, TEXT, false, Def::Startup),
    // Nothing runs at connect.
    v("init_connect", G, TEXT, false, Def::Str("")),
    eng("innodb_adaptive_flushing", G, Kind::Bool, true, Def::Bool(true), Tun::AdaptiveFlushing),
    eng("innodb_adaptive_flushing_lwm", G, Kind::Double { min: 0.0, max: 70.0 }, true, Def::Double(10.0), Tun::AdaptiveFlushingLwm),
    // Engine (btree::adaptive_hash): SET GLOBAL goes through Registry::set_ahi_switch, so
    // OFF also frees the entries.
    eng("innodb_adaptive_hash_index", G, Kind::Bool, true, Def::Bool(true), Tun::AdaptiveHashIndex),
    v("innodb_adaptive_hash_index_parts", G, u(1, 512), false, Def::Startup),
    // SQL layer (dml.rs AI1-AI3): 0 "traditional", every insert holds the table's AUTO-INC
    // lock to its end; 1 "consecutive", only inserts of an unknown number of rows do (INSERT
    // ... SELECT, LOAD DATA), others reserve their values at once; 2 "interleaved" (MySQL
    // 8.0's default), no AUTO-INC lock. Static, as in MySQL.
    v("innodb_autoinc_lock_mode", G, u(0, 2), false, Def::UInt(2)),
    // Engine (buffer_pool::dump): ib_buffer_pool is written at shutdown (when
    // innodb_buffer_pool_dump_at_shutdown is ON then) with the hottest
    // innodb_buffer_pool_dump_pct of each LRU list (as it is then) and read back in the
    // background at start (load_at_startup: static, as in MySQL).
    v("innodb_buffer_pool_chunk_size", G, u(1 << 20, u64::MAX), false, Def::Startup),
    eng("innodb_buffer_pool_dump_at_shutdown", G, Kind::Bool, true, Def::Bool(true), Tun::DumpAtShutdown),
    // dump_now, load_now, load_abort are triggers (exec::Session::trigger): ON starts the
    // action in the background and the value reads OFF again, as in MySQL.
    v("innodb_buffer_pool_dump_now", G, Kind::Bool, true, Def::Bool(false)),
    eng("innodb_buffer_pool_dump_pct", G, u(1, 100), true, Def::UInt(25), Tun::DumpPct),
    v("innodb_buffer_pool_instances", G, u(1, 64), false, Def::Startup),
    v("innodb_buffer_pool_load_abort", G, Kind::Bool, true, Def::Bool(false)),
    v("innodb_buffer_pool_load_at_startup", G, Kind::Bool, false, Def::Startup),
    v("innodb_buffer_pool_load_now", G, Kind::Bool, true, Def::Bool(false)),
    // SET GLOBAL resizes the pool online in chunks (Registry::set_pool_resizer, engine
    // buffer_pool::resize); the value is rounded up to chunk size x instances.
    v("innodb_buffer_pool_size", G, u(5 << 20, u64::MAX), true, Def::UInt(128 << 20)),
    // Page checksums are CRC-32C, as InnoDB's crc32.
    v("innodb_checksum_algorithm", G, TEXT, false, Def::Str("crc32")),
    eng("innodb_concurrency_tickets", G, u(1, U32), true, Def::UInt(5000), Tun::ConcurrencyTickets),
    eng("innodb_deadlock_detect", G, Kind::Bool, true, Def::Bool(true), Tun::DeadlockDetect),
    // New tables are DYNAMIC; dynamic in MySQL, read-only until CREATE TABLE reads it.
    v("innodb_default_row_format", G, TEXT, false, Def::Str("dynamic")),
    v("innodb_doublewrite", G, Kind::Bool, false, Def::Startup),
    // Every table has its own .ibd file.
    v("innodb_file_per_table", G, Kind::Bool, false, Def::Bool(true)),
    eng("innodb_flush_log_at_timeout", G, u(1, 2700), true, Def::UInt(1), Tun::FlushLogAtTimeout),
    eng("innodb_flush_log_at_trx_commit", G, u(0, 2), true, Def::UInt(1), Tun::FlushLogAtTrxCommit),
    // Engine (tablespace/file.rs, redo/file.rs): how data and log files are opened and
    // synced (EngineConfig::flush_method). littlesync and nosync are refused (`supported`).
    v("innodb_flush_method", G, Kind::Enum(FLUSH_METHOD_NAMES), false, Def::Startup),
    // Engine (flush::neighbors): 1 flushes a page's contiguous dirty neighbours in its extent
    // with it, 2 every dirty page of the extent.
    eng("innodb_flush_neighbors", G, u(0, 2), true, Def::UInt(0), Tun::FlushNeighbors),
    eng("innodb_io_capacity", G, u(100, u64::MAX), true, Def::UInt(200), Tun::IoCapacity),
    eng("innodb_io_capacity_max", G, u(100, u64::MAX), true, Def::UInt(2000), Tun::IoCapacityMax),
    // Global: the engine's default; session: SQL layer calls Trx::set_lock_wait_timeout with
    // SessionVars::lock_wait_timeout() for each transaction.
    eng("innodb_lock_wait_timeout", Both, u(1, 1_073_741_824), true, Def::UInt(50), Tun::LockWaitTimeout),
    v("innodb_log_buffer_size", G, u(256 << 10, U32), false, Def::Startup),
    v("innodb_log_file_size", G, u(4 << 20, 512 << 30), false, Def::Startup),
    v("innodb_log_files_in_group", G, u(2, 100), false, Def::Startup),
    eng("innodb_lru_scan_depth", G, u(100, U32), true, Def::UInt(1024), Tun::LruScanDepth),
    eng("innodb_max_dirty_pages_pct", G, Kind::Double { min: 0.0, max: 99.999 }, true, Def::Double(90.0), Tun::MaxDirtyPagesPct),
    eng("innodb_max_dirty_pages_pct_lwm", G, Kind::Double { min: 0.0, max: 99.999 }, true, Def::Double(10.0), Tun::MaxDirtyPagesPctLwm),
    eng("innodb_max_purge_lag", G, u(0, U32), true, Def::UInt(0), Tun::MaxPurgeLag),
    eng("innodb_max_purge_lag_delay", G, u(0, 10_000_000), true, Def::UInt(0), Tun::MaxPurgeLagDelay),
    eng("innodb_old_blocks_pct", G, u(5, 95), true, Def::UInt(37), Tun::OldBlocksPct),
    eng("innodb_old_blocks_time", G, u(0, U32), true, Def::UInt(1000), Tun::OldBlocksTime),
    // Engine (tablespace/file.rs): the file-handle cache keeps at most this many files open,
    // ibdata1 and the redo log files included (EngineConfig::open_files).
    v("innodb_open_files", G, u(10, 2_147_483_647), false, Def::Startup),
    // At most innodb_buffer_pool_instances (options.rs caps it, as InnoDB does).
    v("innodb_page_cleaners", G, u(1, 64), false, Def::Startup),
    v("innodb_page_size", G, u(4096, 65536), false, Def::Startup),
    v("innodb_purge_threads", G, u(1, 32), false, Def::Startup),
    // Engine (buffer_pool::read_ahead): random read-ahead, and linear read-ahead's threshold
    // (0 turns it off, as in InnoDB's code).
    eng("innodb_random_read_ahead", G, Kind::Bool, true, Def::Bool(false), Tun::RandomReadAhead),
    eng("innodb_read_ahead_threshold", G, u(0, 64), true, Def::UInt(56), Tun::ReadAheadThreshold),
    // The I/O threads serving read-ahead requests; a thread that needs a page reads it itself.
    v("innodb_read_io_threads", G, u(1, 64), false, Def::Startup),
    // Static in MySQL too.
    eng("innodb_rollback_on_timeout", G, Kind::Bool, false, Def::Bool(false), Tun::RollbackOnTimeout),
    // MariaDB's variable (session and global there); engine-wide here.
    eng("innodb_snapshot_isolation", G, Kind::Bool, true, Def::Bool(false), Tun::SnapshotIsolation),
    // SQL catalog (Catalog::stats): a table's statistics are computed again once more than a
    // tenth of its rows changed since they were last computed (ANALYZE TABLE always does).
    v("innodb_stats_auto_recalc", G, Kind::Bool, true, Def::Bool(true)),
    // Leaves sampled per index by the statistics (innoxide_engine::stats).
    v("innodb_stats_persistent_sample_pages", G, u(1, u64::MAX), true, Def::UInt(20)),
    // SQL layer (ddl.rs `format_options`): ON, a CREATE or ALTER TABLE whose ROW_FORMAT or
    // KEY_BLOCK_SIZE InnoDB cannot honour fails with 1031 after its 1478 warnings; OFF, the
    // option is ignored or replaced with those warnings.
    v("innodb_strict_mode", Both, Kind::Bool, true, Def::Bool(true)),
    eng("innodb_thread_concurrency", G, u(0, 1000), true, Def::UInt(0), Tun::ThreadConcurrency),
    v("innodb_version", G, TEXT, false, Def::Startup),
    // The write threads of flush batches (engine flush::write_threads).
    v("innodb_write_io_threads", G, u(1, 64), false, Def::Startup),
    // SQL layer: the next INSERT's auto-increment value (SessionVars::take_insert_id).
    v("insert_id", S, u(0, u64::MAX), true, Def::NoDefault),
    // Protocol layer: the session's wait_timeout is set from it for CLIENT_INTERACTIVE.
    v("interactive_timeout", Both, u(1, YEAR_SECS), true, Def::UInt(28800)),
    // SQL layer: LAST_INSERT_ID() reads it, INSERT sets it (SessionVars::set_last_insert_id).
    v("last_insert_id", S, u(0, u64::MAX), true, Def::NoDefault),
    // Date functions use English names only.
    v("lc_time_names", Both, TEXT, false, Def::Str("en_US")),
    v("license", G, TEXT, false, Def::Str("Apache-2.0")),
    // SQL layer: LOAD DATA LOCAL asks the client for the file only when ON (else 3948).
    v("local_infile", G, Kind::Bool, true, Def::Bool(false)),
    // SQL layer: how long a statement waits for a table (metadata) lock; mysqld_exporter
    // sets it on connect.
    v("lock_wait_timeout", Both, u(1, YEAR_SECS), true, Def::UInt(YEAR_SECS)),
    v("log_bin", G, Kind::Bool, false, Def::Bool(false)),
    // The slow query log also takes ALTER, ANALYZE, OPTIMIZE, CHECK, CREATE/DROP INDEX.
    v("log_slow_admin_statements", G, Kind::Bool, true, Def::Bool(false)),
    // A statement longer than this counts in Slow_queries (and goes to the slow query log
    // when slow_query_log is ON): conn.rs reads the session value per statement.
    v("long_query_time", Both, Kind::Double { min: 0.0, max: 31_536_000.0 }, true, Def::Double(10.0)),
    // Table names are case-sensitive.
    v("lower_case_table_names", G, RO_U, false, Def::UInt(0)),
    // roles.rs: roles granted to every account (privs.rs P4); SET GLOBAL reloads the grants.
    v("mandatory_roles", G, TEXT, true, Def::Str("")),
    // Protocol layer: a larger packet is error 1153. Session value read-only (error 1621),
    // copied from the global at connect, as MySQL 8.0.
    v("max_allowed_packet", Both, u(1024, 1 << 30), true, Def::UInt(64 << 20)),
    // Listener: Registry::max_connections(); one more is refused with error 1040.
    v("max_connections", G, u(1, 100_000), true, Def::UInt(151)),
    // SQL layer: SELECT statements stop after this many milliseconds (0: no limit).
    v("max_execution_time", Both, u(0, U32), true, Def::UInt(0)),
    // SQL layer: MEMORY-like temporary tables (sysbench sets it); stored and read back.
    v("max_heap_table_size", Both, u(16384, u64::MAX), true, Def::UInt(16 << 20)),
    // Prepared statements: Registry::max_prepared_stmt_count(); one more is error 1461.
    v("max_prepared_stmt_count", G, u(0, 4_194_304), true, Def::UInt(16382)),
    v("net_buffer_length", Both, RO_U, false, Def::UInt(16384)),
    // Protocol layer: socket read and write timeouts (JDBC sets net_write_timeout).
    v("net_read_timeout", Both, u(1, YEAR_SECS), true, Def::UInt(30)),
    v("net_write_timeout", Both, u(1, YEAR_SECS), true, Def::UInt(60)),
    v("old_alter_table", Both, Kind::Bool, false, Def::Bool(false)),
    // Static (set at start, STATIC_OPTIONS): ON, performance_schema's tables show the engine's
    // wait accounting (always on, it is cheap); OFF, they are empty, as in MySQL.
    v("performance_schema", G, Kind::Bool, false, Def::Bool(true)),
    v("port", G, u(0, 65535), false, Def::Startup),
    // profile.rs: SHOW PROFILES / SHOW PROFILE time the session's statements stage by stage.
    v("profiling", Both, Kind::Bool, true, Def::Bool(false)),
    v("profiling_history_size", Both, u(0, 100), true, Def::UInt(15)),
    v("protocol_version", G, RO_U, false, Def::UInt(10)),
    // SQL layer: CONNECTION_ID() returns it (SessionVars::pseudo_thread_id).
    v("pseudo_thread_id", S, u(0, 2_147_483_647), true, Def::ConnectionId),
    v("read_only", G, Kind::Bool, false, Def::Bool(false)),
    // SQL layer: LOAD DATA INFILE reads server files only under this directory; NULL (the
    // default) refuses it (1290), '' allows any file.
    v("secure_file_priv", G, TEXT, false, Def::Null),
    v("server_id", G, RO_U, false, Def::UInt(1)),
    // slowlog.rs: slow statements are appended to slow_query_log_file.
    v("slow_query_log", G, Kind::Bool, true, Def::Bool(false)),
    // Set at start to <datadir>/<hostname>-slow.log, as mysqld; DEFAULT ('') means that file.
    v("slow_query_log_file", G, TEXT, true, Def::Str("")),
    v("socket", G, TEXT, false, Def::Startup),
    // exec/sort.rs: an ORDER BY without LIMIT keeps this many bytes of rows in memory, then
    // writes sorted runs to tmpdir and merges them (Sort_merge_passes).
    v("sort_buffer_size", Both, u(32768, u64::MAX), true, Def::UInt(262_144)),
    // Only OFF is implemented (`supported` refuses ON): `WHERE auto_inc_col IS NULL` is
    // plain SQL. Clients set it to 0 on connect.
    v("sql_auto_is_null", Both, Kind::Bool, true, Def::Bool(false)),
    // No binary log: nothing is logged either way, as on mysqld with log_bin OFF.
    v("sql_log_bin", S, Kind::Bool, true, Def::Bool(true)),
    // SQL layer: everything sql_mode governs (strictness, quoting, zero dates...).
    v("sql_mode", Both, Kind::Set, true, Def::Mode(SqlMode::DEFAULT)),
    // SQL layer: SHOW WARNINGS does not record notes when OFF (mysqldump turns it off).
    v("sql_notes", Both, Kind::Bool, true, Def::Bool(true)),
    // SQL layer: UPDATE/DELETE without a key in WHERE and no LIMIT is error 1175.
    v("sql_quote_show_create", Both, Kind::Bool, true, Def::Bool(true)),
    v("sql_safe_updates", Both, Kind::Bool, true, Def::Bool(false)),
    // SQL layer: an implicit LIMIT on top-level SELECTs.
    v("sql_select_limit", Both, u(0, u64::MAX), true, Def::UInt(u64::MAX)),
    // TLS certificate and key (PEM) offered to clients; empty: no TLS.
    v("ssl_cert", G, TEXT, false, Def::Startup),
    v("ssl_key", G, TEXT, false, Def::Startup),
    v("super_read_only", G, Kind::Bool, false, Def::Bool(false)),
    v("system_time_zone", G, TEXT, false, Def::Startup),
    // table_cache.rs: the table descriptions kept (least recently used unreferenced ones
    // go beyond it); autosized at start to min(400 + table_open_cache / 2, 2000).
    v("table_definition_cache", G, u(400, 524_288), true, Def::UInt(2000)),
    // table_cache.rs: tables kept open, table_open_cache / table_open_cache_instances per
    // instance (least recently used unused ones go beyond it).
    v("table_open_cache", G, u(1, 524_288), true, Def::UInt(4000)),
    // Static (STATIC_OPTIONS): the table open cache's instances; a session uses instance
    // connection id % instances.
    v("table_open_cache_instances", G, u(1, 64), false, Def::UInt(16)),
    // thread_cache.rs: threads kept waiting for the next connection; autosized at start to
    // min(8 + max_connections / 100, 100).
    v("thread_cache_size", G, u(0, 16384), true, Def::UInt(9)),
    // Times are UTC throughout (NOW(), TIMESTAMP columns): SYSTEM and +00:00 are accepted,
    // other zones are refused by `supported` until conversions exist.
    v("time_zone", Both, Kind::Str(StrCheck::TimeZone), true, Def::Str("SYSTEM")),
    // SQL layer: NOW() returns it when set (SessionVars::timestamp); DEFAULT or 0 resets to
    // the clock.
    v("timestamp", S, Kind::Double { min: 0.0, max: 2_147_483_647.0 }, true, Def::Null),
    // The protocols rustls negotiates (its safe defaults).
    v("tls_version", G, TEXT, false, Def::Str("TLSv1.2,TLSv1.3")),
    // SQL layer: internal temporary tables (sysbench sets it); stored and read back.
    v("tmp_table_size", Both, u(1024, u64::MAX), true, Def::UInt(16 << 20)),
    // exec/sort.rs: the directory of sort runs (created and unlinked at once).
    v("tmpdir", G, TEXT, false, Def::Startup),
    // Global: Tunables::set_isolation (new transactions' level); session: SQL layer calls
    // Trx::set_isolation(SessionVars::isolation()) at each transaction start.
    eng("transaction_isolation", Both, Kind::Enum(ISOLATION_NAMES), true, Def::Str("REPEATABLE-READ"), Tun::Isolation),
    // SQL layer: writes in a read-only transaction are error 1792.
    v("transaction_read_only", Both, Kind::Bool, true, Def::Bool(false)),
    // SQL layer: unique secondary index checks may be relaxed while loading (mysqldump).
    v("unique_checks", Both, Kind::Bool, true, Def::Bool(true)),
    v("version", G, TEXT, false, Def::Str(SERVER_VERSION)),
    v("version_comment", G, TEXT, false, Def::Str("innoxide")),
    v("version_compile_machine", G, TEXT, false, Def::Startup),
    v("version_compile_os", G, TEXT, false, Def::Startup),
    // Protocol layer: idle connections are closed after this many seconds.
    v("wait_timeout", Both, u(1, YEAR_SECS), true, Def::UInt(28800)),
    // SQL layer: the previous statement's warnings, notes and errors
    // (SessionVars::set_diagnostics).
    v("warning_count", S, RO_U, false, Def::NoDefault),
];

/// Older names clients still query.
const ALIASES: &[(&str, &str)] = &[
    ("identity", "last_insert_id"),
    ("tx_isolation", "transaction_isolation"),
    ("tx_read_only", "transaction_read_only"),
];

/// `a == b` in a const context.
pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The index of a variable, resolved at compile time (a misspelt name does not compile).
pub const fn idx(name: &str) -> usize {
    let mut i = 0;
    while i < VARS.len() {
        if str_eq(VARS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such variable in VARS")
}

const AUTOCOMMIT: usize = idx("autocommit");
const AUTO_INCREMENT_INCREMENT: usize = idx("auto_increment_increment");
const AUTO_INCREMENT_OFFSET: usize = idx("auto_increment_offset");
const BASEDIR: usize = idx("basedir");
const BIND_ADDRESS: usize = idx("bind_address");
const CHARACTER_SET_CLIENT: usize = idx("character_set_client");
const CHARACTER_SET_CONNECTION: usize = idx("character_set_connection");
const CHARACTER_SET_DATABASE: usize = idx("character_set_database");
const CHARACTER_SET_RESULTS: usize = idx("character_set_results");
const CHARACTER_SET_SERVER: usize = idx("character_set_server");
const COLLATION_CONNECTION: usize = idx("collation_connection");
const COLLATION_DATABASE: usize = idx("collation_database");
const COLLATION_SERVER: usize = idx("collation_server");
const DATADIR: usize = idx("datadir");
const GROUP_CONCAT_MAX_LEN: usize = idx("group_concat_max_len");
const SORT_BUFFER_SIZE: usize = idx("sort_buffer_size");
const TMP_TABLE_SIZE: usize = idx("tmp_table_size");
const MAX_HEAP_TABLE_SIZE: usize = idx("max_heap_table_size");
const TMPDIR: usize = idx("tmpdir");
const LOCAL_INFILE: usize = idx("local_infile");
const AUTOINC_LOCK_MODE: usize = idx("innodb_autoinc_lock_mode");
const SECURE_FILE_PRIV: usize = idx("secure_file_priv");
const CTE_MAX_RECURSION_DEPTH: usize = idx("cte_max_recursion_depth");
const HAVE_OPENSSL: usize = idx("have_openssl");
const HAVE_SSL: usize = idx("have_ssl");
const HOSTNAME: usize = idx("hostname");
const LOG_SLOW_ADMIN_STATEMENTS: usize = idx("log_slow_admin_statements");
const ACTIVATE_ALL_ROLES_ON_LOGIN: usize = idx("activate_all_roles_on_login");
const INNODB_STATS_AUTO_RECALC: usize = idx("innodb_stats_auto_recalc");
const INNODB_STATS_SAMPLE_PAGES: usize = idx("innodb_stats_persistent_sample_pages");
const LONG_QUERY_TIME: usize = idx("long_query_time");
const MANDATORY_ROLES: usize = idx("mandatory_roles");
const PROFILING: usize = idx("profiling");
const PROFILING_HISTORY_SIZE: usize = idx("profiling_history_size");
const SLOW_QUERY_LOG: usize = idx("slow_query_log");
const SLOW_QUERY_LOG_FILE: usize = idx("slow_query_log_file");
const INNODB_BUFFER_POOL_INSTANCES: usize = idx("innodb_buffer_pool_instances");
const INNODB_BUFFER_POOL_CHUNK_SIZE: usize = idx("innodb_buffer_pool_chunk_size");
const INNODB_BUFFER_POOL_LOAD_AT_STARTUP: usize = idx("innodb_buffer_pool_load_at_startup");
const INNODB_BUFFER_POOL_SIZE: usize = idx("innodb_buffer_pool_size");
const INNODB_DOUBLEWRITE: usize = idx("innodb_doublewrite");
const INNODB_FLUSH_METHOD: usize = idx("innodb_flush_method");
const INNODB_OPEN_FILES: usize = idx("innodb_open_files");
const INNODB_IO_CAPACITY: usize = idx("innodb_io_capacity");
const INNODB_IO_CAPACITY_MAX: usize = idx("innodb_io_capacity_max");
const INNODB_LOCK_WAIT_TIMEOUT: usize = idx("innodb_lock_wait_timeout");
const INNODB_LOG_BUFFER_SIZE: usize = idx("innodb_log_buffer_size");
const INNODB_LOG_FILE_SIZE: usize = idx("innodb_log_file_size");
const INNODB_LOG_FILES_IN_GROUP: usize = idx("innodb_log_files_in_group");
const INNODB_PAGE_CLEANERS: usize = idx("innodb_page_cleaners");
const INNODB_PAGE_SIZE: usize = idx("innodb_page_size");
const INNODB_PURGE_THREADS: usize = idx("innodb_purge_threads");
const INNODB_READ_IO_THREADS: usize = idx("innodb_read_io_threads");
const INNODB_WRITE_IO_THREADS: usize = idx("innodb_write_io_threads");
const INNODB_AHI_PARTS: usize = idx("innodb_adaptive_hash_index_parts");
const INNODB_VERSION: usize = idx("innodb_version");
const INSERT_ID: usize = idx("insert_id");
const INTERACTIVE_TIMEOUT: usize = idx("interactive_timeout");
const LAST_INSERT_ID: usize = idx("last_insert_id");
const ERROR_COUNT: usize = idx("error_count");
const WARNING_COUNT: usize = idx("warning_count");
const MAX_ALLOWED_PACKET: usize = idx("max_allowed_packet");
const MAX_CONNECTIONS: usize = idx("max_connections");
const MAX_EXECUTION_TIME: usize = idx("max_execution_time");
const LOCK_WAIT_TIMEOUT: usize = idx("lock_wait_timeout");
const MAX_PREPARED_STMT_COUNT: usize = idx("max_prepared_stmt_count");
const NET_READ_TIMEOUT: usize = idx("net_read_timeout");
const NET_WRITE_TIMEOUT: usize = idx("net_write_timeout");
const PORT: usize = idx("port");
const PSEUDO_THREAD_ID: usize = idx("pseudo_thread_id");
const SOCKET: usize = idx("socket");
const SQL_AUTO_IS_NULL: usize = idx("sql_auto_is_null");
const SSL_CERT: usize = idx("ssl_cert");
const SSL_KEY: usize = idx("ssl_key");
const SQL_MODE: usize = idx("sql_mode");
const SQL_NOTES: usize = idx("sql_notes");
const SQL_SAFE_UPDATES: usize = idx("sql_safe_updates");
const SQL_QUOTE_SHOW_CREATE: usize = idx("sql_quote_show_create");
const FOREIGN_KEY_CHECKS: usize = idx("foreign_key_checks");
const INNODB_STRICT_MODE: usize = idx("innodb_strict_mode");
const SQL_SELECT_LIMIT: usize = idx("sql_select_limit");
const SYSTEM_TIME_ZONE: usize = idx("system_time_zone");
const TIME_ZONE: usize = idx("time_zone");
const TIMESTAMP: usize = idx("timestamp");
const TRANSACTION_ISOLATION: usize = idx("transaction_isolation");
const TRANSACTION_READ_ONLY: usize = idx("transaction_read_only");
const VERSION_COMPILE_MACHINE: usize = idx("version_compile_machine");
const VERSION_COMPILE_OS: usize = idx("version_compile_os");
const WAIT_TIMEOUT: usize = idx("wait_timeout");
const TABLE_DEFINITION_CACHE: usize = idx("table_definition_cache");
const TABLE_OPEN_CACHE: usize = idx("table_open_cache");
const TABLE_OPEN_CACHE_INSTANCES: usize = idx("table_open_cache_instances");
const THREAD_CACHE_SIZE: usize = idx("thread_cache_size");

/// The defaults MySQL 8.0 sizes from other variables at start, when no option sets them:
/// thread_cache_size = min(8 + max_connections / 100, 100) and table_definition_cache =
/// min(400 + table_open_cache / 2, 2000) (9 and 2000 with the defaults). `value` gives the
/// start-up value of another row. `SET GLOBAL x = DEFAULT` takes them too.
pub fn autosized_default(i: usize, value: impl Fn(usize) -> u64) -> Option<VarValue> {
    match i {
        THREAD_CACHE_SIZE => Some(VarValue::UInt((8 + value(MAX_CONNECTIONS) / 100).min(100))),
        TABLE_DEFINITION_CACHE => Some(VarValue::UInt(
            (400 + value(TABLE_OPEN_CACHE) / 2).min(2000),
        )),
        _ => None,
    }
}

/// The rows `autosized_default` sizes.
pub const AUTOSIZED: [usize; 2] = [THREAD_CACHE_SIZE, TABLE_DEFINITION_CACHE];

/// How a start-up option may set a variable (V5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptKind {
    /// Not an option: session-only, computed, or not settable from the command line in MySQL.
    None,
    /// The option sets the global value.
    Set,
    /// Read-only in innoxide: the option is accepted with the value in force (the compiled
    /// default); another value gives a warning and changes nothing.
    Fixed,
}

/// Global variables that are not options (MySQL's NO_CMD_LINE ones, and computed values).
const NOT_OPTIONS: &[&str] = &[
    "character_set_client",
    "character_set_connection",
    "character_set_database",
    "character_set_results",
    "character_set_system",
    "collation_connection",
    "collation_database",
    "foreign_key_checks",
    "have_openssl",
    "have_ssl",
    "hostname",
    "innodb_version",
    "license",
    "protocol_version",
    "sql_auto_is_null",
    "sql_notes",
    "sql_safe_updates",
    "sql_select_limit",
    "system_time_zone",
    "unique_checks",
    "version",
    "version_comment",
    "version_compile_machine",
    "version_compile_os",
];

/// Static variables innoxide honours when set at start.
const STATIC_OPTIONS: &[&str] = &[
    "innodb_autoinc_lock_mode",
    "innodb_rollback_on_timeout",
    "performance_schema",
    "secure_file_priv",
    "table_open_cache_instances",
];

/// Option names that differ from their variable's.
const OPTION_ALIASES: &[(&str, &str)] = &[("default_time_zone", "time_zone")];

/// How an option may set row `i` of [`VARS`].
pub fn option_kind(i: usize) -> OptKind {
    let d = &VARS[i];
    if d.scope == Scope::Session || NOT_OPTIONS.contains(&d.name) {
        OptKind::None
    } else if d.dynamic || d.default == Def::Startup || STATIC_OPTIONS.contains(&d.name) {
        OptKind::Set
    } else {
        OptKind::Fixed
    }
}

/// The variable an option name (canonical: underscores, lower case) stands for, when the
/// option's name differs from the variable's.
pub fn option_alias(name: &str) -> Option<&'static str> {
    OPTION_ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, v)| *v)
}

/// A string option value for a `Set` or `Str` row, checked as SET checks it.
pub fn convert_option(i: usize, v: &str) -> Result<(VarValue, Vec<Warning>), SqlError> {
    convert(i, &VarInput::Str(v.to_string()))
}

/// Row `i`'s compiled default in stored form (None for start-up values and session specials).
pub fn compiled_default_of(i: usize) -> Option<VarValue> {
    compiled_default(&VARS[i])
}

/// A stored value as SHOW VARIABLES prints it.
pub fn show_value(i: usize, v: VarValue) -> String {
    external(&VARS[i], v).to_text()
}

/// Refuses values innoxide does not implement (the message of error 1235).
pub fn check_supported(i: usize, v: &VarValue) -> Result<(), String> {
    supported(i, v).map_err(|e| e.message)
}

/// The charset/collation partner that follows a change of row `i`.
pub fn partner_of(i: usize, v: &VarValue) -> Option<(usize, VarValue)> {
    partner_value(i, v)
}

/// Seeds the engine's initial dynamic settings from an option's stored value.
pub fn tun_seed(t: &mut innoxide_engine::TunableValues, b: Tun, v: &VarValue) {
    let n = as_u64(v);
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let on = n != 0;
    match b {
        Tun::FlushLogAtTrxCommit => t.flush_log_at_trx_commit = u8::try_from(n).unwrap_or(1),
        Tun::FlushLogAtTimeout => t.flush_log_at_timeout = n32,
        Tun::IoCapacity => t.io_capacity = n,
        Tun::IoCapacityMax => t.io_capacity_max = n,
        Tun::MaxDirtyPagesPct => t.max_dirty_pages_pct = as_f64(v),
        Tun::MaxDirtyPagesPctLwm => t.max_dirty_pages_pct_lwm = as_f64(v),
        Tun::AdaptiveFlushing => t.adaptive_flushing = on,
        Tun::AdaptiveFlushingLwm => t.adaptive_flushing_lwm = as_f64(v),
        Tun::OldBlocksPct => t.old_blocks_pct = n32,
        Tun::OldBlocksTime => t.old_blocks_time = n32,
        Tun::LruScanDepth => t.lru_scan_depth = n32,
        Tun::FlushNeighbors => t.flush_neighbors = u8::try_from(n).unwrap_or(0),
        Tun::ReadAheadThreshold => t.read_ahead_threshold = n32,
        Tun::RandomReadAhead => t.random_read_ahead = on,
        Tun::LockWaitTimeout => t.lock_wait_timeout = n,
        Tun::RollbackOnTimeout => t.rollback_on_timeout = on,
        Tun::DeadlockDetect => t.deadlock_detect = on,
        Tun::SnapshotIsolation => t.snapshot_isolation = on,
        Tun::Isolation => t.isolation = Isolation::from_u8(u8::try_from(n).unwrap_or(2)),
        Tun::MaxPurgeLag => t.max_purge_lag = n,
        Tun::MaxPurgeLagDelay => t.max_purge_lag_delay = n,
        Tun::ThreadConcurrency => t.thread_concurrency = n,
        Tun::ConcurrencyTickets => t.concurrency_tickets = n.max(1),
        Tun::AdaptiveHashIndex => t.adaptive_hash_index = on,
        Tun::DumpAtShutdown => t.buffer_pool_dump_at_shutdown = on,
        Tun::DumpPct => t.buffer_pool_dump_pct = n32,
    }
}

/// Finds a variable by name, any case, through the aliases.
/// A comma-separated list of role names as mandatory_roles takes them: `name` or
/// `name@host`, each part bare or quoted with `, ' or "; the host defaults to %. None when
/// it does not parse.
pub fn parse_role_list(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let part = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<String> {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut s = String::new();
        match chars.peek().copied() {
            Some(q @ ('`' | '\'' | '"')) => {
                chars.next();
                loop {
                    match chars.next()? {
                        c if c == q && chars.peek() == Some(&q) => {
                            chars.next();
                            s.push(q);
                        }
                        c if c == q => break,
                        c => s.push(c),
                    }
                }
            }
            _ => {
                while let Some(c) = chars.next_if(|c| !matches!(c, ',' | '@') && !c.is_whitespace())
                {
                    s.push(c);
                }
            }
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        Some(s)
    };
    if text.trim().is_empty() {
        return Some(out);
    }
    loop {
        let user = part(&mut chars)?;
        let host = if chars.next_if_eq(&'@').is_some() {
            part(&mut chars)?
        } else {
            "%".to_string()
        };
        if user.is_empty() || host.is_empty() {
            return None;
        }
        out.push((user, host));
        match chars.next() {
            None => return Some(out),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

fn lookup(name: &str) -> Result<usize, SqlError> {
    let lower = name.to_ascii_lowercase();
    let canonical = ALIASES
        .iter()
        .find(|(a, _)| *a == lower)
        .map_or(lower.as_str(), |(_, c)| *c);
    VARS.binary_search_by(|d| d.name.cmp(canonical))
        .map_err(|_| SqlError::new(ER_UNKNOWN_SYSTEM_VARIABLE, &[&name]))
}

// ---- character sets and collations -------------------------------------------------------

/// Character sets a connection may use, with their default collations. The protocol/SQL layer
/// converts between them and the utf8mb4 it works in.
const CHARSETS: &[(&str, &str)] = &[
    ("binary", "binary"),
    ("latin1", "latin1_swedish_ci"),
    ("utf8mb3", "utf8mb3_general_ci"),
    ("utf8mb4", "utf8mb4_0900_ai_ci"),
];

/// Collations (name, charset). The engine implements binary, latin1_swedish_ci, latin1_bin,
/// utf8mb4_general_ci, utf8mb4_bin, utf8mb4_0900_ai_ci and utf8mb4_0900_bin; the others are
/// accepted for connections (sqlx sends utf8mb4_unicode_ci) and the SQL layer compares with
/// the engine collation of the same family (unicode_ci -> general_ci).
const COLLATIONS: &[(&str, &str)] = &[
    ("binary", "binary"),
    ("latin1_bin", "latin1"),
    ("latin1_swedish_ci", "latin1"),
    ("utf8mb3_bin", "utf8mb3"),
    ("utf8mb3_general_ci", "utf8mb3"),
    ("utf8mb3_unicode_ci", "utf8mb3"),
    ("utf8mb4_0900_ai_ci", "utf8mb4"),
    ("utf8mb4_0900_bin", "utf8mb4"),
    ("utf8mb4_bin", "utf8mb4"),
    ("utf8mb4_general_ci", "utf8mb4"),
    ("utf8mb4_unicode_ci", "utf8mb4"),
];

/// A charset's canonical name and default collation (`utf8` is utf8mb3, as in MySQL 8.0).
fn charset(name: &str) -> Result<(&'static str, &'static str), SqlError> {
    let lower = name.trim().to_ascii_lowercase();
    let lower = if lower == "utf8" {
        "utf8mb3"
    } else {
        lower.as_str()
    };
    CHARSETS
        .iter()
        .find(|(c, _)| *c == lower)
        .copied()
        .ok_or_else(|| SqlError::new(ER_UNKNOWN_CHARACTER_SET, &[&name]))
}

/// A collation's canonical name and charset (`utf8_...` is `utf8mb3_...`).
fn collation(name: &str) -> Result<(&'static str, &'static str), SqlError> {
    let mut lower = name.trim().to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("utf8_") {
        lower = format!("utf8mb3_{rest}");
    }
    COLLATIONS
        .iter()
        .find(|(c, _)| *c == lower)
        .copied()
        .ok_or_else(|| SqlError::new(ER_UNKNOWN_COLLATION, &[&name]))
}

/// A time zone: SYSTEM (UTC, system_time_zone), an offset, or a named zone (types::tz); None
/// for anything else.
pub fn tz_of(s: &str) -> Option<Tz> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("SYSTEM") {
        return Some(Tz::Offset(0));
    }
    time_zone(s).ok()?;
    let sign = match s.as_bytes().first() {
        Some(b'-') => -1,
        Some(b'+') => 1,
        _ => return Tz::named(s),
    };
    let (h, m) = s[1..].split_once(':')?;
    Some(Tz::Offset(
        sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60),
    ))
}

/// `SYSTEM`, `[+-]H:MM`/`[+-]HH:MM` within -13:59..+14:00, or a zone name the zoneinfo has,
/// as MySQL 8.0 accepts (with its time zone tables loaded).
fn time_zone(s: &str) -> Result<String, SqlError> {
    let bad = || SqlError::new(ER_UNKNOWN_TIME_ZONE, &[&s]);
    if s.eq_ignore_ascii_case("SYSTEM") {
        return Ok("SYSTEM".into());
    }
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => return Tz::named(s).map(|_| s.to_string()).ok_or_else(bad),
    };
    let (h, m) = rest.split_once(':').ok_or_else(bad)?;
    let digits = |x: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&x.len()) && x.bytes().all(|b| b.is_ascii_digit())
    };
    if !digits(h, 1..=2) || !digits(m, 2..=2) {
        return Err(bad());
    }
    let (h, m): (i32, i32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    let minutes = h * 60 + m;
    let minutes = if neg { -minutes } else { minutes };
    if m > 59 || !(-(13 * 60 + 59)..=14 * 60).contains(&minutes) {
        return Err(bad());
    }
    Ok(s.to_string())
}

/// innodb_flush_method's stored value (its index in [`FLUSH_METHOD_NAMES`]) for an engine
/// method.
pub fn flush_method_index(m: innoxide_engine::FlushMethod) -> u64 {
    FLUSH_METHOD_NAMES
        .iter()
        .position(|n| *n == m.name())
        .map_or(0, |i| i as u64)
}

/// Values innoxide does not implement yet, refused with error 1235 rather than stored and
/// ignored (V2): sql_auto_is_null=ON; innodb_flush_method littlesync and nosync, MySQL's
/// testing values that skip fsyncs (innoxide never skips one). (Connection character
/// sets are all implemented: the server works in UTF-8 and converts latin1 statements and
/// results at the connection, conn.rs.)
fn supported(i: usize, val: &VarValue) -> Result<(), SqlError> {
    let what = match (i, val) {
        (SQL_AUTO_IS_NULL, VarValue::Bool(true)) => "sql_auto_is_null=ON",
        (INNODB_FLUSH_METHOD, VarValue::UInt(n)) => {
            let name = FLUSH_METHOD_NAMES.get(*n as usize).copied().unwrap_or("?");
            if innoxide_engine::FlushMethod::from_name(name).is_some() {
                return Ok(());
            }
            return Err(SqlError::new(
                ER_NOT_SUPPORTED_YET,
                &[&format!(
                    "innodb_flush_method={name}: it skips fsyncs, which innoxide never does"
                )],
            ));
        }
        _ => return Ok(()),
    };
    Err(SqlError::new(ER_NOT_SUPPORTED_YET, &[&what]))
}

/// For a charset/collation pair: the other member, which follows a change of this one.
fn partner(i: usize) -> Option<usize> {
    match i {
        CHARACTER_SET_CONNECTION => Some(COLLATION_CONNECTION),
        CHARACTER_SET_DATABASE => Some(COLLATION_DATABASE),
        CHARACTER_SET_SERVER => Some(COLLATION_SERVER),
        COLLATION_CONNECTION => Some(CHARACTER_SET_CONNECTION),
        COLLATION_DATABASE => Some(CHARACTER_SET_DATABASE),
        COLLATION_SERVER => Some(CHARACTER_SET_SERVER),
        _ => None,
    }
}

/// The partner's new value after variable `i` was set to `v`.
fn partner_value(i: usize, v: &VarValue) -> Option<(usize, VarValue)> {
    let p = partner(i)?;
    let VarValue::Str(name) = v else { return None };
    let other = match VARS[i].kind {
        Kind::Str(StrCheck::Charset { .. }) => charset(name).ok()?.1,
        _ => collation(name).ok()?.1,
    };
    Some((p, VarValue::Str(other.to_string())))
}

// ---- values ------------------------------------------------------------------------------

/// The stored form of a compiled default (V3); `None` for rows without one.
fn compiled_default(d: &VarDef) -> Option<VarValue> {
    Some(match d.default {
        Def::Bool(b) => VarValue::Bool(b),
        Def::UInt(n) => VarValue::UInt(n),
        Def::Double(x) => VarValue::Double(x),
        Def::Str(s) => match d.kind {
            Kind::Enum(names) => VarValue::UInt(names.iter().position(|n| *n == s)? as u64),
            _ => VarValue::Str(s.to_string()),
        },
        Def::Mode(m) => VarValue::UInt(m.0),
        Def::Null => VarValue::Null,
        Def::Startup | Def::ConnectionId | Def::NoDefault => return None,
    })
}

/// The stored form turned into what `@@x` returns (enum and set names).
fn external(d: &VarDef, v: VarValue) -> VarValue {
    match (d.kind, v) {
        (Kind::Enum(names), VarValue::UInt(i)) => VarValue::Str(
            usize::try_from(i)
                .ok()
                .and_then(|i| names.get(i))
                .map_or_else(String::new, |n| n.to_string()),
        ),
        (Kind::Set, VarValue::UInt(bits)) => VarValue::Str(SqlMode(bits).to_string()),
        (_, v) => v,
    }
}

fn truncated(d: &VarDef, input: &VarInput) -> Warning {
    let e = SqlError::new(ER_TRUNCATED_WRONG_VALUE, &[&d.name, &input.text()]);
    (e.code, e.message)
}

/// Checks and converts a SET value (not DEFAULT) into the stored form, with mysqld's errors
/// and clamping warnings.
fn convert(i: usize, input: &VarInput) -> Result<(VarValue, Vec<Warning>), SqlError> {
    let d = &VARS[i];
    let wrong_type = || SqlError::new(ER_WRONG_TYPE_FOR_VAR, &[&d.name]);
    let wrong_value = || SqlError::new(ER_WRONG_VALUE_FOR_VAR, &[&d.name, &input.text()]);
    let mut warnings = Vec::new();
    let value = match d.kind {
        Kind::Bool => VarValue::Bool(match input {
            VarInput::Int(0) | VarInput::UInt(0) => false,
            VarInput::Int(1) | VarInput::UInt(1) => true,
            VarInput::Str(s) => match s.trim().to_ascii_uppercase().as_str() {
                "ON" | "TRUE" | "1" => true,
                "OFF" | "FALSE" | "0" => false,
                _ => return Err(wrong_value()),
            },
            VarInput::Double(_) => return Err(wrong_type()),
            _ => return Err(wrong_value()),
        }),
        Kind::UInt { min, max } => {
            let n: i128 = match input {
                VarInput::Int(n) => i128::from(*n),
                VarInput::UInt(n) => i128::from(*n),
                _ => return Err(wrong_type()),
            };
            let mut c = n.clamp(i128::from(min), i128::from(max)) as u64;
            if i == MAX_ALLOWED_PACKET {
                // A multiple of 1024, rounded down (block size), as mysqld.
                c -= c % 1024;
            }
            if i128::from(c) != n {
                warnings.push(truncated(d, input));
            }
            VarValue::UInt(c)
        }
        Kind::Double { min, max } => {
            let x = match input {
                VarInput::Int(n) => *n as f64,
                VarInput::UInt(n) => *n as f64,
                VarInput::Double(x) if x.is_finite() => *x,
                _ => return Err(wrong_type()),
            };
            let c = x.clamp(min, max);
            if c != x {
                warnings.push(truncated(d, input));
            }
            if i == TIMESTAMP && c == 0.0 {
                VarValue::Null
            } else {
                VarValue::Double(c)
            }
        }
        Kind::Enum(names) => VarValue::UInt(match input {
            VarInput::Str(s) => names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(s.trim()))
                .ok_or_else(wrong_value)? as u64,
            VarInput::Int(n) if usize::try_from(*n).is_ok_and(|n| n < names.len()) => *n as u64,
            VarInput::UInt(n) if usize::try_from(*n).is_ok_and(|n| n < names.len()) => *n,
            VarInput::Double(_) => return Err(wrong_type()),
            _ => return Err(wrong_value()),
        }),
        Kind::Set => VarValue::UInt(match input {
            VarInput::Str(s) => {
                SqlMode::parse(s)
                    .map_err(|bad| SqlError::new(ER_WRONG_VALUE_FOR_VAR, &[&d.name, &bad]))?
                    .0
            }
            VarInput::Int(_) | VarInput::UInt(_) => {
                let bits = match input {
                    VarInput::Int(n) => u64::try_from(*n).map_err(|_| wrong_value())?,
                    VarInput::UInt(n) => *n,
                    _ => 0,
                };
                if bits >> 33 != 0 {
                    return Err(wrong_value());
                }
                // Through the names, so ANSI/TRADITIONAL expand and unused bits are refused.
                SqlMode::parse(&SqlMode(bits).to_string())
                    .map_err(|_| wrong_value())?
                    .0
            }
            VarInput::Double(_) => return Err(wrong_type()),
            _ => return Err(wrong_value()),
        }),
        Kind::Str(check) => {
            let s = match input {
                VarInput::Str(s) => s,
                VarInput::Null if check == (StrCheck::Charset { nullable: true }) => {
                    return Ok((VarValue::Null, warnings))
                }
                VarInput::Null => return Err(wrong_value()),
                _ => return Err(wrong_type()),
            };
            VarValue::Str(match check {
                StrCheck::Fixed => s.clone(),
                StrCheck::Charset { .. } => charset(s)?.0.to_string(),
                StrCheck::Collation => collation(s)?.0.to_string(),
                StrCheck::TimeZone => time_zone(s.trim())?,
                StrCheck::Engine if s.trim().eq_ignore_ascii_case("InnoDB") => "InnoDB".into(),
                StrCheck::Engine => return Err(SqlError::new(ER_UNKNOWN_STORAGE_ENGINE, &[s])),
            })
        }
    };
    Ok((value, warnings))
}

fn as_u64(v: &VarValue) -> u64 {
    match *v {
        VarValue::UInt(n) => n,
        VarValue::Bool(b) => u64::from(b),
        VarValue::Double(x) => x as u64,
        VarValue::Str(_) | VarValue::Null => 0,
    }
}

fn as_f64(v: &VarValue) -> f64 {
    match *v {
        VarValue::Double(x) => x,
        ref other => as_u64(other) as f64,
    }
}

fn tun_get(t: &Tunables, b: Tun) -> VarValue {
    use VarValue::{Bool, Double, UInt};
    match b {
        Tun::FlushLogAtTrxCommit => UInt(t.flush_log_at_trx_commit.load(Relaxed).into()),
        Tun::FlushLogAtTimeout => UInt(t.flush_log_at_timeout.load(Relaxed).into()),
        Tun::IoCapacity => UInt(t.io_capacity.load(Relaxed)),
        Tun::IoCapacityMax => UInt(t.io_capacity_max.load(Relaxed)),
        Tun::MaxDirtyPagesPct => Double(t.max_dirty_pages_pct()),
        Tun::MaxDirtyPagesPctLwm => Double(t.max_dirty_pages_pct_lwm()),
        Tun::AdaptiveFlushing => Bool(t.adaptive_flushing.load(Relaxed)),
        Tun::AdaptiveFlushingLwm => Double(t.adaptive_flushing_lwm()),
        Tun::OldBlocksPct => UInt(t.old_blocks_pct.load(Relaxed).into()),
        Tun::OldBlocksTime => UInt(t.old_blocks_time.load(Relaxed).into()),
        Tun::LruScanDepth => UInt(t.lru_scan_depth.load(Relaxed).into()),
        Tun::FlushNeighbors => UInt(t.flush_neighbors.load(Relaxed).into()),
        Tun::ReadAheadThreshold => UInt(t.read_ahead_threshold.load(Relaxed).into()),
        Tun::RandomReadAhead => Bool(t.random_read_ahead.load(Relaxed)),
        Tun::LockWaitTimeout => UInt(t.lock_wait_timeout.load(Relaxed)),
        Tun::RollbackOnTimeout => Bool(t.rollback_on_timeout.load(Relaxed)),
        Tun::DeadlockDetect => Bool(t.deadlock_detect.load(Relaxed)),
        Tun::SnapshotIsolation => Bool(t.snapshot_isolation.load(Relaxed)),
        Tun::Isolation => UInt(t.isolation() as u64),
        Tun::MaxPurgeLag => UInt(t.max_purge_lag.load(Relaxed)),
        Tun::MaxPurgeLagDelay => UInt(t.max_purge_lag_delay.load(Relaxed)),
        Tun::ThreadConcurrency => UInt(t.thread_concurrency.load(Relaxed)),
        Tun::ConcurrencyTickets => UInt(t.concurrency_tickets.load(Relaxed)),
        Tun::AdaptiveHashIndex => Bool(t.adaptive_hash_index.load(Relaxed)),
        Tun::DumpAtShutdown => Bool(t.buffer_pool_dump_at_shutdown.load(Relaxed)),
        Tun::DumpPct => UInt(t.buffer_pool_dump_pct.load(Relaxed).into()),
    }
}

/// Stores a checked value (its row's range fits the atomic's width).
fn tun_set(t: &Tunables, b: Tun, v: &VarValue) {
    let n = as_u64(v);
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let on = n != 0;
    match b {
        Tun::FlushLogAtTrxCommit => t
            .flush_log_at_trx_commit
            .store(u8::try_from(n).unwrap_or(1), Relaxed),
        Tun::FlushLogAtTimeout => t.flush_log_at_timeout.store(n32, Relaxed),
        Tun::IoCapacity => t.io_capacity.store(n, Relaxed),
        Tun::IoCapacityMax => t.io_capacity_max.store(n, Relaxed),
        Tun::MaxDirtyPagesPct => t.set_max_dirty_pages_pct(as_f64(v)),
        Tun::MaxDirtyPagesPctLwm => t.set_max_dirty_pages_pct_lwm(as_f64(v)),
        Tun::AdaptiveFlushing => t.adaptive_flushing.store(on, Relaxed),
        Tun::AdaptiveFlushingLwm => t.set_adaptive_flushing_lwm(as_f64(v)),
        Tun::OldBlocksPct => t.old_blocks_pct.store(n32, Relaxed),
        Tun::OldBlocksTime => t.old_blocks_time.store(n32, Relaxed),
        Tun::LruScanDepth => t.lru_scan_depth.store(n32, Relaxed),
        Tun::FlushNeighbors => t
            .flush_neighbors
            .store(u8::try_from(n).unwrap_or(0), Relaxed),
        Tun::ReadAheadThreshold => t.read_ahead_threshold.store(n32, Relaxed),
        Tun::RandomReadAhead => t.random_read_ahead.store(on, Relaxed),
        Tun::LockWaitTimeout => t.lock_wait_timeout.store(n, Relaxed),
        Tun::RollbackOnTimeout => t.rollback_on_timeout.store(on, Relaxed),
        Tun::DeadlockDetect => t.deadlock_detect.store(on, Relaxed),
        Tun::SnapshotIsolation => t.snapshot_isolation.store(on, Relaxed),
        Tun::Isolation => t.set_isolation(Isolation::from_u8(u8::try_from(n).unwrap_or(2))),
        Tun::MaxPurgeLag => t.max_purge_lag.store(n, Relaxed),
        Tun::MaxPurgeLagDelay => t.max_purge_lag_delay.store(n, Relaxed),
        Tun::ThreadConcurrency => t.thread_concurrency.store(n, Relaxed),
        Tun::ConcurrencyTickets => t.concurrency_tickets.store(n.max(1), Relaxed),
        Tun::AdaptiveHashIndex => t.adaptive_hash_index.store(on, Relaxed),
        Tun::DumpAtShutdown => t.buffer_pool_dump_at_shutdown.store(on, Relaxed),
        Tun::DumpPct => t.buffer_pool_dump_pct.store(n32, Relaxed),
    }
}

// ---- start-up values -----------------------------------------------------------------------

/// The host name, as gethostname(2) reports it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".into())
}

/// A directory as mysqld shows it: absolute, with a trailing slash.
/// An optional file path as SHOW VARIABLES shows it ('' when unset).
fn path_text(p: &Option<std::path::PathBuf>) -> String {
    p.as_ref()
        .map_or(String::new(), |p| p.to_string_lossy().into_owned())
}

fn dir_text(p: &std::path::Path) -> String {
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut s = p.to_string_lossy().into_owned();
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

// ---- the registry --------------------------------------------------------------------------

/// The server's system variables (one per server).
pub struct Registry {
    /// Global values of [`Binding::Registry`] rows, indexed like [`VARS`] (other slots Null).
    globals: RwLock<Vec<VarValue>>,
    /// The defaults sized at start ([`autosized_default`]), for `SET GLOBAL x = DEFAULT`.
    autosized: Vec<(usize, VarValue)>,
    tun: Arc<Tunables>,
    /// innodb_autoinc_lock_mode (static), read by every INSERT without the lock of `globals`.
    autoinc_lock_mode: u8,
    /// Starts an online resize of the buffer pool (the engine's `resize_buffer_pool`): returns
    /// the size the pool will have, or InnoDB's message. Unset, innodb_buffer_pool_size is
    /// read-only.
    pool_resizer: OnceLock<PoolResizer>,
    /// Turns the engine's adaptive hash index on or off (`Engine::set_adaptive_hash_index`,
    /// which frees its entries when off). Unset, SET GLOBAL only stores the switch.
    ahi_switch: OnceLock<AhiSwitch>,
}

type PoolResizer = Box<dyn Fn(u64) -> Result<u64, String> + Send + Sync>;
type AhiSwitch = Box<dyn Fn(bool) + Send + Sync>;

/// One connection's session values, indexed like [`VARS`]: dynamic rows with session scope
/// hold a value, the others are unused (their reads go to the global value).
#[derive(Clone, Debug)]
pub struct SessionVars {
    vals: Vec<VarValue>,
    connection_id: u32,
}

impl Registry {
    /// `cfg` and `tunables` are the engine's own (`&engine.inner().cfg`,
    /// `engine.inner().tun.clone()`): what is in force, not a copy.
    pub fn new(opts: &Options, cfg: &EngineConfig, tunables: Arc<Tunables>) -> Registry {
        let mut g: Vec<VarValue> = VARS
            .iter()
            .enumerate()
            .map(|(i, d)| match d.binding {
                // V5: what the options set, else the compiled default.
                Binding::Registry => opts
                    .get(i)
                    .cloned()
                    .or_else(|| compiled_default(d))
                    .unwrap_or(VarValue::Null),
                Binding::Engine(_) => VarValue::Null,
            })
            .collect();
        let exe_dir = match opts.get(BASEDIR) {
            Some(VarValue::Str(b)) => dir_text(std::path::Path::new(b)),
            _ => std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(dir_text))
                .unwrap_or_default(),
        };
        let os = match std::env::consts::OS {
            "linux" => "Linux",
            "macos" => "macOS",
            "freebsd" => "FreeBSD",
            other => other,
        };
        let version_number = SERVER_VERSION
            .split_once('-')
            .map_or(SERVER_VERSION, |(n, _)| n);
        let have_ssl = if opts.ssl_cert.is_some() && opts.ssl_key.is_some() {
            "YES"
        } else {
            "DISABLED"
        };
        let startup = [
            (BASEDIR, VarValue::Str(exe_dir)),
            (BIND_ADDRESS, VarValue::Str(opts.bind_address.clone())),
            (DATADIR, VarValue::Str(dir_text(&cfg.datadir))),
            (HAVE_OPENSSL, VarValue::Str(have_ssl.into())),
            (HAVE_SSL, VarValue::Str(have_ssl.into())),
            (HOSTNAME, VarValue::Str(host_name())),
            (SSL_CERT, VarValue::Str(path_text(&opts.ssl_cert))),
            (SSL_KEY, VarValue::Str(path_text(&opts.ssl_key))),
            (
                INNODB_BUFFER_POOL_INSTANCES,
                VarValue::UInt(cfg.buffer_pool_instances as u64),
            ),
            (
                INNODB_BUFFER_POOL_CHUNK_SIZE,
                VarValue::UInt(cfg.buffer_pool_chunk_size),
            ),
            (
                INNODB_BUFFER_POOL_LOAD_AT_STARTUP,
                VarValue::Bool(cfg.buffer_pool_load_at_startup),
            ),
            (
                INNODB_BUFFER_POOL_SIZE,
                VarValue::UInt(cfg.buffer_pool_size),
            ),
            (INNODB_DOUBLEWRITE, VarValue::Bool(cfg.doublewrite)),
            (
                INNODB_FLUSH_METHOD,
                VarValue::UInt(flush_method_index(cfg.flush_method)),
            ),
            (INNODB_OPEN_FILES, VarValue::UInt(cfg.open_files as u64)),
            (
                INNODB_LOG_BUFFER_SIZE,
                VarValue::UInt(cfg.log_buffer_size as u64),
            ),
            (INNODB_LOG_FILE_SIZE, VarValue::UInt(cfg.log_file_size)),
            (
                INNODB_LOG_FILES_IN_GROUP,
                VarValue::UInt(cfg.log_files_in_group.into()),
            ),
            (
                INNODB_PAGE_CLEANERS,
                VarValue::UInt(cfg.page_cleaners as u64),
            ),
            (INNODB_PAGE_SIZE, VarValue::UInt(cfg.page_size as u64)),
            (
                INNODB_PURGE_THREADS,
                VarValue::UInt(cfg.purge_threads as u64),
            ),
            (
                INNODB_READ_IO_THREADS,
                VarValue::UInt(cfg.read_io_threads as u64),
            ),
            (
                INNODB_WRITE_IO_THREADS,
                VarValue::UInt(cfg.write_io_threads as u64),
            ),
            (
                INNODB_AHI_PARTS,
                VarValue::UInt(cfg.adaptive_hash_index_parts as u64),
            ),
            (INNODB_VERSION, VarValue::Str(version_number.into())),
            (PORT, VarValue::UInt(opts.port.into())),
            (SOCKET, VarValue::Str(opts.socket.clone())),
            (TMPDIR, VarValue::Str(opts.tmpdir.display().to_string())),
            (SYSTEM_TIME_ZONE, VarValue::Str("UTC".into())),
            (
                VERSION_COMPILE_MACHINE,
                VarValue::Str(std::env::consts::ARCH.into()),
            ),
            (VERSION_COMPILE_OS, VarValue::Str(os.into())),
        ];
        for (i, val) in startup {
            g[i] = val;
        }
        if matches!(&g[SLOW_QUERY_LOG_FILE], VarValue::Str(f) if f.is_empty()) {
            let f = cfg.datadir.join(format!("{}-slow.log", host_name()));
            g[SLOW_QUERY_LOG_FILE] = VarValue::Str(f.to_string_lossy().into_owned());
        }
        let autoinc_lock_mode = as_u64(&g[AUTOINC_LOCK_MODE]).min(2) as u8;
        let autosized = AUTOSIZED
            .iter()
            .filter_map(|&i| autosized_default(i, |j| as_u64(&g[j])).map(|v| (i, v)))
            .collect();
        Registry {
            globals: RwLock::new(g),
            autosized,
            tun: tunables,
            autoinc_lock_mode,
            pool_resizer: OnceLock::new(),
            ahi_switch: OnceLock::new(),
        }
    }

    /// innodb_autoinc_lock_mode: 0 traditional, 1 consecutive, 2 interleaved.
    pub fn autoinc_lock_mode(&self) -> u8 {
        self.autoinc_lock_mode
    }

    /// Lets SET GLOBAL innodb_buffer_pool_size resize the pool through `f`.
    pub fn set_pool_resizer(&self, f: impl Fn(u64) -> Result<u64, String> + Send + Sync + 'static) {
        let _ = self.pool_resizer.set(Box::new(f));
    }

    /// Lets SET GLOBAL innodb_adaptive_hash_index switch the engine's index through `f`.
    pub fn set_ahi_switch(&self, f: impl Fn(bool) + Send + Sync + 'static) {
        let _ = self.ahi_switch.set(Box::new(f));
    }

    /// SET GLOBAL innodb_buffer_pool_size: starts the resize and gives the value to store (the
    /// size the pool will have); a refused resize is error 1210 with InnoDB's message.
    fn resize_pool(&self, val: &VarValue) -> Result<VarValue, SqlError> {
        let Some(resize) = self.pool_resizer.get() else {
            return Err(SqlError::new(
                ER_INCORRECT_GLOBAL_LOCAL_VAR,
                &[&"innodb_buffer_pool_size", &"read only"],
            ));
        };
        match resize(as_u64(val)) {
            Ok(n) => Ok(VarValue::UInt(n)),
            Err(message) => Err(SqlError {
                code: ER_WRONG_ARGUMENTS.code,
                state: ER_WRONG_ARGUMENTS.state,
                message,
            }),
        }
    }

    /// The session variables of a new connection (or one reset by COM_RESET_CONNECTION):
    /// global values copied; `connection_id` is pseudo_thread_id's default.
    pub fn new_session(&self, connection_id: u32) -> SessionVars {
        let g = self.globals.read();
        let vals = VARS
            .iter()
            .enumerate()
            .map(|(i, d)| match (d.scope, d.dynamic) {
                (Scope::Global, _) | (Scope::Both, false) => VarValue::Null,
                (Scope::Both, true) => self.global_stored(&g, i),
                (Scope::Session, _) => match d.default {
                    Def::ConnectionId => VarValue::UInt(connection_id.into()),
                    Def::NoDefault => VarValue::UInt(0),
                    _ => compiled_default(d).unwrap_or(VarValue::Null),
                },
            })
            .collect();
        SessionVars {
            vals,
            connection_id,
        }
    }

    fn global_stored(&self, g: &[VarValue], i: usize) -> VarValue {
        match VARS[i].binding {
            Binding::Engine(t) => tun_get(&self.tun, t),
            Binding::Registry => g[i].clone(),
        }
    }

    fn session_stored(&self, s: &SessionVars, g: &[VarValue], i: usize) -> VarValue {
        let d = &VARS[i];
        if d.scope == Scope::Global || (d.scope == Scope::Both && !d.dynamic) {
            return self.global_stored(g, i);
        }
        if i == TIMESTAMP && s.vals[i] == VarValue::Null {
            return VarValue::Double(now_secs());
        }
        s.vals[i].clone()
    }

    /// `@@x` (session value if the variable has one, else global), `@@session.x` (error 1238
    /// for a global-only variable), `@@global.x` (error 1238 for a session-only one).
    pub fn get(&self, s: &SessionVars, name: &str, scope: VarScope) -> Result<VarValue, SqlError> {
        let i = lookup(name)?;
        let d = &VARS[i];
        let session = match scope {
            VarScope::Global if d.scope == Scope::Session => {
                return Err(SqlError::new(
                    ER_INCORRECT_GLOBAL_LOCAL_VAR,
                    &[&d.name, &"SESSION"],
                ))
            }
            VarScope::Session if d.scope == Scope::Global => {
                return Err(SqlError::new(
                    ER_INCORRECT_GLOBAL_LOCAL_VAR,
                    &[&d.name, &"GLOBAL"],
                ))
            }
            VarScope::Global => false,
            VarScope::Session | VarScope::Default => d.scope != Scope::Global,
        };
        let g = self.globals.read();
        let v = if session {
            self.session_stored(s, &g, i)
        } else {
            self.global_stored(&g, i)
        };
        Ok(external(d, v))
    }

    /// `SET [GLOBAL|SESSION] name = value`. Returns the warnings (clamped values).
    /// `VarScope::Default` is SESSION, as in MySQL (a global-only variable needs SET GLOBAL).
    pub fn set(
        &self,
        s: &mut SessionVars,
        name: &str,
        scope: VarScope,
        value: VarInput,
    ) -> Result<Vec<Warning>, SqlError> {
        let i = lookup(name)?;
        let d = &VARS[i];
        if !d.dynamic {
            return Err(SqlError::new(
                ER_INCORRECT_GLOBAL_LOCAL_VAR,
                &[&d.name, &"read only"],
            ));
        }
        let global = scope == VarScope::Global;
        if global && d.scope == Scope::Session {
            return Err(SqlError::new(ER_LOCAL_VARIABLE, &[&d.name]));
        }
        if !global && d.scope == Scope::Global {
            return Err(SqlError::new(ER_GLOBAL_VARIABLE, &[&d.name]));
        }
        if !global && i == MAX_ALLOWED_PACKET {
            return Err(SqlError::new(
                ER_VARIABLE_IS_READONLY,
                &[&"SESSION", &d.name, &"GLOBAL"],
            ));
        }
        if global {
            let mut g = self.globals.write();
            let (val, warnings) = match value {
                VarInput::Default => (
                    self.global_default(i)
                        .ok_or_else(|| SqlError::new(ER_NO_DEFAULT, &[&d.name]))?,
                    Vec::new(),
                ),
                ref v => convert(i, v)?,
            };
            supported(i, &val)?;
            self.check_global(i, &val)?;
            let val = if i == INNODB_BUFFER_POOL_SIZE {
                self.resize_pool(&val)?
            } else {
                val
            };
            let follow = partner_value(i, &val);
            match (d.binding, self.ahi_switch.get()) {
                (Binding::Engine(Tun::AdaptiveHashIndex), Some(switch)) => {
                    switch(as_u64(&val) != 0)
                }
                (Binding::Engine(t), _) => tun_set(&self.tun, t, &val),
                (Binding::Registry, _) => g[i] = val,
            }
            if let Some((p, pv)) = follow {
                g[p] = pv;
            }
            Ok(warnings)
        } else {
            let (val, warnings) = match value {
                VarInput::Default if d.scope == Scope::Both => {
                    (self.global_stored(&self.globals.read(), i), Vec::new())
                }
                VarInput::Default => match d.default {
                    Def::ConnectionId => (VarValue::UInt(s.connection_id.into()), Vec::new()),
                    _ => (
                        compiled_default(d)
                            .ok_or_else(|| SqlError::new(ER_NO_DEFAULT, &[&d.name]))?,
                        Vec::new(),
                    ),
                },
                ref v => convert(i, v)?,
            };
            supported(i, &val)?;
            if let Some((p, pv)) = partner_value(i, &val) {
                s.vals[p] = pv;
            }
            s.vals[i] = val;
            Ok(warnings)
        }
    }

    /// What `SET GLOBAL x = DEFAULT` sets: the default sized at start, else the compiled one.
    fn global_default(&self, i: usize) -> Option<VarValue> {
        (self.autosized.iter())
            .find(|(j, _)| *j == i)
            .map(|(_, v)| v.clone())
            .or_else(|| compiled_default(&VARS[i]))
    }

    /// Cross-variable checks of SET GLOBAL (under the write lock): innodb_io_capacity may not
    /// exceed innodb_io_capacity_max (error 1210, as MySQL 8.0).
    fn check_global(&self, i: usize, val: &VarValue) -> Result<(), SqlError> {
        let n = as_u64(val);
        if let (MANDATORY_ROLES, VarValue::Str(text)) = (i, val) {
            if parse_role_list(text).is_none() {
                return Err(SqlError::new(
                    ER_WRONG_VALUE_FOR_VAR,
                    &[&"mandatory_roles", text],
                ));
            }
        }
        let bad = match i {
            INNODB_IO_CAPACITY => n > self.tun.io_capacity_max.load(Relaxed),
            INNODB_IO_CAPACITY_MAX => n < self.tun.io_capacity.load(Relaxed),
            _ => false,
        };
        if bad {
            return Err(SqlError::new(ER_WRONG_ARGUMENTS, &[&"SET"]));
        }
        Ok(())
    }

    /// `SET NAMES charset [COLLATE collation]` (`None`: DEFAULT, the global
    /// character_set_client): sets character_set_client, _results and _connection, and
    /// collation_connection (the charset's default unless given).
    pub fn set_names(
        &self,
        s: &mut SessionVars,
        charset_name: Option<&str>,
        collation_name: Option<&str>,
    ) -> Result<Vec<Warning>, SqlError> {
        let cs = match charset_name {
            Some(c) => charset(c)?,
            None => {
                let g = self.globals.read();
                match &g[CHARACTER_SET_CLIENT] {
                    VarValue::Str(c) => charset(c)?,
                    _ => charset("utf8mb4")?,
                }
            }
        };
        let coll = match collation_name {
            Some(c) => {
                let (name, of) = collation(c)?;
                if of != cs.0 {
                    return Err(SqlError::new(ER_COLLATION_CHARSET_MISMATCH, &[&c, &cs.0]));
                }
                name
            }
            None => cs.1,
        };
        supported(COLLATION_CONNECTION, &VarValue::Str(coll.to_string()))?;
        for i in [
            CHARACTER_SET_CLIENT,
            CHARACTER_SET_RESULTS,
            CHARACTER_SET_CONNECTION,
        ] {
            s.vals[i] = VarValue::Str(cs.0.to_string());
        }
        s.vals[COLLATION_CONNECTION] = VarValue::Str(coll.to_string());
        Ok(Vec::new())
    }

    /// `SHOW [GLOBAL|SESSION] VARIABLES`: (name, value text) sorted by name. GLOBAL leaves out
    /// session-only variables; SESSION shows session values where they exist.
    pub fn show(&self, s: &SessionVars, global: bool) -> Vec<(String, String)> {
        let g = self.globals.read();
        VARS.iter()
            .enumerate()
            .filter(|(_, d)| !(global && d.scope == Scope::Session))
            .map(|(i, d)| {
                let v = if global {
                    self.global_stored(&g, i)
                } else {
                    self.session_stored(s, &g, i)
                };
                (d.name.to_string(), external(d, v).to_text())
            })
            .collect()
    }

    /// The compiled default (`SET GLOBAL x = DEFAULT`); for read-only start-up values, the
    /// value in force. Error 1230 for variables without a default, 1193 for unknown ones.
    #[cfg(test)]
    pub fn default_value(&self, name: &str) -> Result<VarValue, SqlError> {
        let i = lookup(name)?;
        let d = &VARS[i];
        match d.default {
            Def::Startup => Ok(external(d, self.global_stored(&self.globals.read(), i))),
            _ => self
                .global_default(i)
                .map(|v| external(d, v))
                .ok_or_else(|| SqlError::new(ER_NO_DEFAULT, &[&d.name])),
        }
    }

    fn global_u64(&self, i: usize) -> u64 {
        as_u64(&self.globals.read()[i])
    }

    /// Where sorts write their runs (tmpdir).
    pub fn tmpdir(&self) -> std::path::PathBuf {
        match &self.globals.read()[TMPDIR] {
            VarValue::Str(d) => d.into(),
            _ => std::env::temp_dir(),
        }
    }

    /// The slow query log file, when slow_query_log is ON.
    /// mandatory_roles as (user, host) pairs; None if it does not parse (SET refuses such a
    /// value, startup stops on one).
    pub fn mandatory_roles(&self) -> Option<Vec<(String, String)>> {
        match &self.globals.read()[MANDATORY_ROLES] {
            VarValue::Str(s) => parse_role_list(s),
            _ => Some(Vec::new()),
        }
    }

    /// local_infile: LOAD DATA LOCAL may ask the client for its file.
    pub fn local_infile(&self) -> bool {
        matches!(self.globals.read()[LOCAL_INFILE], VarValue::Bool(true))
    }

    /// secure_file_priv: None when server files may not be read (NULL), else the directory
    /// they must be under ("" for anywhere).
    pub fn secure_file_priv(&self) -> Option<String> {
        match &self.globals.read()[SECURE_FILE_PRIV] {
            VarValue::Str(d) => Some(d.clone()),
            _ => None,
        }
    }

    pub fn slow_query_log_file(&self) -> Option<String> {
        let g = self.globals.read();
        if !matches!(g[SLOW_QUERY_LOG], VarValue::Bool(true)) {
            return None;
        }
        // A relative name is in the data directory, as mysqld's.
        match (&g[SLOW_QUERY_LOG_FILE], &g[DATADIR], &g[HOSTNAME]) {
            (VarValue::Str(f), _, _) if f.starts_with('/') => Some(f.clone()),
            (VarValue::Str(f), VarValue::Str(dir), _) if !f.is_empty() => Some(format!("{dir}{f}")),
            (_, VarValue::Str(dir), VarValue::Str(host)) => Some(format!("{dir}{host}-slow.log")),
            _ => None,
        }
    }

    /// innodb_stats_auto_recalc and innodb_stats_persistent_sample_pages.
    pub fn stats_settings(&self) -> (bool, u64) {
        (
            self.global_u64(INNODB_STATS_AUTO_RECALC) != 0,
            self.global_u64(INNODB_STATS_SAMPLE_PAGES),
        )
    }

    pub fn activate_all_roles_on_login(&self) -> bool {
        self.global_u64(ACTIVATE_ALL_ROLES_ON_LOGIN) != 0
    }

    pub fn log_slow_admin_statements(&self) -> bool {
        self.global_u64(LOG_SLOW_ADMIN_STATEMENTS) != 0
    }

    /// max_connections in force (the listener refuses one more with error 1040).
    pub fn max_connections(&self) -> u64 {
        self.global_u64(MAX_CONNECTIONS)
    }

    /// The global max_allowed_packet in force (the protocol reader's limit before a session
    /// exists; sessions copy it at connect).
    pub fn max_allowed_packet_global(&self) -> u64 {
        self.global_u64(MAX_ALLOWED_PACKET)
    }

    /// max_prepared_stmt_count in force (one more statement is error 1461).
    pub fn max_prepared_stmt_count(&self) -> u64 {
        self.global_u64(MAX_PREPARED_STMT_COUNT)
    }

    /// thread_cache_size in force (the thread cache's size: thread_cache.rs).
    pub fn thread_cache_size(&self) -> u64 {
        self.global_u64(THREAD_CACHE_SIZE)
    }

    /// table_open_cache in force (table_cache.rs).
    pub fn table_open_cache(&self) -> u64 {
        self.global_u64(TABLE_OPEN_CACHE)
    }

    /// table_definition_cache in force (table_cache.rs).
    pub fn table_definition_cache(&self) -> u64 {
        self.global_u64(TABLE_DEFINITION_CACHE)
    }

    /// table_open_cache_instances, set at start (table_cache.rs).
    pub fn table_open_cache_instances(&self) -> u64 {
        self.global_u64(TABLE_OPEN_CACHE_INSTANCES)
    }
}

fn now_secs() -> f64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    d.as_secs() as f64 + f64::from(d.subsec_micros()) / 1e6
}

/// Typed reads of the session values the executor and protocol layer use per statement: no
/// lookup, no parsing (an index and a match).
impl SessionVars {
    /// Whether statements arrive in latin1 (character_set_client), to be decoded to UTF-8.
    pub fn client_latin1(&self) -> bool {
        matches!(&self.vals[CHARACTER_SET_CLIENT], VarValue::Str(c) if c == "latin1")
    }

    /// The character set results go out in (character_set_results, as its default
    /// collation); None for NULL or binary: values go out as they are.
    pub fn results_charset(&self) -> Option<&'static CollationInfo> {
        match &self.vals[CHARACTER_SET_RESULTS] {
            VarValue::Str(c) if c != "binary" => default_collation(c),
            _ => None,
        }
    }

    /// character_set_client's name.
    pub fn character_set_client(&self) -> &str {
        match &self.vals[CHARACTER_SET_CLIENT] {
            VarValue::Str(c) => c,
            _ => "utf8mb4",
        }
    }

    /// collation_connection's name.
    pub fn collation_connection(&self) -> &str {
        match &self.vals[COLLATION_CONNECTION] {
            VarValue::Str(c) => c,
            _ => "utf8mb4_0900_ai_ci",
        }
    }

    fn b(&self, i: usize) -> bool {
        matches!(self.vals[i], VarValue::Bool(true))
    }
    fn n(&self, i: usize) -> u64 {
        as_u64(&self.vals[i])
    }

    pub fn autocommit(&self) -> bool {
        self.b(AUTOCOMMIT)
    }
    pub fn sql_mode(&self) -> SqlMode {
        SqlMode(self.n(SQL_MODE))
    }
    /// transaction_isolation (alias tx_isolation): the level of the session's next transaction.
    pub fn isolation(&self) -> Isolation {
        Isolation::from_u8(u8::try_from(self.n(TRANSACTION_ISOLATION)).unwrap_or(2))
    }
    /// time_zone (SYSTEM is system_time_zone, UTC).
    pub fn session_tz(&self) -> Tz {
        match &self.vals[TIME_ZONE] {
            VarValue::Str(z) => tz_of(z).unwrap_or_default(),
            _ => Tz::default(),
        }
    }
    /// lock_wait_timeout, seconds (LOCK TABLES' table locks).
    pub fn table_lock_wait_timeout(&self) -> u64 {
        self.n(LOCK_WAIT_TIMEOUT)
    }
    /// innodb_lock_wait_timeout, seconds (for Trx::set_lock_wait_timeout).
    pub fn lock_wait_timeout(&self) -> u64 {
        self.n(INNODB_LOCK_WAIT_TIMEOUT)
    }
    pub fn sql_select_limit(&self) -> u64 {
        self.n(SQL_SELECT_LIMIT)
    }
    pub fn auto_increment_increment(&self) -> u64 {
        self.n(AUTO_INCREMENT_INCREMENT)
    }
    pub fn auto_increment_offset(&self) -> u64 {
        self.n(AUTO_INCREMENT_OFFSET)
    }
    /// Foreign keys are checked and their actions run (exec/fk.rs).
    pub fn foreign_key_checks(&self) -> bool {
        self.b(FOREIGN_KEY_CHECKS)
    }
    /// innodb_strict_mode: bad ROW_FORMAT / KEY_BLOCK_SIZE options are errors, not warnings.
    pub fn innodb_strict_mode(&self) -> bool {
        self.b(INNODB_STRICT_MODE)
    }
    /// SHOW CREATE quotes identifiers.
    pub fn sql_quote_show_create(&self) -> bool {
        self.b(SQL_QUOTE_SHOW_CREATE)
    }
    pub fn sql_safe_updates(&self) -> bool {
        self.b(SQL_SAFE_UPDATES)
    }
    pub fn sql_notes(&self) -> bool {
        self.b(SQL_NOTES)
    }
    pub fn transaction_read_only(&self) -> bool {
        self.b(TRANSACTION_READ_ONLY)
    }
    /// Milliseconds; 0: no limit.
    pub fn max_execution_time(&self) -> u64 {
        self.n(MAX_EXECUTION_TIME)
    }
    pub fn group_concat_max_len(&self) -> u64 {
        self.n(GROUP_CONCAT_MAX_LEN)
    }
    /// Bytes of rows a sort keeps in memory before it writes runs (exec/sort.rs).
    pub fn sort_buffer_size(&self) -> u64 {
        self.n(SORT_BUFFER_SIZE)
    }
    /// The in-memory budget of an internal temporary table (group.rs, finish.rs).
    pub fn tmp_table_size(&self) -> u64 {
        self.n(TMP_TABLE_SIZE)
    }
    pub fn max_heap_table_size(&self) -> u64 {
        self.n(MAX_HEAP_TABLE_SIZE)
    }
    /// The rounds a recursive CTE may run (3636 after them).
    pub fn cte_max_recursion_depth(&self) -> u64 {
        self.n(CTE_MAX_RECURSION_DEPTH)
    }
    pub fn wait_timeout(&self) -> u64 {
        self.n(WAIT_TIMEOUT)
    }
    pub fn long_query_time(&self) -> std::time::Duration {
        match self.vals[LONG_QUERY_TIME] {
            VarValue::Double(x) => std::time::Duration::from_secs_f64(x.max(0.0)),
            _ => std::time::Duration::from_secs(10),
        }
    }
    pub fn profiling(&self) -> bool {
        self.b(PROFILING)
    }
    pub fn profiling_history_size(&self) -> usize {
        self.n(PROFILING_HISTORY_SIZE) as usize
    }
    /// For CLIENT_INTERACTIVE connections: wait_timeout takes interactive_timeout's value.
    pub fn use_interactive_timeout(&mut self) {
        self.vals[WAIT_TIMEOUT] = self.vals[INTERACTIVE_TIMEOUT].clone();
    }
    pub fn net_read_timeout(&self) -> u64 {
        self.n(NET_READ_TIMEOUT)
    }
    pub fn net_write_timeout(&self) -> u64 {
        self.n(NET_WRITE_TIMEOUT)
    }
    /// CONNECTION_ID().
    pub fn pseudo_thread_id(&self) -> u64 {
        self.n(PSEUDO_THREAD_ID)
    }
    pub fn last_insert_id(&self) -> u64 {
        self.n(LAST_INSERT_ID)
    }
    pub fn set_last_insert_id(&mut self, id: u64) {
        self.vals[LAST_INSERT_ID] = VarValue::UInt(id);
    }
    /// @@warning_count and @@error_count: what the previous statement raised.
    pub fn set_diagnostics(&mut self, warnings: usize, errors: usize) {
        self.vals[WARNING_COUNT] = VarValue::UInt(warnings as u64);
        self.vals[ERROR_COUNT] = VarValue::UInt(errors as u64);
    }
    /// The value SET insert_id gave the next auto-increment, consumed by that INSERT.
    /// SET insert_id is waiting for the next INSERT's first generated value.
    pub fn insert_id_set(&self) -> bool {
        self.n(INSERT_ID) != 0
    }
    pub fn take_insert_id(&mut self) -> Option<u64> {
        let v = self.n(INSERT_ID);
        self.vals[INSERT_ID] = VarValue::UInt(0);
        (v != 0).then_some(v)
    }
    /// SET timestamp: the time NOW() returns, in seconds since the epoch; `None`: the clock.
    pub fn timestamp(&self) -> Option<f64> {
        match self.vals[TIMESTAMP] {
            VarValue::Double(x) => Some(x),
            _ => None,
        }
    }
    /// USE db: character_set_database/collation_database follow the database's defaults.
    pub fn set_database_charset(&mut self, charset: &str, collation: &str) {
        self.vals[CHARACTER_SET_DATABASE] = VarValue::Str(charset.to_string());
        self.vals[COLLATION_DATABASE] = VarValue::Str(collation.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use innoxide_engine::TunableValues;

    #[test]
    fn version_comments_judged_by_our_version() {
        let id = innoxide_sql::parse::SERVER_VERSION_ID;
        let want = format!("{}.{}.{}-innoxide", id / 10000, id / 100 % 100, id % 100);
        assert_eq!(SERVER_VERSION, want);
    }

    #[test]
    fn role_lists() {
        let l = |s: &str| parse_role_list(s);
        let pairs = |v: &[(&str, &str)]| -> Option<Vec<(String, String)>> {
            Some(
                v.iter()
                    .map(|(u, h)| (u.to_string(), h.to_string()))
                    .collect(),
            )
        };
        assert_eq!(l(""), pairs(&[]));
        assert_eq!(
            l("`role1`@`%`,role2, role3@localhost ,'r 4'@'h'"),
            pairs(&[
                ("role1", "%"),
                ("role2", "%"),
                ("role3", "localhost"),
                ("r 4", "h")
            ])
        );
        for bad in ["a,", "@h", "a@", "a b", "`a", "a,,b"] {
            assert_eq!(l(bad), None, "{bad}");
        }
    }

    fn registry() -> (Registry, Arc<Tunables>) {
        let opts = Options::from_args(&["--datadir", "/tmp/innoxide-vars-test"]).unwrap();
        let cfg = opts.engine_config().unwrap();
        let tun = Arc::new(Tunables::new(&cfg.tunables));
        (Registry::new(&opts, &cfg, tun.clone()), tun)
    }

    fn text(r: &Registry, s: &SessionVars, name: &str) -> String {
        r.get(s, name, VarScope::Default).unwrap().to_text()
    }

    fn set(
        r: &Registry,
        s: &mut SessionVars,
        name: &str,
        scope: VarScope,
        v: VarInput,
    ) -> Result<Vec<Warning>, u16> {
        r.set(s, name, scope, v).map_err(|e| e.code)
    }

    fn str_in(s: &str) -> VarInput {
        VarInput::Str(s.into())
    }

    #[test]
    fn table_is_sorted_unique_and_consistent() {
        for w in VARS.windows(2) {
            assert!(w[0].name < w[1].name, "{} / {}", w[0].name, w[1].name);
        }
        let fresh = Tunables::new(&TunableValues::default());
        for d in VARS {
            assert_eq!(d.name, d.name.to_ascii_lowercase());
            // A read-only session-only variable has no value to show unless the SQL layer
            // maintains it (warning_count, error_count).
            let maintained = matches!(d.name, "warning_count" | "error_count");
            assert!(
                d.dynamic || d.scope != Scope::Session || maintained,
                "{}",
                d.name
            );
            match d.default {
                Def::Startup => assert!(!d.dynamic, "{}", d.name),
                Def::NoDefault | Def::ConnectionId => assert_eq!(d.scope, Scope::Session),
                _ => assert!(compiled_default(d).is_some(), "{}", d.name),
            }
            // Engine-bound defaults are the engine's own.
            if let Binding::Engine(t) = d.binding {
                assert_eq!(compiled_default(d), Some(tun_get(&fresh, t)), "{}", d.name);
            }
        }
        for (a, c) in ALIASES {
            assert!(lookup(a).is_ok() && lookup(c).is_ok());
        }
    }

    /// Issue #5 item 2: every variable the seeds name exists, and each is either dynamic,
    /// set at start by an option, or read-only reporting what is in force (V2, V5).
    #[test]
    fn the_variables_issue_5_names_exist() {
        let names = [
            "innodb_buffer_pool_size",
            "innodb_buffer_pool_instances",
            "innodb_buffer_pool_dump_at_shutdown",
            "innodb_buffer_pool_load_at_startup",
            "innodb_log_file_size",
            "innodb_log_files_in_group",
            "innodb_log_buffer_size",
            "innodb_flush_log_at_trx_commit",
            "innodb_flush_method",
            "innodb_file_per_table",
            "innodb_thread_concurrency",
            "innodb_concurrency_tickets",
            "innodb_io_capacity",
            "innodb_io_capacity_max",
            "innodb_max_dirty_pages_pct",
            "innodb_max_dirty_pages_pct_lwm",
            "innodb_adaptive_flushing",
            "innodb_adaptive_hash_index",
            "innodb_doublewrite",
            "innodb_page_cleaners",
            "innodb_lru_scan_depth",
            "innodb_flush_neighbors",
            "innodb_read_io_threads",
            "innodb_write_io_threads",
            "innodb_purge_threads",
            "innodb_max_purge_lag",
            "innodb_old_blocks_pct",
            "innodb_old_blocks_time",
            "innodb_open_files",
            "innodb_strict_mode",
            "innodb_autoinc_lock_mode",
            "innodb_lock_wait_timeout",
            "innodb_checksum_algorithm",
            "innodb_page_size",
            "table_open_cache",
            "table_open_cache_instances",
            "table_definition_cache",
            "max_connections",
            "max_allowed_packet",
            "sort_buffer_size",
            "thread_cache_size",
            "lock_wait_timeout",
            "sql_mode",
            "long_query_time",
            "slow_query_log",
            "log_slow_admin_statements",
            "performance_schema",
        ];
        for n in names {
            let i = lookup(n).unwrap_or_else(|_| panic!("{n} is missing"));
            let d = &VARS[i];
            assert!(
                d.dynamic || option_kind(i) != OptKind::None,
                "{n}: neither dynamic nor an option"
            );
        }
    }

    /// Issue #5: thread_cache_size and table_definition_cache are sized from max_connections
    /// and table_open_cache when no option sets them, as mysqld sizes them, and DEFAULT
    /// gives the sized value back; table_open_cache_instances is static.
    #[test]
    fn caches_are_sized_as_mysqld_sizes_them() {
        let opts = Options::from_args(&[
            "--datadir",
            "/tmp/innoxide-vars-test",
            "--max-connections=1000",
            "--table-open-cache=500",
        ])
        .unwrap();
        let cfg = opts.engine_config().unwrap();
        let r = Registry::new(&opts, &cfg, Arc::new(Tunables::new(&cfg.tunables)));
        let mut s = r.new_session(1);
        assert_eq!(text(&r, &s, "thread_cache_size"), "18");
        assert_eq!(text(&r, &s, "table_definition_cache"), "650");
        let g = VarScope::Global;
        set(&r, &mut s, "thread_cache_size", g, VarInput::Int(0)).unwrap();
        set(&r, &mut s, "table_definition_cache", g, VarInput::Int(100)).unwrap();
        assert_eq!(r.thread_cache_size(), 0);
        // Clamped to MySQL's range (400..524288) with warning 1292.
        assert_eq!(r.table_definition_cache(), 400);
        set(&r, &mut s, "thread_cache_size", g, VarInput::Default).unwrap();
        set(&r, &mut s, "table_definition_cache", g, VarInput::Default).unwrap();
        assert_eq!(
            (r.thread_cache_size(), r.table_definition_cache()),
            (18, 650)
        );
        assert_eq!(
            set(
                &r,
                &mut s,
                "table_open_cache_instances",
                g,
                VarInput::Int(4)
            ),
            Err(1238)
        );
        assert_eq!(
            set(
                &r,
                &mut s,
                "thread_cache_size",
                VarScope::Session,
                VarInput::Int(4)
            ),
            Err(1229)
        );
        // Set by an option, the value is kept as given.
        let opts = Options::from_args(&["--thread-cache-size=3", "--table-open-cache-instances=4"])
            .unwrap();
        let cfg = opts.engine_config().unwrap();
        let r = Registry::new(&opts, &cfg, Arc::new(Tunables::new(&cfg.tunables)));
        assert_eq!(
            (r.thread_cache_size(), r.table_open_cache_instances()),
            (3, 4)
        );
    }

    #[test]
    fn defaults_are_mysql_80s() {
        let (r, _) = registry();
        let s = r.new_session(7);
        let expect = [
            ("autocommit", "ON"),
            ("auto_increment_increment", "1"),
            ("auto_increment_offset", "1"),
            ("character_set_client", "utf8mb4"),
            ("character_set_connection", "utf8mb4"),
            ("character_set_results", "utf8mb4"),
            ("character_set_server", "utf8mb4"),
            ("character_set_system", "utf8mb3"),
            ("collation_connection", "utf8mb4_0900_ai_ci"),
            ("collation_server", "utf8mb4_0900_ai_ci"),
            ("default_storage_engine", "InnoDB"),
            ("div_precision_increment", "4"),
            ("explicit_defaults_for_timestamp", "ON"),
            ("foreign_key_checks", "ON"),
            ("group_concat_max_len", "1024"),
            ("init_connect", ""),
            ("innodb_adaptive_flushing", "ON"),
            ("innodb_autoinc_lock_mode", "2"),
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_deadlock_detect", "ON"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_flush_neighbors", "0"),
            ("innodb_random_read_ahead", "OFF"),
            ("innodb_read_ahead_threshold", "56"),
            ("innodb_read_io_threads", "4"),
            ("innodb_write_io_threads", "4"),
            ("innodb_io_capacity", "200"),
            ("innodb_io_capacity_max", "2000"),
            ("innodb_lock_wait_timeout", "50"),
            ("innodb_lru_scan_depth", "1024"),
            ("innodb_max_dirty_pages_pct", "90.000000"),
            ("innodb_max_dirty_pages_pct_lwm", "10.000000"),
            ("innodb_old_blocks_pct", "37"),
            ("innodb_old_blocks_time", "1000"),
            ("innodb_page_size", "16384"),
            ("interactive_timeout", "28800"),
            ("lock_wait_timeout", "31536000"),
            ("lower_case_table_names", "0"),
            ("max_allowed_packet", "67108864"),
            ("max_connections", "151"),
            ("max_execution_time", "0"),
            ("max_prepared_stmt_count", "16382"),
            ("net_read_timeout", "30"),
            ("net_write_timeout", "60"),
            ("performance_schema", "ON"),
            ("port", "3306"),
            ("protocol_version", "10"),
            ("pseudo_thread_id", "7"),
            ("sql_auto_is_null", "OFF"),
            (
                "sql_mode",
                "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
            ),
            ("sql_safe_updates", "OFF"),
            ("sql_select_limit", "18446744073709551615"),
            ("table_definition_cache", "2000"),
            ("table_open_cache", "4000"),
            ("table_open_cache_instances", "16"),
            ("thread_cache_size", "9"),
            ("time_zone", "SYSTEM"),
            ("transaction_isolation", "REPEATABLE-READ"),
            ("tx_isolation", "REPEATABLE-READ"),
            ("transaction_read_only", "OFF"),
            ("unique_checks", "ON"),
            ("version", SERVER_VERSION),
            ("version_comment", "innoxide"),
            ("wait_timeout", "28800"),
        ];
        for (name, want) in expect {
            assert_eq!(text(&r, &s, name), want, "{name}");
        }
        assert!(text(&r, &s, "datadir").ends_with("innoxide-vars-test/"));
        assert_eq!(r.get(&s, "@@x", VarScope::Default).unwrap_err().code, 1193);
        assert_eq!(
            r.get(&s, "AutoCommit", VarScope::Default),
            Ok(VarValue::Bool(true))
        );
        assert!(
            matches!(r.get(&s, "timestamp", VarScope::Default), Ok(VarValue::Double(t)) if t > 1.6e9)
        );
        // Typed accessors agree.
        assert!(s.autocommit());
        for v in ["foreign_key_checks", "unique_checks"] {
            assert_eq!(r.get(&s, v, VarScope::Default), Ok(VarValue::Bool(true)));
        }
        assert_eq!(s.sql_mode(), SqlMode::DEFAULT);
        assert_eq!(s.isolation(), Isolation::RepeatableRead);
        assert_eq!(s.lock_wait_timeout(), 50);
        assert_eq!(
            r.get(&s, "max_allowed_packet", VarScope::Default),
            Ok(VarValue::UInt(64 << 20))
        );
        assert_eq!(s.sql_select_limit(), u64::MAX);
        assert_eq!(r.max_connections(), 151);
        assert_eq!(r.max_prepared_stmt_count(), 16382);
        assert_eq!(
            r.default_value("innodb_io_capacity"),
            Ok(VarValue::UInt(200))
        );
        assert_eq!(r.default_value("last_insert_id").unwrap_err().code, 1230);
    }

    #[test]
    fn set_global_acts_on_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = EngineConfig::new(dir.path());
        cfg.page_size = 4096;
        cfg.buffer_pool_size = 4 << 20;
        cfg.log_file_size = 4 << 20;
        cfg.log_buffer_size = 256 << 10;
        cfg.background_threads = false;
        let engine = innoxide_engine::Engine::open(cfg).unwrap();
        let opts = Options::from_args(&[]).unwrap();
        let r = Registry::new(&opts, &engine.inner().cfg, engine.inner().tun.clone());
        let mut s = r.new_session(1);
        assert_eq!(text(&r, &s, "innodb_page_size"), "4096");
        let g = VarScope::Global;
        set(&r, &mut s, "innodb_io_capacity", g, VarInput::Int(1000)).unwrap();
        assert_eq!(engine.tunables().io_capacity(), 1000);
        set(
            &r,
            &mut s,
            "innodb_max_dirty_pages_pct",
            g,
            VarInput::Double(75.5),
        )
        .unwrap();
        assert_eq!(engine.tunables().max_dirty_pages_pct(), 75.5);
        set(&r, &mut s, "innodb_deadlock_detect", g, str_in("OFF")).unwrap();
        assert!(!engine.tunables().deadlock_detect.load(Relaxed));
        set(
            &r,
            &mut s,
            "innodb_flush_log_at_trx_commit",
            g,
            VarInput::Int(2),
        )
        .unwrap();
        assert_eq!(engine.tunables().trx_commit(), 2);
        set(
            &r,
            &mut s,
            "transaction_isolation",
            g,
            str_in("read-committed"),
        )
        .unwrap();
        assert_eq!(engine.tunables().isolation(), Isolation::ReadCommitted);
        assert_eq!(engine.begin().isolation(), Isolation::ReadCommitted);
        set(&r, &mut s, "innodb_lock_wait_timeout", g, VarInput::Int(7)).unwrap();
        assert_eq!(engine.tunables().lock_wait_timeout.load(Relaxed), 7);
        // The engine's own changes show too (one source of truth).
        engine.tunables().io_capacity.store(300, Relaxed);
        assert_eq!(text(&r, &s, "innodb_io_capacity"), "300");
        let shown = r.show(&s, true);
        assert!(shown.contains(&("innodb_io_capacity".into(), "300".into())));
        assert!(shown.contains(&("innodb_max_dirty_pages_pct".into(), "75.500000".into())));
        // The session that existed keeps its isolation; a new one takes the new global.
        assert_eq!(s.isolation(), Isolation::RepeatableRead);
        assert_eq!(r.new_session(2).isolation(), Isolation::ReadCommitted);
        assert_eq!(r.new_session(2).lock_wait_timeout(), 7);
        // DEFAULT restores the compiled default in the engine.
        set(&r, &mut s, "innodb_io_capacity", g, VarInput::Default).unwrap();
        assert_eq!(engine.tunables().io_capacity(), 200);
        drop(r);
        engine.shutdown().unwrap();
    }

    #[test]
    fn errors_are_mysqls() {
        let (r, _) = registry();
        let mut s = r.new_session(1);
        let (d, g, ss) = (VarScope::Default, VarScope::Global, VarScope::Session);
        assert_eq!(
            set(&r, &mut s, "no_such_var", d, VarInput::Int(1)),
            Err(1193)
        );
        let e = r
            .set(&mut s, "innodb_page_size", g, VarInput::Int(4096))
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1238, "Variable 'innodb_page_size' is a read only variable")
        );
        assert_eq!(
            set(&r, &mut s, "innodb_io_capacity", d, VarInput::Int(300)),
            Err(1229)
        );
        assert_eq!(
            set(&r, &mut s, "max_connections", ss, VarInput::Int(300)),
            Err(1229)
        );
        assert_eq!(set(&r, &mut s, "timestamp", g, VarInput::Int(1)), Err(1228));
        assert_eq!(
            set(&r, &mut s, "last_insert_id", d, VarInput::Default),
            Err(1230)
        );
        let e = r.set(&mut s, "autocommit", d, str_in("maybe")).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1231,
                "Variable 'autocommit' can't be set to the value of 'maybe'"
            )
        );
        assert_eq!(
            set(&r, &mut s, "autocommit", d, VarInput::Int(2)),
            Err(1231)
        );
        assert_eq!(
            set(&r, &mut s, "autocommit", d, VarInput::Double(0.5)),
            Err(1232)
        );
        assert_eq!(set(&r, &mut s, "wait_timeout", d, str_in("abc")), Err(1232));
        assert_eq!(
            set(&r, &mut s, "innodb_io_capacity", g, VarInput::Double(1.5)),
            Err(1232)
        );
        assert_eq!(
            set(&r, &mut s, "character_set_client", d, VarInput::Null),
            Err(1231)
        );
        assert_eq!(
            set(&r, &mut s, "transaction_isolation", d, str_in("SNAPSHOT")),
            Err(1231)
        );
        assert_eq!(
            set(&r, &mut s, "transaction_isolation", d, VarInput::Int(4)),
            Err(1231)
        );
        let e = r
            .set(&mut s, "sql_mode", d, str_in("STRICT_ALL_TABLES,bogus"))
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1231,
                "Variable 'sql_mode' can't be set to the value of 'bogus'"
            )
        );
        assert_eq!(
            set(&r, &mut s, "character_set_client", d, str_in("klingon")),
            Err(1115)
        );
        assert_eq!(
            set(&r, &mut s, "collation_connection", d, str_in("klingon_ci")),
            Err(1273)
        );
        assert_eq!(
            set(&r, &mut s, "time_zone", d, str_in("Mars/Olympus")),
            Err(1298)
        );
        assert_eq!(set(&r, &mut s, "time_zone", d, str_in("+14:01")), Err(1298));
        assert_eq!(
            set(&r, &mut s, "default_storage_engine", d, str_in("MyISAM")),
            Err(1286)
        );
        assert_eq!(
            set(&r, &mut s, "max_allowed_packet", d, VarInput::Int(4096)),
            Err(1621)
        );
        assert_eq!(
            set(&r, &mut s, "innodb_io_capacity", g, VarInput::Int(5000)),
            Err(1210)
        );
        assert_eq!(
            set(&r, &mut s, "innodb_io_capacity_max", g, VarInput::Int(150)),
            Err(1210)
        );
        let e = r.get(&s, "innodb_io_capacity", ss).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1238, "Variable 'innodb_io_capacity' is a GLOBAL variable")
        );
        let e = r.get(&s, "timestamp", g).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1238, "Variable 'timestamp' is a SESSION variable")
        );
        // Nothing changed on error.
        assert!(s.autocommit());
        assert_eq!(s.sql_mode(), SqlMode::DEFAULT);
    }

    #[test]
    fn out_of_range_values_are_clamped_with_a_warning() {
        let (r, tun) = registry();
        let mut s = r.new_session(1);
        let w = r
            .set(
                &mut s,
                "innodb_io_capacity",
                VarScope::Global,
                VarInput::Int(50),
            )
            .unwrap();
        assert_eq!(
            w,
            vec![(
                1292,
                "Truncated incorrect innodb_io_capacity value: '50'".to_string()
            )]
        );
        assert_eq!(tun.io_capacity.load(Relaxed), 100);
        let w = r
            .set(
                &mut s,
                "auto_increment_increment",
                VarScope::Session,
                VarInput::Int(-3),
            )
            .unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(s.auto_increment_increment(), 1);
        let w = r
            .set(
                &mut s,
                "innodb_max_dirty_pages_pct",
                VarScope::Global,
                VarInput::Int(120),
            )
            .unwrap();
        assert_eq!(w[0].0, 1292);
        assert_eq!(tun.max_dirty_pages_pct(), 99.999);
        let w = r
            .set(
                &mut s,
                "max_allowed_packet",
                VarScope::Global,
                VarInput::Int(5000),
            )
            .unwrap();
        assert_eq!(w[0].0, 1292);
        assert_eq!(
            r.get(&s, "max_allowed_packet", VarScope::Global),
            Ok(VarValue::UInt(4096))
        );
        // In range: no warning.
        assert!(r
            .set(&mut s, "wait_timeout", VarScope::Session, VarInput::Int(60))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn sql_mode_round_trips() {
        let (r, _) = registry();
        let mut s = r.new_session(1);
        let d = VarScope::Default;
        r.set(&mut s, "sql_mode", d, str_in("traditional")).unwrap();
        let t = "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION";
        assert_eq!(text(&r, &s, "sql_mode"), t);
        assert!(s.sql_mode().has(SqlMode::STRICT_ALL_TABLES));
        let bits = s.sql_mode().0;
        r.set(&mut s, "sql_mode", d, str_in("")).unwrap();
        assert_eq!(text(&r, &s, "sql_mode"), "");
        assert!(!s.sql_mode().strict());
        r.set(&mut s, "sql_mode", d, VarInput::UInt(bits)).unwrap();
        assert_eq!(text(&r, &s, "sql_mode"), t);
        // Connector/J appends STRICT_TRANS_TABLES to the current value.
        r.set(
            &mut s,
            "sql_mode",
            d,
            str_in("NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES"),
        )
        .unwrap();
        assert_eq!(
            text(&r, &s, "sql_mode"),
            "NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES"
        );
        r.set(&mut s, "sql_mode", d, VarInput::Default).unwrap();
        assert_eq!(s.sql_mode(), SqlMode::DEFAULT);
    }

    #[test]
    fn session_and_global_are_independent() {
        let (r, tun) = registry();
        let mut a = r.new_session(1);
        let b = r.new_session(2);
        let (d, g) = (VarScope::Default, VarScope::Global);
        r.set(&mut a, "autocommit", d, VarInput::Int(0)).unwrap();
        r.set(&mut a, "innodb_lock_wait_timeout", d, VarInput::Int(3))
            .unwrap();
        r.set(&mut a, "transaction_isolation", d, str_in("SERIALIZABLE"))
            .unwrap();
        assert!(!a.autocommit() && b.autocommit());
        assert_eq!((a.lock_wait_timeout(), b.lock_wait_timeout()), (3, 50));
        assert_eq!(tun.lock_wait_timeout.load(Relaxed), 50);
        assert_eq!(tun.isolation(), Isolation::RepeatableRead);
        assert_eq!(a.isolation(), Isolation::Serializable);
        assert_eq!(r.get(&a, "autocommit", g), Ok(VarValue::Bool(true)));
        assert_eq!(
            r.get(&a, "tx_isolation", VarScope::Session),
            Ok(VarValue::Str("SERIALIZABLE".into()))
        );
        // SET GLOBAL leaves existing sessions alone; new ones start from it.
        r.set(&mut a, "wait_timeout", g, VarInput::Int(100))
            .unwrap();
        assert_eq!((a.wait_timeout(), b.wait_timeout()), (28800, 28800));
        assert_eq!(r.new_session(3).wait_timeout(), 100);
        // SET SESSION x = DEFAULT takes the global value.
        r.set(&mut a, "wait_timeout", d, VarInput::Default).unwrap();
        assert_eq!(a.wait_timeout(), 100);
        // The usual connect-time SETs work and read back.
        r.set(&mut a, "sql_select_limit", d, VarInput::Int(10))
            .unwrap();
        r.set(&mut a, "sql_select_limit", d, VarInput::Default)
            .unwrap();
        assert_eq!(a.sql_select_limit(), u64::MAX);
        r.set(&mut a, "character_set_results", d, VarInput::Null)
            .unwrap();
        assert_eq!(r.get(&a, "character_set_results", d), Ok(VarValue::Null));
        r.set(&mut a, "time_zone", d, str_in("+00:00")).unwrap();
        assert_eq!(
            r.get(&a, "time_zone", d),
            Ok(VarValue::Str("+00:00".into()))
        );
        r.set(&mut a, "net_write_timeout", d, VarInput::Int(600))
            .unwrap();
        assert_eq!(a.net_write_timeout(), 600);
        r.set(&mut a, "lock_wait_timeout", d, VarInput::Int(2))
            .unwrap();
        assert_eq!(r.get(&a, "lock_wait_timeout", d), Ok(VarValue::UInt(2)));
        r.set_names(&mut a, Some("utf8"), Some("utf8_general_ci"))
            .unwrap();
        assert_eq!(
            r.get(&a, "character_set_client", d),
            Ok(VarValue::Str("utf8mb3".into()))
        );
        assert_eq!(
            r.get(&a, "collation_connection", d),
            Ok(VarValue::Str("utf8mb3_general_ci".into()))
        );
        assert_eq!(
            r.set_names(&mut a, Some("latin1"), Some("utf8mb4_bin"))
                .unwrap_err()
                .code,
            1253
        );
        r.set_names(&mut a, Some("utf8mb4"), None).unwrap();
        assert_eq!(
            r.get(&a, "collation_connection", d),
            Ok(VarValue::Str("utf8mb4_0900_ai_ci".into()))
        );
        // latin1 connections: statements decoded and results encoded at the connection.
        r.set_names(&mut a, Some("latin1"), None).unwrap();
        assert!(a.client_latin1());
        assert_eq!(a.results_charset().map(|c| c.id), Some(8));
        r.set(&mut a, "character_set_results", d, VarInput::Null)
            .unwrap();
        assert_eq!(a.results_charset(), None);
        r.set_names(&mut a, Some("utf8mb4"), None).unwrap();
        assert!(!a.client_latin1());
        // A collation change brings its charset along.
        r.set(&mut a, "collation_server", d, str_in("latin1_bin"))
            .unwrap();
        assert_eq!(
            r.get(&a, "character_set_server", d),
            Ok(VarValue::Str("latin1".into()))
        );
        // Session-only specials.
        r.set(&mut a, "timestamp", d, VarInput::Int(1_000_000_000))
            .unwrap();
        assert_eq!(a.timestamp(), Some(1e9));
        r.set(&mut a, "timestamp", d, VarInput::Default).unwrap();
        assert_eq!(a.timestamp(), None);
        r.set(&mut a, "insert_id", d, VarInput::Int(42)).unwrap();
        assert_eq!((a.take_insert_id(), a.take_insert_id()), (Some(42), None));
        a.set_last_insert_id(9);
        assert_eq!(r.get(&a, "identity", d), Ok(VarValue::UInt(9)));
        r.set(&mut a, "pseudo_thread_id", d, VarInput::Int(77))
            .unwrap();
        r.set(&mut a, "pseudo_thread_id", d, VarInput::Default)
            .unwrap();
        assert_eq!(a.pseudo_thread_id(), 1);
    }

    #[test]
    fn show_is_sorted_and_complete() {
        let (r, _) = registry();
        let s = r.new_session(1);
        let session = r.show(&s, false);
        let global = r.show(&s, true);
        assert_eq!(session.len(), VARS.len());
        assert!(global.len() < session.len());
        assert!(session.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(global.iter().all(|(n, _)| n != "timestamp"));
        assert!(session.contains(&("version".into(), SERVER_VERSION.into())));
        assert!(global.contains(&("innodb_max_dirty_pages_pct".into(), "90.000000".into())));
        assert!(global.contains(&("autocommit".into(), "ON".into())));
    }
}
