//! SHOW STATUS: server counters under MySQL's names (the full set comes with issue #5).

use std::sync::atomic::Ordering;

use crate::exec::Session;

/// (name, value) pairs, sorted by name.
pub fn rows(s: &Session) -> Vec<(String, String)> {
    let srv = &s.server;
    let e = &srv.catalog.engine;
    let locks = &e.inner().trx.locks.stats;
    let mut v: Vec<(String, String)> = vec![
        (
            "Connections".into(),
            srv.connections.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Innodb_deadlocks".into(),
            locks.deadlocks.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Innodb_row_lock_current_waits".into(),
            locks.current_waits.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Innodb_row_lock_time".into(),
            locks.wait_ms.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Innodb_row_lock_waits".into(),
            locks.waits.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Questions".into(),
            srv.questions.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Threads_connected".into(),
            srv.sessions.lock().len().to_string(),
        ),
        ("Uptime".into(), srv.started.elapsed().as_secs().to_string()),
    ];
    v.sort();
    v
}
