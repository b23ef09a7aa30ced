//! The isolation cases (Hermitage's anomalies and our locking cases) and MariaDB's recorded
//! outcomes, shared by the engine's replay (`crates/engine/tests/isolation.rs`) and the SQL
//! replay over the MySQL protocol (`crates/server/tests/isolation_sql.rs`). The file formats
//! are described at the top of `cases.txt` and in `tools/hermitage/README.md`.

use std::collections::BTreeMap;

/// The levels, in the order of the expected file, with their names there.
pub const LEVELS: [&str; 4] = [
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];

/// Where `cases.txt` and `expected-mariadb-10.11.txt` live.
pub const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/tests/isolation/");

/// One case: its name, the levels it runs at (names from `LEVELS`) and its steps, each a
/// transaction number and a statement.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub levels: Vec<String>,
    pub steps: Vec<(usize, String)>,
}

/// (case, level, si) -> the outcome lines MariaDB gave.
pub type Expected = BTreeMap<(String, String, bool), Vec<String>>;

/// Parses `cases.txt`. Panics on a malformed file (the file is part of the tests).
pub fn parse_cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut cur: Option<Case> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("case ") {
            let mut parts = rest.split_whitespace();
            let name = parts.next().expect("case name").to_string();
            let mut levels: Vec<String> = LEVELS.iter().map(|l| l.to_string()).collect();
            for opt in parts {
                let l = opt.strip_prefix("levels=").expect("only levels= options");
                let want: Vec<&str> = l.split(',').collect();
                for w in &want {
                    assert!(LEVELS.contains(w), "unknown level {w}");
                }
                levels = LEVELS
                    .iter()
                    .filter(|l| want.contains(l))
                    .map(|l| l.to_string())
                    .collect();
            }
            cur = Some(Case {
                name,
                levels,
                steps: Vec::new(),
            });
        } else if line == "end" {
            out.push(cur.take().expect("end after case"));
        } else {
            let (t, stmt) = line.split_once(": ").expect("T<n>: statement");
            let n: usize = t.trim_start_matches('T').parse().expect("T<n>");
            cur.as_mut()
                .expect("step inside a case")
                .steps
                .push((n, stmt.to_string()));
        }
    }
    assert!(cur.is_none(), "case without end");
    out
}

/// Parses the expected file.
pub fn parse_expected(text: &str) -> Expected {
    let mut out = BTreeMap::new();
    let mut cur: Option<((String, String, bool), Vec<String>)> = None;
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("case ") {
            let p: Vec<&str> = rest.split_whitespace().collect();
            cur = Some(((p[0].into(), p[1].into(), p[2] == "si=on"), Vec::new()));
        } else if line == "end" {
            let (k, v) = cur.take().expect("end after case");
            out.insert(k, v);
        } else {
            cur.as_mut()
                .expect("line inside a case")
                .1
                .push(line.to_string());
        }
    }
    out
}

/// The cases and the expected outcomes, read from `DIR`.
pub fn load() -> (Vec<Case>, Expected) {
    let read = |f: &str| {
        std::fs::read_to_string(format!("{DIR}{f}")).unwrap_or_else(|e| panic!("{DIR}{f}: {e}"))
    };
    (
        parse_cases(&read("cases.txt")),
        parse_expected(&read("expected-mariadb-10.11.txt")),
    )
}

/// Compares one run with MariaDB's; a description of the difference if there is one.
pub fn compare(
    expected: &Expected,
    case: &str,
    level: &str,
    si: bool,
    got: &[String],
) -> Option<String> {
    let key = (case.to_string(), level.to_string(), si);
    let want = expected
        .get(&key)
        .unwrap_or_else(|| panic!("no expected outcome for {key:?}"));
    (got != want.as_slice()).then(|| {
        format!(
            "case {case} {level} si={}:\n  expected: {}\n  got:      {}",
            if si { "on" } else { "off" },
            want.join(" | "),
            got.join(" | ")
        )
    })
}

/// `ISOLATION_CASE=<name>[,<name>...]` restricts a replay to some cases.
pub fn selected(case: &Case) -> bool {
    std::env::var("ISOLATION_CASE")
        .map(|only| only.split(',').any(|o| o == case.name))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_run_has_an_expected_outcome() {
        let (cases, expected) = load();
        let runs: usize = cases.iter().map(|c| 2 * c.levels.len()).sum();
        assert_eq!(runs, expected.len());
        for c in &cases {
            for l in &c.levels {
                for si in [false, true] {
                    assert!(expected.contains_key(&(c.name.clone(), l.clone(), si)));
                }
            }
        }
    }
}
