//! Command phase: decoding the client's command payloads ([`Command::parse`]) and the
//! parameters of COM_STMT_EXECUTE ([`parse_execute`]), which need per-statement state.
//!
//! Invariants: decoding is driven by the payload alone plus state the server passes in
//! (client capabilities, parameter count, previously bound types, long data); it never panics
//! and allocates at most the bytes present in the payload plus one `Value` per declared
//! parameter. Unknown command bytes decode to `Command::Unknown` so the server can answer
//! ER_UNKNOWN_COM_ERROR and keep the connection. COM_QUERY payloads are the bare query because
//! CLIENT_QUERY_ATTRIBUTES is never advertised.

use crate::consts::*;
use crate::handshake::{parse_connect_attrs, read_auth_response};
use crate::packet::Reader;
use crate::value::{decode_param, ParamType, Value};
use crate::{ProtocolError, Result};

/// The fields of COM_CHANGE_USER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser {
    pub user: String,
    pub auth_response: Vec<u8>,
    /// `None` if empty.
    pub database: Option<String>,
    /// Collation id, if the client sent one.
    pub charset: Option<u16>,
    /// `None` if not sent or empty.
    pub auth_plugin: Option<String>,
    pub attrs: Vec<(String, String)>,
}

/// A decoded command payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Quit,
    InitDb(Vec<u8>),
    Query(Vec<u8>),
    FieldList {
        table: Vec<u8>,
        wildcard: Vec<u8>,
    },
    Statistics,
    /// COM_REFRESH (deprecated, still sent by mysqldump --flush-logs): REFRESH_* flags.
    Refresh(u8),
    Ping,
    ProcessKill(u32),
    Debug,
    ChangeUser(ChangeUser),
    StmtPrepare(Vec<u8>),
    /// Only the statement id: decode the rest with [`parse_execute`] on the same payload once
    /// the statement is looked up. MariaDB clients may use id 0xFFFFFFFF for "the statement
    /// prepared last".
    StmtExecute {
        stmt_id: u32,
    },
    StmtSendLongData {
        stmt_id: u32,
        param: u16,
        data: Vec<u8>,
    },
    StmtClose(u32),
    StmtReset(u32),
    StmtFetch {
        stmt_id: u32,
        rows: u32,
    },
    SetOption(u16),
    ResetConnection,
    /// COM_SHUTDOWN (deprecated, sent by mariadb-admin shutdown); its level byte is ignored,
    /// as mysqld does.
    Shutdown,
    /// Any other command byte (COM_SLEEP, COM_BINLOG_DUMP, ...): answer error 1047.
    Unknown(u8),
}

fn utf8(bytes: &[u8], what: &'static str) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::Malformed(what))
}

impl Command {
    /// Decodes a command payload. `client_capabilities` (the negotiated flags) decides the
    /// layout of COM_CHANGE_USER. An empty payload reads as COM_SLEEP (as in mysqld), which
    /// clients may not send: `Unknown`.
    pub fn parse(payload: &[u8], client_capabilities: u32) -> Result<Command> {
        let mut r = Reader::new(payload);
        let code = if payload.is_empty() {
            COM_SLEEP
        } else {
            r.u8()?
        };
        Ok(match code {
            COM_QUIT => Command::Quit,
            COM_INIT_DB => Command::InitDb(r.rest().to_vec()),
            COM_QUERY => Command::Query(r.rest().to_vec()),
            COM_FIELD_LIST => {
                let table = r.nul_terminated_or_rest().to_vec();
                Command::FieldList {
                    table,
                    wildcard: r.rest().to_vec(),
                }
            }
            COM_STATISTICS => Command::Statistics,
            COM_REFRESH => Command::Refresh(r.u8()?),
            COM_PING => Command::Ping,
            COM_PROCESS_KILL => Command::ProcessKill(r.u32()?),
            COM_DEBUG => Command::Debug,
            COM_CHANGE_USER => Command::ChangeUser(parse_change_user(&mut r, client_capabilities)?),
            COM_STMT_PREPARE => Command::StmtPrepare(r.rest().to_vec()),
            COM_STMT_EXECUTE => Command::StmtExecute { stmt_id: r.u32()? },
            COM_STMT_SEND_LONG_DATA => Command::StmtSendLongData {
                stmt_id: r.u32()?,
                param: r.u16()?,
                data: r.rest().to_vec(),
            },
            COM_STMT_CLOSE => Command::StmtClose(r.u32()?),
            COM_STMT_RESET => Command::StmtReset(r.u32()?),
            COM_STMT_FETCH => Command::StmtFetch {
                stmt_id: r.u32()?,
                rows: r.u32()?,
            },
            COM_SET_OPTION => Command::SetOption(r.u16()?),
            COM_RESET_CONNECTION => Command::ResetConnection,
            COM_SHUTDOWN => Command::Shutdown,
            other => Command::Unknown(other),
        })
    }
}

