//! The table definition cache and the table open cache (table_definition_cache,
//! table_open_cache, table_open_cache_instances), as MySQL 8.0 has them (sql/table_cache.h,
//! sql_base.cc's table_def_cache), over the catalog's table descriptions.
//!
//! OVERVIEW
//! ```text
//!  session (connection id % instances)
//!     │ open(key)                                   statement end: release(uses)
//!     v
//!  instance k: key -> entry {def, users}  +  LRU of unused entries      (table open cache)
//!     │ miss: one reference to the definition
//!     v
//!  definitions: key -> entry {def, refs}  +  LRU of unreferenced ones    (definition cache)
//!     │ miss: load() outside every latch
//!     v
//!  catalog `describe` (the engine's table, its SQL description parsed)
//! ```
//! A definition (MySQL's TABLE_SHARE) is the description of one table, shared by all
//! sessions. An open-cache entry (MySQL's TABLE) is a table opened in one instance; the
//! statements that use it count as its `users` (one entry serves every statement of the
//! instance that uses the table at once, where MySQL makes one TABLE per user: descriptions
//! here are read-only). A session always uses instance `connection id % instances`, so hits
//! of sessions in different instances take different mutexes and never the definitions'.
//! Every lookup, insertion, use and eviction is a hash probe and O(1) list work: an LRU list
//! is doubly linked through slots of a vector (`Lru`), never scanned.
//!
//! INVARIANTS
//! - T1: an open-cache entry is on its instance's LRU list iff no statement uses it
//!   (`users == 0`); a definition is on the definitions' list iff no open-cache entry refers
//!   to it (`refs == 0`). Only listed entries are ever evicted, so an entry a statement uses
//!   stays until released.
//! - T2: after every open and every release in an instance, its entries number at most
//!   table_open_cache / instances, or all of them are in use; each entry freed to get there
//!   counts in Table_open_cache_overflows (MySQL's counting). Likewise the definitions number
//!   at most table_definition_cache, or all are referenced.
//! - T3: a key maps to at most one entry per instance and one definition. An entry whose
//!   definition is not current (DDL replaced the table), or that `forget`/`flush` removed
//!   while in use, is stale: out of the map, freed at its last release.
//! - T4: every open-cache entry holds one reference to a definition; freeing the entry
//!   returns it (`unref`, a no-op when the definition has left the cache meanwhile, which is
//!   checked by identity).
//! - T5: every `open` counts exactly one of Table_open_cache_hits (an entry of the key was
//!   in the instance) and Table_open_cache_misses; a miss that creates an entry counts in
//!   Opened_tables, a definition loaded into the cache in Opened_table_definitions.
//!
//! LATCHING: each instance's mutex and the definitions' mutex are leaves: never held
//! together (an instance's work collects the references it drops and returns them after
//! its mutex is released) and never across `load`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use innoxide_engine::counter::Counter;
use innoxide_engine::latch::Mutex;

/// What the caches hold: a description that DDL may make obsolete.
pub trait Definition: Send + Sync {
    /// False once DDL replaced or dropped the table described.
    fn is_current(&self) -> bool;
}

const NIL: u32 = u32::MAX;

struct Node<E> {
    entry: Option<E>,
    prev: u32,
    next: u32,
    linked: bool,
}

/// Entries in the slots of a vector (a slot number names an entry until it is removed),
/// some of them on a list from the most to the least recently used. Every operation is O(1).
struct Lru<E> {
    nodes: Vec<Node<E>>,
    free: Vec<u32>,
    /// Most recently listed.
    head: u32,
    /// Least recently listed.
    tail: u32,
    live: usize,
}

impl<E> Lru<E> {
    fn new() -> Self {
        Lru {
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            live: 0,
        }
    }

