//! The SQL catalog: databases, tables as SQL sees them (column types, defaults, keys, table
//! options) on top of the engine's dictionary, and the user accounts.
//!
//! Everything persists in the engine: a table's SQL description is in its `TableDef` (each
//! column's `sql_type` is `SqlType::persisted()`, the rest is JSON in `TableDef::options`);
//! databases are rows of `mysql/innoxide_schemata`; users are rows of `mysql/user`; their
//! privileges rows of `mysql/innoxide_grants` and `mysql/innoxide_column_grants` (privs.rs); views rows of `mysql/innoxide_views`
//! (`ViewDef` as JSON, the SELECT as written). An empty data directory gets these tables, the `mysql` database and root@localhost without a password and with every
//! privilege; a data directory from before privileges existed gets the grants table with
//! every privilege for each existing account (what they could do until then).
//!
//! INVARIANTS
//! - C1: `tables` caches the parsed descriptions of engine tables (the table definition
//!   cache) and the tables sessions have open (the table open cache), within
//!   table_definition_cache and table_open_cache (table_cache.rs T1-T5); every DDL statement
//!   goes through this module and drops the cache entries of each table it touches before it
//!   returns. A description is also checked against the engine on every use (a table DDL
//!   replaced has its `dropped` flag set), so one cached by a load that raced with the DDL is
//!   never handed out. Scans of every table (`fk_map`, `names_in_db`) read the engine's
//!   definitions without filling the caches.
//! - C2: a table without a primary key gets a hidden `DB_ROW_ID` BIGINT UNSIGNED column as its
//!   primary key (filled from the table's auto-increment counter), so every row has a key the
//!   executor can update or delete by. It is never shown.
//! - C3: an AUTO_INCREMENT counter starts above the largest value in the table and above the
//!   mark persisted in the table's clustered root (`Engine::persisted_autoinc`) when the table
//!   is first used after a start; values are handed out under the counter's mutex, and before
//!   one above the mark is handed out (or stored explicitly) the mark is raised past it, by
//!   `AUTOINC_PERSIST_AHEAD` (a redo-logged write that precedes the commit using the value).
//!   So no value is handed out twice, across restarts and crashes too (MySQL 8.0's
//!   persistent counter); a clean shutdown writes the exact mark (`persist_counters`), so a
//!   restart goes on where it stopped, and a crash may skip up to the lead.
//!
//! - C4: `grants` is what `mysql/innoxide_grants` holds, replaced as a whole (and
//!   `grants_version` bumped) after each change, under `ddl`.
//! - C5: a table's description keeps the last statistics computed for it (`SqlTable::stats`)
//!   with the table's `modified` count at that time, so they go with it when the table
//!   definition cache evicts it (InnoDB keeps them in its dict_table_t). They are computed
//!   again for ANALYZE TABLE and, with innodb_stats_auto_recalc, when more than a tenth of the
//!   rows they counted changed since (InnoDB's rule), and after the description is loaded
//!   again.
//!
//! - C7: `fk_map` is None or what every table's foreign keys say; every DDL statement drops
//!   it (through `invalidate`, `drop_database` or `flush_tables`) and the next use builds it
//!   again. `any_parent` is false only while a built map has no parent.
//! - C6: `views` holds every row of `mysql/innoxide_views`, parsed, and changes only after
//!   the row changed (under `ddl`); a name is a table's or a view's in a database, never both.
//!
//! LOCKING: `ddl` serialises DDL and account changes; `fk_map` is taken before the engine's
//! dictionary (to build it); the `dbs`/`grants`/`views` maps, the table caches' mutexes
//! (table_cache.rs) and a description's `stats` are leaves (never held across an engine call:
//! statistics and descriptions are computed without them).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use innoxide_engine::latch::{Mutex, RwLock};
use innoxide_engine::stats::TableStats;
use innoxide_engine::{ColumnDef, ColumnKind, Engine, KeyBound, Table, TableDef, Value};
use innoxide_sql::error::*;
use innoxide_sql::types::SqlType;
use serde::{Deserialize, Serialize};

use crate::table_cache::{CacheStatus, Definition, TableCache};

pub const HIDDEN_ROW_ID: &str = "DB_ROW_ID";
/// Tables whose name starts with this are ALTER TABLE's work tables (MySQL's `#sql-`
/// prefix): never listed, and dropped at startup (a crash interrupted their ALTER).
pub const TEMP_PREFIX: &str = "#sql-";
const SCHEMATA: &str = "mysql/innoxide_schemata";
const USERS: &str = "mysql/user";
const GRANTS: &str = "mysql/innoxide_grants";
const COLUMN_GRANTS: &str = "mysql/innoxide_column_grants";
const VIEWS: &str = "mysql/innoxide_views";
const ROLES: &str = "mysql/innoxide_roles";

/// A column default as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DefaultValue {
    Null,
    /// A constant, as text (converted to the column type on use, as MySQL shows it).
    Text(String),
    /// CURRENT_TIMESTAMP[(fsp)]
    Now,
    /// DEFAULT (expr), MySQL 8.0.13's expression default: the expression as the parser
    /// writes it back, evaluated for each row written without a value (ddl/generated.rs N5).
    Expr(String),
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ColumnMeta {
    pub default: Option<DefaultValue>,
    pub auto_increment: bool,
    pub on_update_now: bool,
    pub comment: String,
    pub hidden: bool,
    /// A generated column's expression (GENERATED ALWAYS AS): computed on every write.
    #[serde(default)]
    pub generated: Option<GeneratedMeta>,
}

/// A generated column as its table keeps it. VIRTUAL and STORED columns alike are computed
/// when a row is written and stored with it (a VIRTUAL one takes room InnoDB would not).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GeneratedMeta {
    /// The expression as the parser writes it back (parsed again to be used).
    pub text: String,
    pub stored: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct KeyMeta {
    pub name: String,
    /// Prefix lengths as declared (display only: the whole value is indexed).
    pub prefixes: Vec<Option<u64>>,
}

/// What `TableDef::options` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TableMeta {
    pub engine: String,
    pub charset: String,
    pub collation: String,
    pub comment: String,
    pub columns: Vec<ColumnMeta>,
    /// Prefix lengths of the primary key columns (display only).
    pub pk_prefixes: Vec<Option<u64>>,
    pub keys: Vec<KeyMeta>,
    pub auto_increment_start: u64,
    /// CHECK constraints, in the order they were defined.
    #[serde(default)]
    pub checks: Vec<CheckMeta>,
    /// FOREIGN KEY constraints of this table (as the child), in the order they were defined.
    #[serde(default)]
    pub foreign_keys: Vec<FkMeta>,
    /// ROW_FORMAT= and KEY_BLOCK_SIZE= as written (shown by SHOW CREATE TABLE and
    /// CREATE_OPTIONS, as MySQL keeps a table's create options); the format in force is the
    /// engine's (`TableDef::row_format`, information_schema's ROW_FORMAT).
    #[serde(default)]
    pub row_format_given: Option<String>,
    #[serde(default)]
    pub key_block_size: Option<u64>,
}

/// A FOREIGN KEY constraint as its (child) table keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FkMeta {
    pub name: String,
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    pub parent_columns: Vec<String>,
    /// RESTRICT, CASCADE, SET NULL or NO ACTION.
    pub on_delete: String,
    pub on_update: String,
}

/// The foreign keys that reference each table (built from every table's `FkMeta`s: C7).
#[derive(Default)]
pub struct FkMap {
    /// By parent `db/table`: (child database, child table, index in its `foreign_keys`).
    pub by_parent: HashMap<String, Vec<(String, String, usize)>>,
}

