//! SHOW [GLOBAL | SESSION] STATUS: the server's counters under MySQL's names and meanings,
//! and the engine's Innodb_* counters (innoxide_engine::monitor).
//!
//! INVARIANTS
//! - S1: a per-session counter (Com_*, Questions, Queries, Bytes_received, Bytes_sent) is
//!   added to the session's [`SessionStatus`] and to the server's [`GlobalStatus`] in the same
//!   call, so SHOW GLOBAL STATUS is the sum over all sessions since start, whether they are
//!   still connected or not; FLUSH STATUS clears only the session's copy (as mysqld).
//! - S2: every statement a client sends counts once in Questions and once in one Com_*
//!   counter, including each statement of a multi-statement query; COM_PING and
//!   COM_STATISTICS count in Com_admin_commands / Com_show_status only, as in mysqld.
//! - S3: the table caches' counters (Open_tables, Opened_tables, Table_open_cache_*,
//!   Open_table_definitions, Opened_table_definitions; table_cache.rs T5) and the thread
//!   cache's (Threads_cached, Threads_created; thread_cache.rs) are the server's: SESSION
//!   shows the global values.
//!
//! The counters take no latch: the global ones are striped (engine `Counter`), the session's
//! are atomics only its connection thread writes. Threads_cached is read under the thread
//! cache's mutex, Threads_connected and Threads_running under the session map's (leaves).

use std::sync::atomic::{AtomicU64, Ordering};

use innoxide_engine::buffer_pool::dump::Phase;
use innoxide_engine::buffer_pool::resize::ResizePhase;
use innoxide_engine::counter::Counter;
use innoxide_sql::ast::{InsertSource, MaintenanceOp, ObjectKind, Show, Statement, XaCommand};
use innoxide_sql::types::DateTime;

use crate::exec::Session;

/// The Com_* counters, by name (sorted; `Com::index` maps a statement to one).
pub const COM_NAMES: &[&str] = &[
    "Com_admin_commands",
    "Com_alter_db",
    "Com_alter_table",
    "Com_alter_user",
    "Com_alter_user_default_role",
    "Com_analyze",
    "Com_begin",
    "Com_change_db",
    "Com_check",
    "Com_commit",
    "Com_create_db",
    "Com_create_index",
    "Com_create_role",
    "Com_create_table",
    "Com_create_user",
    "Com_create_view",
    "Com_dealloc_sql",
    "Com_delete",
    "Com_delete_multi",
    "Com_do",
    "Com_drop_db",
    "Com_drop_index",
    "Com_drop_role",
    "Com_drop_table",
    "Com_drop_user",
    "Com_drop_view",
    "Com_empty_query",
    "Com_execute_sql",
    "Com_flush",
    "Com_grant",
    "Com_grant_roles",
    "Com_insert",
    "Com_insert_select",
    "Com_kill",
    "Com_load",
    "Com_lock_tables",
    "Com_optimize",
    "Com_prepare_sql",
    "Com_release_savepoint",
    "Com_rename_table",
    "Com_replace",
    "Com_replace_select",
    "Com_revoke",
    "Com_revoke_all",
    "Com_revoke_roles",
    "Com_rollback",
    "Com_rollback_to_savepoint",
    "Com_savepoint",
    "Com_select",
    "Com_set_option",
    "Com_show_binlogs",
    "Com_show_charsets",
    "Com_show_collations",
    "Com_show_create_db",
    "Com_show_create_table",
    "Com_show_create_user",
    "Com_show_create_view",
    "Com_show_databases",
    "Com_show_engine_mutex",
    "Com_show_engine_status",
    "Com_show_engines",
    "Com_show_errors",
    "Com_show_events",
    "Com_show_fields",
    "Com_show_function_status",
    "Com_show_grants",
    "Com_show_keys",
    "Com_show_master_status",
    "Com_show_plugins",
    "Com_show_procedure_status",
    "Com_show_processlist",
    "Com_show_profile",
    "Com_show_profiles",
    "Com_show_replica_status",
    "Com_show_status",
    "Com_show_table_status",
    "Com_show_tables",
    "Com_show_triggers",
    "Com_show_variables",
    "Com_show_warnings",
    "Com_shutdown",
    "Com_stmt_close",
    "Com_stmt_execute",
    "Com_stmt_fetch",
    "Com_stmt_prepare",
    "Com_stmt_reprepare",
    "Com_stmt_reset",
    "Com_stmt_send_long_data",
    "Com_truncate",
    "Com_unlock_tables",
    "Com_update",
    "Com_update_multi",
    "Com_xa_commit",
    "Com_xa_end",
    "Com_xa_prepare",
    "Com_xa_recover",
    "Com_xa_rollback",
    "Com_xa_start",
];

