//! `innoxide-bench purge`: does purge keep up with a steady stream of updates?
//!
//! A long-running test, not for CI. It loads a small table (10,000 rows by default), then
//! `--threads` threads update one random row per transaction for `--minutes` (10 by default).
//! Each update changes `k`, so the `k` index gets a delete-marked entry that only purge removes,
//! and `c`, so the clustered record gets a new version whose undo purge must free.
//!
//! Once a second it samples the history list length (committed undo logs not yet purged), the
//! size of the table's `.ibd` file and of ibdata1 (where the undo logs live), purge's counters
//! and the buffer pool's page reads. In the middle of the run a separate thread holds a
//! REPEATABLE READ read view open for `--view-secs`: purge must stop at it, so the history
//! grows, and must drain once the view closes.
//!
//! Result checks (exit status 1 on failure): every update committed; after `--settle-secs`,
//! outside the view window and its drain, the history stays below `--max-history` and the
//! `.ibd` file grows by at most `--max-growth-pct`; the history grows while the view is open
//! and drains after it closes; the view reads the same rows at its end as at its start; the
//! table still has `--rows` rows and `Engine::check` passes.
//!
//! Helpers shared with `rollback_bench` (data directory, result checks, file sizes, the
//! sysbench filler) live here too.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::{value_parser, Args};
use innoxide_engine::{CheckReport, Value};
use innoxide_engine::{ColumnDef, ColumnKind, Engine, EngineConfig, Isolation, Table, TableDef};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::report::{mib, Json};
use crate::watchdog;
use crate::workload;

/// The table, `db/name` as the engine spells it; its file is `<datadir>/bench/purge.ibd`.
const TABLE: &str = "bench/purge";

/// Rows the view thread reads when the view opens and again before it closes.
const VIEW_SAMPLE_ROWS: i64 = 100;

/// The pre-view history level is the highest history length seen in this many seconds before
/// the view opened (the history moves up and down by a few batches in steady state).
const PRE_VIEW_SECS: f64 = 10.0;

/// After the updates stop, wait at most this long for the background purge to empty the
/// history (a figure, not a check).
const FINAL_DRAIN_SECS: f64 = 60.0;

#[derive(Args, Debug, Clone)]
pub struct PurgeArgs {
    /// The data directory. It must not exist or be empty. Default: a new temporary directory
    /// under /tmp. Either way it is removed at the end unless --keep is given or a check
    /// failed (then it is kept for inspection and its path printed).
    #[arg(long, value_name = "DIR")]
    datadir: Option<PathBuf>,

    /// Keep the data directory after the run.
    #[arg(long)]
    keep: bool,

    /// Rows in the table `bench/purge (id INT PRIMARY KEY, k INT, c VARCHAR(120), KEY k (k))`;
    /// ids 1..=ROWS, every update picks one of them at random.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    rows: u64,

    /// Updater threads. Each runs transactions of one UPDATE (new random k and c of a random
    /// row) and a COMMIT, back to back.
    #[arg(long, value_name = "N", default_value_t = 2)]
    threads: usize,

    /// How long the updates run, in minutes (fractions allowed).
    #[arg(long, value_name = "MIN", default_value_t = 10.0)]
    minutes: f64,

    /// Seconds from the start of the updates before the steady-state checks apply: the k
    /// index fills its pages and the file reaches its working size meanwhile. The .ibd size
    /// at this point is the base of the growth check.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    settle_secs: u64,

    /// When the read view opens, in seconds from the start of the updates. Must not be
    /// before --settle-secs.
    #[arg(long, value_name = "SECS", default_value_t = 240)]
    view_at: u64,

    /// How long the read view stays open, in seconds. 0 skips the read-view phase and its
    /// checks. Mind the disk: the engine (as of this writing) gives every committed update's
    /// undo log a page of ibdata1 until purge frees it, and ibdata1 never shrinks, so a view
    /// held 60 s while ~6,000 updates/s commit grows ibdata1 by about 5.5 GiB.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    view_secs: u64,

    /// Steady-state bound on the history list length: after --settle-secs, outside the view
    /// window and its drain, the history must stay below this. The default, 100,000, is about
    /// 15 s of commits at the ~7,000 updates/s this benchmark reaches on a 2-core machine,
    /// where a purge that keeps up holds the history in single digits: a purge that stops
    /// passes it within seconds, one that falls behind the updates by 3% or more passes it
    /// within a 10-minute run, and a purge thread starved for a few seconds by other work on
    /// the machine does not.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_history: u64,

    /// Steady-state bound on the growth of bench/purge.ibd, in percent of its size at
    /// --settle-secs. Growth while the view is open and until the history has drained is
    /// excluded (purge may not remove anything then; the file keeps those pages and reuses
    /// them). A file grows by 1/8 of its size at a time, so 10 allows no growth at all.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    max_growth_pct: f64,

    /// innodb_buffer_pool_size in MiB (one buffer pool instance).
    #[arg(
        long = "pool-mb",
        alias = "pool-mib",
        value_name = "MIB",
        default_value_t = 64
    )]
    pool_mb: u64,

    #[command(flatten)]
    engine: EngineOpts,

    /// innodb_purge_threads: threads that purge (1..32; MySQL's default is 4).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = value_parser!(u64).range(1..=32))]
    purge_threads: u64,

    /// innodb_max_purge_lag: above this history length each change is delayed, so that purge
    /// catches up (0, MySQL's default: never).
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_purge_lag: u64,

    /// Print a progress line every this many seconds (every sample goes to --json and --csv).
    #[arg(long, value_name = "SECS", default_value_t = 10,
          value_parser = value_parser!(u64).range(1..))]
    print_every: u64,

    /// Seed of the random ids and values, for repeatable runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// Also write the settings, every sample, the figures and the checks as JSON to this
    /// file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Also write the samples (one a second) as CSV to this file: t_s, updates,
    /// updates_per_s, history_len, ibd_bytes, ibdata1_bytes, purge_logs, purge_records,
    /// purge_batches, pool_reads (pages read from disk), view_open.
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,

    /// Give up (exit status 2) when nothing progresses for this many seconds: a stuck engine
    /// would otherwise hang the run. 0 disables the watchdog.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    stall_timeout: u64,
}

