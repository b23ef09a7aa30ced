//! String comparison for key columns of character types (InnoDB: cmp_data with the column's
//! charset-collation). Every other column kind compares with memcmp because its stored bytes
//! are memcomparable (docs/format/record.md).

use std::cmp::Ordering;

use general_ci::GENERAL_CI;

mod general_ci;
mod uca;
mod uca900;
mod unicode_520_ci;
mod unicode_ci;

/// A collation, identified by its MySQL collation id.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Collation {
    /// `binary` (63): raw bytes, trailing bytes significant.
    Binary,
    /// `latin1_swedish_ci` (8): case-insensitive, PAD SPACE.
    Latin1SwedishCi,
    /// `latin1_bin` (47): bytes, PAD SPACE.
    Latin1Bin,
    /// `utf8mb4_general_ci` (45): per-character case folding, PAD SPACE.
    Utf8mb4GeneralCi,
    /// `utf8mb4_bin` (46): code points, PAD SPACE.
    Utf8mb4Bin,
    /// `utf8mb4_0900_ai_ci` (255): the Unicode Collation Algorithm's primary weights
    /// (accent- and case-insensitive; uca.rs), NO PAD.
    Utf8mb40900AiCi,
    /// `utf8mb4_0900_bin` (309): code points, NO PAD.
    Utf8mb40900Bin,
    /// `utf8mb4_unicode_ci` (224): UCA 4.0.0's primary weights (uca.rs), PAD SPACE.
    Utf8mb4UnicodeCi,
    /// `utf8mb4_unicode_520_ci` (246): UCA 5.2.0's primary weights (uca.rs), PAD SPACE.
    Utf8mb4Unicode520Ci,
}

impl Collation {
    pub fn id(self) -> u16 {
        match self {
            Collation::Binary => 63,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 47,
            Collation::Utf8mb4GeneralCi => 45,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb40900AiCi => 255,
            Collation::Utf8mb40900Bin => 309,
            Collation::Utf8mb4UnicodeCi => 224,
            Collation::Utf8mb4Unicode520Ci => 246,
        }
    }

    pub fn from_id(id: u16) -> Option<Collation> {
        Some(match id {
            63 => Collation::Binary,
            8 => Collation::Latin1SwedishCi,
            47 => Collation::Latin1Bin,
            45 => Collation::Utf8mb4GeneralCi,
            46 => Collation::Utf8mb4Bin,
            255 => Collation::Utf8mb40900AiCi,
            309 => Collation::Utf8mb40900Bin,
            224 => Collation::Utf8mb4UnicodeCi,
            246 => Collation::Utf8mb4Unicode520Ci,
            _ => return None,
        })
    }

    /// Case-insensitive: ASCII letters weigh as their upper case (and every other ASCII
    /// character as itself, but for those a UCA collation ignores).
    pub fn is_ci(self) -> bool {
        match self {
            Collation::Latin1SwedishCi
            | Collation::Utf8mb4GeneralCi
            | Collation::Utf8mb40900AiCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => true,
            Collation::Binary
            | Collation::Latin1Bin
            | Collation::Utf8mb4Bin
            | Collation::Utf8mb40900Bin => false,
        }
    }

    /// The UCA table of a UCA collation.
    fn uca(self) -> Option<&'static uca::Table> {
        match self {
            Collation::Utf8mb40900AiCi => Some(&uca::UCA900),
            Collation::Utf8mb4UnicodeCi => Some(&uca::UNICODE),
            Collation::Utf8mb4Unicode520Ci => Some(&uca::UNICODE_520),
            _ => None,
        }
    }

    /// Compares two stored values.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        if let Some(t) = self.uca() {
            return t.compare(a, b);
        }
        match self {
            Collation::Binary | Collation::Utf8mb40900Bin => a.cmp(b),
            // UTF-8 byte order is code point order.
            Collation::Latin1Bin | Collation::Utf8mb4Bin => trim_spaces(a).cmp(trim_spaces(b)),
            Collation::Latin1SwedishCi => {
                let (a, b) = (trim_spaces(a), trim_spaces(b));
                a.iter()
                    .map(|&c| latin1_fold(c))
                    .cmp(b.iter().map(|&c| latin1_fold(c)))
            }
            Collation::Utf8mb4GeneralCi => {
                let (a, b) = (trim_spaces(a), trim_spaces(b));
                // ASCII by bytes while both are ASCII (it folds to its upper case); the rest,
                // from a character boundary, one character at a time.
                let p = match ascii_ci_prefix(a, b) {
                    Ok(p) => p,
                    Err(o) => return o,
                };
                let (a, b) = (&a[p..], &b[p..]);
                chars(a)
                    .map(general_weight)
                    .cmp(chars(b).map(general_weight))
            }
            Collation::Utf8mb40900AiCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => unreachable!("a UCA collation"),
        }
    }
}

