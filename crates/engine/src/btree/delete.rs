//! Pessimistic delete: merges and root lift. (InnoDB: btr_cur_pessimistic_delete, btr_compress,
//! btr_lift_page_up.)
//!
//! After a record is removed, a non-root page whose used space falls below a quarter of the
//! page is merged with a sibling under the same parent (into its left sibling, or, for the
//! first child, its right sibling is merged into it) when the result fits comfortably; the
//! parent loses a node pointer and is checked in turn. An empty page that is its parent's only
//! child is discarded (a leaf is unlinked from its neighbours first), which may empty the parent
//! in turn. A root left with a single node pointer takes over its child's records (the tree gets
//! one level shorter); a root left with none becomes an empty leaf.

use crate::buffer_pool::LatchMode;
use crate::error::Result;
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::{self};
use crate::tablespace::fsp;
use crate::types::{PageId, FIL_NULL};

use super::{child_of, merge_threshold, page_recs, space_header, Index, Path};

/// Removes the record at `slot` of the leaf of `path` (from `descend(.., Intent::TreeDelete)`)
/// and merges pages that become too empty.
pub fn tree_delete(mtr: &mut Mtr<'_>, idx: &Index, path: &mut Path, slot: usize) -> Result<()> {
    let ps = mtr.inner().bp.page_size();
    let mut li = path.levels.len() - 1;
    mtr.rec_delete(path.levels[li].page, slot);
    let mut hdr: Option<PageRef> = None;
    let mut survivor: Option<PageRef> = None;
    loop {
        let lv = path.levels[li];
        if li == 0 {
            if path.from_root {
                lift_root(mtr, idx, lv.page, survivor, &mut hdr)?;
            }
            return Ok(());
        }
        let p = mtr.page(lv.page);
        if ip::n_recs(p) > 0 && ip::used_space(p) >= merge_threshold(ps) {
            return Ok(());
        }
        let parent = path.levels[li - 1];
        // Merging must leave room to grow; an empty page always goes.
        let limit = ip::capacity(ps) * 3 / 4;
        let empty = ip::n_recs(p) == 0;
        let used = |mtr: &Mtr<'_>, r: PageRef| ip::used_space(mtr.page(r));
        if empty
            && lv.left.is_none()
            && lv.right.is_none()
            && ip::n_recs(mtr.page(parent.page)) == 1
        {
            discard(mtr, idx, &lv, &mut hdr)?;
            mtr.rec_delete(parent.page, parent.slot);
            survivor = None;
            li -= 1;
            continue;
        }
        let merged = if let Some(left) = lv.left {
            if empty || used(mtr, left) + used(mtr, lv.page) <= limit {
                merge_into(mtr, idx, left, lv.page, &mut hdr)?;
                mtr.rec_delete(parent.page, parent.slot);
                survivor = Some(left);
                true
            } else {
                false
            }
        } else if let Some(right) = lv.right {
            if empty || used(mtr, lv.page) + used(mtr, right) <= limit {
                merge_into(mtr, idx, lv.page, right, &mut hdr)?;
                mtr.rec_delete(parent.page, parent.slot + 1);
                survivor = Some(lv.page);
                true
            } else {
                false
            }
        } else {
            false
        };
        if !merged {
            return Ok(());
        }
        li -= 1;
    }
}

/// Appends `src`'s records to `dst` (its left neighbour under the same parent), relinks the
/// leaf chain and frees `src`.
fn merge_into(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    dst: PageRef,
    src: PageRef,
    hdr: &mut Option<PageRef>,
) -> Result<()> {
    let level = ip::level(mtr.page(src));
    // Latch the right neighbour first (left to right, before the header).
    let right_nb = if level == 0 {
        let next = page::next(mtr.page(src));
        if next == FIL_NULL {
            None
        } else {
            Some(mtr.get(PageId::new(idx.space, next), LatchMode::X)?)
        }
    } else {
        None
    };
    let h = match *hdr {
        Some(h) => h,
        None => {
            let h = space_header(mtr, idx.space)?;
            *hdr = Some(h);
            h
        }
    };
    let recs = page_recs(mtr.page(src));
    let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
    let at = ip::n_recs(mtr.page(dst));
    mtr.raise_max_trx_id(dst, ip::max_trx_id(mtr.page(src)));
    mtr.rec_insert_many(dst, at, &refs);
    if level == 0 {
        let dst_no = mtr.id(dst).page;
        let next = page::next(mtr.page(src));
        let prev = page::prev(mtr.page(dst));
        mtr.set_links(dst, prev, next);
        if let Some(r) = right_nb {
            let rnext = page::next(mtr.page(r));
            mtr.set_links(r, dst_no, rnext);
        }
    }
    fsp::free(mtr, h, src)
}

/// Frees an empty page that is its parent's only child; a leaf is first unlinked from its
/// neighbours (the left one latched in the descent, the right one now: left to right).
fn discard(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    lv: &super::Level,
    hdr: &mut Option<PageRef>,
) -> Result<()> {
    let p = lv.page;
    if ip::is_leaf(mtr.page(p)) {
        let (prev, next) = (page::prev(mtr.page(p)), page::next(mtr.page(p)));
        let right = if next == FIL_NULL {
            None
        } else {
            Some(mtr.get(PageId::new(idx.space, next), LatchMode::X)?)
        };
        if let Some(l) = lv.far_left {
            let lprev = page::prev(mtr.page(l));
            mtr.set_links(l, lprev, next);
        } else {
            debug_assert_eq!(
                prev, FIL_NULL,
                "a leaf with a left neighbour is discarded only with it latched"
            );
        }
        if let Some(r) = right {
            let rnext = page::next(mtr.page(r));
            mtr.set_links(r, prev, rnext);
        }
    }
    let h = match *hdr {
        Some(h) => h,
        None => {
            let h = space_header(mtr, idx.space)?;
            *hdr = Some(h);
            h
        }
    };
    fsp::free(mtr, h, p)
}

/// If the root has a single node pointer to `child` (latched by this operation), the root takes
/// the child's records and level, and the child is freed. A root with no node pointer left
/// (every page below was discarded) becomes an empty leaf.
fn lift_root(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    root: PageRef,
    child: Option<PageRef>,
    hdr: &mut Option<PageRef>,
) -> Result<()> {
    let rp = mtr.page(root);
    if !ip::is_leaf(rp) && ip::n_recs(rp) == 0 {
        mtr.index_init(root, 0, idx.id);
        return Ok(());
    }
    if ip::is_leaf(rp) || ip::n_recs(rp) != 1 {
        return Ok(());
    }
    let Some(child) = child else { return Ok(()) };
    if child_of(idx, ip::rec(rp, 0)) != mtr.id(child).page {
        return Ok(());
    }
    let h = match *hdr {
        Some(h) => h,
        None => {
            let h = space_header(mtr, idx.space)?;
            *hdr = Some(h);
            h
        }
    };
    let level = ip::level(mtr.page(child));
    let recs = page_recs(mtr.page(child));
    let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
    // The root keeps a clustered index's PAGE_ROOT_AUTO_INC, or takes a secondary leaf's
    // stamp from the child whose records it takes.
    let stamp = if idx.clustered {
        ip::max_trx_id(mtr.page(root))
    } else {
        ip::max_trx_id(mtr.page(child))
    };
    mtr.index_init(root, level, idx.id);
    mtr.raise_max_trx_id(root, stamp);
    mtr.rec_insert_many(root, 0, &refs);
    fsp::free(mtr, h, child)
}
