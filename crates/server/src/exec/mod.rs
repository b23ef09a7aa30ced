//! The executor: a client session and the statements it runs.
//!
//! Transactions follow MySQL: with autocommit on and no BEGIN, each statement is its own
//! transaction, committed when it succeeds and rolled back when it fails; inside a transaction
//! a failed statement is rolled back alone (to a savepoint taken at its start), except for the
//! errors after which InnoDB has rolled back the whole transaction (deadlock 1213, 1020, and
//! 1205 with innodb_rollback_on_timeout), which end the transaction.
//!
//! INVARIANTS
//! - X1: `in_trx` is true exactly when an explicit transaction (BEGIN, or autocommit=0 after
//!   its first statement) is open; the status flags sent to the client come from it.
//! - X2: no engine transaction outlives its statement unless `in_trx`.
//! - X3: warnings of the previous statement are kept until the next statement that uses a
//!   table or produces warnings (SHOW WARNINGS itself keeps them).
//! - X4: the tables a statement reads or changes are opened through `open_table`, which holds
//!   each (one use of the session's table open cache entry, catalog C1) until the outermost
//!   `execute` ends, the connection finishes the command, or the session ends; DDL, SHOW and
//!   information_schema read descriptions through `Catalog::table` without opening them.
//!
//! LATCH ORDER: `Server::sessions` (the connection map) before a `SessionInfo::state`; a
//! statement locks only its own session's state (at its start and end), never the map.

mod access;
mod accounts;
pub mod builtins;
pub mod ddl;
pub mod dml;
pub mod expr;
mod finish;
mod fk;
pub mod func;
pub mod group;
mod hashjoin;
pub mod json;
mod jsontable;
mod keyset;
pub mod like;
mod load;
mod merge;
mod multi;
mod prepared;
pub mod recursive;
mod roles;
pub(crate) mod rowbuf;
mod scanfilter;
pub mod select;
mod semijoin;
mod setop;
pub mod show;
mod sort;
pub mod tablelock;
pub mod typeinfo;
pub mod userlock;
pub mod window;

pub(crate) use prepared::KeptPlan;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use innoxide_engine::latch::Mutex;
use innoxide_engine::{Collation, Isolation, Trx};
use innoxide_sql::ast::{self, IsolationLevel, SetTarget, Statement, TrxScope, VarScope};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Level, Warning, Warnings};

use crate::catalog::{engine_error, Catalog};
use crate::vars::{Registry, SessionVars, VarInput, VarValue};
use expr::{
    CExpr, Context, Correlation, EType, Env, Found, ScopeTable, SubKind, SubPlan, SubResult,
};
use sort::SortArea;

/// Times a data-changing statement runs again because a table it was compiled for changed
/// columns meanwhile (1412 from the engine), before the error reaches the client: each time
/// follows a completed ALTER TABLE, so only a run of that many ALTERs outpaces a statement.
const MAX_DEF_RETRIES: u32 = 64;

/// What every session shares.
pub struct Server {
    pub catalog: Arc<Catalog>,
    /// Connection threads waiting for the next connection (thread_cache_size).
    pub threads: Arc<crate::thread_cache::ThreadCache>,
    pub vars: Registry,
    pub next_conn_id: AtomicU32,
    /// Connection id → what PROCESSLIST and KILL need of it. This lock is taken at connect,
    /// disconnect, KILL and PROCESSLIST only; a statement updates its session's own
    /// `SessionInfo::state`.
    pub sessions: Mutex<HashMap<u32, Arc<SessionInfo>>>,
    pub started: std::time::Instant,
    /// Connection attempts (Connections).
    pub connections: std::sync::atomic::AtomicU64,
    /// Prepared statements open in all connections (max_prepared_stmt_count).
    pub prepared: std::sync::atomic::AtomicU64,
    /// Statements that took longer than long_query_time (Slow_queries).
    pub slow_queries: std::sync::atomic::AtomicU64,
    /// Merge passes of sorts that outgrew sort_buffer_size (Sort_merge_passes, sort.rs).
    pub sort_merge_passes: Arc<std::sync::atomic::AtomicU64>,
    /// Temporary tables made for GROUP BY and DISTINCT (Created_tmp_tables), and those of
    /// them that outgrew the in-memory budget (Created_tmp_disk_tables; group.rs, finish.rs).
    pub tmp_tables: std::sync::atomic::AtomicU64,
    pub tmp_disk_tables: std::sync::atomic::AtomicU64,
    /// The slow query log file (slow_query_log, slow_query_log_file).
    pub slow_log: crate::slowlog::SlowLog,
    /// FLUSH TABLES statements (Flush_commands).
    pub flushes: std::sync::atomic::AtomicU64,
    /// SHOW GLOBAL STATUS counters (Com_*, Questions, Bytes_*, Aborted_*...).
    pub status: crate::status::GlobalStatus,
    /// GET_LOCK's named locks.
    pub named_locks: Arc<userlock::NamedLocks>,
    /// LOCK TABLES' table locks.
    pub table_locks: tablelock::TableLocks,
    /// TLS offered to clients (ssl_cert and ssl_key set).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Set to stop the server (SIGTERM, SIGINT, SHUTDOWN): main closes the listeners, then
    /// flushes and writes a checkpoint.
    pub stop: Arc<std::sync::atomic::AtomicBool>,
}

pub struct SessionInfo {
    pub user: String,
    pub host: String,
    /// What the connection is doing; locked by its own thread at each statement's start and
    /// end and by PROCESSLIST readers (never while holding another latch).
    pub state: Mutex<SessionState>,
    pub killed: Arc<AtomicBool>,
    pub interrupt: Arc<AtomicBool>,
    /// Shuts the connection's socket down (KILL of an idle connection).
    pub closer: Option<Closer>,
}

/// A connection's PROCESSLIST columns that change with each statement.
pub struct SessionState {
    pub db: Option<String>,
    pub command: &'static str,
    /// The statement running (Info), empty when none.
    pub info: String,
    pub since: std::time::Instant,
}

/// Closes a connection's socket from another thread.
pub type Closer = Arc<dyn Fn() + Send + Sync>;

/// A result column.
#[derive(Clone, Debug)]
pub struct Column {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub ety: EType,
}

impl Column {
    pub fn new(name: &str, ety: &EType, st: &ScopeTable) -> Column {
        Column {
            schema: st.db.clone(),
            table: st.name.clone(),
            org_table: st
                .table
                .as_ref()
                .map_or(st.name.clone(), |t| t.name.clone()),
            name: name.into(),
            org_name: name.into(),
            ety: ety.clone(),
        }
    }

    pub fn expr(name: &str, ety: &EType) -> Column {
        Column {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: name.into(),
            org_name: String::new(),
            ety: ety.clone(),
        }
    }

    /// A text column (SHOW output, information_schema).
    pub fn text(name: &str) -> Column {
        Column::expr(
            name,
            &EType::Str {
                coll: Collation::Utf8mb40900AiCi,
            },
        )
    }

    pub fn int(name: &str) -> Column {
        Column::expr(name, &EType::Int { unsigned: true })
    }
}

