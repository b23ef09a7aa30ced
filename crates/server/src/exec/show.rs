//! SHOW statements, information_schema tables and EXPLAIN. Every row shown is built from the
//! catalog, the variable registry or the engine at the time of the statement.

use std::sync::Arc;

use innoxide_sql::ast::{self, Show, ShowFilter, Statement, VarScope};
use innoxide_sql::error::*;
use innoxide_sql::types::{Datum, Level, SqlType};

use super::expr::{Compiler, EType, Env, ScopeTable};
use super::select::{conjuncts, Access};
use super::typeinfo::TypeInfo;
use super::{Column, Output, Session};
use crate::catalog::{DefaultValue, SqlTable, SqlView};
use crate::privs;
use crate::vars::VarValue;

fn s(x: impl Into<String>) -> Datum {
    Datum::Bytes(x.into().into_bytes())
}

fn n(x: u64) -> Datum {
    Datum::UInt(x)
}

fn opt(x: Option<String>) -> Datum {
    x.map_or(Datum::Null, s)
}

/// The tables of information_schema and performance_schema innoxide computes (what SHOW
/// TABLES lists; `Session::system_schema_table` answers each), or None for another database.
fn system_tables(db: &str) -> Option<&'static [&'static str]> {
    if db.eq_ignore_ascii_case("information_schema") {
        Some(&[
            "CHECK_CONSTRAINTS",
            "COLUMNS",
            "COLUMN_PRIVILEGES",
            "ENGINES",
            "INNODB_BUFFER_POOL_STATS",
            "INNODB_CMP",
            "INNODB_CMPMEM",
            "INNODB_CMPMEM_RESET",
            "INNODB_CMP_RESET",
            "INNODB_METRICS",
            "INNODB_TRX",
            "KEY_COLUMN_USAGE",
            "PROCESSLIST",
            "REFERENTIAL_CONSTRAINTS",
            "SCHEMATA",
            "STATISTICS",
            "TABLES",
            "TABLE_CONSTRAINTS",
            "TABLE_PRIVILEGES",
            "VIEWS",
        ])
    } else if db.eq_ignore_ascii_case("performance_schema") {
        Some(&[
            "data_lock_waits",
            "data_locks",
            "events_waits_summary_global_by_event_name",
        ])
    } else {
        None
    }
}

/// information_schema.INNODB_TRX's columns (MySQL 8.0).
const TRX_COLUMNS: &[&str] = &[
    "TRX_ID",
    "TRX_STATE",
    "TRX_STARTED",
    "TRX_REQUESTED_LOCK_ID",
    "TRX_WAIT_STARTED",
    "TRX_WEIGHT",
    "TRX_MYSQL_THREAD_ID",
    "TRX_QUERY",
    "TRX_OPERATION_STATE",
    "TRX_TABLES_IN_USE",
    "TRX_TABLES_LOCKED",
    "TRX_LOCK_STRUCTS",
    "TRX_LOCK_MEMORY_BYTES",
    "TRX_ROWS_LOCKED",
    "TRX_ROWS_MODIFIED",
    "TRX_CONCURRENCY_TICKETS",
    "TRX_ISOLATION_LEVEL",
    "TRX_UNIQUE_CHECKS",
    "TRX_FOREIGN_KEY_CHECKS",
    "TRX_LAST_FOREIGN_KEY_ERROR",
    "TRX_ADAPTIVE_HASH_LATCHED",
    "TRX_ADAPTIVE_HASH_TIMEOUT",
    "TRX_IS_READ_ONLY",
    "TRX_AUTOCOMMIT_NON_LOCKING",
    "TRX_SCHEDULE_WEIGHT",
];

/// The size and time columns information_schema.PARTITIONS and FILES share with TABLES.
const STATS_COLUMNS: [&str; 10] = [
    "TABLE_ROWS",
    "AVG_ROW_LENGTH",
    "DATA_LENGTH",
    "MAX_DATA_LENGTH",
    "INDEX_LENGTH",
    "DATA_FREE",
    "CREATE_TIME",
    "UPDATE_TIME",
    "CHECK_TIME",
    "CHECKSUM",
];

/// information_schema columns that MySQL types as integers (the rest are strings).
/// information_schema.INNODB_BUFFER_POOL_STATS, INNODB_CMP, INNODB_CMPMEM: numbers only.
const POOL_STATS_COLUMNS: &[&str] = &[
    "POOL_ID",
    "POOL_SIZE",
    "FREE_BUFFERS",
    "DATABASE_PAGES",
    "OLD_DATABASE_PAGES",
    "MODIFIED_DATABASE_PAGES",
    "PAGES_MADE_YOUNG",
    "PAGES_NOT_MADE_YOUNG",
    "NUMBER_PAGES_READ",
    "NUMBER_PAGES_CREATED",
    "NUMBER_PAGES_WRITTEN",
    "NUMBER_PAGES_GET",
];
const CMP_COLUMNS: &[&str] = &[
    "PAGE_SIZE",
    "COMPRESS_OPS",
    "COMPRESS_OPS_OK",
    "COMPRESS_TIME",
    "UNCOMPRESS_OPS",
    "UNCOMPRESS_TIME",
];
const CMPMEM_COLUMNS: &[&str] = &[
    "PAGE_SIZE",
    "BUFFER_POOL_INSTANCE",
    "PAGES_USED",
    "PAGES_FREE",
    "RELOCATION_OPS",
    "RELOCATION_TIME",
];

const NUMERIC_IS_COLUMNS: &[&str] = &[
    "ID",
    "TIME",
    "COUNT",
    "TRX_ID",
    "ORDINAL_POSITION",
    "CHARACTER_MAXIMUM_LENGTH",
    "CHARACTER_OCTET_LENGTH",
    "NUMERIC_PRECISION",
    "NUMERIC_SCALE",
    "DATETIME_PRECISION",
    "NON_UNIQUE",
    "SEQ_IN_INDEX",
    "CARDINALITY",
    "SUB_PART",
    "VERSION",
    "TABLE_ROWS",
    "AVG_ROW_LENGTH",
    "DATA_LENGTH",
    "MAX_DATA_LENGTH",
    "INDEX_LENGTH",
    "DATA_FREE",
    "AUTO_INCREMENT",
    "CHECKSUM",
];

/// NUMERIC_PRECISION, NUMERIC_SCALE and DATETIME_PRECISION of information_schema.COLUMNS.
fn numeric_precision(ty: &SqlType) -> [Datum; 3] {
    let int = |p: u64| [n(p), n(0), Datum::Null];
    match ty.data_type() {
        "tinyint" => int(3),
        "smallint" => int(5),
        "mediumint" => int(7),
        "int" => int(10),
        "bigint" => int(if ty.unsigned() { 20 } else { 19 }),
        "decimal" => {
            let (m, d) = ty.precision_scale();
            [n(u64::from(m)), n(u64::from(d)), Datum::Null]
        }
        "float" => [n(12), Datum::Null, Datum::Null],
        "double" => [n(22), Datum::Null, Datum::Null],
        "datetime" | "timestamp" | "time" => [Datum::Null, Datum::Null, n(u64::from(ty.fsp()))],
        _ => [Datum::Null, Datum::Null, Datum::Null],
    }
}

fn rows_of(cols: &[&str], rows: Vec<Vec<Datum>>) -> Output {
    Output::Rows {
        columns: cols.iter().map(|c| Column::text(c)).collect(),
        rows,
    }
}

impl Session {
    /// Keeps the rows whose first column matches LIKE, or that satisfy WHERE (over the
    /// columns by name).
    fn filter(
        &mut self,
        cols: &[&str],
        rows: Vec<Vec<Datum>>,
        f: &Option<ShowFilter>,
        params: &[Datum],
    ) -> Result<Vec<Vec<Datum>>, SqlError> {
        match f {
            None => Ok(rows),
            Some(ShowFilter::Like(p)) => {
                let coll = innoxide_engine::Collation::Utf8mb4GeneralCi;
                let pat = super::like::LikePattern::new(p.as_bytes(), Some('\\'), coll);
                Ok(rows
                    .into_iter()
                    .filter(|r| r[0].to_text().is_some_and(|v| pat.matches(&v)))
                    .collect())
            }
            Some(ShowFilter::Where(e)) => {
                let scope = [ScopeTable {
                    name: String::new(),
                    db: String::new(),
                    columns: cols
                        .iter()
                        .map(|c| {
                            (
                                c.to_string(),
                                EType::Str {
                                    coll: innoxide_engine::Collation::Utf8mb40900AiCi,
                                },
                                false,
                            )
                        })
                        .collect(),
                    offset: 0,
                    table: None,
                }];
                let (c, _) = Compiler::new(&scope, "where clause").compile(e, self)?;
                let mode = self.vars.sql_mode();
                let mut w = Default::default();
                let mut out = Vec::new();
                for r in rows {
                    if c.truth(&Env::new(&r, params, mode), &mut w)? == Some(true) {
                        out.push(r);
                    }
                }
                Ok(out)
            }
        }
    }

