//! GROUP BY ... WITH ROLLUP, lowered into plain SQL the executor already runs: for a
//! grouping by k1 .. kn, the UNION ALL of the same SELECT grouped by k1 .. kn, by k1 .. kn-1,
//! ..., and by nothing, where the keys a part does not group by read as NULL (and
//! GROUPING() tells which), read in the order MySQL gives ROLLUP's rows.
//!
//! INVARIANTS
//! - U1: in a part that rolls key ki up, every occurrence of ki in the select list and HAVING
//!   outside an aggregate's argument is NULL of ki's type, and GROUPING(...) (of keys only:
//!   3602) is its bits (1 for a key rolled up, the first argument highest): an aggregate
//!   still reads the rows' own values.
//! - U2: each part carries, per key, whether it is rolled up and its value; the result is
//!   ordered by (rolled up, value) key after key unless the statement has its own ORDER BY,
//!   so each group's super-aggregate row follows its rows and the grand total comes last.
//! - U3: the result's columns are named as the statement's select list names them.
//! - U4: the total is one row however few aggregates the select list has, and no row when
//!   no row is grouped (MySQL makes no super-aggregate row of nothing).
//!
//! Each part reads the FROM clause again: a query with n keys reads it n + 1 times.

use super::lower::unsupported;
use crate::ast::*;
use crate::error::{SqlError, ER_FIELD_IN_GROUPING_NOT_GROUP_BY};

/// The derived table's name the ROLLUP's SELECT reads (`is_rollup`).
const ROLLUP: &str = "<rollup>";

/// Internal names of the parts' columns: no statement can write them.
fn inner(tag: char, i: usize) -> String {
    format!("\u{1}{tag}{i}")
}

/// Whether `q` is the SELECT `rollup` made (its ORDER BY gives way to the statement's).
pub fn is_rollup(q: &Select) -> bool {
    matches!(q.from.as_slice(), [TableRef::Derived { alias, .. }] if alias == ROLLUP)
}

/// NULL of the type of key `k` (`IF(FALSE, ANY_VALUE(k), NULL)`): a bare NULL would change
/// the type of what it is part of (`NULL + 1` is a DOUBLE), and `k` itself is not grouped in
/// the parts that roll it up.
fn typed_null(k: Expr) -> Expr {
    let call = |name: &str, args| Expr::Function {
        name: name.into(),
        args,
        distinct: false,
        star: false,
    };
    call(
        "if",
        vec![
            Expr::Literal(Literal::Bool(false)),
            call("any_value", vec![k]),
            Expr::Literal(Literal::Null),
        ],
    )
}

fn count_star() -> Expr {
    Expr::Function {
        name: "count".into(),
        args: Vec::new(),
        distinct: false,
        star: true,
    }
}

/// The expression of the select item whose alias is `name`.
fn aliased<'a>(items: &'a [SelectItem], name: &str) -> Option<&'a Expr> {
    items.iter().find_map(|i| match i {
        SelectItem::Expr {
            expr,
            alias: Some(a),
            ..
        } if a.eq_ignore_ascii_case(name) => Some(expr),
        _ => None,
    })
}

