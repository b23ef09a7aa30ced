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
//! READ VIEWS
//! Ids and commit numbers come from one counter under the `sys` lock, which also holds the set
//! of active transactions and the numbers of commits in progress. Handing out an id and
//! registering it as active happen in one step, as do the end of a commit and its removal, so
//! a read view (taken under the lock in read mode) never sees half of either.
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
//! LATCHING: `sys` is taken alone or inside an rseg header latch (commit numbers); in write
//! mode it may latch the dictionary header page (the id margin). View stripes are taken
//! inside `sys`; `purge_heap` is a leaf.

pub mod admission;
pub mod undo;
pub mod view;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::latch::{Condvar, Mutex, RwLock};

use crate::buffer_pool::LatchMode;
use crate::dict::{DICT_HDR_PAGE, DICT_HDR_TRX_ID};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::lock::{Kind, LockKey, LockSys, Mode, Outcome, TrxLocks};
use crate::mach::read_u64;
use crate::mtr::Mtr;
use crate::sync_stats::{WaitMutex, WaitRwLock};
use crate::types::{Lsn, PageId, PageNo, TableId, SYSTEM_SPACE};
use undo::{RollPtr, UndoLog};
use view::{ReadView, ViewRegistry};

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

/// Isolation levels, with MySQL's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Isolation {
    ReadUncommitted = 0,
    ReadCommitted = 1,
    RepeatableRead = 2,
    Serializable = 3,
}

impl Isolation {
    pub fn from_u8(v: u8) -> Isolation {
        match v {
            0 => Isolation::ReadUncommitted,
            1 => Isolation::ReadCommitted,
            3 => Isolation::Serializable,
            _ => Isolation::RepeatableRead,
        }
    }

    /// MySQL's name (`transaction_isolation` values).
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "READ-UNCOMMITTED",
            Isolation::ReadCommitted => "READ-COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE-READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// Parses a `transaction_isolation` value (dashes or spaces, any case).
    pub fn parse(s: &str) -> Option<Isolation> {
        let n = s.trim().to_ascii_uppercase().replace(' ', "-");
        [
            Isolation::ReadUncommitted,
            Isolation::ReadCommitted,
            Isolation::RepeatableRead,
            Isolation::Serializable,
        ]
        .into_iter()
        .find(|l| l.name() == n)
    }
}

/// What the `sys` lock protects.
struct SysState {
    /// The next id or commit number.
    next_id: u64,
    /// Active transactions (those with an id) and when they started.
    active: BTreeMap<u64, Instant>,
    /// Commit numbers handed out whose transaction is still in the active set.
    committing: BTreeSet<u64>,
}

