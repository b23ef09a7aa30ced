//! Test harnesses shared by innoxide's test suites: a reference model of table contents, a
//! seeded workload generator that drives the engine and the model in step, and a verifier that
//! compares them through every access path (clustered scans both ways, secondary indexes).

pub mod hermitage;

use std::collections::BTreeMap;
use std::sync::Arc;

use innoxide_engine::{
    Collation, ColumnDef, ColumnKind, Engine, EngineConfig, Error, KeyBound, Table, TableDef, Trx,
    Value,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A test-sized configuration: 4 KiB pages, a buffer pool and a redo log file of `mib` MiB
/// each, a 256 KiB log buffer; everything else at MySQL's defaults.
pub fn small_config(dir: &std::path::Path, mib: u64) -> EngineConfig {
    let mut c = EngineConfig::new(dir);
    c.page_size = 4096;
    c.buffer_pool_size = mib << 20;
    c.log_file_size = mib << 20;
    c.log_buffer_size = 256 << 10;
    c
}

/// A configuration for the simulated disk (`innoxide_io::SimFs`, data directory `/data`):
/// 4 KiB pages, a buffer pool of `pool_pages` pages, a 256 KiB redo log file and a 64 KiB log
/// buffer, no background threads (the tests drive flushing), one recovery thread.
pub fn sim_config(pool_pages: usize) -> EngineConfig {
    let mut c = EngineConfig::new("/data");
    c.page_size = 4096;
    c.buffer_pool_size = pool_pages as u64 * 4096;
    c.log_file_size = 256 << 10;
    c.log_buffer_size = 64 << 10;
    c.background_threads = false;
    c.recovery_threads = 1;
    c
}

/// `name (id INT PRIMARY KEY, v VARCHAR(100), KEY k_v (v))`: the DDL tests' table.
pub fn id_v_def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            ColumnDef::new("id", ColumnKind::INT),
            ColumnDef::new("v", ColumnKind::Var { max_len: 100 }),
        ],
        Some(vec![0]),
    )
    .index("k_v", vec![1], false)
}

/// The number of syncs `setup` makes, with a flush and checkpoint after it, on a fresh
/// simulated disk (`sim_config(64)`): an operation that follows the same setup in a workload
/// syncs from one past this.
pub fn syncs_of_setup(setup: impl FnOnce(&Engine)) -> u64 {
    let fs = Arc::new(innoxide_io::SimFs::new(3));
    let engine = Engine::open_with(sim_config(64), fs.clone()).expect("open a fresh disk");
    setup(&engine);
    engine.flush_and_checkpoint().expect("flush the setup");
    let n = fs.sync_count();
    engine.kill();
    n
}

/// The engine recovered from disk image `img` (`sim_config(64)`), its structures checked;
/// panics naming `what` if recovery or the check fails.
pub fn recovered(what: &str, img: Arc<innoxide_io::SimFs>) -> Engine {
    let engine = Engine::open_with(sim_config(64), img)
        .unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    engine
        .check()
        .unwrap_or_else(|e| panic!("{what}: check: {e}"));
    engine
}

/// Reports how many crash states of `op` recovered to the old and to the new state, and
/// fails unless both were reached (a crash test that never sees one side tests less than it
/// claims).
pub fn both_outcomes(op: &str, old_states: usize, new_states: usize) {
    eprintln!("{op} crash states: {old_states} old, {new_states} new");
    assert!(
        old_states > 0 && new_states > 0,
        "{op}: both outcomes are reached"
    );
}

/// Creates `name` as `id_v_def` with `n` rows: id 0..n, v = "r<id>".
pub fn id_v_filled(engine: &Engine, name: &str, n: i64) -> innoxide_engine::Result<()> {
    let t = engine.create_table(id_v_def(name))?;
    let mut trx = engine.begin();
    for i in 0..n {
        trx.insert(&t, &[Value::Int(i), Value::from(format!("r{i}").as_str())])?;
    }
    trx.commit()
}

