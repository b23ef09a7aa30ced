//! Results of the engine benchmark: the figures each measurement produced, the summary table
//! printed at the end, and the machine-readable JSON written with `--json`.
//!
//! The JSON is produced by a small writer here (the workspace has no serde); its shape is
//! `{"benchmark": "engine", "settings": {...}, "cases": [{..., "threads": [...]}],
//!   "lookup_scaling": x, "failures": [...]}`.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default)]
pub struct Latency {
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Latency {
    /// From a histogram of nanoseconds.
    pub fn from_hist(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            p50_us: us(h.value_at_quantile(0.50)),
            p95_us: us(h.value_at_quantile(0.95)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
        }
    }

    pub fn brief(&self) -> String {
        format!(
            "p50 {} us, p95 {} us, p99 {} us, max {} us",
            fmt_us(self.p50_us),
            fmt_us(self.p95_us),
            fmt_us(self.p99_us),
            fmt_us(self.max_us)
        )
    }

    fn json(&self) -> Json {
        Json::obj([
            ("p50_us", Json::Num(self.p50_us)),
            ("p95_us", Json::Num(self.p95_us)),
            ("p99_us", Json::Num(self.p99_us)),
            ("max_us", Json::Num(self.max_us)),
            ("mean_us", Json::Num(self.mean_us)),
        ])
    }
}

/// Microseconds with one decimal below 100, whole above.
pub fn fmt_us(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// One timed measurement. `ops` are lookups or inserted rows; the latency is per transaction.
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    pub ops: u64,
    pub seconds: f64,
    pub latency: Latency,
}

impl Measurement {
    pub fn per_sec(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }

    fn json(&self) -> Json {
        Json::obj([
            ("ops", Json::Num(self.ops as f64)),
            ("seconds", Json::Num(self.seconds)),
            ("per_sec", Json::Num(self.per_sec())),
            ("latency", self.latency.json()),
        ])
    }
}

/// The point-lookup measurement with its checks and buffer pool counters.
#[derive(Clone, Debug, Default)]
pub struct Lookups {
    pub m: Measurement,
    pub missing: u64,
    pub wrong: u64,
    /// Deltas of Innodb_buffer_pool_reads and Innodb_buffer_pool_read_requests.
    pub reads: u64,
    pub read_requests: u64,
    /// Delta of "pages made young" (each one took the buffer pool's LRU mutex).
    pub made_young: u64,
    /// Lookups/s of each round.
    pub round_rates: Vec<f64>,
    /// Cores' worth of CPU that other processes (and the hypervisor's steal) took meanwhile.
    pub others_cores: Option<f64>,
    /// CPU time the lookup threads used, summed.
    pub cpu_ns: u64,
}

impl Lookups {
    /// CPU microseconds per lookup (None without a measure).
    pub fn cpu_us(&self) -> Option<f64> {
        (self.cpu_ns > 0 && self.m.ops > 0).then(|| self.cpu_ns as f64 / self.m.ops as f64 / 1e3)
    }

    /// Fraction of page requests served from the pool.
    pub fn hit_ratio(&self) -> f64 {
        if self.read_requests == 0 {
            return 1.0;
        }
        1.0 - self.reads as f64 / self.read_requests as f64
    }
}

/// All measurements of one case at one thread count.
#[derive(Clone, Debug)]
pub struct ThreadRow {
    pub threads: usize,
    pub lookups: Lookups,
    pub insert_1: Measurement,
    pub insert_100: Measurement,
}

/// Summary of `Engine::check` at the end of a case.
#[derive(Clone, Debug)]
pub struct CheckSummary {
    pub records: u64,
    pub pages_in_use: u64,
    pub pages_verified_on_disk: u64,
    pub seconds: f64,
}

/// One dataset: in-pool or 10x-pool.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub rows_loaded: u64,
    pub load_seconds: f64,
    pub flush_seconds: f64,
    pub pool_bytes: u64,
    /// Size of the table's data file (`bench/t.ibd`) after the load, and at the end.
    pub data_bytes_loaded: u64,
    pub data_bytes_end: u64,
    /// Everything in the data directory after the load (system tablespace, redo, undo too).
    pub datadir_bytes_loaded: u64,
    pub rows: Vec<ThreadRow>,
    pub rows_inserted: u64,
    pub rows_counted: u64,
    pub check: Option<CheckSummary>,
}

