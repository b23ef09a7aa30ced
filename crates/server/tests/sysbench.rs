//! sysbench 1.0 against the server binary: the quick version of issue #4's acceptance run.
//! `tools/bench/sysbench.py check` prepares 2 tables, runs all eight OLTP workloads with
//! prepared statements and with `--db-ps-mode=disable`, checks sysbench's exit code, its
//! reconnect and error counts and the tables' consistency, then cleans up. The full run (4 x
//! 100,000 rows, 30 s per workload at 16 threads, MariaDB side by side) is the same script with
//! its defaults; docs/benchmarks.md has the command and the figures.

use std::path::Path;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn sysbench_oltp_workloads() {
    for tool in ["sysbench", "mariadb"] {
        if !have(tool) {
            assert!(
                std::env::var_os("CI").is_none(),
                "{tool} is not installed (.ci/run installs it)"
            );
            eprintln!(
                "skipping: {tool} is not installed (apt-get install sysbench mariadb-client)"
            );
            return;
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("tools/bench/sysbench.py"))
        .args([
            "check",
            "--innoxide",
            env!("CARGO_BIN_EXE_innoxide"),
            "--tables=2",
            "--table-size=2000",
            "--threads=4",
            "--time=2",
            "--buffer-pool=32M",
            "--log-capacity-mb=16",
        ])
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stderr}\n{stdout}");
    assert!(out.status.success(), "sysbench check failed");
    assert!(stderr.contains("sysbench check passed"));
    // Every workload ran in both statement modes.
    for w in ["oltp_read_write", "oltp_insert", "oltp_delete"] {
        assert_eq!(stdout.matches(&format!("| {w} |")).count(), 2, "{w}");
    }
}
