//! Values of the binary protocol: statement parameters (decoded from COM_STMT_EXECUTE) and
//! cells of binary result rows (encoded), which share one representation, [`Value`].
//!
//! Owns the per-type wire forms: integers of 1/2/4/8 bytes by type, FLOAT/DOUBLE as IEEE
//! little-endian, length-encoded bytes for strings/decimals/blobs/bit/json/geometry, and the
//! compact temporal forms (DATE/DATETIME/TIMESTAMP in 0/4/7/11 bytes, TIME in 0/8/12 bytes).
//!
//! Invariants: decoding reads only from a [`Reader`] (bounded by the payload); encoding writes
//! the shortest temporal form that represents the value exactly; a value that does not fit its
//! column type is an error, never silently converted.

use crate::consts::*;
use crate::packet::{put_lenenc_bytes, Reader};
use crate::{ProtocolError, Result};

/// The type of a statement parameter as sent in COM_STMT_EXECUTE (type code plus the
/// unsigned flag, 0x80 in the flags byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    pub code: u8,
    pub unsigned: bool,
}

/// A binary-protocol value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    /// Strings, DECIMAL text, blobs, BIT, JSON, GEOMETRY, ENUM/SET: the raw bytes.
    Bytes(Vec<u8>),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
    Time {
        negative: bool,
        days: u32,
        hours: u8,
        minutes: u8,
        seconds: u8,
        micros: u32,
    },
}

/// A statement parameter value.
pub type ParamValue = Value;
/// A binary result row cell.
pub type BinValue = Value;

pub fn is_lenenc_type(code: u8) -> bool {
    matches!(
        code,
        MYSQL_TYPE_DECIMAL
            | MYSQL_TYPE_NEWDECIMAL
            | MYSQL_TYPE_VARCHAR
            | MYSQL_TYPE_VAR_STRING
            | MYSQL_TYPE_STRING
            | MYSQL_TYPE_ENUM
            | MYSQL_TYPE_SET
            | MYSQL_TYPE_TINY_BLOB
            | MYSQL_TYPE_MEDIUM_BLOB
            | MYSQL_TYPE_LONG_BLOB
            | MYSQL_TYPE_BLOB
            | MYSQL_TYPE_BIT
            | MYSQL_TYPE_JSON
            | MYSQL_TYPE_GEOMETRY
    )
}

/// Width in bytes of an integer type, or None.
fn int_width(code: u8) -> Option<usize> {
    match code {
        MYSQL_TYPE_TINY => Some(1),
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => Some(2),
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => Some(4),
        MYSQL_TYPE_LONGLONG => Some(8),
        _ => None,
    }
}

/// Decodes one non-NULL parameter value of type `ty`.
pub fn decode_param(r: &mut Reader<'_>, ty: ParamType) -> Result<Value> {
    if let Some(width) = int_width(ty.code) {
        let mut b = [0u8; 8];
        b[..width].copy_from_slice(r.take(width)?);
        let raw = u64::from_le_bytes(b);
        return Ok(if ty.unsigned {
            Value::UInt(raw)
        } else {
            // Sign-extend from `width` bytes.
            let shift = 64 - 8 * width as u32;
            Value::Int(((raw << shift) as i64) >> shift)
        });
    }
    if is_lenenc_type(ty.code) {
        return Ok(Value::Bytes(r.lenenc_bytes()?.to_vec()));
    }
    match ty.code {
        MYSQL_TYPE_NULL => Ok(Value::Null),
        MYSQL_TYPE_FLOAT => Ok(Value::Float(f32::from_le_bytes(r.array()?))),
        MYSQL_TYPE_DOUBLE => Ok(Value::Double(f64::from_le_bytes(r.array()?))),
        MYSQL_TYPE_DATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP => {
            decode_datetime(r, ty.code == MYSQL_TYPE_DATE)
        }
        MYSQL_TYPE_TIME => decode_time(r),
        _ => Err(ProtocolError::Malformed("unknown parameter type")),
    }
}

