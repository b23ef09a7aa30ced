//! B-tree node pages: a slotted page of records in key order (InnoDB: page0page, page0cur).
//! Byte layout: docs/format/index-page.md.
//!
//! Every mutating function here is called both when a mini-transaction changes the page and when
//! recovery replays the redo record describing that change, so each one is a deterministic
//! function of the page bytes and its arguments (I1). A function that cannot apply its change
//! returns `false` and leaves the page untouched (I2).
//!
//! INVARIANTS
//! - I1: same page bytes + same call = same resulting bytes (no hidden state, no randomness).
//! - I2: `insert`/`update` either apply fully or return false with the page unchanged.
//! - I3: slots are sorted by key (maintained by callers, checked by `btree::check`), every slot
//!   points inside `[heap_top, size-8)`, and live records never overlap.
//! - I4: `heap_top - (PAGE_SLOTS + 2 n)` is the contiguous free gap; PAGE_GARBAGE counts the
//!   other free bytes inside the heap.

use crate::mach::{read_u16, read_u64, write_u16, write_u64};
use crate::page::record::rec_len;
use crate::page::{self, PageType, FIL_TRAILER_SIZE};
use crate::types::PageId;

pub const PAGE_N_RECS: usize = 38;
pub const PAGE_HEAP_TOP: usize = 40;
pub const PAGE_GARBAGE: usize = 42;
pub const PAGE_LEVEL: usize = 44;
pub const PAGE_INDEX_ID: usize = 46;
pub const PAGE_MAX_TRX_ID: usize = 54;
pub const PAGE_LAST_INSERT: usize = 62;
pub const PAGE_N_DIRECTION: usize = 64;
pub const PAGE_DIRECTION: usize = 66;
pub const PAGE_SLOTS: usize = 72;

pub const DIR_NONE: u8 = 0;
pub const DIR_RIGHT: u8 = 1;
pub const DIR_LEFT: u8 = 2;

/// Largest record a page of this size accepts: two of them (with slots) always fit.
pub fn max_rec_size(page_size: usize) -> usize {
    (page_size - PAGE_SLOTS - FIL_TRAILER_SIZE) / 2 - 2
}

/// Bytes available for records and slots in an empty page.
pub fn capacity(page_size: usize) -> usize {
    page_size - PAGE_SLOTS - FIL_TRAILER_SIZE
}

/// Formats an empty node (the effect of the INDEX_INIT redo record).
pub fn init(p: &mut [u8], id: PageId, level: u16, index_id: u64) {
    page::init(p, id, PageType::Index);
    let end = data_end(p);
    write_u16(p, PAGE_HEAP_TOP, end as u16);
    write_u16(p, PAGE_LEVEL, level);
    write_u64(p, PAGE_INDEX_ID, index_id);
}

#[inline]
fn data_end(p: &[u8]) -> usize {
    p.len() - FIL_TRAILER_SIZE
}
#[inline]
pub fn n_recs(p: &[u8]) -> usize {
    usize::from(read_u16(p, PAGE_N_RECS))
}
#[inline]
pub fn level(p: &[u8]) -> u16 {
    read_u16(p, PAGE_LEVEL)
}
#[inline]
pub fn is_leaf(p: &[u8]) -> bool {
    level(p) == 0
}
#[inline]
pub fn index_id(p: &[u8]) -> u64 {
    read_u64(p, PAGE_INDEX_ID)
}
#[inline]
pub fn heap_top(p: &[u8]) -> usize {
    usize::from(read_u16(p, PAGE_HEAP_TOP))
}
#[inline]
pub fn garbage(p: &[u8]) -> usize {
    usize::from(read_u16(p, PAGE_GARBAGE))
}
pub fn max_trx_id(p: &[u8]) -> u64 {
    read_u64(p, PAGE_MAX_TRX_ID)
}
pub fn direction(p: &[u8]) -> (u8, u16, u16) {
    (
        p[PAGE_DIRECTION],
        read_u16(p, PAGE_N_DIRECTION),
        read_u16(p, PAGE_LAST_INSERT),
    )
}

