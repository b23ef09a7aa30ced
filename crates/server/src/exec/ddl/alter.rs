//! ALTER TABLE and RENAME TABLE.
//!
//! OVERVIEW
//! - RENAME TABLE a TO b [, c TO d ...] and ALTER TABLE t RENAME [TO] u are one atomic engine
//!   rename (engine ddl.rs `rename_tables`: the dictionary entries and the files move together,
//!   crash-safe as a whole).
//! - ADD/DROP INDEX change the table in place (engine CREATE/DROP INDEX).
//! - Changes of the definition alone (ALTER COLUMN SET/DROP DEFAULT, RENAME COLUMN, a CHANGE
//!   or MODIFY that keeps the column's type, RENAME INDEX, the table COMMENT or default
//!   character set, DROP FOREIGN KEY, DROP CHECK, a CHECK made NOT ENFORCED, ADD FOREIGN KEY
//!   with foreign_key_checks off and an index to use) are INSTANT: the stored rows read
//!   correctly under the plan's engine definition (`TableDef::readable_as`, with the columns
//!   kept in their order: `Plan::in_stored_order`), so one atomic engine step
//!   (`redefine_table`) rewrites it, with the children's foreign keys that name a renamed
//!   column (fk.rs F5). Statements planned on the old definition are planned again (their
//!   table handle is obsolete).
//! - ADD COLUMN after the last column is INSTANT too (MySQL 8.0's default) when every stored
//!   row can read one value for it, its default (`in_place_def`): the engine keeps that value
//!   in the dictionary and the records written before lack the field (docs/format/record.md,
//!   "Instantly added columns"). AUTO_INCREMENT, generated columns and expression defaults
//!   give each row its own value, and FIRST/AFTER moves stored columns: those copy.
//! - ADD CHECK, ALTER CHECK ... ENFORCED and ADD FOREIGN KEY with foreign_key_checks on (an
//!   index to use there already) change the definition the same way once every row passes
//!   (3819, 1452): a reading transaction takes a shared table lock, the rows are tested, the
//!   definition changes, and only then is the lock released, so no row written meanwhile
//!   escapes the test (INPLACE, LOCK=SHARED; MySQL copies the table for these).
//! - Anything that changes the columns or the primary key rebuilds the table, as MySQL's
//!   ALGORITHM=COPY does:
//!   1. the new definition is computed from the old one and the operations, in order;
//!   2. a work table `db/#sql-alter-<conn>-<table id>` (catalog TEMP_PREFIX) gets it;
//!   3. the rows are copied in primary key order, each value converted by `types::store` for
//!      its new column under the session's sql_mode, committing every COPY_BATCH rows. The
//!      reading transaction holds a shared table lock on the original, so writers wait
//!      (LOCK=SHARED) and readers go on. Any error drops the work table: the original is
//!      untouched;
//!   4. one atomic engine rename moves the original to `#sql-old-...` and the work table to
//!      the final name; the old table is then dropped. The AUTO_INCREMENT counter carries over.
//!      The shared table lock is released only once the rename has committed, so no write
//!      reaches the original after its rows were copied; the writers that waited then run
//!      against the new table (their statements run again on its columns: 1412, exec/mod.rs).
//!
//! CRASH SAFETY: before the rename of step 4 commits, the original has its name and rows, and
//! the work table is dropped at the next start (`Catalog::drop_work_tables`); after it, the
//! new table has the name and the old one, now a work table, is dropped at the next start.
//!
//! MySQL 8.0 rules followed: dropping a column removes it from every index (an index left with
//! no column is dropped); the last column cannot be dropped (1090); ADD/CHANGE to an existing
//! name gives 1060; DROP of an unknown column or key gives 1091; AFTER an unknown column 1054;
//! columns of an added primary key become NOT NULL.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use innoxide_engine::{IndexSpec, KeyBound, TableDef};
use innoxide_sql::ast::{self, AlterOp, KeyKind};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlType, Warnings};

use super::super::fk::{rename_columns, renamed_parent_options, ParentRenames};
use super::super::select::load_row;
use super::super::{Output, Session};
use super::{check_key_part, column_of, default_meta, engine_column};
use crate::catalog::{
    engine_error, ColumnMeta, DefaultValue, FkMeta, KeyMeta, SqlTable, TableMeta,
};
use crate::catalog::{HIDDEN_ROW_ID, TEMP_PREFIX};

/// Rows copied per transaction.
const COPY_BATCH: u64 = 1000;

/// A column of the table being built.
#[derive(Clone)]
struct NewCol {
    name: String,
    ty: SqlType,
    nullable: bool,
    meta: ColumnMeta,
    /// The old column it is copied from (None: filled with its default).
    src: Option<usize>,
}

/// A secondary index of the table being built, by column names.
#[derive(Clone)]
struct NewKey {
    name: String,
    cols: Vec<String>,
    prefixes: Vec<Option<u64>>,
    unique: bool,
}

/// ALTER TABLE's plan: the new definition, the foreign keys whose rows checks must test
/// (added with foreign_key_checks on), and the columns renamed (old, new).
struct Planned {
    plan: Plan,
    checking: Vec<FkMeta>,
    col_renames: Vec<(String, String)>,
    /// The rows must pass constraints the plan adds (`Needs::Validate`).
    validate: bool,
}

/// The definition the operations produce.
#[derive(Clone)]
struct Plan {
    cols: Vec<NewCol>,
    /// Primary key column names and prefixes (None: a hidden row id keys the table).
    primary: Option<(Vec<String>, Vec<Option<u64>>)>,
    keys: Vec<NewKey>,
    meta: TableMeta,
    row_format: innoxide_engine::RowFormat,
    /// ROW_FORMAT= / KEY_BLOCK_SIZE= of an options clause, checked by the session
    /// (`Session::format_options`) before the operations apply.
    format: Option<super::FormatOptions>,
    /// ADD CHECK constraints, named and validated once the columns are known (check.rs).
    new_checks: Vec<ast::CheckSpec>,
    /// ADD FOREIGN KEY constraints, likewise (fk.rs).
    new_fks: Vec<ast::ForeignKeySpec>,
}

fn find(cols: &[NewCol], name: &str) -> Option<usize> {
    cols.iter().position(|c| c.name.eq_ignore_ascii_case(name))
}

/// What an ALTER TABLE operation asks of the table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Every row is read and written again (ALGORITHM=COPY).
    Rebuild,
    /// An index is built or dropped in place.
    Index,
    /// Only the definition changes, if the rows stay stored as they are (a CHANGE that keeps
    /// the type, defaults, names, comments, constraints dropped): INSTANT, else a rebuild.
    Definition,
    /// A definition change the rows must pass (a CHECK added or enforced again, a foreign
    /// key added with foreign_key_checks on): the rows are read and tested under a shared
    /// table lock, then the definition changes (INPLACE, LOCK=SHARED), else a rebuild.
    Validate,
    /// A column added: INSTANT when it goes after every column and the stored rows can all
    /// read one value for it (no AUTO_INCREMENT, generated column or expression default),
    /// else a rebuild.
    Add,
    /// Nothing of the table itself (RENAME TO, the ALGORITHM= and LOCK= clauses).
    Nothing,
}

