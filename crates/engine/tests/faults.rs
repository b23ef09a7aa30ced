//! Faults and damage: I/O errors make the engine fail-stop; a full disk is a clean TableFull
//! error; a torn or truncated redo tail recovers to the last whole group; a damaged page is
//! reported with its space and page, never returned; a page LSN ahead of the log is reported;
//! the page size is fixed at initialisation; the redo log can be resized.

use std::sync::Arc;

use innoxide_engine::{Engine, EngineConfig, Error, Value};
use innoxide_io::{CrashMode, Fault, FaultKind, FaultOp, SimFs};
use innoxide_testkit::{create_tables, open_tables, run_trx, verify, Model, Workload, WorkloadCfg};

fn cfg() -> EngineConfig {
    let mut c = innoxide_testkit::sim_config(128);
    c.recovery_threads = EngineConfig::new("/data").recovery_threads;
    c
}

fn wcfg() -> WorkloadCfg {
    WorkloadCfg {
        id_space: 2000,
        rollback_chance: 0.0,
        ..Default::default()
    }
}

/// Runs `n` transactions; returns the model.
fn fill(engine: &Engine, model: Model, n: usize, seed: u64) -> Model {
    let tables = open_tables(engine, &wcfg()).unwrap();
    let mut wl = Workload::new(seed, wcfg());
    let mut m = model;
    for _ in 0..n {
        let ops = wl.next_trx(&m);
        m = run_trx(engine, &tables, &m, &ops, false).unwrap();
    }
    m
}

#[test]
fn a_failed_write_makes_the_engine_fail_stop_and_recovery_keeps_every_commit() {
    for (what, fault) in [
        (
            "data file write",
            Fault::new(FaultOp::Write, 1, FaultKind::Eio).on_path(".ibd"),
        ),
        (
            "data file sync",
            Fault::new(FaultOp::Sync, 1, FaultKind::Eio).on_path(".ibd"),
        ),
        (
            "redo write",
            Fault::new(FaultOp::Write, 1, FaultKind::Eio).on_path("ib_logfile"),
        ),
        (
            "redo short write",
            Fault::new(FaultOp::Write, 1, FaultKind::ShortWrite).on_path("ib_logfile"),
        ),
        (
            "redo sync",
            Fault::new(FaultOp::Sync, 1, FaultKind::Eio).on_path("ib_logfile"),
        ),
        (
            "doublewrite write",
            Fault::new(FaultOp::Write, 1, FaultKind::Eio).on_path("ibdata1"),
        ),
    ] {
        let fs = Arc::new(SimFs::new(3));
        let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
        create_tables(&engine, &wcfg()).unwrap();
        let model = fill(&engine, Model::default(), 50, 1);
        fs.inject(fault);
        // Work until the fault fires; everything acknowledged stays in `model`.
        let tables = open_tables(&engine, &wcfg()).unwrap();
        let mut wl = Workload::new(2, wcfg());
        let mut acked = model;
        let mut in_doubt = None;
        let mut failed = None;
        for _ in 0..500 {
            let ops = wl.next_trx(&acked);
            // A commit that returned is acknowledged, whatever happens to the flush after it; one
            // that failed is in doubt (its redo may have been written before the sync failed).
            let r = match run_trx(&engine, &tables, &acked, &ops, false) {
                Ok(m) => {
                    acked = m;
                    engine.flush_some(4).map(|_| ())
                }
                Err(e) => {
                    in_doubt = Some(innoxide_testkit::simulate(&acked, &ops));
                    Err(e)
                }
            };
            if let Err(e) = r {
                failed = Some(e);
                break;
            }
        }
        let first = failed.unwrap_or_else(|| panic!("{what}: the fault never fired"));
        assert!(
            matches!(first, Error::Io { .. } | Error::PreviousIo),
            "{what}: {first}"
        );
        // Fail-stop: nothing is written any more, and commits are refused, never acknowledged.
        let t = engine.table("test/t1").unwrap();
        let mut trx = engine.begin();
        let r = trx.insert(
            &t,
            &innoxide_testkit::to_values(
                999_999,
                &innoxide_testkit::ModelRow {
                    k: 1,
                    u: None,
                    pad: vec![],
                    blob: None,
                },
            ),
        );
        let r = r.and_then(|()| trx.commit());
        assert!(
            matches!(r, Err(Error::PreviousIo) | Err(Error::Io { .. })),
            "{what}: a write after the failure gave {r:?}"
        );
        assert!(
            engine.flush_and_checkpoint().is_err(),
            "{what}: flushing after the failure must fail"
        );
        engine.kill();
        // A restart recovers every acknowledged commit from the redo log.
        for mode in [CrashMode::DropUnsynced, CrashMode::KeepAll] {
            let e = Engine::open_with(cfg(), Arc::new(fs.crash_image(mode)))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            e.check().unwrap_or_else(|err| panic!("{what}: {err}"));
            if let Err(err) = verify(&e, &acked, &wcfg()) {
                let doubt = in_doubt.as_ref().unwrap_or_else(|| panic!("{what}: {err}"));
                verify(&e, doubt, &wcfg()).unwrap_or_else(|e2| panic!("{what}: {err}; {e2}"));
            }
            e.shutdown().unwrap();
        }
    }
}

