//! SHOW STATUS and SHOW ENGINE INNODB STATUS from the outside: the counters MySQL names move
//! by exactly what a known workload does (Com_*, Questions, Innodb_rows_*, Bytes_*,
//! Aborted_*), session and global scopes differ as in mysqld, FLUSH STATUS clears the
//! session's; the InnoDB monitor text matches a golden file with its numbers masked, and on an
//! idle server its four LOG positions become equal; the knobs whose effect shows in the
//! counters act (innodb_flush_log_at_trx_commit=2, innodb_doublewrite=OFF).
//!
//! Regenerate the golden file with `UPDATE_GOLDEN=1 cargo test -p innoxide-server --test
//! status` after an intended format change, and review the diff.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{connect, fill, flushed_over, start, start_with};
use mysql::prelude::Queryable;

fn status(c: &mut mysql::Conn, scope: &str) -> HashMap<String, String> {
    c.query::<(String, String), _>(format!("SHOW {scope} STATUS"))
        .unwrap()
        .into_iter()
        .collect()
}

fn num(m: &HashMap<String, String>, k: &str) -> u64 {
    m.get(k)
        .unwrap_or_else(|| panic!("no status variable {k}"))
        .parse()
        .unwrap_or_else(|_| panic!("{k} = {} is not a number", m[k]))
}

/// The names issue #5 lists (and mysqld_exporter reads).
const NAMES: &[&str] = &[
    "Uptime",
    "Questions",
    "Queries",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Com_rollback",
    "Com_begin",
    "Com_stmt_execute",
    "Com_stmt_prepare",
    "Com_set_option",
    "Connections",
    "Threads_connected",
    "Threads_running",
    "Threads_created",
    "Threads_cached",
    "Aborted_clients",
    "Aborted_connects",
    "Bytes_received",
    "Bytes_sent",
    "Opened_tables",
    "Open_tables",
    "Slow_queries",
    "Max_used_connections",
    "Innodb_buffer_pool_pages_total",
    "Innodb_buffer_pool_pages_free",
    "Innodb_buffer_pool_pages_data",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_write_requests",
    "Innodb_buffer_pool_wait_free",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_log_waits",
    "Innodb_log_write_requests",
    "Innodb_log_writes",
    "Innodb_os_log_fsyncs",
    "Innodb_os_log_written",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_row_lock_current_waits",
    "Innodb_dblwr_pages_written",
    "Innodb_dblwr_writes",
    "Innodb_history_list_length",
    "Innodb_buffer_pool_dump_status",
    "Innodb_buffer_pool_load_status",
    "Innodb_checkpoint_age",
];

#[test]
fn counters_follow_a_known_workload() {
    let s = start();
    let mut c = connect(&s);
    let g = status(&mut c, "GLOBAL");
    for n in NAMES {
        assert!(g.contains_key(*n), "SHOW GLOBAL STATUS lacks {n}");
    }
    let names: Vec<&String> = c
        .query::<(String, String), _>("SHOW STATUS")
        .unwrap()
        .iter()
        .map(|r| &r.0)
        .cloned()
        .collect::<Vec<_>>()
        .leak()
        .iter()
        .collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "not sorted by name");

    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT, KEY (v))")
        .unwrap();
    let before = status(&mut c, "SESSION");
    let gbefore = status(&mut c, "GLOBAL");
    // 3 text statements in one multi-statement query, 10 prepared inserts, updates, deletes.
    c.query_drop("SELECT 1; SELECT 2; DO 3").unwrap();
    for i in 0..10 {
        c.exec_drop("INSERT INTO d.t VALUES (?, ?)", (i, i * 10))
            .unwrap();
    }
    c.query_drop("BEGIN").unwrap();
    c.query_drop("UPDATE d.t SET v = v + 1 WHERE id < 4")
        .unwrap();
    c.query_drop("DELETE FROM d.t WHERE id >= 8").unwrap();
    c.query_drop("COMMIT").unwrap();
    let rows: Vec<u32> = c.query("SELECT id FROM d.t").unwrap();
    assert_eq!(rows.len(), 8);
    let after = status(&mut c, "SESSION");
    let gafter = status(&mut c, "GLOBAL");
    let d = |k: &str| num(&after, k) - num(&before, k);
    let gd = |k: &str| num(&gafter, k) - num(&gbefore, k);
    // The SHOW GLOBAL STATUS between the two samples counts too.
    assert_eq!(d("Com_select"), 3, "two SELECTs and the final one");
    assert_eq!(d("Com_do"), 1);
    assert_eq!(d("Com_insert"), 10);
    assert_eq!(d("Com_stmt_execute"), 10);
    assert_eq!(
        d("Com_stmt_prepare"),
        1,
        "the mysql crate caches the statement"
    );
    assert_eq!((d("Com_update"), d("Com_delete")), (1, 1));
    assert_eq!((d("Com_begin"), d("Com_commit")), (1, 1));
    assert_eq!(d("Com_show_status"), 2);
    // 3 + 10 + 4 + 1 + 2 SHOW STATUS; COM_STMT_PREPARE is not a question (as in mysqld).
    assert_eq!(d("Questions"), 20);
    assert_eq!(d("Queries"), 20);
    assert!(d("Bytes_received") > 100 && d("Bytes_sent") > 100);
    // The engine's row counters are global.
    assert_eq!(gd("Innodb_rows_inserted"), 10);
    assert_eq!(gd("Innodb_rows_updated"), 4);
    assert_eq!(gd("Innodb_rows_deleted"), 2);
    assert!(
        gd("Innodb_rows_read") >= 8 + 2,
        "{}",
        gd("Innodb_rows_read")
    );
    assert!(gd("Innodb_log_write_requests") > 0);
    assert!(gd("Innodb_buffer_pool_write_requests") > 0);
    assert!(gd("Innodb_buffer_pool_read_requests") > 0);
    assert!(gd("Com_select") >= 3);

    // Another session: its session counters start at 0; global ones include the first's.
    let mut c2 = connect(&s);
    let other = status(&mut c2, "");
    assert!(num(&other, "Com_insert") == 0, "a new session starts at 0");
    let g2 = status(&mut c2, "GLOBAL");
    assert!(num(&g2, "Com_insert") >= 10);
    assert!(num(&g2, "Threads_connected") >= 2);
    assert!(num(&g2, "Max_used_connections") >= 2);
    assert!(num(&g2, "Threads_running") >= 1);

    // FLUSH STATUS clears the session's counters only.
    c.query_drop("FLUSH STATUS").unwrap();
    let flushed = status(&mut c, "SESSION");
    assert_eq!(num(&flushed, "Com_insert"), 0);
    assert_eq!(num(&flushed, "Com_show_status"), 1, "itself");
    let g3 = status(&mut c, "GLOBAL");
    assert!(num(&g3, "Com_insert") >= 10);

    // A client that drops its connection without COM_QUIT, and a wrong password.
    let aborted = num(&g3, "Aborted_clients");
    let refused = num(&g3, "Aborted_connects");
    {
        let raw = connect(&s);
        // Dropping a mysql::Conn sends COM_QUIT; leaking its socket would too late, so
        // kill the connection from the other session instead (mysqld counts it too).
        let id = raw.connection_id();
        c2.query_drop(format!("KILL {id}")).unwrap();
        drop(raw);
    }
    let bad = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some("root"))
        .pass(Some("wrong"));
    assert!(mysql::Conn::new(bad).is_err());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let g4 = status(&mut c, "GLOBAL");
        if num(&g4, "Aborted_clients") > aborted && num(&g4, "Aborted_connects") > refused {
            break;
        }
        assert!(Instant::now() < deadline, "Aborted_* did not move");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.panics(), Vec::<String>::new());
}

