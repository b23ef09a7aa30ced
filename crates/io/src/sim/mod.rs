//! [`SimFs`]: a simulated disk for crash, torn-write and fault-injection tests.
//!
//! # Model
//!
//! Every file object has an internal id (so unlinked-but-open files keep working), a `live`
//! image (what reads see), a `durable` image (what survives a crash) and the ordered list of
//! operations pending since its last `sync_data`: writes and length changes (`set_len`, and
//! `allocate` when it grows the file). `sync_data` copies live to durable and clears the list.
//!
//! A handle opened with `dsync` (O_DSYNC) writes to live and durable at once and still records
//! the write in the pending list, marked synced: a crash image always replays it, in its
//! place, after the pending operations older than it (which may touch the same bytes).
//! `direct` changes nothing here: the simulated disk has no page cache to bypass, so an
//! O_DIRECT handle without `dsync` is as volatile as a buffered one until `sync_data`.
//!
//! The namespace is two maps, path -> file id: the live one (changed at once by create,
//! remove and rename) and the durable one. Each namespace change is recorded as one pending
//! directory operation made of entry effects ("path now names id", "path names nothing");
//! a rename is one operation with two effects, applied atomically. `sync_dir(d)` makes the
//! durable entries whose parent is `d` agree with the live ones and strips the effects on
//! those entries from the pending operations (a cross-directory rename therefore becomes
//! durable half by half, each half with the `sync_dir` of its directory).
//!
//! # Crashes
//!
//! [`SimFs::set_crash_at_sync`] arms a crash at the k-th sync point (`sync_data` and
//! `sync_dir` calls and writes through `dsync` handles all count, from construction, 1-based).
//! That sync does not take effect: a `dsync` write crashed on stays pending (in flight, so a
//! crash image may drop, keep or tear it) and fails; the file
//! system is then crashed and every later call fails (I5 of the crate). [`SimFs::crash_image`]
//! builds a fresh `SimFs` holding what a power loss at this moment could leave; see
//! [`CrashMode`] for the choices.
//!
//! # Simplifications (documented, deliberate)
//!
//! - Directories are durable at once: `create_dir_all` and `remove_dir` need no `sync_dir`.
//!   `remove_dir` also makes the (already live) absence of its entries durable, since no
//!   crash image may hold a file in a directory that no longer exists.
//! - Directories cannot be renamed (`Unsupported`); the engine only renames files.
//! - Paths are used as given (compared by components, as `Path` does); `/` and the empty
//!   path (the parent of a relative single-component path) always exist as directories.
//! - Latency faults ([`FaultKind::Latency`]) make `read_at`, `write_at` and `sync_data` wait
//!   before they run, with the lock released; they change timing only.
//! - Faults: only the operations named by [`FaultOp`] can fault; metadata queries (`len`,
//!   `exists`, `is_dir`, `read_dir`, `create_dir_all`, `remove_dir`) never do. A handle
//!   matches `path_contains` by the path it was opened or created with; a rename matches
//!   by either of its paths. A `ShortWrite` fault only ever matches writes.
//! - Quota counts the live length of every file that has a name or an open handle.
//! - Files are held in memory; one file may not exceed 16 GiB (`EFBIG`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::{File, FileSystem, OpenFlags};

mod crash;
mod fault;
#[cfg(test)]
mod tests;

pub use crash::CrashMode;
pub use fault::{Fault, FaultKind, FaultOp};

use fault::{fault_error, ArmedFault};

type FileId = u64;

/// Largest simulated file; larger sizes fail with EFBIG instead of exhausting memory.
const MAX_FILE_LEN: u64 = 1 << 34;

/// The error payload of every call on a crashed [`SimFs`].
#[derive(Debug)]
struct SimulatedCrash;

impl fmt::Display for SimulatedCrash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("simulated crash")
    }
}

impl std::error::Error for SimulatedCrash {}

fn crash_error() -> io::Error {
    io::Error::other(SimulatedCrash)
}

/// Whether `e` is the error a crashed [`SimFs`] returns ("simulated crash").
pub fn is_simulated_crash(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<SimulatedCrash>())
}

