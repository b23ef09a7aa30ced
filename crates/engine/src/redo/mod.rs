//! Redo log: LSN allocation, log buffer, writing with group commit, checkpoints.
//! (InnoDB: log0log, log0write, log0chkp.) Byte layout: docs/format/redo.md.
//!
//! OVERVIEW
//! A committing mini-transaction appends one group (header + records) to the log buffer under
//! the log mutex, which is also where its pages join the flush lists (buffer_pool I3). A thread
//! that needs its redo on disk calls `write_up_to(lsn, flush)`: one thread at a time (the writer
//! mutex) takes the whole buffer, writes it and, if asked, syncs; the threads that arrive
//! meanwhile do not queue on the writer mutex (they would be handed it one at a time, a context
//! switch each, after every fsync) but enter the waiter list with the LSN they need and sleep.
//! After a write the writer wakes the waiters that needed only that write; after releasing the
//! mutex, those whose LSN is now durable, and the first of the rest, which becomes the next
//! writer: a waiter is woken once, when it can return or must write (W1). One fsync makes many
//! commits durable (group commit).
//!
//! PROGRESS MARKERS (each only grows)
//! - `lsn`: end of the last group appended to the buffer. Advanced by mtr commit (log mutex).
//! - `written_lsn`: end of the log bytes handed to the files. Advanced by the writer.
//! - `flushed_lsn`: end of the log bytes known durable (fdatasync; with innodb_flush_method=
//!   O_DSYNC the write itself, file.rs I5). Advanced by the writer.
//! - `checkpoint_lsn`: every page change below it is durable in its tablespace; recovery starts
//!   here. Advanced by `checkpoint` (checkpoint mutex).
//!
//!   checkpoint_lsn <= flushed_lsn <= written_lsn <= lsn
//!   lsn - checkpoint_lsn <= capacity  (the writer waits rather than overwrite: I2)
//!
//! INVARIANTS
//! - I1: a page is written to its tablespace only after `flushed_lsn >= its newest_modification`
//!   (enforced by the flush module calling `write_up_to` first).
//! - I2: the writer never writes a byte at an LSN `>= checkpoint_lsn + capacity`; when the log
//!   is that full it waits for a checkpoint (a sync flush), never overwrites.
//! - I3: a commit with innodb_flush_log_at_trx_commit=1 returns only after
//!   `flushed_lsn >= its commit LSN`.
//! - W1: a waiter is in the list before it checks whether a writer is at work, and a writer
//!   looks at the list only after releasing the writer mutex; so a waiter that goes to sleep
//!   behind a writer is seen by that writer's wake-up (woken if covered, or made the next
//!   writer if it is the first of those left). Sleeps are bounded (10 ms), so a lost wake-up
//!   costs time, never a hang; an I/O failure wakes everyone (they return the error).
//! - W2: the waiter list's mutex is held only to add, take out or look at entries: `wake`
//!   takes the covered waiters out under it and unparks them after releasing it, and a woken
//!   waiter whose LSN is done leaves without touching the list (`wake` took it out; in the rare
//!   case it was done before it slept, its entry stays until the next `wake` takes it out and
//!   unparks it once more, which a parked thread treats as the spurious wake-up it must
//!   expect anyway).
//!
//! LATCHING: writer mutex -> log mutex (the writer takes the buffer under both). The log mutex
//! is held only to append or swap buffers; flush-list mutexes nest inside it. The checkpoint
//! mutex is outermost and is never taken with the log mutex held. The progress mutex and the
//! waiter list are leaves: taken alone to wait, enter or signal (never while waiting for
//! another latch).
//! Contended log mutex acquisitions count as `log_sys_mutex`; a `write_up_to` that waits for
//! another thread's write/fsync counts once as `log_flush` (sync_stats).

pub mod file;
pub mod record;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::latch::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::sync_stats::{WaitMutex, WaitStat, WaitTimer};
use crate::types::Lsn;
use file::{Checkpoint, LogFiles};

pub const GROUP_HEADER: usize = 16;

/// Computes the CRC of a group: bytes [0,4) and [16,len) (docs/format/redo.md).
pub fn group_crc(len: u32, body: &[u8]) -> u32 {
    let c = crc32c::crc32c(&len.to_be_bytes());
    crc32c::crc32c_append(c, body)
}

