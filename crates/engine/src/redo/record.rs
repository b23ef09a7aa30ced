//! Redo records: encoding (used by the mini-transaction), parsing and applying (used by
//! recovery). Byte layout: docs/format/redo.md, "Records".
//!
//! INVARIANTS
//! - I1: `apply` performs exactly the page change the mini-transaction made when it logged the
//!   record, by calling the same page function (page::index_page, page::init), so replay is
//!   byte-identical.
//! - I2: parsing and applying never panic on damaged input: every length and offset is checked
//!   and a bad record is an error (recovery then refuses to start rather than guess).
//! - I3: a `Group` is the body of one redo group: a record for the same page as the group's
//!   previous record carries SAME_PAGE instead of its page id, so the records of a group are
//!   parsed in order from its start (`parse` is given the previous record's page); a WRITE
//!   that continues the previous WRITE on the same page is merged into it, and a REC_UPDATE
//!   that keeps the record's length is logged as REC_PATCH (its changed byte ranges) when
//!   that is shorter. Each form applies to the same bytes as the change it stands for.

use crate::mach::{put_varint, Reader};
use crate::page::{self, index_page, PageType, FIL_PAGE_PREV, FIL_TRAILER_SIZE};
use crate::types::{PageId, PageNo};

pub const PAGE_INIT: u8 = 1;
pub const INDEX_INIT: u8 = 2;
pub const WRITE: u8 = 3;
pub const REC_INSERT: u8 = 4;
pub const REC_DELETE: u8 = 5;
pub const REC_DELETE_RANGE: u8 = 6;
pub const REC_UPDATE: u8 = 7;
pub const REC_INSERT_MANY: u8 = 8;
pub const SET_LINKS: u8 = 9;
pub const REC_PATCH: u8 = 10;
/// Type-byte flag: the record is for the page of the group's previous record (I3).
pub const SAME_PAGE: u8 = 0x80;

/// Two changed byte runs of a patched record closer than this are logged as one range (a
/// range costs an offset and a length, two bytes or more).
const PATCH_GAP: usize = 4;

/// One parsed record body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    PageInit {
        ty: u16,
    },
    IndexInit {
        level: u16,
        index_id: u64,
    },
    Write {
        off: u16,
        data: &'a [u8],
    },
    RecInsert {
        slot: u16,
        rec: &'a [u8],
    },
    RecDelete {
        slot: u16,
    },
    RecDeleteRange {
        from: u16,
        to: u16,
    },
    RecUpdate {
        slot: u16,
        rec: &'a [u8],
    },
    /// `ranges` is the raw sequence of `off: varint, len: varint, bytes` triples, `n` of them.
    RecPatch {
        slot: u16,
        n: u32,
        ranges: &'a [u8],
    },
    /// `recs` is the raw sequence of `len: varint, record` pairs.
    RecInsertMany {
        slot: u16,
        n: u16,
        recs: &'a [u8],
    },
    SetLinks {
        prev: PageNo,
        next: PageNo,
    },
}

impl Body<'_> {
    /// True if the record rebuilds the page from nothing (no need to read the old image).
    pub fn initialises(&self) -> bool {
        matches!(self, Body::PageInit { .. } | Body::IndexInit { .. })
    }
}

/// The body of one redo group as a mini-transaction builds it (I3).
#[derive(Default)]
pub struct Group {
    bytes: Vec<u8>,
    /// The page of the last record.
    last: Option<PageId>,
    /// When the last record is a WRITE: where its length field and its data start, and the
    /// page offset just after the bytes it writes.
    open_write: Option<(usize, usize, usize)>,
}

impl Group {
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn head(&mut self, ty: u8, id: PageId) {
        self.open_write = None;
        if self.last == Some(id) {
            self.bytes.push(ty | SAME_PAGE);
        } else {
            self.bytes.push(ty);
            put_varint(&mut self.bytes, u64::from(id.space));
            put_varint(&mut self.bytes, u64::from(id.page));
            self.last = Some(id);
        }
    }

    pub fn page_init(&mut self, id: PageId, ty: PageType) {
        self.head(PAGE_INIT, id);
        self.bytes.extend_from_slice(&(ty as u16).to_be_bytes());
    }

