//! `innoxide-bench rollback`: rollback of one transaction that changed every row of a large
//! table.
//!
//! It loads `--rows` rows (1,000,000 by default) into the sysbench-like table in committed
//! batches, computes the row count and a checksum of every row with a full primary-key scan,
//! then in ONE transaction updates (new `k` and `c`), deletes, or inserts as many new rows as
//! the table has (`--op`), and rolls that transaction back. It times the change and the
//! rollback, and measures the undo they needed (growth of ibdata1, where undo logs live) and
//! the redo they wrote.
//!
//! Result checks (exit status 1 on failure): every change succeeded and was visible to the
//! transaction itself; after the rollback the table has the same rows, byte for byte (row
//! count and checksum of a full scan; the `k` index returns the same rows); `Engine::check`
//! passes and finds no delete-marked record left; the history list did not grow.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{value_parser, Args, ValueEnum};
use innoxide_engine::{Engine, EngineConfig, KeyBound, Table, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::purge_bench::{
    check_out_dir, figure_table, file_len, run_check, unix_now, Checks, DataDir, EngineOpts,
};
use crate::report::{mib, Json};
use crate::watchdog;
use crate::workload;

/// Rows whose changed version the transaction reads back before rolling back.
const SAMPLE_ROWS: u64 = 100;

#[derive(Args, Debug, Clone)]
pub struct RollbackArgs {
    /// The data directory. It must not exist or be empty. Default: a new temporary directory
    /// under /tmp. Either way it is removed at the end unless --keep is given or a check
    /// failed (then it is kept for inspection and its path printed).
    #[arg(long, value_name = "DIR")]
    datadir: Option<PathBuf>,

    /// Keep the data directory after the run.
    #[arg(long)]
    keep: bool,

    /// Rows loaded into `bench/t (id BIGINT PRIMARY KEY, k INT, c VARCHAR(120),
    /// pad VARCHAR(60), KEY k (k))`, ids 1..=ROWS; the transaction changes this many rows.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    rows: u64,

    /// What the transaction does before it is rolled back: "update" sets k and c of every
    /// row (the k index gets a new entry and a delete-marked old one per row), "delete"
    /// deletes every row, "insert" inserts --rows new rows (ids ROWS+1..=2*ROWS).
    #[arg(long, value_enum, default_value_t = Op::Update)]
    op: Op,

    /// innodb_buffer_pool_size in MiB (one buffer pool instance).
    #[arg(
        long = "pool-mb",
        alias = "pool-mib",
        value_name = "MIB",
        default_value_t = 256
    )]
    pool_mb: u64,

    #[command(flatten)]
    engine: EngineOpts,

    /// Rows per transaction when loading.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    insert_batch: usize,

    /// Threads loading the table, each inserting its own contiguous range of ids.
    #[arg(long, value_name = "N", default_value_t = 2)]
    load_threads: usize,

    /// Print a progress line every this many seconds during the scans, the change and the
    /// rollback.
    #[arg(long, value_name = "SECS", default_value_t = 10,
          value_parser = value_parser!(u64).range(1..))]
    progress_secs: u64,

    /// Seed of the random values, for repeatable runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// Also write the settings, the figures and the checks as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Give up (exit status 2) when nothing progresses for this many seconds: a stuck engine
    /// would otherwise hang the run. During the rollback, which is one call, any redo written
    /// counts as progress. 0 disables the watchdog.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    stall_timeout: u64,
}

/// The change made by the transaction that is rolled back.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Set k and c of every row.
    Update,
    /// Delete every row.
    Delete,
    /// Insert as many new rows as the table has.
    Insert,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Update => "update",
            Op::Delete => "delete",
            Op::Insert => "insert",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Op::Update => "updated",
            Op::Delete => "deleted",
            Op::Insert => "inserted",
        }
    }
}

fn engine_config(args: &RollbackArgs, dir: &Path) -> EngineConfig {
    args.engine.config(dir, args.pool_mb)
}

/// FNV-1a, 64 bits: a checksum that depends on every byte of every row and on their order.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn row(&mut self, row: &[Value]) {
        self.bytes(&(row.len() as u32).to_le_bytes());
        for v in row {
            match v {
                Value::Null => self.bytes(&[0]),
                Value::Int(i) => {
                    self.bytes(&[1]);
                    self.bytes(&i.to_le_bytes());
                }
                Value::UInt(u) => {
                    self.bytes(&[2]);
                    self.bytes(&u.to_le_bytes());
                }
                Value::Float(f) => {
                    self.bytes(&[3]);
                    self.bytes(&f.to_bits().to_le_bytes());
                }
                Value::Double(f) => {
                    self.bytes(&[4]);
                    self.bytes(&f.to_bits().to_le_bytes());
                }
                Value::Bytes(b) => {
                    self.bytes(&[5]);
                    self.bytes(&(b.len() as u32).to_le_bytes());
                    self.bytes(b);
                }
            }
        }
    }
}

