//! `innoxide-bench engine`: the storage engine micro-benchmark (issue #2).
//!
//! For each case (data in the buffer pool, data about 10x the pool) it opens a fresh engine in
//! its own data directory, loads the sysbench-like table, then measures for each thread count:
//! point lookups (one read-only transaction each), inserts with a commit per row and inserts
//! with 100 rows per commit. It then verifies the row count and runs `Engine::check`. Failed
//! result checks are collected and returned; `main` turns them into a non-zero exit.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::{value_parser, ArgAction, Args, ValueEnum};
use innoxide_engine::{Engine, EngineConfig};

use crate::phases;
use crate::report::{self, mib, CaseResult, Json, Measurement, ThreadRow};
use crate::watchdog;
use crate::workload;

/// Bytes per row in the table's data file measured after loading ~100k rows (the clustered
/// record is ~210 B; page fill, the `k` index and free space in the file add the rest);
/// sizes the in-pool case.
const EST_ROW_BYTES_SMALL: u64 = 380;

/// The same after loading ~2M rows: between 260 and 350 bytes were seen, because the file
/// grows in steps of 1/8 of its size (at most 64 MiB). The 10x-pool case loads the rows this
/// gives, then tops up until the table's file really is 10x the pool.
const EST_ROW_BYTES_LARGE: u64 = 300;

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Parent directory for the data directories: each case gets a fresh `<DIR>/in-pool` or
    /// `<DIR>/10x-pool`, which must not exist yet or be empty. Default: a new temporary
    /// directory under /tmp.
    #[arg(long, value_name = "DIR")]
    datadir: Option<PathBuf>,

    /// Keep the data directories after the run. Without it each case's data directory (and
    /// the temporary parent, when --datadir is not given) is removed when the case ends,
    /// unless the case failed a check: then it is kept for inspection and its path printed.
    #[arg(long)]
    keep: bool,

    /// innodb_page_size in bytes: 4096, 8192, 16384, 32768 or 65536.
    #[arg(long, value_name = "BYTES", default_value_t = 16384)]
    page_size: usize,

    /// innodb_buffer_pool_size in MiB (one buffer pool instance).
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pool_mib: u64,

    /// Rows loaded in the in-pool case. Default: enough to fill about half of the buffer pool
    /// (estimated at 380 bytes per row on disk, `k` index included).
    #[arg(long, value_name = "N")]
    rows_in_pool: Option<u64>,

    /// Rows loaded in the 10x-pool case. Default: enough for the table's data file to reach
    /// 10x the buffer pool (a first load from an estimate of 300 bytes per row, then top-ups
    /// sized from the measured bytes per row until the file is at least 97% of the target).
    #[arg(long, value_name = "N")]
    rows_large: Option<u64>,

    /// Duration of each measurement in seconds (fractions allowed). Each case runs
    /// 3 measurements per thread count: point lookups, inserts with 1 row per commit, inserts
    /// with 100 rows per commit.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    seconds: f64,

    /// Point lookups are measured in this many rounds; each round runs every thread count
    /// for --seconds/ROUNDS back to back, so that all thread counts see the same stretch of
    /// time (a shared machine's speed drifts). A thread count's figures add up its rounds.
    #[arg(long, value_name = "N", default_value_t = 5)]
    rounds: usize,

    /// Unmeasured point lookups (with the largest thread count) for this many seconds before
    /// the first point-lookup round of each case, to warm caches and the buffer pool
    /// (0 disables).
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    warmup: f64,

    /// Comma-separated thread counts to measure, e.g. "1,2,4". The scaling check needs 1 and 2.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2"
    )]
    threads: Vec<usize>,

    /// innodb_flush_log_at_trx_commit: 1 = write and fsync the redo log at every commit,
    /// 2 = write at commit and fsync about once a second, 0 = write and fsync about once a
    /// second.
    #[arg(long, value_name = "0|1|2", default_value_t = 1,
          value_parser = value_parser!(u8).range(0..=2))]
    trx_commit: u8,

    /// innodb_adaptive_hash_index: point lookups try the adaptive hash index first.
    /// "--adaptive-hash-index false" measures searches from the root only.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    adaptive_hash_index: bool,

    /// Rows per transaction in the load phase. (The measured inserts always use 1 row per
    /// commit and 100 rows per commit.)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    insert_batch: usize,

    /// Threads loading the table, each inserting its own contiguous range of ids.
    #[arg(long, value_name = "N", default_value_t = 2)]
    load_threads: usize,

    /// innodb_log_file_size in MiB (the redo log has 2 such files).
    #[arg(long, value_name = "MIB", default_value_t = 48)]
    log_file_mib: u64,

    /// Comma-separated cases to run: in-pool (data about half the pool) and/or 10x-pool
    /// (data about ten times the pool).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "in-pool,10x-pool"
    )]
    cases: Vec<Case>,

    /// Seed of the random ids and row contents, for repeatable runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Fail the run unless in-pool point lookups with 2 threads reach --min-scaling times the
    /// 1-thread figure (the ratio is printed either way). "--check-scaling false" turns the
    /// check off.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    check_scaling: bool,

    /// Give up (exit status 2) when nothing progresses for this many seconds: a stuck engine
    /// would otherwise hang the run. 0 disables the watchdog.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    stall_timeout: u64,

    /// Minimum ratio of 2-thread to 1-thread in-pool lookups/s for --check-scaling.
    #[arg(long, value_name = "RATIO", default_value_t = 1.6)]
    min_scaling: f64,
}

