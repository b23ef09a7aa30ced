//! dbSTRESS against the innoxide server binary, the quick CI version of issue #6's runs:
//! load a tiny OBJECT table, run two stress steps (1 and 2 sessions, read/write ratio 1) with
//! the verify step, check the JSON and CSV outputs, then draw the charts from the JSON.
//! The full runs (tools/bench/dbstress.py, innoxide and MariaDB side by side) are in
//! docs/benchmarks.md.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BENCH: &str = env!("CARGO_BIN_EXE_innoxide-bench");

/// The innoxide binary of the same build: next to innoxide-bench when the workspace's tests
/// were built together (`cargo test --workspace`), else built here.
fn innoxide_binary() -> PathBuf {
    let path = Path::new(BENCH).with_file_name("innoxide");
    if !path.exists() {
        let release = Path::new(BENCH)
            .parent()
            .is_some_and(|d| d.ends_with("release"));
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "innoxide-server", "--bin", "innoxide"]);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build -p innoxide-server failed");
    }
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// The server, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = Command::new(innoxide_binary())
        .args([
            "--no-defaults",
            "--datadir",
            dir.path().to_str().unwrap(),
            "--innodb-buffer-pool-size=32M",
            "--innodb-log-file-size=8M",
            &format!("--port={port}"),
            "--socket=",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let l = lines.next().expect("server exited").unwrap();
        if l.contains("ready for connections") {
            break;
        }
    }
    // Keep reading so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    Server {
        child,
        port,
        _dir: dir,
    }
}

#[test]
fn dbstress_two_steps_with_verify_and_charts() {
    let server = start_server();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("run.json");
    let csv = out_dir.path().join("run.csv");
    let out = Command::new(BENCH)
        .args([
            "dbstress",
            "run",
            "--load",
            "--objects=300",
            "--load-threads=2",
        ])
        .args(["--batch=100", "--sessions=1,2", "--step-time=2", "--rw=1"])
        .args(["--label=innoxide", "--port", &server.port.to_string()])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(out.status.success(), "dbstress run failed");
    assert!(stdout.contains("verify: passed"));

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["verify"]["passed"], true);
    assert_eq!(doc["verify"]["expected_rows"], 300 * 20);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (s, sessions) in steps.iter().zip([1, 2]) {
        assert_eq!(s["sessions"], sessions);
        assert!(s["transactions"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["wrong_results"], 0);
        for t in ["SEL1", "SEL2", "DEL", "INS", "UPD"] {
            assert!(s["types"][t]["count"].as_u64().unwrap() > 0, "{t}: {s}");
        }
        assert!(!s["timeline"].as_array().unwrap().is_empty());
    }
    // Every write deleted one row and inserted one.
    let acct = &doc["accounting"];
    assert!(acct["inserted"].as_u64().unwrap() > 0);
    assert_eq!(acct["inserted"], acct["deleted"]);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 8, "{csv}");

    let out = Command::new(BENCH)
        .args(["chart", "--name", "t", "--out-dir"])
        .arg(out_dir.path())
        .arg(format!("innoxide={}", json.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for chart in ["tps", "p95", "timeline"] {
        let png = std::fs::read(out_dir.path().join(format!("t-{chart}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{chart}.png is not a PNG");
        let svg = std::fs::read_to_string(out_dir.path().join(format!("t-{chart}.svg"))).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("innoxide"),
            "{chart}.svg"
        );
    }
    // Damage the data behind the run's back: verify fails, names each check, exits 1.
    let verify = || {
        Command::new(BENCH)
            .args(["dbstress", "verify", "--port", &server.port.to_string()])
            .output()
            .unwrap()
    };
    let out = verify();
    assert!(out.status.success(), "verify of the intact data");
    let url = format!("mysql://root@127.0.0.1:{}/dbstress", server.port);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    use mysql::prelude::Queryable;
    c.query_drop("DELETE FROM HISTORY WHERE REF_OBJECT = 7 LIMIT 1")
        .unwrap();
    c.query_drop("UPDATE SECTION SET REF_ZONE = 99 WHERE REF_SECTION = 3")
        .unwrap();
    let out = verify();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for failed in [
        "[FAIL] HISTORY rows = loaded + inserted - deleted",
        "[FAIL] every object has 20 HISTORY rows",
        "[FAIL] no orphan SECTION rows",
    ] {
        assert!(stdout.contains(failed), "{failed}: {stdout}");
    }
}

/// A run of the tool, its JSON document.
fn run_json(
    server: &Server,
    dir: &std::path::Path,
    name: &str,
    args: &[&str],
) -> serde_json::Value {
    let json = dir.join(format!("{name}.json"));
    let out = Command::new(BENCH)
        .args(["dbstress", "run", "--port", &server.port.to_string()])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verify: passed"), "{name}: {stdout}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The other modes on one loaded database: read-only (rw 0), UPDATE-only writes, and the
/// users scenario (think time 1 s), whose sessions each keep their 1 TPS.
#[test]
fn dbstress_read_only_update_only_and_users() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let count = |doc: &serde_json::Value, t: &str| doc["steps"][0]["types"][t]["count"].as_u64();
    let load = [
        "--load",
        "--objects=200",
        "--batch=100",
        "--sessions=2",
        "--step-time=1",
    ];
    let doc = run_json(
        &server,
        dir.path(),
        "ro",
        &[&load[..], &["--rw=0"]].concat(),
    );
    for t in ["SEL1", "SEL2"] {
        assert!(count(&doc, t).unwrap() > 0, "{t}: {doc}");
    }
    for t in ["DEL", "INS", "UPD"] {
        assert_eq!(count(&doc, t).unwrap_or(0), 0, "{t}: {doc}");
    }
    assert_eq!(doc["accounting"]["inserted"], 0);

    let doc = run_json(
        &server,
        dir.path(),
        "upd",
        &["--sessions=2", "--step-time=1", "--rw=1", "--update-only"],
    );
    assert!(count(&doc, "UPD").unwrap() > 0, "{doc}");
    for t in ["DEL", "INS"] {
        assert_eq!(count(&doc, t).unwrap_or(0), 0, "{t}: {doc}");
    }
    assert_eq!(doc["verify"]["expected_rows"], 200 * 20);

    let doc = run_json(
        &server,
        dir.path(),
        "users",
        &["--scenario=users", "--sessions=10", "--step-time=4"],
    );
    let step = &doc["steps"][0];
    assert_eq!(step["sessions"], 10);
    assert_eq!(step["session_tps"]["below_95pct_of_target"], 0, "{step}");
    // Ten sessions at one transaction a second (less the response times).
    let tps = step["tps"].as_f64().unwrap();
    assert!((8.0..=10.5).contains(&tps), "{tps}");
}
