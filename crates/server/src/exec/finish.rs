//! The last stage of a SELECT: HAVING, the projection, DISTINCT, ORDER BY and LIMIT, and the
//! way out (to the client's sink as the rows are made, or kept for the caller).
//!
//! INVARIANTS
//! - F1: the stage holds a bounded amount whatever the row count: DISTINCT keeps the keys of
//!   the rows it has passed up to the temporary-table budget (min(tmp_table_size,
//!   max_heap_table_size)) and sends rows it has not seen to a sort by their key beyond it
//!   (`Dedup`, which passes them on once the input ends); ORDER BY goes through a `Sorter`
//!   (sort_buffer_size, runs in tmpdir), which keeps only the first offset + limit rows under
//!   a LIMIT; anything else goes straight to the sink. Only rows for a caller without a sink
//!   (a subquery in an expression: IN, EXISTS, a scalar) are kept whole, after LIMIT; INSERT
//!   ... SELECT and a derived table give a `RowBuf` as the sink (rowbuf.rs), and the parts of
//!   a UNION ALL go to the sink one after another (select.rs `union_parts`).
//! - F2: rows reach the sink after OFFSET and up to LIMIT (and sql_select_limit); the columns
//!   go with the first row or at the end, so an error before any row comes alone.
//! - F3: of equal rows DISTINCT passes the first to arrive: every later one finds its key in
//!   memory, or goes to the spill, where equal keys come together in arrival order and only
//!   the first is kept. A row is never both passed at once and spilled.
//! - F4: ORDER BY keys and HAVING are evaluated before the projection takes the columns only
//!   it reads (`moved`) out of the row.
//! - F5: DISTINCT compares each column under its collation; when the rows come with equal
//!   ones together (select.rs P4), with the previous row only.
//!
//! LOCKING: none (one statement's own state).

use std::collections::HashSet;

use innoxide_engine::Collation;
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{CExpr, Env};
use super::group::row_key;
use super::sort::{SortArea, SortKey, Sorted, Sorter};
use super::{Column, RowSink};

/// A row's projection and the values of its ORDER BY keys not in it.
type Projected = (Vec<Datum>, Vec<Datum>);

/// Where finished rows go (F2): the client's sink, or a vector for the caller.
pub(crate) struct Out<'s> {
    sink: Option<&'s mut (dyn RowSink + 'static)>,
    /// The columns, until they are sent.
    header: Option<Vec<Column>>,
    kept: Vec<Vec<Datum>>,
    skip: u64,
    left: u64,
    sent: u64,
}

impl<'s> Out<'s> {
    /// Rows after `offset`, at most `limit`, to `sink` (with its row cap) if there is one.
    pub(crate) fn new(
        sink: Option<(&'s mut (dyn RowSink + 'static), u64)>,
        columns: impl FnOnce() -> Vec<Column>,
        offset: u64,
        limit: Option<u64>,
    ) -> Out<'s> {
        let limit = limit.unwrap_or(u64::MAX);
        let (sink, left, header) = match sink {
            Some((s, cap)) => (Some(s), limit.min(cap), Some(columns())),
            None => (None, limit, None),
        };
        Out {
            sink,
            header,
            kept: Vec::new(),
            skip: offset,
            left,
            sent: 0,
        }
    }

    /// Sends a finished row after OFFSET; false once no more are wanted (LIMIT).
    pub(crate) fn send(&mut self, proj: Vec<Datum>) -> Result<bool, SqlError> {
        if self.left == 0 {
            return Ok(false);
        }
        if self.skip > 0 {
            self.skip -= 1;
            return Ok(true);
        }
        match self.sink.as_mut() {
            Some(sink) => {
                if let Some(cols) = self.header.take() {
                    sink.begin(&cols)?;
                }
                sink.row_owned(proj)?;
                self.sent += 1;
            }
            None => self.kept.push(proj),
        }
        self.left -= 1;
        Ok(self.left > 0)
    }

    /// The rows kept, or none and the number sent to the sink.
    fn end(mut self) -> Result<(Vec<Vec<Datum>>, Option<u64>), SqlError> {
        match self.sink.as_mut() {
            Some(sink) => {
                if let Some(cols) = self.header.take() {
                    sink.begin(&cols)?;
                }
                Ok((Vec::new(), Some(self.sent)))
            }
            None => Ok((self.kept, None)),
        }
    }
}

