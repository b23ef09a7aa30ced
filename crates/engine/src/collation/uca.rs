//! The Unicode Collation Algorithm at the primary level (accent- and case-insensitive), as
//! MySQL 8.0's UCA collations of utf8mb4 use it: no contractions, no normalisation, variable
//! characters non-ignorable (spaces and punctuation weigh). Three tables (`Table`):
//! utf8mb4_0900_ai_ci (`UCA900`: DUCET of Unicode 9.0, uca900.rs; NO PAD),
//! utf8mb4_unicode_ci (`UNICODE`: UCA 4.0.0, unicode_ci.rs; PAD SPACE; every character past
//! the BMP weighs 0xFFFD) and utf8mb4_unicode_520_ci (`UNICODE_520`: UCA 5.2.0,
//! unicode_520_ci.rs; PAD SPACE).
//!
//! INVARIANTS
//! - U1: a character weighs a sequence of 0 to 8 primary weights (0 to 18 in the older
//!   tables), none zero: its table entry (an ignorable character weighs none); else, under
//!   UCA900, for a Hangul syllable, its jamo's weights (two or three); else two implicit
//!   weights AAAA BBBB (`Implicit`: MySQL's ranges of Unicode 9.0 for UCA900, the ranges the
//!   older tables list).
//! - U2: a string weighs the concatenation of its characters' weights, each character alone
//!   (no contractions): equal bytes from a character boundary weigh alike, so a comparison
//!   may skip a common byte prefix cut back to a character boundary. Strings compare as their
//!   weight sequences, a proper prefix first (NO PAD: a trailing space weighs; PAD SPACE:
//!   trailing spaces are cut first). Bytes that are not UTF-8 weigh as U+FFFD, one byte each.
//! - U3: `sort_key` is the weights, each as one unit: the byte of the ASCII character that
//!   weighs it (a letter's upper case), else 0xFF and the weight in big endian. The units are
//!   unambiguous read from the start, so keys are equal iff `compare` says Equal (the key is
//!   for hashing and equality, not for order); an ASCII string without ignorable characters
//!   has its upper case as key. `sort_prefix` is the weights in big endian: ordered as
//!   `compare` orders (no weight is zero, so a shorter string that is a prefix sorts first).
//!
//! No latches: the tables are static.

use std::cmp::Ordering;

use super::uca900::STEP;
use super::{uca900, unicode_520_ci, unicode_ci};

/// How a table gives implicit weights to the characters it does not list.
enum Implicit {
    /// MySQL's ranges of Unicode 9.0, Tangut included.
    Mysql900,
    /// Base FB40 or FB80 in the listed ranges (first, last, base), else FBC0.
    Ranges(&'static [(u32, u32, u16)]),
}

/// One UCA collation's weights and rules.
pub(super) struct Table {
    ascii: &'static [u16; 128],
    runs: &'static [(u32, u16, u16)],
    expansions: &'static [(u32, u16, u8)],
    pool: &'static [u16],
    implicit: Implicit,
    /// ASCII weights with their characters, sorted by weight (`by_weight`).
    by_weight: [(u16, u8); 128],

    /// Hangul syllables weigh their jamo (UCA900).
    hangul: bool,
    /// Every character past the BMP weighs 0xFFFD (utf8mb4_unicode_ci).
    bmp_only: bool,
    /// PAD SPACE: trailing spaces do not count.
    pad_space: bool,
}

/// utf8mb4_0900_ai_ci.
pub(super) static UCA900: Table = Table {
    ascii: &uca900::ASCII,
    runs: &uca900::RUNS,
    expansions: &uca900::EXPANSIONS,
    pool: &uca900::POOL,
    implicit: Implicit::Mysql900,
    by_weight: by_weight(&uca900::ASCII),
    hangul: true,
    bmp_only: false,
    pad_space: false,
};

/// utf8mb4_unicode_ci (and utf8mb3_unicode_ci).
pub(super) static UNICODE: Table = Table {
    ascii: &unicode_ci::ASCII,
    runs: &unicode_ci::RUNS,
    expansions: &unicode_ci::EXPANSIONS,
    pool: &unicode_ci::POOL,
    implicit: Implicit::Ranges(&unicode_ci::IMPLICIT),
    by_weight: by_weight(&unicode_ci::ASCII),
    hangul: false,
    bmp_only: true,
    pad_space: true,
};

/// utf8mb4_unicode_520_ci (and utf8mb3_unicode_520_ci).
pub(super) static UNICODE_520: Table = Table {
    ascii: &unicode_520_ci::ASCII,
    runs: &unicode_520_ci::RUNS,
    expansions: &unicode_520_ci::EXPANSIONS,
    pool: &unicode_520_ci::POOL,
    implicit: Implicit::Ranges(&unicode_520_ci::IMPLICIT),
    by_weight: by_weight(&unicode_520_ci::ASCII),
    hangul: false,
    bmp_only: false,
    pad_space: true,
};

/// A character's primary weights (U1).
#[derive(Clone, Copy)]
enum Weights {
    Inline([u16; 3], u8),
    Pool(&'static [u16]),
}

impl Weights {
    fn as_slice(&self) -> &[u16] {
        match self {
            Weights::Inline(w, n) => &w[..usize::from(*n)],
            Weights::Pool(p) => p,
        }
    }

