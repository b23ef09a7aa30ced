//! What the engine shows of itself: the Innodb_* status variables and the text of SHOW ENGINE
//! INNODB STATUS (InnoDB's srv_export_innodb_status and srv_printf_innodb_monitor), with the
//! two extended sections of the seed: PURGE STATUS and BUFFER FLUSH by caller.
//!
//! INVARIANTS
//! - M1: every figure printed is read from a live counter or structure; a part InnoDB has and
//!   this engine has not (change buffer) prints as InnoDB prints it when that part is off or
//!   empty, never a made-up number.
//! - M2: the per-second averages cover the time since the previous printout (or since start),
//!   as InnoDB's do; `EngineStats::monitor_last` holds the previous sample.
//! - M3: on an idle engine whose dirty pages are all flushed and whose checkpoint has caught up,
//!   "Log sequence number", "Log flushed up to", "Pages flushed up to" and "Last checkpoint at"
//!   are equal (the page cleaners and the master tick get there on their own).
//!
//! Latches: each figure is read under the structure's own latch for an instant (flush-list
//! and LRU mutexes, one at a time, the trx-system latch); no two are held together, so this
//! can run at any time without entering the latch order.

use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::engine::Inner;
use crate::flush::Caller;

thread_local! {
    /// Rows read and row lock wait time by the calling thread (a connection's thread: the
    /// slow query log's Rows_examined and Lock_time).
    static THREAD_ROWS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static THREAD_LOCK_WAIT: std::cell::Cell<std::time::Duration> =
        const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

pub(crate) fn note_thread_rows(n: u64) {
    THREAD_ROWS.with(|c| c.set(c.get() + n));
}

pub(crate) fn note_thread_lock_wait(d: std::time::Duration) {
    THREAD_LOCK_WAIT.with(|c| c.set(c.get() + d));
}

/// Rows the calling thread has read from tables so far (take the difference around a
/// statement).
pub fn thread_rows_read() -> u64 {
    THREAD_ROWS.with(std::cell::Cell::get)
}

/// Time the calling thread has waited for row locks so far.
pub fn thread_lock_wait() -> std::time::Duration {
    THREAD_LOCK_WAIT.with(std::cell::Cell::get)
}

/// Counters kept between two printouts (M2).
#[derive(Clone, Debug)]
pub struct Sample {
    at: Instant,
    pages_read: u64,
    read_ahead: u64,
    read_ahead_evicted: u64,
    read_ahead_rnd: u64,
    pages_created: u64,
    pages_written: u64,
    made_young: u64,
    made_not_young: u64,
    read_requests: u64,
    data_reads: u64,
    data_writes: u64,
    fsyncs: u64,
    bytes_read: u64,
    log_ios: u64,
    rows: [u64; 4],
    hash_searches: u64,
    btree_searches: u64,
}

pub(crate) fn sample(inner: &Inner) -> Sample {
    let bp = &inner.bp.stats;
    let fil = &inner.fil.stats;
    let log = &inner.log.stats;
    let st = &inner.stats;
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    Sample {
        at: Instant::now(),
        pages_read: pages_read(&inner.bp.stats),
        read_ahead: bp.read_ahead.get(),
        read_ahead_evicted: bp.read_ahead_evicted.get(),
        read_ahead_rnd: bp.read_ahead_rnd.get(),
        pages_created: bp.created.get(),
        pages_written: l(&inner.flush.stats.pages_flushed),
        made_young: bp.made_young.get(),
        made_not_young: bp.made_not_young.get(),
        read_requests: bp.read_requests.get(),
        data_reads: l(&fil.reads),
        data_writes: l(&fil.writes) + l(&log.writes),
        fsyncs: l(&fil.fsyncs) + l(&log.os_log_fsyncs),
        bytes_read: l(&fil.bytes_read),
        log_ios: l(&log.writes),
        rows: [
            st.rows.inserted.get(),
            st.rows.updated.get(),
            st.rows.deleted.get(),
            st.rows.read.get(),
        ],
        hash_searches: inner.ahi.stats.searches.get(),
        btree_searches: inner.ahi.stats.searches_btree.get(),
    }
}

/// Innodb_pages_read: every page read, by the thread that needed it or ahead of need.
fn pages_read(st: &crate::buffer_pool::PoolStats) -> u64 {
    st.reads.get() + st.read_ahead.get() + st.read_ahead_rnd.get()
}

/// Innodb_buffer_pool_reads: pages read because a thread needed them, and (as InnoDB counts
/// them) the pages random read-ahead read.
fn pool_reads(st: &crate::buffer_pool::PoolStats) -> u64 {
    st.reads.get() + st.read_ahead_rnd.get()
}

/// "Pages flushed up to": the oldest modification still in the buffer pool, or the current
/// LSN when no page is dirty.
fn pages_flushed_up_to(inner: &Inner) -> u64 {
    inner
        .bp
        .min_oldest_modification()
        .unwrap_or_else(|| inner.log.lsn())
}

/// The Innodb_* status variables, sorted by name (SHOW GLOBAL STATUS).
pub fn status_vars(inner: &Inner) -> Vec<(&'static str, String)> {
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let bp = &inner.bp;
    let page = bp.page_size() as u64;
    let total = bp.n_frames() as u64;
    let data = bp.n_data() as u64;
    let free = bp.n_free() as u64;
    let dirty = bp.n_dirty() as u64;
    let fil = &inner.fil.stats;
    let log = &inner.log.stats;
    let locks = &inner.trx.locks.stats;
    let st = &inner.stats;
    let waits = l(&locks.waits);
    let wait_ms = l(&locks.wait_ms);
    let n = |v: u64| v.to_string();
    let mut v: Vec<(&'static str, String)> = vec![
        ("Innodb_buffer_pool_bytes_data", n(data * page)),
        ("Innodb_buffer_pool_bytes_dirty", n(dirty * page)),
        ("Innodb_buffer_pool_pages_data", n(data)),
        ("Innodb_buffer_pool_pages_dirty", n(dirty)),
        (
            "Innodb_buffer_pool_pages_flushed",
            n(l(&inner.flush.stats.pages_flushed)),
        ),
        ("Innodb_buffer_pool_pages_free", n(free)),
        (
            "Innodb_buffer_pool_pages_misc",
            n(total.saturating_sub(data + free)),
        ),
        ("Innodb_buffer_pool_pages_total", n(total)),
        (
            "Innodb_buffer_pool_read_ahead",
            n(bp.stats.read_ahead.get()),
        ),
        (
            "Innodb_buffer_pool_read_ahead_evicted",
            n(bp.stats.read_ahead_evicted.get()),
        ),
        (
            "Innodb_buffer_pool_read_ahead_rnd",
            n(bp.stats.read_ahead_rnd.get()),
        ),
        (
            "Innodb_buffer_pool_read_requests",
            n(bp.stats.read_requests.get()),
        ),
        ("Innodb_buffer_pool_reads", n(pool_reads(&bp.stats))),
        ("Innodb_buffer_pool_wait_free", n(bp.stats.wait_free.get())),
        (
            "Innodb_buffer_pool_write_requests",
            n(bp.stats.write_requests.get()),
        ),
        ("Innodb_checkpoint_age", n(inner.log.checkpoint_age())),
        ("Innodb_data_fsyncs", n(l(&fil.fsyncs))),
        ("Innodb_data_read", n(l(&fil.bytes_read))),
        ("Innodb_data_reads", n(l(&fil.reads))),
        ("Innodb_data_writes", n(l(&fil.writes))),
        ("Innodb_data_written", n(l(&fil.bytes_written))),
        (
            "Innodb_dblwr_pages_written",
            n(l(&inner.dblwr.stats.pages_written)),
        ),
        ("Innodb_dblwr_writes", n(l(&inner.dblwr.stats.writes))),
        ("Innodb_deadlocks", n(l(&locks.deadlocks))),
        ("Innodb_history_list_length", n(l(&inner.trx.history_len))),
        ("Innodb_log_waits", n(l(&log.log_waits))),
        ("Innodb_log_write_requests", n(l(&log.write_requests))),
        ("Innodb_log_writes", n(l(&log.writes))),
        ("Innodb_lsn_current", n(inner.log.lsn())),
        ("Innodb_lsn_flushed", n(inner.log.flushed_lsn())),
        ("Innodb_lsn_last_checkpoint", n(inner.log.checkpoint_lsn())),
        ("Innodb_num_open_files", n(inner.fil.open_files() as u64)),
        ("Innodb_os_log_fsyncs", n(l(&log.os_log_fsyncs))),
        ("Innodb_os_log_written", n(l(&log.os_log_written))),
        ("Innodb_page_size", n(page)),
        ("Innodb_pages_created", n(bp.stats.created.get())),
        ("Innodb_pages_read", n(pages_read(&bp.stats))),
        (
            "Innodb_pages_written",
            n(l(&inner.flush.stats.pages_flushed)),
        ),
        ("Innodb_row_lock_current_waits", n(l(&locks.current_waits))),
        ("Innodb_row_lock_time", n(wait_ms)),
        (
            "Innodb_row_lock_time_avg",
            n(wait_ms.checked_div(waits).unwrap_or(0)),
        ),
        ("Innodb_row_lock_time_max", n(l(&locks.max_wait_ms))),
        ("Innodb_row_lock_waits", n(waits)),
        ("Innodb_rows_deleted", n(st.rows.deleted.get())),
        ("Innodb_rows_inserted", n(st.rows.inserted.get())),
        ("Innodb_rows_read", n(st.rows.read.get())),
        ("Innodb_rows_updated", n(st.rows.updated.get())),
        (
            "Innodb_system_rows_deleted",
            n(st.system_rows.deleted.get()),
        ),
        (
            "Innodb_system_rows_inserted",
            n(st.system_rows.inserted.get()),
        ),
        ("Innodb_system_rows_read", n(st.system_rows.read.get())),
        (
            "Innodb_system_rows_updated",
            n(st.system_rows.updated.get()),
        ),
    ];
    v.sort_by(|a, b| a.0.cmp(b.0));
    v
}

fn section(out: &mut String, title: &str) {
    let bar = "-".repeat(title.len());
    let _ = writeln!(out, "{bar}\n{title}\n{bar}");
}

/// What the server tells of the connection running a transaction (SHOW ENGINE INNODB
/// STATUS's "MySQL thread id" line): "host user", and the statement it runs, if any.
pub type SessionOf<'a> = &'a dyn Fn(u64) -> Option<(String, Option<String>)>;

/// A lock request in the words of InnoDB's monitor ("lock_mode X locks rec but not gap").
fn monitor_lock(l: &DataLock) -> String {
    let table = l.table.as_ref().map_or_else(
        || format!("id {}", l.table_id),
        |t| match t.name.split_once('/') {
            Some((d, n)) => format!("`{d}`.`{n}`"),
            None => format!("`{}`", t.name),
        },
    );
    let wait = if l.waiting { " waiting" } else { "" };
    let Some(index) = &l.index else {
        let mode = if l.mode == "AUTO_INC" {
            "AUTO-INC"
        } else {
            &l.mode
        };
        return format!(
            "TABLE LOCK table {table} trx id {} lock mode {mode}{wait}",
            l.trx
        );
    };
    let mut parts = l.mode.split(',');
    let mode = match parts.next() {
        Some("S") => " lock mode S",
        _ => " lock_mode X",
    };
    let kind = match parts.collect::<Vec<_>>().as_slice() {
        ["REC_NOT_GAP"] => " locks rec but not gap",
        ["GAP"] => " locks gap before rec",
        ["GAP", "INSERT_INTENTION"] => " locks gap before rec insert intention",
        _ => "",
    };
    format!(
        "RECORD LOCKS index {index} of table {table} trx id {}{mode}{kind}{wait}",
        l.trx
    )
}

/// The text of SHOW ENGINE INNODB STATUS; `now` is the local time to print in its header,
/// `session` describes the connection running a transaction.
pub fn innodb_status(inner: &Inner, now: &str, session: SessionOf<'_>) -> String {
    let cur = sample(inner);
    // Set at startup (M2).
    let prev = inner
        .stats
        .monitor_last
        .lock()
        .replace(cur.clone())
        .unwrap_or_else(|| cur.clone());
    let secs = cur.at.duration_since(prev.at).as_secs_f64().max(0.001);
    let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let mut o = String::with_capacity(8192);
    let eq = "=".repeat(37);
    let _ = writeln!(o, "\n{eq}\n{now} INNODB MONITOR OUTPUT\n{eq}");
    let _ = writeln!(
        o,
        "Per second averages calculated from the last {} seconds",
        secs.round() as u64
    );

    section(&mut o, "BACKGROUND THREAD");
    let _ = writeln!(
        o,
        "srv_master_thread loops: {} srv_active, 0 srv_shutdown, {} srv_idle",
        l(&inner.stats.master_active),
        l(&inner.stats.master_idle)
    );
    let _ = writeln!(
        o,
        "srv_master_thread log flush and writes: {}",
        l(&inner.stats.master_log_flushes)
    );

    section(&mut o, "SEMAPHORES");
    let locks = &inner.trx.locks.stats;
    let adm = &inner.trx.admission.stats;
    let log = &inner.log.stats;
    // Reservation count: every wait on a synchronization object (sync_stats, which includes
    // row lock waits) plus admission waits and waits for log buffer or log file space.
    let waits = crate::sync_stats::wait_rows(inner);
    let total = crate::sync_stats::total(&waits);
    let _ = writeln!(
        o,
        "OS WAIT ARRAY INFO: reservation count {}",
        total.count + l(&adm.waits) + l(&log.log_waits) + l(&log.full_waits)
    );
    let _ = writeln!(
        o,
        "Row lock waits {}, admission waits {}, log buffer waits {}, log full waits {}",
        l(&locks.waits),
        l(&adm.waits),
        l(&log.log_waits),
        l(&log.full_waits)
    );
    // One line per fixed object (always, so the section's shape does not depend on timing),
    // then all page latches together; SHOW ENGINE INNODB MUTEX has them by index.
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut latches = crate::sync_stats::WaitSnapshot::default();
    for r in &waits {
        if r.kind == crate::sync_stats::Kind::PageLatch {
            latches.merge(&r.waits);
            continue;
        }
        let _ = writeln!(
            o,
            "{} waits {}, wait time {:.3} ms, max {:.3} ms",
            r.name,
            r.waits.count,
            ms(r.waits.sum_ns),
            ms(r.waits.max_ns)
        );
    }
    let _ = writeln!(
        o,
        "page latches waits {}, wait time {:.3} ms, max {:.3} ms",
        latches.count,
        ms(latches.sum_ns),
        ms(latches.max_ns)
    );

    section(&mut o, "TRANSACTIONS");
    let history = l(&inner.trx.history_len);
    let _ = writeln!(o, "Trx id counter {}", inner.trx.max_trx_id());
    let purge_no = inner.trx.purge_view.read().low_limit_no;
    let _ = writeln!(
        o,
        "Purge done for trx's n:o < {purge_no} undo n:o < 0 state: running"
    );
    let _ = writeln!(o, "History list length {history}");
    let _ = writeln!(o, "LIST OF TRANSACTIONS FOR EACH SESSION:");
    // Each transaction as InnoDB lists it: locks (counted from its requests), undo entries,
    // the connection and statement, and the lock it waits for.
    let (locks_now, _) = data_locks(inner);
    let summaries = lock_summaries(&locks_now);
    let now_wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    for t in active_transactions(inner) {
        let _ = writeln!(
            o,
            "---TRANSACTION {}, ACTIVE {} sec",
            t.id,
            (now_wall - t.started).max(0.0) as u64
        );
        let sum = summaries.get(&t.id);
        let who = (t.owner != 0).then(|| session(t.owner)).flatten();
        let waiting = sum.and_then(|x| x.waiting).map(|i| &locks_now[i]);
        if t.lock_structs > 0 || t.rows_modified > 0 {
            let rows = sum.map_or(0, |x| x.rows);
            let _ = write!(
                o,
                "{}{} lock struct(s), heap size {}, {rows} row lock(s)",
                if waiting.is_some() { "LOCK WAIT " } else { "" },
                t.lock_structs,
                t.lock_structs * crate::lock::LOCK_STRUCT_BYTES
            );
            if t.rows_modified > 0 {
                let _ = write!(o, ", undo log entries {}", t.rows_modified);
            }
            let _ = writeln!(o);
        }
        if let Some((host_user, query)) = &who {
            let _ = writeln!(
                o,
                "MySQL thread id {}, OS thread handle 0, query id 0 {host_user}",
                t.owner
            );
            if let Some(q) = query {
                let _ = writeln!(o, "{q}");
            }
        }
        if let (Some(l), Some(since)) = (waiting, t.wait_started) {
            let _ = writeln!(
                o,
                "------- TRX HAS BEEN WAITING {} SEC FOR THIS LOCK TO BE GRANTED:",
                (now_wall - since).max(0.0) as u64
            );
            let _ = writeln!(o, "{}", monitor_lock(l));
            let _ = writeln!(o, "------------------");
        }
    }
    let _ = writeln!(
        o,
        "Lock waits {}, now waiting {}, time waited {} ms, deadlocks {}, lock wait timeouts {}",
        l(&locks.waits),
        l(&locks.current_waits),
        l(&locks.wait_ms),
        l(&locks.deadlocks),
        l(&locks.timeouts)
    );

    section(&mut o, "FILE I/O");
    // A thread that needs a page reads it itself; the read threads read ahead, the write
    // threads write flush batches home. Each thread's figure is the pages it has in hand.
    let busy = |t: &std::sync::atomic::AtomicU32| t.load(Ordering::Relaxed);
    let reads: Vec<u32> = inner.read_ahead.threads.iter().map(busy).collect();
    let writes: Vec<u32> = inner.write_threads.threads.iter().map(busy).collect();
    let kinds = [
        (inner.read_ahead.is_running(), &reads, "read thread"),
        (inner.write_threads.is_running(), &writes, "write thread"),
    ];
    let mut n = 0;
    for (running, pending, kind) in kinds {
        for &p in pending.iter().filter(|_| running) {
            let state = if p > 0 {
                "doing file i/o"
            } else {
                "waiting for completed aio requests"
            };
            let _ = writeln!(o, "I/O thread {n} state: {state} ({kind})");
            n += 1;
        }
    }
    if n > 0 {
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            o,
            "Pending normal aio reads: [{}] , aio writes: [{}] ,",
            list(&reads),
            list(&writes)
        );
    }
    let _ = writeln!(
        o,
        "{} OS file reads, {} OS file writes, {} OS fsyncs",
        cur.data_reads, cur.data_writes, cur.fsyncs
    );
    let _ = writeln!(
        o,
        "{} open files (innodb_open_files={}), {} closed and {} reopened by the file cache; innodb_flush_method={}",
        inner.fil.open_files(),
        inner.fil.open_files_limit(),
        inner.fil.stats.closes.load(Ordering::Relaxed),
        inner.fil.stats.reopens.load(Ordering::Relaxed),
        inner.cfg.flush_method.name()
    );
    let reads = cur.data_reads.saturating_sub(prev.data_reads);
    let avg_bytes = (cur.bytes_read.saturating_sub(prev.bytes_read))
        .checked_div(reads)
        .unwrap_or(0);
    let _ = writeln!(
        o,
        "{:.2} reads/s, {avg_bytes} avg bytes/read, {:.2} writes/s, {:.2} fsyncs/s",
        rate(cur.data_reads, prev.data_reads),
        rate(cur.data_writes, prev.data_writes),
        rate(cur.fsyncs, prev.fsyncs)
    );

    section(&mut o, "INSERT BUFFER AND ADAPTIVE HASH INDEX");
    // M1: no change buffer (innodb_change_buffering=none): InnoDB prints an empty ibuf.
    let _ = writeln!(o, "Ibuf: size 1, free list len 0, seg size 2, 0 merges");
    let _ = writeln!(o, "merged operations:\n insert 0, delete mark 0, delete 0");
    let _ = writeln!(
        o,
        "discarded operations:\n insert 0, delete mark 0, delete 0"
    );
    for p in inner.ahi.part_sizes() {
        let _ = writeln!(
            o,
            "Hash table size {}, node heap has {} buffer(s)",
            p.cells, p.buffers
        );
    }
    let _ = writeln!(
        o,
        "{:.2} hash searches/s, {:.2} non-hash searches/s",
        rate(cur.hash_searches, prev.hash_searches),
        rate(cur.btree_searches, prev.btree_searches)
    );

    section(&mut o, "LOG");
    let lsn = inner.log.lsn();
    let _ = writeln!(o, "Log sequence number {lsn}");
    let _ = writeln!(o, "Log flushed up to   {}", inner.log.flushed_lsn());
    let _ = writeln!(o, "Pages flushed up to {}", pages_flushed_up_to(inner));
    let _ = writeln!(o, "Last checkpoint at  {}", inner.log.checkpoint_lsn());
    let _ = writeln!(
        o,
        "{} log i/o's done, {:.2} log i/o's/second",
        cur.log_ios,
        rate(cur.log_ios, prev.log_ios)
    );

    section(&mut o, "BUFFER POOL AND MEMORY");
    let bp = &inner.bp;
    let page = bp.page_size() as u64;
    let _ = writeln!(
        o,
        "Total large memory allocated {}",
        bp.n_frames() as u64 * page
    );
    let n_inst = bp.instances().len();
    let (mut lru, mut old) = (0u64, 0u64);
    for i in 0..n_inst {
        let (a, b) = bp.lru_lens(i);
        lru += u64::from(a);
        old += u64::from(b);
    }
    pool_lines(
        &mut o,
        bp.n_frames() as u64,
        bp.n_free() as u64,
        lru,
        old,
        bp.n_dirty() as u64,
    );
    let _ = writeln!(
        o,
        "Pages made young {}, not young {}",
        cur.made_young, cur.made_not_young
    );
    let _ = writeln!(
        o,
        "{:.2} youngs/s, {:.2} non-youngs/s",
        rate(cur.made_young, prev.made_young),
        rate(cur.made_not_young, prev.made_not_young)
    );
    let _ = writeln!(
        o,
        "Pages read {}, created {}, written {}",
        cur.pages_read, cur.pages_created, cur.pages_written
    );
    let _ = writeln!(
        o,
        "{:.2} reads/s, {:.2} creates/s, {:.2} writes/s",
        rate(cur.pages_read, prev.pages_read),
        rate(cur.pages_created, prev.pages_created),
        rate(cur.pages_written, prev.pages_written)
    );
    let gets = cur.read_requests.saturating_sub(prev.read_requests);
    let per_mille = |n: u64| (n * 1000).checked_div(gets);
    let misses = cur.pages_read.saturating_sub(prev.pages_read);
    let young = cur.made_young.saturating_sub(prev.made_young);
    let not_young = cur.made_not_young.saturating_sub(prev.made_not_young);
    if let (Some(miss), Some(young), Some(not_young)) =
        (per_mille(misses), per_mille(young), per_mille(not_young))
    {
        let hit = 1000u64.saturating_sub(miss);
        let _ = writeln!(
            o,
            "Buffer pool hit rate {hit} / 1000, young-making rate {young} / 1000 not {not_young} / 1000"
        );
    } else {
        let _ = writeln!(o, "No buffer pool page gets since the last printout");
    }
    let _ = writeln!(
        o,
        "Pages read ahead {:.2}/s, evicted without access {:.2}/s, Random read ahead {:.2}/s",
        rate(cur.read_ahead, prev.read_ahead),
        rate(cur.read_ahead_evicted, prev.read_ahead_evicted),
        rate(cur.read_ahead_rnd, prev.read_ahead_rnd)
    );
    let _ = writeln!(o, "LRU len: {lru}, unzip_LRU len: 0");
    if n_inst > 1 {
        section(&mut o, "INDIVIDUAL BUFFER POOL INFO");
        for i in 0..n_inst {
            let (a, b) = bp.lru_lens(i);
            let _ = writeln!(o, "---BUFFER POOL {i}");
            pool_lines(
                &mut o,
                u64::from(bp.instances()[i].n_frames()),
                bp.free_len_of(i) as u64,
                u64::from(a),
                u64::from(b),
                bp.dirty_len_of(i) as u64,
            );
            let _ = writeln!(o, "LRU len: {a}, unzip_LRU len: 0");
        }
    }

    section(&mut o, "ROW OPERATIONS");
    let _ = writeln!(
        o,
        "{} queries inside InnoDB, {} queries in queue",
        inner.trx.admission.inside(),
        l(&adm.queued)
    );
    let _ = writeln!(
        o,
        "{} read views open inside InnoDB",
        inner.trx.views.n_open()
    );
    let _ = writeln!(o, "Process ID={}", std::process::id());
    let r = &cur.rows;
    let _ = writeln!(
        o,
        "Number of rows inserted {}, updated {}, deleted {}, read {}",
        r[0], r[1], r[2], r[3]
    );
    let p = &prev.rows;
    let _ = writeln!(
        o,
        "{:.2} inserts/s, {:.2} updates/s, {:.2} deletes/s, {:.2} reads/s",
        rate(r[0], p[0]),
        rate(r[1], p[1]),
        rate(r[2], p[2]),
        rate(r[3], p[3])
    );
    let sr = &inner.stats.system_rows;
    let _ = writeln!(
        o,
        "Number of system rows inserted {}, updated {}, deleted {}, read {}",
        sr.inserted.get(),
        sr.updated.get(),
        sr.deleted.get(),
        sr.read.get()
    );

    // The seed's extended sections.
    let ps = &inner.purge_stats;
    section(&mut o, "PURGE STATUS");
    let _ = writeln!(o, "History len: {history}");
    let _ = writeln!(
        o,
        "DML Delay: {} max: {} delayed-queries: {}",
        crate::purge::dml_delay(inner).as_micros(),
        inner.tun.max_purge_lag_delay.load(Ordering::Relaxed),
        l(&ps.dml_delays)
    );
    let _ = writeln!(
        o,
        "Purge calls: {} purged-logs: {} purged-records: {} errors: {}",
        l(&ps.batches),
        l(&ps.logs),
        l(&ps.records),
        l(&ps.errors)
    );
    section(&mut o, "BUFFER FLUSH");
    let fs = &inner.flush.stats;
    let calls: u64 = fs.calls.iter().map(l).sum();
    let _ = writeln!(
        o,
        "Flush calls: {calls} flushed-pages: {}",
        l(&fs.pages_flushed)
    );
    let by = |v: &[std::sync::atomic::AtomicU64]| {
        Caller::ALL
            .iter()
            .map(|c| format!("{}: {}", caller_key(*c), l(&v[*c as usize])))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(o, "Called-by {}", by(&fs.calls));
    let _ = writeln!(o, "Pages-by {}", by(&fs.pages));

    let _ = writeln!(o, "----------------------------");
    let _ = writeln!(o, "END OF INNODB MONITOR OUTPUT");
    let _ = writeln!(o, "============================");
    o
}

/// A caller's key in the BUFFER FLUSH lines (one word, as the seed prints them).
fn caller_key(c: Caller) -> &'static str {
    match c {
        Caller::Adaptive => "redolog",
        Caller::DirtyPct => "dirty-pct",
        Caller::Background => "background",
        Caller::Lru => "LRU",
        Caller::Sync => "checkpoint",
        Caller::SinglePage => "single-page",
        Caller::Shutdown => "shutdown",
    }
}

