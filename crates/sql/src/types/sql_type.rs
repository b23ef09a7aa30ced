//! Column types (`SqlType`): validated from the parsed `ColumnType`, shown as MySQL 8.0 shows
//! them, described to the protocol, mapped onto engine columns, and persisted in
//! `ColumnDef::sql_type`.
//!
//! INVARIANTS
//! - A `SqlType` is normalized: BOOL is TINYINT(1); FLOAT(p) with p > 24 is DOUBLE;
//!   CHAR/VARCHAR/TEXT in charset binary are BINARY/VARBINARY/BLOB; TEXT(n)/BLOB(n) are the
//!   smallest TEXT/BLOB type holding n characters; DECIMAL always has (M,D) (default (10,0));
//!   CHAR/BINARY/BIT always have a length; temporal types with fractions have `scale` = fsp.
//! - Only string types (CHAR, VARCHAR, TEXT, ENUM, SET) carry a non-binary collation; every
//!   other type's collation is `binary`; ZEROFILL implies UNSIGNED.
//! - `persisted()` / `from_persisted()` round-trip every field:
//!   `data_type|length|scale|flags|collation id|'v1','v2'` (flags: `u` unsigned, `z` zerofill;
//!   values quoted with '' and \\ escapes, as in `display()`).

use innoxide_engine::{Collation, ColumnKind};

use super::charset::{self, CollationInfo};
use super::datum::{check_decimal_spec, Datum};
use super::decimal::{Decimal, MAX_PRECISION};
use super::temporal::{frac_bytes, Date, DateTime, Time};
use crate::ast::{ColumnType, TypeName};
use crate::error::{
    SqlError, ER_COLLATION_CHARSET_MISMATCH, ER_TOO_BIG_DISPLAYWIDTH, ER_TOO_BIG_FIELDLENGTH,
    ER_TOO_BIG_PRECISION, ER_UNKNOWN_CHARACTER_SET, ER_UNKNOWN_COLLATION, ER_WRONG_FIELD_SPEC,
};

/// MySQL column flags (the type's part of them).
pub mod flag {
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const TIMESTAMP: u16 = 1024;
    pub const SET: u16 = 2048;
    pub const NUM: u16 = 32768;
}

/// MYSQL_TYPE_* codes.
pub mod mysql_type {
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
}

/// DECIMALS for floating types without (M,D) and for strings (NOT_FIXED_DEC).
pub const NOT_FIXED_DEC: u8 = 31;

/// Type names as information_schema's DATA_TYPE shows them.
const NAMES: &[(TypeName, &str)] = &[
    (TypeName::TinyInt, "tinyint"),
    (TypeName::SmallInt, "smallint"),
    (TypeName::MediumInt, "mediumint"),
    (TypeName::Int, "int"),
    (TypeName::BigInt, "bigint"),
    (TypeName::Decimal, "decimal"),
    (TypeName::Float, "float"),
    (TypeName::Double, "double"),
    (TypeName::Bit, "bit"),
    (TypeName::Char, "char"),
    (TypeName::VarChar, "varchar"),
    (TypeName::Binary, "binary"),
    (TypeName::VarBinary, "varbinary"),
    (TypeName::TinyText, "tinytext"),
    (TypeName::Text, "text"),
    (TypeName::MediumText, "mediumtext"),
    (TypeName::LongText, "longtext"),
    (TypeName::TinyBlob, "tinyblob"),
    (TypeName::Blob, "blob"),
    (TypeName::MediumBlob, "mediumblob"),
    (TypeName::LongBlob, "longblob"),
    (TypeName::Date, "date"),
    (TypeName::DateTime, "datetime"),
    (TypeName::Timestamp, "timestamp"),
    (TypeName::Time, "time"),
    (TypeName::Year, "year"),
    (TypeName::Enum, "enum"),
    (TypeName::Set, "set"),
    (TypeName::Json, "json"),
];

/// Byte capacity of the four TEXT/BLOB sizes.
const LOB_SIZES: [(u64, TypeName, TypeName); 4] = [
    (255, TypeName::TinyText, TypeName::TinyBlob),
    (65_535, TypeName::Text, TypeName::Blob),
    (16_777_215, TypeName::MediumText, TypeName::MediumBlob),
    (4_294_967_295, TypeName::LongText, TypeName::LongBlob),
];

/// A validated column type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlType {
    pub name: TypeName,
    /// Integer display width (None: the default), CHAR/VARCHAR/BINARY/VARBINARY/BIT length,
    /// DECIMAL/FLOAT/DOUBLE precision M.
    pub length: Option<u32>,
    /// D of DECIMAL/FLOAT(M,D)/DOUBLE(M,D); fsp of DATETIME/TIMESTAMP/TIME.
    pub scale: Option<u8>,
    pub unsigned: bool,
    pub zerofill: bool,
    pub coll: &'static CollationInfo,
    /// ENUM/SET members, trailing spaces removed.
    pub values: Vec<String>,
}