    fn one(w: u16) -> Weights {
        Weights::Inline([w, 0, 0], u8::from(w != 0))
    }
}

impl Table {
    /// The weights of character `cp` (U1).
    fn weights(&self, cp: u32) -> Weights {
        if cp < 0x80 {
            return Weights::one(self.ascii[cp as usize]);
        }
        if self.bmp_only && cp > 0xFFFF {
            return Weights::one(0xFFFD);
        }
        if let Some(w) = self.table_weight(cp) {
            return Weights::one(w);
        }
        if let Ok(i) = self.expansions.binary_search_by_key(&cp, |e| e.0) {
            let (_, at, n) = self.expansions[i];
            let at = usize::from(at);
            return Weights::Pool(&self.pool[at..at + usize::from(n)]);
        }
        if self.hangul {
            if let Some(w) = self.hangul_weights(cp) {
                return w;
            }
        }
        let (a, b) = self.implicit(cp);
        Weights::Inline([a, b, 0], 2)
    }

    /// The one weight (0: ignorable) of a character in a run of the table.
    fn table_weight(&self, cp: u32) -> Option<u16> {
        let i = self.runs.partition_point(|r| r.0 <= cp).checked_sub(1)?;
        let (first, count, w) = self.runs[i];
        let off = cp - first;
        if off >= u32::from(count & !STEP) {
            return None;
        }
        Some(if count & STEP != 0 { w + off as u16 } else { w })
    }

    /// A Hangul syllable (U+AC00 to U+D7AF, as MySQL takes them) weighs as its leading,
    /// vowel and (if any) trailing jamo.
    fn hangul_weights(&self, cp: u32) -> Option<Weights> {
        const T_COUNT: u32 = 28;
        const VT_COUNT: u32 = 21 * T_COUNT;
        if !(0xAC00..=0xD7AF).contains(&cp) {
            return None;
        }
        let s = cp - 0xAC00;
        let jamo = |j: u32| self.table_weight(j).unwrap_or(0);
        let l = jamo(0x1100 + s / VT_COUNT);
        let v = jamo(0x1161 + (s % VT_COUNT) / T_COUNT);
        let t = s % T_COUNT;
        Some(if t == 0 {
            Weights::Inline([l, v, 0], 2)
        } else {
            Weights::Inline([l, v, jamo(0x11A7 + t)], 3)
        })
    }

    /// The implicit weights of a character the table does not list (UCA's formula).
    fn implicit(&self, cp: u32) -> (u16, u16) {
        let base = match self.implicit {
            Implicit::Mysql900 => {
                if (0x17000..=0x18AFF).contains(&cp) {
                    return (0xFB00, ((cp - 0x17000) | 0x8000) as u16);
                }
                match cp {
                    0x3400..=0x4DB5
                    | 0x20000..=0x2A6D6
                    | 0x2A700..=0x2B734
                    | 0x2B740..=0x2B81D
                    | 0x2B820..=0x2CEA1 => 0xFB80,
                    0x4E00..=0x9FD5 | 0xFA0E..=0xFA29 => 0xFB40,
                    _ => 0xFBC0,
                }
            }
            Implicit::Ranges(r) => {
                let i = r.partition_point(|e| e.0 <= cp);
                match i.checked_sub(1).map(|i| r[i]) {
                    Some((_, last, base)) if cp <= last => u32::from(base),
                    _ => 0xFBC0,
                }
            }
        };
        ((base + (cp >> 15)) as u16, ((cp & 0x7FFF) | 0x8000) as u16)
    }

