//! MySQL data types and values (being written).

mod sql_mode;

pub use sql_mode::SqlMode;
