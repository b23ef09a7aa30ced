//! Redo log files: header, checkpoint slots and the LSN -> (file, offset) ring mapping.
//! Byte layout: docs/format/redo.md.
//!
//! INVARIANTS
//! - I1: the group is created under temporary names and `ib_logfile0` appears (by rename, then a
//!   directory sync) only once every file is preallocated, headed and synced; an
//!   `ib_logfile0` therefore always has a valid header.
//! - I2: checkpoint slots are written alternately (slot = number % 2) and each write is synced,
//!   so a torn checkpoint write leaves the other slot valid.
//! - I3: any failed write or sync sets the shared fail-stop flag.
//! - I4: a new file's log area is written with zeros before it is used (as InnoDB does), not
//!   only reserved: on ext4 and XFS a reserved but never written extent is "unwritten", and the
//!   first fdatasync after a write into it must also commit the journal entry that converts it,
//!   which made each commit's fdatasync about a quarter slower until the ring had wrapped once.
//! - I5: the files are opened with innodb_flush_method's log flags. A file whose handle is
//!   O_DSYNC (O_DSYNC method) is never marked dirty: each write was durable when it returned,
//!   so `sync` and `write_checkpoint` issue no fdatasync for it. A new group is written
//!   buffered and synced once, then reopened with the flags.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use innoxide_io::{File, FileSystem, OpenFlags};

use crate::error::{Error, Result};
use crate::mach::{read_u32, read_u64, write_u32, write_u64};
use crate::types::Lsn;

pub const LOG_MAGIC: u32 = 0x4958_4C47;
pub const LOG_VERSION: u32 = 1;
pub const LOG_HEADER_SIZE: u64 = 4096;
const CP_SLOT: [u64; 2] = [512, 1024];
/// The LSN of a freshly initialised data directory (as InnoDB).
pub const LOG_START_LSN: Lsn = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub no: u64,
    pub lsn: Lsn,
    pub end_lsn: Lsn,
}

pub struct LogFiles {
    dir: PathBuf,
    files: Vec<Arc<dyn File>>,
    dirty: Vec<AtomicBool>,
    pub file_size: u64,
    pub start_lsn: Lsn,
    pub page_size: u32,
    area: u64,
    pub capacity: u64,
    failed: Arc<AtomicBool>,
}

pub fn file_name(i: u32) -> String {
    format!("ib_logfile{i}")
}

