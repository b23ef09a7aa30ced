//! innodb_thread_concurrency and innodb_concurrency_tickets through the engine API: at most N
//! threads inside at once, and a thread waiting for a row lock gives its slot back so others
//! (including the lock holder) can work. Reproduce: `cargo test -p innoxide-engine --test
//! admission`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{ColumnDef, ColumnKind, Engine, TableDef, Value};

fn open(dir: &std::path::Path, limit: u64) -> Engine {
    let mut c = innoxide_testkit::small_config(dir, 2);
    c.tunables.thread_concurrency = limit;
    c.tunables.concurrency_tickets = 10;
    Engine::open(c).unwrap()
}

#[test]
fn a_lock_waiter_leaves_the_engine_and_at_most_n_are_inside() {
    let dir = tempfile::tempdir().unwrap();
    let e = Arc::new(open(dir.path(), 1));
    let t = e
        .create_table(TableDef::new(
            "test/t",
            vec![
                ColumnDef::new("id", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::INT),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut w = e.begin();
    for id in 0..100 {
        w.insert(&t, &[Value::Int(id), Value::Int(0)]).unwrap();
    }
    w.commit().unwrap();

    // T1 holds row 0's lock; T2 waits for it; with one slot, T3 must still get in.
    let mut t1 = e.begin();
    assert!(t1
        .update(&t, &[Value::Int(0)], &[(1, Value::Int(1))])
        .unwrap());
    let (e2, tt) = (e.clone(), t.clone());
    let waiter = std::thread::spawn(move || {
        let mut t2 = e2.begin();
        t2.update(&tt, &[Value::Int(0)], &[(1, Value::Int(2))])
            .unwrap();
        t2.commit().unwrap();
    });
    let locks = &e.inner().trx.locks.stats;
    let deadline = Instant::now() + Duration::from_secs(5);
    while locks.current_waits.load(Ordering::Acquire) == 0 {
        assert!(Instant::now() < deadline, "T2 never waited");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut t3 = e.begin();
    assert_eq!(
        t3.get(&t, &[Value::Int(5)]).unwrap().unwrap()[1],
        Value::Int(0)
    );
    t3.commit().unwrap();
    assert_eq!(e.inner().trx.admission.inside(), 0);
    t1.commit().unwrap();
    waiter.join().unwrap();

    // Eight threads doing reads and writes: never more than one inside.
    let mut hs = Vec::new();
    for th in 0..8i64 {
        let (e, t) = (e.clone(), t.clone());
        hs.push(std::thread::spawn(move || {
            for i in 0..200i64 {
                let mut x = e.begin();
                let id = (th * 7 + i) % 100;
                x.get(&t, &[Value::Int(id)]).unwrap();
                x.update(&t, &[Value::Int(id)], &[(1, Value::Int(i))])
                    .unwrap();
                x.commit().unwrap();
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    let adm = &e.inner().trx.admission.stats;
    assert_eq!(adm.max_inside.load(Ordering::Relaxed), 1);
    assert!(adm.waits.load(Ordering::Relaxed) > 0);
    assert_eq!(e.inner().trx.admission.inside(), 0);
    eprintln!(
        "admission: {} waits for a slot, at most {} inside",
        adm.waits.load(Ordering::Relaxed),
        adm.max_inside.load(Ordering::Relaxed)
    );
    Arc::try_unwrap(e).ok().unwrap().shutdown().unwrap();
}
