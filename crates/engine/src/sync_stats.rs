//! Wait accounting per synchronization object (InnoDB: sync0arr's reservation counts, the
//! mutex monitor behind SHOW ENGINE INNODB MUTEX, performance_schema's
//! events_waits_summary_global_by_event_name).
//!
//! OVERVIEW
//! The engine's shared mutexes and rw-locks that threads queue on are `WaitMutex`/`WaitRwLock`:
//! a `latch` lock plus a `WaitStat`. `lock()` first tries the lock; only when that fails
//! does it read the clock, block, and add one wait and its duration to the stat. Uncontended
//! acquisitions therefore cost exactly what a plain lock costs (the try is the
//! lock's own fast path), so the accounting is always on. Waits that are not lock
//! acquisitions (a committer waiting for the log writer's fsync, a row lock wait) use
//! `WaitTimer` at the wait site. Page latches (frame RW latches) are counted per index in
//! `KeyedWaits`: after a contended latch is granted, the waiter reads the page's space and
//! PAGE_INDEX_ID (it holds the latch, so the bytes are stable) and adds to that key; pages
//! that are not B-tree nodes (undo, file-space, BLOB pages) count under their space.
//! `wait_rows` gathers everything into named rows at report time, mapping index ids to
//! `table.index` through the dictionary.
//!
//! Objects and where they live:
//! ```text
//!   buf_pool_LRU_mutex   buffer_pool Instance::lru (LRU + free list), summed over instances
//!   buf_page_hash        buffer_pool Instance::hash partitions (rw), summed
//!   flush_list_mutex     buffer_pool Instance::flush, summed
//!   log_sys_mutex        redo Log::buf (the log buffer append mutex)
//!   log_flush            redo Log::write_up_to: waiting for another thread's write/fsync
//!   lock_sys_shard       lock LockSys shard mutexes, summed
//!   row_lock_wait        lock LockSys::lock_wait (a transaction waiting for a row lock)
//!   dict_sys             dict Dict cache maps (rw), summed
//!   dict_operation_lock  dict Dict::ddl
//!   purge_sys            trx TrxSys::purge_heap (the purge queue)
//!   purge_sys_latch      trx TrxSys::purge_view (rw)
//!   dblwr_mutex          doublewrite areas, summed
//!   btr_search_latch     btree::adaptive_hash parts (rw), summed
//!   page latch index T.I buffer_pool frame latches, per (space, index id)
//! ```
//!
//! INVARIANTS
//! - I1: a stat changes only after a wait: an acquisition whose try succeeded records nothing.
//! - I2: for every stat, `min_ns <= sum_ns / count <= max_ns` once the adders stop (reading
//!   while they run sees each field at a moment, so a report may be off by the waits in flight).
//! - I3: count and sum only grow; max only grows.
//!
//! LATCHING
//! Recording takes no latch except `KeyedWaits`, whose stripe mutexes are leaves (taken after
//! the page latch was granted, never held across another acquisition). Reporting takes the
//! dictionary maps (read) and each stripe in turn, nothing else.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::latch::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::counter::{my_slot, Counter, SLOTS};
use crate::engine::Inner;

/// Waits on one synchronization object. Count and total are striped counters (a contended
/// object is waited on from many cores at once); min and max are single atomics that are
/// written only when they change.
pub struct WaitStat {
    count: Counter,
    sum_ns: Counter,
    max_ns: AtomicU64,
    min_ns: AtomicU64,
}

impl Default for WaitStat {
    fn default() -> Self {
        WaitStat {
            count: Counter::default(),
            sum_ns: Counter::default(),
            max_ns: AtomicU64::new(0),
            min_ns: AtomicU64::new(u64::MAX),
        }
    }
}

impl WaitStat {
    /// Adds one wait of `ns` nanoseconds.
    #[cold]
    pub fn record(&self, ns: u64) {
        self.count.inc();
        self.sum_ns.add(ns);
        if ns > self.max_ns.load(Ordering::Relaxed) {
            self.max_ns.fetch_max(ns, Ordering::Relaxed);
        }
        if ns < self.min_ns.load(Ordering::Relaxed) {
            self.min_ns.fetch_min(ns, Ordering::Relaxed);
        }
    }

    /// Adds one wait that started at `start`.
    #[cold]
    pub fn record_since(&self, start: Instant) {
        self.record(start.elapsed().as_nanos() as u64);
    }

    pub fn snapshot(&self) -> WaitSnapshot {
        let count = self.count.get();
        WaitSnapshot {
            count,
            sum_ns: self.sum_ns.get(),
            min_ns: if count == 0 {
                0
            } else {
                self.min_ns.load(Ordering::Relaxed).min(u64::MAX - 1)
            },
            max_ns: self.max_ns.load(Ordering::Relaxed),
        }
    }
}

