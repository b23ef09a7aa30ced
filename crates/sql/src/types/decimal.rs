//! DECIMAL: exact decimal numbers (MySQL's `decimal_t`), their arithmetic and their stored form.
//!
//! INVARIANTS
//! - A `Decimal` is `±coefficient × 10^-scale`; the coefficient is kept as little-endian base-10
//!   digits without high zeros (zero is empty and never negative); `scale <= MAX_SCALE` (30).
//! - Every value a public operation returns has at most 65 digits before the point (`fits`);
//!   the `checked_*` operations return None instead of a value that does not.
//! - Rounding is half up, away from zero (MySQL's ROUND for exact values and its decimal
//!   rounding on storage); `*` keeps `s1 + s2` places capped at 30, `/` keeps `s1 + 4`
//!   (div_precision_increment) capped at 30, `%` keeps `max(s1, s2)`.
//!
//! STORED FORM of DECIMAL(M,D) (`Decimal::encode`, a `ColumnKind::Fixed(bin_size(M,D))` field),
//! MySQL's own binary format, which memcmp orders like the numbers:
//!
//! | part | bytes |
//! |---|---|
//! | integer part, M-D digits | first the leading (M-D) % 9 digits in 0,1,1,2,2,3,3,4,4,4 bytes (by digit count 0..9), then each group of 9 digits in 4 bytes |
//! | fraction, D digits | each group of 9 digits in 4 bytes, then the trailing D % 9 digits in 0,1,1,2,2,3,3,4,4,4 bytes |
//!
//! Each group is its digits' value, big-endian. For a negative number every byte is then
//! inverted; finally the top bit of the first byte is flipped (set for positive numbers and
//! zero, clear for negative ones). Example: DECIMAL(5,2) 123.45 → `80 7B 2D`, -123.45 → `7F 84 D2`.

use std::cmp::Ordering;
use std::fmt;

/// Digits before the point a value may have (DECIMAL(65,0)).
pub const MAX_PRECISION: u8 = 65;
/// Digits after the point a value may have.
pub const MAX_SCALE: u8 = 30;
/// div_precision_increment: `/` adds this many places to the dividend's.
pub const DIV_INCREMENT: u8 = 4;

/// Bytes for the leftover digits of a group (index: digit count 0..=9).
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

#[derive(Clone, Debug)]
pub struct Decimal {
    neg: bool,
    mag: Vec<u8>,
    scale: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// Not a number.
    Syntax,
    /// More than 65 digits before the point.
    Overflow,
}

/// How a value fitted a DECIMAL(M,D) column (`Decimal::fit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Exact,
    /// Non-zero digits beyond D places were rounded away.
    Rounded,
    /// Too many integer digits: the value was replaced by the column's bound.
    Overflow,
}

