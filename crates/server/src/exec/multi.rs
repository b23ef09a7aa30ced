//! Multiple-table UPDATE and DELETE: `UPDATE t1 JOIN t2 ON ... SET t1.a = t2.b WHERE ...`,
//! `UPDATE t1, t2 SET ...`, `DELETE t1 FROM t1 JOIN t2 ...`, `DELETE FROM t1 USING t1, t2 ...`.
//!
//! INVARIANTS
//! - M1: the join is read once, as the SELECT of each target table's primary key and each
//!   assigned value over the statement's FROM and WHERE, `FOR UPDATE OF` each target and
//!   `FOR SHARE` otherwise: a target's rows are locked exclusively, the rows of the tables it
//!   only reads with share locks, as InnoDB does; its rows go through a row buffer (select.rs
//!   S8), so memory stays bounded whatever the join's size.
//! - M2: each target row changes once, however many joined rows it takes part in: with the
//!   values of the first (MySQL's rule); a target whose side of an outer join is
//!   NULL-extended in a joined row is not changed by that row. The keys of the rows changed
//!   so far are held per target (MySQL keeps them in a temporary table): memory grows with
//!   the number of rows the statement changes, not with the join's size.
//! - M3: a row changes by primary key through the single-table paths (`apply_update`: every
//!   value through `types::store`, dml.rs D1; `Trx::delete`), re-read under its lock.
//! - M4: targets are base tables of the FROM clause (1288 for a derived table or JSON_TABLE,
//!   1109 for a name not in FROM); UPDATE or DELETE is needed on each target, SELECT on
//!   every table read (the SELECT checks it).
//!
//! No latches: the engine's row locks, taken by the SELECT.

use std::collections::HashSet;
use std::sync::Arc;

use innoxide_engine::LockRead;
use innoxide_sql::ast::{self, Expr, LockClause, ObjectName, SelectItem, TableRef};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::CExpr;
use super::select::load_row;
use super::sort::encode_values;
use super::{Output, Session};
use crate::catalog::{engine_error, SqlTable};

/// A table a multiple-table statement changes: the name the statement gives it, the table,
/// and (UPDATE) its assignments as (column, position of the value in the SELECT's row).
struct Target {
    alias: String,
    table: Arc<SqlTable>,
    sets: Vec<(usize, usize)>,
    /// The privileges needed that the account holds on some columns only (access.rs A3).
    by_column: u64,
}

/// The FROM clause's base tables: (name the statement gives it, table name), and the names
/// of its other items (derived tables, JSON_TABLEs), which cannot be changed.
fn leaves(tr: &TableRef, bases: &mut Vec<(String, ObjectName)>, others: &mut Vec<String>) {
    match tr {
        TableRef::Table { name, alias, .. } => bases.push((
            alias.clone().unwrap_or_else(|| name.name.clone()),
            name.clone(),
        )),
        TableRef::Join { left, right, .. } => {
            leaves(left, bases, others);
            leaves(right, bases, others);
        }
        TableRef::Derived { alias, .. } | TableRef::Recursive { alias, .. } => {
            others.push(alias.clone())
        }
        TableRef::JsonTable(jt) => others.push(jt.alias.clone()),
        TableRef::SetOp { alias, .. } => others.push(alias.clone()),
    }
}

/// `SELECT items FROM from WHERE selection FOR SHARE FOR UPDATE OF target ...`: how a
/// statement over a join that changes `targets` reads it (M1).
pub(crate) fn join_select(
    items: Vec<SelectItem>,
    from: &[TableRef],
    selection: &Option<Expr>,
    targets: &[&str],
) -> ast::Select {
    let mut lock_of: Vec<(String, LockClause)> = Vec::new();
    for t in targets {
        if !lock_of.iter().any(|(n, _)| n.eq_ignore_ascii_case(t)) {
            let update = LockClause::ForUpdate {
                nowait: false,
                skip_locked: false,
            };
            lock_of.push((t.to_string(), update));
        }
    }
    ast::Select {
        distinct: false,
        items,
        from: from.to_vec(),
        selection: selection.clone(),
        group_by: Vec::new(),
        having: None,
        order_by: Vec::new(),
        limit: None,
        offset: None,
        lock: Some(LockClause::ForShare {
            nowait: false,
            skip_locked: false,
        }),
        lock_of,
        unions: Vec::new(),
    }
}

