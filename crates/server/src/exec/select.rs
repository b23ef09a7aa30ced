//! SELECT: access-path choice for each table (primary key or secondary index for equality,
//! IN and range predicates; a full scan only when nothing applies), nested-loop joins with
//! index lookups on the inner table, USING/NATURAL joins, grouping, DISTINCT, ORDER BY and
//! LIMIT; SELECT ... INTO @variables.
//!
//! INVARIANTS
//! - S1: an access path only narrows what is read; every fetched row is still checked
//!   against the whole WHERE (and ON) condition, so a key value that converts inexactly to
//!   the column type makes the planner skip that predicate, never return a wrong row.
//! - S2: a locking read (FOR UPDATE / FOR SHARE, and the reads of UPDATE and DELETE) locks
//!   through the engine's locking calls, which apply InnoDB's per-isolation locking rules.
//! - S3: WHERE conjuncts holding correlated subqueries (`CExpr::Sub`) are tested once the join
//!   is done, with their subqueries bound per row (`Session::bind_subs`); every other
//!   expression holding one is bound right before it is evaluated. ON conditions may not hold
//!   one (1235): they are tested inside the engine's scans, where no query can run.
//! - S4: `*` lists a USING/NATURAL pair's column once, first (`JoinColumns`); the hidden
//!   column of the pair is still reachable qualified.
//! - S5: among several usable key paths (or a secondary index range against the full scan),
//!   the one reading the fewest estimated rows is taken (`cheapest`), the estimates coming
//!   from the table statistics (equalities) and the ends of each key range (ranges;
//!   innoxide_engine::stats); a single path that is not a secondary-index range is taken with
//!   no estimate. By S1 any choice returns the same rows.
//! - S6: a top-level SELECT sends its rows to the session's `RowSink` as the last stage
//!   (finish.rs: HAVING, projection, DISTINCT, ORDER BY, LIMIT) makes them, after OFFSET and
//!   up to LIMIT (and sql_select_limit). When nothing needs the joined rows all first (no
//!   grouping, window, correlated subquery, or S7 cut), they go to the last stage as the last
//!   table produces them: the result is never held whole.
//! - S7: ORDER BY ... LIMIT over one table read without locks scans only the primary key and
//!   the columns WHERE and ORDER BY use, keeps the first offset + limit rows, then reads
//!   those again whole by their key (`fetch_whole`) in the same read view, so they are the
//!   versions the scan saw (READ UNCOMMITTED, which has no view, tests WHERE again). The
//!   first rows are kept a batch at a time (`keep_first`); when ORDER BY names columns alone,
//!   a row that does not come before the last one kept so far cannot be among the first and
//!   is dropped as it comes (`JoinOut::cutoff`; equal keys: the earlier row comes first).
//! - S8: ORDER BY sorts with a `sort::Sorter` (sort_buffer_size in memory, sorted runs in
//!   tmpdir beyond it; under LIMIT only the first offset + limit rows are kept), GROUP BY and
//!   DISTINCT hold at most the temporary-table budget and spill to a sort beyond it
//!   (group.rs G2, finish.rs F1), window functions sort and buffer theirs within the same
//!   limits (window.rs W5), and a derived table's rows go to a row buffer (rowbuf.rs, in
//!   tmpdir beyond the budget): no input size makes a SELECT hold its rows in memory.
//! - S9: the nested-loop join is pipelined: each level pulls its table's rows one at a time
//!   (`open_datums`, `pull_into`) and hands the joined rows to the next level in batches of
//!   JOIN_BATCH, so no table's rows are held whole; a RIGHT JOIN level needs every row
//!   before it (S11), and a locking range read holds the rows it locked. A consistent read
//!   of a range decodes its rows straight from the page into SQL values (`DatumRows`, the
//!   engine's RowMaker): no engine values are made for them.
//! - S10: rows that need a subquery bound per row (WHERE's, grouping's, or, without
//!   grouping, the select list's, HAVING's and ORDER BY's) gather at the last level and go on
//!   JOIN_BATCH at a time while the join reads on (`drain`), so they are not held whole either;
//!   only ORDER BY ... LIMIT's first rows (S7) wait for the join's end.
//! - S11: a RIGHT JOIN level pairs each row of its table (read whole into a row buffer) with
//!   every row before it, so the levels before the last RIGHT JOIN run once each and hand
//!   their rows on whole, gathered in a row buffer (`NextRows`: tmp_table_size in memory,
//!   tmpdir beyond); such a level runs even when no row reaches it, as its table's rows then
//!   come out NULL-extended. The levels after it batch as in S9.
//! - S12: a JSON_TABLE level (jsontable.rs) whose document reads no earlier FROM item makes
//!   its rows once per execution, into a row buffer joined as a derived table's (by hash on
//!   equalities); one whose document does (LATERAL, never the right side of a RIGHT JOIN:
//!   3668) evaluates it for each row before it and pairs the rows as they are made.
//! - P1: a `SelectPlan` holds everything compiled from the statement and the catalog (tables,
//!   compiled expressions, used columns); what depends on the parameters (access paths, LIMIT
//!   values) is decided by `run_select` at each execution.
//! - P2: the sort is skipped only when the first table is read along a key whose order is
//!   the ORDER BY's (`scan_order`: columns of that table only, one direction, the key's
//!   columns after those fixed by equality; never under GROUP BY or a RIGHT JOIN), and the
//!   nested-loop join keeps the first table's row order.
//! - P3: a kept plan runs again only if its compilation folded no session value
//!   (`Session::folds` unchanged, no warning, base tables only) and `plan_valid` finds the
//!   same sql_mode, database and collation, parameters bound with the same types (a `?` is
//!   typed by its value), the privileges still held and each table the
//!   same `Arc<SqlTable>` the catalog hands out (DDL replaces it).
//! - P4: GROUP BY over columns of the first table only (nothing to bind per row, no window)
//!   asks for the first table's rows in the grouping columns' order, ORDER BY's first when it
//!   names only grouping columns. When an index gives that order, a group's rows come one
//!   after another (a join keeps the first table's order) and each group is finished as the
//!   next begins, with no table of groups (group.rs G4); then LIMIT stops the reading when
//!   the ORDER BY is that order too, or absent. DISTINCT over columns of the first table only
//!   asks for their order the same way and then compares each row with the previous one
//!   (finish.rs F5).
//! - S13: a query of MIN and MAX of one table's columns alone, read without locks, whose
//!   WHERE holds only equalities on the key parts before an aggregate's column in some index
//!   and bounds on the column, reads for each aggregate the first row of that index range in
//!   its direction, past the column's NULLs (`min_max_rows`): MIN and MAX over those rows,
//!   each tested against WHERE (S1), are those over the table. EXPLAIN: "Select tables
//!   optimized away", or "No matching min/max row" when no row passes WHERE.
//! - S14: GROUP BY or DISTINCT over one table's columns whose rows matter only through the
//!   distinct values of some columns (grouping, DISTINCT, COUNT/SUM/AVG(DISTINCT) arguments)
//!   and the MIN/MAX of others, read without locks, may read an index whose first key parts
//!   hold those columns loosely (`Access::Loose`, `loose_access`): the first row of each
//!   distinct value of those parts, found by a search past the previous one, plus the
//!   group's first row with a value in the next key part (MIN) and its last row (MAX).
//!   Every other row of a group gives the same distinct values and no lower MIN or higher
//!   MAX, and WHERE may read only those key parts (a group passes or fails it whole), so
//!   grouping these rows gives what grouping all of them does. Taken when the index holds
//!   every column the statement reads and its statistics put LOOSE_GROUP_ROWS rows or more
//!   in a group; EXPLAIN: "Using index for group-by".
//! - S15: in a join, a WHERE conjunct of columns, constants and operators alone that reads
//!   only the tables up to a level before the last, all inner-joined, is tested at that level
//!   with its ON condition instead of at the end (`push_where`): an inner join's ON and WHERE
//!   filter the same rows, and such a conjunct answers the same at any level, so the rows it
//!   rejects are dropped before they are joined on. Not past a LEFT JOIN's table (its rows
//!   may come NULL-extended) nor with a RIGHT JOIN (which pairs every row).
//! - S16: base tables joined by inner joins alone (no LEFT, RIGHT or STRAIGHT_JOIN, no USING
//!   or NATURAL, at most JOIN_REORDER_MAX of them) are read in the order that statistics say
//!   reads the fewest rows (`join_order`: rows per access through the longest index prefix
//!   that constants and the tables before fix, a hash join's table once, a tenth or a third
//!   of a table's rows kept per other condition on it), when that order reads JOIN_REORDER
//!   times fewer than FROM's; the ON conditions then join WHERE (the same rows for inner
//!   joins) and `*` still lists the tables' columns in FROM order. EXPLAIN shows the order read.
//! - S1 also bounds which conditions become key ranges: a string column compared with a
//!   number or a date, or in another collation than its own (COLLATE), is not one (equal
//!   values lie apart in its index).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::{Arc, Mutex};

use innoxide_engine::{Collation, KeyBound, LockRead, Value, WaitPolicy};
use innoxide_sql::ast::{
    self, BinaryOp, Expr, JoinKind, LockClause, OrderItem, SelectItem, TableRef,
};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{
    self, enum_as_number, AggKind, AggSpec, CExpr, Compiler, EType, Env, ScopeTable,
};
use super::finish::{Finish, Out, Shape, TmpArea};
use super::group::{Group, GroupCtx, Grouper, Groups};
use super::hashjoin;
use super::jsontable::{JsonSource, JsonTableSpec};
use super::prepared::{KeptPlan, PlanBasis};
use super::rowbuf::RowBuf;
use super::scanfilter;
use super::semijoin::{key_stats, rows_per_access};
use super::sort::SortArea;
use super::window::{self, WinSpec, Windows};
use super::{Column, Output, Session};
use crate::catalog::{engine_error, SqlTable};

/// Keeps the first `k` of `rows` in ORDER BY order (ties: the earlier row), in the order
/// they came: what a sort followed by LIMIT k would keep, for the final sort to order.
/// Returns the ORDER BY keys of the last row kept (in ORDER BY order) when rows were dropped:
/// a later row that does not come before it cannot be among the first `k`.
fn keep_first(
    rows: &mut Vec<Vec<Datum>>,
    k: usize,
    order: &[(CExpr, bool, Collation)],
    params: &[Datum],
    mode: types::SqlMode,
    w: &mut Warnings,
) -> Result<Option<Vec<Datum>>, SqlError> {
    if rows.len() <= k {
        return Ok(None);
    }
    let mut keyed = Vec::with_capacity(rows.len());
    for (i, r) in rows.drain(..).enumerate() {
        let env = Env::new(&r, params, mode);
        let keys = order
            .iter()
            .map(|o| o.0.eval(&env, w))
            .collect::<Result<Vec<_>, _>>()?;
        keyed.push((keys, i, r));
    }
    let cmp = |a: &(Vec<Datum>, usize, Vec<Datum>), b: &(Vec<Datum>, usize, Vec<Datum>)| {
        for (j, (_, desc, coll)) in order.iter().enumerate() {
            let o = cmp_nulls_first(&a.0[j], &b.0[j], *coll);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        a.1.cmp(&b.1)
    };
    if k == 0 {
        return Ok(None);
    }
    keyed.select_nth_unstable_by(k - 1, cmp);
    keyed.truncate(k);
    let last = keyed[k - 1].0.clone();
    keyed.sort_unstable_by_key(|e| e.1);
    rows.extend(keyed.into_iter().map(|e| e.2));
    Ok(Some(last))
}

/// Whether a row whose ORDER BY keys are `keys` comes before one with `than` (a later row
/// with equal keys does not).
fn comes_before(keys: &[&Datum], than: &[Datum], order: &[(CExpr, bool, Collation)]) -> bool {
    for ((a, b), (_, desc, coll)) in keys.iter().zip(than).zip(order) {
        let o = cmp_nulls_first(a, b, *coll);
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o == Ordering::Less;
        }
    }
    false
}

/// How one table is read.
#[derive(Debug, Clone)]
pub enum Access {
    /// Primary key lookups, one per key (equality on every key column, or IN lists).
    Points(Vec<Vec<Value>>),
    /// A range of the clustered index (`index` None) or a secondary index.
    Range {
        index: Option<String>,
        from: KeyBound,
        to: KeyBound,
        forward: bool,
    },
    /// A loose scan of an index (S14): a row for each distinct value of its first key parts.
    Loose(Box<Loose>),
}

/// A loose index scan (S14): a row of each distinct value of the index's first `parts` key
/// parts within `from`..`to`, in either direction, found by a search past the one before:
/// forward the group's first row, backward its last; with `min`, also the group's first row
/// holding a value in the key part after them, and with `max` its last row.
#[derive(Debug, Clone)]
pub struct Loose {
    pub index: Option<String>,
    pub parts: usize,
    /// The table columns of the index's key parts (the first `parts`, then the next one).
    pub cols: Vec<usize>,
    pub min: bool,
    pub max: bool,
    pub from: KeyBound,
    pub to: KeyBound,
    pub forward: bool,
    /// The estimated number of distinct values (EXPLAIN's rows).
    pub groups: u64,
}

impl Loose {
    /// The same index range read whole, forward.
    fn range(&self) -> Access {
        Access::Range {
            index: self.index.clone(),
            from: self.from.clone(),
            to: self.to.clone(),
            forward: true,
        }
    }
}

impl Access {
    /// Reads every row of the table (no key narrows it).
    pub fn is_full_scan(&self) -> bool {
        matches!(
            self,
            Access::Range {
                index: None,
                from: KeyBound::Unbounded,
                to: KeyBound::Unbounded,
                ..
            }
        )
    }
    pub fn describe(&self, t: &SqlTable) -> (String, String, Option<String>) {
        match self {
            Access::Points(k) if k.len() == 1 => {
                ("const".into(), "PRIMARY".into(), Some("PRIMARY".into()))
            }
            Access::Points(_) => ("range".into(), "PRIMARY".into(), Some("PRIMARY".into())),
            Access::Range {
                index, from, to, ..
            } => {
                let full = matches!(from, KeyBound::Unbounded) && matches!(to, KeyBound::Unbounded);
                let name = index.clone().unwrap_or_else(|| "PRIMARY".into());
                if full && index.is_some() {
                    // A whole secondary index, read for its order.
                    ("index".into(), name, None)
                } else if full {
                    ("ALL".into(), String::new(), None)
                } else if from == to {
                    ("ref".into(), name.clone(), Some(name))
                } else {
                    let _ = t;
                    ("range".into(), name.clone(), Some(name))
                }
            }
            Access::Loose(l) => {
                let name = l.index.clone().unwrap_or_else(|| "PRIMARY".into());
                ("range".into(), name.clone(), Some(name))
            }
        }
    }
}

/// One conjunct usable as a key condition: column `col` compared with a constant.
#[derive(Debug)]
enum Sarg {
    Eq(Datum),
    In(Vec<Datum>),
    Lo(Datum, bool),
    Hi(Datum, bool),
}

/// Splits a condition into its AND-ed parts.
pub fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    if let Expr::Binary {
        op: BinaryOp::And,
        left,
        right,
    } = e
    {
        conjuncts(left, out);
        conjuncts(right, out);
    } else {
        out.push(e.clone());
    }
}

/// True if `e` uses no column (so it is constant for one execution).
pub fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) | Expr::Param(_) | Expr::UserVar(_) | Expr::SysVar { .. } => true,
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::Collate { expr, .. } => {
            is_const(expr)
        }
        Expr::Binary { left, right, .. } => is_const(left) && is_const(right),
        Expr::Function { name, args, .. } => {
            !matches!(
                name.as_str(),
                "rand" | "count" | "sum" | "avg" | "min" | "max"
            ) && args.iter().all(is_const)
        }
        _ => false,
    }
}

/// S14: what a loose index scan must give a query: a row for each distinct value of `keys`
/// (GROUP BY's or DISTINCT's columns, DISTINCT aggregates' arguments) and the rows holding
/// the MIN or MAX (`extremes`: column, is MAX) of others in each group; WHERE reads
/// `where_cols`.
pub(crate) struct LooseSpec {
    keys: Vec<usize>,
    extremes: Vec<(usize, bool)>,
    where_cols: Vec<usize>,
}

/// A loose scan reads a row or three per group, each a search from the root: it is taken
/// when the groups hold this many rows on average, or more.
const LOOSE_GROUP_ROWS: u64 = 16;

/// What `Session::min_max_rows` read: a row per aggregate that found one, and whether any row
/// passes WHERE.
pub(crate) struct Extremes {
    pub rows: Vec<Vec<Datum>>,
    pub matched: bool,
}

/// An index of a table as a key: its name (None: the primary key), the columns its entries
/// are ordered by (a secondary index's own, then the primary key's it lacks), and each key
/// part's declared prefix length.
struct KeyIndex<'t> {
    name: Option<&'t str>,
    cols: Vec<usize>,
    prefixes: &'t [Option<u64>],
}

/// The keys of `t` the hints allow, the primary key first.
fn key_indexes<'t>(t: &'t SqlTable, hints: &IndexUse) -> Vec<KeyIndex<'t>> {
    let mut out = Vec::new();
    let visible_pk = !t.pk().is_empty() && !t.has_hidden_pk();
    if visible_pk && hints.allows(None) {
        out.push(KeyIndex {
            name: None,
            cols: t.pk().to_vec(),
            prefixes: &t.meta.pk_prefixes,
        });
    }
    for ix in &t.table.def.indexes {
        if hints.allows(Some(&ix.name)) {
            let prefixes = (t.meta.keys.iter())
                .find(|k| k.name.eq_ignore_ascii_case(&ix.name))
                .map_or(&[][..], |k| &k.prefixes[..]);
            let mut cols = ix.columns.clone();
            if visible_pk {
                // Stored whole after the index's own columns (no prefix).
                cols.extend(t.pk().iter().filter(|c| !ix.columns.contains(c)));
            }
            out.push(KeyIndex {
                name: Some(&ix.name),
                cols,
                prefixes,
            });
        }
    }
    out
}

/// `d` converted exactly to column `col`'s stored value (one that compares equal to it), or
/// None (S1).
fn exact_key(t: &SqlTable, col: usize, d: &Datum) -> Option<Value> {
    let ty = &t.columns[col].ty;
    if ty.is_string() && !matches!(d, Datum::Bytes(_)) {
        // A string compared with a number or a date is compared as one: '05' and '5.0' equal
        // 5, and lie apart from '5' in the index.
        return None;
    }
    let mut w = Warnings::default();
    let v = types::store(d, ty, types::SqlMode::DEFAULT, ("", ""), 1, &mut w).ok()?;
    if !w.is_empty() {
        return None;
    }
    let back = types::load(&v, ty);
    (back.compare(d, ty.collation()) == Some(Ordering::Equal)).then_some(v)
}

/// The range of an index over `cols` that `sargs` narrow it to: (key parts fixed by
/// equality, bounds on the next one (0-2), from, to).
fn key_range(
    t: &SqlTable,
    cols: &[usize],
    sargs: &HashMap<usize, Vec<Sarg>>,
) -> (usize, usize, KeyBound, KeyBound) {
    let mut prefix: Vec<Value> = Vec::new();
    for &c in cols {
        let eq = sargs.get(&c).and_then(|v| {
            v.iter().find_map(|s| match s {
                Sarg::Eq(d) => exact_key(t, c, d),
                _ => None,
            })
        });
        match eq {
            Some(v) => prefix.push(v),
            None => break,
        }
    }
    let (mut from, mut to) = if prefix.is_empty() {
        (KeyBound::Unbounded, KeyBound::Unbounded)
    } else {
        (
            KeyBound::Included(prefix.clone()),
            KeyBound::Included(prefix.clone()),
        )
    };
    let mut ranged = 0;
    if let Some(&next) = cols.get(prefix.len()) {
        for sarg in sargs.get(&next).map_or(&[][..], Vec::as_slice) {
            let (d, inc, bound) = match sarg {
                Sarg::Lo(d, inc) => (d, *inc, &mut from),
                Sarg::Hi(d, inc) => (d, *inc, &mut to),
                _ => continue,
            };
            if let Some(v) = exact_key(t, next, d) {
                let mut k = prefix.clone();
                k.push(v);
                *bound = if inc {
                    KeyBound::Included(k)
                } else {
                    KeyBound::Excluded(k)
                };
                ranged += 1;
            }
        }
    }
    (prefix.len(), ranged, from, to)
}

/// True when `e` names a collation (COLLATE) other than column `col`'s: the comparison is in
/// that collation, whose equal values may lie apart in the column's index.
fn other_collation(t: &SqlTable, col: usize, e: &Expr) -> bool {
    use super::typeinfo::TypeInfo;
    match e {
        Expr::Collate { collation, .. } => {
            !collation.eq_ignore_ascii_case(&t.columns[col].ty.collation_name())
        }
        _ => false,
    }
}

fn col_of(e: &Expr, tname: &str, t: &SqlTable, single: bool) -> Option<usize> {
    let Expr::Column { table, name } = e else {
        return None;
    };
    match table {
        Some(q) if !q.eq_ignore_ascii_case(tname) => None,
        None if !single => None,
        _ => t.column(name),
    }
}

impl Session {
    /// Evaluates a constant expression (planning of key conditions).
    pub(crate) fn const_value(&mut self, e: &Expr, params: &[Datum]) -> Result<Datum, SqlError> {
        if let Expr::Param(i) = e {
            return Ok(params.get(*i).cloned().unwrap_or(Datum::Null));
        }
        let mut c = Compiler::new(&[], "where clause");
        let (ce, _) = c.compile(e, self)?;
        let mut w = Warnings::default();
        ce.eval(&Env::new(&[], params, self.vars.sql_mode()), &mut w)
    }

