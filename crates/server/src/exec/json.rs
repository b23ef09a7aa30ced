//! The JSON functions of MySQL 8.0: JSON_EXTRACT (and `->`, `->>`), JSON_VALUE (its RETURNING
//! type is a CAST around it, from the parser), JSON_UNQUOTE, JSON_QUOTE,
//! JSON_OBJECT, JSON_ARRAY, JSON_VALID, JSON_TYPE, JSON_KEYS, JSON_LENGTH, JSON_DEPTH,
//! JSON_CONTAINS, JSON_CONTAINS_PATH, JSON_SET, JSON_INSERT, JSON_REPLACE, JSON_REMOVE,
//! JSON_ARRAY_APPEND, JSON_ARRAY_INSERT, JSON_MERGE_PATCH, JSON_MERGE_PRESERVE (and the
//! deprecated JSON_MERGE), JSON_PRETTY, JSON_OVERLAPS, JSON_SEARCH, MEMBER OF and
//! CAST(... AS JSON). Values and paths are `innoxide_sql::types::json`'s.
//!
//! INVARIANTS
//! - A JSON result is a `Datum::Bytes` holding canonical JSON text, typed as a JSON column
//!   (`json_type`), so an enclosing JSON function reads it as JSON, not as a string.
//! - How an argument becomes a JSON value is decided when the call is compiled (`JsonFn`
//!   carries one bit per argument): a JSON-typed argument is parsed, a predicate or TRUE/FALSE
//!   becomes a JSON boolean, a number stays a number, any other string is a JSON string. A
//!   document argument (the first of most functions) must be JSON or a string holding a JSON
//!   text (3141 names the argument and the parser's message; 3146 for other types).
//! - Functions see SQL NULL themselves: NULL as a document or path gives NULL; NULL as a value
//!   to store is JSON null; a NULL member name is 3158.

use std::ops::RangeInclusive;

use innoxide_engine::Collation;
use innoxide_sql::ast::{BinaryOp, CastType, Expr, Literal};
use innoxide_sql::error::*;
use innoxide_sql::types::json::{self, ArrayIndex, Json, Leg, Path};
use innoxide_sql::types::{self, Datum, Level, SqlType, Warnings};

use super::expr::{CExpr, EType, Env};
use super::like::LikePattern;
use innoxide_sql::ast::TypeName;

/// Which JSON function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonOp {
    Extract,
    Unquote,
    Quote,
    Object,
    Array,
    Valid,
    Type,
    Keys,
    Length,
    Depth,
    Contains,
    ContainsPath,
    Set,
    Insert,
    Replace,
    Remove,
    ArrayAppend,
    ArrayInsert,
    MergePatch,
    MergePreserve,
    /// JSON_MERGE: JSON_MERGE_PRESERVE with a deprecation warning.
    Merge,
    Pretty,
    Overlaps,
    Search,
    MemberOf,
    Cast,
    /// `a op b` where a or b is JSON: both compared as JSON values.
    Compare(BinaryOp),
}

/// A JSON function and how its arguments become JSON values (bit i: argument i).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonFn {
    op: JsonOp,
    /// Arguments typed JSON (parsed, not taken as strings).
    json: u64,
    /// Arguments that are truth values (JSON true/false, not 1/0).
    boolean: u64,
}

/// The type of a JSON value in result metadata and to enclosing functions.
pub fn json_type() -> EType {
    EType::Column(Box::new(SqlType::simple(TypeName::Json)))
}

/// Whether an expression of type `t` is JSON.
pub fn is_json(t: &EType) -> bool {
    matches!(t, EType::Column(c) if c.name == TypeName::Json)
}

fn is_predicate(c: &CExpr, e: &Expr) -> bool {
    matches!(e, Expr::Literal(Literal::Bool(_)))
        || matches!(
            c,
            CExpr::Cmp(..)
                | CExpr::And(..)
                | CExpr::Or(..)
                | CExpr::Xor(..)
                | CExpr::IsNull(..)
                | CExpr::IsBool(..)
                | CExpr::In(..)
                | CExpr::InSet(..)
                | CExpr::Between(..)
                | CExpr::Like(..)
                | CExpr::LikeConst(..)
                | CExpr::Quantified(..)
                | CExpr::Unary(innoxide_sql::ast::UnaryOp::Not, _)
        )
}