fn innodb_status(c: &mut mysql::Conn) -> String {
    let (t, n, text): (String, String, String) = c
        .query_first("SHOW ENGINE INNODB STATUS")
        .unwrap()
        .expect("one row");
    assert_eq!((t.as_str(), n.as_str()), ("InnoDB", ""));
    text
}

/// Numbers (and the header's date and time) replaced by `#`.
fn mask(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_num = false;
    for ch in text.chars() {
        if ch.is_ascii_digit() || (in_num && ch == '.') {
            if !in_num {
                out.push('#');
            }
            in_num = true;
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out
}

/// LOG's four positions.
fn log_positions(text: &str) -> [u64; 4] {
    let mut v = [u64::MAX; 4];
    for (i, head) in [
        "Log sequence number",
        "Log flushed up to",
        "Pages flushed up to",
        "Last checkpoint at",
    ]
    .iter()
    .enumerate()
    {
        let line = text
            .lines()
            .find(|l| l.starts_with(head))
            .unwrap_or_else(|| panic!("no '{head}' line in\n{text}"));
        v[i] = line[head.len()..].trim().parse().expect("a number");
    }
    v
}

#[test]
fn innodb_status_golden_and_idle_lsn() {
    let s = start_with(false, &["--innodb-buffer-pool-instances=2"]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100))")
        .unwrap();
    for i in 0..200 {
        c.exec_drop("INSERT INTO d.t VALUES (?, REPEAT('x', 100))", (i,))
            .unwrap();
    }
    c.query_drop("UPDATE d.t SET v = 'y' WHERE id < 50")
        .unwrap();
    let text = innodb_status(&mut c);
    // An I/O thread's state depends on the moment, like the numbers.
    let masked = mask(&text).replace("doing file i/o", "waiting for completed aio requests");
    let golden =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/status/innodb_status.golden");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &masked).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("the golden file");
    assert_eq!(masked, want, "SHOW ENGINE INNODB STATUS changed:\n{text}");
    assert!(text.contains("Number of rows inserted 200, updated 50, deleted 0"));

    // Idle: the page cleaners flush what is dirty and the master thread moves the
    // checkpoint; the four LOG positions meet.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let p = log_positions(&innodb_status(&mut c));
        if p.iter().all(|&x| x == p[0]) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "LOG positions still differ after 60 s of idleness: {p:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn trx_commit_2_fsyncs_once_a_second() {
    for (setting, per_commit) in [("1", true), ("2", false)] {
        let s = start_with(
            false,
            &[&format!("--innodb-flush-log-at-trx-commit={setting}")],
        );
        let mut c = connect(&s);
        c.query_drop("CREATE TABLE mysql.k (id INT PRIMARY KEY)")
            .or_else(|_| {
                c.query_drop("CREATE DATABASE kd")?;
                c.query_drop("CREATE TABLE kd.k (id INT PRIMARY KEY)")
            })
            .unwrap();
        let table: String = c
            .query_first("SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables WHERE table_name = 'k'")
            .unwrap()
            .unwrap();
        let before = num(&status(&mut c, "GLOBAL"), "Innodb_os_log_fsyncs");
        let start = Instant::now();
        let n = 300;
        for i in 0..n {
            c.exec_drop(format!("INSERT INTO {table} VALUES (?)"), (i,))
                .unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let fsyncs = num(&status(&mut c, "GLOBAL"), "Innodb_os_log_fsyncs") - before;
        if per_commit {
            assert!(fsyncs >= n, "trx_commit=1: {fsyncs} fsyncs for {n} commits");
        } else {
            // About one a second (the master thread), plus a few for page flushing.
            let bound = (secs.ceil() as u64 + 1) * 3;
            assert!(
                fsyncs <= bound,
                "trx_commit=2: {fsyncs} fsyncs in {secs:.2} s for {n} commits"
            );
        }
    }
}

#[test]
fn doublewrite_off_writes_nothing_there() {
    for (setting, used) in [("ON", true), ("OFF", false)] {
        let s = start_with(false, &[&format!("--innodb-doublewrite={setting}")]);
        let mut c = connect(&s);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)")
            .unwrap();
        for i in 0..50 {
            c.exec_drop("INSERT INTO d.t VALUES (?, REPEAT('z', 2000))", (i,))
                .unwrap();
        }
        // Wait until pages have been written back.
        let deadline = Instant::now() + Duration::from_secs(60);
        let g = loop {
            let g = status(&mut c, "GLOBAL");
            if num(&g, "Innodb_buffer_pool_pages_flushed") > 0 {
                break g;
            }
            assert!(Instant::now() < deadline, "no page was flushed");
            std::thread::sleep(Duration::from_millis(200));
        };
        let written = num(&g, "Innodb_dblwr_pages_written");
        assert_eq!(written > 0, used, "doublewrite={setting}: {written} pages");
        if !used {
            assert_eq!(num(&g, "Innodb_dblwr_writes"), 0);
        }
    }
}

#[test]
fn slow_query_log_and_profiling() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    c.query_drop("INSERT INTO d.t VALUES (1, 1), (2, 2), (3, 3), (4, 4)")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("slow.log");
    let slow0 = num(&status(&mut c, "GLOBAL"), "Slow_queries");
    c.query_drop(format!(
        "SET GLOBAL slow_query_log_file = '{}'",
        log.display()
    ))
    .unwrap();
    c.query_drop("SET GLOBAL slow_query_log = ON").unwrap();
    c.query_drop("SET SESSION long_query_time = 0").unwrap();
    c.query_drop("USE d").unwrap();
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE v >= 2")
        .unwrap()
        .unwrap();
    assert_eq!(n, 3);
    c.query_drop("ALTER TABLE t ADD COLUMN w INT").unwrap();
    c.query_drop("SET GLOBAL log_slow_admin_statements = ON")
        .unwrap();
    c.query_drop("ALTER TABLE t DROP COLUMN w").unwrap();
    c.query_drop("SET GLOBAL slow_query_log = OFF").unwrap();
    c.query_drop("SELECT 'not logged'").unwrap();
    let text = std::fs::read_to_string(&log).expect("the slow log");
    assert!(
        text.contains("Time                 Id Command    Argument"),
        "{text}"
    );
    let entry = text
        .split("# Time: ")
        .find(|e| e.contains("SELECT COUNT(*) FROM t WHERE v >= 2;"))
        .unwrap_or_else(|| panic!("no entry for the SELECT in\n{text}"));
    assert!(
        entry.contains("# User@Host: root[root] @ localhost []"),
        "{entry}"
    );
    assert!(entry.contains("Rows_sent: 1  Rows_examined: 4"), "{entry}");
    assert!(entry.contains("\nSET timestamp="), "{entry}");
    // `use db;` is written when the database changes (here at the USE statement's entry).
    assert!(text.contains("use d;\nSET timestamp="), "{text}");
    assert!(
        !text.contains("ADD COLUMN w"),
        "admin statement logged while OFF"
    );
    assert!(text.contains("ALTER TABLE t DROP COLUMN w;"), "{text}");
    assert!(!text.contains("not logged"));
    assert!(num(&status(&mut c, "GLOBAL"), "Slow_queries") >= slow0 + 4);

    // Profiling.
    c.query_drop("SET profiling = 1").unwrap();
    c.query_drop("SELECT v FROM t WHERE id = 2").unwrap();
    c.query_drop("UPDATE t SET v = v + 1 WHERE id = 3").unwrap();
    let profiles: Vec<(u32, String, String)> = c.query("SHOW PROFILES").unwrap();
    let queries: Vec<&str> = profiles.iter().map(|p| p.2.as_str()).collect();
    assert_eq!(
        queries,
        vec![
            "SELECT v FROM t WHERE id = 2",
            "UPDATE t SET v = v + 1 WHERE id = 3"
        ]
    );
    let (id, total, _) = &profiles[1];
    let stages: Vec<(String, String)> = c.query(format!("SHOW PROFILE FOR QUERY {id}")).unwrap();
    let names: Vec<&str> = stages.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "starting",
            "Opening tables",
            "init",
            "optimizing",
            "executing",
            "query end",
            "waiting for handler commit",
            "Sending data",
            "cleaning up"
        ]
    );
    let sum: f64 = stages.iter().map(|s| s.1.parse::<f64>().unwrap()).sum();
    let total: f64 = total.parse().unwrap();
    assert!(
        (sum - total).abs() < 0.00001 * stages.len() as f64,
        "{sum} vs {total}"
    );
    let last: Vec<(String, String)> = c.query("SHOW PROFILE").unwrap();
    assert_eq!(last, stages, "SHOW PROFILE is the last statement's");
    let none: Vec<(String, String)> = c.query("SHOW PROFILE FOR QUERY 99").unwrap();
    assert!(none.is_empty());

    // The error log's lines look like MariaDB's: date time id [Level] message.
    let bad = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(s.port)
        .user(Some("nobody"))
        .pass(Some("x"));
    assert!(mysql::Conn::new(bad).is_err());
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        if let Some(l) = s
            .log_lines()
            .into_iter()
            .find(|l| l.contains("Access denied for user 'nobody'"))
        {
            break l;
        }
        assert!(Instant::now() < deadline, "no access-denied line");
        std::thread::sleep(Duration::from_millis(50));
    };
    let b = line.as_bytes();
    let shape = line.len() > 22
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b' ';
    assert!(shape, "not 'YYYY-MM-DD hh:mm:ss': {line}");
    let rest = &line[20..];
    let (id, rest) = rest.split_once(' ').expect("a connection id");
    assert!(id.parse::<u32>().unwrap() > 0, "{line}");
    assert!(rest.starts_with("[Warning] Access denied"), "{line}");
}

