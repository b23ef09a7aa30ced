//! Window functions (MySQL 8.0, 14.20): ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST,
//! NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE, and the aggregates COUNT, SUM, AVG,
//! MIN, MAX, BIT_*, STD/VARIANCE over a window.
//!
//! INVARIANTS
//! - W1: windows are computed after grouping and HAVING, before DISTINCT, ORDER BY and LIMIT,
//!   over every row HAVING kept; the rows come out in the last window's order (PARTITION BY
//!   values, ORDER BY values, arrival), as in MySQL, where only ORDER BY promises an order.
//! - W2: within a partition rows are sorted by the window's ORDER BY (stably: ties keep their
//!   row order); peers are rows equal on every ORDER BY key. The default frame is RANGE
//!   BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (peers included) with an ORDER BY, the whole
//!   partition without one; ranking functions and LAG/LEAD ignore frames, as in MySQL.
//! - W3: an aggregate whose frame starts at UNBOUNDED PRECEDING is computed incrementally
//!   (frame ends never move back); so is COUNT, or SUM or AVG of exact numbers, over any
//!   other frame that only moves on: the rows it enters are added and those it leaves taken
//!   back (`AggState::remove`). Any other frame is aggregated whole for each row.
//! - W4: a RANGE bound with an offset (N or INTERVAL n unit, PRECEDING or FOLLOWING) is found
//!   by binary search on the one ORDER BY value (the compiler refuses others: 3587), among the
//!   non-NULL values; a NULL current value's bound is its peer group, as in MySQL.
//! - W5: the stage holds a bounded amount whatever the row count: each window's rows go
//!   through a `Sorter` (sort_buffer_size, runs in tmpdir) by PARTITION BY values (each under
//!   its collation), ORDER BY values and arrival number, one partition at a time into a
//!   `RowBuf` (tmp_table_size, blocks in tmpdir beyond it), and on to the next window's sort
//!   with the value appended; the last window's values are computed as the caller reads the
//!   rows. Values for the next window are computed as a row leaves the previous one, so no
//!   row is ever held twice in memory.
//! - W6: peer groups are found as the partition is read in order: a row that starts one scans
//!   ahead to its end, so each row is compared with its neighbour a bounded number of times.
//!
//! Latch order: none (the statement's rows only).

use std::borrow::Cow;
use std::cmp::Ordering;

use innoxide_engine::Collation;
use innoxide_sql::ast::{FrameBound, RangeOffset};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{AggSpec, CExpr, Env};
use super::finish::TmpArea;
use super::group::AggState;
use super::rowbuf::RowBuf;
use super::select::cmp_nulls_first;
use super::sort::{SortKey, Sorted, Sorter};

/// What a window computes.
#[derive(Clone, Debug)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame (its argument is `WinSpec::args[0]`; none for COUNT(*)).
    Agg(AggSpec),
}

impl WinFunc {
    /// The function of a name, with its allowed argument counts.
    pub fn of(name: &str) -> Option<(WinFunc, std::ops::RangeInclusive<usize>)> {
        Some(match name {
            "row_number" => (WinFunc::RowNumber, 0..=0),
            "rank" => (WinFunc::Rank, 0..=0),
            "dense_rank" => (WinFunc::DenseRank, 0..=0),
            "percent_rank" => (WinFunc::PercentRank, 0..=0),
            "cume_dist" => (WinFunc::CumeDist, 0..=0),
            "ntile" => (WinFunc::Ntile, 1..=1),
            "lag" => (WinFunc::Lag, 1..=3),
            "lead" => (WinFunc::Lead, 1..=3),
            "first_value" => (WinFunc::FirstValue, 1..=1),
            "last_value" => (WinFunc::LastValue, 1..=1),
            "nth_value" => (WinFunc::NthValue, 2..=2),
            _ => return None,
        })
    }
}

/// ROWS or RANGE frame bounds.
#[derive(Clone, Debug)]
pub struct Frame {
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

/// One window function call of a SELECT.
#[derive(Clone, Debug)]
pub struct WinSpec {
    pub func: WinFunc,
    pub args: Vec<CExpr>,
    /// PARTITION BY, each value compared under its collation.
    pub partition: Vec<(CExpr, Collation)>,
    pub order: Vec<(CExpr, bool, Collation)>,
    /// None: the default frame (W2).
    pub frame: Option<Frame>,
}

impl WinSpec {
    /// Every expression the window evaluates.
    pub fn exprs(&self) -> impl Iterator<Item = &CExpr> {
        self.args
            .iter()
            .chain(self.partition.iter().map(|p| &p.0))
            .chain(self.order.iter().map(|o| &o.0))
    }
}

/// What the statement gives every window: its parameters, sql_mode, group_concat_max_len,
/// HAVING (which the rows pass before any window, W1) and where temporary rows go (W5).
pub struct Ctx<'a> {
    pub params: &'a [Datum],
    pub mode: types::SqlMode,
    pub gc_max: u64,
    pub having: Option<&'a CExpr>,
    pub tmp: &'a TmpArea,
}

