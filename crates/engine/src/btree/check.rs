//! Structural verification of one B-tree (InnoDB: btr_validate_index). Used by `Engine::check`.
//!
//! Checks invariants btree I1-I4 for every page: page type, index id and level; slot array and
//! heap accounting; every record parses; keys strictly ascending within a page and within the
//! bounds its ancestors' node pointers give; MIN_REC only leftmost; the leaf chain; empty pages;
//! BLOB chains of off-page fields. Returns every page the tree owns so the caller can check the
//! tablespace's allocation bitmap. Expects no concurrent writers.

use std::cmp::Ordering;

use crate::buffer_pool::LatchMode;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, cmp_rec_rec, is_min_rec, RecLayout};
use crate::page::{self, PageType};
use crate::types::{PageId, PageNo, FIL_NULL};

use super::{blob, child_of, Index};

#[derive(Debug, Default, Clone)]
pub struct TreeStats {
    pub height: u16,
    pub pages: Vec<PageNo>,
    pub leaves: u64,
    pub records: u64,
    pub delete_marked: u64,
    pub blob_pages: u64,
}

/// A copy of page `id`, read under an S latch held only for the copy.
pub(crate) fn copy_page(inner: &Inner, id: PageId) -> Result<Vec<u8>> {
    let mut mtr = Mtr::new(inner);
    let r = mtr.get(id, LatchMode::S)?;
    let v = mtr.page(r).to_vec();
    mtr.commit()?;
    Ok(v)
}

fn bad(id: PageId, what: String) -> Error {
    Error::corrupted(id.space, id.page, what)
}

/// Compares a node pointer's key with a record of the level below.
fn cmp_ptr_rec(idx: &Index, ptr: &[u8], rec_layout: &RecLayout, rec: &[u8]) -> Ordering {
    let t = record::Tuple::from_rec(&idx.node, ptr, idx.node.n_order);
    record::cmp_tuple_rec(rec_layout, &t, rec)
}

struct Walk<'a, F> {
    inner: &'a Inner,
    idx: &'a Index,
    stats: TreeStats,
    leaves: Vec<(PageNo, PageNo, PageNo)>,
    visit: F,
}