#[test]
fn buffer_pool_dump_at_shutdown_and_load_at_startup() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200))")
        .unwrap();
    for i in 0..20 {
        let rows: Vec<String> = (0..100)
            .map(|j| format!("({}, REPEAT('x', 200))", i * 100 + j))
            .collect();
        c.query_drop(format!("INSERT INTO d.t VALUES {}", rows.join(",")))
            .unwrap();
    }
    let g = status(&mut c, "GLOBAL");
    assert_eq!(
        g["Innodb_buffer_pool_load_status"],
        "Loading of buffer pool not started"
    );
    drop(c);
    // A clean shutdown writes the dump; the restart reads it back in the background.
    let dir = s.stop_keep_dir(false);
    let dump = std::fs::read_to_string(dir.path().join("ib_buffer_pool")).expect("the dump");
    let listed = dump.lines().count();
    assert!(listed > 5, "{listed} pages dumped");
    assert!(dump.lines().all(|l| l
        .split_once(',')
        .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())));
    let s = common::start_in(dir, false, &[]);
    let mut c = connect(&s);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let g = status(&mut c, "GLOBAL");
        let load = &g["Innodb_buffer_pool_load_status"];
        if load.starts_with("Buffer pool(s) load completed at ") {
            assert!(num(&g, "Innodb_buffer_pool_pages_data") as usize >= listed);
            break;
        }
        assert!(Instant::now() < deadline, "load status: {load}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let n: u64 = c.query_first("SELECT COUNT(*) FROM d.t").unwrap().unwrap();
    assert_eq!(n, 2000);
    // Dynamic, as in MySQL: OFF when the server stops, no dump.
    c.query_drop("SET GLOBAL innodb_buffer_pool_dump_at_shutdown = OFF")
        .unwrap();
    drop(c);
    std::fs::remove_file(s.datadir().join("ib_buffer_pool")).unwrap();
    let dir = s.stop_keep_dir(false);
    assert!(!dir.path().join("ib_buffer_pool").exists());
}

