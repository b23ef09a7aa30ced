//! DDL and account statements: CREATE/DROP DATABASE, CREATE [... LIKE | ... SELECT]/DROP/
//! TRUNCATE TABLE,
//! CREATE/DROP INDEX, ALTER TABLE and RENAME TABLE (`alter`), table maintenance,
//! CREATE/ALTER/DROP USER, GRANT.
//!
//! INVARIANTS
//! - K1: a table's SQL description is validated completely (types, defaults, keys) before the
//!   engine creates anything, so a refused CREATE TABLE leaves nothing behind.
//! - K2: every DDL statement drops the catalog's cached description of the tables it changes
//!   (catalog C1).

mod alter;
mod check;
mod generated;
mod view;

pub(crate) use check::{parse_stored, row_passes, Checks};
pub(crate) use generated::Generated;
pub(crate) use view::{create_view_text, invalid_view, view_tables};

use innoxide_engine::{ColumnDef, IndexSpec, RowFormat, TableDef};
use innoxide_sql::ast::{self, KeyKind, Statement};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlType, Warnings};

use super::typeinfo::TypeInfo;
use super::{Column, Output, Session};
use crate::catalog::{
    engine_error, ColumnMeta, DefaultValue, KeyMeta, TableMeta, HIDDEN_ROW_ID, TEMP_PREFIX,
};

/// The catalog's form of column `name`'s DEFAULT `e` (CREATE TABLE, ALTER TABLE ... SET
/// DEFAULT): 1067 for one the column cannot take, 1101 for a literal on a BLOB/TEXT column.
/// `text`: an expression default's (DEFAULT (expr)), whose columns are checked with the
/// table's (generated.rs N5).
pub(super) fn default_meta(
    name: &str,
    e: Option<&ast::Expr>,
    text: Option<&str>,
    ty: &SqlType,
    nullable: bool,
    mode: types::SqlMode,
) -> Result<Option<DefaultValue>, SqlError> {
    let Some(e) = e else {
        return Ok(None);
    };
    if let Some(text) = text {
        for part in check::parts(e) {
            match part {
                check::Part::Query => {
                    return Err(SqlError::new(
                        ER_DEFAULT_VAL_GENERATED_FUNCTION_IS_NOT_ALLOWED,
                        &[&name],
                    ))
                }
                check::Part::Variable => {
                    return Err(SqlError::new(ER_DEFAULT_VAL_GENERATED_VARIABLES, &[&name]))
                }
                // Functions whose value is not the row's alone (RAND, UUID, NOW...) are what
                // expression defaults are for.
                check::Part::Column(_) | check::Part::Function(_) => {}
            }
        }
        return Ok(Some(DefaultValue::Expr(text.to_string())));
    }
    let bad = || SqlError::new(ER_INVALID_DEFAULT, &[&name]);
    Ok(Some(match e {
        ast::Expr::Literal(ast::Literal::Null) => {
            if !nullable {
                return Err(bad());
            }
            DefaultValue::Null
        }
        ast::Expr::Function { name, .. }
            if matches!(
                name.as_str(),
                "current_timestamp" | "now" | "localtime" | "localtimestamp"
            ) =>
        {
            if !ty.is_temporal() {
                return Err(bad());
            }
            DefaultValue::Now
        }
        ast::Expr::Literal(l) => {
            let d = match l {
                ast::Literal::Number(n) => Datum::from_literal_number(n),
                ast::Literal::String { bytes, .. } | ast::Literal::Hex(bytes) => {
                    Datum::Bytes(bytes.clone())
                }
                ast::Literal::Bool(b) => Datum::Int(i64::from(*b)),
                ast::Literal::Null => Datum::Null,
            };
            if ty.is_blob_like() {
                return Err(SqlError::new(ER_BLOB_CANT_HAVE_DEFAULT, &[&name]));
            }
            // Must convert cleanly (MySQL refuses such defaults); zero dates are judged by the
            // session's NO_ZERO_DATE / NO_ZERO_IN_DATE.
            let mut w = Warnings::default();
            let strict = types::SqlMode(mode.0 | types::SqlMode::STRICT_ALL_TABLES);
            let v = types::store(&d, ty, strict, ("", name), 1, &mut w).map_err(|_| bad())?;
            let back = types::load(&v, ty);
            DefaultValue::Text(
                String::from_utf8_lossy(&back.to_text().unwrap_or_default()).into_owned(),
            )
        }
        ast::Expr::Unary {
            op: ast::UnaryOp::Neg,
            expr,
        } => {
            if let ast::Expr::Literal(ast::Literal::Number(n)) = &**expr {
                DefaultValue::Text(format!("-{n}"))
            } else {
                return Err(bad());
            }
        }
        _ => return Err(bad()),
    }))
}

/// A column's SQL type, nullability and catalog entry from its declaration (`cs`/`co`: the
/// table's default character set and collation).
/// A key may not take a JSON column (3152), nor a TEXT or BLOB column without a prefix
/// length (1170) unless it is a FULLTEXT key.
pub(super) fn check_key_part(
    ty: &SqlType,
    name: &str,
    prefix: Option<u64>,
    kind: KeyKind,
) -> Result<(), SqlError> {
    if ty.name == ast::TypeName::Json {
        return Err(SqlError::new(ER_JSON_USED_AS_KEY, &[&name]));
    }
    if ty.lob_bytes().is_some() && prefix.is_none() && kind != KeyKind::Fulltext {
        return Err(SqlError::new(ER_BLOB_KEY_WITHOUT_LENGTH, &[&name]));
    }
    Ok(())
}

