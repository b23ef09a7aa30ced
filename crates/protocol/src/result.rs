//! Response encoding: OK, ERR and EOF payloads, column definitions, the column count, text and
//! binary result rows, and COM_STMT_PREPARE_OK. Every function builds one payload; the caller
//! frames it with [`crate::write_packets`] or [`crate::write_packet_with`].
//!
//! Invariants: the OK packet carries `info` as a trailing string (CLIENT_SESSION_TRACK is never
//! advertised, so no session-state block); a result-set terminator is a 0xFE-headed OK packet
//! when CLIENT_DEPRECATE_EOF was negotiated and the classic 5-byte EOF otherwise; status flags
//! are always the caller's (nothing here hard-wires them). The `_into` variants append to a
//! buffer and leave it unchanged on error.

use crate::packet::{put_lenenc_bytes, put_lenenc_int};
use crate::value::{encode_binary, Value};
use crate::{ProtocolError, Result};

/// OK packet (header 0x00).
pub fn ok_packet(
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + info.len());
    out.push(0x00);
    put_lenenc_int(&mut out, affected_rows);
    put_lenenc_int(&mut out, last_insert_id);
    out.extend_from_slice(&status.to_le_bytes());
    out.extend_from_slice(&warnings.to_le_bytes());
    // mysqld writes the message length-encoded (net_store_data) even without SESSION_TRACK,
    // and libmariadb reads it that way.
    if !info.is_empty() {
        put_lenenc_bytes(&mut out, info.as_bytes());
    }
    out
}

/// Terminator of a block of rows: with `deprecate_eof` an OK packet with header 0xFE,
/// otherwise the EOF packet (0xFE, warnings, status). Without DEPRECATE_EOF an EOF (this with
/// `false`) also follows every block of column or parameter definitions; with it, nothing
/// follows them.
pub fn eof_or_ok_terminator(status: u16, warnings: u16, deprecate_eof: bool) -> Vec<u8> {
    let (s, w) = (status.to_le_bytes(), warnings.to_le_bytes());
    if deprecate_eof {
        vec![0xFE, 0, 0, s[0], s[1], w[0], w[1]]
    } else {
        vec![0xFE, w[0], w[1], s[0], s[1]]
    }
}

/// ERR packet: 0xFF, code, '#', a 5-character SQLSTATE (padded/cut to 5), message.
pub fn err_packet(code: u16, sqlstate: &str, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + message.len());
    out.push(0xFF);
    out.extend_from_slice(&code.to_le_bytes());
    out.push(b'#');
    let mut state = *b"HY000";
    for (d, s) in state.iter_mut().zip(sqlstate.bytes()) {
        *d = s;
    }
    out.extend_from_slice(&state);
    out.extend_from_slice(message.as_bytes());
    out
}

/// ERR packet reporting a decoding error (see [`ProtocolError::mysql_error`]).
pub fn err_packet_for(e: &ProtocolError) -> Vec<u8> {
    let (code, state) = e.mysql_error();
    err_packet(code, state, &e.to_string())
}

/// A column definition (Protocol::ColumnDefinition41).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnDef {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    /// Collation id: a text collation for strings, 63 (binary) for numbers and binary data.
    pub charset: u16,
    /// Maximum display length in bytes.
    pub length: u32,
    /// MYSQL_TYPE_*.
    pub column_type: u8,
    /// *_FLAG bits.
    pub flags: u16,
    pub decimals: u8,
}

impl ColumnDef {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.reserve(32 + self.schema.len() + self.table.len() * 2 + self.name.len() * 2);
        put_lenenc_bytes(out, b"def");
        put_lenenc_bytes(out, self.schema.as_bytes());
        put_lenenc_bytes(out, self.table.as_bytes());
        put_lenenc_bytes(out, self.org_table.as_bytes());
        put_lenenc_bytes(out, self.name.as_bytes());
        put_lenenc_bytes(out, self.org_name.as_bytes());
        out.push(0x0C);
        out.extend_from_slice(&self.charset.to_le_bytes());
        out.extend_from_slice(&self.length.to_le_bytes());
        out.push(self.column_type);
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(self.decimals);
        out.extend_from_slice(&[0, 0]);
    }

    /// The COM_FIELD_LIST form: the definition followed by the column's default value
    /// (length-encoded, 0xFB for none), which libmariadb reads as an eighth field.
    pub fn encode_with_default(&self, default: Option<&[u8]>) -> Vec<u8> {
        let mut out = self.encode();
        match default {
            Some(d) => put_lenenc_bytes(&mut out, d),
            None => out.push(0xFB),
        }
        out
    }
}

/// The first packet of a result set: the number of columns.
pub fn column_count(n: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(9);
    put_lenenc_int(&mut out, n);
    out
}

/// A text-protocol row: each value length-encoded, NULL as 0xFB.
pub fn text_row(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = Vec::new();
    text_row_into(&mut out, values);
    out
}

