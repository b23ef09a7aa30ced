//! Page frame: FIL header, trailer and checksum, plus the page kinds built on it.
//! (InnoDB: fil0fil.h page header, buf0checksum, page0page, rem0rec.)
//!
//! Byte layout: docs/format/page.md.
//!
//! INVARIANTS
//! - I1: a page image leaves memory (doublewrite or home write) only with `stamp` applied, so
//!   its CRC and trailer LSN match its content.
//! - I2: a page image read from disk is handed to the buffer pool only after `verify` accepted
//!   it for the exact (space, page) requested, or it is all zeros (never written).

pub mod index_page;
pub mod record;

use crate::mach::{read_u16, read_u32, read_u64, write_u16, write_u32, write_u64};
use crate::types::{Lsn, PageId, PageNo, SpaceId, FIL_NULL};

pub const FIL_PAGE_SPACE_ID: usize = 0;
pub const FIL_PAGE_OFFSET: usize = 4;
pub const FIL_PAGE_PREV: usize = 8;
pub const FIL_PAGE_NEXT: usize = 12;
pub const FIL_PAGE_LSN: usize = 16;
pub const FIL_PAGE_TYPE: usize = 24;
pub const FIL_HEADER_SIZE: usize = 38;
pub const FIL_TRAILER_SIZE: usize = 8;

/// FIL_PAGE_TYPE values (docs/format/page.md).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u16)]
pub enum PageType {
    Allocated = 0,
    FspHdr = 1,
    FspBitmap = 2,
    Sys = 3,
    Index = 4,
    Blob = 5,
    Free = 6,
    Undo = 7,
    TrxSys = 8,
}

impl PageType {
    pub fn from_u16(v: u16) -> Option<PageType> {
        Some(match v {
            0 => PageType::Allocated,
            1 => PageType::FspHdr,
            2 => PageType::FspBitmap,
            3 => PageType::Sys,
            4 => PageType::Index,
            5 => PageType::Blob,
            6 => PageType::Free,
            7 => PageType::Undo,
            8 => PageType::TrxSys,
            _ => return None,
        })
    }
}

pub fn space_id(p: &[u8]) -> SpaceId {
    read_u32(p, FIL_PAGE_SPACE_ID)
}
pub fn page_no(p: &[u8]) -> PageNo {
    read_u32(p, FIL_PAGE_OFFSET)
}
pub fn prev(p: &[u8]) -> PageNo {
    read_u32(p, FIL_PAGE_PREV)
}
pub fn next(p: &[u8]) -> PageNo {
    read_u32(p, FIL_PAGE_NEXT)
}
pub fn lsn(p: &[u8]) -> Lsn {
    read_u64(p, FIL_PAGE_LSN)
}
pub fn page_type_raw(p: &[u8]) -> u16 {
    read_u16(p, FIL_PAGE_TYPE)
}
pub fn page_type(p: &[u8]) -> Option<PageType> {
    PageType::from_u16(page_type_raw(p))
}
pub fn set_lsn(p: &mut [u8], lsn: Lsn) {
    write_u64(p, FIL_PAGE_LSN, lsn);
}
pub fn set_links(p: &mut [u8], prev: PageNo, next: PageNo) {
    write_u32(p, FIL_PAGE_PREV, prev);
    write_u32(p, FIL_PAGE_NEXT, next);
}

/// Zeroes the page and writes a fresh FIL header (the effect of the PAGE_INIT redo record).
pub fn init(p: &mut [u8], id: PageId, ty: PageType) {
    p.fill(0);
    write_u32(p, FIL_PAGE_SPACE_ID, id.space);
    write_u32(p, FIL_PAGE_OFFSET, id.page);
    set_links(p, FIL_NULL, FIL_NULL);
    write_u16(p, FIL_PAGE_TYPE, ty as u16);
}

/// Writes the trailer: low 32 bits of the page LSN and the CRC-32C of everything before the CRC.
pub fn stamp(p: &mut [u8]) {
    let n = p.len();
    let lsn_low = lsn(p) as u32;
    write_u32(p, n - 8, lsn_low);
    let crc = crc32c::crc32c(&p[..n - 4]);
    write_u32(p, n - 4, crc);
}

/// Why a page image was rejected.
#[derive(Debug, PartialEq, Eq)]
pub enum PageDefect {
    Checksum { stored: u32, computed: u32 },
    TornTrailer,
    WrongPage { space: SpaceId, page: PageNo },
}

impl std::fmt::Display for PageDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageDefect::Checksum { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )
            }
            PageDefect::TornTrailer => write!(f, "trailer LSN does not match the header LSN"),
            PageDefect::WrongPage { space, page } => {
                write!(f, "the page holds [space {space}, page {page}] instead")
            }
        }
    }
}

pub fn is_all_zero(p: &[u8]) -> bool {
    // Compare in 8-byte words; pages are multiples of 4 KiB.
    p.chunks_exact(8).all(|c| c == [0u8; 8])
}

/// Checks a page image read for `id`: CRC, trailer LSN and identity. An all-zero page is
/// accepted (a page allocated in the file but never written).
pub fn verify(p: &[u8], id: PageId) -> Result<(), PageDefect> {
    let n = p.len();
    let stored = read_u32(p, n - 4);
    let computed = crc32c::crc32c(&p[..n - 4]);
    if stored != computed {
        if is_all_zero(p) {
            return Ok(());
        }
        return Err(PageDefect::Checksum { stored, computed });
    }
    if read_u32(p, n - 8) != lsn(p) as u32 {
        return Err(PageDefect::TornTrailer);
    }
    if space_id(p) != id.space || page_no(p) != id.page {
        return Err(PageDefect::WrongPage {
            space: space_id(p),
            page: page_no(p),
        });
    }
    Ok(())
}

/// Checks a page image without knowing which page it should be (doublewrite slots).
pub fn verify_self(p: &[u8]) -> bool {
    !is_all_zero(p) && verify(p, PageId::new(space_id(p), page_no(p))).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_then_verify_and_detect_damage() {
        let id = PageId::new(7, 42);
        let mut p = vec![0u8; 4096];
        init(&mut p, id, PageType::Index);
        set_lsn(&mut p, 0x1_0000_0005);
        p[100] = 9;
        stamp(&mut p);
        assert_eq!(verify(&p, id), Ok(()));
        assert!(verify_self(&p));
        assert!(matches!(
            verify(&p, PageId::new(7, 43)),
            Err(PageDefect::WrongPage { .. })
        ));
        let mut torn = p.clone();
        torn[2048..].fill(0);
        assert!(matches!(
            verify(&torn, id),
            Err(PageDefect::Checksum { .. })
        ));
        let mut flipped = p.clone();
        flipped[1000] ^= 0x10;
        assert!(verify(&flipped, id).is_err());
        assert_eq!(verify(&vec![0u8; 4096], id), Ok(()));
        assert!(!verify_self(&vec![0u8; 4096]));
    }
}
