//! Adaptive hash index: a hash from a search key to the leaf that holds it, so repeated searches
//! skip the descent from the root. (InnoDB: btr0sea.)
//!
//! OVERVIEW
//! ```text
//!   key ──fold(index id, n, first n key fields)──> parts[fold] ──> bucket[fold]: 4 cells
//!   cell: fold | page number, slot, index id's low 16 bits          fold 0 = empty
//! ```
//! innodb_adaptive_hash_index_parts parts, each an array of 64-byte buckets of four cells and
//! a latch for its writers. An entry goes into its bucket's cell of the same fold, else a free
//! cell, else over one of the four (taken in turn): a set-associative cache whose memory is
//! bounded by construction, with no chains and no free list. The size follows from the buffer
//! pool's as InnoDB's does, but InnoDB's pool / 512 cells head chains whose nodes come from
//! the pool, while a cell here holds one entry: buffer pool bytes / 256 cells in all (16 bytes
//! each, so 1/16 of the pool's size at most; a pool full of sysbench rows holds about one row
//! per 200 bytes, so its leaves' records fill about 80% of the cells), split evenly among the
//! parts, fixed at startup. A part's array is allocated at its first entry and kept while the
//! engine is open (InnoDB too keeps its cell array when the index is switched off).
//! SHOW ENGINE INNODB STATUS counts as "node heap buffers" the 16 KiB stretches of a part that
//! hold entries.
//!
//! A probe reads its bucket with plain atomic loads and no latch: the hash is read on every
//! point search, and a shared latch would make every search write to the latch's cache line.
//! This is sound because nothing a probe reads is trusted (THE CHECK, A1) and nothing it reads
//! is ever freed (A4); a cell read while a writer rewrites it may pair one entry's fold with
//! another's page, which the check rejects or proves.
//!
//! WHEN IT IS USED
//! Each index votes on the shape of its searches, the number of key fields (`IndexInfo`): a
//! search of the shape being voted on adds one vote (up to 2 x BUILD_LIMIT), any other shape
//! takes SHAPE_PENALTY away, and at zero the other shape becomes the one voted on. While the
//! shape has BUILD_LIMIT votes, its searches try the hash first (`probe`); those that still
//! descend from the root then feed it (`learn`): a leaf on which more than 1/16 of its record
//! count of searches landed has all its records hashed (a page build, InnoDB's
//! btr_search_build_page_hash_index), and a search that finds its key on a leaf already hashed
//! adds that key alone (a record inserted since, or an entry another one replaced). Nothing is
//! removed when records or pages change: a stale entry fails the check below and is replaced
//! by the search that then descends. DROP TABLE / DROP INDEX (and so TRUNCATE and table
//! rebuilds, which drop the old table) sweep the index's entries out; OFF empties every part.
//! After FAIL_LIMIT failed guesses in a row on an index (its leaves are not in the pool, or
//! not hashed yet), each thread tries one search in SAMPLE_EVERY until a guess succeeds again,
//! so a workload the hash cannot serve pays little for it.
//!
//! THE CHECK (why a guess that passes gives the position a descent gives)
//! A leaf's records are a run of consecutive records of its index (btree I1, I3) and change
//! only under its X latch. A probe latches the guessed page without waiting and accepts it only
//! if it is a B-tree page (freed pages are re-initialised as FREE) of this index at level 0 in
//! the index's space, and the search position on it is bounded by records of the page itself:
//! - on a full ordering key (at most one record of the index equals it) the record at the
//!   entry's slot equals the key: the position is that record (Lower) or the one after (Upper);
//! - else the page's binary search gives slot s with 0 < s < n: the records on both sides of
//!   the position are on the page, so no record of the index lies between them elsewhere;
//! - else, on a full key, s = 0 with the first record equal (Lower) or s = n with the last
//!   record equal (Upper): beyond that edge every record of the index is below (above) the key.
//!
//! The position in the index's order is then the one a descent finds, on the leaf a descent
//! would latch or at the end of its neighbour, a form descents also return (a caller reaches
//! a record past a leaf's end through the leaf chain). An entry that is stale, collided or
//! missing only fails the check; so does a page that is busy, not in the pool, or freed.
//!
//! INVARIANTS
//! - A1: a search's result never depends on an entry (THE CHECK); the table may lose or
//!   replace entries at any time.
//! - A2: no entry is added while innodb_adaptive_hash_index is OFF: `insert` reads the switch
//!   under the part's write latch, and `switch(false)` clears the switch before it clears each
//!   part under that latch.
//! - A3: rows_added - rows_removed = occupied cells, once the adders stop (`check_counts`).
//! - A4: a part's cells, once allocated, stay allocated while the engine is open; entries are
//!   written only under the part's latch, one cell at a time with atomic stores.
//!
//! LATCHING
//! The part latches are leaves of the engine's latch order: a writer (`learn`, OFF, DROP)
//! takes one with or without page latches held (`learn` holds the leaf) and, holding it,
//! takes nothing else and waits for nothing. A probe takes no part latch (A4) and only tries
//! the page latch (`Mtr::try_get`): it never waits for a page latch, and once it holds the
//! leaf the thread is in the state an optimistic descent leaves it in (one leaf, nothing above
//! it), so the B-tree's latch order (btree LATCHING) is unchanged. Contended part latches are
//! counted under `btr_search_latch` (sync_stats).

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering as AtOrd};
use std::sync::OnceLock;

