//! Undo logs: pages, records, appending, reading, truncating and freeing; rollback segment
//! headers with their slots, history lists and caches of free pages.
//! (InnoDB: trx0undo, trx0rec, trx0rseg.) Byte layout: docs/format/undo.md.
//!
//! INVARIANTS
//! - I1: an active transaction's undo log is registered in its rseg slot from the
//!   mini-transaction that creates it until the one that commits it (history) or frees it
//!   (rollback), so recovery finds every incomplete transaction.
//! - I2: an undo record is durable in the log before (lower LSN than) the index change it
//!   describes, because it is appended in its own mini-transaction first.
//! - I3: each rseg's history list is ordered by transaction number.
//!
//! LATCHING: rseg header -> undo log first page -> other undo pages -> system tablespace header
//! (page allocation). Only the owning transaction appends to an active log; committed logs are
//! touched only with their rseg header latched (commit, purge).

use crate::buffer_pool::LatchMode;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::{self, read_u16, read_u32, read_u64, read_u8, Reader};
use crate::mtr::{Mtr, PageRef};
use crate::page::{self, PageType, FIL_TRAILER_SIZE};
use crate::tablespace::fsp;
use crate::types::{PageId, PageNo, TableId, FIL_NULL, SYSTEM_SPACE};

// Rollback segment header.
pub const RSEG_HISTORY_LEN: usize = 38;
pub const RSEG_HISTORY_FIRST: usize = 42;
pub const RSEG_HISTORY_LAST: usize = 46;
pub const RSEG_FREE_FIRST: usize = 50;
pub const RSEG_FREE_LEN: usize = 54;
pub const RSEG_N_SLOTS: usize = 58;
pub const RSEG_SLOTS: usize = 62;
/// Free undo pages an rseg keeps for reuse before returning them to the tablespace.
pub const RSEG_FREE_CACHE: u32 = 32;

// Undo page.
pub const UNDO_PAGE_START: usize = 38;
pub const UNDO_PAGE_FREE: usize = 40;
pub const UNDO_TRX_ID: usize = 42;
pub const UNDO_TRX_NO: usize = 50;
pub const UNDO_STATE: usize = 58;
pub const UNDO_RSEG: usize = 59;
pub const UNDO_SLOT: usize = 60;
pub const UNDO_LAST_PAGE: usize = 62;
pub const UNDO_HIST_NEXT: usize = 66;
pub const UNDO_N_PAGES: usize = 70;
/// First page only: length of the XA XID of a prepared transaction (0: none).
pub const UNDO_XID_LEN: usize = 76;
pub const UNDO_XID: usize = 77;
/// Longest XID: formatID (4) + gtrid and bqual lengths (1 + 1) + up to 128 bytes of data.
pub const XID_MAX: usize = 134;
pub const UNDO_FIRST_DATA: usize = 212;
pub const UNDO_DATA: usize = 42;

pub const STATE_ACTIVE: u8 = 1;
pub const STATE_COMMITTED: u8 = 2;
pub const STATE_PREPARED: u8 = 3;

pub const UREC_INSERT: u8 = 1;
pub const UREC_UPDATE: u8 = 2;
pub const UREC_DEL_MARK: u8 = 3;

pub fn rseg_n_slots(page_size: usize) -> u32 {
    ((page_size - RSEG_SLOTS - FIL_TRAILER_SIZE) / 4) as u32
}

/// Initialises an rseg header page (data directory creation).
pub fn init_rseg(mtr: &mut Mtr<'_>, r: PageRef) {
    let ps = mtr.inner().bp.page_size();
    mtr.page_init(r, PageType::TrxSys);
    mtr.write_u32(r, RSEG_HISTORY_LEN, 0);
    mtr.write_u32(r, RSEG_HISTORY_FIRST, FIL_NULL);
    mtr.write_u32(r, RSEG_HISTORY_LAST, FIL_NULL);
    mtr.write_u32(r, RSEG_FREE_FIRST, FIL_NULL);
    mtr.write_u32(r, RSEG_FREE_LEN, 0);
    mtr.write_u32(r, RSEG_N_SLOTS, rseg_n_slots(ps));
    // Slots start empty (0): page_init zeroed them.
}

/// An empty rseg slot (page 0 of the system tablespace is never an undo page).
pub const SLOT_EMPTY: PageNo = 0;

