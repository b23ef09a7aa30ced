//! INSERT (VALUES, SELECT, IGNORE, REPLACE, ON DUPLICATE KEY UPDATE), UPDATE and DELETE.
//!
//! INVARIANTS
//! - D1: every value reaches the engine through `types::store` for its column (MySQL's
//!   assignment conversions, sql_mode errors and warnings).
//! - D2: UPDATE and DELETE read their rows with exclusive locking reads (UPDATE's
//!   semi-consistent at READ COMMITTED) and change each by primary key; a row is changed only if the WHERE
//!   condition holds on the version locked.
//! - D3: a prepared UPDATE or DELETE compiles its WHERE, ORDER BY and assignments once
//!   (`ChangePlan`) and runs that again while the session compiles the same way and the table
//!   is the engine's table the catalog hands out (prepared.rs P3); the access path and LIMIT are chosen
//!   at each execution from the parameters, as a kept SELECT's are (select.rs P1).
//! - AI1 (innodb_autoinc_lock_mode 0): an INSERT into a table with an AUTO_INCREMENT column
//!   takes the table's AUTO-INC lock (the engine's, released at the statement's end) before
//!   its first row, so no other statement allocates values meanwhile: its values are
//!   consecutive, as in MySQL's "traditional" mode.
//! - AI2 (mode 1): the same for inserts whose number of rows is not known beforehand (INSERT
//!   ... SELECT, LOAD DATA: `Session::bulk_insert`); an INSERT ... VALUES of several rows
//!   reserves a value per row at once (`Session::autoinc_block`), so its values are
//!   consecutive without the lock; values reserved for rows that gave their own are lost, as
//!   in MySQL's mixed-mode inserts.
//! - AI3 (mode 2, the default): no AUTO-INC lock; VALUES reserves as in AI2, a bulk insert
//!   allocates row by row and its values may interleave with other statements'.

use std::sync::Arc;

use innoxide_engine::{Collation, KeyBound, LockRead, Value};
use innoxide_sql::ast::{self, Expr, InsertSource};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{CExpr, Compiler, Env, ScopeTable};
use super::merge::ViewCheck;
use super::prepared::PlanBasis;
use super::rowbuf::RowBuf;
use super::select::{conjuncts, load_row, mark_columns, sort_by_keys, Access, ReadHow};
use super::{KeptPlan, Output, Session};
use crate::catalog::{engine_error, DefaultValue, SqlTable};

impl Session {
    /// What `SET c = DEFAULT` assigns (UPDATE, ON DUPLICATE KEY UPDATE): column `c`'s
    /// default as an expression over the row (an expression default is evaluated on it);
    /// for a NOT NULL column without one, 1364 in strict mode, else its type's implicit
    /// default with that warning.
    fn default_assignment(&mut self, t: &SqlTable, c: usize) -> Result<Expr, SqlError> {
        let col = &t.columns[c];
        let text = |b: Vec<u8>| {
            Expr::Literal(ast::Literal::String {
                bytes: b,
                charset: None,
            })
        };
        Ok(match &col.meta.default {
            Some(DefaultValue::Text(s)) => text(s.clone().into_bytes()),
            Some(DefaultValue::Now) => Expr::Function {
                name: "now".into(),
                args: match col.ty.fsp() {
                    0 => vec![],
                    f => vec![Expr::Literal(ast::Literal::Number(f.to_string()))],
                },
                distinct: false,
                star: false,
            },
            Some(DefaultValue::Expr(e)) => super::ddl::parse_stored(e)?,
            Some(DefaultValue::Null) => Expr::Literal(ast::Literal::Null),
            None if col.nullable || col.meta.auto_increment => Expr::Literal(ast::Literal::Null),
            None => {
                let e = SqlError::new(ER_NO_DEFAULT_FOR_FIELD, &[&col.name]);
                if self.vars.sql_mode().strict() {
                    return Err(e);
                }
                self.note(types::Level::Warning, e);
                text(col.ty.default_for_not_null().to_text().unwrap_or_default())
            }
        })
    }

