//! Common table expressions (`WITH name [(columns)] AS (query) [, ...] statement`), the
//! non-recursive kind: every reference to a CTE's name in a FROM clause of the statement (its
//! joins, derived tables, UNION arms and subqueries included) becomes a derived table holding
//! the CTE's query, under the reference's alias or the CTE's name. A CTE sees the CTEs before
//! it; a subquery's own WITH was inlined when it was lowered, so its names shadow these.
//!
//! A recursive CTE (WITH RECURSIVE, a CTE whose query reads its own name) is split into its
//! anchor SELECTs and its recursive ones (`split_recursive`), and its references become
//! `TableRef::Recursive`, which the executor runs to a fixed point; inside its recursive
//! SELECTs the name stays a plain table reference, bound at run time to the rows of the
//! previous round.
//!
//! INVARIANTS: only unqualified names match (`db.name` is a table); names compare as table
//! names do (exactly, lower_case_table_names=0); the result has no reference to a CTE left
//! outside a recursive CTE's own recursive SELECTs.

use crate::ast::{Expr, OrderItem, RecursiveCte, Select, SelectItem, TableRef};
use crate::error::*;

/// A lowered CTE.
pub struct Cte {
    pub name: String,
    pub body: CteBody,
}

pub enum CteBody {
    Plain(Select),
    Recursive(RecursiveCte),
}

/// True if `s` reads table `name` (unqualified) in a FROM clause of any of its SELECTs.
fn reads(s: &Select, name: &str) -> bool {
    fn tr(t: &TableRef, name: &str) -> bool {
        match t {
            TableRef::Table { name: n, .. } => n.db.is_none() && n.name == name,
            TableRef::Derived { subquery, .. } => reads(subquery, name),
            TableRef::Recursive { .. } | TableRef::JsonTable(_) => false,
            TableRef::SetOp { left, right, .. } => reads(left, name) || reads(right, name),
            TableRef::Join { left, right, .. } => tr(left, name) || tr(right, name),
        }
    }
    s.from.iter().any(|t| tr(t, name)) || s.unions.iter().any(|(_, u)| reads(u, name))
}

/// The CTE `name` with query `q`: recursive when `q` reads `name` (WITH RECURSIVE). Its
/// SELECTs that do not read it form the anchor and must come first (3573 otherwise, as MySQL:
/// a recursive CTE needs an anchor).
pub fn split_recursive(name: &str, mut q: Select) -> Result<CteBody, SqlError> {
    if !reads(&q, name) {
        return Ok(CteBody::Plain(q));
    }
    let unions = std::mem::take(&mut q.unions);
    let distinct = unions.iter().any(|(all, _)| !all);
    let mut parts: Vec<Select> = vec![q];
    parts.extend(unions.into_iter().map(|(_, s)| s));
    let first_recursive = parts
        .iter()
        .position(|p| reads(p, name))
        .unwrap_or(parts.len());
    if first_recursive == 0 || parts[first_recursive..].iter().any(|p| !reads(p, name)) {
        return Err(SqlError::new(ER_CTE_RECURSIVE_REQUIRES_UNION, &[&name]));
    }
    let recursive = parts.split_off(first_recursive);
    let mut parts = parts.into_iter();
    let Some(mut anchor) = parts.next() else {
        return Err(SqlError::new(ER_CTE_RECURSIVE_REQUIRES_UNION, &[&name]));
    };
    anchor.unions = parts.map(|p| (!distinct, p)).collect();
    Ok(CteBody::Recursive(RecursiveCte {
        name: name.to_string(),
        anchor,
        recursive,
        distinct,
    }))
}

/// Gives the CTE's first SELECT the column names of `WITH name (columns)`.
pub fn rename_columns(q: &mut Select, name: &str, columns: &[String]) -> Result<(), SqlError> {
    if columns.is_empty() {
        return Ok(());
    }
    if q.items.len() != columns.len()
        || q.items
            .iter()
            .any(|i| !matches!(i, SelectItem::Expr { .. }))
    {
        return Err(SqlError::new(ER_VIEW_WRONG_LIST, &[&name]));
    }
    for (item, c) in q.items.iter_mut().zip(columns) {
        if let SelectItem::Expr { alias, .. } = item {
            *alias = Some(c.clone());
        }
    }
    Ok(())
}

/// Replaces the references to `ctes` in `s` by derived tables.
pub fn inline(s: &mut Select, ctes: &[Cte]) {
    if ctes.is_empty() {
        return;
    }
    for tr in &mut s.from {
        table_ref(tr, ctes);
    }
    for item in &mut s.items {
        if let SelectItem::Expr { expr, .. } = item {
            expr_(expr, ctes);
        }
    }
    let exprs = s.selection.iter_mut().chain(s.having.iter_mut());
    let exprs = exprs.chain(s.group_by.iter_mut());
    let exprs = exprs.chain(s.order_by.iter_mut().map(|o: &mut OrderItem| &mut o.expr));
    for e in exprs {
        expr_(e, ctes);
    }
    for (_, u) in &mut s.unions {
        inline(u, ctes);
    }
}

fn table_ref(tr: &mut TableRef, ctes: &[Cte]) {
    match tr {
        TableRef::Table { name, alias, .. } if name.db.is_none() => {
            if let Some(c) = ctes.iter().find(|c| c.name == name.name) {
                let alias = alias.clone().unwrap_or_else(|| name.name.clone());
                *tr = match &c.body {
                    CteBody::Plain(q) => TableRef::Derived {
                        subquery: Box::new(q.clone()),
                        alias,
                    },
                    CteBody::Recursive(r) => TableRef::Recursive {
                        cte: Box::new(r.clone()),
                        alias,
                    },
                };
            }
        }
        TableRef::Table { .. } => {}
        TableRef::Derived { subquery, .. } => inline(subquery, ctes),
        TableRef::Recursive { .. } | TableRef::JsonTable(_) => {}
        TableRef::SetOp { left, right, .. } => {
            inline(left, ctes);
            inline(right, ctes);
        }
        TableRef::Join {
            left, right, on, ..
        } => {
            table_ref(left, ctes);
            table_ref(right, ctes);
            if let Some(on) = on {
                expr_(on, ctes);
            }
        }
    }
}

fn expr_(e: &mut Expr, ctes: &[Cte]) {
    e.visit_mut(&mut |x| {
        if let Expr::InSubquery { subquery, .. }
        | Expr::Quantified { subquery, .. }
        | Expr::Subquery(subquery)
        | Expr::Exists { subquery, .. } = x
        {
            inline(subquery, ctes);
        }
        true
    });
}