/// The comparison `l op r` when `lt` or `rt` is JSON.
pub fn compare(op: BinaryOp, l: CExpr, lt: &EType, r: CExpr, rt: &EType) -> CExpr {
    let mut f = JsonFn {
        op: JsonOp::Compare(op),
        json: u64::from(is_json(lt)) | u64::from(is_json(rt)) << 1,
        boolean: 0,
    };
    for (i, c) in [&l, &r].into_iter().enumerate() {
        if matches!(
            c,
            CExpr::Cmp(..) | CExpr::And(..) | CExpr::Or(..) | CExpr::IsNull(..)
        ) {
            f.boolean |= 1 << i;
        }
    }
    CExpr::Func(super::expr::Func::Json(f), vec![l, r])
}

/// A JSON function by its lower-case name ("member of" for MEMBER OF, "cast_as_json" for
/// CAST(x AS JSON)): the function, its result type and the argument counts it accepts.
pub fn lookup(
    name: &str,
    types_: &[EType],
    args: &[CExpr],
    ast: &[Expr],
) -> Option<(JsonFn, EType, RangeInclusive<usize>)> {
    use JsonOp as J;
    let n = args.len();
    // Functions taking (path, value) pairs after the document accept only odd counts.
    let pairs = |min: usize| {
        if n >= min && n % 2 == 1 {
            n..=n
        } else {
            usize::MAX..=usize::MAX
        }
    };
    let text = EType::Str {
        coll: Collation::Utf8mb4Bin,
    };
    let int = EType::Int { unsigned: false };
    let (op, t, range) = match name {
        "json_extract" => (J::Extract, json_type(), 2..=usize::MAX),
        "json_unquote" => (J::Unquote, text, 1..=1),
        "json_quote" => (J::Quote, text, 1..=1),
        "json_object" => (
            J::Object,
            json_type(),
            if n.is_multiple_of(2) {
                n..=n
            } else {
                usize::MAX..=usize::MAX
            },
        ),
        "json_array" => (J::Array, json_type(), 0..=usize::MAX),
        "json_valid" => (J::Valid, int, 1..=1),
        "json_type" => (J::Type, text, 1..=1),
        "json_keys" => (J::Keys, json_type(), 1..=2),
        "json_length" => (J::Length, int, 1..=2),
        "json_depth" => (J::Depth, int, 1..=1),
        "json_contains" => (J::Contains, int, 2..=3),
        "json_contains_path" => (J::ContainsPath, int, 3..=usize::MAX),
        "json_set" => (J::Set, json_type(), pairs(3)),
        "json_insert" => (J::Insert, json_type(), pairs(3)),
        "json_replace" => (J::Replace, json_type(), pairs(3)),
        "json_remove" => (J::Remove, json_type(), 2..=usize::MAX),
        "json_array_append" => (J::ArrayAppend, json_type(), pairs(3)),
        "json_array_insert" => (J::ArrayInsert, json_type(), pairs(3)),
        "json_merge_patch" => (J::MergePatch, json_type(), 2..=usize::MAX),
        "json_merge_preserve" => (J::MergePreserve, json_type(), 2..=usize::MAX),
        "json_merge" => (J::Merge, json_type(), 2..=usize::MAX),
        "json_pretty" => (J::Pretty, text, 1..=1),
        "json_overlaps" => (J::Overlaps, int, 2..=2),
        "json_search" => (J::Search, json_type(), 3..=usize::MAX),
        "member of" => (J::MemberOf, int, 2..=2),
        "cast_as_json" => (J::Cast, json_type(), 1..=1),
        _ => return None,
    };
    let mut f = JsonFn {
        op,
        json: 0,
        boolean: 0,
    };
    for (i, (t, c)) in types_.iter().zip(args).enumerate().take(64) {
        if is_json(t) {
            f.json |= 1 << i;
        }
        if ast.get(i).is_some_and(|e| is_predicate(c, e)) {
            f.boolean |= 1 << i;
        }
    }
    Some((f, t, range))
}

impl JsonOp {
    /// The name MySQL's messages give the function.
    fn name(self) -> &'static str {
        use JsonOp as J;
        match self {
            J::Extract => "json_extract",
            J::Unquote => "json_unquote",
            J::Quote => "json_quote",
            J::Object => "json_object",
            J::Array => "json_array",
            J::Valid => "json_valid",
            J::Type => "json_type",
            J::Keys => "json_keys",
            J::Length => "json_length",
            J::Depth => "json_depth",
            J::Contains => "json_contains",
            J::ContainsPath => "json_contains_path",
            J::Set => "json_set",
            J::Insert => "json_insert",
            J::Replace => "json_replace",
            J::Remove => "json_remove",
            J::ArrayAppend => "json_array_append",
            J::ArrayInsert => "json_array_insert",
            J::MergePatch => "json_merge_patch",
            J::MergePreserve => "json_merge_preserve",
            J::Merge => "json_merge",
            J::Pretty => "json_pretty",
            J::Overlaps => "json_overlaps",
            J::Search => "json_search",
            J::MemberOf => "member of",
            J::Cast | J::Compare(_) => "cast_as_json",
        }
    }
}

