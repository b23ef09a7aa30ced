//! `innoxide-bench`: the project's benchmark driver.
//!
//! Each workload is a clap subcommand: `engine`, a micro-benchmark of the storage engine API
//! (point lookups and inserts, data inside and ten times the buffer pool, one and two threads);
//! `purge`, purge under a steady update load with a read view held open for a while; and
//! `rollback`, the rollback of one transaction that changed a million rows; `dbstress`, the
//! dbSTRESS benchmark against any MySQL-protocol server (load, run with live output, verify);
//! and `chart`, PNG/SVG charts from dbstress JSON results (tools/bench/dbstress.py runs
//! innoxide and MariaDB side by side with them).
//! Every subcommand checks its own results and the process exits non-zero when a check fails.

mod chart;
mod dbstress;
mod engine_bench;
mod phases;
mod purge_bench;
mod report;
mod rollback_bench;
mod sysload;
mod watchdog;
mod workload;

use std::process::ExitCode;

use clap::{ArgAction, Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// Benchmarks for innoxide. Every figure comes with the checks that make it trustworthy:
/// a run whose results fail a check exits with status 1.
#[derive(Parser, Debug)]
#[command(name = "innoxide-bench", version, about, long_about = None)]
struct Cli {
    /// Log more: -v shows the engine's info messages, -vv debug, -vvv trace. The default shows
    /// warnings and errors only. RUST_LOG, when set, overrides this.
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Storage engine micro-benchmark (no SQL): point lookups/s and inserts/s, with the data
    /// inside the buffer pool and about 10x the buffer pool, per thread count.
    Engine(engine_bench::EngineArgs),
    /// Purge under a steady update load (a long-running test, 10 minutes by default): the
    /// history list stays bounded and the table's .ibd file stops growing; a read view held
    /// open makes the history grow, and it drains once the view closes.
    Purge(purge_bench::PurgeArgs),
    /// Rollback of one transaction that changed every row of a large table (1,000,000 rows by
    /// default): its time, and that every row is exactly as before with Engine::check clean.
    Rollback(rollback_bench::RollbackArgs),
    /// dbSTRESS against a MySQL-protocol server: `load` the tables (OBJECT, HISTORY = 20 x
    /// OBJECT, SECTION, ZONE, STAT), `run` a scenario (stress: sessions 1..256, no think time;
    /// users: 50..1600 sessions at 1 TPS each) with live TPS each second and a report per
    /// step, then `verify` the data. Exits 1 if a check fails.
    Dbstress(dbstress::DbstressArgs),
    /// Charts (PNG and SVG) from `dbstress run --json` files: TPS and p95 against sessions, one
    /// line per server, and TPS each second through the run.
    Chart(chart::ChartArgs),
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let outcome = match cli.command {
        Command::Engine(args) => engine_bench::run(&args),
        Command::Purge(args) => purge_bench::run(&args),
        Command::Rollback(args) => rollback_bench::run(&args),
        Command::Dbstress(args) => dbstress::run(&args),
        Command::Chart(args) => chart::run(&args),
    };
    match outcome {
        Ok(failures) if failures.is_empty() => ExitCode::SUCCESS,
        Ok(failures) => {
            eprintln!();
            eprintln!("FAILED: {} result check(s) failed:", failures.len());
            for f in &failures {
                eprintln!("  - {f}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("innoxide-bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