impl<F: FnMut(&[u8], &[(usize, Vec<u8>)]) -> Result<()>> Walk<'_, F> {
    /// Checks the subtree at `pno`; every record must be >= `low` (unless None) and < `high`.
    fn subtree(
        &mut self,
        pno: PageNo,
        level: Option<u16>,
        low: Option<&[u8]>,
        high: Option<&[u8]>,
        leftmost: bool,
    ) -> Result<()> {
        let idx = self.idx;
        let id = PageId::new(idx.space, pno);
        let p = copy_page(self.inner, id)?;
        if page::page_type(&p) != Some(PageType::Index) || ip::index_id(&p) != idx.id {
            return Err(bad(id, format!("not a page of index {}", idx.name)));
        }
        let lvl = ip::level(&p);
        if level.is_some_and(|l| l != lvl) {
            return Err(bad(
                id,
                format!("level {lvl} where {} was expected", level.unwrap_or(0)),
            ));
        }
        ip::check_structure(&p).map_err(|e| bad(id, e))?;
        self.stats.pages.push(pno);
        let lay = idx.layout(lvl);
        let n = ip::n_recs(&p);
        let is_root = pno == idx.root;
        if n == 0 && !is_root {
            return Err(bad(id, "empty page that is not the root".into()));
        }
        for s in 0..n {
            let rec = ip::rec(&p, s);
            if !record::validate(lay, rec) {
                return Err(bad(id, format!("record in slot {s} does not parse")));
            }
            if is_min_rec(rec) && !(lvl > 0 && s == 0 && leftmost) {
                return Err(bad(id, format!("MIN_REC flag on slot {s}")));
            }
            if lvl > 0 && s == 0 && leftmost && !is_min_rec(rec) {
                return Err(bad(id, "leftmost node pointer lacks MIN_REC".into()));
            }
            if s > 0 && cmp_rec_rec(lay, ip::rec(&p, s - 1), rec) != Ordering::Less {
                return Err(bad(id, format!("records {} and {s} out of order", s - 1)));
            }
            if !is_min_rec(rec) {
                if let Some(lo) = low {
                    if cmp_ptr_rec(idx, lo, lay, rec) == Ordering::Greater {
                        return Err(bad(id, format!("slot {s} is below its node pointer")));
                    }
                }
            }
            if let Some(hi) = high {
                if cmp_ptr_rec(idx, hi, lay, rec) != Ordering::Greater {
                    return Err(bad(
                        id,
                        format!("slot {s} is not below the next node pointer"),
                    ));
                }
            }
        }
        if lvl == 0 {
            self.stats.leaves += 1;
            self.leaves.push((pno, page::prev(&p), page::next(&p)));
            for s in 0..n {
                let rec = ip::rec(&p, s);
                self.stats.records += 1;
                if record::is_deleted(rec) {
                    self.stats.delete_marked += 1;
                }
                let externs = self.externs(id, rec)?;
                (self.visit)(rec, &externs)?;
            }
            return Ok(());
        }
        if page::prev(&p) != FIL_NULL || page::next(&p) != FIL_NULL {
            return Err(bad(id, "non-leaf page has sibling links".into()));
        }
        for s in 0..n {
            let ptr = ip::rec(&p, s);
            let child = child_of(idx, ptr);
            let lo = if is_min_rec(ptr) { low } else { Some(ptr) };
            let hi = if s + 1 < n {
                Some(ip::rec(&p, s + 1))
            } else {
                high
            };
            self.subtree(child, Some(lvl - 1), lo, hi, leftmost && s == 0)?;
        }
        Ok(())
    }

    fn externs(&mut self, id: PageId, rec: &[u8]) -> Result<Vec<(usize, Vec<u8>)>> {
        let mut out = Vec::new();
        if record::info(rec) & record::REC_INFO_HAS_EXTERN == 0 {
            return Ok(out);
        }
        for (i, r) in record::FieldIter::new(&self.idx.leaf, rec).enumerate() {
            let r = r.ok_or_else(|| bad(id, "record does not parse".into()))?;
            if !r.ext {
                continue;
            }
            let reference = &rec[r.start..r.start + r.len];
            let mut mtr = Mtr::new(self.inner);
            let v = blob::read(&mut mtr, self.idx.space, reference)?;
            mtr.commit()?;
            // Collect the chain's pages.
            let mut pno = blob::ref_page(reference);
            while pno != FIL_NULL {
                self.stats.pages.push(pno);
                self.stats.blob_pages += 1;
                pno = page::next(&copy_page(self.inner, PageId::new(self.idx.space, pno))?);
            }
            out.push((i, v));
        }
        Ok(out)
    }
}

/// Verifies one index; `visit` sees every leaf record with its off-page values.
pub fn check_tree(
    inner: &Inner,
    idx: &Index,
    visit: impl FnMut(&[u8], &[(usize, Vec<u8>)]) -> Result<()>,
) -> Result<TreeStats> {
    let mut w = Walk {
        inner,
        idx,
        stats: TreeStats::default(),
        leaves: Vec::new(),
        visit,
    };
    w.subtree(idx.root, None, None, None, true)?;
    let root = copy_page(inner, idx.root_id())?;
    w.stats.height = ip::level(&root) + 1;
    // Leaf chain: DFS order is key order.
    let leaves = &w.leaves;
    for (i, &(pno, prev, next)) in leaves.iter().enumerate() {
        let want_prev = if i == 0 { FIL_NULL } else { leaves[i - 1].0 };
        let want_next = if i + 1 == leaves.len() {
            FIL_NULL
        } else {
            leaves[i + 1].0
        };
        if prev != want_prev || next != want_next {
            return Err(bad(
                PageId::new(idx.space, pno),
                format!("leaf links prev={prev} next={next}, expected {want_prev}/{want_next}"),
            ));
        }
    }
    Ok(w.stats)
}