/// The expression of each of `q`'s `n` result columns, where its select list gives one per
/// column (None for `*` and when the counts differ): what `derived_column` types.
fn item_exprs(q: &ast::Select, n: usize) -> Vec<Option<&ast::Expr>> {
    if q.items.len() != n {
        return vec![None; n];
    }
    q.items
        .iter()
        .map(|i| match i {
            ast::SelectItem::Expr { expr, .. } => Some(expr),
            _ => None,
        })
        .collect()
}

fn column_of(
    c: &ast::ColumnSpec,
    cs: &str,
    co: &str,
    in_pk: bool,
    mode: types::SqlMode,
) -> Result<(SqlType, bool, ColumnMeta), SqlError> {
    let ty = SqlType::from_ast(&c.ty, &c.name, Some(cs), Some(co))?;
    if in_pk && c.nullable == Some(true) {
        return Err(SqlError::new(ER_PRIMARY_CANT_HAVE_NULL, &[]));
    }
    let nullable = c.nullable.unwrap_or(!in_pk);
    let meta = ColumnMeta {
        default: default_meta(
            &c.name,
            c.default.as_ref(),
            c.default_text.as_deref(),
            &ty,
            nullable,
            mode,
        )?,
        auto_increment: c.auto_increment,
        on_update_now: c.on_update_now,
        comment: c.comment.clone().unwrap_or_default(),
        hidden: false,
        generated: c.generated.as_ref().map(|g| crate::catalog::GeneratedMeta {
            text: g.text.clone(),
            stored: g.stored,
        }),
    };
    Ok((ty, nullable, meta))
}

/// The engine column for a SQL column.
fn engine_column(name: &str, ty: &SqlType, nullable: bool) -> ColumnDef {
    let (kind, coll) = ty.storage();
    let mut cd = ColumnDef::new(name, kind)
        .collation(coll)
        .sql_type(&ty.persisted());
    cd.nullable = nullable;
    cd
}

/// The storage engines of MySQL 8.0 and MariaDB 10.11 besides InnoDB: a table asking for one
/// is made InnoDB with a warning; any other name is unknown (1286).
const MYSQL_ENGINES: &[&str] = &[
    "MyISAM",
    "MEMORY",
    "HEAP",
    "CSV",
    "ARCHIVE",
    "BLACKHOLE",
    "MRG_MYISAM",
    "MERGE",
    "FEDERATED",
    "EXAMPLE",
    "NDB",
    "NDBCLUSTER",
    "Aria",
    "ROCKSDB",
    "SEQUENCE",
    "SPIDER",
    "CONNECT",
];