    /// Chooses the access path for table `t` (named `tname` in the query) given the WHERE
    /// conjuncts (S1).
    pub(crate) fn plan_access(
        &mut self,
        t: &SqlTable,
        tname: &str,
        single: bool,
        conds: &[Expr],
        params: &[Datum],
        needs: PathNeeds<'_>,
    ) -> Result<Access, SqlError> {
        let hints = needs.hints;
        let Some(sargs) = self.sargs_of(t, tname, single, conds, params, &mut true)? else {
            // `col op NULL` is never true: no row can pass the conjunction.
            return Ok(Access::Points(Vec::new()));
        };
        let eq_of = |col: usize| -> Option<Value> {
            sargs.get(&col)?.iter().find_map(|s| match s {
                Sarg::Eq(d) => exact_key(t, col, d),
                _ => None,
            })
        };
        // Primary key: all columns equal, or IN lists over a one-column key.
        let pk = t.pk().to_vec();
        if !pk.is_empty() && !t.has_hidden_pk() && hints.allows(None) {
            let eqs: Vec<Option<Value>> = pk.iter().map(|&c| eq_of(c)).collect();
            if eqs.iter().all(Option::is_some) {
                return Ok(Access::Points(vec![eqs.into_iter().flatten().collect()]));
            }
            if pk.len() == 1 {
                if let Some(list) = sargs.get(&pk[0]).and_then(|v| {
                    v.iter().find_map(|s| match s {
                        Sarg::In(l) => Some(l),
                        _ => None,
                    })
                }) {
                    let mut keys: Vec<Vec<Value>> = Vec::with_capacity(list.len());
                    let mut exact = true;
                    for d in list {
                        match exact_key(t, pk[0], d) {
                            Some(v) => keys.push(vec![v]),
                            None => exact = false,
                        }
                    }
                    if exact {
                        keys.sort_by(|a, b| cmp_values(&a[0], &b[0]));
                        keys.dedup();
                        return Ok(Access::Points(keys));
                    }
                }
            }
        }
        // Otherwise the index with the longest usable prefix (primary key first on ties); a
        // secondary index's key parts go on with the primary key's columns.
        let mut usable: Vec<(usize, Access)> = Vec::new();
        for KeyIndex { name, cols, .. } in key_indexes(t, hints) {
            let name = name.map(str::to_string);
            let (prefix, ranged, from, to) = key_range(t, &cols, &sargs);
            let mut score = prefix * 4 + ranged * 2;
            if score == 0 {
                continue;
            }
            if name.is_some() {
                // A secondary index costs a clustered lookup per row.
                score = score.saturating_sub(1).max(1);
            }
            usable.push((
                score,
                Access::Range {
                    index: name,
                    from,
                    to,
                    forward: true,
                },
            ));
        }
        let scan = Access::Range {
            index: None,
            from: KeyBound::Unbounded,
            to: KeyBound::Unbounded,
            forward: true,
        };
        // One key alone is taken as it is, unless it is a secondary-index range (which may
        // cover most of the table): an equality lookup costs no estimate.
        let secondary_range = usable.iter().any(
            |(_, a)| matches!(a, Access::Range { index: Some(_), from, to, .. } if from != to),
        );
        if usable.len() >= 2 || secondary_range {
            return self.cheapest(t, usable, scan, needs);
        }
        Ok(usable.pop().map_or(scan, |b| b.1))
    }

    /// The conjuncts of `conds` usable as key conditions, by column of `t`; None when one can
    /// match no row (a key compared with NULL). `all` is cleared when some conjunct is not one.
    fn sargs_of(
        &mut self,
        t: &SqlTable,
        tname: &str,
        single: bool,
        conds: &[Expr],
        params: &[Datum],
        all: &mut bool,
    ) -> Result<Option<HashMap<usize, Vec<Sarg>>>, SqlError> {
        let mut sargs: HashMap<usize, Vec<Sarg>> = HashMap::new();
        for c in conds {
            *all &= matches!(
                c,
                Expr::Binary { .. }
                    | Expr::Between { negated: false, .. }
                    | Expr::InList { negated: false, .. }
            );
            let (col, s) = match c {
                Expr::Binary { op, left, right } => {
                    let (col, val, op) = if let (Some(col), true) =
                        (col_of(left, tname, t, single), is_const(right))
                    {
                        (col, right, *op)
                    } else if let (Some(col), true) =
                        (col_of(right, tname, t, single), is_const(left))
                    {
                        let flipped = match op {
                            BinaryOp::Lt => BinaryOp::Gt,
                            BinaryOp::Le => BinaryOp::Ge,
                            BinaryOp::Gt => BinaryOp::Lt,
                            BinaryOp::Ge => BinaryOp::Le,
                            o => *o,
                        };
                        (col, left, flipped)
                    } else {
                        *all = false;
                        continue;
                    };
                    if other_collation(t, col, val) {
                        *all = false;
                        continue;
                    }
                    let v = self.const_value(val, params)?;
                    if v.is_null() {
                        // `col op NULL` is never true: no row can pass the conjunction.
                        if matches!(
                            op,
                            BinaryOp::Eq
                                | BinaryOp::Gt
                                | BinaryOp::Ge
                                | BinaryOp::Lt
                                | BinaryOp::Le
                        ) {
                            return Ok(None);
                        }
                        *all = false;
                        continue;
                    }
                    let s = match op {
                        BinaryOp::Eq => Sarg::Eq(v),
                        BinaryOp::Gt => Sarg::Lo(v, false),
                        BinaryOp::Ge => Sarg::Lo(v, true),
                        BinaryOp::Lt => Sarg::Hi(v, false),
                        BinaryOp::Le => Sarg::Hi(v, true),
                        _ => {
                            *all = false;
                            continue;
                        }
                    };
                    (col, s)
                }
                Expr::Between {
                    expr,
                    low,
                    high,
                    negated: false,
                } if is_const(low) && is_const(high) => {
                    let col = col_of(expr, tname, t, single)
                        .filter(|&c| !other_collation(t, c, low) && !other_collation(t, c, high));
                    let Some(col) = col else {
                        *all = false;
                        continue;
                    };
                    let (lo, hi) = (
                        self.const_value(low, params)?,
                        self.const_value(high, params)?,
                    );
                    if lo.is_null() || hi.is_null() {
                        *all = false;
                        continue;
                    }
                    sargs.entry(col).or_default().push(Sarg::Lo(lo, true));
                    (col, Sarg::Hi(hi, true))
                }
                Expr::InList {
                    expr,
                    list,
                    negated: false,
                } if list.iter().all(is_const) && list.len() <= IN_KEYS_MAX => {
                    let col = col_of(expr, tname, t, single)
                        .filter(|&c| !list.iter().any(|x| other_collation(t, c, x)));
                    let Some(col) = col else {
                        *all = false;
                        continue;
                    };
                    let mut vals = Vec::with_capacity(list.len());
                    for x in list {
                        let v = self.const_value(x, params)?;
                        if !v.is_null() {
                            vals.push(v);
                        }
                    }
                    (col, Sarg::In(vals))
                }
                _ => continue,
            };
            sargs.entry(col).or_default().push(s);
        }
        Ok(Some(sargs))
    }

    /// One level of the nested-loop join (S9): joins each row of `rows` (the tables before
    /// `si`) with table `si` and hands the joined rows to the next level in batches of
    /// JOIN_BATCH (or, from the last table, to `out`). Returns false once `out` wants no more.
    fn join_level(
        &mut self,
        j: &JoinPlan<'_>,
        si: usize,
        rows: Held,
        out: &mut JoinOut<'_, '_>,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        let (params, mode, lock) = (j.params, j.mode, j.locks[si]);
        let (src, on_c, st) = (&j.sources[si], &j.on_cs[si], &j.scope[si]);
        let last = si + 1 == j.sources.len();
        let (kind, on) = src.join();
        let where_here = if last { out.where_c } else { &None };
        // A RIGHT JOIN level needs every row before it at once (S11): the levels before the
        // last one hand their rows on whole, gathered in a row buffer.
        let mut next = NextRows {
            rows: Vec::new(),
            whole: j.last_right.is_some_and(|r| si < r).then(|| {
                let tmp = self.tmp_area();
                RowBuf::new(tmp.budget, tmp.sort.tmpdir)
            }),
        };
        // RIGHT JOIN: every row of this table, with the matching rows so far or NULLs;
        // a table is read whole first (no condition of earlier tables applies to it).
        let whole: Held;
        let data: Option<&Held> = match src {
            Source::Table(t, JoinKind::Right, _) => {
                let needs = PathNeeds {
                    used: None,
                    hints: &j.index_use[si],
                };
                let access = self.plan_access(t, &st.name, false, &[], params, needs)?;
                let used_here = &j.used[st.offset..st.offset + st.columns.len()];
                let how = ReadHow {
                    lock,
                    semi_consistent: false,
                    columns: Some(used_here),
                    limit: None,
                    first: None,
                    filter: None,
                };
                let tmp = self.tmp_area();
                let mut data = RowBuf::new(tmp.budget, tmp.sort.tmpdir);
                self.read_datums(t, access, how, &mut |row| {
                    data.push(row)?;
                    Ok(true)
                })?;
                whole = Held::of(data);
                Some(&whole)
            }
            Source::Rows(data, _, _) => Some(data),
            Source::Table(t, _, _) => self.table_held(j, si, t, kind, out.where_c)?,
            // A document that reads no earlier item: its rows, made once per execution.
            Source::Json(js, _, _) if !js.lateral => {
                let cell = &j.tables[si];
                if cell.get().is_none() {
                    let tmp = self.tmp_area();
                    let mut buf = RowBuf::new(tmp.budget, tmp.sort.tmpdir);
                    if let Some(doc) = js.document(&[], params, w)? {
                        js.spec.rows(&doc, &mut |r| {
                            buf.push(r.to_vec())?;
                            Ok(true)
                        })?;
                    }
                    let _ = cell.set(Some(Held::of(buf)));
                }
                cell.get().and_then(Option::as_ref)
            }
            Source::Json(..) => None,
        };
        match (data, src) {
            (Some(data), _) if kind == JoinKind::Right => {
                for at in 0..data.len() {
                    let r = data.get(at)?;
                    let r = &r[..];
                    let mut matched = false;
                    for at in 0..rows.len() {
                        let left = rows.get(at)?;
                        match pair(&left, r, on_c, j, (last, out, &mut next.rows), w)? {
                            Some(false) => return Ok(false),
                            Some(true) => matched = true,
                            None => {}
                        }
                    }
                    if !matched {
                        let mut row = vec![Datum::Null; st.offset];
                        row.extend(r.iter().cloned());
                        if !give(last, out, &mut next.rows, row, w)? {
                            return Ok(false);
                        }
                    }
                    if !self.drain_some(last, out, w)? || !self.hand_on(j, si, &mut next, out, w)? {
                        return Ok(false);
                    }
                }
            }
            (Some(data), _) => {
                // Equality with the rows before: only the held rows of the key (hashjoin.rs).
                let cell = &j.hashes[si];
                if cell.get().is_none() {
                    let keys = join_keys(st, kind, j.any_right, on_c, out.where_c);
                    let _ = cell.set(hashjoin::build(data, keys, &self.tmp_area())?);
                }
                let hash = cell.get().and_then(Option::as_ref);
                for at in 0..rows.len() {
                    let left = rows.get(at)?;
                    let mut matched = false;
                    let picked = match hash {
                        Some(h) => h.probe(&left, params, mode)?,
                        None => None,
                    };
                    let picked = picked.as_deref();
                    let n = picked.map_or(data.len(), <[u32]>::len);
                    for k in 0..n {
                        let r = data.get(picked.map_or(k, |p| p[k] as usize))?;
                        match pair(&left, &r, on_c, j, (last, out, &mut next.rows), w)? {
                            Some(false) => return Ok(false),
                            Some(true) => matched = true,
                            None => {}
                        }
                    }
                    let lone = !matched && kind == JoinKind::Left;
                    if !self.left_done(j, si, &left, lone, out, &mut next, w)? {
                        return Ok(false);
                    }
                }
            }
            (None, Source::Rows(..)) => unreachable!("rows are data"),
            // LATERAL: the document is made from each row before, then its rows paired.
            (None, Source::Json(js, _, _)) => {
                for at in 0..rows.len() {
                    let left = rows.get(at)?;
                    let mut matched = false;
                    if let Some(doc) = js.document(&left, params, w)? {
                        let more = js.spec.rows(&doc, &mut |r| {
                            match pair(&left, r, on_c, j, (last, out, &mut next.rows), w)? {
                                Some(false) => return Ok(false),
                                Some(true) => matched = true,
                                None => {}
                            }
                            Ok(self.drain_some(last, out, w)?
                                && self.hand_on(j, si, &mut next, out, w)?)
                        })?;
                        if !more {
                            return Ok(false);
                        }
                    }
                    let lone = !matched && kind == JoinKind::Left;
                    if !self.left_done(j, si, &left, lone, out, &mut next, w)? {
                        return Ok(false);
                    }
                }
            }
            (None, Source::Table(t, _, _)) => {
                // Conditions usable for this table: WHERE conjuncts (inner joins) and ON
                // conjuncts, with the columns of earlier tables bound per outer row.
                let mut conds = Vec::new();
                // (Not when a later RIGHT JOIN may NULL-extend this table's side.)
                if kind != JoinKind::Left && !j.any_right {
                    conds.extend(j.plan_where.iter().cloned());
                }
                if let Some(o) = on {
                    conjuncts(o, &mut conds);
                }
                let single = j.scope.len() == 1;
                let used_here = &j.used[st.offset..st.offset + st.columns.len()];
                let read_here = j.deferred.unwrap_or(used_here);
                // The conditions are bound to each outer row through parameters past the
                // statement's own: `ext` is `params` then the outer values `refs` names.
                let mut refs = Vec::new();
                let bound: Vec<Expr> = conds
                    .iter()
                    .map(|c| param_outer(c, &j.scope[..si], params.len(), &mut refs))
                    .collect();
                let mut ext = params.to_vec();
                for at in 0..rows.len() {
                    let left = rows.get(at)?;
                    let access = match (si, j.first_access) {
                        (0, Some(a)) => a.clone(),
                        _ => {
                            ext.truncate(params.len());
                            ext.extend(refs.iter().map(|&p| left[p].clone()));
                            let needs = PathNeeds {
                                used: lock.is_none().then_some(used_here),
                                hints: &j.index_use[si],
                            };
                            self.plan_access(t, &st.name, single, &bound, &ext, needs)?
                        }
                    };
                    // A consistent read of the first table hands the conditions on its own
                    // columns to the engine's scan (scanfilter.rs); it still tests them all.
                    let filter = (si == 0
                        && lock.is_none()
                        && !matches!(kind, JoinKind::Left | JoinKind::Right))
                    .then(|| {
                        let conds = [on_c.as_ref(), where_here.as_ref()];
                        scanfilter::scan_filter(t, 0, conds, params, &access)
                    })
                    .flatten();
                    let mut matched = false;
                    let mut more = true;
                    // A single-table locking read (WHERE tested in the scan, below) stops
                    // locking once LIMIT (+ OFFSET) rows are had, as InnoDB does.
                    let limit = j
                        .need
                        .filter(|_| lock.is_some() && single)
                        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                    let how = ReadHow {
                        lock,
                        semi_consistent: false,
                        columns: Some(read_here),
                        limit,
                        first: (si == 0)
                            .then_some(j.need)
                            .flatten()
                            .map(|n| usize::try_from(n).unwrap_or(usize::MAX).max(4)),
                        filter,
                    };
                    // A single-table locking read tests WHERE inside the engine's
                    // scan, which then unlocks the rows that fail it at READ COMMITTED.
                    let mut lock_pred = |r: &[Value]| -> bool {
                        if lock.is_none() || !single {
                            return true;
                        }
                        let mut row = left.to_vec();
                        load_used(t, r.to_vec(), used_here, &mut row);
                        pass(where_here, &row, params, mode, &mut Warnings::default())
                            .unwrap_or(true)
                    };
                    let mut cur = self.open_datums(t, access, how, &mut lock_pred)?;
                    loop {
                        let mut row = Vec::new();
                        if !left.is_empty() {
                            row.reserve(left.len() + st.columns.len());
                            row.extend_from_slice(&left);
                        }
                        if !self.pull_into(&mut cur, read_here, &mut lock_pred, &mut row)? {
                            break;
                        }
                        if !pass(on_c, &row, params, mode, w)? {
                            continue;
                        }
                        matched = true;
                        more = give(last, out, &mut next.rows, row, w)?
                            && self.drain_some(last, out, w)?;
                        if !more {
                            break;
                        }
                        // The rows so far go on to the next table while this one is read.
                        if !self.hand_on(j, si, &mut next, out, w)? {
                            return Ok(false);
                        }
                    }
                    let lone = !matched && kind == JoinKind::Left;
                    if !more || !self.left_done(j, si, &left, lone, out, &mut next, w)? {
                        return Ok(false);
                    }
                }
            }
        }
        if last {
            return Ok(true);
        }
        let rows = match next.whole {
            // Even no rows go on to a RIGHT JOIN: its table's rows come out NULL-extended.
            Some(mut buf) => {
                for r in next.rows {
                    buf.push(r)?;
                }
                Held::of(buf)
            }
            None if next.rows.is_empty() => return Ok(true),
            None => Held::Vec(next.rows),
        };
        self.join_level(j, si + 1, rows, out, w)
    }

