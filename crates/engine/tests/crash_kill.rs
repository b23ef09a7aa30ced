//! A real process killed with SIGKILL at random moments (at least 20 times). The test binary
//! runs itself as the writer: it opens the data directory (recovering it), reads the tables into
//! a model, then runs a seeded workload with innodb_flush_log_at_trx_commit=1, printing
//! "ACK <n>" after each commit returns. The parent kills it at a random time, opens the data
//! directory itself and checks that the state is exactly the writer's model after its last
//! acknowledged transaction (or the one after, if that commit reached the disk first), that
//! check() is clean, and then lets the next writer continue from there.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use innoxide_engine::{Engine, EngineConfig};
use innoxide_testkit::{
    create_tables, open_tables, read_table, run_trx, simulate, verify, Model, Workload, WorkloadCfg,
};

const CHILD_ENV: &str = "INNOXIDE_KILL_CHILD_DIR";

fn cfg(dir: &std::path::Path) -> EngineConfig {
    let mut c = EngineConfig::new(dir);
    c.page_size = 4096;
    c.buffer_pool_size = 128 * 4096;
    c.log_file_size = 512 << 10;
    c.log_buffer_size = 128 << 10;
    c.tunables.flush_log_at_trx_commit = 1;
    c
}

fn wcfg() -> WorkloadCfg {
    WorkloadCfg {
        id_space: 3000,
        blob_chance: 0.03,
        blob_max: 20_000,
        ..Default::default()
    }
}

/// The state of the data directory as a model (tables read through the clustered index).
fn snapshot(engine: &Engine) -> Model {
    let mut m = Model::default();
    for name in &wcfg().tables {
        if let Ok(t) = engine.table(name) {
            m.tables.insert(
                name.clone(),
                read_table(engine, &t, true).unwrap().into_iter().collect(),
            );
        }
    }
    m
}

/// Copies directory `from` into `to` (which exists).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        let dest = to.join(f.file_name());
        if f.file_type().unwrap().is_dir() {
            std::fs::create_dir(&dest).unwrap();
            copy_dir(&f.path(), &dest);
        } else {
            std::fs::copy(f.path(), dest).unwrap();
        }
    }
}

/// Recovers a copy of a directory a failed run kept and checks it, with the recovery log shown:
/// `CRASH_KILL_RECHECK=<dir> cargo test -p innoxide-engine --test crash_kill recheck --
/// --nocapture`. No background threads: the rollback of active transactions runs inside open
/// and purge does not run, so each recheck does the same.
#[test]
fn recheck_kept_directory() {
    let Ok(kept) = std::env::var("CRASH_KILL_RECHECK") else {
        return;
    };
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(std::path::Path::new(&kept), dir.path());
    let mut c = cfg(dir.path());
    c.background_threads = false;
    let e = Engine::open(c).unwrap();
    eprintln!("{:?}", e.open_report());
    e.check().unwrap();
    e.shutdown().unwrap();
}

