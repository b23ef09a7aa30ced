//! External sort: ORDER BY without LIMIT over more rows than sort_buffer_size holds.
//! (MySQL: filesort with merge passes.)
//!
//! Rows come in as (projection, ORDER BY keys) with an arrival number and are kept encoded
//! (docs/format/sort-run.md: a value takes its own bytes and a tag, not a 32-byte `Datum`),
//! with the prefixes of their first keys (X5) beside them. They gather in memory until their
//! size passes sort_buffer_size; then the buffer is sorted and written as it is to a run file
//! in tmpdir, and the buffer starts again. At the end a
//! sort that wrote no run is sorted in memory; otherwise the last buffer becomes a run too,
//! runs are merged FANIN (64) at a time until at most FANIN remain, and those are merged as the
//! rows are read. Memory stays within sort_buffer_size plus a read window per run merged. A
//! merge moves the encoded rows as they are; only the rows read out are decoded.
//!
//! INVARIANTS
//! - X1: the rows come out in the order the in-memory sort gives: the keys compared with
//!   `cmp_nulls_first` in each key's direction and collation, ties by arrival number.
//! - X2: runs go one after another into one file per merge level, unlinked as soon as it is
//!   created: the open handles are the only way to it, so it goes with the statement (or
//!   with the process; a level's file as soon as the next level is written) and nothing
//!   reads it after a crash. No run is ever synced.
//! - X3: an I/O error ends the statement with MySQL's error (1004 creating, 1026 writing, 1024
//!   reading) naming the file; the server goes on. A record read back is checked whole (every
//!   value and key offset) before it joins a merge, so a damaged file is a read error, and
//!   comparisons and decoding of checked rows cannot fail.
//! - X5: each row carries a prefix of its first PREFIXED keys: a u64 per key that never
//!   orders two values against `cmp_nulls_first` (numbers, dates and times, strings by the
//!   first bytes of their collation's sort key), and whether it is the whole value. Rows are
//!   compared by prefix first; equal prefixes go on to the next key only when both are whole,
//!   otherwise the values decide from that key on. A key whose values come in more than one
//!   kind (an integer and a string) stops the prefixes from there: they are made per kind.
//! - X4: a sort given a LIMIT k keeps, in memory and in each run, only the first k of the
//!   rows it holds (a selection whenever the buffer reaches 2k rows): what X1 would put first
//!   is never dropped.
//!
//! LOCKING: none (one statement's own state).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use innoxide_engine::Collation;
use innoxide_io::{File, FileSystem, OsFs};
use innoxide_sql::error::*;
use innoxide_sql::types::{Date, DateTime, Datum, Decimal, Time};

use super::select::cmp_nulls_first;

/// Keys with a prefix (X5).
const PREFIXED: usize = 3;

/// Runs merged at once.
const FANIN: usize = 64;
/// The read window of each run being merged.
const WINDOW: usize = 32 * 1024;
/// Bytes gathered before a run's records are written.
const WRITE_CHUNK: usize = 64 * 1024;

/// One ORDER BY key: its direction and collation, and where its value is: a column of the
/// projection (not stored twice), or the next of the row's own key values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SortKey {
    pub desc: bool,
    pub coll: Collation,
    pub from_proj: Option<usize>,
}

/// One row being sorted: the prefixes of its first keys and which are whole values (bit i:
/// key i) (X5), its arrival number, and its values encoded: `n_proj` (u16), `n_keys` (u16),
/// the offset in `data` of each sort key's value (u32 each), the projection's values, then
/// the row's own key values (docs/format/sort-run.md).
pub(crate) struct SortRow {
    pre: [u64; PREFIXED],
    whole: u8,
    seq: u64,
    data: Box<[u8]>,
}

impl SortRow {
    /// The encoded value of sort key `i`, from its tag on.
    fn key(&self, i: usize) -> &[u8] {
        let at = 4 + 4 * i;
        let off = u32::from_le_bytes(self.data[at..at + 4].try_into().expect("four bytes"));
        &self.data[off as usize..]
    }

    /// The projection's values.
    fn proj(&self) -> Vec<Datum> {
        let n_proj = u16::from_le_bytes([self.data[0], self.data[1]]) as usize;
        let n_keys = u16::from_le_bytes([self.data[2], self.data[3]]) as usize;
        let mut c = Cursor {
            b: &self.data,
            at: 4 + 4 * n_keys,
        };
        let mut out = Vec::with_capacity(n_proj);
        for _ in 0..n_proj {
            c.push_datum(&mut out)
                .expect("a sort row's values were checked (X3)");
        }
        out
    }
}

/// Encodes a row's values (`SortRow::data`), with the offsets of the sort keys' values:
/// `places` says where each is.
/// `values` encoded as a run record's values are: equal values, equal bytes.
pub(crate) fn encode_values(values: &[Datum]) -> Box<[u8]> {
    encode_row(values, &[], &[])
}

