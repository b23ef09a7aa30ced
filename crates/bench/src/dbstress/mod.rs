//! `innoxide-bench dbstress`: the dbSTRESS benchmark (issue #6) against any MySQL-protocol
//! server, innoxide or MariaDB alike.
//!
//! OVERVIEW
//!
//! dbSTRESS (Dimitri Kravtchuk's OLTP benchmark, ../shared/seeds/002 "db_STRESS Benchmark")
//! has five tables: ZONE (10 rows), SECTION (100), STAT (1000), OBJECT (N, `--objects`) and
//! HISTORY (20 rows per object), and two kinds of transaction on a random object id:
//!
//! ```text
//!   READ  = SEL1  OBJECT ⋈ SECTION ⋈ ZONE        by object id (1 row)
//!           SEL2  HISTORY ⋈ STAT                  by object id (20 rows)
//!   WRITE = BEGIN; DEL  the object's oldest HISTORY row
//!                  INS  one HISTORY row for the object
//!                  UPD  the object's newest HISTORY row; COMMIT
//!           (with --update-only: BEGIN; UPD; COMMIT)
//! ```
//!
//! `--rw R` runs R reads per write (0 = read-only). A step runs S sessions (connections,
//! one thread each) for `--step-time` seconds with `--think` seconds of sleep after each
//! transaction; a run is a list of steps. The "stress" scenario is think 0 with sessions
//! 1, 2, 4 ... 256; "users" is think 1 s with sessions 50 ... 1600, where each session should
//! keep its 1 TPS (the report gives each step's per-session rates).
//!
//! Modules: `schema` (tables, loader), `session` (one connection's transactions), `step`
//! (running the sessions of a step, live output each second, per-step results), `output`
//! (summary table, JSON, CSV), `verify` (the checks after a run).
//!
//! INVARIANTS (what `verify` and the sessions check)
//!
//! - V1: a write transaction deletes exactly one HISTORY row of its object and inserts one,
//!   or (on error) nothing, so every object has exactly 20 HISTORY rows at every commit
//!   boundary. SEL2 checks it on every read (a consistent read that sees another number saw
//!   half a transaction) and `verify` checks it for all objects.
//! - V2: HISTORY's row count equals the count after the load plus the inserts minus the
//!   deletes acknowledged (COMMIT returned OK; DEL's affected rows). The running total is kept
//!   in the DBSTRESS_STATE table, updated after each run.
//! - V3: no HISTORY row names an object or stat that does not exist. OBJECT ids are 1..N and
//!   STAT ids 1..1000 (checked: count, min and max over a primary key), so a range check of
//!   HISTORY's references is exact; no OBJECT row names a missing section, no SECTION row a
//!   missing zone.
//! - V4: HISTORY's primary key and its secondary index HISTORY_STAT hold the same rows.

mod output;
mod schema;
mod session;
mod step;
mod verify;

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use mysql::prelude::Queryable;

/// HISTORY rows per object.
pub const HISTORY_PER_OBJECT: u64 = 20;
/// Rows of the small tables.
pub const ZONES: u64 = 10;
pub const SECTIONS: u64 = 100;
pub const STATS: u64 = 1000;

#[derive(Args, Debug, Clone)]
pub struct DbstressArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug, Clone)]
enum Action {
    /// Drop and recreate the dbSTRESS tables and load them (OBJECT = --objects rows, HISTORY =
    /// 20 x that), several connections in parallel, with a progress bar.
    Load(LoadArgs),
    /// Run a scenario: one step per session count; live figures each second, a report per
    /// step, then the verify step (unless --no-verify). Exits 1 if a check fails.
    Run(RunArgs),
    /// Only the verify step: row counts, orphans, 20 rows per object, index consistency.
    Verify(ConnArgs),
}

/// Where the server is. TCP by default; --socket selects a Unix socket instead.
#[derive(Args, Debug, Clone)]
pub struct ConnArgs {
    /// Server host name or IP address (TCP).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Server TCP port.
    #[arg(long, short = 'P', default_value_t = 3306)]
    pub port: u16,
    /// Unix socket path; when given, used instead of --host/--port.
    #[arg(long, short = 'S')]
    pub socket: Option<String>,
    /// User name.
    #[arg(long, short = 'u', default_value = "root")]
    pub user: String,
    /// Password (none by default).
    #[arg(long, short = 'p')]
    pub password: Option<String>,
    /// Database holding the dbSTRESS tables; created if missing.
    #[arg(long, short = 'D', default_value = "dbstress")]
    pub database: String,
}

