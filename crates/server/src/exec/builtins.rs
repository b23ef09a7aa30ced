//! More native functions, with MySQL 8.0's results: string (ASCII, ORD, CHAR, CRC32, CONV, BIN,
//! OCT, UNHEX, FIND_IN_SET, FIELD, ELT, SPACE, SUBSTRING_INDEX, STRCMP, QUOTE, SHA1, SHA2,
//! TO_BASE64, FROM_BASE64, BIT_LENGTH, INSERT, FORMAT), math (EXP, LN, LOG, LOG2, LOG10, PI, the
//! trigonometric functions, RADIANS, DEGREES, BIT_COUNT), date and time (DAYNAME, MONTHNAME,
//! WEEKDAY, DAYOFWEEK, DAYOFYEAR, QUARTER, LAST_DAY, TO_DAYS, FROM_DAYS, MAKEDATE, HOUR,
//! MINUTE, SECOND, MICROSECOND, TIME_TO_SEC, SEC_TO_TIME, FROM_UNIXTIME, DATE_FORMAT, STR_TO_DATE,
//! TIMESTAMPDIFF, EXTRACT, TIME, TIMESTAMP, TIMEDIFF, ADDTIME, SUBTIME, MAKETIME, WEEK,
//! WEEKOFYEAR, YEARWEEK), regular expressions (REGEXP, REGEXP_LIKE, REGEXP_INSTR,
//! REGEXP_SUBSTR, REGEXP_REPLACE: the `regex` crate's syntax, case-insensitive under a _ci
//! collation as MySQL's), ISNULL, ANY_VALUE, UUID, and SLEEP and the named-lock functions
//! (GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK, IS_USED_LOCK, RELEASE_ALL_LOCKS; `userlock`).
//!
//! INVARIANTS: `lookup` gives each function its result type and argument counts (checked by the
//! compiler before `call` runs); `call` gets the evaluated arguments, all non-NULL unless
//! `sees_nulls` says the function handles NULL itself; bad input is NULL (with MySQL's warning
//! where it gives one), never a panic.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::ops::RangeInclusive;

use innoxide_engine::Collation;
use innoxide_sql::ast::IntervalUnit;
use innoxide_sql::error::*;
use innoxide_sql::parse;
use innoxide_sql::types::{self, Date, DateTime, Datum, Time, Warnings};
use sha1::Digest as _;

use super::expr::{CExpr, EType};
use super::userlock;

/// A function of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Ascii,
    Ord,
    Char,
    Crc32,
    Conv,
    Bin,
    Oct,
    Unhex,
    /// FIND_IN_SET, FIELD and STRCMP compare strings under the collation of their arguments.
    FindInSet {
        coll: Collation,
    },
    Field {
        coll: Collation,
    },
    Elt,
    Space,
    SubstringIndex,
    Strcmp {
        coll: Collation,
    },
    Quote,
    Sha1,
    Sha2,
    ToBase64,
    FromBase64,
    BitLength,
    Insert,
    Format,
    Exp,
    Ln,
    Log,
    Log2,
    Log10,
    Pi,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    Radians,
    Degrees,
    BitCount,
    DayName,
    MonthName,
    Weekday,
    DayOfWeek,
    DayOfYear,
    Quarter,
    LastDay,
    ToDays,
    FromDays,
    MakeDate,
    Hour,
    Minute,
    Second,
    Microsecond,
    TimeToSec,
    SecToTime,
    FromUnixtime,
    ConvertTz,
    CompoundInterval,
    DateFormat,
    StrToDate,
    TimestampDiff(IntervalUnit),
    Extract,
    TimePart,
    Timestamp,
    TimeDiff,
    AddTime,
    SubTime,
    MakeTime,
    Week,
    WeekOfYear,
    YearWeek,
    /// REGEXP_LIKE and friends; `ci`: the subject's collation ignores case.
    RegexpLike {
        ci: bool,
    },
    RegexpInstr {
        ci: bool,
    },
    RegexpSubstr {
        ci: bool,
    },
    RegexpReplace {
        ci: bool,
    },
    IsNull,
    AnyValue,
    Uuid,
    Sleep,
    GetLock,
    ReleaseLock,
    IsFreeLock,
    IsUsedLock,
    ReleaseAllLocks,
}

/// The function called `name` (lower case): its result type and how many arguments it takes.
/// `args`: the compiled arguments, for what MySQL decides from constant ones (TIME('10:00:00.5')
/// has 6 fractional digits, TIME('10:00:00') none; STR_TO_DATE's type follows its format).
/// `cmp`: the collation comparisons of the arguments' strings use.
pub fn lookup(
    name: &str,
    types_: &[EType],
    (coll, cmp): (Collation, Collation),
    args: &[CExpr],
) -> Option<(Builtin, EType, RangeInclusive<usize>)> {
    let const_text = |i: usize| match args.get(i) {
        Some(CExpr::Const(Datum::Bytes(b))) => Some(b.as_slice()),
        _ => None,
    };
    let const_fsp = const_text(0).map(literal_fsp);
    let frac_of = |t: Option<&EType>| match (t, const_fsp) {
        (Some(EType::Str { .. }), Some(f)) => f,
        _ => frac_of(t),
    };
    use Builtin as B;
    let s = EType::Str { coll };
    let bin = EType::Str {
        coll: Collation::Binary,
    };
    let int = EType::Int { unsigned: false };
    let uint = EType::Int { unsigned: true };
    let dbl = EType::Double;
    Some(match name {
        "ascii" => (B::Ascii, int, 1..=1),
        "ord" => (B::Ord, uint, 1..=1),
        "char" => (B::Char, bin, 1..=usize::MAX),
        "crc32" => (B::Crc32, uint, 1..=1),
        "conv" => (B::Conv, s, 3..=3),
        "bin" => (B::Bin, s, 1..=1),
        "oct" => (B::Oct, s, 1..=1),
        "unhex" => (B::Unhex, bin, 1..=1),
        "find_in_set" => (B::FindInSet { coll: cmp }, int, 2..=2),
        "field" => (B::Field { coll: cmp }, int, 2..=usize::MAX),
        "elt" => (B::Elt, s, 2..=usize::MAX),
        "space" => (B::Space, s, 1..=1),
        "substring_index" => (B::SubstringIndex, s, 3..=3),
        "strcmp" => (B::Strcmp { coll: cmp }, int, 2..=2),
        "quote" => (B::Quote, s, 1..=1),
        "sha1" | "sha" => (B::Sha1, s, 1..=1),
        "sha2" => (B::Sha2, s, 2..=2),
        "to_base64" => (B::ToBase64, s, 1..=1),
        "from_base64" => (B::FromBase64, bin, 1..=1),
        "bit_length" => (B::BitLength, int, 1..=1),
        "insert" => (B::Insert, s, 4..=4),
        "format" => (B::Format, s, 2..=3),
        "exp" => (B::Exp, dbl, 1..=1),
        "ln" => (B::Ln, dbl, 1..=1),
        "log" => (B::Log, dbl, 1..=2),
        "log2" => (B::Log2, dbl, 1..=1),
        "log10" => (B::Log10, dbl, 1..=1),
        // Six fractional digits, as MySQL shows PI().
        "pi" => (B::Pi, super::expr::double_with(6), 0..=0),
        "sin" => (B::Sin, dbl, 1..=1),
        "cos" => (B::Cos, dbl, 1..=1),
        "tan" => (B::Tan, dbl, 1..=1),
        "cot" => (B::Cot, dbl, 1..=1),
        "asin" => (B::Asin, dbl, 1..=1),
        "acos" => (B::Acos, dbl, 1..=1),
        "atan" => (B::Atan, dbl, 1..=2),
        "atan2" => (B::Atan, dbl, 2..=2),
        "radians" => (B::Radians, dbl, 1..=1),
        "degrees" => (B::Degrees, dbl, 1..=1),
        "bit_count" => (B::BitCount, int, 1..=1),
        "dayname" => (B::DayName, s, 1..=1),
        "monthname" => (B::MonthName, s, 1..=1),
        "weekday" => (B::Weekday, int, 1..=1),
        "dayofweek" => (B::DayOfWeek, int, 1..=1),
        "dayofyear" => (B::DayOfYear, int, 1..=1),
        "quarter" => (B::Quarter, int, 1..=1),
        "last_day" => (B::LastDay, EType::Date, 1..=1),
        "to_days" => (B::ToDays, int, 1..=1),
        "from_days" => (B::FromDays, EType::Date, 1..=1),
        "makedate" => (B::MakeDate, EType::Date, 2..=2),
        "hour" => (B::Hour, int, 1..=1),
        "minute" => (B::Minute, int, 1..=1),
        "second" => (B::Second, int, 1..=1),
        "microsecond" => (B::Microsecond, int, 1..=1),
        "time_to_sec" => (B::TimeToSec, int, 1..=1),
        "sec_to_time" => (B::SecToTime, EType::Time { fsp: 0 }, 1..=1),
        // The value of INTERVAL 'fields' DAY_HOUR (and the other compound units), counted in
        // the single unit the parser put in its place (parse::special::compound_unit).
        "compound interval" => (B::CompoundInterval, int, 2..=2),
        "convert_tz" => {
            let fsp = match types_.first() {
                Some(EType::DateTime { fsp }) => *fsp,
                _ => 6,
            };
            (B::ConvertTz, EType::DateTime { fsp }, 3..=3)
        }
        "from_unixtime" => {
            let t = if types_.len() > 1 {
                s
            } else {
                let fsp = match types_.first() {
                    Some(EType::Int { .. }) => 0,
                    _ => 6,
                };
                EType::DateTime { fsp }
            };
            (B::FromUnixtime, t, 1..=2)
        }
        "date_format" => (B::DateFormat, s, 2..=2),
        "str_to_date" => {
            let t = match const_text(1).map(|f| format_parts(&String::from_utf8_lossy(f))) {
                Some((true, false, _)) => EType::Date,
                Some((false, true, fsp)) => EType::Time { fsp },
                Some((_, _, fsp)) => EType::DateTime { fsp },
                None => EType::DateTime { fsp: 6 },
            };
            (B::StrToDate, t, 2..=2)
        }
        "extract" => (B::Extract, int, 2..=2),
        "time" => (
            B::TimePart,
            EType::Time {
                fsp: frac_of(types_.first()),
            },
            1..=1,
        ),
        "timestamp" => (
            B::Timestamp,
            EType::DateTime {
                fsp: frac_of(types_.first()),
            },
            1..=1,
        ),
        "timediff" => (
            B::TimeDiff,
            EType::Time {
                fsp: frac_of(types_.first()),
            },
            2..=2,
        ),
        "addtime" | "subtime" => {
            let t = match types_.first() {
                Some(EType::Time { fsp }) => EType::Time { fsp: *fsp },
                Some(EType::Date | EType::DateTime { .. }) => EType::DateTime { fsp: 6 },
                _ => s,
            };
            (
                if name == "addtime" {
                    B::AddTime
                } else {
                    B::SubTime
                },
                t,
                2..=2,
            )
        }
        "maketime" => (B::MakeTime, EType::Time { fsp: 0 }, 3..=3),
        "week" => (B::Week, int, 1..=2),
        "weekofyear" => (B::WeekOfYear, int, 1..=1),
        "yearweek" => (B::YearWeek, int, 1..=2),
        "regexp_like" | "regexp_instr" | "regexp_substr" | "regexp_replace" => {
            // Case-insensitive unless the subject or the pattern is binary or case-sensitive.
            let ci_of = |t: Option<&EType>| match t {
                Some(EType::Str { coll }) => coll.is_ci(),
                Some(EType::Column(t)) => t.collation().is_ci(),
                _ => coll.is_ci(),
            };
            let ci = ci_of(types_.first()) && ci_of(types_.get(1));
            match name {
                "regexp_like" => (B::RegexpLike { ci }, int, 2..=3),
                "regexp_instr" => (B::RegexpInstr { ci }, int, 2..=4),
                "regexp_substr" => (B::RegexpSubstr { ci }, s, 2..=4),
                _ => (B::RegexpReplace { ci }, s, 3..=5),
            }
        }
        "isnull" => (B::IsNull, int, 1..=1),
        "any_value" => (
            B::AnyValue,
            types_.first().cloned().unwrap_or(EType::Null),
            1..=1,
        ),
        "uuid" => (B::Uuid, s, 0..=0),
        "sleep" => (B::Sleep, int, 1..=1),
        "get_lock" => (B::GetLock, int, 2..=2),
        "release_lock" => (B::ReleaseLock, int, 1..=1),
        "is_free_lock" => (B::IsFreeLock, int, 1..=1),
        "is_used_lock" => (B::IsUsedLock, uint, 1..=1),
        "release_all_locks" => (B::ReleaseAllLocks, uint, 0..=0),
        _ => return None,
    })
}

