//! Row operations over a table's clustered and secondary indexes. (InnoDB: row0ins, row0upd,
//! row0sel, row0row.)
//!
//! OVERVIEW
//! A row change takes the row's lock, writes an undo record, changes the clustered index, then
//! each secondary index, every index change in its own mini-transaction (optimistic first,
//! pessimistic when a page must split or merge). A delete only delete-marks the clustered
//! record and the secondary entries; purge removes them once the deleting transaction has
//! committed. An insert over a delete-marked record with the same key becomes an update of it.
//! Values too long for the record go off-page first (BLOB chains), before any latch is taken.
//!
//! INVARIANTS
//! - I1: a transaction holds the row's X lock before it writes undo or changes an index.
//! - I2: every non-delete-marked clustered record has exactly one non-delete-marked entry in
//!   each secondary index, built from its columns; delete-marked clustered records have none.
//!   (Between the mini-transactions of one row change this holds only for committed rows;
//!   rollback and recovery restore it for the others.)
//! - I3: no latch is held while writing BLOB chains, waiting for a lock or in log_free_check.
//!
//! LATCHING: one index at a time. Readers of a secondary index release its leaf before the
//! clustered lookup (btree LATCHING).

pub mod lock;
pub mod rollback;
pub mod scan;
pub mod sec;
pub mod vers;

use std::cmp::Ordering;

use crate::btree::{self, blob, blob::PendingBlob, cursor, Bound, Intent, Path};
use crate::dict::schema::{self, ColumnKind, Value};
use crate::dict::{FieldSrc, SecIndex, Table};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::lock::{Kind, Mode, Outcome};
use crate::mach::{read_u48, write_u48};
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, FieldVal, Tuple, REC_INFO_DELETED};
use crate::trx::undo::{self, RollPtr};
use crate::trx::view::ReadView;
use crate::trx::{Isolation, TrxState};

/// Values shorter than this stay in the record (InnoDB DYNAMIC: 40 bytes).
pub const EXTERN_MIN: usize = 40;

/// How a column is stored in a clustered record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Null,
    Inline(Vec<u8>),
    Extern([u8; 20]),
}

impl Stored {
    fn len(&self) -> Option<(usize, bool)> {
        match self {
            Stored::Null => None,
            Stored::Inline(v) => Some((v.len(), false)),
            Stored::Extern(_) => Some((record::EXTERN_REF_SIZE, true)),
        }
    }
}

/// A clustered record taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClustRec {
    /// By table column number.
    pub cols: Vec<Stored>,
    pub row_id: Option<[u8; 6]>,
    pub trx_id: u64,
    pub roll_ptr: [u8; 7],
    pub deleted: bool,
}

impl ClustRec {
    /// Parses a clustered record of `t`.
    pub fn parse(t: &Table, rec: &[u8]) -> ClustRec {
        let lay = &t.clustered.leaf;
        let mut fields = Vec::with_capacity(lay.n_fields());
        for r in record::FieldIter::new(lay, rec) {
            let r = r.expect("malformed clustered record");
            fields.push(match r.bytes(lay, rec) {
                None => Stored::Null,
                Some(b) if r.ext => {
                    let mut x = [0u8; 20];
                    x.copy_from_slice(b);
                    Stored::Extern(x)
                }
                Some(b) => Stored::Inline(b.to_vec()),
            });
        }
        let nk = lay.n_order;
        let mut cols = vec![Stored::Null; t.def.columns.len()];
        for (c, pos) in t.col_pos.iter().enumerate() {
            cols[c] = fields[*pos].clone();
        }
        let row_id = if t.has_hidden_pk() {
            let Stored::Inline(v) = &fields[0] else {
                panic!("hidden row id")
            };
            let mut x = [0u8; 6];
            x.copy_from_slice(v);
            Some(x)
        } else {
            None
        };
        let sys = |i: usize| match &fields[i] {
            Stored::Inline(v) => v.clone(),
            _ => panic!("system field"),
        };
        let tid = sys(nk);
        let mut rp = [0u8; 7];
        rp.copy_from_slice(&sys(nk + 1));
        ClustRec {
            cols,
            row_id,
            trx_id: read_u48(&tid, 0),
            roll_ptr: rp,
            deleted: record::is_deleted(rec),
        }
    }

