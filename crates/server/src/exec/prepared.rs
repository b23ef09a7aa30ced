//! SQL-level prepared statements: PREPARE name FROM ..., EXECUTE name USING @vars,
//! DEALLOCATE PREPARE name. (MySQL: sql_prepare.cc, the SQLCOM_PREPARE path.)
//!
//! Invariants:
//! - P1: a name (case-insensitive, kept lower-case) maps to one parsed statement and its number
//!   of `?` markers; PREPARE of an existing name replaces it, even when the new text fails to
//!   parse (the old one is deallocated first, as in MySQL).
//! - P2: statements live in the session only: COM_RESET_CONNECTION and COM_CHANGE_USER drop
//!   them, and they are distinct from the protocol's COM_STMT_PREPARE statements.
//!
//! - P3: a statement keeps the plan of its SELECT, UPDATE or DELETE between executions
//!   (`KeptPlan`; select.rs P3, dml.rs D3): a kept plan runs again only while
//!   `Session::basis_holds` finds its `PlanBasis` unchanged and its tables are the engine's
//!   tables of the descriptions the catalog hands out (a description loaded again after the
//!   table definition cache evicted it describes the same table: no new plan).
//!
//! Latch order: none of its own (the session is single-threaded).

use std::sync::Arc;

use innoxide_engine::Collation;
use innoxide_sql::ast::{PrepareSource, Statement};
use innoxide_sql::error::*;
use innoxide_sql::parse;
use innoxide_sql::types::{Datum, SqlMode};

use super::dml::ChangePlan;
use super::expr::{param_type_of, Context, EType};
use super::select::SelectPlan;
use super::{Output, Session};

/// The plan a prepared statement keeps from one execution to the next (P3).
#[derive(Clone)]
pub(crate) enum KeptPlan {
    Select(Arc<SelectPlan>),
    Change(Arc<ChangePlan>),
}

/// What a plan's compilation depended on besides its tables (P3).
pub(crate) struct PlanBasis {
    db: Option<String>,
    sql_mode: SqlMode,
    collation: Collation,
    /// The type of each parameter's value when compiled (`?` takes its value's type).
    param_types: Vec<EType>,
    /// Nothing of the session was folded in (and, for a SELECT, every source is a base table).
    pub cacheable: bool,
}

/// Where a compilation began: the session's folds and warnings then (`Session::basis`).
pub(crate) struct CompileStart {
    folds: u64,
    warnings: usize,
}

/// A PREPARE'd statement: the parsed text, its number of `?`, its kept plan.
#[derive(Clone)]
pub(crate) struct SqlPrepared {
    /// Shared with a running execution, which keeps the plan only for this same statement.
    stmt: Arc<Statement>,
    params: usize,
    plan: Option<KeptPlan>,
}

impl Session {
    pub(crate) fn sql_prepare(
        &mut self,
        name: &str,
        source: &PrepareSource,
    ) -> Result<Output, SqlError> {
        self.sql_prepared.remove(name);
        let text = match source {
            PrepareSource::Text(t) => t.clone(),
            PrepareSource::UserVar(v) => match self.user_var(v).to_text() {
                Some(t) => String::from_utf8_lossy(&t).into_owned(),
                None => return Err(SqlError::parse("NULL", 1)),
            },
        };
        if let Some(second) = parse::split_statements(&text).get(1) {
            // One statement only: the second is a syntax error.
            return Err(SqlError::parse(second.trim(), 1));
        }
        let stmt = parse::parse(&text)?;
        if matches!(
            stmt,
            Statement::Prepare { .. } | Statement::Execute { .. } | Statement::DeallocatePrepare(_)
        ) {
            return Err(SqlError::new(ER_UNSUPPORTED_PS, &[]));
        }
        let params = parse::count_params(&text);
        self.sql_prepared.insert(
            name.to_string(),
            SqlPrepared {
                stmt: Arc::new(stmt),
                params,
                plan: None,
            },
        );
        let mut ok = Output::ok(0);
        if let Output::Ok { info, .. } = &mut ok {
            *info = "Statement prepared".into();
        }
        Ok(ok)
    }