/// Counters of a [`SimFs`]; only calls that succeeded are counted, except `faults_fired`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Successful `read_at` calls.
    pub reads: u64,
    /// Bytes returned by successful reads.
    pub bytes_read: u64,
    /// Writes that changed data: successful `write_at` calls and short-write prefixes.
    pub writes: u64,
    /// Bytes written by those writes.
    pub bytes_written: u64,
    /// Successful `sync_data` calls.
    pub syncs: u64,
    /// Successful writes through `dsync` handles (each one a sync point; also in `writes`).
    pub durable_writes: u64,
    /// Successful `sync_dir` calls.
    pub dir_syncs: u64,
    /// Injected faults that fired.
    pub faults_fired: u64,
}

/// An operation on a file since its last `sync_data`. Offsets and lengths were checked
/// against [`MAX_FILE_LEN`] when recorded.
#[derive(Clone, Debug)]
enum PendingOp {
    /// `synced`: written through a `dsync` handle and completed, so already durable; a crash
    /// image replays it whatever it does with the others.
    Write {
        offset: usize,
        data: Vec<u8>,
        synced: bool,
    },
    SetLen {
        len: usize,
    },
}

#[derive(Debug)]
struct FileObj {
    live: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<PendingOp>,
    /// Number of live names of this file (0 once unlinked).
    live_links: usize,
    /// Number of open `SimFile` handles.
    handles: usize,
}

impl FileObj {
    fn with_content(content: Vec<u8>) -> Self {
        FileObj {
            durable: content.clone(),
            live: content,
            pending: Vec::new(),
            live_links: 0,
            handles: 0,
        }
    }
}

impl FileObj {
    /// Makes durable equal live. Copies only what the pending operations may have changed
    /// (by I2 live and durable agree everywhere else; the surgery helpers change both
    /// alike), so a sync costs the bytes written since the last one, not the file size.
    fn sync(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let live_len = self.live.len();
        let mut ranges = Vec::with_capacity(self.pending.len() + 1);
        ranges.push((self.durable.len(), live_len));
        for op in &self.pending {
            match op {
                PendingOp::Write { offset, data, .. } => {
                    ranges.push((*offset, offset + data.len()));
                }
                // Bytes from a truncation point on may have been re-extended as zeros.
                PendingOp::SetLen { len } => ranges.push((*len, live_len)),
            }
        }
        self.durable.resize(live_len, 0);
        for (lo, hi) in ranges {
            let hi = hi.min(live_len);
            if lo < hi {
                self.durable[lo..hi].copy_from_slice(&self.live[lo..hi]);
            }
        }
        self.pending.clear();
    }
}

/// "After this operation, `path` names `target` (or nothing)".
#[derive(Clone, Debug)]
struct DirEffect {
    path: PathBuf,
    target: Option<FileId>,
}

/// One namespace change not yet made durable everywhere; its effects apply atomically.
#[derive(Clone, Debug)]
struct DirOp {
    effects: Vec<DirEffect>,
}

#[derive(Debug)]
struct State {
    seed: u64,
    files: BTreeMap<FileId, FileObj>,
    next_id: FileId,
    live_ns: BTreeMap<PathBuf, FileId>,
    durable_ns: BTreeMap<PathBuf, FileId>,
    dirs: BTreeSet<PathBuf>,
    pending_dir_ops: Vec<DirOp>,
    sync_count: u64,
    crash_at_sync: Option<u64>,
    crashed: bool,
    faults: Vec<ArmedFault>,
    quota: Option<u64>,
    stats: SimStats,
}

fn os_err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

/// Converts a file offset or length, refusing sizes the simulation does not hold.
fn to_index(v: u64) -> io::Result<usize> {
    if v > MAX_FILE_LEN {
        return Err(os_err(libc::EFBIG));
    }
    usize::try_from(v).map_err(|_| os_err(libc::EFBIG))
}

fn len_u64(v: &[u8]) -> u64 {
    v.len() as u64
}

/// Writes `data` at `offset` into `buf`, zero-filling any gap past its end.
fn put_bytes(buf: &mut Vec<u8>, offset: usize, data: &[u8]) {
    let end = offset + data.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[offset..end].copy_from_slice(data);
}

