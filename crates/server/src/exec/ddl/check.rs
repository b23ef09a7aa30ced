//! CHECK constraints (MySQL 8.0.16): validated and named when a table is created or altered,
//! kept in its `TableMeta` (catalog), tested on every row an INSERT, REPLACE, UPDATE (one or
//! several tables, ON DUPLICATE KEY UPDATE) or ALTER TABLE's copy writes.
//!
//! INVARIANTS
//! - H1: a stored check reads only its table's columns (none AUTO_INCREMENT; a column's own
//!   check only that column), calls no function whose value depends on the session, the
//!   clock or chance, and reads no variable or subquery: it is a function of the row alone.
//! - H2: check names are unique in their database (3822); an unnamed one gets
//!   `<table>_chk_<n>`, the smallest n not taken.
//! - H3: an enforced check fails a row only when it is FALSE (NULL passes): error 3819, or a
//!   warning and the row skipped with IGNORE; a NOT ENFORCED check is never evaluated.
//! - H4: a table's compiled checks are cached for one statement, by the table's description
//!   (`Arc<SqlTable>`, which DDL replaces).
//!
//! Latch order: the catalog's maps only (leaves), through `Catalog::table`.

use std::sync::Arc;

use innoxide_sql::ast::{self, Expr};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlMode, SqlType, Warnings};

use super::super::expr::{CExpr, Compiler, EType, Env, ScopeTable};
use super::super::Session;
use crate::catalog::{CheckMeta, SqlTable};

/// Functions a check may not call (their value is not the row's alone), as MySQL lists them.
const DISALLOWED: &[&str] = &[
    "benchmark",
    "connection_id",
    "curdate",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "curtime",
    "database",
    "found_rows",
    "get_lock",
    "is_free_lock",
    "is_used_lock",
    "last_insert_id",
    "load_file",
    "localtime",
    "localtimestamp",
    "master_pos_wait",
    "now",
    "rand",
    "random_bytes",
    "release_all_locks",
    "release_lock",
    "row_count",
    "schema",
    "session_user",
    "sleep",
    "sysdate",
    "system_user",
    "unix_timestamp",
    "user",
    "utc_date",
    "utc_time",
    "utc_timestamp",
    "uuid",
    "uuid_short",
    "version",
];

/// The compiled enforced checks of a table: (name, expression over the table's row).
pub(crate) type Checks = Arc<[(String, CExpr)]>;

/// A stored expression (a check's, a generated column's) parsed again from its text.
pub(crate) fn parse_stored(text: &str) -> Result<Expr, SqlError> {
    match innoxide_sql::parse::parse(&format!("SELECT {text}")) {
        Ok(ast::Statement::Select(q)) => match q.items.first() {
            Some(ast::SelectItem::Expr { expr, .. }) if q.items.len() == 1 => Ok(expr.clone()),
            _ => Err(SqlError::new(ER_INTERNAL_ERROR, &[&text])),
        },
        Ok(_) => Err(SqlError::new(ER_INTERNAL_ERROR, &[&text])),
        Err(e) => Err(e),
    }
}

/// The columns a stored check reads (lower-case), for DROP and RENAME of a column (3959).
pub(super) fn check_columns(c: &CheckMeta) -> Vec<String> {
    stored_columns(&c.text)
}

