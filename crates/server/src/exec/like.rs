//! LIKE: a pattern compiled into what its collation compares, once per statement when the
//! pattern is a constant (`CExpr::LikeConst`), then matched against each value.
//!
//! INVARIANTS
//! - L1: MySQL matches LIKE one character at a time under the comparison's collation: two
//!   characters match when they weigh the same (`Collation::char_weight`: case and, under
//!   utf8mb4_0900_ai_ci, accents folded; latin1_swedish_ci's own weights), `_` matches any one
//!   character and `%` any run of them, and trailing spaces count (LIKE does not pad). The
//!   `binary` collation matches bytes.
//! - L2: a value all ASCII is matched byte by byte, each byte folded as its character weighs
//!   (upper case under a case-insensitive collation, else itself), when every literal of the
//!   pattern weighs an ASCII byte; such a pattern is also sorted into the shapes that need no
//!   backtracking (`abc`, `abc%`, `%abc`, `%abc%`).
//! - L3: an escape character before any character makes it literal; at the pattern's end it
//!   is literal itself.

use innoxide_engine::Collation;
use innoxide_sql::types::latin1_byte;

/// One item of a pattern: a character's weight, `_` or `%`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Item {
    Lit(u32),
    One,
    Any,
}

/// A compiled LIKE pattern.
#[derive(Debug)]
pub struct LikePattern {
    coll: Collation,
    items: Vec<Item>,
    /// The byte form of L2 (the binary collation: always).
    bytes: Option<Bytes>,
}

/// L2's forms, literals as folded bytes.
#[derive(Debug)]
enum Bytes {
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Vec<u8>),
    General(Vec<Item>),
}

impl LikePattern {
    /// Compiles pattern `p` (UTF-8 text, or bytes under `binary`) with escape `esc`.
    pub fn new(p: &[u8], esc: Option<char>, coll: Collation) -> LikePattern {
        let chars: Vec<(char, Option<u8>)> = if coll == Collation::Binary {
            p.iter().map(|&b| (char::from(b), Some(b))).collect()
        } else {
            String::from_utf8_lossy(p)
                .chars()
                .map(|c| (c, latin1_byte(c)))
                .collect()
        };
        let weight = |(c, b): (char, Option<u8>)| match coll {
            Collation::Binary => u32::from(b.unwrap_or(0)),
            _ => coll.char_weight(c, b),
        };
        let mut items = Vec::with_capacity(chars.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i].0;
            let item = if Some(c) == esc && i + 1 < chars.len() {
                i += 1;
                Item::Lit(weight(chars[i]))
            } else if c == '%' {
                Item::Any
            } else if c == '_' {
                Item::One
            } else {
                Item::Lit(weight(chars[i]))
            };
            // `%%` matches what `%` does.
            if !(item == Item::Any && items.last() == Some(&Item::Any)) {
                items.push(item);
            }
            i += 1;
        }
        let limit = if coll == Collation::Binary {
            0x100
        } else {
            0x80
        };
        let byte_items = items
            .iter()
            .all(|it| !matches!(it, Item::Lit(w) if *w >= limit));
        let bytes = byte_items.then(|| Bytes::of(&items));
        LikePattern { coll, items, bytes }
    }

    /// True if `v` (UTF-8 text, or bytes under `binary`) matches.
    pub fn matches(&self, v: &[u8]) -> bool {
        if let Some(b) = &self.bytes {
            if self.coll == Collation::Binary {
                return b.matches(v, |x| x);
            }
            if v.is_ascii() {
                return if self.coll.is_ci() {
                    b.matches(v, |x| x.to_ascii_uppercase())
                } else {
                    b.matches(v, |x| x)
                };
            }
        }
        let coll = self.coll;
        let weights: Vec<u32> = String::from_utf8_lossy(v)
            .chars()
            .map(|c| coll.char_weight(c, latin1_byte(c)))
            .collect();
        glob(&weights, &self.items, |w| w)
    }
}

impl Bytes {
    fn of(items: &[Item]) -> Bytes {
        // Every literal fits a byte here (the caller checked).
        let lits = |s: &[Item]| -> Option<Vec<u8>> {
            s.iter()
                .map(|it| match it {
                    Item::Lit(w) => u8::try_from(*w).ok(),
                    _ => None,
                })
                .collect()
        };
        let n = items.len();
        let (first_any, last_any) = (
            items.first() == Some(&Item::Any),
            n > 1 && items.last() == Some(&Item::Any),
        );
        let inner = &items[usize::from(first_any)..n - usize::from(last_any)];
        match (first_any, last_any, lits(inner)) {
            (false, false, Some(l)) => Bytes::Exact(l),
            (false, true, Some(l)) => Bytes::Prefix(l),
            (true, false, Some(l)) => Bytes::Suffix(l),
            (true, true, Some(l)) => Bytes::Contains(l),
            _ => Bytes::General(items.to_vec()),
        }
    }