    /// Adds an entry, not listed.
    fn insert(&mut self, e: E) -> u32 {
        self.live += 1;
        let node = Node {
            entry: Some(e),
            prev: NIL,
            next: NIL,
            linked: false,
        };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 cache entries")
            }
        }
    }

    fn node(&self, i: u32) -> &Node<E> {
        &self.nodes[i as usize]
    }

    fn get(&self, i: u32) -> &E {
        self.node(i).entry.as_ref().expect("a live slot")
    }

    fn get_mut(&mut self, i: u32) -> &mut E {
        self.nodes[i as usize].entry.as_mut().expect("a live slot")
    }

    fn is_linked(&self, i: u32) -> bool {
        self.node(i).linked
    }

    /// Puts a live, unlisted entry at the head of the list.
    fn link_front(&mut self, i: u32) {
        debug_assert!(!self.is_linked(i));
        let old = self.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
            n.linked = true;
        }
        if old == NIL {
            self.tail = i;
        } else {
            self.nodes[old as usize].prev = i;
        }
        self.head = i;
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let n = &mut self.nodes[i as usize];
            debug_assert!(n.linked);
            n.linked = false;
            (n.prev, n.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    /// The least recently listed entry.
    fn least_recent(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    fn remove(&mut self, i: u32) -> E {
        if self.is_linked(i) {
            self.unlink(i);
        }
        self.live -= 1;
        self.free.push(i);
        self.nodes[i as usize].entry.take().expect("a live slot")
    }

    fn len(&self) -> usize {
        self.live
    }

    /// Slot numbers of the live entries (the invariant checks).
    #[cfg(test)]
    fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes.len() as u32).filter(|&i| self.node(i).entry.is_some())
    }
}

/// An open-cache entry (MySQL's TABLE).
struct Opened<T> {
    key: Arc<str>,
    def: Arc<T>,
    /// Statements using it.
    users: u32,
    /// Out of the map while in use (T3): freed at its last release.
    stale: bool,
}

/// One instance of the table open cache.
struct Instance<T> {
    map: HashMap<Arc<str>, u32>,
    lru: Lru<Opened<T>>,
}

/// An instance on its own cache lines, so instances of different sessions share none.
#[repr(align(128))]
struct Padded<T>(Mutex<Instance<T>>);

/// A definition-cache entry (MySQL's TABLE_SHARE).
struct Defined<T> {
    key: Arc<str>,
    def: Arc<T>,
    /// Open-cache entries referring to it (T4).
    refs: u32,
}

struct Definitions<T> {
    map: HashMap<Arc<str>, u32>,
    lru: Lru<Defined<T>>,
}

/// A definition an open-cache entry gave back (T4), returned after the instance's mutex.
type Unref<T> = (Arc<str>, Arc<T>);

/// A table a statement opened: its definition, and the use to give back (`release`).
pub struct Open<T> {
    pub def: Arc<T>,
    pub slot: u32,
}

/// Counts for SHOW STATUS.
pub struct CacheStatus {
    pub open_tables: u64,
    pub opened_tables: u64,
    pub hits: u64,
    pub misses: u64,
    pub overflows: u64,
    pub open_definitions: u64,
    pub opened_definitions: u64,
}

pub struct TableCache<T> {
    instances: Box<[Padded<T>]>,
    defs: Mutex<Definitions<T>>,
    /// table_open_cache (all instances together).
    open_limit: AtomicUsize,
    /// table_definition_cache.
    def_limit: AtomicUsize,
    /// Entries in all instances (Open_tables).
    open_count: AtomicUsize,
    /// Definitions cached (Open_table_definitions).
    def_count: AtomicUsize,
    opened: Counter,
    hits: Counter,
    misses: Counter,
    overflows: Counter,
    opened_defs: Counter,
}

impl<T: Definition> TableCache<T> {
    /// `instances` instances (table_open_cache_instances, at least 1) sharing `open_limit`
    /// entries (table_open_cache), and up to `def_limit` definitions.
    pub fn new(instances: usize, open_limit: usize, def_limit: usize) -> Self {
        TableCache {
            instances: (0..instances.max(1))
                .map(|_| {
                    Padded(Mutex::new(Instance {
                        map: HashMap::new(),
                        lru: Lru::new(),
                    }))
                })
                .collect(),
            defs: Mutex::new(Definitions {
                map: HashMap::new(),
                lru: Lru::new(),
            }),
            open_limit: AtomicUsize::new(open_limit),
            def_limit: AtomicUsize::new(def_limit),
            open_count: AtomicUsize::new(0),
            def_count: AtomicUsize::new(0),
            opened: Counter::default(),
            hits: Counter::default(),
            misses: Counter::default(),
            overflows: Counter::default(),
            opened_defs: Counter::default(),
        }
    }