/// The datasets.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Data about half the buffer pool: every lookup is served from memory.
    InPool,
    /// Data about ten times the buffer pool: most lookups read a page from disk.
    #[value(name = "10x-pool")]
    LargeTenX,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::InPool => "in-pool",
            Case::LargeTenX => "10x-pool",
        }
    }
}

/// Where the data directories go, and whether to remove them.
struct Dirs {
    root: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl Dirs {
    fn new(args: &EngineArgs) -> Result<Dirs> {
        match &args.datadir {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
                Ok(Dirs {
                    root: d.clone(),
                    temp: None,
                })
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("innoxide-bench-")
                    .tempdir_in("/tmp")
                    .context("create a temporary directory under /tmp")?;
                Ok(Dirs {
                    root: t.path().to_path_buf(),
                    temp: Some(t),
                })
            }
        }
    }

    fn finish(self, keep: bool) -> Result<()> {
        match self.temp {
            Some(t) if keep => {
                let p = t.keep();
                println!("kept data under {}", p.display());
            }
            Some(t) => t.close().context("remove the temporary data directory")?,
            None if keep => println!("kept data under {}", self.root.display()),
            None => {}
        }
        Ok(())
    }
}

fn is_empty_dir(dir: &Path) -> Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e).with_context(|| format!("list {}", dir.display())),
    }
}

