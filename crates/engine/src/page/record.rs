//! Records inside INDEX pages: layout description, building, field access and key comparison.
//! (InnoDB: rem0rec, rem0cmp, data0data.) Byte layout: docs/format/record.md.
//!
//! A record does not describe its own schema; a [`RecLayout`] from the dictionary does. The
//! same format serves clustered rows, secondary entries and node pointers.
//!
//! Instant ADD COLUMN: a layout may end with fields that records written before the column was
//! added lack (`RecLayout::with_added`). Records of such a layout carry their field count and
//! null-bitmap size (REC_INFO_INSTANT); a record without that flag has the layout's core
//! fields. A field a record lacks reads as the layout's value for it (`FieldRange::from_layout`).
//!
//! INVARIANTS
//! - I1: `rec_len(rec)` equals the number of bytes `build` produced for it.
//! - I2: a record handed to these functions comes from a verified page or from `build`; the
//!   parsing functions still bound every offset by the record length so a damaged record yields
//!   `None` from `try_field_range`, which `check()` reports as corruption.
//! - I3: the fields of a layout are a prefix of the fields of every later layout of the same
//!   index (fields are only ever added at the end), so a record parses under any layout that
//!   has at least the fields it stores, and its first fields under an older one.

use std::cmp::Ordering;

use crate::collation::Collation;
use crate::mach::{read_u16, write_u16};

pub const REC_INFO_DELETED: u8 = 1;
pub const REC_INFO_MIN_REC: u8 = 2;
pub const REC_INFO_HAS_EXTERN: u8 = 4;
/// The record stores its field count and null-bitmap size (its layout has added fields).
pub const REC_INFO_INSTANT: u8 = 8;
/// Bytes of the local reference that replaces an off-page field.
pub const EXTERN_REF_SIZE: usize = 20;
/// Size of a child page number in a node pointer.
pub const CHILD_SIZE: u16 = 4;

const HDR: usize = 3;
/// N_FIELDS (u16) and NULL_BYTES (u8), after REC_INFO when REC_INFO_INSTANT is set.
const INSTANT_HDR: usize = 3;

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
    /// Nullable fields among the first `i` fields, for `i` in `0..=fields.len()`.
    nulls_before: Vec<u16>,
    /// Fields every record stores; the fields after them were added later (instant ADD
    /// COLUMN) and records written before lack them.
    n_core: usize,
    /// The value of each added field for records that lack it: a range of `added_buf`, None
    /// for NULL.
    added: Vec<Option<(usize, usize)>>,
    added_buf: Vec<u8>,
}

impl RecLayout {
    pub fn new(fields: Vec<FieldDef>, n_order: usize) -> Self {
        assert!(n_order <= fields.len());
        let mut null_pos = Vec::with_capacity(fields.len());
        let mut nulls_before = Vec::with_capacity(fields.len() + 1);
        let mut n = 0u16;
        for f in &fields {
            nulls_before.push(n);
            if f.nullable {
                null_pos.push(n);
                n += 1;
            } else {
                null_pos.push(u16::MAX);
            }
        }
        nulls_before.push(n);
        RecLayout {
            n_core: fields.len(),
            fields,
            n_order,
            null_pos,
            null_bytes: usize::from(n).div_ceil(8),
            nulls_before,
            added: Vec::new(),
            added_buf: Vec::new(),
        }
    }

    /// The layout with its last `values.len()` fields marked as added after records were
    /// written: a record that lacks one reads it as its value here (None: NULL). Added fields
    /// are never ordering fields.
    pub fn with_added(mut self, values: &[Option<Vec<u8>>]) -> Self {
        assert!(values.len() <= self.fields.len() - self.n_order);
        assert!(self.fields.len() <= usize::from(u16::MAX) && self.null_bytes <= 255);
        self.n_core = self.fields.len() - values.len();
        self.added.clear();
        self.added_buf.clear();
        for v in values {
            self.added.push(v.as_ref().map(|b| {
                self.added_buf.extend_from_slice(b);
                (self.added_buf.len() - b.len(), b.len())
            }));
        }
        self
    }

