//! GROUP BY: rows are aggregated as they come into a table of groups keyed by their
//! grouping values (`group_key`), and the groups come out one at a time (`Groups`).
//! (MySQL: an internal temporary table, in memory up to tmp_table_size, on disk beyond it.)
//!
//! INVARIANTS
//! - G1: every row of a group is aggregated in one place, so no partial aggregate is ever
//!   merged: a group created while the table was within its budget is in memory and every
//!   later row of it finds it there; a row of any other group goes to the spill, a `Sorter`
//!   keyed by the grouping key bytes, whose output brings each such group's rows together.
//! - G2: the table holds about min(tmp_table_size, max_heap_table_size) bytes of groups
//!   (first row, key, aggregate states when created); beyond that, new groups go to the spill
//!   (sort_buffer_size in memory, runs in tmpdir), which is aggregated one group at a time.
//!   A single group (no GROUP BY) never spills. What GROUP_CONCAT collects inside a group is
//!   not counted: without ORDER BY it keeps no part past group_concat_max_len (later parts
//!   would be cut), with ORDER BY see G7.
//! - G3: the groups come out in the order they first appeared (those in memory), then the
//!   spilled ones in key order; each group's rows are aggregated in arrival order (the sort
//!   keeps arrival order among equal keys), so a group's first row and an unordered
//!   GROUP_CONCAT are the same either way.
//! - G4: rows that come in grouping order (select.rs P4) make no table: the group being
//!   aggregated is finished and handed back when a row of another begins, in the order
//!   the groups come.
//! - G6: a DISTINCT aggregate (COUNT, SUM, AVG, GROUP_CONCAT ... DISTINCT) keeps the grouping
//!   keys of the values it took up to the temporary-table budget; beyond it a value whose key
//!   is not among them goes to a sort by key (with its ORDER BY keys), and at the end the first
//!   value of each key there is added: each distinct value is taken once, and the keys held
//!   never pass the budget (plus the sort's sort_buffer_size).
//! - G7: GROUP_CONCAT ... ORDER BY holds about twice group_concat_max_len of parts: beyond
//!   that it keeps, in order, only the parts up to the one that takes the text past the
//!   length (the result is cut there anyway, with its warning).
//! - G5: values are grouped under their expression's collation (`group_key`), so the groups
//!   are the ones an index in that collation keeps together.
//!
//! LOCKING: none (one statement's own state).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use innoxide_engine::Collation;
use innoxide_sql::error::*;
use innoxide_sql::types::{self, json, Datum, Warnings};

use super::expr::{AggKind, AggSpec, CExpr, Env};
use super::select::sort_by_keys;
use super::sort::{datum_bytes, SortArea, Sorted, Sorter};

/// Appends a grouping key for `v`: equal under `coll` ⇔ equal bytes.
pub fn group_key(v: &Datum, coll: Collation, out: &mut Vec<u8>) {
    match v {
        Datum::Null => out.push(0),
        // As the general case below gives, without making the text first.
        Datum::Int(n) => int_key(*n as f64, itoa::Buffer::new().format(*n), out),
        Datum::UInt(n) => int_key(*n as f64, itoa::Buffer::new().format(*n), out),
        Datum::Bytes(b) => {
            out.push(1);
            let k = coll.sort_key(&types::comparable(coll, b));
            out.extend((k.len() as u32).to_le_bytes());
            out.extend(k);
        }
        other => {
            out.push(2);
            let mut w = Warnings::default();
            let f = other.to_f64(&mut w);
            let t = other.to_text().unwrap_or_default();
            if matches!(
                other,
                Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Double(_)
            ) {
                out.extend(f.to_bits().to_le_bytes());
            }
            out.extend((t.len() as u32).to_le_bytes());
            out.extend(t);
        }
    }
}

/// Whether two values are the same one (so their `group_key`s are equal): of one kind and
/// equal, DECIMAL and DOUBLE aside (1.0 and 1.00, 0 and -0 are equal values with other keys).
fn same_value(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Decimal(_) | Datum::Double(_), _) => false,
        // (Datum's equality is of one kind: Int(1) is not UInt(1).)
        (a, b) => a == b,
    }
}