/// The result of a statement.
pub enum Output {
    Ok {
        affected: u64,
        last_insert_id: u64,
        info: String,
    },
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<Datum>>,
    },
    /// A result set already written through the session's `sink` as it was made: its
    /// column definitions and this many rows (the end of the result is still to send).
    Streamed { rows: u64 },
}

/// Where a top-level SELECT's rows go as they are made, instead of being collected first
/// (conn.rs's `Streamer` writes them to the client as they come, so a result is never held
/// whole). `select_output` uses it when the plan allows (select.rs S6).
pub trait RowSink: Send {
    /// Before the first row: the result's columns.
    fn begin(&mut self, columns: &[Column]) -> Result<(), SqlError>;
    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError>;
    /// A row the caller no longer needs (a sink that keeps rows takes it without a copy).
    fn row_owned(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        self.row(&row)
    }
    /// The sink back as what its owner made (to take its parts back).
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

impl Output {
    pub fn ok(affected: u64) -> Output {
        Output::Ok {
            affected,
            last_insert_id: 0,
            info: String::new(),
        }
    }
}

pub struct Session {
    pub server: Arc<Server>,
    pub id: u32,
    pub user: String,
    /// The account's host pattern (CURRENT_USER()).
    pub account_host: String,
    pub host: String,
    /// This connection's entry in `Server::sessions`.
    shown: Arc<SessionInfo>,
    pub db: Option<String>,
    pub vars: SessionVars,
    trx: Option<Trx>,
    /// X1
    pub in_trx: bool,
    /// SET TRANSACTION ISOLATION LEVEL (next transaction only).
    next_isolation: Option<Isolation>,
    /// SET TRANSACTION READ ONLY / READ WRITE (next transaction only).
    next_read_only: Option<bool>,
    /// The open transaction may not write (START TRANSACTION READ ONLY, transaction_read_only).
    read_only: bool,
    /// The time NOW() and CURRENT_TIMESTAMP defaults return during this statement (MySQL: the
    /// statement's start, or SET timestamp).
    pub(crate) stmt_time: types::DateTime,
    /// The statement's time in UTC (UNIX_TIMESTAMP(), UTC_TIMESTAMP()).
    pub(crate) stmt_utc: types::DateTime,
    /// max_execution_time of the running SELECT.
    pub(crate) deadline: Option<std::time::Instant>,
    /// Rows read by the statement, modulo 2^32 (when to look at the deadline and KILL).
    pub(crate) scan_ticks: u32,
    pub warnings: Vec<Warning>,
    pub found_rows: u64,
    pub row_count: i64,
    pub user_vars: HashMap<String, Datum>,
    /// LOAD DATA's rows before the batch being inserted (load.rs L1): warnings count rows
    /// from it.
    pub(crate) load_row_base: u64,
    /// The statement failing now raised warnings that explain its error: they are kept
    /// before it (conn.rs `send_error`), as InnoDB's 1478 warnings before 1031.
    pub warnings_explain_error: bool,
    /// LOAD DATA is inserting its batches: an insert of an unknown number of rows, for
    /// innodb_autoinc_lock_mode (dml.rs AI2).
    pub(crate) bulk_insert: bool,
    /// The AUTO_INCREMENT values an INSERT ... VALUES reserved at once: the next one and how
    /// many are left (dml.rs AI2).
    pub(crate) autoinc_block: Option<(u64, u64)>,
    /// LOAD DATA LOCAL: the file the client sent, kept under tmpdir by conn.rs (load.rs L2).
    pub(crate) load_local_file: Option<std::path::PathBuf>,
    /// Tables this session holds by LOCK TABLES (`db/table`, WRITE), none when empty
    /// (L2 in tablelock.rs).
    locked: Vec<(String, bool)>,
    /// FLUSH TABLES WITH READ LOCK holds (L5 in tablelock.rs).
    global_read_lock: bool,
    /// While a recursive CTE runs: its name, columns and the rows of the previous round, which
    /// its recursive SELECTs read under that name (recursive.rs).
    pub(crate) cte_work: Vec<(String, Vec<Column>, Vec<Vec<Datum>>)>,
    /// Views over views being merged into one another (merge.rs G9).
    merge_nesting: u8,
    /// PREPARE'd statements by name (exec::prepared).
    sql_prepared: HashMap<String, prepared::SqlPrepared>,
    /// While a prepared statement executes: the plan it kept from the previous execution, if
    /// any (taken by `select_output`, `update` and `delete`, put back when still reusable: P3
    /// in prepared.rs). None while other statements run.
    pub(crate) stmt_plan: Option<Option<prepared::KeptPlan>>,
    /// Session values compilation folded into constants (variables, DATABASE(), NOW(), the
    /// result of an uncorrelated subquery): a plan whose compilation changed it is not reused.
    pub(crate) folds: u64,
    /// Set by the connection around a statement whose result may be streamed (`RowSink`).
    pub sink: Option<Box<dyn RowSink>>,
    savepoints: Vec<(String, u64)>,
    /// KILL CONNECTION: the connection ends after the statement.
    pub killed: Arc<AtomicBool>,
    /// KILL QUERY (and KILL CONNECTION): the running statement stops (error 1317).
    pub(crate) interrupt: Arc<AtomicBool>,
    pub client_found_rows: bool,
    /// SET profiling = 1: per-stage times of the session's statements (profile.rs).
    pub profiler: crate::profile::Profiler,
    /// SHOW SESSION STATUS counters (S1 in status.rs).
    pub status: crate::status::SessionStatus,
    /// The connection's TLS protocol and cipher (Ssl_version, Ssl_cipher), if any.
    pub tls: Option<crate::tls::TlsInfo>,
    /// Compile SELECTs without running them (COM_STMT_PREPARE's result metadata).
    describe_only: bool,
    /// The scopes of the queries enclosing the one being compiled, innermost last: what a
    /// correlated reference resolves against (`Context::outer_column`).
    frames: Vec<Frame>,
    /// The parameters of the running statement (subqueries are compiled with them).
    stmt_params: Vec<Datum>,
    /// Statements begun (`expr::SubCache::stmt`).
    stmt_seq: u64,
    /// The account's grants and the catalog's grants version they are from (A1 in access.rs).
    privs: (u64, Arc<crate::privs::AccountPrivs>),
    /// The roles in effect (roles.rs R1).
    active_roles: Vec<crate::privs::AuthId>,
    /// The views being compiled, innermost last (`db/name`: V3 in ddl/view.rs).
    views_open: Vec<String>,
    /// The CHECK OPTION of the view an INSERT or UPDATE was issued through, for it to take
    /// (merge.rs G7), and the one the running UPDATE tests each changed row with.
    view_check: Option<merge::ViewCheck>,
    row_check: Option<(expr::CExpr, merge::ViewCheck)>,
    /// The statement's compiled CHECK constraints, by table description (ddl/check.rs H4).
    check_cache: Vec<(Arc<crate::catalog::SqlTable>, ddl::Checks)>,
    /// The statement's compiled generated columns, likewise (ddl/generated.rs N4).
    gen_cache: Vec<(Arc<crate::catalog::SqlTable>, ddl::Generated)>,
    /// The statement's compiled expression defaults, likewise (ddl/generated.rs N5).
    default_cache: Vec<(Arc<crate::catalog::SqlTable>, ddl::Generated)>,
    /// The tables the running statement opened (X4).
    opened: crate::catalog::OpenTables,
    /// `execute` calls in progress (a statement runs others: EXECUTE, DEFINER rights).
    depth: u32,
}

/// An enclosing query's scope, as a subquery in it is compiled or run, in one of three ways:
/// - `row` set: compiled for that outer row; a column of the scope is its value (a constant);
/// - `base` set: compiled (and run) once for every outer row; the column at position
///   `refs[k]` is parameter `base + k` (new positions are added to `refs`);
/// - neither: only compiled, to collect in `refs` the positions read.
struct Frame {
    scope: Arc<(Vec<ScopeTable>, Vec<usize>)>,
    row: Option<Vec<Datum>>,
    base: Option<usize>,
    refs: Vec<usize>,
    /// A column of a frame below with `base` set was read (see `SubPlan::deep`).
    deep: bool,
}

impl Frame {
    fn new(scope: Arc<(Vec<ScopeTable>, Vec<usize>)>) -> Frame {
        Frame {
            scope,
            row: None,
            base: None,
            refs: Vec::new(),
            deep: false,
        }
    }
}

/// How a correlated subquery runs (`expr::SubCache::compiled`): its plan, made once with the outer
/// positions `refs` as parameters from `base` on (a SELECT of base tables: one that reads
/// derived tables, has UNION or fails to compile that way goes `PerRow`); or compiled anew
/// for each outer row, the outer columns being constants.
pub(crate) enum SubCompiled {
    Plan {
        plan: Box<select::SelectPlan>,
        base: usize,
        refs: Vec<usize>,
    },
    PerRow,
}

fn isolation_of(l: IsolationLevel) -> Isolation {
    match l {
        IsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
        IsolationLevel::ReadCommitted => Isolation::ReadCommitted,
        IsolationLevel::RepeatableRead => Isolation::RepeatableRead,
        IsolationLevel::Serializable => Isolation::Serializable,
    }
}

fn isolation_name(l: IsolationLevel) -> &'static str {
    match l {
        IsolationLevel::ReadUncommitted => "READ-UNCOMMITTED",
        IsolationLevel::ReadCommitted => "READ-COMMITTED",
        IsolationLevel::RepeatableRead => "REPEATABLE-READ",
        IsolationLevel::Serializable => "SERIALIZABLE",
    }
}

