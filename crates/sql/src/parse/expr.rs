//! Lowering of sqlparser expressions and data types into `crate::ast`.
//!
//! INVARIANTS
//! - Function names are lower-case. sqlparser's special nodes become calls: CURRENT_TIMESTAMP,
//!   LOCALTIME[STAMP] → `now`; CURRENT_DATE → `curdate`; CURRENT_TIME → `curtime`;
//!   SUBSTRING(x FROM a FOR b) → `substring(x, a[, b])`; POSITION(a IN b) → `locate(a, b)`;
//!   EXTRACT(unit FROM x) → `extract('unit', x)` (unit lower-case string);
//!   TRIM([BOTH|LEADING|TRAILING] [r] FROM s) → `trim|ltrim|rtrim(s[, r])`;
//!   `a REGEXP b` → `regexp_like(a, b)`; CONVERT(x USING cs) → `Cast` to CHAR with charset.
//! - `@x` is a user variable, `@@[scope.]x` a system variable, unquoted DEFAULT is
//!   `Expr::Default`, a double-quoted "x" is a string (MySQL without ANSI_QUOTES).
//! - `||` is OR (sql_mode without PIPES_AS_CONCAT), `&&` AND.
//! - Anything MySQL has that our AST cannot express gives 1235, never a silent change.

use super::lower::{unsupported, Ctx};
use super::special::JsonResponseText;
use super::{sp_error, sp_parser};
use crate::ast::*;
use crate::error::{SqlError, ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT};
use sqlparser::ast as sp;
use sqlparser::ast::Spanned;

type R<T> = Result<T, SqlError>;