/// `leaves` of every item of `from`.
fn from_items(from: &[TableRef]) -> (Vec<(String, ObjectName)>, Vec<String>) {
    let (mut bases, mut others) = (Vec::new(), Vec::new());
    for tr in from {
        leaves(tr, &mut bases, &mut others);
    }
    (bases, others)
}

impl Session {
    /// The target named `alias` (M4): a base table of `from`, with privilege `need` on it.
    fn target(
        &mut self,
        from: &[TableRef],
        alias: &str,
        what: &str,
        need: u64,
    ) -> Result<Target, SqlError> {
        let (bases, others) = from_items(from);
        if others.iter().any(|o| o.eq_ignore_ascii_case(alias)) {
            return Err(SqlError::new(ER_NON_UPDATABLE_TABLE, &[&alias, &what]));
        }
        let Some((shown, name)) = bases.iter().find(|b| b.0.eq_ignore_ascii_case(alias)) else {
            return Err(SqlError::new(ER_UNKNOWN_TABLE, &[&alias, &"MULTI DELETE"]));
        };
        let db = self.db_of(name)?;
        let by_column = self.check_table_or_columns(&db, &name.name, need)?;
        Ok(Target {
            alias: shown.clone(),
            table: self.open_table(&db, &name.name)?,
            sets: Vec::new(),
            by_column,
        })
    }

    /// Whether some item of `from` goes by `alias`.
    fn names_table(&self, from: &[TableRef], alias: &str) -> bool {
        let (bases, others) = from_items(from);
        bases
            .iter()
            .map(|b| &b.0)
            .chain(&others)
            .any(|n| n.eq_ignore_ascii_case(alias))
    }

