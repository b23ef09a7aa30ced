//! Table definitions, values and their encodings: what the engine API speaks.
//! META encoding: docs/format/dictionary.md. Column encodings: docs/format/record.md.

use crate::collation::Collation;
use crate::error::{Error, Result};
use crate::mach::Reader;
use crate::page::record::{FieldDef, FieldType};

/// How a column is stored (the SQL layer maps MySQL types onto these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// Integer of 1, 2, 3, 4 or 8 bytes.
    Int {
        bytes: u8,
        unsigned: bool,
    },
    Float,
    Double,
    /// Exactly this many bytes, compared with memcmp (DECIMAL, temporal, BINARY(n)).
    Fixed(u16),
    /// Up to `max_len` bytes; compared with the column's collation (binary for VARBINARY/BLOB).
    Var {
        max_len: u32,
    },
}

impl ColumnKind {
    /// BIGINT (signed, 8 bytes).
    pub const BIGINT: ColumnKind = ColumnKind::Int {
        bytes: 8,
        unsigned: false,
    };
    /// INT (signed, 4 bytes).
    pub const INT: ColumnKind = ColumnKind::Int {
        bytes: 4,
        unsigned: false,
    };
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    pub name: String,
    pub kind: ColumnKind,
    pub nullable: bool,
    pub collation: Collation,
    /// The SQL type as the user wrote it, kept for SHOW CREATE TABLE; not interpreted here.
    pub sql_type: String,
    /// Set for a column added by an instant ADD COLUMN: what the rows written before it read
    /// (their records lack the column). Such columns come after every other non-key column.
    pub instant: Option<InstantValue>,
}

/// The value of an instantly added column in the rows that predate it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstantValue {
    Null,
    /// The column's stored bytes (the encoding of `encode`).
    Bytes(Vec<u8>),
}

impl InstantValue {
    pub fn bytes(&self) -> Option<Vec<u8>> {
        match self {
            InstantValue::Null => None,
            InstantValue::Bytes(b) => Some(b.clone()),
        }
    }
}

impl ColumnDef {
    pub fn new(name: &str, kind: ColumnKind) -> Self {
        ColumnDef {
            name: name.into(),
            kind,
            nullable: false,
            collation: Collation::Binary,
            sql_type: String::new(),
            instant: None,
        }
    }
    pub fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }
    pub fn collation(mut self, c: Collation) -> Self {
        self.collation = c;
        self
    }
    pub fn sql_type(mut self, t: &str) -> Self {
        self.sql_type = t.into();
        self
    }
    /// The column as added by an instant ADD COLUMN: rows already stored read it as `v`.
    pub fn added_instantly(mut self, v: &Value) -> Result<Self> {
        let mut out = Vec::new();
        let stored = encode(&self, v, &mut out)?;
        self.instant = Some(if stored {
            InstantValue::Bytes(out)
        } else {
            InstantValue::Null
        });
        Ok(self)
    }

    /// The record field this column becomes.
    pub fn field(&self) -> FieldDef {
        let ty = match self.kind {
            ColumnKind::Int { bytes, .. } => FieldType::Fixed(u16::from(bytes)),
            ColumnKind::Float => FieldType::Fixed(4),
            ColumnKind::Double => FieldType::Fixed(8),
            ColumnKind::Fixed(n) => FieldType::Fixed(n),
            ColumnKind::Var { max_len } => FieldType::Var { max_len },
        };
        FieldDef {
            ty,
            nullable: self.nullable,
            collation: self.collation,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RowFormat {
    Redundant,
    Compact,
    #[default]
    Dynamic,
    Compressed,
}

impl RowFormat {
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::Redundant => "Redundant",
            RowFormat::Compact => "Compact",
            RowFormat::Dynamic => "Dynamic",
            RowFormat::Compressed => "Compressed",
        }
    }
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => RowFormat::Redundant,
            1 => RowFormat::Compact,
            2 => RowFormat::Dynamic,
            3 => RowFormat::Compressed,
            _ => return None,
        })
    }
}

/// A secondary index of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: String,
    /// Column numbers, in index order.
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// What `create_table` takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDef {
    /// `db/table`.
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Primary key column numbers; None = a hidden 6-byte row id is the clustered key.
    pub primary_key: Option<Vec<usize>>,
    pub indexes: Vec<IndexSpec>,
    pub row_format: RowFormat,
    /// Opaque table options kept for the SQL layer.
    pub options: String,
}

