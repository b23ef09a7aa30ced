//! The caches behind issue #5's knobs act, seen from a client: thread_cache_size keeps
//! connection threads for the next connections (Threads_created, Threads_cached, the
//! server's thread count). SET GLOBAL acts at once.
//!
//! Run: `cargo test -p innoxide-server --test caches`.

mod common;

use std::time::{Duration, Instant};

use common::{connect, global_status, start_with, text_rows};
use mysql::prelude::Queryable;

/// Waits up to 20 s (a loaded machine, a debug build) for `cond`.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server process's threads (Linux).
fn os_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(Iterator::count)
        .unwrap_or(0)
}

/// One short connection: connect, run `sql`, quit.
fn visit(s: &common::Server, sql: &str) {
    let mut c = connect(s);
    c.query_drop(sql).unwrap();
}

/// With thread_cache_size=0 every connection gets a new thread; with 8, threads whose
/// connection ended wait and take the next ones (Threads_created stays, Threads_cached
/// counts them), with nothing of the previous session left; lowering it makes the excess
/// threads exit at once.
#[test]
fn thread_cache_size_keeps_threads_for_the_next_connections() {
    let s = start_with(false, &["--thread-cache-size=0"]);
    let mut m = connect(&s);
    let created = |m: &mut mysql::Conn| global_status(m, "Threads_created");
    let cached = |m: &mut mysql::Conn| global_status(m, "Threads_cached");
    let before = created(&mut m);
    let threads = os_threads(s.pid());
    for _ in 0..20 {
        visit(&s, "SELECT 1");
    }
    assert_eq!(created(&mut m), before + 20);
    assert_eq!(cached(&mut m), 0);
    // Their threads exit (none would be cached after the SET below).
    eventually("the threads to exit", || os_threads(s.pid()) == threads);

    m.query_drop("SET GLOBAL thread_cache_size = 8").unwrap();
    let before = created(&mut m);
    for _ in 0..20 {
        visit(&s, "SELECT 1");
        // The thread is cached once its connection has ended.
        eventually("a cached thread", || cached(&mut m) == 1);
    }
    let made = created(&mut m) - before;
    assert!(made <= 2, "{made} threads for 20 connections");

    // The cached thread serves the next connection with nothing of the last session: its
    // user variables, session variables, time zone and named locks are gone.
    visit(
        &s,
        "SET @left = 1, SESSION sql_mode = '', time_zone = '+05:00', @g = GET_LOCK('held', 0)",
    );
    eventually("a cached thread", || cached(&mut m) == 1);
    let before = created(&mut m);
    let mut c = connect(&s);
    let row = text_rows(
        &mut c,
        "SELECT @left IS NULL, @@session.sql_mode = @@global.sql_mode, @@time_zone, \
         IS_USED_LOCK('held') IS NULL, TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())",
    );
    assert_eq!(row, ["1,1,SYSTEM,1,0"]);
    assert_eq!(
        created(&mut m),
        before,
        "the cached thread took the connection"
    );
    drop(c);
    eventually("a cached thread", || cached(&mut m) == 1);

    // Five connections at once, then none: five threads wait (at most eight would).
    let conns: Vec<mysql::Conn> = (0..5).map(|_| connect(&s)).collect();
    drop(conns);
    eventually("five cached threads", || cached(&mut m) == 5);
    let threads = os_threads(s.pid());
    m.query_drop("SET GLOBAL thread_cache_size = 2").unwrap();
    assert_eq!(cached(&mut m), 2);
    m.query_drop("SET GLOBAL thread_cache_size = 0").unwrap();
    assert_eq!(cached(&mut m), 0);
    eventually("the cached threads to exit", || {
        os_threads(s.pid()) <= threads - 5
    });
    // With none cached, the next connection gets a new thread again.
    let before = created(&mut m);
    visit(&s, "SELECT 1");
    assert_eq!(created(&mut m), before + 1);
    assert!(s.panics().is_empty(), "{:?}", s.panics());
}

/// Threads waiting in the thread cache hold nothing of the server: SIGTERM shuts it down
/// cleanly (the engine's own shutdown, not the flush for connections still open).
#[test]
fn shutdown_is_clean_with_cached_threads() {
    let mut s = start_with(false, &["--thread-cache-size=8"]);
    let conns: Vec<mysql::Conn> = (0..4).map(|_| connect(&s)).collect();
    drop(conns);
    // Asked from a new connection each time, which takes a cached thread (or a new one, if
    // it came before the four had ended) while it asks: then every other thread waits.
    eventually("four connections ended", || {
        let mut m = connect(&s);
        let created = global_status(&mut m, "Threads_created");
        global_status(&mut m, "Threads_connected") == 1
            && global_status(&mut m, "Threads_cached") == created - 1
    });
    // The last asker's thread goes back to the cache as it quits: give it time to.
    std::thread::sleep(Duration::from_millis(500));
    let pid = s.pid().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = s.exited_within(Duration::from_secs(60)).expect("exited");
    assert!(status.success(), "{status}");
    // The engine's own shutdown ran (it alone logs this), not the flush for connections
    // still holding the engine.
    eventually("the shutdown's last line", || {
        s.log_lines()
            .iter()
            .any(|l| l.contains("InnoDB: Shutdown completed"))
    });
    let log = s.log_lines();
    assert!(
        !log.iter().any(|l| l.contains("clients still connected")),
        "{log:#?}"
    );
}