/// TIMESTAMPDIFF(unit, a, b): the unit comes as the first argument's name.
pub fn timestamp_diff(unit: IntervalUnit) -> (Builtin, EType) {
    (Builtin::TimestampDiff(unit), EType::Int { unsigned: false })
}

/// The interval unit a word names (TIMESTAMPDIFF/TIMESTAMPADD's first argument).
pub fn unit_of(word: &str) -> Option<IntervalUnit> {
    Some(match word.to_ascii_lowercase().as_str() {
        "microsecond" | "frac_second" => IntervalUnit::Microsecond,
        "second" => IntervalUnit::Second,
        "minute" => IntervalUnit::Minute,
        "hour" => IntervalUnit::Hour,
        "day" => IntervalUnit::Day,
        "week" => IntervalUnit::Week,
        "month" => IntervalUnit::Month,
        "quarter" => IntervalUnit::Quarter,
        "year" => IntervalUnit::Year,
        _ => return None,
    })
}

impl Builtin {
    /// Functions that look at NULL arguments themselves (the others return NULL for any).
    pub fn sees_nulls(self) -> bool {
        matches!(
            self,
            Builtin::Char
                | Builtin::Field { .. }
                | Builtin::Elt
                | Builtin::Quote
                | Builtin::IsNull
                | Builtin::AnyValue
                | Builtin::Sleep
        )
    }
}

fn text(d: &Datum) -> String {
    String::from_utf8_lossy(&d.to_text().unwrap_or_default()).into_owned()
}

fn bytes(d: &Datum) -> Vec<u8> {
    d.to_text().unwrap_or_default()
}

fn st(v: String) -> Datum {
    Datum::Bytes(v.into_bytes())
}

fn dbl(x: f64) -> Datum {
    if x.is_finite() {
        Datum::Double(x)
    } else {
        Datum::Null
    }
}