/// The window stage of a SELECT (W5): rows go in with `push`, and come out of `finish` with
/// their window values.
pub(crate) struct Windows<'a> {
    specs: &'a [WinSpec],
    cx: Ctx<'a>,
    /// The first window's sort.
    sorter: Sorter,
    seq: u64,
}

/// A row's own part as it goes from window to window: its arrival number, the width of its
/// columns, its columns, its aggregate values, the window values computed so far
/// (docs/format/sort-run.md, "Row buffers").
type Flat = Vec<Datum>;

/// The width of a `Flat` row's columns (its second value).
fn width(flat: &[Datum]) -> usize {
    match flat[1] {
        Datum::UInt(n) => n as usize,
        _ => unreachable!("a row's width is an unsigned integer"),
    }
}

/// The values a window puts in front of each row it sorts: the PARTITION BY values, the
/// ORDER BY values, the arguments. The row's `Flat` follows them.
fn header(spec: &WinSpec) -> usize {
    spec.partition.len() + spec.order.len() + spec.args.len()
}

/// The sort of `spec`'s rows: by PARTITION BY values, ORDER BY values, arrival number (W2:
/// ties keep the rows' order whatever order the previous window left them in).
fn spec_sorter(spec: &WinSpec, tmp: &TmpArea) -> Sorter {
    let by_partition = spec.partition.iter().map(|(_, coll)| (false, *coll));
    let by_order = spec.order.iter().map(|(_, desc, coll)| (*desc, *coll));
    let mut dirs: Vec<SortKey> = by_partition
        .chain(by_order)
        .enumerate()
        .map(|(i, (desc, coll))| SortKey {
            desc,
            coll,
            from_proj: Some(i),
        })
        .collect();
    dirs.push(SortKey {
        desc: false,
        coll: Collation::Binary,
        from_proj: Some(header(spec)),
    });
    Sorter::new(dirs, &tmp.sort, None)
}

impl<'a> Windows<'a> {
    /// The stage for `specs` (at least one).
    pub(crate) fn new(specs: &'a [WinSpec], cx: Ctx<'a>) -> Windows<'a> {
        let sorter = spec_sorter(&specs[0], cx.tmp);
        Windows {
            specs,
            cx,
            sorter,
            seq: 0,
        }
    }

    /// Takes a row and its aggregate values, if HAVING keeps it (subqueries in HAVING are
    /// bound by the caller).
    pub(crate) fn push(
        &mut self,
        r: Vec<Datum>,
        a: Vec<Datum>,
        w: &mut Warnings,
    ) -> Result<(), SqlError> {
        if let Some(h) = self.cx.having {
            let env = Env {
                row: &r,
                aggs: &a,
                wins: &[],
                params: self.cx.params,
                mode: self.cx.mode,
            };
            if h.truth(&env, w)? != Some(true) {
                return Ok(());
            }
        }
        let mut flat = Vec::with_capacity(2 + r.len() + a.len() + self.specs.len());
        flat.push(Datum::UInt(self.seq));
        flat.push(Datum::UInt(r.len() as u64));
        flat.extend(r);
        flat.extend(a);
        self.seq += 1;
        push_to(&mut self.sorter, &self.specs[0], flat, 0, &self.cx, w)
    }

    /// Computes every window but the last, whose values come as the rows are read (W1).
    pub(crate) fn finish(self, w: &mut Warnings) -> Result<WinRows<'a>, SqlError> {
        let Windows {
            specs, cx, sorter, ..
        } = self;
        let mut sorted = sorter.finish()?;
        let mut buf = RowBuf::new(cx.tmp.budget, cx.tmp.sort.tmpdir.clone());
        let (last, before) = specs.split_last().expect("a window stage has windows");
        for (i, spec) in before.iter().enumerate() {
            let next_spec = &specs[i + 1];
            let mut next = spec_sorter(next_spec, cx.tmp);
            let h = header(spec);
            let mut pending = sorted.next_proj()?;
            while let Some(first) = pending.take() {
                pending = read_partition(&mut buf, spec, first, &mut sorted)?;
                let mut st = PartState::default();
                for k in 0..buf.len() {
                    let v = Partition::new(&mut buf, spec, &mut st).value(k, &cx, w)?;
                    let mut flat = buf.take_from(k, h)?;
                    flat.push(v);
                    push_to(&mut next, next_spec, flat, i + 1, &cx, w)?;
                }
            }
            sorted = next.finish()?;
        }
        buf.clear();
        Ok(WinRows {
            spec: last,
            n: specs.len(),
            cx,
            pending: sorted.next_proj()?,
            sorted,
            buf,
            st: PartState::default(),
            k: 0,
        })
    }
}

