//! Records inside INDEX pages: layout description, building, field access and key comparison.
//! (InnoDB: rem0rec, rem0cmp, data0data.) Byte layout: docs/format/record.md.
//!
//! A record does not describe its own schema; a [`RecLayout`] from the dictionary does. The
//! same format serves clustered rows, secondary entries and node pointers.
//!
//! INVARIANTS
//! - I1: `rec_len(rec)` equals the number of bytes `build` produced for it.
//! - I2: a record handed to these functions comes from a verified page or from `build`; the
//!   parsing functions still bound every offset by the record length so a damaged record yields
//!   `None` from `try_field_range`, which `check()` reports as corruption.

use std::cmp::Ordering;

use crate::collation::Collation;
use crate::mach::{read_u16, write_u16};

pub const REC_INFO_DELETED: u8 = 1;
pub const REC_INFO_MIN_REC: u8 = 2;
pub const REC_INFO_HAS_EXTERN: u8 = 4;
/// Bytes of the local reference that replaces an off-page field.
pub const EXTERN_REF_SIZE: usize = 20;
/// Size of a child page number in a node pointer.
pub const CHILD_SIZE: u16 = 4;

const HDR: usize = 3;

/// Storage kind of one field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FieldType {
    /// Always this many bytes (integers, packed temporal values, DECIMAL, BINARY(n)).
    Fixed(u16),
    /// Up to `max_len` bytes (a value past the record limit is stored off-page).
    Var { max_len: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    pub ty: FieldType,
    pub nullable: bool,
    /// How this field compares when it is part of the ordering key.
    pub collation: Collation,
}

impl FieldDef {
    pub fn fixed(len: u16) -> Self {
        FieldDef {
            ty: FieldType::Fixed(len),
            nullable: false,
            collation: Collation::Binary,
        }
    }
    pub fn var(max_len: u32) -> Self {
        FieldDef {
            ty: FieldType::Var { max_len },
            nullable: false,
            collation: Collation::Binary,
        }
    }
    pub fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }
    pub fn with_collation(mut self, c: Collation) -> Self {
        self.collation = c;
        self
    }
}

/// The field list of one kind of record, and how many leading fields order it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecLayout {
    pub fields: Vec<FieldDef>,
    /// Number of leading fields that define the record order (the B-tree key).
    pub n_order: usize,
    null_pos: Vec<u16>,
    null_bytes: usize,
}

impl RecLayout {
    pub fn new(fields: Vec<FieldDef>, n_order: usize) -> Self {
        assert!(n_order <= fields.len());
        let mut null_pos = Vec::with_capacity(fields.len());
        let mut n = 0u16;
        for f in &fields {
            if f.nullable {
                null_pos.push(n);
                n += 1;
            } else {
                null_pos.push(u16::MAX);
            }
        }
        RecLayout {
            fields,
            n_order,
            null_pos,
            null_bytes: usize::from(n).div_ceil(8),
        }
    }

    /// Layout of node pointers above leaves of this layout: the ordering fields plus the child
    /// page number.
    pub fn node_ptr_layout(&self) -> RecLayout {
        let mut f: Vec<FieldDef> = self.fields[..self.n_order].to_vec();
        f.push(FieldDef::fixed(CHILD_SIZE));
        RecLayout::new(f, self.n_order)
    }

    pub fn n_fields(&self) -> usize {
        self.fields.len()
    }

    /// Bytes `build` produces for fields of these lengths (None = NULL; `true` = stored
    /// off-page, given as its 20-byte reference).
    pub fn encoded_len(&self, lens: impl Iterator<Item = Option<(usize, bool)>>) -> usize {
        let mut n = HDR + self.null_bytes;
        for (f, len) in self.fields.iter().zip(lens) {
            let Some((len, ext)) = len else { continue };
            n += match f.ty {
                FieldType::Fixed(l) => usize::from(l),
                FieldType::Var { .. } => len + if len < 0x80 && !ext { 1 } else { 3 },
            };
        }
        n
    }
}

