//! Row and table locks, waits, deadlock detection. (InnoDB: lock0lock, lock0wait.)
//!
//! OVERVIEW
//! Locks name index records logically: (table, index, the record's ordering key normalised by
//! its collations), plus one "supremum" key per index for the gap after its last record. A
//! request has a mode (S or X; IS, IX, S, X for tables) and a kind: next-key (the record and
//! the gap before it), gap only, record only, or insert intention (a gap lock an inserter
//! waits for). The conflict rules are InnoDB's (`has_to_wait`): gap locks never wait and only
//! insert intentions wait for them; S and S are compatible.
//!
//! Locks are kept compactly, in two ways. First, a change to a clustered record does not
//! create a lock. The record's transaction id is its implicit X lock while that transaction
//! is active; another transaction that needs the record first turns it into an explicit lock
//! for its owner (`make_explicit`), then queues behind it. Second, explicit locks (locking
//! reads, gap locks, waits, such conversions) are lock structs with bitmaps, as InnoDB's are
//! (`store`): keys that differ only in their last byte share a bucket, and a transaction's
//! granted requests of one mode and kind in a bucket are one struct with one bit per key. A
//! transaction that locks a million consecutive rows holds about 4,000 structs, a bit per
//! row, and one 8-byte entry per bucket in its own list (`TrxLockState::buckets`).
//!
//! The buckets are sharded by the hash of their key; each shard has a mutex and a condition
//! variable its waiters sleep on. A waiter re-examines its key's requests when woken: it is
//! granted when no conflicting request of another transaction is granted or queued ahead of it.
//!
//! Deadlocks: a transaction about to wait records whom it waits for in the wait-for graph and
//! searches it for a cycle back to itself. The victim is the cycle's lightest transaction
//! (undo records + locks, InnoDB's trx_weight), the requester on ties. A victim that is
//! another, waiting, transaction is flagged and woken; it returns `Error::Deadlock` and its
//! caller rolls it back.
//!
//! INVARIANTS (and the storage's S1-S3 in `store`)
//! - L1: a transaction's granted requests conflict with no granted request of another
//!   transaction on the same key.
//! - L2: a transaction waiting for a lock holds no page latch (callers release latches and
//!   retry their operation after the wait).
//! - L3: every bucket in which a transaction has a struct is in its `TrxLockState::buckets`
//!   (by hash), so `release_all` finds every struct; after `release_all` (`finished`), no
//!   request is created for it.
//! - L4: no request survives its record leaving the index. `lock_wait` may therefore return
//!   without a grant; every caller retries its operation after a wait and takes its lock again
//!   (with `try_lock`) on what it then finds.
//!
//! LATCHING: a `TrxLocks` mutex may be held while taking a shard mutex (grant, conversion,
//! release); a shard mutex may be held while taking the wait-for graph mutex; nothing is taken
//! inside the graph mutex, and no two shard mutexes are held at once. Callers may hold page
//! latches while calling anything but `lock_wait`.
//! Contended shard mutex acquisitions count as `lock_sys_shard`, each row lock wait (with its
//! duration) as `row_lock_wait` (sync_stats).

mod store;

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::latch::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::sync_stats::{WaitMutex, WaitStat};
use crate::types::{IndexId, TableId};
pub use store::Req;
use store::{split, BucketKey, BucketMap};

/// Bytes of one lock structure (information_schema.INNODB_TRX's TRX_LOCK_MEMORY_BYTES counts
/// a transaction's structures at this size).
pub const LOCK_STRUCT_BYTES: u64 = std::mem::size_of::<store::LockStruct>() as u64;

/// Index id used for table lock keys.
const TABLE_KEY: IndexId = u64::MAX;
/// Index id of a table's AUTO-INC lock (innodb_autoinc_lock_mode 0 and 1): a table-level
/// lock of its own, taken in X mode by a statement that allocates auto-increment values
/// and released when the statement ends (TrxState::end_statement), as InnoDB's
/// LOCK_AUTO_INC. It conflicts only with another AUTO-INC request on the same table.
const AUTOINC_KEY: IndexId = u64::MAX - 1;
/// Key bytes of an index's supremum (real keys start with a 0 or 1 flag byte).
const SUPREMUM: u8 = 2;