#[inline]
pub fn rec_offset(p: &[u8], slot: usize) -> usize {
    usize::from(read_u16(p, PAGE_SLOTS + 2 * slot))
}

/// The record in `slot`.
#[inline]
pub fn rec(p: &[u8], slot: usize) -> &[u8] {
    let off = rec_offset(p, slot);
    &p[off..off + rec_len(&p[off..])]
}

/// Contiguous free gap between the slot array and the heap.
#[inline]
pub fn gap(p: &[u8]) -> usize {
    heap_top(p).saturating_sub(PAGE_SLOTS + 2 * n_recs(p))
}

/// Bytes available for new records and their slots, after compaction if need be.
#[inline]
pub fn free_space(p: &[u8]) -> usize {
    gap(p) + garbage(p)
}

/// Bytes used by live records and slots.
pub fn used_space(p: &[u8]) -> usize {
    capacity(p.len()) - free_space(p)
}

/// True if a record of `len` bytes can be inserted (with compaction if needed).
#[inline]
pub fn fits(p: &[u8], len: usize) -> bool {
    free_space(p) >= len + 2
}

fn set_n_recs(p: &mut [u8], n: usize) {
    write_u16(p, PAGE_N_RECS, n as u16);
}
fn set_heap_top(p: &mut [u8], v: usize) {
    write_u16(p, PAGE_HEAP_TOP, v as u16);
}
fn set_garbage(p: &mut [u8], v: usize) {
    write_u16(p, PAGE_GARBAGE, v as u16);
}
fn set_slot(p: &mut [u8], slot: usize, off: usize) {
    write_u16(p, PAGE_SLOTS + 2 * slot, off as u16);
}

/// Rewrites the heap so all free space is in the gap. Records keep their slot order; slot 0's
/// record ends at the page end.
pub fn compact(p: &mut [u8]) {
    let n = n_recs(p);
    let end = data_end(p);
    let top = heap_top(p);
    let old: Vec<u8> = p[top..end].to_vec();
    let mut w = end;
    for s in 0..n {
        let off = rec_offset(p, s) - top;
        let len = rec_len(&old[off..]);
        w -= len;
        p[w..w + len].copy_from_slice(&old[off..off + len]);
        set_slot(p, s, w);
    }
    p[top..w].fill(0);
    set_heap_top(p, w);
    set_garbage(p, 0);
}

/// Makes room for `len` record bytes in the gap (compacting if needed) and returns the offset
/// where the record goes. The caller has checked the space.
fn alloc_in_heap(p: &mut [u8], len: usize, extra_slots: usize) -> usize {
    if gap(p) < len + 2 * extra_slots {
        compact(p);
    }
    let off = heap_top(p) - len;
    set_heap_top(p, off);
    off
}

/// Releases the heap bytes of the record at `off`.
fn free_in_heap(p: &mut [u8], off: usize, len: usize) {
    if off == heap_top(p) {
        p[off..off + len].fill(0);
        set_heap_top(p, off + len);
    } else {
        let g = garbage(p) + len;
        set_garbage(p, g);
    }
}

fn insert_raw(p: &mut [u8], slot: usize, rec: &[u8]) {
    let n = n_recs(p);
    let off = alloc_in_heap(p, rec.len(), 1);
    p[off..off + rec.len()].copy_from_slice(rec);
    let s0 = PAGE_SLOTS + 2 * slot;
    let s1 = PAGE_SLOTS + 2 * n;
    p.copy_within(s0..s1, s0 + 2);
    set_slot(p, slot, off);
    set_n_recs(p, n + 1);
}

