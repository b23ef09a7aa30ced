//! Values stored off-page: chains of BLOB pages. (InnoDB: btr_store_big_rec_extern_fields,
//! btr_copy_externally_stored_field, btr_free_externally_stored_field.)
//! Layout: docs/format/record.md "Off-page fields"; pending slots: docs/format/tablespace.md.
//!
//! INVARIANTS
//! - I1: every page of a chain is reachable from the chain's first page, and from the moment
//!   the first page is allocated until a record references the chain (or the chain is freed),
//!   the first page sits in a pending slot of the tablespace header. Recovery frees every chain
//!   in a pending slot, so a crash never leaks pages.
//! - I2: a chain is read with its owning leaf latched, and freed only when no record or
//!   undo-visible version references it (rollback of the inserting change, or purge).
//!
//! LATCHING: writing and freeing: tablespace header, then chain pages. Reading: the leaf, then
//! chain pages one at a time.

use std::time::Duration;

use crate::buffer_pool::LatchMode;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::{read_u32, read_u64, write_u32, write_u64};
use crate::mtr::Mtr;
use crate::page::{self, PageType};
use crate::tablespace::fsp;
use crate::types::{PageId, PageNo, SpaceId, FIL_NULL};

pub const BLOB_PART_LEN: usize = 38;
pub const BLOB_DATA: usize = 42;
/// Largest value accepted.
pub const MAX_BLOB: usize = 64 << 20;

pub fn data_per_page(page_size: usize) -> usize {
    page_size - BLOB_DATA - 8
}

/// The 20-byte reference stored in a record.
pub fn make_ref(space: SpaceId, first: PageNo, len: u64) -> [u8; 20] {
    let mut r = [0u8; 20];
    write_u32(&mut r, 0, space);
    write_u32(&mut r, 4, first);
    write_u64(&mut r, 12, len);
    r
}

pub fn ref_page(r: &[u8]) -> PageNo {
    read_u32(r, 4)
}
pub fn ref_len(r: &[u8]) -> u64 {
    read_u64(r, 12)
}

/// A chain written but not yet referenced by a record: its pending slot must be cleared by the
/// mini-transaction that links it (`link`), or the chain freed.
#[derive(Debug, Clone, Copy)]
pub struct PendingBlob {
    pub space: SpaceId,
    pub first: PageNo,
    pub slot: usize,
    pub len: u64,
}

impl PendingBlob {
    pub fn reference(&self) -> [u8; 20] {
        make_ref(self.space, self.first, self.len)
    }
}

/// Writes `data` as a new chain, one page per mini-transaction.
pub fn write(inner: &Inner, space: SpaceId, data: &[u8]) -> Result<PendingBlob> {
    if data.len() > MAX_BLOB {
        return Err(Error::RowTooLarge(format!(
            "a value of {} bytes exceeds the {} byte limit of a column stored off-page",
            data.len(),
            MAX_BLOB
        )));
    }
    let per = data_per_page(inner.bp.page_size());
    let mut head: Option<(PageNo, usize)> = None;
    let mut prev: PageNo = FIL_NULL;
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&data[..0]]
    } else {
        data.chunks(per).collect()
    };
    for chunk in chunks {
        inner.log_free_check()?;
        loop {
            let mut mtr = Mtr::new(inner);
            let hdr = mtr.get(PageId::new(space, 0), LatchMode::X)?;
            if head.is_none() && fsp::pending(mtr.page(hdr)).len() >= fsp::FSP_N_PENDING {
                drop(mtr); // nothing changed; wait for a slot
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            fsp::reserve(&mut mtr, hdr, space, 1)?;
            let pno = fsp::alloc(&mut mtr, hdr, space)?;
            let pg = mtr.get_new(PageId::new(space, pno))?;
            mtr.page_init(pg, PageType::Blob);
            let mut part = [0u8; 4];
            write_u32(&mut part, 0, chunk.len() as u32);
            mtr.write(pg, BLOB_PART_LEN, &part);
            if !chunk.is_empty() {
                mtr.write(pg, BLOB_DATA, chunk);
            }
            match head {
                None => {
                    let slot = fsp::pending_add(&mut mtr, hdr, pno).expect("slot checked above");
                    head = Some((pno, slot));
                }
                Some(_) => {
                    let pp = mtr.get(PageId::new(space, prev), LatchMode::X)?;
                    let pprev = page::prev(mtr.page(pp));
                    mtr.set_links(pp, pprev, pno);
                }
            }
            mtr.commit()?;
            prev = pno;
            break;
        }
    }
    let (first, slot) = head.expect("at least one page written");
    Ok(PendingBlob {
        space,
        first,
        slot,
        len: data.len() as u64,
    })
}

/// Clears the pending slot of a chain now referenced by a record; called inside the
/// mini-transaction that writes the record, after its index pages are latched.
pub fn link(mtr: &mut Mtr<'_>, b: &PendingBlob) -> Result<()> {
    let hdr = mtr.get(PageId::new(b.space, 0), LatchMode::X)?;
    fsp::pending_clear(mtr, hdr, b.slot);
    Ok(())
}

