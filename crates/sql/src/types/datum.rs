//! Runtime values (`Datum`): text rendering, truthiness, conversions with MySQL's truncation
//! warnings, comparison with MySQL's comparison-type rules, CAST and ROUND.
//!
//! INVARIANTS
//! - Strings are `Bytes`; their collation travels with the expression's type and is passed to
//!   `compare`. NULL compares as unknown (None).
//! - Conversions never fail: a string that is not (entirely) a number converts to its numeric
//!   prefix (0 without one) and adds warning 1292 "Truncated incorrect <TYPE> value: '...'";
//!   string-to-integer reads only an integer prefix ('1.9' is 1), as MySQL's val_int does.
//! - Comparison type (MySQL's `Arg_comparator`): two integers → exact integer compare (signed
//!   and unsigned mixed correctly); integer/DECIMAL → DECIMAL; two strings → the collation;
//!   temporal vs string → the string read as that temporal type; temporal vs temporal → as
//!   DATETIME (TIME alone as TIME); anything else (a DOUBLE, string vs number) → DOUBLE.

use std::cmp::Ordering;

use innoxide_engine::Collation;

use super::decimal::{Decimal, DecimalError, Fit, MAX_PRECISION, MAX_SCALE};
use super::num::{format_double, scan, scan_f64};
use super::temporal::{self, Date, DateTime, Time, TIME_MAX_MICROS};
use super::warnings::{incorrect_value, truncated, Warnings};
use crate::ast::CastType;
use crate::error::{
    SqlError, ER_M_BIGGER_THAN_D, ER_TOO_BIG_PRECISION, ER_TOO_BIG_SCALE, ER_WARN_DATA_OUT_OF_RANGE,
};

/// A runtime value.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Bytes(Vec<u8>),
    Date(Date),
    DateTime(DateTime),
    Time(Time),
}

/// A string's integer prefix, clamped to [i64::MIN, u64::MAX], with MySQL's warning.
fn text_to_int(b: &[u8], w: &mut Warnings) -> i128 {
    let t = b.trim_ascii_start();
    let (neg, rest) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut v: i128 = 0;
    let mut overflow = false;
    for &c in &rest[..n] {
        v = v * 10 + i128::from(c - b'0');
        if v > i128::from(u64::MAX) {
            overflow = true;
            v = i128::from(u64::MAX) + 1;
        }
    }
    if neg {
        v = -v;
    }
    let clamped = v.clamp(i128::from(i64::MIN), i128::from(u64::MAX));
    if n == 0 || overflow || clamped != v || !rest[n..].iter().all(u8::is_ascii_whitespace) {
        truncated(w, "INTEGER", b);
    }
    clamped
}

/// A string as DECIMAL: its numeric prefix (exponent included), with MySQL's warning.
fn text_to_decimal(b: &[u8], w: &mut Warnings) -> Decimal {
    let s = scan(b);
    let v = match Decimal::parse(s.text) {
        Ok(v) => v,
        Err(DecimalError::Overflow) => {
            truncated(w, "DECIMAL", b);
            return Decimal::bound(MAX_PRECISION, 0, s.text.starts_with('-'));
        }
        Err(DecimalError::Syntax) => Decimal::zero(0),
    };
    if !s.digits || !s.clean {
        truncated(w, "DECIMAL", b);
    }
    v
}

fn text_to_f64(b: &[u8], w: &mut Warnings) -> f64 {
    let s = scan(b);
    if !s.digits || !s.clean {
        truncated(w, "DOUBLE", b);
    }
    scan_f64(&s)
}

/// A temporal value as a number: YYYYMMDD[hhmmss] or [-]hhmmss, with the fraction as DECIMAL
/// places when the value has an fsp.
fn temporal_number(int: i64, negative: bool, micro: u32, fsp: u8) -> Datum {
    if fsp == 0 {
        return Datum::Int(int);
    }
    let sign = if negative && int == 0 { "-" } else { "" };
    match Decimal::parse(&format!("{sign}{int}.{micro:06}")) {
        Ok(d) => Datum::Decimal(d.round_to(i64::from(fsp), true)),
        Err(_) => Datum::Int(int),
    }
}

