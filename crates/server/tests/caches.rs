//! The caches behind issue #5's knobs act, seen from a client: thread_cache_size keeps
//! connection threads for the next connections (Threads_created, Threads_cached, the
//! server's thread count); table_open_cache and table_open_cache_instances bound the tables
//! kept open (Open_tables, Opened_tables, Table_open_cache_hits/_misses/_overflows), and a
//! table a running statement uses is never evicted; table_definition_cache bounds the table
//! descriptions kept (Open_table_definitions, Opened_table_definitions). SET GLOBAL of the
//! dynamic ones acts at once.
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

/// The table-cache counters, global.
fn tc(m: &mut mysql::Conn) -> [u64; 6] {
    [
        "Open_tables",
        "Opened_tables",
        "Table_open_cache_hits",
        "Table_open_cache_misses",
        "Table_open_cache_overflows",
        "Open_table_definitions",
    ]
    .map(|n| global_status(m, n))
}

/// Creates the empty tables `d.t0` .. `d.t{n-1}`.
fn create_tables(c: &mut mysql::Conn, n: usize) {
    c.query_drop("CREATE DATABASE d").unwrap();
    for i in 0..n {
        c.query_drop(format!("CREATE TABLE d.t{i} (id INT PRIMARY KEY)"))
            .unwrap();
    }
}

/// Reads `d.t0` .. `d.t{n-1}` in turn; `check` after each.
fn read_tables(c: &mut mysql::Conn, n: usize, mut check: impl FnMut()) {
    for i in 0..n {
        let v: Option<i64> = c
            .query_first(format!("SELECT COUNT(*) FROM d.t{i}"))
            .unwrap();
        assert_eq!(v, Some(0));
        check();
    }
}

/// A server with table_open_cache=10 in one instance and 50 tables, with two connections:
/// one to read tables, one to watch.
fn fifty_tables_and_room_for_ten() -> (common::Server, mysql::Conn, mysql::Conn) {
    let s = start_with(
        false,
        &["--table-open-cache=10", "--table-open-cache-instances=1"],
    );
    let mut c = connect(&s);
    let m = connect(&s);
    create_tables(&mut c, 50);
    (s, c, m)
}

/// table_open_cache=10 (one instance): 50 tables read in turn keep at most 10 open, and
/// every pass misses each; with room for all, a pass after the first only hits. FLUSH
/// TABLES empties the caches, and SET GLOBAL evicts down to a smaller size at once.
#[test]
fn table_open_cache_bounds_the_tables_kept_open() {
    let (_s, mut c, mut m) = fifty_tables_and_room_for_ten();
    c.query_drop("FLUSH TABLES").unwrap();
    for pass in 0..2 {
        let [_, opened, hits, misses, overflows, _] = tc(&mut m);
        read_tables(&mut c, 50, || {
            let open = global_status(&mut m, "Open_tables");
            assert!(open <= 10, "pass {pass}: {open} tables open");
        });
        let now = tc(&mut m);
        assert_eq!(now[0], 10);
        assert_eq!(
            (now[1] - opened, now[2] - hits, now[3] - misses),
            (50, 0, 50),
            "pass {pass}: every table misses"
        );
        assert_eq!(now[4] - overflows, if pass == 0 { 40 } else { 50 });
    }
    m.query_drop("SET GLOBAL table_open_cache = 4000").unwrap();
    read_tables(&mut c, 50, || {});
    let [open, opened, hits, misses, overflows, _] = tc(&mut m);
    assert_eq!(open, 50);
    read_tables(&mut c, 50, || {});
    let now = tc(&mut m);
    assert_eq!(
        (
            now[0],
            now[1] - opened,
            now[2] - hits,
            now[3] - misses,
            now[4] - overflows
        ),
        (50, 0, 50, 0, 0),
        "with room for every table, a pass only hits"
    );
    m.query_drop("SET GLOBAL table_open_cache = 10").unwrap();
    assert_eq!(global_status(&mut m, "Open_tables"), 10);
    m.query_drop("FLUSH TABLES").unwrap();
    assert_eq!(tc(&mut m)[0], 0);
    assert_eq!(tc(&mut m)[5], 0);
}

