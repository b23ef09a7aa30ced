//! Row scans over the clustered index or a secondary index, in either direction, between two
//! key bounds (each a prefix of the index's columns). A secondary scan looks each row up in the
//! clustered index after releasing the secondary leaf (btree LATCHING) and skips entries whose
//! row (the version the reader sees) does not match them.
//!
//! With a read view, a clustered scan returns the version of each record the view sees (row
//! versions are rebuilt while the leaf is latched, vers R1) and a secondary scan also visits
//! delete-marked entries: the version the view sees may still have them.
//!
//! A secondary scan whose reader uses only columns the index holds (its own and the primary
//! key's) reads them from the entry instead of the row (InnoDB's covering read) when the entry
//! is known to be what the reader would find through the row:
//! - S1: with a view, when the leaf's PAGE_MAX_TRX_ID is below the view's `up_limit_id`: every
//!   transaction that changed the leaf is one the view sees (Mtr::raise_max_trx_id), so an
//!   unmarked entry is the seen version's and a delete-marked one was deleted for the view;
//! - S2: without a view (READ UNCOMMITTED), when the entry is not delete-marked.
//!
//! Otherwise the row is looked up as above.
//!
//! The scan's taker (btree::cursor) does this work while the leaf is latched: it stops at the
//! stop bound, and decodes clustered rows and covering reads straight from the page (or from
//! the rebuilt older version), so a row is not copied before it is decoded. The rows are made
//! by the scan's `RowMaker`: engine values, or the reader's own values decoded in place.
//!
//! A reader may give the scan a `RowFilter` (`set_filter`): tests of single columns' stored
//! values, each a conjunct of the reader's condition.
//! - F1: the taker applies them to the record the reader would get (the version the view
//!   sees, or a covering entry) before making the row, and passes over a record that fails
//!   one: a filter only drops rows the reader would refuse, and the reader still tests its
//!   whole condition on the rows that come.
//! - F2: a field stored off-page is not tested (its row comes).
//! - F3: a record passed over by the filter counts as read (`take_filtered`), as the rows the
//!   reader refuses do.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use std::borrow::Cow;

use crate::btree::cursor::{self, Scan, Start, Taker, Took};
use crate::dict::schema::{self, Value};
use crate::dict::{FieldSrc, Table};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::read_u48;
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::record::{self, RecLayout, Tuple};
use crate::row::{vers, RowFilter, RowMaker, Values};
use crate::trx::view::ReadView;

/// The records a scan of a range with an end takes at its first refill, unless its reader
/// said otherwise (`first_batch`); later refills double, as for any scan (btree/cursor.rs).
const BOUNDED_FIRST_BATCH: usize = 64;

/// One end of a key range.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyBound {
    Unbounded,
    Included(Vec<Value>),
    Excluded(Vec<Value>),
}

pub struct RowScan<M: RowMaker = Values> {
    table: Arc<Table>,
    /// None = clustered index.
    index: Option<usize>,
    /// Where the scan begins, until it is built (at the first `next`, once `set_columns` had
    /// its chance to narrow what the taker decodes).
    start: Option<Start>,
    scan: Option<Scan<Got<M::Row>>>,
    /// Stop bound (key prefix, inclusive) in scan direction.
    stop: Option<(Tuple, bool)>,
    forward: bool,
    /// The view of a consistent read and the reader's transaction id; None reads the newest
    /// versions.
    view: Option<(Arc<ReadView>, u64)>,
    /// The columns the reader uses (None = all), see `set_columns`.
    columns: Option<Vec<bool>>,
    /// The records the first refill takes (None: the cursor's default), see `first_batch`.
    batch: Option<usize>,
    maker: Arc<M>,
    filter: Option<Arc<RowFilter>>,
    /// Records the filter passed over, not yet counted (F3): written by the taker, which runs
    /// in the thread that owns the scan (made with the filter).
    filtered: Option<Arc<AtomicU64>>,
}

/// A filter and the (field position, test) pairs it applies to a clustered record.
type FilterPlan<'a> = (&'a RowFilter, &'a [(usize, usize)]);

/// What the taker of a row scan makes of a record.
enum Got<R> {
    /// The row, decoded while the leaf was latched (clustered records, covering reads).
    Row(R),
    /// A secondary entry whose row is to be looked up once the leaf is released.
    Entry(Vec<u8>),
}

