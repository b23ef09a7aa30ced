//! The verify step (invariants V1-V4 of `dbstress`): after a run, with no session writing,
//! HISTORY must hold the expected number of rows, no orphan rows, 20 rows per object, and
//! its primary key and secondary index must agree.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::Result;

use super::schema::State;
use super::{query_u64, ConnArgs, HISTORY_PER_OBJECT, STATS};

/// One check: what was compared, and whether it held.
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// The verify step's outcome.
pub struct Verify {
    pub checks: Vec<Check>,
    pub failures: Vec<String>,
    pub expected_rows: u64,
    pub history_rows: u64,
    pub seconds: f64,
}

impl Verify {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "verify: {} ({:.1} s)\n",
            if self.passed() { "passed" } else { "FAILED" },
            self.seconds
        );
        for c in &self.checks {
            let _ = writeln!(
                s,
                "  [{}] {}: {}",
                if c.ok { "ok" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        s
    }

    fn check(&mut self, name: &str, ok: bool, detail: String) {
        if !ok {
            self.failures.push(format!("verify: {name}: {detail}"));
        }
        self.checks.push(Check {
            name: name.to_string(),
            ok,
            detail,
        });
    }
}

/// Runs the checks.
pub fn verify(conn: &ConnArgs) -> Result<Verify> {
    let t0 = Instant::now();
    let state = State::read(conn)?;
    let mut c = conn.connect()?;
    let mut q = |sql: &str| query_u64(&mut c, sql);
    let n = state.objects;
    let mut v = Verify {
        checks: Vec::new(),
        failures: Vec::new(),
        expected_rows: state.history_rows,
        history_rows: 0,
        seconds: 0.0,
    };

    // V2: the row count, through the primary key and through the secondary index (V4).
    let rows = q("SELECT COUNT(*) FROM HISTORY")?;
    v.history_rows = rows;
    v.check(
        "HISTORY rows = loaded + inserted - deleted",
        rows == state.history_rows,
        format!("{rows} rows, expected {}", state.history_rows),
    );
    let by_index =
        q("SELECT COUNT(*) FROM HISTORY FORCE INDEX (HISTORY_STAT) WHERE REF_STAT >= 0")?;
    v.check(
        "HISTORY_STAT index has every row",
        by_index == rows,
        format!("{by_index} entries, {rows} rows"),
    );

    // V3: OBJECT ids are exactly 1..N and STAT ids 1..1000 (count, min, max over a primary
    // key), so a range check of HISTORY's references finds every orphan.
    let objects = (
        q("SELECT COUNT(*) FROM OBJECT")?,
        q("SELECT MIN(REF_OBJECT) FROM OBJECT")?,
        q("SELECT MAX(REF_OBJECT) FROM OBJECT")?,
    );
    v.check(
        "OBJECT ids are 1..N",
        objects == (n, 1, n),
        format!("count/min/max {objects:?}, N = {n}"),
    );
    let stats = (
        q("SELECT COUNT(*) FROM STAT")?,
        q("SELECT MIN(REF_STAT) FROM STAT")?,
        q("SELECT MAX(REF_STAT) FROM STAT")?,
    );
    v.check(
        "STAT ids are 1..1000",
        stats == (STATS, 1, STATS),
        format!("count/min/max {stats:?}"),
    );
    let orphans = q(&format!(
        "SELECT COUNT(*) FROM HISTORY WHERE REF_OBJECT < 1 OR REF_OBJECT > {n} \
         OR REF_STAT < 1 OR REF_STAT > {STATS}"
    ))?;
    v.check(
        "no orphan HISTORY rows",
        orphans == 0,
        format!("{orphans} rows name a missing object or stat"),
    );
    let bad_sections = q(
        "SELECT COUNT(*) FROM OBJECT O LEFT JOIN SECTION S ON S.REF_SECTION = O.REF_SECTION \
         WHERE S.REF_SECTION IS NULL",
    )?;
    v.check(
        "no orphan OBJECT rows",
        bad_sections == 0,
        format!("{bad_sections} objects name a missing section"),
    );
    let bad_zones = q(
        "SELECT COUNT(*) FROM SECTION S LEFT JOIN ZONE Z ON Z.REF_ZONE = S.REF_ZONE \
         WHERE Z.REF_ZONE IS NULL",
    )?;
    v.check(
        "no orphan SECTION rows",
        bad_zones == 0,
        format!("{bad_zones} sections name a missing zone"),
    );

    // V1: every object has exactly 20 rows.
    let uneven = q(&format!(
        "SELECT COUNT(*) FROM (SELECT REF_OBJECT FROM HISTORY GROUP BY REF_OBJECT \
         HAVING COUNT(*) <> {HISTORY_PER_OBJECT}) X"
    ))?;
    let with_rows = q("SELECT COUNT(DISTINCT REF_OBJECT) FROM HISTORY")?;
    v.check(
        "every object has 20 HISTORY rows",
        uneven == 0 && with_rows == n,
        format!("{uneven} objects with another count, {with_rows} of {n} objects have rows"),
    );
    v.seconds = t0.elapsed().as_secs_f64();
    Ok(v)
}
