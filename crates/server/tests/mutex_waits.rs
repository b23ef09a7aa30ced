//! Wait accounting seen from a client (issue #5 item 5): after a concurrent workload (several
//! connections updating the same rows and inserting into the same leaf pages), SHOW ENGINE
//! INNODB MUTEX lists objects with "waits=N" > 0, performance_schema's
//! events_waits_summary_global_by_event_name has rows with COUNT_STAR > 0 whose times are
//! consistent (MIN <= AVG <= MAX <= SUM), and SHOW ENGINE INNODB STATUS's SEMAPHORES section
//! carries the same totals.

mod common;

use std::time::{Duration, Instant};

use common::{connect, start};
use mysql::prelude::Queryable;

const THREADS: usize = 8;

fn workload(port_conn: impl Fn() -> mysql::Conn + Sync) {
    let stop = Instant::now() + Duration::from_secs(3);
    std::thread::scope(|sc| {
        for t in 0..THREADS {
            let mut c = port_conn();
            sc.spawn(move || {
                let mut i = 0u64;
                while Instant::now() < stop {
                    // Hot rows locked across a round trip: row lock waits, and X latches
                    // on the same leaf.
                    c.query_drop("START TRANSACTION").unwrap();
                    c.exec_drop("UPDATE d.hot SET v = v + 1 WHERE id = ?", (i % 4,))
                        .unwrap();
                    // Appends to one index's rightmost leaf and the log.
                    c.exec_drop(
                        "INSERT INTO d.ins (t, v) VALUES (?, REPEAT('x', 200))",
                        (t as u64,),
                    )
                    .unwrap();
                    c.query_drop("COMMIT").unwrap();
                    let _: Option<u64> = c
                        .exec_first("SELECT v FROM d.hot WHERE id = ?", (i % 4,))
                        .unwrap();
                    i += 1;
                }
            });
        }
    });
}

