//! [`OsFs`]: the real file system, through `std::fs` and positional unix I/O.
//!
//! Every call maps to one or two system calls; errors are propagated unchanged so that
//! callers can inspect `raw_os_error()` (for example with [`crate::is_enospc`]).
//!
//! O_DIRECT: the kernel wants the buffer's address, the file offset and the length aligned
//! to the device's logical block size. [`DIRECT_IO_ALIGN`] (4096) is a multiple of every
//! logical block size in common use (512 and 4096), so requests aligned to it always pass.
//! A request whose buffer is not aligned goes through an aligned bounce buffer (one per
//! thread, reused); one whose offset or length is not aligned reads the blocks it covers, and
//! a write of that kind rewrites them whole (read-modify-write, serialised per handle) and
//! cuts the file back to the length a plain write would have left. Callers therefore need not
//! align anything; the engine's page I/O is aligned in offset and length, and buffer-pool
//! frames are aligned too, so its reads go to the disk without a copy.
//!
//! A file system that refuses O_DIRECT (EINVAL at open: tmpfs before Linux 6.6, some FUSE
//! file systems) gets a buffered handle instead, as InnoDB continues with a warning; the
//! handle's [`File::flags`] tell the caller, who logs it.

use std::cell::RefCell;
use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::{File, FileSystem, OpenFlags};

/// The alignment of address, offset and length that [`OsFs`] gives O_DIRECT requests.
pub const DIRECT_IO_ALIGN: usize = 4096;

/// `DIRECT_IO_ALIGN` as a file offset.
const ALIGN: u64 = DIRECT_IO_ALIGN as u64;

/// Bounce buffers larger than this are freed after use instead of kept for the next request.
const BOUNCE_KEEP: usize = 4 << 20;

/// O_DIRECT where the platform has it.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
const O_DIRECT: Option<i32> = Some(libc::O_DIRECT);
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
const O_DIRECT: Option<i32> = None;

/// The real file system. Stateless; cheap to create and to share.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFs;

impl OsFs {
    /// Returns the real file system.
    pub fn new() -> Self {
        OsFs
    }
}

/// An open OS file (read + write).
#[derive(Debug)]
struct OsFile {
    file: fs::File,
    /// The flags in force (`direct` only if the open with O_DIRECT succeeded).
    flags: OpenFlags,
    /// Serialises the read-modify-write of unaligned writes through a direct handle.
    rmw: Mutex<()>,
}

/// Opens (or, with `create`, creates) `path` read-write with `flags`; falls back to a
/// buffered handle when the file system refuses O_DIRECT.
fn open_file(path: &Path, create: bool, flags: OpenFlags) -> io::Result<OsFile> {
    let open = |direct: Option<i32>, create: bool| {
        let mut o = fs::OpenOptions::new();
        o.read(true).write(true).create_new(create);
        let mut custom = if flags.dsync { libc::O_DSYNC } else { 0 };
        if let Some(d) = direct {
            custom |= d;
        }
        o.custom_flags(custom).open(path)
    };
    if let (true, Some(d)) = (flags.direct, O_DIRECT) {
        match open(Some(d), create) {
            Ok(file) => {
                return Ok(OsFile {
                    file,
                    flags,
                    rmw: Mutex::new(()),
                })
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => return Err(e),
        }
    }
    let file = match open(None, create) {
        // Linux checks O_DIRECT after creating the file: the refused create left it behind
        // (it did not exist before, or the create would have failed with EEXIST).
        Err(e) if create && flags.direct && e.kind() == io::ErrorKind::AlreadyExists => {
            open(None, false)?
        }
        r => r?,
    };
    Ok(OsFile {
        file,
        flags: OpenFlags {
            direct: false,
            dsync: flags.dsync,
        },
        rmw: Mutex::new(()),
    })
}

impl FileSystem for OsFs {
    fn open_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        Ok(Arc::new(open_file(path, false, flags)?))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        let file = fs::OpenOptions::new().read(true).open(path)?;
        Ok(Arc::new(OsFile {
            file,
            flags: OpenFlags::BUFFERED,
            rmw: Mutex::new(()),
        }))
    }

    fn create_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        Ok(Arc::new(open_file(path, true, flags)?))
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        path.try_exists()
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(path)? {
            out.push(entry?.path());
        }
        out.sort();
        Ok(out)
    }

    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        match fs::metadata(path) {
            Ok(m) => Ok(m.is_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        // Opening a directory read-only and fsyncing it is how POSIX makes entries durable.
        fs::File::open(path)?.sync_all()
    }
}

