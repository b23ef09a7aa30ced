//! The warnings a statement collects (SHOW WARNINGS).
//!
//! INVARIANT: every warning's code and message come from `error.rs` (`ErrorCode` + arguments),
//! so a warning reads exactly like the error MySQL would raise for the same condition.

use std::ops::{Deref, DerefMut};

use crate::error::{
    ErrorCode, SqlError, ER_TRUNCATED_WRONG_VALUE, ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
    ER_WRONG_VALUE,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Note,
    Warning,
    Error,
}

impl Level {
    /// As SHOW WARNINGS prints it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Note => "Note",
            Level::Warning => "Warning",
            Level::Error => "Error",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub level: Level,
    pub code: u16,
    pub message: String,
}

/// A statement's warnings, in the order raised. Derefs to the list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings(pub Vec<Warning>);

impl Warnings {
    /// Adds `ec` with `args` at `level`.
    pub fn push(&mut self, level: Level, ec: ErrorCode, args: &[&dyn std::fmt::Display]) {
        self.push_error(level, SqlError::new(ec, args));
    }

    /// Adds an error (e.g. one downgraded by IGNORE) at `level`.
    pub fn push_error(&mut self, level: Level, e: SqlError) {
        self.0.push(Warning {
            level,
            code: e.code,
            message: e.message,
        });
    }

    pub fn warn(&mut self, ec: ErrorCode, args: &[&dyn std::fmt::Display]) {
        self.push(Level::Warning, ec, args);
    }

    pub fn note(&mut self, ec: ErrorCode, args: &[&dyn std::fmt::Display]) {
        self.push(Level::Note, ec, args);
    }

    /// Whether a warning with this code was raised (e.g. 1365 division by zero, which the
    /// executor turns into an error for INSERT/UPDATE under strict ERROR_FOR_DIVISION_BY_ZERO).
    pub fn has_code(&self, code: u16) -> bool {
        self.0.iter().any(|w| w.code == code)
    }
}

impl Deref for Warnings {
    type Target = Vec<Warning>;
    fn deref(&self) -> &Vec<Warning> {
        &self.0
    }
}

impl DerefMut for Warnings {
    fn deref_mut(&mut self) -> &mut Vec<Warning> {
        &mut self.0
    }
}

/// MySQL's "Incorrect datetime value: 'x'": code 1292 (ER_TRUNCATED_WRONG_VALUE) with the text
/// of ER_WRONG_VALUE, as MySQL raises it for bad temporal strings in expressions.
pub(crate) fn incorrect_value(kind: &str, value: &[u8]) -> SqlError {
    SqlError {
        code: ER_TRUNCATED_WRONG_VALUE.code,
        state: ER_TRUNCATED_WRONG_VALUE.state,
        ..SqlError::new(ER_WRONG_VALUE, &[&kind, &String::from_utf8_lossy(value)])
    }
}

/// MySQL's "Incorrect date value: 'x' for column 'c' at row n": code 1292 with the text of
/// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (MySQL raises temporal column errors this way).
pub(crate) fn incorrect_temporal_for_column(
    kind: &str,
    value: &[u8],
    col: &str,
    row: u64,
) -> SqlError {
    SqlError {
        code: ER_TRUNCATED_WRONG_VALUE.code,
        state: ER_TRUNCATED_WRONG_VALUE.state,
        ..SqlError::new(
            ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
            &[&kind, &String::from_utf8_lossy(value), &col, &row],
        )
    }
}

/// "Truncated incorrect INTEGER value: 'x'" (1292) as a warning.
pub(crate) fn truncated(w: &mut Warnings, kind: &str, value: &[u8]) {
    w.warn(
        ER_TRUNCATED_WRONG_VALUE,
        &[&kind, &String::from_utf8_lossy(value)],
    );
}