    pub(crate) fn show(&mut self, sh: &Show, params: &[Datum]) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        match sh {
            Show::Databases { filter } => {
                let mut rows = vec![vec![s("information_schema")], vec![s("performance_schema")]];
                for d in cat.databases() {
                    if self.sees_db(&d.name) {
                        rows.push(vec![s(d.name)]);
                    }
                }
                rows.sort_by(|a, b| a[0].to_text().cmp(&b[0].to_text()));
                let rows = self.filter(&["Database"], rows, filter, params)?;
                Ok(rows_of(&["Database"], rows))
            }
            Show::Tables { db, full, filter } => {
                let db = match db.clone().or(self.db.clone()) {
                    Some(d) => d,
                    None => return Err(SqlError::new(ER_NO_DB_ERROR, &[])),
                };
                let system = system_tables(&db);
                if cat.database(&db).is_none() && system.is_none() {
                    return Err(SqlError::new(ER_BAD_DB_ERROR, &[&db]));
                }
                let head = format!("Tables_in_{db}");
                // MySQL: information_schema's are views, performance_schema's base tables.
                let system_kind = if db.eq_ignore_ascii_case("information_schema") {
                    "SYSTEM VIEW"
                } else {
                    "BASE TABLE"
                };
                let mut names: Vec<(String, &str)> = match system {
                    Some(list) => list.iter().map(|t| (t.to_string(), system_kind)).collect(),
                    None => {
                        let tables = cat.table_names(&db).into_iter().map(|t| (t, "BASE TABLE"));
                        let views = cat.view_names(&db).into_iter().map(|v| (v, "VIEW"));
                        let mut names: Vec<(String, &str)> = tables.chain(views).collect();
                        names.retain(|(t, _)| self.sees_table(&db, t));
                        names.sort();
                        names
                    }
                };
                let rows: Vec<Vec<Datum>> = names
                    .drain(..)
                    .map(|(t, kind)| {
                        if *full {
                            vec![s(t), s(kind)]
                        } else {
                            vec![s(t)]
                        }
                    })
                    .collect();
                let cols: Vec<&str> = if *full {
                    vec![&head, "Table_type"]
                } else {
                    vec![&head]
                };
                let rows = self.filter(&cols, rows, filter, params)?;
                Ok(rows_of(&cols, rows))
            }
            Show::Columns {
                table,
                full,
                filter,
            } => {
                let db = self.db_of(table)?;
                self.check_table_any(&db, &table.name, "SELECT")?;
                let t = match (cat.table(&db, &table.name), cat.view(&db, &table.name)) {
                    (Err(_), Some(v)) => {
                        return self.show_view_columns(&v, *full, filter, params);
                    }
                    (t, _) => t?,
                };
                let mut rows = Vec::new();
                for (i, c) in t.visible() {
                    // Only the columns the account holds some privilege on.
                    if !self.sees_column(&db, &t.name, &c.name) {
                        continue;
                    }
                    let key = key_flag(&t, i);
                    let mut r = vec![s(c.name.clone()), s(c.ty.display())];
                    if *full {
                        r.push(if c.ty.is_string() {
                            s(c.ty.collation_name())
                        } else {
                            Datum::Null
                        });
                    }
                    r.push(s(if c.nullable { "YES" } else { "NO" }));
                    r.push(s(key));
                    r.push(default_text(&c.meta.default, &c.ty));
                    r.push(s(extra_of(&c.meta)));
                    if *full {
                        r.push(s("select,insert,update,references"));
                        r.push(s(c.meta.comment.clone()));
                    }
                    rows.push(r);
                }
                let cols = columns_header(*full);
                let rows = self.filter(&cols, rows, filter, params)?;
                Ok(rows_of(&cols, rows))
            }
            Show::Index { table } => {
                let db = self.db_of(table)?;
                self.check_table_any(&db, &table.name, "SELECT")?;
                let t = match (cat.table(&db, &table.name), cat.view(&db, &table.name)) {
                    // A view has no index: no rows.
                    (Err(_), Some(_)) => None,
                    (t, _) => Some(t?),
                };
                let cols = [
                    "Table",
                    "Non_unique",
                    "Key_name",
                    "Seq_in_index",
                    "Column_name",
                    "Collation",
                    "Cardinality",
                    "Sub_part",
                    "Packed",
                    "Null",
                    "Index_type",
                    "Comment",
                    "Index_comment",
                    "Visible",
                    "Expression",
                ];
                let Some(t) = t else {
                    return Ok(rows_of(&cols, Vec::new()));
                };
                Ok(rows_of(
                    &cols,
                    index_rows(&t, Some(self.table_stats(&t)?.as_ref()))
                        .into_iter()
                        .map(|r| {
                            let mut v = vec![
                                s(t.name.clone()),
                                n(u64::from(!r.unique)),
                                s(r.name.clone()),
                            ];
                            v.extend(r.tail());
                            v
                        })
                        .collect(),
                ))
            }
            Show::CreateView(name) => {
                let db = self.db_of(name)?;
                self.check_table_any(&db, &name.name, "SHOW VIEW")?;
                match cat.view(&db, &name.name) {
                    Some(v) => Ok(self.show_create_view(&v)),
                    None if cat.table(&db, &name.name).is_ok() => {
                        Err(SqlError::new(ER_WRONG_OBJECT, &[&db, &name.name, &"VIEW"]))
                    }
                    None => Err(SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name.name])),
                }
            }
            Show::CreateTable(name) => {
                let db = self.db_of(name)?;
                self.check_table_any(&db, &name.name, "SHOW")?;
                let t = match (cat.table(&db, &name.name), cat.view(&db, &name.name)) {
                    (Err(_), Some(v)) => return Ok(self.show_create_view(&v)),
                    (t, _) => t?,
                };
                let next = cat.auto_inc_value(&t)?;
                let text = show_create(&t, self.vars.sql_quote_show_create(), next);
                Ok(rows_of(
                    &["Table", "Create Table"],
                    vec![vec![s(t.name.clone()), s(text)]],
                ))
            }
            Show::CreateDatabase {
                name,
                if_not_exists,
            } => {
                let d = cat
                    .database(name)
                    .ok_or_else(|| SqlError::new(ER_BAD_DB_ERROR, &[name]))?;
                Ok(rows_of(&["Database", "Create Database"], vec![vec![
                    s(d.name.clone()),
                    s(format!("CREATE DATABASE {}{} /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */ /*!80016 DEFAULT ENCRYPTION='N' */", if *if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" }, ident(&d.name, self.vars.sql_quote_show_create()), d.charset, d.collation)),
                ]]))
            }
            Show::TableStatus { db, filter } => {
                let db = match db.clone().or(self.db.clone()) {
                    Some(d) => d,
                    None => return Err(SqlError::new(ER_NO_DB_ERROR, &[])),
                };
                let cols = [
                    "Name",
                    "Engine",
                    "Version",
                    "Row_format",
                    "Rows",
                    "Avg_row_length",
                    "Data_length",
                    "Max_data_length",
                    "Index_length",
                    "Data_free",
                    "Auto_increment",
                    "Create_time",
                    "Update_time",
                    "Check_time",
                    "Collation",
                    "Checksum",
                    "Create_options",
                    "Comment",
                ];
                let mut rows = Vec::new();
                for name in cat.table_names(&db) {
                    if !self.sees_table(&db, &name) {
                        continue;
                    }
                    let Ok(t) = cat.table(&db, &name) else {
                        continue;
                    };
                    let mut r = vec![s(name)];
                    r.extend(self.status_tail(&t)?);
                    rows.push(r);
                }
                for name in cat.view_names(&db) {
                    if self.sees_table(&db, &name) {
                        let mut r = vec![s(name)];
                        r.extend(view_status_tail());
                        rows.push(r);
                    }
                }
                rows.sort_by(|a, b| a[0].to_text().cmp(&b[0].to_text()));
                let rows = self.filter(&cols, rows, filter, params)?;
                Ok(rows_of(&cols, rows))
            }
            Show::Warnings {
                errors_only,
                count,
                limit,
            } => {
                let list: Vec<_> = self
                    .warnings
                    .iter()
                    .filter(|w| !*errors_only || w.level == Level::Error)
                    .cloned()
                    .collect();
                if *count {
                    return Ok(Output::Rows {
                        columns: vec![Column::int(if *errors_only {
                            "@@session.error_count"
                        } else {
                            "@@session.warning_count"
                        })],
                        rows: vec![vec![n(list.len() as u64)]],
                    });
                }
                let (off, lim) = limit.unwrap_or((0, u64::MAX));
                let rows = list
                    .into_iter()
                    .skip(off as usize)
                    .take(lim as usize)
                    .map(|w| vec![s(w.level.name()), n(u64::from(w.code)), s(w.message)])
                    .collect();
                Ok(Output::Rows {
                    columns: vec![
                        Column::text("Level"),
                        Column::int("Code"),
                        Column::text("Message"),
                    ],
                    rows,
                })
            }
            Show::Variables { global, filter } => {
                let rows: Vec<Vec<Datum>> = self
                    .server
                    .vars
                    .show(&self.vars, *global)
                    .into_iter()
                    .map(|(k, v)| vec![s(k), s(v)])
                    .collect();
                let rows = self.filter(&["Variable_name", "Value"], rows, filter, params)?;
                Ok(rows_of(&["Variable_name", "Value"], rows))
            }
            Show::Status { filter, global } => {
                let rows = crate::status::rows(self, *global)
                    .into_iter()
                    .map(|(k, v)| vec![s(k), s(v)])
                    .collect();
                let rows = self.filter(&["Variable_name", "Value"], rows, filter, params)?;
                Ok(rows_of(&["Variable_name", "Value"], rows))
            }
            Show::Processlist { full } => Ok(Output::Rows {
                columns: vec![
                    Column::int("Id"),
                    Column::text("User"),
                    Column::text("Host"),
                    Column::text("db"),
                    Column::text("Command"),
                    Column::int("Time"),
                    Column::text("State"),
                    Column::text("Info"),
                ],
                rows: self.processlist(*full),
            }),
            Show::Engines => Ok(rows_of(
                &[
                    "Engine",
                    "Support",
                    "Comment",
                    "Transactions",
                    "XA",
                    "Savepoints",
                ],
                vec![vec![
                    s("InnoDB"),
                    s("DEFAULT"),
                    s("Supports transactions, row-level locking, and foreign keys"),
                    s("YES"),
                    s("YES"),
                    s("YES"),
                ]],
            )),
            Show::Collation { filter } => {
                let rows = innoxide_sql::types::COLLATIONS
                    .iter()
                    .map(|c| {
                        vec![
                            s(c.name),
                            s(c.charset),
                            n(u64::from(c.id)),
                            s(if c.is_default { "Yes" } else { "" }),
                            s("Yes"),
                            n(1),
                            s(if c.name.contains("_0900_") {
                                "NO PAD"
                            } else {
                                "PAD SPACE"
                            }),
                        ]
                    })
                    .collect();
                let cols = [
                    "Collation",
                    "Charset",
                    "Id",
                    "Default",
                    "Compiled",
                    "Sortlen",
                    "Pad_attribute",
                ];
                let rows = self.filter(&cols, rows, filter, params)?;
                Ok(rows_of(&cols, rows))
            }
            Show::CharacterSet { filter } => {
                let rows = vec![
                    vec![s("binary"), s("Binary pseudo charset"), s("binary"), n(1)],
                    vec![
                        s("latin1"),
                        s("cp1252 West European"),
                        s("latin1_swedish_ci"),
                        n(1),
                    ],
                    vec![
                        s("utf8mb3"),
                        s("UTF-8 Unicode"),
                        s("utf8mb3_general_ci"),
                        n(3),
                    ],
                    vec![
                        s("utf8mb4"),
                        s("UTF-8 Unicode"),
                        s("utf8mb4_0900_ai_ci"),
                        n(4),
                    ],
                ];
                let cols = ["Charset", "Description", "Default collation", "Maxlen"];
                let rows = self.filter(&cols, rows, filter, params)?;
                Ok(rows_of(&cols, rows))
            }
            Show::EngineStatus { engine, mutex } => {
                if !engine.eq_ignore_ascii_case("innodb") {
                    return Err(SqlError::new(ER_UNKNOWN_STORAGE_ENGINE, &[engine]));
                }
                if *mutex {
                    // As MySQL 8.0: the objects that were waited on, Status "waits=N" (MariaDB
                    // 10.11 keeps no such counts and returns an empty set).
                    let inner = self.server.catalog.engine.inner();
                    let rows = innoxide_engine::sync_stats::wait_rows(inner)
                        .into_iter()
                        .filter(|r| r.waits.count > 0)
                        .map(|r| {
                            vec![
                                s("InnoDB"),
                                s(r.name),
                                s(format!("waits={}", r.waits.count)),
                            ]
                        })
                        .collect();
                    return Ok(rows_of(&["Type", "Name", "Status"], rows));
                }
                let now = innoxide_sql::types::now().to_string();
                let sessions = self.server.sessions.lock().clone();
                let session = |owner: u64| {
                    let i = sessions.get(&u32::try_from(owner).ok()?)?;
                    let st = i.state.lock();
                    let query = (!st.info.is_empty()).then(|| st.info.clone());
                    Some((format!("{} {}", i.host, i.user), query))
                };
                let text = innoxide_engine::monitor::innodb_status(
                    self.server.catalog.engine.inner(),
                    &now,
                    &session,
                );
                Ok(rows_of(
                    &["Type", "Name", "Status"],
                    vec![vec![s("InnoDB"), s(""), s(text)]],
                ))
            }
            Show::Profiles => {
                let rows = self
                    .profiler
                    .profiles()
                    .map(|p| {
                        vec![
                            n(u64::from(p.id)),
                            s(format!("{:.8}", p.duration().as_secs_f64())),
                            s(p.query.clone()),
                        ]
                    })
                    .collect();
                Ok(Output::Rows {
                    columns: vec![
                        Column::int("Query_ID"),
                        Column::text("Duration"),
                        Column::text("Query"),
                    ],
                    rows,
                })
            }
            Show::Profile { query } => {
                let id = query.map(|q| u32::try_from(q).unwrap_or(u32::MAX));
                let rows = self.profiler.profile(id).map_or_else(Vec::new, |p| {
                    p.stages
                        .iter()
                        .map(|(stage, d)| vec![s(*stage), s(format!("{:.6}", d.as_secs_f64()))])
                        .collect()
                });
                Ok(rows_of(&["Status", "Duration"], rows))
            }
            Show::CreateUser(u) => {
                let (head, text) = self.show_create_user(u)?;
                Ok(rows_of(&[&head], vec![vec![s(text)]]))
            }
            Show::Grants { user, using } => {
                let (head, lines) = self.show_grants(user.as_ref(), using)?;
                Ok(rows_of(
                    &[&head],
                    lines.into_iter().map(|l| vec![s(l)]).collect(),
                ))
            }
            Show::Plugins => Ok(rows_of(
                &["Name", "Status", "Type", "Library", "License"],
                vec![
                    vec![
                        s("InnoDB"),
                        s("ACTIVE"),
                        s("STORAGE ENGINE"),
                        Datum::Null,
                        s("Apache-2.0"),
                    ],
                    vec![
                        s("mysql_native_password"),
                        s("ACTIVE"),
                        s("AUTHENTICATION"),
                        Datum::Null,
                        s("Apache-2.0"),
                    ],
                    vec![
                        s("caching_sha2_password"),
                        s("ACTIVE"),
                        s("AUTHENTICATION"),
                        Datum::Null,
                        s("Apache-2.0"),
                    ],
                ],
            )),
            Show::NoObjects(kind) => {
                let tail = [
                    "character_set_client",
                    "collation_connection",
                    "Database Collation",
                ];
                let head: &[&str] = match kind {
                    ast::ObjectKind::Events => &[
                        "Db",
                        "Name",
                        "Definer",
                        "Time zone",
                        "Type",
                        "Execute at",
                        "Interval value",
                        "Interval field",
                        "Starts",
                        "Ends",
                        "Status",
                        "Originator",
                    ],
                    ast::ObjectKind::Triggers => &[
                        "Trigger",
                        "Event",
                        "Table",
                        "Statement",
                        "Timing",
                        "Created",
                        "sql_mode",
                        "Definer",
                    ],
                    ast::ObjectKind::Procedures | ast::ObjectKind::Functions => &[
                        "Db",
                        "Name",
                        "Type",
                        "Definer",
                        "Modified",
                        "Created",
                        "Security_type",
                        "Comment",
                    ],
                };
                Ok(rows_of(&[head, &tail[..]].concat(), Vec::new()))
            }
            Show::Replication(_) => Ok(rows_of(
                &[
                    "File",
                    "Position",
                    "Binlog_Do_DB",
                    "Binlog_Ignore_DB",
                    "Executed_Gtid_Set",
                ],
                Vec::new(),
            )),
        }
    }

    /// The columns SHOW TABLE STATUS and information_schema.TABLES share, from Engine to
    /// Comment. Row counts and sizes are NULL: innoxide keeps no table statistics yet.
    fn status_tail(&self, t: &SqlTable) -> Result<Vec<Datum>, SqlError> {
        let auto = self.server.catalog.auto_inc_value(t)?;
        let st = self.table_stats(t)?;
        let mut v = vec![s("InnoDB"), n(10), s(t.table.def.row_format.name())];
        let data = st.data_pages * st.page_size;
        // Rows, Avg_row_length, Data_length, Max_data_length (0 for InnoDB), Index_length,
        // Data_free: estimates (innoxide_engine::stats), as InnoDB's.
        v.extend([
            n(st.n_rows),
            n(data.checked_div(st.n_rows).unwrap_or(0)),
            n(data),
            n(0),
            n(st.index_pages * st.page_size),
            n(st.free_pages * st.page_size),
        ]);
        v.push(auto.map_or(Datum::Null, n));
        v.extend(std::iter::repeat_n(Datum::Null, 3));
        v.extend([
            s(t.meta.collation.clone()),
            Datum::Null,
            s(create_options(t)),
            s(t.meta.comment.clone()),
        ]);
        Ok(v)
    }

    /// The table's statistics, computed again when due (Catalog::table_stats).
    fn table_stats(
        &self,
        t: &SqlTable,
    ) -> Result<std::sync::Arc<innoxide_engine::stats::TableStats>, SqlError> {
        let settings = self.server.vars.stats_settings();
        self.server.catalog.table_stats(t, settings, false)
    }

    /// The views the account sees, by database and name.
    fn visible_views(&mut self) -> Vec<std::sync::Arc<SqlView>> {
        let cat = self.server.catalog.clone();
        let mut out = Vec::new();
        for d in cat.databases() {
            for name in cat.view_names(&d.name) {
                if self.sees_table(&d.name, &name) {
                    out.extend(cat.view(&d.name, &name));
                }
            }
        }
        out
    }

    /// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view).
    fn show_create_view(&self, v: &SqlView) -> Output {
        rows_of(
            &[
                "View",
                "Create View",
                "character_set_client",
                "collation_connection",
            ],
            vec![vec![
                s(v.name.clone()),
                s(super::ddl::create_view_text(v)),
                s(v.def.charset_client.clone()),
                s(v.def.collation_connection.clone()),
            ]],
        )
    }

    /// SHOW [FULL] COLUMNS of a view: its columns' types as they were when it was created;
    /// no keys, defaults or extras.
    fn show_view_columns(
        &mut self,
        v: &SqlView,
        full: bool,
        filter: &Option<ShowFilter>,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let mut rows = Vec::new();
        for (c, ty) in v.column_types() {
            let mut r = vec![s(c.name.clone()), s(ty.display())];
            if full {
                r.push(if ty.is_string() {
                    s(ty.collation_name())
                } else {
                    Datum::Null
                });
            }
            r.extend([
                s(if c.nullable { "YES" } else { "NO" }),
                s(""),
                Datum::Null,
                s(""),
            ]);
            if full {
                r.extend([s("select,insert,update,references"), s("")]);
            }
            rows.push(r);
        }
        let cols = columns_header(full);
        let rows = self.filter(&cols, rows, filter, params)?;
        Ok(rows_of(&cols, rows))
    }

    /// The tables the account sees, by database: (database, table name, table).
    fn visible_tables(&mut self) -> Vec<(String, String, std::sync::Arc<SqlTable>)> {
        let cat = self.server.catalog.clone();
        let mut out = Vec::new();
        for d in cat.databases() {
            for name in cat.table_names(&d.name) {
                if !self.sees_table(&d.name, &name) {
                    continue;
                }
                if let Ok(tb) = cat.table(&d.name, &name) {
                    out.push((d.name.clone(), name, tb));
                }
            }
        }
        out
    }

    /// information_schema tables (computed now from the catalog).
    /// The sessions this one may see (all with PROCESS), by id: Id, User, Host, db, Command,
    /// Time, State, Info (its first 100 characters unless `full`), as SHOW PROCESSLIST and
    /// information_schema.PROCESSLIST give them.
    fn processlist(&mut self, full: bool) -> Vec<Vec<Datum>> {
        let mut list: Vec<(u32, std::sync::Arc<super::SessionInfo>)> = self
            .server
            .sessions
            .lock()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        if !self.sees_all_threads() {
            list.retain(|x| x.1.user == self.user);
        }
        list.sort_by_key(|x| x.0);
        list.into_iter()
            .map(|(id, i)| {
                let st = i.state.lock();
                let info = (!st.info.is_empty()).then(|| {
                    if full {
                        st.info.clone()
                    } else {
                        st.info.chars().take(100).collect()
                    }
                });
                vec![
                    n(u64::from(id)),
                    s(i.user.clone()),
                    s(i.host.clone()),
                    opt(st.db.clone()),
                    s(st.command),
                    n(st.since.elapsed().as_secs()),
                    s(""),
                    opt(info),
                ]
            })
            .collect()
    }

    /// The accounts whose grants information_schema's privilege tables show, with their
    /// grants: every account for one that may read the `mysql` schema, else its own.
    fn privilege_holders(
        &mut self,
    ) -> Result<Vec<(String, std::sync::Arc<privs::AccountPrivs>)>, SqlError> {
        let all = self.privs().on_db("mysql") & privs::SELECT != 0;
        let cat = self.server.catalog.clone();
        let mut out = Vec::new();
        for u in cat.users()? {
            if all || (u.user == self.user && u.host == self.account_host) {
                let p = cat.privileges(&u.user, &u.host);
                out.push((format!("'{}'@'{}'", u.user, u.host), p));
            }
        }
        Ok(out)
    }

    pub(crate) fn information_schema(
        &mut self,
        table: &str,
    ) -> Result<(Vec<Column>, Vec<Vec<Datum>>), SqlError> {
        let cat = self.server.catalog.clone();
        let t = table.to_ascii_uppercase();
        let (cols, rows): (Vec<&str>, Vec<Vec<Datum>>) = match t.as_str() {
            "SCHEMATA" => (
                vec![
                    "CATALOG_NAME",
                    "SCHEMA_NAME",
                    "DEFAULT_CHARACTER_SET_NAME",
                    "DEFAULT_COLLATION_NAME",
                    "SQL_PATH",
                    "DEFAULT_ENCRYPTION",
                ],
                std::iter::once((
                    "information_schema".to_string(),
                    "utf8mb3".to_string(),
                    "utf8mb3_general_ci".to_string(),
                ))
                .chain(std::iter::once((
                    "performance_schema".to_string(),
                    "utf8mb4".to_string(),
                    "utf8mb4_0900_ai_ci".to_string(),
                )))
                .chain(
                    cat.databases()
                        .into_iter()
                        .filter(|d| self.sees_db(&d.name))
                        .map(|d| (d.name, d.charset, d.collation)),
                )
                .map(|(a, b, c)| vec![s("def"), s(a), s(b), s(c), Datum::Null, s("NO")])
                .collect(),
            ),
            "TABLES" => {
                let mut rows = Vec::new();
                for (db, name, tb) in self.visible_tables() {
                    let mut r = vec![s("def"), s(db), s(name), s("BASE TABLE")];
                    r.extend(self.status_tail(&tb)?);
                    rows.push(r);
                }
                for v in self.visible_views() {
                    let mut r = vec![s("def"), s(v.db.clone()), s(v.name.clone()), s("VIEW")];
                    r.extend(view_status_tail());
                    rows.push(r);
                }
                (
                    vec![
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "TABLE_TYPE",
                        "ENGINE",
                        "VERSION",
                        "ROW_FORMAT",
                        "TABLE_ROWS",
                        "AVG_ROW_LENGTH",
                        "DATA_LENGTH",
                        "MAX_DATA_LENGTH",
                        "INDEX_LENGTH",
                        "DATA_FREE",
                        "AUTO_INCREMENT",
                        "CREATE_TIME",
                        "UPDATE_TIME",
                        "CHECK_TIME",
                        "TABLE_COLLATION",
                        "CHECKSUM",
                        "CREATE_OPTIONS",
                        "TABLE_COMMENT",
                    ],
                    rows,
                )
            }
            // No triggers or stored routines exist (CREATE TRIGGER, PROCEDURE and FUNCTION are
            // not supported): the tables are there, empty, with MySQL's columns.
            "TRIGGERS" => (
                vec![
                    "TRIGGER_CATALOG",
                    "TRIGGER_SCHEMA",
                    "TRIGGER_NAME",
                    "EVENT_MANIPULATION",
                    "EVENT_OBJECT_CATALOG",
                    "EVENT_OBJECT_SCHEMA",
                    "EVENT_OBJECT_TABLE",
                    "ACTION_ORDER",
                    "ACTION_CONDITION",
                    "ACTION_STATEMENT",
                    "ACTION_ORIENTATION",
                    "ACTION_TIMING",
                    "ACTION_REFERENCE_OLD_TABLE",
                    "ACTION_REFERENCE_NEW_TABLE",
                    "ACTION_REFERENCE_OLD_ROW",
                    "ACTION_REFERENCE_NEW_ROW",
                    "CREATED",
                    "SQL_MODE",
                    "DEFINER",
                    "CHARACTER_SET_CLIENT",
                    "COLLATION_CONNECTION",
                    "DATABASE_COLLATION",
                ],
                Vec::new(),
            ),
            "COLUMN_PRIVILEGES" | "TABLE_PRIVILEGES" => {
                let columns = t == "COLUMN_PRIVILEGES";
                let mut rows = Vec::new();
                for (grantee, p) in self.privilege_holders()? {
                    for ((db, tb), bits) in &p.tables {
                        if columns {
                            continue;
                        }
                        let grantable = s(if bits & privs::GRANT_OPTION != 0 {
                            "YES"
                        } else {
                            "NO"
                        });
                        for name in privs::names_of(*bits) {
                            let head = [s(grantee.clone()), s("def"), s(db.clone()), s(tb.clone())];
                            rows.push(
                                head.into_iter()
                                    .chain([s(name), grantable.clone()])
                                    .collect(),
                            );
                        }
                    }
                    for ((db, tb), cols) in p.columns.iter().filter(|_| columns) {
                        let on = p
                            .tables
                            .get(&(db.clone(), tb.clone()))
                            .copied()
                            .unwrap_or(0);
                        let grantable = s(if on & privs::GRANT_OPTION != 0 {
                            "YES"
                        } else {
                            "NO"
                        });
                        for (c, bits) in cols {
                            for name in privs::names_of(*bits) {
                                rows.push(vec![
                                    s(grantee.clone()),
                                    s("def"),
                                    s(db.clone()),
                                    s(tb.clone()),
                                    s(c.clone()),
                                    s(name),
                                    grantable.clone(),
                                ]);
                            }
                        }
                    }
                }
                let mut names = vec!["GRANTEE", "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"];
                if columns {
                    names.push("COLUMN_NAME");
                }
                names.extend(["PRIVILEGE_TYPE", "IS_GRANTABLE"]);
                (names, rows)
            }
            "VIEWS" => (
                vec![
                    "TABLE_CATALOG",
                    "TABLE_SCHEMA",
                    "TABLE_NAME",
                    "VIEW_DEFINITION",
                    "CHECK_OPTION",
                    "IS_UPDATABLE",
                    "DEFINER",
                    "SECURITY_TYPE",
                    "CHARACTER_SET_CLIENT",
                    "COLLATION_CONNECTION",
                ],
                self.visible_views()
                    .into_iter()
                    .map(|v| {
                        let d = &v.def;
                        vec![
                            s("def"),
                            s(v.db.clone()),
                            s(v.name.clone()),
                            s(d.text.clone()),
                            s(d.check_option.as_deref().unwrap_or("NONE")),
                            s(
                                if d.algorithm != "TEMPTABLE"
                                    && v.query.as_ref().is_some_and(super::merge::single_table)
                                {
                                    "YES"
                                } else {
                                    "NO"
                                },
                            ),
                            s(format!("{}@{}", d.definer_user, d.definer_host)),
                            s(if d.invoker { "INVOKER" } else { "DEFINER" }),
                            s(d.charset_client.clone()),
                            s(d.collation_connection.clone()),
                        ]
                    })
                    .collect(),
            ),
            "ROUTINES" => (
                vec![
                    "SPECIFIC_NAME",
                    "ROUTINE_CATALOG",
                    "ROUTINE_SCHEMA",
                    "ROUTINE_NAME",
                    "ROUTINE_TYPE",
                    "DATA_TYPE",
                    "CHARACTER_MAXIMUM_LENGTH",
                    "CHARACTER_OCTET_LENGTH",
                    "NUMERIC_PRECISION",
                    "NUMERIC_SCALE",
                    "DATETIME_PRECISION",
                    "CHARACTER_SET_NAME",
                    "COLLATION_NAME",
                    "DTD_IDENTIFIER",
                    "ROUTINE_BODY",
                    "ROUTINE_DEFINITION",
                    "EXTERNAL_NAME",
                    "EXTERNAL_LANGUAGE",
                    "PARAMETER_STYLE",
                    "IS_DETERMINISTIC",
                    "SQL_DATA_ACCESS",
                    "SQL_PATH",
                    "SECURITY_TYPE",
                    "CREATED",
                    "LAST_ALTERED",
                    "SQL_MODE",
                    "ROUTINE_COMMENT",
                    "DEFINER",
                    "CHARACTER_SET_CLIENT",
                    "COLLATION_CONNECTION",
                    "DATABASE_COLLATION",
                ],
                Vec::new(),
            ),
            // One row per table: no table is partitioned.
            "PARTITIONS" => (
                [
                    &[
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "PARTITION_NAME",
                        "SUBPARTITION_NAME",
                        "PARTITION_ORDINAL_POSITION",
                        "SUBPARTITION_ORDINAL_POSITION",
                        "PARTITION_METHOD",
                        "SUBPARTITION_METHOD",
                        "PARTITION_EXPRESSION",
                        "SUBPARTITION_EXPRESSION",
                        "PARTITION_DESCRIPTION",
                    ][..],
                    &STATS_COLUMNS,
                    &["PARTITION_COMMENT", "NODEGROUP", "TABLESPACE_NAME"],
                ]
                .concat(),
                self.visible_tables()
                    .into_iter()
                    .map(|(db, name, _)| {
                        let mut r = vec![s("def"), s(db), s(name)];
                        r.extend(std::iter::repeat_n(Datum::Null, 19));
                        r.extend([s(""), Datum::Null, Datum::Null]);
                        r
                    })
                    .collect(),
            ),
            // The tablespace file of each table (file per table).
            "FILES" => (
                [
                    &[
                        "FILE_ID",
                        "FILE_NAME",
                        "FILE_TYPE",
                        "TABLESPACE_NAME",
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "LOGFILE_GROUP_NAME",
                        "LOGFILE_GROUP_NUMBER",
                        "ENGINE",
                        "FULLTEXT_KEYS",
                        "DELETED_ROWS",
                        "UPDATE_COUNT",
                        "FREE_EXTENTS",
                        "TOTAL_EXTENTS",
                        "EXTENT_SIZE",
                        "INITIAL_SIZE",
                        "MAXIMUM_SIZE",
                        "AUTOEXTEND_SIZE",
                        "CREATION_TIME",
                        "LAST_UPDATE_TIME",
                        "LAST_ACCESS_TIME",
                        "RECOVER_TIME",
                        "TRANSACTION_COUNTER",
                        "VERSION",
                        "ROW_FORMAT",
                    ][..],
                    &STATS_COLUMNS,
                    &["STATUS", "EXTRA"],
                ]
                .concat(),
                self.visible_tables()
                    .into_iter()
                    .map(|(db, name, tb)| {
                        let mut r = vec![
                            n(u64::from(tb.table.space)),
                            s(format!("./{db}/{name}.ibd")),
                            s("TABLESPACE"),
                            s(format!("{db}/{name}")),
                            s(""),
                        ];
                        r.extend(std::iter::repeat_n(Datum::Null, 4));
                        r.push(s("InnoDB"));
                        r.extend(std::iter::repeat_n(Datum::Null, 5));
                        r.push(n(1 << 20));
                        r.extend(std::iter::repeat_n(Datum::Null, 20));
                        r.extend([s("NORMAL"), Datum::Null]);
                        r
                    })
                    .collect(),
            ),
            "COLUMNS" => {
                let mut rows = Vec::new();
                for d in cat.databases() {
                    for name in cat.table_names(&d.name) {
                        if !self.sees_table(&d.name, &name) {
                            continue;
                        }
                        let Ok(tb) = cat.table(&d.name, &name) else {
                            continue;
                        };
                        for (pos, (i, c)) in tb.visible().enumerate() {
                            if !self.sees_column(&d.name, &name, &c.name) {
                                continue;
                            }
                            let extra = extra_of(&c.meta);
                            let mut row = i_s_column(
                                [&d.name, &name, &c.name],
                                pos,
                                &c.ty,
                                c.nullable,
                                default_text(&c.meta.default, &c.ty),
                                [key_flag(&tb, i), extra, &c.meta.comment],
                            );
                            if let (Some(g), Some(last)) = (&c.meta.generated, row.last_mut()) {
                                *last = s(written(&g.text));
                            }
                            rows.push(row);
                        }
                    }
                }
                for v in self.visible_views() {
                    for (pos, (c, ty)) in v.column_types().enumerate() {
                        rows.push(i_s_column(
                            [&v.db, &v.name, &c.name],
                            pos,
                            &ty,
                            c.nullable,
                            Datum::Null,
                            ["", "", ""],
                        ));
                    }
                }
                (
                    vec![
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "COLUMN_NAME",
                        "ORDINAL_POSITION",
                        "COLUMN_DEFAULT",
                        "IS_NULLABLE",
                        "DATA_TYPE",
                        "CHARACTER_MAXIMUM_LENGTH",
                        "CHARACTER_OCTET_LENGTH",
                        "NUMERIC_PRECISION",
                        "NUMERIC_SCALE",
                        "DATETIME_PRECISION",
                        "CHARACTER_SET_NAME",
                        "COLLATION_NAME",
                        "COLUMN_TYPE",
                        "COLUMN_KEY",
                        "EXTRA",
                        "PRIVILEGES",
                        "COLUMN_COMMENT",
                        "GENERATION_EXPRESSION",
                    ],
                    rows,
                )
            }
            "STATISTICS" => {
                let mut rows = Vec::new();
                for d in cat.databases() {
                    for name in cat.table_names(&d.name) {
                        if !self.sees_table(&d.name, &name) {
                            continue;
                        }
                        let Ok(tb) = cat.table(&d.name, &name) else {
                            continue;
                        };
                        let st = self.table_stats(&tb)?;
                        for r in index_rows(&tb, Some(&st)) {
                            let mut v = vec![
                                s("def"),
                                s(d.name.clone()),
                                s(name.clone()),
                                n(u64::from(!r.unique)),
                                s(d.name.clone()),
                                s(r.name.clone()),
                            ];
                            v.extend(r.tail());
                            rows.push(v);
                        }
                    }
                }
                (
                    vec![
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "NON_UNIQUE",
                        "INDEX_SCHEMA",
                        "INDEX_NAME",
                        "SEQ_IN_INDEX",
                        "COLUMN_NAME",
                        "COLLATION",
                        "CARDINALITY",
                        "SUB_PART",
                        "PACKED",
                        "NULLABLE",
                        "INDEX_TYPE",
                        "COMMENT",
                        "INDEX_COMMENT",
                        "IS_VISIBLE",
                        "EXPRESSION",
                    ],
                    rows,
                )
            }
            "REFERENTIAL_CONSTRAINTS" => {
                let mut rows = Vec::new();
                for (db, name, tb) in self.visible_tables() {
                    for f in &tb.meta.foreign_keys {
                        let unique = cat
                            .table(&f.parent_db, &f.parent_table)
                            .map(|p| super::fk::parent_index_name(&p, &f.parent_columns))
                            .unwrap_or_default();
                        rows.push(vec![
                            s("def"),
                            s(db.clone()),
                            s(f.name.clone()),
                            s("def"),
                            s(f.parent_db.clone()),
                            s(unique),
                            s("NONE"),
                            s(f.on_update.clone()),
                            s(f.on_delete.clone()),
                            s(name.clone()),
                            s(f.parent_table.clone()),
                        ]);
                    }
                }
                (
                    vec![
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "UNIQUE_CONSTRAINT_CATALOG",
                        "UNIQUE_CONSTRAINT_SCHEMA",
                        "UNIQUE_CONSTRAINT_NAME",
                        "MATCH_OPTION",
                        "UPDATE_RULE",
                        "DELETE_RULE",
                        "TABLE_NAME",
                        "REFERENCED_TABLE_NAME",
                    ],
                    rows,
                )
            }
            // The columns of each PRIMARY KEY, UNIQUE key and FOREIGN KEY.
            "KEY_COLUMN_USAGE" => {
                let mut rows = Vec::new();
                for (db, name, tb) in self.visible_tables() {
                    for r in index_rows(&tb, None).iter().filter(|r| r.unique) {
                        rows.push(vec![
                            s("def"),
                            s(db.clone()),
                            s(r.name.clone()),
                            s("def"),
                            s(db.clone()),
                            s(name.clone()),
                            s(r.column.clone()),
                            n(r.seq as u64),
                            Datum::Null,
                            Datum::Null,
                            Datum::Null,
                            Datum::Null,
                        ]);
                    }
                    for f in &tb.meta.foreign_keys {
                        for (i, (c, p)) in f.columns.iter().zip(&f.parent_columns).enumerate() {
                            rows.push(vec![
                                s("def"),
                                s(db.clone()),
                                s(f.name.clone()),
                                s("def"),
                                s(db.clone()),
                                s(name.clone()),
                                s(c.clone()),
                                n(i as u64 + 1),
                                n(i as u64 + 1),
                                s(f.parent_db.clone()),
                                s(f.parent_table.clone()),
                                s(p.clone()),
                            ]);
                        }
                    }
                }
                (
                    vec![
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "COLUMN_NAME",
                        "ORDINAL_POSITION",
                        "POSITION_IN_UNIQUE_CONSTRAINT",
                        "REFERENCED_TABLE_SCHEMA",
                        "REFERENCED_TABLE_NAME",
                        "REFERENCED_COLUMN_NAME",
                    ],
                    rows,
                )
            }
            "CHECK_CONSTRAINTS" => (
                vec![
                    "CONSTRAINT_CATALOG",
                    "CONSTRAINT_SCHEMA",
                    "CONSTRAINT_NAME",
                    "CHECK_CLAUSE",
                ],
                self.visible_tables()
                    .into_iter()
                    .flat_map(|(db, _, tb)| {
                        tb.meta
                            .checks
                            .iter()
                            .map(|c| {
                                vec![
                                    s("def"),
                                    s(db.clone()),
                                    s(c.name.clone()),
                                    s(written(&c.text)),
                                ]
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect(),
            ),
            "TABLE_CONSTRAINTS" => {
                let mut rows = Vec::new();
                for d in cat.databases() {
                    for name in cat.table_names(&d.name) {
                        if !self.sees_table(&d.name, &name) {
                            continue;
                        }
                        let Ok(tb) = cat.table(&d.name, &name) else {
                            continue;
                        };
                        for r in index_rows(&tb, None)
                            .iter()
                            .filter(|r| r.unique && r.seq == 1)
                        {
                            let kind = if r.name == "PRIMARY" {
                                "PRIMARY KEY"
                            } else {
                                "UNIQUE"
                            };
                            rows.push(vec![
                                s("def"),
                                s(d.name.clone()),
                                s(r.name.clone()),
                                s(d.name.clone()),
                                s(name.clone()),
                                s(kind),
                                s("YES"),
                            ]);
                        }
                        for c in &tb.meta.checks {
                            rows.push(vec![
                                s("def"),
                                s(d.name.clone()),
                                s(c.name.clone()),
                                s(d.name.clone()),
                                s(name.clone()),
                                s("CHECK"),
                                s(if c.enforced { "YES" } else { "NO" }),
                            ]);
                        }
                        for f in &tb.meta.foreign_keys {
                            rows.push(vec![
                                s("def"),
                                s(d.name.clone()),
                                s(f.name.clone()),
                                s(d.name.clone()),
                                s(name.clone()),
                                s("FOREIGN KEY"),
                                s("YES"),
                            ]);
                        }
                    }
                }
                (
                    vec![
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "CONSTRAINT_TYPE",
                        "ENFORCED",
                    ],
                    rows,
                )
            }
            "PROCESSLIST" => (
                vec![
                    "ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO",
                ],
                self.processlist(true),
            ),
            "ENGINES" => (
                vec![
                    "ENGINE",
                    "SUPPORT",
                    "COMMENT",
                    "TRANSACTIONS",
                    "XA",
                    "SAVEPOINTS",
                ],
                vec![vec![
                    s("InnoDB"),
                    s("DEFAULT"),
                    s("Supports transactions, row-level locking, and foreign keys"),
                    s("YES"),
                    s("YES"),
                    s("YES"),
                ]],
            ),
            "INNODB_METRICS" => {
                let engine = cat.engine.inner();
                let rows = innoxide_engine::monitor::metrics(engine)
                    .into_iter()
                    .map(|m| {
                        vec![
                            s(m.name),
                            s(m.subsystem),
                            n(m.count),
                            s("enabled"),
                            s(m.kind),
                            s(m.comment),
                        ]
                    })
                    .collect();
                (
                    vec!["NAME", "SUBSYSTEM", "COUNT", "STATUS", "TYPE", "COMMENT"],
                    rows,
                )
            }
            "INNODB_BUFFER_POOL_STATS" => {
                let engine = cat.engine.inner();
                let rows = innoxide_engine::monitor::pool_stats(engine)
                    .into_iter()
                    .map(|p| {
                        let mut r = vec![
                            n(p.pool_id),
                            n(p.pool_size),
                            n(p.free_buffers),
                            n(p.database_pages),
                            n(p.old_database_pages),
                            n(p.modified_database_pages),
                        ];
                        match p.events {
                            Some(e) => r.extend(e.map(n)),
                            None => r.extend(std::iter::repeat_n(Datum::Null, 6)),
                        }
                        r
                    })
                    .collect();
                (POOL_STATS_COLUMNS.to_vec(), rows)
            }
            "INNODB_TRX" => self.innodb_trx(),
            // No compressed tables: InnoDB's rows for each compressed page size, all zero.
            "INNODB_CMP" | "INNODB_CMP_RESET" => (
                CMP_COLUMNS.to_vec(),
                [1024u64, 2048, 4096, 8192, 16384]
                    .iter()
                    .map(|&p| vec![n(p), n(0), n(0), n(0), n(0), n(0)])
                    .collect(),
            ),
            "INNODB_CMPMEM" | "INNODB_CMPMEM_RESET" => {
                let pools = cat.engine.inner().bp.instances().len() as u64;
                let mut rows = Vec::new();
                for pool in 0..pools {
                    for p in [1024u64, 2048, 4096, 8192, 16384] {
                        rows.push(vec![n(p), n(pool), n(0), n(0), n(0), n(0)]);
                    }
                }
                (CMPMEM_COLUMNS.to_vec(), rows)
            }
            _ => {
                return Err(SqlError::new(
                    ER_NO_SUCH_TABLE,
                    &[&"information_schema", &table],
                ))
            }
        };
        let cols = cols
            .iter()
            .map(|c| {
                let numeric = [
                    NUMERIC_IS_COLUMNS,
                    POOL_STATS_COLUMNS,
                    CMP_COLUMNS,
                    CMPMEM_COLUMNS,
                ];
                let trx_text = [
                    "TRX_STATE",
                    "TRX_STARTED",
                    "TRX_REQUESTED_LOCK_ID",
                    "TRX_WAIT_STARTED",
                    "TRX_QUERY",
                    "TRX_OPERATION_STATE",
                    "TRX_ISOLATION_LEVEL",
                    "TRX_LAST_FOREIGN_KEY_ERROR",
                ];
                let trx_number = c.starts_with("TRX_") && !trx_text.contains(c);
                if trx_number || numeric.iter().any(|l| l.contains(c)) {
                    Column::int(c)
                } else {
                    Column::text(c)
                }
            })
            .collect();
        Ok((cols, rows))
    }

    /// A table of information_schema or performance_schema (`db` is one of them; the names
    /// are `system_tables`').
    pub(crate) fn system_schema_table(
        &mut self,
        db: &str,
        table: &str,
    ) -> Result<(Vec<Column>, Vec<Vec<Datum>>), SqlError> {
        if db.eq_ignore_ascii_case("performance_schema") {
            self.performance_schema(table)
        } else {
            self.information_schema(table)
        }
    }

    /// performance_schema tables (computed now from the engine):
    /// events_waits_summary_global_by_event_name, one row per synchronization object
    /// (innoxide_engine::sync_stats), times in picoseconds as MySQL gives them; data_locks and
    /// data_lock_waits (`data_locks`). No rows when the server was started with
    /// performance_schema=OFF, as in MySQL.
    fn performance_schema(
        &mut self,
        table: &str,
    ) -> Result<(Vec<Column>, Vec<Vec<Datum>>), SqlError> {
        let on = self
            .server
            .vars
            .get(&self.vars, "performance_schema", VarScope::Global)?
            == VarValue::Bool(true);
        let lower = table.to_ascii_lowercase();
        if lower == "data_locks" || lower == "data_lock_waits" {
            return Ok(self.data_locks(lower == "data_locks", on));
        }
        if lower != "events_waits_summary_global_by_event_name" {
            return Err(SqlError::new(
                ER_NO_SUCH_TABLE,
                &[&"performance_schema", &table],
            ));
        }
        let ps = |ns: u64| n(ns.saturating_mul(1000));
        let inner = self.server.catalog.engine.inner();
        let rows = innoxide_engine::sync_stats::wait_rows(inner)
            .into_iter()
            .filter(|_| on)
            .map(|r| {
                let w = r.waits;
                vec![
                    s(r.event),
                    n(w.count),
                    ps(w.sum_ns),
                    ps(w.min_ns),
                    ps(w.avg_ns()),
                    ps(w.max_ns),
                ]
            })
            .collect();
        let mut cols = vec![Column::text("EVENT_NAME")];
        for c in [
            "COUNT_STAR",
            "SUM_TIMER_WAIT",
            "MIN_TIMER_WAIT",
            "AVG_TIMER_WAIT",
            "MAX_TIMER_WAIT",
        ] {
            cols.push(Column::int(c));
        }
        Ok((cols, rows))
    }

    /// information_schema.INNODB_TRX: the active transactions with MySQL 8.0's columns, the
    /// connection running each (TRX_MYSQL_THREAD_ID, its statement as TRX_QUERY), the lock
    /// it waits for (TRX_REQUESTED_LOCK_ID, a data_locks ENGINE_LOCK_ID) and since when, its
    /// weight, lock structures, tables and rows locked (counted from its lock requests) and
    /// rows modified (undo records). TRX_TABLES_IN_USE is the tables it has locked while its
    /// connection runs a statement (the engine does not know which of them the statement
    /// uses). Parts this engine has not (adaptive hash index, concurrency tickets) read as
    /// InnoDB shows them unused.
    fn innodb_trx(&self) -> (Vec<&'static str>, Vec<Vec<Datum>>) {
        let inner = self.server.catalog.engine.inner();
        let trxs = innoxide_engine::monitor::active_transactions(inner);
        let (locks, _) = innoxide_engine::monitor::data_locks(inner);
        let summaries = innoxide_engine::monitor::lock_summaries(&locks);
        let sessions = self.server.sessions.lock().clone();
        let time = |secs: f64| {
            innoxide_sql::types::DateTime::from_micros((secs * 1e6) as i64, 0)
                .map_or(Datum::Null, |d| s(d.to_string()))
        };
        let rows = trxs
            .iter()
            .map(|t| {
                let sum = summaries.get(&t.id);
                let requested = sum.and_then(|x| x.waiting).map(|i| locks[i].id.clone());
                let tables = sum.map_or(0, |x| x.tables);
                let rows_locked = sum.map_or(0, |x| x.rows);
                let session = u32::try_from(t.owner)
                    .ok()
                    .and_then(|id| sessions.get(&id).cloned());
                let query = session.as_ref().and_then(|x| {
                    let st = x.state.lock();
                    (!st.info.is_empty()).then(|| st.info.clone())
                });
                let in_use = if query.is_some() { tables } else { 0 };
                let iso = t.isolation.name().replace('-', " ");
                vec![
                    n(t.id),
                    s(if requested.is_some() {
                        "LOCK WAIT"
                    } else {
                        "RUNNING"
                    }),
                    time(t.started),
                    opt(requested),
                    t.wait_started.map_or(Datum::Null, time),
                    n(t.weight),
                    n(t.owner),
                    opt(query),
                    Datum::Null,
                    n(in_use),
                    n(tables),
                    n(t.lock_structs),
                    n(t.lock_structs * innoxide_engine::lock::LOCK_STRUCT_BYTES),
                    n(rows_locked),
                    n(t.rows_modified),
                    n(0),
                    s(iso),
                    n(1),
                    n(1),
                    Datum::Null,
                    n(0),
                    n(0),
                    n(0),
                    n(0),
                    t.wait_started.map_or(Datum::Null, |_| n(t.weight)),
                ]
            })
            .collect();
        (TRX_COLUMNS.to_vec(), rows)
    }

    /// performance_schema.data_locks (`locks`) or data_lock_waits: the engine's lock requests
    /// now (innoxide_engine::monitor::data_locks), in MySQL 8.0's columns. LOCK_DATA shows
    /// a key's values as MySQL does (numbers bare, others quoted, `supremum pseudo-record`,
    /// the hidden row id in hex); a string under a case- or accent-insensitive collation
    /// shows as the lock knows it, its collation's weights (`'ABC'` for 'abc'). THREAD_ID
    /// and EVENT_ID are NULL (no performance_schema threads or events here).
    fn data_locks(&self, locks: bool, on: bool) -> (Vec<Column>, Vec<Vec<Datum>>) {
        let inner = self.server.catalog.engine.inner();
        let (list, waits) = if on {
            innoxide_engine::monitor::data_locks(inner)
        } else {
            Default::default()
        };
        // OBJECT_INSTANCE_BEGIN: MySQL's is the lock's address; here a number derived from
        // ENGINE_LOCK_ID, the same for the same request.
        let instance = |id: &str| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            id.hash(&mut h);
            n(h.finish() >> 1)
        };
        if !locks {
            let cols = [
                "ENGINE",
                "REQUESTING_ENGINE_LOCK_ID",
                "REQUESTING_ENGINE_TRANSACTION_ID",
                "REQUESTING_THREAD_ID",
                "REQUESTING_EVENT_ID",
                "REQUESTING_OBJECT_INSTANCE_BEGIN",
                "BLOCKING_ENGINE_LOCK_ID",
                "BLOCKING_ENGINE_TRANSACTION_ID",
                "BLOCKING_THREAD_ID",
                "BLOCKING_EVENT_ID",
                "BLOCKING_OBJECT_INSTANCE_BEGIN",
            ];
            let rows = waits
                .iter()
                .map(|&(w, b)| {
                    let (w, b) = (&list[w], &list[b]);
                    vec![
                        s("INNODB"),
                        s(&w.id),
                        n(w.trx),
                        Datum::Null,
                        Datum::Null,
                        instance(&w.id),
                        s(&b.id),
                        n(b.trx),
                        Datum::Null,
                        Datum::Null,
                        instance(&b.id),
                    ]
                })
                .collect();
            let cols = cols
                .iter()
                .map(|&c| {
                    if c == "ENGINE" || c.ends_with("LOCK_ID") {
                        Column::text(c)
                    } else {
                        Column::int(c)
                    }
                })
                .collect();
            return (cols, rows);
        }
        let cat = &self.server.catalog;
        let rows = list
            .iter()
            .map(|l| {
                let full = l.table.as_ref().map(|t| t.name.clone());
                let (db, name) = full
                    .as_deref()
                    .and_then(|f| f.split_once('/'))
                    .map_or((Datum::Null, Datum::Null), |(d, t)| (s(d), s(t)));
                let sql = full
                    .as_deref()
                    .and_then(|f| f.split_once('/'))
                    .and_then(|(d, t)| cat.table(d, t).ok());
                let data = if l.is_table() {
                    Datum::Null
                } else if l.supremum {
                    s("supremum pseudo-record")
                } else {
                    let parts: Vec<String> = l
                        .fields
                        .iter()
                        .flatten()
                        .map(|f| lock_data_field(sql.as_deref(), f))
                        .collect();
                    s(parts.join(", "))
                };
                vec![
                    s("INNODB"),
                    s(&l.id),
                    n(l.trx),
                    Datum::Null,
                    Datum::Null,
                    db,
                    name,
                    Datum::Null,
                    Datum::Null,
                    // A table without a primary key: its clustered index on the hidden
                    // DB_ROW_ID column has InnoDB's name for the generated one.
                    opt(l.index.clone().map(|i| {
                        if i == "PRIMARY" && sql.as_ref().is_some_and(|t| t.has_hidden_pk()) {
                            "GEN_CLUST_INDEX".to_string()
                        } else {
                            i
                        }
                    })),
                    instance(&l.id),
                    s(if l.is_table() { "TABLE" } else { "RECORD" }),
                    s(&l.mode),
                    s(if l.waiting { "WAITING" } else { "GRANTED" }),
                    data,
                ]
            })
            .collect();
        let cols = [
            "ENGINE",
            "ENGINE_LOCK_ID",
            "ENGINE_TRANSACTION_ID",
            "THREAD_ID",
            "EVENT_ID",
            "OBJECT_SCHEMA",
            "OBJECT_NAME",
            "PARTITION_NAME",
            "SUBPARTITION_NAME",
            "INDEX_NAME",
            "OBJECT_INSTANCE_BEGIN",
            "LOCK_TYPE",
            "LOCK_MODE",
            "LOCK_STATUS",
            "LOCK_DATA",
        ]
        .iter()
        .map(|&c| {
            if matches!(
                c,
                "ENGINE_TRANSACTION_ID" | "THREAD_ID" | "EVENT_ID" | "OBJECT_INSTANCE_BEGIN"
            ) {
                Column::int(c)
            } else {
                Column::text(c)
            }
        })
        .collect();
        (cols, rows)
    }

    /// EXPLAIN: one row per table with the access path the planner chose.
    ///
    /// The Extra column's notes come from `How`.
    pub(crate) fn explain(
        &mut self,
        stmt: &Statement,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let mut rows = Vec::new();
        // The outer SELECT is PRIMARY when it reads a derived table or CTE.
        let mut select_type = "SIMPLE";
        // Every table of the SELECT shown has id 1 (MySQL numbers SELECTs, not tables).
        // key_len, ref and filtered (select.rs `explain_columns`).
        type Cols = (Option<u64>, Option<String>, f64);
        let row = |name: &str,
                   t: &SqlTable,
                   access: &Access,
                   how: How,
                   est: u64,
                   st: &str,
                   cols: Cols| {
            let How {
                filesort,
                ordered,
                per_row,
                covering,
                conditions,
                temporary,
                hash_join,
                loose,
            } = how;
            let (mut ty, mut key, possible) = access.describe(t);
            if per_row && ty == "const" {
                // One primary-key row per row of the tables before.
                ty = "eq_ref".into();
            }
            if ordered && access.is_full_scan() {
                // The whole clustered index, read for its order.
                (ty, key) = ("index".into(), "PRIMARY".into());
            }
            let notes = [
                // Conditions left to test on the rows read (a residual one lowers filtered).
                (
                    (ty == "ALL" || loose) && conditions || cols.2 < 100.0,
                    "Using where",
                ),
                (covering, "Using index"),
                (loose, "Using index for group-by"),
                (hash_join, "Using join buffer (hash join)"),
                (temporary, "Using temporary"),
                (filesort, "Using filesort"),
            ];
            let extra: Vec<&str> = notes.iter().filter(|n| n.0).map(|n| n.1).collect();
            let extra = extra.join("; ");
            vec![
                n(1),
                s(st),
                s(name),
                Datum::Null,
                s(ty),
                opt(possible),
                if key.is_empty() { Datum::Null } else { s(key) },
                cols.0.map_or(Datum::Null, n),
                opt(cols.1),
                n(est),
                s(format!("{:.2}", cols.2)),
                s(extra),
            ]
        };
        match stmt {
            // A SELECT is shown as the planner runs it.
            Statement::Select(q) if q.unions.is_empty() => {
                let plan = self.compile_select(q, params)?;
                if plan.sources_len() == 0 {
                    let note = plan.no_table_note(params, self.vars.sql_mode())?;
                    return Ok(explain_output(vec![note_row(note)]));
                }
                let paths = self.explain_paths(&plan, params)?;
                if matches!(paths.first(), Some(p) if matches!(&p.access, Access::Points(k) if k.is_empty()))
                {
                    return Ok(explain_output(vec![note_row("Impossible WHERE")]));
                }
                // MIN/MAX read from the ends of index ranges, as MySQL does while optimizing
                // (of a correlated subquery: per enclosing row, shown as the path it takes).
                let correlated = self.frames.last().is_some_and(|f| f.base.is_some());
                if let Some(found) = self.min_max_rows(&plan, params)?.filter(|_| !correlated) {
                    return Ok(explain_output(vec![note_row(if !found.matched {
                        "No matching min/max row"
                    } else {
                        "Select tables optimized away"
                    })]));
                }
                let held = Self::explain_held(&plan);
                // Subqueries of the select list, then of WHERE (as run: an EXISTS may have
                // become an IN, semijoin.rs), HAVING and ORDER BY.
                let mut in_items = Vec::new();
                for it in &q.items {
                    if let ast::SelectItem::Expr { expr, .. } = it {
                        subqueries_in(expr, &mut in_items);
                    }
                }
                let mut in_rest = Vec::new();
                for e in plan.where_conds().iter().chain(&q.having) {
                    subqueries_in(e, &mut in_rest);
                }
                for o in &q.order_by {
                    subqueries_in(&o.expr, &mut in_rest);
                }
                if held.iter().any(|h| h.1.starts_with("<derived"))
                    || !in_items.is_empty()
                    || !in_rest.is_empty()
                {
                    select_type = "PRIMARY";
                }
                let mut shown: Vec<(usize, Vec<Datum>)> = Vec::new();
                // SELECTs are numbered as MySQL numbers them, in the order the query's text
                // has them (depth first: a derived table's own derived tables before the
                // next one), each shown after the outer SELECT's rows with select_type
                // SUBQUERY, DEPENDENT SUBQUERY or DERIVED.
                let mut next_id = 2;
                let scope = plan.scope_shared();
                let mut item_rows = Vec::new();
                for sub in &in_items {
                    let r = self.explain_subquery(sub, &scope, params, &mut next_id)?;
                    item_rows.extend(r);
                }
                let mut derived_rows = Vec::new();
                for (si, name, count) in held {
                    let name = match name.starts_with("<derived") {
                        true => {
                            let id = next_id;
                            next_id += 1;
                            let alias = plan.source_name(si).to_string();
                            if let Some(sub) = derived_subquery(&q.from, &alias) {
                                let inner = self
                                    .explain(&Statement::Select(Box::new(sub.clone())), params)?;
                                derived_rows.extend(renumbered(inner, id, "DERIVED", &mut next_id));
                            }
                            format!("<derived{id}>")
                        }
                        false => name,
                    };
                    // A held result is read whole; a JSON_TABLE is made per row (MySQL shows
                    // its estimate of 2). WHERE tests the rows of a lone one.
                    let extra = match count {
                        Some(_) if plan.sources_len() == 1 && plan.has_where() => "Using where",
                        Some(_) => "",
                        None => "Table function: json_table; Using temporary",
                    };
                    let mut r = vec![n(1), s(select_type), s(&name), Datum::Null, s("ALL")];
                    r.extend(std::iter::repeat_n(Datum::Null, 4));
                    r.extend([n(count.unwrap_or(2)), s("100.00"), s(extra)]);
                    shown.push((si, r));
                }
                for p in &paths {
                    let est = self.explain_rows(&p.table, &p.access, p.per_row)?;
                    let r = row(
                        &p.name,
                        &p.table,
                        &p.access,
                        How {
                            filesort: p.filesort,
                            ordered: p.ordered,
                            per_row: p.per_row,
                            covering: p.covering,
                            conditions: p.conditions,
                            temporary: p.temporary,
                            hash_join: p.hash_join,
                            loose: p.loose,
                        },
                        est,
                        select_type,
                        (p.key_len, p.key_ref.clone(), p.filtered),
                    );
                    shown.push((p.source, r));
                }
                let mut rest_rows = Vec::new();
                for sub in &in_rest {
                    let r = self.explain_subquery(sub, &scope, params, &mut next_id)?;
                    rest_rows.extend(r);
                }
                shown.sort_by_key(|(si, _)| *si);
                rows.extend(shown.into_iter().map(|(_, r)| r));
                rows.extend(item_rows);
                rows.extend(derived_rows);
                rows.extend(rest_rows);
                return Ok(explain_output(rows));
            }
            _ => {}
        }
        let (from, selection) = match stmt {
            // A UNION is shown by its first SELECT's tables.
            Statement::Select(q) => (q.from.clone(), q.selection.clone()),
            Statement::Update(u) => (
                vec![ast::TableRef::Table {
                    name: u.table.clone(),
                    alias: u.alias.clone(),
                    hints: u.hints.clone(),
                }],
                u.selection.clone(),
            ),
            Statement::Delete(d) => (
                vec![ast::TableRef::Table {
                    name: d.table.clone(),
                    alias: d.alias.clone(),
                    hints: vec![],
                }],
                d.selection.clone(),
            ),
            // Over a join: the SELECT ... FOR UPDATE that reads it (multi.rs M1).
            Statement::UpdateMulti(u) => {
                let q = super::multi::join_select(
                    vec![ast::SelectItem::Wildcard],
                    &u.from,
                    &u.selection,
                    &[],
                );
                return self.explain(&Statement::Select(Box::new(q)), params);
            }
            Statement::DeleteMulti(d) => {
                let q = super::multi::join_select(
                    vec![ast::SelectItem::Wildcard],
                    &d.from,
                    &d.selection,
                    &[],
                );
                return self.explain(&Statement::Select(Box::new(q)), params);
            }
            // INSERT / REPLACE: a row naming the table written (MySQL's select_type INSERT or
            // REPLACE, nothing read from it), then the rows of the SELECT it reads, if any.
            Statement::Insert(ins) => {
                let db = self.db_of(&ins.table)?;
                let t = self.open_table(&db, &ins.table.name)?;
                let mut r = vec![n(1), s(if ins.replace { "REPLACE" } else { "INSERT" })];
                r.push(s(&t.name));
                r.push(Datum::Null);
                r.push(s("ALL"));
                r.extend(std::iter::repeat_n(Datum::Null, 7));
                let mut rows = vec![r];
                if let ast::InsertSource::Select(q) = &ins.source {
                    if let Output::Rows { rows: more, .. } =
                        self.explain(&Statement::Select(q.clone()), params)?
                    {
                        rows.extend(more);
                    }
                }
                return Ok(explain_output(rows));
            }
            _ => {
                return Err(SqlError::new(
                    ER_NOT_SUPPORTED_YET,
                    &[&"EXPLAIN of this statement"],
                ))
            }
        };
        let mut conds = Vec::new();
        if let Some(w) = &selection {
            conjuncts(w, &mut conds);
        }
        let single = from.len() == 1 && matches!(from[0], ast::TableRef::Table { .. });
        let mut tables = Vec::new();
        type Leaf = (ast::ObjectName, String, Vec<ast::IndexHint>);
        fn leaves(t: &ast::TableRef, out: &mut Vec<Leaf>) {
            match t {
                ast::TableRef::Table { name, alias, hints } => out.push((
                    name.clone(),
                    alias.clone().unwrap_or(name.name.clone()),
                    hints.clone(),
                )),
                ast::TableRef::Join { left, right, .. } => {
                    leaves(left, out);
                    leaves(right, out);
                }
                ast::TableRef::Derived { .. }
                | ast::TableRef::Recursive { .. }
                | ast::TableRef::JsonTable(_)
                | ast::TableRef::SetOp { .. } => {}
            }
        }
        for f in &from {
            leaves(f, &mut tables);
        }
        for (name, alias, hints) in &tables {
            let db = self.db_of(name)?;
            let t = self.open_table(&db, &name.name)?;
            let index_use = super::select::IndexUse::resolve(&t, hints, alias)?;
            let needs = super::select::PathNeeds {
                used: None,
                hints: &index_use,
            };
            let access = self.plan_access(&t, alias, single, &conds, params, needs)?;
            if matches!(&access, Access::Points(k) if k.is_empty()) {
                return Ok(explain_output(vec![note_row("Impossible WHERE")]));
            }
            let est = self.explain_rows(&t, &access, false)?;
            let later: Vec<&str> = (tables.iter())
                .skip_while(|(_, a, _)| a != alias)
                .skip(1)
                .map(|(_, a, _)| a.as_str())
                .collect();
            let cols = super::select::explain_columns(
                &t,
                alias,
                single,
                &access,
                &conds,
                false,
                &[],
                &later,
            );
            let mut r = row(
                alias,
                &t,
                &access,
                How {
                    conditions: !conds.is_empty(),
                    ..How::default()
                },
                est,
                select_type,
                cols,
            );
            if let Statement::Update(_) | Statement::Delete(_) = stmt {
                // MySQL's single-table UPDATE and DELETE: select_type names the statement,
                // a key lookup reads a range, and the rows read are tested.
                r[1] = s(if matches!(stmt, Statement::Update(_)) {
                    "UPDATE"
                } else {
                    "DELETE"
                });
                if matches!(&r[4], Datum::Bytes(b) if matches!(&b[..], b"const" | b"eq_ref" | b"ref"))
                {
                    r[4] = s("range");
                }
                if !conds.is_empty() && matches!(&r[11], Datum::Bytes(b) if b.is_empty()) {
                    r[11] = s("Using where");
                }
            }
            rows.push(r);
        }
        Ok(explain_output(rows))
    }

    /// EXPLAIN's rows for subquery `sub` of a SELECT over `scope`, its SELECT numbered
    /// `next` (and those within it after): SUBQUERY when it reads nothing of the enclosing
    /// query, else DEPENDENT SUBQUERY, its paths planned as each run plans them, with sample
    /// values for the enclosing columns it reads (mod.rs `SubCompiled`).
    fn explain_subquery(
        &mut self,
        sub: &ast::Select,
        scope: &Arc<(Vec<ScopeTable>, Vec<usize>)>,
        params: &[Datum],
        next: &mut u64,
    ) -> Result<Vec<Vec<Datum>>, SqlError> {
        let id = *next;
        *next += 1;
        let (refs, deep) = self.outer_reads(sub, scope)?;
        let stmt = Statement::Select(Box::new(sub.clone()));
        let (inner, label) = if refs.is_empty() && !deep {
            (self.explain(&stmt, params)?, "SUBQUERY")
        } else {
            let mut ext = params.to_vec();
            ext.extend(refs.iter().map(|&p| {
                let ty = scope.0.iter().find_map(|st| {
                    let i = p.checked_sub(st.offset)?;
                    st.columns.get(i).map(|c| c.1.clone())
                });
                ty.map_or(Datum::Int(1), |t| super::select::sample_value(&t))
            }));
            let r = self.with_param_frame(scope, params.len(), refs, |s| s.explain(&stmt, &ext));
            (r?, "DEPENDENT SUBQUERY")
        };
        Ok(renumbered(inner, id, label, next))
    }

    /// EXPLAIN's `rows`: the rows an access path reads, from the table's statistics; a
    /// range of a key is estimated by looking its ends up in the index (`range_rows`); a
    /// lookup per row of earlier tables reads rows / distinct values of the key part used.
    pub(crate) fn explain_rows(
        &self,
        t: &SqlTable,
        access: &Access,
        per_row: bool,
    ) -> Result<u64, SqlError> {
        let st = self.table_stats(t)?;
        Ok(match access {
            Access::Points(k) => k.len() as u64,
            Access::Loose(l) => l.groups,
            Access::Range {
                index, from, to, ..
            } => {
                let st_i = match index {
                    None => st.indexes.first(),
                    Some(name) => st.indexes.iter().skip(1).find(|i| &i.name == name),
                };
                let Some(ist) = st_i else {
                    return Ok(st.n_rows);
                };
                let parts = match from {
                    innoxide_engine::KeyBound::Included(v)
                    | innoxide_engine::KeyBound::Excluded(v) => v.len(),
                    innoxide_engine::KeyBound::Unbounded => 0,
                };
                if matches!(
                    (from, to),
                    (
                        innoxide_engine::KeyBound::Unbounded,
                        innoxide_engine::KeyBound::Unbounded
                    )
                ) {
                    st.n_rows
                } else if per_row && parts > 0 {
                    let distinct = ist.n_diff.get(parts - 1).copied().unwrap_or(1).max(1);
                    st.n_rows.div_ceil(distinct).max(1)
                } else {
                    self.server
                        .catalog
                        .engine
                        .estimate_range(&t.table, index.as_deref(), from, to, ist)
                        .map_err(crate::catalog::engine_error)?
                }
            }
        })
    }
}

/// The SELECT of the derived table named `alias` among `from`'s items (joins searched).
fn derived_subquery<'q>(from: &'q [ast::TableRef], alias: &str) -> Option<&'q ast::Select> {
    fn find<'q>(t: &'q ast::TableRef, alias: &str) -> Option<&'q ast::Select> {
        match t {
            ast::TableRef::Derived { subquery, alias: a } if a == alias => Some(subquery),
            ast::TableRef::Join { left, right, .. } => {
                find(left, alias).or_else(|| find(right, alias))
            }
            _ => None,
        }
    }
    from.iter().find_map(|t| find(t, alias))
}