// ---------------------------------------------------------------------------------------------
// Helpers shared with rollback_bench.

/// A fresh data directory, removed at the end unless kept.
pub(crate) struct DataDir {
    pub path: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl DataDir {
    /// `given` must not exist or be empty; None makes a temporary directory under /tmp.
    pub fn new(given: Option<&Path>, prefix: &str) -> Result<DataDir> {
        match given {
            Some(d) => {
                match std::fs::read_dir(d) {
                    Ok(mut it) => {
                        if it.next().is_some() {
                            bail!(
                                "data directory {} is not empty; choose another --datadir",
                                d.display()
                            );
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e).with_context(|| format!("list {}", d.display())),
                }
                std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
                Ok(DataDir {
                    path: d.to_path_buf(),
                    temp: None,
                })
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix(prefix)
                    .tempdir_in("/tmp")
                    .context("create a temporary directory under /tmp")?;
                Ok(DataDir {
                    path: t.path().to_path_buf(),
                    temp: Some(t),
                })
            }
        }
    }

    /// What the watchdog removes if it gives up: only a temporary directory not to be kept.
    pub fn watchdog_cleanup(&self, keep: bool) -> Option<PathBuf> {
        (self.temp.is_some() && !keep).then(|| self.path.clone())
    }

    /// Removes the directory, or says where it was kept.
    pub fn finish(self, keep: bool, failed: bool) -> Result<()> {
        if keep || failed {
            let p = match self.temp {
                Some(t) => t.keep(),
                None => self.path,
            };
            if failed && !keep {
                println!("keeping {} for inspection: a check failed", p.display());
            } else {
                println!("kept data under {}", p.display());
            }
            return Ok(());
        }
        match self.temp {
            Some(t) => t.close().context("remove the temporary data directory"),
            None => std::fs::remove_dir_all(&self.path)
                .with_context(|| format!("remove {}", self.path.display())),
        }
    }
}

/// One result check with what it measured.
pub(crate) struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// The result checks of a run.
#[derive(Default)]
pub(crate) struct Checks(pub Vec<Check>);

impl Checks {
    pub fn add(&mut self, name: &str, ok: bool, detail: String) {
        self.0.push(Check {
            name: name.to_string(),
            ok,
            detail,
        });
    }

    /// The failed checks, as the messages `main` prints.
    pub fn failures(&self) -> Vec<String> {
        self.0
            .iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect()
    }

    pub fn print(&self) {
        println!("result checks:");
        for c in &self.0 {
            println!(
                "  [{}] {}: {}",
                if c.ok { " ok " } else { "FAIL" },
                c.name,
                c.detail
            );
        }
    }

    pub fn json(&self) -> Json {
        Json::Arr(
            self.0
                .iter()
                .map(|c| {
                    Json::obj([
                        ("name", Json::str(c.name.clone())),
                        ("ok", Json::Bool(c.ok)),
                        ("detail", Json::str(c.detail.clone())),
                    ])
                })
                .collect(),
        )
    }

    /// The checks, the failures and the verdict, as one JSON object.
    pub fn result_json(&self) -> Json {
        let failures = self.failures();
        Json::obj([
            ("checks", self.json()),
            ("passed", Json::Bool(failures.is_empty())),
            (
                "failures",
                Json::Arr(failures.into_iter().map(Json::Str).collect()),
            ),
        ])
    }

    /// Ends a run: writes `doc` to the --json path if one was given, keeps the data directory
    /// if asked or if a check failed, and returns the failures.
    pub fn finish(
        &self,
        json: Option<(&Path, Json)>,
        dir: DataDir,
        keep: bool,
    ) -> Result<Vec<String>> {
        if let Some((path, doc)) = json {
            write_json(path, &doc)?;
            println!("results written to {}", path.display());
        }
        let failures = self.failures();
        dir.finish(keep, !failures.is_empty())?;
        Ok(failures)
    }
}

/// A two-column table of figures.
pub(crate) fn figure_table(title: &str, rows: &[(String, String)]) -> String {
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0).max(6);
    let mut s = String::new();
    let _ = writeln!(s, "{title}");
    let _ = writeln!(s, "  {:<w$}  value", "figure");
    for (k, v) in rows {
        let _ = writeln!(s, "  {k:<w$}  {v}");
    }
    s
}

/// Size of a file in bytes (0 if it does not exist).
pub(crate) fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Checks that a --json or --csv path's directory exists before a long run starts.
pub(crate) fn check_out_dir(opt: &str, p: Option<&PathBuf>) -> Result<()> {
    if let Some(dir) = p.and_then(|p| p.parent()) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            bail!("{opt}: directory {} does not exist", dir.display());
        }
    }
    Ok(())
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes a JSON document (with a final newline).
pub(crate) fn write_json(path: &Path, doc: &Json) -> Result<()> {
    let mut s = String::new();
    doc.write(&mut s, 0);
    s.push('\n');
    std::fs::write(path, s).with_context(|| format!("write {}", path.display()))
}

/// Runs `Engine::check` and prints its result; Err(message) if it failed.
pub(crate) fn run_check(engine: &Engine) -> (std::result::Result<CheckReport, String>, f64) {
    let t = Instant::now();
    let r = engine.check().map_err(|e| e.to_string());
    let secs = t.elapsed().as_secs_f64();
    match &r {
        Ok(rep) => println!(
            "engine check: ok in {secs:.1} s ({} records, {} delete-marked, {} pages in use, \
             history {}, {} active undo logs)",
            rep.records, rep.delete_marked, rep.pages_in_use, rep.history_len, rep.active_undo_logs
        ),
        Err(e) => println!("engine check: FAILED in {secs:.1} s: {e}"),
    }
    (r, secs)
}

// ---------------------------------------------------------------------------------------------
// The purge benchmark.

