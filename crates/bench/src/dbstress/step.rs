//! One step of a dbSTRESS run: S sessions for the step's time, each on its own thread (a
//! small stack each, so 1600 sessions fit a small machine), and the reporter on the calling
//! thread, which once a second drains every session's sink into the step's histograms and
//! prints a line (TPS, average response time per type, errors).
//!
//! Connections live in a `Pool` across steps: a step with more sessions opens only the
//! missing ones (in parallel), so the users scenario does not reconnect 1600 clients per step.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;

use super::session::{Kind, Session, Worker, ALL, KINDS, KIND_NAMES};
use super::ConnArgs;

/// Stack of a session thread: the mysql client needs little, and 1600 of them must fit.
const SESSION_STACK: usize = 512 * 1024;
/// Connections opened at once when the pool grows.
const CONNECT_THREADS: usize = 8;

/// What every step of a run shares.
pub struct Plan {
    pub objects: u64,
    pub rw: u32,
    pub update_only: bool,
    pub think: Duration,
    pub step_time: Duration,
    pub warmup: Duration,
    pub live: bool,
    /// Inserted HORDERs are `horder_base + n`, unique across runs (see `schema::State`).
    pub horder_base: i64,
    pub seed: u64,
}

/// Flags and counters the sessions read.
pub struct Shared {
    pub stop: AtomicBool,
    pub measuring: AtomicBool,
    pub horder: AtomicI64,
}

/// The sessions of a run.
pub struct Pool {
    conn: ConnArgs,
    workers: Vec<Worker>,
    shared: Arc<Shared>,
    seed: u64,
}

/// Row accounting of a whole run (all steps, warm-up included).
#[derive(Default, Debug, Clone)]
pub struct Accounting {
    pub inserted: u64,
    pub deleted: u64,
    pub unknown: u64,
    pub wrong: u64,
    pub reconnects: u64,
}

impl Pool {
    pub fn new(conn: ConnArgs, plan: &Plan) -> Pool {
        Pool {
            conn,
            workers: Vec::new(),
            shared: Arc::new(Shared {
                stop: AtomicBool::new(false),
                measuring: AtomicBool::new(false),
                horder: AtomicI64::new(1),
            }),
            seed: plan.seed,
        }
    }