pub struct TrxSys {
    sys: RwLock<SysState>,
    pub views: ViewRegistry,
    /// The newest view a purge thread took. Purge frees only undo logs its own view sees, and
    /// a purge thread's view is never newer than this one; whoever walks old row versions
    /// outside a leaf latch holds it shared and stops at versions it sees (row::vers R1).
    pub purge_view: WaitRwLock<Arc<ReadView>>,
    /// Header page of each rollback segment (set once at startup).
    rsegs: std::sync::OnceLock<Vec<PageNo>>,
    next_rseg: AtomicUsize,
    /// Waits count as `purge_sys` (sync_stats); `purge_view`'s as `purge_sys_latch`.
    pub purge_heap: WaitMutex<BinaryHeap<Reverse<PurgeItem>>>,
    /// Committed undo logs not yet purged (Innodb_history_list_length).
    pub history_len: AtomicU64,
    pub purge_wake: (Mutex<u64>, Condvar),
    pub locks: LockSys,
    pub admission: admission::Admission,
    /// Transactions recovered active, waiting to be rolled back (by the rollback thread).
    pub to_roll_back: Mutex<Vec<TrxState>>,
    /// Set when every recovered active transaction has been rolled back.
    pub recovery_rollback_done: (Mutex<bool>, Condvar),
    /// Transactions recovered prepared (XA RECOVER lists them).
    pub prepared: Mutex<Vec<TrxState>>,
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
            sys: RwLock::new(SysState {
                next_id: 0,
                active: BTreeMap::new(),
                committing: BTreeSet::new(),
            }),
            views: ViewRegistry::new(),
            purge_view: WaitRwLock::new(Arc::new(ReadView {
                low_limit_id: 0,
                up_limit_id: 0,
                active: Vec::new(),
                low_limit_no: 0,
            })),
            rsegs: std::sync::OnceLock::new(),
            next_rseg: AtomicUsize::new(0),
            purge_heap: WaitMutex::new(BinaryHeap::new()),
            history_len: AtomicU64::new(0),
            purge_wake: (Mutex::new(0), Condvar::new()),
            locks: LockSys::new(),
            admission: admission::Admission::default(),
            to_roll_back: Mutex::new(Vec::new()),
            recovery_rollback_done: (Mutex::new(true), Condvar::new()),
            prepared: Mutex::new(Vec::new()),
            stats: TrxStats::default(),
        }
    }

    /// Startup: the rollback segments and the first free id (from the dictionary header).
    pub fn init(&self, rsegs: Vec<PageNo>, next_id: u64) {
        // Ids restart at a multiple of the margin so the next write of the margin happens on time.
        self.sys.write().next_id = next_id.div_ceil(TRX_ID_WRITE_MARGIN) * TRX_ID_WRITE_MARGIN;
        let _ = self.rsegs.set(rsegs);
    }

    pub fn rsegs(&self) -> &[PageNo] {
        self.rsegs.get().map_or(&[], Vec::as_slice)
    }

    pub fn max_trx_id(&self) -> u64 {
        self.sys.read().next_id
    }

    /// Hands out the next id or commit number, persisting the margin first when needed.
    fn alloc_id(inner: &Inner, g: &mut SysState) -> Result<u64> {
        let id = g.next_id;
        if id.is_multiple_of(TRX_ID_WRITE_MARGIN) {
            let mut mtr = Mtr::new(inner);
            let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
            if read_u64(mtr.page(h), DICT_HDR_TRX_ID) < id + TRX_ID_WRITE_MARGIN {
                mtr.write_u64(h, DICT_HDR_TRX_ID, id + TRX_ID_WRITE_MARGIN);
            }
            mtr.commit()?;
        }
        g.next_id = id + 1;
        Ok(id)
    }

    /// An id no transaction will have: a view taken after this returns sees it, one taken
    /// before does not (a marker for when a change to the dictionary became visible).
    pub fn new_id(&self, inner: &Inner) -> Result<u64> {
        Self::alloc_id(inner, &mut self.sys.write())
    }

    /// A new transaction id, registered as active in the same step.
    pub fn start(&self, inner: &Inner, started: Instant) -> Result<u64> {
        let mut g = self.sys.write();
        let id = Self::alloc_id(inner, &mut g)?;
        g.active.insert(id, started);
        Ok(id)
    }

    /// A commit number for active transaction `id` (called with its rseg header latched).
    pub fn commit_no(&self, inner: &Inner) -> Result<u64> {
        let mut g = self.sys.write();
        let no = Self::alloc_id(inner, &mut g)?;
        g.committing.insert(no);
        Ok(no)
    }

    /// Removes a finished transaction (and its commit number, if any) from the active set.
    fn end(&self, id: u64, no: Option<u64>) {
        let mut g = self.sys.write();
        g.active.remove(&id);
        if let Some(n) = no {
            g.committing.remove(&n);
        }
    }

    /// True if transaction `id` has not finished committing or rolling back.
    pub fn is_active(&self, id: u64) -> bool {
        self.sys.read().active.contains_key(&id)
    }

    fn view_of(g: &SysState, own: u64) -> ReadView {
        let active: Vec<u64> = g.active.keys().copied().filter(|&i| i != own).collect();
        ReadView {
            low_limit_id: g.next_id,
            up_limit_id: active.first().copied().unwrap_or(g.next_id),
            active,
            low_limit_no: g.committing.first().copied().unwrap_or(g.next_id),
        }
    }

    /// Opens a read view for a transaction whose id is `own` (0 if none yet).
    pub fn open_view(&self, own: u64) -> Arc<ReadView> {
        let g = self.sys.read();
        let v = Arc::new(Self::view_of(&g, own));
        self.views.register(&v);
        v
    }

    /// The view purge works with: it sees a transaction only if every open view does.
    pub fn purge_view(&self) -> ReadView {
        let fresh = Self::view_of(&self.sys.read(), 0);
        self.views.purge_view(fresh)
    }

    pub fn active_ids(&self) -> Vec<u64> {
        self.sys.read().active.keys().copied().collect()
    }

    /// Active transactions (with an id) and when each started, oldest id first.
    pub fn active_list(&self) -> Vec<(u64, Instant)> {
        self.sys
            .read()
            .active
            .iter()
            .map(|(&i, &t)| (i, t))
            .collect()
    }

    pub fn n_active(&self) -> usize {
        self.sys.read().active.len()
    }

    /// Rolls back the transactions recovered active, oldest first, logging progress; then
    /// marks recovery rollback done. Runs in its own thread while the engine serves (InnoDB's
    /// trx_rollback_all_recovered): the rows those transactions changed stay locked by them
    /// (implicit locks) until each is rolled back.
    pub fn roll_back_recovered(&self, inner: &Inner) -> Result<()> {
        loop {
            let t = self.to_roll_back.lock().pop();
            let Some(mut t) = t else { break };
            let n = t.undo.map_or(0, |u| u.top_undo_no);
            let started = Instant::now();
            tracing::info!(
                "InnoDB: Rolling back trx with id {}, {n} rows to undo",
                t.id
            );
            if let Err(e) = t.rollback(inner) {
                // Leave the rest for the next start (rollback is idempotent).
                *self.recovery_rollback_done.0.lock() = true;
                self.recovery_rollback_done.1.notify_all();
                return Err(e);
            }
            tracing::info!(
                "InnoDB: Rollback of trx with id {} completed in {:.1} s",
                t.id,
                started.elapsed().as_secs_f64()
            );
        }
        tracing::info!("InnoDB: Rollback of non-prepared transactions completed");
        *self.recovery_rollback_done.0.lock() = true;
        self.recovery_rollback_done.1.notify_all();
        Ok(())
    }

    /// Waits until the recovered active transactions are rolled back.
    pub fn wait_recovery_rollback(&self) {
        let (m, cv) = &self.recovery_rollback_done;
        let mut g = m.lock();
        while !*g {
            cv.wait(&mut g);
        }
    }

    pub fn wake_purge(&self) {
        let mut g = self.purge_wake.0.lock();
        *g += 1;
        self.purge_wake.1.notify_one();
    }

    /// Wakes every purge thread (shutdown).
    pub fn wake_all_purge(&self) {
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
    /// Lock state, registered with the id.
    pub locks: Option<Arc<TrxLocks>>,
    pub started: Instant,
    /// Recovered from a crash (rolled back by recovery).
    pub recovered: bool,
    pub isolation: Isolation,
    /// The read view of consistent reads (REPEATABLE READ: kept until the end; READ
    /// COMMITTED: one per statement).
    pub view: Option<Arc<ReadView>>,
    /// Inside `begin_statement` .. `end_statement`: a READ COMMITTED view lasts until the end.
    pub in_statement: bool,
    /// innodb_lock_wait_timeout for this transaction (session value), if set.
    pub lock_wait_timeout: Option<Duration>,
    /// innodb_thread_concurrency slot.
    pub slot: admission::Slot,
    /// The XID once prepared (XA PREPARE), also when recovered in that state.
    pub xid: Option<Vec<u8>>,
    /// What a locking read does about a row another transaction holds (FOR UPDATE / FOR
    /// SHARE ... NOWAIT or SKIP LOCKED); back to `Wait` at the end of each statement.
    pub wait_policy: WaitPolicy,
    /// The table locks granted so far (table locks are held to the end: nothing releases
    /// one before `finish`), so a row change does not ask the lock system again.
    tables: Vec<(TableId, Mode)>,
    /// The AUTO-INC locks the current statement holds (released by `end_statement`).
    autoinc: Vec<TableId>,
    /// Who runs it (the server's connection id; 0: none), shown with its locks.
    pub owner: u64,
}