fn needs(op: &AlterOp, fk_checks: bool) -> Needs {
    match op {
        AlterOp::AddColumn { .. } => Needs::Add,
        AlterOp::DropColumn(_) | AlterOp::DropPrimaryKey => Needs::Rebuild,
        // A new CHECK, or one enforced again, is tested on every row; with
        // foreign_key_checks on, so is a new foreign key against the parent.
        AlterOp::AddCheck(_) | AlterOp::CheckEnforced { enforced: true, .. } => Needs::Validate,
        AlterOp::AddForeignKey(_) if fk_checks => Needs::Validate,
        AlterOp::AddKey(k) if k.kind == KeyKind::Primary => Needs::Rebuild,
        // ENGINE= rebuilds the table as in MySQL (the "null ALTER" that OPTIMIZE TABLE runs);
        // so do ROW_FORMAT= and AUTO_INCREMENT=.
        AlterOp::Options(o)
            if o.engine.is_some() || o.auto_increment.is_some() || o.row_format.is_some() =>
        {
            Needs::Rebuild
        }
        AlterOp::AddKey(_) | AlterOp::DropIndex(_) => Needs::Index,
        AlterOp::ChangeColumn { .. }
        | AlterOp::RenameColumn { .. }
        | AlterOp::AlterDefault { .. }
        | AlterOp::RenameIndex { .. }
        | AlterOp::AddForeignKey(_)
        | AlterOp::DropForeignKey(_)
        | AlterOp::DropCheck(_)
        | AlterOp::DropConstraint(_)
        | AlterOp::CheckEnforced { .. }
        | AlterOp::Options(_) => Needs::Definition,
        AlterOp::RenameTo(_) | AlterOp::Algorithm(_) | AlterOp::Lock(_) | AlterOp::Keys(_) => {
            Needs::Nothing
        }
    }
}

/// Inserts `c` at `position` (None: last; Some(None): FIRST; Some(Some(x)): AFTER x).
fn place(
    cols: &mut Vec<NewCol>,
    c: NewCol,
    position: &Option<Option<String>>,
    table: &str,
) -> Result<(), SqlError> {
    let at = match position {
        None => cols.len(),
        Some(None) => 0,
        Some(Some(after)) => {
            find(cols, after).ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[after, &table]))?
                + 1
        }
    };
    cols.insert(at, c);
    Ok(())
}

/// The value a column added by ALTER TABLE has in the rows that existed before it: its
/// default, the statement's time for CURRENT_TIMESTAMP, NULL, or the type's implicit default
/// for a NOT NULL column without one. None for an expression default, evaluated for each row
/// (generated.rs N5).
fn value_in_existing_rows(
    meta: &ColumnMeta,
    nullable: bool,
    ty: &SqlType,
    now: types::DateTime,
) -> Option<Datum> {
    Some(match &meta.default {
        Some(DefaultValue::Text(s)) => Datum::Bytes(s.clone().into_bytes()),
        Some(DefaultValue::Now) => Datum::DateTime(now),
        Some(DefaultValue::Null) | None if nullable => Datum::Null,
        Some(DefaultValue::Expr(_)) => return None,
        _ => ty.default_for_not_null(),
    })
}

impl Plan {
    /// True if the columns kept keep their order and the added ones come after them all: the
    /// stored fields then line up with the new columns by position (an in-place change needs
    /// this; `TableDef::readable_as` compares storage, not identity).
    fn in_stored_order(&self) -> bool {
        let mut next = 0;
        let mut added = false;
        for c in &self.cols {
            match c.src {
                Some(s) if !added && s == next => next += 1,
                Some(_) => return false,
                None => added = true,
            }
        }
        true
    }

    /// The current definition of `t`.
    fn of(t: &SqlTable) -> Plan {
        let cols = t
            .visible()
            .map(|(i, c)| NewCol {
                name: c.name.clone(),
                ty: c.ty.clone(),
                nullable: c.nullable,
                meta: c.meta.clone(),
                src: Some(i),
            })
            .collect();
        let primary = (!t.has_hidden_pk()).then(|| {
            (
                t.pk().iter().map(|&c| t.columns[c].name.clone()).collect(),
                t.meta.pk_prefixes.clone(),
            )
        });
        let keys = t
            .table
            .def
            .indexes
            .iter()
            .map(|i| NewKey {
                name: i.name.clone(),
                cols: i
                    .columns
                    .iter()
                    .map(|&c| t.columns[c].name.clone())
                    .collect(),
                prefixes: t
                    .meta
                    .keys
                    .iter()
                    .find(|k| k.name.eq_ignore_ascii_case(&i.name))
                    .map_or_else(|| vec![None; i.columns.len()], |k| k.prefixes.clone()),
                unique: i.unique,
            })
            .collect();
        let mut meta = t.meta.clone();
        meta.columns.clear();
        meta.pk_prefixes.clear();
        meta.keys.clear();
        Plan {
            cols,
            primary,
            keys,
            meta,
            row_format: t.table.def.row_format,
            format: None,
            new_checks: Vec::new(),
            new_fks: Vec::new(),
        }
    }

    /// Error 3108 if a generated column reads column `name`.
    fn unused_by_generated(&self, name: &str) -> Result<(), SqlError> {
        super::generated::unused_by_generated(
            name,
            self.cols
                .iter()
                .map(|c| (c.name.as_str(), c.meta.generated.as_ref())),
        )
    }

    /// Error 3766 if an expression default reads column `name` (generated.rs N5).
    fn unused_by_defaults(&self, name: &str, table: &str) -> Result<(), SqlError> {
        super::generated::unused_by_defaults(
            name,
            table,
            self.cols
                .iter()
                .map(|c| (c.name.as_str(), c.meta.default.as_ref())),
        )
    }

    /// Error 1828 if a foreign key of the table uses column `name`.
    fn unused_by_fks(&self, name: &str) -> Result<(), SqlError> {
        match self
            .meta
            .foreign_keys
            .iter()
            .find(|f| f.columns.iter().any(|c| c.eq_ignore_ascii_case(name)))
        {
            Some(f) => Err(SqlError::new(ER_FK_COLUMN_CANNOT_DROP, &[&name, &f.name])),
            None => Ok(()),
        }
    }

    /// The positions of the primary key's and each index's columns, for fk.rs.
    fn index_positions(&self) -> Vec<Vec<usize>> {
        let pos = |names: &[String]| -> Vec<usize> {
            names.iter().filter_map(|n| find(&self.cols, n)).collect()
        };
        let mut out: Vec<Vec<usize>> = self.primary.iter().map(|p| pos(&p.0)).collect();
        out.extend(self.keys.iter().map(|k| pos(&k.cols)));
        out
    }

    /// Error 3959 if a CHECK constraint reads column `name` (which is dropped or renamed).
    fn unused_by_checks(&self, name: &str) -> Result<(), SqlError> {
        let lower = name.to_ascii_lowercase();
        match self
            .meta
            .checks
            .iter()
            .find(|c| super::check::check_columns(c).contains(&lower))
        {
            Some(c) => Err(SqlError::new(
                ER_DEPENDENT_BY_CHECK_CONSTRAINT,
                &[&c.name, &name],
            )),
            None => Ok(()),
        }
    }

    fn in_primary(&self, name: &str) -> bool {
        self.primary
            .as_ref()
            .is_some_and(|p| p.0.iter().any(|c| c.eq_ignore_ascii_case(name)))
    }

    /// Replaces column name `old` by `new` in every key.
    fn rename_in_keys(&mut self, old: &str, new: &str) {
        let keys = self.keys.iter_mut().map(|k| &mut k.cols);
        for cols in keys.chain(self.primary.iter_mut().map(|p| &mut p.0)) {
            for c in cols.iter_mut() {
                if c.eq_ignore_ascii_case(old) {
                    *c = new.to_string();
                }
            }
        }
    }

