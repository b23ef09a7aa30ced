//! Authentication: the mysql_native_password and caching_sha2_password (fast path) hashes,
//! scrambles and checks, and the auth-phase packets (AuthSwitchRequest, AuthMoreData).
//!
//! What the server stores per account: `None` for an account without a password, otherwise
//! `native_hash(pw)` = SHA1(SHA1(pw)) for mysql_native_password and `sha2_hash(pw)` =
//! SHA256(SHA256(pw)) for caching_sha2_password. Neither reveals the password nor what the
//! client sends.
//!
//! Invariants: an account without a password accepts only an empty response (zero bytes, or
//! the single NUL some clients send); an account with one accepts only a response of the exact
//! digest length that verifies. Digest comparisons do not exit early.

use sha1::{Digest, Sha1};
use sha2::Sha256;

/// Payload of AuthMoreData telling a caching_sha2_password client the fast path succeeded
/// (an OK packet follows).
pub const FAST_AUTH_SUCCESS: [u8; 2] = [0x01, 0x03];
/// Payload of AuthMoreData asking a caching_sha2_password client for full authentication
/// (over TLS it then sends the cleartext password, NUL-terminated).
pub const PERFORM_FULL_AUTHENTICATION: [u8; 2] = [0x01, 0x04];

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn xor<const N: usize>(a: &[u8; N], b: &[u8]) -> [u8; N] {
    let mut out = *a;
    for (o, x) in out.iter_mut().zip(b) {
        *o ^= x;
    }
    out
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn is_empty_response(response: &[u8]) -> bool {
    response.is_empty() || response == [0]
}

/// What the server stores for a mysql_native_password account: SHA1(SHA1(password)).
pub fn native_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// Client side: SHA1(pw) XOR SHA1(nonce || SHA1(SHA1(pw))); empty for an empty password.
pub fn native_scramble(password: &[u8], nonce: &[u8; 20]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password]);
    xor(&stage1, &sha1(&[nonce, &sha1(&[&stage1])])).to_vec()
}

/// Verifies a mysql_native_password response: recovers SHA1(pw) as
/// response XOR SHA1(nonce || stored) and checks that its SHA1 equals `stored`.
pub fn native_check(stored: Option<&[u8; 20]>, nonce: &[u8; 20], response: &[u8]) -> bool {
    let Some(stored) = stored else {
        return is_empty_response(response);
    };
    if response.len() != 20 {
        return false;
    }
    let candidate = xor(&sha1(&[nonce, stored]), response);
    ct_eq(&sha1(&[&candidate]), stored)
}