impl Session {
    /// `account`: the (user, host pattern) of the account the client logged in as; `host`:
    /// where the client is.
    pub fn new(
        server: Arc<Server>,
        id: u32,
        account: (&str, &str),
        host: &str,
        closer: Option<Closer>,
    ) -> Session {
        let (user, account_host) = account;
        let vars = server.vars.new_session(id);
        let killed = Arc::new(AtomicBool::new(false));
        let interrupt = Arc::new(AtomicBool::new(false));
        let shown = Arc::new(SessionInfo {
            user: user.into(),
            host: host.into(),
            state: Mutex::new(SessionState {
                db: None,
                command: "Sleep",
                info: String::new(),
                since: std::time::Instant::now(),
            }),
            killed: killed.clone(),
            interrupt: interrupt.clone(),
            closer,
        });
        server.sessions.lock().insert(id, shown.clone());
        let active_roles = roles::login_roles(&server, user, account_host);
        let opened = server.catalog.open_tables_for(id);
        Session {
            server,
            id,
            shown,
            user: user.into(),
            account_host: account_host.into(),
            host: host.into(),
            db: None,
            vars,
            trx: None,
            in_trx: false,
            next_isolation: None,
            warnings: Vec::new(),
            next_read_only: None,
            read_only: false,
            stmt_time: types::now(),
            stmt_utc: types::now(),
            deadline: None,
            scan_ticks: 0,
            found_rows: 0,
            row_count: -1,
            user_vars: HashMap::new(),
            load_row_base: 0,
            warnings_explain_error: false,
            bulk_insert: false,
            autoinc_block: None,
            load_local_file: None,
            sql_prepared: HashMap::new(),
            locked: Vec::new(),
            global_read_lock: false,
            cte_work: Vec::new(),
            merge_nesting: 0,
            stmt_plan: None,
            folds: 0,
            sink: None,
            savepoints: Vec::new(),
            killed,
            interrupt,
            client_found_rows: false,
            tls: None,
            status: Default::default(),
            profiler: Default::default(),
            describe_only: false,
            privs: (u64::MAX, Arc::default()),
            active_roles,
            views_open: Vec::new(),
            view_check: None,
            row_check: None,
            check_cache: Vec::new(),
            gen_cache: Vec::new(),
            default_cache: Vec::new(),
            frames: Vec::new(),
            stmt_params: Vec::new(),
            stmt_seq: 0,
            opened,
            depth: 0,
        }
    }

    /// Position of savepoint `name` (case-insensitive), else error 1305.
    fn savepoint_index(&self, name: &str) -> Result<usize, SqlError> {
        self.savepoints
            .iter()
            .position(|s| s.0.eq_ignore_ascii_case(name))
            .ok_or_else(|| SqlError::new(ER_SP_DOES_NOT_EXIST, &[&"SAVEPOINT", &name]))
    }

    /// COM_RESET_CONNECTION / COM_CHANGE_USER: roll back and start from a fresh state.
    pub fn reset(&mut self) {
        self.end_trx(false).ok();
        self.unlock_all_tables();
        self.vars = self.server.vars.new_session(self.id);
        self.user_vars.clear();
        self.sql_prepared.clear();
        self.warnings.clear();
        self.next_isolation = None;
        self.next_read_only = None;
        self.active_roles = roles::login_roles(&self.server, &self.user, &self.account_host);
        self.privs.0 = u64::MAX;
    }

    /// PROCESSLIST's Command and Info for this connection (`info` empty: none); the buffers
    /// are reused from statement to statement.
    pub fn set_state(&self, command: &'static str, info: &str) {
        let mut s = self.shown.state.lock();
        s.command = command;
        s.info.clear();
        s.info.push_str(info);
        if s.db != self.db {
            s.db.clone_from(&self.db);
        }
        s.since = std::time::Instant::now();
    }

    pub fn autocommit(&self) -> bool {
        self.vars.autocommit()
    }

    /// The engine transaction, started on first use (X2).
    pub(crate) fn trx(&mut self) -> Result<&mut Trx, SqlError> {
        if self.trx.is_none() {
            let mut t = self.server.catalog.engine.begin();
            t.set_owner(u64::from(self.id));
            let iso = self.next_isolation.unwrap_or_else(|| self.vars.isolation());
            t.set_isolation(iso);
            t.set_lock_wait_timeout(self.vars.lock_wait_timeout());
            if let Some(ro) = self.next_read_only.take() {
                self.read_only = ro;
            } else if !self.in_trx {
                self.read_only = self.vars.transaction_read_only();
            }
            if !self.in_trx && self.autocommit() {
                t.set_serializable_reads_lock(false);
            }
            self.trx = Some(t);
            if !self.autocommit() {
                self.in_trx = true;
            }
        }
        self.trx
            .as_mut()
            .ok_or_else(|| SqlError::new(ER_INTERNAL_ERROR, &[&"no transaction"]))
    }