struct LogBuf {
    lsn: Lsn,
    /// Bytes [buf_lsn, lsn) not yet taken by the writer.
    buf: Vec<u8>,
    buf_lsn: Lsn,
}

struct Writer {
    /// Bytes taken from the buffer but not yet written (only non-empty while the log is full).
    pending: Vec<u8>,
    pending_lsn: Lsn,
}

/// Counters (SHOW STATUS names in comments).
#[derive(Default)]
pub struct LogStats {
    /// Innodb_log_write_requests: groups appended.
    pub write_requests: AtomicU64,
    /// Innodb_log_writes: writes to the log files.
    pub writes: AtomicU64,
    /// Innodb_os_log_written: bytes written to the log files.
    pub os_log_written: AtomicU64,
    /// Innodb_os_log_fsyncs
    pub os_log_fsyncs: AtomicU64,
    /// Innodb_log_waits: appends that waited for buffer space.
    pub log_waits: AtomicU64,
    /// Times the writer had to wait for a checkpoint because the ring was full.
    pub full_waits: AtomicU64,
    pub checkpoints: AtomicU64,
}

/// Age limits derived from the log capacity (InnoDB: log_calc_max_ages).
#[derive(Clone, Copy, Debug)]
pub struct Margins {
    pub capacity: u64,
    /// Page cleaners flush hard above this modified age (adaptive flushing's async point).
    pub max_modified_age_async: u64,
    /// User threads wait for a synchronous flush above this age.
    pub max_modified_age_sync: u64,
    /// A checkpoint is requested above this checkpoint age.
    pub max_checkpoint_age_async: u64,
    pub max_checkpoint_age: u64,
}

impl Margins {
    /// Redo the log keeps free above the checkpoint limits for mini-transactions in flight: an
    /// eighth of the capacity, and at least 48 pages (InnoDB reserves a few pages per thread).
    pub fn reserve(capacity: u64, page_size: usize) -> u64 {
        (capacity / 8).max(48 * page_size as u64)
    }

    pub fn new(capacity: u64, page_size: usize) -> Self {
        let margin = capacity.saturating_sub(Self::reserve(capacity, page_size));
        Margins {
            capacity,
            max_modified_age_async: margin - margin / 8,
            max_modified_age_sync: margin - margin / 16,
            max_checkpoint_age_async: margin - margin / 32,
            max_checkpoint_age: margin,
        }
    }
}

/// A thread asleep in `write_up_to` until the log is written (or durable) up to `lsn`.
struct Waiter {
    lsn: Lsn,
    flush: bool,
    thread: std::thread::Thread,
}

pub struct Log {
    pub files: LogFiles,
    buf: WaitMutex<LogBuf>,
    buf_capacity: usize,
    writer: Mutex<Writer>,
    lsn: AtomicU64,
    written_lsn: AtomicU64,
    flushed_lsn: AtomicU64,
    checkpoint_lsn: AtomicU64,
    checkpoint_no: AtomicU64,
    checkpoint_mutex: Mutex<()>,
    /// Signalled when a checkpoint advances (a writer waiting for room in the ring, I2).
    progress: (Mutex<()>, Condvar),
    /// Threads waiting in `write_up_to` for another thread's write or fsync (W1).
    waiters: Mutex<Vec<Waiter>>,
    pub margins: Margins,
    failed: Arc<AtomicBool>,
    pub stats: LogStats,
    /// Waits in `write_up_to` for another thread's write or fsync (sync_stats `log_flush`).
    pub flush_waits: WaitStat,
}

