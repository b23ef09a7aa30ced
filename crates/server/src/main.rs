//! `innoxide`: the server. It opens (or initialises) a data directory with the storage engine,
//! loads the SQL catalog, listens for MySQL clients on TCP and a Unix socket (one thread per
//! connection, kept for the next one by the thread cache), and shuts down cleanly (flush +
//! checkpoint) on SIGTERM or SIGINT, like mysqld.

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
mod table_cache;
mod thread_cache;
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

/// Descriptors kept for everything but InnoDB's files: client sockets, logs, temporary files.
const OTHER_DESCRIPTORS: u64 = 1024;

/// Raises the process's open files limit (RLIMIT_NOFILE) so innodb_open_files files fit
/// beside the other descriptors, as mysqld raises it for open_files_limit; if the hard
/// limit is too low, lowers innodb_open_files to what fits (at least 10), with a warning, so
/// the value SHOW VARIABLES reports is the one in force.
fn fit_open_files(cfg: &mut innoxide_engine::EngineConfig) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, which lives across the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return;
    }
    let want = cfg.open_files as u64 + OTHER_DESCRIPTORS;
    if lim.rlim_cur < want {
        let raised = libc::rlimit {
            rlim_cur: want.min(lim.rlim_max),
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = raised.rlim_cur;
        }
    }
    let fit = lim.rlim_cur.saturating_sub(OTHER_DESCRIPTORS);
    if (cfg.open_files as u64) > fit {
        let n = usize::try_from(fit)
            .unwrap_or(usize::MAX)
            .max(innoxide_engine::config::MIN_OPEN_FILES);
        tracing::warn!(
            "innodb_open_files={} does not fit under the open files limit ({} descriptors, {} kept \
             for connections and other files); using innodb_open_files={n}",
            cfg.open_files,
            lim.rlim_cur,
            OTHER_DESCRIPTORS
        );
        cfg.open_files = n;
    }
}

fn main() -> anyhow::Result<()> {
    let opts = load_options();
    let mut cfg = opts
        .engine_config()
        .unwrap_or_else(|e| abort(std::slice::from_ref(&e)));
    fit_open_files(&mut cfg);
    tracing::info!(
        "innoxide {} starting: datadir {}, innodb_page_size {}, innodb_buffer_pool_size {}, \
         innodb_flush_method {}, innodb_open_files {}",
        env!("CARGO_PKG_VERSION"),
        cfg.datadir.display(),
        cfg.page_size,
        cfg.buffer_pool_size,
        cfg.flush_method.name(),
        cfg.open_files
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
    let vars = vars::Registry::new(&opts, &engine.inner().cfg, engine.inner().tun.clone());
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let sizes = catalog::CacheSizes {
        instances: size(vars.table_open_cache_instances()),
        open_tables: size(vars.table_open_cache()),
        definitions: size(vars.table_definition_cache()),
    };
    let catalog = Arc::new(
        catalog::Catalog::open(engine.clone(), sizes)
            .map_err(|e| anyhow::anyhow!("loading the catalog: {e}"))?,
    );
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
    let threads = Arc::new(thread_cache::ThreadCache::new(vars.thread_cache_size()));
    let server = Arc::new(exec::Server {
        catalog,
        threads: threads.clone(),
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
    // Threads waiting in the thread cache exit; those still serving exit when they are done.
    threads.shutdown();
    if !opts.socket.is_empty() {
        let _ = std::fs::remove_file(&opts.socket);
    }
    // The AUTO_INCREMENT counters' exact marks, so the restart goes on without a gap.
    if let Err(e) = server.catalog.persist_counters() {
        tracing::warn!("AUTO_INCREMENT counters not written at shutdown: {e}");
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