/// The subqueries of `e` (not those within them), in the order written.
fn subqueries_in(e: &ast::Expr, out: &mut Vec<ast::Select>) {
    let mut e = e.clone();
    e.visit_mut(&mut |x| {
        match x {
            ast::Expr::Subquery(q)
            | ast::Expr::Exists { subquery: q, .. }
            | ast::Expr::InSubquery { subquery: q, .. }
            | ast::Expr::Quantified { subquery: q, .. } => out.push((**q).clone()),
            _ => {}
        }
        true
    });
}

/// The rows of a derived table's or a subquery's own EXPLAIN as the outer one shows them: its
/// SELECT (id 1) becomes `id`, of select_type `label`; the SELECTs within it (ids from 2, and
/// their `<derivedN>` names) take the ids from `next` on.
fn renumbered(inner: Output, id: u64, label: &str, next: &mut u64) -> Vec<Vec<Datum>> {
    let Output::Rows { rows, .. } = inner else {
        return Vec::new();
    };
    let base = *next;
    let map = |k: u64| if k <= 1 { id } else { k - 2 + base };
    let mut top = 1;
    let out = rows
        .into_iter()
        .map(|mut r| {
            let k = match &r[0] {
                Datum::UInt(k) => *k,
                Datum::Int(k) => *k as u64,
                _ => 1,
            };
            top = top.max(k);
            r[0] = n(map(k));
            if k <= 1 {
                r[1] = s(label);
            }
            if let Datum::Bytes(t) = &r[2] {
                let t = String::from_utf8_lossy(t);
                if let Some(d) = t.strip_prefix("<derived").and_then(|x| x.strip_suffix('>')) {
                    if let Ok(k) = d.parse::<u64>() {
                        r[2] = s(format!("<derived{}>", map(k)));
                    }
                }
            }
            r
        })
        .collect();
    *next = base + top.saturating_sub(1);
    out
}

