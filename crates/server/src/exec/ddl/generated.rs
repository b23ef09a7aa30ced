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
//! - N5: expression defaults (DEFAULT (expr), MySQL 8.0.13) share N1's column rules with
//!   their own errors (3767 for a later generated or expression-default column, 3768 for an
//!   AUTO_INCREMENT one, 3769 for a subquery, 3772 for a variable) but may call any function
//!   (RAND(), UUID(), NOW() are what they are for). One is evaluated for each row written
//!   without a value for its column (INSERT, REPLACE, ALTER TABLE's copy of a new column),
//!   in column order after the row's other given and constant values, before generated
//!   columns; a column one reads is not dropped or renamed (3766).
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
use crate::catalog::{DefaultValue, GeneratedMeta, SqlTable};

/// A table's compiled generated columns: (column, expression over the table's row).
pub(crate) type Generated = Arc<[(usize, CExpr)]>;

/// A column of a table being defined, for N1 and N5: name, type, AUTO_INCREMENT, its
/// generated expression, its expression default.
pub(super) type GenColumn<'a> = (
    String,
    SqlType,
    bool,
    Option<&'a GeneratedMeta>,
    Option<&'a str>,
);

/// The `GenColumn` of a column named `name` of type `ty` with catalog entry `m`.
pub(super) fn gen_column<'a>(
    name: &str,
    ty: &SqlType,
    auto: bool,
    m: &'a crate::catalog::ColumnMeta,
) -> GenColumn<'a> {
    let expr = match &m.default {
        Some(DefaultValue::Expr(t)) => Some(t.as_str()),
        _ => None,
    };
    (
        name.to_string(),
        ty.clone(),
        auto,
        m.generated.as_ref(),
        expr,
    )
}

/// Whether a stored expression among `cols` (a column's name and its expression's text)
/// other than column `name`'s own reads column `name`.
fn read_by<'a>(name: &str, cols: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> bool {
    let lower = name.to_ascii_lowercase();
    cols.filter(|(c, _)| !c.eq_ignore_ascii_case(name))
        .any(|(_, text)| text.is_some_and(|t| stored_columns(t).contains(&lower)))
}

/// Error 3766 if an expression default among `cols` (name and default) reads column `name`
/// of table `table` (which is dropped or renamed).
pub(super) fn unused_by_defaults<'a>(
    name: &str,
    table: &str,
    cols: impl Iterator<Item = (&'a str, Option<&'a DefaultValue>)>,
) -> Result<(), SqlError> {
    let texts = cols.map(|(c, d)| match d {
        Some(DefaultValue::Expr(t)) => (c, Some(t.as_str())),
        _ => (c, None),
    });
    if read_by(name, texts) {
        return Err(SqlError::new(
            ER_DEPENDENT_BY_DEFAULT_GENERATED_VALUE,
            &[&name, &table],
        ));
    }
    Ok(())
}

