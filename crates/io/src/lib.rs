//! innoxide-io: every byte the database persists goes through this crate.
//!
//! # Purpose
//!
//! The storage engine never touches `std::fs` directly; it holds an
//! `Arc<dyn FileSystem>` and opens `Arc<dyn File>` handles through it. Production uses
//! [`OsFs`] (plain POSIX files). Tests use [`SimFs`], a simulated disk that can lose
//! unsynced data, tear writes at sector granularity, crash at a chosen sync, and inject
//! EIO / ENOSPC / short writes, so that recovery code can be exercised deterministically.
//!
//! This crate is the one place in the workspace allowed to use `std::fs::File` and
//! `std::fs::OpenOptions` (the workspace `clippy.toml` forbids them elsewhere), hence the
//! crate-level `allow(clippy::disallowed_types)` below.
//!
//! # OVERVIEW (the persistence model)
//!
//! The contract of [`FileSystem`] / [`File`] is the weak one that POSIX file systems
//! actually give (after SQLite's `test6.c` and the ALICE study):
//!
//! - A `write_at` is visible to reads at once but survives a power loss only after a
//!   `sync_data` of that file. Until then any subset of the write's 512-byte sectors may
//!   reach the platter, and a sector being written may come back as garbage.
//! - Size changes (`set_len`, growing `allocate`, extending writes) follow the same rule.
//! - Directory entries (create, remove, rename) are visible at once but survive a power
//!   loss only after `sync_dir` of the parent directory (of both parents for a rename).
//!   A file whose data was synced but whose entry was not is gone after a crash.
//! - Handles are independent of names: an unlinked file stays readable and writable through
//!   the handles that were open, as on unix.
//! - A handle opened with [`OpenFlags::dsync`] (O_DSYNC) makes each of its writes durable
//!   before the write returns, with the size change it implies; a power loss while the write
//!   is in flight may still leave any subset of its sectors, torn. Size changes by `set_len`
//!   and `allocate` still need `sync_data`.
//! - [`OpenFlags::direct`] (O_DIRECT) only keeps the bytes out of the OS page cache: without
//!   `dsync` its writes are as volatile as buffered ones until `sync_data` (the drive's own
//!   cache, the file's size and its extents still need the flush).
//!
//! [`SimFs`] implements exactly this model; its module documentation describes how a crash
//! image is chosen.
//!
//! # INVARIANTS
//!
//! - I1: In [`SimFs`] a byte reaches a file's durable content only through `sync_data` of
//!   that file, through a completed write of a `dsync` handle, or through a crash image
//!   choosing to keep a pending write.
//! - I2: In [`SimFs`] a file's live content equals its durable content with its pending
//!   operations (writes and length changes since the last sync) replayed in order. Only the
//!   test surgery helpers (`corrupt`, `truncate_durable`) may break this, on purpose.
//! - I3: In [`SimFs`] the durable namespace with every pending directory effect replayed in
//!   order equals the live namespace; `sync_dir(d)` removes exactly the effects on entries
//!   whose parent is `d` after making those entries durable.
//! - I4: A failed operation has no effect, except that a failed write may have written a
//!   prefix of its buffer (real disks and [`FaultKind::ShortWrite`]).
//! - I5: Once a [`SimFs`] is crashed, every call on it and on all of its handles fails with
//!   a simulated-crash error; only a crash image ([`SimFs::crash_image`]) continues.
//! - I6: Every random choice of [`SimFs`] comes from an RNG seeded by the caller, so the same
//!   seed and the same sequence of calls give the same crash images, byte for byte.
//!
//! # LATCHING
//!
//! [`OsFs`] holds no locks; concurrency is the kernel's. [`SimFs`] keeps its whole state
//! (files, namespaces, counters, faults) behind one `parking_lot::Mutex`, taken once per
//! call and never held across a call into user code, so there is no lock order to respect.

// This crate is the one place in the workspace allowed to touch std::fs (see above).
#![allow(clippy::disallowed_types)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod os;
mod sim;

pub use os::{OsFs, DIRECT_IO_ALIGN};
pub use sim::{is_simulated_crash, CrashMode, Fault, FaultKind, FaultOp, SimFs, SimStats};

/// The granularity at which the simulated disk tears writes: sector boundaries are absolute
/// file offsets that are multiples of this size.
pub const SECTOR_SIZE: usize = 512;