/// A roll pointer (docs/format/undo.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollPtr {
    pub insert: bool,
    pub rseg: u8,
    pub page: PageNo,
    pub offset: u16,
}

impl RollPtr {
    pub fn encode(self) -> [u8; 7] {
        let mut b = [0u8; 7];
        b[0] = (u8::from(self.insert) << 7) | (self.rseg & 0x7f);
        b[1..5].copy_from_slice(&self.page.to_be_bytes());
        b[5..7].copy_from_slice(&self.offset.to_be_bytes());
        b
    }
    pub fn decode(b: &[u8]) -> RollPtr {
        RollPtr {
            insert: b[0] & 0x80 != 0,
            rseg: b[0] & 0x7f,
            page: read_u32(b, 1),
            offset: read_u16(b, 5),
        }
    }
}

/// A transaction's undo log while it is active (owned by the transaction).
#[derive(Clone, Copy, Debug)]
pub struct UndoLog {
    pub rseg: u8,
    pub rseg_page: PageNo,
    pub slot: u16,
    pub first: PageNo,
    pub last: PageNo,
    /// Free offset in the last page.
    pub free: u16,
    /// Undo number of the next record.
    pub top_undo_no: u64,
}

/// One parsed undo record.
#[derive(Clone, Debug)]
pub struct UndoRec {
    pub kind: u8,
    pub undo_no: u64,
    pub table_id: TableId,
    /// INSERT: key fields; UPDATE/DEL_MARK: empty.
    pub key: Vec<Vec<u8>>,
    /// UPDATE/DEL_MARK: clustered-record fields the change replaced.
    pub changed: Vec<u16>,
    /// UPDATE/DEL_MARK: the clustered record before the change.
    pub old_rec: Vec<u8>,
    /// Offset of `old_rec` within its undo page (purge overwrites references there).
    pub old_rec_off: u16,
    /// Where the record is.
    pub page: PageNo,
    pub offset: u16,
}

/// Encodes an undo record body (without length, type, undo_no, table id and trailer).
pub fn encode_insert_body(key: &[&[u8]]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(key.len() as u16).to_be_bytes());
    for f in key {
        mach::put_varint(&mut b, f.len() as u64);
        b.extend_from_slice(f);
    }
    b
}

/// Encodes an UPDATE / DELETE_MARK body: the replaced field numbers, then the old record.
pub fn encode_update_body(changed: &[u16], old_rec: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(2 + 2 * changed.len() + old_rec.len());
    b.extend_from_slice(&(changed.len() as u16).to_be_bytes());
    for c in changed {
        b.extend_from_slice(&c.to_be_bytes());
    }
    b.extend_from_slice(old_rec);
    b
}

fn parse_record(p: &[u8], off: usize, page: PageNo) -> Option<UndoRec> {
    let len = usize::from(read_u16(p, off));
    let rec = p.get(off..off + len)?;
    if len < 5 || usize::from(read_u16(rec, len - 2)) != off {
        return None;
    }
    let mut r = Reader::new(&rec[2..len - 2]);
    let kind = r.u8()?;
    let undo_no = r.varint()?;
    let table_id = r.varint()?;
    let (mut key, mut changed, mut old_rec) = (Vec::new(), Vec::new(), Vec::new());
    let mut old_off = 0;
    match kind {
        UREC_INSERT => {
            let n = r.u16()?;
            for _ in 0..n {
                let l = usize::try_from(r.varint()?).ok()?;
                key.push(r.bytes(l)?.to_vec());
            }
        }
        UREC_UPDATE | UREC_DEL_MARK => {
            let n = r.u16()?;
            for _ in 0..n {
                changed.push(r.u16()?);
            }
            old_off = off + 2 + r.pos;
            old_rec = r.bytes(r.buf.len() - r.pos)?.to_vec();
            if old_rec.len() < 3 || crate::page::record::rec_len(&old_rec) != old_rec.len() {
                return None;
            }
        }
        _ => return None,
    }
    Some(UndoRec {
        kind,
        undo_no,
        table_id,
        key,
        changed,
        old_rec,
        old_rec_off: old_off as u16,
        page,
        offset: off as u16,
    })
}

fn bad_undo(page: PageNo, what: &str) -> Error {
    Error::corrupted(SYSTEM_SPACE, page, format!("undo log: {what}"))
}

