//! Views: CREATE [OR REPLACE] / ALTER / DROP VIEW, reading a view in a SELECT, and the text
//! SHOW CREATE VIEW gives. A view is a row of `mysql/innoxide_views` (catalog C6): its SELECT
//! as written, the clauses around it and the columns it had when it was created.
//!
//! INVARIANTS
//! - V1: a view's SELECT is compiled in the view's database (unqualified table names are
//!   the view's database's) and, with SQL SECURITY DEFINER, with the definer's privileges;
//!   the session's database and account are back as they were when it returns, whatever it
//!   returned.
//! - V2: a view reads as the rows of its SELECT under the view's column names; when its SELECT
//!   no longer compiles (a table or column it names is gone, a privilege it needs was
//!   revoked) or no longer makes as many columns, reading it is error 1356.
//! - V3: a view that reads itself, directly or through other views, is error 1462, at CREATE
//!   time and when read (`views_open` holds the views being compiled).
//! - V4: a name in a database is a table's or a view's, never both (catalog `put_view`
//!   refuses a taken name under `ddl`; CREATE TABLE and RENAME TABLE check for a view).
//! - V5: a view stores its SELECT with its own `*` and `t.*` items written out as the columns
//!   they stood for when it was created, so it keeps those columns when a table it reads
//!   gains one (as MySQL, whose SHOW CREATE VIEW shows them so).
//!
//! Latch order: the catalog's `ddl` mutex only, taken last and never across a SELECT.

use innoxide_sql::ast;
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlType};

use super::super::rowbuf::RowBuf;
use super::super::{Column, Output, Session};
use super::alter::check_table_name;
use crate::catalog::{SqlView, ViewColumn, ViewDef};

