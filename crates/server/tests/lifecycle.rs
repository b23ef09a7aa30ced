//! The `innoxide` binary from the outside: it initialises an empty data directory, says when it
//! is ready, shuts down cleanly on SIGTERM, and recovers after SIGKILL.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn start(dir: &std::path::Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args([
            "--no-defaults",
            "--datadir",
            dir.to_str().unwrap(),
            "--innodb-buffer-pool-size=16M",
            "--innodb-log-file-size=4M",
            "--port=0",
            "--socket=",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    (child, rx)
}

fn wait_for(rx: &mpsc::Receiver<String>, what: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let l = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no '{what}' in {seen:#?}"));
        let hit = l.contains(what);
        seen.push(l);
        if hit {
            return seen;
        }
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn initialise_ready_sigterm_restart_sigkill_recover() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, rx) = start(dir.path());
    let lines = wait_for(&rx, "ready");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("initialising a new data directory")),
        "{lines:#?}"
    );
    assert!(dir.path().join("ibdata1").exists() && dir.path().join("ib_logfile0").exists());
    signal(&c, "-TERM");
    assert!(c.wait().unwrap().success());
    wait_for(&rx, "Shutdown completed");

    // A clean restart has nothing to recover.
    let (mut c, rx) = start(dir.path());
    let lines = wait_for(&rx, "ready");
    assert!(
        !lines.iter().any(|l| l.contains("crash recovery")),
        "{lines:#?}"
    );
    signal(&c, "-KILL");
    let _ = c.wait();
    // After SIGKILL the next start runs recovery (from the last checkpoint) and comes up.
    let (mut c, rx) = start(dir.path());
    wait_for(&rx, "ready");
    signal(&c, "-INT");
    assert!(c.wait().unwrap().success());
}

#[test]
fn a_bad_option_is_refused_with_a_clear_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args([
            "--no-defaults",
            "--innodb-page-size=5K",
            "--datadir",
            "/nonexistent/x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("innodb_page_size"), "{err}");
    let help = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args(["--no-defaults", "--help"])
        .output()
        .unwrap();
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(
        h.contains("--innodb-buffer-pool-size") && h.contains("--innodb-flush-log-at-trx-commit"),
        "{h}"
    );
}
