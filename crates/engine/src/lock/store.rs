//! The compact record-lock table: lock structs with bitmaps, grouped by key prefix. (InnoDB:
//! lock_rec_t with its heap-number bitmap, the page hash of lock0lock.)
//!
//! OVERVIEW
//! InnoDB keeps one lock struct per (transaction, page, mode) with a bitmap of the page's heap
//! numbers. Our locks name records by key, not by page position (records have no heap number
//! and move between pages on splits, so a position would need migrating), so the "page" here
//! is logical: a lock key `(table, index, bytes)` is split into a *bucket* key
//! `(table, index, bytes[..n-1])` and a *slot*, its last byte. Keys that differ only in their
//! last byte (consecutive integers: 256 of them) share a bucket:
//!
//! ```text
//!   shard map: hash(bucket key) -> Bucket { key, structs, next (hash collision chain) }
//!   Bucket.structs, in request order:
//!     LockStruct { trx 7, X, NextKey, granted, bits {0..=255} }   one bit per locked key
//!     LockStruct { trx 9, S, RecNotGap, waiting, bits {17} }
//! ```
//!
//! The requests on one key are the structs whose bitmap has its slot, in struct order. A
//! granted request reuses its transaction's granted struct of the same mode and kind in the
//! bucket (setting a bit); a waiting request always gets a struct of its own at the end, so the
//! order of waiting requests is their arrival order (only that order matters: a request waits
//! for every conflicting granted request wherever it is, and for waiting ones ahead of it).
//! Small bitmaps are kept inline as a list of up to 14 slots, larger ones as 256 bits.
//!
//! INVARIANTS
//! - S1: a bucket is in its shard's map under `hash(key)` (at the head of that hash's chain or
//!   further down it), and only while it has a struct.
//! - S2: a waiting struct has exactly one slot. A granted struct may have none (its requests
//!   were released one by one, READ COMMITTED's unlock_row, or its record left the index); it
//!   stays until its transaction releases all its locks, as in InnoDB.
//! - S3: a transaction has at most one request per (key, mode, kind, waiting): callers check
//!   `held` before adding.
//!
//! LATCHING: everything here is protected by the shard mutex of the bucket's hash (mod.rs).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{Kind, LockKey, Mode};
use crate::types::{IndexId, TableId};

/// Prefix bytes kept inline in a bucket key (longer prefixes go to the heap).
const INLINE: usize = 22;
/// Slots kept inline in a bitmap before it becomes 256 bits.
const FEW: usize = 14;

#[derive(Clone, PartialEq, Eq, Hash)]
enum Prefix {
    /// `len` bytes of `b`, the rest zero (so derived equality and hashing are exact).
    Inline {
        len: u8,
        b: [u8; INLINE],
    },
    Heap(Box<[u8]>),
}

impl Prefix {
    fn new(p: &[u8]) -> Prefix {
        if p.len() <= INLINE {
            let mut b = [0; INLINE];
            b[..p.len()].copy_from_slice(p);
            Prefix::Inline {
                len: p.len() as u8,
                b,
            }
        } else {
            Prefix::Heap(p.into())
        }
    }
}

/// What a bucket holds: the locks on the keys of one table and index that share every byte
/// but the last.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BucketKey {
    table: TableId,
    index: IndexId,
    prefix: Prefix,
}

/// A key split into its bucket and slot. Table locks (empty key, an index no record lock
/// uses) take slot 0 of the bucket with the empty prefix.
pub fn split(k: &LockKey) -> (BucketKey, u8) {
    let (prefix, slot) = match k.key.split_last() {
        Some((&last, rest)) => (rest, last),
        None => (&[][..], 0),
    };
    (
        BucketKey {
            table: k.table,
            index: k.index,
            prefix: Prefix::new(prefix),
        },
        slot,
    )
}

/// A set of slots: a short list, or 256 bits.
#[derive(Clone, Debug)]
enum Bits {
    Few { n: u8, s: [u8; FEW] },
    Map(Box<[u64; 4]>),
}

