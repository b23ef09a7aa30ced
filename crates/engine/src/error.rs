//! The engine's error type. Variants are grouped by what the caller must do; the server maps
//! them to MySQL error codes in one place.

use std::panic::Location;

use crate::types::{PageNo, SpaceId};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    // --- The statement failed; the engine is consistent and keeps serving. ---
    /// A unique index already holds this key (MySQL 1062).
    #[error("Duplicate entry '{key}' for key '{index}'")]
    DuplicateKey { index: String, key: String },
    /// The tablespace could not grow (ENOSPC); nothing was changed (MySQL 1114).
    #[error("The table '{0}' is full")]
    TableFull(String),
    /// A row or value exceeds what the format can store (MySQL 1118 / 1153-like).
    #[error("Row size too large: {0}")]
    RowTooLarge(String),
    /// A row lock could not be had within innodb_lock_wait_timeout (MySQL 1205).
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// A locking read with NOWAIT met a row another transaction holds (MySQL 3572).
    #[error(
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
    )]
    LockNowait,
    /// The transaction was chosen as a deadlock victim and has been rolled back (MySQL 1213).
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// innodb_snapshot_isolation: the row changed after the transaction's read view was taken;
    /// the transaction has been rolled back (MySQL 1020).
    #[error("Record has changed since last read in table '{0}'")]
    RecordChanged(String),
    /// A consistent read would go through an index created after its read view was taken
    /// (MySQL 1412).
    #[error("Table definition has changed, please retry transaction")]
    TableDefChanged,
    /// The row to change does not exist.
    #[error("row not found")]
    RowNotFound,
    #[error("Table '{0}' already exists")]
    TableExists(String),
    #[error("Table '{0}' doesn't exist")]
    NoSuchTable(String),
    #[error("Index '{0}' doesn't exist")]
    NoSuchIndex(String),
    #[error("Duplicate key name '{0}'")]
    IndexExists(String),
    /// A caller passed something the engine cannot accept (wrong arity, bad type width...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    // --- Data on disk is damaged: report, never return garbage (MySQL 1877). ---
    #[error("page [space {space}, page {page}] is corrupted: {what} (detected at {at})")]
    Corrupted {
        space: SpaceId,
        page: PageNo,
        what: String,
        at: &'static Location<'static>,
    },
    /// Startup refused: the files and the configuration disagree, or a file is damaged beyond
    /// what recovery may repair.
    #[error("{0}")]
    Startup(String),

    // --- I/O: fail-stop. ---
    /// An I/O call failed. If it was a write or a sync, the engine has entered fail-stop.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A previous write or fsync failed; the engine refuses every further write until restart.
    #[error("a previous write or fsync failed; the engine refuses writes until it is restarted")]
    PreviousIo,
    #[error("the engine is shutting down")]
    ShuttingDown,
}

impl Error {
    /// A corruption error that records where it was detected.
    #[track_caller]
    pub fn corrupted(space: SpaceId, page: PageNo, what: impl Into<String>) -> Self {
        Error::Corrupted {
            space,
            page,
            what: what.into(),
            at: Location::caller(),
        }
    }

    /// True when the engine can no longer write and must be restarted.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            Error::PreviousIo | Error::Io { .. } | Error::ShuttingDown
        )
    }
}

/// `corrupt!(page_id, "fmt", args..)` builds an `Error::Corrupted` at the call site.
#[macro_export]
macro_rules! corrupt {
    ($pid:expr, $($arg:tt)*) => {
        $crate::error::Error::corrupted($pid.space, $pid.page, format!($($arg)*))
    };
}
