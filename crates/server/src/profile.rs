//! The query profiler (SET profiling = 1; SHOW PROFILES; SHOW PROFILE [FOR QUERY n]): each
//! statement of a session with profiling on is timed stage by stage, with MySQL's stage
//! names (starting, Opening tables, optimizing, executing, Sending data, waiting for handler
//! commit, query end, cleaning up); the last profiling_history_size statements are kept.
//!
//! INVARIANTS
//! - P1: the stages of a statement cover its time without gap or overlap: a new stage ends
//!   the previous one at the same instant, and the sum of the stages is the statement's
//!   Duration in SHOW PROFILES.
//! - P2: with profiling off, `stage` costs one branch (no clock read).
//!
//! No latches: a profiler belongs to one session.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A finished statement's profile.
#[derive(Clone, Debug)]
pub struct Profile {
    pub id: u32,
    pub query: String,
    pub stages: Vec<(&'static str, Duration)>,
}

impl Profile {
    /// The statement's whole time (P1).
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.1).sum()
    }
}

struct Running {
    query: String,
    stage: &'static str,
    since: Instant,
    stages: Vec<(&'static str, Duration)>,
}

#[derive(Default)]
pub struct Profiler {
    history: VecDeque<Profile>,
    next_id: u32,
    running: Option<Running>,
}

impl Profiler {
    /// Starts timing a statement (its first stage is "starting").
    pub fn begin(&mut self, query: &str) {
        self.running = Some(Running {
            query: query.to_string(),
            stage: "starting",
            since: Instant::now(),
            stages: Vec::new(),
        });
    }

    /// Ends the current stage and starts `name` (P1); nothing when no statement is timed (P2).
    pub fn stage(&mut self, name: &'static str) {
        if let Some(r) = &mut self.running {
            if r.stage == name {
                return;
            }
            let now = Instant::now();
            r.stages.push((r.stage, now - r.since));
            r.stage = name;
            r.since = now;
        }
    }

    /// Ends the statement with a last "cleaning up" stage and keeps it among the last `keep`.
    pub fn end(&mut self, keep: usize) {
        self.stage("cleaning up");
        let Some(mut r) = self.running.take() else {
            return;
        };
        r.stages.push((r.stage, r.since.elapsed()));
        self.next_id += 1;
        self.history.push_back(Profile {
            id: self.next_id,
            query: r.query,
            stages: r.stages,
        });
        while self.history.len() > keep {
            self.history.pop_front();
        }
    }

    /// Drops the statement being timed (SHOW PROFILE and SHOW PROFILES are not recorded).
    pub fn discard(&mut self) {
        self.running = None;
    }

    /// SHOW PROFILES.
    pub fn profiles(&self) -> impl Iterator<Item = &Profile> {
        self.history.iter()
    }

    /// SHOW PROFILE [FOR QUERY id]: the given one, or the last one.
    pub fn profile(&self, id: Option<u32>) -> Option<&Profile> {
        match id {
            Some(id) => self.history.iter().find(|p| p.id == id),
            None => self.history.back(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_cover_the_statement_and_history_is_bounded() {
        let mut p = Profiler::default();
        p.stage("ignored");
        assert!(p.profile(None).is_none());
        for i in 0..5 {
            p.begin(&format!("SELECT {i}"));
            p.stage("Opening tables");
            p.stage("executing");
            p.stage("executing");
            p.stage("Sending data");
            p.end(3);
        }
        let ids: Vec<u32> = p.profiles().map(|x| x.id).collect();
        assert_eq!(ids, vec![3, 4, 5]);
        let last = p.profile(None).unwrap();
        assert_eq!(last.query, "SELECT 4");
        let names: Vec<&str> = last.stages.iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            vec![
                "starting",
                "Opening tables",
                "executing",
                "Sending data",
                "cleaning up"
            ]
        );
        assert_eq!(last.duration(), last.stages.iter().map(|s| s.1).sum());
        assert!(p.profile(Some(1)).is_none());
        assert_eq!(p.profile(Some(4)).unwrap().query, "SELECT 3");
    }
}
