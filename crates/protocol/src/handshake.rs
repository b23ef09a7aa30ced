//! Connection phase: the server greeting (Protocol::HandshakeV10), the nonce, the client's
//! SSLRequest and HandshakeResponse41, and connection attributes.
//!
//! Invariants: the nonce never contains NUL or '$' (clients treat the scramble as a C string,
//! and some .NET drivers split on '$'); decoding follows the capability flags the client itself
//! sent, tolerates optional trailing fields that are absent, and rejects fields that are cut off
//! mid-way. Pre-4.1 clients (no CLIENT_PROTOCOL_41) are refused with `Unsupported`.

use rand::Rng;

use crate::consts::*;
use crate::packet::{put_nul_terminated, Reader};
use crate::{ProtocolError, Result};

/// The server's first packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    pub connection_id: u32,
    /// Must start with `N.N.N` (e.g. "8.0.40-innoxide"); NUL bytes cut it short.
    pub server_version: String,
    pub nonce: [u8; 20],
    pub capabilities: u32,
    /// Default collation id of the server (e.g. 255 utf8mb4_0900_ai_ci).
    pub charset: u8,
    /// Server status flags (keep SERVER_STATUS_AUTOCOMMIT accurate).
    pub status: u16,
    pub auth_plugin: String,
}

impl Greeting {
    /// The HandshakeV10 payload.
    pub fn encode(&self) -> Vec<u8> {
        let caps = self.capabilities.to_le_bytes();
        let mut out = Vec::with_capacity(64 + self.server_version.len() + self.auth_plugin.len());
        out.push(10);
        put_nul_terminated(&mut out, self.server_version.as_bytes());
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&self.nonce[..8]);
        out.push(0);
        out.extend_from_slice(&caps[..2]);
        out.push(self.charset);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&caps[2..]);
        // Length of the whole auth-plugin-data: 20 bytes of nonce plus its NUL.
        out.push(if self.capabilities & CLIENT_PLUGIN_AUTH != 0 {
            21
        } else {
            0
        });
        out.extend_from_slice(&[0; 10]);
        out.extend_from_slice(&self.nonce[8..]);
        out.push(0);
        if self.capabilities & CLIENT_PLUGIN_AUTH != 0 {
            put_nul_terminated(&mut out, self.auth_plugin.as_bytes());
        }
        out
    }
}

/// 20 random printable ASCII bytes (0x21..=0x7E) other than '$'.
pub fn new_nonce() -> [u8; 20] {
    let mut rng = rand::rng();
    let mut nonce = [0u8; 20];
    for b in &mut nonce {
        // 93 printable characters once '$' (0x24) is skipped.
        let c = rng.random_range(0x21u8..0x7E);
        *b = if c >= b'$' { c + 1 } else { c };
    }
    nonce
}

/// Length of an SSLRequest: capabilities, max packet size, charset, 23-byte filler.
const SSL_REQUEST_LEN: usize = 32;

/// True if `payload` is an SSLRequest: the first 32 bytes of a HandshakeResponse41 with
/// CLIENT_SSL set and nothing after them. The server then starts TLS and reads the full
/// HandshakeResponse (sequence id 2) over it.
pub fn is_ssl_request(payload: &[u8]) -> bool {
    payload.len() == SSL_REQUEST_LEN
        && u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]) & CLIENT_SSL != 0
}

/// The client's HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// The client's flags; the session's flags are these `&` the server's.
    pub capabilities: u32,
    pub max_packet: u32,
    /// Collation id requested by the client (any value; map unknown ones).
    pub charset: u8,
    pub username: String,
    pub auth_response: Vec<u8>,
    /// The initial schema; `None` if not sent or empty.
    pub database: Option<String>,
    /// The plugin that produced `auth_response`; `None` if not sent or empty.
    pub auth_plugin: Option<String>,
    pub connect_attrs: Vec<(String, String)>,
}

fn utf8(bytes: &[u8], what: &'static str) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::Malformed(what))
}

fn non_empty(bytes: &[u8], what: &'static str) -> Result<Option<String>> {
    if bytes.is_empty() {
        Ok(None)
    } else {
        utf8(bytes, what).map(Some)
    }
}