/// `base` (grouped by its keys) WITH ROLLUP (U1-U4).
pub fn rollup(base: Select) -> Result<Select, SqlError> {
    if base.distinct
        || base
            .items
            .iter()
            .any(|i| !matches!(i, SelectItem::Expr { .. }))
    {
        return Err(unsupported("WITH ROLLUP with DISTINCT or *"));
    }
    // A key given by position or by a select item's alias stands for that item's expression
    // (the parts rename the items).
    let keys: Vec<Expr> = base
        .group_by
        .iter()
        .map(|k| match k {
            Expr::Literal(Literal::Number(n)) => n
                .parse::<usize>()
                .ok()
                .and_then(|i| base.items.get(i.wrapping_sub(1)))
                .and_then(|i| match i {
                    SelectItem::Expr { expr, .. } => Some(expr.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| k.clone()),
            Expr::Column { table: None, name } => aliased(&base.items, name)
                .cloned()
                .unwrap_or_else(|| k.clone()),
            _ => k.clone(),
        })
        .collect();
    let n = keys.len();
    // GROUPING() takes keys only (3602, naming the first argument that is not one).
    let mut bad = None;
    let mut check = |e: &mut Expr| {
        e.visit_mut(&mut |x| {
            if let Expr::Function { name, args, .. } = x {
                if name == "grouping" {
                    if let Some(i) = args.iter().position(|a| !keys.contains(a)) {
                        bad.get_or_insert(i + 1);
                    }
                }
            }
            true
        })
    };
    let mut shown = base.clone();
    for item in &mut shown.items {
        if let SelectItem::Expr { expr, .. } = item {
            check(expr);
        }
    }
    if let Some(h) = &mut shown.having {
        check(h);
    }
    if let Some(i) = bad {
        return Err(SqlError::new(ER_FIELD_IN_GROUPING_NOT_GROUP_BY, &[&i]));
    }
    let mut parts = Vec::with_capacity(n + 1);
    for kept in (0..=n).rev() {
        let rolled = &keys[kept..];
        let null_out = |e: &mut Expr| {
            e.visit_mut(&mut |x| {
                if rolled.contains(x) {
                    *x = typed_null(x.clone());
                    return false;
                }
                match x {
                    Expr::Function { name, args, .. } if name == "grouping" => {
                        let bits = args
                            .iter()
                            .fold(0u64, |acc, a| (acc << 1) | u64::from(rolled.contains(a)));
                        *x = Expr::Literal(Literal::Number(bits.to_string()));
                        false
                    }
                    Expr::Function { name, .. } => !is_aggregate(name),
                    Expr::GroupConcat { .. } | Expr::Window { .. } => false,
                    _ => true,
                }
            })
        };
        let mut part = base.clone();
        part.group_by = keys[..kept].to_vec();
        // The total: one row, grouped even without an aggregate in the select list, and none
        // over no rows (no group, so no super-aggregate row: MySQL).
        if kept == 0 {
            let some = Expr::Binary {
                op: BinaryOp::Gt,
                left: Box::new(count_star()),
                right: Box::new(Expr::Literal(Literal::Number("0".into()))),
            };
            part.having = Some(match part.having.take() {
                Some(h) => Expr::Binary {
                    op: BinaryOp::And,
                    left: Box::new(h),
                    right: Box::new(some),
                },
                None => some,
            });
        }
        for (i, item) in part.items.iter_mut().enumerate() {
            if let SelectItem::Expr { expr, alias, .. } = item {
                null_out(expr);
                *alias = Some(inner('c', i));
            }
        }
        if let Some(h) = &mut part.having {
            // HAVING may name a select item by its alias, which the part renames: the item's
            // expression stands for it.
            h.visit_mut(&mut |x| match x {
                Expr::Column { table: None, name } => {
                    if let Some(e) = aliased(&base.items, name) {
                        *x = e.clone();
                    }
                    false
                }
                _ => true,
            });
            null_out(h);
        }
        for (j, k) in keys.iter().enumerate() {
            let up = j >= kept;
            part.items.push(SelectItem::Expr {
                expr: Expr::Literal(Literal::Number(u8::from(up).to_string())),
                alias: Some(inner('g', j)),
                text: String::new(),
            });
            part.items.push(SelectItem::Expr {
                expr: if up {
                    Expr::Literal(Literal::Null)
                } else {
                    k.clone()
                },
                alias: Some(inner('v', j)),
                text: String::new(),
            });
        }
        parts.push(part);
    }
    let mut head = parts.remove(0);
    head.unions = parts.into_iter().map(|p| (true, p)).collect();
    let mut outer = Select::star_from(head, ROLLUP);
    outer.items = base
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            SelectItem::Expr { alias, text, .. } => Some(SelectItem::Expr {
                expr: Expr::Column {
                    table: None,
                    name: inner('c', i),
                },
                alias: Some(alias.clone().unwrap_or_else(|| text.clone())),
                text: text.clone(),
            }),
            _ => None,
        })
        .collect();
    outer.order_by = (0..n)
        .flat_map(|j| {
            ['g', 'v'].map(|tag| OrderItem {
                expr: Expr::Column {
                    table: None,
                    name: inner(tag, j),
                },
                desc: false,
            })
        })
        .collect();
    Ok(outer)
}