/// A moment's view of a `WaitStat` (or of several merged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitSnapshot {
    pub count: u64,
    pub sum_ns: u64,
    /// 0 when count is 0.
    pub min_ns: u64,
    pub max_ns: u64,
}

impl WaitSnapshot {
    pub fn merge(&mut self, o: &WaitSnapshot) {
        if o.count == 0 {
            return;
        }
        self.min_ns = if self.count == 0 {
            o.min_ns
        } else {
            self.min_ns.min(o.min_ns)
        };
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    fn add_ns(&mut self, ns: u64) {
        self.merge(&WaitSnapshot {
            count: 1,
            sum_ns: ns,
            min_ns: ns,
            max_ns: ns,
        });
    }

    /// Mean wait, 0 when there was none.
    pub fn avg_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.count).unwrap_or(0)
    }
}

/// A mutex whose contended acquisitions are counted and timed (I1).
#[derive(Default)]
pub struct WaitMutex<T> {
    inner: Mutex<T>,
    stat: WaitStat,
}

impl<T> WaitMutex<T> {
    pub fn new(v: T) -> Self {
        WaitMutex {
            inner: Mutex::new(v),
            stat: WaitStat::default(),
        }
    }

    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        match self.inner.try_lock() {
            Some(g) => g,
            None => self.lock_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) -> MutexGuard<'_, T> {
        let t = Instant::now();
        let g = self.inner.lock();
        self.stat.record_since(t);
        g
    }

    #[inline]
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.inner.try_lock()
    }

    pub fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }

    pub fn stat(&self) -> &WaitStat {
        &self.stat
    }
}

/// A reader/writer lock whose contended acquisitions are counted and timed (I1).
#[derive(Default)]
pub struct WaitRwLock<T> {
    inner: RwLock<T>,
    stat: WaitStat,
}

impl<T> WaitRwLock<T> {
    pub fn new(v: T) -> Self {
        WaitRwLock {
            inner: RwLock::new(v),
            stat: WaitStat::default(),
        }
    }

    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        match self.inner.try_read() {
            Some(g) => g,
            None => self.read_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn read_slow(&self) -> RwLockReadGuard<'_, T> {
        let t = Instant::now();
        let g = self.inner.read();
        self.stat.record_since(t);
        g
    }

    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        match self.inner.try_write() {
            Some(g) => g,
            None => self.write_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn write_slow(&self) -> RwLockWriteGuard<'_, T> {
        let t = Instant::now();
        let g = self.inner.write();
        self.stat.record_since(t);
        g
    }

    pub fn stat(&self) -> &WaitStat {
        &self.stat
    }
}

/// Times one logical wait that may span several blocking calls (a loop around a condition
/// variable): `start` at the first block, recorded once when dropped.
pub struct WaitTimer<'a> {
    stat: &'a WaitStat,
    start: Option<Instant>,
}

impl<'a> WaitTimer<'a> {
    pub fn new(stat: &'a WaitStat) -> Self {
        WaitTimer { stat, start: None }
    }

    /// Marks that the caller is about to block (only the first call counts).
    #[inline]
    pub fn start(&mut self) {
        if self.start.is_none() {
            self.start = Some(Instant::now());
        }
    }
}

impl Drop for WaitTimer<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.start {
            self.stat.record_since(t);
        }
    }
}

/// Page latch waits by (space, index id), one map per thread stripe so waiters on different
/// cores rarely meet; a report merges the stripes.
pub struct KeyedWaits {
    stripes: Box<[Mutex<WaitsByKey>]>,
}

/// (space, index id) -> waits.
type WaitsByKey = HashMap<(u32, u64), WaitSnapshot>;

/// Index id used for page latch waits on pages that are not B-tree nodes: minus the page
/// type (`PageType as u64`), so such waits are told apart by kind of page.
pub const NOT_AN_INDEX: u64 = u64::MAX;

/// What waits keyed `NOT_AN_INDEX - type` were on.
fn non_index_kind(index: u64) -> Option<&'static str> {
    use crate::page::PageType as T;
    let t = u16::try_from(NOT_AN_INDEX.checked_sub(index)?).ok()?;
    Some(match T::from_u16(t) {
        Some(T::FspHdr) => "space header",
        Some(T::FspBitmap) => "allocation bitmap pages",
        Some(T::Sys) => "dictionary header",
        Some(T::Undo) => "undo log pages",
        Some(T::TrxSys) => "rollback segment headers",
        Some(T::Blob) => "off-page column pages",
        Some(T::Index) => return None,
        _ => "other non-index pages",
    })
}