/// Encodes bound values as a key prefix of the index (`index` None = clustered).
fn encode_prefix(t: &Table, index: Option<usize>, vals: &[Value]) -> Result<Tuple> {
    let cols: Vec<FieldSrc> = match index {
        None => {
            if t.has_hidden_pk() {
                vec![FieldSrc::RowId]
            } else {
                t.pk_cols.iter().map(|&c| FieldSrc::Col(c)).collect()
            }
        }
        Some(i) => t.secondary[i].fields.clone(),
    };
    if vals.len() > cols.len() {
        return Err(Error::InvalidArgument(format!(
            "{} key values for a {}-field index",
            vals.len(),
            cols.len()
        )));
    }
    let mut k = Tuple::new();
    let mut buf = Vec::new();
    for (src, v) in cols.iter().zip(vals) {
        buf.clear();
        match src {
            FieldSrc::Col(c) => {
                let mut col = t.def.columns[*c].clone();
                col.nullable = true;
                if schema::encode(&col, v, &mut buf)? {
                    k.push(Some(&buf));
                } else {
                    k.push(None);
                }
            }
            FieldSrc::RowId => {
                let Value::UInt(id) = v else {
                    return Err(Error::InvalidArgument(
                        "row id bound must be unsigned".into(),
                    ));
                };
                k.push(Some(&id.to_be_bytes()[2..]));
            }
        }
    }
    Ok(k)
}

/// A key bound as (key prefix, inclusive); None when unbounded.
pub fn bound_key(t: &Table, index: Option<usize>, b: &KeyBound) -> Result<Option<(Tuple, bool)>> {
    Ok(match b {
        KeyBound::Unbounded => None,
        KeyBound::Included(v) => Some((encode_prefix(t, index, v)?, true)),
        KeyBound::Excluded(v) => Some((encode_prefix(t, index, v)?, false)),
    })
}

impl<M: RowMaker> RowScan<M> {
    /// The name of the table scanned.
    pub fn table_name(&self) -> &str {
        &self.table.name
    }

    /// A scan of `t`'s clustered index (`index` None) or a secondary index between two bounds,
    /// its rows made by `maker`.
    pub fn new(
        t: Arc<Table>,
        index: Option<usize>,
        (from, to): (&KeyBound, &KeyBound),
        forward: bool,
        view: Option<(Arc<ReadView>, u64)>,
        maker: Arc<M>,
    ) -> Result<RowScan<M>> {
        if let Some(i) = index {
            if i >= t.secondary.len() {
                return Err(Error::NoSuchIndex(format!("index #{i} of {}", t.name)));
            }
        }
        if let Some(i) = index {
            let created_by = t.secondary[i].created_by;
            if matches!(&view, Some((v, own)) if !v.sees(created_by, *own)) {
                return Err(Error::TableDefChanged);
            }
        }
        // `start` is where the scan begins in its direction, `stop` where it ends.
        let (start_b, stop_b) = if forward { (from, to) } else { (to, from) };
        let start = match start_b {
            KeyBound::Unbounded => Start::End,
            KeyBound::Included(v) => Start::Key {
                key: encode_prefix(&t, index, v)?,
                inclusive: true,
            },
            KeyBound::Excluded(v) => Start::Key {
                key: encode_prefix(&t, index, v)?,
                inclusive: false,
            },
        };
        let stop = bound_key(&t, index, stop_b)?;
        Ok(RowScan {
            table: t,
            index,
            start: Some(start),
            scan: None,
            stop,
            forward,
            view,
            columns: None,
            batch: None,
            maker,
            filter: None,
            filtered: None,
        })
    }

    /// The reader wants about `n` rows first (1: a single row), so the first refill decodes
    /// no more. Called before the first `next`.
    pub fn first_batch(&mut self, n: usize) {
        self.batch = Some(n);
    }

    /// Only the columns marked in `wanted` need values: the others are returned as NULL
    /// without being decoded. Called before the first `next`.
    pub fn set_columns(&mut self, wanted: Vec<bool>) {
        self.columns = Some(wanted);
    }

    /// Tests each record must pass before its row is made (F1). Called before the first
    /// `next`.
    pub fn set_filter(&mut self, filter: Arc<RowFilter>) {
        if !filter.is_empty() {
            self.filter = Some(filter);
            self.filtered = Some(Arc::new(AtomicU64::new(0)));
        }
    }

    /// The records the filter passed over since the last call (F3).
    pub fn take_filtered(&self) -> u64 {
        (self.filtered.as_ref()).map_or(0, |n| n.swap(0, AtomicOrdering::Relaxed))
    }

