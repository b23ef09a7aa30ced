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
            prev = Some(key);
        }
        if let Some(f) = first.take() {
            flush(&mut block, f, &mut at)?;
        }
        Ok(DiskKeys {
            file,
            path,
            index,
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

impl DiskKeys {
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
