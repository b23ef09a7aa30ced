//! Byte keys, each with a value, more than tmp_table_size holds: sorted, kept in tmpdir in
//! blocks, with the first key of each block in memory. An uncorrelated `x [NOT] IN (SELECT
//! ...)` whose result goes past the temporary-table budget is searched through one (distinct
//! keys, each with the value it was made of), and so is a hash join's index of held rows
//! (hashjoin.rs: each key with the numbers of its rows). MySQL puts such a result in a
//! temporary table with an index, on disk beyond tmp_table_size.
//!
//! INVARIANTS
//! - K1: the file holds the entries in key order (a key's entries in the order they were
//!   pushed; only the first of each key in a distinct set) (docs/format/sort-run.md, "Key
//!   sets"), in blocks of about BLOCK bytes; `index[i]` holds block i's first key and place.
//!   A key's entries start in the last block whose first key is below it, or the one after,
//!   and follow one another from there.
//! - K2: building takes the sort's memory (sort_buffer_size, its runs in tmpdir) plus one
//!   block; the file is unlinked when created (sort.rs X2) and goes with the set.
//! - K3: a read error is the sort's read error (1024) naming the file; a block read back is
//!   walked with its lengths checked, so a damaged file is an error, never a panic.
//!
//! - K4: a set that grows while it is probed (`GrowingKeys`: a recursive CTE's UNION
//!   DISTINCT) keeps its newest keys in memory up to its budget, then writes them as one
//!   more sorted run (a `DiskKeys`); a key is in it if memory or a run holds it, so memory
//!   stays within the budget whatever the number of keys. At MAX_RUNS runs they are merged
//!   into one, so a probe reads at most MAX_RUNS blocks; each run has a Bloom filter (10
//!   bits a key in memory) that spares the reads for most keys it does not hold.
//!
//! LOCKING: the block read last is kept behind a mutex (one statement probes the set).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use innoxide_engine::Collation;
use innoxide_io::File;
use innoxide_sql::error::*;
use innoxide_sql::types::Datum;

use super::sort::{io_error, tmp_file, SortArea, SortKey, Sorter};

/// Bytes after which a block is closed.
const BLOCK: usize = 16 * 1024;

/// A block: its first key, where it starts in the file and its length.
struct BlockRef {
    first: Vec<u8>,
    at: u64,
    len: u32,
}

/// Sorted keys and their values on disk (module comment).
pub(crate) struct DiskKeys {
    file: Arc<dyn File>,
    path: PathBuf,
    index: Vec<BlockRef>,
    /// Entries held.
    entries: usize,
    /// The block read last.
    last: Mutex<Option<Loaded>>,
}

impl std::fmt::Debug for DiskKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DiskKeys({} blocks)", self.index.len())
    }
}

/// Builds a key set: (key, value) pairs pushed in any order, then `finish`.
pub(crate) struct KeySetBuilder {
    sorter: Sorter,
    tmpdir: PathBuf,
    /// Keep only the first entry of each key.
    distinct: bool,
}

impl KeySetBuilder {
    pub(crate) fn new(area: &SortArea, distinct: bool) -> KeySetBuilder {
        let by_key = SortKey {
            desc: false,
            coll: Collation::Binary,
            from_proj: Some(0),
        };
        KeySetBuilder {
            sorter: Sorter::new(vec![by_key], area, None),
            tmpdir: area.tmpdir.clone(),
            distinct,
        }
    }

    /// Adds `key`, made of `value` (kept for the comparisons a key cannot answer).
    pub(crate) fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<(), SqlError> {
        self.sorter
            .push(vec![Datum::Bytes(key), Datum::Bytes(value)], Vec::new())
    }