fn resolve_collation(
    charset: Option<&str>,
    collate: Option<&str>,
    table_charset: Option<&str>,
    table_collate: Option<&str>,
) -> Result<&'static CollationInfo, SqlError> {
    let unknown_cs = |cs: &str| SqlError::new(ER_UNKNOWN_CHARACTER_SET, &[&cs]);
    let unknown_co = |co: &str| SqlError::new(ER_UNKNOWN_COLLATION, &[&co]);
    match (charset, collate) {
        (Some(cs), Some(co)) => {
            let csn = charset::charset_name(cs).ok_or_else(|| unknown_cs(cs))?;
            let ci = charset::collation_info(co).ok_or_else(|| unknown_co(co))?;
            if ci.charset != csn {
                return Err(SqlError::new(ER_COLLATION_CHARSET_MISMATCH, &[&co, &cs]));
            }
            Ok(ci)
        }
        (Some(cs), None) => charset::default_collation(cs).ok_or_else(|| unknown_cs(cs)),
        (None, Some(co)) => charset::collation_info(co).ok_or_else(|| unknown_co(co)),
        (None, None) if table_charset.is_some() || table_collate.is_some() => {
            resolve_collation(table_charset, table_collate, None, None)
        }
        (None, None) => Ok(charset::DEFAULT),
    }
}