/// A DATETIME key that orders zero-in-date values too.
fn dt_key(d: &DateTime) -> (Date, u8, u8, u8, u32) {
    (d.date, d.hour, d.minute, d.second, d.micro)
}

impl Datum {
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// The value as MySQL's text protocol prints it (None for NULL).
    pub fn to_text(&self) -> Option<Vec<u8>> {
        Some(match self {
            Datum::Null => return None,
            Datum::Int(v) => v.to_string().into_bytes(),
            Datum::UInt(v) => v.to_string().into_bytes(),
            Datum::Double(v) => format_double(*v).into_bytes(),
            Datum::Decimal(v) => {
                let mut text = Vec::new();
                v.push_text(&mut text);
                text
            }
            Datum::Bytes(b) => b.clone(),
            Datum::Date(_) | Datum::DateTime(_) => {
                let mut text = Vec::with_capacity(26);
                self.push_text(&mut text);
                text
            }
            Datum::Time(t) => t.to_string().into_bytes(),
        })
    }

    /// `to_text`, borrowing a string's bytes.
    pub fn text(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Datum::Bytes(b) => Some(std::borrow::Cow::Borrowed(b)),
            other => other.to_text().map(std::borrow::Cow::Owned),
        }
    }

    /// The text appended to `out` (nothing for NULL); temporal and decimal values without a
    /// formatter.
    pub fn push_text(&self, out: &mut Vec<u8>) {
        match self {
            Datum::Date(d) => d.push_text(out),
            Datum::DateTime(d) => d.push_text(out),
            Datum::Decimal(d) => d.push_text(out),
            other => out.extend_from_slice(&other.to_text().unwrap_or_default()),
        }
    }

    /// The text, empty for NULL.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_text().unwrap_or_default()
    }

    /// MySQL truthiness: non-zero numbers are true, strings are read as numbers; None for NULL.
    pub fn truth(&self) -> Option<bool> {
        Some(match self {
            Datum::Null => return None,
            Datum::Int(v) => *v != 0,
            Datum::UInt(v) => *v != 0,
            Datum::Double(v) => *v != 0.0,
            Datum::Decimal(v) => !v.is_zero(),
            Datum::Bytes(b) => text_to_f64(b, &mut Warnings::default()) != 0.0,
            Datum::Date(d) => !d.is_zero(),
            Datum::DateTime(d) => !d.is_zero(),
            Datum::Time(t) => t.to_micros() != 0,
        })
    }

    /// The value as Int, UInt, Decimal or Double (None for NULL): strings become DOUBLE,
    /// temporal values their YYYYMMDDhhmmss[.ffffff] number.
    pub fn numeric(&self, w: &mut Warnings) -> Option<Datum> {
        Some(match self {
            Datum::Null => return None,
            Datum::Bytes(b) => Datum::Double(text_to_f64(b, w)),
            Datum::Date(d) => Datum::Int(d.to_int()),
            Datum::DateTime(d) => temporal_number(d.to_int(), false, d.micro, d.fsp),
            Datum::Time(t) => temporal_number(t.to_int(), t.negative, t.micro, t.fsp),
            d => d.clone(),
        })
    }

    /// As a (clamped) integer wide enough for both BIGINT and BIGINT UNSIGNED.
    fn to_i128(&self, w: &mut Warnings) -> i128 {
        match self {
            Datum::Null => 0,
            Datum::Int(v) => i128::from(*v),
            Datum::UInt(v) => i128::from(*v),
            Datum::Double(v) => {
                let r = v.round_ties_even();
                if r >= 18_446_744_073_709_551_615.0 {
                    i128::from(u64::MAX)
                } else if r <= -9_223_372_036_854_775_808.0 {
                    i128::from(i64::MIN)
                } else {
                    r as i128
                }
            }
            Datum::Decimal(d) => d
                .to_i128(false)
                .unwrap_or(if d.is_negative() {
                    i128::MIN
                } else {
                    i128::MAX
                })
                .clamp(i128::from(i64::MIN), i128::from(u64::MAX)),
            Datum::Bytes(b) => text_to_int(b, w),
            d => d.numeric(w).map_or(0, |n| n.to_i128(w)),
        }
    }

    /// As BIGINT: doubles and decimals rounded, strings by their integer prefix (warning 1292),
    /// unsigned values above the signed range wrap as MySQL's val_int does.
    pub fn to_i64(&self, w: &mut Warnings) -> i64 {
        let v = self.to_i128(w);
        if v > i128::from(i64::MAX) {
            v as u64 as i64
        } else {
            v as i64
        }
    }

    /// As BIGINT UNSIGNED: negative values wrap (CAST(-1 AS UNSIGNED) = 18446744073709551615).
    pub fn to_u64(&self, w: &mut Warnings) -> u64 {
        let v = self.to_i128(w);
        if v < 0 {
            v as i64 as u64
        } else {
            v as u64
        }
    }

    /// As DOUBLE (0 for NULL).
    pub fn to_f64(&self, w: &mut Warnings) -> f64 {
        match self {
            Datum::Null => 0.0,
            Datum::Int(v) => *v as f64,
            Datum::UInt(v) => *v as f64,
            Datum::Double(v) => *v,
            Datum::Decimal(d) => d.to_f64(),
            Datum::Bytes(b) => text_to_f64(b, w),
            d => d.numeric(w).map_or(0.0, |n| n.to_f64(w)),
        }
    }

    /// As DECIMAL (0 for NULL; doubles beyond 65 digits give the 65-digit bound).
    pub fn to_decimal(&self, w: &mut Warnings) -> Decimal {
        match self {
            Datum::Null => Decimal::zero(0),
            Datum::Int(v) => Decimal::from_i64(*v),
            Datum::UInt(v) => Decimal::from_u64(*v),
            Datum::Double(v) => {
                Decimal::from_f64(*v).unwrap_or_else(|_| Decimal::bound(MAX_PRECISION, 0, *v < 0.0))
            }
            Datum::Decimal(d) => d.clone(),
            Datum::Bytes(b) => text_to_decimal(b, w),
            d => d.numeric(w).map_or(Decimal::zero(0), |n| n.to_decimal(w)),
        }
    }

    /// Compares with MySQL's comparison-type rules (module doc); None if either is NULL.
    /// Conversion warnings are dropped: see `compare_warn`.
    pub fn compare(&self, other: &Datum, coll: Collation) -> Option<Ordering> {
        self.compare_warn(other, coll, &mut Warnings::default())
    }

    /// `compare`, keeping the conversion warnings (e.g. 'abc' = 0 warns 1292).
    pub fn compare_warn(
        &self,
        other: &Datum,
        coll: Collation,
        w: &mut Warnings,
    ) -> Option<Ordering> {
        use Datum as D;
        match (self, other) {
            (D::Null, _) | (_, D::Null) => None,
            // Same kinds compare directly (sorts and joins compare these most).
            (D::Int(a), D::Int(b)) => Some(a.cmp(b)),
            (D::UInt(a), D::UInt(b)) => Some(a.cmp(b)),
            (D::DateTime(a), D::DateTime(b)) => Some(dt_key(a).cmp(&dt_key(b))),
            (D::Date(a), D::Date(b)) => Some(a.cmp(b)),
            (D::Decimal(a), D::Decimal(b)) => Some(a.cmp(b)),
            (D::Int(_) | D::UInt(_), D::Int(_) | D::UInt(_)) => {
                Some(self.to_i128(w).cmp(&other.to_i128(w)))
            }
            (D::Bytes(a), D::Bytes(b)) => Some(coll.compare(
                &super::charset::comparable(coll, a),
                &super::charset::comparable(coll, b),
            )),
            (D::Int(_) | D::UInt(_) | D::Decimal(_), D::Int(_) | D::UInt(_) | D::Decimal(_)) => {
                Some(self.to_decimal(w).cmp(&other.to_decimal(w)))
            }
            (D::Time(a), D::Time(b)) => Some(a.to_micros().cmp(&b.to_micros())),
            (D::Time(a), D::Bytes(s)) => {
                let b = to_time(&D::Bytes(s.clone()), w)?;
                Some(a.to_micros().cmp(&b.to_micros()))
            }
            (
                D::Date(_) | D::DateTime(_) | D::Time(_),
                D::Date(_) | D::DateTime(_) | D::Time(_) | D::Bytes(_),
            ) => {
                let a = to_datetime(self, w)?;
                let b = to_datetime(other, w)?;
                Some(dt_key(&a).cmp(&dt_key(&b)))
            }
            (D::Bytes(_), D::Date(_) | D::DateTime(_) | D::Time(_)) => {
                other.compare_warn(self, coll, w).map(Ordering::reverse)
            }
            _ => self.to_f64(w).partial_cmp(&other.to_f64(w)),
        }
    }

    /// `<=>`: NULL equals NULL.
    pub fn null_safe_eq(&self, other: &Datum, coll: Collation) -> bool {
        match (self.is_null(), other.is_null()) {
            (true, true) => true,
            (false, false) => self.compare(other, coll) == Some(Ordering::Equal),
            _ => false,
        }
    }

    /// The type MySQL gives a numeric literal: an integer that fits BIGINT → Int, BIGINT
    /// UNSIGNED → UInt, a longer integer or one with '.' → DECIMAL (DOUBLE beyond 65 digits),
    /// one with an exponent → DOUBLE (saturating at ±f64::MAX).
    pub fn from_literal_number(text: &str) -> Datum {
        let t = text.trim();
        let double = || {
            let v: f64 = t.parse().unwrap_or(0.0);
            Datum::Double(if v.is_infinite() {
                v.signum() * f64::MAX
            } else {
                v
            })
        };
        if t.contains(['e', 'E']) {
            return double();
        }
        if !t.contains('.') {
            if let Ok(v) = t.parse::<i64>() {
                return Datum::Int(v);
            }
            if let Ok(v) = t.parse::<u64>() {
                return Datum::UInt(v);
            }
        }
        match Decimal::parse(t) {
            Ok(d) => Datum::Decimal(d),
            Err(_) => double(),
        }
    }
}

