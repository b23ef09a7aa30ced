//! Issue #5: each InnoDB knob the engine implements changes behaviour measurably, seen from a
//! client through the counters MySQL names (SHOW GLOBAL STATUS, INNODB_BUFFER_POOL_STATS, the
//! InnoDB monitor). The knobs whose effect status.rs already shows (trx_commit 1/2,
//! flush_log_at_timeout, doublewrite, io_capacity, thread_concurrency,
//! concurrency_tickets, buffer pool size, dump/load) are not repeated here.
//!
//! Each test sets the knob one way, measures, sets it the other way (SET GLOBAL for a dynamic
//! variable, a second server for a static one) and measures again; the bounds leave room for
//! a loaded machine and a debug build.

mod common;

use std::time::{Duration, Instant};

use common::{connect, fill, global_status, start_with, text_rows};
use mysql::prelude::Queryable;

/// One column of information_schema.INNODB_BUFFER_POOL_STATS summed over the instances.
fn pool_stat(c: &mut mysql::Conn, column: &str) -> u64 {
    let v: Option<u64> = c
        .query_first(format!(
            "SELECT SUM({column}) FROM information_schema.INNODB_BUFFER_POOL_STATS"
        ))
        .unwrap()
        .flatten();
    v.unwrap_or(0)
}

/// Pages read from disk while `q` runs.
fn reads_during(c: &mut mysql::Conn, q: &str) -> u64 {
    let before = global_status(c, "Innodb_buffer_pool_reads");
    c.query_drop(q).unwrap();
    global_status(c, "Innodb_buffer_pool_reads") - before
}

/// innodb_old_blocks_time: a table scan larger than the pool leaves the hot pages in it while
/// pages the scan touches again within the window stay in the old sublist; with the window at
/// 0 the scan's pages are made young and push the hot ones out.
#[test]
fn old_blocks_time_keeps_a_scan_from_evicting_the_hot_pages() {
    let opts = [
        "--innodb-buffer-pool-size=16M",
        "--innodb-buffer-pool-load-at-startup=OFF",
    ];
    let s = start_with(false, &opts);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE ob").unwrap();
    // About 3,000 pages against a pool of 1,024, 1,200 more to read first, about 150 hot ones.
    fill(&mut c, "ob.big", 150_000);
    fill(&mut c, "ob.pad", 60_000);
    fill(&mut c, "ob.hot", 8_000);
    // The loads leave pages of the big table young in the pool (used more than a second
    // apart), which the scan would move to the young head as InnoDB does, past the hot ones.
    // Start again with an empty pool and fill it with the other table, so that the scan reads
    // every page of its own and the LRU list is in use (nothing moves in a pool never full).
    drop(c);
    let s = common::start_in(s.stop_keep_dir(false), false, &opts);
    let mut c = connect(&s);
    c.query_drop("SELECT SUM(n) FROM ob.pad").unwrap();
    let hot = "SELECT SUM(n) FROM ob.hot";
    let scan = "SELECT SUM(n) FROM ob.big";
    let after_scan = |c: &mut mysql::Conn| {
        // Read the hot table again, past the window each time, until a read finds all of it
        // in the pool: its pages are young then. (Meanwhile the cleaners free frames from the
        // old sublist's tail, which can take hot pages not yet made young.)
        c.query_drop(hot).unwrap();
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(1_100));
            if reads_during(c, hot) == 0 {
                break;
            }
        }
        c.query_drop(scan).unwrap();
        reads_during(c, hot)
    };
    let not_young = pool_stat(&mut c, "PAGES_NOT_MADE_YOUNG");
    let kept = after_scan(&mut c);
    let not_young = pool_stat(&mut c, "PAGES_NOT_MADE_YOUNG") - not_young;
    c.query_drop("SET GLOBAL innodb_old_blocks_time = 0")
        .unwrap();
    let lost = after_scan(&mut c);
    eprintln!("old_blocks_time 1000: {kept} hot pages read again ({not_young} accesses not made young); 0: {lost}");
    for l in s.log_lines().iter().filter(|l| l.contains("DBG")) {
        eprintln!("{l}");
    }
    assert!(kept <= 5, "window 1000: the scan evicted {kept} hot pages");
    assert!(
        not_young >= 1_000,
        "only {not_young} accesses left in the old sublist"
    );
    assert!(lost >= 60, "window 0: only {lost} hot pages were evicted");
}

