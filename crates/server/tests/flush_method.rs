//! innodb_flush_method through a real server (issue #5: every knob it shows must really act):
//! SHOW VARIABLES shows the method in force and SET refuses it (static); O_DIRECT keeps a
//! table's .ibd out of the OS page cache (counted with mincore(2) on a mapping of the file),
//! fsync leaves it there; O_DSYNC commits without fdatasync of the redo log
//! (Innodb_os_log_fsyncs stays flat) and its commits survive a SIGKILL; O_DIRECT_NO_FSYNC
//! flushes pages with far fewer Innodb_data_fsyncs than O_DIRECT; nosync and littlesync stop
//! the server at startup.
//!
//! Run: `cargo test -p innoxide-server --test flush_method -- --nocapture` (prints figures).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{connect, global_status, start_in, start_with, text_rows, Server};
use mysql::prelude::Queryable;

/// Starts a server with `method` (as typed: any case) and checks that SHOW VARIABLES and
/// @@innodb_flush_method show it, and that SET refuses it (1238: a static variable).
fn start_method(method: &str, extra: &[&str]) -> Server {
    let arg = format!("--innodb-flush-method={}", method.to_lowercase());
    let mut args = vec![arg.as_str()];
    args.extend_from_slice(extra);
    let s = start_with(false, &args);
    check_method(&s, method);
    s
}

fn check_method(s: &Server, method: &str) {
    let mut c = connect(s);
    assert_eq!(
        text_rows(&mut c, "SHOW VARIABLES LIKE 'innodb_flush_method'"),
        [format!("innodb_flush_method,{method}")]
    );
    assert_eq!(
        text_rows(&mut c, "SELECT @@innodb_flush_method"),
        [method.to_string()]
    );
    match c.query_drop("SET GLOBAL innodb_flush_method = 'fsync'") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1238, "{}", e.message),
        other => panic!("SET innodb_flush_method: {other:?}"),
    }
    let monitor = text_rows(&mut c, "SHOW ENGINE INNODB STATUS").join("\n");
    assert!(
        monitor.contains(&format!("innodb_flush_method={method}")),
        "the monitor's FILE I/O names the method"
    );
}

