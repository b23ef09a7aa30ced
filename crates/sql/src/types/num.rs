//! Numbers in text: the numeric prefix of a string (MySQL's string-to-number conversions read
//! the longest prefix that is a number) and DOUBLE/FLOAT rendering as MySQL prints them.
//!
//! INVARIANTS
//! - `scan` never fails: a string without digits scans as an empty number (value 0).
//! - `format_double` prints the shortest digits that round-trip (dtoa mode 0) and chooses the
//!   fixed or exponent form with MySQL's `my_gcvt` rule: fixed when the decimal exponent
//!   `decpt` (value = 0.DIGITS × 10^decpt) is in -14..=15, or above 15 with digits after the
//!   point; exponent form `1.5e20` / `1e-20` otherwise.

/// The numeric prefix of some bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scan<'a> {
    /// The number's text (sign included, leading spaces excluded); ASCII.
    pub text: &'a str,
    /// At least one mantissa digit was read.
    pub digits: bool,
    /// The number has a '.' or an exponent (not a plain integer).
    pub fraction_or_exp: bool,
    /// Only whitespace follows the number.
    pub clean: bool,
}

/// Reads `[spaces][+-]digits[.digits][e[+-]digits]`. Without digits the text is empty.
pub(crate) fn scan(b: &[u8]) -> Scan<'_> {
    let start = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let mut i = start;
    let digit_run = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_end = digit_run(i);
    let mut digits = int_end > i;
    let mut end = int_end;
    let mut frac = false;
    if end < b.len() && b[end] == b'.' {
        let f_end = digit_run(end + 1);
        if f_end > end + 1 || digits {
            digits = true;
            frac = true;
            end = f_end;
        }
    }
    if digits && end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut j = end + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e_end = digit_run(j);
        if e_end > j {
            frac = true;
            end = e_end;
        }
    }
    if !digits {
        return Scan {
            text: "",
            digits: false,
            fraction_or_exp: false,
            clean: false,
        };
    }
    Scan {
        // Only ASCII digits, signs, '.', 'e' were accepted.
        text: std::str::from_utf8(&b[start..end]).unwrap_or(""),
        digits,
        fraction_or_exp: frac,
        clean: b[end..].iter().all(u8::is_ascii_whitespace),
    }
}

/// The value of a scanned prefix as a double (0 without digits; ±huge saturates).
pub(crate) fn scan_f64(s: &Scan<'_>) -> f64 {
    let v: f64 = s.text.parse().unwrap_or(0.0);
    if v.is_infinite() {
        v.signum() * f64::MAX
    } else {
        v
    }
}

/// DOUBLE as MySQL's text protocol prints it.
pub fn format_double(x: f64) -> String {
    gcvt(&format!("{x:e}"))
}

/// FLOAT (single precision) as MySQL prints it: the shortest digits of the f32.
pub fn format_float(x: f32) -> String {
    gcvt(&format!("{x:e}"))
}

/// Rewrites Rust's shortest `{:e}` output (`-1.2345e-7`) in my_gcvt's form.
fn gcvt(e: &str) -> String {
    let (neg, e) = match e.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, e),
    };
    let (mant, exp) = e.split_once('e').unwrap_or((e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if neg { "-" } else { "" };
    if digits.bytes().all(|c| c == b'0') {
        return format!("{sign}0");
    }
    let len = digits.len() as i32;
    let decpt = exp + 1;
    let fixed = (-14..=15).contains(&decpt) || (decpt > 15 && len > decpt);
    if !fixed {
        return format!("{sign}{mant}e{exp}");
    }
    if decpt <= 0 {
        format!(
            "{sign}0.{}{digits}",
            "0".repeat(decpt.unsigned_abs() as usize)
        )
    } else if decpt >= len {
        format!("{sign}{digits}{}", "0".repeat((decpt - len) as usize))
    } else {
        let (a, b) = digits.split_at(decpt as usize);
        format!("{sign}{a}.{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_mysql() {
        for (x, s) in [
            (1e20, "1e20"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (123456789012345678.0, "1.2345678901234568e17"),
            (18446744073709551616.0, "1.8446744073709552e19"),
            (1.5, "1.5"),
            (-2.0, "-2"),
            (0.0, "0"),
            (-0.0, "-0"),
            (1e-5, "0.00001"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1.5e-14, "0.000000000000015"),
            (1234567890123456.7, "1234567890123456.8"),
            (1.0 / 3.0, "0.3333333333333333"),
            (-1.25e-20, "-1.25e-20"),
            (f64::MAX, "1.7976931348623157e308"),
        ] {
            assert_eq!(format_double(x), s, "{x:e}");
        }
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(3.4e38), "3.4e38");
    }

    #[test]
    fn scans_prefixes() {
        let s = scan(b"  12abc");
        assert_eq!((s.text, s.digits, s.clean), ("12", true, false));
        let s = scan(b"-1.5e3 ");
        assert_eq!((s.text, s.fraction_or_exp, s.clean), ("-1.5e3", true, true));
        let s = scan(b"1e");
        assert_eq!((s.text, s.fraction_or_exp, s.clean), ("1", false, false));
        let s = scan(b".5");
        assert_eq!((s.text, scan_f64(&s)), (".5", 0.5));
        let s = scan(b"abc");
        assert!(!s.digits && !s.clean);
        assert!(!scan(b"").clean && !scan(b"-").digits && !scan(b".").digits);
        assert_eq!(scan_f64(&scan(b"1e999")), f64::MAX);
    }
}
