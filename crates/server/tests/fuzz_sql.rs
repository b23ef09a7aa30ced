//! SQL fuzzing from the conformance suite: each file's statements run as written (the schema
//! and data its queries expect), then mutated copies of them (a token dropped, doubled,
//! swapped, replaced by an awkward value or by a token of another statement, or another
//! statement put in as a subquery), through the text protocol and as prepared statements.
//! Whatever a statement does, the server must answer it (a result or an error), never panic,
//! and keep serving.
//!
//! Run: `cargo test -p innoxide-server --test fuzz_sql -- --nocapture`; `FUZZ_STATEMENTS`
//! (mutated statements per file, 60 by default) and `FUZZ_SEED` (a number) widen or vary the
//! run. A failure prints the statement that broke the server.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use mysql::prelude::*;

/// Values and words that make statements awkward: limits of the types, NULL, empty and
/// malformed strings, dates that do not exist, operators and keywords out of place.
const AWKWARD: &[&str] = &[
    "NULL",
    "0",
    "-1",
    "18446744073709551615",
    "-9223372036854775809",
    "99999999999999999999999999999999999999999999999999999999999999999",
    "1e308",
    "-1e-308",
    "0.000000000000000000000000000001",
    "''",
    "'x'",
    "'\\\\'",
    "'%'",
    "'2020-02-30'",
    "'0000-00-00 00:00:00'",
    "'838:59:59.999999'",
    "'{\"a\": [1, {\"b\": null}]}'",
    "'$.a[*]'",
    "X'FF'",
    "b'101'",
    "@v",
    "@@sql_mode",
    "DEFAULT",
    "*",
    ",",
    "(",
    ")",
    "=",
    "<=>",
    "+",
    "/",
    "DIV",
    "NOT",
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "UNION",
    "JOIN",
    "OVER ()",
    "(SELECT 1)",
    "(SELECT NULL UNION SELECT 2)",
    "CAST(",
    "COUNT(*)",
    "REPEAT('ab', 100000)",
    "CHAR(255 USING utf8mb4)",
    "_latin1'\u{e9}'",
    "COLLATE utf8mb4_bin",
];

/// A seeded xorshift generator (the run repeats for a seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The SQL of each record of a conformance file, in order.
fn statements(path: &PathBuf) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if !(l.starts_with("statement ") || l.starts_with("query ")) {
            continue;
        }
        let mut sql = Vec::new();
        while let Some(&n) = lines.peek() {
            if n.is_empty() || n == "----" {
                break;
            }
            sql.push(n);
            lines.next();
        }
        out.push(sql.join("\n"));
    }
    out
}

/// Splits SQL into tokens: quoted strings and identifiers whole, words and numbers, and each
/// other character on its own.
fn tokens(sql: &str) -> Vec<String> {
    let b: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == '\'' || c == '"' || c == '`' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else if c.is_alphanumeric() || c == '_' || c == '@' || c == '$' || c == '.' {
            while i < b.len() && (b[i].is_alphanumeric() || "_@$.".contains(b[i])) {
                i += 1;
            }
        } else {
            i += 1;
        }
        out.push(b[start..i].iter().collect());
    }
    out
}

/// One to three mutations of `sql`, with tokens to borrow from `pool`.
fn mutate(rng: &mut Rng, sql: &str, pool: &[Vec<String>]) -> String {
    let mut t = tokens(sql);
    for _ in 0..1 + rng.below(3) {
        if t.is_empty() {
            break;
        }
        let at = rng.below(t.len());
        match rng.below(6) {
            0 => {
                t.remove(at);
            }
            1 => {
                let d = t[at].clone();
                t.insert(at, d);
            }
            2 => {
                let other = rng.below(t.len());
                t.swap(at, other);
            }
            3 => t[at] = AWKWARD[rng.below(AWKWARD.len())].to_string(),
            4 => {
                // Another statement, whole, as a subquery.
                let from = &pool[rng.below(pool.len())];
                t.insert(at, format!("({})", from.join(" ")));
            }
            _ => {
                let from = &pool[rng.below(pool.len())];
                if !from.is_empty() {
                    t[at] = from[rng.below(from.len())].clone();
                }
            }
        }
    }
    t.join(" ")
}