    /// Field `i`, which a record lacks (added after it was written): the layout's value, or
    /// None if `i` is not an added field (a damaged record).
    #[cold]
    fn added_field(&self, i: usize) -> Option<FieldRange> {
        let added = i.checked_sub(self.n_core).and_then(|k| self.added.get(k))?;
        Some(match added {
            None => FieldRange {
                from_layout: true,
                ..FieldRange::NULL
            },
            Some((start, len)) => FieldRange {
                start: *start,
                len: *len,
                null: false,
                ext: false,
                from_layout: true,
            },
        })
    }

    /// True if records of this layout carry their field count (some fields were added).
    pub fn has_added(&self) -> bool {
        self.n_core < self.fields.len()
    }

    /// Fields every record of this layout stores.
    pub fn n_core(&self) -> usize {
        self.n_core
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
        let mut n = HDR + self.null_bytes + if self.has_added() { INSTANT_HDR } else { 0 };
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
    let mut info = info;
    out.extend_from_slice(&[0, 0, info]);
    if layout.has_added() {
        info |= REC_INFO_INSTANT;
        out.extend_from_slice(&(layout.fields.len() as u16).to_be_bytes());
        out.push(layout.null_bytes as u8);
    }
    let nulls_at = out.len();
    out.resize(nulls_at + layout.null_bytes, 0);
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
    /// The record lacks the field (added after it was written): `start` and `len` locate its
    /// value in the layout. Read the bytes with `bytes`.
    pub from_layout: bool,
}

impl FieldRange {
    const NULL: FieldRange = FieldRange {
        start: 0,
        len: 0,
        null: true,
        ext: false,
        from_layout: false,
    };

    /// The field's bytes (None for NULL): from `rec`, or from `layout` for a field `rec` lacks.
    #[inline]
    pub fn bytes<'a>(&self, layout: &'a RecLayout, rec: &'a [u8]) -> Option<&'a [u8]> {
        if self.null {
            None
        } else if self.from_layout {
            Some(&layout.added_buf[self.start..self.start + self.len])
        } else {
            Some(&rec[self.start..self.start + self.len])
        }
    }
}

/// How a record stores its fields: how many, where the null bitmap is, where fields begin.
#[derive(Clone, Copy)]
struct Shape {
    n_fields: usize,
    nulls_at: usize,
    null_bytes: usize,
}

impl Shape {
    #[inline]
    fn of(layout: &RecLayout, rec: &[u8]) -> Option<Shape> {
        if rec.get(2)? & REC_INFO_INSTANT == 0 {
            return Some(Shape {
                n_fields: layout.n_core,
                nulls_at: HDR,
                null_bytes: usize::from(layout.nulls_before[layout.n_core]).div_ceil(8),
            });
        }
        let h = rec.get(HDR..HDR + INSTANT_HDR)?;
        Some(Shape {
            n_fields: usize::from(u16::from_be_bytes([h[0], h[1]])),
            nulls_at: HDR + INSTANT_HDR,
            null_bytes: usize::from(h[2]),
        })
    }
    #[inline]
    fn fields_at(&self) -> usize {
        self.nulls_at + self.null_bytes
    }
}

/// Walks the fields of a record in order (all fields of the layout: those the record lacks
/// come from the layout; a record storing more fields than the layout has, written under a
/// later layout, yields its first ones, I3).
pub struct FieldIter<'a> {
    layout: &'a RecLayout,
    rec: &'a [u8],
    i: usize,
    pos: usize,
    /// None: the header does not parse.
    shape: Option<Shape>,
}

impl<'a> FieldIter<'a> {
    #[inline]
    pub fn new(layout: &'a RecLayout, rec: &'a [u8]) -> Self {
        let shape = Shape::of(layout, rec);
        FieldIter {
            layout,
            rec,
            i: 0,
            pos: shape.map_or(0, |s| s.fields_at()),
            shape,
        }
    }
}