/// `group_key` of an integer: its value as a double, then its decimal text.
fn int_key(f: f64, text: &str, out: &mut Vec<u8>) {
    out.push(2);
    out.extend(f.to_bits().to_le_bytes());
    out.extend((text.len() as u32).to_le_bytes());
    out.extend(text.as_bytes());
}

/// A group made: its first row and its aggregates' values.
pub(crate) type Group = (Vec<Datum>, Vec<Datum>);

/// What one statement's grouping needs besides its expressions.
pub(crate) struct GroupCtx<'p> {
    pub params: &'p [Datum],
    pub mode: types::SqlMode,
    /// group_concat_max_len.
    pub gc_max: u64,
    /// The in-memory table's budget in bytes (G2).
    pub budget: u64,
    pub area: SortArea,
}

/// A key equal for rows equal column by column (DISTINCT, UNION, recursive CTEs), each
/// column compared under its collation in `colls` (utf8mb4_0900_ai_ci past its end).
pub fn row_key(r: &[Datum], colls: &[Collation]) -> Vec<u8> {
    let mut k = Vec::new();
    for (i, v) in r.iter().enumerate() {
        let coll = colls.get(i).copied().unwrap_or(Collation::Utf8mb40900AiCi);
        group_key(v, coll, &mut k);
    }
    k
}

/// GROUP BY fed one row at a time (module comment).
pub(crate) struct Grouper<'p> {
    group: &'p [(CExpr, Collation)],
    aggs: &'p [AggSpec],
    cx: GroupCtx<'p>,
    /// The rows come in grouping order (G4): the group being aggregated, with its key.
    current: Option<(Vec<u8>, Vec<Datum>, Vec<AggState>)>,
    ordered: bool,
    /// Groups finished so far (a GROUP_CONCAT warning names its group).
    done: usize,
    /// A buffer for the next row's key.
    scratch: Vec<u8>,
    /// Per group in memory, in the order groups first appear: its first row and the states
    /// of the aggregates.
    groups: Vec<(Vec<Datum>, Vec<AggState>)>,
    index: HashMap<Vec<u8>, usize>,
    bytes: u64,
    /// Rows of the groups that did not fit, each with its key last (G1).
    spill: Option<Sorter>,
}

impl<'p> Grouper<'p> {
    /// A grouping by `group` computing `aggs`; `ordered`: the rows come in grouping order.
    pub(crate) fn new(
        group: &'p [(CExpr, Collation)],
        aggs: &'p [AggSpec],
        cx: GroupCtx<'p>,
        ordered: bool,
    ) -> Self {
        Grouper {
            group,
            aggs,
            cx,
            current: None,
            ordered,
            done: 0,
            scratch: Vec::new(),
            groups: Vec::new(),
            index: HashMap::new(),
            bytes: 0,
            spill: None,
        }
    }

    /// Whether groups went to disk (Created_tmp_disk_tables).
    pub(crate) fn spilled(&self) -> bool {
        self.spill.as_ref().is_some_and(Sorter::spilled)
    }