    /// The scan, built at the first call: its taker stops at the stop bound and decodes rows
    /// in place (clustered: the version the view sees; secondary: covering reads when S1/S2
    /// allow, else the entry is copied for a lookup).
    fn build(&mut self) -> Scan<Got<M::Row>> {
        let start = self.start.take();
        let (t, index, forward) = (self.table.clone(), self.index, self.forward);
        let maker = self.maker.clone();
        let (stop, view, cols) = (self.stop.clone(), self.view.clone(), self.columns.clone());
        let idx = match index {
            None => t.clustered.clone(),
            Some(i) => t.secondary[i].index.clone(),
        };
        let covered = index.and_then(|i| covered_fields(&t, i, cols.as_deref()));
        let plan = crate::row::decode_plan(&t, cols.as_deref());
        // F1: the field each test reads, in the record or in the covering entry.
        let filter = self.filter.clone().and_then(|f| {
            let rec_plan = f.plan(|c| t.field_cols.iter().find(|fc| fc.1 == c).map(|fc| fc.0))?;
            let entry_plan = covered
                .as_ref()
                .and_then(|cov| f.plan(|c| cov.iter().find(|x| x.0 == c).map(|x| x.1)));
            Some((f, rec_plan, entry_plan))
        });
        let filtered = self.filtered.clone();
        // Not an atomic add: only the scan's thread writes (F3).
        let pass_over = move || {
            if let Some(f) = &filtered {
                f.store(f.load(AtomicOrdering::Relaxed) + 1, AtomicOrdering::Relaxed);
            }
            Ok(Took::Skip)
        };
        let lay = idx.clone();
        // The fields a clustered record is read to: the wanted ones, those the filter tests
        // and the transaction id; their places found once per record.
        let reach = (plan.iter().map(|x| x.0 + 1))
            .chain(filter.iter().flat_map(|f| f.1.iter().map(|x| x.0 + 1)))
            .chain(std::iter::once(t.clustered.leaf.n_order + 1))
            .max()
            .unwrap_or(0);
        let mut ranges = Vec::with_capacity(reach);
        let take: Taker<Got<M::Row>> = Box::new(move |mtr: &mut Mtr<'_>, leaf, slot| {
            let rec = ip::rec(mtr.page(leaf), slot);
            if past_stop(&lay.leaf, stop.as_ref(), forward, rec) {
                return Ok(Took::Stop);
            }
            let Some(i) = index else {
                let wanted = (cols.as_deref(), &plan[..]);
                let test = filter.as_ref().map(|(f, p, _)| (&**f, &p[..]));
                return match take_clustered(
                    mtr,
                    &t,
                    view.as_ref(),
                    wanted,
                    (test, reach, &mut ranges),
                    (leaf, slot),
                    &*maker,
                )? {
                    Some(took) => Ok(took),
                    None => pass_over(),
                };
            };
            // A consistent read also visits delete-marked entries (module comment).
            if view.is_none() && record::is_deleted(rec) {
                return Ok(Took::Skip);
            }
            if let Some(cov) = &covered {
                let usable = match &view {
                    Some((v, _)) => ip::max_trx_id(mtr.page(leaf)) < v.up_limit_id,
                    None => true,
                };
                if usable {
                    if record::is_deleted(rec) {
                        return Ok(Took::Skip);
                    }
                    if let Some((f, _, Some(p))) = &filter {
                        if !f.passes_entry(&lay.leaf, rec, p) {
                            return pass_over();
                        }
                    }
                    let row = row_of_entry(&t, i, cov, rec, &*maker);
                    return Ok(Took::Item(Got::Row(row)));
                }
            }
            Ok(Took::Item(Got::Entry(rec.to_vec())))
        });
        let scan = Scan::with_taker(idx, start.unwrap_or(Start::End), forward, take);
        match (self.batch, &self.stop) {
            (Some(n), _) => scan.first_batch(n),
            // A range with an end decodes no more than it holds: a larger first batch saves
            // the descents of the refills (an equality on a key prefix: one).
            (None, Some(_)) => scan.first_batch(BOUNDED_FIRST_BATCH),
            (None, None) => scan,
        }
    }

    /// The next row, or None at the end of the range.
    pub fn next(&mut self, inner: &Inner) -> Result<Option<M::Row>> {
        if self.scan.is_none() {
            self.scan = Some(self.build());
        }
        let Some(scan) = self.scan.as_mut() else {
            return Ok(None);
        };
        loop {
            let entry = match scan.next(inner)? {
                None => return Ok(None),
                Some(Got::Row(r)) => return Ok(Some(r)),
                Some(Got::Entry(e)) => e,
            };
            let (t, mode) = match &self.view {
                Some((v, own)) => (&self.table, crate::row::ReadMode::View(v, *own)),
                None => (&self.table, crate::row::ReadMode::Latest),
            };
            let Some(i) = self.index else {
                return Err(Error::corrupted(
                    t.space,
                    t.clustered.root,
                    "secondary entry from a clustered scan",
                ));
            };
            let key = crate::row::lock::pk_of_sec_rec(t, i, &entry);
            let Some(row) = crate::row::get(inner, t, &key, mode)? else {
                continue;
            };
            // The version read must still have this entry.
            if crate::row::lock::sec_matches(t, i, &row, &entry)? {
                return Ok(Some(self.maker.of_values(row)));
            }
        }
    }
}

