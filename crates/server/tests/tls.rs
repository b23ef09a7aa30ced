//! TLS (ssl_cert/ssl_key): real clients negotiate TLS over TCP and the Unix socket, verify
//! the server's certificate, and move large packets through it; a client that starts TLS
//! and then sends garbage is dropped without harming others; a server without a
//! certificate refuses an SSLRequest; half a configuration stops startup.
//!
//! The certificate under tests/tls/ is self-signed for localhost and 127.0.0.1, valid for a
//! hundred years (openssl req -x509 -newkey rsa:2048 -nodes -days 36500
//! -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1).

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{connect, start_with, Server};
use mysql::prelude::Queryable;

fn cert_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tls")
}

fn start_tls() -> Server {
    let dir = cert_dir();
    let cert = format!("--ssl-cert={}", dir.join("cert.pem").display());
    let key = format!("--ssl-key={}", dir.join("key.pem").display());
    start_with(true, &[&cert, &key])
}

/// True if the mariadb CLI runs (required under CI, which installs it).
fn have_cli() -> bool {
    let ok = Command::new("mariadb")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the mariadb CLI is missing; .ci/run must install mariadb-client"
        );
        eprintln!("NOTICE: skipping: the mariadb CLI is not installed");
    }
    ok
}

/// Runs the mariadb CLI in batch mode with `args`; returns its stdout (it must exit 0).
fn cli(args: &[String]) -> String {
    let out = Command::new("mariadb")
        .args(["-uroot", "--batch", "--skip-column-names"])
        .args(args)
        .output()
        .expect("mariadb runs");
    assert!(
        out.status.success(),
        "mariadb {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn mariadb_cli_over_tls() {
    if !have_cli() {
        return;
    }
    let s = start_tls();
    let ca = format!("--ssl-ca={}", cert_dir().join("cert.pem").display());
    let tcp = [
        "--protocol=TCP".to_string(),
        "-hlocalhost".into(),
        format!("-P{}", s.port),
    ];
    let socket = [format!(
        "--socket={}",
        s.socket.as_ref().expect("a socket").display()
    )];
    for via in [&tcp[..], &socket[..]] {
        // The client checks the certificate against our CA and the host name.
        let mut args: Vec<String> = via.to_vec();
        args.extend([
            "--ssl".into(),
            ca.clone(),
            "--ssl-verify-server-cert".into(),
            "-e".into(),
            "SHOW SESSION STATUS LIKE 'Ssl_%'; CREATE DATABASE IF NOT EXISTS t; \
             CREATE TABLE IF NOT EXISTS t.a (id INT PRIMARY KEY, v MEDIUMTEXT); \
             BEGIN; REPLACE INTO t.a VALUES (1, REPEAT('x', 100000)); COMMIT; \
             SELECT LENGTH(v) FROM t.a"
                .into(),
        ]);
        let out = cli(&args);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        let cipher = lines[0].strip_prefix("Ssl_cipher\t").expect("Ssl_cipher");
        assert!(
            cipher.starts_with("TLS_") || cipher.starts_with("ECDHE-"),
            "{cipher}"
        );
        assert!(
            matches!(lines[1], "Ssl_version\tTLSv1.3" | "Ssl_version\tTLSv1.2"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "100000");
    }
    // Without --ssl the same server serves plain connections.
    let mut args = tcp.to_vec();
    args.extend([
        "--skip-ssl".into(),
        "-e".into(),
        "SHOW SESSION STATUS LIKE 'Ssl_version'".into(),
    ]);
    assert_eq!(cli(&args), "Ssl_version\t\n");
    let vars = cli(&[
        format!("-P{}", s.port),
        "-h127.0.0.1".into(),
        "-e".into(),
        "SELECT @@have_ssl, @@have_openssl, @@ssl_cert LIKE '%cert.pem'".into(),
    ]);
    assert_eq!(vars, "YES\tYES\t1\n");
    assert_eq!(s.panics(), Vec::<String>::new());
}

#[test]
fn pymysql_large_packets_over_tls() {
    let py = "/usr/bin/python3";
    let probe = Command::new(py)
        .args(["-c", "import pymysql"])
        .status()
        .is_ok_and(|s| s.success());
    if !probe {
        assert!(std::env::var_os("CI").is_none(), "python3-pymysql missing");
        eprintln!("NOTICE: skipping: python3-pymysql is not installed");
        return;
    }
    let s = start_tls();
    // A 20 MiB parameter (two 16 MiB packets each way) and a 20 MiB result through TLS.
    let script = r#"
import hashlib, sys, ssl, pymysql
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="root", ssl=ctx)
cur = c.cursor()
cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
assert cur.fetchone()[1].startswith("TLSv1."), "no TLS"
big = "ab" * (10 << 20) + "c"
cur.execute("SELECT LENGTH(%s), MD5(%s)", (big, big))
assert cur.fetchone() == ((20 << 20) + 1, hashlib.md5(big.encode()).hexdigest()), "wrong"
cur.execute("SELECT %s", (big,))
assert cur.fetchone()[0] == big, "wrong result"
print("tls: OK")
"#;
    let out = Command::new(py)
        .args([
            "-c",
            script,
            &s.port.to_string(),
            cert_dir().join("cert.pem").to_str().expect("utf-8 path"),
        ])
        .output()
        .expect("python runs");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("tls: OK"),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s.panics(), Vec::<String>::new());
}

