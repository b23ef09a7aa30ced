//! How much CPU other processes took while we measured (Linux /proc; elsewhere nothing).
//!
//! A scaling figure on a 2-core machine means little if another process was running: this
//! compares the machine's busy time (/proc/stat, steal included) with this process's own
//! CPU time (/proc/self/stat) between two snapshots.

/// CPU counters at one instant, in clock ticks.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    busy: u64,
    total: u64,
    own: u64,
}

fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let field = |i: usize| v.get(i).copied().unwrap_or(0);
    let idle = field(3) + field(4);
    let busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
    Some((busy, busy + idle))
}

fn parse_self(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3 of the man page, so utime (14) and stime (15) are at 11, 12.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

impl Snapshot {
    /// Reads the counters; None where /proc is not available.
    pub fn take() -> Option<Snapshot> {
        let (busy, total) = parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
        let own = parse_self(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        Some(Snapshot { busy, total, own })
    }

    /// CPU time used by other processes (and the hypervisor) since `self`, in ticks, and the
    /// total ticks of all CPUs.
    pub fn others_since(&self, later: &Snapshot) -> (u64, u64) {
        let busy = later.busy.saturating_sub(self.busy);
        let own = later.own.saturating_sub(self.own);
        (
            busy.saturating_sub(own),
            later.total.saturating_sub(self.total),
        )
    }
}

/// Cores' worth of CPU used by others, from accumulated `(others, total)` ticks.
pub fn cores(others: u64, total: u64) -> Option<f64> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (total > 0).then(|| others as f64 / total as f64 * n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_formats() {
        let stat = "cpu  71767 0 13462 612110 3935 0 441 277 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(
            parse_stat(stat),
            Some((
                71767 + 13462 + 441 + 277,
                71767 + 13462 + 441 + 277 + 612110 + 3935
            ))
        );
        let me = "1234 (a b) c) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(parse_self(me), Some(300));
        let a = Snapshot {
            busy: 100,
            total: 1000,
            own: 40,
        };
        let b = Snapshot {
            busy: 300,
            total: 1400,
            own: 190,
        };
        assert_eq!(a.others_since(&b), (50, 400));
    }
}
