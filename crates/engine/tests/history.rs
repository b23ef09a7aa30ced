//! A randomized list-append history checker in the style of Jepsen's Elle.
//!
//! A table `(k INT PRIMARY KEY, v VARCHAR(10000))` holds one list per key (its elements
//! comma-separated). 6 keys are in use at a time; once a list passes 4000 bytes (off-page by
//! then) the clients move on to 6 fresh keys, as Elle retires keys. 8 client threads run
//! random transactions of 1-4 micro-ops: an `append(k, x)` of a globally unique x (SELECT ...
//! FOR UPDATE of k, then an UPDATE setting v to old + "," + x, or an INSERT if k is absent,
//! retried after a duplicate-key race) or a `read(k)` (a consistent read; at SERIALIZABLE
//! InnoDB's shared locking read). About one transaction in ten rolls back on purpose, so
//! aborted appends exist that readers could see.
//! Every transaction's ops, outcome (committed, or aborted and why) and observed lists are
//! recorded. Afterwards the final lists are read and the checker looks for:
//! - incompatible order: a committed read that is not a prefix of its key's final list; also
//!   duplicated, unknown, lost (committed but missing) and resurrected (aborted but present)
//!   elements;
//! - G1a (aborted read): a read that saw an element of an aborted transaction;
//! - G1b (intermediate read): a read ending with an element that is not its writer's last
//!   append to that key;
//! - internal: a read that does not show the transaction's own last append, and (REPEATABLE
//!   READ, SERIALIZABLE) a second read of a key that differs with no own append in between;
//! - G0 / G1c: a cycle among committed transactions in the write-write (consecutive elements
//!   of a final list) and write-read (writer of the last element read -> reader) edges;
//! - G2 (SERIALIZABLE only): a cycle once the read-write anti-dependency edges (reader of a
//!   prefix -> writer of the element after it) are added.
//!
//! An error other than 1213/1205/1020 ends the run and is reported with the op that met it;
//! afterwards (purge drained) `check()` must find the structures sound.
//!
//! READ COMMITTED, REPEATABLE READ and SERIALIZABLE each run several seeds; none may show an
//! anomaly. Negative controls feed hand-made histories with a G1c cycle, an aborted read, an
//! intermediate read, a wrong order and a write skew (G2) to the checker and assert that it
//! reports each of them.
//!
//! Reproduce: `cargo test -p innoxide-engine --test history -- --nocapture` (prints the counts
//! per level and seed). `HISTORY_SECS=` (seconds per run, default 2), `HISTORY_SEEDS=` (runs
//! per level, default 3), `HISTORY_SEED=` (first seed, default 1) and `HISTORY_MAX_LIST=`
//! (bytes before the keys rotate, default 4000) change the runs.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, Error, Isolation, LockRead, Table, TableDef, Trx, Value,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ------------------------------------------------------------------------------------------
// Histories

#[derive(Clone, Debug)]
enum Op {
    /// Appended (or tried to append) `x` to key `k`.
    Append { k: i64, x: u64 },
    /// Read key `k`; `list` is None if the read failed.
    Read { k: i64, list: Option<Vec<u64>> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Committed,
    /// Rolled back: the error that ended it, or "voluntary".
    Aborted(String),
}

#[derive(Clone, Debug)]
struct Txn {
    ops: Vec<Op>,
    outcome: Outcome,
}

#[derive(Default, Debug)]
struct History {
    txns: Vec<Txn>,
    /// Each key's list after every client stopped.
    final_lists: BTreeMap<i64, Vec<u64>>,
}

// ------------------------------------------------------------------------------------------
// The checker

const WW: u8 = 1;
const WR: u8 = 2;
const RW: u8 = 4;

#[derive(Default, Debug)]
struct Report {
    committed: usize,
    aborted: usize,
    /// Aborts by reason.
    abort_reasons: BTreeMap<String, usize>,
    /// Reads of committed transactions.
    reads: usize,
    appends: usize,
    ww: usize,
    wr: usize,
    rw: usize,
    /// Anomaly kind -> descriptions.
    anomalies: BTreeMap<&'static str, Vec<String>>,
}

impl Report {
    fn add(&mut self, kind: &'static str, what: String) {
        self.anomalies.entry(kind).or_default().push(what);
    }