    /// Trailing spaces cut under PAD SPACE (U2).
    fn padded<'a>(&self, s: &'a [u8]) -> &'a [u8] {
        if !self.pad_space {
            return s;
        }
        let mut n = s.len();
        while n > 0 && s[n - 1] == b' ' {
            n -= 1;
        }
        &s[..n]
    }

    /// Compares two strings by their weights (U2).
    pub(super) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (a, b) = (self.padded(a), self.padded(b));
        // The common byte prefix, eight bytes at a time, cut back to a character boundary.
        let n = a.len().min(b.len());
        let mut p = 0;
        while p + 8 <= n && a[p..p + 8] == b[p..p + 8] {
            p += 8;
        }
        while p < n && a[p] == b[p] {
            p += 1;
        }
        while p > 0 && (is_continuation(a, p) || is_continuation(b, p)) {
            p -= 1;
        }
        // ASCII a byte at a time while both weigh (an ignorable byte leaves it to the
        // general loop, which skips it).
        while p < n && a[p] < 0x80 && b[p] < 0x80 {
            let (x, y) = (self.ascii[usize::from(a[p])], self.ascii[usize::from(b[p])]);
            if x == 0 || y == 0 {
                break;
            }
            if x != y {
                return x.cmp(&y);
            }
            p += 1;
        }
        self.iter(&a[p..]).cmp(self.iter(&b[p..]))
    }

    fn iter<'a>(&'a self, s: &'a [u8]) -> Iter<'a> {
        Iter {
            table: self,
            s,
            cur: Weights::Inline([0; 3], 0),
            at: 0,
        }
    }

    /// The equality key of `s` (U3).
    pub(super) fn sort_key(&self, s: &[u8]) -> Vec<u8> {
        let s = self.padded(s);
        if s.iter().all(|&c| printable(c)) {
            return s.to_ascii_uppercase();
        }
        let mut key = Vec::with_capacity(s.len() + 8);
        for w in self.iter(s) {
            match self.ascii_of(w) {
                Some(c) => key.push(c),
                None => {
                    key.push(0xFF);
                    key.extend_from_slice(&w.to_be_bytes());
                }
            }
        }
        key
    }

    /// The first up to 4 weights of `s` in big endian and how many bytes they take (U3).
    pub(super) fn sort_prefix(&self, s: &[u8]) -> ([u8; 8], usize) {
        let s = self.padded(s);
        let mut out = [0u8; 8];
        let mut n = 0;
        // Printable ASCII by the table, the rest (from a character boundary) by the iterator.
        let mut p = 0;
        while n < 8 && p < s.len() && printable(s[p]) {
            out[n..n + 2].copy_from_slice(&self.ascii[usize::from(s[p])].to_be_bytes());
            n += 2;
            p += 1;
        }
        for w in self.iter(&s[p..]).take((8 - n) / 2) {
            out[n..n + 2].copy_from_slice(&w.to_be_bytes());
            n += 2;
        }
        (out, n)
    }

    /// The ASCII character weighing `w` (a letter's upper case), if one does.
    fn ascii_of(&self, w: u16) -> Option<u8> {
        let i = self.by_weight.partition_point(|e| e.0 < w);
        self.by_weight.get(i).filter(|e| e.0 == w).map(|e| e.1)
    }

    /// What LIKE compares a character by (it matches one character at a time): equal for two
    /// characters iff they weigh the same. A character weighing as an ASCII character gives
    /// that character's byte (a letter's upper case; below 0x80, as LIKE's byte form
    /// expects); others give a value from 0x0100_0000 up.
    pub(super) fn char_weight(&self, c: char) -> u32 {
        let cp = u32::from(c);
        if c.is_ascii() {
            return u32::from(c.to_ascii_uppercase());
        }
        match self.weights(cp) {
            Weights::Inline([w, _, _], 1) => self
                .ascii_of(w)
                .map_or(0x0100_0000 | u32::from(w), u32::from),
            // Equal weight sequences share their place in the pool.
            Weights::Pool(p) => {
                0x0200_0000 | (p.as_ptr() as usize - self.pool.as_ptr() as usize) as u32
            }
            // Implicit weights and Hangul syllables: one character each; ignorable ones too.
            Weights::Inline(_, 0) => 0x0400_0000 | cp,
            Weights::Inline(..) => 0x0300_0000 | cp,
        }
    }

    /// A readable form of a sort key (for lock listings): each weight as the first character
    /// weighing it alone (a letter's upper case), implicit weights as their character,
    /// U+FFFD where no character weighs a weight alone.
    pub(super) fn key_text(&self, key: &[u8]) -> Vec<u8> {
        let mut ws: Vec<u16> = Vec::with_capacity(key.len());
        let mut rest = key;
        while let Some((&b, r)) = rest.split_first() {
            if b == 0xFF {
                let Some((w, r)) = r.split_first_chunk::<2>() else {
                    break;
                };
                ws.push(u16::from_be_bytes(*w));
                rest = r;
            } else {
                ws.push(self.ascii[usize::from(b & 0x7F)]);
                rest = r;
            }
        }
        let mut out = String::new();
        let mut i = 0;
        while i < ws.len() {
            let w = ws[i];
            i += 1;
            if (0xFB00..=0xFBFF).contains(&w) {
                if let Some(&b) = ws.get(i) {
                    i += 1;
                    let low = u32::from(b & 0x7FFF);
                    let cp = match w {
                        0xFB00 if matches!(self.implicit, Implicit::Mysql900) => 0x17000 + low,
                        0xFB40..=0xFB7F => (u32::from(w - 0xFB40) << 15) | low,
                        0xFB80..=0xFBBF => (u32::from(w - 0xFB80) << 15) | low,
                        _ => (u32::from(w.saturating_sub(0xFBC0)) << 15) | low,
                    };
                    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                    continue;
                }
            }
            if let Some(c) = self.ascii_of(w) {
                out.push(char::from(c));
                continue;
            }
            let c = self
                .runs
                .iter()
                .find_map(|&(first, count, w0)| {
                    let n = u32::from(count & !STEP);
                    if count & STEP != 0 {
                        (w0..w0.saturating_add(n as u16))
                            .contains(&w)
                            .then(|| first + u32::from(w - w0))
                    } else {
                        (w0 == w).then_some(first)
                    }
                })
                .and_then(char::from_u32);
            out.push(c.unwrap_or('\u{FFFD}'));
        }
        out.into_bytes()
    }
}

