//! sql_mode: the set of modes, with MySQL 8.0's names, combination modes and canonical text.
//!
//! INVARIANT: `to_string()` lists the set modes in MySQL's bit order, comma-separated, upper
//! case, as `SELECT @@sql_mode` shows them; parsing accepts any case, spaces around names,
//! empty items, and the combination modes (ANSI, TRADITIONAL), which expand to their members.

use std::fmt;

/// A set of sql_mode flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SqlMode(pub u64);

/// The single modes in MySQL 8.0's bit order.
const NAMES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "NOT_USED",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "NOT_USED_9",
    "NOT_USED_10",
    "NOT_USED_11",
    "NOT_USED_12",
    "NOT_USED_13",
    "NOT_USED_14",
    "NOT_USED_15",
    "NOT_USED_16",
    "NOT_USED_17",
    "NOT_USED_18",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NOT_USED_29",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

impl SqlMode {
    pub const REAL_AS_FLOAT: u64 = 1 << 0;
    pub const PIPES_AS_CONCAT: u64 = 1 << 1;
    pub const ANSI_QUOTES: u64 = 1 << 2;
    pub const IGNORE_SPACE: u64 = 1 << 3;
    pub const ONLY_FULL_GROUP_BY: u64 = 1 << 5;
    pub const NO_UNSIGNED_SUBTRACTION: u64 = 1 << 6;
    pub const NO_DIR_IN_CREATE: u64 = 1 << 7;
    pub const ANSI: u64 = 1 << 18;
    pub const NO_AUTO_VALUE_ON_ZERO: u64 = 1 << 19;
    pub const NO_BACKSLASH_ESCAPES: u64 = 1 << 20;
    pub const STRICT_TRANS_TABLES: u64 = 1 << 21;
    pub const STRICT_ALL_TABLES: u64 = 1 << 22;
    pub const NO_ZERO_IN_DATE: u64 = 1 << 23;
    pub const NO_ZERO_DATE: u64 = 1 << 24;
    pub const ALLOW_INVALID_DATES: u64 = 1 << 25;
    pub const ERROR_FOR_DIVISION_BY_ZERO: u64 = 1 << 26;
    pub const TRADITIONAL: u64 = 1 << 27;
    pub const HIGH_NOT_PRECEDENCE: u64 = 1 << 29;
    pub const NO_ENGINE_SUBSTITUTION: u64 = 1 << 30;
    pub const PAD_CHAR_TO_FULL_LENGTH: u64 = 1 << 31;
    pub const TIME_TRUNCATE_FRACTIONAL: u64 = 1 << 32;

    /// MySQL 8.0's default: ONLY_FULL_GROUP_BY, STRICT_TRANS_TABLES, NO_ZERO_IN_DATE,
    /// NO_ZERO_DATE, ERROR_FOR_DIVISION_BY_ZERO, NO_ENGINE_SUBSTITUTION.
    pub const DEFAULT: SqlMode = SqlMode(
        Self::ONLY_FULL_GROUP_BY
            | Self::STRICT_TRANS_TABLES
            | Self::NO_ZERO_IN_DATE
            | Self::NO_ZERO_DATE
            | Self::ERROR_FOR_DIVISION_BY_ZERO
            | Self::NO_ENGINE_SUBSTITUTION,
    );

    pub fn has(self, flag: u64) -> bool {
        self.0 & flag != 0
    }

    /// STRICT_TRANS_TABLES or STRICT_ALL_TABLES (every innoxide table is transactional).
    pub fn strict(self) -> bool {
        self.has(Self::STRICT_TRANS_TABLES | Self::STRICT_ALL_TABLES)
    }

    /// Parses a comma-separated list; the error is the first unknown name (for error 1231).
    pub fn parse(s: &str) -> Result<SqlMode, String> {
        let mut bits = 0u64;
        for item in s.split(',') {
            let name = item.trim().to_ascii_uppercase();
            if name.is_empty() {
                continue;
            }
            bits |= match name.as_str() {
                "ANSI" => {
                    Self::ANSI
                        | Self::REAL_AS_FLOAT
                        | Self::PIPES_AS_CONCAT
                        | Self::ANSI_QUOTES
                        | Self::IGNORE_SPACE
                        | Self::ONLY_FULL_GROUP_BY
                }
                "TRADITIONAL" => {
                    Self::TRADITIONAL
                        | Self::STRICT_TRANS_TABLES
                        | Self::STRICT_ALL_TABLES
                        | Self::NO_ZERO_IN_DATE
                        | Self::NO_ZERO_DATE
                        | Self::ERROR_FOR_DIVISION_BY_ZERO
                        | Self::NO_ENGINE_SUBSTITUTION
                }
                n => match NAMES
                    .iter()
                    .position(|x| *x == n && !x.starts_with("NOT_USED"))
                {
                    Some(i) => 1 << i,
                    None => return Err(item.trim().to_string()),
                },
            };
        }
        Ok(SqlMode(bits))
    }
}

impl fmt::Display for SqlMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (i, n) in NAMES.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(n)?;
                first = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_text_is_mysqls() {
        assert_eq!(
            SqlMode::DEFAULT.to_string(),
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
        );
        assert_eq!(
            SqlMode::parse(&SqlMode::DEFAULT.to_string()),
            Ok(SqlMode::DEFAULT)
        );
    }

    #[test]
    fn combinations_and_errors() {
        let t = SqlMode::parse("traditional").unwrap();
        assert_eq!(
            t.to_string(),
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION"
        );
        assert_eq!(SqlMode::parse(""), Ok(SqlMode(0)));
        assert_eq!(
            SqlMode::parse("STRICT_TRANS_TABLES, bogus"),
            Err("bogus".into())
        );
        assert_eq!(SqlMode::parse("NOT_USED"), Err("NOT_USED".into()));
    }
}