    /// A VALUES expression with its DEFAULT(col) calls replaced by the target table's
    /// defaults (MySQL reads `col` there as the table's column); None if it has none.
    fn values_defaults(&mut self, t: &SqlTable, e: &Expr) -> Result<Option<Expr>, SqlError> {
        if matches!(e, Expr::Literal(_) | Expr::Param(_) | Expr::Column { .. }) {
            return Ok(None);
        }
        let mut x = e.clone();
        let mut failed = None;
        let mut any = false;
        x.visit_mut(&mut |n| {
            let Expr::Function { name, args, .. } = n else {
                return true;
            };
            let [Expr::Column {
                table: None,
                name: col,
            }] = args.as_slice()
            else {
                return true;
            };
            if name != "default" {
                return true;
            }
            any = true;
            let r = match t.column(col) {
                None => Err(SqlError::new(ER_BAD_FIELD_ERROR, &[col, &"field list"])),
                Some(c) if matches!(t.columns[c].meta.default, Some(DefaultValue::Expr(_))) => {
                    Err(SqlError::new(ER_DEFAULT_AS_VAL_GENERATED, &[]))
                }
                Some(c) => self.default_assignment(t, c),
            };
            match r {
                Ok(d) => *n = d,
                Err(e) => failed = Some(e),
            }
            false
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(any.then_some(x)),
        }
    }

    /// The value a column gets when none is given (with IGNORE, a NOT NULL column without a
    /// default gets its type's implicit default and a warning even in strict mode, as in
    /// MySQL).
    fn default_of(
        &self,
        t: &SqlTable,
        c: usize,
        ignore: bool,
        w: &mut Warnings,
    ) -> Result<Datum, SqlError> {
        let col = &t.columns[c];
        Ok(match &col.meta.default {
            Some(DefaultValue::Text(s)) => Datum::Bytes(s.clone().into_bytes()),
            Some(DefaultValue::Now) => Datum::DateTime(self.stmt_time),
            Some(DefaultValue::Null) => Datum::Null,
            // Evaluated with the row: `make_row` leaves the column to `fill_default_exprs`.
            Some(DefaultValue::Expr(_)) => Datum::Null,
            None if col.nullable || col.meta.auto_increment || col.meta.hidden => Datum::Null,
            None => {
                if self.vars.sql_mode().strict() && !ignore {
                    return Err(SqlError::new(ER_NO_DEFAULT_FOR_FIELD, &[&col.name]));
                }
                w.push_error(
                    types::Level::Warning,
                    SqlError::new(ER_NO_DEFAULT_FOR_FIELD, &[&col.name]),
                );
                col.ty.default_for_not_null()
            }
        })
    }

    /// Converts one row of datums (None: not given) into engine values (D1), filling
    /// defaults and AUTO_INCREMENT values; the columns left to their expression defaults
    /// are in `unset` (NULL in the row until `fill_default_exprs`).
    #[allow(clippy::too_many_arguments)]
    fn make_row(
        &mut self,
        t: &SqlTable,
        given: Vec<Option<Datum>>,
        mut pending: Vec<Pending>,
        row_no: u64,
        ignore: bool,
        w: &mut Warnings,
        first_id: &mut u64,
        unset: &mut Vec<usize>,
    ) -> Result<Vec<Value>, SqlError> {
        unset.clear();
        let mode = self.vars.sql_mode();
        let mut out = Vec::with_capacity(t.columns.len());
        for (c, g) in given.into_iter().enumerate() {
            let col = &t.columns[c];
            if let Some((warned, failed)) = pending.get_mut(c).and_then(Option::take) {
                w.0.extend(warned.0);
                if let Some(e) = failed {
                    return Err(e);
                }
            }
            // Computed once the row's other values are in (ddl/generated.rs N3).
            if col.meta.generated.is_some()
                || (g.is_none() && matches!(col.meta.default, Some(DefaultValue::Expr(_))))
            {
                if col.meta.generated.is_none() {
                    unset.push(c);
                }
                out.push(Value::Null);
                continue;
            }
            let mut d = match g {
                Some(d) => d,
                None => self.default_of(t, c, ignore, w)?,
            };
            if col.meta.auto_increment || col.meta.hidden {
                let zero = !mode.has(types::SqlMode::NO_AUTO_VALUE_ON_ZERO)
                    && d.compare(&Datum::Int(0), innoxide_engine::Collation::Binary)
                        == Some(std::cmp::Ordering::Equal);
                if d.is_null() || zero {
                    // SET insert_id gives the statement's first generated value.
                    let given = if *first_id == 0 && !col.meta.hidden {
                        self.vars.take_insert_id()
                    } else {
                        None
                    };
                    let reserved = match &mut self.autoinc_block {
                        Some((next, left)) if *left > 0 && !col.meta.hidden && given.is_none() => {
                            let v = *next;
                            *next = v.saturating_add(self.vars.auto_increment_increment().max(1));
                            *left -= 1;
                            Some(v)
                        }
                        _ => None,
                    };
                    let id = match given.or(reserved) {
                        Some(v) => {
                            self.server.catalog.saw_auto_inc(t, v)?;
                            v
                        }
                        None if col.meta.hidden => self.server.catalog.next_auto_inc(t, 1, 1)?,
                        None => self.server.catalog.next_auto_inc(
                            t,
                            self.vars.auto_increment_increment(),
                            self.vars.auto_increment_offset(),
                        )?,
                    };
                    if *first_id == 0 && !col.meta.hidden {
                        *first_id = id;
                    }
                    d = Datum::UInt(id);
                } else {
                    let v = d.to_u64(&mut Warnings::default());
                    self.server.catalog.saw_auto_inc(t, v)?;
                }
            }
            if d.is_null() && !col.nullable {
                if ignore || !mode.strict() {
                    w.push_error(
                        types::Level::Warning,
                        SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]),
                    );
                    d = col.ty.default_for_not_null();
                } else {
                    return Err(SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]));
                }
            }
            let m = if ignore { lax(mode) } else { mode };
            out.push(types::store(
                &d,
                &col.ty,
                m,
                (&t.name, &col.name),
                row_no,
                w,
            )?);
        }
        Ok(out)
    }

    pub(crate) fn insert(
        &mut self,
        ins: &ast::Insert,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let mut need = crate::privs::INSERT;
        if !ins.on_duplicate.is_empty() {
            need |= crate::privs::UPDATE;
        }
        if ins.replace {
            need |= crate::privs::DELETE;
        }
        if let Some((base, check)) = self.insert_through_view(ins)? {
            let to = ViewTarget {
                view: &ins.table,
                need,
                insert: true,
            };
            return self.through_view(to, check, |s| s.insert(&base, params));
        }
        let check = self.view_check.take();
        let db = self.db_of(&ins.table)?;
        // Privileges held on some columns only (access.rs A3): checked on the columns below.
        let by_column = self.check_table_or_columns(&db, &ins.table.name, need)?;
        let t = self.open_table(&db, &ins.table.name)?;
        let check = self.compile_check(check, &t)?;
        let constraints = self.table_checks(&t)?;
        let cols: Vec<usize> = if ins.columns.is_empty() {
            t.visible().map(|(i, _)| i).collect()
        } else {
            let mut v = Vec::with_capacity(ins.columns.len());
            for n in &ins.columns {
                let c = t
                    .column(n)
                    .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[n, &"field list"]))?;
                if v.contains(&c) {
                    return Err(SqlError::new(ER_FIELD_SPECIFIED_TWICE, &[n]));
                }
                v.push(c);
            }
            v
        };
        if by_column != 0 {
            let name = |c: &usize| t.columns[*c].name.as_str();
            let ins_bits = by_column & crate::privs::INSERT;
            self.check_columns(&db, &t.name, ins_bits, cols.iter().map(name))?;
            let updated: Vec<usize> = (ins.on_duplicate.iter())
                .filter_map(|(n, _)| t.column(n))
                .collect();
            let upd_bits = by_column & crate::privs::UPDATE;
            self.check_columns(&db, &t.name, upd_bits, updated.iter().map(name))?;
        }
        // Source rows as datums.
        let mode = self.vars.sql_mode();
        let mut w = Warnings::default();
        let mut src: Vec<Vec<Option<Datum>>> = Vec::new();
        // INSERT ... SELECT: the selected rows, gathered before the first is inserted (MySQL
        // reads a SELECT of the table being filled whole first too), and where each goes.
        let mut selected: Option<(RowBuf, usize)> = None;
        // VALUES: per row and column, what evaluating the value reported (given out as that
        // column is stored, so warnings and errors come column by column, as in MySQL).
        let mut pending: Vec<Vec<Pending>> = Vec::new();
        match &ins.source {
            InsertSource::Values(rows) => {
                for (ri, r) in rows.iter().enumerate() {
                    if r.len() != cols.len() && !(r.is_empty() && ins.columns.is_empty()) {
                        let row_no = self.load_row_base + ri as u64 + 1;
                        return Err(SqlError::new(ER_WRONG_VALUE_COUNT_ON_ROW, &[&row_no]));
                    }
                    let mut given = vec![None; t.columns.len()];
                    let mut pend: Vec<Pending> = (0..t.columns.len()).map(|_| None).collect();
                    for (e, &c) in r.iter().zip(&cols) {
                        given[c] = match e {
                            Expr::Default => None,
                            // MySQL refuses a value for a generated column; outside strict
                            // mode it is ignored with MariaDB's warning, so that
                            // mariadb-dump's INSERTs (every column) load (generated.rs N2).
                            _ if t.columns[c].meta.generated.is_some() => {
                                if mode.strict() {
                                    return Err(not_generated(&t, c));
                                }
                                let mut here = Warnings::default();
                                here.push_error(
                                    types::Level::Warning,
                                    SqlError::new(
                                        ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN,
                                        &[&t.columns[c].name, &t.name],
                                    ),
                                );
                                pend[c] = Some((here, None));
                                None
                            }
                            // A plain string literal is its bytes (LOAD DATA's rows are all
                            // such literals): no compiling it per value.
                            Expr::Literal(ast::Literal::String {
                                bytes,
                                charset: None,
                            }) => Some(Datum::Bytes(bytes.clone())),
                            e => {
                                let with_defaults = self.values_defaults(&t, e)?;
                                let e = with_defaults.as_ref().unwrap_or(e);
                                let mut comp = Compiler::new(&[], "field list");
                                let (ce, _) = comp.compile(e, self)?;
                                let env = Env::new(&[], params, mode);
                                let mut here = Warnings::default();
                                let r = eval_for_change(&ce, &env, &mut here, ins.ignore);
                                let d = r.as_ref().map_or(Datum::Null, Datum::clone);
                                pend[c] = Some((here, r.err()));
                                Some(d)
                            }
                        };
                    }
                    src.push(given);
                    pending.push(pend);
                }
            }
            InsertSource::Select(q) => {
                if let Some(&c) = cols
                    .iter()
                    .find(|&&c| t.columns[c].meta.generated.is_some())
                {
                    return Err(not_generated(&t, c));
                }
                let (c2, rows) = self.select_stored(q, params)?;
                if c2.len() != cols.len() {
                    return Err(SqlError::new(ER_WRONG_VALUE_COUNT_ON_ROW, &[&1]));
                }
                selected = Some((rows, 0));
            }
        }
        let odku: Vec<(usize, CExpr)> = {
            let mut v = Vec::new();
            // Only ON DUPLICATE KEY UPDATE needs names in scope: the old row, then the new.
            let scope = if ins.on_duplicate.is_empty() {
                vec![]
            } else {
                vec![
                    ScopeTable::of_table(&t, &t.name, 0),
                    ScopeTable::of_table(&t, "\u{0}new", t.columns.len()),
                ]
            };
            for (n, e) in &ins.on_duplicate {
                let c = t
                    .column(n)
                    .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[n, &"field list"]))?;
                if t.columns[c].meta.generated.is_some() {
                    if matches!(e, Expr::Default) {
                        // Computed again with the row anyway.
                        continue;
                    }
                    return Err(not_generated(&t, c));
                }
                let e = match e {
                    Expr::Default => self.default_assignment(&t, c)?,
                    e => values_to_new(e),
                };
                let mut comp = Compiler::new(&scope, "field list");
                v.push((c, comp.compile(&e, self)?.0));
            }
            v
        };
        // A single-row INSERT of NULL into a NOT NULL column is an error whatever the
        // sql_mode (only multi-row inserts and IGNORE turn it into a warning), as in MySQL.
        if let (InsertSource::Values(_), [given], false) = (&ins.source, &src[..], ins.ignore) {
            let failed = |c: usize| {
                pending[0]
                    .get(c)
                    .is_some_and(|p| p.as_ref().is_some_and(|p| p.1.is_some()))
            };
            let null_into = t
                .columns
                .iter()
                .zip(given)
                .enumerate()
                .find(|(c, (col, g))| {
                    !col.nullable
                        && !col.meta.auto_increment
                        && matches!(g, Some(Datum::Null))
                        && !failed(*c)
                })
                .map(|(_, x)| x);
            if let Some((col, _)) = null_into {
                return Err(SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]));
            }
        }
        // innodb_autoinc_lock_mode (AI1-AI3).
        self.autoinc_block = None;
        if let Some(ac) = t.columns.iter().position(|c| c.meta.auto_increment) {
            let bulk = selected.is_some() || self.bulk_insert;
            let lock_mode = self.server.vars.autoinc_lock_mode();
            if lock_mode == 0 || (lock_mode == 1 && bulk) {
                self.trx()?.lock_autoinc(&t.table).map_err(engine_error)?;
            } else if !bulk && !self.vars.insert_id_set() {
                let zero_is_auto = !mode.has(types::SqlMode::NO_AUTO_VALUE_ON_ZERO);
                let n = (src.iter())
                    .filter(|r| match &r[ac] {
                        None => true,
                        Some(d) => {
                            d.is_null()
                                || (zero_is_auto
                                    && d.compare(&Datum::Int(0), Collation::Binary)
                                        == Some(std::cmp::Ordering::Equal))
                        }
                    })
                    .count() as u64;
                let (inc, off) = (
                    self.vars.auto_increment_increment(),
                    self.vars.auto_increment_offset(),
                );
                let engine = self.server.catalog.engine.clone();
                let busy = || lock_mode == 1 && engine.autoinc_requested(&t.table);
                if n > 0 {
                    let cat = self.server.catalog.clone();
                    let first = match cat.next_auto_inc_block(&t, n, inc, off, &busy)? {
                        Some(first) => first,
                        None => {
                            // Mode 1: a bulk insert holds the AUTO-INC lock; wait for it.
                            self.trx()?.lock_autoinc(&t.table).map_err(engine_error)?;
                            cat.next_auto_inc_block(&t, n, inc, off, &|| false)?
                                .unwrap_or(0)
                        }
                    };
                    self.autoinc_block = Some((first, n));
                }
            }
        }
        let mut affected = 0u64;
        let mut first_id = 0u64;
        let mut unset = Vec::new();
        let mut pending = pending.into_iter();
        let mut values = src.into_iter();
        for ri in 0usize.. {
            let given = match selected.as_mut() {
                Some((rows, next)) if *next < rows.len() => {
                    let r = rows.take_from(*next, 0)?;
                    *next += 1;
                    let mut given = vec![None; t.columns.len()];
                    for (d, &c) in r.into_iter().zip(&cols) {
                        given[c] = Some(d);
                    }
                    given
                }
                Some(_) => break,
                None => match values.next() {
                    Some(given) => given,
                    None => break,
                },
            };
            let pend = pending.next().unwrap_or_default();
            let mut row = self.make_row(
                &t,
                given,
                pend,
                self.load_row_base + ri as u64 + 1,
                ins.ignore,
                &mut w,
                &mut first_id,
                &mut unset,
            )?;
            self.fill_default_exprs(
                &t,
                &mut row,
                &unset,
                self.load_row_base + ri as u64 + 1,
                ins.ignore,
                &mut w,
            )?;
            self.fill_generated(
                &t,
                &mut row,
                self.load_row_base + ri as u64 + 1,
                ins.ignore,
                &mut w,
            )?;
            // CHECK constraints, then a view's CHECK OPTION: the row's datums made once, and
            // only when something tests them (not on the plain INSERT path).
            if constraints.is_some() || check.is_some() {
                let datums = load_row(&t, &row);
                if let Some(ch) = &constraints {
                    if !super::ddl::row_passes(ch, &datums, mode, ins.ignore, &mut w)? {
                        continue;
                    }
                }
                if !Self::passes_check(&check, &datums, params, mode, ins.ignore, &mut w)? {
                    continue;
                }
            }
            loop {
                let r = self.trx()?.insert(&t.table, &row);
                match r {
                    Ok(()) => {
                        self.fk_check_child(&t, &row, None)?;
                        affected += 1;
                        break;
                    }
                    Err(innoxide_engine::Error::DuplicateKey { index, key }) => {
                        if ins.replace || !odku.is_empty() {
                            let Some(old) = self.find_conflict(&t, &index, &row)? else {
                                continue;
                            };
                            if ins.replace {
                                self.fk_parent_change(&t, &old, None, 0)?;
                                let pk = pk_of(&t, &old);
                                self.trx()?.delete(&t.table, &pk).map_err(engine_error)?;
                                affected += 1;
                                continue;
                            }
                            // ON DUPLICATE KEY UPDATE: evaluate over the old row; VALUES(c)
                            // reads the row that was to be inserted (placed after it).
                            let mut env_row = load_row(&t, &old);
                            env_row.extend(load_row(&t, &row));
                            let changed = self.apply_update(
                                &t,
                                &old,
                                &odku,
                                &mut env_row,
                                self.load_row_base + ri as u64 + 1,
                                &mut w,
                                params,
                                ins.ignore,
                            )?;
                            let new = &env_row[..t.columns.len()];
                            if changed {
                                Self::passes_check(&check, new, params, mode, false, &mut w)?;
                            }
                            affected += if changed { 2 } else { 0 };
                            break;
                        }
                        if ins.ignore {
                            w.push_error(
                                types::Level::Warning,
                                SqlError::new(ER_DUP_ENTRY, &[&key, &index]),
                            );
                            break;
                        }
                        return Err(SqlError::new(ER_DUP_ENTRY, &[&key, &index]));
                    }
                    Err(e) => return Err(engine_error(e)),
                }
            }
        }
        if first_id != 0 {
            self.vars.set_last_insert_id(first_id);
        }
        let n_warn = w.len();
        self.warnings.extend(w.0);
        self.row_count = affected as i64;
        let info = if ins_many(ins) {
            format!("Records: {affected}  Duplicates: 0  Warnings: {n_warn}")
        } else {
            String::new()
        };
        Ok(Output::Ok {
            affected,
            last_insert_id: first_id,
            info,
        })
    }

    /// The existing row that a new row collides with on index `index` ("PRIMARY" or a
    /// unique secondary index), read with an exclusive lock.
    fn find_conflict(
        &mut self,
        t: &Arc<SqlTable>,
        index: &str,
        row: &[Value],
    ) -> Result<Option<Vec<Value>>, SqlError> {
        let et = t.table.clone();
        if index == "PRIMARY" {
            let pk = pk_of(t, row);
            return self
                .trx()?
                .get_locking(&et, &pk, LockRead::Exclusive)
                .map_err(engine_error);
        }
        let Some(ix) = et.def.indexes.iter().find(|i| i.name == index) else {
            return Ok(None);
        };
        let key: Vec<Value> = ix.columns.iter().map(|&c| row[c].clone()).collect();
        let rows = self
            .trx()?
            .scan_locking(
                &et,
                Some(index),
                innoxide_engine::KeyBound::Included(key.clone()),
                innoxide_engine::KeyBound::Included(key),
                true,
                LockRead::Exclusive,
                false,
                &mut |_| true,
            )
            .map_err(engine_error)?;
        Ok(rows.into_iter().next())
    }

    /// Applies SET expressions to one row (by primary key). `env_row` holds the old row as
    /// datums (and, for ON DUPLICATE KEY UPDATE, the proposed row after it); assignments see
    /// the columns already assigned, as in MySQL. Returns whether the row changed.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply_update(
        &mut self,
        t: &Arc<SqlTable>,
        old: &[Value],
        sets: &[(usize, CExpr)],
        env_row: &mut [Datum],
        row_no: u64,
        w: &mut Warnings,
        params: &[Datum],
        ignore: bool,
    ) -> Result<bool, SqlError> {
        let mode = self.vars.sql_mode();
        // IGNORE: values are adjusted with warnings instead of strict-mode errors.
        let store_mode = if ignore { lax(mode) } else { mode };
        let mut new: Vec<Value> = old.to_vec();
        for (c, e) in sets {
            if e.has_sub() {
                self.bind_subs(e, env_row, &[], params)?;
            }
            let d = eval_for_change(e, &Env::new(env_row, params, mode), w, ignore)?;
            let col = &t.columns[*c];
            let d = if d.is_null() && !col.nullable {
                if mode.strict() && !ignore {
                    return Err(SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]));
                }
                w.push_error(
                    types::Level::Warning,
                    SqlError::new(ER_BAD_NULL_ERROR, &[&col.name]),
                );
                col.ty.default_for_not_null()
            } else {
                d
            };
            let v = types::store(&d, &col.ty, store_mode, (&t.name, &col.name), row_no, w)?;
            env_row[*c] = types::load(&v, &col.ty);
            new[*c] = v;
            if col.meta.auto_increment {
                if let Value::Int(x) = &new[*c] {
                    self.server.catalog.saw_auto_inc(t, (*x).max(0) as u64)?;
                } else if let Value::UInt(x) = &new[*c] {
                    self.server.catalog.saw_auto_inc(t, *x)?;
                }
            }
        }
        // Generated columns follow the new values (ddl/generated.rs N3).
        if self.fill_generated(t, &mut new, row_no, ignore, w)? {
            for (c, col) in t.columns.iter().enumerate() {
                if col.meta.generated.is_some() {
                    env_row[c] = types::load(&new[c], &col.ty);
                }
            }
        }
        if new == old {
            return Ok(false);
        }
        // CHECK constraints (ddl/check.rs), then the CHECK OPTION of a view the UPDATE goes
        // through (merge.rs G7).
        if let Some(ch) = self.table_checks(t)? {
            let n = t.columns.len();
            if !super::ddl::row_passes(&ch, &env_row[..n], mode, ignore, w)? {
                return Ok(false);
            }
        }
        if self.row_check.is_some() {
            let check = self.row_check.take();
            let passes = Self::passes_check(&check, env_row, params, mode, ignore, w);
            self.row_check = check;
            if !passes? {
                return Ok(false);
            }
        }
        for (c, col) in t.columns.iter().enumerate() {
            if col.meta.on_update_now && new[c] == old[c] && !sets.iter().any(|s| s.0 == c) {
                new[c] = types::store(
                    &Datum::DateTime(self.stmt_time),
                    &col.ty,
                    mode,
                    (&t.name, &col.name),
                    row_no,
                    w,
                )?;
            }
        }
        // Foreign keys (fk.rs): the children of the old values first, the new parent after.
        self.fk_parent_change(t, old, Some(&new), 0)?;
        let pk_cols = t.pk().to_vec();
        let key = pk_of(t, old);
        let trx = self.trx()?;
        if pk_cols.iter().any(|&c| new[c] != old[c]) {
            trx.delete(&t.table, &key).map_err(engine_error)?;
            trx.insert(&t.table, &new).map_err(|e| match e {
                innoxide_engine::Error::DuplicateKey { index, key } => {
                    SqlError::new(ER_DUP_ENTRY, &[&key, &index])
                }
                e => engine_error(e),
            })?;
        } else {
            let changes: Vec<(usize, Value)> = (0..new.len())
                .filter(|&c| new[c] != old[c])
                .map(|c| (c, new[c].clone()))
                .collect();
            trx.update(&t.table, &key, &changes).map_err(engine_error)?;
        }
        self.fk_check_child(t, &new, Some(old))?;
        Ok(true)
    }

    /// UPDATE/DELETE need their own privilege, and SELECT too when a WHERE reads the table.
    /// Returns the privileges the account holds on some columns only (access.rs A3; UPDATE
    /// then checks them on its columns with `check_change_columns`).
    fn check_change(
        &mut self,
        table: &ast::ObjectName,
        need: u64,
        reads: bool,
    ) -> Result<u64, SqlError> {
        let db = self.db_of(table)?;
        self.check_table_or_columns(&db, &table.name, change_need(need, reads))
    }

    /// A3: UPDATE on each column an UPDATE sets, SELECT on each column it reads (WHERE,
    /// ORDER BY, the values set).
    fn check_change_columns(&mut self, plan: &ChangePlan, bits: u64) -> Result<(), SqlError> {
        let t = &plan.table;
        let set: Vec<&str> = (plan.sets.iter())
            .map(|(c, _)| t.columns[*c].name.as_str())
            .collect();
        self.check_columns(&t.db, &t.name, bits & crate::privs::UPDATE, set)?;
        let mut read = vec![false; t.columns.len()];
        let exprs = plan.pred.iter().chain(plan.late.iter());
        let exprs = exprs.chain(plan.order.iter().map(|o| &o.0));
        for e in exprs.chain(plan.sets.iter().map(|s| &s.1)) {
            super::select::mark_columns(e, &mut read);
        }
        let read = (t.columns.iter().enumerate())
            .filter(|(i, _)| read[*i])
            .map(|(_, c)| c.name.as_str());
        self.check_columns(&t.db, &t.name, bits & crate::privs::SELECT, read)
    }

    /// The plan of a single-table UPDATE (`sets`: its assignments) or DELETE: the one the
    /// executing prepared statement kept, while it holds (D3), else compiled now; a prepared
    /// statement keeps it for its next execution.
    #[allow(clippy::too_many_arguments)]
    fn change_plan(
        &mut self,
        table: &ast::ObjectName,
        alias: Option<&str>,
        hints: &[ast::IndexHint],
        selection: &Option<Expr>,
        order_by: &[ast::OrderItem],
        sets: &[(String, Expr)],
        params: &[Datum],
    ) -> Result<Arc<ChangePlan>, SqlError> {
        let kept = self.stmt_plan.take();
        let plan = match kept.clone().flatten() {
            Some(KeptPlan::Change(p)) if self.change_plan_valid(&p, params)? => p,
            _ => {
                self.profiler.stage("optimizing");
                let start = self.compile_start();
                let db = self.db_of(table)?;
                let t = self.open_table(&db, &table.name)?;
                let name = alias.unwrap_or(&t.name).to_string();
                let index_use = super::select::IndexUse::resolve(&t, hints, &name)?;
                let scope = vec![ScopeTable::of_table(&t, &name, 0)];
                let mut conds = Vec::new();
                if let Some(wc) = selection {
                    conjuncts(wc, &mut conds);
                }
                // Conjuncts with correlated subqueries are tested after the read (they run
                // queries).
                let (mut pred, mut late) = (None, None);
                for c in &conds {
                    let ce = Compiler::new(&scope, "where clause").compile(c, self)?.0;
                    let part = if ce.has_sub() { &mut late } else { &mut pred };
                    *part = Some(match part.take() {
                        Some(p) => CExpr::And(Box::new(p), Box::new(ce)),
                        None => ce,
                    });
                }
                let mut order = Vec::with_capacity(order_by.len());
                for o in order_by {
                    let (c, ty) = Compiler::new(&scope, "order clause").compile(&o.expr, self)?;
                    let (c, ty) = super::expr::enum_as_number(c, ty);
                    order.push((c, o.desc, ty.collation()));
                }
                let mut compiled = Vec::with_capacity(sets.len());
                for (n, e) in sets {
                    let c = t
                        .column(n)
                        .ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[n, &"field list"]))?;
                    if t.columns[c].meta.generated.is_some() {
                        if matches!(e, Expr::Default) {
                            continue;
                        }
                        return Err(not_generated(&t, c));
                    }
                    let default;
                    let e = match e {
                        Expr::Default => {
                            default = self.default_assignment(&t, c)?;
                            &default
                        }
                        e => e,
                    };
                    compiled.push((c, Compiler::new(&scope, "field list").compile(e, self)?.0));
                }
                Arc::new(ChangePlan {
                    name,
                    table: t,
                    index_use,
                    conds,
                    pred,
                    late,
                    order,
                    sets: compiled,
                    basis: self.basis(start, params, true),
                })
            }
        };
        self.profiler.stage("executing");
        if kept.is_some() {
            self.stmt_plan = Some(plan.basis.cacheable.then(|| KeptPlan::Change(plan.clone())));
        }
        Ok(plan)
    }

    /// True if `plan` may run again: the session compiles as it did and the table is the
    /// engine's table the catalog hands out (DDL replaces it; a description loaded again
    /// after the table definition cache evicted it describes the same table).
    fn change_plan_valid(&mut self, plan: &ChangePlan, params: &[Datum]) -> Result<bool, SqlError> {
        if !self.basis_holds(&plan.basis, params) {
            return Ok(false);
        }
        let t = &plan.table;
        if !Arc::ptr_eq(&self.open_table(&t.db, &t.name)?.table, &t.table) {
            self.reprepared();
            return Ok(false);
        }
        Ok(true)
    }

    /// The rows of a single-table UPDATE/DELETE: read with exclusive locks (D2), filtered by
    /// the WHERE condition (inside the locking read), ordered and limited.
    /// `semi_consistent`: UPDATE's semi-consistent read at READ COMMITTED (InnoDB does not
    /// use it for DELETE).
    fn rows_to_change(
        &mut self,
        plan: &ChangePlan,
        semi_consistent: bool,
        order_by: &[ast::OrderItem],
        limit: &Option<Expr>,
        params: &[Datum],
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let t = &plan.table;
        let needs = super::select::PathNeeds {
            used: None,
            hints: &plan.index_use,
        };
        let mut access = self.plan_access(t, &plan.name, true, &plan.conds, params, needs)?;
        if self.vars.sql_safe_updates() && limit.is_none() && access.is_full_scan() {
            return Err(SqlError::new(ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE, &[]));
        }
        let mode = self.vars.sql_mode();
        let pushed = match (&plan.late, limit) {
            (None, Some(l)) => {
                let n = self
                    .const_value(l, params)?
                    .to_u64(&mut Warnings::default());
                let dir = limit_scan_direction(t, &access, order_by);
                // ORDER BY key DESC: the range is read (and locked) from its top down.
                if let (Some(false), Access::Range { forward, .. }) = (dir, &mut access) {
                    *forward = false;
                }
                dir.map(|_| n as usize)
            }
            _ => None,
        };
        let mut failed: Option<SqlError> = None;
        // Only the columns the condition reads are converted for it (each row the scan reads
        // is tested; the rows it keeps are converted whole afterwards).
        let mut read = vec![false; t.columns.len()];
        if let Some(p) = &plan.pred {
            mark_columns(p, &mut read);
        }
        let mut test = |r: &[Value]| -> bool {
            let Some(p) = &plan.pred else {
                return true;
            };
            let row: Vec<Datum> = (r.iter().zip(&t.columns).zip(&read))
                .map(|((v, c), &u)| {
                    if u {
                        types::load(v, &c.ty)
                    } else {
                        Datum::Null
                    }
                })
                .collect();
            match p.truth(&Env::new(&row, params, mode), &mut Warnings::default()) {
                Ok(t) => t == Some(true),
                Err(e) => {
                    failed.get_or_insert(e);
                    false
                }
            }
        };
        let mut rows = Vec::new();
        self.read_rows(
            t,
            access,
            ReadHow {
                lock: Some(LockRead::Exclusive),
                semi_consistent,
                columns: None,
                limit: pushed,
                first: None,
                filter: None,
            },
            &mut test,
            &mut |r| {
                rows.push(r);
                Ok(true)
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        if let Some(l) = &plan.late {
            let mut kept = Vec::with_capacity(rows.len());
            for r in rows {
                let row = load_row(t, &r);
                self.bind_subs(l, &row, &[], params)?;
                let env = Env::new(&row, params, mode);
                if l.truth(&env, &mut Warnings::default())? == Some(true) {
                    kept.push(r);
                }
            }
            rows = kept;
        }
        if !plan.order.is_empty() {
            let mut keyed: Vec<(Vec<Datum>, Vec<Value>)> = Vec::with_capacity(rows.len());
            for r in rows {
                let row = load_row(t, &r);
                let mut k = Vec::with_capacity(plan.order.len());
                for (c, _, _) in &plan.order {
                    k.push(c.eval(&Env::new(&row, params, mode), &mut Warnings::default())?);
                }
                keyed.push((k, r));
            }
            let dirs: Vec<(bool, Collation)> = plan.order.iter().map(|o| (o.1, o.2)).collect();
            sort_by_keys(&mut keyed, |k, i| &k.0[i], &dirs);
            rows = keyed.into_iter().map(|k| k.1).collect();
        }
        if let Some(l) = limit {
            let n = self
                .const_value(l, params)?
                .to_u64(&mut Warnings::default());
            rows.truncate(n as usize);
        }
        Ok(rows)
    }

    pub(crate) fn update(&mut self, u: &ast::Update, params: &[Datum]) -> Result<Output, SqlError> {
        if let Some((base, check)) = self.update_through_view(u)? {
            let to = ViewTarget {
                view: &u.table,
                need: change_need(crate::privs::UPDATE, u.selection.is_some()),
                insert: false,
            };
            return self.through_view(to, check, |s| s.update(&base, params));
        }
        let check = self.view_check.take();
        let by_column = self.check_change(&u.table, crate::privs::UPDATE, u.selection.is_some())?;
        let plan = self.change_plan(
            &u.table,
            u.alias.as_deref(),
            &u.hints,
            &u.selection,
            &u.order_by,
            &u.assignments,
            params,
        )?;
        if by_column != 0 {
            self.check_change_columns(&plan, by_column)?;
        }
        let rows = self.rows_to_change(&plan, true, &u.order_by, &u.limit, params)?;
        let t = &plan.table;
        self.row_check = self.compile_check(check, t)?;
        let r = self.update_rows(t, &rows, &plan.sets, params, u.ignore);
        self.row_check = None;
        r
    }

    /// UPDATE's changes to `rows` (read and locked): the outcome.
    fn update_rows(
        &mut self,
        t: &Arc<SqlTable>,
        rows: &[Vec<Value>],
        sets: &[(usize, CExpr)],
        params: &[Datum],
        ignore: bool,
    ) -> Result<Output, SqlError> {
        let mut w = Warnings::default();
        let (mut matched, mut changed) = (0u64, 0u64);
        for (i, old) in rows.iter().enumerate() {
            matched += 1;
            let mut env_row = load_row(t, old);
            let row_no = i as u64 + 1;
            if self.apply_update(t, old, sets, &mut env_row, row_no, &mut w, params, ignore)? {
                changed += 1;
            }
        }
        Ok(self.updated(matched, changed, w))
    }

    /// Runs a change rewritten from one through a view (merge.rs G6) with the view's CHECK
    /// OPTION (G7) for `run`'s INSERT or UPDATE to take: a prepared statement neither uses
    /// nor keeps a plan for it (the view may be redefined). The session's account needs the
    /// change's privileges on the view; the base table's are checked against the view's
    /// definer (SQL SECURITY DEFINER) or the session's account (INVOKER), as MySQL does. An
    /// INSERT's column without a default is MySQL's 1423.
    fn through_view(
        &mut self,
        to: ViewTarget<'_>,
        check: Option<ViewCheck>,
        run: impl FnOnce(&mut Session) -> Result<Output, SqlError>,
    ) -> Result<Output, SqlError> {
        let db = self.db_of(to.view)?;
        let name = to.view.name.as_str();
        self.check_table_privs(&db, name, to.need)?;
        let Some(v) = self.server.catalog.view(&db, name) else {
            return Err(SqlError::new(ER_NO_SUCH_TABLE, &[&db, &name]));
        };
        if let Some(kept) = self.stmt_plan.as_mut() {
            *kept = None;
        }
        self.view_check = check;
        let r = self.with_view_rights(&v, run).map_err(|e| match e.code {
            1364 if to.insert => SqlError::new(ER_NO_DEFAULT_FOR_VIEW_FIELD, &[&db, &name]),
            _ => e,
        });
        self.view_check = None;
        if let Some(kept) = self.stmt_plan.as_mut() {
            *kept = None;
        }
        r
    }

    /// A view's CHECK OPTION compiled over its base table `t` (merge.rs G7).
    fn compile_check(
        &mut self,
        check: Option<ViewCheck>,
        t: &Arc<SqlTable>,
    ) -> Result<Option<(CExpr, ViewCheck)>, SqlError> {
        let Some(c) = check else {
            return Ok(None);
        };
        let scope = [ScopeTable::of_table(t, &c.alias, 0)];
        let ce = Compiler::new(&scope, "where clause")
            .compile(&c.cond, self)?
            .0;
        Ok(Some((ce, c)))
    }

    /// Whether the row `row` (the table's datums) passes a view's CHECK OPTION: Err(1369)
    /// if not, or Ok(false) after a warning with IGNORE (the row is skipped).
    fn passes_check(
        check: &Option<(CExpr, ViewCheck)>,
        row: &[Datum],
        params: &[Datum],
        mode: types::SqlMode,
        ignore: bool,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        let Some((ce, c)) = check else {
            return Ok(true);
        };
        if ce.truth(&Env::new(row, params, mode), w)? == Some(true) {
            return Ok(true);
        }
        if !ignore {
            return Err(c.failed());
        }
        w.push_error(types::Level::Warning, c.failed());
        Ok(false)
    }

    /// The outcome of an UPDATE that matched `matched` rows and changed `changed`: MySQL's
    /// info line, the affected count (matched with CLIENT_FOUND_ROWS), the warnings kept.
    pub(crate) fn updated(&mut self, matched: u64, changed: u64, w: Warnings) -> Output {
        let info = format!(
            "Rows matched: {matched}  Changed: {changed}  Warnings: {}",
            w.len()
        );
        self.warnings.extend(w.0);
        let affected = if self.client_found_rows {
            matched
        } else {
            changed
        };
        self.row_count = affected as i64;
        Output::Ok {
            affected,
            last_insert_id: 0,
            info,
        }
    }

    pub(crate) fn delete(&mut self, d: &ast::Delete, params: &[Datum]) -> Result<Output, SqlError> {
        if let Some(base) = self.delete_through_view(d)? {
            let to = ViewTarget {
                view: &d.table,
                need: change_need(crate::privs::DELETE, d.selection.is_some()),
                insert: false,
            };
            return self.through_view(to, None, |s| s.delete(&base, params));
        }
        // DELETE is a table privilege; SELECT for WHERE may be held on columns (A3).
        let by_column = self.check_change(&d.table, crate::privs::DELETE, d.selection.is_some())?;
        let plan = self.change_plan(
            &d.table,
            d.alias.as_deref(),
            &[],
            &d.selection,
            &d.order_by,
            &[],
            params,
        )?;
        if by_column != 0 {
            self.check_change_columns(&plan, by_column)?;
        }
        let rows = self.rows_to_change(&plan, false, &d.order_by, &d.limit, params)?;
        let t = &plan.table;
        let mut n = 0u64;
        for r in &rows {
            self.fk_parent_change(t, r, None, 0)?;
            let key = pk_of(t, r);
            if self.trx()?.delete(&t.table, &key).map_err(engine_error)? {
                n += 1;
            }
        }
        self.row_count = n as i64;
        Ok(Output::ok(n))
    }
}

/// A single-table UPDATE or DELETE compiled against the catalog (`Session::change_plan`),
/// which a prepared statement keeps between executions (D3); the access path and LIMIT are
/// chosen at each execution, from the parameters.
pub(crate) struct ChangePlan {
    /// The name the statement gives the table (its alias, else its name).
    name: String,
    table: Arc<SqlTable>,
    /// USE / FORCE / IGNORE INDEX (UPDATE).
    index_use: super::select::IndexUse,
    /// WHERE's conjuncts, from which each execution chooses the access path.
    conds: Vec<Expr>,
    /// WHERE's conjuncts tested inside the locking read.
    pred: Option<CExpr>,
    /// WHERE's conjuncts with correlated subqueries, tested after the read.
    late: Option<CExpr>,
    /// ORDER BY: (key, descending, collation).
    order: Vec<(CExpr, bool, Collation)>,
    /// UPDATE's assignments: (column, value).
    sets: Vec<(usize, CExpr)>,
    basis: PlanBasis,
}

fn ins_many(ins: &ast::Insert) -> bool {
    match &ins.source {
        InsertSource::Values(v) => v.len() > 1,
        InsertSource::Select(_) => true,
    }
}

/// The primary key values of an engine row.
pub fn pk_of(t: &SqlTable, row: &[Value]) -> Vec<Value> {
    t.pk().iter().map(|&c| row[c].clone()).collect()
}

/// VALUES(c) in ON DUPLICATE KEY UPDATE reads the proposed row, which `insert` places after
/// the old one: it becomes a reference to a column of a second copy of the table.
fn values_to_new(e: &Expr) -> Expr {
    match e {
        Expr::Values(c) => Expr::Column {
            table: Some("\u{0}new".into()),
            name: c.clone(),
        },
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: Box::new(values_to_new(left)),
            right: Box::new(values_to_new(right)),
        },
        Expr::Function {
            name,
            args,
            distinct,
            star,
        } => Expr::Function {
            name: name.clone(),
            args: args.iter().map(values_to_new).collect(),
            distinct: *distinct,
            star: *star,
        },
        other => other.clone(),
    }
}