const N_COM: usize = COM_NAMES.len();

/// The index of a Com_* name (a compile-time lookup, so a typo fails the build).
const fn com(name: &str) -> usize {
    let mut i = 0;
    while i < N_COM {
        let (a, b) = (COM_NAMES[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("no such Com_ counter")
}

/// Protocol commands that count as statements (S2).
pub const COM_ADMIN: usize = com("Com_admin_commands");
pub const COM_CHANGE_DB: usize = com("Com_change_db");
pub const COM_SHOW_FIELDS: usize = com("Com_show_fields");
pub const COM_SHOW_STATUS: usize = com("Com_show_status");
pub const COM_FLUSH: usize = com("Com_flush");
pub const COM_SHUTDOWN: usize = com("Com_shutdown");
pub const COM_STMT_CLOSE: usize = com("Com_stmt_close");
pub const COM_STMT_EXECUTE: usize = com("Com_stmt_execute");
pub const COM_STMT_FETCH: usize = com("Com_stmt_fetch");
pub const COM_STMT_PREPARE: usize = com("Com_stmt_prepare");
/// A prepared statement's plan made again because a table it reads changed (P3 in
/// exec/select.rs).
pub const COM_STMT_REPREPARE: usize = com("Com_stmt_reprepare");
pub const COM_STMT_RESET: usize = com("Com_stmt_reset");
pub const COM_STMT_SEND_LONG_DATA: usize = com("Com_stmt_send_long_data");
pub const COM_KILL: usize = com("Com_kill");

/// The Com_* counter of a statement.
pub fn com_index(st: &Statement) -> usize {
    match st {
        Statement::Select(_) | Statement::SelectInto(..) | Statement::SelectOutfile(..) => {
            com("Com_select")
        }
        Statement::Insert(i) => match (i.replace, &i.source) {
            (false, InsertSource::Values(_)) => com("Com_insert"),
            (false, InsertSource::Select(_)) => com("Com_insert_select"),
            (true, InsertSource::Values(_)) => com("Com_replace"),
            (true, InsertSource::Select(_)) => com("Com_replace_select"),
        },
        Statement::Update(_) => com("Com_update"),
        Statement::LoadData(_) => com("Com_load"),
        Statement::Delete(_) => com("Com_delete"),
        Statement::UpdateMulti(_) => com("Com_update_multi"),
        Statement::DeleteMulti(_) => com("Com_delete_multi"),
        Statement::CreateDatabase { .. } => com("Com_create_db"),
        Statement::DropDatabase { .. } => com("Com_drop_db"),
        Statement::Use(_) => COM_CHANGE_DB,
        Statement::CreateTable(_) => com("Com_create_table"),
        Statement::DropTable { .. } => com("Com_drop_table"),
        Statement::CreateView(_) => com("Com_create_view"),
        Statement::DropView { .. } => com("Com_drop_view"),
        Statement::TruncateTable(_) => com("Com_truncate"),
        Statement::RenameTable(_) => com("Com_rename_table"),
        Statement::CreateIndex { .. } => com("Com_create_index"),
        Statement::DropIndex { .. } => com("Com_drop_index"),
        Statement::AlterTable { .. } => com("Com_alter_table"),
        Statement::TableMaintenance { op, .. } => match op {
            MaintenanceOp::Analyze => com("Com_analyze"),
            MaintenanceOp::Optimize => com("Com_optimize"),
            MaintenanceOp::Check => com("Com_check"),
        },
        Statement::Begin { .. } => com("Com_begin"),
        Statement::Commit => com("Com_commit"),
        Statement::Rollback => com("Com_rollback"),
        Statement::Savepoint(_) => com("Com_savepoint"),
        Statement::RollbackToSavepoint(_) => com("Com_rollback_to_savepoint"),
        Statement::ReleaseSavepoint(_) => com("Com_release_savepoint"),
        Statement::SetTransaction { .. } | Statement::Set(_) | Statement::SetNames { .. } => {
            com("Com_set_option")
        }
        Statement::LockTables(_) => com("Com_lock_tables"),
        Statement::UnlockTables => com("Com_unlock_tables"),
        Statement::Prepare { .. } => com("Com_prepare_sql"),
        Statement::Execute { .. } => com("Com_execute_sql"),
        Statement::DeallocatePrepare(_) => com("Com_dealloc_sql"),
        Statement::Show(s) => show_index(s),
        // EXPLAIN counts as the statement it explains, as in mysqld.
        Statement::Explain(inner) => com_index(inner),
        Statement::Kill { .. } => COM_KILL,
        // A query of comments only (parse.rs) is MySQL's SQLCOM_EMPTY_QUERY.
        Statement::Do(e) if e.is_empty() => com("Com_empty_query"),
        Statement::Do(_) => com("Com_do"),
        Statement::Shutdown => COM_SHUTDOWN,
        Statement::Flush(_) => com("Com_flush"),
        Statement::CreateUser { .. } => com("Com_create_user"),
        Statement::AlterUser { .. } => com("Com_alter_user"),
        Statement::DropUser { .. } => com("Com_drop_user"),
        Statement::Grant { .. } => com("Com_grant"),
        Statement::Revoke { .. } => com("Com_revoke"),
        Statement::RevokeAll { .. } => com("Com_revoke_all"),
        Statement::CreateRole { .. } => com("Com_create_role"),
        Statement::DropRole { .. } => com("Com_drop_role"),
        Statement::GrantRole { .. } => com("Com_grant_roles"),
        Statement::RevokeRole { .. } => com("Com_revoke_roles"),
        Statement::SetDefaultRole { .. } => com("Com_alter_user_default_role"),
        Statement::Xa(x) => match x {
            XaCommand::Start(_) => com("Com_xa_start"),
            XaCommand::End(_) => com("Com_xa_end"),
            XaCommand::Prepare(_) => com("Com_xa_prepare"),
            XaCommand::Commit { .. } => com("Com_xa_commit"),
            XaCommand::Rollback(_) => com("Com_xa_rollback"),
            XaCommand::Recover => com("Com_xa_recover"),
        },
        #[allow(unreachable_patterns)]
        _ => COM_ADMIN,
    }
}

fn show_index(s: &Show) -> usize {
    match s {
        Show::Databases { .. } => com("Com_show_databases"),
        Show::Tables { .. } => com("Com_show_tables"),
        Show::Columns { .. } => COM_SHOW_FIELDS,
        Show::Index { .. } => com("Com_show_keys"),
        Show::CreateTable(_) => com("Com_show_create_table"),
        Show::CreateView(_) => com("Com_show_create_view"),
        Show::CreateDatabase { .. } => com("Com_show_create_db"),
        Show::TableStatus { .. } => com("Com_show_table_status"),
        Show::Warnings {
            errors_only: true, ..
        } => com("Com_show_errors"),
        Show::Warnings { .. } => com("Com_show_warnings"),
        Show::Variables { .. } => com("Com_show_variables"),
        Show::Status { .. } => COM_SHOW_STATUS,
        Show::Processlist { .. } => com("Com_show_processlist"),
        Show::Engines => com("Com_show_engines"),
        Show::Collation { .. } => com("Com_show_collations"),
        Show::CharacterSet { .. } => com("Com_show_charsets"),
        Show::EngineStatus { mutex: true, .. } => com("Com_show_engine_mutex"),
        Show::EngineStatus { .. } => com("Com_show_engine_status"),
        Show::Grants { .. } => com("Com_show_grants"),
        Show::CreateUser(_) => com("Com_show_create_user"),
        Show::Plugins => com("Com_show_plugins"),
        Show::Profiles => com("Com_show_profiles"),
        Show::Profile { .. } => com("Com_show_profile"),
        Show::NoObjects(kind) => match kind {
            ObjectKind::Events => com("Com_show_events"),
            ObjectKind::Triggers => com("Com_show_triggers"),
            ObjectKind::Procedures => com("Com_show_procedure_status"),
            ObjectKind::Functions => com("Com_show_function_status"),
        },
        Show::Replication(what) => {
            let w = what.to_ascii_lowercase();
            if w.contains("slave") || w.contains("replica") {
                com("Com_show_replica_status")
            } else if w.contains("binary") || w.contains("binlog") {
                com("Com_show_binlogs")
            } else {
                com("Com_show_master_status")
            }
        }
        #[allow(unreachable_patterns)]
        _ => COM_ADMIN,
    }
}

/// The server-wide counters (S1).
pub struct GlobalStatus {
    com: Box<[Counter]>,
    questions: Counter,
    bytes_received: Counter,
    bytes_sent: Counter,
    /// Connections that ended without COM_QUIT after logging in (Aborted_clients).
    pub aborted_clients: AtomicU64,
    /// Connection attempts that failed before logging in (Aborted_connects).
    pub aborted_connects: AtomicU64,
    /// Refused because max_connections were open (Connection_errors_max_connections).
    pub max_connection_errors: AtomicU64,
    /// The most sessions open at once (Max_used_connections).
    pub max_used_connections: AtomicU64,
}

impl Default for GlobalStatus {
    fn default() -> Self {
        GlobalStatus {
            com: (0..N_COM).map(|_| Counter::default()).collect(),
            questions: Counter::default(),
            bytes_received: Counter::default(),
            bytes_sent: Counter::default(),
            aborted_clients: AtomicU64::new(0),
            aborted_connects: AtomicU64::new(0),
            max_connection_errors: AtomicU64::new(0),
            max_used_connections: AtomicU64::new(0),
        }
    }
}

impl GlobalStatus {
    /// Questions since start (COM_STATISTICS).
    pub fn questions(&self) -> u64 {
        self.questions.get()
    }

    /// Bytes of connections not logged in yet.
    pub fn received(&self, n: u64) {
        self.bytes_received.add(n);
    }

    pub fn sent(&self, n: u64) {
        self.bytes_sent.add(n);
    }
}

/// One session's counters (S1).
pub struct SessionStatus {
    com: Box<[AtomicU64]>,
    questions: AtomicU64,
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    /// When FLUSH STATUS last cleared them (Uptime_since_flush_status).
    flushed: std::time::Instant,
}

impl Default for SessionStatus {
    fn default() -> Self {
        SessionStatus {
            com: (0..N_COM).map(|_| AtomicU64::new(0)).collect(),
            questions: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            flushed: std::time::Instant::now(),
        }
    }
}

fn bump(a: &AtomicU64, n: u64) {
    a.fetch_add(n, Ordering::Relaxed);
}

impl SessionStatus {
    /// A statement (or a protocol command counted as one) of kind `com` (S2).
    pub fn statement(&self, g: &GlobalStatus, com: usize) {
        bump(&self.com[com], 1);
        bump(&self.questions, 1);
        g.com[com].inc();
        g.questions.inc();
    }

    /// A protocol command counted only in its Com_* counter (COM_PING, COM_STATISTICS).
    pub fn command(&self, g: &GlobalStatus, com: usize) {
        bump(&self.com[com], 1);
        g.com[com].inc();
    }

    pub fn received(&self, g: &GlobalStatus, n: u64) {
        bump(&self.bytes_received, n);
        g.bytes_received.add(n);
    }

    pub fn sent(&self, g: &GlobalStatus, n: u64) {
        bump(&self.bytes_sent, n);
        g.bytes_sent.add(n);
    }

    /// FLUSH STATUS: the session's counters restart from zero.
    pub fn flush(&mut self) {
        *self = SessionStatus::default();
    }
}

/// MySQL's texts for a buffer pool dump or load (completion times as yymmdd hh:mm:ss).
fn phase_text(p: &Phase, idle: &str, running: &str, what: &str) -> String {
    match p {
        Phase::NotStarted => idle.to_string(),
        Phase::Running { done, total } => format!("{running} {done}/{total} pages"),
        Phase::Completed { at, .. } => {
            format!("Buffer pool(s) {what} completed at {}", stamp(*at))
        }
        Phase::Failed(why) => why.clone(),
    }
}

/// A time as InnoDB's status texts print it: "2026-11-22 13:20:01" -> "261122 13:20:01".
fn stamp(at: std::time::SystemTime) -> String {
    let micros = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    DateTime::from_micros(micros, 0).map_or(String::new(), |d| {
        let s = d.to_string();
        let date: String = s.get(2..10).unwrap_or("").replace('-', "");
        format!("{date}{}", s.get(10..).unwrap_or(""))
    })
}

/// Innodb_buffer_pool_resize_status: empty before any resize, as in MySQL.
fn resize_text(p: &ResizePhase) -> String {
    match p {
        ResizePhase::NotStarted => String::new(),
        ResizePhase::Running(s) | ResizePhase::Failed(s) => s.clone(),
        ResizePhase::Completed { at } => {
            format!("Completed resizing buffer pool at {}.", stamp(*at))
        }
    }
}

fn load(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

/// (name, value) pairs, sorted by name: the session's own counters for SESSION (with the
/// global value of those that have no session scope), the sums for GLOBAL.
pub fn rows(s: &Session, global: bool) -> Vec<(String, String)> {
    let srv = &s.server;
    let g = &srv.status;
    let me = &s.status;
    let (questions, received, sent) = if global {
        (
            g.questions.get(),
            g.bytes_received.get(),
            g.bytes_sent.get(),
        )
    } else {
        (
            load(&me.questions),
            load(&me.bytes_received),
            load(&me.bytes_sent),
        )
    };
    let (connected, running) = {
        let list = srv.sessions.lock();
        let running = list
            .values()
            .filter(|i| i.state.lock().command != "Sleep")
            .count();
        (list.len() as u64, running as u64)
    };
    let tc = srv.catalog.cache_status();
    let uptime = srv.started.elapsed().as_secs();
    let since_flush = if global {
        uptime
    } else {
        me.flushed.elapsed().as_secs()
    };
    let n = |v: u64| v.to_string();
    let mut v: Vec<(String, String)> = vec![
        ("Aborted_clients", n(load(&g.aborted_clients))),
        ("Aborted_connects", n(load(&g.aborted_connects))),
        ("Bytes_received", n(received)),
        ("Bytes_sent", n(sent)),
        (
            "Connection_errors_max_connections",
            n(load(&g.max_connection_errors)),
        ),
        ("Connections", n(load(&srv.connections))),
        ("Created_tmp_disk_tables", n(load(&srv.tmp_disk_tables))),
        ("Created_tmp_tables", n(load(&srv.tmp_tables))),
        ("Flush_commands", n(load(&srv.flushes))),
        ("Max_used_connections", n(load(&g.max_used_connections))),
        ("Open_table_definitions", n(tc.open_definitions)),
        ("Open_tables", n(tc.open_tables)),
        ("Opened_table_definitions", n(tc.opened_definitions)),
        ("Opened_tables", n(tc.opened_tables)),
        ("Prepared_stmt_count", n(load(&srv.prepared))),
        ("Queries", n(questions)),
        ("Questions", n(questions)),
        ("Slow_queries", n(load(&srv.slow_queries))),
        ("Sort_merge_passes", n(load(&srv.sort_merge_passes))),
        (
            "Ssl_cipher",
            s.tls.as_ref().map_or(String::new(), |t| t.cipher.clone()),
        ),
        (
            "Ssl_version",
            s.tls.as_ref().map_or(String::new(), |t| t.version.clone()),
        ),
        ("Table_open_cache_hits", n(tc.hits)),
        ("Table_open_cache_misses", n(tc.misses)),
        ("Table_open_cache_overflows", n(tc.overflows)),
        ("Threads_cached", n(srv.threads.cached())),
        ("Threads_connected", n(connected)),
        ("Threads_created", n(srv.threads.created())),
        ("Threads_running", n(running)),
        ("Uptime", n(uptime)),
        ("Uptime_since_flush_status", n(since_flush)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (i, name) in COM_NAMES.iter().enumerate() {
        let c = if global {
            g.com[i].get()
        } else {
            load(&me.com[i])
        };
        v.push((name.to_string(), n(c)));
    }
    let engine = srv.catalog.engine.inner();
    let d = &engine.stats.bp_dump;
    let dump = d.dump.lock().clone();
    let load = d.load.lock().clone();
    v.push((
        "Innodb_buffer_pool_dump_status".into(),
        phase_text(
            &dump,
            "Dumping of buffer pool not started",
            "Dumped",
            "dump",
        ),
    ));
    v.push((
        "Innodb_buffer_pool_load_status".into(),
        phase_text(
            &load,
            "Loading of buffer pool not started",
            "Loaded",
            "load",
        ),
    ));
    v.push((
        "Innodb_buffer_pool_resize_status".into(),
        resize_text(&engine.stats.bp_resize.phase.lock()),
    ));
    v.extend(
        innoxide_engine::monitor::status_vars(engine)
            .into_iter()
            .map(|(k, val)| (k.to_string(), val)),
    );
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
