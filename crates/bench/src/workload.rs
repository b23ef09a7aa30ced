//! The engine workloads: the sysbench-like table, the parallel loader, and the timed point-lookup
//! and insert loops run by each worker thread, with the per-operation checks they make.
//!
//! Every loop talks to the engine only through its public API (`Engine::begin`, `Trx::get`,
//! `Trx::insert`, `Trx::commit`, `Trx::scan`), as an upper layer would.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use innoxide_engine::{ColumnDef, ColumnKind, Engine, KeyBound, Table, TableDef, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::watchdog;

/// The benchmark table, `db/name` as the engine spells it.
pub const TABLE: &str = "bench/t";

/// Latencies are recorded in nanoseconds, up to a minute, with 3 significant digits.
const HIST_MAX_NS: u64 = 60_000_000_000;

/// sysbench's `sbtest` table: `id BIGINT PRIMARY KEY, k INT, c VARCHAR(120), pad VARCHAR(60)`
/// with a secondary index on `k`.
pub fn table_def() -> TableDef {
    TableDef::new(
        TABLE,
        vec![
            ColumnDef::new("id", ColumnKind::BIGINT),
            ColumnDef::new("k", ColumnKind::INT),
            ColumnDef::new("c", ColumnKind::Var { max_len: 120 }),
            ColumnDef::new("pad", ColumnKind::Var { max_len: 60 }),
        ],
        Some(vec![0]),
    )
    .index("k", vec![1], false)
}

/// sysbench's filler: `groups` groups of 11 random digits joined by '-'
/// (10 groups = 119 bytes for `c`, 5 groups = 59 bytes for `pad`).
pub(crate) fn digits(rng: &mut SmallRng, groups: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            out.push(b'-');
        }
        for _ in 0..11 {
            out.push(b'0' + rng.random_range(0..10u8));
        }
    }
    out
}

/// One row of the benchmark table; `k` is uniform in `1..=k_max` as in sysbench.
pub fn make_row(rng: &mut SmallRng, id: i64, k_max: i64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(rng.random_range(1..=k_max.max(1))),
        Value::Bytes(digits(rng, 10)),
        Value::Bytes(digits(rng, 5)),
    ]
}

/// A fresh latency histogram (nanoseconds).
pub fn new_hist() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).context("create latency histogram")
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A progress bar on stderr, hidden when stderr is not a terminal.
fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    let template =
        "{msg} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows ({per_sec:0}, eta {eta})";
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb.set_message(what.to_string());
    pb
}

/// What the loader did.
pub struct LoadStats {
    pub rows: u64,
    pub seconds: f64,
}

/// Which ids to load and how.
pub struct LoadPlan {
    /// Ids `first..=last` are inserted.
    pub first: u64,
    pub last: u64,
    /// `k` is uniform in `1..=k_max`.
    pub k_max: i64,
    pub threads: usize,
    /// Rows per transaction.
    pub batch: usize,
    pub seed: u64,
}

/// Loads the plan's ids with `threads` threads, each inserting a contiguous id range in
/// transactions of `batch` rows (sysbench's parallel prepare).
pub fn load(
    engine: &Engine,
    table: &Arc<Table>,
    plan: &LoadPlan,
    label: &str,
) -> Result<LoadStats> {
    let threads = plan.threads.max(1) as u64;
    let batch = plan.batch.max(1) as u64;
    let rows = (plan.last + 1).saturating_sub(plan.first);
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let finished = AtomicU64::new(0);
    let pb = progress(rows, &format!("load {label}"));
    let start = Instant::now();
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (done, abort, finished) = (&done, &abort, &finished);
                let lo = plan.first + rows * t / threads;
                let hi = plan.first + rows * (t + 1) / threads;
                let seed = plan.seed ^ (t << 32) ^ plan.first;
                s.spawn(move || {
                    let r = load_range(engine, table, lo, hi, batch, plan.k_max, seed, done, abort);
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    finished.fetch_add(1, Ordering::Release);
                    r
                })
            })
            .collect();
        while finished.load(Ordering::Acquire) < threads {
            pb.set_position(done.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(100));
        }
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(_) => Err(anyhow::anyhow!("a loader thread panicked")),
            })
            .collect()
    });
    pb.set_position(done.load(Ordering::Relaxed));
    pb.finish_and_clear();
    for r in results {
        r?;
    }
    Ok(LoadStats {
        rows,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Inserts ids `lo..hi` in transactions of `batch` rows; stops early when `abort` is raised.
#[allow(clippy::too_many_arguments)]
fn load_range(
    engine: &Engine,
    table: &Arc<Table>,
    lo: u64,
    hi: u64,
    batch: u64,
    k_max: i64,
    seed: u64,
    done: &AtomicU64,
    abort: &AtomicBool,
) -> Result<()> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut id = lo;
    while id < hi {
        if abort.load(Ordering::Relaxed) {
            return Ok(());
        }
        let end = (id + batch - 1).min(hi - 1);
        let mut trx = engine.begin();
        for i in id..=end {
            let i = i64::try_from(i).context("id does not fit an i64")?;
            trx.insert(table, &make_row(&mut rng, i, k_max))
                .with_context(|| format!("load: insert id {i}"))?;
        }
        trx.commit()
            .with_context(|| format!("load: commit ids {id}..={end}"))?;
        done.fetch_add(end - id + 1, Ordering::Relaxed);
        watchdog::beat();
        id = end + 1;
    }
    Ok(())
}

/// What one worker thread of a timed measurement did.
pub struct WorkerOut {
    /// Operations completed: lookups, or rows inserted and committed.
    pub ops: u64,
    /// Latency of each lookup transaction, or of each insert transaction (begin..commit).
    pub hist: Histogram<u64>,
    /// Lookups that found no row although the id was loaded.
    pub missing: u64,
    /// Lookups whose returned id column differs from the requested id.
    pub wrong: u64,
    /// Highest id this worker inserted (inserts only).
    pub max_id: Option<i64>,
    /// The engine error that stopped this worker, if any.
    pub error: Option<String>,
    /// When this worker saw the stop flag and finished its last operation.
    pub end: Instant,
    /// CPU time the worker's thread used (lookups only; 0 when /proc does not tell).
    pub cpu_ns: u64,
}

impl WorkerOut {
    fn new() -> Result<Self> {
        Ok(WorkerOut {
            ops: 0,
            hist: new_hist()?,
            missing: 0,
            wrong: 0,
            max_id: None,
            error: None,
            end: Instant::now(),
            cpu_ns: 0,
        })
    }
}

/// CPU time the calling thread has run, in nanoseconds (the first field of
/// /proc/thread-self/schedstat): unlike a rate, it does not count the time other processes
/// take the core away, so it measures the work itself on a shared machine.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Runs `work(thread_index, stop)` on `threads` threads that start together, lets them run for
/// `seconds`, then raises `stop`. Returns each worker's output and the wall time from the start
/// to the last worker's end.
pub fn timed<F>(threads: usize, seconds: f64, work: F) -> Result<(Vec<WorkerOut>, f64)>
where
    F: Fn(usize, &AtomicBool) -> Result<WorkerOut> + Sync,
{
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    let (outs, start) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (stop, barrier, work) = (&stop, &barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(t, stop)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let outs: Vec<Result<WorkerOut>> = handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(_) => Err(anyhow::anyhow!("a worker thread panicked")),
            })
            .collect();
        (outs, start)
    });
    let outs = outs.into_iter().collect::<Result<Vec<_>>>()?;
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
    Ok((outs, end.duration_since(start).as_secs_f64()))
}