    /// Renames column `old` to `new` in the table's own foreign keys.
    fn rename_in_fks(&mut self, old: &str, new: &str) {
        for f in &mut self.meta.foreign_keys {
            for c in &mut f.columns {
                if c.eq_ignore_ascii_case(old) {
                    *c = new.to_string();
                }
            }
        }
    }

    /// Removes column `name` from every key; keys left empty go (MySQL 8.0).
    fn drop_from_keys(&mut self, name: &str) {
        for k in &mut self.keys {
            while let Some(i) = k.cols.iter().position(|c| c.eq_ignore_ascii_case(name)) {
                k.cols.remove(i);
                if i < k.prefixes.len() {
                    k.prefixes.remove(i);
                }
            }
        }
        self.keys.retain(|k| !k.cols.is_empty());
        if let Some((cols, prefixes)) = &mut self.primary {
            while let Some(i) = cols.iter().position(|c| c.eq_ignore_ascii_case(name)) {
                cols.remove(i);
                if i < prefixes.len() {
                    prefixes.remove(i);
                }
            }
            if cols.is_empty() {
                self.primary = None;
            }
        }
    }

    fn apply(
        &mut self,
        op: &AlterOp,
        table: &str,
        mode: innoxide_sql::types::SqlMode,
    ) -> Result<(), SqlError> {
        let (cs, co) = (self.meta.charset.clone(), self.meta.collation.clone());
        match op {
            AlterOp::AddColumn { column, position } => {
                if find(&self.cols, &column.name).is_some() {
                    return Err(SqlError::new(ER_DUP_FIELDNAME, &[&column.name]));
                }
                let (ty, nullable, meta) = column_of(column, &cs, &co, false, mode)?;
                let c = NewCol {
                    name: column.name.clone(),
                    ty,
                    nullable,
                    meta,
                    src: None,
                };
                place(&mut self.cols, c, position, table)?;
            }
            AlterOp::ChangeColumn {
                old,
                column,
                position,
            } => {
                let i = find(&self.cols, old)
                    .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[old, &table]))?;
                if find(&self.cols, &column.name).is_some_and(|j| j != i) {
                    return Err(SqlError::new(ER_DUP_FIELDNAME, &[&column.name]));
                }
                let in_pk = self.in_primary(old);
                let (ty, nullable, meta) = column_of(column, &cs, &co, in_pk, mode)?;
                let src = self.cols[i].src;
                let c = NewCol {
                    name: column.name.clone(),
                    ty,
                    nullable,
                    meta,
                    src,
                };
                let old_name = self.cols[i].name.clone();
                if !old_name.eq_ignore_ascii_case(&column.name) {
                    self.unused_by_checks(&old_name)?;
                    self.unused_by_generated(&old_name)?;
                    self.unused_by_defaults(&old_name, table)?;
                    self.rename_in_fks(&old_name, &column.name);
                }
                if position.is_some() {
                    self.cols.remove(i);
                    place(&mut self.cols, c, position, table)?;
                } else {
                    self.cols[i] = c;
                }
                self.rename_in_keys(&old_name, &column.name);
            }
            AlterOp::DropColumn(name) => {
                let i = find(&self.cols, name)
                    .ok_or_else(|| SqlError::new(ER_CANT_DROP_FIELD_OR_KEY, &[name]))?;
                if self.cols.len() == 1 {
                    return Err(SqlError::new(ER_CANT_REMOVE_ALL_FIELDS, &[]));
                }
                self.unused_by_checks(name)?;
                self.unused_by_fks(name)?;
                self.unused_by_generated(name)?;
                self.unused_by_defaults(name, table)?;
                self.cols.remove(i);
                self.drop_from_keys(name);
            }
            AlterOp::AddKey(k) => self.add_key(k)?,
            AlterOp::AddCheck(spec) => self.new_checks.push(spec.clone()),
            AlterOp::AddForeignKey(spec) => self.new_fks.push(spec.clone()),
            AlterOp::DropForeignKey(name) => {
                let i = self
                    .meta
                    .foreign_keys
                    .iter()
                    .position(|f| f.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| SqlError::new(ER_CANT_DROP_FIELD_OR_KEY, &[name]))?;
                self.meta.foreign_keys.remove(i);
            }
            AlterOp::DropCheck(name) => {
                let i = self
                    .meta
                    .checks
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| SqlError::new(ER_CHECK_CONSTRAINT_NOT_FOUND, &[name]))?;
                self.meta.checks.remove(i);
            }
            AlterOp::CheckEnforced { name, enforced } => {
                let c = self
                    .meta
                    .checks
                    .iter_mut()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| SqlError::new(ER_CHECK_CONSTRAINT_NOT_FOUND, &[name]))?;
                c.enforced = *enforced;
            }
            AlterOp::RenameColumn { old, new } => {
                let i = find(&self.cols, old)
                    .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[old, &table]))?;
                if find(&self.cols, new).is_some_and(|j| j != i) {
                    return Err(SqlError::new(ER_DUP_FIELDNAME, &[new]));
                }
                let old_name = self.cols[i].name.clone();
                if !old_name.eq_ignore_ascii_case(new) {
                    self.unused_by_checks(&old_name)?;
                    self.unused_by_generated(&old_name)?;
                    self.unused_by_defaults(&old_name, table)?;
                    self.rename_in_fks(&old_name, new);
                }
                self.cols[i].name.clone_from(new);
                self.rename_in_keys(&old_name, new);
            }
            // A CHECK constraint of that name, else a UNIQUE key (MySQL 8.0.19).
            AlterOp::DropConstraint(name) => {
                if let Some(i) = self
                    .meta
                    .checks
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                {
                    self.meta.checks.remove(i);
                } else if let Some(i) = self
                    .keys
                    .iter()
                    .position(|k| k.unique && k.name.eq_ignore_ascii_case(name))
                {
                    self.keys.remove(i);
                } else {
                    return Err(SqlError::new(ER_CONSTRAINT_NOT_FOUND, &[name]));
                }
            }
            AlterOp::DropIndex(name) => {
                if name.eq_ignore_ascii_case("PRIMARY") {
                    return self.apply(&AlterOp::DropPrimaryKey, table, mode);
                }
                let i = self
                    .keys
                    .iter()
                    .position(|k| k.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| SqlError::new(ER_CANT_DROP_FIELD_OR_KEY, &[name]))?;
                self.keys.remove(i);
                // The index a foreign key of the table needs (fk.rs F1): 1553.
                let ix = self.index_positions();
                for f in &self.meta.foreign_keys {
                    let cols: Vec<usize> = f
                        .columns
                        .iter()
                        .filter_map(|c| find(&self.cols, c))
                        .collect();
                    if !ix.iter().any(|k| k.starts_with(&cols)) {
                        return Err(SqlError::new(ER_DROP_INDEX_FK, &[name]));
                    }
                }
            }
            AlterOp::DropPrimaryKey => {
                if self.primary.take().is_none() {
                    return Err(SqlError::new(ER_CANT_DROP_FIELD_OR_KEY, &[&"PRIMARY"]));
                }
            }
            AlterOp::AlterDefault {
                column,
                default,
                text,
            } => {
                let i = find(&self.cols, column)
                    .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[column, &table]))?;
                let c = &mut self.cols[i];
                if c.meta.generated.is_some() {
                    return Err(SqlError::new(
                        ER_WRONG_USAGE,
                        &[&"DEFAULT", &"generated column"],
                    ));
                }
                c.meta.default = default_meta(
                    &c.name,
                    default.as_ref(),
                    text.as_deref(),
                    &c.ty,
                    c.nullable,
                    mode,
                )?;
            }
            AlterOp::RenameIndex { old, new } => {
                for n in [old, new] {
                    if n.eq_ignore_ascii_case("PRIMARY") {
                        return Err(SqlError::new(ER_WRONG_NAME_FOR_INDEX, &[n]));
                    }
                }
                let i = self
                    .keys
                    .iter()
                    .position(|k| k.name.eq_ignore_ascii_case(old))
                    .ok_or_else(|| SqlError::new(ER_KEY_DOES_NOT_EXITS, &[old, &table]))?;
                if (self.keys.iter().enumerate())
                    .any(|(j, k)| j != i && k.name.eq_ignore_ascii_case(new))
                {
                    return Err(SqlError::new(ER_DUP_KEYNAME, &[new]));
                }
                self.keys[i].name.clone_from(new);
            }
            AlterOp::RenameTo(_) | AlterOp::Keys(_) | AlterOp::Algorithm(_) | AlterOp::Lock(_) => {}
            AlterOp::Options(o) => {
                if let Some(c) = &o.comment {
                    self.meta.comment.clone_from(c);
                }
                if let Some(a) = o.auto_increment {
                    self.meta.auto_increment_start = a;
                }
                if let Some(f) = self.format.take() {
                    self.row_format = f.format;
                    self.meta.row_format_given = f.given;
                    self.meta.key_block_size = f.key_block_size;
                }
                if o.charset.is_some() || o.collate.is_some() {
                    // The table's default for new columns; the columns keep theirs.
                    let (cs, co) = super::super::typeinfo::charset_and_collation(
                        o.charset.as_deref(),
                        o.collate.as_deref(),
                        &self.meta.charset,
                    )?;
                    (self.meta.charset, self.meta.collation) = (cs, co);
                }
            }
        }
        Ok(())
    }

    fn add_key(&mut self, k: &ast::KeySpec) -> Result<(), SqlError> {
        let mut names = Vec::new();
        for c in &k.columns {
            let i = find(&self.cols, &c.name)
                .ok_or_else(|| SqlError::new(ER_KEY_COLUMN_DOES_NOT_EXITS, &[&c.name]))?;
            if names
                .iter()
                .any(|n: &String| n.eq_ignore_ascii_case(&c.name))
            {
                return Err(SqlError::new(ER_DUP_FIELDNAME, &[&c.name]));
            }
            check_key_part(&self.cols[i].ty, &self.cols[i].name, c.prefix, k.kind)?;
            names.push(self.cols[i].name.clone());
        }
        let prefixes = k.columns.iter().map(|c| c.prefix).collect();
        match k.kind {
            KeyKind::Primary => {
                if self.primary.is_some() {
                    return Err(SqlError::new(ER_MULTIPLE_PRI_KEY, &[]));
                }
                for n in &names {
                    if let Some(i) = find(&self.cols, n) {
                        self.cols[i].nullable = false;
                    }
                }
                self.primary = Some((names, prefixes));
            }
            KeyKind::Unique | KeyKind::Index | KeyKind::Fulltext => {
                let name = k.name.clone().unwrap_or_else(|| {
                    let base = names[0].clone();
                    let mut n = base.clone();
                    let mut i = 2;
                    while self.keys.iter().any(|x| x.name.eq_ignore_ascii_case(&n)) {
                        n = format!("{base}_{i}");
                        i += 1;
                    }
                    n
                });
                if name.eq_ignore_ascii_case("PRIMARY")
                    || self.keys.iter().any(|x| x.name.eq_ignore_ascii_case(&name))
                {
                    return Err(SqlError::new(ER_DUP_KEYNAME, &[&name]));
                }
                self.keys.push(NewKey {
                    name,
                    cols: names,
                    prefixes,
                    unique: k.kind == KeyKind::Unique,
                });
            }
        }
        Ok(())
    }

    /// The engine definition (named `engine_name`), adding a hidden row id if needed.
    fn table_def(mut self, engine_name: &str) -> Result<TableDef, SqlError> {
        let autos: Vec<usize> = (0..self.cols.len())
            .filter(|&i| self.cols[i].meta.auto_increment)
            .collect();
        let pos = |cols: &[NewCol], names: &[String]| -> Result<Vec<usize>, SqlError> {
            names
                .iter()
                .map(|n| {
                    find(cols, n).ok_or_else(|| SqlError::new(ER_KEY_COLUMN_DOES_NOT_EXITS, &[n]))
                })
                .collect()
        };
        let mut primary = match &self.primary {
            Some((names, prefixes)) => {
                self.meta.pk_prefixes.clone_from(prefixes);
                Some(pos(&self.cols, names)?)
            }
            None => None,
        };
        let mut indexes = Vec::new();
        for k in &self.keys {
            indexes.push(IndexSpec {
                name: k.name.clone(),
                columns: pos(&self.cols, &k.cols)?,
                unique: k.unique,
            });
            self.meta.keys.push(KeyMeta {
                name: k.name.clone(),
                prefixes: k.prefixes.clone(),
            });
        }
        if autos.len() > 1
            || autos.first().is_some_and(|a| {
                primary.as_ref().and_then(|p| p.first()) != Some(a)
                    && !indexes.iter().any(|i| i.columns.first() == Some(a))
            })
        {
            return Err(SqlError::new(ER_WRONG_AUTO_KEY, &[]));
        }
        let mut cols = Vec::new();
        for c in &self.cols {
            cols.push(engine_column(&c.name, &c.ty, c.nullable));
            self.meta.columns.push(c.meta.clone());
        }
        if primary.is_none() {
            let ty = super::super::typeinfo::hidden_row_id()?;
            cols.push(engine_column(HIDDEN_ROW_ID, &ty, false));
            self.meta.columns.push(ColumnMeta {
                hidden: true,
                ..ColumnMeta::default()
            });
            self.cols.push(NewCol {
                name: HIDDEN_ROW_ID.into(),
                ty,
                nullable: false,
                meta: ColumnMeta {
                    hidden: true,
                    ..ColumnMeta::default()
                },
                src: None,
            });
            primary = Some(vec![cols.len() - 1]);
        }
        let mut def = TableDef::new(engine_name, cols, primary);
        def.indexes = indexes;
        def.row_format = self.row_format;
        def.options = serde_json::to_string(&self.meta)
            .map_err(|e| SqlError::new(ER_INTERNAL_ERROR, &[&e]))?;
        Ok(def)
    }
}

