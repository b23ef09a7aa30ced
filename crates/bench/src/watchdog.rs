//! A stall detector. A deadlocked engine would otherwise hang a benchmark run forever. Worker
//! loops call [`beat`] now and then, and phases name themselves with [`phase`]. If no beat
//! comes for the timeout, a background thread prints which phase stalled and exits the process
//! with status 2. It first removes the temporary data directory unless it was asked to keep
//! it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static BEATS: AtomicU64 = AtomicU64::new(0);
static PHASE: Mutex<String> = Mutex::new(String::new());

/// Records progress. Cheap, but hot loops should call it only every few thousand operations.
pub fn beat() {
    BEATS.fetch_add(1, Ordering::Relaxed);
}

/// Names the current phase (for the stall message) and counts as progress.
pub fn phase(name: impl Into<String>) {
    if let Ok(mut p) = PHASE.lock() {
        *p = name.into();
    }
    beat();
}

/// Starts the watchdog: with no beat for `timeout`, print and exit(2). `cleanup` is removed
/// first (a temporary data directory), if given. A zero timeout disables it.
pub fn start(timeout: Duration, cleanup: Option<PathBuf>) {
    if timeout.is_zero() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            let mut last = BEATS.load(Ordering::Relaxed);
            let mut since = Instant::now();
            loop {
                std::thread::sleep(Duration::from_millis(500));
                let now = BEATS.load(Ordering::Relaxed);
                if now != last {
                    last = now;
                    since = Instant::now();
                    continue;
                }
                if since.elapsed() < timeout {
                    continue;
                }
                let phase = PHASE.lock().map(|p| p.clone()).unwrap_or_default();
                eprintln!();
                eprintln!(
                    "innoxide-bench: STALLED: no progress for {} s during \"{phase}\"; the \
                     engine looks stuck (a deadlock?). To see where, rerun with a larger \
                     --stall-timeout and meanwhile run: gdb -p <pid> -batch -ex 'thread apply \
                     all bt' (this run's pid: {}).",
                    timeout.as_secs(),
                    std::process::id()
                );
                if let Some(dir) = &cleanup {
                    if std::fs::remove_dir_all(dir).is_err() {
                        eprintln!("innoxide-bench: could not remove {}", dir.display());
                    }
                }
                std::process::exit(2);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("could not start the stall watchdog: {e}");
    }
}
