//! Window functions (MySQL 8.0, 14.20): ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST,
//! NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE, and the aggregates COUNT, SUM, AVG,
//! MIN, MAX, BIT_*, STD/VARIANCE over a window.
//!
//! INVARIANTS
//! - W1: windows are computed after grouping and HAVING, before DISTINCT, ORDER BY and LIMIT,
//!   over every row HAVING kept; the rows are not reordered: each gets its values by position.
//! - W2: within a partition rows are sorted by the window's ORDER BY (stably: ties keep their
//!   row order); peers are rows equal on every ORDER BY key. The default frame is RANGE
//!   BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (peers included) with an ORDER BY, the whole
//!   partition without one; ranking functions and LAG/LEAD ignore frames, as in MySQL.
//! - W3: an aggregate whose frame starts at UNBOUNDED PRECEDING is computed incrementally
//!   (frame ends never move back); any other frame is aggregated row by row.
//! - W4: a RANGE bound with an offset (N or INTERVAL n unit, PRECEDING or FOLLOWING) is found
//!   by binary search on the one ORDER BY value (the compiler refuses others: 3587), among the
//!   non-NULL values; a NULL current value's bound is its peer group, as in MySQL.
//!
//! Latch order: none (the statement's rows only).

use std::cmp::Ordering;

use innoxide_engine::Collation;
use innoxide_sql::ast::{FrameBound, RangeOffset};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{AggSpec, CExpr, Env};
use super::group::{group_key, AggState};
use super::select::cmp_nulls_first;

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
    pub partition: Vec<CExpr>,
    pub order: Vec<(CExpr, bool, Collation)>,
    /// None: the default frame (W2).
    pub frame: Option<Frame>,
}

impl WinSpec {
    /// Every expression the window evaluates.
    pub fn exprs(&self) -> impl Iterator<Item = &CExpr> {
        self.args
            .iter()
            .chain(&self.partition)
            .chain(self.order.iter().map(|o| &o.0))
    }
}

/// What the statement gives every window: its parameters, sql_mode and group_concat_max_len.
pub struct Ctx<'a> {
    pub params: &'a [Datum],
    pub mode: types::SqlMode,
    pub gc_max: u64,
}

/// The values of `specs` for each of `rows` ((row, aggregate values) after grouping), by row:
/// `out[row][spec]` (W1).
pub fn compute(
    specs: &[WinSpec],
    rows: &[(Vec<Datum>, Vec<Datum>)],
    cx: &Ctx<'_>,
    w: &mut Warnings,
) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut out = vec![Vec::with_capacity(specs.len()); rows.len()];
    for spec in specs {
        let vals = one(spec, rows, cx, w)?;
        for (o, v) in out.iter_mut().zip(vals) {
            o.push(v);
        }
    }
    Ok(out)
}

/// Per-row inputs of one window.
struct Input {
    part: Vec<u8>,
    keys: Vec<Datum>,
    args: Vec<Datum>,
}

fn one(
    spec: &WinSpec,
    rows: &[(Vec<Datum>, Vec<Datum>)],
    cx: &Ctx<'_>,
    w: &mut Warnings,
) -> Result<Vec<Datum>, SqlError> {
    let mut inputs = Vec::with_capacity(rows.len());
    for (r, a) in rows {
        let env = Env {
            row: r,
            aggs: a,
            wins: &[],
            params: cx.params,
            mode: cx.mode,
        };
        let mut part = Vec::new();
        for p in &spec.partition {
            group_key(&p.eval(&env, w)?, Collation::Utf8mb40900AiCi, &mut part);
        }
        let keys = spec
            .order
            .iter()
            .map(|o| o.0.eval(&env, w))
            .collect::<Result<_, _>>()?;
        let args = spec
            .args
            .iter()
            .map(|e| e.eval(&env, w))
            .collect::<Result<_, _>>()?;
        inputs.push(Input { part, keys, args });
    }
    let cmp_keys = |a: &Input, b: &Input| -> Ordering {
        for (i, (_, desc, coll)) in spec.order.iter().enumerate() {
            let o = cmp_nulls_first(&a.keys[i], &b.keys[i], *coll);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| {
        inputs[a]
            .part
            .cmp(&inputs[b].part)
            .then_with(|| cmp_keys(&inputs[a], &inputs[b]))
    });
    let mut out = vec![Datum::Null; rows.len()];
    let mut start = 0;
    while start < idx.len() {
        let mut end = start + 1;
        while end < idx.len() && inputs[idx[end]].part == inputs[idx[start]].part {
            end += 1;
        }
        let p = &idx[start..end];
        // Peer groups: first and last position of each position's group.
        let mut first = vec![0; p.len()];
        let mut last = vec![0; p.len()];
        for k in 1..p.len() {
            first[k] = if cmp_keys(&inputs[p[k - 1]], &inputs[p[k]]) == Ordering::Equal {
                first[k - 1]
            } else {
                k
            };
        }
        for k in (0..p.len()).rev() {
            last[k] = if k + 1 < p.len() && first[k + 1] == first[k] {
                last[k + 1]
            } else {
                k
            };
        }
        let part = Partition {
            rows: p,
            inputs: &inputs,
            first: &first,
            last: &last,
        };
        part.fill(spec, cx, &mut out, w)?;
        start = end;
    }
    Ok(out)
}

/// One partition's rows (positions into the statement's rows, in window order) and peer
/// groups.
struct Partition<'a> {
    rows: &'a [usize],
    inputs: &'a [Input],
    first: &'a [usize],
    last: &'a [usize],
}