impl Session {
    /// RENAME TABLE a TO b [, c TO d ...]: all or nothing.
    pub(super) fn rename_tables(
        &mut self,
        pairs: &[(ast::ObjectName, ast::ObjectName)],
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let mut renames = Vec::new();
        let mut touched = Vec::new();
        for (from, to) in pairs {
            let (fdb, tdb) = (self.db_of(from)?, self.db_of(to)?);
            for db in [&fdb, &tdb] {
                if cat.database(db).is_none() {
                    return Err(SqlError::new(ER_BAD_DB_ERROR, &[db]));
                }
            }
            check_table_name(&to.name)?;
            renames.push((format!("{fdb}/{}", from.name), format!("{tdb}/{}", to.name)));
            touched.push((fdb, from.name.clone()));
            touched.push((tdb, to.name.clone()));
        }
        let _g = cat.ddl.lock();
        // The children of a renamed table are told its new name in the same step (fk.rs F5).
        let children = |renames: &[(String, String)]| {
            let finals = final_names(renames);
            let parents = ParentRenames {
                tables: &finals,
                columns: None,
            };
            renamed_parent_options(&cat, &parents, None)
        };
        let mut rewritten: Vec<String> = Vec::new();
        // A view is renamed in the catalog, a table in the engine, each pair in turn when
        // views are among them (all tables at once otherwise).
        let is_view = |(from, _): &(String, String)| {
            let (db, name) = from.split_once('/').unwrap_or_default();
            cat.view(db, name).is_some()
        };
        let r = if renames.iter().any(is_view) {
            renames.iter().try_for_each(|pair| {
                let split = |n: &str| -> (String, String) {
                    let (d, t) = n.split_once('/').unwrap_or_default();
                    (d.to_string(), t.to_string())
                };
                let ((fdb, from), (tdb, to)) = (split(&pair.0), split(&pair.1));
                if is_view(pair) {
                    cat.rename_view((&fdb, &from), (&tdb, &to))
                } else if cat.view(&tdb, &to).is_some() {
                    Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&to]))
                } else {
                    let pairs = std::slice::from_ref(pair);
                    let options = children(pairs)?;
                    let r = cat
                        .engine
                        .rename_tables_with_options(pairs, &options)
                        .map_err(rename_error);
                    for (name, _) in &options {
                        let (d, t) = name.split_once('/').unwrap_or_default();
                        cat.invalidate(d, t);
                    }
                    r
                }
            })
        } else if let Some((_, to)) = renames
            .iter()
            .find(|(_, to)| is_view(&(to.clone(), String::new())))
        {
            Err(SqlError::new(
                ER_TABLE_EXISTS_ERROR,
                &[&to.split_once('/').map_or("", |x| x.1)],
            ))
        } else {
            children(&renames).and_then(|options| {
                rewritten.extend(options.iter().map(|(n, _)| n.clone()));
                cat.engine
                    .rename_tables_with_options(&renames, &options)
                    .map_err(rename_error)
            })
        };
        for (db, n) in &touched {
            cat.invalidate(db, n);
        }
        for name in &rewritten {
            let (d, t) = name.split_once('/').unwrap_or_default();
            cat.invalidate(d, t);
        }
        r?;
        Ok(Output::ok(0))
    }

    pub(super) fn alter_table(
        &mut self,
        table: &ast::ObjectName,
        ops: &[AlterOp],
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let db = self.db_of(table)?;
        let t = cat.table(&db, &table.name)?;
        let rename = ops.iter().rev().find_map(|o| match o {
            AlterOp::RenameTo(n) => Some(n.clone()),
            _ => None,
        });
        let target = match &rename {
            Some(n) => {
                let tdb = self.db_of(n)?;
                if cat.database(&tdb).is_none() {
                    return Err(SqlError::new(ER_BAD_DB_ERROR, &[&tdb]));
                }
                check_table_name(&n.name)?;
                (tdb, n.name.clone())
            }
            None => (db.clone(), table.name.clone()),
        };
        let fk_checks = self.vars.foreign_key_checks();
        let kinds: Vec<Needs> = ops.iter().map(|o| needs(o, fk_checks)).collect();
        // Definition changes alone are INSTANT when the rows stay as they are stored (mixed
        // with index work or a rename, the table is rebuilt).
        let mut planned = None;
        let validate = kinds.contains(&Needs::Validate);
        let adds = kinds.contains(&Needs::Add);
        let natural = if kinds.contains(&Needs::Rebuild) {
            Natural::Copy
        } else if kinds.contains(&Needs::Definition) || validate || adds {
            let p = self.alter_plan(&t, ops, &target)?;
            let def = self.in_place_def(&t, &p.plan)?;
            // Rows tested under their old column names: not with a column renamed or added.
            let in_place = !kinds.contains(&Needs::Index)
                && rename.is_none()
                && p.plan.in_stored_order()
                && t.table.def.readable_as(&def)
                && (!validate || (p.col_renames.is_empty() && !adds));
            planned = Some((p, def));
            match (in_place, validate) {
                (false, _) => Natural::Copy,
                (true, true) => Natural::Validate,
                (true, false) => Natural::Instant,
            }
        } else if kinds.contains(&Needs::Index) {
            Natural::Index
        } else {
            Natural::Instant
        };
        match (how_altered(ops, natural)?, planned) {
            ("COPY", planned) => {
                let p = match planned {
                    Some((p, _)) => p,
                    None => self.alter_plan(&t, ops, &target)?,
                };
                return self.alter_copy(&t, p, &target);
            }
            (_, Some((p, def))) => return self.alter_redefine(&t, p, def),
            _ => {}
        }
        for op in ops {
            match op {
                AlterOp::AddKey(k) => {
                    self.add_index(table, k)?;
                }
                AlterOp::DropIndex(n) => {
                    self.drop_index(table, n)?;
                }
                AlterOp::Keys(_) => self.note(
                    innoxide_sql::types::Level::Note,
                    SqlError::new(ER_ILLEGAL_HA, &[&table.name]),
                ),
                _ => {}
            }
        }
        if rename.is_some() && (target.0 != db || target.1 != table.name) {
            let _g = cat.ddl.lock();
            let pair = [(t.engine_name(), format!("{}/{}", target.0, target.1))];
            let parents = ParentRenames {
                tables: &pair,
                columns: None,
            };
            let options = renamed_parent_options(&cat, &parents, None)?;
            let r = cat.engine.rename_tables_with_options(&pair, &options);
            cat.invalidate(&db, &table.name);
            cat.invalidate(&target.0, &target.1);
            for (name, _) in &options {
                let (d, n) = name.split_once('/').unwrap_or_default();
                cat.invalidate(d, n);
            }
            r.map_err(rename_error)?;
        }
        Ok(Output::ok(0))
    }

    /// The table's definition after `ops`, checked (generated columns, constraints, foreign
    /// keys), with the foreign keys checks must test and the columns renamed.
    fn alter_plan(
        &mut self,
        t: &SqlTable,
        ops: &[AlterOp],
        target: &(String, String),
    ) -> Result<Planned, SqlError> {
        let mut plan = Plan::of(t);
        for op in ops {
            if let AlterOp::Options(o) = op {
                if o.row_format.is_some() || o.key_block_size.is_some() {
                    // What is not given again stays as it was.
                    let given = o
                        .row_format
                        .as_deref()
                        .or(plan.meta.row_format_given.as_deref());
                    let kbs = o.key_block_size.or(plan.meta.key_block_size);
                    plan.format = Some(self.format_options(given, kbs, &t.name)?);
                }
            }
            plan.apply(op, &t.name, self.vars.sql_mode())?;
        }
        let cols: Vec<(String, SqlType, bool)> = plan
            .cols
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone(), c.meta.auto_increment))
            .collect();
        let gen_cols: Vec<super::generated::GenColumn> = plan
            .cols
            .iter()
            .map(|c| super::generated::gen_column(&c.name, &c.ty, c.meta.auto_increment, &c.meta))
            .collect();
        self.validate_generated((&target.0, &target.1), &gen_cols)?;
        let specs = std::mem::take(&mut plan.new_checks);
        let added = self.check_metas((&target.0, &target.1), &specs, &plan.meta.checks, &cols)?;
        plan.meta.checks.extend(added);
        let fk_specs = std::mem::take(&mut plan.new_fks);
        let fk_cols: Vec<(String, SqlType, bool)> = plan
            .cols
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone(), c.nullable))
            .collect();
        let ix = plan.index_positions();
        let new_fks = self.fk_metas(
            (&target.0, &target.1),
            &fk_specs,
            &plan.meta.foreign_keys,
            &fk_cols,
            &ix,
        )?;
        let checking: Vec<FkMeta> = new_fks.iter().map(|f| f.0.clone()).collect();
        for (fk, index) in new_fks {
            if let Some((base, columns)) = index {
                let mut name = base.clone();
                let mut i = 2;
                while plan.keys.iter().any(|k| k.name.eq_ignore_ascii_case(&name)) {
                    name = format!("{base}_{i}");
                    i += 1;
                }
                plan.keys.push(NewKey {
                    name,
                    cols: columns.iter().map(|&c| plan.cols[c].name.clone()).collect(),
                    prefixes: vec![None; columns.len()],
                    unique: false,
                });
            }
            plan.meta.foreign_keys.push(fk);
        }
        self.parent_columns_kept(t, ops)?;
        // References to this table's renamed columns or name: its own (a self-referencing
        // key) in the plan, its children's in the swap (fk.rs F5).
        let col_renames = column_renames(ops);
        for fk in &mut plan.meta.foreign_keys {
            if fk.parent_db == t.db && fk.parent_table == t.name {
                rename_columns(&mut fk.parent_columns, &col_renames);
                (fk.parent_db, fk.parent_table) = target.clone();
            }
        }
        let validate =
            (ops.iter()).any(|o| needs(o, self.vars.foreign_key_checks()) == Needs::Validate);
        Ok(Planned {
            plan,
            checking,
            col_renames,
            validate,
        })
    }

    /// ALTER TABLE that changes only the definition (names, defaults, comments, constraints):
    /// one atomic engine step rewrites it, and the children's foreign keys that name a
    /// renamed column (fk.rs F5); no row is written. (MySQL's ALGORITHM=INSTANT.) When the
    /// plan adds constraints the rows must pass (a CHECK, a foreign key with
    /// foreign_key_checks on), a reading transaction holds a shared table lock from before
    /// the rows are tested until the definition has changed, so no row escapes the test
    /// (writers wait, as for a copy).
    fn alter_redefine(
        &mut self,
        t: &SqlTable,
        planned: Planned,
        def: TableDef,
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let name = t.engine_name();
        let checks: Vec<_> = (planned.plan.meta.checks.iter())
            .filter(|c| c.enforced)
            .cloned()
            .collect();
        let _g = cat.ddl.lock();
        // Another DDL may have changed the table since it was planned.
        let current = cat.engine.table(&name).map_err(engine_error)?;
        if !Arc::ptr_eq(&current, &t.table) {
            return Err(SqlError::new(ER_TABLE_DEF_CHANGED, &[]));
        }
        let mut reader = None;
        if planned.validate {
            let mut r = cat.engine.begin();
            r.lock_table(&t.table, false).map_err(engine_error)?;
            self.rows_pass(&mut r, t, &checks)?;
            let sql_t = cat.table(&t.db, &t.name)?;
            for fk in &planned.checking {
                self.fk_rows_have_parents(&sql_t, fk)?;
            }
            reader = Some(r);
        }
        let parents = ParentRenames {
            tables: &[],
            columns: Some((&name, &planned.col_renames)),
        };
        let child_options = renamed_parent_options(&cat, &parents, Some(&name))?;
        let r = cat.engine.redefine_table(def, &child_options);
        cat.invalidate(&t.db, &t.name);
        for (child, _) in &child_options {
            let (d, n) = child.split_once('/').unwrap_or_default();
            cat.invalidate(d, n);
        }
        // The writers waiting go on, against the new definition.
        let ended = reader.map_or(Ok(()), |r| r.commit().map_err(engine_error));
        r.map_err(engine_error)?;
        ended?;
        Ok(Output::ok(0))
    }

    /// The plan's engine definition for a change in place: the columns kept carry their
    /// values for rows stored before they were added instantly, and each column added gets
    /// the value all stored rows read for it (instant ADD COLUMN) when there is one. There is
    /// none for AUTO_INCREMENT, generated columns, expression defaults and defaults that do
    /// not convert cleanly; the stored rows cannot be read under such a definition
    /// (`TableDef::readable_as`), so the table is copied.
    fn in_place_def(&mut self, t: &SqlTable, plan: &Plan) -> Result<TableDef, SqlError> {
        let mut def = plan.clone().table_def(&t.engine_name())?;
        let mode = self.vars.sql_mode();
        for (c, col) in plan.cols.iter().zip(&mut def.columns) {
            if let Some(s) = c.src {
                col.instant = t.table.def.columns.get(s).and_then(|o| o.instant.clone());
                continue;
            }
            if c.meta.auto_increment || c.meta.generated.is_some() {
                continue;
            }
            let Some(d) = value_in_existing_rows(&c.meta, c.nullable, &c.ty, self.stmt_time) else {
                continue;
            };
            let mut w = Warnings::default();
            let stored = types::store(&d, &c.ty, mode, (&t.name, &c.name), 1, &mut w);
            if let (Ok(v), true) = (stored, w.0.is_empty()) {
                if let Ok(added) = col.clone().added_instantly(&v) {
                    *col = added;
                }
            }
        }
        Ok(def)
    }

    /// Error 3819 unless every row of `t`, read through `reader`, passes `checks` (compiled
    /// over `t`'s columns).
    fn rows_pass(
        &mut self,
        reader: &mut innoxide_engine::Trx,
        t: &SqlTable,
        checks: &[crate::catalog::CheckMeta],
    ) -> Result<(), SqlError> {
        if checks.is_empty() {
            return Ok(());
        }
        let scope = [super::super::expr::ScopeTable {
            name: t.name.clone(),
            db: t.db.clone(),
            columns: (t.columns.iter())
                .map(|c| {
                    let ty = super::super::expr::EType::Column(Box::new(c.ty.clone()));
                    (c.name.clone(), ty, c.meta.hidden)
                })
                .collect(),
            offset: 0,
            table: None,
        }];
        let mut compiled = Vec::with_capacity(checks.len());
        for c in checks {
            let e = super::check::parse_stored(&c.text)?;
            let ce = super::super::expr::Compiler::new(&scope, "check constraint")
                .compile(&e, self)?
                .0;
            compiled.push((c.name.clone(), ce));
        }
        let mode = self.vars.sql_mode();
        let mut w = Warnings::default();
        let rows = reader
            .scan(
                &t.table,
                None,
                KeyBound::Unbounded,
                KeyBound::Unbounded,
                true,
            )
            .map_err(engine_error)?;
        for (n, r) in rows.enumerate() {
            let r = r.map_err(engine_error)?;
            super::check::row_passes(&compiled, &load_row(t, &r), mode, false, &mut w)?;
            if n % 1024 == 1023 && self.interrupt.load(Ordering::Acquire) {
                return Err(SqlError::new(ER_QUERY_INTERRUPTED, &[]));
            }
        }
        Ok(())
    }

    /// ALTER TABLE by copying into a work table and swapping names (see the module comment).
    fn alter_copy(
        &mut self,
        t: &SqlTable,
        planned: Planned,
        target: &(String, String),
    ) -> Result<Output, SqlError> {
        let cat = self.server.catalog.clone();
        let Planned {
            plan,
            checking,
            col_renames,
            ..
        } = planned;
        let final_name = format!("{}/{}", target.0, target.1);
        let _g = cat.ddl.lock();
        let moved = [(t.engine_name(), final_name.clone())];
        let parents = ParentRenames {
            tables: if final_name == t.engine_name() {
                &[]
            } else {
                &moved
            },
            columns: Some((&moved[0].0, &col_renames)),
        };
        let child_options = renamed_parent_options(&cat, &parents, Some(&moved[0].0))?;
        if final_name != t.engine_name() && cat.engine.table(&final_name).is_ok() {
            return Err(SqlError::new(ER_TABLE_EXISTS_ERROR, &[&target.1]));
        }
        let work = format!("{}/{TEMP_PREFIX}alter-{}-{}", t.db, self.id, t.table.id);
        let old_parked = format!("{}/{TEMP_PREFIX}old-{}-{}", t.db, self.id, t.table.id);
        let start = plan.meta.auto_increment_start;
        let cols: Vec<(usize, bool)> = plan
            .cols
            .iter()
            .map(|c| (c.src.unwrap_or(usize::MAX), c.meta.auto_increment))
            .collect();
        let srcs: Vec<Option<usize>> = plan.cols.iter().map(|c| c.src).collect();
        let def = plan.table_def(&work)?;
        cat.engine.create_table(def).map_err(engine_error)?;
        // Writers wait from here until the copy has the name (LOCK=SHARED): the reader's
        // shared table lock is held through the rename below, so no change reaches the old
        // table after its rows were copied (engine `with_table` lets the rename's metadata
        // lock pass the writers waiting for their table lock).
        let mut reader = cat.engine.begin();
        let copied = reader
            .lock_table(&t.table, false)
            .map_err(engine_error)
            .and_then(|()| {
                cat.table(
                    &t.db,
                    &format!("{TEMP_PREFIX}alter-{}-{}", self.id, t.table.id),
                )
            })
            .and_then(|nt| {
                let n = self.copy_rows(&mut reader, t, &nt, &srcs)?;
                Ok((nt, n))
            });
        // Rows already there must have their parents (fk.rs F2), unless checks are off.
        let copied = copied.and_then(|(nt, n)| {
            for fk in &checking {
                self.fk_rows_have_parents(&nt, fk)?;
            }
            Ok((nt, n))
        });
        let (nt, n) = match copied {
            Ok(x) => x,
            Err(e) => {
                let _ = cat.engine.drop_table(&work);
                cat.invalidate(
                    &t.db,
                    &format!("{TEMP_PREFIX}alter-{}-{}", self.id, t.table.id),
                );
                return Err(e);
            }
        };
        // The counter carries over: the old table's, or past the values the copy generated.
        let generated =
            cols.iter().any(|&(src, auto)| auto && src == usize::MAX) || nt.has_hidden_pk();
        let mut next = if generated { n + 1 } else { 1 };
        if t.columns.iter().any(|c| c.meta.auto_increment) {
            next = next.max(cat.auto_inc_value(t)?.unwrap_or(1));
        }
        let swap = cat.engine.rename_tables_with_options(
            &[
                (t.engine_name(), old_parked.clone()),
                (work.clone(), final_name.clone()),
            ],
            &child_options,
        );
        cat.invalidate(&t.db, &t.name);
        cat.invalidate(&target.0, &target.1);
        for (name, _) in &child_options {
            let (d, n) = name.split_once('/').unwrap_or_default();
            cat.invalidate(d, n);
        }
        // The writers waiting go on, against the new table (1412 makes their statements run
        // again: exec/mod.rs).
        let ended = reader.commit().map_err(engine_error);
        if let Err(e) = swap {
            let _ = cat.engine.drop_table(&work);
            return Err(rename_error(e));
        }
        ended?;
        let persistent = nt.columns.iter().any(|c| c.meta.auto_increment);
        cat.set_counter(&nt.table, persistent, next.max(start))?;
        cat.engine.drop_table(&old_parked).map_err(engine_error)?;
        Ok(Output::ok(n))
    }

    /// What ALTER TABLE may not do to a table foreign keys reference (fk.rs): drop a
    /// referenced column (1829).
    fn parent_columns_kept(&mut self, t: &SqlTable, ops: &[AlterOp]) -> Result<(), SqlError> {
        let cat = self.server.catalog.clone();
        if !cat.any_fk_parent() {
            return Ok(());
        }
        let map = cat.fk_map();
        let Some(children) = map.by_parent.get(&format!("{}/{}", t.db, t.name)) else {
            return Ok(());
        };
        let mut referenced: Vec<(String, String, String)> = Vec::new();
        for (cdb, cname, i) in children {
            if let Some(fk) = cat.table(cdb, cname)?.meta.foreign_keys.get(*i) {
                for c in &fk.parent_columns {
                    referenced.push((c.to_lowercase(), fk.name.clone(), cname.clone()));
                }
            }
        }
        let uses = |c: &str| referenced.iter().find(|r| r.0 == c.to_lowercase());
        for op in ops {
            if let AlterOp::DropColumn(c) = op {
                if let Some((_, fk, child)) = uses(c) {
                    return Err(SqlError::new(
                        ER_FK_COLUMN_CANNOT_DROP_CHILD,
                        &[c, fk, child],
                    ));
                }
            }
        }
        Ok(())
    }

    /// Error 1452 if a row of `nt` (ALTER TABLE's copy) has no parent for `fk` (F2), with
    /// foreign_key_checks on: one anti-join over the parent's index.
    fn fk_rows_have_parents(&mut self, nt: &Arc<SqlTable>, fk: &FkMeta) -> Result<(), SqlError> {
        if !self.vars.foreign_key_checks() {
            return Ok(());
        }
        let q = |n: &str| format!("`{}`", n.replace('`', "``"));
        let not_null: Vec<String> = fk
            .columns
            .iter()
            .map(|c| format!("c.{} IS NOT NULL", q(c)))
            .collect();
        let joined: Vec<String> = fk
            .columns
            .iter()
            .zip(&fk.parent_columns)
            .map(|(c, p)| format!("p.{} = c.{}", q(p), q(c)))
            .collect();
        let sql = format!(
            "SELECT 1 FROM {}.{} AS c WHERE {} AND NOT EXISTS (SELECT 1 FROM {}.{} AS p \
             WHERE {}) LIMIT 1",
            q(&nt.db),
            q(&nt.name),
            not_null.join(" AND "),
            q(&fk.parent_db),
            q(&fk.parent_table),
            joined.join(" AND ")
        );
        let ast::Statement::Select(query) = innoxide_sql::parse::parse(&sql)? else {
            return Err(SqlError::new(ER_INTERNAL_ERROR, &[&sql]));
        };
        if self.select(&query, &[])?.1.is_empty() {
            return Ok(());
        }
        let shown = format!(
            "`{}`.`{}`, {}",
            nt.db,
            fk.parent_table,
            super::super::fk::fk_text(fk, &nt.db)
        );
        Err(SqlError::new(ER_NO_REFERENCED_ROW_2, &[&shown]))
    }

    /// Copies every row of `old` into `new` (column i of `new` from old column `srcs[i]`, or
    /// its default), COPY_BATCH rows per transaction. Returns the number of rows.
    /// Copies the rows of `old` into `new` through `reader`, which holds a shared lock on
    /// `old` (writers wait) and keeps it: the caller ends it once the copy has the name.
    fn copy_rows(
        &mut self,
        reader: &mut innoxide_engine::Trx,
        old: &SqlTable,
        new: &Arc<SqlTable>,
        srcs: &[Option<usize>],
    ) -> Result<u64, SqlError> {
        let cat = self.server.catalog.clone();
        let mode = self.vars.sql_mode();
        let checks = self.table_checks(new)?;
        let mut w = Warnings::default();
        let mut n = 0u64;
        let mut writer = cat.engine.begin();
        let now = self.stmt_time;
        // New columns with an expression default: evaluated for each row (generated.rs N5).
        let unset: Vec<usize> = (new.columns.iter().enumerate())
            .filter(|(i, c)| {
                srcs.get(*i).copied().flatten().is_none()
                    && matches!(c.meta.default, Some(DefaultValue::Expr(_)))
            })
            .map(|(i, _)| i)
            .collect();
        {
            let rows = reader
                .scan(
                    &old.table,
                    None,
                    KeyBound::Unbounded,
                    KeyBound::Unbounded,
                    true,
                )
                .map_err(engine_error)?;
            for r in rows {
                let r = r.map_err(engine_error)?;
                n += 1;
                let datums = load_row(old, &r);
                let mut out = Vec::with_capacity(new.columns.len());
                for (i, c) in new.columns.iter().enumerate() {
                    let mut d = match srcs.get(i).copied().flatten() {
                        Some(s) => datums[s].clone(),
                        None if c.meta.hidden || c.meta.auto_increment => Datum::UInt(n),
                        None => {
                            let v = value_in_existing_rows(&c.meta, c.nullable, &c.ty, now);
                            let Some(d) = v else {
                                out.push(innoxide_engine::Value::Null);
                                continue;
                            };
                            d
                        }
                    };
                    if d.is_null() && !c.nullable {
                        if mode.strict() {
                            return Err(SqlError::new(ER_INVALID_USE_OF_NULL, &[]));
                        }
                        w.push(types::Level::Warning, WARN_DATA_TRUNCATED, &[&c.name, &n]);
                        d = c.ty.default_for_not_null();
                    }
                    out.push(types::store(
                        &d,
                        &c.ty,
                        mode,
                        (&old.name, &c.name),
                        n,
                        &mut w,
                    )?);
                }
                self.fill_default_exprs(new, &mut out, &unset, n, false, &mut w)?;
                self.fill_generated(new, &mut out, n, false, &mut w)?;
                if let Some(ch) = &checks {
                    let row = load_row(new, &out);
                    super::check::row_passes(ch, &row, mode, false, &mut w)?;
                }
                writer.insert(&new.table, &out).map_err(engine_error)?;
                if n.is_multiple_of(COPY_BATCH) {
                    if self.interrupt.load(Ordering::Acquire) {
                        return Err(SqlError::new(ER_QUERY_INTERRUPTED, &[]));
                    }
                    writer.commit().map_err(engine_error)?;
                    writer = cat.engine.begin();
                }
            }
        }
        writer.commit().map_err(engine_error)?;
        self.warnings.extend(w.0);
        Ok(n)
    }
}