    /// Table `t` of join level `si` when it is joined on equalities with the rows before it
    /// that no index of its serves (the first column of none is among them): read once into a
    /// row buffer, then joined by hash as held rows are (hashjoin.rs H4). None: the table is
    /// read through its access path for each row before it (S9). Decided, and read, once per
    /// execution of the join.
    fn table_held<'j>(
        &mut self,
        j: &'j JoinPlan<'_>,
        si: usize,
        t: &Arc<SqlTable>,
        kind: JoinKind,
        where_c: &Option<CExpr>,
    ) -> Result<Option<&'j Held>, SqlError> {
        let cell = &j.tables[si];
        if cell.get().is_some() {
            return Ok(cell.get().and_then(Option::as_ref));
        }
        let st = &j.scope[si];
        let width = st.columns.len();
        let level = HashLevel {
            si,
            kind,
            any_right: j.any_right,
            locking: j.locks[si].is_some(),
        };
        if !hash_joined(t, st, &level, &j.on_cs[si], where_c) {
            let _ = cell.set(None);
            return Ok(None);
        }
        let used_here = &j.used[st.offset..st.offset + width];
        let all = Access::Range {
            index: None,
            from: KeyBound::Unbounded,
            to: KeyBound::Unbounded,
            forward: true,
        };
        // The conjuncts of the level's ON (WHERE's pushed there too) on this table alone
        // refuse its rows whatever they would be paired with, LEFT JOIN or not (scanfilter.rs).
        let filter = (kind != JoinKind::Right).then(|| {
            let conds = [j.on_cs[si].as_ref(), None];
            scanfilter::scan_filter(t, st.offset, conds, j.params, &all)
        });
        let how = ReadHow {
            lock: None,
            semi_consistent: false,
            columns: Some(used_here),
            limit: None,
            first: None,
            filter: filter.flatten(),
        };
        let tmp = self.tmp_area();
        let mut data = RowBuf::new(tmp.budget, tmp.sort.tmpdir);
        self.read_datums(t, all, how, &mut |row| {
            data.push(row)?;
            Ok(true)
        })?;
        let _ = cell.set(Some(Held::of(data)));
        Ok(cell.get().and_then(Option::as_ref))
    }

    /// Once `next` holds JOIN_BATCH rows, they go on: to the next level, or (S11) to the row
    /// buffer that gathers them whole for a RIGHT JOIN. False once no more rows are wanted.
    fn hand_on(
        &mut self,
        j: &JoinPlan<'_>,
        si: usize,
        next: &mut NextRows,
        out: &mut JoinOut<'_, '_>,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        if next.rows.len() < JOIN_BATCH || si + 1 == j.sources.len() {
            return Ok(true);
        }
        let rows = std::mem::take(&mut next.rows);
        match &mut next.whole {
            Some(buf) => {
                for r in rows {
                    buf.push(r)?;
                }
                Ok(true)
            }
            None => self.join_level(j, si + 1, Held::Vec(rows), out, w),
        }
    }

    /// After row `left` of the rows before level `si` was paired: its row NULL-extended when
    /// it found no match at a LEFT JOIN (`lone`), then the rows so far handed on (S9).
    /// False once no more rows are wanted.
    #[allow(clippy::too_many_arguments)]
    fn left_done(
        &mut self,
        j: &JoinPlan<'_>,
        si: usize,
        left: &[Datum],
        lone: bool,
        out: &mut JoinOut<'_, '_>,
        next: &mut NextRows,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        let last = si + 1 == j.sources.len();
        if lone {
            let mut row = left.to_vec();
            row.extend(std::iter::repeat_n(Datum::Null, j.scope[si].columns.len()));
            if !give(last, out, &mut next.rows, row, w)? {
                return Ok(false);
            }
        }
        Ok(self.drain_some(last, out, w)? && self.hand_on(j, si, next, out, w)?)
    }

    /// At the last level, once JOIN_BATCH rows needing subqueries are collected, sends them
    /// on (`drain`); false once no more rows are wanted.
    fn drain_some(
        &mut self,
        last: bool,
        out: &mut JoinOut<'_, '_>,
        w: &mut Warnings,
    ) -> Result<bool, SqlError> {
        if last && out.subs.is_some() && out.rows.len() >= JOIN_BATCH {
            self.drain(out, w)
        } else {
            Ok(true)
        }
    }

    /// The collected rows go on (S10): WHERE's subqueries bound and WHERE tested, then to
    /// the grouping (its subqueries bound), the window stage (HAVING's bound) or the last
    /// stage (HAVING's, the select list's and ORDER BY's bound); false once no more rows are
    /// wanted (LIMIT).
    fn drain(&mut self, out: &mut JoinOut<'_, '_>, w: &mut Warnings) -> Result<bool, SqlError> {
        let Some(subs) = out.subs.as_ref() else {
            return Ok(true);
        };
        let (params, mode) = (out.params, out.mode);
        for r in std::mem::take(&mut out.rows) {
            if let Some(ws) = subs.where_sub {
                self.bind_subs(ws, &r, &[], params)?;
                if ws.truth(&Env::new(&r, params, mode), w)? != Some(true) {
                    continue;
                }
            }
            let done = if let Some(g) = out.grouper.as_mut() {
                for e in &subs.group {
                    self.bind_subs(e, &r, &[], params)?;
                }
                g.add(r, w)?
            } else if let Some(win) = out.win.as_mut() {
                if let Some(h) = subs.having {
                    self.bind_subs(h, &r, &[], params)?;
                }
                win.push(r, Vec::new(), w)?;
                None
            } else {
                Some((r, Vec::new()))
            };
            if let Some((r, a)) = done {
                for e in &subs.late {
                    self.bind_subs(e, &r, &a, params)?;
                }
                if !out.fin.take(r, &a, &[], w)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The rows of `t` whose primary-key columns `partial` holds (S7), read again whole (the
    /// columns in `used`) in the statement's view. READ UNCOMMITTED reads the newest versions,
    /// so a row is checked against WHERE again and left out if it is gone or no longer passes.
    fn fetch_whole(
        &mut self,
        t: &SqlTable,
        partial: Vec<Vec<Datum>>,
        used: &[bool],
        where_c: &Option<CExpr>,
        params: &[Datum],
        w: &mut Warnings,
    ) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mode = self.vars.sql_mode();
        let mut out = Vec::with_capacity(partial.len());
        for r in partial {
            let mut key = Vec::with_capacity(t.pk().len());
            for &c in t.pk() {
                let ty = &t.columns[c].ty;
                let mut ignored = Warnings::default();
                key.push(types::store(&r[c], ty, mode, ("", ""), 1, &mut ignored)?);
            }
            let Some(v) = self.trx()?.get(&t.table, &key).map_err(engine_error)? else {
                continue;
            };
            let mut row = Vec::with_capacity(used.len());
            load_used(t, v, used, &mut row);
            if pass(where_c, &row, params, mode, w)? {
                out.push(row);
            }
        }
        Ok(out)
    }

    /// The cheapest of several usable paths (S5), by the rows each reads: for an equality on
    /// a key prefix the table's rows over the prefix's distinct values (the statistics, as
    /// MySQL's ref access), for a range what the engine estimates from its two ends. A row
    /// through a secondary index costs two (the entry and the clustered lookup) unless the
    /// index holds every column in `used` (a covering read, one), a row of the clustered
    /// index one, and the full scan reads every row at one (FORCE INDEX: the scan only when
    /// no key applies). Ties go to the longer key prefix (the score).
    fn cheapest(
        &mut self,
        t: &SqlTable,
        usable: Vec<(usize, Access)>,
        scan: Access,
        needs: PathNeeds<'_>,
    ) -> Result<Access, SqlError> {
        let used = needs.used;
        let settings = self.server.vars.stats_settings();
        let st = self.server.catalog.table_stats(t, settings, false)?;
        let engine = &self.server.catalog.engine;
        let mut best: Option<(u64, usize, Access)> = None;
        for (score, a) in usable {
            let Access::Range {
                index, from, to, ..
            } = &a
            else {
                continue;
            };
            let ist = match index {
                None => st.indexes.first(),
                Some(name) => st.indexes.iter().skip(1).find(|i| &i.name == name),
            };
            let Some(ist) = ist else {
                continue;
            };
            let rows = match (from, to) {
                (KeyBound::Included(v), KeyBound::Included(w)) if v == w && !v.is_empty() => {
                    let distinct = ist.n_diff.get(v.len() - 1).copied().unwrap_or(1);
                    st.n_rows.div_ceil(distinct.max(1))
                }
                _ => engine
                    .estimate_range(&t.table, index.as_deref(), from, to, ist)
                    .map_err(engine_error)?,
            };
            let lookups = match (index, used) {
                (Some(n), Some(u)) if !covers(t, n, u) => 2,
                (Some(_), None) => 2,
                _ => 1,
            };
            let cost = rows.saturating_mul(lookups);
            let better = best
                .as_ref()
                .is_none_or(|b| cost < b.0 || (cost == b.0 && score > b.1));
            if better {
                best = Some((cost, score, a));
            }
        }
        Ok(match best {
            Some((cost, _, a)) if cost <= st.n_rows.max(1) || needs.hints.force => a,
            Some(_) => scan,
            None => scan,
        })
    }

    /// `plan_access`, aware of ORDER BY (`order`: columns of `t`, one direction): when the
    /// path chosen, or a scan of the primary key, or (with a LIMIT, or holding every column in
    /// `used`) of a secondary index, reads rows in that order, it is read so and the second
    /// value is true (P2).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan_ordered(
        &mut self,
        t: &SqlTable,
        tname: &str,
        single: bool,
        conds: &[Expr],
        params: &[Datum],
        order: Option<&[(usize, bool)]>,
        limited: bool,
        needs: PathNeeds<'_>,
    ) -> Result<(Access, bool), SqlError> {
        let access = self.plan_access(t, tname, single, conds, params, needs)?;
        let Some(order) = order else {
            return Ok((self.narrowest_cover(t, access, needs)?, false));
        };
        if let Some(forward) = scan_order(t, &access, order) {
            return Ok((oriented(access, forward), true));
        }
        if !access.is_full_scan() {
            return Ok((access, false));
        }
        // A full scan and a sort, or the rows in order from an index: the clustered index
        // costs the same as the scan; a secondary index a lookup per row, worth it only when
        // LIMIT stops the reading early, or none when it covers the statement (or FORCE
        // INDEX names it).
        let hints = needs.hints;
        let mut paths: Vec<Option<String>> = Vec::new();
        if !t.has_hidden_pk() && hints.allows(None) {
            paths.push(None);
        }
        paths.extend(
            t.table
                .def
                .indexes
                .iter()
                .filter(|ix| hints.allows(Some(&ix.name)))
                .filter(|ix| {
                    limited || hints.force || needs.used.is_some_and(|u| covers(t, &ix.name, u))
                })
                .map(|ix| Some(ix.name.clone())),
        );
        for index in paths {
            let whole = Access::Range {
                index,
                from: KeyBound::Unbounded,
                to: KeyBound::Unbounded,
                forward: true,
            };
            if let Some(forward) = scan_order(t, &whole, order) {
                return Ok((oriented(whole, forward), true));
            }
        }
        Ok((self.narrowest_cover(t, access, needs)?, false))
    }

    /// A full scan of `t`, or of the secondary index with the fewest leaf pages holding
    /// every column the statement reads (`needs.used`, none for a locking read), as MySQL
    /// reads the shortest covering key ("Using index"); any other path as it is.
    fn narrowest_cover(
        &mut self,
        t: &SqlTable,
        access: Access,
        needs: PathNeeds<'_>,
    ) -> Result<Access, SqlError> {
        let Some(used) = needs.used.filter(|_| access.is_full_scan()) else {
            return Ok(access);
        };
        let covering: Vec<&str> = (t.table.def.indexes.iter())
            .filter(|ix| needs.hints.allows(Some(&ix.name)) && covers(t, &ix.name, used))
            .map(|ix| ix.name.as_str())
            .collect();
        if covering.is_empty() {
            return Ok(access);
        }
        let settings = self.server.vars.stats_settings();
        let st = self.server.catalog.table_stats(t, settings, false)?;
        let pages = |name: &str| {
            (st.indexes.iter().skip(1))
                .find(|i| i.name == name)
                .map_or(u64::MAX, |i| i.leaf_pages)
        };
        let clustered = st.indexes.first().map_or(u64::MAX, |i| i.leaf_pages);
        Ok(match covering.into_iter().min_by_key(|n| pages(n)) {
            Some(n) if pages(n) < clustered => Access::Range {
                index: Some(n.to_string()),
                from: KeyBound::Unbounded,
                to: KeyBound::Unbounded,
                forward: true,
            },
            _ => access,
        })
    }

    /// S16: the order to join the FROM tables in (old positions in join order) when they are
    /// base tables joined by inner joins alone, without USING or NATURAL, and statistics
    /// make another order at least JOIN_REORDER times cheaper than FROM's; None to keep it.
    /// The cost of an order is the rows it reads: a table's rows per access (through the
    /// index whose longest key prefix equalities with constants or with the tables before it
    /// fix, else all of them), times the rows joined before it, each table's other conditions
    /// keeping a tenth (an equality) or a third of its rows, as MySQL's estimates do.
    fn join_order(
        &mut self,
        q: &ast::Select,
        scope: &[ScopeTable],
        sources: &[Source],
    ) -> Result<Option<Vec<usize>>, SqlError> {
        let n = sources.len();
        /// Base tables joined by inner joins alone, without USING or NATURAL.
        fn plain(tr: &TableRef) -> bool {
            match tr {
                TableRef::Join {
                    left,
                    right,
                    using,
                    natural,
                    kind,
                    ..
                } => {
                    using.is_empty()
                        && !natural
                        && matches!(kind, JoinKind::Inner | JoinKind::Cross)
                        && plain(left)
                        && plain(right)
                }
                TableRef::Table { .. } => true,
                _ => false,
            }
        }
        if !(2..=JOIN_REORDER_MAX).contains(&n)
            || !q.from.iter().all(plain)
            || !sources.iter().all(|s| {
                matches!(s, Source::Table(_, k, _) if matches!(k, JoinKind::Inner | JoinKind::Cross))
            })
        {
            return Ok(None);
        }
        let mut conds = Vec::new();
        if let Some(w) = &q.selection {
            conjuncts(w, &mut conds);
        }
        for s in sources {
            if let Some(on) = s.join().1 {
                conjuncts(on, &mut conds);
            }
        }
        // A column reference as (table, column), when it names one column of one table.
        let column = |e: &Expr| -> Option<(usize, usize)> {
            let Expr::Column { table, name } = e else {
                return None;
            };
            let table = table.as_deref().map(|t| t.rsplit('.').next().unwrap_or(t));
            let mut found = None;
            for (ti, st) in scope.iter().enumerate() {
                if table.is_some_and(|t| !t.eq_ignore_ascii_case(&st.name)) {
                    continue;
                }
                if let Some(c) = (st.columns.iter()).position(|c| c.0.eq_ignore_ascii_case(name)) {
                    if found.is_some() {
                        return None;
                    }
                    found = Some((ti, c));
                }
            }
            found
        };
        let constant = |e: &Expr| matches!(e, Expr::Literal(_) | Expr::Param(_));
        // Per table: columns equal to a constant, the share of rows its other conditions
        // keep; equalities between two tables' columns.
        let mut fixed: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut keep = vec![1.0f64; n];
        let mut edges: Vec<((usize, usize), (usize, usize))> = Vec::new();
        for c in &conds {
            let Expr::Binary { op, left, right } = c else {
                continue;
            };
            match (column(left), column(right)) {
                (Some(a), Some(b)) if *op == BinaryOp::Eq && a.0 != b.0 => edges.push((a, b)),
                (Some((t, col)), None) | (None, Some((t, col)))
                    if constant(left) || constant(right) =>
                {
                    if *op == BinaryOp::Eq {
                        fixed[t].push(col);
                        keep[t] *= 0.1;
                    } else if matches!(
                        op,
                        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Ne
                    ) {
                        keep[t] *= 1.0 / 3.0;
                    }
                }
                _ => {}
            }
        }
        let settings = self.server.vars.stats_settings();
        // Per table: its rows and, per index, (key columns, distinct values per prefix).
        let mut stats = Vec::with_capacity(n);
        for s in sources {
            let Source::Table(t, _, _) = s else {
                return Ok(None);
            };
            let st = self.server.catalog.table_stats(t, settings, false)?;
            stats.push((st.n_rows.max(1) as f64, key_stats(t, &st)));
        }
        let cost = |order: &[usize]| -> f64 {
            let (mut rows, mut read) = (1.0f64, 0.0f64);
            for (k, &t) in order.iter().enumerate() {
                let before = &order[..k];
                let mut bound = fixed[t].clone();
                for &(a, b) in &edges {
                    if a.0 == t && before.contains(&b.0) {
                        bound.push(a.1);
                    }
                    if b.0 == t && before.contains(&a.0) {
                        bound.push(b.1);
                    }
                }
                let (total, keys) = &stats[t];
                let per = rows_per_access(*total, keys, &bound);
                let joined = bound.len() > fixed[t].len();
                match per {
                    Some(per) => {
                        read += rows * per;
                        rows *= per;
                    }
                    // Joined on equalities no index serves: read once, by hash (S9).
                    None if joined => {
                        read += total;
                        rows *= (total * 0.1).max(1.0);
                    }
                    None => {
                        read += rows * total;
                        rows *= total;
                    }
                }
                rows = (rows * keep[t]).max(1.0);
            }
            read
        };
        let from: Vec<usize> = (0..n).collect();
        let mut best = (cost(&from), from.clone());
        let mut order = from.clone();
        permutations(&mut order, 0, &mut |o| {
            let c = cost(o);
            if c < best.0 {
                best = (c, o.to_vec());
            }
        });
        Ok((best.0 * JOIN_REORDER < cost(&from)).then_some(best.1))
    }

    /// Reads the rows of `t` through `access` that `pred` accepts, handing each to `sink`
    /// until it returns false. Stops with error 1317 on KILL QUERY and 3024 past
    /// max_execution_time.
    pub(crate) fn read_rows(
        &mut self,
        t: &Arc<SqlTable>,
        access: Access,
        how: ReadHow<'_>,
        pred: &mut dyn FnMut(&[Value]) -> bool,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<bool, SqlError>,
    ) -> Result<(), SqlError> {
        let mut cur = self.open_rows(t, access, how, pred)?;
        while let Some(r) = self.pull_row(&mut cur)? {
            if (cur.tested() || pred(&r)) && !sink(r)? {
                break;
            }
        }
        Ok(())
    }

    /// Reads the rows of `t` through `access` as SQL values (`pull_into`: NULL in the
    /// columns `how.columns` leaves unmarked), handing each to `sink` until it returns false.
    pub(crate) fn read_datums(
        &mut self,
        t: &Arc<SqlTable>,
        access: Access,
        how: ReadHow<'_>,
        sink: &mut dyn FnMut(Vec<Datum>) -> Result<bool, SqlError>,
    ) -> Result<(), SqlError> {
        let all;
        let used = match how.columns {
            Some(u) => u,
            None => {
                all = vec![true; t.columns.len()];
                &all
            }
        };
        let mut cur = self.open_datums(t, access, how, &mut |_| true)?;
        loop {
            let mut row = Vec::new();
            if !self.pull_into(&mut cur, used, &mut |_| true, &mut row)? || !sink(row)? {
                return Ok(());
            }
        }
    }

    /// `open_rows`, the rows to be pulled as SQL values with `pull_into`: a consistent read
    /// of a range decodes them straight from the page (`DatumRows`), the other cursors'
    /// rows are converted as they are pulled.
    pub(crate) fn open_datums(
        &mut self,
        t: &Arc<SqlTable>,
        access: Access,
        how: ReadHow<'_>,
        pred: &mut dyn FnMut(&[Value]) -> bool,
    ) -> Result<DatumCursor, SqlError> {
        let (
            Access::Range {
                index,
                from,
                to,
                forward,
            },
            None,
        ) = (&access, how.lock)
        else {
            let cur = self.open_rows(t, access, how, pred)?;
            return Ok(DatumCursor::Other(t.clone(), cur));
        };
        let maker = Arc::new(DatumRows(t.clone()));
        let filter = how.filter;
        let mut rows = (self.trx()?)
            .scan_by(
                &t.table,
                index.as_deref(),
                (from.clone(), to.clone()),
                *forward,
                maker,
            )
            .map_err(engine_error)?;
        if let Some(c) = how.columns {
            rows = rows.with_columns(c.to_vec());
        }
        if let Some(n) = how.first {
            rows = rows.first_batch(n);
        }
        if let Some(f) = filter {
            rows = rows.with_filter(f);
        }
        Ok(DatumCursor::Made(rows))
    }

    /// The next row of `cur` appended to `row` as SQL values (NULL in the columns `used`
    /// leaves unmarked; all of them when it is empty); false at the end. The rows of a cursor
    /// the engine did not test are tested by `pred` first (`RowCursor::tested`). Error 1317
    /// on KILL QUERY, 3024 past max_execution_time (tested every 256 rows).
    pub(crate) fn pull_into(
        &mut self,
        cur: &mut DatumCursor,
        used: &[bool],
        pred: &mut dyn FnMut(&[Value]) -> bool,
        row: &mut Vec<Datum>,
    ) -> Result<bool, SqlError> {
        let (t, cur) = match cur {
            DatumCursor::Made(rows) => {
                self.tick()?;
                let Some(r) = rows.next().transpose().map_err(engine_error)? else {
                    return Ok(false);
                };
                if row.is_empty() {
                    *row = r;
                } else {
                    row.extend(r);
                }
                return Ok(true);
            }
            DatumCursor::Other(t, c) => (t, c),
        };
        while let Some(r) = self.pull_row(cur)? {
            if cur.tested() || pred(&r) {
                load_used(t, r, used, row);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Starts reading the rows of `t` through `access`, to be pulled with `pull_row`, so the
    /// caller may read other tables between two rows (S9). A locking range read takes its
    /// rows and locks here, testing `pred` in the engine (which unlocks at READ COMMITTED
    /// the rows it rejects); the caller tests `pred` on the rows of other cursors
    /// (`RowCursor::tested`).
    pub(crate) fn open_rows(
        &mut self,
        t: &Arc<SqlTable>,
        access: Access,
        how: ReadHow<'_>,
        pred: &mut dyn FnMut(&[Value]) -> bool,
    ) -> Result<RowCursor, SqlError> {
        let ReadHow {
            lock,
            semi_consistent,
            columns,
            limit,
            first: _,
            filter: _,
        } = how;
        let et = t.table.clone();
        let trx = self.trx()?;
        Ok(match access {
            Access::Points(keys) => RowCursor::Points {
                table: et,
                keys: keys.into_iter(),
                lock,
            },
            Access::Loose(scan) => RowCursor::Loose {
                table: et,
                scan,
                columns: columns.map(<[bool]>::to_vec),
                pending: Default::default(),
                done: false,
            },
            Access::Range {
                index,
                from,
                to,
                forward,
            } => match lock {
                Some(how) => RowCursor::Rows(
                    trx.scan_locking_limit(
                        &et,
                        index.as_deref(),
                        from,
                        to,
                        forward,
                        how,
                        semi_consistent,
                        limit,
                        pred,
                    )
                    .map_err(engine_error)?
                    .into_iter(),
                ),
                None => {
                    let mut rows = trx
                        .scan(&et, index.as_deref(), from, to, forward)
                        .map_err(engine_error)?;
                    if let Some(c) = columns {
                        rows = rows.with_columns(c.to_vec());
                    }
                    RowCursor::Scan(rows)
                }
            },
        })
    }

    /// The next row of `cur`, or None at the end. Error 1317 on KILL QUERY, 3024 past
    /// max_execution_time (tested every 256 rows).
    pub(crate) fn pull_row(&mut self, cur: &mut RowCursor) -> Result<Option<Vec<Value>>, SqlError> {
        self.tick()?;
        match cur {
            RowCursor::Points { table, keys, lock } => {
                let trx = self.trx()?;
                for k in keys.by_ref() {
                    let r = match lock {
                        Some(how) => trx.get_locking(table, &k, *how),
                        None => trx.get(table, &k),
                    }
                    .map_err(engine_error)?;
                    if r.is_some() {
                        return Ok(r);
                    }
                }
                Ok(None)
            }
            RowCursor::Scan(rows) => rows.next().transpose().map_err(engine_error),
            RowCursor::Rows(rows) => Ok(rows.next()),
            RowCursor::Loose {
                table,
                scan,
                columns,
                pending,
                done,
            } => {
                if let Some(r) = pending.pop_front() {
                    return Ok(Some(r));
                }
                if *done {
                    return Ok(None);
                }
                let trx = self.trx()?;
                let index = scan.index.as_deref();
                // The first row the view sees between two bounds, in one direction.
                let mut first = |from: KeyBound, to: KeyBound, forward: bool| {
                    let mut rows = (trx.scan(table, index, from, to, forward))
                        .map_err(engine_error)?
                        .first_batch(1);
                    if let Some(c) = columns {
                        rows = rows.with_columns(c.clone());
                    }
                    rows.next().transpose().map_err(engine_error)
                };
                let forward = scan.forward;
                let Some(r) = first(scan.from.clone(), scan.to.clone(), forward)? else {
                    *done = true;
                    return Ok(None);
                };
                let key: Vec<Value> = scan.cols[..scan.parts]
                    .iter()
                    .map(|&c| r[c].clone())
                    .collect();
                let group = KeyBound::Included(key.clone());
                // The row found is the group's first (forward) or last (backward).
                let next = scan.cols.get(scan.parts).copied();
                if let (true, Some(c)) = (scan.min, next) {
                    // NULLs come first: the first value is past them (none if the last row
                    // holds NULL).
                    if r[c].is_null() == forward {
                        let mut past = key.clone();
                        past.push(Value::Null);
                        pending.extend(first(KeyBound::Excluded(past), group.clone(), true)?);
                    }
                }
                if scan.max && forward {
                    pending.extend(first(group.clone(), group, false)?);
                }
                match forward {
                    true => scan.from = KeyBound::Excluded(key),
                    false => scan.to = KeyBound::Excluded(key),
                }
                Ok(Some(r))
            }
        }
    }

    /// Counts a row read: every 256th, error 1317 on KILL QUERY, 3024 past
    /// max_execution_time.
    fn tick(&mut self) -> Result<(), SqlError> {
        self.scan_ticks = self.scan_ticks.wrapping_add(1);
        if self.scan_ticks.is_multiple_of(256) {
            if self.interrupt.load(std::sync::atomic::Ordering::Acquire) {
                return Err(SqlError::new(ER_QUERY_INTERRUPTED, &[]));
            }
            if self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                return Err(SqlError::new(ER_QUERY_TIMEOUT, &[]));
            }
        }
        Ok(())
    }

    pub(crate) fn select(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
    ) -> Result<(Vec<Column>, Vec<Vec<Datum>>), SqlError> {
        if let Some(q) = distinct_union(q) {
            return self.select(&q, params);
        }
        if !q.unions.is_empty() {
            let mut first = q.clone();
            first.unions.clear();
            let (cols, first_rows) = self.select(&first, params)?;
            let mut parts = vec![(cols.clone(), first_rows)];
            for (_, u) in &q.unions {
                let (c2, r2) = self.select(u, params)?;
                if c2.len() != cols.len() {
                    return Err(SqlError::new(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, &[]));
                }
                parts.push((c2, r2));
            }
            let columns = union_columns(parts.iter().map(|p| &p.0[..]));
            let mut rows = Vec::new();
            let mut w = Warnings::default();
            for (part, part_rows) in parts {
                for r in part_rows {
                    rows.push(conform_row(r, &part, &columns, &mut w)?);
                }
            }
            return Ok((columns, rows));
        }
        let plan = self.compile_select(q, params)?;
        if self.describing() {
            return Ok((plan.columns(), Vec::new()));
        }
        let rows = self.run_select(&plan, params)?;
        Ok((plan.columns(), rows))
    }

    /// Compiles one SELECT (no UNION) against the catalog: names resolved, expressions
    /// compiled, privileges checked (P1). Derived and system tables are read here.
    pub(crate) fn compile_select(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
    ) -> Result<SelectPlan, SqlError> {
        if let Some((merged, view)) = self.merge_derived(q)? {
            // What did not merge now stays as it is: no second look (merge.rs).
            let mut plan = self.compile_merged(&merged, params)?;
            // merge.rs G5
            plan.basis.cacheable &= !view;
            return Ok(plan);
        }
        self.compile_merged(q, params)
    }

    /// `compile_select` of a SELECT whose mergeable views and derived tables are merged.
    fn compile_merged(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
    ) -> Result<SelectPlan, SqlError> {
        let start = self.compile_start();
        let mut tables = Vec::new();
        let mode_of = |c: &LockClause| match c {
            LockClause::ForUpdate { .. } => LockRead::Exclusive,
            LockClause::ForShare { .. } => LockRead::Shared,
        };
        let default_lock = q.lock.as_ref().map(mode_of);
        let lock = default_lock.or_else(|| q.lock_of.first().map(|(_, c)| mode_of(c)));
        let wait_policy = match q.lock.as_ref().or(q.lock_of.first().map(|(_, c)| c)) {
            Some(
                &LockClause::ForUpdate { nowait: true, .. }
                | &LockClause::ForShare { nowait: true, .. },
            ) => WaitPolicy::NoWait,
            Some(
                &LockClause::ForUpdate {
                    skip_locked: true, ..
                }
                | &LockClause::ForShare {
                    skip_locked: true, ..
                },
            ) => WaitPolicy::SkipLocked,
            _ => WaitPolicy::Wait,
        };
        // FROM: a list of tables joined left to right.
        let mut leaves: Vec<(TableRef, JoinKind, Option<Expr>)> = Vec::new();
        for (i, tr) in q.from.iter().enumerate() {
            flatten(
                tr,
                if i == 0 {
                    JoinKind::Inner
                } else {
                    JoinKind::Cross
                },
                None,
                &mut leaves,
            );
        }
        let mut scope: Vec<ScopeTable> = Vec::new();
        let mut sources: Vec<Source> = Vec::new();
        let mut index_use: Vec<IndexUse> = Vec::new();
        let mut width = 0;
        // The tables read with column privileges only (access.rs A3), by scope position.
        let mut column_checks: Vec<usize> = Vec::new();
        for (tr, kind, on) in &leaves {
            match tr {
                // The previous round of the recursive CTE being run (recursive.rs).
                TableRef::Table { name, alias, .. }
                    if name.db.is_none() && self.cte_work.iter().any(|b| b.0 == name.name) =>
                {
                    let (cols, rows) = self
                        .cte_work
                        .iter()
                        .rev()
                        .find(|b| b.0 == name.name)
                        .map(|b| (b.1.clone(), b.2.clone()))
                        .unwrap_or_default();
                    let shown = alias.clone().unwrap_or_else(|| name.name.clone());
                    let st = ScopeTable::of_result(shown, String::new(), &cols, width);
                    width += st.columns.len();
                    sources.push(Source::Rows(Held::Vec(rows), *kind, on.clone()));
                    index_use.push(IndexUse::default());
                    scope.push(st);
                }
                TableRef::Table { name, alias, hints } => {
                    let db = self.db_of(name)?;
                    // Tables computed at each read: information_schema, performance_schema
                    // and the `mysql` account tables (accounts.rs U2).
                    let system = db.eq_ignore_ascii_case("information_schema")
                        || db.eq_ignore_ascii_case("performance_schema");
                    if !system {
                        let by_column =
                            self.check_table_or_columns(&db, &name.name, crate::privs::SELECT)?;
                        if by_column != 0 {
                            column_checks.push(scope.len());
                        }
                    }
                    let computed = if system {
                        Some(self.system_schema_table(&db, &name.name)?)
                    } else if super::accounts::is_account_table(&db, &name.name) {
                        Some(self.account_table(&name.name)?)
                    } else {
                        None
                    };
                    if let Some((cols, rows)) = computed {
                        let shown = alias.clone().unwrap_or_else(|| name.name.clone());
                        let st = ScopeTable::of_result(shown, db.clone(), &cols, width);
                        width += st.columns.len();
                        sources.push(Source::Rows(Held::Vec(rows), *kind, on.clone()));
                        index_use.push(IndexUse::default());
                        scope.push(st);
                        continue;
                    }
                    let t = match self.open_table(&db, &name.name) {
                        Ok(t) => t,
                        Err(e) => match self.server.catalog.view(&db, &name.name) {
                            Some(v) if e.code == ER_NO_SUCH_TABLE.code => {
                                let (cols, rows) = self.view_rows(&v, params)?;
                                let shown = alias.clone().unwrap_or_else(|| name.name.clone());
                                let st = ScopeTable::of_result(shown, db, &cols, width);
                                width += st.columns.len();
                                sources.push(Source::Rows(Held::of(rows), *kind, on.clone()));
                                index_use.push(IndexUse::default());
                                scope.push(st);
                                continue;
                            }
                            _ => return Err(e),
                        },
                    };
                    let shown = alias.as_deref().unwrap_or(&name.name);
                    index_use.push(IndexUse::resolve(&t, hints, shown)?);
                    tables.push((db, name.name.clone()));
                    let st =
                        ScopeTable::of_table(&t, alias.as_deref().unwrap_or(&name.name), width);
                    width += st.columns.len();
                    sources.push(Source::Table(t, *kind, on.clone()));
                    scope.push(st);
                }
                TableRef::Derived { .. } | TableRef::Recursive { .. } | TableRef::SetOp { .. } => {
                    let (alias, (cols, rows)) = match tr {
                        TableRef::SetOp {
                            op,
                            all,
                            left,
                            right,
                            alias,
                        } => {
                            let (cols, rows) =
                                self.set_operation(*op, *all, left, right, params)?;
                            (alias, (cols, Held::of(rows)))
                        }
                        TableRef::Recursive { cte, alias } => {
                            let (cols, rows) = self.recursive_cte(cte, params)?;
                            (alias, (cols, Held::of(rows)))
                        }
                        TableRef::Derived { subquery, alias } => {
                            let (cols, rows) = self.select_stored(subquery, params)?;
                            (alias, (cols, Held::of(rows)))
                        }
                        _ => unreachable!("matched above"),
                    };
                    let st = ScopeTable::of_result(alias.clone(), String::new(), &cols, width);
                    width += st.columns.len();
                    sources.push(Source::Rows(rows, *kind, on.clone()));
                    index_use.push(IndexUse::default());
                    scope.push(st);
                }
                TableRef::JsonTable(jt) => {
                    let coll = self.vars.collation_connection().to_string();
                    let spec = JsonTableSpec::compile(jt, &coll, self.vars.sql_mode())?;
                    // The document may read the FROM items before this one (LATERAL); it
                    // holds no subquery (the parser refuses one).
                    let expr = Compiler::new(&scope, "from clause")
                        .compile(&jt.expr, self)?
                        .0;
                    let mut reads = vec![false; width];
                    mark_columns(&expr, &mut reads);
                    let lateral = reads.contains(&true);
                    if lateral && *kind == JoinKind::Right {
                        return Err(SqlError::new(ER_TF_FORBIDDEN_JOIN_TYPE, &[&jt.alias]));
                    }
                    let st = ScopeTable {
                        name: jt.alias.clone(),
                        db: String::new(),
                        columns: spec
                            .columns
                            .iter()
                            .map(|(n, t)| (n.clone(), EType::Column(Box::new(t.clone())), false))
                            .collect(),
                        offset: width,
                        table: None,
                    };
                    width += st.columns.len();
                    let src = JsonSource {
                        spec,
                        expr,
                        lateral,
                    };
                    sources.push(Source::Json(Box::new(src), *kind, on.clone()));
                    index_use.push(IndexUse::default());
                    scope.push(st);
                }
                TableRef::Join { .. } => unreachable!("flattened"),
            }
        }
        for (i, st) in scope.iter().enumerate() {
            if scope[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&st.name))
            {
                return Err(SqlError::new(ER_NONUNIQ_TABLE, &[&st.name]));
            }
        }
        // S16: an inner join of base tables is read in the order statistics make cheapest (its
        // ON conditions join WHERE); `*` still lists the tables in FROM order.
        let join_perm = self.join_order(q, &scope, &sources)?;
        let mut moved_on = Vec::new();
        if let Some(perm) = &join_perm {
            sources = permuted(sources, perm);
            scope = permuted(scope, perm);
            index_use = permuted(index_use, perm);
            tables = permuted(tables, perm);
            column_checks = (column_checks.iter())
                .filter_map(|c| perm.iter().position(|p| p == c))
                .collect();
            let mut at = 0;
            for (src, st) in sources.iter_mut().zip(scope.iter_mut()) {
                st.offset = at;
                at += st.columns.len();
                moved_on.extend(src.on_mut().take());
                if let Source::Table(_, kind, _) = src {
                    *kind = JoinKind::Inner;
                }
            }
        }
        // How each table is read: the locking clause naming it (FOR UPDATE OF t), else the
        // one naming none.
        for (i, (name, _)) in q.lock_of.iter().enumerate() {
            let shown = format!("`{name}`");
            if !scope.iter().any(|st| st.name.eq_ignore_ascii_case(name)) {
                return Err(SqlError::new(ER_UNRESOLVED_TABLE_LOCK, &[&shown]));
            }
            if q.lock_of[..i]
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                return Err(SqlError::new(ER_DUPLICATE_TABLE_LOCK, &[&shown]));
            }
        }
        let table_locks: Vec<Option<LockRead>> = scope
            .iter()
            .map(|st| {
                match q
                    .lock_of
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&st.name))
                {
                    Some((_, c)) => Some(mode_of(c)),
                    None => default_lock,
                }
            })
            .collect();
        let mut joins = JoinColumns {
            scope: &scope,
            next: 0,
            hidden: Vec::new(),
            conds: vec![Vec::new(); scope.len()],
        };
        let mut star = Vec::new();
        for tr in &q.from {
            star.extend(joins.visit(tr)?);
        }
        if let Some(perm) = &join_perm {
            // (No USING or NATURAL join here: every column of every table, in FROM order.)
            star = (0..perm.len())
                .filter_map(|i| perm.iter().position(|&p| p == i))
                .flat_map(|k| {
                    let st = &scope[k];
                    (0..st.columns.len())
                        .filter(|&c| !st.columns[c].2)
                        .map(move |c| st.offset + c)
                })
                .collect();
        }
        let (hidden, using_conds) = (joins.hidden, joins.conds);
        for (src, extra) in sources.iter_mut().zip(using_conds) {
            let on = src.on_mut();
            for c in extra {
                *on = Some(match on.take() {
                    Some(o) => Expr::Binary {
                        op: BinaryOp::And,
                        left: Box::new(o),
                        right: Box::new(c),
                    },
                    None => c,
                });
            }
        }
        let compiler = |clause| {
            let mut c = Compiler::new(&scope, clause);
            c.hidden = &hidden;
            c
        };
        let mut where_conds = Vec::new();
        if let Some(w) = &q.selection {
            conjuncts(w, &mut where_conds);
        }
        for on in moved_on {
            conjuncts(&on, &mut where_conds);
        }
        // An EXISTS that reads fewer rows as an uncorrelated IN (semijoin.rs EJ1).
        for i in 0..where_conds.len() {
            let at = super::semijoin::Enclosing {
                conds: &where_conds,
                scope: &scope,
                params,
            };
            if let Some(e) = self.exists_to_in_within(&where_conds[i], &at)? {
                where_conds[i] = e;
            }
        }
        // Compile WHERE over the whole row; conjuncts with correlated subqueries apart, tested
        // once the join is done (they need the session to run).
        let (mut where_c, mut where_sub) = (None, None);
        // The conjuncts without subqueries, one by one (tested early in a join, below).
        let mut where_parts: Vec<CExpr> = Vec::new();
        // `x IN (SELECT ...)` as the list of its values, for the planner (`in_as_list`).
        let mut as_lists = Vec::new();
        for (i, c) in where_conds.iter().enumerate() {
            let ce = compiler("where clause").compile(c, self)?.0;
            if let Expr::InSubquery { expr, .. } = c {
                if matches!(**expr, Expr::Column { .. }) {
                    let ty = compiler("where clause").compile(expr, self)?.1;
                    if let Some(list) = in_as_list(c, &ty, &ce) {
                        as_lists.push((i, list));
                    }
                }
            }
            if !ce.has_sub() {
                where_parts.push(ce.clone());
            }
            let part = if ce.has_sub() {
                &mut where_sub
            } else {
                &mut where_c
            };
            *part = Some(match part.take() {
                Some(p) => CExpr::And(Box::new(p), Box::new(ce)),
                None => ce,
            });
        }
        // (EXPLAIN shows the subqueries as compiled.)
        let where_shown = (!as_lists.is_empty()).then(|| where_conds.clone());
        for (i, list) in as_lists {
            where_conds[i] = list;
        }
        // Select list (with aggregates and window functions).
        let mut aggs: Vec<AggSpec> = Vec::new();
        let mut windows: Vec<WinSpec> = Vec::new();
        let mut items: Vec<(CExpr, Column)> = Vec::new();
        // Columns read outside aggregates: (row position, number of the select item).
        let mut bare: Vec<(usize, usize)> = Vec::new();
        {
            for it in &q.items {
                match it {
                    SelectItem::Wildcard | SelectItem::QualifiedWildcard(_) => {
                        let only = match it {
                            SelectItem::QualifiedWildcard(n) => Some(n),
                            _ => None,
                        };
                        if scope.is_empty() {
                            return Err(SqlError::new(ER_NO_TABLES_USED, &[]));
                        }
                        let mut any = false;
                        let positions: Vec<usize> = match only {
                            Some(n) => scope
                                .iter()
                                .filter(|st| n.eq_ignore_ascii_case(&st.name))
                                .flat_map(|st| {
                                    (0..st.columns.len())
                                        .filter(|&i| !st.columns[i].2)
                                        .map(|i| st.offset + i)
                                })
                                .collect(),
                            None => star.clone(),
                        };
                        for p in positions {
                            let Some(st) = scope
                                .iter()
                                .find(|s| p >= s.offset && p < s.offset + s.columns.len())
                            else {
                                continue;
                            };
                            any = true;
                            let (n, ty, _) = &st.columns[p - st.offset];
                            bare.push((p, items.len() + 1));
                            items.push((CExpr::Col(p), Column::new(n, ty, st)));
                        }
                        if only.is_some_and(|n| {
                            scope.iter().any(|st| n.eq_ignore_ascii_case(&st.name))
                        }) {
                            any = true;
                        }
                        if !any {
                            let n = only.cloned().unwrap_or_default();
                            return Err(SqlError::new(ER_BAD_TABLE_ERROR, &[&n]));
                        }
                    }
                    SelectItem::Expr { expr, alias, text } => {
                        let mut c = compiler("field list");
                        c.aggs = Some(&mut aggs);
                        c.windows = Some(&mut windows);
                        let (ce, ty) = c.compile(expr, self)?;
                        // ONLY_FULL_GROUP_BY accepts an expression that is a GROUP BY one.
                        let position = (items.len() + 1).to_string();
                        let grouped = q.group_by.iter().any(|g| {
                            g == expr
                                || matches!(g, Expr::Literal(ast::Literal::Number(n)) if *n == position)
                                || matches!((g, alias), (Expr::Column { table: None, name }, Some(a))
                                    if name.eq_ignore_ascii_case(a))
                        });
                        if !grouped {
                            let item = items.len() + 1;
                            bare.extend(c.bare_columns.into_iter().map(|p| (p, item)));
                        }
                        // A column is named by its own name (`t.c` shows as `c`).
                        let name = match (alias, expr) {
                            (Some(a), _) => a.clone(),
                            (None, Expr::Column { name, .. }) => name.clone(),
                            (None, _) => text.clone(),
                        };
                        let mut col = Column::expr(&name, &ty);
                        if let (Expr::Column { name: cn, .. }, CExpr::Col(pos)) = (expr, &ce) {
                            if let Some(st) = scope
                                .iter()
                                .find(|s| *pos >= s.offset && *pos < s.offset + s.columns.len())
                            {
                                col = Column::new(cn, &ty, st);
                                col.name = name;
                            }
                        }
                        items.push((ce, col));
                    }
                }
            }
        }
        let aliases: Vec<(String, CExpr, EType)> = items
            .iter()
            .map(|(c, col)| (col.name.clone(), c.clone(), col.ety.clone()))
            .collect();
        // GROUP BY expressions.
        // Each with the collation its values are grouped under.
        let mut group: Vec<(CExpr, Collation)> = Vec::new();
        let mut group_cols: Vec<usize> = Vec::new();
        for g in &q.group_by {
            if let Expr::Literal(ast::Literal::Number(n)) = g {
                let i: usize = n.parse().unwrap_or(0);
                let Some((c, col)) = items.get(i.wrapping_sub(1)) else {
                    return Err(SqlError::new(ER_BAD_FIELD_ERROR, &[n, &"group statement"]));
                };
                group.push((c.clone(), col.ety.collation()));
                if let CExpr::Col(p) = c {
                    group_cols.push(*p);
                }
                continue;
            }
            let mut c = compiler("group statement");
            c.aliases = &aliases;
            let (ce, ty) = c.compile(g, self)?;
            if let CExpr::Col(p) = ce {
                group_cols.push(p);
            }
            group.push((ce, ty.collation()));
        }
        let having = match &q.having {
            Some(h) => {
                let mut c = compiler("having clause");
                c.aggs = Some(&mut aggs);
                c.aliases = &aliases;
                Some(c.compile(h, self)?.0)
            }
            None => None,
        };
        let mut order: Vec<(CExpr, bool, Collation)> = Vec::new();
        for OrderItem { expr, desc } in &q.order_by {
            if let Expr::Literal(ast::Literal::Number(n)) = expr {
                let i: usize = n.parse().unwrap_or(0);
                let Some((c, col)) = items.get(i.wrapping_sub(1)) else {
                    return Err(SqlError::new(ER_BAD_FIELD_ERROR, &[n, &"order clause"]));
                };
                // An ENUM sorts by its index, as in MySQL.
                let (c, ty) = enum_as_number(c.clone(), col.ety.clone());
                order.push((c, *desc, ty.collation()));
                continue;
            }
            let mut c = compiler("order clause");
            c.aggs = Some(&mut aggs);
            c.windows = Some(&mut windows);
            c.aliases = &aliases;
            let (ce, ty) = c.compile(expr, self)?;
            let (ce, ty) = enum_as_number(ce, ty);
            order.push((ce, *desc, ty.collation()));
        }
        let grouped = !group.is_empty() || !aggs.is_empty();
        if grouped && self.vars.sql_mode().has(types::SqlMode::ONLY_FULL_GROUP_BY) {
            if let Some(&(p, item)) = bare.iter().find(|(p, _)| !group_cols.contains(p)) {
                let name = scope
                    .iter()
                    .find(|s| p >= s.offset && p < s.offset + s.columns.len())
                    .map(|s| {
                        // MySQL names the column with its database: 'db.t.c'.
                        let col = &s.columns[p - s.offset].0;
                        if s.db.is_empty() {
                            format!("{}.{col}", s.name)
                        } else {
                            format!("{}.{}.{col}", s.db, s.name)
                        }
                    })
                    .unwrap_or_default();
                return Err(if group.is_empty() {
                    SqlError::new(ER_MIX_OF_GROUP_FUNC_AND_FIELDS, &[&item, &name])
                } else {
                    SqlError::new(ER_WRONG_FIELD_WITH_GROUP, &[&item, &"SELECT list", &name])
                });
            }
        }
        let limit_expr = |e: &Option<Expr>, s: &mut Session| -> Result<Option<CExpr>, SqlError> {
            match e {
                Some(e) => Ok(Some(Compiler::new(&[], "where clause").compile(e, s)?.0)),
                None => Ok(None),
            }
        };
        let (limit, offset) = (limit_expr(&q.limit, self)?, limit_expr(&q.offset, self)?);
        let any_right = sources.iter().any(|s| s.join().0 == JoinKind::Right);
        // ON clauses, each over the tables up to its own.
        let mut on_cs = Vec::with_capacity(sources.len());
        for (si, src) in sources.iter().enumerate() {
            on_cs.push(match src.join().1 {
                Some(e) => {
                    let mut c = Compiler::new(&scope[..=si], "on clause");
                    c.hidden = &hidden;
                    let ce = c.compile(e, self)?.0;
                    if ce.has_sub() {
                        return Err(SqlError::new(
                            ER_NOT_SUPPORTED_YET,
                            &[&"correlated subqueries in ON"],
                        ));
                    }
                    Some(ce)
                }
                None => None,
            });
        }
        // S15: WHERE conjuncts go to the first join level where all they read is known.
        if let Some(rest) = push_where(&scope, &sources, &mut on_cs, where_parts) {
            where_c = rest;
        }
        // Columns the statement reads: the others are not converted from their stored form.
        let mut used = vec![false; width];
        {
            let aggs_args = aggs.iter().filter_map(|a| a.arg.as_ref());
            let exprs = items.iter().map(|i| &i.0);
            let exprs = exprs.chain(group.iter().map(|g| &g.0)).chain(aggs_args);
            let exprs = exprs.chain(order.iter().map(|o| &o.0));
            let exprs = exprs.chain(where_c.iter()).chain(having.iter());
            let exprs = exprs.chain(where_sub.iter());
            let exprs = exprs.chain(aggs.iter().flat_map(|a| a.order.iter().map(|o| &o.0)));
            let exprs = exprs.chain(windows.iter().flat_map(WinSpec::exprs));
            let documents = sources.iter().filter_map(|s| match s {
                Source::Json(js, _, _) => Some(&js.expr),
                _ => None,
            });
            for e in exprs.chain(on_cs.iter().flatten()).chain(documents) {
                mark_columns(e, &mut used);
            }
        }
        for &si in &column_checks {
            self.check_read_columns(&scope[si], &used)?;
        }
        // ORDER BY columns of the first table only, in one direction: an index of that table
        // may deliver the rows in order (P2). Under GROUP BY, the grouping columns (P4).
        let first_col = |c: &CExpr| match (c, sources.first()) {
            (CExpr::Col(p), Some(Source::Table(t, _, _))) if *p < scope[0].columns.len() => {
                let ty = &t.columns[*p].ty;
                (!matches!(ty.data_type(), "enum" | "set")).then_some(*p)
            }
            _ => None,
        };
        let order_cols = order
            .iter()
            .map(|(c, desc, _)| Some((first_col(c)?, *desc)))
            .collect::<Option<Vec<_>>>()
            .filter(|o| o.iter().all(|x| x.1 == o[0].1));
        let late_subs = having.as_ref().is_some_and(CExpr::has_sub)
            || items.iter().any(|(c, _)| c.has_sub())
            || order.iter().any(|o| o.0.has_sub());
        let group_subs = group
            .iter()
            .map(|g| &g.0)
            .chain(aggs.iter().filter_map(|a| a.arg.as_ref()))
            .any(CExpr::has_sub);
        // The columns whose equal values must come together: GROUP BY's, or DISTINCT's when
        // it selects only columns of the first table (P4).
        let plain = where_sub.is_none() && !late_subs && windows.is_empty();
        let key_cols: Option<Vec<usize>> = if grouped {
            (plain && !group_subs)
                .then(|| group.iter().map(|g| first_col(&g.0)).collect())
                .flatten()
        } else if q.distinct && plain && having.is_none() {
            items.iter().map(|(c, _)| first_col(c)).collect()
        } else {
            None
        };
        let (first_order, order_follows, keys_adjacent) = match key_cols {
            _ if any_right => (None, false, false),
            Some(cols) if !cols.is_empty() => match order_cols {
                // ORDER BY only those columns: they lead, the others follow.
                Some(o) if o.iter().all(|(c, _)| cols.contains(c)) => {
                    let dir = o.first().is_some_and(|x| x.1);
                    let rest = cols.iter().filter(|c| !o.iter().any(|x| x.0 == **c));
                    let mut v = o.clone();
                    v.extend(rest.map(|&c| (c, dir)));
                    (Some(v), true, true)
                }
                _ if grouped => (
                    Some(cols.iter().map(|&c| (c, false)).collect()),
                    false,
                    true,
                ),
                _ => (order_cols.filter(|o| !o.is_empty()), true, false),
            },
            _ if !grouped => (order_cols.filter(|o| !o.is_empty()), true, false),
            _ => (None, false, false),
        };
        let base_only = sources.iter().all(|s| matches!(s, Source::Table(..)));
        let moved = moved_columns(&items, width);
        // S13: MIN and MAX of columns of one table read without locks, nothing else read
        // from its rows (an ENUM or SET is compared as text, not in its index's order).
        let reads_rows = |e: &CExpr| {
            let mut u = vec![false; width];
            mark_columns(e, &mut u);
            u.contains(&true) || e.has_sub()
        };
        let min_max = match &sources[..] {
            [Source::Table(t, _, None)]
                if lock.is_none()
                    && grouped
                    && group.is_empty()
                    && windows.is_empty()
                    && where_sub.is_none()
                    && !(items.iter().map(|i| &i.0))
                        .chain(having.iter())
                        .chain(order.iter().map(|o| &o.0))
                        .any(reads_rows) =>
            {
                (aggs.iter())
                    .map(|a| match (a.kind, &a.arg) {
                        (AggKind::Min | AggKind::Max, Some(CExpr::Col(c)))
                            if *c < t.columns.len()
                                && !matches!(t.columns[*c].ty.data_type(), "enum" | "set") =>
                        {
                            Some(*c)
                        }
                        _ => None,
                    })
                    .collect::<Option<Vec<usize>>>()
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        // S14: GROUP BY (or DISTINCT) of one table's columns, with MIN/MAX of columns and
        // COUNT/SUM/AVG(DISTINCT) of grouping-like columns, nothing else read from the rows.
        let loose = match &sources[..] {
            [Source::Table(t, _, None)]
                if lock.is_none()
                    && windows.is_empty()
                    && where_sub.is_none()
                    && !late_subs
                    && !group_subs
                    && min_max.is_empty() =>
            {
                let ncols = t.columns.len();
                let col = |e: &CExpr| match e {
                    CExpr::Col(c) if *c < ncols => Some(*c),
                    _ => None,
                };
                let mut spec = LooseSpec {
                    keys: Vec::new(),
                    extremes: Vec::new(),
                    where_cols: Vec::new(),
                };
                let mut ok = grouped || q.distinct;
                if grouped {
                    for g in &group {
                        match col(&g.0) {
                            Some(c) => spec.keys.push(c),
                            None => ok = false,
                        }
                    }
                    for a in &aggs {
                        match (a.kind, a.arg.as_ref().and_then(col)) {
                            (AggKind::Min, Some(c)) => spec.extremes.push((c, false)),
                            (AggKind::Max, Some(c)) => spec.extremes.push((c, true)),
                            (AggKind::Count | AggKind::Sum | AggKind::Avg, Some(c))
                                if a.distinct =>
                            {
                                spec.keys.push(c)
                            }
                            _ => ok = false,
                        }
                    }
                } else {
                    for (e, _) in &items {
                        match col(e) {
                            Some(c) => spec.keys.push(c),
                            None => ok = false,
                        }
                    }
                }
                let mut read = vec![false; width];
                let rest = items.iter().map(|i| &i.0).chain(having.iter());
                for e in rest.chain(order.iter().map(|o| &o.0)) {
                    mark_columns(e, &mut read);
                }
                ok &= !spec.keys.is_empty()
                    && (read.iter().enumerate()).all(|(c, r)| !r || spec.keys.contains(&c));
                let mut in_where = vec![false; width];
                if let Some(wc) = &where_c {
                    mark_columns(wc, &mut in_where);
                }
                spec.where_cols = (0..width).filter(|&c| in_where[c]).collect();
                ok.then_some(spec)
            }
            _ => None,
        };
        Ok(SelectPlan {
            lock,
            table_locks,
            wait_policy,
            scope,
            sources,
            tables,
            where_conds,
            where_shown,
            where_bound: None,
            where_c,
            where_sub,
            aggs,
            windows,
            items,
            moved,
            group,
            having,
            order,
            first_order,
            order_follows,
            keys_adjacent,
            group_subs,
            late_subs,
            grouped,
            min_max,
            loose,
            distinct: q.distinct,
            limit,
            offset,
            any_right,
            on_cs,
            used,
            index_use,
            width,
            basis: self.basis(start, params, base_only),
        })
    }

    /// The access path of each base table of `plan` as `run_select` chooses it. A table after
    /// the first whose conditions on constants give no path is looked up per row of the
    /// tables before it: its path is planned with sample values for their columns
    /// (`PathShown::per_row`).
    pub(crate) fn explain_paths(
        &mut self,
        plan: &SelectPlan,
        params: &[Datum],
    ) -> Result<Vec<PathShown>, SqlError> {
        let limited = plan.limit.is_some() && plan.order_follows;
        let single = plan.scope.len() == 1;
        let mut out = Vec::new();
        // A correlated subquery's plan (its enclosing columns parameters: mod.rs
        // `SubCompiled`): the first table may be looked up per enclosing row, and its `ref`
        // names the enclosing column.
        let outer = (self.frames.last())
            .filter(|f| f.base.is_some())
            .map(|f| f.scope.0.clone());
        let bound_where = match outer {
            Some(_) => self.where_bound(plan).into_owned(),
            None => Vec::new(),
        };
        let ref_scope: Vec<ScopeTable> = match &outer {
            Some(o) => o.iter().chain(&plan.scope).cloned().collect(),
            None => plan.scope.clone(),
        };
        for (si, src) in plan.sources.iter().enumerate() {
            let Source::Table(t, kind, on) = src else {
                continue;
            };
            let mut conds = Vec::new();
            if *kind != JoinKind::Left && *kind != JoinKind::Right && !plan.any_right {
                conds.extend(plan.where_conds.iter().cloned());
            }
            if let Some(o) = on {
                conjuncts(o, &mut conds);
            }
            let name = plan.scope[si].name.clone();
            let st = &plan.scope[si];
            let used = &plan.used[st.offset..st.offset + st.columns.len()];
            let needs = PathNeeds {
                used: plan.table_locks[si].is_none().then_some(used),
                hints: &plan.index_use[si],
            };
            let mut per_row = false;
            let level = HashLevel {
                si,
                kind: *kind,
                any_right: plan.any_right,
                locking: plan.table_locks[si].is_some(),
            };
            let hash_join = hash_joined(t, st, &level, &plan.on_cs[si], &plan.where_c);
            let loose = match si {
                0 => self.loose_access(plan, &conds, params)?,
                _ => None,
            };
            let (access, in_order) = if let Some(a) = loose {
                match plan
                    .first_order
                    .as_deref()
                    .and_then(|o| scan_order(t, &a, o))
                {
                    Some(forward) => (oriented(a, forward), true),
                    None => (a, false),
                }
            } else if si == 0 && *kind != JoinKind::Right {
                let order = plan.first_order.as_deref();
                let planned =
                    self.plan_ordered(t, &name, single, &conds, params, order, limited, needs)?;
                if outer.is_some() {
                    // As each run plans it; looked up per enclosing row when the enclosing
                    // values (samples here) change the path.
                    let mut bound = Vec::new();
                    if *kind != JoinKind::Left && !plan.any_right {
                        bound.extend(bound_where.iter().cloned());
                    }
                    if let Some(o) = on {
                        conjuncts(o, &mut bound);
                    }
                    let joined =
                        self.plan_ordered(t, &name, single, &bound, params, order, limited, needs)?;
                    per_row = format!("{:?}", joined.0) != format!("{:?}", planned.0);
                    joined
                } else {
                    planned
                }
            } else {
                let mut access = self.plan_access(t, &name, single, &conds, params, needs)?;
                if hash_join {
                    // Read whole, once (hashjoin.rs H4).
                    access = Access::Range {
                        index: None,
                        from: KeyBound::Unbounded,
                        to: KeyBound::Unbounded,
                        forward: true,
                    };
                } else if access.is_full_scan() && *kind != JoinKind::Right {
                    let earlier = &plan.scope[..si];
                    let samples: Vec<Datum> = earlier
                        .iter()
                        .flat_map(|st| st.columns.iter().map(|c| sample_value(&c.1)))
                        .collect();
                    let mut refs = Vec::new();
                    let bound: Vec<Expr> = conds
                        .iter()
                        .map(|c| param_outer(c, earlier, params.len(), &mut refs))
                        .collect();
                    let mut ext = params.to_vec();
                    ext.extend(refs.iter().map(|&p| samples[p].clone()));
                    let joined = self.plan_access(t, &name, single, &bound, &ext, needs)?;
                    per_row = !joined.is_full_scan();
                    if per_row {
                        access = joined;
                    }
                }
                (access, false)
            };
            let sorted = in_order && plan.order_follows;
            let later: Vec<&str> = plan.scope[si + 1..]
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            let (key_len, key_ref, filtered) = explain_columns(
                t, &name, single, &access, &conds, per_row, &ref_scope, &later,
            );
            let covering = plan.table_locks[si].is_none()
                && matches!(&access, Access::Range { index: Some(n), .. } if covers(t, n, used));
            out.push(PathShown {
                source: si,
                table: t.clone(),
                // A merged view or derived table shows as its base table (merge.rs G2).
                name: if name.starts_with('\0') {
                    t.name.clone()
                } else {
                    name
                },
                covering,
                conditions: !conds.is_empty(),
                loose: matches!(access, Access::Loose(_)),
                key_len,
                key_ref,
                filtered,
                access,
                filesort: si == 0 && !plan.order.is_empty() && !sorted,
                ordered: si == 0 && in_order,
                temporary: si == 0
                    && (plan.distinct
                        && !(in_order && plan.keys_adjacent && plan.group.is_empty())
                        || !plan.group.is_empty() && !in_order),
                per_row,
                hash_join,
            });
        }
        Ok(out)
    }

    /// The sources of `plan` that are no base table, for EXPLAIN: (place among the sources,
    /// what EXPLAIN names it, its rows: held ones counted, a JSON_TABLE's None).
    /// Derived tables and CTEs are named `<derivedN>` as MySQL numbers them (N from 2).
    pub(crate) fn explain_held(plan: &SelectPlan) -> Vec<(usize, String, Option<u64>)> {
        let mut derived = 1;
        let mut out = Vec::new();
        for (si, src) in plan.sources.iter().enumerate() {
            match src {
                Source::Table(..) => {}
                Source::Rows(held, ..) => {
                    derived += 1;
                    out.push((si, format!("<derived{derived}>"), Some(held.len() as u64)));
                }
                Source::Json(..) => out.push((si, plan.scope[si].name.clone(), None)),
            }
        }
        out
    }

    /// A3 (access.rs): SELECT on each column of table `st` the statement reads (`used`).
    fn check_read_columns(&mut self, st: &ScopeTable, used: &[bool]) -> Result<(), SqlError> {
        let Some(t) = &st.table else {
            return Ok(());
        };
        let read = (st.columns.iter().enumerate())
            .filter(|(i, c)| !c.2 && used.get(st.offset + i) == Some(&true))
            .map(|(_, c)| c.0.as_str());
        self.check_columns(&st.db, &t.name, crate::privs::SELECT, read)
    }

    /// S13: the rows a query of MIN and MAX alone (`SelectPlan::min_max`) needs, one per
    /// aggregate: the first row, in the aggregate's direction, of an index range where its
    /// column follows the key parts WHERE fixes by equality, past the column's NULLs. None
    /// (the table is read as usual) unless WHERE holds nothing but those equalities and
    /// bounds on the column (MySQL's rule for "Select tables optimized away"). Each row is
    /// still tested against WHERE (S1), the next one taken if it fails, so MIN and MAX over
    /// these rows are those over every row WHERE accepts. The flag: some row passes WHERE.
    pub(crate) fn min_max_rows(
        &mut self,
        plan: &SelectPlan,
        params: &[Datum],
    ) -> Result<Option<Extremes>, SqlError> {
        let (Some(Source::Table(t, _, _)), false) = (plan.sources.first(), plan.min_max.is_empty())
        else {
            return Ok(None);
        };
        // Under SERIALIZABLE a read locks its whole range: read the table as a locking scan.
        if self.trx()?.reads_lock() {
            return Ok(None);
        }
        let st = &plan.scope[0];
        // `col IS NOT NULL` conjuncts: the ranges begin after NULLs anyway.
        let mut not_null = Vec::new();
        let mut conds = Vec::new();
        for c in self.where_bound(plan).iter() {
            if let Expr::IsNull {
                expr,
                negated: true,
            } = c
            {
                if let Some(col) = col_of(expr, &st.name, t, true) {
                    not_null.push(col);
                    continue;
                }
            }
            conds.push(c.clone());
        }
        let mut all = true;
        let Some(sargs) = self.sargs_of(t, &st.name, true, &conds, params, &mut all)? else {
            // A key compared with NULL: no row.
            return Ok(Some(Extremes {
                rows: Vec::new(),
                matched: false,
            }));
        };
        if !all {
            return Ok(None);
        }
        let indexes = key_indexes(t, &plan.index_use[0]);
        let mut paths = Vec::with_capacity(plan.min_max.len());
        for (a, &c) in plan.aggs.iter().zip(&plan.min_max) {
            let path = indexes.iter().find_map(
                |KeyIndex {
                     name,
                     cols,
                     prefixes,
                 }| {
                    let p = cols.iter().position(|&k| k == c)?;
                    if prefixes.get(p).copied().flatten().is_some() {
                        return None;
                    }
                    // Every condition is on the key parts up to the column, equalities before it.
                    let fits = sargs.iter().all(|(col, ss)| {
                        match cols[..=p].iter().position(|k| k == col) {
                            Some(i) if i < p => ss.iter().all(|s| matches!(s, Sarg::Eq(_))),
                            Some(_) => !ss.iter().any(|s| matches!(s, Sarg::In(_))),
                            None => false,
                        }
                    }) && not_null.iter().all(|col| cols[..=p].contains(col));
                    if !fits {
                        return None;
                    }
                    let (fixed, _, from, to) = key_range(t, &cols[..=p], &sargs);
                    if fixed < p {
                        return None;
                    }
                    let range = |from| Access::Range {
                        index: name.map(str::to_string),
                        from,
                        to: to.clone(),
                        forward: a.kind == AggKind::Min,
                    };
                    if fixed == p && t.columns[c].nullable {
                        // NULLs come first in the index: begin after them.
                        if let KeyBound::Unbounded | KeyBound::Included(_) = from {
                            let mut k = match &from {
                                KeyBound::Included(v) => v.clone(),
                                _ => Vec::new(),
                            };
                            k.push(Value::Null);
                            return Some((range(KeyBound::Excluded(k)), Some(range(from))));
                        }
                    }
                    Some((range(from), None))
                },
            );
            match path {
                Some((access, with_nulls)) => paths.push((c, access, with_nulls)),
                None => return Ok(None),
            }
        }
        let mut w = Warnings::default();
        let mut rows = Vec::with_capacity(paths.len());
        let mut nulls = None;
        for (c, access, with_nulls) in paths {
            if let Some(row) = self.first_passing(plan, access, Some(c), params, &mut w)? {
                rows.push(row);
            }
            nulls = nulls.or(with_nulls);
        }
        // Some row matches WHERE, if only with NULLs in the columns (EXPLAIN then says the
        // tables were optimized away, not that no row matched).
        let matched = match nulls {
            Some(access) if rows.is_empty() => {
                (self.first_passing(plan, access, None, params, &mut w)?).is_some()
            }
            _ => !rows.is_empty(),
        };
        self.warnings.extend(w.0);
        Ok(Some(Extremes { rows, matched }))
    }

    /// S14: a loose scan of an index of the one table of `plan` when the plan allows one
    /// (`SelectPlan::loose`) and one index serves it: the distinct values come from its first
    /// key parts (no column prefix among them), each MIN/MAX column is one of them or the one
    /// after, WHERE reads only them, the index holds every column the statement reads, and
    /// its statistics say a group holds LOOSE_GROUP_ROWS rows or more. `conds`: WHERE's
    /// conjuncts, which may narrow the range.
    fn loose_access(
        &mut self,
        plan: &SelectPlan,
        conds: &[Expr],
        params: &[Datum],
    ) -> Result<Option<Access>, SqlError> {
        let (Some(spec), Some(Source::Table(t, _, _))) = (&plan.loose, plan.sources.first()) else {
            return Ok(None);
        };
        // Under SERIALIZABLE a read locks its whole range: each group's search would lock
        // the rest of the index.
        if self.trx()?.reads_lock() {
            return Ok(None);
        }
        let Some(sargs) = self.sargs_of(t, &plan.scope[0].name, true, conds, params, &mut true)?
        else {
            return Ok(None);
        };
        let used = &plan.used[..t.columns.len()];
        let settings = self.server.vars.stats_settings();
        let st = self.server.catalog.table_stats(t, settings, false)?;
        for ki in key_indexes(t, &plan.index_use[0]) {
            let pos = |c: usize| ki.cols.iter().position(|&k| k == c);
            let Some(parts) = (spec.keys.iter())
                .map(|&c| pos(c))
                .collect::<Option<Vec<_>>>()
                .and_then(|v| v.into_iter().max())
                .map(|p| p + 1)
            else {
                continue;
            };
            let whole = |p: usize| ki.prefixes.get(p).copied().flatten().is_none();
            let (mut min, mut max) = (false, false);
            let mut fits = (0..parts).all(whole)
                && spec
                    .where_cols
                    .iter()
                    .all(|&c| pos(c).is_some_and(|p| p < parts))
                && (ki.name).is_none_or(|n| covers(t, n, used));
            for &(c, is_max) in &spec.extremes {
                match pos(c) {
                    Some(p) if p < parts => {}
                    Some(p) if p == parts && whole(p) => {
                        min |= !is_max;
                        max |= is_max;
                    }
                    _ => fits = false,
                }
            }
            if !fits {
                continue;
            }
            // The statistics of this index (the primary key's come first).
            let ist = match ki.name {
                None => st.indexes.first(),
                Some(n) => st.indexes.iter().skip(1).find(|x| x.name == n),
            };
            let groups = ist
                .and_then(|x| x.n_diff.get(parts - 1).copied())
                .unwrap_or(st.n_rows)
                .max(1);
            if st.n_rows < groups.saturating_mul(LOOSE_GROUP_ROWS) {
                continue;
            }
            let (_, _, from, to) = key_range(t, &ki.cols[..parts], &sargs);
            return Ok(Some(Access::Loose(Box::new(Loose {
                index: ki.name.map(str::to_string),
                parts,
                cols: ki.cols[..(parts + 1).min(ki.cols.len())].to_vec(),
                min,
                max,
                from,
                to,
                forward: true,
                groups,
            }))));
        }
        Ok(None)
    }

    /// The first row `access` reads from the one table of `plan` that passes WHERE, and
    /// holds a value in column `value_in` when given.
    fn first_passing(
        &mut self,
        plan: &SelectPlan,
        access: Access,
        value_in: Option<usize>,
        params: &[Datum],
        w: &mut Warnings,
    ) -> Result<Option<Vec<Datum>>, SqlError> {
        let Some(Source::Table(t, _, _)) = plan.sources.first() else {
            return Ok(None);
        };
        let used = &plan.used[..t.columns.len()];
        let how = ReadHow {
            lock: None,
            semi_consistent: false,
            columns: Some(used),
            limit: None,
            // Usually the first row passes.
            first: Some(1),
            filter: None,
        };
        let mode = self.vars.sql_mode();
        let mut cur = self.open_datums(t, access, how, &mut |_| true)?;
        loop {
            let mut row = Vec::with_capacity(plan.width);
            if !self.pull_into(&mut cur, used, &mut |_| true, &mut row)? {
                break;
            }
            if value_in.is_none_or(|c| !row[c].is_null())
                && pass(&plan.where_c, &row, params, mode, w)?
            {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    /// Runs a compiled SELECT: reads, joins, groups, sorts; returns the rows.
    pub(crate) fn run_select(
        &mut self,
        plan: &SelectPlan,
        params: &[Datum],
    ) -> Result<Vec<Vec<Datum>>, SqlError> {
        Ok(self.run_select_to(plan, params, None)?.0)
    }

    /// `run_select`, sending the rows to `sink` as they are made when the plan allows it
    /// (S6; `cap`: at most this many rows, sql_select_limit). Returns the rows collected, or
    /// none and the number sent.
    pub(crate) fn run_select_to(
        &mut self,
        plan: &SelectPlan,
        params: &[Datum],
        sink: Option<(&mut (dyn super::RowSink + 'static), u64)>,
    ) -> Result<(Vec<Vec<Datum>>, Option<u64>), SqlError> {
        let SelectPlan {
            lock,
            table_locks,
            wait_policy,
            scope,
            sources,
            where_c,
            where_sub,
            aggs,
            windows,
            items,
            moved,
            group,
            having,
            order,
            first_order,
            order_follows,
            keys_adjacent,
            group_subs,
            late_subs,
            grouped,
            distinct,
            limit,
            offset,
            any_right,
            on_cs,
            used,
            index_use,
            width,
            ..
        } = plan;
        let (lock, grouped, distinct, any_right, width) =
            (*lock, *grouped, *distinct, *any_right, *width);
        if lock.is_some() && *wait_policy != WaitPolicy::Wait {
            // For this statement's locking reads (the engine resets it at its end).
            self.trx()?.set_lock_wait_policy(*wait_policy);
        }
        let mode = self.vars.sql_mode();
        let mut w = Warnings::default();
        let limit = match limit {
            Some(e) => Some(e.eval(&Env::new(&[], params, mode), &mut w)?.to_u64(&mut w)),
            None => None,
        };
        let offset = match offset {
            Some(e) => e.eval(&Env::new(&[], params, mode), &mut w)?.to_u64(&mut w),
            None => 0,
        };
        let n_sources = sources.len();
        // The first table's access path is chosen before the join: it may deliver the rows in
        // ORDER BY order, and then no sort is needed and LIMIT stops the reading (P2).
        let plan_where = self.where_bound(plan);
        let mut first_access = None;
        let mut sorted = false;
        let mut groups_in_order = false;
        let mut distinct_in_order = false;
        // MIN/MAX from the ends of index ranges (S13): these rows instead of the join.
        let picked = self.min_max_rows(plan, params)?.map(|p| p.rows);
        if let (Some(Source::Table(t, kind, on)), None) = (sources.first(), &picked) {
            if *kind != JoinKind::Right {
                let mut conds = Vec::new();
                if !any_right {
                    conds.extend(plan_where.iter().cloned());
                }
                if let Some(o) = on {
                    conjuncts(o, &mut conds);
                }
                let single = scope.len() == 1;
                let st = &scope[0];
                let used_here = &used[st.offset..st.offset + st.columns.len()];
                let (access, in_order) = match self.loose_access(plan, &conds, params)? {
                    Some(a) => match first_order.as_deref().and_then(|o| scan_order(t, &a, o)) {
                        Some(forward) => (oriented(a, forward), true),
                        None => (a, false),
                    },
                    None => self.plan_ordered(
                        t,
                        &st.name,
                        single,
                        &conds,
                        params,
                        first_order.as_deref(),
                        limit.is_some() && *order_follows,
                        PathNeeds {
                            used: table_locks[0].is_none().then_some(used_here),
                            hints: &index_use[0],
                        },
                    )?,
                };
                // Window functions leave the rows in their last window's order (W1).
                sorted = in_order && *order_follows && windows.is_empty();
                groups_in_order = in_order && grouped && *keys_adjacent;
                distinct_in_order = in_order && !grouped && distinct && *keys_adjacent;
                first_access = Some(access);
            }
        }
        // Join: produce input rows, left to right. WHERE is applied as soon as the last
        // table's columns are there, so rows it rejects are never kept, and a query without
        // grouping, DISTINCT or a sort stops reading once LIMIT is reached.
        let mut rows: Vec<Vec<Datum>> = vec![Vec::new()];
        let need = match limit {
            Some(l)
                if !grouped
                    && (order.is_empty() || sorted)
                    && !distinct
                    && where_sub.is_none()
                    && windows.is_empty() =>
            {
                Some(l.saturating_add(offset))
            }
            _ => None,
        };
        // ORDER BY ... LIMIT without grouping: the last table's rows are cut down to the
        // first offset + limit in order as they come, so the input is never held whole.
        let top_n = match limit {
            Some(l)
                if !grouped
                    && !order.is_empty()
                    && !sorted
                    && !distinct
                    && where_sub.is_none()
                    && windows.is_empty()
                    && having.is_none()
                    && !order.iter().any(|o| o.0.has_sub()) =>
            {
                Some(usize::try_from(l.saturating_add(offset)).unwrap_or(usize::MAX))
            }
            _ => None,
        };
        // Top-N over one table (S7): the scan reads only the primary key and what WHERE and
        // ORDER BY use; the rows that make the cut are read whole afterwards by their key.
        let deferred: Option<Vec<bool>> = match (&sources[..], top_n) {
            ([Source::Table(t, _, _)], Some(_))
                if table_locks[0].is_none() && !t.has_hidden_pk() && !t.pk().is_empty() =>
            {
                let all = &used[..t.columns.len()];
                let mut narrow = vec![false; all.len()];
                if let Some(wc) = where_c {
                    mark_columns(wc, &mut narrow);
                }
                for (o, _, _) in order.iter() {
                    mark_columns(o, &mut narrow);
                }
                let narrow: Vec<bool> = (0..all.len())
                    .map(|c| narrow[c] && all[c] || t.pk().contains(&c))
                    .collect();
                let saves = all.iter().zip(&narrow).any(|(u, n)| *u && !*n);
                saves.then_some(narrow)
            }
            _ => None,
        };
        if n_sources == 0 && !pass(where_c, &[], params, mode, &mut w)? {
            rows.clear();
        }
        let (group_subs, late_subs) = (*group_subs, *late_subs);
        let tmp = self.tmp_area();
        // GROUP BY and aggregates take the joined rows as they come, so the input is never
        // held whole, unless a subquery has to be bound per row first.
        let grouper = grouped.then(|| {
            let cx = GroupCtx {
                params,
                mode,
                gc_max: self.vars.group_concat_max_len(),
                budget: tmp.budget,
                area: tmp.sort.clone(),
            };
            Grouper::new(group, aggs, cx, groups_in_order)
        });
        let streamed = grouped && where_sub.is_none() && !group_subs;
        // The last stage (finish.rs): HAVING, projection, DISTINCT, ORDER BY, LIMIT, and the
        // client (S6, S8). Window functions apply HAVING themselves, before them (W1).
        let first_rows = limit.map(|l| l.saturating_add(offset));
        let shape = Shape {
            having: if windows.is_empty() {
                having.as_ref()
            } else {
                None
            },
            items,
            moved,
            order,
            sort: !sorted || distinct && !distinct_in_order,
            distinct,
            distinct_in_order,
            first: first_rows,
        };
        let cols = || items.iter().map(|i| i.1.clone()).collect();
        let fin = Finish::new(
            shape,
            params,
            mode,
            &tmp,
            Out::new(sink, cols, offset, limit),
        );
        // The joined rows go straight to the last stage when nothing needs them all first,
        // or to the window stage (W5 in window.rs) when HAVING needs no subquery bound.
        let direct =
            n_sources > 0 && !grouped && where_sub.is_none() && top_n.is_none() && !late_subs;
        // Rows that need a subquery bound per row gather in `out.rows` and go on a batch at a
        // time during the join (S10), unless only the first rows in ORDER BY order are kept.
        let late: Vec<&CExpr> = having
            .iter()
            .chain(items.iter().map(|i| &i.0))
            .chain(order.iter().map(|o| &o.0))
            .filter(|e| e.has_sub())
            .collect();
        let subs =
            (top_n.is_none() && (where_sub.is_some() || group_subs || late_subs)).then(|| {
                SubWork {
                    where_sub: where_sub.as_ref(),
                    group: if group_subs {
                        group
                            .iter()
                            .map(|g| &g.0)
                            .chain(aggs.iter().filter_map(|a| a.arg.as_ref()))
                            .collect()
                    } else {
                        Vec::new()
                    },
                    late: late.clone(),
                    having: having.as_ref().filter(|h| h.has_sub()),
                }
            });
        let win = (!windows.is_empty()).then(|| {
            let cx = window::Ctx {
                params,
                mode,
                gc_max: self.vars.group_concat_max_len(),
                having: having.as_ref(),
                tmp: &tmp,
            };
            Windows::new(windows, cx)
        });
        let mut out = JoinOut {
            where_c,
            order,
            top_n,
            need,
            streamed,
            params,
            mode,
            grouper,
            fin,
            direct,
            win,
            subs,
            rows: Vec::new(),
            cutoff: None,
        };
        if let Some(picked) = picked {
            out.rows = picked;
        } else if n_sources > 0 {
            let j = JoinPlan {
                sources,
                on_cs,
                scope,
                used,
                index_use,
                plan_where: &plan_where,
                first_access: first_access.as_ref(),
                deferred: deferred.as_deref(),
                locks: table_locks,
                any_right,
                hashes: sources.iter().map(|_| std::cell::OnceCell::new()).collect(),
                tables: sources.iter().map(|_| std::cell::OnceCell::new()).collect(),
                last_right: sources.iter().rposition(|s| s.join().0 == JoinKind::Right),
                need,
                params,
                mode,
            };
            self.join_level(&j, 0, Held::Vec(rows), &mut out, &mut w)?;
        } else {
            out.rows = rows;
        }
        if out.subs.is_some() {
            self.drain(&mut out, &mut w)?;
        }
        let (grouper, mut fin, win) = (out.grouper, out.fin, out.win);
        let mut rows = out.rows;
        if let (Some(k), Some(Source::Table(t, _, _)), true) =
            (top_n, sources.first(), deferred.is_some())
        {
            keep_first(&mut rows, k, order, params, mode, &mut w)?;
            rows = self.fetch_whole(t, rows, &used[..t.columns.len()], where_c, params, &mut w)?;
        }
        let mut spilled = false;
        // The rows, or the groups, with their aggregate values.
        let mut groups = match grouper {
            Some(mut grouper) => {
                // Rows not streamed (the first rows under ORDER BY ... LIMIT, or no table at
                // all) go in now; those with subqueries went in through `drain`.
                for r in rows {
                    grouper.add(r, &mut w)?;
                }
                spilled = grouper.spilled();
                Rows::Groups(Box::new(grouper.finish(width)?))
            }
            None => Rows::Plain(rows.into_iter()),
        };
        match win {
            None => {
                while let Some((r, a)) = groups.next(&mut w)? {
                    for e in &late {
                        self.bind_subs(e, &r, &a, params)?;
                    }
                    if !fin.take(r, &a, &[], &mut w)? {
                        break;
                    }
                }
            }
            Some(mut win) => {
                // Window functions see the rows HAVING keeps (W1 in window.rs): those not
                // handed over as they were joined go in now.
                while let Some((r, a)) = groups.next(&mut w)? {
                    if let Some(h) = having.as_ref().filter(|h| h.has_sub()) {
                        self.bind_subs(h, &r, &a, params)?;
                    }
                    win.push(r, a, &mut w)?;
                }
                let mut rows = win.finish(&mut w)?;
                while let Some((r, a, wv)) = rows.next(&mut w)? {
                    for e in &late {
                        self.bind_subs(e, &r, &a, params)?;
                    }
                    if !fin.take(r, &a, &wv, &mut w)? {
                        break;
                    }
                }
                spilled |= rows.spilled();
            }
        }
        let tmp_tables = usize::from(grouped && !group.is_empty() && !groups_in_order)
            + usize::from(distinct && !distinct_in_order)
            + usize::from(!windows.is_empty());
        self.server
            .tmp_tables
            .fetch_add(tmp_tables as u64, AtomicOrdering::Relaxed);
        if spilled || fin.spilled() {
            self.server
                .tmp_disk_tables
                .fetch_add(1, AtomicOrdering::Relaxed);
        }
        let done = fin.end();
        self.warnings.extend(w.0);
        done
    }

    /// Where this statement's temporary results go: the temporary-table budget
    /// (min(tmp_table_size, max_heap_table_size), as MySQL's in-memory internal tables) and
    /// the sort area.
    pub(crate) fn tmp_area(&self) -> TmpArea {
        TmpArea {
            budget: self
                .vars
                .tmp_table_size()
                .min(self.vars.max_heap_table_size()),
            sort: SortArea {
                cap: self.vars.sort_buffer_size(),
                tmpdir: self.server.vars.tmpdir(),
                passes: self.server.sort_merge_passes.clone(),
            },
        }
    }

    pub(crate) fn select_output(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        // A prepared statement's execution reuses the plan it kept, or keeps the one made
        // (P3). SHOW PROFILE shows the planning as "optimizing".
        let kept = self.stmt_plan.take();
        let rewritten = distinct_union(q);
        let q = rewritten.as_ref().unwrap_or(q);
        let (columns, mut rows) = if q.unions.is_empty() && !self.describing() {
            let plan = match kept.clone().flatten() {
                Some(KeptPlan::Select(p)) if self.plan_valid(&p, params)? => p,
                _ => {
                    self.profiler.stage("optimizing");
                    Arc::new(self.compile_select(q, params)?)
                }
            };
            self.profiler.stage("executing");
            // sql_select_limit: an implicit LIMIT on what a top-level SELECT returns.
            let cap = if q.limit.is_none() {
                self.vars.sql_select_limit()
            } else {
                u64::MAX
            };
            let mut sink = self.sink.take();
            let r = self.run_select_to(&plan, params, sink.as_deref_mut().map(|s| (s, cap)));
            self.sink = sink;
            let (rows, sent) = r?;
            if kept.is_some() {
                self.stmt_plan = Some(plan.basis.cacheable.then(|| KeptPlan::Select(plan.clone())));
            }
            if let Some(n) = sent {
                self.found_rows = n;
                return Ok(Output::Streamed { rows: n });
            }
            (plan.columns(), rows)
        } else if self.sink.is_some() && union_all(q) && !self.describing() {
            // UNION ALL: each part's rows go to the client as they are made, under one header.
            self.profiler.stage("executing");
            let cap = self.vars.sql_select_limit();
            let Some(inner) = self.sink.take() else {
                unreachable!("checked above")
            };
            let parts = UnionSink {
                inner,
                begun: false,
            };
            let (parts, r) = self.union_parts(q, params, parts, cap);
            self.sink = Some(parts.inner);
            let (_, sent) = r?;
            self.found_rows = sent;
            return Ok(Output::Streamed { rows: sent });
        } else {
            self.profiler.stage("executing");
            self.select(q, params)?
        };
        // sql_select_limit: an implicit LIMIT on what a top-level SELECT returns.
        if q.limit.is_none() {
            rows.truncate(usize::try_from(self.vars.sql_select_limit()).unwrap_or(usize::MAX));
        }
        self.found_rows = rows.len() as u64;
        Ok(Output::Rows { columns, rows })
    }
}

impl Session {
    /// True if `plan` may run again as it is: the session still compiles the same way and
    /// every table is the engine's table it was made for (else DDL changed it:
    /// Com_stmt_reprepare; a description loaded again after an eviction is the same table);
    /// the privileges are checked again, as each execution does.
    fn plan_valid(&mut self, plan: &SelectPlan, params: &[Datum]) -> Result<bool, SqlError> {
        if !self.basis_holds(&plan.basis, params) {
            return Ok(false);
        }
        let bases = plan.sources.iter().filter_map(|s| match s {
            Source::Table(t, _, _) => Some(t),
            Source::Rows(..) | Source::Json(..) => None,
        });
        let scopes = (plan.sources.iter().zip(&plan.scope))
            .filter(|(s, _)| matches!(s, Source::Table(..)))
            .map(|(_, st)| st);
        for (((db, name), t), st) in plan.tables.iter().zip(bases).zip(scopes) {
            if self.check_table_or_columns(db, name, crate::privs::SELECT)? != 0 {
                self.check_read_columns(st, &plan.used)?;
            }
            if !Arc::ptr_eq(&self.open_table(db, name)?.table, &t.table) {
                self.reprepared();
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The rows of `q` gathered in a `RowBuf` (in memory within the temporary-table budget,
    /// in tmpdir beyond it) as they are made, for INSERT ... SELECT and CREATE TABLE ...
    /// SELECT, which insert them once the SELECT is done.
    pub(crate) fn select_stored(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
    ) -> Result<(Vec<Column>, RowBuf), SqlError> {
        let rewritten = distinct_union(q);
        let q = rewritten.as_ref().unwrap_or(q);
        let tmp = self.tmp_area();
        let mut buf = RowBuf::new(tmp.budget, tmp.sort.tmpdir.clone());
        if union_all(q) && !self.describing() {
            let (buf, r) = self.union_parts(q, params, buf, u64::MAX);
            return Ok((r?.0, buf));
        }
        if !q.unions.is_empty() || self.describing() {
            let (columns, rows) = self.select(q, params)?;
            for r in rows {
                buf.push(r)?;
            }
            return Ok((columns, buf));
        }
        let plan = self.compile_select(q, params)?;
        self.run_select_to(&plan, params, Some((&mut buf, u64::MAX)))?;
        Ok((plan.columns(), buf))
    }

    /// The parts of a UNION ALL run one after another into `sink`, at most `cap` rows in all:
    /// the first part's columns and the rows sent. Every part is compiled first, so one that
    /// fails, or has another number of columns (1222), fails before any row is sent.
    fn union_parts<S: super::RowSink + 'static>(
        &mut self,
        q: &ast::Select,
        params: &[Datum],
        mut sink: S,
        cap: u64,
    ) -> (S, Result<(Vec<Column>, u64), SqlError>) {
        let mut first = q.clone();
        first.unions.clear();
        let mut plans = Vec::new();
        for part in std::iter::once(&first).chain(q.unions.iter().map(|(_, u)| u)) {
            match self.compile_select(part, params) {
                Ok(p) => plans.push(p),
                Err(e) => return (sink, Err(e)),
            }
        }
        let part_columns: Vec<Vec<Column>> = plans.iter().map(|p| p.columns()).collect();
        if part_columns
            .iter()
            .any(|c| c.len() != part_columns[0].len())
        {
            let e = SqlError::new(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, &[]);
            return (sink, Err(e));
        }
        let columns = union_columns(part_columns.iter().map(|c| &c[..]));
        let mut sent = 0;
        for (i, (plan, part)) in plans.iter().zip(part_columns).enumerate() {
            if i > 0 && sent >= cap {
                break;
            }
            let mut part = PartSink {
                inner: sink,
                columns: columns.clone(),
                part,
            };
            let r = self.run_select_to(plan, params, Some((&mut part, cap - sent)));
            sink = part.inner;
            match r {
                Ok((_, n)) => sent += n.unwrap_or(0),
                Err(e) => return (sink, Err(e)),
            }
        }
        (sink, Ok((columns, sent)))
    }

    /// SELECT ... INTO @a, @b: one row into the variables (1172 for more, warning 1329 for
    /// none, 1222 when the counts differ).
    pub(crate) fn select_into(
        &mut self,
        q: &ast::Select,
        vars: &[String],
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let (columns, rows) = self.select(q, params)?;
        if columns.len() != vars.len() {
            return Err(SqlError::new(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, &[]));
        }
        match rows.len() {
            0 => self.note(
                types::Level::Warning,
                SqlError::new(ER_SP_FETCH_NO_DATA, &[]),
            ),
            1 => {
                for (v, d) in vars.iter().zip(rows.into_iter().flatten()) {
                    self.user_vars.insert(v.clone(), d);
                }
                return Ok(Output::ok(1));
            }
            _ => return Err(SqlError::new(ER_TOO_MANY_ROWS, &[])),
        }
        Ok(Output::ok(0))
    }
}

/// Whether `q` is a UNION of parts all joined by UNION ALL (their rows can go on as they are
/// made, part after part).
fn union_all(q: &ast::Select) -> bool {
    !q.unions.is_empty() && q.unions.iter().all(|(all, _)| *all)
}

/// The columns of a UNION whose parts have `parts` columns: the first part's names, each type
/// aggregated over every part (`expr::union_type`).
pub(crate) fn union_columns<'c>(mut parts: impl Iterator<Item = &'c [Column]>) -> Vec<Column> {
    let mut columns = parts.next().map(<[Column]>::to_vec).unwrap_or_default();
    for p in parts {
        for (c, pc) in columns.iter_mut().zip(p) {
            c.ety = expr::union_type(&c.ety, &pc.ety);
        }
    }
    columns
}

/// A row of a UNION's part (columns `part`) as the union's `columns` type it.
pub(crate) fn conform_row(
    row: Vec<Datum>,
    part: &[Column],
    columns: &[Column],
    w: &mut Warnings,
) -> Result<Vec<Datum>, SqlError> {
    if part.iter().zip(columns).all(|(p, c)| p.ety == c.ety) {
        return Ok(row);
    }
    // Only the columns whose type the part does not share.
    row.into_iter()
        .zip(part.iter().zip(columns))
        .map(|(d, (p, c))| {
            if p.ety == c.ety {
                Ok(d)
            } else {
                expr::conform(d, &c.ety, w)
            }
        })
        .collect()
}

/// One part of a UNION ALL on its way to the union's sink: under the union's header, its
/// rows typed as the union's columns (`conform_row`).
struct PartSink<S> {
    inner: S,
    columns: Vec<Column>,
    part: Vec<Column>,
}

impl<S: super::RowSink + 'static> super::RowSink for PartSink<S> {
    fn begin(&mut self, _part: &[Column]) -> Result<(), SqlError> {
        self.inner.begin(&self.columns)
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        if self
            .part
            .iter()
            .zip(&self.columns)
            .all(|(p, c)| p.ety == c.ety)
        {
            return self.inner.row(row);
        }
        self.row_owned(row.to_vec())
    }

    fn row_owned(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        let row = conform_row(row, &self.part, &self.columns, &mut Warnings::default())?;
        self.inner.row_owned(row)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// The client's sink across the parts of a UNION ALL: one header, then every part's rows.
struct UnionSink {
    inner: Box<dyn super::RowSink>,
    begun: bool,
}

impl super::RowSink for UnionSink {
    fn begin(&mut self, columns: &[Column]) -> Result<(), SqlError> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        self.inner.begin(columns)
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        self.inner.row(row)
    }

    fn row_owned(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        self.inner.row_owned(row)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// How `read_rows` reads: locking (and then semi-consistently, for UPDATE/DELETE at READ
/// COMMITTED) or not, and which columns the caller uses (None = all).
pub(crate) struct ReadHow<'a> {
    pub lock: Option<LockRead>,
    pub semi_consistent: bool,
    pub columns: Option<&'a [bool]>,
    /// A locking scan may stop after this many matching rows (rows come in scan order and
    /// the statement needs no more: UPDATE/DELETE ... [ORDER BY key] LIMIT n).
    pub limit: Option<usize>,
    /// The reader may want no more than this many rows (LIMIT, or the first that passes): a
    /// consistent read's first batch decodes no more (the engine's default for a range with
    /// an end is larger, engine row/scan.rs).
    pub first: Option<usize>,
    /// Tests a consistent read of a range hands to the engine's scan (scanfilter.rs).
    pub filter: Option<Arc<innoxide_engine::RowFilter>>,
}

enum Source {
    Table(Arc<SqlTable>, JoinKind, Option<Expr>),
    Rows(Held, JoinKind, Option<Expr>),
    Json(Box<JsonSource>, JoinKind, Option<Expr>),
}

impl Source {
    /// How the item is joined to those before it, and its ON condition.
    fn join(&self) -> (JoinKind, &Option<Expr>) {
        match self {
            Source::Table(_, k, on) | Source::Rows(_, k, on) | Source::Json(_, k, on) => (*k, on),
        }
    }

    fn on_mut(&mut self) -> &mut Option<Expr> {
        match self {
            Source::Table(_, _, on) | Source::Rows(_, _, on) | Source::Json(_, _, on) => on,
        }
    }
}

/// The rows of a FROM item that is not a base table: a derived table's (gathered within the
/// temporary-table budget, in tmpdir beyond it), or rows made in memory (a system table, the
/// previous round of a recursive CTE).
pub(crate) enum Held {
    Vec(Vec<Vec<Datum>>),
    Buf(Mutex<Box<RowBuf>>),
}

impl Held {
    /// The rows of `buf`: a vector if they never left memory (read in place, not copied).
    fn of(buf: RowBuf) -> Held {
        match buf.into_rows() {
            Ok(rows) => Held::Vec(rows),
            Err(buf) => Held::Buf(Mutex::new(buf)),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Held::Vec(v) => v.len(),
            Held::Buf(b) => b.lock().unwrap_or_else(|e| e.into_inner()).len(),
        }
    }

    /// Row `j` (< len).
    pub(crate) fn get(&self, j: usize) -> Result<Cow<'_, [Datum]>, SqlError> {
        Ok(match self {
            Held::Vec(v) => Cow::Borrowed(&v[j]),
            Held::Buf(b) => {
                let mut b = b.lock().unwrap_or_else(|e| e.into_inner());
                Cow::Owned(b.row(j)?.to_vec())
            }
        })
    }
}

/// One SELECT (no UNION) compiled against the catalog (`Session::compile_select`), run by
/// `Session::run_select` as often as wanted while `Session::plan_valid` holds (P3).
pub(crate) struct SelectPlan {
    /// Some table is read with this lock (the statement is a locking read).
    lock: Option<LockRead>,
    /// How each table of `scope` is read: locked (and how) or consistently.
    table_locks: Vec<Option<LockRead>>,
    /// FOR UPDATE / FOR SHARE ... NOWAIT or SKIP LOCKED.
    wait_policy: WaitPolicy,
    scope: Vec<ScopeTable>,
    sources: Vec<Source>,
    /// (database, table) of each base table, for the checks before a reuse.
    tables: Vec<(String, String)>,
    where_conds: Vec<Expr>,
    /// WHERE's conjuncts as compiled, when `where_conds` has an `x IN (SELECT ...)` as the
    /// list of its values (`in_as_list`).
    where_shown: Option<Vec<Expr>>,
    /// `where_conds` bound to the enclosing queries' columns once for every run (`where_bound`).
    where_bound: Option<Vec<Expr>>,
    where_c: Option<CExpr>,
    where_sub: Option<CExpr>,
    aggs: Vec<AggSpec>,
    /// Window functions, computed after grouping and HAVING (window.rs).
    windows: Vec<WinSpec>,
    items: Vec<(CExpr, Column)>,
    /// Per item, the row position it is moved from when it is a column no other item reads
    /// (the result takes the value instead of a copy).
    moved: Vec<Option<usize>>,
    group: Vec<(CExpr, Collation)>,
    having: Option<CExpr>,
    order: Vec<(CExpr, bool, Collation)>,
    /// The order an index of the first table may deliver its rows in, as (column,
    /// descending): ORDER BY's when it names only such columns; under GROUP BY, the grouping
    /// columns' (P4).
    first_order: Option<Vec<(usize, bool)>>,
    /// Rows read in `first_order` are in ORDER BY order (else a sort follows).
    order_follows: bool,
    /// Rows read in `first_order` bring equal GROUP BY (or DISTINCT) values together (P4).
    keys_adjacent: bool,
    /// A GROUP BY expression or aggregate argument holds a subquery (bound per row first).
    group_subs: bool,
    /// HAVING, a select item or an ORDER BY key holds a subquery (bound per row at the end).
    late_subs: bool,
    grouped: bool,
    /// Per aggregate, the column of the one table it is the MIN or MAX of, when the query
    /// reads nothing else from the rows (empty otherwise): the rows may come from the ends of
    /// index ranges (S13, `min_max_rows`).
    min_max: Vec<usize>,
    /// What a loose index scan of the one table must give the query (S14), when its rows
    /// matter only through distinct values and MIN/MAX.
    loose: Option<LooseSpec>,
    distinct: bool,
    limit: Option<CExpr>,
    offset: Option<CExpr>,
    any_right: bool,
    on_cs: Vec<Option<CExpr>>,
    used: Vec<bool>,
    /// Each source's index hints (no hint for a derived table).
    index_use: Vec<IndexUse>,
    width: usize,
    /// What the compilation depended on besides the tables; kept only if every source is a
    /// base table.
    basis: PlanBasis,
}

impl SelectPlan {
    pub(crate) fn columns(&self) -> Vec<Column> {
        self.items.iter().map(|i| i.1.clone()).collect()
    }

    /// WHERE's conjuncts as compiled (an EXISTS may be an IN: semijoin.rs).
    pub(crate) fn where_conds(&self) -> &[Expr] {
        self.where_shown.as_deref().unwrap_or(&self.where_conds)
    }

    /// The scope, as an enclosing query's for its subqueries (`Session::outer_reads`).
    pub(crate) fn scope_shared(&self) -> Arc<(Vec<ScopeTable>, Vec<usize>)> {
        Arc::new((self.scope.clone(), Vec::new()))
    }

    /// Every FROM item is a base table (nothing was read to compile it).
    pub(crate) fn base_tables_only(&self) -> bool {
        self.sources.iter().all(|s| matches!(s, Source::Table(..)))
    }

    /// The number of FROM items read.
    pub(crate) fn sources_len(&self) -> usize {
        self.sources.len()
    }

    /// The name FROM item `si` goes by (its alias).
    pub(crate) fn source_name(&self, si: usize) -> &str {
        &self.scope[si].name
    }

    /// For EXPLAIN of a SELECT without tables: "Impossible WHERE" when its WHERE is false,
    /// else "No tables used".
    pub(crate) fn no_table_note(
        &self,
        params: &[Datum],
        mode: types::SqlMode,
    ) -> Result<&'static str, SqlError> {
        let mut w = Warnings::default();
        Ok(match pass(&self.where_c, &[], params, mode, &mut w)? {
            true => "No tables used",
            false => "Impossible WHERE",
        })
    }

    /// The plan has a WHERE condition.
    pub(crate) fn has_where(&self) -> bool {
        !self.where_conds.is_empty()
    }
}

/// How EXPLAIN shows one base table of a plan.
pub(crate) struct PathShown {
    /// The table's place among the SELECT's sources.
    pub source: usize,
    pub table: Arc<SqlTable>,
    pub name: String,
    pub access: Access,
    /// The rows are sorted after reading (ORDER BY not delivered by the access path).
    pub filesort: bool,
    /// The access path delivers the rows in the order asked (ORDER BY's, or GROUP BY's).
    pub ordered: bool,
    /// GROUP BY or DISTINCT keep a temporary table (group.rs, finish.rs).
    pub temporary: bool,
    /// The keys come from each row of the tables before (a join lookup: eq_ref, ref).
    pub per_row: bool,
    /// Read once and joined by hash with the rows before (hashjoin.rs H4).
    pub hash_join: bool,
    /// A secondary index holds every column the statement uses from the table: the engine
    /// reads them from its entries (row::scan S1), "Using index".
    pub covering: bool,
    /// Conditions (WHERE, ON) apply to the table's rows.
    pub conditions: bool,
    /// A loose index scan (S14): "Using index for group-by".
    pub loose: bool,
    /// EXPLAIN's key_len: bytes of the key parts the path narrows (or reads whole).
    pub key_len: Option<u64>,
    /// EXPLAIN's ref: what each key part is compared with ("const", a column of a table
    /// before), for lookups.
    pub key_ref: Option<String>,
    /// EXPLAIN's filtered: the percentage of the rows read that the conditions the path does
    /// not apply are estimated to let through (MySQL's heuristics: see `filter_factor`).
    pub filtered: f64,
}

/// Key parts: (column, declared prefix length).
type KeyParts = Vec<(usize, Option<u64>)>;

/// The key columns (with their declared prefixes) `access` reads `t` through, and how many of
/// them it narrows (all of them for a whole secondary index); None for a table scan.
fn key_parts_used(t: &SqlTable, access: &Access) -> Option<(KeyParts, usize)> {
    let with_prefixes = |cols: &[usize], prefixes: &[Option<u64>]| -> KeyParts {
        (cols.iter().enumerate())
            .map(|(i, &c)| (c, prefixes.get(i).copied().flatten()))
            .collect()
    };
    let pk = || with_prefixes(t.pk(), &t.meta.pk_prefixes);
    let bound_len = |b: &KeyBound| match b {
        KeyBound::Included(v) | KeyBound::Excluded(v) => v.len(),
        KeyBound::Unbounded => 0,
    };
    let parts_of = |index: &Option<String>| -> Option<KeyParts> {
        Some(match index {
            None => pk(),
            Some(n) => {
                let ix = (t.table.def.indexes.iter()).find(|i| i.name.eq_ignore_ascii_case(n))?;
                let prefixes = (t.meta.keys.iter())
                    .find(|k| k.name.eq_ignore_ascii_case(n))
                    .map_or(&[][..], |k| &k.prefixes[..]);
                let mut parts = with_prefixes(&ix.columns, prefixes);
                // Then the primary key's columns the entries carry (whole).
                if !t.has_hidden_pk() {
                    let more = t.pk().iter().filter(|c| !ix.columns.contains(c));
                    parts.extend(more.map(|&c| (c, None)));
                }
                parts
            }
        })
    };
    match access {
        Access::Points(keys) => Some((pk(), keys.first().map_or(0, Vec::len))),
        Access::Loose(l) => Some((parts_of(&l.index)?, l.parts)),
        Access::Range {
            index, from, to, ..
        } => {
            let parts = parts_of(index)?;
            // A whole secondary index: its own key parts (MySQL's key_len).
            let own = || {
                (t.table.def.indexes.iter())
                    .find(|i| {
                        index
                            .as_deref()
                            .is_some_and(|n| i.name.eq_ignore_ascii_case(n))
                    })
                    .map_or(parts.len(), |i| i.columns.len())
            };
            let used = match bound_len(from).max(bound_len(to)) {
                0 if index.is_some() => own(),
                n => n,
            };
            let used = used.min(parts.len());
            (used > 0).then_some((parts, used))
        }
    }
}

/// The fraction of rows condition `e` lets through, for EXPLAIN's filtered, as MySQL 8.0
/// estimates it without histograms: 1 for a condition on a key part the path narrows by
/// (`narrowed`) or on no column of this table; equality 0.1, inequality 1/3, BETWEEN and
/// LIKE 1/9, IN of n values n/10 up to 1/2, IS NULL 0.1, the complement for NOT; OR as the
/// union of independent events. A comparison with a column of a table read later (`later`)
/// counts there, as in MySQL.
fn filter_factor(
    e: &Expr,
    tname: &str,
    t: &SqlTable,
    single: bool,
    narrowed: &[usize],
    later: &[&str],
) -> f64 {
    let col = |x: &Expr| col_of(x, tname, t, single);
    let on = |c: Option<usize>, f: f64, negated: bool| match c {
        Some(c) if !narrowed.contains(&c) => {
            if negated {
                1.0 - f
            } else {
                f
            }
        }
        _ => 1.0,
    };
    const EQUALITY: f64 = 0.1;
    const INEQUALITY: f64 = 1.0 / 3.0;
    const BETWEEN: f64 = 1.0 / 9.0;
    match e {
        Expr::Binary {
            op: BinaryOp::Or,
            left,
            right,
        } => {
            let a = filter_factor(left, tname, t, single, narrowed, later);
            let b = filter_factor(right, tname, t, single, narrowed, later);
            a + b - a * b
        }
        Expr::Binary { op, left, right } => {
            let read_later = |x: &Expr| {
                matches!(x, Expr::Column { table: Some(q), .. }
                    if later.iter().any(|l| l.eq_ignore_ascii_case(q)))
            };
            if read_later(left) || read_later(right) {
                return 1.0;
            }
            let c = col(left).or_else(|| col(right));
            match op {
                BinaryOp::Eq | BinaryOp::NullSafeEq => on(c, EQUALITY, false),
                BinaryOp::Ne => on(c, EQUALITY, true),
                BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                    on(c, INEQUALITY, false)
                }
                _ => 1.0,
            }
        }
        Expr::Between { expr, negated, .. } => on(col(expr), BETWEEN, *negated),
        Expr::Like { expr, negated, .. } => on(col(expr), BETWEEN, *negated),
        Expr::InList {
            expr,
            list,
            negated,
        } => on(col(expr), (list.len() as f64 * EQUALITY).min(0.5), *negated),
        Expr::IsNull { expr, negated } => on(col(expr), EQUALITY, *negated),
        _ => 1.0,
    }
}

/// EXPLAIN's key_len, ref and filtered for `access` to `t` (named `tname`) under `conds`;
/// `per_row`: the key values come from the tables before it in `scope`; `later`: the names of
/// the tables read after it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn explain_columns(
    t: &SqlTable,
    tname: &str,
    single: bool,
    access: &Access,
    conds: &[Expr],
    per_row: bool,
    scope: &[ScopeTable],
    later: &[&str],
) -> (Option<u64>, Option<String>, f64) {
    let parts = key_parts_used(t, access);
    let key_len = parts.as_ref().map(|(parts, used)| {
        (parts[..*used].iter())
            .map(|&(c, prefix)| {
                let col = &t.columns[c];
                col.ty.key_length(prefix) + u64::from(col.nullable)
            })
            .sum()
    });
    let lookup = match access {
        Access::Points(k) => k.len() == 1,
        Access::Range { from, to, .. } => from == to && !matches!(from, KeyBound::Unbounded),
        Access::Loose(_) => false,
    };
    let narrowed: Vec<usize> = parts
        .as_ref()
        .map(|(p, used)| p[..*used].iter().map(|x| x.0).collect())
        .unwrap_or_default();
    let key_ref = parts.filter(|_| lookup).map(|(p, used)| {
        (p[..used].iter())
            .map(|&(c, _)| match per_row {
                false => "const".to_string(),
                true => joined_with(t, tname, single, c, conds, scope),
            })
            .collect::<Vec<_>>()
            .join(",")
    });
    // A const table (one primary-key row, read once) filters nothing further.
    let constant = matches!(access, Access::Points(k) if k.len() == 1) && !per_row;
    let f: f64 = (conds.iter())
        .filter(|_| !constant)
        .map(|e| filter_factor(e, tname, t, single, &narrowed, later))
        .product();
    (key_len, key_ref, (f * 100.0).clamp(0.0, 100.0))
}

/// What key column `c` of `t` is equal to in `conds` for a lookup per row: `db.table.column`
/// of a table before, "const", or "func" for an expression.
fn joined_with(
    t: &SqlTable,
    tname: &str,
    single: bool,
    c: usize,
    conds: &[Expr],
    scope: &[ScopeTable],
) -> String {
    for e in conds {
        let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = e
        else {
            continue;
        };
        for (mine, other) in [(left, right), (right, left)] {
            if col_of(mine, tname, t, single) != Some(c) {
                continue;
            }
            return match &**other {
                Expr::Column {
                    table: Some(q),
                    name,
                } => {
                    let db = (scope.iter())
                        .find(|s| s.name.eq_ignore_ascii_case(q))
                        .map_or("", |s| s.db.as_str());
                    format!("{db}.{q}.{name}")
                }
                o if is_const(o) => "const".into(),
                _ => "func".into(),
            };
        }
    }
    "func".into()
}

/// Rows of one table being read (`Session::open_rows`, `Session::pull_row`).
pub(crate) enum RowCursor {
    /// Primary-key lookups still to make.
    Points {
        table: Arc<innoxide_engine::Table>,
        keys: std::vec::IntoIter<Vec<Value>>,
        lock: Option<LockRead>,
    },
    /// A consistent read of a range, read as it is pulled.
    Scan(innoxide_engine::RowIter),
    /// A locking read's rows, read and locked when it was opened.
    Rows(std::vec::IntoIter<Vec<Value>>),
    /// A loose index scan (S14) and the rows of its last group still to hand out.
    Loose {
        table: Arc<innoxide_engine::Table>,
        scan: Box<Loose>,
        columns: Option<Vec<bool>>,
        pending: std::collections::VecDeque<Vec<Value>>,
        done: bool,
    },
}

impl RowCursor {
    /// Whether the rows were already tested by the predicate given to `open_rows` (a
    /// locking range read tests it in the engine).
    pub(crate) fn tested(&self) -> bool {
        matches!(self, RowCursor::Rows(_))
    }
}

/// Rows of one table being read as SQL values (`Session::open_datums`, `Session::pull_into`).
pub(crate) enum DatumCursor {
    /// A consistent read of a range, its rows decoded straight from the page.
    Made(innoxide_engine::RowIter<DatumRows>),
    /// Another cursor of the table, its rows converted as they are pulled.
    Other(Arc<SqlTable>, RowCursor),
}

/// Makes a scan's rows as SQL values decoded straight from the stored fields (the engine's
/// `RowMaker`): what `load_used` makes of the engine values, without making them.
pub(crate) struct DatumRows(Arc<SqlTable>);

impl innoxide_engine::RowMaker for DatumRows {
    type Row = Vec<Datum>;
    fn nulls(&self, n: usize) -> Vec<Datum> {
        let n = n.min(self.0.columns.len());
        let mut row = Vec::with_capacity(n);
        row.resize_with(n, || Datum::Null);
        row
    }
    fn set(&self, row: &mut Vec<Datum>, c: usize, col: &innoxide_engine::ColumnDef, b: &[u8]) {
        if let (Some(slot), Some(sc)) = (row.get_mut(c), self.0.columns.get(c)) {
            *slot = types::load_stored(col, b, &sc.ty);
        }
    }
    fn of_values(&self, r: Vec<Value>) -> Vec<Datum> {
        (r.into_iter().zip(&self.0.columns))
            .map(|(v, c)| types::load_owned(v, &c.ty))
            .collect()
    }
}

/// S16: another join order is taken when it reads this many times fewer rows than FROM's.
const JOIN_REORDER: f64 = 4.0;
/// S16: joins of more tables keep FROM's order (every order is costed).
const JOIN_REORDER_MAX: usize = 5;

/// `v`'s items in the order `perm` gives (their old positions).
fn permuted<T>(v: Vec<T>, perm: &[usize]) -> Vec<T> {
    let mut old: Vec<Option<T>> = v.into_iter().map(Some).collect();
    perm.iter()
        .filter_map(|&i| old.get_mut(i)?.take())
        .collect()
}

/// Calls `f` with every order of `v[k..]` after `v[..k]`.
fn permutations(v: &mut [usize], k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
}

/// Joined rows handed on at once from one level of a join to the next (S9).
const JOIN_BATCH: usize = 1024;

/// What every level of a nested-loop join reads (S9).
struct JoinPlan<'p> {
    sources: &'p [Source],
    on_cs: &'p [Option<CExpr>],
    scope: &'p [ScopeTable],
    used: &'p [bool],
    index_use: &'p [IndexUse],
    plan_where: &'p [Expr],
    first_access: Option<&'p Access>,
    /// The narrower columns the first table is scanned for (S7).
    deferred: Option<&'p [bool]>,
    /// How each level's table is read (`SelectPlan::table_locks`).
    locks: &'p [Option<LockRead>],
    any_right: bool,
    /// The last source joined by RIGHT JOIN.
    last_right: Option<usize>,
    /// Each level's index of its held rows, made at its first use (hashjoin.rs H3).
    hashes: Vec<std::cell::OnceCell<Option<hashjoin::RowsHash>>>,
    /// Each base table level's rows, when it is joined by hash (`table_held`), and each
    /// JSON_TABLE level's that reads no earlier item (made once per execution: S12).
    tables: Vec<std::cell::OnceCell<Option<Held>>>,
    need: Option<u64>,
    params: &'p [Datum],
    mode: types::SqlMode,
}

/// The joined rows a join level hands to the next (S11): batches, or for a level before a
/// RIGHT JOIN, everything, gathered in `whole` (within tmp_table_size, then in tmpdir).
struct NextRows {
    rows: Vec<Vec<Datum>>,
    whole: Option<RowBuf>,
}

/// Where the last table's joined rows go: WHERE first, then the grouping, the last stage
/// (`Finish`), or the rows kept for it (cut to the first N as they come).
struct JoinOut<'p, 's> {
    where_c: &'p Option<CExpr>,
    order: &'p [(CExpr, bool, Collation)],
    top_n: Option<usize>,
    need: Option<u64>,
    streamed: bool,
    params: &'p [Datum],
    mode: types::SqlMode,
    grouper: Option<Grouper<'p>>,
    fin: Finish<'p, 's>,
    /// Rows go to `fin`, or to `win` if there is one, as they come.
    direct: bool,
    /// The window stage, when the SELECT has window functions.
    win: Option<Windows<'p>>,
    /// Subqueries the collected rows need bound before they go on, when they may go on
    /// during the join (`Session::drain`).
    subs: Option<SubWork<'p>>,
    rows: Vec<Vec<Datum>>,
    /// Top-N (S7) ordered by columns alone, once rows were dropped: the ORDER BY keys of the
    /// last row kept; a row that does not come before it is dropped as it comes.
    cutoff: Option<Vec<Datum>>,
}

/// The subqueries a joined row needs bound, by the session, before it goes on (S10): WHERE's,
/// grouping's (GROUP BY and aggregate arguments), and, for rows that go straight to the last
/// stage, HAVING's and the select list's and ORDER BY's; `having` alone for the window stage.
struct SubWork<'p> {
    where_sub: Option<&'p CExpr>,
    group: Vec<&'p CExpr>,
    late: Vec<&'p CExpr>,
    having: Option<&'p CExpr>,
}

impl JoinOut<'_, '_> {
    /// Takes a joined row; false once no more are wanted (LIMIT).
    fn offer(&mut self, row: Vec<Datum>, w: &mut Warnings) -> Result<bool, SqlError> {
        let (params, mode) = (self.params, self.mode);
        if pass(self.where_c, &row, params, mode, w)? {
            match self.grouper.as_mut() {
                Some(g) if self.streamed => {
                    // Groups read in order are done as the next one starts (P4).
                    if let Some((r, a)) = g.add(row, w)? {
                        return self.fin.take(r, &a, &[], w);
                    }
                }
                _ if self.direct => {
                    return match self.win.as_mut() {
                        Some(win) => win.push(row, Vec::new(), w).map(|()| true),
                        None => self.fin.take(row, &[], &[], w),
                    };
                }
                _ => {
                    if let Some(cut) = &self.cutoff {
                        let keys: Vec<&Datum> = (self.order.iter())
                            .map(|o| match o.0 {
                                CExpr::Col(p) => row.get(p).unwrap_or(&Datum::Null),
                                _ => &Datum::Null,
                            })
                            .collect();
                        if !comes_before(&keys, cut, self.order) {
                            return Ok(self.need.is_none_or(|n| (self.rows.len() as u64) < n));
                        }
                    }
                    self.rows.push(row)
                }
            }
            if let Some(k) = self.top_n {
                if self.rows.len() >= k.saturating_mul(2).max(1024) {
                    let cut = keep_first(&mut self.rows, k, self.order, params, mode, w)?;
                    // (Keys of columns alone: comparing them again makes no warning.)
                    if self.order.iter().all(|o| matches!(o.0, CExpr::Col(_))) {
                        self.cutoff = cut;
                    }
                }
            }
        }
        Ok(self.need.is_none_or(|n| (self.rows.len() as u64) < n))
    }
}

/// The input of the last stage: the joined rows, or the groups made of them.
enum Rows<'p> {
    Plain(std::vec::IntoIter<Vec<Datum>>),
    Groups(Box<Groups<'p>>),
}

impl Rows<'_> {
    /// The next row and its aggregate values.
    fn next(&mut self, w: &mut Warnings) -> Result<Option<Group>, SqlError> {
        match self {
            Rows::Plain(it) => Ok(it.next().map(|r| (r, Vec::new()))),
            Rows::Groups(g) => g.next(w),
        }
    }
}

/// Joins `left` with row `r` of a derived table and hands the row on (`give`) if ON holds:
/// None if it does not, else whether more rows are wanted.
fn pair(
    left: &[Datum],
    r: &[Datum],
    on_c: &Option<CExpr>,
    j: &JoinPlan<'_>,
    to: (bool, &mut JoinOut<'_, '_>, &mut Vec<Vec<Datum>>),
    w: &mut Warnings,
) -> Result<Option<bool>, SqlError> {
    let mut row = left.to_vec();
    row.extend(r.iter().cloned());
    if !pass(on_c, &row, j.params, j.mode, w)? {
        return Ok(None);
    }
    let (last, out, next) = to;
    give(last, out, next, row, w).map(Some)
}

/// Hands a joined row on: to `out` from the last table, else to the next level's batch.
fn give(
    last: bool,
    out: &mut JoinOut<'_, '_>,
    next: &mut Vec<Vec<Datum>>,
    row: Vec<Datum>,
    w: &mut Warnings,
) -> Result<bool, SqlError> {
    if last {
        out.offer(row, w)
    } else {
        next.push(row);
        Ok(true)
    }
}

/// The equalities a join level (scope `st`) is joined on with the rows before it, as
/// hashjoin.rs takes them: its ON condition's, and WHERE's unless a LEFT or RIGHT JOIN makes
/// NULLs (as the access paths take WHERE).
fn join_keys(
    st: &ScopeTable,
    kind: JoinKind,
    any_right: bool,
    on_c: &Option<CExpr>,
    where_c: &Option<CExpr>,
) -> Vec<(usize, CExpr, Collation)> {
    let width = st.columns.len();
    let mut keys = Vec::new();
    if let Some(c) = on_c {
        hashjoin::equalities(c, st.offset, width, &mut keys);
    }
    if let (Some(c), false) = (where_c, kind == JoinKind::Left || any_right) {
        hashjoin::equalities(c, st.offset, width, &mut keys);
    }
    keys
}

/// Where a base table stands in a join, for `hash_joined`.
struct HashLevel {
    si: usize,
    kind: JoinKind,
    any_right: bool,
    locking: bool,
}

/// Whether table `t` (scope `st`) is joined by hash (hashjoin.rs H4): not first, not by a
/// locking read nor a RIGHT JOIN, and joined on equalities with the rows before it (its ON
/// condition's, and WHERE's unless a LEFT or RIGHT JOIN makes NULLs) none of whose columns
/// leads an index of the table.
fn hash_joined(
    t: &SqlTable,
    st: &ScopeTable,
    level: &HashLevel,
    on_c: &Option<CExpr>,
    where_c: &Option<CExpr>,
) -> bool {
    if level.si == 0 || level.locking || level.kind == JoinKind::Right {
        return false;
    }
    let keys = join_keys(st, level.kind, level.any_right, on_c, where_c);
    let et = &t.table;
    let leads = |c: usize| {
        et.pk_cols.first() == Some(&c)
            || et
                .secondary
                .iter()
                .any(|s| s.spec.columns.first() == Some(&c))
    };
    !keys.is_empty() && !keys.iter().any(|(c, _, _)| leads(*c))
}

/// One table's USE / FORCE / IGNORE INDEX (MySQL's index hints), checked against its indexes.
#[derive(Clone, Debug, Default)]
pub(crate) struct IndexUse {
    /// The indexes the planner may use (None: any); "PRIMARY" is the clustered index.
    only: Option<Vec<String>>,
    ignored: Vec<String>,
    /// FORCE INDEX: a table scan only when none of the indexes applies.
    force: bool,
}

/// No index hint.
pub(crate) static NO_HINTS: IndexUse = IndexUse {
    only: None,
    ignored: Vec::new(),
    force: false,
};

impl IndexUse {
    /// The hints of a reference to `t` named `shown`; error 1176 for a name that is not an
    /// index of `t`.
    pub(crate) fn resolve(
        t: &SqlTable,
        hints: &[ast::IndexHint],
        shown: &str,
    ) -> Result<IndexUse, SqlError> {
        let mut u = IndexUse::default();
        for h in hints {
            let (names, force) = match h {
                ast::IndexHint::Use(n) => (n, false),
                ast::IndexHint::Force(n) => (n, true),
                ast::IndexHint::Ignore(n) => (n, false),
            };
            for n in names {
                let known = if n.eq_ignore_ascii_case("PRIMARY") {
                    !t.pk().is_empty() && !t.has_hidden_pk()
                } else {
                    t.table
                        .def
                        .indexes
                        .iter()
                        .any(|ix| ix.name.eq_ignore_ascii_case(n))
                };
                if !known {
                    return Err(SqlError::new(ER_KEY_DOES_NOT_EXITS, &[n, &shown]));
                }
            }
            match h {
                ast::IndexHint::Ignore(_) => u.ignored.extend(names.iter().cloned()),
                _ => {
                    u.only
                        .get_or_insert_with(Vec::new)
                        .extend(names.iter().cloned());
                    u.force |= force;
                }
            }
        }
        Ok(u)
    }

    /// Whether the planner may use index `name` (None: the clustered index).
    fn allows(&self, name: Option<&str>) -> bool {
        let n = name.unwrap_or("PRIMARY");
        let is = |x: &String| x.eq_ignore_ascii_case(n);
        self.only.as_ref().is_none_or(|o| o.iter().any(is)) && !self.ignored.iter().any(is)
    }
}

/// What an access path must serve besides the conditions.
#[derive(Clone, Copy)]
pub(crate) struct PathNeeds<'a> {
    /// The columns the statement uses from the table (None: all of them, or a locking read,
    /// which reads the rows).
    pub used: Option<&'a [bool]>,
    pub hints: &'a IndexUse,
}

impl PathNeeds<'static> {
    /// Rows with every column, no index hint.
    pub(crate) const ROWS: PathNeeds<'static> = PathNeeds {
        used: None,
        hints: &NO_HINTS,
    };
}