fn decode_datetime(r: &mut Reader<'_>, date_only: bool) -> Result<Value> {
    let len = r.u8()?;
    if !matches!(len, 0 | 4 | 7 | 11) {
        return Err(ProtocolError::Malformed("bad DATETIME length"));
    }
    let mut b = Reader::new(r.take(usize::from(len))?);
    let (year, month, day) = if len >= 4 {
        (b.u16()?, b.u8()?, b.u8()?)
    } else {
        (0, 0, 0)
    };
    if date_only && len <= 4 {
        return Ok(Value::Date { year, month, day });
    }
    let (hour, minute, second) = if len >= 7 {
        (b.u8()?, b.u8()?, b.u8()?)
    } else {
        (0, 0, 0)
    };
    let micros = if len == 11 { b.u32()? } else { 0 };
    Ok(Value::DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
        micros,
    })
}

fn decode_time(r: &mut Reader<'_>) -> Result<Value> {
    let len = r.u8()?;
    if !matches!(len, 0 | 8 | 12) {
        return Err(ProtocolError::Malformed("bad TIME length"));
    }
    let mut b = Reader::new(r.take(usize::from(len))?);
    if len == 0 {
        return Ok(Value::Time {
            negative: false,
            days: 0,
            hours: 0,
            minutes: 0,
            seconds: 0,
            micros: 0,
        });
    }
    Ok(Value::Time {
        negative: b.u8()? != 0,
        days: b.u32()?,
        hours: b.u8()?,
        minutes: b.u8()?,
        seconds: b.u8()?,
        micros: if len == 12 { b.u32()? } else { 0 },
    })
}

