//! INTERSECT and EXCEPT (MySQL 8.0.31), with ALL or DISTINCT: the rows of both sides, typed
//! as one result as UNION's are (select.rs `union_columns`), sorted together and compared
//! group by group.
//!
//! INVARIANTS
//! - Q1: two rows are the same row when every column compares equal under its collation,
//!   NULL equal to NULL (as MySQL's set operations and DISTINCT take them).
//! - Q2: of a row that the left side has `l` times and the right side `r` times, INTERSECT
//!   keeps one if both have it (ALL: min(l, r)), EXCEPT one if only the left has it (ALL:
//!   l - r when positive).
//! - Q3: both sides go through row buffers and an external sort (sort_buffer_size in memory,
//!   runs in tmpdir), the result through a row buffer: memory stays bounded whatever the
//!   sides' sizes.
//!
//! No latches: one statement's own state.

use std::cmp::Ordering;

use innoxide_sql::ast::{Select, SetOp};
use innoxide_sql::error::*;
use innoxide_sql::types::{Datum, Warnings};

use super::rowbuf::RowBuf;
use super::select::{cmp_nulls_first, conform_row, union_columns};
use super::sort::{SortKey, Sorter};
use super::{Column, Session};

impl Session {
    /// `left op [ALL] right`: its columns and rows (Q1-Q3).
    pub(crate) fn set_operation(
        &mut self,
        op: SetOp,
        all: bool,
        left: &Select,
        right: &Select,
        params: &[Datum],
    ) -> Result<(Vec<Column>, RowBuf), SqlError> {
        let (lc, mut lb) = self.select_stored(left, params)?;
        let (rc, mut rb) = self.select_stored(right, params)?;
        if lc.len() != rc.len() {
            return Err(SqlError::new(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, &[]));
        }
        let columns = union_columns([&lc[..], &rc[..]].into_iter());
        let colls: Vec<_> = columns.iter().map(|c| c.ety.collation()).collect();
        let mut keys: Vec<SortKey> = colls
            .iter()
            .enumerate()
            .map(|(i, &coll)| SortKey {
                desc: false,
                coll,
                from_proj: Some(i),
            })
            .collect();
        // The side (0 left, 1 right), last: a row's left copies come before its right ones.
        keys.push(SortKey {
            desc: false,
            coll: innoxide_engine::Collation::Binary,
            from_proj: Some(columns.len()),
        });
        let tmp = self.tmp_area();
        let mut sorter = Sorter::new(keys, &tmp.sort, None);
        let mut w = Warnings::default();
        for (side, buf, part) in [(0, &mut lb, &lc), (1, &mut rb, &rc)] {
            for j in 0..buf.len() {
                let mut row = conform_row(buf.row(j)?.to_vec(), part, &columns, &mut w)?;
                row.push(Datum::Int(side));
                sorter.push(row, Vec::new())?;
            }
        }
        drop((lb, rb));
        let mut sorted = sorter.finish()?;
        let mut out = RowBuf::new(tmp.budget, tmp.sort.tmpdir);
        // The row being counted and how often each side has it.
        let mut cur: Option<(Vec<Datum>, u64, u64)> = None;
        let same = |a: &[Datum], b: &[Datum]| {
            a.iter()
                .zip(b)
                .zip(&colls)
                .all(|((x, y), &c)| cmp_nulls_first(x, y, c) == Ordering::Equal)
        };
        loop {
            let next = sorted.next_proj()?;
            let next = next.map(|mut r| {
                let right = matches!(r.pop(), Some(Datum::Int(1)));
                (r, right)
            });
            match (&mut cur, &next) {
                (Some((row, l, r)), Some((n, right))) if same(row, n) => {
                    *if *right { r } else { l } += 1;
                    continue;
                }
                _ => {}
            }
            if let Some((row, l, r)) = cur.take() {
                let keep = match (op, all) {
                    (SetOp::Intersect, false) => u64::from(l > 0 && r > 0),
                    (SetOp::Intersect, true) => l.min(r),
                    (SetOp::Except, false) => u64::from(l > 0 && r == 0),
                    (SetOp::Except, true) => l.saturating_sub(r),
                };
                for _ in 0..keep {
                    out.push(row.clone())?;
                }
            }
            match next {
                Some((row, right)) => cur = Some((row, u64::from(!right), u64::from(right))),
                None => break,
            }
        }
        self.warnings.extend(w.0);
        Ok((columns, out))
    }
}