/// One field value to build a record from.
#[derive(Clone, Copy, Debug)]
pub enum FieldVal<'a> {
    Null,
    Bytes(&'a [u8]),
    /// An off-page reference (exactly EXTERN_REF_SIZE bytes).
    Extern(&'a [u8]),
}

/// Appends a record to `out`. Panics if a fixed field has the wrong width or a NULL is given for
/// a NOT NULL field: callers validate user input before building (broken invariant otherwise).
pub fn build<'a>(
    layout: &RecLayout,
    info: u8,
    vals: impl IntoIterator<Item = FieldVal<'a>>,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.extend_from_slice(&[0, 0, info]);
    let nulls_at = out.len();
    out.resize(nulls_at + layout.null_bytes, 0);
    let mut info = info;
    let mut count = 0;
    for (i, v) in vals.into_iter().enumerate() {
        let f = &layout.fields[i];
        count += 1;
        match v {
            FieldVal::Null => {
                assert!(f.nullable, "NULL for a NOT NULL field {i}");
                let p = usize::from(layout.null_pos[i]);
                out[nulls_at + p / 8] |= 1 << (p % 8);
            }
            FieldVal::Bytes(b) => match f.ty {
                FieldType::Fixed(l) => {
                    assert_eq!(b.len(), usize::from(l), "fixed field {i} width");
                    out.extend_from_slice(b);
                }
                FieldType::Var { .. } => {
                    push_len(out, b.len(), false);
                    out.extend_from_slice(b);
                }
            },
            FieldVal::Extern(r) => {
                assert_eq!(r.len(), EXTERN_REF_SIZE);
                assert!(matches!(f.ty, FieldType::Var { .. }));
                push_len(out, r.len(), true);
                out.extend_from_slice(r);
                info |= REC_INFO_HAS_EXTERN;
            }
        }
    }
    assert_eq!(count, layout.fields.len(), "field count");
    let len = out.len() - start;
    let len16 = u16::try_from(len).expect("record longer than 64 KiB"); // callers bound records
    write_u16(out, start, len16);
    out[start + 2] = info;
}

fn push_len(out: &mut Vec<u8>, len: usize, ext: bool) {
    if len < 0x80 && !ext {
        out.push(len as u8);
    } else {
        out.push(0x80 | if ext { 0x40 } else { 0 });
        out.extend_from_slice(&(len as u16).to_be_bytes());
    }
}

#[inline]
pub fn rec_len(rec: &[u8]) -> usize {
    usize::from(read_u16(rec, 0))
}
#[inline]
pub fn info(rec: &[u8]) -> u8 {
    rec[2]
}
#[inline]
pub fn is_min_rec(rec: &[u8]) -> bool {
    rec[2] & REC_INFO_MIN_REC != 0
}
#[inline]
pub fn is_deleted(rec: &[u8]) -> bool {
    rec[2] & REC_INFO_DELETED != 0
}

/// Where one field lies inside a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldRange {
    pub start: usize,
    pub len: usize,
    pub null: bool,
    pub ext: bool,
}

/// Walks the fields of a record in order.
pub struct FieldIter<'a> {
    layout: &'a RecLayout,
    rec: &'a [u8],
    i: usize,
    pos: usize,
}

impl<'a> FieldIter<'a> {
    pub fn new(layout: &'a RecLayout, rec: &'a [u8]) -> Self {
        FieldIter {
            layout,
            rec,
            i: 0,
            pos: HDR + layout.null_bytes,
        }
    }
}

impl Iterator for FieldIter<'_> {
    /// None from the inner Option means the record is malformed.
    type Item = Option<FieldRange>;

    fn next(&mut self) -> Option<Self::Item> {
        let f = self.layout.fields.get(self.i)?;
        let np = self.layout.null_pos[self.i];
        self.i += 1;
        if np != u16::MAX {
            let byte = self.rec.get(HDR + usize::from(np) / 8)?;
            if byte & (1 << (np % 8)) != 0 {
                return Some(Some(FieldRange {
                    start: self.pos,
                    len: 0,
                    null: true,
                    ext: false,
                }));
            }
        }
        let (start, len, ext) = match f.ty {
            FieldType::Fixed(l) => (self.pos, usize::from(l), false),
            FieldType::Var { .. } => {
                let Some(&b0) = self.rec.get(self.pos) else {
                    return Some(None);
                };
                if b0 & 0x80 == 0 {
                    (self.pos + 1, usize::from(b0), false)
                } else {
                    let Some(l) = self.rec.get(self.pos + 1..self.pos + 3) else {
                        return Some(None);
                    };
                    (
                        self.pos + 3,
                        usize::from(u16::from_be_bytes([l[0], l[1]])),
                        b0 & 0x40 != 0,
                    )
                }
            }
        };
        if start + len > self.rec.len() {
            return Some(None);
        }
        self.pos = start + len;
        Some(Some(FieldRange {
            start,
            len,
            null: false,
            ext,
        }))
    }
}