/// The value as a DATETIME for the date functions: DATE at midnight, TIME on today's date,
/// strings in MySQL's forms, numbers like 20240102[030405]. None (SQL NULL) for NULL and for
/// values that are not a date, with warning 1292 "Incorrect datetime value: '...'".
/// A string's fsp is 6 when it has a non-zero fraction, else 0.
pub fn to_datetime(d: &Datum, w: &mut Warnings) -> Option<DateTime> {
    let parsed = match d {
        Datum::Null => return None,
        Datum::Date(x) => return Some(DateTime::from_date(*x)),
        Datum::DateTime(x) => return Some(*x),
        Datum::Time(t) => {
            let today = temporal::now().date;
            return DateTime::from_micros(
                DateTime::from_date(today).to_micros() + t.to_micros(),
                t.fsp,
            );
        }
        Datum::Bytes(b) => temporal::parse_datetime(b).map(|(dt, _)| dt),
        Datum::Int(v) => temporal::number_to_datetime(*v, 0).map(|(dt, _)| dt),
        Datum::UInt(v) => i64::try_from(*v)
            .ok()
            .and_then(|v| temporal::number_to_datetime(v, 0))
            .map(|(dt, _)| dt),
        Datum::Decimal(_) | Datum::Double(_) => {
            let dec = d.to_decimal(w);
            let int = dec.to_i128(true).and_then(|v| i64::try_from(v).ok());
            let frac = dec.checked_sub(&Decimal::from_i128(dec.to_i128(true).unwrap_or(0)));
            let micro = frac
                .and_then(|f| {
                    f.abs()
                        .round_to(6, true)
                        .to_string()
                        .get(2..)
                        .and_then(|s| s.parse::<u32>().ok())
                })
                .unwrap_or(0);
            int.filter(|v| *v >= 0)
                .and_then(|v| temporal::number_to_datetime(v, micro))
                .map(|(dt, _)| dt)
        }
    };
    let valid = parsed.filter(|dt| {
        dt.date.is_zero() || dt.date.month == 0 || dt.date.day == 0 || dt.date.is_valid()
    });
    match valid {
        Some(dt) => Some(DateTime {
            fsp: if dt.micro == 0 { 0 } else { 6 },
            ..dt
        }),
        None => {
            w.push_error(
                super::Level::Warning,
                incorrect_value("datetime", &d.to_bytes()),
            );
            None
        }
    }
}

