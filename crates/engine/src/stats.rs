//! Table and index statistics (InnoDB: dict0stats): the size of each index in pages and
//! estimates of the number of rows and of distinct key prefixes, which SHOW TABLE STATUS,
//! information_schema.TABLES/STATISTICS and SHOW INDEX report.
//!
//! HOW: the non-leaf levels of an index are read in full, top-down, which gives the number of
//! pages on every level and the page numbers of all leaves (non-leaf pages are about 1% of an
//! index). Then up to `sample` leaves spread evenly over the leaf level are read and their
//! records (not delete-marked) counted, with the number of distinct values of every key prefix
//! on each page. With every leaf sampled the figures are exact for the moment each page was
//! read; otherwise rows = records per sampled leaf x leaves and distinct prefixes = distinct
//! per sampled leaf x leaves (InnoDB's estimate), never more than the rows. The table's data
//! size is every page its tablespace uses except the secondary indexes' and the header pages,
//! so off-page column values count as data, as in InnoDB. `range_rows` estimates the records
//! between two keys for EXPLAIN (InnoDB's records_in_range) by looking both keys up.
//!
//! LATCHING: one page at a time, S-latched, copied and released: never two latches, so this
//! cannot deadlock with the B-tree's latch order. Pages may change between reads (a split
//! between a parent and its child is seen as a slightly wrong count); a page that is no longer
//! a page of this index (freed and reused meanwhile) is skipped. Figures are estimates.

use std::cmp::Ordering;

use crate::btree::check::copy_page;
use crate::btree::{child_of, search_page, Bound, Index};
use crate::buffer_pool::LatchMode;
use crate::dict::Table;
use crate::engine::Inner;
use crate::error::Result;
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::Tuple;
use crate::page::record::{self, cmp_field, FieldIter};
use crate::page::{self as pg, PageType};
use crate::row::scan::{bound_key, KeyBound};
use crate::tablespace::fsp;
use crate::types::{PageId, PageNo};

/// One index's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexStats {
    pub name: String,
    /// Pages of all levels.
    pub pages: u64,
    pub leaf_pages: u64,
    /// Estimated distinct values of the first 1, 2, ... ordering fields (for the clustered
    /// index the primary key columns; for a secondary one its columns, then the primary key).
    pub n_diff: Vec<u64>,
    /// Estimated records (not delete-marked).
    pub n_rows: u64,
    /// Pages on each level (index 0: the leaves).
    pub level_pages: Vec<u64>,
}

/// A table's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Estimated rows (the clustered index's records).
    pub n_rows: u64,
    /// Pages of the clustered index, off-page values included.
    pub data_pages: u64,
    /// Pages of the secondary indexes.
    pub index_pages: u64,
    /// Pages the tablespace holds but does not use.
    pub free_pages: u64,
    /// The clustered index first, then the secondary ones in definition order.
    pub indexes: Vec<IndexStats>,
    pub page_size: u64,
}

/// Computes `t`'s statistics, sampling at most `sample` leaves per index (at least 1).
pub fn table_stats(inner: &Inner, t: &Table, sample: usize) -> Result<TableStats> {
    let sample = sample.max(1);
    let mut out = TableStats {
        page_size: inner.bp.page_size() as u64,
        ..TableStats::default()
    };
    let clustered = index_stats(inner, &t.clustered, &t.clustered.name, sample)?;
    out.n_rows = clustered.n_rows;
    out.indexes.push(clustered);
    for s in &t.secondary {
        let st = index_stats(inner, &s.index, &s.spec.name, sample)?;
        out.index_pages += st.pages;
        out.indexes.push(st);
    }
    let hdr = copy_page(inner, PageId::new(t.space, 0))?;
    let (size, used) = (u64::from(fsp::size(&hdr)), u64::from(fsp::used(&hdr)));
    let bitmaps = size.div_ceil(u64::from(fsp::bitmap_span(inner.bp.page_size())));
    out.free_pages = size.saturating_sub(used);
    out.data_pages = used
        .saturating_sub(bitmaps.max(1))
        .saturating_sub(out.index_pages)
        .max(out.indexes[0].pages);
    Ok(out)
}