/// The writer (runs only in the child process).
#[test]
fn kill_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seed: u64 = std::env::var("INNOXIDE_KILL_SEED")
        .unwrap()
        .parse()
        .unwrap();
    let engine = Engine::open(cfg(std::path::Path::new(&dir))).unwrap();
    let tables = if engine.table(&wcfg().tables[0]).is_ok() {
        open_tables(&engine, &wcfg()).unwrap()
    } else {
        create_tables(&engine, &wcfg()).unwrap()
    };
    let mut model = snapshot(&engine);
    let mut wl = Workload::new(seed, wcfg());
    let out = std::io::stdout();
    writeln!(out.lock(), "READY").unwrap();
    for n in 0.. {
        let ops = wl.next_trx(&model);
        let rb = wl.rollback();
        model = run_trx(&engine, &tables, &model, &ops, rb).unwrap();
        let mut o = out.lock();
        writeln!(o, "ACK {n}").unwrap();
        o.flush().unwrap();
    }
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_commit() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let kills: u64 = std::env::var("KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng: u64 = 0x5EED_1234;
    let mut total_acked = 0u64;
    let mut recovery_ms = Vec::new();
    for round in 0..kills {
        let seed = 1000 + round;
        // Where the writer starts from.
        let base = {
            let e = Engine::open(cfg(dir.path())).unwrap();
            let m = snapshot(&e);
            e.shutdown().unwrap();
            m
        };
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill_child_writer",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, dir.path())
            .env("INNOXIDE_KILL_SEED", seed.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Wait until the writer is ready, then kill it at a random moment.
        let start = Instant::now();
        loop {
            let l = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("writer did not start");
            if l.ends_with("READY") {
                break;
            }
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let wait = Duration::from_millis(50 + rng % 1200);
        std::thread::sleep(wait);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let mut acked: Option<u64> = None;
        while let Ok(l) = rx.try_recv() {
            if let Some(n) = l.strip_prefix("ACK ") {
                acked = Some(n.parse().unwrap());
            }
        }
        // Replay the writer's workload on the model.
        let mut wl = Workload::new(seed, wcfg());
        let mut model = base;
        let n_acked = acked.map_or(0, |a| a + 1);
        for _ in 0..n_acked {
            let ops = wl.next_trx(&model);
            let rb = wl.rollback();
            if !rb {
                model = simulate(&model, &ops);
            }
        }
        let ops = wl.next_trx(&model);
        let rb = wl.rollback();
        let inflight = if rb {
            model.clone()
        } else {
            simulate(&model, &ops)
        };
        // The directory as the kill left it, kept if recovery does not end clean.
        let before = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), before.path());
        let t0 = Instant::now();
        let e = match Engine::open(cfg(dir.path())) {
            Ok(e) => e,
            Err(e) => panic!(
                "round {round}: recovery failed: {e} (the directory before it: {})",
                before.keep().display()
            ),
        };
        recovery_ms.push(t0.elapsed().as_millis());
        let rep = e.open_report().clone();
        if let Err(err) = e.check() {
            panic!(
                "round {round}: check after recovery ({} redo records, {} transactions rolled back): {err} (the directory before recovery: {})",
                rep.redo_records,
                rep.trx_rolled_back,
                before.keep().display()
            );
        }
        if let Err(a) = verify(&e, &model, &wcfg()) {
            if let Err(b) = verify(&e, &inflight, &wcfg()) {
                panic!("round {round}: {n_acked} acknowledged; state is neither that ({a}) nor with the next ({b})");
            }
        }
        eprintln!(
            "round {round}: killed after {:?} with {n_acked} acknowledged commits; recovery applied {} redo records, rolled back {} transactions in {} ms",
            start.elapsed(),
            rep.redo_records,
            rep.trx_rolled_back,
            recovery_ms.last().unwrap()
        );
        total_acked += n_acked;
        e.shutdown().unwrap();
    }
    recovery_ms.sort_unstable();
    eprintln!(
        "{kills} SIGKILLs, {total_acked} acknowledged commits, 0 lost, 0 check failures; recovery p50 {} ms, max {} ms",
        recovery_ms[recovery_ms.len() / 2],
        recovery_ms.last().unwrap()
    );
    assert!(
        total_acked > kills,
        "the writer hardly committed anything: the test lost its teeth"
    );
}

/// The same writer with background purge and flushing, stopped cleanly: the state must check.
#[test]
fn writer_with_background_purge_checks_clean() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(cfg(dir.path())).unwrap();
    let tables = create_tables(&engine, &wcfg()).unwrap();
    let mut model = Model::default();
    let mut wl = Workload::new(77, wcfg());
    for i in 0..3000 {
        let ops = wl.next_trx(&model);
        let rb = wl.rollback();
        model = run_trx(&engine, &tables, &model, &ops, rb).unwrap();
        if i % 500 == 499 {
            engine
                .check()
                .unwrap_or_else(|e| panic!("after trx {i}: {e}"));
        }
    }
    verify(&engine, &model, &wcfg()).unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();
}
