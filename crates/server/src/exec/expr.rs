//! Expressions: name resolution and typing (`compile`, from the AST to `CExpr`), then
//! evaluation over a row (`eval`).
//!
//! INVARIANTS
//! - E1: a `CExpr` refers to columns by position in the row it is evaluated on (the
//!   concatenation of the FROM tables' rows, or a grouped row: see `Agg`), so evaluation never
//!   looks a name up.
//! - E2: anything constant for the statement (literals, `?` parameters, @user and @@system
//!   variables, uncorrelated subqueries) is evaluated once, at compile time or at bind time.
//!   A column of an enclosing query (a correlated reference) is a parameter past the
//!   statement's own when the subquery is compiled once to run for every outer row (a
//!   SELECT of base tables), else a constant of a compilation per outer row (see
//!   `Session::sub_rows`).
//! - E4: a correlated subquery is a `CExpr::Sub` whose value is computed outside `eval`
//!   (running a query needs the session): `Session::bind_subs` fills its slot for the row
//!   about to be evaluated; `eval` of an unfilled slot is an error, never a stale value.
//! - E3: every comparison of strings uses the collation `compile` chose for it (the column's
//!   when a column takes part, a _bin one's of two columns, else the connection's); two
//!   columns of one character set under two other collations are error 1267, as in MySQL.
//! - E5: an uncorrelated subquery's rows come through a row buffer (`Found`); past the
//!   temporary-table budget an `x IN (SELECT ...)` searches them as a key set in tmpdir
//!   (keyset.rs) when they are all strings or all integers, so its memory stays bounded;
//!   other uses of such a result take its rows whole.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use innoxide_engine::latch::Mutex;

use innoxide_engine::Collation;
use innoxide_sql::ast::{
    BinaryOp, CastType, Expr, FrameBound, IntervalUnit, Literal, OnJson, OrderItem, Select,
    UnaryOp, VarScope,
};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlType, Warnings};

use super::builtins::{self, Builtin};
use super::keyset::{DiskKeys, KeySetBuilder};
use super::like::LikePattern;
use super::rowbuf::RowBuf;
use super::sort::SortArea;
use super::typeinfo::TypeInfo;
use crate::catalog::SqlTable;

/// The static type of an expression (enough for result metadata and comparisons).
#[derive(Clone, Debug, PartialEq)]
pub enum EType {
    Int {
        unsigned: bool,
    },
    Decimal {
        scale: u8,
    },
    Double,
    Str {
        coll: Collation,
    },
    Date,
    DateTime {
        fsp: u8,
    },
    Time {
        fsp: u8,
    },
    Null,
    /// A column: its declared type.
    Column(Box<SqlType>),
}

impl EType {
    pub fn collation(&self) -> Collation {
        match self {
            EType::Str { coll } => *coll,
            EType::Column(t) if t.is_string() => t.collation(),
            _ => Collation::Binary,
        }
    }
    fn is_string(&self) -> bool {
        match self {
            EType::Str { .. } => true,
            EType::Column(t) => t.is_string(),
            _ => false,
        }
    }
}

/// A compiled expression (E1).
#[derive(Clone, Debug)]
pub enum CExpr {
    Const(Datum),
    /// Column of the row at this position.
    Col(usize),
    /// A `?` parameter of a prepared statement (bound per execution).
    Param(usize),
    /// The i-th aggregate's value (grouped rows only).
    Agg(usize),
    /// The i-th window function's value (window.rs).
    Win(usize),
    Unary(UnaryOp, Box<CExpr>),
    Arith(BinaryOp, Box<CExpr>, Box<CExpr>),
    Cmp(BinaryOp, Box<CExpr>, Box<CExpr>, Collation),
    And(Box<CExpr>, Box<CExpr>),
    Or(Box<CExpr>, Box<CExpr>),
    Xor(Box<CExpr>, Box<CExpr>),
    Bit(BinaryOp, Box<CExpr>, Box<CExpr>),
    IsNull(Box<CExpr>, bool),
    IsBool(Box<CExpr>, bool, bool),
    In(Box<CExpr>, Vec<CExpr>, bool, Collation),
    /// `x [NOT] IN (constants)` with many constants of one kind, searched by halves.
    InSet(Box<CExpr>, Arc<InSet>),
    Between(Box<CExpr>, Box<CExpr>, Box<CExpr>, bool, Collation),
    Like(Box<CExpr>, Box<CExpr>, Option<char>, bool, Collation),
    /// `e [NOT] LIKE` a constant pattern, compiled once (like.rs).
    LikeConst(Box<CExpr>, Arc<LikePattern>, bool),
    Case(
        Option<Box<CExpr>>,
        Vec<(CExpr, CExpr)>,
        Option<Box<CExpr>>,
        Collation,
    ),
    Func(Func, Vec<CExpr>),
    Cast(Box<CExpr>, CastType),
    /// A correlated subquery (E4).
    Sub(Arc<SubPlan>),
    /// `e op ANY|ALL` over an uncorrelated subquery's values (`all`, collation).
    Quantified(Box<CExpr>, BinaryOp, bool, Vec<Datum>, Collation),
    /// JSON_VALUE with its RETURNING type and ON EMPTY / ON ERROR answers (json.rs).
    JsonValue(Box<super::json::JsonValueFn>),
}

/// What a correlated subquery computes from its rows.
#[derive(Debug)]
pub enum SubKind {
    /// (SELECT x ...): the one value (NULL without rows; more than one row is 1242).
    Scalar,
    /// [NOT] EXISTS (SELECT ...)
    Exists { negated: bool },
    /// lhs [NOT] IN (SELECT x ...)
    In {
        lhs: CExpr,
        negated: bool,
        coll: Collation,
    },
    /// (a, b) [NOT] IN (SELECT x, y ...): a collation per column.
    InRow {
        lhs: Vec<CExpr>,
        negated: bool,
        colls: Vec<Collation>,
    },
    /// lhs op ANY|ALL (SELECT x ...)
    Quantified {
        lhs: CExpr,
        op: BinaryOp,
        all: bool,
        coll: Collation,
    },
}

/// A correlated subquery: run again for each distinct set of the outer values it reads.
pub struct SubPlan {
    pub query: Select,
    pub kind: SubKind,
    /// The scope the outer row is laid out in (and its positions hidden from unqualified
    /// names, see `Compiler::hidden`).
    pub outer: Arc<(Vec<ScopeTable>, Vec<usize>)>,
    /// The positions of the outer row the subquery reads.
    pub refs: Vec<usize>,
    /// It (or a subquery in it) reads a column of a query further out that is a parameter of
    /// the one it is in: its result varies with the parameters too.
    pub deep: bool,
    /// The value for the row being evaluated (E4).
    pub slot: Mutex<Option<Datum>>,
    /// Result rows by the outer values they were computed for.
    pub cache: Mutex<SubCache>,
}

/// A correlated subquery's results by the outer values they were computed for, and the bytes
/// they take, roughly: emptied whenever the next result would take it past the
/// temporary-table budget, so it never holds more than that whatever the outer rows. With how
/// the subquery runs, it holds for one execution of a statement (`stmt`, the session's
/// count): a prepared statement's kept plan runs again on other data, parameters and tables.
#[derive(Default)]
pub struct SubCache {
    pub stmt: u64,
    pub map: HashMap<Vec<u8>, SubRows>,
    pub bytes: u64,
    /// How it runs, once first run: one plan for every outer row, or compiled per row.
    pub compiled: Option<Arc<super::SubCompiled>>,
}

/// The constants of `x [NOT] IN (...)` when there are many of one kind (MySQL's in_vector):
/// sorted once, so each test takes log2(n) comparisons, not n.
#[derive(Debug)]
pub struct InSet {
    items: Items,
    /// The items are strings (else exact numbers), which compare among themselves in one
    /// total order (under `coll`; numerically), so a value of the same kind can be searched.
    strings: bool,
    has_null: bool,
    negated: bool,
    coll: Collation,
}

/// The items of an `InSet`.
#[derive(Debug)]
enum Items {
    /// Sorted under the set's collation, without NULLs.
    Memory(Vec<Datum>),
    /// The keys (`in_key`) of a subquery's result that went past the temporary-table budget,
    /// on disk (keyset.rs), each with its value (`raw_value`).
    Disk(DiskKeys),
}

/// Constants from this many on go to an `InSet`.
const IN_SET_MIN: usize = 8;

/// `c [NOT] IN (items)`: an `InSet` when the items are at least IN_SET_MIN constants, all
/// strings or all exact numbers (NULLs aside).
fn in_list(c: CExpr, items: Vec<CExpr>, negated: bool, coll: Collation) -> CExpr {
    if items.len() < IN_SET_MIN || !items.iter().all(|i| matches!(i, CExpr::Const(_))) {
        return CExpr::In(Box::new(c), items, negated, coll);
    }
    let values = (items.into_iter())
        .filter_map(|i| match i {
            CExpr::Const(d) => Some(d),
            _ => None,
        })
        .collect();
    match in_set(values, negated, coll) {
        Ok(set) => CExpr::InSet(Box::new(c), Arc::new(set)),
        Err(values) => {
            let items = values.into_iter().map(CExpr::Const).collect();
            CExpr::In(Box::new(c), items, negated, coll)
        }
    }
}

/// The sorted set of `values` for `[NOT] IN`, when they are at least IN_SET_MIN, all strings or
/// all exact numbers (NULLs aside); else the values back.
fn in_set(values: Vec<Datum>, negated: bool, coll: Collation) -> Result<InSet, Vec<Datum>> {
    let kind = |d: &Datum| match d {
        Datum::Null => Some(None),
        Datum::Bytes(_) => Some(Some(true)),
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) => Some(Some(false)),
        _ => None,
    };
    let mut strings = None;
    let one_kind = values.len() >= IN_SET_MIN
        && values.iter().all(|d| match kind(d) {
            Some(None) => true,
            Some(Some(k)) => *strings.get_or_insert(k) == k,
            None => false,
        });
    let Some(strings) = strings.filter(|_| one_kind) else {
        return Err(values);
    };
    let has_null = values.iter().any(Datum::is_null);
    let mut values: Vec<Datum> = values.into_iter().filter(|d| !d.is_null()).collect();
    values.sort_by(|a, b| a.compare(b, coll).unwrap_or(Ordering::Equal));
    Ok(InSet {
        items: Items::Memory(values),
        strings,
        has_null,
        negated,
        coll,
    })
}

impl CExpr {
    /// The integers `x IN (...)` (not NOT IN) compares with, when this is one over at most
    /// `max` constant integers only (NULLs aside), held in memory.
    pub fn int_items(&self, max: usize) -> Option<Vec<Datum>> {
        let int = |d: &Datum| matches!(d, Datum::Int(_) | Datum::UInt(_));
        let values: Vec<Datum> = match self {
            CExpr::InSet(_, set) => match &set.items {
                Items::Memory(v) if !set.negated && v.len() <= max => v.clone(),
                _ => return None,
            },
            CExpr::In(_, items, false, _) if items.len() <= max => {
                let mut v = Vec::with_capacity(items.len());
                for i in items {
                    match i {
                        CExpr::Const(Datum::Null) => {}
                        CExpr::Const(d) => v.push(d.clone()),
                        _ => return None,
                    }
                }
                v
            }
            _ => return None,
        };
        values.iter().all(int).then_some(values)
    }
}

impl InSet {
    /// The value of `v [NOT] IN (...)`: as `CExpr::In` gives it, a value of another kind than
    /// the items compared with each.
    fn test(&self, v: &Datum) -> Result<Datum, SqlError> {
        if v.is_null() {
            return Ok(Datum::Null);
        }
        let same_kind = match v {
            Datum::Bytes(_) => self.strings,
            Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) => !self.strings,
            _ => false,
        };
        let equal = |x: &Datum| v.compare(x, self.coll) == Some(Ordering::Equal);
        let found = match &self.items {
            Items::Memory(items) if same_kind => items
                .binary_search_by(|x| x.compare(v, self.coll).unwrap_or(Ordering::Equal))
                .is_ok(),
            Items::Memory(items) => items.iter().any(equal),
            Items::Disk(keys) if same_kind => {
                // A DECIMAL is looked up by its integer part, which must then equal it.
                let whole = match v {
                    Datum::Decimal(d) => match d.to_i128(true).map(exact_integer) {
                        Some(Some(i)) if equal(&i) => i,
                        _ => return Ok(self.absent()),
                    },
                    other => other.clone(),
                };
                let mut k = Vec::new();
                in_key(&whole, self.coll, &mut k);
                keys.contains(&k)?
            }
            Items::Disk(keys) => {
                let mut whole = true;
                let found = keys.any_value(|raw| match from_raw(raw) {
                    Some(x) => equal(&x),
                    None => {
                        whole = false;
                        true
                    }
                })?;
                if !whole {
                    return Err(keys.damaged());
                }
                found
            }
        };
        Ok(if found {
            Datum::Int(i64::from(!self.negated))
        } else {
            self.absent()
        })
    }

    /// The value when no item equals the operand.
    fn absent(&self) -> Datum {
        if self.has_null {
            Datum::Null
        } else {
            Datum::Int(i64::from(self.negated))
        }
    }
}

