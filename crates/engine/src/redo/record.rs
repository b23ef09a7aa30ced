//! Redo records: encoding (used by the mini-transaction), parsing and applying (used by
//! recovery). Byte layout: docs/format/redo.md, "Records".
//!
//! INVARIANTS
//! - I1: `apply` performs exactly the page change the mini-transaction made when it logged the
//!   record, by calling the same page function (page::index_page, page::init), so replay is
//!   byte-identical.
//! - I2: parsing and applying never panic on damaged input: every length and offset is checked
//!   and a bad record is an error (recovery then refuses to start rather than guess).

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

fn head(out: &mut Vec<u8>, ty: u8, id: PageId) {
    out.push(ty);
    put_varint(out, u64::from(id.space));
    put_varint(out, u64::from(id.page));
}

pub fn encode_page_init(out: &mut Vec<u8>, id: PageId, ty: PageType) {
    head(out, PAGE_INIT, id);
    out.extend_from_slice(&(ty as u16).to_be_bytes());
}

pub fn encode_index_init(out: &mut Vec<u8>, id: PageId, level: u16, index_id: u64) {
    head(out, INDEX_INIT, id);
    out.extend_from_slice(&level.to_be_bytes());
    out.extend_from_slice(&index_id.to_be_bytes());
}

pub fn encode_write(out: &mut Vec<u8>, id: PageId, off: usize, data: &[u8]) {
    head(out, WRITE, id);
    out.extend_from_slice(&(off as u16).to_be_bytes());
    put_varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

pub fn encode_rec(out: &mut Vec<u8>, ty: u8, id: PageId, slot: usize, rec: &[u8]) {
    debug_assert!(ty == REC_INSERT || ty == REC_UPDATE);
    head(out, ty, id);
    out.extend_from_slice(&(slot as u16).to_be_bytes());
    put_varint(out, rec.len() as u64);
    out.extend_from_slice(rec);
}

pub fn encode_delete(out: &mut Vec<u8>, id: PageId, slot: usize) {
    head(out, REC_DELETE, id);
    out.extend_from_slice(&(slot as u16).to_be_bytes());
}

pub fn encode_delete_range(out: &mut Vec<u8>, id: PageId, from: usize, to: usize) {
    head(out, REC_DELETE_RANGE, id);
    out.extend_from_slice(&(from as u16).to_be_bytes());
    out.extend_from_slice(&(to as u16).to_be_bytes());
}

pub fn encode_insert_many<'a>(
    out: &mut Vec<u8>,
    id: PageId,
    slot: usize,
    recs: impl ExactSizeIterator<Item = &'a [u8]>,
) {
    head(out, REC_INSERT_MANY, id);
    out.extend_from_slice(&(slot as u16).to_be_bytes());
    out.extend_from_slice(&(recs.len() as u16).to_be_bytes());
    for r in recs {
        put_varint(out, r.len() as u64);
        out.extend_from_slice(r);
    }
}

pub fn encode_set_links(out: &mut Vec<u8>, id: PageId, prev: PageNo, next: PageNo) {
    head(out, SET_LINKS, id);
    out.extend_from_slice(&prev.to_be_bytes());
    out.extend_from_slice(&next.to_be_bytes());
}

/// Parses one record at the reader's position. None = malformed.
pub fn parse<'a>(r: &mut Reader<'a>) -> Option<(PageId, Body<'a>)> {
    let ty = r.u8()?;
    let space = r.varint_u32()?;
    let page = r.varint_u32()?;
    let id = PageId::new(space, page);
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

    #[test]
    fn encode_parse_apply_matches_direct_changes() {
        let id = PageId::new(3, 9);
        let l = RecLayout::new(vec![FieldDef::fixed(4), FieldDef::var(100)], 1);
        let mk = |k: u32| {
            let mut v = Vec::new();
            build(
                &l,
                0,
                [
                    FieldVal::Bytes(&k.to_be_bytes()),
                    FieldVal::Bytes(b"payload"),
                ],
                &mut v,
            );
            v
        };
        // Direct.
        let mut direct = vec![0u8; 4096];
        index_page::init(&mut direct, id, 0, 5);
        for k in 0..10 {
            assert!(index_page::insert(&mut direct, k, &mk(k as u32)));
        }
        index_page::delete(&mut direct, 2);
        index_page::delete_range(&mut direct, 3, 5);
        assert!(index_page::update(&mut direct, 0, &mk(100)));
        index_page::insert_many(&mut direct, 1, [&mk(7)[..], &mk(8)[..]]);
        page::set_links(&mut direct, 1, 2);
        // Through redo.
        let mut log = Vec::new();
        encode_index_init(&mut log, id, 0, 5);
        for k in 0..10 {
            encode_rec(&mut log, REC_INSERT, id, k, &mk(k as u32));
        }
        encode_delete(&mut log, id, 2);
        encode_delete_range(&mut log, id, 3, 5);
        encode_rec(&mut log, REC_UPDATE, id, 0, &mk(100));
        let (a, b) = (mk(7), mk(8));
        encode_insert_many(&mut log, id, 1, [&a[..], &b[..]].into_iter());
        encode_set_links(&mut log, id, 1, 2);
        let mut replay = vec![0xEEu8; 4096];
        let mut r = Reader::new(&log);
        while !r.is_empty() {
            let (pid, body) = parse(&mut r).unwrap();
            assert_eq!(pid, id);
            apply(&mut replay, pid, &body).unwrap();
        }
        assert_eq!(direct, replay);
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let id = PageId::new(1, 1);
        let mut log = Vec::new();
        encode_delete(&mut log, id, 7);
        let mut p = vec![0u8; 4096];
        index_page::init(&mut p, id, 0, 1);
        let mut r = Reader::new(&log);
        let (pid, body) = parse(&mut r).unwrap();
        assert!(apply(&mut p, pid, &body).is_err());
        for cut in 0..log.len() {
            let mut r = Reader::new(&log[..cut]);
            assert!(parse(&mut r).is_none());
        }
        let mut w = Vec::new();
        encode_write(&mut w, id, 4090, &[1, 2, 3, 4]);
        let (pid, body) = parse(&mut Reader::new(&w)).unwrap();
        assert!(apply(&mut p, pid, &body).is_err());
    }
}
