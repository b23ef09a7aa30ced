//! The phases of one engine-benchmark case: loading (with top-up to a target size), point
//! lookups in interleaved rounds, the insert measurements, and the final verification (row
//! count and `Engine::check`). Each phase prints its figures as it ends and appends failed
//! result checks to `failures`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use innoxide_engine::{Engine, Table};

use crate::report::{mib, CheckSummary, Latency, Lookups, Measurement};
use crate::sysload;
use crate::watchdog;
use crate::workload::{self, LoadPlan, WorkerOut};

/// Sum of the sizes of the files under `dir` whose name ends with `suffix` ("" for all).
pub fn dir_bytes(dir: &Path, suffix: &str) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir).with_context(|| format!("list {}", dir.display()))? {
        let e = e.with_context(|| format!("list {}", dir.display()))?;
        let md = e
            .metadata()
            .with_context(|| format!("stat {}", e.path().display()))?;
        if md.is_dir() {
            total += dir_bytes(&e.path(), suffix)?;
        } else if e.file_name().to_string_lossy().ends_with(suffix) {
            total += md.len();
        }
    }
    Ok(total)
}

/// Merges workers' outputs into one measurement over `seconds`; engine errors become failures.
pub fn merge(
    what: &str,
    outs: &[WorkerOut],
    seconds: f64,
    failures: &mut Vec<String>,
) -> Result<Measurement> {
    let mut hist = workload::new_hist()?;
    let mut ops = 0;
    for o in outs {
        hist.add(&o.hist).context("merge latency histograms")?;
        ops += o.ops;
        if let Some(e) = &o.error {
            failures.push(format!("{what}: engine error: {e}"));
        }
    }
    Ok(Measurement {
        ops,
        seconds,
        latency: Latency::from_hist(&hist),
    })
}

/// What the load phase did.
pub struct Loaded {
    /// Ids `1..=rows` are in the table.
    pub rows: u64,
    pub seconds: f64,
    pub flush_seconds: f64,
    /// Size of the table's data file(s) after the load and flush.
    pub data_bytes: u64,
}

/// Loads `plan`, flushes, and with `target_bytes` keeps adding rows (ids continuing) until the
/// table's data file reaches about that size. Progress goes to stderr; the summary to stdout.
pub fn load(
    engine: &Engine,
    table: &Arc<Table>,
    dir: &Path,
    mut plan: LoadPlan,
    target_bytes: Option<u64>,
    pool_bytes: u64,
    name: &str,
) -> Result<Loaded> {
    let mut seconds = 0.0;
    let mut inserted = 0;
    let mut flush_seconds = 0.0;
    let mut data_bytes;
    let mut round = 0;
    loop {
        watchdog::phase(format!("{name}: load ids {}..={}", plan.first, plan.last));
        let done = workload::load(engine, table, &plan, name)?;
        seconds += done.seconds;
        inserted += done.rows;
        let t = Instant::now();
        watchdog::phase(format!("{name}: flush after the load"));
        engine
            .flush_and_checkpoint()
            .context("flush after the load")?;
        flush_seconds += t.elapsed().as_secs_f64();
        data_bytes = dir_bytes(dir, ".ibd")?;
        let Some(target) = target_bytes else { break };
        round += 1;
        if data_bytes as f64 >= 0.97 * target as f64 || round > 10 {
            break;
        }
        let per_row = data_bytes as f64 / plan.last as f64;
        let more = ((target - data_bytes) as f64 / per_row * 1.02).ceil() as u64;
        let more = more.clamp(1000, (plan.last / 4).max(1000));
        println!(
            "top-up: the table is {} = x{:.2} the pool ({:.0} bytes/row); loading {more} more rows",
            mib(data_bytes),
            data_bytes as f64 / pool_bytes as f64,
            per_row
        );
        plan.first = plan.last + 1;
        plan.last += more;
    }
    let rows = plan.last;
    println!(
        "load: {inserted} rows in {seconds:.1} s = {:.0} rows/s ({} threads, {} rows/commit); \
         flush {flush_seconds:.1} s",
        inserted as f64 / f64::max(seconds, 1e-9),
        plan.threads,
        plan.batch
    );
    Ok(Loaded {
        rows,
        seconds,
        flush_seconds,
        data_bytes,
    })
}