    /// Builds the record bytes.
    pub fn build(&self, t: &Table) -> Vec<u8> {
        let lay = &t.clustered.leaf;
        let mut tid = [0u8; 6];
        write_u48(&mut tid, 0, self.trx_id);
        let mut vals: Vec<FieldVal<'_>> = Vec::with_capacity(lay.n_fields());
        fn stored(s: &Stored) -> FieldVal<'_> {
            match s {
                Stored::Null => FieldVal::Null,
                Stored::Inline(v) => FieldVal::Bytes(v),
                Stored::Extern(r) => FieldVal::Extern(r),
            }
        }
        match &self.row_id {
            Some(r) => vals.push(FieldVal::Bytes(r)),
            None => {
                for &c in &t.pk_cols {
                    vals.push(stored(&self.cols[c]));
                }
            }
        }
        vals.push(FieldVal::Bytes(&tid));
        vals.push(FieldVal::Bytes(&self.roll_ptr));
        for &c in &t.other_cols {
            vals.push(stored(&self.cols[c]));
        }
        // Room for the whole record at once: header, lengths, ids and values.
        let values: usize = (self.cols.iter())
            .map(|s| match s {
                Stored::Null => 0,
                Stored::Inline(v) => v.len() + 3,
                Stored::Extern(r) => r.len() + 3,
            })
            .sum();
        let mut out = Vec::with_capacity(32 + lay.n_fields() / 8 + values);
        record::build(
            lay,
            if self.deleted { REC_INFO_DELETED } else { 0 },
            vals,
            &mut out,
        );
        out
    }

    /// Length `build` would produce.
    pub fn encoded_len(&self, t: &Table) -> usize {
        let lay = &t.clustered.leaf;
        let mut lens: Vec<Option<(usize, bool)>> = Vec::with_capacity(lay.n_fields());
        match &self.row_id {
            Some(_) => lens.push(Some((6, false))),
            None => lens.extend(t.pk_cols.iter().map(|&c| self.cols[c].len())),
        }
        lens.push(Some((6, false)));
        lens.push(Some((7, false)));
        lens.extend(t.other_cols.iter().map(|&c| self.cols[c].len()));
        lay.encoded_len(lens.into_iter())
    }

    /// The clustered key (ordering fields).
    pub fn key(&self, t: &Table) -> Tuple {
        let mut k = Tuple::new();
        match &self.row_id {
            Some(r) => k.push(Some(r)),
            None => {
                for &c in &t.pk_cols {
                    match &self.cols[c] {
                        Stored::Inline(v) => k.push(Some(v)),
                        _ => panic!("primary key column stored off-page or NULL"),
                    }
                }
            }
        }
        k
    }

    /// Extern references of the given columns (all columns if None).
    pub fn externs(&self, cols: Option<&[usize]>) -> Vec<[u8; 20]> {
        self.cols
            .iter()
            .enumerate()
            .filter(|(c, _)| cols.is_none_or(|l| l.contains(c)))
            .filter_map(|(_, s)| {
                if let Stored::Extern(r) = s {
                    Some(*r)
                } else {
                    None
                }
            })
            .collect()
    }
}

/// Encodes the clustered key of a row from key values (primary key columns, or the 6-byte row
/// id for a table without one).
pub fn encode_key(t: &Table, key: &[Value]) -> Result<Tuple> {
    let mut k = Tuple::new();
    if t.has_hidden_pk() {
        let [Value::UInt(id)] = key else {
            return Err(Error::InvalidArgument(
                "a table without a primary key is keyed by its row id".into(),
            ));
        };
        let mut b = [0u8; 6];
        write_u48(&mut b, 0, *id);
        k.push(Some(&b));
        return Ok(k);
    }
    if key.len() != t.pk_cols.len() {
        return Err(Error::InvalidArgument(format!(
            "primary key of {} has {} columns, {} values given",
            t.name,
            t.pk_cols.len(),
            key.len()
        )));
    }
    let mut buf = Vec::new();
    for (&c, v) in t.pk_cols.iter().zip(key) {
        buf.clear();
        if !schema::encode(&t.def.columns[c], v, &mut buf)? {
            return Err(Error::InvalidArgument("NULL in a primary key".into()));
        }
        k.push(Some(&buf));
    }
    Ok(k)
}