/// The type of `CAST(... AS ty)`.
fn cast_type(ty: &CastType, cx: &mut dyn Context) -> Result<EType, SqlError> {
    Ok(match ty {
        CastType::Signed => EType::Int { unsigned: false },
        CastType::Unsigned => EType::Int { unsigned: true },
        CastType::Decimal(_, s) => EType::Decimal {
            scale: s.unwrap_or(0).min(30) as u8,
        },
        CastType::Double => EType::Double,
        // CONVERT(x USING cs): the character set's default collation.
        CastType::Char(_, Some(cs)) => EType::Str {
            coll: types::default_collation(cs)
                .ok_or_else(|| SqlError::new(ER_UNKNOWN_CHARACTER_SET, &[cs]))?
                .engine,
        },
        CastType::Char(..) | CastType::Json => EType::Str {
            coll: cx.collation(),
        },
        CastType::Binary(_) => EType::Str {
            coll: Collation::Binary,
        },
        CastType::Date => EType::Date,
        CastType::DateTime(f) => EType::DateTime {
            fsp: f.unwrap_or(0).min(6) as u8,
        },
        CastType::Time(f) => EType::Time {
            fsp: f.unwrap_or(0).min(6) as u8,
        },
    })
}

/// An integer as the exact value MySQL keeps it in (None beyond BIGINT UNSIGNED).
fn exact_integer(i: i128) -> Option<Datum> {
    i64::try_from(i)
        .map(Datum::Int)
        .or_else(|_| u64::try_from(i).map(Datum::UInt))
        .ok()
}

/// Appends the key of `v` in a set of IN items (keyset.rs): a string's sort key under `coll`,
/// an integer as a big-endian i128 (signed and unsigned of one value alike). False for a
/// value of another kind, which makes no key.
fn in_key(v: &Datum, coll: Collation, out: &mut Vec<u8>) -> bool {
    match v {
        Datum::Int(n) => out.extend(i128::from(*n).to_be_bytes()),
        Datum::UInt(n) => out.extend(i128::from(*n).to_be_bytes()),
        Datum::Bytes(b) => out.extend(coll.sort_key(&types::comparable(coll, b))),
        _ => return false,
    }
    true
}

/// `v` as kept beside its key: a tag (0 signed, 1 unsigned, 2 string), then its bytes.
fn raw_value(v: &Datum) -> Vec<u8> {
    let (tag, body) = match v {
        Datum::Int(n) => (0, n.to_le_bytes().to_vec()),
        Datum::UInt(n) => (1, n.to_le_bytes().to_vec()),
        Datum::Bytes(b) => (2, b.clone()),
        _ => (2, Vec::new()),
    };
    let mut out = Vec::with_capacity(1 + body.len());
    out.push(tag);
    out.extend(body);
    out
}

/// The value `raw_value` kept; None for bytes it cannot have written.
fn from_raw(raw: &[u8]) -> Option<Datum> {
    let eight = |b: &[u8]| <[u8; 8]>::try_from(b).ok();
    Some(match raw.split_first()? {
        (0, b) => Datum::Int(i64::from_le_bytes(eight(b)?)),
        (1, b) => Datum::UInt(u64::from_le_bytes(eight(b)?)),
        (2, b) => Datum::Bytes(b.to_vec()),
        _ => return None,
    })
}

/// `c [NOT] IN (SELECT ...)` over a result that went to tmpdir (`buf`): an `InSet` of its
/// values' keys on disk when they are all strings or all integers (NULLs aside); None
/// otherwise, for the caller to compare with each row.
fn in_set_on_disk(
    c: &CExpr,
    buf: &mut RowBuf,
    negated: bool,
    coll: Collation,
    area: &SortArea,
) -> Result<Option<CExpr>, SqlError> {
    let mut strings = None;
    let mut has_null = false;
    for j in 0..buf.len() {
        let kind = match buf.row(j)?.first() {
            None | Some(Datum::Null) => {
                has_null = true;
                continue;
            }
            Some(Datum::Bytes(_)) => true,
            Some(Datum::Int(_) | Datum::UInt(_)) => false,
            Some(_) => return Ok(None),
        };
        if *strings.get_or_insert(kind) != kind {
            return Ok(None);
        }
    }
    let mut keys = KeySetBuilder::new(area, true);
    for j in 0..buf.len() {
        let Some(v) = buf.row(j)?.first().filter(|v| !v.is_null()) else {
            continue;
        };
        let mut k = Vec::new();
        in_key(v, coll, &mut k);
        keys.push(k, raw_value(v))?;
    }
    Ok(Some(CExpr::InSet(
        Box::new(c.clone()),
        Arc::new(InSet {
            items: Items::Disk(keys.finish()?),
            strings: strings.unwrap_or(false),
            has_null,
            negated,
            coll,
        }),
    )))
}

/// An uncorrelated subquery's rows: in memory, or in a row buffer gone to tmpdir.
pub enum Found {
    Rows(Vec<Vec<Datum>>),
    Spilled(Box<RowBuf>),
}

impl Found {
    pub fn len(&self) -> usize {
        match self {
            Found::Rows(r) => r.len(),
            Found::Spilled(b) => b.len(),
        }
    }

    /// Every row, in memory: what a use that needs them whole takes.
    pub fn into_rows(self) -> Result<Vec<Vec<Datum>>, SqlError> {
        match self {
            Found::Rows(r) => Ok(r),
            Found::Spilled(mut b) => (0..b.len()).map(|j| Ok(b.row(j)?.to_vec())).collect(),
        }
    }
}

/// A correlated subquery's result rows, shared between the cache and its users.
pub type SubRows = Arc<SubGot>;

/// The rows of `SubRows`; for an IN, the sorted set of their values too, made at the first
/// test when they are many of one kind (`in_set`), so each later test searches it.
pub struct SubGot {
    pub rows: Vec<Vec<Datum>>,
    set: OnceLock<Option<InSet>>,
}

impl SubGot {
    pub fn new(rows: Vec<Vec<Datum>>) -> SubGot {
        SubGot {
            rows,
            set: OnceLock::new(),
        }
    }

    /// `v [NOT] IN` the first column of the rows (the value `in_rows` gives). A subquery's
    /// rows are always tested with the same `negated` and `coll`.
    pub fn test_in(&self, v: &Datum, negated: bool, coll: Collation) -> Result<Datum, SqlError> {
        if self.rows.len() >= IN_SET_MIN {
            let set = self.set.get_or_init(|| {
                let first = |r: &Vec<Datum>| r.first().cloned().unwrap_or(Datum::Null);
                let values = self.rows.iter().map(first).collect();
                in_set(values, negated, coll).ok()
            });
            if let Some(set) = set {
                return set.test(v);
            }
        }
        Ok(in_rows(v, &self.rows, negated, coll))
    }
}

impl std::fmt::Debug for SubPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sub({:?}, refs {:?})", self.kind, self.refs)
    }
}

/// What `Context::subquery` found: the result columns, and the rows when the subquery is
/// uncorrelated (None: it reads the outer positions `corr.refs` or is `corr.deep`).
pub struct SubResult {
    pub columns: Vec<super::Column>,
    pub rows: Option<Found>,
    pub corr: Correlation,
}

/// What of the enclosing queries a subquery reads (`SubPlan`'s fields of the same names).
pub struct Correlation {
    pub refs: Vec<usize>,
    pub deep: bool,
    pub outer: Arc<(Vec<ScopeTable>, Vec<usize>)>,
}

impl CExpr {
    /// The direct sub-expressions (an IN subquery's left operand included).
    pub fn children(&self) -> Vec<&CExpr> {
        match self {
            CExpr::Const(_) | CExpr::Col(_) | CExpr::Param(_) | CExpr::Agg(_) | CExpr::Win(_) => {
                vec![]
            }
            CExpr::Unary(_, a)
            | CExpr::IsNull(a, _)
            | CExpr::IsBool(a, _, _)
            | CExpr::InSet(a, _)
            | CExpr::LikeConst(a, _, _)
            | CExpr::Cast(a, _) => {
                vec![a]
            }
            CExpr::Arith(_, a, b)
            | CExpr::Cmp(_, a, b, _)
            | CExpr::And(a, b)
            | CExpr::Or(a, b)
            | CExpr::Xor(a, b)
            | CExpr::Bit(_, a, b)
            | CExpr::Like(a, b, _, _, _) => vec![a, b],
            CExpr::Between(a, b, c, _, _) => vec![a, b, c],
            CExpr::In(a, list, _, _) => std::iter::once(&**a).chain(list).collect(),
            CExpr::Case(base, arms, other, _) => {
                let mut v: Vec<&CExpr> = base.iter().map(|b| &**b).collect();
                for (c, r) in arms {
                    v.push(c);
                    v.push(r);
                }
                v.extend(other.iter().map(|o| &**o));
                v
            }
            CExpr::Func(_, args) => args.iter().collect(),
            CExpr::Sub(p) => match &p.kind {
                SubKind::In { lhs, .. } | SubKind::Quantified { lhs, .. } => vec![lhs],
                SubKind::InRow { lhs, .. } => lhs.iter().collect(),
                _ => vec![],
            },
            CExpr::Quantified(a, ..) => vec![a],
            CExpr::JsonValue(f) => f.children(),
        }
    }

    /// The correlated subqueries in `self`, inner ones before those containing them.
    pub fn subs(&self, out: &mut Vec<Arc<SubPlan>>) {
        for c in self.children() {
            c.subs(out);
        }
        if let CExpr::Sub(p) = self {
            out.push(p.clone());
        }
    }

    pub fn has_sub(&self) -> bool {
        matches!(self, CExpr::Sub(_)) || self.children().into_iter().any(CExpr::has_sub)
    }
}

/// `(v...) [NOT] IN (rows)`: a row matches when every column compares equal (NULL when none
/// is unequal and one is NULL); FALSE for no rows.
pub fn in_row_rows(v: &[Datum], rows: &[Vec<Datum>], negated: bool, colls: &[Collation]) -> Datum {
    if rows.is_empty() {
        return Datum::Int(i64::from(negated));
    }
    let mut saw_null = false;
    for r in rows {
        let mut row = Some(true);
        for ((x, y), coll) in v.iter().zip(r).zip(colls) {
            match compare_op(BinaryOp::Eq, x, y, *coll).truth() {
                Some(false) => {
                    row = Some(false);
                    break;
                }
                None => row = None,
                Some(true) => {}
            }
        }
        match row {
            Some(true) => return Datum::Int(i64::from(!negated)),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    if saw_null {
        Datum::Null
    } else {
        Datum::Int(i64::from(negated))
    }
}

/// `v op ANY|ALL (values)` as MySQL computes it: ANY is TRUE if some comparison is, ALL is
/// FALSE if some comparison is; otherwise NULL if a comparison was NULL, else FALSE (ANY) or
/// TRUE (ALL), so no values give FALSE and TRUE.
pub fn quantified<'v>(
    v: &Datum,
    values: impl Iterator<Item = &'v Datum>,
    op: BinaryOp,
    all: bool,
    coll: Collation,
) -> Datum {
    let mut saw_null = false;
    for y in values {
        match compare_op(op, v, y, coll).truth() {
            Some(t) if t != all => return Datum::Int(i64::from(t)),
            None => saw_null = true,
            _ => {}
        }
    }
    if saw_null {
        Datum::Null
    } else {
        Datum::Int(i64::from(all))
    }
}

/// `v [NOT] IN (rows' first values)` as MySQL computes it: FALSE for no rows, NULL when `v` is
/// NULL or no value equals it and one is NULL.
fn in_rows(v: &Datum, rows: &[Vec<Datum>], negated: bool, coll: Collation) -> Datum {
    if rows.is_empty() {
        return Datum::Int(i64::from(negated));
    }
    if v.is_null() {
        return Datum::Null;
    }
    let mut saw_null = false;
    for r in rows {
        let y = r.first().unwrap_or(&Datum::Null);
        match v.compare(y, coll) {
            Some(Ordering::Equal) => return Datum::Int(i64::from(!negated)),
            None => saw_null = true,
            _ => {}
        }
    }
    if saw_null {
        Datum::Null
    } else {
        Datum::Int(i64::from(negated))
    }
}

/// Scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Concat,
    ConcatWs,
    Lower,
    Upper,
    Length,
    CharLength,
    Substring,
    Left,
    Right,
    Trim,
    Ltrim,
    Rtrim,
    Replace,
    Repeat,
    Reverse,
    Lpad,
    Rpad,
    Instr,
    Locate,
    Hex,
    IfNull,
    Coalesce,
    If,
    NullIf,
    Abs,
    Round,
    Truncate,
    Floor,
    Ceil,
    Mod,
    Sign,
    Sqrt,
    Pow,
    Greatest,
    Least,
    Rand,
    UnixTimestamp,
    Date,
    Year,
    Month,
    Day,
    /// DATE_ADD / date + INTERVAL n unit
    DateAdd(IntervalUnit),
    /// DATE_SUB / date - INTERVAL n unit
    DateSub(IntervalUnit),
    DateDiff,
    Md5,
    /// An ENUM value in numeric context: its 1-based position among the other arguments
    /// (the type's values), 0 for '' (the error value).
    EnumIndex,
    /// The functions of `builtins`.
    B(Builtin),
    /// A latin1 value's bytes (from the UTF-8 the executor holds).
    Latin1Bytes,
    /// A JSON function (json.rs).
    Json(super::json::JsonFn),
}

