//! The MySQL client/server protocol, server side, without I/O.
//!
//! This crate turns bytes received from a client into values and values into bytes to send;
//! it never touches a socket, a clock or a file. The server owns the connection loop:
//! it feeds received bytes to a [`PacketReader`], decodes each payload ([`HandshakeResponse`],
//! [`Command`], [`parse_execute`]), and frames the payloads built by the [`result`] and
//! [`auth`] encoders with [`write_packets`] / [`write_packet_with`].
//!
//! Invariants shared by every module: decoding never panics on client input (malformed bytes
//! yield a [`ProtocolError`]), and every allocation driven by client input is bounded by the
//! bytes actually present in the payload, which the [`PacketReader`] bounds by
//! `max_allowed_packet`.

pub mod auth;
pub mod command;
pub mod consts;
mod error;
pub mod handshake;
pub mod packet;
pub mod result;
pub mod value;

pub use command::{parse_execute, ChangeUser, Command, Execute};
pub use error::ProtocolError;
pub use handshake::{is_ssl_request, new_nonce, Greeting, HandshakeResponse};
pub use packet::{write_packet_with, write_packets, PacketReader, Reader};
pub use result::ColumnDef;
pub use value::{BinValue, ParamType, ParamValue, Value};

/// Result type of every decoder in this crate.
pub type Result<T, E = ProtocolError> = std::result::Result<T, E>;
