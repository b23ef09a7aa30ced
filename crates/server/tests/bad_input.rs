//! Bad input over raw TCP: truncated and oversized packets, wrong sequence ids, unknown
//! commands, statement ids that do not exist, garbage SQL, truncated handshake responses,
//! random byte streams at every stage, and 10,000 connections opened and dropped; and, over
//! the same raw client, server-side cursors (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY,
//! then COM_STMT_FETCH), which the client libraries of the other tests do not use.
//!
//! Each case checks MySQL 8.0's answer (error number, SQLSTATE, message, the sequence id of
//! the error packet, whether the connection is closed), then that the server keeps serving:
//! a client connected before the bad input and a fresh one both run a query, and no thread
//! of the server panicked. The random streams print their seed; set BAD_INPUT_SEED to
//! replay one.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::{connect, global_status, start_with, Server};
use innoxide_protocol::consts::*;
use mysql::prelude::*;

const IO_TIMEOUT: Duration = Duration::from_secs(15);

/// The capabilities of the raw client: 4.1 protocol, plugin auth, no EOF packets.
const CAPS: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_PLUGIN_AUTH
    | CLIENT_DEPRECATE_EOF;

fn tcp(s: &Server) -> TcpStream {
    let t = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    t.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    t.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    t.set_nodelay(true).unwrap();
    t
}

fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = seq;
    innoxide_protocol::write_packets(&mut out, &mut seq, payload);
    out
}

fn send(t: &mut TcpStream, seq: u8, payload: &[u8]) {
    t.write_all(&frame(seq, payload)).expect("send");
}

/// The next packet (sequence id, payload); None at end of stream between packets.
fn read_packet(t: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match t.read(&mut h[got..]) {
            Ok(0) if got == 0 => return None,
            Ok(0) => panic!("stream ends inside a packet header"),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::ConnectionReset && got == 0 => return None,
            Err(e) => panic!("reading a packet: {e}"),
        }
    }
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0u8; len];
    t.read_exact(&mut p).expect("packet body");
    Some((h[3], p))
}

fn packet(t: &mut TcpStream) -> (u8, Vec<u8>) {
    read_packet(t).expect("a packet, not the end of the stream")
}

/// Asserts the server closed the connection cleanly (end of stream, not a reset) without
/// sending anything more.
#[track_caller]
fn expect_closed(t: &mut TcpStream) {
    let mut b = [0u8; 64];
    match t.read(&mut b) {
        Ok(0) => {}
        Ok(n) => panic!("expected the connection closed, got {:?}", &b[..n]),
        Err(e) => panic!("expected the connection closed, got {e}"),
    }
}

#[derive(Debug, PartialEq)]
struct ErrPacket {
    seq: u8,
    code: u16,
    state: String,
    message: String,
}

fn parse_err(seq: u8, p: &[u8]) -> Option<ErrPacket> {
    if p.len() < 9 || p[0] != 0xFF || p[3] != b'#' {
        return None;
    }
    Some(ErrPacket {
        seq,
        code: u16::from_le_bytes([p[1], p[2]]),
        state: String::from_utf8_lossy(&p[4..9]).into_owned(),
        message: String::from_utf8_lossy(&p[9..]).into_owned(),
    })
}

/// Reads one packet and asserts it is this error.
#[track_caller]
fn expect_err(t: &mut TcpStream, seq: u8, code: u16, state: &str, message: &str) {
    let (s, p) = packet(t);
    let e = parse_err(s, &p).unwrap_or_else(|| panic!("expected ERR {code}, got {p:?}"));
    assert_eq!(
        e,
        ErrPacket {
            seq,
            code,
            state: state.into(),
            message: message.into()
        }
    );
}

/// Reads the greeting; returns its nonce.
fn greeting(t: &mut TcpStream) -> Vec<u8> {
    let (seq, p) = packet(t);
    assert_eq!(seq, 0);
    assert_eq!(p[0], 10, "protocol version 10: {p:?}");
    let v_end = 1 + p[1..].iter().position(|&b| b == 0).expect("version NUL");
    let mut nonce = p[v_end + 5..v_end + 13].to_vec();
    let rest = v_end + 13 + 1 + 2 + 1 + 2 + 2 + 1 + 10;
    nonce.extend_from_slice(&p[rest..rest + 12]);
    nonce
}

