//! Assignment to a column (INSERT/UPDATE): converting a `Datum` to the column's engine `Value`
//! with MySQL's checks, and the reverse (`load`).
//!
//! INVARIANTS
//! - Under strict mode (STRICT_TRANS_TABLES/STRICT_ALL_TABLES) every lossy conversion is an
//!   error; otherwise the value is adjusted (clamped, truncated, zeroed) and a warning with
//!   the same code is recorded. Exceptions as in MySQL: rounding a DECIMAL to the column's
//!   scale is a Note 1265, never an error; trailing spaces cut from a too-long string are
//!   silent (CHAR) or a Note (VARCHAR/TEXT).
//! - Codes: 1264 out of range; 1366 "Incorrect <type> value" (not a number / bad UTF-8);
//!   1265 "Data truncated" (trailing garbage, bad ENUM/SET member, bad date when not strict);
//!   1406 "Data too long" (strict, strings); 1292 "Incorrect date value ... for column" (strict,
//!   temporal).
//! - The `Value` returned is exactly what `innoxide_engine::dict::schema::encode` accepts for
//!   `ty.storage()`; `load(store(x))` gives back the stored value. NULL stays NULL (NOT NULL
//!   is the executor's check).
//! - Lengths of character columns count characters (UTF-8) for CHAR/VARCHAR and bytes for
//!   TEXT/BLOB sizes; CHAR drops trailing spaces when stored (PAD SPACE), BINARY(n) pads 0x00.
//! - Strings are taken to be in the column's character set already (no conversion from the
//!   connection character set yet); utf8mb4/utf8mb3 columns reject invalid UTF-8 and
//!   utf8mb3 rejects 4-byte characters.

use innoxide_engine::dict::schema::{self, ColumnDef, ColumnKind};
use innoxide_engine::Value;

use super::charset::{latin1_byte, latin1_to_utf8, utf8_to_latin1};
use super::datum::Datum;
use super::decimal::{Decimal, DecimalError, Fit, MAX_PRECISION};
use super::json;
use super::num::{format_float, scan, scan_f64};
use super::sql_type::SqlType;
use super::temporal::{
    self, date_problem, number_to_datetime, parse_datetime, parse_time_micros, year_from_int,
    DateTime, Time, TIME_MAX_MICROS,
};
use super::warnings::{incorrect_temporal_for_column, Level, Warnings};
use super::SqlMode;
use crate::ast::TypeName;
use crate::error::{
    SqlError, ER_DATA_TOO_LONG, ER_INVALID_JSON_TEXT, ER_JSON_DOCUMENT_TOO_DEEP,
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, ER_WARN_DATA_OUT_OF_RANGE, WARN_DATA_TRUNCATED,
};

struct Cx<'a> {
    mode: SqlMode,
    col: &'a str,
    row: u64,
    w: &'a mut Warnings,
}

impl Cx<'_> {
    /// Strict: the error; otherwise a warning and go on.
    fn problem(&mut self, e: SqlError) -> Result<(), SqlError> {
        if self.mode.strict() {
            Err(e)
        } else {
            self.w.push_error(Level::Warning, e);
            Ok(())
        }
    }

    fn out_of_range(&mut self) -> Result<(), SqlError> {
        let e = SqlError::new(ER_WARN_DATA_OUT_OF_RANGE, &[&self.col, &self.row]);
        self.problem(e)
    }

    fn truncated_err(&self) -> SqlError {
        SqlError::new(WARN_DATA_TRUNCATED, &[&self.col, &self.row])
    }

    fn truncated(&mut self) -> Result<(), SqlError> {
        let e = self.truncated_err();
        self.problem(e)
    }

    fn incorrect(&mut self, kind: &str, value: &str) -> Result<(), SqlError> {
        let e = SqlError::new(
            ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
            &[&kind, &value, &self.col, &self.row],
        );
        self.problem(e)
    }

    /// A temporal value that is not acceptable: strict → 1292, else 1265 and the zero value.
    fn bad_temporal(&mut self, kind: &str, d: &Datum) -> Result<(), SqlError> {
        if self.mode.strict() {
            return Err(incorrect_temporal_for_column(
                kind,
                &d.to_bytes(),
                self.col,
                self.row,
            ));
        }
        let e = self.truncated_err();
        self.w.push_error(Level::Warning, e);
        Ok(())
    }
}

/// Converts `d` for a column of type `ty`; `(table, col)` and `row` name it in messages.
pub fn store(
    d: &Datum,
    ty: &SqlType,
    mode: SqlMode,
    (table, col): (&str, &str),
    row: u64,
    w: &mut Warnings,
) -> Result<Value, SqlError> {
    if d.is_null() {
        return Ok(Value::Null);
    }
    if ty.name == TypeName::Json {
        return store_json(d, table, col);
    }
    let mut cx = Cx { mode, col, row, w };
    use TypeName as T;
    match ty.name {
        _ if ty.is_integer() => store_int(d, ty, &mut cx),
        T::Decimal => store_decimal(d, ty, &mut cx),
        T::Float | T::Double => store_real(d, ty, &mut cx),
        T::Bit => store_bit(d, ty, &mut cx),
        T::Enum => store_enum(d, ty, &mut cx),
        T::Set => store_set(d, ty, &mut cx),
        T::Date | T::DateTime | T::Timestamp => store_datetime(d, ty, &mut cx),
        T::Time => store_time(d, ty, &mut cx),
        T::Year => store_year(d, &mut cx),
        _ => store_string(d, ty, &mut cx),
    }
}