impl Iterator for FieldIter<'_> {
    /// None from the inner Option means the record is malformed.
    type Item = Option<FieldRange>;

    // Inlined into each walk over a record's fields (the hottest loop of a scan).
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let f = self.layout.fields.get(self.i)?;
        let i = self.i;
        let np = self.layout.null_pos[i];
        self.i += 1;
        let Some(shape) = self.shape else {
            return Some(None);
        };
        if i >= shape.n_fields {
            return Some(self.layout.added_field(i));
        }
        if np != u16::MAX {
            let np = usize::from(np);
            if np / 8 >= shape.null_bytes {
                return Some(None);
            }
            let byte = self.rec.get(shape.nulls_at + np / 8)?;
            if byte & (1 << (np % 8)) != 0 {
                return Some(Some(FieldRange {
                    start: self.pos,
                    ..FieldRange::NULL
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
            from_layout: false,
        }))
    }
}

/// The places of the first `n` fields of `rec` in `out` (emptied first), so that several
/// readers of one record walk its fields once (InnoDB's rec_get_offsets). Panics on a
/// malformed record, as `field` does.
pub fn field_ranges(layout: &RecLayout, rec: &[u8], n: usize, out: &mut Vec<FieldRange>) {
    out.clear();
    for r in FieldIter::new(layout, rec).take(n) {
        out.push(r.expect("malformed record on a verified page"));
    }
}

/// The bytes of field `i` (None for NULL). Panics on a malformed record: records reach this only
/// from verified pages (I2).
pub fn field<'a>(layout: &'a RecLayout, rec: &'a [u8], i: usize) -> Option<&'a [u8]> {
    field_range(layout, rec, i).bytes(layout, rec)
}

pub fn field_range(layout: &RecLayout, rec: &[u8], i: usize) -> FieldRange {
    try_field_range(layout, rec, i).expect("malformed record on a verified page")
}

pub fn try_field_range(layout: &RecLayout, rec: &[u8], i: usize) -> Option<FieldRange> {
    FieldIter::new(layout, rec).nth(i).flatten()
}

/// Checks that a record of this layout parses completely and ends exactly at its length.
pub fn validate(layout: &RecLayout, rec: &[u8]) -> bool {
    let Some(shape) = Shape::of(layout, rec) else {
        return false;
    };
    if rec.len() < shape.fields_at()
        || rec_len(rec) != rec.len()
        || !(layout.n_core..=layout.fields.len()).contains(&shape.n_fields)
        || shape.null_bytes != usize::from(layout.nulls_before[shape.n_fields]).div_ceil(8)
        || (info(rec) & REC_INFO_INSTANT != 0 && !layout.has_added())
    {
        return false;
    }
    let mut end = shape.fields_at();
    for r in FieldIter::new(layout, rec) {
        match r {
            Some(r) if r.from_layout => {}
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
            t.push(r.bytes(layout, rec));
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
            FieldType::Fixed(_) => cmp_fixed(a, b),
            FieldType::Var { .. } => f.collation.compare(a, b),
        },
    }
}