fn table_def() -> TableDef {
    TableDef::new(
        TABLE,
        vec![
            ColumnDef::new("id", ColumnKind::INT),
            ColumnDef::new("k", ColumnKind::INT),
            ColumnDef::new("c", ColumnKind::Var { max_len: 120 }),
        ],
        Some(vec![0]),
    )
    .index("k", vec![1], false)
}

/// Engine settings shared by the purge and rollback benchmarks.
#[derive(Args, Debug, Clone)]
pub(crate) struct EngineOpts {
    /// innodb_page_size in bytes: 4096, 8192, 16384, 32768 or 65536.
    #[arg(long, value_name = "BYTES", default_value_t = 16384)]
    pub page_size: usize,

    /// innodb_log_file_size in MiB (the redo log has 2 such files; a big transaction writes
    /// several times this much redo, so checkpoints must advance while it is open).
    #[arg(long, value_name = "MIB", default_value_t = 48)]
    pub log_file_mib: u64,

    /// innodb_flush_log_at_trx_commit: 1 = write and fsync the redo log at every commit,
    /// 2 = write at commit and fsync about once a second, 0 = write and fsync about once a
    /// second.
    #[arg(long, value_name = "0|1|2", default_value_t = 1,
          value_parser = value_parser!(u8).range(0..=2))]
    pub trx_commit: u8,
}

impl EngineOpts {
    /// The engine configuration for a data directory and a pool of `pool_mb` MiB.
    pub(crate) fn config(&self, dir: &Path, pool_mb: u64) -> EngineConfig {
        let mut cfg = EngineConfig::new(dir);
        cfg.page_size = self.page_size;
        cfg.buffer_pool_size = pool_mb << 20;
        cfg.buffer_pool_instances = 1;
        cfg.log_file_size = self.log_file_mib << 20;
        cfg.log_files_in_group = 2;
        cfg.tunables.flush_log_at_trx_commit = self.trx_commit;
        cfg
    }
}

fn engine_config(args: &PurgeArgs, dir: &Path) -> EngineConfig {
    let mut cfg = args.engine.config(dir, args.pool_mb);
    cfg.purge_threads = args.purge_threads as usize;
    cfg.tunables.max_purge_lag = args.max_purge_lag;
    cfg
}

/// One sample, taken once a second.
#[derive(Clone, Debug)]
struct Sample {
    t: f64,
    /// Updates committed since the start.
    updates: u64,
    /// Updates committed per second since the previous sample.
    rate: f64,
    history: u64,
    ibd_bytes: u64,
    /// Size of ibdata1, the system tablespace, where the undo logs live.
    ibdata_bytes: u64,
    purge_logs: u64,
    purge_records: u64,
    purge_batches: u64,
    /// Pages read from disk into the buffer pool since the start (Innodb_buffer_pool_reads).
    pool_reads: u64,
    view_open: bool,
}

/// What the updater threads share with the sampler.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    updates: AtomicU64,
    /// Updates that found no row (the ids never change, so this must stay 0).
    missing: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Shared {
    fn error(&self, msg: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut e) = self.first_error.lock() {
            e.get_or_insert(msg);
        }
        // An engine error ends the run: the figures after it would mean nothing.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What the view thread did, published for the sampler.
#[derive(Default, Clone, Debug)]
struct ViewState {
    opened_at: Option<f64>,
    hist_at_open: u64,
    updates_at_open: u64,
    closed_at: Option<f64>,
    hist_at_close: u64,
    updates_at_close: u64,
    rows_read: usize,
    /// Rows that read differently at the end of the view than at its start.
    mismatches: usize,
    error: Option<String>,
}

/// Loads ids 1..=rows in transactions of 1000 rows.
fn load(engine: &Engine, t: &std::sync::Arc<Table>, rows: u64, seed: u64) -> Result<()> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let max = i64::try_from(rows).context("--rows does not fit an i64")?;
    let mut id = 1i64;
    while id <= max {
        let end = (id + 999).min(max);
        let mut trx = engine.begin();
        for i in id..=end {
            let row = [
                Value::Int(i),
                Value::Int(rng.random_range(1..=max)),
                Value::Bytes(workload::digits(&mut rng, 10)),
            ];
            trx.insert(t, &row)
                .with_context(|| format!("load: insert id {i}"))?;
        }
        trx.commit()
            .with_context(|| format!("load: commit ids {id}..={end}"))?;
        watchdog::beat();
        id = end + 1;
    }
    Ok(())
}

/// One updater: a transaction per update of a random row, until `stop`.
fn updater(engine: &Engine, t: &std::sync::Arc<Table>, rows: i64, seed: u64, sh: &Shared) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut n = 0u64;
    while !sh.stop.load(Ordering::Relaxed) {
        let id = rng.random_range(1..=rows);
        let k = rng.random_range(1..=rows);
        let c = workload::digits(&mut rng, 10);
        let mut trx = engine.begin();
        match trx.update(
            t,
            &[Value::Int(id)],
            &[(1, Value::Int(k)), (2, Value::Bytes(c))],
        ) {
            Ok(true) => {}
            Ok(false) => {
                sh.missing.fetch_add(1, Ordering::Relaxed);
                drop(trx);
                continue;
            }
            Err(e) => {
                sh.error(format!("update of id {id}: {e}"));
                break;
            }
        }
        if let Err(e) = trx.commit() {
            sh.error(format!("commit of the update of id {id}: {e}"));
            break;
        }
        sh.updates.fetch_add(1, Ordering::Relaxed);
        n += 1;
        if n.is_multiple_of(64) {
            watchdog::beat();
        }
    }
}