fn encode_row(proj: &[Datum], own: &[Datum], places: &[Place]) -> Box<[u8]> {
    let head = 4 + 4 * places.len();
    let mut out = Vec::with_capacity(head + 16 * (proj.len() + own.len()));
    out.extend_from_slice(&(proj.len() as u16).to_le_bytes());
    out.extend_from_slice(&(places.len() as u16).to_le_bytes());
    out.resize(head, 0);
    let set = |out: &mut Vec<u8>, place: Place, off: usize| {
        for (i, p) in places.iter().enumerate() {
            if *p == place {
                out[4 + 4 * i..8 + 4 * i].copy_from_slice(&(off as u32).to_le_bytes());
            }
        }
    };
    for (j, d) in proj.iter().enumerate() {
        let off = out.len();
        encode(d, &mut out);
        set(&mut out, Place::Proj(j), off);
    }
    for (j, d) in own.iter().enumerate() {
        let off = out.len();
        encode(d, &mut out);
        set(&mut out, Place::Own(j), off);
    }
    out.into_boxed_slice()
}

/// Checks a row's encoded values (X3): every value from the header to the end, at least
/// `n_proj` of them, and a whole value at each key offset (so `SortRow::key`, `cmp_encoded`
/// and `SortRow::proj` cannot fail on it). No allocation: this runs for every record a merge
/// reads.
fn check_row(data: &[u8]) -> Option<()> {
    let mut c = Cursor { b: data, at: 0 };
    let n_proj = c.u16()? as usize;
    let n_keys = c.u16()? as usize;
    let head = 4 + 4 * n_keys;
    for i in 0..n_keys {
        let at = 4 + 4 * i;
        let off = u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?) as usize;
        if off < head {
            return None;
        }
        Cursor { b: data, at: off }.skip_value()?;
    }
    c.at = head;
    let mut values = 0;
    while c.at < data.len() {
        c.skip_value()?;
        values += 1;
    }
    (values >= n_proj).then_some(())
}

/// The kind of value a prefix is made from: prefixes of different kinds do not compare.
#[derive(Clone, Copy, PartialEq, Debug)]
enum PreKind {
    /// Signed and unsigned integers (which compare with each other).
    Int,
    Double,
    Date,
    DateTime,
    Time,
    Str,
}

/// A value's prefix (X5): its kind, a u64 in its order, and whether it is the whole value.
/// None for NULL (prefix 0, never whole) and for kinds without one (DECIMAL).
fn prefix(d: &Datum, coll: Collation) -> Option<(PreKind, u64, bool)> {
    const SIGN: u64 = 1 << 63;
    Some(match d {
        Datum::Null | Datum::Decimal(_) => return None,
        Datum::Int(n) => (PreKind::Int, (*n as u64) ^ SIGN, true),
        Datum::UInt(n) if *n < SIGN => (PreKind::Int, n + SIGN, true),
        Datum::UInt(_) => (PreKind::Int, u64::MAX, false),
        Datum::Double(f) => {
            let bits = if *f == 0.0 { 0 } else { f.to_bits() };
            let key = if bits & SIGN != 0 { !bits } else { bits | SIGN };
            (PreKind::Double, key, true)
        }
        Datum::Date(d) => (
            PreKind::Date,
            u64::from(d.year) << 16 | u64::from(d.month) << 8 | u64::from(d.day),
            true,
        ),
        Datum::DateTime(t) => {
            let days = (u64::from(t.date.year) * 13 + u64::from(t.date.month)) * 32
                + u64::from(t.date.day);
            let secs = ((days * 24 + u64::from(t.hour)) * 60 + u64::from(t.minute)) * 60
                + u64::from(t.second);
            (
                PreKind::DateTime,
                secs * 1_000_000 + u64::from(t.micro),
                true,
            )
        }
        Datum::Time(t) => (PreKind::Time, (t.to_micros() as u64) ^ SIGN, true),
        Datum::Bytes(b) => {
            // Seven bytes of the sort key and its length (8: longer than seven).
            let (p, n) = coll.sort_prefix(&innoxide_sql::types::comparable(coll, b));
            let mut key = [0u8; 8];
            key[..7].copy_from_slice(&p[..7]);
            key[7] = n as u8;
            (PreKind::Str, u64::from_be_bytes(key), n < 8)
        }
    })
}

/// Where each sort key's value is, and which keys have prefixes (X5).
#[derive(Clone)]
struct Order {
    /// Each key with its value's place: a column of the projection or a row's own key.
    keys: Vec<(SortKey, Place)>,
    /// Keys with prefixes: the first `prefixed`.
    prefixed: usize,
    kinds: [Option<PreKind>; PREFIXED],
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Proj(usize),
    Own(usize),
}

impl Order {
    fn new(dirs: Vec<SortKey>) -> Order {
        let mut own = 0;
        let keys: Vec<(SortKey, Place)> = dirs
            .into_iter()
            .map(|k| {
                let at = match k.from_proj {
                    Some(j) => Place::Proj(j),
                    None => {
                        own += 1;
                        Place::Own(own - 1)
                    }
                };
                (k, at)
            })
            .collect();
        Order {
            prefixed: keys.len().min(PREFIXED),
            keys,
            kinds: [None; PREFIXED],
        }
    }

    /// Key `i`'s value in `r`.
    fn value<'r>(&self, i: usize, proj: &'r [Datum], own: &'r [Datum]) -> &'r Datum {
        match self.keys[i].1 {
            Place::Proj(j) => &proj[j],
            Place::Own(j) => &own[j],
        }
    }