const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Evaluates `f` on `v` (non-NULL values unless `f.sees_nulls()`).
pub fn call(f: Builtin, v: &[Datum], w: &mut Warnings) -> Result<Datum, SqlError> {
    use Builtin as B;
    let int = |i: usize, w: &mut Warnings| v[i].to_i64(w);
    let f64_ = |i: usize, w: &mut Warnings| v[i].to_f64(w);
    Ok(match f {
        B::Ascii => Datum::Int(bytes(&v[0]).first().map_or(0, |&b| i64::from(b))),
        // The first character's bytes as a number; bytes that are no UTF-8 (a latin1
        // value's) are one-byte characters.
        B::Ord => {
            let b = bytes(&v[0]);
            let n = match std::str::from_utf8(&b) {
                Ok(t) => t.chars().next().map_or(0, |c| {
                    let mut buf = [0u8; 4];
                    c.encode_utf8(&mut buf)
                        .bytes()
                        .fold(0u64, |a, b| (a << 8) | u64::from(b))
                }),
                Err(_) => b.first().map_or(0, |&x| u64::from(x)),
            };
            Datum::UInt(n)
        }
        B::Char => {
            let mut out = Vec::new();
            for d in v.iter().filter(|d| !d.is_null()) {
                let n = d.to_i64(w) as u32;
                let be = n.to_be_bytes();
                let skip = be.iter().take_while(|&&b| b == 0).count().min(3);
                out.extend_from_slice(&be[skip..]);
            }
            Datum::Bytes(out)
        }
        B::Crc32 => Datum::UInt(u64::from(crc32(&bytes(&v[0])))),
        B::Conv => {
            let (from, to) = (int(1, w), int(2, w));
            conv(&text(&v[0]), from, to).map_or(Datum::Null, st)
        }
        B::Bin | B::Oct => {
            let n = v[0].to_i64(w) as u64;
            st(if f == B::Bin {
                format!("{n:b}")
            } else {
                format!("{n:o}")
            })
        }
        B::Unhex => {
            let t = bytes(&v[0]);
            let t = if t.len() % 2 == 1 {
                [b"0".as_slice(), &t].concat()
            } else {
                t
            };
            let mut out = Vec::with_capacity(t.len() / 2);
            for pair in t.chunks(2) {
                let hex = std::str::from_utf8(pair).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => out.push(b),
                    None => return Ok(Datum::Null),
                }
            }
            Datum::Bytes(out)
        }
        B::FindInSet { coll } => {
            let needle = bytes(&v[0]);
            let list = bytes(&v[1]);
            if needle.contains(&b',') {
                return Ok(Datum::Int(0));
            }
            // Trailing spaces count here, even under a PAD SPACE collation (MySQL compares
            // the items with strnncoll, not strnncollsp).
            let spaces = |b: &[u8]| b.iter().rev().take_while(|&&c| c == b' ').count();
            let pos = (list.split(|&b| b == b','))
                .position(|x| same(x, &needle, coll) && spaces(x) == spaces(&needle));
            Datum::Int(pos.map_or(0, |p| p as i64 + 1))
        }
        B::Field { coll } => {
            if v[0].is_null() {
                return Ok(Datum::Int(0));
            }
            let numeric = v.iter().all(|d| {
                matches!(
                    d,
                    Datum::Int(_) | Datum::UInt(_) | Datum::Double(_) | Datum::Decimal(_)
                )
            });
            let hit = v[1..].iter().position(|d| {
                !d.is_null()
                    && if numeric {
                        d.to_f64(&mut Warnings::default()) == v[0].to_f64(&mut Warnings::default())
                    } else {
                        same(&bytes(d), &bytes(&v[0]), coll)
                    }
            });
            Datum::Int(hit.map_or(0, |p| p as i64 + 1))
        }
        B::Elt => {
            if v[0].is_null() {
                return Ok(Datum::Null);
            }
            let n = v[0].to_i64(w);
            match usize::try_from(n).ok().filter(|&n| n >= 1 && n < v.len()) {
                Some(i) if !v[i].is_null() => Datum::Bytes(bytes(&v[i])),
                _ => Datum::Null,
            }
        }
        B::Space => {
            let n = int(0, w).max(0);
            if n > MAX_RESULT as i64 {
                return Ok(too_big(w, "space"));
            }
            st(" ".repeat(n as usize))
        }
        B::SubstringIndex => {
            substring_index(&text(&v[0]), &text(&v[1]), int(2, w)).map_or(Datum::Null, st)
        }
        B::Strcmp { coll } => {
            let (a, b) = (bytes(&v[0]), bytes(&v[1]));
            let o = coll.compare(&types::comparable(coll, &a), &types::comparable(coll, &b));
            Datum::Int(o as i64)
        }
        B::Quote => {
            if v[0].is_null() {
                return Ok(st("NULL".into()));
            }
            let mut out = vec![b'\''];
            for b in bytes(&v[0]) {
                match b {
                    b'\\' | b'\'' => out.extend_from_slice(&[b'\\', b]),
                    0 => out.extend_from_slice(b"\\0"),
                    26 => out.extend_from_slice(b"\\Z"),
                    b => out.push(b),
                }
            }
            out.push(b'\'');
            Datum::Bytes(out)
        }
        B::Sha1 => st(hex(&sha1::Sha1::digest(bytes(&v[0])))),
        B::Sha2 => {
            let b = bytes(&v[0]);
            match int(1, w) {
                224 => st(hex(&sha2::Sha224::digest(&b))),
                0 | 256 => st(hex(&sha2::Sha256::digest(&b))),
                384 => st(hex(&sha2::Sha384::digest(&b))),
                512 => st(hex(&sha2::Sha512::digest(&b))),
                _ => Datum::Null,
            }
        }
        B::ToBase64 => st(to_base64(&bytes(&v[0]))),
        B::FromBase64 => from_base64(&bytes(&v[0])).map_or(Datum::Null, Datum::Bytes),
        B::BitLength => Datum::Int(bytes(&v[0]).len() as i64 * 8),
        B::Insert => {
            let s: Vec<char> = text(&v[0]).chars().collect();
            let (pos, len) = (int(1, w), int(2, w));
            if pos < 1 || pos as usize > s.len() {
                return Ok(st(s.into_iter().collect()));
            }
            let start = pos as usize - 1;
            let end = if len < 0 {
                s.len()
            } else {
                start.saturating_add(len as usize).min(s.len())
            };
            let mut out: String = s[..start].iter().collect();
            out.push_str(&text(&v[3]));
            out.extend(&s[end..]);
            st(out)
        }
        B::Format => {
            let places = int(1, w).clamp(0, 30) as usize;
            let r = types::round(&v[0], places as i64, false, w);
            st(group_thousands(&text(&r), places))
        }
        B::Exp => dbl(f64_(0, w).exp()),
        B::Ln | B::Log2 | B::Log10 => {
            let x = f64_(0, w);
            if x <= 0.0 {
                w.warn(ER_INVALID_ARGUMENT_FOR_LOGARITHM, &[]);
                return Ok(Datum::Null);
            }
            dbl(match f {
                B::Ln => x.ln(),
                B::Log2 => x.log2(),
                _ => x.log10(),
            })
        }
        B::Log => {
            let (base, x) = if v.len() == 2 {
                (f64_(0, w), f64_(1, w))
            } else {
                (std::f64::consts::E, f64_(0, w))
            };
            if x <= 0.0 || base <= 0.0 || base == 1.0 {
                w.warn(ER_INVALID_ARGUMENT_FOR_LOGARITHM, &[]);
                return Ok(Datum::Null);
            }
            dbl(x.ln() / base.ln())
        }
        B::Pi => Datum::Double(std::f64::consts::PI),
        B::Sin => dbl(f64_(0, w).sin()),
        B::Cos => dbl(f64_(0, w).cos()),
        B::Tan => dbl(f64_(0, w).tan()),
        B::Cot => {
            let x = f64_(0, w);
            if x == 0.0 {
                return Err(SqlError::new(
                    ER_DATA_OUT_OF_RANGE,
                    &[&"DOUBLE", &format!("cot({x})")],
                ));
            }
            dbl(1.0 / x.tan())
        }
        B::Asin | B::Acos => {
            let x = f64_(0, w);
            if !(-1.0..=1.0).contains(&x) {
                return Ok(Datum::Null);
            }
            dbl(if f == B::Asin { x.asin() } else { x.acos() })
        }
        B::Atan => dbl(if v.len() == 2 {
            f64_(0, w).atan2(f64_(1, w))
        } else {
            f64_(0, w).atan()
        }),
        B::Radians => dbl(f64_(0, w).to_radians()),
        B::Degrees => dbl(f64_(0, w).to_degrees()),
        B::BitCount => Datum::Int(i64::from((v[0].to_i64(w) as u64).count_ones())),
        B::DayName
        | B::MonthName
        | B::Weekday
        | B::DayOfWeek
        | B::DayOfYear
        | B::Quarter
        | B::LastDay
        | B::ToDays => {
            let Some(d) = date_of(&v[0], w) else {
                return Ok(Datum::Null);
            };
            match f {
                B::DayName => st(DAY_NAMES[d.weekday() as usize].into()),
                B::MonthName => st(MONTH_NAMES[d.month as usize - 1].into()),
                B::Weekday => Datum::Int(i64::from(d.weekday())),
                B::DayOfWeek => Datum::Int(i64::from((d.weekday() + 1) % 7 + 1)),
                B::DayOfYear => Datum::Int(i64::from(d.day_of_year())),
                B::Quarter => Datum::Int(i64::from(d.month.div_ceil(3))),
                B::LastDay => Datum::Date(Date {
                    day: types::days_in_month(d.year, d.month),
                    ..d
                }),
                _ => Datum::Int(d.day_number()),
            }
        }
        B::FromDays => match Date::from_day_number(int(0, w)) {
            Some(d) if int(0, w) >= 366 => Datum::Date(d),
            _ => Datum::Date(Date::default()),
        },
        B::MakeDate => {
            let (y, doy) = (int(0, w), int(1, w));
            let y = if (0..70).contains(&y) {
                y + 2000
            } else if (70..100).contains(&y) {
                y + 1900
            } else {
                y
            };
            let jan1 = u16::try_from(y)
                .ok()
                .filter(|y| *y <= 9999)
                .map(|year| Date {
                    year,
                    month: 1,
                    day: 1,
                });
            match jan1 {
                Some(j) if doy > 0 => {
                    Date::from_day_number(j.day_number() + doy - 1).map_or(Datum::Null, Datum::Date)
                }
                _ => Datum::Null,
            }
        }
        B::Hour | B::Minute | B::Second | B::Microsecond => {
            let Some(t) = time_of(&v[0], w) else {
                return Ok(Datum::Null);
            };
            Datum::Int(i64::from(match f {
                B::Hour => u32::from(t.hours),
                B::Minute => u32::from(t.minute),
                B::Second => u32::from(t.second),
                _ => t.micro,
            }))
        }
        B::TimeToSec => match time_of(&v[0], w) {
            Some(t) => Datum::Int(t.to_micros() / 1_000_000),
            None => Datum::Null,
        },
        // CONVERT_TZ(dt, from, to): NULL for a zone that is not SYSTEM, an offset or a known
        // name (types::tz).
        B::ConvertTz => {
            let zone = |d: &Datum| crate::vars::tz_of(&text(d));
            match (types::to_datetime(&v[0], w), zone(&v[1]), zone(&v[2])) {
                (Some(dt), Some(from), Some(to)) if dt.date.is_valid() => {
                    let local = dt.unix_seconds();
                    let shift = to.utc_to_local(from.local_to_utc(local)) - local;
                    DateTime::from_micros(dt.to_micros() + shift * 1_000_000, dt.fsp)
                        .map_or(Datum::Null, Datum::DateTime)
                }
                _ => Datum::Null,
            }
        }
        B::CompoundInterval => {
            let unit = String::from_utf8_lossy(&v[1].to_text().unwrap_or_default()).into_owned();
            match (v[0].to_text(), parse::compound_unit(&unit)) {
                (Some(t), Some((_, per))) => {
                    compound_value(&t, per).map_or(Datum::Null, Datum::Int)
                }
                _ => Datum::Null,
            }
        }
        B::SecToTime => {
            let secs = int(0, w).clamp(-3_020_399, 3_020_399);
            Time::from_micros(secs * 1_000_000, 0).map_or(Datum::Null, Datum::Time)
        }
        B::FromUnixtime => {
            let micros = match &v[0] {
                Datum::Int(i) => i.checked_mul(1_000_000),
                Datum::UInt(u) => i64::try_from(*u)
                    .ok()
                    .and_then(|i| i.checked_mul(1_000_000)),
                d => Some((d.to_f64(w) * 1e6).round() as i64),
            };
            let fsp = if matches!(v[0], Datum::Int(_) | Datum::UInt(_)) {
                0
            } else {
                6
            };
            // Shown in the session's time zone.
            let dt = micros.filter(|m| *m >= 0).and_then(|m| {
                let s = m.div_euclid(1_000_000);
                let shift = (types::session_utc_to_local(s) - s) * 1_000_000;
                DateTime::from_micros(m + unix_epoch_micros() + shift, fsp)
            });
            match (dt, v.get(1)) {
                (None, _) => Datum::Null,
                (Some(dt), None) => Datum::DateTime(dt),
                (Some(dt), Some(fmt)) => st(date_format(&dt, &text(fmt))),
            }
        }
        B::StrToDate => str_to_date(&text(&v[0]), &text(&v[1]), w),
        B::DateFormat => match types::to_datetime(&v[0], w) {
            Some(dt) => st(date_format(&dt, &text(&v[1]))),
            None => Datum::Null,
        },
        B::TimestampDiff(unit) => {
            let (Some(a), Some(b)) = (types::to_datetime(&v[0], w), types::to_datetime(&v[1], w))
            else {
                return Ok(Datum::Null);
            };
            Datum::Int(timestamp_diff_value(&a, &b, unit))
        }
        B::Extract => extract(&text(&v[0]), &v[1], w).map_or(Datum::Null, Datum::Int),
        B::TimePart => time_of(&v[0], w).map_or(Datum::Null, Datum::Time),
        B::Timestamp => types::to_datetime(&v[0], w).map_or(Datum::Null, Datum::DateTime),
        B::TimeDiff => {
            let micros = match (&v[0], &v[1]) {
                (Datum::Time(_), _) | (_, Datum::Time(_)) => {
                    let (Some(a), Some(b)) = (time_of(&v[0], w), time_of(&v[1], w)) else {
                        return Ok(Datum::Null);
                    };
                    a.to_micros() - b.to_micros()
                }
                _ => match (datetime_only(&v[0]), datetime_only(&v[1])) {
                    (Some(a), Some(b)) => a.to_micros() - b.to_micros(),
                    (None, None) => {
                        let (Some(a), Some(b)) = (time_of(&v[0], w), time_of(&v[1], w)) else {
                            return Ok(Datum::Null);
                        };
                        a.to_micros() - b.to_micros()
                    }
                    _ => return Ok(Datum::Null),
                },
            };
            clamp_time(micros, w)
        }
        B::AddTime | B::SubTime => {
            let Some(t) = time_of(&v[1], w) else {
                return Ok(Datum::Null);
            };
            let d = if f == B::AddTime {
                t.to_micros()
            } else {
                -t.to_micros()
            };
            match datetime_only(&v[0]) {
                Some(dt) => DateTime::from_micros(dt.to_micros() + d, 6)
                    .map_or(Datum::Null, |r| Datum::DateTime(shortest_fsp(r))),
                None => match time_of(&v[0], w) {
                    Some(a) => clamp_time(a.to_micros() + d, w),
                    None => Datum::Null,
                },
            }
        }
        B::MakeTime => {
            let (h, m) = (int(0, w), int(1, w));
            let sec = f64_(2, w);
            if !(0..60).contains(&m) || !(0.0..60.0).contains(&sec) {
                return Ok(Datum::Null);
            }
            let micros =
                (h.unsigned_abs() as i64 * 3600 + m * 60) * 1_000_000 + (sec * 1e6).round() as i64;
            clamp_time(if h < 0 { -micros } else { micros }, w)
        }
        B::Week | B::WeekOfYear | B::YearWeek => {
            let Some(d) = date_of(&v[0], w) else {
                return Ok(Datum::Null);
            };
            let mode = match f {
                B::WeekOfYear => 3,
                _ => v.get(1).map_or(0, |m| m.to_i64(w)).clamp(0, 7) as u8,
            };
            if f == B::YearWeek {
                let (year, week) = calc_week(&d, week_behaviour(mode) | WEEK_YEAR);
                Datum::Int(year * 100 + week)
            } else {
                Datum::Int(calc_week(&d, week_behaviour(mode)).1)
            }
        }
        B::RegexpLike { ci }
        | B::RegexpInstr { ci }
        | B::RegexpSubstr { ci }
        | B::RegexpReplace { ci } => return regexp(f, ci, v, w),
        B::IsNull => Datum::Int(i64::from(v[0].is_null())),
        B::AnyValue => v[0].clone(),
        B::Uuid => st(uuid()),
        // SLEEP(NULL) sleeps for no time, as MySQL's reads NULL as 0.
        B::Sleep => userlock::sleep(if v[0].is_null() { 0.0 } else { f64_(0, w) })?,
        B::GetLock => userlock::get_lock(&v[0], f64_(1, w))?,
        B::ReleaseLock => userlock::release_lock(&v[0])?,
        B::IsFreeLock | B::IsUsedLock => userlock::lock_state(&v[0], f == B::IsUsedLock)?,
        B::ReleaseAllLocks => userlock::release_all()?,
    })
}

