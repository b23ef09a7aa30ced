//! The dbSTRESS tables, the parallel loader, and DBSTRESS_STATE, the one-row table that keeps
//! what `verify` needs across runs: the number of objects, HISTORY's expected row count
//! (invariant V2 of `dbstress`) and a run counter that makes inserted HORDER values unique.
//!
//! Column types follow the seed's description of a real customer's schema: integer keys,
//! short names, a DECIMAL measure and a DATETIME. HISTORY's primary key is
//! (REF_OBJECT, HORDER), so SEL2, DEL, INS and UPD all find an object's rows through it;
//! HISTORY_STAT (REF_STAT) is the one secondary index, kept up to date by every write and
//! compared with the primary key by `verify` (V4).

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;

use super::{query_u64, ConnArgs, LoadArgs, HISTORY_PER_OBJECT, SECTIONS, STATS, ZONES};

const TABLES: [&str; 6] = [
    "HISTORY",
    "OBJECT",
    "SECTION",
    "ZONE",
    "STAT",
    "DBSTRESS_STATE",
];

const CREATE: [&str; 6] = [
    "CREATE TABLE ZONE (REF_ZONE INT NOT NULL PRIMARY KEY, NAME VARCHAR(32) NOT NULL, \
     NOTE VARCHAR(100) NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE SECTION (REF_SECTION INT NOT NULL PRIMARY KEY, REF_ZONE INT NOT NULL, \
     NAME VARCHAR(32) NOT NULL, NOTE VARCHAR(100) NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE STAT (REF_STAT INT NOT NULL PRIMARY KEY, NAME VARCHAR(32) NOT NULL, \
     UNIT VARCHAR(16) NOT NULL, NOTE VARCHAR(100) NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE OBJECT (REF_OBJECT INT NOT NULL PRIMARY KEY, REF_SECTION INT NOT NULL, \
     NAME VARCHAR(32) NOT NULL, NOTE VARCHAR(200) NOT NULL, CREATED DATETIME NOT NULL) \
     ENGINE=InnoDB",
    "CREATE TABLE HISTORY (REF_OBJECT INT NOT NULL, HORDER BIGINT NOT NULL, \
     REF_STAT INT NOT NULL, VALUE DECIMAL(12,2) NOT NULL, NOTE VARCHAR(64) NOT NULL, \
     CREATED DATETIME NOT NULL, PRIMARY KEY (REF_OBJECT, HORDER), \
     KEY HISTORY_STAT (REF_STAT)) ENGINE=InnoDB",
    "CREATE TABLE DBSTRESS_STATE (ID INT NOT NULL PRIMARY KEY, OBJECTS BIGINT NOT NULL, \
     HISTORY_ROWS BIGINT NOT NULL, RUNS BIGINT NOT NULL) ENGINE=InnoDB",
];

/// The section of an object, the stat of a loaded HISTORY row: spread, deterministic.
pub fn section_of(object: u64) -> u64 {
    object * 7919 % SECTIONS + 1
}

fn stat_of(object: u64, horder: u64) -> u64 {
    (object * 31 + horder * 97) % STATS + 1
}

/// A printable filler of `len` characters that differs between rows.
fn filler(seed: u64, len: usize) -> String {
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHA[(x % ALPHA.len() as u64) as usize] as char
        })
        .collect()
}