/// Runs the benchmark; returns the failed result checks (empty when all passed).
pub fn run(args: &EngineArgs) -> Result<Vec<String>> {
    if args.threads.is_empty() || args.threads.contains(&0) {
        bail!("--threads needs one or more thread counts above 0");
    }
    if !(args.seconds > 0.0 && args.seconds.is_finite()) {
        bail!("--seconds must be a positive number");
    }
    if let Some(dir) = args.json.as_ref().and_then(|p| p.parent()) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            bail!("--json: directory {} does not exist", dir.display());
        }
    }
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    if !(args.warmup >= 0.0 && args.warmup.is_finite()) {
        bail!("--warmup must be 0 or a positive number");
    }
    let mut threads = args.threads.clone();
    threads.dedup();
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let dirs = Dirs::new(args)?;
    let cleanup = (dirs.temp.is_some() && !args.keep).then(|| dirs.root.clone());
    watchdog::start(Duration::from_secs(args.stall_timeout), cleanup);
    let pool_bytes = args.pool_mib << 20;
    println!(
        "innoxide-bench engine: pool {} MiB, page {} B, trx_commit {}, {} s per measurement, \
         threads {:?}, data under {}",
        args.pool_mib,
        args.page_size,
        args.trx_commit,
        args.seconds,
        threads,
        dirs.root.display()
    );
    let mut failures = Vec::new();
    let mut cases: Vec<CaseResult> = Vec::new();
    let mut kept_failed = false;
    for (ci, &case) in args.cases.iter().enumerate() {
        let (rows, target_bytes) = match case {
            Case::InPool => (
                args.rows_in_pool
                    .unwrap_or(pool_bytes / 2 / EST_ROW_BYTES_SMALL),
                None,
            ),
            Case::LargeTenX => match args.rows_large {
                Some(n) => (n, None),
                None => (10 * pool_bytes / EST_ROW_BYTES_LARGE, Some(10 * pool_bytes)),
            },
        };
        if rows == 0 {
            bail!("case {}: 0 rows to load", case.name());
        }
        let dir = dirs.root.join(case.name());
        let failed_before = failures.len();
        let seed = args.seed.wrapping_add(1_000_003 * ci as u64);
        let c = run_case(
            args,
            case,
            &dir,
            rows,
            target_bytes,
            &threads,
            seed,
            &mut failures,
        )
        .with_context(|| format!("case {}", case.name()))?;
        let failed = failures.len() > failed_before;
        if failed && !args.keep {
            println!(
                "keeping {} for inspection: this case failed a check",
                dir.display()
            );
            kept_failed = true;
        }
        if !failed && !args.keep {
            std::fs::remove_dir_all(&dir).with_context(|| format!("remove {}", dir.display()))?;
        }
        cases.push(c);
    }

    println!();
    print!("{}", report::table(&cases));
    let in_pool = cases.iter().find(|c| c.name == Case::InPool.name());
    let scaling = in_pool.and_then(|c| c.lookup_ratio(2));
    match scaling {
        Some(x) => {
            let ok = x >= args.min_scaling;
            let per_round: Vec<String> = in_pool
                .map(|c| c.round_ratios(2))
                .unwrap_or_default()
                .iter()
                .map(|r| format!("x{r:.2}"))
                .collect();
            println!(
                "in-pool point-lookup scaling, 2 threads vs 1: x{x:.3} (per round: {}); \
                 required x{:.2}{}: {}",
                per_round.join(" "),
                args.min_scaling,
                if args.check_scaling {
                    ""
                } else {
                    " (check off)"
                },
                if ok { "ok" } else { "BELOW" }
            );
            if args.check_scaling && !ok {
                let busy = in_pool
                    .and_then(|c| c.rows.iter().find(|r| r.threads == 2))
                    .and_then(|r| r.lookups.others_cores)
                    .filter(|&c| c >= 0.1)
                    .map_or(String::new(), |c| {
                        format!(
                            "; other processes used {c:.2} cores during the 2-thread rounds, \
                             so the machine was not idle: rerun when it is"
                        )
                    });
                failures.push(format!(
                    "in-pool point lookups with 2 threads reach only x{x:.3} the 1-thread rate; \
                     at least x{:.2} is required (issue #2){busy}",
                    args.min_scaling
                ));
            }
        }
        None => println!(
            "in-pool point-lookup scaling: not measured (needs the in-pool case with 1 and 2 \
             threads)"
        ),
    }
    println!(
        "total time {:.0} s; result checks: {}",
        started.elapsed().as_secs_f64(),
        if failures.is_empty() {
            "all passed".to_string()
        } else {
            format!("{} FAILED", failures.len())
        }
    );
    if let Some(path) = &args.json {
        write_json(
            path,
            args,
            &threads,
            started_unix,
            &cases,
            scaling,
            &failures,
        )?;
        println!("results written to {}", path.display());
    }
    dirs.finish(args.keep || kept_failed)?;
    Ok(failures)
}

