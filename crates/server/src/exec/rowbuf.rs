//! Rows by position, in memory up to a budget and in tmpdir beyond it (MySQL: a temporary
//! table that goes to disk beyond tmp_table_size). window.rs reads a partition's frame,
//! LAG/LEAD and peer groups through one; INSERT ... SELECT (and CREATE TABLE ... SELECT)
//! gathers the selected rows in one (as a `RowSink`) before the first is inserted.
//!
//! INVARIANTS
//! - B1: while the rows pushed take no more than the budget they are all in memory; the row
//!   that takes them past it moves the buffer to blocks: the rows so far and every later full
//!   block (BLOCK_ROWS rows, or the first row past BLOCK_BYTES) are written to an unlinked
//!   file in tmpdir (docs/format/sort-run.md, "Row buffers"), and memory holds only
//!   the block being filled and at most CACHE decoded blocks.
//! - B2: `get(j)` is the j-th row pushed since `clear`, unchanged however often it is read
//!   (but for what `take_from` moved out, which a block read again from disk has again);
//!   it is there after `load(j)` until the next `load` or `push` (a loaded row stays at least
//!   until the next-but-one `load`: the cache evicts the least recently used block, and holds
//!   at least two, so `load(a); load(b)` leaves both readable).
//! - B3: an I/O error ends the statement with sort.rs's errors (X3); nothing is synced, and the
//!   file goes with `clear` or the buffer.
//!
//! LOCKING: none (one statement's own state).

use std::path::PathBuf;

use innoxide_sql::error::SqlError;
use innoxide_sql::types::Datum;

use super::sort::{datum_bytes, Run, RunFile};
use super::{Column, RowSink};

/// Rows per block on disk, at most.
const BLOCK_ROWS: usize = 1024;
/// Bytes after which a block is closed.
const BLOCK_BYTES: usize = 64 * 1024;
/// Decoded blocks kept in memory (B2 needs two).
const CACHE: usize = 8;

/// A block written to the file: its first position and its run.
struct Block {
    first: usize,
    run: Run,
}

/// A decoded block in memory (its rows from position `first`), and when it was last used.
struct Cached {
    first: usize,
    rows: Vec<Vec<Datum>>,
    used: u64,
}

impl Cached {
    fn holds(&self, j: usize) -> bool {
        j >= self.first && j - self.first < self.rows.len()
    }
}

/// Rows by position (module comment).
pub(crate) struct RowBuf {
    budget: usize,
    tmpdir: PathBuf,
    /// Rows pushed since `clear`.
    len: usize,
    /// In memory: every row. Spilled: the rows from `tail_first` on (the block being filled).
    tail: Vec<Vec<Datum>>,
    tail_bytes: usize,
    tail_first: usize,
    file: Option<RunFile>,
    blocks: Vec<Block>,
    cache: Vec<Cached>,
    /// The cache entry read last (most reads are of the same block as the one before).
    hot: usize,
    tick: u64,
    /// Whether any partition went to disk (Created_tmp_disk_tables).
    spilled: bool,
}

/// The memory a row takes, roughly.
fn row_bytes(r: &[Datum]) -> usize {
    32 + r.iter().map(datum_bytes).sum::<usize>()
}

impl RowBuf {
    /// An empty buffer holding up to `budget` bytes in memory, the rest in `tmpdir`.
    pub(crate) fn new(budget: u64, tmpdir: PathBuf) -> RowBuf {
        RowBuf {
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
            tmpdir,
            len: 0,
            tail: Vec::new(),
            tail_bytes: 0,
            tail_first: 0,
            file: None,
            blocks: Vec::new(),
            cache: Vec::new(),
            hot: 0,
            tick: 0,
            spilled: false,
        }
    }

    /// Empties the buffer for the next partition (its file goes).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.tail.clear();
        self.tail_bytes = 0;
        self.tail_first = 0;
        self.file = None;
        self.blocks.clear();
        self.cache.clear();
        self.hot = 0;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether a partition went to disk since the buffer was made.
    pub(crate) fn spilled(&self) -> bool {
        self.spilled
    }

    /// Adds the next row (B1).
    pub(crate) fn push(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        self.tail_bytes += row_bytes(&row);
        self.tail.push(row);
        self.len += 1;
        if let Some(file) = &mut self.file {
            if self.tail.len() >= BLOCK_ROWS || self.tail_bytes > BLOCK_BYTES {
                let run = file.append(&self.tail)?;
                self.blocks.push(Block {
                    first: self.tail_first,
                    run,
                });
                self.tail.clear();
                self.tail_bytes = 0;
                self.tail_first = self.len;
            }
        } else if self.tail_bytes > self.budget {
            self.spilled = true;
            let mut file = RunFile::create(&self.tmpdir)?;
            let rows = std::mem::take(&mut self.tail);
            let mut first = 0;
            let mut at = 0;
            while at < rows.len() {
                let mut end = at;
                let mut bytes = 0;
                while end < rows.len() && end - at < BLOCK_ROWS && bytes <= BLOCK_BYTES {
                    bytes += row_bytes(&rows[end]);
                    end += 1;
                }
                let run = file.append(&rows[at..end])?;
                self.blocks.push(Block { first, run });
                first += end - at;
                at = end;
            }
            self.file = Some(file);
            self.tail_first = self.len;
            self.tail_bytes = 0;
        }
        Ok(())
    }

