//! The character sets and collations innoxide knows, with MySQL 8.0's names and ids.
//!
//! INVARIANTS
//! - Each MySQL collation maps onto one engine `Collation` (how stored values compare). Ids
//!   and names are MySQL's, so clients see e.g. utf8mb3_general_ci (33) even though the engine
//!   compares it like utf8mb4_general_ci (utf8mb3 is stored as UTF-8 like utf8mb4, limited to
//!   3-byte characters). utf8mb4_unicode_ci compares like utf8mb4_general_ci (approximation).
//! - `utf8` is the alias MySQL 8.0 gives it: utf8mb3 (and `utf8_xxx` collations are
//!   `utf8mb3_xxx`). The default of utf8mb4 is utf8mb4_0900_ai_ci as in MySQL 8.0.

use innoxide_engine::Collation;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollationInfo {
    pub name: &'static str,
    pub charset: &'static str,
    /// MySQL's collation id (what the protocol sends).
    pub id: u16,
    /// How the engine compares values.
    pub engine: Collation,
    /// The charset's default collation.
    pub is_default: bool,
}

const fn c(
    name: &'static str,
    charset: &'static str,
    id: u16,
    engine: Collation,
    is_default: bool,
) -> CollationInfo {
    CollationInfo {
        name,
        charset,
        id,
        engine,
        is_default,
    }
}

pub const COLLATIONS: &[CollationInfo] = &[
    c(
        "utf8mb4_0900_ai_ci",
        "utf8mb4",
        255,
        Collation::Utf8mb40900AiCi,
        true,
    ),
    c(
        "utf8mb4_0900_bin",
        "utf8mb4",
        309,
        Collation::Utf8mb40900Bin,
        false,
    ),
    c(
        "utf8mb4_general_ci",
        "utf8mb4",
        45,
        Collation::Utf8mb4GeneralCi,
        false,
    ),
    c("utf8mb4_bin", "utf8mb4", 46, Collation::Utf8mb4Bin, false),
    c(
        "utf8mb4_unicode_ci",
        "utf8mb4",
        224,
        Collation::Utf8mb4UnicodeCi,
        false,
    ),
    c(
        "utf8mb3_general_ci",
        "utf8mb3",
        33,
        Collation::Utf8mb4GeneralCi,
        true,
    ),
    c("utf8mb3_bin", "utf8mb3", 83, Collation::Utf8mb4Bin, false),
    c(
        "utf8mb3_unicode_ci",
        "utf8mb3",
        192,
        Collation::Utf8mb4UnicodeCi,
        false,
    ),
    c(
        "latin1_swedish_ci",
        "latin1",
        8,
        Collation::Latin1SwedishCi,
        true,
    ),
    c("latin1_bin", "latin1", 47, Collation::Latin1Bin, false),
    c("binary", "binary", 63, Collation::Binary, true),
    c(
        "utf8mb4_unicode_520_ci",
        "utf8mb4",
        246,
        Collation::Utf8mb4Unicode520Ci,
        false,
    ),
    c(
        "utf8mb3_unicode_520_ci",
        "utf8mb3",
        214,
        Collation::Utf8mb4Unicode520Ci,
        false,
    ),
];

/// The binary pseudo-collation (numbers, temporal values, binary strings).
pub const BINARY: &CollationInfo = &COLLATIONS[10];
/// The server default: utf8mb4_0900_ai_ci.
pub const DEFAULT: &CollationInfo = &COLLATIONS[0];

/// A charset name in canonical form (`utf8` → `utf8mb3`), if known.
pub fn charset_name(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    let n = if n == "utf8" {
        "utf8mb3".to_string()
    } else {
        n
    };
    COLLATIONS
        .iter()
        .find(|c| c.charset == n)
        .map(|c| c.charset)
}

/// Bytes per character at most.
pub fn mbmaxlen(charset: &str) -> u32 {
    match charset {
        "utf8mb4" => 4,
        "utf8mb3" => 3,
        _ => 1,
    }
}

pub fn collation_info(name: &str) -> Option<&'static CollationInfo> {
    let n = name.to_ascii_lowercase();
    let n = match n.strip_prefix("utf8_") {
        Some(rest) => format!("utf8mb3_{rest}"),
        None => n,
    };
    COLLATIONS.iter().find(|c| c.name == n)
}

