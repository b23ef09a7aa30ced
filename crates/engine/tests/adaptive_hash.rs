//! The adaptive hash index (innodb_adaptive_hash_index, btree::adaptive_hash): point searches
//! that take its guesses give the answers of searches from the root while pages split, merge,
//! are freed and reused, tables are dropped and created again and the index is switched off
//! and on; OFF stops its use at once and frees its entries. Reproduce: see docs/testing.md.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, EngineConfig, Error, IndexSpec, KeyBound, LockRead, Table,
    TableDef, Value,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `u` is `id + U_OFF`: a unique secondary key every row has.
const U_OFF: i64 = 1_000_000_000;

/// `name (id BIGINT PRIMARY KEY, u BIGINT, pad VARCHAR(300), UNIQUE KEY uk (u))`.
fn def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            ColumnDef::new("id", ColumnKind::BIGINT),
            ColumnDef::new("u", ColumnKind::BIGINT),
            ColumnDef::new("pad", ColumnKind::Var { max_len: 300 }),
        ],
        Some(vec![0]),
    )
    .index("uk", vec![1], true)
}

/// Version `ver` of row `id`'s pad: names both, and its length varies (so updates move rows
/// and split pages).
fn pad_of(id: i64, ver: u64) -> Vec<u8> {
    let mut p = format!("{id}:{ver}:").into_bytes();
    let len = 40 + ((id as u64).wrapping_mul(7).wrapping_add(ver * 13) % 200) as usize;
    p.resize(len, b'x');
    p
}

fn row(id: i64, ver: u64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(id + U_OFF),
        Value::Bytes(pad_of(id, ver)),
    ]
}

/// The version of a row read for `id`; panics if the row is not a whole row of `id`.
fn version_of(r: &[Value], id: i64, what: &str) -> u64 {
    assert_eq!(
        r[0].as_i64(),
        Some(id),
        "{what}: the row of another id: {r:?}"
    );
    assert_eq!(r[1].as_i64(), Some(id + U_OFF), "{what}: {r:?}");
    let pad = r[2].as_bytes().expect("pad");
    let text = String::from_utf8_lossy(pad);
    let ver: u64 = text
        .split(':')
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{what}: pad {text}"));
    assert_eq!(pad, pad_of(id, ver).as_slice(), "{what}: torn row {r:?}");
    ver
}

fn cfg(dir: &std::path::Path, pool_pages: u64, background: bool) -> EngineConfig {
    let mut c = EngineConfig::new(dir);
    c.page_size = 4096;
    c.buffer_pool_size = pool_pages * 4096;
    c.log_file_size = 8 << 20;
    c.log_buffer_size = 256 << 10;
    c.background_threads = background;
    c.tunables.flush_log_at_trx_commit = 2;
    c.tunables.lock_wait_timeout = 2;
    c
}

fn stats(e: &Engine) -> (u64, u64) {
    let s = &e.inner().ahi.stats;
    (s.searches.get(), s.searches_btree.get())
}

fn get(e: &Engine, t: &Arc<Table>, id: i64) -> Option<Vec<Value>> {
    let mut trx = e.begin();
    let r = trx.get(t, &[Value::Int(id)]).unwrap();
    trx.commit().unwrap();
    r
}

/// Looks up every id of `0..end` and compares with `model` (id -> version).
fn check_all(e: &Engine, t: &Arc<Table>, model: &BTreeMap<i64, u64>, end: i64, what: &str) {
    for id in 0..end {
        match (get(e, t, id), model.get(&id)) {
            (None, None) => {}
            (Some(r), Some(&v)) => assert_eq!(version_of(&r, id, what), v, "{what}: id {id}"),
            (got, want) => panic!("{what}: id {id}: got {got:?}, model {want:?}"),
        }
    }
}