impl File for OsFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if !self.flags.direct || aligned(buf.as_ptr(), offset, buf.len()) {
            return self.file.read_exact_at(buf, offset);
        }
        if buf.is_empty() {
            return Ok(());
        }
        // The aligned blocks covering the request, through the bounce buffer.
        let (start, end) = cover(offset, buf.len())?;
        with_bounce(span(start, end)?, |b| {
            let got = read_upto(&self.file, b, start)?;
            let skip = span(start, offset)?;
            if got < skip + buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "failed to fill whole buffer",
                ));
            }
            buf.copy_from_slice(&b[skip..skip + buf.len()]);
            Ok(())
        })
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        if !self.flags.direct || aligned(buf.as_ptr(), offset, buf.len()) {
            return self.file.write_all_at(buf, offset);
        }
        if buf.is_empty() {
            return Ok(());
        }
        if offset.is_multiple_of(ALIGN) && buf.len().is_multiple_of(DIRECT_IO_ALIGN) {
            // Only the address is unaligned: copy, then write as asked.
            return with_bounce(buf.len(), |b| {
                b.copy_from_slice(buf);
                self.file.write_all_at(b, offset)
            });
        }
        self.write_unaligned(buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn allocate(&self, len: u64) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        allocate_impl(&self.file, len)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn flags(&self) -> OpenFlags {
        self.flags
    }
}

impl OsFile {
    /// A direct write whose offset or length is not aligned: the blocks it covers are read,
    /// patched and written whole, then the file is cut back to the length a plain write
    /// would have left (blocks past the old end must not lengthen it). Unaligned writes of
    /// one handle are serialised; they must not race with other writes to the same blocks.
    fn write_unaligned(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let _g = self.rmw.lock();
        let (start, end) = cover(offset, buf.len())?;
        let old_len = self.file.metadata()?.len();
        let want_len = old_len.max(end_of(offset, buf.len())?);
        with_bounce(span(start, end)?, |b| {
            // The partial first and last blocks keep their bytes (zeros past the end).
            let last = b.len() - DIRECT_IO_ALIGN;
            let got = read_upto(&self.file, &mut b[..DIRECT_IO_ALIGN], start)?;
            b[got..DIRECT_IO_ALIGN].fill(0);
            if last > 0 {
                let at = end - ALIGN;
                let got = read_upto(&self.file, &mut b[last..], at)?;
                b[last + got..].fill(0);
            }
            let skip = span(start, offset)?;
            b[skip..skip + buf.len()].copy_from_slice(buf);
            self.file.write_all_at(b, start)?;
            if end > want_len {
                self.file.set_len(want_len)?;
            }
            Ok(())
        })
    }
}

/// Whether a direct request needs no bounce: address, offset and length aligned.
fn aligned(ptr: *const u8, offset: u64, len: usize) -> bool {
    (ptr as usize).is_multiple_of(DIRECT_IO_ALIGN)
        && offset.is_multiple_of(ALIGN)
        && len.is_multiple_of(DIRECT_IO_ALIGN)
}

/// `offset + len`, or EFBIG.
fn end_of(offset: u64, len: usize) -> io::Result<u64> {
    u64::try_from(len)
        .ok()
        .and_then(|l| offset.checked_add(l))
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))
}

/// The aligned range `[start, end)` covering `len` bytes at `offset`.
fn cover(offset: u64, len: usize) -> io::Result<(u64, u64)> {
    let end = end_of(offset, len)?;
    let start = offset - offset % ALIGN;
    let end = end
        .checked_next_multiple_of(ALIGN)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))?;
    Ok((start, end))
}

/// `to - from` as a buffer length.
fn span(from: u64, to: u64) -> io::Result<usize> {
    usize::try_from(to - from).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))
}

