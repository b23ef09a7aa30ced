//! SHOW STATUS: server counters under MySQL's names (the full set comes with issue #5).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::exec::Session;

fn load(a: &AtomicU64) -> String {
    a.load(Ordering::Relaxed).to_string()
}

/// (name, value) pairs, sorted by name.
pub fn rows(s: &Session) -> Vec<(String, String)> {
    let srv = &s.server;
    let locks = &srv.catalog.engine.inner().trx.locks.stats;
    let mut v: Vec<(&str, String)> = vec![
        ("Connections", load(&srv.connections)),
        ("Flush_commands", load(&srv.flushes)),
        ("Innodb_deadlocks", load(&locks.deadlocks)),
        ("Innodb_row_lock_current_waits", load(&locks.current_waits)),
        ("Innodb_row_lock_time", load(&locks.wait_ms)),
        ("Innodb_row_lock_waits", load(&locks.waits)),
        ("Open_tables", srv.catalog.open_tables().to_string()),
        ("Opened_tables", srv.catalog.opened().to_string()),
        ("Prepared_stmt_count", load(&srv.prepared)),
        ("Questions", load(&srv.questions)),
        ("Slow_queries", load(&srv.slow_queries)),
        ("Threads_connected", srv.sessions.lock().len().to_string()),
        ("Uptime", srv.started.elapsed().as_secs().to_string()),
    ];
    v.sort();
    v.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