    /// The prefixes of a row's keys (X5); a kind unlike the key's earlier values stops them.
    fn prefixes(&mut self, proj: &[Datum], own: &[Datum]) -> ([u64; PREFIXED], u8) {
        let mut pre = [0; PREFIXED];
        let mut whole = 0;
        for (i, slot) in pre.iter_mut().enumerate().take(self.prefixed) {
            let Some((kind, p, w)) = prefix(self.value(i, proj, own), self.keys[i].0.coll) else {
                if self.value(i, proj, own).is_null() {
                    continue;
                }
                self.prefixed = i;
                break;
            };
            match self.kinds[i] {
                None => self.kinds[i] = Some(kind),
                Some(k) if k != kind => {
                    self.prefixed = i;
                    break;
                }
                Some(_) => {}
            }
            *slot = p;
            whole |= u8::from(w) << i;
        }
        (pre, whole)
    }

    /// Compares two rows: prefixes, then values from the first key they leave open, then
    /// arrival (X1, X5).
    fn cmp(&self, a: &SortRow, b: &SortRow) -> Ordering {
        let mut from = self.prefixed;
        for i in 0..self.prefixed {
            if a.pre[i] != b.pre[i] {
                let o = a.pre[i].cmp(&b.pre[i]);
                return if self.keys[i].0.desc { o.reverse() } else { o };
            }
            if a.whole & b.whole & (1 << i) == 0 {
                from = i;
                break;
            }
        }
        for i in from..self.keys.len() {
            let k = &self.keys[i].0;
            let o = cmp_encoded(a.key(i), b.key(i), k.coll);
            let o = if k.desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        a.seq.cmp(&b.seq)
    }

    fn places(&self) -> Vec<Place> {
        self.keys.iter().map(|k| k.1).collect()
    }
}

/// Compares two encoded values as `cmp_nulls_first` compares them: strings in place, other
/// kinds decoded.
fn cmp_encoded(x: &[u8], y: &[u8], coll: Collation) -> Ordering {
    match (x[0], y[0]) {
        (0, 0) => Ordering::Equal,
        (0, _) => Ordering::Less,
        (_, 0) => Ordering::Greater,
        (5, 5) => {
            fn bytes(v: &[u8]) -> &[u8] {
                let n = u32::from_le_bytes(v[1..5].try_into().expect("four bytes")) as usize;
                &v[5..5 + n]
            }
            let (a, b) = (bytes(x), bytes(y));
            coll.compare(
                &innoxide_sql::types::comparable(coll, a),
                &innoxide_sql::types::comparable(coll, b),
            )
        }
        _ => {
            let one = |v: &[u8]| {
                let mut out = Vec::with_capacity(1);
                Cursor { b: v, at: 0 }
                    .push_datum(&mut out)
                    .expect("a sort row's values were checked (X3)");
                out.pop().expect("one value")
            };
            cmp_nulls_first(&one(x), &one(y), coll)
        }
    }
}

/// The memory a value takes, roughly (what sort_buffer_size and the temporary-table budget
/// limit).
pub(crate) fn datum_bytes(d: &Datum) -> usize {
    std::mem::size_of::<Datum>()
        + match d {
            Datum::Bytes(b) => b.len(),
            Datum::Decimal(_) => 16,
            _ => 0,
        }
}

/// The memory a row takes, roughly.
fn row_bytes(r: &SortRow) -> usize {
    std::mem::size_of::<SortRow>() + r.data.len()
}

/// Where a statement's sorts may go: sort_buffer_size in memory, tmpdir beyond it, and the
/// counter of merge passes (Sort_merge_passes).
#[derive(Clone)]
pub(crate) struct SortArea {
    pub cap: u64,
    pub tmpdir: PathBuf,
    pub passes: Arc<AtomicU64>,
}

/// A sort in progress (module comment).
pub(crate) struct Sorter {
    order: Order,
    /// Where each key's value is (`encode_row`).
    places: Vec<Place>,
    buf: Vec<SortRow>,
    bytes: usize,
    cap: usize,
    runs: Vec<Run>,
    /// The file the buffer's runs go to, once one was written.
    file: Option<RunFile>,
    tmpdir: PathBuf,
    seq: u64,
    passes: Arc<AtomicU64>,
    /// ORDER BY ... LIMIT: only the first this many rows are wanted (X4).
    limit: Option<usize>,
}

/// A file holding runs one after another (one per merge level, X2), or the blocks of a window
/// row buffer (rowbuf.rs).
pub(crate) struct RunFile {
    file: Arc<dyn File>,
    path: PathBuf,
    /// Where the next run starts.
    end: u64,
}

impl RunFile {
    pub(crate) fn create(tmpdir: &Path) -> Result<RunFile, SqlError> {
        let (file, path) = tmp_file(tmpdir)?;
        Ok(RunFile { file, path, end: 0 })
    }

