//! B+trees: search, descent with latch coupling, splits and merges, cursors, checks.
//! (InnoDB: btr0btr, btr0cur, btr0pcur, page0cur.)
//!
//! OVERVIEW
//! Every index is a B+tree in one tablespace whose root page number never changes. Leaves hold
//! the records; non-leaf pages hold node pointers (the ordering key of the child's first record
//! plus the child page number; the leftmost node pointer of each level carries MIN_REC). Leaves
//! are linked both ways (FIL_PAGE_PREV/NEXT); other levels are not linked.
//!
//! Each change to one index is one mini-transaction. The common case is optimistic: descend
//! with S latches, X-latch only the leaf, change it. If the leaf would overflow or underflow,
//! the operation restarts pessimistically: X latches from the root, keeping only the ancestors
//! that may change (an ancestor is released as soon as a child is "safe"), then splits or merges
//! bottom-up, allocating or freeing pages through the tablespace header.
//!
//! INVARIANTS
//! - I1: within a page, slots are in strictly ascending key order (clustered, and secondary
//!   where the primary key suffix makes keys unique); the first key of a child is >= the key of
//!   its node pointer and < the key of the next node pointer.
//! - I2: all leaves are at level 0; a node at level l has children at level l-1 only.
//! - I3: the leaf chain visits every leaf in key order, prev/next agreeing.
//! - I4: no page except the root is left empty.
//!
//! LATCHING (deadlock freedom)
//! - Top-down: a thread waits for a page latch only on a child of a page it holds, never on an
//!   ancestor of a page it holds.
//! - Leaves left to right: a thread holding a leaf may wait only for a leaf to its right
//!   (forward scans, split relinking). Backward steps release first and search again.
//! - Pessimistic operations latch a left sibling before the page, the page before its right
//!   sibling, and the tablespace header (page 0) after all index pages.
//! - Readers of a secondary index release its leaf before they look up the clustered index.
//! - The adaptive hash index's guess (`adaptive_hash`) latches a leaf with no page held, by a
//!   try only (never a wait), and leaves the thread holding that one leaf, as a descent does.

pub mod adaptive_hash;
pub mod blob;
pub mod check;
pub mod cursor;
mod delete;
mod insert;

use std::cmp::Ordering;

use crate::buffer_pool::LatchMode;
use crate::error::{Error, Result};
use crate::mach::read_u32;
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::record::{self, cmp_tuple_rec, FieldVal, RecLayout, Tuple, REC_INFO_MIN_REC};
use crate::page::{self, PageType};
use crate::types::{IndexId, PageId, PageNo, SpaceId};

pub use delete::tree_delete;
pub use insert::tree_insert;

/// What the B-tree code needs to know about an index.
#[derive(Debug, Clone)]
pub struct Index {
    pub id: IndexId,
    pub name: String,
    pub space: SpaceId,
    pub root: PageNo,
    /// Layout of leaf records.
    pub leaf: RecLayout,
    /// Layout of node pointers.
    pub node: RecLayout,
    /// Leading fields that must be unique among non-NULL values (0: not unique). For the
    /// clustered index this is the primary key.
    pub n_unique: usize,
    pub clustered: bool,
    /// The adaptive hash index's vote on this index's searches.
    pub ahi: adaptive_hash::IndexInfo,
}

impl Index {
    pub fn new(
        id: IndexId,
        name: String,
        space: SpaceId,
        root: PageNo,
        leaf: RecLayout,
        n_unique: usize,
        clustered: bool,
    ) -> Self {
        let node = leaf.node_ptr_layout();
        Index {
            id,
            name,
            space,
            root,
            leaf,
            node,
            n_unique,
            clustered,
            ahi: adaptive_hash::IndexInfo::default(),
        }
    }
    pub fn root_id(&self) -> PageId {
        PageId::new(self.space, self.root)
    }
    pub fn layout(&self, level: u16) -> &RecLayout {
        if level == 0 {
            &self.leaf
        } else {
            &self.node
        }
    }
}

/// Which position a search returns within a leaf.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// First record >= key.
    Lower,
    /// First record > key.
    Upper,
}