fn pool_lines(o: &mut String, size: u64, free: u64, lru: u64, old: u64, dirty: u64) {
    let _ = writeln!(o, "Buffer pool size   {size}");
    let _ = writeln!(o, "Free buffers       {free}");
    let _ = writeln!(o, "Database pages     {lru}");
    let _ = writeln!(o, "Old database pages {old}");
    let _ = writeln!(o, "Modified db pages  {dirty}");
}

/// One row of information_schema.INNODB_METRICS (always enabled).
pub struct Metric {
    pub name: &'static str,
    pub subsystem: &'static str,
    /// InnoDB's TYPE: "value" (a level), "status_counter" or "counter" (a running total),
    /// "set_owner"/"set_member" (a total and the figures derived from it).
    pub kind: &'static str,
    pub count: u64,
    pub comment: &'static str,
}

/// information_schema.INNODB_METRICS, under InnoDB's metric names (M1: only those this engine
/// measures).
pub fn metrics(inner: &Inner) -> Vec<Metric> {
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let bp = &inner.bp;
    let fil = &inner.fil.stats;
    let log = &inner.log.stats;
    let locks = &inner.trx.locks.stats;
    let ps = &inner.purge_stats;
    let rows = &inner.stats.rows;
    let ahi = &inner.ahi.stats;
    let m = |name, subsystem, kind, count, comment| Metric {
        name,
        subsystem,
        kind,
        count,
        comment,
    };
    vec![
        m("buffer_pool_reads", "buffer", "status_counter", pool_reads(&bp.stats), "Number of reads directly from disk (innodb_buffer_pool_reads)"),
        m("buffer_pool_read_requests", "buffer", "status_counter", bp.stats.read_requests.get(), "Number of logical read requests (innodb_buffer_pool_read_requests)"),
        m("buffer_pool_write_requests", "buffer", "status_counter", bp.stats.write_requests.get(), "Number of write requests (innodb_buffer_pool_write_requests)"),
        m("buffer_pool_wait_free", "buffer", "status_counter", bp.stats.wait_free.get(), "Number of times waited for free buffer (innodb_buffer_pool_wait_free)"),
        m("buffer_pool_read_ahead", "buffer", "status_counter", bp.stats.read_ahead.get(), "Number of pages read as read ahead (innodb_buffer_pool_read_ahead)"),
        m("buffer_pool_read_ahead_evicted", "buffer", "status_counter", bp.stats.read_ahead_evicted.get(), "Read-ahead pages evicted without being accessed (innodb_buffer_pool_read_ahead_evicted)"),
        m("buffer_pool_size", "server", "value", bp.n_frames() as u64 * bp.page_size() as u64, "Server buffer pool size (all buffer pools) in bytes"),
        m("buffer_pool_pages_total", "buffer", "value", bp.n_frames() as u64, "Total buffer pool size in pages (innodb_buffer_pool_pages_total)"),
        m("buffer_pool_pages_data", "buffer", "value", bp.n_data() as u64, "Buffer pages containing data (innodb_buffer_pool_pages_data)"),
        m("buffer_pool_pages_dirty", "buffer", "value", bp.n_dirty() as u64, "Buffer pages currently dirty (innodb_buffer_pool_pages_dirty)"),
        m("buffer_pool_pages_free", "buffer", "value", bp.n_free() as u64, "Buffer pages currently free (innodb_buffer_pool_pages_free)"),
        m("buffer_pages_created", "buffer_page_io", "counter", bp.stats.created.get(), "Number of pages created"),
        m("buffer_pages_read", "buffer_page_io", "counter", pages_read(&bp.stats), "Number of pages read"),
        m("buffer_pages_written", "buffer_page_io", "counter", l(&inner.flush.stats.pages_flushed), "Number of pages written"),
        m("buffer_flush_batch_total_pages", "buffer", "counter", l(&inner.flush.stats.pages_flushed), "Total pages flushed as part of flush batch"),
        m("buffer_LRU_batch_flush_total_pages", "buffer", "counter", l(&inner.flush.stats.pages[Caller::Lru as usize]), "Total pages flushed as part of LRU batches"),
        m("buffer_flush_adaptive_total_pages", "buffer", "counter", l(&inner.flush.stats.pages[Caller::Adaptive as usize]), "Total pages flushed as part of adaptive flushing"),
        m("buffer_flush_background_total_pages", "buffer", "counter", l(&inner.flush.stats.pages[Caller::Background as usize]), "Total pages flushed as part of background batches"),
        m("buffer_flush_sync_total_pages", "buffer", "counter", l(&inner.flush.stats.pages[Caller::Sync as usize]), "Total pages flushed as part of sync batches"),
        m("buffer_flush_neighbor_total_pages", "buffer", "set_owner", l(&inner.flush.stats.neighbor_pages), "Total neighbors flushed as part of neighbor flush"),
        m("buffer_flush_neighbor", "buffer", "set_member", l(&inner.flush.stats.neighbor_calls), "Number of times neighbors flushing is invoked"),
        m("buffer_flush_neighbor_pages", "buffer", "set_member", l(&inner.flush.stats.neighbor_pages).checked_div(l(&inner.flush.stats.neighbor_calls)).unwrap_or(0), "Pages queued as a neighbor batch"),
        m("os_data_reads", "os", "status_counter", l(&fil.reads), "Number of reads initiated (innodb_data_reads)"),
        m("os_data_writes", "os", "status_counter", l(&fil.writes), "Number of writes initiated (innodb_data_writes)"),
        m("os_data_fsyncs", "os", "status_counter", l(&fil.fsyncs), "Number of fsync() calls (innodb_data_fsyncs)"),
        m("os_log_bytes_written", "os", "status_counter", l(&log.os_log_written), "Bytes of log written (innodb_os_log_written)"),
        m("os_log_fsyncs", "os", "status_counter", l(&log.os_log_fsyncs), "Number of fsync log writes (innodb_os_log_fsyncs)"),
        m("log_lsn_current", "recovery", "value", inner.log.lsn(), "Current LSN value"),
        m("log_lsn_last_flush", "recovery", "value", inner.log.flushed_lsn(), "LSN of Last flush"),
        m("log_lsn_last_checkpoint", "recovery", "value", inner.log.checkpoint_lsn(), "LSN at last checkpoint"),
        m("log_lsn_checkpoint_age", "recovery", "value", inner.log.checkpoint_age(), "Current LSN value minus LSN at last checkpoint"),
        m("log_num_log_io", "recovery", "counter", l(&log.writes), "Number of log I/Os"),
        m("log_waits", "recovery", "status_counter", l(&log.log_waits), "Number of log waits due to small log buffer (innodb_log_waits)"),
        m("log_write_requests", "recovery", "status_counter", l(&log.write_requests), "Number of log write requests (innodb_log_write_requests)"),
        m("log_writes", "recovery", "status_counter", l(&log.writes), "Number of log writes (innodb_log_writes)"),
        m("trx_rseg_history_len", "transaction", "value", l(&inner.trx.history_len), "Length of the TRX_RSEG_HISTORY list"),
        m("trx_active_transactions", "transaction", "value", inner.trx.n_active() as u64, "Number of active transactions"),
        m("purge_invoked", "purge", "counter", l(&ps.batches), "Number of times purge was invoked"),
        m("purge_undo_log_pages", "purge", "counter", l(&ps.logs), "Number of undo log pages handled by the purge"),
        m("purge_del_mark_records", "purge", "counter", l(&ps.records), "Number of delete-marked rows purged"),
        m("purge_dml_delay_usec", "purge", "value", crate::purge::dml_delay(inner).as_micros() as u64, "Microseconds DML to be delayed due to purge lagging"),
        m("lock_deadlocks", "lock", "counter", l(&locks.deadlocks), "Number of deadlocks"),
        m("lock_timeouts", "lock", "counter", l(&locks.timeouts), "Number of lock timeouts"),
        m("lock_row_lock_current_waits", "lock", "status_counter", l(&locks.current_waits), "Number of row locks currently being waited for (innodb_row_lock_current_waits)"),
        m("lock_row_lock_time", "lock", "status_counter", l(&locks.wait_ms), "Time spent in acquiring row locks, in milliseconds (innodb_row_lock_time)"),
        m("lock_row_lock_time_max", "lock", "value", l(&locks.max_wait_ms), "The maximum time to acquire a row lock, in milliseconds (innodb_row_lock_time_max)"),
        m("lock_row_lock_waits", "lock", "status_counter", l(&locks.waits), "Number of times a row lock had to be waited for (innodb_row_lock_waits)"),
        m("adaptive_hash_searches", "adaptive_hash_index", "status_counter", ahi.searches.get(), "Number of successful searches using Adaptive Hash Index"),
        m("adaptive_hash_searches_btree", "adaptive_hash_index", "status_counter", ahi.searches_btree.get(), "Number of searches using B-tree on an index search"),
        m("adaptive_hash_pages_added", "adaptive_hash_index", "counter", ahi.pages_added.get(), "Number of index pages on which the Adaptive Hash Index is built"),
        m("adaptive_hash_rows_added", "adaptive_hash_index", "counter", ahi.rows_added.get(), "Number of Adaptive Hash Index rows added"),
        m("adaptive_hash_rows_removed", "adaptive_hash_index", "counter", ahi.rows_removed.get(), "Number of Adaptive Hash Index rows removed"),
        m("adaptive_hash_rows_updated", "adaptive_hash_index", "counter", ahi.rows_updated.get(), "Number of Adaptive Hash Index rows updated"),
        m("dml_reads", "dml", "status_counter", rows.read.get(), "Number of rows read"),
        m("dml_inserts", "dml", "status_counter", rows.inserted.get(), "Number of rows inserted"),
        m("dml_deletes", "dml", "status_counter", rows.deleted.get(), "Number of rows deleted"),
        m("dml_updates", "dml", "status_counter", rows.updated.get(), "Number of rows updated"),
        m("innodb_dblwr_writes", "server", "status_counter", l(&inner.dblwr.stats.writes), "Number of doublewrite operations that have been performed (innodb_dblwr_writes)"),
        m("innodb_dblwr_pages_written", "server", "status_counter", l(&inner.dblwr.stats.pages_written), "Number of pages that have been written for doublewrite operations (innodb_dblwr_pages_written)"),
        m("innodb_page_size", "server", "value", bp.page_size() as u64, "InnoDB page size in bytes (innodb_page_size)"),
        m("innodb_master_active_loops", "server", "counter", l(&inner.stats.master_active), "Number of times master thread performs its tasks when server is active"),
        m("innodb_master_idle_loops", "server", "counter", l(&inner.stats.master_idle), "Number of times master thread performs its tasks when server is idle"),
    ]
}

