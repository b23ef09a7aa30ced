//! Transactions: ids, undo logs, commit, rollback, the purge queue and recovery of incomplete
//! transactions. (InnoDB: trx0sys, trx0trx, trx0roll, trx0purge's queue.)
//!
//! OVERVIEW
//! A transaction gets an id and an undo log at its first change. Each change writes an undo
//! record first (its own mini-transaction), then changes the indexes. Commit moves the undo log
//! to its rollback segment's history list in one mini-transaction (the commit point), releases
//! the row locks and, per innodb_flush_log_at_trx_commit, waits for the redo to be durable.
//! Rollback applies the undo records in reverse (row::rollback) and frees the log. Purge takes
//! committed logs in transaction-number order (a heap holding the head of each rseg's history).
//!
//! PROGRESS MARKERS
//! - `next_id`: ids and commit numbers below it may be in use. The dictionary header stores a
//!   value at least `TRX_ID_WRITE_MARGIN` above every id handed out (written before the id that
//!   reaches it is used), so after a crash ids restart above all used ones.
//!
//! INVARIANTS
//! - I1: a transaction's redo for its undo records precedes its index changes (undo I2), and its
//!   commit record follows them, so recovery sees a committed transaction whole or rolls back
//!   an incomplete one whole.
//! - I2: with innodb_flush_log_at_trx_commit=1, `commit` returns only after the commit
//!   mini-transaction is durable.
//! - I3: a transaction's row locks are released only after its commit or rollback is complete
//!   in the buffer pool.
//!
//! LATCHING: `ids` mutex is taken alone or inside an rseg header latch (commit numbers);
//! `active` and `purge_heap` mutexes are leaves.

pub mod undo;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::buffer_pool::LatchMode;
use crate::dict::{DICT_HDR_PAGE, DICT_HDR_TRX_ID};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::lock::{LockKey, LockSys};
use crate::mach::read_u64;
use crate::mtr::Mtr;
use crate::types::{Lsn, PageId, PageNo, SYSTEM_SPACE};
use undo::{RollPtr, UndoLog};

pub const TRX_ID_WRITE_MARGIN: u64 = 256;
pub const N_RSEGS: u32 = 32;

#[derive(Default)]
pub struct TrxStats {
    pub commits: AtomicU64,
    pub rollbacks: AtomicU64,
    pub read_only_commits: AtomicU64,
}

/// An entry of the purge queue: a committed undo log at the head of its rseg's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PurgeItem {
    pub trx_no: u64,
    pub rseg: u8,
    pub first: PageNo,
}

pub struct TrxSys {
    ids: Mutex<u64>,
    /// Header page of each rollback segment (set once at startup).
    rsegs: std::sync::OnceLock<Vec<PageNo>>,
    next_rseg: AtomicUsize,
    active: Mutex<BTreeMap<u64, Instant>>,
    pub purge_heap: Mutex<BinaryHeap<Reverse<PurgeItem>>>,
    /// Committed undo logs not yet purged (Innodb_history_list_length).
    pub history_len: AtomicU64,
    pub purge_wake: (Mutex<u64>, Condvar),
    pub locks: LockSys,
    pub stats: TrxStats,
}

impl Default for TrxSys {
    fn default() -> Self {
        Self::new()
    }
}

impl TrxSys {
    pub fn new() -> Self {
        TrxSys {
            ids: Mutex::new(0),
            rsegs: std::sync::OnceLock::new(),
            next_rseg: AtomicUsize::new(0),
            active: Mutex::new(BTreeMap::new()),
            purge_heap: Mutex::new(BinaryHeap::new()),
            history_len: AtomicU64::new(0),
            purge_wake: (Mutex::new(0), Condvar::new()),
            locks: LockSys::new(),
            stats: TrxStats::default(),
        }
    }

