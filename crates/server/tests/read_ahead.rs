//! Read-ahead from a real server (issue #5): innodb_read_io_threads, innodb_read_ahead_threshold,
//! innodb_random_read_ahead, and what SHOW STATUS and the InnoDB monitor show of them.

mod common;

use std::collections::HashMap;

use common::{connect, start_in, start_with, Server};
use mysql::prelude::Queryable;

/// The options of every start: a pool that holds the table, a redo log that does not change.
const OPTS: &[&str] = &[
    "--innodb-buffer-pool-size=128M",
    "--innodb-log-file-size=64M",
    "--innodb-buffer-pool-load-at-startup=OFF",
];

const ROWS: u64 = 150_000;

fn counters(c: &mut mysql::Conn) -> HashMap<String, u64> {
    c.query::<(String, String), _>("SHOW GLOBAL STATUS LIKE 'Innodb_%'")
        .unwrap()
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect()
}

/// Restarts `s` (a clean shutdown) with a cold buffer pool and `extra` options, scans the table
/// whole and returns what the scan moved: (read ahead, random read ahead, buffer pool reads,
/// pages read, evicted without access).
fn cold_scan(s: Server, extra: &[&str]) -> (Server, [u64; 5]) {
    let dir = s.stop_keep_dir(false);
    let opts: Vec<&str> = OPTS.iter().chain(extra).copied().collect();
    let s = start_in(dir, false, &opts);
    let mut c = connect(&s);
    let before = counters(&mut c);
    let (n, len): (u64, u64) = c
        .query_first("SELECT COUNT(*), SUM(LENGTH(v)) FROM ra.t")
        .unwrap()
        .unwrap();
    assert_eq!((n, len), (ROWS, ROWS * 250), "the scan's result");
    // Read-ahead still in flight when the scan ended lands in the next second.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let after = counters(&mut c);
    let d = |k: &str| after[k] - before[k];
    let moved = [
        d("Innodb_buffer_pool_read_ahead"),
        d("Innodb_buffer_pool_read_ahead_rnd"),
        d("Innodb_buffer_pool_reads"),
        d("Innodb_pages_read"),
        d("Innodb_buffer_pool_read_ahead_evicted"),
    ];
    eprintln!("{extra:?}: read ahead, random, pool reads, pages read, evicted = {moved:?}");
    (s, moved)
}

/// After a restart with a cold pool, a full scan of a table of many extents (150,000 rows in
/// key order, about 2,400 leaves) is read mostly by linear read-ahead on the I/O threads: the
/// scanning thread itself reads a small part of the pages. innodb_read_ahead_threshold=0
/// turns linear read-ahead off (InnoDB's code does the same); innodb_random_read_ahead=ON
/// then reads the rest of each extent once 13 of its pages were used.
#[test]
fn a_cold_full_scan_is_read_ahead() {
    let s = start_with(false, OPTS);
    let mut c = connect(&s);
    for q in [
        "CREATE DATABASE ra",
        "CREATE TABLE ra.t (id INT PRIMARY KEY, v VARCHAR(300))",
        "SET SESSION cte_max_recursion_depth = 1000000",
        &format!(
            "INSERT INTO ra.t WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM \
             seq WHERE n < {ROWS}) SELECT n, REPEAT('x', 250) FROM seq"
        ),
    ] {
        c.query_drop(q).unwrap();
    }
    let v: (u64, u64, String) = c
        .query_first(
            "SELECT @@innodb_read_io_threads, @@innodb_read_ahead_threshold, \
             @@innodb_random_read_ahead",
        )
        .unwrap()
        .unwrap();
    assert_eq!(v, (4, 56, "0".into()), "MySQL 8.0's defaults");
    let e = c
        .query_drop("SET GLOBAL innodb_read_io_threads = 8")
        .unwrap_err();
    assert!(e.to_string().contains("1238"), "{e}");
    drop(c);

    // Linear read-ahead at the default threshold.
    let (s, [ra, rnd, reads, pages, evicted]) = cold_scan(s, &[]);
    assert!(
        pages > 2000 && ra * 10 >= pages * 7 && reads * 4 <= pages,
        "read ahead {ra}, read by the scan {reads}, of {pages} pages"
    );
    assert_eq!((rnd, evicted), (0, 0));
    let mut c = connect(&s);
    let (_, _, text): (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    let threads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("I/O thread ") && l.ends_with("(read thread)"))
        .collect();
    assert_eq!(threads.len(), 4, "{text}");
    assert!(text.contains("Pages read ahead "), "{text}");
    drop(c);

    // Off: the scanning thread reads every page.
    let (s, [ra, rnd, reads, pages, _]) = cold_scan(s, &["--innodb-read-ahead-threshold=0"]);
    assert_eq!((ra, rnd), (0, 0));
    assert_eq!(reads, pages);

    // Random read-ahead alone.
    let (_s, [ra, rnd, reads, pages, _]) = cold_scan(
        s,
        &[
            "--innodb-read-ahead-threshold=0",
            "--innodb-random-read-ahead=ON",
        ],
    );
    assert_eq!(ra, 0);
    assert!(
        rnd * 10 >= pages * 5 && reads == pages,
        "random read ahead {rnd} (counted in the pool reads, {reads}) of {pages} pages"
    );
}
