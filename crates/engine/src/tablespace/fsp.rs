//! Page allocation within a tablespace: FSP header, allocation bitmaps, growth, pending BLOB
//! chains. (InnoDB: fsp0fsp, with bitmaps instead of extent descriptors.)
//! Byte layout: docs/format/tablespace.md.
//!
//! INVARIANTS
//! - I1: a page is handed out only if its bitmap bit was clear; the bit is set in the same mtr
//!   that initialises the page, so a crash never leaves a page both free and in use.
//! - I2: FSP_USED equals the number of set bits; FSP_SIZE pages are backed by the file (grown
//!   before FSP_SIZE is raised).
//! - I3: `reserve` does every fallible step (file growth) before it changes a page, so a failed
//!   reservation (TableFull) leaves the mtr unchanged.
//!
//! LATCHING: the FSP header page (page 0) is X-latched by the mtr for every allocation or free
//! and is taken after the index pages the operation holds; bitmap pages k*N after page 0, in
//! ascending order.

use crate::buffer_pool::LatchMode;
use crate::error::Result;
use crate::mach::{read_u32, read_u8};
use crate::mtr::{Mtr, PageRef};
use crate::page::PageType;
use crate::types::{PageId, PageNo, SpaceId, FIL_NULL};

pub const FSP_SPACE_ID: usize = 38;
pub const FSP_FLAGS: usize = 42;
pub const FSP_SIZE: usize = 46;
pub const FSP_ALLOC_HINT: usize = 50;
pub const FSP_USED: usize = 54;
pub const FSP_BITMAP_PAGES: usize = 58;
pub const FSP_PENDING: usize = 62;
pub const FSP_N_PENDING: usize = 64;
pub const FSP_BITMAP: usize = 384;
/// The on-disk format (docs/format/tablespace.md: what each version changed).
pub const FORMAT_VERSION: u32 = 2;

/// Pages described by one bitmap page.
pub fn bitmap_span(page_size: usize) -> u32 {
    ((page_size - FSP_BITMAP - 8) * 8) as u32
}

/// Pages in an extent (InnoDB's FSP_EXTENT_SIZE): 1 MiB of pages up to 16 KiB pages, then 64
/// pages (2 MiB at 32 KiB, 4 MiB at 64 KiB). Allocation here uses bitmaps, not extent
/// descriptors; the extent is the aligned group of pages that neighbour flushing and
/// read-ahead work on.
pub fn extent_pages(page_size: usize) -> u32 {
    ((1 << 20) / page_size).max(64) as u32
}

/// FSP_FLAGS for a page size.
pub fn flags_for(page_size: usize) -> u32 {
    page_size.trailing_zeros() | (FORMAT_VERSION << 8)
}

/// Page size recorded in FSP_FLAGS.
pub fn page_size_of_flags(flags: u32) -> Option<usize> {
    let shift = flags & 0xff;
    (12..=16).contains(&shift).then(|| 1usize << shift)
}

pub fn size(hdr: &[u8]) -> u32 {
    read_u32(hdr, FSP_SIZE)
}
pub fn used(hdr: &[u8]) -> u32 {
    read_u32(hdr, FSP_USED)
}

/// Pages to add when a space of `size` pages grows.
fn growth(size: u32, page_size: usize) -> u32 {
    let max = ((64 << 20) / page_size) as u32;
    (size / 8).clamp(8, max)
}

/// Initialises the header (page 0) of a new tablespace of `size` pages, marking page 0 (and any
/// bitmap pages within `size`) allocated. Returns the header, X-latched in the mtr.
pub fn init_space(mtr: &mut Mtr<'_>, space: SpaceId, size: u32) -> Result<PageRef> {
    let ps = mtr.inner().bp.page_size();
    let hdr = mtr.get_new(PageId::new(space, 0))?;
    mtr.page_init(hdr, PageType::FspHdr);
    mtr.write_u32(hdr, FSP_SPACE_ID, space);
    mtr.write_u32(hdr, FSP_FLAGS, flags_for(ps));
    mtr.write_u32(hdr, FSP_SIZE, size);
    mtr.write_u32(hdr, FSP_ALLOC_HINT, 1);
    mtr.write_u32(hdr, FSP_USED, 0);
    mtr.write_u32(hdr, FSP_BITMAP_PAGES, bitmap_span(ps));
    let nulls = [0xFFu8; 4 * FSP_N_PENDING];
    mtr.write(hdr, FSP_PENDING, &nulls);
    init_bitmaps(mtr, hdr, space, 0, size)?;
    mark(mtr, hdr, space, 0, true)?;
    Ok(hdr)
}

/// Formats the bitmap pages that fall in [from, to) and marks them allocated.
fn init_bitmaps(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId, from: u32, to: u32) -> Result<()> {
    let span = bitmap_span(mtr.inner().bp.page_size());
    let mut k = from.div_ceil(span).max(1);
    while k * span < to {
        let bm = mtr.get_new(PageId::new(space, k * span))?;
        mtr.page_init(bm, PageType::FspBitmap);
        mark(mtr, hdr, space, k * span, true)?;
        k += 1;
    }
    Ok(())
}

/// The bitmap page and byte offset holding page `p`'s bit.
fn locate(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId, p: PageNo) -> Result<(PageRef, usize)> {
    let span = bitmap_span(mtr.inner().bp.page_size());
    let k = p / span;
    let bm = if k == 0 {
        hdr
    } else {
        mtr.get(PageId::new(space, k * span), LatchMode::X)?
    };
    Ok((bm, FSP_BITMAP + ((p % span) / 8) as usize))
}