/// A name quoted with backticks, as SHOW CREATE VIEW writes every name.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl Session {
    pub(super) fn create_view(&mut self, cv: &ast::CreateView) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let db = self.db_of(&cv.name)?;
        let name = cv.name.name.clone();
        if cat.database(&db).is_none() {
            return Err(SqlError::new(ER_BAD_DB_ERROR, &[&db]));
        }
        check_table_name(&name)?;
        let existing = cat.view(&db, &name);
        let is_table = cat.table(&db, &name).is_ok();
        if is_table && (cv.or_replace || cv.alter) {
            return Err(SqlError::new(ER_WRONG_OBJECT, &[&db, &name, &"VIEW"]));
        }
        if cv.alter && existing.is_none() {
            return Err(SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]));
        }
        if is_table || (existing.is_some() && !cv.or_replace && !cv.alter) {
            return Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&name]));
        }
        let (definer_user, definer_host) = match &cv.definer {
            Some(u) => (u.user.clone(), u.host.clone()),
            None => (self.user.clone(), self.account_host.clone()),
        };
        if definer_user != self.user || definer_host != self.account_host {
            self.check_global(crate::privs::SUPER, "SUPER or SET_USER_ID")?;
        }
        // Compiled (not run) as it will be read: in its database, the view itself open (V3).
        let key = format!("{db}/{name}");
        self.views_open.push(key);
        let saved_db = self.db.replace(db.clone());
        let described = self.describe(&cv.query);
        let expanded = match &described {
            Ok(cols) => self.expanded_view_text(&cv.text, cols.len()),
            Err(_) => None,
        };
        self.db = saved_db;
        self.views_open.pop();
        let cols = described?;
        if !cv.columns.is_empty() && cv.columns.len() != cols.len() {
            return Err(SqlError::new(ER_VIEW_WRONG_LIST, &[]));
        }
        let exprs = super::item_exprs(&cv.query, cols.len());
        let mut columns: Vec<ViewColumn> = Vec::with_capacity(cols.len());
        for (i, (c, e)) in cols.iter().zip(exprs).enumerate() {
            let col_name = cv.columns.get(i).unwrap_or(&c.name).clone();
            if columns
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(&col_name))
            {
                return Err(SqlError::new(ER_DUP_FIELDNAME, &[&col_name]));
            }
            let spec = self.derived_column(c, e);
            let ty = SqlType::from_ast(&spec.ty, &col_name, None, None)?;
            columns.push(ViewColumn {
                name: col_name,
                sql_type: ty.persisted(),
                nullable: spec.nullable != Some(false),
            });
        }
        let def = ViewDef {
            algorithm: cv.algorithm.clone(),
            definer_user,
            definer_host,
            invoker: cv.invoker,
            check_option: cv.check_option.clone(),
            given_columns: cv.columns.clone(),
            columns,
            text: expanded.unwrap_or_else(|| cv.text.clone()),
            charset_client: self.vars.character_set_client().to_string(),
            collation_connection: self.vars.collation_connection().to_string(),
        };
        let _g = cat.ddl.lock();
        cat.put_view(&db, &name, def, cv.or_replace || cv.alter)?;
        Ok(Output::ok(0))
    }

    /// The view's SELECT text with each of its own wildcard items written as the columns it
    /// stands for now (V5), or None when it has none, or when the text so written would not
    /// make the `n` columns the SELECT makes (the text is then stored as written).
    fn expanded_view_text(&mut self, text: &str, n: usize) -> Option<String> {
        let sites = innoxide_sql::parse::view_wildcards(text);
        if sites.is_empty() {
            return None;
        }
        let mut out = text.to_string();
        for site in sites.iter().rev() {
            let ast::Statement::Select(q) = innoxide_sql::parse::parse(&site.probe).ok()? else {
                return None;
            };
            let cols = self.describe(&q).ok()?;
            let list: Vec<String> = cols
                .iter()
                .map(|c| {
                    let table = c.table.trim_start_matches('\0');
                    match table.is_empty() {
                        true => format!("{} AS {}", quoted(&c.name), quoted(&c.name)),
                        false => format!(
                            "{}.{} AS {}",
                            quoted(table),
                            quoted(&c.name),
                            quoted(&c.name)
                        ),
                    }
                })
                .collect();
            out.replace_range(site.span.0..site.span.1, &list.join(","));
        }
        let ast::Statement::Select(q) = innoxide_sql::parse::parse(&out).ok()? else {
            return None;
        };
        (self.describe(&q).ok()?.len() == n).then_some(out)
    }

    /// DROP VIEW: every name is checked before any view goes (1051 names the missing ones,
    /// notes with IF EXISTS; a table is 1347).
    pub(super) fn drop_views(
        &mut self,
        names: &[ast::ObjectName],
        if_exists: bool,
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for n in names {
            let db = self.db_of(n)?;
            if cat.view(&db, &n.name).is_some() {
                found.push((db, n.name.clone()));
            } else if cat.table(&db, &n.name).is_ok() {
                return Err(SqlError::new(ER_WRONG_OBJECT, &[&db, &n.name, &"VIEW"]));
            } else {
                missing.push(format!("{db}.{}", n.name));
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(SqlError::new(ER_BAD_TABLE_ERROR, &[&missing.join(",")]));
        }
        for m in missing {
            self.note(types::Level::Note, SqlError::new(ER_BAD_TABLE_ERROR, &[&m]));
        }
        let _g = cat.ddl.lock();
        for (db, name) in found {
            cat.drop_view(&db, &name)?;
        }
        Ok(Output::ok(0))
    }

    /// The rows of view `v` (V1, V2): its columns, named as the view names them, and its rows
    /// in a row buffer (none while only compiling).
    pub(crate) fn view_rows(
        &mut self,
        v: &SqlView,
        params: &[Datum],
    ) -> Result<(Vec<Column>, RowBuf), SqlError> {
        let key = format!("{}/{}", v.db, v.name);
        if self.views_open.contains(&key) {
            return Err(SqlError::new(ER_VIEW_RECURSIVE, &[&v.db, &v.name]));
        }
        let invalid = || SqlError::new(ER_VIEW_INVALID, &[&v.db, &v.name]);
        let Some(q) = &v.query else {
            return Err(invalid());
        };
        self.views_open.push(key);
        let saved_db = self.db.replace(v.db.clone());
        let r = self.with_view_rights(v, |s| s.select_stored(q, params));
        self.db = saved_db;
        self.views_open.pop();
        let (mut cols, rows) = r.map_err(|e| invalid_view(e, &v.db, &v.name))?;
        if cols.len() != v.def.columns.len() {
            return Err(invalid());
        }
        for (c, vc) in cols.iter_mut().zip(&v.def.columns) {
            c.name.clone_from(&vc.name);
            c.org_name.clone_from(&vc.name);
        }
        Ok((cols, rows))
    }
}