    /// Opens sessions until there are `n`.
    fn grow(&mut self, n: usize) -> Result<()> {
        let have = self.workers.len();
        if have >= n {
            return Ok(());
        }
        let t0 = Instant::now();
        let missing = n - have;
        let conn = &self.conn;
        let opened: Vec<Result<Vec<Session>>> = std::thread::scope(|scope| {
            let per = missing.div_ceil(CONNECT_THREADS);
            let handles: Vec<_> = (0..missing)
                .step_by(per)
                .map(|start| {
                    let count = per.min(missing - start);
                    scope.spawn(move || (0..count).map(|_| Session::open(conn)).collect())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| bail!("a connecting thread panicked"))
                })
                .collect()
        });
        for sessions in opened {
            for s in sessions.context("open a session")? {
                let seed = self
                    .seed
                    .wrapping_add(self.workers.len() as u64 * 0x9E37_79B9);
                let mut w = Worker::new(seed);
                w.session = Some(s);
                self.workers.push(w);
            }
        }
        if missing > 50 {
            eprintln!(
                "  opened {missing} connections in {:.1} s",
                t0.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    /// Closes the connections; returns the run's row accounting.
    pub fn close(self) -> Accounting {
        let mut a = Accounting::default();
        for w in self.workers {
            let s = w.sink.lock().unwrap_or_else(|e| e.into_inner());
            a.inserted += s.inserted;
            a.deleted += s.deleted;
            a.unknown += s.unknown;
            a.wrong += s.wrong;
            a.reconnects += s.reconnects;
        }
        a
    }
}

/// The figures of one transaction or statement type in a step (or in one second).
#[derive(Clone)]
pub struct KindStats {
    pub count: u64,
    pub errors: u64,
    /// Microseconds.
    pub hist: Histogram<u64>,
}

impl KindStats {
    fn new() -> Result<KindStats> {
        Ok(KindStats {
            count: 0,
            errors: 0,
            hist: Histogram::new_with_bounds(1, 600_000_000, 3).context("create a histogram")?,
        })
    }

    /// A latency quantile in milliseconds (0 when nothing was measured).
    pub fn ms(&self, q: f64) -> f64 {
        if self.hist.is_empty() {
            0.0
        } else {
            self.hist.value_at_quantile(q) as f64 / 1000.0
        }
    }

    pub fn mean_ms(&self) -> f64 {
        if self.hist.is_empty() {
            0.0
        } else {
            self.hist.mean() / 1000.0
        }
    }

    pub fn max_ms(&self) -> f64 {
        self.hist.max() as f64 / 1000.0
    }

    fn add(&mut self, other: &KindStats) -> Result<()> {
        self.count += other.count;
        self.errors += other.errors;
        self.hist.add(&other.hist).context("merge histograms")
    }
}

/// One second of a step.
#[derive(Clone, Debug)]
pub struct Tick {
    /// Seconds since measuring started, at the end of this tick.
    pub t: f64,
    pub tps: f64,
    pub errors: u64,
    /// 95th percentile of all transactions in the tick, milliseconds.
    pub p95_ms: f64,
}

/// The result of a step.
pub struct StepResult {
    pub sessions: usize,
    /// Measured seconds.
    pub seconds: f64,
    pub txns: u64,
    /// One per `Kind`, then ALL.
    pub kinds: Vec<KindStats>,
    pub hard_errors: u64,
    pub last_error: Option<String>,
    pub wrong: u64,
    pub last_wrong: Option<String>,
    pub timeline: Vec<Tick>,
    /// Transactions per second of each session.
    pub session_rates: Vec<f64>,
    /// The rate a thinking session aims at (1 / think), if any.
    pub target_rate: Option<f64>,
}

impl StepResult {
    pub fn tps(&self) -> f64 {
        self.txns as f64 / self.seconds.max(1e-9)
    }

    pub fn errors(&self) -> u64 {
        self.kinds[Kind::Read as usize].errors + self.kinds[Kind::Write as usize].errors
    }

    /// Sessions below 95% of the target rate, less one transaction over the step (a
    /// session that starts its last transaction just after the step ends is not slow).
    pub fn slow_sessions(&self) -> usize {
        match self.target_rate {
            Some(t) => {
                let floor = 0.95 * t - 1.0 / self.seconds.max(1e-9);
                self.session_rates.iter().filter(|&&r| r < floor).count()
            }
            None => 0,
        }
    }

    /// The step's failed checks: wrong read results, errors other than lock waits and
    /// deadlocks, no transaction at all.
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        let at = format!("{} sessions", self.sessions);
        if self.wrong > 0 {
            f.push(format!(
                "{at}: {} wrong result(s), e.g. {}",
                self.wrong,
                self.last_wrong.as_deref().unwrap_or("?")
            ));
        }
        if self.hard_errors > 0 {
            f.push(format!(
                "{at}: {} error(s) other than lock wait timeouts and deadlocks, e.g. {}",
                self.hard_errors,
                self.last_error.as_deref().unwrap_or("?")
            ));
        }
        if self.txns == 0 {
            f.push(format!("{at}: no transaction completed"));
        }
        f
    }
}

/// Runs one step with `n` sessions.
pub fn run_step(pool: &mut Pool, plan: &Plan, n: usize) -> Result<StepResult> {
    pool.grow(n)?;
    let shared = pool.shared.clone();
    shared.stop.store(false, Ordering::Relaxed);
    shared
        .measuring
        .store(plan.warmup.is_zero(), Ordering::Relaxed);
    for w in &pool.workers {
        let mut s = w.sink.lock().unwrap_or_else(|e| e.into_inner());
        s.samples.clear();
        s.errors = [0; KINDS];
        s.hard_errors = 0;
        s.txns = 0;
        s.step_txns = 0;
        s.last_error = None;
    }
    let wrong_before: u64 = pool.workers[..n]
        .iter()
        .map(|w| w.sink.lock().unwrap_or_else(|e| e.into_inner()).wrong)
        .sum();
    let conn = pool.conn.clone();
    let workers = &mut pool.workers[..n];
    let sinks: Vec<_> = workers.iter().map(|w| w.sink.clone()).collect();
    let mut rep = Reporter::new(n, plan)?;
    let result = std::thread::scope(|scope| -> Result<()> {
        for (i, w) in workers.iter_mut().enumerate() {
            let (shared, conn) = (&shared, &conn);
            std::thread::Builder::new()
                .name(format!("session-{i}"))
                .stack_size(SESSION_STACK)
                .spawn_scoped(scope, move || w.run(plan, shared, conn))
                .context("start a session thread")
                .inspect_err(|_| shared.stop.store(true, Ordering::Relaxed))?;
        }
        let r = rep.drive(&shared, &sinks, plan);
        shared.measuring.store(false, Ordering::Relaxed);
        shared.stop.store(true, Ordering::Relaxed);
        r
    });
    result?;
    let mut r = rep.finish(&sinks, plan);
    r.wrong -= wrong_before.min(r.wrong);
    Ok(r)
}

/// The step's figures as the reporter collects them.
struct Reporter {
    sessions: usize,
    step: Vec<KindStats>,
    tick: Vec<KindStats>,
    timeline: Vec<Tick>,
    txns: u64,
    hard_errors: u64,
    last_error: Option<String>,
    measured: Duration,
}

impl Reporter {
    fn new(sessions: usize, _plan: &Plan) -> Result<Reporter> {
        let kinds = || {
            (0..=KINDS)
                .map(|_| KindStats::new())
                .collect::<Result<Vec<_>>>()
        };
        Ok(Reporter {
            sessions,
            step: kinds()?,
            tick: kinds()?,
            timeline: Vec::new(),
            txns: 0,
            hard_errors: 0,
            last_error: None,
            measured: Duration::ZERO,
        })
    }

