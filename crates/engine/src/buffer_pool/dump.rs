//! Buffer pool dump and load (InnoDB's buf0dump): the page ids of the hottest part of each
//! LRU list are written to `ib_buffer_pool` at shutdown and read back in the background at
//! startup, so a restarted server is warm. Format: docs/format/buffer-pool-dump.md.
//!
//! INVARIANTS
//! - D1: the dump file appears under its final name only complete and synced (written as
//!   `.incomplete`, synced, renamed, directory synced).
//! - D2: loading never evicts: it reads a page only when its instance has a free frame and
//!   skips it otherwise, so pages the workload made hot since startup stay.
//! - D3: loading only reads pages through the normal read path (checksums verified); a
//!   stale or damaged file costs useless reads, never wrong data.
//! - D4: the load stops when the engine shuts down.
//!
//! Latches: the dump takes each instance's LRU mutex alone, for the time of a walk over its
//! list; the load fixes one page at a time with an S latch and releases it at once. A loaded
//! page is not accessed: read-ahead waits for its first real access.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use crate::latch::Mutex;

use crate::engine::Inner;
use crate::error::Result;
use crate::types::PageId;

/// The dump file's name in the data directory (innodb_buffer_pool_filename).
pub const FILE_NAME: &str = "ib_buffer_pool";

/// Where a dump or a load is (Innodb_buffer_pool_dump_status / _load_status).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Phase {
    #[default]
    NotStarted,
    /// `done` of `total` pages.
    Running {
        done: u64,
        total: u64,
    },
    Completed {
        at: SystemTime,
        pages: u64,
    },
    Failed(String),
}

#[derive(Default)]
pub struct DumpStatus {
    pub dump: Mutex<Phase>,
    pub load: Mutex<Phase>,
    /// innodb_buffer_pool_load_abort: the running load stops at its next page.
    pub abort_load: std::sync::atomic::AtomicBool,
}

/// Marks a dump or load as started unless one is running; false if one is.
pub fn claim(phase: &Mutex<Phase>) -> bool {
    let mut p = phase.lock();
    if matches!(*p, Phase::Running { .. }) {
        return false;
    }
    *p = Phase::Running { done: 0, total: 0 };
    true
}

fn file(inner: &Inner, name: &str) -> PathBuf {
    inner.fil.datadir().join(name)
}

/// Writes the dump (D1): `pct` percent of each instance's LRU list, hottest first.
pub fn dump(inner: &Inner, pct: u32) -> Result<u64> {
    let bp = &inner.bp;
    let mut text = String::new();
    let mut pages = 0u64;
    for i in 0..bp.instances().len() {
        let ids = bp.lru_page_ids(i, pct.clamp(1, 100));
        *inner.stats.bp_dump.dump.lock() = Phase::Running {
            done: pages,
            total: pages + ids.len() as u64,
        };
        for id in ids {
            text.push_str(&format!("{},{}\n", id.space, id.page));
            pages += 1;
        }
    }
    let fs = inner.fs.as_ref();
    let tmp = file(inner, &format!("{FILE_NAME}.incomplete"));
    let fin = file(inner, FILE_NAME);
    let io = |e: std::io::Error, p: &PathBuf| inner.fil.io_error(p, e, false);
    let r = (|| -> Result<u64> {
        // Left by a crash during an earlier dump (D1): never under the final name.
        if fs.exists(&tmp).unwrap_or(false) {
            fs.remove(&tmp).map_err(|e| io(e, &tmp))?;
        }
        let f = fs.create(&tmp).map_err(|e| io(e, &tmp))?;
        f.write_at(text.as_bytes(), 0).map_err(|e| io(e, &tmp))?;
        f.sync_data().map_err(|e| io(e, &tmp))?;
        drop(f);
        fs.rename(&tmp, &fin).map_err(|e| io(e, &fin))?;
        fs.sync_dir(inner.fil.datadir()).map_err(|e| io(e, &fin))?;
        Ok(pages)
    })();
    *inner.stats.bp_dump.dump.lock() = match &r {
        Ok(n) => Phase::Completed {
            at: SystemTime::now(),
            pages: *n,
        },
        Err(e) => Phase::Failed(e.to_string()),
    };
    r
}