/// Drops and creates the tables, then loads them.
pub fn load(a: &LoadArgs) -> Result<()> {
    if a.objects == 0 || a.load_threads == 0 || a.batch == 0 {
        bail!("--objects, --load-threads and --batch must be positive");
    }
    if a.objects > i32::MAX as u64 {
        bail!("--objects must fit REF_OBJECT (INT)");
    }
    let db = &a.conn.database;
    if db.contains('`') {
        bail!("the database name must not contain a backquote");
    }
    let mut c = a.conn.connect_server()?;
    c.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
        .with_context(|| format!("create database {db}"))?;
    let mut c = a.conn.connect()?;
    for t in TABLES {
        c.query_drop(format!("DROP TABLE IF EXISTS {t}"))
            .with_context(|| format!("drop table {t}"))?;
    }
    for sql in CREATE {
        c.query_drop(sql).with_context(|| sql.to_string())?;
    }
    let t0 = Instant::now();
    insert_rows(&mut c, "ZONE", 1..=ZONES, |s, z| {
        let _ = write!(s, "({z},'ZONE-{z}','{}')", filler(z, 40));
    })?;
    insert_rows(&mut c, "SECTION", 1..=SECTIONS, |s, x| {
        let _ = write!(
            s,
            "({x},{},'SECTION-{x}','{}')",
            (x - 1) % ZONES + 1,
            filler(x + 100, 40)
        );
    })?;
    insert_rows(&mut c, "STAT", 1..=STATS, |s, x| {
        let _ = write!(
            s,
            "({x},'STAT-{x}','u{}','{}')",
            x % 7,
            filler(x + 1000, 40)
        );
    })?;
    let rows = load_objects(a)?;
    c.query_drop(format!(
        "INSERT INTO DBSTRESS_STATE VALUES (1, {}, {}, 0)",
        a.objects,
        a.objects * HISTORY_PER_OBJECT
    ))
    .context("insert into DBSTRESS_STATE")?;
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "loaded {} objects and {} history rows in {:.1} s ({:.0} rows/s, {} connections)",
        a.objects,
        rows,
        secs,
        (rows + a.objects) as f64 / secs.max(1e-9),
        a.load_threads
    );
    Ok(())
}

/// One multi-row INSERT per 1000 ids of a small table.
fn insert_rows(
    c: &mut mysql::Conn,
    table: &str,
    ids: std::ops::RangeInclusive<u64>,
    row: impl Fn(&mut String, u64),
) -> Result<()> {
    let ids: Vec<u64> = ids.collect();
    for chunk in ids.chunks(1000) {
        let mut sql = format!("INSERT INTO {table} VALUES ");
        for (i, &id) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            row(&mut sql, id);
        }
        c.query_drop(&sql)
            .with_context(|| format!("insert into {table}"))?;
    }
    Ok(())
}