/// What a lock names: a record (or the supremum) of an index, or a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub table: TableId,
    pub index: IndexId,
    pub key: Vec<u8>,
}

impl LockKey {
    pub fn table(table: TableId) -> LockKey {
        LockKey {
            table,
            index: TABLE_KEY,
            key: Vec::new(),
        }
    }

    /// A table's AUTO-INC lock (`AUTOINC_KEY`).
    pub fn autoinc(table: TableId) -> LockKey {
        LockKey {
            table,
            index: AUTOINC_KEY,
            key: Vec::new(),
        }
    }

    /// The gap after the last record of an index.
    pub fn supremum(table: TableId, index: IndexId) -> LockKey {
        LockKey {
            table,
            index,
            key: vec![SUPREMUM],
        }
    }

    pub fn is_supremum(&self) -> bool {
        self.key.first() == Some(&SUPREMUM)
    }

    /// A table-level lock: the table's own, or its AUTO-INC lock.
    pub fn is_table(&self) -> bool {
        self.index == TABLE_KEY || self.index == AUTOINC_KEY
    }

    pub fn is_autoinc(&self) -> bool {
        self.index == AUTOINC_KEY
    }

    /// The fields of a record key (None: SQL NULL; otherwise the field's bytes normalised by
    /// its collation, row::lock::key_of), or None for the supremum or a table.
    pub fn fields(&self) -> Option<Vec<Option<&[u8]>>> {
        if self.is_table() || self.is_supremum() {
            return None;
        }
        let mut out = Vec::new();
        let mut rest = &self.key[..];
        while let Some((&flag, r)) = rest.split_first() {
            if flag == 0 {
                out.push(None);
                rest = r;
                continue;
            }
            let (len, r) = r.split_first_chunk::<4>()?;
            let len = u32::from_be_bytes(*len) as usize;
            out.push(Some(r.get(..len)?));
            rest = &r[len..];
        }
        Some(out)
    }
}

/// Lock modes. Records use S and X; tables all four.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    IS,
    IX,
    S,
    X,
}

impl Mode {
    fn compatible(self, o: Mode) -> bool {
        use Mode::*;
        matches!(
            (self, o),
            (IS, IS) | (IS, IX) | (IS, S) | (IX, IS) | (IX, IX) | (S, IS) | (S, S)
        )
    }

    /// True if holding `self` gives everything `want` gives.
    pub(crate) fn covers(self, want: Mode) -> bool {
        use Mode::*;
        self == want || matches!((self, want), (X, _) | (S, IS) | (IX, IS))
    }
}

/// What part of a record a lock covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The record and the gap before it.
    NextKey,
    /// The gap before the record only.
    Gap,
    /// The record only (also every table lock).
    RecNotGap,
    /// An inserter's intention to insert into the gap before the record.
    InsertIntention,
}

impl Kind {
    fn covers(self, want: Kind) -> bool {
        self == want || (self == Kind::NextKey && matches!(want, Kind::Gap | Kind::RecNotGap))
    }
}

/// True if request `a` must wait for request `b` of another transaction (InnoDB's
/// lock_rec_has_to_wait).
fn has_to_wait(a: &Req, b: &Req) -> bool {
    if a.trx == b.trx || a.mode.compatible(b.mode) {
        return false;
    }
    // Gap locks never wait, except insert intentions.
    if a.kind == Kind::Gap {
        return false;
    }
    // Only insert intentions wait for gap locks.
    if a.kind != Kind::InsertIntention && b.kind == Kind::Gap {
        return false;
    }
    // Nobody waits for an insert intention; an insert intention does not wait for a lock on
    // the record alone.
    if b.kind == Kind::InsertIntention {
        return false;
    }
    if a.kind == Kind::InsertIntention && b.kind == Kind::RecNotGap {
        return false;
    }
    true
}