/// Decodes the character at the start of `s` (not empty) leniently: the character and its
/// length, U+FFFD and 1 for a byte that does not start a valid UTF-8 sequence.
fn decode(s: &[u8]) -> (u32, usize) {
    let b0 = s[0];
    if b0 < 0x80 {
        return (u32::from(b0), 1);
    }
    let n = match b0 {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (0xFFFD, 1),
    };
    match s.get(..n).and_then(|c| std::str::from_utf8(c).ok()) {
        Some(c) => (c.chars().next().map_or(0xFFFD, u32::from), n),
        None => (0xFFFD, 1),
    }
}

/// The weights of a string, one after another (U2).
struct Iter<'a> {
    table: &'a Table,
    s: &'a [u8],
    cur: Weights,
    at: usize,
}

impl Iterator for Iter<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        loop {
            if let Some(&w) = self.cur.as_slice().get(self.at) {
                self.at += 1;
                return Some(w);
            }
            if self.s.is_empty() {
                return None;
            }
            let (cp, n) = decode(self.s);
            self.s = &self.s[n..];
            self.cur = self.table.weights(cp);
            self.at = 0;
        }
    }
}

fn is_continuation(s: &[u8], p: usize) -> bool {
    s.get(p).is_some_and(|&b| b & 0xC0 == 0x80)
}

/// Printable ASCII (space to `~`): every table weighs each of these characters one weight
/// (the test `printable_ascii_weighs` checks it).
fn printable(c: u8) -> bool {
    (0x20..0x7F).contains(&c)
}