/// EXPLAIN's one row for a SELECT that reads no table: its WHERE can match nothing (a key
/// compared with NULL), or its MIN and MAX were read while planning.
fn note_row(extra: &str) -> Vec<Datum> {
    let mut r = vec![n(1), s("SIMPLE")];
    r.extend(std::iter::repeat_n(Datum::Null, 9));
    r.push(s(extra));
    r
}

/// EXPLAIN's result set.
fn explain_output(rows: Vec<Vec<Datum>>) -> Output {
    Output::Rows {
        columns: [
            "id",
            "select_type",
            "table",
            "partitions",
            "type",
            "possible_keys",
            "key",
            "key_len",
            "ref",
            "rows",
            "filtered",
            "Extra",
        ]
        .iter()
        .map(|c| Column::text(c))
        .collect(),
        rows,
    }
}

/// A row of information_schema.COLUMNS: `names` are the database, table and column, `tail`
/// COLUMN_KEY, EXTRA and COLUMN_COMMENT.
fn i_s_column(
    names: [&str; 3],
    pos: usize,
    ty: &SqlType,
    nullable: bool,
    default: Datum,
    tail: [&str; 3],
) -> Vec<Datum> {
    let text = |on: bool, d: Datum| if on { d } else { Datum::Null };
    let string = ty.is_string();
    let mut r = vec![
        s("def"),
        s(names[0]),
        s(names[1]),
        s(names[2]),
        n(pos as u64 + 1),
        default,
        s(if nullable { "YES" } else { "NO" }),
        s(ty.data_type()),
        text(string, n(u64::from(ty.char_length()))),
        text(string, n(u64::from(ty.column_length()))),
    ];
    r.extend(numeric_precision(ty));
    r.extend([
        text(string, s(ty.charset_name())),
        text(string, s(ty.collation_name())),
        s(ty.display()),
        s(tail[0]),
        s(tail[1]),
        s("select,insert,update,references"),
        s(tail[2]),
        s(""),
    ]);
    r
}