/// Per-transaction lock state.
#[derive(Default)]
pub struct TrxLocks {
    pub id: u64,
    state: Mutex<TrxLockState>,
    /// Set when chosen as a deadlock victim while waiting.
    victim: AtomicBool,
    /// True while the transaction waits in `lock_wait` (its wait-for edges are current).
    waiting: AtomicBool,
    /// Undo records written (part of the deadlock weight).
    pub undo_records: AtomicU64,
    /// Lock structures InnoDB would have created for the same requests (the other part of the
    /// weight; read without the state mutex).
    n_structs: AtomicU64,
    /// Who runs the transaction: the server's connection id (0: none given), for
    /// information_schema.INNODB_TRX.
    pub owner: AtomicU64,
    /// The isolation level's code (trx::Isolation as u8), set with the id.
    pub isolation: std::sync::atomic::AtomicU8,
    /// When the current lock wait began (INNODB_TRX's TRX_WAIT_STARTED).
    wait_since: Mutex<Option<Instant>>,
}

#[derive(Default)]
struct TrxLockState {
    /// Hashes of the buckets the transaction has structs in (L3); may repeat.
    buckets: Vec<u64>,
    /// (index, mode, kind) of the granted requests made: InnoDB shares one lock structure
    /// between such requests on a page, and a weight counted in structures matches its choice
    /// of deadlock victims.
    sigs: HashSet<(IndexId, Mode, Kind)>,
    finished: bool,
}

impl TrxLocks {
    /// Lock structures held (InnoDB's count, see `TrxLockState::sigs`).
    pub fn n_locks(&self) -> u64 {
        self.n_structs.load(Ordering::Relaxed)
    }
    /// InnoDB's trx_weight: undo records plus lock structures.
    pub fn weight(&self) -> u64 {
        self.undo_records.load(Ordering::Relaxed) + self.n_locks()
    }

    /// When the transaction's current lock wait began, if it waits.
    pub fn wait_since(&self) -> Option<Instant> {
        *self.wait_since.lock()
    }
}

impl TrxLockState {
    /// Counts a request on a key of `index` (granted: `sig` Some; a wait always counts as a
    /// structure).
    fn count(&mut self, t: &TrxLocks, index: IndexId, sig: Option<(Mode, Kind)>) {
        let new = match sig {
            Some((m, k)) => self.sigs.insert((index, m, k)),
            None => true,
        };
        if new {
            t.n_structs.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Remembers bucket `h` (L3), once per run of requests in it.
    fn note_bucket(&mut self, h: u64) {
        if self.buckets.last() != Some(&h) {
            self.buckets.push(h);
        }
    }
}

struct Shard {
    map: WaitMutex<BucketMap>,
    cv: Condvar,
}

#[derive(Default)]
pub struct LockStats {
    /// Innodb_row_lock_waits
    pub waits: AtomicU64,
    /// Innodb_row_lock_time (ms)
    pub wait_ms: AtomicU64,
    /// Innodb_row_lock_time_max (ms)
    pub max_wait_ms: AtomicU64,
    /// Innodb_row_lock_current_waits
    pub current_waits: AtomicU64,
    pub timeouts: AtomicU64,
    /// Innodb_deadlocks
    pub deadlocks: AtomicU64,
    /// Row lock waits with their times in nanoseconds (sync_stats `row_lock_wait`).
    pub row_waits: WaitStat,
}

/// Outcome of `try_lock`.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Granted,
    /// A conflicting request of another transaction exists; nothing was queued.
    MustWait,
}

/// Where a key's requests live: its bucket (by key and hash), its slot there, its shard.
struct Loc {
    bucket: BucketKey,
    slot: u8,
    hash: u64,
    shard: usize,
}

pub struct LockSys {
    shards: Vec<Shard>,
    hasher: std::collections::hash_map::RandomState,
    trxs: Vec<Mutex<HashMap<u64, Arc<TrxLocks>>>>,
    /// Wait-for graph: waiting transaction -> (shard index, transactions it waits for).
    graph: Mutex<HashMap<u64, (usize, Vec<u64>)>>,
    /// innodb_deadlock_detect (the engine's tunable, shared).
    pub deadlock_detect: Arc<AtomicBool>,
    pub stats: LockStats,
}

impl Default for LockSys {
    fn default() -> Self {
        Self::new()
    }
}

const N_SHARDS: usize = 64;

/// The shard of a bucket hash: bits the shard's hash map does not use for its own placement
/// (it takes the low bits for the slot and the top seven for its tags).
fn shard_of(h: u64) -> usize {
    ((h >> 32) % N_SHARDS as u64) as usize
}

impl LockSys {
    pub fn new() -> Self {
        LockSys {
            shards: (0..N_SHARDS)
                .map(|_| Shard {
                    map: WaitMutex::new(BucketMap::default()),
                    cv: Condvar::new(),
                })
                .collect(),
            hasher: std::collections::hash_map::RandomState::new(),
            trxs: (0..16).map(|_| Mutex::new(HashMap::new())).collect(),
            graph: Mutex::new(HashMap::new()),
            deadlock_detect: Arc::new(AtomicBool::new(true)),
            stats: LockStats::default(),
        }
    }