fn parse_change_user(r: &mut Reader<'_>, caps: u32) -> Result<ChangeUser> {
    let user = utf8(r.nul_terminated()?, "user name is not UTF-8")?;
    // COM_CHANGE_USER has no length-encoded form of the auth response.
    let auth_response =
        read_auth_response(r, caps & !CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)?.to_vec();
    let database = r.nul_terminated_or_rest();
    let database = if database.is_empty() {
        None
    } else {
        Some(utf8(database, "database name is not UTF-8")?)
    };
    let charset = if r.is_empty() { None } else { Some(r.u16()?) };
    let mut auth_plugin = None;
    if caps & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        let p = r.nul_terminated_or_rest();
        if !p.is_empty() {
            auth_plugin = Some(utf8(p, "plugin name is not UTF-8")?);
        }
    }
    let mut attrs = Vec::new();
    if caps & CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
        attrs = parse_connect_attrs(r)?;
    }
    Ok(ChangeUser {
        user,
        auth_response,
        database,
        charset,
        auth_plugin,
        attrs,
    })
}

/// The decoded COM_STMT_EXECUTE.
#[derive(Debug, Clone, PartialEq)]
pub struct Execute {
    pub stmt_id: u32,
    /// Cursor flags (CURSOR_TYPE_*); the server may reject non-zero values or ignore them.
    pub flags: u8,
    pub iteration_count: u32,
    /// One value per parameter, in order.
    pub params: Vec<Value>,
}