fn remove_raw(p: &mut [u8], slot: usize) {
    let n = n_recs(p);
    let off = rec_offset(p, slot);
    let len = rec_len(&p[off..]);
    free_in_heap(p, off, len);
    let s0 = PAGE_SLOTS + 2 * slot;
    let s1 = PAGE_SLOTS + 2 * n;
    p.copy_within(s0 + 2..s1, s0);
    p[s1 - 2..s1].fill(0);
    set_n_recs(p, n - 1);
}

/// Inserts a record so it becomes slot `slot`. Returns false (page unchanged) if it does not fit.
pub fn insert(p: &mut [u8], slot: usize, rec: &[u8]) -> bool {
    debug_assert!(slot <= n_recs(p));
    debug_assert_eq!(rec_len(rec), rec.len());
    if !fits(p, rec.len()) {
        return false;
    }
    insert_raw(p, slot, rec);
    // Split heuristic hints (docs/format/index-page.md), updated deterministically.
    let (dir, n_dir, last) = direction(p);
    let (dir, n_dir) = if last != 0 && slot == usize::from(last) {
        (
            DIR_RIGHT,
            if dir == DIR_RIGHT {
                n_dir.saturating_add(1)
            } else {
                1
            },
        )
    } else if last != 0 && slot + 1 == usize::from(last) {
        (
            DIR_LEFT,
            if dir == DIR_LEFT {
                n_dir.saturating_add(1)
            } else {
                1
            },
        )
    } else {
        (DIR_NONE, 0)
    };
    p[PAGE_DIRECTION] = dir;
    write_u16(p, PAGE_N_DIRECTION, n_dir);
    write_u16(p, PAGE_LAST_INSERT, (slot + 1) as u16);
    true
}

/// Inserts several records at consecutive slots starting at `slot`. The caller guarantees
/// they fit (a split moving records into a fresh page).
pub fn insert_many<'a>(p: &mut [u8], slot: usize, recs: impl IntoIterator<Item = &'a [u8]>) {
    for (i, r) in recs.into_iter().enumerate() {
        assert!(fits(p, r.len()), "insert_many overflow"); // redo replay must not diverge
        insert_raw(p, slot + i, r);
    }
    write_u16(p, PAGE_LAST_INSERT, 0);
    p[PAGE_DIRECTION] = DIR_NONE;
    write_u16(p, PAGE_N_DIRECTION, 0);
}

/// Removes the record in `slot`.
pub fn delete(p: &mut [u8], slot: usize) {
    debug_assert!(slot < n_recs(p));
    remove_raw(p, slot);
    write_u16(p, PAGE_LAST_INSERT, 0);
}

/// Removes slots `[from, to)`.
pub fn delete_range(p: &mut [u8], from: usize, to: usize) {
    debug_assert!(from <= to && to <= n_recs(p));
    for _ in from..to {
        remove_raw(p, from);
    }
    write_u16(p, PAGE_LAST_INSERT, 0);
}

/// Replaces the record in `slot`. Returns false (page unchanged) if the new one does not fit.
pub fn update(p: &mut [u8], slot: usize, rec: &[u8]) -> bool {
    let off = rec_offset(p, slot);
    let old_len = rec_len(&p[off..]);
    if rec.len() == old_len {
        p[off..off + old_len].copy_from_slice(rec);
        return true;
    }
    if free_space(p) + old_len < rec.len() {
        return false;
    }
    let last = read_u16(p, PAGE_LAST_INSERT);
    remove_raw(p, slot);
    insert_raw(p, slot, rec);
    write_u16(p, PAGE_LAST_INSERT, last);
    true
}