/// A JSON column takes a string holding a JSON text (a JSON value arrives as its canonical
/// text) and stores the canonical text; anything else is refused whatever the sql_mode, as
/// MySQL does (3140, "may need CAST").
fn store_json(d: &Datum, table: &str, col: &str) -> Result<Value, SqlError> {
    let name = if table.is_empty() {
        col.to_string()
    } else {
        format!("{table}.{col}")
    };
    let Datum::Bytes(b) = d else {
        return Err(SqlError::new(
            ER_INVALID_JSON_TEXT,
            &[&"not a JSON text, may need CAST", &0, &name],
        ));
    };
    match json::parse(b) {
        Ok(j) => Ok(Value::Bytes(j.to_text().into_bytes())),
        Err(e) if e.too_deep => Err(SqlError::new(ER_JSON_DOCUMENT_TOO_DEEP, &[])),
        Err(e) => Err(SqlError::new(
            ER_INVALID_JSON_TEXT,
            &[&e.message, &e.offset, &name],
        )),
    }
}

fn int_range(ty: &SqlType) -> (i128, i128) {
    let bits = match ty.name {
        TypeName::TinyInt | TypeName::Bool => 8,
        TypeName::SmallInt => 16,
        TypeName::MediumInt => 24,
        TypeName::Int => 32,
        _ => 64,
    };
    if ty.unsigned {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

/// A string's number for a numeric column: 1366 without digits, 1265 with trailing garbage.
fn numeric_text<'a>(
    b: &'a [u8],
    kind: &str,
    cx: &mut Cx<'_>,
) -> Result<super::num::Scan<'a>, SqlError> {
    let s = scan(b);
    if !s.digits {
        cx.incorrect(kind, &String::from_utf8_lossy(b))?;
    } else if !s.clean {
        cx.truncated()?;
    }
    Ok(s)
}

fn decimal_of_text(text: &str) -> Decimal {
    match Decimal::parse(text) {
        Ok(v) => v,
        Err(DecimalError::Overflow) => Decimal::bound(MAX_PRECISION, 0, text.starts_with('-')),
        Err(DecimalError::Syntax) => Decimal::zero(0),
    }
}

fn store_int(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let v: i128 = match d {
        Datum::Int(v) => i128::from(*v),
        Datum::UInt(v) => i128::from(*v),
        Datum::Double(x) => x.round_ties_even() as i128,
        // Digits alone (LOAD DATA's and most clients' text): their value, nothing to warn.
        Datum::Bytes(b) if plain_int(b).is_some() => plain_int(b).unwrap_or_default(),
        Datum::Bytes(b) => {
            let s = numeric_text(b, "integer", cx)?;
            let dec = decimal_of_text(s.text);
            dec.to_i128(false).unwrap_or(if dec.is_negative() {
                i128::MIN
            } else {
                i128::MAX
            })
        }
        other => {
            let dec = other.to_decimal(cx.w);
            dec.to_i128(false).unwrap_or(if dec.is_negative() {
                i128::MIN
            } else {
                i128::MAX
            })
        }
    };
    let (lo, hi) = int_range(ty);
    if v < lo || v > hi {
        cx.out_of_range()?;
    }
    let v = v.clamp(lo, hi);
    Ok(if ty.unsigned {
        Value::UInt(v as u64)
    } else {
        Value::Int(v as i64)
    })
}