    fn n_anomalies(&self) -> usize {
        self.anomalies.values().map(Vec::len).sum()
    }

    fn has(&self, kind: &str) -> bool {
        self.anomalies.get(kind).is_some_and(|v| !v.is_empty())
    }

    fn summary(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.anomalies {
            s += &format!("  {k}: {} (first: {})\n", v.len(), v[0]);
        }
        s
    }
}

/// A list for messages: short ones whole, long ones by length and tail.
fn show(list: &[u64]) -> String {
    if list.len() <= 6 {
        return format!("{list:?}");
    }
    format!(
        "[({} elements) .., {:?}]",
        list.len(),
        &list[list.len() - 4..]
    )
}

/// Strongly connected components of more than one node (Tarjan, iterative).
fn sccs(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for s in 0..n {
        if index[s] != usize::MAX {
            continue;
        }
        index[s] = next;
        low[s] = next;
        next += 1;
        stack.push(s);
        on[s] = true;
        let mut call: Vec<(usize, usize)> = vec![(s, 0)];
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < adj[v].len() {
                let w = adj[v][*i];
                *i += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    call.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(p, _)) = call.last() {
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("on the stack");
                        on[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 {
                        out.push(comp);
                    }
                }
            }
        }
    }
    out
}

/// A cycle through the first node of `comp` (a strongly connected component), as its nodes.
fn cycle_in(adj: &[Vec<usize>], comp: &[usize]) -> Vec<usize> {
    let inside: HashSet<usize> = comp.iter().copied().collect();
    let start = comp[0];
    let mut parent: HashMap<usize, usize> = HashMap::new();
    let mut q = VecDeque::from([start]);
    while let Some(u) = q.pop_front() {
        for &w in &adj[u] {
            if w == start {
                let mut path = vec![u];
                let mut c = u;
                while c != start {
                    c = parent[&c];
                    path.push(c);
                }
                path.reverse();
                return path;
            }
            if inside.contains(&w) && w != start && !parent.contains_key(&w) {
                parent.insert(w, u);
                q.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected component has a cycle through each node")
}

/// Checks a list-append history. `repeatable`: two reads of a key with no own append between
/// must agree (REPEATABLE READ and above). `with_rw`: also look for cycles with anti-dependency
/// edges (SERIALIZABLE).
fn check(h: &History, repeatable: bool, with_rw: bool) -> Report {
    let mut rep = Report::default();
    let committed = |t: usize| h.txns[t].outcome == Outcome::Committed;
    // Who appended each element, and each transaction's last append per key.
    let mut writer: HashMap<u64, (usize, i64)> = HashMap::new();
    let mut last_append: HashMap<(usize, i64), u64> = HashMap::new();
    for (i, t) in h.txns.iter().enumerate() {
        match &t.outcome {
            Outcome::Committed => rep.committed += 1,
            Outcome::Aborted(why) if why.starts_with(ENGINE_ERROR) => {
                rep.aborted += 1;
                *rep.abort_reasons.entry(ENGINE_ERROR.into()).or_default() += 1;
                rep.add("engine error", format!("T{i}: {why}"));
            }
            Outcome::Aborted(why) => {
                rep.aborted += 1;
                *rep.abort_reasons.entry(why.clone()).or_default() += 1;
            }
        }
        for op in &t.ops {
            if let Op::Append { k, x } = op {
                if writer.insert(*x, (i, *k)).is_some() {
                    rep.add("duplicate append", format!("element {x} appended twice"));
                }
                last_append.insert((i, *k), *x);
                if committed(i) {
                    rep.appends += 1;
                }
            }
        }
    }

    // The final lists.
    let empty = Vec::new();
    let final_of = |k: i64| h.final_lists.get(&k).unwrap_or(&empty);
    let mut in_final: HashSet<u64> = HashSet::new();
    for (k, list) in &h.final_lists {
        for &x in list {
            if !in_final.insert(x) {
                rep.add("duplicate element", format!("{x} twice in key {k}"));
            }
            match writer.get(&x) {
                None => rep.add("unknown element", format!("{x} in key {k}")),
                Some(&(w, wk)) => {
                    if wk != *k {
                        rep.add("wrong key", format!("{x} appended to {wk}, found in {k}"));
                    }
                    if !committed(w) {
                        rep.add(
                            "aborted write persisted",
                            format!("{x} of aborted T{w} in key {k}"),
                        );
                    }
                }
            }
        }
    }
    for (&x, &(w, k)) in &writer {
        if committed(w) && !in_final.contains(&x) {
            rep.add(
                "lost append",
                format!("{x} of committed T{w} missing from key {k}"),
            );
        }
    }

    // Edges between committed transactions.
    let mut edges: HashMap<(usize, usize), u8> = HashMap::new();
    // Why each edge exists (its first reason per kind), for the report of a cycle.
    let mut why: HashMap<(usize, usize, u8), String> = HashMap::new();
    let mut add_edge = |a: usize, b: usize, kind: u8, reason: &dyn Fn() -> String| {
        if a != b {
            *edges.entry((a, b)).or_default() |= kind;
            why.entry((a, b, kind)).or_insert_with(reason);
        }
    };
    for (k, list) in &h.final_lists {
        for pair in list.windows(2) {
            if let (Some(&(a, _)), Some(&(b, _))) = (writer.get(&pair[0]), writer.get(&pair[1])) {
                if committed(a) && committed(b) {
                    add_edge(a, b, WW, &|| {
                        format!("key {k}: {} then {}", pair[0], pair[1])
                    });
                }
            }
        }
    }

    for (r, t) in h.txns.iter().enumerate() {
        if !committed(r) {
            continue;
        }
        let mut own: HashMap<i64, u64> = HashMap::new();
        // Key -> (list last read, own append since).
        let mut seen: HashMap<i64, (Vec<u64>, bool)> = HashMap::new();
        for op in &t.ops {
            let (k, list) = match op {
                Op::Append { k, x } => {
                    own.insert(*k, *x);
                    if let Some(s) = seen.get_mut(k) {
                        s.1 = true;
                    }
                    continue;
                }
                Op::Read { k, list } => (*k, list.as_ref().expect("committed reads completed")),
            };
            rep.reads += 1;
            let fin = final_of(k);
            for &x in list {
                match writer.get(&x) {
                    None => rep.add("unknown element", format!("T{r} read {x} in key {k}")),
                    Some(&(w, _)) if !committed(w) => rep.add(
                        "G1a",
                        format!("T{r} read {x} of aborted T{w} in key {k}: {}", show(list)),
                    ),
                    _ => {}
                }
            }
            let prefix = list.len() <= fin.len() && fin[..list.len()] == list[..];
            if !prefix {
                rep.add(
                    "incompatible order",
                    format!(
                        "T{r} read key {k} = {}, final {}; first difference at position {}",
                        show(list),
                        show(fin),
                        list.iter().zip(fin).take_while(|(a, b)| a == b).count()
                    ),
                );
            }
            if let Some(&last) = list.last() {
                if let Some(&(w, _)) = writer.get(&last) {
                    if w != r && last_append.get(&(w, k)) != Some(&last) {
                        rep.add(
                            "G1b",
                            format!(
                                "T{r} read key {k} = {} ending with {last}, an intermediate \
                                 append of T{w}",
                                show(list)
                            ),
                        );
                    }
                    if committed(w) {
                        add_edge(w, r, WR, &|| format!("key {k}: read up to {last}"));
                    }
                }
            }
            if let Some(&mine) = own.get(&k) {
                if list.last() != Some(&mine) {
                    rep.add(
                        "internal",
                        format!(
                            "T{r} appended {mine} to key {k} but then read {}",
                            show(list)
                        ),
                    );
                }
            }
            if repeatable {
                if let Some((prev, false)) = seen.get(&k) {
                    if prev != list {
                        rep.add(
                            "non-repeatable read",
                            format!("T{r} read key {k} as {}, then {}", show(prev), show(list)),
                        );
                    }
                }
            }
            seen.insert(k, (list.clone(), false));
            if with_rw && prefix {
                if let Some(next) = fin.get(list.len()) {
                    if let Some(&(w, _)) = writer.get(next) {
                        if committed(w) {
                            add_edge(r, w, RW, &|| {
                                format!("key {k}: read {}, next {next}", show(list))
                            });
                        }
                    }
                }
            }
        }
    }
    for kinds in edges.values() {
        rep.ww += usize::from(kinds & WW != 0);
        rep.wr += usize::from(kinds & WR != 0);
        rep.rw += usize::from(kinds & RW != 0);
    }

    // Cycles.
    let n = h.txns.len();
    let graph = |mask: u8| {
        let mut adj = vec![Vec::new(); n];
        for (&(a, b), &k) in &edges {
            if k & mask != 0 {
                adj[a].push(b);
            }
        }
        for l in &mut adj {
            l.sort_unstable();
        }
        adj
    };
    let describe = |adj: &[Vec<usize>], comp: &[usize]| {
        let c = cycle_in(adj, comp);
        let mut s = String::new();
        for (i, &a) in c.iter().enumerate() {
            let b = c[(i + 1) % c.len()];
            let k = edges[&(a, b)];
            let names: Vec<String> = [(WW, "ww"), (WR, "wr"), (RW, "rw")]
                .iter()
                .filter(|(m, _)| k & m != 0)
                .map(|(m, n)| format!("{n} ({})", why[&(a, b, *m)]))
                .collect();
            s += &format!("T{a} -{}-> ", names.join(" / "));
        }
        s += &format!("T{} ({} transactions in the component)", c[0], comp.len());
        for &t in &c {
            s += &format!("\n      T{t}: {:?}", h.txns[t].ops);
        }
        s
    };
    let ww = graph(WW);
    for comp in sccs(&ww) {
        rep.add("G0", describe(&ww, &comp));
    }
    let wwr = graph(WW | WR);
    for comp in sccs(&wwr) {
        rep.add("G1c", describe(&wwr, &comp));
    }
    if with_rw {
        let all = graph(WW | WR | RW);
        for comp in sccs(&all) {
            rep.add("G2", describe(&all, &comp));
        }
    }
    rep
}

// ------------------------------------------------------------------------------------------
// Negative controls: hand-made histories with known anomalies.

fn committed(ops: Vec<Op>) -> Txn {
    Txn {
        ops,
        outcome: Outcome::Committed,
    }
}

fn append(k: i64, x: u64) -> Op {
    Op::Append { k, x }
}

fn read(k: i64, list: &[u64]) -> Op {
    Op::Read {
        k,
        list: Some(list.to_vec()),
    }
}

fn history(txns: Vec<Txn>, finals: &[(i64, &[u64])]) -> History {
    History {
        txns,
        final_lists: finals.iter().map(|(k, l)| (*k, l.to_vec())).collect(),
    }
}

#[test]
fn checker_finds_known_anomalies() {
    // A clean serial history: no anomaly even with rw edges.
    let clean = history(
        vec![
            committed(vec![append(1, 1), read(1, &[1])]),
            committed(vec![read(1, &[1]), append(1, 2), append(2, 3)]),
            committed(vec![read(1, &[1, 2]), read(2, &[3])]),
        ],
        &[(1, &[1, 2]), (2, &[3])],
    );
    let r = check(&clean, true, true);
    assert_eq!(r.n_anomalies(), 0, "clean history:\n{}", r.summary());
    assert_eq!((r.committed, r.reads, r.appends), (3, 4, 3));
    assert!(r.ww >= 1 && r.wr >= 2, "{r:?}");

    // G1c: each transaction reads the other's append.
    let g1c = history(
        vec![
            committed(vec![append(1, 1), read(2, &[2])]),
            committed(vec![append(2, 2), read(1, &[1])]),
        ],
        &[(1, &[1]), (2, &[2])],
    );
    let r = check(&g1c, false, false);
    assert!(r.has("G1c"), "G1c not found:\n{}", r.summary());
    assert!(!r.has("G0"));
    assert!(!r.has("G1a") && !r.has("G1b") && !r.has("incompatible order"));

    // G0: two transactions' appends interleave in opposite orders on two keys.
    let g0 = history(
        vec![
            committed(vec![append(1, 1), append(2, 4)]),
            committed(vec![append(1, 2), append(2, 3)]),
        ],
        &[(1, &[1, 2]), (2, &[3, 4])],
    );
    let r = check(&g0, false, false);
    assert!(
        r.has("G0") && r.has("G1c"),
        "G0 not found:\n{}",
        r.summary()
    );

    // G1a: a committed read sees the append of a transaction that rolled back.
    let g1a = history(
        vec![
            Txn {
                ops: vec![append(1, 1)],
                outcome: Outcome::Aborted("voluntary".into()),
            },
            committed(vec![read(1, &[1])]),
        ],
        &[],
    );
    let r = check(&g1a, false, false);
    assert!(r.has("G1a"), "G1a not found:\n{}", r.summary());
    assert_eq!(r.aborted, 1);

    // G1b: a read ends with the first of two appends of one transaction.
    let g1b = history(
        vec![
            committed(vec![append(1, 1), append(1, 2)]),
            committed(vec![read(1, &[1])]),
        ],
        &[(1, &[1, 2])],
    );
    let r = check(&g1b, false, false);
    assert!(r.has("G1b"), "G1b not found:\n{}", r.summary());

    // Incompatible order: a read that is not a prefix of the final list.
    let order = history(
        vec![
            committed(vec![append(1, 1)]),
            committed(vec![append(1, 2)]),
            committed(vec![read(1, &[2, 1])]),
        ],
        &[(1, &[1, 2])],
    );
    let r = check(&order, false, false);
    assert!(
        r.has("incompatible order"),
        "order not found:\n{}",
        r.summary()
    );

    // Write skew (G2): each reads the key the other appends to, before the append. No cycle
    // in ww + wr; a cycle once rw edges count.
    let skew = history(
        vec![
            committed(vec![read(1, &[]), append(2, 2)]),
            committed(vec![read(2, &[]), append(1, 1)]),
        ],
        &[(1, &[1]), (2, &[2])],
    );
    let r = check(&skew, true, false);
    assert_eq!(
        r.n_anomalies(),
        0,
        "write skew without rw:\n{}",
        r.summary()
    );
    let r = check(&skew, true, true);
    assert!(r.has("G2"), "G2 not found:\n{}", r.summary());
    assert_eq!(r.rw, 2);

    // Lost append and an own append missing from a later read.
    let lost = history(
        vec![
            committed(vec![append(1, 1), read(1, &[])]),
            committed(vec![append(1, 2)]),
        ],
        &[(1, &[2])],
    );
    let r = check(&lost, false, false);
    assert!(r.has("lost append") && r.has("internal"), "{}", r.summary());

    // Non-repeatable read at REPEATABLE READ only.
    let nrr = history(
        vec![
            committed(vec![append(1, 1)]),
            committed(vec![read(1, &[]), read(1, &[1])]),
        ],
        &[(1, &[1])],
    );
    assert!(check(&nrr, true, false).has("non-repeatable read"));
    assert!(!check(&nrr, false, false).has("non-repeatable read"));
}

// ------------------------------------------------------------------------------------------
// The workload

/// Keys in use at a time.
const KEYS: i64 = 6;
const CLIENTS: usize = 8;
/// When a list gets this long (the column holds 10000 bytes) the clients move on to the next
/// `KEYS` keys, as Elle retires keys. `HISTORY_MAX_LIST=` changes it.
const MAX_LIST_BYTES: usize = 4000;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn parse_list(row: Option<Vec<Value>>) -> Vec<u64> {
    match row {
        None => Vec::new(),
        Some(r) => {
            let b = r[1].as_bytes().expect("v is a string");
            std::str::from_utf8(b)
                .unwrap()
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect()
        }
    }
}

/// append(k, x): SELECT ... FOR UPDATE, then UPDATE, or INSERT if the key is absent. Returns
/// the new list's length in bytes.
fn do_append(trx: &mut Trx, t: &Arc<Table>, k: i64, x: u64) -> Result<usize, Error> {
    for _ in 0..100 {
        match trx.get_locking(t, &[Value::Int(k)], LockRead::Exclusive)? {
            Some(row) => {
                let old = std::str::from_utf8(row[1].as_bytes().expect("string"))
                    .unwrap()
                    .to_string();
                let new = format!("{old},{x}");
                let found = trx.update(t, &[Value::Int(k)], &[(1, Value::from(new.as_str()))])?;
                assert!(found, "a row locked FOR UPDATE vanished");
                return Ok(new.len());
            }
            None => {
                let v = x.to_string();
                match trx.insert(t, &[Value::Int(k), Value::from(v.as_str())]) {
                    Ok(()) => return Ok(v.len()),
                    // Another transaction inserted the key meanwhile: read it again.
                    Err(Error::DuplicateKey { .. }) => continue,
                    Err(e) => return Err(e),
                }
            }
        }
    }
    panic!("append({k}, {x}) raced with inserts 100 times");
}

/// Errors a transaction may meet; any other one is an engine failure.
const ENGINE_ERROR: &str = "engine error";

fn error_name(e: &Error) -> String {
    match e {
        Error::Deadlock => "deadlock (1213)".into(),
        Error::LockWaitTimeout => "lock wait timeout (1205)".into(),
        Error::RecordChanged(_) => "record changed (1020)".into(),
        other => format!("{ENGINE_ERROR}: {other}"),
    }
}

/// Key number `slot` of generation `g`. A slot's generations are adjacent in the index, so
/// the first appends to a new generation's keys (inserts) of different slots fall into
/// different gaps.
fn key_of(slot: i64, g: u64) -> i64 {
    slot * 1_000_000 + g as i64
}

/// What the clients of one run share.
struct Shared {
    e: Arc<Engine>,
    t: Arc<Table>,
    level: Isolation,
    deadline: Instant,
    /// The next element to append (unique across the run).
    next_x: AtomicU64,
    /// Set when a client met an engine failure.
    stop: AtomicBool,
    /// Keys in use: `key_of(0..KEYS, generation)`.
    generation: AtomicU64,
}

fn client(sh: &Shared, seed: u64) -> Vec<Txn> {
    let (e, t, level) = (&sh.e, &sh.t, sh.level);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let max_list = env_or("HISTORY_MAX_LIST", MAX_LIST_BYTES);
    while Instant::now() < sh.deadline && !sh.stop.load(Ordering::Relaxed) {
        let n_ops = rng.random_range(1..=4);
        let mut trx = e.begin();
        trx.set_isolation(level);
        trx.set_lock_wait_timeout(10);
        let mut ops = Vec::new();
        let mut failed = None;
        for _ in 0..n_ops {
            let g = sh.generation.load(Ordering::Relaxed);
            let k = key_of(rng.random_range(0..KEYS), g);
            if rng.random_bool(0.5) {
                let x = sh.next_x.fetch_add(1, Ordering::Relaxed);
                ops.push(Op::Append { k, x });
                match do_append(&mut trx, t, k, x) {
                    Ok(len) => {
                        if len > max_list {
                            sh.generation.fetch_max(g + 1, Ordering::Relaxed);
                        }
                    }
                    Err(err) => {
                        failed = Some(err);
                        break;
                    }
                }
            } else {
                match trx.get(t, &[Value::Int(k)]) {
                    Ok(row) => ops.push(Op::Read {
                        k,
                        list: Some(parse_list(row)),
                    }),
                    Err(err) => {
                        ops.push(Op::Read { k, list: None });
                        failed = Some(err);
                        break;
                    }
                }
            }
        }
        let outcome = match failed {
            Some(err) => {
                // After a deadlock the engine has rolled the transaction back already; after a
                // lock wait timeout the client gives it up.
                let mut why = error_name(&err);
                if why.starts_with(ENGINE_ERROR) {
                    // Stop the run: the checker reports the failure with the op that met it.
                    sh.stop.store(true, Ordering::Relaxed);
                    why = format!("{why} (in {:?})", ops.last().expect("the failed op"));
                }
                if let Err(e) = trx.rollback() {
                    why = format!("{why}; rollback failed: {e}");
                }
                Outcome::Aborted(why)
            }
            None if rng.random_bool(0.1) => {
                trx.rollback().unwrap();
                Outcome::Aborted("voluntary".into())
            }
            None => {
                trx.commit().unwrap();
                Outcome::Committed
            }
        };
        out.push(Txn { ops, outcome });
    }
    out
}

/// Runs purge until the history list is empty (the purge threads may hold the last logs).
fn drain_purge(e: &Engine) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        e.purge_all()?;
        if e.inner().trx.history_len.load(Ordering::Acquire) == 0 || Instant::now() > deadline {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs the clients at `level` for `secs`; returns the history, the time it took, and what
/// `check()` found wrong with the engine's structures afterwards, if anything.
fn run(level: Isolation, seed: u64, secs: f64) -> (History, Duration, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let c = innoxide_testkit::small_config(dir.path(), 4);
    let e = Arc::new(Engine::open(c).unwrap());
    let t = e
        .create_table(TableDef::new(
            "test/la",
            vec![
                ColumnDef::new("k", ColumnKind::INT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 10000 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let started = Instant::now();
    let sh = Arc::new(Shared {
        e: e.clone(),
        t: t.clone(),
        level,
        deadline: started + Duration::from_secs_f64(secs),
        next_x: AtomicU64::new(1),
        stop: AtomicBool::new(false),
        generation: AtomicU64::new(0),
    });
    let handles: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let sh = sh.clone();
            let s = seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
            std::thread::spawn(move || client(&sh, s))
        })
        .collect();
    let mut h = History::default();
    for th in handles {
        h.txns.extend(th.join().unwrap());
    }
    let ran = started.elapsed();
    let mut r = e.begin();
    let generations = sh.generation.load(Ordering::Relaxed) + 1;
    drop(sh);
    for k in (0..KEYS).flat_map(|s| (0..generations).map(move |g| key_of(s, g))) {
        let list = parse_list(r.get(&t, &[Value::Int(k)]).unwrap());
        if !list.is_empty() {
            h.final_lists.insert(k, list);
        }
    }
    r.commit().unwrap();
    assert_eq!(
        e.inner()
            .trx
            .locks
            .stats
            .current_waits
            .load(Ordering::Relaxed),
        0
    );
    // The structure is sound afterwards, and no transaction was left open. check() does not
    // count the off-page values that only unpurged undo records reference as in use, so purge
    // first.
    let damage = match drain_purge(&e).and_then(|()| e.check()) {
        Ok(r) if r.active_undo_logs == 0 => None,
        Ok(r) => Some(format!("undo logs left active: {r:?}")),
        Err(err) => Some(format!("purge or check() failed: {err}")),
    };
    Arc::try_unwrap(e).ok().unwrap().shutdown().unwrap();
    (h, ran, damage)
}

fn run_level(level: Isolation) {
    let secs: f64 = env_or("HISTORY_SECS", 2.0);
    let seeds: u64 = env_or("HISTORY_SEEDS", 3);
    let first: u64 = env_or("HISTORY_SEED", 1);
    let repeatable = level >= Isolation::RepeatableRead;
    let with_rw = level == Isolation::Serializable;
    let mut failures = Vec::new();
    let mut total = Report::default();
    for seed in first..first + seeds {
        let (h, ran, damage) = run(level, seed, secs);
        let mut r = check(&h, repeatable, with_rw);
        if let Some(d) = damage {
            r.add("engine structure", d);
        }
        let longest = h.final_lists.values().map(Vec::len).max().unwrap_or(0);
        eprintln!(
            "{} seed {seed}: {:.1} s, {} keys, {} transactions committed, {} aborted {:?}; {} \
             reads, {} appends (longest list {longest}); edges ww {} wr {} rw {}; anomalies {}",
            level.name(),
            ran.as_secs_f64(),
            h.final_lists.len(),
            r.committed,
            r.aborted,
            r.abort_reasons,
            r.reads,
            r.appends,
            r.ww,
            r.wr,
            r.rw,
            r.n_anomalies()
        );
        assert!(
            r.committed > 0 && r.reads > 0 && r.appends > 0,
            "the run did work"
        );
        if r.n_anomalies() > 0 {
            failures.push(format!("{} seed {seed}:\n{}", level.name(), r.summary()));
        }
        total.committed += r.committed;
        total.aborted += r.aborted;
        total.reads += r.reads;
        total.ww += r.ww;
        total.wr += r.wr;
        total.rw += r.rw;
        total.appends += r.appends;
        for (k, v) in r.anomalies {
            total.anomalies.entry(k).or_default().extend(v);
        }
    }
    eprintln!(
        "{} total: {} committed, {} aborted, {} reads, {} appends, edges ww {} wr {} rw {}, \
         anomalies {}",
        level.name(),
        total.committed,
        total.aborted,
        total.reads,
        total.appends,
        total.ww,
        total.wr,
        total.rw,
        total.n_anomalies()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn read_committed_history_has_no_g0_g1() {
    run_level(Isolation::ReadCommitted);
}

#[test]
fn repeatable_read_history_has_no_g0_g1() {
    run_level(Isolation::RepeatableRead);
}

#[test]
fn serializable_history_is_serializable() {
    run_level(Isolation::Serializable);
}