/// What a locking read does when a row it wants is locked by another transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Wait for it (up to innodb_lock_wait_timeout), as usual.
    #[default]
    Wait,
    /// Fail at once (MySQL 3572).
    NoWait,
    /// Leave the row out of the result.
    SkipLocked,
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
            locks: None,
            started: Instant::now(),
            recovered: false,
            isolation: Isolation::RepeatableRead,
            view: None,
            in_statement: false,
            lock_wait_timeout: None,
            slot: admission::Slot::default(),
            xid: None,
            wait_policy: WaitPolicy::Wait,
            tables: Vec::new(),
            autoinc: Vec::new(),
            owner: 0,
        }
    }

    /// Assigns an id at the first change or locking read.
    pub fn ensure_id(&mut self, inner: &Inner) -> Result<u64> {
        if self.id == 0 {
            self.id = inner.trx.start(inner, self.started)?;
            let l = inner.trx.locks.register(self.id);
            l.owner.store(self.owner, Ordering::Relaxed);
            l.isolation.store(self.isolation as u8, Ordering::Relaxed);
            self.locks = Some(l);
        }
        Ok(self.id)
    }

    /// The transaction's lock state (assigning its id if needed).
    pub fn lock_state(&mut self, inner: &Inner) -> Result<Arc<TrxLocks>> {
        self.ensure_id(inner)?;
        Ok(self.locks.clone().expect("registered with the id"))
    }

    fn wait_timeout(&self, inner: &Inner) -> Duration {
        self.lock_wait_timeout.unwrap_or_else(|| {
            Duration::from_secs(inner.tun.lock_wait_timeout.load(Ordering::Relaxed))
        })
    }

    /// Takes a lock if nothing conflicts, never waiting (page latches may be held).
    pub fn try_lock(
        &mut self,
        inner: &Inner,
        key: &LockKey,
        mode: Mode,
        kind: Kind,
    ) -> Result<Outcome> {
        let l = self.lock_state(inner)?;
        Ok(inner.trx.locks.try_lock(&l, key, mode, kind))
    }

    /// Waits for a lock (no page latch may be held: lock I2), outside the engine's admission
    /// slots (admission).
    pub fn wait_lock(
        &mut self,
        inner: &Inner,
        key: &LockKey,
        mode: Mode,
        kind: Kind,
    ) -> Result<()> {
        let l = self.lock_state(inner)?;
        let timeout = self.wait_timeout(inner);
        let had_slot = self.slot.is_held();
        inner.trx.admission.exit(&mut self.slot);
        let r = inner.trx.locks.lock_wait(&l, key, mode, kind, timeout);
        if had_slot {
            inner.trx.admission.enter(&inner.tun, &mut self.slot);
        }
        r
    }

    /// Enters the engine (innodb_thread_concurrency).
    pub fn enter(&mut self, inner: &Inner) {
        inner.trx.admission.enter(&inner.tun, &mut self.slot);
    }

    /// Leaves the engine at the end of a call, unless a statement is in progress.
    pub fn leave(&mut self, inner: &Inner) {
        if !self.in_statement {
            inner.trx.admission.exit(&mut self.slot);
        }
    }

    /// Takes a lock, waiting if needed (no page latch may be held).
    pub fn lock(&mut self, inner: &Inner, key: &LockKey, mode: Mode, kind: Kind) -> Result<()> {
        if self.try_lock(inner, key, mode, kind)? == Outcome::MustWait {
            self.wait_lock(inner, key, mode, kind)?;
        }
        Ok(())
    }

    /// True if the transaction holds a table lock (of any mode) on `table`.
    pub fn has_table_lock(&self, table: TableId) -> bool {
        self.tables.iter().any(|&(t, _)| t == table)
    }

    /// A table lock, unless one the transaction holds already gives it (InnoDB's
    /// lock_table_has, looked up in the transaction's own list).
    pub fn lock_table(&mut self, inner: &Inner, table: TableId, mode: Mode) -> Result<()> {
        if (self.tables.iter()).any(|&(t, m)| t == table && m.covers(mode)) {
            return Ok(());
        }
        self.lock(inner, &LockKey::table(table), mode, Kind::RecNotGap)?;
        self.tables.push((table, mode));
        Ok(())
    }

    /// The table's AUTO-INC lock until the statement ends (innodb_autoinc_lock_mode 0, and 1
    /// for inserts of an unknown number of rows), waiting as for any lock (timeout, deadlock
    /// detection).
    pub fn lock_autoinc(&mut self, inner: &Inner, table: TableId) -> Result<()> {
        if self.autoinc.contains(&table) {
            return Ok(());
        }
        self.lock(inner, &LockKey::autoinc(table), Mode::X, Kind::RecNotGap)?;
        self.autoinc.push(table);
        Ok(())
    }

    /// True if another transaction's lock would make this request wait.
    pub fn conflicts(&self, inner: &Inner, key: &LockKey, mode: Mode, kind: Kind) -> bool {
        inner.trx.locks.conflicts(self.id, key, mode, kind)
    }

    /// Locks a row exclusively until commit/rollback (unique values of secondary indexes).
    pub fn lock_row(&mut self, inner: &Inner, key: LockKey) -> Result<()> {
        self.lock(inner, &key, Mode::X, Kind::RecNotGap)
    }

    /// The view for a consistent read: None at READ UNCOMMITTED (latest versions are read).
    /// READ COMMITTED takes a new view for every statement: every read call outside
    /// `begin_statement`, or the first one inside.
    pub fn read_view(&mut self, inner: &Inner) -> Option<Arc<ReadView>> {
        match self.isolation {
            Isolation::ReadUncommitted => return None,
            Isolation::ReadCommitted if !self.in_statement => self.view = None,
            _ => {}
        }
        if self.view.is_none() {
            self.view = Some(inner.trx.open_view(self.id));
        }
        self.view.clone()
    }

    /// Starts a statement: its consistent reads share one view at READ COMMITTED.
    pub fn begin_statement(&mut self) {
        self.in_statement = true;
        if self.isolation <= Isolation::ReadCommitted {
            self.view = None;
        }
    }

    pub fn end_statement(&mut self, inner: &Inner) {
        if let Some(l) = &self.locks {
            for t in self.autoinc.drain(..) {
                inner.trx.locks.unlock_row(l, &LockKey::autoinc(t));
            }
        }
        self.in_statement = false;
        self.wait_policy = WaitPolicy::Wait;
        inner.trx.admission.exit(&mut self.slot);
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
        let rp = undo::append(inner, log, kind, table_id, body)?;
        if let Some(l) = &self.locks {
            l.undo_records.store(log.top_undo_no, Ordering::Relaxed);
        }
        Ok(rp)
    }

    /// Undo number of the next change (a savepoint).
    pub fn savepoint(&self) -> u64 {
        self.undo.map_or(0, |u| u.top_undo_no)
    }

    /// Prepares for a two-phase commit (XA PREPARE): the undo log is marked prepared with the
    /// XID and, per innodb_flush_log_at_trx_commit, made durable. A prepared transaction
    /// survives a crash with its changes and locks until it is committed or rolled back.
    pub fn prepare(&mut self, inner: &Inner, xid: &[u8]) -> Result<()> {
        if let Some(log) = self.undo {
            inner.log_free_check()?;
            let lsn = undo::prepare(inner, &log, xid)?;
            match inner.tun.trx_commit() {
                1 => inner.log.write_up_to(lsn, true)?,
                2 => inner.log.write_up_to(lsn, false)?,
                _ => {}
            }
        }
        self.xid = Some(xid.to_vec());
        Ok(())
    }

    /// Commits. Returns the commit LSN (0 for a read-only transaction).
    pub fn commit(&mut self, inner: &Inner) -> Result<Lsn> {
        let Some(log) = self.undo.take() else {
            self.finish(inner, None);
            inner
                .trx
                .stats
                .read_only_commits
                .fetch_add(1, Ordering::Relaxed);
            return Ok(0);
        };
        inner.log_free_check()?;
        let mut no_err = None;
        let mut no = None;
        let r = undo::commit(inner, &log, || match inner.trx.commit_no(inner) {
            Ok(n) => {
                no = Some(n);
                n
            }
            Err(e) => {
                no_err = Some(e);
                0
            }
        });
        if let Some(n) = no {
            if r.is_err() || no_err.is_some() {
                inner.trx.end(self.id, Some(n));
            }
        }
        let (trx_no, lsn, is_head) = r?;
        if let Some(e) = no_err {
            return Err(e);
        }
        self.finish(inner, no);
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
        self.finish(inner, None);
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

    fn finish(&mut self, inner: &Inner, no: Option<u64>) {
        inner.trx.admission.exit(&mut self.slot);
        if self.id != 0 {
            // Out of the active set before the locks go (InnoDB's order): whoever a released
            // lock lets in opens its read view after this, so it sees what we committed (a
            // copy under a shared table lock would otherwise miss a write acknowledged
            // before the copy started).
            inner.trx.end(self.id, no);
            if let Some(l) = self.locks.take() {
                inner.trx.locks.release_all(&l);
            }
        }
        self.id = 0;
        self.view = None;
        self.tables.clear();
        self.autoinc.clear();
    }
}

/// Recovery: re-registers incomplete transactions from the rseg slots and rebuilds the purge
/// queue from the history lists. Returns the incomplete transactions: prepared ones (with
/// their XID) wait for XA COMMIT or XA ROLLBACK, the others are to be rolled back.
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
            if h.state == undo::STATE_PREPARED {
                t.xid = Some(h.xid.clone());
            }
            t.locks = Some(inner.trx.locks.register(t.id));
            inner.trx.sys.write().active.insert(t.id, t.started);
            out.push(t);
        }
    }
    inner.trx.history_len.store(history, Ordering::Relaxed);
    Ok(out)
}