/// What evaluating one VALUES expression reported: its warnings and its error, if any.
type Pending = Option<(Warnings, Option<SqlError>)>;

/// `mode` without strictness (what IGNORE applies to value conversions).
/// Error 3105: a value given for generated column `c` of `t` (ddl/generated.rs N2).
pub(crate) fn not_generated(t: &SqlTable, c: usize) -> SqlError {
    SqlError::new(
        ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN,
        &[&t.columns[c].name, &t.name],
    )
}

pub(crate) fn lax(mode: types::SqlMode) -> types::SqlMode {
    types::SqlMode(
        mode.0 & !(types::SqlMode::STRICT_TRANS_TABLES | types::SqlMode::STRICT_ALL_TABLES),
    )
}

/// Evaluates a value an INSERT or UPDATE stores: a division by zero is error 1365 under strict
/// ERROR_FOR_DIVISION_BY_ZERO (unless IGNORE), a warning otherwise, as in MySQL.
fn eval_for_change(
    e: &CExpr,
    env: &Env<'_>,
    w: &mut Warnings,
    ignore: bool,
) -> Result<Datum, SqlError> {
    let mut here = Warnings::default();
    let d = e.eval(env, &mut here)?;
    let mode = env.mode;
    if !ignore
        && mode.strict()
        && mode.has(types::SqlMode::ERROR_FOR_DIVISION_BY_ZERO)
        && here.has_code(ER_DIVISION_BY_ZERO.code)
    {
        return Err(SqlError::new(ER_DIVISION_BY_ZERO, &[]));
    }
    w.0.extend(here.0);
    Ok(d)
}