impl Ctx<'_> {
    pub fn expr(&self, e: sp::Expr) -> R<Expr> {
        use sp::Expr as E;
        Ok(match e {
            E::Identifier(id) => self.identifier(id),
            E::CompoundIdentifier(ids) => self.compound(ids)?,
            E::Value(v) => self.value(v)?,
            E::Prefixed { prefix, value } => {
                let charset = prefix.value.trim_start_matches('_').to_ascii_lowercase();
                match self.expr(*value)? {
                    Expr::Literal(Literal::String { bytes, .. }) => {
                        Expr::Literal(Literal::String {
                            bytes,
                            charset: Some(charset),
                        })
                    }
                    other => other,
                }
            }
            E::Nested(e) => self.expr(*e)?,
            E::UnaryOp { op, expr } => {
                let op = match op {
                    sp::UnaryOperator::Minus => UnaryOp::Neg,
                    sp::UnaryOperator::Plus => UnaryOp::Plus,
                    sp::UnaryOperator::Not | sp::UnaryOperator::BangNot => UnaryOp::Not,
                    sp::UnaryOperator::BitwiseNot => UnaryOp::BitNot,
                    _ => return Err(unsupported("this operator")),
                };
                unary(op, self.expr(*expr)?)
            }
            E::BinaryOp { left, op, right } => {
                let left = self.expr(*left)?;
                let right = self.expr(*right)?;
                match op {
                    sp::BinaryOperator::Regexp => {
                        return Ok(func("regexp_like", vec![left, right]))
                    }
                    // col->path is JSON_EXTRACT(col, path); col->>path also unquotes.
                    sp::BinaryOperator::Arrow => {
                        return Ok(func("json_extract", vec![left, right]))
                    }
                    sp::BinaryOperator::LongArrow => {
                        return Ok(func(
                            "json_unquote",
                            vec![func("json_extract", vec![left, right])],
                        ))
                    }
                    _ => {}
                }
                Expr::Binary {
                    op: binary_op(&op)?,
                    left: Box::new(left),
                    right: Box::new(right),
                }
            }
            E::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let f = func("regexp_like", vec![self.expr(*expr)?, self.expr(*pattern)?]);
                if negated {
                    unary(UnaryOp::Not, f)
                } else {
                    f
                }
            }
            E::MemberOf(m) => func(
                "member of",
                vec![self.expr(*m.value)?, self.expr(*m.array)?],
            ),
            E::IsNull(e) => is_null(self.expr(*e)?, false),
            E::IsNotNull(e) => is_null(self.expr(*e)?, true),
            E::IsTrue(e) => is_bool(self.expr(*e)?, true, false),
            E::IsNotTrue(e) => is_bool(self.expr(*e)?, true, true),
            E::IsFalse(e) => is_bool(self.expr(*e)?, false, false),
            E::IsNotFalse(e) => is_bool(self.expr(*e)?, false, true),
            E::IsUnknown(e) => is_null(self.expr(*e)?, false),
            E::IsNotUnknown(e) => is_null(self.expr(*e)?, true),
            E::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: Box::new(self.expr(*expr)?),
                list: self.exprs(list)?,
                negated,
            },
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => Expr::InSubquery {
                expr: Box::new(self.expr(*expr)?),
                subquery: Box::new(self.query(*subquery)?),
                negated,
            },
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.quantified(*left, &compare_op, *right, false)?,
            E::AllOp {
                left,
                compare_op,
                right,
            } => self.quantified(*left, &compare_op, *right, true)?,
            E::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between {
                expr: Box::new(self.expr(*expr)?),
                low: Box::new(self.expr(*low)?),
                high: Box::new(self.expr(*high)?),
                negated,
            },
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => Expr::Like {
                expr: Box::new(self.expr(*expr)?),
                pattern: Box::new(self.expr(*pattern)?),
                escape: match escape_char {
                    Some(e) => Some(Box::new(self.expr(*e)?)),
                    None => None,
                },
                negated,
            },
            E::Function(f) => self.function(f)?,
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => Expr::Case {
                operand: self.opt_box(operand)?,
                whens: conditions
                    .into_iter()
                    .map(|w| Ok((self.expr(w.condition)?, self.expr(w.result)?)))
                    .collect::<R<_>>()?,
                else_: self.opt_box(else_result)?,
            },
            E::Cast {
                kind: sp::CastKind::Cast,
                expr,
                data_type,
                format: None,
            } => Expr::Cast {
                expr: Box::new(self.expr(*expr)?),
                ty: cast_type(&data_type)?,
            },
            E::Convert {
                is_try: false,
                expr,
                data_type,
                charset,
                styles,
                ..
            } if styles.is_empty() => {
                let ty = match (data_type, charset) {
                    (Some(t), None) => cast_type(&t)?,
                    (None, Some(cs)) => CastType::Char(None, Some(object_last(&cs))),
                    _ => return Err(unsupported("this form of CONVERT")),
                };
                Expr::Cast {
                    expr: Box::new(self.expr(*expr)?),
                    ty,
                }
            }
            E::TypedString(ts) => Expr::Cast {
                expr: Box::new(self.value(ts.value)?),
                ty: cast_type(&ts.data_type)?,
            },
            E::Collate { expr, collation } => Expr::Collate {
                expr: Box::new(self.expr(*expr)?),
                collation: object_last(&collation),
            },
            E::Interval(iv) => match (&iv.leading_field, &iv.last_field) {
                (Some(f), None) => {
                    let unit = interval_unit(f)?;
                    let compound = self.compound_after(iv.value.span());
                    let value = self.expr(*iv.value)?;
                    // A compound unit (DAY_HOUR...): its value, a string of fields, is counted
                    // in the single unit the rewrite put there.
                    let value = match compound {
                        Some(name) => func("compound interval", vec![value, str_lit(&name)]),
                        None => value,
                    };
                    Expr::Interval {
                        unit,
                        value: Box::new(value),
                    }
                }
                _ => return Err(unsupported("this INTERVAL")),
            },
            E::Extract { field, expr, .. } => {
                // A compound unit (YEAR_MONTH, DAY_HOUR ...) was rewritten to a single one for
                // sqlparser: the unit extracted is the one written.
                let unit = self
                    .compound_before_from(expr.span())
                    .unwrap_or_else(|| field.to_string().to_ascii_lowercase());
                func("extract", vec![str_lit(&unit), self.expr(*expr)?])
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(*expr)?];
                for a in [substring_from, substring_for].into_iter().flatten() {
                    args.push(self.expr(*a)?);
                }
                func("substring", args)
            }
            E::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters: None,
            } => {
                let name = match trim_where {
                    Some(sp::TrimWhereField::Leading) => "ltrim",
                    Some(sp::TrimWhereField::Trailing) => "rtrim",
                    _ => "trim",
                };
                let mut args = vec![self.expr(*expr)?];
                if let Some(w) = trim_what {
                    args.push(self.expr(*w)?);
                }
                func(name, args)
            }
            E::Position { expr, r#in } => {
                func("locate", vec![self.expr(*expr)?, self.expr(*r#in)?])
            }
            E::Ceil {
                expr,
                field: sp::CeilFloorKind::DateTimeField(sp::DateTimeField::NoDateTime),
            } => func("ceil", vec![self.expr(*expr)?]),
            E::Floor {
                expr,
                field: sp::CeilFloorKind::DateTimeField(sp::DateTimeField::NoDateTime),
            } => func("floor", vec![self.expr(*expr)?]),
            E::Subquery(q) => Expr::Subquery(Box::new(self.query(*q)?)),
            E::Exists { subquery, negated } => Expr::Exists {
                subquery: Box::new(self.query(*subquery)?),
                negated,
            },
            E::Tuple(list) => Expr::Row(self.exprs(list)?),
            _ => return Err(unsupported("this expression")),
        })
    }

    pub fn exprs(&self, list: Vec<sp::Expr>) -> R<Vec<Expr>> {
        list.into_iter().map(|e| self.expr(e)).collect()
    }

    pub fn opt_expr(&self, e: Option<sp::Expr>) -> R<Option<Expr>> {
        e.map(|e| self.expr(e)).transpose()
    }

    fn opt_box(&self, e: Option<Box<sp::Expr>>) -> R<Option<Box<Expr>>> {
        Ok(self.opt_expr(e.map(|b| *b))?.map(Box::new))
    }

    fn identifier(&self, id: sp::Ident) -> Expr {
        match id.quote_style {
            Some('"') | Some('\'') => str_lit(&id.value),
            Some(_) => column(None, id.value),
            None => {
                if let Some(name) = id.value.strip_prefix("@@") {
                    sys_var(VarScope::Default, name)
                } else if let Some(name) = id.value.strip_prefix('@') {
                    Expr::UserVar(
                        name.trim_matches(|c| c == '`' || c == '\'' || c == '"')
                            .to_lowercase(),
                    )
                } else if id.value.eq_ignore_ascii_case("default") {
                    Expr::Default
                } else {
                    column(None, id.value)
                }
            }
        }
    }

    fn compound(&self, mut ids: Vec<sp::Ident>) -> R<Expr> {
        if ids.len() == 2 && ids[0].quote_style.is_none() && ids[0].value.starts_with("@@") {
            let scope = match ids[0].value[2..].to_ascii_lowercase().as_str() {
                "global" => VarScope::Global,
                "session" | "local" => VarScope::Session,
                _ => return Err(unsupported("this variable")),
            };
            return Ok(sys_var(scope, &ids[1].value));
        }
        let n = ids.len();
        if !(2..=3).contains(&n) {
            return Err(unsupported("this column reference"));
        }
        let name = ids.pop().map(|i| i.value).unwrap_or_default();
        let table = ids.pop().map(|i| i.value);
        Ok(column(table, name))
    }

    fn value(&self, v: sp::ValueWithSpan) -> R<Expr> {
        use sp::Value as V;
        Ok(Expr::Literal(match v.value {
            V::Number(n, _) => Literal::Number(n),
            V::SingleQuotedString(s) | V::DoubleQuotedString(s) => Literal::String {
                bytes: s.into_bytes(),
                charset: None,
            },
            V::HexStringLiteral(h) => {
                Literal::Hex(hex_bytes(&h).ok_or_else(|| unsupported("this hex literal"))?)
            }
            V::SingleQuotedByteStringLiteral(b) => {
                Literal::Hex(bit_bytes(&b).ok_or_else(|| unsupported("this bit literal"))?)
            }
            V::Boolean(b) => Literal::Bool(b),
            V::Null => Literal::Null,
            V::Placeholder(p) if p == "?" => return Ok(Expr::Param(self.param_number(v.span))),
            _ => return Err(unsupported("this literal")),
        }))
    }

    fn function(&self, mut f: sp::Function) -> R<Expr> {
        if let Some(over) = f.over.take() {
            return self.window(f, over);
        }
        if f.filter.is_some() || !f.within_group.is_empty() {
            return Err(unsupported("filtered aggregates"));
        }
        if !matches!(f.parameters, sp::FunctionArguments::None) || f.name.0.len() != 1 {
            return Err(unsupported("this function call"));
        }
        let raw = object_last(&f.name).to_ascii_lowercase();
        let name = match raw.as_str() {
            "current_timestamp" | "localtime" | "localtimestamp" => "now",
            "current_date" => "curdate",
            "current_time" => "curtime",
            other => other,
        }
        .to_string();
        if name == "json_value" {
            return self.json_value(f);
        }
        let (args, distinct, star) = match f.args {
            sp::FunctionArguments::None => (vec![], false, false),
            sp::FunctionArguments::Subquery(_) => return Err(unsupported("this function call")),
            sp::FunctionArguments::List(list) => {
                if name == "group_concat" {
                    return self.group_concat(list);
                }
                if !list.clauses.is_empty() {
                    return Err(unsupported("ORDER BY / SEPARATOR in an aggregate"));
                }
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(sp::DuplicateTreatment::Distinct)
                );
                let mut star = false;
                let mut args = Vec::with_capacity(list.args.len());
                for a in list.args {
                    match a {
                        sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(e)) => {
                            args.push(self.expr(e)?)
                        }
                        sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Wildcard)
                            if name == "count" =>
                        {
                            star = true
                        }
                        _ => return Err(unsupported("this function argument")),
                    }
                }
                (args, distinct, star)
            }
        };
        if name == "values" && args.len() == 1 && !distinct {
            if let Some(Expr::Column { name: col, .. }) = args.first() {
                return Ok(Expr::Values(col.clone()));
            }
        }
        Ok(Expr::Function {
            name,
            args,
            distinct,
            star,
        })
    }
}

