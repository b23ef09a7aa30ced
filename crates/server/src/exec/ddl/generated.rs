//! Generated columns (`[GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED]`): validated when a
//! table is created or altered, computed whenever a row is written (INSERT, REPLACE, UPDATE
//! of any column, ON DUPLICATE KEY UPDATE, ALTER TABLE's copy) and stored with the row.
//!
//! INVARIANTS
//! - N1: a generated column's expression reads only its table's columns, none
//!   AUTO_INCREMENT (3109), generated ones only if defined before it (3107), and calls no
//!   function whose value is not the row's alone (3102, the list of check.rs): it is a
//!   function of the row's other values, so computing it on every write keeps it right.
//! - N2: no statement writes a generated column a value of its own (3105; DEFAULT is
//!   allowed; outside strict mode an INSERT's VALUES for one are ignored with warning 1906,
//!   as MariaDB does, which mariadb-dump's output needs); a column another generated column
//!   reads is not dropped or renamed (3108).
//! - N3: generated columns are computed in column order, each seeing those before it, after
//!   every other column of the row has its value and before CHECK constraints are tested.
//! - N4: a table's compiled expressions are cached for one statement, by its description
//!   (`Arc<SqlTable>`), like check.rs H4.
//!
//! Latch order: the catalog's maps only (leaves).

use std::sync::Arc;

use innoxide_engine::Value;
use innoxide_sql::error::*;
use innoxide_sql::types::{self, SqlType, Warnings};

use super::super::expr::{CExpr, Compiler, EType, Env, ScopeTable};
use super::super::select::load_row;
use super::super::Session;
use super::check::{parse_stored, parts, stored_columns, Part};
use crate::catalog::{GeneratedMeta, SqlTable};

/// A table's compiled generated columns: (column, expression over the table's row).
pub(crate) type Generated = Arc<[(usize, CExpr)]>;

/// A column of a table being defined, for N1: name, type, AUTO_INCREMENT, its expression.
pub(super) type GenColumn<'a> = (String, SqlType, bool, Option<&'a GeneratedMeta>);

/// Error 3108 if a generated column among `cols` (name and expression) reads column `name`
/// (which is dropped or renamed).
pub(super) fn unused_by_generated<'a>(
    name: &str,
    cols: impl Iterator<Item = (&'a str, Option<&'a GeneratedMeta>)>,
) -> Result<(), SqlError> {
    let lower = name.to_ascii_lowercase();
    for (c, g) in cols {
        if c.eq_ignore_ascii_case(name) {
            continue;
        }
        if g.is_some_and(|g| stored_columns(&g.text).contains(&lower)) {
            return Err(SqlError::new(ER_DEPENDENT_BY_GENERATED_COLUMN, &[&name]));
        }
    }
    Ok(())
}

impl Session {
    /// N1 for the generated columns among `cols` of table `db.table`.
    pub(super) fn validate_generated(
        &mut self,
        (db, table): (&str, &str),
        cols: &[GenColumn<'_>],
    ) -> Result<(), SqlError> {
        if cols.iter().all(|c| c.3.is_none()) {
            return Ok(());
        }
        let scope = [ScopeTable {
            name: table.to_string(),
            db: db.to_string(),
            columns: cols
                .iter()
                .map(|(n, ty, _, _)| (n.clone(), EType::Column(Box::new(ty.clone())), false))
                .collect(),
            offset: 0,
            table: None,
        }];
        for (i, (name, _, _, g)) in cols.iter().enumerate() {
            let Some(g) = g else {
                continue;
            };
            let e = parse_stored(&g.text)?;
            for part in parts(&e) {
                match part {
                    Part::Column(c) => match cols.iter().position(|k| k.0.eq_ignore_ascii_case(&c))
                    {
                        None => {
                            return Err(SqlError::new(
                                ER_BAD_FIELD_ERROR,
                                &[&c, &"generated column function"],
                            ))
                        }
                        Some(j) if cols[j].3.is_some() && j >= i => {
                            return Err(SqlError::new(ER_GENERATED_COLUMN_NON_PRIOR, &[]))
                        }
                        Some(j) if cols[j].2 => {
                            return Err(SqlError::new(ER_GENERATED_COLUMN_REF_AUTO_INC, &[name]))
                        }
                        Some(_) => {}
                    },
                    Part::Function(_) | Part::Query | Part::Variable => {
                        return Err(SqlError::new(
                            ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED,
                            &[name],
                        ))
                    }
                }
            }
            Compiler::new(&scope, "generated column function").compile(&e, self)?;
        }
        Ok(())
    }

    /// The generated columns of `t`, compiled (N4); None if it has none.
    pub(crate) fn table_generated(
        &mut self,
        t: &Arc<SqlTable>,
    ) -> Result<Option<Generated>, SqlError> {
        if !t.has_generated {
            return Ok(None);
        }
        if let Some((_, g)) = self.gen_cache.iter().find(|(k, _)| Arc::ptr_eq(k, t)) {
            return Ok(Some(g.clone()));
        }
        let scope = [ScopeTable::of_table(t, &t.name, 0)];
        let mut out = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(g) = &c.meta.generated {
                let e = parse_stored(&g.text)?;
                let ce = Compiler::new(&scope, "generated column function")
                    .compile(&e, self)?
                    .0;
                out.push((i, ce));
            }
        }
        let gens: Generated = out.into();
        self.gen_cache.push((t.clone(), gens.clone()));
        Ok(Some(gens))
    }

    /// Computes the generated columns of `row` (N3), stored as an INSERT would store them
    /// (`ignore`: IGNORE's lax conversions and NULL-into-NOT-NULL warnings). False if the
    /// table has none (nothing changed).
    pub(crate) fn fill_generated(
        &mut self,
        t: &Arc<SqlTable>,
        row: &mut [Value],
        row_no: u64,
        ignore: bool,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        let Some(gens) = self.table_generated(t)? else {
            return Ok(false);
        };
        let mode = self.vars.sql_mode();
        let store_mode = if ignore {
            super::super::dml::lax(mode)
        } else {
            mode
        };
        let mut datums = load_row(t, row);
        for (c, ce) in gens.iter() {
            let col = &t.columns[*c];
            let mut d = ce.eval(&Env::new(&datums, &[], mode), w)?;
            if d.is_null() && !col.nullable {
                if mode.strict() && !ignore {
                    return Err(SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]));
                }
                w.push_error(
                    types::Level::Warning,
                    SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]),
                );
                d = col.ty.default_for_not_null();
            }
            let v = types::store(&d, &col.ty, store_mode, (&t.name, &col.name), row_no, w)?;
            datums[*c] = types::load(&v, &col.ty);
            row[*c] = v;
        }
        Ok(true)
    }
}