/// Reads a whole value given its reference (the owning leaf is latched by the caller, I2).
pub fn read(mtr: &mut Mtr<'_>, space: SpaceId, r: &[u8]) -> Result<Vec<u8>> {
    let len = ref_len(r);
    if len > MAX_BLOB as u64 {
        return Err(Error::corrupted(
            space,
            ref_page(r),
            "off-page reference with a bad length",
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    let mut pno = ref_page(r);
    // A chain has at least one page; bound the walk so a damaged cycle cannot loop forever.
    let max_pages = len as usize / data_per_page(mtr.inner().bp.page_size()) + 2;
    for _ in 0..max_pages {
        if pno == FIL_NULL {
            break;
        }
        let pg = mtr.get(PageId::new(space, pno), LatchMode::S)?;
        let p = mtr.page(pg);
        if page::page_type(p) != Some(PageType::Blob) {
            return Err(Error::corrupted(space, pno, "expected a BLOB page"));
        }
        let part = read_u32(p, BLOB_PART_LEN) as usize;
        if part > data_per_page(p.len()) || out.len() + part > len as usize {
            return Err(Error::corrupted(
                space,
                pno,
                "BLOB part length out of range",
            ));
        }
        out.extend_from_slice(&p[BLOB_DATA..BLOB_DATA + part]);
        let next = page::next(p);
        mtr.release(pg);
        pno = next;
    }
    if pno != FIL_NULL || out.len() as u64 != len {
        return Err(Error::corrupted(
            space,
            ref_page(r),
            "BLOB chain length does not match its reference",
        ));
    }
    Ok(out)
}

/// Frees a chain no record references any more (I2), one page per mini-transaction. The chain
/// is first put in a pending slot so a crash part way finishes the job at recovery.
pub fn free(inner: &Inner, space: SpaceId, first: PageNo) -> Result<()> {
    let slot = loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let hdr = mtr.get(PageId::new(space, 0), LatchMode::X)?;
        match fsp::pending_add(&mut mtr, hdr, first) {
            Some(s) => {
                mtr.commit()?;
                break s;
            }
            None => {
                drop(mtr);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    free_from_slot(inner, space, slot, first)
}

/// Frees the chain starting at `page`, recorded in pending slot `slot`, page by page.
pub fn free_from_slot(inner: &Inner, space: SpaceId, slot: usize, mut page: PageNo) -> Result<()> {
    while page != FIL_NULL {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let hdr = mtr.get(PageId::new(space, 0), LatchMode::X)?;
        let pg = mtr.get(PageId::new(space, page), LatchMode::X)?;
        let next = if page::page_type(mtr.page(pg)) == Some(PageType::Blob) {
            page::next(mtr.page(pg))
        } else {
            // Already freed (a crash after this page's free but before the slot moved on
            // cannot happen: both are in one mtr), so this is damage.
            return Err(Error::corrupted(
                space,
                page,
                "pending BLOB chain reaches a non-BLOB page",
            ));
        };
        fsp::free(&mut mtr, hdr, pg)?;
        if next == FIL_NULL {
            fsp::pending_clear(&mut mtr, hdr, slot);
        } else {
            fsp::pending_set(&mut mtr, hdr, slot, next);
        }
        mtr.commit()?;
        page = next;
    }
    Ok(())
}

/// Puts chains in pending slots inside `mtr`, which removes their last reference in the same
/// mini-transaction. Call after the mtr latched its index pages and before it changes anything:
/// returns None (nothing changed) when too few slots are free; the caller retries later.
pub fn register(
    mtr: &mut Mtr<'_>,
    space: SpaceId,
    heads: &[PageNo],
) -> Result<Option<Vec<(usize, PageNo)>>> {
    if heads.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let hdr = mtr.get(PageId::new(space, 0), LatchMode::X)?;
    if fsp::FSP_N_PENDING - fsp::pending(mtr.page(hdr)).len() < heads.len() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(heads.len());
    for &h in heads {
        let slot = fsp::pending_add(mtr, hdr, h).expect("slots counted above");
        out.push((slot, h));
    }
    Ok(Some(out))
}

/// Frees chains put in pending slots by `register` (after its mtr committed).
pub fn free_registered(inner: &Inner, space: SpaceId, regs: &[(usize, PageNo)]) -> Result<()> {
    for &(slot, head) in regs {
        free_from_slot(inner, space, slot, head)?;
    }
    Ok(())
}

/// Frees the chain whose reference sits at `ref_off` of undo page `undo_page` (purge of an old
/// version): one mtr moves the chain to a pending slot and overwrites the reference's page
/// number with FIL_NULL, so processing the undo record again frees nothing twice.
pub fn free_from_undo(
    inner: &Inner,
    space: SpaceId,
    undo_page: PageNo,
    ref_off: usize,
) -> Result<()> {
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let up = mtr.get(
            PageId::new(crate::types::SYSTEM_SPACE, undo_page),
            LatchMode::X,
        )?;
        let head = read_u32(mtr.page(up), ref_off + 4);
        if head == FIL_NULL {
            return Ok(());
        }
        let Some(regs) = register(&mut mtr, space, &[head])? else {
            drop(mtr);
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        let mut nul = [0u8; 4];
        write_u32(&mut nul, 0, FIL_NULL);
        mtr.write(up, ref_off + 4, &nul);
        mtr.commit()?;
        return free_registered(inner, space, &regs);
    }
}

/// Recovery: frees every chain left in a pending slot of `space` (I1).
pub fn free_pending(inner: &Inner, space: SpaceId) -> Result<usize> {
    let pending = {
        let mut mtr = Mtr::new(inner);
        let hdr = mtr.get(PageId::new(space, 0), LatchMode::S)?;
        let v = fsp::pending(mtr.page(hdr));
        mtr.commit()?;
        v
    };
    for &(slot, page) in &pending {
        free_from_slot(inner, space, slot, page)?;
    }
    Ok(pending.len())
}