impl ConnArgs {
    fn opts(&self, with_db: bool) -> mysql::OptsBuilder {
        let mut o = mysql::OptsBuilder::new()
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            .prefer_socket(false)
            .tcp_nodelay(true)
            .tcp_connect_timeout(Some(Duration::from_secs(30)))
            .stmt_cache_size(64);
        o = match &self.socket {
            Some(s) => o.socket(Some(s.clone())),
            None => o
                .ip_or_hostname(Some(self.host.clone()))
                .tcp_port(self.port),
        };
        if with_db {
            o = o.db_name(Some(self.database.clone()));
        }
        o
    }

    /// A new connection to the dbSTRESS database.
    pub fn connect(&self) -> Result<mysql::Conn> {
        mysql::Conn::new(self.opts(true)).with_context(|| format!("connect to {}", self.where_()))
    }

    /// A new connection without a default database (to create it).
    fn connect_server(&self) -> Result<mysql::Conn> {
        mysql::Conn::new(self.opts(false)).with_context(|| format!("connect to {}", self.where_()))
    }

    fn where_(&self) -> String {
        match &self.socket {
            Some(s) => format!("socket {s}"),
            None => format!("{}:{}", self.host, self.port),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// OBJECT rows (HISTORY gets 20 per object).
    #[arg(long, default_value_t = 1_000_000)]
    pub objects: u64,
    /// Connections loading OBJECT and HISTORY in parallel.
    #[arg(long, default_value_t = 4)]
    pub load_threads: usize,
    /// Rows per multi-row INSERT statement.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
}

/// A scenario's defaults for the session list and think time.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Think time 0, sessions 1,2,4,...,256: maximum TPS and how it holds past the peak.
    Stress,
    /// Think time 1 s, sessions 50,100,200,400,...,1600: each session should keep 1 TPS.
    Users,
}

impl Scenario {
    fn sessions(self) -> Vec<usize> {
        match self {
            Scenario::Stress => (0..=8).map(|i| 1 << i).collect(),
            Scenario::Users => vec![50, 100, 200, 400, 600, 800, 1000, 1200, 1400, 1600],
        }
    }

