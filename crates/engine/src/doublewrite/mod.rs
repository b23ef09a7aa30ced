//! Doublewrite: pages are written to an area of `ibdata1` and synced before they are written to
//! their home location, so recovery can repair a torn home page. (InnoDB: buf0dblwr.)
//! Byte layout: docs/format/doublewrite.md.
//!
//! OVERVIEW
//! Nine areas of 64 pages: area `i mod 8` belongs to page cleaner i, area 8 to single-page
//! flushes by user threads. A batch holds its area's mutex from the doublewrite write until its
//! home writes are synced, so an area never holds the only good copy of a page that is being
//! overwritten by a newer batch.
//!
//! INVARIANTS
//! - I1: a page image is written home only after the same image is durable in the doublewrite
//!   area (when innodb_doublewrite=ON).
//! - I2: recovery restores a home page only when the home page fails verification, and only
//!   from the valid copy with the highest page LSN not beyond the recovered log end.
//!
//! LATCHING: an area mutex is taken by a flush batch after it released every page latch.
//! Waits for an area count as `dblwr_mutex` (sync_stats).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::latch::MutexGuard;

use crate::error::Result;
use crate::page;
use crate::sync_stats::{WaitMutex, WaitStat};
use crate::tablespace::file::Fil;
use crate::types::{Lsn, PageId, SpaceId, SYSTEM_SPACE};

pub const DBLWR_FIRST_PAGE: u32 = 2;
pub const DBLWR_AREAS: u32 = 9;
pub const DBLWR_AREA_PAGES: u32 = 64;
pub const SINGLE_PAGE_AREA: usize = 8;
pub const CLEANER_AREAS: usize = 8;

#[derive(Default)]
pub struct DblwrStats {
    /// Innodb_dblwr_pages_written
    pub pages_written: AtomicU64,
    /// Innodb_dblwr_writes
    pub writes: AtomicU64,
}

pub struct Doublewrite {
    pub enabled: bool,
    page_size: usize,
    /// Staging buffer of each area (64 pages).
    areas: Vec<WaitMutex<Vec<u8>>>,
    pub stats: DblwrStats,
}

impl Doublewrite {
    pub fn new(enabled: bool, page_size: usize) -> Self {
        Doublewrite {
            enabled,
            page_size,
            areas: (0..DBLWR_AREAS)
                .map(|_| WaitMutex::new(vec![0u8; page_size * DBLWR_AREA_PAGES as usize]))
                .collect(),
            stats: DblwrStats::default(),
        }
    }

    /// Takes an area (its staging buffer) for one batch.
    pub fn lock_area(&self, area: usize) -> MutexGuard<'_, Vec<u8>> {
        self.areas[area].lock()
    }

    /// Waits on the area mutexes.
    pub fn area_waits(&self) -> impl Iterator<Item = &WaitStat> {
        self.areas.iter().map(WaitMutex::stat)
    }

    /// Writes the first `n` staged pages of an area to its doublewrite slots and syncs (I1).
    pub fn write(&self, fil: &Fil, area: usize, buf: &[u8], n: usize) -> Result<()> {
        if !self.enabled || n == 0 {
            return Ok(());
        }
        let sp = fil.space(SYSTEM_SPACE)?;
        let first = DBLWR_FIRST_PAGE + area as u32 * DBLWR_AREA_PAGES;
        fil.write_pages(&sp, first, &buf[..n * self.page_size])?;
        fil.sync(&sp)?;
        self.stats
            .pages_written
            .fetch_add(n as u64, Ordering::Relaxed);
        self.stats.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// What recovery found in the doublewrite area.
#[derive(Default, Debug, Clone)]
pub struct RestoreReport {
    pub valid_copies: usize,
    pub restored: Vec<PageId>,
}

/// Reads every doublewrite slot and keeps, per page, the valid copy with the highest LSN that is
/// not beyond `end_lsn` (I2).
pub fn load_copies(fil: &Fil, end_lsn: Lsn) -> Result<HashMap<PageId, Vec<u8>>> {
    let ps = fil.page_size();
    let sp = fil.space(SYSTEM_SPACE)?;
    let mut out: HashMap<PageId, Vec<u8>> = HashMap::new();
    let mut buf = vec![0u8; ps];
    for i in 0..DBLWR_AREAS * DBLWR_AREA_PAGES {
        fil.read_page_in(&sp, DBLWR_FIRST_PAGE + i, &mut buf)?;
        if !page::verify_self(&buf) {
            continue;
        }
        let lsn = page::lsn(&buf);
        if lsn > end_lsn {
            continue;
        }
        let id = PageId::new(page::space_id(&buf), page::page_no(&buf));
        match out.get(&id) {
            Some(old) if page::lsn(old) >= lsn => {}
            _ => {
                out.insert(id, buf.clone());
            }
        }
    }
    Ok(out)
}

/// Restores every home page of the given spaces that fails verification from its doublewrite
/// copy, syncing each repaired tablespace. Pages of spaces not open are skipped.
pub fn restore(
    fil: &Fil,
    copies: &HashMap<PageId, Vec<u8>>,
    spaces: impl Fn(SpaceId) -> bool,
) -> Result<RestoreReport> {
    let ps = fil.page_size();
    let mut report = RestoreReport {
        valid_copies: copies.len(),
        ..Default::default()
    };
    let mut home = vec![0u8; ps];
    let mut ids: Vec<&PageId> = copies.keys().filter(|id| spaces(id.space)).collect();
    ids.sort();
    for id in ids {
        let Some(sp) = fil.get(id.space) else {
            continue;
        };
        fil.read_page_in(&sp, id.page, &mut home)?;
        if page::verify(&home, *id).is_ok() {
            continue;
        }
        tracing::warn!("InnoDB: Restoring page {id} from the doublewrite buffer");
        fil.write_pages(&sp, id.page, &copies[id])?;
        fil.sync(&sp)?;
        report.restored.push(*id);
    }
    Ok(report)
}