impl TableDef {
    pub fn new(name: &str, columns: Vec<ColumnDef>, primary_key: Option<Vec<usize>>) -> Self {
        TableDef {
            name: name.into(),
            columns,
            primary_key,
            indexes: Vec::new(),
            row_format: RowFormat::Dynamic,
            options: String::new(),
        }
    }
    pub fn index(mut self, name: &str, columns: Vec<usize>, unique: bool) -> Self {
        self.indexes.push(IndexSpec {
            name: name.into(),
            columns,
            unique,
        });
        self
    }
    /// Table columns in the order clustered records store them: the primary key columns,
    /// then the others in table order.
    pub fn record_order(&self) -> Vec<usize> {
        let pk = self.primary_key.clone().unwrap_or_default();
        let mut v = pk.clone();
        v.extend((0..self.columns.len()).filter(|c| !pk.contains(c)));
        v
    }

    /// True if rows stored under `self` read correctly under `new`: the same columns stored
    /// the same way (type, nullability, collation, declared SQL type, instant value) in the
    /// same record order, the same primary key, indexes (columns, uniqueness, order) and row
    /// format; `new` may also store more columns after the last, each added instantly
    /// (`ColumnDef::instant`). Names, column numbers and the SQL-layer options may differ
    /// (what `redefine_table` changes).
    pub fn readable_as(&self, new: &TableDef) -> bool {
        let same = |a: &ColumnDef, b: &ColumnDef| {
            a.kind == b.kind
                && a.nullable == b.nullable
                && a.collation == b.collation
                && a.sql_type == b.sql_type
                && a.instant == b.instant
        };
        let (a, b) = (self.record_order(), new.record_order());
        let pk_len = |d: &TableDef| d.primary_key.as_ref().map(Vec::len);
        if pk_len(self) != pk_len(new) || b.len() < a.len() {
            return false;
        }
        let mut map = vec![usize::MAX; self.columns.len()];
        for (&x, &y) in a.iter().zip(&b) {
            if !same(&self.columns[x], &new.columns[y]) {
                return false;
            }
            map[x] = y;
        }
        b[a.len()..]
            .iter()
            .all(|&y| new.columns[y].instant.is_some())
            && self.indexes.len() == new.indexes.len()
            && (self.indexes.iter().zip(&new.indexes)).all(|(i, j)| {
                i.unique == j.unique && i.columns.iter().map(|&c| map[c]).eq(j.columns.clone())
            })
            && self.row_format == new.row_format
    }
    pub fn column_no(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// A column value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::UInt(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Bytes(v.as_bytes().to_vec())
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Bytes(v)
    }
}

/// Encodes a value into the stored bytes of `col` (None for NULL), checking width and range.
pub fn encode(col: &ColumnDef, v: &Value, out: &mut Vec<u8>) -> Result<bool> {
    let bad = |what: &str| {
        Err(Error::InvalidArgument(format!(
            "column '{}': {what} (got {v:?})",
            col.name
        )))
    };
    if v.is_null() {
        if !col.nullable {
            return bad("NULL for a NOT NULL column");
        }
        return Ok(false);
    }
    match col.kind {
        ColumnKind::Int { bytes, unsigned } => {
            let bits = u32::from(bytes) * 8;
            let raw: u64 = if unsigned {
                let x = match *v {
                    Value::UInt(x) => x,
                    Value::Int(x) if x >= 0 => x as u64,
                    _ => return bad("not an unsigned integer"),
                };
                if bits < 64 && x >> bits != 0 {
                    return bad("out of range");
                }
                x
            } else {
                let x = match *v {
                    Value::Int(x) => x,
                    Value::UInt(x) => match i64::try_from(x) {
                        Ok(v) => v,
                        Err(_) => return bad("out of range"),
                    },
                    _ => return bad("not an integer"),
                };
                if bits < 64 {
                    let lim = 1i64 << (bits - 1);
                    if x < -lim || x >= lim {
                        return bad("out of range");
                    }
                }
                // Flip the sign bit so the bytes compare like the numbers.
                (x as u64 ^ (1u64 << (bits - 1)))
                    & if bits == 64 {
                        u64::MAX
                    } else {
                        (1 << bits) - 1
                    }
            };
            out.extend_from_slice(&raw.to_be_bytes()[8 - usize::from(bytes)..]);
        }
        ColumnKind::Float => {
            let Value::Float(f) = *v else {
                return bad("not a FLOAT");
            };
            let b = f.to_bits();
            let m = if b >> 31 == 1 { !b } else { b | 1 << 31 };
            out.extend_from_slice(&m.to_be_bytes());
        }
        ColumnKind::Double => {
            let f = match *v {
                Value::Double(f) => f,
                Value::Float(f) => f64::from(f),
                _ => return bad("not a DOUBLE"),
            };
            let b = f.to_bits();
            let m = if b >> 63 == 1 { !b } else { b | 1 << 63 };
            out.extend_from_slice(&m.to_be_bytes());
        }
        ColumnKind::Fixed(n) => {
            let Value::Bytes(b) = v else {
                return bad("not bytes");
            };
            if b.len() != usize::from(n) {
                return bad(&format!("needs exactly {n} bytes"));
            }
            out.extend_from_slice(b);
        }
        ColumnKind::Var { max_len } => {
            let Value::Bytes(b) = v else {
                return bad("not bytes");
            };
            if b.len() as u64 > u64::from(max_len) {
                return bad(&format!("longer than {max_len} bytes"));
            }
            out.extend_from_slice(b);
        }
    }
    Ok(true)
}