#[test]
fn mutex_waits_are_counted_and_shown() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.hot (id INT PRIMARY KEY, v BIGINT)")
        .unwrap();
    c.query_drop("INSERT INTO d.hot VALUES (0, 0), (1, 0), (2, 0), (3, 0)")
        .unwrap();
    c.query_drop(
        "CREATE TABLE d.ins (id INT AUTO_INCREMENT PRIMARY KEY, t INT, v VARCHAR(300), KEY (t))",
    )
    .unwrap();

    // Before any concurrency the statement works; rows, if any, have the right shape.
    let before: Vec<(String, String, String)> = c.query("SHOW ENGINE INNODB MUTEX").unwrap();
    for (t, _, st) in &before {
        assert_eq!(t, "InnoDB");
        assert!(st.starts_with("waits="), "{st}");
    }

    workload(|| connect(&s));

    // SHOW ENGINE INNODB MUTEX: Type, Name, Status "waits=N" with N > 0.
    let rows: Vec<(String, String, String)> = c.query("SHOW ENGINE INNODB MUTEX").unwrap();
    assert!(
        !rows.is_empty(),
        "no waits recorded after a contended workload"
    );
    let mut total = 0u64;
    for (t, name, st) in &rows {
        assert_eq!(t, "InnoDB");
        assert!(!name.is_empty());
        let w: u64 = st
            .strip_prefix("waits=")
            .unwrap_or_else(|| panic!("status {st}"))
            .parse()
            .unwrap();
        assert!(w > 0, "{name}: {st}");
        total += w;
    }
    assert!(
        rows.iter().any(|(_, n, _)| n == "row_lock_wait"),
        "8 connections updating 4 rows never waited for a row lock: {rows:?}"
    );

    // performance_schema: every object, times in picoseconds, consistent.
    let ps: Vec<(String, u64, u64, u64, u64, u64)> = c
        .query(
            "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT, MIN_TIMER_WAIT, AVG_TIMER_WAIT, \
             MAX_TIMER_WAIT FROM performance_schema.events_waits_summary_global_by_event_name",
        )
        .unwrap();
    for want in [
        "wait/synch/mutex/innodb/buf_pool_mutex",
        "wait/synch/mutex/innodb/flush_list_mutex",
        "wait/synch/mutex/innodb/log_sys_mutex",
        "wait/synch/cond/innodb/log_flush",
        "wait/synch/mutex/innodb/lock_sys_shard_mutex",
        "wait/synch/mutex/innodb/dblwr_mutex",
        "wait/synch/mutex/innodb/purge_sys_pq_mutex",
        "wait/synch/rwlock/innodb/dict_sys",
        "wait/synch/rwlock/innodb/btr_search_latch",
    ] {
        assert!(ps.iter().any(|r| r.0 == want), "no {want} in {ps:?}");
    }
    let mut ps_total = 0u64;
    for (ev, count, sum, min, avg, max) in &ps {
        assert!(ev.starts_with("wait/"), "{ev}");
        if *count == 0 {
            assert_eq!((*sum, *min, *avg, *max), (0, 0, 0, 0), "{ev}");
            continue;
        }
        assert!(sum >= max, "{ev}: sum {sum} < max {max}");
        assert!(min <= avg && avg <= max, "{ev}: {min} {avg} {max}");
        assert!(*max > 0, "{ev}: a wait of 0 ps");
        ps_total += count;
    }
    assert!(ps_total > 0);
    // Both views read the same counters; the later read can only have more.
    assert!(ps_total >= total, "{ps_total} < {total}");
    let row_locks = ps
        .iter()
        .find(|r| r.0 == "wait/lock/innodb/row_lock")
        .expect("row lock row");
    assert!(row_locks.1 > 0);

    // WHERE and ORDER BY work on it like on any table.
    let top: Vec<(String, u64)> = c
        .query(
            "SELECT EVENT_NAME, COUNT_STAR FROM \
             performance_schema.events_waits_summary_global_by_event_name \
             WHERE COUNT_STAR > 0 ORDER BY COUNT_STAR DESC LIMIT 3",
        )
        .unwrap();
    assert!(!top.is_empty() && top.windows(2).all(|w| w[0].1 >= w[1].1));

    // SEMAPHORES: the reservation count covers at least what SHOW ENGINE INNODB MUTEX showed.
    let (_, _, text): (String, String, String) =
        c.query_first("SHOW ENGINE INNODB STATUS").unwrap().unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("OS WAIT ARRAY INFO: reservation count "))
        .expect("reservation count line");
    let reserved: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(reserved >= total, "{reserved} < {total}\n{text}");
    assert!(text.contains("\nrow_lock_wait waits "), "{text}");
    assert!(text.contains("\npage latches waits "), "{text}");

    let err = c
        .query_drop("SELECT * FROM performance_schema.no_such_table")
        .unwrap_err();
    assert!(err.to_string().contains("1146"), "{err}");
    assert!(s.panics().is_empty());
}

/// performance_schema=OFF at start: the variable says so and the table is empty, as in MySQL;
/// it is ON by default.
#[test]
fn performance_schema_off_empties_its_tables() {
    let s = common::start_with(false, &["--performance-schema=OFF"]);
    let mut c = connect(&s);
    let on: i64 = c
        .query_first("SELECT @@performance_schema")
        .unwrap()
        .unwrap();
    assert_eq!(on, 0);
    let rows: Vec<(String, u64)> = c
        .query(
            "SELECT EVENT_NAME, COUNT_STAR FROM \
             performance_schema.events_waits_summary_global_by_event_name",
        )
        .unwrap();
    assert!(rows.is_empty(), "{rows:?}");
    let e = c
        .query_drop("SET GLOBAL performance_schema = ON")
        .unwrap_err();
    assert!(e.to_string().contains("1238"), "{e}");
    let s2 = start();
    let mut on = connect(&s2);
    let v: i64 = on
        .query_first("SELECT @@performance_schema")
        .unwrap()
        .unwrap();
    assert_eq!(v, 1, "ON by default, as in MySQL 8.0");
}