    pub fn index_init(&mut self, id: PageId, level: u16, index_id: u64) {
        self.head(INDEX_INIT, id);
        self.bytes.extend_from_slice(&level.to_be_bytes());
        self.bytes.extend_from_slice(&index_id.to_be_bytes());
    }

    pub fn write(&mut self, id: PageId, off: usize, data: &[u8]) {
        if let Some((len_at, data_at, end)) = self.open_write {
            if self.last == Some(id) && end == off {
                // The previous WRITE ends where this one begins: one record for both.
                let old = self.bytes.len() - data_at;
                let new = old + data.len();
                if varint_len(new) == varint_len(old) {
                    // The length field keeps its width: rewrite it in place.
                    let mut v = new;
                    for b in &mut self.bytes[len_at..data_at] {
                        *b = (v as u8 & 0x7f) | if v >= 0x80 { 0x80 } else { 0 };
                        v >>= 7;
                    }
                    self.bytes.extend_from_slice(data);
                    self.open_write = Some((len_at, data_at, end + data.len()));
                } else {
                    let mut merged = self.bytes.split_off(data_at);
                    merged.extend_from_slice(data);
                    self.bytes.truncate(len_at);
                    put_varint(&mut self.bytes, new as u64);
                    let data_at = self.bytes.len();
                    self.bytes.extend_from_slice(&merged);
                    self.open_write = Some((len_at, data_at, end + data.len()));
                }
                return;
            }
        }
        self.head(WRITE, id);
        self.bytes.extend_from_slice(&(off as u16).to_be_bytes());
        let len_at = self.bytes.len();
        put_varint(&mut self.bytes, data.len() as u64);
        let data_at = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.open_write = Some((len_at, data_at, off + data.len()));
    }

    pub fn rec(&mut self, ty: u8, id: PageId, slot: usize, rec: &[u8]) {
        debug_assert!(ty == REC_INSERT || ty == REC_UPDATE);
        self.head(ty, id);
        self.bytes.extend_from_slice(&(slot as u16).to_be_bytes());
        put_varint(&mut self.bytes, rec.len() as u64);
        self.bytes.extend_from_slice(rec);
    }

    /// The replacement of record `old` in `slot` by `new`: REC_PATCH with the changed ranges
    /// when the length is kept and that is shorter, else REC_UPDATE.
    pub fn rec_update(&mut self, id: PageId, slot: usize, old: &[u8], new: &[u8]) {
        if old.len() != new.len() {
            return self.rec(REC_UPDATE, id, slot, new);
        }
        // One pass: the patch is written as the ranges are found, and taken back for the whole
        // record once it would not be shorter (or would need more than 127 ranges).
        let (start, last) = (self.bytes.len(), self.last);
        self.head(REC_PATCH, id);
        self.bytes.extend_from_slice(&(slot as u16).to_be_bytes());
        let count_at = self.bytes.len();
        self.bytes.push(0);
        let limit = count_at + varint_len(new.len()) + new.len();
        let mut n = 0u8;
        for (off, len) in changed_ranges(old, new) {
            put_varint(&mut self.bytes, off as u64);
            put_varint(&mut self.bytes, len as u64);
            self.bytes.extend_from_slice(&new[off..off + len]);
            n += 1;
            if self.bytes.len() >= limit || n == 0x80 {
                self.bytes.truncate(start);
                self.last = last;
                return self.rec(REC_UPDATE, id, slot, new);
            }
        }
        self.bytes[count_at] = n;
    }

    pub fn delete(&mut self, id: PageId, slot: usize) {
        self.head(REC_DELETE, id);
        self.bytes.extend_from_slice(&(slot as u16).to_be_bytes());
    }

    pub fn delete_range(&mut self, id: PageId, from: usize, to: usize) {
        self.head(REC_DELETE_RANGE, id);
        self.bytes.extend_from_slice(&(from as u16).to_be_bytes());
        self.bytes.extend_from_slice(&(to as u16).to_be_bytes());
    }