/// The value of a text of 1 to 18 ASCII digits after an optional sign; None for any other.
fn plain_int(b: &[u8]) -> Option<i128> {
    let (neg, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits
        .iter()
        .fold(0i128, |a, &c| a * 10 + i128::from(c - b'0'));
    Some(if neg { -v } else { v })
}

fn store_decimal(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let (m, s) = ty.precision_scale();
    let mut x = match d {
        Datum::Bytes(b) => decimal_of_text(numeric_text(b, "decimal", cx)?.text),
        Datum::Double(f) => {
            Decimal::from_f64(*f).unwrap_or_else(|_| Decimal::bound(MAX_PRECISION, 0, *f < 0.0))
        }
        other => other.to_decimal(cx.w),
    };
    if ty.unsigned && x.is_negative() {
        cx.out_of_range()?;
        x = Decimal::zero(s);
    }
    let (v, fit) = x.fit(m, s);
    match fit {
        Fit::Overflow => cx.out_of_range()?,
        Fit::Rounded => cx.w.note(WARN_DATA_TRUNCATED, &[&cx.col, &cx.row]),
        Fit::Exact => {}
    }
    Ok(Value::Bytes(v.encode(m, s)))
}

fn store_real(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let mut x = match d {
        Datum::Bytes(b) => scan_f64(&numeric_text(b, "double", cx)?),
        other => other.to_f64(cx.w),
    };
    if ty.unsigned && x < 0.0 {
        cx.out_of_range()?;
        x = 0.0;
    }
    if let (Some(m), Some(s)) = (ty.length, ty.scale) {
        let f = 10f64.powi(i32::from(s));
        let max = (10f64.powi(m as i32) - 1.0) / f;
        x = (x * f).round() / f;
        if x.abs() > max {
            cx.out_of_range()?;
            x = max.copysign(x);
        }
    }
    if ty.name == TypeName::Float {
        let lim = f64::from(f32::MAX);
        if x.abs() > lim {
            cx.out_of_range()?;
            x = lim.copysign(x);
        }
        return Ok(Value::Float(x as f32));
    }
    Ok(Value::Double(x))
}

fn store_bit(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let bits = ty.length.unwrap_or(1).clamp(1, 64);
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let v = match d {
        Datum::Bytes(b) => {
            let lead = b.len().saturating_sub(8);
            let v = b[lead..].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
            if b[..lead].iter().any(|&x| x != 0) {
                u64::MAX
            } else {
                v
            }
        }
        Datum::Int(v) if *v < 0 => u64::MAX,
        other => other.to_u64(cx.w),
    };
    let v = if v > max {
        cx.out_of_range()?;
        max
    } else {
        v
    };
    let n = bits.div_ceil(8) as usize;
    Ok(Value::Bytes(v.to_be_bytes()[8 - n..].to_vec()))
}

/// The 1-based position of an ENUM/SET member, compared by the column's collation.
fn member(ty: &SqlType, s: &[u8]) -> Option<usize> {
    let s = s.trim_ascii_end();
    ty.values
        .iter()
        .position(|v| ty.collation().compare(v.as_bytes(), s).is_eq())
        .map(|i| i + 1)
}

fn store_enum(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let idx = match d {
        Datum::Bytes(b) => member(ty, b).or_else(|| {
            // A string of digits is an index.
            let t = b.trim_ascii();
            (!t.is_empty() && t.iter().all(u8::is_ascii_digit))
                .then(|| std::str::from_utf8(t).ok()?.parse::<usize>().ok())
                .flatten()
                .filter(|i| (1..=ty.values.len()).contains(i))
        }),
        other => usize::try_from(other.to_i64(cx.w))
            .ok()
            .filter(|i| (1..=ty.values.len()).contains(i)),
    };
    match idx {
        Some(i) => Ok(Value::UInt(i as u64)),
        None => {
            cx.truncated()?;
            Ok(Value::UInt(0))
        }
    }
}

fn store_set(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let n = ty.values.len().min(64);
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let (mask, bad) = match d {
        Datum::Bytes(b) if !b.is_empty() => {
            let mut mask = 0u64;
            let mut bad = false;
            for part in b.split(|c| *c == b',') {
                match member(ty, part) {
                    Some(i) => mask |= 1 << (i - 1),
                    None => bad = true,
                }
            }
            (mask, bad)
        }
        Datum::Bytes(_) => (0, false),
        other => {
            let v = other.to_u64(cx.w);
            (v & all, v & !all != 0)
        }
    };
    if bad {
        cx.truncated()?;
    }
    Ok(Value::UInt(mask))
}

/// A number's integer part and microseconds (for 20240102030405.5).
fn split_number(d: &Datum, w: &mut Warnings) -> Option<(i64, u32)> {
    let dec = d.to_decimal(w);
    let int = dec.to_i128(true)?;
    let frac = dec
        .checked_sub(&Decimal::from_i128(int))?
        .abs()
        .round_to(6, true);
    let micro = frac
        .to_string()
        .get(2..)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Some((i64::try_from(int).ok()?, micro))
}

fn store_datetime(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let kind = if ty.name == TypeName::Date {
        "date"
    } else {
        "datetime"
    };
    let fsp = ty.fsp();
    let parsed = match d {
        Datum::Date(x) => Some(DateTime::from_date(*x)),
        Datum::DateTime(x) => Some(*x),
        Datum::Time(t) => {
            let today = DateTime::from_date(temporal::now().date);
            DateTime::from_micros(today.to_micros() + t.to_micros(), t.fsp)
        }
        Datum::Bytes(b) => parse_datetime(b).map(|x| x.0),
        n => split_number(n, cx.w)
            .filter(|(i, _)| *i >= 0)
            .and_then(|(i, micro)| number_to_datetime(i, micro))
            .map(|x| x.0),
    };
    let truncate = cx.mode.has(SqlMode::TIME_TRUNCATE_FRACTIONAL);
    let ok = parsed
        .filter(|dt| date_problem(&dt.date, cx.mode).is_none())
        .and_then(|dt| dt.with_fsp(fsp, truncate));
    let dt = match ok {
        Some(dt) => {
            // A time of day dropped by a DATE column: note 1265, as MySQL's.
            if ty.name == TypeName::Date
                && (dt.hour, dt.minute, dt.second, dt.micro) != (0, 0, 0, 0)
            {
                cx.w.note(WARN_DATA_TRUNCATED, &[&cx.col, &cx.row]);
            }
            dt
        }
        None => {
            cx.bad_temporal(kind, d)?;
            DateTime {
                fsp,
                ..DateTime::default()
            }
        }
    };
    Ok(Value::Bytes(match ty.name {
        TypeName::Date => dt.date.encode(),
        TypeName::DateTime => dt.encode(fsp),
        _ => match dt.encode_timestamp(fsp) {
            Some(b) => b,
            None => {
                if cx.mode.strict() {
                    return Err(incorrect_temporal_for_column(
                        kind,
                        &d.to_bytes(),
                        cx.col,
                        cx.row,
                    ));
                }
                cx.out_of_range()?;
                DateTime::default()
                    .encode_timestamp(fsp)
                    .unwrap_or_default()
            }
        },
    }))
}

fn store_time(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let fsp = ty.fsp();
    let micros = match d {
        Datum::Time(t) => Some(t.to_micros()),
        Datum::DateTime(x) => Some(x.time_of_day().to_micros()),
        Datum::Date(_) => Some(0),
        Datum::Bytes(b) => parse_time_micros(b),
        n => parse_time_micros(n.to_decimal(cx.w).to_string().as_bytes()),
    };
    let m = match micros {
        Some(m) => m,
        None => {
            cx.bad_temporal("time", d)?;
            0
        }
    };
    let t = if m.abs() > TIME_MAX_MICROS {
        // Strict mode reports a temporal value it cannot store as 1292 (MySQL's
        // set_datetime_warning); otherwise warning 1264 and the bound.
        if cx.mode.strict() {
            return Err(incorrect_temporal_for_column(
                "time",
                &d.to_bytes(),
                cx.col,
                cx.row,
            ));
        }
        cx.out_of_range()?;
        Time::bound(m < 0)
    } else {
        Time::from_micros(m, 6).unwrap_or_default()
    };
    let t = t.with_fsp(fsp, cx.mode.has(SqlMode::TIME_TRUNCATE_FRACTIONAL));
    Ok(Value::Bytes(t.encode(fsp)))
}

fn store_year(d: &Datum, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    let y = match d {
        Datum::Date(x) => Some(x.year),
        Datum::DateTime(x) => Some(x.date.year),
        Datum::Bytes(b) => {
            let s = numeric_text(b, "integer", cx)?;
            let v = decimal_of_text(s.text).to_i128(false).unwrap_or(i128::MAX);
            let digits = s
                .text
                .trim_start_matches(['+', '-'])
                .split('.')
                .next()
                .unwrap_or("");
            // The strings '0' and '00' are 2000; '0000' is 0000.
            if v == 0 && s.digits && digits.len() < 3 {
                Some(2000)
            } else {
                i64::try_from(v).ok().and_then(year_from_int)
            }
        }
        other => year_from_int(other.to_i64(cx.w)),
    };
    let y = match y.filter(|y| *y == 0 || (1901..=2155).contains(y)) {
        Some(y) => y,
        None => {
            cx.out_of_range()?;
            0
        }
    };
    Ok(Value::UInt(if y == 0 { 0 } else { u64::from(y - 1900) }))
}

/// "Incorrect string value" shows up to 6 bytes from the bad one, as MySQL does.
fn bad_bytes(b: &[u8]) -> String {
    let mut s: String = b.iter().take(6).map(|c| format!("\\x{c:02X}")).collect();
    if b.len() > 6 {
        s.push_str("...");
    }
    s
}

/// Where `b` stops being valid in `charset` (None: all valid).
fn invalid_at(b: &[u8], charset: &str) -> Option<usize> {
    if charset != "utf8mb4" && charset != "utf8mb3" {
        return None;
    }
    let valid = match std::str::from_utf8(b) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or(""),
    };
    if charset == "utf8mb3" {
        if let Some((i, _)) = valid.char_indices().find(|(_, c)| c.len_utf8() == 4) {
            return Some(i);
        }
    }
    (valid.len() < b.len()).then_some(valid.len())
}

