//! Tablespace files: space id -> file, page reads and writes, growth, sync, and the cache of
//! open file handles. (InnoDB: fil0fil.) All I/O goes through `innoxide_io::FileSystem`.
//!
//! OVERVIEW
//! Every tablespace the engine knows is a `Space` in `spaces`, whether its file is open or
//! not. A space's handle lives in its `slot`: every I/O holds the slot's read latch for its
//! duration; a miss (the slot is empty) takes the write latch, makes room and opens the file
//! with innodb_flush_method's data flags (O_DIRECT, O_DIRECT|O_DSYNC, or buffered).
//! At most innodb_open_files files are open, counting ibdata1 (pinned: never closed) and the
//! redo log files (always open, as InnoDB counts them). Room is made by CLOCK, an
//! approximation of least recently used kept off the I/O path: each I/O sets its space's
//! `referenced` bit; on a miss the hand goes round the open spaces clearing bits and closes
//! the first idle one whose bit was already clear, putting the new space in its place. A hit
//! costs a map lookup (read latch), the slot's read latch and one relaxed load: no mutex.
//!
//! INVARIANTS
//! - I1 (fail-stop): after any failed write or sync, every later write or sync returns
//!   `Error::PreviousIo` until the engine is reopened. A failed *growth* (ENOSPC while
//!   preallocating) is not a write failure: nothing was written, the caller gets TableFull.
//! - I2: a page beyond the end of its file reads as zeros (allocated by FSP_SIZE but not yet
//!   written, e.g. after a crash before the file was extended).
//! - I3: a tablespace file is created, preallocated, given a valid page 0 naming its space, and
//!   synced, and its directory synced, before any redo record refers to it.
//! - I4: a handle is closed only under its slot's write latch (no I/O on it is in progress),
//!   and only once every write made through it is durable: `dirty` clear, or cleared by a
//!   successful sync first. A failed sync is fatal (I1) and leaves the file open, since on
//!   Linux a descriptor opened later would not see the error.
//! - I5: `dirty` is set only by a write through a handle without O_DSYNC, under the slot's
//!   read latch; so a dirty space's slot holds a handle (or the space was dropped).
//! - I6: fixed files + `cache.open.len()` <= innodb_open_files, except when every open
//!   tablespace file is in use (then the miss opens its file anyway, with one warning, as
//!   InnoDB does, rather than wait) or the fixed files alone exceed the limit.
//! - I7: a size change (create, growth) is followed by `sync_data` whatever the flags: O_DSYNC
//!   covers the data written, not the preallocated extents (O_DIRECT_NO_FSYNC syncs only these).
//!
//! LATCHING: `spaces` RwLock (read on every I/O, write on create/drop): a leaf. A slot's write
//! latch -> `rel_path` read (held across an open, so RENAME, which holds it for writing across
//! the rename, cannot move the file meanwhile) and -> the `cache` mutex -> other slots' write
//! latches by `try_write` only (never waiting while the mutex is held). An evicted file is
//! synced (when dirty) and closed with the mutex held: misses wait for it, hits do not. A
//! space's `grow` mutex serialises its growth and is taken before its slot. Nothing here is
//! held while waiting for a page latch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::latch::{Mutex, RwLock};
use innoxide_io::{File, FileSystem, OpenFlags};

use crate::error::{Error, Result};
use crate::types::{PageId, PageNo, SpaceId, SYSTEM_SPACE};

pub struct Space {
    pub id: SpaceId,
    /// Path relative to the data directory (`ibdata1`, `db/t.ibd`); changed only by
    /// `Fil::rename_file` (RENAME TABLE), under the DDL mutex.
    rel_path: RwLock<PathBuf>,
    /// The open file, or None while the cache has it closed. Read-latched for every I/O,
    /// write-latched to open or close it (I4).
    slot: RwLock<Option<Arc<dyn File>>>,
    /// Set by each I/O, cleared by the CLOCK hand.
    referenced: AtomicBool,
    /// Whole pages the file holds.
    file_pages: AtomicU32,
    /// Written since the last sync (I5).
    dirty: AtomicBool,
    pub dropped: AtomicBool,
    grow: Mutex<()>,
}