/// Takes a page for an undo log: from the rseg's cache of free pages, else from the system
/// tablespace. The rseg header is latched in `mtr`; the page comes back X-latched, initialised.
fn take_page(mtr: &mut Mtr<'_>, rseg_hdr: PageRef) -> Result<(PageRef, PageNo)> {
    let cached = read_u32(mtr.page(rseg_hdr), RSEG_FREE_FIRST);
    if cached != FIL_NULL {
        let pg = mtr.get(PageId::new(SYSTEM_SPACE, cached), LatchMode::X)?;
        let next = page::next(mtr.page(pg));
        let n = read_u32(mtr.page(rseg_hdr), RSEG_FREE_LEN);
        mtr.write_u32(rseg_hdr, RSEG_FREE_FIRST, next);
        mtr.write_u32(rseg_hdr, RSEG_FREE_LEN, n.saturating_sub(1));
        mtr.page_init(pg, PageType::Undo);
        return Ok((pg, cached));
    }
    let hdr = mtr.get(PageId::new(SYSTEM_SPACE, 0), LatchMode::X)?;
    fsp::reserve(mtr, hdr, SYSTEM_SPACE, 1)?;
    let pno = fsp::alloc(mtr, hdr, SYSTEM_SPACE)?;
    let pg = mtr.get_new(PageId::new(SYSTEM_SPACE, pno))?;
    mtr.page_init(pg, PageType::Undo);
    Ok((pg, pno))
}

/// Gives a page back: to the rseg's cache if it has room, else to the tablespace.
fn give_page(mtr: &mut Mtr<'_>, rseg_hdr: PageRef, pg: PageRef) -> Result<()> {
    let n = read_u32(mtr.page(rseg_hdr), RSEG_FREE_LEN);
    if n < RSEG_FREE_CACHE {
        let first = read_u32(mtr.page(rseg_hdr), RSEG_FREE_FIRST);
        mtr.page_init(pg, PageType::Undo);
        mtr.set_links(pg, FIL_NULL, first);
        mtr.write_u32(rseg_hdr, RSEG_FREE_FIRST, mtr.id(pg).page);
        mtr.write_u32(rseg_hdr, RSEG_FREE_LEN, n + 1);
        return Ok(());
    }
    let hdr = mtr.get(PageId::new(SYSTEM_SPACE, 0), LatchMode::X)?;
    fsp::free(mtr, hdr, pg)
}

/// Creates an undo log for `trx_id` in rseg `rseg` (header page `rseg_page`), registering it in
/// a free slot (I1). None if the rseg has no free slot.
pub fn create(inner: &Inner, rseg: u8, rseg_page: PageNo, trx_id: u64) -> Result<Option<UndoLog>> {
    inner.log_free_check()?;
    let mut mtr = Mtr::new(inner);
    let rh = mtr.get(PageId::new(SYSTEM_SPACE, rseg_page), LatchMode::X)?;
    let n = read_u32(mtr.page(rh), RSEG_N_SLOTS) as usize;
    let Some(slot) = (0..n).find(|&i| read_u32(mtr.page(rh), RSEG_SLOTS + 4 * i) == SLOT_EMPTY)
    else {
        return Ok(None);
    };
    let (pg, pno) = take_page(&mut mtr, rh)?;
    mtr.write_u16(pg, UNDO_PAGE_START, UNDO_FIRST_DATA as u16);
    mtr.write_u16(pg, UNDO_PAGE_FREE, UNDO_FIRST_DATA as u16);
    mtr.write_u64(pg, UNDO_TRX_ID, trx_id);
    mtr.write_u64(pg, UNDO_TRX_NO, 0);
    mtr.write(pg, UNDO_STATE, &[STATE_ACTIVE, rseg]);
    mtr.write_u16(pg, UNDO_SLOT, slot as u16);
    mtr.write_u32(pg, UNDO_LAST_PAGE, pno);
    mtr.write_u32(pg, UNDO_HIST_NEXT, FIL_NULL);
    mtr.write_u32(pg, UNDO_N_PAGES, 1);
    mtr.write_u32(rh, RSEG_SLOTS + 4 * slot, pno);
    mtr.commit()?;
    Ok(Some(UndoLog {
        rseg,
        rseg_page,
        slot: slot as u16,
        first: pno,
        last: pno,
        free: UNDO_FIRST_DATA as u16,
        top_undo_no: 0,
    }))
}