/// A HandshakeResponse41 for `user` with an empty password.
fn handshake_response(user: &str) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&CAPS.to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    p.push(0); // empty auth response
    p.extend_from_slice(b"caching_sha2_password\0");
    p
}

/// Where the user name (with its NUL) ends in [`handshake_response`] for "root".
const USER_END: usize = 32 + 4 + 1;

/// A logged-in raw connection as root.
fn login(s: &Server) -> TcpStream {
    let mut t = tcp(s);
    greeting(&mut t);
    send(&mut t, 1, &handshake_response("root"));
    let (seq, p) = packet(&mut t);
    assert_eq!((seq, p[0]), (2, 0x00), "OK after login: {p:?}");
    t
}

/// COM_PING answers OK with sequence id 1: the connection is in sync.
#[track_caller]
fn ping(t: &mut TcpStream) {
    send(t, 0, &[COM_PING]);
    let (seq, p) = packet(t);
    assert_eq!((seq, p.first()), (1, Some(&0x00)), "OK to COM_PING: {p:?}");
}

/// `SELECT 1` over the raw connection: column count, one definition, row "1", OK terminator.
#[track_caller]
fn select_one(t: &mut TcpStream) {
    send(t, 0, b"\x03SELECT 1");
    assert_eq!(packet(t), (1, vec![1]));
    let (seq, _def) = packet(t);
    assert_eq!(seq, 2);
    assert_eq!(packet(t), (3, vec![1, b'1']));
    let (seq, p) = packet(t);
    assert_eq!((seq, p[0]), (4, 0xFE), "OK terminator: {p:?}");
}

/// The server still serves: the client connected before the bad input and a fresh one both
/// run a query, and no thread panicked.
#[track_caller]
fn assert_serves(s: &mut Server, other: &mut mysql::Conn) {
    assert!(s.alive(), "the server exited");
    let one: u32 = other
        .query_first("SELECT 1")
        .expect("the other client still works")
        .expect("a row");
    assert_eq!(one, 1);
    let mut fresh = connect(s);
    let v: String = fresh.query_first("SELECT @@version").unwrap().unwrap();
    assert!(v.starts_with("8.0."), "{v}");
    assert_eq!(s.panics(), Vec::<String>::new(), "a server thread panicked");
}

