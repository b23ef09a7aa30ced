//! Pessimistic insert: splits and root raise. (InnoDB: btr_cur_pessimistic_insert,
//! btr_page_split_and_insert, btr_root_raise_and_insert.)
//!
//! A split moves the upper part of a full page to a new right sibling and inserts a node pointer
//! for it into the parent, splitting the parent in turn if needed. The root keeps its page
//! number: a full root first moves its records to a new child and becomes a one-pointer node one
//! level higher, then the child splits. Pages are reserved before the first change (mtr I2).

use crate::error::{Error, Result};
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::{self};
use crate::tablespace::fsp;
use crate::types::{PageId, FIL_NULL};

use super::{node_ptr, page_recs, space_header, Index, Path};

/// Inserts `rec` at the leaf position of `path` (from `descend(.., Intent::TreeInsert)`),
/// splitting pages as needed. `slot` is the insert position in the leaf.
pub fn tree_insert(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    path: &mut Path,
    slot: usize,
    rec: &[u8],
) -> Result<()> {
    let leaf_i = path.levels.len() - 1;
    let leaf = path.levels[leaf_i].page;
    if ip::fits(mtr.page(leaf), rec.len()) {
        let ok = mtr.rec_insert(leaf, slot, rec);
        debug_assert!(ok);
        return Ok(());
    }
    // The leaf splits: latch its right neighbour (which the split relinks) now, before the
    // tablespace header: index pages come before the header in the latch order, and a writer
    // holding that neighbour may be waiting for the header (a BLOB link, an allocation).
    let next = page::next(mtr.page(leaf));
    if next != FIL_NULL {
        mtr.get(
            PageId::new(idx.space, next),
            crate::buffer_pool::LatchMode::X,
        )?;
    }
    // Reserve one page per level that may split, plus one for a root raise (I2 of mtr).
    let hdr = space_header(mtr, idx.space)?;
    fsp::reserve(mtr, hdr, idx.space, path.levels.len() as u32 + 1)?;
    insert_at(mtr, idx, path, hdr, leaf_i, slot, rec.to_vec())
}

fn insert_at(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    path: &mut Path,
    hdr: PageRef,
    li: usize,
    slot: usize,
    rec: Vec<u8>,
) -> Result<()> {
    let p = path.levels[li].page;
    if mtr.rec_insert(p, slot, &rec) {
        return Ok(());
    }
    let is_root = li == 0 && path.from_root;
    let (p, li) = if is_root {
        (root_raise(mtr, idx, path, hdr)?, 1)
    } else {
        (p, li)
    };
    let (right_first, right_no) = split(mtr, idx, hdr, p, slot, rec)?;
    if li == 0 {
        // The parent was released as safe yet the child split: the descent's safety rule failed.
        let id = mtr.id(p);
        return Err(Error::corrupted(
            id.space,
            id.page,
            "split reached a released parent",
        ));
    }
    let level = ip::level(mtr.page(p));
    let ptr = node_ptr(idx, &right_first, level, right_no, false);
    let parent_slot = path.levels[li - 1].slot + 1;
    insert_at(mtr, idx, path, hdr, li - 1, parent_slot, ptr)
}

/// Moves the root's records to a new child and leaves the root a one-pointer node one level up.
/// Returns the child, which takes the root's place in the path.
fn root_raise(mtr: &mut Mtr<'_>, idx: &Index, path: &mut Path, hdr: PageRef) -> Result<PageRef> {
    let root = path.levels[0].page;
    let level = ip::level(mtr.page(root));
    let recs = page_recs(mtr.page(root));
    let cno = fsp::alloc(mtr, hdr, idx.space)?;
    let child = mtr.get_new(PageId::new(idx.space, cno))?;
    mtr.index_init(child, level, idx.id);
    // A secondary index's leaf stamp goes with the records; a clustered root keeps its
    // PAGE_ROOT_AUTO_INC (the same field, index-page.md).
    let stamp = ip::max_trx_id(mtr.page(root));
    if !idx.clustered {
        mtr.raise_max_trx_id(child, stamp);
    }
    let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
    mtr.rec_insert_many(child, 0, &refs);
    let ptr = node_ptr(idx, &recs[0], level, cno, true);
    mtr.index_init(root, level + 1, idx.id);
    if idx.clustered {
        mtr.raise_max_trx_id(root, stamp);
    }
    let ok = mtr.rec_insert(root, 0, &ptr);
    assert!(ok, "a single node pointer always fits an empty root");
    let old = path.levels[0];
    path.levels[0].slot = 0;
    path.levels.insert(
        1,
        super::Level {
            page: child,
            slot: old.slot,
            left: None,
            right: None,
            far_left: None,
        },
    );
    Ok(child)
}

