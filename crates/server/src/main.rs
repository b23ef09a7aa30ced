//! `innoxide`: the server. It opens (or initialises) a data directory with the storage engine,
//! loads the SQL catalog, listens for MySQL clients on TCP and a Unix socket (one thread per
//! connection), and shuts down cleanly (flush + checkpoint) on SIGTERM or SIGINT, like mysqld.

mod catalog;
mod conn;
mod errlog;
mod exec;
mod net;
mod options;
mod privs;
mod profile;
mod slowlog;
mod status;
mod tls;
mod vars;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use innoxide_engine::Engine;

/// mimalloc rather than glibc's malloc: with more sessions than glibc has arenas (8 per core),
/// threads queue on the arena locks and on fastbin consolidation; 64 sysbench read-only
/// sessions on 2 cores spent about 28% of the server's time in malloc and free (perf, see
/// docs/benchmarks.md). mimalloc's per-thread heaps take no lock on the common path.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Logs the reasons startup cannot go on, as mysqld does, and exits with status 1.
fn abort(errors: &[String]) -> ! {
    for e in errors {
        for line in e.lines() {
            tracing::error!("{line}");
        }
    }
    tracing::error!("Aborting");
    std::process::exit(1)
}

/// Reads the option files and the command line (options.rs); handles --help, --version and
/// --print-defaults; logs the options' warnings. Exits on a fatal option error.
fn load_options() -> options::Options {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let loaded = options::Options::load(&args, &options::Env::from_process());
    let level = loaded
        .as_ref()
        .map_or_else(|_| "info".to_string(), |o| o.log_level.clone());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .or_else(|_| tracing_subscriber::EnvFilter::try_new(&level))
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .event_format(errlog::MariadbFormat)
        .init();
    let opts = match loaded {
        Ok(o) => o,
        Err(f) => {
            for w in &f.warnings {
                tracing::warn!("{w}");
            }
            abort(&f.errors)
        }
    };
    for w in &opts.warnings {
        tracing::warn!("{w}");
    }
    let out = match opts.action {
        options::Action::Run => return opts,
        options::Action::Help { verbose } => opts.help(verbose),
        options::Action::PrintDefaults => opts.print_defaults(),
        options::Action::Version => format!(
            "innoxide  Ver {} for {} on {} (innoxide {})\n",
            vars::SERVER_VERSION,
            std::env::consts::OS,
            std::env::consts::ARCH,
            env!("CARGO_PKG_VERSION")
        ),
    };
    print!("{out}");
    std::process::exit(0)
}

fn main() -> anyhow::Result<()> {
    let opts = load_options();
    let cfg = opts
        .engine_config()
        .unwrap_or_else(|e| abort(std::slice::from_ref(&e)));
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
    let mandatory = vars
        .mandatory_roles()
        .ok_or_else(|| anyhow::anyhow!("mandatory_roles: not a list of role names"))?;
    catalog
        .set_mandatory_roles(mandatory)
        .map_err(|e| anyhow::anyhow!("mandatory_roles: {e}"))?;
    let resizer = Arc::downgrade(&engine);
    vars.set_pool_resizer(move |bytes| match resizer.upgrade() {
        Some(e) => e.resize_buffer_pool(bytes),
        None => Err("the storage engine is shutting down".into()),
    });
    let switch = Arc::downgrade(&engine);
    vars.set_ahi_switch(move |on| {
        if let Some(e) = switch.upgrade() {
            e.set_adaptive_hash_index(on);
        }
    });
    let tls = match (&opts.ssl_cert, &opts.ssl_key) {
        (Some(cert), Some(key)) => Some(tls::load(cert, key).map_err(anyhow::Error::msg)?),
        (None, None) => None,
        _ => anyhow::bail!("TLS needs both ssl_cert and ssl_key"),
    };
    let server = Arc::new(exec::Server {
        catalog,
        vars,
        next_conn_id: AtomicU32::new(1),
        sessions: innoxide_engine::latch::Mutex::new(std::collections::HashMap::new()),
        started: std::time::Instant::now(),
        connections: AtomicU64::new(0),
        prepared: AtomicU64::new(0),
        slow_queries: AtomicU64::new(0),
        sort_merge_passes: Arc::default(),
        tmp_tables: AtomicU64::new(0),
        tmp_disk_tables: AtomicU64::new(0),
        slow_log: slowlog::SlowLog::new(opts.port, &opts.socket),
        flushes: AtomicU64::new(0),
        tls,
        stop: stop.clone(),
        status: Default::default(),
        named_locks: Default::default(),
        table_locks: Default::default(),
    });
    exec::ddl::ensure_log_tables(&server)
        .map_err(|e| anyhow::anyhow!("creating mysql.general_log and mysql.slow_log: {e}"))?;
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
    tracing::info!("shutting down: closing listeners, flushing and writing a checkpoint");
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
