//! Arithmetic on `Datum`s with MySQL's result types and errors.
//!
//! INVARIANTS
//! - Operands are first made numeric (`Datum::numeric`: strings → DOUBLE, temporal values →
//!   their number). Then: a DOUBLE operand → DOUBLE; else a DECIMAL operand → DECIMAL (exact);
//!   else integers: BIGINT, or BIGINT UNSIGNED when an operand is unsigned (`-` stays signed
//!   under NO_UNSIGNED_SUBTRACTION). `/` of exact values is DECIMAL with the dividend's scale
//!   + 4; `DIV` is BIGINT.
//! - A result out of its type's range is error 1690 "<TYPE> value is out of range in
//!   '(a op b)'", the operands printed as values (the executor may substitute the expression
//!   text). Nothing wraps and nothing panics.
//! - Division (/, DIV, %) by zero is NULL, with warning 1365 only when ERROR_FOR_DIVISION_BY_ZERO
//!   is set (as MySQL); the executor turns that warning into an error for INSERT/UPDATE in
//!   strict mode (`Warnings::has_code(1365)`).

use super::datum::Datum;
use super::decimal::{Decimal, DIV_INCREMENT};
use super::num::format_double;
use super::warnings::Warnings;
use super::SqlMode;
use crate::error::{SqlError, ER_DATA_OUT_OF_RANGE, ER_DIVISION_BY_ZERO};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Rem,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::IntDiv => "DIV",
            Op::Rem => "%",
        }
    }
}

/// An operand as it appears in the 1690 message.
fn show(d: &Datum) -> String {
    match d {
        Datum::Double(v) => format_double(*v),
        Datum::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
        d => String::from_utf8_lossy(&d.to_bytes()).into_owned(),
    }
}

fn out_of_range(ty: &str, expr: &str) -> SqlError {
    SqlError::new(ER_DATA_OUT_OF_RANGE, &[&ty, &expr])
}

fn div_zero(mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    if mode.has(SqlMode::ERROR_FOR_DIVISION_BY_ZERO) {
        w.warn(ER_DIVISION_BY_ZERO, &[]);
    }
    Ok(Datum::Null)
}

fn is_int(d: &Datum) -> bool {
    matches!(d, Datum::Int(_) | Datum::UInt(_))
}

fn as_i128(d: &Datum) -> i128 {
    match d {
        Datum::Int(v) => i128::from(*v),
        Datum::UInt(v) => i128::from(*v),
        _ => 0,
    }
}

fn binary(
    op: Op,
    a: &Datum,
    b: &Datum,
    mode: SqlMode,
    w: &mut Warnings,
) -> Result<Datum, SqlError> {
    let (Some(x), Some(y)) = (a.numeric(w), b.numeric(w)) else {
        return Ok(Datum::Null);
    };
    let expr = || format!("({} {} {})", show(a), op.symbol(), show(b));
    if matches!(x, Datum::Double(_)) || matches!(y, Datum::Double(_)) {
        let (p, q) = (x.to_f64(w), y.to_f64(w));
        let r = match op {
            Op::Add => p + q,
            Op::Sub => p - q,
            Op::Mul => p * q,
            Op::Div | Op::Rem if q == 0.0 => return div_zero(mode, w),
            Op::Div => p / q,
            Op::Rem => p % q,
            Op::IntDiv => return int_div_exact(&x.to_decimal(w), &y.to_decimal(w), mode, w, &expr),
        };
        return if r.is_finite() {
            Ok(Datum::Double(r))
        } else {
            Err(out_of_range("DOUBLE", &expr()))
        };
    }
    if !is_int(&x) || !is_int(&y) {
        let (p, q) = (x.to_decimal(w), y.to_decimal(w));
        let r = match op {
            Op::Add => p.checked_add(&q),
            Op::Sub => p.checked_sub(&q),
            Op::Mul => p.checked_mul(&q),
            _ if q.is_zero() => return div_zero(mode, w),
            Op::Div => p.checked_div(&q, DIV_INCREMENT),
            Op::Rem => p.checked_rem(&q),
            Op::IntDiv => return int_div_exact(&p, &q, mode, w, &expr),
        };
        return r
            .map(Datum::Decimal)
            .ok_or_else(|| out_of_range("DECIMAL", &expr()));
    }
    let (p, q) = (as_i128(&x), as_i128(&y));
    let unsigned = matches!(x, Datum::UInt(_)) || matches!(y, Datum::UInt(_));
    let r = match op {
        Op::Add => p.checked_add(q),
        Op::Sub => p.checked_sub(q),
        Op::Mul => p.checked_mul(q),
        _ if q == 0 => return div_zero(mode, w),
        Op::Div => {
            let r = Decimal::from_i128(p).checked_div(&Decimal::from_i128(q), DIV_INCREMENT);
            return r
                .map(Datum::Decimal)
                .ok_or_else(|| out_of_range("DECIMAL", &expr()));
        }
        Op::IntDiv => Some(p / q),
        // The remainder takes the dividend's sign and signedness.
        Op::Rem => {
            let r = p % q;
            return Ok(if matches!(x, Datum::UInt(_)) {
                Datum::UInt(r as u64)
            } else {
                Datum::Int(r as i64)
            });
        }
    };
    let signed_result = !unsigned || (op == Op::Sub && mode.has(SqlMode::NO_UNSIGNED_SUBTRACTION));
    match r {
        Some(v) if signed_result => i64::try_from(v)
            .map(Datum::Int)
            .map_err(|_| out_of_range("BIGINT", &expr())),
        Some(v) => u64::try_from(v)
            .map(Datum::UInt)
            .map_err(|_| out_of_range("BIGINT UNSIGNED", &expr())),
        None if signed_result => Err(out_of_range("BIGINT", &expr())),
        None => Err(out_of_range("BIGINT UNSIGNED", &expr())),
    }
}

