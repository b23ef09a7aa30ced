//! What a dbSTRESS run prints and writes: the report after each step, the summary table, the
//! JSON results (read back by `innoxide-bench chart`) and the CSV.
//!
//! JSON shape: `{"benchmark": "dbstress", "label", "scenario", "settings": {...},
//! "steps": [{"sessions", "seconds", "transactions", "tps", "errors", "types": {"SEL1":
//! {"count", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"}, ...},
//! "timeline": [{"t", "tps", "errors", "p95_ms"}], "session_tps": {...}}],
//! "accounting": {...}, "verify": {...} or null, "failures": [...], "passed"}`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::session::{Kind, ALL, KIND_NAMES};
use super::step::{Accounting, Plan, StepResult};
use super::verify::Verify;
use super::RunArgs;

/// The report printed after a step.
pub fn step_text(s: &StepResult, plan: &Plan) -> String {
    let mut out = format!(
        "step: {} sessions, {:.1} s: {} transactions, {:.1} TPS, {} errors\n",
        s.sessions,
        s.seconds,
        s.txns,
        s.tps(),
        s.errors()
    );
    let _ = writeln!(
        out,
        "  {:<6} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "type", "count", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms"
    );
    for (i, k) in s.kinds.iter().enumerate() {
        if k.count == 0 && k.errors == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "  {:<6} {:>9} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.1}",
            KIND_NAMES[i],
            k.count,
            k.errors,
            k.ms(0.50),
            k.ms(0.95),
            k.ms(0.99),
            k.max_ms()
        );
    }
    if let Some(target) = s.target_rate {
        let r = rates(&s.session_rates);
        let _ = writeln!(
            out,
            "  per-session TPS (target {target:.2}): min {:.3}, mean {:.3}, max {:.3}; {} of {} \
             sessions below 95% of the target (less one transaction)",
            r.0,
            r.1,
            r.2,
            s.slow_sessions(),
            s.sessions
        );
    }
    let _ = plan;
    out
}

/// (min, mean, max) of per-session rates.
fn rates(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    (min, v.iter().sum::<f64>() / v.len() as f64, max)
}

/// The table printed at the end of a run: one line per step.
pub fn summary_table(steps: &[StepResult]) -> String {
    let mut out = format!(
        "\n{:>8} {:>10} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "sessions", "TPS", "errors", "READ p95", "WRITE p95", "ALL p50", "ALL p95", "ALL p99"
    );
    for s in steps {
        let k = |i: usize| &s.kinds[i];
        let _ = writeln!(
            out,
            "{:>8} {:>10.1} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            s.sessions,
            s.tps(),
            s.errors(),
            k(Kind::Read as usize).ms(0.95),
            k(Kind::Write as usize).ms(0.95),
            k(ALL).ms(0.50),
            k(ALL).ms(0.95),
            k(ALL).ms(0.99)
        );
    }
    out.push_str("(latencies in ms)\n");
    out
}

fn step_json(s: &StepResult) -> Value {
    let mut types = serde_json::Map::new();
    for (i, k) in s.kinds.iter().enumerate() {
        types.insert(
            KIND_NAMES[i].to_string(),
            json!({
                "count": k.count,
                "errors": k.errors,
                "p50_ms": k.ms(0.50),
                "p95_ms": k.ms(0.95),
                "p99_ms": k.ms(0.99),
                "max_ms": k.max_ms(),
                "mean_ms": k.mean_ms(),
            }),
        );
    }
    let timeline: Vec<Value> = s
        .timeline
        .iter()
        .map(|t| json!({"t": t.t, "tps": t.tps, "errors": t.errors, "p95_ms": t.p95_ms}))
        .collect();
    let (min, mean, max) = rates(&s.session_rates);
    json!({
        "sessions": s.sessions,
        "seconds": s.seconds,
        "transactions": s.txns,
        "tps": s.tps(),
        "errors": s.errors(),
        "hard_errors": s.hard_errors,
        "last_error": s.last_error,
        "wrong_results": s.wrong,
        "types": types,
        "timeline": timeline,
        "session_tps": {
            "target": s.target_rate,
            "min": min,
            "mean": mean,
            "max": max,
            "below_95pct_of_target": s.slow_sessions(),
        },
    })
}

/// The whole run as JSON.
pub fn run_json(
    a: &RunArgs,
    plan: &Plan,
    steps: &[StepResult],
    acct: &Accounting,
    v: Option<&Verify>,
    failures: &[String],
    started: Instant,
) -> Value {
    let verify = v.map(|v| {
        json!({
            "passed": v.passed(),
            "history_rows": v.history_rows,
            "expected_rows": v.expected_rows,
            "seconds": v.seconds,
            "checks": v.checks.iter().map(|c| json!({"name": c.name, "ok": c.ok, "detail": c.detail})).collect::<Vec<_>>(),
        })
    });
    json!({
        "benchmark": "dbstress",
        "label": a.label,
        "scenario": a.scenario.name(),
        "settings": {
            "objects": plan.objects,
            "rw": plan.rw,
            "update_only": plan.update_only,
            "think_s": plan.think.as_secs_f64(),
            "step_time_s": plan.step_time.as_secs_f64(),
            "warmup_s": plan.warmup.as_secs_f64(),
            "seed": plan.seed,
            "server": a.conn.where_(),
        },
        "steps": steps.iter().map(step_json).collect::<Vec<_>>(),
        "accounting": {
            "inserted": acct.inserted,
            "deleted": acct.deleted,
            "unknown_outcome": acct.unknown,
            "reconnects": acct.reconnects,
        },
        "verify": verify,
        "failures": failures,
        "passed": failures.is_empty(),
        "elapsed_s": started.elapsed().as_secs_f64(),
    })
}

/// One line per step and type.
pub fn csv(a: &RunArgs, plan: &Plan, steps: &[StepResult]) -> String {
    let mut out = String::from(
        "label,scenario,rw,update_only,think_s,sessions,seconds,step_tps,type,count,errors,\
         p50_ms,p95_ms,p99_ms,max_ms,mean_ms\n",
    );
    for s in steps {
        for (i, k) in s.kinds.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.3},{:.2},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3}",
                csv_field(&a.label),
                a.scenario.name(),
                plan.rw,
                plan.update_only,
                plan.think.as_secs_f64(),
                s.sessions,
                s.seconds,
                s.tps(),
                KIND_NAMES[i],
                k.count,
                k.errors,
                k.ms(0.50),
                k.ms(0.95),
                k.ms(0.99),
                k.max_ms(),
                k.mean_ms()
            );
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes an output file.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_csv_fields() {
        assert_eq!(rates(&[1.0, 0.5, 1.5]), (0.5, 1.0, 1.5));
        assert_eq!(rates(&[]), (0.0, 0.0, 0.0));
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