    /// The instance of connection `id` (MySQL: thread id % table_open_cache_instances).
    pub fn instance_of(&self, id: u32) -> usize {
        id as usize % self.instances.len()
    }

    fn per_instance(&self) -> usize {
        self.open_limit.load(Ordering::Relaxed) / self.instances.len()
    }

    /// Opens `key` in instance `inst` for a statement: a hit takes that instance's mutex
    /// only; a miss takes a reference to the definition (loading it with `load` if it is not
    /// cached) and adds an entry, evicting the least recently used unused ones beyond the
    /// limit (T2). The use must be given back with `release`.
    pub fn open<E>(
        &self,
        inst: usize,
        key: &str,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<Open<T>, E> {
        let cache = &self.instances[inst].0;
        let mut back = Vec::new();
        {
            let mut c = cache.lock();
            if let Some(o) = c.take_use(key, &mut back, &self.open_count) {
                drop(c);
                self.hits.inc();
                self.unref_all(back);
                return Ok(o);
            }
        }
        self.misses.inc();
        self.unref_all(std::mem::take(&mut back));
        let (k, def) = self.definition_inner(key, load, true)?;
        let mut c = cache.lock();
        // Another session of this instance may have opened it meanwhile: share its entry.
        if let Some(o) = c.take_use(key, &mut back, &self.open_count) {
            drop(c);
            back.push((k, def));
            self.unref_all(back);
            return Ok(o);
        }
        let slot = c.lru.insert(Opened {
            key: k.clone(),
            def: def.clone(),
            users: 1,
            stale: false,
        });
        c.map.insert(k, slot);
        self.open_count.fetch_add(1, Ordering::Relaxed);
        self.opened.inc();
        let freed = c.shrink(self.per_instance(), &mut back, &self.open_count);
        drop(c);
        self.overflows.add(freed);
        self.unref_all(back);
        Ok(Open { def, slot })
    }

    /// Gives back uses `open` handed out in instance `inst` (a statement ended): an entry
    /// no longer used goes to the head of the LRU list, or is freed when stale (T3); then the
    /// instance is brought within its limit (T2).
    pub fn release(&self, inst: usize, slots: impl IntoIterator<Item = u32>) {
        let mut back = Vec::new();
        let freed = {
            let mut c = self.instances[inst].0.lock();
            for slot in slots {
                let e = c.lru.get_mut(slot);
                e.users -= 1;
                if e.users > 0 {
                    continue;
                }
                if e.stale {
                    let e = c.lru.remove(slot);
                    self.open_count.fetch_sub(1, Ordering::Relaxed);
                    back.push((e.key, e.def));
                } else {
                    c.lru.link_front(slot);
                }
            }
            c.shrink(self.per_instance(), &mut back, &self.open_count)
        };
        self.overflows.add(freed);
        self.unref_all(back);
    }

    /// The definition of `key` without opening it (DDL, SHOW, information_schema): cached,
    /// or loaded with `load` and cached.
    pub fn definition<E>(
        &self,
        key: &str,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        self.definition_inner(key, load, false).map(|(_, d)| d)
    }

    /// The cached definition of `key` or a new one; `take_ref` for an open-cache entry (T4).
    fn definition_inner<E>(
        &self,
        key: &str,
        load: impl FnOnce() -> Result<T, E>,
        take_ref: bool,
    ) -> Result<(Arc<str>, Arc<T>), E> {
        if let Some(found) = self.defs.lock().find(key, take_ref) {
            return Ok(found);
        }
        let def = Arc::new(load()?);
        let mut d = self.defs.lock();
        // Another session may have loaded it meanwhile: theirs is the cached one.
        if let Some(found) = d.find(key, take_ref) {
            return Ok(found);
        }
        let k: Arc<str> = Arc::from(key);
        let slot = d.lru.insert(Defined {
            key: k.clone(),
            def: def.clone(),
            refs: u32::from(take_ref),
        });
        if !take_ref {
            d.lru.link_front(slot);
        }
        d.map.insert(k.clone(), slot);
        self.opened_defs.inc();
        d.shrink(self.def_limit.load(Ordering::Relaxed));
        self.def_count.store(d.map.len(), Ordering::Relaxed);
        Ok((k, def))
    }

    /// Returns open-cache entries' references to their definitions (T4).
    fn unref_all(&self, back: Vec<Unref<T>>) {
        if back.is_empty() {
            return;
        }
        let mut d = self.defs.lock();
        for (key, def) in &back {
            let Some(&slot) = d.map.get(key) else {
                continue;
            };
            let e = d.lru.get_mut(slot);
            if !Arc::ptr_eq(&e.def, def) {
                continue;
            }
            e.refs -= 1;
            if e.refs == 0 {
                d.lru.link_front(slot);
            }
        }
        d.shrink(self.def_limit.load(Ordering::Relaxed));
        self.def_count.store(d.map.len(), Ordering::Relaxed);
        drop(d);
        // The descriptions themselves are freed here, outside the mutex.
        drop(back);
    }

    /// DDL touched `key`: its entries leave every instance (freed, or stale while in use:
    /// T3) and its definition leaves the cache.
    pub fn forget(&self, key: &str) {
        let mut gone = Vec::new();
        for inst in self.instances.iter() {
            let mut c = inst.0.lock();
            if let Some(&slot) = c.map.get(key) {
                gone.extend(c.retire(slot, &self.open_count).map(|(_, d)| d));
            }
        }
        let mut d = self.defs.lock();
        if let Some(slot) = d.map.remove(key) {
            gone.push(d.lru.remove(slot).def);
        }
        self.def_count.store(d.map.len(), Ordering::Relaxed);
        drop(d);
        drop(gone);
    }

    /// FLUSH TABLES: every unused entry is freed and every used one made stale (freed when
    /// its statement ends); every definition leaves the cache.
    pub fn flush(&self) {
        let mut gone = Vec::new();
        for inst in self.instances.iter() {
            let mut c = inst.0.lock();
            let slots: Vec<u32> = c.map.values().copied().collect();
            for slot in slots {
                gone.extend(c.retire(slot, &self.open_count).map(|(_, d)| d));
            }
        }
        let old = std::mem::replace(
            &mut *self.defs.lock(),
            Definitions {
                map: HashMap::new(),
                lru: Lru::new(),
            },
        );
        self.def_count.store(0, Ordering::Relaxed);
        drop(old);
        drop(gone);
    }

    /// SET GLOBAL table_open_cache: every instance is brought within its new share now (T2).
    pub fn set_open_limit(&self, n: usize) {
        self.open_limit.store(n, Ordering::Relaxed);
        let per = self.per_instance();
        for inst in self.instances.iter() {
            let mut back = Vec::new();
            let freed = inst.0.lock().shrink(per, &mut back, &self.open_count);
            self.overflows.add(freed);
            self.unref_all(back);
        }
    }

    /// SET GLOBAL table_definition_cache: unreferenced definitions beyond it leave now (T2).
    pub fn set_def_limit(&self, n: usize) {
        self.def_limit.store(n, Ordering::Relaxed);
        let mut d = self.defs.lock();
        d.shrink(n);
        self.def_count.store(d.map.len(), Ordering::Relaxed);
    }

    pub fn status(&self) -> CacheStatus {
        CacheStatus {
            open_tables: self.open_count.load(Ordering::Relaxed) as u64,
            opened_tables: self.opened.get(),
            hits: self.hits.get(),
            misses: self.misses.get(),
            overflows: self.overflows.get(),
            open_definitions: self.def_count.load(Ordering::Relaxed) as u64,
            opened_definitions: self.opened_defs.get(),
        }
    }

    /// T1-T4 over every instance and the definitions (tests).
    #[cfg(test)]
    fn check_invariants(&self) {
        let per = self.per_instance();
        let mut total = 0;
        for inst in self.instances.iter() {
            let c = inst.0.lock();
            let mut unused = 0;
            for slot in c.lru.live_slots() {
                let e = c.lru.get(slot);
                assert_eq!(c.lru.is_linked(slot), e.users == 0, "T1");
                let mapped = c.map.get(&e.key) == Some(&slot);
                assert_eq!(mapped, !e.stale, "T3");
                assert!(!e.stale || e.users > 0, "T3: a stale entry is in use");
                unused += usize::from(e.users == 0);
            }
            for (k, &slot) in &c.map {
                assert_eq!(&c.lru.get(slot).key, k, "T3");
            }
            assert!(c.lru.len() <= per || unused == 0, "T2");
            total += c.lru.len();
        }
        assert_eq!(total, self.open_count.load(Ordering::Relaxed));
        let d = self.defs.lock();
        let mut unreferenced = 0;
        for slot in d.lru.live_slots() {
            let e = d.lru.get(slot);
            assert_eq!(d.lru.is_linked(slot), e.refs == 0, "T1");
            assert_eq!(d.map.get(&e.key), Some(&slot), "T3");
            unreferenced += usize::from(e.refs == 0);
        }
        assert_eq!(d.map.len(), d.lru.len());
        assert!(d.lru.len() <= self.def_limit.load(Ordering::Relaxed) || unreferenced == 0);
    }
}

impl<T: Definition> Instance<T> {
    /// A use of the current entry of `key`, if there is one (a hit). A stale one found (its
    /// definition not current) leaves the map: freed if unused, its reference into `back`.
    fn take_use(
        &mut self,
        key: &str,
        back: &mut Vec<Unref<T>>,
        count: &AtomicUsize,
    ) -> Option<Open<T>> {
        let slot = *self.map.get(key)?;
        if !self.lru.get(slot).def.is_current() {
            back.extend(self.retire(slot, count));
            return None;
        }
        if self.lru.is_linked(slot) {
            self.lru.unlink(slot);
        }
        let e = self.lru.get_mut(slot);
        e.users += 1;
        Some(Open {
            def: e.def.clone(),
            slot,
        })
    }

