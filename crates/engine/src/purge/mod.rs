//! Purge: removes what committed transactions left behind, oldest first: delete-marked clustered
//! records and secondary entries no current row needs, and off-page values of replaced
//! versions; then frees the undo log. (InnoDB: trx0purge, row0purge.)
//!
//! OVERVIEW
//! The purge queue holds the head of each rollback segment's history list; purge pops the log
//! with the smallest transaction number, applies each of its undo records, frees the log and
//! queues the rseg's next log. Purge runs in threads of its own (innodb_purge_threads), never in
//! the threads that flush, so a long history cannot starve flushing (the seed's "master thread
//! never leaves purge"). Purge threads take logs from the queue independently: two logs of one
//! rollback segment are never processed at once (only a segment's oldest log is queued), and
//! every removal re-checks its condition under the page latch (I1, I2), so the order in which
//! logs of different segments finish does not matter.
//!
//! innodb_max_purge_lag: when the history list is longer, each change waits
//! (`dml_delay`) before it starts, however many read views are open (the seed's bug was a delay
//! that depended on them), capped by innodb_max_purge_lag_delay.
//!
//! Each batch starts by taking the purge view (`TrxSys::purge_view`: it sees a transaction only
//! if every open read view does) and processes only logs whose transaction number is below the
//! view's `low_limit_no`, i.e. logs every open view sees: what they replaced is needed by none.
//!
//! INVARIANTS
//! - I1: purge removes a clustered record only if it is still delete-marked by the transaction
//!   whose log is being purged, and a secondary entry only if it is delete-marked and no
//!   version of the row that an open view may read (back to the first one the purge view
//!   sees) has it.
//! - I3: a log is purged only if the purge view sees its transaction.
//! - I2: processing a log again after a crash is harmless: removals re-check their conditions
//!   and off-page values are freed through references that the freeing overwrites.
//!
//! LATCHING: purge reads undo pages, then changes one index at a time (row module rules).

use std::cmp::Reverse;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::btree::{self, blob, Bound, Intent};
use crate::dict::{SecIndex, Table};
use crate::engine::Inner;
use crate::error::Result;
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple};
use crate::row::{sec, sec_entry, vers, ClustRec};
use crate::trx::undo::{self, UndoRec};
use crate::trx::view::ReadView;
use crate::trx::PurgeItem;
use crate::types::{PageNo, FIL_NULL};

#[derive(Default)]
pub struct PurgeStats {
    /// Undo logs purged.
    pub logs: AtomicU64,
    /// Undo records processed.
    pub records: AtomicU64,
    /// Purge batches (SHOW ENGINE INNODB STATUS "purge calls").
    pub batches: AtomicU64,
    /// Changes delayed by innodb_max_purge_lag.
    pub dml_delays: AtomicU64,
    /// Batches that failed (logged; the log is retried).
    pub errors: AtomicU64,
}

/// Calls `f` on the current clustered record for `key` (any transaction) with its leaf latched.
fn with_current<R>(
    inner: &Inner,
    t: &Table,
    key: &Tuple,
    f: impl FnOnce(Option<&[u8]>) -> Result<R>,
) -> Result<R> {
    let idx = &t.clustered;
    let mut mtr = Mtr::new(inner);
    let path = btree::descend(&mut mtr, idx, key, Bound::Upper, Intent::Read)?;
    let (leaf, slot) = (path.leaf().page, path.leaf().slot);
    let p = mtr.page(leaf);
    let found = slot > 0 && record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)).is_eq();
    let r = f(found.then(|| ip::rec(p, slot - 1)))?;
    mtr.commit()?;
    Ok(r)
}