    /// Ticks once a second through warm-up and the measured time.
    fn drive(&mut self, shared: &Shared, sinks: &[SinkRef], plan: &Plan) -> Result<()> {
        let start = Instant::now();
        let mut measure_start = (plan.warmup.is_zero()).then_some(start);
        let end = start + plan.warmup + plan.step_time;
        let mut next = start + Duration::from_secs(1);
        let mut last_tick = start;
        loop {
            let now = Instant::now();
            if measure_start.is_none() && now >= start + plan.warmup {
                // Warm-up over: drop what it measured and start the clock.
                self.drain(sinks)?;
                self.reset_tick()?;
                self.txns = 0;
                shared.measuring.store(true, Ordering::Relaxed);
                measure_start = Some(now);
                last_tick = now;
                next = now + Duration::from_secs(1);
            }
            let wake = next.min(end).min(if measure_start.is_none() {
                start + plan.warmup
            } else {
                end
            });
            if wake > now {
                std::thread::sleep(wake - now);
                continue;
            }
            let at_end = now >= end;
            if at_end {
                shared.measuring.store(false, Ordering::Relaxed);
            }
            // A tick (the last one may be shorter; under half a second it is counted in the
            // step's figures but not drawn as a second of the timeline).
            let (txns, errors) = self.drain(sinks)?;
            if let Some(m) = measure_start {
                let secs = (now - last_tick).as_secs_f64();
                if !at_end || secs >= 0.5 {
                    self.close_tick((now - m).as_secs_f64(), secs, txns, errors, plan.live)?;
                }
                last_tick = now;
                if at_end {
                    self.measured = now - m;
                }
            }
            if at_end {
                return Ok(());
            }
            next += Duration::from_secs(1);
        }
    }