/// A copy of `page` if it still is a page of `idx` at `level` (None: skip it).
fn index_page(inner: &Inner, idx: &Index, page: PageNo, level: u16) -> Result<Option<Vec<u8>>> {
    let p = copy_page(inner, PageId::new(idx.space, page))?;
    let ok = pg::page_type(&p) == Some(PageType::Index)
        && ip::index_id(&p) == idx.id
        && ip::level(&p) == level;
    Ok(ok.then_some(p))
}

fn index_stats(inner: &Inner, idx: &Index, name: &str, sample: usize) -> Result<IndexStats> {
    let n_key = idx.leaf.n_order;
    let mut st = IndexStats {
        name: name.to_string(),
        n_diff: vec![0; n_key],
        ..IndexStats::default()
    };
    let root = copy_page(inner, idx.root_id())?;
    let mut level = ip::level(&root);
    st.level_pages = vec![0; usize::from(level) + 1];
    let mut pages = vec![idx.root];
    let mut current = vec![root];
    // Walk down to level 1, collecting the page numbers of the level below.
    while level > 0 {
        st.pages += current.len() as u64;
        st.level_pages[usize::from(level)] = current.len() as u64;
        let mut below = Vec::new();
        for p in &current {
            for slot in 0..ip::n_recs(p) {
                below.push(child_of(idx, ip::rec(p, slot)));
            }
        }
        level -= 1;
        pages = below;
        current = Vec::new();
        if level > 0 {
            for &pno in &pages {
                current.extend(index_page(inner, idx, pno, level)?);
            }
        }
    }
    let leaves = pages;
    st.leaf_pages = leaves.len() as u64;
    st.level_pages[0] = st.leaf_pages;
    st.pages += st.leaf_pages;
    // Sample leaves spread evenly (all of them when there are few).
    let n_sample = sample.min(leaves.len());
    let mut recs = 0u64;
    let mut diff = vec![0u64; n_key];
    let mut sampled = 0u64;
    // Reading every leaf in order, a value continuing from the previous leaf is not new.
    let every = n_sample == leaves.len();
    let mut last: Option<Vec<u8>> = None;
    for i in 0..n_sample {
        let pno = leaves[i * leaves.len() / n_sample];
        let Some(p) = index_page(inner, idx, pno, 0)? else {
            continue;
        };
        sampled += 1;
        let mut prev: Option<&[u8]> = if every { last.as_deref() } else { None };
        for slot in 0..ip::n_recs(&p) {
            let rec = ip::rec(&p, slot);
            if record::is_deleted(rec) {
                continue;
            }
            recs += 1;
            let same = prev.map_or(0, |q| common_prefix(idx, q, rec));
            for d in diff.iter_mut().skip(same) {
                *d += 1;
            }
            prev = Some(rec);
        }
        if every {
            last = prev.map(<[u8]>::to_vec);
        }
    }
    if sampled == 0 {
        return Ok(st);
    }
    let scale = |x: u64| -> u64 {
        if sampled == st.leaf_pages {
            x
        } else {
            (u128::from(x) * u128::from(st.leaf_pages) / u128::from(sampled)) as u64
        }
    };
    st.n_rows = scale(recs);
    for (k, d) in diff.into_iter().enumerate() {
        st.n_diff[k] = if idx.n_unique > 0 && k + 1 >= idx.n_unique {
            st.n_rows
        } else {
            scale(d).min(st.n_rows)
        };
    }
    Ok(st)
}

/// How many leading ordering fields two records of `idx`'s leaf level share.
fn common_prefix(idx: &Index, a: &[u8], b: &[u8]) -> usize {
    let lay = &idx.leaf;
    let fa = FieldIter::new(lay, a).take(lay.n_order);
    let fb = FieldIter::new(lay, b);
    for (i, (x, y)) in fa.zip(fb).enumerate() {
        let (Some(x), Some(y)) = (x, y) else {
            return i;
        };
        let (xv, yv) = (x.bytes(lay, a), y.bytes(lay, b));
        // NULLs are distinct from each other, as in a unique index.
        if xv.is_none() || cmp_field(&lay.fields[i], xv, yv) != Ordering::Equal {
            return i;
        }
    }
    lay.n_order
}