impl Bits {
    fn one(slot: u8) -> Bits {
        let mut s = [0; FEW];
        s[0] = slot;
        Bits::Few { n: 1, s }
    }

    fn has(&self, slot: u8) -> bool {
        match self {
            Bits::Few { n, s } => s[..usize::from(*n)].contains(&slot),
            Bits::Map(m) => m[usize::from(slot >> 6)] & (1 << (slot & 63)) != 0,
        }
    }

    fn set(&mut self, slot: u8) {
        if self.has(slot) {
            return;
        }
        match self {
            Bits::Few { n, s } if usize::from(*n) < FEW => {
                s[usize::from(*n)] = slot;
                *n += 1;
            }
            Bits::Few { n, s } => {
                let mut m = Box::new([0u64; 4]);
                for &x in &s[..usize::from(*n)] {
                    m[usize::from(x >> 6)] |= 1 << (x & 63);
                }
                m[usize::from(slot >> 6)] |= 1 << (slot & 63);
                *self = Bits::Map(m);
            }
            Bits::Map(m) => m[usize::from(slot >> 6)] |= 1 << (slot & 63),
        }
    }

    /// Clears `slot`; true if it was set.
    fn clear(&mut self, slot: u8) -> bool {
        match self {
            Bits::Few { n, s } => {
                let len = usize::from(*n);
                match s[..len].iter().position(|&x| x == slot) {
                    Some(i) => {
                        s[i] = s[len - 1];
                        *n -= 1;
                        true
                    }
                    None => false,
                }
            }
            Bits::Map(m) => {
                let (w, b) = (usize::from(slot >> 6), 1u64 << (slot & 63));
                let was = m[w] & b != 0;
                m[w] &= !b;
                was
            }
        }
    }

    /// The slots set, in increasing order.
    fn slots(&self) -> Vec<u8> {
        let mut v: Vec<u8> = match self {
            Bits::Few { n, s } => s[..usize::from(*n)].to_vec(),
            Bits::Map(_) => (0..=255u8).filter(|&x| self.has(x)).collect(),
        };
        v.sort_unstable();
        v
    }

    fn count(&self) -> usize {
        match self {
            Bits::Few { n, .. } => usize::from(*n),
            Bits::Map(m) => m.iter().map(|w| w.count_ones() as usize).sum(),
        }
    }
}

/// One request, as seen on one key.
#[derive(Clone, Copy, Debug)]
pub struct Req {
    pub trx: u64,
    pub mode: Mode,
    pub kind: Kind,
    pub waiting: bool,
}

/// A transaction's requests of one mode and kind on some keys of a bucket.
#[derive(Clone, Debug)]
pub struct LockStruct {
    pub trx: u64,
    pub mode: Mode,
    pub kind: Kind,
    pub waiting: bool,
    bits: Bits,
}

impl LockStruct {
    pub fn has(&self, slot: u8) -> bool {
        self.bits.has(slot)
    }

    fn req(&self) -> Req {
        Req {
            trx: self.trx,
            mode: self.mode,
            kind: self.kind,
            waiting: self.waiting,
        }
    }
}

/// The structs of a bucket, the first one inline (most buckets have one).
enum Structs {
    One(LockStruct),
    Many(Vec<LockStruct>),
}

