//! Scalar functions (evaluation of `CExpr::Func`). Every function returns NULL when a
//! required argument is NULL, as MySQL's do, unless stated otherwise (IFNULL, COALESCE, IF,
//! CONCAT_WS skip or test NULLs themselves).

use std::cmp::Ordering;

use innoxide_engine::Collation;
use innoxide_sql::error::SqlError;
use innoxide_sql::types::{self, Datum, Warnings};

use super::builtins;
use super::expr::{CExpr, Env, Func};

fn text(d: &Datum) -> Option<String> {
    d.to_text()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn s(v: String) -> Datum {
    Datum::Bytes(v.into_bytes())
}

pub fn call(f: Func, args: &[CExpr], env: &Env<'_>, w: &mut Warnings) -> Result<Datum, SqlError> {
    // Functions that look at NULLs themselves.
    match f {
        Func::IfNull => {
            let a = args[0].eval(env, w)?;
            return if a.is_null() {
                args[1].eval(env, w)
            } else {
                Ok(a)
            };
        }
        Func::Coalesce => {
            for a in args {
                let v = a.eval(env, w)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            return Ok(Datum::Null);
        }
        Func::If => {
            let c = args[0].truth(env, w)? == Some(true);
            return args[if c { 1 } else { 2 }].eval(env, w);
        }
        Func::NullIf => {
            let (a, b) = (args[0].eval(env, w)?, args[1].eval(env, w)?);
            return Ok(
                if a.compare(&b, Collation::Utf8mb40900AiCi) == Some(Ordering::Equal) {
                    Datum::Null
                } else {
                    a
                },
            );
        }
        Func::ConcatWs => {
            let sep = args[0].eval(env, w)?;
            let Some(sep) = text(&sep) else {
                return Ok(Datum::Null);
            };
            let mut parts = Vec::new();
            for a in &args[1..] {
                if let Some(t) = text(&a.eval(env, w)?) {
                    parts.push(t);
                }
            }
            return Ok(s(parts.join(&sep)));
        }
        Func::Rand => return Ok(Datum::Double(rand::random::<f64>())),
        Func::Json(j) => {
            let v = args
                .iter()
                .map(|a| a.eval(env, w))
                .collect::<Result<Vec<_>, _>>()?;
            return super::json::call(j, &v, w);
        }
        Func::B(b) if b.sees_nulls() => {
            let v = args
                .iter()
                .map(|a| a.eval(env, w))
                .collect::<Result<Vec<_>, _>>()?;
            return builtins::call(b, &v, w);
        }
        _ => {}
    }
    let mut v = Vec::with_capacity(args.len());
    for a in args {
        let d = a.eval(env, w)?;
        if d.is_null() {
            return Ok(Datum::Null);
        }
        v.push(d);
    }
    let t = |i: usize| text(&v[i]).unwrap_or_default();
    let int = |i: usize, w: &mut Warnings| v[i].to_i64(w);
    Ok(match f {
        Func::Concat => {
            let mut out = Vec::new();
            for d in &v {
                out.extend(d.to_text().unwrap_or_default());
            }
            Datum::Bytes(out)
        }
        Func::Lower => s(t(0).to_lowercase()),
        Func::Upper => s(t(0).to_uppercase()),
        Func::Length => Datum::Int(v[0].to_text().map_or(0, |b| b.len()) as i64),
        Func::Latin1Bytes => Datum::Bytes(types::utf8_to_latin1(&v[0].to_bytes()).0),
        Func::CharLength => Datum::Int(t(0).chars().count() as i64),
        Func::Substring => {
            let chars: Vec<char> = t(0).chars().collect();
            let pos = int(1, w);
            let len = if v.len() > 2 { int(2, w) } else { i64::MAX };
            let n = chars.len() as i64;
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                n
            };
            if start < 0 || start >= n || len <= 0 {
                s(String::new())
            } else {
                let end = start.saturating_add(len).min(n);
                s(chars[start as usize..end as usize].iter().collect())
            }
        }
        Func::Left => {
            let n = int(1, w).max(0) as usize;
            s(t(0).chars().take(n).collect())
        }
        Func::Right => {
            let c: Vec<char> = t(0).chars().collect();
            let n = (int(1, w).max(0) as usize).min(c.len());
            s(c[c.len() - n..].iter().collect())
        }
        Func::Trim => {
            if v.len() == 2 {
                let (x, r) = (t(0), t(1));
                let mut x = x.as_str();
                if !r.is_empty() {
                    while let Some(y) = x.strip_prefix(r.as_str()) {
                        x = y;
                    }
                    while let Some(y) = x.strip_suffix(r.as_str()) {
                        x = y;
                    }
                }
                s(x.to_string())
            } else {
                s(t(0).trim_matches(' ').to_string())
            }
        }
        // TRIM(LEADING r FROM s) and TRIM(TRAILING r FROM s) arrive as LTRIM/RTRIM(s, r).
        Func::Ltrim | Func::Rtrim => {
            let r = if v.len() == 2 { t(1) } else { " ".to_string() };
            let x = t(0);
            let mut x = x.as_str();
            while !r.is_empty() {
                let next = if f == Func::Ltrim {
                    x.strip_prefix(r.as_str())
                } else {
                    x.strip_suffix(r.as_str())
                };
                match next {
                    Some(y) => x = y,
                    None => break,
                }
            }
            s(x.to_string())
        }
        Func::Replace => {
            let from = t(1);
            if from.is_empty() {
                s(t(0))
            } else {
                s(t(0).replace(&from, &t(2)))
            }
        }
        Func::Repeat => {
            let n = int(1, w).clamp(0, 1 << 20) as usize;
            s(t(0).repeat(n))
        }
        Func::Reverse => s(t(0).chars().rev().collect()),
        Func::Lpad | Func::Rpad => {
            let x: Vec<char> = t(0).chars().collect();
            let n = int(1, w);
            let pad: Vec<char> = t(2).chars().collect();
            if n < 0 {
                return Ok(Datum::Null);
            }
            let n = (n as usize).min(1 << 24);
            if x.len() >= n {
                s(x[..n].iter().collect())
            } else if pad.is_empty() {
                Datum::Null
            } else {
                let fill: String = pad.iter().cycle().take(n - x.len()).collect();
                let x: String = x.iter().collect();
                s(if f == Func::Lpad {
                    fill + &x
                } else {
                    x + &fill
                })
            }
        }
        Func::Instr | Func::Locate => {
            let (hay, needle) = if f == Func::Instr {
                (t(0), t(1))
            } else {
                (t(1), t(0))
            };
            let start = if v.len() > 2 {
                int(2, w).max(1) as usize - 1
            } else {
                0
            };
            let (h, nd) = (hay.to_lowercase(), needle.to_lowercase());
            let hc: Vec<char> = h.chars().collect();
            let skip: String = hc.iter().skip(start).collect();
            match skip.find(&nd) {
                Some(b) => Datum::Int((skip[..b].chars().count() + start + 1) as i64),
                None => Datum::Int(0),
            }
        }
        Func::Hex => match &v[0] {
            Datum::Int(_) | Datum::UInt(_) => s(format!("{:X}", v[0].to_u64(w))),
            d => s(d
                .to_text()
                .unwrap_or_default()
                .iter()
                .map(|b| format!("{b:02X}"))
                .collect()),
        },
        Func::Abs => match &v[0] {
            Datum::Int(i) => match i.checked_abs() {
                Some(x) => Datum::Int(x),
                None => Datum::UInt(i.unsigned_abs()),
            },
            Datum::UInt(u) => Datum::UInt(*u),
            d => {
                let zero = Datum::Int(0);
                if d.compare(&zero, Collation::Binary) == Some(Ordering::Less) {
                    types::neg(d, w)?
                } else {
                    d.clone()
                }
            }
        },
        Func::Round | Func::Truncate => {
            let places = if v.len() > 1 { int(1, w) } else { 0 };
            types::round(&v[0], places, f == Func::Truncate, w)
        }
        Func::Floor | Func::Ceil => {
            let x = v[0].to_f64(w);
            let r = if f == Func::Floor {
                x.floor()
            } else {
                x.ceil()
            };
            match &v[0] {
                Datum::Int(_) | Datum::UInt(_) => v[0].clone(),
                Datum::Double(_) | Datum::Bytes(_) => Datum::Double(r),
                _ => Datum::Int(r as i64),
            }
        }
        Func::Mod => types::rem(&v[0], &v[1], env.mode, w)?,
        Func::Sign => {
            let x = v[0].to_f64(w);
            Datum::Int(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            })
        }
        Func::Sqrt => {
            let x = v[0].to_f64(w);
            if x < 0.0 {
                Datum::Null
            } else {
                Datum::Double(x.sqrt())
            }
        }
        Func::Pow => Datum::Double(v[0].to_f64(w).powf(v[1].to_f64(w))),
        Func::Greatest | Func::Least => {
            let mut best = v[0].clone();
            for d in &v[1..] {
                let o = d.compare(&best, Collation::Utf8mb40900AiCi);
                let better = if f == Func::Greatest {
                    o == Some(Ordering::Greater)
                } else {
                    o == Some(Ordering::Less)
                };
                if better {
                    best = d.clone();
                }
            }
            best
        }
        // The argument is in the session's time zone.
        Func::UnixTimestamp => match types::to_datetime(&v[0], w) {
            Some(dt) => Datum::Int(types::session_local_to_utc(dt.unix_seconds())),
            None => Datum::Null,
        },
        Func::Date => match types::to_datetime(&v[0], w) {
            Some(dt) => Datum::Date(dt.date),
            None => Datum::Null,
        },
        Func::Year | Func::Month | Func::Day => match types::to_datetime(&v[0], w) {
            Some(dt) => Datum::Int(i64::from(match f {
                Func::Year => u32::from(dt.date.year),
                Func::Month => u32::from(dt.date.month),
                _ => u32::from(dt.date.day),
            })),
            None => Datum::Null,
        },
        Func::DateAdd(unit) | Func::DateSub(unit) => {
            let Some(dt) = types::to_datetime(&v[0], w) else {
                return Ok(Datum::Null);
            };
            let mut n = int(1, w);
            if matches!(f, Func::DateSub(_)) {
                n = n.saturating_neg();
            }
            let Some(r) = types::add_interval(&dt, n, unit) else {
                return Ok(Datum::Null);
            };
            // A DATE (or a string holding only a date) plus days or more stays a date.
            let date_only = match &v[0] {
                Datum::Date(_) => true,
                Datum::Bytes(b) => types::parse_datetime(b).is_some_and(|(_, time)| !time),
                _ => false,
            };
            if date_only && super::expr::date_unit(unit) {
                Datum::Date(r.date)
            } else {
                Datum::DateTime(r)
            }
        }
        Func::DateDiff => match (types::to_datetime(&v[0], w), types::to_datetime(&v[1], w)) {
            (Some(a), Some(b)) => Datum::Int(a.date.day_number() - b.date.day_number()),
            _ => Datum::Null,
        },
        Func::IfNull | Func::Coalesce | Func::If | Func::NullIf | Func::ConcatWs | Func::Rand => {
            Datum::Null
        }
        Func::EnumIndex => {
            let x = v[0].to_text().unwrap_or_default();
            let i = v[1..]
                .iter()
                .position(|e| e.to_text().is_some_and(|e| e == x))
                .map_or(0, |i| i as u64 + 1);
            Datum::UInt(i)
        }
        Func::Md5 => {
            let b = v[0].to_text().unwrap_or_default();
            s(md5(&b).iter().map(|x| format!("{x:02x}")).collect())
        }
        Func::B(b) => builtins::call(b, &v, w)?,
        // Handled with the functions that see NULLs, above.
        Func::Json(j) => super::json::call(j, &v, w)?,
    })
}

/// MD5 (RFC 1321) of `data`.
fn md5(data: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    // K[i] = floor(abs(sin(i + 1)) * 2^32).
    let k: Vec<u32> = (0..64)
        .map(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32)
        .collect();
    let mut h: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_le_bytes());
    for chunk in msg.chunks_exact(64) {
        let m: Vec<u32> = chunk
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let [mut a, mut b, mut c, mut d] = h;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        h = [
            h[0].wrapping_add(a),
            h[1].wrapping_add(b),
            h[2].wrapping_add(c),
            h[3].wrapping_add(d),
        ];
    }
    let mut out = [0u8; 16];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::md5;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn md5_matches_rfc_1321_vectors() {
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&md5(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            )),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }
}
