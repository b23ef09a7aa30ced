//! EXISTS turned into IN: a correlated `EXISTS (SELECT ... FROM t WHERE t.a = outer.x AND
//! rest)` among WHERE's conjuncts becomes `outer.x IN (SELECT t.a FROM t WHERE rest)`, an
//! uncorrelated subquery run once whose values are searched per outer row (expr.rs `InSet`),
//! when the index statistics say that reads fewer rows than one lookup per outer row; NOT
//! EXISTS becomes `outer.x IS NULL OR outer.x NOT IN (SELECT t.a ... AND t.a IS NOT NULL)`.
//! (MariaDB's exists-to-in transformation, then its semi-join and anti-join materialization.)
//!
//! INVARIANTS
//! - EJ1: only an EXISTS of WHERE reached through AND and OR alone: there NULL and FALSE both
//!   reject the row (AND and OR are TRUE of NULL exactly when they are of FALSE), and
//!   `x IN (...)` is TRUE exactly when `EXISTS (... WHERE a = x)` is (a NULL `x` or `a` matches
//!   nothing either way). NOT EXISTS is never NULL, nor is its form: a NULL `x` matches
//!   nothing (TRUE), and NOT IN over values without NULLs is TRUE or FALSE. An EXISTS under
//!   NOT, IS or a comparison is left as it is.
//! - EJ2: the subquery is one SELECT of one base table, without grouping, aggregates, HAVING,
//!   LIMIT, locking or subqueries of its own, selecting `*`, constants or columns (what it
//!   selects does not matter to EXISTS); its WHERE is conjuncts of which exactly one reads the
//!   enclosing query: an equality between an expression of the table's columns and one of a
//!   single enclosing table's; every name resolves (else the subquery stays as written and
//!   compiles, or fails, as before).
//! - EJ3: the rows read: `rest` through the best index for its equalities to constants (the
//!   whole table without one), against the enclosing table's rows (as EXPLAIN estimates the
//!   path WHERE gives it) times the rows per lookup with the correlated column fixed too
//!   (`rows_per_access`, as join order reckons, select.rs S16).
//!
//! Latch order: none (it reads the catalog's statistics).

use innoxide_engine::stats::TableStats;
use innoxide_sql::ast::{BinaryOp, Expr, SelectItem, TableRef};
use innoxide_sql::error::SqlError;
use innoxide_sql::types::Datum;

use super::expr::ScopeTable;
use super::select::conjuncts;
use super::Session;
use crate::catalog::SqlTable;

/// Per index of a table (the primary key first): its columns and the distinct values of each
/// prefix of them, when there are statistics for it.
pub(crate) type KeyStats = Vec<(Vec<usize>, Option<Vec<u64>>)>;

/// The `KeyStats` of `t` from its statistics `st`.
pub(crate) fn key_stats(t: &SqlTable, st: &TableStats) -> KeyStats {
    let et = &t.table;
    let mut keys = vec![(
        et.pk_cols.clone(),
        st.indexes.first().map(|i| i.n_diff.clone()),
    )];
    for sec in &et.secondary {
        let nd = (st.indexes.iter().skip(1))
            .find(|i| i.name == sec.spec.name)
            .map(|i| i.n_diff.clone());
        keys.push((sec.spec.columns.clone(), nd));
    }
    keys
}

/// The rows one access to a table of `total` rows reads when the columns `bound` are fixed by
/// equalities: through the index whose fixed prefix leaves the fewest; None when they fix the
/// first column of no index with statistics.
pub(crate) fn rows_per_access(total: f64, keys: &KeyStats, bound: &[usize]) -> Option<f64> {
    let mut per: Option<f64> = None;
    for (cols, nd) in keys {
        let parts = cols.iter().take_while(|c| bound.contains(c)).count();
        if let (true, Some(nd)) = (parts > 0, nd) {
            let distinct = nd.get(parts - 1).copied().unwrap_or(1).max(1) as f64;
            let r = (total / distinct).max(1.0);
            per = Some(per.map_or(r, |p| p.min(r)));
        }
    }
    per
}

/// Which query a column reference of the subquery reads.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// Constants only.
    None,
    Inner,
    /// Table `k` of the enclosing scope.
    Outer(usize),
    Both,
    /// A name that does not resolve, a subquery, a column of two enclosing tables.
    Bad,
}

impl Side {
    fn and(self, o: Side) -> Side {
        match (self, o) {
            (Side::Bad, _) | (_, Side::Bad) => Side::Bad,
            (Side::None, x) | (x, Side::None) => x,
            (Side::Inner, Side::Inner) => Side::Inner,
            (Side::Outer(a), Side::Outer(b)) if a == b => Side::Outer(a),
            (Side::Outer(_), Side::Outer(_)) => Side::Bad,
            _ => Side::Both,
        }
    }
}

/// The subquery's one table: its name in the query and description.
struct Inner<'a> {
    name: &'a str,
    table: &'a SqlTable,
}

impl Inner<'_> {
    /// The column `table.name` / `name` reads, if the subquery's table has it.
    fn column(&self, table: Option<&str>, name: &str) -> Option<usize> {
        match table {
            Some(q) if !q.eq_ignore_ascii_case(self.name) => None,
            _ => self.table.column(name),
        }
    }
}