impl Ctx<'_> {
    /// JSON_VALUE(doc, path [RETURNING type] [... ON EMPTY] [... ON ERROR]): the clauses
    /// sqlparser does not read come from the rewrite (`special::JsonValueClauses`).
    fn json_value(&self, f: sp::Function) -> R<Expr> {
        let call = f.name.0.first().and_then(|p| p.as_ident()).map(|i| i.span);
        let clauses = call
            .and_then(|span| self.offset_at(span.start))
            .and_then(|at| self.json_value.iter().find(|c| c.call == at))
            .cloned()
            .unwrap_or_default();
        let sp::FunctionArguments::List(list) = f.args else {
            return Err(SqlError::new(
                ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                &[&"json_value"],
            ));
        };
        let mut returning = None;
        for c in list.clauses {
            match c {
                sp::FunctionArgumentClause::JsonReturningClause(r) => {
                    returning = Some(cast_type(&r.data_type)?)
                }
                _ => return Err(unsupported("this JSON_VALUE clause")),
            }
        }
        let mut args = Vec::with_capacity(2);
        for a in list.args {
            match a {
                sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(e)) => args.push(self.expr(e)?),
                _ => return Err(unsupported("this function argument")),
            }
        }
        let [doc, path] = <[Expr; 2]>::try_from(args)
            .map_err(|_| SqlError::new(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, &[&"json_value"]))?;
        let response = |r: Option<JsonResponseText>| -> R<OnJson> {
            Ok(match r {
                None | Some(JsonResponseText::Null) => OnJson::Null,
                Some(JsonResponseText::Error) => OnJson::Error,
                Some(JsonResponseText::Default(from, to)) => {
                    let text = self.sql.get(from..to).unwrap_or_default();
                    let mut p = sp_parser(text).map_err(|e| sp_error(self.sql, from, &e))?;
                    let e = p.parse_expr().map_err(|e| sp_error(self.sql, from, &e))?;
                    OnJson::Default(self.at(from).expr(e)?)
                }
            })
        };
        Ok(Expr::JsonValue(Box::new(JsonValue {
            doc,
            path,
            returning,
            on_empty: response(clauses.on_empty)?,
            on_error: response(clauses.on_error)?,
        })))
    }

    /// The compound INTERVAL unit written right after the expression spanning `span`, if the
    /// rewrite replaced one there.
    fn compound_after(&self, span: sqlparser::tokenizer::Span) -> Option<String> {
        let end = self.offset_at(span.end)?;
        self.compound_units
            .iter()
            .find(|(at, _)| {
                // Only blanks (and the literal's closing quote or a parenthesis) between.
                *at >= end
                    && self.sql.get(end..*at).is_some_and(|g| {
                        g.chars()
                            .all(|c| c.is_whitespace() || matches!(c, '\'' | '"' | ')'))
                    })
            })
            .map(|(_, name)| name.clone())
    }

    /// The compound unit written right before `FROM <expression spanning span>` (EXTRACT), if
    /// the rewrite replaced one there.
    fn compound_before_from(&self, span: sqlparser::tokenizer::Span) -> Option<String> {
        let start = self.offset_at(span.start)?;
        self.compound_units
            .iter()
            .find(|(at, name)| {
                let end = at + name.len();
                end <= start
                    && self
                        .sql
                        .get(end..start)
                        .is_some_and(|g| g.trim().eq_ignore_ascii_case("from"))
            })
            .map(|(_, name)| name.clone())
    }

    /// `f OVER (...)`.
    /// The definition of named window `name` (WINDOW name AS (...)), or 3579.
    pub(super) fn named_window(&self, name: &str) -> R<sp::WindowSpec> {
        self.windows
            .borrow()
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, s)| s.clone())
            .ok_or_else(|| {
                crate::error::SqlError::new(crate::error::ER_WINDOW_NO_SUCH_WINDOW, &[&name])
            })
    }

    /// `spec` completing named window `base` (`(base ORDER BY ... frame)`), with MySQL's
    /// restrictions: no PARTITION BY here (3581), no frame there (3582), one ORDER BY (3583).
    pub(super) fn inherit(&self, mut spec: sp::WindowSpec, base: &str) -> R<sp::WindowSpec> {
        use crate::error::*;
        let b = self.named_window(base)?;
        if !spec.partition_by.is_empty() {
            return Err(SqlError::new(ER_WINDOW_NO_CHILD_PARTITIONING, &[]));
        }
        if b.window_frame.is_some() {
            return Err(SqlError::new(ER_WINDOW_NO_INHERIT_FRAME, &[&base]));
        }
        if !spec.order_by.is_empty() && !b.order_by.is_empty() {
            return Err(SqlError::new(
                ER_WINDOW_NO_REDEFINE_ORDER_BY,
                &[&"<unnamed window>", &base],
            ));
        }
        spec.partition_by = b.partition_by;
        if spec.order_by.is_empty() {
            spec.order_by = b.order_by;
        }
        Ok(spec)
    }

    fn window(&self, f: sp::Function, over: sp::WindowType) -> R<Expr> {
        let mut spec = match over {
            sp::WindowType::WindowSpec(spec) => spec,
            sp::WindowType::NamedWindow(name) => self.named_window(&name.value)?,
        };
        // OVER (w ORDER BY ...): the named window's, completed by what is written here.
        if let Some(name) = spec.window_name.take() {
            spec = self.inherit(spec, &name.value)?;
        }
        let func = Box::new(self.function(f)?);
        let partition_by = spec
            .partition_by
            .into_iter()
            .map(|e| self.expr(e))
            .collect::<R<Vec<_>>>()?;
        let order_by = self.order_items(spec.order_by)?;
        let frame = match spec.window_frame {
            None => None,
            Some(fr) => {
                let rows = match fr.units {
                    sp::WindowFrameUnits::Rows => true,
                    sp::WindowFrameUnits::Range => false,
                    sp::WindowFrameUnits::Groups => return Err(unsupported("GROUPS frames")),
                };
                let start = frame_bound(fr.start_bound, rows)?;
                let end = match fr.end_bound {
                    Some(b) => frame_bound(b, rows)?,
                    None => FrameBound::CurrentRow,
                };
                Some(WindowFrame { rows, start, end })
            }
        };
        Ok(Expr::Window {
            func,
            partition_by,
            order_by,
            frame,
        })
    }

    /// `left op ANY|ALL (subquery)`.
    fn quantified(
        &self,
        left: sp::Expr,
        op: &sp::BinaryOperator,
        right: sp::Expr,
        all: bool,
    ) -> R<Expr> {
        let op = binary_op(op)?;
        if !matches!(
            op,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        ) {
            return Err(unsupported("this ANY/ALL comparison"));
        }
        let subquery = match right {
            sp::Expr::Subquery(q) => Box::new(self.query(*q)?),
            _ => return Err(unsupported("ANY/ALL without a subquery")),
        };
        Ok(Expr::Quantified {
            expr: Box::new(self.expr(left)?),
            op,
            all,
            subquery,
        })
    }

    /// GROUP_CONCAT([DISTINCT] expr, ... [ORDER BY ...] [SEPARATOR 'str']).
    fn group_concat(&self, list: sp::FunctionArgumentList) -> R<Expr> {
        let distinct = matches!(
            list.duplicate_treatment,
            Some(sp::DuplicateTreatment::Distinct)
        );
        let mut args = Vec::with_capacity(list.args.len());
        for a in list.args {
            match a {
                sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(e)) => args.push(self.expr(e)?),
                _ => return Err(unsupported("this function argument")),
            }
        }
        let mut order_by = Vec::new();
        let mut separator = None;
        for c in list.clauses {
            match c {
                sp::FunctionArgumentClause::OrderBy(items) => {
                    for o in items {
                        order_by.push(OrderItem {
                            desc: matches!(o.options.sort, Some(sp::OrderBySort::Desc)),
                            expr: self.expr(o.expr)?,
                        });
                    }
                }
                sp::FunctionArgumentClause::Separator(v) => match self.value(v)? {
                    Expr::Literal(Literal::String { bytes, .. } | Literal::Hex(bytes)) => {
                        separator = Some(bytes)
                    }
                    _ => return Err(unsupported("this SEPARATOR")),
                },
                _ => return Err(unsupported("this GROUP_CONCAT clause")),
            }
        }
        if args.is_empty() {
            return Err(SqlError::parse(")", 1));
        }
        Ok(Expr::GroupConcat {
            args,
            distinct,
            order_by,
            separator,
        })
    }
}