#[test]
fn truncated_oversized_and_out_of_order_packets() {
    let mut s = start_with(false, &["--max-allowed-packet=1M"]);
    let mut other = connect(&s);

    // A header announcing more bytes than follow, then the client goes: no reply, the
    // server closes (during the handshake and after it).
    let mut t = tcp(&s);
    greeting(&mut t);
    t.write_all(&[100, 0, 0, 1, b'x', b'y']).unwrap();
    t.shutdown(Shutdown::Write).unwrap();
    expect_closed(&mut t);
    let mut t = login(&s);
    t.write_all(&[200, 0, 0, 0, COM_QUERY, b'S', b'E']).unwrap();
    t.shutdown(Shutdown::Write).unwrap();
    expect_closed(&mut t);
    // Half a header.
    let mut t = login(&s);
    t.write_all(&[9, 0]).unwrap();
    t.shutdown(Shutdown::Write).unwrap();
    expect_closed(&mut t);
    // A client that sends half a packet and closes at once.
    for _ in 0..20 {
        let mut t = login(&s);
        t.write_all(&[50, 0, 0, 0, COM_QUERY]).unwrap();
        drop(t);
    }
    assert_serves(&mut s, &mut other);

    // Larger than max_allowed_packet: 1153 (SQLSTATE 08S01) with the sequence id after the
    // packet's, then the server closes. Refused from the header alone...
    const TOO_LARGE: &str = "Got a packet bigger than 'max_allowed_packet' bytes";
    let mut t = login(&s);
    t.write_all(&[0x01, 0x00, 0x10, 0]).unwrap(); // 1 MiB + 1
    expect_err(&mut t, 1, 1153, "08S01", TOO_LARGE);
    expect_closed(&mut t);
    // ...and when the client sends the whole packet before reading the reply (as a client
    // does with a big INSERT), it still gets the error rather than a reset connection: the
    // server reads what the client still sends before closing. (8 MiB is more than the
    // socket buffers hold, so the write completes only if the server reads.)
    let mut t = login(&s);
    let mut big = vec![COM_QUERY];
    big.extend_from_slice(b"SELECT '");
    big.resize(8 << 20, b'a');
    big.push(b'\'');
    t.write_all(&frame(0, &big))
        .expect("the server reads the whole packet");
    expect_err(&mut t, 1, 1153, "08S01", TOO_LARGE);
    expect_closed(&mut t);
    // In the handshake.
    let mut t = tcp(&s);
    greeting(&mut t);
    t.write_all(&[0x00, 0x00, 0x20, 1]).unwrap();
    expect_err(&mut t, 2, 1153, "08S01", TOO_LARGE);
    expect_closed(&mut t);
    // Exactly max_allowed_packet is fine.
    let mut t = login(&s);
    let mut q = b"\x03SELECT LENGTH('".to_vec();
    let fill = (1 << 20) - q.len() - 2;
    q.resize(q.len() + fill, b'b');
    q.extend_from_slice(b"')");
    assert_eq!(q.len(), 1 << 20);
    send(&mut t, 0, &q);
    assert_eq!(packet(&mut t), (1, vec![1]));
    packet(&mut t);
    let n = fill.to_string();
    let mut row = vec![n.len() as u8];
    row.extend_from_slice(n.as_bytes());
    assert_eq!(packet(&mut t), (3, row));
    packet(&mut t);
    ping(&mut t);
    assert_serves(&mut s, &mut other);

    // A wrong sequence id: 1156 (08S01), sent with the sequence id the server expected, and
    // the connection closes (as mysqld: the framing can no longer be trusted).
    const OUT_OF_ORDER: &str = "Got packets out of order";
    let mut t = login(&s);
    send(&mut t, 1, b"\x03SELECT 1");
    expect_err(&mut t, 0, 1156, "08S01", OUT_OF_ORDER);
    expect_closed(&mut t);
    let mut t = login(&s);
    send(&mut t, 0xFF, &[COM_PING]);
    expect_err(&mut t, 0, 1156, "08S01", OUT_OF_ORDER);
    expect_closed(&mut t);
    // In the handshake (the response must carry 1).
    let mut t = tcp(&s);
    greeting(&mut t);
    send(&mut t, 0, &handshake_response("root"));
    expect_err(&mut t, 1, 1156, "08S01", OUT_OF_ORDER);
    expect_closed(&mut t);
    // Two commands in one write, the second out of order: the first is answered.
    let mut t = login(&s);
    let mut both = frame(0, &[COM_PING]);
    both.extend_from_slice(&frame(3, &[COM_PING]));
    t.write_all(&both).unwrap();
    assert_eq!(packet(&mut t).0, 1);
    expect_err(&mut t, 0, 1156, "08S01", OUT_OF_ORDER);
    expect_closed(&mut t);
    assert_serves(&mut s, &mut other);
}