/// Reads the greeting and sends an SSLRequest (sequence id 1).
fn ssl_request(port: u16) -> std::net::TcpStream {
    let mut t = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = [0u8; 4];
    t.read_exact(&mut head).unwrap();
    let len = usize::from(head[0]) | usize::from(head[1]) << 8 | usize::from(head[2]) << 16;
    let mut greeting = vec![0u8; len];
    t.read_exact(&mut greeting).unwrap();
    // CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION, 16M, utf8mb4, filler.
    let caps: u32 = 0x200 | 0x800 | 0x8000;
    let mut p = vec![32, 0, 0, 1];
    p.extend(caps.to_le_bytes());
    p.extend((16u32 << 20).to_le_bytes());
    p.push(255);
    p.extend([0u8; 23]);
    t.write_all(&p).unwrap();
    t
}

/// Reads until the server closes the connection; returns what it sent.
fn read_to_close(t: &mut std::net::TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match t.read(&mut buf) {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[test]
fn garbage_after_ssl_request() {
    let s = start_tls();
    let mut c = connect(&s);
    for garbage in [
        &b"not a TLS record at all"[..],
        &[0x16, 3, 1, 0xff, 0xff, 1, 2][..],
    ] {
        let mut t = ssl_request(s.port);
        t.write_all(garbage).unwrap();
        t.shutdown(std::net::Shutdown::Write).unwrap();
        read_to_close(&mut t);
    }
    // A client that sends its SSLRequest and then nothing, while others keep working.
    let idle = ssl_request(s.port);
    let n: u32 = c.query_first("SELECT 40 + 2").unwrap().unwrap();
    assert_eq!(n, 42);
    drop(idle.shutdown(std::net::Shutdown::Both));
    assert_eq!(s.panics(), Vec::<String>::new());
}

#[test]
fn no_certificate_refuses_ssl_request() {
    let s = start_with(false, &[]);
    let mut t = ssl_request(s.port);
    let got = read_to_close(&mut t);
    // An ERR packet (0xff) with error 1043 (ER_HANDSHAKE_ERROR), sequence id 2.
    assert!(got.len() > 7, "{got:?}");
    assert_eq!((got[3], got[4]), (2, 0xff));
    assert_eq!(u16::from_le_bytes([got[5], got[6]]), 1043);
    let mut c = connect(&s);
    let have: String = c.query_first("SELECT @@have_ssl").unwrap().unwrap();
    assert_eq!(have, "DISABLED");
}

/// Starts the binary with `tls` options on an empty data directory; it must fail to start.
/// Returns what it wrote to stderr.
fn failed_start(tls: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let datadir = format!("--datadir={}", dir.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args(["--no-defaults", &datadir, "--port=0", "--socket="])
        .args(tls)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started with {tls:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn half_a_configuration_stops_startup() {
    let cert = format!("--ssl-cert={}", cert_dir().join("cert.pem").display());
    let err = failed_start(&[&cert]);
    assert!(err.contains("ssl_cert and ssl_key"), "{err}");
    // A key file that is not a key.
    let key = format!("--ssl-key={}", cert_dir().join("cert.pem").display());
    let err = failed_start(&[&cert, &key]);
    assert!(err.contains("ssl_key"), "{err}");
}