    /// Startup: the rollback segments and the first free id (from the dictionary header).
    pub fn init(&self, rsegs: Vec<PageNo>, next_id: u64) {
        // Ids restart at a multiple of the margin so the next write of the margin happens on time.
        *self.ids.lock() = next_id.div_ceil(TRX_ID_WRITE_MARGIN) * TRX_ID_WRITE_MARGIN;
        let _ = self.rsegs.set(rsegs);
    }

    pub fn rsegs(&self) -> &[PageNo] {
        self.rsegs.get().map_or(&[], Vec::as_slice)
    }

    pub fn max_trx_id(&self) -> u64 {
        *self.ids.lock()
    }

    /// Hands out the next id (or commit number), persisting the margin first when needed.
    pub fn next_id(&self, inner: &Inner) -> Result<u64> {
        let mut g = self.ids.lock();
        let id = *g;
        if id.is_multiple_of(TRX_ID_WRITE_MARGIN) {
            let mut mtr = Mtr::new(inner);
            let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
            if read_u64(mtr.page(h), DICT_HDR_TRX_ID) < id + TRX_ID_WRITE_MARGIN {
                mtr.write_u64(h, DICT_HDR_TRX_ID, id + TRX_ID_WRITE_MARGIN);
            }
            mtr.commit()?;
        }
        *g = id + 1;
        Ok(id)
    }

    pub fn active_ids(&self) -> Vec<u64> {
        self.active.lock().keys().copied().collect()
    }

    pub fn n_active(&self) -> usize {
        self.active.lock().len()
    }

    pub fn wake_purge(&self) {
        let mut g = self.purge_wake.0.lock();
        *g += 1;
        self.purge_wake.1.notify_all();
    }

    pub fn push_purge(&self, item: PurgeItem) {
        self.purge_heap.lock().push(Reverse(item));
    }
}

/// The state of one transaction.
pub struct TrxState {
    /// 0 until the first change.
    pub id: u64,
    pub undo: Option<UndoLog>,
    pub locks: Vec<LockKey>,
    pub started: Instant,
    /// Recovered from a crash (rolled back by recovery).
    pub recovered: bool,
}

impl Default for TrxState {
    fn default() -> Self {
        Self::new()
    }
}

impl TrxState {
    pub fn new() -> Self {
        TrxState {
            id: 0,
            undo: None,
            locks: Vec::new(),
            started: Instant::now(),
            recovered: false,
        }
    }

    /// Assigns an id at the first change.
    pub fn ensure_id(&mut self, inner: &Inner) -> Result<u64> {
        if self.id == 0 {
            self.id = inner.trx.next_id(inner)?;
            inner.trx.active.lock().insert(self.id, self.started);
        }
        Ok(self.id)
    }

    /// Locks a row exclusively until commit/rollback.
    pub fn lock_row(&mut self, inner: &Inner, key: LockKey) -> Result<()> {
        self.ensure_id(inner)?;
        let secs = inner.tun.lock_wait_timeout.load(Ordering::Relaxed);
        if inner
            .trx
            .locks
            .lock_x(self.id, &key, Duration::from_secs(secs))?
        {
            self.locks.push(key);
        }
        Ok(())
    }

    /// Creates the undo log if the transaction has none yet. Call before latching pages: it may
    /// wait in log_free_check.
    pub fn ensure_undo(&mut self, inner: &Inner) -> Result<()> {
        let id = self.ensure_id(inner)?;
        if self.undo.is_none() {
            let n = inner.trx.rsegs().len();
            let start = inner.trx.next_rseg.fetch_add(1, Ordering::Relaxed);
            for i in 0..n {
                let r = (start + i) % n;
                if let Some(log) = undo::create(inner, r as u8, inner.trx.rsegs()[r], id)? {
                    self.undo = Some(log);
                    break;
                }
            }
            if self.undo.is_none() {
                return Err(Error::RowTooLarge(
                    "too many concurrent transactions: every undo slot is in use".into(),
                ));
            }
        }
        Ok(())
    }