/// Appends the binary form of a non-NULL `value` in a column of type `column_type`.
/// NULLs belong in the row's NULL bitmap, so `Value::Null` is an error here.
pub fn encode_binary(out: &mut Vec<u8>, column_type: u8, value: &Value) -> Result<()> {
    const MISMATCH: ProtocolError =
        ProtocolError::Malformed("value does not match its column type");
    if let Some(width) = int_width(column_type) {
        let raw = match value {
            Value::Int(v) => v.to_le_bytes(),
            Value::UInt(v) => v.to_le_bytes(),
            _ => return Err(MISMATCH),
        };
        out.extend_from_slice(&raw[..width]);
        return Ok(());
    }
    if is_lenenc_type(column_type) {
        let Value::Bytes(b) = value else {
            return Err(MISMATCH);
        };
        put_lenenc_bytes(out, b);
        return Ok(());
    }
    match (column_type, value) {
        (MYSQL_TYPE_FLOAT, Value::Float(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (MYSQL_TYPE_DOUBLE, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (MYSQL_TYPE_DOUBLE, Value::Float(v)) => out.extend_from_slice(&f64::from(*v).to_le_bytes()),
        (
            MYSQL_TYPE_DATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP,
            &Value::Date { year, month, day },
        ) => put_datetime(out, year, [month, day, 0, 0, 0], 0),
        (
            MYSQL_TYPE_DATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP,
            &Value::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            },
        ) => put_datetime(out, year, [month, day, hour, minute, second], micros),
        (
            MYSQL_TYPE_TIME,
            &Value::Time {
                negative,
                days,
                hours,
                minutes,
                seconds,
                micros,
            },
        ) => {
            if !negative && days == 0 && hours == 0 && minutes == 0 && seconds == 0 && micros == 0 {
                out.push(0);
            } else {
                out.push(if micros == 0 { 8 } else { 12 });
                out.push(u8::from(negative));
                out.extend_from_slice(&days.to_le_bytes());
                out.extend_from_slice(&[hours, minutes, seconds]);
                if micros != 0 {
                    out.extend_from_slice(&micros.to_le_bytes());
                }
            }
        }
        _ => return Err(MISMATCH),
    }
    Ok(())
}

/// The shortest of the 0/4/7/11-byte forms of a date and time.
fn put_datetime(out: &mut Vec<u8>, year: u16, mdhms: [u8; 5], micros: u32) {
    let [month, day, hour, minute, second] = mdhms;
    let len: u8 = if micros != 0 {
        11
    } else if hour != 0 || minute != 0 || second != 0 {
        7
    } else if year != 0 || month != 0 || day != 0 {
        4
    } else {
        0
    };
    out.push(len);
    if len >= 4 {
        out.extend_from_slice(&year.to_le_bytes());
        out.extend_from_slice(&[month, day]);
    }
    if len >= 7 {
        out.extend_from_slice(&[hour, minute, second]);
    }
    if len == 11 {
        out.extend_from_slice(&micros.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(ty: u8, v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_binary(&mut out, ty, v).unwrap();
        out
    }

    fn dec(ty: u8, unsigned: bool, b: &[u8]) -> Value {
        let mut r = Reader::new(b);
        let v = decode_param(&mut r, ParamType { code: ty, unsigned }).unwrap();
        assert!(r.is_empty());
        v
    }

    #[test]
    fn integers() {
        assert_eq!(enc(MYSQL_TYPE_TINY, &Value::Int(-2)), [0xFE]);
        assert_eq!(enc(MYSQL_TYPE_TINY, &Value::UInt(200)), [200]);
        assert_eq!(enc(MYSQL_TYPE_SHORT, &Value::Int(-2)), [0xFE, 0xFF]);
        assert_eq!(
            enc(MYSQL_TYPE_YEAR, &Value::UInt(2024)),
            2024u16.to_le_bytes()
        );
        assert_eq!(enc(MYSQL_TYPE_LONG, &Value::Int(-3)), (-3i32).to_le_bytes());
        assert_eq!(
            enc(MYSQL_TYPE_INT24, &Value::Int(70000)),
            70000i32.to_le_bytes()
        );
        assert_eq!(enc(MYSQL_TYPE_LONGLONG, &Value::UInt(u64::MAX)), [0xFF; 8]);
        assert_eq!(dec(MYSQL_TYPE_TINY, false, &[0xFE]), Value::Int(-2));
        assert_eq!(dec(MYSQL_TYPE_TINY, true, &[0xFE]), Value::UInt(254));
        assert_eq!(
            dec(MYSQL_TYPE_SHORT, false, &[0x00, 0x80]),
            Value::Int(-32768)
        );
        assert_eq!(
            dec(MYSQL_TYPE_LONG, false, &(-5i32).to_le_bytes()),
            Value::Int(-5)
        );
        assert_eq!(
            dec(MYSQL_TYPE_LONGLONG, false, &i64::MIN.to_le_bytes()),
            Value::Int(i64::MIN)
        );
        assert_eq!(
            dec(MYSQL_TYPE_LONGLONG, true, &u64::MAX.to_le_bytes()),
            Value::UInt(u64::MAX)
        );
    }

    #[test]
    fn floats_and_bytes() {
        assert_eq!(
            enc(MYSQL_TYPE_FLOAT, &Value::Float(1.5)),
            1.5f32.to_le_bytes()
        );
        assert_eq!(
            enc(MYSQL_TYPE_DOUBLE, &Value::Double(-2.25)),
            (-2.25f64).to_le_bytes()
        );
        assert_eq!(
            dec(MYSQL_TYPE_DOUBLE, false, &0.5f64.to_le_bytes()),
            Value::Double(0.5)
        );
        assert_eq!(
            dec(MYSQL_TYPE_FLOAT, false, &0.5f32.to_le_bytes()),
            Value::Float(0.5)
        );
        for ty in [
            MYSQL_TYPE_VAR_STRING,
            MYSQL_TYPE_NEWDECIMAL,
            MYSQL_TYPE_BLOB,
            MYSQL_TYPE_JSON,
        ] {
            assert_eq!(enc(ty, &Value::Bytes(b"12.50".to_vec())), b"\x0512.50");
            assert_eq!(
                dec(ty, false, b"\x0512.50"),
                Value::Bytes(b"12.50".to_vec())
            );
        }
        let long = vec![b'x'; 300];
        let e = enc(MYSQL_TYPE_STRING, &Value::Bytes(long.clone()));
        assert_eq!(&e[..3], &[0xFC, 0x2C, 0x01]);
        assert_eq!(dec(MYSQL_TYPE_STRING, false, &e), Value::Bytes(long));
        assert_eq!(dec(MYSQL_TYPE_NULL, false, &[]), Value::Null);
    }

    #[test]
    fn temporal() {
        let zero = Value::DateTime {
            year: 0,
            month: 0,
            day: 0,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        };
        assert_eq!(enc(MYSQL_TYPE_DATETIME, &zero), [0]);
        let date = Value::Date {
            year: 2024,
            month: 2,
            day: 29,
        };
        assert_eq!(enc(MYSQL_TYPE_DATE, &date), [4, 0xE8, 0x07, 2, 29]);
        assert_eq!(dec(MYSQL_TYPE_DATE, false, &[4, 0xE8, 0x07, 2, 29]), date);
        assert_eq!(
            dec(MYSQL_TYPE_DATE, false, &[0]),
            Value::Date {
                year: 0,
                month: 0,
                day: 0
            }
        );
        let dt = Value::DateTime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 13,
            minute: 14,
            second: 15,
            micros: 0,
        };
        let e = enc(MYSQL_TYPE_TIMESTAMP, &dt);
        assert_eq!(e, [7, 0xE8, 0x07, 2, 29, 13, 14, 15]);
        assert_eq!(dec(MYSQL_TYPE_TIMESTAMP, false, &e), dt);
        let dtu = Value::DateTime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 1,
        };
        let e = enc(MYSQL_TYPE_DATETIME, &dtu);
        assert_eq!(e, [11, 0xE8, 0x07, 2, 29, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(dec(MYSQL_TYPE_DATETIME, false, &e), dtu);
        // A DATETIME parameter of 4 bytes is still a DateTime.
        assert!(matches!(
            dec(MYSQL_TYPE_DATETIME, false, &[4, 0xE8, 0x07, 2, 29]),
            Value::DateTime { hour: 0, .. }
        ));

        let t0 = Value::Time {
            negative: false,
            days: 0,
            hours: 0,
            minutes: 0,
            seconds: 0,
            micros: 0,
        };
        assert_eq!(enc(MYSQL_TYPE_TIME, &t0), [0]);
        assert_eq!(dec(MYSQL_TYPE_TIME, false, &[0]), t0);
        let t = Value::Time {
            negative: true,
            days: 1,
            hours: 2,
            minutes: 3,
            seconds: 4,
            micros: 0,
        };
        let e = enc(MYSQL_TYPE_TIME, &t);
        assert_eq!(e, [8, 1, 1, 0, 0, 0, 2, 3, 4]);
        assert_eq!(dec(MYSQL_TYPE_TIME, false, &e), t);
        let tu = Value::Time {
            negative: false,
            days: 0,
            hours: 0,
            minutes: 0,
            seconds: 0,
            micros: 999_999,
        };
        let e = enc(MYSQL_TYPE_TIME, &tu);
        assert_eq!(e.len(), 13);
        assert_eq!(dec(MYSQL_TYPE_TIME, false, &e), tu);
    }

    #[test]
    fn mismatches_and_bad_input_are_errors() {
        let mut out = Vec::new();
        assert!(encode_binary(&mut out, MYSQL_TYPE_LONG, &Value::Bytes(vec![])).is_err());
        assert!(encode_binary(&mut out, MYSQL_TYPE_VAR_STRING, &Value::Int(1)).is_err());
        assert!(encode_binary(&mut out, MYSQL_TYPE_LONG, &Value::Null).is_err());
        assert!(encode_binary(&mut out, MYSQL_TYPE_TIME, &Value::Double(1.0)).is_err());
        let p = |code| ParamType {
            code,
            unsigned: false,
        };
        assert!(decode_param(&mut Reader::new(&[5, 0, 0, 0, 0, 0]), p(MYSQL_TYPE_DATE)).is_err());
        assert!(decode_param(&mut Reader::new(&[7, 0]), p(MYSQL_TYPE_TIME)).is_err());
        assert!(decode_param(&mut Reader::new(&[0]), p(MYSQL_TYPE_TIME2)).is_err());
        assert!(decode_param(&mut Reader::new(&[1, 2, 3]), p(MYSQL_TYPE_LONG)).is_err());
    }
}