    /// The set, written to tmpdir block by block as the sort hands the keys out (K1, K2).
    pub(crate) fn finish(self) -> Result<DiskKeys, SqlError> {
        let mut sorted = self.sorter.finish()?;
        let (file, path) = tmp_file(&self.tmpdir)?;
        let mut index = Vec::new();
        let mut block: Vec<u8> = Vec::with_capacity(BLOCK + 256);
        // The first key of the block being filled, and where it will start.
        let mut first: Option<Vec<u8>> = None;
        let mut at = 0u64;
        let mut flush = |block: &mut Vec<u8>, first: Vec<u8>, at: &mut u64| {
            file.write_at(block, *at)
                .map_err(|e| io_error(ER_ERROR_ON_WRITE, &path, &e))?;
            index.push(BlockRef {
                first,
                at: *at,
                len: block.len() as u32,
            });
            *at += block.len() as u64;
            block.clear();
            Ok::<(), SqlError>(())
        };
        let mut prev: Option<Vec<u8>> = None;
        let mut entries = 0;
        while let Some(row) = sorted.next_proj()? {
            let mut it = row.into_iter();
            let (Some(Datum::Bytes(key)), Some(Datum::Bytes(value))) = (it.next(), it.next())
            else {
                continue;
            };
            if self.distinct && prev.as_ref() == Some(&key) {
                continue;
            }
            if block.len() >= BLOCK {
                if let Some(f) = first.take() {
                    flush(&mut block, f, &mut at)?;
                }
            }
            if first.is_none() {
                first = Some(key.clone());
            }
            put(&mut block, &key);
            put(&mut block, &value);
            entries += 1;
            prev = Some(key);
        }
        if let Some(f) = first.take() {
            flush(&mut block, f, &mut at)?;
        }
        Ok(DiskKeys {
            file,
            path,
            index,
            entries,
            last: Mutex::new(None),
        })
    }
}

fn put(block: &mut Vec<u8>, bytes: &[u8]) {
    block.extend((bytes.len() as u32).to_le_bytes());
    block.extend(bytes);
}

/// A block read back: its bytes and where each entry's key and value are in them.
struct Loaded {
    no: usize,
    bytes: Vec<u8>,
    /// Per entry: (key start, key end, value end); the value starts 4 bytes after the key.
    at: Vec<(u32, u32, u32)>,
}

impl Loaded {
    /// Walks block `no`'s entries (K3: None where the lengths do not fit).
    fn parse(no: usize, bytes: Vec<u8>) -> Option<Loaded> {
        let mut at = Vec::new();
        let mut p = 0usize;
        let len = |p: usize| -> Option<usize> {
            Some(u32::from_le_bytes(bytes.get(p..p + 4)?.try_into().ok()?) as usize)
        };
        while p < bytes.len() {
            let k = p + 4;
            let k_end = k.checked_add(len(p)?)?;
            let v_end = (k_end + 4).checked_add(len(k_end)?)?;
            if v_end > bytes.len() {
                return None;
            }
            at.push((k as u32, k_end as u32, v_end as u32));
            p = v_end;
        }
        Some(Loaded { no, bytes, at })
    }

    /// The first entry whose key is not below `key` (the entries' count if none).
    fn first_not_below(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.at.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn key(&self, e: usize) -> &[u8] {
        let (k, k_end, _) = self.at[e];
        &self.bytes[k as usize..k_end as usize]
    }

    fn value(&self, e: usize) -> &[u8] {
        let (_, k_end, v_end) = self.at[e];
        &self.bytes[k_end as usize + 4..v_end as usize]
    }
}

/// Runs a `GrowingKeys` holds before it merges them into one (K4).
const MAX_RUNS: usize = 4;

/// A key set that grows while it is probed (K4).
pub(crate) struct GrowingKeys {
    mem: std::collections::HashSet<Vec<u8>>,
    mem_bytes: u64,
    budget: u64,
    area: SortArea,
    runs: Vec<(Bloom, DiskKeys)>,
}

/// A Bloom filter over byte keys: 10 bits a key, 7 probes (about 1% false positives).
struct Bloom {
    bits: Vec<u64>,
}

impl Bloom {
    fn new(keys: usize) -> Bloom {
        Bloom {
            bits: vec![0; (keys * 10).div_ceil(64).max(1)],
        }
    }

    /// The 7 bit positions of `key`.
    fn positions(&self, key: &[u8]) -> impl Iterator<Item = usize> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        let h1 = h.finish();
        let h2 = h1.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
        let m = (self.bits.len() * 64) as u64;
        (0..7u64).map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) % m) as usize)
    }

    fn add(&mut self, key: &[u8]) {
        let ps: Vec<usize> = self.positions(key).collect();
        for p in ps {
            self.bits[p / 64] |= 1 << (p % 64);
        }
    }

    fn may_hold(&self, key: &[u8]) -> bool {
        self.positions(key)
            .all(|p| self.bits[p / 64] & (1 << (p % 64)) != 0)
    }
}