/// ASCII weights with their characters (the upper case of a letter first), sorted by weight.
const fn by_weight(ascii: &[u16; 128]) -> [(u16, u8); 128] {
    let mut t = [(0u16, 0u8); 128];
    let mut i = 0;
    while i < 128 {
        t[i] = (ascii[i], i as u8);
        i += 1;
    }
    // Insertion sort by weight, then character.
    let mut i = 1;
    while i < 128 {
        let mut j = i;
        while j > 0 && (t[j - 1].0 > t[j].0 || (t[j - 1].0 == t[j].0 && t[j - 1].1 > t[j].1)) {
            let x = t[j - 1];
            t[j - 1] = t[j];
            t[j] = x;
            j -= 1;
        }
        i += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    fn cmp(a: &str, b: &str) -> Ordering {
        UCA900.compare(a.as_bytes(), b.as_bytes())
    }

    fn sort_key(s: &[u8]) -> Vec<u8> {
        UCA900.sort_key(s)
    }

    fn key_text(k: &[u8]) -> Vec<u8> {
        UCA900.key_text(k)
    }

    #[test]
    fn orders_as_mysql_0900_ai_ci() {
        // Punctuation and spaces before digits before letters; case and accents ignored.
        let sorted = [
            " ", "_", "-", ",", ";", ":", "!", "?", ".", "'", "\"", "(", ")", "[", "]", "{", "}",
            "@", "*", "/", "\\", "&", "#", "%", "`", "^", "+", "<", "=", ">", "|", "~", "$", "0",
            "1", "9", "a", "b", "z",
        ];
        for w in sorted.windows(2) {
            assert_eq!(cmp(w[0], w[1]), Less, "{:?} < {:?}", w[0], w[1]);
            assert_eq!(cmp(w[1], w[0]), Greater);
        }
        assert_eq!(cmp("a_b", "ab"), Less, "'_' weighs, before letters");
        assert_eq!(cmp("Résumé", "resume"), Equal);
        assert_eq!(cmp("abc", "abc "), Less, "NO PAD");
        assert_eq!(cmp("straße", "strasse"), Equal, "ß expands to ss");
        assert_eq!(cmp("Æ", "ae"), Equal);
        assert_eq!(cmp("ﬁ", "fi"), Equal);
        assert_eq!(cmp("Å", "a"), Equal);
        assert_eq!(cmp("ø", "o"), Equal);
        assert_eq!(cmp("e\u{301}", "é"), Equal, "a combining mark is ignorable");
        assert_eq!(
            cmp("a\u{0}b", "ab"),
            Equal,
            "a control character is ignorable"
        );
        assert_eq!(cmp("Ａ", "a"), Equal, "full width");
        // Greek and Cyrillic after Latin, Han after everything DUCET lists.
        assert_eq!(cmp("z", "α"), Less);
        assert_eq!(cmp("ω", "а"), Less);
        assert_eq!(cmp("я", "中"), Less);
        assert_eq!(cmp("一", "中"), Less, "core Han by code point");
        assert_eq!(
            cmp("\u{9FFF}", "\u{3400}"),
            Greater,
            "unassigned in 9.0 after Han"
        );
        assert_eq!(cmp("\u{1F600}", "\u{1F601}"), Less, "emoji differ");
        // A Hangul syllable weighs its jamo.
        assert_eq!(cmp("\u{AC00}", "\u{1100}\u{1161}"), Equal);
        assert_eq!(cmp("\u{AC01}", "\u{1100}\u{1161}\u{11A8}"), Equal);
        // Bytes that are not UTF-8 weigh as U+FFFD.
        assert_eq!(UCA900.compare(b"\xff", "\u{FFFD}".as_bytes()), Equal);
        assert_eq!(UCA900.compare(b"a\xe9", b"a\xe9"), Equal);
    }

    #[test]
    fn printable_ascii_weighs() {
        for t in [&UCA900, &UNICODE, &UNICODE_520] {
            assert!((0x20..0x7F).all(|c| t.ascii[c] != 0));
        }
    }

    #[test]
    fn the_older_tables_pad_and_weigh_as_mysql_5() {
        for t in [&UNICODE, &UNICODE_520] {
            let c = |a: &str, b: &str| t.compare(a.as_bytes(), b.as_bytes());
            assert_eq!(c("abc", "ABC  "), Equal, "PAD SPACE");
            assert_eq!(t.sort_key(b"abc "), t.sort_key(b"ABC"));
            assert_eq!(c("straße", "STRASSE"), Equal);
            assert_eq!(c("a_b", "ab"), Less);
            assert_eq!(c("-", "0"), Less);
            assert_eq!(c("é", "e"), Equal);
            assert_eq!(c("z", "α"), Less);
            assert_eq!(c("\u{AC00}", "\u{AC01}"), Less);
        }
        // utf8mb4_unicode_ci weighs every character past the BMP alike; 520 does not.
        let emoji = ("\u{1F600}".as_bytes(), "\u{1F601}".as_bytes());
        assert_eq!(UNICODE.compare(emoji.0, emoji.1), Equal);
        assert_eq!(UNICODE_520.compare(emoji.0, emoji.1), Less);
        for t in [&UCA900, &UNICODE, &UNICODE_520] {
            let k = t.sort_key("Straße 中".as_bytes());
            assert_eq!(t.sort_key(&t.key_text(&k)), k);
        }
    }

    #[test]
    fn keys_and_prefixes_agree_with_compare() {
        let words = [
            "",
            " ",
            "a",
            "A",
            "a ",
            "ab",
            "a_b",
            "a-b",
            "abcdefgh",
            "ABCDEFGHIJ",
            "résumé",
            "RESUME",
            "straße",
            "strasse",
            "strase",
            "\u{AC00}",
            "中文",
            "\u{1F600}",
            "a\u{0}b",
            "e\u{301}",
            "0123456789",
            "0123456789-x",
            "z\u{e9}",
            "zé",
            "ze\u{301}x",
        ];
        for t in [&UCA900, &UNICODE, &UNICODE_520] {
            for a in words {
                let ka = t.sort_key(a.as_bytes());
                let (pa, na) = t.sort_prefix(a.as_bytes());
                let wa: Vec<u8> = t
                    .iter(t.padded(a.as_bytes()))
                    .flat_map(u16::to_be_bytes)
                    .collect();
                assert_eq!(na, wa.len().min(8));
                assert_eq!(&pa[..na], &wa[..na]);
                for b in words {
                    let o = t.compare(a.as_bytes(), b.as_bytes());
                    assert_eq!(o == Equal, ka == t.sort_key(b.as_bytes()), "{a:?} {b:?}");
                    // Prefixes that differ order as the strings do.
                    let (pb, _) = t.sort_prefix(b.as_bytes());
                    if pa != pb {
                        assert_eq!(pa.cmp(&pb), o, "{a:?} {b:?}");
                    }
                }
            }
        }
        // The ASCII path agrees with the general one.
        for (a, b) in [
            ("abc", "ABD"),
            ("ab\u{1}c", "abc"),
            ("Zz", "zZ"),
            ("a[", "ab"),
        ] {
            let slow = UCA900.iter(a.as_bytes()).cmp(UCA900.iter(b.as_bytes()));
            assert_eq!(cmp(a, b), slow, "{a:?} {b:?}");
        }
    }

    #[test]
    fn like_weights_and_key_text() {
        let w = |s: &str| s.chars().map(|c| UCA900.char_weight(c)).collect::<Vec<_>>();
        assert_eq!(w("é"), w("E"));
        assert_eq!(w("Ａ"), vec![u32::from(b'A')]);
        assert_ne!(w("ß"), w("s"));
        assert_eq!(w("ß"), w("\u{1E9E}"), "capital sharp s expands alike");
        assert_ne!(w("中"), w("文"));
        assert!(w("α")[0] >= 0x0100_0000);
        assert_eq!(key_text(&sort_key(b"abc-1")), b"ABC-1");
        assert_eq!(key_text(&sort_key("straße".as_bytes())), b"STRASSE");
        assert_eq!(
            key_text(&sort_key("中\u{1F600}".as_bytes())),
            "中\u{1F600}".as_bytes()
        );
        // It weighs what it shows.
        for s in ["ω", "Привет", "ǅ", "\u{AC01}", "½"] {
            let k = sort_key(s.as_bytes());
            assert_eq!(sort_key(&key_text(&k)), k, "{s}");
        }
    }
}
