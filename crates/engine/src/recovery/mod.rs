//! Crash recovery: parse the redo log once from the last checkpoint, repair torn pages from the
//! doublewrite area, and apply the redo page by page on several threads. (InnoDB: log0recv.)
//! Rolling back incomplete transactions and finishing interrupted DDL follow in `Engine::open`.
//!
//! OVERVIEW
//! `parse` reads the log in chunks from the checkpoint LSN and keeps, per page, the list of its
//! records (bytes copied into one arena) with the end LSN of their group, stopping at the first
//! group whose length, start LSN or CRC does not check out (a torn tail). `apply` then hands the
//! pages to `recovery_threads` workers; each fixes a page (without reading it if its first
//! record rebuilds it from nothing), applies the records newer than the page LSN with the same
//! functions the mini-transactions used, stamps the LSN and leaves the page dirty for the page
//! cleaners. Space 0 is recovered first, because the map from tablespace ids to files comes from
//! the dictionary stored there.
//!
//! INVARIANTS
//! - I1: the log is parsed once; every group accepted is whole (CRC) and at its position (LSN).
//! - I2: a record is applied only if its group's end LSN is above the page's LSN, so applying
//!   twice (a crash during recovery) is harmless.
//! - I3: a page that fails verification and has no good doublewrite copy, and that redo must
//!   touch, stops recovery with an error naming it; it is never used silently.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::buffer_pool::LatchMode;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::{read_u32, read_u64, Reader};
use crate::page;
use crate::redo::file::LogFiles;
use crate::redo::record::{self as rr, Body};
use crate::redo::{group_crc, GROUP_HEADER};
use crate::types::{Lsn, PageId, SpaceId};

#[derive(Clone, Copy, Debug)]
struct RecRef {
    start_lsn: Lsn,
    end_lsn: Lsn,
    off: u32,
    len: u32,
}

/// The redo log after the checkpoint, parsed.
#[derive(Default)]
pub struct Parsed {
    arena: Vec<u8>,
    pages: HashMap<PageId, Vec<RecRef>>,
    pub checkpoint_lsn: Lsn,
    pub end_lsn: Lsn,
    pub groups: u64,
    pub records: u64,
}

impl Parsed {
    /// Nothing to recover: the log ends at the checkpoint.
    pub fn empty_at(lsn: Lsn) -> Parsed {
        Parsed {
            checkpoint_lsn: lsn,
            end_lsn: lsn,
            ..Default::default()
        }
    }
    pub fn is_empty(&self) -> bool {
        self.groups == 0
    }
    pub fn n_pages(&self) -> usize {
        self.pages.len()
    }
    pub fn spaces(&self) -> Vec<SpaceId> {
        let mut v: Vec<SpaceId> = self.pages.keys().map(|p| p.space).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

const CHUNK: usize = 4 << 20;

/// Parses the log from `cp_lsn` to its end (I1).
pub fn parse(files: &LogFiles, cp_lsn: Lsn) -> Result<Parsed> {
    let mut p = Parsed {
        checkpoint_lsn: cp_lsn,
        end_lsn: cp_lsn,
        ..Default::default()
    };
    let limit = cp_lsn + files.capacity;
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_lsn = cp_lsn;
    let mut read_to = cp_lsn;
    let mut lsn = cp_lsn;
    loop {
        // Make sure the buffer holds at least the header (and then the whole group).
        let need_header = (lsn + GROUP_HEADER as u64).saturating_sub(buf_lsn) as usize;
        if buf.len() < need_header && !fill(files, &mut buf, &mut read_to, limit, need_header)? {
            break;
        }
        let at = (lsn - buf_lsn) as usize;
        let len = read_u32(&buf, at) as usize;
        let start = read_u64(&buf, at + 4);
        if start != lsn || len < GROUP_HEADER || lsn + len as u64 > limit {
            break;
        }
        if buf.len() < at + len && !fill(files, &mut buf, &mut read_to, limit, at + len)? {
            break;
        }
        let crc = read_u32(&buf, at + 12);
        let body = &buf[at + GROUP_HEADER..at + len];
        if group_crc(len as u32, body) != crc {
            break;
        }
        let end = lsn + len as u64;
        let mut r = Reader::new(body);
        let mut prev = None;
        while !r.is_empty() {
            let s = r.pos;
            let (id, _) = rr::parse(&mut r, prev).ok_or_else(|| {
                Error::Startup(format!(
                    "InnoDB: a redo record in the group at LSN {lsn} cannot be parsed; the log is damaged"
                ))
            })?;
            prev = Some(id);
            let off = p.arena.len() as u32;
            p.arena.extend_from_slice(&body[s..r.pos]);
            p.pages.entry(id).or_default().push(RecRef {
                start_lsn: lsn,
                end_lsn: end,
                off,
                len: (r.pos - s) as u32,
            });
            p.records += 1;
        }
        p.groups += 1;
        lsn = end;
        p.end_lsn = end;
        // Drop consumed bytes now and then.
        let consumed = (lsn - buf_lsn) as usize;
        if consumed > CHUNK {
            buf.drain(..consumed);
            buf_lsn = lsn;
        }
    }
    Ok(p)
}

/// Reads more log into `buf` until it holds `want` bytes; false if the log capacity ends first.
fn fill(
    files: &LogFiles,
    buf: &mut Vec<u8>,
    read_to: &mut Lsn,
    limit: Lsn,
    want: usize,
) -> Result<bool> {
    while buf.len() < want {
        let n = ((limit - *read_to) as usize).min(CHUNK);
        if n == 0 {
            return Ok(false);
        }
        let old = buf.len();
        buf.resize(old + n, 0);
        files.read(*read_to, &mut buf[old..])?;
        *read_to += n as u64;
    }
    Ok(true)
}

#[derive(Default, Debug, Clone, Copy)]
pub struct ApplyStats {
    pub pages: usize,
    pub records_applied: u64,
    pub pages_not_read: usize,
}

/// Applies the parsed records of the spaces `want` accepts, on `threads` threads.
pub fn apply(
    inner: &Inner,
    parsed: &Parsed,
    want: &dyn Fn(SpaceId) -> bool,
    threads: usize,
) -> Result<ApplyStats> {
    let mut ids: Vec<PageId> = parsed
        .pages
        .keys()
        .copied()
        .filter(|id| want(id.space))
        .collect();
    ids.sort_unstable();
    let total = ids.len();
    if total == 0 {
        return Ok(ApplyStats::default());
    }
    let started = Instant::now();
    tracing::info!(
        "InnoDB: Applying {} redo records to {total} pages of {} tablespaces on {threads} threads",
        ids.iter().map(|id| parsed.pages[id].len()).sum::<usize>(),
        {
            let mut s: Vec<u32> = ids.iter().map(|i| i.space).collect();
            s.dedup();
            s.len()
        },
    );
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let applied = std::sync::atomic::AtomicU64::new(0);
    let not_read = AtomicUsize::new(0);
    let result: Result<()> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                sc.spawn(|| -> Result<()> {
                    loop {
                        // Small batches of neighbouring pages per claim.
                        let i = next.fetch_add(16, Ordering::Relaxed);
                        if i >= total {
                            return Ok(());
                        }
                        for id in &ids[i..(i + 16).min(total)] {
                            let (n, skipped_read) = apply_page(inner, parsed, *id)?;
                            applied.fetch_add(n, Ordering::Relaxed);
                            if skipped_read {
                                not_read.fetch_add(1, Ordering::Relaxed);
                            }
                            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                            if d * 10 / total != (d - 1) * 10 / total {
                                tracing::info!(
                                    "InnoDB: Applying redo: {}% ({d} of {total} pages)",
                                    d * 100 / total
                                );
                            }
                        }
                    }
                })
            })
            .collect();
        let mut res = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(Error::Startup("a recovery thread panicked".into())));
            if res.is_ok() {
                res = r;
            }
        }
        res
    });
    result?;
    tracing::info!(
        "InnoDB: Apply batch completed in {:.3}s",
        started.elapsed().as_secs_f64()
    );
    Ok(ApplyStats {
        pages: total,
        records_applied: applied.load(Ordering::Relaxed),
        pages_not_read: not_read.load(Ordering::Relaxed),
    })
}