    pub fn insert_many<'a>(
        &mut self,
        id: PageId,
        slot: usize,
        recs: impl ExactSizeIterator<Item = &'a [u8]>,
    ) {
        self.head(REC_INSERT_MANY, id);
        self.bytes.extend_from_slice(&(slot as u16).to_be_bytes());
        self.bytes
            .extend_from_slice(&(recs.len() as u16).to_be_bytes());
        for r in recs {
            put_varint(&mut self.bytes, r.len() as u64);
            self.bytes.extend_from_slice(r);
        }
    }

    pub fn set_links(&mut self, id: PageId, prev: PageNo, next: PageNo) {
        self.head(SET_LINKS, id);
        self.bytes.extend_from_slice(&prev.to_be_bytes());
        self.bytes.extend_from_slice(&next.to_be_bytes());
    }
}

/// Bytes `put_varint` takes for `v`.
fn varint_len(v: usize) -> usize {
    (usize::BITS - (v | 1).leading_zeros()).div_ceil(7) as usize
}

/// The (offset, length) runs where `new` differs from `old` (same length), runs closer than
/// PATCH_GAP joined.
fn changed_ranges<'a>(old: &'a [u8], new: &'a [u8]) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < new.len() && old[i] == new[i] {
            i += 1;
        }
        if i == new.len() {
            return None;
        }
        let start = i;
        let mut end = i + 1;
        i += 1;
        while i < new.len() {
            if old[i] != new[i] {
                end = i + 1;
            } else if i - end >= PATCH_GAP {
                break;
            }
            i += 1;
        }
        i = end;
        Some((start, end - start))
    })
}

/// Parses one record at the reader's position; `prev` is the page of the group's previous
/// record (I3). None = malformed.
pub fn parse<'a>(r: &mut Reader<'a>, prev: Option<PageId>) -> Option<(PageId, Body<'a>)> {
    let ty = r.u8()?;
    let id = if ty & SAME_PAGE != 0 {
        prev?
    } else {
        let space = r.varint_u32()?;
        let page = r.varint_u32()?;
        PageId::new(space, page)
    };
    let ty = ty & !SAME_PAGE;
    let body = match ty {
        PAGE_INIT => Body::PageInit { ty: r.u16()? },
        INDEX_INIT => Body::IndexInit {
            level: r.u16()?,
            index_id: r.u64()?,
        },
        WRITE => {
            let off = r.u16()?;
            let len = usize::try_from(r.varint()?).ok()?;
            Body::Write {
                off,
                data: r.bytes(len)?,
            }
        }
        REC_INSERT | REC_UPDATE => {
            let slot = r.u16()?;
            let len = usize::try_from(r.varint()?).ok()?;
            let rec = r.bytes(len)?;
            if ty == REC_INSERT {
                Body::RecInsert { slot, rec }
            } else {
                Body::RecUpdate { slot, rec }
            }
        }
        REC_DELETE => Body::RecDelete { slot: r.u16()? },
        REC_DELETE_RANGE => Body::RecDeleteRange {
            from: r.u16()?,
            to: r.u16()?,
        },
        REC_INSERT_MANY => {
            let slot = r.u16()?;
            let n = r.u16()?;
            let start = r.pos;
            for _ in 0..n {
                let len = usize::try_from(r.varint()?).ok()?;
                r.bytes(len)?;
            }
            Body::RecInsertMany {
                slot,
                n,
                recs: &r.buf[start..r.pos],
            }
        }
        SET_LINKS => Body::SetLinks {
            prev: r.u32()?,
            next: r.u32()?,
        },
        REC_PATCH => {
            let slot = r.u16()?;
            let n = r.varint_u32()?;
            let start = r.pos;
            for _ in 0..n {
                r.varint()?;
                let len = usize::try_from(r.varint()?).ok()?;
                r.bytes(len)?;
            }
            Body::RecPatch {
                slot,
                n,
                ranges: &r.buf[start..r.pos],
            }
        }
        _ => return None,
    };
    Some((id, body))
}

fn valid_rec(rec: &[u8], page_size: usize) -> bool {
    rec.len() >= 3
        && crate::page::record::rec_len(rec) == rec.len()
        && rec.len() <= index_page::max_rec_size(page_size)
}

fn index_ok(p: &[u8]) -> bool {
    page::page_type(p) == Some(PageType::Index)
}