/// DIV of non-integers: the exact quotient truncated to BIGINT.
fn int_div_exact(
    p: &Decimal,
    q: &Decimal,
    mode: SqlMode,
    w: &mut Warnings,
    expr: &dyn Fn() -> String,
) -> Result<Datum, SqlError> {
    let Some(r) = p.div_trunc(q) else {
        return div_zero(mode, w);
    };
    r.to_i128(true)
        .and_then(|v| i64::try_from(v).ok())
        .map(Datum::Int)
        .ok_or_else(|| out_of_range("BIGINT", &expr()))
}

/// `a + b`.
pub fn add(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::Add, a, b, mode, w)
}

/// `a - b`.
pub fn sub(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::Sub, a, b, mode, w)
}

/// `a * b`.
pub fn mul(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::Mul, a, b, mode, w)
}

/// `a / b`.
pub fn div(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::Div, a, b, mode, w)
}

/// `a DIV b`.
pub fn int_div(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::IntDiv, a, b, mode, w)
}

/// `a % b` / MOD(a, b).
pub fn rem(a: &Datum, b: &Datum, mode: SqlMode, w: &mut Warnings) -> Result<Datum, SqlError> {
    binary(Op::Rem, a, b, mode, w)
}

/// `-a`.
pub fn neg(a: &Datum, w: &mut Warnings) -> Result<Datum, SqlError> {
    let Some(x) = a.numeric(w) else {
        return Ok(Datum::Null);
    };
    let err = || out_of_range("BIGINT", &format!("-({})", show(a)));
    Ok(match x {
        Datum::Int(v) => Datum::Int(v.checked_neg().ok_or_else(err)?),
        Datum::UInt(v) => Datum::Int(i64::try_from(-i128::from(v)).map_err(|_| err())?),
        Datum::Decimal(d) => Datum::Decimal(d.neg()),
        other => Datum::Double(-other.to_f64(w)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Datum {
        Datum::Decimal(Decimal::parse(s).unwrap())
    }

    fn text(r: Result<Datum, SqlError>) -> String {
        match r {
            Ok(d) => d
                .to_text()
                .map_or("NULL".into(), |b| String::from_utf8(b).unwrap()),
            Err(e) => format!("{} {}", e.code, e.message),
        }
    }

    #[test]
    fn integer_rules() {
        let m = SqlMode::DEFAULT;
        let mut w = Warnings::default();
        assert_eq!(
            add(&Datum::Int(1), &Datum::Int(2), m, &mut w),
            Ok(Datum::Int(3))
        );
        assert_eq!(
            text(add(&Datum::Int(i64::MAX), &Datum::Int(1), m, &mut w)),
            "1690 BIGINT value is out of range in '(9223372036854775807 + 1)'"
        );
        assert_eq!(
            text(sub(&Datum::UInt(1), &Datum::Int(2), m, &mut w)),
            "1690 BIGINT UNSIGNED value is out of range in '(1 - 2)'"
        );
        let nus = SqlMode(SqlMode::NO_UNSIGNED_SUBTRACTION);
        assert_eq!(
            sub(&Datum::UInt(1), &Datum::Int(2), nus, &mut w),
            Ok(Datum::Int(-1))
        );
        assert_eq!(
            add(&Datum::UInt(5), &Datum::Int(-3), m, &mut w),
            Ok(Datum::UInt(2))
        );
        assert_eq!(
            text(mul(&Datum::UInt(u64::MAX), &Datum::UInt(u64::MAX), m, &mut w)),
            "1690 BIGINT UNSIGNED value is out of range in '(18446744073709551615 * 18446744073709551615)'"
        );
        assert_eq!(
            text(div(&Datum::Int(1), &Datum::Int(3), m, &mut w)),
            "0.3333"
        );
        assert_eq!(
            text(div(&Datum::Int(7), &Datum::Int(2), m, &mut w)),
            "3.5000"
        );
        assert_eq!(
            text(int_div(&Datum::Int(-7), &Datum::Int(2), m, &mut w)),
            "-3"
        );
        assert_eq!(
            text(int_div(&Datum::Int(i64::MIN), &Datum::Int(-1), m, &mut w)),
            "1690 BIGINT value is out of range in '(-9223372036854775808 DIV -1)'"
        );
        assert_eq!(
            rem(&Datum::Int(-7), &Datum::Int(3), m, &mut w),
            Ok(Datum::Int(-1))
        );
        assert_eq!(
            rem(&Datum::Int(i64::MIN), &Datum::Int(-1), m, &mut w),
            Ok(Datum::Int(0))
        );
        assert_eq!(neg(&Datum::UInt(1 << 63), &mut w), Ok(Datum::Int(i64::MIN)));
        assert_eq!(
            text(neg(&Datum::Int(i64::MIN), &mut w)),
            "1690 BIGINT value is out of range in '-(-9223372036854775808)'"
        );
        assert!(w.is_empty());
    }

    #[test]
    fn division_by_zero() {
        let mut w = Warnings::default();
        for f in [div, int_div, rem] {
            assert_eq!(
                f(&Datum::Int(1), &Datum::Int(0), SqlMode::DEFAULT, &mut w),
                Ok(Datum::Null)
            );
            assert_eq!(
                f(&dec("1.5"), &dec("0.0"), SqlMode::DEFAULT, &mut w),
                Ok(Datum::Null)
            );
            assert_eq!(
                f(
                    &Datum::Double(1.0),
                    &Datum::Int(0),
                    SqlMode::DEFAULT,
                    &mut w
                ),
                Ok(Datum::Null)
            );
        }
        assert_eq!(w.len(), 9);
        assert!(w.has_code(1365));
        assert_eq!(w[0].message, "Division by 0");
        let mut w = Warnings::default();
        assert_eq!(
            div(&Datum::Int(1), &Datum::Int(0), SqlMode(0), &mut w),
            Ok(Datum::Null)
        );
        assert!(w.is_empty());
    }

    #[test]
    fn decimal_double_and_strings() {
        let m = SqlMode::DEFAULT;
        let mut w = Warnings::default();
        assert_eq!(text(add(&dec("0.1"), &dec("0.2"), m, &mut w)), "0.3");
        assert_eq!(
            text(add(&Datum::Double(0.1), &Datum::Double(0.2), m, &mut w)),
            "0.30000000000000004"
        );
        assert_eq!(text(mul(&dec("1.25"), &Datum::Int(3), m, &mut w)), "3.75");
        assert_eq!(
            text(div(&dec("1.00"), &Datum::Int(3), m, &mut w)),
            "0.333333"
        );
        assert_eq!(text(rem(&dec("7.5"), &Datum::Int(2), m, &mut w)), "1.5");
        assert_eq!(text(int_div(&dec("7.5"), &dec("2.5"), m, &mut w)), "3");
        assert_eq!(
            text(int_div(&Datum::Double(7.9), &Datum::Int(2), m, &mut w)),
            "3"
        );
        let nines = dec(&"9".repeat(65));
        assert_eq!(
            text(add(&nines, &Datum::Int(1), m, &mut w)),
            format!(
                "1690 DECIMAL value is out of range in '({} + 1)'",
                "9".repeat(65)
            )
        );
        assert_eq!(
            text(mul(&Datum::Double(1e300), &Datum::Double(1e300), m, &mut w)),
            "1690 DOUBLE value is out of range in '(1e300 * 1e300)'"
        );
        assert!(w.is_empty());
        let s = |x: &str| Datum::Bytes(x.as_bytes().to_vec());
        assert_eq!(text(add(&s("1.5"), &Datum::Int(1), m, &mut w)), "2.5");
        assert_eq!(text(add(&s("abc"), &Datum::Int(1), m, &mut w)), "1");
        assert_eq!(w.len(), 1);
        assert_eq!(text(neg(&s("2"), &mut w)), "-2");
        assert_eq!(text(add(&Datum::Null, &Datum::Int(1), m, &mut w)), "NULL");
    }
}