/// Point lookups of random ids in `1..=rows`, each in its own read-only transaction.
pub fn lookup_worker(
    engine: &Engine,
    table: &Arc<Table>,
    rows: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<WorkerOut> {
    let mut out = WorkerOut::new()?;
    let cpu0 = thread_cpu_ns();
    let mut rng = SmallRng::seed_from_u64(seed);
    let max = i64::try_from(rows).context("row count does not fit an i64")?;
    while !stop.load(Ordering::Relaxed) {
        let id = rng.random_range(1..=max);
        let t0 = Instant::now();
        let mut trx = engine.begin();
        let got = trx.get(table, &[Value::Int(id)]);
        let committed = trx.commit();
        out.hist.saturating_record(nanos(t0.elapsed()));
        let row = match got.and_then(|r| committed.map(|()| r)) {
            Ok(row) => row,
            Err(e) => {
                out.error = Some(format!("lookup of id {id}: {e}"));
                break;
            }
        };
        out.ops += 1;
        if out.ops.is_multiple_of(4096) {
            watchdog::beat();
        }
        match row {
            None => out.missing += 1,
            Some(r) if r.first().and_then(Value::as_i64) != Some(id) => out.wrong += 1,
            Some(_) => {}
        }
    }
    out.end = Instant::now();
    if let (Some(a), Some(b)) = (cpu0, thread_cpu_ns()) {
        out.cpu_ns = b.saturating_sub(a);
    }
    Ok(out)
}

/// Inserts new rows with ids `base + thread + j * threads` (disjoint per thread), `batch` rows
/// per transaction, until `stop`. Only rows of committed transactions count.
#[allow(clippy::too_many_arguments)]
pub fn insert_worker(
    engine: &Engine,
    table: &Arc<Table>,
    base: i64,
    thread: usize,
    threads: usize,
    batch: usize,
    k_max: i64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<WorkerOut> {
    let mut out = WorkerOut::new()?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let (t, n) = (thread as i64, threads as i64);
    let mut j: i64 = 0;
    let mut rows: Vec<Vec<Value>> = Vec::with_capacity(batch);
    'outer: while !stop.load(Ordering::Relaxed) {
        rows.clear();
        for b in 0..batch as i64 {
            rows.push(make_row(&mut rng, base + t + (j + b) * n, k_max));
        }
        let t0 = Instant::now();
        let mut trx = engine.begin();
        for r in &rows {
            if let Err(e) = trx.insert(table, r) {
                out.error = Some(format!("insert of id {:?}: {e}", r[0]));
                break 'outer;
            }
        }
        if let Err(e) = trx.commit() {
            out.error = Some(format!("commit of {} inserted rows: {e}", rows.len()));
            break;
        }
        out.hist.saturating_record(nanos(t0.elapsed()));
        j += batch as i64;
        out.ops += batch as u64;
        watchdog::beat();
        out.max_id = Some(base + t + (j - 1) * n);
    }
    out.end = Instant::now();
    Ok(out)
}

/// Counts the rows of the table by scanning its primary key, checking that ids ascend.
pub fn count_rows(engine: &Engine, table: &Arc<Table>) -> Result<u64> {
    let mut trx = engine.begin();
    let mut n = 0u64;
    let mut last: Option<i64> = None;
    for row in trx
        .scan(table, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .context("start primary key scan")?
    {
        let row = row.context("primary key scan")?;
        let Some(id) = row.first().and_then(Value::as_i64) else {
            bail!("primary key scan returned a row without an integer id: {row:?}");
        };
        if last.is_some_and(|l| l >= id) {
            bail!("primary key scan out of order: id {id} after {last:?}");
        }
        last = Some(id);
        n += 1;
        if n.is_multiple_of(65536) {
            watchdog::beat();
        }
    }
    trx.commit().context("commit the counting scan")?;
    Ok(n)
}