/// Fractional digits of a string constant read as a date, time or datetime: 6 if it has a
/// non-zero fraction.
fn literal_fsp(b: &[u8]) -> u8 {
    let micro = match types::parse_datetime(b) {
        Some((dt, _)) => i64::from(dt.micro),
        None => types::parse_time_micros(b).map_or(0, |m| m % 1_000_000),
    };
    if micro == 0 {
        0
    } else {
        6
    }
}

/// Fractional digits of a temporal argument's type (6 when unknown, as for strings).
fn frac_of(t: Option<&EType>) -> u8 {
    match t {
        Some(EType::Time { fsp } | EType::DateTime { fsp }) => *fsp,
        Some(EType::Date | EType::Int { .. }) => 0,
        _ => 6,
    }
}

/// A DATETIME argument, or a string that holds a date and a time (not a bare TIME).
fn datetime_only(d: &Datum) -> Option<DateTime> {
    match d {
        Datum::DateTime(dt) => Some(*dt),
        Datum::Date(x) => Some(DateTime::from_date(*x)),
        Datum::Bytes(b) => match types::parse_datetime(b) {
            Some((dt, true)) => Some(dt),
            _ => None,
        },
        _ => None,
    }
}

/// A TIME from microseconds, clamped to ±838:59:59 with warning 1292 as MySQL does.
fn clamp_time(micros: i64, w: &mut Warnings) -> Datum {
    const MAX: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;
    let fsp = if micros % 1_000_000 == 0 { 0 } else { 6 };
    if micros.abs() > MAX {
        w.warn(ER_TRUNCATED_WRONG_VALUE, &[&"time", &micros]);
        let bound = if micros < 0 { -MAX } else { MAX };
        return Time::from_micros(bound, 0).map_or(Datum::Null, Datum::Time);
    }
    Time::from_micros(micros, fsp).map_or(Datum::Null, Datum::Time)
}

