//! Tablespace files: space id -> open file, page reads and writes, growth, sync.
//! (InnoDB: fil0fil.) All I/O goes through `innoxide_io::FileSystem`.
//!
//! INVARIANTS
//! - I1 (fail-stop): after any failed write or sync, every later write or sync returns
//!   `Error::PreviousIo` until the engine is reopened. A failed *growth* (ENOSPC while
//!   preallocating) is not a write failure: nothing was written, the caller gets TableFull.
//! - I2: a page beyond the end of its file reads as zeros (allocated by FSP_SIZE but not yet
//!   written, e.g. after a crash before the file was extended).
//! - I3: a tablespace file is created, preallocated, given a valid page 0 naming its space, and
//!   synced, and its directory synced, before any redo record refers to it.
//!
//! LATCHING: `spaces` RwLock (read on every I/O, write on create/drop); a space's `grow` mutex
//! serialises file growth. Neither is held while waiting for a page latch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::latch::{Mutex, RwLock};
use innoxide_io::{File, FileSystem};

use crate::error::{Error, Result};
use crate::types::{PageId, PageNo, SpaceId};

pub struct Space {
    pub id: SpaceId,
    /// Path relative to the data directory (`ibdata1`, `db/t.ibd`); changed only by
    /// `Fil::rename_file` (RENAME TABLE), under the DDL mutex.
    rel_path: RwLock<PathBuf>,
    file: Arc<dyn File>,
    /// Whole pages the file holds.
    file_pages: AtomicU32,
    /// Written since the last sync.
    dirty: AtomicBool,
    pub dropped: AtomicBool,
    grow: Mutex<()>,
}

impl Space {
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
}

pub struct Fil {
    fs: Arc<dyn FileSystem>,
    datadir: PathBuf,
    page_size: usize,
    spaces: RwLock<HashMap<SpaceId, Arc<Space>>>,
    failed: Arc<AtomicBool>,
    pub stats: FilStats,
}