/// Which query `e` reads (`Side`), names resolved as the compiler does: the subquery's table
/// first, then the enclosing `scope`.
fn side_of(e: &Expr, inner: &Inner<'_>, scope: &[ScopeTable]) -> Side {
    let mut side = Side::None;
    let mut e = e.clone();
    e.visit_mut(&mut |x| {
        let s = match x {
            Expr::Column { table, name } => column_side(table.as_deref(), name, inner, scope),
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. }
            | Expr::Quantified { .. } => Side::Bad,
            _ => Side::None,
        };
        side = side.and(s);
        side != Side::Bad
    });
    side
}

fn column_side(table: Option<&str>, name: &str, inner: &Inner<'_>, scope: &[ScopeTable]) -> Side {
    if let Some(q) = table {
        if q.contains('.') {
            return Side::Bad;
        }
        if q.eq_ignore_ascii_case(inner.name) {
            return match inner.table.column(name) {
                Some(_) => Side::Inner,
                None => Side::Bad,
            };
        }
    } else if inner.table.column(name).is_some() {
        return Side::Inner;
    }
    outer_column(table, name, scope)
}

/// The table of `scope` that has column `table.name` / `name` (Bad: none, or two).
fn outer_column(table: Option<&str>, name: &str, scope: &[ScopeTable]) -> Side {
    let mut found = Side::Bad;
    for (k, st) in scope.iter().enumerate() {
        if table.is_some_and(|q| !q.eq_ignore_ascii_case(&st.name)) {
            continue;
        }
        if st
            .columns
            .iter()
            .any(|c| !c.2 && c.0.eq_ignore_ascii_case(name))
        {
            if found != Side::Bad {
                return Side::Bad;
            }
            found = Side::Outer(k);
        }
    }
    found
}

/// The columns (as `col` finds them in an expression) that `conds` set equal to a constant.
fn fixed_columns(
    conds: &[Expr],
    col: &dyn Fn(&Expr) -> Option<usize>,
    constant: &dyn Fn(&Expr) -> bool,
) -> Vec<usize> {
    let mut fixed = Vec::new();
    for c in conds {
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = c
        {
            match (col(left), col(right)) {
                (Some(c), None) if constant(right) => fixed.push(c),
                (None, Some(c)) if constant(left) => fixed.push(c),
                _ => {}
            }
        }
    }
    fixed
}

fn constant(e: &Expr) -> bool {
    matches!(e, Expr::Literal(_) | Expr::Param(_))
}

/// The query an EXISTS is in: its WHERE's conjuncts, its scope, the statement's parameters.
pub(crate) struct Enclosing<'a> {
    pub conds: &'a [Expr],
    pub scope: &'a [ScopeTable],
    pub params: &'a [Datum],
}

impl Session {
    /// `c`, a conjunct of the WHERE of a query (`at`), with each EXISTS it reaches through AND
    /// and OR alone (EJ1) made an IN where that reads fewer rows; None when nothing changes.
    pub(crate) fn exists_to_in_within(
        &mut self,
        c: &Expr,
        at: &Enclosing<'_>,
    ) -> Result<Option<Expr>, SqlError> {
        match c {
            Expr::Exists { .. } => self.exists_to_in(c, at),
            Expr::Binary {
                op: op @ (BinaryOp::And | BinaryOp::Or),
                left,
                right,
            } => {
                let l = self.exists_to_in_within(left, at)?;
                let r = self.exists_to_in_within(right, at)?;
                if l.is_none() && r.is_none() {
                    return Ok(None);
                }
                Ok(Some(Expr::Binary {
                    op: *op,
                    left: Box::new(l.unwrap_or_else(|| (**left).clone())),
                    right: Box::new(r.unwrap_or_else(|| (**right).clone())),
                }))
            }
            _ => Ok(None),
        }
    }