/// The arguments of one call, with the conversions of the module invariants.
struct Args<'a> {
    f: JsonFn,
    v: &'a [Datum],
}

impl Args<'_> {
    fn is_json(&self, i: usize) -> bool {
        i < 64 && self.f.json & (1 << i) != 0
    }

    fn parse_text(&self, i: usize, b: &[u8]) -> Result<Json, SqlError> {
        parse_arg(b, i, self.f.op.name())
    }

    /// Argument `i` as a JSON document (None: SQL NULL).
    fn doc(&self, i: usize) -> Result<Option<Json>, SqlError> {
        match &self.v[i] {
            Datum::Null => Ok(None),
            Datum::Bytes(b) => self.parse_text(i, b).map(Some),
            _ => Err(SqlError::new(
                ER_INVALID_TYPE_FOR_JSON,
                &[&(i + 1), &self.f.op.name()],
            )),
        }
    }

    /// Argument `i` as a value to put into a document.
    fn value(&self, i: usize) -> Result<Json, SqlError> {
        let d = &self.v[i];
        if i < 64 && self.f.boolean & (1 << i) != 0 && !d.is_null() {
            return Ok(Json::Bool(d.truth() == Some(true)));
        }
        Ok(match d {
            Datum::Null => Json::Null,
            Datum::Bytes(b) if self.is_json(i) => self.parse_text(i, b)?,
            Datum::Int(x) => Json::Int(*x),
            Datum::UInt(x) => Json::UInt(*x),
            Datum::Double(x) => Json::Double(*x),
            Datum::Decimal(x) => Json::Decimal(x.clone()),
            other => Json::Str(self.string(other)),
        })
    }

    fn string(&self, d: &Datum) -> String {
        String::from_utf8_lossy(&d.to_text().unwrap_or_default()).into_owned()
    }

    /// Argument `i` as a path (None: SQL NULL); `wild_ok`: may it select several values.
    fn path(&self, i: usize, wild_ok: bool) -> Result<Option<Path>, SqlError> {
        if self.v[i].is_null() {
            return Ok(None);
        }
        let p = json::parse_path(&self.string(&self.v[i]))
            .map_err(|pos| SqlError::new(ER_INVALID_JSON_PATH, &[&pos]))?;
        if !wild_ok && p.is_wild() {
            return Err(SqlError::new(ER_INVALID_JSON_PATH_WILDCARD, &[]));
        }
        Ok(Some(p))
    }

    /// The paths of arguments `from..` (None if one is NULL).
    fn paths(&self, from: usize, wild_ok: bool) -> Result<Option<Vec<Path>>, SqlError> {
        let mut out = Vec::with_capacity(self.v.len().saturating_sub(from));
        for i in from..self.v.len() {
            match self.path(i, wild_ok)? {
                Some(p) => out.push(p),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// 'one' or 'all' (true: all) at argument `i`.
    fn one_or_all(&self, i: usize) -> Result<Option<bool>, SqlError> {
        if self.v[i].is_null() {
            return Ok(None);
        }
        match self.string(&self.v[i]).to_ascii_lowercase().as_str() {
            "one" => Ok(Some(false)),
            "all" => Ok(Some(true)),
            _ => Err(SqlError::new(
                ER_JSON_BAD_ONE_OR_ALL_ARG,
                &[&self.f.op.name()],
            )),
        }
    }
}

/// A compiled JSON_VALUE(doc, path [RETURNING type] [on_empty] [on_error]) (MySQL 8.0.21):
/// the one value the path finds, as the RETURNING type (VARCHAR(512), utf8mb4_bin, without
/// one: a string as its text, anything else as its JSON text). A NULL document or path is
/// NULL, and so is a JSON null; a document that is not JSON is 3141. No value answers ON
/// EMPTY (ERROR: 3966); several values, an array or an object for a type that is neither a
/// string nor JSON, or a value the type does not take as it is (CAST's warnings) answer ON
/// ERROR (ERROR: 3967 for several, else 1690 naming the type), with those warnings kept.
/// Each answer is NULL unless given; a DEFAULT is CAST to the type.
#[derive(Clone, Debug)]
pub struct JsonValueFn {
    pub doc: CExpr,
    pub path: CExpr,
    pub to: Option<CastType>,
    pub on_empty: OnValue,
    pub on_error: OnValue,
}

/// An ON EMPTY / ON ERROR answer of JSON_VALUE.
#[derive(Clone, Debug)]
pub enum OnValue {
    Null,
    Default(CExpr),
    Error,
}

/// The longest string JSON_VALUE returns without RETURNING.
const VALUE_CHARS: usize = 512;

impl JsonValueFn {
    pub fn children(&self) -> Vec<&CExpr> {
        let mut v = vec![&self.doc, &self.path];
        for r in [&self.on_empty, &self.on_error] {
            if let OnValue::Default(d) = r {
                v.push(d);
            }
        }
        v
    }

    pub fn eval(&self, env: &Env<'_>, w: &mut Warnings) -> Result<Datum, SqlError> {
        const NAME: &str = "json_value";
        let doc = match self.doc.eval(env, w)? {
            Datum::Null => return Ok(Datum::Null),
            Datum::Bytes(b) => parse_arg(&b, 0, NAME)?,
            _ => return Err(SqlError::new(ER_INVALID_TYPE_FOR_JSON, &[&1, &NAME])),
        };
        let path = match self.path.eval(env, w)? {
            Datum::Null => return Ok(Datum::Null),
            p => json::parse_path(&String::from_utf8_lossy(&p.to_text().unwrap_or_default()))
                .map_err(|pos| SqlError::new(ER_INVALID_JSON_PATH, &[&pos]))?,
        };
        let found = path.select(&doc);
        let v = match found.as_slice() {
            [] => {
                return self.answer(&self.on_empty, env, w, || {
                    SqlError::new(ER_MISSING_JSON_VALUE, &[&NAME])
                })
            }
            [one] => *one,
            _ => {
                return self.answer(&self.on_error, env, w, || {
                    SqlError::new(ER_MULTIPLE_JSON_VALUES, &[&NAME])
                })
            }
        };
        let text = |v: &Json| match v {
            Json::Str(s) => s.clone().into_bytes(),
            other => other.to_text().into_bytes(),
        };
        let mut cw = Warnings::default();
        let got = match (v, &self.to) {
            (Json::Null, _) => Ok(Datum::Null),
            (_, Some(CastType::Json)) => Ok(out(v)),
            (_, None) => {
                let t = text(v);
                if String::from_utf8_lossy(&t).chars().count() > VALUE_CHARS {
                    Err(None)
                } else {
                    Ok(Datum::Bytes(t))
                }
            }
            (Json::Array(_) | Json::Object(_), Some(t)) if !matches!(t, CastType::Char(..)) => {
                Err(None)
            }
            (_, Some(t)) => {
                let d = match v {
                    Json::Bool(b) if !matches!(t, CastType::Char(..)) => Datum::Int(i64::from(*b)),
                    Json::Int(i) => Datum::Int(*i),
                    Json::UInt(u) => Datum::UInt(*u),
                    Json::Double(x) => Datum::Double(*x),
                    Json::Decimal(x) => Datum::Decimal(x.clone()),
                    other => Datum::Bytes(text(other)),
                };
                match types::cast(&d, t, &mut cw) {
                    Ok(r) if cw.0.iter().all(|x| x.level == Level::Note) => Ok(r),
                    Ok(_) => Err(None),
                    Err(e) => Err(Some(e)),
                }
            }
        };
        match got {
            Ok(d) => Ok(d),
            Err(e) => {
                if !matches!(self.on_error, OnValue::Error) {
                    w.0.extend(cw.0);
                    if let Some(e) = e {
                        w.push_error(Level::Warning, e);
                    }
                }
                self.answer(&self.on_error, env, w, || {
                    SqlError::new(ER_DATA_OUT_OF_RANGE, &[&self.type_name(), &NAME])
                })
            }
        }
    }

    /// Answer `on`: NULL, its DEFAULT as the type, or the error `err` makes.
    fn answer(
        &self,
        on: &OnValue,
        env: &Env<'_>,
        w: &mut Warnings,
        err: impl FnOnce() -> SqlError,
    ) -> Result<Datum, SqlError> {
        match on {
            OnValue::Null => Ok(Datum::Null),
            OnValue::Error => Err(err()),
            OnValue::Default(e) => {
                let d = e.eval(env, w)?;
                match &self.to {
                    Some(CastType::Json) | None => {
                        Ok(Datum::Bytes(d.to_text().unwrap_or_default()))
                    }
                    Some(t) => types::cast(&d, t, w),
                }
            }
        }
    }

    /// The RETURNING type as 1690 names it.
    fn type_name(&self) -> &'static str {
        match &self.to {
            None | Some(CastType::Char(..)) => "CHAR",
            Some(CastType::Signed) => "BIGINT",
            Some(CastType::Unsigned) => "BIGINT UNSIGNED",
            Some(CastType::Decimal(..)) => "DECIMAL",
            Some(CastType::Double) => "DOUBLE",
            Some(CastType::Binary(_)) => "BINARY",
            Some(CastType::Date) => "DATE",
            Some(CastType::DateTime(_)) => "DATETIME",
            Some(CastType::Time(_)) => "TIME",
            Some(CastType::Json) => "JSON",
        }
    }
}

/// JSON text `b`, argument `i` (from 0) of function `func`: 3141 naming them if it does not
/// parse, 3157 if it nests too deep.
pub fn parse_arg(b: &[u8], i: usize, func: &str) -> Result<Json, SqlError> {
    json::parse(b).map_err(|e| {
        if e.too_deep {
            SqlError::new(ER_JSON_DOCUMENT_TOO_DEEP, &[])
        } else {
            SqlError::new(
                ER_INVALID_JSON_TEXT_IN_PARAM,
                &[&(i + 1), &func, &e.message, &e.offset],
            )
        }
    })
}

fn out(j: &Json) -> Datum {
    Datum::Bytes(j.to_text().into_bytes())
}

fn truth(b: bool) -> Datum {
    Datum::Int(i64::from(b))
}

/// Evaluates a JSON function on its (possibly NULL) arguments.
pub fn call(f: JsonFn, v: &[Datum], w: &mut Warnings) -> Result<Datum, SqlError> {
    use JsonOp as J;
    let a = Args { f, v };
    // The document, for functions that take one first.
    macro_rules! doc {
        () => {
            match a.doc(0)? {
                Some(d) => d,
                None => return Ok(Datum::Null),
            }
        };
    }
    Ok(match f.op {
        J::Object => {
            let mut members = Vec::with_capacity(v.len() / 2);
            for i in (0..v.len()).step_by(2) {
                if v[i].is_null() {
                    return Err(SqlError::new(ER_JSON_DOCUMENT_NULL_KEY, &[]));
                }
                members.push((a.string(&v[i]), a.value(i + 1)?));
            }
            out(&Json::object(members))
        }
        J::Array => out(&Json::Array(
            (0..v.len()).map(|i| a.value(i)).collect::<Result<_, _>>()?,
        )),
        J::Cast => match &v[0] {
            Datum::Null => Datum::Null,
            Datum::Bytes(b) if !a.is_json(0) && f.boolean & 1 == 0 => out(&a.parse_text(0, b)?),
            _ => out(&a.value(0)?),
        },
        J::Quote => match &v[0] {
            Datum::Null => Datum::Null,
            Datum::Bytes(b) => Datum::Bytes(json::quote(&String::from_utf8_lossy(b)).into_bytes()),
            _ => return Err(SqlError::new(ER_INCORRECT_TYPE, &[&1, &"json_quote"])),
        },
        J::Unquote => match &v[0] {
            Datum::Null => Datum::Null,
            Datum::Bytes(b) if a.is_json(0) => match a.parse_text(0, b)? {
                Json::Str(s) => Datum::Bytes(s.into_bytes()),
                other => out(&other),
            },
            Datum::Bytes(b) if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' => {
                match a.parse_text(0, b)? {
                    Json::Str(s) => Datum::Bytes(s.into_bytes()),
                    other => out(&other),
                }
            }
            other => Datum::Bytes(other.to_text().unwrap_or_default()),
        },
        J::Valid => match &v[0] {
            Datum::Null => Datum::Null,
            Datum::Bytes(b) => truth(a.is_json(0) || json::parse(b).is_ok()),
            _ => truth(false),
        },
        J::Extract => {
            let d = doc!();
            let Some(paths) = a.paths(1, true)? else {
                return Ok(Datum::Null);
            };
            let wrap = paths.len() > 1 || paths.iter().any(Path::is_wild);
            let mut found: Vec<Json> = Vec::new();
            for p in &paths {
                found.extend(p.select(&d).into_iter().cloned());
            }
            match (wrap, found.len()) {
                (_, 0) => Datum::Null,
                (false, _) => out(&found[0]),
                (true, _) => out(&Json::Array(found)),
            }
        }
        J::Type => out_text(doc!().type_name()),
        J::Depth => Datum::Int(doc!().depth() as i64),
        J::Keys | J::Length => {
            let d = doc!();
            let target = match v.len() {
                1 => Some(&d),
                _ => match a.path(1, false)? {
                    None => return Ok(Datum::Null),
                    Some(p) => p.select(&d).into_iter().next(),
                },
            };
            match (f.op, target) {
                (_, None) => Datum::Null,
                (J::Length, Some(t)) => Datum::Int(t.length() as i64),
                (_, Some(Json::Object(m))) => out(&Json::Array(
                    m.iter().map(|(k, _)| Json::Str(k.clone())).collect(),
                )),
                _ => Datum::Null,
            }
        }
        J::Contains => {
            let (Some(d), Some(c)) = (a.doc(0)?, a.doc(1)?) else {
                return Ok(Datum::Null);
            };
            let target = match v.len() {
                2 => Some(&d),
                _ => match a.path(2, false)? {
                    None => return Ok(Datum::Null),
                    Some(p) => p.select(&d).into_iter().next(),
                },
            };
            match target {
                Some(t) => truth(t.contains(&c)),
                None => Datum::Null,
            }
        }
        J::ContainsPath => {
            let d = doc!();
            let Some(all) = a.one_or_all(1)? else {
                return Ok(Datum::Null);
            };
            let Some(paths) = a.paths(2, true)? else {
                return Ok(Datum::Null);
            };
            let mut hits = paths.iter().map(|p| !p.select(&d).is_empty());
            truth(if all {
                hits.all(|h| h)
            } else {
                hits.any(|h| h)
            })
        }
        J::Set | J::Insert | J::Replace | J::ArrayAppend | J::ArrayInsert => {
            let mut d = doc!();
            for i in (1..v.len()).step_by(2) {
                let Some(p) = a.path(i, false)? else {
                    return Ok(Datum::Null);
                };
                let val = a.value(i + 1)?;
                match f.op {
                    J::Set => set(&mut d, &p, val, true, true),
                    J::Insert => set(&mut d, &p, val, true, false),
                    J::Replace => set(&mut d, &p, val, false, true),
                    J::ArrayAppend => {
                        if let Some(t) = p.select_mut(&mut d) {
                            match t {
                                Json::Array(items) => items.push(val),
                                other => {
                                    let old = std::mem::replace(other, Json::Null);
                                    *other = Json::Array(vec![old, val]);
                                }
                            }
                        }
                    }
                    _ => array_insert(&mut d, &p, val)?,
                }
            }
            out(&d)
        }
        J::Remove => {
            let mut d = doc!();
            let Some(paths) = a.paths(1, false)? else {
                return Ok(Datum::Null);
            };
            for p in &paths {
                remove(&mut d, p)?;
            }
            out(&d)
        }
        J::MergePatch | J::MergePreserve | J::Merge => {
            if f.op == J::Merge {
                w.push(
                    Level::Warning,
                    ER_WARN_DEPRECATED_SYNTAX,
                    &[&"JSON_MERGE", &"JSON_MERGE_PRESERVE/JSON_MERGE_PATCH"],
                );
            }
            let mut acc: Option<Json> = None;
            for i in 0..v.len() {
                let next = a.doc(i)?;
                acc = match (acc, next, f.op) {
                    // MERGE_PATCH: NULL stays NULL unless a later patch is not an object.
                    (_, Some(n), J::MergePatch) if !matches!(n, Json::Object(_)) => Some(n),
                    (None, Some(n), J::MergePatch) if i == 0 => Some(n),
                    (Some(x), Some(n), J::MergePatch) => Some(merge_patch(x, n)),
                    (_, _, J::MergePatch) => None,
                    (None, Some(n), _) if i == 0 => Some(n),
                    (Some(x), Some(n), _) => Some(merge_preserve(x, n)),
                    _ => return Ok(Datum::Null),
                };
            }
            acc.as_ref().map_or(Datum::Null, out)
        }
        J::Pretty => out_text(&doc!().to_pretty()),
        J::Overlaps => {
            let (Some(x), Some(y)) = (a.doc(0)?, a.doc(1)?) else {
                return Ok(Datum::Null);
            };
            truth(x.overlaps(&y))
        }
        J::MemberOf => {
            if v[0].is_null() {
                return Ok(Datum::Null);
            }
            let Some(arr) = a.doc(1)? else {
                return Ok(Datum::Null);
            };
            let x = a.value(0)?;
            truth(match &arr {
                Json::Array(items) => items.iter().any(|e| e.equals(&x)),
                other => other.equals(&x),
            })
        }
        J::Search => search(&a)?,
        J::Compare(op) => {
            let (x, y) = (&v[0], &v[1]);
            if x.is_null() || y.is_null() {
                return Ok(match op {
                    BinaryOp::NullSafeEq => truth(x.is_null() && y.is_null()),
                    _ => Datum::Null,
                });
            }
            let o = a.value(0)?.compare(&a.value(1)?);
            truth(match op {
                BinaryOp::Eq | BinaryOp::NullSafeEq => o.is_eq(),
                BinaryOp::Ne => o.is_ne(),
                BinaryOp::Lt => o.is_lt(),
                BinaryOp::Le => o.is_le(),
                BinaryOp::Gt => o.is_gt(),
                _ => o.is_ge(),
            })
        }
    })
}