/// innodb_old_blocks_pct: the share of the LRU list kept as the old sublist.
#[test]
fn old_blocks_pct_sizes_the_old_sublist() {
    let s = start_with(false, &["--innodb-buffer-pool-size=16M"]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE op").unwrap();
    fill(&mut c, "op.big", 60_000);
    let share = |c: &mut mysql::Conn| {
        c.query_drop("SELECT SUM(n) FROM op.big").unwrap();
        // One read of both (the cleaners may evict between two).
        let (old, all): (u64, u64) = c
            .query_first(
                "SELECT SUM(OLD_DATABASE_PAGES), SUM(DATABASE_PAGES) FROM \
                 information_schema.INNODB_BUFFER_POOL_STATS",
            )
            .unwrap()
            .unwrap();
        old * 100 / all.max(1)
    };
    let default = share(&mut c);
    c.query_drop("SET GLOBAL innodb_old_blocks_pct = 80")
        .unwrap();
    let large = share(&mut c);
    c.query_drop("SET GLOBAL innodb_old_blocks_pct = 5")
        .unwrap();
    let small = share(&mut c);
    eprintln!("old share: {default}% at 37, {large}% at 80, {small}% at 5");
    assert!((32..=42).contains(&default), "{default}% old at 37");
    assert!((75..=85).contains(&large), "{large}% old at 80");
    assert!(small <= 8, "{small}% old at 5");
}

/// innodb_lru_scan_depth: how many free pages the page cleaners keep in each instance's free
/// list (at most a quarter of the instance) by evicting from the LRU tail.
#[test]
fn lru_scan_depth_sets_the_free_pages_the_cleaners_keep() {
    let s = start_with(
        false,
        &[
            "--innodb-buffer-pool-size=16M",
            "--innodb-lru-scan-depth=100",
        ],
    );
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE ls").unwrap();
    fill(&mut c, "ls.big", 60_000);
    let free_after_scan = |c: &mut mysql::Conn| {
        c.query_drop("SELECT SUM(n) FROM ls.big").unwrap();
        // The cleaners run once a second.
        std::thread::sleep(Duration::from_millis(2_500));
        global_status(c, "Innodb_buffer_pool_pages_free")
    };
    let at_100 = free_after_scan(&mut c);
    c.query_drop("SET GLOBAL innodb_lru_scan_depth = 250")
        .unwrap();
    let at_250 = free_after_scan(&mut c);
    eprintln!("free pages: {at_100} at depth 100, {at_250} at 250");
    assert!((100..170).contains(&at_100), "{at_100} free at depth 100");
    assert!((250..330).contains(&at_250), "{at_250} free at depth 250");
}

/// innodb_log_buffer_size: a transaction whose redo overflows a small log buffer waits for it
/// to be written (Innodb_log_waits); a large buffer holds it.
#[test]
fn log_buffer_size_small_makes_writes_wait() {
    let waits = |size: &str| {
        let s = start_with(false, &[&format!("--innodb-log-buffer-size={size}")]);
        let mut c = connect(&s);
        c.query_drop("CREATE DATABASE lb").unwrap();
        let before = global_status(&mut c, "Innodb_log_waits");
        fill(&mut c, "lb.t", 20_000);
        global_status(&mut c, "Innodb_log_waits") - before
    };
    let small = waits("256K");
    let large = waits("64M");
    eprintln!("log waits: {small} with 256K, {large} with 64M");
    assert!(small >= 5, "only {small} log waits with a 256K buffer");
    assert_eq!(large, 0, "{large} log waits with a 64M buffer");
}

/// innodb_buffer_pool_instances and innodb_page_cleaners: the pool is split into that many
/// instances (INNODB_BUFFER_POOL_STATS has a row each, the monitor a section each) and that
/// many cleaner threads flush them; innodb_purge_threads starts that many purge threads.
#[test]
fn instances_cleaners_and_purge_threads() {
    let s = start_with(
        false,
        &[
            "--innodb-buffer-pool-size=64M",
            "--innodb-buffer-pool-instances=4",
            "--innodb-page-cleaners=2",
            "--innodb-purge-threads=3",
        ],
    );
    let mut c = connect(&s);
    let rows = text_rows(
        &mut c,
        "SELECT POOL_ID, POOL_SIZE FROM information_schema.INNODB_BUFFER_POOL_STATS ORDER BY 1",
    );
    assert_eq!(rows, ["0,1024", "1,1024", "2,1024", "3,1024"]);
    let status: (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    for i in 0..4 {
        assert!(
            status.2.contains(&format!("---BUFFER POOL {i}\n")),
            "no section for instance {i}"
        );
    }
    let threads = |prefix: &str| {
        std::fs::read_dir(format!("/proc/{}/task", s.pid()))
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|name| name.starts_with(prefix))
            .count()
    };
    assert_eq!(threads("page_cleaner_"), 2);
    assert_eq!(threads("purge_"), 3);
}

/// On a busy server with no other reason to flush (no dirty-page low-water mark, a redo log
/// far from its margins, 90% as the dirty-page limit), a writer updating rows all over a
/// 40,000-row table: the pages flushed in 3 s, the pages dirty and in the pool then, and the
/// pages flushed in the 3 s after `set`.
fn flushing_before_and_after(set: &str) -> (u64, u64, u64, u64) {
    let s = start_with(
        false,
        &[
            "--innodb-buffer-pool-size=32M",
            "--innodb-max-dirty-pages-pct=90",
            "--innodb-max-dirty-pages-pct-lwm=0",
            "--innodb-io-capacity=2000",
            "--innodb-log-file-size=64M",
            "--innodb-adaptive-flushing-lwm=70",
        ],
    );
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE busy").unwrap();
    fill(&mut c, "busy.t", 40_000);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let mut w = connect(&s);
        std::thread::spawn(move || {
            let mut from = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                w.exec_drop(
                    "UPDATE busy.t SET n = n + 1 WHERE id % 64 = 0 AND id BETWEEN ? AND ?",
                    (from, from + 9_999),
                )
                .unwrap();
                from = (from + 10_000) % 40_000;
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    let flushed = |c: &mut mysql::Conn| {
        let before = global_status(c, "Innodb_buffer_pool_pages_flushed");
        std::thread::sleep(Duration::from_secs(3));
        global_status(c, "Innodb_buffer_pool_pages_flushed") - before
    };
    let before = flushed(&mut c);
    let dirty = global_status(&mut c, "Innodb_buffer_pool_pages_dirty");
    let total = global_status(&mut c, "Innodb_buffer_pool_pages_total");
    c.query_drop(set).unwrap();
    let after = flushed(&mut c);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    (before, dirty, total, after)
}

/// innodb_max_dirty_pages_pct: dirty pages under the limit stay in the pool; SET GLOBAL to a
/// limit below them and the cleaners write them back while the writes go on.
#[test]
fn max_dirty_pages_pct_starts_flushing_a_busy_server() {
    let (under, dirty, total, over) =
        flushing_before_and_after("SET GLOBAL innodb_max_dirty_pages_pct = 5");
    eprintln!("max 90%: {under} pages flushed in 3 s ({dirty} of {total} dirty); max 5%: {over}");
    assert!(
        dirty * 100 > total * 10,
        "{dirty} of {total} pages dirty: too few to pass the lower limit"
    );
    assert!(under <= 20, "max 90%: {under} pages flushed");
    assert!(
        over >= 200 && over >= under * 10,
        "max 5%: {over} pages flushed ({under} at 90%)"
    );
}

/// innodb_max_dirty_pages_pct_lwm: below innodb_max_dirty_pages_pct, dirty pages above the
/// low-water mark start the cleaners gradually; at 0 (no mark) nothing is flushed for them.
#[test]
fn max_dirty_pages_pct_lwm_starts_flushing_below_the_limit() {
    let (no_mark, dirty, _, mark) =
        flushing_before_and_after("SET GLOBAL innodb_max_dirty_pages_pct_lwm = 5");
    eprintln!("lwm 0: {no_mark} pages flushed in 3 s ({dirty} dirty); lwm 5: {mark}");
    assert!(no_mark <= 20, "lwm 0: {no_mark} pages flushed");
    assert!(mark >= 150, "lwm 5: only {mark} pages flushed");
}

/// The highest Innodb_checkpoint_age seen while `rows` rows are inserted.
fn max_checkpoint_age(extra: &[&str], rows: u64) -> u64 {
    let s = start_with(false, extra);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE lf").unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        let mut m = connect(&s);
        std::thread::spawn(move || {
            let mut max = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                max = max.max(global_status(&mut m, "Innodb_checkpoint_age"));
                std::thread::sleep(Duration::from_millis(20));
            }
            max
        })
    };
    fill(&mut c, "lf.t", rows);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    sampler.join().unwrap()
}

/// innodb_log_file_size x innodb_log_files_in_group is the redo capacity: the checkpoint age
/// never reaches it (flushing makes room first), and a larger capacity lets it grow further.
#[test]
fn log_capacity_bounds_the_checkpoint_age() {
    let quiet = [
        "--innodb-buffer-pool-size=128M",
        "--innodb-max-dirty-pages-pct-lwm=0",
        "--innodb-log-file-size=4M",
    ];
    let two = max_checkpoint_age(
        &[&quiet[..], &["--innodb-log-files-in-group=2"]].concat(),
        60_000,
    );
    let eight = max_checkpoint_age(
        &[&quiet[..], &["--innodb-log-files-in-group=8"]].concat(),
        60_000,
    );
    eprintln!("highest checkpoint age: {two} with 2 x 4M, {eight} with 8 x 4M");
    assert!(two < 8 << 20, "2 x 4M: checkpoint age {two}");
    assert!(eight > 8 << 20, "8 x 4M: checkpoint age only {eight}");
    assert!(eight < 32 << 20, "8 x 4M: checkpoint age {eight}");
}

/// Pages flushed by one caller, from the monitor's BUFFER FLUSH section.
fn pages_by(c: &mut mysql::Conn, caller: &str) -> u64 {
    let status: (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    let line = status
        .2
        .lines()
        .find(|l| l.starts_with("Pages-by "))
        .unwrap_or_else(|| panic!("no Pages-by line:\n{}", status.2));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == format!("{caller}:"))
        .unwrap_or_else(|| panic!("no {caller} in {line}"));
    words[at + 1].parse().unwrap()
}

/// innodb_adaptive_flushing: with it ON the cleaners flush for the redo log as soon as the
/// checkpoint age passes innodb_adaptive_flushing_lwm, so the log never fills; OFF they wait
/// for the log's async point, where the writers must flush for it themselves.
#[test]
fn adaptive_flushing_flushes_ahead_of_the_redo_log() {
    let run = |adaptive: &str| {
        let (_s, mut c) = small_log_server(&[&format!("--innodb-adaptive-flushing={adaptive}")]);
        // Rewrite every row's long column over and over for 6 s: about 40 MB of redo a pass.
        rewrite_for(&mut c, "d.t", 40_000, 6);
        let age = global_status(&mut c, "Innodb_checkpoint_age");
        (
            pages_by(&mut c, "redolog"),
            pages_by(&mut c, "checkpoint"),
            age,
        )
    };
    let (on_redo, on_sync, on_age) = run("ON");
    let (off_redo, off_sync, off_age) = run("OFF");
    eprintln!(
        "adaptive ON: {on_redo} pages for the redo log, {on_sync} by writers at the checkpoint \
         limit (age {on_age}); OFF: {off_redo}, {off_sync} (age {off_age})"
    );
    assert!(on_redo > 0, "ON: no page flushed for the redo log");
    assert!(
        on_redo > off_redo + off_redo / 2,
        "ON {on_redo} vs OFF {off_redo}"
    );
}

/// innodb_deadlock_detect: ON, a deadlock is found at once (1213); OFF, it lasts until a lock
/// wait times out (1205).
#[test]
fn deadlock_detect_off_leaves_deadlocks_to_the_timeout() {
    let s = start_with(false, &[]);
    let mut c = connect(&s);
    for q in [
        "CREATE DATABASE dd",
        "CREATE TABLE dd.t (id INT PRIMARY KEY, n INT)",
        "INSERT INTO dd.t VALUES (1, 0), (2, 0)",
        "SET GLOBAL innodb_lock_wait_timeout = 2",
    ] {
        c.query_drop(q).unwrap();
    }
    let deadlock = |detect: &str| {
        let mut c = connect(&s);
        c.query_drop(format!("SET GLOBAL innodb_deadlock_detect = {detect}"))
            .unwrap();
        let mut a = connect(&s);
        let mut b = connect(&s);
        a.query_drop("BEGIN").unwrap();
        b.query_drop("BEGIN").unwrap();
        a.query_drop("UPDATE dd.t SET n = 1 WHERE id = 1").unwrap();
        b.query_drop("UPDATE dd.t SET n = 1 WHERE id = 2").unwrap();
        let other = std::thread::spawn(move || {
            let r = a.query_drop("UPDATE dd.t SET n = 2 WHERE id = 2");
            (a, r)
        });
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let mine = b.query_drop("UPDATE dd.t SET n = 2 WHERE id = 1");
        let (mut a, theirs) = other.join().unwrap();
        let took = started.elapsed();
        let code = |r: &mysql::Result<()>| match r {
            Err(mysql::Error::MySqlError(e)) => e.code,
            _ => 0,
        };
        let codes = [code(&mine), code(&theirs)];
        a.query_drop("ROLLBACK").unwrap();
        b.query_drop("ROLLBACK").unwrap();
        (codes, took)
    };
    let (on, on_took) = deadlock("ON");
    let (off, off_took) = deadlock("OFF");
    eprintln!("detect ON: {on:?} in {on_took:?}; OFF: {off:?} in {off_took:?}");
    assert!(on.contains(&1213), "detect ON: {on:?}");
    assert!(
        on_took < Duration::from_millis(1_500),
        "detect ON took {on_took:?}"
    );
    assert!(
        off.contains(&1205) && !off.contains(&1213),
        "detect OFF: {off:?}"
    );
    assert!(
        off_took >= Duration::from_millis(1_500),
        "detect OFF took {off_took:?}"
    );
}

/// innodb_rollback_on_timeout: OFF, a lock wait timeout undoes the statement alone; ON, the
/// whole transaction.
#[test]
fn rollback_on_timeout_undoes_the_whole_transaction() {
    let rows_left = |on: &str| {
        let s = start_with(
            false,
            &[
                &format!("--innodb-rollback-on-timeout={on}"),
                "--innodb-lock-wait-timeout=1",
            ],
        );
        let mut c = connect(&s);
        for q in [
            "CREATE DATABASE rt",
            "CREATE TABLE rt.t (id INT PRIMARY KEY)",
            "INSERT INTO rt.t VALUES (1)",
        ] {
            c.query_drop(q).unwrap();
        }
        let mut holder = connect(&s);
        holder.query_drop("BEGIN").unwrap();
        holder
            .query_drop("SELECT * FROM rt.t WHERE id = 1 FOR UPDATE")
            .unwrap();
        c.query_drop("BEGIN").unwrap();
        c.query_drop("INSERT INTO rt.t VALUES (2)").unwrap();
        let err = c.query_drop("DELETE FROM rt.t WHERE id = 1").unwrap_err();
        assert!(
            matches!(err, mysql::Error::MySqlError(ref e) if e.code == 1205),
            "{err}"
        );
        c.query_drop("COMMIT").unwrap();
        holder.query_drop("COMMIT").unwrap();
        text_rows(&mut c, "SELECT id FROM rt.t ORDER BY id")
    };
    assert_eq!(rows_left("OFF"), ["1", "2"]);
    assert_eq!(rows_left("ON"), ["1"]);
}

/// innodb_flush_log_at_trx_commit=0: the log is written and synced once a second (and when
/// the log buffer fills or a page flush needs it), not at each commit; =2 writes it at each
/// commit and syncs once a second.
#[test]
fn trx_commit_0_writes_the_log_once_a_second() {
    let s = start_with(false, &["--innodb-flush-log-at-trx-commit=0"]);
    let mut c = connect(&s);
    for q in [
        "CREATE DATABASE tc",
        "CREATE TABLE tc.t (id INT PRIMARY KEY AUTO_INCREMENT, n INT)",
    ] {
        c.query_drop(q).unwrap();
    }
    let log_writes = |c: &mut mysql::Conn| {
        let before = global_status(c, "Innodb_log_writes");
        let start = Instant::now();
        let mut commits = 0;
        while start.elapsed() < Duration::from_secs(3) {
            c.query_drop("INSERT INTO tc.t (n) VALUES (1)").unwrap();
            commits += 1;
        }
        (global_status(c, "Innodb_log_writes") - before, commits)
    };
    let (zero, commits0) = log_writes(&mut c);
    c.query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        .unwrap();
    let (two, commits2) = log_writes(&mut c);
    eprintln!("log writes in 3 s: {zero} for {commits0} commits at 0, {two} for {commits2} at 2");
    assert!(
        zero * 100 < commits0,
        "trx_commit 0: {zero} log writes for {commits0} commits"
    );
    assert!(
        two >= commits2 / 2,
        "trx_commit 2: {two} log writes for {commits2} commits"
    );
}

/// innodb_max_purge_lag: once the history list passes it, each change is delayed (the
/// monitor's "DML Delay"), so a writer slows down while a reader holds the history.
#[test]
fn max_purge_lag_delays_writes_while_history_grows() {
    let s = start_with(false, &[]);
    let mut c = connect(&s);
    for q in [
        "CREATE DATABASE pl",
        "CREATE TABLE pl.t (id INT PRIMARY KEY, n INT)",
        "INSERT INTO pl.t VALUES (1, 0)",
    ] {
        c.query_drop(q).unwrap();
    }
    let mut reader = connect(&s);
    reader
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let updates = |c: &mut mysql::Conn| {
        let start = Instant::now();
        for _ in 0..300 {
            c.query_drop("UPDATE pl.t SET n = n + 1 WHERE id = 1")
                .unwrap();
        }
        start.elapsed()
    };
    let free = updates(&mut c);
    c.query_drop("SET GLOBAL innodb_max_purge_lag = 100")
        .unwrap();
    c.query_drop("SET GLOBAL innodb_max_purge_lag_delay = 20000")
        .unwrap();
    let delayed = updates(&mut c);
    let status: (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    let delay_line = status
        .2
        .lines()
        .find(|l| l.starts_with("DML Delay:"))
        .unwrap_or("")
        .to_string();
    reader.query_drop("COMMIT").unwrap();
    eprintln!("300 updates: {free:?} with no lag limit, {delayed:?} with 100 ({delay_line})");
    assert!(delayed > free * 3, "{delayed:?} with the limit vs {free:?}");
    assert!(!delay_line.starts_with("DML Delay: 0 "), "{delay_line}");
}

/// A server whose 2 x 8M redo log a writer fills in seconds (a 128M pool, no dirty-page
/// low-water mark), started with `options` too, holding d.t: 40,000 rows (`fill`).
fn small_log_server(options: &[&str]) -> (common::Server, mysql::Conn) {
    let mut all = vec![
        "--innodb-buffer-pool-size=128M",
        "--innodb-max-dirty-pages-pct-lwm=0",
        "--innodb-log-file-size=8M",
    ];
    all.extend_from_slice(options);
    let s = start_with(false, &all);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    fill(&mut c, "d.t", 40_000);
    (s, c)
}

/// Rewrites rows of `table` (filled by `fill` with `rows` rows) for `secs` seconds: about 300
/// bytes of redo per row.
fn rewrite_for(c: &mut mysql::Conn, table: &str, rows: u64, secs: u64) {
    let start = Instant::now();
    let mut from = 0;
    while start.elapsed() < Duration::from_secs(secs) {
        c.exec_drop(
            format!(
                "UPDATE {table} SET v = REPEAT(CHAR(97 + n), 250), n = (n + 1) % 20 WHERE id \
                 BETWEEN ? AND ?"
            ),
            (from, from + 999),
        )
        .unwrap();
        from = (from + 1_000) % rows;
    }
}

/// innodb_io_capacity_max caps what the cleaners flush a second for the redo log, however far
/// the checkpoint age is past the adaptive mark (beyond it the writers flush for themselves).
#[test]
fn io_capacity_max_caps_flushing_for_the_redo_log() {
    let run = |max: &str| {
        let (_s, mut c) = small_log_server(&[
            "--innodb-io-capacity=100",
            &format!("--innodb-io-capacity-max={max}"),
        ]);
        let before = pages_by(&mut c, "redolog");
        rewrite_for(&mut c, "d.t", 40_000, 6);
        pages_by(&mut c, "redolog") - before
    };
    let low = run("100");
    let high = run("4000");
    eprintln!(
        "pages flushed for the redo log in 6 s: {low} at io_capacity_max 100, {high} at 4000"
    );
    assert!(low <= 1_000, "io_capacity_max 100: {low} pages in 6 s");
    assert!(
        high >= 3 * low.max(300),
        "io_capacity_max 4000: {high} pages in 6 s"
    );
}

/// innodb_adaptive_flushing_lwm: the share of the log's async point the checkpoint age must
/// pass before the cleaners flush for the redo log.
#[test]
fn adaptive_flushing_lwm_sets_where_flushing_for_the_redo_log_starts() {
    let s = start_with(
        false,
        &[
            "--innodb-buffer-pool-size=128M",
            "--innodb-max-dirty-pages-pct-lwm=0",
            "--innodb-log-file-size=64M",
            "--innodb-adaptive-flushing-lwm=70",
        ],
    );
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE al").unwrap();
    fill(&mut c, "al.t", 20_000);
    // One pass rewrites every row: about 8 MB of redo, against an async point near 98 MB.
    let flushed_while_writing = |c: &mut mysql::Conn, passes: u64| {
        let before = pages_by(c, "redolog");
        for from in (0..20_000 * passes).step_by(1_000) {
            c.exec_drop(
                "UPDATE al.t SET v = REPEAT(CHAR(97 + n), 250), n = (n + 1) % 20 WHERE id \
                 BETWEEN ? AND ?",
                (from % 20_000, from % 20_000 + 999),
            )
            .unwrap();
        }
        std::thread::sleep(Duration::from_secs(2));
        pages_by(c, "redolog") - before
    };
    let high = flushed_while_writing(&mut c, 2);
    let age = global_status(&mut c, "Innodb_checkpoint_age");
    c.query_drop("SET GLOBAL innodb_adaptive_flushing_lwm = 5")
        .unwrap();
    let low = flushed_while_writing(&mut c, 1);
    eprintln!(
        "pages flushed for the redo log: {high} at lwm 70 (checkpoint age {age}), {low} at lwm \
         5"
    );
    assert!(
        age > 10 << 20,
        "the writer made only {age} bytes of checkpoint age"
    );
    assert_eq!(
        high, 0,
        "lwm 70: {high} pages flushed at checkpoint age {age}"
    );
    assert!(low >= 100, "lwm 5: only {low} pages flushed");
}

/// innodb_buffer_pool_dump_pct (dynamic): the share of each LRU list the next dump lists.
#[test]
fn buffer_pool_dump_pct_sets_how_much_is_dumped() {
    let s = start_with(false, &["--innodb-buffer-pool-dump-pct=100"]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE dp").unwrap();
    fill(&mut c, "dp.t", 10_000);
    let dumped = |c: &mut mysql::Conn| {
        let pages = global_status(c, "Innodb_buffer_pool_pages_data");
        c.query_drop("SET GLOBAL innodb_buffer_pool_dump_now = ON")
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, v): (String, String) = c
                .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_dump_status'")
                .unwrap()
                .unwrap();
            if v.starts_with("Buffer pool(s) dump completed") {
                break;
            }
            assert!(Instant::now() < deadline, "dump status: {v}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let file = std::fs::read_to_string(s.datadir().join("ib_buffer_pool")).unwrap();
        (file.lines().count() as u64, pages)
    };
    let (all, pages_all) = dumped(&mut c);
    c.query_drop("SET GLOBAL innodb_buffer_pool_dump_pct = 10")
        .unwrap();
    let (tenth, pages_tenth) = dumped(&mut c);
    eprintln!("dumped {all} of {pages_all} pages at 100%, {tenth} of {pages_tenth} at 10%");
    assert!(all * 10 >= pages_all * 9, "100%: {all} of {pages_all}");
    assert!(
        tenth * 100 >= pages_tenth * 8 && tenth * 100 <= pages_tenth * 12 + 100,
        "10%: {tenth} of {pages_tenth}"
    );
}

/// The ids an INSERT ... SELECT of `rows` rows got while another session inserted single rows
/// all along, under innodb_autoinc_lock_mode `mode`: (lowest, highest) of the bulk insert's
/// ids, and how many single rows went in while it ran.
fn bulk_ids_beside_single_inserts(mode: &str, rows: u64) -> (u64, u64, u64) {
    let s = start_with(false, &[&format!("--innodb-autoinc-lock-mode={mode}")]);
    let mut c = connect(&s);
    for q in [
        "CREATE DATABASE ai",
        "CREATE TABLE ai.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, src CHAR(1))",
    ] {
        c.query_drop(q).unwrap();
    }
    fill(&mut c, "ai.src", rows);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let single = {
        let stop = stop.clone();
        let mut w = connect(&s);
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                w.query_drop("INSERT INTO ai.t (src) VALUES ('s')").unwrap();
                n += 1;
            }
            n
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    c.query_drop("INSERT INTO ai.t (src) SELECT 'b' FROM ai.src")
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let singles = single.join().unwrap();
    let (lo, hi): (u64, u64) = c
        .query_first("SELECT MIN(id), MAX(id) FROM ai.t WHERE src = 'b'")
        .unwrap()
        .unwrap();
    (lo, hi, singles)
}

/// innodb_autoinc_lock_mode: 2 (interleaved) lets single-row inserts take values in the middle
/// of an INSERT ... SELECT's; 1 (consecutive) holds the table's AUTO-INC lock for the bulk
/// insert, so its values are consecutive.
#[test]
fn autoinc_lock_mode_decides_whether_a_bulk_insert_gets_consecutive_values() {
    let rows = 30_000;
    let (lo2, hi2, singles2) = bulk_ids_beside_single_inserts("2", rows);
    let (lo1, hi1, singles1) = bulk_ids_beside_single_inserts("1", rows);
    eprintln!(
        "INSERT ... SELECT of {rows} rows: ids {lo2}..{hi2} in mode 2 ({singles2} single \
         inserts beside it), {lo1}..{hi1} in mode 1 ({singles1})"
    );
    assert!(
        hi2 - lo2 + 1 > rows,
        "mode 2: no single insert came in between"
    );
    assert_eq!(
        hi1 - lo1 + 1,
        rows,
        "mode 1: the bulk insert's values interleaved"
    );
}

/// innodb_autoinc_lock_mode=0 (traditional): every insert holds the AUTO-INC lock to its end,
/// so an insert waiting for a row lock holds up the other sessions' inserts (performance_schema
/// shows the AUTO_INC wait); in modes 1 and 2 a single-row insert takes no such lock. An
/// INSERT ... VALUES of several rows gets consecutive values in every mode.
#[test]
fn autoinc_lock_mode_0_holds_the_lock_to_the_end_of_each_insert() {
    let waits = |mode: &str| {
        let s = start_with(false, &[&format!("--innodb-autoinc-lock-mode={mode}")]);
        let mut c = connect(&s);
        for q in [
            "CREATE DATABASE tr",
            "CREATE TABLE tr.t (id INT AUTO_INCREMENT PRIMARY KEY, u INT UNIQUE)",
        ] {
            c.query_drop(q).unwrap();
        }
        // C inserts u = 5 and stays open: A's second row waits for it.
        let mut holder = connect(&s);
        holder.query_drop("BEGIN").unwrap();
        holder
            .query_drop("INSERT INTO tr.t (u) VALUES (5)")
            .unwrap();
        let mut a = connect(&s);
        let blocked = std::thread::spawn(move || {
            let r = a.query_drop("INSERT INTO tr.t (u) VALUES (1), (5)");
            (a, r)
        });
        std::thread::sleep(Duration::from_millis(300));
        let mut b = connect(&s);
        b.query_drop("SET SESSION innodb_lock_wait_timeout = 2")
            .unwrap();
        let third = std::thread::spawn(move || {
            let started = Instant::now();
            let r = b.query_drop("INSERT INTO tr.t (u) VALUES (9)");
            (r.is_err(), started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(500));
        let modes = text_rows(
            &mut c,
            "SELECT LOCK_MODE, LOCK_STATUS FROM performance_schema.data_locks WHERE LOCK_TYPE = \
             'TABLE' AND LOCK_MODE = 'AUTO_INC' ORDER BY 1, 2",
        );
        let (timed_out, took) = third.join().unwrap();
        holder.query_drop("ROLLBACK").unwrap();
        let (mut a, first) = blocked.join().unwrap();
        assert!(first.is_ok(), "{first:?}");
        // A multi-row insert's values are consecutive in every mode.
        a.query_drop("INSERT INTO tr.t (u) VALUES (20), (21), (22), (23)")
            .unwrap();
        let ids = text_rows(&mut c, "SELECT id FROM tr.t WHERE u >= 20 ORDER BY u");
        let ids: Vec<u64> = ids.iter().map(|i| i.parse().unwrap()).collect();
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "mode {mode}: {ids:?}"
        );
        (timed_out, took, modes)
    };
    let (timed_out, took, modes) = waits("0");
    eprintln!(
        "mode 0: the third insert timed out: {timed_out} after {took:?}; table locks {modes:?}"
    );
    assert!(timed_out, "mode 0: the third insert did not wait");
    assert_eq!(modes, ["AUTO_INC,GRANTED", "AUTO_INC,WAITING"]);
    for mode in ["1", "2"] {
        let (timed_out, took, modes) = waits(mode);
        eprintln!("mode {mode}: the third insert took {took:?}; table locks {modes:?}");
        assert!(
            !timed_out && took < Duration::from_millis(400),
            "mode {mode}: {took:?}"
        );
        assert!(modes.is_empty(), "{modes:?}");
    }
}

/// The warnings of the last statement as `code message` lines.
fn warnings(c: &mut mysql::Conn) -> Vec<String> {
    c.query_map("SHOW WARNINGS", |(_, code, msg): (String, u32, String)| {
        format!("{code} {msg}")
    })
    .unwrap()
}

/// innodb_strict_mode: ON, a ROW_FORMAT / KEY_BLOCK_SIZE that InnoDB cannot honour makes
/// CREATE and ALTER TABLE fail with 1031 after 1478 warnings naming the problem; OFF, the
/// table is made with the option ignored or DYNAMIC assumed, and warnings say so. The options
/// stay as written in SHOW CREATE TABLE and CREATE_OPTIONS; ROW_FORMAT shows the format in
/// force. (innoxide has no compressed pages: COMPRESSED is refused or assumed DYNAMIC, as
/// InnoDB does where it cannot make one.)
#[test]
fn strict_mode_refuses_or_adjusts_row_format_options() {
    let s = start_with(false, &[]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE sm").unwrap();
    let cases = [
        (
            "CREATE TABLE sm.a (id INT) ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=4",
            "1478 InnoDB: innoxide does not implement ROW_FORMAT=COMPRESSED.",
            "1478 InnoDB: assuming ROW_FORMAT=DYNAMIC.",
        ),
        (
            "CREATE TABLE sm.b (id INT) KEY_BLOCK_SIZE=3",
            "1478 InnoDB: invalid KEY_BLOCK_SIZE = 3. Valid values are [1, 2, 4, 8, 16]",
            "1478 InnoDB: ignoring KEY_BLOCK_SIZE=3.",
        ),
        (
            "CREATE TABLE sm.c (id INT) ROW_FORMAT=DYNAMIC KEY_BLOCK_SIZE=8",
            "1478 InnoDB: cannot specify ROW_FORMAT = DYNAMIC with KEY_BLOCK_SIZE.",
            "1478 InnoDB: ignoring KEY_BLOCK_SIZE=8 unless ROW_FORMAT=COMPRESSED.",
        ),
    ];
    for (q, strict_warning, lax_warning) in cases {
        let e = c.query_drop(q).unwrap_err();
        assert!(
            matches!(e, mysql::Error::MySqlError(ref e) if e.code == 1031),
            "{q}: {e}"
        );
        let w = warnings(&mut c);
        assert_eq!(
            w.first().map(String::as_str),
            Some(strict_warning),
            "{q}: {w:?}"
        );
        assert!(w.iter().any(|l| l.starts_with("1031 ")), "{q}: {w:?}");
        c.query_drop("SET SESSION innodb_strict_mode = OFF")
            .unwrap();
        c.query_drop(q).unwrap();
        assert_eq!(warnings(&mut c), [lax_warning], "{q}");
        c.query_drop("SET SESSION innodb_strict_mode = ON").unwrap();
    }
    let rows = text_rows(
        &mut c,
        "SELECT TABLE_NAME, ROW_FORMAT, CREATE_OPTIONS FROM information_schema.TABLES WHERE \
         TABLE_SCHEMA = 'sm' ORDER BY 1",
    );
    assert_eq!(
        rows,
        [
            "a,Dynamic,row_format=COMPRESSED KEY_BLOCK_SIZE=4",
            "b,Dynamic,KEY_BLOCK_SIZE=3",
            "c,Dynamic,row_format=DYNAMIC KEY_BLOCK_SIZE=8",
        ]
    );
    let (_, create): (String, String) = c.query_first("SHOW CREATE TABLE sm.a").unwrap().unwrap();
    assert!(
        create.ends_with("ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=4"),
        "{create}"
    );
    // A valid table passes in both modes; ALTER TABLE is checked the same way.
    c.query_drop("CREATE TABLE sm.d (id INT) ROW_FORMAT=COMPACT")
        .unwrap();
    assert!(warnings(&mut c).is_empty());
    let e = c
        .query_drop("ALTER TABLE sm.d ROW_FORMAT=COMPRESSED")
        .unwrap_err();
    assert!(
        matches!(e, mysql::Error::MySqlError(ref e) if e.code == 1031),
        "{e}"
    );
    c.query_drop("SET GLOBAL innodb_strict_mode = OFF").unwrap();
    let mut fresh = connect(&s);
    fresh
        .query_drop("ALTER TABLE sm.d ROW_FORMAT=COMPRESSED")
        .unwrap();
    assert_eq!(
        warnings(&mut fresh),
        ["1478 InnoDB: assuming ROW_FORMAT=DYNAMIC."]
    );
}