impl Structs {
    fn as_slice(&self) -> &[LockStruct] {
        match self {
            Structs::One(s) => std::slice::from_ref(s),
            Structs::Many(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [LockStruct] {
        match self {
            Structs::One(s) => std::slice::from_mut(s),
            Structs::Many(v) => v,
        }
    }

    fn push(&mut self, s: LockStruct) {
        match self {
            Structs::Many(v) if v.is_empty() => *self = Structs::One(s),
            Structs::Many(v) => {
                if v.len() < 4 {
                    v.reserve_exact(1);
                }
                v.push(s);
            }
            Structs::One(_) => {
                let Structs::One(first) = std::mem::replace(self, Structs::Many(Vec::new())) else {
                    unreachable!()
                };
                *self = Structs::Many(vec![first, s]);
            }
        }
    }

    fn retain_mut(&mut self, mut f: impl FnMut(&mut LockStruct) -> bool) {
        match self {
            Structs::One(s) => {
                if !f(s) {
                    *self = Structs::Many(Vec::new());
                }
            }
            Structs::Many(v) => v.retain_mut(f),
        }
    }
}

pub struct Bucket {
    key: BucketKey,
    structs: Structs,
    /// Another bucket whose key has the same hash.
    next: Option<Box<Bucket>>,
}

impl Bucket {
    /// Every request of the bucket, key by key (keys in byte order), each key's requests in
    /// queue order.
    pub fn requests(&self) -> Vec<(LockKey, Vec<Req>)> {
        let structs = self.structs.as_slice();
        let mut slots: Vec<u8> = structs.iter().flat_map(|s| s.bits.slots()).collect();
        slots.sort_unstable();
        slots.dedup();
        let prefix: &[u8] = match &self.key.prefix {
            Prefix::Inline { len, b } => &b[..usize::from(*len)],
            Prefix::Heap(b) => b,
        };
        slots
            .into_iter()
            .map(|slot| {
                let mut key = prefix.to_vec();
                if self.key.index != super::TABLE_KEY && self.key.index != super::AUTOINC_KEY {
                    key.push(slot);
                }
                let k = LockKey {
                    table: self.key.table,
                    index: self.key.index,
                    key,
                };
                (k, self.reqs(slot).map(|(_, r)| r).collect())
            })
            .collect()
    }

    /// The requests on `slot`, with the index of their struct (their order).
    pub fn reqs(&self, slot: u8) -> impl Iterator<Item = (usize, Req)> + '_ {
        self.structs
            .as_slice()
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.bits.has(slot))
            .map(|(i, s)| (i, s.req()))
    }

    pub fn structs(&self) -> &[LockStruct] {
        self.structs.as_slice()
    }

    pub fn struct_mut(&mut self, i: usize) -> &mut LockStruct {
        &mut self.structs.as_mut_slice()[i]
    }

    /// Adds a granted request; true if it needed a new struct.
    pub fn add_granted(&mut self, trx: u64, mode: Mode, kind: Kind, slot: u8) -> bool {
        if let Some(s) = self
            .structs
            .as_mut_slice()
            .iter_mut()
            .find(|s| s.trx == trx && s.mode == mode && s.kind == kind && !s.waiting)
        {
            s.bits.set(slot);
            return false;
        }
        self.push(LockStruct {
            trx,
            mode,
            kind,
            waiting: false,
            bits: Bits::one(slot),
        });
        true
    }

    /// Queues a waiting request at the end (S2).
    pub fn add_waiting(&mut self, trx: u64, mode: Mode, kind: Kind, slot: u8) {
        self.push(LockStruct {
            trx,
            mode,
            kind,
            waiting: true,
            bits: Bits::one(slot),
        });
    }

    fn push(&mut self, s: LockStruct) {
        self.structs.push(s);
    }

    /// Removes struct `i` (a waiting request that gave up).
    pub fn remove_struct(&mut self, i: usize) {
        let mut n = 0;
        self.structs.retain_mut(|_| {
            n += 1;
            n != i + 1
        });
    }

    /// Clears `trx`'s requests on `slot` (its granted structs stay, S2). True if a request
    /// waits on the slot.
    pub fn clear_trx_slot(&mut self, trx: u64, slot: u8) -> bool {
        let mut waiters = false;
        for s in self.structs.as_mut_slice() {
            if s.trx == trx {
                s.bits.clear(slot);
            } else if s.waiting && s.bits.has(slot) {
                waiters = true;
            }
        }
        waiters
    }

    /// Removes every request on `slot` and returns the granted ones; waiting structs go
    /// (their waiters find them gone), granted ones stay (S2).
    pub fn clear_slot(&mut self, slot: u8) -> Vec<Req> {
        let mut granted = Vec::new();
        self.structs.retain_mut(|s| {
            if !s.bits.clear(slot) {
                return true;
            }
            if s.waiting {
                return false;
            }
            granted.push(s.req());
            true
        });
        granted
    }

    /// Removes every struct of `trx`; true if a request of another transaction waits.
    pub fn remove_trx(&mut self, trx: u64) -> bool {
        self.structs.retain_mut(|s| s.trx != trx);
        self.structs.as_slice().iter().any(|s| s.waiting)
    }

    pub fn is_empty(&self) -> bool {
        self.structs.as_slice().is_empty()
    }

    /// Requests held in the bucket.
    pub fn n_reqs(&self) -> usize {
        self.structs.as_slice().iter().map(|s| s.bits.count()).sum()
    }
}

/// Hashes are already SipHash values (`LockSys::hasher`): the map uses them as they are.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// One shard's buckets, by hash of their key (S1). Boxed: a hash table slot then costs 16
/// bytes, and most of a table's slots are empty.
#[derive(Default)]
pub struct BucketMap(HashMap<u64, Box<Bucket>, BuildHasherDefault<IdHasher>>);

impl BucketMap {
    pub fn get(&self, h: u64, k: &BucketKey) -> Option<&Bucket> {
        let mut b: &Bucket = self.0.get(&h)?;
        loop {
            if b.key == *k {
                return Some(b);
            }
            b = b.next.as_deref()?;
        }
    }