    /// Appends `rows` as one run of records without keys, each numbered by its position.
    pub(crate) fn append(&mut self, rows: &[Vec<Datum>]) -> Result<Run, SqlError> {
        let mut w = RunWriter::new(self);
        for (seq, r) in rows.iter().enumerate() {
            w.put(&SortRow {
                pre: [0; PREFIXED],
                whole: 0,
                seq: seq as u64,
                data: encode_row(r, &[], &[]),
            })?;
        }
        w.finish()
    }
}

/// A sorted run: `len` bytes of a run file from `start`.
pub(crate) struct Run {
    file: Arc<dyn File>,
    path: PathBuf,
    start: u64,
    len: u64,
}

impl Run {
    /// The rows of a run written by `RunFile::append`, in order.
    pub(crate) fn read_all(&self) -> Result<Vec<Vec<Datum>>, SqlError> {
        let mut r = RunReader {
            run: Run {
                file: self.file.clone(),
                path: self.path.clone(),
                start: self.start,
                len: self.len,
            },
            base: 0,
            window: Vec::new(),
            at: 0,
        };
        let mut rows = Vec::new();
        while let Some(row) = r.next_row()? {
            rows.push(row.proj());
        }
        Ok(rows)
    }
}

/// A new file in `tmpdir`, unlinked at once (X2): the handle is the only way to it.
pub(crate) fn tmp_file(tmpdir: &Path) -> Result<(Arc<dyn File>, PathBuf), SqlError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
    let path = tmpdir.join(format!("innoxide-sort-{}-{n}", std::process::id()));
    let fs = OsFs;
    let file = fs
        .create(&path)
        .map_err(|e| io_error(ER_CANT_CREATE_FILE, &path, &e))?;
    fs.remove(&path)
        .map_err(|e| io_error(ER_CANT_CREATE_FILE, &path, &e))?;
    Ok((file, path))
}

/// MySQL's error `code` for an I/O error on `path`.
pub(crate) fn io_error(code: ErrorCode, path: &Path, e: &std::io::Error) -> SqlError {
    let errno = e.raw_os_error().unwrap_or(5);
    SqlError::new(code, &[&path.display(), &errno, &e])
}

impl Sorter {
    /// A sort by `dirs` within `area`, of which only the first `limit` rows are wanted.
    pub(crate) fn new(dirs: Vec<SortKey>, area: &SortArea, limit: Option<usize>) -> Sorter {
        let order = Order::new(dirs);
        Sorter {
            places: order.places(),
            order,
            buf: Vec::new(),
            bytes: 0,
            cap: usize::try_from(area.cap).unwrap_or(usize::MAX),
            runs: Vec::new(),
            file: None,
            tmpdir: area.tmpdir.clone(),
            seq: 0,
            passes: area.passes.clone(),
            limit,
        }
    }

    /// Adds `row` with `key` as its last value to the sort in `slot` by that key (binary
    /// order), made on first use: the spill of GROUP BY and DISTINCT (group.rs, finish.rs).
    pub(crate) fn push_keyed(
        slot: &mut Option<Sorter>,
        area: &SortArea,
        mut row: Vec<Datum>,
        key: Vec<u8>,
    ) -> Result<(), SqlError> {
        let at = row.len();
        row.push(Datum::Bytes(key));
        let spill = slot.get_or_insert_with(|| {
            let by_key = SortKey {
                desc: false,
                coll: Collation::Binary,
                from_proj: Some(at),
            };
            Sorter::new(vec![by_key], area, None)
        });
        spill.push(row, Vec::new())
    }

    /// Whether rows went to runs in tmpdir.
    pub(crate) fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Adds a row: its projection and the values of its ORDER BY keys not taken from it.
    pub(crate) fn push(&mut self, proj: Vec<Datum>, keys: Vec<Datum>) -> Result<(), SqlError> {
        let seq = self.seq;
        self.seq += 1;
        if self.limit == Some(0) {
            return Ok(());
        }
        let (pre, whole) = self.order.prefixes(&proj, &keys);
        let r = SortRow {
            pre,
            whole,
            seq,
            data: encode_row(&proj, &keys, &self.places),
        };
        self.bytes += row_bytes(&r);
        self.buf.push(r);
        if let Some(k) = self.limit {
            if self.buf.len() >= k.saturating_mul(2).max(1024) || self.bytes > self.cap {
                self.cut(k);
            }
        }
        if self.bytes > self.cap && self.buf.len() > 1 {
            self.spill()?;
        }
        Ok(())
    }

    /// Keeps the first `k` rows of the buffer in order (X4).
    fn cut(&mut self, k: usize) {
        if self.buf.len() > k && k > 0 {
            let order = &self.order;
            self.buf
                .select_nth_unstable_by(k - 1, |a, b| order.cmp(a, b));
            self.buf.truncate(k);
            self.bytes = self.buf.iter().map(row_bytes).sum();
        }
    }