impl State {
    fn new(seed: u64) -> Self {
        let mut dirs = BTreeSet::new();
        dirs.insert(PathBuf::from("/"));
        dirs.insert(PathBuf::new());
        State {
            seed,
            files: BTreeMap::new(),
            next_id: 1,
            live_ns: BTreeMap::new(),
            durable_ns: BTreeMap::new(),
            dirs,
            pending_dir_ops: Vec::new(),
            sync_count: 0,
            crash_at_sync: None,
            crashed: false,
            faults: Vec::new(),
            quota: None,
            stats: SimStats::default(),
        }
    }

    fn alive(&self) -> io::Result<()> {
        if self.crashed {
            Err(crash_error())
        } else {
            Ok(())
        }
    }

    /// Counts a sync point; crashes instead if this is the armed one.
    fn begin_sync(&mut self) -> io::Result<()> {
        self.alive()?;
        self.sync_count += 1;
        if self.crash_at_sync.is_some_and(|k| self.sync_count >= k) {
            self.crashed = true;
            return Err(crash_error());
        }
        Ok(())
    }

    /// Counts the call against every matching error fault; returns the kind of the first (in
    /// injection order) that fires. One-shot faults that fired are disarmed.
    fn fault(&mut self, op: FaultOp, paths: &[&Path]) -> Option<FaultKind> {
        self.fire(op, paths, false)
    }

    /// The same for latency faults: the delay the call must wait, if one fires.
    fn latency(&mut self, op: FaultOp, paths: &[&Path]) -> Option<std::time::Duration> {
        match self.fire(op, paths, true)? {
            FaultKind::Latency(d) => Some(d),
            _ => None,
        }
    }

    /// `fault` (`latency` false) or `latency`: each counts only the faults of its sort, so
    /// latency faults leave the error faults' counts alone.
    fn fire(&mut self, op: FaultOp, paths: &[&Path], latency: bool) -> Option<FaultKind> {
        let mut fired: Option<(usize, FaultKind)> = None;
        for (i, armed) in self.faults.iter_mut().enumerate() {
            if armed.fault.kind.is_latency() != latency || !armed.fault.matches(op, paths) {
                continue;
            }
            armed.seen += 1;
            if fired.is_none() && armed.seen >= armed.fault.nth.max(1) {
                fired = Some((i, armed.fault.kind));
            }
        }
        let (i, kind) = fired?;
        if !self.faults[i].fault.persistent {
            self.faults.remove(i);
        }
        self.stats.faults_fired += 1;
        Some(kind)
    }

    fn fail_on_fault(&mut self, op: FaultOp, paths: &[&Path]) -> io::Result<()> {
        match self.fault(op, paths) {
            Some(kind) => Err(fault_error(kind)),
            None => Ok(()),
        }
    }

    fn file(&self, id: FileId) -> &FileObj {
        match self.files.get(&id) {
            Some(f) => f,
            None => panic!("SimFs: file id {id} referenced but not held"),
        }
    }

    fn file_mut(&mut self, id: FileId) -> &mut FileObj {
        match self.files.get_mut(&id) {
            Some(f) => f,
            None => panic!("SimFs: file id {id} referenced but not held"),
        }
    }

    /// Bytes held by files that still exist for the live system (named or open).
    fn used_bytes(&self) -> u64 {
        self.files
            .values()
            .filter(|f| f.live_links > 0 || f.handles > 0)
            .map(|f| len_u64(&f.live))
            .sum()
    }

    /// Checks that file `id` may grow to `new_len` (size limit and quota).
    fn check_growth(&self, id: FileId, new_len: u64) -> io::Result<()> {
        to_index(new_len)?;
        let cur = len_u64(&self.file(id).live);
        if new_len > cur {
            if let Some(quota) = self.quota {
                if self.used_bytes() + (new_len - cur) > quota {
                    return Err(os_err(libc::ENOSPC));
                }
            }
        }
        Ok(())
    }

