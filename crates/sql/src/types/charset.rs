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
        Collation::Utf8mb4GeneralCi,
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
        Collation::Utf8mb4GeneralCi,
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

#[cfg(test)]
mod tests {
    use super::*;

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
