//! Wait accounting (sync_stats, issue #5 item 5): a reader blocked on a page latch that the
//! test holds is counted under the page's index with its wait time; committers hammering the
//! log from several threads make the log mutex / log flush counts rise; row lock waits are
//! counted; every row's times are consistent (min <= avg <= max <= sum).

use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::buffer_pool::LatchMode;
use innoxide_engine::sync_stats::{self, Kind, WaitRow};
use innoxide_engine::types::PageId;
use innoxide_engine::{ColumnDef, ColumnKind, Engine, TableDef, Value};

fn open(dir: &std::path::Path) -> (Engine, Arc<innoxide_engine::Table>) {
    let engine = Engine::open(innoxide_testkit::small_config(dir, 1)).unwrap();
    let t = engine
        .create_table(TableDef::new(
            "test/hot",
            vec![
                ColumnDef::new("id", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::INT),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut trx = engine.begin();
    for id in 0..16 {
        trx.insert(&t, &[Value::Int(id), Value::Int(0)]).unwrap();
    }
    trx.commit().unwrap();
    (engine, t)
}

fn row<'a>(rows: &'a [WaitRow], name: &str) -> &'a WaitRow {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows:#?}"))
}

fn consistent(rows: &[WaitRow]) {
    for r in rows {
        let w = &r.waits;
        if w.count == 0 {
            assert_eq!((w.sum_ns, w.min_ns, w.max_ns), (0, 0, 0), "{r:?}");
        } else {
            assert!(w.min_ns <= w.avg_ns() && w.avg_ns() <= w.max_ns, "{r:?}");
            assert!(w.sum_ns >= w.max_ns, "{r:?}");
        }
    }
}

#[test]
fn a_blocked_page_latch_counts_under_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, t) = open(dir.path());
    let inner = engine.inner().clone();
    let name = format!("page latch index test/hot.{}", t.clustered.name);
    let before = sync_stats::wait_rows(&inner)
        .iter()
        .find(|r| r.name == name)
        .map_or(0, |r| r.waits.count);

    // The root is the only leaf: hold it X while a reader comes for it.
    let root = PageId::new(t.clustered.space, t.clustered.root);
    let f = inner.fix(root, LatchMode::X).unwrap();
    let reader = std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let mut trx = engine.begin();
            let r = trx.get(&t, &[Value::Int(3)]).unwrap();
            trx.commit().unwrap();
            r
        });
        std::thread::sleep(Duration::from_millis(60));
        inner.bp.unlatch(f, LatchMode::X);
        inner.bp.unpin(f);
        h.join().unwrap()
    });
    assert_eq!(reader, Some(vec![Value::Int(3), Value::Int(0)]));

    let rows = sync_stats::wait_rows(&inner);
    consistent(&rows);
    let r = row(&rows, &name);
    assert_eq!(r.kind, Kind::PageLatch);
    assert!(r.waits.count > before, "{r:?}");
    assert!(
        r.waits.max_ns >= 40_000_000,
        "the reader waited about 60 ms: {r:?}"
    );
    assert!(r
        .event
        .starts_with("wait/synch/rwlock/innodb/page_latch/test/hot."));
    engine.shutdown().unwrap();
}

#[test]
fn hammering_the_log_and_hot_rows_makes_counts_rise() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, t) = open(dir.path());
    let inner = engine.inner().clone();
    let log_waits = |rows: &[WaitRow]| {
        row(rows, "log_sys_mutex").waits.count + row(rows, "log_flush").waits.count
    };
    let before = sync_stats::wait_rows(&inner);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut round = 0i64;
    loop {
        // 8 threads: each commits small transactions (the log), all on 16 rows of one page
        // (page latches, row locks).
        std::thread::scope(|sc| {
            for th in 0..8i64 {
                let (engine, t) = (&engine, &t);
                sc.spawn(move || {
                    for i in 0..200i64 {
                        let mut trx = engine.begin();
                        let id = (th * 7 + i + round) % 16;
                        trx.update(t, &[Value::Int(id)], &[(1, Value::Int(i))])
                            .unwrap();
                        trx.commit().unwrap();
                    }
                });
            }
        });
        round += 1;
        let rows = sync_stats::wait_rows(&inner);
        consistent(&rows);
        let latch_waits: u64 = rows
            .iter()
            .filter(|r| r.kind == Kind::PageLatch)
            .map(|r| r.waits.count)
            .sum();
        let rose = log_waits(&rows) > log_waits(&before)
            && row(&rows, "row_lock_wait").waits.count > row(&before, "row_lock_wait").waits.count
            && latch_waits > 0;
        if rose {
            let total = sync_stats::total(&rows);
            assert!(total.sum_ns >= total.max_ns && total.count > 0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "waits did not rise after {round} rounds: {rows:#?}"
        );
    }
    engine.shutdown().unwrap();
}