    /// A write; with `synced` (a completed `dsync` write) it is durable at once too.
    fn write(&mut self, id: FileId, buf: &[u8], offset: u64, synced: bool) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset
            .checked_add(len_u64(buf))
            .ok_or_else(|| os_err(libc::EFBIG))?;
        self.check_growth(id, end)?;
        let offset = to_index(offset)?;
        let f = self.file_mut(id);
        put_bytes(&mut f.live, offset, buf);
        if synced {
            put_bytes(&mut f.durable, offset, buf);
        }
        f.pending.push(PendingOp::Write {
            offset,
            data: buf.to_vec(),
            synced,
        });
        self.stats.writes += 1;
        self.stats.bytes_written += len_u64(buf);
        if synced {
            self.stats.durable_writes += 1;
        }
        Ok(())
    }

    /// A write through a `dsync` handle: a sync point. If the crash is armed for it, the write
    /// is left in flight (pending, unsynced) and the file system crashes.
    fn write_dsync(&mut self, id: FileId, buf: &[u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.begin_sync() {
            if self.crashed {
                // The write was under way when the power went: whatever it reached survives
                // only as the crash image chooses.
                let _ = self.write(id, buf, offset, false);
            }
            return Err(e);
        }
        self.write(id, buf, offset, true)
    }

    fn resize(&mut self, id: FileId, len: u64) -> io::Result<()> {
        self.check_growth(id, len)?;
        let len = to_index(len)?;
        let f = self.file_mut(id);
        if f.live.len() != len {
            f.live.resize(len, 0);
            f.pending.push(PendingOp::SetLen { len });
        }
        Ok(())
    }

    /// The file named `path`, or the error a real fs gives for a non-file there.
    fn lookup_file(&self, path: &Path) -> io::Result<FileId> {
        if self.dirs.contains(path) {
            return Err(os_err(libc::EISDIR));
        }
        self.live_ns
            .get(path)
            .copied()
            .ok_or_else(|| os_err(libc::ENOENT))
    }

    /// Checks that `path` has a parent and that it is an existing directory.
    fn check_parent(&self, path: &Path) -> io::Result<()> {
        let parent = match (path.parent(), path.file_name()) {
            (Some(p), Some(_)) => p,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "path has no file name",
                ))
            }
        };
        if self.dirs.contains(parent) {
            Ok(())
        } else if self.live_ns.contains_key(parent) {
            Err(os_err(libc::ENOTDIR))
        } else {
            Err(os_err(libc::ENOENT))
        }
    }

    fn check_dir(&self, path: &Path) -> io::Result<()> {
        if self.dirs.contains(path) {
            Ok(())
        } else if self.live_ns.contains_key(path) {
            Err(os_err(libc::ENOTDIR))
        } else {
            Err(os_err(libc::ENOENT))
        }
    }

    fn link(&mut self, path: &Path, id: FileId) {
        self.live_ns.insert(path.to_path_buf(), id);
        self.file_mut(id).live_links += 1;
    }

    fn unlink(&mut self, path: &Path) -> Option<FileId> {
        let id = self.live_ns.remove(path)?;
        self.file_mut(id).live_links -= 1;
        Some(id)
    }

    fn record_dir_op(&mut self, effects: Vec<DirEffect>) {
        self.pending_dir_ops.push(DirOp { effects });
    }

    /// Drops file `id` once nothing can reach it any more: no live name, no handle, no
    /// durable name, no pending directory effect (a crash image could still resurrect it).
    fn maybe_free(&mut self, id: FileId) {
        let Some(f) = self.files.get(&id) else { return };
        if f.live_links > 0 || f.handles > 0 {
            return;
        }
        if self.durable_ns.values().any(|&d| d == id) {
            return;
        }
        let pending = self
            .pending_dir_ops
            .iter()
            .flat_map(|op| op.effects.iter())
            .any(|e| e.target == Some(id));
        if !pending {
            self.files.remove(&id);
        }
    }

    /// Makes the durable entries directly inside `dir` agree with the live ones (I3).
    fn sync_entries(&mut self, dir: &Path) {
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        let paths: Vec<PathBuf> = self
            .live_ns
            .keys()
            .chain(self.durable_ns.keys())
            .filter(|p| in_dir(p))
            .cloned()
            .collect();
        let mut touched = Vec::new();
        for p in paths {
            let old = match self.live_ns.get(&p) {
                Some(&id) => self.durable_ns.insert(p, id),
                None => self.durable_ns.remove(&p),
            };
            touched.extend(old);
        }
        for op in &mut self.pending_dir_ops {
            op.effects.retain(|e| {
                if in_dir(&e.path) {
                    touched.extend(e.target);
                    false
                } else {
                    true
                }
            });
        }
        self.pending_dir_ops.retain(|op| !op.effects.is_empty());
        for id in touched {
            self.maybe_free(id);
        }
    }

    fn new_handle(
        &mut self,
        shared: &Arc<Mutex<State>>,
        id: FileId,
        path: &Path,
        flags: OpenFlags,
    ) -> SimFile {
        self.file_mut(id).handles += 1;
        SimFile {
            shared: Arc::clone(shared),
            id,
            path: path.to_path_buf(),
            flags,
        }
    }
}

