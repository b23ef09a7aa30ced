//! innodb_open_files: the tablespace layer keeps at most that many files open (ibdata1 and the
//! redo log files count and stay open), closing the least recently used idle ones and opening
//! them again on the next access; a closed file's writes were made durable first, and a sync
//! that fails on the way is fatal (issue #5: every knob it shows must really act).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{Engine, EngineConfig, Error, FlushMethod, KeyBound, Table, Value};
use innoxide_io::{CrashMode, Fault, FaultKind, FaultOp, SimFs};
use innoxide_testkit::id_v_def;

/// The tests of this file run one at a time: the descriptor count is the whole process's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Descriptors of this process open on `.ibd` files.
fn open_ibd_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|p| p.extension().is_some_and(|x| x == "ibd"))
                .count()
        })
        .unwrap_or(0)
}

fn tables(engine: &Engine, n: usize) -> Vec<Arc<Table>> {
    (0..n)
        .map(|i| {
            engine
                .create_table(id_v_def(&format!("test/t{i}")))
                .unwrap()
        })
        .collect()
}

fn fill(engine: &Engine, ts: &[Arc<Table>], round: i64, rows: i64) {
    for t in ts {
        let mut trx = engine.begin();
        for i in 0..rows {
            let id = round * rows + i;
            trx.insert(t, &[Value::Int(id), Value::from(format!("r{id}").as_str())])
                .unwrap();
        }
        trx.commit().unwrap();
    }
}

fn count(engine: &Engine, t: &Arc<Table>) -> usize {
    let mut trx = engine.begin();
    let n = trx
        .scan(t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .count();
    trx.commit().unwrap();
    n
}

fn config(dir: &Path, open_files: usize, method: FlushMethod) -> EngineConfig {
    let mut c = innoxide_testkit::small_config(dir, 4);
    c.open_files = open_files;
    c.flush_method = method;
    c
}

/// 40 tables through a cache of 12 files (ibdata1 + 2 redo log files + 9 tablespaces), with
/// each flush method: the limit holds in the engine's count and in the process's descriptors,
/// files are closed and reopened, every row reads back before and after a restart.
#[test]
fn at_most_innodb_open_files_are_open_and_every_table_reads_back() {
    let _serial = serial();
    for method in FlushMethod::ALL {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(config(dir.path(), 12, method)).unwrap();
        let fil = &engine.inner().fil;
        let ts = tables(&engine, 40);
        for round in 0..3 {
            fill(&engine, &ts, round, 30);
            engine.flush_and_checkpoint().unwrap();
            assert!(fil.open_files() <= 12, "{method:?}: {}", fil.open_files());
            assert!(
                open_ibd_descriptors() <= 9,
                "{method:?}: {}",
                open_ibd_descriptors()
            );
        }
        for t in &ts {
            assert_eq!(count(&engine, t), 90, "{method:?}");
        }
        assert!(fil.stats.closes.load(Ordering::Relaxed) > 0, "{method:?}");
        assert!(fil.stats.reopens.load(Ordering::Relaxed) > 0, "{method:?}");
        engine.check().unwrap();
        engine.shutdown().unwrap();
        let engine = Engine::open(config(dir.path(), 12, method)).unwrap();
        for i in 0..40 {
            let t = engine.table(&format!("test/t{i}")).unwrap();
            assert_eq!(count(&engine, &t), 90, "{method:?} after restart");
        }
        assert!(engine.inner().fil.open_files() <= 12);
        engine.shutdown().unwrap();
    }
}

/// Four threads write and read 30 tables through a cache of 10 files while the page cleaners
/// flush: concurrent misses, evictions of files just written, no deadlock, nothing lost.
#[test]
fn concurrent_misses_and_evictions_lose_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(config(dir.path(), 10, FlushMethod::ODirect)).unwrap());
    let ts = Arc::new(tables(&engine, 30));
    let deadline = Instant::now() + Duration::from_millis(1500);
    let workers: Vec<_> = (0..4i64)
        .map(|w| {
            let (engine, ts) = (engine.clone(), ts.clone());
            std::thread::spawn(move || {
                let mut n = 0i64;
                while Instant::now() < deadline || n < 50 {
                    let t = &ts[((n * 7 + w) % 30) as usize];
                    let id = w * 1_000_000 + n;
                    let mut trx = engine.begin();
                    trx.insert(t, &[Value::Int(id), Value::from("x")]).unwrap();
                    trx.commit().unwrap();
                    let mut trx = engine.begin();
                    assert!(trx.get(t, &[Value::Int(id)]).unwrap().is_some());
                    trx.commit().unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    let total: i64 = workers.into_iter().map(|h| h.join().unwrap()).sum();
    let rows: usize = ts.iter().map(|t| count(&engine, t)).sum();
    assert_eq!(rows as i64, total);
    assert!(engine.inner().fil.open_files() <= 10);
    engine.check().unwrap();
    drop(ts);
    match Arc::try_unwrap(engine) {
        Ok(e) => e.shutdown().unwrap(),
        Err(_) => panic!("engine still shared"),
    }
}

fn sim_engine(fs: &Arc<SimFs>) -> Engine {
    let mut c = innoxide_testkit::sim_config(512);
    c.open_files = 10;
    Engine::open_with(c, fs.clone()).unwrap()
}

/// A flush batch writing 20 tablespaces through 7 slots closes files it has just written: each
/// is synced before it is closed (a power loss right after the checkpoint keeps every row),
/// and when such a sync fails the engine stops writing (fail-stop) and recovery keeps every
/// acknowledged commit.
#[test]
fn evicted_files_are_synced_first_and_a_failed_sync_is_fatal() {
    let _serial = serial();
    let fs = Arc::new(SimFs::new(3));
    let engine = sim_engine(&fs);
    let ts = tables(&engine, 20);
    fill(&engine, &ts, 0, 20);
    engine.flush_and_checkpoint().unwrap();
    let fil = &engine.inner().fil;
    assert!(fil.stats.closes.load(Ordering::Relaxed) > 0);
    // Everything below the checkpoint must be on disk: redo before it is never replayed.
    let img = Arc::new(fs.crash_image(CrashMode::DropUnsynced));
    let e2 = sim_engine(&img);
    for i in 0..20 {
        let t = e2.table(&format!("test/t{i}")).unwrap();
        assert_eq!(
            count(&e2, &t),
            20,
            "t{i}: a closed file's writes were not durable"
        );
    }
    e2.shutdown().unwrap();

    fill(&engine, &ts, 1, 20);
    // The batch's first tablespace sync is an eviction's (its own come after its writes).
    fs.inject(Fault::new(FaultOp::Sync, 1, FaultKind::Eio).on_path(".ibd"));
    assert!(engine.flush_and_checkpoint().is_err());
    let mut trx = engine.begin();
    let refused = trx
        .insert(&ts[0], &[Value::Int(99_999), Value::from("late")])
        .and_then(|()| trx.commit());
    assert!(
        matches!(refused, Err(Error::PreviousIo)),
        "writes go on after a failed sync: {refused:?}"
    );
    engine.kill();
    fs.clear_faults();
    let img = Arc::new(fs.crash_image(CrashMode::DropUnsynced));
    let e3 = sim_engine(&img);
    for i in 0..20 {
        let t = e3.table(&format!("test/t{i}")).unwrap();
        assert_eq!(count(&e3, &t), 40, "t{i} after the failed sync");
    }
    e3.check().unwrap();
    e3.shutdown().unwrap();
}