impl GrowingKeys {
    /// An empty set keeping up to about `budget` bytes of keys in memory; its runs are
    /// sorted in `area`.
    pub(crate) fn new(area: SortArea, budget: u64) -> GrowingKeys {
        GrowingKeys {
            mem: Default::default(),
            mem_bytes: 0,
            budget,
            area,
            runs: Vec::new(),
        }
    }

    /// Adds `key`: false if the set held it already.
    pub(crate) fn insert(&mut self, key: Vec<u8>) -> Result<bool, SqlError> {
        if self.mem.contains(&key) {
            return Ok(false);
        }
        for (bloom, r) in &self.runs {
            if bloom.may_hold(&key) && r.contains(&key)? {
                return Ok(false);
            }
        }
        // The key's bytes and the hash table's own per entry.
        self.mem_bytes += key.len() as u64 + 48;
        self.mem.insert(key);
        if self.mem_bytes > self.budget {
            let mut b = KeySetBuilder::new(&self.area, true);
            let mut n = self.mem.len();
            let merged = if self.runs.len() + 1 >= MAX_RUNS {
                let runs = std::mem::take(&mut self.runs);
                n += runs.iter().map(|(_, r)| r.len()).sum::<usize>();
                runs
            } else {
                Vec::new()
            };
            let mut bloom = Bloom::new(n);
            for k in self.mem.drain() {
                bloom.add(&k);
                b.push(k, Vec::new())?;
            }
            for (_, r) in merged {
                r.each_key(|k| {
                    bloom.add(k);
                    b.push(k.to_vec(), Vec::new())
                })?;
            }
            self.runs.push((bloom, b.finish()?));
            self.mem_bytes = 0;
        }
        Ok(true)
    }
}

impl DiskKeys {
    /// The number of entries (keys, in a distinct set).
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// Whether `key` is in the set (K1).
    pub(crate) fn contains(&self, key: &[u8]) -> Result<bool, SqlError> {
        self.find(key, |_| false)
    }

    /// Hands `each` the values of `key`'s entries in order, until it returns false; whether
    /// the key has any (K1).
    pub(crate) fn find(
        &self,
        key: &[u8],
        mut each: impl FnMut(&[u8]) -> bool,
    ) -> Result<bool, SqlError> {
        let below = self.index.partition_point(|b| b.first.as_slice() < key);
        let mut found = false;
        for i in below.saturating_sub(1)..self.index.len() {
            // Past the key (or the caller has enough): no later block holds its entries.
            let more = self.with_block(i, |b| {
                for e in b.first_not_below(key)..b.at.len() {
                    if b.key(e) != key {
                        return false;
                    }
                    found = true;
                    if !each(b.value(e)) {
                        return false;
                    }
                }
                true
            })?;
            if !more {
                break;
            }
        }
        Ok(found)
    }