fn store_string(d: &Datum, ty: &SqlType, cx: &mut Cx<'_>) -> Result<Value, SqlError> {
    use TypeName as T;
    let mut b = match d {
        Datum::Bytes(b) => b.clone(),
        other => other.to_bytes(),
    };
    let charset = ty.coll.charset;
    if let Some(at) = invalid_at(&b, charset) {
        cx.incorrect("string", &bad_bytes(&b[at..]))?;
        b.truncate(at);
    }
    // latin1 columns hold latin1 bytes (one per character); values arrive as UTF-8. A
    // character latin1 lacks is error 1366 in strict mode, '?' with the warning otherwise.
    let latin1 = is_latin1(ty);
    if latin1 && !b.is_ascii() {
        let (l, lossy) = utf8_to_latin1(&b);
        if lossy {
            let at = String::from_utf8_lossy(&b)
                .char_indices()
                .find(|(_, c)| latin1_byte(*c).is_none())
                .map_or(0, |(i, _)| i);
            cx.incorrect("string", &bad_bytes(&b[at.min(b.len())..]))?;
        }
        b = l;
    }
    let counts_chars = ty.is_text() && !latin1 && matches!(ty.name, T::Char | T::VarChar);
    let limit = match ty.lob_bytes() {
        Some(bytes) => usize::try_from(bytes).unwrap_or(usize::MAX),
        None => ty.length.unwrap_or(0) as usize,
    };
    // Byte offset where the allowed length ends.
    let cut = if counts_chars {
        String::from_utf8_lossy(&b)
            .char_indices()
            .nth(limit)
            .map(|(i, _)| i)
    } else if b.len() > limit {
        // TEXT limits are bytes: cut at a character boundary.
        let mut i = limit;
        while ty.is_text() && !latin1 && i > 0 && b.get(i).is_some_and(|c| c & 0xC0 == 0x80) {
            i -= 1;
        }
        Some(i)
    } else {
        None
    };
    if let Some(cut) = cut {
        if b[cut..].iter().all(|c| *c == b' ') {
            if ty.name != T::Char {
                cx.w.note(WARN_DATA_TRUNCATED, &[&cx.col, &cx.row]);
            }
        } else if cx.mode.strict() {
            return Err(SqlError::new(ER_DATA_TOO_LONG, &[&cx.col, &cx.row]));
        } else {
            cx.truncated()?;
        }
        b.truncate(cut);
    }
    match ty.name {
        T::Char => {
            while b.last() == Some(&b' ') {
                b.pop();
            }
        }
        T::Binary => b.resize(limit, 0),
        _ => {}
    }
    Ok(Value::Bytes(b))
}