    /// L2: `v`'s bytes folded by `fold` against the folded literals.
    fn matches(&self, v: &[u8], fold: impl Fn(u8) -> u8 + Copy) -> bool {
        let eq =
            |v: &[u8], l: &[u8]| v.len() == l.len() && v.iter().zip(l).all(|(&a, &b)| fold(a) == b);
        match self {
            Bytes::Exact(l) => eq(v, l),
            Bytes::Prefix(l) => v.len() >= l.len() && eq(&v[..l.len()], l),
            Bytes::Suffix(l) => v.len() >= l.len() && eq(&v[v.len() - l.len()..], l),
            Bytes::Contains(l) => {
                let Some((&first, rest)) = l.split_first() else {
                    return true;
                };
                let last = v.len().saturating_sub(rest.len());
                (0..last).any(|i| fold(v[i]) == first && eq(&v[i + 1..i + 1 + rest.len()], rest))
            }
            Bytes::General(items) => glob(v, items, |b| u32::from(fold(b))),
        }
    }
}

/// Matches `v` (items weighed by `w`) against `p`: iteratively, going back to the last `%`
/// when a literal fails.
fn glob<T: Copy>(v: &[T], p: &[Item], w: impl Fn(T) -> u32) -> bool {
    let (mut vi, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while vi < v.len() {
        match p.get(pi) {
            Some(Item::Any) => {
                star = Some((pi, vi));
                pi += 1;
                continue;
            }
            Some(Item::One) => {
                vi += 1;
                pi += 1;
                continue;
            }
            Some(Item::Lit(l)) if *l == w(v[vi]) => {
                vi += 1;
                pi += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sv)) => {
                pi = sp + 1;
                vi = sv + 1;
                star = Some((sp, sv + 1));
            }
            None => return false,
        }
    }
    p[pi.min(p.len())..].iter().all(|it| *it == Item::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(v: &str, p: &str, coll: Collation) -> bool {
        LikePattern::new(p.as_bytes(), Some('\\'), coll).matches(v.as_bytes())
    }

    #[test]
    fn shapes_agree_with_the_general_match() {
        let ci = Collation::Utf8mb40900AiCi;
        let values = [
            "",
            "a",
            "abc",
            "ABC",
            "xabcx",
            "abcabc",
            "ab",
            "zzz",
            "mississippi",
            "a%c",
            "a_c",
            "abc ",
            " abc",
        ];
        let patterns = [
            "", "%", "%%", "_", "abc", "ABC", "abc%", "%abc", "%abc%", "%b%", "a%c", "a_c",
            "%iss%ppi", "%ss_ss%", "a\\%c", "a\\_c", "%\\%%", "abc\\", "_%_", "%a%b%c%",
        ];
        for coll in [ci, Collation::Utf8mb4Bin, Collation::Binary] {
            for v in values {
                for p in patterns {
                    let pat = LikePattern::new(p.as_bytes(), Some('\\'), coll);
                    let general = glob(v.as_bytes(), &pat.items, |b| {
                        coll.char_weight(char::from(b), Some(b))
                    });
                    let general = if coll == Collation::Binary {
                        glob(v.as_bytes(), &pat.items, u32::from)
                    } else {
                        general
                    };
                    assert_eq!(pat.matches(v.as_bytes()), general, "{v:?} {p:?} {coll:?}");
                }
            }
        }
        assert!(like("abc", "a%", ci));
        assert!(like("abc", "%c", ci));
        assert!(like("abc", "a_c", ci));
        assert!(!like("abc", "a_", ci));
        assert!(like("ABC", "a%", ci));
        assert!(!like("ABC", "a%", Collation::Utf8mb4Bin));
        assert!(like("a%c", "a\\%c", ci));
        assert!(!like("abc", "a\\%c", ci));
        assert!(like("", "%", ci));
        assert!(like("mississippi", "%iss%ppi", ci));
        assert!(!like("abc ", "abc", ci), "LIKE does not pad");
        assert!(like("abc\\", "abc\\", ci), "a trailing escape is literal");
    }

    #[test]
    fn characters_match_by_their_collation_weight() {
        let ai = Collation::Utf8mb40900AiCi;
        let general = Collation::Utf8mb4GeneralCi;
        assert!(like("é", "e", ai));
        assert!(like("É", "e%", ai));
        assert!(like("a", "Á", ai));
        assert!(like("résumé", "RESUME", ai));
        assert!(like("Ébc", "é_c", ai));
        assert!(!like("Ébc", "é_c", Collation::Utf8mb4Bin));
        assert!(like("mississippié", "%ISS%PPI_", ai));
        assert!(!like("mississippié", "%ISS%PPI", ai));
        assert!(like("é", "É", general));
        assert!(
            like("résumé", "resume", general),
            "general_ci folds accents too"
        );
        assert!(like("straße", "stra_e", general));
        assert!(!like("é", "É", Collation::Utf8mb40900Bin));
        // latin1_swedish_ci: é weighs as E, ä as Æ (not as a).
        let sw = Collation::Latin1SwedishCi;
        assert!(like("é", "e", sw));
        assert!(like("xÄy", "%æ%", sw));
        assert!(!like("ä", "a", sw));
        assert!(!like("ä", "a", Collation::Latin1Bin));
        // One `_` is one character, not one byte.
        assert!(like("é", "_", ai));
        assert!(!like("é", "__", ai));
        assert!(like("\u{e9}", "__", Collation::Binary) == ("\u{e9}".len() == 2));
    }
}