/// Serialised key for locking.
pub fn key_bytes(k: &Tuple) -> Vec<u8> {
    let mut out = Vec::new();
    for f in k.iter() {
        match f {
            Some(b) => {
                out.push(1);
                out.extend_from_slice(&(b.len() as u32).to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.push(0),
        }
    }
    out
}

/// Waits for the X lock on the row with clustered key `key` (no latch held, lock L2).
fn wait_row_x(inner: &Inner, trx: &mut TrxState, t: &Table, key: &Tuple) -> Result<()> {
    let lk = lock::key_of(t.id, &t.clustered, key);
    trx.wait_lock(inner, &lk, Mode::X, Kind::RecNotGap)
}

/// Before changing clustered record `rec` (leaf latched): turns another active transaction's
/// implicit lock on it into an explicit one, and returns false if the change must wait for a
/// lock (the caller releases the latch and waits for X on the record). With
/// innodb_snapshot_isolation at REPEATABLE READ, a row changed after the read view is an error.
fn lock_for_change(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    key: &Tuple,
    rec: &[u8],
) -> Result<bool> {
    let lk = lock::key_of(t.id, &t.clustered, key);
    lock::convert_implicit(inner, trx, t, &lk, rec);
    if trx.conflicts(inner, &lk, Mode::X, Kind::RecNotGap) {
        return Ok(false);
    }
    lock::check_snapshot(inner, trx, t, rec)?;
    Ok(true)
}

/// Reads a column's full value (off-page values from their chain).
pub fn col_value(inner: &Inner, t: &Table, s: &Stored) -> Result<Option<Vec<u8>>> {
    Ok(match s {
        Stored::Null => None,
        Stored::Inline(v) => Some(v.clone()),
        Stored::Extern(r) => {
            let mut mtr = Mtr::new(inner);
            let v = blob::read(&mut mtr, t.space, r)?;
            mtr.commit()?;
            Some(v)
        }
    })
}

/// The secondary index entry of a row (reads off-page values of indexed columns if needed).
pub fn sec_entry(inner: &Inner, t: &Table, s: &SecIndex, cr: &ClustRec) -> Result<Tuple> {
    let mut e = Tuple::new();
    for src in &s.fields {
        match src {
            FieldSrc::Col(c) => {
                let v = col_value(inner, t, &cr.cols[*c])?;
                e.push(v.as_deref());
            }
            FieldSrc::RowId => e.push(cr.row_id.as_ref().map(|r| &r[..])),
        }
    }
    Ok(e)
}

/// Decodes a row into values, using off-page values fetched with the record.
pub fn decode_row(t: &Table, f: &cursor::Fetched) -> Vec<Value> {
    decode_columns(t, f, None)
}

/// `decode_row`, with NULL in place of the columns `wanted` (when given) leaves unmarked.
pub fn decode_columns(t: &Table, f: &cursor::Fetched, wanted: Option<&[bool]>) -> Vec<Value> {
    decode_rec(t, &f.rec, &f.externs, wanted)
}

/// `decode_columns` of a record given as its bytes (possibly still in a latched page) and its
/// off-page values.
pub(crate) fn decode_rec(
    t: &Table,
    rec: &[u8],
    externs: &[(usize, Vec<u8>)],
    wanted: Option<&[bool]>,
) -> Vec<Value> {
    match wanted {
        None => decode_fields(t, rec, externs, &t.field_cols),
        Some(_) => decode_fields(t, rec, externs, &decode_plan(t, wanted)),
    }
}

/// The (record field, table column) pairs of the columns `wanted` marks (all when None), in
/// field order: what `decode_fields` reads, computed once for a scan.
pub(crate) fn decode_plan(t: &Table, wanted: Option<&[bool]>) -> Vec<(usize, usize)> {
    (t.field_cols.iter().copied())
        .filter(|&(_, c)| wanted.is_none_or(|w| w.get(c).copied().unwrap_or(true)))
        .collect()
}

/// Makes a reader's rows from the stored fields of the records a scan reads (`scan::RowScan`):
/// engine values (`Values`), or the reader's own values decoded straight from the page (the
/// SQL layer's), so a row is decoded once and no engine values are made on the way.
pub trait RowMaker: Send + Sync + 'static {
    type Row: Send + 'static;
    /// A row of `n` columns, each NULL until set.
    fn nulls(&self, n: usize) -> Self::Row;
    /// Sets column `c` (defined by `col`) of `row` from its stored bytes.
    fn set(&self, row: &mut Self::Row, c: usize, col: &schema::ColumnDef, bytes: &[u8]);
    /// A row of engine values as a row (rows read through a lookup or with off-page values).
    fn of_values(&self, r: Vec<Value>) -> Self::Row;
}

/// Rows as engine values.
pub struct Values;

impl RowMaker for Values {
    type Row = Vec<Value>;
    fn nulls(&self, n: usize) -> Vec<Value> {
        let mut row = Vec::with_capacity(n);
        row.resize_with(n, || Value::Null);
        row
    }
    fn set(&self, row: &mut Vec<Value>, c: usize, col: &schema::ColumnDef, bytes: &[u8]) {
        row[c] = schema::decode(col, Some(bytes));
    }
    fn of_values(&self, r: Vec<Value>) -> Vec<Value> {
        r
    }
}

/// The row of clustered record `rec` (off-page values in `externs`) with the columns of `plan`
/// (`decode_plan`) decoded and NULL for the others, in one pass over the record's fields (a
/// field's place depends on every field before it) that stops after the last one wanted.
pub(crate) fn decode_fields(
    t: &Table,
    rec: &[u8],
    externs: &[(usize, Vec<u8>)],
    plan: &[(usize, usize)],
) -> Vec<Value> {
    decode_fields_by(t, rec, externs, plan, &Values)
}

/// `decode_fields`, the row made by `maker`.
pub(crate) fn decode_fields_by<M: RowMaker>(
    t: &Table,
    rec: &[u8],
    externs: &[(usize, Vec<u8>)],
    plan: &[(usize, usize)],
    maker: &M,
) -> M::Row {
    let layout = &t.clustered.leaf;
    // The NULLs go in at once, then the wanted values over them.
    let mut row = maker.nulls(t.def.columns.len());
    // A plain loop over the fields: iterator adapters here kept the walk out of line.
    let mut fields = record::FieldIter::new(layout, rec);
    let mut pos = 0;
    for &(p, c) in plan {
        let r = loop {
            let r = fields.next().flatten();
            pos += 1;
            if pos > p {
                break r;
            }
        };
        let r = r.expect("malformed record on a verified page");
        let bytes = match r.ext {
            true => (externs.iter()).find(|(f, _)| *f == p).map(|(_, v)| &v[..]),
            false => r.bytes(layout, rec),
        };
        if let Some(b) = bytes {
            maker.set(&mut row, c, &t.def.columns[c], b);
        }
    }
    row
}

/// `decode_fields_by` of a record without off-page values whose fields' places are known
/// (`ranges`, from `record::field_ranges`, reaching every field `plan` names).
pub(crate) fn decode_ranges<M: RowMaker>(
    t: &Table,
    rec: &[u8],
    ranges: &[record::FieldRange],
    plan: &[(usize, usize)],
    maker: &M,
) -> M::Row {
    let layout = &t.clustered.leaf;
    let mut row = maker.nulls(t.def.columns.len());
    for &(p, c) in plan {
        if let Some(b) = ranges[p].bytes(layout, rec) {
            maker.set(&mut row, c, &t.def.columns[c], b);
        }
    }
    row
}

/// A test of one column's stored value (None: NULL) that a consistent read's scan applies to
/// a record before making its row (`RowFilter`).
pub type FieldTest = Box<dyn Fn(Option<&[u8]>) -> bool + Send + Sync>;

/// Tests a scan applies to each record before it makes the row (scan.rs F1-F3): a record
/// that fails one is passed over undecoded.
#[derive(Default)]
pub struct RowFilter {
    tests: Vec<(usize, FieldTest)>,
}

impl RowFilter {
    /// Adds a test of column `column` (position in the table definition).
    pub fn add(&mut self, column: usize, test: FieldTest) {
        self.tests.push((column, test));
    }

    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// (field position, test) of each test, positions increasing, from each column's field
    /// position (`field_of`); None if a column has none.
    pub(crate) fn plan(
        &self,
        field_of: impl Fn(usize) -> Option<usize>,
    ) -> Option<Vec<(usize, usize)>> {
        let mut plan = (self.tests.iter().enumerate())
            .map(|(k, (c, _))| Some((field_of(*c)?, k)))
            .collect::<Option<Vec<_>>>()?;
        plan.sort_unstable();
        Some(plan)
    }

    /// True unless a field `plan` names fails its test (an off-page field is not tested),
    /// the fields' places in `rec` given by `ranges` (`record::field_ranges`).
    pub(crate) fn passes(
        &self,
        layout: &record::RecLayout,
        rec: &[u8],
        ranges: &[record::FieldRange],
        plan: &[(usize, usize)],
    ) -> bool {
        plan.iter().all(|&(p, k)| {
            let r = ranges[p];
            r.ext || (self.tests[k].1)(r.bytes(layout, rec))
        })
    }

    /// True unless a field of secondary entry `rec` that `plan` names fails its test.
    pub(crate) fn passes_entry(
        &self,
        layout: &record::RecLayout,
        rec: &[u8],
        plan: &[(usize, usize)],
    ) -> bool {
        plan.iter()
            .all(|&(pos, k)| (self.tests[k].1)(record::field(layout, rec, pos)))
    }
}

/// Moves long values off-page until the record fits (I3: called with no latch held). Columns
/// that no index uses go first, longest first.
fn fit_record(
    inner: &Inner,
    t: &Table,
    cr: &mut ClustRec,
    written: &mut Vec<PendingBlob>,
) -> Result<()> {
    let max = ip::max_rec_size(inner.bp.page_size());
    loop {
        if cr.encoded_len(t) <= max {
            return Ok(());
        }
        let indexed = |c: usize| t.secondary.iter().any(|s| s.spec.columns.contains(&c));
        let cand = (0..cr.cols.len())
            .filter(|&c| {
                !t.pk_cols.contains(&c) && matches!(t.def.columns[c].kind, ColumnKind::Var { .. })
            })
            .filter_map(|c| match &cr.cols[c] {
                Stored::Inline(v) if v.len() > EXTERN_MIN => {
                    Some((indexed(c), std::cmp::Reverse(v.len()), c))
                }
                _ => None,
            })
            .min();
        let Some((_, _, c)) = cand else {
            return Err(Error::RowTooLarge(format!(
                "the row of {} needs {} bytes in its page; the maximum is {max}",
                t.name,
                cr.encoded_len(t)
            )));
        };
        let Stored::Inline(v) = std::mem::replace(&mut cr.cols[c], Stored::Null) else {
            unreachable!()
        };
        let pb = blob::write(inner, t.space, &v)?;
        cr.cols[c] = Stored::Extern(pb.reference());
        written.push(pb);
    }
}

/// Frees chains that were written but never linked (the change failed before its record).
fn discard_pending(inner: &Inner, written: &[PendingBlob]) {
    for b in written {
        if let Err(e) = blob::free_from_slot(inner, b.space, b.slot, b.first) {
            tracing::warn!("InnoDB: could not free an unused BLOB chain: {e}");
        }
    }
}

/// Runs `f` as a statement: on error, the transaction's changes since the start are rolled back.
fn statement<T>(
    inner: &Inner,
    trx: &mut TrxState,
    f: impl FnOnce(&mut TrxState) -> Result<T>,
) -> Result<T> {
    let sp = trx.savepoint();
    match f(trx) {
        Ok(v) => Ok(v),
        Err(e) => {
            if e.is_fatal() {
                return Err(e);
            }
            if trx.undo.is_some() {
                trx.rollback_to(inner, sp)?;
            }
            Err(e)
        }
    }
}

/// Inserts a row.
pub fn insert(inner: &Inner, trx: &mut TrxState, t: &Table, vals: &[Value]) -> Result<()> {
    if vals.len() != t.def.columns.len() {
        return Err(Error::InvalidArgument(format!(
            "{} has {} columns, {} values given",
            t.name,
            t.def.columns.len(),
            vals.len()
        )));
    }
    let mut cols = Vec::with_capacity(vals.len());
    let mut buf = Vec::new();
    for (col, v) in t.def.columns.iter().zip(vals) {
        buf.clear();
        cols.push(if schema::encode(col, v, &mut buf)? {
            Stored::Inline(buf.clone())
        } else {
            Stored::Null
        });
    }
    for &c in &t.pk_cols {
        if cols[c] == Stored::Null {
            return Err(Error::InvalidArgument(format!(
                "NULL in primary key column {}",
                t.def.columns[c].name
            )));
        }
    }
    let row_id = if t.has_hidden_pk() {
        let mut b = [0u8; 6];
        write_u48(&mut b, 0, crate::dict::next_row_id(inner)?);
        Some(b)
    } else {
        None
    };
    let mut cr = ClustRec {
        cols,
        row_id,
        trx_id: 0,
        roll_ptr: [0; 7],
        deleted: false,
    };
    let key = cr.key(t);
    trx.ensure_undo(inner)?;
    cr.trx_id = trx.id;
    statement(inner, trx, |trx| {
        let mut written = Vec::new();
        fit_record(inner, t, &mut cr, &mut written)
            .inspect_err(|_| discard_pending(inner, &written))?;
        clust_insert(inner, trx, t, &key, &mut cr, &written)
            .inspect_err(|_| discard_pending(inner, &written))?;
        for s in &t.secondary {
            let e = sec_entry(inner, t, s, &cr)?;
            sec::insert(inner, trx, t, s, &e)?;
        }
        Ok(())
    })
}

fn clust_insert(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    key: &Tuple,
    cr: &mut ClustRec,
    blobs: &[PendingBlob],
) -> Result<()> {
    let idx = &t.clustered;
    let lk = lock::key_of(t.id, idx, key);
    let mut intent = Intent::ModifyLeaf;
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(&mut mtr, idx, key, Bound::Upper, intent)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        let exact = slot > 0
            && record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)) == Ordering::Equal;
        let new_len = cr.encoded_len(t);
        let mut successor = None;
        if exact {
            let old = ip::rec(p, slot - 1).to_vec();
            lock::convert_implicit(inner, trx, t, &lk, &old);
            if !record::is_deleted(&old) {
                // A duplicate: InnoDB share-locks it (next-key at REPEATABLE READ) first, so
                // an insert that races with an uncommitted one waits for its outcome.
                let kind = if trx.isolation >= Isolation::RepeatableRead {
                    Kind::NextKey
                } else {
                    Kind::RecNotGap
                };
                if trx.try_lock(inner, &lk, Mode::S, kind)? == Outcome::MustWait {
                    drop(mtr);
                    trx.wait_lock(inner, &lk, Mode::S, kind)?;
                    continue;
                }
                lock::check_snapshot(inner, trx, t, &old)?;
                return Err(Error::DuplicateKey {
                    index: "PRIMARY".into(),
                    key: key_display(t, key),
                });
            }
            if trx.conflicts(inner, &lk, Mode::X, Kind::RecNotGap) {
                drop(mtr);
                trx.wait_lock(inner, &lk, Mode::X, Kind::RecNotGap)?;
                continue;
            }
            lock::check_snapshot(inner, trx, t, &old)?;
            // Insert over a delete-marked record: an update that replaces every field.
            if intent == Intent::ModifyLeaf && new_len > old.len() + ip::free_space(p) {
                intent = Intent::TreeInsert;
                continue;
            }
            let changed: Vec<u16> = (0..idx.leaf.n_fields() as u16).collect();
            let rp = trx.write_undo(
                inner,
                undo::UREC_UPDATE,
                t.id,
                &undo::encode_update_body(&changed, &old),
            )?;
            cr.roll_ptr = rp.encode();
            let rec = cr.build(t);
            replace_at(&mut mtr, idx, &mut path, slot - 1, &rec, intent)?;
        } else {
            if intent == Intent::ModifyLeaf && !ip::fits(p, new_len) {
                intent = Intent::TreeInsert;
                continue;
            }
            // The gap the record goes into must not be locked by another transaction.
            let succ = lock::successor_key(&mut mtr, t.id, idx, leaf, slot)?;
            if trx.conflicts(inner, &succ, Mode::X, Kind::InsertIntention) {
                drop(mtr);
                trx.wait_lock(inner, &succ, Mode::X, Kind::InsertIntention)?;
                continue;
            }
            let kf: Vec<&[u8]> = key.iter().map(|f| f.unwrap_or(&[])).collect();
            let rp = trx.write_undo(
                inner,
                undo::UREC_INSERT,
                t.id,
                &undo::encode_insert_body(&kf),
            )?;
            cr.roll_ptr = rp.encode();
            let rec = cr.build(t);
            if intent == Intent::ModifyLeaf {
                let ok = mtr.rec_insert(leaf, slot, &rec);
                debug_assert!(ok);
            } else {
                btree::tree_insert(&mut mtr, idx, &mut path, slot, &rec)?;
            }
            successor = Some(succ);
        }
        for b in blobs {
            blob::link(&mut mtr, b)?;
        }
        if let Some(succ) = &successor {
            inner.trx.locks.inherit_from_successor(succ, &lk);
        }
        mtr.commit()?;
        return Ok(());
    }
}