/// Appends a record (I2); returns the roll pointer to it.
pub fn append(
    inner: &Inner,
    log: &mut UndoLog,
    kind: u8,
    table_id: TableId,
    body: &[u8],
) -> Result<RollPtr> {
    let mut rec = vec![0u8, 0, kind];
    mach::put_varint(&mut rec, log.top_undo_no);
    mach::put_varint(&mut rec, table_id);
    rec.extend_from_slice(body);
    let len = rec.len() + 2;
    let ps = inner.bp.page_size();
    let room = ps - FIL_TRAILER_SIZE;
    if len > room - UNDO_FIRST_DATA {
        return Err(Error::RowTooLarge(format!("undo record of {len} bytes")));
    }
    mach::write_u16(&mut rec, 0, len as u16);
    let mut mtr = Mtr::new(inner);
    let at;
    let pg;
    if usize::from(log.free) + len <= room {
        pg = mtr.get(PageId::new(SYSTEM_SPACE, log.last), LatchMode::X)?;
        at = usize::from(log.free);
    } else {
        // New page: rseg header (free page cache) first, then the log's pages (LATCHING).
        let rh = mtr.get(PageId::new(SYSTEM_SPACE, log.rseg_page), LatchMode::X)?;
        let first = mtr.get(PageId::new(SYSTEM_SPACE, log.first), LatchMode::X)?;
        let last = if log.last == log.first {
            first
        } else {
            mtr.get(PageId::new(SYSTEM_SPACE, log.last), LatchMode::X)?
        };
        let (np, nno) = take_page(&mut mtr, rh)?;
        mtr.write_u16(np, UNDO_PAGE_START, UNDO_DATA as u16);
        mtr.write_u16(np, UNDO_PAGE_FREE, UNDO_DATA as u16);
        mtr.set_links(np, log.last, FIL_NULL);
        let lprev = page::prev(mtr.page(last));
        mtr.set_links(last, lprev, nno);
        mtr.write_u32(first, UNDO_LAST_PAGE, nno);
        let n = read_u32(mtr.page(first), UNDO_N_PAGES);
        mtr.write_u32(first, UNDO_N_PAGES, n + 1);
        log.last = nno;
        pg = np;
        at = UNDO_DATA;
    }
    let mut trailer = [0u8; 2];
    mach::write_u16(&mut trailer, 0, at as u16);
    rec.extend_from_slice(&trailer);
    mtr.write(pg, at, &rec);
    mtr.write_u16(pg, UNDO_PAGE_FREE, (at + len) as u16);
    mtr.commit()?;
    log.free = (at + len) as u16;
    let rp = RollPtr {
        insert: kind == UREC_INSERT,
        rseg: log.rseg,
        page: log.last,
        offset: at as u16,
    };
    log.top_undo_no += 1;
    Ok(rp)
}

/// Reads the undo record a roll pointer designates.
pub fn read_at(inner: &Inner, page: PageNo, offset: u16) -> Result<UndoRec> {
    let mut mtr = Mtr::new(inner);
    let pg = mtr.get(PageId::new(SYSTEM_SPACE, page), LatchMode::S)?;
    let r = parse_record(mtr.page(pg), usize::from(offset), page)
        .ok_or_else(|| bad_undo(page, "unparsable record"));
    mtr.commit()?;
    r
}

/// Reads every record of a log, in order.
pub fn read_all(inner: &Inner, first: PageNo) -> Result<Vec<UndoRec>> {
    let mut out = Vec::new();
    for pno in log_pages(inner, first)? {
        out.extend(read_page_records(inner, pno)?.0);
    }
    Ok(out)
}

/// The records of one page of a log (in order) and the previous page of the chain.
pub fn read_page_records(inner: &Inner, pno: PageNo) -> Result<(Vec<UndoRec>, PageNo)> {
    let mut mtr = Mtr::new(inner);
    let pg = mtr.get(PageId::new(SYSTEM_SPACE, pno), LatchMode::S)?;
    let p = mtr.page(pg);
    if page::page_type(p) != Some(PageType::Undo) {
        return Err(bad_undo(pno, "not an undo page"));
    }
    let (start, free) = (
        usize::from(read_u16(p, UNDO_PAGE_START)),
        usize::from(read_u16(p, UNDO_PAGE_FREE)),
    );
    if start > free || free > p.len() - FIL_TRAILER_SIZE {
        return Err(bad_undo(pno, "bad page offsets"));
    }
    let mut out = Vec::new();
    let mut off = start;
    while off < free {
        let r = parse_record(p, off, pno).ok_or_else(|| bad_undo(pno, "unparsable record"))?;
        off += usize::from(read_u16(p, off));
        out.push(r);
    }
    let prev = page::prev(p);
    mtr.commit()?;
    Ok((out, prev))
}