    /// Sorts the buffer and writes it as a run.
    fn spill(&mut self) -> Result<(), SqlError> {
        if let Some(k) = self.limit {
            self.cut(k);
        }
        let mut buf = std::mem::take(&mut self.buf);
        self.bytes = 0;
        buf.sort_unstable_by(|a, b| self.order.cmp(a, b));
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(RunFile::create(&self.tmpdir)?),
        };
        let mut w = RunWriter::new(file);
        for r in &buf {
            w.put(r)?;
        }
        self.runs.push(w.finish()?);
        Ok(())
    }

    /// The rows in order (X1).
    pub(crate) fn finish(mut self) -> Result<Sorted, SqlError> {
        if self.runs.is_empty() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.sort_unstable_by(|a, b| self.order.cmp(a, b));
            return Ok(Sorted {
                rows: SortedRows::Memory(buf.into_iter()),
                left: self.limit.unwrap_or(usize::MAX),
            });
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        // Each level merges its runs FANIN at a time into one new file; the level's file
        // goes when its last run is merged.
        while self.runs.len() > FANIN {
            let mut next = RunFile::create(&self.tmpdir)?;
            let mut merged = Vec::new();
            let mut runs = std::mem::take(&mut self.runs).into_iter();
            loop {
                let group: Vec<Run> = runs.by_ref().take(FANIN).collect();
                if group.is_empty() {
                    break;
                }
                let mut m = Merge::new(self.order.clone(), group)?;
                let mut w = RunWriter::new(&mut next);
                while let Some(r) = m.next_row()? {
                    w.put(&r)?;
                }
                merged.push(w.finish()?);
                self.passes.fetch_add(1, AtomicOrdering::Relaxed);
            }
            self.runs = merged;
        }
        self.file = None;
        self.passes.fetch_add(1, AtomicOrdering::Relaxed);
        let runs = std::mem::take(&mut self.runs);
        Ok(Sorted {
            rows: SortedRows::Merged(Merge::new(self.order.clone(), runs)?),
            left: self.limit.unwrap_or(usize::MAX),
        })
    }
}

/// The sorted rows (projections), up to the sort's LIMIT.
pub(crate) struct Sorted {
    rows: SortedRows,
    left: usize,
}

/// Sorted rows from memory or merged from runs.
enum SortedRows {
    Memory(std::vec::IntoIter<SortRow>),
    Merged(Merge),
}

impl Sorted {
    /// The next row's projection, or None after the last.
    pub(crate) fn next_proj(&mut self) -> Result<Option<Vec<Datum>>, SqlError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        Ok(match &mut self.rows {
            SortedRows::Memory(it) => it.next().map(|r| r.proj()),
            SortedRows::Merged(m) => m.next_row()?.map(|r| r.proj()),
        })
    }
}

/// Writes one run (X2: unlinked at creation).
struct RunWriter<'f> {
    to: &'f mut RunFile,
    start: u64,
    out: Vec<u8>,
}