/// True if index `index` of `t` (with the primary key's columns its entries carry) holds every
/// column marked in `used`.
fn covers(t: &SqlTable, index: &str, used: &[bool]) -> bool {
    let Some(ix) = t.table.def.indexes.iter().find(|ix| ix.name == index) else {
        return false;
    };
    used.iter()
        .enumerate()
        .all(|(c, &u)| !u || ix.columns.contains(&c) || t.pk().contains(&c))
}

/// A value of type `t` that converts exactly to the usual key column types (EXPLAIN's stand-in
/// for a column of an earlier table of a join).
pub(crate) fn sample_value(t: &EType) -> Datum {
    let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
    let kind = match t {
        EType::Column(ty) => ty.data_type(),
        EType::Date => "date",
        EType::DateTime { .. } => "datetime",
        EType::Time { .. } => "time",
        _ => "",
    };
    match kind {
        "date" => text("2000-01-01"),
        "datetime" | "timestamp" => text("2000-01-01 00:00:00"),
        "time" => text("00:00:00"),
        "year" => Datum::Int(2000),
        _ if matches!(t, EType::Column(ty) if ty.is_string()) => text("1"),
        _ => Datum::Int(1),
    }
}

/// Some(forward) when reading `access` forward (or backward) returns rows sorted by `order`
/// (column, descending; all one direction), None when it does not (P2). Columns fixed by
/// equality on the key prefix may appear anywhere in `order`.
fn scan_order(t: &SqlTable, access: &Access, order: &[(usize, bool)]) -> Option<bool> {
    let desc = order.first().is_some_and(|o| o.1);
    let (cols, fixed): (Vec<usize>, usize) = match access {
        Access::Loose(l) => return scan_order(t, &l.range(), order),
        Access::Points(keys) if keys.len() <= 1 => return Some(!desc),
        // Keys are sorted ascending on a one-column primary key.
        Access::Points(_) => (t.pk().to_vec(), 0),
        Access::Range {
            index, from, to, ..
        } => {
            let cols = match index {
                None => t.pk().to_vec(),
                // A secondary index is ordered by its columns, then the primary key's.
                Some(n) => {
                    let mut cols = t
                        .table
                        .def
                        .indexes
                        .iter()
                        .find(|ix| &ix.name == n)?
                        .columns
                        .clone();
                    if !t.has_hidden_pk() {
                        for &c in t.pk() {
                            if !cols.contains(&c) {
                                cols.push(c);
                            }
                        }
                    }
                    cols
                }
            };
            let fixed = match (from, to) {
                (KeyBound::Included(a), KeyBound::Included(b)) => {
                    a.iter().zip(b).take_while(|(x, y)| x == y).count()
                }
                _ => 0,
            };
            (cols, fixed)
        }
    };
    let mut k = fixed;
    for &(c, _) in order {
        if cols[..fixed.min(cols.len())].contains(&c) {
            continue;
        }
        if cols.get(k) != Some(&c) {
            return None;
        }
        k += 1;
    }
    Some(!desc)
}

