//! Adaptive flushing policy: how many pages the page cleaners flush per second. A pure function
//! of the engine's state so it can be tested without threads.
//! (InnoDB: page_cleaner_flush_pages_recommendation, af_get_pct_for_dirty, af_get_pct_for_lsn.)
//!
//! The recommendation combines three pressures, as InnoDB does:
//! - dirty pages: above `innodb_max_dirty_pages_pct_lwm`, a percentage of io_capacity that
//!   reaches 100% at `innodb_max_dirty_pages_pct`;
//! - redo: once the modified age passes `innodb_adaptive_flushing_lwm`% of the async point, a
//!   percentage that grows as (age/async)^1.5 and can exceed 100% up to io_capacity_max, so the
//!   checkpoint age stays below the async point in steady state;
//! - the observed rates: pages flushed recently and pages whose oldest change falls within the
//!   redo generated in the next seconds.
//!
//! An idle server flushes at io_capacity so dirty pages drain and the checkpoint catches up.
//!
//! Unlike MySQL 8.0, the observed rates only shape the amount once one of the two pressures is
//! there: below both low-water marks (dirty pages under innodb_max_dirty_pages_pct_lwm, the
//! checkpoint age under innodb_adaptive_flushing_lwm% of the async point) a busy server flushes
//! nothing. MySQL flushes on the rates alone, about a third of the recently dirtied pages each
//! second, writes no pressure asks for (each with its doublewrite copy) that compete with the
//! redo's fsyncs; MariaDB 10.5+ waits for the marks the same way. Recovery stays bounded by
//! the adaptive mark: past it, flushing starts as before.

/// Inputs sampled once per page cleaner iteration.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs {
    pub dirty_pages: u64,
    /// Pages in the pool (data + free).
    pub pool_pages: u64,
    pub max_dirty_pct: f64,
    pub max_dirty_pct_lwm: f64,
    /// lsn - oldest_modification of the pool (0 when clean).
    pub modified_age: u64,
    /// Margins::max_modified_age_async.
    pub async_age: u64,
    pub io_capacity: u64,
    pub io_capacity_max: u64,
    pub adaptive_flushing: bool,
    pub adaptive_flushing_lwm: f64,
    /// Average pages flushed per second recently.
    pub avg_page_rate: f64,
    /// Dirty pages whose oldest change is older than oldest + (redo per second * 3).
    pub pages_for_lsn: u64,
    /// No redo was generated since the last iteration.
    pub idle: bool,
}

/// Why pages are flushed (reported in SHOW ENGINE INNODB STATUS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    None,
    Idle,
    DirtyPct,
    Redo,
}

pub fn pct_for_dirty(i: &Inputs) -> f64 {
    if i.pool_pages == 0 {
        return 0.0;
    }
    let dirty_pct = i.dirty_pages as f64 * 100.0 / i.pool_pages as f64;
    if i.max_dirty_pct_lwm <= 0.0 {
        return if dirty_pct >= i.max_dirty_pct {
            100.0
        } else {
            0.0
        };
    }
    if dirty_pct >= i.max_dirty_pct_lwm {
        (dirty_pct * 100.0 / (i.max_dirty_pct + 1.0)).min(100.0)
    } else {
        0.0
    }
}

pub fn pct_for_lsn(i: &Inputs) -> f64 {
    if i.async_age == 0 {
        return 0.0;
    }
    let lwm = i.async_age as f64 * i.adaptive_flushing_lwm / 100.0;
    let age = i.modified_age as f64;
    if age < lwm {
        return 0.0;
    }
    if !i.adaptive_flushing && i.modified_age < i.async_age {
        return 0.0;
    }
    let factor = age * 100.0 / i.async_age as f64;
    let ratio = i.io_capacity_max as f64 / i.io_capacity.max(1) as f64;
    ratio * factor * factor.sqrt() / 7.5
}