impl HandshakeResponse {
    pub fn parse(payload: &[u8]) -> Result<HandshakeResponse> {
        let mut r = Reader::new(payload);
        let capabilities = r.u32()?;
        if capabilities & CLIENT_PROTOCOL_41 == 0 {
            return Err(ProtocolError::Unsupported("pre-4.1 client protocol"));
        }
        let max_packet = r.u32()?;
        let charset = r.u8()?;
        r.take(23)?;
        let username = utf8(r.nul_terminated()?, "user name is not UTF-8")?;
        let auth_response = read_auth_response(&mut r, capabilities)?.to_vec();
        let mut database = None;
        if capabilities & CLIENT_CONNECT_WITH_DB != 0 && !r.is_empty() {
            database = non_empty(r.nul_terminated_or_rest(), "database name is not UTF-8")?;
        }
        let mut auth_plugin = None;
        if capabilities & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
            auth_plugin = non_empty(r.nul_terminated_or_rest(), "plugin name is not UTF-8")?;
        }
        let mut connect_attrs = Vec::new();
        if capabilities & CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
            connect_attrs = parse_connect_attrs(&mut r)?;
        }
        Ok(HandshakeResponse {
            capabilities,
            max_packet,
            charset,
            username,
            auth_response,
            database,
            auth_plugin,
            connect_attrs,
        })
    }
}

/// The auth response in whichever of its three forms `capabilities` selects (also used by
/// COM_CHANGE_USER, which never uses the length-encoded form).
pub(crate) fn read_auth_response<'a>(r: &mut Reader<'a>, capabilities: u32) -> Result<&'a [u8]> {
    if capabilities & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes()
    } else if capabilities & CLIENT_SECURE_CONNECTION != 0 {
        let len = r.u8()?;
        r.take(usize::from(len))
    } else {
        Ok(r.nul_terminated_or_rest())
    }
}