/// Power loss at every sync point of an operation: runs `workload` (which sets up, then does
/// the operation and says whether it was acknowledged; None if the setup itself failed) on a
/// simulated disk that crashes at sync `k`, for every `k` from `first` to `last`, and hands
/// `check` three disk images of each crash (unsynced writes dropped, all kept, a random
/// mix) with a description and whether the operation was acknowledged.
pub fn at_every_crash_point(
    first: u64,
    last: u64,
    workload: impl Fn(Arc<innoxide_io::SimFs>) -> Option<bool>,
    mut check: impl FnMut(&str, Arc<innoxide_io::SimFs>, bool),
) {
    use innoxide_io::{CrashMode, SimFs};
    for k in first..=last {
        let fs = Arc::new(SimFs::new(3));
        fs.set_crash_at_sync(k);
        let acked = workload(fs.clone()).expect("the setup completes before the crash point");
        for mode in [
            CrashMode::DropUnsynced,
            CrashMode::KeepAll,
            CrashMode::Random { seed: k },
        ] {
            let what = format!("crash at sync {k}/{last} ({mode:?})");
            check(&what, Arc::new(fs.crash_image(mode)), acked);
        }
    }
}

/// A row of the test schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRow {
    /// Indexed, not unique.
    pub k: i32,
    /// Unique index, nullable, case-insensitive.
    pub u: Option<String>,
    pub pad: Vec<u8>,
    /// Sometimes large (stored off-page).
    pub blob: Option<Vec<u8>>,
}

/// Table name -> primary key -> row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    pub tables: BTreeMap<String, BTreeMap<i64, ModelRow>>,
}

/// The test schema: id BIGINT PK, k INT (index k), u VARCHAR(32) (unique index uk, ci),
/// pad VARBINARY(300), blob LONGBLOB.
pub fn table_def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            ColumnDef::new("id", ColumnKind::BIGINT),
            ColumnDef::new("k", ColumnKind::INT),
            ColumnDef::new("u", ColumnKind::Var { max_len: 128 })
                .nullable()
                .collation(Collation::Utf8mb4GeneralCi),
            ColumnDef::new("pad", ColumnKind::Var { max_len: 300 }),
            ColumnDef::new("blob", ColumnKind::Var { max_len: 64 << 20 }).nullable(),
        ],
        Some(vec![0]),
    )
    .index("k", vec![1], false)
    .index("uk", vec![2], true)
}

pub fn to_values(id: i64, r: &ModelRow) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(i64::from(r.k)),
        r.u.as_ref()
            .map_or(Value::Null, |s| Value::from(s.as_str())),
        Value::Bytes(r.pad.clone()),
        r.blob.clone().map_or(Value::Null, Value::Bytes),
    ]
}

pub fn of_values(v: &[Value]) -> (i64, ModelRow) {
    let id = v[0].as_i64().expect("id");
    let k = v[1].as_i64().expect("k") as i32;
    let u = v[2]
        .as_bytes()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let pad = v[3].as_bytes().expect("pad").to_vec();
    let blob = v[4].as_bytes().map(<[u8]>::to_vec);
    (id, ModelRow { k, u, pad, blob })
}

/// One change in a workload.
#[derive(Clone, Debug)]
pub enum Op {
    Insert {
        table: String,
        id: i64,
        row: ModelRow,
    },
    Update {
        table: String,
        id: i64,
        k: i32,
        u: Option<String>,
        blob: Option<Option<Vec<u8>>>,
    },
    Delete {
        table: String,
        id: i64,
    },
}

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct WorkloadCfg {
    pub tables: Vec<String>,
    pub max_ops_per_trx: usize,
    /// Chance in [0,1] that a written row gets a large value.
    pub blob_chance: f64,
    pub blob_max: usize,
    /// Id space (smaller = more updates and deletes of existing rows).
    pub id_space: i64,
    pub pad_max: usize,
    /// Fraction of transactions rolled back instead of committed.
    pub rollback_chance: f64,
    /// Prefix of generated unique values (concurrent workers use distinct ones, so whether a
    /// value is a duplicate depends only on their own rows).
    pub unique_prefix: String,
}