impl CaseResult {
    pub fn load_rate(&self) -> f64 {
        if self.load_seconds > 0.0 {
            self.rows_loaded as f64 / self.load_seconds
        } else {
            0.0
        }
    }

    /// Lookups/s at `threads` divided by lookups/s with 1 thread.
    pub fn lookup_ratio(&self, threads: usize) -> Option<f64> {
        let one = self
            .rows
            .iter()
            .find(|r| r.threads == 1)?
            .lookups
            .m
            .per_sec();
        let n = self
            .rows
            .iter()
            .find(|r| r.threads == threads)?
            .lookups
            .m
            .per_sec();
        (one > 0.0).then(|| n / one)
    }

    /// The same ratio round by round (rounds run the thread counts back to back).
    pub fn round_ratios(&self, threads: usize) -> Vec<f64> {
        let find = |n: usize| self.rows.iter().find(|r| r.threads == n);
        match (find(1), find(threads)) {
            (Some(one), Some(n)) => one
                .lookups
                .round_rates
                .iter()
                .zip(&n.lookups.round_rates)
                .filter(|(a, _)| **a > 0.0)
                .map(|(a, b)| b / a)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The summary table printed at the end of a run.
pub fn table(cases: &[CaseResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<9} {:>7} {:>15} {:>9} {:>8} {:>9} {:>19} {:>21}",
        "case",
        "threads",
        "point-lookups/s",
        "vs 1 thr",
        "p95 us",
        "pool hit",
        "inserts/s(1/commit)",
        "inserts/s(100/commit)"
    );
    for c in cases {
        for r in &c.rows {
            let ratio = match c.lookup_ratio(r.threads) {
                Some(x) if r.threads != 1 => format!("x{x:.2}"),
                _ => "-".to_string(),
            };
            let _ = writeln!(
                s,
                "{:<9} {:>7} {:>15.0} {:>9} {:>8} {:>8.2}% {:>19.0} {:>21.0}",
                c.name,
                r.threads,
                r.lookups.m.per_sec(),
                ratio,
                fmt_us(r.lookups.m.latency.p95_us),
                r.lookups.hit_ratio() * 100.0,
                r.insert_1.per_sec(),
                r.insert_100.per_sec(),
            );
        }
    }
    s
}

/// A JSON value, enough for the results file.
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn obj<const N: usize>(fields: [(&str, Json); N]) -> Json {
        Json::Obj(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    pub fn write(&self, out: &mut String, indent: usize) {
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(x) if x.is_finite() => {
                if x.fract() == 0.0 && x.abs() < 9.0e15 {
                    let _ = write!(out, "{}", *x as i64);
                } else {
                    let _ = write!(out, "{x}");
                }
            }
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => escape(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    pad(out, indent + 2);
                    v.write(out, indent + 2);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push(']');
            }
            Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    pad(out, indent + 2);
                    escape(out, k);
                    out.push_str(": ");
                    v.write(out, indent + 2);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push('}');
            }
        }
    }
}

fn escape(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn lookups_json(l: &Lookups) -> Json {
    Json::obj([
        ("measurement", l.m.json()),
        ("missing", Json::Num(l.missing as f64)),
        ("wrong_id", Json::Num(l.wrong as f64)),
        ("bp_reads", Json::Num(l.reads as f64)),
        ("bp_read_requests", Json::Num(l.read_requests as f64)),
        ("bp_hit_ratio", Json::Num(l.hit_ratio())),
        ("bp_made_young", Json::Num(l.made_young as f64)),
        (
            "cpu_us_per_lookup",
            l.cpu_us().map_or(Json::Null, Json::Num),
        ),
        (
            "other_processes_cores",
            l.others_cores.map_or(Json::Null, Json::Num),
        ),
        (
            "per_round_per_sec",
            Json::Arr(l.round_rates.iter().map(|&r| Json::Num(r)).collect()),
        ),
    ])
}

/// The JSON of one case.
pub fn case_json(c: &CaseResult) -> Json {
    let rows = c
        .rows
        .iter()
        .map(|r| {
            Json::obj([
                ("threads", Json::Num(r.threads as f64)),
                ("point_lookups", lookups_json(&r.lookups)),
                (
                    "lookup_ratio_vs_1_thread",
                    c.lookup_ratio(r.threads).map_or(Json::Null, Json::Num),
                ),
                (
                    "lookup_ratio_vs_1_thread_per_round",
                    Json::Arr(
                        c.round_ratios(r.threads)
                            .into_iter()
                            .map(Json::Num)
                            .collect(),
                    ),
                ),
                ("inserts_1_per_commit", r.insert_1.json()),
                ("inserts_100_per_commit", r.insert_100.json()),
            ])
        })
        .collect();
    let check = match &c.check {
        None => Json::Null,
        Some(k) => Json::obj([
            ("records", Json::Num(k.records as f64)),
            ("pages_in_use", Json::Num(k.pages_in_use as f64)),
            (
                "pages_verified_on_disk",
                Json::Num(k.pages_verified_on_disk as f64),
            ),
            ("seconds", Json::Num(k.seconds)),
        ]),
    };
    Json::obj([
        ("case", Json::str(c.name.clone())),
        ("rows_loaded", Json::Num(c.rows_loaded as f64)),
        ("load_seconds", Json::Num(c.load_seconds)),
        ("load_rows_per_sec", Json::Num(c.load_rate())),
        ("flush_seconds", Json::Num(c.flush_seconds)),
        ("pool_bytes", Json::Num(c.pool_bytes as f64)),
        (
            "data_bytes_after_load",
            Json::Num(c.data_bytes_loaded as f64),
        ),
        ("data_bytes_at_end", Json::Num(c.data_bytes_end as f64)),
        (
            "datadir_bytes_after_load",
            Json::Num(c.datadir_bytes_loaded as f64),
        ),
        (
            "data_to_pool_ratio",
            Json::Num(c.data_bytes_loaded as f64 / c.pool_bytes.max(1) as f64),
        ),
        ("threads", Json::Arr(rows)),
        ("rows_inserted", Json::Num(c.rows_inserted as f64)),
        ("rows_counted", Json::Num(c.rows_counted as f64)),
        ("check", check),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_and_nests() {
        let j = Json::obj([
            ("a", Json::str("x\"y\\\n")),
            (
                "b",
                Json::Arr(vec![Json::Num(1.0), Json::Num(0.5), Json::Null]),
            ),
            ("c", Json::Bool(true)),
            ("d", Json::Obj(vec![])),
        ]);
        let mut s = String::new();
        j.write(&mut s, 0);
        assert_eq!(
            s,
            "{\n  \"a\": \"x\\\"y\\\\\\n\",\n  \"b\": [\n    1,\n    0.5,\n    null\n  ],\n  \
             \"c\": true,\n  \"d\": {}\n}"
        );
    }

    #[test]
    fn ratio_and_hit_ratio() {
        let m = |ops| Measurement {
            ops,
            seconds: 2.0,
            latency: Latency::default(),
        };
        let row = |threads, ops| ThreadRow {
            threads,
            lookups: Lookups {
                m: m(ops),
                reads: 1,
                read_requests: 4,
                round_rates: vec![ops as f64, ops as f64 / 2.0],
                ..Lookups::default()
            },
            insert_1: m(0),
            insert_100: m(0),
        };
        let c = CaseResult {
            name: "in-pool".into(),
            rows_loaded: 10,
            load_seconds: 1.0,
            flush_seconds: 0.0,
            pool_bytes: 1,
            data_bytes_loaded: 1,
            data_bytes_end: 1,
            datadir_bytes_loaded: 1,
            rows: vec![row(1, 100), row(2, 180)],
            rows_inserted: 0,
            rows_counted: 10,
            check: None,
        };
        assert_eq!(c.lookup_ratio(2), Some(1.8));
        assert_eq!(c.round_ratios(2), vec![1.8, 1.8]);
        assert_eq!(c.rows[0].lookups.hit_ratio(), 0.75);
        assert!(table(&[c]).contains("x1.80"));
    }
}