/// An aggregate to compute per group.
#[derive(Clone, Debug)]
pub struct AggSpec {
    pub kind: AggKind,
    pub arg: Option<CExpr>,
    pub distinct: bool,
    pub coll: Collation,
    /// GROUP_CONCAT's ORDER BY keys (expression, descending, collation) and separator.
    pub order: Vec<(CExpr, bool, Collation)>,
    pub separator: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    BitAnd,
    BitOr,
    BitXor,
    GroupConcat,
    /// JSON_ARRAYAGG(x): its argument is compiled as JSON_ARRAY(x), so each row gives a
    /// one-element array (never NULL) and the result concatenates them.
    JsonArrayAgg,
    /// JSON_OBJECTAGG(k, v): compiled as JSON_OBJECT(k, v); the result merges the objects.
    JsonObjectAgg,
    /// STD/STDDEV/STDDEV_POP (root, population), STDDEV_SAMP, VARIANCE/VAR_POP, VAR_SAMP.
    Variance {
        sample: bool,
        root: bool,
    },
}

/// A table (or derived table) visible to name resolution.
#[derive(Clone)]
pub struct ScopeTable {
    /// The name a column may be qualified with (alias or table name).
    pub name: String,
    pub db: String,
    /// (column name, type, hidden) in row order.
    pub columns: Vec<(String, EType, bool)>,
    pub offset: usize,
    pub table: Option<Arc<SqlTable>>,
}

impl ScopeTable {
    pub fn of_table(t: &Arc<SqlTable>, name: &str, offset: usize) -> ScopeTable {
        ScopeTable {
            name: name.into(),
            db: t.db.clone(),
            columns: t
                .columns
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        EType::Column(Box::new(c.ty.clone())),
                        c.meta.hidden,
                    )
                })
                .collect(),
            offset,
            table: Some(t.clone()),
        }
    }

    /// A computed result (derived table, information_schema view) as a FROM source.
    pub fn of_result(name: String, db: String, cols: &[super::Column], offset: usize) -> Self {
        ScopeTable {
            name,
            db,
            columns: cols
                .iter()
                .map(|c| (c.name.clone(), c.ety.clone(), false))
                .collect(),
            offset,
            table: None,
        }
    }
}

/// What `compile` needs from the session.
pub trait Context {
    /// Where a sort of the statement's goes (sort_buffer_size, tmpdir).
    fn sort_area(&self) -> SortArea;
    fn sys_var(&mut self, scope: VarScope, name: &str) -> Result<Datum, SqlError>;
    fn user_var(&mut self, name: &str) -> Datum;
    /// Compiles subquery `q` with `outer` (the scope of the expression it is in, and the
    /// positions hidden from unqualified names) as its enclosing scope; runs it when it reads
    /// nothing of `outer`.
    fn subquery(
        &mut self,
        q: &Select,
        outer: (&[ScopeTable], &[usize]),
    ) -> Result<SubResult, SqlError>;
    /// A column of an enclosing query (a correlated reference), if one is named so.
    fn outer_column(
        &mut self,
        table: Option<&str>,
        name: &str,
    ) -> Result<Option<(CExpr, EType)>, SqlError>;
    fn info(&mut self, what: &str) -> Result<Datum, SqlError>;
    fn collation(&self) -> Collation;
    /// The type of the value bound to parameter `i` of the statement being compiled (None:
    /// not bound yet).
    fn param_type(&self, i: usize) -> Option<EType>;
}

/// The type a bound parameter value gives its `?` (MySQL 8.0: a parameter takes the type
/// of its value; NULL stays a string, as an untyped parameter).
pub fn param_type_of(d: &Datum, coll: Collation) -> EType {
    match d {
        Datum::Null => EType::Str { coll },
        Datum::DateTime(t) => EType::DateTime { fsp: t.fsp },
        Datum::Time(t) => EType::Time { fsp: t.fsp },
        d => datum_type(d, coll),
    }
}

pub struct Compiler<'a> {
    pub tables: &'a [ScopeTable],
    /// Aggregates found (None: aggregates are not allowed here).
    pub aggs: Option<&'a mut Vec<AggSpec>>,
    /// For error messages: 'field list', 'where clause', 'order clause'...
    pub clause: &'static str,
    /// SELECT aliases visible (HAVING, ORDER BY): name → compiled expression.
    pub aliases: &'a [(String, CExpr, EType)],
    /// Columns used outside aggregates (for ONLY_FULL_GROUP_BY checks).
    pub bare_columns: Vec<usize>,
    /// Row positions unqualified names do not see (the second column of a USING pair).
    pub hidden: &'a [usize],
    /// Inside an aggregate's argument.
    in_agg: bool,
    /// Window functions found (None: not allowed here: only the select list and ORDER BY).
    pub windows: Option<&'a mut Vec<super::window::WinSpec>>,
    /// Inside a window function's arguments, PARTITION BY or ORDER BY.
    in_window: bool,
}

impl<'a> Compiler<'a> {
    pub fn new(tables: &'a [ScopeTable], clause: &'static str) -> Self {
        Compiler {
            tables,
            aggs: None,
            clause,
            aliases: &[],
            bare_columns: Vec::new(),
            hidden: &[],
            in_agg: false,
            windows: None,
            in_window: false,
        }
    }

