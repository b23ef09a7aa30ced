//! FOREIGN KEY constraints, as InnoDB keeps them: defined with the child table (catalog
//! `FkMeta`), checked row by row when a child row is written and when a parent row is deleted
//! or its referenced columns change, with RESTRICT / NO ACTION (refused), CASCADE and SET
//! NULL.
//!
//! INVARIANTS
//! - F1: a stored foreign key names as many columns on both sides, of compatible types; its
//!   parent has an index whose first columns are the referenced ones (the primary key or a
//!   secondary index) and its child one whose first columns are its own (made with the
//!   constraint when missing), so every check below is an index lookup.
//! - F2: a child row written with no NULL in its key columns has a parent row with those
//!   values, which the writing transaction holds a shared lock on (so it cannot go before
//!   the writer commits): else 1452. The test comes after the row is written, so a row may
//!   reference itself or a row written before it by the same statement.
//! - F3: before a parent row goes or its referenced values change, the child rows holding
//!   its old values are locked exclusively and, by the constraint's action, refused (1451),
//!   deleted or changed (CASCADE) or set to NULL (SET NULL), each change checked in turn as
//!   a parent change of its own, at most 15 deep (3008).
//! - F4: with foreign_key_checks = 0 none of this runs, and DDL takes a constraint whose
//!   parent does not exist yet, as MySQL does (what mysqldump's output relies on).
//! - F5: a table or column a foreign key references may be renamed: the children's
//!   definitions are rewritten to the new names by the same atomic engine step that renames
//!   (`renamed_parent_options`, engine `rename_tables_with_options`).
//!
//! Latch order: the catalog's `fk_map` (then the engine's dictionary maps, to build it) and
//! the table caches' mutexes (leaves), released before any engine call; row locks through the
//! session's transaction.

use std::sync::Arc;

use innoxide_engine::{KeyBound, LockRead, Value};
use innoxide_sql::ast::{self, FkAction};
use innoxide_sql::error::*;
use innoxide_sql::types::SqlType;

use super::typeinfo::TypeInfo;
use super::Session;
use crate::catalog::{engine_error, FkMeta, SqlTable};

/// Cascades nest at most this deep (InnoDB's limit).
const MAX_DEPTH: usize = 15;

/// Renames of parent tables and columns for `renamed_parent_options`: (parent `db/name`
/// before, after) and, for one parent (`db/name` before), its columns renamed in order.
pub(crate) struct ParentRenames<'a> {
    pub tables: &'a [(String, String)],
    pub columns: Option<(&'a str, &'a [(String, String)])>,
}

/// The new options of every table whose foreign keys reference a parent `renames` moves or
/// whose columns it renames (F5), but `skip` (`db/name`): (the child's `db/name` as the
/// statement leaves it, its options).
pub(crate) fn renamed_parent_options(
    cat: &crate::catalog::Catalog,
    renames: &ParentRenames,
    skip: Option<&str>,
) -> Result<Vec<(String, String)>, SqlError> {
    if !cat.any_fk_parent() {
        return Ok(Vec::new());
    }
    let map = cat.fk_map();
    let moved = |n: &str| {
        renames
            .tables
            .iter()
            .find(|(from, _)| from == n)
            .map(|(_, to)| to.clone())
    };
    let mut children: Vec<(String, String)> = Vec::new();
    let parents = renames
        .tables
        .iter()
        .map(|(from, _)| from.as_str())
        .chain(renames.columns.map(|(p, _)| p));
    for parent in parents {
        for (cdb, cname, _) in map.by_parent.get(parent).into_iter().flatten() {
            let c = (cdb.clone(), cname.clone());
            if !children.contains(&c) && skip != Some(&format!("{cdb}/{cname}")) {
                children.push(c);
            }
        }
    }
    let mut out = Vec::new();
    for (cdb, cname) in children {
        let mut meta = cat.table(&cdb, &cname)?.meta.clone();
        for fk in &mut meta.foreign_keys {
            let parent = format!("{}/{}", fk.parent_db, fk.parent_table);
            if let Some((p, cols)) = renames.columns {
                if p == parent {
                    rename_columns(&mut fk.parent_columns, cols);
                }
            }
            if let Some(to) = moved(&parent) {
                let (d, t) = to.split_once('/').unwrap_or_default();
                (fk.parent_db, fk.parent_table) = (d.to_string(), t.to_string());
            }
        }
        let child = format!("{cdb}/{cname}");
        let json =
            serde_json::to_string(&meta).map_err(|e| SqlError::new(ER_INTERNAL_ERROR, &[&e]))?;
        out.push((moved(&child).unwrap_or(child), json));
    }
    Ok(out)
}