/// Structural self-check of the slot array and heap (record order is checked by the B-tree).
pub fn check_structure(p: &[u8]) -> Result<(), String> {
    let n = n_recs(p);
    let end = data_end(p);
    let top = heap_top(p);
    if PAGE_SLOTS + 2 * n > top || top > end {
        return Err(format!(
            "slot array ({n} slots) overlaps the heap (top {top})"
        ));
    }
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
    for s in 0..n {
        let off = rec_offset(p, s);
        if off < top || off + 3 > end {
            return Err(format!("slot {s} points outside the heap ({off})"));
        }
        let len = rec_len(&p[off..]);
        if len < 3 || off + len > end {
            return Err(format!("record in slot {s} has bad length {len}"));
        }
        spans.push((off, off + len));
    }
    spans.sort_unstable();
    let mut used = 0;
    for w in spans.windows(2) {
        if w[0].1 > w[1].0 {
            return Err("records overlap".into());
        }
    }
    for (a, b) in &spans {
        used += b - a;
    }
    if used + garbage(p) != end - top {
        return Err(format!(
            "heap accounting: {} live + {} garbage != {} heap bytes",
            used,
            garbage(p),
            end - top
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::record::{build, FieldDef, FieldVal, RecLayout};

    fn rec_of(n: u32, pad: usize) -> Vec<u8> {
        let l = RecLayout::new(vec![FieldDef::fixed(4), FieldDef::var(1000)], 1);
        let mut out = Vec::new();
        let padv = vec![b'x'; pad];
        build(
            &l,
            0,
            [FieldVal::Bytes(&n.to_be_bytes()), FieldVal::Bytes(&padv)],
            &mut out,
        );
        out
    }

    fn keys(p: &[u8]) -> Vec<u32> {
        (0..n_recs(p))
            .map(|s| crate::mach::read_u32(rec(p, s), 3))
            .collect()
    }

    #[test]
    fn insert_delete_update_compact_are_deterministic() {
        let mut p = vec![0u8; 4096];
        init(&mut p, PageId::new(1, 3), 0, 77);
        assert_eq!(gap(&p), capacity(4096));
        let mut q = p.clone();
        let ops = |p: &mut Vec<u8>| {
            for i in 0..20u32 {
                assert!(insert(p, i as usize, &rec_of(i * 2, 50)));
            }
            delete(p, 3);
            delete_range(p, 5, 9);
            assert!(update(p, 0, &rec_of(0, 120)));
            assert!(update(p, 1, &rec_of(2, 10)));
            let mut i = 0;
            while insert(p, 0, &rec_of(1000 + i, 90)) {
                i += 1;
            }
            check_structure(p).unwrap();
        };
        ops(&mut p);
        ops(&mut q);
        assert_eq!(p, q, "same operations must give identical bytes");
        assert!(!fits(&p, 200));
        let before = p.clone();
        assert!(!insert(&mut p, 0, &rec_of(5, 900)));
        assert_eq!(p, before, "a failed insert leaves the page untouched");
    }

    #[test]
    fn slots_stay_in_given_order_and_hints_track_direction() {
        let mut p = vec![0u8; 4096];
        init(&mut p, PageId::new(1, 3), 0, 1);
        for i in 0..10u32 {
            assert!(insert(&mut p, i as usize, &rec_of(i, 5)));
        }
        assert_eq!(direction(&p).0, DIR_RIGHT);
        assert_eq!(direction(&p).1, 9);
        assert_eq!(keys(&p), (0..10).collect::<Vec<_>>());
        delete(&mut p, 0);
        compact(&mut p);
        check_structure(&p).unwrap();
        assert_eq!(keys(&p), (1..10).collect::<Vec<_>>());
        assert_eq!(garbage(&p), 0);
    }

    #[test]
    fn two_max_records_always_fit() {
        for ps in [4096usize, 8192, 16384, 32768, 65536] {
            let mut p = vec![0u8; ps];
            init(&mut p, PageId::new(0, 1), 0, 1);
            let m = max_rec_size(ps);
            let mut r = vec![0u8; m];
            crate::mach::write_u16(&mut r, 0, m as u16);
            assert!(insert(&mut p, 0, &r));
            assert!(insert(&mut p, 1, &r));
        }
    }
}