fn shortest_fsp(dt: DateTime) -> DateTime {
    DateTime {
        fsp: if dt.micro == 0 { 0 } else { 6 },
        ..dt
    }
}

/// EXTRACT(unit FROM x), the unit lower-case as the parser gives it.
fn extract(unit: &str, d: &Datum, w: &mut Warnings) -> Option<i64> {
    let time_units = [
        "hour",
        "minute",
        "second",
        "microsecond",
        "hour_minute",
        "hour_second",
        "minute_second",
        "hour_microsecond",
        "minute_microsecond",
        "second_microsecond",
    ];
    if time_units.contains(&unit) {
        let t = time_of(d, w)?;
        let sign = if t.negative { -1 } else { 1 };
        let (h, m, s, us) = (
            i64::from(t.hours),
            i64::from(t.minute),
            i64::from(t.second),
            i64::from(t.micro),
        );
        let v = match unit {
            "hour" => h,
            "minute" => m,
            "second" => s,
            "microsecond" => us,
            "hour_minute" => h * 100 + m,
            "hour_second" => (h * 100 + m) * 100 + s,
            "minute_second" => m * 100 + s,
            "hour_microsecond" => ((h * 100 + m) * 100 + s) * 1_000_000 + us,
            "minute_microsecond" => (m * 100 + s) * 1_000_000 + us,
            _ => s * 1_000_000 + us,
        };
        return Some(sign * v);
    }
    let dt = types::to_datetime(d, w)?;
    let dd = &dt.date;
    let (y, mo, day, h, mi, s) = (
        i64::from(dd.year),
        i64::from(dd.month),
        i64::from(dd.day),
        i64::from(dt.hour),
        i64::from(dt.minute),
        i64::from(dt.second),
    );
    Some(match unit {
        "year" => y,
        "quarter" => (mo + 2) / 3,
        "month" => mo,
        "week" => calc_week(dd, week_behaviour(0)).1,
        "day" => day,
        "year_month" => y * 100 + mo,
        "day_hour" => day * 100 + h,
        "day_minute" => (day * 100 + h) * 100 + mi,
        "day_second" => ((day * 100 + h) * 100 + mi) * 100 + s,
        "day_microsecond" => {
            (((day * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + i64::from(dt.micro)
        }
        _ => return None,
    })
}

/// WEEK() mode bits (MySQL's week_mode): weeks start on Monday; the week belongs to the year
/// it mostly lies in (range 1..53 instead of 0..53); week 1 is the first with 4+ days.
const WEEK_MONDAY_FIRST: u8 = 1;
const WEEK_YEAR: u8 = 2;
const WEEK_FIRST_WEEKDAY: u8 = 4;

/// The behaviour bits of a WEEK() mode 0..7.
fn week_behaviour(mode: u8) -> u8 {
    if mode & WEEK_MONDAY_FIRST == 0 {
        mode ^ WEEK_FIRST_WEEKDAY
    } else {
        mode
    }
}

fn days_in_year(y: i64) -> i64 {
    if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
        366
    } else {
        365
    }
}

/// (year, week) of `d` under `behaviour` (WEEK_* bits), as MySQL numbers weeks.
fn calc_week(d: &Date, behaviour: u8) -> (i64, i64) {
    let daynr = d.day_number();
    let jan1 = Date {
        year: d.year,
        month: 1,
        day: 1,
    };
    let mut first_daynr = jan1.day_number();
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;
    // Day of the week of January 1st: 0 = the week's first day.
    let weekday_of = |n: i64| (n + 5 + i64::from(!monday_first)).rem_euclid(7);
    let mut weekday = weekday_of(first_daynr);
    let mut year = i64::from(d.year);
    let late_start = |wd: i64| (first_weekday && wd != 0) || (!first_weekday && wd >= 4);
    if d.month == 1 && i64::from(d.day) <= 7 - weekday {
        if !week_year && late_start(weekday) {
            return (year, 0);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days).rem_euclid(7);
    }
    let days = if late_start(weekday) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let wd = (weekday + days_in_year(year)).rem_euclid(7);
        if (!first_weekday && wd < 4) || (first_weekday && wd == 0) {
            return (year + 1, 1);
        }
    }
    (year, days / 7 + 1)
}

thread_local! {
    /// Compiled patterns by (pattern, case-insensitive): a statement's constant pattern is
    /// compiled once per thread, not per row.
    static REGEX_CACHE: std::cell::RefCell<std::collections::HashMap<(String, bool), regex::Regex>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

fn compiled(pattern: &str, ci: bool) -> Result<regex::Regex, SqlError> {
    REGEX_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(r) = c.get(&(pattern.to_string(), ci)) {
            return Ok(r.clone());
        }
        let r = regex::RegexBuilder::new(pattern)
            .case_insensitive(ci)
            .build()
            .map_err(|e| {
                SqlError::new(
                    ER_REGEXP_ERROR,
                    &[&e.to_string().lines().last().unwrap_or("syntax error")],
                )
            })?;
        if c.len() >= 64 {
            c.clear();
        }
        c.insert((pattern.to_string(), ci), r.clone());
        Ok(r)
    })
}

/// REGEXP_LIKE(s, pat [, match_type]), REGEXP_INSTR(s, pat [, pos [, occurrence]]),
/// REGEXP_SUBSTR(s, pat [, pos [, occurrence]]), REGEXP_REPLACE(s, pat, repl [, pos [,
/// occurrence]]): positions count characters from 1; occurrence 0 in REPLACE means all.
fn regexp(f: Builtin, ci: bool, v: &[Datum], w: &mut Warnings) -> Result<Datum, SqlError> {
    let subject = text(&v[0]);
    let mut ci = ci;
    if let (Builtin::RegexpLike { .. }, Some(m)) = (f, v.get(2)) {
        for c in text(m).chars() {
            match c {
                'c' => ci = false,
                'i' => ci = true,
                _ => {}
            }
        }
    }
    let re = compiled(&text(&v[1]), ci)?;
    let arg = |i: usize, w: &mut Warnings, d: i64| v.get(i).map_or(d, |x| x.to_i64(w));
    let (pos_i, occ_i) = match f {
        Builtin::RegexpReplace { .. } => (3, 4),
        _ => (2, 3),
    };
    let pos = arg(pos_i, w, 1);
    let occurrence = arg(
        occ_i,
        w,
        if matches!(f, Builtin::RegexpReplace { .. }) {
            0
        } else {
            1
        },
    );
    let n_chars = subject.chars().count() as i64;
    if matches!(f, Builtin::RegexpLike { .. }) {
        return Ok(Datum::Int(i64::from(re.is_match(&subject))));
    }
    if pos < 1 || pos > n_chars + 1 {
        return Err(SqlError::new(ER_REGEXP_INDEX_OUT_OF_BOUNDS, &[]));
    }
    let start = subject
        .char_indices()
        .nth(pos as usize - 1)
        .map_or(subject.len(), |(b, _)| b);
    let hay = &subject[start..];
    let char_pos = |byte: usize| subject[..start + byte].chars().count() as i64 + 1;
    Ok(match f {
        Builtin::RegexpInstr { .. } => {
            let m = re.find_iter(hay).nth(occurrence.max(1) as usize - 1);
            Datum::Int(m.map_or(0, |m| char_pos(m.start())))
        }
        Builtin::RegexpSubstr { .. } => match re.find_iter(hay).nth(occurrence.max(1) as usize - 1)
        {
            Some(m) => st(m.as_str().to_string()),
            None => Datum::Null,
        },
        _ => {
            let repl = text(&v[2]);
            let replaced = if occurrence <= 0 {
                re.replace_all(hay, repl.as_str()).into_owned()
            } else {
                match re.find_iter(hay).nth(occurrence as usize - 1) {
                    Some(m) => {
                        let one = re.replace(&hay[m.start()..], repl.as_str());
                        format!("{}{one}", &hay[..m.start()])
                    }
                    None => hay.to_string(),
                }
            };
            st(format!("{}{replaced}", &subject[..start]))
        }
    })
}

/// Longest string SPACE() builds (MySQL caps results at max_allowed_packet).
const MAX_RESULT: usize = 64 << 20;

fn too_big(w: &mut Warnings, func: &str) -> Datum {
    w.warn(ER_WARN_ALLOWED_PACKET_OVERFLOWED, &[&func, &MAX_RESULT]);
    Datum::Null
}

