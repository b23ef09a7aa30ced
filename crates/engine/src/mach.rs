//! Big-endian readers and writers for on-disk fields (InnoDB: mach0data), and LEB128 varints
//! used by redo records. Every on-disk integer goes through here so widths are explicit.

#[inline]
pub fn read_u8(b: &[u8], off: usize) -> u8 {
    b[off]
}

#[inline]
pub fn read_u16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

#[inline]
pub fn read_u32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

#[inline]
pub fn read_u48(b: &[u8], off: usize) -> u64 {
    let mut x = [0u8; 8];
    x[2..].copy_from_slice(&b[off..off + 6]);
    u64::from_be_bytes(x)
}

#[inline]
pub fn read_u64(b: &[u8], off: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[off..off + 8]);
    u64::from_be_bytes(x)
}

#[inline]
pub fn write_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn write_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn write_u48(b: &mut [u8], off: usize, v: u64) {
    debug_assert!(v < 1 << 48);
    b[off..off + 6].copy_from_slice(&v.to_be_bytes()[2..]);
}

#[inline]
pub fn write_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_be_bytes());
}

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 varint at `*pos`, advancing it. None if truncated or longer than 10 bytes.
pub fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..70).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Cursor over a byte slice for parsing untrusted input (redo, doublewrite): every read is
/// bounds-checked and returns None past the end instead of panicking.
pub struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    pub fn u8(&mut self) -> Option<u8> {
        let v = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    pub fn u16(&mut self) -> Option<u16> {
        let s = self.bytes(2)?;
        Some(u16::from_be_bytes([s[0], s[1]]))
    }
    pub fn u32(&mut self) -> Option<u32> {
        let s = self.bytes(4)?;
        Some(read_u32(s, 0))
    }
    pub fn u64(&mut self) -> Option<u64> {
        let s = self.bytes(8)?;
        Some(read_u64(s, 0))
    }
    pub fn varint(&mut self) -> Option<u64> {
        get_varint(self.buf, &mut self.pos)
    }
    pub fn varint_u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_roundtrip_and_truncation() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut pos = 0;
            assert_eq!(get_varint(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
            let mut pos = 0;
            assert_eq!(get_varint(&out[..out.len() - 1], &mut pos), None);
        }
    }

    #[test]
    fn fixed_widths() {
        let mut b = [0u8; 16];
        write_u48(&mut b, 1, 0x0102_0304_0506);
        assert_eq!(read_u48(&b, 1), 0x0102_0304_0506);
        write_u64(&mut b, 8, u64::MAX - 5);
        assert_eq!(read_u64(&b, 8), u64::MAX - 5);
        let mut r = Reader::new(&b[..3]);
        assert!(r.u32().is_none());
        assert_eq!(r.u16(), Some(0x0001));
    }
}