    /// Takes the mapped entry in `slot` out of the map (T3): freed when unused (its reference
    /// returned), else stale until its last release.
    fn retire(&mut self, slot: u32, count: &AtomicUsize) -> Option<Unref<T>> {
        let e = self.lru.get_mut(slot);
        self.map.remove(&e.key);
        if e.users > 0 {
            e.stale = true;
            return None;
        }
        let e = self.lru.remove(slot);
        count.fetch_sub(1, Ordering::Relaxed);
        Some((e.key, e.def))
    }

    /// Frees least recently used unused entries while there are more than `limit` (T2);
    /// returns how many (Table_open_cache_overflows).
    fn shrink(&mut self, limit: usize, back: &mut Vec<Unref<T>>, count: &AtomicUsize) -> u64 {
        let mut n = 0;
        while self.lru.len() > limit {
            let Some(slot) = self.lru.least_recent() else {
                break;
            };
            let e = self.lru.remove(slot);
            self.map.remove(&e.key);
            count.fetch_sub(1, Ordering::Relaxed);
            back.push((e.key, e.def));
            n += 1;
        }
        n
    }
}

impl<T: Definition> Definitions<T> {
    /// The current cached definition of `key`; with `take_ref` one more open-cache entry
    /// refers to it, else it becomes the most recently used. A definition found not
    /// current leaves the cache.
    fn find(&mut self, key: &str, take_ref: bool) -> Option<(Arc<str>, Arc<T>)> {
        let slot = *self.map.get(key)?;
        if !self.lru.get(slot).def.is_current() {
            self.map.remove(key);
            self.lru.remove(slot);
            return None;
        }
        let linked = self.lru.is_linked(slot);
        if linked {
            self.lru.unlink(slot);
        }
        let e = self.lru.get_mut(slot);
        if take_ref {
            e.refs += 1;
        }
        let found = (e.key.clone(), e.def.clone());
        if !take_ref && linked {
            self.lru.link_front(slot);
        }
        Some(found)
    }