/// True if a version of the row `rec` (or an older one, down to the first that `view` sees)
/// that is not deleted has a secondary entry at the place of `e` (I1). `view` is the published
/// purge view, held shared for the walk (trx purge_view; vers R1). Lock order: the purge view
/// latch before page latches.
pub fn entry_needed(
    inner: &Inner,
    t: &Table,
    s: &SecIndex,
    e: &Tuple,
    rec: &[u8],
    view: &ReadView,
) -> Result<bool> {
    vers::any_version_until(inner, t, rec, view, &mut |v| {
        if record::is_deleted(v) {
            return Ok(false);
        }
        let c = ClustRec::parse(t, v);
        Ok(sec::same_place(s, &sec_entry(inner, t, s, &c)?, e))
    })
}

fn purge_rec(inner: &Inner, trx_id: u64, r: &UndoRec) -> Result<()> {
    if r.kind == undo::UREC_INSERT {
        return Ok(());
    }
    let Some(t) = crate::ddl::table_for_undo(inner, r.table_id)? else {
        return Ok(());
    };
    let o = ClustRec::parse(&t, &r.old_rec);
    let key = o.key(&t);
    let cur = with_current(inner, &t, &key, |c| Ok(c.map(|c| ClustRec::parse(&t, c))))?;
    if r.kind == undo::UREC_DEL_MARK {
        // Remove the row if it is still the one this transaction deleted (I1).
        let Some(c) = cur.filter(|c| c.deleted && c.trx_id == trx_id) else {
            return Ok(());
        };
        for s in &t.secondary {
            let e = sec_entry(inner, &t, s, &c)?;
            sec::remove_if(
                inner,
                t.id,
                &s.index,
                &e,
                &|rec| record::is_deleted(rec),
                None,
            )?;
        }
        let pred = |rec: &[u8]| {
            let x = ClustRec::parse(&t, rec);
            x.deleted && x.trx_id == trx_id
        };
        let chains = |rec: &[u8]| -> Vec<PageNo> {
            ClustRec::parse(&t, rec)
                .externs(None)
                .iter()
                .map(|r| blob::ref_page(r))
                .filter(|&p| p != FIL_NULL)
                .collect()
        };
        sec::remove_if(inner, t.id, &t.clustered, &key, &pred, Some(&chains))?;
        return Ok(());
    }
    // UPDATE: entries of the old version that the current record does not have. (If the
    // current record is delete-marked and has the same entry, its own purge removes it.) A
    // reference already overwritten with FIL_NULL means an earlier pass got past this step.
    let resumed = o
        .externs(None)
        .iter()
        .any(|r| blob::ref_page(r) == FIL_NULL);
    for s in t.secondary.iter().filter(|_| !resumed) {
        let e_old = sec_entry(inner, &t, s, &o)?;
        // Walk versions with the published purge view held (taken before the leaf latch): a
        // purge thread with a newer view may be freeing logs this thread's view does not see.
        let keep = {
            let published = inner.trx.purge_view.read();
            with_current(inner, &t, &key, |c| match c {
                Some(c) => entry_needed(inner, &t, s, &e_old, c, &published),
                None => Ok(false),
            })?
        };
        if !keep {
            sec::remove_if(
                inner,
                t.id,
                &s.index,
                &e_old,
                &|rec| record::is_deleted(rec),
                None,
            )?;
        }
    }
    // Off-page values the update replaced (freed once, I2).
    let lay = &t.clustered.leaf;
    for (i, f) in record::FieldIter::new(lay, &r.old_rec).enumerate() {
        let f = f.expect("malformed record in undo");
        if f.ext && r.changed.contains(&(i as u16)) {
            let ref_off = usize::from(r.old_rec_off) + f.start;
            blob::free_from_undo(inner, t.space, r.page, ref_off)?;
        }
    }
    Ok(())
}