/// The state of a log as found on its first page (recovery).
#[derive(Clone, Debug)]
pub struct LogHeader {
    pub trx_id: u64,
    pub trx_no: u64,
    pub state: u8,
    pub rseg: u8,
    pub slot: u16,
    pub last: PageNo,
    pub hist_next: PageNo,
    /// The XID of a prepared transaction.
    pub xid: Vec<u8>,
}

pub fn read_header(inner: &Inner, first: PageNo) -> Result<LogHeader> {
    let mut mtr = Mtr::new(inner);
    let pg = mtr.get(PageId::new(SYSTEM_SPACE, first), LatchMode::S)?;
    let p = mtr.page(pg);
    if page::page_type(p) != Some(PageType::Undo) {
        return Err(bad_undo(first, "not an undo log header page"));
    }
    let h = LogHeader {
        trx_id: read_u64(p, UNDO_TRX_ID),
        trx_no: read_u64(p, UNDO_TRX_NO),
        state: read_u8(p, UNDO_STATE),
        rseg: read_u8(p, UNDO_RSEG),
        slot: read_u16(p, UNDO_SLOT),
        last: read_u32(p, UNDO_LAST_PAGE),
        hist_next: read_u32(p, UNDO_HIST_NEXT),
        xid: {
            let n = usize::from(read_u8(p, UNDO_XID_LEN)).min(XID_MAX);
            p[UNDO_XID..UNDO_XID + n].to_vec()
        },
    };
    mtr.commit()?;
    Ok(h)
}

/// Rebuilds the in-memory handle of an active log found at recovery.
pub fn reopen(inner: &Inner, rseg_page: PageNo, first: PageNo) -> Result<UndoLog> {
    let h = read_header(inner, first)?;
    let recs = read_all(inner, first)?;
    let mut mtr = Mtr::new(inner);
    let pg = mtr.get(PageId::new(SYSTEM_SPACE, h.last), LatchMode::S)?;
    let free = read_u16(mtr.page(pg), UNDO_PAGE_FREE);
    mtr.commit()?;
    Ok(UndoLog {
        rseg: h.rseg,
        rseg_page,
        slot: h.slot,
        first,
        last: h.last,
        free,
        top_undo_no: recs.last().map_or(0, |r| r.undo_no + 1),
    })
}

/// Marks the log prepared (XA PREPARE) with its XID, in one mini-transaction; returns its LSN.
pub fn prepare(inner: &Inner, log: &UndoLog, xid: &[u8]) -> Result<u64> {
    if xid.len() > XID_MAX {
        return Err(Error::InvalidArgument(format!(
            "an XID has at most {XID_MAX} bytes, {} given",
            xid.len()
        )));
    }
    let mut mtr = Mtr::new(inner);
    let first = mtr.get(PageId::new(SYSTEM_SPACE, log.first), LatchMode::X)?;
    mtr.write(first, UNDO_STATE, &[STATE_PREPARED]);
    mtr.write(first, UNDO_XID_LEN, &[xid.len() as u8]);
    if !xid.is_empty() {
        mtr.write(first, UNDO_XID, xid);
    }
    mtr.commit()
}

/// Marks the log committed with `trx_no` and appends it to its rseg's history (I3); the caller
/// assigns `trx_no` inside `assign_no`, which runs with the rseg header latched. Returns
/// (trx_no, commit LSN, true if the log became the head of the history list).
pub fn commit(
    inner: &Inner,
    log: &UndoLog,
    assign_no: impl FnOnce() -> u64,
) -> Result<(u64, u64, bool)> {
    let mut mtr = Mtr::new(inner);
    let rh = mtr.get(PageId::new(SYSTEM_SPACE, log.rseg_page), LatchMode::X)?;
    let first = mtr.get(PageId::new(SYSTEM_SPACE, log.first), LatchMode::X)?;
    let prev_last = read_u32(mtr.page(rh), RSEG_HISTORY_LAST);
    let prev = if prev_last != FIL_NULL {
        Some(mtr.get(PageId::new(SYSTEM_SPACE, prev_last), LatchMode::X)?)
    } else {
        None
    };
    let trx_no = assign_no();
    mtr.write_u64(first, UNDO_TRX_NO, trx_no);
    mtr.write(first, UNDO_STATE, &[STATE_COMMITTED]);
    match prev {
        Some(p) => mtr.write_u32(p, UNDO_HIST_NEXT, log.first),
        None => mtr.write_u32(rh, RSEG_HISTORY_FIRST, log.first),
    }
    mtr.write_u32(rh, RSEG_HISTORY_LAST, log.first);
    let n = read_u32(mtr.page(rh), RSEG_HISTORY_LEN);
    mtr.write_u32(rh, RSEG_HISTORY_LEN, n + 1);
    mtr.write_u32(rh, RSEG_SLOTS + 4 * usize::from(log.slot), SLOT_EMPTY);
    let lsn = mtr.commit()?;
    Ok((trx_no, lsn, prev.is_none()))
}