/// Parses the dump file: the page ids in it, sorted for sequential reads, and the number of
/// lines that were not `space,page`.
fn parse(text: &str) -> (Vec<PageId>, usize) {
    let mut bad = 0;
    let mut ids: Vec<PageId> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let p = l.split_once(',').and_then(|(s, p)| {
                Some(PageId::new(s.trim().parse().ok()?, p.trim().parse().ok()?))
            });
            if p.is_none() {
                bad += 1;
            }
            p
        })
        .collect();
    ids.sort_by_key(|p| (p.space, p.page));
    ids.dedup();
    (ids, bad)
}

/// Loads the pages listed in the dump file (D2-D4). Returns the pages read; Ok(0) when there
/// is no dump file.
pub fn load(inner: &Inner) -> Result<u64> {
    let path = file(inner, FILE_NAME);
    let fs = inner.fs.as_ref();
    if !fs.exists(&path).unwrap_or(false) {
        return Ok(0);
    }
    let started = std::time::Instant::now();
    let text = (|| -> std::io::Result<Vec<u8>> {
        let f = fs.open(&path)?;
        let mut buf = vec![0u8; f.len()? as usize];
        f.read_at(&mut buf, 0)?;
        Ok(buf)
    })()
    .map_err(|e| inner.fil.io_error(&path, e, false))?;
    let (ids, bad) = parse(&String::from_utf8_lossy(&text));
    if bad > 0 {
        tracing::warn!("InnoDB: {bad} unreadable lines in {}", path.display());
    }
    let total = ids.len() as u64;
    let mut done = 0u64;
    let mut skipped = 0u64;
    let set = |p: Phase| *inner.stats.bp_dump.load.lock() = p;
    set(Phase::Running { done, total });
    inner
        .stats
        .bp_dump
        .abort_load
        .store(false, Ordering::Release);
    for id in ids {
        if inner.shutting_down.load(Ordering::Acquire) {
            set(Phase::Failed(format!(
                "Load aborted at {done}/{total} pages: shutting down"
            )));
            return Ok(done);
        }
        if inner.stats.bp_dump.abort_load.swap(false, Ordering::AcqRel) {
            tracing::info!("InnoDB: Buffer pool(s) load aborted on request at {done}/{total}");
            set(Phase::Failed(
                "Buffer pool(s) load aborted on request".into(),
            ));
            return Ok(done);
        }
        if inner.bp.peek_pin(id).is_some_and(|f| {
            inner.bp.unpin(f);
            true
        }) {
            done += 1;
            continue;
        }
        if inner.bp.free_len_of(inner.bp.instance_of(id)) == 0 {
            skipped += 1;
            continue;
        }
        let in_file = inner
            .fil
            .get(id.space)
            .is_some_and(|sp| id.page < sp.file_pages());
        if !in_file {
            skipped += 1;
            continue;
        }
        match inner.load_page(id) {
            Ok(()) => done += 1,
            Err(e) if e.is_fatal() => {
                set(Phase::Failed(e.to_string()));
                return Err(e);
            }
            Err(_) => skipped += 1,
        }
        if done.is_multiple_of(256) {
            set(Phase::Running { done, total });
        }
    }
    tracing::info!(
        "InnoDB: Buffer pool(s) load completed: {done} of {total} pages in {:.2}s ({skipped} skipped)",
        started.elapsed().as_secs_f64()
    );
    set(Phase::Completed {
        at: SystemTime::now(),
        pages: done,
    });
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_sorts_dedups_and_counts_bad_lines() {
        let (ids, bad) = parse("5,3\n1,9\nx\n5,3\n\n1,2\n7\n");
        assert_eq!(
            ids,
            vec![PageId::new(1, 2), PageId::new(1, 9), PageId::new(5, 3)]
        );
        assert_eq!(bad, 2);
    }
}
