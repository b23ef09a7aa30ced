//! Range scans over a B-tree in both directions. (InnoDB: btr0pcur, row_search.)
//!
//! A scan holds no latch between calls: each refill descends to its position (the first time
//! from the start bound, then just past the last key it returned), copies a batch of records
//! from the leaf (moving right with latch coupling when scanning forward), and releases. Values
//! stored off-page are read while the leaf is still latched, so they cannot be freed under the
//! reader. Moving left releases the current leaf and searches again (leaves are only latched
//! left to right, btree LATCHING).
//!
//! What a scan returns for a record is made by its taker, called on every record while its
//! leaf is latched (so it may read the record in place, rebuild an older version or read
//! off-page values): an item to queue, nothing (the record is skipped), or the end of the scan.
//! The default taker copies the record with its off-page values (`Fetched`); the row layer's
//! decodes the version its reader sees straight from the page. The position is the last record
//! examined, returned or skipped.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::buffer_pool::LatchMode;
use crate::engine::Inner;
use crate::error::Result;
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple, REC_INFO_HAS_EXTERN};
use crate::page::{self};
use crate::types::{PageId, FIL_NULL};

use super::{blob, descend, Bound, Index, Intent};

/// Where a scan starts.
#[derive(Clone, Debug)]
pub enum Start {
    /// The first (forward) or last (backward) record of the index.
    End,
    /// Records >= key (forward) / <= key (backward) when inclusive, else > / <. The key may be a
    /// prefix of the ordering fields.
    Key { key: Tuple, inclusive: bool },
}

/// A record copied out of a leaf, with its off-page values.
#[derive(Clone, Debug, Default)]
pub struct Fetched {
    pub rec: Vec<u8>,
    /// (field number, full value) for every field stored off-page.
    pub externs: Vec<(usize, Vec<u8>)>,
}

impl Fetched {
    /// A field's full value (None for NULL).
    pub fn field<'a>(&'a self, layout: &'a record::RecLayout, i: usize) -> Option<&'a [u8]> {
        field_of(layout, &self.rec, &self.externs, i)
    }
}

/// Field `i` of record `rec` whose off-page values are `externs` (None for NULL).
pub fn field_of<'a>(
    layout: &'a record::RecLayout,
    rec: &'a [u8],
    externs: &'a [(usize, Vec<u8>)],
    i: usize,
) -> Option<&'a [u8]> {
    if let Some((_, v)) = externs.iter().find(|(f, _)| *f == i) {
        return Some(v);
    }
    record::field(layout, rec, i)
}

/// Copies record `slot` of `leaf`, reading off-page values (leaf still latched).
pub fn fetch(mtr: &mut Mtr<'_>, idx: &Index, leaf: PageRef, slot: usize) -> Result<Fetched> {
    let rec = ip::rec(mtr.page(leaf), slot).to_vec();
    fetch_rec(mtr, idx, rec)
}

/// Reads the off-page values of `rec` (a record or an older version of one, whose leaf is
/// latched, so its chains cannot be freed meanwhile).
pub fn fetch_rec(mtr: &mut Mtr<'_>, idx: &Index, rec: Vec<u8>) -> Result<Fetched> {
    let mut externs = Vec::new();
    if record::info(&rec) & REC_INFO_HAS_EXTERN != 0 {
        for (i, r) in record::FieldIter::new(&idx.leaf, &rec).enumerate() {
            let r = r.expect("malformed record");
            if r.ext {
                let v = blob::read(mtr, idx.space, &rec[r.start..r.start + r.len])?;
                externs.push((i, v));
            }
        }
    }
    Ok(Fetched { rec, externs })
}

/// What a taker makes of a record (module comment).
pub enum Took<T> {
    /// Queue this item.
    Item(T),
    /// Pass over the record.
    Skip,
    /// The scan ends before this record.
    Stop,
}