pub(super) fn check_table_name(name: &str) -> Result<(), SqlError> {
    if name.is_empty() || name.len() > 64 || name.contains('/') || name.ends_with(' ') {
        return Err(SqlError::new(ER_WRONG_TABLE_NAME, &[&name]));
    }
    Ok(())
}

/// RENAME's errors as MySQL words them: 1146 for a missing table, 1050 for a taken name.
fn rename_error(e: innoxide_engine::Error) -> SqlError {
    engine_error(e)
}

/// The columns ALTER TABLE's operations rename, (old, new) in order.
fn column_renames(ops: &[AlterOp]) -> Vec<(String, String)> {
    ops.iter()
        .filter_map(|op| match op {
            AlterOp::ChangeColumn { old, column, .. } if *old != column.name => {
                Some((old.clone(), column.name.clone()))
            }
            AlterOp::RenameColumn { old, new } if old != new => Some((old.clone(), new.clone())),
            _ => None,
        })
        .collect()
}

/// Where each table RENAME TABLE's steps (applied in order) move ends up: (name before the
/// statement, name after it).
fn final_names(renames: &[(String, String)]) -> Vec<(String, String)> {
    let mut now: Vec<(String, String)> = Vec::new(); // (current name, original name)
    for (from, to) in renames {
        match now.iter_mut().find(|(cur, _)| cur == from) {
            Some(e) => e.0.clone_from(to),
            None => now.push((to.clone(), from.clone())),
        }
    }
    now.into_iter().map(|(cur, orig)| (orig, cur)).collect()
}