/// A CHECK constraint as a table keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckMeta {
    pub name: String,
    /// The expression as written back by the parser (parsed again to be used).
    pub text: String,
    pub enforced: bool,
}

pub struct SqlColumn {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    pub meta: ColumnMeta,
}

/// A table as the SQL layer sees it.
pub struct SqlTable {
    pub db: String,
    pub name: String,
    pub table: Arc<Table>,
    pub columns: Vec<SqlColumn>,
    pub meta: TableMeta,
    /// The AUTO_INCREMENT column and the table's counter (shared with the catalog, so it
    /// outlives this description).
    pub auto_inc: Option<(usize, Arc<Mutex<AutoInc>>)>,
    /// Some column is generated (so most writes need not look at each column).
    pub has_generated: bool,
    /// C5: the last statistics computed, None until the first.
    stats: RwLock<Option<StatsEntry>>,
}

impl Definition for SqlTable {
    fn is_current(&self) -> bool {
        !self.table.dropped.load(Ordering::Acquire)
    }
}

/// The tables a session's statement has open (MySQL's THD::open_tables): each holds one use
/// of an entry of the session's table open cache instance until `Catalog::close_tables`.
pub struct OpenTables {
    instance: usize,
    held: RefCell<Vec<(Arc<SqlTable>, u32)>>,
}

/// table_open_cache_instances, table_open_cache and table_definition_cache at start.
#[derive(Clone, Copy, Debug)]
pub struct CacheSizes {
    pub instances: usize,
    pub open_tables: usize,
    pub definitions: usize,
}

/// How far past the largest value handed out the persisted AUTO_INCREMENT mark is raised at a
/// time (C3): one root-page write per this many values; a crash skips at most this many.
const AUTOINC_PERSIST_AHEAD: u64 = 256;

/// A table's AUTO_INCREMENT counter (C3).
#[derive(Default)]
pub struct AutoInc {
    /// The next value not handed out; 0 = not loaded yet.
    next: u64,
    /// The mark persisted in the table's clustered root: no value above it was handed out.
    persisted: u64,
    /// Whether the mark is kept (an AUTO_INCREMENT column; not a hidden row id).
    persistent: bool,
    /// The engine table the mark lives in (set when loaded).
    table: Option<Arc<Table>>,
}

impl SqlTable {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| !c.meta.hidden && c.name.eq_ignore_ascii_case(name))
    }

    /// Visible columns, in order.
    pub fn visible(&self) -> impl Iterator<Item = (usize, &SqlColumn)> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.meta.hidden)
    }

    pub fn pk(&self) -> &[usize] {
        self.table.def.primary_key.as_deref().unwrap_or(&[])
    }

    pub fn has_hidden_pk(&self) -> bool {
        self.columns.iter().any(|c| c.meta.hidden)
    }

    /// Engine name `db/table`.
    pub fn engine_name(&self) -> String {
        format!("{}/{}", self.db, self.name)
    }
}

/// A view as `mysql/innoxide_views` keeps it (JSON, beside the database and the name).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ViewDef {
    /// UNDEFINED, MERGE or TEMPTABLE.
    pub algorithm: String,
    pub definer_user: String,
    pub definer_host: String,
    /// SQL SECURITY INVOKER (else DEFINER).
    pub invoker: bool,
    /// CASCADED or LOCAL (WITH ... CHECK OPTION).
    pub check_option: Option<String>,
    /// The column list CREATE VIEW gave (empty: the SELECT's own names).
    pub given_columns: Vec<String>,
    /// The view's columns as its SELECT made them when it was created or last altered.
    pub columns: Vec<ViewColumn>,
    /// The SELECT as written.
    pub text: String,
    pub charset_client: String,
    pub collation_connection: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ViewColumn {
    pub name: String,
    /// `SqlType::persisted()`.
    pub sql_type: String,
    pub nullable: bool,
}

/// A view: where it is, its definition and its SELECT parsed (None if the stored text no
/// longer parses: using the view is error 1356).
pub struct SqlView {
    pub db: String,
    pub name: String,
    pub def: ViewDef,
    pub query: Option<innoxide_sql::ast::Select>,
}

impl SqlView {
    fn new(db: &str, name: &str, def: ViewDef) -> SqlView {
        let query = match innoxide_sql::parse::parse(&def.text) {
            Ok(innoxide_sql::ast::Statement::Select(q)) => Some(*q),
            _ => None,
        };
        SqlView {
            db: db.into(),
            name: name.into(),
            def,
            query,
        }
    }

    /// Each column's name and SQL type (a type that no longer reads as one is TEXT).
    pub fn column_types(&self) -> impl Iterator<Item = (&ViewColumn, SqlType)> {
        self.def.columns.iter().map(|c| {
            let ty = SqlType::from_persisted(&c.sql_type)
                .unwrap_or_else(|| SqlType::simple(innoxide_sql::ast::TypeName::LongText));
            (c, ty)
        })
    }
}

#[derive(Clone, Debug)]
pub struct DbInfo {
    pub name: String,
    pub charset: String,
    pub collation: String,
}

/// The `mysql` account tables a SELECT computes from the accounts and grants
/// (exec/accounts.rs U2).
const ACCOUNT_TABLES: [&str; 9] = [
    "user",
    "db",
    "tables_priv",
    "columns_priv",
    "procs_priv",
    "proxies_priv",
    "role_edges",
    "default_roles",
    "global_grants",
];

/// Whether `db.name` is one of the `mysql` account tables.
pub fn is_account_table(db: &str, name: &str) -> bool {
    db.eq_ignore_ascii_case("mysql") && ACCOUNT_TABLES.iter().any(|t| t.eq_ignore_ascii_case(name))
}

#[derive(Clone, Debug)]
pub struct UserInfo {
    pub user: String,
    pub host: String,
    pub plugin: String,
    /// SHA1(SHA1(password)); None: empty password.
    pub native: Option<Vec<u8>>,
    /// SHA256(SHA256(password)); None: empty password.
    pub sha2: Option<Vec<u8>>,
}

pub struct Catalog {
    pub engine: Arc<Engine>,
    dbs: RwLock<BTreeMap<String, DbInfo>>,
    /// C1, by `db/name`.
    tables: TableCache<SqlTable>,
    /// AUTO_INCREMENT counters by engine table id (C3), kept across reloads of descriptions.
    counters: Mutex<HashMap<u64, Arc<Mutex<AutoInc>>>>,
    pub ddl: Mutex<()>,
    /// C4
    grants: RwLock<Arc<crate::privs::Grants>>,
    grants_version: AtomicU64,
    /// mandatory_roles as last set (privs.rs P4); those that exist go into `grants`.
    mandatory: RwLock<Vec<crate::privs::AuthId>>,
    /// C6, by `db/name`.
    views: RwLock<HashMap<String, Arc<SqlView>>>,
    /// `views` is not empty.
    any_views: AtomicBool,
    /// C7
    fk_map: RwLock<Option<Arc<FkMap>>>,
    /// Some table may be a foreign key's parent (true while `fk_map` is to be built).
    any_parent: AtomicBool,
}

struct StatsEntry {
    stats: Arc<TableStats>,
    modified_at: u64,
    /// A session is computing newer figures.
    busy: AtomicBool,
}