/// Estimated records of an index between two bounds (InnoDB: btr_estimate_n_rows_in_range).
/// Both bounds are looked up from the root, one page copy at a time. Where their paths part,
/// the subtrees wholly between them count as the average records under one node pointer of
/// that level (from `st`), and the two partial subtrees at the ends are estimated the same way
/// with one bound each, down to the leaves, where records are counted: about two pages read
/// per level.
pub fn range_rows(
    inner: &Inner,
    t: &Table,
    index: Option<usize>,
    from: &KeyBound,
    to: &KeyBound,
    st: &IndexStats,
) -> Result<u64> {
    let idx = match index {
        None => &t.clustered,
        Some(i) => &t.secondary[i].index,
    };
    let lo = bound_key(t, index, from)?;
    let hi = bound_key(t, index, to)?;
    let est = Estimate { inner, idx, st };
    Ok(est.subtree(idx.root, lo.as_ref(), hi.as_ref())?.round() as u64)
}

struct Estimate<'a> {
    inner: &'a Inner,
    idx: &'a Index,
    st: &'a IndexStats,
}

impl Estimate<'_> {
    /// Average records under one page of `level`.
    fn per_page(&self, level: u16) -> f64 {
        let pages = self.st.level_pages.get(usize::from(level)).copied();
        self.st.n_rows as f64 / pages.unwrap_or(1).max(1) as f64
    }

    /// Records of the subtree under `page` between the bounds (None: that side unbounded).
    fn subtree(
        &self,
        page: PageNo,
        lo: Option<&(Tuple, bool)>,
        hi: Option<&(Tuple, bool)>,
    ) -> Result<f64> {
        match self.look(page, lo, hi)? {
            Look::Foreign => Ok(self.per_page(0)),
            Look::Records(n) => Ok(n as f64),
            Look::Child(c) => self.subtree(c, lo, hi),
            Look::Parted {
                level,
                left,
                right,
                between,
            } => {
                let whole = self.per_page(level - 1);
                let l = match lo {
                    None => whole,
                    Some(_) => self.subtree(left, lo, None)?,
                };
                let r = match hi {
                    None => whole,
                    Some(_) => self.subtree(right, None, hi)?,
                };
                Ok(between as f64 * whole + l + r)
            }
        }
    }

    /// Where the bounds fall in one page, read under its S latch (no copy).
    fn look(
        &self,
        page: PageNo,
        lo: Option<&(Tuple, bool)>,
        hi: Option<&(Tuple, bool)>,
    ) -> Result<Look> {
        let idx = self.idx;
        let mut mtr = Mtr::new(self.inner);
        let r = mtr.get(PageId::new(idx.space, page), LatchMode::S)?;
        let p = mtr.page(r);
        let look = if pg::page_type(p) != Some(PageType::Index) || ip::index_id(p) != idx.id {
            // Changed under us: counted as an average leaf.
            Look::Foreign
        } else {
            let level = ip::level(p);
            let lay = idx.layout(level);
            let n = ip::n_recs(p);
            let first = match lo {
                None => 0,
                Some((k, true)) => search_page(lay, p, k, Bound::Lower),
                Some((k, false)) => search_page(lay, p, k, Bound::Upper),
            };
            let end = match hi {
                None => n,
                Some((k, true)) => search_page(lay, p, k, Bound::Upper),
                Some((k, false)) => search_page(lay, p, k, Bound::Lower),
            };
            if level == 0 {
                let live = (first..end.max(first))
                    .filter(|&s| !record::is_deleted(ip::rec(p, s)))
                    .count();
                Look::Records(live as u64)
            } else if n == 0 {
                Look::Records(0)
            } else {
                // The node pointers to follow: the last ones at or before each position.
                let c_lo = first.saturating_sub(1).min(n - 1);
                let c_hi = end.saturating_sub(1).min(n - 1);
                let child = |slot: usize| child_of(idx, ip::rec(p, slot));
                if c_hi <= c_lo {
                    Look::Child(child(c_lo))
                } else {
                    Look::Parted {
                        level,
                        left: child(c_lo),
                        right: child(c_hi),
                        between: c_hi - c_lo - 1,
                    }
                }
            }
        };
        mtr.commit()?;
        Ok(look)
    }
}

/// What one page of a range estimate showed.
enum Look {
    /// Not a page of the index any more.
    Foreign,
    /// A leaf: the records between the bounds.
    Records(u64),
    /// Both bounds lead to this child.
    Child(PageNo),
    /// The bounds part here: their children and the node pointers wholly between them.
    Parted {
        level: u16,
        left: PageNo,
        right: PageNo,
        between: usize,
    },
}