    pub(crate) fn sql_execute(&mut self, name: &str, using: &[String]) -> Result<Output, SqlError> {
        let Some(ps) = self.sql_prepared.get_mut(name) else {
            return Err(SqlError::new(ER_UNKNOWN_STMT_HANDLER, &[&name, &"EXECUTE"]));
        };
        if using.len() != ps.params {
            return Err(SqlError::new(ER_WRONG_ARGUMENTS, &[&"EXECUTE"]));
        }
        let (stmt, plan) = (ps.stmt.clone(), ps.plan.take());
        let params: Vec<_> = using.iter().map(|v| self.user_var(v)).collect();
        let r = self.with_plan(plan, |s| s.execute(&stmt, &params));
        // The statement may have deallocated or replaced itself meanwhile: keep the plan
        // only with the statement it was made for.
        if let (Some(ps), Some(plan)) = (self.sql_prepared.get_mut(name), r.1) {
            if Arc::ptr_eq(&ps.stmt, &stmt) {
                ps.plan = Some(plan);
            }
        }
        r.0
    }

    /// Marks the start of a compilation, for `basis`.
    pub(crate) fn compile_start(&self) -> CompileStart {
        CompileStart {
            folds: self.folds,
            warnings: self.warnings.len(),
        }
    }

    /// What a compilation begun at `start` with `params` depended on; `more` is the rest of
    /// the plan's own condition for being kept.
    pub(crate) fn basis(&self, start: CompileStart, params: &[Datum], more: bool) -> PlanBasis {
        let collation = Context::collation(self);
        PlanBasis {
            db: self.db.clone(),
            sql_mode: self.vars.sql_mode(),
            collation,
            param_types: params.iter().map(|d| param_type_of(d, collation)).collect(),
            cacheable: more && start.folds == self.folds && start.warnings == self.warnings.len(),
        }
    }

    /// True if a plan made on `basis` may run with `params`: same sql_mode, database and
    /// collation, parameters bound with the types it was typed for (else it is made again,
    /// as mysqld re-prepares: Com_stmt_reprepare).
    pub(crate) fn basis_holds(&mut self, basis: &PlanBasis, params: &[Datum]) -> bool {
        let coll = Context::collation(self);
        if basis.sql_mode != self.vars.sql_mode() || basis.db != self.db || basis.collation != coll
        {
            return false;
        }
        if params.len() != basis.param_types.len()
            || params
                .iter()
                .zip(&basis.param_types)
                .any(|(d, t)| param_type_of(d, coll) != *t)
        {
            self.reprepared();
            return false;
        }
        true
    }

    /// Counts a plan made again because a table or a parameter's type changed
    /// (Com_stmt_reprepare, as mysqld counts).
    pub(crate) fn reprepared(&mut self) {
        self.status
            .command(&self.server.status, crate::status::COM_STMT_REPREPARE);
    }

    /// Runs `f` (the execution of a prepared statement) with `plan`, the plan it kept;
    /// returns what `f` returned and the plan to keep for the next execution.
    pub(crate) fn with_plan<T>(
        &mut self,
        plan: Option<KeptPlan>,
        f: impl FnOnce(&mut Session) -> T,
    ) -> (T, Option<KeptPlan>) {
        let outer = self.stmt_plan.replace(plan);
        let r = f(self);
        let kept = std::mem::replace(&mut self.stmt_plan, outer).flatten();
        (r, kept)
    }

    pub(crate) fn sql_deallocate(&mut self, name: &str) -> Result<Output, SqlError> {
        match self.sql_prepared.remove(name) {
            Some(_) => Ok(Output::ok(0)),
            None => Err(SqlError::new(
                ER_UNKNOWN_STMT_HANDLER,
                &[&name, &"DEALLOCATE PREPARE"],
            )),
        }
    }
}