/// What the server stores for a caching_sha2_password account: SHA256(SHA256(password)).
pub fn sha2_hash(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// Client side: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || nonce); empty for an empty password.
pub fn sha2_scramble(password: &[u8], nonce: &[u8; 20]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha256(&[password]);
    xor(&stage1, &sha256(&[&sha256(&[&stage1]), nonce])).to_vec()
}

/// Verifies a caching_sha2_password fast-path response: recovers SHA256(pw) as
/// response XOR SHA256(stored || nonce) and checks that its SHA256 equals `stored`.
pub fn sha2_check(stored: Option<&[u8; 32]>, nonce: &[u8; 20], response: &[u8]) -> bool {
    let Some(stored) = stored else {
        return is_empty_response(response);
    };
    if response.len() != 32 {
        return false;
    }
    let candidate = xor(&sha256(&[stored, nonce]), response);
    ct_eq(&sha256(&[&candidate]), stored)
}

/// Verifies the cleartext password a caching_sha2_password client sends during full
/// authentication (only ever accept this over TLS). A trailing NUL is ignored.
pub fn sha2_check_cleartext(stored: Option<&[u8; 32]>, cleartext: &[u8]) -> bool {
    let pw = cleartext.strip_suffix(&[0]).unwrap_or(cleartext);
    match stored {
        None => pw.is_empty(),
        Some(stored) => ct_eq(&sha2_hash(pw), stored),
    }
}

/// AuthSwitchRequest payload: 0xFE, plugin name, NUL, nonce, NUL.
pub fn auth_switch_request(plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
    let mut out = Vec::with_capacity(plugin.len() + 23);
    out.push(0xFE);
    crate::packet::put_nul_terminated(&mut out, plugin.as_bytes());
    out.extend_from_slice(nonce);
    out.push(0);
    out
}

/// AuthMoreData payload: 0x01 then `data`.
pub fn auth_more_data(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 1);
    out.push(0x01);
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: [u8; 20] = *b"0123456789ABCDEFGHIJ";

    fn sha1_of(data: &[u8]) -> Vec<u8> {
        Sha1::digest(data).to_vec()
    }

    fn sha256_of(data: &[u8]) -> Vec<u8> {
        Sha256::digest(data).to_vec()
    }

    #[test]
    fn sha_vectors() {
        // FIPS 180 test vectors, to pin the digest crates.
        assert_eq!(
            sha1_of(b"abc"),
            [
                0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e, 0x25, 0x71, 0x78, 0x50,
                0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d
            ]
        );
        assert_eq!(&sha256_of(b"abc")[..4], &[0xba, 0x78, 0x16, 0xbf]);
        // MySQL's PASSWORD('password') is '*' + hex(SHA1(SHA1('password'))).
        let h = native_hash(b"password");
        let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    }

    #[test]
    fn native_written_out() {
        let pw = b"secret";
        let stage1 = sha1_of(pw);
        let stage2 = sha1_of(&stage1);
        let mut salted = NONCE.to_vec();
        salted.extend_from_slice(&stage2);
        let mask = sha1_of(&salted);
        let expected: Vec<u8> = stage1.iter().zip(&mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(native_scramble(pw, &NONCE), expected);
        assert_eq!(native_hash(pw).to_vec(), stage2);
        let stored = native_hash(pw);
        assert!(native_check(Some(&stored), &NONCE, &expected));
        let mut wrong = expected.clone();
        wrong[0] ^= 1;
        assert!(!native_check(Some(&stored), &NONCE, &wrong));
        assert!(!native_check(Some(&stored), &NONCE, &expected[..19]));
        assert!(!native_check(Some(&stored), &NONCE, &[]));
        assert!(!native_check(
            Some(&stored),
            b"0123456789ABCDEFGHIK",
            &expected
        ));
        assert!(!native_check(
            Some(&native_hash(b"other")),
            &NONCE,
            &expected
        ));
        // No password: only an empty response.
        assert!(native_check(None, &NONCE, &[]));
        assert!(native_check(None, &NONCE, &[0]));
        assert!(native_scramble(b"", &NONCE).is_empty());
        assert!(!native_check(None, &NONCE, &expected));
    }

    #[test]
    fn sha2_written_out() {
        let pw = b"sbtest-pw";
        let stage1 = sha256_of(pw);
        let stage2 = sha256_of(&stage1);
        let mut salted = stage2.clone();
        salted.extend_from_slice(&NONCE);
        let mask = sha256_of(&salted);
        let expected: Vec<u8> = stage1.iter().zip(&mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(sha2_scramble(pw, &NONCE), expected);
        let stored = sha2_hash(pw);
        assert_eq!(stored.to_vec(), stage2);
        assert!(sha2_check(Some(&stored), &NONCE, &expected));
        let mut wrong = expected.clone();
        wrong[31] ^= 0x80;
        assert!(!sha2_check(Some(&stored), &NONCE, &wrong));
        assert!(!sha2_check(Some(&stored), &NONCE, &expected[..20]));
        assert!(!sha2_check(Some(&stored), &NONCE, &[]));
        assert!(sha2_check(None, &NONCE, &[]));
        assert!(!sha2_check(None, &NONCE, &expected));
        assert!(sha2_check_cleartext(Some(&stored), b"sbtest-pw\0"));
        assert!(sha2_check_cleartext(Some(&stored), b"sbtest-pw"));
        assert!(!sha2_check_cleartext(Some(&stored), b"sbtest-p"));
        assert!(sha2_check_cleartext(None, b"\0"));
    }

    #[test]
    fn auth_packets() {
        let p = auth_switch_request(MYSQL_NATIVE, &NONCE);
        assert_eq!(p[0], 0xFE);
        assert_eq!(&p[1..22], b"mysql_native_password");
        assert_eq!(p[22], 0);
        assert_eq!(&p[23..43], &NONCE);
        assert_eq!(p[43], 0);
        assert_eq!(p.len(), 44);
        assert_eq!(auth_more_data(&FAST_AUTH_SUCCESS[1..]), FAST_AUTH_SUCCESS);
        assert_eq!(auth_more_data(b"key"), b"\x01key");
    }

    const MYSQL_NATIVE: &str = crate::consts::MYSQL_NATIVE_PASSWORD;
}