/// Reads at `offset` until `buf` is full or the file ends; returns the bytes read.
fn read_upto(file: &fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

thread_local! {
    /// This thread's bounce buffer for direct requests that are not aligned.
    static BOUNCE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on an aligned buffer of `len` bytes (contents unspecified).
fn with_bounce<R>(len: usize, f: impl FnOnce(&mut [u8]) -> io::Result<R>) -> io::Result<R> {
    BOUNCE.with(|cell| {
        let mut v = cell.borrow_mut();
        let need = len + DIRECT_IO_ALIGN;
        if v.len() < need {
            v.resize(need, 0);
        }
        let addr = v.as_ptr() as usize;
        let skip = addr.next_multiple_of(DIRECT_IO_ALIGN) - addr;
        let r = f(&mut v[skip..skip + len]);
        if v.len() > BOUNCE_KEEP {
            *v = Vec::new();
        }
        r
    })
}

/// Reserves `[0, len)` with posix_fallocate. File systems without fallocate support
/// (EOPNOTSUPP, or EINVAL from some FUSE/NFS setups) get a plain size extension instead:
/// the size guarantee holds, only the reservation is lost.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn allocate_impl(file: &fs::File, len: u64) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let off_len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "allocate length too large"))?;
    loop {
        // SAFETY: the descriptor is owned by `file` and stays open for the whole call;
        // posix_fallocate takes no pointers.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, off_len) };
        // posix_fallocate returns the error number instead of setting errno.
        match rc {
            0 => return Ok(()),
            libc::EINTR => continue,
            libc::EOPNOTSUPP | libc::EINVAL => return extend_to(file, len),
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn allocate_impl(file: &fs::File, len: u64) -> io::Result<()> {
    extend_to(file, len)
}

/// Grows `file` to `len` with zeros if it is shorter; never shrinks.
fn extend_to(file: &fs::File, len: u64) -> io::Result<()> {
    if file.metadata()?.len() < len {
        file.set_len(len)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocate_reserves_and_never_shrinks() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let fs = OsFs::new();
        let path = dir.path().join("a");
        let f = fs.create(&path)?;
        f.allocate(8192)?;
        assert_eq!(f.len()?, 8192);
        let mut buf = vec![1u8; 8192];
        f.read_at(&mut buf, 0)?;
        assert!(buf.iter().all(|&b| b == 0));
        f.allocate(100)?;
        assert_eq!(f.len()?, 8192);
        Ok(())
    }

    #[test]
    fn extend_to_only_grows() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("b");
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        extend_to(&file, 1000)?;
        assert_eq!(file.metadata()?.len(), 1000);
        extend_to(&file, 10)?;
        assert_eq!(file.metadata()?.len(), 1000);
        Ok(())
    }

    /// The descriptor carries exactly the flags the handle reports (O_DIRECT unless the
    /// temporary directory's file system refused it).
    #[cfg(target_os = "linux")]
    #[test]
    fn descriptors_carry_the_flags_in_force() -> io::Result<()> {
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("f");
        drop(OsFs::new().create(&path)?);
        for flags in [
            OpenFlags::BUFFERED,
            OpenFlags::DSYNC,
            OpenFlags::DIRECT,
            OpenFlags::DIRECT_DSYNC,
        ] {
            let f = open_file(&path, false, flags)?;
            // SAFETY: F_GETFL on a descriptor `f` owns; no pointers.
            let fl = unsafe { libc::fcntl(f.file.as_raw_fd(), libc::F_GETFL) };
            assert!(fl >= 0);
            assert_eq!(fl & libc::O_DSYNC == libc::O_DSYNC, flags.dsync);
            assert_eq!(fl & libc::O_DIRECT != 0, f.flags.direct);
            assert_eq!(f.flags.dsync, flags.dsync);
        }
        Ok(())
    }

    #[test]
    fn alignment_helpers() -> io::Result<()> {
        assert_eq!(cover(0, 1)?, (0, ALIGN));
        assert_eq!(cover(ALIGN - 1, 2)?, (0, 2 * ALIGN));
        assert_eq!(cover(ALIGN, DIRECT_IO_ALIGN)?, (ALIGN, 2 * ALIGN));
        assert!(cover(u64::MAX - 1, 10).is_err());
        let v = vec![0u8; 3 * DIRECT_IO_ALIGN];
        let skip = (v.as_ptr() as usize).next_multiple_of(DIRECT_IO_ALIGN) - v.as_ptr() as usize;
        assert!(aligned(v[skip..].as_ptr(), ALIGN, DIRECT_IO_ALIGN));
        assert!(!aligned(v[skip + 1..].as_ptr(), ALIGN, DIRECT_IO_ALIGN));
        assert!(!aligned(v[skip..].as_ptr(), 512, DIRECT_IO_ALIGN));
        with_bounce(10_000, |b| {
            assert_eq!(b.len(), 10_000);
            assert!((b.as_ptr() as usize).is_multiple_of(DIRECT_IO_ALIGN));
            Ok(())
        })
    }

    #[test]
    fn sync_dir_of_missing_dir_fails() {
        let fs = OsFs::new();
        let err = fs
            .sync_dir(Path::new("/definitely/not/here/innoxide"))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