pub fn engine_error(e: innoxide_engine::Error) -> SqlError {
    use innoxide_engine::Error as E;
    match e {
        E::DuplicateKey { index, key } => SqlError::new(ER_DUP_ENTRY, &[&key, &index]),
        E::TableFull(t) => SqlError::new(ER_RECORD_FILE_FULL, &[&t]),
        E::RowTooLarge(_) => SqlError::new(ER_TOO_BIG_ROWSIZE, &[&8126]),
        E::LockWaitTimeout => SqlError::new(ER_LOCK_WAIT_TIMEOUT, &[]),
        E::Deadlock => SqlError::new(ER_LOCK_DEADLOCK, &[]),
        E::LockNowait => SqlError::new(ER_LOCK_NOWAIT, &[]),
        E::RecordChanged(t) => SqlError::new(ER_CHECKREAD, &[&t.replace('/', ".")]),
        E::TableDefChanged => SqlError::new(ER_TABLE_DEF_CHANGED, &[]),
        E::TableExists(t) => SqlError::new(ER_TABLE_EXISTS_ERROR, &[&short_name(&t)]),
        E::NoSuchTable(t) => {
            let (d, n) = t.split_once('/').unwrap_or(("", &t));
            SqlError::new(ER_NO_SUCH_TABLE, &[&d, &n])
        }
        E::NoSuchIndex(i) => SqlError::new(ER_CANT_DROP_FIELD_OR_KEY, &[&i]),
        E::IndexExists(i) => SqlError::new(ER_DUP_KEYNAME, &[&i]),
        other => SqlError::new(ER_GET_ERRNO, &[&-1, &other]),
    }
}

fn short_name(engine_name: &str) -> String {
    engine_name
        .split_once('/')
        .map_or(engine_name, |x| x.1)
        .to_string()
}

fn var(n: u32) -> ColumnKind {
    ColumnKind::Var { max_len: n }
}

impl Catalog {
    /// Loads databases; creates the system tables in a new data directory.
    pub fn open(engine: Arc<Engine>, sizes: CacheSizes) -> Result<Catalog, SqlError> {
        let c = Catalog {
            engine,
            dbs: RwLock::new(BTreeMap::new()),
            tables: TableCache::new(sizes.instances, sizes.open_tables, sizes.definitions),
            counters: Mutex::new(HashMap::new()),
            ddl: Mutex::new(()),
            grants: RwLock::new(Arc::default()),
            grants_version: AtomicU64::new(0),
            mandatory: RwLock::new(Vec::new()),
            views: RwLock::new(HashMap::new()),
            any_views: AtomicBool::new(false),
            fk_map: RwLock::new(None),
            any_parent: AtomicBool::new(true),
        };
        c.bootstrap()?;
        c.load_dbs()?;
        c.load_views()?;
        c.load_grants()?;
        c.drop_work_tables()?;
        Ok(c)
    }

    /// Drops the work tables of ALTER TABLEs a crash interrupted: the copy being filled (the
    /// original is intact) or the original already swapped out (the new table has its name).
    /// Transactions still filling them are rolled back first.
    fn drop_work_tables(&self) -> Result<(), SqlError> {
        let temp: Vec<String> = self
            .engine
            .table_names()
            .into_iter()
            .filter(|n| is_work_table(n))
            .collect();
        if temp.is_empty() {
            return Ok(());
        }
        self.engine.wait_recovery_rollback();
        for n in temp {
            tracing::warn!("dropping {n}: the ALTER TABLE that made it was interrupted");
            self.engine.drop_table(&n).map_err(engine_error)?;
        }
        Ok(())
    }

    /// Carries an AUTO_INCREMENT counter over to a table that replaced another (ALTER TABLE):
    /// `next` is the next value the old table would have handed out; it is persisted in the
    /// new table (C3).
    pub fn set_counter(
        &self,
        table: &Arc<Table>,
        persistent: bool,
        next: u64,
    ) -> Result<(), SqlError> {
        let ctr = self.counters.lock().entry(table.id).or_default().clone();
        let mut g = ctr.lock();
        g.next = next;
        g.persistent = persistent;
        g.table = Some(table.clone());
        if persistent {
            let v = next.saturating_sub(1);
            self.engine
                .persist_autoinc(table, v)
                .map_err(engine_error)?;
            g.persisted = g.persisted.max(v);
        }
        Ok(())
    }

    /// A clean shutdown: every counter loaded this run writes its exact mark (the largest
    /// value handed out), so the next start goes on from there without a gap (C3).
    pub fn persist_counters(&self) -> Result<(), SqlError> {
        let counters: Vec<Arc<Mutex<AutoInc>>> = self.counters.lock().values().cloned().collect();
        for ctr in counters {
            let mut g = ctr.lock();
            let (Some(t), true) = (g.table.clone(), g.persistent) else {
                continue;
            };
            let exact = g.next.saturating_sub(1);
            if g.next != 0
                && exact < g.persisted
                && !t.dropped.load(std::sync::atomic::Ordering::Acquire)
            {
                self.engine
                    .set_autoinc_mark(&t, exact)
                    .map_err(engine_error)?;
                g.persisted = exact;
            }
        }
        Ok(())
    }

    fn bootstrap(&self) -> Result<(), SqlError> {
        if self.engine.table(SCHEMATA).is_err() {
            let t = self
                .engine
                .create_table(TableDef::new(
                    SCHEMATA,
                    vec![
                        ColumnDef::new("name", var(256)),
                        ColumnDef::new("charset", var(64)),
                        ColumnDef::new("collation", var(64)),
                    ],
                    Some(vec![0]),
                ))
                .map_err(engine_error)?;
            let mut trx = self.engine.begin();
            trx.insert(
                &t,
                &[
                    Value::from("mysql"),
                    Value::from("utf8mb4"),
                    Value::from("utf8mb4_0900_ai_ci"),
                ],
            )
            .map_err(engine_error)?;
            trx.commit().map_err(engine_error)?;
        }
        if self.engine.table(USERS).is_err() {
            let t = self
                .engine
                .create_table(TableDef::new(
                    USERS,
                    vec![
                        ColumnDef::new("host", var(255)),
                        ColumnDef::new("user", var(128)),
                        ColumnDef::new("plugin", var(64)),
                        ColumnDef::new("native", var(20)).nullable(),
                        ColumnDef::new("sha2", var(32)).nullable(),
                    ],
                    Some(vec![0, 1]),
                ))
                .map_err(engine_error)?;
            let mut trx = self.engine.begin();
            trx.insert(
                &t,
                &[
                    Value::from("localhost"),
                    Value::from("root"),
                    Value::from("caching_sha2_password"),
                    Value::Null,
                    Value::Null,
                ],
            )
            .map_err(engine_error)?;
            trx.commit().map_err(engine_error)?;
        }
        if self.engine.table(ROLES).is_err() {
            self.engine
                .create_table(TableDef::new(
                    ROLES,
                    vec![
                        ColumnDef::new("kind", var(1)),
                        ColumnDef::new("host", var(255)),
                        ColumnDef::new("user", var(128)),
                        ColumnDef::new("role_host", var(255)),
                        ColumnDef::new("role_user", var(128)),
                        ColumnDef::new(
                            "admin",
                            ColumnKind::Int {
                                bytes: 1,
                                unsigned: true,
                            },
                        ),
                    ],
                    Some(vec![0, 1, 2, 3, 4]),
                ))
                .map_err(engine_error)?;
        }
        if self.engine.table(VIEWS).is_err() {
            self.engine
                .create_table(TableDef::new(
                    VIEWS,
                    vec![
                        ColumnDef::new("db", var(256)),
                        ColumnDef::new("name", var(256)),
                        ColumnDef::new("def", var(u32::MAX)),
                    ],
                    Some(vec![0, 1]),
                ))
                .map_err(engine_error)?;
        }
        if self.engine.table(COLUMN_GRANTS).is_err() {
            self.engine
                .create_table(TableDef::new(
                    COLUMN_GRANTS,
                    vec![
                        ColumnDef::new("host", var(255)),
                        ColumnDef::new("user", var(128)),
                        ColumnDef::new("db", var(64)),
                        ColumnDef::new("tbl", var(64)),
                        ColumnDef::new("col", var(64)),
                        ColumnDef::new(
                            "privs",
                            ColumnKind::Int {
                                bytes: 8,
                                unsigned: true,
                            },
                        ),
                    ],
                    Some(vec![0, 1, 2, 3, 4]),
                ))
                .map_err(engine_error)?;
        }
        if self.engine.table(GRANTS).is_err() {
            let t = self
                .engine
                .create_table(TableDef::new(
                    GRANTS,
                    vec![
                        ColumnDef::new("host", var(255)),
                        ColumnDef::new("user", var(128)),
                        ColumnDef::new("db", var(64)),
                        ColumnDef::new("tbl", var(64)),
                        ColumnDef::new(
                            "privs",
                            ColumnKind::Int {
                                bytes: 8,
                                unsigned: true,
                            },
                        ),
                    ],
                    Some(vec![0, 1, 2, 3]),
                ))
                .map_err(engine_error)?;
            let users = self.users()?;
            if users.len() > 1 || users.iter().any(|u| u.user != "root") {
                tracing::warn!(
                    "privileges are new in this data directory: the {} existing accounts keep \
                     every privilege (ALL PRIVILEGES ON *.* WITH GRANT OPTION); REVOKE what \
                     they should not have",
                    users.len()
                );
            }
            let mut trx = self.engine.begin();
            for u in users {
                trx.insert(&t, &grant_row(&u.host, &u.user, "", "", ALL_WITH_GRANT))
                    .map_err(engine_error)?;
            }
            trx.commit().map_err(engine_error)?;
        }
        Ok(())
    }