/// Equality of set members as the default case-insensitive collations see them.
/// True if two strings are equal under `coll`.
fn same(a: &[u8], b: &[u8], coll: Collation) -> bool {
    coll.compare(&types::comparable(coll, a), &types::comparable(coll, b)) == Ordering::Equal
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// CRC-32 (IEEE 802.3, as zlib and MySQL's CRC32()).
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// CONV(n, from_base, to_base): bases 2..=36 (a negative base reads or writes a signed
/// number); None (NULL) for a base out of range.
fn conv(n: &str, from: i64, to: i64) -> Option<String> {
    let (fb, tb) = (from.unsigned_abs(), to.unsigned_abs());
    if !(2..=36).contains(&fb) || !(2..=36).contains(&tb) {
        return None;
    }
    let t = n.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(36).filter(|d| u64::from(*d) < fb) else {
            break;
        };
        v = v.saturating_mul(fb).saturating_add(u64::from(d));
    }
    let v = if neg { v.wrapping_neg() } else { v };
    let (neg_out, mut u) = if to < 0 && (v as i64) < 0 {
        (true, (v as i64).unsigned_abs())
    } else {
        (false, v)
    };
    let mut out = Vec::new();
    loop {
        let d = (u % tb) as u32;
        out.push(
            std::char::from_digit(d, 36)
                .unwrap_or('0')
                .to_ascii_uppercase(),
        );
        u /= tb;
        if u == 0 {
            break;
        }
    }
    if neg_out {
        out.push('-');
    }
    Some(out.into_iter().rev().collect())
}

fn substring_index(s: &str, delim: &str, count: i64) -> Option<String> {
    if delim.is_empty() || count == 0 {
        return Some(String::new());
    }
    let parts: Vec<&str> = s.split(delim).collect();
    let n = count.unsigned_abs() as usize;
    if n >= parts.len() {
        return Some(s.to_string());
    }
    Some(if count > 0 {
        parts[..n].join(delim)
    } else {
        parts[parts.len() - n..].join(delim)
    })
}

