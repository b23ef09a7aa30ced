//! Recursive common table expressions (WITH RECURSIVE): the anchor SELECTs give the first
//! rows; each round runs the recursive SELECTs with the CTE's name bound to the rows the
//! previous round added (`Session::cte_work`), until a round adds none.
//! (MySQL: sql_union.cc, the recursive query block's iterations.)
//!
//! INVARIANTS
//! - R1: a round reads only the previous round's rows; the result is the anchor's rows then
//!   each round's, in order; with UNION DISTINCT a row already in the result is not added
//!   (and so does not feed the next round).
//! - R2: more than cte_max_recursion_depth rounds that add rows is error 3636; the binding is
//!   removed whether a round succeeds or fails.
//! - R3: the columns (names and types) are the anchor's; every recursive SELECT must give as
//!   many (1222).
//! - R4: the result gathers in a row buffer (rowbuf.rs: tmp_table_size in memory, tmpdir
//!   beyond it); with UNION DISTINCT, the keys of the rows so far in a growing key set
//!   (keyset.rs K4: tmp_table_size in memory, sorted runs in tmpdir beyond it); only the
//!   previous round's rows are held in memory.
//!
//! Latch order: none (the statement's rows only).

use innoxide_sql::ast::RecursiveCte;
use innoxide_sql::error::*;
use innoxide_sql::types::Datum;

use super::group::row_key;
use super::keyset::GrowingKeys;
use super::rowbuf::RowBuf;
use super::{Column, Session};

impl Session {
    /// The rows of recursive CTE `cte` (R1-R3).
    pub(crate) fn recursive_cte(
        &mut self,
        cte: &RecursiveCte,
        params: &[Datum],
    ) -> Result<(Vec<Column>, RowBuf), SqlError> {
        let (cols, mut anchor) = self.select(&cte.anchor, params)?;
        let tmp = self.tmp_area();
        let mut seen = GrowingKeys::new(tmp.sort.clone(), tmp.budget);
        if cte.distinct {
            anchor = new_rows(&mut seen, anchor)?;
        }
        let mut all = RowBuf::new(tmp.budget, tmp.sort.tmpdir);
        for r in &anchor {
            all.push(r.clone())?;
        }
        let mut work = anchor;
        let max = self.vars.cte_max_recursion_depth();
        let mut rounds = 0u64;
        while !work.is_empty() {
            if rounds >= max {
                return Err(SqlError::new(ER_CTE_MAX_RECURSION_DEPTH, &[&(rounds + 1)]));
            }
            rounds += 1;
            self.cte_work
                .push((cte.name.clone(), cols.clone(), std::mem::take(&mut work)));
            let mut added = Vec::new();
            let mut failed = None;
            for part in &cte.recursive {
                match self.select(part, params) {
                    Ok((c, _)) if c.len() != cols.len() => {
                        failed = Some(SqlError::new(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, &[]));
                        break;
                    }
                    Ok((_, rows)) => added.extend(rows),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            self.cte_work.pop();
            if let Some(e) = failed {
                return Err(e);
            }
            if cte.distinct {
                added = new_rows(&mut seen, added)?;
            }
            for r in &added {
                all.push(r.clone())?;
            }
            work = added;
        }
        Ok((cols, all))
    }
}

/// The rows of `rows` whose keys `seen` did not hold, now added to it (R1).
fn new_rows(seen: &mut GrowingKeys, rows: Vec<Vec<Datum>>) -> Result<Vec<Vec<Datum>>, SqlError> {
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        if seen.insert(row_key(&r, &[]))? {
            out.push(r);
        }
    }
    Ok(out)
}