/// Replaces the record at `slot` (optimistically in place, or by removing it and inserting the
/// new one with splits).
fn replace_at(
    mtr: &mut Mtr<'_>,
    idx: &btree::Index,
    path: &mut Path,
    slot: usize,
    rec: &[u8],
    intent: Intent,
) -> Result<()> {
    let leaf = path.leaf().page;
    if mtr.rec_update(leaf, slot, rec) {
        return Ok(());
    }
    assert_eq!(
        intent,
        Intent::TreeInsert,
        "optimistic replace was checked to fit"
    );
    mtr.rec_delete(leaf, slot);
    btree::tree_insert(mtr, idx, path, slot, rec)
}

/// A printable key for duplicate-key errors.
pub fn key_display(t: &Table, key: &Tuple) -> String {
    if t.has_hidden_pk() {
        return "row id".into();
    }
    let parts: Vec<String> = t
        .pk_cols
        .iter()
        .zip(key.iter())
        .map(|(&c, b)| match schema::decode(&t.def.columns[c], b) {
            Value::Int(v) => v.to_string(),
            Value::UInt(v) => v.to_string(),
            Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    parts.join("-")
}

/// How a read sees rows.
#[derive(Clone, Copy)]
pub enum ReadMode<'a> {
    /// The newest version, committed or not (READ UNCOMMITTED, and locking reads once the
    /// lock is held).
    Latest,
    /// The version a read view sees, for a reader whose own transaction id is the second field.
    View(&'a ReadView, u64),
}

/// Reads the row with clustered key `key` (None if absent or deleted) as `mode` sees it.
pub fn get(
    inner: &Inner,
    t: &Table,
    key: &Tuple,
    mode: ReadMode<'_>,
) -> Result<Option<Vec<Value>>> {
    let idx = &t.clustered;
    let mut mtr = Mtr::new(inner);
    let path = btree::descend(&mut mtr, idx, key, Bound::Upper, Intent::Read)?;
    let (leaf, slot) = (path.leaf().page, path.leaf().slot);
    let p = mtr.page(leaf);
    if slot == 0 || record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)) != Ordering::Equal {
        return Ok(None);
    }
    let rec = ip::rec(p, slot - 1);
    let f = match mode {
        ReadMode::View(v, own) if !v.sees(vers::trx_id(t, rec), own) => {
            let rec = rec.to_vec();
            match vers::visible(inner, t, &rec, v, own)? {
                Some(old) => cursor::fetch_rec(&mut mtr, idx, old.into_owned())?,
                None => return Ok(None),
            }
        }
        _ => {
            if record::is_deleted(rec) {
                return Ok(None);
            }
            // With no off-page value the row is decoded from the latched page itself.
            if record::info(rec) & record::REC_INFO_HAS_EXTERN == 0 {
                let row = decode_rec(t, rec, &[], None);
                mtr.commit()?;
                return Ok(Some(row));
            }
            cursor::fetch(&mut mtr, idx, leaf, slot - 1)?
        }
    };
    mtr.commit()?;
    Ok(Some(decode_row(t, &f)))
}