impl Space {
    /// A pinned space (ibdata1: outside the cache, never closed) comes with its file; any
    /// other starts closed.
    fn new(id: SpaceId, rel_path: &Path, pinned: Option<Arc<dyn File>>, pages: u32) -> Self {
        Space {
            id,
            rel_path: RwLock::new(rel_path.to_path_buf()),
            slot: RwLock::new(pinned),
            referenced: AtomicBool::new(true),
            file_pages: AtomicU32::new(pages),
            dirty: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            grow: Mutex::new(()),
        }
    }

    /// Path relative to the data directory.
    pub fn rel_path(&self) -> PathBuf {
        self.rel_path.read().clone()
    }
    pub fn file_pages(&self) -> u32 {
        self.file_pages.load(Ordering::Acquire)
    }
    /// `db/table` for error messages.
    pub fn name(&self) -> String {
        let p = self.rel_path();
        let s = p.to_string_lossy();
        s.strip_suffix(".ibd").unwrap_or(&s).to_string()
    }
}

#[derive(Default)]
pub struct FilStats {
    /// Innodb_data_reads / Innodb_data_read
    pub reads: AtomicU64,
    pub bytes_read: AtomicU64,
    /// Innodb_data_writes / Innodb_data_written
    pub writes: AtomicU64,
    pub bytes_written: AtomicU64,
    /// Innodb_data_fsyncs
    pub fsyncs: AtomicU64,
    /// Tablespace files opened again after the cache closed them (the monitor's FILE I/O).
    pub reopens: AtomicU64,
    /// Tablespace files the cache closed to stay within innodb_open_files.
    pub closes: AtomicU64,
}

/// The open tablespace files the cache may close, in CLOCK order.
struct HandleCache {
    open: Vec<Arc<Space>>,
    hand: usize,
}

pub struct Fil {
    fs: Arc<dyn FileSystem>,
    datadir: PathBuf,
    page_size: usize,
    /// innodb_flush_method's flags for tablespace files.
    flags: OpenFlags,
    /// innodb_open_files.
    open_files: usize,
    spaces: RwLock<HashMap<SpaceId, Arc<Space>>>,
    cache: Mutex<HandleCache>,
    /// Files always open: pinned spaces and the redo log files.
    fixed: AtomicUsize,
    /// Warned once that innodb_open_files is exceeded / that O_DIRECT was refused.
    warned_limit: AtomicBool,
    warned_direct: AtomicBool,
    failed: Arc<AtomicBool>,
    pub stats: FilStats,
}