    /// Whether `test` holds for the value of some key, every block read in turn (for what a
    /// key cannot answer: a value of another kind than the set's).
    pub(crate) fn any_value(&self, mut test: impl FnMut(&[u8]) -> bool) -> Result<bool, SqlError> {
        for i in 0..self.index.len() {
            if self.with_block(i, |b| (0..b.at.len()).any(|e| test(b.value(e))))? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Runs `f` on block `i`, read from the file unless it was the last one read.
    /// Hands `f` every key, in order (K1), until it fails.
    fn each_key(&self, mut f: impl FnMut(&[u8]) -> Result<(), SqlError>) -> Result<(), SqlError> {
        for i in 0..self.index.len() {
            self.with_block(i, |b| (0..b.at.len()).try_for_each(|e| f(b.key(e))))??;
        }
        Ok(())
    }

    fn with_block<T>(&self, i: usize, f: impl FnOnce(&Loaded) -> T) -> Result<T, SqlError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = last.as_ref().filter(|b| b.no == i) {
            return Ok(f(b));
        }
        let b = &self.index[i];
        let mut buf = vec![0u8; b.len as usize];
        self.file
            .read_at(&mut buf, b.at)
            .map_err(|e| io_error(ER_ERROR_ON_READ, &self.path, &e))?;
        let loaded = Loaded::parse(i, buf).ok_or_else(|| self.damaged())?;
        Ok(f(last.insert(loaded)))
    }

    /// The error for a block whose bytes do not hold what was written (K3).
    pub(crate) fn damaged(&self) -> SqlError {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidData, "damaged key block");
        io_error(ER_ERROR_ON_READ, &self.path, &e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn area(cap: u64) -> SortArea {
        SortArea {
            cap,
            tmpdir: std::env::temp_dir(),
            passes: Arc::new(AtomicU64::new(0)),
        }
    }

    #[test]
    fn a_growing_set_answers_as_a_hash_set_within_its_budget() {
        // 2 KiB of keys in memory: 30,000 distinct keys make many runs.
        let mut set = GrowingKeys::new(area(16 * 1024), 2048);
        let mut model = std::collections::HashSet::new();
        for i in 0..60_000u32 {
            let k = ((i * 7919) % 30_000).to_be_bytes().to_vec();
            assert_eq!(set.insert(k.clone()).unwrap(), model.insert(k), "key {i}");
            assert!(set.mem_bytes <= 2048 + 52);
        }
        assert!(set.runs.len() < MAX_RUNS, "{} runs", set.runs.len());
        assert!(!set.insert(17u32.to_be_bytes().to_vec()).unwrap());
        assert!(set.insert(30_001u32.to_be_bytes().to_vec()).unwrap());
    }

    #[test]
    fn keys_past_the_sort_memory_are_found_and_others_not() {
        // 40,000 keys in a 64 KiB sort: runs merged, then many blocks.
        let mut b = KeySetBuilder::new(&area(64 * 1024), true);
        for i in (0..40_000u32).rev() {
            let k = (i * 2).to_be_bytes().to_vec();
            b.push(k.clone(), format!("v{i}").into_bytes()).unwrap();
            if i % 3 == 0 {
                b.push(k, Vec::new()).unwrap();
            }
        }
        let set = b.finish().unwrap();
        assert!(set.index.len() > 10, "{set:?}");
        for i in [
            0u32,
            1,
            2,
            79_998,
            79_999,
            80_000,
            40_001,
            40_002,
            12_345 * 2,
        ] {
            assert_eq!(
                set.contains(&i.to_be_bytes()).unwrap(),
                i % 2 == 0 && i < 80_000,
                "{i}"
            );
        }
        assert!(!set.contains(&[]).unwrap());
        assert!(set.any_value(|v| v == b"v39999").unwrap());
        assert!(!set.any_value(|v| v == b"v40000").unwrap());
    }

    #[test]
    fn a_key_gives_all_its_values_in_order_across_blocks() {
        // 600 rows under each of 30 keys: a key's entries span blocks.
        let mut b = KeySetBuilder::new(&area(32 * 1024), false);
        for row in 0..18_000u32 {
            let key = format!("k{:02}", row % 30).into_bytes();
            b.push(key, row.to_le_bytes().to_vec()).unwrap();
        }
        let set = b.finish().unwrap();
        assert!(set.index.len() > 10, "{set:?}");
        for k in [0u32, 7, 29] {
            let mut rows = Vec::new();
            let any = set
                .find(format!("k{k:02}").as_bytes(), |v| {
                    rows.push(u32::from_le_bytes(v.try_into().unwrap()));
                    true
                })
                .unwrap();
            assert!(any);
            let want: Vec<u32> = (0..600).map(|i| i * 30 + k).collect();
            assert_eq!(rows, want, "key {k}");
        }
        assert!(!set.find(b"k30", |_| true).unwrap());
        assert!(!set.find(b"a", |_| true).unwrap());
        // Stopping early.
        let mut seen = 0;
        assert!(set
            .find(b"k05", |_| {
                seen += 1;
                seen < 3
            })
            .unwrap());
        assert_eq!(seen, 3);
    }

    #[test]
    fn an_empty_set_holds_nothing() {
        let set = KeySetBuilder::new(&area(1 << 20), true).finish().unwrap();
        assert!(!set.contains(b"a").unwrap());
        assert!(!set.any_value(|_| true).unwrap());
    }

    #[test]
    fn a_damaged_block_is_an_error() {
        assert!(Loaded::parse(0, vec![5, 0, 0, 0, 1]).is_none());
        assert!(Loaded::parse(0, vec![1, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff]).is_none());
        let ok = Loaded::parse(0, vec![1, 0, 0, 0, 7, 0, 0, 0, 0]).unwrap();
        assert_eq!((ok.key(0), ok.value(0)), (&[7u8][..], &[][..]));
    }
}