/// A table a statement still uses stays open however many others are opened meanwhile,
/// and is reused (a hit) once released.
#[test]
fn a_table_in_use_is_not_evicted() {
    let (s, mut c, mut m) = fifty_tables_and_room_for_ten();
    c.query_drop("CREATE TABLE d.held (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO d.held VALUES (1)").unwrap();
    // `locker` holds the row; `waiter`'s statement opens d.held and waits for the row.
    let mut locker = connect(&s);
    locker.query_drop("BEGIN").unwrap();
    locker
        .query_drop("SELECT * FROM d.held WHERE id = 1 FOR UPDATE")
        .unwrap();
    let port = s.port;
    let waiter = std::thread::spawn(move || {
        let mut w = common::connect_port(port);
        let v: Option<i64> = w
            .query_first("SELECT id FROM d.held WHERE id = 1 FOR UPDATE")
            .unwrap();
        v
    });
    eventually("the waiter to wait for the row", || {
        global_status(&mut m, "Innodb_row_lock_current_waits") == 1
    });
    read_tables(&mut c, 50, || {});
    assert_eq!(global_status(&mut m, "Open_tables"), 10);
    locker.query_drop("COMMIT").unwrap();
    assert_eq!(waiter.join().unwrap(), Some(1));
    let [_, opened, hits, misses, _, _] = tc(&mut m);
    let v: Option<i64> = c.query_first("SELECT id FROM d.held").unwrap();
    assert_eq!(v, Some(1));
    let now = tc(&mut m);
    assert_eq!(
        (now[1] - opened, now[2] - hits, now[3] - misses),
        (0, 1, 0),
        "d.held stayed open while in use"
    );
}

/// table_open_cache is shared by table_open_cache_instances instances; each connection
/// uses one (connection id % instances), and all share the table descriptions.
#[test]
fn instances_split_the_open_cache() {
    let s = start_with(
        false,
        &["--table-open-cache=64", "--table-open-cache-instances=4"],
    );
    let mut m = connect(&s);
    create_tables(&mut m, 20);
    m.query_drop("FLUSH TABLES").unwrap();
    // Four connections, consecutive ids: four instances of 16 tables each.
    let mut conns: Vec<mysql::Conn> = (0..4).map(|_| connect(&s)).collect();
    let [_, opened, ..] = tc(&mut m);
    for c in &mut conns {
        read_tables(c, 20, || {});
    }
    let now = tc(&mut m);
    assert_eq!((now[0], now[1] - opened, now[5]), (64, 80, 20));
    // One instance holds 16 of the 20: reading them again in turn misses each.
    let [_, _, hits, misses, ..] = now;
    read_tables(&mut conns[0], 20, || {});
    let now = tc(&mut m);
    assert_eq!((now[2] - hits, now[3] - misses), (0, 20));
}

/// table_definition_cache=400 (MySQL's least): 420 tables read in turn keep at most 400
/// descriptions, and each pass loads every one again; with room for all, a pass after the
/// first loads none; lowering it evicts at once.
#[test]
fn table_definition_cache_bounds_the_descriptions_kept() {
    let s = start_with(
        false,
        &[
            "--table-definition-cache=400",
            "--table-open-cache=10",
            "--table-open-cache-instances=1",
            "--innodb-flush-log-at-trx-commit=0",
        ],
    );
    let mut c = connect(&s);
    let mut m = connect(&s);
    create_tables(&mut c, 420);
    c.query_drop("FLUSH TABLES").unwrap();
    let loaded = |m: &mut mysql::Conn| global_status(m, "Opened_table_definitions");
    let kept = |m: &mut mysql::Conn| global_status(m, "Open_table_definitions");
    for pass in 0..2 {
        let before = loaded(&mut m);
        let mut most = 0;
        read_tables(&mut c, 420, || most = most.max(kept(&mut m)));
        assert!(most <= 400, "pass {pass}: {most} descriptions kept");
        assert_eq!(kept(&mut m), 400);
        assert_eq!(loaded(&mut m) - before, 420, "pass {pass}");
    }
    m.query_drop("SET GLOBAL table_definition_cache = 2000")
        .unwrap();
    let before = loaded(&mut m);
    read_tables(&mut c, 420, || {});
    // The 20 the last pass had evicted.
    assert_eq!(loaded(&mut m) - before, 20);
    let before = loaded(&mut m);
    read_tables(&mut c, 420, || {});
    assert_eq!((loaded(&mut m) - before, kept(&mut m)), (0, 420));
    m.query_drop("SET GLOBAL table_definition_cache = 400")
        .unwrap();
    assert_eq!(kept(&mut m), 400);
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
