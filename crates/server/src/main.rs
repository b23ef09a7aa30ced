//! `innoxide`: the server. It opens (or initialises) a data directory with the storage engine,
//! runs its background threads, and shuts down cleanly (flush + checkpoint) on SIGTERM or
//! SIGINT, like mysqld. The MySQL protocol front end is added by the SQL-layer work (issue #4);
//! until then the server serves the engine's maintenance only.

mod options;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use innoxide_engine::Engine;

fn main() -> anyhow::Result<()> {
    let opts = options::Options::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| opts.log_level.clone().into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cfg = opts.engine_config().map_err(anyhow::Error::msg)?;
    tracing::info!(
        "innoxide {} starting: datadir {}, innodb_page_size {}, innodb_buffer_pool_size {}",
        env!("CARGO_PKG_VERSION"),
        cfg.datadir.display(),
        cfg.page_size,
        cfg.buffer_pool_size
    );
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let engine = Engine::open(cfg).context("starting the storage engine")?;
    let r = engine.open_report();
    if r.initialised {
        tracing::warn!("a new data directory was initialised; root@localhost has no password");
    } else if r.redo_groups > 0 {
        tracing::info!(
            "crash recovery: {} redo records applied to {} pages in {:.3}s; {} transactions to roll back in the background, {} prepared (XA) kept",
            r.redo_records,
            r.pages_recovered,
            r.recovery_secs,
            r.trx_rolled_back,
            r.trx_prepared
        );
    }
    tracing::info!(
        "ready: {} tables; log sequence number {} (the MySQL protocol listener arrives with the SQL layer)",
        engine.table_names().len(),
        engine.inner().log.lsn()
    );
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
    }
    tracing::info!("received a shutdown signal: flushing and writing a checkpoint");
    engine.shutdown().context("clean shutdown")?;
    Ok(())
}