/// Decodes stored bytes of `col` back into a value.
pub fn decode(col: &ColumnDef, b: Option<&[u8]>) -> Value {
    let Some(b) = b else { return Value::Null };
    match col.kind {
        ColumnKind::Int { bytes, unsigned } => {
            let mut x = [0u8; 8];
            x[8 - b.len()..].copy_from_slice(b);
            let raw = u64::from_be_bytes(x);
            if unsigned {
                Value::UInt(raw)
            } else {
                let bits = u32::from(bytes) * 8;
                let v = raw ^ (1u64 << (bits - 1));
                // Sign-extend.
                let shift = 64 - bits;
                Value::Int(((v << shift) as i64) >> shift)
            }
        }
        ColumnKind::Float => {
            let m = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let bits = if m >> 31 == 1 { m & !(1 << 31) } else { !m };
            Value::Float(f32::from_bits(bits))
        }
        ColumnKind::Double => {
            let mut x = [0u8; 8];
            x.copy_from_slice(b);
            let m = u64::from_be_bytes(x);
            let bits = if m >> 63 == 1 { m & !(1 << 63) } else { !m };
            Value::Double(f64::from_bits(bits))
        }
        ColumnKind::Fixed(_) | ColumnKind::Var { .. } => Value::Bytes(b.to_vec()),
    }
}

// ---- META codec (docs/format/dictionary.md) ---------------------------------------------------

/// Where an index lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexLoc {
    pub id: u64,
    pub root: u32,
    /// Being built by CREATE INDEX (dropped at startup if a crash interrupted the build).
    pub incomplete: bool,
}

/// A table's dictionary entry: its definition plus where its indexes live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMeta {
    pub def: TableDef,
    pub space: u32,
    pub clustered: (u64, u32),
    /// Per secondary index, parallel to `def.indexes`.
    pub secondary: Vec<IndexLoc>,
    /// Set while a RENAME TABLE is being finished: the path (relative to the data directory)
    /// the table's file had when the rename committed. None: the file is `<name>.ibd`.
    pub renamed_from: Option<String>,
}

/// META trailer tag: the path of a file a RENAME TABLE has yet to move.
const TRAILER_RENAMED_FROM: u8 = 1;
/// META trailer tag: the values of instantly added columns in older rows.
const TRAILER_INSTANT: u8 = 2;

fn put_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.extend_from_slice(&(b.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&b[..b.len().min(u16::MAX as usize)]);
}

fn get_str(r: &mut Reader<'_>) -> Option<String> {
    let n = r.u16()?;
    String::from_utf8(r.bytes(usize::from(n))?.to_vec()).ok()
}