    /// `c` as `x IN (SELECT ...)` when it is an EXISTS that reads fewer rows so, or as `x IS
    /// NULL OR x NOT IN (SELECT ...)` when it is a NOT EXISTS that does (module comment); None
    /// to keep it.
    fn exists_to_in(&mut self, c: &Expr, at: &Enclosing<'_>) -> Result<Option<Expr>, SqlError> {
        let (conds, scope, params) = (at.conds, at.scope, at.params);
        let Expr::Exists {
            subquery: q,
            negated,
        } = c
        else {
            return Ok(None);
        };
        // EJ2: the shape.
        let ([TableRef::Table { name, alias, .. }], Some(selection)) = (&q.from[..], &q.selection)
        else {
            return Ok(None);
        };
        if !q.unions.is_empty()
            || !q.group_by.is_empty()
            || q.having.is_some()
            || q.limit.is_some()
            || q.offset.is_some()
            || q.lock.is_some()
            || !q.lock_of.is_empty()
            || name.db.is_none() && self.cte_work.iter().any(|b| b.0 == name.name)
        {
            return Ok(None);
        }
        let Ok(db) = self.db_of(name) else {
            return Ok(None);
        };
        if super::access::is_system_schema(&db)
            || super::accounts::is_account_table(&db, &name.name)
        {
            return Ok(None);
        }
        let Ok(table) = self.open_table(&db, &name.name) else {
            return Ok(None);
        };
        let inner = Inner {
            name: alias.as_deref().unwrap_or(&name.name),
            table: &table,
        };
        // What it selects is dropped: only names that resolve (an error stays an error).
        let plain_items = q.items.iter().all(|i| match i {
            SelectItem::Wildcard => true,
            SelectItem::QualifiedWildcard(n) => n.eq_ignore_ascii_case(inner.name),
            SelectItem::Expr { expr, .. } => match expr {
                Expr::Literal(_) => true,
                Expr::Column { table, name } => !matches!(
                    column_side(table.as_deref(), name, &inner, scope),
                    Side::Bad
                ),
                _ => false,
            },
        });
        if !plain_items {
            return Ok(None);
        }
        // The one correlated equality (inner side, outer side, outer table) and the rest.
        let mut parts = Vec::new();
        conjuncts(selection, &mut parts);
        let mut pair = None;
        let mut rest = Vec::new();
        for p in parts {
            match side_of(&p, &inner, scope) {
                Side::None | Side::Inner => rest.push(p),
                Side::Both if pair.is_none() => {
                    let Expr::Binary {
                        op: BinaryOp::Eq,
                        left,
                        right,
                    } = &p
                    else {
                        return Ok(None);
                    };
                    let (l, r) = (side_of(left, &inner, scope), side_of(right, &inner, scope));
                    pair = match (l, r) {
                        (Side::Inner, Side::Outer(k)) => {
                            Some(((**left).clone(), (**right).clone(), k))
                        }
                        (Side::Outer(k), Side::Inner) => {
                            Some(((**right).clone(), (**left).clone(), k))
                        }
                        _ => return Ok(None),
                    };
                }
                _ => return Ok(None),
            }
        }
        let Some((inner_side, outer_side, k)) = pair else {
            return Ok(None);
        };
        let Some(outer_table) = scope[k].table.clone() else {
            return Ok(None);
        };
        // EJ3: the rows each way.
        let settings = self.server.vars.stats_settings();
        let st = self.server.catalog.table_stats(&table, settings, false)?;
        let (total, keys) = (st.n_rows.max(1) as f64, key_stats(&table, &st));
        let inner_col = |e: &Expr| match e {
            Expr::Column { table: t, name } => inner.column(t.as_deref(), name),
            _ => None,
        };
        let mut fixed = fixed_columns(&rest, &inner_col, &constant);
        let materialize = rows_per_access(total, &keys, &fixed).unwrap_or(total);
        if let Some(c) = inner_col(&inner_side) {
            fixed.push(c);
        }
        let per_lookup = rows_per_access(total, &keys, &fixed).unwrap_or(total);
        // The enclosing table's rows: through the path WHERE gives it (its estimate as EXPLAIN
        // shows it).
        let single = scope.len() == 1;
        let needs = super::select::PathNeeds::ROWS;
        let oname = scope[k].name.clone();
        let access = self.plan_access(&outer_table, &oname, single, conds, params, needs)?;
        let outer_rows = self.explain_rows(&outer_table, &access, false)?.max(1) as f64;
        if materialize >= outer_rows * per_lookup {
            return Ok(None);
        }
        if *negated {
            // NOT IN over values without NULLs (EJ1).
            rest.push(Expr::IsNull {
                expr: Box::new(inner_side.clone()),
                negated: true,
            });
        }
        let mut sub = (**q).clone();
        sub.items = vec![SelectItem::Expr {
            expr: inner_side,
            alias: None,
            text: String::new(),
        }];
        sub.selection = rest.into_iter().reduce(|a, b| Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(a),
            right: Box::new(b),
        });
        sub.order_by.clear();
        sub.distinct = false;
        let in_sub = Expr::InSubquery {
            expr: Box::new(outer_side.clone()),
            subquery: Box::new(sub),
            negated: *negated,
        };
        Ok(Some(match negated {
            false => in_sub,
            true => Expr::Binary {
                op: BinaryOp::Or,
                left: Box::new(Expr::IsNull {
                    expr: Box::new(outer_side),
                    negated: false,
                }),
                right: Box::new(in_sub),
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_per_access_takes_the_best_fixed_prefix() {
        let keys: KeyStats = vec![
            (vec![0, 1], Some(vec![100, 1000])),
            (vec![2], Some(vec![10])),
            (vec![3], None),
        ];
        assert_eq!(rows_per_access(1000.0, &keys, &[]), None);
        assert_eq!(rows_per_access(1000.0, &keys, &[1]), None);
        assert_eq!(rows_per_access(1000.0, &keys, &[3]), None);
        assert_eq!(rows_per_access(1000.0, &keys, &[0]), Some(10.0));
        assert_eq!(rows_per_access(1000.0, &keys, &[1, 0]), Some(1.0));
        assert_eq!(rows_per_access(1000.0, &keys, &[2]), Some(100.0));
        assert_eq!(rows_per_access(1000.0, &keys, &[2, 0]), Some(10.0));
    }
}