use crate::buffer_pool::LatchMode;
use crate::config::Tunables;
use crate::counter::Counter;
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{cmp_tuple_rec, FieldIter, Tuple};
use crate::page::{self, PageType};
use crate::sync_stats::{WaitRwLock, WaitStat};
use crate::types::{IndexId, PageId, PageNo};

use super::{search_page, Bound, Index, Intent, Level, Path};

/// Votes a shape needs before its searches use the hash (InnoDB's BTR_SEARCH_BUILD_LIMIT).
const BUILD_LIMIT: u32 = 100;
/// Votes a search of another shape takes away.
const SHAPE_PENALTY: u32 = 4;
/// After this many failed guesses in a row, a thread tries one search in SAMPLE_EVERY.
const FAIL_LIMIT: u32 = 16;
const SAMPLE_EVERY: u32 = 16;
/// A leaf is hashed once more than n_recs / PAGE_BUILD_LIMIT searches landed on it
/// (InnoDB's BTR_SEARCH_PAGE_BUILD_LIMIT).
const PAGE_BUILD_LIMIT: usize = 16;
/// Buckets per 16 KiB (a node heap buffer, as SHOW ENGINE INNODB STATUS counts them).
const BLOCK_BUCKETS: usize = 16384 / std::mem::size_of::<Bucket>();
/// Cells per bucket: a fold may sit in any cell of its bucket.
const WAYS: usize = 4;

/// One entry as read from a cell; `fold` 0 marks an empty cell. `tag` is the low 16 bits of
/// the index id (DROP sweeps by it; an entry of another index with the same tag goes too,
/// which A1 allows).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Entry {
    fold: u64,
    page: PageNo,
    slot: u16,
    tag: u16,
}

/// A cell: written under its part's latch, read without it (A4).
#[derive(Default)]
struct Cell {
    fold: AtomicU64,
    /// page << 32 | slot << 16 | tag.
    data: AtomicU64,
}

impl Cell {
    fn load(&self) -> Entry {
        let fold = self.fold.load(AtOrd::Relaxed);
        let d = self.data.load(AtOrd::Relaxed);
        Entry {
            fold,
            page: (d >> 32) as PageNo,
            slot: (d >> 16) as u16,
            tag: d as u16,
        }
    }

    fn store(&self, e: Entry) {
        let d = (u64::from(e.page) << 32) | (u64::from(e.slot) << 16) | u64::from(e.tag);
        self.data.store(d, AtOrd::Relaxed);
        self.fold.store(e.fold, AtOrd::Relaxed);
    }
}