/// The row whose unique key is `u`, through index uk.
fn by_uk(e: &Engine, t: &Arc<Table>, u: i64) -> Vec<Vec<Value>> {
    let mut trx = e.begin();
    let k = vec![Value::Int(u)];
    let rows = trx
        .scan(
            t,
            Some("uk"),
            KeyBound::Included(k.clone()),
            KeyBound::Included(k),
            true,
        )
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    trx.commit().unwrap();
    rows
}

/// Inserts, splits, merges, frees and reuses pages under a hashed index, checking every key
/// after each step; the hash keeps answering (hash searches grow in every lookup pass).
#[test]
fn stale_entries_after_splits_merges_and_page_reuse_are_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(cfg(dir.path(), 2048, false)).unwrap();
    let t = e.create_table(def("test/a")).unwrap();
    let mut model = BTreeMap::new();
    let fill = |ids: &mut dyn Iterator<Item = i64>, model: &mut BTreeMap<i64, u64>| {
        let mut trx = e.begin();
        for id in ids {
            trx.insert(&t, &row(id, 1)).unwrap();
            model.insert(id, 1);
        }
        trx.commit().unwrap();
    };
    const N: i64 = 8000;
    fill(&mut (0..N).step_by(2), &mut model);
    // Pass 1 hashes the leaves (each needs n_recs / 16 landings), later passes use them for
    // the keys present (absent keys have no entry: they descend).
    check_all(&e, &t, &model, N, "first pass");
    let (h0, _) = stats(&e);
    check_all(&e, &t, &model, N, "hashed");
    let (h1, b1) = stats(&e);
    assert!(
        h1 - h0 > model.len() as u64 * 9 / 10,
        "hash searches {} for {} keys present",
        h1 - h0,
        model.len()
    );
    assert!(e.inner().ahi.stats.pages_added.get() > 50);

    // Every leaf splits: the odd ids go between the even ones.
    fill(&mut (1..N).step_by(2), &mut model);
    check_all(&e, &t, &model, N, "after splits");
    check_all(&e, &t, &model, N, "after splits, hashed again");
    let (h2, b2) = stats(&e);
    assert!(h2 - h1 > N as u64 / 2 && b2 > b1, "{h1} {h2} {b1} {b2}");

    // Updates through the hash (ModifyLeaf guesses), some growing rows past their leaf.
    let mut trx = e.begin();
    for id in (0..N).step_by(3) {
        assert!(trx
            .update(&t, &[Value::Int(id)], &[(2, Value::Bytes(pad_of(id, 2)))])
            .unwrap());
        model.insert(id, 2);
    }
    trx.commit().unwrap();
    check_all(&e, &t, &model, N, "after updates");

    // Nine rows in ten go; purge merges the leaves and frees pages.
    let mut trx = e.begin();
    for id in 0..N {
        if id % 10 != 0 {
            assert!(trx.delete(&t, &[Value::Int(id)]).unwrap());
            model.remove(&id);
        }
    }
    trx.commit().unwrap();
    e.purge_all().unwrap();
    check_all(&e, &t, &model, N, "after merges");

    // New keys reuse the freed pages of the same index for another key range.
    fill(&mut (N..N + 4000), &mut model);
    check_all(&e, &t, &model, N + 4000, "after reuse");
    check_all(&e, &t, &model, N + 4000, "after reuse, hashed again");

    // Locking reads and unique lookups agree.
    let mut trx = e.begin();
    for id in (0..N + 4000).step_by(7) {
        let r = trx
            .get_locking(&t, &[Value::Int(id)], LockRead::Shared)
            .unwrap();
        assert_eq!(
            r.map(|r| version_of(&r, id, "locking")),
            model.get(&id).copied()
        );
    }
    trx.commit().unwrap();
    for _ in 0..3 {
        for id in (0..N + 4000).step_by(5) {
            let rows = by_uk(&e, &t, id + U_OFF);
            let got: Vec<u64> = rows.iter().map(|r| version_of(r, id, "uk")).collect();
            assert_eq!(got, model.get(&id).copied().into_iter().collect::<Vec<_>>());
        }
    }
    let (h3, _) = stats(&e);
    assert!(h3 > h2);
    e.check().unwrap();
    e.inner().ahi.check_counts().unwrap();
    e.shutdown().unwrap();
}