/// SHOW TABLE STATUS's columns after Name (and information_schema.TABLES' after
/// TABLE_TYPE) for a view: NULL but the comment, VIEW.
/// SHOW COLUMNS' and information_schema.COLUMNS' Extra of a column.
fn extra_of(m: &crate::catalog::ColumnMeta) -> &'static str {
    match &m.generated {
        Some(g) if g.stored => "STORED GENERATED",
        Some(_) => "VIRTUAL GENERATED",
        None if m.auto_increment => "auto_increment",
        None if m.on_update_now => "DEFAULT_GENERATED on update CURRENT_TIMESTAMP",
        None if matches!(
            m.default,
            Some(crate::catalog::DefaultValue::Now | crate::catalog::DefaultValue::Expr(_))
        ) =>
        {
            "DEFAULT_GENERATED"
        }
        None => "",
    }
}

/// SHOW [FULL] COLUMNS' column names.
fn columns_header(full: bool) -> Vec<&'static str> {
    if full {
        vec![
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment",
        ]
    } else {
        vec!["Field", "Type", "Null", "Key", "Default", "Extra"]
    }
}

fn view_status_tail() -> Vec<Datum> {
    let mut v = vec![Datum::Null; 16];
    v.push(s("VIEW"));
    v
}

fn default_text(d: &Option<DefaultValue>, ty: &SqlType) -> Datum {
    match d {
        None | Some(DefaultValue::Null) => Datum::Null,
        Some(DefaultValue::Text(t)) => s(t.clone()),
        Some(DefaultValue::Now) => s(now_text(ty)),
        Some(DefaultValue::Expr(e)) => s(written(e)),
    }
}