fn trim(mut v: Vec<u8>) -> Vec<u8> {
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

fn mag_cmp(a: &[u8], b: &[u8]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn mag_add(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n + 1);
    let mut carry = 0u8;
    for i in 0..n {
        let s = a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0) + carry;
        out.push(s % 10);
        carry = s / 10;
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a - b` for `a >= b`.
fn mag_sub(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0u8;
    for (i, &x) in a.iter().enumerate() {
        let y = b.get(i).copied().unwrap_or(0) + borrow;
        if x >= y {
            out.push(x - y);
            borrow = 0;
        } else {
            out.push(x + 10 - y);
            borrow = 1;
        }
    }
    trim(out)
}

fn mag_mul(a: &[u8], b: &[u8]) -> Vec<u8> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    // Each cell sums at most min(len) products of 81: far below u32::MAX for our lengths.
    let mut acc = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            acc[i + j] += u32::from(x) * u32::from(y);
        }
    }
    let mut out = Vec::with_capacity(acc.len() + 2);
    let mut carry = 0u32;
    for c in acc {
        let s = c + carry;
        out.push((s % 10) as u8);
        carry = s / 10;
    }
    while carry > 0 {
        out.push((carry % 10) as u8);
        carry /= 10;
    }
    trim(out)
}

/// (a / b, a % b) for b != 0.
fn mag_divmod(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut q = vec![0u8; a.len()];
    let mut r: Vec<u8> = Vec::new();
    for i in (0..a.len()).rev() {
        r.insert(0, a[i]);
        r = trim(r);
        let mut d = 0;
        while mag_cmp(&r, b) != Ordering::Less {
            r = mag_sub(&r, b);
            d += 1;
        }
        q[i] = d;
    }
    (trim(q), r)
}

/// Compares magnitudes `a` / 10^`sa` and `b` / 10^`sb` digit by digit from the top, without
/// aligning copies.
fn scaled_cmp(a: &[u8], sa: u8, b: &[u8], sb: u8) -> Ordering {
    let (sa, sb) = (isize::from(sa), isize::from(sb));
    // Digit i of a magnitude of scale s stands for 10^(i - s).
    let digit = |m: &[u8], s: isize, e: isize| -> u8 {
        usize::try_from(e + s)
            .ok()
            .and_then(|i| m.get(i).copied())
            .unwrap_or(0)
    };
    let top = (a.len() as isize - sa).max(b.len() as isize - sb);
    let bottom = (-sa).min(-sb);
    let mut e = top - 1;
    while e >= bottom {
        let (x, y) = (digit(a, sa, e), digit(b, sb, e));
        if x != y {
            return x.cmp(&y);
        }
        e -= 1;
    }
    Ordering::Equal
}

/// `a × 10^k`.
fn shl(a: &[u8], k: usize) -> Vec<u8> {
    if a.is_empty() {
        return Vec::new();
    }
    let mut v = vec![0u8; k];
    v.extend_from_slice(a);
    v
}

/// `a / 10^k`, rounded half up (or truncated).
fn shr(a: &[u8], k: usize, truncate: bool) -> Vec<u8> {
    if k == 0 {
        return a.to_vec();
    }
    if k > a.len() {
        return Vec::new();
    }
    let rest = &a[k..];
    if !truncate && a[k - 1] >= 5 {
        mag_add(rest, &[1])
    } else {
        rest.to_vec()
    }
}

impl Decimal {
    fn new(neg: bool, mag: Vec<u8>, scale: u8) -> Decimal {
        let mag = trim(mag);
        Decimal {
            neg: neg && !mag.is_empty(),
            mag,
            scale,
        }
    }

    /// Zero with `scale` places (scale capped at 30).
    pub fn zero(scale: u8) -> Decimal {
        Decimal::new(false, Vec::new(), scale.min(MAX_SCALE))
    }

    pub fn from_i128(v: i128) -> Decimal {
        let mut u = v.unsigned_abs();
        let mut mag = Vec::new();
        while u > 0 {
            mag.push((u % 10) as u8);
            u /= 10;
        }
        Decimal::new(v < 0, mag, 0)
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal::from_i128(i128::from(v))
    }

    pub fn from_u64(v: u64) -> Decimal {
        Decimal::from_i128(i128::from(v))
    }

    /// The shortest decimal that reads back as `x` (MySQL converts doubles through their
    /// shortest text); more than 30 places are rounded.
    pub fn from_f64(x: f64) -> Result<Decimal, DecimalError> {
        if !x.is_finite() {
            return Err(DecimalError::Overflow);
        }
        Decimal::parse(&format!("{x:e}"))
    }

    /// `[+-]digits[.digits][e[+-]digits]` with optional surrounding whitespace; more than 30
    /// places are rounded half up.
    pub fn parse(s: &str) -> Result<Decimal, DecimalError> {
        let b = s.trim_matches(|c: char| c.is_ascii_whitespace()).as_bytes();
        let mut i = 0;
        let neg = match b.first() {
            Some(b'-') => {
                i = 1;
                true
            }
            Some(b'+') => {
                i = 1;
                false
            }
            _ => false,
        };
        let mut be = Vec::new(); // mantissa digits, most significant first
        let mut frac_len: i64 = 0;
        let mut seen_point = false;
        let mut any = false;
        while i < b.len() {
            match b[i] {
                c @ b'0'..=b'9' => {
                    any = true;
                    if !(be.is_empty() && c == b'0') {
                        be.push(c - b'0');
                    }
                    if seen_point {
                        frac_len += 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if !any {
            return Err(DecimalError::Syntax);
        }
        let mut exp: i64 = 0;
        if i < b.len() {
            if b[i] != b'e' && b[i] != b'E' {
                return Err(DecimalError::Syntax);
            }
            i += 1;
            let eneg = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            if i >= b.len() || !b[i..].iter().all(u8::is_ascii_digit) {
                return Err(DecimalError::Syntax);
            }
            for &c in &b[i..] {
                // Saturate: anything past a million places is overflow or zero anyway.
                exp = (exp * 10 + i64::from(c - b'0')).min(1_000_000);
            }
            if eneg {
                exp = -exp;
            }
        }
        be.reverse();
        let mag = be;
        let e = exp - frac_len;
        if mag.is_empty() {
            return Ok(Decimal::zero(
                e.clamp(-i64::from(MAX_SCALE), 0).unsigned_abs() as u8,
            ));
        }
        let d = if e >= 0 {
            if mag.len() as i64 + e > i64::from(MAX_PRECISION) {
                return Err(DecimalError::Overflow);
            }
            Decimal::new(neg, shl(&mag, e as usize), 0)
        } else {
            let scale = e.unsigned_abs();
            if scale > u64::from(MAX_SCALE) {
                let drop = usize::try_from(scale - u64::from(MAX_SCALE)).unwrap_or(usize::MAX);
                Decimal::new(neg, shr(&mag, drop, false), MAX_SCALE)
            } else {
                Decimal::new(neg, mag, scale as u8)
            }
        };
        if d.fits() {
            Ok(d)
        } else {
            Err(DecimalError::Overflow)
        }
    }

    pub fn scale(&self) -> u8 {
        self.scale
    }

    pub fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub fn is_negative(&self) -> bool {
        self.neg
    }

    /// Digits before the point (0 for |x| < 1).
    pub fn int_digits(&self) -> usize {
        self.mag.len().saturating_sub(usize::from(self.scale))
    }

    fn fits(&self) -> bool {
        self.int_digits() <= usize::from(MAX_PRECISION)
    }

    fn checked(self) -> Option<Decimal> {
        self.fits().then_some(self)
    }

    pub fn neg(&self) -> Decimal {
        Decimal::new(!self.neg, self.mag.clone(), self.scale)
    }

    pub fn abs(&self) -> Decimal {
        Decimal::new(false, self.mag.clone(), self.scale)
    }

    /// ROUND(x, places) / TRUNCATE(x, places): `places` may be negative (round to tens...);
    /// the result has `max(places, 0)` places (capped at 30), more places than the value has
    /// add zeros. May exceed 65 integer digits by one (999.5 → 1000): callers storing it check.
    pub fn round_to(&self, places: i64, truncate: bool) -> Decimal {
        let places = places.clamp(-(i64::from(MAX_PRECISION) + 1), i64::from(MAX_SCALE));
        let cur = i64::from(self.scale);
        if places >= cur {
            return Decimal::new(
                self.neg,
                shl(&self.mag, (places - cur) as usize),
                places as u8,
            );
        }
        let mag = shr(&self.mag, (cur - places) as usize, truncate);
        if places >= 0 {
            Decimal::new(self.neg, mag, places as u8)
        } else {
            Decimal::new(self.neg, shl(&mag, places.unsigned_abs() as usize), 0)
        }
    }

    fn aligned(&self, o: &Decimal) -> (Vec<u8>, Vec<u8>, u8) {
        let s = self.scale.max(o.scale);
        (
            shl(&self.mag, usize::from(s - self.scale)),
            shl(&o.mag, usize::from(s - o.scale)),
            s,
        )
    }

    pub fn checked_add(&self, o: &Decimal) -> Option<Decimal> {
        let (x, y, s) = self.aligned(o);
        let r = if self.neg == o.neg {
            Decimal::new(self.neg, mag_add(&x, &y), s)
        } else if mag_cmp(&x, &y) == Ordering::Less {
            Decimal::new(o.neg, mag_sub(&y, &x), s)
        } else {
            Decimal::new(self.neg, mag_sub(&x, &y), s)
        };
        r.checked()
    }

    pub fn checked_sub(&self, o: &Decimal) -> Option<Decimal> {
        self.checked_add(&o.neg())
    }

    pub fn checked_mul(&self, o: &Decimal) -> Option<Decimal> {
        let r = Decimal::new(
            self.neg != o.neg,
            mag_mul(&self.mag, &o.mag),
            self.scale + o.scale,
        );
        if r.scale > MAX_SCALE {
            r.round_to(i64::from(MAX_SCALE), false).checked()
        } else {
            r.checked()
        }
    }

    /// `self / o` with `self.scale + incr` places (capped at 30), rounded half up; None for a
    /// zero divisor or an overflow.
    pub fn checked_div(&self, o: &Decimal, incr: u8) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let t = self.scale.saturating_add(incr).min(MAX_SCALE);
        // A/10^sa ÷ B/10^sb with t+1 places = A × 10^(sb + t + 1 - sa) ÷ B; t >= sa.
        let k = usize::from(o.scale) + usize::from(t) + 1 - usize::from(self.scale);
        let (q, _) = mag_divmod(&shl(&self.mag, k), &o.mag);
        Decimal::new(self.neg != o.neg, shr(&q, 1, false), t).checked()
    }

    /// `self % o` (sign of the dividend, `max(s1, s2)` places); None for a zero divisor.
    pub fn checked_rem(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let (x, y, s) = self.aligned(o);
        Some(Decimal::new(self.neg, mag_divmod(&x, &y).1, s))
    }

    /// `self DIV o`: the quotient truncated to an integer; None for a zero divisor.
    pub fn div_trunc(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let (x, y, _) = self.aligned(o);
        Some(Decimal::new(self.neg != o.neg, mag_divmod(&x, &y).0, 0))
    }

    /// The value rounded half up (or truncated) to an integer; None beyond i128.
    pub fn to_i128(&self, truncate: bool) -> Option<i128> {
        // Rounded to scale 0, the unscaled value is the integer.
        self.round_to(0, truncate).unscaled()
    }

    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// The largest DECIMAL(m,d) magnitude (all nines), with the given sign.
    pub fn bound(m: u8, d: u8, neg: bool) -> Decimal {
        Decimal::new(neg, vec![9; usize::from(m)], d)
    }

    /// The value to store in DECIMAL(m,d): rounded to `d` places; if it then has more than
    /// `m - d` integer digits, the column's bound with the value's sign.
    pub fn fit(&self, m: u8, d: u8) -> (Decimal, Fit) {
        let r = self.round_to(i64::from(d), false);
        if r.int_digits() > usize::from(m.saturating_sub(d)) {
            return (Decimal::bound(m, d, self.neg), Fit::Overflow);
        }
        let lost = self.scale > d && self.round_to(i64::from(d), true) != *self;
        (r, if lost { Fit::Rounded } else { Fit::Exact })
    }

    /// Stored size of DECIMAL(m,d).
    pub fn bin_size(m: u8, d: u8) -> u16 {
        let (intg, d) = (usize::from(m.saturating_sub(d)), usize::from(d));
        ((intg / 9) * 4 + DIG2BYTES[intg % 9] + (d / 9) * 4 + DIG2BYTES[d % 9]) as u16
    }

    /// The stored form in DECIMAL(m,d) (module doc). The value is first `fit` to the column.
    pub fn encode(&self, m: u8, d: u8) -> Vec<u8> {
        let (v, _) = self.fit(m, d);
        let m = usize::from(m);
        let intg = m.saturating_sub(usize::from(d));
        // The coefficient at scale d as m digits, most significant first.
        let be: Vec<u8> = (0..m)
            .map(|k| v.mag.get(m - 1 - k).copied().unwrap_or(0))
            .collect();
        let mut out = Vec::with_capacity(usize::from(Decimal::bin_size(m as u8, d)));
        for (start, len) in groups(intg, usize::from(d)) {
            let val = be[start..start + len]
                .iter()
                .fold(0u32, |a, &x| a * 10 + u32::from(x));
            out.extend_from_slice(&val.to_be_bytes()[4 - DIG2BYTES[len]..]);
        }
        if v.neg {
            for b in &mut out {
                *b = !*b;
            }
        }
        if let Some(b) = out.first_mut() {
            *b ^= 0x80;
        }
        out
    }

    /// Reads the stored form of DECIMAL(m,d); None if the bytes are not one.
    pub fn decode(bytes: &[u8], m: u8, d: u8) -> Option<Decimal> {
        if bytes.len() != usize::from(Decimal::bin_size(m, d)) || bytes.is_empty() {
            return None;
        }
        // The sign bit is stored flipped, and a negative value's bytes inverted.
        let neg = bytes[0] & 0x80 == 0;
        let flip = if neg { 0xFF } else { 0 };
        let byte = |i: usize| bytes[i] ^ flip ^ if i == 0 { 0x80 } else { 0 };
        // The groups from the last (least significant) on, each giving its digits least
        // significant first: `mag`'s order.
        let mut mag = Vec::with_capacity(usize::from(m));
        let mut end = bytes.len();
        for len in group_lens(usize::from(m.saturating_sub(d)), usize::from(d)).rev() {
            let start = end - DIG2BYTES[len];
            let val = (start..end).fold(0u32, |a, i| (a << 8) | u32::from(byte(i)));
            end = start;
            if u64::from(val) >= 10u64.pow(len as u32) {
                return None;
            }
            let mut v = val;
            for _ in 0..len {
                mag.push((v % 10) as u8);
                v /= 10;
            }
        }
        Some(Decimal::new(neg, mag, d))
    }

    /// The value times 10^scale, when that fits in an i128 (38 digits).
    pub fn unscaled(&self) -> Option<i128> {
        if self.mag.len() > 38 {
            return None;
        }
        let v = self
            .mag
            .iter()
            .rev()
            .fold(0i128, |acc, &d| acc * 10 + i128::from(d));
        Some(if self.neg { -v } else { v })
    }

    /// `v` / 10^scale (scale capped at 30).
    pub fn from_unscaled(v: i128, scale: u8) -> Decimal {
        let mut d = Decimal::from_i128(v);
        d.scale = scale.min(MAX_SCALE);
        d
    }
}

/// The digit counts of DECIMAL(intg+frac, frac)'s groups, in order (as `groups`).
fn group_lens(intg: usize, frac: usize) -> impl DoubleEndedIterator<Item = usize> {
    let (lead, trail) = (intg % 9, frac % 9);
    std::iter::once(lead)
        .filter(|&l| l > 0)
        .chain(std::iter::repeat_n(9, intg / 9 + frac / 9))
        .chain(std::iter::once(trail).filter(|&l| l > 0))
}

/// The digit groups of DECIMAL(intg+frac, frac) as (first digit, digit count), in order.
fn groups(intg: usize, frac: usize) -> Vec<(usize, usize)> {
    let mut g = Vec::new();
    let lead = intg % 9;
    if lead > 0 {
        g.push((0, lead));
    }
    let mut p = lead;
    while p < intg {
        g.push((p, 9));
        p += 9;
    }
    let end = intg + frac;
    while p + 9 <= end {
        g.push((p, 9));
        p += 9;
    }
    if p < end {
        g.push((p, end - p));
    }
    g
}

impl PartialEq for Decimal {
    fn eq(&self, o: &Decimal) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, o: &Decimal) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Decimal {
    fn cmp(&self, o: &Decimal) -> Ordering {
        match (self.neg, o.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            _ => {
                let c = scaled_cmp(&self.mag, self.scale, &o.mag, o.scale);
                if self.neg {
                    c.reverse()
                } else {
                    c
                }
            }
        }
    }
}

impl fmt::Display for Decimal {
    /// The value with exactly `scale` places, as MySQL prints DECIMAL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::with_capacity(self.mag.len() + 3);
        self.push_text(&mut text);
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Decimal {
    /// The value with exactly `scale` places (at least one digit before the point), appended
    /// to `out`: what Display writes, without building strings (result rows render every
    /// DECIMAL value).
    pub fn push_text(&self, out: &mut Vec<u8>) {
        let s = usize::from(self.scale);
        let n = self.mag.len().max(s + 1);
        if self.neg {
            out.push(b'-');
        }
        for i in (0..n).rev() {
            if s > 0 && i + 1 == s {
                out.push(b'.');
            }
            out.push(b'0' + self.mag.get(i).copied().unwrap_or(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn parse_and_print() {
        for (i, o) in [
            ("1.50", "1.50"),
            ("-0.0", "0.0"),
            ("  +12 ", "12"),
            (".5", "0.5"),
            ("5.", "5"),
            ("1.5e3", "1500"),
            ("1.5e-3", "0.0015"),
            ("-000123.4500", "-123.4500"),
            ("1e-31", "0.000000000000000000000000000000"),
            ("5e-31", "0.000000000000000000000000000001"),
            (
                "0.1234567890123456789012345678905",
                "0.123456789012345678901234567891",
            ),
            ("0e99999999999", "0"),
        ] {
            assert_eq!(d(i).to_string(), o, "{i}");
        }
        for bad in ["", "-", ".", "1.2.3", "abc", "1e", "1e+", "1x"] {
            assert_eq!(Decimal::parse(bad), Err(DecimalError::Syntax), "{bad}");
        }
        let nines = "9".repeat(65);
        assert_eq!(d(&nines).to_string(), nines);
        assert_eq!(
            Decimal::parse(&format!("{nines}9")),
            Err(DecimalError::Overflow)
        );
        assert_eq!(Decimal::parse("1e65"), Err(DecimalError::Overflow));
        assert_eq!(
            Decimal::parse("1e999999999999"),
            Err(DecimalError::Overflow)
        );
        assert_eq!(Decimal::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(
            Decimal::from_f64(-1e20).unwrap().to_string(),
            "-100000000000000000000"
        );
        assert_eq!(
            Decimal::from_i64(i64::MIN).to_string(),
            "-9223372036854775808"
        );
        assert_eq!(
            Decimal::from_u64(u64::MAX).to_string(),
            "18446744073709551615"
        );
    }

    #[test]
    fn arithmetic() {
        let add = |a: &str, b: &str| d(a).checked_add(&d(b)).unwrap().to_string();
        assert_eq!(add("1.5", "2.25"), "3.75");
        assert_eq!(add("1.5", "-2.25"), "-0.75");
        assert_eq!(add("-1.50", "1.5"), "0.00");
        assert_eq!(d("0.1").checked_sub(&d("0.3")).unwrap().to_string(), "-0.2");
        let mul = |a: &str, b: &str| d(a).checked_mul(&d(b)).unwrap().to_string();
        assert_eq!(mul("1.5", "-2.25"), "-3.375");
        assert_eq!(
            mul("0.000000000000001", "0.0000000000000015"),
            "0.000000000000000000000000000002"
        );
        let div = |a: &str, b: &str| d(a).checked_div(&d(b), DIV_INCREMENT).unwrap().to_string();
        assert_eq!(div("1", "3"), "0.3333");
        assert_eq!(div("2", "3"), "0.6667");
        assert_eq!(div("-2", "3"), "-0.6667");
        assert_eq!(div("1.00", "8"), "0.125000");
        assert_eq!(div("10", "0.001"), "10000.0000");
        assert_eq!(d("1").checked_div(&d("0.00"), 4), None);
        assert_eq!(d("-7.5").checked_rem(&d("2")).unwrap().to_string(), "-1.5");
        assert_eq!(d("7").checked_rem(&d("-2.25")).unwrap().to_string(), "0.25");
        assert_eq!(d("-7.9").div_trunc(&d("2")).unwrap().to_string(), "-3");
        let nines = d(&"9".repeat(65));
        assert_eq!(nines.checked_add(&d("1")), None);
        assert_eq!(nines.checked_mul(&d("10")), None);
        assert_eq!(nines.checked_sub(&nines).unwrap().to_string(), "0");
        let big = nines.checked_div(&d("3"), 4).unwrap();
        assert_eq!(big.to_string(), format!("{}.0000", "3".repeat(65)));
        assert!(d("1.0") == d("1") && d("-2") < d("-1.5") && d("0.01") > d("-5"));
    }

    #[test]
    fn rounding_and_fit() {
        let r = |a: &str, p: i64| d(a).round_to(p, false).to_string();
        assert_eq!(r("2.5", 0), "3");
        assert_eq!(r("-2.5", 0), "-3");
        assert_eq!(r("1.245", 2), "1.25");
        assert_eq!(r("1.5", 3), "1.500");
        assert_eq!(r("155", -1), "160");
        assert_eq!(r("-155", -2), "-200");
        assert_eq!(r("4", -1), "0");
        assert_eq!(r("999.96", 1), "1000.0");
        assert_eq!(d("-2.59").round_to(1, true).to_string(), "-2.5");
        assert_eq!(d("2.5").to_i128(false), Some(3));
        assert_eq!(d("-2.5").to_i128(true), Some(-2));
        assert_eq!(d(&"9".repeat(40)).to_i128(false), None);
        let (v, f) = d("123.456").fit(5, 2);
        assert_eq!((v.to_string(), f), ("123.46".into(), Fit::Rounded));
        let (v, f) = d("123.400").fit(5, 2);
        assert_eq!((v.to_string(), f), ("123.40".into(), Fit::Exact));
        let (v, f) = d("-999.996").fit(5, 2);
        assert_eq!((v.to_string(), f), ("-999.99".into(), Fit::Overflow));
        let (v, f) = d("1000").fit(5, 2);
        assert_eq!((v.to_string(), f), ("999.99".into(), Fit::Overflow));
    }

    #[test]
    fn stored_form() {
        assert_eq!(Decimal::bin_size(5, 2), 3);
        assert_eq!(Decimal::bin_size(10, 2), 5);
        assert_eq!(Decimal::bin_size(65, 30), 30);
        assert_eq!(Decimal::bin_size(18, 9), 8);
        assert_eq!(d("123.45").encode(5, 2), vec![0x80, 0x7B, 0x2D]);
        assert_eq!(d("-123.45").encode(5, 2), vec![0x7F, 0x84, 0xD2]);
        for (m, s) in [
            (5, 2),
            (10, 0),
            (65, 30),
            (30, 30),
            (18, 9),
            (1, 0),
            (20, 10),
        ] {
            for v in ["0", "1", "-1", "0.5", "-0.5", "12.25", "-9.125"] {
                let x = d(v).round_to(i64::from(s), false);
                if x.int_digits() > usize::from(m - s) {
                    continue;
                }
                let b = x.encode(m, s);
                assert_eq!(b.len(), usize::from(Decimal::bin_size(m, s)));
                let back = Decimal::decode(&b, m, s);
                assert_eq!(back, Some(x.clone()), "{v} in ({m},{s})");
                assert_eq!(back.map(|y| y.to_string()), Some(x.to_string()));
            }
        }
        assert_eq!(Decimal::decode(&[0xFF, 0xFF, 0xFF], 5, 2), None);
        assert_eq!(Decimal::decode(&[0x80], 5, 2), None);
    }

    #[test]
    fn compares_across_scales() {
        use std::cmp::Ordering::*;
        for (a, b, o) in [
            ("1.50", "1.5", Equal),
            ("0.05", "0.5", Less),
            ("10", "9.99", Greater),
            ("-10", "-9.99", Less),
            ("0", "0.000", Equal),
            ("0.001", "0", Greater),
            ("-0.001", "0", Less),
            ("123.4", "123.40001", Less),
        ] {
            assert_eq!(d(a).cmp(&d(b)), o, "{a} vs {b}");
            assert_eq!(d(b).cmp(&d(a)), o.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn unscaled_values() {
        for v in ["0.00", "14.01", "-14.01", "123456789012345678.123", "-0.5"] {
            let x = d(v);
            let u = x.unscaled().unwrap();
            assert_eq!(Decimal::from_unscaled(u, x.scale()).to_string(), v);
        }
        assert_eq!(d("12.5").unscaled(), Some(125));
        assert_eq!(d(&"9".repeat(39)).unscaled(), None);
    }

    #[test]
    fn stored_form_sorts_like_values() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (m, s) in [(65u8, 30u8), (10, 2), (20, 0), (9, 9), (12, 5)] {
            let mut vals: Vec<Decimal> = (0..300)
                .map(|_| {
                    let digits: String = (0..m)
                        .map(|_| char::from(b'0' + (next() % 10) as u8))
                        .collect();
                    let cut = (next() % u64::from(m) + 1) as usize;
                    let sign = if next() % 2 == 0 { "-" } else { "" };
                    let text = format!("{sign}{}", &digits[..cut]);
                    Decimal::from_i128(0)
                        .checked_add(&d(&text))
                        .unwrap()
                        .round_to(0, false)
                        .checked_div(&d(&format!("1{}", "0".repeat(usize::from(s)))), s)
                        .unwrap()
                        .round_to(i64::from(s), false)
                })
                .filter(|v| v.int_digits() <= usize::from(m - s))
                .collect();
            vals.push(Decimal::zero(s));
            let mut by_bytes: Vec<(Vec<u8>, Decimal)> =
                vals.iter().map(|v| (v.encode(m, s), v.clone())).collect();
            by_bytes.sort_by(|a, b| a.0.cmp(&b.0));
            vals.sort();
            let sorted: Vec<Decimal> = by_bytes.into_iter().map(|x| x.1).collect();
            assert_eq!(sorted, vals, "({m},{s})");
        }
    }
}
