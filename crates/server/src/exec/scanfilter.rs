//! Conditions a consistent read hands to the engine's scan (`innoxide_engine::RowFilter`,
//! engine row/scan.rs F1-F3), so the records that fail them are passed over before their
//! rows are made: a string column compared with a string, a number or date column with a
//! number or date of its kind (=, <>, <, <=, >, >=, BETWEEN, [NOT] IN a list of them), LIKE
//! with a constant pattern, IS [NOT] NULL.
//!
//! INVARIANTS
//! - P1: a test gives, from a column's stored value, what the conjunct's `CExpr::truth` gives
//!   on the row made from it (the same loading, `types::load_stored`, and the same comparison,
//!   `Datum::compare` or `LikePattern::matches`), true only where that is TRUE; a conjunct
//!   whose comparison could warn or fail (a string against a number, a date against a
//!   string) is not handed over.
//! - P2: the reader still tests its whole condition on every row that comes: a test only
//!   drops rows early, so a test the engine does not apply (an off-page value) changes nothing.

use std::cmp::Ordering;
use std::sync::Arc;

use innoxide_engine::{Collation, FieldTest, KeyBound, RowFilter};
use innoxide_sql::ast::{BinaryOp, TypeName};
use innoxide_sql::types::{self, Datum, SqlType};

use super::expr::{cmp_holds, CExpr};
use super::select::Access;
use crate::catalog::SqlTable;

/// Where the conditions' columns are: `t`'s columns from `offset` on in the rows they test,
/// `params` standing for the statement's parameters; conditions on the `ranged` columns are
/// left out.
struct Place<'a> {
    t: &'a Arc<SqlTable>,
    offset: usize,
    params: &'a [Datum],
    ranged: &'a [usize],
}

/// The tests of `conds` (conditions on rows holding `t`'s columns from `offset` on) that P1
/// allows, `params` standing for the statement's parameters, but for the columns whose
/// conditions `access`'s key range already applies; None if there are none.
pub(crate) fn scan_filter(
    t: &Arc<SqlTable>,
    offset: usize,
    conds: [Option<&CExpr>; 2],
    params: &[Datum],
    access: &Access,
) -> Option<Arc<RowFilter>> {
    let at = Place {
        t,
        offset,
        params,
        ranged: range_columns(t, access),
    };
    let mut filter = RowFilter::default();
    for c in conds.into_iter().flatten() {
        add_tests(&at, c, &mut filter);
    }
    (!filter.is_empty()).then(|| Arc::new(filter))
}

/// The tests of the conjuncts of `e` into `filter`.
fn add_tests(at: &Place<'_>, e: &CExpr, filter: &mut RowFilter) {
    match e {
        CExpr::And(a, b) => {
            add_tests(at, a, filter);
            add_tests(at, b, filter);
        }
        e => {
            if let Some((c, test)) = test_of(at, e) {
                filter.add(c, test);
            }
        }
    }
}

/// The columns of the key parts `access`'s bounds give values for.
fn range_columns<'t>(t: &'t SqlTable, access: &Access) -> &'t [usize] {
    let Access::Range {
        index, from, to, ..
    } = access
    else {
        return &[];
    };
    let len = |b: &KeyBound| match b {
        KeyBound::Unbounded => 0,
        KeyBound::Included(v) | KeyBound::Excluded(v) => v.len(),
    };
    let cols = match index {
        None => t.pk(),
        Some(name) => (t.table.secondary.iter())
            .find(|s| s.spec.name == *name)
            .map_or(&[][..], |s| &s.spec.columns[..]),
    };
    &cols[..len(from).max(len(to)).min(cols.len())]
}

/// How a column's stored value is compared (P1).
enum Kind {
    /// As the text (or bytes) it loads as.
    Text { latin1: bool },
    /// As the number or date it loads as.
    Value,
}