/// A stored expression (generated column, CHECK, expression default) as MySQL writes it
/// (innoxide_sql::print): operations in parentheses, identifiers quoted, function names
/// lower-case.
fn written(text: &str) -> String {
    super::ddl::parse_stored(text)
        .map(|e| innoxide_sql::print::mysql_text(&e))
        .unwrap_or_else(|_| text.to_string())
}

/// CURRENT_TIMESTAMP as MySQL shows it for a column of type `ty`: with the column's
/// fractional-second precision.
fn now_text(ty: &SqlType) -> String {
    match ty.fsp() {
        0 => "CURRENT_TIMESTAMP".into(),
        f => format!("CURRENT_TIMESTAMP({f})"),
    }
}

/// PRI / UNI / MUL as SHOW COLUMNS reports it.
fn key_flag(t: &SqlTable, c: usize) -> &'static str {
    if !t.has_hidden_pk() && t.pk().contains(&c) {
        return "PRI";
    }
    for ix in &t.table.def.indexes {
        if ix.columns.first() == Some(&c) {
            return if ix.unique && ix.columns.len() == 1 {
                "UNI"
            } else {
                "MUL"
            };
        }
    }
    ""
}

struct IndexRow {
    name: String,
    unique: bool,
    seq: usize,
    column: String,
    prefix: Option<u64>,
    nullable: bool,
    /// Estimated distinct values of the index's first `seq` columns (None: not asked for).
    cardinality: Option<u64>,
}