/// The bytes of field `i` (None for NULL). Panics on a malformed record: records reach this only
/// from verified pages (I2).
pub fn field<'a>(layout: &RecLayout, rec: &'a [u8], i: usize) -> Option<&'a [u8]> {
    let r = field_range(layout, rec, i);
    if r.null {
        None
    } else {
        Some(&rec[r.start..r.start + r.len])
    }
}

pub fn field_range(layout: &RecLayout, rec: &[u8], i: usize) -> FieldRange {
    try_field_range(layout, rec, i).expect("malformed record on a verified page")
}

pub fn try_field_range(layout: &RecLayout, rec: &[u8], i: usize) -> Option<FieldRange> {
    FieldIter::new(layout, rec).nth(i).flatten()
}

/// Checks that a record parses completely and ends exactly at its length.
pub fn validate(layout: &RecLayout, rec: &[u8]) -> bool {
    if rec.len() < HDR + layout.null_bytes || rec_len(rec) != rec.len() {
        return false;
    }
    let mut end = HDR + layout.null_bytes;
    for r in FieldIter::new(layout, rec) {
        match r {
            Some(r) => end = r.start + r.len,
            None => return false,
        }
    }
    end == rec.len()
}

/// A search key or a list of field values, stored in one buffer.
#[derive(Clone, Default, Debug, PartialEq, Eq, Hash)]
pub struct Tuple {
    buf: Vec<u8>,
    /// (start, len); len == u32::MAX marks NULL.
    fields: Vec<(u32, u32)>,
}