    /// Commits or rolls back the open transaction, if any.
    pub fn end_trx(&mut self, commit: bool) -> Result<(), SqlError> {
        self.in_trx = false;
        self.next_isolation = None;
        self.read_only = false;
        self.savepoints.clear();
        if let Some(t) = self.trx.take() {
            if commit {
                t.commit().map_err(engine_error)?;
            } else {
                t.rollback().map_err(engine_error)?;
            }
        }
        Ok(())
    }

    /// Runs one statement with MySQL's statement and transaction rules; the outermost one
    /// closes the tables it opened when it ends (X4).
    pub fn execute(&mut self, stmt: &Statement, params: &[Datum]) -> Result<Output, SqlError> {
        self.depth += 1;
        let r = self.run_statement(stmt, params);
        self.depth -= 1;
        if self.depth == 0 {
            self.close_tables();
        }
        r
    }

    /// Opens table `db.name` for the running statement (through the session's table open
    /// cache instance, X4).
    pub(crate) fn open_table(
        &self,
        db: &str,
        name: &str,
    ) -> Result<Arc<crate::catalog::SqlTable>, SqlError> {
        self.server.catalog.open_table(db, name, &self.opened)
    }

    /// The tables the statement (or a command outside statements: COM_STMT_PREPARE, COM_FIELD_LIST)
    /// opened go back to the table open cache (X4).
    pub fn close_tables(&self) {
        self.server.catalog.close_tables(&self.opened);
    }

    fn run_statement(&mut self, stmt: &Statement, params: &[Datum]) -> Result<Output, SqlError> {
        if let Some(s) = self.with_current_user(stmt) {
            return self.execute(&s, params);
        }
        // The statement's clock: UTC, and in the session's time zone (which TIMESTAMP values
        // of this thread are converted with from now on).
        let tz = self.vars.session_tz();
        self.stmt_utc = match self.vars.timestamp() {
            Some(t) => types::DateTime::from_micros((t * 1e6) as i64, 6).unwrap_or_else(types::now),
            None => types::now_fsp(6),
        };
        let utc = self.stmt_utc.unix_seconds();
        let offset = tz.utc_to_local(utc) - utc;
        types::set_session_tz(tz);
        self.stmt_time =
            types::DateTime::from_micros(self.stmt_utc.to_micros() + offset * 1_000_000, 6)
                .unwrap_or(self.stmt_utc);
        self.interrupt.store(false, Ordering::Release);
        userlock::enter(self.id, &self.interrupt, &self.server.named_locks);
        self.frames.clear();
        self.check_cache.clear();
        self.gen_cache.clear();
        self.default_cache.clear();
        self.stmt_params = params.to_vec();
        self.stmt_seq += 1;
        let keeps_warnings = matches!(stmt, Statement::Show(ast::Show::Warnings { .. }));
        let errors = self.warnings.iter().filter(|w| w.level == Level::Error);
        let errors = errors.count();
        self.vars.set_diagnostics(self.warnings.len(), errors);
        if !keeps_warnings {
            self.warnings.clear();
        }
        self.warnings_explain_error = false;
        let data = matches!(
            stmt,
            Statement::Select(_)
                | Statement::SelectInto(..)
                | Statement::SelectOutfile(..)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
                | Statement::UpdateMulti(_)
                | Statement::DeleteMulti(_)
                | Statement::LoadData(_)
        );
        if !data {
            self.profiler.stage("executing");
            return self.execute_other(stmt, params);
        }
        self.profiler.stage("Opening tables");
        let writes = !matches!(
            stmt,
            Statement::Select(_) | Statement::SelectInto(..) | Statement::SelectOutfile(..)
        );
        self.deadline = match (stmt, self.vars.max_execution_time()) {
            (Statement::Select(_), ms) if ms > 0 => {
                Some(std::time::Instant::now() + std::time::Duration::from_millis(ms))
            }
            _ => None,
        };
        let sp = {
            let t = self.trx()?;
            t.begin_statement();
            t.savepoint()
        };
        // SELECT, UPDATE and DELETE go on to "optimizing" (when they plan) and "executing".
        self.profiler.stage(match stmt {
            Statement::Insert(_) | Statement::SelectInto(..) => "executing",
            _ => "init",
        });
        let mut retries = 0;
        let r = loop {
            let r = match stmt {
                _ if writes && self.read_only => {
                    Err(SqlError::new(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, &[]))
                }
                Statement::Select(q) => self.select_output(q, params),
                Statement::SelectInto(q, vars) => self.select_into(q, vars, params),
                Statement::SelectOutfile(q, e) => self.select_outfile(q, e, params),
                Statement::Insert(i) => self.insert(i, params),
                Statement::LoadData(l) => self.load_data(l, params),
                Statement::Update(u) => self.update(u, params),
                Statement::Delete(d) => self.delete(d, params),
                Statement::UpdateMulti(u) => self.update_multi(u, params),
                Statement::DeleteMulti(d) => self.delete_multi(d, params),
                _ => unreachable!("data statements only"),
            };
            // A table the statement was compiled for was replaced meanwhile with other columns
            // (ALTER TABLE swapped it while the statement waited for its table lock, or added
            // a column: 1412 from the engine): the statement's changes are undone and it runs
            // again, against the new definition (MySQL's statement would have waited before
            // opening it). Each retry follows a DDL that completed.
            match r {
                Err(e)
                    if e.code == ER_TABLE_DEF_CHANGED.code
                        && retries < MAX_DEF_RETRIES
                        && writes =>
                {
                    retries += 1;
                    if let Some(t) = self.trx.as_mut() {
                        t.rollback_to_savepoint(sp).map_err(engine_error)?;
                    }
                    if let Some(kept) = self.stmt_plan.as_mut() {
                        *kept = None;
                    }
                }
                r => break r,
            }
        };
        self.profiler.stage("query end");
        if let Some(t) = self.trx.as_mut() {
            t.end_statement();
        }
        match &r {
            Ok(_) => {
                if !self.in_trx && self.autocommit() {
                    self.profiler.stage("waiting for handler commit");
                    self.end_trx(true)?;
                }
            }
            Err(e) => {
                let whole = e.code == ER_LOCK_DEADLOCK.code
                    || e.code == ER_CHECKREAD.code
                    || (e.code == ER_LOCK_WAIT_TIMEOUT.code
                        && self
                            .server
                            .catalog
                            .engine
                            .tunables()
                            .rollback_on_timeout
                            .load(Ordering::Relaxed));
                if whole || (!self.in_trx && self.autocommit()) {
                    self.end_trx(false)?;
                } else if let Some(t) = self.trx.as_mut() {
                    t.rollback_to_savepoint(sp).map_err(engine_error)?;
                }
            }
        }
        r
    }