#[test]
fn a_full_disk_is_a_clean_error_and_work_resumes_when_space_returns() {
    let fs = Arc::new(SimFs::new(4));
    let mut c = cfg();
    c.buffer_pool_size = 64 * 4096;
    let engine = Engine::open_with(c.clone(), fs.clone()).unwrap();
    let tables = create_tables(&engine, &wcfg()).unwrap();
    let mut model = fill(&engine, Model::default(), 100, 1);
    engine.flush_and_checkpoint().unwrap();
    fs.set_quota(Some(fs.used_bytes() + 100_000));
    let mut wl = Workload::new(
        9,
        WorkloadCfg {
            blob_chance: 0.3,
            ..wcfg()
        },
    );
    let mut full = 0;
    for _ in 0..3000 {
        let ops = wl.next_trx(&model);
        match run_trx(&engine, &tables, &model, &ops, false) {
            Ok(m) => model = m,
            Err(Error::TableFull(name)) => {
                full += 1;
                assert!(
                    name == "test/t1" || name == "test/t2" || name.contains("ibdata1"),
                    "{name}"
                );
                if full > 20 {
                    break;
                }
            }
            Err(e) => panic!("unexpected error on a full disk: {e}"),
        }
    }
    assert!(full > 0, "the quota was never reached");
    // Still consistent and serving: reads and deletes work, the failed statements left nothing.
    verify(&engine, &model, &wcfg()).unwrap();
    engine.check().unwrap();
    let t = engine.table("test/t1").unwrap();
    let first = *model.tables["test/t1"].keys().next().unwrap();
    let mut trx = engine.begin();
    assert!(trx.delete(&t, &[Value::Int(first)]).unwrap());
    trx.commit().unwrap();
    model.tables.get_mut("test/t1").unwrap().remove(&first);
    // Space comes back: writes resume.
    fs.set_quota(None);
    model = fill(&engine, model, 200, 10);
    verify(&engine, &model, &wcfg()).unwrap();
    engine.purge_all().unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();
    let e = Engine::open_with(c, Arc::new(fs.crash_image(CrashMode::DropUnsynced))).unwrap();
    verify(&e, &model, &wcfg()).unwrap();
    e.check().unwrap();
}

#[test]
fn a_redo_tail_cut_at_every_byte_recovers_a_prefix_of_the_commits() {
    let fs = Arc::new(SimFs::new(5));
    let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
    let tables = create_tables(&engine, &wcfg()).unwrap();
    let mut model = fill(&engine, Model::default(), 30, 1);
    engine.flush_and_checkpoint().unwrap();
    let log = &engine.inner().log;
    // Commits after the checkpoint, remembering where each one's redo ends.
    let mut wl = Workload::new(11, wcfg());
    let mut states = vec![(log.lsn(), model.clone())];
    for _ in 0..6 {
        let ops = wl.next_trx(&model);
        model = run_trx(&engine, &tables, &model, &ops, false).unwrap();
        states.push((log.lsn(), model.clone()));
    }
    let (start, end) = (states[0].0, log.lsn());
    let positions: Vec<_> = (start..end).map(|l| log.files.position(l)).collect();
    engine.kill();
    let base = fs.crash_image(CrashMode::DropUnsynced);
    let mut tried = 0;
    // Cut the redo written after the checkpoint at every REDO_CUT_STEP-th byte (default 7; 1 =
    // every byte).
    let step: usize = std::env::var("REDO_CUT_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    for cut in (start..=end).step_by(step.max(1)).chain([end]) {
        // Overwrite the redo from `cut` on with different bytes (inverted: zeroing could leave
        // bytes that were already zero intact).
        let img = base.crash_image(CrashMode::KeepAll);
        for l in cut..end {
            let (path, off) = &positions[(l - start) as usize];
            let b = img.durable_bytes(path).unwrap()[*off as usize];
            img.corrupt(path, *off, &[!b]);
        }
        let e =
            Engine::open_with(cfg(), Arc::new(img)).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        e.check().unwrap();
        // The state is the one after the last commit whose redo is whole.
        let want = &states.iter().rev().find(|(l, _)| *l <= cut).unwrap().1;
        verify(&e, want, &wcfg()).unwrap_or_else(|err| {
            let lsns: Vec<u64> = states.iter().map(|s| s.0).collect();
            panic!(
                "cut at {cut} (commits end at {lsns:?}): {err}; {:?}",
                e.open_report()
            )
        });
        e.shutdown().unwrap();
        tried += 1;
    }
    eprintln!(
        "{tried} cuts of {} bytes of redo, every one recovered to the right prefix",
        end - start
    );
    assert!(tried > 20);
}

