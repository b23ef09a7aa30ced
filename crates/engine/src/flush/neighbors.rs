//! Which pages go to disk with a page being flushed (innodb_flush_neighbors).
//! (InnoDB: buf_flush_try_neighbors, buf_flush_check_neighbor.)
//!
//! OVERVIEW
//! The flush area of a page is the aligned group of `flush_area` pages holding it: its extent,
//! cut to a sixteenth of the pool as InnoDB cuts it, so a small pool is never flushed whole.
//! Mode 1 takes the run of neighbour candidates that touches the page on either side, mode 2
//! every candidate of the area. The caller decides what a candidate is (in the pool, dirty, in
//! no batch; for an LRU flush also in the old sublist) and pins the chosen pages; a page whose
//! latch is busy is dropped later, at the batch's copy (`Inner::flush_frames` never waits).
//!
//! INVARIANTS
//! - N1: every page returned lies in the page's flush area and is not the page itself.
//! - N2: mode 1 returns a contiguous run that, with the page, has no gap; mode 0 returns none.

use crate::tablespace::fsp::extent_pages;
use crate::types::PageNo;

/// Pages in a flush area: the extent, at most a sixteenth of the pool (at least 1).
pub fn flush_area(page_size: usize, pool_pages: usize) -> u32 {
    let cap = u32::try_from(pool_pages / 16).unwrap_or(u32::MAX).max(1);
    extent_pages(page_size).min(cap)
}

/// The neighbours of `page` to flush with it, in ascending page order (N1, N2), for
/// innodb_flush_neighbors `mode` and flush areas of `area` pages. `candidate` is asked about
/// pages of the area only, each at most once.
pub fn select(
    page: PageNo,
    area: u32,
    mode: u8,
    mut candidate: impl FnMut(PageNo) -> bool,
) -> Vec<PageNo> {
    let area = area.max(1);
    let low = page - page % area;
    let high = low.saturating_add(area - 1);
    match mode {
        0 => Vec::new(),
        1 => {
            let mut from = page;
            while from > low && candidate(from - 1) {
                from -= 1;
            }
            let mut out: Vec<PageNo> = (from..page).collect();
            let mut to = page;
            while to < high && candidate(to + 1) {
                to += 1;
                out.push(to);
            }
            out
        }
        _ => (low..=high)
            .filter(|&p| p != page && candidate(p))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dirty pages of a 64-page extent starting at 128: 130..=135, 137, 140..=191, 192 (next
    /// extent).
    fn dirty(p: PageNo) -> bool {
        (130..=135).contains(&p) || p == 137 || (140..=192).contains(&p)
    }

    #[test]
    fn areas_follow_the_extent_and_a_sixteenth_of_the_pool() {
        assert_eq!(flush_area(16384, 8192), 64);
        assert_eq!(flush_area(4096, 32768), 256);
        assert_eq!(flush_area(8192, 16384), 128);
        assert_eq!(flush_area(32768, 4096), 64);
        assert_eq!(flush_area(65536, 2048), 64);
        // A pool of 512 pages flushes at most 32 together; the smallest pools one at a time.
        assert_eq!(flush_area(16384, 512), 32);
        assert_eq!(flush_area(16384, 8), 1);
    }

    #[test]
    fn mode_0_takes_none() {
        assert!(select(133, 64, 0, dirty).is_empty());
    }

    #[test]
    fn mode_1_takes_the_contiguous_run_around_the_page() {
        assert_eq!(select(133, 64, 1, dirty), vec![130, 131, 132, 134, 135]);
        // A gap ends the run: 136 is clean, so 137 stays.
        assert_eq!(select(135, 64, 1, dirty), vec![130, 131, 132, 133, 134]);
        // An isolated page has no neighbours.
        assert!(select(137, 64, 1, dirty).is_empty());
    }

    #[test]
    fn the_run_stops_at_the_extent_bounds() {
        // 140..=191 reach the extent's end; 192 is dirty but in the next extent.
        let run = select(150, 64, 1, dirty);
        assert_eq!(run.first(), Some(&140));
        assert_eq!(run.last(), Some(&191));
        assert_eq!(run.len(), 51);
        // The first page of an extent does not look below it.
        let mut asked = Vec::new();
        select(192, 64, 1, |p| {
            asked.push(p);
            dirty(p)
        });
        assert_eq!(asked, vec![193]);
        // Mode 2 asks about the whole extent, never beyond it.
        let mut asked = Vec::new();
        select(190, 64, 2, |p| {
            asked.push(p);
            true
        });
        assert_eq!(asked.len(), 63);
        assert_eq!((asked[0], asked[62]), (128, 191));
    }

    #[test]
    fn mode_2_takes_every_candidate_of_the_extent() {
        let all = select(133, 64, 2, dirty);
        let want: Vec<PageNo> = (128..192).filter(|&p| p != 133 && dirty(p)).collect();
        assert_eq!(all, want);
        assert!(all.contains(&137) && !all.contains(&192));
    }
}
