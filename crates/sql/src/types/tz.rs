//! Time zones as MySQL's time_zone takes them: SYSTEM (the server's zone; UTC), an offset
//! (`+05:30`), or a named zone (`Europe/Paris`, `UTC`) as MySQL knows them once its time zone
//! tables are loaded from the system's zoneinfo (mysql_tzinfo_to_sql): here read from the
//! system's zoneinfo directly, from a copy of the IANA database built in for a name the
//! system lacks.
//!
//! INVARIANTS
//! - Z1: `utc_to_local` adds the offset in force at the instant. `local_to_utc` of a wall-clock
//!   time that occurs once is that instant; of one the clocks skipped (a gap), the instant
//!   the gap ends, as MySQL; of one that occurs twice (clocks moved back), the earlier.
//! - Z2: an offset zone is the same at every instant; a named one looks its rules up per
//!   value (a binary search), no I/O after `named` found it.
//!
//! No latches: a zone is immutable and shared by reference count.

use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

/// A session's time zone (module comment).
#[derive(Clone, Debug)]
pub enum Tz {
    /// Seconds east of UTC (SYSTEM is 0).
    Offset(i64),
    Named(TimeZone),
}

impl Default for Tz {
    fn default() -> Tz {
        Tz::Offset(0)
    }
}

impl Tz {
    /// The named zone `name` (case-insensitive), if the zoneinfo or the built-in database
    /// has it.
    pub fn named(name: &str) -> Option<Tz> {
        if name.is_empty() || name.starts_with(['+', '-']) {
            return None;
        }
        TimeZone::get(name).ok().map(Tz::Named)
    }

    /// The offset east of UTC in force at `utc` (seconds since the epoch).
    fn offset_at(&self, utc: i64) -> i64 {
        match self {
            Tz::Offset(o) => *o,
            Tz::Named(z) => {
                Timestamp::from_second(utc).map_or(0, |t| i64::from(z.to_offset(t).seconds()))
            }
        }
    }

    /// The wall-clock time (seconds since the epoch as if the wall clock were UTC) of the
    /// instant `utc` (Z1).
    pub fn utc_to_local(&self, utc: i64) -> i64 {
        utc + self.offset_at(utc)
    }

    /// The instant of wall-clock time `local` (Z1).
    pub fn local_to_utc(&self, local: i64) -> i64 {
        let z = match self {
            Tz::Offset(o) => return local - o,
            Tz::Named(z) => z,
        };
        let Ok(civil) = Timestamp::from_second(local).map(|t| t.to_zoned(TimeZone::UTC).datetime())
        else {
            return local;
        };
        match z.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => local - i64::from(offset.seconds()),
            // The earlier of the two instants: the offset before the clocks moved back.
            AmbiguousOffset::Fold { before, .. } => local - i64::from(before.seconds()),
            // The gap ends at the transition, whose wall-clock time in the new offset is
            // after `local`: the first transition after `local` read in the new offset.
            AmbiguousOffset::Gap { after, .. } => {
                let probe = local - i64::from(after.seconds());
                Timestamp::from_second(probe)
                    .ok()
                    .and_then(|t| z.following(t).next())
                    .map_or(probe, |tr| tr.timestamp().as_second())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since the epoch of a UTC date and time.
    fn at(y: i16, mo: i8, d: i8, h: i8, mi: i8) -> i64 {
        jiff::civil::date(y, mo, d)
            .at(h, mi, 0, 0)
            .to_zoned(TimeZone::UTC)
            .unwrap()
            .timestamp()
            .as_second()
    }

    #[test]
    fn named_zones_follow_their_rules() {
        let paris = Tz::named("europe/paris").unwrap();
        // Winter +1, summer +2.
        assert_eq!(
            paris.utc_to_local(at(2024, 1, 15, 12, 0)),
            at(2024, 1, 15, 13, 0)
        );
        assert_eq!(
            paris.utc_to_local(at(2024, 7, 15, 12, 0)),
            at(2024, 7, 15, 14, 0)
        );
        assert_eq!(
            paris.local_to_utc(at(2024, 7, 15, 14, 0)),
            at(2024, 7, 15, 12, 0)
        );
        // 2024-03-31 02:30 does not exist in Paris: the gap ends at 03:00 (01:00 UTC).
        assert_eq!(
            paris.local_to_utc(at(2024, 3, 31, 2, 30)),
            at(2024, 3, 31, 1, 0)
        );
        // 2024-10-27 02:30 occurs twice: the first (summer time, 00:30 UTC).
        assert_eq!(
            paris.local_to_utc(at(2024, 10, 27, 2, 30)),
            at(2024, 10, 27, 0, 30)
        );
        let utc = Tz::named("UTC").unwrap();
        assert_eq!(utc.local_to_utc(at(2024, 7, 1, 0, 0)), at(2024, 7, 1, 0, 0));
        assert!(Tz::named("Mars/Olympus_Mons").is_none());
        assert!(Tz::named("+05:00").is_none());
        assert_eq!(Tz::Offset(-3600).local_to_utc(0), 3600);
    }
}