fn out_text(s: &str) -> Datum {
    Datum::Bytes(s.as_bytes().to_vec())
}

/// JSON_SET (insert and replace), JSON_INSERT (insert only), JSON_REPLACE (replace only) of
/// one path: a member of an object, a cell of an array (a position past the end appends), or
/// a non-array treated as an array of itself ([0] is the value, a later cell wraps it).
fn set(doc: &mut Json, p: &Path, val: Json, insert: bool, replace: bool) {
    let Some((last, parent)) = p.legs.split_last() else {
        if replace {
            *doc = val;
        }
        return;
    };
    let parent = Path {
        legs: parent.to_vec(),
    };
    let Some(target) = parent.select_mut(doc) else {
        return;
    };
    match (last, target) {
        (Leg::Member(k), t @ Json::Object(_)) => {
            let exists = t.member(k).is_some();
            if (exists && replace) || (!exists && insert) {
                t.insert_member(k.clone(), val);
            }
        }
        (Leg::Index(i), Json::Array(items)) => match i.resolve(items.len()) {
            Some(n) if n < items.len() && replace => items[n] = val,
            Some(n) if n >= items.len() && insert => items.push(val),
            _ => {}
        },
        (Leg::Index(i), other) => {
            if i.resolve(1) == Some(0) {
                if replace {
                    *other = val;
                }
            } else if insert && matches!(i, ArrayIndex::FromStart(_)) {
                let old = std::mem::replace(other, Json::Null);
                *other = Json::Array(vec![old, val]);
            }
        }
        _ => {}
    }
}