fn io(failed: &AtomicBool, path: &Path, e: std::io::Error, fatal: bool) -> Error {
    if fatal && !failed.swap(true, Ordering::AcqRel) {
        tracing::error!(
            "InnoDB: redo log write or fsync of {} failed: {e}",
            path.display()
        );
    }
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

fn header_block(start_lsn: Lsn, n: u32, idx: u32, file_size: u64, page_size: u32) -> Vec<u8> {
    let mut h = vec![0u8; LOG_HEADER_SIZE as usize];
    write_u32(&mut h, 0, LOG_MAGIC);
    write_u32(&mut h, 4, LOG_VERSION);
    write_u64(&mut h, 8, start_lsn);
    write_u32(&mut h, 16, n);
    write_u32(&mut h, 20, idx);
    write_u64(&mut h, 24, file_size);
    write_u32(&mut h, 32, page_size);
    let creator = b"innoxide 0.1.0";
    h[36..36 + creator.len()].copy_from_slice(creator);
    let crc = crc32c::crc32c(&h[..508]);
    write_u32(&mut h, 508, crc);
    h
}

fn cp_block(cp: &Checkpoint) -> [u8; 512] {
    let mut b = [0u8; 512];
    write_u64(&mut b, 0, cp.no);
    write_u64(&mut b, 8, cp.lsn);
    write_u64(&mut b, 16, cp.end_lsn);
    let crc = crc32c::crc32c(&b[..508]);
    write_u32(&mut b, 508, crc);
    b
}

impl LogFiles {
    /// Creates a new log group whose first checkpoint is at `start_lsn` (I1), and opens it
    /// with `flags` (I5).
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        fs: &Arc<dyn FileSystem>,
        dir: &Path,
        n: u32,
        file_size: u64,
        page_size: u32,
        start_lsn: Lsn,
        flags: OpenFlags,
        failed: Arc<AtomicBool>,
    ) -> Result<Self> {
        let tmp0 = dir.join("ib_logfile101");
        let total_mib = (u64::from(n) * file_size) >> 20;
        tracing::info!("InnoDB: Writing {total_mib} MiB of zeros to {n} new redo log files");
        let zeros = vec![0u8; 1 << 20];
        let started = std::time::Instant::now();
        // Progress every 10% of a large group (1 GiB or more), as mysqld's "Progress in MB".
        let chunks = u64::from(n) * (file_size - LOG_HEADER_SIZE).div_ceil(zeros.len() as u64);
        let (mut done, mut reported) = (0u64, 0u64);
        for i in 0..n {
            let path = if i == 0 {
                tmp0.clone()
            } else {
                dir.join(file_name(i))
            };
            if fs.exists(&path).map_err(|e| io(&failed, &path, e, false))? {
                fs.remove(&path).map_err(|e| io(&failed, &path, e, false))?;
            }
            let f = fs.create(&path).map_err(|e| io(&failed, &path, e, false))?;
            f.allocate(file_size)
                .map_err(|e| io(&failed, &path, e, false))?;
            // I4.
            let mut at = LOG_HEADER_SIZE;
            while at < file_size {
                let len = (file_size - at).min(zeros.len() as u64) as usize;
                f.write_at(&zeros[..len], at)
                    .map_err(|e| io(&failed, &path, e, true))?;
                at += len as u64;
                done += 1;
                if total_mib >= 1024 && done * 10 / chunks > reported {
                    reported = done * 10 / chunks;
                    tracing::info!(
                        "InnoDB: Redo log files: {}% of {total_mib} MiB written",
                        reported * 10
                    );
                }
            }
            let h = header_block(start_lsn, n, i, file_size, page_size);
            f.write_at(&h, 0).map_err(|e| io(&failed, &path, e, true))?;
            if i == 0 {
                let cp = Checkpoint {
                    no: 1,
                    lsn: start_lsn,
                    end_lsn: start_lsn,
                };
                f.write_at(&cp_block(&cp), CP_SLOT[1])
                    .map_err(|e| io(&failed, &path, e, true))?;
            }
            f.sync_data().map_err(|e| io(&failed, &path, e, true))?;
        }
        fs.sync_dir(dir).map_err(|e| io(&failed, dir, e, true))?;
        tracing::info!(
            "InnoDB: {n} redo log files of {} MiB each written and synced in {:.1}s",
            file_size >> 20,
            started.elapsed().as_secs_f64()
        );
        let final0 = dir.join(file_name(0));
        fs.rename(&tmp0, &final0)
            .map_err(|e| io(&failed, &final0, e, true))?;
        fs.sync_dir(dir).map_err(|e| io(&failed, dir, e, true))?;
        Self::open(fs, dir, page_size, flags, failed)
    }

    /// True if a log group exists in `dir`.
    pub fn exists(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<bool> {
        let p = dir.join(file_name(0));
        fs.exists(&p).map_err(|e| Error::Io {
            path: p.display().to_string(),
            source: e,
        })
    }

    /// Opens an existing group with `flags` (I5) and checks it belongs to a data directory of
    /// `page_size`.
    pub fn open(
        fs: &Arc<dyn FileSystem>,
        dir: &Path,
        page_size: u32,
        flags: OpenFlags,
        failed: Arc<AtomicBool>,
    ) -> Result<Self> {
        let p0 = dir.join(file_name(0));
        let f0 = fs
            .open_with(&p0, flags)
            .map_err(|e| io(&failed, &p0, e, false))?;
        let mut h = vec![0u8; 512];
        f0.read_at(&mut h, 0)
            .map_err(|e| io(&failed, &p0, e, false))?;
        if read_u32(&h, 0) != LOG_MAGIC || read_u32(&h, 508) != crc32c::crc32c(&h[..508]) {
            return Err(Error::Startup(format!(
                "InnoDB: {} does not start with a valid redo log header",
                p0.display()
            )));
        }
        if read_u32(&h, 4) != LOG_VERSION {
            return Err(Error::Startup(format!(
                "InnoDB: unsupported redo log format {} in {}",
                read_u32(&h, 4),
                p0.display()
            )));
        }
        let start_lsn = read_u64(&h, 8);
        let n = read_u32(&h, 16);
        let file_size = read_u64(&h, 24);
        let ps = read_u32(&h, 32);
        if ps != page_size {
            return Err(Error::Startup(format!(
                "InnoDB: the redo log was created with innodb_page_size={ps}, \
                 but innodb_page_size={page_size} was given"
            )));
        }
        if n == 0 || file_size <= LOG_HEADER_SIZE {
            return Err(Error::Startup(format!(
                "InnoDB: bad redo log header in {}",
                p0.display()
            )));
        }
        let mut files: Vec<Arc<dyn File>> = vec![f0];
        for i in 1..n {
            let p = dir.join(file_name(i));
            let f = fs.open_with(&p, flags).map_err(|e| {
                Error::Startup(format!(
                    "InnoDB: redo log file {} is missing or unreadable: {e}",
                    p.display()
                ))
            })?;
            let len = f.len().map_err(|e| io(&failed, &p, e, false))?;
            if len < file_size {
                return Err(Error::Startup(format!(
                    "InnoDB: redo log file {} is {len} bytes, expected {file_size}",
                    p.display()
                )));
            }
            files.push(f);
        }
        let area = file_size - LOG_HEADER_SIZE;
        Ok(LogFiles {
            dir: dir.to_path_buf(),
            dirty: (0..n).map(|_| AtomicBool::new(false)).collect(),
            files,
            file_size,
            start_lsn,
            page_size,
            area,
            capacity: area * u64::from(n),
            failed,
        })
    }

    pub fn failed_flag(&self) -> Arc<AtomicBool> {
        self.failed.clone()
    }

    pub fn n_files(&self) -> u32 {
        self.files.len() as u32
    }

    fn path(&self, i: usize) -> PathBuf {
        self.dir.join(file_name(i as u32))
    }

    /// The file and byte offset where the log byte at `lsn` is stored.
    pub fn position(&self, lsn: Lsn) -> (PathBuf, u64) {
        let (fi, off, _) = self.locate(lsn);
        (self.path(fi), off)
    }

    /// (file index, byte offset in that file, bytes left in that file's data area)
    fn locate(&self, lsn: Lsn) -> (usize, u64, u64) {
        let ring = (lsn - self.start_lsn) % self.capacity;
        let file = (ring / self.area) as usize;
        let within = ring % self.area;
        (file, LOG_HEADER_SIZE + within, self.area - within)
    }

    /// Writes `data` as the log bytes starting at `lsn`.
    pub fn write(&self, mut lsn: Lsn, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let (fi, off, room) = self.locate(lsn);
            let n = (room as usize).min(data.len());
            let f = &self.files[fi];
            f.write_at(&data[..n], off)
                .map_err(|e| io(&self.failed, &self.path(fi), e, true))?;
            if !f.flags().dsync {
                self.dirty[fi].store(true, Ordering::Release);
            }
            data = &data[n..];
            lsn += n as u64;
        }
        Ok(())
    }

    /// Reads the log bytes starting at `lsn`.
    pub fn read(&self, mut lsn: Lsn, mut buf: &mut [u8]) -> Result<()> {
        while !buf.is_empty() {
            let (fi, off, room) = self.locate(lsn);
            let n = (room as usize).min(buf.len());
            let (head, tail) = buf.split_at_mut(n);
            self.files[fi]
                .read_at(head, off)
                .map_err(|e| io(&self.failed, &self.path(fi), e, false))?;
            buf = tail;
            lsn += n as u64;
        }
        Ok(())
    }

    /// fdatasync of every file written since its last sync. Returns the number of syncs.
    pub fn sync(&self) -> Result<u32> {
        let mut n = 0;
        for (i, f) in self.files.iter().enumerate() {
            if self.dirty[i].swap(false, Ordering::AcqRel) {
                if let Err(e) = f.sync_data() {
                    self.dirty[i].store(true, Ordering::Release);
                    return Err(io(&self.failed, &self.path(i), e, true));
                }
                n += 1;
            }
        }
        Ok(n)
    }

    /// The valid checkpoint with the highest number.
    pub fn read_checkpoint(&self) -> Result<Checkpoint> {
        let mut best: Option<Checkpoint> = None;
        for off in CP_SLOT {
            let mut b = [0u8; 512];
            self.files[0]
                .read_at(&mut b, off)
                .map_err(|e| io(&self.failed, &self.path(0), e, false))?;
            if read_u32(&b, 508) != crc32c::crc32c(&b[..508]) || read_u64(&b, 0) == 0 {
                continue;
            }
            let cp = Checkpoint {
                no: read_u64(&b, 0),
                lsn: read_u64(&b, 8),
                end_lsn: read_u64(&b, 16),
            };
            if best.is_none_or(|b| cp.no > b.no) {
                best = Some(cp);
            }
        }
        best.ok_or_else(|| {
            Error::Startup(format!(
                "InnoDB: no valid checkpoint found in {}; the redo log is damaged",
                self.path(0).display()
            ))
        })
    }

    /// Writes a checkpoint and makes it durable (I2): syncs, unless the write already was
    /// (O_DSYNC, I5). Returns whether it synced.
    pub fn write_checkpoint(&self, cp: &Checkpoint) -> Result<bool> {
        let off = CP_SLOT[(cp.no % 2) as usize];
        let f = &self.files[0];
        f.write_at(&cp_block(cp), off)
            .map_err(|e| io(&self.failed, &self.path(0), e, true))?;
        if f.flags().dsync {
            return Ok(false);
        }
        f.sync_data()
            .map_err(|e| io(&self.failed, &self.path(0), e, true))?;
        Ok(true)
    }
}