/// Settings of the point-lookup phase.
pub struct LookupPlan<'a> {
    pub rows: u64,
    pub threads: &'a [usize],
    pub seconds: f64,
    pub rounds: usize,
    pub warmup: f64,
    pub seed: u64,
}

/// Point lookups: `rounds` rounds, each running every thread count for `seconds / rounds`, so
/// that all thread counts sample the same stretch of time (this machine's speed drifts). The
/// figures of a thread count add up all its rounds.
pub fn lookups(
    engine: &Engine,
    table: &Arc<Table>,
    p: &LookupPlan<'_>,
    name: &str,
    failures: &mut Vec<String>,
) -> Result<Vec<Lookups>> {
    let rows = p.rows;
    let work = |threads: usize, salt: u64| {
        move |t: usize, stop: &AtomicBool| {
            let s = p.seed ^ (salt << 16) ^ (0x10 * threads as u64 + t as u64);
            workload::lookup_worker(engine, table, rows, s, stop)
        }
    };
    if p.warmup > 0.0 {
        watchdog::phase(format!("{name}: point-lookup warm-up"));
        let n = p.threads.iter().copied().max().unwrap_or(1);
        let (outs, _) = workload::timed(n, p.warmup, work(n, 0xffff))
            .with_context(|| format!("{name}: warm-up"))?;
        if let Some(e) = outs.iter().find_map(|o| o.error.as_ref()) {
            bail!("{name}: point lookups failed during the warm-up: {e}");
        }
    }
    struct Acc {
        hist: Histogram<u64>,
        out: Lookups,
        /// CPU ticks taken by other processes, and all ticks, over this thread count's rounds.
        others: Option<(u64, u64)>,
    }
    let mut accs = p
        .threads
        .iter()
        .map(|_| {
            Ok(Acc {
                hist: workload::new_hist()?,
                out: Lookups::default(),
                others: Some((0, 0)),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let rounds = p.rounds.max(1);
    let per_round = p.seconds / rounds as f64;
    let stats = &engine.inner().bp.stats;
    for round in 0..rounds {
        for (acc, &n) in accs.iter_mut().zip(p.threads) {
            watchdog::phase(format!(
                "{name}: point lookups, {n} thread(s), round {round}"
            ));
            let reads0 = stats.reads.get();
            let req0 = stats.read_requests.get();
            let young0 = stats.made_young.get();
            let cpu0 = sysload::Snapshot::take();
            let (outs, secs) = workload::timed(n, per_round, work(n, round as u64))
                .with_context(|| format!("{name}: point lookups with {n} thread(s)"))?;
            acc.others = match (acc.others, cpu0, sysload::Snapshot::take()) {
                (Some((o, t)), Some(a), Some(b)) => {
                    let (o2, t2) = a.others_since(&b);
                    Some((o + o2, t + t2))
                }
                _ => None,
            };
            let l = &mut acc.out;
            l.reads += stats.reads.get() - reads0;
            l.read_requests += stats.read_requests.get() - req0;
            l.made_young += stats.made_young.get() - young0;
            let what = format!("{name}, point lookups, {n} thread(s)");
            let m = merge(&what, &outs, secs, failures)?;
            l.round_rates.push(m.per_sec());
            l.m.ops += m.ops;
            l.m.seconds += secs;
            for o in &outs {
                acc.hist.add(&o.hist).context("merge latency histograms")?;
                l.cpu_ns += o.cpu_ns;
                l.missing += o.missing;
                l.wrong += o.wrong;
            }
        }
    }
    let mut out = Vec::new();
    for (acc, &n) in accs.into_iter().zip(p.threads) {
        let mut l = acc.out;
        l.m.latency = Latency::from_hist(&acc.hist);
        l.others_cores = acc.others.and_then(|(o, t)| sysload::cores(o, t));
        let others = l
            .others_cores
            .map_or("unknown".to_string(), |c| format!("{c:.2} cores"));
        let rates: Vec<String> = l.round_rates.iter().map(|r| format!("{r:.0}")).collect();
        let cpu = l
            .cpu_us()
            .map_or("unknown".to_string(), |c| format!("{c:.2} us"));
        println!(
            "point lookups, {n} thread(s): {:.0}/s ({}); CPU per lookup {cpu}; pool hit {:.2}% \
             ({} reads / {} requests, {} made young); missing {}, wrong id {}; per round: {}; \
             other processes used {others}",
            l.m.per_sec(),
            l.m.latency.brief(),
            l.hit_ratio() * 100.0,
            l.reads,
            l.read_requests,
            l.made_young,
            l.missing,
            l.wrong,
            rates.join(" ")
        );
        if l.missing > 0 || l.wrong > 0 {
            failures.push(format!(
                "{name}, {n} thread(s): {} lookups found no row and {} returned another id",
                l.missing, l.wrong
            ));
        }
        out.push(l);
    }
    Ok(out)
}

/// Settings of one insert measurement.
pub struct InsertPlan {
    pub threads: usize,
    /// Rows per transaction.
    pub batch: usize,
    pub seconds: f64,
    /// The first id to insert; ids above it are free.
    pub base: i64,
    pub k_max: i64,
    pub seed: u64,
}

/// One insert measurement. Returns it with the next free id. `dir` is the data directory, whose
/// table size is printed after the measurement.
pub fn inserts(
    engine: &Engine,
    table: &Arc<Table>,
    dir: &Path,
    p: &InsertPlan,
    name: &str,
    failures: &mut Vec<String>,
) -> Result<(Measurement, i64)> {
    let (n, batch) = (p.threads, p.batch);
    watchdog::phase(format!("{name}: inserts, {batch}/commit, {n} thread(s)"));
    let (outs, secs) = workload::timed(n, p.seconds, |t, stop| {
        let s = p.seed ^ (0x1000 * batch as u64 + 0x10 * n as u64 + t as u64);
        workload::insert_worker(engine, table, p.base, t, n, batch, p.k_max, s, stop)
    })?;
    let what = format!("{name}, inserts {batch}/commit, {n} thread(s)");
    let m = merge(&what, &outs, secs, failures)?;
    let next = outs
        .iter()
        .filter_map(|o| o.max_id)
        .max()
        .map_or(p.base, |m| m + 1);
    println!(
        "inserts, {batch} row(s)/commit, {n} thread(s): {:.0} rows/s ({} per commit); \
         the table is now {}",
        m.per_sec(),
        m.latency.brief(),
        mib(dir_bytes(dir, ".ibd")?)
    );
    Ok((m, next))
}

/// Counts the rows through the primary key and runs `Engine::check` (after purging).
/// Returns the row count and the check's summary (None if it failed).
pub fn verify(
    engine: &Engine,
    table: &Arc<Table>,
    expected: u64,
    name: &str,
    failures: &mut Vec<String>,
) -> Result<(u64, Option<CheckSummary>)> {
    watchdog::phase(format!("{name}: row count"));
    let counted = workload::count_rows(engine, table)?;
    println!("row count: {counted} (expected {expected})");
    if counted != expected {
        failures.push(format!(
            "{name}: the table holds {counted} rows, expected {expected} (loaded + inserted)"
        ));
    }
    let t = Instant::now();
    watchdog::phase(format!("{name}: purge and Engine::check"));
    if let Err(e) = engine.purge_all() {
        failures.push(format!("{name}: purge before the check failed: {e}"));
    }
    let check = match engine.check() {
        Ok(rep) => {
            let s = CheckSummary {
                records: rep.records,
                pages_in_use: rep.pages_in_use,
                pages_verified_on_disk: rep.pages_verified_on_disk,
                seconds: t.elapsed().as_secs_f64(),
            };
            println!(
                "engine check: ok in {:.1} s ({} records, {} pages in use, {} verified on disk)",
                s.seconds, s.records, s.pages_in_use, s.pages_verified_on_disk
            );
            Some(s)
        }
        Err(e) => {
            println!("engine check: FAILED: {e}");
            failures.push(format!("{name}: Engine::check failed: {e}"));
            None
        }
    };
    Ok((counted, check))
}