/// A length-encoded block of length-encoded key/value strings. Non-UTF-8 bytes are replaced.
pub(crate) fn parse_connect_attrs(r: &mut Reader<'_>) -> Result<Vec<(String, String)>> {
    let len = usize::try_from(r.lenenc_int()?).unwrap_or(usize::MAX);
    let mut block = Reader::new(r.take(len)?);
    let mut attrs = Vec::new();
    while !block.is_empty() {
        let key = String::from_utf8_lossy(block.lenenc_bytes()?).into_owned();
        let value = String::from_utf8_lossy(block.lenenc_bytes()?).into_owned();
        attrs.push((key, value));
    }
    Ok(attrs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::put_lenenc_bytes;

    #[test]
    fn greeting_layout() {
        let nonce = *b"abcdefghijklmnopqrst";
        let g = Greeting {
            connection_id: 0x0102_0304,
            server_version: "8.0.40-innoxide".into(),
            nonce,
            capabilities: SERVER_CAPABILITIES,
            charset: CHARSET_UTF8MB4_0900_AI_CI,
            status: SERVER_STATUS_AUTOCOMMIT,
            auth_plugin: MYSQL_NATIVE_PASSWORD.into(),
        };
        let e = g.encode();
        let mut r = Reader::new(&e);
        assert_eq!(r.u8().unwrap(), 10);
        assert_eq!(r.nul_terminated().unwrap(), b"8.0.40-innoxide");
        assert_eq!(r.u32().unwrap(), 0x0102_0304);
        assert_eq!(r.take(8).unwrap(), b"abcdefgh");
        assert_eq!(r.u8().unwrap(), 0);
        let lo = r.u16().unwrap();
        assert_eq!(r.u8().unwrap(), 255);
        assert_eq!(r.u16().unwrap(), SERVER_STATUS_AUTOCOMMIT);
        let hi = r.u16().unwrap();
        assert_eq!(u32::from(lo) | u32::from(hi) << 16, SERVER_CAPABILITIES);
        assert_eq!(r.u8().unwrap(), 21);
        assert_eq!(r.take(10).unwrap(), [0; 10]);
        assert_eq!(r.take(13).unwrap(), b"ijklmnopqrst\0");
        assert_eq!(r.nul_terminated().unwrap(), b"mysql_native_password");
        assert!(r.is_empty());
    }

    #[test]
    fn nonce_is_printable_without_dollar() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2000 {
            let n = new_nonce();
            for b in n {
                assert!((0x21..=0x7E).contains(&b) && b != b'$', "{b:#x}");
                seen.insert(b);
            }
        }
        assert_eq!(seen.len(), 93);
        assert_ne!(new_nonce(), new_nonce());
    }

    fn header(caps: u32, charset: u8) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(charset);
        p.extend_from_slice(&[0; 23]);
        p
    }

    /// What libmariadb sends: PLUGIN_AUTH_LENENC, CONNECT_WITH_DB, PLUGIN_AUTH, CONNECT_ATTRS.
    fn mariadb_like() -> Vec<u8> {
        let caps = CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_CONNECT_ATTRS
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
        let mut p = header(caps, 45);
        p.extend_from_slice(b"sbtest\0");
        p.push(20);
        p.extend_from_slice(&[0xAA; 20]);
        p.extend_from_slice(b"sbtest_db\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let mut attrs = Vec::new();
        for (k, v) in [("_client_name", "libmariadb"), ("_pid", "1234")] {
            put_lenenc_bytes(&mut attrs, k.as_bytes());
            put_lenenc_bytes(&mut attrs, v.as_bytes());
        }
        put_lenenc_bytes(&mut p, &attrs);
        p
    }

    #[test]
    fn parses_libmariadb_like_response() {
        let h = HandshakeResponse::parse(&mariadb_like()).unwrap();
        assert_eq!(h.charset, 45);
        assert_eq!(h.max_packet, 16 << 20);
        assert_eq!(h.username, "sbtest");
        assert_eq!(h.auth_response, vec![0xAA; 20]);
        assert_eq!(h.database.as_deref(), Some("sbtest_db"));
        assert_eq!(h.auth_plugin.as_deref(), Some(MYSQL_NATIVE_PASSWORD));
        assert_eq!(
            h.connect_attrs,
            vec![
                ("_client_name".into(), "libmariadb".into()),
                ("_pid".into(), "1234".into())
            ]
        );
        assert!(!is_ssl_request(&mariadb_like()));
    }

    #[test]
    fn parses_secure_connection_and_old_style_responses() {
        // SECURE_CONNECTION 1-byte length, no db, no plugin.
        let mut p = header(CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION, 33);
        p.extend_from_slice(b"root\0");
        p.push(0);
        let h = HandshakeResponse::parse(&p).unwrap();
        assert_eq!((h.username.as_str(), h.auth_response.len()), ("root", 0));
        assert_eq!((h.database, h.auth_plugin), (None, None));

        // NUL-terminated auth response followed by a database.
        let mut p = header(CLIENT_PROTOCOL_41 | CLIENT_CONNECT_WITH_DB, 8);
        p.extend_from_slice(b"bob\0secret8b\0test\0");
        let h = HandshakeResponse::parse(&p).unwrap();
        assert_eq!(h.username, "bob");
        assert_eq!(h.auth_response, b"secret8b");
        assert_eq!(h.database.as_deref(), Some("test"));
        assert!(h.connect_attrs.is_empty());

        // Flags announcing optional trailing fields that are absent are tolerated.
        let mut p = header(
            CLIENT_PROTOCOL_41
                | CLIENT_SECURE_CONNECTION
                | CLIENT_CONNECT_WITH_DB
                | CLIENT_PLUGIN_AUTH
                | CLIENT_CONNECT_ATTRS,
            8,
        );
        p.extend_from_slice(b"u\0\0");
        let h = HandshakeResponse::parse(&p).unwrap();
        assert_eq!((h.database, h.auth_plugin), (None, None));

        // Pre-4.1 response.
        let p = [0x05, 0x00, 0xFF, 0xFF, 0xFF, b'u', 0];
        assert_eq!(
            HandshakeResponse::parse(&p),
            Err(ProtocolError::Unsupported("pre-4.1 client protocol"))
        );
    }

    #[test]
    fn ssl_request() {
        let p = header(
            CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION,
            45,
        );
        assert!(is_ssl_request(&p));
        assert!(HandshakeResponse::parse(&p).is_err());
        assert!(!is_ssl_request(&header(CLIENT_PROTOCOL_41, 45)));
        assert!(!is_ssl_request(&p[..31]));
    }

    #[test]
    fn every_prefix_is_an_error() {
        let full = mariadb_like();
        // Cuts inside the attrs block, the plugin name or database are tolerated only at
        // field boundaries; none may panic, and all before the user name's NUL must fail.
        for cut in 0..full.len() {
            let res = HandshakeResponse::parse(&full[..cut]);
            if cut < 32 + 7 + 21 {
                assert!(res.is_err(), "cut {cut}");
            }
        }
        // A truncated attrs block fails.
        assert!(HandshakeResponse::parse(&full[..full.len() - 1]).is_err());
    }
}
