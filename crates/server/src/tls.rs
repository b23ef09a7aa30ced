//! TLS for client connections, through rustls (ring provider, TLS 1.2 and 1.3), as mysqld
//! offers it when `ssl_cert` and `ssl_key` are set: the client sends an SSLRequest after
//! the greeting, both sides run the TLS handshake on the same socket, and the rest of the
//! conversation (handshake response, commands) goes through TLS.
//!
//! INVARIANTS
//! - T1: a connection's stream is a [`Link`]: plain until an SSLRequest, TLS after it, never
//!   back; [`Link::Closed`] only exists for the instant of the switch.
//! - T2: bytes the client sent after its SSLRequest and that the packet reader already read
//!   from the socket (the start of its ClientHello) are given to rustls before anything is
//!   read from the socket again, so no handshake byte is lost.
//! - T3: a certificate or key that cannot be loaded stops startup (mysqld goes on without
//!   TLS; we refuse to start silently insecure when the operator asked for TLS).
//!
//! No latches: a Link belongs to one connection thread.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::conn::Stream;
use crate::exec::Closer;

/// Reads `cert` (PEM, the server certificate then its chain) and `key` (PEM, PKCS#8, PKCS#1
/// or SEC1) into a server configuration.
pub fn load(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("ssl_cert {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("ssl_cert {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("ssl_cert {}: no certificate in it", cert.display()));
    }
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|e| format!("ssl_key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("ssl_cert/ssl_key: {e}"))?;
    Ok(Arc::new(cfg))
}

/// What SHOW STATUS reports for a TLS session (Ssl_version, Ssl_cipher).
#[derive(Clone, Debug)]
pub struct TlsInfo {
    pub version: String,
    pub cipher: String,
}

/// The OpenSSL name of a cipher suite (what mysqld's Ssl_cipher shows), from rustls's name.
fn openssl_name(rustls_name: &str) -> &str {
    match rustls_name {
        "TLS13_AES_256_GCM_SHA384" => "TLS_AES_256_GCM_SHA384",
        "TLS13_AES_128_GCM_SHA256" => "TLS_AES_128_GCM_SHA256",
        "TLS13_CHACHA20_POLY1305_SHA256" => "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256" => "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" => "ECDHE-RSA-CHACHA20-POLY1305",
        other => other,
    }
}

type TlsStream = StreamOwned<ServerConnection, Box<dyn Stream>>;

/// A client's stream, plain or TLS (T1).
pub enum Link {
    Plain(Box<dyn Stream>),
    Tls(Box<TlsStream>),
    Closed,
}

impl Link {
    /// Switches a plain link to TLS and completes the handshake; `early` holds the bytes the
    /// client sent after its SSLRequest that were already read from the socket (T2).
    pub fn start_tls(&mut self, cfg: Arc<ServerConfig>, early: &[u8]) -> std::io::Result<()> {
        let Link::Plain(sock) = std::mem::replace(self, Link::Closed) else {
            return Err(std::io::Error::other("TLS is already on"));
        };
        let mut conn = ServerConnection::new(cfg).map_err(std::io::Error::other)?;
        let mut rest = early;
        while !rest.is_empty() {
            conn.read_tls(&mut rest)?;
            conn.process_new_packets()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        }
        let mut s = StreamOwned::new(conn, sock);
        while s.conn.is_handshaking() {
            s.conn.complete_io(&mut s.sock)?;
        }
        *self = Link::Tls(Box::new(s));
        Ok(())
    }

    /// The negotiated protocol and cipher of a TLS link.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        let Link::Tls(s) = self else { return None };
        let version = match s.conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            v => format!("{v:?}"),
        };
        let suite = s.conn.negotiated_cipher_suite()?.suite();
        let cipher = openssl_name(suite.as_str().unwrap_or("")).to_string();
        Some(TlsInfo { version, cipher })
    }

    fn closed() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotConnected, "connection closed")
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Link::Plain(s) => s.read(buf),
            Link::Tls(s) => s.read(buf),
            Link::Closed => Err(Link::closed()),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Link::Plain(s) => s.write(buf),
            Link::Tls(s) => s.write(buf),
            Link::Closed => Err(Link::closed()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Link::Plain(s) => s.flush(),
            Link::Tls(s) => s.flush(),
            Link::Closed => Err(Link::closed()),
        }
    }
}

impl Stream for Link {
    fn set_timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> std::io::Result<()> {
        match self {
            Link::Plain(s) => s.set_timeouts(read, write),
            Link::Tls(s) => s.sock.set_timeouts(read, write),
            Link::Closed => Err(Link::closed()),
        }
    }

    fn closer(&self) -> Option<Closer> {
        match self {
            Link::Plain(s) => s.closer(),
            Link::Tls(s) => s.sock.closer(),
            Link::Closed => None,
        }
    }

    fn shutdown_write(&mut self) -> std::io::Result<()> {
        match self {
            Link::Plain(s) => s.shutdown_write(),
            Link::Tls(s) => {
                // close_notify first, so the client sees a clean TLS end, not a truncation.
                s.conn.send_close_notify();
                while s.conn.wants_write() {
                    s.conn.write_tls(&mut s.sock)?;
                }
                s.sock.shutdown_write()
            }
            Link::Closed => Err(Link::closed()),
        }
    }
}