fn mark(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId, p: PageNo, on: bool) -> Result<()> {
    let (bm, off) = locate(mtr, hdr, space, p)?;
    let byte = read_u8(mtr.page(bm), off);
    let bit = 1u8 << (p % 8);
    let was = byte & bit != 0;
    assert!(
        was != on,
        "page {p} of space {space} already {}",
        if on { "used" } else { "free" }
    );
    let new = if on { byte | bit } else { byte & !bit };
    mtr.write(bm, off, &[new]);
    let used = used(mtr.page(hdr));
    mtr.write_u32(hdr, FSP_USED, if on { used + 1 } else { used - 1 });
    Ok(())
}

/// True if page `p` is marked allocated.
pub fn is_used(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId, p: PageNo) -> Result<bool> {
    let (bm, off) = locate(mtr, hdr, space, p)?;
    Ok(read_u8(mtr.page(bm), off) & (1 << (p % 8)) != 0)
}

/// Ensures at least `n` free pages, growing the file if needed (I3). Call before changing any
/// page of the operation; the header must be X-latched in `mtr`.
pub fn reserve(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId, n: u32) -> Result<()> {
    let (sz, used) = (size(mtr.page(hdr)), used(mtr.page(hdr)));
    if sz - used > n {
        return Ok(());
    }
    let inner = mtr.inner();
    let ps = inner.bp.page_size();
    let span = bitmap_span(ps);
    // Bitmap pages that fall inside the grown range take pages too.
    let bitmaps_in = |from: u32, to: u32| (to.max(1) - 1) / span - (from.max(1) - 1) / span;
    let mut new_size = sz + growth(sz, ps);
    while new_size - used - bitmaps_in(sz, new_size) < n + 1 {
        new_size += growth(new_size, ps);
    }
    let sp = inner.fil.space(space)?;
    inner.fil.grow(&sp, new_size)?;
    init_bitmaps(mtr, hdr, space, sz, new_size)?;
    mtr.write_u32(hdr, FSP_SIZE, new_size);
    Ok(())
}

/// Allocates a page (its bit set in this mtr). The caller reserved space first; the page must
/// then be initialised in the same mtr (I1).
pub fn alloc(mtr: &mut Mtr<'_>, hdr: PageRef, space: SpaceId) -> Result<PageNo> {
    let sz = size(mtr.page(hdr));
    let hint = read_u32(mtr.page(hdr), FSP_ALLOC_HINT).max(1);
    for start in [hint, 1] {
        let mut p = start;
        while p < sz {
            let (bm, off) = locate(mtr, hdr, space, p)?;
            let byte = read_u8(mtr.page(bm), off);
            if byte == 0xFF {
                p = (p | 7) + 1;
                continue;
            }
            if byte & (1 << (p % 8)) == 0 {
                mark(mtr, hdr, space, p, true)?;
                mtr.write_u32(hdr, FSP_ALLOC_HINT, p + 1);
                return Ok(p);
            }
            p += 1;
        }
    }
    // reserve() guarantees a free page; reaching here means the bitmap is inconsistent.
    Err(crate::error::Error::corrupted(
        space,
        0,
        "no free page after a successful reservation",
    ))
}

/// Frees page `p`: clears its bit and marks the (X-latched) page FREE.
pub fn free(mtr: &mut Mtr<'_>, hdr: PageRef, page: PageRef) -> Result<()> {
    let id = mtr.id(page);
    mark(mtr, hdr, id.space, id.page, false)?;
    mtr.page_init(page, PageType::Free);
    let hint = read_u32(mtr.page(hdr), FSP_ALLOC_HINT);
    if id.page < hint {
        mtr.write_u32(hdr, FSP_ALLOC_HINT, id.page);
    }
    Ok(())
}

/// Pending BLOB chains (docs/format/tablespace.md): the slots in use as (slot, first page).
pub fn pending(hdr: &[u8]) -> Vec<(usize, PageNo)> {
    (0..FSP_N_PENDING)
        .map(|i| (i, read_u32(hdr, FSP_PENDING + 4 * i)))
        // 0 never heads a chain (page 0 is this header): it is what an unwritten header reads.
        .filter(|&(_, p)| p != FIL_NULL && p != 0)
        .collect()
}

/// Takes a free pending slot for chain head `page`; None if all slots are busy.
pub fn pending_add(mtr: &mut Mtr<'_>, hdr: PageRef, page: PageNo) -> Option<usize> {
    let slot =
        (0..FSP_N_PENDING).find(|&i| read_u32(mtr.page(hdr), FSP_PENDING + 4 * i) == FIL_NULL)?;
    mtr.write_u32(hdr, FSP_PENDING + 4 * slot, page);
    Some(slot)
}

pub fn pending_set(mtr: &mut Mtr<'_>, hdr: PageRef, slot: usize, page: PageNo) {
    mtr.write_u32(hdr, FSP_PENDING + 4 * slot, page);
}

pub fn pending_clear(mtr: &mut Mtr<'_>, hdr: PageRef, slot: usize) {
    mtr.write_u32(hdr, FSP_PENDING + 4 * slot, FIL_NULL);
}

/// Reads the allocation bit of every page in [0, size) from page images (for check()).
pub fn bitmap_bits(hdr: &[u8], bitmaps: &[(u32, &[u8])], page_size: usize) -> Vec<bool> {
    let sz = size(hdr);
    let span = bitmap_span(page_size);
    let mut out = Vec::with_capacity(sz as usize);
    for p in 0..sz {
        let k = p / span;
        let img = if k == 0 {
            Some(hdr)
        } else {
            bitmaps
                .iter()
                .find(|(pn, _)| *pn == k * span)
                .map(|(_, b)| *b)
        };
        let bit =
            img.is_some_and(|b| b[FSP_BITMAP + ((p % span) / 8) as usize] & (1 << (p % 8)) != 0);
        out.push(bit);
    }
    out
}
