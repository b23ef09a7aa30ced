//! Adaptive flushing in steady state: two writers run for several seconds on data larger than
//! the buffer pool while a sampler records the checkpoint age. The page cleaners must keep the
//! age below the async point (so user threads never need a synchronous flush), and user threads
//! must rarely flush pages themselves to find a free frame.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::flush::Caller;
use innoxide_engine::{ColumnDef, ColumnKind, Engine, EngineConfig, TableDef, Value};

#[test]
fn page_cleaners_keep_the_checkpoint_age_below_the_async_point() {
    let secs: u64 = std::env::var("FLUSH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let mut c = EngineConfig::new(dir.path());
    c.page_size = 4096;
    c.buffer_pool_size = 1024 * 4096;
    c.log_file_size = 2 << 20;
    c.tunables.flush_log_at_trx_commit = 2;
    c.tunables.io_capacity = 2000;
    c.tunables.io_capacity_max = 20000;
    let engine = Arc::new(Engine::open(c).unwrap());
    let t = engine
        .create_table(TableDef::new(
            "test/f",
            vec![
                ColumnDef::new("id", ColumnKind::BIGINT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 200 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..2i64 {
        let (engine, t, stop) = (engine.clone(), t.clone(), stop.clone());
        writers.push(std::thread::spawn(move || {
            let mut x: u64 = 12345 + w as u64;
            let mut n = 0u64;
            while !stop.load(Ordering::Acquire) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let id = (x % 60_000) as i64 * 2 + w;
                let v = Value::Bytes(vec![(x >> 8) as u8; 100 + (x % 100) as usize]);
                let mut trx = engine.begin();
                if !trx
                    .update(&t, &[Value::Int(id)], &[(1, v.clone())])
                    .unwrap()
                {
                    trx.insert(&t, &[Value::Int(id), v]).unwrap();
                }
                trx.commit().unwrap();
                n += 1;
            }
            n
        }));
    }
    let log = &engine.inner().log;
    let m = log.margins;
    let start = Instant::now();
    let warmup = Duration::from_secs(secs / 3);
    let (mut samples, mut above_async, mut max_age) = (0u64, 0u64, 0u64);
    let sync_calls =
        || engine.inner().flush.stats.calls[Caller::Sync as usize].load(Ordering::Relaxed);
    let mut sync0 = None;
    while start.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(20));
        if start.elapsed() < warmup {
            continue;
        }
        sync0.get_or_insert_with(sync_calls);
        let age = log.checkpoint_age();
        samples += 1;
        max_age = max_age.max(age);
        if age > m.max_modified_age_async {
            above_async += 1;
        }
    }
    stop.store(true, Ordering::Release);
    let writes: u64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    let st = &engine.inner().flush.stats;
    let sync_calls = sync_calls() - sync0.unwrap_or(0);
    let flushed = st.pages_flushed.load(Ordering::Relaxed);
    let user = engine
        .inner()
        .stats
        .user_single_page_flushes
        .load(Ordering::Relaxed);
    let by_caller: Vec<String> = Caller::ALL
        .iter()
        .map(|c| {
            format!(
                "{}: {} pages",
                c.name(),
                st.pages[*c as usize].load(Ordering::Relaxed)
            )
        })
        .collect();
    eprintln!(
        "{writes} transactions; checkpoint age max {max_age} = {:.0}% of the async point {} (capacity {}); \
         {above_async}/{samples} samples above it; {sync_calls} synchronous flushes; {flushed} pages flushed, \
         {user} by user threads; {}",
        max_age as f64 * 100.0 / m.max_modified_age_async as f64,
        m.max_modified_age_async,
        m.capacity,
        by_caller.join(", ")
    );
    assert!(writes > 1000);
    assert!(
        max_age < m.capacity,
        "the checkpoint age reached the log capacity"
    );
    assert!(
        above_async * 100 <= samples,
        "the checkpoint age was above the async point in more than 1% of samples"
    );
    assert!(
        user * 20 <= flushed.max(1),
        "user threads did more than 5% of the flushing ({user} of {flushed})"
    );
    engine.purge_all().unwrap();
    engine.check().unwrap();
}
