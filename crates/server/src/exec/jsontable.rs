//! JSON_TABLE: the rows a JSON document makes through a COLUMNS clause (MySQL's table
//! function), a FROM item of a SELECT (select.rs `Source::Json`).
//!
//! INVARIANTS
//! - T1: everything but the document is checked once, when the statement is compiled
//!   (`JsonTableSpec::compile`): the paths parse (3143), the column names are distinct
//!   (1060), there are fewer than MAX_NESTED NESTED PATHs (3670), the types resolve (a string column without a character set takes the
//!   connection's collation, as MySQL's do), and each DEFAULT is JSON text that fits its
//!   column (1067 otherwise). The document is parsed at each evaluation (3141, 3146); a NULL
//!   document makes no rows.
//! - T2: one row source per match of the top path, in document order. A level without
//!   NESTED PATH makes one row per row source; a level with some makes, per row source, the
//!   rows of each nested path in turn with the columns of the others NULL, or, when none of
//!   them matches, one row with all of them NULL (MySQL's rule for sibling nested paths).
//! - T3: FOR ORDINALITY numbers a level's row sources from 1 within their parent's.
//! - T4: a PATH column: a JSON null is SQL NULL; no match answers ON EMPTY (3665 for ERROR);
//!   for a column that is not JSON, more than one match or an array or object answers ON
//!   ERROR (3666 for ERROR), and so does a scalar that the strict store into a column of
//!   the type refuses or warns about (3669 for ERROR); a JSON column takes several matches
//!   as one array. Each response is NULL unless given (no warning, as MySQL since 8.0.20).
//!   An EXISTS column is 1 or 0 in its type.
//! - T5: rows go to the caller's sink as they are made, which may stop them; only the
//!   document and one row are held.
//!
//! No latches: works on a document the caller owns.

use std::ops::Range;

use innoxide_sql::ast::{JsonTable, JtColumn, JtResponse, TypeName};
use innoxide_sql::error::*;
use innoxide_sql::types::json::{self, Json, Path};
use innoxide_sql::types::{self, Datum, Level, SqlMode, SqlType, Warnings};

use super::expr::{CExpr, Env};
use super::json::parse_arg;

/// The function's name in messages.
const NAME: &str = "json_table";

/// MySQL's bound on the row paths of one JSON_TABLE (its own and the NESTED PATHs).
const MAX_NESTED: usize = 16;

/// What a column holds when its path finds nothing (ON EMPTY) or what does not fit (ON
/// ERROR).
enum Response {
    Null,
    Default(Datum),
    Error,
}

/// A compiled column of the COLUMNS clause; `at` is its position in the row.
enum Col {
    Ordinality(usize),
    Path {
        at: usize,
        path: Path,
        exists: bool,
        on_empty: Response,
        on_error: Response,
    },
    /// `span`: the row positions of its columns and of those nested in it.
    Nested {
        path: Path,
        cols: Vec<Col>,
        span: Range<usize>,
    },
}

/// Why a JSON value does not go into a column (T4).
enum Misfit {
    /// Several values, an array or an object, for a column that is not JSON.
    Shape,
    /// A scalar the column's type does not take as it is.
    Value,
}

/// A JSON_TABLE's COLUMNS clause and row path, compiled (T1).
pub(crate) struct JsonTableSpec {
    path: Path,
    cols: Vec<Col>,
    /// (name, type) of each column, in row order.
    pub(crate) columns: Vec<(String, SqlType)>,
    mode: SqlMode,
}

impl JsonTableSpec {
    /// Compiles `jt`'s path and columns; `collation` is the connection's (T1).
    pub(crate) fn compile(
        jt: &JsonTable,
        collation: &str,
        mode: SqlMode,
    ) -> Result<JsonTableSpec, SqlError> {
        let nested = nested_paths(&jt.columns);
        if nested + 1 >= MAX_NESTED {
            return Err(SqlError::new(
                ER_JT_MAX_NESTED_PATH,
                &[&MAX_NESTED, &jt.alias],
            ));
        }
        let mut columns = Vec::new();
        let cols = compile_columns(&jt.columns, collation, mode, &mut columns)?;
        for (i, (n, _)) in columns.iter().enumerate() {
            if columns[..i].iter().any(|(m, _)| m.eq_ignore_ascii_case(n)) {
                return Err(SqlError::new(ER_DUP_FIELDNAME, &[n]));
            }
        }
        Ok(JsonTableSpec {
            path: path_of(&jt.path)?,
            cols,
            columns,
            mode,
        })
    }