    /// Takes a row; in grouping order (G4), returns the group it ended, finished: (first
    /// row, aggregate values).
    pub(crate) fn add(
        &mut self,
        r: Vec<Datum>,
        w: &mut Warnings,
    ) -> Result<Option<Group>, SqlError> {
        let (params, mode) = (self.cx.params, self.cx.mode);
        if self.group.is_empty() {
            // One group: no key to look up.
            if self.groups.is_empty() {
                let states = self.aggs.iter().map(AggState::new).collect();
                self.groups.push((r.clone(), states));
            }
            feed(self.aggs, &mut self.groups[0].1, &r, &self.cx, w)?;
            return Ok(None);
        }
        if let (true, Some((_, first, states))) = (self.ordered, self.current.as_mut()) {
            // Grouping columns equal to the group's first row's: the same group (equal values
            // make equal keys), known without making the key.
            let same = self.group.iter().all(|(g, _)| match g {
                CExpr::Col(p) => match (first.get(*p), r.get(*p)) {
                    (Some(a), Some(b)) => same_value(a, b),
                    _ => false,
                },
                _ => false,
            });
            if same {
                feed(self.aggs, states, &r, &self.cx, w)?;
                return Ok(None);
            }
        }
        // The key is made in a buffer kept between rows: only a new group keeps it.
        let mut key = std::mem::take(&mut self.scratch);
        key.clear();
        {
            let env = Env::new(&r, params, mode);
            for (g, coll) in self.group {
                match g {
                    CExpr::Col(p) if *p < r.len() => group_key(&r[*p], *coll, &mut key),
                    _ => group_key(&g.eval(&env, w)?, *coll, &mut key),
                }
            }
        }
        if self.ordered {
            if let Some((k, _, states)) = self.current.as_mut() {
                if *k == key {
                    self.scratch = key;
                    feed(self.aggs, states, &r, &self.cx, w)?;
                    return Ok(None);
                }
            }
            let mut states: Vec<AggState> = self.aggs.iter().map(AggState::new).collect();
            feed(self.aggs, &mut states, &r, &self.cx, w)?;
            return match self.current.replace((key, r, states)) {
                Some((_, row, states)) => {
                    self.done += 1;
                    let vals = finish_states(self.aggs, states, &self.cx, self.done, w)?;
                    Ok(Some((row, vals)))
                }
                None => Ok(None),
            };
        }
        if let Some(&gi) = self.index.get(&key) {
            self.scratch = key;
            feed(self.aggs, &mut self.groups[gi].1, &r, &self.cx, w)?;
            return Ok(None);
        }
        if self.bytes >= self.cx.budget {
            Sorter::push_keyed(&mut self.spill, &self.cx.area, r, key)?;
            return Ok(None);
        }
        let mut states: Vec<AggState> = self.aggs.iter().map(AggState::new).collect();
        feed(self.aggs, &mut states, &r, &self.cx, w)?;
        self.bytes += (r.iter().map(datum_bytes).sum::<usize>()
            + 2 * key.len()
            + 64
            + states.len() * std::mem::size_of::<AggState>()) as u64;
        self.index.insert(key, self.groups.len());
        self.groups.push((r, states));
        Ok(None)
    }

    /// The groups, to be read one at a time (G3); rows are `width` columns wide.
    pub(crate) fn finish(mut self, width: usize) -> Result<Groups<'p>, SqlError> {
        if self.groups.is_empty() && self.group.is_empty() {
            // Aggregates over no rows: one group of NULL columns.
            let states = self.aggs.iter().map(AggState::new).collect();
            self.groups.push((vec![Datum::Null; width], states));
        }
        if let Some((_, row, states)) = self.current {
            self.groups.push((row, states));
        }
        Ok(Groups {
            aggs: self.aggs,
            cx: self.cx,
            mem: self.groups.into_iter(),
            spilled: self.spill.map(Sorter::finish).transpose()?,
            ahead: None,
            n: self.done,
        })
    }
}

/// Adds row `r` to the states of a group's aggregates. A DISTINCT aggregate takes a value
/// whose grouping key it has not seen; past the temporary-table budget the keys seen stay as
/// they are and new values go to a sort by key, taken at the end (G6).
fn feed(
    aggs: &[AggSpec],
    states: &mut [AggState],
    r: &[Datum],
    cx: &GroupCtx<'_>,
    w: &mut Warnings,
) -> Result<(), SqlError> {
    let env = Env::new(r, cx.params, cx.mode);
    for (a, st) in aggs.iter().zip(states.iter_mut()) {
        // A signed integer argument (COUNT(*) counts 1s) to a plain aggregate: no value made.
        let plain = matches!(
            a.kind,
            AggKind::Count | AggKind::Sum | AggKind::Avg | AggKind::Min | AggKind::Max
        );
        if plain && st.seen.is_none() {
            let i = match &a.arg {
                None => Some(1),
                Some(e) => e.int_fast(&env),
            };
            if i.is_some_and(|i| st.add_int(a, i)) {
                continue;
            }
        }
        const ONE: &Datum = &Datum::Int(1);
        let v = match &a.arg {
            Some(e) => e.eval_cow(&env, w)?,
            None => Cow::Borrowed(ONE),
        };
        let mut keys = Vec::with_capacity(a.order.len());
        if !v.is_null() {
            for (k, _, _) in &a.order {
                keys.push(k.eval(&env, w)?);
            }
        }
        if let (Some(seen), false) = (st.seen.as_mut(), v.is_null()) {
            let mut k = Vec::new();
            group_key(&v, a.coll, &mut k);
            if seen.contains(&k) {
                continue;
            }
            if st.seen_bytes >= cx.budget {
                let mut row = Vec::with_capacity(1 + keys.len());
                row.push(v.into_owned());
                row.extend(keys);
                let slot = st.spill.0.get_or_insert_with(|| Box::new(None));
                Sorter::push_keyed(slot, &cx.area, row, k)?;
                continue;
            }
            st.seen_bytes += (k.len() + 48) as u64;
            seen.insert(k);
        }
        // GROUP_CONCAT without ORDER BY: the parts past group_concat_max_len would be cut, so
        // they are not kept (the result is still cut there, with its warning).
        if a.kind == AggKind::GroupConcat
            && a.order.is_empty()
            && !v.is_null()
            && st.text_len > cx.gc_max
        {
            st.count += 1;
            continue;
        }
        st.add(a, v, keys, cx.mode, w)?;
        // GROUP_CONCAT ... ORDER BY: past twice group_concat_max_len the parts are put in
        // order and those after the one that reaches the length dropped (G7).
        if a.kind == AggKind::GroupConcat
            && !a.order.is_empty()
            && st.text_len > 2 * cx.gc_max + 4096
        {
            st.keep_first_parts(a, cx.gc_max);
        }
    }
    Ok(())
}