/// A simulated disk; see the module documentation for the model.
pub struct SimFs {
    shared: Arc<Mutex<State>>,
}

impl fmt::Debug for SimFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.lock();
        f.debug_struct("SimFs")
            .field("seed", &st.seed)
            .field("files", &st.live_ns.len())
            .field("sync_count", &st.sync_count)
            .field("crashed", &st.crashed)
            .finish()
    }
}

impl SimFs {
    /// An empty simulated disk (only `/` exists). `seed` seeds crash images taken with the
    /// non-random modes; random modes carry their own seed.
    pub fn new(seed: u64) -> Self {
        Self::from_state(State::new(seed))
    }

    fn from_state(state: State) -> Self {
        SimFs {
            shared: Arc::new(Mutex::new(state)),
        }
    }

    /// The seed this file system was built with.
    pub fn seed(&self) -> u64 {
        self.shared.lock().seed
    }

    /// Arms a crash at the k-th sync point (`sync_data`, `sync_dir` or a write through a
    /// `dsync` handle, 1-based, counted since construction). If k is not beyond
    /// [`SimFs::sync_count`], the next sync point crashes.
    pub fn set_crash_at_sync(&self, k: u64) {
        self.shared.lock().crash_at_sync = Some(k);
    }

    /// Crashes now: every later call fails.
    pub fn crash_now(&self) {
        self.shared.lock().crashed = true;
    }

    /// Whether the file system has crashed.
    pub fn is_crashed(&self) -> bool {
        self.shared.lock().crashed
    }

    /// Number of sync points (`sync_data` and `sync_dir` calls, writes through `dsync`
    /// handles) so far, including failed ones and the one that crashed.
    pub fn sync_count(&self) -> u64 {
        self.shared.lock().sync_count
    }

    /// What a power loss at this moment could leave on disk, as a new, uncrashed `SimFs`
    /// with fresh counters and no faults or quota. Works whether or not this one crashed.
    pub fn crash_image(&self, mode: CrashMode) -> SimFs {
        let st = self.shared.lock();
        Self::from_state(crash::build_image(&st, mode))
    }

    /// Injects a fault; it counts matching calls from now on.
    pub fn inject(&self, fault: Fault) {
        self.shared
            .lock()
            .faults
            .push(ArmedFault { fault, seen: 0 });
    }

    /// Removes every injected fault.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Limits the total live size of all files; growth past it fails with ENOSPC.
    pub fn set_quota(&self, quota: Option<u64>) {
        self.shared.lock().quota = quota;
    }

    /// Total live size of all files that have a name or an open handle (what the quota
    /// limits).
    pub fn used_bytes(&self) -> u64 {
        self.shared.lock().used_bytes()
    }

    /// The counters so far.
    pub fn stats(&self) -> SimStats {
        self.shared.lock().stats
    }