pub fn collation_by_id(id: u16) -> Option<&'static CollationInfo> {
    COLLATIONS.iter().find(|c| c.id == id)
}

pub fn default_collation(charset: &str) -> Option<&'static CollationInfo> {
    let cs = charset_name(charset)?;
    COLLATIONS.iter().find(|c| c.charset == cs && c.is_default)
}

/// The engine collation for a collation name (COLLATE clauses).
pub fn collation_by_name(name: &str) -> Option<Collation> {
    collation_info(name).map(|c| c.engine)
}

/// MySQL's latin1 is Windows-1252 with its five holes (0x81, 0x8D, 0x8F, 0x90, 0x9D) kept
/// as the C1 controls of the same value: 0x80..=0x9F map to these; the rest is ISO 8859-1.
const LATIN1_80_9F: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// The bytes of a string value (UTF-8 inside the server) as collation `coll` compares them:
/// latin1 collations compare latin1 bytes, as the engine stores them.
pub fn comparable(coll: Collation, b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match coll {
        Collation::Latin1SwedishCi | Collation::Latin1Bin if !b.is_ascii() => {
            std::borrow::Cow::Owned(utf8_to_latin1(b).0)
        }
        _ => std::borrow::Cow::Borrowed(b),
    }
}

/// The character of a latin1 byte.
pub fn latin1_char(c: u8) -> char {
    match c {
        0x80..=0x9F => LATIN1_80_9F[usize::from(c - 0x80)],
        _ => char::from(c),
    }
}

/// latin1 bytes as UTF-8 (every byte is a character).
pub fn latin1_to_utf8(b: &[u8]) -> String {
    b.iter().map(|&c| latin1_char(c)).collect()
}

/// UTF-8 as latin1: a character latin1 does not have becomes '?', as MySQL converts (bytes
/// that are not UTF-8 too). Returns the bytes and whether anything was replaced.
pub fn utf8_to_latin1(b: &[u8]) -> (Vec<u8>, bool) {
    if b.is_ascii() {
        return (b.to_vec(), false);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut lossy = false;
    for chunk in b.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match latin1_byte(ch) {
                Some(x) => out.push(x),
                None => {
                    out.push(b'?');
                    lossy = true;
                }
            }
        }
        if !chunk.invalid().is_empty() {
            out.push(b'?');
            lossy = true;
        }
    }
    (out, lossy)
}

/// The latin1 byte of a character, if latin1 has it.
pub fn latin1_byte(ch: char) -> Option<u8> {
    let u = u32::from(ch);
    match u {
        0..=0x7F | 0xA0..=0xFF => u8::try_from(u).ok(),
        _ => LATIN1_80_9F
            .iter()
            .position(|&x| x == ch)
            .and_then(|i| u8::try_from(0x80 + i).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        let s = latin1_to_utf8(&all);
        assert_eq!(s.chars().count(), 256);
        assert_eq!(utf8_to_latin1(s.as_bytes()), (all, false));
        assert_eq!(latin1_to_utf8(b"caf\xe9 \x80"), "café €");
        assert_eq!(
            utf8_to_latin1("日本 é".as_bytes()),
            (b"?? \xe9".to_vec(), true)
        );
    }

    #[test]
    fn lookups() {
        assert_eq!(default_collation("UTF8MB4").map(|c| c.id), Some(255));
        assert_eq!(
            default_collation("utf8").map(|c| c.name),
            Some("utf8mb3_general_ci")
        );
        assert_eq!(default_collation("latin1").map(|c| c.id), Some(8));
        assert_eq!(collation_info("utf8_bin").map(|c| c.id), Some(83));
        assert_eq!(collation_by_name("Latin1_Bin"), Some(Collation::Latin1Bin));
        assert_eq!(collation_by_name("nope"), None);
        assert_eq!(BINARY.id, 63);
        assert_eq!(DEFAULT.name, "utf8mb4_0900_ai_ci");
        for c in COLLATIONS {
            assert_eq!(collation_by_id(c.id), Some(c));
            assert_eq!(Collation::from_id(c.engine.id()), Some(c.engine));
        }
    }
}