/// Binary search of a page: the first slot whose record is >= key (Lower) or > key (Upper).
pub fn search_page(layout: &RecLayout, p: &[u8], key: &Tuple, bound: Bound) -> usize {
    let (mut lo, mut hi) = (0, ip::n_recs(p));
    while lo < hi {
        let mid = (lo + hi) / 2;
        let c = cmp_tuple_rec(layout, key, ip::rec(p, mid));
        let go_right = match bound {
            Bound::Lower => c == Ordering::Greater,
            Bound::Upper => c != Ordering::Less,
        };
        if go_right {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The child page number stored in a node pointer.
pub fn child_of(idx: &Index, rec: &[u8]) -> PageNo {
    let f = record::field(&idx.node, rec, idx.node.n_order).expect("node pointer child");
    read_u32(f, 0)
}

/// The slot of the node pointer to follow for `key`: the last record <= key (Upper bound
/// searches) or < key (Lower bound searches). MIN_REC makes slot 0 always eligible.
pub fn child_slot(idx: &Index, p: &[u8], key: &Tuple, bound: Bound) -> usize {
    search_page(&idx.node, p, key, bound).saturating_sub(1)
}

/// Builds a node pointer for `child` whose key is the ordering key of `first` (a record of the
/// child's level).
pub fn node_ptr(idx: &Index, first: &[u8], level: u16, child: PageNo, min_rec: bool) -> Vec<u8> {
    let lay = idx.layout(level);
    let mut vals: Vec<FieldVal<'_>> = Vec::with_capacity(lay.n_order + 1);
    for r in record::FieldIter::new(lay, first).take(lay.n_order) {
        let r = r.expect("malformed record");
        vals.push(match r.bytes(lay, first) {
            None => FieldVal::Null,
            Some(b) => FieldVal::Bytes(b),
        });
    }
    let c = child.to_be_bytes();
    vals.push(FieldVal::Bytes(&c));
    let mut out = Vec::new();
    record::build(
        &idx.node,
        if min_rec { REC_INFO_MIN_REC } else { 0 },
        vals,
        &mut out,
    );
    out
}

/// Checks that a page fixed as part of `idx` at `level` really is such a page.
fn check_node(idx: &Index, id: PageId, p: &[u8], level: Option<u16>) -> Result<()> {
    if page::page_type(p) != Some(PageType::Index) {
        return Err(Error::corrupted(
            id.space,
            id.page,
            format!(
                "expected a B-tree page of index {}, found type {}",
                idx.name,
                page::page_type_raw(p)
            ),
        ));
    }
    if ip::index_id(p) != idx.id {
        return Err(Error::corrupted(
            id.space,
            id.page,
            format!(
                "page belongs to index id {} instead of {} ({})",
                ip::index_id(p),
                idx.id,
                idx.name
            ),
        ));
    }
    if let Some(l) = level {
        if ip::level(p) != l {
            return Err(Error::corrupted(
                id.space,
                id.page,
                format!(
                    "page is at level {} but its parent expects {l}",
                    ip::level(p)
                ),
            ));
        }
    }
    Ok(())
}

/// What a descent is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Intent {
    /// S latches all the way; the leaf stays S-latched.
    Read,
    /// S latches on non-leaf pages, X on the leaf.
    ModifyLeaf,
    /// X latches from the root, keeping ancestors that a split may change.
    TreeInsert,
    /// X latches from the root with left/right siblings, keeping ancestors a merge may change.
    TreeDelete,
}

/// One level of a pessimistic path.
#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub page: PageRef,
    /// Non-leaf: slot of the node pointer followed. Leaf: the search position.
    pub slot: usize,
    /// TreeDelete only: the siblings under the same parent (child slot - 1 and, for slot 0,
    /// slot 1).
    pub left: Option<PageRef>,
    pub right: Option<PageRef>,
    /// TreeDelete, a leaf that is its parent's only child: its left neighbour (under another
    /// parent), latched before it so the leaf can be discarded if it becomes empty.
    pub far_left: Option<PageRef>,
}

/// Latched pages from the topmost page an operation may change down to the leaf
/// (`levels.last()` is the leaf).
#[derive(Debug)]
pub struct Path {
    pub levels: Vec<Level>,
    /// True if `levels[0]` is the root.
    pub from_root: bool,
}

impl Path {
    pub fn leaf(&self) -> &Level {
        self.levels.last().expect("path has a leaf")
    }
}

/// Search result at the leaf.
#[derive(Clone, Copy, Debug)]
pub struct Pos {
    pub leaf: PageRef,
    pub slot: usize,
}

fn max_rec(mtr: &Mtr<'_>) -> usize {
    ip::max_rec_size(mtr.inner().bp.page_size())
}

/// Free space a page needs so one more node pointer from a split below always fits.
fn safe_for_insert(mtr: &Mtr<'_>, p: &[u8]) -> bool {
    ip::free_space(p) >= max_rec(mtr) + 2
}

/// Merge threshold: a non-root page with less than this many used bytes is merged.
pub fn merge_threshold(page_size: usize) -> usize {
    ip::capacity(page_size) / 4
}

fn safe_for_delete(mtr: &Mtr<'_>, p: &[u8], is_root: bool) -> bool {
    if is_root {
        return ip::is_leaf(p) || ip::n_recs(p) >= 3;
    }
    let ps = mtr.inner().bp.page_size();
    ip::n_recs(p) >= 3 && ip::used_space(p).saturating_sub(max_rec(mtr) + 2) >= merge_threshold(ps)
}

/// Descends to the leaf for `key` with the given intent. `bound` selects the child rule (Lower:
/// last node pointer < key; Upper: last <= key) and the leaf position. Read and ModifyLeaf
/// searches try the adaptive hash index first, which may give the leaf directly (its module
/// comment proves the position is the same).
pub fn descend(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    key: &Tuple,
    bound: Bound,
    intent: Intent,
) -> Result<Path> {
    let fold = match intent {
        Intent::Read | Intent::ModifyLeaf => {
            match adaptive_hash::probe(mtr, idx, key, bound, intent) {
                adaptive_hash::Probe::Hit(path) => return Ok(path),
                adaptive_hash::Probe::Descend(fold) => fold,
            }
        }
        Intent::TreeInsert | Intent::TreeDelete => None,
    };
    mtr.inner().ahi.stats.searches_btree.inc();
    match intent {
        Intent::Read | Intent::ModifyLeaf => {
            let path = descend_optimistic(mtr, idx, key, bound, intent)?;
            if let Some(fold) = fold {
                adaptive_hash::learn(mtr, idx, key, bound, fold, &path);
            }
            Ok(path)
        }
        Intent::TreeInsert | Intent::TreeDelete => descend_tree(mtr, idx, key, bound, intent),
    }
}

fn descend_optimistic(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    key: &Tuple,
    bound: Bound,
    intent: Intent,
) -> Result<Path> {
    let leaf_mode = if intent == Intent::Read {
        LatchMode::S
    } else {
        LatchMode::X
    };
    loop {
        let mut cur = mtr.get(idx.root_id(), LatchMode::S)?;
        check_node(idx, idx.root_id(), mtr.page(cur), None)?;
        if ip::is_leaf(mtr.page(cur)) && leaf_mode == LatchMode::X {
            mtr.release(cur);
            cur = mtr.get(idx.root_id(), LatchMode::X)?;
            check_node(idx, idx.root_id(), mtr.page(cur), None)?;
            if !ip::is_leaf(mtr.page(cur)) {
                mtr.release(cur); // the root split meanwhile
                continue;
            }
        }
        loop {
            let p = mtr.page(cur);
            let level = ip::level(p);
            if level == 0 {
                let slot = search_page(&idx.leaf, p, key, bound);
                return Ok(Path {
                    levels: vec![Level {
                        page: cur,
                        slot,
                        left: None,
                        right: None,
                        far_left: None,
                    }],
                    from_root: false,
                });
            }
            if ip::n_recs(p) == 0 {
                let id = mtr.id(cur);
                return Err(Error::corrupted(id.space, id.page, "empty non-leaf page"));
            }
            let slot = child_slot(idx, p, key, bound);
            let child = PageId::new(idx.space, child_of(idx, ip::rec(p, slot)));
            let mode = if level == 1 { leaf_mode } else { LatchMode::S };
            let c = mtr.get(child, mode)?;
            check_node(idx, child, mtr.page(c), Some(level - 1))?;
            mtr.release(cur);
            cur = c;
        }
    }
}

fn descend_tree(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    key: &Tuple,
    bound: Bound,
    intent: Intent,
) -> Result<Path> {
    let root = mtr.get(idx.root_id(), LatchMode::X)?;
    check_node(idx, idx.root_id(), mtr.page(root), None)?;
    let mut path = Path {
        levels: vec![Level {
            page: root,
            slot: 0,
            left: None,
            right: None,
            far_left: None,
        }],
        from_root: true,
    };
    let mut cur = root;
    loop {
        let p = mtr.page(cur);
        let level = ip::level(p);
        if level == 0 {
            let slot = search_page(&idx.leaf, p, key, bound);
            path.levels.last_mut().expect("leaf").slot = slot;
            return Ok(path);
        }
        let n = ip::n_recs(p);
        if n == 0 {
            let id = mtr.id(cur);
            return Err(Error::corrupted(id.space, id.page, "empty non-leaf page"));
        }
        let slot = child_slot(idx, p, key, bound);
        path.levels.last_mut().expect("level").slot = slot;
        let child_at = |mtr: &Mtr<'_>, s: usize| {
            PageId::new(idx.space, child_of(idx, ip::rec(mtr.page(cur), s)))
        };
        let (mut left, mut right) = (None, None);
        if intent == Intent::TreeDelete && slot > 0 {
            let id = child_at(mtr, slot - 1);
            let l = mtr.get(id, LatchMode::X)?;
            check_node(idx, id, mtr.page(l), Some(level - 1))?;
            left = Some(l);
        }
        let cid = child_at(mtr, slot);
        let mut far_left = None;
        let c = if intent == Intent::TreeDelete && level == 1 && n == 1 {
            let (fl, c) = latch_with_far_left(mtr, idx, cid)?;
            far_left = fl;
            c
        } else {
            mtr.get(cid, LatchMode::X)?
        };
        check_node(idx, cid, mtr.page(c), Some(level - 1))?;
        if intent == Intent::TreeDelete && slot == 0 && n > 1 {
            let id = child_at(mtr, 1);
            let r = mtr.get(id, LatchMode::X)?;
            check_node(idx, id, mtr.page(r), Some(level - 1))?;
            right = Some(r);
        }
        let safe = match intent {
            Intent::TreeInsert => safe_for_insert(mtr, mtr.page(c)),
            _ => safe_for_delete(mtr, mtr.page(c), false),
        };
        if safe {
            // Nothing above the child can change: release the path so far and the siblings.
            for l in path.levels.drain(..) {
                release_level(mtr, &l);
            }
            path.from_root = false;
            for s in [left.take(), right.take(), far_left.take()]
                .into_iter()
                .flatten()
            {
                mtr.release(s);
            }
        }
        path.levels.push(Level {
            page: c,
            slot: 0,
            left,
            right,
            far_left,
        });
        cur = c;
    }
}