impl Collation {
    /// The weight LIKE compares a character by (MySQL matches LIKE one character at a time):
    /// for latin1 collations `c` is a latin1 byte's character (`latin1` its byte).
    pub fn char_weight(self, c: char, latin1: Option<u8>) -> u32 {
        if let Some(t) = self.uca() {
            return t.char_weight(c);
        }
        match self {
            Collation::Latin1SwedishCi => u32::from(latin1_fold(latin1.unwrap_or(b'?'))),
            Collation::Utf8mb4GeneralCi => general_weight(c),
            Collation::Binary
            | Collation::Latin1Bin
            | Collation::Utf8mb4Bin
            | Collation::Utf8mb40900Bin
            | Collation::Utf8mb40900AiCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => c as u32,
        }
    }

    /// Bytes that are equal for two values iff `compare` says they are equal (used to lock
    /// unique key values and to hash; not ordered as `compare` orders under a UCA collation).
    pub fn sort_key(self, s: &[u8]) -> Vec<u8> {
        if let Some(t) = self.uca() {
            return t.sort_key(s);
        }
        match self {
            Collation::Binary | Collation::Utf8mb40900Bin => s.to_vec(),
            Collation::Latin1Bin | Collation::Utf8mb4Bin => trim_spaces(s).to_vec(),
            Collation::Latin1SwedishCi => trim_spaces(s).iter().map(|&c| latin1_fold(c)).collect(),
            Collation::Utf8mb4GeneralCi => {
                let s = trim_spaces(s);
                // Each character's weight (a character itself) in UTF-8: prefix-free, so equal
                // keys mean equal weight sequences. ASCII folds to its upper case.
                if s.is_ascii() {
                    return s.to_ascii_uppercase();
                }
                let mut key = Vec::with_capacity(s.len());
                let mut buf = [0; 4];
                for c in chars(s) {
                    let w = char::from_u32(general_weight(c)).unwrap_or(c);
                    key.extend_from_slice(w.encode_utf8(&mut buf).as_bytes());
                }
                key
            }
            Collation::Utf8mb40900AiCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => unreachable!("a UCA collation"),
        }
    }
}

impl Collation {
    /// A readable form of `sort_key` bytes (lock listings show keys by it): the key itself
    /// but for the UCA collations, whose weights show as the characters weighing them.
    pub fn key_text(self, key: &[u8]) -> Vec<u8> {
        match self.uca() {
            Some(t) => t.key_text(key),
            None => key.to_vec(),
        }
    }

    /// Up to 8 bytes (the rest of the array zero) and how many there are, 8 meaning 8 or
    /// more: a prefix in the order `compare` gives (a sort's shortcut, exec/sort.rs), the
    /// first bytes of `sort_key(s)` but under a UCA collation (its first weights there).
    pub fn sort_prefix(self, s: &[u8]) -> ([u8; 8], usize) {
        if let Some(t) = self.uca() {
            return t.sort_prefix(s);
        }
        let mut out = [0u8; 8];
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            for &b in bytes {
                if n == 8 {
                    return false;
                }
                out[n] = b;
                n += 1;
            }
            true
        };
        match self {
            Collation::Binary | Collation::Utf8mb40900Bin => {
                put(&s[..s.len().min(8)]);
            }
            Collation::Latin1Bin | Collation::Utf8mb4Bin => {
                let t = trim_spaces(s);
                put(&t[..t.len().min(8)]);
            }
            Collation::Latin1SwedishCi => {
                for &c in trim_spaces(s).iter().take(8) {
                    put(&[latin1_fold(c)]);
                }
            }
            Collation::Utf8mb4GeneralCi => {
                let mut buf = [0; 4];
                for c in chars(trim_spaces(s)) {
                    let w = if c.is_ascii() {
                        c.to_ascii_uppercase()
                    } else {
                        char::from_u32(general_weight(c)).unwrap_or(c)
                    };
                    if !put(w.encode_utf8(&mut buf).as_bytes()) {
                        break;
                    }
                }
            }
            Collation::Utf8mb40900AiCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => unreachable!("a UCA collation"),
        }
        (out, n)
    }
}

