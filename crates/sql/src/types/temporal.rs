//! DATE, DATETIME/TIMESTAMP, TIME and YEAR values: MySQL's accepted text and number forms,
//! printing, calendar arithmetic and the memcomparable stored forms.
//!
//! INVARIANTS
//! - Values are proleptic Gregorian with MySQL's ranges: years 0..=9999, TIME within
//!   ±838:59:59.999999. A `Date` may hold month or day 0 (MySQL's zero and zero-in-date
//!   values); whether such a date, or an impossible one (Feb 30), is acceptable depends on the
//!   sql_mode and is decided by `date_problem`, never by the parser.
//! - `DateTime` and `Time` carry their fractional-seconds precision `fsp` (0..=6), which only
//!   decides how many digits print; `micro` is always in microseconds, already rounded to fsp.
//! - Time zone: TIMESTAMP values are held and stored as UTC, and the session time zone is
//!   taken to be UTC (SYSTEM = UTC); `now()` reads the system clock in UTC.
//!
//! STORED FORMS (`ColumnKind::Fixed`, big-endian, memcmp orders them like the values; F = fsp,
//! frac = the fraction in units of 10^-F s in (F+1)/2 bytes):
//!
//! | type | bytes | content |
//! |---|---|---|
//! | DATE | 3 | (year × 16 + month) × 32 + day |
//! | DATETIME(F) | 5 + (F+1)/2 | 2^39 \| (year × 13 + month) << 22 \| day << 17 \| hour << 12 \| minute << 6 \| second, then frac |
//! | TIMESTAMP(F) | 4 + (F+1)/2 | seconds since 1970-01-01 00:00:00 UTC (0 = the zero timestamp), then frac |
//! | TIME(F) | 3 + (F+1)/2 | the signed time in units of 10^-F s, plus 2^(8 × bytes - 1) |
//! | YEAR | 1 (`ColumnKind::Int` unsigned) | 0 for 0000, else year - 1900 |

use std::cell::RefCell;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    /// The time zone of the session whose statement this thread runs (time_zone; the SQL
    /// layer sets it before each statement). TIMESTAMP values are stored as UTC seconds and
    /// shown in it.
    static SESSION_TZ: RefCell<Tz> = const { RefCell::new(Tz::Offset(0)) };
}

/// Makes `tz` the time zone TIMESTAMP values of this thread convert with.
pub fn set_session_tz(tz: Tz) {
    SESSION_TZ.with(|c| *c.borrow_mut() = tz);
}

/// The wall-clock time in the session's time zone of instant `utc` (seconds since the
/// epoch; tz.rs Z1).
pub fn session_utc_to_local(utc: i64) -> i64 {
    SESSION_TZ.with(|c| c.borrow().utc_to_local(utc))
}

/// The instant of wall-clock time `local` in the session's time zone (tz.rs Z1).
pub fn session_local_to_utc(local: i64) -> i64 {
    SESSION_TZ.with(|c| c.borrow().local_to_utc(local))
}

use super::tz::Tz;
use super::SqlMode;
use crate::ast::IntervalUnit;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// DATETIME and TIMESTAMP values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DateTime {
    pub date: Date,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
    pub fsp: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Time {
    pub negative: bool,
    pub hours: u16,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
    pub fsp: u8,
}

const MICROS_PER_SEC: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SEC;
/// TO_DAYS('1970-01-01').
const EPOCH_DAY_NUMBER: i64 = 719_528;
/// 838:59:59.999999 in microseconds.
pub const TIME_MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * MICROS_PER_SEC + 999_999;
/// The TIMESTAMP range in seconds since the epoch: 1970-01-01 00:00:01 .. 2038-01-19 03:14:07.
pub const TIMESTAMP_MIN: i64 = 1;
pub const TIMESTAMP_MAX: i64 = 2_147_483_647;

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if is_leap(i64::from(year)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9).rem_euclid(12);
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m as u8, d as u8)
}

/// Bytes of the fraction of a temporal type with this fsp.
pub fn frac_bytes(fsp: u8) -> usize {
    usize::from(fsp.min(6)).div_ceil(2)
}

fn pow10(n: u8) -> u32 {
    10u32.pow(u32::from(n.min(6)))
}

/// Rounds (or truncates) microseconds to `fsp` digits; the result may be 1_000_000 (a carry).
fn round_micro(micro: u32, fsp: u8, truncate: bool) -> u32 {
    let q = pow10(6 - fsp.min(6));
    if truncate {
        micro / q * q
    } else {
        (micro + q / 2) / q * q
    }
}

fn frac_encode(micro: u32, fsp: u8, out: &mut Vec<u8>) {
    let n = frac_bytes(fsp);
    let v = micro.min(999_999) / pow10(6 - fsp.min(6));
    out.extend_from_slice(&v.to_be_bytes()[4 - n..]);
}

fn frac_decode(b: &[u8], fsp: u8) -> Option<u32> {
    let v = b.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x));
    let micro = v.checked_mul(pow10(6 - fsp.min(6)))?;
    (micro < 1_000_000).then_some(micro)
}

fn be_uint(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x))
}

fn write_frac(f: &mut fmt::Formatter<'_>, micro: u32, fsp: u8) -> fmt::Result {
    if fsp > 0 {
        let fsp = fsp.min(6);
        let v = micro / pow10(6 - fsp);
        write!(f, ".{v:0w$}", w = usize::from(fsp))?;
    }
    Ok(())
}

