//! What the executor asks of a column type beyond `SqlType`'s own answers: charset and
//! collation names, blob-likeness, the hidden row id type, and the charset/collation pair a
//! CREATE DATABASE / CREATE TABLE resolves to.

use innoxide_sql::ast::{ColumnType, TypeName};
use innoxide_sql::error::*;
use innoxide_sql::types::{self, SqlType};

pub trait TypeInfo {
    fn collation_name(&self) -> String;
    fn charset_name(&self) -> String;
    fn is_decimal(&self) -> bool;
    fn is_blob_like(&self) -> bool;
    /// CHARACTER_MAXIMUM_LENGTH (characters).
    fn char_length(&self) -> u32;
}

impl TypeInfo for SqlType {
    fn collation_name(&self) -> String {
        types::collation_by_id(self.charset_id())
            .map_or("binary", |c| c.name)
            .to_string()
    }
    fn charset_name(&self) -> String {
        types::collation_by_id(self.charset_id())
            .map_or("binary", |c| c.charset)
            .to_string()
    }
    fn is_decimal(&self) -> bool {
        self.data_type() == "decimal"
    }
    fn is_blob_like(&self) -> bool {
        self.lob_bytes().is_some() || self.data_type() == "json"
    }
    fn char_length(&self) -> u32 {
        let cs = self.charset_name();
        let mb = match cs.as_str() {
            "utf8mb4" => 4,
            "utf8mb3" => 3,
            _ => 1,
        };
        self.column_length() / mb
    }
}

/// BIGINT UNSIGNED: the hidden row id of a table without a primary key (catalog C2).
pub fn hidden_row_id() -> Result<SqlType, SqlError> {
    let t = ColumnType {
        name: TypeName::BigInt,
        length: None,
        scale: None,
        unsigned: true,
        zerofill: false,
        charset: None,
        collate: None,
        values: Vec::new(),
    };
    SqlType::from_ast(&t, crate::catalog::HIDDEN_ROW_ID, None, None)
}

/// Resolves CHARACTER SET / COLLATE clauses (either may be missing) to a valid pair.
pub fn charset_and_collation(
    charset: Option<&str>,
    collate: Option<&str>,
    default_charset: &str,
) -> Result<(String, String), SqlError> {
    match (charset, collate) {
        (_, Some(co)) => {
            let info = types::collation_info(co)
                .ok_or_else(|| SqlError::new(ER_UNKNOWN_COLLATION, &[&co]))?;
            if let Some(cs) = charset {
                let cs_name = types::default_collation(cs)
                    .ok_or_else(|| SqlError::new(ER_UNKNOWN_CHARACTER_SET, &[&cs]))?
                    .charset;
                if cs_name != info.charset {
                    return Err(SqlError::new(ER_COLLATION_CHARSET_MISMATCH, &[&co, &cs]));
                }
            }
            Ok((info.charset.to_string(), info.name.to_string()))
        }
        (cs, None) => {
            let cs = cs.unwrap_or(default_charset);
            let d = types::default_collation(cs)
                .ok_or_else(|| SqlError::new(ER_UNKNOWN_CHARACTER_SET, &[&cs]))?;
            Ok((d.charset.to_string(), d.name.to_string()))
        }
    }
}