/// Reads the partition of `spec` that starts with `first` into `buf` (emptied first); the
/// first row of the next partition, if any.
fn read_partition(
    buf: &mut RowBuf,
    spec: &WinSpec,
    first: Vec<Datum>,
    sorted: &mut Sorted,
) -> Result<Option<Vec<Datum>>, SqlError> {
    buf.clear();
    let part: Vec<Datum> = first[..spec.partition.len()].to_vec();
    buf.push(first)?;
    loop {
        match sorted.next_proj()? {
            // Equal values are equal under any collation; others are compared under theirs.
            Some(r)
                if spec.partition.iter().enumerate().all(|(i, (_, coll))| {
                    r[i] == part[i] || cmp_nulls_first(&r[i], &part[i], *coll) == Ordering::Equal
                }) =>
            {
                buf.push(r)?
            }
            other => return Ok(other),
        }
    }
}

/// Evaluates `spec`'s PARTITION BY and ORDER BY values and arguments on `flat` (which holds
/// `done` window values) and hands the row to its sort.
fn push_to(
    sorter: &mut Sorter,
    spec: &WinSpec,
    flat: Flat,
    done: usize,
    cx: &Ctx<'_>,
    w: &mut Warnings,
) -> Result<(), SqlError> {
    let width = width(&flat);
    let mut row = Vec::with_capacity(header(spec) + flat.len());
    {
        let env = Env {
            row: &flat[2..2 + width],
            aggs: &flat[2 + width..flat.len() - done],
            wins: &[],
            params: cx.params,
            mode: cx.mode,
        };
        for (p, _) in &spec.partition {
            row.push(p.eval(&env, w)?);
        }
        for o in &spec.order {
            row.push(o.0.eval(&env, w)?);
        }
        for e in &spec.args {
            row.push(e.eval(&env, w)?);
        }
    }
    row.extend(flat);
    sorter.push(row, Vec::new())
}

/// The rows with their window values (W1), the last window computed as they are read.
pub(crate) struct WinRows<'a> {
    spec: &'a WinSpec,
    /// Windows computed, this one included.
    n: usize,
    cx: Ctx<'a>,
    /// The last window's sorted rows, and the first of the partition after `buf`'s.
    sorted: Sorted,
    pending: Option<Vec<Datum>>,
    buf: RowBuf,
    st: PartState,
    /// The next position of `buf` to hand out.
    k: usize,
}

impl WinRows<'_> {
    /// Whether a partition went to disk (Created_tmp_disk_tables; the sorts count
    /// Sort_merge_passes).
    pub(crate) fn spilled(&self) -> bool {
        self.buf.spilled()
    }

    /// The next row, its aggregate values and its window values.
    #[allow(clippy::type_complexity)]
    pub(crate) fn next(
        &mut self,
        w: &mut Warnings,
    ) -> Result<Option<(Vec<Datum>, Vec<Datum>, Vec<Datum>)>, SqlError> {
        if self.k == self.buf.len() {
            let Some(first) = self.pending.take() else {
                return Ok(None);
            };
            self.pending = read_partition(&mut self.buf, self.spec, first, &mut self.sorted)?;
            self.st = PartState::default();
            self.k = 0;
        }
        let k = self.k;
        self.k += 1;
        let v = Partition::new(&mut self.buf, self.spec, &mut self.st).value(k, &self.cx, w)?;
        // The row's own part is read no more: only keys and arguments are (B2 in rowbuf.rs).
        let mut row = self.buf.take_from(k, header(self.spec))?;
        let width = width(&row);
        let mut wins = row.split_off(row.len() - (self.n - 1));
        wins.push(v);
        let aggs = row.split_off(2 + width);
        row.drain(..2);
        Ok(Some((row, aggs, wins)))
    }
}

