//! Page flushing knobs seen from a real server (issue #5, "every knob it shows must really
//! act"): innodb_flush_neighbors, and the I/O threads (innodb_read_io_threads,
//! innodb_write_io_threads) as the monitor lists them.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{connect, fill, flushed_over, start_with};
use mysql::prelude::Queryable;

/// The neighbour-flushing rows of information_schema.INNODB_METRICS.
fn neighbor_metrics(c: &mut mysql::Conn) -> HashMap<String, u64> {
    c.query::<(String, u64), _>(
        "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS \
         WHERE NAME LIKE 'buffer_flush_neighbor%'",
    )
    .unwrap()
    .into_iter()
    .collect()
}

/// An idle server writes innodb_io_capacity pages a second from its flush list. With
/// innodb_flush_neighbors=1 (SET GLOBAL, at once) each of those pages takes the contiguous
/// dirty pages of its extent with it, so a load that dirtied contiguous pages is written back
/// many times faster at the same io_capacity, and the neighbour metrics count the extra pages.
#[test]
fn flush_neighbors_writes_the_contiguous_dirty_pages_with_each_page() {
    let s = start_with(false, common::IDLE_FLUSHING);
    let mut c = connect(&s);
    let mode: u64 = c
        .query_first("SELECT @@innodb_flush_neighbors")
        .unwrap()
        .unwrap();
    assert_eq!(mode, 0, "MySQL 8.0's default");
    // Rows in key order fill consecutive leaf pages.
    c.query_drop("CREATE DATABASE nb").unwrap();
    fill(&mut c, "nb.t", 150_000);
    // Let the cleaners see the server idle, then count: about 100 pages a second, alone.
    std::thread::sleep(Duration::from_secs(2));
    let (alone, dirty) = flushed_over(&mut c, 4);
    assert!(
        dirty > 1500,
        "{dirty} dirty pages left: too few to measure the faster rate"
    );
    assert!(
        (150..=800).contains(&alone),
        "flush_neighbors=0: {alone} pages flushed in 4 s"
    );
    let m = neighbor_metrics(&mut c);
    assert_eq!(m.len(), 3, "{m:?}");
    assert!(
        m.values().all(|&v| v == 0),
        "no neighbour flushed yet: {m:?}"
    );

    c.query_drop("SET GLOBAL innodb_flush_neighbors = 1")
        .unwrap();
    let (together, left) = flushed_over(&mut c, 2);
    // At least five times the rate (in half the time), or nearly everything that was left.
    assert!(
        together >= (alone * 5 / 2).min(dirty * 9 / 10),
        "flush_neighbors=1: {together} pages flushed in 2 s, {left} dirty left \
         (0: {alone} in 4 s)"
    );
    let m = neighbor_metrics(&mut c);
    eprintln!(
        "io_capacity=100: flush_neighbors=0 wrote {alone} pages in 4 s ({dirty} dirty left); \
         1 wrote {together} in 2 s ({left} left); metrics {m:?}"
    );
    let total = m["buffer_flush_neighbor_total_pages"];
    let calls = m["buffer_flush_neighbor"];
    assert!(
        total >= together / 2 && calls > 0,
        "neighbours written {total} in {calls} calls, of {together} pages: {m:?}"
    );
    assert_eq!(m["buffer_flush_neighbor_pages"], total / calls, "{m:?}");
}

/// innodb_read_io_threads and innodb_write_io_threads are static and start that many threads,
/// which the monitor's FILE I/O section lists as InnoDB lists its I/O threads.
#[test]
fn io_threads_are_started_and_listed() {
    let s = start_with(
        false,
        &["--innodb-read-io-threads=2", "--innodb-write-io-threads=3"],
    );
    let mut c = connect(&s);
    let n: (u64, u64) = c
        .query_first("SELECT @@innodb_read_io_threads, @@innodb_write_io_threads")
        .unwrap()
        .unwrap();
    assert_eq!(n, (2, 3));
    for v in ["innodb_read_io_threads", "innodb_write_io_threads"] {
        let e = c.query_drop(format!("SET GLOBAL {v} = 4")).unwrap_err();
        assert!(e.to_string().contains("1238"), "{v}: {e}");
    }
    let (_, _, text): (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("I/O thread "))
        .collect();
    let want: Vec<String> = (0..5)
        .map(|i| {
            let kind = if i < 2 { "read" } else { "write" };
            format!("I/O thread {i} state: waiting for completed aio requests ({kind} thread)")
        })
        .collect();
    assert_eq!(lines, want, "{text}");
    assert!(
        text.contains("Pending normal aio reads: [0, 0] , aio writes: [0, 0, 0] ,"),
        "{text}"
    );
}