/// A cache line of cells.
#[derive(Default)]
#[repr(align(64))]
struct Bucket([Cell; WAYS]);

fn tag_of(index: IndexId) -> u16 {
    index as u16
}

/// One part of the table.
struct Part {
    /// The part's buckets, allocated at its first entry and kept while the engine is open:
    /// probes read them without a latch (A4), so OFF and DROP empty cells, never free them.
    buckets: OnceLock<Box<[Bucket]>>,
    /// Taken by the writers of the part's cells (entries added, swept, cleared) and by
    /// readers of its bookkeeping; never by a probe.
    latch: WaitRwLock<PartState>,
}

/// A part's bookkeeping. Protected by `Part::latch`.
struct PartState {
    /// Occupied cells.
    used: usize,
    /// Occupied cells per BLOCK_BUCKETS buckets.
    per_block: Vec<u32>,
    /// The way the next entry that finds its bucket full replaces.
    victim: usize,
}

/// INNODB_METRICS adaptive_hash_*.
#[derive(Default)]
pub struct AhiStats {
    /// Searches whose position came from the hash.
    pub searches: Counter,
    /// Searches that descended from the root (InnoDB: btr_cur_n_non_sea).
    pub searches_btree: Counter,
    /// Leaves whose records were hashed.
    pub pages_added: Counter,
    /// Entries written into an empty cell or over another key's entry.
    pub rows_added: Counter,
    /// Entries that left the table: replaced by another key's, swept by DROP, cleared by OFF.
    pub rows_removed: Counter,
    /// Entries of a key rewritten with another page or slot.
    pub rows_updated: Counter,
}

/// The adaptive hash index of an engine (`Inner::ahi`).
pub struct AdaptiveHash {
    parts: Box<[Part]>,
    /// Buckets per part.
    buckets: usize,
    pub stats: AhiStats,
}

/// Search statistics of one index (module comment, WHEN IT IS USED).
#[derive(Default)]
pub struct IndexInfo {
    /// The shape being voted on (key fields) in the high 16 bits, its votes in the low 16.
    /// Updated with plain loads and stores: a lost vote only delays a decision.
    votes: AtomicU32,
    /// Guesses failed in a row (saturating at FAIL_LIMIT), updated the same way.
    failures: AtomicU32,
}

impl Clone for IndexInfo {
    /// A copy starts its own vote.
    fn clone(&self) -> Self {
        IndexInfo::default()
    }
}

impl std::fmt::Debug for IndexInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.votes.load(AtOrd::Relaxed);
        write!(
            f,
            "IndexInfo {{ shape: {}, votes: {} }}",
            v >> 16,
            v & 0xFFFF
        )
    }
}

thread_local! {
    /// This thread's xorshift state for choosing which searches try again while their
    /// index's guesses keep failing (at random, not every n-th: a workload alternating two
    /// kinds of keys would always sample the same kind).
    static SAMPLER: std::cell::Cell<u32> = const { std::cell::Cell::new(0x9E37_79B9) };
}

impl IndexInfo {
    /// False while the index's guesses keep failing, except for one search in SAMPLE_EVERY
    /// of this thread's, which tries again (InnoDB's last_hash_succ, with a way back).
    fn worth_a_guess(&self) -> bool {
        if self.failures.load(AtOrd::Relaxed) < FAIL_LIMIT {
            return true;
        }
        SAMPLER.with(|c| {
            let mut x = c.get();
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            c.set(x);
            x.is_multiple_of(SAMPLE_EVERY)
        })
    }

    /// Records a guess's outcome.
    fn guessed(&self, hit: bool) {
        let f = self.failures.load(AtOrd::Relaxed);
        if hit && f != 0 {
            self.failures.store(0, AtOrd::Relaxed);
        } else if !hit && f < FAIL_LIMIT {
            self.failures.store(f + 1, AtOrd::Relaxed);
        }
    }