/// `access` read in direction `forward` (primary-key points are reversed).
fn oriented(access: Access, forward: bool) -> Access {
    match access {
        Access::Points(mut keys) => {
            if !forward {
                keys.reverse();
            }
            Access::Points(keys)
        }
        Access::Range {
            index, from, to, ..
        } => Access::Range {
            index,
            from,
            to,
            forward,
        },
        Access::Loose(mut l) => {
            l.forward = forward;
            Access::Loose(l)
        }
    }
}

/// S15: the WHERE conjuncts (`parts`, none with a subquery) that read only tables up to a
/// join level before the last are tested at that level, with its ON condition (MySQL attaches
/// each condition to the first table where all it reads is known), so the rows that fail them
/// are not joined on; returns the WHERE left for the end, or None when nothing moved. Only
/// over inner joins (the table of a LEFT JOIN may come NULL-extended and a RIGHT JOIN pairs
/// every row, so those keep WHERE to the end) and for conjuncts that give the same answer
/// wherever they are tested (no function call: RAND() and the like stay).
fn push_where(
    scope: &[ScopeTable],
    sources: &[Source],
    on_cs: &mut [Option<CExpr>],
    parts: Vec<CExpr>,
) -> Option<Option<CExpr>> {
    if sources.len() < 2 || sources.iter().any(|s| s.join().0 == JoinKind::Right) {
        return None;
    }
    // The levels before the first LEFT JOIN are inner joins.
    let inner =
        (sources.iter().position(|s| s.join().0 == JoinKind::Left)).unwrap_or(sources.len());
    let width = scope.last().map_or(0, |s| s.offset + s.columns.len());
    let and = |a: Option<CExpr>, b: CExpr| match a {
        Some(a) => CExpr::And(Box::new(a), Box::new(b)),
        None => b,
    };
    let mut moved = false;
    let mut rest = None;
    for part in parts {
        let mut read = vec![false; width];
        mark_columns(&part, &mut read);
        let level = match read.iter().rposition(|&r| r) {
            None => 0,
            Some(p) => (scope.iter())
                .position(|s| p < s.offset + s.columns.len())
                .unwrap_or(scope.len()),
        };
        if level + 1 < sources.len() && level < inner && plain_condition(&part) {
            on_cs[level] = Some(and(on_cs[level].take(), part));
            moved = true;
        } else {
            rest = Some(and(rest, part));
        }
    }
    moved.then_some(rest)
}