    /// Live content of the file named `path`.
    pub fn file_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let st = self.shared.lock();
        let id = st.live_ns.get(path.as_ref())?;
        Some(st.file(*id).live.clone())
    }

    /// Durable content of the file named `path` in the live namespace, or, failing that, in
    /// the durable namespace. The name itself need not be durable.
    pub fn durable_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let st = self.shared.lock();
        let path = path.as_ref();
        let id = st.live_ns.get(path).or_else(|| st.durable_ns.get(path))?;
        Some(st.file(*id).durable.clone())
    }

    /// Test surgery: overwrites `bytes` at `offset` in both the live and the durable content
    /// of the file named `path` (zero-filling past the end), bypassing faults, quota,
    /// counters and the pending list. Pending operations stay and still replay on top of
    /// durable in random crash images.
    ///
    /// # Panics
    /// If no file is named `path` (live, else durable namespace) or the range is absurd.
    pub fn corrupt(&self, path: impl AsRef<Path>, offset: u64, bytes: &[u8]) {
        let mut st = self.shared.lock();
        let id = surgery_target(&st, path.as_ref());
        let offset = match to_index(offset) {
            Ok(o) => o,
            Err(_) => panic!("SimFs::corrupt: offset {offset} beyond the simulated size limit"),
        };
        let f = st.file_mut(id);
        put_bytes(&mut f.live, offset, bytes);
        put_bytes(&mut f.durable, offset, bytes);
    }

    /// Test surgery: sets the length of both the durable and the live content of the file
    /// named `path` to `len` (zero-filling if longer), like [`SimFs::corrupt`].
    ///
    /// # Panics
    /// If no file is named `path` (live, else durable namespace) or `len` is absurd.
    pub fn truncate_durable(&self, path: impl AsRef<Path>, len: u64) {
        let mut st = self.shared.lock();
        let id = surgery_target(&st, path.as_ref());
        let len = match to_index(len) {
            Ok(l) => l,
            Err(_) => panic!("SimFs::truncate_durable: length {len} beyond the size limit"),
        };
        let f = st.file_mut(id);
        f.durable.resize(len, 0);
        f.live.resize(len, 0);
    }

    /// Paths of all files in the live namespace, sorted.
    pub fn list_files(&self) -> Vec<PathBuf> {
        self.shared.lock().live_ns.keys().cloned().collect()
    }

    /// Paths of all files in the durable namespace, sorted.
    pub fn list_durable_files(&self) -> Vec<PathBuf> {
        self.shared.lock().durable_ns.keys().cloned().collect()
    }
}

fn surgery_target(st: &State, path: &Path) -> FileId {
    match st.live_ns.get(path).or_else(|| st.durable_ns.get(path)) {
        Some(&id) => id,
        None => panic!("SimFs surgery: no file named {}", path.display()),
    }
}

impl FileSystem for SimFs {
    fn open_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Open, &[path])?;
        let id = st.lookup_file(path)?;
        Ok(Arc::new(st.new_handle(&self.shared, id, path, flags)))
    }

    fn create_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Create, &[path])?;
        if st.live_ns.contains_key(path) || st.dirs.contains(path) {
            return Err(os_err(libc::EEXIST));
        }
        st.check_parent(path)?;
        let id = st.next_id;
        st.next_id += 1;
        st.files.insert(id, FileObj::with_content(Vec::new()));
        st.link(path, id);
        st.record_dir_op(vec![DirEffect {
            path: path.to_path_buf(),
            target: Some(id),
        }]);
        Ok(Arc::new(st.new_handle(&self.shared, id, path, flags)))
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let st = self.shared.lock();
        st.alive()?;
        Ok(st.live_ns.contains_key(path) || st.dirs.contains(path))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Remove, &[path])?;
        st.lookup_file(path)?;
        if let Some(id) = st.unlink(path) {
            st.record_dir_op(vec![DirEffect {
                path: path.to_path_buf(),
                target: None,
            }]);
            st.maybe_free(id);
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Rename, &[from, to])?;
        if st.dirs.contains(from) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "SimFs cannot rename directories",
            ));
        }
        let id = st.lookup_file(from)?;
        if st.dirs.contains(to) {
            return Err(os_err(libc::EISDIR));
        }
        st.check_parent(to)?;
        if from == to {
            return Ok(());
        }
        st.unlink(from);
        let replaced = st.unlink(to);
        st.link(to, id);
        st.record_dir_op(vec![
            DirEffect {
                path: to.to_path_buf(),
                target: Some(id),
            },
            DirEffect {
                path: from.to_path_buf(),
                target: None,
            },
        ]);
        if let Some(old) = replaced {
            st.maybe_free(old);
        }
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        let mut missing = Vec::new();
        for anc in path.ancestors() {
            if st.dirs.contains(anc) {
                break;
            }
            if st.live_ns.contains_key(anc) {
                return Err(os_err(if anc == path {
                    libc::EEXIST
                } else {
                    libc::ENOTDIR
                }));
            }
            missing.push(anc.to_path_buf());
        }
        st.dirs.extend(missing);
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.check_dir(path)?;
        if path.parent().is_none() {
            return Err(os_err(libc::EBUSY));
        }
        let has_child = st
            .dirs
            .iter()
            .chain(st.live_ns.keys())
            .any(|p| p.parent() == Some(path));
        if has_child {
            return Err(os_err(libc::ENOTEMPTY));
        }
        st.dirs.remove(path);
        st.sync_entries(path);
        Ok(())
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let st = self.shared.lock();
        st.alive()?;
        st.check_dir(path)?;
        let mut out: Vec<PathBuf> = st
            .dirs
            .iter()
            .chain(st.live_ns.keys())
            .filter(|p| p.parent() == Some(path))
            .filter_map(|p| p.file_name().map(|name| path.join(name)))
            .collect();
        out.sort();
        Ok(out)
    }

    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        let st = self.shared.lock();
        st.alive()?;
        Ok(st.dirs.contains(path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.begin_sync()?;
        st.fail_on_fault(FaultOp::SyncDir, &[path])?;
        st.check_dir(path)?;
        st.sync_entries(path);
        st.stats.dir_syncs += 1;
        Ok(())
    }
}