/// Purges one committed undo log.
fn purge_log(inner: &Inner, item: PurgeItem) -> Result<()> {
    let h = undo::read_header(inner, item.first)?;
    let mut n = 0;
    for pno in undo::log_pages(inner, item.first)? {
        let (recs, _) = undo::read_page_records(inner, pno)?;
        for r in &recs {
            purge_rec(inner, h.trx_id, r)?;
            n += 1;
        }
    }
    let rseg_page = inner.trx.rsegs()[usize::from(item.rseg)];
    if let Some((trx_no, first)) = undo::free_log(inner, rseg_page, item.first, true)? {
        inner.trx.push_purge(PurgeItem {
            trx_no,
            rseg: item.rseg,
            first,
        });
    }
    inner.trx.history_len.fetch_sub(1, Ordering::Relaxed);
    inner.purge_stats.records.fetch_add(n, Ordering::Relaxed);
    inner.purge_stats.logs.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// The delay before a change when the history list exceeds innodb_max_purge_lag (InnoDB's
/// formula: (history / lag - 0.5) * 10 ms once the ratio passes 1), capped by
/// innodb_max_purge_lag_delay (microseconds) when that is set.
pub fn dml_delay(inner: &Inner) -> Duration {
    let lag = inner.tun.max_purge_lag.load(Ordering::Relaxed);
    if lag == 0 {
        return Duration::ZERO;
    }
    let ratio = inner.trx.history_len.load(Ordering::Relaxed) as f64 / lag as f64;
    if ratio <= 1.0 {
        return Duration::ZERO;
    }
    let mut us = ((ratio - 0.5) * 10_000.0) as u64;
    let cap = inner.tun.max_purge_lag_delay.load(Ordering::Relaxed);
    if cap > 0 {
        us = us.min(cap);
    }
    inner.purge_stats.dml_delays.fetch_add(1, Ordering::Relaxed);
    Duration::from_micros(us)
}

/// Purges up to `max` undo logs that every open read view sees (I3); returns how many.
pub fn purge_batch(inner: &Inner, max: usize) -> Result<usize> {
    let _gate = inner.bg_gate.read();
    let _purge = inner.purge_gate.read();
    let pv = {
        // Several purge threads: publish only a newer view (the published one must see every
        // log any purge thread frees, trx purge_view).
        let mut g = inner.trx.purge_view.write();
        let pv = Arc::new(inner.trx.purge_view());
        if pv.low_limit_id >= g.low_limit_id && pv.low_limit_no >= g.low_limit_no {
            *g = pv.clone();
        }
        g.clone()
    };
    let mut done = 0;
    while done < max {
        let item = {
            let mut h = inner.trx.purge_heap.lock();
            match h.peek() {
                Some(Reverse(i)) if i.trx_no < pv.low_limit_no => h.pop().map(|Reverse(i)| i),
                _ => None,
            }
        };
        let Some(item) = item else {
            break;
        };
        if let Err(e) = purge_log(inner, item) {
            inner.trx.push_purge(item);
            return Err(e);
        }
        done += 1;
    }
    if done > 0 {
        inner.purge_stats.batches.fetch_add(1, Ordering::Relaxed);
    }
    Ok(done)
}

/// The purge thread: runs until shutdown, sleeping when there is nothing to purge.
pub fn run(inner: Arc<Inner>) {
    let mut seen = 0u64;
    while !inner.shutting_down.load(Ordering::Acquire) {
        match purge_batch(&inner, 32) {
            Ok(0) => {
                let (m, cv) = &inner.trx.purge_wake;
                let mut g = m.lock();
                if *g == seen {
                    cv.wait_for(&mut g, Duration::from_millis(500));
                }
                seen = *g;
            }
            // A small batch: let work gather for a moment rather than take a purge view per
            // commit.
            Ok(n) if n < 8 => std::thread::sleep(Duration::from_millis(5)),
            Ok(_) => {}
            Err(e) => {
                inner.purge_stats.errors.fetch_add(1, Ordering::Relaxed);
                if !e.is_fatal() {
                    tracing::error!("InnoDB: purge failed: {e}");
                }
                std::thread::sleep(Duration::from_millis(100));
                if inner.failed.load(Ordering::Acquire) {
                    return;
                }
            }
        }
    }
}