/// JSON_ARRAY_INSERT of one path, which must name an array cell (3165).
fn array_insert(doc: &mut Json, p: &Path, val: Json) -> Result<(), SqlError> {
    let Some((Leg::Index(i), parent)) = p.legs.split_last() else {
        return Err(SqlError::new(ER_INVALID_JSON_PATH_ARRAY_CELL, &[]));
    };
    let parent = Path {
        legs: parent.to_vec(),
    };
    if let Some(Json::Array(items)) = parent.select_mut(doc) {
        let n = i.resolve(items.len()).unwrap_or(0).min(items.len());
        items.insert(n, val);
    }
    Ok(())
}

/// JSON_REMOVE of one path: not `$` itself (3153).
fn remove(doc: &mut Json, p: &Path) -> Result<(), SqlError> {
    let Some((last, parent)) = p.legs.split_last() else {
        return Err(SqlError::new(ER_JSON_VACUOUS_PATH, &[]));
    };
    let parent = Path {
        legs: parent.to_vec(),
    };
    match (last, parent.select_mut(doc)) {
        (Leg::Member(k), Some(Json::Object(m))) => m.retain(|(key, _)| key != k),
        (Leg::Index(i), Some(Json::Array(items))) => {
            if let Some(n) = i.resolve(items.len()).filter(|n| *n < items.len()) {
                items.remove(n);
            }
        }
        _ => {}
    }
    Ok(())
}