fn release_level(mtr: &mut Mtr<'_>, l: &Level) {
    for r in [l.far_left, l.left, Some(l.page), l.right]
        .into_iter()
        .flatten()
    {
        mtr.release(r);
    }
}

/// X-latches leaf `cid` together with its left neighbour, left first (leaves left to right).
/// The neighbour's number is read under a short S latch and checked again once both are held,
/// since a split of the neighbour (under another parent) may change it meanwhile.
fn latch_with_far_left(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    cid: PageId,
) -> Result<(Option<PageRef>, PageRef)> {
    loop {
        let peek = mtr.get(cid, LatchMode::S)?;
        let prev = page::prev(mtr.page(peek));
        mtr.release(peek);
        if prev == crate::types::FIL_NULL {
            let c = mtr.get(cid, LatchMode::X)?;
            if page::prev(mtr.page(c)) == crate::types::FIL_NULL {
                return Ok((None, c));
            }
            mtr.release(c);
            continue;
        }
        let lid = PageId::new(idx.space, prev);
        let l = mtr.get(lid, LatchMode::X)?;
        check_node(idx, lid, mtr.page(l), Some(0))?;
        let c = mtr.get(cid, LatchMode::X)?;
        if page::prev(mtr.page(c)) == prev && page::next(mtr.page(l)) == cid.page {
            return Ok((Some(l), c));
        }
        mtr.release(c);
        mtr.release(l);
    }
}

/// X-latches the tablespace header for allocation (after every index page of the operation).
pub fn space_header(mtr: &mut Mtr<'_>, space: SpaceId) -> Result<PageRef> {
    mtr.get(PageId::new(space, 0), LatchMode::X)
}

/// Copies out the records of a page (a split or merge rewrites pages from these copies).
fn page_recs(p: &[u8]) -> Vec<Vec<u8>> {
    (0..ip::n_recs(p)).map(|s| ip::rec(p, s).to_vec()).collect()
}
