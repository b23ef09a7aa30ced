//! Write threads: a flush batch's home writes issued in parallel by `innodb_write_io_threads`
//! threads. (InnoDB: the write threads of its simulated AIO.)
//!
//! OVERVIEW
//! Once a batch has made its redo durable and synced its doublewrite copy, its home writes
//! (one per run of consecutive pages of one space) no longer depend on each other: it lends its
//! staged copies to the write threads as one job per run, waits until every job has ended,
//! then syncs the tablespaces. A batch of one run writes it itself (nothing to overlap), as do
//! batches while no write thread runs (start-up, shutdown, tests without background threads).
//!
//! INVARIANTS
//! - W1: a batch returns only after every job it made has ended (written, failed or refused):
//!   the files are synced after every write, and the staged copies come back to the
//!   doublewrite area whole.
//! - W2 (fail-stop): a failed write fails its batch (the batch returns the write's error, so no
//!   page of it is marked clean) and puts the engine in fail-stop through `Fil` (tablespace
//!   I1): no write is issued after that, by this batch's other jobs or anyone.
//! - W3: no job is queued once `stop` ran (a batch writes itself a run it could not queue), and
//!   the threads end only when the queue is empty, so no batch waits for a thread that ended.
//!
//! LATCHING: the queue mutex and each batch's mutex are leaves. A batch waits for its jobs
//! holding its doublewrite area mutex and no page latch; a write thread takes no latch but
//! those two mutexes.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::io_queue::IoQueue;
use crate::latch::{Condvar, Mutex};
use crate::tablespace::file::{Fil, Space};
use crate::types::PageNo;

/// A home write: the staged bytes `range`, pages `first..` of `space`.
pub struct HomeWrite {
    pub space: Arc<Space>,
    pub first: PageNo,
    pub range: Range<usize>,
}

/// The jobs of one batch: how many have not ended, and the error that fails the batch.
struct Completion {
    /// Protected by its mutex (a leaf).
    state: Mutex<(usize, Option<Error>)>,
    done: Condvar,
}

impl Completion {
    /// A job ended with `r`. A refusal after another job's failure (PreviousIo) does not
    /// replace that failure's error.
    fn end(&self, r: Result<()>) {
        let mut g = self.state.lock();
        if let Err(e) = r {
            if g.1
                .as_ref()
                .is_none_or(|old| matches!(old, Error::PreviousIo))
            {
                g.1 = Some(e);
            }
        }
        g.0 -= 1;
        if g.0 == 0 {
            self.done.notify_all();
        }
    }

    /// Waits for every job (W1); the batch's error, if any.
    fn wait(&self) -> Result<()> {
        let mut g = self.state.lock();
        while g.0 > 0 {
            self.done.wait(&mut g);
        }
        g.1.take().map_or(Ok(()), Err)
    }
}

pub struct Job {
    write: HomeWrite,
    staged: Arc<Vec<u8>>,
    batch: Arc<Completion>,
}

impl Job {
    /// Writes the run and tells the batch, after letting go of the staged copies (W1).
    fn execute(self, fil: &Fil) {
        let Job {
            write,
            staged,
            batch,
        } = self;
        let r = fil.write_pages(&write.space, write.first, &staged[write.range]);
        drop(staged);
        batch.end(r);
    }
}

/// The job queue and the write threads' state (W3 is the queue's Q1 and Q2).
pub struct WriteThreads(IoQueue<Job>);

impl std::ops::Deref for WriteThreads {
    type Target = IoQueue<Job>;
    fn deref(&self) -> &IoQueue<Job> {
        &self.0
    }
}

impl WriteThreads {
    /// State for `threads` write threads (innodb_write_io_threads); none runs until `start`.
    pub fn new(threads: usize) -> Self {
        WriteThreads(IoQueue::new(threads))
    }
}

impl Inner {
    /// Writes a batch's runs home from its staged copies (W1, W2): on the write threads when
    /// there are several runs and the threads run, else one after another.
    pub(crate) fn write_home(&self, staged: &mut Vec<u8>, runs: Vec<HomeWrite>) -> Result<()> {
        let wt = &self.write_threads;
        if runs.len() < 2 || !wt.is_running() {
            for w in runs {
                self.fil.write_pages(&w.space, w.first, &staged[w.range])?;
            }
            return Ok(());
        }
        let shared = Arc::new(std::mem::take(staged));
        let batch = Arc::new(Completion {
            state: Mutex::new((runs.len(), None)),
            done: Condvar::new(),
        });
        for write in runs {
            let job = Job {
                write,
                staged: shared.clone(),
                batch: batch.clone(),
            };
            if let Err(job) = wt.submit(job) {
                job.execute(&self.fil);
            }
        }
        let r = batch.wait();
        // Every job let go of its copy before it ended (W1).
        *staged = Arc::try_unwrap(shared).unwrap_or_else(|still| still.to_vec());
        r
    }
}

/// Write thread `slot`: writes queued runs until the engine stops and the queue is empty.
pub fn run(inner: &Inner, slot: usize) {
    let ps = inner.bp.page_size();
    while let Some(job) = inner.write_threads.next() {
        let pages = job.write.range.len() / ps;
        inner.write_threads.threads[slot].store(pages as u32, Ordering::Relaxed);
        job.execute(&inner.fil);
        inner.write_threads.threads[slot].store(0, Ordering::Relaxed);
    }
}