    /// Appends an undo record (the log exists: `ensure_undo` ran before latching).
    pub fn write_undo(
        &mut self,
        inner: &Inner,
        kind: u8,
        table_id: u64,
        body: &[u8],
    ) -> Result<RollPtr> {
        let log = self.undo.as_mut().expect("ensure_undo before write_undo");
        undo::append(inner, log, kind, table_id, body)
    }

    /// Undo number of the next change (a savepoint).
    pub fn savepoint(&self) -> u64 {
        self.undo.map_or(0, |u| u.top_undo_no)
    }

    /// Commits. Returns the commit LSN (0 for a read-only transaction).
    pub fn commit(&mut self, inner: &Inner) -> Result<Lsn> {
        let Some(log) = self.undo.take() else {
            self.finish(inner);
            inner
                .trx
                .stats
                .read_only_commits
                .fetch_add(1, Ordering::Relaxed);
            return Ok(0);
        };
        inner.log_free_check()?;
        let mut no_err = None;
        let (trx_no, lsn, is_head) =
            undo::commit(inner, &log, || match inner.trx.next_id(inner) {
                Ok(n) => n,
                Err(e) => {
                    no_err = Some(e);
                    0
                }
            })?;
        if let Some(e) = no_err {
            return Err(e);
        }
        self.finish(inner);
        inner.trx.history_len.fetch_add(1, Ordering::Relaxed);
        if is_head {
            inner.trx.push_purge(PurgeItem {
                trx_no,
                rseg: log.rseg,
                first: log.first,
            });
        }
        inner.trx.stats.commits.fetch_add(1, Ordering::Relaxed);
        inner.trx.wake_purge();
        match inner.tun.trx_commit() {
            1 => inner.log.write_up_to(lsn, true)?,
            2 => inner.log.write_up_to(lsn, false)?,
            _ => {}
        }
        Ok(lsn)
    }

    /// Rolls the whole transaction back.
    pub fn rollback(&mut self, inner: &Inner) -> Result<()> {
        if let Some(mut log) = self.undo.take() {
            crate::row::rollback::rollback_to(inner, self.id, &mut log, 0)?;
            undo::free_log(inner, log.rseg_page, log.first, false)?;
        }
        self.finish(inner);
        inner.trx.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Rolls back the changes made since `savepoint` (statement rollback, SAVEPOINT).
    pub fn rollback_to(&mut self, inner: &Inner, savepoint: u64) -> Result<()> {
        if let Some(log) = self.undo.as_mut() {
            crate::row::rollback::rollback_to(inner, self.id, log, savepoint)?;
            undo::truncate_end(inner, log, savepoint)?;
        }
        Ok(())
    }

    fn finish(&mut self, inner: &Inner) {
        if self.id != 0 {
            inner.trx.locks.release(self.id, &self.locks);
            inner.trx.active.lock().remove(&self.id);
        }
        self.locks.clear();
        self.id = 0;
    }
}

/// Recovery: re-registers incomplete transactions from the rseg slots and rebuilds the purge
/// queue from the history lists. Returns the transactions to roll back.
pub fn recover(inner: &Inner) -> Result<Vec<TrxState>> {
    let mut out = Vec::new();
    let mut history = 0u64;
    for (r, &rp) in inner.trx.rsegs().iter().enumerate() {
        let st = undo::read_rseg(inner, rp)?;
        history += u64::from(st.history_len);
        if let Some(first) = st.history_first {
            let h = undo::read_header(inner, first)?;
            inner.trx.push_purge(PurgeItem {
                trx_no: h.trx_no,
                rseg: r as u8,
                first,
            });
        }
        for first in st.active {
            let h = undo::read_header(inner, first)?;
            let log = undo::reopen(inner, rp, first)?;
            let mut t = TrxState::new();
            t.id = h.trx_id;
            t.undo = Some(log);
            t.recovered = true;
            inner.trx.active.lock().insert(t.id, t.started);
            out.push(t);
        }
    }
    inner.trx.history_len.store(history, Ordering::Relaxed);
    Ok(out)
}