/// "1234567.891" -> "1,234,567.891" with exactly `places` decimals.
fn group_thousands(num: &str, places: usize) -> String {
    let (neg, num) = match num.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, num),
    };
    let (int_part, frac) = num.split_once('.').unwrap_or((num, ""));
    let mut out = String::new();
    for (i, c) in int_part.chars().enumerate() {
        if i > 0 && (int_part.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if places > 0 {
        out.push('.');
        let mut f: String = frac.chars().take(places).collect();
        while f.len() < places {
            f.push('0');
        }
        out.push_str(&f);
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// TO_BASE64: MySQL's form, with a newline after every 76 output characters.
fn to_base64(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4 + b.len() / 57);
    for (i, c) in b.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push('\n');
        }
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(B64[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// FROM_BASE64: whitespace is skipped; None (NULL) for anything else outside the alphabet.
fn from_base64(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    let mut pad = 0;
    for &c in b {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                pad += 1;
                continue;
            }
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        if pad > 0 {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn date_of(d: &Datum, w: &mut Warnings) -> Option<Date> {
    types::to_datetime(d, w)
        .map(|dt| dt.date)
        .filter(|d| d.is_valid())
}

/// The time part for HOUR() and friends: a TIME's hours may exceed 23.
fn time_of(d: &Datum, w: &mut Warnings) -> Option<Time> {
    let t = match d {
        Datum::Bytes(b) => match types::parse_datetime(b) {
            Some((dt, true)) => Some(dt.time_of_day()),
            _ => types::to_time(d, w),
        },
        Datum::Date(_) => Some(Time::default()),
        _ => types::to_time(d, w),
    }?;
    // A string's value has the digits it shows: none when its fraction is zero.
    Some(match d {
        Datum::Bytes(_) if t.micro == 0 => Time { fsp: 0, ..t },
        _ => t,
    })
}

/// Microseconds from 0000-01-01 (DateTime::from_micros's origin) to 1970-01-01.
/// The value of a compound INTERVAL: the digit groups of `text` (any other characters
/// separate them; a leading `-` negates the whole) as fields of `per` units each, aligned to
/// the right when fewer are given (`'5' DAY_HOUR` is 5 hours), as MySQL reads them; None when
/// there are more groups than fields. A microsecond field is a fraction: `.5` is 500000.
fn compound_value(text: &[u8], per: &[i64]) -> Option<i64> {
    let text = text.trim_ascii_start();
    let negative = text.first() == Some(&b'-');
    let raw: Vec<&[u8]> = text
        .split(|c| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .collect();
    let micro_field = per.len() > 1 && per[per.len() - 2] == 1_000_000;
    let groups: Vec<i64> = raw
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let mut g: &[u8] = g;
            let scale = if micro_field && i + 1 == raw.len() {
                g = &g[..g.len().min(6)];
                10i64.pow(6 - g.len() as u32)
            } else {
                1
            };
            Some(std::str::from_utf8(g).ok()?.parse::<i64>().ok()? * scale)
        })
        .collect::<Option<_>>()?;
    if groups.len() > per.len() {
        return None;
    }
    let mut total: i64 = 0;
    for (g, p) in groups.iter().rev().zip(per.iter().rev()) {
        total = total.checked_add(g.checked_mul(*p)?)?;
    }
    Some(if negative { -total } else { total })
}

fn unix_epoch_micros() -> i64 {
    DateTime::from_date(Date {
        year: 1970,
        month: 1,
        day: 1,
    })
    .to_micros()
}

/// DATE_FORMAT's specifiers (the week-number ones %U %u %V %v %X %x print as 00).
fn date_format(dt: &DateTime, fmt: &str) -> String {
    let d = &dt.date;
    let mut out = String::new();
    let mut it = fmt.chars();
    let h12 = match dt.hour % 12 {
        0 => 12,
        h => h,
    };
    let ampm = if dt.hour < 12 { "AM" } else { "PM" };
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = it.next() else {
            break;
        };
        let valid = d.is_valid();
        let _ = match spec {
            'Y' => write!(out, "{:04}", d.year),
            'y' => write!(out, "{:02}", d.year % 100),
            'm' => write!(out, "{:02}", d.month),
            'c' => write!(out, "{}", d.month),
            'd' => write!(out, "{:02}", d.day),
            'e' => write!(out, "{}", d.day),
            'D' => {
                let suffix = match (d.day % 100, d.day % 10) {
                    (11..=13, _) => "th",
                    (_, 1) => "st",
                    (_, 2) => "nd",
                    (_, 3) => "rd",
                    _ => "th",
                };
                write!(out, "{}{suffix}", d.day)
            }
            'H' => write!(out, "{:02}", dt.hour),
            'k' => write!(out, "{}", dt.hour),
            'h' | 'I' => write!(out, "{h12:02}"),
            'l' => write!(out, "{h12}"),
            'i' => write!(out, "{:02}", dt.minute),
            's' | 'S' => write!(out, "{:02}", dt.second),
            'f' => write!(out, "{:06}", dt.micro),
            'p' => write!(out, "{ampm}"),
            'r' => write!(out, "{h12:02}:{:02}:{:02} {ampm}", dt.minute, dt.second),
            'T' => write!(out, "{:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second),
            'W' if valid => write!(out, "{}", DAY_NAMES[d.weekday() as usize]),
            'a' if valid => write!(out, "{}", &DAY_NAMES[d.weekday() as usize][..3]),
            'w' if valid => write!(out, "{}", (d.weekday() + 1) % 7),
            'j' if valid => write!(out, "{:03}", d.day_of_year()),
            'M' if (1..=12).contains(&d.month) => {
                write!(out, "{}", MONTH_NAMES[d.month as usize - 1])
            }
            'b' if (1..=12).contains(&d.month) => {
                write!(out, "{}", &MONTH_NAMES[d.month as usize - 1][..3])
            }
            'U' | 'u' | 'V' | 'v' => write!(out, "00"),
            'X' | 'x' => write!(out, "{:04}", d.year),
            other => write!(out, "{other}"),
        };
    }
    out
}

/// What a STR_TO_DATE format reads: (date parts, time parts, fractional digits).
fn format_parts(fmt: &str) -> (bool, bool, u8) {
    let (mut date, mut time, mut fsp) = (false, false, 0);
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            continue;
        }
        match it.next() {
            Some('Y' | 'y' | 'm' | 'c' | 'd' | 'e' | 'D' | 'M' | 'b' | 'j' | 'a' | 'W') => {
                date = true
            }
            Some('H' | 'k' | 'h' | 'I' | 'l' | 'i' | 's' | 'S' | 'p' | 'T' | 'r') => time = true,
            Some('f') => {
                time = true;
                fsp = 6;
            }
            _ => {}
        }
    }
    (date, time, fsp)
}

/// STR_TO_DATE(s, fmt): DATE, TIME or DATETIME as the format's parts say; NULL with warning
/// 1411 when `s` does not match (text left over after the format is ignored, with 1292).
/// Numbers may have leading spaces; other format characters must match.
fn str_to_date(s: &str, fmt: &str, w: &mut Warnings) -> Datum {
    let bad = |w: &mut Warnings| {
        w.warn(ER_WRONG_VALUE_FOR_TYPE, &[&"datetime", &s, &"str_to_date"]);
        Datum::Null
    };
    let (has_date, has_time, fsp) = format_parts(fmt);
    let b = s.as_bytes();
    let mut p = 0;
    let (mut year, mut month, mut day) = (0i64, 0i64, 0i64);
    let (mut hour, mut minute, mut second, mut micro) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut yday: Option<i64> = None;
    let num = |p: &mut usize, max: usize| -> Option<i64> {
        while *p < b.len() && b[*p] == b' ' {
            *p += 1;
        }
        let start = *p;
        while *p < b.len() && *p - start < max && b[*p].is_ascii_digit() {
            *p += 1;
        }
        s[start..*p].parse().ok()
    };
    let word = |p: &mut usize, names: &[&str], min: usize| -> Option<i64> {
        let rest = &s[*p..];
        for (i, n) in names.iter().enumerate() {
            for len in [n.len(), min] {
                if rest.len() >= len && rest[..len].eq_ignore_ascii_case(&n[..len]) {
                    *p += len;
                    return Some(i as i64 + 1);
                }
            }
        }
        None
    };
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            if c.is_ascii_whitespace() {
                while p < b.len() && b[p].is_ascii_whitespace() {
                    p += 1;
                }
                continue;
            }
            if p < b.len() && b[p] == c as u8 {
                p += 1;
                continue;
            }
            return bad(w);
        }
        let Some(spec) = it.next() else {
            break;
        };
        let got = match spec {
            'Y' => num(&mut p, 4).map(|v| {
                year = v;
            }),
            'y' => num(&mut p, 2).map(|v| {
                year = if v < 70 { 2000 + v } else { 1900 + v };
            }),
            'm' | 'c' => num(&mut p, 2).map(|v| month = v),
            'd' | 'e' => num(&mut p, 2).map(|v| day = v),
            'D' => num(&mut p, 2).map(|v| {
                day = v;
                if s[p..].len() >= 2 {
                    p += 2;
                }
            }),
            'H' | 'k' | 'h' | 'I' | 'l' => num(&mut p, 2).map(|v| hour = v),
            'i' => num(&mut p, 2).map(|v| minute = v),
            's' | 'S' => num(&mut p, 2).map(|v| second = v),
            'f' => {
                let start = p;
                num(&mut p, 6).map(|v| {
                    let digits = (p - start) as u32;
                    micro = v * 10i64.pow(6 - digits);
                })
            }
            'j' => num(&mut p, 3).map(|v| yday = Some(v)),
            'M' => word(&mut p, &MONTH_NAMES, 3).map(|v| month = v),
            'b' => word(&mut p, &MONTH_NAMES, 3).map(|v| month = v),
            'W' | 'a' => word(&mut p, &DAY_NAMES, 3).map(|_| ()),
            'p' => {
                let rest = s[p..].to_ascii_uppercase();
                if rest.starts_with("AM") || rest.starts_with("PM") {
                    pm = Some(rest.starts_with("PM"));
                    p += 2;
                    Some(())
                } else {
                    None
                }
            }
            'T' | 'r' => {
                let parts = [
                    num(&mut p, 2),
                    {
                        if p < b.len() && b[p] == b':' {
                            p += 1;
                        }
                        num(&mut p, 2)
                    },
                    {
                        if p < b.len() && b[p] == b':' {
                            p += 1;
                        }
                        num(&mut p, 2)
                    },
                ];
                match parts {
                    [Some(h), Some(m), Some(sec)] => {
                        (hour, minute, second) = (h, m, sec);
                        if spec == 'r' {
                            while p < b.len() && b[p] == b' ' {
                                p += 1;
                            }
                            let rest = s[p..].to_ascii_uppercase();
                            if rest.starts_with("AM") || rest.starts_with("PM") {
                                pm = Some(rest.starts_with("PM"));
                                p += 2;
                            }
                        }
                        Some(())
                    }
                    _ => None,
                }
            }
            '%' => (p < b.len() && b[p] == b'%').then(|| p += 1),
            _ => Some(()),
        };
        if got.is_none() {
            return bad(w);
        }
    }
    if p < b.len() {
        w.warn(ER_TRUNCATED_WRONG_VALUE, &[&"datetime", &s]);
    }
    if let Some(pm) = pm {
        if !(1..=12).contains(&hour) {
            return bad(w);
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
    }
    if let Some(n) = yday {
        let Some(d) = u16::try_from(year)
            .ok()
            .map(|year| Date {
                year,
                month: 1,
                day: 1,
            })
            .and_then(|j| Date::from_day_number(j.day_number() + n - 1))
        else {
            return bad(w);
        };
        (month, day) = (i64::from(d.month), i64::from(d.day));
    }
    if hour > 23 || minute > 59 || second > 59 || month > 12 || day > 31 || year > 9999 {
        return bad(w);
    }
    let date = Date {
        year: year as u16,
        month: month as u8,
        day: day as u8,
    };
    // As MySQL's: the parts are range-checked only (STR_TO_DATE('04/31/2004', '%m/%d/%Y') is
    // '2004-04-31').
    let time = Time {
        negative: false,
        hours: hour as u16,
        minute: minute as u8,
        second: second as u8,
        micro: micro as u32,
        fsp,
    };
    match (has_date, has_time) {
        (true, false) => Datum::Date(date),
        (false, true) => Datum::Time(time),
        _ => Datum::DateTime(DateTime {
            date,
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            micro: micro as u32,
            fsp,
        }),
    }
}

/// TIMESTAMPDIFF(unit, a, b): whole units from a to b (months compare day and time of day).
fn timestamp_diff_value(a: &DateTime, b: &DateTime, unit: IntervalUnit) -> i64 {
    let micros = b.to_micros() - a.to_micros();
    let months = || {
        let ma = i64::from(a.date.year) * 12 + i64::from(a.date.month);
        let mb = i64::from(b.date.year) * 12 + i64::from(b.date.month);
        let mut m = mb - ma;
        // A month is complete only when b's day and time reach a's.
        let rest = |x: &DateTime| {
            (
                x.date.day,
                x.to_micros() - DateTime::from_date(x.date).to_micros(),
            )
        };
        if m > 0 && rest(b) < rest(a) {
            m -= 1;
        } else if m < 0 && rest(b) > rest(a) {
            m += 1;
        }
        m
    };
    match unit {
        IntervalUnit::Microsecond => micros,
        IntervalUnit::Second => micros / 1_000_000,
        IntervalUnit::Minute => micros / 60_000_000,
        IntervalUnit::Hour => micros / 3_600_000_000,
        IntervalUnit::Day => micros / 86_400_000_000,
        IntervalUnit::Week => micros / (7 * 86_400_000_000),
        IntervalUnit::Month => months(),
        IntervalUnit::Quarter => months() / 3,
        IntervalUnit::Year => months() / 12,
    }
}

/// A version 1 (time-based) UUID as MySQL's UUID() gives: 100 ns ticks since 1582-10-15, a
/// random clock sequence and a random node id with the multicast bit set.
fn uuid() -> String {
    let since_1970 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ticks = since_1970.as_nanos() as u64 / 100 + 0x01B2_1DD2_1381_4000;
    let clock_seq: u16 = rand::random::<u16>() & 0x3FFF | 0x8000;
    let node: u64 = rand::random::<u64>() & 0xFFFF_FFFF_FFFF | 0x0100_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ticks as u32,
        (ticks >> 32) as u16,
        ((ticks >> 48) as u16 & 0x0FFF) | 0x1000,
        clock_seq,
        node
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: Builtin, args: &[Datum]) -> Datum {
        call(f, args, &mut Warnings::default()).unwrap()
    }
    fn s(x: &str) -> Datum {
        Datum::Bytes(x.as_bytes().to_vec())
    }

    #[test]
    fn string_functions_match_mysql() {
        assert_eq!(
            run(Builtin::Crc32, &[s("MySQL")]),
            Datum::UInt(3_259_397_556)
        );
        assert_eq!(conv("a", 16, 2).as_deref(), Some("1010"));
        assert_eq!(conv("6E", 18, 8).as_deref(), Some("172"));
        assert_eq!(conv("-17", 10, -18).as_deref(), Some("-H"));
        assert_eq!(
            run(
                Builtin::Char,
                &[Datum::Int(77), Datum::Int(121), Datum::Null, Datum::Int(83)]
            ),
            s("MyS")
        );
        assert_eq!(
            run(Builtin::Char, &[Datum::Int(256)]),
            Datum::Bytes(vec![1, 0])
        );
        assert_eq!(run(Builtin::Ord, &[s("é")]), Datum::UInt(0xC3A9));
        assert_eq!(
            substring_index("www.mysql.com", ".", 2).as_deref(),
            Some("www.mysql")
        );
        assert_eq!(
            substring_index("www.mysql.com", ".", -2).as_deref(),
            Some("mysql.com")
        );
        assert_eq!(
            run(
                Builtin::FindInSet {
                    coll: Collation::Utf8mb40900AiCi
                },
                &[s("B"), s("a,b,c,d")]
            ),
            Datum::Int(2)
        );
        assert_eq!(
            run(
                Builtin::Field {
                    coll: Collation::Utf8mb4Bin
                },
                &[s("Bb"), s("bb"), s("Bb")]
            ),
            Datum::Int(2)
        );
        assert_eq!(
            run(
                Builtin::Strcmp {
                    coll: Collation::Utf8mb4GeneralCi
                },
                &[s("\u{e9}t\u{e9} "), s("ETE")]
            ),
            Datum::Int(0)
        );
        assert_eq!(
            run(
                Builtin::Field {
                    coll: Collation::Utf8mb4GeneralCi
                },
                &[s("\u{e9}"), s("a"), s("E")]
            ),
            Datum::Int(2)
        );
        assert_eq!(
            run(Builtin::Elt, &[Datum::Int(4), s("a"), s("b")]),
            Datum::Null
        );
        assert_eq!(run(Builtin::Quote, &[s("Don't!")]), s("'Don\\'t!'"));
        assert_eq!(run(Builtin::Quote, &[Datum::Null]), s("NULL"));
        assert_eq!(to_base64(b"abc"), "YWJj");
        assert_eq!(from_base64(b"YWJj").as_deref(), Some(b"abc".as_slice()));
        assert_eq!(
            to_base64(&[b'x'; 60]).lines().next().map(str::len),
            Some(76)
        );
        assert_eq!(
            run(Builtin::Sha1, &[s("abc")]),
            s("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(group_thousands("12332.1235", 4), "12,332.1235");
        assert_eq!(group_thousands("-1234567", 2), "-1,234,567.00");
        assert_eq!(
            run(
                Builtin::Insert,
                &[s("Quadratic"), Datum::Int(3), Datum::Int(4), s("What")]
            ),
            s("QuWhattic")
        );
        assert_eq!(run(Builtin::Unhex, &[s("4D7953514C")]), s("MySQL"));
        assert_eq!(run(Builtin::Unhex, &[s("GG")]), Datum::Null);
    }

    #[test]
    fn mysql_only_forms() {
        let ci = false;
        let r = |f: Builtin, a: &[Datum]| run(f, a);
        assert_eq!(
            r(Builtin::RegexpLike { ci: true }, &[s("ABC"), s("abc")]),
            Datum::Int(1)
        );
        assert_eq!(
            r(
                Builtin::RegexpLike { ci: true },
                &[s("ABC"), s("abc"), s("c")]
            ),
            Datum::Int(0)
        );
        let instr = Builtin::RegexpInstr { ci };
        assert_eq!(
            r(instr, &[s("dog cat dog"), s("dog"), Datum::Int(2)]),
            Datum::Int(9)
        );
        assert_eq!(
            r(
                instr,
                &[s("dog cat dog"), s("dog"), Datum::Int(1), Datum::Int(2)]
            ),
            Datum::Int(9)
        );
        let substr = Builtin::RegexpSubstr { ci };
        assert_eq!(
            r(
                substr,
                &[s("abc def ghi"), s("[a-z]+"), Datum::Int(1), Datum::Int(3)]
            ),
            s("ghi")
        );
        assert_eq!(r(substr, &[s("abc"), s("x")]), Datum::Null);
        let replace = Builtin::RegexpReplace { ci };
        assert_eq!(
            r(
                replace,
                &[
                    s("abc def ghi"),
                    s("[a-z]+"),
                    s("X"),
                    Datum::Int(1),
                    Datum::Int(3)
                ]
            ),
            s("abc def X")
        );
        assert_eq!(
            r(
                replace,
                &[s("abc def ghi"), s("[a-z]+"), s("X"), Datum::Int(5)]
            ),
            s("abc X X")
        );
        assert!(call(
            instr,
            &[s("abc"), s("b"), Datum::Int(9)],
            &mut Warnings::default()
        )
        .is_err());
        assert_eq!(r(Builtin::AnyValue, &[Datum::Int(5)]), Datum::Int(5));
        assert_eq!(r(Builtin::AnyValue, &[Datum::Null]), Datum::Null);
        let mut w = Warnings::default();
        assert_eq!(
            call(Builtin::Ln, &[Datum::Int(0)], &mut w).unwrap(),
            Datum::Null
        );
        assert_eq!(w.0.first().map(|x| x.code), Some(3020), "MySQL 8.0 warns");
    }

    #[test]
    fn date_functions_match_mysql() {
        let d = s("2008-02-03 22:23:01");
        assert_eq!(run(Builtin::DayName, std::slice::from_ref(&d)), s("Sunday"));
        assert_eq!(
            run(Builtin::DayOfWeek, std::slice::from_ref(&d)),
            Datum::Int(1)
        );
        assert_eq!(
            run(Builtin::Weekday, std::slice::from_ref(&d)),
            Datum::Int(6)
        );
        assert_eq!(
            run(Builtin::DayOfYear, std::slice::from_ref(&d)),
            Datum::Int(34)
        );
        assert_eq!(run(Builtin::Hour, std::slice::from_ref(&d)), Datum::Int(22));
        assert_eq!(run(Builtin::Hour, &[s("272:59:59")]), Datum::Int(272));
        assert_eq!(
            run(Builtin::ToDays, &[s("2007-10-07")]),
            Datum::Int(733_321)
        );
        assert_eq!(
            run(Builtin::FromDays, &[Datum::Int(730_669)]),
            Datum::Date(Date {
                year: 2000,
                month: 7,
                day: 3
            })
        );
        assert_eq!(
            run(Builtin::LastDay, &[s("2004-02-05")]),
            Datum::Date(Date {
                year: 2004,
                month: 2,
                day: 29
            })
        );
        assert_eq!(
            run(Builtin::TimeToSec, &[s("22:23:00")]),
            Datum::Int(80_580)
        );
        assert_eq!(
            run(
                Builtin::DateFormat,
                &[s("2009-10-04 22:23:00"), s("%W %M %Y")]
            ),
            s("Sunday October 2009")
        );
        assert_eq!(
            run(
                Builtin::DateFormat,
                &[s("2007-10-04 22:23:00"), s("%H:%i:%s %r %D %j")]
            ),
            s("22:23:00 10:23:00 PM 4th 277")
        );
        assert_eq!(
            run(Builtin::FromUnixtime, &[Datum::Int(1_447_430_881)]),
            Datum::DateTime(DateTime {
                date: Date {
                    year: 2015,
                    month: 11,
                    day: 13
                },
                hour: 16,
                minute: 8,
                second: 1,
                micro: 0,
                fsp: 0
            })
        );
        assert_eq!(
            run(
                Builtin::TimestampDiff(IntervalUnit::Month),
                &[s("2003-02-01"), s("2003-05-01")]
            ),
            Datum::Int(3)
        );
        assert_eq!(
            run(
                Builtin::TimestampDiff(IntervalUnit::Year),
                &[s("2002-05-01"), s("2001-01-01")]
            ),
            Datum::Int(-1)
        );
        assert_eq!(
            run(
                Builtin::TimestampDiff(IntervalUnit::Minute),
                &[s("2003-02-01"), s("2003-05-01 12:05:55")]
            ),
            Datum::Int(128_885)
        );
        assert_eq!(
            run(Builtin::MakeDate, &[Datum::Int(2011), Datum::Int(32)]),
            Datum::Date(Date {
                year: 2011,
                month: 2,
                day: 1
            })
        );
        let u = text(&run(Builtin::Uuid, &[]));
        assert_eq!((u.len(), &u[14..15]), (36, "1"), "{u}");
    }
}