/// The direction (Some(true) forward, Some(false) backward) in which a scan along `access`
/// returns rows in ORDER BY order (forward if there is no ORDER BY), so that
/// `UPDATE/DELETE ... LIMIT n` may stop after n rows and lock nothing after them, as InnoDB
/// does; None if no direction does. A single primary-key point, or a clustered-index range
/// whose ORDER BY is the key columns after those fixed by equality, all ascending (forward) or
/// all descending (backward).
fn limit_scan_direction(
    t: &SqlTable,
    access: &Access,
    order_by: &[ast::OrderItem],
) -> Option<bool> {
    if order_by.is_empty() {
        return Some(true);
    }
    match access {
        Access::Points(keys) => (keys.len() <= 1).then_some(true),
        Access::Range {
            index: None,
            from,
            to,
            forward: true,
        } => {
            let fixed = match (from, to) {
                (KeyBound::Included(a), KeyBound::Included(b)) => {
                    a.iter().zip(b).take_while(|(x, y)| x == y).count()
                }
                _ => 0,
            };
            let pk = &t.table.pk_cols;
            let desc = order_by[0].desc;
            let follows = order_by.len() <= pk.len().saturating_sub(fixed)
                && order_by.iter().zip(&pk[fixed..]).all(|(o, &c)| {
                    o.desc == desc
                        && matches!(&o.expr, Expr::Column { name, .. }
                            if t.column(name) == Some(c))
                });
            follows.then_some(!desc)
        }
        _ => None,
    }
}

/// A change through a view: the view, the privileges the change needs on it, and whether it
/// is an INSERT (whose missing defaults are the view's 1423).
struct ViewTarget<'a> {
    view: &'a ast::ObjectName,
    need: u64,
    insert: bool,
}

/// What UPDATE or DELETE (`need`) needs: SELECT too when a WHERE reads the table.
fn change_need(need: u64, reads: bool) -> u64 {
    if reads {
        need | crate::privs::SELECT
    } else {
        need
    }
}