    /// The name of the one base table of `from` that has column `col` (1054 if none, 1052 if
    /// several).
    fn table_of_column(&mut self, from: &[TableRef], col: &str) -> Result<String, SqlError> {
        let (bases, _) = from_items(from);
        let mut found = None;
        for (alias, name) in &bases {
            let db = self.db_of(name)?;
            let t = self.open_table(&db, &name.name)?;
            if t.column(col).is_some() {
                if found.is_some() {
                    return Err(SqlError::new(ER_NON_UNIQ_ERROR, &[&col, &"field list"]));
                }
                found = Some(alias.clone());
            }
        }
        found.ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[&col, &"field list"]))
    }

    /// The SELECT of M1: each target's primary key, then `values`.
    fn read_join(
        &mut self,
        targets: &[Target],
        values: Vec<Expr>,
        from: &[TableRef],
        selection: &Option<Expr>,
        params: &[Datum],
    ) -> Result<super::rowbuf::RowBuf, SqlError> {
        let mut items = Vec::new();
        for tg in targets {
            for &c in tg.table.pk() {
                let col = &tg.table.columns[c];
                // A table without a primary key: its hidden row id (expr.rs `resolve`).
                let name = if col.meta.hidden {
                    format!("\0{}", col.name)
                } else {
                    col.name.clone()
                };
                items.push(Expr::Column {
                    table: Some(tg.alias.clone()),
                    name,
                });
            }
        }
        items.extend(values);
        let aliases: Vec<&str> = targets.iter().map(|t| t.alias.as_str()).collect();
        let items = items
            .into_iter()
            .map(|expr| SelectItem::Expr {
                expr,
                alias: None,
                text: String::new(),
            })
            .collect();
        Ok(self
            .select_stored(&join_select(items, from, selection, &aliases), params)?
            .1)
    }

    /// Target `tg`'s row whose primary key row `row` holds from `at` (None: NULL-extended,
    /// already changed by this statement (`seen`), or gone), locked (M2, M3).
    fn target_row(
        &mut self,
        tg: &Target,
        row: &[Datum],
        at: usize,
        seen: &mut HashSet<Box<[u8]>>,
    ) -> Result<Option<Vec<innoxide_engine::Value>>, SqlError> {
        let t = &tg.table;
        let pk = &row[at..at + t.pk().len()];
        if pk.iter().any(Datum::is_null) || !seen.insert(encode_values(pk)) {
            return Ok(None);
        }
        let mut w = Warnings::default();
        let mut key = Vec::with_capacity(pk.len());
        for (d, &c) in pk.iter().zip(t.pk()) {
            let col = &t.columns[c];
            let mode = self.vars.sql_mode();
            key.push(types::store(
                d,
                &col.ty,
                mode,
                (&t.name, &col.name),
                1,
                &mut w,
            )?);
        }
        let et = t.table.clone();
        self.trx()?
            .get_locking(&et, &key, LockRead::Exclusive)
            .map_err(engine_error)
    }

    pub(crate) fn update_multi(
        &mut self,
        u: &ast::UpdateMulti,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let mut targets: Vec<Target> = Vec::new();
        let mut values = Vec::with_capacity(u.assignments.len());
        for (i, (table, col, e)) in u.assignments.iter().enumerate() {
            let alias = match table {
                Some(t) => t.clone(),
                None => self.table_of_column(&u.from, col)?,
            };
            // A qualifier that is no table of FROM: MySQL's unknown column.
            let unknown = || {
                SqlError::new(
                    ER_BAD_FIELD_ERROR,
                    &[&format!("{alias}.{col}"), &"field list"],
                )
            };
            if !self.names_table(&u.from, &alias) {
                return Err(unknown());
            }
            let ti = match targets
                .iter()
                .position(|t| t.alias.eq_ignore_ascii_case(&alias))
            {
                Some(ti) => ti,
                None => {
                    let tg = self.target(&u.from, &alias, "UPDATE", crate::privs::UPDATE)?;
                    targets.push(tg);
                    targets.len() - 1
                }
            };
            let c = targets[ti].table.column(col).ok_or_else(unknown)?;
            if targets[ti].table.columns[c].meta.generated.is_some() {
                return Err(super::dml::not_generated(&targets[ti].table, c));
            }
            targets[ti].sets.push((c, i));
            values.push(e.clone());
        }
        // UPDATE held on some columns only: each column set must be one (the join's SELECT
        // checks the columns it reads).
        for tg in &targets {
            let t = &tg.table;
            let set = tg.sets.iter().map(|(c, _)| t.columns[*c].name.as_str());
            self.check_columns(&t.db, &t.name, tg.by_column, set)?;
        }
        let mut buf = self.read_join(&targets, values, &u.from, &u.selection, params)?;
        let keys: usize = targets.iter().map(|t| t.table.pk().len()).sum();
        let mut seen: Vec<HashSet<Box<[u8]>>> = targets.iter().map(|_| HashSet::new()).collect();
        let mut w = Warnings::default();
        let (mut matched, mut changed) = (0u64, 0u64);
        for j in 0..buf.len() {
            let row = buf.row(j)?.to_vec();
            let mut at = 0;
            for (tg, seen) in targets.iter().zip(&mut seen) {
                let npk = tg.table.pk().len();
                let old = self.target_row(tg, &row, at, seen)?;
                at += npk;
                let Some(old) = old else {
                    continue;
                };
                matched += 1;
                let sets: Vec<(usize, CExpr)> = tg
                    .sets
                    .iter()
                    .map(|&(c, i)| (c, CExpr::Const(row[keys + i].clone())))
                    .collect();
                let mut env_row = load_row(&tg.table, &old);
                let t = tg.table.clone();
                if self.apply_update(
                    &t,
                    &old,
                    &sets,
                    &mut env_row,
                    matched,
                    &mut w,
                    params,
                    u.ignore,
                )? {
                    changed += 1;
                }
            }
        }
        Ok(self.updated(matched, changed, w))
    }

    pub(crate) fn delete_multi(
        &mut self,
        d: &ast::DeleteMulti,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let mut targets: Vec<Target> = Vec::new();
        for name in &d.targets {
            if targets
                .iter()
                .any(|t| t.alias.eq_ignore_ascii_case(&name.name))
            {
                continue;
            }
            targets.push(self.target(&d.from, &name.name, "DELETE", crate::privs::DELETE)?);
        }
        let mut buf = self.read_join(&targets, Vec::new(), &d.from, &d.selection, params)?;
        let mut seen: Vec<HashSet<Box<[u8]>>> = targets.iter().map(|_| HashSet::new()).collect();
        let mut n = 0u64;
        for j in 0..buf.len() {
            let row = buf.row(j)?.to_vec();
            let mut at = 0;
            for (tg, seen) in targets.iter().zip(&mut seen) {
                let old = self.target_row(tg, &row, at, seen)?;
                at += tg.table.pk().len();
                let Some(old) = old else {
                    continue;
                };
                self.fk_parent_change(&tg.table, &old, None, 0)?;
                let key = super::dml::pk_of(&tg.table, &old);
                if self
                    .trx()?
                    .delete(&tg.table.table, &key)
                    .map_err(engine_error)?
                {
                    n += 1;
                }
            }
        }
        self.row_count = n as i64;
        Ok(Output::ok(n))
    }
}
