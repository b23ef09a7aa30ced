//! Online buffer pool resize (SET GLOBAL innodb_buffer_pool_size; InnoDB: buf_pool_resize).
//!
//! One resize runs at a time (`ResizeStatus::claim`), in its own thread. Growing adds chunks at
//! the end of every instance and puts their frames on the free lists. Shrinking withdraws each
//! instance's last chunks (buffer_pool I6): passes evict the clean pages there and flush the
//! dirty ones (LRU flushes through the single-page doublewrite area) until every frame in the
//! range is withdrawn; then the chunks' page memory is freed. Pages in the range are evicted
//! rather than relocated, so a hot one is read again at its next use.
//! Progress and the outcome are in Innodb_buffer_pool_resize_status.
//!
//! Latches: none is held between passes; a pass holds one instance's LRU mutex for a walk of its
//! list; flushes take page latches with try-S only (flush module), so a resize never waits on a
//! page latch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::latch::Mutex;

use crate::doublewrite::{DBLWR_AREA_PAGES, SINGLE_PAGE_AREA};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::flush::Caller;

/// Where a resize is (Innodb_buffer_pool_resize_status).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ResizePhase {
    #[default]
    NotStarted,
    Running(String),
    Completed {
        at: SystemTime,
    },
    Failed(String),
}

#[derive(Default)]
pub struct ResizeStatus {
    pub phase: Mutex<ResizePhase>,
    running: AtomicBool,
}

impl ResizeStatus {
    /// Marks a resize as started; false if one is running.
    pub fn claim(&self) -> bool {
        !self.running.swap(true, Ordering::AcqRel)
    }

    fn set(&self, p: ResizePhase) {
        *self.phase.lock() = p;
    }
}

/// (current, wanted) pool bytes for `chunks` chunks per instance.
fn sizes(inner: &Inner, chunks: u32) -> (u64, u64) {
    let from = inner.bp.n_frames() as u64 * inner.bp.page_size() as u64;
    let to =
        inner.bp.geometry().chunk_bytes() * u64::from(chunks) * inner.bp.instances().len() as u64;
    (from, to)
}

/// Reports a claimed resize as started, before the statement that asked for it returns, so
/// the status never shows an earlier resize's outcome as this one's.
pub fn begin(inner: &Inner, chunks: u32) {
    let (from, to) = sizes(inner, chunks);
    let unit = inner.bp.geometry().chunk_bytes();
    inner.stats.bp_resize.set(ResizePhase::Running(format!(
        "Resizing buffer pool from {from} to {to} (unit={unit})."
    )));
}

/// Resizes the pool to `chunks` chunks per instance, then releases the claim.
pub fn run(inner: &Inner, chunks: u32) {
    let st = &inner.stats.bp_resize;
    let (from, to) = sizes(inner, chunks);
    if to == from {
        st.set(ResizePhase::Running(format!(
            "Size did not change (old size = new size = {to}. Nothing to do."
        )));
        st.running.store(false, Ordering::Release);
        return;
    }
    tracing::info!("InnoDB: Resizing buffer pool from {from} to {to} (unit = chunk)");
    let r = if to > from {
        grow(inner, chunks)
    } else {
        shrink(inner, chunks)
    };
    match r {
        Ok(()) => {
            tracing::info!("InnoDB: Completed resizing buffer pool: {to} bytes");
            st.set(ResizePhase::Completed {
                at: SystemTime::now(),
            });
        }
        Err(e) => {
            tracing::warn!("InnoDB: buffer pool resize stopped: {e}");
            st.set(ResizePhase::Failed(format!(
                "Resizing buffer pool failed: {e}"
            )));
        }
    }
    st.running.store(false, Ordering::Release);
}

fn grow(inner: &Inner, chunks: u32) -> Result<()> {
    inner.stats.bp_resize.set(ResizePhase::Running(
        "Adding chunks to the buffer pool.".into(),
    ));
    for ii in 0..inner.bp.instances().len() {
        inner.bp.grow_instance(ii, chunks);
    }
    Ok(())
}

fn shrink(inner: &Inner, chunks: u32) -> Result<()> {
    let bp = &inner.bp;
    let st = &inner.stats.bp_resize;
    let n = bp.instances().len();
    let mut total = 0u64;
    for ii in 0..n {
        total += u64::from(bp.begin_withdraw(ii, chunks));
    }
    let cancel = |e: Error| {
        for ii in 0..n {
            bp.cancel_withdraw(ii);
        }
        Err(e)
    };
    let started = Instant::now();
    let mut last_note = started;
    loop {
        let mut left = 0u64;
        let mut dirty = Vec::new();
        for ii in 0..n {
            left += u64::from(bp.withdraw_pass(ii, &mut dirty));
        }
        st.set(ResizePhase::Running(format!(
            "Withdrawing blocks to be shrunken. ({}/{total})",
            total - left
        )));
        if left == 0 {
            break;
        }
        if inner.shutting_down.load(Ordering::Acquire) {
            return cancel(Error::Startup("the server is shutting down".into()));
        }
        dirty.retain(|&f| bp.pin_for_flush(f));
        let mut written = 0;
        for batch in dirty.chunks(DBLWR_AREA_PAGES as usize) {
            match inner.flush_frames(batch.to_vec(), SINGLE_PAGE_AREA, Caller::Lru) {
                Ok(w) => written += w,
                Err(e) => return cancel(e),
            }
        }
        if written == 0 {
            // What is left is pinned or waits for redo: let its users finish.
            std::thread::sleep(Duration::from_millis(10));
        }
        if last_note.elapsed() >= Duration::from_secs(10) {
            last_note = Instant::now();
            tracing::warn!(
                "InnoDB: buffer pool resize: {left} of {total} blocks still in use after {:?}; \
                 will retry to withdraw them",
                started.elapsed()
            );
        }
    }
    for ii in 0..n {
        bp.finish_withdraw(ii);
    }
    Ok(())
}