/// What a partition carries from one position to the next: the current peer group (its
/// first position and the position after its last, W6), DENSE_RANK's count, the running
/// aggregate with the rows it holds, and the sliding one with its frame (W3).
#[derive(Default)]
struct PartState {
    peer_first: usize,
    peer_end: usize,
    dense: u64,
    running: Option<(AggState, usize)>,
    sliding: Option<(AggState, usize, usize)>,
    /// A value the sliding aggregate could not take back was met: frames are aggregated
    /// whole from then on.
    no_slide: bool,
}

/// One partition of a window, read through its row buffer in window order (each row:
/// PARTITION BY values, ORDER BY values, arguments, then its own part).
struct Partition<'b> {
    buf: &'b mut RowBuf,
    spec: &'b WinSpec,
    st: &'b mut PartState,
    /// The row's first ORDER BY value and first argument.
    keys: usize,
    args: usize,
}

impl<'b> Partition<'b> {
    fn new(buf: &'b mut RowBuf, spec: &'b WinSpec, st: &'b mut PartState) -> Partition<'b> {
        Partition {
            buf,
            spec,
            st,
            keys: spec.partition.len(),
            args: spec.partition.len() + spec.order.len(),
        }
    }

    fn arg(&mut self, k: usize, i: usize) -> Result<Datum, SqlError> {
        if i >= self.spec.args.len() {
            return Ok(Datum::Null);
        }
        let at = self.args + i;
        Ok(self.buf.row(k)?[at].clone())
    }

    /// A constant count argument (NTILE, NTH_VALUE, LAG/LEAD offsets): 1210 unless it is a
    /// number of at least `min`.
    fn count(&mut self, k: usize, i: usize, min: u64, name: &str) -> Result<u64, SqlError> {
        let n = match self.arg(k, i)? {
            Datum::Int(v) => u64::try_from(v).ok(),
            Datum::UInt(v) => Some(v),
            _ => None,
        };
        n.filter(|&n| n >= min)
            .ok_or_else(|| SqlError::new(ER_WRONG_ARGUMENTS, &[&name]))
    }

    /// Whether rows `a` and `b` are peers (equal on every ORDER BY value).
    fn peers(&mut self, a: usize, b: usize) -> Result<bool, SqlError> {
        self.buf.load(a)?;
        self.buf.load(b)?;
        let (x, y) = (self.buf.get(a), self.buf.get(b));
        Ok(self.spec.order.iter().enumerate().all(|(i, o)| {
            cmp_nulls_first(&x[self.keys + i], &y[self.keys + i], o.2) == Ordering::Equal
        }))
    }

    /// Moves the current peer group to the one of position `k`, the next position read (W6).
    fn enter(&mut self, k: usize) -> Result<(), SqlError> {
        if k >= self.st.peer_end {
            self.st.peer_first = k;
            let mut end = k + 1;
            while end < self.buf.len() && self.peers(k, end)? {
                end += 1;
            }
            self.st.peer_end = end;
        }
        Ok(())
    }

    /// The frame of position `k` as positions `lo..hi` (empty when lo >= hi).
    fn frame(
        &mut self,
        k: usize,
        ordered: bool,
        cx: &Ctx<'_>,
        w: &mut Warnings,
    ) -> Result<(usize, usize), SqlError> {
        let n = self.buf.len();
        let spec = self.spec;
        let (rows, start, end) = match &spec.frame {
            Some(f) => (f.rows, &f.start, &f.end),
            None if ordered => (
                false,
                &FrameBound::UnboundedPreceding,
                &FrameBound::CurrentRow,
            ),
            None => (
                true,
                &FrameBound::UnboundedPreceding,
                &FrameBound::UnboundedFollowing,
            ),
        };
        let mut at = |b: &FrameBound, is_start: bool| -> Result<usize, SqlError> {
            Ok(match b {
                FrameBound::ValuePreceding(off) => self.by_value(k, off, true, is_start, cx, w)?,
                FrameBound::ValueFollowing(off) => self.by_value(k, off, false, is_start, cx, w)?,
                b => self.by_rows(k, b, rows, is_start),
            })
        };
        let lo = at(start, true)?.min(n);
        let hi = at(end, false)?.min(n);
        Ok((lo, hi))
    }

    /// A ROWS bound, or UNBOUNDED / CURRENT ROW of a RANGE frame.
    fn by_rows(&self, k: usize, b: &FrameBound, rows: bool, is_start: bool) -> usize {
        let n = self.buf.len();
        match *b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::Preceding(m) => {
                let m = usize::try_from(m).unwrap_or(usize::MAX);
                (k + usize::from(!is_start)).saturating_sub(m)
            }
            FrameBound::Following(m) => {
                let m = usize::try_from(m).unwrap_or(usize::MAX);
                k.saturating_add(m)
                    .saturating_add(usize::from(!is_start))
                    .min(n)
            }
            FrameBound::CurrentRow if rows => k + usize::from(!is_start),
            FrameBound::CurrentRow if is_start => self.st.peer_first,
            FrameBound::CurrentRow => self.st.peer_end,
            // Handled by `by_value`.
            FrameBound::ValuePreceding(_) | FrameBound::ValueFollowing(_) => k,
        }
    }