    fn execute_other(&mut self, stmt: &Statement, params: &[Datum]) -> Result<Output, SqlError> {
        self.authorize(stmt)?;
        match stmt {
            Statement::Begin {
                consistent_snapshot,
                read_only,
            } => {
                self.end_trx(true)?;
                // START TRANSACTION releases LOCK TABLES' locks (L4).
                self.unlock_tables();
                self.next_read_only = Some(*read_only);
                self.in_trx = true;
                if *consistent_snapshot {
                    self.trx()?.start_consistent_snapshot();
                }
                Ok(Output::ok(0))
            }
            Statement::Commit => {
                self.end_trx(true)?;
                Ok(Output::ok(0))
            }
            Statement::Rollback => {
                self.end_trx(false)?;
                Ok(Output::ok(0))
            }
            Statement::Savepoint(name) => {
                if !self.in_trx && self.autocommit() {
                    return Ok(Output::ok(0));
                }
                let sp = self.trx()?.savepoint();
                self.savepoints.retain(|s| !s.0.eq_ignore_ascii_case(name));
                self.savepoints.push((name.clone(), sp));
                Ok(Output::ok(0))
            }
            Statement::RollbackToSavepoint(name) => {
                let i = self.savepoint_index(name)?;
                let sp = self.savepoints[i].1;
                self.savepoints.truncate(i + 1);
                self.trx()?
                    .rollback_to_savepoint(sp)
                    .map_err(engine_error)?;
                Ok(Output::ok(0))
            }
            Statement::ReleaseSavepoint(name) => {
                let i = self.savepoint_index(name)?;
                self.savepoints.truncate(i);
                Ok(Output::ok(0))
            }
            Statement::SetTransaction {
                scope,
                isolation,
                read_only,
            } => {
                let sc = match scope {
                    TrxScope::Next if self.in_trx => {
                        return Err(SqlError::new(ER_CANT_CHANGE_TX_CHARACTERISTICS, &[]));
                    }
                    TrxScope::Next => {
                        self.next_isolation = isolation.map(isolation_of).or(self.next_isolation);
                        self.next_read_only = read_only.or(self.next_read_only);
                        return Ok(Output::ok(0));
                    }
                    TrxScope::Session => VarScope::Session,
                    TrxScope::Global => VarScope::Global,
                };
                if let Some(l) = isolation {
                    let v = VarInput::Str(isolation_name(*l).into());
                    self.server
                        .vars
                        .set(&mut self.vars, "transaction_isolation", sc, v)?;
                }
                if let Some(ro) = read_only {
                    let v = VarInput::UInt(u64::from(*ro));
                    self.server
                        .vars
                        .set(&mut self.vars, "transaction_read_only", sc, v)?;
                }
                Ok(Output::ok(0))
            }
            Statement::Set(assigns) => self.set(assigns, params),
            Statement::SetNames { charset, collate } => {
                let w = self.server.vars.set_names(
                    &mut self.vars,
                    Some(charset),
                    collate.as_deref(),
                )?;
                self.add_var_warnings(w);
                Ok(Output::ok(0))
            }
            Statement::Use(db) => {
                match self.server.catalog.database(db) {
                    Some(d) => self.vars.set_database_charset(&d.charset, &d.collation),
                    None if db.eq_ignore_ascii_case("information_schema") => self
                        .vars
                        .set_database_charset("utf8mb3", "utf8mb3_general_ci"),
                    None if db.eq_ignore_ascii_case("performance_schema") => self
                        .vars
                        .set_database_charset("utf8mb4", "utf8mb4_0900_ai_ci"),
                    None => return Err(SqlError::new(ER_BAD_DB_ERROR, &[db])),
                }
                self.db = Some(db.clone());
                Ok(Output::ok(0))
            }
            Statement::Show(s) => self.show(s, params),
            Statement::Explain(inner) => self.explain(inner, params),
            Statement::Shutdown => {
                tracing::info!(
                    "Received SHUTDOWN from user {}@{}: shutting down",
                    self.user,
                    self.host
                );
                self.server.stop.store(true, Ordering::Release);
                Ok(Output::ok(0))
            }
            Statement::Do(exprs) => {
                for e in exprs {
                    self.const_value(e, params)?;
                }
                Ok(Output::ok(0))
            }
            Statement::Kill { id, query_only } => {
                let id = self
                    .const_value(id, params)?
                    .to_u64(&mut Warnings::default());
                let found = u32::try_from(id)
                    .ok()
                    .and_then(|i| self.server.sessions.lock().get(&i).cloned());
                let Some(s) = found else {
                    return Err(SqlError::new(ER_NO_SUCH_THREAD, &[&id]));
                };
                self.check_kill(&s.user, id)?;
                s.interrupt.store(true, Ordering::Release);
                if !*query_only {
                    s.killed.store(true, Ordering::Release);
                    // Wakes a connection waiting for its client's next command.
                    if let Some(close) = &s.closer {
                        close();
                    }
                }
                Ok(Output::ok(0))
            }
            Statement::Flush(words) => self.flush(words),
            Statement::UnlockTables => {
                self.unlock_all_tables();
                Ok(Output::ok(0))
            }
            Statement::Prepare { name, source } => self.sql_prepare(name, source),
            Statement::Execute { name, using } => self.sql_execute(name, using),
            Statement::DeallocatePrepare(name) => self.sql_deallocate(name),
            Statement::LockTables(list) => self.lock_tables(list),
            Statement::SetRole(spec) => self.set_role(spec),
            Statement::Xa(_) => Err(SqlError::new(
                ER_NOT_SUPPORTED_YET,
                &[&"XA transactions through SQL"],
            )),
            _ => {
                // DDL commits the open transaction first, as MySQL does.
                self.end_trx(true)?;
                self.ddl(stmt, params)
            }
        }
    }

    fn set(
        &mut self,
        assigns: &[ast::SetAssignment],
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        for a in assigns {
            match &a.target {
                SetTarget::User(n) => {
                    let v = self.const_value(&a.value, params)?;
                    self.user_vars.insert(n.clone(), v);
                }
                SetTarget::System { scope, name } => {
                    let input = match &a.value {
                        ast::Expr::Default => VarInput::Default,
                        ast::Expr::Column {
                            table: None,
                            name: word,
                        } => VarInput::Str(word.clone()),
                        e => match self.const_value(e, params)? {
                            Datum::Null => VarInput::Null,
                            Datum::Int(i) => VarInput::Int(i),
                            Datum::UInt(u) => VarInput::UInt(u),
                            Datum::Double(f) => VarInput::Double(f),
                            d @ Datum::Decimal(_) => {
                                VarInput::Double(d.to_f64(&mut Warnings::default()))
                            }
                            d => VarInput::Str(
                                String::from_utf8_lossy(&d.to_text().unwrap_or_default())
                                    .into_owned(),
                            ),
                        },
                    };
                    if name == "autocommit" {
                        let before = self.autocommit();
                        let w = self.server.vars.set(&mut self.vars, name, *scope, input)?;
                        self.add_var_warnings(w);
                        if !before && self.autocommit() {
                            // Turning autocommit on commits the open transaction.
                            self.end_trx(true)?;
                        }
                        continue;
                    }
                    let w = self.server.vars.set(&mut self.vars, name, *scope, input)?;
                    self.add_var_warnings(w);
                    self.trigger(name)?;
                    self.apply_global(name)?;
                }
            }
        }
        Ok(Output::ok(0))
    }