impl Partition<'_> {
    fn arg(&self, k: usize, i: usize) -> &Datum {
        self.inputs[self.rows[k]]
            .args
            .get(i)
            .unwrap_or(&Datum::Null)
    }

    /// A constant count argument (NTILE, NTH_VALUE, LAG/LEAD offsets): 1210 unless it is a
    /// number of at least `min`.
    fn count(&self, k: usize, i: usize, min: u64, name: &str) -> Result<u64, SqlError> {
        let d = self.arg(k, i);
        let n = match d {
            Datum::Int(v) => u64::try_from(*v).ok(),
            Datum::UInt(v) => Some(*v),
            _ => None,
        };
        n.filter(|&n| n >= min)
            .ok_or_else(|| SqlError::new(ER_WRONG_ARGUMENTS, &[&name]))
    }

    /// The frame of position `k` as positions `lo..hi` (empty when lo >= hi).
    fn frame(
        &self,
        k: usize,
        spec: &WinSpec,
        ordered: bool,
        cx: &Ctx<'_>,
        w: &mut Warnings,
    ) -> Result<(usize, usize), SqlError> {
        let n = self.rows.len();
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
                FrameBound::ValuePreceding(off) => {
                    self.by_value(k, spec, off, true, is_start, cx, w)?
                }
                FrameBound::ValueFollowing(off) => {
                    self.by_value(k, spec, off, false, is_start, cx, w)?
                }
                b => self.by_rows(k, b, rows, is_start),
            })
        };
        let lo = at(start, true)?.min(n);
        let hi = at(end, false)?.min(n);
        Ok((lo, hi))
    }

    /// A ROWS bound, or UNBOUNDED / CURRENT ROW of a RANGE frame.
    fn by_rows(&self, k: usize, b: &FrameBound, rows: bool, is_start: bool) -> usize {
        let n = self.rows.len();
        {
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
                FrameBound::CurrentRow if is_start => self.first[k],
                FrameBound::CurrentRow => self.last[k] + 1,
                // Handled by `by_value`.
                FrameBound::ValuePreceding(_) | FrameBound::ValueFollowing(_) => k,
            }
        }
    }

    /// A RANGE bound with an offset: the first position (start) or the position after the
    /// last (end) whose ORDER BY value lies within `off` before (`preceding`) or after the
    /// current row's, in the window's order. A NULL value's bound is its peer group.
    #[allow(clippy::too_many_arguments)]
    fn by_value(
        &self,
        k: usize,
        spec: &WinSpec,
        off: &RangeOffset,
        preceding: bool,
        is_start: bool,
        cx: &Ctx<'_>,
        w: &mut Warnings,
    ) -> Result<usize, SqlError> {
        let (desc, coll) = match spec.order.first() {
            Some((_, desc, coll)) => (*desc, *coll),
            None => return Ok(if is_start { 0 } else { self.rows.len() }),
        };
        let key = |j: usize| &self.inputs[self.rows[j]].keys[0];
        let cur = key(k);
        if cur.is_null() {
            return Ok(if is_start {
                self.first[k]
            } else {
                self.last[k] + 1
            });
        }
        // Toward smaller values: PRECEDING in ascending order, FOLLOWING in descending.
        let down = preceding != desc;
        let target = match off.unit {
            None => {
                let d = Datum::from_literal_number(&off.value);
                if down {
                    types::sub(cur, &d, cx.mode, w)?
                } else {
                    types::add(cur, &d, cx.mode, w)?
                }
            }
            Some(unit) => {
                let n: i64 = off
                    .value
                    .trim()
                    .parse()
                    .map_err(|_| SqlError::new(ER_WRONG_ARGUMENTS, &[&"RANGE ... INTERVAL"]))?;
                let Some(dt) = types::to_datetime(cur, w) else {
                    return Ok(if is_start {
                        self.first[k]
                    } else {
                        self.last[k] + 1
                    });
                };
                let moved = types::add_interval(&dt, if down { -n } else { n }, unit);
                match (moved, cur) {
                    (Some(m), Datum::Date(_)) => Datum::Date(m.date),
                    (Some(m), _) => Datum::DateTime(m),
                    (None, _) => Datum::Null,
                }
            }
        };
        // Position of a value relative to the target, in the window's order.
        let ord = |j: usize| {
            let o = cmp_nulls_first(key(j), &target, coll);
            if desc {
                o.reverse()
            } else {
                o
            }
        };
        // NULL values (first ascending, last descending) are never in a range around a
        // number: the search runs over the non-NULL positions only.
        let n = self.rows.len();
        let (lo, hi) = if desc {
            (0, first_where(0, n, |j| key(j).is_null()))
        } else {
            (first_where(0, n, |j| !key(j).is_null()), n)
        };
        Ok(if is_start {
            first_where(lo, hi, |j| ord(j) != Ordering::Less)
        } else {
            first_where(lo, hi, |j| ord(j) == Ordering::Greater)
        })
    }

    fn fill(
        &self,
        spec: &WinSpec,
        cx: &Ctx<'_>,
        out: &mut [Datum],
        w: &mut Warnings,
    ) -> Result<(), SqlError> {
        let n = self.rows.len();
        let ordered = !spec.order.is_empty();
        let mut dense = 0u64;
        // W3: a running aggregate and how many rows it holds.
        let mut running: Option<(AggState, usize)> = None;
        for k in 0..n {
            let v = match &spec.func {
                WinFunc::RowNumber => Datum::UInt(k as u64 + 1),
                WinFunc::Rank => Datum::UInt(self.first[k] as u64 + 1),
                WinFunc::DenseRank => {
                    if self.first[k] == k {
                        dense += 1;
                    }
                    Datum::UInt(dense)
                }
                WinFunc::PercentRank => Datum::Double(if n > 1 {
                    self.first[k] as f64 / (n - 1) as f64
                } else {
                    0.0
                }),
                WinFunc::CumeDist => Datum::Double((self.last[k] + 1) as f64 / n as f64),
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
                        Some(j) => self.arg(j, 0).clone(),
                        None => self.arg(k, 2).clone(),
                    }
                }
                WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                    let (lo, hi) = self.frame(k, spec, ordered, cx, w)?;
                    let at = match spec.func {
                        WinFunc::FirstValue => Some(lo),
                        WinFunc::LastValue => hi.checked_sub(1),
                        _ => {
                            let nth = self.count(k, 1, 1, "nth_value")?;
                            lo.checked_add(usize::try_from(nth).unwrap_or(usize::MAX) - 1)
                        }
                    };
                    match at.filter(|&j| j >= lo && j < hi) {
                        Some(j) => self.arg(j, 0).clone(),
                        None => Datum::Null,
                    }
                }
                WinFunc::Agg(a) => {
                    let (lo, hi) = self.frame(k, spec, ordered, cx, w)?;
                    let value = |j: usize| match spec.args.first() {
                        Some(_) => self.arg(j, 0).clone(),
                        None => Datum::Int(1),
                    };
                    let st = if lo == 0 {
                        let (st, held) = running.get_or_insert_with(|| (AggState::new(a), 0));
                        while *held < hi {
                            st.add(a, value(*held), Vec::new(), cx.mode, w)?;
                            *held += 1;
                        }
                        st.clone()
                    } else {
                        let mut st = AggState::new(a);
                        for j in lo..hi.max(lo) {
                            st.add(a, value(j), Vec::new(), cx.mode, w)?;
                        }
                        st
                    };
                    st.finish(a, cx.mode, cx.gc_max, k + 1, w)?
                }
            };
            out[self.rows[k]] = v;
        }
        Ok(())
    }
}

/// The first position in `lo..hi` where `pred` holds (`hi` if none), for a `pred` that is
/// false then true along the range.
fn first_where(mut lo: usize, mut hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}