fn unary(op: UnaryOp, expr: Expr) -> Expr {
    Expr::Unary {
        op,
        expr: Box::new(expr),
    }
}

fn is_null(expr: Expr, negated: bool) -> Expr {
    Expr::IsNull {
        expr: Box::new(expr),
        negated,
    }
}

fn is_bool(expr: Expr, value: bool, negated: bool) -> Expr {
    Expr::IsBool {
        expr: Box::new(expr),
        value,
        negated,
    }
}

fn func(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function {
        name: name.to_string(),
        args,
        distinct: false,
        star: false,
    }
}

fn column(table: Option<String>, name: String) -> Expr {
    Expr::Column { table, name }
}

pub fn sys_var(scope: VarScope, name: &str) -> Expr {
    Expr::SysVar {
        scope,
        name: name.to_ascii_lowercase(),
    }
}

pub fn str_lit(s: &str) -> Expr {
    Expr::Literal(Literal::String {
        bytes: s.as_bytes().to_vec(),
        charset: None,
    })
}

/// The last part of a dotted name, as written.
pub fn object_last(name: &sp::ObjectName) -> String {
    match name.0.last() {
        Some(sp::ObjectNamePart::Identifier(id)) => id.value.clone(),
        _ => String::new(),
    }
}

fn hex_bytes(h: &str) -> Option<Vec<u8>> {
    let padded = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..padded.len())
        .step_by(2)
        .map(|i| {
            padded
                .get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
        })
        .collect()
}