/// The groups of a `Grouper`, one at a time: (first row, aggregate values).
pub(crate) struct Groups<'p> {
    aggs: &'p [AggSpec],
    cx: GroupCtx<'p>,
    mem: std::vec::IntoIter<(Vec<Datum>, Vec<AggState>)>,
    spilled: Option<Sorted>,
    /// The spilled row read past the end of the previous group (its key last).
    ahead: Option<Vec<Datum>>,
    /// Groups given so far (a GROUP_CONCAT warning names its group).
    n: usize,
}

impl Groups<'_> {
    pub(crate) fn next(&mut self, w: &mut Warnings) -> Result<Option<Group>, SqlError> {
        let (row, states) = match self.mem.next() {
            Some(g) => g,
            None => {
                let Some(spilled) = self.spilled.as_mut() else {
                    return Ok(None);
                };
                let first = match self.ahead.take() {
                    Some(r) => r,
                    None => match spilled.next_proj()? {
                        Some(r) => r,
                        None => return Ok(None),
                    },
                };
                let mut first = first;
                let key = first.pop();
                let mut states: Vec<AggState> = self.aggs.iter().map(AggState::new).collect();
                feed(self.aggs, &mut states, &first, &self.cx, w)?;
                while let Some(mut r) = spilled.next_proj()? {
                    let k = r.pop();
                    if k != key {
                        r.extend(k);
                        self.ahead = Some(r);
                        break;
                    }
                    feed(self.aggs, &mut states, &r, &self.cx, w)?;
                }
                (first, states)
            }
        };
        self.n += 1;
        let vals = finish_states(self.aggs, states, &self.cx, self.n, w)?;
        Ok(Some((row, vals)))
    }
}

/// The values of group number `n`'s aggregates.
fn finish_states(
    aggs: &[AggSpec],
    states: Vec<AggState>,
    cx: &GroupCtx<'_>,
    n: usize,
    w: &mut Warnings,
) -> Result<Vec<Datum>, SqlError> {
    states
        .into_iter()
        .zip(aggs)
        .map(|(s, a)| {
            s.with_spilled(a, cx.mode, w)?
                .finish(a, cx.mode, cx.gc_max, n, w)
        })
        .collect()
}

/// The values a DISTINCT aggregate sent to a sort once its keys filled the budget (G6):
/// boxed, so a state without them costs a pointer; the inner slot is `Sorter::push_keyed`'s.
pub struct DistinctSpill(Option<Box<Option<Sorter>>>);

impl Clone for DistinctSpill {
    /// Only a window's states are cloned (window.rs W3), and a window function takes no
    /// DISTINCT (1235): nothing is ever spilled in one.
    fn clone(&self) -> Self {
        assert!(
            self.0.is_none(),
            "a DISTINCT aggregate's state is never cloned"
        );
        DistinctSpill(None)
    }
}

