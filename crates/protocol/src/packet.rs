//! Framing and the primitive encodings inside payloads.
//!
//! Owns: the 4-byte packet header (3-byte little-endian length, 1-byte sequence id), joining
//! and splitting logical payloads at 0xFFFFFF bytes, sequence-id checking, the
//! `max_allowed_packet` limit on received payloads, and the field encodings used inside
//! payloads (little-endian integers, length-encoded integers and strings, NUL-terminated
//! strings) through the [`Reader`] cursor and the `put_*` writers.
//!
//! Invariants:
//! - [`PacketReader`] never buffers a logical payload larger than `max_allowed_packet`: the
//!   limit is checked from each header before its body is awaited.
//! - [`write_packets`] emits an empty trailing packet when a payload's length is a multiple of
//!   0xFFFFFF (including zero-length payloads, which are one empty packet).
//! - [`Reader`] never reads past its slice; every read either succeeds or returns
//!   [`ProtocolError::Truncated`] / [`ProtocolError::Malformed`].

use crate::{ProtocolError, Result};

/// Largest payload one physical packet carries; a packet of exactly this length is continued.
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// Reassembles logical payloads from bytes received from one client.
///
/// Sequence ids: the reader expects the first packet of the next payload to carry
/// [`PacketReader::expected_seq`]. After returning a payload it expects 0 again, which is what
/// a client sends at the start of every command. During the handshake (or any exchange where
/// the server has written packets in between) call [`PacketReader::set_expected_seq`] with the
/// sequence id following the server's last packet.
///
/// After an error the reader stays in error (the same error is returned again): the connection
/// should be closed once the ERR packet is sent, with sequence id
/// [`PacketReader::expected_seq`] (as mysqld: after a wrong sequence id, the id it expected;
/// after a packet above `max_allowed_packet`, the id following that packet's).
#[derive(Debug)]
pub struct PacketReader {
    buf: Vec<u8>,
    pos: usize,
    partial: Vec<u8>,
    expected_seq: u8,
    max_allowed_packet: usize,
}

impl PacketReader {
    /// A reader refusing logical payloads longer than `max_allowed_packet` bytes.
    pub fn new(max_allowed_packet: usize) -> Self {
        PacketReader {
            buf: Vec::new(),
            pos: 0,
            partial: Vec::new(),
            expected_seq: 0,
            max_allowed_packet,
        }
    }

    /// Changes the limit (e.g. after `SET GLOBAL max_allowed_packet` for new commands).
    pub fn set_max_allowed_packet(&mut self, max: usize) {
        self.max_allowed_packet = max;
    }

    /// The sequence id the next packet must carry.
    pub fn expected_seq(&self) -> u8 {
        self.expected_seq
    }

    /// Sets the sequence id the next packet must carry.
    pub fn set_expected_seq(&mut self, seq: u8) {
        self.expected_seq = seq;
    }

    /// Appends received bytes. Call [`PacketReader::next_payload`] until it returns `None`
    /// after each feed so buffered data stays bounded.
    pub fn feed(&mut self, data: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Removes and returns the bytes fed after the last complete payload (the start of a
    /// TLS handshake that follows an SSLRequest). Bytes of an unfinished multi-packet
    /// payload are dropped with it.
    pub fn take_unread(&mut self) -> Vec<u8> {
        self.partial.clear();
        let rest = self.buf.split_off(self.pos);
        self.buf.clear();
        self.pos = 0;
        rest
    }

    /// Bytes fed but not yet returned in a payload.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos + self.partial.len()
    }

    /// The next complete logical payload, with the sequence id of its last physical packet
    /// (the server's reply starts at that id + 1), or `None` if more bytes are needed.
    pub fn next_payload(&mut self) -> Result<Option<(u8, Vec<u8>)>> {
        loop {
            let start = self.pos;
            if self.buf.len() - start < 4 {
                self.compact();
                return Ok(None);
            }
            let h = &self.buf[start..start + 4];
            let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            let seq = h[3];
            if seq != self.expected_seq {
                return Err(ProtocolError::BadSequence {
                    expected: self.expected_seq,
                    got: seq,
                });
            }
            let total = self.partial.len() + len;
            if total > self.max_allowed_packet {
                self.expected_seq = seq.wrapping_add(1);
                return Err(ProtocolError::PacketTooLarge {
                    len: total,
                    max: self.max_allowed_packet,
                });
            }
            if self.buf.len() - start - 4 < len {
                self.compact();
                return Ok(None);
            }
            let body = start + 4..start + 4 + len;
            self.pos = body.end;
            self.expected_seq = seq.wrapping_add(1);
            if len == MAX_CHUNK {
                self.partial.extend_from_slice(&self.buf[body]);
                continue;
            }
            let payload = if self.partial.is_empty() {
                self.buf[body].to_vec()
            } else {
                let mut p = std::mem::take(&mut self.partial);
                p.extend_from_slice(&self.buf[body]);
                p
            };
            self.expected_seq = 0;
            return Ok(Some((seq, payload)));
        }
    }

    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }
}