/// The engine value of a column back as a `Datum` (ENUM/SET as their member text, YEAR as
/// its number, BIT as an unsigned number, FLOAT as the double of its shortest text).
pub fn load(v: &Value, ty: &SqlType) -> Datum {
    use TypeName as T;
    match (v, ty.name) {
        (Value::Null, _) => Datum::Null,
        (Value::UInt(n), T::Year) => Datum::Int(if *n == 0 { 0 } else { *n as i64 + 1900 }),
        (Value::UInt(n), T::Enum) => Datum::Bytes(
            usize::try_from(*n)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| ty.values.get(i))
                .map_or(Vec::new(), |s| s.as_bytes().to_vec()),
        ),
        (Value::UInt(n), T::Set) => Datum::Bytes(
            ty.values
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < 64 && n >> i & 1 == 1)
                .map(|(_, s)| s.as_str())
                .collect::<Vec<_>>()
                .join(",")
                .into_bytes(),
        ),
        (Value::Int(n), _) => Datum::Int(*n),
        (Value::UInt(n), _) => Datum::UInt(*n),
        (Value::Float(f), _) => Datum::Double(format_float(*f).parse().unwrap_or(0.0)),
        (Value::Double(f), _) => Datum::Double(*f),
        (Value::Bytes(b), _) => load_bytes(b, ty),
    }
}

/// A column's stored bytes (an engine `Value::Bytes`) as a `Datum`.
fn load_bytes(b: &[u8], ty: &SqlType) -> Datum {
    use TypeName as T;
    let fsp = ty.fsp();
    match ty.name {
        T::Decimal => {
            let (m, s) = ty.precision_scale();
            Datum::Decimal(Decimal::decode(b, m, s).unwrap_or(Decimal::zero(s)))
        }
        T::Bit => Datum::UInt(b.iter().take(8).fold(0u64, |a, &x| (a << 8) | u64::from(x))),
        T::Date => Datum::Date(temporal::Date::decode(b).unwrap_or_default()),
        T::DateTime => Datum::DateTime(DateTime::decode(b, fsp).unwrap_or(DateTime {
            fsp,
            ..DateTime::default()
        })),
        T::Timestamp => Datum::DateTime(DateTime::decode_timestamp(b, fsp).unwrap_or(DateTime {
            fsp,
            ..DateTime::default()
        })),
        T::Time => Datum::Time(Time::decode(b, fsp).unwrap_or(Time {
            fsp,
            ..Time::default()
        })),
        _ if is_latin1(ty) => Datum::Bytes(latin1_to_utf8(b).into_bytes()),
        _ => Datum::Bytes(b.to_vec()),
    }
}

/// The `Datum` of a column from its stored bytes, as `load` of their engine value gives, with
/// no engine value made (rows decoded straight from the page, `innoxide_engine::RowMaker`).
pub fn load_stored(col: &ColumnDef, b: &[u8], ty: &SqlType) -> Datum {
    match col.kind {
        ColumnKind::Fixed(_) | ColumnKind::Var { .. } => load_bytes(b, ty),
        _ => load(&schema::decode(col, Some(b)), ty),
    }
}

/// A text column stored in latin1 (its values are converted to and from UTF-8).
fn is_latin1(ty: &SqlType) -> bool {
    ty.coll.charset == "latin1" && ty.is_text()
}