impl Fil {
    pub fn new(
        fs: Arc<dyn FileSystem>,
        datadir: PathBuf,
        page_size: usize,
        failed: Arc<AtomicBool>,
    ) -> Self {
        Fil {
            fs,
            datadir,
            page_size,
            spaces: RwLock::new(HashMap::new()),
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

    /// Creates `rel_path` with `pages` preallocated pages, syncs it and its directory.
    pub fn create_space(&self, id: SpaceId, rel_path: &Path, pages: u32) -> Result<Arc<Space>> {
        self.check_writable()?;
        let path = self.abs(rel_path);
        let parent = path.parent().unwrap_or(&self.datadir).to_path_buf();
        let file = self
            .fs
            .create(&path)
            .map_err(|e| self.io_error(&path, e, false))?;
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
        file.sync_data()
            .map_err(|e| self.io_error(&path, e, true))?;
        self.fs
            .sync_dir(&parent)
            .map_err(|e| self.io_error(&parent, e, true))?;
        self.stats.fsyncs.fetch_add(2, Ordering::Relaxed);
        let sp = Arc::new(Space {
            id,
            rel_path: RwLock::new(rel_path.to_path_buf()),
            file,
            file_pages: AtomicU32::new(pages),
            dirty: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            grow: Mutex::new(()),
        });
        self.spaces.write().insert(id, sp.clone());
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
            .open(&path)
            .map_err(|e| self.io_error(&path, e, false))?;
        let len = file.len().map_err(|e| self.io_error(&path, e, false))?;
        let sp = Arc::new(Space {
            id,
            rel_path: RwLock::new(rel_path.to_path_buf()),
            file,
            file_pages: AtomicU32::new((len / self.page_size as u64) as u32),
            dirty: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            grow: Mutex::new(()),
        });
        Ok(self.spaces.write().entry(id).or_insert(sp).clone())
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
        self.delete_file(&sp.rel_path())
    }

    /// Renames the file of an open tablespace to `to` (relative), then syncs the directories
    /// of both names so the new name is durable and the old one gone. Open handles stay valid
    /// (POSIX rename keeps the inode). A failure is fatal (fail-stop): the dictionary already
    /// names the file's new place, and the next start finishes the move (ddl.rs, RENAME).
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

    /// Reads a page. Bytes past the end of the file read as zeros (I2).
    pub fn read_page(&self, id: PageId, buf: &mut [u8]) -> Result<()> {
        let sp = self.space(id.space)?;
        self.read_page_in(&sp, id.page, buf)
    }

    pub fn read_page_in(&self, sp: &Space, page: PageNo, buf: &mut [u8]) -> Result<()> {
        let off = u64::from(page) * self.page_size as u64;
        let len = sp
            .file
            .len()
            .map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, false))?;
        if off + self.page_size as u64 > len {
            buf.fill(0);
            return Ok(());
        }
        sp.file
            .read_at(buf, off)
            .map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, false))?;
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_read
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Reads consecutive pages starting at `first` with one read (read-ahead); pages past the
    /// end of the file read as zeros (I2).
    pub fn read_pages_in(&self, sp: &Space, first: PageNo, buf: &mut [u8]) -> Result<()> {
        let off = u64::from(first) * self.page_size as u64;
        let len = sp
            .file
            .len()
            .map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, false))?;
        let n = usize::try_from(len.saturating_sub(off))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = n - n % self.page_size;
        buf[n..].fill(0);
        if n == 0 {
            return Ok(());
        }
        sp.file
            .read_at(&mut buf[..n], off)
            .map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, false))?;
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        self.stats.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Writes whole pages starting at `first` (several consecutive pages in one call).
    pub fn write_pages(&self, sp: &Space, first: PageNo, buf: &[u8]) -> Result<()> {
        self.check_writable()?;
        if sp.dropped.load(Ordering::Acquire) {
            return Ok(());
        }
        let off = u64::from(first) * self.page_size as u64;
        sp.file
            .write_at(buf, off)
            .map_err(|e| self.io_error(&self.abs(&sp.rel_path()), e, true))?;
        sp.dirty.store(true, Ordering::Release);
        self.stats.writes.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        let end = first + (buf.len() / self.page_size) as u32;
        sp.file_pages.fetch_max(end, Ordering::AcqRel);
        Ok(())
    }

    /// fdatasync of a tablespace if it was written since its last sync.
    pub fn sync(&self, sp: &Space) -> Result<()> {
        self.check_writable()?;
        if !sp.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        if let Err(e) = sp.file.sync_data() {
            sp.dirty.store(true, Ordering::Release);
            return Err(self.io_error(&self.abs(&sp.rel_path()), e, true));
        }
        self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Makes the file hold at least `pages` pages, preallocating (posix_fallocate) and syncing
    /// the new size. ENOSPC is a clean `TableFull`; nothing else changes.
    pub fn grow(&self, sp: &Space, pages: u32) -> Result<()> {
        self.check_writable()?;
        let _g = sp.grow.lock();
        if sp.file_pages() >= pages {
            return Ok(());
        }
        let path = self.abs(&sp.rel_path());
        let len = u64::from(pages) * self.page_size as u64;
        if let Err(e) = sp.file.allocate(len) {
            if innoxide_io::is_enospc(&e) {
                tracing::warn!(
                    "InnoDB: preallocating {len} bytes for file {} failed: {e}",
                    { path.display() }
                );
                return Err(Error::TableFull(sp.name()));
            }
            return Err(self.io_error(&path, e, false));
        }
        // The new size must be durable before pages in it are referenced by a checkpoint.
        sp.file
            .sync_data()
            .map_err(|e| self.io_error(&path, e, true))?;
        self.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        sp.file_pages.store(pages, Ordering::Release);
        Ok(())
    }

    /// Closes every tablespace (engine shutdown).
    pub fn close_all(&self) {
        self.spaces.write().clear();
    }
}
