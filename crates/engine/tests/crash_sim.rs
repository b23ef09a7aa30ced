//! Power loss at every sync point, over the simulated disk (SQLite crash9.test, redb
//! crash_consistency). A deterministic workload (DDL, inserts, updates, deletes, rollbacks, off-
//! page values, flushes, purge, log wrap-around) runs on a SimFs that crashes at its k-th sync,
//! for every k until the workload completes. Each crash leaves several disk images: unsynced
//! writes dropped, kept or dropped or torn at random per 512-byte sector, or all torn. Each image
//! must open (recovery), pass check(), and hold exactly the acknowledged transactions, plus at
//! most the one whose commit was in flight.
//!
//! The harness runs per `Variant`: doublewrite on or off, and innodb_flush_method. Under
//! O_DSYNC (redo) and O_DIRECT_NO_FSYNC (data files) the simulated disk makes each write of
//! those files durable when it returns, and each such write is a sync point too: the crash
//! leaves it in flight (dropped, kept or torn), everything written before it durable.
//!
//! Reproduce and size: see docs/testing.md (CRASH_TRXS, CRASH_STRIDE, CRASH_SEED).

use std::sync::Arc;

use innoxide_engine::{Engine, EngineConfig, FlushMethod};
use innoxide_io::{CrashMode, FileSystem, SimFs};
use innoxide_testkit::{create_tables, run_trx, simulate, verify, Model, Workload, WorkloadCfg};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// What a run of the harness varies.
#[derive(Clone, Copy, Debug)]
struct Variant {
    doublewrite: bool,
    flush_method: FlushMethod,
}

const DBLWR_ON: Variant = Variant {
    doublewrite: true,
    flush_method: FlushMethod::Fsync,
};

fn cfg(v: Variant) -> EngineConfig {
    let mut c = innoxide_testkit::sim_config(64);
    c.recovery_threads = 2;
    c.doublewrite = v.doublewrite;
    c.flush_method = v.flush_method;
    c
}

fn wcfg() -> WorkloadCfg {
    WorkloadCfg {
        id_space: 400,
        max_ops_per_trx: 3,
        blob_chance: 0.06,
        blob_max: 9000,
        rollback_chance: 0.1,
        ..Default::default()
    }
}

/// What the workload had acknowledged when the disk crashed.
struct Run {
    acked: Model,
    /// The model if the step in flight at the crash completed.
    inflight: Model,
    completed: bool,
}

fn workload(fs: Arc<SimFs>, seed: u64, trxs: u64, v: Variant) -> Run {
    let mut acked = Model::default();
    let wc = wcfg();
    let Ok(engine) = Engine::open_with(cfg(v), fs) else {
        return Run {
            inflight: acked.clone(),
            acked,
            completed: false,
        };
    };
    let Ok(tables) = create_tables(&engine, &wc) else {
        engine.kill();
        return Run {
            inflight: acked.clone(),
            acked,
            completed: false,
        };
    };
    let mut wl = Workload::new(seed, wc);
    for i in 0..trxs {
        let ops = wl.next_trx(&acked);
        let rb = wl.rollback();
        let expect = if rb {
            acked.clone()
        } else {
            simulate(&acked, &ops)
        };
        match run_trx(&engine, &tables, &acked, &ops, rb) {
            Ok(m) => {
                assert_eq!(
                    m, expect,
                    "seed {seed}: the engine and the model disagree at trx {i}"
                );
                acked = m;
            }
            Err(_) => {
                engine.kill();
                return Run {
                    acked,
                    inflight: expect,
                    completed: false,
                };
            }
        }
        let side = match i % 13 {
            4 => engine.flush_some(5).map(|_| ()),
            9 => engine.purge_all().map(|_| ()),
            12 => engine.flush_and_checkpoint(),
            _ => Ok(()),
        };
        if side.is_err() {
            engine.kill();
            return Run {
                inflight: acked.clone(),
                acked,
                completed: false,
            };
        }
    }
    if engine.shutdown().is_err() {
        return Run {
            inflight: acked.clone(),
            acked,
            completed: false,
        };
    }
    Run {
        inflight: acked.clone(),
        acked,
        completed: true,
    }
}

#[derive(Default, Debug)]
struct Figures {
    sync_points: u64,
    /// Writes made durable by an O_DSYNC handle in the complete run.
    durable_writes: u64,
    states: u64,
    acked_commits_lost: u64,
    corruptions: u64,
    detected_torn_pages: u64,
    pages_restored_from_doublewrite: u64,
    redo_records_applied: u64,
    trx_rolled_back: u64,
}

fn recover_and_verify(img: SimFs, run: &Run, v: Variant, fig: &mut Figures, what: &str) {
    fig.states += 1;
    let engine = match Engine::open_with(cfg(v), Arc::new(img)) {
        Ok(e) => e,
        Err(e) if !v.doublewrite && e.to_string().contains("damaged") => {
            // Doublewrite OFF: a torn page that redo needs is detected and reported.
            fig.detected_torn_pages += 1;
            return;
        }
        Err(e) => panic!("{what}: recovery failed: {e}"),
    };
    let rep = engine.open_report().clone();
    fig.pages_restored_from_doublewrite += rep.pages_restored_from_doublewrite as u64;
    fig.redo_records_applied += rep.redo_records;
    fig.trx_rolled_back += rep.trx_rolled_back as u64;
    if let Err(e) = engine.check() {
        fig.corruptions += 1;
        panic!("{what}: check() after recovery: {e}");
    }
    let wc = wcfg();
    let a = verify(&engine, &run.acked, &wc);
    let b = if a.is_err() {
        verify(&engine, &run.inflight, &wc)
    } else {
        Ok(())
    };
    if let (Err(ea), Err(eb)) = (&a, &b) {
        fig.acked_commits_lost += 1;
        panic!("{what}: state is neither the acknowledged one ({ea}) nor with the in-flight commit ({eb})");
    }
    // The recovered engine keeps working and shuts down cleanly.
    engine.purge_all().unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();
}