impl Default for KeyedWaits {
    fn default() -> Self {
        KeyedWaits {
            stripes: (0..SLOTS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

impl KeyedWaits {
    #[cold]
    pub fn record(&self, space: u32, index_id: u64, ns: u64) {
        self.stripes[my_slot()]
            .lock()
            .entry((space, index_id))
            .or_default()
            .add_ns(ns);
    }

    pub fn snapshot(&self) -> WaitsByKey {
        let mut out = WaitsByKey::new();
        for s in self.stripes.iter() {
            for (k, v) in s.lock().iter() {
                out.entry(*k).or_default().merge(v);
            }
        }
        out
    }
}

/// The kind of a synchronization object, for performance_schema's event names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Mutex,
    RwLock,
    Cond,
    PageLatch,
    RowLock,
}

/// One synchronization object's waits, as reported.
#[derive(Clone, Debug)]
pub struct WaitRow {
    /// SHOW ENGINE INNODB MUTEX's Name, e.g. "buf_pool_LRU_mutex" or
    /// "page latch index d/t.PRIMARY".
    pub name: String,
    /// performance_schema EVENT_NAME, e.g. "wait/synch/mutex/innodb/buf_pool_mutex".
    pub event: String,
    pub kind: Kind,
    pub waits: WaitSnapshot,
}

fn sum<'a>(stats: impl IntoIterator<Item = &'a WaitStat>) -> WaitSnapshot {
    let mut s = WaitSnapshot::default();
    for w in stats {
        s.merge(&w.snapshot());
    }
    s
}

/// Every synchronization object's waits: the fixed objects first (always present, zero or
/// not, in the order of the module comment), then page latches by index with waits, most
/// waited first.
pub fn wait_rows(inner: &Inner) -> Vec<WaitRow> {
    let bp = &inner.bp;
    let fixed: [(&str, &str, Kind, WaitSnapshot); 13] = [
        (
            "buf_pool_LRU_mutex",
            "wait/synch/mutex/innodb/buf_pool_mutex",
            Kind::Mutex,
            sum(bp.instances().iter().map(|i| i.lru_waits())),
        ),
        (
            "buf_page_hash",
            "wait/synch/rwlock/innodb/hash_table_locks",
            Kind::RwLock,
            sum(bp.instances().iter().flat_map(|i| i.hash_waits())),
        ),
        (
            "flush_list_mutex",
            "wait/synch/mutex/innodb/flush_list_mutex",
            Kind::Mutex,
            sum(bp.instances().iter().map(|i| i.flush.stat())),
        ),
        (
            "log_sys_mutex",
            "wait/synch/mutex/innodb/log_sys_mutex",
            Kind::Mutex,
            inner.log.buf_waits().snapshot(),
        ),
        (
            "log_flush",
            "wait/synch/cond/innodb/log_flush",
            Kind::Cond,
            inner.log.flush_waits.snapshot(),
        ),
        (
            "lock_sys_shard",
            "wait/synch/mutex/innodb/lock_sys_shard_mutex",
            Kind::Mutex,
            sum(inner.trx.locks.shard_waits()),
        ),
        (
            "row_lock_wait",
            "wait/lock/innodb/row_lock",
            Kind::RowLock,
            inner.trx.locks.stats.row_waits.snapshot(),
        ),
        (
            "dict_sys",
            "wait/synch/rwlock/innodb/dict_sys",
            Kind::RwLock,
            sum(inner.dict.cache_waits()),
        ),
        (
            "dict_operation_lock",
            "wait/synch/mutex/innodb/dict_operation_lock",
            Kind::Mutex,
            inner.dict.ddl.stat().snapshot(),
        ),
        (
            "purge_sys",
            "wait/synch/mutex/innodb/purge_sys_pq_mutex",
            Kind::Mutex,
            inner.trx.purge_heap.stat().snapshot(),
        ),
        (
            "purge_sys_latch",
            "wait/synch/rwlock/innodb/trx_purge_latch",
            Kind::RwLock,
            inner.trx.purge_view.stat().snapshot(),
        ),
        (
            "dblwr_mutex",
            "wait/synch/mutex/innodb/dblwr_mutex",
            Kind::Mutex,
            sum(inner.dblwr.area_waits()),
        ),
        (
            "btr_search_latch",
            "wait/synch/rwlock/innodb/btr_search_latch",
            Kind::RwLock,
            sum(inner.ahi.part_waits()),
        ),
    ];
    let mut rows: Vec<WaitRow> = fixed
        .into_iter()
        .map(|(name, event, kind, waits)| WaitRow {
            name: name.to_string(),
            event: event.to_string(),
            kind,
            waits,
        })
        .collect();
    rows.extend(page_latch_rows(inner));
    rows
}

/// Page latch rows named by index (`table.index`), or by space for other pages.
fn page_latch_rows(inner: &Inner) -> Vec<WaitRow> {
    let snap = bp_latch_snapshot(inner);
    if snap.is_empty() {
        return Vec::new();
    }
    let mut index_names: HashMap<(u32, u64), String> = HashMap::new();
    let mut space_names: HashMap<u32, String> = HashMap::new();
    space_names.insert(0, "innodb_system".to_string());
    let mut tables = inner.dict.tables();
    tables.extend(inner.dict.by_id(crate::dict::SYS_TABLES_ID));
    for t in &tables {
        let sp = t.clustered.space;
        space_names.entry(sp).or_insert_with(|| t.name.clone());
        index_names.insert(
            (sp, t.clustered.id),
            format!("{}.{}", t.name, t.clustered.name),
        );
        for s in &t.secondary {
            index_names.insert((sp, s.index.id), format!("{}.{}", t.name, s.index.name));
        }
    }
    let mut rows: Vec<WaitRow> = snap
        .into_iter()
        .map(|((space, index), waits)| {
            let (name, event) = if let Some(kind) = non_index_kind(index) {
                let s = space_names
                    .get(&space)
                    .cloned()
                    .unwrap_or_else(|| format!("space {space}"));
                (
                    format!("page latch space {s} ({kind})"),
                    format!(
                        "wait/synch/rwlock/innodb/page_latch/space/{s}/{}",
                        kind.replace(' ', "_")
                    ),
                )
            } else {
                let i = index_names
                    .get(&(space, index))
                    .cloned()
                    .unwrap_or_else(|| format!("space {space} index id {index}"));
                (
                    format!("page latch index {i}"),
                    format!("wait/synch/rwlock/innodb/page_latch/{i}"),
                )
            };
            WaitRow {
                name,
                event,
                kind: Kind::PageLatch,
                waits,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.waits
            .count
            .cmp(&a.waits.count)
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

fn bp_latch_snapshot(inner: &Inner) -> WaitsByKey {
    inner.bp.latch_waits.snapshot()
}

/// The sum over all objects (SHOW ENGINE INNODB STATUS's reservation count).
pub fn total(rows: &[WaitRow]) -> WaitSnapshot {
    let mut t = WaitSnapshot::default();
    for r in rows {
        t.merge(&r.waits);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn non_index_page_waits_are_named_by_page_type() {
        use crate::page::PageType as T;
        let key = |t: T| NOT_AN_INDEX - t as u64;
        assert_eq!(
            non_index_kind(key(T::TrxSys)),
            Some("rollback segment headers")
        );
        assert_eq!(non_index_kind(key(T::FspHdr)), Some("space header"));
        assert_eq!(non_index_kind(key(T::Undo)), Some("undo log pages"));
        assert_eq!(non_index_kind(NOT_AN_INDEX), Some("other non-index pages"));
        assert_eq!(non_index_kind(42), None, "an index id");
    }

    #[test]
    fn uncontended_locks_record_nothing() {
        let m = WaitMutex::new(0u32);
        let r = WaitRwLock::new(0u32);
        for _ in 0..1000 {
            *m.lock() += 1;
            *r.write() += 1;
            let _ = *r.read();
        }
        assert_eq!(m.stat().snapshot(), WaitSnapshot::default());
        assert_eq!(r.stat().snapshot(), WaitSnapshot::default());
    }

    #[test]
    fn a_blocked_lock_counts_one_wait_with_its_time() {
        let m = Arc::new(WaitMutex::new(()));
        let g = m.lock();
        let m2 = m.clone();
        let h = std::thread::spawn(move || drop(m2.lock()));
        std::thread::sleep(Duration::from_millis(30));
        drop(g);
        h.join().unwrap();
        let s = m.stat().snapshot();
        assert_eq!(s.count, 1);
        assert!(s.sum_ns >= 20_000_000, "{s:?}");
        assert_eq!(s.min_ns, s.max_ns);
        assert_eq!(s.sum_ns, s.max_ns);
    }

    #[test]
    fn keyed_waits_merge_stripes_and_timer_records_once() {
        let k = Arc::new(KeyedWaits::default());
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let k = k.clone();
                std::thread::spawn(move || k.record(1, 7, 10 + i))
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let s = k.snapshot()[&(1, 7)];
        assert_eq!((s.count, s.min_ns, s.max_ns, s.sum_ns), (8, 10, 17, 108));
        let st = WaitStat::default();
        {
            let mut t = WaitTimer::new(&st);
            t.start();
            t.start();
        }
        drop(WaitTimer::new(&st));
        assert_eq!(st.snapshot().count, 1);
    }
}