/// True if `rec` lies beyond the stop bound `stop` of a scan in direction `forward`.
fn past_stop(lay: &RecLayout, stop: Option<&(Tuple, bool)>, forward: bool, rec: &[u8]) -> bool {
    let Some((k, inclusive)) = stop else {
        return false;
    };
    // k vs rec on k's prefix.
    let o = record::cmp_tuple_rec(lay, k, rec);
    match (forward, inclusive) {
        (true, true) => o == Ordering::Less,
        (true, false) => o != Ordering::Greater,
        (false, true) => o == Ordering::Greater,
        (false, false) => o != Ordering::Less,
    }
}

/// The row of clustered record `slot` of latched leaf `leaf` that the reader sees (`view`
/// None: the newest version, unless delete-marked), decoded in place when it has no off-page
/// value; None if it fails a test of `filter` (F1, F2). The places of the record's first
/// `reach` fields (every one read here) are found once, in `ranges`.
fn take_clustered<M: RowMaker>(
    mtr: &mut Mtr<'_>,
    t: &Table,
    view: Option<&(Arc<ReadView>, u64)>,
    (cols, plan): (Option<&[bool]>, &[(usize, usize)]),
    (filter, reach, ranges): (Option<FilterPlan<'_>>, usize, &mut Vec<record::FieldRange>),
    (leaf, slot): (PageRef, usize),
    maker: &M,
) -> Result<Option<Took<Got<M::Row>>>> {
    let lay = &t.clustered.leaf;
    let rec = ip::rec(mtr.page(leaf), slot);
    record::field_ranges(lay, rec, reach, ranges);
    let v = match view {
        Some((v, own)) => {
            // As vers::trx_id: every clustered record has one (a broken page otherwise).
            let trx = read_u48(
                (ranges[lay.n_order].bytes(lay, rec)).expect("clustered record has a trx id"),
                0,
            );
            match vers::visible_from(mtr.inner(), t, rec, trx, v, *own)? {
                Some(Cow::Owned(old)) => {
                    // An older version: its fields lie elsewhere.
                    record::field_ranges(lay, &old, reach, ranges);
                    Cow::Owned(old)
                }
                Some(r) => r,
                None => return Ok(Some(Took::Skip)),
            }
        }
        None if record::is_deleted(rec) => return Ok(Some(Took::Skip)),
        None => Cow::Borrowed(rec),
    };
    if let Some((f, p)) = filter {
        if !f.passes(lay, &v, ranges, p) {
            return Ok(None);
        }
    }
    if record::info(&v) & record::REC_INFO_HAS_EXTERN == 0 {
        let row = crate::row::decode_ranges(t, &v, ranges, plan, maker);
        return Ok(Some(Took::Item(Got::Row(row))));
    }
    let f = cursor::fetch_rec(mtr, &t.clustered, v.into_owned())?;
    let row = crate::row::decode_columns(t, &f, cols);
    Ok(Some(Took::Item(Got::Row(maker.of_values(row)))))
}

/// For a secondary scan whose reader uses only columns of the index: (column, field of the
/// entry) of each, for covering reads (S1, S2); None otherwise.
fn covered_fields(t: &Table, i: usize, wanted: Option<&[bool]>) -> Option<Vec<(usize, usize)>> {
    let wanted = wanted?;
    let fields = &t.secondary[i].fields;
    (0..t.def.columns.len())
        .filter(|&c| wanted.get(c).copied().unwrap_or(true))
        .map(|c| {
            let pos = fields.iter().position(|f| *f == FieldSrc::Col(c))?;
            Some((c, pos))
        })
        .collect()
}

/// The row of a covering read: the used columns from entry `rec`, NULL for the others.
fn row_of_entry<M: RowMaker>(
    t: &Table,
    i: usize,
    cols: &[(usize, usize)],
    rec: &[u8],
    maker: &M,
) -> M::Row {
    let lay = &t.secondary[i].index.leaf;
    let mut row = maker.nulls(t.def.columns.len());
    for &(c, pos) in cols {
        if let Some(b) = record::field(lay, rec, pos) {
            maker.set(&mut row, c, &t.def.columns[c], b);
        }
    }
    row
}