/// The view thread: at `open_at` seconds it starts a REPEATABLE READ transaction with a
/// consistent snapshot, reads some rows, keeps the view for `secs`, reads them again (they must
/// not have changed for it) and commits.
#[allow(clippy::too_many_arguments)]
fn view_holder(
    engine: &Engine,
    t: &std::sync::Arc<Table>,
    rows: i64,
    start: Instant,
    open_at: f64,
    secs: f64,
    sh: &Shared,
    vs: &Mutex<ViewState>,
) {
    let sleep_until = |at: f64| {
        while !sh.stop.load(Ordering::Relaxed) && start.elapsed().as_secs_f64() < at {
            std::thread::sleep(Duration::from_millis(20));
        }
        !sh.stop.load(Ordering::Relaxed)
    };
    if !sleep_until(open_at) {
        return;
    }
    let step = (rows / VIEW_SAMPLE_ROWS).max(1);
    let ids: Vec<i64> = (0..VIEW_SAMPLE_ROWS)
        .map(|i| 1 + i * step)
        .filter(|&i| i <= rows)
        .collect();
    let fail = |msg: String| {
        if let Ok(mut v) = vs.lock() {
            v.error.get_or_insert(msg);
        }
    };
    let mut r = engine.begin();
    r.set_isolation(Isolation::RepeatableRead);
    r.start_consistent_snapshot();
    let opened = start.elapsed().as_secs_f64();
    let hist = engine.inner().trx.history_len.load(Ordering::Relaxed);
    let updates = sh.updates.load(Ordering::Relaxed);
    let mut first = Vec::with_capacity(ids.len());
    for &id in &ids {
        match r.get(t, &[Value::Int(id)]) {
            Ok(row) => first.push(row),
            Err(e) => {
                fail(format!("read of id {id} in the read view: {e}"));
                return;
            }
        }
    }
    if let Ok(mut v) = vs.lock() {
        v.opened_at = Some(opened);
        v.hist_at_open = hist;
        v.updates_at_open = updates;
    }
    sleep_until(opened + secs);
    let mut mismatches = 0;
    for (&id, before) in ids.iter().zip(&first) {
        match r.get(t, &[Value::Int(id)]) {
            Ok(row) if row == *before => {}
            Ok(_) => mismatches += 1,
            Err(e) => {
                fail(format!("second read of id {id} in the read view: {e}"));
                mismatches += 1;
            }
        }
    }
    let hist = engine.inner().trx.history_len.load(Ordering::Relaxed);
    let updates = sh.updates.load(Ordering::Relaxed);
    if let Err(e) = r.commit() {
        fail(format!("commit of the read-view transaction: {e}"));
    }
    if let Ok(mut v) = vs.lock() {
        v.closed_at = Some(start.elapsed().as_secs_f64());
        v.hist_at_close = hist;
        v.updates_at_close = updates;
        v.rows_read = ids.len();
        v.mismatches = mismatches;
    }
}

/// What the sampler saw of the view and of the steady state.
#[derive(Default, Debug)]
struct Tracking {
    /// Highest history in the PRE_VIEW_SECS before the view opened, and at its opening.
    pre_level: Option<u64>,
    /// Highest history while the view was open (and at its close).
    peak: u64,
    peak_at: f64,
    /// Seconds from the view's close until the history was back at the pre-view level.
    drain_secs: Option<f64>,
    drained_at: Option<f64>,
    /// History at the end of the drain.
    hist_at_drain: u64,
    /// .ibd sizes at --settle-secs, at the view's opening, at the end of the drain.
    ibd_settle: Option<u64>,
    ibd_view_open: Option<u64>,
    ibd_drained: Option<u64>,
    /// ibdata1 sizes at the view's opening and close.
    ibdata_view_open: Option<u64>,
    ibdata_view_close: Option<u64>,
    /// Highest history in the steady state, and when.
    steady_max: u64,
    steady_max_at: f64,
    steady_ticks: u64,
    /// Updates and seconds in the steady state (for the mean rate), and during the view.
    steady_updates: u64,
    steady_secs: f64,
    view_updates: u64,
    view_secs: f64,
    /// Updates and seconds from the view's close to the end of the drain.
    drain_updates: u64,
    drain_period: f64,
}

fn history(engine: &Engine) -> u64 {
    engine.inner().trx.history_len.load(Ordering::Relaxed)
}

fn take_sample(
    engine: &Engine,
    ibd: &Path,
    ibdata: &Path,
    t: f64,
    sh: &Shared,
    prev: Option<&Sample>,
) -> Sample {
    let ps = &engine.inner().purge_stats;
    let updates = sh.updates.load(Ordering::Relaxed);
    let rate = match prev {
        Some(p) if t > p.t => (updates - p.updates) as f64 / (t - p.t),
        _ => 0.0,
    };
    Sample {
        t,
        updates,
        rate,
        history: history(engine),
        ibd_bytes: file_len(ibd),
        ibdata_bytes: file_len(ibdata),
        purge_logs: ps.logs.load(Ordering::Relaxed),
        purge_records: ps.records.load(Ordering::Relaxed),
        purge_batches: ps.batches.load(Ordering::Relaxed),
        pool_reads: engine.inner().bp.stats.reads.get(),
        view_open: false,
    }
}

fn print_header() {
    println!(
        "{:>7} {:>10} {:>9} {:>10} {:>11} {:>13} {:>13} {:>10} {:>12}  view",
        "t (s)",
        "updates/s",
        "history",
        "purge.ibd",
        "ibdata1",
        "purged logs/s",
        "undo recs/s",
        "batches/s",
        "page reads/s"
    );
}

fn print_sample(s: &Sample, prev: &Sample) {
    let dt = (s.t - prev.t).max(1e-9);
    let per = |a: u64, b: u64| a.saturating_sub(b) as f64 / dt;
    println!(
        "{:>7.0} {:>10.0} {:>9} {:>10} {:>11} {:>13.0} {:>13.0} {:>10.1} {:>12.0}  {}",
        s.t,
        (s.updates - prev.updates) as f64 / dt,
        s.history,
        mib(s.ibd_bytes),
        mib(s.ibdata_bytes),
        per(s.purge_logs, prev.purge_logs),
        per(s.purge_records, prev.purge_records),
        per(s.purge_batches, prev.purge_batches),
        per(s.pool_reads, prev.pool_reads),
        if s.view_open { "open" } else { "-" }
    );
}