    fn think(self) -> f64 {
        match self {
            Scenario::Stress => 0.0,
            Scenario::Users => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Stress => "stress",
            Scenario::Users => "users",
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Scenario: its default session list and think time (each overridable below).
    #[arg(long, value_enum, default_value = "stress")]
    pub scenario: Scenario,
    /// Session counts of the steps, comma-separated (e.g. 1,2,4,8). Default: the scenario's.
    #[arg(long, value_delimiter = ',')]
    pub sessions: Option<Vec<usize>>,
    /// Seconds each step runs (measured time, after --warmup).
    #[arg(long, default_value_t = 60.0)]
    pub step_time: f64,
    /// Seconds at the start of each step that are run but not measured.
    #[arg(long, default_value_t = 0.0)]
    pub warmup: f64,
    /// Think time: seconds a session sleeps after each transaction. Default: the scenario's
    /// (stress 0, users 1).
    #[arg(long)]
    pub think: Option<f64>,
    /// Reads per write: 0 = read-only, 1, 10, 1000 ...
    #[arg(long, default_value_t = 1)]
    pub rw: u32,
    /// Write transactions only UPDATE (no DELETE and INSERT).
    #[arg(long)]
    pub update_only: bool,
    /// Load the tables first (as `dbstress load`, with --objects/--load-threads/--batch).
    #[arg(long)]
    pub load: bool,
    /// With --load: OBJECT rows.
    #[arg(long, default_value_t = 1_000_000)]
    pub objects: u64,
    /// With --load: loading connections.
    #[arg(long, default_value_t = 4)]
    pub load_threads: usize,
    /// With --load: rows per INSERT.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Skip the verify step after the run (the run's row accounting is still recorded, so a
    /// later `dbstress verify` checks it).
    #[arg(long)]
    pub no_verify: bool,
    /// Name of the server in the outputs and charts (e.g. innoxide, mariadb).
    #[arg(long, default_value = "server")]
    pub label: String,
    /// Write the results (settings, steps, per-second timeline, verify) to this JSON file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Write one CSV line per step and transaction type to this file.
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
    /// No line each second (the per-step report is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Seed of the random object choice (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Runs `innoxide-bench dbstress ...`; returns the failed checks.
pub fn run(args: &DbstressArgs) -> Result<Vec<String>> {
    match &args.action {
        Action::Load(l) => {
            schema::load(l)?;
            Ok(Vec::new())
        }
        Action::Verify(c) => {
            let v = verify::verify(c)?;
            print!("{}", v.text());
            Ok(v.failures)
        }
        Action::Run(r) => run_scenario(r),
    }
}

fn run_scenario(a: &RunArgs) -> Result<Vec<String>> {
    if a.step_time <= 0.0 || a.warmup < 0.0 || a.think.is_some_and(|t| t < 0.0) {
        bail!("--step-time must be positive, --warmup and --think not negative");
    }
    if a.load {
        schema::load(&LoadArgs {
            conn: a.conn.clone(),
            objects: a.objects,
            load_threads: a.load_threads,
            batch: a.batch,
        })?;
    }
    let state = schema::State::read(&a.conn)?;
    let sessions = a.sessions.clone().unwrap_or_else(|| a.scenario.sessions());
    if sessions.is_empty() || sessions.contains(&0) {
        bail!("--sessions must list positive session counts");
    }
    let plan = step::Plan {
        objects: state.objects,
        rw: a.rw,
        update_only: a.update_only,
        think: Duration::from_secs_f64(a.think.unwrap_or(a.scenario.think())),
        step_time: Duration::from_secs_f64(a.step_time),
        warmup: Duration::from_secs_f64(a.warmup),
        live: !a.quiet,
        horder_base: state.next_horder_base(&a.conn)?,
        seed: a.seed.unwrap_or_else(clock_seed),
    };
    eprintln!(
        "dbstress {} on {} ({}): {} objects, rw {}{}, think {} s, sessions {:?}, {} s per step",
        a.scenario.name(),
        a.label,
        a.conn.where_(),
        state.objects,
        a.rw,
        if a.update_only { " (update-only)" } else { "" },
        plan.think.as_secs_f64(),
        sessions,
        a.step_time
    );
    let started = Instant::now();
    let mut pool = step::Pool::new(a.conn.clone(), &plan);
    let mut steps = Vec::new();
    let mut failures = Vec::new();
    let mut outcome = Ok(());
    for &n in &sessions {
        match step::run_step(&mut pool, &plan, n) {
            Ok(s) => {
                print!("{}", output::step_text(&s, &plan));
                steps.push(s);
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    let acct = pool.close();
    // Record what the run did before anything else can fail (V2), so a later verify is exact.
    schema::State::add_history_rows(&a.conn, acct.inserted as i64 - acct.deleted as i64)?;
    if let Err(e) = outcome {
        return Err(e.context("run aborted"));
    }
    for s in &steps {
        failures.extend(s.failures());
    }
    if acct.unknown > 0 {
        failures.push(format!(
            "{} write transaction(s) lost their connection before COMMIT answered: their \
             outcome is unknown",
            acct.unknown
        ));
    }
    let v = if a.no_verify {
        None
    } else {
        let v = verify::verify(&a.conn)?;
        print!("{}", v.text());
        failures.extend(v.failures.iter().cloned());
        Some(v)
    };
    print!("{}", output::summary_table(&steps));
    let doc = output::run_json(a, &plan, &steps, &acct, v.as_ref(), &failures, started);
    if let Some(p) = &a.json {
        output::write_file(p, &doc.to_string())?;
    }
    if let Some(p) = &a.csv {
        output::write_file(p, &output::csv(a, &plan, &steps))?;
    }
    Ok(failures)
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Runs one statement and returns the first column of its first row as an integer.
pub fn query_u64(c: &mut mysql::Conn, sql: &str) -> Result<u64> {
    let v: Option<Option<i64>> = c.query_first(sql).with_context(|| sql.to_string())?;
    match v {
        Some(Some(x)) if x >= 0 => Ok(x as u64),
        other => bail!("{sql}: unexpected result {other:?}"),
    }
}