/// Called on record `slot` of latched leaf `leaf` (module comment).
pub type Taker<T> = Box<dyn FnMut(&mut Mtr<'_>, PageRef, usize) -> Result<Took<T>> + Send>;

pub struct Scan<T = Fetched> {
    idx: Arc<Index>,
    forward: bool,
    start: Option<Start>,
    /// Ordering key of the last record examined.
    last: Option<Tuple>,
    /// The last record examined in the current refill.
    examined: Vec<u8>,
    buf: VecDeque<T>,
    done: bool,
    batch: usize,
    take: Taker<T>,
}

impl Scan<Fetched> {
    /// A scan returning copies of the records (the default taker).
    pub fn new(idx: Arc<Index>, start: Start, forward: bool) -> Self {
        let i = idx.clone();
        let take: Taker<Fetched> = Box::new(move |mtr: &mut Mtr<'_>, leaf, slot| {
            Ok(Took::Item(fetch(mtr, &i, leaf, slot)?))
        });
        Scan::with_taker(idx, start, forward, take)
    }
}

impl<T> Scan<T> {
    /// A scan whose records are made into items by `take` (module comment).
    pub fn with_taker(idx: Arc<Index>, start: Start, forward: bool, take: Taker<T>) -> Self {
        Scan {
            idx,
            forward,
            start: Some(start),
            last: None,
            examined: Vec::new(),
            buf: VecDeque::new(),
            done: false,
            batch: 4,
            take,
        }
    }

    pub fn index(&self) -> &Arc<Index> {
        &self.idx
    }

    /// The first refill takes up to `n` records (later ones double up to 512): 1 for a reader
    /// that wants a single row.
    pub fn first_batch(mut self, n: usize) -> Self {
        self.batch = n.max(1);
        self
    }

    /// The next item, or None at the end of the index (or where the taker stopped).
    pub fn next(&mut self, inner: &Inner) -> Result<Option<T>> {
        while self.buf.is_empty() && !self.done {
            self.refill(inner)?;
        }
        Ok(self.buf.pop_front())
    }