/// Chooses how many of the n+1 records (the page's plus `rec` at `slot`) stay on the left.
fn split_point(p: &[u8], slot: usize, rec: &[u8], page_size: usize) -> usize {
    let n = ip::n_recs(p);
    let (dir, n_dir, _) = ip::direction(p);
    let size = |i: usize| -> usize {
        // conceptual record i
        let r = if i < slot {
            ip::rec(p, i).len()
        } else if i == slot {
            rec.len()
        } else {
            ip::rec(p, i - 1).len()
        };
        r + 2
    };
    let cap = ip::capacity(page_size);
    let fits = |k: usize| {
        let left: usize = (0..k).map(size).sum();
        let right: usize = (k..=n).map(size).sum();
        left <= cap && right <= cap
    };
    // Sequential inserts: keep the page full and start the new one with the new record.
    if slot == n && dir == ip::DIR_RIGHT && n_dir >= 2 && fits(n) {
        return n;
    }
    if slot == 0 && dir == ip::DIR_LEFT && n_dir >= 2 && fits(1) {
        return 1;
    }
    let total: usize = (0..=n).map(size).sum();
    let mut acc = 0;
    let mut k = 0;
    while k < n && acc + size(k) <= total / 2 {
        acc += size(k);
        k += 1;
    }
    let mut k = k.clamp(1, n);
    while !fits(k) && k < n {
        k += 1;
    }
    while !fits(k) && k > 1 {
        k -= 1;
    }
    k
}

/// Splits page `p` inserting `rec` at `slot`; returns (first record of the new right page, its
/// page number).
fn split(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    hdr: PageRef,
    p: PageRef,
    slot: usize,
    rec: Vec<u8>,
) -> Result<(Vec<u8>, u32)> {
    let ps = mtr.inner().bp.page_size();
    let level = ip::level(mtr.page(p));
    let k = split_point(mtr.page(p), slot, &rec, ps);
    let old = page_recs(mtr.page(p));
    let n = old.len();
    let right: Vec<Vec<u8>> = if slot < k {
        old[k - 1..].to_vec()
    } else {
        let mut v: Vec<Vec<u8>> = old[k..slot].to_vec();
        v.push(rec.clone());
        v.extend_from_slice(&old[slot..]);
        v
    };
    // Latch the right neighbour before changing anything (left to right; fallible step first).
    let right_nb = if level == 0 {
        let next = page::next(mtr.page(p));
        if next == FIL_NULL {
            None
        } else {
            Some(mtr.get(
                PageId::new(idx.space, next),
                crate::buffer_pool::LatchMode::X,
            )?)
        }
    } else {
        None
    };
    let nno = fsp::alloc(mtr, hdr, idx.space)?;
    let np = mtr.get_new(PageId::new(idx.space, nno))?;
    mtr.index_init(np, level, idx.id);
    mtr.raise_max_trx_id(np, ip::max_trx_id(mtr.page(p)));
    let refs: Vec<&[u8]> = right.iter().map(Vec::as_slice).collect();
    mtr.rec_insert_many(np, 0, &refs);
    if slot < k {
        mtr.rec_delete_range(p, k - 1, n);
        let ok = mtr.rec_insert(p, slot, &rec);
        assert!(ok, "split point guarantees the left page fits");
    } else {
        mtr.rec_delete_range(p, k, n);
    }
    if level == 0 {
        let pid = mtr.id(p);
        let next = page::next(mtr.page(p));
        let prev = page::prev(mtr.page(p));
        mtr.set_links(np, pid.page, next);
        mtr.set_links(p, prev, nno);
        if let Some(r) = right_nb {
            let rnext = page::next(mtr.page(r));
            mtr.set_links(r, nno, rnext);
        }
    }
    Ok((right[0].clone(), nno))
}