/// An error compiling view `db.name`'s SELECT as that view's: 1356 when the SELECT no
/// longer compiles (a name gone, a right lacking: V2), else `e` itself.
pub(crate) fn invalid_view(e: SqlError, db: &str, name: &str) -> SqlError {
    match e.code {
        1052 | 1054 | 1142 | 1143 | 1146 | 1222 => SqlError::new(ER_VIEW_INVALID, &[&db, &name]),
        _ => e,
    }
}

impl Session {
    /// Runs `f` with the rights view `v` gives over what it reads (V1): the definer's account
    /// for SQL SECURITY DEFINER, the session's own for INVOKER; the session's account is back
    /// when `f` returns.
    pub(crate) fn with_view_rights<R>(
        &mut self,
        v: &SqlView,
        f: impl FnOnce(&mut Session) -> R,
    ) -> R {
        if v.def.invoker {
            return f(self);
        }
        let privs = (u64::MAX, self.privs.1.clone());
        let saved = (
            std::mem::replace(&mut self.user, v.def.definer_user.clone()),
            std::mem::replace(&mut self.account_host, v.def.definer_host.clone()),
            std::mem::replace(&mut self.privs, privs),
            std::mem::take(&mut self.active_roles),
        );
        let r = f(self);
        (self.user, self.account_host, self.privs, self.active_roles) = saved;
        r
    }
}

/// The tables and views view `v` reads in its FROM clauses (derived tables and the views it
/// reads included, to a depth of 16), each as (database, name), added to `out` (LOCK TABLES).
pub(crate) fn view_tables(
    cat: &crate::catalog::Catalog,
    v: &SqlView,
    out: &mut Vec<(String, String)>,
    depth: usize,
) {
    fn walk(q: &ast::Select, db: &str, names: &mut Vec<(String, String)>) {
        fn from(tr: &ast::TableRef, db: &str, names: &mut Vec<(String, String)>) {
            match tr {
                ast::TableRef::Table { name, .. } => {
                    let d = name.db.clone().unwrap_or_else(|| db.to_string());
                    names.push((d, name.name.clone()));
                }
                ast::TableRef::Derived { subquery, .. } => walk(subquery, db, names),
                ast::TableRef::Join { left, right, .. } => {
                    from(left, db, names);
                    from(right, db, names);
                }
                ast::TableRef::SetOp { left, right, .. } => {
                    walk(left, db, names);
                    walk(right, db, names);
                }
                ast::TableRef::Recursive { .. } | ast::TableRef::JsonTable(_) => {}
            }
        }
        for tr in &q.from {
            from(tr, db, names);
        }
        for (_, u) in &q.unions {
            walk(u, db, names);
        }
    }
    let Some(q) = &v.query else {
        return;
    };
    let mut names = Vec::new();
    walk(q, &v.db, &mut names);
    for (db, name) in names {
        if out.contains(&(db.clone(), name.clone())) {
            continue;
        }
        if let Some(inner) = cat.view(&db, &name).filter(|_| depth < 16) {
            view_tables(cat, &inner, out, depth + 1);
        }
        out.push((db, name));
    }
}

/// SHOW CREATE VIEW's text: the clauses as stored, every name quoted, the SELECT as written.
pub(crate) fn create_view_text(v: &SqlView) -> String {
    let d = &v.def;
    let mut out = format!(
        "CREATE ALGORITHM={} DEFINER={}@{} SQL SECURITY {} VIEW {}",
        d.algorithm,
        quoted(&d.definer_user),
        quoted(&d.definer_host),
        if d.invoker { "INVOKER" } else { "DEFINER" },
        quoted(&v.name)
    );
    if !d.given_columns.is_empty() {
        let list: Vec<String> = d.given_columns.iter().map(|c| quoted(c)).collect();
        out.push_str(&format!(" ({})", list.join(",")));
    }
    out.push_str(" AS ");
    out.push_str(&d.text);
    if let Some(level) = &d.check_option {
        out.push_str(&format!(" WITH {level} CHECK OPTION"));
    }
    out
}