    /// After a SET of a global variable whose value another part of the server keeps and
    /// acts on: hands it the new value (the registry's is the one shown, vars.rs V1).
    fn apply_global(&self, name: &str) -> Result<(), SqlError> {
        let srv = &self.server;
        match name.to_ascii_lowercase().as_str() {
            "mandatory_roles" => {
                let roles = srv.vars.mandatory_roles().unwrap_or_default();
                srv.catalog.set_mandatory_roles(roles)?;
            }
            "thread_cache_size" => srv.threads.set_size(srv.vars.thread_cache_size()),
            "table_open_cache" => srv
                .catalog
                .set_table_open_cache(srv.vars.table_open_cache()),
            "table_definition_cache" => srv
                .catalog
                .set_table_definition_cache(srv.vars.table_definition_cache()),
            _ => {}
        }
        Ok(())
    }

    /// The variables that are actions (innodb_buffer_pool_dump_now, _load_now, _load_abort):
    /// set to ON, the engine starts the action and the variable reads OFF again, as in MySQL.
    fn trigger(&mut self, name: &str) -> Result<(), SqlError> {
        let engine = &self.server.catalog.engine;
        let act: fn(&innoxide_engine::Engine) = match name {
            "innodb_buffer_pool_dump_now" => innoxide_engine::Engine::buffer_pool_dump_now,
            "innodb_buffer_pool_load_now" => innoxide_engine::Engine::buffer_pool_load_now,
            "innodb_buffer_pool_load_abort" => innoxide_engine::Engine::buffer_pool_load_abort,
            _ => return Ok(()),
        };
        let on = self.server.vars.get(&self.vars, name, VarScope::Global)? == VarValue::Bool(true);
        if on {
            act(engine);
            self.server
                .vars
                .set(&mut self.vars, name, VarScope::Global, VarInput::Int(0))?;
        }
        Ok(())
    }

    /// Records a warning, note or error for SHOW WARNINGS.
    pub fn note(&mut self, level: types::Level, e: SqlError) {
        if level == types::Level::Note && !self.vars.sql_notes() {
            return;
        }
        self.warnings.push(Warning {
            level,
            code: e.code,
            message: e.message,
        });
    }

    /// FLUSH: TABLES drops the cached table descriptions; STATUS clears the session's
    /// counters; PRIVILEGES and LOGS have nothing to act on (accounts are read at each login,
    /// there are no log files to reopen); the rest, and FLUSH TABLES WITH READ LOCK, are
    /// refused.
    fn flush(&mut self, words: &[String]) -> Result<Output, SqlError> {
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["tables"] | ["table"] => {
                self.server.catalog.flush_tables();
                self.server.flushes.fetch_add(1, Ordering::Relaxed);
                Ok(Output::ok(0))
            }
            ["status"] => {
                self.status.flush();
                Ok(Output::ok(0))
            }
            ["privileges"] | ["logs"] => Ok(Output::ok(0)),
            // FLUSH TABLES WITH READ LOCK (L5 in tablelock.rs): the session's table locks go
            // first, its transaction commits.
            ["tables" | "table", "with", "read", "lock"] => {
                self.unlock_tables();
                self.end_trx(true)?;
                self.server.table_locks.lock_global(&self.lock_waiter())?;
                self.global_read_lock = true;
                self.server.catalog.flush_tables();
                self.server.flushes.fetch_add(1, Ordering::Relaxed);
                Ok(Output::ok(0))
            }
            _ => Err(SqlError::new(
                ER_NOT_SUPPORTED_YET,
                &[&format!("FLUSH {}", words.join(" ").to_uppercase())],
            )),
        }
    }

    fn add_var_warnings(&mut self, w: Vec<(u16, String)>) {
        for (code, message) in w {
            self.warnings.push(Warning {
                level: types::Level::Warning,
                code,
                message,
            });
        }
    }

    /// LOCK TABLES: the session's previous table locks go, its transaction commits, then it
    /// waits for all the tables at once (L1, L4 in tablelock.rs).
    fn lock_tables(&mut self, list: &[(ast::ObjectName, bool)]) -> Result<Output, SqlError> {
        self.unlock_tables();
        self.end_trx(true)?;
        let mut tables: Vec<(String, bool)> = Vec::new();
        for (n, write) in list {
            let db = self.db_of(n)?;
            let mut names = vec![(db.clone(), n.name.clone())];
            // A view locks the tables it reads too, as in MySQL; a missing table is 1146.
            match (
                self.server.catalog.table(&db, &n.name),
                self.server.catalog.view(&db, &n.name),
            ) {
                (Err(_), Some(v)) => ddl::view_tables(&self.server.catalog, &v, &mut names, 0),
                (t, _) => drop(t?),
            }
            for (db, name) in names {
                let key = format!("{db}/{name}");
                match tables.iter_mut().find(|t| t.0 == key) {
                    Some(t) => t.1 |= *write,
                    None => tables.push((key, *write)),
                }
            }
        }
        self.server.table_locks.lock(&self.lock_waiter(), &tables)?;
        self.locked = tables;
        Ok(Output::ok(0))
    }

    /// Releases the session's LOCK TABLES locks, if any (L4).
    fn unlock_tables(&mut self) {
        let held = std::mem::take(&mut self.locked);
        self.server.table_locks.unlock(self.id, &held);
    }

    /// UNLOCK TABLES: the LOCK TABLES locks and the global read lock (L4, L5).
    fn unlock_all_tables(&mut self) {
        self.unlock_tables();
        if std::mem::take(&mut self.global_read_lock) {
            self.server.table_locks.unlock_global(self.id);
        }
    }

    fn lock_waiter(&self) -> tablelock::Waiter<'_> {
        tablelock::Waiter {
            id: self.id,
            timeout: std::time::Duration::from_secs(self.vars.table_lock_wait_timeout()),
            interrupt: &self.interrupt,
        }
    }

    /// A statement reaching `db.table`, writing it when `write`: the LOCK TABLES rules (L2, L3
    /// in tablelock.rs).
    pub(crate) fn use_table(&mut self, db: &str, table: &str, write: bool) -> Result<(), SqlError> {
        if access::is_system_schema(db) {
            return Ok(());
        }
        if write && self.global_read_lock {
            return Err(SqlError::new(ER_CANT_UPDATE_WITH_READLOCK, &[]));
        }
        // The common case: nobody holds a table lock (no key built, no mutex taken).
        if self.locked.is_empty() && self.server.table_locks.none_held() {
            return Ok(());
        }
        let key = format!("{db}/{table}");
        if !self.locked.is_empty() {
            return match self.locked.iter().find(|t| t.0 == key) {
                None => Err(SqlError::new(ER_TABLE_NOT_LOCKED, &[&table])),
                Some((_, false)) if write => {
                    Err(SqlError::new(ER_TABLE_NOT_LOCKED_FOR_WRITE, &[&table]))
                }
                Some(_) => Ok(()),
            };
        }
        self.server
            .table_locks
            .admit(&self.lock_waiter(), &key, write)
    }

    /// The database a name refers to (its own or the current one).
    pub(crate) fn db_of(&self, n: &ast::ObjectName) -> Result<String, SqlError> {
        match (&n.db, &self.db) {
            (Some(d), _) => Ok(d.clone()),
            (None, Some(d)) => Ok(d.clone()),
            (None, None) => Err(SqlError::new(ER_NO_DB_ERROR, &[])),
        }
    }

    /// The result columns a SELECT would have, without running it.
    pub fn describe(&mut self, q: &ast::Select) -> Result<Vec<Column>, SqlError> {
        self.describe_only = true;
        let r = self.select(q, &[]);
        self.describe_only = false;
        Ok(r?.0)
    }

    pub(crate) fn describing(&self) -> bool {
        self.describe_only
    }

    /// Connection status flags for OK/EOF packets.
    pub fn status_flags(&self) -> u16 {
        let mut f = 0u16;
        if self.in_trx {
            f |= 1;
        }
        if self.autocommit() {
            f |= 2;
        }
        f
    }
}