/// What the last stage does, from the plan.
pub(crate) struct Shape<'p> {
    pub having: Option<&'p CExpr>,
    pub items: &'p [(CExpr, Column)],
    /// Per item, the row position it is taken from (F4).
    pub moved: &'p [Option<usize>],
    pub order: &'p [(CExpr, bool, Collation)],
    /// Whether the rows still need ORDER BY's sort (they may come in its order).
    pub sort: bool,
    pub distinct: bool,
    /// Equal rows come one after another (select.rs P4): DISTINCT compares each row with the
    /// one before only.
    pub distinct_in_order: bool,
    /// The first rows wanted: offset + limit, when there is a LIMIT.
    pub first: Option<u64>,
}

/// Where a statement's spills go: the temporary-table budget in bytes and the sort area.
pub(crate) struct TmpArea {
    pub budget: u64,
    pub sort: SortArea,
}

/// The last stage (module comment).
pub(crate) struct Finish<'p, 's> {
    having: Option<&'p CExpr>,
    items: &'p [(CExpr, Column)],
    moved: &'p [Option<usize>],
    /// Every item is the row's column at its own position (`SELECT *`): the row is the
    /// projection, cut to its width.
    identity: bool,
    order: &'p [(CExpr, bool, Collation)],
    /// Per ORDER BY key, the projection column holding it (not evaluated or kept twice).
    order_src: Vec<Option<usize>>,
    params: &'p [Datum],
    mode: types::SqlMode,
    dedup: Option<Dedup>,
    sorter: Option<Sorter>,
    out: Out<'s>,
}

impl<'p, 's> Finish<'p, 's> {
    pub(crate) fn new(
        shape: Shape<'p>,
        params: &'p [Datum],
        mode: types::SqlMode,
        tmp: &TmpArea,
        out: Out<'s>,
    ) -> Finish<'p, 's> {
        let order_src: Vec<Option<usize>> = shape
            .order
            .iter()
            .map(|(c, _, _)| projected_column(c, shape.items))
            .collect();
        let sorter = (shape.sort && !shape.order.is_empty()).then(|| {
            let keys = shape
                .order
                .iter()
                .zip(&order_src)
                .map(|((_, desc, coll), src)| SortKey {
                    desc: *desc,
                    coll: *coll,
                    from_proj: *src,
                })
                .collect();
            let first = shape
                .first
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
            Sorter::new(keys, &tmp.sort, first)
        });
        Finish {
            having: shape.having,
            items: shape.items,
            moved: shape.moved,
            identity: shape.moved.len() == shape.items.len()
                && shape.moved.iter().enumerate().all(|(i, m)| *m == Some(i)),
            order: shape.order,
            order_src,
            params,
            mode,
            dedup: shape.distinct.then(|| Dedup {
                colls: shape.items.iter().map(|i| i.1.ety.collation()).collect(),
                in_order: shape.distinct_in_order,
                last: None,
                seen: HashSet::new(),
                bytes: 0,
                budget: tmp.budget,
                area: tmp.sort.clone(),
                width: shape.items.len(),
                spill: None,
            }),
            sorter,
            out,
        }
    }

    /// Takes a row (with its aggregate and window values); false once no more are wanted.
    pub(crate) fn take(
        &mut self,
        mut r: Vec<Datum>,
        aggs: &[Datum],
        wins: &[Datum],
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        let env = Env {
            row: &r,
            aggs,
            wins,
            params: self.params,
            mode: self.mode,
        };
        if let Some(h) = self.having {
            if h.truth(&env, w)? != Some(true) {
                return Ok(true);
            }
        }
        let mut keys = Vec::new();
        if self.sorter.is_some() {
            for ((c, _, _), src) in self.order.iter().zip(&self.order_src) {
                if src.is_none() {
                    keys.push(c.eval(&env, w)?);
                }
            }
        }
        let proj = if self.identity && r.len() >= self.items.len() {
            r.truncate(self.items.len());
            r
        } else {
            // Evaluated items first (they read the row), then one pass that moves the rest
            // out of it: no placeholder written and overwritten per column.
            let mut evaluated = Vec::new();
            for ((c, _), m) in self.items.iter().zip(self.moved) {
                if m.is_none() {
                    evaluated.push(c.eval(&env, w)?);
                }
            }
            let mut evaluated = evaluated.into_iter();
            let mut proj = Vec::with_capacity(self.items.len());
            for m in self.moved {
                proj.push(match m {
                    Some(p) => r
                        .get_mut(*p)
                        .map_or(Datum::Null, |v| std::mem::replace(v, Datum::Null)),
                    None => evaluated.next().unwrap_or(Datum::Null),
                });
            }
            proj
        };
        match self.dedup.as_mut() {
            Some(d) => match d.admit(proj, keys)? {
                Some((p, k)) => self.pass(p, k),
                None => Ok(true),
            },
            None => self.pass(proj, keys),
        }
    }

