//! Concurrency: 12 threads at once on a small buffer pool with the background threads running:
//! 8 writers (each owning an id range and a model of it), 2 transfer threads moving money
//! between 20 accounts with locking reads in random order (lock waits and deadlocks happen),
//! and 2 readers scanning forwards, backwards and through secondary indexes while pages split
//! and merge under them. Afterwards every writer's rows match its model, money is conserved,
//! and check() is clean. Reproduce: see docs/testing.md.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, EngineConfig, Error, KeyBound, LockRead, TableDef, Value,
};
use innoxide_testkit::{apply_op, of_values, table_def, Model, Op, Workload, WorkloadCfg};

/// The raw clustered record of `id` and its version chain through the undo logs.
fn diagnose(engine: &Engine, t: &Arc<innoxide_engine::Table>, id: i64) -> String {
    use innoxide_engine::btree::{self, Bound, Intent};
    use innoxide_engine::mtr::Mtr;
    use innoxide_engine::page::{index_page as ip, record};
    use innoxide_engine::row::{encode_key, ClustRec};
    let inner = engine.inner();
    let key = encode_key(t, &[Value::Int(id)]).unwrap();
    let mut mtr = Mtr::new(inner);
    let path = btree::descend(&mut mtr, &t.clustered, &key, Bound::Upper, Intent::Read).unwrap();
    let (leaf, slot) = (path.leaf().page, path.leaf().slot);
    let p = mtr.page(leaf);
    let mut out = format!(
        "leaf page {}, slot {slot} of {}\n",
        mtr.id(leaf).page,
        ip::n_recs(p)
    );
    if slot > 0 && record::cmp_tuple_rec(&t.clustered.leaf, &key, ip::rec(p, slot - 1)).is_eq() {
        let mut cr = ClustRec::parse(t, ip::rec(p, slot - 1));
        mtr.commit().unwrap();
        for depth in 0..10 {
            let rp = innoxide_engine::trx::undo::RollPtr::decode(&cr.roll_ptr);
            out += &format!(
                "  v{depth}: deleted={} trx_id={} roll_ptr={rp:?} k={:?}\n",
                cr.deleted, cr.trx_id, cr.cols[1]
            );
            if rp.insert || rp.page == 0 {
                break;
            }
            match innoxide_engine::trx::undo::read_at(inner, rp.page, rp.offset) {
                Ok(u) if !u.old_rec.is_empty() => cr = ClustRec::parse(t, &u.old_rec),
                Ok(u) => {
                    out += &format!("  undo kind {} has no old image\n", u.kind);
                    break;
                }
                Err(e) => {
                    out += &format!("  undo unreadable (purged?): {e}\n");
                    break;
                }
            }
        }
    } else {
        out += "  no record\n";
    }
    out
}

const ACCOUNTS: i64 = 20;
const START_BALANCE: i64 = 1000;

fn cfg(dir: &std::path::Path) -> EngineConfig {
    let mut c = EngineConfig::new(dir);
    c.page_size = 4096;
    c.buffer_pool_size = 256 * 4096;
    c.buffer_pool_instances = 2;
    c.page_cleaners = 2;
    c.log_file_size = 1 << 20;
    c.log_buffer_size = 256 << 10;
    c.tunables.lock_wait_timeout = 1;
    c.tunables.flush_log_at_trx_commit = 2;
    c
}

