//! The error log's line format, as MariaDB writes it, so the tools and habits that read
//! mysqld error logs read ours:
//!
//! ```text
//! 2026-11-22 13:30:00 0 [Note] innoxide: ready for connections. ...
//! 2026-11-22 13:30:05 12 [Warning] Access denied for user 'x'@'localhost' (using password: YES)
//! 2026-11-22 13:30:09 0 [ERROR] InnoDB: ...
//! ```
//!
//! date and time (UTC, the server's time zone), the connection id of the thread that logged
//! (0 for server threads), the level (ERROR, Warning, Note; debug and trace lines are Notes),
//! then the message.
//!
//! INVARIANT: one event is one line (fields follow the message, space-separated).
//! No latches: the connection id is a thread-local.

use std::cell::Cell;
use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

thread_local! {
    static CONN_ID: Cell<u32> = const { Cell::new(0) };
}

/// Marks the calling thread as serving connection `id` (its log lines carry it).
pub fn set_connection(id: u32) {
    CONN_ID.with(|c| c.set(id));
}

/// MariaDB's error log format (see the module comment).
pub struct MariadbFormat;

impl<S, N> FormatEvent<S, N> for MariadbFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = match *event.metadata().level() {
            Level::ERROR => "ERROR",
            Level::WARN => "Warning",
            _ => "Note",
        };
        let now = innoxide_sql::types::now();
        let id = CONN_ID.with(Cell::get);
        write!(writer, "{now} {id} [{level}] ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
