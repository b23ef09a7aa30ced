//! DROP TABLE while other tables are written on a small buffer pool: the dropped table's pages
//! leave the pool, and no other table loses a change. `BufferPool::evict_space` listed the
//! dropped space's frames, then discarded each one's unflushed changes; a frame evicted and
//! given a page of another table in between lost that page's changes (a leaf read back as a
//! zeroed page, rows gone). Reproduce: see docs/testing.md.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{ColumnDef, ColumnKind, Engine, EngineConfig, KeyBound, TableDef, Value};

fn def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            ColumnDef::new("id", ColumnKind::BIGINT),
            ColumnDef::new("pad", ColumnKind::Var { max_len: 400 }),
        ],
        Some(vec![0]),
    )
}

fn pad(id: i64, v: i64) -> Value {
    let mut p = format!("{id}:{v}:").into_bytes();
    p.resize(300, b'p');
    Value::Bytes(p)
}

#[test]
fn dropping_a_table_keeps_every_change_of_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = EngineConfig::new(dir.path());
    c.page_size = 4096;
    c.buffer_pool_size = 128 * 4096;
    c.log_file_size = 4 << 20;
    c.log_buffer_size = 256 << 10;
    c.tunables.flush_log_at_trx_commit = 2;
    let engine = Arc::new(Engine::open(c).unwrap());
    let t = engine.create_table(def("test/t")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let ddl = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Acquire) {
                let d = engine.create_table(def("test/d")).unwrap();
                let mut trx = engine.begin();
                for id in 0..200 {
                    trx.insert(&d, &[Value::Int(id), pad(id, 0)]).unwrap();
                }
                trx.commit().unwrap();
                engine.drop_table("test/d").unwrap();
                n += 1;
            }
            n
        })
    };
    // Inserts and updates spread over more pages than the pool holds.
    let mut model = BTreeMap::new();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let id = (x % 6000) as i64;
        let v = model.get(&id).map_or(0, |v| v + 1);
        let mut trx = engine.begin();
        if v == 0 {
            trx.insert(&t, &[Value::Int(id), pad(id, v)]).unwrap();
        } else {
            assert!(trx
                .update(&t, &[Value::Int(id)], &[(1, pad(id, v))])
                .unwrap());
        }
        trx.commit().unwrap();
        model.insert(id, v);
    }
    stop.store(true, Ordering::Release);
    let drops = ddl.join().unwrap();
    let mut trx = engine.begin();
    let got: BTreeMap<i64, Value> = trx
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r[0].as_i64().unwrap(), r[1].clone())
        })
        .collect();
    trx.commit().unwrap();
    let want: BTreeMap<i64, Value> = model.iter().map(|(&id, &v)| (id, pad(id, v))).collect();
    assert_eq!(got.len(), want.len(), "after {drops} drops");
    assert!(got == want, "rows differ after {drops} drops");
    engine.check().unwrap();
    eprintln!("{} rows kept through {drops} drops", got.len());
    assert!(drops > 5);
}
