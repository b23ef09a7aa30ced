//! MySQL data types and values with MySQL 8.0 semantics.
//!
//! - `datum`: runtime values, conversions (with 1292 truncation warnings), comparison, CAST,
//!   ROUND; `arith`: + - * / DIV % and unary minus with MySQL's result types and 1690 errors.
//! - `decimal`: exact DECIMAL (65 digits, 30 places) and its memcomparable stored form.
//! - `temporal`: DATE/DATETIME/TIMESTAMP/TIME/YEAR parsing, printing, arithmetic, stored forms
//!   (the session time zone is UTC).
//! - `sql_type`: column types (validation, SHOW/protocol metadata, engine storage, persisted
//!   text); `charset`: character sets and collations; `store`: assignment to columns.
//! - `json`: JSON values, their canonical text, path expressions.
//!
//! INVARIANT: every error and warning is built from `crate::error`'s table; nothing here
//! panics on client input.

mod arith;
mod charset;
mod datum;
mod decimal;
pub mod json;
mod num;
mod sql_mode;
mod sql_type;
mod store;
mod temporal;
pub mod tz;
mod warnings;

pub use arith::{add, div, int_div, mul, neg, rem, sub};
pub use charset::{
    collation_by_id, collation_by_name, collation_info, comparable, default_collation, latin1_byte,
    latin1_char, latin1_to_utf8, mbmaxlen, utf8_to_latin1, CollationInfo, COLLATIONS,
};
pub use datum::{cast, round, to_datetime, to_time, Datum};
pub use decimal::{Decimal, DecimalError, Fit};
pub use num::{format_double, format_float};
pub use sql_mode::SqlMode;
pub use sql_type::{flag, mysql_type, SqlType, NOT_FIXED_DEC};
pub use store::{load, load_owned, load_stored, store};
pub use temporal::{
    add_interval, date_problem, datediff, days_in_month, now, now_fsp, parse_datetime,
    parse_time_micros, session_local_to_utc, session_utc_to_local, set_session_tz, Date,
    DateProblem, DateTime, Time,
};
pub use warnings::{Level, Warning, Warnings};