    fn locate(&self, k: &LockKey) -> Loc {
        debug_assert!(!k.key.is_empty() || k.is_table(), "empty record key");
        let (bucket, slot) = split(k);
        let hash = self.hasher.hash_one(&bucket);
        Loc {
            bucket,
            slot,
            hash,
            shard: shard_of(hash),
        }
    }

    fn trx_map(&self, id: u64) -> &Mutex<HashMap<u64, Arc<TrxLocks>>> {
        &self.trxs[(id % self.trxs.len() as u64) as usize]
    }

    /// Registers a transaction that just got its id.
    pub fn register(&self, id: u64) -> Arc<TrxLocks> {
        let t = Arc::new(TrxLocks {
            id,
            ..TrxLocks::default()
        });
        self.trx_map(id).lock().insert(id, t.clone());
        t
    }

    /// True if `trx` already holds what it asks for. Never for an insert intention: gap locks
    /// of others may be granted after it (gap requests never wait), so every insert must look
    /// at the gap again (InnoDB's lock_rec_insert_check_and_lock does).
    fn held(q: impl Iterator<Item = Req>, trx: u64, mode: Mode, kind: Kind) -> bool {
        kind != Kind::InsertIntention
            && q.into_iter()
                .any(|r| r.trx == trx && !r.waiting && r.mode.covers(mode) && r.kind.covers(kind))
    }

    /// Normalises a request: every lock on a supremum is a gap lock.
    fn kind_for(key: &LockKey, kind: Kind) -> Kind {
        if key.is_supremum() && kind != Kind::InsertIntention {
            Kind::Gap
        } else {
            kind
        }
    }

    /// `Some(true)` if `a` must wait on its key, `Some(false)` if not, None if `a`'s
    /// transaction already holds it.
    fn must_wait(m: &BucketMap, l: &Loc, a: &Req) -> Option<bool> {
        let Some(b) = m.get(l.hash, &l.bucket) else {
            return Some(false);
        };
        if Self::held(b.reqs(l.slot).map(|r| r.1), a.trx, a.mode, a.kind) {
            return None;
        }
        Some(b.reqs(l.slot).any(|(_, r)| has_to_wait(a, &r)))
    }

    /// Like `must_wait`, but grants `a` (granted, not waiting) when it need not wait.
    fn grant_unless_held_or_conflicting(m: &mut BucketMap, l: &Loc, a: &Req) -> Option<bool> {
        if let Some(b) = m.get_mut(l.hash, &l.bucket) {
            if Self::held(b.reqs(l.slot).map(|r| r.1), a.trx, a.mode, a.kind) {
                return None;
            }
            if b.reqs(l.slot).any(|(_, r)| has_to_wait(a, &r)) {
                return Some(true);
            }
            b.add_granted(a.trx, a.mode, a.kind, l.slot);
        } else {
            m.get_or_insert(l.hash, &l.bucket)
                .add_granted(a.trx, a.mode, a.kind, l.slot);
        }
        Some(false)
    }

