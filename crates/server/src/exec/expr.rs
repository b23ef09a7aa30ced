//! Expressions: name resolution and typing (`compile`, from the AST to `CExpr`), then
//! evaluation over a row (`eval`).
//!
//! INVARIANTS
//! - E1: a `CExpr` refers to columns by position in the row it is evaluated on (the
//!   concatenation of the FROM tables' rows, or a grouped row: see `Agg`), so evaluation never
//!   looks a name up.
//! - E2: anything constant for the statement (literals, `?` parameters, @user and @@system
//!   variables, uncorrelated subqueries) is evaluated once, at compile time or at bind time.
//! - E3: every comparison of strings uses the collation `compile` chose for it (the column's
//!   when a column takes part, else the connection's).

use std::cmp::Ordering;
use std::sync::Arc;

use innoxide_engine::Collation;
use innoxide_sql::ast::{BinaryOp, CastType, Expr, IntervalUnit, Literal, UnaryOp, VarScope};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, SqlType, Warnings};

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
    Between(Box<CExpr>, Box<CExpr>, Box<CExpr>, bool, Collation),
    Like(Box<CExpr>, Box<CExpr>, Option<char>, bool, Collation),
    Case(
        Option<Box<CExpr>>,
        Vec<(CExpr, CExpr)>,
        Option<Box<CExpr>>,
        Collation,
    ),
    Func(Func, Vec<CExpr>),
    Cast(Box<CExpr>, CastType),
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
}

/// An aggregate to compute per group.
#[derive(Clone, Debug)]
pub struct AggSpec {
    pub kind: AggKind,
    pub arg: Option<CExpr>,
    pub distinct: bool,
    pub coll: Collation,
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
}

/// A table (or derived table) visible to name resolution.
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
    fn sys_var(&mut self, scope: VarScope, name: &str) -> Result<Datum, SqlError>;
    fn user_var(&mut self, name: &str) -> Datum;
    /// Runs an uncorrelated subquery: its rows (first column each when `one_column`).
    fn subquery(&mut self, q: &innoxide_sql::ast::Select) -> Result<Vec<Vec<Datum>>, SqlError>;
    fn info(&mut self, what: &str) -> Result<Datum, SqlError>;
    fn collation(&self) -> Collation;
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
    /// Inside an aggregate's argument.
    in_agg: bool,
}

impl<'a> Compiler<'a> {
    pub fn new(tables: &'a [ScopeTable], clause: &'static str) -> Self {
        Compiler {
            tables,
            aggs: None,
            clause,
            aliases: &[],
            bare_columns: Vec::new(),
            in_agg: false,
        }
    }