fn connect(port: u16) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .read_timeout(Some(Duration::from_secs(20)))
        .tcp_connect_timeout(Some(Duration::from_secs(10)));
    mysql::Conn::new(opts).unwrap()
}

/// Runs `sql` through the text protocol, or prepared (when it prepares), reading any result
/// whole; errors are the server's answer and fine. False if the connection broke.
fn run(c: &mut mysql::Conn, sql: &str, prepared: bool) -> bool {
    let r = if prepared {
        match c.prep(sql) {
            Ok(st) => {
                let n = st.num_params();
                let params: Vec<mysql::Value> = (0..n)
                    .map(|i| match i % 3 {
                        0 => mysql::Value::Int(1),
                        1 => mysql::Value::Bytes(b"x".to_vec()),
                        _ => mysql::Value::NULL,
                    })
                    .collect();
                let params = if params.is_empty() {
                    mysql::Params::Empty
                } else {
                    mysql::Params::Positional(params)
                };
                let r = c.exec_iter(&st, params).map(|mut it| {
                    while let Some(set) = it.iter() {
                        for row in set {
                            let _ = row;
                        }
                    }
                });
                let _ = c.close(st);
                r
            }
            Err(e) => Err(e),
        }
    } else {
        c.query_iter(sql).map(|mut it| {
            while let Some(set) = it.iter() {
                for row in set {
                    let _ = row;
                }
            }
        })
    };
    match r {
        Ok(()) | Err(mysql::Error::MySqlError(_)) => true,
        Err(_) => false,
    }
}

#[test]
fn mutated_statements_never_break_the_server() {
    let n: usize = std::env::var("FUZZ_STATEMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let s = common::start();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    let all: Vec<Vec<String>> = files.iter().map(statements).collect();
    let pool: Vec<Vec<String>> = all.iter().flatten().map(|q| tokens(q)).collect();
    let mut rng = Rng(seed | 1);
    let mut ran = 0;
    for (file, stmts) in files.iter().zip(&all) {
        let db = format!(
            "fuzz_{}",
            file.file_stem()
                .unwrap()
                .to_string_lossy()
                .replace('-', "_")
        );
        let mut c = connect(s.port);
        c.query_drop(format!("CREATE DATABASE {db}")).unwrap();
        c.query_drop(format!("USE {db}")).unwrap();
        c.query_drop("SET SESSION max_execution_time = 5000")
            .unwrap();
        // The schema and data the file's queries expect (errors are part of the file).
        for q in stmts {
            assert!(run(&mut c, q, false), "{}: {q}", file.display());
        }
        for i in 0..n {
            let from = rng.below(stmts.len());
            let q = mutate(&mut rng, &stmts[from], &pool);
            if std::env::var("FUZZ_SHOW").is_ok() {
                println!("{q}");
            }
            if !run(&mut c, &q, i % 4 == 3) {
                let panics = s.panics();
                assert!(panics.is_empty(), "{q}\n{}", panics.join("\n"));
                // A read timeout (a long statement): a new connection, and the old one's
                // statement killed, so the next ones do not queue behind it.
                let mut k = connect(s.port);
                let ids: Vec<u64> = k
                    .query(format!(
                        "SELECT id FROM information_schema.PROCESSLIST WHERE db = '{db}' AND \
                         command <> 'Sleep'"
                    ))
                    .unwrap();
                for id in ids {
                    let _ = k.query_drop(format!("KILL {id}"));
                }
                c = connect(s.port);
                c.query_drop(format!("USE {db}")).unwrap();
            }
            ran += 1;
            let panics = s.panics();
            assert!(panics.is_empty(), "{q}\n{}", panics.join("\n"));
        }
    }
    // Still serving.
    let mut c = connect(s.port);
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
    println!(
        "{ran} mutated statements over {} files, seed {seed}",
        files.len()
    );
    assert!(s.panics().is_empty());
}
