//! Model-based test: random inserts, updates, deletes and rollbacks on two tables with
//! secondary indexes, checked against an in-memory model through every access path, with the
//! data at least 20 times the buffer pool (so pages are constantly evicted, flushed and read
//! back). Background threads run as in production. Reproduce: see docs/testing.md.

use innoxide_engine::{Engine, EngineConfig};
use innoxide_testkit::{create_tables, open_tables, run_trx, verify, Model, Workload, WorkloadCfg};

fn cfg(dir: &std::path::Path) -> EngineConfig {
    let mut c = EngineConfig::new(dir);
    c.page_size = 4096;
    c.buffer_pool_size = 64 * 4096; // the minimum: 64 pages
    c.log_file_size = 512 << 10;
    c.log_buffer_size = 128 << 10;
    c.tunables.flush_log_at_trx_commit = 2;
    c
}

fn data_bytes(dir: &std::path::Path) -> u64 {
    let mut n = 0;
    for d in std::fs::read_dir(dir).unwrap() {
        let d = d.unwrap().path();
        if d.is_dir() {
            for f in std::fs::read_dir(&d).unwrap() {
                n += f.unwrap().metadata().unwrap().len();
            }
        }
    }
    n
}

#[test]
fn random_operations_match_the_model_with_data_20x_the_pool() {
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122);
    let trxs: usize = std::env::var("TRXS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16_000);
    let dir = tempfile::tempdir().unwrap();
    let wcfg = WorkloadCfg {
        id_space: 40_000,
        max_ops_per_trx: 6,
        ..Default::default()
    };
    let mut wl = Workload::new(seed, wcfg.clone());
    let engine = Engine::open(cfg(dir.path())).unwrap();
    let tables = create_tables(&engine, &wcfg).unwrap();
    let mut model = Model::default();
    for i in 0..trxs {
        let ops = wl.next_trx(&model);
        let rb = wl.rollback();
        model = run_trx(&engine, &tables, &model, &ops, rb)
            .unwrap_or_else(|e| panic!("seed {seed} trx {i}: {e}"));
        if i % 4000 == 3999 {
            verify(&engine, &model, &wcfg)
                .unwrap_or_else(|e| panic!("seed {seed} after trx {i}: {e}"));
        }
    }
    verify(&engine, &model, &wcfg).unwrap();
    engine.purge_all().unwrap();
    let rep = engine.check().unwrap();
    let pool = cfg(dir.path()).buffer_pool_size;
    let data = data_bytes(dir.path());
    eprintln!(
        "seed {seed}: {trxs} transactions, {} rows, data {data} bytes = {:.1}x the pool; {rep:?}",
        rep.records,
        data as f64 / pool as f64
    );
    assert!(
        data >= 20 * pool,
        "data {data} is less than 20x the pool {pool}"
    );
    engine.shutdown().unwrap();
    // Everything survives a clean restart.
    let engine = Engine::open(cfg(dir.path())).unwrap();
    let _ = open_tables(&engine, &wcfg).unwrap();
    verify(&engine, &model, &wcfg).unwrap();
    engine.check().unwrap();
    engine.shutdown().unwrap();
}