/// An open handle of a [`SimFs`] file; keeps the file object alive after unlink.
struct SimFile {
    shared: Arc<Mutex<State>>,
    id: FileId,
    /// The path the handle was opened by; used only to match `Fault::path_contains`.
    path: PathBuf,
    /// As opened: the simulated disk never refuses O_DIRECT.
    flags: OpenFlags,
}

impl SimFile {
    /// Waits out a latency fault on `op`, with the lock released.
    fn delay(&self, op: FaultOp) {
        let d = self.shared.lock().latency(op, &[&self.path]);
        if let Some(d) = d {
            std::thread::sleep(d);
        }
    }
}

impl File for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.delay(FaultOp::Read);
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Read, &[&self.path])?;
        if buf.is_empty() {
            return Ok(());
        }
        let live = &st.file(self.id).live;
        let end = offset.checked_add(len_u64(buf));
        if end.is_none_or(|e| e > len_u64(live)) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "failed to fill whole buffer",
            ));
        }
        // Both bounds are within `live`, so they fit in usize.
        let start = offset as usize;
        buf.copy_from_slice(&live[start..start + buf.len()]);
        st.stats.reads += 1;
        st.stats.bytes_read += len_u64(buf);
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.delay(FaultOp::Write);
        let mut st = self.shared.lock();
        st.alive()?;
        match st.fault(FaultOp::Write, &[&self.path]) {
            None if self.flags.dsync => st.write_dsync(self.id, buf, offset),
            None => st.write(self.id, buf, offset, false),
            Some(FaultKind::ShortWrite) => {
                let prefix = buf.len() / 2 / crate::SECTOR_SIZE * crate::SECTOR_SIZE;
                // The prefix obeys the quota like any write; if even it does not fit, nothing
                // is written, which is still a valid short write. It is not durable: the
                // write failed, so not even a `dsync` handle vouches for it.
                let _ = st.write(self.id, &buf[..prefix], offset, false);
                Err(fault_error(FaultKind::ShortWrite))
            }
            Some(kind) => Err(fault_error(kind)),
        }
    }

    fn sync_data(&self) -> io::Result<()> {
        self.delay(FaultOp::Sync);
        let mut st = self.shared.lock();
        st.begin_sync()?;
        st.fail_on_fault(FaultOp::Sync, &[&self.path])?;
        st.file_mut(self.id).sync();
        st.stats.syncs += 1;
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let st = self.shared.lock();
        st.alive()?;
        Ok(len_u64(&st.file(self.id).live))
    }

    fn allocate(&self, len: u64) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::Allocate, &[&self.path])?;
        if len > len_u64(&st.file(self.id).live) {
            st.resize(self.id, len)?;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.shared.lock();
        st.alive()?;
        st.fail_on_fault(FaultOp::SetLen, &[&self.path])?;
        st.resize(self.id, len)
    }

    fn flags(&self) -> OpenFlags {
        self.flags
    }
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.file_mut(self.id).handles -= 1;
        st.maybe_free(self.id);
    }
}