impl Log {
    /// Opens the log positioned at `end_lsn` (after recovery) with the given last checkpoint.
    pub fn new(files: LogFiles, buf_capacity: usize, cp: Checkpoint, end_lsn: Lsn) -> Self {
        let margins = Margins::new(files.capacity, files.page_size as usize);
        let failed = files.failed_flag();
        Log {
            buf: WaitMutex::new(LogBuf {
                lsn: end_lsn,
                buf: Vec::with_capacity(buf_capacity),
                buf_lsn: end_lsn,
            }),
            buf_capacity,
            writer: Mutex::new(Writer {
                pending: Vec::with_capacity(buf_capacity),
                pending_lsn: end_lsn,
            }),
            lsn: AtomicU64::new(end_lsn),
            written_lsn: AtomicU64::new(end_lsn),
            flushed_lsn: AtomicU64::new(end_lsn),
            checkpoint_lsn: AtomicU64::new(cp.lsn),
            checkpoint_no: AtomicU64::new(cp.no),
            checkpoint_mutex: Mutex::new(()),
            progress: (Mutex::new(()), Condvar::new()),
            waiters: Mutex::new(Vec::new()),
            margins,
            failed,
            files,
            stats: LogStats::default(),
            flush_waits: WaitStat::default(),
        }
    }

    /// Waits on the log buffer mutex (sync_stats `log_sys_mutex`).
    pub fn buf_waits(&self) -> &WaitStat {
        self.buf.stat()
    }