impl Session {
    pub(crate) fn ddl(&mut self, stmt: &Statement, params: &[Datum]) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        match stmt {
            Statement::CreateDatabase {
                name,
                if_not_exists,
                charset,
                collate,
            } => {
                let (cs, co) = super::typeinfo::charset_and_collation(
                    charset.as_deref(),
                    collate.as_deref(),
                    "utf8mb4",
                )?;
                if !cat.create_database(name, &cs, &co)? {
                    if *if_not_exists {
                        self.note(
                            types::Level::Note,
                            SqlError::new(ER_DB_CREATE_EXISTS, &[name]),
                        );
                        return Ok(Output::ok(0));
                    }
                    return Err(SqlError::new(ER_DB_CREATE_EXISTS, &[name]));
                }
                Ok(Output::ok(1))
            }
            Statement::DropDatabase { name, if_exists } => {
                let n = cat.table_names(name).len() as u64;
                if !cat.drop_database(name)? {
                    if *if_exists {
                        self.note(
                            types::Level::Note,
                            SqlError::new(ER_DB_DROP_EXISTS, &[name]),
                        );
                        return Ok(Output::ok(0));
                    }
                    return Err(SqlError::new(ER_DB_DROP_EXISTS, &[name]));
                }
                if self.db.as_deref() == Some(name) {
                    self.db = None;
                }
                Ok(Output::ok(n))
            }
            Statement::CreateTable(ct) => self.create_table(ct, params),
            Statement::DropTable {
                names, if_exists, ..
            } => {
                let mut missing = Vec::new();
                self.no_dropped_parent(names)?;
                for n in names {
                    let db = self.db_of(n)?;
                    let _g = cat.ddl.lock();
                    match cat.engine.drop_table(&format!("{db}/{}", n.name)) {
                        Ok(()) => cat.invalidate(&db, &n.name),
                        Err(innoxide_engine::Error::NoSuchTable(_)) => {
                            missing.push(format!("{db}.{}", n.name))
                        }
                        Err(e) => return Err(engine_error(e)),
                    }
                }
                if !missing.is_empty() {
                    let list = missing.join(",");
                    if *if_exists {
                        for m in missing {
                            self.note(types::Level::Note, SqlError::new(ER_BAD_TABLE_ERROR, &[&m]));
                        }
                    } else {
                        return Err(SqlError::new(ER_BAD_TABLE_ERROR, &[&list]));
                    }
                }
                Ok(Output::ok(0))
            }
            Statement::TruncateTable(n) => {
                let db = self.db_of(n)?;
                let t = cat.table(&db, &n.name)?;
                if let Some((_, _, fk)) = self.first_child_of(&db, &n.name, &[])? {
                    return Err(SqlError::new(ER_TRUNCATE_ILLEGAL_FK, &[&fk]));
                }
                // An empty table of the same definition made under a work name, swapped in by
                // one atomic rename, then the old one dropped: a crash leaves the table whole or
                // empty, never missing, and a writer waiting meanwhile goes on into the empty
                // one (as ALTER TABLE's copy: ddl/alter.rs).
                let mut def = t.table.def.clone();
                let name = def.name.clone();
                let work = format!("{db}/{TEMP_PREFIX}trunc-{}-{}", self.id, t.table.id);
                let parked = format!("{db}/{TEMP_PREFIX}old-{}-{}", self.id, t.table.id);
                def.name.clone_from(&work);
                let _g = cat.ddl.lock();
                cat.engine.create_table(def).map_err(engine_error)?;
                let swap = cat
                    .engine
                    .rename_tables(&[(name.clone(), parked.clone()), (work.clone(), name)]);
                cat.invalidate(&db, &n.name);
                if let Err(e) = swap {
                    let _ = cat.engine.drop_table(&work);
                    return Err(engine_error(e));
                }
                cat.engine.drop_table(&parked).map_err(engine_error)?;
                Ok(Output::ok(0))
            }
            Statement::CreateIndex {
                name,
                table,
                columns,
                unique,
            } => {
                let key = ast::KeySpec {
                    kind: if *unique {
                        KeyKind::Unique
                    } else {
                        KeyKind::Index
                    },
                    name: Some(name.clone()),
                    columns: columns.clone(),
                };
                self.add_index(table, &key)
            }
            Statement::DropIndex { name, table } => self.drop_index(table, name),
            Statement::AlterTable { table, ops } => self.alter_table(table, ops),
            Statement::RenameTable(pairs) => self.rename_tables(pairs),
            Statement::CreateView(cv) => self.create_view(cv),
            Statement::DropView { names, if_exists } => self.drop_views(names, *if_exists),
            Statement::TableMaintenance { op, tables } => {
                let opname = match op {
                    ast::MaintenanceOp::Analyze => "analyze",
                    ast::MaintenanceOp::Optimize => "optimize",
                    ast::MaintenanceOp::Check => "check",
                };
                let mut rows = Vec::new();
                for n in tables {
                    let db = self.db_of(n)?;
                    let full = format!("{db}.{}", n.name);
                    let found = cat.table(&db, &n.name).and_then(|t| match op {
                        ast::MaintenanceOp::Analyze => {
                            let settings = self.server.vars.stats_settings();
                            cat.table_stats(&t, settings, true).map(|_| None)
                        }
                        ast::MaintenanceOp::Check => Ok(self.verify_table(&t)?.err()),
                        // InnoDB rebuilds the table and its statistics instead.
                        ast::MaintenanceOp::Optimize => {
                            let rebuild = ast::AlterOp::Options(ast::TableOptions {
                                engine: Some("InnoDB".into()),
                                ..ast::TableOptions::default()
                            });
                            self.alter_table(n, std::slice::from_ref(&rebuild))?;
                            let t = cat.table(&db, &n.name)?;
                            let settings = self.server.vars.stats_settings();
                            cat.table_stats(&t, settings, true).map(|_| None)
                        }
                    });
                    let mut out = |ty: &str, msg: String| {
                        rows.push(vec![
                            Datum::Bytes(full.clone().into_bytes()),
                            Datum::Bytes(opname.as_bytes().to_vec()),
                            Datum::Bytes(ty.as_bytes().to_vec()),
                            Datum::Bytes(msg.into_bytes()),
                        ])
                    };
                    if *op == ast::MaintenanceOp::Optimize && found.is_ok() {
                        out(
                            "note",
                            "Table does not support optimize, doing recreate + analyze instead"
                                .to_string(),
                        );
                    }
                    match found {
                        Ok(None) => out("status", "OK".to_string()),
                        // CHECK TABLE found damage: what, then "Corrupt" (as InnoDB reports).
                        Ok(Some(what)) => {
                            out("Error", what);
                            out("error", "Corrupt".to_string());
                        }
                        Err(e) => out("Error", e.message),
                    }
                }
                Ok(Output::Rows {
                    columns: ["Table", "Op", "Msg_type", "Msg_text"]
                        .iter()
                        .map(|c| Column::text(c))
                        .collect(),
                    rows,
                })
            }
            Statement::CreateUser {
                if_not_exists,
                users,
            }
            | Statement::AlterUser {
                if_exists: if_not_exists,
                users,
            } => {
                let create = matches!(stmt, Statement::CreateUser { .. });
                let mut failed = Vec::new();
                for (u, auth) in users {
                    // ALTER USER without IDENTIFIED keeps the account's credentials.
                    let kept = match (auth, create) {
                        (None, false) => cat
                            .users()?
                            .into_iter()
                            .find(|x| x.user == u.user && x.host == u.host),
                        _ => None,
                    };
                    let info = match kept {
                        Some(k) => k,
                        None => super::accounts::user_info(u, auth.as_ref())?,
                    };
                    if !cat.put_user(&info, create)? && !*if_not_exists {
                        failed.push(format!("'{}'@'{}'", u.user, u.host));
                    }
                }
                if !failed.is_empty() {
                    let op = if create { "CREATE USER" } else { "ALTER USER" };
                    return Err(SqlError::new(ER_CANNOT_USER, &[&op, &failed.join(",")]));
                }
                Ok(Output::ok(0))
            }
            Statement::DropUser { if_exists, users } => {
                self.not_mandatory(users)?;
                let mut failed = Vec::new();
                for u in users {
                    if !cat.drop_user(&u.user, &u.host)? && !*if_exists {
                        failed.push(format!("'{}'@'{}'", u.user, u.host));
                    }
                }
                if !failed.is_empty() {
                    return Err(SqlError::new(
                        ER_CANNOT_USER,
                        &[&"DROP USER", &failed.join(",")],
                    ));
                }
                Ok(Output::ok(0))
            }
            Statement::Grant {
                privileges,
                columns,
                on,
                users,
            } => self.grant(privileges, columns, on, users, true),
            Statement::Revoke {
                privileges,
                columns,
                on,
                users,
            } => self.grant(privileges, columns, on, users, false),
            Statement::RevokeAll { users } => self.revoke_all(users),
            Statement::CreateRole {
                if_not_exists,
                roles,
            } => self.create_or_drop_roles(roles, *if_not_exists, true),
            Statement::DropRole { if_exists, roles } => {
                self.create_or_drop_roles(roles, *if_exists, false)
            }
            Statement::GrantRole {
                roles,
                users,
                admin,
            } => self.grant_roles(roles, users, *admin, true),
            Statement::RevokeRole { roles, users } => self.grant_roles(roles, users, false, false),
            Statement::SetDefaultRole { spec, users } => self.set_default_role(spec, users),
            _ => Err(SqlError::new(ER_NOT_SUPPORTED_YET, &[&"this statement"])),
        }
    }

    /// A foreign key referencing `db.table` from a table not in `except` (`db/name`), with
    /// foreign_key_checks on: (child database, child table, the constraint as 1701 shows it).
    fn first_child_of(
        &mut self,
        db: &str,
        table: &str,
        except: &[String],
    ) -> Result<Option<(String, String, String)>, SqlError> {
        let cat = self.server.catalog.clone();
        if !self.vars.foreign_key_checks() || !cat.any_fk_parent() {
            return Ok(None);
        }
        let map = cat.fk_map();
        for (cdb, cname, i) in map
            .by_parent
            .get(&format!("{db}/{table}"))
            .into_iter()
            .flatten()
        {
            if except.contains(&format!("{cdb}/{cname}")) {
                continue;
            }
            if let Some(fk) = cat.table(cdb, cname)?.meta.foreign_keys.get(*i) {
                let shown = format!("`{cdb}`.`{cname}`, {}", super::fk::fk_text(fk, cdb));
                return Ok(Some((cdb.clone(), cname.clone(), shown)));
            }
        }
        Ok(None)
    }

    /// DROP TABLE of a table a foreign key of another, not dropped too, references: 3730.
    fn no_dropped_parent(&mut self, names: &[ast::ObjectName]) -> Result<(), SqlError> {
        let mut dropped = Vec::with_capacity(names.len());
        for n in names {
            dropped.push(format!("{}/{}", self.db_of(n)?, n.name));
        }
        for n in names {
            let db = self.db_of(n)?;
            if let Some((cdb, cname, _)) = self.first_child_of(&db, &n.name, &dropped)? {
                let cat = self.server.catalog.clone();
                let fk = cat
                    .table(&cdb, &cname)?
                    .meta
                    .foreign_keys
                    .iter()
                    .find(|f| f.parent_db == db && f.parent_table == n.name)
                    .map(|f| f.name.clone())
                    .unwrap_or_default();
                return Err(SqlError::new(
                    ER_FK_CANNOT_DROP_PARENT,
                    &[&n.name, &fk, &cname],
                ));
            }
        }
        Ok(())
    }

    /// Creates the engine table of CREATE TABLE `ct` in `db` (a note for IF NOT EXISTS).
    fn create_in_engine(
        &mut self,
        db: &str,
        ct: &ast::CreateTable,
        def: innoxide_engine::TableDef,
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let _g = cat.ddl.lock();
        // A view's name is taken too (V4 in ddl/view.rs).
        let created = match cat.view(db, &ct.name.name) {
            Some(_) => Err(innoxide_engine::Error::TableExists(def.name.clone())),
            None => cat.engine.create_table(def),
        };
        match created {
            Ok(_) => {
                cat.invalidate(db, &ct.name.name);
                Ok(Output::ok(0))
            }
            Err(innoxide_engine::Error::TableExists(_)) if ct.if_not_exists => {
                self.note(
                    types::Level::Note,
                    SqlError::new(ER_TABLE_EXISTS_ERROR, &[&ct.name.name]),
                );
                Ok(Output::ok(0))
            }
            Err(e) => Err(engine_error(e)),
        }
    }

    fn create_table(
        &mut self,
        ct: &ast::CreateTable,
        _params: &[Datum],
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let db = self.db_of(&ct.name)?;
        let Some(dbi) = cat.database(&db) else {
            return Err(SqlError::new(ER_BAD_DB_ERROR, &[&db]));
        };
        if let Some(src) = &ct.like {
            // Same columns, keys and options; no rows; the counter starts afresh.
            let sdb = self.db_of(src)?;
            let st = cat.table(&sdb, &src.name)?;
            let mut def = st.table.def.clone();
            def.name = format!("{db}/{}", ct.name.name);
            // Check names are the database's (check.rs H2): the copy's are made anew.
            if !st.meta.checks.is_empty() {
                let mut meta = st.meta.clone();
                for (i, c) in meta.checks.iter_mut().enumerate() {
                    c.name = format!("{}_chk_{}", ct.name.name, i + 1);
                }
                def.options = serde_json::to_string(&meta)
                    .map_err(|e| SqlError::new(ER_INTERNAL_ERROR, &[&e]))?;
            }
            return self.create_in_engine(&db, ct, def);
        }
        if let Some(q) = &ct.as_select {
            return self.create_table_select(ct, q, &db, _params);
        }
        if ct.columns.is_empty() {
            return Err(SqlError::new(ER_TABLE_MUST_HAVE_COLUMNS, &[]));
        }
        if let Some(e) = &ct.options.engine {
            if !e.eq_ignore_ascii_case("innodb") {
                // As MySQL: a name no MySQL engine has is error 1286 under
                // NO_ENGINE_SUBSTITUTION, else a warning; an engine MySQL has (MyISAM from a
                // dump, ...) is made InnoDB with warning 1266.
                let known = MYSQL_ENGINES.iter().any(|k| k.eq_ignore_ascii_case(e));
                if !known {
                    let no_subst = self.vars.sql_mode().0 & types::SqlMode::NO_ENGINE_SUBSTITUTION;
                    if no_subst != 0 {
                        return Err(SqlError::new(ER_UNKNOWN_STORAGE_ENGINE, &[e]));
                    }
                    self.note(
                        types::Level::Warning,
                        SqlError::new(ER_UNKNOWN_STORAGE_ENGINE, &[e]),
                    );
                }
                self.note(
                    types::Level::Warning,
                    SqlError::new(ER_WARN_USING_OTHER_HANDLER, &[&"InnoDB", &ct.name.name]),
                );
            }
        }
        let (cs, co) = super::typeinfo::charset_and_collation(
            ct.options.charset.as_deref().or(Some(&dbi.charset)),
            ct.options
                .collate
                .as_deref()
                .or(if ct.options.charset.is_none() {
                    Some(&dbi.collation)
                } else {
                    None
                }),
            "utf8mb4",
        )?;
        let pk_key = ct
            .keys
            .iter()
            .filter(|k| k.kind == KeyKind::Primary)
            .collect::<Vec<_>>();
        if pk_key.len() > 1 {
            return Err(SqlError::new(ER_MULTIPLE_PRI_KEY, &[]));
        }
        let pk_cols: Vec<&str> = pk_key
            .first()
            .map(|k| k.columns.iter().map(|c| c.name.as_str()).collect())
            .unwrap_or_default();
        let mut cols = Vec::new();
        let mut tys = Vec::new();
        let mut meta = TableMeta {
            engine: "InnoDB".into(),
            charset: cs.clone(),
            collation: co.clone(),
            comment: ct.options.comment.clone().unwrap_or_default(),
            auto_increment_start: ct.options.auto_increment.unwrap_or(1),
            ..TableMeta::default()
        };
        for c in &ct.columns {
            if cols
                .iter()
                .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(SqlError::new(ER_DUP_FIELDNAME, &[&c.name]));
            }
            let in_pk = pk_cols.iter().any(|p| p.eq_ignore_ascii_case(&c.name));
            let (ty, nullable, cm) = column_of(c, &cs, &co, in_pk, self.vars.sql_mode())?;
            meta.columns.push(cm);
            cols.push(engine_column(&c.name, &ty, nullable));
            tys.push(ty);
        }
        let col_no = |n: &str| -> Result<usize, SqlError> {
            cols.iter()
                .position(|c| c.name.eq_ignore_ascii_case(n))
                .ok_or_else(|| SqlError::new(ER_KEY_COLUMN_DOES_NOT_EXITS, &[&n]))
        };
        let mut primary: Option<Vec<usize>> = None;
        let mut indexes: Vec<IndexSpec> = Vec::new();
        for k in &ct.keys {
            let mut cn = Vec::new();
            for c in &k.columns {
                let i = col_no(&c.name)?;
                if cn.contains(&i) {
                    return Err(SqlError::new(ER_DUP_FIELDNAME, &[&c.name]));
                }
                check_key_part(&tys[i], &cols[i].name, c.prefix, k.kind)?;
                cn.push(i);
            }
            let prefixes = k.columns.iter().map(|c| c.prefix).collect();
            match k.kind {
                KeyKind::Primary => {
                    primary = Some(cn);
                    meta.pk_prefixes = prefixes;
                }
                KeyKind::Unique | KeyKind::Index | KeyKind::Fulltext => {
                    let name = k.name.clone().unwrap_or_else(|| {
                        let base = cols[cn[0]].name.clone();
                        let mut n = base.clone();
                        let mut i = 2;
                        while indexes.iter().any(|x| x.name.eq_ignore_ascii_case(&n)) {
                            n = format!("{base}_{i}");
                            i += 1;
                        }
                        n
                    });
                    if name.eq_ignore_ascii_case("PRIMARY")
                        || indexes.iter().any(|x| x.name.eq_ignore_ascii_case(&name))
                    {
                        return Err(SqlError::new(ER_DUP_KEYNAME, &[&name]));
                    }
                    meta.keys.push(KeyMeta {
                        name: name.clone(),
                        prefixes,
                    });
                    indexes.push(IndexSpec {
                        name,
                        columns: cn,
                        unique: k.kind == KeyKind::Unique,
                    });
                }
            }
        }
        // Foreign keys (fk.rs F1): checked against the parent; an index made for each that
        // no index of this table serves.
        let fk_cols: Vec<(String, SqlType, bool)> = cols
            .iter()
            .zip(&tys)
            .map(|(c, ty)| (c.name.clone(), ty.clone(), c.nullable))
            .collect();
        let mut ix_cols: Vec<Vec<usize>> = primary.iter().cloned().collect();
        ix_cols.extend(indexes.iter().map(|i| i.columns.clone()));
        let fks = self.fk_metas(
            (&db, &ct.name.name),
            &ct.foreign_keys,
            &[],
            &fk_cols,
            &ix_cols,
        )?;
        for (fk, index) in fks {
            if let Some((base, columns)) = index {
                let mut name = base.clone();
                let mut i = 2;
                while indexes.iter().any(|x| x.name.eq_ignore_ascii_case(&name)) {
                    name = format!("{base}_{i}");
                    i += 1;
                }
                meta.keys.push(KeyMeta {
                    name: name.clone(),
                    prefixes: vec![None; columns.len()],
                });
                indexes.push(IndexSpec {
                    name,
                    columns,
                    unique: false,
                });
            }
            meta.foreign_keys.push(fk);
        }
        // Exactly one AUTO_INCREMENT column, first in some key.
        let autos: Vec<usize> = meta
            .columns
            .iter()
            .enumerate()
            .filter(|c| c.1.auto_increment)
            .map(|c| c.0)
            .collect();
        if autos.len() > 1
            || autos.first().is_some_and(|a| {
                primary.as_ref().and_then(|p| p.first()) != Some(a)
                    && !indexes.iter().any(|i| i.columns.first() == Some(a))
            })
        {
            return Err(SqlError::new(ER_WRONG_AUTO_KEY, &[]));
        }
        if primary.is_none() {
            // C2: a hidden row id keys the table.
            let ty = super::typeinfo::hidden_row_id()?;
            let (kind, coll) = ty.storage();
            cols.push(
                ColumnDef::new(HIDDEN_ROW_ID, kind)
                    .collation(coll)
                    .sql_type(&ty.persisted()),
            );
            meta.columns.push(ColumnMeta {
                hidden: true,
                ..ColumnMeta::default()
            });
            primary = Some(vec![cols.len() - 1]);
        }
        let check_cols: Vec<(String, SqlType, bool)> = ct
            .columns
            .iter()
            .zip(&tys)
            .zip(&meta.columns)
            .map(|((c, ty), m)| (c.name.clone(), ty.clone(), m.auto_increment))
            .collect();
        meta.checks = self.check_metas((&db, &ct.name.name), &ct.checks, &[], &check_cols)?;
        let gen_cols: Vec<generated::GenColumn> = check_cols
            .iter()
            .zip(&meta.columns)
            .map(|((n, ty, auto), m)| generated::gen_column(n, ty, *auto, m))
            .collect();
        self.validate_generated((&db, &ct.name.name), &gen_cols)?;
        let fmt = self.format_options(
            ct.options.row_format.as_deref(),
            ct.options.key_block_size,
            &ct.name.name,
        )?;
        meta.row_format_given = fmt.given;
        meta.key_block_size = fmt.key_block_size;
        let mut def = TableDef::new(&format!("{db}/{}", ct.name.name), cols, primary);
        def.indexes = indexes;
        def.row_format = fmt.format;
        def.options =
            serde_json::to_string(&meta).map_err(|e| SqlError::new(ER_INTERNAL_ERROR, &[&e]))?;
        self.create_in_engine(&db, ct, def)
    }

    /// CREATE TABLE ... [IGNORE | REPLACE] [AS] SELECT: the declared columns, then the
    /// select's other columns with types derived from it (`derived_column`); the rows go in
    /// as INSERT ... SELECT would put them, in a transaction of their own. If that fails the
    /// table is dropped again, so a failed statement leaves no table (K1).
    fn create_table_select(
        &mut self,
        ct: &ast::CreateTable,
        q: &ast::Select,
        db: &str,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        if cat.table(db, &ct.name.name).is_ok() {
            if ct.if_not_exists {
                self.note(
                    types::Level::Note,
                    SqlError::new(ER_TABLE_EXISTS_ERROR, &[&ct.name.name]),
                );
                return Ok(Output::ok(0));
            }
            return Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&ct.name.name]));
        }
        let cols = self.describe(q)?;
        let exprs = item_exprs(q, cols.len());
        // The declared columns the select does not name, then the select's columns (with
        // their declared definitions where there is one), as MySQL orders them.
        let mut spec = ct.clone();
        spec.as_select = None;
        let named = |d: &ast::ColumnSpec| cols.iter().any(|c| c.name.eq_ignore_ascii_case(&d.name));
        spec.columns.retain(|d| !named(d));
        for (i, (c, e)) in cols.iter().zip(exprs).enumerate() {
            if cols[..i]
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(SqlError::new(ER_DUP_FIELDNAME, &[&c.name]));
            }
            let declared = ct
                .columns
                .iter()
                .find(|d| d.name.eq_ignore_ascii_case(&c.name));
            spec.columns.push(match declared {
                Some(d) => d.clone(),
                None => self.derived_column(c, e),
            });
        }
        self.create_table(&spec, params)?;
        let ins = ast::Insert {
            table: ct.name.clone(),
            columns: cols.iter().map(|c| c.name.clone()).collect(),
            source: ast::InsertSource::Select(Box::new(q.clone())),
            ignore: ct.on_duplicate == Some(false),
            replace: ct.on_duplicate == Some(true),
            on_duplicate: Vec::new(),
        };
        let r = self.insert(&ins, params);
        let done = match r {
            Ok(out) => self.end_trx(true).map(|()| out),
            Err(e) => Err(e),
        };
        if done.is_err() {
            self.end_trx(false).ok();
            let _g = cat.ddl.lock();
            cat.engine
                .drop_table(&format!("{db}/{}", ct.name.name))
                .map_err(engine_error)?;
            cat.invalidate(db, &ct.name.name);
        }
        done
    }

    /// The column CREATE TABLE ... SELECT makes for result column `c` (select expression
    /// `e`), typed as MySQL types it in the simple cases: a table column keeps its type and
    /// nullability; an integer literal is INT (BIGINT past 32 bits), other integers BIGINT;
    /// a decimal literal DECIMAL(M,D) of its digits; a string literal VARCHAR of its length;
    /// NULL BINARY(0). Literals, COUNT and IS [NOT] NULL / TRUE / FALSE are NOT NULL.
    fn derived_column(&self, c: &Column, e: Option<&ast::Expr>) -> ast::ColumnSpec {
        use super::expr::EType;
        use ast::{Expr, Literal, TypeName as T};
        let mut ty = ast::ColumnType::plain(T::BigInt);
        let literal = match e {
            Some(Expr::Literal(l)) => Some(l),
            Some(Expr::Unary {
                op: ast::UnaryOp::Neg,
                expr,
            }) => match &**expr {
                Expr::Literal(l @ Literal::Number(_)) => Some(l),
                _ => None,
            },
            _ => None,
        };
        let mut nullable = !matches!(literal, Some(l) if *l != Literal::Null)
            && !matches!(e, Some(Expr::Function { name, .. }) if name == "count")
            && !matches!(e, Some(Expr::IsNull { .. } | Expr::IsBool { .. }));
        match &c.ety {
            EType::Column(t) => {
                ty = t.to_ast();
                ty.zerofill = false;
                if let Ok(tab) = self.server.catalog.table(&c.schema, &c.org_table) {
                    if let Some(i) = tab.column(&c.org_name) {
                        nullable = tab.columns[i].nullable;
                    }
                }
            }
            EType::Int { unsigned } => {
                ty.unsigned = *unsigned;
                if let Some(Literal::Number(n)) = literal {
                    if n.parse::<i64>().is_ok_and(|v| i32::try_from(v).is_ok()) {
                        ty.name = T::Int;
                    }
                }
            }
            EType::Decimal { scale } => {
                ty.name = T::Decimal;
                let digits = match literal {
                    Some(Literal::Number(n)) => n.bytes().filter(u8::is_ascii_digit).count(),
                    _ => 65,
                };
                ty.length = Some(digits.clamp(usize::from(*scale).max(1), 65) as u64);
                ty.scale = Some(u64::from(*scale));
            }
            EType::Double => ty.name = T::Double,
            EType::Str { coll } => {
                ty.name = if *coll == innoxide_engine::Collation::Binary {
                    T::VarBinary
                } else {
                    T::VarChar
                };
                ty.length = Some(match literal {
                    Some(Literal::String { bytes, .. } | Literal::Hex(bytes)) => {
                        String::from_utf8_lossy(bytes).chars().count() as u64
                    }
                    _ => 255,
                });
            }
            EType::Date => ty.name = T::Date,
            EType::DateTime { fsp } => {
                ty.name = T::DateTime;
                ty.length = (*fsp > 0).then_some(u64::from(*fsp));
            }
            EType::Time { fsp } => {
                ty.name = T::Time;
                ty.length = (*fsp > 0).then_some(u64::from(*fsp));
            }
            EType::Null => {
                ty.name = T::Binary;
                ty.length = Some(0);
            }
        }
        ast::ColumnSpec {
            name: c.name.clone(),
            ty,
            // A nullable one becomes NOT NULL in a PRIMARY KEY, as if declared without NULL.
            nullable: (!nullable).then_some(false),
            default: None,
            default_text: None,
            auto_increment: false,
            on_update_now: false,
            comment: None,
            generated: None,
        }
    }

    /// CHECK TABLE of `t` under a shared table lock (waits for uncommitted changes, as long as
    /// innodb_lock_wait_timeout allows): Ok(Err(what)) if the engine found damage.
    fn verify_table(
        &mut self,
        t: &crate::catalog::SqlTable,
    ) -> Result<Result<(), String>, SqlError> {
        let engine = self.server.catalog.engine.clone();
        let mut trx = engine.begin();
        trx.set_lock_wait_timeout(self.vars.lock_wait_timeout());
        trx.lock_table(&t.table, false).map_err(engine_error)?;
        let r = engine.check_table(&t.table);
        trx.commit().map_err(engine_error)?;
        Ok(match r {
            Ok(_) => Ok(()),
            Err(e @ innoxide_engine::Error::Corrupted { .. }) => Err(e.to_string()),
            Err(e) => return Err(engine_error(e)),
        })
    }

    fn add_index(&mut self, table: &ast::ObjectName, k: &ast::KeySpec) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let db = self.db_of(table)?;
        let t = cat.table(&db, &table.name)?;
        let mut cn = Vec::new();
        for c in &k.columns {
            let i = t
                .column(&c.name)
                .ok_or_else(|| SqlError::new(ER_KEY_COLUMN_DOES_NOT_EXITS, &[&c.name]))?;
            check_key_part(&t.columns[i].ty, &t.columns[i].name, c.prefix, k.kind)?;
            cn.push(i);
        }
        let name = k
            .name
            .clone()
            .unwrap_or_else(|| t.columns[cn[0]].name.clone());
        let _g = cat.ddl.lock();
        cat.engine
            .create_index(
                &t.engine_name(),
                IndexSpec {
                    name,
                    columns: cn,
                    unique: k.kind == KeyKind::Unique,
                },
            )
            .map_err(engine_error)?;
        cat.invalidate(&db, &table.name);
        Ok(Output::ok(0))
    }

    fn drop_index(&mut self, table: &ast::ObjectName, name: &str) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let db = self.db_of(table)?;
        let t = cat.table(&db, &table.name)?;
        // The index a foreign key of the table needs (fk.rs F1): 1553.
        let mut others: Vec<&[usize]> = vec![t.pk()];
        others.extend(
            t.table
                .def
                .indexes
                .iter()
                .filter(|i| !i.name.eq_ignore_ascii_case(name))
                .map(|i| &i.columns[..]),
        );
        for fk in &t.meta.foreign_keys {
            let cols: Vec<usize> = fk.columns.iter().filter_map(|c| t.column(c)).collect();
            if !others.iter().any(|ix| ix.starts_with(&cols)) {
                return Err(SqlError::new(ER_DROP_INDEX_FK, &[&name]));
            }
        }
        let _g = cat.ddl.lock();
        cat.engine
            .drop_index(&t.engine_name(), name)
            .map_err(engine_error)?;
        cat.invalidate(&db, &table.name);
        Ok(Output::ok(0))
    }
}