/// The kind of comparison of column `ty` with constant `k` that cannot warn, if any.
fn kind_of(ty: &SqlType, k: &Datum) -> Option<Kind> {
    use TypeName as T;
    // ENUM and SET load as their names from stored numbers.
    let text = ty.is_string() && !matches!(ty.name, T::Enum | T::Set);
    match k {
        Datum::Bytes(_) if text => Some(Kind::Text {
            latin1: ty.coll.charset == "latin1",
        }),
        Datum::Int(_) | Datum::UInt(_) if ty.is_integer() || ty.name == T::Decimal => {
            Some(Kind::Value)
        }
        Datum::Decimal(_) if ty.name == T::Decimal => Some(Kind::Value),
        Datum::Date(_) | Datum::DateTime(_) if matches!(ty.name, T::Date | T::DateTime) => {
            Some(Kind::Value)
        }
        _ => None,
    }
}

/// The column of the table a condition reads, if `e` is one and not a ranged one.
fn column(at: &Place<'_>, e: &CExpr) -> Option<usize> {
    match e {
        CExpr::Col(p) => {
            let c = p.checked_sub(at.offset)?;
            (c < at.t.columns.len() && !at.ranged.contains(&c)).then_some(c)
        }
        _ => None,
    }
}

/// The value of a constant operand.
fn constant(e: &CExpr, params: &[Datum]) -> Option<Datum> {
    match e {
        CExpr::Const(d) => Some(d.clone()),
        CExpr::Param(i) => params.get(*i).cloned(),
        _ => None,
    }
}

/// The test of one conjunct (P1), with the column it reads (not a ranged one).
fn test_of(at: &Place<'_>, e: &CExpr) -> Option<(usize, FieldTest)> {
    let (t, params) = (at.t, at.params);
    let column = |e: &CExpr| column(at, e);
    match e {
        CExpr::Cmp(op, a, b, coll) => {
            let op = *op;
            if !matches!(
                op,
                BinaryOp::Eq
                    | BinaryOp::Ne
                    | BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge
            ) {
                return None;
            }
            let (c, k, op) = match (column(a), column(b)) {
                (Some(c), None) => (c, constant(b, params)?, op),
                (None, Some(c)) => (c, constant(a, params)?, reversed(op)),
                _ => return None,
            };
            let k = operand(t, c, k, *coll)?;
            let test = move |b: Option<&[u8]>| {
                b.and_then(|b| k.compare(b))
                    .is_some_and(|o| cmp_holds(op, o))
            };
            Some((c, Box::new(test)))
        }
        CExpr::Between(x, lo, hi, false, coll) => {
            let c = column(x)?;
            let lo = operand(t, c, constant(lo, params)?, *coll)?;
            let hi = operand(t, c, constant(hi, params)?, *coll)?;
            let test = move |b: Option<&[u8]>| {
                b.is_some_and(|b| {
                    lo.compare(b).is_some_and(|o| o != Ordering::Less)
                        && hi.compare(b).is_some_and(|o| o != Ordering::Greater)
                })
            };
            Some((c, Box::new(test)))
        }
        CExpr::In(x, list, negated, coll) => {
            let c = column(x)?;
            // NULL items: x IN (..., NULL) is TRUE or NULL, x NOT IN (..., NULL) never TRUE.
            let mut has_null = false;
            let mut items = Vec::with_capacity(list.len());
            for e in list {
                match constant(e, params)? {
                    Datum::Null => has_null = true,
                    k => items.push(operand(t, c, k, *coll)?),
                }
            }
            let negated = *negated;
            let test = move |b: Option<&[u8]>| {
                b.is_some_and(|b| {
                    let hit = items.iter().any(|k| k.compare(b) == Some(Ordering::Equal));
                    if negated {
                        !hit && !has_null
                    } else {
                        hit
                    }
                })
            };
            Some((c, Box::new(test)))
        }
        CExpr::LikeConst(x, pat, neg) => {
            let c = column(x)?;
            let Kind::Text { latin1 } = kind_of(&t.columns[c].ty, &Datum::Bytes(Vec::new()))?
            else {
                return None;
            };
            let (pat, neg) = (pat.clone(), *neg);
            let test = move |b: Option<&[u8]>| {
                b.is_some_and(|b| pat.matches(&loaded_text(latin1, b)) != neg)
            };
            Some((c, Box::new(test)))
        }
        CExpr::IsNull(x, negated) => {
            let c = column(x)?;
            // A NOT NULL date column's zero date IS NULL in MySQL: left to the reader.
            if matches!(
                t.columns[c].ty.name,
                TypeName::Date | TypeName::DateTime | TypeName::Timestamp
            ) {
                return None;
            }
            let negated = *negated;
            Some((c, Box::new(move |b: Option<&[u8]>| b.is_none() != negated)))
        }
        _ => None,
    }
}