/// Compares `a` and `b` as their upper case (eight bytes at a time, then one) while both hold
/// ASCII (which folds to its upper case in both utf8mb4 case-insensitive collations): the order
/// if that decides it, else how far they fold equally (a character boundary of both).
fn ascii_ci_prefix(a: &[u8], b: &[u8]) -> Result<usize, Ordering> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = a.len().min(b.len());
    let mut p = 0;
    while p + 8 <= n {
        let x = u64::from_be_bytes(chunk8(&a[p..]));
        let y = u64::from_be_bytes(chunk8(&b[p..]));
        if (x | y) & HIGH != 0 {
            break;
        }
        if x != y {
            let (x, y) = (upper8(x), upper8(y));
            if x != y {
                return Err(x.cmp(&y));
            }
        }
        p += 8;
    }
    // Then a byte at a time, up to the first non-ASCII byte of either.
    while p < n && a[p].is_ascii() && b[p].is_ascii() {
        let (x, y) = (a[p].to_ascii_uppercase(), b[p].to_ascii_uppercase());
        if x != y {
            return Err(x.cmp(&y));
        }
        p += 1;
    }
    Ok(p)
}

fn chunk8(s: &[u8]) -> [u8; 8] {
    let mut c = [0; 8];
    c.copy_from_slice(&s[..8]);
    c
}

/// Upper-cases eight ASCII bytes (each below 0x80) packed in a word: no byte's sum carries into
/// the next, so the high bit of each byte says whether that byte is in `a..=z`.
fn upper8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let ge_a = x + ONES * (0x80 - u64::from(b'a'));
    let gt_z = x + ONES * (0x80 - u64::from(b'z') - 1);
    let lower = ge_a & !gt_z & (ONES * 0x80);
    x - (lower >> 2)
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let mut n = s.len();
    while n > 0 && s[n - 1] == b' ' {
        n -= 1;
    }
    &s[..n]
}

fn latin1_fold(c: u8) -> u8 {
    LATIN1_SWEDISH_CI[usize::from(c)]
}

/// The weight of each latin1 byte in latin1_swedish_ci (MySQL's and MariaDB's, as their
/// WEIGHT_STRING gives it): ASCII letters as upper case, Latin-1 letters as their base
/// letter (both cases), except the Swedish ones: Å sorts as `[`, Ä and Æ as `\`, Ö as `]` (after
/// Z); Ü and Ý as Y; Ø, Þ and the other symbols as themselves (ø as Ø, þ as Þ).
static LATIN1_SWEDISH_CI: [u8; 256] = latin1_swedish_ci();

const fn latin1_swedish_ci() -> [u8; 256] {
    // 0xC0..=0xDF; 0xE0..=0xFF weigh as these too, but for ÷ (0xF7) and ÿ (0xFF).
    const LETTERS: [u8; 32] = [
        b'A', b'A', b'A', b'A', b'\\', b'[', b'\\', b'C', b'E', b'E', b'E', b'E', b'I', b'I', b'I',
        b'I', b'D', b'N', b'O', b'O', b'O', b'O', b']', 0xD7, 0xD8, b'U', b'U', b'U', b'Y', b'Y',
        0xDE, 0xDF,
    ];
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            c @ b'a'..=b'z' => c - 32,
            c @ 0xC0..=0xDF => LETTERS[(c - 0xC0) as usize],
            c @ (0xF7 | 0xFF) => c,
            c @ 0xE0..=0xFE => LETTERS[(c - 0xE0) as usize],
            c => c,
        };
        i += 1;
    }
    t
}

