//! Injected faults of a [`SimFs`](super::SimFs): which calls fail, and how.

use std::io;
use std::path::Path;
use std::time::Duration;

/// Which operation a [`Fault`] targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// `File::read_at`.
    Read,
    /// `File::write_at`.
    Write,
    /// `File::sync_data`.
    Sync,
    /// `File::allocate`.
    Allocate,
    /// `File::set_len`.
    SetLen,
    /// `FileSystem::create`.
    Create,
    /// `FileSystem::open`.
    Open,
    /// `FileSystem::remove`.
    Remove,
    /// `FileSystem::rename`.
    Rename,
    /// `FileSystem::sync_dir`.
    SyncDir,
    /// Every operation above.
    Any,
}

/// How a [`Fault`] fails its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// `EIO`; the operation has no effect.
    Eio,
    /// `ENOSPC`; the operation has no effect.
    Enospc,
    /// Writes only: the first half of the buffer, rounded down to a multiple of
    /// [`crate::SECTOR_SIZE`] (possibly nothing), is written, then the call fails with
    /// `ErrorKind::WriteZero`.
    ShortWrite,
    /// `read_at`, `write_at` and `sync_data` only: the call first waits this long, outside the
    /// file system's lock (calls from several threads wait at the same time, as on a device
    /// with many queues), then runs as if there were no fault. Only time changes: results,
    /// counters other than `faults_fired`, crash images and the error faults' counts are what
    /// they would be without it.
    Latency(Duration),
}

impl FaultKind {
    pub(super) fn is_latency(self) -> bool {
        matches!(self, FaultKind::Latency(_))
    }
}

/// A fault to inject into a [`SimFs`](super::SimFs) with
/// [`SimFs::inject`](super::SimFs::inject).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The operation that fails.
    pub op: FaultOp,
    /// Fails the nth matching call counted from injection (1-based; 0 acts as 1).
    pub nth: u64,
    /// How it fails.
    pub kind: FaultKind,
    /// If set, every matching call after the nth fails the same way too.
    pub persistent: bool,
    /// If set, only calls whose path contains this string match (and count).
    pub path_contains: Option<String>,
}

impl Fault {
    /// A one-shot fault on the nth call of `op`, on any path.
    pub fn new(op: FaultOp, nth: u64, kind: FaultKind) -> Self {
        Fault {
            op,
            nth,
            kind,
            persistent: false,
            path_contains: None,
        }
    }

    /// Makes the fault persistent: the nth matching call and all later ones fail.
    pub fn persistent(mut self) -> Self {
        self.persistent = true;
        self
    }

    /// Restricts the fault to calls whose path contains `fragment`.
    pub fn on_path(mut self, fragment: impl Into<String>) -> Self {
        self.path_contains = Some(fragment.into());
        self
    }

    pub(super) fn matches(&self, op: FaultOp, paths: &[&Path]) -> bool {
        if self.kind == FaultKind::ShortWrite && op != FaultOp::Write {
            return false;
        }
        if self.kind.is_latency() && !matches!(op, FaultOp::Read | FaultOp::Write | FaultOp::Sync) {
            return false;
        }
        if self.op != FaultOp::Any && self.op != op {
            return false;
        }
        match &self.path_contains {
            None => true,
            Some(frag) => paths
                .iter()
                .any(|p| p.to_string_lossy().contains(frag.as_str())),
        }
    }
}

/// A fault with the number of matching calls it has counted since injection.
#[derive(Debug)]
pub(super) struct ArmedFault {
    pub(super) fault: Fault,
    pub(super) seen: u64,
}

pub(super) fn fault_error(kind: FaultKind) -> io::Error {
    match kind {
        FaultKind::Eio => io::Error::from_raw_os_error(libc::EIO),
        FaultKind::Enospc => io::Error::from_raw_os_error(libc::ENOSPC),
        FaultKind::ShortWrite => io::Error::new(io::ErrorKind::WriteZero, "short write"),
        FaultKind::Latency(_) => unreachable!("a latency fault is not an error"),
    }
}