/// One row of information_schema.INNODB_BUFFER_POOL_STATS. The event counters are kept for
/// the whole pool, so they are filled in only when there is one instance (None otherwise).
pub struct PoolStat {
    pub pool_id: u64,
    pub pool_size: u64,
    pub free_buffers: u64,
    pub database_pages: u64,
    pub old_database_pages: u64,
    pub modified_database_pages: u64,
    /// made young, not young, pages read, created, written, page gets.
    pub events: Option<[u64; 6]>,
}

pub fn pool_stats(inner: &Inner) -> Vec<PoolStat> {
    let bp = &inner.bp;
    let n = bp.instances().len();
    let st = &bp.stats;
    (0..n)
        .map(|i| {
            let (lru, old) = bp.lru_lens(i);
            PoolStat {
                pool_id: i as u64,
                pool_size: u64::from(bp.instances()[i].n_frames()),
                free_buffers: bp.free_len_of(i) as u64,
                database_pages: u64::from(lru),
                old_database_pages: u64::from(old),
                modified_database_pages: bp.dirty_len_of(i) as u64,
                events: (n == 1).then(|| {
                    [
                        st.made_young.get(),
                        st.made_not_young.get(),
                        pages_read(st),
                        st.created.get(),
                        inner.flush.stats.pages_flushed.load(Ordering::Relaxed),
                        st.read_requests.get(),
                    ]
                }),
            }
        })
        .collect()
}