fn bit_bytes(b: &str) -> Option<Vec<u8>> {
    if !b.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    let pad = (8 - b.len() % 8) % 8;
    let bits: Vec<u8> = std::iter::repeat_n(b'0', pad).chain(b.bytes()).collect();
    Some(
        bits.chunks(8)
            .map(|c| c.iter().fold(0u8, |acc, &d| (acc << 1) | (d - b'0')))
            .collect(),
    )
}

fn binary_op(op: &sp::BinaryOperator) -> R<BinaryOp> {
    use sp::BinaryOperator as B;
    Ok(match op {
        B::Plus => BinaryOp::Add,
        B::Minus => BinaryOp::Sub,
        B::Multiply => BinaryOp::Mul,
        B::Divide => BinaryOp::Div,
        B::MyIntegerDivide | B::DuckIntegerDivide => BinaryOp::IntDiv,
        B::Modulo => BinaryOp::Mod,
        B::Eq => BinaryOp::Eq,
        B::Spaceship => BinaryOp::NullSafeEq,
        B::NotEq => BinaryOp::Ne,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::Le,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::Ge,
        B::And => BinaryOp::And,
        B::Or | B::StringConcat => BinaryOp::Or,
        B::Xor => BinaryOp::Xor,
        B::BitwiseAnd => BinaryOp::BitAnd,
        B::BitwiseOr => BinaryOp::BitOr,
        B::BitwiseXor | B::PGBitwiseXor => BinaryOp::BitXor,
        B::PGBitwiseShiftLeft => BinaryOp::Shl,
        B::PGBitwiseShiftRight => BinaryOp::Shr,
        _ => return Err(unsupported("this operator")),
    })
}