    /// True if `trx` would have to wait for `mode`/`kind` on `key`.
    pub fn conflicts(&self, trx: u64, key: &LockKey, mode: Mode, kind: Kind) -> bool {
        let kind = Self::kind_for(key, kind);
        let a = Req {
            trx,
            mode,
            kind,
            waiting: false,
        };
        let l = self.locate(key);
        let m = self.shards[l.shard].map.lock();
        Self::must_wait(&m, &l, &a) == Some(true)
    }

    /// Takes the lock if no other transaction's request conflicts; never waits. May be called
    /// with page latches held.
    pub fn try_lock(&self, trx: &TrxLocks, key: &LockKey, mode: Mode, kind: Kind) -> Outcome {
        let kind = Self::kind_for(key, kind);
        let a = Req {
            trx: trx.id,
            mode,
            kind,
            waiting: false,
        };
        let l = self.locate(key);
        let mut st = trx.state.lock();
        let mut m = self.shards[l.shard].map.lock();
        match Self::grant_unless_held_or_conflicting(&mut m, &l, &a) {
            None => return Outcome::Granted,
            Some(true) => return Outcome::MustWait,
            Some(false) => {}
        }
        drop(m);
        st.note_bucket(l.hash);
        st.count(trx, key.index, Some((mode, kind)));
        Outcome::Granted
    }