/// A condition of columns, constants and operators alone (no function call, subquery or
/// aggregate): its answer does not depend on where or how often it is tested.
fn plain_condition(e: &CExpr) -> bool {
    matches!(
        e,
        CExpr::Const(_)
            | CExpr::Col(_)
            | CExpr::Param(_)
            | CExpr::Unary(..)
            | CExpr::Arith(..)
            | CExpr::Cmp(..)
            | CExpr::And(..)
            | CExpr::Or(..)
            | CExpr::Xor(..)
            | CExpr::Bit(..)
            | CExpr::IsNull(..)
            | CExpr::IsBool(..)
            | CExpr::In(..)
            | CExpr::InSet(..)
            | CExpr::Between(..)
            | CExpr::Like(..)
            | CExpr::LikeConst(..)
            | CExpr::Case(..)
            | CExpr::Cast(..)
    ) && e.children().into_iter().all(plain_condition)
}

fn flatten(
    tr: &TableRef,
    kind: JoinKind,
    on: Option<Expr>,
    out: &mut Vec<(TableRef, JoinKind, Option<Expr>)>,
) {
    match tr {
        TableRef::Join {
            left,
            right,
            kind: k,
            on: o,
            ..
        } => {
            flatten(left, kind, on, out);
            flatten(right, *k, o.clone(), out);
        }
        other => out.push((other.clone(), kind, on)),
    }
}