/// Applies one page's records (I2, I3). Returns (records applied, page was not read).
fn apply_page(inner: &Inner, parsed: &Parsed, id: PageId) -> Result<(u64, bool)> {
    let recs = &parsed.pages[&id];
    let body_of = |r: &RecRef| -> Result<Body<'_>> {
        let bytes = &parsed.arena[r.off as usize..(r.off + r.len) as usize];
        // A record kept without its page id (SAME_PAGE) is for this page.
        rr::parse(&mut Reader::new(bytes), Some(id))
            .map(|(_, b)| b)
            .ok_or_else(|| Error::Startup(format!("InnoDB: unparsable redo record for page {id}")))
    };
    let first_init = body_of(&recs[0])?.initialises();
    let f = if first_init {
        inner.fix_new(id)?
    } else {
        inner.fix(id, LatchMode::X).map_err(|e| match e {
            Error::Corrupted { what, .. } => Error::Startup(format!(
                "InnoDB: page {id} needs redo but is damaged ({what}) and the doublewrite area holds no \
                 good copy of it; recovery cannot continue (innodb_doublewrite was {})",
                if inner.dblwr.enabled { "ON" } else { "OFF" }
            )),
            e => e,
        })?
    };
    // SAFETY: X-latched by fix/fix_new.
    let data = unsafe { inner.bp.data_mut(f) };
    let page_lsn = if first_init { 0 } else { page::lsn(data) };
    let mut n = 0;
    let mut oldest = 0;
    let mut newest = 0;
    let mut res = Ok(());
    for r in recs {
        if r.end_lsn <= page_lsn {
            continue;
        }
        let body = match body_of(r) {
            Ok(b) => b,
            Err(e) => {
                res = Err(e);
                break;
            }
        };
        if let Err(why) = rr::apply(data, id, &body) {
            res = Err(Error::Startup(format!(
                "InnoDB: redo record (group ending at LSN {}) cannot be applied to page {id}: {why}",
                r.end_lsn
            )));
            break;
        }
        if oldest == 0 {
            oldest = r.start_lsn;
        }
        newest = r.end_lsn;
        n += 1;
    }
    if res.is_ok() && n > 0 {
        page::set_lsn(data, newest);
        inner.bp.note_recovered(f, oldest, newest);
    }
    inner.bp.unlatch(f, LatchMode::X);
    inner.bp.unpin(f);
    res.map(|()| (n, first_init))
}
