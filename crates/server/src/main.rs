//! `innoxide`: the server. It opens (or initialises) a data directory with the storage engine,
//! loads the SQL catalog, listens for MySQL clients on TCP and a Unix socket (one thread per
//! connection), and shuts down cleanly (flush + checkpoint) on SIGTERM or SIGINT, like mysqld.

mod catalog;
mod conn;
mod exec;
mod net;
mod options;
mod status;
mod vars;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
    let engine = Arc::new(Engine::open(cfg).context("starting the storage engine")?);
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
    let catalog = Arc::new(
        catalog::Catalog::open(engine.clone())
            .map_err(|e| anyhow::anyhow!("loading the catalog: {e}"))?,
    );
    let vars = vars::Registry::new(&opts, &engine.inner().cfg, engine.inner().tun.clone());
    let long_query_time = match vars.default_value("long_query_time") {
        Ok(vars::VarValue::Double(s)) => Duration::from_secs_f64(s),
        _ => Duration::from_secs(10),
    };
    let server = Arc::new(exec::Server {
        catalog,
        vars,
        next_conn_id: AtomicU32::new(1),
        sessions: parking_lot::Mutex::new(std::collections::HashMap::new()),
        started: std::time::Instant::now(),
        questions: AtomicU64::new(0),
        connections: AtomicU64::new(0),
        prepared: AtomicU64::new(0),
        slow_queries: AtomicU64::new(0),
        long_query_time,
        flushes: AtomicU64::new(0),
    });
    let mut listeners = Vec::new();
    if opts.port != 0 {
        let l = std::net::TcpListener::bind((opts.bind_address.as_str(), opts.port))
            .with_context(|| format!("binding {}:{}", opts.bind_address, opts.port))?;
        let (s, st) = (server.clone(), stop.clone());
        listeners.push(std::thread::spawn(move || net::tcp(s, l, st)));
    }
    if !opts.socket.is_empty() {
        // A socket file left by a previous run that nobody listens on is removed first.
        if std::os::unix::net::UnixStream::connect(&opts.socket).is_err() {
            let _ = std::fs::remove_file(&opts.socket);
        }
        let l = std::os::unix::net::UnixListener::bind(&opts.socket)
            .with_context(|| format!("binding the socket {}", opts.socket))?;
        let (s, st) = (server.clone(), stop.clone());
        listeners.push(std::thread::spawn(move || net::unix(s, l, st)));
    }
    tracing::info!(
        "ready for connections. Version: '{}'  socket: '{}'  port: {}  ({} tables)",
        vars::SERVER_VERSION,
        opts.socket,
        opts.port,
        engine.table_names().len()
    );
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
    }
    tracing::info!(
        "received a shutdown signal: closing listeners, flushing and writing a checkpoint"
    );
    for l in listeners {
        let _ = l.join();
    }
    if !opts.socket.is_empty() {
        let _ = std::fs::remove_file(&opts.socket);
    }
    // Connections still open hold the engine; shutdown waits only for their transactions to
    // be rolled back by the engine's own shutdown.
    drop(server);
    match Arc::try_unwrap(engine) {
        Ok(e) => e.shutdown().context("clean shutdown")?,
        Err(e) => {
            tracing::warn!(
                "clients still connected at shutdown: flushing without waiting for them"
            );
            e.flush_and_checkpoint().context("flush at shutdown")?;
        }
    }
    Ok(())
}