/// Waits until the global status `var` starts with `prefix` (30 s at most).
fn wait_status(c: &mut mysql::Conn, var: &str, prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let g = status(c, "GLOBAL");
        if g[var].starts_with(prefix) {
            return;
        }
        assert!(Instant::now() < deadline, "{var}: {}", g[var]);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// innodb_buffer_pool_dump_now / load_now act at once, in the background, and read OFF again;
/// innodb_buffer_pool_load_abort is accepted while nothing loads.
#[test]
fn buffer_pool_dump_now_and_load_now() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200))")
        .unwrap();
    let rows: Vec<String> = (0..500)
        .map(|j| format!("({j}, REPEAT('x', 200))"))
        .collect();
    c.query_drop(format!("INSERT INTO d.t VALUES {}", rows.join(",")))
        .unwrap();
    let file = s.datadir().join("ib_buffer_pool");
    assert!(!file.exists());
    c.query_drop("SET GLOBAL innodb_buffer_pool_dump_now = ON")
        .unwrap();
    wait_status(
        &mut c,
        "Innodb_buffer_pool_dump_status",
        "Buffer pool(s) dump completed at ",
    );
    let dump = std::fs::read_to_string(&file).expect("the dump");
    assert!(dump.lines().count() > 5, "{dump}");
    let now: i64 = c
        .query_first("SELECT @@global.innodb_buffer_pool_dump_now")
        .unwrap()
        .unwrap();
    assert_eq!(now, 0, "a trigger reads OFF again");
    // A session-scope SET of a global variable is refused (1229), as for any global one.
    let e = c
        .query_drop("SET innodb_buffer_pool_load_now = ON")
        .unwrap_err();
    assert!(
        matches!(e, mysql::Error::MySqlError(ref e) if e.code == 1229),
        "{e}"
    );
    c.query_drop("SET GLOBAL innodb_buffer_pool_load_now = ON")
        .unwrap();
    wait_status(
        &mut c,
        "Innodb_buffer_pool_load_status",
        "Buffer pool(s) load completed at ",
    );
    c.query_drop("SET GLOBAL innodb_buffer_pool_load_abort = ON")
        .unwrap();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM d.t").unwrap().unwrap();
    assert_eq!(n, 500);
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// "N queries inside InnoDB, M queries in queue" from SHOW ENGINE INNODB STATUS.
fn admission(c: &mut mysql::Conn) -> (u64, u64) {
    let text = innodb_status(c);
    let line = text
        .lines()
        .find(|l| l.contains("queries inside InnoDB"))
        .expect("the admission line");
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    (n[0], n[1])
}