fn write_csv(path: &Path, samples: &[Sample]) -> Result<()> {
    let mut s = String::from(
        "t_s,updates,updates_per_s,history_len,ibd_bytes,ibdata1_bytes,purge_logs,\
         purge_records,purge_batches,pool_reads,view_open\n",
    );
    for x in samples {
        let _ = writeln!(
            s,
            "{:.3},{},{:.1},{},{},{},{},{},{},{},{}",
            x.t,
            x.updates,
            x.rate,
            x.history,
            x.ibd_bytes,
            x.ibdata_bytes,
            x.purge_logs,
            x.purge_records,
            x.purge_batches,
            x.pool_reads,
            u8::from(x.view_open)
        );
    }
    std::fs::write(path, s).with_context(|| format!("write {}", path.display()))
}

/// Runs the benchmark; returns the failed result checks (empty when all passed).
pub fn run(args: &PurgeArgs) -> Result<Vec<String>> {
    if args.rows == 0 {
        bail!("--rows must be at least 1");
    }
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if !(args.minutes > 0.0 && args.minutes.is_finite()) {
        bail!("--minutes must be a positive number");
    }
    let duration = args.minutes * 60.0;
    if args.settle_secs as f64 >= duration {
        bail!(
            "--settle-secs ({}) must be shorter than the run ({duration:.0} s)",
            args.settle_secs
        );
    }
    let view = args.view_secs > 0;
    if view {
        if args.view_at < args.settle_secs {
            bail!(
                "--view-at ({}) must not be before --settle-secs ({})",
                args.view_at,
                args.settle_secs
            );
        }
        if (args.view_at + args.view_secs) as f64 >= duration {
            bail!(
                "the read view (--view-at {} + --view-secs {}) must close before the run ends \
                 ({duration:.0} s), with time left for the history to drain",
                args.view_at,
                args.view_secs
            );
        }
    }
    if !(args.max_growth_pct >= 0.0 && args.max_growth_pct.is_finite()) {
        bail!("--max-growth-pct must be 0 or a positive number");
    }
    check_out_dir("--json", args.json.as_ref())?;
    check_out_dir("--csv", args.csv.as_ref())?;
    let rows = i64::try_from(args.rows).context("--rows does not fit an i64")?;
    let started_unix = unix_now();
    let dir = DataDir::new(args.datadir.as_deref(), "innoxide-purge-")?;
    watchdog::start(
        Duration::from_secs(args.stall_timeout),
        dir.watchdog_cleanup(args.keep),
    );
    println!(
        "innoxide-bench purge: {} rows, {} updater thread(s) for {:.1} min, pool {} MiB, \
         trx_commit {}, {} purge thread(s), data in {}",
        args.rows,
        args.threads,
        args.minutes,
        args.pool_mb,
        args.engine.trx_commit,
        args.purge_threads,
        dir.path.display()
    );
    if view {
        println!(
            "read view: open at {} s for {} s; steady-state checks from {} s: history < {}, \
             .ibd growth <= {}%",
            args.view_at, args.view_secs, args.settle_secs, args.max_history, args.max_growth_pct
        );
    } else {
        println!("read view: none (--view-secs 0)");
    }

    watchdog::phase("purge: open the engine");
    let engine = Engine::open(engine_config(args, &dir.path))
        .with_context(|| format!("open the engine in {}", dir.path.display()))?;
    let table = engine
        .create_table(table_def())
        .context("create the benchmark table")?;
    let ibd = dir.path.join(format!("{TABLE}.ibd"));
    let ibdata = dir.path.join("ibdata1");
    watchdog::phase("purge: load");
    let t0 = Instant::now();
    load(&engine, &table, args.rows, args.seed)?;
    engine
        .flush_and_checkpoint()
        .context("flush after the load")?;
    let ibd_loaded = file_len(&ibd);
    let ibdata_loaded = file_len(&ibdata);
    println!(
        "load: {} rows in {:.1} s; {} is {}",
        args.rows,
        t0.elapsed().as_secs_f64(),
        ibd.display(),
        mib(ibd_loaded)
    );
    if ibd_loaded == 0 {
        bail!("the table's file {} is missing or empty", ibd.display());
    }
    let purge0 = (
        engine.inner().purge_stats.logs.load(Ordering::Relaxed),
        engine.inner().purge_stats.records.load(Ordering::Relaxed),
    );

    // The run: updaters, the view holder, and this thread sampling.
    let sh = Shared::default();
    let vs = Mutex::new(ViewState::default());
    let mut samples: Vec<Sample> = Vec::new();
    let mut tr = Tracking::default();
    let mut ring: VecDeque<(f64, u64)> = VecDeque::new();
    let mut events: Vec<String> = Vec::new();
    watchdog::phase("purge: updates");
    println!();
    print_header();
    let start = Instant::now();
    std::thread::scope(|s| {
        for th in 0..args.threads {
            let (engine, table, sh) = (&engine, &table, &sh);
            let seed = args.seed ^ ((th as u64 + 1) << 32);
            s.spawn(move || updater(engine, table, rows, seed, sh));
        }
        if view {
            let (engine, table, sh, vs) = (&engine, &table, &sh, &vs);
            let (at, secs) = (args.view_at as f64, args.view_secs as f64);
            s.spawn(move || view_holder(engine, table, rows, start, at, secs, sh, vs));
        }
        let first = take_sample(&engine, &ibd, &ibdata, 0.0, &sh, None);
        samples.push(first);
        let mut next = 1u64;
        let mut seen_open = false;
        let mut seen_close = false;
        let mut last_tick = (0.0, 0u64);
        loop {
            let now = start.elapsed().as_secs_f64();
            let h = history(&engine);
            let v = vs.lock().map(|v| v.clone()).unwrap_or_default();
            let upd = sh.updates.load(Ordering::Relaxed);
            let (dt, du) = (now - last_tick.0, upd.saturating_sub(last_tick.1));
            last_tick = (now, upd);
            // The view: its opening, its peak, its close and the drain after it.
            if let (Some(opened), false) = (v.opened_at, seen_open) {
                seen_open = true;
                let pre = ring
                    .iter()
                    .filter(|(t, _)| *t >= opened - PRE_VIEW_SECS)
                    .map(|&(_, h)| h)
                    .max()
                    .unwrap_or(0)
                    .max(v.hist_at_open);
                tr.pre_level = Some(pre);
                tr.ibd_view_open = Some(file_len(&ibd));
                tr.ibdata_view_open = Some(file_len(&ibdata));
                let e = format!(
                    "t={opened:.1} s: read view opened (history {}; pre-view level {pre} = the \
                     highest in the {PRE_VIEW_SECS:.0} s before)",
                    v.hist_at_open
                );
                println!("{e}");
                events.push(e);
            }
            let view_open = seen_open && !seen_close;
            if view_open {
                if h > tr.peak {
                    tr.peak = h;
                    tr.peak_at = now;
                }
                tr.view_updates += du;
                tr.view_secs += dt;
            }
            if let (Some(closed), false) = (v.closed_at, seen_close) {
                seen_close = true;
                tr.ibdata_view_close = Some(file_len(&ibdata));
                if v.hist_at_close > tr.peak {
                    tr.peak = v.hist_at_close;
                    tr.peak_at = closed;
                }
                let e = format!(
                    "t={closed:.1} s: read view closed after {:.1} s (history {}; {} commits \
                     while it was open; {} rows re-read, {} differed)",
                    closed - v.opened_at.unwrap_or(closed),
                    v.hist_at_close,
                    v.updates_at_close - v.updates_at_open,
                    v.rows_read,
                    v.mismatches
                );
                println!("{e}");
                events.push(e);
            }
            if seen_close && tr.drained_at.is_none() {
                tr.drain_updates += du;
                tr.drain_period += dt;
            }
            if let (Some(closed), None, Some(pre)) = (v.closed_at, tr.drain_secs, tr.pre_level) {
                if h <= pre {
                    tr.drain_secs = Some(now - closed);
                    tr.drained_at = Some(now);
                    tr.hist_at_drain = h;
                    tr.ibd_drained = Some(file_len(&ibd));
                    let e = format!(
                        "t={now:.1} s: history {h} is back at the pre-view level {pre}, {:.1} s \
                         after the view closed",
                        now - closed
                    );
                    println!("{e}");
                    events.push(e);
                }
            }
            // The steady state: after settling, before the view or after its drain.
            if now >= args.settle_secs as f64 {
                if tr.ibd_settle.is_none() {
                    tr.ibd_settle = Some(file_len(&ibd));
                }
                if !seen_open || tr.drained_at.is_some() {
                    tr.steady_ticks += 1;
                    tr.steady_updates += du;
                    tr.steady_secs += dt;
                    if h >= tr.steady_max {
                        tr.steady_max = h;
                        tr.steady_max_at = now;
                    }
                }
            }
            ring.push_back((now, h));
            while ring
                .front()
                .is_some_and(|&(t, _)| t < now - PRE_VIEW_SECS - 1.0)
            {
                ring.pop_front();
            }
            if now >= next as f64 {
                let mut x = take_sample(&engine, &ibd, &ibdata, now, &sh, samples.last());
                x.view_open = view_open;
                if next.is_multiple_of(args.print_every) {
                    let back = args.print_every as usize;
                    let prev = &samples[samples.len().saturating_sub(back)];
                    print_sample(&x, prev);
                }
                samples.push(x);
                next += 1;
            }
            if now >= duration || sh.stop.load(Ordering::Relaxed) {
                break;
            }
            let until_next = next as f64 - start.elapsed().as_secs_f64();
            std::thread::sleep(Duration::from_secs_f64(until_next.clamp(0.001, 0.1)));
        }
        sh.stop.store(true, Ordering::Relaxed);
    });
    let run_secs = start.elapsed().as_secs_f64();
    let ibd_end = file_len(&ibd);
    let ibdata_end = file_len(&ibdata);
    let hist_end = history(&engine);
    let updates = sh.updates.load(Ordering::Relaxed);
    let v = vs.lock().map(|v| v.clone()).unwrap_or_default();
    println!(
        "updates stopped after {run_secs:.1} s: {updates} committed ({:.0}/s); history {hist_end}, \
         {} is {}",
        updates as f64 / run_secs.max(1e-9),
        ibd.display(),
        mib(ibd_end)
    );

    // The background purge empties the history once the updates stop.
    watchdog::phase("purge: final drain by the background purge");
    let t = Instant::now();
    let mut final_drain = None;
    while t.elapsed().as_secs_f64() < FINAL_DRAIN_SECS {
        if history(&engine) == 0 {
            final_drain = Some(t.elapsed().as_secs_f64());
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        watchdog::beat();
    }
    match final_drain {
        Some(s) => {
            println!("the background purge emptied the history {s:.1} s after the updates stopped")
        }
        None => println!(
            "the background purge did not empty the history within {FINAL_DRAIN_SECS:.0} s \
             after the updates stopped: {} left",
            history(&engine)
        ),
    }

    // Verification.
    watchdog::phase("purge: row count");
    let counted = workload::count_rows(&engine, &table)?;
    println!("row count: {counted} (expected {})", args.rows);
    watchdog::phase("purge: purge_all and Engine::check");
    let purged_at_end = engine.purge_all();
    if let Err(e) = &purged_at_end {
        println!("purge_all before the check failed: {e}");
    }
    let (check, check_secs) = run_check(&engine);
    let purge_logs = engine.inner().purge_stats.logs.load(Ordering::Relaxed) - purge0.0;
    let purge_records = engine.inner().purge_stats.records.load(Ordering::Relaxed) - purge0.1;
    let purge_errors = engine.inner().purge_stats.errors.load(Ordering::Relaxed);
    drop(table);
    watchdog::phase("purge: shutdown");
    let shutdown = engine.shutdown();

    // Checks.
    let mut checks = Checks::default();
    let errors = sh.errors.load(Ordering::Relaxed);
    let missing = sh.missing.load(Ordering::Relaxed);
    let first_error = sh.first_error.lock().ok().and_then(|e| e.clone());
    checks.add(
        "updates",
        errors == 0 && missing == 0,
        format!(
            "{updates} committed, {errors} failed{}, {missing} found no row",
            first_error.map_or(String::new(), |e| format!(" (first: {e})"))
        ),
    );
    let ran_full = run_secs >= duration - 1.0;
    if !ran_full {
        checks.add(
            "run length",
            false,
            format!("the updates ran {run_secs:.0} s of {duration:.0} s"),
        );
    }
    checks.add(
        "steady history",
        tr.steady_max < args.max_history,
        format!(
            "highest {} (at {:.0} s) over {} steady-state ticks, bound {}",
            tr.steady_max, tr.steady_max_at, tr.steady_ticks, args.max_history
        ),
    );
    let ibd_settle = tr.ibd_settle.unwrap_or(ibd_end);
    let (steady_growth, view_growth) = match (tr.ibd_view_open, tr.ibd_drained) {
        (Some(o), Some(d)) => (
            o.saturating_sub(ibd_settle) + ibd_end.saturating_sub(d),
            d.saturating_sub(o),
        ),
        (Some(o), None) => (o.saturating_sub(ibd_settle), ibd_end.saturating_sub(o)),
        _ => (ibd_end.saturating_sub(ibd_settle), 0),
    };
    let pct = |b: u64| 100.0 * b as f64 / ibd_settle.max(1) as f64;
    checks.add(
        "steady .ibd size",
        pct(steady_growth) <= args.max_growth_pct,
        format!(
            "{} at {} s, {} at the end: grew {} = {:.1}% outside the view window and its \
             drain (bound {}%), {} during them",
            mib(ibd_settle),
            args.settle_secs,
            mib(ibd_end),
            mib(steady_growth),
            pct(steady_growth),
            args.max_growth_pct,
            mib(view_growth)
        ),
    );
    let window_commits = v.updates_at_close.saturating_sub(v.updates_at_open);
    if view {
        match (v.opened_at, v.closed_at, tr.pre_level) {
            (Some(_), Some(_), Some(pre)) => {
                let need = pre + window_commits / 2;
                checks.add(
                    "history grows under the view",
                    tr.peak > need,
                    format!(
                        "peak {} (pre-view level {pre}, {window_commits} commits in the window; \
                         must exceed {need})",
                        tr.peak
                    ),
                );
                checks.add(
                    "history drains after the view",
                    tr.drain_secs.is_some(),
                    match tr.drain_secs {
                        Some(d) => format!("back to {pre} or below {d:.1} s after the close"),
                        None => format!(
                            "still {hist_end} at the end, above the pre-view level {pre}, {:.0} s \
                             after the close",
                            run_secs - v.closed_at.unwrap_or(run_secs)
                        ),
                    },
                );
                checks.add(
                    "read view is consistent",
                    v.mismatches == 0 && v.error.is_none(),
                    format!(
                        "{} rows read at the view's start and end, {} differed{}",
                        v.rows_read,
                        v.mismatches,
                        v.error
                            .as_ref()
                            .map_or(String::new(), |e| format!("; error: {e}"))
                    ),
                );
            }
            _ => checks.add(
                "read view",
                false,
                format!(
                    "the view did not open and close as planned{}",
                    v.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
                ),
            ),
        }
    }
    checks.add(
        "row count",
        counted == args.rows,
        format!("{counted} rows, expected {}", args.rows),
    );
    match &purged_at_end {
        Ok(_) => {}
        Err(e) => checks.add("purge_all", false, format!("failed: {e}")),
    }
    checks.add(
        "purge errors",
        purge_errors == 0,
        format!("{purge_errors} purge batches failed"),
    );
    checks.add(
        "Engine::check",
        check.is_ok(),
        match &check {
            Ok(r) => format!(
                "ok: {} records, {} delete-marked, history {}",
                r.records, r.delete_marked, r.history_len
            ),
            Err(e) => e.clone(),
        },
    );
    if let Err(e) = &shutdown {
        checks.add("shutdown", false, format!("failed: {e}"));
    }

    // Summary.
    let steady_rate = tr.steady_updates as f64 / tr.steady_secs.max(1e-9);
    let view_rate = tr.view_updates as f64 / tr.view_secs.max(1e-9);
    let drain_rate = tr.drain_updates as f64 / tr.drain_period.max(1e-9);
    let opt = |x: Option<String>| x.unwrap_or_else(|| "-".to_string());
    let mut fig: Vec<(String, String)> = vec![
        (
            "updates committed".into(),
            format!("{updates} in {run_secs:.0} s"),
        ),
        (
            "updates/s (all, steady, view open, drain)".into(),
            format!(
                "{:.0}, {steady_rate:.0}, {}",
                updates as f64 / run_secs.max(1e-9),
                if view {
                    format!("{view_rate:.0}, {drain_rate:.0}")
                } else {
                    "-, -".into()
                }
            ),
        ),
        (
            "history: steady-state max".into(),
            format!(
                "{} (at {:.0} s; bound {})",
                tr.steady_max, tr.steady_max_at, args.max_history
            ),
        ),
        (
            "history at the end of the updates".into(),
            hist_end.to_string(),
        ),
        (
            "purge: undo logs, undo records".into(),
            format!("{purge_logs}, {purge_records}"),
        ),
        (
            "history emptied after the updates in".into(),
            opt(final_drain.map(|s| format!("{s:.1} s"))),
        ),
        ("purge.ibd after the load".into(), mib(ibd_loaded)),
        (
            format!("purge.ibd at {} s", args.settle_secs),
            mib(ibd_settle),
        ),
        ("purge.ibd at the end".into(), mib(ibd_end)),
        (
            "ibdata1 (undo logs): after the load, at the end".into(),
            format!("{}, {}", mib(ibdata_loaded), mib(ibdata_end)),
        ),
        (
            "purge.ibd growth: steady, view window".into(),
            format!(
                "{} ({:.1}%), {} ({:.1}%)",
                mib(steady_growth),
                pct(steady_growth),
                mib(view_growth),
                pct(view_growth)
            ),
        ),
    ];
    if view {
        fig.extend([
            (
                "view: opened, closed at".into(),
                format!(
                    "{} s, {} s",
                    opt(v.opened_at.map(|x| format!("{x:.1}"))),
                    opt(v.closed_at.map(|x| format!("{x:.1}")))
                ),
            ),
            (
                "view: history at open, pre-view level".into(),
                format!(
                    "{}, {}",
                    v.hist_at_open,
                    opt(tr.pre_level.map(|x| x.to_string()))
                ),
            ),
            (
                "view: peak history".into(),
                format!("{} (at {:.1} s)", tr.peak, tr.peak_at),
            ),
            (
                "view: commits while open".into(),
                window_commits.to_string(),
            ),
            (
                "view: ibdata1 growth (per commit)".into(),
                match (tr.ibdata_view_open, tr.ibdata_view_close) {
                    (Some(o), Some(c)) => format!(
                        "{} ({:.0} bytes)",
                        mib(c.saturating_sub(o)),
                        c.saturating_sub(o) as f64 / window_commits.max(1) as f64
                    ),
                    _ => "-".into(),
                },
            ),
            (
                "view: drain time after close".into(),
                opt(tr.drain_secs.map(|d| format!("{d:.1} s"))),
            ),
        ]);
    }
    fig.push((
        "row count, Engine::check".into(),
        format!(
            "{counted}, {} ({check_secs:.1} s)",
            if check.is_ok() { "ok" } else { "FAILED" }
        ),
    ));
    println!();
    print!("{}", figure_table("summary", &fig));
    checks.print();

    if let Some(path) = &args.csv {
        write_csv(path, &samples)?;
        println!("samples written to {}", path.display());
    }
    let json = args.json.as_deref().map(|path| {
        let num = |x: u64| Json::Num(x as f64);
        let onum = |x: Option<f64>| x.map_or(Json::Null, Json::Num);
        let settings = Json::obj([
            ("rows", num(args.rows)),
            ("threads", num(args.threads as u64)),
            ("minutes", Json::Num(args.minutes)),
            ("settle_secs", num(args.settle_secs)),
            ("view_at", num(args.view_at)),
            ("view_secs", num(args.view_secs)),
            ("max_history", num(args.max_history)),
            ("max_growth_pct", Json::Num(args.max_growth_pct)),
            ("pool_mib", num(args.pool_mb)),
            ("page_size", num(args.engine.page_size as u64)),
            ("log_file_mib", num(args.engine.log_file_mib)),
            ("trx_commit", num(u64::from(args.engine.trx_commit))),
            ("purge_threads", num(args.purge_threads)),
            ("max_purge_lag", num(args.max_purge_lag)),
            ("seed", num(args.seed)),
        ]);
        let sample_json = samples
            .iter()
            .map(|x| {
                Json::obj([
                    ("t", Json::Num((x.t * 1000.0).round() / 1000.0)),
                    ("updates", num(x.updates)),
                    ("updates_per_s", Json::Num(x.rate.round())),
                    ("history_len", num(x.history)),
                    ("ibd_bytes", num(x.ibd_bytes)),
                    ("ibdata1_bytes", num(x.ibdata_bytes)),
                    ("purge_logs", num(x.purge_logs)),
                    ("purge_records", num(x.purge_records)),
                    ("purge_batches", num(x.purge_batches)),
                    ("pool_reads", num(x.pool_reads)),
                    ("view_open", Json::Bool(x.view_open)),
                ])
            })
            .collect();
        let view_json = if view {
            Json::obj([
                ("opened_at", onum(v.opened_at)),
                ("closed_at", onum(v.closed_at)),
                ("history_at_open", num(v.hist_at_open)),
                ("pre_view_level", tr.pre_level.map_or(Json::Null, num)),
                ("peak_history", num(tr.peak)),
                ("peak_at", Json::Num(tr.peak_at)),
                ("history_at_close", num(v.hist_at_close)),
                ("commits_while_open", num(window_commits)),
                ("updates_per_s_while_open", Json::Num(view_rate)),
                ("updates_per_s_during_drain", Json::Num(drain_rate)),
                ("drain_secs", onum(tr.drain_secs)),
                (
                    "ibdata1_bytes_at_open",
                    tr.ibdata_view_open.map_or(Json::Null, num),
                ),
                (
                    "ibdata1_bytes_at_close",
                    tr.ibdata_view_close.map_or(Json::Null, num),
                ),
                ("rows_reread", num(v.rows_read as u64)),
                ("rows_differing", num(v.mismatches as u64)),
            ])
        } else {
            Json::Null
        };
        let doc = Json::obj([
            ("benchmark", Json::str("purge")),
            ("started_unix", num(started_unix)),
            ("settings", settings),
            ("samples", Json::Arr(sample_json)),
            (
                "events",
                Json::Arr(events.iter().map(|e| Json::str(e.clone())).collect()),
            ),
            (
                "figures",
                Json::obj([
                    ("run_secs", Json::Num(run_secs)),
                    ("updates", num(updates)),
                    (
                        "updates_per_s",
                        Json::Num(updates as f64 / run_secs.max(1e-9)),
                    ),
                    ("steady_updates_per_s", Json::Num(steady_rate)),
                    ("steady_history_max", num(tr.steady_max)),
                    ("steady_history_max_at", Json::Num(tr.steady_max_at)),
                    ("history_at_end", num(hist_end)),
                    ("final_drain_secs", onum(final_drain)),
                    ("purge_logs", num(purge_logs)),
                    ("purge_records", num(purge_records)),
                    ("ibd_bytes_loaded", num(ibd_loaded)),
                    ("ibd_bytes_settled", num(ibd_settle)),
                    ("ibd_bytes_end", num(ibd_end)),
                    ("ibdata1_bytes_loaded", num(ibdata_loaded)),
                    ("ibdata1_bytes_end", num(ibdata_end)),
                    ("ibd_growth_steady_bytes", num(steady_growth)),
                    ("ibd_growth_view_bytes", num(view_growth)),
                    ("rows_counted", num(counted)),
                    ("check_secs", Json::Num(check_secs)),
                ]),
            ),
            ("view", view_json),
            ("result", checks.result_json()),
        ]);
        (path, doc)
    });
    checks.finish(json, dir, args.keep)
}