/// Decodes UTF-8 leniently: an invalid byte becomes U+FFFD followed by the rest.
fn chars(s: &[u8]) -> impl Iterator<Item = char> + '_ {
    s.utf8_chunks().flat_map(|chunk| {
        let bad = if chunk.invalid().is_empty() {
            None
        } else {
            Some('\u{FFFD}')
        };
        chunk.valid().chars().chain(bad)
    })
}

/// utf8mb4_general_ci's weight of a character, as MySQL's and MariaDB's: ASCII as its upper
/// case, the BMP from `GENERAL_CI` (upper case with accents folded for Latin, Greek and
/// Cyrillic letters, from MariaDB's WEIGHT_STRING) or itself, anything past it U+FFFD.
fn general_weight(c: char) -> u32 {
    let cp = u32::from(c);
    if c.is_ascii() {
        return u32::from(c.to_ascii_uppercase());
    }
    let Ok(bmp) = u16::try_from(cp) else {
        return 0xFFFD;
    };
    match GENERAL_CI.binary_search_by_key(&bmp, |e| e.0) {
        Ok(i) => u32::from(GENERAL_CI[i].1),
        Err(_) => cp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    #[test]
    fn sort_prefix_is_the_sort_keys_start() {
        let words: &[&[u8]] = &[
            b"",
            b"a",
            b"A",
            b"a ",
            b"ab",
            b"abcdefgh",
            b"abcdefghij",
            b"ABCDEFGHIJ",
            "\u{e9}t\u{e9}".as_bytes(),
            "\u{c9}T\u{c9} ".as_bytes(),
            b"zz\x00",
            b"\xe9t\xe9",
            "stra\u{df}e long word".as_bytes(),
        ];
        for coll in [
            Collation::Binary,
            Collation::Latin1SwedishCi,
            Collation::Latin1Bin,
            Collation::Utf8mb4GeneralCi,
            Collation::Utf8mb4Bin,
            Collation::Utf8mb40900AiCi,
            Collation::Utf8mb40900Bin,
            Collation::Utf8mb4UnicodeCi,
            Collation::Utf8mb4Unicode520Ci,
        ] {
            if coll.uca().is_some() {
                // Their prefixes are weights, their keys for equality only (uca.rs U3).
                continue;
            }
            for w in words {
                let key = coll.sort_key(w);
                let (p, n) = coll.sort_prefix(w);
                assert_eq!(n, key.len().min(8), "{coll:?} {w:?}");
                assert_eq!(&p[..n], &key[..n], "{coll:?} {w:?}");
                assert!(p[n..].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn pad_space_and_case() {
        let c = Collation::Utf8mb4GeneralCi;
        assert_eq!(c.compare(b"abc", b"ABC  "), Equal);
        assert_eq!(c.compare(b"abc", b"abd"), Less);
        assert_eq!(Collation::Utf8mb40900AiCi.compare(b"abc", b"abc "), Less);
        assert_eq!(
            Collation::Utf8mb40900AiCi.compare("résumé".as_bytes(), b"RESUME"),
            Equal
        );
        assert_eq!(Collation::Binary.compare(b"a", b"a "), Less);
        assert_eq!(Collation::Latin1SwedishCi.compare(b"Zed", b"zed"), Equal);
        for c in [
            Collation::Utf8mb4GeneralCi,
            Collation::Utf8mb40900AiCi,
            Collation::Latin1SwedishCi,
            Collation::Utf8mb4UnicodeCi,
            Collation::Utf8mb4Unicode520Ci,
        ] {
            for (a, b) in [(&b"abc"[..], &b"ABC  "[..]), (b"x", b"y"), (b"a ", b"a")] {
                assert_eq!(
                    c.compare(a, b) == Equal,
                    c.sort_key(a) == c.sort_key(b),
                    "{c:?}"
                );
            }
        }
        // The ASCII fast paths agree with the general ones (utf8mb4_0900_ai_ci's: uca.rs).
        for c in [Collation::Utf8mb4GeneralCi] {
            let mixed = "aBc\u{e9}".as_bytes();
            assert_eq!(&c.sort_key(mixed)[..3], &c.sort_key(b"AbC")[..]);
            assert_eq!(
                c.sort_key("\u{e9}".as_bytes()),
                c.sort_key("\u{c9}".as_bytes())
            );
            assert_eq!(c.compare(b"abc", b"ABD"), Less);
            assert_eq!(c.compare(b"abc", "ab\u{e9}".as_bytes()), Less);
            assert_eq!(c.compare(b"[", b"a"), Greater, "'[' sorts after 'A'");
            // Eight-byte steps agree with one byte at a time on every ASCII pair.
            let words: [&[u8]; 6] = [
                b"abcdefghij",
                b"ABCDEFGHIJ",
                b"abcdefgh@",
                b"abcdefgh{",
                b"`az{AZ[@~",
                b"zzzzzzzzz",
            ];
            for x in words {
                for y in words {
                    let slow = x
                        .iter()
                        .map(u8::to_ascii_uppercase)
                        .cmp(y.iter().map(u8::to_ascii_uppercase));
                    assert_eq!(c.compare(x, y), slow, "{x:?} {y:?}");
                }
            }
            // Non-ASCII after an ASCII word, and a case difference in the ASCII part.
            let accented = "abcdefgh\u{e9}".as_bytes();
            assert_eq!(c.compare(accented, "ABCDEFGH\u{c9}".as_bytes()), Equal);
            // Both fold the accent of é (utf8mb4_general_ci too, as MySQL's does).
            assert_eq!(c.compare(accented, b"ABCDEFGHE"), Equal);
            // A common prefix that ends inside a multi-byte character.
            assert_eq!(
                c.compare("0123456\u{e9}".as_bytes(), "0123456\u{c9}".as_bytes()),
                Equal
            );
            assert_eq!(
                c.compare("0123456\u{e9}x".as_bytes(), "0123456\u{e8}y".as_bytes()),
                c.compare("\u{e9}".as_bytes(), "\u{e8}".as_bytes())
                    .then(Less)
            );
        }
        // latin1_swedish_ci weighs as MySQL's does: é as E, ä as Æ (after Z), ÷ as itself.
        let sw = Collation::Latin1SwedishCi;
        assert_eq!(sw.compare(b"\xe9t\xe9", b"ETE"), Equal);
        assert_eq!(sw.compare(b"\xe4", b"\xc6"), Equal);
        assert_eq!(sw.compare(b"\xe4", b"z"), Greater);
        assert_eq!(sw.compare(b"\xe5", b"\xe4"), Less);
        assert_eq!(sw.compare(b"\xf7", b"\xd7"), Greater);
        assert_eq!(sw.sort_key(b"\xfe"), sw.sort_key(b"\xde"));
        // utf8mb4_general_ci folds accents of Latin letters but Ø and Æ, ß weighs as S, and
        // every character past the BMP weighs alike; 0900_ai_ci folds Ø too.
        let g = Collation::Utf8mb4GeneralCi;
        assert_eq!(g.compare("résumé".as_bytes(), b"RESUME"), Equal);
        assert_eq!(g.compare("stra\u{df}e".as_bytes(), b"strase"), Equal);
        assert_eq!(g.compare("\u{d8}".as_bytes(), b"O"), Greater);
        assert_eq!(g.compare("\u{c6}".as_bytes(), "\u{e6}".as_bytes()), Equal);
        assert_eq!(
            g.compare("\u{1f600}".as_bytes(), "\u{1f601}".as_bytes()),
            Equal
        );
        assert_eq!(g.compare("\u{3ac}".as_bytes(), "\u{391}".as_bytes()), Equal);
        let ai = Collation::Utf8mb40900AiCi;
        assert_eq!(ai.compare("\u{d8}".as_bytes(), b"o"), Equal);
        assert_eq!(
            ai.compare("\u{1f600}".as_bytes(), "\u{1f601}".as_bytes()),
            Less
        );
        assert!(GENERAL_CI.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        for id in [63, 8, 47, 45, 46, 255, 309, 224, 246] {
            assert_eq!(Collation::from_id(id).map(Collation::id), Some(id));
        }
    }
}