    /// The row position and type of column `name` (of table `table`). A hidden column (a
    /// table's DB_ROW_ID) is reached only as `"\0" + its name`, a name no statement can
    /// write (multi.rs reads the keys of tables without a primary key so).
    pub fn resolve(&self, table: Option<&str>, name: &str) -> Result<(usize, EType), SqlError> {
        let mut found: Option<(usize, EType)> = None;
        let internal = name.strip_prefix('\0');
        for t in self.tables {
            match table {
                Some(q) if !t.name.eq_ignore_ascii_case(q) => continue,
                // Internal tables (VALUES() rows) are reached only by their qualifier.
                None if t.name.starts_with('\0') => continue,
                _ => {}
            }
            for (i, (n, ty, hidden)) in t.columns.iter().enumerate() {
                if table.is_none() && self.hidden.contains(&(t.offset + i)) {
                    continue;
                }
                let named = match internal {
                    Some(inner) => *hidden && n.eq_ignore_ascii_case(inner),
                    None => !*hidden && n.eq_ignore_ascii_case(name),
                };
                if named {
                    if found.is_some() {
                        return Err(SqlError::new(ER_NON_UNIQ_ERROR, &[&name, &self.clause]));
                    }
                    found = Some((t.offset + i, ty.clone()));
                }
            }
        }
        found.ok_or_else(|| {
            let full = match table {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            SqlError::new(ER_BAD_FIELD_ERROR, &[&full, &self.clause])
        })
    }

    /// The base table column `name` (of table `table`) is, if it is one (not a derived
    /// table's), for DEFAULT(col).
    fn table_column(&self, table: Option<&str>, name: &str) -> Option<(Arc<SqlTable>, usize)> {
        self.tables
            .iter()
            .filter(|t| table.is_none_or(|q| t.name.eq_ignore_ascii_case(q)))
            .find_map(|t| {
                let i = t
                    .columns
                    .iter()
                    .position(|(n, _, hidden)| !*hidden && n.eq_ignore_ascii_case(name))?;
                Some((t.table.clone()?, i))
            })
    }

    /// DEFAULT(col): the column's default as a value of its type (CURRENT_TIMESTAMP is the
    /// statement's time); 1364 for a NOT NULL column without one and 3773 for an expression
    /// default, as MySQL.
    fn default_of_column(
        &mut self,
        args: &[Expr],
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        let [Expr::Column { table, name }] = args else {
            return Err(SqlError::parse("default", 1));
        };
        let (_, ty) = self.resolve(table.as_deref(), name)?;
        let Some((t, c)) = self.table_column(table.as_deref(), name) else {
            return Ok((CExpr::Const(Datum::Null), ty));
        };
        let col = &t.columns[c];
        use crate::catalog::DefaultValue as D;
        match &col.meta.default {
            Some(D::Text(s)) => {
                let mut w = Warnings::default();
                let d = Datum::Bytes(s.clone().into_bytes());
                let v = types::store(&d, &col.ty, types::SqlMode(0), (&t.name, name), 1, &mut w)?;
                Ok((CExpr::Const(types::load(&v, &col.ty)), ty))
            }
            Some(D::Now) => {
                let fsp = col.ty.fsp();
                let args = match fsp {
                    0 => vec![],
                    f => vec![Expr::Literal(Literal::Number(f.to_string()))],
                };
                let now = Expr::Function {
                    name: "now".into(),
                    args,
                    distinct: false,
                    star: false,
                };
                Ok((self.compile(&now, cx)?.0, ty))
            }
            Some(D::Expr(_)) => Err(SqlError::new(ER_DEFAULT_AS_VAL_GENERATED, &[])),
            Some(D::Null) => Ok((CExpr::Const(Datum::Null), ty)),
            None if col.nullable || col.meta.auto_increment => Ok((CExpr::Const(Datum::Null), ty)),
            None => Err(SqlError::new(ER_NO_DEFAULT_FOR_FIELD, &[&col.name])),
        }
    }

    pub fn compile(&mut self, e: &Expr, cx: &mut dyn Context) -> Result<(CExpr, EType), SqlError> {
        if let Some(r) = self.row_form(e, cx)? {
            return Ok((r, bool_type()));
        }
        Ok(match e {
            Expr::Literal(l) => literal(l, cx.collation()),
            Expr::Column { table, name } => {
                if table.is_none() {
                    if let Some((_, c, t)) =
                        self.aliases.iter().find(|a| a.0.eq_ignore_ascii_case(name))
                    {
                        if self.resolve(None, name).is_err() || self.clause != "field list" {
                            return Ok((c.clone(), t.clone()));
                        }
                    }
                }
                let (pos, ty) = match self.resolve(table.as_deref(), name) {
                    Ok(found) => found,
                    Err(e) if e.code == ER_BAD_FIELD_ERROR.code => {
                        match cx.outer_column(table.as_deref(), name)? {
                            Some(outer) => return Ok(outer),
                            None => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                };
                if !self.in_agg {
                    self.bare_columns.push(pos);
                }
                (CExpr::Col(pos), ty)
            }
            Expr::Param(i) => (
                CExpr::Param(*i),
                cx.param_type(*i).unwrap_or(EType::Str {
                    coll: cx.collation(),
                }),
            ),
            Expr::UserVar(n) => {
                let d = cx.user_var(n);
                let t = datum_type(&d, cx.collation());
                (CExpr::Const(d), t)
            }
            Expr::SysVar { scope, name } => {
                let d = cx.sys_var(*scope, name)?;
                let t = datum_type(&d, cx.collation());
                (CExpr::Const(d), t)
            }
            Expr::Unary { op, expr } => {
                let (c, t) = self.compile(expr, cx)?;
                let t = match op {
                    UnaryOp::Not => EType::Int { unsigned: false },
                    UnaryOp::BitNot => EType::Int { unsigned: true },
                    UnaryOp::Binary => EType::Str {
                        coll: Collation::Binary,
                    },
                    UnaryOp::Neg | UnaryOp::Plus => match numeric_type(&t) {
                        EType::Double => double_with(decimals_of(&t)),
                        n => n,
                    },
                };
                if *op == UnaryOp::Plus || *op == UnaryOp::Binary {
                    return Ok((c, t));
                }
                (CExpr::Unary(*op, Box::new(c)), t)
            }
            Expr::Binary {
                op: op @ (BinaryOp::Add | BinaryOp::Sub),
                left,
                right,
            } if matches!(**right, Expr::Interval { .. }) => {
                let name = if *op == BinaryOp::Add {
                    "date_add"
                } else {
                    "date_sub"
                };
                return self.function(
                    name,
                    &[(**left).clone(), (**right).clone()],
                    false,
                    false,
                    cx,
                );
            }
            Expr::Binary { op, left, right } => {
                let (l, lt) = self.compile(left, cx)?;
                let (r, rt) = self.compile(right, cx)?;
                use BinaryOp::*;
                match op {
                    Add | Sub | Mul | Div | IntDiv | Mod => {
                        let (l, lt) = enum_as_number(l, lt);
                        let (r, rt) = enum_as_number(r, rt);
                        let t = arith_type(*op, &lt, &rt);
                        (CExpr::Arith(*op, Box::new(l), Box::new(r)), t)
                    }
                    Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge
                        if super::json::is_json(&lt) || super::json::is_json(&rt) =>
                    {
                        (
                            super::json::compare(*op, l, &lt, r, &rt),
                            EType::Int { unsigned: false },
                        )
                    }
                    Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge => {
                        // An explicit COLLATE wins over a column's or a literal's collation.
                        let coll = match (&**left, &**right) {
                            (Expr::Collate { .. }, _) => lt.collation(),
                            (_, Expr::Collate { .. }) => rt.collation(),
                            _ => {
                                let shown = match op {
                                    Eq => "=",
                                    NullSafeEq => "<=>",
                                    Ne => "<>",
                                    Lt => "<",
                                    Le => "<=",
                                    Gt => ">",
                                    _ => ">=",
                                };
                                mixed_collations(&lt, &rt, shown)?;
                                if coercible(left) && !coercible(right) {
                                    pick_collation(&rt, &lt, cx.collation())
                                } else {
                                    pick_collation(&lt, &rt, cx.collation())
                                }
                            }
                        };
                        (
                            CExpr::Cmp(*op, Box::new(l), Box::new(r), coll),
                            EType::Int { unsigned: false },
                        )
                    }
                    And => (CExpr::And(Box::new(l), Box::new(r)), bool_type()),
                    Or => (CExpr::Or(Box::new(l), Box::new(r)), bool_type()),
                    Xor => (CExpr::Xor(Box::new(l), Box::new(r)), bool_type()),
                    BitAnd | BitOr | BitXor | Shl | Shr => (
                        CExpr::Bit(*op, Box::new(l), Box::new(r)),
                        EType::Int { unsigned: true },
                    ),
                }
            }
            Expr::IsNull { expr, negated } => {
                let (c, _) = self.compile(expr, cx)?;
                (CExpr::IsNull(Box::new(c), *negated), bool_type())
            }
            Expr::IsBool {
                expr,
                value,
                negated,
            } => {
                let (c, _) = self.compile(expr, cx)?;
                (CExpr::IsBool(Box::new(c), *value, *negated), bool_type())
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let (c, t) = self.compile(expr, cx)?;
                let mut coll = t.collation();
                let mut items = Vec::with_capacity(list.len());
                for x in list {
                    let (xc, xt) = self.compile(x, cx)?;
                    coll = pick_collation(&t, &xt, coll);
                    items.push(xc);
                }
                if !t.is_string() {
                    coll = cx.collation();
                }
                (in_list(c, items, *negated, coll), bool_type())
            }
            Expr::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let (c, sub, coll) = self.quantified_parts(expr, subquery, cx)?;
                let Some(found) = sub.rows else {
                    let kind = SubKind::In {
                        lhs: c,
                        negated: *negated,
                        coll,
                    };
                    return Ok((sub_plan(subquery, kind, sub.corr), bool_type()));
                };
                // Past the temporary-table budget: searched on disk (keyset.rs).
                let rows = match found {
                    Found::Spilled(mut buf) => {
                        let area = cx.sort_area();
                        match in_set_on_disk(&c, &mut buf, *negated, coll, &area)? {
                            Some(set) => return Ok((set, bool_type())),
                            None => Found::Spilled(buf).into_rows()?,
                        }
                    }
                    Found::Rows(rows) => rows,
                };
                if rows.is_empty() {
                    // FALSE even for a NULL operand (MySQL).
                    return Ok((CExpr::Const(Datum::Int(i64::from(*negated))), bool_type()));
                }
                let items = rows
                    .into_iter()
                    .map(|r| CExpr::Const(r.into_iter().next().unwrap_or(Datum::Null)))
                    .collect();
                (in_list(c, items, *negated, coll), bool_type())
            }
            Expr::Quantified {
                expr,
                op,
                all,
                subquery,
            } => {
                let (c, sub, coll) = self.quantified_parts(expr, subquery, cx)?;
                let Some(found) = sub.rows else {
                    let kind = SubKind::Quantified {
                        lhs: c,
                        op: *op,
                        all: *all,
                        coll,
                    };
                    return Ok((sub_plan(subquery, kind, sub.corr), bool_type()));
                };
                let values = found
                    .into_rows()?
                    .into_iter()
                    .map(|r| r.into_iter().next().unwrap_or(Datum::Null))
                    .collect();
                (
                    CExpr::Quantified(Box::new(c), *op, *all, values, coll),
                    bool_type(),
                )
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let (c, t) = self.compile(expr, cx)?;
                let (lo, lt) = self.compile(low, cx)?;
                let (hi, _) = self.compile(high, cx)?;
                let coll = pick_collation(&t, &lt, cx.collation());
                (
                    CExpr::Between(Box::new(c), Box::new(lo), Box::new(hi), *negated, coll),
                    bool_type(),
                )
            }
            Expr::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                let (c, t) = self.compile(expr, cx)?;
                let (p, pt) = self.compile(pattern, cx)?;
                let esc = match escape {
                    None => Some('\\'),
                    Some(e) => {
                        let (ec, _) = self.compile(e, cx)?;
                        match ec {
                            CExpr::Const(d) => d
                                .to_text()
                                .and_then(|b| String::from_utf8_lossy(&b).chars().next()),
                            _ => {
                                return Err(SqlError::new(ER_WRONG_ARGUMENTS, &[&"ESCAPE"]));
                            }
                        }
                    }
                };
                // An explicit COLLATE wins, as in comparisons; two columns under two
                // collations of one character set are refused (1267).
                let coll = match (&**expr, &**pattern) {
                    (Expr::Collate { .. }, _) => t.collation(),
                    (_, Expr::Collate { .. }) => pt.collation(),
                    _ if coercible(expr) && !coercible(pattern) => {
                        mixed_collations(&t, &pt, "like")?;
                        pick_collation(&pt, &t, cx.collation())
                    }
                    _ => {
                        mixed_collations(&t, &pt, "like")?;
                        pick_collation(&t, &pt, cx.collation())
                    }
                };
                let like = match p {
                    CExpr::Const(d) if !d.is_null() => match d.text() {
                        Some(pat) => {
                            let pat = LikePattern::new(&pat, esc, coll);
                            CExpr::LikeConst(Box::new(c), Arc::new(pat), *negated)
                        }
                        None => {
                            CExpr::Like(Box::new(c), Box::new(CExpr::Const(d)), esc, *negated, coll)
                        }
                    },
                    p => CExpr::Like(Box::new(c), Box::new(p), esc, *negated, coll),
                };
                (like, bool_type())
            }
            Expr::Function {
                name,
                args,
                distinct,
                star,
            } => return self.function(name, args, *distinct, *star, cx),
            Expr::Case {
                operand,
                whens,
                else_,
            } => {
                let mut coll = cx.collation();
                let op = match operand {
                    Some(o) => {
                        let (c, t) = self.compile(o, cx)?;
                        coll = t.collation();
                        Some(Box::new(c))
                    }
                    None => None,
                };
                let mut ws = Vec::with_capacity(whens.len());
                let mut rt: Option<EType> = None;
                let mut branch_types = Vec::with_capacity(whens.len() + 1);
                for (w, r) in whens {
                    let (wc, _) = self.compile(w, cx)?;
                    let (rc, t) = self.compile(r, cx)?;
                    rt = Some(merge_type(rt, t.clone()));
                    branch_types.push(t);
                    ws.push((wc, rc));
                }
                let el = match else_ {
                    Some(e) => {
                        let (c, t) = self.compile(e, cx)?;
                        rt = Some(merge_type(rt, t.clone()));
                        branch_types.push(t);
                        Some(Box::new(c))
                    }
                    None => None,
                };
                let rt = rt.unwrap_or(EType::Null);
                let case = CExpr::Case(op, ws, el, coll);
                (shown_as(case, &branch_types, &rt), rt)
            }
            Expr::Cast {
                expr,
                ty: CastType::Json,
            } => {
                let (c, t) = self.compile(expr, cx)?;
                let Some((f, t, _)) = super::json::lookup(
                    "cast_as_json",
                    &[t],
                    std::slice::from_ref(&c),
                    std::slice::from_ref(&**expr),
                ) else {
                    return Err(SqlError::new(
                        ER_SP_DOES_NOT_EXIST,
                        &[&"FUNCTION", &"cast_as_json"],
                    ));
                };
                (CExpr::Func(Func::Json(f), vec![c]), t)
            }
            Expr::Cast { expr, ty } => {
                let (c, _) = self.compile(expr, cx)?;
                (CExpr::Cast(Box::new(c), ty.clone()), cast_type(ty, cx)?)
            }
            Expr::JsonValue(j) => {
                use super::json::{JsonValueFn, OnValue};
                let (doc, _) = self.compile(&j.doc, cx)?;
                let (path, _) = self.compile(&j.path, cx)?;
                let mut on = |r: &OnJson| -> Result<OnValue, SqlError> {
                    Ok(match r {
                        OnJson::Null => OnValue::Null,
                        OnJson::Error => OnValue::Error,
                        OnJson::Default(e) => OnValue::Default(self.compile(e, cx)?.0),
                    })
                };
                let (on_empty, on_error) = (on(&j.on_empty)?, on(&j.on_error)?);
                // Without RETURNING: VARCHAR(512) in utf8mb4_bin (MySQL).
                let t = match &j.returning {
                    None => EType::Str {
                        coll: Collation::Utf8mb4Bin,
                    },
                    Some(CastType::Json) => super::json::json_type(),
                    Some(ty) => cast_type(ty, cx)?,
                };
                let f = JsonValueFn {
                    doc,
                    path,
                    to: j.returning.clone(),
                    on_empty,
                    on_error,
                };
                (CExpr::JsonValue(Box::new(f)), t)
            }
            Expr::Collate { expr, collation } => {
                let (c, _) = self.compile(expr, cx)?;
                let coll = types::collation_by_name(collation)
                    .ok_or_else(|| SqlError::new(ER_UNKNOWN_COLLATION, &[collation]))?;
                (c, EType::Str { coll })
            }
            Expr::Subquery(q) => {
                let sub = self.subquery(q, cx)?;
                let Some(found) = sub.rows else {
                    let t = sub.columns[0].ety.clone();
                    return Ok((sub_plan(q, SubKind::Scalar, sub.corr), t));
                };
                if found.len() > 1 {
                    return Err(SqlError::new(ER_SUBQUERY_NO_1_ROW, &[]));
                }
                let d = match found.into_rows()?.into_iter().next() {
                    None => Datum::Null,
                    Some(r) => r.into_iter().next().unwrap_or(Datum::Null),
                };
                let t = match &d {
                    Datum::Null => sub.columns[0].ety.clone(),
                    d => datum_type(d, cx.collation()),
                };
                (CExpr::Const(d), t)
            }
            Expr::Exists { subquery, negated } => {
                let sub = cx.subquery(subquery, (self.tables, self.hidden))?;
                let Some(found) = sub.rows else {
                    let kind = SubKind::Exists { negated: *negated };
                    self.note_refs(&sub.corr.refs);
                    return Ok((sub_plan(subquery, kind, sub.corr), bool_type()));
                };
                let v = (found.len() == 0) == *negated;
                (CExpr::Const(Datum::Int(i64::from(v))), bool_type())
            }
            Expr::GroupConcat {
                args,
                distinct,
                order_by,
                separator,
            } => return self.group_concat(args, *distinct, order_by, separator.as_deref(), cx),
            Expr::Window {
                func,
                partition_by,
                order_by,
                frame,
            } => return self.window(func, partition_by, order_by, frame.as_ref(), cx),
            Expr::Row(_) => return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&1])),
            Expr::Interval { .. } => {
                return Err(SqlError::parse("INTERVAL", 1));
            }
            Expr::Values(_) | Expr::Default => {
                return Err(SqlError::new(
                    ER_NOT_SUPPORTED_YET,
                    &[&"DEFAULT or VALUES() here"],
                ));
            }
        })
    }

    /// Row constructors: `(a, b) = (c, d)` (also <=> and <>), `(a, b) [NOT] IN ((..), ..)`
    /// and `(a, b) [NOT] IN (SELECT x, y ...)`, as the conjunctions and disjunctions of their
    /// columns' comparisons (MySQL's three-valued results). None: not a row form.
    fn row_form(&mut self, e: &Expr, cx: &mut dyn Context) -> Result<Option<CExpr>, SqlError> {
        let width = |e: &Expr| match e {
            Expr::Row(l) => l.len(),
            _ => 1,
        };
        match e {
            Expr::Binary {
                op: op @ (BinaryOp::Eq | BinaryOp::NullSafeEq | BinaryOp::Ne),
                left,
                right,
            } if matches!(**left, Expr::Row(_)) || matches!(**right, Expr::Row(_)) => {
                // (a, b) = (SELECT x, y ...): the subquery's one row (NULLs for none).
                let from_sub;
                let right: &Expr = match (&**left, &**right) {
                    (Expr::Row(l), Expr::Subquery(q)) => {
                        let sub = cx.subquery(q, (self.tables, self.hidden))?;
                        if sub.columns.len() != l.len() {
                            return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&l.len()]));
                        }
                        let Some(found) = sub.rows else {
                            return Err(SqlError::new(
                                ER_NOT_SUPPORTED_YET,
                                &[&"correlated row subqueries"],
                            ));
                        };
                        if found.len() > 1 {
                            return Err(SqlError::new(ER_SUBQUERY_NO_1_ROW, &[]));
                        }
                        let vals = found
                            .into_rows()?
                            .into_iter()
                            .next()
                            .unwrap_or_else(|| vec![Datum::Null; l.len()]);
                        from_sub = Expr::Row(vals.iter().map(datum_literal).collect());
                        &from_sub
                    }
                    _ => right,
                };
                let (Expr::Row(l), Expr::Row(r)) = (&**left, right) else {
                    return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&width(left)]));
                };
                if l.len() != r.len() {
                    return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&l.len()]));
                }
                let mut parts = Vec::with_capacity(l.len());
                for (a, b) in l.iter().zip(r) {
                    let (ac, at) = self.compile(a, cx)?;
                    let (bc, bt) = self.compile(b, cx)?;
                    let coll = pick_collation(&at, &bt, cx.collation());
                    parts.push(CExpr::Cmp(*op, Box::new(ac), Box::new(bc), coll));
                }
                Ok(Some(if *op == BinaryOp::Ne {
                    balanced(parts, CExpr::Or)
                } else {
                    balanced(parts, CExpr::And)
                }))
            }
            Expr::InList {
                expr,
                list,
                negated,
            } if matches!(**expr, Expr::Row(_)) => {
                let Expr::Row(l) = &**expr else {
                    return Ok(None);
                };
                let lhs = self.compile_row(l, cx)?;
                let mut alts = Vec::with_capacity(list.len());
                for x in list {
                    let Expr::Row(r) = x else {
                        return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&l.len()]));
                    };
                    if r.len() != l.len() {
                        return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&l.len()]));
                    }
                    let mut parts = Vec::with_capacity(r.len());
                    for ((lc, lt), b) in lhs.iter().zip(r) {
                        let (bc, bt) = self.compile(b, cx)?;
                        let coll = pick_collation(lt, &bt, cx.collation());
                        parts.push(CExpr::Cmp(
                            BinaryOp::Eq,
                            Box::new(lc.clone()),
                            Box::new(bc),
                            coll,
                        ));
                    }
                    alts.push(balanced(parts, CExpr::And));
                }
                let any = balanced(alts, CExpr::Or);
                Ok(Some(if *negated {
                    CExpr::Unary(UnaryOp::Not, Box::new(any))
                } else {
                    any
                }))
            }
            Expr::InSubquery {
                expr,
                subquery,
                negated,
            } if matches!(**expr, Expr::Row(_)) => {
                let Expr::Row(l) = &**expr else {
                    return Ok(None);
                };
                let lhs = self.compile_row(l, cx)?;
                if subquery.limit.is_some() {
                    return Err(SqlError::new(
                        ER_NOT_SUPPORTED_YET,
                        &[&"LIMIT & IN/ALL/ANY/SOME subquery"],
                    ));
                }
                let sub = cx.subquery(subquery, (self.tables, self.hidden))?;
                if sub.columns.len() != l.len() {
                    return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&l.len()]));
                }
                self.note_refs(&sub.corr.refs);
                let colls: Vec<Collation> = lhs
                    .iter()
                    .zip(&sub.columns)
                    .map(|((_, t), c)| pick_collation(t, &c.ety, cx.collation()))
                    .collect();
                let lhs: Vec<CExpr> = lhs.into_iter().map(|x| x.0).collect();
                let Some(found) = sub.rows else {
                    let kind = SubKind::InRow {
                        lhs,
                        negated: *negated,
                        colls,
                    };
                    return Ok(Some(sub_plan(subquery, kind, sub.corr)));
                };
                let alts: Vec<CExpr> = found
                    .into_rows()?
                    .into_iter()
                    .map(|r| {
                        let parts = r
                            .into_iter()
                            .zip(lhs.iter().zip(&colls))
                            .map(|(d, (lc, coll))| {
                                CExpr::Cmp(
                                    BinaryOp::Eq,
                                    Box::new(lc.clone()),
                                    Box::new(CExpr::Const(d)),
                                    *coll,
                                )
                            })
                            .collect();
                        balanced(parts, CExpr::And)
                    })
                    .collect();
                if alts.is_empty() {
                    return Ok(Some(CExpr::Const(Datum::Int(i64::from(*negated)))));
                }
                let any = balanced(alts, CExpr::Or);
                Ok(Some(if *negated {
                    CExpr::Unary(UnaryOp::Not, Box::new(any))
                } else {
                    any
                }))
            }
            _ => Ok(None),
        }
    }

    fn compile_row(
        &mut self,
        l: &[Expr],
        cx: &mut dyn Context,
    ) -> Result<Vec<(CExpr, EType)>, SqlError> {
        l.iter().map(|x| self.compile(x, cx)).collect()
    }

    /// Runs or prepares a one-column subquery (1241 otherwise).
    /// The left operand, the one-column subquery and the comparison's collation of
    /// `x [NOT] IN (SELECT ...)` and `x op ANY|ALL (SELECT ...)` (LIMIT there is error 1235,
    /// as in MySQL).
    fn quantified_parts(
        &mut self,
        expr: &Expr,
        subquery: &Select,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, SubResult, Collation), SqlError> {
        let (c, t) = self.compile(expr, cx)?;
        if subquery.limit.is_some() {
            return Err(SqlError::new(
                ER_NOT_SUPPORTED_YET,
                &[&"LIMIT & IN/ALL/ANY/SOME subquery"],
            ));
        }
        let sub = self.subquery(subquery, cx)?;
        mixed_collations(&t, &sub.columns[0].ety, "in")?;
        let coll = pick_collation(&t, &sub.columns[0].ety, cx.collation());
        Ok((c, sub, coll))
    }

    fn subquery(&mut self, q: &Select, cx: &mut dyn Context) -> Result<SubResult, SqlError> {
        let sub = cx.subquery(q, (self.tables, self.hidden))?;
        if sub.columns.len() != 1 {
            return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&1]));
        }
        self.note_refs(&sub.corr.refs);
        Ok(sub)
    }

    /// Outer columns a correlated subquery reads count as used here (ONLY_FULL_GROUP_BY).
    fn note_refs(&mut self, refs: &[usize]) {
        if !self.in_agg {
            self.bare_columns.extend_from_slice(refs);
        }
    }

    fn group_concat(
        &mut self,
        args: &[Expr],
        distinct: bool,
        order_by: &[OrderItem],
        separator: Option<&[u8]>,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        if self.aggs.is_none() || self.in_agg {
            return Err(SqlError::new(ER_INVALID_GROUP_FUNC_USE, &[]));
        }
        self.in_agg = true;
        let r = (|| {
            let mut cargs = Vec::with_capacity(args.len());
            let mut coll = cx.collation();
            for (i, a) in args.iter().enumerate() {
                let (c, t) = self.compile(a, cx)?;
                if i == 0 {
                    coll = t.collation();
                }
                cargs.push(c);
            }
            let mut order = Vec::with_capacity(order_by.len());
            for o in order_by {
                let (c, t) = self.compile(&o.expr, cx)?;
                let (c, t) = enum_as_number(c, t);
                order.push((c, o.desc, t.collation()));
            }
            Ok::<_, SqlError>((cargs, coll, order))
        })();
        self.in_agg = false;
        let (mut cargs, coll, order) = r?;
        let arg = if cargs.len() == 1 {
            cargs.pop()
        } else {
            Some(CExpr::Func(Func::Concat, cargs))
        };
        let aggs = self
            .aggs
            .as_mut()
            .ok_or_else(|| SqlError::new(ER_INVALID_GROUP_FUNC_USE, &[]))?;
        aggs.push(AggSpec {
            kind: AggKind::GroupConcat,
            arg,
            distinct,
            coll,
            order,
            separator: separator.map_or_else(|| b",".to_vec(), <[u8]>::to_vec),
        });
        Ok((
            CExpr::Agg(aggs.len() - 1),
            EType::Str {
                coll: cx.collation(),
            },
        ))
    }

    /// `func OVER (...)`: a window function, compiled into `windows` (window.rs).
    fn window(
        &mut self,
        func: &Expr,
        partition_by: &[Expr],
        order_by: &[OrderItem],
        frame: Option<&innoxide_sql::ast::WindowFrame>,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        use super::window::{Frame, WinFunc, WinSpec};
        let Expr::Function {
            name,
            args,
            distinct,
            star,
        } = func
        else {
            return Err(SqlError::parse("OVER", 1));
        };
        if self.windows.is_none() || self.in_window || self.in_agg {
            return Err(SqlError::new(ER_WINDOW_INVALID_WINDOW_FUNC_USE, &[name]));
        }
        let (wf, counts) = match (WinFunc::of(name), agg_kind(name)) {
            (Some(f), _) => f,
            (None, Some(kind))
                if !matches!(
                    kind,
                    AggKind::GroupConcat | AggKind::JsonArrayAgg | AggKind::JsonObjectAgg
                ) =>
            {
                if *distinct {
                    return Err(SqlError::new(
                        ER_NOT_SUPPORTED_YET,
                        &[&format!("<window function>({name}(DISTINCT ..))")],
                    ));
                }
                let agg = AggSpec {
                    kind,
                    arg: None,
                    distinct: false,
                    coll: Collation::Utf8mb40900AiCi,
                    order: Vec::new(),
                    separator: b",".to_vec(),
                };
                (WinFunc::Agg(agg), if *star { 0..=0 } else { 1..=1 })
            }
            _ => return Err(SqlError::parse(name, 1)),
        };
        if !counts.contains(&args.len()) {
            return Err(SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[name]));
        }
        self.in_window = true;
        let r = (|| {
            let mut cargs = Vec::with_capacity(args.len());
            let mut types = Vec::with_capacity(args.len());
            for a in args {
                let (c, t) = self.compile(a, cx)?;
                cargs.push(c);
                types.push(t);
            }
            let mut partition = Vec::with_capacity(partition_by.len());
            for p in partition_by {
                let (c, t) = self.compile(p, cx)?;
                partition.push((c, t.collation()));
            }
            let mut order = Vec::with_capacity(order_by.len());
            let mut order_types = Vec::with_capacity(order_by.len());
            for o in order_by {
                let (c, t) = self.compile(&o.expr, cx)?;
                let (c, t) = enum_as_number(c, t);
                order.push((c, o.desc, t.collation()));
                order_types.push(t);
            }
            Ok::<_, SqlError>((cargs, types, partition, order, order_types))
        })();
        self.in_window = false;
        let (cargs, types, partition, order, order_types) = r?;
        let exprs = cargs
            .iter()
            .chain(partition.iter().map(|p| &p.0))
            .chain(order.iter().map(|o| &o.0));
        if exprs.clone().any(CExpr::has_sub) {
            return Err(SqlError::new(
                ER_NOT_SUPPORTED_YET,
                &[&"subqueries in window functions"],
            ));
        }
        let arg_type = types
            .first()
            .cloned()
            .unwrap_or(EType::Int { unsigned: false });
        let (wf, ty) = match wf {
            WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile => {
                (wf, EType::Int { unsigned: true })
            }
            WinFunc::PercentRank | WinFunc::CumeDist => (wf, EType::Double),
            WinFunc::Agg(mut a) => {
                a.coll = arg_type.collation();
                let ty = agg_type(a.kind, &arg_type, cx);
                (WinFunc::Agg(a), ty)
            }
            other => (other, arg_type),
        };
        let windows = self
            .windows
            .as_mut()
            .ok_or_else(|| SqlError::new(ER_WINDOW_INVALID_WINDOW_FUNC_USE, &[name]))?;
        // RANGE with an offset measures along one numeric or temporal ORDER BY value (3587).
        if let Some(f) = frame {
            let by_value = |b: &FrameBound| {
                matches!(
                    b,
                    FrameBound::ValuePreceding(_) | FrameBound::ValueFollowing(_)
                )
            };
            let numeric_or_temporal = order.len() == 1 && !order_types[0].is_string();
            if (by_value(&f.start) || by_value(&f.end)) && !numeric_or_temporal {
                return Err(SqlError::new(
                    ER_WINDOW_RANGE_FRAME_ORDER_TYPE,
                    &[&"<unnamed window>"],
                ));
            }
        }
        windows.push(WinSpec {
            func: wf,
            args: cargs,
            partition,
            order,
            frame: frame.map(|f| Frame {
                rows: f.rows,
                start: f.start.clone(),
                end: f.end.clone(),
            }),
        });
        Ok((CExpr::Win(windows.len() - 1), ty))
    }

    fn function(
        &mut self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        star: bool,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        // ANY_VALUE's argument may read columns the grouping does not fix (MySQL: it is
        // exempt from ONLY_FULL_GROUP_BY).
        let bare = self.bare_columns.len();
        let r = self.function_call(name, args, distinct, star, cx);
        if name == "any_value" {
            self.bare_columns.truncate(bare);
        }
        r
    }

    fn function_call(
        &mut self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        star: bool,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        if name == "default" {
            return self.default_of_column(args, cx);
        }
        let agg = agg_kind(name);
        if let Some(kind) = agg {
            if self.aggs.is_none() || self.in_agg {
                return Err(SqlError::new(ER_INVALID_GROUP_FUNC_USE, &[]));
            }
            let (arg, at) = if star {
                (None, EType::Int { unsigned: false })
            } else if let Some((f, n)) = match kind {
                AggKind::JsonArrayAgg => Some(("json_array", 1)),
                AggKind::JsonObjectAgg => Some(("json_object", 2)),
                _ => None,
            } {
                if args.len() != n || distinct {
                    return Err(SqlError::parse(name, 1));
                }
                let row_value = Expr::Function {
                    name: f.to_string(),
                    args: args.to_vec(),
                    distinct: false,
                    star: false,
                };
                self.in_agg = true;
                let r = self.compile(&row_value, cx);
                self.in_agg = false;
                let (c, t) = r?;
                (Some(c), t)
            } else {
                let Some(a) = args.first() else {
                    return Err(SqlError::parse(name, 1));
                };
                self.in_agg = true;
                let r = self.compile(a, cx);
                self.in_agg = false;
                let (c, t) = r?;
                (Some(c), t)
            };
            let ty = agg_type(kind, &at, cx);
            let coll = at.collation();
            let aggs = self
                .aggs
                .as_mut()
                .ok_or_else(|| SqlError::new(ER_INVALID_GROUP_FUNC_USE, &[]))?;
            aggs.push(AggSpec {
                kind,
                arg,
                distinct,
                coll,
                order: Vec::new(),
                separator: b",".to_vec(),
            });
            return Ok((CExpr::Agg(aggs.len() - 1), ty));
        }
        // Functions answered from the session (constant for the statement).
        if matches!(
            name,
            "database"
                | "schema"
                | "version"
                | "user"
                | "current_user"
                | "current_role"
                | "session_user"
                | "system_user"
                | "connection_id"
                | "last_insert_id"
                | "found_rows"
                | "row_count"
                | "charset"
                | "collation"
        ) && (args.is_empty() || name == "last_insert_id")
        {
            if name == "last_insert_id" && !args.is_empty() {
                return Err(SqlError::new(
                    ER_NOT_SUPPORTED_YET,
                    &[&"LAST_INSERT_ID(expr)"],
                ));
            }
            let d = cx.info(name)?;
            let t = datum_type(&d, cx.collation());
            return Ok((CExpr::Const(d), t));
        }
        // CHARSET(x) / COLLATION(x): of the argument's type ("binary" for a non-string); a
        // literal has the connection's collation or its introducer's charset.
        if let ("charset" | "collation", [a]) = (name, args) {
            let (_, t) = self.compile(a, cx)?;
            let info = match a {
                Expr::Literal(Literal::String { charset: None, .. }) => {
                    let c = cx.sys_var(VarScope::Session, "collation_connection")?;
                    types::collation_info(&String::from_utf8_lossy(&c.to_bytes()))
                }
                Expr::Literal(Literal::String {
                    charset: Some(cs), ..
                }) => types::default_collation(cs),
                _ => types::collation_by_id(t.collation().id()),
            };
            let v = match (name, info) {
                ("charset", Some(i)) => i.charset,
                (_, Some(i)) => i.name,
                _ => "binary",
            };
            return Ok((
                CExpr::Const(Datum::Bytes(v.as_bytes().to_vec())),
                EType::Str {
                    coll: Collation::Utf8mb4GeneralCi,
                },
            ));
        }
        // The clock functions return the statement's time (constant within it, as MySQL's).
        let clock = match name {
            // In the session's time zone; the UTC_ forms in UTC.
            "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate" => Some("now"),
            "utc_timestamp" => Some("utc_now"),
            "curdate" | "current_date" => Some("curdate"),
            "utc_date" => Some("utc_date"),
            "curtime" | "current_time" => Some("curtime"),
            "utc_time" => Some("utc_time"),
            "unix_timestamp" if args.is_empty() => Some("unix_timestamp"),
            _ => None,
        };
        if let Some(what) = clock {
            let fsp = match args {
                [] => 0,
                [Expr::Literal(Literal::Number(n))] if !what.ends_with("date") => {
                    match n.parse::<u8>() {
                        Ok(f) if f <= 6 => f,
                        _ => return Err(SqlError::new(ER_TOO_BIG_PRECISION, &[&n, &name, &6])),
                    }
                }
                _ => return Err(SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[&name])),
            };
            return Ok(match cx.info(what)? {
                Datum::DateTime(dt) => {
                    let dt = dt.with_fsp(fsp, true).unwrap_or(dt);
                    (CExpr::Const(Datum::DateTime(dt)), EType::DateTime { fsp })
                }
                Datum::Time(t) => (
                    CExpr::Const(Datum::Time(t.with_fsp(fsp, true))),
                    EType::Time { fsp },
                ),
                d => {
                    let t = datum_type(&d, cx.collation());
                    (CExpr::Const(d), t)
                }
            });
        }
        // TIMESTAMPDIFF(unit, a, b) and TIMESTAMPADD(unit, n, t): the unit is a bare word.
        if let (
            "timestampdiff" | "timestampadd",
            [Expr::Column {
                table: None,
                name: u,
            }, rest @ ..],
        ) = (name, args)
        {
            let Some(unit) = builtins::unit_of(u) else {
                return Err(SqlError::parse(u, 1));
            };
            if rest.len() != 2 {
                return Err(SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[&name]));
            }
            let (a, _) = self.compile(&rest[0], cx)?;
            let (b, tb) = self.compile(&rest[1], cx)?;
            return Ok(if name == "timestampdiff" {
                let (f, t) = builtins::timestamp_diff(unit);
                (CExpr::Func(Func::B(f), vec![a, b]), t)
            } else {
                let t = date_add_type(Some(&tb), unit, cx.collation());
                (CExpr::Func(Func::DateAdd(unit), vec![b, a]), t)
            });
        }
        let mut cargs = Vec::with_capacity(args.len());
        let mut types_ = Vec::with_capacity(args.len());
        let mut unit = None;
        for a in args {
            let a = match a {
                Expr::Interval { value, unit: u } => {
                    unit = Some(*u);
                    value
                }
                a => a,
            };
            let (c, t) = self.compile(a, cx)?;
            cargs.push(c);
            types_.push(t);
        }
        // Functions of a string's bytes see a latin1 value's latin1 bytes (values are held
        // in UTF-8): LENGTH(latin1 'é') is 1, HEX of it E9, as in MySQL.
        if matches!(
            name,
            "length"
                | "octet_length"
                | "bit_length"
                | "hex"
                | "md5"
                | "sha1"
                | "sha"
                | "sha2"
                | "crc32"
                | "to_base64"
                | "ascii"
                | "ord"
        ) {
            if let (Some(c), Some(t)) = (cargs.first_mut(), types_.first()) {
                if t.is_string()
                    && matches!(
                        t.collation(),
                        Collation::Latin1SwedishCi | Collation::Latin1Bin
                    )
                {
                    let inner = std::mem::replace(c, CExpr::Const(Datum::Null));
                    *c = CExpr::Func(Func::Latin1Bytes, vec![inner]);
                }
            }
        }
        let coll = cx.collation();
        let s = EType::Str { coll };
        // E3: a string made from string arguments takes their collation (a column's, as
        // MySQL derives it), so comparing it with a literal compares under that one.
        let derived = EType::Str {
            coll: args_collation(args, &types_, coll),
        };
        let int = EType::Int { unsigned: false };
        let (f, t, n): (Func, EType, std::ops::RangeInclusive<usize>) = match name {
            "concat" => (Func::Concat, derived, 1..=usize::MAX),
            "concat_ws" => (Func::ConcatWs, derived, 2..=usize::MAX),
            "lower" | "lcase" => (Func::Lower, derived, 1..=1),
            "upper" | "ucase" => (Func::Upper, derived, 1..=1),
            "length" | "octet_length" => (Func::Length, int, 1..=1),
            "char_length" | "character_length" => (Func::CharLength, int, 1..=1),
            "substring" | "substr" | "mid" => (Func::Substring, derived, 2..=3),
            "left" => (Func::Left, derived, 2..=2),
            "right" => (Func::Right, derived, 2..=2),
            "trim" => (Func::Trim, derived, 1..=2),
            "ltrim" => (Func::Ltrim, derived, 1..=2),
            "rtrim" => (Func::Rtrim, derived, 1..=2),
            "replace" => (Func::Replace, derived, 3..=3),
            "repeat" => (Func::Repeat, derived, 2..=2),
            "reverse" => (Func::Reverse, derived, 1..=1),
            "lpad" => (Func::Lpad, derived, 3..=3),
            "rpad" => (Func::Rpad, derived, 3..=3),
            "instr" => (Func::Instr, int, 2..=2),
            "locate" | "position" => (Func::Locate, int, 2..=3),
            "hex" => (Func::Hex, s, 1..=1),
            "ifnull" => (
                Func::IfNull,
                merge_type(
                    types_.first().cloned(),
                    types_.get(1).cloned().unwrap_or(EType::Null),
                ),
                2..=2,
            ),
            "coalesce" => (
                Func::Coalesce,
                types_
                    .iter()
                    .cloned()
                    .fold(EType::Null, |a, b| merge_type(Some(a), b)),
                1..=usize::MAX,
            ),
            "if" => (
                Func::If,
                merge_type(
                    types_.get(1).cloned(),
                    types_.get(2).cloned().unwrap_or(EType::Null),
                ),
                3..=3,
            ),
            "nullif" => (
                Func::NullIf,
                types_.first().cloned().unwrap_or(EType::Null),
                2..=2,
            ),
            "abs" => (
                Func::Abs,
                match types_.first().map(numeric_type) {
                    Some(EType::Double) => double_with(types_.first().map_or(0, decimals_of)),
                    t => t.unwrap_or(EType::Double),
                },
                1..=1,
            ),
            // Of a DOUBLE: as many fractional digits as a constant second argument asks.
            "round" | "truncate" => (
                if name == "round" {
                    Func::Round
                } else {
                    Func::Truncate
                },
                match types_.first().map(numeric_type) {
                    Some(EType::Double) => match cargs.get(1) {
                        None => double_with(0),
                        Some(CExpr::Const(Datum::Int(d))) => double_with((*d).clamp(0, 30) as u8),
                        Some(CExpr::Const(Datum::UInt(d))) => double_with((*d).min(30) as u8),
                        Some(_) => EType::Double,
                    },
                    t => t.unwrap_or(EType::Double),
                },
                if name == "round" { 1..=2 } else { 2..=2 },
            ),
            // FLOOR/CEIL of a DOUBLE (or a string) is a DOUBLE, of an exact value an integer.
            "floor" | "ceil" | "ceiling" => (
                if name == "floor" {
                    Func::Floor
                } else {
                    Func::Ceil
                },
                match types_.first().map(numeric_type) {
                    Some(EType::Double) => EType::Double,
                    _ => int,
                },
                1..=1,
            ),
            "mod" => (
                Func::Mod,
                types_.first().map(numeric_type).unwrap_or(EType::Double),
                2..=2,
            ),
            "sign" => (Func::Sign, int, 1..=1),
            "sqrt" => (Func::Sqrt, EType::Double, 1..=1),
            "pow" | "power" => (Func::Pow, EType::Double, 2..=2),
            "greatest" => (
                Func::Greatest,
                types_
                    .iter()
                    .cloned()
                    .fold(EType::Null, |a, b| merge_type(Some(a), b)),
                2..=usize::MAX,
            ),
            "least" => (
                Func::Least,
                types_
                    .iter()
                    .cloned()
                    .fold(EType::Null, |a, b| merge_type(Some(a), b)),
                2..=usize::MAX,
            ),
            "rand" => (Func::Rand, EType::Double, 0..=1),
            "unix_timestamp" => (Func::UnixTimestamp, int, 1..=1),
            "date" => (Func::Date, EType::Date, 1..=1),
            "year" => (Func::Year, int, 1..=1),
            "month" => (Func::Month, int, 1..=1),
            "day" | "dayofmonth" => (Func::Day, int, 1..=1),
            "date_add" | "adddate" | "date_sub" | "subdate" => {
                let unit = unit.unwrap_or(IntervalUnit::Day);
                let f = if matches!(name, "date_add" | "adddate") {
                    Func::DateAdd(unit)
                } else {
                    Func::DateSub(unit)
                };
                (f, date_add_type(types_.first(), unit, coll), 2..=2)
            }
            "datediff" => (Func::DateDiff, int, 2..=2),
            "md5" => (Func::Md5, s, 1..=1),
            _ => match builtins::lookup(
                name,
                &types_,
                (coll, args_collation(args, &types_, coll)),
                &cargs,
            ) {
                Some((b, t, n)) => (Func::B(b), t, n),
                None => match super::json::lookup(name, &types_, &cargs, args) {
                    Some((j, t, n)) => (Func::Json(j), t, n),
                    None => return Err(SqlError::new(ER_SP_DOES_NOT_EXIST, &[&"FUNCTION", &name])),
                },
            },
        };
        if !n.contains(&cargs.len()) {
            return Err(SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[&name]));
        }
        // The value of one of several arguments, typed by all of them.
        let branches: &[EType] = match f {
            Func::If => types_.get(1..).unwrap_or_default(),
            Func::IfNull | Func::Coalesce => &types_,
            _ => &[],
        };
        if !branches.is_empty() {
            let c = shown_as(CExpr::Func(f, cargs), branches, &t);
            return Ok((c, t));
        }
        Ok((CExpr::Func(f, cargs), t))
    }
}