/// USING and NATURAL joins, resolved once the FROM tables' columns are known: each pair of
/// same-named columns becomes an equality in the ON condition of the right side's (first)
/// table, the right one's column (the left one's in a RIGHT JOIN) is hidden from unqualified
/// names and from `*`, and `*` lists the pair's column first, as MySQL does.
struct JoinColumns<'s> {
    scope: &'s [ScopeTable],
    /// The next leaf table to visit.
    next: usize,
    /// Row positions unqualified names do not see.
    hidden: Vec<usize>,
    /// Extra ON conditions by leaf.
    conds: Vec<Vec<Expr>>,
}

impl JoinColumns<'_> {
    fn name_of(&self, pos: usize) -> (&str, &str) {
        let st = self
            .scope
            .iter()
            .find(|s| pos >= s.offset && pos < s.offset + s.columns.len())
            .unwrap_or(&self.scope[0]);
        (&st.name, &st.columns[pos - st.offset].0)
    }

    /// The one column named `u` among `star` (1054 if none, 1052 if several).
    fn find(&self, star: &[usize], u: &str) -> Result<usize, SqlError> {
        let mut found = None;
        for &p in star {
            if self.name_of(p).1.eq_ignore_ascii_case(u) {
                if found.is_some() {
                    return Err(SqlError::new(ER_NON_UNIQ_ERROR, &[&u, &"from clause"]));
                }
                found = Some(p);
            }
        }
        found.ok_or_else(|| SqlError::new(ER_BAD_FIELD_ERROR, &[&u, &"from clause"]))
    }

    /// Visits `tr`: the positions its `*` expands to.
    fn visit(&mut self, tr: &TableRef) -> Result<Vec<usize>, SqlError> {
        let TableRef::Join {
            left,
            right,
            kind,
            using,
            natural,
            ..
        } = tr
        else {
            let st = &self.scope[self.next];
            self.next += 1;
            return Ok((0..st.columns.len())
                .filter(|&i| !st.columns[i].2)
                .map(|i| st.offset + i)
                .collect());
        };
        let lstar = self.visit(left)?;
        let first_right = self.next;
        let rstar = self.visit(right)?;
        let names: Vec<String> = if *natural {
            lstar
                .iter()
                .map(|&p| self.name_of(p).1.to_string())
                .filter(|n| {
                    rstar
                        .iter()
                        .any(|&q| self.name_of(q).1.eq_ignore_ascii_case(n))
                })
                .collect()
        } else {
            using.clone()
        };
        if names.is_empty() {
            return Ok(lstar.into_iter().chain(rstar).collect());
        }
        let mut star = Vec::new();
        let mut paired = Vec::new();
        for u in &names {
            let (lp, rp) = (self.find(&lstar, u)?, self.find(&rstar, u)?);
            let col = |p: usize| {
                let (t, c) = self.name_of(p);
                Box::new(Expr::Column {
                    table: Some(t.to_string()),
                    name: c.to_string(),
                })
            };
            let (l, r) = (col(lp), col(rp));
            let eq = Expr::Binary {
                op: BinaryOp::Eq,
                left: l,
                right: r,
            };
            self.conds[first_right].push(eq);
            let (keep, drop) = if *kind == JoinKind::Right {
                (rp, lp)
            } else {
                (lp, rp)
            };
            self.hidden.push(drop);
            star.push(keep);
            paired.extend([lp, rp]);
        }
        let (first, second) = if *kind == JoinKind::Right {
            (rstar, lstar)
        } else {
            (lstar, rstar)
        };
        star.extend(first.into_iter().filter(|p| !paired.contains(p)));
        star.extend(second.into_iter().filter(|p| !paired.contains(p)));
        Ok(star)
    }
}