/// What a full scan of the table found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Contents {
    /// Rows through the primary key, and the checksum of all of them in id order.
    rows: u64,
    checksum: u64,
    /// Rows through the k index, with the sums of their ids and ks (the order differs).
    k_rows: u64,
    k_id_sum: i128,
    k_k_sum: i128,
    /// The same sums over the primary-key scan, to compare with the k index's.
    id_sum: i128,
    k_sum: i128,
}

/// Scans the table through the primary key (checksumming every row) and through the k index.
fn contents(
    engine: &Engine,
    table: &Arc<Table>,
    label: &str,
    progress: Duration,
) -> Result<(Contents, f64)> {
    watchdog::phase(format!("rollback: scan {label}"));
    let t0 = Instant::now();
    let mut last_print = Instant::now();
    let mut trx = engine.begin();
    let mut h = Fnv::new();
    let (mut rows, mut id_sum, mut k_sum) = (0u64, 0i128, 0i128);
    let mut last: Option<i64> = None;
    for row in trx
        .scan(table, None, KeyBound::Unbounded, KeyBound::Unbounded, true)
        .context("start the primary key scan")?
    {
        let row = row.context("primary key scan")?;
        let (Some(id), Some(k)) = (
            row.first().and_then(Value::as_i64),
            row.get(1).and_then(Value::as_i64),
        ) else {
            bail!("the primary key scan returned a row without integer id and k: {row:?}");
        };
        if last.is_some_and(|l| l >= id) {
            bail!("primary key scan out of order: id {id} after {last:?}");
        }
        last = Some(id);
        h.row(&row);
        rows += 1;
        id_sum += i128::from(id);
        k_sum += i128::from(k);
        if rows.is_multiple_of(65536) {
            watchdog::beat();
            if last_print.elapsed() >= progress {
                last_print = Instant::now();
                println!(
                    "  scan {label}: {rows} rows through the primary key, {:.0} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
    let (mut k_rows, mut k_id_sum, mut k_k_sum) = (0u64, 0i128, 0i128);
    for row in trx
        .scan(
            table,
            Some("k"),
            KeyBound::Unbounded,
            KeyBound::Unbounded,
            true,
        )
        .context("start the k index scan")?
    {
        let row = row.context("k index scan")?;
        k_rows += 1;
        k_id_sum += i128::from(row.first().and_then(Value::as_i64).unwrap_or(0));
        k_k_sum += i128::from(row.get(1).and_then(Value::as_i64).unwrap_or(0));
        if k_rows.is_multiple_of(65536) {
            watchdog::beat();
            if last_print.elapsed() >= progress {
                last_print = Instant::now();
                println!(
                    "  scan {label}: {k_rows} rows through the k index, {:.0} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
    trx.commit().context("commit the scans")?;
    let secs = t0.elapsed().as_secs_f64();
    let c = Contents {
        rows,
        checksum: h.0,
        k_rows,
        k_id_sum,
        k_k_sum,
        id_sum,
        k_sum,
    };
    println!(
        "scan {label}: {rows} rows, checksum {:016x}; k index: {k_rows} rows{} ({secs:.1} s)",
        c.checksum,
        if c.k_agrees() {
            ", same ids and ks"
        } else {
            ", ids or ks DIFFER from the primary key's"
        }
    );
    Ok((c, secs))
}

impl Contents {
    fn k_agrees(&self) -> bool {
        self.k_rows == self.rows && self.k_id_sum == self.id_sum && self.k_k_sum == self.k_sum
    }
}

/// What the change phase did.
struct Change {
    done: u64,
    secs: f64,
    error: Option<String>,
    /// Sampled rows whose changed version the transaction did not see as expected.
    not_visible: u64,
    sampled: u64,
}

/// Makes the change in `trx`: every row updated or deleted, or `rows` new rows inserted.
fn change(
    trx: &mut innoxide_engine::Trx,
    engine: &Engine,
    table: &Arc<Table>,
    args: &RollbackArgs,
    ibdata: &Path,
) -> Result<Change> {
    let rows = i64::try_from(args.rows).context("--rows does not fit an i64")?;
    let progress = Duration::from_secs(args.progress_secs);
    let op = args.op;
    let mut rng = SmallRng::seed_from_u64(args.seed ^ 0x5eed_c4a9);
    let step = (args.rows / SAMPLE_ROWS).max(1) as i64;
    let mut expect_k: Vec<(i64, i64)> = Vec::new();
    let lsn0 = engine.inner().log.lsn();
    let t0 = Instant::now();
    let mut last_print = Instant::now();
    let mut done = 0u64;
    let mut error = None;
    for i in 1..=rows {
        let r = match op {
            Op::Update => {
                let k = rng.random_range(1..=rows);
                if (i - 1) % step == 0 {
                    expect_k.push((i, k));
                }
                let c = workload::digits(&mut rng, 10);
                trx.update(
                    table,
                    &[Value::Int(i)],
                    &[(1, Value::Int(k)), (2, Value::Bytes(c))],
                )
            }
            Op::Delete => trx.delete(table, &[Value::Int(i)]),
            Op::Insert => trx
                .insert(table, &workload::make_row(&mut rng, rows + i, rows))
                .map(|()| true),
        };
        match r {
            Ok(true) => done += 1,
            Ok(false) => {
                error = Some(format!("{} of id {i}: no such row", op.name()));
                break;
            }
            Err(e) => {
                error = Some(format!("{} of id {i}: {e}", op.name()));
                break;
            }
        }
        if done.is_multiple_of(1024) {
            watchdog::beat();
            if last_print.elapsed() >= progress {
                last_print = Instant::now();
                let s = t0.elapsed().as_secs_f64();
                println!(
                    "  {}: {done}/{} rows ({:.0}%), {:.0} rows/s, {:.0} s; redo +{}, ibdata1 {}",
                    op.name(),
                    args.rows,
                    100.0 * done as f64 / args.rows as f64,
                    done as f64 / s.max(1e-9),
                    s,
                    mib(engine.inner().log.lsn() - lsn0),
                    mib(file_len(ibdata))
                );
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    // The transaction must see its own changes.
    let mut not_visible = 0;
    let mut sampled = 0;
    if error.is_none() {
        for j in 0..SAMPLE_ROWS as i64 {
            let id = 1 + j * step;
            if id > rows {
                break;
            }
            let (key, want) = match op {
                Op::Update => (id, expect_k.iter().find(|e| e.0 == id).map(|e| e.1)),
                Op::Delete => (id, None),
                Op::Insert => (rows + id, Some(-1)),
            };
            sampled += 1;
            let got = trx
                .get(table, &[Value::Int(key)])
                .with_context(|| format!("read back id {key} in the changing transaction"))?;
            let ok = match (op, got) {
                (Op::Update, Some(r)) => r.get(1).and_then(Value::as_i64) == want,
                (Op::Delete, None) => true,
                (Op::Insert, Some(r)) => r.first().and_then(Value::as_i64) == Some(key),
                _ => false,
            };
            if !ok {
                not_visible += 1;
            }
        }
    }
    Ok(Change {
        done,
        secs,
        error,
        not_visible,
        sampled,
    })
}

/// Runs the benchmark; returns the failed result checks (empty when all passed).
pub fn run(args: &RollbackArgs) -> Result<Vec<String>> {
    if args.rows == 0 {
        bail!("--rows must be at least 1");
    }
    check_out_dir("--json", args.json.as_ref())?;
    let rows_i = i64::try_from(args.rows).context("--rows does not fit an i64")?;
    if rows_i.checked_mul(2).is_none() {
        bail!("--rows is too large");
    }
    let progress = Duration::from_secs(args.progress_secs);
    let started_unix = unix_now();
    let started = Instant::now();
    let dir = DataDir::new(args.datadir.as_deref(), "innoxide-rollback-")?;
    watchdog::start(
        Duration::from_secs(args.stall_timeout),
        dir.watchdog_cleanup(args.keep),
    );
    let op = args.op.name();
    println!(
        "innoxide-bench rollback: {} rows, one transaction: {op}, then rollback; pool {} MiB, \
         redo log 2 x {} MiB, data in {}",
        args.rows,
        args.pool_mb,
        args.engine.log_file_mib,
        dir.path.display()
    );
    watchdog::phase("rollback: open the engine");
    let engine = Engine::open(engine_config(args, &dir.path))
        .with_context(|| format!("open the engine in {}", dir.path.display()))?;
    let table = engine
        .create_table(workload::table_def())
        .context("create the benchmark table")?;
    let ibdata = dir.path.join("ibdata1");
    let ibd = dir.path.join(format!("{}.ibd", workload::TABLE));

    // 1. Load, flush.
    watchdog::phase("rollback: load");
    let plan = workload::LoadPlan {
        first: 1,
        last: args.rows,
        k_max: rows_i,
        threads: args.load_threads,
        batch: args.insert_batch,
        seed: args.seed,
    };
    println!(
        "load: {} rows, {} thread(s), {} rows/commit ...",
        args.rows, args.load_threads, args.insert_batch
    );
    let loaded = workload::load(&engine, &table, &plan, "rollback")?;
    let t = Instant::now();
    watchdog::phase("rollback: flush after the load");
    engine
        .flush_and_checkpoint()
        .context("flush after the load")?;
    println!(
        "load: {} rows in {:.1} s = {:.0} rows/s; flush {:.1} s; table {}, ibdata1 {}",
        loaded.rows,
        loaded.seconds,
        loaded.rows as f64 / loaded.seconds.max(1e-9),
        t.elapsed().as_secs_f64(),
        mib(file_len(&ibd)),
        mib(file_len(&ibdata))
    );

    // 2. What the table holds before.
    let (before, scan_before_secs) = contents(&engine, &table, "before", progress)?;

    // 3. The change, in one transaction.
    let hist0 = engine.inner().trx.history_len.load(Ordering::Relaxed);
    let ibdata0 = file_len(&ibdata);
    let ibd0 = file_len(&ibd);
    let lsn0 = engine.inner().log.lsn();
    println!(
        "{op}: {} rows in one transaction (ibdata1 {}) ...",
        args.rows,
        mib(ibdata0)
    );
    watchdog::phase(format!("rollback: {op} in one transaction"));
    let mut trx = engine.begin();
    let ch = change(&mut trx, &engine, &table, args, &ibdata)?;
    let ibdata1 = file_len(&ibdata);
    let ibd1 = file_len(&ibd);
    let lsn1 = engine.inner().log.lsn();
    println!(
        "{op}: {} rows in {:.1} s = {:.0} rows/s; redo {}, ibdata1 {} -> {} (+{}), table {} -> {}{}",
        ch.done,
        ch.secs,
        ch.done as f64 / ch.secs.max(1e-9),
        mib(lsn1 - lsn0),
        mib(ibdata0),
        mib(ibdata1),
        mib(ibdata1.saturating_sub(ibdata0)),
        mib(ibd0),
        mib(ibd1),
        ch.error
            .as_ref()
            .map_or(String::new(), |e| format!("; STOPPED: {e}"))
    );

    // 4. The rollback, watched by a thread that prints progress and feeds the watchdog
    // while redo is being written.
    println!("rollback of {} changed rows ...", ch.done);
    watchdog::phase("rollback: Trx::rollback");
    let finished = AtomicBool::new(false);
    let t = Instant::now();
    let rolled = std::thread::scope(|s| {
        let (engine, finished) = (&engine, &finished);
        s.spawn(move || {
            let mut last_lsn = engine.inner().log.lsn();
            let mut last_print = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let lsn = engine.inner().log.lsn();
                if lsn != last_lsn {
                    last_lsn = lsn;
                    watchdog::beat();
                }
                if last_print.elapsed() >= progress {
                    last_print = Instant::now();
                    println!(
                        "  rollback: {:.0} s, redo +{}",
                        t.elapsed().as_secs_f64(),
                        mib(lsn - lsn1)
                    );
                }
            }
        });
        let r = trx.rollback();
        finished.store(true, Ordering::Relaxed);
        r
    });
    let rollback_secs = t.elapsed().as_secs_f64();
    let lsn2 = engine.inner().log.lsn();
    let ibdata2 = file_len(&ibdata);
    let hist2 = engine.inner().trx.history_len.load(Ordering::Relaxed);
    match &rolled {
        Ok(()) => println!(
            "rollback: {} rows in {rollback_secs:.1} s = {:.0} rows/s; redo {}; ibdata1 {}",
            ch.done,
            ch.done as f64 / rollback_secs.max(1e-9),
            mib(lsn2 - lsn1),
            mib(ibdata2)
        ),
        Err(e) => println!("rollback: FAILED after {rollback_secs:.1} s: {e}"),
    }

    // 5. Verify.
    let (after, scan_after_secs) = contents(&engine, &table, "after", progress)?;
    watchdog::phase("rollback: Engine::check");
    let (check, check_secs) = run_check(&engine);
    let mut purged_check = None;
    if let Ok(rep) = &check {
        if rep.delete_marked > 0 {
            // Would purge clean them up? (Nothing it knows of should refer to them.)
            watchdog::phase("rollback: purge_all and Engine::check again");
            let purged = engine.purge_all();
            println!(
                "{} delete-marked records after the rollback; purge_all: {purged:?}",
                rep.delete_marked
            );
            purged_check = Some(run_check(&engine).0);
        }
    }
    drop(table);
    watchdog::phase("rollback: shutdown");
    let shutdown = engine.shutdown();

    // Checks.
    let mut checks = Checks::default();
    checks.add(
        "change",
        ch.error.is_none() && ch.done == args.rows,
        match &ch.error {
            Some(e) => format!("stopped after {} rows: {e}", ch.done),
            None => format!("{} rows {} in one transaction", ch.done, args.op.done()),
        },
    );
    checks.add(
        "change visible to its transaction",
        ch.not_visible == 0,
        format!(
            "{} of {} sampled rows read back as changed",
            ch.sampled - ch.not_visible,
            ch.sampled
        ),
    );
    checks.add(
        "rollback",
        rolled.is_ok(),
        match &rolled {
            Ok(()) => format!("{rollback_secs:.1} s"),
            Err(e) => format!("failed: {e}"),
        },
    );
    checks.add(
        "row count",
        after.rows == before.rows && before.rows == args.rows,
        format!(
            "{} rows before, {} after (loaded {})",
            before.rows, after.rows, args.rows
        ),
    );
    checks.add(
        "checksum",
        after.checksum == before.checksum,
        format!(
            "{:016x} before, {:016x} after",
            before.checksum, after.checksum
        ),
    );
    checks.add(
        "k index",
        before.k_agrees() && after.k_agrees(),
        format!(
            "{} rows through the k index after (before: {}); ids and ks {} the primary key's",
            after.k_rows,
            before.k_rows,
            if before.k_agrees() && after.k_agrees() {
                "match"
            } else {
                "do NOT match"
            }
        ),
    );
    checks.add(
        "Engine::check",
        check.is_ok(),
        match &check {
            Ok(r) => format!(
                "ok: {} records, {} delete-marked, history {}, {} active undo logs",
                r.records, r.delete_marked, r.history_len, r.active_undo_logs
            ),
            Err(e) => e.clone(),
        },
    );
    if let Ok(r) = &check {
        checks.add(
            "no delete-marked records left",
            r.delete_marked == 0,
            format!(
                "{} delete-marked clustered records after the rollback{}",
                r.delete_marked,
                match &purged_check {
                    Some(Ok(p)) => format!("; {} after purge_all", p.delete_marked),
                    Some(Err(e)) => format!("; the check after purge_all failed: {e}"),
                    None => String::new(),
                }
            ),
        );
    }
    checks.add(
        "history unchanged",
        hist2 <= hist0,
        format!("history list {hist0} before the change, {hist2} after the rollback"),
    );
    if let Err(e) = &shutdown {
        checks.add("shutdown", false, format!("failed: {e}"));
    }

    // Summary.
    let rate = |n: u64, s: f64| n as f64 / s.max(1e-9);
    let fig: Vec<(String, String)> = vec![
        (
            "load".into(),
            format!(
                "{} rows in {:.1} s ({:.0} rows/s)",
                loaded.rows,
                loaded.seconds,
                rate(loaded.rows, loaded.seconds)
            ),
        ),
        (
            format!("{op} (one transaction)"),
            format!(
                "{} rows in {:.1} s ({:.0} rows/s)",
                ch.done,
                ch.secs,
                rate(ch.done, ch.secs)
            ),
        ),
        (
            "rollback".into(),
            format!(
                "{} rows in {rollback_secs:.1} s ({:.0} rows/s)",
                ch.done,
                rate(ch.done, rollback_secs)
            ),
        ),
        (
            "rollback time / change time".into(),
            format!("{:.2}", rollback_secs / ch.secs.max(1e-9)),
        ),
        (
            "undo: ibdata1 before, after change".into(),
            format!(
                "{}, {} (+{}, {:.0} bytes/row)",
                mib(ibdata0),
                mib(ibdata1),
                mib(ibdata1.saturating_sub(ibdata0)),
                ibdata1.saturating_sub(ibdata0) as f64 / ch.done.max(1) as f64
            ),
        ),
        (
            format!("redo: {op}, rollback"),
            format!("{}, {}", mib(lsn1 - lsn0), mib(lsn2 - lsn1)),
        ),
        (
            "table file: before, after change".into(),
            format!("{}, {}", mib(ibd0), mib(ibd1)),
        ),
        (
            "rows before, after".into(),
            format!("{}, {}", before.rows, after.rows),
        ),
        (
            "checksum before, after".into(),
            format!("{:016x}, {:016x}", before.checksum, after.checksum),
        ),
        (
            "scans before, after; Engine::check".into(),
            format!(
                "{scan_before_secs:.1} s, {scan_after_secs:.1} s; {} in {check_secs:.1} s",
                if check.is_ok() { "ok" } else { "FAILED" }
            ),
        ),
        (
            "total time".into(),
            format!("{:.0} s", started.elapsed().as_secs_f64()),
        ),
    ];
    println!();
    print!("{}", figure_table("summary", &fig));
    checks.print();

    let json = args.json.as_deref().map(|path| {
        let num = |x: u64| Json::Num(x as f64);
        let settings = Json::obj([
            ("rows", num(args.rows)),
            ("op", Json::str(op)),
            ("pool_mib", num(args.pool_mb)),
            ("page_size", num(args.engine.page_size as u64)),
            ("log_file_mib", num(args.engine.log_file_mib)),
            ("trx_commit", num(u64::from(args.engine.trx_commit))),
            ("insert_batch", num(args.insert_batch as u64)),
            ("load_threads", num(args.load_threads as u64)),
            ("seed", num(args.seed)),
        ]);
        let doc = Json::obj([
            ("benchmark", Json::str("rollback")),
            ("started_unix", num(started_unix)),
            ("settings", settings),
            (
                "figures",
                Json::obj([
                    ("load_rows", num(loaded.rows)),
                    ("load_secs", Json::Num(loaded.seconds)),
                    ("change_rows", num(ch.done)),
                    ("change_secs", Json::Num(ch.secs)),
                    ("change_rows_per_s", Json::Num(rate(ch.done, ch.secs))),
                    ("rollback_secs", Json::Num(rollback_secs)),
                    (
                        "rollback_rows_per_s",
                        Json::Num(rate(ch.done, rollback_secs)),
                    ),
                    ("ibdata1_bytes_before", num(ibdata0)),
                    ("ibdata1_bytes_after_change", num(ibdata1)),
                    ("ibdata1_bytes_after_rollback", num(ibdata2)),
                    ("undo_bytes_estimate", num(ibdata1.saturating_sub(ibdata0))),
                    ("redo_bytes_change", num(lsn1 - lsn0)),
                    ("redo_bytes_rollback", num(lsn2 - lsn1)),
                    ("table_bytes_before", num(ibd0)),
                    ("table_bytes_after_change", num(ibd1)),
                    ("rows_before", num(before.rows)),
                    ("rows_after", num(after.rows)),
                    (
                        "checksum_before",
                        Json::str(format!("{:016x}", before.checksum)),
                    ),
                    (
                        "checksum_after",
                        Json::str(format!("{:016x}", after.checksum)),
                    ),
                    ("scan_before_secs", Json::Num(scan_before_secs)),
                    ("scan_after_secs", Json::Num(scan_after_secs)),
                    ("check_secs", Json::Num(check_secs)),
                    ("history_before", num(hist0)),
                    ("history_after", num(hist2)),
                ]),
            ),
            ("result", checks.result_json()),
        ]);
        (path, doc)
    });
    checks.finish(json, dir, args.keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(rows: &[Vec<Value>]) -> u64 {
        let mut h = Fnv::new();
        for r in rows {
            h.row(r);
        }
        h.0
    }

    #[test]
    fn checksum_sees_content_order_and_boundaries() {
        let a = vec![Value::Int(1), Value::Bytes(b"ab".to_vec())];
        let b = vec![Value::Int(2), Value::Bytes(b"c".to_vec())];
        let base = sum(&[a.clone(), b.clone()]);
        assert_eq!(base, sum(&[a.clone(), b.clone()]));
        assert_ne!(base, sum(&[b.clone(), a.clone()]));
        let a2 = vec![Value::Int(1), Value::Bytes(b"a".to_vec())];
        let b2 = vec![Value::Int(2), Value::Bytes(b"bc".to_vec())];
        assert_ne!(base, sum(&[a2, b2]));
        assert_ne!(base, sum(&[a]));
    }
}