fn interval_unit(f: &sp::DateTimeField) -> R<IntervalUnit> {
    use sp::DateTimeField as F;
    Ok(match f {
        F::Microsecond | F::Microseconds => IntervalUnit::Microsecond,
        F::Second | F::Seconds => IntervalUnit::Second,
        F::Minute | F::Minutes => IntervalUnit::Minute,
        F::Hour | F::Hours => IntervalUnit::Hour,
        F::Day | F::Days => IntervalUnit::Day,
        F::Week(None) | F::Weeks => IntervalUnit::Week,
        F::Month | F::Months => IntervalUnit::Month,
        F::Quarter => IntervalUnit::Quarter,
        F::Year | F::Years => IntervalUnit::Year,
        _ => return Err(unsupported("this INTERVAL unit")),
    })
}

fn u64_of(n: i64) -> Option<u64> {
    u64::try_from(n).ok()
}

fn exact(info: &sp::ExactNumberInfo) -> (Option<u64>, Option<u64>) {
    match info {
        sp::ExactNumberInfo::None => (None, None),
        sp::ExactNumberInfo::Precision(p) => (Some(*p), None),
        sp::ExactNumberInfo::PrecisionAndScale(p, s) => (Some(*p), u64_of(*s)),
    }
}

fn char_len(l: &Option<sp::CharacterLength>) -> Option<u64> {
    match l {
        Some(sp::CharacterLength::IntegerLength { length, .. }) => Some(*length),
        _ => None,
    }
}