impl Default for WorkloadCfg {
    fn default() -> Self {
        WorkloadCfg {
            tables: vec!["test/t1".into(), "test/t2".into()],
            max_ops_per_trx: 4,
            blob_chance: 0.03,
            blob_max: 30_000,
            id_space: 2000,
            pad_max: 250,
            rollback_chance: 0.05,
            unique_prefix: String::new(),
        }
    }
}

/// Seeded generator of transactions, consistent with a model.
pub struct Workload {
    pub rng: StdRng,
    pub cfg: WorkloadCfg,
}

fn unique_value(rng: &mut StdRng, prefix: &str) -> Option<String> {
    match rng.random_range(0..10) {
        0..=3 => None,
        // A small space of values so duplicates happen; mixed case exercises the collation.
        n => {
            let c = if n % 2 == 0 { 'U' } else { 'u' };
            Some(format!("{prefix}{c}{}", rng.random_range(0..400)))
        }
    }
}

impl Workload {
    pub fn new(seed: u64, cfg: WorkloadCfg) -> Self {
        Workload {
            rng: StdRng::seed_from_u64(seed),
            cfg,
        }
    }

    fn row(&mut self) -> ModelRow {
        let pad_len = self.rng.random_range(0..=self.cfg.pad_max);
        let b: u8 = self.rng.random();
        let blob = if self.rng.random_bool(self.cfg.blob_chance) {
            let n = self.rng.random_range(1..=self.cfg.blob_max);
            Some((0..n).map(|i| b.wrapping_add(i as u8)).collect())
        } else if self.rng.random_bool(0.3) {
            Some(vec![b; self.rng.random_range(0..60)])
        } else {
            None
        };
        ModelRow {
            k: self.rng.random_range(-50..50),
            u: unique_value(&mut self.rng, &self.cfg.unique_prefix),
            pad: vec![b ^ 0x55; pad_len],
            blob,
        }
    }

    /// The next transaction's operations, given the current model.
    pub fn next_trx(&mut self, model: &Model) -> Vec<Op> {
        let n = self.rng.random_range(1..=self.cfg.max_ops_per_trx);
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            let table = self.cfg.tables[self.rng.random_range(0..self.cfg.tables.len())].clone();
            let id = self.rng.random_range(0..self.cfg.id_space);
            let exists = model
                .tables
                .get(&table)
                .is_some_and(|t| t.contains_key(&id));
            let op = match (exists, self.rng.random_range(0..10)) {
                (false, _) => Op::Insert {
                    table,
                    id,
                    row: self.row(),
                },
                (true, 0..=5) => {
                    let blob = if self.rng.random_bool(0.3) {
                        Some(self.row().blob)
                    } else {
                        None
                    };
                    Op::Update {
                        table,
                        id,
                        k: self.rng.random_range(-50..50),
                        u: unique_value(&mut self.rng, &self.cfg.unique_prefix),
                        blob,
                    }
                }
                (true, _) => Op::Delete { table, id },
            };
            ops.push(op);
        }
        ops
    }

    /// Whether this transaction should roll back.
    pub fn rollback(&mut self) -> bool {
        self.rng.random_bool(self.cfg.rollback_chance)
    }
}

fn unique_taken(t: &BTreeMap<i64, ModelRow>, u: &Option<String>, except: i64) -> bool {
    let Some(u) = u else { return false };
    let norm = |s: &str| s.trim_end_matches(' ').to_uppercase();
    t.iter()
        .any(|(id, r)| *id != except && r.u.as_deref().map(norm) == Some(norm(u)))
}