/// Updates columns of the row with clustered key `key`. Changing primary key columns is a
/// delete and an insert for the caller. Returns false if the row does not exist.
pub fn update(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    key: &Tuple,
    changes: &[(usize, Value)],
) -> Result<bool> {
    let mut enc: Vec<(usize, Stored)> = Vec::with_capacity(changes.len());
    let mut buf = Vec::new();
    for (c, v) in changes {
        let col = t
            .def
            .columns
            .get(*c)
            .ok_or_else(|| Error::InvalidArgument(format!("column {c}")))?;
        if t.pk_cols.contains(c) {
            return Err(Error::InvalidArgument(
                "update changes a primary key column".into(),
            ));
        }
        buf.clear();
        enc.push((
            *c,
            if schema::encode(col, v, &mut buf)? {
                Stored::Inline(buf.clone())
            } else {
                Stored::Null
            },
        ));
    }
    trx.ensure_undo(inner)?;
    statement(inner, trx, |trx| update_locked(inner, trx, t, key, &enc))
}

fn update_locked(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    key: &Tuple,
    enc: &[(usize, Stored)],
) -> Result<bool> {
    let idx = &t.clustered;
    let mut written: Vec<PendingBlob> = Vec::new();
    let mut extra_extern: Vec<(usize, [u8; 20])> = Vec::new();
    let mut intent = Intent::ModifyLeaf;
    let result = loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(&mut mtr, idx, key, Bound::Upper, intent)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        if slot == 0
            || record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)) != Ordering::Equal
        {
            break (false, None);
        }
        let old = ip::rec(p, slot - 1).to_vec();
        if !lock_for_change(inner, trx, t, key, &old)? {
            drop(mtr);
            wait_row_x(inner, trx, t, key)?;
            continue;
        }
        let old_cr = ClustRec::parse(t, &old);
        if old_cr.deleted {
            break (false, None);
        }
        let mut cr = old_cr.clone();
        for (c, s) in enc {
            cr.cols[*c] = s.clone();
        }
        for (c, r) in &extra_extern {
            cr.cols[*c] = Stored::Extern(*r);
        }
        if cr.encoded_len(t) > ip::max_rec_size(inner.bp.page_size()) {
            // Long values must go off-page first, with no latch held (I3).
            drop(mtr);
            let mut moved = cr.clone();
            fit_record(inner, t, &mut moved, &mut written)?;
            extra_extern = moved
                .cols
                .iter()
                .enumerate()
                .filter_map(|(c, s)| match (s, &cr.cols[c]) {
                    (Stored::Extern(r), Stored::Inline(_)) => Some((c, *r)),
                    _ => None,
                })
                .collect();
            continue;
        }
        let new_len = cr.encoded_len(t);
        if intent == Intent::ModifyLeaf && new_len > old.len() + ip::free_space(p) {
            drop(mtr);
            intent = Intent::TreeInsert;
            continue;
        }
        let changed: Vec<u16> = enc
            .iter()
            .map(|(c, _)| *c)
            .chain(extra_extern.iter().map(|(c, _)| *c))
            .map(|c| t.col_pos[c] as u16)
            .collect();
        let rp = trx.write_undo(
            inner,
            undo::UREC_UPDATE,
            t.id,
            &undo::encode_update_body(&changed, &old),
        )?;
        cr.trx_id = trx.id;
        cr.roll_ptr = rp.encode();
        let rec = cr.build(t);
        replace_at(&mut mtr, idx, &mut path, slot - 1, &rec, intent)?;
        for b in &written {
            blob::link(&mut mtr, b)?;
        }
        mtr.commit()?;
        break (true, Some((old_cr, cr)));
    };
    let (found, versions) = result;
    if !found {
        discard_pending(inner, &written);
        return Ok(false);
    }
    let (old_cr, new_cr) = versions.expect("versions of an updated row");
    for s in &t.secondary {
        if !s
            .spec
            .columns
            .iter()
            .any(|c| enc.iter().any(|(x, _)| x == c))
        {
            continue;
        }
        let old_e = sec_entry(inner, t, s, &old_cr)?;
        let new_e = sec_entry(inner, t, s, &new_cr)?;
        if old_e == new_e {
            continue;
        }
        if sec::same_place(s, &old_e, &new_e) {
            // Same place in the index (e.g. only the letter case changed): rewrite the bytes.
            sec::set_entry(inner, s, &new_e, false, trx.id)?;
        } else {
            sec::lock_unique(inner, trx, t, s, &old_e)?;
            sec::set_mark(inner, s, &old_e, true, trx.id)?;
            sec::insert(inner, trx, t, s, &new_e)?;
        }
    }
    Ok(true)
}