/// Bytewise comparison of fixed-length fields: the usual lengths of keys (integers, row and
/// transaction ids) as big-endian numbers, in registers, without a call to memcmp.
#[inline]
fn cmp_fixed(a: &[u8], b: &[u8]) -> Ordering {
    fn be(x: &[u8]) -> u64 {
        x.iter().fold(0u64, |v, &c| (v << 8) | u64::from(c))
    }
    match (a.len(), b.len()) {
        (4, 4) => u32::from_be_bytes([a[0], a[1], a[2], a[3]])
            .cmp(&u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        (8, 8) => {
            let x = u64::from_be_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]);
            x.cmp(&u64::from_be_bytes([
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
            ]))
        }
        (n, m) if n == m && n < 8 => be(a).cmp(&be(b)),
        _ => a.cmp(b),
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
        let o = cmp_field(&layout.fields[i], tuple.get(i), r.bytes(layout, rec));
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
        let o = cmp_field(&layout.fields[i], ra.bytes(layout, a), rb.bytes(layout, b));
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
    fn fixed_fields_compare_bytewise() {
        let samples: [&[u8]; 12] = [
            &[],
            &[0],
            &[0xff],
            &[1, 2],
            &[1, 3],
            &[0, 0, 0, 1],
            &[0x80, 0, 0, 0],
            &[0x7f, 0xff, 0xff, 0xff],
            &[1, 2, 3, 4, 5, 6],
            &[1, 2, 3, 4, 5, 7],
            &[0, 0, 0, 0, 0, 0, 0, 9],
            &[0xff, 0, 0, 0, 0, 0, 0, 0],
        ];
        for a in samples {
            for b in samples {
                assert_eq!(cmp_fixed(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
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
    fn added_fields_read_from_the_layout() {
        let v1 = layout();
        let mut old = Vec::new();
        let long = vec![3u8; 200];
        fn vals<'a>(extra: &[FieldVal<'a>]) -> Vec<FieldVal<'a>> {
            let mut v = vec![
                FieldVal::Bytes(&[0, 0, 0, 9]),
                FieldVal::Null,
                FieldVal::Bytes(b"xyz"),
                FieldVal::Bytes(&[4, 2]),
            ];
            v.extend_from_slice(extra);
            v
        }
        build(&v1, 0, vals(&[]), &mut old);
        assert_eq!(info(&old) & REC_INFO_INSTANT, 0);
        // Two fields added: a nullable one that older records read as NULL, and a NOT NULL
        // one that they read as "dflt".
        let mut f2 = v1.fields.clone();
        f2.push(FieldDef::fixed(2).nullable());
        f2.push(FieldDef::var(100));
        let v2 = RecLayout::new(f2, 2).with_added(&[None, Some(b"dflt".to_vec())]);
        assert!(validate(&v2, &old));
        assert_eq!(field(&v2, &old, 3), Some(&[4u8, 2][..]));
        assert_eq!(field(&v2, &old, 4), None);
        assert_eq!(field(&v2, &old, 5), Some(&b"dflt"[..]));
        assert!(try_field_range(&v2, &old, 5).is_some_and(|r| r.from_layout));
        // A record of the new layout stores every field and says how many.
        let mut new = Vec::new();
        build(
            &v2,
            REC_INFO_DELETED,
            vals(&[FieldVal::Null, FieldVal::Bytes(&long)]),
            &mut new,
        );
        assert_eq!(
            info(&new),
            REC_INFO_DELETED | REC_INFO_INSTANT,
            "other flags kept"
        );
        let lens = [
            Some((4, false)),
            None,
            Some((3, false)),
            Some((2, false)),
            None,
            Some((200, false)),
        ];
        assert_eq!(v2.encoded_len(lens.into_iter()), new.len());
        assert!(validate(&v2, &new));
        assert_eq!(field(&v2, &new, 5), Some(&long[..]));
        assert_eq!(field(&v2, &new, 4), None);
        // Under the older layout its first fields still read (I3), but it is not one of its
        // records.
        assert_eq!(field(&v1, &new, 2), Some(&b"xyz"[..]));
        assert!(!validate(&v1, &new));
        // A third field added later: both older records read its value.
        let mut f3 = v2.fields.clone();
        f3.push(FieldDef::fixed(4));
        let v3 =
            RecLayout::new(f3, 2).with_added(&[None, Some(b"dflt".to_vec()), Some(vec![7; 4])]);
        for r in [&old, &new] {
            assert!(validate(&v3, r));
            assert_eq!(field(&v3, r, 6), Some(&[7u8; 4][..]));
        }
        assert_eq!(field(&v3, &new, 5), Some(&long[..]));
        assert_eq!(cmp_rec_rec(&v3, &old, &new), Ordering::Equal);
        // A damaged count is reported, not followed.
        let mut bad = new.clone();
        bad[3..5].copy_from_slice(&9u16.to_be_bytes());
        assert!(!validate(&v2, &bad));
        bad[3..5].copy_from_slice(&3u16.to_be_bytes());
        assert!(!validate(&v2, &bad), "fewer fields than the core");
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