/// Applies column renames (old, new), in order, to the names in `cols`.
pub(crate) fn rename_columns(cols: &mut [String], renames: &[(String, String)]) {
    for c in cols {
        for (old, new) in renames {
            if c.eq_ignore_ascii_case(old) {
                c.clone_from(new);
            }
        }
    }
}

/// The constraint as errors 1451/1452 write it (`sep` ", ") and SHOW CREATE TABLE does
/// (`sep` ",").
pub(crate) fn fk_text_sep(fk: &FkMeta, child_db: &str, sep: &str) -> String {
    let list = |v: &[String]| {
        v.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let parent = if fk.parent_db == child_db {
        format!("`{}`", fk.parent_table)
    } else {
        format!("`{}`.`{}`", fk.parent_db, fk.parent_table)
    };
    let mut s = format!(
        "CONSTRAINT `{}` FOREIGN KEY ({}) REFERENCES {parent} ({})",
        fk.name,
        list(&fk.columns),
        list(&fk.parent_columns)
    );
    for (what, a) in [("DELETE", &fk.on_delete), ("UPDATE", &fk.on_update)] {
        if a != "NO ACTION" {
            s.push_str(&format!(" ON {what} {a}"));
        }
    }
    s
}

/// The constraint as errors 1451/1452 write it.
pub(crate) fn fk_text(fk: &FkMeta, child_db: &str) -> String {
    fk_text_sep(fk, child_db, ", ")
}

/// The name of the index of `parent` a foreign key's `columns` use (PRIMARY, an index's
/// name, or "" when none does any more): information_schema's UNIQUE_CONSTRAINT_NAME.
pub(crate) fn parent_index_name(parent: &SqlTable, columns: &[String]) -> String {
    match positions(parent, columns).map(|c| index_on(parent, &c)) {
        Some(Ok(None)) => "PRIMARY".into(),
        Some(Ok(Some(n))) => n,
        _ => String::new(),
    }
}

/// The index of `t` whose first columns are `cols` (in order): None for the primary key,
/// Some(name) for a secondary index; Err if there is none.
fn index_on(t: &SqlTable, cols: &[usize]) -> Result<Option<String>, ()> {
    if t.pk().starts_with(cols) {
        return Ok(None);
    }
    t.table
        .def
        .indexes
        .iter()
        .find(|i| i.columns.starts_with(cols))
        .map(|i| Some(i.name.clone()))
        .ok_or(())
}

/// Whether a child column of type `c` may reference a parent column of type `p` (F1): the
/// same type and sign; strings of the same character set (lengths may differ).
fn compatible(c: &SqlType, p: &SqlType) -> bool {
    if c.is_string() || p.is_string() {
        return c.is_string() && p.is_string() && c.charset_name() == p.charset_name();
    }
    c.data_type() == p.data_type() && c.unsigned == p.unsigned
}

/// The columns of a table being defined, for F1's checks: (name, type, nullable).
pub(crate) type ColumnsOf<'a> = &'a [(String, SqlType, bool)];

/// A foreign key checked and named, and the index to make for it (name, columns) when the
/// child has none that serves it.
pub(crate) type NewFk = (FkMeta, Option<(String, Vec<usize>)>);

/// A parent's columns (name, type) and its indexes' columns, the primary key's first.
type ParentShape = (Vec<(String, SqlType)>, Vec<Vec<usize>>);

impl Session {
    /// The foreign keys `specs` of table `db.table` (whose columns are `cols` and whose
    /// indexes' columns are `indexes`, the primary key first) checked (F1, F4) and named
    /// (`<table>_ibfk_<n>` unless named; unique in the database: 1826), after `existing`;
    /// with each, the columns of the index to make for it when the child has none.
    pub(crate) fn fk_metas(
        &mut self,
        (db, table): (&str, &str),
        specs: &[ast::ForeignKeySpec],
        existing: &[FkMeta],
        cols: ColumnsOf<'_>,
        indexes: &[Vec<usize>],
    ) -> Result<Vec<NewFk>, SqlError> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let cat = self.server.catalog.clone();
        let checks = self.vars.foreign_key_checks();
        let mut taken: Vec<String> = existing.iter().map(|f| f.name.to_lowercase()).collect();
        taken.extend(cat.names_in_db(db, table, |m| {
            m.foreign_keys.iter().map(|f| f.name.clone()).collect()
        }));
        let mut out: Vec<NewFk> = Vec::new();
        let mut made: Vec<Vec<usize>> = indexes.to_vec();
        for spec in specs {
            let name = match &spec.name {
                Some(n) if taken.contains(&n.to_lowercase()) => {
                    return Err(SqlError::new(ER_FK_DUP_NAME, &[n]));
                }
                Some(n) => n.clone(),
                None => (1..)
                    .map(|i| format!("{table}_ibfk_{i}"))
                    .find(|n| !taken.contains(&n.to_lowercase()))
                    .unwrap_or_default(),
            };
            taken.push(name.to_lowercase());
            if spec.on_delete == FkAction::SetDefault || spec.on_update == FkAction::SetDefault {
                return Err(SqlError::new(ER_CANNOT_ADD_FOREIGN, &[]));
            }
            if spec.columns.len() != spec.parent_columns.len() || spec.columns.is_empty() {
                return Err(SqlError::new(
                    ER_WRONG_FK_DEF,
                    &[&name, &"Key reference and table reference don't match"],
                ));
            }
            let mut mine = Vec::with_capacity(spec.columns.len());
            for c in &spec.columns {
                let i = cols
                    .iter()
                    .position(|k| k.0.eq_ignore_ascii_case(c))
                    .ok_or_else(|| SqlError::new(ER_KEY_COLUMN_DOES_NOT_EXITS, &[c]))?;
                let set_null =
                    spec.on_delete == FkAction::SetNull || spec.on_update == FkAction::SetNull;
                if set_null && !cols[i].2 {
                    return Err(SqlError::new(ER_FK_COLUMN_NOT_NULL, &[c, &name]));
                }
                mine.push(i);
            }
            let pdb = self.db_of(&spec.parent)?;
            let pname = spec.parent.name.clone();
            // The parent: this very table, another one, or (F4) one not made yet.
            let parent: Option<ParentShape> = if pdb == db && pname == table {
                Some((
                    cols.iter().map(|c| (c.0.clone(), c.1.clone())).collect(),
                    indexes.to_vec(),
                ))
            } else {
                match cat.table(&pdb, &pname) {
                    Ok(p) => {
                        let pc = p.visible().map(|(_, c)| (c.name.clone(), c.ty.clone()));
                        let mut ix = vec![p.pk().to_vec()];
                        ix.extend(p.table.def.indexes.iter().map(|i| i.columns.clone()));
                        Some((pc.collect(), ix))
                    }
                    Err(_) if !checks => None,
                    Err(_) => {
                        return Err(SqlError::new(ER_FK_CANNOT_OPEN_PARENT, &[&pname]));
                    }
                }
            };
            let mut parent_columns = spec.parent_columns.clone();
            if let Some((pcols, pix)) = parent {
                let mut theirs = Vec::with_capacity(spec.parent_columns.len());
                for (k, c) in spec.parent_columns.iter().enumerate() {
                    let i = pcols
                        .iter()
                        .position(|p| p.0.eq_ignore_ascii_case(c))
                        .ok_or_else(|| {
                            SqlError::new(ER_FK_NO_COLUMN_PARENT, &[c, &name, &pname])
                        })?;
                    if !compatible(&cols[mine[k]].1, &pcols[i].1) {
                        return Err(SqlError::new(
                            ER_FK_INCOMPATIBLE_COLUMNS,
                            &[&cols[mine[k]].0, &pcols[i].0, &name],
                        ));
                    }
                    parent_columns[k].clone_from(&pcols[i].0);
                    theirs.push(i);
                }
                if !pix.iter().any(|ix| ix.starts_with(&theirs)) {
                    return Err(SqlError::new(ER_FK_NO_INDEX_PARENT, &[&name, &pname]));
                }
            }
            let index = if made.iter().any(|ix| ix.starts_with(&mine)) {
                None
            } else {
                made.push(mine.clone());
                // Named as written, else after the constraint's given name, else after its
                // first column (as MySQL names it).
                let ix_name = spec
                    .index
                    .clone()
                    .or_else(|| spec.name.clone())
                    .unwrap_or_else(|| cols[mine[0]].0.clone());
                Some((ix_name, mine.clone()))
            };
            let action = |a: FkAction| a.name().to_string();
            out.push((
                FkMeta {
                    name,
                    columns: mine.iter().map(|&i| cols[i].0.clone()).collect(),
                    parent_db: pdb,
                    parent_table: pname,
                    parent_columns,
                    on_delete: action(spec.on_delete),
                    on_update: action(spec.on_update),
                },
                index,
            ));
        }
        Ok(out)
    }

    /// F2 for a row of `t` just written (`new`; `old` for an UPDATE: only keys whose values
    /// changed are checked).
    pub(crate) fn fk_check_child(
        &mut self,
        t: &Arc<SqlTable>,
        new: &[Value],
        old: Option<&[Value]>,
    ) -> Result<(), SqlError> {
        if t.meta.foreign_keys.is_empty() || !self.vars.foreign_key_checks() {
            return Ok(());
        }
        for fk in &t.meta.foreign_keys {
            let Some(key) = key_values(t, &fk.columns, new) else {
                continue;
            };
            if old.and_then(|o| key_values(t, &fk.columns, o)).as_ref() == Some(&key) {
                continue;
            }
            let fails = || {
                SqlError::new(
                    ER_NO_REFERENCED_ROW_2,
                    &[&format!("`{}`.`{}`, {}", t.db, t.name, fk_text(fk, &t.db))],
                )
            };
            let Ok(p) = self.open_table(&fk.parent_db, &fk.parent_table) else {
                return Err(fails());
            };
            let Some(pcols) = positions(&p, &fk.parent_columns) else {
                return Err(fails());
            };
            let Ok(index) = index_on(&p, &pcols) else {
                return Err(fails());
            };
            if self
                .fk_rows(&p, index, key, LockRead::Shared, Some(1))?
                .is_empty()
            {
                return Err(fails());
            }
        }
        Ok(())
    }

    /// F3 before the row `old` of `t` is deleted (`new` None) or changed to `new`.
    pub(crate) fn fk_parent_change(
        &mut self,
        t: &Arc<SqlTable>,
        old: &[Value],
        new: Option<&[Value]>,
        depth: usize,
    ) -> Result<(), SqlError> {
        let cat = self.server.catalog.clone();
        if !cat.any_fk_parent() || !self.vars.foreign_key_checks() {
            return Ok(());
        }
        let map = cat.fk_map();
        let Some(children) = map.by_parent.get(&format!("{}/{}", t.db, t.name)) else {
            return Ok(());
        };
        if depth >= MAX_DEPTH {
            return Err(SqlError::new(ER_FK_DEPTH_EXCEEDED, &[&MAX_DEPTH]));
        }
        for (cdb, cname, i) in children.clone() {
            let child = self.open_table(&cdb, &cname)?;
            let Some(fk) = child.meta.foreign_keys.get(i).cloned() else {
                continue;
            };
            let Some(key) = key_values(t, &fk.parent_columns, old) else {
                continue;
            };
            let new_key = new.and_then(|n| key_values(t, &fk.parent_columns, n));
            if new.is_some() && new_key.as_ref() == Some(&key) {
                continue;
            }
            let action = if new.is_some() {
                &fk.on_update
            } else {
                &fk.on_delete
            };
            let refused = || {
                SqlError::new(
                    ER_ROW_IS_REFERENCED_2,
                    &[&format!("`{cdb}`.`{cname}`, {}", fk_text(&fk, &cdb))],
                )
            };
            let (Some(ccols), Some(_)) = (
                positions(&child, &fk.columns),
                positions(t, &fk.parent_columns),
            ) else {
                return Err(refused());
            };
            let Ok(index) = index_on(&child, &ccols) else {
                return Err(refused());
            };
            let limit = matches!(action.as_str(), "RESTRICT" | "NO ACTION").then_some(2);
            let mut rows = self.fk_rows(&child, index, key, LockRead::Exclusive, limit)?;
            // The row itself, when it references itself, is not its own child.
            if Arc::ptr_eq(&child.table, &t.table) {
                let me = super::dml::pk_of(t, old);
                rows.retain(|r| super::dml::pk_of(t, r) != me);
            }
            if rows.is_empty() {
                continue;
            }
            match action.as_str() {
                "CASCADE" if new.is_none() => {
                    for r in rows {
                        self.fk_parent_change(&child, &r, None, depth + 1)?;
                        let pk = super::dml::pk_of(&child, &r);
                        self.trx()?
                            .delete(&child.table, &pk)
                            .map_err(engine_error)?;
                    }
                }
                "CASCADE" | "SET NULL" => {
                    let set_null = action == "SET NULL";
                    for r in rows {
                        let mut changed = r.clone();
                        for (k, &c) in ccols.iter().enumerate() {
                            changed[c] = match (&new_key, set_null) {
                                (Some(nk), false) => nk[k].clone(),
                                _ => Value::Null,
                            };
                        }
                        self.fk_parent_change(&child, &r, Some(&changed), depth + 1)?;
                        let pk = super::dml::pk_of(&child, &r);
                        let trx = self.trx()?;
                        if child.pk().iter().any(|c| ccols.contains(c)) {
                            // The child's primary key changes: the row moves.
                            trx.delete(&child.table, &pk).map_err(engine_error)?;
                            trx.insert(&child.table, &changed).map_err(engine_error)?;
                        } else {
                            let changes: Vec<(usize, Value)> =
                                ccols.iter().map(|&c| (c, changed[c].clone())).collect();
                            trx.update(&child.table, &pk, &changes)
                                .map_err(engine_error)?;
                        }
                    }
                }
                _ => return Err(refused()),
            }
        }
        Ok(())
    }

    /// The rows of `t` whose `index` (None: the primary key) starts with `key`, locked.
    fn fk_rows(
        &mut self,
        t: &Arc<SqlTable>,
        index: Option<String>,
        key: Vec<Value>,
        lock: LockRead,
        limit: Option<usize>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let trx = self.trx()?;
        if index.is_none() && key.len() == t.pk().len() {
            return Ok(trx
                .get_locking(&t.table, &key, lock)
                .map_err(engine_error)?
                .into_iter()
                .collect());
        }
        trx.scan_locking_limit(
            &t.table,
            index.as_deref(),
            KeyBound::Included(key.clone()),
            KeyBound::Included(key),
            true,
            lock,
            false,
            limit,
            &mut |_| true,
        )
        .map_err(engine_error)
    }
}

/// The positions in `t` of columns `names`; None if one is gone.
fn positions(t: &SqlTable, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| t.column(n)).collect()
}

/// The values of columns `names` in `row` of `t`; None if one is NULL (MATCH SIMPLE: such a
/// row references nothing) or gone.
fn key_values(t: &SqlTable, names: &[String], row: &[Value]) -> Option<Vec<Value>> {
    names
        .iter()
        .map(|n| {
            let v = row.get(t.column(n)?)?;
            (!matches!(v, Value::Null)).then(|| v.clone())
        })
        .collect()
}