    fn scan_all(&self, name: &str) -> Result<Vec<Vec<Value>>, SqlError> {
        let t = self.engine.table(name).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        let rows = trx
            .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
            .map_err(engine_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        Ok(rows)
    }

    fn load_dbs(&self) -> Result<(), SqlError> {
        let rows = self.scan_all(SCHEMATA)?;
        let mut m = self.dbs.write();
        m.clear();
        for r in rows {
            let s = |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
            m.insert(
                s(0),
                DbInfo {
                    name: s(0),
                    charset: s(1),
                    collation: s(2),
                },
            );
        }
        Ok(())
    }

    pub fn databases(&self) -> Vec<DbInfo> {
        self.dbs.read().values().cloned().collect()
    }

    pub fn database(&self, name: &str) -> Option<DbInfo> {
        self.dbs.read().get(name).cloned()
    }

    pub fn create_database(
        &self,
        name: &str,
        charset: &str,
        collation: &str,
    ) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        if self.dbs.read().contains_key(name) || name.eq_ignore_ascii_case("information_schema") {
            return Ok(false);
        }
        if name.is_empty() || name.len() > 64 || name.contains('/') {
            return Err(SqlError::new(ER_WRONG_DB_NAME, &[&name]));
        }
        let t = self.engine.table(SCHEMATA).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        trx.insert(
            &t,
            &[
                Value::from(name),
                Value::from(charset),
                Value::from(collation),
            ],
        )
        .map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        self.dbs.write().insert(
            name.to_string(),
            DbInfo {
                name: name.into(),
                charset: charset.into(),
                collation: collation.into(),
            },
        );
        Ok(true)
    }

    fn load_views(&self) -> Result<(), SqlError> {
        let mut m = HashMap::new();
        for r in self.scan_all(VIEWS)? {
            let s = |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
            let def: ViewDef = serde_json::from_str(&s(2)).map_err(|e| {
                SqlError::new(
                    ER_INTERNAL_ERROR,
                    &[&format!("definition of view {}.{}: {e}", s(0), s(1))],
                )
            })?;
            m.insert(
                format!("{}/{}", s(0), s(1)),
                Arc::new(SqlView::new(&s(0), &s(1), def)),
            );
        }
        self.any_views.store(!m.is_empty(), Ordering::Relaxed);
        *self.views.write() = m;
        Ok(())
    }

    /// Whether any view exists (most statements need not look for one).
    pub fn has_views(&self) -> bool {
        self.any_views.load(Ordering::Relaxed)
    }

    /// The view `db.name`, if there is one.
    pub fn view(&self, db: &str, name: &str) -> Option<Arc<SqlView>> {
        self.views.read().get(&format!("{db}/{name}")).cloned()
    }

    /// The names of the views of `db`, sorted.
    pub fn view_names(&self, db: &str) -> Vec<String> {
        let prefix = format!("{db}/");
        let mut v: Vec<String> = self
            .views
            .read()
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
            .collect();
        v.sort();
        v
    }

