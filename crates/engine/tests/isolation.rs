//! Isolation: replays the cases of tests/isolation/cases.txt (Hermitage's anomalies G0 ... G2
//! and our locking cases) against the engine at every isolation level, with
//! innodb_snapshot_isolation off and on, and compares every step's outcome (rows returned,
//! rows affected, error number, whether it blocked and which step released it) with what
//! MariaDB 10.11 did (tests/isolation/expected-mariadb-10.11.txt, made by
//! tools/hermitage/run_mariadb.py; see docs/testing.md).
//!
//! Each transaction runs in its own thread. The SQL of a step is carried out with the engine
//! API the way MySQL's executor does it: a point read for `id = N` and `id IN (...)`, a range
//! scan for `id > N`, a full scan with a filter otherwise; UPDATE and DELETE first read their
//! rows with X locks (UPDATE with READ COMMITTED's semi-consistent read), then change them.
//! Blocking is observed, not timed: a step blocks when its thread waits in the lock system.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_engine::{
    ColumnDef, ColumnKind, Engine, Error, Isolation, KeyBound, LockRead, Table, TableDef, Trx,
    Value,
};
use innoxide_testkit::hermitage::{self, Case};

/// A parsed WHERE clause.
#[derive(Clone, Debug)]
enum Pred {
    All,
    IdEq(i64),
    IdIn(Vec<i64>),
    IdGt(i64),
    IdGe(i64),
    IdLt(i64),
    ValueEq(i64),
    ValueMod(i64, i64),
}

impl Pred {
    fn parse(s: Option<&str>) -> Pred {
        let Some(s) = s else { return Pred::All };
        let w: Vec<&str> = s.split_whitespace().collect();
        let n = |x: &str| {
            x.trim_matches(|c| c == '(' || c == ')' || c == ',')
                .parse::<i64>()
        };
        match w.as_slice() {
            ["id", "=", v] => Pred::IdEq(n(v).unwrap()),
            ["id", ">", v] => Pred::IdGt(n(v).unwrap()),
            ["id", ">=", v] => Pred::IdGe(n(v).unwrap()),
            ["id", "<", v] => Pred::IdLt(n(v).unwrap()),
            ["value", "=", v] => Pred::ValueEq(n(v).unwrap()),
            ["value", "%", m, "=", r] => Pred::ValueMod(n(m).unwrap(), n(r).unwrap()),
            ["id", "in", rest @ ..] => Pred::IdIn(rest.iter().map(|x| n(x).unwrap()).collect()),
            _ => panic!("unsupported predicate {s}"),
        }
    }

    fn matches(&self, id: i64, value: Option<i64>) -> bool {
        match self {
            Pred::All => true,
            Pred::IdEq(v) => id == *v,
            Pred::IdIn(l) => l.contains(&id),
            Pred::IdGt(v) => id > *v,
            Pred::IdGe(v) => id >= *v,
            Pred::IdLt(v) => id < *v,
            Pred::ValueEq(v) => value == Some(*v),
            Pred::ValueMod(m, r) => value.is_some_and(|x| x % m == *r),
        }
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Null => None,
        other => panic!("{other:?}"),
    }
}

type Row = (i64, Option<i64>);

fn as_row(r: &[Value]) -> Row {
    (int(&r[0]).expect("id"), int(&r[1]))
}

/// Rows matching `p` as a read sees them: `lock` None = consistent read.
fn read(
    trx: &mut Trx,
    t: &Arc<Table>,
    p: &Pred,
    lock: Option<LockRead>,
    semi: bool,
) -> Result<Vec<Row>, Error> {
    let point = |trx: &mut Trx, id: i64| -> Result<Option<Row>, Error> {
        let r = match lock {
            None => trx.get(t, &[Value::Int(id)])?,
            Some(how) => trx.get_locking(t, &[Value::Int(id)], how)?,
        };
        Ok(r.map(|r| as_row(&r)))
    };
    match p {
        Pred::IdEq(v) => Ok(point(trx, *v)?.into_iter().collect()),
        Pred::IdIn(l) => {
            let mut ids = l.clone();
            ids.sort_unstable();
            ids.dedup();
            let mut out = Vec::new();
            for id in ids {
                out.extend(point(trx, id)?);
            }
            Ok(out)
        }
        _ => {
            let (from, to) = match p {
                Pred::IdGt(v) => (
                    KeyBound::Excluded(vec![Value::Int(*v)]),
                    KeyBound::Unbounded,
                ),
                Pred::IdGe(v) => (
                    KeyBound::Included(vec![Value::Int(*v)]),
                    KeyBound::Unbounded,
                ),
                Pred::IdLt(v) => (
                    KeyBound::Unbounded,
                    KeyBound::Excluded(vec![Value::Int(*v)]),
                ),
                _ => (KeyBound::Unbounded, KeyBound::Unbounded),
            };
            let rows: Vec<Row> = match lock {
                None => trx
                    .scan(t, None, from, to, true)?
                    .map(|r| r.map(|r| as_row(&r)))
                    .collect::<Result<Vec<_>, _>>()?,
                Some(how) => trx
                    .scan_locking(t, None, from, to, true, how, semi, &mut |r| {
                        let (id, v) = as_row(r);
                        p.matches(id, v)
                    })?
                    .iter()
                    .map(|r| as_row(r))
                    .collect(),
            };
            Ok(rows
                .into_iter()
                .filter(|&(id, v)| p.matches(id, v))
                .collect())
        }
    }
}