/// A value as a literal of the same text (a row subquery's value compared column by column).
fn datum_literal(d: &Datum) -> Expr {
    match d {
        Datum::Null => Expr::Literal(Literal::Null),
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Double(_) => Expr::Literal(
            Literal::Number(String::from_utf8_lossy(&d.to_text().unwrap_or_default()).into_owned()),
        ),
        other => Expr::Literal(Literal::String {
            bytes: other.to_text().unwrap_or_default(),
            charset: None,
        }),
    }
}

/// `parts` joined by `join` (AND or OR) as a balanced tree, so evaluation recurses only
/// log2(n) deep. Never called with no parts by the row forms (a row has columns).
fn balanced(mut parts: Vec<CExpr>, join: fn(Box<CExpr>, Box<CExpr>) -> CExpr) -> CExpr {
    if parts.len() <= 1 {
        return parts.pop().unwrap_or(CExpr::Const(Datum::Null));
    }
    let right = parts.split_off(parts.len() / 2);
    join(
        Box::new(balanced(parts, join)),
        Box::new(balanced(right, join)),
    )
}

fn sub_plan(q: &Select, kind: SubKind, corr: Correlation) -> CExpr {
    CExpr::Sub(Arc::new(SubPlan {
        query: q.clone(),
        kind,
        outer: corr.outer,
        refs: corr.refs,
        deep: corr.deep,
        slot: Mutex::new(None),
        cache: Mutex::new(SubCache::default()),
    }))
}