#[test]
fn twelve_threads_reading_and_writing_end_with_a_clean_check() {
    let secs: u64 = std::env::var("CONC_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(cfg(dir.path())).unwrap());
    let t = engine.create_table(table_def("test/t")).unwrap();
    let bank = engine
        .create_table(TableDef::new(
            "test/bank",
            vec![
                ColumnDef::new("id", ColumnKind::BIGINT),
                ColumnDef::new("balance", ColumnKind::BIGINT),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut setup = engine.begin();
    for a in 0..ACCOUNTS {
        setup
            .insert(&bank, &[Value::Int(a), Value::Int(START_BALANCE)])
            .unwrap();
    }
    setup.commit().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let timeouts = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();

    // Writers: each owns ids [w*100_000, w*100_000 + 3000).
    for w in 0..8u64 {
        let (engine, t) = (engine.clone(), t.clone());
        handles.push(std::thread::spawn(move || -> (Model, u64) {
            let wc = WorkloadCfg {
                tables: vec!["test/t".into()],
                id_space: 3000,
                unique_prefix: format!("w{w}:"),
                blob_chance: 0.02,
                blob_max: 20_000,
                ..Default::default()
            };
            let mut wl = Workload::new(1000 + w, wc);
            let tables: BTreeMap<String, _> = [("test/t".to_string(), t)].into();
            let mut model = Model::default();
            let mut n = 0;
            while Instant::now() < deadline {
                let mut ops = wl.next_trx(&model);
                for op in ops.iter_mut() {
                    match op {
                        Op::Insert { id, .. } | Op::Update { id, .. } | Op::Delete { id, .. } => {
                            if *id < 100_000 {
                                *id += w as i64 * 100_000;
                            }
                        }
                    }
                }
                let rollback = wl.rollback();
                let mut trx = engine.begin();
                let mut m = model.clone();
                for op in &ops {
                    if let Err(e) = apply_op(&mut trx, &tables, &mut m, op) {
                        let id = match op {
                            Op::Insert { id, .. }
                            | Op::Update { id, .. }
                            | Op::Delete { id, .. } => *id,
                        };
                        panic!(
                            "writer {w} trx {} op {op:?}: {e}\n{}",
                            trx.id(),
                            diagnose(&engine, &tables["test/t"], id)
                        );
                    }
                }
                if rollback {
                    trx.rollback().unwrap();
                } else {
                    trx.commit().unwrap();
                    model = m;
                }
                n += 1;
            }
            (model, n)
        }));
    }
    // Transfers with locks in random order.
    let mut bank_handles = Vec::new();
    for b in 0..2u64 {
        let (engine, bank, timeouts) = (engine.clone(), bank.clone(), timeouts.clone());
        bank_handles.push(std::thread::spawn(move || -> u64 {
            let mut x = 0x9E37_79B9u64 + b;
            let mut done = 0;
            while Instant::now() < deadline {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let (from, to) = (
                    (x % ACCOUNTS as u64) as i64,
                    ((x >> 20) % ACCOUNTS as u64) as i64,
                );
                if from == to {
                    continue;
                }
                let amount = (x >> 40) as i64 % 50;
                let mut trx = engine.begin();
                let r = (|| -> Result<(), Error> {
                    // Locking reads (SELECT ... FOR UPDATE) of both rows, then the writes.
                    let bal = |trx: &mut innoxide_engine::Trx, a: i64| -> Result<i64, Error> {
                        Ok(trx
                            .get_locking(&bank, &[Value::Int(a)], LockRead::Exclusive)?
                            .expect("account")[1]
                            .as_i64()
                            .expect("int"))
                    };
                    let (fb, tb) = (bal(&mut trx, from)?, bal(&mut trx, to)?);
                    trx.update(&bank, &[Value::Int(from)], &[(1, Value::Int(fb - amount))])?;
                    trx.update(&bank, &[Value::Int(to)], &[(1, Value::Int(tb + amount))])?;
                    Ok(())
                })();
                match r {
                    Ok(()) => {
                        trx.commit().unwrap();
                        done += 1;
                    }
                    // A deadlock victim has been rolled back already; the Trx is fresh.
                    Err(Error::LockWaitTimeout | Error::Deadlock) => {
                        timeouts.fetch_add(1, Ordering::Relaxed);
                        trx.rollback().unwrap();
                    }
                    Err(e) => panic!("transfer: {e}"),
                }
            }
            done
        }));
    }
    // Readers.
    let mut readers = Vec::new();
    for r in 0..2u64 {
        let (engine, t, bank, stop) = (engine.clone(), t.clone(), bank.clone(), stop.clone());
        readers.push(std::thread::spawn(move || -> u64 {
            let mut scans = 0;
            while !stop.load(Ordering::Acquire) {
                let mut trx = engine.begin();
                let fwd = r == 0;
                let mut last: Option<i64> = None;
                for row in trx
                    .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, fwd)
                    .unwrap()
                {
                    let (id, _) = of_values(&row.unwrap());
                    if let Some(l) = last {
                        assert!(
                            if fwd { id > l } else { id < l },
                            "scan order broken: {l} then {id}"
                        );
                    }
                    last = Some(id);
                }
                let mut lastk: Option<i64> = None;
                for row in trx
                    .scan(
                        &t,
                        Some("k"),
                        KeyBound::Included(vec![Value::Int(-10)]),
                        KeyBound::Included(vec![Value::Int(10)]),
                        true,
                    )
                    .unwrap()
                {
                    let row = row.unwrap();
                    let k = row[1].as_i64().unwrap();
                    assert!((-10..=10).contains(&k), "index range returned k={k}");
                    if let Some(l) = lastk {
                        assert!(k >= l, "index scan order broken");
                    }
                    lastk = Some(k);
                }
                for a in 0..ACCOUNTS {
                    assert!(trx.get(&bank, &[Value::Int(a)]).unwrap().is_some());
                }
                trx.commit().unwrap();
                scans += 1;
            }
            scans
        }));
    }
    let mut models = Vec::new();
    let mut trxs = 0;
    for h in handles {
        let (m, n) = h.join().unwrap();
        models.push(m);
        trxs += n;
    }
    let transfers: u64 = bank_handles.into_iter().map(|h| h.join().unwrap()).sum();
    stop.store(true, Ordering::Release);
    let scans: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();

    // Every writer's rows are exactly its model.
    let mut trx = engine.begin();
    let mut all: BTreeMap<i64, _> = BTreeMap::new();
    for row in trx
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
    {
        let (id, r) = of_values(&row.unwrap());
        all.insert(id, r);
    }
    for (w, m) in models.iter().enumerate() {
        let lo = w as i64 * 100_000;
        let got: BTreeMap<i64, _> = all
            .range(lo..lo + 100_000)
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        let want = m.tables.get("test/t").cloned().unwrap_or_default();
        assert_eq!(got, want, "writer {w}'s rows differ from its model");
    }
    let total: i64 = (0..ACCOUNTS)
        .map(|a| {
            trx.get(&bank, &[Value::Int(a)]).unwrap().unwrap()[1]
                .as_i64()
                .unwrap()
        })
        .sum();
    assert_eq!(total, ACCOUNTS * START_BALANCE, "money was created or lost");
    trx.commit().unwrap();
    engine.purge_all().unwrap();
    let rep = engine.check().unwrap();
    eprintln!(
        "{trxs} writer transactions, {transfers} transfers ({} ended by a lock wait timeout or as a deadlock victim), {scans} reader passes, {} rows; {rep:?}",
        timeouts.load(Ordering::Relaxed),
        all.len()
    );
    assert!(trxs > 100 && transfers > 50 && scans > 2);
    Arc::try_unwrap(engine)
        .ok()
        .expect("threads joined")
        .shutdown()
        .unwrap();
}