    pub fn resolve(&self, table: Option<&str>, name: &str) -> Result<(usize, EType), SqlError> {
        let mut found: Option<(usize, EType)> = None;
        for t in self.tables {
            match table {
                Some(q) if !t.name.eq_ignore_ascii_case(q) => continue,
                // Internal tables (VALUES() rows) are reached only by their qualifier.
                None if t.name.starts_with('\0') => continue,
                _ => {}
            }
            for (i, (n, ty, hidden)) in t.columns.iter().enumerate() {
                if !*hidden && n.eq_ignore_ascii_case(name) {
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

    pub fn compile(&mut self, e: &Expr, cx: &mut dyn Context) -> Result<(CExpr, EType), SqlError> {
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
                let (pos, ty) = self.resolve(table.as_deref(), name)?;
                if !self.in_agg {
                    self.bare_columns.push(pos);
                }
                (CExpr::Col(pos), ty)
            }
            Expr::Param(i) => (
                CExpr::Param(*i),
                EType::Str {
                    coll: cx.collation(),
                },
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
                    UnaryOp::Neg | UnaryOp::Plus => numeric_type(&t),
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
                    Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge => {
                        // An explicit COLLATE wins over a column's or a literal's collation.
                        let coll = match (&**left, &**right) {
                            (Expr::Collate { .. }, _) => lt.collation(),
                            (_, Expr::Collate { .. }) => rt.collation(),
                            _ => pick_collation(&lt, &rt, cx.collation()),
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
                (CExpr::In(Box::new(c), items, *negated, coll), bool_type())
            }
            Expr::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let (c, t) = self.compile(expr, cx)?;
                let rows = cx.subquery(subquery)?;
                let mut items = Vec::with_capacity(rows.len());
                for r in rows {
                    if r.len() != 1 {
                        return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&1]));
                    }
                    items.extend(r.into_iter().map(CExpr::Const));
                }
                let coll = pick_collation(&t, &t, cx.collation());
                (CExpr::In(Box::new(c), items, *negated, coll), bool_type())
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
                let coll = pick_collation(&t, &pt, cx.collation());
                (
                    CExpr::Like(Box::new(c), Box::new(p), esc, *negated, coll),
                    bool_type(),
                )
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
                for (w, r) in whens {
                    let (wc, _) = self.compile(w, cx)?;
                    let (rc, t) = self.compile(r, cx)?;
                    rt = Some(merge_type(rt, t));
                    ws.push((wc, rc));
                }
                let el = match else_ {
                    Some(e) => {
                        let (c, t) = self.compile(e, cx)?;
                        rt = Some(merge_type(rt, t));
                        Some(Box::new(c))
                    }
                    None => None,
                };
                (CExpr::Case(op, ws, el, coll), rt.unwrap_or(EType::Null))
            }
            Expr::Cast { expr, ty } => {
                let (c, _) = self.compile(expr, cx)?;
                let t = match ty {
                    CastType::Signed => EType::Int { unsigned: false },
                    CastType::Unsigned => EType::Int { unsigned: true },
                    CastType::Decimal(_, s) => EType::Decimal {
                        scale: s.unwrap_or(0).min(30) as u8,
                    },
                    CastType::Double => EType::Double,
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
                };
                (CExpr::Cast(Box::new(c), ty.clone()), t)
            }
            Expr::Collate { expr, collation } => {
                let (c, _) = self.compile(expr, cx)?;
                let coll = types::collation_by_name(collation)
                    .ok_or_else(|| SqlError::new(ER_UNKNOWN_COLLATION, &[collation]))?;
                (c, EType::Str { coll })
            }
            Expr::Subquery(q) => {
                let rows = cx.subquery(q)?;
                if rows.len() > 1 {
                    return Err(SqlError::new(ER_SUBQUERY_NO_1_ROW, &[]));
                }
                let d = match rows.into_iter().next() {
                    None => Datum::Null,
                    Some(r) if r.len() == 1 => r.into_iter().next().unwrap_or(Datum::Null),
                    Some(_) => return Err(SqlError::new(ER_OPERAND_COLUMNS, &[&1])),
                };
                let t = datum_type(&d, cx.collation());
                (CExpr::Const(d), t)
            }
            Expr::Exists { subquery, negated } => {
                let rows = cx.subquery(subquery)?;
                let v = rows.is_empty() == *negated;
                (CExpr::Const(Datum::Int(i64::from(v))), bool_type())
            }
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

    fn function(
        &mut self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        star: bool,
        cx: &mut dyn Context,
    ) -> Result<(CExpr, EType), SqlError> {
        let agg = match name {
            "count" => Some(AggKind::Count),
            "sum" => Some(AggKind::Sum),
            "avg" => Some(AggKind::Avg),
            "min" => Some(AggKind::Min),
            "max" => Some(AggKind::Max),
            "bit_and" => Some(AggKind::BitAnd),
            "bit_or" => Some(AggKind::BitOr),
            "bit_xor" => Some(AggKind::BitXor),
            "group_concat" => Some(AggKind::GroupConcat),
            _ => None,
        };
        if let Some(kind) = agg {
            if self.aggs.is_none() || self.in_agg {
                return Err(SqlError::new(ER_INVALID_GROUP_FUNC_USE, &[]));
            }
            let (arg, at) = if star {
                (None, EType::Int { unsigned: false })
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
            let ty = match kind {
                AggKind::Count => EType::Int { unsigned: false },
                AggKind::Sum | AggKind::Avg => match numeric_type(&at) {
                    EType::Double => EType::Double,
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
                AggKind::GroupConcat => EType::Str {
                    coll: cx.collation(),
                },
            };
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
        // The clock functions return the statement's time (constant within it, as MySQL's).
        let clock = match name {
            "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate" => Some("now"),
            "curdate" | "current_date" => Some("curdate"),
            "curtime" | "current_time" => Some("curtime"),
            "unix_timestamp" if args.is_empty() => Some("unix_timestamp"),
            _ => None,
        };
        if let Some(what) = clock {
            let fsp = match args {
                [] => 0,
                [Expr::Literal(Literal::Number(n))] if what != "curdate" => match n.parse::<u8>() {
                    Ok(f) if f <= 6 => f,
                    _ => return Err(SqlError::new(ER_TOO_BIG_PRECISION, &[&n, &name, &6])),
                },
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
        let coll = cx.collation();
        let s = EType::Str { coll };
        let int = EType::Int { unsigned: false };
        let (f, t, n): (Func, EType, std::ops::RangeInclusive<usize>) = match name {
            "concat" => (Func::Concat, s, 1..=usize::MAX),
            "concat_ws" => (Func::ConcatWs, s, 2..=usize::MAX),
            "lower" | "lcase" => (Func::Lower, s, 1..=1),
            "upper" | "ucase" => (Func::Upper, s, 1..=1),
            "length" | "octet_length" => (Func::Length, int, 1..=1),
            "char_length" | "character_length" => (Func::CharLength, int, 1..=1),
            "substring" | "substr" | "mid" => (Func::Substring, s, 2..=3),
            "left" => (Func::Left, s, 2..=2),
            "right" => (Func::Right, s, 2..=2),
            "trim" => (Func::Trim, s, 1..=2),
            "ltrim" => (Func::Ltrim, s, 1..=2),
            "rtrim" => (Func::Rtrim, s, 1..=2),
            "replace" => (Func::Replace, s, 3..=3),
            "repeat" => (Func::Repeat, s, 2..=2),
            "reverse" => (Func::Reverse, s, 1..=1),
            "lpad" => (Func::Lpad, s, 3..=3),
            "rpad" => (Func::Rpad, s, 3..=3),
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
                types_.first().map(numeric_type).unwrap_or(EType::Double),
                1..=1,
            ),
            "round" => (
                Func::Round,
                types_.first().map(numeric_type).unwrap_or(EType::Double),
                1..=2,
            ),
            "truncate" => (
                Func::Truncate,
                types_.first().map(numeric_type).unwrap_or(EType::Double),
                2..=2,
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
            _ => return Err(SqlError::new(ER_SP_DOES_NOT_EXIST, &[&"FUNCTION", &name])),
        };
        if !n.contains(&cargs.len()) {
            return Err(SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[&name]));
        }
        Ok((CExpr::Func(f, cargs), t))
    }
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

/// An ENUM column in arithmetic is its index (`e + 0`), as in MySQL.
fn enum_as_number(c: CExpr, t: EType) -> (CExpr, EType) {
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

fn arith_type(op: BinaryOp, l: &EType, r: &EType) -> EType {
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

fn merge_type(a: Option<EType>, b: EType) -> EType {
    match a {
        None | Some(EType::Null) => b,
        Some(a) if b == EType::Null => a,
        Some(a) => {
            if a == b {
                a
            } else if a.is_string() || b.is_string() {
                EType::Str {
                    coll: a.collation(),
                }
            } else {
                arith_type(BinaryOp::Add, &a, &b)
            }
        }
    }
}

fn pick_collation(a: &EType, b: &EType, default: Collation) -> Collation {
    if matches!(a, EType::Column(_)) && a.is_string() {
        a.collation()
    } else if matches!(b, EType::Column(_)) && b.is_string() {
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
    pub params: &'a [Datum],
    pub mode: types::SqlMode,
}

impl<'a> Env<'a> {
    /// A row without aggregates.
    pub fn new(row: &'a [Datum], params: &'a [Datum], mode: types::SqlMode) -> Self {
        Env {
            row,
            aggs: &[],
            params,
            mode,
        }
    }
}

impl CExpr {
    pub fn eval(&self, env: &Env<'_>, w: &mut Warnings) -> Result<Datum, SqlError> {
        Ok(match self {
            CExpr::Const(d) => d.clone(),
            CExpr::Col(i) => env.row.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Param(i) => env.params.get(*i).cloned().unwrap_or(Datum::Null),
            CExpr::Agg(i) => env.aggs.get(*i).cloned().unwrap_or(Datum::Null),
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
                let (x, y) = (a.eval(env, w)?, b.eval(env, w)?);
                if x.is_null() || y.is_null() {
                    return Ok(Datum::Null);
                }
                arith(*op, &x, &y, env.mode, w)?
            }
            CExpr::Cmp(op, a, b, coll) => {
                let (x, y) = (a.eval(env, w)?, b.eval(env, w)?);
                compare_op(*op, &x, &y, *coll)
            }
            CExpr::And(a, b) => {
                let x = a.eval(env, w)?.truth();
                if x == Some(false) {
                    return Ok(Datum::Int(0));
                }
                let y = b.eval(env, w)?.truth();
                match (x, y) {
                    (_, Some(false)) => Datum::Int(0),
                    (Some(true), Some(true)) => Datum::Int(1),
                    _ => Datum::Null,
                }
            }
            CExpr::Or(a, b) => {
                let x = a.eval(env, w)?.truth();
                if x == Some(true) {
                    return Ok(Datum::Int(1));
                }
                let y = b.eval(env, w)?.truth();
                match (x, y) {
                    (_, Some(true)) => Datum::Int(1),
                    (Some(false), Some(false)) => Datum::Int(0),
                    _ => Datum::Null,
                }
            }
            CExpr::Xor(a, b) => match (a.eval(env, w)?.truth(), b.eval(env, w)?.truth()) {
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
                let t = e.eval(env, w)?.truth();
                Datum::Int(i64::from((t == Some(*val)) != *neg))
            }
            CExpr::In(e, list, neg, coll) => {
                let v = e.eval(env, w)?;
                if v.is_null() {
                    return Ok(Datum::Null);
                }
                let mut saw_null = false;
                for x in list {
                    let y = x.eval(env, w)?;
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
            CExpr::Between(e, lo, hi, neg, coll) => {
                let v = e.eval(env, w)?;
                let (l, h) = (lo.eval(env, w)?, hi.eval(env, w)?);
                match (v.compare(&l, *coll), v.compare(&h, *coll)) {
                    (Some(a), Some(b)) => {
                        let inside = a != Ordering::Less && b != Ordering::Greater;
                        Datum::Int(i64::from(inside != *neg))
                    }
                    _ => Datum::Null,
                }
            }
            CExpr::Like(e, p, esc, neg, coll) => {
                let (v, pat) = (e.eval(env, w)?, p.eval(env, w)?);
                let (Some(v), Some(pat)) = (v.to_text(), pat.to_text()) else {
                    return Ok(Datum::Null);
                };
                let ci = !matches!(
                    coll,
                    Collation::Binary
                        | Collation::Latin1Bin
                        | Collation::Utf8mb4Bin
                        | Collation::Utf8mb40900Bin
                );
                Datum::Int(i64::from(like(&v, &pat, *esc, ci) != *neg))
            }
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
    let r = match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::Ne => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::Le => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    };
    Datum::Int(i64::from(r))
}

/// SQL LIKE over UTF-8 text: `%` any run, `_` one character, `esc` escapes; `ci` compares
/// case-insensitively.
pub fn like(v: &[u8], p: &[u8], esc: Option<char>, ci: bool) -> bool {
    let norm = |b: &[u8]| -> Vec<char> {
        let s = String::from_utf8_lossy(b);
        if ci {
            s.chars().flat_map(char::to_lowercase).collect()
        } else {
            s.chars().collect()
        }
    };
    let (v, p) = (norm(v), norm(p));
    // Iterative matcher with backtracking to the last '%'.
    let (mut vi, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while vi < v.len() {
        if pi < p.len() {
            let c = p[pi];
            if Some(c) == esc && pi + 1 < p.len() {
                if p[pi + 1] == v[vi] {
                    vi += 1;
                    pi += 2;
                    continue;
                }
            } else if c == '%' {
                star = Some((pi, vi));
                pi += 1;
                continue;
            } else if c == '_' || c == v[vi] {
                vi += 1;
                pi += 1;
                continue;
            }
        }
        match star {
            Some((sp, sv)) => {
                pi = sp + 1;
                vi = sv + 1;
                star = Some((sp, sv + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '%' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_matches_as_mysql() {
        assert!(like(b"abc", b"a%", Some('\\'), false));
        assert!(like(b"abc", b"%c", Some('\\'), false));
        assert!(like(b"abc", b"a_c", Some('\\'), false));
        assert!(!like(b"abc", b"a_", Some('\\'), false));
        assert!(like(b"ABC", b"a%", Some('\\'), true));
        assert!(!like(b"ABC", b"a%", Some('\\'), false));
        assert!(like(b"a%c", b"a\\%c", Some('\\'), false));
        assert!(!like(b"abc", b"a\\%c", Some('\\'), false));
        assert!(like(b"", b"%", Some('\\'), false));
        assert!(like(b"mississippi", b"%iss%ppi", Some('\\'), false));
    }
}