/// The type of DATE_ADD/DATE_SUB as MySQL types it: DATE for a DATE plus days or more,
/// a string for a string argument (its value is then a DATE or a DATETIME), else DATETIME.
fn date_add_type(first: Option<&EType>, unit: IntervalUnit, coll: Collation) -> EType {
    let is_date = match first {
        Some(EType::Date) => true,
        Some(EType::Column(c)) => c.data_type() == "date",
        _ => false,
    };
    match first {
        _ if is_date && date_unit(unit) => EType::Date,
        Some(EType::Str { .. }) => EType::Str { coll },
        Some(EType::Column(c)) if c.is_string() => EType::Str { coll },
        _ => EType::DateTime { fsp: 0 },
    }
}

/// Units that leave the time of day alone (DATE_ADD of a DATE stays a DATE).
pub fn date_unit(unit: IntervalUnit) -> bool {
    matches!(
        unit,
        IntervalUnit::Day
            | IntervalUnit::Week
            | IntervalUnit::Month
            | IntervalUnit::Quarter
            | IntervalUnit::Year
    )
}

/// An ENUM column in arithmetic is its index (`e + 0`), as in MySQL (and sorts by it).
pub fn enum_as_number(c: CExpr, t: EType) -> (CExpr, EType) {
    match &t {
        EType::Column(ty) if ty.data_type() == "enum" => {
            let mut args = vec![c];
            args.extend(
                ty.values
                    .iter()
                    .map(|v| CExpr::Const(Datum::Bytes(v.clone().into_bytes()))),
            );
            (
                CExpr::Func(Func::EnumIndex, args),
                EType::Int { unsigned: true },
            )
        }
        _ => (c, t),
    }
}