/// The 4-byte header of a packet of `len` (at most [`MAX_CHUNK`]) bytes.
fn header(len: usize, seq: u8) -> [u8; 4] {
    debug_assert!(len <= MAX_CHUNK);
    let l = (len as u32).to_le_bytes();
    [l[0], l[1], l[2], seq]
}

/// Frames `payload` into `out` as one or more packets, starting at sequence id `*seq` and
/// leaving `*seq` at the id the next packet must use.
pub fn write_packets(out: &mut Vec<u8>, seq: &mut u8, payload: &[u8]) {
    out.reserve(payload.len() + 4 * (payload.len() / MAX_CHUNK + 1));
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_CHUNK);
        out.extend_from_slice(&header(n, *seq));
        *seq = seq.wrapping_add(1);
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        if n < MAX_CHUNK {
            return;
        }
    }
}

/// Frames a payload that `encode` appends to `out`, without copying it when it fits in one
/// packet (the usual case for rows). Same sequence-id contract as [`write_packets`].
pub fn write_packet_with(out: &mut Vec<u8>, seq: &mut u8, encode: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    encode(out);
    let len = out.len() - start - 4;
    if len < MAX_CHUNK {
        out[start..start + 4].copy_from_slice(&header(len, *seq));
        *seq = seq.wrapping_add(1);
    } else {
        let payload = out.split_off(start + 4);
        out.truncate(start);
        write_packets(out, seq, &payload);
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    let b = v.to_le_bytes();
    if v < 0xFB {
        out.push(b[0]);
    } else if v <= 0xFFFF {
        out.extend_from_slice(&[0xFC, b[0], b[1]]);
    } else if v <= 0xFF_FFFF {
        out.extend_from_slice(&[0xFD, b[0], b[1], b[2]]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&b);
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends `s` up to (excluding) its first NUL byte, then a NUL terminator.
pub fn put_nul_terminated(out: &mut Vec<u8>, s: &[u8]) {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    out.extend_from_slice(&s[..end]);
    out.push(0);
}

/// A bounds-checked cursor over one payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(ProtocolError::Truncated {
                needed: n,
                available: self.remaining(),
            });
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A 3-byte little-endian integer.
    pub fn u24(&mut self) -> Result<u32> {
        let [a, b, c] = self.array()?;
        Ok(u32::from_le_bytes([a, b, c, 0]))
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A length-encoded integer. The NULL marker 0xFB and the invalid prefix 0xFF are errors.
    pub fn lenenc_int(&mut self) -> Result<u64> {
        match self.u8()? {
            b @ 0..=0xFA => Ok(u64::from(b)),
            0xFC => Ok(u64::from(self.u16()?)),
            0xFD => Ok(u64::from(self.u24()?)),
            0xFE => self.u64(),
            _ => Err(ProtocolError::Malformed(
                "bad length-encoded integer prefix",
            )),
        }
    }

    /// A length-encoded string.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.lenenc_int()?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len)
    }

    /// Bytes up to a NUL terminator, which is consumed; an error if there is none.
    pub fn nul_terminated(&mut self) -> Result<&'a [u8]> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(end) => {
                self.pos += end + 1;
                Ok(&rest[..end])
            }
            None => Err(ProtocolError::Malformed("missing NUL terminator")),
        }
    }

    /// Bytes up to a NUL terminator (consumed) or to the end of the payload.
    pub fn nul_terminated_or_rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(end) => {
                self.pos += end + 1;
                &rest[..end]
            }
            None => self.rest(),
        }
    }

    /// Everything not yet read.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.data[self.pos..];
        self.pos = self.data.len();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    fn frame(p: &[u8], seq: u8) -> (Vec<u8>, u8) {
        let mut out = Vec::new();
        let mut s = seq;
        write_packets(&mut out, &mut s, p);
        (out, s)
    }

    #[test]
    fn framing_round_trips() {
        for len in [
            0,
            1,
            250,
            MAX_CHUNK - 1,
            MAX_CHUNK,
            MAX_CHUNK + 1,
            2 * MAX_CHUNK,
        ] {
            let p = payload(len);
            let (bytes, next) = frame(&p, 0);
            let packets = len / MAX_CHUNK + 1;
            assert_eq!(bytes.len(), len + 4 * packets, "len {len}");
            assert_eq!(usize::from(next), packets);
            // Trailer: the last packet is shorter than MAX_CHUNK (empty when len % MAX == 0).
            let last_len = len % MAX_CHUNK;
            let tail = &bytes[bytes.len() - last_len - 4..bytes.len() - last_len];
            assert_eq!(
                tail,
                &[
                    last_len as u8,
                    (last_len >> 8) as u8,
                    (last_len >> 16) as u8,
                    (packets - 1) as u8
                ]
            );
            let mut r = PacketReader::new(64 << 20);
            // Feed in uneven pieces.
            for chunk in bytes.chunks(1 << 20 | 7) {
                r.feed(chunk);
            }
            let (seq, got) = r.next_payload().unwrap().unwrap();
            assert_eq!(usize::from(seq), packets - 1);
            assert!(got == p, "len {len}");
            assert_eq!(r.next_payload().unwrap(), None);
            assert_eq!(r.buffered(), 0);

            let mut out = Vec::new();
            let mut s = 0;
            write_packet_with(&mut out, &mut s, |o| o.extend_from_slice(&p));
            assert!(out == bytes, "write_packet_with len {len}");
            assert_eq!(s, next);
        }
    }

    #[test]
    fn byte_by_byte_and_several_payloads() {
        let mut bytes = Vec::new();
        let mut s = 0;
        write_packets(&mut bytes, &mut s, b"\x03select 1");
        let mut s = 0;
        write_packets(&mut bytes, &mut s, b"\x0e");
        let mut r = PacketReader::new(1024);
        let mut got = Vec::new();
        for b in &bytes {
            r.feed(std::slice::from_ref(b));
            while let Some(p) = r.next_payload().unwrap() {
                got.push(p);
            }
        }
        assert_eq!(got, vec![(0, b"\x03select 1".to_vec()), (0, vec![0x0e])]);
    }

    #[test]
    fn sequence_ids() {
        let mut r = PacketReader::new(1024);
        r.feed(&[1, 0, 0, 5, 0x0e]);
        let e = r.next_payload().unwrap_err();
        assert_eq!(
            e,
            ProtocolError::BadSequence {
                expected: 0,
                got: 5
            }
        );
        assert_eq!(e.mysql_error(), (1156, "08S01"));
        assert_eq!(e.mysql_message(), "Got packets out of order");
        // The error packet carries the id the server expected.
        assert_eq!(r.expected_seq(), 0);
        let mut r = PacketReader::new(1024);
        r.set_expected_seq(3);
        let (bytes, _) = frame(b"x", 3);
        r.feed(&bytes);
        assert_eq!(r.next_payload().unwrap(), Some((3, b"x".to_vec())));
        assert_eq!(r.expected_seq(), 0);
        // Continuation packets must be consecutive, wrapping at 255.
        let mut r = PacketReader::new(64 << 20);
        r.set_expected_seq(255);
        let (bytes, next) = frame(&payload(MAX_CHUNK + 3), 255);
        assert_eq!(next, 1);
        r.feed(&bytes);
        assert_eq!(r.next_payload().unwrap().map(|p| p.0), Some(0));
        let mut r = PacketReader::new(64 << 20);
        let (mut bytes, _) = frame(&payload(MAX_CHUNK + 3), 0);
        bytes[MAX_CHUNK + 4 + 3] = 7;
        r.feed(&bytes);
        assert!(matches!(
            r.next_payload(),
            Err(ProtocolError::BadSequence {
                expected: 1,
                got: 7
            })
        ));
    }

    #[test]
    fn max_allowed_packet() {
        let mut r = PacketReader::new(10);
        r.feed(&frame(&payload(10), 0).0);
        assert_eq!(r.next_payload().unwrap().map(|p| p.1.len()), Some(10));
        // Refused from the header alone, before the body arrives.
        r.feed(&[11, 0, 0, 0]);
        let e = r.next_payload().unwrap_err();
        assert_eq!(e, ProtocolError::PacketTooLarge { len: 11, max: 10 });
        assert!(e.is_fatal());
        assert_eq!(e.mysql_error(), (1153, "08S01"));
        assert_eq!(
            e.mysql_message(),
            "Got a packet bigger than 'max_allowed_packet' bytes"
        );
        // The error packet follows the refused packet's sequence id.
        assert_eq!(r.expected_seq(), 1);
        // Joined continuations count as one payload.
        let mut r = PacketReader::new(MAX_CHUNK + 5);
        r.feed(&frame(&payload(MAX_CHUNK + 6), 0).0);
        assert_eq!(
            r.next_payload(),
            Err(ProtocolError::PacketTooLarge {
                len: MAX_CHUNK + 6,
                max: MAX_CHUNK + 5
            })
        );
    }

    #[test]
    fn lenenc_round_trips() {
        for v in [
            0u64,
            1,
            250,
            251,
            252,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.lenenc_int().unwrap(), v);
            assert!(r.is_empty());
            for cut in 0..out.len() {
                assert!(Reader::new(&out[..cut]).lenenc_int().is_err());
            }
        }
        assert!(Reader::new(&[0xFB]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFF]).lenenc_int().is_err());
        let mut out = Vec::new();
        put_lenenc_bytes(&mut out, b"hello");
        put_nul_terminated(&mut out, b"ab\0cd");
        let mut r = Reader::new(&out);
        assert_eq!(r.lenenc_bytes().unwrap(), b"hello");
        assert_eq!(r.nul_terminated().unwrap(), b"ab");
        assert!(r.is_empty());
        // A huge announced length is an error, not an allocation.
        let mut r = Reader::new(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert!(matches!(
            r.lenenc_bytes(),
            Err(ProtocolError::Truncated { .. })
        ));
    }
}