/// Applies one operation to the engine and to `model` (a transaction-local copy). Returns
/// Ok(true) if applied, Ok(false) if the engine rightly refused it (duplicate unique value), or
/// the engine's unexpected error.
pub fn apply_op(
    trx: &mut Trx,
    tables: &BTreeMap<String, Arc<Table>>,
    model: &mut Model,
    op: &Op,
) -> Result<bool, Error> {
    match op {
        Op::Insert { table, id, row } => {
            let m = model.tables.entry(table.clone()).or_default();
            let dup = m.contains_key(id) || unique_taken(m, &row.u, *id);
            match trx.insert(&tables[table], &to_values(*id, row)) {
                Ok(()) if !dup => {
                    m.insert(*id, row.clone());
                    Ok(true)
                }
                Err(Error::DuplicateKey { .. }) if dup => Ok(false),
                Ok(()) => Err(Error::InvalidArgument(format!(
                    "insert of {id} succeeded but the model expected a duplicate"
                ))),
                Err(e) => Err(e),
            }
        }
        Op::Update {
            table,
            id,
            k,
            u,
            blob,
        } => {
            let m = model.tables.entry(table.clone()).or_default();
            let dup = unique_taken(m, u, *id);
            let mut changes = vec![
                (1, Value::Int(i64::from(*k))),
                (
                    2,
                    u.as_ref().map_or(Value::Null, |s| Value::from(s.as_str())),
                ),
            ];
            if let Some(b) = blob {
                changes.push((4, b.clone().map_or(Value::Null, Value::Bytes)));
            }
            match trx.update(&tables[table], &[Value::Int(*id)], &changes) {
                Ok(found) if !dup => {
                    let exists = m.contains_key(id);
                    if found != exists {
                        return Err(Error::InvalidArgument(format!(
                            "update of {id}: found={found} model={exists}"
                        )));
                    }
                    if let Some(r) = m.get_mut(id) {
                        r.k = *k;
                        r.u = u.clone();
                        if let Some(b) = blob {
                            r.blob = b.clone();
                        }
                    }
                    Ok(true)
                }
                Err(Error::DuplicateKey { .. }) if dup => Ok(false),
                Ok(_) => Err(Error::InvalidArgument(format!(
                    "update of {id} succeeded but the model expected a duplicate"
                ))),
                Err(e) => Err(e),
            }
        }
        Op::Delete { table, id } => {
            let m = model.tables.entry(table.clone()).or_default();
            let found = trx.delete(&tables[table], &[Value::Int(*id)])?;
            if found != m.contains_key(id) {
                return Err(Error::InvalidArgument(format!(
                    "delete of {id}: found={found} model={}",
                    m.contains_key(id)
                )));
            }
            m.remove(id);
            Ok(true)
        }
    }
}

/// Creates the workload's tables.
pub fn create_tables(
    engine: &Engine,
    cfg: &WorkloadCfg,
) -> Result<BTreeMap<String, Arc<Table>>, Error> {
    let mut out = BTreeMap::new();
    for t in &cfg.tables {
        out.insert(t.clone(), engine.create_table(table_def(t))?);
    }
    Ok(out)
}

/// Opens the workload's tables in a reopened engine.
pub fn open_tables(
    engine: &Engine,
    cfg: &WorkloadCfg,
) -> Result<BTreeMap<String, Arc<Table>>, Error> {
    cfg.tables
        .iter()
        .map(|t| Ok((t.clone(), engine.table(t)?)))
        .collect()
}

/// Reads a table's rows through the clustered index.
pub fn read_table(
    engine: &Engine,
    t: &Arc<Table>,
    forward: bool,
) -> Result<Vec<(i64, ModelRow)>, Error> {
    let mut trx = engine.begin();
    let mut out = Vec::new();
    for r in trx.scan(t, None, KeyBound::Unbounded, KeyBound::Unbounded, forward)? {
        out.push(of_values(&r?));
    }
    trx.commit()?;
    Ok(out)
}