/// Error 3108 if a generated column among `cols` (name and expression) reads column `name`
/// (which is dropped or renamed).
pub(super) fn unused_by_generated<'a>(
    name: &str,
    cols: impl Iterator<Item = (&'a str, Option<&'a GeneratedMeta>)>,
) -> Result<(), SqlError> {
    if read_by(name, cols.map(|(c, g)| (c, g.map(|g| g.text.as_str())))) {
        return Err(SqlError::new(ER_DEPENDENT_BY_GENERATED_COLUMN, &[&name]));
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
        if cols.iter().all(|c| c.3.is_none() && c.4.is_none()) {
            return Ok(());
        }
        let scope = [ScopeTable {
            name: table.to_string(),
            db: db.to_string(),
            columns: cols
                .iter()
                .map(|(n, ty, ..)| (n.clone(), EType::Column(Box::new(ty.clone())), false))
                .collect(),
            offset: 0,
            table: None,
        }];
        for (i, (name, _, _, g, d)) in cols.iter().enumerate() {
            if let Some(text) = d {
                self.validate_default_expr(&scope, cols, i, name, text)?;
            }
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

    /// N5's column rules for the expression default `text` of column `i` (`name`) of `cols`.
    fn validate_default_expr(
        &mut self,
        scope: &[ScopeTable],
        cols: &[GenColumn<'_>],
        i: usize,
        name: &str,
        text: &str,
    ) -> Result<(), SqlError> {
        let e = parse_stored(text)?;
        for part in parts(&e) {
            let Part::Column(c) = part else {
                continue;
            };
            match cols.iter().position(|k| k.0.eq_ignore_ascii_case(&c)) {
                None => {
                    return Err(SqlError::new(
                        ER_BAD_FIELD_ERROR,
                        &[&c, &"default value expression"],
                    ))
                }
                Some(j) if (cols[j].3.is_some() || cols[j].4.is_some()) && j >= i => {
                    return Err(SqlError::new(ER_DEFAULT_VAL_GENERATED_NON_PRIOR, &[&name]))
                }
                Some(j) if cols[j].2 => {
                    return Err(SqlError::new(
                        ER_DEFAULT_VAL_GENERATED_REF_AUTO_INC,
                        &[&name],
                    ))
                }
                Some(_) => {}
            }
        }
        Compiler::new(scope, "default value expression").compile(&e, self)?;
        Ok(())
    }

    /// The expression defaults of `t`, compiled (N4, N5): (column, expression).
    fn table_default_exprs(&mut self, t: &Arc<SqlTable>) -> Result<Generated, SqlError> {
        if let Some((_, g)) = self.default_cache.iter().find(|(k, _)| Arc::ptr_eq(k, t)) {
            return Ok(g.clone());
        }
        let exprs =
            self.compile_column_exprs(t, "default value expression", |c| match &c.meta.default {
                Some(DefaultValue::Expr(text)) => Some(text),
                _ => None,
            })?;
        self.default_cache.push((t.clone(), exprs.clone()));
        Ok(exprs)
    }

    /// Evaluates the expression defaults of the columns `unset` of `row` (N5), stored as
    /// an INSERT stores values (`ignore`: IGNORE's lax conversions).
    pub(crate) fn fill_default_exprs(
        &mut self,
        t: &Arc<SqlTable>,
        row: &mut [Value],
        unset: &[usize],
        row_no: u64,
        ignore: bool,
        w: &mut Warnings,
    ) -> Result<(), SqlError> {
        if unset.is_empty() {
            return Ok(());
        }
        let exprs = self.table_default_exprs(t)?;
        let wanted = exprs.iter().filter(|(c, _)| unset.contains(c));
        self.store_computed(t, row, wanted, row_no, ignore, w)
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
        let gens = self.compile_column_exprs(t, "generated column function", |c| {
            c.meta.generated.as_ref().map(|g| &g.text)
        })?;
        self.gen_cache.push((t.clone(), gens.clone()));
        Ok(Some(gens))
    }

    /// The stored expressions `text_of` gives for `t`'s columns, compiled over its row.
    fn compile_column_exprs(
        &mut self,
        t: &Arc<SqlTable>,
        what: &'static str,
        text_of: impl Fn(&crate::catalog::SqlColumn) -> Option<&String>,
    ) -> Result<Generated, SqlError> {
        let scope = [ScopeTable::of_table(t, &t.name, 0)];
        let mut out = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(text) = text_of(c) {
                let e = parse_stored(text)?;
                out.push((i, Compiler::new(&scope, what).compile(&e, self)?.0));
            }
        }
        Ok(out.into())
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
        self.store_computed(t, row, gens.iter(), row_no, ignore, w)?;
        Ok(true)
    }

    /// Evaluates `exprs` over `row` in order, each seeing the values before it, and stores
    /// each into its column as an INSERT would (NULL into NOT NULL: 1048, a warning with
    /// IGNORE or outside strict mode).
    fn store_computed<'e>(
        &mut self,
        t: &SqlTable,
        row: &mut [Value],
        exprs: impl Iterator<Item = &'e (usize, CExpr)>,
        row_no: u64,
        ignore: bool,
        w: &mut Warnings,
    ) -> Result<(), SqlError> {
        let mode = self.vars.sql_mode();
        let store_mode = if ignore {
            super::super::dml::lax(mode)
        } else {
            mode
        };
        let mut datums = load_row(t, row);
        for (c, ce) in exprs {
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
        Ok(())
    }
}