    /// Queues the request and waits until it is granted, the wait times out (1205) or the
    /// transaction becomes a deadlock victim (1213). The caller holds no latch (L2).
    pub fn lock_wait(
        &self,
        trx: &TrxLocks,
        key: &LockKey,
        mode: Mode,
        kind: Kind,
        timeout: Duration,
    ) -> Result<()> {
        let kind = Self::kind_for(key, kind);
        let me = Req {
            trx: trx.id,
            mode,
            kind,
            waiting: true,
        };
        let l = self.locate(key);
        let sno = l.shard;
        let sh = &self.shards[sno];
        {
            let mut st = trx.state.lock();
            st.note_bucket(l.hash);
            st.count(trx, key.index, None);
        }
        let mut m = sh.map.lock();
        let granted = Req {
            waiting: false,
            ..me
        };
        match Self::grant_unless_held_or_conflicting(&mut m, &l, &granted) {
            None | Some(false) => return Ok(()),
            Some(true) => m
                .get_or_insert(l.hash, &l.bucket)
                .add_waiting(trx.id, mode, kind, l.slot),
        }
        trx.victim.store(false, Ordering::Relaxed);
        trx.waiting.store(true, Ordering::Release);
        let start = Instant::now();
        *trx.wait_since.lock() = Some(start);
        self.stats.waits.fetch_add(1, Ordering::Relaxed);
        self.stats.current_waits.fetch_add(1, Ordering::Relaxed);
        let mut blockers: Vec<u64> = Vec::new();
        let r = loop {
            // The record left its index (inherit_to_gap removed the request): the caller
            // retries its operation from its position, which finds what is there now (L4).
            let Some(b) = m.get_mut(l.hash, &l.bucket) else {
                break Ok(());
            };
            let Some(pos) = b.structs().iter().position(|s| {
                s.trx == trx.id && s.waiting && s.mode == mode && s.kind == kind && s.has(l.slot)
            }) else {
                break Ok(());
            };
            let now: Vec<u64> = {
                let mut v: Vec<u64> = b
                    .reqs(l.slot)
                    .filter(|(i, r)| (*i < pos || !r.waiting) && has_to_wait(&me, r))
                    .map(|(_, r)| r.trx)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            if now.is_empty() {
                b.struct_mut(pos).waiting = false;
                break Ok(());
            }
            if trx.victim.load(Ordering::Acquire) {
                b.remove_struct(pos);
                break Err(Error::Deadlock);
            }
            if now != blockers {
                blockers = now;
                match self.record_wait(trx, sno, &blockers) {
                    Some((victim, _)) if victim == trx.id => {
                        if let Some(b) = m.get_mut(l.hash, &l.bucket) {
                            b.remove_struct(pos);
                        }
                        break Err(Error::Deadlock);
                    }
                    Some((_, Some(vsno))) => {
                        // Wake the victim under its shard mutex (so the wake-up cannot fall
                        // between its check and its sleep), holding no other shard mutex.
                        drop(m);
                        {
                            let vsh = &self.shards[vsno];
                            let _g = vsh.map.lock();
                            vsh.cv.notify_all();
                        }
                        m = sh.map.lock();
                        continue;
                    }
                    _ => {}
                }
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                if let Some(b) = m.get_mut(l.hash, &l.bucket) {
                    b.remove_struct(pos);
                }
                self.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                break Err(Error::LockWaitTimeout);
            }
            sh.cv.wait_for(&mut m, left);
        };
        if m.get(l.hash, &l.bucket).is_some_and(|b| b.is_empty()) {
            m.prune(l.hash);
        }
        // Leave the wait-for graph before the shard mutex goes: a detection running later must
        // not find this transaction waiting (a stale edge could hide a real cycle).
        trx.waiting.store(false, Ordering::Release);
        *trx.wait_since.lock() = None;
        self.graph.lock().remove(&trx.id);
        drop(m);
        if r.is_err() {
            // Others may have queued behind the request that just left.
            sh.cv.notify_all();
        }
        if matches!(r, Err(Error::Deadlock)) {
            self.stats.deadlocks.fetch_add(1, Ordering::Relaxed);
        }
        self.stats.current_waits.fetch_sub(1, Ordering::Relaxed);
        let ms = start.elapsed().as_millis() as u64;
        self.stats.wait_ms.fetch_add(ms, Ordering::Relaxed);
        self.stats.max_wait_ms.fetch_max(ms, Ordering::Relaxed);
        crate::monitor::note_thread_lock_wait(start.elapsed());
        self.stats.row_waits.record_since(start);
        r
    }

    /// Waits on the shard mutexes (sync_stats `lock_sys_shard`).
    pub fn shard_waits(&self) -> impl Iterator<Item = &WaitStat> {
        self.shards.iter().map(|s| s.map.stat())
    }

    /// The transactions waiting for a lock now (in the wait-for graph).
    pub fn waiting(&self) -> std::collections::HashSet<u64> {
        self.graph.lock().keys().copied().collect()
    }

    /// Records that `trx` waits for `blockers` and looks for a cycle through it. Returns the
    /// victim if there is one, with the shard it waits in if it is another transaction (its
    /// flag is set; the caller wakes it).
    fn record_wait(
        &self,
        trx: &TrxLocks,
        sno: usize,
        blockers: &[u64],
    ) -> Option<(u64, Option<usize>)> {
        let mut g = self.graph.lock();
        g.insert(trx.id, (sno, blockers.to_vec()));
        if !self.deadlock_detect.load(Ordering::Relaxed) {
            return None;
        }
        let cycle = find_cycle(&g, trx.id, &|id| self.is_waiting(id))?;
        let weights: Vec<(u64, u64)> = cycle.iter().map(|&t| (self.weight_of(t), t)).collect();
        let min = weights.iter().map(|w| w.0).min()?;
        // The requester is the victim unless another transaction in the cycle is lighter
        // (InnoDB: the requester loses ties).
        if weights.iter().any(|&(w, t)| t == trx.id && w == min) {
            g.remove(&trx.id);
            return Some((trx.id, None));
        }
        let victim = weights.iter().find(|w| w.0 == min)?.1;
        let vsh = g.remove(&victim).map(|x| x.0);
        drop(g);
        if let Some(t) = self.trx_map(victim).lock().get(&victim) {
            t.victim.store(true, Ordering::Release);
        }
        Some((victim, vsh))
    }

    fn is_waiting(&self, id: u64) -> bool {
        self.trx_map(id)
            .lock()
            .get(&id)
            .is_some_and(|t| t.waiting.load(Ordering::Acquire))
    }

    fn weight_of(&self, id: u64) -> u64 {
        self.trx_map(id)
            .lock()
            .get(&id)
            .map_or(u64::MAX, |t| t.weight())
    }

    /// Gives `t` (not finished: L3) a granted request on `l`'s key unless it holds one
    /// covering it. Called with `t`'s state mutex held.
    fn grant_to(&self, t: &TrxLocks, st: &mut TrxLockState, l: &Loc, index: IndexId, r: Req) {
        let mut m = self.shards[l.shard].map.lock();
        if Self::must_wait(&m, l, &r).is_none() {
            return;
        }
        m.get_or_insert(l.hash, &l.bucket)
            .add_granted(t.id, r.mode, r.kind, l.slot);
        drop(m);
        st.note_bucket(l.hash);
        st.count(t, index, Some((r.mode, r.kind)));
    }

    /// Gives active transaction `owner` an explicit X lock on the record `key` whose implicit
    /// lock it holds (its id is in the record), unless it has finished (L3).
    pub fn make_explicit(&self, owner: u64, key: &LockKey) {
        let Some(t) = self.trx_map(owner).lock().get(&owner).cloned() else {
            return;
        };
        let mut st = t.state.lock();
        if st.finished {
            return;
        }
        let r = Req {
            trx: owner,
            mode: Mode::X,
            kind: Kind::RecNotGap,
            waiting: false,
        };
        self.grant_to(&t, &mut st, &self.locate(key), key.index, r);
    }

    /// Releases every lock of a finished transaction and wakes their waiters (L3).
    pub fn release_all(&self, trx: &TrxLocks) {
        let mut hashes = {
            let mut st = trx.state.lock();
            st.finished = true;
            trx.n_structs.store(0, Ordering::Relaxed);
            std::mem::take(&mut st.buckets)
        };
        hashes.sort_unstable();
        hashes.dedup();
        for h in hashes {
            let sh = &self.shards[shard_of(h)];
            let mut waiters = false;
            sh.map.lock().for_each_of_hash(h, |b| {
                waiters |= b.remove_trx(trx.id);
            });
            if waiters {
                sh.cv.notify_all();
            }
        }
        self.trx_map(trx.id).lock().remove(&trx.id);
        self.graph.lock().remove(&trx.id);
    }

    /// Releases `trx`'s locks on one record (READ COMMITTED: a row that did not match). Its
    /// structs stay until it ends (S2), so a scan that locks and releases row after row reuses
    /// one struct per bucket.
    pub fn unlock_row(&self, trx: &TrxLocks, key: &LockKey) {
        let l = self.locate(key);
        let sh = &self.shards[l.shard];
        let mut m = sh.map.lock();
        let Some(b) = m.get_mut(l.hash, &l.bucket) else {
            return;
        };
        if b.clear_trx_slot(trx.id, l.slot) {
            sh.cv.notify_all();
        }
    }

    /// A record left its index (purge, rollback of an insert): the granted locks on it become
    /// gap locks on its successor (InnoDB's lock_rec_inherit_to_gap) and its requests go,
    /// waiting ones included. The waiters are woken and retry their operation (L4): a request
    /// granted on the vanished key would otherwise cover a later record with the same key.
    pub fn inherit_to_gap(&self, removed: &LockKey, successor: &LockKey) {
        let l = self.locate(removed);
        let moved: Vec<Req> = {
            let sh = &self.shards[l.shard];
            let mut m = sh.map.lock();
            let Some(b) = m.get_mut(l.hash, &l.bucket) else {
                return;
            };
            let granted = b.clear_slot(l.slot);
            if b.is_empty() {
                m.prune(l.hash);
            }
            sh.cv.notify_all();
            granted
        };
        self.add_gap_locks(&moved, successor, |r| r.kind != Kind::InsertIntention);
    }

    /// True if any request names `key` (a cheap test before computing a successor).
    pub fn has_requests(&self, key: &LockKey) -> bool {
        let l = self.locate(key);
        let m = self.shards[l.shard].map.lock();
        m.get(l.hash, &l.bucket)
            .is_some_and(|b| b.reqs(l.slot).next().is_some())
    }

    /// A record was inserted before `successor`: it inherits the gap-type locks on the
    /// successor as gap locks (InnoDB's lock_update_insert).
    pub fn inherit_from_successor(&self, successor: &LockKey, new: &LockKey) {
        let src: Vec<Req> = {
            let l = self.locate(successor);
            let m = self.shards[l.shard].map.lock();
            match m.get(l.hash, &l.bucket) {
                Some(b) => b.reqs(l.slot).map(|r| r.1).collect(),
                None => return,
            }
        };
        self.add_gap_locks(&src, new, |r| {
            !r.waiting && matches!(r.kind, Kind::NextKey | Kind::Gap)
        });
    }

    fn add_gap_locks(&self, from: &[Req], to: &LockKey, keep: impl Fn(&Req) -> bool) {
        let mut trxs: Vec<(u64, Mode)> = from
            .iter()
            .filter(|r| keep(r))
            .map(|r| (r.trx, r.mode))
            .collect();
        if trxs.is_empty() {
            return;
        }
        trxs.sort_unstable_by_key(|x| x.0);
        trxs.dedup();
        let l = self.locate(to);
        for (id, mode) in trxs {
            let Some(t) = self.trx_map(id).lock().get(&id).cloned() else {
                continue;
            };
            let mut st = t.state.lock();
            if st.finished {
                continue;
            }
            let r = Req {
                trx: id,
                mode,
                kind: Kind::Gap,
                waiting: false,
            };
            self.grant_to(&t, &mut st, &l, to.index, r);
        }
    }

    /// Number of requests (SHOW ENGINE INNODB STATUS).
    pub fn n_locks(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.map.lock().buckets().map(|b| b.n_reqs()).sum::<usize>())
            .sum()
    }