    /// Examines record `slot` of `leaf`: queues what the taker makes of it; false when the
    /// taker ends the scan. (The collect loops record the last record examined on each leaf as
    /// the position.)
    fn take(&mut self, mtr: &mut Mtr<'_>, leaf: PageRef, slot: usize) -> Result<bool> {
        match (self.take)(mtr, leaf, slot)? {
            Took::Item(t) => self.buf.push_back(t),
            Took::Skip => {}
            Took::Stop => {
                self.done = true;
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn refill(&mut self, inner: &Inner) -> Result<()> {
        let mut mtr = Mtr::new(inner);
        let want = self.batch;
        self.batch = (self.batch * 2).min(512);
        // (key, bound) to descend with; the position is slot (forward) or slot-1 (backward).
        let (key, bound) = match (&self.last, self.start.take()) {
            (Some(last), _) => (
                last.clone(),
                if self.forward {
                    Bound::Upper
                } else {
                    Bound::Lower
                },
            ),
            (None, Some(Start::End)) | (None, None) => (
                Tuple::new(),
                if self.forward {
                    Bound::Lower
                } else {
                    Bound::Upper
                },
            ),
            (None, Some(Start::Key { key, inclusive })) => {
                let b = match (self.forward, inclusive) {
                    (true, true) | (false, false) => Bound::Lower,
                    (true, false) | (false, true) => Bound::Upper,
                };
                (key, b)
            }
        };
        let path = descend(&mut mtr, &self.idx, &key, bound, Intent::Read)?;
        let leaf = path.leaf().page;
        let slot = path.leaf().slot;
        self.examined.clear();
        if self.forward {
            self.collect_forward(&mut mtr, leaf, slot, want)?;
        } else {
            self.collect_backward(&mut mtr, leaf, slot, key, want)?;
        }
        mtr.commit()?;
        if !self.examined.is_empty() {
            self.last = Some(Tuple::from_rec(
                &self.idx.leaf,
                &self.examined,
                self.idx.leaf.n_order,
            ));
        }
        Ok(())
    }

    fn collect_forward(
        &mut self,
        mtr: &mut Mtr<'_>,
        mut leaf: PageRef,
        mut slot: usize,
        want: usize,
    ) -> Result<()> {
        loop {
            let n = ip::n_recs(mtr.page(leaf));
            let first = slot;
            while slot < n && self.buf.len() < want {
                if !self.take(mtr, leaf, slot)? {
                    return Ok(());
                }
                slot += 1;
            }
            if slot > first {
                self.examined.clear();
                self.examined
                    .extend_from_slice(ip::rec(mtr.page(leaf), slot - 1));
            }
            if self.buf.len() >= want && slot < n {
                return Ok(());
            }
            let next = page::next(mtr.page(leaf));
            if next == FIL_NULL {
                self.done = self.buf.len() < want || slot >= n;
                return Ok(());
            }
            if self.buf.len() >= want {
                return Ok(());
            }
            let nl = mtr.get(PageId::new(self.idx.space, next), LatchMode::S)?;
            mtr.release(leaf);
            leaf = nl;
            slot = 0;
        }
    }

    fn collect_backward(
        &mut self,
        mtr: &mut Mtr<'_>,
        leaf: PageRef,
        slot: usize,
        mut key: Tuple,
        want: usize,
    ) -> Result<()> {
        let (mut leaf, mut slot) = (leaf, slot);
        loop {
            let first = slot;
            while slot > 0 && self.buf.len() < want {
                slot -= 1;
                if !self.take(mtr, leaf, slot)? {
                    return Ok(());
                }
            }
            if slot < first {
                self.examined.clear();
                self.examined
                    .extend_from_slice(ip::rec(mtr.page(leaf), slot));
            }
            if self.buf.len() >= want {
                return Ok(());
            }
            match self.prev_leaf(mtr, leaf, &mut key)? {
                Some((l, s)) => (leaf, slot) = (l, s),
                None => {
                    self.done = true;
                    return Ok(());
                }
            }
        }
    }

    /// Releases `leaf` and latches the leaf before it, returning it with the number of its
    /// records that come before `key` (every record of a consistent left neighbour). `key` is a
    /// key no larger than any record of `leaf`; it is lowered as leaves are passed.
    fn prev_leaf(
        &self,
        mtr: &mut Mtr<'_>,
        mut leaf: PageRef,
        key: &mut Tuple,
    ) -> Result<Option<(PageRef, usize)>> {
        loop {
            let p = mtr.page(leaf);
            // Lower the key to this leaf's first record (never raise it: records above the key
            // were already returned or come after the scan position).
            if ip::n_recs(p) > 0
                && record::cmp_tuple_rec(&self.idx.leaf, key, ip::rec(p, 0))
                    != std::cmp::Ordering::Less
            {
                *key = Tuple::from_rec(&self.idx.leaf, ip::rec(p, 0), self.idx.leaf.n_order);
            }
            let here = mtr.id(leaf).page;
            let prev = page::prev(p);
            mtr.release(leaf);
            if prev == FIL_NULL {
                return Ok(None);
            }
            let pl = mtr.get(PageId::new(self.idx.space, prev), LatchMode::S)?;
            let pp = mtr.page(pl);
            if page::page_type(pp) == Some(page::PageType::Index)
                && ip::index_id(pp) == self.idx.id
                && ip::is_leaf(pp)
                && page::next(pp) == here
            {
                let n = ip::n_recs(pp);
                return Ok(Some((pl, n)));
            }
            // The neighbourhood changed (split or merge): search for what precedes `key`.
            mtr.release(pl);
            let path = descend(mtr, &self.idx, key, Bound::Lower, Intent::Read)?;
            let (l2, s2) = (path.leaf().page, path.leaf().slot);
            if s2 > 0 {
                return Ok(Some((l2, s2)));
            }
            leaf = l2;
        }
    }
}