fn reversed(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        op => op,
    }
}

/// A constant as a column's stored values are compared with it (P1).
enum Operand {
    /// A string column: the constant's bytes as `coll` compares them.
    Text {
        latin1: bool,
        k: Vec<u8>,
        coll: Collation,
    },
    /// An integer, DECIMAL, DATE or DATETIME column, whose stored bytes order as the values
    /// do (docs/format/record.md), against the constant stored as the column stores it, when
    /// that is exact: compared as bytes, nothing decoded.
    Stored(Vec<u8>),
    /// A number or date column (`c` of `t`): its loaded value against the constant.
    Value {
        t: Arc<SqlTable>,
        c: usize,
        k: Datum,
        coll: Collation,
    },
}

/// Column `c` compared with `k` under `coll`, if P1 allows the pair.
fn operand(t: &Arc<SqlTable>, c: usize, k: Datum, coll: Collation) -> Option<Operand> {
    let ty = &t.columns[c].ty;
    // A date column against a string compares it as the date it reads as: the string is read
    // once here, when it reads without a warning.
    let k = match k {
        Datum::Bytes(_) if matches!(ty.name, TypeName::Date | TypeName::DateTime) => {
            let mut w = types::Warnings::default();
            let dt = types::to_datetime(&k, &mut w)?;
            if !w.0.is_empty() {
                return None;
            }
            Datum::DateTime(dt)
        }
        k => k,
    };
    Some(match (kind_of(ty, &k)?, k) {
        (Kind::Text { latin1 }, Datum::Bytes(k)) => Operand::Text {
            latin1,
            k: types::comparable(coll, &k).into_owned(),
            coll,
        },
        (_, k) => match stored_exactly(t, c, &k, coll) {
            Some(b) => Operand::Stored(b),
            None => Operand::Value {
                t: t.clone(),
                c,
                k,
                coll,
            },
        },
    })
}

/// Constant `k` as column `c` of `t` stores it, if the column's bytes order as its values do
/// and the stored value loads back equal to `k` (no rounding or clipping).
fn stored_exactly(t: &SqlTable, c: usize, k: &Datum, coll: Collation) -> Option<Vec<u8>> {
    let ty = &t.columns[c].ty;
    if !(ty.is_integer()
        || matches!(
            ty.name,
            TypeName::Decimal | TypeName::Date | TypeName::DateTime
        ))
    {
        return None;
    }
    let mut w = types::Warnings::default();
    let v = types::store(k, ty, types::SqlMode::DEFAULT, ("", ""), 0, &mut w).ok()?;
    let col = t.table.def.columns.get(c)?;
    let mut out = Vec::new();
    innoxide_engine::dict::schema::encode(col, &v, &mut out).ok()?;
    let back = types::load_stored(col, &out, ty);
    (back.compare(k, coll) == Some(Ordering::Equal)).then_some(out)
}

impl Operand {
    /// `Datum::compare` of the value stored as `b` with the constant.
    fn compare(&self, b: &[u8]) -> Option<Ordering> {
        match self {
            Operand::Text { latin1, k, coll } => {
                let v = loaded_text(*latin1, b);
                Some(coll.compare(&types::comparable(*coll, &v), k))
            }
            Operand::Stored(k) => Some(b.cmp(k)),
            Operand::Value { t, c, k, coll } => {
                let col = &t.table.def.columns[*c];
                types::load_stored(col, b, &t.columns[*c].ty).compare(k, *coll)
            }
        }
    }
}

/// The text a string column's stored bytes load as (latin1 is UTF-8 in the server).
fn loaded_text(latin1: bool, b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if latin1 && !b.is_ascii() {
        std::borrow::Cow::Owned(types::latin1_to_utf8(b).into_bytes())
    } else {
        std::borrow::Cow::Borrowed(b)
    }
}