impl IndexRow {
    /// SHOW INDEX / information_schema.STATISTICS from Seq_in_index to Expression.
    fn tail(&self) -> Vec<Datum> {
        vec![
            n(self.seq as u64),
            s(self.column.clone()),
            s("A"),
            self.cardinality.map_or(Datum::Null, n),
            self.prefix.map_or(Datum::Null, n),
            Datum::Null,
            s(if self.nullable { "YES" } else { "" }),
            s("BTREE"),
            s(""),
            s(""),
            s("YES"),
            Datum::Null,
        ]
    }
}

/// The rows SHOW INDEX shows for `t`, with Cardinality from `st` when given (the engine's
/// statistics list the clustered index first, then the secondary ones by name).
fn index_rows(t: &SqlTable, st: Option<&innoxide_engine::stats::TableStats>) -> Vec<IndexRow> {
    let card = |secondary: Option<&str>, seq: usize| {
        let st = st?;
        let i = match secondary {
            None => st.indexes.first()?,
            Some(name) => st.indexes.iter().skip(1).find(|i| i.name == name)?,
        };
        i.n_diff.get(seq).copied()
    };
    let mut out = Vec::new();
    if !t.has_hidden_pk() {
        for (i, &c) in t.pk().iter().enumerate() {
            out.push(IndexRow {
                name: "PRIMARY".into(),
                unique: true,
                seq: i + 1,
                column: t.columns[c].name.clone(),
                prefix: t.meta.pk_prefixes.get(i).copied().flatten(),
                nullable: false,
                cardinality: card(None, i),
            });
        }
    }
    for ix in &t.table.def.indexes {
        let km = t.meta.keys.iter().find(|k| k.name == ix.name);
        for (i, &c) in ix.columns.iter().enumerate() {
            out.push(IndexRow {
                name: ix.name.clone(),
                unique: ix.unique,
                seq: i + 1,
                column: t.columns[c].name.clone(),
                prefix: km.and_then(|k| k.prefixes.get(i).copied().flatten()),
                nullable: t.columns[c].nullable,
                cardinality: card(Some(&ix.name), i),
            });
        }
    }
    out
}