fn split_where(s: &str) -> (&str, Option<&str>) {
    match s.split_once(" where ") {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    }
}

/// Runs one statement that is not begin/commit/rollback; returns its outcome text.
fn statement(trx: &mut Trx, t: &Arc<Table>, stmt: &str) -> Result<String, Error> {
    if let Some(rest) = stmt.strip_prefix("select * from test") {
        let (rest, lock) = if let Some(r) = rest.strip_suffix(" for update") {
            (r, Some(LockRead::Exclusive))
        } else if let Some(r) = rest.strip_suffix(" lock in share mode") {
            (r, Some(LockRead::Shared))
        } else {
            (rest, None)
        };
        let p = Pred::parse(rest.strip_prefix(" where "));
        let rows = read(trx, t, &p, lock, false)?;
        let mut s = String::from("rows");
        for (id, v) in rows {
            match v {
                Some(v) => s.push_str(&format!(" ({id},{v})")),
                None => s.push_str(&format!(" ({id},null)")),
            }
        }
        return Ok(s);
    }
    if let Some(rest) = stmt.strip_prefix("update test set value = ") {
        let (set, w) = split_where(rest);
        let p = Pred::parse(w);
        let rows = read(trx, t, &p, Some(LockRead::Exclusive), true)?;
        let mut n = 0;
        for (id, v) in rows {
            let new = match set.strip_prefix("value + ") {
                Some(d) => v.map(|v| v + d.parse::<i64>().unwrap()),
                None => Some(set.parse::<i64>().unwrap()),
            };
            if new != v {
                let nv = new.map_or(Value::Null, Value::Int);
                assert!(trx.update(t, &[Value::Int(id)], &[(1, nv)])?);
                n += 1;
            }
        }
        return Ok(format!("ok affected={n}"));
    }
    if let Some(rest) = stmt.strip_prefix("delete from test where ") {
        let p = Pred::parse(Some(rest));
        let rows = read(trx, t, &p, Some(LockRead::Exclusive), false)?;
        let mut n = 0;
        for (id, _) in rows {
            if trx.delete(t, &[Value::Int(id)])? {
                n += 1;
            }
        }
        return Ok(format!("ok affected={n}"));
    }
    if let Some(rest) = stmt.strip_prefix("insert into test (id, value) values (") {
        let v: Vec<i64> = rest
            .trim_end_matches(')')
            .split(", ")
            .map(|x| x.parse().unwrap())
            .collect();
        trx.insert(t, &[Value::Int(v[0]), Value::Int(v[1])])?;
        return Ok("ok affected=1".into());
    }
    panic!("unsupported statement {stmt}");
}

fn error_text(e: &Error) -> String {
    match e {
        Error::Deadlock => "error 1213".into(),
        Error::LockWaitTimeout => "error 1205".into(),
        Error::RecordChanged(_) => "error 1020".into(),
        Error::DuplicateKey { .. } => "error 1062".into(),
        other => panic!("unexpected engine error {other}"),
    }
}

/// One transaction's connection: runs statements sent to it.
fn connection(
    engine: Arc<Engine>,
    t: Arc<Table>,
    level: Isolation,
    rx: Receiver<String>,
    tx: Sender<String>,
) {
    let mut cur: Option<Trx> = None;
    let new_trx = |select: bool| {
        let mut x = engine.begin();
        x.set_isolation(level);
        x.set_lock_wait_timeout(10);
        // An autocommit SELECT at SERIALIZABLE is a consistent read.
        x.set_serializable_reads_lock(!select);
        x
    };
    for stmt in rx {
        let out = match stmt.as_str() {
            "begin" => {
                if let Some(old) = cur.take() {
                    old.commit().unwrap();
                }
                cur = Some(new_trx(false));
                "ok".to_string()
            }
            "commit" => {
                if let Some(x) = cur.take() {
                    x.commit().unwrap();
                }
                "ok".into()
            }
            "rollback" => {
                if let Some(x) = cur.take() {
                    x.rollback().unwrap();
                }
                "ok".into()
            }
            _ => match cur.as_mut() {
                Some(x) => {
                    x.begin_statement();
                    let r = statement(x, &t, &stmt);
                    x.end_statement();
                    r.unwrap_or_else(|e| error_text(&e))
                }
                None => {
                    let mut x = new_trx(stmt.starts_with("select"));
                    match statement(&mut x, &t, &stmt) {
                        Ok(s) => {
                            x.commit().unwrap();
                            s
                        }
                        Err(e) => {
                            x.rollback().unwrap();
                            error_text(&e)
                        }
                    }
                }
            },
        };
        if tx.send(out).is_err() {
            return;
        }
    }
    if let Some(x) = cur.take() {
        x.rollback().unwrap();
    }
}