impl Fil {
    pub fn new(
        fs: Arc<dyn FileSystem>,
        datadir: PathBuf,
        page_size: usize,
        flags: OpenFlags,
        open_files: usize,
        failed: Arc<AtomicBool>,
    ) -> Self {
        Fil {
            fs,
            datadir,
            page_size,
            flags,
            open_files,
            spaces: RwLock::new(HashMap::new()),
            cache: Mutex::new(HandleCache {
                open: Vec::new(),
                hand: 0,
            }),
            fixed: AtomicUsize::new(0),
            warned_limit: AtomicBool::new(false),
            warned_direct: AtomicBool::new(false),
            failed,
            stats: FilStats::default(),
        }
    }

    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.fs
    }
    pub fn datadir(&self) -> &Path {
        &self.datadir
    }
    pub fn page_size(&self) -> usize {
        self.page_size
    }
    pub fn abs(&self, rel: &Path) -> PathBuf {
        self.datadir.join(rel)
    }

    /// Counts the redo log files among the files always open (InnoDB counts them in
    /// Innodb_num_open_files and against innodb_open_files).
    pub fn add_log_files(&self, n: usize) {
        let fixed = self.fixed.fetch_add(n, Ordering::AcqRel) + n;
        if fixed >= self.open_files {
            tracing::warn!(
                "InnoDB: innodb_open_files={} is not greater than the number of files always \
                 open ({fixed}: ibdata1 and the redo log files); each tablespace file will be \
                 closed after use",
                self.open_files
            );
        }
    }

    /// Files open now: ibdata1, the redo log files and the cached tablespace files
    /// (Innodb_num_open_files).
    pub fn open_files(&self) -> usize {
        self.fixed.load(Ordering::Acquire) + self.cache.lock().open.len()
    }

    /// innodb_open_files.
    pub fn open_files_limit(&self) -> usize {
        self.open_files
    }

    /// True once a write or sync has failed (fail-stop).
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Records an I/O failure; writes and syncs make the engine fail-stop.
    pub fn io_error(&self, path: &Path, e: std::io::Error, fatal: bool) -> Error {
        if fatal && !self.failed.swap(true, Ordering::AcqRel) {
            tracing::error!(
                "InnoDB: write or fsync of {} failed: {e}; refusing further writes until restart",
                path.display()
            );
        }
        Error::Io {
            path: path.display().to_string(),
            source: e,
        }
    }

    fn check_writable(&self) -> Result<()> {
        if self.has_failed() {
            Err(Error::PreviousIo)
        } else {
            Ok(())
        }
    }

    /// Warns once when the file system refused O_DIRECT (InnoDB goes on buffered too).
    fn note_flags(&self, file: &dyn File, path: &Path) {
        if self.flags.direct
            && !file.flags().direct
            && !self.warned_direct.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "InnoDB: Failed to set O_DIRECT on file {}: the file system refused it (tmpfs \
                 before Linux 6.6 does); continuing with buffered I/O for this and later files",
                path.display()
            );
        }
    }

    /// Creates `rel_path` with `pages` preallocated pages, syncs it and its directory (I3). The
    /// system tablespace stays open for good (pinned); the others join the cache.
    pub fn create_space(&self, id: SpaceId, rel_path: &Path, pages: u32) -> Result<Arc<Space>> {
        self.check_writable()?;
        let path = self.abs(rel_path);
        let parent = path.parent().unwrap_or(&self.datadir).to_path_buf();
        let file = self
            .fs
            .create_with(&path, self.flags)
            .map_err(|e| self.io_error(&path, e, false))?;
        self.note_flags(file.as_ref(), &path);
        let len = u64::from(pages) * self.page_size as u64;
        if let Err(e) = file.allocate(len) {
            let _ = self.fs.remove(&path);
            if innoxide_io::is_enospc(&e) {
                return Err(Error::TableFull(rel_path.display().to_string()));
            }
            return Err(self.io_error(&path, e, false));
        }
        // Page 0 identifies the file's space before any redo refers to it (recovery maps files
        // to spaces with it); the first mini-transaction rebuilds it through redo.
        let mut p0 = vec![0u8; self.page_size];
        crate::page::init(&mut p0, PageId::new(id, 0), crate::page::PageType::FspHdr);
        crate::mach::write_u32(&mut p0, crate::tablespace::fsp::FSP_SPACE_ID, id);
        let flags = crate::tablespace::fsp::flags_for(self.page_size);
        crate::mach::write_u32(&mut p0, crate::tablespace::fsp::FSP_FLAGS, flags);
        crate::page::stamp(&mut p0);
        file.write_at(&p0, 0)
            .map_err(|e| self.io_error(&path, e, true))?;
        // I7: the preallocation needs the sync even when the write was O_DSYNC.
        file.sync_data()
            .map_err(|e| self.io_error(&path, e, true))?;
        self.fs
            .sync_dir(&parent)
            .map_err(|e| self.io_error(&parent, e, true))?;
        self.stats.fsyncs.fetch_add(2, Ordering::Relaxed);
        let sp = self.install(id, rel_path, file, pages)?;
        self.spaces.write().insert(id, sp.clone());
        Ok(sp)
    }

    /// A space holding the open `file`: pinned for the system tablespace, else admitted to
    /// the cache.
    fn install(
        &self,
        id: SpaceId,
        rel_path: &Path,
        file: Arc<dyn File>,
        pages: u32,
    ) -> Result<Arc<Space>> {
        if id == SYSTEM_SPACE {
            self.fixed.fetch_add(1, Ordering::AcqRel);
            return Ok(Arc::new(Space::new(id, rel_path, Some(file), pages)));
        }
        let sp = Arc::new(Space::new(id, rel_path, None, pages));
        let mut slot = sp.slot.write();
        self.admit(&sp)?;
        *slot = Some(file);
        drop(slot);
        Ok(sp)
    }

    /// Opens an existing tablespace file.
    pub fn open_space(&self, id: SpaceId, rel_path: &Path) -> Result<Arc<Space>> {
        if let Some(s) = self.get(id) {
            return Ok(s);
        }
        let path = self.abs(rel_path);
        let file = self
            .fs
            .open_with(&path, self.flags)
            .map_err(|e| self.io_error(&path, e, false))?;
        self.note_flags(file.as_ref(), &path);
        let len = file.len().map_err(|e| self.io_error(&path, e, false))?;
        let pages = (len / self.page_size as u64) as u32;
        let sp = self.install(id, rel_path, file, pages)?;
        let mut spaces = self.spaces.write();
        if let Some(s) = spaces.get(&id) {
            // Opened meanwhile by another thread: ours goes.
            let s = s.clone();
            drop(spaces);
            self.forget(&sp);
            return Ok(s);
        }
        spaces.insert(id, sp.clone());
        Ok(sp)
    }

    pub fn get(&self, id: SpaceId) -> Option<Arc<Space>> {
        self.spaces.read().get(&id).cloned()
    }

    pub fn space(&self, id: SpaceId) -> Result<Arc<Space>> {
        self.get(id)
            .ok_or_else(|| Error::corrupted(id, 0, "tablespace is not open"))
    }

    pub fn space_ids(&self) -> Vec<SpaceId> {
        let mut v: Vec<SpaceId> = self.spaces.read().keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Forgets a tablespace and deletes its file (DROP TABLE, after its pages left the pool).
    pub fn remove_space(&self, id: SpaceId) -> Result<()> {
        let Some(sp) = self.spaces.write().remove(&id) else {
            return Ok(());
        };
        sp.dropped.store(true, Ordering::Release);
        self.forget(&sp);
        self.delete_file(&sp.rel_path())
    }

    /// Takes a space out of the cache and closes its file (waiting for I/O in progress). Its
    /// unsynced writes are not synced: the file is being deleted, or was never used.
    fn forget(&self, sp: &Arc<Space>) {
        {
            let mut c = self.cache.lock();
            if let Some(i) = c.open.iter().position(|s| Arc::ptr_eq(s, sp)) {
                c.open.remove(i);
            }
        }
        *sp.slot.write() = None;
    }

    /// Renames the file of an open tablespace to `to` (relative), then syncs the directories
    /// of both names so the new name is durable and the old one gone. An open handle stays
    /// valid (POSIX rename keeps the inode); a closed one is reopened by the new name. A failure
    /// is fatal (fail-stop): the dictionary already names the file's new place, and the next
    /// start finishes the move (ddl.rs, RENAME).
    pub fn rename_file(&self, id: SpaceId, to: &Path) -> Result<()> {
        self.check_writable()?;
        let sp = self.space(id)?;
        let mut rel = sp.rel_path.write();
        let (from_abs, to_abs) = (self.abs(&rel), self.abs(to));
        self.fs
            .rename(&from_abs, &to_abs)
            .map_err(|e| self.io_error(&from_abs, e, true))?;
        *rel = to.to_path_buf();
        drop(rel);
        let to_dir = to_abs.parent().unwrap_or(&self.datadir).to_path_buf();
        let from_dir = from_abs.parent().unwrap_or(&self.datadir).to_path_buf();
        self.fs
            .sync_dir(&to_dir)
            .map_err(|e| self.io_error(&to_dir, e, true))?;
        if from_dir != to_dir {
            self.fs
                .sync_dir(&from_dir)
                .map_err(|e| self.io_error(&from_dir, e, true))?;
        }
        self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Deletes a file of the data directory and syncs its directory.
    pub fn delete_file(&self, rel_path: &Path) -> Result<()> {
        self.check_writable()?;
        let path = self.abs(rel_path);
        self.fs
            .remove(&path)
            .map_err(|e| self.io_error(&path, e, false))?;
        let parent = path.parent().unwrap_or(&self.datadir).to_path_buf();
        self.fs
            .sync_dir(&parent)
            .map_err(|e| self.io_error(&parent, e, true))?;
        Ok(())
    }

    /// Runs `op` on the space's file, opening it first if the cache closed it. The outer
    /// error is the open's; the inner result is `op`'s, for the caller to judge.
    fn with_file<R>(
        &self,
        sp: &Arc<Space>,
        op: impl FnOnce(&dyn File) -> std::io::Result<R>,
    ) -> Result<std::io::Result<R>> {
        loop {
            {
                let slot = sp.slot.read();
                if let Some(f) = slot.as_ref() {
                    if !sp.referenced.load(Ordering::Relaxed) {
                        sp.referenced.store(true, Ordering::Relaxed);
                    }
                    return Ok(op(f.as_ref()));
                }
            }
            self.reopen(sp)?;
        }
    }

    /// Opens the file of a space the cache closed, making room first.
    fn reopen(&self, sp: &Arc<Space>) -> Result<()> {
        let mut slot = sp.slot.write();
        if slot.is_some() {
            return Ok(());
        }
        if sp.dropped.load(Ordering::Acquire) {
            return Err(Error::corrupted(sp.id, 0, "the tablespace was dropped"));
        }
        self.admit(sp)?;
        // Held across the open: a RENAME cannot move the file meanwhile.
        let rel = sp.rel_path.read();
        let path = self.abs(&rel);
        match self.fs.open_with(&path, self.flags) {
            Ok(f) => {
                self.note_flags(f.as_ref(), &path);
                *slot = Some(f);
                self.stats.reopens.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                drop(rel);
                drop(slot);
                self.forget(sp);
                Err(self.io_error(&path, e, false))
            }
        }
    }

    /// Puts `sp` (whose slot the caller holds for writing, empty) among the open files,
    /// closing the least recently used idle ones beyond innodb_open_files (CLOCK, I4, I6).
    fn admit(&self, sp: &Arc<Space>) -> Result<()> {
        let mut c = self.cache.lock();
        if sp.dropped.load(Ordering::Acquire) {
            return Err(Error::corrupted(sp.id, 0, "the tablespace was dropped"));
        }
        let fixed = self.fixed.load(Ordering::Acquire);
        let mut placed = false;
        // Two turns of the hand: one may only clear the referenced bits.
        let mut steps = 2 * c.open.len() + 1;
        while fixed + c.open.len() + usize::from(!placed) > self.open_files
            && steps > 0
            && !c.open.is_empty()
        {
            steps -= 1;
            if c.hand >= c.open.len() {
                c.hand = 0;
            }
            let i = c.hand;
            let cand = c.open[i].clone();
            if cand.referenced.swap(false, Ordering::Relaxed) {
                c.hand += 1;
                continue;
            }
            // In use (I/O in progress, or being opened or closed): not a victim.
            let Some(mut slot) = cand.slot.try_write() else {
                c.hand += 1;
                continue;
            };
            if let Some(f) = slot.as_ref() {
                if cand.dirty.load(Ordering::Acquire) && self.has_failed() {
                    // Fail-stop: no sync may vouch for these writes any more; keep it open.
                    c.hand += 1;
                    continue;
                }
                if cand.dirty.load(Ordering::Acquire) {
                    // I4: durable before closed; on failure fatal, and the file stays open.
                    let rel = cand.rel_path();
                    if let Err(e) = f.sync_data() {
                        let _ = self.io_error(&self.abs(&rel), e, true);
                        c.hand += 1;
                        continue;
                    }
                    cand.dirty.store(false, Ordering::Release);
                    self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
                }
                *slot = None;
                self.stats.closes.fetch_add(1, Ordering::Relaxed);
            }
            drop(slot);
            if placed {
                c.open.remove(i);
            } else {
                // The newcomer takes the victim's place; the hand moves past it.
                c.open[i] = sp.clone();
                placed = true;
                c.hand += 1;
            }
        }
        if !placed {
            c.open.push(sp.clone());
        }
        sp.referenced.store(true, Ordering::Relaxed);
        if fixed + c.open.len() > self.open_files
            && fixed < self.open_files
            && !self.warned_limit.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "InnoDB: innodb_open_files={} is exceeded ({} files stay open): every open \
                 tablespace file is in use",
                self.open_files,
                fixed + c.open.len()
            );
        }
        Ok(())
    }

    /// Reads a page. Bytes past the end of the file read as zeros (I2).
    pub fn read_page(&self, id: PageId, buf: &mut [u8]) -> Result<()> {
        let sp = self.space(id.space)?;
        self.read_page_in(&sp, id.page, buf)
    }

    pub fn read_page_in(&self, sp: &Arc<Space>, page: PageNo, buf: &mut [u8]) -> Result<()> {
        let off = u64::from(page) * self.page_size as u64;
        let ps = self.page_size as u64;
        let read = self.with_file(sp, |f| {
            if off + ps > f.len()? {
                return Ok(false);
            }
            f.read_at(buf, off).map(|()| true)
        })?;
        match read {
            Ok(true) => {}
            Ok(false) => {
                buf.fill(0);
                return Ok(());
            }
            Err(e) => return Err(self.io_error(&self.abs(&sp.rel_path()), e, false)),
        }
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_read
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Reads consecutive pages starting at `first` with one read (read-ahead); pages past the
    /// end of the file read as zeros (I2).
    pub fn read_pages_in(&self, sp: &Arc<Space>, first: PageNo, buf: &mut [u8]) -> Result<()> {
        let off = u64::from(first) * self.page_size as u64;
        let ps = self.page_size;
        let read = self.with_file(sp, |f| {
            let len = f.len()?;
            let n = usize::try_from(len.saturating_sub(off))
                .unwrap_or(usize::MAX)
                .min(buf.len());
            let n = n - n % ps;
            buf[n..].fill(0);
            if n > 0 {
                f.read_at(&mut buf[..n], off)?;
            }
            Ok(n)
        })?;
        let n = read.map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, false))?;
        if n > 0 {
            self.stats.reads.fetch_add(1, Ordering::Relaxed);
            self.stats.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Writes whole pages starting at `first` (several consecutive pages in one call).
    pub fn write_pages(&self, sp: &Arc<Space>, first: PageNo, buf: &[u8]) -> Result<()> {
        self.check_writable()?;
        if sp.dropped.load(Ordering::Acquire) {
            return Ok(());
        }
        let off = u64::from(first) * self.page_size as u64;
        let wrote = self.with_file(sp, |f| {
            // Again: making room for this file may have failed a sync (I1).
            if self.has_failed() {
                return Ok(false);
            }
            f.write_at(buf, off)?;
            // I5: under the slot's read latch, so an eviction sees it.
            if !f.flags().dsync {
                sp.dirty.store(true, Ordering::Release);
            }
            Ok(true)
        })?;
        match wrote {
            Ok(true) => {}
            Ok(false) => return Err(Error::PreviousIo),
            Err(e) => return Err(self.io_error(&self.abs(&sp.rel_path()), e, true)),
        }
        self.stats.writes.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        let end = first + (buf.len() / self.page_size) as u32;
        sp.file_pages.fetch_max(end, Ordering::AcqRel);
        Ok(())
    }

    /// fdatasync of a tablespace if it was written since its last sync. Writes through an
    /// O_DSYNC handle (O_DIRECT_NO_FSYNC) were durable when they returned: nothing to do.
    pub fn sync(&self, sp: &Space) -> Result<()> {
        self.check_writable()?;
        if !sp.dirty.load(Ordering::Acquire) {
            return Ok(());
        }
        // I5: dirty, so the slot holds the file (unless the space was dropped); never reopen.
        let slot = sp.slot.read();
        let Some(f) = slot.as_ref() else {
            return Ok(());
        };
        // An eviction's failed sync may have run while this waited for the latch: never sync
        // again after a failure (a second fsync can succeed without the data).
        self.check_writable()?;
        if !sp.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        if let Err(e) = f.sync_data() {
            sp.dirty.store(true, Ordering::Release);
            return Err(self.io_error(&self.abs(&sp.rel_path()), e, true));
        }
        self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Makes the file hold at least `pages` pages, preallocating (posix_fallocate) and syncing
    /// the new size (I7). ENOSPC is a clean `TableFull`; nothing else changes.
    pub fn grow(&self, sp: &Arc<Space>, pages: u32) -> Result<()> {
        self.check_writable()?;
        let _g = sp.grow.lock();
        if sp.file_pages() >= pages {
            return Ok(());
        }
        let len = u64::from(pages) * self.page_size as u64;
        // Allocation and sync through one handle, which the cache cannot close in between.
        let grown = self.with_file(sp, |f| match f.allocate(len) {
            Ok(()) => Ok(f.sync_data()),
            Err(e) => Err(e),
        })?;
        let path = self.abs(&sp.rel_path());
        match grown {
            Err(e) if innoxide_io::is_enospc(&e) => {
                tracing::warn!(
                    "InnoDB: preallocating {len} bytes for file {} failed: {e}",
                    { path.display() }
                );
                return Err(Error::TableFull(sp.name()));
            }
            Err(e) => return Err(self.io_error(&path, e, false)),
            // The new size must be durable before pages in it are referenced by a checkpoint.
            Ok(synced) => synced.map_err(|e| self.io_error(&path, e, true))?,
        }
        self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        sp.file_pages.store(pages, Ordering::Release);
        Ok(())
    }

    /// Closes every tablespace (engine shutdown).
    pub fn close_all(&self) {
        self.cache.lock().open.clear();
        self.spaces.write().clear();
    }
}
