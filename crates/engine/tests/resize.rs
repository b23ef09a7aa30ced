//! Online buffer pool resize: while writers and readers run on data larger than the smaller
//! pool, the pool shrinks and grows in chunks several times. Every resize completes, the pool
//! has the size asked for, the lists stay consistent, no committed row is lost or changed, and
//! the withdrawn memory is really gone (pages total follows the size).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::buffer_pool::resize::ResizePhase;
use innoxide_engine::{ColumnDef, ColumnKind, Engine, EngineConfig, KeyBound, TableDef, Value};

fn wait_resized(engine: &Engine) {
    let t0 = Instant::now();
    loop {
        let p = engine.inner().stats.bp_resize.phase.lock().clone();
        match p {
            ResizePhase::Completed { .. } => return,
            ResizePhase::Failed(why) => panic!("resize failed: {why}"),
            _ => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "resize stuck: {p:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Starts a resize, retrying while the previous one is still releasing its claim.
fn resize(engine: &Engine, bytes: u64) -> u64 {
    *engine.inner().stats.bp_resize.phase.lock() = ResizePhase::NotStarted;
    loop {
        match engine.resize_buffer_pool(bytes) {
            Ok(n) => return n,
            Err(e) if e.starts_with("Another") => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn pool_shrinks_and_grows_online_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = EngineConfig::new(dir.path());
    c.page_size = 4096;
    c.buffer_pool_size = 2 << 20; // 512 pages
    c.buffer_pool_chunk_size = 256 << 10; // 64 pages
    c.buffer_pool_instances = 2;
    c.log_file_size = 4 << 20;
    c.tunables.flush_log_at_trx_commit = 2;
    let engine = Arc::new(Engine::open(c).unwrap());
    let geo = engine.inner().bp.geometry();
    assert_eq!((geo.chunk_frames, geo.chunks), (64, 4));
    // Rounded up to chunk x instances.
    assert_eq!(engine.resize_buffer_pool((1 << 20) + 1), Ok(1536 << 10));
    wait_resized(&engine);
    let t = engine
        .create_table(TableDef::new(
            "test/r",
            vec![
                ColumnDef::new("id", ColumnKind::BIGINT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 200 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    // ~1.5 MiB of rows: larger than the smallest pool below.
    const ROWS: i64 = 6000;
    let val =
        |id: i64, gen: i64| Value::from(format!("{id:08}-{gen:08}-{}", "x".repeat(180)).as_str());
    let mut trx = engine.begin();
    for id in 0..ROWS {
        trx.insert(&t, &[Value::Int(id), val(id, 0)]).unwrap();
    }
    trx.commit().unwrap();
    // Writers bump a generation per row; `done` is the last committed generation (all rows).
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicI64::new(0));
    let writer = {
        let (e, t, stop, done) = (engine.clone(), t.clone(), stop.clone(), done.clone());
        std::thread::spawn(move || {
            let mut gen = 0;
            while !stop.load(Ordering::Relaxed) {
                gen += 1;
                for lo in (0..ROWS).step_by(500) {
                    let mut trx = e.begin();
                    for id in lo..lo + 500 {
                        trx.update(&t, &[Value::Int(id)], &[(1, val(id, gen))])
                            .unwrap();
                    }
                    trx.commit().unwrap();
                }
                done.store(gen, Ordering::Release);
            }
        })
    };
    let reader = {
        let (e, t, stop) = (engine.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut scans = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut trx = e.begin();
                let n = trx
                    .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
                    .unwrap()
                    .count();
                assert_eq!(n as i64, ROWS, "a scan during a resize lost rows");
                trx.commit().unwrap();
                scans += 1;
            }
            scans
        })
    };
    let bp = &engine.inner().bp;
    for (bytes, pages) in [
        (512u64 << 10, 128usize),
        (3 << 20, 768),
        (1 << 20, 256),
        (512 << 10, 128),
        (2 << 20, 512),
    ] {
        assert_eq!(resize(&engine, bytes), bytes);
        wait_resized(&engine);
        assert_eq!(
            bp.n_frames(),
            pages,
            "pages total after resizing to {bytes}"
        );
        bp.check_lists().unwrap();
        let (free, data) = bp.n_free_and_data();
        assert!(free + data <= pages, "{free} free + {data} data > {pages}");
        std::thread::sleep(Duration::from_millis(300));
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let scans = reader.join().unwrap();
    assert!(scans > 0);
    let gen = done.load(Ordering::Acquire);
    assert!(gen > 0, "the writer made progress during the resizes");
    // Every row holds the last generation written to it (the writer's final pass may have
    // stopped midway: gen or gen + 1).
    let mut trx = engine.begin();
    for id in 0..ROWS {
        let row = trx.get(&t, &[Value::Int(id)]).unwrap().expect("row exists");
        let ok = row[1] == val(id, gen) || row[1] == val(id, gen + 1);
        assert!(ok, "row {id}: {:?}", row[1]);
    }
    trx.commit().unwrap();
    // A second resize while one runs is refused with InnoDB's message.
    *engine.inner().stats.bp_resize.phase.lock() = ResizePhase::NotStarted;
    let first = engine.resize_buffer_pool(512 << 10);
    assert!(first.is_ok());
    let second = engine.resize_buffer_pool(1 << 20);
    if let Err(e) = second {
        assert_eq!(e, "Another buffer pool resize is already in progress.");
        wait_resized(&engine);
    } else {
        // The first one finished in between; both are applied in turn.
        wait_resized(&engine);
    }
    bp.check_lists().unwrap();
}