impl TableMeta {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = vec![1u8];
        o.extend_from_slice(&self.space.to_be_bytes());
        o.push(self.def.row_format.code());
        put_str(&mut o, &self.def.options);
        o.extend_from_slice(&(self.def.columns.len() as u16).to_be_bytes());
        for c in &self.def.columns {
            put_str(&mut o, &c.name);
            let (kind, width, max_len, unsigned) = match c.kind {
                ColumnKind::Int { bytes, unsigned } => (1u8, u16::from(bytes), 0u32, unsigned),
                ColumnKind::Float => (2, 4, 0, false),
                ColumnKind::Double => (3, 8, 0, false),
                ColumnKind::Fixed(n) => (4, n, 0, false),
                ColumnKind::Var { max_len } => (5, 0, max_len, false),
            };
            o.push(kind);
            o.extend_from_slice(&width.to_be_bytes());
            o.extend_from_slice(&max_len.to_be_bytes());
            o.push(u8::from(unsigned));
            o.push(u8::from(c.nullable));
            o.extend_from_slice(&c.collation.id().to_be_bytes());
            put_str(&mut o, &c.sql_type);
        }
        match &self.def.primary_key {
            None => o.push(0),
            Some(pk) => {
                o.push(1);
                o.extend_from_slice(&(pk.len() as u16).to_be_bytes());
                for &c in pk {
                    o.extend_from_slice(&(c as u16).to_be_bytes());
                }
            }
        }
        o.extend_from_slice(&(self.def.indexes.len() as u16).to_be_bytes());
        for (spec, loc) in self.def.indexes.iter().zip(&self.secondary) {
            o.extend_from_slice(&loc.id.to_be_bytes());
            o.extend_from_slice(&loc.root.to_be_bytes());
            put_str(&mut o, &spec.name);
            o.push(u8::from(spec.unique) | (u8::from(loc.incomplete) << 1));
            o.extend_from_slice(&(spec.columns.len() as u16).to_be_bytes());
            for &c in &spec.columns {
                o.extend_from_slice(&(c as u16).to_be_bytes());
            }
        }
        o.extend_from_slice(&self.clustered.0.to_be_bytes());
        o.extend_from_slice(&self.clustered.1.to_be_bytes());
        if let Some(p) = &self.renamed_from {
            o.push(TRAILER_RENAMED_FROM);
            put_str(&mut o, p);
        }
        let instant: Vec<(usize, &InstantValue)> = (self.def.columns.iter().enumerate())
            .filter_map(|(i, c)| c.instant.as_ref().map(|v| (i, v)))
            .collect();
        if !instant.is_empty() {
            o.push(TRAILER_INSTANT);
            o.extend_from_slice(&(instant.len() as u16).to_be_bytes());
            for (i, v) in instant {
                o.extend_from_slice(&(i as u16).to_be_bytes());
                match v {
                    InstantValue::Null => o.push(0),
                    InstantValue::Bytes(b) => {
                        o.push(1);
                        o.extend_from_slice(&(b.len() as u32).to_be_bytes());
                        o.extend_from_slice(b);
                    }
                }
            }
        }
        o
    }

    /// Decodes META; None if damaged.
    pub fn decode(name: &str, b: &[u8]) -> Option<TableMeta> {
        let mut r = Reader::new(b);
        if r.u8()? != 1 {
            return None;
        }
        let space = r.u32()?;
        let row_format = RowFormat::from_code(r.u8()?)?;
        let options = get_str(&mut r)?;
        let n = r.u16()?;
        let mut columns = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            let cname = get_str(&mut r)?;
            let kind = r.u8()?;
            let width = r.u16()?;
            let max_len = r.u32()?;
            let unsigned = r.u8()? != 0;
            let nullable = r.u8()? != 0;
            let collation = Collation::from_id(r.u16()?)?;
            let sql_type = get_str(&mut r)?;
            let kind = match kind {
                1 => ColumnKind::Int {
                    bytes: u8::try_from(width).ok()?,
                    unsigned,
                },
                2 => ColumnKind::Float,
                3 => ColumnKind::Double,
                4 => ColumnKind::Fixed(width),
                5 => ColumnKind::Var { max_len },
                _ => return None,
            };
            columns.push(ColumnDef {
                name: cname,
                kind,
                nullable,
                collation,
                sql_type,
                instant: None,
            });
        }
        let primary_key = if r.u8()? == 1 {
            let k = r.u16()?;
            let mut v = Vec::new();
            for _ in 0..k {
                v.push(usize::from(r.u16()?));
            }
            Some(v)
        } else {
            None
        };
        let ni = r.u16()?;
        let mut indexes = Vec::new();
        let mut secondary = Vec::new();
        for _ in 0..ni {
            let id = r.u64()?;
            let root = r.u32()?;
            let iname = get_str(&mut r)?;
            let flags = r.u8()?;
            let unique = flags & 1 != 0;
            let k = r.u16()?;
            let mut cols = Vec::new();
            for _ in 0..k {
                cols.push(usize::from(r.u16()?));
            }
            indexes.push(IndexSpec {
                name: iname,
                columns: cols,
                unique,
            });
            secondary.push(IndexLoc {
                id,
                root,
                incomplete: flags & 2 != 0,
            });
        }
        let clustered = (r.u64()?, r.u32()?);
        let mut renamed_from = None;
        let mut tags = 0u8;
        while !r.is_empty() {
            let tag = r.u8()?;
            // Each tag once, in increasing order.
            if tag <= tags {
                return None;
            }
            tags = tag;
            match tag {
                TRAILER_RENAMED_FROM => renamed_from = Some(get_str(&mut r)?),
                TRAILER_INSTANT => {
                    for _ in 0..r.u16()? {
                        let c = columns.get_mut(usize::from(r.u16()?))?;
                        let v = match r.u8()? {
                            0 => InstantValue::Null,
                            1 => {
                                let n = r.u32()?;
                                InstantValue::Bytes(r.bytes(usize::try_from(n).ok()?)?.to_vec())
                            }
                            _ => return None,
                        };
                        if c.instant.replace(v).is_some() {
                            return None;
                        }
                    }
                }
                _ => return None,
            }
        }
        let def = TableDef {
            name: name.into(),
            columns,
            primary_key,
            indexes,
            row_format,
            options,
        };
        Some(TableMeta {
            def,
            space,
            clustered,
            secondary,
            renamed_from,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_encode_in_order() {
        let c = ColumnDef::new(
            "a",
            ColumnKind::Int {
                bytes: 4,
                unsigned: false,
            },
        );
        let vals = [-2_147_483_648i64, -5, -1, 0, 1, 7, 2_147_483_647];
        let enc: Vec<Vec<u8>> = vals
            .iter()
            .map(|&v| {
                let mut o = Vec::new();
                encode(&c, &Value::Int(v), &mut o).unwrap();
                o
            })
            .collect();
        assert!(enc.windows(2).all(|w| w[0] < w[1]));
        for (v, e) in vals.iter().zip(&enc) {
            assert_eq!(decode(&c, Some(e)), Value::Int(*v));
        }
        assert!(encode(&c, &Value::Int(1 << 40), &mut Vec::new()).is_err());
        let d = ColumnDef::new("d", ColumnKind::Double);
        let ds = [-1e9, -0.5, 0.0, 0.25, 3e10];
        let enc: Vec<Vec<u8>> = ds
            .iter()
            .map(|&v| {
                let mut o = Vec::new();
                encode(&d, &Value::Double(v), &mut o).unwrap();
                o
            })
            .collect();
        assert!(enc.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(decode(&d, Some(&enc[1])), Value::Double(-0.5));
        let u = ColumnDef::new(
            "u",
            ColumnKind::Int {
                bytes: 8,
                unsigned: true,
            },
        );
        let mut o = Vec::new();
        encode(&u, &Value::UInt(u64::MAX), &mut o).unwrap();
        assert_eq!(decode(&u, Some(&o)), Value::UInt(u64::MAX));
        let s8 = ColumnDef::new(
            "s",
            ColumnKind::Int {
                bytes: 8,
                unsigned: false,
            },
        );
        let mut o = Vec::new();
        encode(&s8, &Value::Int(i64::MIN), &mut o).unwrap();
        assert_eq!(decode(&s8, Some(&o)), Value::Int(i64::MIN));
    }

    #[test]
    fn meta_roundtrip() {
        let def = TableDef::new(
            "db/t",
            vec![
                ColumnDef::new(
                    "id",
                    ColumnKind::Int {
                        bytes: 8,
                        unsigned: true,
                    },
                ),
                ColumnDef::new("name", ColumnKind::Var { max_len: 400 })
                    .nullable()
                    .collation(Collation::Utf8mb40900AiCi)
                    .sql_type("varchar(100)"),
            ],
            Some(vec![0]),
        )
        .index("k_name", vec![1], true);
        let m = TableMeta {
            def,
            space: 7,
            clustered: (10, 3),
            secondary: vec![IndexLoc {
                id: 11,
                root: 4,
                incomplete: true,
            }],
            renamed_from: None,
        };
        let b = m.encode();
        assert_eq!(TableMeta::decode("db/t", &b), Some(m.clone()));
        assert_eq!(TableMeta::decode("db/t", &b[..b.len() - 1]), None);
        // The rename trailer is optional: entries written without it still decode.
        let r = TableMeta {
            renamed_from: Some("old/x.ibd".into()),
            ..m
        };
        let rb = r.encode();
        assert_eq!(&rb[..b.len()], &b[..]);
        assert_eq!(TableMeta::decode("db/t", &rb), Some(r.clone()));
        assert_eq!(TableMeta::decode("db/t", &rb[..rb.len() - 1]), None);
        let mut bad = b.clone();
        bad.push(9);
        assert_eq!(TableMeta::decode("db/t", &bad), None, "unknown trailer tag");
        // Instantly added columns: their values in older rows follow the rename trailer.
        let mut i = r.clone();
        let added = |n: &str| ColumnDef::new(n, ColumnKind::INT).nullable();
        i.def
            .columns
            .push(added("n").added_instantly(&Value::Null).unwrap());
        i.def
            .columns
            .push(added("m").added_instantly(&Value::Int(7)).unwrap());
        assert_eq!(
            i.def.columns[3].instant,
            Some(InstantValue::Bytes(vec![0x80, 0, 0, 7]))
        );
        let ib = i.encode();
        assert_eq!(TableMeta::decode("db/t", &ib), Some(i.clone()));
        assert_eq!(TableMeta::decode("db/t", &ib[..ib.len() - 1]), None);
        i.renamed_from = None;
        assert_eq!(TableMeta::decode("db/t", &i.encode()), Some(i));
    }

    #[test]
    fn readable_as_allows_names_and_columns_added_last() {
        let base = TableDef::new(
            "db/t",
            vec![
                ColumnDef::new("a", ColumnKind::INT),
                ColumnDef::new("id", ColumnKind::BIGINT),
            ],
            Some(vec![1]),
        )
        .index("ka", vec![0], false);
        let mut renamed = base.clone();
        renamed.columns[0].name = "b".into();
        assert!(base.readable_as(&renamed) && renamed.readable_as(&base));
        // A column added last, instantly: readable one way only.
        let mut more = base.clone();
        let c = ColumnDef::new("c", ColumnKind::INT).nullable();
        more.columns
            .push(c.clone().added_instantly(&Value::Null).unwrap());
        assert!(base.readable_as(&more) && !more.readable_as(&base));
        // Not instantly: existing records would lack it.
        let mut plain = base.clone();
        plain.columns.push(c.clone());
        assert!(!base.readable_as(&plain));
        // Inserted before a column stored after it: the record order changes.
        let mut first = base.clone();
        first
            .columns
            .insert(0, c.added_instantly(&Value::Null).unwrap());
        first.primary_key = Some(vec![2]);
        first.indexes[0].columns = vec![1];
        assert!(!base.readable_as(&first));
        // A key column numbered differently, stored the same way (a hidden row id kept last).
        let hidden = TableDef::new(
            "db/h",
            vec![
                ColumnDef::new("a", ColumnKind::INT),
                ColumnDef::new("row", ColumnKind::Fixed(6)),
            ],
            Some(vec![1]),
        );
        let mut h2 = hidden.clone();
        let x = ColumnDef::new("x", ColumnKind::INT).added_instantly(&Value::Int(1));
        h2.columns.insert(1, x.unwrap());
        h2.primary_key = Some(vec![2]);
        assert!(hidden.readable_as(&h2));
        let mut wider = more.clone();
        wider.columns[2].instant = Some(InstantValue::Bytes(vec![0x80, 0, 0, 1]));
        assert!(
            !more.readable_as(&wider),
            "the older rows' value is part of the layout"
        );
    }
}
