//! Common table expressions (`WITH name [(columns)] AS (query) [, ...] statement`), the
//! non-recursive kind: every reference to a CTE's name in a FROM clause of the statement (its
//! joins, derived tables, UNION arms and subqueries included) becomes a derived table holding
//! the CTE's query, under the reference's alias or the CTE's name. A CTE sees the CTEs before
//! it; a subquery's own WITH was inlined when it was lowered, so its names shadow these.
//!
//! INVARIANTS: only unqualified names match (`db.name` is a table); names compare as table
//! names do (exactly, lower_case_table_names=0); the result has no reference to a CTE left.

use crate::ast::{Expr, OrderItem, Select, SelectItem, TableRef};
use crate::error::*;

/// A lowered CTE.
pub struct Cte {
    pub name: String,
    pub query: Select,
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
                *tr = TableRef::Derived {
                    subquery: Box::new(c.query.clone()),
                    alias: alias.clone().unwrap_or_else(|| name.name.clone()),
                };
            }
        }
        TableRef::Table { .. } => {}
        TableRef::Derived { subquery, .. } => inline(subquery, ctes),
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
    match e {
        Expr::InSubquery { expr, subquery, .. } | Expr::Quantified { expr, subquery, .. } => {
            expr_(expr, ctes);
            inline(subquery, ctes);
        }
        Expr::Subquery(subquery) | Expr::Exists { subquery, .. } => inline(subquery, ctes),
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::Collate { expr, .. }
        | Expr::Interval { value: expr, .. } => expr_(expr, ctes),
        Expr::Binary { left, right, .. } => {
            expr_(left, ctes);
            expr_(right, ctes);
        }
        Expr::InList { expr, list, .. } => {
            expr_(expr, ctes);
            list.iter_mut().for_each(|x| expr_(x, ctes));
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            for x in [expr, low, high] {
                expr_(x, ctes);
            }
        }
        Expr::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            expr_(expr, ctes);
            expr_(pattern, ctes);
            if let Some(x) = escape {
                expr_(x, ctes);
            }
        }
        Expr::Function { args, .. } | Expr::Row(args) => {
            args.iter_mut().for_each(|x| expr_(x, ctes));
        }
        Expr::GroupConcat { args, order_by, .. } => {
            args.iter_mut().for_each(|x| expr_(x, ctes));
            order_by.iter_mut().for_each(|o| expr_(&mut o.expr, ctes));
        }
        Expr::Window {
            func,
            partition_by,
            order_by,
            ..
        } => {
            expr_(func, ctes);
            partition_by.iter_mut().for_each(|x| expr_(x, ctes));
            order_by.iter_mut().for_each(|o| expr_(&mut o.expr, ctes));
        }
        Expr::Case {
            operand,
            whens,
            else_,
        } => {
            if let Some(x) = operand {
                expr_(x, ctes);
            }
            for (a, b) in whens {
                expr_(a, ctes);
                expr_(b, ctes);
            }
            if let Some(x) = else_ {
                expr_(x, ctes);
            }
        }
        Expr::Literal(_)
        | Expr::Column { .. }
        | Expr::Param(_)
        | Expr::UserVar(_)
        | Expr::SysVar { .. }
        | Expr::Values(_)
        | Expr::Default => {}
    }
}