    /// Creates or replaces (`replace`) the view `db.name`. The caller holds `ddl`. A table of
    /// that name, or a view when not replacing, is error 1050.
    pub fn put_view(
        &self,
        db: &str,
        name: &str,
        def: ViewDef,
        replace: bool,
    ) -> Result<(), SqlError> {
        let exists = self.view(db, name).is_some();
        if self.engine.table(&format!("{db}/{name}")).is_ok() || (exists && !replace) {
            return Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&name]));
        }
        let json = serde_json::to_string(&def)
            .map_err(|e| SqlError::new(ER_INTERNAL_ERROR, &[&e.to_string()]))?;
        let t = self.engine.table(VIEWS).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        if exists {
            trx.delete(&t, &[Value::from(db), Value::from(name)])
                .map_err(engine_error)?;
        }
        trx.insert(
            &t,
            &[
                Value::from(db),
                Value::from(name),
                Value::from(json.as_str()),
            ],
        )
        .map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        self.views.write().insert(
            format!("{db}/{name}"),
            Arc::new(SqlView::new(db, name, def)),
        );
        self.any_views.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Drops the view `db.name` (the caller holds `ddl`); false if there is none.
    pub fn drop_view(&self, db: &str, name: &str) -> Result<bool, SqlError> {
        if self.view(db, name).is_none() {
            return Ok(false);
        }
        let t = self.engine.table(VIEWS).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        trx.delete(&t, &[Value::from(db), Value::from(name)])
            .map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        let mut views = self.views.write();
        views.remove(&format!("{db}/{name}"));
        self.any_views.store(!views.is_empty(), Ordering::Relaxed);
        Ok(true)
    }

    /// Moves the view `db.name` to `to_db.to_name` (RENAME TABLE; the caller holds `ddl`).
    pub fn rename_view(
        &self,
        (db, name): (&str, &str),
        (to_db, to_name): (&str, &str),
    ) -> Result<(), SqlError> {
        let Some(v) = self.view(db, name) else {
            return Err(SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]));
        };
        if self.engine.table(&format!("{to_db}/{to_name}")).is_ok()
            || self.view(to_db, to_name).is_some()
        {
            return Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&to_name]));
        }
        self.put_view(to_db, to_name, v.def.clone(), false)?;
        self.drop_view(db, name)?;
        Ok(())
    }

    /// Drops a database, its tables and its views; false if it does not exist.
    pub fn drop_database(&self, name: &str) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        if !self.dbs.read().contains_key(name) {
            return Ok(false);
        }
        for t in self.table_names(name) {
            let full = format!("{name}/{t}");
            self.engine.drop_table(&full).map_err(engine_error)?;
            self.tables.forget(&full);
        }
        for v in self.view_names(name) {
            self.drop_view(name, &v)?;
        }
        self.forget_fk_map();
        let t = self.engine.table(SCHEMATA).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        trx.delete(&t, &[Value::from(name)]).map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        self.dbs.write().remove(name);
        Ok(true)
    }

    /// Table names of a database (system tables of `mysql` excluded), sorted.
    pub fn table_names(&self, db: &str) -> Vec<String> {
        let prefix = format!("{db}/");
        let mut v: Vec<String> = self
            .engine
            .table_names()
            .into_iter()
            .filter_map(|n| n.strip_prefix(&prefix).map(str::to_string))
            .filter(|n| !n.starts_with(TEMP_PREFIX))
            .filter(|n| {
                !(db == "mysql"
                    && matches!(
                        n.as_str(),
                        "innoxide_schemata"
                            | "user"
                            | "innoxide_grants"
                            | "innoxide_column_grants"
                            | "innoxide_views"
                            | "innoxide_roles"
                    ))
            })
            .collect();
        v.sort();
        v
    }

    /// The description of table `db.name`, through the table definition cache (C1), for
    /// what reads a table's definition without opening it (DDL, SHOW, information_schema).
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<SqlTable>, SqlError> {
        // What a SELECT reads of these is computed (exec/accounts.rs U2): they are not
        // tables to change.
        if is_account_table(db, name) {
            return Err(SqlError::new(ER_OPEN_AS_READONLY, &[&name]));
        }
        let full = format!("{db}/{name}");
        self.tables.definition(&full, || self.load(db, name, &full))
    }

    /// Opens table `db.name` for the statement `opened` belongs to, through the session's
    /// table open cache instance (C1): a table the statement already has open is handed out
    /// again without a cache lookup. Held until `close_tables`.
    pub fn open_table(
        &self,
        db: &str,
        name: &str,
        opened: &OpenTables,
    ) -> Result<Arc<SqlTable>, SqlError> {
        if is_account_table(db, name) {
            return Err(SqlError::new(ER_OPEN_AS_READONLY, &[&name]));
        }
        let again = (opened.held.borrow().iter())
            .find(|(t, _)| t.name == name && t.db == db && t.is_current())
            .map(|(t, _)| t.clone());
        if let Some(t) = again {
            return Ok(t);
        }
        let full = format!("{db}/{name}");
        let o = self
            .tables
            .open(opened.instance, &full, || self.load(db, name, &full))?;
        opened.held.borrow_mut().push((o.def.clone(), o.slot));
        Ok(o.def)
    }

    /// The tables of connection `id`'s statements (its table open cache instance).
    pub fn open_tables_for(&self, id: u32) -> OpenTables {
        OpenTables {
            instance: self.tables.instance_of(id),
            held: RefCell::new(Vec::new()),
        }
    }

    /// The statement ended: its tables go back to the table open cache (the list keeps its
    /// room for the next statement).
    pub fn close_tables(&self, opened: &OpenTables) {
        let mut held = opened.held.borrow_mut();
        if !held.is_empty() {
            self.tables
                .release(opened.instance, held.iter().map(|(_, slot)| *slot));
            held.clear();
        }
    }

    /// A table's description read from the engine (a cache miss).
    fn load(&self, db: &str, name: &str, full: &str) -> Result<SqlTable, SqlError> {
        // A table of a missing database is a missing table (1146), as in MySQL 8.0.
        if !self.dbs.read().contains_key(db) {
            return Err(SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]));
        }
        let et = self
            .engine
            .table(full)
            .map_err(|_| SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]))?;
        self.describe(db, name, et)
    }

    /// Open_tables, Opened_tables, Table_open_cache_*, Open_table_definitions,
    /// Opened_table_definitions.
    pub fn cache_status(&self) -> CacheStatus {
        self.tables.status()
    }

    /// SET GLOBAL table_open_cache.
    pub fn set_table_open_cache(&self, n: u64) {
        self.tables
            .set_open_limit(usize::try_from(n).unwrap_or(usize::MAX));
    }

    /// SET GLOBAL table_definition_cache.
    pub fn set_table_definition_cache(&self, n: u64) {
        self.tables
            .set_def_limit(usize::try_from(n).unwrap_or(usize::MAX));
    }

    /// FLUSH TABLES: forgets every cached description and every unused open table (the next
    /// use loads them again; tables in use go when their statements end).
    pub fn flush_tables(&self) {
        let _g = self.ddl.lock();
        self.tables.flush();
        self.forget_fk_map();
    }

    /// The statistics of `t` (C5): `auto_recalc` and `sample` are innodb_stats_auto_recalc and
    /// innodb_stats_persistent_sample_pages; `force` computes them now (ANALYZE TABLE).
    pub fn table_stats(
        &self,
        t: &SqlTable,
        (auto_recalc, sample): (bool, u64),
        force: bool,
    ) -> Result<Arc<TableStats>, SqlError> {
        let now = t.table.modified.load(Ordering::Relaxed);
        if !force {
            if let Some(e) = t.stats.read().as_ref() {
                let changed = now.wrapping_sub(e.modified_at);
                // Due: one session computes them again; the others keep the old figures.
                if !auto_recalc
                    || changed <= e.stats.n_rows / 10
                    || e.busy.swap(true, Ordering::AcqRel)
                {
                    return Ok(e.stats.clone());
                }
            }
        }
        let sample = usize::try_from(sample).unwrap_or(usize::MAX);
        let st = match self.engine.table_stats(&t.table, sample) {
            Ok(st) => Arc::new(st),
            Err(e) => {
                if let Some(old) = t.stats.read().as_ref() {
                    old.busy.store(false, Ordering::Release);
                }
                return Err(engine_error(e));
            }
        };
        *t.stats.write() = Some(StatsEntry {
            stats: st.clone(),
            modified_at: now,
            busy: AtomicBool::new(false),
        });
        Ok(st)
    }

    /// Forgets the cached description of a table and its open entries (C1).
    pub fn invalidate(&self, db: &str, name: &str) {
        self.tables.forget(&format!("{db}/{name}"));
        self.forget_fk_map();
    }

    fn forget_fk_map(&self) {
        self.any_parent.store(true, Ordering::Relaxed);
        *self.fk_map.write() = None;
    }

    /// The names `of` gives for the description of each table of `db` but `except`,
    /// lower-case (constraint names are unique in a database). Read from the engine's
    /// definitions, not through the caches (C1).
    pub fn names_in_db(
        &self,
        db: &str,
        except: &str,
        of: impl Fn(&TableMeta) -> Vec<String>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for name in self.table_names(db) {
            if name != except {
                if let Ok(m) = self.stored_meta(db, &name) {
                    out.extend(of(&m).iter().map(|n| n.to_lowercase()));
                }
            }
        }
        out
    }

    /// The SQL layer's options of table `db.name` as the engine's definition holds them,
    /// without a description (C1).
    fn stored_meta(&self, db: &str, name: &str) -> Result<TableMeta, SqlError> {
        let full = format!("{db}/{name}");
        let t = self
            .engine
            .table(&full)
            .map_err(|_| SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]))?;
        meta_of(db, name, &t)
    }

    /// Whether some table may be referenced by a foreign key (C7; false: none is).
    pub fn any_fk_parent(&self) -> bool {
        self.any_parent.load(Ordering::Relaxed)
    }

    /// The foreign keys referencing each table (C7), built now if DDL dropped them.
    pub fn fk_map(&self) -> Arc<FkMap> {
        if let Some(m) = self.fk_map.read().as_ref() {
            return m.clone();
        }
        // Built under the write latch (then `tables`), so a DDL's `forget_fk_map` waits for
        // it and never leaves an older map in place.
        let mut slot = self.fk_map.write();
        if let Some(m) = slot.as_ref() {
            return m.clone();
        }
        let mut map = FkMap::default();
        for d in self.databases() {
            for name in self.table_names(&d.name) {
                let Ok(meta) = self.stored_meta(&d.name, &name) else {
                    continue;
                };
                for (i, fk) in meta.foreign_keys.iter().enumerate() {
                    map.by_parent
                        .entry(format!("{}/{}", fk.parent_db, fk.parent_table))
                        .or_default()
                        .push((d.name.clone(), name.clone(), i));
                }
            }
        }
        let map = Arc::new(map);
        self.any_parent
            .store(!map.by_parent.is_empty(), Ordering::Relaxed);
        *slot = Some(map.clone());
        map
    }

    fn describe(&self, db: &str, name: &str, table: Arc<Table>) -> Result<SqlTable, SqlError> {
        let meta = meta_of(db, name, &table)?;
        let mut columns = Vec::with_capacity(table.def.columns.len());
        for (i, c) in table.def.columns.iter().enumerate() {
            let ty = SqlType::from_persisted(&c.sql_type).ok_or_else(|| {
                SqlError::new(
                    ER_INTERNAL_ERROR,
                    &[&format!("column {} of {db}.{name} has no SQL type", c.name)],
                )
            })?;
            columns.push(SqlColumn {
                name: c.name.clone(),
                ty,
                nullable: c.nullable,
                meta: meta.columns.get(i).cloned().unwrap_or_default(),
            });
        }
        let auto_inc = columns
            .iter()
            .position(|c| c.meta.auto_increment || c.meta.hidden)
            .map(|i| {
                let ctr = self.counters.lock().entry(table.id).or_default().clone();
                {
                    let mut g = ctr.lock();
                    g.persistent = columns[i].meta.auto_increment;
                    g.table = Some(table.clone());
                }
                (i, ctr)
            });
        let has_generated = columns.iter().any(|c| c.meta.generated.is_some());
        Ok(SqlTable {
            db: db.into(),
            name: name.into(),
            table,
            columns,
            meta,
            auto_inc,
            has_generated,
            stats: RwLock::new(None),
        })
    }

    /// The table's AUTO_INCREMENT counter (the next value not handed out), loaded on first
    /// use after a start (C3). None: the table has no such column.
    fn counter<'t>(
        &self,
        t: &'t SqlTable,
    ) -> Result<Option<innoxide_engine::latch::MutexGuard<'t, AutoInc>>, SqlError> {
        let Some((col, ctr)) = &t.auto_inc else {
            return Ok(None);
        };
        let mut g = ctr.lock();
        if g.next == 0 {
            if g.persistent {
                g.persisted = self
                    .engine
                    .persisted_autoinc(&t.table)
                    .map_err(engine_error)?;
            }
            g.next = self
                .max_of(t, *col)?
                .saturating_add(1)
                .max(t.meta.auto_increment_start.max(1))
                .max(g.persisted.saturating_add(1));
        }
        Ok(Some(g))
    }

    /// Raises the persisted mark past the values handed out so far (C3), before any of them
    /// is used.
    fn cover(&self, t: &SqlTable, g: &mut AutoInc) -> Result<(), SqlError> {
        let used = g.next.saturating_sub(1);
        if g.persistent && used > g.persisted {
            let mark = used.saturating_add(AUTOINC_PERSIST_AHEAD);
            self.engine
                .persist_autoinc(&t.table, mark)
                .map_err(engine_error)?;
            g.persisted = mark;
        }
        Ok(())
    }

    /// Hands out the next AUTO_INCREMENT value: the smallest not below the counter that is
    /// `offset` plus a multiple of `increment` (auto_increment_increment/_offset; an offset
    /// above the increment is ignored, as in MySQL).
    pub fn next_auto_inc(
        &self,
        t: &SqlTable,
        increment: u64,
        offset: u64,
    ) -> Result<u64, SqlError> {
        Ok(self
            .next_auto_inc_block(t, 1, increment, offset, &|| false)?
            .unwrap_or(0))
    }

    /// Reserves `n` AUTO_INCREMENT values at once, under one hold of the counter (an INSERT
    /// ... VALUES, dml.rs AI2): the first; the others follow it `increment` apart. None,
    /// reserving nothing, when `busy` says so under that hold (another statement holds the
    /// table's AUTO-INC lock: its values must stay consecutive).
    pub fn next_auto_inc_block(
        &self,
        t: &SqlTable,
        n: u64,
        increment: u64,
        offset: u64,
        busy: &dyn Fn() -> bool,
    ) -> Result<Option<u64>, SqlError> {
        let Some(mut g) = self.counter(t)? else {
            return Ok(Some(0));
        };
        if busy() {
            return Ok(None);
        }
        let inc = increment.max(1);
        let off = if offset > inc { 1 } else { offset.max(1) };
        let v = if g.next <= off {
            off
        } else {
            off.saturating_add((g.next - off).div_ceil(inc).saturating_mul(inc))
        };
        g.next = v
            .saturating_add(n.saturating_sub(1).saturating_mul(inc))
            .saturating_add(1);
        self.cover(t, &mut g)?;
        Ok(Some(v))
    }

    /// The next AUTO_INCREMENT value (SHOW TABLE STATUS), None without such a column.
    pub fn auto_inc_value(&self, t: &SqlTable) -> Result<Option<u64>, SqlError> {
        if t.has_hidden_pk() && !t.columns.iter().any(|c| c.meta.auto_increment) {
            return Ok(None);
        }
        Ok(self.counter(t)?.map(|g| g.next))
    }

    /// A value was stored in the AUTO_INCREMENT column: later values go above it.
    pub fn saw_auto_inc(&self, t: &SqlTable, v: u64) -> Result<(), SqlError> {
        if let Some(mut g) = self.counter(t)? {
            if v >= g.next {
                g.next = v.saturating_add(1);
                self.cover(t, &mut g)?;
            }
        }
        Ok(())
    }

    /// The largest value of column `col` (the first column of the primary key or of a
    /// secondary index), read newest-first with READ UNCOMMITTED so uncommitted inserts count.
    fn max_of(&self, t: &SqlTable, col: usize) -> Result<u64, SqlError> {
        let et = &t.table;
        let index = if et.def.primary_key.as_ref().and_then(|p| p.first()) == Some(&col) {
            None
        } else {
            et.def
                .indexes
                .iter()
                .find(|i| i.columns.first() == Some(&col))
                .map(|i| i.name.clone())
        };
        let mut trx = self.engine.begin();
        trx.set_isolation(innoxide_engine::Isolation::ReadUncommitted);
        let mut it = trx
            .scan(
                et,
                index.as_deref(),
                KeyBound::Unbounded,
                KeyBound::Unbounded,
                false,
            )
            .map_err(engine_error)?;
        let mut max = 0u64;
        for r in it.by_ref() {
            let r = r.map_err(engine_error)?;
            match &r[col] {
                Value::Int(v) => max = max.max(u64::try_from(*v).unwrap_or(0)),
                Value::UInt(v) => max = max.max(*v),
                Value::Null => continue,
                Value::Float(f) => max = max.max(f.max(0.0) as u64),
                Value::Double(f) => max = max.max(f.max(0.0) as u64),
                Value::Bytes(_) => {}
            }
            break;
        }
        drop(it);
        trx.commit().map_err(engine_error)?;
        Ok(max)
    }

    // ---------------------------------------------------------------- users

    pub fn users(&self) -> Result<Vec<UserInfo>, SqlError> {
        Ok(self
            .scan_all(USERS)?
            .into_iter()
            .map(|r| {
                let s =
                    |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
                let b = |i: usize| r[i].as_bytes().map(<[u8]>::to_vec);
                UserInfo {
                    host: s(0),
                    user: s(1),
                    plugin: s(2),
                    native: b(3),
                    sha2: b(4),
                }
            })
            .collect())
    }

    /// The account a client is: the most specific host pattern that matches (exact host,
    /// 'localhost' for local clients, then patterns with wildcards, '%' last).
    pub fn find_user(
        &self,
        user: &str,
        host: &str,
        local: bool,
    ) -> Result<Option<UserInfo>, SqlError> {
        let mut best: Option<(u8, UserInfo)> = None;
        for u in self.users()? {
            if u.user != user {
                continue;
            }
            let rank = if u.host == host || (u.host == "localhost" && local) {
                3
            } else if u.host == "%" {
                1
            } else if like_host(&u.host, host) {
                2
            } else {
                continue;
            };
            if best.as_ref().is_none_or(|b| rank > b.0) {
                best = Some((rank, u));
            }
        }
        Ok(best.map(|b| b.1))
    }

    /// Creates or replaces an account's password (CREATE USER / ALTER USER).
    pub fn put_user(&self, u: &UserInfo, create: bool) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        let exists = self
            .users()?
            .iter()
            .any(|x| x.user == u.user && x.host == u.host);
        if exists == create {
            return Ok(false);
        }
        let t = self.engine.table(USERS).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        let row = [
            Value::from(u.host.as_str()),
            Value::from(u.user.as_str()),
            Value::from(u.plugin.as_str()),
            u.native.clone().map_or(Value::Null, Value::Bytes),
            u.sha2.clone().map_or(Value::Null, Value::Bytes),
        ];
        if exists {
            trx.delete(&t, &row[..2]).map_err(engine_error)?;
        }
        trx.insert(&t, &row).map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        Ok(true)
    }

    /// Drops an account and its grants.
    pub fn drop_user(&self, user: &str, host: &str) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        let t = self.engine.table(USERS).map_err(engine_error)?;
        let gt = self.engine.table(GRANTS).map_err(engine_error)?;
        let mine = self
            .grant_rows()?
            .into_iter()
            .filter(|r| r.0 == host && r.1 == user);
        let mine: Vec<_> = mine.collect();
        let mut trx = self.engine.begin();
        let found = trx
            .delete(&t, &[Value::from(host), Value::from(user)])
            .map_err(engine_error)?;
        for (h, u, d, tb, _) in &mine {
            trx.delete(&gt, &grant_row(h, u, d, tb, 0)[..4])
                .map_err(engine_error)?;
        }
        let ct = self.engine.table(COLUMN_GRANTS).map_err(engine_error)?;
        for r in self.column_grant_rows()? {
            if r.0 == host && r.1 == user {
                trx.delete(&ct, &column_grant_row(&r)[..5])
                    .map_err(engine_error)?;
            }
        }
        // Its role rows, either side (a dropped role is no longer granted or a default).
        let rt = self.engine.table(ROLES).map_err(engine_error)?;
        for r in self.role_rows()? {
            if (r.1 == host && r.2 == user) || (r.3 == host && r.4 == user) {
                trx.delete(&rt, &role_row(&r)[..5]).map_err(engine_error)?;
            }
        }
        trx.commit().map_err(engine_error)?;
        self.load_grants()?;
        Ok(found)
    }

    // ---------------------------------------------------------------- roles

    fn role_rows(&self) -> Result<Vec<crate::privs::RoleRow>, SqlError> {
        Ok(self
            .scan_all(ROLES)?
            .into_iter()
            .map(|r| {
                let s =
                    |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
                let admin = matches!(r[5], Value::UInt(1) | Value::Int(1));
                (s(0), s(1), s(2), s(3), s(4), admin)
            })
            .collect())
    }

    /// CREATE ROLE: an account without password (CREATE USER's row) marked a role, in one
    /// transaction. False if the account exists.
    pub fn create_role(&self, user: &str, host: &str) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        if self
            .users()?
            .iter()
            .any(|x| x.user == user && x.host == host)
        {
            return Ok(false);
        }
        let t = self.engine.table(USERS).map_err(engine_error)?;
        let rt = self.engine.table(ROLES).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        trx.insert(
            &t,
            &[
                Value::from(host),
                Value::from(user),
                Value::from("caching_sha2_password"),
                Value::Null,
                Value::Null,
            ],
        )
        .map_err(engine_error)?;
        let mark = (
            "R".into(),
            host.into(),
            user.into(),
            String::new(),
            String::new(),
            false,
        );
        trx.insert(&rt, &role_row(&mark)).map_err(engine_error)?;
        trx.commit().map_err(engine_error)?;
        self.load_grants()?;
        Ok(true)
    }

    /// Grants (`add`) or revokes role `role` (user, host) to account (user, host); WITH
    /// ADMIN OPTION with `admin`. Returns whether it was granted before.
    pub fn change_role_grant(
        &self,
        account: (&str, &str),
        role: (&str, &str),
        admin: bool,
        add: bool,
    ) -> Result<bool, SqlError> {
        let _g = self.ddl.lock();
        let rt = self.engine.table(ROLES).map_err(engine_error)?;
        let row = (
            "G".to_string(),
            account.1.to_string(),
            account.0.to_string(),
            role.1.to_string(),
            role.0.to_string(),
            admin,
        );
        let old = self
            .role_rows()?
            .into_iter()
            .find(|r| r.0 == "G" && r.1 == row.1 && r.2 == row.2 && r.3 == row.3 && r.4 == row.4);
        let mut trx = self.engine.begin();
        if let Some(o) = &old {
            trx.delete(&rt, &role_row(o)[..5]).map_err(engine_error)?;
        }
        if add {
            let keep_admin = old.as_ref().is_some_and(|o| o.5);
            let mut row = row;
            row.5 |= keep_admin;
            trx.insert(&rt, &role_row(&row)).map_err(engine_error)?;
        }
        trx.commit().map_err(engine_error)?;
        self.load_grants()?;
        Ok(old.is_some())
    }

    /// SET DEFAULT ROLE: account (user, host)'s default roles become `roles` (user, host).
    pub fn set_default_roles(
        &self,
        account: (&str, &str),
        roles: &[(String, String)],
    ) -> Result<(), SqlError> {
        let _g = self.ddl.lock();
        let rt = self.engine.table(ROLES).map_err(engine_error)?;
        let mut trx = self.engine.begin();
        for r in self.role_rows()? {
            if r.0 == "D" && r.1 == account.1 && r.2 == account.0 {
                trx.delete(&rt, &role_row(&r)[..5]).map_err(engine_error)?;
            }
        }
        for (u, h) in roles {
            let row = (
                "D".to_string(),
                account.1.to_string(),
                account.0.to_string(),
                h.clone(),
                u.clone(),
                false,
            );
            trx.insert(&rt, &role_row(&row)).map_err(engine_error)?;
        }
        trx.commit().map_err(engine_error)?;
        self.load_grants()
    }

    // ---------------------------------------------------------------- privileges

    fn grant_rows(&self) -> Result<Vec<crate::privs::GrantRow>, SqlError> {
        Ok(self
            .scan_all(GRANTS)?
            .into_iter()
            .map(|r| {
                let s =
                    |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
                let bits = match r[4] {
                    Value::UInt(b) => b,
                    Value::Int(b) => b as u64,
                    _ => 0,
                };
                (s(0), s(1), s(2), s(3), bits)
            })
            .collect())
    }

    fn column_grant_rows(&self) -> Result<Vec<crate::privs::ColumnGrantRow>, SqlError> {
        Ok(self
            .scan_all(COLUMN_GRANTS)?
            .into_iter()
            .map(|r| {
                let s =
                    |i: usize| String::from_utf8_lossy(r[i].as_bytes().unwrap_or(b"")).to_string();
                let bits = match r[5] {
                    Value::UInt(b) => b,
                    _ => 0,
                };
                (s(0), s(1), s(2), s(3), s(4), bits)
            })
            .collect())
    }

    fn load_grants(&self) -> Result<(), SqlError> {
        let mut g = crate::privs::Grants::from_rows(self.grant_rows()?, self.column_grant_rows()?);
        g.add_roles(self.role_rows()?);
        let users = self.users()?;
        g.mandatory = (self.mandatory.read().iter())
            .filter(|(u, h)| users.iter().any(|x| x.user == *u && x.host == *h))
            .cloned()
            .collect();
        *self.grants.write() = Arc::new(g);
        self.grants_version.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Makes `roles` (mandatory_roles) held by every account, those that exist (privs.rs P4).
    pub fn set_mandatory_roles(&self, roles: Vec<crate::privs::AuthId>) -> Result<(), SqlError> {
        let _g = self.ddl.lock();
        *self.mandatory.write() = roles;
        self.load_grants()
    }

    /// Whether `user`@`host` is one of the roles mandatory_roles names (3628 for DROP and
    /// REVOKE).
    pub fn is_mandatory_role(&self, user: &str, host: &str) -> bool {
        (self.mandatory.read().iter()).any(|(u, h)| u == user && h == host)
    }

    /// Bumped by every change of privileges: a session re-reads its account's grants when
    /// this moved.
    pub fn grants_version(&self) -> u64 {
        self.grants_version.load(Ordering::Acquire)
    }

    /// The grants of account `user`@`host` (the host pattern).
    pub fn privileges(&self, user: &str, host: &str) -> Arc<crate::privs::AccountPrivs> {
        self.grants.read().of(user, host)
    }

    /// The grants and roles of every account (C4).
    pub fn grants(&self) -> Arc<crate::privs::Grants> {
        self.grants.read().clone()
    }

    /// Sets (or with `add` false, takes away) privileges of one account at one level: `db`
    /// and `tbl` empty for *.*, `tbl` empty for db.*. Returns the bits the account held
    /// there before.
    pub fn change_grant(
        &self,
        user: &str,
        host: &str,
        db: &str,
        tbl: &str,
        bits: u64,
        add: bool,
    ) -> Result<u64, SqlError> {
        let _g = self.ddl.lock();
        let t = self.engine.table(GRANTS).map_err(engine_error)?;
        let old = self
            .grant_rows()?
            .into_iter()
            .find(|r| r.0 == host && r.1 == user && r.2 == db && r.3 == tbl)
            .map_or(0, |r| r.4);
        let new = if add { old | bits } else { old & !bits };
        if new != old {
            let mut trx = self.engine.begin();
            let row = grant_row(host, user, db, tbl, new);
            if old != 0 {
                trx.delete(&t, &row[..4]).map_err(engine_error)?;
            }
            // P1: an emptied row is deleted, not kept with 0.
            if new != 0 {
                trx.insert(&t, &row).map_err(engine_error)?;
            }
            trx.commit().map_err(engine_error)?;
            self.load_grants()?;
        }
        Ok(old)
    }

    /// Sets (or with `add` false, takes away) privileges of one account on columns of
    /// `db.tbl`, in one transaction. Returns, per column, the bits it held there before.
    pub fn change_column_grants(
        &self,
        user: &str,
        host: &str,
        db: &str,
        tbl: &str,
        changes: &[(String, u64)],
        add: bool,
    ) -> Result<Vec<u64>, SqlError> {
        let _g = self.ddl.lock();
        let t = self.engine.table(COLUMN_GRANTS).map_err(engine_error)?;
        let rows = self.column_grant_rows()?;
        let mut olds = Vec::with_capacity(changes.len());
        let mut trx = self.engine.begin();
        let mut changed = false;
        for (col, bits) in changes {
            let old = (rows.iter())
                .find(|r| r.0 == host && r.1 == user && r.2 == db && r.3 == tbl && r.4 == *col)
                .map_or(0, |r| r.5);
            olds.push(old);
            let new = if add { old | bits } else { old & !bits };
            if new == old {
                continue;
            }
            changed = true;
            let row = (
                host.into(),
                user.into(),
                db.into(),
                tbl.into(),
                col.clone(),
                new,
            );
            let row = column_grant_row(&row);
            if old != 0 {
                trx.delete(&t, &row[..5]).map_err(engine_error)?;
            }
            if new != 0 {
                trx.insert(&t, &row).map_err(engine_error)?;
            }
        }
        trx.commit().map_err(engine_error)?;
        if changed {
            self.load_grants()?;
        }
        Ok(olds)
    }
}