    pub fn get_mut(&mut self, h: u64, k: &BucketKey) -> Option<&mut Bucket> {
        let mut b: &mut Bucket = self.0.get_mut(&h)?;
        loop {
            if b.key == *k {
                return Some(b);
            }
            b = b.next.as_deref_mut()?;
        }
    }

    /// The bucket of `k`, created empty if absent (the caller adds a struct: S1).
    pub fn get_or_insert(&mut self, h: u64, k: &BucketKey) -> &mut Bucket {
        if self.get(h, k).is_some() {
            return self.get_mut(h, k).expect("present");
        }
        let b = Bucket {
            key: k.clone(),
            structs: Structs::Many(Vec::new()),
            next: None,
        };
        match self.0.entry(h) {
            Entry::Vacant(v) => v.insert(Box::new(b)),
            Entry::Occupied(o) => {
                let head = o.into_mut();
                let old = std::mem::replace(head, Box::new(b));
                head.next = Some(old);
                head
            }
        }
    }

    /// Drops the empty buckets of hash `h` (S1).
    pub fn prune(&mut self, h: u64) {
        let Some(head) = self.0.get(&h) else {
            return;
        };
        if head.next.is_none() {
            if head.is_empty() {
                self.0.remove(&h);
            }
            return;
        }
        let Some(mut b) = self.0.remove(&h) else {
            return;
        };
        let mut keep = Vec::new();
        loop {
            let next = b.next.take();
            if !b.is_empty() {
                keep.push(b);
            }
            match next {
                Some(n) => b = n,
                None => break,
            }
        }
        let mut chain: Option<Box<Bucket>> = None;
        while let Some(mut b) = keep.pop() {
            b.next = chain;
            chain = Some(b);
        }
        if let Some(c) = chain {
            self.0.insert(h, c);
        }
    }

    /// Applies `f` to every bucket of hash `h` (release), then drops the empty ones.
    pub fn for_each_of_hash(&mut self, h: u64, mut f: impl FnMut(&mut Bucket)) {
        let Some(b) = self.0.get_mut(&h) else {
            return;
        };
        let mut b: &mut Bucket = b;
        loop {
            f(b);
            match b.next.as_deref_mut() {
                Some(n) => b = n,
                None => break,
            }
        }
        self.prune(h);
    }

    #[cfg(test)]
    pub fn contains(&self, h: u64, k: &BucketKey) -> bool {
        self.get(h, k).is_some()
    }