fn crash_every_sync(v: Variant, default_trxs: u64) -> Figures {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let seed = env("CRASH_SEED", 7);
    let trxs = env("CRASH_TRXS", default_trxs);
    let stride = env("CRASH_STRIDE", 1).max(1);
    // Count the sync points of a complete run.
    let probe = Arc::new(SimFs::new(seed));
    let full = workload(probe.clone(), seed, trxs, v);
    assert!(full.completed);
    let total = probe.sync_count();
    let mut fig = Figures {
        sync_points: total,
        durable_writes: probe.stats().durable_writes,
        ..Default::default()
    };
    let mut k = 1;
    while k <= total {
        let fs = Arc::new(SimFs::new(seed));
        fs.set_crash_at_sync(k);
        if std::env::var("CRASH_VERBOSE").is_ok() {
            eprintln!("crash at sync {k}/{total}");
        }
        let run = workload(fs.clone(), seed, trxs, v);
        assert!(
            !run.completed || !fs.is_crashed(),
            "k={k}: crashed yet completed"
        );
        let modes: Vec<(CrashMode, &str)> = if v.doublewrite {
            vec![
                (CrashMode::DropUnsynced, "drop unsynced"),
                (CrashMode::KeepAll, "keep all (as after SIGKILL)"),
                (CrashMode::Random { seed: k }, "random"),
                (CrashMode::TornOnly { seed: k }, "torn"),
            ]
        } else {
            vec![
                (CrashMode::TornOnly { seed: k }, "torn"),
                (CrashMode::Random { seed: k }, "random"),
            ]
        };
        for (mode, name) in modes {
            let what = format!("{v:?}: seed {seed}, crash at sync {k}/{total}, {name} image");
            recover_and_verify(fs.crash_image(mode), &run, v, &mut fig, &what);
        }
        k += stride;
    }
    fig
}

/// The assertions every doublewrite-ON variant must pass.
fn assert_nothing_lost(fig: &Figures) {
    assert_eq!(fig.acked_commits_lost, 0);
    assert_eq!(fig.corruptions, 0);
    let points = (1..=fig.sync_points)
        .step_by(env("CRASH_STRIDE", 1).max(1) as usize)
        .count();
    assert_eq!(
        fig.states,
        4 * points as u64,
        "every crash point gives four disk images"
    );
    assert!(
        fig.pages_restored_from_doublewrite > 0,
        "no torn page was repaired: the test lost its teeth"
    );
}

#[test]
fn power_loss_at_every_sync_point_loses_nothing_acknowledged() {
    let fig = crash_every_sync(DBLWR_ON, 120);
    eprintln!("doublewrite ON: {fig:?}");
    assert_nothing_lost(&fig);
    assert!(fig.states >= 300, "only {} crash states", fig.states);
    assert_eq!(fig.durable_writes, 0, "fsync opens nothing O_DSYNC");
}

/// innodb_flush_method=O_DSYNC: the redo log is never fdatasync'ed, each log write is durable
/// when it returns; a commit acknowledged after its write survives every power loss.
#[test]
fn power_loss_under_o_dsync_loses_nothing_acknowledged() {
    let v = Variant {
        flush_method: FlushMethod::ODsync,
        ..DBLWR_ON
    };
    let fig = crash_every_sync(v, 60);
    eprintln!("O_DSYNC: {fig:?}");
    assert_nothing_lost(&fig);
    assert!(
        fig.durable_writes > 0,
        "no O_DSYNC log write: lost its teeth"
    );
}

/// innodb_flush_method=O_DIRECT_NO_FSYNC: data files (doublewrite areas included) are written
/// O_DIRECT|O_DSYNC and synced only after growth; no checkpoint passes a page write that was
/// not durable, and a home write torn in flight is repaired from its durable doublewrite copy.
#[test]
fn power_loss_under_o_direct_no_fsync_loses_nothing_acknowledged() {
    let v = Variant {
        flush_method: FlushMethod::ODirectNoFsync,
        ..DBLWR_ON
    };
    let fig = crash_every_sync(v, 60);
    eprintln!("O_DIRECT_NO_FSYNC: {fig:?}");
    assert_nothing_lost(&fig);
    assert!(
        fig.durable_writes > 0,
        "no O_DSYNC page write: lost its teeth"
    );
}

#[test]
fn torn_pages_without_doublewrite_are_detected_never_used() {
    let fig = crash_every_sync(
        Variant {
            doublewrite: false,
            ..DBLWR_ON
        },
        120,
    );
    eprintln!("doublewrite OFF: {fig:?}");
    assert_eq!(fig.acked_commits_lost, 0);
    assert_eq!(fig.corruptions, 0);
    assert!(
        fig.detected_torn_pages > 0,
        "no torn page was met: the test lost its teeth"
    );
}

#[test]
fn simulated_disk_is_shared_between_trait_objects() {
    // The engine holds the SimFs as a trait object; crash images are taken from the concrete one.
    let fs = Arc::new(SimFs::new(1));
    let dynfs: Arc<dyn FileSystem> = fs.clone();
    let e = Engine::open_with(cfg(DBLWR_ON), dynfs).unwrap();
    e.shutdown().unwrap();
    assert!(fs.sync_count() > 0);
}