/// Compares the engine with the model through every access path; Err describes the first
/// difference.
pub fn verify(engine: &Engine, model: &Model, cfg: &WorkloadCfg) -> Result<(), String> {
    for name in &cfg.tables {
        let empty = BTreeMap::new();
        let want = model.tables.get(name).unwrap_or(&empty);
        let t = match engine.table(name) {
            Ok(t) => t,
            Err(_) if want.is_empty() => continue,
            Err(e) => return Err(format!("{name}: {e}")),
        };
        let fwd = read_table(engine, &t, true).map_err(|e| e.to_string())?;
        let got: BTreeMap<i64, ModelRow> = fwd.iter().cloned().collect();
        if got.len() != fwd.len() {
            return Err(format!("{name}: duplicate keys in a scan"));
        }
        if &got != want {
            let missing: Vec<_> = want
                .keys()
                .filter(|k| !got.contains_key(k))
                .take(5)
                .collect();
            let extra: Vec<_> = got
                .keys()
                .filter(|k| !want.contains_key(k))
                .take(5)
                .collect();
            let differ: Vec<_> = want
                .iter()
                .filter(|(k, v)| got.get(k).is_some_and(|g| g != *v))
                .map(|(k, _)| k)
                .take(5)
                .collect();
            return Err(format!(
                "{name}: engine has {} rows, model {}; missing {missing:?}, extra {extra:?}, different {differ:?}",
                got.len(),
                want.len()
            ));
        }
        let mut back = read_table(engine, &t, false).map_err(|e| e.to_string())?;
        back.reverse();
        if back != fwd {
            return Err(format!("{name}: backward scan differs from forward scan"));
        }
        // Secondary indexes: every row found through k and through uk.
        let mut trx = engine.begin();
        let mut via_k = 0usize;
        for r in trx
            .scan(
                &t,
                Some("k"),
                KeyBound::Unbounded,
                KeyBound::Unbounded,
                true,
            )
            .map_err(|e| e.to_string())?
        {
            let (id, row) = of_values(&r.map_err(|e| e.to_string())?);
            if want.get(&id) != Some(&row) {
                return Err(format!(
                    "{name}: index k returned a row that differs from the model: {id}"
                ));
            }
            via_k += 1;
        }
        if via_k != want.len() {
            return Err(format!(
                "{name}: index k returned {via_k} rows, model has {}",
                want.len()
            ));
        }
        let with_u = want.values().filter(|r| r.u.is_some()).count();
        let via_u = trx
            .scan(
                &t,
                Some("uk"),
                KeyBound::Excluded(vec![Value::Null]),
                KeyBound::Unbounded,
                true,
            )
            .map_err(|e| e.to_string())?
            .count();
        if via_u != with_u {
            return Err(format!(
                "{name}: index uk returned {via_u} rows with a value, model has {with_u}"
            ));
        }
        trx.commit().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Runs one transaction of `ops` against the engine; on success returns the new model.
pub fn run_trx(
    engine: &Engine,
    tables: &BTreeMap<String, Arc<Table>>,
    model: &Model,
    ops: &[Op],
    rollback: bool,
) -> Result<Model, Error> {
    let mut trx = engine.begin();
    let mut m = model.clone();
    for op in ops {
        apply_op(&mut trx, tables, &mut m, op)?;
    }
    if rollback {
        trx.rollback()?;
        Ok(model.clone())
    } else {
        trx.commit()?;
        Ok(m)
    }
}

/// The model after `ops` commit, computed from the model alone (the same rules `apply_op`
/// expects the engine to follow): what a crash may leave if the transaction's commit reached
/// the disk.
pub fn simulate(model: &Model, ops: &[Op]) -> Model {
    let mut m = model.clone();
    for op in ops {
        match op {
            Op::Insert { table, id, row } => {
                let t = m.tables.entry(table.clone()).or_default();
                if !t.contains_key(id) && !unique_taken(t, &row.u, *id) {
                    t.insert(*id, row.clone());
                }
            }
            Op::Update {
                table,
                id,
                k,
                u,
                blob,
            } => {
                let t = m.tables.entry(table.clone()).or_default();
                if !unique_taken(t, u, *id) {
                    if let Some(r) = t.get_mut(id) {
                        r.k = *k;
                        r.u = u.clone();
                        if let Some(b) = blob {
                            r.blob = b.clone();
                        }
                    }
                }
            }
            Op::Delete { table, id } => {
                m.tables.entry(table.clone()).or_default().remove(id);
            }
        }
    }
    m
}