/// Discards records from the end of an active log whose undo number is >= `undo_no`, freeing
/// pages that become empty (rollback to a savepoint).
pub fn truncate_end(inner: &Inner, log: &mut UndoLog, undo_no: u64) -> Result<()> {
    loop {
        let mut mtr = Mtr::new(inner);
        let rh = mtr.get(PageId::new(SYSTEM_SPACE, log.rseg_page), LatchMode::X)?;
        let first = mtr.get(PageId::new(SYSTEM_SPACE, log.first), LatchMode::X)?;
        let last = if log.last == log.first {
            first
        } else {
            mtr.get(PageId::new(SYSTEM_SPACE, log.last), LatchMode::X)?
        };
        let p = mtr.page(last);
        let start = usize::from(read_u16(p, UNDO_PAGE_START));
        let mut free = usize::from(read_u16(p, UNDO_PAGE_FREE));
        while free > start {
            let rs = usize::from(read_u16(p, free - 2));
            let r = parse_record(p, rs, log.last)
                .ok_or_else(|| bad_undo(log.last, "unparsable record"))?;
            if r.undo_no < undo_no {
                break;
            }
            free = rs;
        }
        mtr.write_u16(last, UNDO_PAGE_FREE, free as u16);
        if free > start || log.last == log.first {
            log.free = free as u16;
            mtr.commit()?;
            return Ok(());
        }
        // The last page is empty and not the first: unlink and give it back.
        let prev = page::prev(mtr.page(last));
        let pp = mtr.get(PageId::new(SYSTEM_SPACE, prev), LatchMode::X)?;
        let ppprev = page::prev(mtr.page(pp));
        mtr.set_links(pp, ppprev, FIL_NULL);
        mtr.write_u32(first, UNDO_LAST_PAGE, prev);
        let n = read_u32(mtr.page(first), UNDO_N_PAGES);
        mtr.write_u32(first, UNDO_N_PAGES, n - 1);
        give_page(&mut mtr, rh, last)?;
        let pfree = read_u16(mtr.page(pp), UNDO_PAGE_FREE);
        mtr.commit()?;
        log.last = prev;
        log.free = pfree;
    }
}

/// Frees a whole log: pages from the end first (a few per mini-transaction), then the first
/// page, clearing its rseg slot (`in_history` = false) or unlinking it from the head of the
/// history list (`in_history` = true, purge). Returns the new head of the history list as
/// (trx_no, first page) when there is one, so purge can queue it.
pub fn free_log(
    inner: &Inner,
    rseg_page: PageNo,
    first: PageNo,
    in_history: bool,
) -> Result<Option<(u64, PageNo)>> {
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let rh = mtr.get(PageId::new(SYSTEM_SPACE, rseg_page), LatchMode::X)?;
        let fp = mtr.get(PageId::new(SYSTEM_SPACE, first), LatchMode::X)?;
        let last = read_u32(mtr.page(fp), UNDO_LAST_PAGE);
        if last != first {
            let lp = mtr.get(PageId::new(SYSTEM_SPACE, last), LatchMode::X)?;
            let prev = page::prev(mtr.page(lp));
            let pp = if prev == first {
                fp
            } else {
                mtr.get(PageId::new(SYSTEM_SPACE, prev), LatchMode::X)?
            };
            let ppprev = page::prev(mtr.page(pp));
            mtr.set_links(pp, ppprev, FIL_NULL);
            mtr.write_u32(fp, UNDO_LAST_PAGE, prev);
            let n = read_u32(mtr.page(fp), UNDO_N_PAGES);
            mtr.write_u32(fp, UNDO_N_PAGES, n - 1);
            give_page(&mut mtr, rh, lp)?;
            mtr.commit()?;
            continue;
        }
        let mut head = None;
        if in_history {
            let next = read_u32(mtr.page(fp), UNDO_HIST_NEXT);
            if read_u32(mtr.page(rh), RSEG_HISTORY_FIRST) != first {
                return Err(bad_undo(
                    first,
                    "purged log is not at the head of its history list",
                ));
            }
            mtr.write_u32(rh, RSEG_HISTORY_FIRST, next);
            if next == FIL_NULL {
                mtr.write_u32(rh, RSEG_HISTORY_LAST, FIL_NULL);
            } else {
                let np = mtr.get(PageId::new(SYSTEM_SPACE, next), LatchMode::S)?;
                head = Some((read_u64(mtr.page(np), UNDO_TRX_NO), next));
            }
            let n = read_u32(mtr.page(rh), RSEG_HISTORY_LEN);
            mtr.write_u32(rh, RSEG_HISTORY_LEN, n.saturating_sub(1));
        } else {
            let slot = usize::from(read_u16(mtr.page(fp), UNDO_SLOT));
            mtr.write_u32(rh, RSEG_SLOTS + 4 * slot, SLOT_EMPTY);
        }
        give_page(&mut mtr, rh, fp)?;
        mtr.commit()?;
        return Ok(head);
    }
}