/// OBJECT and HISTORY: `load_threads` connections take chunks of `batch` objects in turn and
/// insert the chunk's OBJECT rows, then its HISTORY rows, `batch` rows per statement. Returns
/// the HISTORY rows inserted.
fn load_objects(a: &LoadArgs) -> Result<u64> {
    let next = AtomicU64::new(1);
    let failed = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let bar = progress(a.objects);
    let chunk = a.batch as u64;
    let results: Vec<Result<u64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..a.load_threads)
            .map(|_| {
                scope.spawn(|| -> Result<u64> {
                    let mut c = a.conn.connect()?;
                    let mut rows = 0;
                    while !failed.load(Ordering::Relaxed) {
                        let first = next.fetch_add(chunk, Ordering::Relaxed);
                        if first > a.objects {
                            break;
                        }
                        let last = (first + chunk - 1).min(a.objects);
                        let r = load_chunk(&mut c, first, last, a.batch);
                        if r.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        rows += r?;
                        let n = last - first + 1;
                        let total = done.fetch_add(n, Ordering::Relaxed) + n;
                        bar.inc(n);
                        if bar.is_hidden() && total * 10 / a.objects > (total - n) * 10 / a.objects
                        {
                            eprintln!("  loaded {total} of {} objects", a.objects);
                        }
                    }
                    Ok(rows)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| bail!("a loader thread panicked"))
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut rows = 0;
    for r in results {
        rows += r?;
    }
    Ok(rows)
}

fn load_chunk(c: &mut mysql::Conn, first: u64, last: u64, batch: usize) -> Result<u64> {
    let mut sql = String::from("INSERT INTO OBJECT VALUES ");
    for o in first..=last {
        if o > first {
            sql.push(',');
        }
        let _ = write!(
            sql,
            "({o},{},'OBJECT-{o}','{}','2026-01-01 00:00:00')",
            section_of(o),
            filler(o, 60)
        );
    }
    c.query_drop(&sql)
        .with_context(|| format!("insert OBJECT rows {first}..{last}"))?;
    let mut rows = 0u64;
    let mut pending = 0usize;
    sql.clear();
    for o in first..=last {
        for h in 1..=HISTORY_PER_OBJECT {
            sql.push_str(if pending == 0 {
                "INSERT INTO HISTORY VALUES "
            } else {
                ","
            });
            let _ = write!(
                sql,
                "({o},{h},{},{}.{:02},'{}','2026-01-01 00:00:00')",
                stat_of(o, h),
                (o * 13 + h) % 100_000,
                h % 100,
                filler(o * 32 + h, 20)
            );
            pending += 1;
            if pending == batch {
                c.query_drop(&sql)
                    .with_context(|| format!("insert HISTORY rows of objects {first}..{last}"))?;
                rows += pending as u64;
                pending = 0;
                sql.clear();
            }
        }
    }
    if pending > 0 {
        c.query_drop(&sql)
            .with_context(|| format!("insert HISTORY rows of objects {first}..{last}"))?;
        rows += pending as u64;
    }
    Ok(rows)
}

/// A progress bar on stderr, hidden when stderr is not a terminal (lines every 10% instead).
fn progress(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    let template =
        "loading [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} objects ({per_sec:0}, eta {eta})";
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb
}

/// The row of DBSTRESS_STATE.
pub struct State {
    pub objects: u64,
    pub history_rows: u64,
}

impl State {
    pub fn read(conn: &ConnArgs) -> Result<State> {
        let mut c = conn.connect()?;
        let row: Option<(i64, i64)> = c
            .query_first("SELECT OBJECTS, HISTORY_ROWS FROM DBSTRESS_STATE WHERE ID = 1")
            .context("read DBSTRESS_STATE (load the tables first: dbstress load, or run --load)")?;
        match row {
            Some((o, h)) if o > 0 && h >= 0 => Ok(State {
                objects: o as u64,
                history_rows: h as u64,
            }),
            _ => bail!("DBSTRESS_STATE has no valid row: load the tables again"),
        }
    }

    /// Counts this run and returns the base of the HORDER values it inserts: the run number
    /// times 2^32, above the loaded HORDERs 1..20 and every other run's.
    pub fn next_horder_base(&self, conn: &ConnArgs) -> Result<i64> {
        let mut c = conn.connect()?;
        c.query_drop("UPDATE DBSTRESS_STATE SET RUNS = RUNS + 1 WHERE ID = 1")
            .context("count the run in DBSTRESS_STATE")?;
        let runs = query_u64(&mut c, "SELECT RUNS FROM DBSTRESS_STATE WHERE ID = 1")?;
        Ok((runs as i64) << 32)
    }

    /// Adds a run's acknowledged inserts minus deletes to the expected HISTORY row count.
    pub fn add_history_rows(conn: &ConnArgs, delta: i64) -> Result<()> {
        if delta == 0 {
            return Ok(());
        }
        let mut c = conn.connect()?;
        c.query_drop(format!(
            "UPDATE DBSTRESS_STATE SET HISTORY_ROWS = HISTORY_ROWS + ({delta}) WHERE ID = 1"
        ))
        .context("record the run's row changes in DBSTRESS_STATE")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_references_are_in_range() {
        for o in 1..5000 {
            assert!((1..=SECTIONS).contains(&section_of(o)));
            for h in 1..=HISTORY_PER_OBJECT {
                assert!((1..=STATS).contains(&stat_of(o, h)));
            }
        }
        assert_eq!(filler(7, 12).len(), 12);
        assert_ne!(filler(7, 12), filler(8, 12));
        assert!(filler(9, 50).bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