/// An active transaction as information_schema.INNODB_TRX shows it.
pub struct TrxInfo {
    pub id: u64,
    /// When it started, in seconds since the Unix epoch.
    pub started: f64,
    /// When its current lock wait began (seconds since the Unix epoch), if it waits.
    pub wait_started: Option<f64>,
    /// The connection running it (0: none known, e.g. recovered).
    pub owner: u64,
    /// InnoDB's weight: undo records plus lock structures.
    pub weight: u64,
    pub lock_structs: u64,
    /// Undo records written: the rows it inserted, changed or deleted.
    pub rows_modified: u64,
    pub isolation: crate::trx::Isolation,
}

/// The active transactions (information_schema.INNODB_TRX), oldest first.
pub fn active_transactions(inner: &Inner) -> Vec<TrxInfo> {
    let now_i = Instant::now();
    let now_wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let wall = |t: Instant| now_wall - now_i.saturating_duration_since(t).as_secs_f64();
    inner
        .trx
        .active_list()
        .into_iter()
        .map(|(id, t)| {
            let l = inner.trx.locks.trx(id);
            TrxInfo {
                id,
                started: wall(t),
                wait_started: l.as_ref().and_then(|l| l.wait_since()).map(wall),
                owner: l.as_ref().map_or(0, |l| l.owner.load(Ordering::Relaxed)),
                weight: l.as_ref().map_or(0, |l| l.weight()),
                lock_structs: l.as_ref().map_or(0, |l| l.n_locks()),
                rows_modified: l
                    .as_ref()
                    .map_or(0, |l| l.undo_records.load(Ordering::Relaxed)),
                isolation: crate::trx::Isolation::from_u8(
                    l.as_ref()
                        .map_or(2, |l| l.isolation.load(Ordering::Relaxed)),
                ),
            }
        })
        .collect()
}

