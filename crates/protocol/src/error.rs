//! `ProtocolError`: every way bytes from a client can fail to decode, and the MySQL error
//! (code, SQLSTATE) the server should answer with.
//!
//! Invariant: errors carry only small fixed-size data (never client bytes), so building one
//! cannot allocate in proportion to the input.

use thiserror::Error;

/// A decoding failure. [`ProtocolError::is_fatal`] tells whether the connection's framing is
/// lost (close the connection after sending the error) or only one command was bad.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// The payload ended before a field it announces.
    #[error("malformed packet: truncated ({needed} bytes needed, {available} available)")]
    Truncated { needed: usize, available: usize },
    /// A packet header carried an unexpected sequence id.
    #[error("got packets out of order (sequence id {got}, expected {expected})")]
    BadSequence { expected: u8, got: u8 },
    /// A logical payload (all continuation packets joined) exceeds `max_allowed_packet`.
    /// `len` is the size known when the limit was crossed (a lower bound of the full size).
    #[error("got a packet bigger than 'max_allowed_packet' bytes ({len} > {max})")]
    PacketTooLarge { len: usize, max: usize },
    /// A field has a value the protocol does not allow.
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
    /// Well-formed, but uses a protocol feature this server does not implement.
    #[error("unsupported by this server: {0}")]
    Unsupported(&'static str),
    /// A command byte the server does not handle. [`crate::Command::parse`] returns
    /// `Command::Unknown(code)` rather than this error; the server builds this value to answer it.
    #[error("unknown command {0:#04x}")]
    UnknownCommand(u8),
}

impl ProtocolError {
    /// The MySQL error number and SQLSTATE for an ERR packet reporting this error.
    pub fn mysql_error(&self) -> (u16, &'static str) {
        match self {
            // ER_MALFORMED_PACKET
            ProtocolError::Truncated { .. } | ProtocolError::Malformed(_) => (1835, "HY000"),
            // ER_NET_PACKETS_OUT_OF_ORDER
            ProtocolError::BadSequence { .. } => (1156, "08S01"),
            // ER_NET_PACKET_TOO_LARGE
            ProtocolError::PacketTooLarge { .. } => (1153, "08S01"),
            // ER_NOT_SUPPORTED_AUTH_MODE
            ProtocolError::Unsupported(_) => (1251, "08004"),
            // ER_UNKNOWN_COM_ERROR
            ProtocolError::UnknownCommand(_) => (1047, "08S01"),
        }
    }

    /// The message mysqld sends with [`ProtocolError::mysql_error`]'s code (the `Display`
    /// text adds details for logs).
    pub fn mysql_message(&self) -> &'static str {
        match self {
            ProtocolError::Truncated { .. } | ProtocolError::Malformed(_) => {
                "Malformed communication packet."
            }
            ProtocolError::BadSequence { .. } => "Got packets out of order",
            ProtocolError::PacketTooLarge { .. } => {
                "Got a packet bigger than 'max_allowed_packet' bytes"
            }
            ProtocolError::Unsupported(_) => {
                "Client does not support authentication protocol requested by server; consider upgrading MySQL client"
            }
            ProtocolError::UnknownCommand(_) => "Unknown command",
        }
    }

    /// True when packet framing is lost: the server should send the error and close.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            ProtocolError::BadSequence { .. } | ProtocolError::PacketTooLarge { .. }
        )
    }
}