    /// The first ORDER BY value of position `j`.
    fn key(&mut self, j: usize) -> Result<Datum, SqlError> {
        let at = self.keys;
        Ok(self.buf.row(j)?[at].clone())
    }

    /// A RANGE bound with an offset: the first position (start) or the position after the
    /// last (end) whose ORDER BY value lies within `off` before (`preceding`) or after the
    /// current row's, in the window's order. A NULL value's bound is its peer group.
    fn by_value(
        &mut self,
        k: usize,
        off: &RangeOffset,
        preceding: bool,
        is_start: bool,
        cx: &Ctx<'_>,
        w: &mut Warnings,
    ) -> Result<usize, SqlError> {
        let (desc, coll) = match self.spec.order.first() {
            Some((_, desc, coll)) => (*desc, *coll),
            None => return Ok(if is_start { 0 } else { self.buf.len() }),
        };
        let peers = if is_start {
            self.st.peer_first
        } else {
            self.st.peer_end
        };
        let cur = self.key(k)?;
        if cur.is_null() {
            return Ok(peers);
        }
        // Toward smaller values: PRECEDING in ascending order, FOLLOWING in descending.
        let down = preceding != desc;
        let target = match off.unit {
            None => {
                let d = Datum::from_literal_number(&off.value);
                if down {
                    types::sub(&cur, &d, cx.mode, w)?
                } else {
                    types::add(&cur, &d, cx.mode, w)?
                }
            }
            Some(unit) => {
                let n: i64 = off
                    .value
                    .trim()
                    .parse()
                    .map_err(|_| SqlError::new(ER_WRONG_ARGUMENTS, &[&"RANGE ... INTERVAL"]))?;
                let Some(dt) = types::to_datetime(&cur, w) else {
                    return Ok(peers);
                };
                let moved = types::add_interval(&dt, if down { -n } else { n }, unit);
                match (moved, &cur) {
                    (Some(m), Datum::Date(_)) => Datum::Date(m.date),
                    (Some(m), _) => Datum::DateTime(m),
                    (None, _) => Datum::Null,
                }
            }
        };
        // NULL values (first ascending, last descending) are never in a range around a
        // number: the search runs over the non-NULL positions only.
        let n = self.buf.len();
        let (lo, hi) = if desc {
            (0, first_where(0, n, |j| Ok(self.key(j)?.is_null()))?)
        } else {
            (first_where(0, n, |j| Ok(!self.key(j)?.is_null()))?, n)
        };
        // Position of a value relative to the target, in the window's order.
        let mut ord = |j: usize| -> Result<Ordering, SqlError> {
            let o = cmp_nulls_first(&self.key(j)?, &target, coll);
            Ok(if desc { o.reverse() } else { o })
        };
        if is_start {
            first_where(lo, hi, |j| Ok(ord(j)? != Ordering::Less))
        } else {
            first_where(lo, hi, |j| Ok(ord(j)? == Ordering::Greater))
        }
    }