fn write_json(
    path: &Path,
    args: &EngineArgs,
    threads: &[usize],
    started_unix: u64,
    cases: &[CaseResult],
    scaling: Option<f64>,
    failures: &[String],
) -> Result<()> {
    let settings = Json::obj([
        ("page_size", Json::Num(args.page_size as f64)),
        ("pool_mib", Json::Num(args.pool_mib as f64)),
        ("seconds", Json::Num(args.seconds)),
        ("lookup_rounds", Json::Num(args.rounds as f64)),
        ("warmup_seconds", Json::Num(args.warmup)),
        (
            "threads",
            Json::Arr(threads.iter().map(|&t| Json::Num(t as f64)).collect()),
        ),
        ("trx_commit", Json::Num(f64::from(args.trx_commit))),
        ("insert_batch", Json::Num(args.insert_batch as f64)),
        ("load_threads", Json::Num(args.load_threads as f64)),
        ("adaptive_hash_index", Json::Bool(args.adaptive_hash_index)),
        ("log_file_mib", Json::Num(args.log_file_mib as f64)),
        ("seed", Json::Num(args.seed as f64)),
        ("check_scaling", Json::Bool(args.check_scaling)),
        ("min_scaling", Json::Num(args.min_scaling)),
    ]);
    let doc = Json::obj([
        ("benchmark", Json::str("engine")),
        ("started_unix", Json::Num(started_unix as f64)),
        ("settings", settings),
        (
            "cases",
            Json::Arr(cases.iter().map(report::case_json).collect()),
        ),
        (
            "lookup_scaling_2_vs_1",
            scaling.map_or(Json::Null, Json::Num),
        ),
        (
            "failures",
            Json::Arr(failures.iter().map(|f| Json::str(f.clone())).collect()),
        ),
        ("passed", Json::Bool(failures.is_empty())),
    ]);
    let mut s = String::new();
    doc.write(&mut s, 0);
    s.push('\n');
    std::fs::write(path, s).with_context(|| format!("write {}", path.display()))
}

fn engine_config(args: &EngineArgs, dir: &Path) -> EngineConfig {
    let mut cfg = EngineConfig::new(dir);
    cfg.page_size = args.page_size;
    cfg.buffer_pool_size = args.pool_mib << 20;
    cfg.buffer_pool_instances = 1;
    cfg.log_file_size = args.log_file_mib << 20;
    cfg.log_files_in_group = 2;
    cfg.doublewrite = true;
    cfg.tunables.flush_log_at_trx_commit = args.trx_commit;
    cfg.tunables.adaptive_hash_index = args.adaptive_hash_index;
    cfg
}