/// SET GLOBAL innodb_thread_concurrency = 1 through SQL: a session waiting for a row lock
/// gives its slot back (another session still reads), at most one session is ever inside,
/// others queue, and every write lands.
#[test]
fn thread_concurrency_through_sql() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let rows: Vec<String> = (0..100).map(|i| format!("({i}, 0)")).collect();
    c.query_drop(format!("INSERT INTO d.t VALUES {}", rows.join(",")))
        .unwrap();
    c.query_drop("SET GLOBAL innodb_thread_concurrency = 1, innodb_concurrency_tickets = 1")
        .unwrap();

    let mut a = connect(&s);
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE d.t SET v = 1 WHERE id = 0").unwrap();
    let port = s.port;
    let waiter = std::thread::spawn(move || {
        let mut b = common::connect_port(port);
        b.query_drop("UPDATE d.t SET v = 2 WHERE id = 0").unwrap();
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if num(&status(&mut c, "GLOBAL"), "Innodb_row_lock_current_waits") == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the UPDATE never waited");
        std::thread::sleep(Duration::from_millis(10));
    }
    let states: Vec<String> = c
        .query("SELECT TRX_STATE FROM information_schema.INNODB_TRX ORDER BY TRX_STATE")
        .unwrap();
    assert_eq!(states, vec!["LOCK WAIT", "RUNNING"]);
    // The waiter is not inside: with one slot, this read still runs.
    let started = Instant::now();
    let v: i64 = c
        .query_first("SELECT v FROM d.t WHERE id = 5")
        .unwrap()
        .unwrap();
    assert_eq!(v, 0);
    assert!(started.elapsed() < Duration::from_secs(3));
    a.query_drop("COMMIT").unwrap();
    waiter.join().unwrap();

    // Eight sessions writing: never more than one inside; some wait their turn.
    let workers: Vec<_> = (0..8i64)
        .map(|th| {
            std::thread::spawn(move || {
                let mut w = common::connect_port(port);
                for i in 0..150i64 {
                    let id = (th * 13 + i) % 100;
                    w.query_drop(format!("UPDATE d.t SET v = v + 1 WHERE id = {id}"))
                        .unwrap();
                }
            })
        })
        .collect();
    let (mut max_inside, mut max_queued) = (0, 0);
    while !workers.iter().all(|w| w.is_finished()) {
        let (inside, queued) = admission(&mut c);
        max_inside = max_inside.max(inside);
        max_queued = max_queued.max(queued);
    }
    for w in workers {
        w.join().unwrap();
    }
    assert!(max_inside <= 1, "{max_inside} sessions inside at once");
    assert!(max_queued > 0, "no session ever queued");
    let total: i64 = c.query_first("SELECT SUM(v) FROM d.t").unwrap().unwrap();
    assert_eq!(total, 2 + 8 * 150);
    c.query_drop("SET GLOBAL innodb_thread_concurrency = 0")
        .unwrap();
    assert_eq!(admission(&mut c), (0, 0));
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// SHOW DATABASES lists information_schema and performance_schema; each table SHOW TABLES
/// names in them can be read; USE works for both.
#[test]
fn system_schemas_are_listed_and_readable() {
    let s = start();
    let mut c = connect(&s);
    let dbs: Vec<String> = c.query("SHOW DATABASES").unwrap();
    assert_eq!(
        dbs,
        vec!["information_schema", "mysql", "performance_schema"]
    );
    let schemata: Vec<String> = c
        .query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
        .unwrap();
    assert_eq!(schemata, dbs);
    for db in ["information_schema", "performance_schema"] {
        c.query_drop(format!("USE {db}")).unwrap();
        let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
        assert!(!tables.is_empty());
        for t in tables {
            let n: Option<u64> = c
                .query_first(format!("SELECT COUNT(*) FROM {db}.{t}"))
                .unwrap_or_else(|e| panic!("{db}.{t}: {e}"));
            assert!(n.is_some());
        }
    }
    let full: Vec<(String, String)> = c.query("SHOW FULL TABLES FROM performance_schema").unwrap();
    let base = |t: &str| (t.to_string(), "BASE TABLE".to_string());
    assert_eq!(
        full,
        vec![
            base("data_lock_waits"),
            base("data_locks"),
            base("events_waits_summary_global_by_event_name")
        ]
    );
}

/// performance_schema.data_locks lists each lock request now (table and record locks, granted
/// and waiting, in InnoDB's notation, the key's values in LOCK_DATA, GEN_CLUST_INDEX and a hex
/// row id for a table without a primary key), data_lock_waits who waits for whom by lock ids
/// data_locks shows, information_schema.INNODB_TRX and SHOW ENGINE INNODB STATUS the
/// connection and statement of each transaction and the lock it waits for; when the
/// transactions end, all are empty.
#[test]
fn data_locks_show_held_and_waiting_requests() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop(
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT, KEY kv (v)); \
         INSERT INTO d.t VALUES (1, 10), (5, 50), (9, 90); CREATE TABLE d.h (x INT); \
         INSERT INTO d.h VALUES (1), (2)",
    )
    .unwrap();
    let mut a = connect(&s);
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SELECT * FROM d.t WHERE id = 5 FOR UPDATE")
        .unwrap();
    a.query_drop("SELECT * FROM d.t FORCE INDEX (kv) WHERE v = 10 FOR SHARE")
        .unwrap();
    a.query_drop("UPDATE d.h SET x = 3 WHERE x = 1").unwrap();
    let a_trx: u64 = a
        .query_first("SELECT TRX_ID FROM information_schema.INNODB_TRX")
        .unwrap()
        .unwrap();
    let mut b = connect(&s);
    let (a_conn, b_conn) = (u64::from(a.connection_id()), u64::from(b.connection_id()));
    let waiter = std::thread::spawn(move || b.query_drop("UPDATE d.t SET v = 0 WHERE id = 5"));
    type Row = (
        u64,
        String,
        String,
        Option<String>,
        String,
        String,
        String,
        Option<String>,
    );
    let rows = |c: &mut mysql::Conn| -> Vec<Row> {
        c.query(
            "SELECT ENGINE_TRANSACTION_ID, ENGINE_LOCK_ID, OBJECT_NAME, INDEX_NAME, LOCK_TYPE, \
             LOCK_MODE, LOCK_STATUS, LOCK_DATA FROM performance_schema.data_locks",
        )
        .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let locks = loop {
        let r = rows(&mut c);
        if r.iter().any(|x| x.6 == "WAITING") || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // (table, index, mode, data) of locks A holds.
    let held: [(&str, Option<&str>, &str, Option<&str>); 5] = [
        ("t", None, "IX", None),
        ("t", Some("PRIMARY"), "X,REC_NOT_GAP", Some("5")),
        ("t", Some("kv"), "S", Some("10, 1")),
        ("h", Some("GEN_CLUST_INDEX"), "X", Some("0x000000000001")),
        (
            "h",
            Some("GEN_CLUST_INDEX"),
            "X,GAP",
            Some("supremum pseudo-record"),
        ),
    ];
    for (table, index, mode, data) in held {
        assert!(
            locks.iter().any(|x| x.0 == a_trx
                && x.2 == table
                && x.3.as_deref() == index
                && x.5 == mode
                && x.6 == "GRANTED"
                && x.7.as_deref() == data),
            "{table} {index:?} {mode} {data:?} not in {locks:?}"
        );
    }
    let waiting: Vec<&Row> = locks.iter().filter(|x| x.6 == "WAITING").collect();
    assert_eq!(waiting.len(), 1, "{locks:?}");
    let w = waiting[0];
    assert_ne!(w.0, a_trx);
    assert_eq!(
        (w.3.as_deref(), w.5.as_str(), w.7.as_deref()),
        (Some("PRIMARY"), "X,REC_NOT_GAP", Some("5"))
    );
    let waits: Vec<(String, u64, String, u64)> = c
        .query(
            "SELECT REQUESTING_ENGINE_LOCK_ID, REQUESTING_ENGINE_TRANSACTION_ID, \
             BLOCKING_ENGINE_LOCK_ID, BLOCKING_ENGINE_TRANSACTION_ID \
             FROM performance_schema.data_lock_waits",
        )
        .unwrap();
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (req, req_trx, blk, blk_trx) = &waits[0];
    assert_eq!((*req_trx, *blk_trx), (w.0, a_trx));
    assert_eq!(req, &w.1);
    assert!(
        locks
            .iter()
            .any(|x| &x.1 == blk && x.0 == a_trx && x.6 == "GRANTED"),
        "{blk} not in data_locks"
    );
    // INNODB_TRX: who runs each transaction, what the waiter runs and waits for.
    type Trx = (
        u64,
        String,
        Option<String>,
        u64,
        Option<String>,
        u64,
        u64,
        String,
    );
    let trxs: Vec<Trx> = c
        .query(
            "SELECT TRX_ID, TRX_STATE, TRX_REQUESTED_LOCK_ID, TRX_MYSQL_THREAD_ID, TRX_QUERY, \
             TRX_TABLES_LOCKED, TRX_ROWS_MODIFIED, TRX_ISOLATION_LEVEL \
             FROM information_schema.INNODB_TRX ORDER BY TRX_ID",
        )
        .unwrap();
    assert_eq!(
        trxs,
        vec![
            (
                a_trx,
                "RUNNING".into(),
                None,
                a_conn,
                None,
                2,
                1,
                "REPEATABLE READ".into()
            ),
            (
                w.0,
                "LOCK WAIT".into(),
                Some(w.1.clone()),
                b_conn,
                Some("UPDATE d.t SET v = 0 WHERE id = 5".into()),
                1,
                0,
                "REPEATABLE READ".into()
            ),
        ]
    );
    // SHOW ENGINE INNODB STATUS lists both as InnoDB does, the waiter with its lock.
    let text = innodb_status(&mut c);
    for part in [
        format!("---TRANSACTION {a_trx}, ACTIVE "),
        format!("MySQL thread id {a_conn}, OS thread handle 0, query id 0 "),
        format!("---TRANSACTION {}, ACTIVE ", w.0),
        "LOCK WAIT 2 lock struct(s)".to_string(),
        format!("MySQL thread id {b_conn}, "),
        "UPDATE d.t SET v = 0 WHERE id = 5".to_string(),
        "FOR THIS LOCK TO BE GRANTED:".to_string(),
        format!(
            "RECORD LOCKS index PRIMARY of table `d`.`t` trx id {} lock_mode X locks rec but \
             not gap waiting",
            w.0
        ),
    ] {
        assert!(text.contains(&part), "{part:?} not in {text}");
    }
    a.query_drop("COMMIT").unwrap();
    waiter.join().unwrap().unwrap();
    assert_eq!(rows(&mut c), Vec::<Row>::new());
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM performance_schema.data_lock_waits")
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM information_schema.INNODB_TRX")
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(s.panics(), Vec::<String>::new());
}

fn pool_var(c: &mut mysql::Conn) -> u64 {
    c.query_first("SELECT @@global.innodb_buffer_pool_size")
        .unwrap()
        .unwrap()
}

/// SET GLOBAL innodb_buffer_pool_size resizes the pool online in chunks: sizes round up to
/// chunk size x instances (at start too), a shrink below the data flushes and evicts what is
/// in the withdrawn chunks without losing a row, a grow adds frames, and pages total, the
/// monitor and Innodb_buffer_pool_resize_status follow.
#[test]
fn buffer_pool_resizes_online() {
    let s = start_with(
        false,
        &[
            "--innodb-buffer-pool-size=7M",
            "--innodb-buffer-pool-chunk-size=2M",
        ],
    );
    let mut c = connect(&s);
    let chunk: u64 = c
        .query_first("SELECT @@innodb_buffer_pool_chunk_size")
        .unwrap()
        .unwrap();
    assert_eq!((pool_var(&mut c), chunk), (8 << 20, 2 << 20));
    assert_eq!(
        status(&mut c, "GLOBAL")["Innodb_buffer_pool_resize_status"],
        ""
    );
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(2000))")
        .unwrap();
    // About 6 MiB of rows, most pages dirty: more than the pool will keep.
    for b in 0..30 {
        let rows: Vec<String> = (0..100)
            .map(|j| {
                let letter = char::from(b'A' + (j % 26) as u8);
                format!("({}, REPEAT('{letter}', 2000))", b * 100 + j)
            })
            .collect();
        c.query_drop(format!("INSERT INTO d.t VALUES {}", rows.join(",")))
            .unwrap();
    }
    let sum = |c: &mut mysql::Conn| -> Vec<(u32, String, u32)> {
        c.query("SELECT id, LEFT(v, 1), LENGTH(v) FROM d.t ORDER BY id")
            .unwrap()
    };
    let before = sum(&mut c);
    assert_eq!(before.len(), 3000);
    let pages = |c: &mut mysql::Conn| num(&status(c, "GLOBAL"), "Innodb_buffer_pool_pages_total");
    assert_eq!(pages(&mut c), 512);
    for (set, want) in [
        (5u64 << 20, 6u64 << 20),
        (16 << 20, 16 << 20),
        (1 << 20, 6 << 20),
    ] {
        c.query_drop(format!("SET GLOBAL innodb_buffer_pool_size = {set}"))
            .unwrap();
        if set < 5 << 20 {
            // Below the minimum: clamped with warning 1292, as mysqld does.
            let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
            assert_eq!(w.len(), 1, "{w:?}");
            assert_eq!(w[0].1, 1292, "{w:?}");
        }
        assert_eq!(pool_var(&mut c), want, "SET {set}");
        wait_status(
            &mut c,
            "Innodb_buffer_pool_resize_status",
            "Completed resizing buffer pool at ",
        );
        assert_eq!(pages(&mut c), want / 16384, "pages total after SET {set}");
        let m = innodb_status(&mut c);
        assert!(
            m.contains(&format!("Buffer pool size   {}", want / 16384)),
            "{m}"
        );
        assert_eq!(sum(&mut c), before, "rows after SET {set}");
    }
    // The chunk size is fixed at start.
    let e = c
        .query_drop("SET GLOBAL innodb_buffer_pool_chunk_size = 4194304")
        .unwrap_err();
    assert!(
        matches!(e, mysql::Error::MySqlError(ref m) if m.code == 1238),
        "{e:?}"
    );
}