/// SET GLOBAL innodb_adaptive_hash_index=OFF: no more hash searches from the next search on,
/// every entry and block freed; ON builds it again.
#[test]
fn off_stops_hash_searches_at_once_and_on_builds_again() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(cfg(dir.path(), 1024, false)).unwrap();
    let t = e.create_table(def("test/o")).unwrap();
    let mut trx = e.begin();
    let model: BTreeMap<i64, u64> = (0..2000).map(|id| (id, 1)).collect();
    for id in 0..2000 {
        trx.insert(&t, &row(id, 1)).unwrap();
    }
    trx.commit().unwrap();
    let ahi = &e.inner().ahi;
    check_all(&e, &t, &model, 2000, "on");
    check_all(&e, &t, &model, 2000, "on");
    let (h0, _) = stats(&e);
    assert!(h0 > 1000 && ahi.entries() > 1000, "{h0} {}", ahi.entries());
    assert!(ahi.part_sizes().iter().any(|p| p.buffers > 0));

    e.set_adaptive_hash_index(false);
    assert!(!e.tunables().adaptive_hash_index.load(Ordering::Relaxed));
    assert_eq!(ahi.entries(), 0);
    assert!(ahi.part_sizes().iter().all(|p| p.buffers == 0));
    let (h1, b1) = stats(&e);
    check_all(&e, &t, &model, 2000, "off");
    let (h2, b2) = stats(&e);
    assert_eq!(h2, h1, "hash searches while OFF");
    assert!(b2 - b1 >= 2000);
    assert_eq!(ahi.entries(), 0);

    e.set_adaptive_hash_index(true);
    check_all(&e, &t, &model, 2000, "on again");
    check_all(&e, &t, &model, 2000, "on again");
    let (h3, _) = stats(&e);
    assert!(h3 - h2 > 1000, "{}", h3 - h2);
    ahi.check_counts().unwrap();

    // DROP TABLE sweeps the table's entries out.
    let entries = ahi.entries();
    assert!(entries > 1000);
    e.drop_table("test/o").unwrap();
    assert_eq!(ahi.entries(), 0);
    ahi.check_counts().unwrap();
    e.shutdown().unwrap();
}

/// Shared by the threads of the concurrency test.
struct Shared {
    engine: Arc<Engine>,
    t: Arc<Table>,
    stop: AtomicBool,
    /// Rows read through a guess-or-descent, checked.
    reads: AtomicU64,
}

const STABLE: i64 = 3000;
const WRITERS: i64 = 3;

/// A writer owns the ids `4 * i + 1` and `4 * i + 2` with `i % WRITERS == w`: inserts,
/// version-bumping updates, deletes (purge merges), each committed alone; reads its own rows
/// back after each commit.
fn writer(s: &Shared, w: i64) -> (BTreeMap<i64, u64>, u64) {
    let mut rng = StdRng::seed_from_u64(77 + w as u64);
    let mut model: BTreeMap<i64, u64> = BTreeMap::new();
    let mut aborted = 0;
    while !s.stop.load(Ordering::Acquire) {
        let i = rng.random_range(0..STABLE / WRITERS) * WRITERS + w;
        let id = 4 * i + rng.random_range(1..=2);
        let mut trx = s.engine.begin();
        let cur = model.get(&id).copied();
        let next = match (cur, rng.random_range(0..10)) {
            (None, _) => Some(1),
            (Some(_), 0..=3) => None,
            (Some(v), _) => Some(v + 1),
        };
        let r = match (cur, next) {
            (None, Some(v)) => trx.insert(&s.t, &row(id, v)),
            (Some(_), None) => trx.delete(&s.t, &[Value::Int(id)]).map(|f| assert!(f)),
            (Some(_), Some(v)) => trx
                .update(&s.t, &[Value::Int(id)], &[(2, Value::Bytes(pad_of(id, v)))])
                .map(|f| assert!(f)),
            (None, None) => unreachable!(),
        };
        match r {
            Ok(()) => {
                trx.commit().unwrap();
                match next {
                    Some(v) => model.insert(id, v),
                    None => model.remove(&id),
                };
            }
            // Unique checks may wait on a neighbour's gap; a victim is rolled back already.
            Err(Error::LockWaitTimeout | Error::Deadlock) => {
                trx.rollback().unwrap();
                aborted += 1;
            }
            Err(e) => panic!("writer {w}, id {id}: {e}"),
        }
        let got = get(&s.engine, &s.t, id).map(|r| version_of(&r, id, "writer"));
        assert_eq!(
            got,
            model.get(&id).copied(),
            "writer {w} reads back id {id}"
        );
    }
    (model, aborted)
}