impl Session {
    /// Fills the slots of the correlated subqueries in `e` for the row `row` (with aggregate
    /// values `aggs`) about to be evaluated (expr E4).
    pub(crate) fn bind_subs(
        &mut self,
        e: &CExpr,
        row: &[Datum],
        aggs: &[Datum],
        params: &[Datum],
    ) -> Result<(), SqlError> {
        let mut subs = Vec::new();
        e.subs(&mut subs);
        let mode = self.vars.sql_mode();
        for p in subs {
            let rows = self.sub_rows(&p, row, params)?;
            let v = match &p.kind {
                SubKind::Scalar => {
                    if rows.rows.len() > 1 {
                        return Err(SqlError::new(ER_SUBQUERY_NO_1_ROW, &[]));
                    }
                    rows.rows
                        .first()
                        .and_then(|r| r.first())
                        .cloned()
                        .unwrap_or(Datum::Null)
                }
                SubKind::Exists { negated } => {
                    Datum::Int(i64::from(rows.rows.is_empty() == *negated))
                }
                SubKind::In { lhs, negated, coll } => {
                    let env = Env {
                        wins: &[],
                        row,
                        aggs,
                        params,
                        mode,
                    };
                    let mut w = Warnings::default();
                    let v = lhs.eval(&env, &mut w)?;
                    rows.test_in(&v, *negated, *coll)?
                }
                SubKind::InRow {
                    lhs,
                    negated,
                    colls,
                } => {
                    let env = Env {
                        wins: &[],
                        row,
                        aggs,
                        params,
                        mode,
                    };
                    let mut w = Warnings::default();
                    let v = lhs
                        .iter()
                        .map(|x| x.eval(&env, &mut w))
                        .collect::<Result<Vec<_>, _>>()?;
                    expr::in_row_rows(&v, &rows.rows, *negated, colls)
                }
                SubKind::Quantified { lhs, op, all, coll } => {
                    let env = Env {
                        wins: &[],
                        row,
                        aggs,
                        params,
                        mode,
                    };
                    let v = lhs.eval(&env, &mut Warnings::default())?;
                    let values = (rows.rows.iter()).map(|r| r.first().unwrap_or(&Datum::Null));
                    expr::quantified(&v, values, *op, *all, *coll)
                }
            };
            *p.slot.lock() = Some(v);
        }
        Ok(())
    }

    /// True while a correlated subquery runs for an outer row.
    pub(crate) fn has_bound_frame(&self) -> bool {
        self.frames
            .iter()
            .any(|f| f.row.is_some() || f.base.is_some())
    }

    /// The rows of correlated subquery `p` for outer row `row` of a query run with `params`
    /// (cached by the values read).
    fn sub_rows(
        &mut self,
        p: &SubPlan,
        row: &[Datum],
        params: &[Datum],
    ) -> Result<expr::SubRows, SqlError> {
        let compiled = {
            let mut cache = p.cache.lock();
            if cache.stmt != self.stmt_seq {
                *cache = expr::SubCache {
                    stmt: self.stmt_seq,
                    ..expr::SubCache::default()
                };
            }
            cache.compiled.clone()
        };
        let compiled = match compiled {
            Some(c) => c,
            None => {
                let c = Arc::new(self.sub_compile(p, params));
                p.cache.lock().compiled = Some(c.clone());
                c
            }
        };
        let refs = match &*compiled {
            SubCompiled::Plan { refs, .. } => refs,
            SubCompiled::PerRow => &p.refs,
        };
        let mut key = Vec::new();
        for &r in refs {
            group::group_key(
                row.get(r).unwrap_or(&Datum::Null),
                Collation::Binary,
                &mut key,
            );
        }
        if p.deep {
            for d in params {
                group::group_key(d, Collation::Binary, &mut key);
            }
        }
        if let Some(rows) = p.cache.lock().map.get(&key) {
            return Ok(rows.clone());
        }
        let r = match &*compiled {
            SubCompiled::Plan { plan, base, refs } if *base == params.len() => {
                let mut ext = Vec::with_capacity(base + refs.len());
                ext.extend_from_slice(params);
                ext.extend(
                    refs.iter()
                        .map(|&r| row.get(r).cloned().unwrap_or(Datum::Null)),
                );
                self.frames.push(Frame {
                    base: Some(*base),
                    refs: refs.clone(),
                    ..Frame::new(p.outer.clone())
                });
                let r = self.run_select(plan, &ext);
                self.frames.pop();
                r
            }
            _ => {
                self.frames.push(Frame {
                    row: Some(row.to_vec()),
                    ..Frame::new(p.outer.clone())
                });
                let r = self.select(&sub_query(p), params);
                self.frames.pop();
                r.map(|r| r.1)
            }
        };
        let rows = Arc::new(expr::SubGot::new(r?));
        let bytes = (key.len() + 64) as u64
            + (rows.rows.iter())
                .map(|r| 24 + r.iter().map(sort::datum_bytes).sum::<usize>() as u64)
                .sum::<u64>();
        let budget = self.tmp_area().budget;
        let mut cache = p.cache.lock();
        if cache.bytes + bytes > budget {
            cache.map.clear();
            cache.bytes = 0;
        }
        if bytes <= budget {
            cache.bytes += bytes;
            cache.map.insert(key, rows.clone());
        }
        Ok(rows)
    }

    /// Compiles subquery `q` of a query over `scope` only, to learn its columns and what of
    /// the scope it reads: the positions, and whether it reads a parameter of a query further
    /// out (`Frame::deep`).
    fn compile_in(
        &mut self,
        q: &ast::Select,
        scope: &Arc<(Vec<ScopeTable>, Vec<usize>)>,
    ) -> Result<(Vec<Column>, Vec<usize>, bool), SqlError> {
        let describing = self.describe_only;
        let params = self.stmt_params.clone();
        self.describe_only = true;
        self.frames.push(Frame::new(scope.clone()));
        let r = self.select(q, &params);
        let (refs, deep) = (self.frames.pop())
            .map(|f| (f.refs, f.deep))
            .unwrap_or_default();
        self.describe_only = describing;
        Ok((r?.0, refs, deep))
    }

    /// What of `scope` subquery `q` reads (`compile_in`).
    pub(crate) fn outer_reads(
        &mut self,
        q: &ast::Select,
        scope: &Arc<(Vec<ScopeTable>, Vec<usize>)>,
    ) -> Result<(Vec<usize>, bool), SqlError> {
        self.compile_in(q, scope)
            .map(|(_, refs, deep)| (refs, deep))
    }