/// Why a date is not acceptable under a sql_mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateProblem {
    /// 0000-00-00 under NO_ZERO_DATE.
    ZeroDate,
    /// A zero month or day under NO_ZERO_IN_DATE.
    ZeroInDate,
    /// A day past the month's end (without ALLOW_INVALID_DATES).
    Invalid,
}

/// Whether `d` may be stored under `mode` (None) or why not.
pub fn date_problem(d: &Date, mode: SqlMode) -> Option<DateProblem> {
    if d.is_zero() {
        return mode
            .has(SqlMode::NO_ZERO_DATE)
            .then_some(DateProblem::ZeroDate);
    }
    if d.month == 0 || d.day == 0 {
        return mode
            .has(SqlMode::NO_ZERO_IN_DATE)
            .then_some(DateProblem::ZeroInDate);
    }
    let ok = d.month <= 12
        && (d.day <= days_in_month(d.year, d.month)
            || (mode.has(SqlMode::ALLOW_INVALID_DATES) && d.day <= 31));
    (!ok).then_some(DateProblem::Invalid)
}

impl Date {
    pub fn is_zero(&self) -> bool {
        self.year == 0 && self.month == 0 && self.day == 0
    }

    /// A real calendar day (no zero parts, no Feb 30).
    pub fn is_valid(&self) -> bool {
        (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
    }

    /// MySQL's TO_DAYS: days since year 0 (TO_DAYS('1970-01-01') = 719528).
    pub fn day_number(&self) -> i64 {
        days_from_civil(
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        ) + EPOCH_DAY_NUMBER
    }

    /// FROM_DAYS: None outside years 0..=9999.
    pub fn from_day_number(n: i64) -> Option<Date> {
        let (y, month, day) = civil_from_days(n.checked_sub(EPOCH_DAY_NUMBER)?);
        Some(Date {
            year: u16::try_from(y).ok().filter(|y| *y <= 9999)?,
            month,
            day,
        })
    }

    /// WEEKDAY(): 0 = Monday .. 6 = Sunday.
    pub fn weekday(&self) -> u8 {
        (self.day_number() + 5).rem_euclid(7) as u8
    }

    /// DAYOFYEAR(): 1..=366.
    pub fn day_of_year(&self) -> u16 {
        let jan1 = Date {
            year: self.year,
            month: 1,
            day: 1,
        };
        (self.day_number() - jan1.day_number() + 1).clamp(0, 366) as u16
    }

    /// YYYYMMDD.
    pub fn to_int(&self) -> i64 {
        i64::from(self.year) * 10_000 + i64::from(self.month) * 100 + i64::from(self.day)
    }

    pub fn encode(&self) -> Vec<u8> {
        let v = (u32::from(self.year) * 16 + u32::from(self.month)) * 32 + u32::from(self.day);
        v.to_be_bytes()[1..].to_vec()
    }

    pub fn decode(b: &[u8]) -> Option<Date> {
        if b.len() != 3 {
            return None;
        }
        let v = be_uint(b) as u32;
        let d = Date {
            year: u16::try_from(v >> 9).ok()?,
            month: ((v >> 5) & 15) as u8,
            day: (v & 31) as u8,
        };
        (d.year <= 9999 && d.month <= 12).then_some(d)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::with_capacity(10);
        self.push_text(&mut text);
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

/// `v` in at least `width` digits, zero-padded (what `{v:0width$}` writes, without the
/// formatter: result rows render every temporal value).
fn push_padded(out: &mut Vec<u8>, v: u32, width: usize) {
    let mut digits = [0u8; 10];
    let (mut n, mut x) = (0, v);
    loop {
        digits[n] = b'0' + (x % 10) as u8;
        n += 1;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(n)));
    out.extend(digits[..n].iter().rev());
}

impl Date {
    /// `YYYY-MM-DD`, appended to `out`.
    pub fn push_text(&self, out: &mut Vec<u8>) {
        push_padded(out, u32::from(self.year), 4);
        out.push(b'-');
        push_padded(out, u32::from(self.month), 2);
        out.push(b'-');
        push_padded(out, u32::from(self.day), 2);
    }
}

impl DateTime {
    pub fn from_date(date: Date) -> DateTime {
        DateTime {
            date,
            ..DateTime::default()
        }
    }

    pub fn is_zero(&self) -> bool {
        self.date.is_zero()
            && self.hour == 0
            && self.minute == 0
            && self.second == 0
            && self.micro == 0
    }

    /// The time part as a TIME with the same fsp.
    pub fn time_of_day(&self) -> Time {
        Time {
            negative: false,
            hours: u16::from(self.hour),
            minute: self.minute,
            second: self.second,
            micro: self.micro,
            fsp: self.fsp,
        }
    }

    /// Microseconds since 1970-01-01 00:00:00 (the date must have no zero parts).
    pub fn to_micros(&self) -> i64 {
        (self.date.day_number() - EPOCH_DAY_NUMBER) * MICROS_PER_DAY
            + ((i64::from(self.hour) * 60 + i64::from(self.minute)) * 60 + i64::from(self.second))
                * MICROS_PER_SEC
            + i64::from(self.micro)
    }

    /// The inverse of `to_micros`; None outside years 0..=9999.
    pub fn from_micros(v: i64, fsp: u8) -> Option<DateTime> {
        let days = v.div_euclid(MICROS_PER_DAY);
        let rest = v.rem_euclid(MICROS_PER_DAY);
        let secs = rest / MICROS_PER_SEC;
        Some(DateTime {
            date: Date::from_day_number(days + EPOCH_DAY_NUMBER)?,
            hour: (secs / 3600) as u8,
            minute: (secs / 60 % 60) as u8,
            second: (secs % 60) as u8,
            micro: (rest % MICROS_PER_SEC) as u32,
            fsp,
        })
    }

    /// UNIX_TIMESTAMP(): seconds since the epoch, the session time zone being UTC.
    pub fn unix_seconds(&self) -> i64 {
        if self.date.is_valid() {
            self.to_micros().div_euclid(MICROS_PER_SEC)
        } else {
            0
        }
    }

    /// YYYYMMDDhhmmss (the fraction dropped).
    pub fn to_int(&self) -> i64 {
        self.date.to_int() * 1_000_000
            + i64::from(self.hour) * 10_000
            + i64::from(self.minute) * 100
            + i64::from(self.second)
    }

    /// The value with `fsp` digits, the fraction rounded (or truncated, for
    /// TIME_TRUNCATE_FRACTIONAL); None if rounding carries past 9999-12-31.
    pub fn with_fsp(&self, fsp: u8, truncate: bool) -> Option<DateTime> {
        let fsp = fsp.min(6);
        let micro = round_micro(self.micro, fsp, truncate);
        if micro < 1_000_000 {
            return Some(DateTime {
                micro,
                fsp,
                ..*self
            });
        }
        if !self.date.is_valid() {
            // No calendar to carry into: keep the truncated value.
            return self.with_fsp(fsp, true);
        }
        let base = DateTime {
            micro: 0,
            fsp,
            ..*self
        };
        DateTime::from_micros(base.to_micros() + MICROS_PER_SEC, fsp)
    }

    pub fn encode(&self, fsp: u8) -> Vec<u8> {
        let ym = u64::from(self.date.year) * 13 + u64::from(self.date.month);
        let v = 1u64 << 39
            | ym << 22
            | u64::from(self.date.day) << 17
            | u64::from(self.hour) << 12
            | u64::from(self.minute) << 6
            | u64::from(self.second);
        let mut out = v.to_be_bytes()[3..].to_vec();
        frac_encode(self.micro, fsp, &mut out);
        out
    }

    pub fn decode(b: &[u8], fsp: u8) -> Option<DateTime> {
        if b.len() != 5 + frac_bytes(fsp) {
            return None;
        }
        let v = be_uint(&b[..5]) & !(1u64 << 39);
        let ym = v >> 22;
        let dt = DateTime {
            date: Date {
                year: u16::try_from(ym / 13).ok().filter(|y| *y <= 9999)?,
                month: (ym % 13) as u8,
                day: ((v >> 17) & 31) as u8,
            },
            hour: ((v >> 12) & 31) as u8,
            minute: ((v >> 6) & 63) as u8,
            second: (v & 63) as u8,
            micro: frac_decode(&b[5..], fsp)?,
            fsp,
        };
        (dt.hour < 24 && dt.minute < 60 && dt.second < 60).then_some(dt)
    }

    /// The TIMESTAMP stored form; None outside the TIMESTAMP range (the zero value is 0).
    pub fn encode_timestamp(&self, fsp: u8) -> Option<Vec<u8>> {
        let secs = if self.is_zero() {
            0
        } else {
            if !self.date.is_valid() {
                return None;
            }
            // The value is in the session's time zone; the stored form is UTC.
            let s = session_local_to_utc(self.unix_seconds());
            if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&s) {
                return None;
            }
            s
        };
        let mut out = (secs as u32).to_be_bytes().to_vec();
        frac_encode(self.micro, fsp, &mut out);
        Some(out)
    }

    pub fn decode_timestamp(b: &[u8], fsp: u8) -> Option<DateTime> {
        if b.len() != 4 + frac_bytes(fsp) {
            return None;
        }
        let secs = be_uint(&b[..4]) as i64;
        let micro = frac_decode(&b[4..], fsp)?;
        if secs == 0 {
            return Some(DateTime {
                micro,
                fsp,
                ..DateTime::default()
            });
        }
        DateTime::from_micros(
            session_utc_to_local(secs) * MICROS_PER_SEC + i64::from(micro),
            fsp,
        )
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::with_capacity(26);
        self.push_text(&mut text);
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl DateTime {
    /// `YYYY-MM-DD hh:mm:ss[.fraction of fsp digits]`, appended to `out`.
    pub fn push_text(&self, out: &mut Vec<u8>) {
        self.date.push_text(out);
        out.push(b' ');
        push_padded(out, u32::from(self.hour), 2);
        out.push(b':');
        push_padded(out, u32::from(self.minute), 2);
        out.push(b':');
        push_padded(out, u32::from(self.second), 2);
        if self.fsp > 0 {
            let fsp = self.fsp.min(6);
            out.push(b'.');
            push_padded(out, self.micro / pow10(6 - fsp), usize::from(fsp));
        }
    }
}

impl Time {
    /// Signed microseconds.
    pub fn to_micros(&self) -> i64 {
        let v = ((i64::from(self.hours) * 60 + i64::from(self.minute)) * 60
            + i64::from(self.second))
            * MICROS_PER_SEC
            + i64::from(self.micro);
        if self.negative {
            -v
        } else {
            v
        }
    }

    /// None beyond ±838:59:59.999999.
    pub fn from_micros(v: i64, fsp: u8) -> Option<Time> {
        let a = v.checked_abs()?;
        if a > TIME_MAX_MICROS {
            return None;
        }
        let secs = a / MICROS_PER_SEC;
        Some(Time {
            negative: v < 0,
            hours: (secs / 3600) as u16,
            minute: (secs / 60 % 60) as u8,
            second: (secs % 60) as u8,
            micro: (a % MICROS_PER_SEC) as u32,
            fsp,
        })
    }

    /// The largest TIME with this sign (838:59:59).
    pub fn bound(negative: bool) -> Time {
        Time {
            negative,
            hours: 838,
            minute: 59,
            second: 59,
            micro: 0,
            fsp: 0,
        }
    }

    /// hhmmss, signed (the fraction dropped).
    pub fn to_int(&self) -> i64 {
        let v =
            i64::from(self.hours) * 10_000 + i64::from(self.minute) * 100 + i64::from(self.second);
        if self.negative {
            -v
        } else {
            v
        }
    }

    /// The value with `fsp` digits, rounded (or truncated); rounding past 838:59:59 clamps.
    pub fn with_fsp(&self, fsp: u8, truncate: bool) -> Time {
        let fsp = fsp.min(6);
        let micro = round_micro(self.micro, fsp, truncate);
        let t = Time {
            micro: 0,
            fsp,
            ..*self
        };
        let mag = t.to_micros().abs() + i64::from(micro);
        Time::from_micros(if self.negative { -mag } else { mag }, fsp).unwrap_or(Time {
            fsp,
            ..Time::bound(self.negative)
        })
    }

    pub fn encode(&self, fsp: u8) -> Vec<u8> {
        let fsp = fsp.min(6);
        let n = 3 + frac_bytes(fsp);
        let units = self.to_micros() / i64::from(pow10(6 - fsp));
        let biased = (units + (1i64 << (8 * n - 1))) as u64;
        biased.to_be_bytes()[8 - n..].to_vec()
    }

    pub fn decode(b: &[u8], fsp: u8) -> Option<Time> {
        let fsp = fsp.min(6);
        let n = 3 + frac_bytes(fsp);
        if b.len() != n {
            return None;
        }
        let units = be_uint(b) as i64 - (1i64 << (8 * n - 1));
        Time::from_micros(units.checked_mul(i64::from(pow10(6 - fsp)))?, fsp)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.negative && self.to_micros() != 0 {
            "-"
        } else {
            ""
        };
        write!(
            f,
            "{sign}{:02}:{:02}:{:02}",
            self.hours, self.minute, self.second
        )?;
        write_frac(f, self.micro, self.fsp)
    }
}

/// The current time (UTC) with `fsp` digits, the fraction truncated.
pub fn now_fsp(fsp: u8) -> DateTime {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let micros = i64::try_from(d.as_micros()).unwrap_or(0);
    let dt = DateTime::from_micros(micros, 6).unwrap_or_default();
    dt.with_fsp(fsp, true).unwrap_or(dt)
}

/// NOW(): the current time (UTC), whole seconds.
pub fn now() -> DateTime {
    now_fsp(0)
}

/// DATE_ADD(dt, INTERVAL n unit); None (SQL NULL) for a zero or invalid date or a result
/// outside years 0..=9999. Month-based units clamp the day to the month's end (Jan 31 + 1
/// MONTH = Feb 28/29); MICROSECOND makes the result DATETIME(6).
pub fn add_interval(dt: &DateTime, n: i64, unit: IntervalUnit) -> Option<DateTime> {
    if !dt.date.is_valid() {
        return None;
    }
    let months = match unit {
        IntervalUnit::Month => Some(1),
        IntervalUnit::Quarter => Some(3),
        IntervalUnit::Year => Some(12),
        _ => None,
    };
    if let Some(k) = months {
        let total = (i64::from(dt.date.year) * 12 + i64::from(dt.date.month) - 1)
            .checked_add(n.checked_mul(k)?)?;
        if !(0..=9999 * 12 + 11).contains(&total) {
            return None;
        }
        let (year, month) = ((total / 12) as u16, (total % 12 + 1) as u8);
        let day = dt.date.day.min(days_in_month(year, month));
        return Some(DateTime {
            date: Date { year, month, day },
            ..*dt
        });
    }
    let per = match unit {
        IntervalUnit::Microsecond => 1,
        IntervalUnit::Second => MICROS_PER_SEC,
        IntervalUnit::Minute => 60 * MICROS_PER_SEC,
        IntervalUnit::Hour => 3600 * MICROS_PER_SEC,
        IntervalUnit::Day => MICROS_PER_DAY,
        _ => 7 * MICROS_PER_DAY,
    };
    let fsp = if unit == IntervalUnit::Microsecond {
        6
    } else {
        dt.fsp
    };
    DateTime::from_micros(dt.to_micros().checked_add(n.checked_mul(per)?)?, fsp)
}

/// DATEDIFF(a, b) in days; None if either is not a calendar date.
pub fn datediff(a: &Date, b: &Date) -> Option<i64> {
    (a.is_valid() && b.is_valid()).then(|| a.day_number() - b.day_number())
}

// ---- parsing ----

fn two_digit_year(y: u32) -> u32 {
    if y < 70 {
        2000 + y
    } else {
        1900 + y
    }
}

/// The value of ASCII digits (at most 9 of them are ever passed).
fn digits_value(b: &[u8]) -> u32 {
    b.iter().fold(0u32, |a, &c| a * 10 + u32::from(c - b'0'))
}

/// Up to 7 fraction digits as microseconds rounded at the 7th (may be 1_000_000).
fn fraction(b: &[u8]) -> u32 {
    let mut padded = [b'0'; 7];
    for (i, &c) in b.iter().take(7).enumerate() {
        padded[i] = c;
    }
    (digits_value(&padded) + 5) / 10
}

fn digit_run(b: &[u8], i: usize) -> usize {
    b[i..].iter().take_while(|c| c.is_ascii_digit()).count()
}

/// Builds a DATETIME from fields, checking the clock ranges (not the calendar).
fn make_dt(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, micro: u32) -> Option<DateTime> {
    if y > 9999 || mo > 12 || d > 31 || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(DateTime {
        date: Date {
            year: y as u16,
            month: mo as u8,
            day: d as u8,
        },
        hour: h as u8,
        minute: mi as u8,
        second: s as u8,
        micro: micro.min(999_999),
        fsp: 6,
    })
    .map(|dt| {
        if micro >= 1_000_000 {
            dt.with_fsp(0, false)
                .map_or(dt, |d| DateTime { fsp: 6, ..d })
        } else {
            dt
        }
    })
}

/// A DATE/DATETIME in MySQL's text forms: 'YYYY-MM-DD', 'YY-MM-DD' (any punctuation as the
/// delimiter), then optionally 'T' or spaces and 'hh:mm[:ss][.ffffff]'; or digits only:
/// YYYYMMDD, YYMMDD, YYYYMMDDhhmmss, YYMMDDhhmmss[.ffffff]. Returns the value (fsp 6, the
/// fraction rounded at the 7th digit) and whether a time part was given; None if the text is
/// not one of these forms or a field is out of range (month 13, hour 24...). The calendar
/// (Feb 30, zero parts) is not checked here: see `date_problem`.
pub fn parse_datetime(s: &[u8]) -> Option<(DateTime, bool)> {
    let s = s.trim_ascii();
    let int_len = digit_run(s, 0);
    if int_len == s.len()
        || (s.get(int_len) == Some(&b'.') && digit_run(s, int_len + 1) + int_len + 1 == s.len())
    {
        let b = &s[..int_len];
        let micro = if int_len < s.len() {
            fraction(&s[int_len + 1..])
        } else {
            0
        };
        let f = |i: usize, n: usize| digits_value(&b[i..i + n]);
        let has_frac = int_len < s.len();
        return match int_len {
            8 if !has_frac => Some((make_dt(f(0, 4), f(4, 2), f(6, 2), 0, 0, 0, 0)?, false)),
            6 if !has_frac => Some((
                make_dt(two_digit_year(f(0, 2)), f(2, 2), f(4, 2), 0, 0, 0, 0)?,
                false,
            )),
            14 => Some((
                make_dt(
                    f(0, 4),
                    f(4, 2),
                    f(6, 2),
                    f(8, 2),
                    f(10, 2),
                    f(12, 2),
                    micro,
                )?,
                true,
            )),
            12 => Some((
                make_dt(
                    two_digit_year(f(0, 2)),
                    f(2, 2),
                    f(4, 2),
                    f(6, 2),
                    f(8, 2),
                    f(10, 2),
                    micro,
                )?,
                true,
            )),
            _ => None,
        };
    }
    // Delimited form.
    let mut i = 0;
    let mut fields = [0u32; 3];
    let mut year_len = 0;
    for (k, field) in fields.iter_mut().enumerate() {
        if k > 0 {
            if !s.get(i).is_some_and(u8::is_ascii_punctuation) {
                return None;
            }
            i += 1;
        }
        let n = digit_run(s, i);
        if n == 0 || n > if k == 0 { 4 } else { 2 } {
            return None;
        }
        if k == 0 {
            year_len = n;
        }
        *field = digits_value(&s[i..i + n]);
        i += n;
    }
    let year = if year_len <= 2 {
        two_digit_year(fields[0])
    } else {
        fields[0]
    };
    if i == s.len() {
        return Some((make_dt(year, fields[1], fields[2], 0, 0, 0, 0)?, false));
    }
    match s[i] {
        b'T' => i += 1,
        b' ' => i += s[i..].iter().take_while(|c| **c == b' ').count(),
        _ => return None,
    }
    let mut hms = [0u32; 3];
    let mut micro = 0;
    for (k, field) in hms.iter_mut().enumerate() {
        if k > 0 {
            if i == s.len() {
                break;
            }
            if !s[i].is_ascii_punctuation() || s[i] == b'.' {
                return None;
            }
            i += 1;
        }
        let n = digit_run(s, i);
        if n == 0 || n > 2 {
            return None;
        }
        *field = digits_value(&s[i..i + n]);
        i += n;
    }
    if i < s.len() {
        if s[i] != b'.' {
            return None;
        }
        let n = digit_run(s, i + 1);
        if i + 1 + n != s.len() {
            return None;
        }
        micro = fraction(&s[i + 1..]);
    }
    Some((
        make_dt(year, fields[1], fields[2], hms[0], hms[1], hms[2], micro)?,
        true,
    ))
}

/// MySQL's number_to_datetime: 20240102, 240102, 20240102030405, 240102030405 (and the zero
/// number). None for numbers in the gaps between these forms.
pub fn number_to_datetime(n: i64, micro: u32) -> Option<(DateTime, bool)> {
    if n == 0 && micro == 0 {
        return Some((DateTime::default(), false));
    }
    let (text, time) = match n {
        101..=691_231 | 700_101..=991_231 => (format!("{n:06}"), false),
        10_000_101..=99_991_231 => (format!("{n:08}"), false),
        101_000_000..=691_231_235_959 | 700_101_000_000..=991_231_235_959 => {
            (format!("{n:012}"), true)
        }
        10_000_101_000_000..=99_991_231_235_959 => (format!("{n:014}"), true),
        _ => return None,
    };
    let (mut dt, _) = parse_datetime(text.as_bytes())?;
    if time {
        dt.micro = micro.min(999_999);
    }
    Some((dt, time))
}

/// A TIME in MySQL's forms: '[-][D ]hh:mm[:ss][.ffffff]', '[-]hhmmss[.f]' ('1112' is
/// 00:11:12, '12' is 00:00:12), or a DATETIME string (its time part). Returns the signed value
/// in microseconds (rounded at the 7th fraction digit), unbounded: callers clamp to ±838:59:59.
pub fn parse_time_micros(s: &[u8]) -> Option<i64> {
    let s = s.trim_ascii();
    let (neg, b) = match s.strip_prefix(b"-") {
        Some(r) => (true, r),
        None => (false, s),
    };
    if b.len() > 2 && b[1..].contains(&b'-') && !neg {
        let (dt, _) = parse_datetime(b)?;
        return Some(dt.time_of_day().to_micros());
    }
    let lead = digit_run(b, 0);
    if lead == 0 || lead > 12 {
        return None;
    }
    let mut i = lead;
    let (h, m, sec): (i64, i64, i64);
    if b.get(i) == Some(&b' ') {
        // D hh[:mm[:ss]]
        let days = i64::from(digits_value(&b[..lead.min(9)]));
        i += 1;
        let n = digit_run(b, i);
        if n == 0 || n > 3 || lead > 2 {
            return None;
        }
        let hh = i64::from(digits_value(&b[i..i + n]));
        i += n;
        let (mm, ss, j) = colon_fields(b, i)?;
        i = j;
        (h, m, sec) = (days * 24 + hh, mm, ss);
    } else if b.get(i) == Some(&b':') {
        if lead > 9 {
            return None;
        }
        let (mm, ss, j) = colon_fields(b, i)?;
        i = j;
        (h, m, sec) = (i64::from(digits_value(&b[..lead])), mm, ss);
    } else {
        // [h..h][mm]ss
        let v = b[..lead]
            .iter()
            .fold(0i64, |a, &c| a * 10 + i64::from(c - b'0'));
        (h, m, sec) = (v / 10_000, v / 100 % 100, v % 100);
    }
    let mut micro = 0i64;
    if i < b.len() {
        if b[i] != b'.' || digit_run(b, i + 1) + i + 1 != b.len() {
            return None;
        }
        micro = i64::from(fraction(&b[i + 1..]));
    }
    if m > 59 || sec > 59 {
        return None;
    }
    let v = ((h * 60 + m) * 60 + sec)
        .checked_mul(MICROS_PER_SEC)?
        .checked_add(micro)?;
    Some(if neg { -v } else { v })
}

/// `:mm[:ss]` after the hours (absent parts are 0); returns (mm, ss, end).
fn colon_fields(b: &[u8], mut i: usize) -> Option<(i64, i64, usize)> {
    let mut out = [0i64; 2];
    for f in &mut out {
        if b.get(i) != Some(&b':') {
            break;
        }
        let n = digit_run(b, i + 1);
        if n == 0 || n > 2 {
            return None;
        }
        *f = i64::from(digits_value(&b[i + 1..i + 1 + n]));
        i += 1 + n;
    }
    Some((out[0], out[1], i))
}

/// A YEAR from a number: 0 stays 0000 (for numbers; the string '0' is 2000), 1..=69 →
/// 2001..2069, 70..=99 → 1970..1999, 1901..=2155 as is; None otherwise.
pub fn year_from_int(n: i64) -> Option<u16> {
    match n {
        0 => Some(0),
        1..=69 => Some(2000 + n as u16),
        70..=99 => Some(1900 + n as u16),
        1901..=2155 => Some(n as u16),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// push_text writes what the format strings MySQL's text shows would: zero-padded fields,
    /// fsp fraction digits (truncated), years past four digits whole.
    #[test]
    fn temporal_text_without_the_formatter() {
        for (y, mo, d, h, mi, se, us) in [
            (0, 0, 0, 0, 0, 0, 0),
            (1, 2, 3, 4, 5, 6, 7),
            (2026, 11, 23, 23, 59, 59, 999_999),
            (999, 12, 31, 10, 0, 9, 120_000),
            (12345, 1, 1, 0, 0, 0, 5),
        ] {
            let date = Date {
                year: y,
                month: mo,
                day: d,
            };
            let mut text = Vec::new();
            date.push_text(&mut text);
            assert_eq!(text, format!("{y:04}-{mo:02}-{d:02}").into_bytes());
            for fsp in 0..=6u8 {
                let dt = DateTime {
                    date,
                    hour: h,
                    minute: mi,
                    second: se,
                    micro: us,
                    fsp,
                };
                let mut want = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{se:02}");
                if fsp > 0 {
                    let digits = format!("{us:06}");
                    want.push('.');
                    want.push_str(&digits[..usize::from(fsp)]);
                }
                assert_eq!(dt.to_string(), want);
                assert_eq!(
                    crate::types::Datum::DateTime(dt).to_text(),
                    Some(want.into_bytes())
                );
            }
        }
    }

    fn dt(s: &str) -> DateTime {
        parse_datetime(s.as_bytes()).unwrap().0
    }

    #[test]
    fn parses_mysql_forms() {
        for (i, o) in [
            ("2024-01-02", "2024-01-02 00:00:00.000000"),
            ("2024-1-2", "2024-01-02 00:00:00.000000"),
            ("20240102", "2024-01-02 00:00:00.000000"),
            ("240102", "2024-01-02 00:00:00.000000"),
            ("99/12/31", "1999-12-31 00:00:00.000000"),
            ("2024-01-02 03:04:05.123456", "2024-01-02 03:04:05.123456"),
            ("2024-01-02T03:04:05", "2024-01-02 03:04:05.000000"),
            ("2024-01-02  3:4", "2024-01-02 03:04:00.000000"),
            ("20240102030405", "2024-01-02 03:04:05.000000"),
            ("20240102030405.5", "2024-01-02 03:04:05.500000"),
            (
                " 2024-01-02 03:04:05.1234567 ",
                "2024-01-02 03:04:05.123457",
            ),
            ("2024-12-31 23:59:59.9999999", "2025-01-01 00:00:00.000000"),
            ("0000-00-00", "0000-00-00 00:00:00.000000"),
            ("2024-02-30", "2024-02-30 00:00:00.000000"),
        ] {
            assert_eq!(dt(i).to_string(), o, "{i}");
        }
        for bad in [
            "",
            "abc",
            "2024-13-01",
            "2024-01-32",
            "2024-01-02 24:00:00",
            "2024-01",
            "2024-01-02 x",
            "2024010",
            "12345",
        ] {
            assert_eq!(parse_datetime(bad.as_bytes()), None, "{bad}");
        }
        assert!(!parse_datetime(b"2024-01-02").unwrap().1);
        assert_eq!(
            number_to_datetime(20240102, 0).unwrap().0.date.to_string(),
            "2024-01-02"
        );
        assert_eq!(
            number_to_datetime(20240102030405, 0).unwrap().0.to_int(),
            20240102030405
        );
        assert_eq!(number_to_datetime(691231, 0).unwrap().0.date.year, 2069);
        assert_eq!(number_to_datetime(12345678, 0), None);
        assert!(number_to_datetime(0, 0).unwrap().0.is_zero());
    }

    #[test]
    fn times() {
        let t = |s: &str| {
            parse_time_micros(s.as_bytes())
                .and_then(|m| Time::from_micros(m, 6))
                .map(|t| t.with_fsp(0, false).to_string())
        };
        assert_eq!(t("10:11:12").as_deref(), Some("10:11:12"));
        assert_eq!(t("-838:59:59").as_deref(), Some("-838:59:59"));
        assert_eq!(t("1 10:00:00").as_deref(), Some("34:00:00"));
        assert_eq!(t("101112").as_deref(), Some("10:11:12"));
        assert_eq!(t("1112").as_deref(), Some("00:11:12"));
        assert_eq!(t("12").as_deref(), Some("00:00:12"));
        assert_eq!(t("10:11").as_deref(), Some("10:11:00"));
        assert_eq!(t("2024-01-02 03:04:05").as_deref(), Some("03:04:05"));
        assert_eq!(t("10:11:12.6").as_deref(), Some("10:11:13"));
        assert_eq!(t("839:00:00"), None);
        assert_eq!(t("10:61:00"), None);
        assert_eq!(t("abc"), None);
        let x = Time::from_micros(parse_time_micros(b"-1:02:03.5").unwrap(), 1).unwrap();
        assert_eq!(x.to_string(), "-01:02:03.5");
        assert_eq!(
            Time::from_micros(-1, 6)
                .unwrap()
                .with_fsp(0, false)
                .to_string(),
            "00:00:00"
        );
        assert_eq!(
            Time::bound(false).with_fsp(2, false).to_string(),
            "838:59:59.00"
        );
    }

    #[test]
    fn calendar() {
        let d = |s: &str| dt(s).date;
        assert_eq!(d("1970-01-01").day_number(), 719_528);
        assert_eq!(d("0001-01-01").day_number(), 366);
        assert_eq!(
            d("2024-03-01").day_number() - d("2024-02-28").day_number(),
            2
        );
        assert_eq!(d("2024-01-01").weekday(), 0);
        assert_eq!(d("2024-12-31").day_of_year(), 366);
        assert_eq!(Date::from_day_number(739_251), Some(d("2024-01-01")));
        let strict = SqlMode::DEFAULT;
        assert_eq!(
            date_problem(&d("2024-02-30"), strict),
            Some(DateProblem::Invalid)
        );
        assert_eq!(
            date_problem(&d("2024-02-30"), SqlMode(SqlMode::ALLOW_INVALID_DATES)),
            None
        );
        assert_eq!(date_problem(&d("2024-02-29"), strict), None);
        assert_eq!(
            date_problem(&d("2023-02-29"), strict),
            Some(DateProblem::Invalid)
        );
        assert_eq!(
            date_problem(&d("0000-00-00"), strict),
            Some(DateProblem::ZeroDate)
        );
        assert_eq!(date_problem(&d("0000-00-00"), SqlMode(0)), None);
        assert_eq!(
            date_problem(&d("2024-00-10"), strict),
            Some(DateProblem::ZeroInDate)
        );
        assert_eq!(date_problem(&d("2024-00-10"), SqlMode(0)), None);
        let add = |s: &str, n, u| {
            add_interval(&dt(s).with_fsp(0, false).unwrap(), n, u).map(|x| x.to_string())
        };
        assert_eq!(
            add("2024-01-31", 1, IntervalUnit::Month).as_deref(),
            Some("2024-02-29 00:00:00")
        );
        assert_eq!(
            add("2024-02-29", 1, IntervalUnit::Year).as_deref(),
            Some("2025-02-28 00:00:00")
        );
        assert_eq!(
            add("2024-12-31 23:59:59", 1, IntervalUnit::Second).as_deref(),
            Some("2025-01-01 00:00:00")
        );
        assert_eq!(
            add("2024-01-01", -1, IntervalUnit::Day).as_deref(),
            Some("2023-12-31 00:00:00")
        );
        assert_eq!(
            add("2024-01-01", 2, IntervalUnit::Week).as_deref(),
            Some("2024-01-15 00:00:00")
        );
        assert_eq!(
            add("2024-01-01", 5, IntervalUnit::Quarter).as_deref(),
            Some("2025-04-01 00:00:00")
        );
        assert_eq!(
            add("2024-01-01", 1, IntervalUnit::Microsecond).as_deref(),
            Some("2024-01-01 00:00:00.000001")
        );
        assert_eq!(add("9999-12-31", 1, IntervalUnit::Day), None);
        assert_eq!(add("0000-00-00", 1, IntervalUnit::Day), None);
        assert_eq!(add("2024-01-01", i64::MAX, IntervalUnit::Hour), None);
        assert_eq!(datediff(&d("2024-03-01"), &d("2024-02-01")), Some(29));
        assert_eq!(dt("2038-01-19 03:14:07").unix_seconds(), TIMESTAMP_MAX);
        let n = now();
        assert!(n.date.year >= 2024 && n.micro == 0 && n.fsp == 0);
        assert_eq!(year_from_int(69), Some(2069));
        assert_eq!(year_from_int(1900), None);
    }

    /// Random values: encode, sort the bytes, compare with the values' order.
    #[test]
    fn stored_forms_sort_like_values() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for fsp in 0..=6u8 {
            let mut dts: Vec<DateTime> = (0..400)
                .filter_map(|_| {
                    let micros = next(253_402_300_800) as i64 * MICROS_PER_SEC
                        - 62_167_219_200 * MICROS_PER_SEC
                        + next(1_000_000) as i64;
                    DateTime::from_micros(micros, 6)?.with_fsp(fsp, true)
                })
                .collect();
            dts.push(DateTime {
                fsp,
                ..DateTime::default()
            });
            let mut enc: Vec<(Vec<u8>, i64)> = dts
                .iter()
                .map(|d| {
                    let b = d.encode(fsp);
                    assert_eq!(DateTime::decode(&b, fsp), Some(*d));
                    (b, if d.is_zero() { i64::MIN } else { d.to_micros() })
                })
                .collect();
            enc.sort();
            assert!(enc.windows(2).all(|w| w[0].1 <= w[1].1), "datetime({fsp})");

            let mut ts: Vec<(Vec<u8>, i64)> = dts
                .iter()
                .filter_map(|d| {
                    let b = d.encode_timestamp(fsp)?;
                    assert_eq!(DateTime::decode_timestamp(&b, fsp), Some(*d));
                    Some((b, if d.is_zero() { i64::MIN } else { d.to_micros() }))
                })
                .collect();
            let in_range = DateTime::from_micros(1_700_000_000 * MICROS_PER_SEC + 123_456, 6)
                .and_then(|d| d.with_fsp(fsp, true))
                .and_then(|d| Some((d.encode_timestamp(fsp)?, d.to_micros())));
            ts.extend(in_range);
            ts.sort();
            assert!(ts.windows(2).all(|w| w[0].1 <= w[1].1), "timestamp({fsp})");

            let mut times: Vec<(Vec<u8>, i64)> = (0..400)
                .map(|_| {
                    let v = next(2 * TIME_MAX_MICROS as u64 + 1) as i64 - TIME_MAX_MICROS;
                    let t = Time::from_micros(v, 6)
                        .unwrap_or_default()
                        .with_fsp(fsp, true);
                    let b = t.encode(fsp);
                    assert_eq!(b.len(), 3 + frac_bytes(fsp));
                    assert_eq!(
                        Time::decode(&b, fsp).map(|x| x.to_micros()),
                        Some(t.to_micros())
                    );
                    (b, t.to_micros())
                })
                .collect();
            times.sort();
            assert!(times.windows(2).all(|w| w[0].1 <= w[1].1), "time({fsp})");
        }
        let mut dates: Vec<Date> = (0..400)
            .map(|_| Date {
                year: next(10_000) as u16,
                month: next(13) as u8,
                day: next(32) as u8,
            })
            .collect();
        let mut by_bytes = dates.clone();
        by_bytes.sort_by_key(Date::encode);
        dates.sort();
        assert_eq!(by_bytes, dates);
        for d in &dates {
            assert_eq!(Date::decode(&d.encode()), Some(*d));
        }
        assert_eq!(dt("2024-01-02").date.encode(), vec![0x0F, 0xD0, 0x22]);
    }
}