/// One lock request as performance_schema.data_locks shows it.
pub struct DataLock {
    pub trx: u64,
    pub table_id: crate::types::TableId,
    /// The table (None if it was dropped meanwhile).
    pub table: Option<std::sync::Arc<crate::dict::Table>>,
    /// The index's name (PRIMARY, GEN_CLUST_INDEX for a hidden key); None for a table lock.
    pub index: Option<String>,
    /// The key's fields; None for a table lock or the supremum.
    pub fields: Option<Vec<LockField>>,
    /// A lock on the gap after the index's last record.
    pub supremum: bool,
    /// InnoDB's notation: IS, IX, S, X (next-key), X,GAP, X,REC_NOT_GAP,
    /// X,GAP,INSERT_INTENTION.
    pub mode: String,
    pub waiting: bool,
    /// ENGINE_LOCK_ID: distinct for each request of one listing.
    pub id: String,
}

/// One field of a locked record's key.
#[derive(Clone)]
pub struct LockField {
    /// The column it comes from (None: the hidden row id).
    pub column: Option<usize>,
    /// Its bytes normalised by the field's collation, in readable form (`Collation::key_text`;
    /// None: NULL).
    pub bytes: Option<Vec<u8>>,
    /// The collation keeps the stored bytes (numbers, dates, binary strings): `bytes` is the
    /// stored value itself.
    pub exact: bool,
}