    /// Counts a search of `n` key fields; true if searches of that shape use the hash.
    fn vote(&self, n: usize) -> bool {
        let v = self.votes.load(AtOrd::Relaxed);
        let (shape, votes) = ((v >> 16) as usize, v & 0xFFFF);
        if shape == n {
            if votes < 2 * BUILD_LIMIT {
                self.votes.store(v + 1, AtOrd::Relaxed);
            }
            return votes >= BUILD_LIMIT;
        }
        let next = if votes > SHAPE_PENALTY {
            v - SHAPE_PENALTY
        } else {
            ((n as u32) << 16) | 1
        };
        self.votes.store(next, AtOrd::Relaxed);
        false
    }
}

/// One part's size and memory, for SHOW ENGINE INNODB STATUS.
pub struct PartSize {
    pub cells: usize,
    /// Blocks of 16 KiB allocated ("node heap has N buffer(s)").
    pub buffers: usize,
}

impl AdaptiveHash {
    /// A table of `n_parts` parts sized for a buffer pool of `pool_bytes` (module comment).
    pub fn new(n_parts: usize, pool_bytes: u64) -> Self {
        let n_parts = n_parts.max(1);
        let cells = usize::try_from(pool_bytes / 256).unwrap_or(usize::MAX);
        let buckets = (cells / WAYS / n_parts).clamp(16, u32::MAX as usize);
        AdaptiveHash {
            parts: (0..n_parts)
                .map(|_| Part {
                    buckets: OnceLock::new(),
                    latch: WaitRwLock::new(PartState {
                        used: 0,
                        per_block: vec![0; buckets.div_ceil(BLOCK_BUCKETS)],
                        victim: 0,
                    }),
                })
                .collect(),
            buckets,
            stats: AhiStats::default(),
        }
    }

    /// (part, bucket) of a fold: the part from its low half, the bucket from its high half.
    fn locate(&self, fold: u64) -> (usize, usize) {
        let part = ((fold & 0xFFFF_FFFF) * self.parts.len() as u64) >> 32;
        let bucket = ((fold >> 32) * self.buckets as u64) >> 32;
        (part as usize, bucket as usize)
    }

    /// The entry of `fold`, read without a latch (A4).
    fn get(&self, fold: u64) -> Option<Entry> {
        let (p, b) = self.locate(fold);
        let bucket = &self.parts[p].buckets.get()?[b];
        bucket.0.iter().map(Cell::load).find(|e| e.fold == fold)
    }

    /// Writes entries (fold, slot) of leaf `page` of `index` (A2, A3): over the fold's own
    /// entry, else into a free cell of its bucket, else over the bucket's victim.
    fn insert(&self, tun: &Tunables, index: IndexId, page: PageNo, entries: &mut [(u64, u16)]) {
        entries.sort_unstable_by_key(|e| self.locate(e.0).0);
        for run in entries.chunk_by(|a, b| self.locate(a.0).0 == self.locate(b.0).0) {
            let part = &self.parts[self.locate(run[0].0).0];
            let mut g = part.latch.write();
            if !tun.adaptive_hash_index.load(AtOrd::Acquire) {
                return;
            }
            let buckets = part
                .buckets
                .get_or_init(|| (0..self.buckets).map(|_| Bucket::default()).collect());
            for &(fold, slot) in run {
                let new = Entry {
                    fold,
                    page,
                    slot,
                    tag: tag_of(index),
                };
                let b = self.locate(fold).1;
                let cells = &buckets[b].0;
                let cur: Vec<Entry> = cells.iter().map(Cell::load).collect();
                let (way, fresh) = match cur.iter().position(|c| c.fold == fold) {
                    Some(w) => (w, false),
                    None => match cur.iter().position(|c| c.fold == 0) {
                        Some(w) => (w, true),
                        None => (g.victim % WAYS, false),
                    },
                };
                let old = cur[way];
                if old == new {
                    continue;
                }
                cells[way].store(new);
                if fresh {
                    g.used += 1;
                    g.per_block[b / BLOCK_BUCKETS] += 1;
                    self.stats.rows_added.inc();
                } else if old.fold != fold {
                    g.victim = g.victim.wrapping_add(1);
                    self.stats.rows_removed.inc();
                    self.stats.rows_added.inc();
                } else {
                    self.stats.rows_updated.inc();
                }
            }
        }
    }

