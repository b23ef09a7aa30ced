//! innoxide's SQL front end.
//!
//! - `ast`: the statements and expressions the executor runs (our own AST: upgrades of the
//!   parser crate touch only `parse`).
//! - `parse`: a pre-dispatcher for what sqlparser cannot parse, then sqlparser's MySQL dialect
//!   lowered into `ast`.
//! - `types`: MySQL's data types and values: column types, conversions, comparison,
//!   arithmetic, DECIMAL, temporal types, and the storage encoding the engine keeps.

pub mod ast;
pub mod error;
pub mod parse;
pub mod print;
pub mod types;