impl Session {
    /// WHERE's conjuncts of `plan` as `plan_access` takes them (`bind_frames`): as written
    /// outside a subquery; bound once for a plan made to run for every outer row.
    fn where_bound<'p>(&mut self, plan: &'p SelectPlan) -> Cow<'p, [Expr]> {
        match &plan.where_bound {
            Some(b) => Cow::Borrowed(b),
            None if !self.has_bound_frame() => Cow::Borrowed(&plan.where_conds),
            None => Cow::Owned(
                (plan.where_conds.iter())
                    .map(|c| self.bind_frames(c, &plan.scope))
                    .collect(),
            ),
        }
    }

    /// Binds `plan`'s WHERE once (`where_bound`): the enclosing queries' columns it reads are
    /// parameters, or constants for as long as the plan lives (mod.rs `SubCompiled`).
    pub(crate) fn bind_where(&mut self, plan: &mut SelectPlan) {
        let bound = (plan.where_conds.iter())
            .map(|c| self.bind_frames(c, &plan.scope))
            .collect();
        plan.where_bound = Some(bound);
    }

    /// `e` with the columns of enclosing queries (those `local` does not have) replaced by
    /// the values the running correlated subquery was given, or the parameters that hold
    /// them (for `plan_access` only: S1).
    fn bind_frames(&mut self, e: &Expr, local: &[ScopeTable]) -> Expr {
        if !self.has_bound_frame() {
            return e.clone();
        }
        match e {
            Expr::Column { table, name } => {
                if Compiler::new(local, "where clause")
                    .resolve(table.as_deref(), name)
                    .is_ok()
                {
                    return e.clone();
                }
                match super::expr::Context::outer_column(self, table.as_deref(), name) {
                    Ok(Some((CExpr::Const(d), _))) => datum_expr(&d),
                    Ok(Some((CExpr::Param(i), _))) => Expr::Param(i),
                    _ => e.clone(),
                }
            }
            Expr::Binary { op, left, right } => Expr::Binary {
                op: *op,
                left: Box::new(self.bind_frames(left, local)),
                right: Box::new(self.bind_frames(right, local)),
            },
            _ => e.clone(),
        }
    }
}

/// `e` with each qualified column of the `earlier` tables replaced by a parameter: the k-th
/// distinct joined-row position met becomes `Param(base + k)` and `refs[k]` holds the position.
fn param_outer(e: &Expr, earlier: &[ScopeTable], base: usize, refs: &mut Vec<usize>) -> Expr {
    match e {
        Expr::Column {
            table: Some(q),
            name,
        } => {
            for st in earlier {
                if !q.eq_ignore_ascii_case(&st.name) {
                    continue;
                }
                if let Some(i) = st
                    .columns
                    .iter()
                    .position(|c| c.0.eq_ignore_ascii_case(name))
                {
                    let p = st.offset + i;
                    let k = refs.iter().position(|&r| r == p).unwrap_or_else(|| {
                        refs.push(p);
                        refs.len() - 1
                    });
                    return Expr::Param(base + k);
                }
            }
            e.clone()
        }
        Expr::Binary {
            op,
            left: l,
            right: r,
        } => Expr::Binary {
            op: *op,
            left: Box::new(param_outer(l, earlier, base, refs)),
            right: Box::new(param_outer(r, earlier, base, refs)),
        },
        _ => e.clone(),
    }
}

/// The most values of an IN list that key lookups read (more: the conjunct is only tested).
const IN_KEYS_MAX: usize = 1000;

/// WHERE conjunct `c`, `x IN (SELECT ...)` compiled to `ce`, as `x IN (<its values>)` when the
/// uncorrelated subquery gave at most IN_KEYS_MAX integers and `x` (of type `ty`) is an integer
/// column: the planner can then look them up in an index of `x` (S1) instead of reading every
/// row. The conjunct compiled from the subquery still tests each row read.
fn in_as_list(c: &Expr, ty: &EType, ce: &CExpr) -> Option<Expr> {
    let Expr::InSubquery {
        expr,
        negated: false,
        ..
    } = c
    else {
        return None;
    };
    if !matches!(ty, EType::Column(t) if t.is_integer()) {
        return None;
    }
    let values = ce.int_items(IN_KEYS_MAX)?;
    Some(Expr::InList {
        expr: expr.clone(),
        list: values.iter().map(datum_expr).collect(),
        negated: false,
    })
}

fn datum_expr(d: &Datum) -> Expr {
    match d {
        Datum::Null => Expr::Literal(ast::Literal::Null),
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Double(_) => {
            Expr::Literal(ast::Literal::Number(
                String::from_utf8_lossy(&d.to_text().unwrap_or_default()).into_owned(),
            ))
        }
        other => Expr::Literal(ast::Literal::String {
            bytes: other.to_text().unwrap_or_default(),
            charset: None,
        }),
    }
}

fn pass(
    c: &Option<CExpr>,
    row: &[Datum],
    params: &[Datum],
    mode: types::SqlMode,
    w: &mut Warnings,
) -> Result<bool, SqlError> {
    match c {
        None => Ok(true),
        Some(c) => Ok(c.truth(&Env::new(row, params, mode), w)? == Some(true)),
    }
}

/// A UNION with a UNION DISTINCT as `SELECT DISTINCT * FROM (<the parts up to the last
/// UNION DISTINCT, joined by UNION ALL>)`, followed by the UNION ALL parts after it: a UNION
/// DISTINCT removes the duplicates of every part up to it, the parts joined by UNION ALL
/// before it included, and the parts after are added as they are (MySQL). The derived table
/// and DISTINCT then hold their rows within the temporary-table budget (rowbuf.rs, finish.rs
/// F1), and equal means equal under each column's collation. None without a UNION DISTINCT.
fn distinct_union(q: &ast::Select) -> Option<ast::Select> {
    let last = q.unions.iter().rposition(|(all, _)| !*all)?;
    let mut inner = q.clone();
    let rest = inner.unions.split_off(last + 1);
    for u in &mut inner.unions {
        u.0 = true;
    }
    let mut outer = ast::Select::star_from(inner, "<union>");
    outer.distinct = true;
    outer.unions = rest;
    Some(outer)
}

/// A row of engine values as datums.
pub fn load_row(t: &SqlTable, r: &[Value]) -> Vec<Datum> {
    r.iter()
        .zip(&t.columns)
        .map(|(v, c)| types::load(v, &c.ty))
        .collect()
}

/// Appends the SQL values of stored row `r` to `out`, leaving NULL for the columns `used`
/// says no expression reads.
fn load_used(t: &SqlTable, r: Vec<Value>, used: &[bool], out: &mut Vec<Datum>) {
    // The NULLs go in at once (a fill, not a copy of each through the stack), then the
    // used values over them.
    let base = out.len();
    out.resize_with(base + r.len().min(t.columns.len()), || Datum::Null);
    for (i, ((v, c), &u)) in r.into_iter().zip(&t.columns).zip(used).enumerate() {
        if u {
            out[base + i] = types::load_owned(v, &c.ty);
        }
    }
}

/// For each select item that is a column no other item reads, its row position.
fn moved_columns(items: &[(CExpr, Column)], width: usize) -> Vec<Option<usize>> {
    items
        .iter()
        .enumerate()
        .map(|(i, (c, _))| {
            let CExpr::Col(p) = c else { return None };
            let mut read = vec![false; width.max(p + 1)];
            for (j, (o, _)) in items.iter().enumerate() {
                if j != i {
                    mark_columns(o, &mut read);
                }
            }
            (!read[*p]).then_some(*p)
        })
        .collect()
}

/// Marks in `used` every row position `e` reads.
pub(crate) fn mark_columns(e: &CExpr, used: &mut [bool]) {
    // A correlated subquery reads the outer positions it refers to.
    let own: &[usize] = match e {
        CExpr::Col(i) => std::slice::from_ref(i),
        CExpr::Sub(p) => &p.refs,
        _ => &[],
    };
    for &i in own {
        if let Some(u) = used.get_mut(i) {
            *u = true;
        }
    }
    e.children().into_iter().for_each(|x| mark_columns(x, used));
}

/// Sorts items by their ORDER BY keys (`key(item, i)` is the i-th): (descending, collation)
/// per key, NULLs first.
pub fn sort_by_keys<T>(
    items: &mut [T],
    key: impl Fn(&T, usize) -> &Datum,
    order: &[(bool, Collation)],
) {
    items.sort_by(|a, b| {
        for (i, (desc, coll)) in order.iter().enumerate() {
            let o = cmp_nulls_first(key(a, i), key(b, i), *coll);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
}

pub(crate) fn cmp_nulls_first(a: &Datum, b: &Datum, coll: Collation) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.compare(b, coll).unwrap_or(Ordering::Equal),
    }
}

fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}