    /// Empties the cells of every part whose entry `gone` selects, counting them removed.
    fn sweep(&self, gone: impl Fn(&Entry) -> bool) {
        for part in self.parts.iter() {
            let mut g = part.latch.write();
            let Some(buckets) = part.buckets.get() else {
                continue;
            };
            let PartState {
                used, per_block, ..
            } = &mut *g;
            for (blk, n) in per_block.iter_mut().enumerate() {
                if *n == 0 {
                    continue;
                }
                let end = ((blk + 1) * BLOCK_BUCKETS).min(buckets.len());
                for c in buckets[blk * BLOCK_BUCKETS..end]
                    .iter()
                    .flat_map(|b| b.0.iter())
                {
                    let e = c.load();
                    if e.fold != 0 && gone(&e) {
                        c.store(Entry::default());
                        *n -= 1;
                        *used -= 1;
                        self.stats.rows_removed.inc();
                    }
                }
            }
        }
    }

    /// Turns the index on or off; off also empties it (A2).
    pub fn switch(&self, tun: &Tunables, on: bool) {
        tun.adaptive_hash_index.store(on, AtOrd::Release);
        if !on {
            self.sweep(|_| true);
        }
    }

    /// Removes the entries of dropped indexes.
    pub fn drop_indexes(&self, ids: &[IndexId]) {
        let tags: Vec<u16> = ids.iter().map(|&i| tag_of(i)).collect();
        self.sweep(|e| tags.contains(&e.tag));
    }

    /// Each part's size and the 16 KiB blocks of it that hold entries.
    pub fn part_sizes(&self) -> Vec<PartSize> {
        self.parts
            .iter()
            .map(|p| PartSize {
                cells: self.buckets * WAYS,
                buffers: p.latch.read().per_block.iter().filter(|&&n| n > 0).count(),
            })
            .collect()
    }

    /// Occupied cells in all parts.
    pub fn entries(&self) -> usize {
        self.parts.iter().map(|p| p.latch.read().used).sum()
    }

    /// A3, with the adders stopped: Err describes the difference.
    pub fn check_counts(&self) -> Result<(), String> {
        let occupied: usize = self
            .parts
            .iter()
            .filter_map(|p| p.buckets.get())
            .flat_map(|bk| bk.iter().flat_map(|b| b.0.iter()))
            .filter(|c| c.load().fold != 0)
            .count();
        let (added, removed) = (self.stats.rows_added.get(), self.stats.rows_removed.get());
        if occupied != self.entries() || added.checked_sub(removed) != Some(occupied as u64) {
            return Err(format!(
                "{occupied} occupied cells, {} counted used, rows added {added} - removed {removed}",
                self.entries()
            ));
        }
        Ok(())
    }

    /// The part latches' waits (SHOW ENGINE INNODB MUTEX).
    pub fn part_waits(&self) -> impl Iterator<Item = &WaitStat> {
        self.parts.iter().map(|p| p.latch.stat())
    }
}

/// Key fields a search of `key` uses (its shape).
fn shape(idx: &Index, key: &Tuple) -> usize {
    key.len().min(idx.leaf.n_order).min(0xFFFF)
}

/// Hashes the index id, the shape and the shape's fields (raw bytes: keys equal only under a
/// collation, as 'a' and 'A', fold apart and just miss). Never 0.
struct Fold(u64);

impl Fold {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn new(index: IndexId, n: usize) -> Self {
        let mut f = Fold(index);
        f.mix(n as u64);
        f
    }

    fn mix(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(Self::K).rotate_left(31);
    }