    /// Runs `f` with the columns of `scope` at positions `refs` as parameters from `base` on,
    /// as a subquery compiled once for every outer row runs (`SubCompiled::Plan`).
    pub(crate) fn with_param_frame<T>(
        &mut self,
        scope: &Arc<(Vec<ScopeTable>, Vec<usize>)>,
        base: usize,
        refs: Vec<usize>,
        f: impl FnOnce(&mut Session) -> T,
    ) -> T {
        self.frames.push(Frame {
            base: Some(base),
            refs,
            ..Frame::new(scope.clone())
        });
        let r = f(self);
        self.frames.pop();
        r
    }

    /// How correlated subquery `p`, met in a query run with `params`, runs (`SubCompiled`).
    fn sub_compile(&mut self, p: &SubPlan, params: &[Datum]) -> SubCompiled {
        let q = sub_query(p);
        if !q.unions.is_empty() {
            return SubCompiled::PerRow;
        }
        self.frames.push(Frame {
            base: Some(params.len()),
            refs: p.refs.clone(),
            ..Frame::new(p.outer.clone())
        });
        let r = self.compile_select(&q, params).map(|mut plan| {
            self.bind_where(&mut plan);
            plan
        });
        let refs = self.frames.pop().map(|f| f.refs).unwrap_or_default();
        match r {
            Ok(plan) if plan.base_tables_only() => SubCompiled::Plan {
                plan: Box::new(plan),
                base: params.len(),
                refs,
            },
            // A failure shows when the subquery is compiled for the row.
            _ => SubCompiled::PerRow,
        }
    }
}

/// The query of correlated subquery `p` as it runs: an EXISTS needs one row at most.
fn sub_query(p: &SubPlan) -> ast::Select {
    let mut q = p.query.clone();
    if matches!(p.kind, SubKind::Exists { .. }) && q.limit.is_none() && q.unions.is_empty() {
        q.limit = Some(ast::Expr::Literal(ast::Literal::Number("1".into())));
    }
    q
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Err(e) = self.end_trx(false) {
            tracing::warn!("connection {}: rollback at disconnect failed: {e}", self.id);
        }
        self.server.sessions.lock().remove(&self.id);
        self.server.named_locks.release_all(self.id);
        self.unlock_all_tables();
        self.close_tables();
    }
}

fn var_datum(v: VarValue) -> Datum {
    match v {
        VarValue::UInt(u) => Datum::UInt(u),
        VarValue::Double(f) => Datum::Double(f),
        VarValue::Bool(b) => Datum::Int(i64::from(b)),
        VarValue::Str(s) => Datum::Bytes(s.into_bytes()),
        VarValue::Null => Datum::Null,
    }
}

impl Context for Session {
    fn sort_area(&self) -> SortArea {
        self.tmp_area().sort
    }

    fn param_type(&self, i: usize) -> Option<EType> {
        let coll = Context::collation(self);
        self.stmt_params
            .get(i)
            .map(|d| expr::param_type_of(d, coll))
    }

    fn sys_var(&mut self, scope: VarScope, name: &str) -> Result<Datum, SqlError> {
        self.folds += 1;
        Ok(var_datum(self.server.vars.get(&self.vars, name, scope)?))
    }

    fn user_var(&mut self, name: &str) -> Datum {
        self.folds += 1;
        self.user_vars.get(name).cloned().unwrap_or(Datum::Null)
    }

    fn subquery(
        &mut self,
        q: &ast::Select,
        outer: (&[ScopeTable], &[usize]),
    ) -> Result<SubResult, SqlError> {
        let scope = Arc::new((outer.0.to_vec(), outer.1.to_vec()));
        let describing = self.describe_only;
        let params = self.stmt_params.clone();
        let (columns, refs, deep) = self.compile_in(q, &scope)?;
        // An uncorrelated result goes to a row buffer: past the temporary-table budget it is
        // in tmpdir, and an IN searches it there (expr.rs `in_set_on_disk`).
        let rows = if !refs.is_empty() || deep {
            None
        } else if describing {
            Some(Found::Rows(Vec::new()))
        } else {
            self.folds += 1;
            Some(match self.select_stored(q, &params)?.1.into_rows() {
                Ok(rows) => Found::Rows(rows),
                Err(buf) => Found::Spilled(buf),
            })
        };
        Ok(SubResult {
            columns,
            rows,
            corr: Correlation {
                refs,
                deep,
                outer: scope,
            },
        })
    }

    fn outer_column(
        &mut self,
        table: Option<&str>,
        name: &str,
    ) -> Result<Option<(CExpr, EType)>, SqlError> {
        for fi in (0..self.frames.len()).rev() {
            let f = &mut self.frames[fi];
            let found = {
                let mut c = expr::Compiler::new(&f.scope.0, "field list");
                c.hidden = &f.scope.1;
                c.resolve(table, name)
            };
            let (pos, ty) = match found {
                Ok(x) => x,
                Err(e) if e.code == ER_BAD_FIELD_ERROR.code => continue,
                Err(e) => return Err(e),
            };
            let v = match (&f.row, f.base) {
                (Some(row), _) => {
                    self.folds += 1;
                    row.get(pos).cloned().unwrap_or(Datum::Null)
                }
                (None, Some(base)) => {
                    let k = f.refs.iter().position(|&r| r == pos).unwrap_or_else(|| {
                        f.refs.push(pos);
                        f.refs.len() - 1
                    });
                    // The subqueries inside the one this frame compiles vary with it.
                    for g in &mut self.frames[fi + 1..] {
                        g.deep = true;
                    }
                    return Ok(Some((CExpr::Param(base + k), ty)));
                }
                (None, None) => {
                    if !f.refs.contains(&pos) {
                        f.refs.push(pos);
                    }
                    Datum::Null
                }
            };
            return Ok(Some((CExpr::Const(v), ty)));
        }
        Ok(None)
    }

    fn info(&mut self, what: &str) -> Result<Datum, SqlError> {
        self.folds += 1;
        let s = |x: &str| Datum::Bytes(x.as_bytes().to_vec());
        Ok(match what {
            "database" | "schema" => self.db.as_deref().map_or(Datum::Null, s),
            "version" => s(crate::vars::SERVER_VERSION),
            "user" | "session_user" | "system_user" => s(&format!("{}@{}", self.user, self.host)),
            "current_user" => s(&format!("{}@{}", self.user, self.account_host)),
            "current_role" => s(&self.current_role()),
            "connection_id" => Datum::UInt(self.vars.pseudo_thread_id()),
            "last_insert_id" => Datum::UInt(self.vars.last_insert_id()),
            "now" => Datum::DateTime(self.stmt_time),
            "curdate" => Datum::Date(self.stmt_time.date),
            "curtime" => Datum::Time(self.stmt_time.time_of_day()),
            "unix_timestamp" => Datum::Int(self.stmt_utc.unix_seconds()),
            "utc_now" => Datum::DateTime(self.stmt_utc),
            "utc_date" => Datum::Date(self.stmt_utc.date),
            "utc_time" => Datum::Time(self.stmt_utc.time_of_day()),
            "found_rows" => Datum::UInt(self.found_rows),
            "row_count" => Datum::Int(self.row_count),
            _ => Datum::Null,
        })
    }

    /// collation_connection's: the collation of string literals.
    fn collation(&self) -> Collation {
        types::collation_by_name(self.vars.collation_connection())
            .unwrap_or(Collation::Utf8mb40900AiCi)
    }
}