fn bool_type() -> EType {
    EType::Int { unsigned: false }
}

fn literal(l: &Literal, coll: Collation) -> (CExpr, EType) {
    match l {
        Literal::Null => (CExpr::Const(Datum::Null), EType::Null),
        Literal::Bool(b) => (CExpr::Const(Datum::Int(i64::from(*b))), bool_type()),
        Literal::Number(n) => {
            let d = Datum::from_literal_number(n);
            let t = datum_type(&d, coll);
            (CExpr::Const(d), t)
        }
        Literal::String { bytes, charset } => {
            let c = if charset.as_deref().is_some_and(|c| {
                c.eq_ignore_ascii_case("_binary") || c.eq_ignore_ascii_case("binary")
            }) {
                Collation::Binary
            } else {
                coll
            };
            (
                CExpr::Const(Datum::Bytes(bytes.clone())),
                EType::Str { coll: c },
            )
        }
        Literal::Hex(b) => (
            CExpr::Const(Datum::Bytes(b.clone())),
            EType::Str {
                coll: Collation::Binary,
            },
        ),
    }
}

/// The static type of a constant.
pub fn datum_type(d: &Datum, coll: Collation) -> EType {
    match d {
        Datum::Null => EType::Null,
        Datum::Int(_) => EType::Int { unsigned: false },
        Datum::UInt(_) => EType::Int { unsigned: true },
        Datum::Double(_) => EType::Double,
        Datum::Decimal(x) => EType::Decimal { scale: x.scale() },
        Datum::Bytes(_) => EType::Str { coll },
        Datum::Date(_) => EType::Date,
        Datum::DateTime(_) => EType::DateTime { fsp: 0 },
        Datum::Time(_) => EType::Time { fsp: 0 },
    }
}

fn numeric_type(t: &EType) -> EType {
    match t {
        EType::Int { .. } | EType::Decimal { .. } | EType::Double => t.clone(),
        EType::Column(c) if c.is_integer() => EType::Int {
            unsigned: c.unsigned(),
        },
        EType::Column(c) if c.is_decimal() => EType::Decimal {
            scale: c.decimals(),
        },
        EType::Null => EType::Null,
        _ => EType::Double,
    }
}

/// The fractional digits MySQL gives an expression of type `t` (NOT_FIXED_DEC: as many as
/// each value needs).
fn decimals_of(t: &EType) -> u8 {
    match t {
        EType::Int { .. } | EType::Null | EType::Date => 0,
        EType::Decimal { scale } => *scale,
        EType::DateTime { fsp } | EType::Time { fsp } => *fsp,
        EType::Column(c) => c.decimals(),
        EType::Double | EType::Str { .. } => types::NOT_FIXED_DEC,
    }
}

/// A DOUBLE with `dec` fixed fractional digits, sent with exactly that many as MySQL does
/// (PI() is 3.141593, ROUND(x, 2) of a DOUBLE 1.00, a DOUBLE(10,2) column plus 1 2.00): typed
/// as a DOUBLE(M,D) column so the result metadata and the text rows carry them; a plain
/// DOUBLE when `dec` is NOT_FIXED_DEC or more.
pub(crate) fn double_with(dec: u8) -> EType {
    if dec >= types::NOT_FIXED_DEC {
        return EType::Double;
    }
    let mut t = SqlType::simple(innoxide_sql::ast::TypeName::Double);
    t.length = Some(u32::from(dec) + 17);
    t.scale = Some(dec);
    EType::Column(Box::new(t))
}

/// A DOUBLE result keeps the most fractional digits of its operands (division adds
/// div_precision_increment, 4); any other result type is `arith_base`'s.
fn arith_type(op: BinaryOp, l: &EType, r: &EType) -> EType {
    match arith_base(op, l, r) {
        EType::Double => {
            let dec = decimals_of(l).max(decimals_of(r));
            double_with(if op == BinaryOp::Div {
                dec.saturating_add(4)
            } else {
                dec
            })
        }
        t => t,
    }
}

fn arith_base(op: BinaryOp, l: &EType, r: &EType) -> EType {
    let (l, r) = (numeric_type(l), numeric_type(r));
    match (op, &l, &r) {
        (_, EType::Double, _) | (_, _, EType::Double) => EType::Double,
        (BinaryOp::IntDiv, _, _) => EType::Int { unsigned: false },
        (BinaryOp::Div, _, _) => {
            let s = match l {
                EType::Decimal { scale } => scale,
                _ => 0,
            };
            EType::Decimal { scale: s + 4 }
        }
        (_, EType::Decimal { scale: a }, EType::Decimal { scale: b }) => EType::Decimal {
            scale: if op == BinaryOp::Mul {
                a + b
            } else {
                *a.max(b)
            },
        },
        (_, EType::Decimal { scale }, _) | (_, _, EType::Decimal { scale }) => {
            EType::Decimal { scale: *scale }
        }
        (_, EType::Int { unsigned: a }, EType::Int { unsigned: b }) => {
            EType::Int { unsigned: *a || *b }
        }
        _ => EType::Double,
    }
}

/// The type of CASE, IF, IFNULL or COALESCE over branches of types `a` (so far) and `b`: as a
/// UNION's column (MySQL aggregates both alike).
fn merge_type(a: Option<EType>, b: EType) -> EType {
    match a {
        None => b,
        Some(a) => union_type(&a, &b),
    }
}

/// `c`, an expression whose value is one of branches of types `branches` (CASE, IF, IFNULL,
/// COALESCE), made to show its value as its type `rt` does when a branch's kind differs: with
/// the DECIMAL scale of the widest, as a DOUBLE, or as a string (MySQL: `CASE ... THEN 2 ELSE
/// 1.5 END` is 2.0).
fn shown_as(c: CExpr, branches: &[EType], rt: &EType) -> CExpr {
    let kind = value_type(rt);
    if branches
        .iter()
        .all(|b| *b == EType::Null || value_type(b) == kind)
    {
        return c;
    }
    match shown_cast(rt) {
        Some(to) => CExpr::Cast(Box::new(c), to),
        None => c,
    }
}

/// `t` without a column's declared type: the kind of value it is (for `union_type`).
fn value_type(t: &EType) -> EType {
    use innoxide_sql::ast::TypeName as T;
    let EType::Column(c) = t else {
        return t.clone();
    };
    match c.name {
        _ if c.is_string() || c.name == T::Json || c.name == T::Bit => EType::Str {
            coll: c.collation(),
        },
        T::Date => EType::Date,
        T::DateTime | T::Timestamp => EType::DateTime { fsp: c.fsp() },
        T::Time => EType::Time { fsp: c.fsp() },
        _ => numeric_type(t),
    }
}

/// The type of a UNION's column whose parts give types `a` and `b` (MySQL's type
/// aggregation): the same type stays; a string makes a string; temporal types of the date
/// family make a DATETIME, other mixes with a temporal type a string; numbers make the
/// widest number (a signed and an unsigned integer a DECIMAL, which holds both).
pub(crate) fn union_type(a: &EType, b: &EType) -> EType {
    let (x, y) = (value_type(a), value_type(b));
    match (&x, &y) {
        _ if a == b => a.clone(),
        (EType::Null, _) => b.clone(),
        (_, EType::Null) => a.clone(),
        _ if x == y => x,
        _ if x.is_string() || y.is_string() => EType::Str {
            coll: pick_collation(a, b, Collation::Utf8mb40900AiCi),
        },
        (EType::Date | EType::DateTime { .. }, EType::Date | EType::DateTime { .. }) => {
            EType::DateTime {
                fsp: decimals_of(&x).max(decimals_of(&y)),
            }
        }
        (EType::Time { .. }, EType::Time { .. }) => EType::Time {
            fsp: decimals_of(&x).max(decimals_of(&y)),
        },
        (EType::Date | EType::DateTime { .. } | EType::Time { .. }, _)
        | (_, EType::Date | EType::DateTime { .. } | EType::Time { .. }) => EType::Str {
            coll: Collation::Utf8mb40900AiCi,
        },
        (EType::Int { unsigned: u }, EType::Int { unsigned: v }) if u != v => {
            EType::Decimal { scale: 0 }
        }
        _ => arith_type(BinaryOp::Add, &x, &y),
    }
}

/// The conversion that shows a value as type `to` does, when a value of another type may
/// stand for it (a UNION part's, a CASE branch's): to the DECIMAL's scale, to a DOUBLE, to
/// text, or (a DATE) to a DATETIME. None: the value shows as it is.
fn shown_cast(to: &EType) -> Option<CastType> {
    Some(match value_type(to) {
        EType::Decimal { scale } => CastType::Decimal(Some(65), Some(u64::from(scale))),
        EType::Double => CastType::Double,
        EType::Str { .. } => CastType::Char(None, None),
        EType::DateTime { fsp } => CastType::DateTime(Some(u64::from(fsp))),
        _ => return None,
    })
}

/// Value `d` of a part of a UNION as its column's type `to` shows it (`union_type`).
pub(crate) fn conform(d: Datum, to: &EType, w: &mut Warnings) -> Result<Datum, SqlError> {
    match shown_cast(to) {
        Some(c) if !d.is_null() => types::cast(&d, &c, w),
        _ => Ok(d),
    }
}

/// Error 1267 when `a` and `b` are columns of one character set under two collations, neither
/// a binary one: of the same coercibility, MySQL can pick neither (`pick_collation`), as
/// between a utf8mb4_general_ci column and a utf8mb4_0900_ai_ci one.
fn mixed_collations(a: &EType, b: &EType, op: &str) -> Result<(), SqlError> {
    let (EType::Column(x), EType::Column(y)) = (a, b) else {
        return Ok(());
    };
    if !x.is_string() || !y.is_string() || x.charset_id() == y.charset_id() {
        return Ok(());
    }
    let (Some(cx), Some(cy)) = (
        types::collation_by_id(x.charset_id()),
        types::collation_by_id(y.charset_id()),
    ) else {
        return Ok(());
    };
    let binary = |c: &types::CollationInfo| c.name.ends_with("_bin") || c.name == "binary";
    if cx.charset != cy.charset || binary(cx) || binary(cy) {
        return Ok(());
    }
    let args: [&dyn std::fmt::Display; 5] = [&cx.name, &"IMPLICIT", &cy.name, &"IMPLICIT", &op];
    Err(SqlError::new(ER_CANT_AGGREGATE_2COLLATIONS, &args))
}

/// The collation the string arguments of a function compare under (FIELD, FIND_IN_SET,
/// STRCMP): an explicit COLLATE's, else a column's (a _bin one's among columns), else a
/// string's, else `default` (MySQL's collation aggregation by coercibility, E3).
fn args_collation(args: &[Expr], types: &[EType], default: Collation) -> Collation {
    if let Some(i) = args.iter().position(|a| matches!(a, Expr::Collate { .. })) {
        return types.get(i).map_or(default, EType::collation);
    }
    // Literals and parameters last: they yield to any other string (their coercibility).
    let (others, literals): (Vec<usize>, Vec<usize>) =
        (0..types.len()).partition(|&i| !args.get(i).is_some_and(coercible));
    (others.iter().chain(&literals))
        .map(|&i| &types[i])
        .fold(None::<&EType>, |acc, t| match acc {
            None if t.is_string() => Some(t),
            Some(a) if pick_collation(a, t, default) != a.collation() => Some(t),
            acc => acc,
        })
        .map_or(default, EType::collation)
}

/// A literal or a parameter: its collation yields to any other operand's (E3).
fn coercible(e: &Expr) -> bool {
    matches!(e, Expr::Literal(_) | Expr::Param(_))
}

fn pick_collation(a: &EType, b: &EType, default: Collation) -> Collation {
    let implicit = |t: &EType| matches!(t, EType::Column(_)) && t.is_string();
    let bin = |c: Collation| {
        matches!(
            c,
            Collation::Binary
                | Collation::Latin1Bin
                | Collation::Utf8mb4Bin
                | Collation::Utf8mb40900Bin
        )
    };
    if implicit(a) && implicit(b) && bin(b.collation()) && !bin(a.collation()) {
        // Two columns, one of a _bin collation: that one (MySQL's rule for the same
        // coercibility), whichever side it is on.
        b.collation()
    } else if implicit(a) {
        a.collation()
    } else if implicit(b) {
        b.collation()
    } else if a.is_string() {
        a.collation()
    } else if b.is_string() {
        b.collation()
    } else {
        default
    }
}

/// What evaluation reads.
pub struct Env<'a> {
    pub row: &'a [Datum],
    pub aggs: &'a [Datum],
    /// The row's window function values.
    pub wins: &'a [Datum],
    pub params: &'a [Datum],
    pub mode: types::SqlMode,
}