    /// The window's value at position `k`, the partition's positions being asked in order.
    fn value(mut self, k: usize, cx: &Ctx<'_>, w: &mut Warnings) -> Result<Datum, SqlError> {
        let spec = self.spec;
        let n = self.buf.len();
        let ordered = !spec.order.is_empty();
        self.enter(k)?;
        Ok({
            match &spec.func {
                WinFunc::RowNumber => Datum::UInt(k as u64 + 1),
                WinFunc::Rank => Datum::UInt(self.st.peer_first as u64 + 1),
                WinFunc::DenseRank => {
                    if self.st.peer_first == k {
                        self.st.dense += 1;
                    }
                    Datum::UInt(self.st.dense)
                }
                WinFunc::PercentRank => Datum::Double(if n > 1 {
                    self.st.peer_first as f64 / (n - 1) as f64
                } else {
                    0.0
                }),
                WinFunc::CumeDist => Datum::Double(self.st.peer_end as f64 / n as f64),
                WinFunc::Ntile => {
                    let buckets = self.count(k, 0, 1, "ntile")?;
                    let b = usize::try_from(buckets).unwrap_or(usize::MAX).min(n);
                    let (q, r) = (n / b, n % b);
                    let big = r * (q + 1);
                    let t = if k < big {
                        k / (q + 1)
                    } else {
                        r + (k - big) / q
                    };
                    Datum::UInt(t as u64 + 1)
                }
                WinFunc::Lag | WinFunc::Lead => {
                    let off = if spec.args.len() > 1 {
                        self.count(k, 1, 0, "lag/lead")?
                    } else {
                        1
                    };
                    let off = usize::try_from(off).unwrap_or(usize::MAX);
                    let j = match spec.func {
                        WinFunc::Lag => k.checked_sub(off),
                        _ => k.checked_add(off).filter(|&j| j < n),
                    };
                    match j {
                        Some(j) => self.arg(j, 0)?,
                        None => self.arg(k, 2)?,
                    }
                }
                WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                    let (lo, hi) = self.frame(k, ordered, cx, w)?;
                    let at = match spec.func {
                        WinFunc::FirstValue => Some(lo),
                        WinFunc::LastValue => hi.checked_sub(1),
                        _ => {
                            let nth = self.count(k, 1, 1, "nth_value")?;
                            lo.checked_add(usize::try_from(nth).unwrap_or(usize::MAX) - 1)
                        }
                    };
                    match at.filter(|&j| j >= lo && j < hi) {
                        Some(j) => self.arg(j, 0)?,
                        None => Datum::Null,
                    }
                }
                WinFunc::Agg(a) => {
                    let (lo, hi) = self.frame(k, ordered, cx, w)?;
                    let counted = spec.args.is_empty();
                    let value = |p: &mut Partition<'_>, j: usize| {
                        if counted {
                            Ok(Datum::Int(1))
                        } else {
                            p.arg(j, 0)
                        }
                    };
                    let st = if lo == 0 {
                        let (mut st, mut held) = self
                            .st
                            .running
                            .take()
                            .unwrap_or_else(|| (AggState::new(a), 0));
                        while held < hi {
                            st.add(
                                a,
                                Cow::Owned(value(&mut self, held)?),
                                Vec::new(),
                                cx.mode,
                                w,
                            )?;
                            held += 1;
                        }
                        self.st.running = Some((st.clone(), held));
                        st
                    } else {
                        let slid = match self.st.sliding.take() {
                            Some((mut st, from, to))
                                if !self.st.no_slide && from <= lo && to <= hi.max(lo) =>
                            {
                                let mut exact = true;
                                for j in from..lo.min(to) {
                                    if !st.remove(a, &value(&mut self, j)?, cx.mode, w)? {
                                        exact = false;
                                        break;
                                    }
                                }
                                if exact {
                                    for j in to.max(lo)..hi.max(lo) {
                                        st.add(
                                            a,
                                            Cow::Owned(value(&mut self, j)?),
                                            Vec::new(),
                                            cx.mode,
                                            w,
                                        )?;
                                    }
                                    Some(st)
                                } else {
                                    self.st.no_slide = true;
                                    None
                                }
                            }
                            _ => None,
                        };
                        let st = match slid {
                            Some(st) => st,
                            None => {
                                let mut st = AggState::new(a);
                                for j in lo..hi.max(lo) {
                                    st.add(
                                        a,
                                        Cow::Owned(value(&mut self, j)?),
                                        Vec::new(),
                                        cx.mode,
                                        w,
                                    )?;
                                }
                                st
                            }
                        };
                        if !self.st.no_slide {
                            self.st.sliding = Some((st.clone(), lo, hi.max(lo)));
                        }
                        st
                    };
                    st.finish(a, cx.mode, cx.gc_max, k + 1, w)?
                }
            }
        })
    }
}

/// The first position in `lo..hi` where `pred` holds (`hi` if none), for a `pred` that is
/// false then true along the range.
fn first_where(
    mut lo: usize,
    mut hi: usize,
    mut pred: impl FnMut(usize) -> Result<bool, SqlError>,
) -> Result<usize, SqlError> {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}
