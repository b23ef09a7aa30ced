//! [`OsFs`]: the real file system, through `std::fs` and positional unix I/O.
//!
//! Every call maps to one or two system calls; errors are propagated unchanged so that
//! callers can inspect `raw_os_error()` (for example with [`crate::is_enospc`]).

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{File, FileSystem};

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
}

impl FileSystem for OsFs {
    fn open(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        let file = fs::OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Arc::new(OsFile { file }))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        let file = fs::OpenOptions::new().read(true).open(path)?;
        Ok(Arc::new(OsFile { file }))
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(Arc::new(OsFile { file }))
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
        self.file.read_exact_at(buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
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

    #[test]
    fn sync_dir_of_missing_dir_fails() {
        let fs = OsFs::new();
        let err = fs
            .sync_dir(Path::new("/definitely/not/here/innoxide"))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