    /// Every request, key by key, each key's requests in queue order
    /// (performance_schema.data_locks). Each shard is read under its mutex, one after the
    /// other, so the listing is not one instant's.
    pub fn requests(&self) -> Vec<(LockKey, Vec<Req>)> {
        let mut out = Vec::new();
        for sh in &self.shards {
            let m = sh.map.lock();
            for b in m.buckets() {
                out.extend(b.requests());
            }
        }
        out
    }

    /// The requests on the same key that a waiting request `w` (at `pos` in the key's queue
    /// `q`) waits for: granted conflicting ones, and waiting ones ahead of it.
    pub fn blockers(q: &[Req], pos: usize) -> Vec<usize> {
        let w = &q[pos];
        q.iter()
            .enumerate()
            .filter(|&(i, r)| i != pos && (i < pos || !r.waiting) && has_to_wait(w, r))
            .map(|(i, _)| i)
            .collect()
    }

    /// The lock state of active transaction `id`, if it has registered.
    pub fn trx(&self, id: u64) -> Option<Arc<TrxLocks>> {
        self.trx_map(id).lock().get(&id).cloned()
    }

    /// Transactions waiting for a lock, with whom they wait for.
    pub fn waits(&self) -> Vec<(u64, Vec<u64>)> {
        self.graph
            .lock()
            .iter()
            .map(|(k, v)| (*k, v.1.clone()))
            .collect()
    }
}

/// A cycle in the wait-for graph through `start`, as the list of its transactions. Only
/// transactions still waiting count as nodes with edges (an entry may outlive its wait by a
/// moment).
fn find_cycle(
    g: &HashMap<u64, (usize, Vec<u64>)>,
    start: u64,
    waiting: &dyn Fn(u64) -> bool,
) -> Option<Vec<u64>> {
    // Iterative DFS keeping the path.
    let mut path: Vec<(u64, usize)> = vec![(start, 0)];
    let mut seen: HashSet<u64> = HashSet::from([start]);
    while let Some(&mut (node, ref mut i)) = path.last_mut() {
        let next = g.get(&node).and_then(|(_, b)| b.get(*i)).copied();
        *i += 1;
        match next {
            None => {
                path.pop();
            }
            Some(n) if n == start => return Some(path.iter().map(|p| p.0).collect()),
            Some(n) => {
                if seen.insert(n) && g.contains_key(&n) && waiting(n) {
                    path.push((n, 0));
                }
            }
        }
    }
    None
}