impl<'f> RunWriter<'f> {
    /// A run appended to `to`.
    fn new(to: &'f mut RunFile) -> RunWriter<'f> {
        RunWriter {
            start: to.end,
            to,
            out: Vec::with_capacity(WRITE_CHUNK),
        }
    }

    fn put(&mut self, r: &SortRow) -> Result<(), SqlError> {
        let n = (8 + 8 * PREFIXED + 1 + r.data.len()) as u32;
        self.out.extend_from_slice(&n.to_le_bytes());
        self.out.extend_from_slice(&r.seq.to_le_bytes());
        for p in &r.pre {
            self.out.extend_from_slice(&p.to_le_bytes());
        }
        self.out.push(r.whole);
        self.out.extend_from_slice(&r.data);
        if self.out.len() >= WRITE_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SqlError> {
        if self.out.is_empty() {
            return Ok(());
        }
        let f = &mut *self.to;
        f.file
            .write_at(&self.out, f.end)
            .map_err(|e| io_error(ER_ERROR_ON_WRITE, &f.path, &e))?;
        f.end += self.out.len() as u64;
        self.out.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<Run, SqlError> {
        self.flush()?;
        Ok(Run {
            file: self.to.file.clone(),
            path: self.to.path.clone(),
            start: self.start,
            len: self.to.end - self.start,
        })
    }
}

fn encode(d: &Datum, out: &mut Vec<u8>) {
    let len_bytes = |out: &mut Vec<u8>, tag: u8, b: &[u8]| {
        out.push(tag);
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    let date = |out: &mut Vec<u8>, d: &Date| {
        out.extend_from_slice(&d.year.to_le_bytes());
        out.push(d.month);
        out.push(d.day);
    };
    match d {
        Datum::Null => out.push(0),
        Datum::Int(n) => {
            out.push(1);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Datum::UInt(n) => {
            out.push(2);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Datum::Double(f) => {
            out.push(3);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Datum::Decimal(x) => len_bytes(out, 4, x.to_string().as_bytes()),
        Datum::Bytes(b) => len_bytes(out, 5, b),
        Datum::Date(d) => {
            out.push(6);
            date(out, d);
        }
        Datum::DateTime(t) => {
            out.push(7);
            date(out, &t.date);
            out.extend_from_slice(&[t.hour, t.minute, t.second]);
            out.extend_from_slice(&t.micro.to_le_bytes());
            out.push(t.fsp);
        }
        Datum::Time(t) => {
            out.push(8);
            out.push(u8::from(t.negative));
            out.extend_from_slice(&t.hours.to_le_bytes());
            out.extend_from_slice(&[t.minute, t.second]);
            out.extend_from_slice(&t.micro.to_le_bytes());
            out.push(t.fsp);
        }
    }
}

/// Reads values from a record's bytes; None if they end early or hold an unknown tag (a
/// run this process wrote: a broken invariant, reported as a read error).
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn date(&mut self) -> Option<Date> {
        Some(Date {
            year: self.u16()?,
            month: self.u8()?,
            day: self.u8()?,
        })
    }
    /// Reads one value onto `out`. Each kind is pushed where it is made: a value returned
    /// through the stack and then copied into the vector stalled on store forwarding (a
    /// 16-byte reload of a tag written as one byte), 10% of a merge in `perf annotate`.
    fn push_datum(&mut self, out: &mut Vec<Datum>) -> Option<()> {
        match self.u8()? {
            0 => out.push(Datum::Null),
            1 => out.push(Datum::Int(self.u64()? as i64)),
            2 => out.push(Datum::UInt(self.u64()?)),
            3 => out.push(Datum::Double(f64::from_bits(self.u64()?))),
            4 => {
                let n = self.u32()? as usize;
                let s = std::str::from_utf8(self.take(n)?).ok()?;
                out.push(Datum::Decimal(Decimal::parse(s).ok()?))
            }
            5 => {
                let n = self.u32()? as usize;
                out.push(Datum::Bytes(self.take(n)?.to_vec()))
            }
            6 => out.push(Datum::Date(self.date()?)),
            7 => {
                let t = DateTime {
                    date: self.date()?,
                    hour: self.u8()?,
                    minute: self.u8()?,
                    second: self.u8()?,
                    micro: self.u32()?,
                    fsp: self.u8()?,
                };
                out.push(Datum::DateTime(t))
            }
            8 => {
                let t = Time {
                    negative: self.u8()? != 0,
                    hours: self.u16()?,
                    minute: self.u8()?,
                    second: self.u8()?,
                    micro: self.u32()?,
                    fsp: self.u8()?,
                };
                out.push(Datum::Time(t))
            }
            _ => return None,
        }
        Some(())
    }
    /// Skips one value (checking it as `push_datum` would read it).
    fn skip_value(&mut self) -> Option<()> {
        let n = match self.u8()? {
            0 => 0,
            1..=3 => 8,
            4 => {
                let n = self.u32()? as usize;
                let text = std::str::from_utf8(self.take(n)?).ok()?;
                Decimal::parse(text).ok()?;
                0
            }
            5 => self.u32()? as usize,
            6 => 4,
            7 => 12,
            8 => 10,
            _ => return None,
        };
        self.take(n).map(|_| ())
    }

    /// A record's row: its header and its values, checked (X3).
    fn row(&mut self) -> Option<SortRow> {
        let seq = self.u64()?;
        let mut pre = [0; PREFIXED];
        for p in &mut pre {
            *p = self.u64()?;
        }
        let whole = self.u8()?;
        let data = &self.b[self.at..];
        check_row(data)?;
        Some(SortRow {
            pre,
            whole,
            seq,
            data: data.into(),
        })
    }
}

/// Reads a run's records through a window.
struct RunReader {
    run: Run,
    /// Offset in the run of `window[0]`.
    base: u64,
    window: Vec<u8>,
    at: usize,
}

impl RunReader {
    fn read_error(&self, what: &str) -> SqlError {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidData, what);
        io_error(ER_ERROR_ON_READ, &self.run.path, &e)
    }

    /// Makes `n` bytes from the current position available; false at the end of the run.
    fn fill(&mut self, n: usize) -> Result<bool, SqlError> {
        if self.window.len() - self.at >= n {
            return Ok(true);
        }
        let pos = self.base + self.at as u64;
        if pos + n as u64 > self.run.len {
            if pos == self.run.len {
                return Ok(false);
            }
            return Err(self.read_error("a record runs past the end of the run"));
        }
        let want = (n.max(WINDOW) as u64).min(self.run.len - pos) as usize;
        self.window.resize(want, 0);
        self.run
            .file
            .read_at(&mut self.window, self.run.start + pos)
            .map_err(|e| io_error(ER_ERROR_ON_READ, &self.run.path, &e))?;
        self.base = pos;
        self.at = 0;
        Ok(true)
    }

    fn next_row(&mut self) -> Result<Option<SortRow>, SqlError> {
        if !self.fill(4)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(
            self.window[self.at..self.at + 4]
                .try_into()
                .expect("four bytes"),
        ) as usize;
        if !self.fill(4 + len)? {
            return Err(self.read_error("a record's length runs past the end of the run"));
        }
        let body = &self.window[self.at + 4..self.at + 4 + len];
        let row = Cursor { b: body, at: 0 }.row();
        self.at += 4 + len;
        row.map(Some)
            .ok_or_else(|| self.read_error("a record does not decode"))
    }
}

/// A merge of sorted runs: a binary heap of the runs by their head rows, smallest on top.
pub(crate) struct Merge {
    order: Order,
    readers: Vec<RunReader>,
    heads: Vec<Option<SortRow>>,
    /// Indexes of the runs that still have a head, as a min-heap by head.
    heap: Vec<usize>,
}

impl Merge {
    fn new(order: Order, runs: Vec<Run>) -> Result<Merge, SqlError> {
        let mut readers: Vec<RunReader> = runs
            .into_iter()
            .map(|run| RunReader {
                run,
                base: 0,
                window: Vec::new(),
                at: 0,
            })
            .collect();
        let mut heads = Vec::with_capacity(readers.len());
        for r in &mut readers {
            heads.push(r.next_row()?);
        }
        let mut m = Merge {
            order,
            readers,
            heads,
            heap: Vec::new(),
        };
        for i in 0..m.heads.len() {
            if m.heads[i].is_some() {
                m.heap.push(i);
                m.sift_up(m.heap.len() - 1);
            }
        }
        Ok(m)
    }

    /// Whether run `a`'s head goes before run `b`'s (both have one).
    fn before(&self, a: usize, b: usize) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => self.order.cmp(x, y) == Ordering::Less,
            _ => unreachable!("runs in the heap have a head"),
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.before(self.heap[i], self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut top = i;
            if l < self.heap.len() && self.before(self.heap[l], self.heap[top]) {
                top = l;
            }
            if r < self.heap.len() && self.before(self.heap[r], self.heap[top]) {
                top = r;
            }
            if top == i {
                return;
            }
            self.heap.swap(i, top);
            i = top;
        }
    }

    fn next_row(&mut self) -> Result<Option<SortRow>, SqlError> {
        let Some(&b) = self.heap.first() else {
            return Ok(None);
        };
        let next = self.readers[b].next_row()?;
        let exhausted = next.is_none();
        let row = std::mem::replace(&mut self.heads[b], next);
        if exhausted {
            let last = self.heap.pop().expect("the heap has the run");
            if !self.heap.is_empty() {
                self.heap[0] = last;
            }
        }
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64) -> (Vec<Datum>, Vec<Datum>) {
        let k = (i * 7919) % 1000;
        let proj = vec![
            Datum::UInt(i),
            Datum::Bytes(format!("row {i}").into_bytes()),
            Datum::Decimal(Decimal::parse(&format!("-{k}.50")).expect("decimal")),
            Datum::DateTime(DateTime {
                date: Date {
                    year: 2026,
                    month: 11,
                    day: 23,
                },
                hour: 1,
                minute: 2,
                second: (i % 60) as u8,
                micro: 5,
                fsp: 6,
            }),
            Datum::Time(Time {
                negative: true,
                hours: 300,
                minute: 1,
                second: 2,
                micro: 3,
                fsp: 2,
            }),
            Datum::Null,
            Datum::Double(i as f64 / 3.0),
            Datum::Int(-(i as i64)),
        ];
        let keys = vec![Datum::Int(k as i64)];
        (proj, keys)
    }

    /// X3: a record whose bytes were damaged (a value's tag, a length past the record, a key
    /// offset past the values) is a read error, never a panic or a wrong row.
    #[test]
    fn a_damaged_record_is_a_read_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = vec![vec![Datum::Int(7), Datum::Bytes(b"seven".to_vec())]];
        let mut file = RunFile::create(dir.path()).expect("create");
        let run = file.append(&rows).expect("append");
        assert_eq!(run.read_all().expect("read"), rows);
        // Record: len (4), seq (8), prefixes (24), whole (1), n_proj (2), n_keys (2), values.
        let values = 4 + 8 + 8 * PREFIXED as u64 + 1 + 4;
        for (at, byte) in [(values, 9u8), (values + 10, 0xFF), (4 + 8 + 24 + 1 + 2, 3)] {
            let mut file = RunFile::create(dir.path()).expect("create");
            let run = file.append(&rows).expect("append");
            run.file.write_at(&[byte], at).expect("damage");
            let e = run.read_all().expect_err("damaged");
            assert_eq!(e.code, ER_ERROR_ON_READ.code, "byte {at}");
        }
    }

    /// Rows ordered through prefixes (X5) come out as the values alone order them: long
    /// strings sharing their first bytes, case and accents under a case-insensitive collation,
    /// NULLs, negative and huge integers mixed with signed ones, -0 and 0, descending keys, and
    /// a key whose values change kind halfway (which stops the prefixes there). (Kinds whose
    /// mixed comparison is not an order, as strings with numbers, have no defined sort.)
    #[test]
    fn prefixes_order_rows_as_the_values_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let words = [
            "prefix-shared-a",
            "Prefix-Shared-B",
            "pr\u{e9}fix",
            "PREFIX",
            "",
            "p",
        ];
        let row = |i: u64| -> Vec<Datum> {
            let s = match i % 7 {
                6 => Datum::Null,
                n => Datum::Bytes(words[n as usize % words.len()].as_bytes().to_vec()),
            };
            let n = match i % 5 {
                0 => Datum::Int(-(i as i64)),
                1 => Datum::UInt(u64::MAX - i),
                2 => Datum::Null,
                3 => Datum::UInt(i),
                _ => Datum::Int(i as i64 % 3),
            };
            let f = Datum::Double(match i % 4 {
                0 => -0.0,
                1 => 0.0,
                2 => -(i as f64) / 7.0,
                _ => (i % 11) as f64,
            });
            // Integers first, doubles from row 1,500 on (which compare with them as numbers).
            let mixed = if i < 1_500 {
                Datum::Int((i % 13) as i64)
            } else {
                Datum::Double((i % 13) as f64 - 0.5)
            };
            vec![s, n, f, mixed, Datum::UInt(i)]
        };
        let key = |j: usize, desc: bool, coll| SortKey {
            desc,
            coll,
            from_proj: Some(j),
        };
        for dirs in [
            vec![
                key(0, false, Collation::Utf8mb40900AiCi),
                key(1, true, Collation::Binary),
                key(2, false, Collation::Binary),
            ],
            vec![
                key(3, false, Collation::Binary),
                key(0, true, Collation::Utf8mb40900AiCi),
                key(2, true, Collation::Binary),
            ],
            vec![
                key(2, true, Collation::Binary),
                key(0, false, Collation::Binary),
                key(1, false, Collation::Binary),
                key(3, false, Collation::Binary),
            ],
        ] {
            let rows: Vec<Vec<Datum>> = (0..3_000).map(row).collect();
            let mut want: Vec<&Vec<Datum>> = rows.iter().collect();
            want.sort_by(|a, b| {
                for k in &dirs {
                    let j = k.from_proj.expect("a projection key");
                    let o = cmp_nulls_first(&a[j], &b[j], k.coll);
                    let o = if k.desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            });
            for cap in [u64::MAX, 16 * 1024] {
                let area = SortArea {
                    cap,
                    tmpdir: dir.path().into(),
                    passes: Arc::new(AtomicU64::new(0)),
                };
                let mut sorter = Sorter::new(dirs.clone(), &area, None);
                for r in &rows {
                    sorter.push(r.clone(), Vec::new()).expect("push");
                }
                assert_eq!(sorter.spilled(), cap != u64::MAX);
                let mut sorted = sorter.finish().expect("sort");
                for w in &want {
                    assert_eq!(sorted.next_proj().expect("row").as_ref(), Some(*w));
                }
                assert_eq!(sorted.next_proj().expect("end"), None);
            }
        }
    }

    /// Small buffers force many runs and several merge passes; the order (keys, then arrival)
    /// and every value come back exactly as an in-memory sort gives them.
    #[test]
    fn spilled_sort_matches_the_in_memory_sort() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = |desc, from_proj| SortKey {
            desc,
            coll: Collation::Utf8mb40900AiCi,
            from_proj,
        };
        // The first key is a column of the projection, the second the row's own value, the
        // third the projection's string (never reached: the arrival number decides ties).
        let dirs = vec![key(true, None), key(false, Some(6)), key(false, Some(1))];
        let n = 20_000u64;
        let area = |cap| SortArea {
            cap,
            tmpdir: dir.path().into(),
            passes: Arc::new(AtomicU64::new(0)),
        };
        let small_area = area(32 * 1024);
        let mut small = Sorter::new(dirs.clone(), &small_area, None);
        let mut big = Sorter::new(dirs.clone(), &area(u64::MAX), None);
        // X4: the first 5,000 rows in order, from a sort that keeps no more than it must, in
        // memory and in runs.
        let mut top = Sorter::new(dirs.clone(), &area(32 * 1024), Some(5_000));
        let mut top_mem = Sorter::new(dirs.clone(), &area(u64::MAX), Some(5_000));
        // 50 rows fit in 32 KiB: never a run.
        let mut top_small = Sorter::new(dirs, &area(32 * 1024), Some(50));
        for i in 0..n {
            let (p, k) = sample(i);
            small.push(p.clone(), k.clone()).expect("push");
            top.push(p.clone(), k.clone()).expect("push");
            top_mem.push(p.clone(), k.clone()).expect("push");
            top_small.push(p.clone(), k.clone()).expect("push");
            big.push(p, k).expect("push");
        }
        assert!(small.runs.len() > FANIN, "{} runs", small.runs.len());
        assert!(top.spilled());
        assert!(top_mem.buf.len() <= 10_000 && !top_mem.spilled());
        assert!(!top_small.spilled());
        let (mut a, mut b) = (small.finish().expect("merge"), big.finish().expect("sort"));
        let (mut t, mut tm) = (
            top.finish().expect("merge"),
            top_mem.finish().expect("sort"),
        );
        let mut ts = top_small.finish().expect("sort");
        assert!(small_area.passes.load(AtomicOrdering::Relaxed) >= 2);
        let mut count = 0;
        while let Some(x) = a.next_proj().expect("row") {
            if count < 5_000 {
                assert_eq!(Some(&x), t.next_proj().expect("row").as_ref());
                assert_eq!(Some(&x), tm.next_proj().expect("row").as_ref());
            }
            if count < 50 {
                assert_eq!(Some(&x), ts.next_proj().expect("row").as_ref());
            }
            assert_eq!(Some(x), b.next_proj().expect("row"));
            count += 1;
        }
        assert_eq!(b.next_proj().expect("end"), None);
        assert_eq!(t.next_proj().expect("end"), None);
        assert_eq!(tm.next_proj().expect("end"), None);
        assert_eq!(ts.next_proj().expect("end"), None);
        assert_eq!(count, n);
        drop((t, tm, ts));
        // X2: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }
}