/// JSON_MERGE_PRESERVE of two values: arrays concatenate, objects merge (values of a shared
/// key merged in turn), anything else is taken as an array of itself.
fn merge_preserve(a: Json, b: Json) -> Json {
    match (a, b) {
        (Json::Object(mut x), Json::Object(y)) => {
            for (k, v) in y {
                match x.binary_search_by(|(key, _)| json::key_order(key, &k)) {
                    Ok(i) => {
                        let old = std::mem::replace(&mut x[i].1, Json::Null);
                        x[i].1 = merge_preserve(old, v);
                    }
                    Err(i) => x.insert(i, (k, v)),
                }
            }
            Json::Object(x)
        }
        (Json::Array(mut x), Json::Array(y)) => {
            x.extend(y);
            Json::Array(x)
        }
        (Json::Array(mut x), y) => {
            x.push(y);
            Json::Array(x)
        }
        (x, Json::Array(y)) => {
            let mut items = Vec::with_capacity(y.len() + 1);
            items.push(x);
            items.extend(y);
            Json::Array(items)
        }
        (x, y) => Json::Array(vec![x, y]),
    }
}

/// JSON_MERGE_PATCH of two values (RFC 7396): a patch object changes the target member by
/// member (null removes one); any other patch replaces the target.
fn merge_patch(target: Json, patch: Json) -> Json {
    let Json::Object(members) = patch else {
        return patch;
    };
    let mut t = match target {
        o @ Json::Object(_) => o,
        _ => Json::Object(Vec::new()),
    };
    for (k, v) in members {
        if v == Json::Null {
            if let Json::Object(m) = &mut t {
                m.retain(|(key, _)| *key != k);
            }
            continue;
        }
        let old = t.member(&k).cloned().unwrap_or(Json::Null);
        t.insert_member(k, merge_patch(old, v));
    }
    t
}

