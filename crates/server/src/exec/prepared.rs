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
//! Latch order: none of its own (the session is single-threaded).

use innoxide_sql::ast::{PrepareSource, Statement};
use innoxide_sql::error::*;
use innoxide_sql::parse;

use super::expr::Context;
use super::{Output, Session};

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
        self.sql_prepared.insert(name.to_string(), (stmt, params));
        let mut ok = Output::ok(0);
        if let Output::Ok { info, .. } = &mut ok {
            *info = "Statement prepared".into();
        }
        Ok(ok)
    }

    pub(crate) fn sql_execute(&mut self, name: &str, using: &[String]) -> Result<Output, SqlError> {
        let Some((stmt, n)) = self.sql_prepared.get(name).cloned() else {
            return Err(SqlError::new(ER_UNKNOWN_STMT_HANDLER, &[&name, &"EXECUTE"]));
        };
        if using.len() != n {
            return Err(SqlError::new(ER_WRONG_ARGUMENTS, &[&"EXECUTE"]));
        }
        let params: Vec<_> = using.iter().map(|v| self.user_var(v)).collect();
        self.execute(&stmt, &params)
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