    pub fn buckets(&self) -> impl Iterator<Item = &Bucket> {
        self.0.values().flat_map(|b| {
            let mut cur: Option<&Bucket> = Some(b);
            std::iter::from_fn(move || {
                let b = cur?;
                cur = b.next.as_deref();
                Some(b)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_grow_from_a_list_to_a_bitmap_and_back_to_empty() {
        let mut b = Bits::one(7);
        for s in 0..=255u8 {
            b.set(s);
            assert!(b.has(s));
        }
        assert!(matches!(b, Bits::Map(_)));
        assert_eq!(b.count(), 256);
        for s in 0..=255u8 {
            assert!(b.clear(s));
            assert!(!b.has(s));
        }
        assert_eq!(b.count(), 0);
        let mut f = Bits::one(3);
        f.set(3);
        assert_eq!(f.count(), 1);
        assert!(!f.clear(4));
        assert!(f.clear(3));
        assert_eq!(f.count(), 0);
    }

    #[test]
    fn keys_differing_in_their_last_byte_share_a_bucket() {
        let k = |b: &[u8]| LockKey {
            table: 1,
            index: 2,
            key: b.to_vec(),
        };
        let (a, sa) = split(&k(&[1, 0, 0, 0, 4, 0, 0, 0, 5]));
        let (b, sb) = split(&k(&[1, 0, 0, 0, 4, 0, 0, 0, 6]));
        let (c, _) = split(&k(&[1, 0, 0, 0, 4, 0, 0, 1, 5]));
        assert!(a == b && a != c && (sa, sb) == (5, 6));
        let long = vec![9u8; 40];
        let (l1, _) = split(&k(&long));
        let (l2, _) = split(&k(&long));
        assert!(l1 == l2 && matches!(l1.prefix, Prefix::Heap(_)));
    }

    #[test]
    fn granted_requests_share_a_struct_and_waiting_ones_queue_alone() {
        let mut m = BucketMap::default();
        let (k, _) = split(&LockKey {
            table: 1,
            index: 1,
            key: vec![1, 0],
        });
        let b = m.get_or_insert(7, &k);
        for slot in 0..=255u8 {
            assert_eq!(b.add_granted(1, Mode::X, Kind::NextKey, slot), slot == 0);
        }
        assert!(b.add_granted(1, Mode::S, Kind::NextKey, 3));
        b.add_waiting(2, Mode::X, Kind::RecNotGap, 3);
        assert!(b.add_granted(2, Mode::S, Kind::Gap, 3));
        assert_eq!(b.structs().len(), 4);
        assert_eq!(b.n_reqs(), 256 + 3);
        let on3: Vec<(usize, u64, bool)> = b.reqs(3).map(|(i, r)| (i, r.trx, r.waiting)).collect();
        assert_eq!(
            on3,
            vec![(0, 1, false), (1, 1, false), (2, 2, true), (3, 2, false)]
        );
        // A record leaving the index: granted requests reported, the waiting one removed.
        let g = b.clear_slot(3);
        assert_eq!(g.len(), 3);
        assert_eq!(b.structs().len(), 3);
        assert_eq!(b.reqs(3).count(), 0);
        assert!(!b.clear_trx_slot(1, 4));
        assert!(!b.remove_trx(1));
        assert_eq!(b.structs().len(), 1);
        b.remove_struct(0);
        assert!(b.is_empty());
        m.prune(7);
        assert_eq!(m.buckets().count(), 0);
    }

    #[test]
    fn colliding_hashes_chain_and_prune() {
        let mut m = BucketMap::default();
        let key = |i: u8| {
            split(&LockKey {
                table: 1,
                index: 1,
                key: vec![i, 0],
            })
            .0
        };
        for i in 0..3 {
            m.get_or_insert(42, &key(i))
                .add_granted(u64::from(i), Mode::X, Kind::Gap, 0);
        }
        assert_eq!(m.buckets().count(), 3);
        assert!(!m.get_mut(42, &key(1)).expect("chained").remove_trx(1));
        m.prune(42);
        assert_eq!(m.buckets().count(), 2);
        assert!(m.contains(42, &key(0)) && m.contains(42, &key(2)) && !m.contains(42, &key(1)));
        m.for_each_of_hash(42, |b| {
            b.remove_trx(0);
            b.remove_trx(2);
        });
        assert_eq!(m.buckets().count(), 0);
    }
}