    fn field(&mut self, v: Option<&[u8]>) {
        let Some(b) = v else {
            self.mix(u64::MAX);
            return;
        };
        self.mix(b.len() as u64);
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            let mut x = [0u8; 8];
            x.copy_from_slice(w);
            self.mix(u64::from_le_bytes(x));
        }
        if !words.remainder().is_empty() {
            let mut x = [0u8; 8];
            x[..words.remainder().len()].copy_from_slice(words.remainder());
            self.mix(u64::from_le_bytes(x));
        }
    }

    /// MurmurHash3's finaliser; the low bit set so no fold is 0.
    fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^= h >> 33;
        h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        h ^= h >> 33;
        h | 1
    }
}

fn fold_key(idx: &Index, key: &Tuple, n: usize) -> u64 {
    let mut f = Fold::new(idx.id, n);
    for v in key.iter().take(n) {
        f.field(v);
    }
    f.finish()
}

/// The fold of a record's first `n` fields; None if one is stored off-page.
fn fold_rec(idx: &Index, rec: &[u8], n: usize) -> Option<u64> {
    let mut f = Fold::new(idx.id, n);
    for r in FieldIter::new(&idx.leaf, rec).take(n) {
        let r = r.expect("malformed record on a verified page");
        if r.ext {
            return None;
        }
        f.field(r.bytes(&idx.leaf, rec));
    }
    Some(f.finish())
}

/// What a search does after trying the hash.
pub(super) enum Probe {
    /// The hash gave the position; the leaf is latched as the intent asks.
    Hit(Path),
    /// Descend from the root. With the key's fold, the index uses the hash for this shape and
    /// the descent's leaf should be learnt.
    Descend(Option<u64>),
}

/// Tries the hash for a Read or ModifyLeaf search (THE CHECK).
pub(super) fn probe(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    key: &Tuple,
    bound: Bound,
    intent: Intent,
) -> Probe {
    let inner = mtr.inner();
    if !inner.tun.adaptive_hash_index.load(AtOrd::Relaxed) {
        return Probe::Descend(None);
    }
    let n = shape(idx, key);
    if n == 0 || !idx.ahi.vote(n) {
        return Probe::Descend(None);
    }
    let fold = fold_key(idx, key, n);
    if !idx.ahi.worth_a_guess() {
        return Probe::Descend(Some(fold));
    }
    let path = guess(mtr, idx, key, n, bound, intent, fold);
    idx.ahi.guessed(path.is_some());
    match path {
        Some(path) => {
            inner.ahi.stats.searches.inc();
            Probe::Hit(path)
        }
        None => Probe::Descend(Some(fold)),
    }
}

/// The hash's guess for `key`, latched, if THE CHECK proves it.
fn guess(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    key: &Tuple,
    n: usize,
    bound: Bound,
    intent: Intent,
    fold: u64,
) -> Option<Path> {
    let cell = mtr
        .inner()
        .ahi
        .get(fold)
        .filter(|c| c.tag == tag_of(idx.id))?;
    let mode = if intent == Intent::Read {
        LatchMode::S
    } else {
        LatchMode::X
    };
    let r = mtr.try_get(PageId::new(idx.space, cell.page), mode)?;
    let Some(slot) = position(idx, mtr.page(r), key, n, bound, cell.slot as usize) else {
        mtr.release(r);
        return None;
    };
    Some(Path {
        levels: vec![Level {
            page: r,
            slot,
            left: None,
            right: None,
            far_left: None,
        }],
        from_root: false,
    })
}

/// The search position on guessed page `p`, if THE CHECK proves it.
fn position(
    idx: &Index,
    p: &[u8],
    key: &Tuple,
    n: usize,
    bound: Bound,
    hint: usize,
) -> Option<usize> {
    if page::page_type(p) != Some(PageType::Index) || ip::index_id(p) != idx.id || !ip::is_leaf(p) {
        return None;
    }
    let n_recs = ip::n_recs(p);
    let full = n == idx.leaf.n_order;
    let eq = |s: usize| cmp_tuple_rec(&idx.leaf, key, ip::rec(p, s)) == Ordering::Equal;
    if full && hint < n_recs && eq(hint) {
        return Some(match bound {
            Bound::Lower => hint,
            Bound::Upper => hint + 1,
        });
    }
    let s = search_page(&idx.leaf, p, key, bound);
    if s > 0 && s < n_recs {
        return Some(s);
    }
    let edge = match bound {
        Bound::Lower => s == 0 && n_recs > 0 && eq(0),
        Bound::Upper => s == n_recs && n_recs > 0 && eq(n_recs - 1),
    };
    (full && edge).then_some(s)
}