/// How ALTER TABLE's operations run by themselves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Natural {
    /// The table is rebuilt (ALGORITHM=COPY, LOCK=SHARED).
    Copy,
    /// The rows are tested under a shared table lock, then the definition changes
    /// (ALGORITHM=INPLACE, LOCK=SHARED).
    Validate,
    /// Indexes are built or dropped in place, the table's DML waiting (ALGORITHM=INPLACE,
    /// LOCK=EXCLUSIVE).
    Index,
    /// Only the definition changes (ALGORITHM=INSTANT, LOCK=NONE).
    Instant,
}

/// The algorithm ALTER TABLE runs with ("COPY", "INPLACE" or "INSTANT"), its operations'
/// `natural` one checked against the ALGORITHM= and LOCK= clauses as MySQL does: one that
/// asks for a faster algorithm or more concurrency than the operations allow is 1845/1846;
/// ALGORITHM=COPY rebuilds whatever the operations. (LOCK=EXCLUSIVE is granted with the
/// algorithm's own locking, which lets more through.)
fn how_altered(ops: &[AlterOp], natural: Natural) -> Result<&'static str, SqlError> {
    let last = |f: fn(&AlterOp) -> Option<&String>| ops.iter().rev().find_map(f);
    let algorithm = last(|o| match o {
        AlterOp::Algorithm(a) => Some(a),
        _ => None,
    });
    let used = match (algorithm.map(String::as_str), natural) {
        (Some("COPY"), _) => Natural::Copy,
        (Some("INPLACE"), Natural::Copy) => {
            return Err(SqlError::new(
                ER_ALTER_OPERATION_NOT_SUPPORTED,
                &[&"ALGORITHM=INPLACE", &"ALGORITHM=COPY"],
            ))
        }
        (Some("INSTANT"), Natural::Copy | Natural::Validate | Natural::Index) => {
            let try_ = if natural == Natural::Copy {
                "ALGORITHM=COPY"
            } else {
                "ALGORITHM=COPY/INPLACE"
            };
            return Err(SqlError::new(
                ER_ALTER_OPERATION_NOT_SUPPORTED,
                &[&"ALGORITHM=INSTANT", &try_],
            ));
        }
        _ => natural,
    };
    let lock = last(|o| match o {
        AlterOp::Lock(l) => Some(l),
        _ => None,
    });
    match (lock.map(String::as_str), used) {
        (Some("NONE"), Natural::Copy | Natural::Validate) => Err(SqlError::new(
            ER_ALTER_OPERATION_NOT_SUPPORTED_REASON,
            &[
                &"LOCK=NONE",
                &"COPY algorithm requires a lock",
                &"LOCK=SHARED",
            ],
        )),
        (Some("NONE" | "SHARED"), Natural::Index) => {
            let asked = format!("LOCK={}", lock.map_or("", String::as_str));
            Err(SqlError::new(
                ER_ALTER_OPERATION_NOT_SUPPORTED,
                &[&asked, &"LOCK=EXCLUSIVE"],
            ))
        }
        _ => Ok(match used {
            Natural::Copy => "COPY",
            Natural::Validate | Natural::Index => "INPLACE",
            Natural::Instant => "INSTANT",
        }),
    }
}