const ALL_WITH_GRANT: u64 = crate::privs::GLOBAL_ALL | crate::privs::GRANT_OPTION;

/// A row of `mysql/innoxide_column_grants`.
fn column_grant_row(r: &crate::privs::ColumnGrantRow) -> [Value; 6] {
    [
        Value::from(r.0.as_str()),
        Value::from(r.1.as_str()),
        Value::from(r.2.as_str()),
        Value::from(r.3.as_str()),
        Value::from(r.4.as_str()),
        Value::UInt(r.5),
    ]
}

/// A row of `mysql/innoxide_roles` from a `RoleRow`.
fn role_row(r: &crate::privs::RoleRow) -> [Value; 6] {
    [
        Value::from(r.0.as_str()),
        Value::from(r.1.as_str()),
        Value::from(r.2.as_str()),
        Value::from(r.3.as_str()),
        Value::from(r.4.as_str()),
        Value::UInt(u64::from(r.5)),
    ]
}

fn grant_row(host: &str, user: &str, db: &str, tbl: &str, bits: u64) -> [Value; 5] {
    [
        Value::from(host),
        Value::from(user),
        Value::from(db),
        Value::from(tbl),
        Value::UInt(bits),
    ]
}

/// The SQL layer's options of an engine table (JSON in `TableDef::options`).
fn meta_of(db: &str, name: &str, table: &Table) -> Result<TableMeta, SqlError> {
    if table.def.options.is_empty() {
        return Ok(TableMeta::default());
    }
    serde_json::from_str(&table.def.options).map_err(|e| {
        SqlError::new(
            ER_INTERNAL_ERROR,
            &[&format!("description of {db}.{name}: {e}")],
        )
    })
}

/// True for an engine name `db/#sql-...` (see TEMP_PREFIX).
pub fn is_work_table(engine_name: &str) -> bool {
    engine_name
        .split_once('/')
        .is_some_and(|(_, t)| t.starts_with(TEMP_PREFIX))
}

/// MySQL host patterns: '%' any run, '_' one character.
fn like_host(pattern: &str, host: &str) -> bool {
    fn m(p: &[u8], h: &[u8]) -> bool {
        match p.split_first() {
            None => h.is_empty(),
            Some((b'%', rest)) => (0..=h.len()).any(|i| m(rest, &h[i..])),
            Some((b'_', rest)) => !h.is_empty() && m(rest, &h[1..]),
            Some((c, rest)) => {
                h.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && m(rest, &h[1..])
            }
        }
    }
    m(pattern.as_bytes(), host.as_bytes())
}