    /// The rows of `doc` (T2), each handed to `sink` until it returns false (then false).
    pub(crate) fn rows(
        &self,
        doc: &Json,
        sink: &mut dyn FnMut(&[Datum]) -> Result<bool, SqlError>,
    ) -> Result<bool, SqlError> {
        let mut row = vec![Datum::Null; self.columns.len()];
        for (i, src) in self.path.select(doc).into_iter().enumerate() {
            if !self.level(&self.cols, src, i as u64 + 1, &mut row, sink)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The rows of row source `src` of a level with columns `cols`, number `ord` in its
    /// parent (T2, T3).
    fn level(
        &self,
        cols: &[Col],
        src: &Json,
        ord: u64,
        row: &mut Vec<Datum>,
        sink: &mut dyn FnMut(&[Datum]) -> Result<bool, SqlError>,
    ) -> Result<bool, SqlError> {
        let mut nested = false;
        for c in cols {
            match c {
                Col::Ordinality(at) => row[*at] = Datum::UInt(ord),
                Col::Path {
                    at, path, exists, ..
                } if *exists => {
                    let found = Json::Int(i64::from(!path.select(src).is_empty()));
                    let (name, ty) = &self.columns[*at];
                    row[*at] = convert(&found, ty, self.mode)
                        .map_err(|_| SqlError::new(ER_JT_VALUE_OUT_OF_RANGE, &[name]))?;
                }
                Col::Path {
                    at,
                    path,
                    on_empty,
                    on_error,
                    ..
                } => row[*at] = self.value(*at, path.select(src), on_empty, on_error)?,
                Col::Nested { .. } => nested = true,
            }
        }
        if !nested {
            return sink(row);
        }
        let mut made = false;
        for c in cols {
            let Col::Nested { path, cols, span } = c else {
                continue;
            };
            for (i, m) in path.select(src).into_iter().enumerate() {
                made = true;
                if !self.level(cols, m, i as u64 + 1, row, sink)? {
                    return Ok(false);
                }
            }
            row[span.clone()].iter_mut().for_each(|d| *d = Datum::Null);
        }
        if made {
            Ok(true)
        } else {
            sink(row)
        }
    }

    /// The value of PATH column `at`, which matched `found` (T4).
    fn value(
        &self,
        at: usize,
        found: Vec<&Json>,
        on_empty: &Response,
        on_error: &Response,
    ) -> Result<Datum, SqlError> {
        let (name, ty) = &self.columns[at];
        let got = match found.as_slice() {
            [] => {
                return respond(on_empty, || {
                    SqlError::new(ER_MISSING_JSON_TABLE_VALUE, &[name])
                })
            }
            [one] => convert(one, ty, self.mode),
            many if ty.name == TypeName::Json => {
                let all = Json::Array(many.iter().map(|j| (*j).clone()).collect());
                Ok(Datum::Bytes(all.to_text().into_bytes()))
            }
            _ => Err(Misfit::Shape),
        };
        match got {
            Ok(d) => Ok(d),
            Err(m) => respond(on_error, || {
                let ec = match m {
                    Misfit::Shape => ER_WRONG_JSON_TABLE_VALUE,
                    Misfit::Value => ER_JT_VALUE_OUT_OF_RANGE,
                };
                SqlError::new(ec, &[name])
            }),
        }
    }
}

/// A JSON_TABLE in a FROM clause: its columns and the document's expression, over the
/// joined row of the FROM items before it.
pub(crate) struct JsonSource {
    pub(crate) spec: JsonTableSpec,
    pub(crate) expr: CExpr,
    /// The expression reads a column of an earlier FROM item: the rows are made again for
    /// each joined row (else once per execution).
    pub(crate) lateral: bool,
}

impl JsonSource {
    /// The document for joined row `left` (None: SQL NULL, which makes no rows).
    pub(crate) fn document(
        &self,
        left: &[Datum],
        params: &[Datum],
        w: &mut Warnings,
    ) -> Result<Option<Json>, SqlError> {
        match self.expr.eval(&Env::new(left, params, self.spec.mode), w)? {
            Datum::Null => Ok(None),
            Datum::Bytes(b) => parse_arg(&b, 0, NAME).map(Some),
            _ => Err(SqlError::new(ER_INVALID_TYPE_FOR_JSON, &[&1, &NAME])),
        }
    }
}

/// How many NESTED PATHs `cols` holds, at any depth.
fn nested_paths(cols: &[JtColumn]) -> usize {
    cols.iter()
        .map(|c| match c {
            JtColumn::Nested { columns, .. } => 1 + nested_paths(columns),
            _ => 0,
        })
        .sum()
}

fn path_of(text: &str) -> Result<Path, SqlError> {
    json::parse_path(text).map_err(|pos| SqlError::new(ER_INVALID_JSON_PATH, &[&pos]))
}

fn compile_columns(
    cols: &[JtColumn],
    collation: &str,
    mode: SqlMode,
    out: &mut Vec<(String, SqlType)>,
) -> Result<Vec<Col>, SqlError> {
    let mut compiled = Vec::with_capacity(cols.len());
    for c in cols {
        compiled.push(match c {
            JtColumn::Ordinality(name) => {
                let mut ty = SqlType::simple(TypeName::BigInt);
                ty.unsigned = true;
                out.push((name.clone(), ty));
                Col::Ordinality(out.len() - 1)
            }
            JtColumn::Path {
                name,
                ty,
                path,
                exists,
                on_empty,
                on_error,
            } => {
                let ty = SqlType::from_ast(ty, name, None, Some(collation))?;
                let response = |r: &JtResponse| -> Result<Response, SqlError> {
                    Ok(match r {
                        JtResponse::Null => Response::Null,
                        JtResponse::Error => Response::Error,
                        JtResponse::Default(text) => {
                            let bad = || SqlError::new(ER_INVALID_DEFAULT, &[name]);
                            let v = json::parse(text.as_bytes()).map_err(|_| bad())?;
                            Response::Default(convert(&v, &ty, mode).map_err(|_| bad())?)
                        }
                    })
                };
                let col = Col::Path {
                    at: out.len(),
                    path: path_of(path)?,
                    exists: *exists,
                    on_empty: response(on_empty)?,
                    on_error: response(on_error)?,
                };
                out.push((name.clone(), ty));
                col
            }
            JtColumn::Nested { path, columns } => {
                let start = out.len();
                let cols = compile_columns(columns, collation, mode, out)?;
                Col::Nested {
                    path: path_of(path)?,
                    cols,
                    span: start..out.len(),
                }
            }
        });
    }
    Ok(compiled)
}

/// JSON value `v` as a value of column type `ty` (T4).
fn convert(v: &Json, ty: &SqlType, mode: SqlMode) -> Result<Datum, Misfit> {
    let d = match v {
        Json::Null => return Ok(Datum::Null),
        _ if ty.name == TypeName::Json => return Ok(Datum::Bytes(v.to_text().into_bytes())),
        Json::Array(_) | Json::Object(_) => return Err(Misfit::Shape),
        Json::Bool(_) if ty.is_string() => Datum::Bytes(v.to_text().into_bytes()),
        Json::Bool(b) => Datum::Int(i64::from(*b)),
        Json::Int(i) => Datum::Int(*i),
        Json::UInt(u) => Datum::UInt(*u),
        Json::Double(x) => Datum::Double(*x),
        Json::Decimal(x) => Datum::Decimal(x.clone()),
        Json::Str(s) => Datum::Bytes(s.clone().into_bytes()),
    };
    let strict = SqlMode(mode.0 | SqlMode::STRICT_ALL_TABLES);
    let mut w = Warnings::default();
    let stored = types::store(&d, ty, strict, (NAME, ""), 1, &mut w).map_err(|_| Misfit::Value)?;
    if w.0.iter().any(|x| x.level != Level::Note) {
        return Err(Misfit::Value);
    }
    Ok(types::load_owned(stored, ty))
}

/// Response `r`; `err` makes ERROR's error.
fn respond(r: &Response, err: impl FnOnce() -> SqlError) -> Result<Datum, SqlError> {
    match r {
        Response::Null => Ok(Datum::Null),
        Response::Default(d) => Ok(d.clone()),
        Response::Error => Err(err()),
    }
}