/// Running state of one aggregate.
#[derive(Clone)]
pub struct AggState {
    count: i64,
    acc: Datum,
    /// SUM/AVG of integer arguments not yet added to `acc` (exact: i128 holds 2^64 values of
    /// 64 bits).
    int_sum: i128,
    /// SUM/AVG of DECIMAL arguments not yet added to `acc`: their sum times 10^scale, for
    /// the scale of the first (values of another scale, or past i128, go to `acc`).
    dec_sum: Option<(i128, u8)>,
    seen: Option<HashSet<Vec<u8>>>,
    /// The bytes `seen` holds, roughly, and the values that did not fit (G6).
    seen_bytes: u64,
    spill: DistinctSpill,
    /// GROUP_CONCAT: the bytes of the parts and separators kept.
    text_len: u64,
    /// GROUP_CONCAT: each value and its ORDER BY keys.
    parts: Vec<(Vec<u8>, Vec<Datum>)>,
    /// VARIANCE and friends: running mean and sum of squared deviations (Welford).
    mean: f64,
    m2: f64,
}

impl AggState {
    pub(crate) fn new(a: &AggSpec) -> Self {
        AggState {
            count: 0,
            acc: Datum::Null,
            int_sum: 0,
            dec_sum: None,
            seen: a.distinct.then(HashSet::new),
            seen_bytes: 0,
            spill: DistinctSpill(None),
            text_len: 0,
            parts: Vec::new(),
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// `add` of a signed integer, when it takes one without making a value (COUNT, SUM, AVG,
    /// MIN and MAX); false, having done nothing, otherwise.
    fn add_int(&mut self, a: &AggSpec, i: i64) -> bool {
        match a.kind {
            AggKind::Count => {}
            AggKind::Sum | AggKind::Avg => {
                self.int_sum += i128::from(i);
                if self.acc.is_null() {
                    self.acc = Datum::Decimal(types::Decimal::zero(0));
                }
            }
            AggKind::Min | AggKind::Max => match self.acc {
                Datum::Null => self.acc = Datum::Int(i),
                Datum::Int(ref mut m) => {
                    if (a.kind == AggKind::Min && i < *m) || (a.kind == AggKind::Max && i > *m) {
                        *m = i;
                    }
                }
                _ => return false,
            },
            _ => return false,
        }
        self.count += 1;
        true
    }

    pub(crate) fn add(
        &mut self,
        a: &AggSpec,
        v: Cow<'_, Datum>,
        keys: Vec<Datum>,
        mode: types::SqlMode,
        w: &mut Warnings,
    ) -> Result<(), SqlError> {
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match a.kind {
            AggKind::Count => {}
            AggKind::Sum | AggKind::Avg => {
                match *v {
                    Datum::Int(i) => self.int_sum += i128::from(i),
                    Datum::UInt(u) => self.int_sum += i128::from(u),
                    _ => {}
                }
                if matches!(*v, Datum::Int(_) | Datum::UInt(_)) {
                    if self.acc.is_null() {
                        self.acc = Datum::Decimal(types::Decimal::zero(0));
                    }
                    return Ok(());
                }
                if let Datum::Decimal(d) = &*v {
                    if self.add_unscaled(d, 1) {
                        return Ok(());
                    }
                }
                let v = match v.into_owned() {
                    v @ (Datum::Int(_) | Datum::UInt(_)) => Datum::Decimal(v.to_decimal(w)),
                    v @ (Datum::Decimal(_) | Datum::Double(_)) => v,
                    other => Datum::Double(other.to_f64(w)),
                };
                self.acc = if self.acc.is_null() {
                    v
                } else {
                    types::add(&self.acc, &v, mode, w)?
                };
            }
            AggKind::Min | AggKind::Max => {
                let better = self.acc.is_null() || {
                    let o = v.compare(&self.acc, a.coll);
                    if a.kind == AggKind::Min {
                        o == Some(Ordering::Less)
                    } else {
                        o == Some(Ordering::Greater)
                    }
                };
                if better {
                    self.acc = v.into_owned();
                }
            }
            AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => {
                let x = v.to_u64(w);
                let cur = match self.acc {
                    Datum::UInt(c) => c,
                    _ => {
                        if a.kind == AggKind::BitAnd {
                            u64::MAX
                        } else {
                            0
                        }
                    }
                };
                self.acc = Datum::UInt(match a.kind {
                    AggKind::BitAnd => cur & x,
                    AggKind::BitOr => cur | x,
                    _ => cur ^ x,
                });
            }
            AggKind::GroupConcat | AggKind::JsonArrayAgg | AggKind::JsonObjectAgg => {
                let text = v.to_text().unwrap_or_default();
                self.text_len += (text.len() + a.separator.len()) as u64;
                self.parts.push((text, keys))
            }
            AggKind::Variance { .. } => {
                let x = v.to_f64(w);
                let delta = x - self.mean;
                self.mean += delta / self.count as f64;
                self.m2 += delta * (x - self.mean);
            }
        }
        Ok(())
    }

    /// Adds (`sign` 1) or takes back (-1) `d` in `dec_sum`; false if it does not go there (a
    /// scale other than the first value's, or past i128), so the caller uses `acc`.
    fn add_unscaled(&mut self, d: &types::Decimal, sign: i128) -> bool {
        let Some(u) = d.unscaled() else {
            return false;
        };
        let (sum, scale) = self.dec_sum.get_or_insert((0, d.scale()));
        if *scale != d.scale() {
            return false;
        }
        match sum.checked_add(sign * u) {
            Some(n) => {
                *sum = n;
                // The sum is exact from here on; a first value gives SUM its non-NULL zero.
                if self.acc.is_null() {
                    self.acc = Datum::Decimal(types::Decimal::zero(d.scale()));
                }
                true
            }
            None => false,
        }
    }

    /// GROUP_CONCAT ... ORDER BY: sorts the parts (stably, so equal keys keep their arrival
    /// order, as the final sort does) and keeps those up to and including the first that takes
    /// the text past `max` bytes: no part after it can be in the result, whatever comes later
    /// (a later part sorts before or after them all the same) (G7).
    fn keep_first_parts(&mut self, a: &AggSpec, max: u64) {
        let dirs: Vec<(bool, Collation)> = a.order.iter().map(|o| (o.1, o.2)).collect();
        sort_by_keys(&mut self.parts, |p, i| &p.1[i], &dirs);
        let mut len = 0u64;
        let mut keep = self.parts.len();
        for (i, (p, _)) in self.parts.iter().enumerate() {
            // The text of parts 0..=i joined: already past `max`, so cut there.
            len += p.len() as u64;
            if len > max {
                keep = i + 1;
                break;
            }
            len += a.separator.len() as u64;
        }
        self.parts.truncate(keep);
        self.text_len = self
            .parts
            .iter()
            .map(|(p, _)| (p.len() + a.separator.len()) as u64)
            .sum();
    }

    /// Adds the values a DISTINCT aggregate spilled (G6): the first of each key, in key order.
    fn with_spilled(
        mut self,
        a: &AggSpec,
        mode: types::SqlMode,
        w: &mut Warnings,
    ) -> Result<Self, SqlError> {
        let Some(Some(sorter)) = self.spill.0.take().map(|b| *b) else {
            return Ok(self);
        };
        let mut sorted = sorter.finish()?;
        let mut last: Option<Datum> = None;
        while let Some(mut r) = sorted.next_proj()? {
            let key = r.pop();
            if key == last {
                continue;
            }
            last = key;
            let keys = r.split_off(1);
            let v = r.pop().unwrap_or(Datum::Null);
            self.add(a, Cow::Owned(v), keys, mode, w)?;
        }
        Ok(self)
    }

    /// Takes back a value `add` took (a window frame sliding on, window.rs W3): COUNT, and SUM
    /// and AVG of integers and decimals, whose arithmetic is exact. False, the state left as
    /// it was, for anything else (a DOUBLE would drift, as MySQL's windowing_use_high_precision
    /// avoids).
    pub(crate) fn remove(
        &mut self,
        a: &AggSpec,
        v: &Datum,
        mode: types::SqlMode,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        if v.is_null() {
            return Ok(true);
        }
        match (a.kind, v) {
            (AggKind::Count, _) => {}
            (AggKind::Sum | AggKind::Avg, Datum::Int(i)) => self.int_sum -= i128::from(*i),
            (AggKind::Sum | AggKind::Avg, Datum::UInt(u)) => self.int_sum -= i128::from(*u),
            (AggKind::Sum | AggKind::Avg, Datum::Decimal(d)) if self.add_unscaled(d, -1) => {}
            (AggKind::Sum | AggKind::Avg, Datum::Decimal(_)) if !self.acc.is_null() => {
                self.acc = types::sub(&self.acc, v, mode, w)?;
            }
            _ => return Ok(false),
        }
        self.count -= 1;
        if self.count == 0 {
            // An empty frame: SUM and AVG are NULL again.
            *self = AggState::new(a);
        }
        Ok(true)
    }

    /// The aggregate's value for group number `group` (GROUP_CONCAT is cut at
    /// group_concat_max_len bytes, on a character boundary, with warning 1260).
    pub(crate) fn finish(
        mut self,
        a: &AggSpec,
        mode: types::SqlMode,
        gc_max: u64,
        group: usize,
        w: &mut Warnings,
    ) -> Result<Datum, SqlError> {
        if self.int_sum != 0 {
            let ints = Datum::Decimal(types::Decimal::from_i128(self.int_sum));
            self.acc = types::add(&self.acc, &ints, mode, w)?;
        }
        if let Some((sum, scale)) = self.dec_sum {
            let decs = Datum::Decimal(types::Decimal::from_unscaled(sum, scale));
            self.acc = types::add(&self.acc, &decs, mode, w)?;
        }
        Ok(match a.kind {
            AggKind::Count => Datum::Int(self.count),
            AggKind::Avg => {
                if self.count == 0 {
                    Datum::Null
                } else {
                    types::div(&self.acc, &Datum::Int(self.count), mode, w)?
                }
            }
            AggKind::Variance { sample, root } => {
                let n = self.count - i64::from(sample);
                if n <= 0 {
                    Datum::Null
                } else {
                    let var = self.m2 / n as f64;
                    Datum::Double(if root { var.sqrt() } else { var })
                }
            }
            AggKind::BitAnd if self.count == 0 => Datum::UInt(u64::MAX),
            AggKind::BitOr | AggKind::BitXor if self.count == 0 => Datum::UInt(0),
            AggKind::JsonArrayAgg | AggKind::JsonObjectAgg if self.count == 0 => Datum::Null,
            AggKind::JsonArrayAgg | AggKind::JsonObjectAgg => {
                // The parts are this server's own JSON text (one-element arrays or
                // one-member objects), so they parse.
                let mut items = Vec::with_capacity(self.parts.len());
                let mut obj = json::Json::Object(Vec::new());
                for (p, _) in &self.parts {
                    match json::parse(p) {
                        Ok(json::Json::Array(a)) => items.extend(a),
                        Ok(json::Json::Object(m)) => {
                            for (k, v) in m {
                                obj.insert_member(k, v);
                            }
                        }
                        _ => {}
                    }
                }
                let j = if a.kind == AggKind::JsonArrayAgg {
                    json::Json::Array(items)
                } else {
                    obj
                };
                Datum::Bytes(j.to_text().into_bytes())
            }
            AggKind::GroupConcat => {
                if self.count == 0 {
                    Datum::Null
                } else {
                    if !a.order.is_empty() {
                        let dirs: Vec<(bool, Collation)> =
                            a.order.iter().map(|o| (o.1, o.2)).collect();
                        sort_by_keys(&mut self.parts, |p, i| &p.1[i], &dirs);
                    }
                    let mut v = Vec::new();
                    for (i, (p, _)) in self.parts.iter().enumerate() {
                        if i > 0 {
                            v.extend_from_slice(&a.separator);
                        }
                        v.extend_from_slice(p);
                    }
                    let max = usize::try_from(gc_max).unwrap_or(usize::MAX);
                    if v.len() > max {
                        let mut cut = max;
                        while cut > 0 && (v[cut] & 0xC0) == 0x80 {
                            cut -= 1;
                        }
                        v.truncate(cut);
                        w.warn(ER_CUT_VALUE_GROUP_CONCAT, &[&group]);
                    }
                    Datum::Bytes(v)
                }
            }
            _ => self.acc,
        })
    }
}