/// What an rseg header holds (recovery and purge).
#[derive(Clone, Debug, Default)]
pub struct RsegState {
    pub active: Vec<PageNo>,
    pub history_first: Option<PageNo>,
    pub history_len: u32,
    pub free_len: u32,
}

pub fn read_rseg(inner: &Inner, rseg_page: PageNo) -> Result<RsegState> {
    let mut mtr = Mtr::new(inner);
    let rh = mtr.get(PageId::new(SYSTEM_SPACE, rseg_page), LatchMode::S)?;
    let p = mtr.page(rh);
    if page::page_type(p) != Some(PageType::TrxSys) {
        return Err(bad_undo(rseg_page, "not a rollback segment header"));
    }
    let n = read_u32(p, RSEG_N_SLOTS) as usize;
    let active = (0..n)
        .map(|i| read_u32(p, RSEG_SLOTS + 4 * i))
        .filter(|&x| x != SLOT_EMPTY)
        .collect();
    let first = read_u32(p, RSEG_HISTORY_FIRST);
    let st = RsegState {
        active,
        history_first: (first != FIL_NULL).then_some(first),
        history_len: read_u32(p, RSEG_HISTORY_LEN),
        free_len: read_u32(p, RSEG_FREE_LEN),
    };
    mtr.commit()?;
    Ok(st)
}

/// Pages of an rseg's free cache (for check()).
pub fn rseg_free_pages(inner: &Inner, rseg_page: PageNo) -> Result<Vec<PageNo>> {
    let mut mtr = Mtr::new(inner);
    let rh = mtr.get(PageId::new(SYSTEM_SPACE, rseg_page), LatchMode::S)?;
    let mut pno = read_u32(mtr.page(rh), RSEG_FREE_FIRST);
    mtr.commit()?;
    let mut out = Vec::new();
    while pno != FIL_NULL && out.len() < 1 << 20 {
        out.push(pno);
        let mut m = Mtr::new(inner);
        let pg = m.get(PageId::new(SYSTEM_SPACE, pno), LatchMode::S)?;
        pno = page::next(m.page(pg));
        m.commit()?;
    }
    Ok(out)
}

/// Pages of an undo log chain (for check()).
pub fn log_pages(inner: &Inner, first: PageNo) -> Result<Vec<PageNo>> {
    let mut out = Vec::new();
    let mut pno = first;
    while pno != FIL_NULL && out.len() < 1 << 24 {
        out.push(pno);
        let mut m = Mtr::new(inner);
        let pg = m.get(PageId::new(SYSTEM_SPACE, pno), LatchMode::S)?;
        pno = page::next(m.page(pg));
        m.commit()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roll_ptr_roundtrip() {
        let r = RollPtr {
            insert: true,
            rseg: 17,
            page: 0x0102_0304,
            offset: 999,
        };
        assert_eq!(RollPtr::decode(&r.encode()), r);
        let r2 = RollPtr { insert: false, ..r };
        assert_eq!(RollPtr::decode(&r2.encode()), r2);
    }
}