fn custom_name(t: &sp::DataType) -> Option<String> {
    match t {
        sp::DataType::Custom(name, _) => Some(object_last(name).to_ascii_uppercase()),
        _ => None,
    }
}

/// CAST / CONVERT target.
fn cast_type(t: &sp::DataType) -> R<CastType> {
    use sp::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger => CastType::Signed,
        D::Unsigned | D::UnsignedInteger => CastType::Unsigned,
        D::Decimal(i) | D::Numeric(i) | D::Dec(i) => {
            let (p, s) = exact(i);
            CastType::Decimal(p, s)
        }
        D::Double(_) | D::DoublePrecision | D::Real | D::Float(_) | D::Float8 => CastType::Double,
        D::Char(l) | D::Character(l) | D::Varchar(l) => CastType::Char(char_len(l), None),
        D::Nvarchar(l) => CastType::Char(char_len(l), Some("utf8mb3".into())),
        D::Binary(l) => CastType::Binary(*l),
        D::Date => CastType::Date,
        D::Datetime(p) | D::Timestamp(p, _) => CastType::DateTime(*p),
        D::Time(p, _) => CastType::Time(*p),
        D::JSON => CastType::Json,
        D::Int(None) | D::Integer(None) | D::BigInt(None) => CastType::Signed,
        _ => return Err(unsupported("this CAST type")),
    })
}