/// Readers: stable ids (4 i) must read their one version, absent ids (4 i + 3) nothing, a
/// writer's ids whole rows of that id; by primary key, locking, and through uk.
fn reader(s: &Shared, r: u64) {
    let mut rng = StdRng::seed_from_u64(500 + r);
    while !s.stop.load(Ordering::Acquire) {
        let i = rng.random_range(0..STABLE);
        let mut trx = s.engine.begin();
        for _ in 0..20 {
            let i = (i + rng.random_range(0..50)) % STABLE;
            let stable = trx.get(&s.t, &[Value::Int(4 * i)]).unwrap();
            assert_eq!(
                stable.map(|r| version_of(&r, 4 * i, "stable")),
                Some(0),
                "stable id {}",
                4 * i
            );
            assert!(trx.get(&s.t, &[Value::Int(4 * i + 3)]).unwrap().is_none());
            let id = 4 * i + rng.random_range(1..=2);
            if let Some(row) = trx.get(&s.t, &[Value::Int(id)]).unwrap() {
                version_of(&row, id, "churned");
            }
        }
        let locked = trx
            .get_locking(&s.t, &[Value::Int(4 * i)], LockRead::Shared)
            .unwrap();
        assert_eq!(locked.map(|r| version_of(&r, 4 * i, "locking")), Some(0));
        trx.commit().unwrap();
        let rows = by_uk(&s.engine, &s.t, 4 * i + U_OFF);
        assert_eq!(rows.len(), 1, "uk of stable id {}", 4 * i);
        version_of(&rows[0], 4 * i, "uk");
        s.reads.fetch_add(63, Ordering::Relaxed);
    }
}

/// A table created, hashed, checked and dropped again and again under the same name (each
/// generation's rows name it), with its unique index dropped and created between lookups.
fn ddl_cycles(s: &Shared) -> u64 {
    let mut g = 0;
    while !s.stop.load(Ordering::Acquire) {
        g += 1;
        let d = s.engine.create_table(def("test/d")).unwrap();
        let mut trx = s.engine.begin();
        for id in 0..300 {
            trx.insert(&d, &row(id, g)).unwrap();
        }
        trx.commit().unwrap();
        for pass in 0..4 {
            for id in 0..300 {
                let r = get(&s.engine, &d, id).expect("generation row");
                assert_eq!(version_of(&r, id, "ddl"), g, "generation {g} pass {pass}");
            }
        }
        for _ in 0..2 {
            for id in (0..300).step_by(3) {
                let rows = by_uk(&s.engine, &d, id + U_OFF);
                assert_eq!(rows.len(), 1);
                assert_eq!(version_of(&rows[0], id, "ddl uk"), g);
            }
        }
        s.engine.drop_index("test/d", "uk").unwrap();
        s.engine
            .create_index(
                "test/d",
                IndexSpec {
                    name: "uk".into(),
                    columns: vec![1],
                    unique: true,
                },
            )
            .unwrap();
        let d = s.engine.table("test/d").unwrap();
        for id in (0..300).step_by(3) {
            let rows = by_uk(&s.engine, &d, id + U_OFF);
            assert_eq!(version_of(&rows[0], id, "ddl uk rebuilt"), g);
        }
        s.engine.drop_table("test/d").unwrap();
    }
    g
}