impl DataLock {
    pub fn is_table(&self) -> bool {
        self.index.is_none()
    }
}

/// One transaction's part of a `data_locks` listing.
#[derive(Default)]
pub struct TrxLockSummary {
    /// Table locks held.
    pub tables: u64,
    /// Record locks granted (the supremum's gap not counted), InnoDB's "row lock(s)".
    pub rows: u64,
    /// The request it waits on, as a position in the listing.
    pub waiting: Option<usize>,
}

/// Each transaction's tables, row locks and waiting request in `list`, in one pass.
pub fn lock_summaries(list: &[DataLock]) -> std::collections::HashMap<u64, TrxLockSummary> {
    let mut m: std::collections::HashMap<u64, TrxLockSummary> = Default::default();
    for (i, l) in list.iter().enumerate() {
        let e = m.entry(l.trx).or_default();
        if l.waiting {
            e.waiting.get_or_insert(i);
        } else if l.is_table() {
            e.tables += 1;
        } else if !l.supremum {
            e.rows += 1;
        }
    }
    m
}

fn lock_mode(key: &crate::lock::LockKey, r: &crate::lock::Req) -> String {
    use crate::lock::Kind;
    if key.is_autoinc() {
        return "AUTO_INC".to_string();
    }
    let m = format!("{:?}", r.mode);
    if key.is_table() {
        return m;
    }
    match r.kind {
        Kind::NextKey => m,
        Kind::Gap => format!("{m},GAP"),
        Kind::RecNotGap => format!("{m},REC_NOT_GAP"),
        Kind::InsertIntention => format!("{m},GAP,INSERT_INTENTION"),
    }
}