/// SHOW CREATE TABLE text, in MySQL 8.0's layout.
/// An identifier as SHOW CREATE writes it: in backticks (a backtick doubled) when
/// sql_quote_show_create is on, as it is otherwise.
fn ident(name: &str, quote: bool) -> String {
    if quote {
        format!("`{}`", name.replace('`', "``"))
    } else {
        name.to_string()
    }
}

/// SHOW CREATE TABLE's text (`quote`: sql_quote_show_create; `next`: the AUTO_INCREMENT
/// counter, shown once past 1 as MySQL does).
pub fn show_create(t: &SqlTable, quote: bool, next: Option<u64>) -> String {
    let q = |n: &str| ident(n, quote);
    let mut lines = Vec::new();
    for (_, c) in t.visible() {
        let mut l = format!("  {} {}", q(&c.name), c.ty.display());
        // Binary strings (BINARY, VARBINARY, BLOB) have no character set to show.
        if c.ty.is_text() && c.ty.collation_name() != t.meta.collation {
            l.push_str(&format!(
                " CHARACTER SET {} COLLATE {}",
                c.ty.charset_name(),
                c.ty.collation_name()
            ));
        }
        if let Some(g) = &c.meta.generated {
            l.push_str(&format!(
                " GENERATED ALWAYS AS ({}) {}",
                written(&g.text),
                if g.stored { "STORED" } else { "VIRTUAL" }
            ));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        }
        match &c.meta.default {
            _ if c.meta.generated.is_some() => {}
            Some(DefaultValue::Text(v)) => {
                l.push_str(&format!(" DEFAULT '{}'", v.replace('\'', "''")))
            }
            Some(DefaultValue::Now) => l.push_str(&format!(" DEFAULT {}", now_text(&c.ty))),
            Some(DefaultValue::Null) => l.push_str(" DEFAULT NULL"),
            Some(DefaultValue::Expr(e)) => l.push_str(&format!(" DEFAULT ({})", written(e))),
            None if c.nullable && !c.meta.auto_increment && !c.ty.is_blob_like() => {
                l.push_str(" DEFAULT NULL")
            }
            None => {}
        }
        if c.meta.on_update_now {
            l.push_str(&format!(" ON UPDATE {}", now_text(&c.ty)));
        }
        if c.meta.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        if !c.meta.comment.is_empty() {
            l.push_str(&format!(
                " COMMENT '{}'",
                c.meta.comment.replace('\'', "''")
            ));
        }
        lines.push(l);
    }
    let cols = |v: &[usize], pre: &[Option<u64>]| -> String {
        v.iter()
            .enumerate()
            .map(|(i, &c)| match pre.get(i).copied().flatten() {
                Some(p) => format!("{}({p})", q(&t.columns[c].name)),
                None => q(&t.columns[c].name),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    if !t.has_hidden_pk() {
        lines.push(format!(
            "  PRIMARY KEY ({})",
            cols(t.pk(), &t.meta.pk_prefixes)
        ));
    }
    for ix in &t.table.def.indexes {
        let pre = t
            .meta
            .keys
            .iter()
            .find(|k| k.name == ix.name)
            .map(|k| k.prefixes.clone())
            .unwrap_or_default();
        lines.push(format!(
            "  {}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            q(&ix.name),
            cols(&ix.columns, &pre)
        ));
    }
    // Foreign keys by name, as MySQL lists them.
    let mut fks: Vec<&crate::catalog::FkMeta> = t.meta.foreign_keys.iter().collect();
    fks.sort_by(|a, b| a.name.cmp(&b.name));
    for fk in fks {
        lines.push(format!("  {}", super::fk::fk_text_sep(fk, &t.db, ",")));
    }
    for c in &t.meta.checks {
        lines.push(format!(
            "  CONSTRAINT {} CHECK ({}){}",
            q(&c.name),
            written(&c.text),
            if c.enforced {
                ""
            } else {
                " /*!80016 NOT ENFORCED */"
            }
        ));
    }
    let mut tail = ") ENGINE=InnoDB".to_string();
    if let Some(n) = next.filter(|&n| n > 1) {
        tail.push_str(&format!(" AUTO_INCREMENT={n}"));
    }
    tail.push_str(&format!(
        " DEFAULT CHARSET={} COLLATE={}",
        t.meta.charset, t.meta.collation
    ));
    if let Some(f) = create_options_row_format(t) {
        tail.push_str(&format!(" ROW_FORMAT={f}"));
    }
    if let Some(k) = t.meta.key_block_size {
        tail.push_str(&format!(" KEY_BLOCK_SIZE={k}"));
    }
    if !t.meta.comment.is_empty() {
        tail.push_str(&format!(
            " COMMENT='{}'",
            t.meta.comment.replace('\'', "''")
        ));
    }
    format!(
        "CREATE TABLE {} (\n{}\n{}",
        q(&t.name),
        lines.join(",\n"),
        tail
    )
}

/// ROW_FORMAT= among a table's create options: as written, or (tables made before it was
/// kept) the engine's format when not the default DYNAMIC.
fn create_options_row_format(t: &SqlTable) -> Option<String> {
    t.meta.row_format_given.clone().or_else(|| {
        (t.table.def.row_format != innoxide_engine::RowFormat::Dynamic)
            .then(|| t.table.def.row_format.name().to_ascii_uppercase())
    })
}

/// information_schema.TABLES.CREATE_OPTIONS (SHOW TABLE STATUS Create_options), as MySQL
/// writes it: `row_format=X KEY_BLOCK_SIZE=n`.
fn create_options(t: &SqlTable) -> String {
    let mut v = Vec::new();
    if let Some(f) = create_options_row_format(t) {
        v.push(format!("row_format={f}"));
    }
    if let Some(k) = t.meta.key_block_size {
        v.push(format!("KEY_BLOCK_SIZE={k}"));
    }
    v.join(" ")
}

/// What EXPLAIN's Extra column says of a table's read.
#[derive(Default)]
struct How {
    /// The rows are sorted after reading.
    filesort: bool,
    /// Read in the order asked for (a full scan then reads the primary key: "index").
    ordered: bool,
    /// Looked up for each row of the tables before.
    per_row: bool,
    covering: bool,
    /// WHERE or ON conditions test its rows.
    conditions: bool,
    /// GROUP BY or DISTINCT keep a temporary table.
    temporary: bool,
    /// Joined by hash with the rows before.
    hash_join: bool,
    /// A loose index scan (select.rs S14).
    loose: bool,
}

/// One field of a locked key as performance_schema.data_locks' LOCK_DATA shows it: numbers
/// bare, other values quoted, NULL, the hidden row id as hex.
fn lock_data_field(t: Option<&SqlTable>, f: &innoxide_engine::monitor::LockField) -> String {
    let Some(b) = &f.bytes else {
        return "NULL".into();
    };
    let quoted = |x: &[u8]| format!("'{}'", String::from_utf8_lossy(x));
    let Some(c) = f.column else {
        let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
        return format!("0x{hex}");
    };
    let Some(t) = t.filter(|t| c < t.columns.len() && c < t.table.def.columns.len()) else {
        return quoted(b);
    };
    if !f.exact {
        return quoted(b);
    }
    let ty = &t.columns[c].ty;
    let v = innoxide_engine::dict::schema::decode(&t.table.def.columns[c], Some(b));
    if t.columns[c].meta.hidden {
        // DB_ROW_ID, as InnoDB shows its 6-byte row id.
        if let innoxide_engine::Value::UInt(id) = v {
            return format!("0x{id:012X}");
        }
    }
    let d = innoxide_sql::types::load(&v, ty);
    let text = ty.render(&d).unwrap_or_default();
    match d {
        Datum::Int(_) | Datum::UInt(_) | Datum::Double(_) | Datum::Decimal(_) => {
            String::from_utf8_lossy(&text).into_owned()
        }
        _ => quoted(&text),
    }
}