/// `load` of a value the caller gives up: strings and blobs keep their buffer.
pub fn load_owned(v: Value, ty: &SqlType) -> Datum {
    use TypeName as T;
    match v {
        Value::Bytes(b)
            if !matches!(
                ty.name,
                T::Decimal | T::Bit | T::Date | T::DateTime | T::Timestamp | T::Time
            ) && !is_latin1(ty) =>
        {
            Datum::Bytes(b)
        }
        v => load(&v, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::ColumnType;

    fn ty(name: TypeName, length: Option<u64>, scale: Option<u64>) -> SqlType {
        let t = ColumnType {
            name,
            length,
            scale,
            unsigned: false,
            zerofill: false,
            charset: None,
            collate: None,
            values: vec!["a".into(), "b".into(), "c".into()],
        };
        SqlType::from_ast(&t, "c", None, None).unwrap()
    }

    fn unsigned(mut t: SqlType) -> SqlType {
        t.unsigned = true;
        t
    }

    fn s(x: &str) -> Datum {
        Datum::Bytes(x.as_bytes().to_vec())
    }

    const STRICT: SqlMode = SqlMode::DEFAULT;
    const LAX: SqlMode = SqlMode(0);

    /// (stored text or "E<code>: message", warning codes)
    fn run(d: &Datum, t: &SqlType, mode: SqlMode) -> (String, Vec<u16>) {
        let mut w = Warnings::default();
        let r = match store(d, t, mode, ("t", "c"), 1, &mut w) {
            Ok(v) => {
                let back = load(&v, t);
                let owned = load_owned(v.clone(), t);
                assert_eq!(
                    format!("{owned:?}"),
                    format!("{back:?}"),
                    "load_owned agrees"
                );
                // What is stored must encode in the engine.
                let (kind, coll) = t.storage();
                let mut col = innoxide_engine::ColumnDef::new("c", kind).collation(coll);
                col.nullable = true;
                let mut out = Vec::new();
                let stored = innoxide_engine::dict::schema::encode(&col, &v, &mut out).unwrap();
                if stored {
                    assert_eq!(
                        format!("{:?}", load_stored(&col, &out, t)),
                        format!("{back:?}"),
                        "load_stored agrees"
                    );
                }
                String::from_utf8_lossy(&t.render(&back).unwrap_or_default()).into_owned()
            }
            Err(e) => format!("E{}: {}", e.code, e.message),
        };
        (r, w.iter().map(|x| x.code).collect())
    }

    #[test]
    fn digit_strings_into_integers() {
        let t = ty(TypeName::BigInt, None, None);
        for (text, want) in [
            ("007", "7"),
            ("-12", "-12"),
            ("+5", "5"),
            ("-0", "0"),
            ("999999999999999999", "999999999999999999"),
            ("9223372036854775807", "9223372036854775807"),
        ] {
            assert_eq!(run(&s(text), &t, STRICT), (want.into(), vec![]), "{text}");
        }
        // Not digits alone: the general way, with its rounding and warnings.
        assert_eq!(run(&s("1e3"), &t, STRICT), ("1000".into(), vec![]));
        assert_eq!(run(&s("2.5"), &t, LAX).0, "3");
        assert_eq!(run(&s(" 42"), &t, LAX).0, "42");
        assert_eq!(plain_int(b"12x"), None);
        assert_eq!(plain_int(b"-"), None);
        assert_eq!(plain_int(b""), None);
        let tiny = ty(TypeName::TinyInt, None, None);
        assert_eq!(run(&s("300"), &tiny, LAX), ("127".into(), vec![1264]));
    }

    #[test]
    fn integers() {
        let t = ty(TypeName::TinyInt, None, None);
        assert_eq!(run(&Datum::Int(127), &t, STRICT), ("127".into(), vec![]));
        assert_eq!(
            run(&Datum::Int(128), &t, STRICT),
            (
                "E1264: Out of range value for column 'c' at row 1".into(),
                vec![]
            )
        );
        assert_eq!(run(&Datum::Int(200), &t, LAX), ("127".into(), vec![1264]));
        assert_eq!(
            run(&Datum::Int(-1), &unsigned(t.clone()), LAX),
            ("0".into(), vec![1264])
        );
        assert_eq!(
            run(&s("abc"), &t, STRICT),
            (
                "E1366: Incorrect integer value: 'abc' for column 'c' at row 1".into(),
                vec![]
            )
        );
        assert_eq!(
            run(&s("12abc"), &t, STRICT),
            (
                "E1265: Data truncated for column 'c' at row 1".into(),
                vec![]
            )
        );
        assert_eq!(run(&s("12abc"), &t, LAX), ("12".into(), vec![1265]));
        assert_eq!(run(&s(""), &t, LAX), ("0".into(), vec![1366]));
        assert_eq!(run(&s(" 1.5 "), &t, STRICT), ("2".into(), vec![]));
        assert_eq!(run(&s("1e2"), &t, STRICT), ("100".into(), vec![]));
        assert_eq!(run(&Datum::Double(2.5), &t, STRICT), ("2".into(), vec![]));
        let dec = Datum::Decimal(Decimal::parse("2.5").unwrap());
        assert_eq!(run(&dec, &t, STRICT), ("3".into(), vec![]));
        let big = ty(TypeName::BigInt, None, None);
        assert_eq!(
            run(&Datum::UInt(u64::MAX), &big, LAX),
            (i64::MAX.to_string(), vec![1264])
        );
        assert_eq!(
            run(&Datum::UInt(u64::MAX), &unsigned(big), STRICT),
            (u64::MAX.to_string(), vec![])
        );
        let m = ty(TypeName::MediumInt, None, None);
        assert_eq!(
            run(&Datum::Int(-8_388_608), &m, STRICT),
            ("-8388608".into(), vec![])
        );
        assert_eq!(run(&Datum::Null, &m, STRICT), ("".into(), vec![]));
    }

    #[test]
    fn decimals_and_reals() {
        let t = ty(TypeName::Decimal, Some(5), Some(2));
        assert_eq!(
            run(&s("123.456"), &t, STRICT),
            ("123.46".into(), vec![1265])
        );
        assert_eq!(run(&Datum::Int(-12), &t, STRICT), ("-12.00".into(), vec![]));
        assert_eq!(
            run(&Datum::Int(1000), &t, STRICT).0,
            "E1264: Out of range value for column 'c' at row 1"
        );
        assert_eq!(
            run(&Datum::Int(1000), &t, LAX),
            ("999.99".into(), vec![1264])
        );
        assert_eq!(
            run(&Datum::Double(0.1), &t, STRICT),
            ("0.10".into(), vec![])
        );
        assert_eq!(
            run(&s("x"), &t, STRICT).0,
            "E1366: Incorrect decimal value: 'x' for column 'c' at row 1"
        );
        assert_eq!(
            run(&Datum::Int(-1), &unsigned(t), LAX),
            ("0.00".into(), vec![1264])
        );
        let wide = ty(TypeName::Decimal, Some(65), Some(30));
        let v = format!("{}.{}", "9".repeat(35), "9".repeat(30));
        assert_eq!(run(&s(&v), &wide, STRICT), (v, vec![]));
        let f = ty(TypeName::Float, None, None);
        assert_eq!(run(&Datum::Double(0.1), &f, STRICT), ("0.1".into(), vec![]));
        assert_eq!(
            run(&Datum::Double(1e39), &f, LAX),
            ("3.4028235e38".into(), vec![1264])
        );
        let fm = ty(TypeName::Float, Some(5), Some(2));
        assert_eq!(
            run(&Datum::Double(1.005), &fm, STRICT),
            ("1.00".into(), vec![])
        );
        assert_eq!(
            run(&Datum::Double(1234.5), &fm, LAX),
            ("999.99".into(), vec![1264])
        );
        let d = ty(TypeName::Double, None, None);
        assert_eq!(run(&s("1e20"), &d, STRICT), ("1e20".into(), vec![]));
        assert_eq!(run(&s("abc"), &d, LAX), ("0".into(), vec![1366]));
    }

    #[test]
    fn strings() {
        let v = ty(TypeName::VarChar, Some(3), None);
        assert_eq!(run(&s("abc"), &v, STRICT), ("abc".into(), vec![]));
        assert_eq!(run(&s("héé"), &v, STRICT), ("héé".into(), vec![]));
        assert_eq!(
            run(&s("abcd"), &v, STRICT).0,
            "E1406: Data too long for column 'c' at row 1"
        );
        assert_eq!(run(&s("abcd"), &v, LAX), ("abc".into(), vec![1265]));
        assert_eq!(run(&s("abc   "), &v, STRICT), ("abc".into(), vec![1265]));
        assert_eq!(run(&Datum::Int(12), &v, STRICT), ("12".into(), vec![]));
        let bad = Datum::Bytes(b"a\xF0\x9F\x98".to_vec());
        assert_eq!(
            run(&bad, &v, STRICT).0,
            "E1366: Incorrect string value: '\\xF0\\x9F\\x98' for column 'c' at row 1"
        );
        assert_eq!(run(&bad, &v, LAX), ("a".into(), vec![1366]));
        let c = ty(TypeName::Char, Some(5), None);
        assert_eq!(run(&s("ab  "), &c, STRICT), ("ab".into(), vec![]));
        assert_eq!(run(&s("ab       "), &c, STRICT), ("ab".into(), vec![]));
        let b = ty(TypeName::Binary, Some(3), None);
        assert_eq!(run(&s("a"), &b, STRICT), ("a\0\0".into(), vec![]));
        let tt = ty(TypeName::TinyText, None, None);
        let long = "é".repeat(200);
        let (r, w) = run(&s(&long), &tt, LAX);
        assert_eq!((r.len(), w), (254, vec![1265]));
        let mb3 = SqlType::from_ast(
            &ColumnType {
                name: TypeName::VarChar,
                length: Some(5),
                scale: None,
                unsigned: false,
                zerofill: false,
                charset: Some("utf8".into()),
                collate: None,
                values: vec![],
            },
            "c",
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            run(&s("😀"), &mb3, STRICT).0,
            "E1366: Incorrect string value: '\\xF0\\x9F\\x98\\x80' for column 'c' at row 1"
        );
    }

    #[test]
    fn enums_sets_bits() {
        let e = ty(TypeName::Enum, None, None);
        assert_eq!(run(&s("B"), &e, STRICT), ("b".into(), vec![]));
        assert_eq!(run(&s("2"), &e, STRICT), ("b".into(), vec![]));
        assert_eq!(run(&Datum::Int(3), &e, STRICT), ("c".into(), vec![]));
        assert_eq!(
            run(&s("x"), &e, STRICT).0,
            "E1265: Data truncated for column 'c' at row 1"
        );
        assert_eq!(run(&s("x"), &e, LAX), ("".into(), vec![1265]));
        assert_eq!(run(&Datum::Int(0), &e, LAX), ("".into(), vec![1265]));
        let st = ty(TypeName::Set, None, None);
        assert_eq!(run(&s("c,a"), &st, STRICT), ("a,c".into(), vec![]));
        assert_eq!(run(&s(""), &st, STRICT), ("".into(), vec![]));
        assert_eq!(run(&Datum::Int(5), &st, STRICT), ("a,c".into(), vec![]));
        assert_eq!(run(&s("a,z"), &st, LAX), ("a".into(), vec![1265]));
        assert_eq!(
            run(&Datum::Int(8), &st, STRICT).0,
            "E1265: Data truncated for column 'c' at row 1"
        );
        let bit = ty(TypeName::Bit, Some(4), None);
        assert_eq!(run(&Datum::Int(5), &bit, STRICT), ("\u{5}".into(), vec![]));
        assert_eq!(
            run(&Datum::Int(16), &bit, LAX),
            ("\u{f}".into(), vec![1264])
        );
        assert_eq!(
            run(&Datum::Bytes(vec![3]), &bit, STRICT),
            ("\u{3}".into(), vec![])
        );
    }

    #[test]
    fn temporal_columns() {
        let d = ty(TypeName::Date, None, None);
        assert_eq!(
            run(&s("2024-1-2"), &d, STRICT),
            ("2024-01-02".into(), vec![])
        );
        assert_eq!(
            run(&Datum::Int(20240102), &d, STRICT),
            ("2024-01-02".into(), vec![])
        );
        // A time of day is dropped with note 1265; midnight goes silently.
        assert_eq!(
            run(&s("2024-01-05 10:11:12"), &d, STRICT),
            ("2024-01-05".into(), vec![1265])
        );
        assert_eq!(
            run(&s("2024-01-05 00:00:00"), &d, STRICT),
            ("2024-01-05".into(), vec![])
        );
        assert_eq!(
            run(&s("2024-02-30"), &d, STRICT).0,
            "E1292: Incorrect date value: '2024-02-30' for column 'c' at row 1"
        );
        assert_eq!(
            run(&s("2024-02-30"), &d, LAX),
            ("0000-00-00".into(), vec![1265])
        );
        assert_eq!(
            run(&s("0000-00-00"), &d, STRICT).0,
            "E1292: Incorrect date value: '0000-00-00' for column 'c' at row 1"
        );
        assert_eq!(
            run(&s("0000-00-00"), &d, LAX),
            ("0000-00-00".into(), vec![])
        );
        assert_eq!(
            run(&s("2024-00-10"), &d, LAX),
            ("2024-00-10".into(), vec![])
        );
        assert_eq!(
            run(&s("2024-00-10"), &d, STRICT).0,
            "E1292: Incorrect date value: '2024-00-10' for column 'c' at row 1"
        );
        assert_eq!(run(&s("abc"), &d, LAX), ("0000-00-00".into(), vec![1265]));
        let dt = ty(TypeName::DateTime, None, None);
        assert_eq!(
            run(&s("2024-01-02 03:04:05.6"), &dt, STRICT),
            ("2024-01-02 03:04:06".into(), vec![])
        );
        let trunc = SqlMode(STRICT.0 | SqlMode::TIME_TRUNCATE_FRACTIONAL);
        assert_eq!(
            run(&s("2024-01-02 03:04:05.6"), &dt, trunc),
            ("2024-01-02 03:04:05".into(), vec![])
        );
        assert_eq!(
            run(&s("2024-13-02"), &dt, STRICT).0,
            "E1292: Incorrect datetime value: '2024-13-02' for column 'c' at row 1"
        );
        let dt3 = ty(TypeName::DateTime, Some(3), None);
        assert_eq!(
            run(&s("2024-01-02T03:04:05.123456"), &dt3, STRICT),
            ("2024-01-02 03:04:05.123".into(), vec![])
        );
        assert_eq!(
            run(
                &Datum::Decimal(Decimal::parse("20240102030405.25").unwrap()),
                &dt3,
                STRICT
            ),
            ("2024-01-02 03:04:05.250".into(), vec![])
        );
        let ts = ty(TypeName::Timestamp, None, None);
        assert_eq!(
            run(&s("2038-01-19 03:14:07"), &ts, STRICT),
            ("2038-01-19 03:14:07".into(), vec![])
        );
        assert_eq!(
            run(&s("2038-01-19 03:14:08"), &ts, STRICT).0,
            "E1292: Incorrect datetime value: '2038-01-19 03:14:08' for column 'c' at row 1"
        );
        assert_eq!(
            run(&s("1960-01-01"), &ts, LAX),
            ("0000-00-00 00:00:00".into(), vec![1264])
        );
        let t = ty(TypeName::Time, None, None);
        assert_eq!(
            run(&s("-838:59:59"), &t, STRICT),
            ("-838:59:59".into(), vec![])
        );
        assert_eq!(
            run(&Datum::Int(101112), &t, STRICT),
            ("10:11:12".into(), vec![])
        );
        assert_eq!(
            run(&s("1 10:00:00"), &t, STRICT),
            ("34:00:00".into(), vec![])
        );
        assert_eq!(
            run(&s("900:00:00"), &t, LAX),
            ("838:59:59".into(), vec![1264])
        );
        assert_eq!(
            run(&s("900:00:00"), &t, STRICT).0,
            "E1292: Incorrect time value: '900:00:00' for column 'c' at row 1"
        );
        assert_eq!(
            run(&s("xx"), &t, STRICT).0,
            "E1292: Incorrect time value: 'xx' for column 'c' at row 1"
        );
        let t2 = ty(TypeName::Time, Some(2), None);
        assert_eq!(
            run(&s("-00:00:01.555"), &t2, STRICT),
            ("-00:00:01.56".into(), vec![])
        );
        let y = ty(TypeName::Year, None, None);
        for (i, o) in [
            ("2024", "2024"),
            ("24", "2024"),
            ("99", "1999"),
            ("0", "2000"),
            ("0000", "0000"),
        ] {
            assert_eq!(run(&s(i), &y, STRICT), (o.into(), vec![]), "{i}");
        }
        assert_eq!(run(&Datum::Int(0), &y, STRICT), ("0000".into(), vec![]));
        assert_eq!(run(&Datum::Int(5), &y, STRICT), ("2005".into(), vec![]));
        assert_eq!(run(&Datum::Int(1900), &y, LAX), ("0000".into(), vec![1264]));
        assert_eq!(
            run(&Datum::Int(2156), &y, STRICT).0,
            "E1264: Out of range value for column 'c' at row 1"
        );
    }
}