/// Lets the page cleaners write every dirty page and waits until none is left.
fn flush_all(c: &mut mysql::Conn) {
    c.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
        .unwrap();
    c.query_drop("SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0")
        .unwrap();
    let end = Instant::now() + Duration::from_secs(180);
    while global_status(c, "Innodb_buffer_pool_pages_dirty") > 0 {
        assert!(Instant::now() < end, "dirty pages left after 180 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fills `fm.t` with `rows` rows of about 300 bytes.
fn load(c: &mut mysql::Conn, rows: u32) {
    for q in [
        "CREATE DATABASE fm",
        "CREATE TABLE fm.t (id INT PRIMARY KEY, n INT, v VARCHAR(300))",
        "SET SESSION cte_max_recursion_depth = 1000000",
    ] {
        c.query_drop(q).unwrap();
    }
    c.query_drop(format!(
        "INSERT INTO fm.t WITH RECURSIVE seq (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM seq \
         WHERE k < {rows}) SELECT k, 0, REPEAT('x', 290) FROM seq"
    ))
    .unwrap();
}

/// (bytes of `path` in the OS page cache, its length), by mincore(2) over a shared mapping
/// (mapping a file faults nothing in; the page cache is the inode's, whoever reads it).
// The test looks at the server's file from outside; no crash test sees this I/O.
#[allow(clippy::disallowed_types)]
fn resident(path: &Path) -> (u64, u64) {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    // SAFETY: a fresh read-only shared mapping of `len` bytes of an open file; unmapped below,
    // never dereferenced.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    assert_ne!(addr, libc::MAP_FAILED, "mmap {}", path.display());
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `vec` has one byte per page of the mapping, which is live until munmap.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    // SAFETY: the mapping made above, not used after this.
    unsafe { libc::munmap(addr, len) };
    assert_eq!(rc, 0, "mincore {}", path.display());
    let pages = vec.iter().filter(|&&b| b & 1 != 0).count();
    ((pages * page) as u64, len as u64)
}

/// O_DIRECT: the pages of a 4 MB table go to the file around the page cache; with fsync they
/// are written through it and stay there.
#[test]
fn o_direct_keeps_the_tablespace_out_of_the_page_cache() {
    let mut seen = Vec::new();
    for method in ["fsync", "O_DIRECT"] {
        let s = start_method(method, &["--innodb-buffer-pool-size=64M"]);
        let mut c = connect(&s);
        load(&mut c, 12_000);
        flush_all(&mut c);
        assert_eq!(
            text_rows(&mut c, "SELECT COUNT(*), SUM(LENGTH(v)) FROM fm.t"),
            ["12000,3480000"]
        );
        let (cached, len) = resident(&s.datadir().join("fm").join("t.ibd"));
        eprintln!("{method}: {cached} of {len} bytes of fm/t.ibd in the page cache");
        seen.push((cached, len));
    }
    let (buffered, _) = seen[0];
    let (direct, len) = seen[1];
    assert!(
        buffered >= 3 << 20,
        "fsync: only {buffered} bytes cached: the test lost its teeth"
    );
    assert!(
        direct <= 64 << 10,
        "O_DIRECT: {direct} of {len} bytes of the table in the page cache"
    );
}

/// O_DSYNC: each redo write is durable when it returns, so commits need no fdatasync of the
/// log (fsync's commits need one each); a SIGKILL loses none of them.
#[test]
fn o_dsync_commits_without_log_fsyncs_and_keeps_them() {
    let mut fsyncs = Vec::new();
    let mut keep = None;
    for method in ["fsync", "O_DSYNC"] {
        let s = start_method(method, &[]);
        let mut c = connect(&s);
        c.query_drop("CREATE DATABASE ds").unwrap();
        c.query_drop("CREATE TABLE ds.t (id INT PRIMARY KEY, v INT)")
            .unwrap();
        let (f0, w0) = (
            global_status(&mut c, "Innodb_os_log_fsyncs"),
            global_status(&mut c, "Innodb_os_log_written"),
        );
        for i in 0..300 {
            c.exec_drop("INSERT INTO ds.t VALUES (?, ?)", (i, i * 2))
                .unwrap();
        }
        let (f1, w1) = (
            global_status(&mut c, "Innodb_os_log_fsyncs"),
            global_status(&mut c, "Innodb_os_log_written"),
        );
        eprintln!(
            "{method}: 300 commits, {} log fsyncs, {} bytes of redo",
            f1 - f0,
            w1 - w0
        );
        assert!(w1 - w0 > 300 * 50, "{method}: the commits wrote no redo");
        fsyncs.push(f1 - f0);
        if method == "O_DSYNC" {
            keep = Some(s);
        }
    }
    assert!(
        fsyncs[0] >= 290,
        "fsync: {} log fsyncs for 300 commits",
        fsyncs[0]
    );
    assert!(
        fsyncs[1] <= 3,
        "O_DSYNC: {} log fsyncs for 300 commits",
        fsyncs[1]
    );
    let Some(s) = keep else { unreachable!() };
    let dir = s.stop_keep_dir(true);
    let s = start_in(dir, false, &["--innodb-flush-method=O_DSYNC"]);
    let mut c = connect(&s);
    assert_eq!(
        text_rows(&mut c, "SELECT COUNT(*), SUM(v) FROM ds.t"),
        ["300,89700"]
    );
}

/// Update-and-flush rounds of the O_DIRECT_NO_FSYNC test, each 200 rows.
const ROUNDS: u64 = 8;

/// O_DIRECT_NO_FSYNC: page writes are O_DIRECT|O_DSYNC, so the same flushing costs far fewer
/// Innodb_data_fsyncs than O_DIRECT's (a doublewrite sync and a tablespace sync per batch);
/// the data survives a SIGKILL.
#[test]
fn o_direct_no_fsync_flushes_with_far_fewer_data_fsyncs() {
    let mut seen = Vec::new();
    let mut keep = None;
    for method in ["O_DIRECT", "O_DIRECT_NO_FSYNC"] {
        let s = start_method(
            method,
            &["--innodb-buffer-pool-size=32M", "--innodb-io-capacity=4000"],
        );
        let mut c = connect(&s);
        load(&mut c, 8_000);
        flush_all(&mut c);
        let f0 = global_status(&mut c, "Innodb_data_fsyncs");
        let p0 = global_status(&mut c, "Innodb_buffer_pool_pages_flushed");
        for round in 0..ROUNDS {
            c.exec_drop("UPDATE fm.t SET n = n + 1 WHERE id % 40 = ?", (round % 40,))
                .unwrap();
            flush_all(&mut c);
        }
        let fsyncs = global_status(&mut c, "Innodb_data_fsyncs") - f0;
        let pages = global_status(&mut c, "Innodb_buffer_pool_pages_flushed") - p0;
        eprintln!("{method}: {pages} pages flushed in {ROUNDS} rounds, {fsyncs} data fsyncs");
        assert!(pages >= ROUNDS, "{method}: only {pages} pages flushed");
        seen.push(fsyncs);
        if method == "O_DIRECT_NO_FSYNC" {
            keep = Some(s);
        }
    }
    assert!(
        seen[0] >= 2 * ROUNDS,
        "O_DIRECT: {} data fsyncs in {ROUNDS} flushes",
        seen[0]
    );
    assert!(
        seen[1] * 5 <= seen[0],
        "O_DIRECT_NO_FSYNC: {} data fsyncs against O_DIRECT's {}",
        seen[1],
        seen[0]
    );
    let Some(s) = keep else { unreachable!() };
    let dir = s.stop_keep_dir(true);
    let s = start_in(dir, false, &["--innodb-flush-method=O_DIRECT_NO_FSYNC"]);
    check_method(&s, "O_DIRECT_NO_FSYNC");
    let mut c = connect(&s);
    assert_eq!(
        text_rows(&mut c, "SELECT COUNT(*), SUM(n) FROM fm.t"),
        [format!("8000,{}", 200 * ROUNDS)]
    );
}

/// nosync and littlesync (MySQL's testing values, which skip fsyncs) stop the server.
#[test]
fn nosync_and_littlesync_stop_startup() {
    for method in ["nosync", "littlesync"] {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_innoxide"))
            .args([
                "--no-defaults",
                "--datadir",
                dir.path().to_str().unwrap(),
                "--port=0",
                "--socket=",
                &format!("--innodb-flush-method={method}"),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {err}");
        assert!(
            err.contains(&format!("innodb_flush_method={method}")) && err.contains("Aborting"),
            "{method}: {err}"
        );
        assert!(
            !dir.path().join("ibdata1").exists(),
            "{method}: the engine started"
        );
    }
}