    /// Makes row `j` (< len) readable by `get` (B2).
    pub(crate) fn load(&mut self, j: usize) -> Result<(), SqlError> {
        if j >= self.tail_first {
            return Ok(());
        }
        self.tick += 1;
        let hit = match self.cache.get(self.hot) {
            Some(c) if c.holds(j) => Some(self.hot),
            _ => self.cache.iter().position(|c| c.holds(j)),
        };
        if let Some(i) = hit {
            self.cache[i].used = self.tick;
            self.hot = i;
            return Ok(());
        }
        let b = self.blocks.partition_point(|blk| blk.first <= j) - 1;
        let c = Cached {
            first: self.blocks[b].first,
            rows: self.blocks[b].run.read_all()?,
            used: self.tick,
        };
        self.hot = if self.cache.len() < CACHE {
            self.cache.push(c);
            self.cache.len() - 1
        } else {
            let old = (0..self.cache.len())
                .min_by_key(|&i| self.cache[i].used)
                .expect("the cache is full");
            self.cache[old] = c;
            old
        };
        Ok(())
    }

    /// Row `j`, made readable by the last `load(j)` (B2).
    pub(crate) fn get(&self, j: usize) -> &[Datum] {
        if j >= self.tail_first {
            return &self.tail[j - self.tail_first];
        }
        let c = match self.cache.get(self.hot) {
            Some(c) if c.holds(j) => c,
            _ => self
                .cache
                .iter()
                .find(|c| c.holds(j))
                .expect("a row is loaded before it is read"),
        };
        &c.rows[j - c.first]
    }

    /// The rows, if they are all in memory; else the buffer back.
    pub(crate) fn into_rows(self) -> Result<Vec<Vec<Datum>>, Box<RowBuf>> {
        if self.file.is_none() {
            Ok(self.tail)
        } else {
            Err(Box::new(self))
        }
    }

    /// Moves the values of row `j` from position `at` on out of the buffer; the row keeps its
    /// first `at` (what window.rs reads of other rows: the keys and arguments).
    pub(crate) fn take_from(&mut self, j: usize, at: usize) -> Result<Vec<Datum>, SqlError> {
        self.load(j)?;
        let row = if j >= self.tail_first {
            &mut self.tail[j - self.tail_first]
        } else {
            let i = self.hot;
            let c = &mut self.cache[i];
            &mut c.rows[j - c.first]
        };
        Ok(row.split_off(at))
    }

    /// Row `j`: `load` then `get`.
    pub(crate) fn row(&mut self, j: usize) -> Result<&[Datum], SqlError> {
        self.load(j)?;
        Ok(self.get(j))
    }
}

/// The rows of a result, gathered as they are made.
/// A prepared statement's open cursor (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY): the
/// result's columns and rows, gathered when the statement runs (as MySQL's materialized
/// cursor) in a row buffer, and the position COM_STMT_FETCH hands out from.
pub(crate) struct CursorRows {
    pub columns: Vec<Column>,
    pub rows: RowBuf,
    pub next: usize,
}

impl CursorRows {
    pub(crate) fn new(budget: u64, tmpdir: PathBuf) -> CursorRows {
        CursorRows {
            columns: Vec::new(),
            rows: RowBuf::new(budget, tmpdir),
            next: 0,
        }
    }
}

impl RowSink for CursorRows {
    fn begin(&mut self, columns: &[Column]) -> Result<(), SqlError> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        self.rows.push(row.to_vec())
    }

    fn row_owned(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        self.rows.push(row)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl RowSink for RowBuf {
    fn begin(&mut self, _columns: &[Column]) -> Result<(), SqlError> {
        Ok(())
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        self.push(row.to_vec())
    }

    fn row_owned(&mut self, row: Vec<Datum>) -> Result<(), SqlError> {
        self.push(row)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize) -> Vec<Datum> {
        vec![
            Datum::UInt(i as u64),
            Datum::Bytes(format!("row {i} {}", "x".repeat(i % 200)).into_bytes()),
        ]
    }

    /// A buffer past its budget gives back every row, read in order, backwards and at
    /// random, as one within it does; the file is gone after `clear`.
    #[test]
    fn spilled_rows_read_back_at_any_position() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut small = RowBuf::new(16 * 1024, dir.path().into());
        let mut big = RowBuf::new(u64::MAX, dir.path().into());
        let n = 20_000;
        for i in 0..n {
            small.push(row(i)).expect("push");
            big.push(row(i)).expect("push");
        }
        assert!(small.spilled() && !big.spilled());
        assert!(small.blocks.len() > 20, "{} blocks", small.blocks.len());
        assert_eq!((small.len(), big.len()), (n, n));
        for j in (0..n)
            .chain((0..n).rev())
            .chain((0..n).map(|k| k * 7919 % n))
        {
            assert_eq!(small.row(j).expect("row"), row(j).as_slice());
            assert_eq!(big.row(j).expect("row"), row(j).as_slice());
        }
        // B2: two rows loaded one after the other are both readable.
        small.load(3).expect("load");
        small.load(n - 3).expect("load");
        assert_eq!(small.get(3), row(3).as_slice());
        assert_eq!(small.get(n - 3), row(n - 3).as_slice());
        assert!(small.cache.len() <= CACHE);
        // The next partition starts empty, in memory.
        small.clear();
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
        small.push(row(5)).expect("push");
        assert_eq!(small.row(0).expect("row"), row(5).as_slice());
        assert!(small.file.is_none());
    }
}