#[test]
fn unknown_commands_statements_and_garbage_sql() {
    let mut s = start_with(false, &[]);
    let mut other = connect(&s);
    let mut t = login(&s);

    // Unknown or retired command bytes, and an empty packet (read as COM_SLEEP): 1047
    // (08S01), and the connection stays.
    for cmd in [
        &[COM_SLEEP][..],
        &[COM_CREATE_DB, b'x'],
        &[COM_CONNECT],
        &[COM_TIME],
        &[COM_DELAYED_INSERT],
        &[0x40],
        &[0xEE, 1, 2, 3],
        &[0xFF],
        &[],
    ] {
        send(&mut t, 0, cmd);
        expect_err(&mut t, 1, 1047, "08S01", "Unknown command");
        ping(&mut t);
    }

    // Statement ids that do not exist: EXECUTE, RESET and FETCH answer 1243 (HY000) with
    // mysqld's message; SEND_LONG_DATA and CLOSE answer nothing at all.
    let unknown =
        |id: u32| format!("Unknown prepared statement handler ({id}) given to mysql_stmt_precheck");
    let id = 4242u32.to_le_bytes();
    let mut exec = vec![COM_STMT_EXECUTE];
    exec.extend_from_slice(&id);
    exec.extend_from_slice(&[0, 1, 0, 0, 0]);
    send(&mut t, 0, &exec);
    expect_err(&mut t, 1, 1243, "HY000", &unknown(4242));
    send(&mut t, 0, &[&[COM_STMT_RESET][..], &id].concat());
    expect_err(&mut t, 1, 1243, "HY000", &unknown(4242));
    send(
        &mut t,
        0,
        &[&[COM_STMT_FETCH][..], &id, &[10, 0, 0, 0]].concat(),
    );
    expect_err(&mut t, 1, 1243, "HY000", &unknown(4242));
    send(
        &mut t,
        0,
        &[&[COM_STMT_SEND_LONG_DATA][..], &id, &[0, 0], b"data"].concat(),
    );
    send(&mut t, 0, &[&[COM_STMT_CLOSE][..], &id].concat());
    ping(&mut t);
    // Too short for their fixed fields: malformed (1835), whether or not the id exists.
    for short in [
        &[COM_STMT_RESET, 1][..],
        &[COM_STMT_EXECUTE, 0x92, 0x10, 0, 0],
    ] {
        send(&mut t, 0, short);
        expect_err(&mut t, 1, 1835, "HY000", "Malformed communication packet.");
    }
    ping(&mut t);

    // A real statement: FETCH without a cursor is 1421; after CLOSE its id is unknown.
    send(&mut t, 0, b"\x16SELECT 1");
    let (seq, ok) = packet(&mut t);
    assert_eq!((seq, ok[0]), (1, 0x00), "COM_STMT_PREPARE OK: {ok:?}");
    let sid = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    assert_eq!(u16::from_le_bytes([ok[5], ok[6]]), 1, "one column");
    packet(&mut t); // its definition (no EOF: CLIENT_DEPRECATE_EOF)
    let sid_b = sid.to_le_bytes();
    send(
        &mut t,
        0,
        &[&[COM_STMT_FETCH][..], &sid_b, &[1, 0, 0, 0]].concat(),
    );
    expect_err(
        &mut t,
        1,
        1421,
        "HY000",
        &format!("The statement ({sid}) has no open cursor."),
    );
    send(&mut t, 0, &[&[COM_STMT_RESET][..], &sid_b].concat());
    let (seq, p) = packet(&mut t);
    assert_eq!((seq, p[0]), (1, 0x00), "OK to COM_STMT_RESET: {p:?}");
    send(&mut t, 0, &[&[COM_STMT_CLOSE][..], &sid_b].concat());
    let mut exec = vec![COM_STMT_EXECUTE];
    exec.extend_from_slice(&sid_b);
    exec.extend_from_slice(&[0, 1, 0, 0, 0]);
    send(&mut t, 0, &exec);
    expect_err(&mut t, 1, 1243, "HY000", &unknown(sid));

    // Garbage SQL: 1064 (42000); an empty query: 1065.
    for q in [
        &b"SELEC 1"[..],
        b"SELECT * FORM t",
        b"))))",
        b"'unterminated",
        b"SELECT 1 +",
        b"\x00\x01\x02",
    ] {
        send(&mut t, 0, &[&[COM_QUERY][..], q].concat());
        let (seq, p) = packet(&mut t);
        let e = parse_err(seq, &p).unwrap_or_else(|| panic!("{q:?}: expected an error: {p:?}"));
        assert_eq!(
            (e.seq, e.code, e.state.as_str()),
            (1, 1064, "42000"),
            "{q:?}: {e:?}"
        );
        assert!(
            e.message
                .starts_with("You have an error in your SQL syntax"),
            "{e:?}"
        );
    }
    send(&mut t, 0, &[COM_QUERY]);
    expect_err(&mut t, 1, 1065, "42000", "Query was empty");
    // Random bytes as COM_QUERY: 1064 every time, and the connection stays.
    let mut rng = Rng::new("garbage SQL");
    for _ in 0..300 {
        let len = 1 + rng.below(200) as usize;
        // Bytes that cannot start or form a statement (no letters or separators).
        let q: Vec<u8> = (0..len).map(|_| 0x80 | rng.next() as u8).collect();
        send(&mut t, 0, &[&[COM_QUERY][..], &q].concat());
        let (seq, p) = packet(&mut t);
        let e = parse_err(seq, &p).unwrap_or_else(|| panic!("{q:?}: expected an error: {p:?}"));
        assert_eq!(
            (e.seq, e.code, e.state.as_str()),
            (1, 1064, "42000"),
            "{q:?}"
        );
    }
    select_one(&mut t);
    assert_serves(&mut s, &mut other);

    // Truncated handshake responses. Cut before the auth response's length byte: 1043 Bad
    // handshake (08S01) and the connection closes. After it, the optional plugin name is
    // absent (the default plugin is used) or cut short (an unknown plugin: the server asks
    // the client to switch to caching_sha2_password, and an empty reply logs in).
    let full = handshake_response("root");
    for cut in 0..full.len() {
        let mut t = tcp(&s);
        greeting(&mut t);
        send(&mut t, 1, &full[..cut]);
        let (seq, p) = packet(&mut t);
        if cut <= USER_END {
            let e = parse_err(seq, &p).unwrap_or_else(|| panic!("cut {cut}: {p:?}"));
            assert_eq!(
                (e.seq, e.code, e.state.as_str(), e.message.as_str()),
                (2, 1043, "08S01", "Bad handshake"),
                "cut {cut}"
            );
            expect_closed(&mut t);
            continue;
        }
        if cut == USER_END + 1 || cut == full.len() - 1 {
            assert_eq!((seq, p[0]), (2, 0x00), "cut {cut}: {p:?}");
        } else {
            assert_eq!(
                (seq, p[0]),
                (2, 0xFE),
                "cut {cut}: AuthSwitchRequest: {p:?}"
            );
            assert!(
                p.starts_with(b"\xFEcaching_sha2_password\0"),
                "cut {cut}: {p:?}"
            );
            send(&mut t, 3, &[]);
            let (seq, p) = packet(&mut t);
            assert_eq!((seq, p[0]), (4, 0x00), "cut {cut}: {p:?}");
        }
        select_one(&mut t);
    }
    // The raw client is still in sync after all of it.
    select_one(&mut t);
    assert_serves(&mut s, &mut other);
}