/// Point lookups (consistent, locking, through a unique index) race with inserts that split
/// leaves, deletes whose purge merges and frees them, DROP/CREATE TABLE and INDEX, and the
/// switch going OFF and ON, on a pool small enough that leaves are evicted: every answer
/// matches the model, the tree checks clean, and the hash was really used.
#[test]
fn concurrent_lookups_with_splits_merges_ddl_and_switching_match_the_model() {
    let secs: u64 = std::env::var("AHI_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(cfg(dir.path(), 640, true)).unwrap());
    let t = engine.create_table(def("test/t")).unwrap();
    let mut trx = engine.begin();
    for i in 0..STABLE {
        trx.insert(&t, &row(4 * i, 0)).unwrap();
    }
    trx.commit().unwrap();
    let s = Arc::new(Shared {
        engine: engine.clone(),
        t: t.clone(),
        stop: AtomicBool::new(false),
        reads: AtomicU64::new(0),
    });
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let s = s.clone();
            std::thread::spawn(move || writer(&s, w))
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let s = s.clone();
            std::thread::spawn(move || reader(&s, r))
        })
        .collect();
    let ddl = {
        let s = s.clone();
        std::thread::spawn(move || ddl_cycles(&s))
    };
    // The switch: OFF for a moment now and then.
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut switches = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(700));
        engine.set_adaptive_hash_index(false);
        assert_eq!(engine.inner().ahi.entries(), 0);
        std::thread::sleep(Duration::from_millis(100));
        engine.set_adaptive_hash_index(true);
        switches += 1;
    }
    s.stop.store(true, Ordering::Release);
    let mut models = Vec::new();
    let mut aborted = 0;
    for h in writers {
        let (m, a) = h.join().unwrap();
        models.push(m);
        aborted += a;
    }
    for h in readers {
        h.join().unwrap();
    }
    let generations = ddl.join().unwrap();

    // Every row is the model's, read through the hash and by a scan.
    let mut model: BTreeMap<i64, u64> = (0..STABLE).map(|i| (4 * i, 0)).collect();
    for m in &models {
        model.extend(m.iter());
    }
    for _ in 0..2 {
        check_all(&engine, &t, &model, 4 * STABLE, "after the race");
    }
    let mut trx = engine.begin();
    let scanned: BTreeMap<i64, u64> = trx
        .scan(&t, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let id = r[0].as_i64().unwrap();
            (id, version_of(&r, id, "scan"))
        })
        .collect();
    trx.commit().unwrap();
    assert_eq!(scanned, model);
    engine.purge_all().unwrap();
    let rep = engine.check().unwrap();
    let st = &engine.inner().ahi.stats;
    eprintln!(
        "{} rows read, {generations} DDL generations, {switches} switches, {aborted} writes \
         aborted; hash searches {}, btree searches {}, pages added {}, rows added {}, removed \
         {}, updated {}; {rep:?}",
        s.reads.load(Ordering::Relaxed),
        st.searches.get(),
        st.searches_btree.get(),
        st.pages_added.get(),
        st.rows_added.get(),
        st.rows_removed.get(),
        st.rows_updated.get()
    );
    assert!(generations >= 1 && switches >= 1);
    assert!(st.searches.get() > 1000, "the hash was hardly used");
    assert!(st.pages_added.get() > 10 && st.rows_removed.get() > 0);
    engine.inner().ahi.check_counts().unwrap();
    drop(s);
    Arc::try_unwrap(engine)
        .ok()
        .expect("threads joined")
        .shutdown()
        .unwrap();
}