/// Deletes (delete-marks) the row with clustered key `key`. Returns false if absent.
pub fn delete(inner: &Inner, trx: &mut TrxState, t: &Table, key: &Tuple) -> Result<bool> {
    trx.ensure_undo(inner)?;
    statement(inner, trx, |trx| {
        let idx = &t.clustered;
        let (mut mtr, leaf, slot, old) = loop {
            inner.log_free_check()?;
            let mut mtr = Mtr::new(inner);
            let path = btree::descend(&mut mtr, idx, key, Bound::Upper, Intent::ModifyLeaf)?;
            let (leaf, slot) = (path.leaf().page, path.leaf().slot);
            let p = mtr.page(leaf);
            if slot == 0
                || record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)) != Ordering::Equal
            {
                return Ok(false);
            }
            let old = ip::rec(p, slot - 1).to_vec();
            if lock_for_change(inner, trx, t, key, &old)? {
                break (mtr, leaf, slot, old);
            }
            drop(mtr);
            wait_row_x(inner, trx, t, key)?;
        };
        let old_cr = ClustRec::parse(t, &old);
        if old_cr.deleted {
            return Ok(false);
        }
        let rp = trx.write_undo(
            inner,
            undo::UREC_DEL_MARK,
            t.id,
            &undo::encode_update_body(&[], &old),
        )?;
        let rec = delete_marked(t, &old, trx.id, &rp.encode());
        let ok = mtr.rec_update(leaf, slot - 1, &rec);
        assert!(ok, "a delete mark keeps the record length");
        mtr.commit()?;
        for s in &t.secondary {
            let e = sec_entry(inner, t, s, &old_cr)?;
            sec::lock_unique(inner, trx, t, s, &e)?;
            sec::set_mark(inner, s, &e, true, trx.id)?;
        }
        Ok(true)
    })
}

/// Clustered record `old` delete-marked by `trx_id` (undo at `roll_ptr`), in `old`'s own
/// format: a record written before an instant ADD COLUMN keeps its length.
fn delete_marked(t: &Table, old: &[u8], trx_id: u64, roll_ptr: &[u8; 7]) -> Vec<u8> {
    let lay = &t.clustered.leaf;
    let mut rec = old.to_vec();
    let tid = record::field_range(lay, old, lay.n_order);
    write_u48(&mut rec, tid.start, trx_id);
    let rp = record::field_range(lay, old, lay.n_order + 1);
    rec[rp.start..rp.start + roll_ptr.len()].copy_from_slice(roll_ptr);
    rec[2] |= REC_INFO_DELETED;
    rec
}

/// The roll pointer of a clustered record image.
pub fn roll_ptr_of(cr: &ClustRec) -> RollPtr {
    RollPtr::decode(&cr.roll_ptr)
}
