//! The slow query log (slow_query_log, slow_query_log_file, long_query_time,
//! log_slow_admin_statements), in mysqld's file format so pt-query-digest and
//! mysqldumpslow read it:
//!
//! ```text
//! # Time: 2026-11-22T13:30:00.123456Z
//! # User@Host: root[root] @ localhost []  Id:     8
//! # Query_time: 2.000123  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0
//! use d;
//! SET timestamp=1763818200;
//! SELECT SLEEP(2);
//! ```
//!
//! INVARIANTS
//! - L1: one entry is written with one write call under the file mutex, so entries of
//!   concurrent sessions never interleave.
//! - L2: a write error disables nothing silently: it is logged once per file, and the next
//!   entry tries again (a full disk that frees up resumes the log).
//!
//! Latch order: the file mutex is a leaf (nothing is taken while holding it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use innoxide_engine::latch::Mutex;
use innoxide_io::{File, FileSystem, OsFs};

/// What one slow statement's entry says.
pub struct Entry<'a> {
    pub user: &'a str,
    pub host: &'a str,
    pub id: u32,
    pub db: Option<&'a str>,
    pub query_time: Duration,
    pub lock_time: Duration,
    pub rows_sent: u64,
    pub rows_examined: u64,
    /// When the statement started (seconds since the epoch).
    pub started: f64,
    pub sql: &'a str,
}

struct Open {
    path: PathBuf,
    file: Arc<dyn File>,
    /// Where the next entry goes (the file's end).
    end: u64,
    /// The database of the previous entry (mysqld writes `use db;` when it changes).
    last_db: Option<String>,
    failed: bool,
}

/// The log file, opened on first use and reopened when slow_query_log_file changes.
pub struct SlowLog {
    open: Mutex<Option<Open>>,
    /// The first lines of a new file, as mysqld writes them.
    header: String,
}

/// ISO 8601 UTC with microseconds, from seconds since the epoch.
fn iso_time(secs: f64) -> String {
    let micros = (secs * 1e6) as i64;
    innoxide_sql::types::DateTime::from_micros(micros, 6).map_or_else(String::new, |d| {
        let s = d.to_string();
        format!("{}Z", s.replacen(' ', "T", 1))
    })
}

impl SlowLog {
    pub fn new(port: u16, socket: &str) -> SlowLog {
        let header = format!(
            "{}, Version: {} (innoxide). started with:\nTcp port: {port}  Unix socket: {socket}\nTime                 Id Command    Argument\n",
            std::env::args().next().unwrap_or_else(|| "innoxide".into()),
            crate::vars::SERVER_VERSION
        );
        SlowLog {
            open: Mutex::new(None),
            header,
        }
    }

    /// Appends an entry to the file at `path` (L1, L2).
    pub fn write(&self, path: &Path, e: &Entry<'_>) {
        let mut g = self.open.lock();
        if g.as_ref().is_none_or(|o| o.path != path) {
            let fs = OsFs::new();
            let opened = match fs.open(path) {
                Ok(f) => f.len().map(|end| (f, end)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    fs.create(path).and_then(|f| {
                        f.write_at(self.header.as_bytes(), 0)?;
                        Ok((f, self.header.len() as u64))
                    })
                }
                Err(e) => Err(e),
            };
            match opened {
                Ok((file, end)) => {
                    *g = Some(Open {
                        path: path.to_path_buf(),
                        file,
                        end,
                        last_db: None,
                        failed: false,
                    })
                }
                Err(err) => {
                    tracing::warn!("slow query log {}: {err}", path.display());
                    return;
                }
            }
        }
        let Some(o) = g.as_mut() else { return };
        let mut text = format!(
            "# Time: {}\n# User@Host: {}[{}] @ {} []  Id: {:>5}\n# Query_time: {:.6}  Lock_time: {:.6} Rows_sent: {}  Rows_examined: {}\n",
            iso_time(e.started + e.query_time.as_secs_f64()),
            e.user,
            e.user,
            e.host,
            e.id,
            e.query_time.as_secs_f64(),
            e.lock_time.as_secs_f64(),
            e.rows_sent,
            e.rows_examined
        );
        if let Some(db) = e.db {
            if o.last_db.as_deref() != Some(db) {
                text.push_str(&format!("use {db};\n"));
                o.last_db = Some(db.to_string());
            }
        }
        text.push_str(&format!("SET timestamp={};\n", e.started as u64));
        text.push_str(e.sql.trim_end());
        if !e.sql.trim_end().ends_with(';') {
            text.push(';');
        }
        text.push('\n');
        match o.file.write_at(text.as_bytes(), o.end) {
            Ok(()) => {
                o.end += text.len() as u64;
                o.failed = false;
            }
            Err(err) => {
                if !o.failed {
                    tracing::warn!("slow query log {}: {err}", o.path.display());
                }
                o.failed = true;
            }
        }
    }
}