/// innodb_io_capacity sets the rate an idle server writes its dirty pages back at (InnoDB
/// flushes io_capacity pages a second when no redo is generated), and SET GLOBAL changes it
/// at once.
#[test]
fn io_capacity_sets_the_idle_flushing_rate() {
    let s = start_with(false, common::IDLE_FLUSHING);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE io").unwrap();
    fill(&mut c, "io.t", 150_000);
    // Let the cleaners see the server idle, then count: about 100 pages a second.
    std::thread::sleep(Duration::from_secs(2));
    let (slow, dirty) = flushed_over(&mut c, 4);
    assert!(
        dirty > 1000,
        "{dirty} dirty pages left: too few to measure the faster rate"
    );
    assert!(
        (150..=800).contains(&slow),
        "io_capacity=100: {slow} pages flushed in 4 s"
    );
    c.query_drop("SET GLOBAL innodb_io_capacity = 2000")
        .unwrap();
    let (fast, left) = flushed_over(&mut c, 2);
    // 2,000 a second, or nearly everything that was left.
    assert!(
        fast >= 1000.min(dirty * 9 / 10),
        "io_capacity=2000: {fast} pages flushed in 2 s, {left} dirty left (100: {slow} in 4 s)"
    );
}

/// Redo fsyncs while one client commits for `secs` seconds, a few hundred times a second.
fn fsyncs_while_committing(c: &mut mysql::Conn, table: &str, secs: f64) -> u64 {
    let before = num(&status(c, "GLOBAL"), "Innodb_os_log_fsyncs");
    let start = Instant::now();
    let mut i = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        c.exec_drop(format!("INSERT INTO {table} VALUES (NULL)"), ())
            .unwrap();
        i += 1;
        // A few hundred commits a second: little redo, so no page flushing (whose writes
        // make the redo durable first) or checkpoint adds fsyncs of its own.
        std::thread::sleep(Duration::from_millis(3));
    }
    assert!(i > 100, "{i} commits");
    num(&status(c, "GLOBAL"), "Innodb_os_log_fsyncs") - before
}