/// `'a','b'` with `'` doubled and `\` escaped.
fn quote_values(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

fn unquote_values(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    while it.peek().is_some() {
        if it.next() != Some('\'') {
            return None;
        }
        let mut v = String::new();
        loop {
            match it.next()? {
                '\'' if it.peek() == Some(&'\'') => {
                    it.next();
                    v.push('\'');
                }
                '\'' => break,
                '\\' => v.push(it.next()?),
                c => v.push(c),
            }
        }
        out.push(v);
        match it.next() {
            None => break,
            Some(',') => {}
            Some(_) => return None,
        }
    }
    Some(out)
}

impl SqlType {
    /// A type with the binary collation and no options.
    pub fn simple(name: TypeName) -> SqlType {
        SqlType {
            name,
            length: None,
            scale: None,
            unsigned: false,
            zerofill: false,
            coll: charset::BINARY,
            values: Vec::new(),
        }
    }

    /// Validates a column type as CREATE/ALTER TABLE does; `table_charset`/`table_collate`
    /// are the table's defaults for string columns (else utf8mb4_0900_ai_ci).
    pub fn from_ast(
        t: &ColumnType,
        col: &str,
        table_charset: Option<&str>,
        table_collate: Option<&str>,
    ) -> Result<SqlType, SqlError> {
        let mut ty = SqlType::simple(t.name);
        let width = |max: u64| -> Result<Option<u32>, SqlError> {
            match t.length {
                Some(n) if n > max => Err(SqlError::new(ER_TOO_BIG_DISPLAYWIDTH, &[&col, &max])),
                n => Ok(n.map(|n| n as u32)),
            }
        };
        let too_long = |max: u64| SqlError::new(ER_TOO_BIG_FIELDLENGTH, &[&col, &max]);
        use TypeName as T;
        match t.name {
            T::Bool => {
                ty.name = T::TinyInt;
                ty.length = Some(1);
            }
            T::TinyInt | T::SmallInt | T::MediumInt | T::Int | T::BigInt => ty.length = width(255)?,
            T::Decimal => {
                let (m, d) = check_decimal_spec(t.length, t.scale, col, u64::from(MAX_PRECISION))?;
                (ty.length, ty.scale) = (Some(u32::from(m)), Some(d));
            }
            T::Float | T::Double if t.scale.is_some() => {
                let (m, d) = check_decimal_spec(t.length, t.scale, col, 255)?;
                (ty.length, ty.scale) = (Some(u32::from(m)), Some(d));
            }
            T::Float => match t.length {
                Some(p) if p > 53 => return Err(SqlError::new(ER_WRONG_FIELD_SPEC, &[&col])),
                Some(p) if p > 24 => ty.name = T::Double,
                _ => {}
            },
            T::Bit => {
                if t.length.is_some_and(|n| n > 64) {
                    return Err(SqlError::new(ER_TOO_BIG_DISPLAYWIDTH, &[&col, &64]));
                }
                ty.length = Some(t.length.unwrap_or(1).max(1) as u32);
            }
            T::Date | T::Year | T::Json | T::Double => {}
            T::DateTime | T::Timestamp | T::Time => {
                let fsp = t.length.unwrap_or(0);
                if fsp > 6 {
                    return Err(SqlError::new(ER_TOO_BIG_PRECISION, &[&fsp, &col, &6]));
                }
                ty.scale = Some(fsp as u8);
            }
            T::Binary | T::VarBinary | T::TinyBlob | T::Blob | T::MediumBlob | T::LongBlob => {}
            T::Char
            | T::VarChar
            | T::TinyText
            | T::Text
            | T::MediumText
            | T::LongText
            | T::Enum
            | T::Set => {
                ty.coll = resolve_collation(
                    t.charset.as_deref(),
                    t.collate.as_deref(),
                    table_charset,
                    table_collate,
                )?;
                if ty.coll.charset == "binary" {
                    ty.name = match t.name {
                        T::Char => T::Binary,
                        T::VarChar => T::VarBinary,
                        T::TinyText => T::TinyBlob,
                        T::Text => T::Blob,
                        T::MediumText => T::MediumBlob,
                        T::LongText => T::LongBlob,
                        n => n,
                    };
                }
            }
        }
        let mb = u64::from(ty.mbmaxlen());
        match ty.name {
            T::Char | T::Binary => {
                let n = t.length.unwrap_or(1);
                if n > 255 {
                    return Err(too_long(255));
                }
                ty.length = Some(n as u32);
            }
            T::VarChar | T::VarBinary => {
                let n = t.length.ok_or_else(|| SqlError::parse(")", 1))?;
                if n.saturating_mul(mb) > 65_535 {
                    return Err(too_long(65_535 / mb));
                }
                ty.length = Some(n as u32);
            }
            T::Text | T::Blob => {
                if let Some(n) = t.length {
                    let bytes = n.saturating_mul(mb);
                    let fit = LOB_SIZES
                        .iter()
                        .find(|s| s.0 >= bytes)
                        .unwrap_or(&LOB_SIZES[3]);
                    ty.name = if ty.name == T::Text { fit.1 } else { fit.2 };
                }
            }
            T::Enum | T::Set => {
                ty.values = t
                    .values
                    .iter()
                    .map(|v| v.trim_end_matches(' ').to_string())
                    .collect();
                let max = if ty.name == T::Enum { 65_535 } else { 64 };
                if ty.values.is_empty() || ty.values.len() > max {
                    return Err(SqlError::new(ER_WRONG_FIELD_SPEC, &[&col]));
                }
            }
            _ => {}
        }
        if ty.is_numeric() && ty.name != T::Bit {
            ty.zerofill = t.zerofill;
            ty.unsigned = t.unsigned || t.zerofill;
        }
        Ok(ty)
    }

    fn mbmaxlen(&self) -> u32 {
        charset::mbmaxlen(self.coll.charset)
    }

    /// Bytes of this column as a key part (MySQL EXPLAIN's key_len, before the byte a nullable
    /// column adds): fixed-size types their size, CHAR/BINARY their length in bytes, VARCHAR,
    /// VARBINARY and a TEXT/BLOB prefix their length in bytes plus 2. `prefix` is a prefix
    /// key part's length in characters.
    pub fn key_length(&self, prefix: Option<u64>) -> u64 {
        use TypeName as T;
        let mb = u64::from(self.mbmaxlen());
        let chars = prefix.or(self.length.map(u64::from)).unwrap_or(0);
        match (self.name, self.storage().0) {
            (T::Char | T::Binary, _) => chars * mb,
            (_, ColumnKind::Var { .. }) => chars * mb + 2,
            (_, ColumnKind::Int { bytes, .. }) => u64::from(bytes),
            (_, ColumnKind::Float) => 4,
            (_, ColumnKind::Double) => 8,
            (_, ColumnKind::Fixed(n)) => u64::from(n),
        }
    }

    /// DATA_TYPE of information_schema.COLUMNS.
    /// The type as a column definition (CREATE TABLE ... SELECT copies a column's type).
    pub fn to_ast(&self) -> ColumnType {
        let text = self.is_text();
        ColumnType {
            name: self.name,
            length: self.length.map(u64::from),
            scale: self.scale.map(u64::from),
            unsigned: self.unsigned,
            zerofill: self.zerofill,
            charset: text.then(|| self.coll.charset.to_string()),
            collate: text.then(|| self.coll.name.to_string()),
            values: self.values.clone(),
        }
    }

    pub fn data_type(&self) -> &'static str {
        NAMES
            .iter()
            .find(|(n, _)| *n == self.name)
            .map_or("tinyint", |(_, s)| s)
    }

    /// The type as SHOW CREATE TABLE and COLUMN_TYPE show it in MySQL 8.0 (integer display
    /// widths only for TINYINT(1) and ZEROFILL).
    pub fn display(&self) -> String {
        use TypeName as T;
        let base = self.data_type();
        let mut s = match self.name {
            T::TinyInt | T::SmallInt | T::MediumInt | T::Int | T::BigInt => {
                if self.zerofill {
                    format!("{base}({})", self.column_length())
                } else if self.name == T::TinyInt && self.length == Some(1) {
                    "tinyint(1)".to_string()
                } else {
                    base.to_string()
                }
            }
            T::Decimal | T::Float | T::Double => match (self.length, self.scale) {
                (Some(m), Some(d)) => format!("{base}({m},{d})"),
                _ => base.to_string(),
            },
            T::Bit | T::Char | T::VarChar | T::Binary | T::VarBinary => {
                format!("{base}({})", self.length.unwrap_or(1))
            }
            T::DateTime | T::Timestamp | T::Time => match self.fsp() {
                0 => base.to_string(),
                f => format!("{base}({f})"),
            },
            T::Enum | T::Set => format!("{base}({})", quote_values(&self.values)),
            _ => base.to_string(),
        };
        if self.unsigned {
            s.push_str(" unsigned");
        }
        if self.zerofill {
            s.push_str(" zerofill");
        }
        s
    }

    /// Fractional-seconds precision (0 for non-temporal types).
    pub fn fsp(&self) -> u8 {
        if self.is_temporal() {
            self.scale.unwrap_or(0)
        } else {
            0
        }
    }

    pub fn collation(&self) -> Collation {
        self.coll.engine
    }

    pub fn unsigned(&self) -> bool {
        self.unsigned
    }

    pub fn is_integer(&self) -> bool {
        use TypeName as T;
        matches!(
            self.name,
            T::TinyInt | T::SmallInt | T::MediumInt | T::Int | T::BigInt | T::Bool
        )
    }

    pub fn is_numeric(&self) -> bool {
        use TypeName as T;
        self.is_integer() || matches!(self.name, T::Decimal | T::Float | T::Double | T::Bit)
    }

    pub fn is_temporal(&self) -> bool {
        use TypeName as T;
        matches!(
            self.name,
            T::Date | T::DateTime | T::Timestamp | T::Time | T::Year
        )
    }

    /// Character or binary strings, TEXT/BLOB, ENUM and SET.
    pub fn is_string(&self) -> bool {
        use TypeName as T;
        matches!(
            self.name,
            T::Char
                | T::VarChar
                | T::Binary
                | T::VarBinary
                | T::TinyText
                | T::Text
                | T::MediumText
                | T::LongText
                | T::TinyBlob
                | T::Blob
                | T::MediumBlob
                | T::LongBlob
                | T::Enum
                | T::Set
        )
    }

    /// A string type in a character set (not binary).
    pub fn is_text(&self) -> bool {
        self.is_string() && self.coll.charset != "binary"
    }

    /// Max bytes of the TEXT/BLOB sizes; None for other types.
    pub fn lob_bytes(&self) -> Option<u64> {
        LOB_SIZES
            .iter()
            .find(|s| s.1 == self.name || s.2 == self.name)
            .map(|s| s.0)
    }

    /// How the engine stores the column, and how it compares it.
    pub fn storage(&self) -> (ColumnKind, Collation) {
        use TypeName as T;
        let mb = self.mbmaxlen();
        let len = self.length.unwrap_or(1);
        let kind = match self.name {
            T::TinyInt | T::Bool => ColumnKind::Int {
                bytes: 1,
                unsigned: self.unsigned,
            },
            T::SmallInt => ColumnKind::Int {
                bytes: 2,
                unsigned: self.unsigned,
            },
            T::MediumInt => ColumnKind::Int {
                bytes: 3,
                unsigned: self.unsigned,
            },
            T::Int => ColumnKind::Int {
                bytes: 4,
                unsigned: self.unsigned,
            },
            T::BigInt => ColumnKind::Int {
                bytes: 8,
                unsigned: self.unsigned,
            },
            T::Decimal => {
                let (m, d) = self.precision_scale();
                ColumnKind::Fixed(Decimal::bin_size(m, d))
            }
            T::Float => ColumnKind::Float,
            T::Double => ColumnKind::Double,
            T::Bit => ColumnKind::Fixed(len.div_ceil(8) as u16),
            T::Binary if len > 0 => ColumnKind::Fixed(len as u16),
            // Multibyte CHAR is variable-length in InnoDB; CHAR compares by its collation.
            T::Char | T::VarChar => ColumnKind::Var {
                max_len: len.saturating_mul(mb),
            },
            T::Binary | T::VarBinary => ColumnKind::Var { max_len: len },
            T::Date => ColumnKind::Fixed(3),
            T::DateTime => ColumnKind::Fixed(5 + frac_bytes(self.fsp()) as u16),
            T::Timestamp => ColumnKind::Fixed(4 + frac_bytes(self.fsp()) as u16),
            T::Time => ColumnKind::Fixed(3 + frac_bytes(self.fsp()) as u16),
            T::Year => ColumnKind::Int {
                bytes: 1,
                unsigned: true,
            },
            T::Enum => ColumnKind::Int {
                bytes: if self.values.len() > 255 { 2 } else { 1 },
                unsigned: true,
            },
            T::Set => ColumnKind::Int {
                bytes: match self.values.len().div_ceil(8) {
                    0 | 1 => 1,
                    2 => 2,
                    3 => 3,
                    4 => 4,
                    _ => 8,
                },
                unsigned: true,
            },
            T::Json => ColumnKind::Var { max_len: u32::MAX },
            _ => ColumnKind::Var {
                max_len: self
                    .lob_bytes()
                    .map_or(u32::MAX, |b| b.min(u64::from(u32::MAX)) as u32),
            },
        };
        let coll = if self.is_text() && !matches!(self.name, T::Enum | T::Set) {
            self.coll.engine
        } else {
            Collation::Binary
        };
        (kind, coll)
    }

    /// (M, D) of DECIMAL (and FLOAT/DOUBLE with (M,D)).
    pub fn precision_scale(&self) -> (u8, u8) {
        (
            self.length.map_or(10, |m| m.min(255) as u8),
            self.scale.unwrap_or(0),
        )
    }

    /// The MYSQL_TYPE_* code of result-set column definitions.
    pub fn protocol_type(&self) -> u8 {
        use mysql_type as M;
        use TypeName as T;
        match self.name {
            T::TinyInt | T::Bool => M::TINY,
            T::SmallInt => M::SHORT,
            T::MediumInt => M::INT24,
            T::Int => M::LONG,
            T::BigInt => M::LONGLONG,
            T::Decimal => M::NEWDECIMAL,
            T::Float => M::FLOAT,
            T::Double => M::DOUBLE,
            T::Bit => M::BIT,
            T::Char | T::Binary | T::Enum | T::Set => M::STRING,
            T::VarChar | T::VarBinary => M::VAR_STRING,
            T::Date => M::DATE,
            T::DateTime => M::DATETIME,
            T::Timestamp => M::TIMESTAMP,
            T::Time => M::TIME,
            T::Year => M::YEAR,
            T::Json => M::JSON,
            _ => M::BLOB,
        }
    }

    /// The column length MySQL reports in column definitions.
    pub fn column_length(&self) -> u32 {
        use TypeName as T;
        let mb = self.mbmaxlen();
        let int_width = |signed: u32, unsigned: u32| {
            self.length
                .unwrap_or(if self.unsigned { unsigned } else { signed })
        };
        let fsp_len = |base: u32| match self.fsp() {
            0 => base,
            f => base + 1 + u32::from(f),
        };
        match self.name {
            T::TinyInt | T::Bool => int_width(4, 3),
            T::SmallInt => int_width(6, 5),
            T::MediumInt => int_width(9, 8),
            T::Int => int_width(11, 10),
            T::BigInt => int_width(20, 20),
            T::Decimal => {
                let (m, d) = self.precision_scale();
                u32::from(m) + u32::from(d > 0) + u32::from(!self.unsigned)
            }
            T::Float => self.length.unwrap_or(12),
            T::Double => self.length.unwrap_or(22),
            T::Bit => self.length.unwrap_or(1),
            T::Char | T::VarChar => self.length.unwrap_or(1).saturating_mul(mb),
            T::Binary | T::VarBinary => self.length.unwrap_or(1),
            T::Date => 10,
            T::DateTime | T::Timestamp => fsp_len(19),
            T::Time => fsp_len(10),
            T::Year => 4,
            T::Enum => {
                let longest = self
                    .values
                    .iter()
                    .map(|v| v.chars().count())
                    .max()
                    .unwrap_or(0);
                (longest as u32).saturating_mul(mb)
            }
            T::Set => {
                let total: usize = self.values.iter().map(|v| v.chars().count()).sum::<usize>()
                    + self.values.len().saturating_sub(1);
                (total as u32).saturating_mul(mb)
            }
            T::Json => u32::MAX,
            _ => {
                let bytes = self.lob_bytes().unwrap_or(u64::from(u32::MAX));
                let m = if self.is_text() { u64::from(mb) } else { 1 };
                bytes.saturating_mul(m).min(u64::from(u32::MAX)) as u32
            }
        }
    }

    /// The DECIMALS of column definitions: the scale, the fsp, 31 for FLOAT/DOUBLE without
    /// (M,D) and for strings, else 0.
    pub fn decimals(&self) -> u8 {
        use TypeName as T;
        match self.name {
            T::Decimal => self.scale.unwrap_or(0),
            T::Float | T::Double => self.scale.unwrap_or(NOT_FIXED_DEC),
            T::DateTime | T::Timestamp | T::Time => self.fsp(),
            T::Json => NOT_FIXED_DEC,
            _ if self.is_string() => NOT_FIXED_DEC,
            _ => 0,
        }
    }

    /// The type's column-definition flags (NOT NULL, keys... are the caller's).
    pub fn flags(&self) -> u16 {
        use TypeName as T;
        let mut f = 0;
        if self.unsigned {
            f |= flag::UNSIGNED;
        }
        if self.zerofill {
            f |= flag::ZEROFILL;
        }
        match self.name {
            T::Bit => f |= flag::UNSIGNED,
            T::Year => f |= flag::UNSIGNED | flag::ZEROFILL | flag::NUM,
            T::Date | T::DateTime | T::Time => f |= flag::BINARY,
            T::Timestamp => f |= flag::BINARY | flag::TIMESTAMP,
            T::Json => f |= flag::BLOB | flag::BINARY,
            T::Enum => f |= flag::ENUM,
            T::Set => f |= flag::SET,
            _ if self.is_numeric() => f |= flag::NUM,
            _ => {}
        }
        if self.lob_bytes().is_some() {
            f |= flag::BLOB;
        }
        if self.is_string() && (self.coll.charset == "binary" || self.coll.name.ends_with("_bin")) {
            f |= flag::BINARY;
        }
        f
    }

    /// The character set id of column definitions: the collation's for character strings,
    /// 63 (binary) otherwise.
    pub fn charset_id(&self) -> u16 {
        if self.is_text() {
            self.coll.id
        } else {
            charset::BINARY.id
        }
    }

    /// The implicit default of a NOT NULL column without DEFAULT: 0, '', the first ENUM
    /// member, the zero date/time.
    pub fn default_for_not_null(&self) -> Datum {
        use TypeName as T;
        match self.name {
            _ if self.is_integer() || self.name == T::Bit => {
                if self.unsigned || self.name == T::Bit {
                    Datum::UInt(0)
                } else {
                    Datum::Int(0)
                }
            }
            T::Decimal => Datum::Decimal(Decimal::zero(self.precision_scale().1)),
            T::Float | T::Double => Datum::Double(0.0),
            T::Enum => Datum::Bytes(
                self.values
                    .first()
                    .cloned()
                    .unwrap_or_default()
                    .into_bytes(),
            ),
            T::Date => Datum::Date(Date::default()),
            T::DateTime | T::Timestamp => Datum::DateTime(DateTime {
                fsp: self.fsp(),
                ..DateTime::default()
            }),
            T::Time => Datum::Time(Time {
                fsp: self.fsp(),
                ..Time::default()
            }),
            T::Year => Datum::Int(0),
            T::Json => Datum::Bytes(b"null".to_vec()),
            _ => Datum::Bytes(Vec::new()),
        }
    }

    /// A value of this column as the text protocol sends it: ZEROFILL pads with zeros, YEAR
    /// has 4 digits, FLOAT/DOUBLE(M,D) print D places. None for NULL.
    pub fn render(&self, d: &Datum) -> Option<Vec<u8>> {
        use TypeName as T;
        if d.is_null() {
            return None;
        }
        let text = match (self.name, d) {
            (T::Year, Datum::Int(y)) => format!("{y:04}").into_bytes(),
            // BIT values go out as their bytes.
            (T::Bit, Datum::UInt(v)) => {
                let n = self.length.unwrap_or(1).clamp(1, 64).div_ceil(8) as usize;
                v.to_be_bytes()[8 - n..].to_vec()
            }
            (T::Float | T::Double, Datum::Double(x)) if self.scale.is_some() => {
                format!("{x:.p$}", p = usize::from(self.scale.unwrap_or(0))).into_bytes()
            }
            _ => d.to_text()?,
        };
        if self.zerofill {
            let w = self.column_length() as usize;
            if text.len() < w {
                let mut padded = vec![b'0'; w - text.len()];
                padded.extend_from_slice(&text);
                return Some(padded);
            }
        }
        Some(text)
    }

    /// The compact text kept in `ColumnDef::sql_type` (module doc).
    pub fn persisted(&self) -> String {
        let opt = |v: Option<String>| v.unwrap_or_default();
        format!(
            "{}|{}|{}|{}{}|{}|{}",
            self.data_type(),
            opt(self.length.map(|v| v.to_string())),
            opt(self.scale.map(|v| v.to_string())),
            if self.unsigned { "u" } else { "" },
            if self.zerofill { "z" } else { "" },
            self.coll.id,
            quote_values(&self.values)
        )
    }

    /// Reads `persisted()`'s text; None if it is not one.
    pub fn from_persisted(s: &str) -> Option<SqlType> {
        let mut parts = s.splitn(6, '|');
        let tag = parts.next()?;
        let name = NAMES.iter().find(|(_, n)| *n == tag)?.0;
        let num = |p: &str| -> Option<Option<u64>> {
            if p.is_empty() {
                Some(None)
            } else {
                p.parse().ok().map(Some)
            }
        };
        let length = num(parts.next()?)?.and_then(|v| u32::try_from(v).ok());
        let scale = num(parts.next()?)?.and_then(|v| u8::try_from(v).ok());
        let flags = parts.next()?;
        let coll = charset::collation_by_id(parts.next()?.parse().ok()?)?;
        let values = unquote_values(parts.next()?)?;
        Some(SqlType {
            name,
            length,
            scale,
            unsigned: flags.contains('u'),
            zerofill: flags.contains('z'),
            coll,
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ct(name: TypeName, length: Option<u64>, scale: Option<u64>) -> ColumnType {
        ColumnType {
            name,
            length,
            scale,
            unsigned: false,
            zerofill: false,
            charset: None,
            collate: None,
            values: Vec::new(),
        }
    }

    fn ty(t: ColumnType) -> SqlType {
        SqlType::from_ast(&t, "c", None, None).unwrap()
    }

    fn err(t: ColumnType) -> (u16, String) {
        let e = SqlType::from_ast(&t, "c", None, None).unwrap_err();
        (e.code, e.message)
    }

    /// (type, display, data_type, protocol type, column length, decimals, flags, charset id)
    #[test]
    fn metadata_table() {
        use TypeName as T;
        let unsigned = |mut t: ColumnType| {
            t.unsigned = true;
            t
        };
        let zerofill = |mut t: ColumnType| {
            t.zerofill = true;
            t
        };
        let enum_ = |name, vals: &[&str]| ColumnType {
            values: vals.iter().map(|v| v.to_string()).collect(),
            ..ct(name, None, None)
        };
        type Row = (
            ColumnType,
            &'static str,
            &'static str,
            u8,
            u32,
            u8,
            u16,
            u16,
        );
        let rows: Vec<Row> = vec![
            (
                ct(T::TinyInt, None, None),
                "tinyint",
                "tinyint",
                1,
                4,
                0,
                32768,
                63,
            ),
            (
                ct(T::Bool, None, None),
                "tinyint(1)",
                "tinyint",
                1,
                1,
                0,
                32768,
                63,
            ),
            (
                unsigned(ct(T::SmallInt, None, None)),
                "smallint unsigned",
                "smallint",
                2,
                5,
                0,
                32800,
                63,
            ),
            (
                ct(T::MediumInt, None, None),
                "mediumint",
                "mediumint",
                9,
                9,
                0,
                32768,
                63,
            ),
            (
                ct(T::Int, Some(11), None),
                "int",
                "int",
                3,
                11,
                0,
                32768,
                63,
            ),
            (
                unsigned(ct(T::Int, None, None)),
                "int unsigned",
                "int",
                3,
                10,
                0,
                32800,
                63,
            ),
            (
                zerofill(ct(T::Int, Some(5), None)),
                "int(5) unsigned zerofill",
                "int",
                3,
                5,
                0,
                32864,
                63,
            ),
            (
                zerofill(ct(T::BigInt, None, None)),
                "bigint(20) unsigned zerofill",
                "bigint",
                8,
                20,
                0,
                32864,
                63,
            ),
            (
                ct(T::BigInt, None, None),
                "bigint",
                "bigint",
                8,
                20,
                0,
                32768,
                63,
            ),
            (
                ct(T::Decimal, None, None),
                "decimal(10,0)",
                "decimal",
                246,
                11,
                0,
                32768,
                63,
            ),
            (
                ct(T::Decimal, Some(10), Some(2)),
                "decimal(10,2)",
                "decimal",
                246,
                12,
                2,
                32768,
                63,
            ),
            (
                unsigned(ct(T::Decimal, Some(5), Some(2))),
                "decimal(5,2) unsigned",
                "decimal",
                246,
                6,
                2,
                32800,
                63,
            ),
            (
                ct(T::Float, None, None),
                "float",
                "float",
                4,
                12,
                31,
                32768,
                63,
            ),
            (
                ct(T::Float, Some(7), Some(2)),
                "float(7,2)",
                "float",
                4,
                7,
                2,
                32768,
                63,
            ),
            (
                ct(T::Float, Some(30), None),
                "double",
                "double",
                5,
                22,
                31,
                32768,
                63,
            ),
            (
                ct(T::Double, None, None),
                "double",
                "double",
                5,
                22,
                31,
                32768,
                63,
            ),
            (ct(T::Bit, None, None), "bit(1)", "bit", 16, 1, 0, 32, 63),
            (
                ct(T::Bit, Some(10), None),
                "bit(10)",
                "bit",
                16,
                10,
                0,
                32,
                63,
            ),
            (
                ct(T::Char, None, None),
                "char(1)",
                "char",
                254,
                4,
                31,
                0,
                255,
            ),
            (
                ct(T::Char, Some(120), None),
                "char(120)",
                "char",
                254,
                480,
                31,
                0,
                255,
            ),
            (
                ct(T::VarChar, Some(100), None),
                "varchar(100)",
                "varchar",
                253,
                400,
                31,
                0,
                255,
            ),
            (
                ct(T::Binary, Some(16), None),
                "binary(16)",
                "binary",
                254,
                16,
                31,
                128,
                63,
            ),
            (
                ct(T::VarBinary, Some(20), None),
                "varbinary(20)",
                "varbinary",
                253,
                20,
                31,
                128,
                63,
            ),
            (
                ct(T::TinyText, None, None),
                "tinytext",
                "tinytext",
                252,
                1020,
                31,
                16,
                255,
            ),
            (
                ct(T::Text, None, None),
                "text",
                "text",
                252,
                262_140,
                31,
                16,
                255,
            ),
            (
                ct(T::Text, Some(50), None),
                "tinytext",
                "tinytext",
                252,
                1020,
                31,
                16,
                255,
            ),
            (
                ct(T::Text, Some(100), None),
                "text",
                "text",
                252,
                262_140,
                31,
                16,
                255,
            ),
            (
                ct(T::MediumText, None, None),
                "mediumtext",
                "mediumtext",
                252,
                67_108_860,
                31,
                16,
                255,
            ),
            (
                ct(T::LongText, None, None),
                "longtext",
                "longtext",
                252,
                u32::MAX,
                31,
                16,
                255,
            ),
            (
                ct(T::TinyBlob, None, None),
                "tinyblob",
                "tinyblob",
                252,
                255,
                31,
                144,
                63,
            ),
            (
                ct(T::Blob, None, None),
                "blob",
                "blob",
                252,
                65_535,
                31,
                144,
                63,
            ),
            (
                ct(T::Blob, Some(70_000), None),
                "mediumblob",
                "mediumblob",
                252,
                16_777_215,
                31,
                144,
                63,
            ),
            (
                ct(T::LongBlob, None, None),
                "longblob",
                "longblob",
                252,
                u32::MAX,
                31,
                144,
                63,
            ),
            (ct(T::Date, None, None), "date", "date", 10, 10, 0, 128, 63),
            (
                ct(T::DateTime, None, None),
                "datetime",
                "datetime",
                12,
                19,
                0,
                128,
                63,
            ),
            (
                ct(T::DateTime, Some(6), None),
                "datetime(6)",
                "datetime",
                12,
                26,
                6,
                128,
                63,
            ),
            (
                ct(T::Timestamp, Some(3), None),
                "timestamp(3)",
                "timestamp",
                7,
                23,
                3,
                1152,
                63,
            ),
            (ct(T::Time, None, None), "time", "time", 11, 10, 0, 128, 63),
            (
                ct(T::Time, Some(2), None),
                "time(2)",
                "time",
                11,
                13,
                2,
                128,
                63,
            ),
            (ct(T::Year, None, None), "year", "year", 13, 4, 0, 32864, 63),
            (
                enum_(T::Enum, &["a", "it's", "b\\c "]),
                "enum('a','it''s','b\\\\c')",
                "enum",
                254,
                16,
                31,
                256,
                255,
            ),
            (
                enum_(T::Set, &["x", "yy"]),
                "set('x','yy')",
                "set",
                254,
                16,
                31,
                2048,
                255,
            ),
            (
                ct(T::Json, None, None),
                "json",
                "json",
                245,
                u32::MAX,
                31,
                144,
                63,
            ),
        ];
        for (t, display, data_type, proto, len, dec, flags, cs) in rows {
            let s = ty(t.clone());
            assert_eq!(s.display(), display, "{t:?}");
            assert_eq!(s.data_type(), data_type, "{t:?}");
            assert_eq!(s.protocol_type(), proto, "{t:?}");
            assert_eq!(s.column_length(), len, "{t:?}");
            assert_eq!(s.decimals(), dec, "{t:?}");
            assert_eq!(s.flags(), flags, "{t:?}");
            assert_eq!(s.charset_id(), cs, "{t:?}");
            assert_eq!(
                SqlType::from_persisted(&s.persisted()),
                Some(s.clone()),
                "{}",
                s.persisted()
            );
            let _ = s.storage();
            let _ = s.default_for_not_null();
        }
    }

    #[test]
    fn charsets_and_collations() {
        use TypeName as T;
        let with = |cs: Option<&str>, co: Option<&str>| ColumnType {
            charset: cs.map(str::to_string),
            collate: co.map(str::to_string),
            ..ct(T::VarChar, Some(10), None)
        };
        assert_eq!(
            ty(with(Some("latin1"), None)).coll.name,
            "latin1_swedish_ci"
        );
        assert_eq!(ty(with(Some("latin1"), None)).column_length(), 10);
        assert_eq!(ty(with(Some("utf8"), None)).coll.id, 33);
        assert_eq!(ty(with(None, Some("utf8mb4_bin"))).flags(), 128);
        assert_eq!(ty(with(Some("binary"), None)).display(), "varbinary(10)");
        assert_eq!(
            err(with(Some("klingon"), None)),
            (1115, "Unknown character set: 'klingon'".into())
        );
        assert_eq!(
            err(with(None, Some("nope_ci"))),
            (1273, "Unknown collation: 'nope_ci'".into())
        );
        assert_eq!(
            err(with(Some("latin1"), Some("utf8mb4_bin"))),
            (
                1253,
                "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'".into()
            )
        );
        let t = SqlType::from_ast(&with(None, None), "c", Some("latin1"), None).unwrap();
        assert_eq!(t.coll.id, 8);
        let t =
            SqlType::from_ast(&with(None, None), "c", None, Some("utf8mb4_general_ci")).unwrap();
        assert_eq!(
            (t.coll.id, t.collation()),
            (45, Collation::Utf8mb4GeneralCi)
        );
        let char_bin = ColumnType {
            charset: Some("binary".into()),
            ..ct(T::Char, Some(4), None)
        };
        assert_eq!(
            ty(char_bin).storage(),
            (ColumnKind::Fixed(4), Collation::Binary)
        );
    }

    #[test]
    fn limits() {
        use TypeName as T;
        assert_eq!(
            err(ct(T::VarChar, Some(16_384), None)),
            (
                1074,
                "Column length too big for column 'c' (max = 16383); use BLOB or TEXT instead"
                    .into()
            )
        );
        assert!(SqlType::from_ast(&ct(T::VarChar, Some(16_383), None), "c", None, None).is_ok());
        let latin = ColumnType {
            charset: Some("latin1".into()),
            ..ct(T::VarChar, Some(65_536), None)
        };
        assert_eq!(err(latin).0, 1074);
        assert_eq!(err(ct(T::VarChar, None, None)).0, 1064);
        assert_eq!(err(ct(T::Char, Some(256), None)).0, 1074);
        assert_eq!(
            err(ct(T::Decimal, Some(66), None)),
            (
                1426,
                "Too-big precision 66 specified for 'c'. Maximum is 65.".into()
            )
        );
        assert_eq!(
            err(ct(T::Decimal, Some(40), Some(31))),
            (
                1425,
                "Too big scale 31 specified for column 'c'. Maximum is 30.".into()
            )
        );
        assert_eq!(
            err(ct(T::Decimal, Some(5), Some(6))),
            (
                1427,
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column 'c').".into()
            )
        );
        assert_eq!(err(ct(T::DateTime, Some(7), None)).0, 1426);
        assert_eq!(err(ct(T::Bit, Some(65), None)).0, 1439);
        assert_eq!(err(ct(T::Int, Some(256), None)).0, 1439);
        assert_eq!(err(ct(T::Float, Some(54), None)).0, 1063);
        assert_eq!(err(ct(T::Enum, None, None)).0, 1063);
    }

    #[test]
    fn storage_kinds() {
        use TypeName as T;
        let k = |t: ColumnType| ty(t).storage().0;
        assert_eq!(
            k(ct(T::MediumInt, None, None)),
            ColumnKind::Int {
                bytes: 3,
                unsigned: false
            }
        );
        assert_eq!(k(ct(T::Decimal, Some(10), Some(2))), ColumnKind::Fixed(5));
        assert_eq!(
            k(ct(T::Char, Some(10), None)),
            ColumnKind::Var { max_len: 40 }
        );
        assert_eq!(k(ct(T::Bit, Some(9), None)), ColumnKind::Fixed(2));
        assert_eq!(k(ct(T::DateTime, Some(3), None)), ColumnKind::Fixed(7));
        assert_eq!(k(ct(T::Timestamp, None, None)), ColumnKind::Fixed(4));
        assert_eq!(k(ct(T::Time, Some(6), None)), ColumnKind::Fixed(6));
        assert_eq!(
            k(ct(T::Text, None, None)),
            ColumnKind::Var { max_len: 65_535 }
        );
        assert_eq!(
            k(ct(T::LongBlob, None, None)),
            ColumnKind::Var { max_len: u32::MAX }
        );
        let set = ColumnType {
            values: (0..20).map(|i| i.to_string()).collect(),
            ..ct(T::Set, None, None)
        };
        assert_eq!(
            k(set),
            ColumnKind::Int {
                bytes: 3,
                unsigned: true
            }
        );
        assert_eq!(
            ty(ct(T::Text, None, None)).storage().1,
            Collation::Utf8mb40900AiCi
        );
        assert_eq!(SqlType::from_persisted("bogus|||||"), None);
        assert_eq!(SqlType::from_persisted("int"), None);
        let z = ty(ColumnType {
            zerofill: true,
            ..ct(T::Int, Some(5), None)
        });
        assert_eq!(z.render(&Datum::UInt(42)), Some(b"00042".to_vec()));
        let y = ty(ct(T::Year, None, None));
        assert_eq!(y.render(&Datum::Int(0)), Some(b"0000".to_vec()));
        let f = ty(ct(T::Float, Some(7), Some(2)));
        assert_eq!(f.render(&Datum::Double(1.5)), Some(b"1.50".to_vec()));
    }

    #[test]
    fn persisted_text_is_the_documented_one() {
        // docs/format/sql-catalog.md shows these two.
        let v = SqlType::from_ast(&ct(TypeName::VarChar, Some(20), None), "c", None, None).unwrap();
        assert_eq!(v.persisted(), "varchar|20|||255|");
        let mut d = ct(TypeName::Decimal, Some(10), Some(2));
        d.unsigned = true;
        assert_eq!(ty(d).persisted(), "decimal|10|2|u|63|");
    }
}