pub fn text_row_into(out: &mut Vec<u8>, values: &[Option<&[u8]>]) {
    out.reserve(values.iter().map(|v| v.map_or(1, |b| b.len() + 9)).sum());
    for v in values {
        match v {
            Some(b) => put_lenenc_bytes(out, b),
            None => out.push(0xFB),
        }
    }
}

/// A binary-protocol row: 0x00, the NULL bitmap (bit i+2 for column i), then each non-NULL
/// value in its column type's binary form. Errors if the counts differ or a value does not
/// fit its column's type.
pub fn binary_row(columns: &[ColumnDef], values: &[Value]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    binary_row_into(&mut out, columns, values)?;
    Ok(out)
}

pub fn binary_row_into(out: &mut Vec<u8>, columns: &[ColumnDef], values: &[Value]) -> Result<()> {
    if columns.len() != values.len() {
        return Err(ProtocolError::Malformed("row and column counts differ"));
    }
    let start = out.len();
    let bitmap = binary_row_begin(out, values.len());
    for (i, (col, v)) in columns.iter().zip(values).enumerate() {
        if let Value::Null = v {
            binary_row_null(out, bitmap, i);
        } else if let Err(e) = encode_binary(out, col.column_type, v) {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

/// Starts a binary-protocol row of `n` columns at the end of `out` (the 0x00 header and an
/// all-clear NULL bitmap); returns where the bitmap is, for `binary_row_null`. The values
/// follow, each encoded with `value::encode_binary` (or as length-encoded bytes).
pub fn binary_row_begin(out: &mut Vec<u8>, n: usize) -> usize {
    out.push(0x00);
    let bitmap = out.len();
    out.resize(bitmap + (n + 9) / 8, 0);
    bitmap
}

/// Marks column `i` NULL in the binary row whose bitmap starts at `bitmap`.
pub fn binary_row_null(out: &mut [u8], bitmap: usize, i: usize) {
    out[bitmap + (i + 2) / 8] |= 1 << ((i + 2) % 8);
}

/// COM_STMT_PREPARE_OK. The server then sends `n_params` parameter definitions and
/// `n_columns` column definitions, each non-empty block followed by an EOF packet unless
/// DEPRECATE_EOF was negotiated.
pub fn stmt_prepare_ok(stmt_id: u32, n_columns: u16, n_params: u16, warnings: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    out.push(0x00);
    out.extend_from_slice(&stmt_id.to_le_bytes());
    out.extend_from_slice(&n_columns.to_le_bytes());
    out.extend_from_slice(&n_params.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&warnings.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::*;
    use crate::packet::Reader;

    #[test]
    fn ok_eof_err() {
        assert_eq!(
            ok_packet(1, 300, SERVER_STATUS_AUTOCOMMIT, 2, ""),
            [0, 1, 0xFC, 0x2C, 0x01, 2, 0, 2, 0]
        );
        assert_eq!(
            ok_packet(0, 0, SERVER_STATUS_IN_TRANS, 0, "Rows matched: 1"),
            b"\x00\x00\x00\x01\x00\x00\x00\x0fRows matched: 1"
        );
        let st = SERVER_STATUS_AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS;
        assert_eq!(eof_or_ok_terminator(st, 1, false), [0xFE, 1, 0, 10, 0]);
        assert_eq!(eof_or_ok_terminator(st, 1, true), [0xFE, 0, 0, 10, 0, 1, 0]);
        assert_eq!(
            err_packet(1213, "40001", "Deadlock found"),
            b"\xFF\xBD\x04#40001Deadlock found"
        );
        assert_eq!(err_packet(1, "42", "x"), b"\xFF\x01\x00#42000x");
        let e = err_packet_for(&ProtocolError::PacketTooLarge { len: 2, max: 1 });
        assert_eq!(&e[..9], b"\xFF\x81\x04#08S01");
    }

    #[test]
    fn column_definition() {
        let c = ColumnDef {
            schema: "db".into(),
            table: "t".into(),
            org_table: "sbtest1".into(),
            name: "id".into(),
            org_name: "id".into(),
            charset: u16::from(CHARSET_BINARY),
            length: 11,
            column_type: MYSQL_TYPE_LONG,
            flags: NOT_NULL_FLAG | PRI_KEY_FLAG | AUTO_INCREMENT_FLAG | NUM_FLAG,
            decimals: 0,
        };
        let e = c.encode();
        let mut r = Reader::new(&e);
        for s in ["def", "db", "t", "sbtest1", "id", "id"] {
            assert_eq!(r.lenenc_bytes().unwrap(), s.as_bytes());
        }
        assert_eq!(r.u8().unwrap(), 0x0C);
        assert_eq!(r.u16().unwrap(), 63);
        assert_eq!(r.u32().unwrap(), 11);
        assert_eq!(r.u8().unwrap(), MYSQL_TYPE_LONG);
        assert_eq!(r.u16().unwrap(), c.flags);
        assert_eq!(r.u8().unwrap(), 0);
        assert_eq!(r.u16().unwrap(), 0);
        assert!(r.is_empty());
        assert_eq!(c.encode_with_default(None).last(), Some(&0xFB));
        assert!(c.encode_with_default(Some(b"0")).ends_with(&[1, b'0']));
        assert_eq!(column_count(3), [3]);
        assert_eq!(column_count(300), [0xFC, 0x2C, 0x01]);
    }

    #[test]
    fn text_rows() {
        assert_eq!(text_row(&[Some(b"1"), None, Some(b"")]), [1, b'1', 0xFB, 0]);
    }

    fn col(t: u8) -> ColumnDef {
        ColumnDef {
            column_type: t,
            ..ColumnDef::default()
        }
    }

    #[test]
    fn binary_rows() {
        let cols: Vec<ColumnDef> = [
            MYSQL_TYPE_TINY,
            MYSQL_TYPE_SHORT,
            MYSQL_TYPE_YEAR,
            MYSQL_TYPE_LONG,
            MYSQL_TYPE_INT24,
            MYSQL_TYPE_LONGLONG,
            MYSQL_TYPE_FLOAT,
            MYSQL_TYPE_DOUBLE,
            MYSQL_TYPE_NEWDECIMAL,
            MYSQL_TYPE_VAR_STRING,
            MYSQL_TYPE_BLOB,
            MYSQL_TYPE_DATE,
            MYSQL_TYPE_DATETIME,
            MYSQL_TYPE_TIMESTAMP,
            MYSQL_TYPE_TIME,
            MYSQL_TYPE_VAR_STRING,
        ]
        .into_iter()
        .map(col)
        .collect();
        let values = vec![
            Value::Int(-1),
            Value::Int(-2),
            Value::UInt(2024),
            Value::Int(3),
            Value::Int(4),
            Value::UInt(5),
            Value::Float(1.5),
            Value::Double(2.5),
            Value::Bytes(b"3.14".to_vec()),
            Value::Bytes(b"abc".to_vec()),
            Value::Null,
            Value::Date {
                year: 2000,
                month: 1,
                day: 2,
            },
            Value::DateTime {
                year: 2000,
                month: 1,
                day: 2,
                hour: 3,
                minute: 4,
                second: 5,
                micros: 6,
            },
            Value::DateTime {
                year: 2000,
                month: 1,
                day: 2,
                hour: 0,
                minute: 0,
                second: 0,
                micros: 0,
            },
            Value::Time {
                negative: false,
                days: 0,
                hours: 1,
                minutes: 2,
                seconds: 3,
                micros: 0,
            },
            Value::Null,
        ];
        let row = binary_row(&cols, &values).unwrap();
        let mut expected = vec![0x00];
        // 16 columns + 2 offset bits: 3 bytes; NULLs at columns 10 and 15 (bits 12 and 17).
        expected.extend_from_slice(&[0, 1 << 4, 1 << 1]);
        expected.push(0xFF);
        expected.extend_from_slice(&(-2i16).to_le_bytes());
        expected.extend_from_slice(&2024u16.to_le_bytes());
        expected.extend_from_slice(&3i32.to_le_bytes());
        expected.extend_from_slice(&4i32.to_le_bytes());
        expected.extend_from_slice(&5u64.to_le_bytes());
        expected.extend_from_slice(&1.5f32.to_le_bytes());
        expected.extend_from_slice(&2.5f64.to_le_bytes());
        expected.extend_from_slice(b"\x043.14\x03abc");
        expected.extend_from_slice(&[4, 0xD0, 0x07, 1, 2]);
        expected.extend_from_slice(&[11, 0xD0, 0x07, 1, 2, 3, 4, 5, 6, 0, 0, 0]);
        expected.extend_from_slice(&[4, 0xD0, 0x07, 1, 2]);
        expected.extend_from_slice(&[8, 0, 0, 0, 0, 0, 1, 2, 3]);
        assert_eq!(row, expected);

        // Bitmap size: 1 column -> 1 byte, 6 columns -> 1 byte, 7 -> 2.
        for (n, bytes) in [(1, 1), (6, 1), (7, 2)] {
            let cols = vec![col(MYSQL_TYPE_LONG); n];
            let row = binary_row(&cols, &vec![Value::Null; n]).unwrap();
            assert_eq!(row.len(), 1 + bytes);
        }

        // Errors leave the buffer untouched.
        let mut out = vec![9];
        assert!(binary_row_into(
            &mut out,
            &[col(MYSQL_TYPE_LONG), col(MYSQL_TYPE_LONG)],
            &[Value::Int(1), Value::Bytes(vec![])]
        )
        .is_err());
        assert_eq!(out, [9]);
        assert!(binary_row(&[col(MYSQL_TYPE_LONG)], &[]).is_err());
    }

    #[test]
    fn prepare_ok() {
        assert_eq!(
            stmt_prepare_ok(7, 2, 3, 0),
            [0, 7, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0]
        );
    }
}