/// With innodb_flush_log_at_trx_commit=2 the redo is made durable once every
/// innodb_flush_log_at_timeout seconds (the master thread), whatever the commit rate, and SET
/// GLOBAL changes the interval at once.
#[test]
fn flush_log_at_timeout_spaces_the_fsyncs_of_trx_commit_2() {
    // A redo log the run does not bring near the adaptive flushing mark (with the tests'
    // 4M files page flushing starts, and each batch makes the redo durable first).
    let s = start_with(
        false,
        &[
            "--innodb-flush-log-at-trx-commit=2",
            "--innodb-log-file-size=64M",
        ],
    );
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE ft").unwrap();
    c.query_drop("CREATE TABLE ft.k (id BIGINT AUTO_INCREMENT PRIMARY KEY)")
        .unwrap();
    let every_second = fsyncs_while_committing(&mut c, "ft.k", 6.0);
    c.query_drop("SET GLOBAL innodb_flush_log_at_timeout = 3")
        .unwrap();
    let every_third = fsyncs_while_committing(&mut c, "ft.k", 6.0);
    // About 6 and about 2 (a tick may fall either side of a window's ends).
    assert!(
        (4..=9).contains(&every_second),
        "timeout 1: {every_second} fsyncs in 6 s"
    );
    assert!(
        (1..=3).contains(&every_third),
        "timeout 3: {every_third} fsyncs in 6 s"
    );
}

/// INNODB_METRICS counter `name`.
fn metric(c: &mut mysql::Conn, name: &str) -> u64 {
    c.query_first(format!(
        "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = '{name}'"
    ))
    .unwrap()
    .unwrap_or_else(|| panic!("no metric {name}"))
}