    /// Drops least recently used unreferenced definitions while there are more than `limit`.
    fn shrink(&mut self, limit: usize) {
        while self.lru.len() > limit {
            let Some(slot) = self.lru.least_recent() else {
                break;
            };
            let e = self.lru.remove(slot);
            self.map.remove(&e.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A definition whose table DDL may replace (`current` cleared).
    struct Def {
        key: String,
        current: AtomicBool,
    }

    impl Definition for Def {
        fn is_current(&self) -> bool {
            self.current.load(Ordering::Relaxed)
        }
    }

    fn def(key: &str) -> Result<Def, ()> {
        Ok(Def {
            key: key.to_string(),
            current: AtomicBool::new(true),
        })
    }

    fn key(i: usize) -> String {
        format!("db/t{i}")
    }

    /// Opens and releases `key` in instance `inst` (one statement).
    fn statement(c: &TableCache<Def>, inst: usize, k: &str) -> Arc<Def> {
        let o = c.open(inst, k, || def(k)).unwrap();
        assert_eq!(o.def.key, k);
        c.release(inst, [o.slot]);
        c.check_invariants();
        o.def
    }

    /// Within the limits every table is loaded once and then hit; beyond them every open of
    /// a table read in turn misses, and the counts stay at the limits (T2, T5).
    #[test]
    fn least_recently_used_entries_go_beyond_the_limits() {
        let c = TableCache::new(1, 10, 20);
        for pass in 0..3 {
            for i in 0..10 {
                statement(&c, 0, &key(i));
            }
            let s = c.status();
            assert_eq!((s.opened_tables, s.misses, s.hits), (10, 10, 10 * pass));
        }
        for i in 0..50 {
            statement(&c, 0, &key(i));
        }
        for i in 0..50 {
            statement(&c, 0, &key(i));
        }
        let s = c.status();
        // 10 + 40 misses in the first round of 50 (t0-t9 were hits), 50 in the second.
        assert_eq!((s.misses, s.opened_tables), (100, 100));
        assert_eq!((s.open_tables, s.open_definitions), (10, 20));
        assert_eq!(s.overflows, 90);
        // The second round finds none of its definitions: the 20 kept are those of the ten
        // tables open and the ten before them.
        assert_eq!(s.opened_definitions, 100);
    }

    /// An entry in use is never evicted: the instance goes over its limit and comes back
    /// within it when the statements end (T1, T2).
    #[test]
    fn entries_in_use_overflow_until_released() {
        let c = TableCache::new(1, 4, 400);
        let uses: Vec<u32> = (0..8)
            .map(|i| c.open(0, &key(i), || def(&key(i))).unwrap().slot)
            .collect();
        c.check_invariants();
        assert_eq!((c.status().open_tables, c.status().overflows), (8, 0));
        c.release(0, uses);
        c.check_invariants();
        assert_eq!((c.status().open_tables, c.status().overflows), (4, 4));
        // The four most recently released stayed.
        for i in 4..8 {
            statement(&c, 0, &key(i));
        }
        assert_eq!(c.status().hits, 4);
        // A table opened twice by two statements at once is one entry with two users.
        let a = c.open(0, &key(1), || def(&key(1))).unwrap();
        let b = c.open(0, &key(1), || def(&key(1))).unwrap();
        assert_eq!(a.slot, b.slot);
        c.release(0, [a.slot]);
        c.check_invariants();
        c.release(0, [b.slot]);
        c.check_invariants();
    }

    /// Instances are separate caches of table_open_cache / instances entries each, sharing
    /// the definitions.
    #[test]
    fn instances_share_definitions() {
        let c = TableCache::new(4, 40, 400);
        assert_eq!(c.instance_of(6), 2);
        for inst in 0..4 {
            for i in 0..10 {
                statement(&c, inst, &key(i));
            }
        }
        let s = c.status();
        assert_eq!(
            (s.opened_tables, s.open_tables, s.opened_definitions),
            (40, 40, 10)
        );
        for inst in 0..4 {
            statement(&c, inst, &key(10));
        }
        assert_eq!(c.status().open_tables, 40);
    }

    /// DDL: a definition found not current is replaced; `forget` and `flush` free unused
    /// entries at once and used ones at their release (T3, T4).
    #[test]
    fn ddl_and_flush_replace_entries() {
        let c = TableCache::new(2, 100, 400);
        let first = statement(&c, 0, "db/a");
        first.current.store(false, Ordering::Relaxed);
        let second = statement(&c, 0, "db/a");
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(c.status().opened_definitions, 2);
        assert_eq!(c.status().open_tables, 1);

        let held = c.open(1, "db/a", || def("db/a")).unwrap();
        statement(&c, 0, "db/b");
        c.forget("db/a");
        c.check_invariants();
        assert_eq!(c.status().open_tables, 2);
        let again = statement(&c, 0, "db/a");
        assert!(!Arc::ptr_eq(&again, &held.def));
        c.release(1, [held.slot]);
        c.check_invariants();
        assert_eq!(c.status().open_tables, 2);

        let held = c.open(0, "db/b", || def("db/b")).unwrap();
        c.flush();
        c.check_invariants();
        assert_eq!(
            (c.status().open_tables, c.status().open_definitions),
            (1, 0)
        );
        c.release(0, [held.slot]);
        c.check_invariants();
        assert_eq!(c.status().open_tables, 0);
    }

    /// Lowering the limits evicts at once.
    #[test]
    fn smaller_limits_evict_now() {
        let c = TableCache::new(2, 100, 400);
        for i in 0..30 {
            statement(&c, i % 2, &key(i));
        }
        c.set_open_limit(10);
        c.check_invariants();
        assert_eq!(c.status().open_tables, 10);
        c.set_def_limit(12);
        c.check_invariants();
        assert_eq!(c.status().open_definitions, 12);
    }

    /// The cost of an open does not grow with the number of tables cached: the same opens of
    /// 100 tables, with 100 and with 100,000 tables in the caches (the 100 among them), as
    /// hits (every table open) and as misses of the open cache (10 entries) that find the
    /// description cached. A scan of the cache per open would make the larger one over 1,000
    /// times slower; the bound, 8 times, leaves room for a loaded machine (the two are timed
    /// in turn, the best of 7 rounds each) and debug builds. The same 100 tables are opened
    /// in both, so what the processor's caches hold is alike: tools/bench/table_cache.py
    /// measures a server opening tables spread over all of them.
    #[test]
    fn opens_cost_the_same_with_many_tables() {
        fn filled(tables: usize, open_cache: usize) -> (TableCache<Def>, Vec<String>) {
            let c = TableCache::new(1, open_cache, 200_000);
            let keys: Vec<String> = (0..tables).map(key).collect();
            for k in keys.iter().rev() {
                let o = c.open(0, k, || def(k)).unwrap();
                c.release(0, [o.slot]);
            }
            (c, keys)
        }
        fn per_open((c, keys): &(TableCache<Def>, Vec<String>)) -> f64 {
            let n = 20_000;
            let start = std::time::Instant::now();
            for i in 0..n {
                let k = &keys[i % 100];
                let o = c.open(0, k, || def(k)).unwrap();
                c.release(0, [o.slot]);
            }
            start.elapsed().as_secs_f64() / n as f64
        }
        /// The best of 7 rounds of each, timed in turn.
        fn compare(
            small: &(TableCache<Def>, Vec<String>),
            big: &(TableCache<Def>, Vec<String>),
        ) -> (f64, f64) {
            (0..7).fold((f64::MAX, f64::MAX), |(s, b), _| {
                (s.min(per_open(small)), b.min(per_open(big)))
            })
        }
        let (small_hit, big_hit) = compare(&filled(100, 200_000), &filled(100_000, 200_000));
        let (small_miss, big_miss) = compare(&filled(100, 10), &filled(100_000, 10));
        // Shown with --nocapture (docs/benchmarks.md quotes them).
        eprintln!(
            "ns per open and release of 100 tables, with 100 / 100,000 cached: hits {:.0} / {:.0}, open-cache misses {:.0} / {:.0}",
            small_hit * 1e9,
            big_hit * 1e9,
            small_miss * 1e9,
            big_miss * 1e9
        );
        assert!(
            big_hit < small_hit * 8.0,
            "hits: {small_hit:e} vs {big_hit:e}"
        );
        assert!(
            big_miss < small_miss * 8.0,
            "misses: {small_miss:e} vs {big_miss:e}"
        );
    }
}