    pub fn lsn(&self) -> Lsn {
        self.lsn.load(Ordering::Acquire)
    }
    pub fn written_lsn(&self) -> Lsn {
        self.written_lsn.load(Ordering::Acquire)
    }
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed_lsn.load(Ordering::Acquire)
    }
    pub fn checkpoint_lsn(&self) -> Lsn {
        self.checkpoint_lsn.load(Ordering::Acquire)
    }
    pub fn checkpoint_no(&self) -> u64 {
        self.checkpoint_no.load(Ordering::Acquire)
    }
    pub fn checkpoint_age(&self) -> u64 {
        self.lsn() - self.checkpoint_lsn()
    }

    /// Appends one group built from `body` (the records of a mini-transaction). `under_mutex`
    /// runs with the log mutex held and receives (start_lsn, end_lsn): the mtr stamps its pages
    /// and puts them on the flush lists there. Returns (start_lsn, end_lsn).
    pub fn append(&self, body: &[u8], under_mutex: impl FnOnce(Lsn, Lsn)) -> Result<(Lsn, Lsn)> {
        let len = GROUP_HEADER + body.len();
        let len32 = u32::try_from(len).map_err(|_| {
            Error::RowTooLarge("a mini-transaction produced more than 4 GiB of redo".into())
        })?;
        let crc = group_crc(len32, body);
        let mut waited = false;
        loop {
            if self.failed.load(Ordering::Acquire) {
                return Err(Error::PreviousIo);
            }
            let mut g = self.buf.lock();
            if !g.buf.is_empty() && g.buf.len() + len > self.buf_capacity {
                let upto = g.lsn;
                drop(g);
                if !waited {
                    self.stats.log_waits.fetch_add(1, Ordering::Relaxed);
                    waited = true;
                }
                self.write_up_to(upto, false)?;
                continue;
            }
            let start = g.lsn;
            let end = start + len as u64;
            g.buf.extend_from_slice(&len32.to_be_bytes());
            g.buf.extend_from_slice(&start.to_be_bytes());
            g.buf.extend_from_slice(&crc.to_be_bytes());
            g.buf.extend_from_slice(body);
            g.lsn = end;
            self.lsn.store(end, Ordering::Release);
            under_mutex(start, end);
            drop(g);
            self.stats.write_requests.fetch_add(1, Ordering::Relaxed);
            return Ok((start, end));
        }
    }

    /// Runs `f` with the log mutex held, so no group is appended meanwhile (used to compute a
    /// checkpoint LSN consistent with the flush lists).
    pub fn with_mutex<R>(&self, f: impl FnOnce(Lsn) -> R) -> R {
        let g = self.buf.lock();
        f(g.lsn)
    }

    /// Makes the log written (and, with `flush`, durable) at least up to `lsn`.
    pub fn write_up_to(&self, lsn: Lsn, flush: bool) -> Result<()> {
        let done = |s: &Self| {
            if flush {
                s.flushed_lsn() >= lsn
            } else {
                s.written_lsn() >= lsn
            }
        };
        // One wait per call that had to wait for another writer, however many rounds it took.
        let mut waited = WaitTimer::new(&self.flush_waits);
        loop {
            if done(self) {
                return Ok(());
            }
            if self.failed.load(Ordering::Acquire) {
                return Err(Error::PreviousIo);
            }
            let Some(mut w) = self.writer.try_lock() else {
                waited.start();
                // Another thread is writing: sleep until it wakes us (W1).
                let me = std::thread::current();
                self.waiters.lock().push(Waiter {
                    lsn,
                    flush,
                    thread: me.clone(),
                });
                if !done(self) && self.writer.is_locked() && !self.failed.load(Ordering::Acquire) {
                    std::thread::park_timeout(Duration::from_millis(10));
                }
                // W2: done means `wake` took the entry out (almost always).
                if !done(self) {
                    self.waiters.lock().retain(|x| x.thread.id() != me.id());
                }
                continue;
            };
            if done(self) {
                return Ok(());
            }
            if w.pending.is_empty() {
                let mut g = self.buf.lock();
                std::mem::swap(&mut g.buf, &mut w.pending);
                w.pending_lsn = g.buf_lsn;
                g.buf_lsn = g.lsn;
            }
            // I2: never write at or beyond checkpoint_lsn + capacity.
            let limit = self.checkpoint_lsn() + self.files.capacity;
            let room = limit.saturating_sub(w.pending_lsn);
            let n = (room.min(w.pending.len() as u64)) as usize;
            if n > 0 {
                let at = w.pending_lsn;
                if let Err(e) = self.files.write(at, &w.pending[..n]) {
                    // Wake the waiters: they see `failed` (set by the files) and return.
                    drop(w);
                    self.wake(true);
                    return Err(e);
                }
                w.pending.drain(..n);
                w.pending_lsn += n as u64;
                self.written_lsn.store(w.pending_lsn, Ordering::Release);
                self.stats.writes.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .os_log_written
                    .fetch_add(n as u64, Ordering::Relaxed);
                // Those that needed only the write (innodb_flush_log_at_trx_commit=2).
                self.wake(false);
            }
            if flush && self.flushed_lsn() < self.written_lsn() {
                let target = self.written_lsn();
                let syncs = match self.files.sync() {
                    Ok(n) => n,
                    Err(e) => {
                        drop(w);
                        self.wake(true);
                        return Err(e);
                    }
                };
                self.flushed_lsn.fetch_max(target, Ordering::AcqRel);
                self.stats
                    .os_log_fsyncs
                    .fetch_add(u64::from(syncs), Ordering::Relaxed);
            }
            if w.pending.is_empty() {
                // Done with the files: release the writer mutex, then wake the waiters.
                drop(w);
                self.wake(true);
            } else {
                // The ring is full: wait for a checkpoint instead of overwriting (I2).
                drop(w);
                self.wake(true);
                if self.stats.full_waits.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(
                        "InnoDB: the redo log is full (LSN {}, last checkpoint {}, capacity {}); \
                         waiting for a checkpoint",
                        self.lsn(),
                        self.checkpoint_lsn(),
                        self.files.capacity
                    );
                }
                self.wait_progress(Duration::from_millis(10));
            }
        }
    }

    /// Wakes the waiters whose LSN is now written (durable, for those that need it), or all
    /// after an I/O failure; with `next`, also the first of the others, to write next (W1).
    fn wake(&self, next: bool) {
        let failed = self.failed.load(Ordering::Acquire);
        let (written, flushed) = (self.written_lsn(), self.flushed_lsn());
        let (woken, first) = {
            let mut list = self.waiters.lock();
            let woken: Vec<Waiter> = list
                .extract_if(.., |x| {
                    failed || x.lsn <= if x.flush { flushed } else { written }
                })
                .collect();
            let first = if next {
                list.iter().min_by_key(|x| x.lsn).map(|x| x.thread.clone())
            } else {
                None
            };
            (woken, first)
        };
        // W2: the futex calls happen after the list's mutex is released.
        for x in woken {
            x.thread.unpark();
        }
        if let Some(t) = first {
            t.unpark();
        }
    }

    fn notify(&self) {
        let _g = self.progress.0.lock();
        self.progress.1.notify_all();
    }

    /// Waits (bounded) for a checkpoint or buffer progress.
    pub fn wait_progress(&self, timeout: Duration) {
        let mut g = self.progress.0.lock();
        self.progress.1.wait_for(&mut g, timeout);
    }

    /// Writes a checkpoint at `cp_lsn`, which the caller computed such that every page change
    /// below it is durable in its tablespace. The log is made durable up to `cp_lsn` first.
    pub fn write_checkpoint(&self, cp_lsn: Lsn) -> Result<bool> {
        let _c = self.checkpoint_mutex.lock();
        if cp_lsn <= self.checkpoint_lsn() {
            return Ok(false);
        }
        self.write_up_to(cp_lsn, true)?;
        let cp = Checkpoint {
            no: self.checkpoint_no() + 1,
            lsn: cp_lsn,
            end_lsn: self.lsn(),
        };
        if self.files.write_checkpoint(&cp)? {
            self.stats.os_log_fsyncs.fetch_add(1, Ordering::Relaxed);
        }
        self.checkpoint_no.store(cp.no, Ordering::Release);
        self.checkpoint_lsn.store(cp_lsn, Ordering::Release);
        self.stats.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.notify();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use innoxide_io::{FileSystem, SimFs};
    use std::path::Path;

    fn log(fs: &Arc<SimFs>, capacity_files: u64) -> Log {
        let dynfs: Arc<dyn FileSystem> = fs.clone();
        dynfs.create_dir_all(Path::new("/d")).unwrap();
        let failed = Arc::new(AtomicBool::new(false));
        let files = LogFiles::create(
            &dynfs,
            Path::new("/d"),
            2,
            4096 + capacity_files,
            4096,
            file::LOG_START_LSN,
            innoxide_io::OpenFlags::BUFFERED,
            failed,
        )
        .unwrap();
        let cp = files.read_checkpoint().unwrap();
        Log::new(files, 1 << 16, cp, cp.lsn)
    }

    #[test]
    fn append_write_flush_and_read_back_across_wrap() {
        let fs = Arc::new(SimFs::new(1));
        let log = log(&fs, 8192);
        let mut ends = Vec::new();
        for i in 0..100u32 {
            let body = vec![i as u8; 100 + i as usize];
            let (_, end) = log.append(&body, |_, _| {}).unwrap();
            ends.push(end);
            // Keep the checkpoint close so the ring can wrap.
            if i % 10 == 9 {
                log.write_up_to(end, true).unwrap();
                log.write_checkpoint(end).unwrap();
            }
        }
        let last = *ends.last().unwrap();
        log.write_up_to(last, true).unwrap();
        assert_eq!(log.flushed_lsn(), last);
        assert!(last - file::LOG_START_LSN > log.files.capacity, "wrapped");
        // The last group can be read back and checks out.
        let start = ends[98];
        let mut b = vec![0u8; (last - start) as usize];
        log.files.read(start, &mut b).unwrap();
        let len = crate::mach::read_u32(&b, 0);
        assert_eq!(u64::from(len), last - start);
        assert_eq!(crate::mach::read_u64(&b, 4), start);
        assert_eq!(crate::mach::read_u32(&b, 12), group_crc(len, &b[16..]));
        assert!(log.stats.os_log_fsyncs.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn writer_waits_instead_of_overwriting() {
        let fs = Arc::new(SimFs::new(2));
        let log = Arc::new(log(&fs, 4096));
        // Fill more than the capacity without a checkpoint: the writer must not finish.
        let mut last = 0;
        for _ in 0..120 {
            last = log.append(&[7u8; 100], |_, _| {}).unwrap().1;
        }
        let l2 = log.clone();
        let t = std::thread::spawn(move || l2.write_up_to(last, true));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!t.is_finished(), "writer overwrote un-checkpointed redo");
        assert!(log.written_lsn() <= log.checkpoint_lsn() + log.files.capacity);
        let mid = log.written_lsn();
        log.write_checkpoint(mid).unwrap();
        // Advance the checkpoint until everything fits.
        loop {
            let w = log.written_lsn();
            if w >= last {
                break;
            }
            log.write_checkpoint(w).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        t.join().unwrap().unwrap();
        assert!(log.stats.full_waits.load(Ordering::Relaxed) > 0);
    }
}