/// The value as a TIME: DATETIME's time part, DATE as 00:00:00, strings and numbers in
/// MySQL's TIME forms (101112 = 10:11:12). Out of range clamps to ±838:59:59 with warning
/// 1292 "Truncated incorrect time value"; not a time → None with "Incorrect time value".
pub fn to_time(d: &Datum, w: &mut Warnings) -> Option<Time> {
    let micros = match d {
        Datum::Null => return None,
        Datum::Time(t) => return Some(*t),
        Datum::DateTime(x) => return Some(x.time_of_day()),
        Datum::Date(_) => return Some(Time::default()),
        Datum::Bytes(b) => temporal::parse_time_micros(b),
        n => temporal::parse_time_micros(&n.to_decimal(w).to_string().into_bytes()),
    };
    let Some(m) = micros else {
        w.push_error(
            super::Level::Warning,
            incorrect_value("time", &d.to_bytes()),
        );
        return None;
    };
    let fsp = if m % 1_000_000 == 0 { 0 } else { 6 };
    if m.abs() > TIME_MAX_MICROS {
        truncated(w, "time", &d.to_bytes());
        return Some(Time::bound(m < 0));
    }
    Time::from_micros(m, fsp)
}

/// ROUND(x, places) / TRUNCATE(x, places) with MySQL's result types: exact values round half
/// away from zero (integers stay integers), doubles round half to even.
pub fn round(d: &Datum, places: i64, truncate: bool, w: &mut Warnings) -> Datum {
    let Some(n) = d.numeric(w) else {
        return Datum::Null;
    };
    match n {
        Datum::Double(x) => {
            let f = 10f64.powi(places.clamp(-400, 400) as i32);
            let r = |v: f64| {
                if truncate {
                    v.trunc()
                } else {
                    v.round_ties_even()
                }
            };
            let y = r(x * f) / f;
            Datum::Double(if y.is_finite() { y } else { x })
        }
        Datum::Decimal(x) => Datum::Decimal(x.round_to(places, truncate)),
        int => {
            if places >= 0 {
                return int;
            }
            let r = int.to_decimal(w).round_to(places, truncate);
            match r.to_i128(true) {
                Some(v) if i64::try_from(v).is_ok() => Datum::Int(v as i64),
                Some(v) if u64::try_from(v).is_ok() => Datum::UInt(v as u64),
                _ => Datum::Decimal(r),
            }
        }
    }
}