/// Decodes COM_STMT_EXECUTE for a statement with `n_params` parameters.
///
/// `bound_types` holds the statement's parameter types: replaced when the client sends
/// new-params-bound = 1, reused when it sends 0 (sysbench does after the first execute).
/// `long_data(i)` returns (and takes) the bytes sent with COM_STMT_SEND_LONG_DATA for
/// parameter `i`; such parameters have no bytes in this packet.
pub fn parse_execute(
    payload: &[u8],
    n_params: usize,
    bound_types: &mut Vec<ParamType>,
    long_data: &mut dyn FnMut(u16) -> Option<Vec<u8>>,
) -> Result<Execute> {
    let mut r = Reader::new(payload);
    if r.u8()? != COM_STMT_EXECUTE {
        return Err(ProtocolError::Malformed("not a COM_STMT_EXECUTE payload"));
    }
    let stmt_id = r.u32()?;
    let flags = r.u8()?;
    let iteration_count = r.u32()?;
    if n_params == 0 {
        return Ok(Execute {
            stmt_id,
            flags,
            iteration_count,
            params: Vec::new(),
        });
    }
    if n_params > usize::from(u16::MAX) + 1 {
        return Err(ProtocolError::Malformed("too many parameters"));
    }
    let null_bitmap = r.take(n_params.div_ceil(8))?;
    match r.u8()? {
        0 => {
            if bound_types.len() != n_params {
                return Err(ProtocolError::Malformed("parameter types were never sent"));
            }
        }
        1 => {
            let raw = r.take(2 * n_params)?;
            bound_types.clear();
            bound_types.extend(raw.chunks_exact(2).map(|t| ParamType {
                code: t[0],
                unsigned: t[1] & PARAM_UNSIGNED != 0,
            }));
        }
        _ => return Err(ProtocolError::Malformed("bad new-params-bound flag")),
    }
    let mut params = Vec::with_capacity(n_params);
    for (i, ty) in bound_types.iter().enumerate() {
        let idx = u16::try_from(i).map_err(|_| ProtocolError::Malformed("too many parameters"))?;
        if let Some(data) = long_data(idx) {
            params.push(Value::Bytes(data));
        } else if null_bitmap[i / 8] & (1 << (i % 8)) != 0 {
            params.push(Value::Null);
        } else {
            params.push(decode_param(&mut r, *ty)?);
        }
    }
    Ok(Execute {
        stmt_id,
        flags,
        iteration_count,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::put_lenenc_bytes;

    fn no_long_data(_: u16) -> Option<Vec<u8>> {
        None
    }

    #[test]
    fn simple_commands() {
        let p = |b: &[u8]| Command::parse(b, SERVER_CAPABILITIES).unwrap();
        assert_eq!(p(&[COM_QUIT]), Command::Quit);
        assert_eq!(p(b"\x02sbtest"), Command::InitDb(b"sbtest".to_vec()));
        assert_eq!(p(b"\x03SELECT 1"), Command::Query(b"SELECT 1".to_vec()));
        assert_eq!(p(b"\x03"), Command::Query(vec![]));
        assert_eq!(
            p(b"\x04t1\0%"),
            Command::FieldList {
                table: b"t1".to_vec(),
                wildcard: b"%".to_vec()
            }
        );
        assert_eq!(
            p(b"\x04t1"),
            Command::FieldList {
                table: b"t1".to_vec(),
                wildcard: vec![]
            }
        );
        assert_eq!(p(&[COM_STATISTICS]), Command::Statistics);
        assert_eq!(p(&[COM_PING]), Command::Ping);
        assert_eq!(p(&[COM_DEBUG]), Command::Debug);
        assert_eq!(p(&[COM_PROCESS_KILL, 7, 0, 0, 0]), Command::ProcessKill(7));
        assert_eq!(
            p(b"\x16SELECT ?"),
            Command::StmtPrepare(b"SELECT ?".to_vec())
        );
        assert_eq!(
            p(&[COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0]),
            Command::StmtExecute { stmt_id: 1 }
        );
        assert_eq!(
            p(&[COM_STMT_SEND_LONG_DATA, 2, 0, 0, 0, 1, 0, b'a', b'b']),
            Command::StmtSendLongData {
                stmt_id: 2,
                param: 1,
                data: b"ab".to_vec()
            }
        );
        assert_eq!(p(&[COM_STMT_CLOSE, 3, 0, 0, 0]), Command::StmtClose(3));
        assert_eq!(p(&[COM_STMT_RESET, 4, 0, 0, 0]), Command::StmtReset(4));
        assert_eq!(
            p(&[COM_STMT_FETCH, 4, 0, 0, 0, 10, 0, 0, 0]),
            Command::StmtFetch {
                stmt_id: 4,
                rows: 10
            }
        );
        assert_eq!(p(&[COM_SET_OPTION, 1, 0]), Command::SetOption(1));
        assert_eq!(p(&[COM_RESET_CONNECTION]), Command::ResetConnection);
        assert_eq!(p(&[COM_BINLOG_DUMP]), Command::Unknown(COM_BINLOG_DUMP));
        assert_eq!(p(&[0xEE]), Command::Unknown(0xEE));
        assert_eq!(p(&[COM_SLEEP]), Command::Unknown(COM_SLEEP));
        assert_eq!(p(&[]), Command::Unknown(COM_SLEEP));
    }

    fn change_user_payload() -> Vec<u8> {
        let mut p = vec![COM_CHANGE_USER];
        p.extend_from_slice(b"app\0");
        p.push(20);
        p.extend_from_slice(&[7; 20]);
        p.extend_from_slice(b"db1\0");
        p.extend_from_slice(&45u16.to_le_bytes());
        p.extend_from_slice(b"mysql_native_password\0");
        let mut attrs = Vec::new();
        put_lenenc_bytes(&mut attrs, b"_client_name");
        put_lenenc_bytes(&mut attrs, b"pymysql");
        put_lenenc_bytes(&mut p, &attrs);
        p
    }

    #[test]
    fn change_user() {
        let c = Command::parse(&change_user_payload(), SERVER_CAPABILITIES).unwrap();
        assert_eq!(
            c,
            Command::ChangeUser(ChangeUser {
                user: "app".into(),
                auth_response: vec![7; 20],
                database: Some("db1".into()),
                charset: Some(45),
                auth_plugin: Some(MYSQL_NATIVE_PASSWORD.into()),
                attrs: vec![("_client_name".into(), "pymysql".into())],
            })
        );
        // Old form: NUL-terminated response, nothing after the database.
        let c = Command::parse(b"\x11bob\0pw\0\0", CLIENT_PROTOCOL_41).unwrap();
        assert_eq!(
            c,
            Command::ChangeUser(ChangeUser {
                user: "bob".into(),
                auth_response: b"pw".to_vec(),
                database: None,
                charset: None,
                auth_plugin: None,
                attrs: vec![],
            })
        );
    }

    /// Statement with 3 params: INT, VARCHAR (long data), BIGINT UNSIGNED.
    fn execute_payload(new_bound: bool, nulls: u8, params: &[u8]) -> Vec<u8> {
        let mut p = vec![COM_STMT_EXECUTE, 9, 0, 0, 0, 0, 1, 0, 0, 0, nulls];
        if new_bound {
            p.push(1);
            p.extend_from_slice(&[
                MYSQL_TYPE_LONG,
                0,
                MYSQL_TYPE_VAR_STRING,
                0,
                MYSQL_TYPE_LONGLONG,
                0x80,
            ]);
        } else {
            p.push(0);
        }
        p.extend_from_slice(params);
        p
    }

    #[test]
    fn execute_binds_then_reuses_types() {
        let mut types = Vec::new();
        let mut vals = Vec::new();
        vals.extend_from_slice(&(-7i32).to_le_bytes());
        vals.extend_from_slice(b"\x03abc");
        vals.extend_from_slice(&u64::MAX.to_le_bytes());
        let e = parse_execute(
            &execute_payload(true, 0, &vals),
            3,
            &mut types,
            &mut no_long_data,
        )
        .unwrap();
        assert_eq!(e.stmt_id, 9);
        assert_eq!((e.flags, e.iteration_count), (0, 1));
        assert_eq!(
            e.params,
            vec![
                Value::Int(-7),
                Value::Bytes(b"abc".to_vec()),
                Value::UInt(u64::MAX)
            ]
        );
        assert_eq!(types.len(), 3);
        assert!(types[2].unsigned);

        // new-params-bound 0: same types; param 1 NULL (bitmap bit 1).
        let mut vals = Vec::new();
        vals.extend_from_slice(&5i32.to_le_bytes());
        vals.extend_from_slice(&6u64.to_le_bytes());
        let e = parse_execute(
            &execute_payload(false, 0b010, &vals),
            3,
            &mut types,
            &mut no_long_data,
        )
        .unwrap();
        assert_eq!(e.params, vec![Value::Int(5), Value::Null, Value::UInt(6)]);

        // Long data for param 1 is not in the packet.
        let mut long = |i: u16| (i == 1).then(|| b"long".to_vec());
        let e = parse_execute(&execute_payload(false, 0, &vals), 3, &mut types, &mut long).unwrap();
        assert_eq!(
            e.params,
            vec![
                Value::Int(5),
                Value::Bytes(b"long".to_vec()),
                Value::UInt(6)
            ]
        );

        // All NULL: no value bytes at all.
        let e = parse_execute(
            &execute_payload(false, 0b111, &[]),
            3,
            &mut types,
            &mut no_long_data,
        )
        .unwrap();
        assert_eq!(e.params, vec![Value::Null; 3]);
    }

    #[test]
    fn execute_errors() {
        // Types never bound.
        let mut types = Vec::new();
        assert!(parse_execute(
            &execute_payload(false, 0b111, &[]),
            3,
            &mut types,
            &mut no_long_data
        )
        .is_err());
        // No parameters: nothing after the iteration count is read.
        let e = parse_execute(
            &[
                COM_STMT_EXECUTE,
                1,
                0,
                0,
                0,
                CURSOR_TYPE_READ_ONLY,
                1,
                0,
                0,
                0,
            ],
            0,
            &mut types,
            &mut no_long_data,
        )
        .unwrap();
        assert_eq!(e.flags, CURSOR_TYPE_READ_ONLY);
        assert!(e.params.is_empty());
        // Bad new-params-bound byte, unknown type code, wrong command.
        let mut p = execute_payload(false, 0, &[]);
        let at = p.len() - 1;
        p[at] = 2;
        assert!(parse_execute(&p, 3, &mut types, &mut no_long_data).is_err());
        let mut p = vec![COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x40, 0];
        p.extend_from_slice(&[1, 2, 3, 4]);
        assert!(parse_execute(&p, 1, &mut types, &mut no_long_data).is_err());
        assert!(parse_execute(&[COM_QUERY], 0, &mut types, &mut no_long_data).is_err());
    }

    #[test]
    fn every_prefix_fails_cleanly() {
        let mut vals = Vec::new();
        vals.extend_from_slice(&(-7i32).to_le_bytes());
        vals.extend_from_slice(b"\x03abc");
        vals.extend_from_slice(&1u64.to_le_bytes());
        let full = execute_payload(true, 0, &vals);
        for cut in 0..full.len() {
            let mut types = Vec::new();
            assert!(
                parse_execute(&full[..cut], 3, &mut types, &mut no_long_data).is_err(),
                "cut {cut}"
            );
        }
        let fixed: [&[u8]; 7] = [
            &[COM_PROCESS_KILL, 7, 0, 0, 0],
            &[COM_STMT_EXECUTE, 1, 0, 0, 0],
            &[COM_STMT_SEND_LONG_DATA, 2, 0, 0, 0, 1, 0],
            &[COM_STMT_CLOSE, 3, 0, 0, 0],
            &[COM_STMT_RESET, 4, 0, 0, 0],
            &[COM_STMT_FETCH, 4, 0, 0, 0, 10, 0, 0, 0],
            &[COM_SET_OPTION, 1, 0],
        ];
        for full in fixed {
            assert!(Command::parse(full, SERVER_CAPABILITIES).is_ok());
            for cut in 1..full.len() {
                assert!(Command::parse(&full[..cut], SERVER_CAPABILITIES).is_err());
            }
        }
        // COM_CHANGE_USER: cuts inside the user name, the response and the attrs fail; none
        // panic. (Cut 0 is the empty payload, read as COM_SLEEP.)
        let full = change_user_payload();
        for cut in 1..full.len() {
            let res = Command::parse(&full[..cut], SERVER_CAPABILITIES);
            if cut < 1 + 4 + 21 || cut == full.len() - 1 {
                assert!(res.is_err(), "cut {cut}");
            }
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let len = (next() % 48) as usize;
            let mut p: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if let Some(first) = p.first_mut() {
                *first %= 0x22;
            }
            let _ = Command::parse(&p, SERVER_CAPABILITIES);
            let _ = Command::parse(&p, 0);
            let _ = crate::HandshakeResponse::parse(&p);
            if let Some(first) = p.first_mut() {
                *first = COM_STMT_EXECUTE;
            }
            let n = (next() % 5) as usize;
            let mut types = vec![
                ParamType {
                    code: MYSQL_TYPE_DATETIME,
                    unsigned: false
                };
                n
            ];
            let _ = parse_execute(&p, n, &mut types, &mut no_long_data);
        }
    }
}