/// Pages to flush in the next second, and the dominant reason.
pub fn recommend(i: &Inputs) -> (u64, Reason) {
    if i.dirty_pages == 0 {
        return (0, Reason::None);
    }
    if i.idle {
        return (i.io_capacity, Reason::Idle);
    }
    let pd = pct_for_dirty(i);
    let pl = pct_for_lsn(i);
    let pct = pd.max(pl);
    if pct == 0.0 {
        return (0, Reason::None);
    }
    let n = (i.io_capacity as f64 * pct / 100.0 + i.avg_page_rate + i.pages_for_lsn as f64) / 3.0;
    // A rate: an iteration caps what it flushes by the dirty pages it finds.
    let n = (n.round() as u64).min(i.io_capacity_max);
    let reason = if n == 0 {
        Reason::None
    } else if pl >= pd {
        Reason::Redo
    } else {
        Reason::DirtyPct
    };
    (n, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Inputs {
        Inputs {
            dirty_pages: 1000,
            pool_pages: 10000,
            max_dirty_pct: 90.0,
            max_dirty_pct_lwm: 10.0,
            modified_age: 0,
            async_age: 1_000_000,
            io_capacity: 200,
            io_capacity_max: 2000,
            adaptive_flushing: true,
            adaptive_flushing_lwm: 10.0,
            avg_page_rate: 0.0,
            pages_for_lsn: 0,
            idle: false,
        }
    }

    #[test]
    fn more_redo_pressure_means_more_flushing_up_to_io_capacity_max() {
        let mut prev = 0;
        for age in [50_000u64, 200_000, 500_000, 800_000, 1_000_000, 2_000_000] {
            let i = Inputs {
                modified_age: age,
                ..base()
            };
            let (n, _) = recommend(&i);
            assert!(n >= prev, "age {age}: {n} < {prev}");
            assert!(n <= 2000);
            prev = n;
        }
        let i = Inputs {
            modified_age: 5_000_000,
            pages_for_lsn: 100_000,
            ..base()
        };
        assert_eq!(recommend(&i).0, 2000, "capped by io_capacity_max");
        assert_eq!(
            recommend(&Inputs {
                modified_age: 900_000,
                ..base()
            })
            .1,
            Reason::Redo
        );
    }

    #[test]
    fn dirty_pct_and_idle() {
        // 10% dirty at lwm 10: flush ~ io_capacity * 11% / 3.
        let (n, r) = recommend(&base());
        assert_eq!(r, Reason::DirtyPct);
        assert!(n > 0 && n < 200, "{n}");
        assert_eq!(
            pct_for_dirty(&Inputs {
                dirty_pages: 9500,
                ..base()
            }),
            100.0
        );
        let lwm0 = Inputs {
            max_dirty_pct_lwm: 0.0,
            ..base()
        };
        assert_eq!(pct_for_dirty(&lwm0), 0.0);
        assert_eq!(
            recommend(&Inputs {
                idle: true,
                ..base()
            }),
            (200, Reason::Idle)
        );
        assert_eq!(
            recommend(&Inputs {
                dirty_pages: 0,
                ..base()
            })
            .0,
            0
        );
        // Below the adaptive lwm no redo pressure.
        assert_eq!(
            pct_for_lsn(&Inputs {
                modified_age: 10_000,
                ..base()
            }),
            0.0
        );
        // Busy, below both marks: the recent rates alone flush nothing.
        let calm = Inputs {
            dirty_pages: 500,
            modified_age: 10_000,
            avg_page_rate: 300.0,
            pages_for_lsn: 400,
            ..base()
        };
        assert_eq!(recommend(&calm), (0, Reason::None));
        // Past the adaptive mark they count again.
        let pressed = Inputs {
            modified_age: 200_000,
            ..calm
        };
        let (n, r) = recommend(&pressed);
        assert_eq!(r, Reason::Redo);
        assert!(n > 230, "{n}");
        // Changing io_capacity changes the rate (a knob with real effect).
        let hi = Inputs {
            io_capacity: 2000,
            io_capacity_max: 4000,
            ..base()
        };
        assert!(recommend(&hi).0 > recommend(&base()).0);
    }
}