impl<'a> Env<'a> {
    /// A row without aggregates.
    pub fn new(row: &'a [Datum], params: &'a [Datum], mode: types::SqlMode) -> Self {
        Env {
            row,
            aggs: &[],
            wins: &[],
            params,
            mode,
        }
    }
}

impl CExpr {
    /// `eval`, without copying a constant's, a column's or a parameter's value.
    pub fn eval_cow<'e>(
        &'e self,
        env: &'e Env<'_>,
        w: &mut Warnings,
    ) -> Result<Cow<'e, Datum>, SqlError> {
        const NULL: &Datum = &Datum::Null;
        Ok(match self {
            CExpr::Const(d) => Cow::Borrowed(d),
            CExpr::Col(i) => Cow::Borrowed(env.row.get(*i).unwrap_or(NULL)),
            CExpr::Param(i) => Cow::Borrowed(env.params.get(*i).unwrap_or(NULL)),
            _ => Cow::Owned(self.eval(env, w)?),
        })
    }

    /// The value of an expression of signed integers (columns, constants and parameters that
    /// hold one, and + - * of them that do not overflow); None for any other, whose value
    /// `eval` then makes. Nothing is made on the way: the value comes back in registers.
    pub(crate) fn int_fast(&self, env: &Env<'_>) -> Option<i64> {
        let of = |d: Option<&Datum>| match d {
            Some(Datum::Int(i)) => Some(*i),
            _ => None,
        };
        match self {
            CExpr::Const(d) => of(Some(d)),
            CExpr::Col(i) => of(env.row.get(*i)),
            CExpr::Param(i) => of(env.params.get(*i)),
            CExpr::Arith(op, a, b) => {
                let (x, y) = (a.int_fast(env)?, b.int_fast(env)?);
                match op {
                    BinaryOp::Add => x.checked_add(y),
                    BinaryOp::Sub => x.checked_sub(y),
                    BinaryOp::Mul => x.checked_mul(y),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The truth of the expression's value (None: NULL), as `eval(..)?.truth()` gives it;
    /// comparisons of integers and AND/OR of them make no value.
    pub fn truth(&self, env: &Env<'_>, w: &mut Warnings) -> Result<Option<bool>, SqlError> {
        match self {
            CExpr::Cmp(op, a, b, coll) if *op != BinaryOp::NullSafeEq => {
                if let (Some(p), Some(q)) = (a.int_fast(env), b.int_fast(env)) {
                    return Ok(Some(cmp_holds(*op, p.cmp(&q))));
                }
                let (x, y) = (a.eval_cow(env, w)?, b.eval_cow(env, w)?);
                return Ok(x.compare(&y, *coll).map(|o| cmp_holds(*op, o)));
            }
            CExpr::And(a, b) => {
                let x = a.truth(env, w)?;
                if x == Some(false) {
                    return Ok(x);
                }
                return Ok(match (x, b.truth(env, w)?) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                });
            }
            CExpr::Or(a, b) => {
                let x = a.truth(env, w)?;
                if x == Some(true) {
                    return Ok(x);
                }
                return Ok(match (x, b.truth(env, w)?) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                });
            }
            _ => {}
        }
        Ok(self.eval(env, w)?.truth())
    }

    pub fn eval(&self, env: &Env<'_>, w: &mut Warnings) -> Result<Datum, SqlError> {
        Ok(match self {
            CExpr::Const(d) => d.clone(),
            CExpr::Col(i) => env.row.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Param(i) => env.params.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Agg(i) => env.aggs.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Win(i) => env.wins.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Unary(op, e) => {
                let v = e.eval(env, w)?;
                if v.is_null() {
                    return Ok(Datum::Null);
                }
                match op {
                    UnaryOp::Not => Datum::Int(i64::from(v.truth() == Some(false))),
                    UnaryOp::Neg => types::neg(&v, w)?,
                    UnaryOp::BitNot => Datum::UInt(!v.to_u64(w)),
                    UnaryOp::Plus | UnaryOp::Binary => v,
                }
            }
            CExpr::Arith(op, a, b) => {
                if let Some(v) = self.int_fast(env) {
                    return Ok(Datum::Int(v));
                }
                let (x, y) = (a.eval_cow(env, w)?, b.eval_cow(env, w)?);
                if x.is_null() || y.is_null() {
                    return Ok(Datum::Null);
                }
                // Signed integers, the common case: no conversion (an overflow goes the
                // general way, to its error).
                if let (Datum::Int(p), Datum::Int(q)) = (&*x, &*y) {
                    let r = match op {
                        BinaryOp::Add => p.checked_add(*q),
                        BinaryOp::Sub => p.checked_sub(*q),
                        BinaryOp::Mul => p.checked_mul(*q),
                        _ => None,
                    };
                    if let Some(r) = r {
                        return Ok(Datum::Int(r));
                    }
                }
                arith(*op, &x, &y, env.mode, w)?
            }
            CExpr::Cmp(op, a, b, coll) => {
                if *op != BinaryOp::NullSafeEq {
                    if let (Some(p), Some(q)) = (a.int_fast(env), b.int_fast(env)) {
                        return Ok(Datum::Int(i64::from(cmp_holds(*op, p.cmp(&q)))));
                    }
                }
                let (x, y) = (a.eval_cow(env, w)?, b.eval_cow(env, w)?);
                if let (Datum::Int(p), Datum::Int(q), false) =
                    (&*x, &*y, *op == BinaryOp::NullSafeEq)
                {
                    return Ok(Datum::Int(i64::from(cmp_holds(*op, p.cmp(q)))));
                }
                compare_op(*op, &x, &y, *coll)
            }
            CExpr::And(..) | CExpr::Or(..) => match self.truth(env, w)? {
                Some(t) => Datum::Int(i64::from(t)),
                None => Datum::Null,
            },
            CExpr::Xor(a, b) => match (a.truth(env, w)?, b.truth(env, w)?) {
                (Some(x), Some(y)) => Datum::Int(i64::from(x != y)),
                _ => Datum::Null,
            },
            CExpr::Bit(op, a, b) => {
                let (x, y) = (a.eval(env, w)?, b.eval(env, w)?);
                if x.is_null() || y.is_null() {
                    return Ok(Datum::Null);
                }
                let (x, y) = (x.to_u64(w), y.to_u64(w));
                Datum::UInt(match op {
                    BinaryOp::BitAnd => x & y,
                    BinaryOp::BitOr => x | y,
                    BinaryOp::BitXor => x ^ y,
                    BinaryOp::Shl => x.checked_shl(y.min(64) as u32).unwrap_or(0),
                    _ => x.checked_shr(y.min(64) as u32).unwrap_or(0),
                })
            }
            CExpr::IsNull(e, neg) => Datum::Int(i64::from(e.eval(env, w)?.is_null() != *neg)),
            CExpr::IsBool(e, val, neg) => {
                let t = e.truth(env, w)?;
                Datum::Int(i64::from((t == Some(*val)) != *neg))
            }
            CExpr::In(e, list, neg, coll) => {
                let v = e.eval_cow(env, w)?;
                if v.is_null() {
                    return Ok(Datum::Null);
                }
                let mut saw_null = false;
                for x in list {
                    let y = x.eval_cow(env, w)?;
                    match v.compare(&y, *coll) {
                        Some(Ordering::Equal) => return Ok(Datum::Int(i64::from(!*neg))),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Datum::Null
                } else {
                    Datum::Int(i64::from(*neg))
                }
            }
            CExpr::InSet(e, set) => set.test(&*e.eval_cow(env, w)?)?,
            CExpr::Between(e, lo, hi, neg, coll) => {
                let v = e.eval_cow(env, w)?;
                let (l, h) = (lo.eval_cow(env, w)?, hi.eval_cow(env, w)?);
                match (v.compare(&l, *coll), v.compare(&h, *coll)) {
                    (Some(a), Some(b)) => {
                        let inside = a != Ordering::Less && b != Ordering::Greater;
                        Datum::Int(i64::from(inside != *neg))
                    }
                    _ => Datum::Null,
                }
            }
            CExpr::Like(e, p, esc, neg, coll) => {
                let (v, pat) = (e.eval_cow(env, w)?, p.eval_cow(env, w)?);
                let (Some(v), Some(pat)) = (v.text(), pat.text()) else {
                    return Ok(Datum::Null);
                };
                let hit = LikePattern::new(&pat, *esc, *coll).matches(&v);
                Datum::Int(i64::from(hit != *neg))
            }
            CExpr::LikeConst(e, pat, neg) => match e.eval_cow(env, w)?.text() {
                Some(v) => Datum::Int(i64::from(pat.matches(&v) != *neg)),
                None => Datum::Null,
            },
            CExpr::Case(op, whens, el, coll) => {
                let ov = match op {
                    Some(o) => Some(o.eval(env, w)?),
                    None => None,
                };
                for (c, r) in whens {
                    let cv = c.eval(env, w)?;
                    let hit = match &ov {
                        Some(o) => o.compare(&cv, *coll) == Some(Ordering::Equal),
                        None => cv.truth() == Some(true),
                    };
                    if hit {
                        return r.eval(env, w);
                    }
                }
                match el {
                    Some(e) => e.eval(env, w)?,
                    None => Datum::Null,
                }
            }
            CExpr::Cast(e, ty) => types::cast(&e.eval(env, w)?, ty, w)?,
            CExpr::Func(f, args) => super::func::call(*f, args, env, w)?,
            CExpr::JsonValue(f) => f.eval(env, w)?,
            CExpr::Quantified(e, op, all, values, coll) => {
                quantified(&e.eval(env, w)?, values.iter(), *op, *all, *coll)
            }
            CExpr::Sub(p) => p.slot.lock().clone().ok_or_else(|| {
                SqlError::new(ER_NOT_SUPPORTED_YET, &[&"a correlated subquery here"])
            })?,
        })
    }
}

pub fn arith(
    op: BinaryOp,
    x: &Datum,
    y: &Datum,
    mode: types::SqlMode,
    w: &mut Warnings,
) -> Result<Datum, SqlError> {
    match op {
        BinaryOp::Add => types::add(x, y, mode, w),
        BinaryOp::Sub => types::sub(x, y, mode, w),
        BinaryOp::Mul => types::mul(x, y, mode, w),
        BinaryOp::Div => types::div(x, y, mode, w),
        BinaryOp::IntDiv => types::int_div(x, y, mode, w),
        _ => types::rem(x, y, mode, w),
    }
}

pub fn compare_op(op: BinaryOp, x: &Datum, y: &Datum, coll: Collation) -> Datum {
    if op == BinaryOp::NullSafeEq {
        return Datum::Int(i64::from(match (x.is_null(), y.is_null()) {
            (true, true) => true,
            (false, false) => x.compare(y, coll) == Some(Ordering::Equal),
            _ => false,
        }));
    }
    let Some(o) = x.compare(y, coll) else {
        return Datum::Null;
    };
    Datum::Int(i64::from(cmp_holds(op, o)))
}

/// Whether comparison `op` (not `<=>`) holds for operands ordered `o`.
#[inline]
pub(crate) fn cmp_holds(op: BinaryOp, o: Ordering) -> bool {
    match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::Ne => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::Le => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

/// The aggregate a function name calls, if it is one.
fn agg_kind(name: &str) -> Option<AggKind> {
    match name {
        "count" => Some(AggKind::Count),
        "sum" => Some(AggKind::Sum),
        "avg" => Some(AggKind::Avg),
        "min" => Some(AggKind::Min),
        "max" => Some(AggKind::Max),
        "bit_and" => Some(AggKind::BitAnd),
        "bit_or" => Some(AggKind::BitOr),
        "bit_xor" => Some(AggKind::BitXor),
        "group_concat" => Some(AggKind::GroupConcat),
        "json_arrayagg" => Some(AggKind::JsonArrayAgg),
        "json_objectagg" => Some(AggKind::JsonObjectAgg),
        "std" | "stddev" | "stddev_pop" => Some(AggKind::Variance {
            sample: false,
            root: true,
        }),
        "stddev_samp" => Some(AggKind::Variance {
            sample: true,
            root: true,
        }),
        "variance" | "var_pop" => Some(AggKind::Variance {
            sample: false,
            root: false,
        }),
        "var_samp" => Some(AggKind::Variance {
            sample: true,
            root: false,
        }),
        _ => None,
    }
}

/// The result type of aggregate `kind` over an argument of type `at`.
fn agg_type(kind: AggKind, at: &EType, cx: &mut dyn Context) -> EType {
    match kind {
        AggKind::Count => EType::Int { unsigned: false },
        AggKind::Sum | AggKind::Avg => match numeric_type(at) {
            EType::Double => double_with(if kind == AggKind::Avg {
                decimals_of(at).saturating_add(4)
            } else {
                decimals_of(at)
            }),
            EType::Decimal { scale } => EType::Decimal {
                scale: if kind == AggKind::Avg {
                    scale + 4
                } else {
                    scale
                },
            },
            _ => EType::Decimal {
                scale: if kind == AggKind::Avg { 4 } else { 0 },
            },
        },
        AggKind::Min | AggKind::Max => at.clone(),
        AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => EType::Int { unsigned: true },
        AggKind::Variance { .. } => EType::Double,
        AggKind::GroupConcat => EType::Str {
            coll: cx.collation(),
        },
        AggKind::JsonArrayAgg | AggKind::JsonObjectAgg => super::json::json_type(),
    }
}