    /// A row past DISTINCT: to the sort, or out.
    fn pass(&mut self, proj: Vec<Datum>, keys: Vec<Datum>) -> Result<bool, SqlError> {
        match self.sorter.as_mut() {
            Some(s) => {
                s.push(proj, keys)?;
                Ok(true)
            }
            None => self.out.send(proj),
        }
    }

    /// Whether DISTINCT went to disk (Created_tmp_disk_tables).
    pub(crate) fn spilled(&self) -> bool {
        self.dedup
            .as_ref()
            .and_then(|d| d.spill.as_ref())
            .is_some_and(Sorter::spilled)
    }

    /// Passes on what was held back (DISTINCT's spill, the sort): the rows kept, or none and
    /// the number sent to the sink.
    pub(crate) fn end(mut self) -> Result<(Vec<Vec<Datum>>, Option<u64>), SqlError> {
        let mut more = true;
        if let Some(mut spilled) = self.dedup.take().and_then(Dedup::finish).transpose()? {
            while more {
                match spilled.next()? {
                    Some((p, k)) => more = self.pass(p, k)?,
                    None => break,
                }
            }
        }
        if let Some(s) = self.sorter.take() {
            let mut sorted = s.finish()?;
            while more {
                match sorted.next_proj()? {
                    Some(p) => more = self.out.send(p)?,
                    None => break,
                }
            }
        }
        self.out.end()
    }
}

/// The position in the projection `items` of ORDER BY key `c` when it is a selected column
/// (read from there, not evaluated or kept twice).
pub(crate) fn projected_column(c: &CExpr, items: &[(CExpr, Column)]) -> Option<usize> {
    match c {
        CExpr::Col(p) => items
            .iter()
            .position(|(i, _)| matches!(i, CExpr::Col(q) if q == p)),
        _ => None,
    }
}

/// DISTINCT (F1, F3).
struct Dedup {
    /// Each column's collation (what equal means).
    colls: Vec<Collation>,
    /// Equal rows are adjacent: only the previous row's key is kept (`last`), no set.
    in_order: bool,
    last: Option<Vec<u8>>,
    seen: HashSet<Vec<u8>>,
    bytes: u64,
    budget: u64,
    area: SortArea,
    /// Columns of the projection (the ORDER BY keys follow them in a spilled row).
    width: usize,
    /// Rows not seen once the set was full: projection, ORDER BY keys, DISTINCT key last.
    spill: Option<Sorter>,
}

impl Dedup {
    /// The row if it is the first of its kind and the set holds it; None if it is a repeat
    /// or was spilled.
    fn admit(&mut self, proj: Vec<Datum>, keys: Vec<Datum>) -> Result<Option<Projected>, SqlError> {
        let k = row_key(&proj, &self.colls);
        if self.in_order {
            if self.last.as_ref() == Some(&k) {
                return Ok(None);
            }
            self.last = Some(k);
            return Ok(Some((proj, keys)));
        }
        if self.seen.contains(&k) {
            return Ok(None);
        }
        if self.bytes < self.budget {
            self.bytes += 2 * k.len() as u64 + 48;
            self.seen.insert(k);
            return Ok(Some((proj, keys)));
        }
        let mut row = proj;
        row.extend(keys);
        Sorter::push_keyed(&mut self.spill, &self.area, row, k)?;
        Ok(None)
    }

    /// The spilled rows, the first of each key, if any were spilled.
    fn finish(self) -> Option<Result<Spilled, SqlError>> {
        let width = self.width;
        self.spill.map(|s| {
            Ok(Spilled {
                sorted: s.finish()?,
                last: None,
                width,
            })
        })
    }
}

/// DISTINCT's spilled rows in key order, repeats dropped.
struct Spilled {
    sorted: Sorted,
    last: Option<Datum>,
    width: usize,
}

impl Spilled {
    fn next(&mut self) -> Result<Option<Projected>, SqlError> {
        while let Some(mut r) = self.sorted.next_proj()? {
            let k = r.pop();
            if k.is_some() && k == self.last {
                continue;
            }
            self.last = k;
            let keys = r.split_off(self.width);
            return Ok(Some((r, keys)));
        }
        Ok(None)
    }
}