/// After a descent from the root by a search whose index uses the hash (`fold` from `probe`):
/// counts the landing on the leaf, hashes the leaf when it has had enough, or adds the key's
/// entry if the leaf is hashed already and holds the key (module comment).
pub(super) fn learn(mtr: &Mtr<'_>, idx: &Index, key: &Tuple, bound: Bound, fold: u64, path: &Path) {
    let inner = mtr.inner();
    let leaf = path.leaf();
    let p = mtr.page(leaf.page);
    let n_recs = ip::n_recs(p);
    if n_recs == 0 {
        return;
    }
    let n = shape(idx, key);
    let page_no = mtr.id(leaf.page).page;
    let frame = inner.bp.frame(mtr.frame(leaf.page));
    let info = frame.ahi_info.load(AtOrd::Relaxed);
    if frame.ahi_index.load(AtOrd::Relaxed) == idx.id && (info >> 16) as usize == n {
        let at = match bound {
            Bound::Lower => Some(leaf.slot),
            Bound::Upper => leaf.slot.checked_sub(1),
        };
        if let Some(s) = at.filter(|&s| {
            s < n_recs && cmp_tuple_rec(&idx.leaf, key, ip::rec(p, s)) == Ordering::Equal
        }) {
            let slot = s as u16;
            let same = inner
                .ahi
                .get(fold)
                .is_some_and(|c| c.tag == tag_of(idx.id) && c.page == page_no && c.slot == slot);
            if !same {
                inner
                    .ahi
                    .insert(&inner.tun, idx.id, page_no, &mut [(fold, slot)]);
            }
        }
        return;
    }
    let helps = (info & 0xFFFF) + 1;
    if (helps as usize) * PAGE_BUILD_LIMIT <= n_recs {
        frame
            .ahi_info
            .store((info & !0xFFFF) | helps.min(0xFFFF), AtOrd::Relaxed);
        return;
    }
    let mut entries = Vec::with_capacity(n_recs);
    let mut last = 0;
    for s in 0..n_recs {
        // Of the records sharing a key prefix, the first on the page.
        if let Some(f) = fold_rec(idx, ip::rec(p, s), n).filter(|&f| f != last) {
            entries.push((f, s as u16));
            last = f;
        }
    }
    frame.ahi_index.store(idx.id, AtOrd::Relaxed);
    frame.ahi_info.store((n as u32) << 16, AtOrd::Relaxed);
    inner.ahi.insert(&inner.tun, idx.id, page_no, &mut entries);
    inner.ahi.stats.pages_added.inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fold of a one-field key `i` of index `index`.
    fn fold_of(index: IndexId, i: u64) -> u64 {
        let mut f = Fold::new(index, 1);
        f.field(Some(&i.to_be_bytes()));
        f.finish()
    }

    fn tun(on: bool) -> Tunables {
        Tunables::new(&crate::config::TunableValues {
            adaptive_hash_index: on,
            ..Default::default()
        })
    }

    #[test]
    fn a_shape_needs_its_votes_and_keeps_them_through_a_few_others() {
        let info = IndexInfo::default();
        for _ in 0..BUILD_LIMIT {
            assert!(!info.vote(1));
        }
        assert!(info.vote(1));
        for _ in 0..200 {
            info.vote(1);
        }
        // 2 x BUILD_LIMIT votes: 25 searches of another shape leave it above the limit.
        for _ in 0..25 {
            assert!(!info.vote(2));
        }
        assert!(info.vote(1));
        // A shape that takes over starts from one vote.
        for _ in 0..60 {
            info.vote(2);
        }
        assert_eq!(info.votes.load(AtOrd::Relaxed) >> 16, 2);
        assert!(!info.vote(2));
    }

    #[test]
    fn failing_guesses_are_tried_one_in_sixteen_until_one_succeeds() {
        let info = IndexInfo::default();
        for _ in 0..FAIL_LIMIT {
            assert!(info.worth_a_guess());
            info.guessed(false);
        }
        let tried = (0..1600).filter(|_| info.worth_a_guess()).count();
        assert!((50..200).contains(&tried), "{tried} of 1600 tried");
        info.guessed(true);
        assert!((0..20).all(|_| info.worth_a_guess()));
    }

    #[test]
    fn entries_are_added_updated_swept_and_cleared_with_counts_that_add_up() {
        let t = tun(true);
        let h = AdaptiveHash::new(4, 1 << 30);
        let mut e: Vec<(u64, u16)> = (1..=10).map(|i| (fold_of(7, i), 0)).collect();
        h.insert(&t, 7, 3, &mut e);
        assert_eq!(h.entries(), 10);
        assert_eq!(h.stats.rows_added.get(), 10);
        // The same entries again change nothing; another page for a key is an update.
        h.insert(&t, 7, 3, &mut e);
        h.insert(&t, 7, 4, &mut [(e[0].0, 2)]);
        assert_eq!(h.get(e[0].0).map(|c| (c.page, c.slot)), Some((4, 2)));
        assert_eq!(
            (h.stats.rows_added.get(), h.stats.rows_updated.get()),
            (10, 1)
        );
        h.insert(&t, 8, 9, &mut [(fold_of(8, 1), 1)]);
        h.drop_indexes(&[7]);
        assert_eq!(h.entries(), 1);
        assert_eq!(
            h.get(fold_of(8, 1)).map(|c| (c.tag, c.page, c.slot)),
            Some((8, 9, 1))
        );
        h.check_counts().unwrap();
        // OFF: cleared, the blocks freed, and nothing is added until ON again.
        h.switch(&t, false);
        assert_eq!(h.entries(), 0);
        assert!(h.part_sizes().iter().all(|p| p.buffers == 0));
        h.insert(&t, 8, 9, &mut e);
        assert_eq!(h.entries(), 0);
        h.switch(&t, true);
        h.insert(&t, 8, 9, &mut [(fold_of(8, 1), 1)]);
        assert_eq!(h.entries(), 1);
        h.check_counts().unwrap();
    }

    #[test]
    fn a_full_table_replaces_entries_and_stays_within_its_cells() {
        let t = tun(true);
        // 64 cells per part (the minimum), 2 parts.
        let h = AdaptiveHash::new(2, 0);
        let mut e: Vec<(u64, u16)> = (1..=500).map(|i| (fold_of(1, i), 0)).collect();
        h.insert(&t, 1, 3, &mut e);
        assert!(h.entries() <= 128, "{}", h.entries());
        assert!(h.stats.rows_removed.get() > 0, "collisions replace entries");
        assert!(h
            .part_sizes()
            .iter()
            .all(|p| p.cells == 64 && p.buffers == 1));
        h.check_counts().unwrap();
    }

    #[test]
    fn folds_tell_fields_apart() {
        let k = |fields: &[Option<&[u8]>]| {
            let mut f = Fold::new(1, fields.len());
            for v in fields {
                f.field(*v);
            }
            f.finish()
        };
        let a = k(&[Some(b"ab"), Some(b"c")]);
        assert_ne!(a, k(&[Some(b"a"), Some(b"bc")]));
        assert_ne!(a, k(&[Some(b"ab"), None]));
        assert_ne!(k(&[Some(b"")]), k(&[None]));
        assert_ne!(k(&[Some(b"12345678x")]), k(&[Some(b"12345678y")]));
        assert_eq!(a, k(&[Some(b"ab"), Some(b"c")]));
        assert_eq!(a & 1, 1);
    }
}