/// Checks DECIMAL(M,D) / FLOAT(M,D) precision and scale as MySQL does (1426, 1425, 1427);
/// returns (M, D) with the defaults (10, 0).
pub(crate) fn check_decimal_spec(
    m: Option<u64>,
    d: Option<u64>,
    name: &str,
    max_m: u64,
) -> Result<(u8, u8), SqlError> {
    let m = m.unwrap_or(10);
    let d = d.unwrap_or(0);
    if m > max_m {
        return Err(SqlError::new(ER_TOO_BIG_PRECISION, &[&m, &name, &max_m]));
    }
    if d > u64::from(MAX_SCALE) {
        return Err(SqlError::new(ER_TOO_BIG_SCALE, &[&d, &name, &MAX_SCALE]));
    }
    if m < d {
        return Err(SqlError::new(ER_M_BIGGER_THAN_D, &[&name]));
    }
    Ok((if m == 0 { 10 } else { m as u8 }, d as u8))
}

/// CAST(d AS ty) / CONVERT(d, ty): conversion problems are warnings, never errors, except an
/// invalid DECIMAL(M,D) target.
pub fn cast(d: &Datum, ty: &CastType, w: &mut Warnings) -> Result<Datum, SqlError> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    Ok(match ty {
        CastType::Signed => Datum::Int(d.to_i64(w)),
        CastType::Unsigned => Datum::UInt(d.to_u64(w)),
        CastType::Double => Datum::Double(d.to_f64(w)),
        CastType::Decimal(m, s) => {
            let (m, s) = check_decimal_spec(*m, *s, "", u64::from(MAX_PRECISION))?;
            let (v, fit) = d.to_decimal(w).fit(m, s);
            if fit == Fit::Overflow {
                let name = format!(
                    "CAST({} AS DECIMAL({m},{s}))",
                    String::from_utf8_lossy(&d.to_bytes())
                );
                w.warn(ER_WARN_DATA_OUT_OF_RANGE, &[&name, &1]);
            }
            Datum::Decimal(v)
        }
        CastType::Char(n, _) => {
            let b = d.to_bytes();
            match n {
                Some(n) => {
                    let s = String::from_utf8_lossy(&b);
                    if s.chars().count() as u64 > *n {
                        truncated(w, &format!("CHAR({n})"), &b);
                        Datum::Bytes(s.chars().take(*n as usize).collect::<String>().into_bytes())
                    } else {
                        Datum::Bytes(b)
                    }
                }
                None => Datum::Bytes(b),
            }
        }
        CastType::Binary(n) => {
            let mut b = d.to_bytes();
            if let Some(n) = n.and_then(|n| usize::try_from(n).ok()) {
                if b.len() > n {
                    truncated(w, &format!("BINARY({n})"), &b);
                }
                b.resize(n, 0);
            }
            Datum::Bytes(b)
        }
        CastType::Json => Datum::Bytes(d.to_bytes()),
        CastType::Date => to_datetime(d, w).map_or(Datum::Null, |dt| Datum::Date(dt.date)),
        CastType::DateTime(fsp) => {
            let fsp = fsp.unwrap_or(0).min(6) as u8;
            to_datetime(d, w)
                .and_then(|dt| dt.with_fsp(fsp, false))
                .map_or(Datum::Null, Datum::DateTime)
        }
        CastType::Time(fsp) => {
            let fsp = fsp.unwrap_or(0).min(6) as u8;
            to_time(d, w).map_or(Datum::Null, |t| Datum::Time(t.with_fsp(fsp, false)))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::temporal::parse_datetime;

    fn s(x: &str) -> Datum {
        Datum::Bytes(x.as_bytes().to_vec())
    }

    fn text(d: &Datum) -> String {
        String::from_utf8(d.to_text().unwrap()).unwrap()
    }

    #[test]
    fn conversions_and_warnings() {
        let mut w = Warnings::default();
        assert_eq!(s("abc").to_i64(&mut w), 0);
        assert_eq!(w[0].code, 1292);
        assert_eq!(w[0].message, "Truncated incorrect INTEGER value: 'abc'");
        let mut w = Warnings::default();
        assert_eq!(s(" 12 ").to_i64(&mut w), 12);
        assert_eq!(s("-7").to_i64(&mut w), -7);
        assert!(w.is_empty());
        assert_eq!(s("1.9").to_i64(&mut w), 1);
        assert_eq!(s("12abc").to_f64(&mut w), 12.0);
        assert_eq!(s("").to_f64(&mut w), 0.0);
        assert_eq!(w.len(), 3);
        assert_eq!(w[1].message, "Truncated incorrect DOUBLE value: '12abc'");
        assert_eq!(w[2].message, "Truncated incorrect DOUBLE value: ''");
        let mut w = Warnings::default();
        assert_eq!(s("99999999999999999999").to_i64(&mut w), -1);
        assert_eq!(w.len(), 1);
        assert_eq!(s("18446744073709551615").to_i64(&mut w), -1);
        assert_eq!(Datum::Int(-1).to_u64(&mut w), u64::MAX);
        assert_eq!(Datum::Double(2.5).to_i64(&mut w), 2);
        assert_eq!(Datum::Double(1e30).to_i64(&mut w), -1);
        assert_eq!(
            Datum::Decimal(Decimal::parse("2.5").unwrap()).to_i64(&mut w),
            3
        );
        assert_eq!(s("1.5e1x").to_decimal(&mut w).to_string(), "15");
        assert_eq!(
            w.last().unwrap().message,
            "Truncated incorrect DECIMAL value: '1.5e1x'"
        );
        let dt = Datum::DateTime(
            parse_datetime(b"2024-01-02 03:04:05.5")
                .unwrap()
                .0
                .with_fsp(1, false)
                .unwrap(),
        );
        assert_eq!(text(&dt), "2024-01-02 03:04:05.5");
        assert_eq!(dt.to_f64(&mut w), 20240102030405.5);
        assert_eq!(dt.to_i64(&mut w), 20240102030406);
        assert_eq!(text(&Datum::Double(1e20)), "1e20");
        assert_eq!(Datum::Null.to_text(), None);
        assert_eq!(s("0.0").truth(), Some(false));
        assert_eq!(s("1abc").truth(), Some(true));
        assert_eq!(Datum::Null.truth(), None);
        assert_eq!(Datum::Date(Date::default()).truth(), Some(false));
    }

    #[test]
    fn literals() {
        assert_eq!(Datum::from_literal_number("42"), Datum::Int(42));
        assert_eq!(
            Datum::from_literal_number("18446744073709551615"),
            Datum::UInt(u64::MAX)
        );
        assert_eq!(
            text(&Datum::from_literal_number("18446744073709551616")),
            "18446744073709551616"
        );
        assert!(
            matches!(Datum::from_literal_number("1.50"), Datum::Decimal(d) if d.to_string() == "1.50")
        );
        assert_eq!(Datum::from_literal_number("1e3"), Datum::Double(1000.0));
        assert_eq!(Datum::from_literal_number("1e999"), Datum::Double(f64::MAX));
        assert!(matches!(
            Datum::from_literal_number(&"9".repeat(70)),
            Datum::Double(_)
        ));
    }

    #[test]
    fn comparisons() {
        use Ordering::*;
        let c = |a: &Datum, b: &Datum| a.compare(b, Collation::Utf8mb40900AiCi);
        assert_eq!(c(&Datum::Int(-1), &Datum::UInt(u64::MAX)), Some(Less));
        assert_eq!(
            c(&Datum::UInt(u64::MAX), &Datum::Int(i64::MAX)),
            Some(Greater)
        );
        assert_eq!(
            c(
                &Datum::Int(1),
                &Datum::Decimal(Decimal::parse("1.000").unwrap())
            ),
            Some(Equal)
        );
        assert_eq!(c(&s("abc"), &s("ABC")), Some(Equal));
        assert_eq!(
            Datum::Bytes(b"abc".to_vec()).compare(&s("ABC"), Collation::Binary),
            Some(Greater)
        );
        assert_eq!(c(&s("10"), &Datum::Int(9)), Some(Greater));
        assert_eq!(c(&s("abc"), &Datum::Int(0)), Some(Equal));
        let mut w = Warnings::default();
        Datum::Int(0).compare_warn(&s("abc"), Collation::Binary, &mut w);
        assert_eq!(w.len(), 1);
        let d = Datum::Date(parse_datetime(b"2024-01-02").unwrap().0.date);
        assert_eq!(c(&d, &s("2024-1-2")), Some(Equal));
        assert_eq!(c(&s("2024-01-03"), &d), Some(Greater));
        assert_eq!(c(&d, &Datum::Int(20240102)), Some(Equal));
        let dt = Datum::DateTime(parse_datetime(b"2024-01-02 00:00:01").unwrap().0);
        assert_eq!(c(&d, &dt), Some(Less));
        let t = Datum::Time(Time::from_micros(3_600_000_000, 0).unwrap());
        assert_eq!(c(&t, &s("01:00:00")), Some(Equal));
        assert_eq!(c(&t, &s("1:00:01")), Some(Less));
        assert_eq!(c(&Datum::Null, &Datum::Null), None);
        assert!(Datum::Null.null_safe_eq(&Datum::Null, Collation::Binary));
        assert!(!Datum::Null.null_safe_eq(&Datum::Int(1), Collation::Binary));
        assert_eq!(
            c(
                &Datum::Double(0.1),
                &Datum::Decimal(Decimal::parse("0.1").unwrap())
            ),
            Some(Equal)
        );
    }

    #[test]
    fn casts_and_rounding() {
        let mut w = Warnings::default();
        let dec = |x: &str| Datum::Decimal(Decimal::parse(x).unwrap());
        assert_eq!(
            text(&cast(&s("12.345"), &CastType::Decimal(Some(5), Some(2)), &mut w).unwrap()),
            "12.35"
        );
        assert_eq!(
            text(&cast(&Datum::Int(1000), &CastType::Decimal(Some(3), None), &mut w).unwrap()),
            "999"
        );
        assert_eq!(w.last().unwrap().code, 1264);
        assert_eq!(
            cast(&Datum::Int(1), &CastType::Decimal(Some(66), None), &mut w)
                .unwrap_err()
                .code,
            1426
        );
        assert_eq!(
            cast(&Datum::Int(-1), &CastType::Unsigned, &mut w).unwrap(),
            Datum::UInt(u64::MAX)
        );
        assert_eq!(
            text(
                &cast(
                    &s("2024-01-02 10:11:12.5"),
                    &CastType::DateTime(None),
                    &mut w
                )
                .unwrap()
            ),
            "2024-01-02 10:11:13"
        );
        assert_eq!(
            text(&cast(&Datum::Int(20240102), &CastType::Date, &mut w).unwrap()),
            "2024-01-02"
        );
        assert_eq!(
            text(&cast(&Datum::Int(101112), &CastType::Time(None), &mut w).unwrap()),
            "10:11:12"
        );
        assert_eq!(
            text(&cast(&s("a"), &CastType::Binary(Some(3)), &mut w).unwrap()),
            "a\0\0"
        );
        let n = w.len();
        assert_eq!(
            cast(&s("2024-02-30"), &CastType::Date, &mut w).unwrap(),
            Datum::Null
        );
        assert_eq!(w[n].message, "Incorrect datetime value: '2024-02-30'");
        assert_eq!(w[n].code, 1292);
        assert_eq!(text(&round(&dec("2.5"), 0, false, &mut w)), "3");
        assert_eq!(text(&round(&dec("-2.567"), 2, true, &mut w)), "-2.56");
        assert_eq!(text(&round(&Datum::Double(2.5), 0, false, &mut w)), "2");
        assert_eq!(
            text(&round(&Datum::Double(1.2345), 2, false, &mut w)),
            "1.23"
        );
        assert_eq!(round(&Datum::Int(155), -1, false, &mut w), Datum::Int(160));
        assert_eq!(round(&Datum::Int(7), 2, false, &mut w), Datum::Int(7));
        assert_eq!(round(&Datum::Null, 2, false, &mut w), Datum::Null);
    }
}