/// A column type (`charset`, `collate` and `zerofill` are filled by the caller from the
/// column options).
pub fn column_type(t: &sp::DataType) -> R<ColumnType> {
    use sp::DataType as D;
    let mut ct = ColumnType::plain(TypeName::Int);
    let (name, length, unsigned) = match t {
        D::TinyInt(l) => (TypeName::TinyInt, *l, false),
        D::TinyIntUnsigned(l) => (TypeName::TinyInt, *l, true),
        D::SmallInt(l) => (TypeName::SmallInt, *l, false),
        D::SmallIntUnsigned(l) => (TypeName::SmallInt, *l, true),
        D::MediumInt(l) => (TypeName::MediumInt, *l, false),
        D::MediumIntUnsigned(l) => (TypeName::MediumInt, *l, true),
        D::Int(l) | D::Integer(l) => (TypeName::Int, *l, false),
        D::IntUnsigned(l) | D::IntegerUnsigned(l) => (TypeName::Int, *l, true),
        D::BigInt(l) => (TypeName::BigInt, *l, false),
        D::BigIntUnsigned(l) => (TypeName::BigInt, *l, true),
        D::Bool | D::Boolean => (TypeName::Bool, None, false),
        D::Decimal(i) | D::Numeric(i) | D::Dec(i) | D::DecimalUnsigned(i) | D::DecUnsigned(i) => {
            let (p, s) = exact(i);
            ct.scale = s;
            (
                TypeName::Decimal,
                p,
                matches!(t, D::DecimalUnsigned(_) | D::DecUnsigned(_)),
            )
        }
        D::Float(i) | D::FloatUnsigned(i) => {
            let (p, s) = exact(i);
            ct.scale = s;
            (TypeName::Float, p, matches!(t, D::FloatUnsigned(_)))
        }
        D::Double(i) | D::DoubleUnsigned(i) => {
            let (p, s) = exact(i);
            ct.scale = s;
            (TypeName::Double, p, matches!(t, D::DoubleUnsigned(_)))
        }
        D::DoublePrecision | D::Real => (TypeName::Double, None, false),
        D::DoublePrecisionUnsigned | D::RealUnsigned => (TypeName::Double, None, true),
        D::Bit(l) => (TypeName::Bit, *l, false),
        D::Char(l) | D::Character(l) => (TypeName::Char, char_len(l), false),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            (TypeName::VarChar, char_len(l), false)
        }
        D::Binary(l) => (TypeName::Binary, *l, false),
        D::Varbinary(l) => (
            TypeName::VarBinary,
            match l {
                Some(sp::BinaryLength::IntegerLength { length }) => Some(*length),
                _ => None,
            },
            false,
        ),
        D::TinyText => (TypeName::TinyText, None, false),
        D::Text => (TypeName::Text, None, false),
        D::MediumText => (TypeName::MediumText, None, false),
        D::LongText => (TypeName::LongText, None, false),
        D::TinyBlob => (TypeName::TinyBlob, None, false),
        D::Blob(l) => (TypeName::Blob, *l, false),
        D::MediumBlob => (TypeName::MediumBlob, None, false),
        D::LongBlob => (TypeName::LongBlob, None, false),
        D::Date => (TypeName::Date, None, false),
        D::Datetime(p) => (TypeName::DateTime, *p, false),
        D::Timestamp(p, _) => (TypeName::Timestamp, *p, false),
        D::Time(p, _) => (TypeName::Time, *p, false),
        D::JSON => (TypeName::Json, None, false),
        D::Enum(members, _) => {
            for m in members {
                match m {
                    sp::EnumMember::Name(s) => ct.values.push(s.clone()),
                    sp::EnumMember::NamedValue(..) => return Err(unsupported("this ENUM")),
                }
            }
            (TypeName::Enum, None, false)
        }
        D::Set(values) => {
            ct.values = values.clone();
            (TypeName::Set, None, false)
        }
        D::Custom(_, args) if custom_name(t).as_deref() == Some("YEAR") => (
            TypeName::Year,
            args.first().and_then(|a| a.parse().ok()),
            false,
        ),
        _ => return Err(unsupported("this column type")),
    };
    ct.name = name;
    ct.length = length;
    ct.unsigned = unsigned;
    Ok(ct)
}

/// A frame bound: UNBOUNDED, CURRENT ROW, a number of rows (ROWS), or a number or an
/// INTERVAL (RANGE).
fn frame_bound(b: sp::WindowFrameBound, rows: bool) -> R<FrameBound> {
    let n = |e: Box<sp::Expr>| -> R<u64> {
        match *e {
            sp::Expr::Value(v) => match v.value {
                sp::Value::Number(n, _) => n.parse().map_err(|_| unsupported("this frame bound")),
                _ => Err(unsupported("this frame bound")),
            },
            _ => Err(unsupported("this frame bound")),
        }
    };
    let offset = |e: Box<sp::Expr>| -> R<RangeOffset> {
        let text = |v: &sp::Expr| match v {
            sp::Expr::Value(v) => match &v.value {
                sp::Value::Number(n, _) => Some(n.clone()),
                sp::Value::SingleQuotedString(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        };
        match *e {
            sp::Expr::Interval(iv) if iv.last_field.is_none() => {
                let unit = interval_unit(
                    iv.leading_field
                        .as_ref()
                        .ok_or_else(|| unsupported("this frame bound"))?,
                )?;
                let value = text(&iv.value).ok_or_else(|| unsupported("this frame bound"))?;
                Ok(RangeOffset {
                    value,
                    unit: Some(unit),
                })
            }
            other => Ok(RangeOffset {
                value: text(&other).ok_or_else(|| unsupported("this frame bound"))?,
                unit: None,
            }),
        }
    };
    Ok(match b {
        sp::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
        sp::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
        sp::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
        sp::WindowFrameBound::Preceding(Some(e)) if rows => FrameBound::Preceding(n(e)?),
        sp::WindowFrameBound::Following(Some(e)) if rows => FrameBound::Following(n(e)?),
        sp::WindowFrameBound::Preceding(Some(e)) => FrameBound::ValuePreceding(offset(e)?),
        sp::WindowFrameBound::Following(Some(e)) => FrameBound::ValueFollowing(offset(e)?),
    })
}