/// One dataset: open, load, measure, verify, shut down. With `target_bytes`, rows are added
/// after the first load until the table's data file reaches that size.
#[allow(clippy::too_many_arguments)]
fn run_case(
    args: &EngineArgs,
    case: Case,
    dir: &Path,
    rows: u64,
    target_bytes: Option<u64>,
    threads: &[usize],
    seed: u64,
    failures: &mut Vec<String>,
) -> Result<CaseResult> {
    let name = case.name();
    if !is_empty_dir(dir)? {
        bail!(
            "data directory {} is not empty; choose another --datadir",
            dir.display()
        );
    }
    let pool_bytes = args.pool_mib << 20;
    println!();
    println!(
        "== {name}: loading {rows} rows{}, buffer pool {} ==",
        match target_bytes {
            Some(t) => format!(" (more if the table is short of {})", mib(t)),
            None => String::new(),
        },
        mib(pool_bytes)
    );
    watchdog::phase(format!("{name}: open the engine"));
    let engine = Arc::new(
        Engine::open(engine_config(args, dir))
            .with_context(|| format!("open the engine in {}", dir.display()))?,
    );
    let table = engine
        .create_table(workload::table_def())
        .context("create the benchmark table")?;

    // 1. Load.
    let k_max = i64::try_from(rows).context("row count does not fit an i64")?;
    let plan = workload::LoadPlan {
        first: 1,
        last: rows,
        k_max,
        threads: args.load_threads,
        batch: args.insert_batch,
        seed,
    };
    let loaded = phases::load(&engine, &table, dir, plan, target_bytes, pool_bytes, name)?;
    let rows = loaded.rows;
    let datadir_loaded = phases::dir_bytes(dir, "")?;
    let data_loaded = loaded.data_bytes;
    println!(
        "data on disk: table {} = x{:.2} the buffer pool ({:.0} bytes/row); whole datadir {}",
        mib(data_loaded),
        data_loaded as f64 / pool_bytes as f64,
        data_loaded as f64 / rows as f64,
        mib(datadir_loaded)
    );
    if case == Case::LargeTenX && data_loaded <= pool_bytes {
        failures.push(format!(
            "{name}: the table ({}) does not exceed the buffer pool ({}); raise --rows-large",
            mib(data_loaded),
            mib(pool_bytes)
        ));
    }
    if case == Case::InPool && data_loaded > pool_bytes {
        println!("warning: the in-pool table is larger than the buffer pool; lower --rows-in-pool");
    }

    // 2. Point lookups, all thread counts, while the table holds only the loaded ids.
    let lp = phases::LookupPlan {
        rows,
        threads,
        seconds: args.seconds,
        rounds: args.rounds,
        warmup: args.warmup,
        seed,
    };
    let lookups = phases::lookups(&engine, &table, &lp, name, failures)?;

    // 3. Inserts of new ids above everything loaded: 1 row per commit, then 100.
    let mut results: Vec<ThreadRow> = threads
        .iter()
        .zip(lookups)
        .map(|(&n, l)| ThreadRow {
            threads: n,
            lookups: l,
            insert_1: Measurement::default(),
            insert_100: Measurement::default(),
        })
        .collect();
    let mut next_id = i64::try_from(rows).context("row count does not fit an i64")? + 1;
    let mut inserted = 0u64;
    for batch in [1usize, 100] {
        for r in results.iter_mut() {
            let ip = phases::InsertPlan {
                threads: r.threads,
                batch,
                seconds: args.seconds,
                base: next_id,
                k_max,
                seed,
            };
            let (m, next) = phases::inserts(&engine, &table, dir, &ip, name, failures)?;
            next_id = next;
            inserted += m.ops;
            if batch == 1 {
                r.insert_1 = m;
            } else {
                r.insert_100 = m;
            }
        }
    }

    // 4. Verify.
    println!("inserted {inserted} rows in all");
    let (counted, check) = phases::verify(&engine, &table, rows + inserted, name, failures)?;
    let data_end = phases::dir_bytes(dir, ".ibd")?;
    println!(
        "data on disk at the end: table {} = x{:.2} the buffer pool",
        mib(data_end),
        data_end as f64 / pool_bytes as f64
    );
    drop(table);
    let engine = Arc::into_inner(engine).context("engine still shared after the workers ended")?;
    watchdog::phase(format!("{name}: shutdown"));
    if let Err(e) = engine.shutdown() {
        failures.push(format!("{name}: engine shutdown failed: {e}"));
    }
    Ok(CaseResult {
        name: name.to_string(),
        rows_loaded: rows,
        load_seconds: loaded.seconds,
        flush_seconds: loaded.flush_seconds,
        pool_bytes,
        data_bytes_loaded: data_loaded,
        data_bytes_end: data_end,
        datadir_bytes_loaded: datadir_loaded,
        rows: results,
        rows_inserted: inserted,
        rows_counted: counted,
        check,
    })
}