/// Waits until every pending statement (step -> transaction) has either answered or is
/// waiting for a lock, steadily; returns the answers that came, in step order.
fn settle(
    engine: &Engine,
    answers: &BTreeMap<usize, Receiver<String>>,
    pending: &mut BTreeMap<usize, usize>,
) -> Vec<(usize, usize, String)> {
    let mut done = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut stable = 0;
    loop {
        let answered: Vec<(usize, usize, String)> = pending
            .iter()
            .filter_map(|(&step, &trx)| answers[&trx].try_recv().ok().map(|s| (step, trx, s)))
            .collect();
        for (step, trx, s) in answered {
            pending.remove(&step);
            done.push((step, trx, s));
            stable = 0;
        }
        let waiting = engine
            .inner()
            .trx
            .locks
            .stats
            .current_waits
            .load(Ordering::Acquire) as usize;
        // A waiter leaves the count only once its thread runs again: after an answer while
        // other statements still wait (a deadlock victim's locks going, a commit), give their
        // threads time to wake on a loaded machine before calling them blocked.
        let needed = if !done.is_empty() && !pending.is_empty() {
            100
        } else {
            3
        };
        if waiting == pending.len() {
            stable += 1;
            if stable >= needed {
                break;
            }
        } else {
            stable = 0;
        }
        assert!(
            Instant::now() < deadline,
            "statements neither answer nor wait"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    done.sort_by_key(|d| d.0);
    done
}

fn run_case(engine: &Arc<Engine>, case: &Case, level: Isolation, run: usize) -> Vec<String> {
    let t = engine
        .create_table(TableDef::new(
            &format!("test/t{run}"),
            vec![
                ColumnDef::new("id", ColumnKind::INT),
                ColumnDef::new("value", ColumnKind::INT).nullable(),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    let mut w = engine.begin();
    w.insert(&t, &[Value::Int(1), Value::Int(10)]).unwrap();
    w.insert(&t, &[Value::Int(2), Value::Int(20)]).unwrap();
    w.commit().unwrap();

    let mut conns: BTreeMap<usize, Sender<String>> = BTreeMap::new();
    let mut answers: BTreeMap<usize, Receiver<String>> = BTreeMap::new();
    let mut handles = Vec::new();
    let mut pending: BTreeMap<usize, usize> = BTreeMap::new();
    let mut lines = Vec::new();
    for (i, (trx, stmt)) in case.steps.iter().enumerate() {
        let step = i + 1;
        if !conns.contains_key(trx) {
            let (stx, srx) = channel();
            let (atx, arx) = channel();
            let (e, t) = (engine.clone(), t.clone());
            handles.push(std::thread::spawn(move || {
                connection(e, t, level, srx, atx)
            }));
            conns.insert(*trx, stx);
            answers.insert(*trx, arx);
        }
        assert!(
            !pending.values().any(|p| p == trx),
            "{}: T{trx} gets a statement while one is pending",
            case.name
        );
        conns[trx].send(stmt.clone()).unwrap();
        pending.insert(step, *trx);
        let done = settle(engine, &answers, &mut pending);
        match done.iter().find(|d| d.0 == step) {
            Some((_, _, s)) => lines.push(format!("{step} T{trx} {s}")),
            None => lines.push(format!("{step} T{trx} blocks")),
        }
        for (s, tr, out) in done {
            if s != step {
                lines.push(format!("{s} T{tr} after {step} {out}"));
            }
        }
    }
    assert!(
        pending.is_empty(),
        "{}: statements still blocked at the end",
        case.name
    );
    drop(conns);
    for h in handles {
        h.join().unwrap();
    }
    engine.drop_table(&format!("test/t{run}")).unwrap();
    lines
}

#[test]
fn hermitage_cases_match_mariadb() {
    let dir = tempfile::tempdir().unwrap();
    let c = innoxide_testkit::small_config(dir.path(), 4);
    let engine = Arc::new(Engine::open(c).unwrap());
    let (cases, expected) = hermitage::load();
    let mut run = 0;
    let mut failures = Vec::new();
    for si in [false, true] {
        engine
            .tunables()
            .snapshot_isolation
            .store(si, Ordering::Relaxed);
        for case in cases.iter().filter(|c| hermitage::selected(c)) {
            for level in &case.levels {
                run += 1;
                let iso = Isolation::parse(level).expect("level name");
                let got = run_case(&engine, case, iso, run);
                failures.extend(hermitage::compare(&expected, &case.name, level, si, &got));
            }
        }
    }
    eprintln!(
        "isolation: {run} runs compared with MariaDB, {} differ",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Arc::try_unwrap(engine).ok().unwrap().shutdown().unwrap();
}