/// What `Session::format_options` makes of ROW_FORMAT= and KEY_BLOCK_SIZE=.
#[derive(Clone)]
pub(crate) struct FormatOptions {
    /// The format in force.
    pub format: RowFormat,
    /// ROW_FORMAT= as written (upper case), kept for SHOW CREATE TABLE.
    pub given: Option<String>,
    /// KEY_BLOCK_SIZE= as written (not 0).
    pub key_block_size: Option<u64>,
}

impl Session {
    /// InnoDB's checks of ROW_FORMAT= and KEY_BLOCK_SIZE= (its create_options_are_invalid and
    /// the adjustments after it), under innodb_strict_mode: each problem is a warning 1478;
    /// ON, the statement then fails with 1031; OFF, the option is ignored or replaced
    /// (ROW_FORMAT=DYNAMIC assumed). innoxide has no compressed pages, so ROW_FORMAT=COMPRESSED
    /// (also implied by KEY_BLOCK_SIZE alone) is treated as InnoDB treats it where it cannot
    /// create one (file_per_table OFF, a page size over 16K): refused in strict mode,
    /// DYNAMIC otherwise.
    pub(crate) fn format_options(
        &mut self,
        row_format_given: Option<&str>,
        key_block_size: Option<u64>,
        table: &str,
    ) -> Result<FormatOptions, SqlError> {
        let strict = self.vars.innodb_strict_mode();
        let given = row_format_given.map(str::to_ascii_uppercase);
        let kbs = key_block_size.filter(|&k| k != 0);
        let mut problems = Vec::new();
        let mut adjust = Vec::new();
        let page_kb = (self.server.catalog.engine.inner().bp.page_size() / 1024) as u64;
        let named = matches!(
            given.as_deref(),
            None | Some("DEFAULT" | "DYNAMIC" | "COMPACT" | "REDUNDANT" | "COMPRESSED")
        );
        if !named {
            problems.push("InnoDB: invalid ROW_FORMAT specifier.".to_string());
            adjust.push("InnoDB: assuming ROW_FORMAT=DYNAMIC.".to_string());
        }
        let mut compressed = given.as_deref() == Some("COMPRESSED");
        if let Some(k) = kbs {
            if ![1, 2, 4, 8, 16].contains(&k) || k > page_kb {
                problems.push(format!(
                    "InnoDB: invalid KEY_BLOCK_SIZE = {k}. Valid values are [1, 2, 4, 8, 16]"
                ));
                adjust.push(format!("InnoDB: ignoring KEY_BLOCK_SIZE={k}."));
            } else {
                match given.as_deref() {
                    None | Some("DEFAULT") => compressed = true,
                    Some("COMPRESSED") => {}
                    Some(f) if named => {
                        problems.push(format!(
                            "InnoDB: cannot specify ROW_FORMAT = {f} with KEY_BLOCK_SIZE."
                        ));
                        adjust.push(format!(
                            "InnoDB: ignoring KEY_BLOCK_SIZE={k} unless ROW_FORMAT=COMPRESSED."
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        if compressed {
            problems.push("InnoDB: innoxide does not implement ROW_FORMAT=COMPRESSED.".into());
            adjust.push("InnoDB: assuming ROW_FORMAT=DYNAMIC.".into());
        }
        let warn = |s: &mut Session, message: String| {
            let e = SqlError {
                code: ER_ILLEGAL_HA_CREATE_OPTION.code,
                state: ER_ILLEGAL_HA_CREATE_OPTION.state,
                message,
            };
            s.note(types::Level::Warning, e)
        };
        if strict {
            if !problems.is_empty() {
                for m in problems {
                    warn(self, m);
                }
                self.warnings_explain_error = true;
                return Err(SqlError::new(ER_ILLEGAL_HA, &[&table]));
            }
        } else {
            for m in adjust {
                warn(self, m);
            }
        }
        let format = if compressed || !named {
            RowFormat::Dynamic
        } else {
            row_format(given.as_deref())
        };
        Ok(FormatOptions {
            format,
            given,
            key_block_size: kbs,
        })
    }
}

/// ROW_FORMAT= as the engine's format (DYNAMIC for DEFAULT and unknown names, as InnoDB).
pub(crate) fn row_format(name: Option<&str>) -> RowFormat {
    match name.map(str::to_ascii_uppercase).as_deref() {
        Some("COMPACT") => RowFormat::Compact,
        Some("REDUNDANT") => RowFormat::Redundant,
        Some("COMPRESSED") => RowFormat::Compressed,
        _ => RowFormat::Dynamic,
    }
}

/// MySQL 8.0's log tables, `mysql.general_log` and `mysql.slow_log`, with its columns (InnoDB
/// here: there is no CSV engine). They stay empty, as in MySQL with log_output=FILE: the slow
/// query log goes to its file (slowlog.rs). Tools expect them (mysqldump --all-databases).
const LOG_TABLES: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS mysql.general_log (
        event_time TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
            ON UPDATE CURRENT_TIMESTAMP(6),
        user_host MEDIUMTEXT NOT NULL, thread_id BIGINT UNSIGNED NOT NULL,
        server_id INT UNSIGNED NOT NULL, command_type VARCHAR(64) NOT NULL,
        argument MEDIUMBLOB NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
    "CREATE TABLE IF NOT EXISTS mysql.slow_log (
        start_time TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
            ON UPDATE CURRENT_TIMESTAMP(6),
        user_host MEDIUMTEXT NOT NULL, query_time TIME(6) NOT NULL, lock_time TIME(6) NOT NULL,
        rows_sent INT NOT NULL, rows_examined INT NOT NULL, db VARCHAR(512) NOT NULL,
        last_insert_id INT NOT NULL, insert_id INT NOT NULL, server_id INT UNSIGNED NOT NULL,
        sql_text MEDIUMBLOB NOT NULL, thread_id BIGINT UNSIGNED NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
];

/// Creates the log tables of `mysql` that a data directory lacks (at every start: data
/// directories made before they existed get them too).
pub fn ensure_log_tables(server: &std::sync::Arc<super::Server>) -> Result<(), SqlError> {
    let mut s = Session::new(server.clone(), 0, ("root", "localhost"), "localhost", None);
    for sql in LOG_TABLES {
        s.execute(&innoxide_sql::parse::parse(sql)?, &[])?;
    }
    Ok(())
}