/// Applies a record to a page image. Errors describe why the record cannot apply (I2).
pub fn apply(p: &mut [u8], id: PageId, body: &Body<'_>) -> Result<(), String> {
    let size = p.len();
    match *body {
        Body::PageInit { ty } => {
            let t = PageType::from_u16(ty).ok_or_else(|| format!("unknown page type {ty}"))?;
            page::init(p, id, t);
        }
        Body::IndexInit { level, index_id } => index_page::init(p, id, level, index_id),
        Body::Write { off, data } => {
            let off = usize::from(off);
            if off < FIL_PAGE_PREV || off + data.len() > size - FIL_TRAILER_SIZE {
                return Err(format!(
                    "write of {} bytes at {off} out of bounds",
                    data.len()
                ));
            }
            p[off..off + data.len()].copy_from_slice(data);
        }
        Body::RecInsert { slot, rec } => {
            if !index_ok(p) || usize::from(slot) > index_page::n_recs(p) || !valid_rec(rec, size) {
                return Err(format!("bad insert at slot {slot}"));
            }
            if !index_page::insert(p, usize::from(slot), rec) {
                return Err("insert does not fit".into());
            }
        }
        Body::RecUpdate { slot, rec } => {
            if !index_ok(p) || usize::from(slot) >= index_page::n_recs(p) || !valid_rec(rec, size) {
                return Err(format!("bad update at slot {slot}"));
            }
            if !index_page::update(p, usize::from(slot), rec) {
                return Err("update does not fit".into());
            }
        }
        Body::RecPatch { slot, n, ranges } => {
            if !index_ok(p) || usize::from(slot) >= index_page::n_recs(p) {
                return Err(format!("bad patch at slot {slot}"));
            }
            let at = index_page::rec_offset(p, usize::from(slot));
            let len = index_page::rec(p, usize::from(slot)).len();
            // Every range is checked before the first is applied.
            for pass in [false, true] {
                let mut r = Reader::new(ranges);
                for _ in 0..n {
                    let (off, data) = r
                        .varint()
                        .and_then(|o| usize::try_from(o).ok())
                        .zip(r.varint().and_then(|l| usize::try_from(l).ok()))
                        .and_then(|(o, l)| Some((o, r.bytes(l)?)))
                        .ok_or("bad patch range")?;
                    if off.checked_add(data.len()).is_none_or(|e| e > len) {
                        return Err(format!(
                            "patch range {off}+{} beyond the record",
                            data.len()
                        ));
                    }
                    if pass {
                        p[at + off..at + off + data.len()].copy_from_slice(data);
                    }
                }
            }
            if crate::page::record::rec_len(&p[at..]) != len {
                return Err("patch changed the record's length".into());
            }
        }
        Body::RecDelete { slot } => {
            if !index_ok(p) || usize::from(slot) >= index_page::n_recs(p) {
                return Err(format!("bad delete of slot {slot}"));
            }
            index_page::delete(p, usize::from(slot));
        }
        Body::RecDeleteRange { from, to } => {
            if !index_ok(p) || from > to || usize::from(to) > index_page::n_recs(p) {
                return Err(format!("bad delete range {from}..{to}"));
            }
            index_page::delete_range(p, usize::from(from), usize::from(to));
        }
        Body::RecInsertMany { slot, n, recs } => {
            if !index_ok(p) || usize::from(slot) > index_page::n_recs(p) {
                return Err(format!("bad insert_many at slot {slot}"));
            }
            let mut r = Reader::new(recs);
            let mut list = Vec::with_capacity(usize::from(n));
            let mut total = 0;
            for _ in 0..n {
                let len = r
                    .varint()
                    .and_then(|l| usize::try_from(l).ok())
                    .ok_or("bad length")?;
                let rec = r.bytes(len).ok_or("truncated record")?;
                if !valid_rec(rec, size) {
                    return Err("bad record in insert_many".into());
                }
                total += rec.len() + 2;
                list.push(rec);
            }
            if total > index_page::free_space(p) {
                return Err("insert_many does not fit".into());
            }
            index_page::insert_many(p, usize::from(slot), list);
        }
        Body::SetLinks { prev, next } => page::set_links(p, prev, next),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::record::{build, FieldDef, FieldVal, RecLayout};

    fn mk(k: u32, payload: &[u8]) -> Vec<u8> {
        let l = RecLayout::new(vec![FieldDef::fixed(4), FieldDef::var(300)], 1);
        let mut v = Vec::new();
        build(
            &l,
            0,
            [FieldVal::Bytes(&k.to_be_bytes()), FieldVal::Bytes(payload)],
            &mut v,
        );
        v
    }

    /// Replays a group's records in order onto pages filled with 0xEE, as recovery does.
    fn replay(g: &Group, pages: &mut [(PageId, Vec<u8>)]) -> usize {
        let mut r = Reader::new(g.bytes());
        let (mut prev, mut n) = (None, 0);
        while !r.is_empty() {
            let (pid, body) = parse(&mut r, prev).unwrap();
            prev = Some(pid);
            let page = pages.iter_mut().find(|p| p.0 == pid).unwrap();
            apply(&mut page.1, pid, &body).unwrap();
            n += 1;
        }
        n
    }

    #[test]
    fn encode_parse_apply_matches_direct_changes() {
        let (a, b) = (PageId::new(3, 9), PageId::new(3, 10));
        // Direct.
        let mut da = vec![0u8; 4096];
        let mut db = vec![0u8; 4096];
        index_page::init(&mut da, a, 0, 5);
        page::init(&mut db, b, PageType::Undo);
        for k in 0..10 {
            assert!(index_page::insert(&mut da, k, &mk(k as u32, b"payload")));
        }
        index_page::delete(&mut da, 2);
        index_page::delete_range(&mut da, 3, 5);
        assert!(index_page::update(&mut da, 0, &mk(100, b"payload")));
        assert!(index_page::update(&mut da, 1, &mk(1, b"paYload")));
        assert!(index_page::update(&mut da, 2, &mk(3, b"longer payload")));
        index_page::insert_many(&mut da, 1, [&mk(7, b"x")[..], &mk(8, b"y")[..]]);
        page::set_links(&mut da, 1, 2);
        db[40..44].copy_from_slice(&[1, 2, 3, 4]);
        db[44..46].copy_from_slice(&[5, 6]);
        db[100..300].fill(7);
        // Through redo, the two pages' records interleaved.
        let mut g = Group::default();
        let mut ra = vec![0xEEu8; 4096];
        index_page::init(&mut ra, a, 0, 5);
        g.index_init(a, 0, 5);
        g.page_init(b, PageType::Undo);
        let mut live = ra.clone();
        for k in 0..10 {
            g.rec(REC_INSERT, a, k, &mk(k as u32, b"payload"));
            index_page::insert(&mut live, k, &mk(k as u32, b"payload"));
        }
        g.delete(a, 2);
        index_page::delete(&mut live, 2);
        g.delete_range(a, 3, 5);
        index_page::delete_range(&mut live, 3, 5);
        for (slot, rec) in [
            (0, mk(100, b"payload")),
            (1, mk(1, b"paYload")),
            (2, mk(3, b"longer payload")),
        ] {
            g.rec_update(a, slot, index_page::rec(&live, slot), &rec);
            index_page::update(&mut live, slot, &rec);
        }
        g.write(b, 40, &[1, 2, 3, 4]);
        g.write(b, 44, &[5, 6]);
        g.write(b, 100, &[7; 100]);
        g.write(b, 200, &[7; 100]);
        g.insert_many(a, 1, [&mk(7, b"x")[..], &mk(8, b"y")[..]].into_iter());
        g.set_links(a, 1, 2);
        let mut pages = vec![(a, vec![0xEEu8; 4096]), (b, vec![0xEEu8; 4096])];
        let n = replay(&g, &mut pages);
        assert_eq!(pages[0].1, da);
        assert_eq!(pages[1].1, db);
        // The contiguous WRITEs became two records (the second grew its length field past
        // one byte); the same-length updates are patches.
        assert_eq!(n, 2 + 10 + 2 + 3 + 2 + 2);
        let kinds: Vec<u8> = {
            let mut r = Reader::new(g.bytes());
            let mut prev = None;
            let mut v = Vec::new();
            while !r.is_empty() {
                let at = r.pos;
                prev = Some(parse(&mut r, prev).unwrap().0);
                v.push(g.bytes()[at]);
            }
            v
        };
        assert_eq!(kinds[0], INDEX_INIT);
        assert_eq!(kinds[2], REC_INSERT);
        assert_eq!(kinds[3], REC_INSERT | SAME_PAGE);
        assert_eq!(
            &kinds[14..17],
            &[
                REC_PATCH | SAME_PAGE,
                REC_PATCH | SAME_PAGE,
                REC_UPDATE | SAME_PAGE
            ]
        );
        assert_eq!(&kinds[17..19], &[WRITE, WRITE | SAME_PAGE]);
    }

    #[test]
    fn a_patch_is_the_changed_ranges_only() {
        let id = PageId::new(1, 4);
        let old = mk(5, &[b'a'; 200]);
        let mut new = old.clone();
        new[10] = b'b';
        new[12] = b'c';
        new[150..160].fill(b'z');
        let mut g = Group::default();
        g.rec_update(id, 0, &old, &new);
        // Head (1 + 1 + 1), slot 2, count 1, two ranges: [10, 13) and [150, 160).
        assert_eq!(g.bytes().len(), 3 + 2 + 1 + (1 + 1 + 3) + (2 + 1 + 10));
        let ranges: Vec<(usize, usize)> = changed_ranges(&old, &new).collect();
        assert_eq!(ranges, vec![(10, 3), (150, 10)]);
        // Everything changed: the whole record is shorter.
        let other: Vec<u8> = old.iter().map(|b| !b).collect();
        let mut g = Group::default();
        g.rec_update(id, 0, &old, &other);
        assert_eq!(g.bytes()[0], REC_UPDATE);
        // Taken back after a record for another page: the whole record names its page.
        let other_page = PageId::new(1, 5);
        let mut g = Group::default();
        g.delete(other_page, 0);
        g.rec_update(id, 0, &old, &other);
        let mut r = Reader::new(g.bytes());
        let (p1, _) = parse(&mut r, None).unwrap();
        let at = r.pos;
        let (p2, body) = parse(&mut r, Some(p1)).unwrap();
        assert_eq!((p1, p2), (other_page, id));
        assert_eq!(g.bytes()[at], REC_UPDATE, "no SAME_PAGE flag");
        assert!(matches!(body, Body::RecUpdate { rec, .. } if rec == &other[..]));
        assert!(r.is_empty());
        for v in [0, 1, 127, 128, 16383, 16384, usize::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v as u64);
            assert_eq!(varint_len(v), b.len(), "{v}");
        }
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let id = PageId::new(1, 1);
        let mut g = Group::default();
        g.delete(id, 7);
        let mut p = vec![0u8; 4096];
        index_page::init(&mut p, id, 0, 1);
        let log = g.bytes();
        let (pid, body) = parse(&mut Reader::new(log), None).unwrap();
        assert!(apply(&mut p, pid, &body).is_err());
        for cut in 0..log.len() {
            assert!(parse(&mut Reader::new(&log[..cut]), None).is_none());
        }
        let mut g = Group::default();
        g.write(id, 4090, &[1, 2, 3, 4]);
        let (pid, body) = parse(&mut Reader::new(g.bytes()), None).unwrap();
        assert!(apply(&mut p, pid, &body).is_err());
        // A SAME_PAGE record with no previous record in its group is malformed.
        let mut g = Group::default();
        g.delete(id, 0);
        g.delete(id, 0);
        let second = &g.bytes()[3 + 2..];
        assert_eq!(second[0], REC_DELETE | SAME_PAGE);
        assert!(parse(&mut Reader::new(second), None).is_none());
        // A patch reaching past its record, and truncated patches.
        assert!(index_page::insert(&mut p, 0, &mk(1, b"short")));
        let old = index_page::rec(&p, 0).to_vec();
        let mut g = Group::default();
        let mut new = old.clone();
        *new.last_mut().unwrap() ^= 1;
        g.rec_update(id, 0, &old, &new);
        let mut bad = g.bytes().to_vec();
        // The range's offset is the byte after slot (2) and count (1).
        bad[3 + 2 + 1] = 120;
        let (pid, body) = parse(&mut Reader::new(&bad), None).unwrap();
        let before = p.clone();
        assert!(apply(&mut p, pid, &body).is_err());
        assert_eq!(p, before, "nothing applied");
        for cut in 0..g.bytes().len() {
            assert!(parse(&mut Reader::new(&g.bytes()[..cut]), None).is_none());
        }
    }
}