/// How a handle reaches the disk (innodb_flush_method chooses these per kind of file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpenFlags {
    /// O_DIRECT: reads and writes bypass the OS page cache. Callers need not align anything
    /// ([`OsFs`] bounces unaligned requests through an aligned buffer). A file system may refuse
    /// it (tmpfs before Linux 6.6): the handle is then buffered and [`File::flags`] says so.
    pub direct: bool,
    /// O_DSYNC: each write is durable when it returns (see the crate documentation).
    pub dsync: bool,
}

impl OpenFlags {
    /// Writes go to the OS page cache; `sync_data` makes them durable.
    pub const BUFFERED: OpenFlags = OpenFlags {
        direct: false,
        dsync: false,
    };
    /// Buffered, each write durable when it returns.
    pub const DSYNC: OpenFlags = OpenFlags {
        direct: false,
        dsync: true,
    };
    /// Around the page cache; `sync_data` still makes writes durable.
    pub const DIRECT: OpenFlags = OpenFlags {
        direct: true,
        dsync: false,
    };
    /// Around the page cache, each write durable when it returns (FUA on most devices).
    pub const DIRECT_DSYNC: OpenFlags = OpenFlags {
        direct: true,
        dsync: true,
    };
}

/// A file system: the namespace half of the I/O contract (see the crate documentation for
/// the durability model).
pub trait FileSystem: Send + Sync + 'static {
    /// Opens an existing file for reading and writing with the given flags. NotFound if absent.
    fn open_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>>;
    /// Opens an existing file for reading and writing, buffered. NotFound if absent.
    fn open(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.open_with(path, OpenFlags::BUFFERED)
    }
    /// Opens an existing file for reading only (one the server may read but not write, as
    /// LOAD DATA's); writes through the handle fail. NotFound if absent.
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.open(path)
    }
    /// Creates a new empty file with the given flags; AlreadyExists if present. The
    /// directory entry is durable only after `sync_dir(parent)`, whatever the flags.
    fn create_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>>;
    /// Creates a new empty file, buffered (see `create_with`).
    fn create(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.create_with(path, OpenFlags::BUFFERED)
    }
    /// Whether a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> io::Result<bool>;
    /// Unlinks a file. Durable only after `sync_dir(parent)`. Open handles stay usable (unix
    /// semantics).
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Renames (replacing `to` if it exists). Durable only after `sync_dir` of both parents.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Creates a directory and its parents (ok if it exists).
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Removes an empty directory.
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
    /// Lists the entries (files and directories) directly inside `path`, as full paths, sorted.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>>;
    /// Whether `path` is an existing directory (false if absent).
    fn is_dir(&self, path: &Path) -> io::Result<bool>;
    /// Makes the directory's entries (creates, removes, renames in it) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// An open file: the data half of the I/O contract. Handles are independent of the name the
/// file was opened by (unix semantics).
#[allow(clippy::len_without_is_empty)]
pub trait File: Send + Sync {
    /// Reads exactly buf.len() bytes at offset; UnexpectedEof if the file is shorter.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of buf at offset (extending the file if needed), or returns an error.
    /// A failed write may have written a prefix.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// fdatasync: every write and size change made through any handle of this file becomes
    /// durable.
    fn sync_data(&self) -> io::Result<()>;
    /// The current (live, not necessarily durable) length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Ensures the file is at least `len` bytes, reserving the space (posix_fallocate), so
    /// later writes inside it cannot fail with ENOSPC. May fail with ENOSPC itself. Never
    /// shrinks.
    fn allocate(&self, len: u64) -> io::Result<()>;
    /// Truncates or extends (with zeros) to exactly len.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The flags in force: those the handle was opened with, except `direct` when the file
    /// system refused O_DIRECT (the handle then works buffered; `dsync` is always kept).
    fn flags(&self) -> OpenFlags;
}

/// Whether `e` is "no space left on device" (raw OS error ENOSPC), from the OS or simulated.
pub fn is_enospc(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOSPC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_enospc_matches_only_enospc() {
        assert!(is_enospc(&io::Error::from_raw_os_error(libc::ENOSPC)));
        assert!(!is_enospc(&io::Error::from_raw_os_error(libc::EIO)));
        assert!(!is_enospc(&io::Error::other("no space")));
        assert!(!is_enospc(&io::Error::from(io::ErrorKind::StorageFull)));
    }

    #[test]
    fn traits_are_object_safe_and_shareable() {
        fn assert_send_sync<T: Send + Sync + ?Sized>() {}
        assert_send_sync::<dyn FileSystem>();
        assert_send_sync::<dyn File>();
        let fs: Arc<dyn FileSystem> = Arc::new(OsFs::new());
        assert!(fs.is_dir(Path::new("/")).unwrap_or(false));
    }
}