/// The monitor's "x hash searches/s, y non-hash searches/s" and its part lines.
fn hash_rates(c: &mut mysql::Conn) -> (f64, f64, Vec<String>) {
    let text = innodb_status(c);
    let line = text
        .lines()
        .find(|l| l.ends_with(" non-hash searches/s"))
        .unwrap_or_else(|| panic!("no hash searches line in\n{text}"));
    let n: Vec<f64> = line
        .split(|ch: char| ch == ',' || ch.is_whitespace())
        .filter_map(|w| w.parse().ok())
        .collect();
    let parts = text
        .lines()
        .filter(|l| l.starts_with("Hash table size "))
        .map(str::to_string)
        .collect();
    (n[0], n[1], parts)
}

/// innodb_adaptive_hash_index (issue #5, SPEC 1): ON by default, repeated point selects are
/// answered through the hash (INNODB_METRICS adaptive_hash_searches and the monitor's hash
/// searches/s grow); SET GLOBAL OFF stops that at the next select, frees the entries (every
/// part's node heap empty) and the selects count as non-hash searches; the results are the
/// same either way; ON builds it again.
#[test]
fn adaptive_hash_index_serves_point_selects_and_set_global_off_stops_it() {
    let s = start_with(false, &["--innodb-adaptive-hash-index-parts=4"]);
    let mut c = connect(&s);
    let vars: Vec<(String, String)> = c
        .query("SHOW GLOBAL VARIABLES LIKE 'innodb_adaptive_hash_index%'")
        .unwrap();
    assert_eq!(
        vars,
        [
            ("innodb_adaptive_hash_index".to_string(), "ON".to_string()),
            ("innodb_adaptive_hash_index_parts".into(), "4".into())
        ]
    );
    c.query_drop("CREATE DATABASE ah").unwrap();
    c.query_drop("SET SESSION cte_max_recursion_depth = 10000")
        .unwrap();
    c.query_drop("CREATE TABLE ah.t (id INT PRIMARY KEY, c VARCHAR(100))")
        .unwrap();
    c.query_drop(
        "INSERT INTO ah.t WITH RECURSIVE seq (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM seq \
         WHERE k < 3000) SELECT k, CONCAT('row ', k, REPEAT('.', k % 50)) FROM seq",
    )
    .unwrap();
    let select = |c: &mut mysql::Conn| -> Vec<String> {
        (1..=3000)
            .step_by(3)
            .map(|id| {
                c.exec_first::<String, _, _>("SELECT c FROM ah.t WHERE id = ?", (id,))
                    .unwrap()
                    .expect("row")
            })
            .collect()
    };
    // The first pass votes and hashes leaves; the second is served by the hash.
    let first = select(&mut c);
    hash_rates(&mut c);
    let (h0, b0) = (
        metric(&mut c, "adaptive_hash_searches"),
        metric(&mut c, "adaptive_hash_searches_btree"),
    );
    assert_eq!(select(&mut c), first);
    let (h1, b1) = (
        metric(&mut c, "adaptive_hash_searches"),
        metric(&mut c, "adaptive_hash_searches_btree"),
    );
    let (hash_rate, _, parts) = hash_rates(&mut c);
    eprintln!(
        "ON: {} hash, {} btree searches; {parts:?}",
        h1 - h0,
        b1 - b0
    );
    assert!(h1 - h0 >= 900, "{} hash searches for 1000 selects", h1 - h0);
    assert!(hash_rate > 0.0);
    assert_eq!(parts.len(), 4);
    assert!(parts
        .iter()
        .any(|p| !p.ends_with("node heap has 0 buffer(s)")));
    assert!(metric(&mut c, "adaptive_hash_pages_added") > 0);
    assert!(metric(&mut c, "adaptive_hash_rows_added") > 0);

    c.query_drop("SET GLOBAL innodb_adaptive_hash_index = OFF")
        .unwrap();
    let on: u64 = c
        .query_first("SELECT @@global.innodb_adaptive_hash_index")
        .unwrap()
        .unwrap();
    assert_eq!(on, 0);
    let (_, _, parts) = hash_rates(&mut c);
    assert!(
        parts
            .iter()
            .all(|p| p.ends_with("node heap has 0 buffer(s)")),
        "{parts:?}"
    );
    let (h2, b2) = (
        metric(&mut c, "adaptive_hash_searches"),
        metric(&mut c, "adaptive_hash_searches_btree"),
    );
    assert_eq!(select(&mut c), first);
    let (h3, b3) = (
        metric(&mut c, "adaptive_hash_searches"),
        metric(&mut c, "adaptive_hash_searches_btree"),
    );
    let (hash_rate, non_hash_rate, _) = hash_rates(&mut c);
    eprintln!("OFF: {} hash, {} btree searches", h3 - h2, b3 - b2);
    assert_eq!(h3, h2, "hash searches while OFF");
    assert!(b3 - b2 >= 1000);
    assert_eq!(hash_rate, 0.0);
    assert!(non_hash_rate > 0.0);
    assert_eq!(
        metric(&mut c, "adaptive_hash_rows_added"),
        metric(&mut c, "adaptive_hash_rows_removed"),
        "OFF removes every entry"
    );

    c.query_drop("SET GLOBAL innodb_adaptive_hash_index = ON")
        .unwrap();
    select(&mut c);
    assert_eq!(select(&mut c), first);
    let h4 = metric(&mut c, "adaptive_hash_searches");
    assert!(h4 - h3 >= 900, "{} hash searches after ON", h4 - h3);
    // Static: a SET is refused.
    let e = c
        .query_drop("SET GLOBAL innodb_adaptive_hash_index_parts = 2")
        .unwrap_err();
    assert!(e.to_string().contains("read only"), "{e}");
    assert_eq!(s.panics(), Vec::<String>::new());
}