/// The lock requests now (performance_schema.data_locks), and which waits for which
/// (data_lock_waits: pairs of positions in the list, the waiting request first).
pub fn data_locks(inner: &Inner) -> (Vec<DataLock>, Vec<(usize, usize)>) {
    use crate::dict::FieldSrc;
    let mut rows = Vec::new();
    let mut waits = Vec::new();
    for (key, q) in inner.trx.locks.requests() {
        let table = inner.dict.by_id(key.table);
        let index = if key.is_table() {
            None
        } else {
            Some(table.as_ref().map_or_else(
                || format!("index {}", key.index),
                |t| {
                    if t.clustered.id == key.index {
                        let name = if t.has_hidden_pk() {
                            "GEN_CLUST_INDEX"
                        } else {
                            "PRIMARY"
                        };
                        name.to_string()
                    } else {
                        t.secondary
                            .iter()
                            .find(|s| s.index.id == key.index)
                            .map_or_else(|| format!("index {}", key.index), |s| s.spec.name.clone())
                    }
                },
            ))
        };
        let index_of = |t: &crate::dict::Table| -> Option<std::sync::Arc<crate::btree::Index>> {
            if t.clustered.id == key.index {
                return Some(t.clustered.clone());
            }
            let s = t.secondary.iter().find(|s| s.index.id == key.index)?;
            Some(s.index.clone())
        };
        let collation = |i: usize| {
            table
                .as_deref()
                .and_then(index_of)
                .and_then(|x| x.leaf.fields.get(i).map(|f| f.collation))
        };
        // The column behind each field of the key.
        let source = |i: usize| -> Option<usize> {
            let t = table.as_ref()?;
            if t.clustered.id == key.index {
                return if t.has_hidden_pk() {
                    None
                } else {
                    t.pk_cols.get(i).copied()
                };
            }
            let s = t.secondary.iter().find(|s| s.index.id == key.index)?;
            match s.fields.get(i)? {
                FieldSrc::Col(c) => Some(*c),
                FieldSrc::RowId => None,
            }
        };
        let fields = key.fields().map(|f| {
            f.iter()
                .enumerate()
                .map(|(i, b)| {
                    let c = collation(i);
                    LockField {
                        column: source(i),
                        bytes: b.map(|b| c.map_or_else(|| b.to_vec(), |c| c.key_text(b))),
                        exact: c == Some(crate::Collation::Binary),
                    }
                })
                .collect()
        });
        let hex: String = key.key.iter().map(|b| format!("{b:02x}")).collect();
        let first = rows.len();
        for (pos, r) in q.iter().enumerate() {
            if r.waiting {
                for b in crate::lock::LockSys::blockers(&q, pos) {
                    waits.push((first + pos, first + b));
                }
            }
            let mode = lock_mode(&key, r);
            let id = if key.is_table() {
                format!("{}:{}:{mode}", r.trx, key.table)
            } else {
                format!("{}:{}:{}:{hex}:{mode}", r.trx, key.table, key.index)
            };
            rows.push(DataLock {
                trx: r.trx,
                table_id: key.table,
                table: table.clone(),
                index: index.clone(),
                fields: fields.clone(),
                supremum: key.is_supremum(),
                mode,
                waiting: r.waiting,
                id,
            });
        }
    }
    (rows, waits)
}