impl Tuple {
    pub fn new() -> Self {
        Tuple::default()
    }
    pub fn with_capacity(fields: usize, bytes: usize) -> Self {
        Tuple {
            buf: Vec::with_capacity(bytes),
            fields: Vec::with_capacity(fields),
        }
    }
    pub fn push(&mut self, v: Option<&[u8]>) {
        match v {
            Some(b) => {
                self.fields.push((self.buf.len() as u32, b.len() as u32));
                self.buf.extend_from_slice(b);
            }
            None => self.fields.push((0, u32::MAX)),
        }
    }
    pub fn len(&self) -> usize {
        self.fields.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let (s, l) = self.fields[i];
        if l == u32::MAX {
            None
        } else {
            Some(&self.buf[s as usize..(s + l) as usize])
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
    pub fn truncate(&mut self, n: usize) {
        self.fields.truncate(n);
    }
    pub fn clear(&mut self) {
        self.buf.clear();
        self.fields.clear();
    }
    /// The first `n` fields of a record.
    pub fn from_rec(layout: &RecLayout, rec: &[u8], n: usize) -> Tuple {
        let mut t = Tuple::with_capacity(n, rec.len());
        for r in FieldIter::new(layout, rec).take(n) {
            let r = r.expect("malformed record on a verified page");
            t.push(if r.null {
                None
            } else {
                Some(&rec[r.start..r.start + r.len])
            });
        }
        t
    }
}

/// Compares two non-NULL-or-NULL field values under a field's collation. NULL sorts first.
#[inline]
pub fn cmp_field(f: &FieldDef, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => match f.ty {
            FieldType::Fixed(_) => a.cmp(b),
            FieldType::Var { .. } => f.collation.compare(a, b),
        },
    }
}

/// Compares a search tuple with a record on the first `min(tuple.len(), n_order)` fields. A
/// MIN_REC record is lower than every tuple. Equal means the record matches the tuple's prefix.
pub fn cmp_tuple_rec(layout: &RecLayout, tuple: &Tuple, rec: &[u8]) -> Ordering {
    if is_min_rec(rec) {
        return Ordering::Greater;
    }
    let n = tuple.len().min(layout.n_order);
    for (i, r) in FieldIter::new(layout, rec).take(n).enumerate() {
        let r = r.expect("malformed record on a verified page");
        let rv = if r.null {
            None
        } else {
            Some(&rec[r.start..r.start + r.len])
        };
        let o = cmp_field(&layout.fields[i], tuple.get(i), rv);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Compares two records of the same layout on their ordering fields (MIN_REC lowest).
pub fn cmp_rec_rec(layout: &RecLayout, a: &[u8], b: &[u8]) -> Ordering {
    match (is_min_rec(a), is_min_rec(b)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    let ia = FieldIter::new(layout, a).take(layout.n_order);
    let ib = FieldIter::new(layout, b);
    for (i, (ra, rb)) in ia.zip(ib).enumerate() {
        let (ra, rb) = (ra.expect("malformed record"), rb.expect("malformed record"));
        let va = if ra.null {
            None
        } else {
            Some(&a[ra.start..ra.start + ra.len])
        };
        let vb = if rb.null {
            None
        } else {
            Some(&b[rb.start..rb.start + rb.len])
        };
        let o = cmp_field(&layout.fields[i], va, vb);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> RecLayout {
        RecLayout::new(
            vec![
                FieldDef::fixed(4),
                FieldDef::var(100)
                    .nullable()
                    .with_collation(Collation::Utf8mb4GeneralCi),
                FieldDef::var(70000),
                FieldDef::fixed(2).nullable(),
            ],
            2,
        )
    }

    #[test]
    fn build_and_read_fields() {
        let l = layout();
        let long = vec![7u8; 300];
        let mut out = vec![0xAA]; // records are appended
        build(
            &l,
            0,
            [
                FieldVal::Bytes(&[0, 0, 0, 5]),
                FieldVal::Null,
                FieldVal::Bytes(&long),
                FieldVal::Bytes(&[1, 2]),
            ],
            &mut out,
        );
        let rec = &out[1..];
        assert_eq!(rec_len(rec), rec.len());
        assert!(validate(&l, rec));
        assert_eq!(field(&l, rec, 0), Some(&[0u8, 0, 0, 5][..]));
        assert_eq!(field(&l, rec, 1), None);
        assert_eq!(field(&l, rec, 2), Some(&long[..]));
        assert_eq!(field(&l, rec, 3), Some(&[1u8, 2][..]));
        let lens = [Some((4, false)), None, Some((300, false)), Some((2, false))];
        assert_eq!(l.encoded_len(lens.into_iter()), rec.len());
        // Truncating breaks validation rather than panicking.
        assert!(!validate(&l, &rec[..rec.len() - 1]));
    }

    #[test]
    fn extern_flag_and_compare() {
        let l = layout();
        let mut a = Vec::new();
        let r = [9u8; EXTERN_REF_SIZE];
        build(
            &l,
            0,
            [
                FieldVal::Bytes(&[0, 0, 0, 5]),
                FieldVal::Bytes(b"abc"),
                FieldVal::Extern(&r),
                FieldVal::Null,
            ],
            &mut a,
        );
        assert!(info(&a) & REC_INFO_HAS_EXTERN != 0);
        let lens = [
            Some((4, false)),
            Some((3, false)),
            Some((EXTERN_REF_SIZE, true)),
            None,
        ];
        assert_eq!(l.encoded_len(lens.into_iter()), a.len());
        assert!(field_range(&l, &a, 2).ext);
        let mut t = Tuple::new();
        t.push(Some(&[0, 0, 0, 5]));
        t.push(Some(b"ABC "));
        assert_eq!(cmp_tuple_rec(&l, &t, &a), Ordering::Equal);
        t.truncate(1);
        assert_eq!(cmp_tuple_rec(&l, &t, &a), Ordering::Equal);
        let mut t2 = Tuple::new();
        t2.push(Some(&[0, 0, 0, 5]));
        t2.push(None);
        assert_eq!(cmp_tuple_rec(&l, &t2, &a), Ordering::Less);
        let np = l.node_ptr_layout();
        let mut p = Vec::new();
        build(
            &np,
            REC_INFO_MIN_REC,
            [
                FieldVal::Bytes(&[0, 0, 0, 1]),
                FieldVal::Null,
                FieldVal::Bytes(&[0, 0, 0, 9]),
            ],
            &mut p,
        );
        assert_eq!(cmp_tuple_rec(&np, &t2, &p), Ordering::Greater);
        assert_eq!(Tuple::from_rec(&l, &a, 2), {
            let mut x = Tuple::new();
            x.push(Some(&[0, 0, 0, 5]));
            x.push(Some(b"abc"));
            x
        });
    }
}