/// A xorshift generator; the seed comes from BAD_INPUT_SEED or the clock and is printed.
struct Rng(u64);

impl Rng {
    fn new(what: &str) -> Rng {
        let seed = std::env::var("BAD_INPUT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        println!("{what}: BAD_INPUT_SEED={seed}");
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Sends `bytes`, closes the sending side, and reads until the server closes. Returns the
/// packets received; panics if the stream is not whole packets or the server never closes.
fn feed_and_drain(mut t: TcpStream, bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    // The server may close before reading everything (a fatal error): ignore write errors.
    let _ = t.write_all(bytes);
    let _ = t.shutdown(Shutdown::Write);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut out = Vec::new();
    while let Some(p) = read_packet(&mut t) {
        out.push(p);
        assert!(Instant::now() < deadline, "the server never closed");
    }
    out
}

/// Error codes random input may earn, by where it arrives.
const HANDSHAKE_ERRORS: &[u16] = &[1043, 1045, 1153, 1156, 1251, 1835];

#[track_caller]
fn check_errors(replies: &[(u8, Vec<u8>)], allowed: &[u16], codes: &mut Vec<u16>) {
    for (seq, p) in replies {
        if let Some(e) = parse_err(*seq, p) {
            assert!(allowed.contains(&e.code), "unexpected error {e:?}");
            codes.push(e.code);
        }
    }
}

#[test]
fn random_bytes_at_every_stage() {
    let mut s = start_with(false, &[]);
    let mut other = connect(&s);
    let mut rng = Rng::new("random streams");
    let mut codes = Vec::new();
    for round in 0..60 {
        // Before the greeting is read.
        let len = rng.below(300) as usize;
        let r = feed_and_drain(tcp(&s), &rng.bytes(len));
        assert!(r[0].1[0] == 10, "the greeting comes first");
        check_errors(&r[1..], HANDSHAKE_ERRORS, &mut codes);

        // After the greeting: raw bytes, then a well-framed packet of random bytes.
        let mut t = tcp(&s);
        greeting(&mut t);
        let len = rng.below(300) as usize;
        check_errors(
            &feed_and_drain(t, &rng.bytes(len)),
            HANDSHAKE_ERRORS,
            &mut codes,
        );
        let mut t = tcp(&s);
        greeting(&mut t);
        let len = rng.below(120) as usize;
        let mut p = rng.bytes(len);
        if round % 2 == 0 && p.len() >= 4 {
            // Keep the 4.1 flag so the parser gets past the first field.
            p[1] |= (CLIENT_PROTOCOL_41 >> 8) as u8;
        }
        let r = feed_and_drain(t, &frame(1, &p));
        check_errors(&r, HANDSHAKE_ERRORS, &mut codes);

        // After login: raw bytes whose first header has a wrong sequence id (so they are
        // never a command): 1156 once a whole header is in.
        let len = rng.below(300) as usize;
        let mut b = rng.bytes(len);
        if let Some(seq) = b.get_mut(3) {
            *seq |= 1;
        }
        let r = feed_and_drain(login(&s), &b);
        check_errors(&r, &[1156], &mut codes);
        assert_eq!(r.len(), usize::from(len >= 4), "{r:?}");

        // After login: well-framed commands with random bodies, including COM_STMT_EXECUTE
        // for a statement that exists. COM_PROCESS_KILL is left out (it could end `other`),
        // and COM_SHUTDOWN (it stops the server: clients.rs tests it).
        let mut t = login(&s);
        send(&mut t, 0, b"\x16SELECT ?, CONCAT(?, 'x'), ? IS NULL");
        let (_, ok) = packet(&mut t);
        assert_eq!(ok[0], 0x00, "COM_STMT_PREPARE: {ok:?}");
        let cols = u16::from_le_bytes([ok[5], ok[6]]);
        let params = u16::from_le_bytes([ok[7], ok[8]]);
        assert_eq!((cols, params), (3, 3));
        for _ in 0..cols + params {
            packet(&mut t);
        }
        let mut stream = Vec::new();
        for _ in 0..20 {
            let cmd = match rng.below(4) {
                0 => COM_STMT_EXECUTE,
                1 => COM_QUERY,
                _ => loop {
                    let c = rng.below(0x22) as u8;
                    if c != COM_PROCESS_KILL && c != COM_SHUTDOWN {
                        break c;
                    }
                },
            };
            let len = rng.below(40) as usize;
            let mut p = vec![cmd];
            if cmd == COM_STMT_EXECUTE {
                p.extend_from_slice(&1u32.to_le_bytes());
            }
            p.extend_from_slice(&rng.bytes(len));
            stream.extend_from_slice(&frame(0, &p));
        }
        let r = feed_and_drain(t, &stream);
        for (seq, p) in &r {
            if let Some(e) = parse_err(*seq, p) {
                assert!(e.code != 1105, "an internal error: {e:?}");
                codes.push(e.code);
            }
        }
    }
    codes.sort_unstable();
    let mut tally: Vec<(u16, usize)> = Vec::new();
    for c in codes {
        match tally.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => tally.push((c, 1)),
        }
    }
    println!("errors answered to random input (code, count): {tally:?}");
    assert_serves(&mut s, &mut other);
}

/// VmRSS of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Opens and drops `n` connections on `threads` threads: half closed during the handshake
/// (before or after reading the greeting, or after half a response), half after logging in
/// (some after a query).
fn churn(s: &Server, n: usize, threads: usize) {
    std::thread::scope(|scope| {
        for th in 0..threads {
            scope.spawn(move || {
                for i in (th..n).step_by(threads) {
                    match i % 8 {
                        0 => drop(tcp(s)),
                        2 => {
                            let mut t = tcp(s);
                            greeting(&mut t);
                        }
                        4 => {
                            let mut t = tcp(s);
                            greeting(&mut t);
                            let r = handshake_response("root");
                            t.write_all(&frame(1, &r)[..20]).unwrap();
                        }
                        6 => {
                            let mut t = tcp(s);
                            greeting(&mut t);
                            send(&mut t, 1, &handshake_response("nobody"));
                            let (_, p) = packet(&mut t);
                            assert_eq!(parse_err(2, &p).map(|e| e.code), Some(1045));
                        }
                        3 => {
                            let mut t = login(s);
                            ping(&mut t);
                        }
                        7 => {
                            let mut t = login(s);
                            send(&mut t, 0, b"\x16SELECT ?");
                            packet(&mut t);
                        }
                        _ => drop(login(s)),
                    }
                }
            });
        }
    });
}

/// Waits until Threads_connected is 1 (only `c`); returns how long that took.
fn settle(c: &mut mysql::Conn) -> Duration {
    let start = Instant::now();
    loop {
        let n = global_status(c, "Threads_connected");
        if n == 1 {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "Threads_connected is still {n}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ten_thousand_connections_opened_and_dropped() {
    const N: usize = 10_000;
    const THREADS: usize = 4;
    /// How far RSS may stay above the warmed-up baseline.
    const BOUND_KIB: u64 = 16 << 10;
    let mut s = start_with(false, &["--max-connections=1000"]);
    let pid = s.pid();
    let mut c = connect(&s);
    // Warm up (thread stacks, allocator arenas, caches), then measure the baseline.
    churn(&s, 1000, THREADS);
    settle(&mut c);
    std::thread::sleep(Duration::from_millis(500));
    let baseline = rss_kib(pid);
    let conns_before = global_status(&mut c, "Connections");
    let start = Instant::now();
    churn(&s, N, THREADS);
    let took = start.elapsed();
    let settled = settle(&mut c);
    let conns = global_status(&mut c, "Connections") - conns_before;
    assert!(conns >= N as u64, "Connections grew by {conns}");
    // Connection threads free their memory as they end: give them a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut after = rss_kib(pid);
    while after > baseline + BOUND_KIB && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        after = rss_kib(pid);
    }
    println!(
        "{N} connections in {took:?} (Threads_connected back to 1 {settled:?} later); \
         RSS baseline {baseline} KiB, after {after} KiB (bound +{BOUND_KIB} KiB)"
    );
    assert!(
        after <= baseline + BOUND_KIB,
        "RSS {after} KiB is more than {BOUND_KIB} KiB above the baseline {baseline} KiB"
    );
    assert_serves(&mut s, &mut c);
}

/// The status flags of an OK terminator (0xFE, no affected rows or insert id).
fn ok_status(p: &[u8]) -> u16 {
    assert_eq!(&p[..3], &[0xFE, 0, 0], "an OK terminator: {p:?}");
    u16::from_le_bytes([p[3], p[4]])
}

/// COM_STMT_EXECUTE of statement `id` (no parameters) with cursor `flags`.
fn execute(t: &mut TcpStream, id: u32, flags: u8) {
    let mut p = vec![COM_STMT_EXECUTE];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(flags);
    p.extend_from_slice(&1u32.to_le_bytes());
    send(t, 0, &p);
}

/// A binary row of (INT, VARCHAR) as (id, text).
fn binary_row(p: &[u8]) -> (i32, String) {
    assert_eq!(p[0], 0x00, "a binary row: {p:?}");
    // Header, then a NULL bitmap of (2 + 2 + 7) / 8 = 1 byte.
    let id = i32::from_le_bytes([p[2], p[3], p[4], p[5]]);
    let len = usize::from(p[6]);
    (id, String::from_utf8_lossy(&p[7..7 + len]).into_owned())
}

/// Server-side cursors (conn.rs N4): an execution with CURSOR_TYPE_READ_ONLY answers the
/// columns with CURSOR_EXISTS and no rows; COM_STMT_FETCH hands them out in batches of the
/// size asked, in order, LAST_ROW_SENT with the last; the cursor is then closed (1421), and
/// executing again, or COM_STMT_RESET, closes an open one. Past tmp_table_size the rows wait
/// in tmpdir. An execution without the flag sends its rows at once.
#[test]
fn cursors_fetch_rows_in_batches() {
    let s = start_with(false, &["--tmp-table-size=1024"]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    let values: Vec<String> = (1..=250).map(|i| format!("({i}, 'row {i}')")).collect();
    c.query_drop(format!("INSERT INTO d.t VALUES {}", values.join(",")))
        .unwrap();
    let mut t = login(&s);
    let mut prepare = vec![COM_STMT_PREPARE];
    prepare.extend_from_slice(b"SELECT id, v FROM d.t WHERE id > 0 ORDER BY id");
    send(&mut t, 0, &prepare);
    let (_, ok) = packet(&mut t);
    assert_eq!(ok[0], 0x00, "prepare OK: {ok:?}");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    // Two column definitions, no EOF (CLIENT_DEPRECATE_EOF).
    for _ in 0..2 {
        packet(&mut t);
    }
    let open = |t: &mut TcpStream| {
        execute(t, id, CURSOR_TYPE_READ_ONLY);
        assert_eq!(packet(t).1, vec![2], "column count");
        packet(t);
        packet(t);
        let st = ok_status(&packet(t).1);
        assert!(st & SERVER_STATUS_CURSOR_EXISTS != 0, "{st:#x}");
    };
    open(&mut t);
    let mut got = Vec::new();
    let mut fetches = 0;
    loop {
        let mut f = vec![COM_STMT_FETCH];
        f.extend_from_slice(&id.to_le_bytes());
        f.extend_from_slice(&100u32.to_le_bytes());
        send(&mut t, 0, &f);
        fetches += 1;
        let mut batch = 0;
        let st = loop {
            let (_, p) = packet(&mut t);
            if p[0] == 0xFE {
                break ok_status(&p);
            }
            got.push(binary_row(&p));
            batch += 1;
        };
        assert!(st & SERVER_STATUS_CURSOR_EXISTS != 0, "{st:#x}");
        if st & SERVER_STATUS_LAST_ROW_SENT != 0 {
            assert_eq!(batch, 50);
            break;
        }
        assert_eq!(batch, 100);
    }
    assert_eq!(fetches, 3);
    let want: Vec<(i32, String)> = (1..=250).map(|i| (i, format!("row {i}"))).collect();
    assert_eq!(got, want);
    let mut f = vec![COM_STMT_FETCH];
    f.extend_from_slice(&id.to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes());
    let no_cursor = |t: &mut TcpStream| {
        send(t, 0, &f);
        let message = format!("The statement ({id}) has no open cursor.");
        expect_err(t, 1, 1421, "HY000", &message);
    };
    no_cursor(&mut t);
    // COM_STMT_RESET closes an open cursor.
    open(&mut t);
    let mut r = vec![COM_STMT_RESET];
    r.extend_from_slice(&id.to_le_bytes());
    send(&mut t, 0, &r);
    assert_eq!(packet(&mut t).1[0], 0x00);
    no_cursor(&mut t);
    // Without the flag, the rows come at once.
    execute(&mut t, id, CURSOR_TYPE_NO_CURSOR);
    assert_eq!(packet(&mut t).1, vec![2]);
    packet(&mut t);
    packet(&mut t);
    let mut n = 0;
    loop {
        let (_, p) = packet(&mut t);
        if p[0] == 0xFE {
            assert_eq!(ok_status(&p) & SERVER_STATUS_CURSOR_EXISTS, 0);
            break;
        }
        n += 1;
    }
    assert_eq!(n, 250);
    ping(&mut t);
    assert_eq!(s.panics(), Vec::<String>::new());
}
