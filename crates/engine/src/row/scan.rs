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

use std::cmp::Ordering;
use std::sync::Arc;

use crate::btree::cursor::{self, Resolver, Scan, Start};
use crate::dict::schema::{self, Value};
use crate::dict::{FieldSrc, Table};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::page::record::{self, Tuple};
use crate::row::vers;
use crate::trx::view::ReadView;

/// One end of a key range.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyBound {
    Unbounded,
    Included(Vec<Value>),
    Excluded(Vec<Value>),
}

pub struct RowScan {
    table: Arc<Table>,
    /// None = clustered index.
    index: Option<usize>,
    scan: Scan,
    /// Stop bound (key prefix, inclusive) in scan direction.
    stop: Option<(Tuple, bool)>,
    forward: bool,
    done: bool,
    /// The view of a consistent read and the reader's transaction id; None reads the newest
    /// versions.
    view: Option<(Arc<ReadView>, u64)>,
    /// The columns the reader uses (None = all), see `set_columns`.
    columns: Option<Vec<bool>>,
    /// For a secondary scan whose reader uses only columns of the index: (column, field of
    /// the entry) of each, for covering reads (S1, S2).
    covered: Option<Vec<(usize, usize)>>,
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

impl RowScan {
    /// The name of the table scanned.
    pub fn table_name(&self) -> &str {
        &self.table.name
    }

    pub fn new(
        t: Arc<Table>,
        index: Option<usize>,
        from: &KeyBound,
        to: &KeyBound,
        forward: bool,
        view: Option<(Arc<ReadView>, u64)>,
    ) -> Result<RowScan> {
        if let Some(i) = index {
            if i >= t.secondary.len() {
                return Err(Error::NoSuchIndex(format!("index #{i} of {}", t.name)));
            }
        }
        let idx = match index {
            None => t.clustered.clone(),
            Some(i) => {
                let s = &t.secondary[i];
                if matches!(&view, Some((v, own)) if !v.sees(s.created_by, *own)) {
                    return Err(Error::TableDefChanged);
                }
                s.index.clone()
            }
        };
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
        let scan = match (&view, index) {
            (Some((v, own)), None) => {
                let (v, own, t2) = (v.clone(), *own, t.clone());
                let resolve: Resolver = Box::new(move |inner: &Inner, rec: &[u8]| {
                    vers::visible(inner, &t2, rec, &v, own)
                });
                Scan::with_resolver(idx, start, forward, resolve)
            }
            _ => Scan::new(idx, start, forward),
        };
        Ok(RowScan {
            scan,
            table: t,
            index,
            stop,
            forward,
            done: false,
            view,
            columns: None,
            covered: None,
        })
    }

    /// True if `rec` lies beyond the stop bound.
    fn past_stop(&self, rec: &[u8]) -> bool {
        let Some((k, inclusive)) = &self.stop else {
            return false;
        };
        let lay = &self.scan.index().leaf;
        // k vs rec on k's prefix.
        let o = record::cmp_tuple_rec(lay, k, rec);
        match (self.forward, inclusive) {
            (true, true) => o == Ordering::Less,
            (true, false) => o != Ordering::Greater,
            (false, true) => o == Ordering::Greater,
            (false, false) => o != Ordering::Less,
        }
    }

    /// The next row, or None at the end of the range.
    /// Only the columns marked in `wanted` need values: a scan of the clustered index returns
    /// NULL for the others without decoding them.
    pub fn set_columns(&mut self, wanted: Vec<bool>) {
        self.covered = self.index.and_then(|i| {
            let fields = &self.table.secondary[i].fields;
            (0..self.table.def.columns.len())
                .filter(|&c| wanted.get(c).copied().unwrap_or(true))
                .map(|c| {
                    let pos = fields.iter().position(|f| *f == FieldSrc::Col(c))?;
                    Some((c, pos))
                })
                .collect()
        });
        self.columns = Some(wanted);
    }

    /// The row of a covering read: the used columns from entry `rec`, NULL for the others.
    fn row_of_entry(&self, i: usize, cols: &[(usize, usize)], f: &cursor::Fetched) -> Vec<Value> {
        let t = &self.table;
        let lay = &t.secondary[i].index.leaf;
        let mut row = vec![Value::Null; t.def.columns.len()];
        for &(c, pos) in cols {
            row[c] = schema::decode(&t.def.columns[c], f.field(lay, pos));
        }
        row
    }

    pub fn next(&mut self, inner: &Inner) -> Result<Option<Vec<Value>>> {
        let t = self.table.clone();
        while !self.done {
            let Some(f) = self.scan.next(inner)? else {
                self.done = true;
                break;
            };
            if self.past_stop(&f.rec) {
                self.done = true;
                break;
            }
            // A consistent read of a secondary index also visits delete-marked entries (module
            // comment); the clustered resolver has already dropped deleted versions.
            if self.view.is_none() && record::is_deleted(&f.rec) {
                continue;
            }
            let Some(i) = self.index else {
                let cols = self.columns.as_deref();
                return Ok(Some(crate::row::decode_columns(&t, &f, cols)));
            };
            if let Some(cols) = &self.covered {
                let usable = match &self.view {
                    Some((v, _)) => f.page_max_trx < v.up_limit_id,
                    None => true,
                };
                if usable {
                    if record::is_deleted(&f.rec) {
                        continue;
                    }
                    return Ok(Some(self.row_of_entry(i, cols, &f)));
                }
            }
            let key = crate::row::lock::pk_of_sec_rec(&t, i, &f.rec);
            let mode = match &self.view {
                Some((v, own)) => crate::row::ReadMode::View(v, *own),
                None => crate::row::ReadMode::Latest,
            };
            let Some(row) = crate::row::get(inner, &t, &key, mode)? else {
                continue;
            };
            // The version read must still have this entry.
            if crate::row::lock::sec_matches(&t, i, &row, &f.rec)? {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}