#[test]
fn a_damaged_page_is_an_error_naming_it_and_the_rest_keeps_working() {
    let fs = Arc::new(SimFs::new(6));
    let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
    create_tables(&engine, &wcfg()).unwrap();
    let model = fill(&engine, Model::default(), 300, 1);
    let t1 = engine.table("test/t1").unwrap();
    let root = t1.clustered.root;
    engine.shutdown().unwrap();
    // Flip one byte in the middle of t1's clustered root page.
    let img = fs.crash_image(CrashMode::DropUnsynced);
    img.corrupt("/data/test/t1.ibd", u64::from(root) * 4096 + 2000, &[0x5A]);
    let e = Engine::open_with(cfg(), Arc::new(img)).unwrap();
    let t1 = e.table("test/t1").unwrap();
    let mut trx = e.begin();
    let err = trx.get(&t1, &[Value::Int(1)]).unwrap_err();
    match &err {
        Error::Corrupted { space, page, .. } => {
            assert_eq!((*space, *page), (t1.space, root), "{err}");
        }
        other => panic!("expected a corruption error, got {other}"),
    }
    assert!(
        err.to_string()
            .contains(&format!("page [space {}, page {root}]", t1.space)),
        "{err}"
    );
    drop(trx);
    let ce = e.check().unwrap_err();
    assert!(matches!(ce, Error::Corrupted { .. }), "{ce}");
    // Another table is unaffected.
    let t2 = e.table("test/t2").unwrap();
    let n = innoxide_testkit::read_table(&e, &t2, true).unwrap().len();
    assert_eq!(n, model.tables.get("test/t2").map_or(0, |m| m.len()));
}

#[test]
fn a_page_lsn_in_the_future_is_reported() {
    let fs = Arc::new(SimFs::new(7));
    let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
    create_tables(&engine, &wcfg()).unwrap();
    fill(&engine, Model::default(), 50, 1);
    let t1 = engine.table("test/t1").unwrap();
    let root = u64::from(t1.clustered.root);
    engine.shutdown().unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    // Give the page an LSN far ahead of the log and a valid checksum.
    let mut p = img.durable_bytes("/data/test/t1.ibd").unwrap()
        [(root * 4096) as usize..((root + 1) * 4096) as usize]
        .to_vec();
    innoxide_engine::page::set_lsn(&mut p, 6_094_071_743_825);
    innoxide_engine::page::stamp(&mut p);
    img.corrupt("/data/test/t1.ibd", root * 4096, &p);
    let e = Engine::open_with(cfg(), Arc::new(img)).unwrap();
    let t1 = e.table("test/t1").unwrap();
    let mut trx = e.begin();
    let _ = trx.get(&t1, &[Value::Int(1)]).unwrap();
    drop(trx);
    assert!(
        e.inner()
            .stats
            .future_lsn_pages
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
}

#[test]
fn the_page_size_is_fixed_at_initialisation_and_the_log_can_be_resized() {
    let fs = Arc::new(SimFs::new(8));
    let engine = Engine::open_with(cfg(), fs.clone()).unwrap();
    create_tables(&engine, &wcfg()).unwrap();
    let model = fill(&engine, Model::default(), 100, 1);
    engine.shutdown().unwrap();
    let mut other = cfg();
    other.page_size = 8192;
    other.log_file_size = 1 << 20;
    let err = Engine::open_with(other, fs.clone())
        .err()
        .expect("a different page size is refused");
    let msg = err.to_string();
    assert!(
        msg.contains("innodb_page_size") && msg.contains("4096"),
        "{msg}"
    );
    // A different log size: recreated at a clean point, data intact.
    let mut bigger = cfg();
    bigger.log_file_size = 512 << 10;
    bigger.log_files_in_group = 3;
    let e = Engine::open_with(bigger.clone(), fs.clone()).unwrap();
    assert_eq!(e.inner().log.files.file_size, 512 << 10);
    assert_eq!(e.inner().log.files.n_files(), 3);
    verify(&e, &model, &wcfg()).unwrap();
    e.check().unwrap();
    e.shutdown().unwrap();
    let e = Engine::open_with(bigger, fs).unwrap();
    verify(&e, &model, &wcfg()).unwrap();
    e.shutdown().unwrap();
}

#[test]
fn a_data_directory_of_another_format_version_is_refused() {
    use innoxide_io::FileSystem;
    let fs = Arc::new(SimFs::new(8));
    let c = cfg();
    let engine = Engine::open_with(c.clone(), fs.clone()).unwrap();
    engine.shutdown().unwrap();
    // FSP_FLAGS (offset 42) of ibdata1's page 0: bits 8-15 hold the format version.
    let f = fs.open(&c.datadir.join("ibdata1")).unwrap();
    let mut flags = [0u8; 4];
    f.read_at(&mut flags, 42).unwrap();
    assert_eq!(flags[2], 2, "this build writes format version 2");
    flags[2] = 1;
    f.write_at(&flags, 42).unwrap();
    f.sync_data().unwrap();
    let err = Engine::open_with(c, fs)
        .err()
        .expect("format version 1 is refused");
    let msg = err.to_string();
    assert!(
        msg.contains("format version 1") && msg.contains("reads version 2"),
        "{msg}"
    );
}