/// The columns a stored expression's text reads (lower-case).
pub(super) fn stored_columns(text: &str) -> Vec<String> {
    match parse_stored(text) {
        Ok(e) => parts(&e)
            .into_iter()
            .filter_map(|p| match p {
                Part::Column(c) => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// What an expression kept with a table (a CHECK constraint's, a generated column's) reads
/// or calls that H1 (and generated.rs) rule on, in the order written.
pub(super) enum Part {
    Column(String),
    /// A function whose value is not the row's alone.
    Function(String),
    /// A subquery or a `?`.
    Query,
    Variable,
}

/// The parts of `e` (its columns, disallowed functions, subqueries, variables).
pub(super) fn parts(e: &Expr) -> Vec<Part> {
    let mut out = Vec::new();
    let mut e = e.clone();
    e.visit_mut(&mut |x| {
        match x {
            Expr::Column { name, .. } => out.push(Part::Column(name.clone())),
            Expr::Function { name, .. } if DISALLOWED.contains(&name.as_str()) => {
                out.push(Part::Function(name.clone()))
            }
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. }
            | Expr::Quantified { .. }
            | Expr::Param(_) => out.push(Part::Query),
            Expr::UserVar(_) | Expr::SysVar { .. } => out.push(Part::Variable),
            _ => {}
        }
        true
    });
    out
}

/// H1 for check `name`: what its expression may not hold.
fn validate(
    name: &str,
    spec: &ast::CheckSpec,
    cols: &[(String, SqlType, bool)],
) -> Result<(), SqlError> {
    for part in parts(&spec.expr) {
        let err = match part {
            Part::Column(c) => match cols.iter().find(|k| k.0.eq_ignore_ascii_case(&c)) {
                None => Some(SqlError::new(
                    ER_CHECK_CONSTRAINT_REFERS_UNKNOWN_COLUMN,
                    &[&name, &c],
                )),
                Some(k) if k.2 => Some(SqlError::new(
                    ER_CHECK_CONSTRAINT_REFERS_AUTO_INCREMENT_COLUMN,
                    &[&name],
                )),
                Some(_)
                    if spec
                        .column
                        .as_ref()
                        .is_some_and(|own| !own.eq_ignore_ascii_case(&c)) =>
                {
                    Some(SqlError::new(
                        ER_COLUMN_CHECK_CONSTRAINT_REFERENCES_OTHER_COLUMN,
                        &[&name],
                    ))
                }
                Some(_) => None,
            },
            Part::Function(f) => Some(SqlError::new(
                ER_CHECK_CONSTRAINT_NAMED_FUNCTION_IS_NOT_ALLOWED,
                &[&name, &f],
            )),
            Part::Query => Some(SqlError::new(
                ER_CHECK_CONSTRAINT_FUNCTION_IS_NOT_ALLOWED,
                &[&name],
            )),
            Part::Variable => Some(SqlError::new(ER_CHECK_CONSTRAINT_VARIABLES, &[&name])),
        };
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(())
}

impl Session {
    /// The CHECK constraints `specs` of table `db.table`, validated (H1) and named (H2) after
    /// the table's `existing` ones; `cols` are the table's columns (name, type,
    /// AUTO_INCREMENT).
    pub(super) fn check_metas(
        &mut self,
        (db, table): (&str, &str),
        specs: &[ast::CheckSpec],
        existing: &[CheckMeta],
        cols: &[(String, SqlType, bool)],
    ) -> Result<Vec<CheckMeta>, SqlError> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let cat = self.server.catalog.clone();
        let mut taken: Vec<String> = existing.iter().map(|c| c.name.to_lowercase()).collect();
        taken.extend(cat.names_in_db(db, table, |m| {
            m.checks.iter().map(|c| c.name.clone()).collect()
        }));
        let scope = [ScopeTable {
            name: table.to_string(),
            db: db.to_string(),
            columns: cols
                .iter()
                .map(|(n, ty, _)| (n.clone(), EType::Column(Box::new(ty.clone())), false))
                .collect(),
            offset: 0,
            table: None,
        }];
        let mut out = Vec::with_capacity(specs.len());
        for spec in specs {
            let name = match &spec.name {
                Some(n) => {
                    if taken.contains(&n.to_lowercase()) {
                        return Err(SqlError::new(ER_CHECK_CONSTRAINT_DUP_NAME, &[n]));
                    }
                    n.clone()
                }
                None => (1..)
                    .map(|i| format!("{table}_chk_{i}"))
                    .find(|n| !taken.contains(&n.to_lowercase()))
                    .unwrap_or_default(),
            };
            taken.push(name.to_lowercase());
            validate(&name, spec, cols)?;
            Compiler::new(&scope, "check constraint").compile(&spec.expr, self)?;
            out.push(CheckMeta {
                name,
                text: spec.text.clone(),
                enforced: spec.enforced,
            });
        }
        Ok(out)
    }

    /// The enforced checks of `t`, compiled (H4); None if it has none.
    pub(crate) fn table_checks(&mut self, t: &Arc<SqlTable>) -> Result<Option<Checks>, SqlError> {
        if !t.meta.checks.iter().any(|c| c.enforced) {
            return Ok(None);
        }
        if let Some((_, c)) = self.check_cache.iter().find(|(k, _)| Arc::ptr_eq(k, t)) {
            return Ok(Some(c.clone()));
        }
        let scope = [ScopeTable::of_table(t, &t.name, 0)];
        let mut out = Vec::new();
        for c in t.meta.checks.iter().filter(|c| c.enforced) {
            let e = parse_stored(&c.text)?;
            let ce = Compiler::new(&scope, "check constraint")
                .compile(&e, self)?
                .0;
            out.push((c.name.clone(), ce));
        }
        let checks: Checks = out.into();
        self.check_cache.push((t.clone(), checks.clone()));
        Ok(Some(checks))
    }
}

/// Whether `row` (the table's values, in column order) passes `checks` (H3): Err(3819), or
/// Ok(false) after a warning with `ignore`.
pub(crate) fn row_passes(
    checks: &[(String, CExpr)],
    row: &[Datum],
    mode: SqlMode,
    ignore: bool,
    w: &mut Warnings,
) -> Result<bool, SqlError> {
    for (name, ce) in checks {
        if ce.eval(&Env::new(row, &[], mode), w)?.truth() == Some(false) {
            let e = SqlError::new(ER_CHECK_CONSTRAINT_VIOLATED, &[name]);
            if !ignore {
                return Err(e);
            }
            w.push_error(types::Level::Warning, e);
            return Ok(false);
        }
    }
    Ok(true)
}