    /// Moves every session's samples into the tick's and the step's figures.
    fn drain(&mut self, sinks: &[SinkRef]) -> Result<(u64, u64)> {
        let (mut txns, mut errors) = (0, 0);
        let mut samples = Vec::new();
        for sink in sinks {
            let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::swap(&mut samples, &mut s.samples);
            for (k, e) in s.errors.iter_mut().enumerate() {
                self.tick[k].errors += *e;
                if k == Kind::Read as usize || k == Kind::Write as usize {
                    errors += *e;
                    self.tick[ALL].errors += *e;
                }
                *e = 0;
            }
            txns += std::mem::take(&mut s.txns);
            self.hard_errors += std::mem::take(&mut s.hard_errors);
            if let Some(e) = s.last_error.take() {
                self.last_error = Some(e);
            }
            drop(s);
            for (k, us) in samples.drain(..) {
                let k = usize::from(k);
                let us = u64::from(us);
                self.tick[k].count += 1;
                self.tick[k].hist.saturating_record(us);
                if k == Kind::Read as usize || k == Kind::Write as usize {
                    self.tick[ALL].count += 1;
                    self.tick[ALL].hist.saturating_record(us);
                }
            }
        }
        self.txns += txns;
        Ok((txns, errors))
    }

    fn reset_tick(&mut self) -> Result<()> {
        for k in &mut self.tick {
            *k = KindStats::new()?;
        }
        Ok(())
    }

    fn close_tick(&mut self, t: f64, secs: f64, txns: u64, errors: u64, live: bool) -> Result<()> {
        let tps = txns as f64 / secs.max(1e-3);
        let all = &self.tick[ALL];
        self.timeline.push(Tick {
            t,
            tps,
            errors,
            p95_ms: all.ms(0.95),
        });
        if live {
            let mut line = format!(
                "[{:>4} sessions] {:>5.0}s  tps {:>8.1}  err {:>3} |",
                self.sessions, t, tps, errors
            );
            for k in [Kind::Sel1, Kind::Sel2, Kind::Del, Kind::Ins, Kind::Upd] {
                let ks = &self.tick[k as usize];
                if ks.count > 0 || ks.errors > 0 {
                    line.push_str(&format!(" {} {:.2}", KIND_NAMES[k as usize], ks.mean_ms()));
                }
            }
            println!("{line} ms avg");
        }
        for k in 0..=KINDS {
            let tick = std::mem::replace(&mut self.tick[k], KindStats::new()?);
            self.step[k].add(&tick)?;
        }
        Ok(())
    }

    fn finish(mut self, sinks: &[SinkRef], plan: &Plan) -> StepResult {
        // What finished between the last tick and the stop (counted in the step, not in a
        // tick of the timeline).
        if self.drain(sinks).is_ok() {
            for k in 0..=KINDS {
                let tick = self.tick[k].clone();
                let _ = self.step[k].add(&tick);
            }
        }
        let seconds = self.measured.as_secs_f64();
        let mut wrong = 0;
        let mut last_wrong = None;
        let mut session_rates = Vec::with_capacity(sinks.len());
        for sink in sinks {
            let s = sink.lock().unwrap_or_else(|e| e.into_inner());
            session_rates.push(s.step_txns as f64 / seconds.max(1e-9));
            wrong += s.wrong;
            if s.last_wrong.is_some() {
                last_wrong.clone_from(&s.last_wrong);
            }
        }
        StepResult {
            sessions: self.sessions,
            seconds,
            txns: self.txns,
            kinds: self.step,
            hard_errors: self.hard_errors,
            last_error: self.last_error,
            wrong,
            last_wrong,
            timeline: self.timeline,
            session_rates,
            target_rate: (!plan.think.is_zero()).then(|| 1.0 / plan.think.as_secs_f64()),
        }
    }
}

type SinkRef = Arc<std::sync::Mutex<super::session::Sink>>;