/// JSON_SEARCH(doc, 'one'|'all', pattern [, escape [, path ...]]): the paths of the string
/// scalars matching the LIKE pattern (utf8mb4_bin comparison is case-sensitive; MySQL
/// compares with the pattern's collation, which for a literal is case-insensitive).
fn search(a: &Args<'_>) -> Result<Datum, SqlError> {
    let Some(d) = a.doc(0)? else {
        return Ok(Datum::Null);
    };
    let Some(all) = a.one_or_all(1)? else {
        return Ok(Datum::Null);
    };
    if a.v[2].is_null() {
        return Ok(Datum::Null);
    }
    let pattern = a.v[2].to_text().unwrap_or_default();
    let esc = match a.v.get(3) {
        Some(Datum::Null) | None => Some('\\'),
        Some(e) => a.string(e).chars().next().or(Some('\\')),
    };
    let scopes = match a.paths(4, true)? {
        Some(p) if !p.is_empty() => p,
        Some(_) => vec![Path { legs: Vec::new() }],
        None => return Ok(Datum::Null),
    };
    let pat = LikePattern::new(&pattern, esc, Collation::Utf8mb40900AiCi);
    let mut found: Vec<String> = Vec::new();
    for scope in &scopes {
        for start in scope.select(&d) {
            // The path to `start` is only known for the whole document; search from the
            // root and keep the matches under a selected value.
            let mut hits = Vec::new();
            walk(&d, "$".to_string(), &mut |path, v| {
                if let Json::Str(s) = v {
                    if pat.matches(s.as_bytes()) {
                        hits.push((path.to_string(), v as *const Json));
                    }
                }
            });
            let mut under = Vec::new();
            walk(start, String::new(), &mut |_, v| {
                under.push(v as *const Json)
            });
            for (p, ptr) in hits {
                if under.contains(&ptr) && !found.contains(&p) {
                    found.push(p);
                }
            }
        }
        if !all && !found.is_empty() {
            break;
        }
    }
    Ok(match (all, found.len()) {
        (_, 0) => Datum::Null,
        (false, _) | (true, 1) => out(&Json::Str(found.swap_remove(0))),
        (true, _) => out(&Json::Array(found.into_iter().map(Json::Str).collect())),
    })
}

/// Visits `v` and everything in it, in document order, with the path to each.
fn walk<'a>(v: &'a Json, path: String, f: &mut dyn FnMut(&str, &'a Json)) {
    f(&path, v);
    match v {
        Json::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                walk(x, format!("{path}[{i}]"), f);
            }
        }
        Json::Object(m) => {
            for (k, x) in m {
                let key = if k.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && k.chars().next().is_some_and(|c| !c.is_ascii_digit())
                {
                    k.clone()
                } else {
                    json::quote(k)
                };
                walk(x, format!("{path}.{key}"), f);
            }
        }
        _ => {}
    }
}
