//! JSON values with MySQL 8.0's semantics: parsing JSON text (MySQL's parser messages and
//! offsets), the canonical text a JSON column stores and a client is sent, path expressions
//! (`$.a[1]`, `$.*`, `$[*]`, `$**.b`, `$[last-1]`, `$[1 to 3]`) and what they select, and the
//! equality of JSON values that JSON_CONTAINS, JSON_OVERLAPS and MEMBER OF use.
//!
//! INVARIANTS
//! - J1: an `Object`'s members are sorted by key length, then key bytes (MySQL's order, which
//!   JSON_KEYS and every printed object show), with unique keys; the last of duplicate keys
//!   wins. Objects are only built through `Json::object` / `Json::insert_member`.
//! - J2: `to_text` is the canonical text (docs/format/sql-values.md): parsing it gives the same
//!   value back, except that a DECIMAL comes back as a DOUBLE (JSON text has no decimals).
//! - J3: nesting is at most `MAX_DEPTH` levels deep; deeper text is refused by `parse`, so the
//!   recursive functions here recurse at most that far.
//! - Nothing here panics on client input: bad text and bad paths are `Err` values carrying the
//!   message and offset MySQL reports.

use std::cmp::Ordering;

use super::decimal::Decimal;
use super::num::format_double;

/// MySQL's limit on the nesting of a JSON document.
pub const MAX_DEPTH: usize = 100;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Str(String),
    Array(Vec<Json>),
    /// Members in MySQL's key order (J1).
    Object(Vec<(String, Json)>),
}

/// Why a JSON text was refused: the parser's message and the byte offset it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: &'static str,
    pub offset: usize,
    /// Nested deeper than `MAX_DEPTH` (MySQL reports ER_JSON_DOCUMENT_TOO_DEEP instead).
    pub too_deep: bool,
}

/// MySQL's order of object keys: shorter first, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Json {
    /// An object from members in any order; of duplicate keys the last wins (J1).
    pub fn object(members: Vec<(String, Json)>) -> Json {
        let mut o = Json::Object(Vec::with_capacity(members.len()));
        for (k, v) in members {
            o.insert_member(k, v);
        }
        o
    }

    /// Sets member `key` of an object (replacing it if present); no-op on other values.
    pub fn insert_member(&mut self, key: String, value: Json) {
        if let Json::Object(m) = self {
            match m.binary_search_by(|(k, _)| key_order(k, &key)) {
                Ok(i) => m[i].1 = value,
                Err(i) => m.insert(i, (key, value)),
            }
        }
    }

    /// Member `key` of an object.
    pub fn member(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    fn member_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(m) => match m.binary_search_by(|(k, _)| key_order(k, key)) {
                Ok(i) => Some(&mut m[i].1),
                Err(_) => None,
            },
            _ => None,
        }
    }

    /// JSON_TYPE's name for this value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) => "INTEGER",
            Json::UInt(_) => "UNSIGNED INTEGER",
            Json::Double(_) => "DOUBLE",
            Json::Decimal(_) => "DECIMAL",
            Json::Str(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// JSON_DEPTH: 1 for a scalar or an empty container.
    pub fn depth(&self) -> usize {
        match self {
            Json::Array(a) => 1 + a.iter().map(Json::depth).max().unwrap_or(0),
            Json::Object(m) => 1 + m.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// JSON_LENGTH: elements of an array, members of an object, 1 for a scalar.
    pub fn length(&self) -> usize {
        match self {
            Json::Array(a) => a.len(),
            Json::Object(m) => m.len(),
            _ => 1,
        }
    }

    /// The canonical text (J2): `{"a": 1, "b": [true, null]}`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// JSON_PRETTY's text: one member or element per line, indented by two spaces.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        let newline = |out: &mut String, level: usize| {
            if let Some(n) = indent {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', n * level));
            }
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::UInt(u) => out.push_str(&u.to_string()),
            Json::Double(d) => {
                let t = format_double(*d);
                let plain = !t.contains(['.', 'e', 'E', 'n', 'N']);
                out.push_str(&t);
                if plain {
                    out.push_str(".0");
                }
            }
            Json::Decimal(d) => out.push_str(&d.to_string()),
            Json::Str(s) => quote_into(s, out),
            Json::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        if indent.is_none() {
                            out.push(' ');
                        }
                    }
                    newline(out, level + 1);
                    v.write(out, indent, level + 1);
                }
                if !a.is_empty() {
                    newline(out, level);
                }
                out.push(']');
            }
            Json::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        if indent.is_none() {
                            out.push(' ');
                        }
                    }
                    newline(out, level + 1);
                    quote_into(k, out);
                    out.push_str(": ");
                    v.write(out, indent, level + 1);
                }
                if !m.is_empty() {
                    newline(out, level);
                }
                out.push('}');
            }
        }
    }

    /// The value as a number, for comparisons between numeric kinds.
    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Int(i) => Some(*i as f64),
            Json::UInt(u) => Some(*u as f64),
            Json::Double(d) => Some(*d),
            Json::Decimal(d) => d.to_string().parse().ok(),
            _ => None,
        }
    }

    /// Equality of JSON values as MySQL compares them: numbers by value whatever their kind,
    /// strings bytewise, arrays element by element, objects member by member.
    pub fn equals(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Int(a), Json::Int(b)) => a == b,
            (Json::UInt(a), Json::UInt(b)) => a == b,
            (Json::Int(a), Json::UInt(b)) | (Json::UInt(b), Json::Int(a)) => {
                i128::from(*a) == i128::from(*b)
            }
            (Json::Array(a), Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.equals(y))
            }
            (Json::Object(a), Json::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.equals(vb))
            }
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x == y,
                _ => a == b,
            },
        }
    }

    /// MySQL's order between JSON values of different kinds (higher compares greater):
    /// null, then numbers, strings, objects, arrays, booleans.
    fn rank(&self) -> u8 {
        match self {
            Json::Null => 0,
            Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => 1,
            Json::Str(_) => 2,
            Json::Object(_) => 3,
            Json::Array(_) => 4,
            Json::Bool(_) => 5,
        }
    }

    /// The comparison of JSON values (`=`, `<` ... with a JSON operand): values of one kind
    /// by value (numbers of any kind numerically, strings bytewise, arrays element by element,
    /// objects equal or not), values of different kinds by `rank`.
    pub fn compare(&self, other: &Json) -> Ordering {
        match (self, other) {
            (a, b) if a.rank() != b.rank() => a.rank().cmp(&b.rank()),
            (Json::Int(a), Json::Int(b)) => a.cmp(b),
            (Json::UInt(a), Json::UInt(b)) => a.cmp(b),
            (Json::Int(a), Json::UInt(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (Json::UInt(a), Json::Int(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (Json::Str(a), Json::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Json::Bool(a), Json::Bool(b)) => a.cmp(b),
            (Json::Array(a), Json::Array(b)) => a
                .iter()
                .zip(b)
                .map(|(x, y)| x.compare(y))
                .find(|o| o.is_ne())
                .unwrap_or_else(|| a.len().cmp(&b.len())),
            (Json::Object(_), Json::Object(_)) => {
                if self.equals(other) {
                    Ordering::Equal
                } else {
                    self.to_text().cmp(&other.to_text())
                }
            }
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
                _ => Ordering::Equal,
            },
        }
    }

    /// JSON_CONTAINS(self, candidate): a scalar contains an equal scalar; an array contains
    /// each element of an array candidate (or a non-array candidate) in one of its elements;
    /// an object contains an object whose every member it has with a containing value.
    pub fn contains(&self, candidate: &Json) -> bool {
        match (self, candidate) {
            (Json::Array(t), Json::Array(c)) => c.iter().all(|x| t.iter().any(|e| e.contains(x))),
            (Json::Array(t), c) => t.iter().any(|e| e.contains(c)),
            (Json::Object(_), Json::Object(c)) => c
                .iter()
                .all(|(k, v)| self.member(k).is_some_and(|mine| mine.contains(v))),
            (Json::Object(_), _) => false,
            (t, c) => t.equals(c),
        }
    }

    /// JSON_OVERLAPS: two arrays share an element, two objects share a member, an array holds
    /// the scalar, or two scalars are equal.
    pub fn overlaps(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Array(a), Json::Array(b)) => a.iter().any(|x| b.iter().any(|y| x.equals(y))),
            (Json::Array(a), s) | (s, Json::Array(a)) => a.iter().any(|x| x.equals(s)),
            (Json::Object(a), Json::Object(_)) => a
                .iter()
                .any(|(k, v)| other.member(k).is_some_and(|o| o.equals(v))),
            (a, b) => a.equals(b),
        }
    }
}

/// `s` as a JSON string literal, with MySQL's escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    quote_into(s, &mut out);
    out
}

fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses a JSON text (a whole document: one value, optionally surrounded by whitespace).
pub fn parse(text: &[u8]) -> Result<Json, SyntaxError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.i == text.len() {
        return Err(p.err("The document is empty."));
    }
    let v = p.value(0)?;
    p.ws();
    if p.i < text.len() {
        return Err(p.err("The document root must not be followed by other values."));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, message: &'static str) -> SyntaxError {
        self.err_at(message, self.i)
    }

    fn err_at(&self, message: &'static str, offset: usize) -> SyntaxError {
        SyntaxError {
            message,
            offset,
            too_deep: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        match self.peek() {
            Some(b'{') | Some(b'[') if depth >= MAX_DEPTH => Err(SyntaxError {
                message: "The JSON document exceeds the maximum depth.",
                offset: self.i,
                too_deep: true,
            }),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Invalid value.")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json, SyntaxError> {
        for &c in word {
            if self.peek() != Some(c) {
                return Err(self.err("Invalid value."));
            }
            self.i += 1;
        }
        Ok(v)
    }

    fn object(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Json::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("Missing a name for object member."));
            }
            let k = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("Missing a colon after a name of object member."));
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            members.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::object(members));
                }
                _ => return Err(self.err("Missing a comma or '}' after an object member.")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.err("Missing a comma or ']' after an array element.")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut n = 0u32;
        for _ in 0..4 {
            let d = self
                .peek()
                .and_then(|c| (c as char).to_digit(16))
                .ok_or_else(|| self.err("Incorrect hex digit after \\u escape in string."))?;
            n = n * 16 + d;
            self.i += 1;
        }
        Ok(n)
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Result<String, SyntaxError> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("Missing a closing quotation mark in string."));
            };
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    let at = self.i;
                    self.i += 1;
                    let e = self.peek();
                    self.i += 1;
                    let simple = match e {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'b') => 8,
                        Some(b'f') => 12,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'u') => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Err(
                                        self.err("The surrogate pair in string is invalid.")
                                    );
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(
                                        self.err("The surrogate pair in string is invalid.")
                                    );
                                }
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                            }
                            // A lone low surrogate is kept as U+FFFD (it has no UTF-8 form).
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => return Err(self.err_at("Invalid escape character in string.", at)),
                    };
                    out.push(simple);
                }
                0..=0x1f => return Err(self.err("Invalid encoding in string.")),
                _ => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.err("Invalid encoding in string."))
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Json, SyntaxError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("Invalid value.")),
        }
        let mut real = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("Miss fraction part in number."));
            }
            real = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("Miss exponent in number."));
            }
            real = true;
        }
        // The slice is ASCII digits and signs only.
        let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("0");
        if !real {
            if let Ok(i) = t.parse::<i64>() {
                return Ok(if t == "-0" {
                    Json::Double(-0.0)
                } else {
                    Json::Int(i)
                });
            }
            if let Ok(u) = t.parse::<u64>() {
                return Ok(Json::UInt(u));
            }
        }
        match t.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Json::Double(d)),
            _ => Err(self.err_at("Number too big to be stored in double.", start)),
        }
    }
}

/// An array position in a path: `n` or `last - n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayIndex {
    FromStart(u64),
    FromLast(u64),
}

impl ArrayIndex {
    /// The position in an array of `len` elements (None: before the first one).
    pub fn resolve(self, len: usize) -> Option<usize> {
        match self {
            ArrayIndex::FromStart(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            ArrayIndex::FromLast(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                (len > n).then(|| len - 1 - n)
            }
        }
    }
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leg {
    Member(String),
    /// `.*`
    AnyMember,
    Index(ArrayIndex),
    /// `[m to n]`
    Range(ArrayIndex, ArrayIndex),
    /// `[*]`
    AnyIndex,
    /// `**`: the value and everything nested in it.
    Ellipsis,
}

/// A parsed path expression (`$` and its legs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub legs: Vec<Leg>,
}

impl Path {
    /// Has `*`, `**` or a range: may select more than one value.
    pub fn is_wild(&self) -> bool {
        self.legs.iter().any(|l| {
            matches!(
                l,
                Leg::AnyMember | Leg::AnyIndex | Leg::Ellipsis | Leg::Range(..)
            )
        })
    }

    /// The values this path selects in `doc`, in document order, each once.
    pub fn select<'a>(&self, doc: &'a Json) -> Vec<&'a Json> {
        let mut cur = vec![doc];
        for leg in &self.legs {
            let mut next: Vec<&Json> = Vec::new();
            for v in cur {
                step(v, leg, &mut next);
            }
            if matches!(leg, Leg::Ellipsis) {
                let mut seen: Vec<*const Json> = Vec::with_capacity(next.len());
                next.retain(|v| {
                    let p: *const Json = *v;
                    if seen.contains(&p) {
                        false
                    } else {
                        seen.push(p);
                        true
                    }
                });
            }
            cur = next;
            if cur.is_empty() {
                break;
            }
        }
        cur
    }

    /// The one value a path without wildcards selects, for changing it.
    pub fn select_mut<'a>(&self, doc: &'a mut Json) -> Option<&'a mut Json> {
        let mut cur = doc;
        for leg in &self.legs {
            cur = match leg {
                Leg::Member(k) => cur.member_mut(k)?,
                Leg::Index(i) => match cur {
                    Json::Array(a) => {
                        let n = i.resolve(a.len())?;
                        a.get_mut(n)?
                    }
                    other => {
                        if i.resolve(1) == Some(0) {
                            other
                        } else {
                            return None;
                        }
                    }
                },
                _ => return None,
            };
        }
        Some(cur)
    }
}

fn step<'a>(v: &'a Json, leg: &Leg, out: &mut Vec<&'a Json>) {
    match (leg, v) {
        (Leg::Member(k), _) => out.extend(v.member(k)),
        (Leg::AnyMember, Json::Object(m)) => out.extend(m.iter().map(|(_, x)| x)),
        (Leg::Index(i), Json::Array(a)) => {
            if let Some(n) = i.resolve(a.len()) {
                out.extend(a.get(n));
            }
        }
        // A scalar or an object is an array of itself for [0] and [last].
        (Leg::Index(i), _) if i.resolve(1) == Some(0) => out.push(v),
        (Leg::Range(a, b), Json::Array(items)) => {
            if let (Some(lo), Some(hi)) = (a.resolve(items.len()), b.resolve(items.len())) {
                let hi = hi.min(items.len().saturating_sub(1));
                if lo <= hi && lo < items.len() {
                    out.extend(&items[lo..=hi]);
                }
            }
        }
        (Leg::Range(a, b), _) if a.resolve(1) == Some(0) && b.resolve(1).is_some() => out.push(v),
        (Leg::AnyIndex, Json::Array(a)) => out.extend(a.iter()),
        (Leg::Ellipsis, _) => descendants(v, out),
        _ => {}
    }
}

fn descendants<'a>(v: &'a Json, out: &mut Vec<&'a Json>) {
    out.push(v);
    match v {
        Json::Array(a) => a.iter().for_each(|x| descendants(x, out)),
        Json::Object(m) => m.iter().for_each(|(_, x)| descendants(x, out)),
        _ => {}
    }
}

/// Parses a path expression; `Err(position)` is the character position MySQL reports in
/// ER_INVALID_JSON_PATH.
pub fn parse_path(text: &str) -> Result<Path, usize> {
    let s = text.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    };
    ws(&mut i);
    if s.get(i) != Some(&b'$') {
        return Err(i + 1);
    }
    i += 1;
    let mut legs = Vec::new();
    loop {
        ws(&mut i);
        let Some(&c) = s.get(i) else { break };
        match c {
            b'.' => {
                i += 1;
                ws(&mut i);
                match s.get(i) {
                    Some(b'*') => {
                        i += 1;
                        legs.push(Leg::AnyMember);
                    }
                    Some(b'"') => {
                        let mut p = Parser { s, i };
                        let k = p.string().map_err(|_| s.len())?;
                        i = p.i;
                        legs.push(Leg::Member(k));
                    }
                    _ => {
                        let start = i;
                        while s
                            .get(i)
                            .is_some_and(|c| !c.is_ascii_whitespace() && !b".[*".contains(c))
                        {
                            i += 1;
                        }
                        let name = &text[start..i];
                        if !is_identifier(name) {
                            return Err(i);
                        }
                        legs.push(Leg::Member(name.to_string()));
                    }
                }
            }
            b'[' => {
                i += 1;
                ws(&mut i);
                if s.get(i) == Some(&b'*') {
                    i += 1;
                    ws(&mut i);
                    if s.get(i) != Some(&b']') {
                        return Err(i + 1);
                    }
                    i += 1;
                    legs.push(Leg::AnyIndex);
                    continue;
                }
                let a = array_index(s, &mut i)?;
                ws(&mut i);
                let leg = if s[i..].starts_with(b"to") {
                    i += 2;
                    let b = array_index(s, &mut i)?;
                    ws(&mut i);
                    Leg::Range(a, b)
                } else {
                    Leg::Index(a)
                };
                if s.get(i) != Some(&b']') {
                    return Err(i + 1);
                }
                i += 1;
                legs.push(leg);
            }
            b'*' if s.get(i + 1) == Some(&b'*') => {
                i += 2;
                legs.push(Leg::Ellipsis);
            }
            _ => return Err(i + 1),
        }
    }
    // `**` must be followed by a leg.
    if matches!(legs.last(), Some(Leg::Ellipsis)) {
        return Err(s.len());
    }
    Ok(Path { legs })
}

fn array_index(s: &[u8], i: &mut usize) -> Result<ArrayIndex, usize> {
    while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
        *i += 1;
    }
    let number = |i: &mut usize| -> Result<u64, usize> {
        let start = *i;
        while s.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        std::str::from_utf8(&s[start..*i])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or(*i + 1)
    };
    if s[*i..].starts_with(b"last") {
        *i += 4;
        while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
        if s.get(*i) == Some(&b'-') {
            *i += 1;
            while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
                *i += 1;
            }
            return Ok(ArrayIndex::FromLast(number(i)?));
        }
        return Ok(ArrayIndex::FromLast(0));
    }
    Ok(ArrayIndex::FromStart(number(i)?))
}

/// An ECMAScript identifier (what an unquoted member name may be).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || first == '$' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c == '$' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(t: &str) -> String {
        parse(t.as_bytes()).map(|j| j.to_text()).unwrap_or_default()
    }

    #[test]
    fn canonical_text_sorts_keys_by_length_then_bytes() {
        assert_eq!(
            canon(r#"{"bb":1,"a":[1,2.5,"x"],"c":null}"#),
            r#"{"a": [1, 2.5, "x"], "c": null, "bb": 1}"#
        );
        assert_eq!(canon(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(canon("  [ ]  "), "[]");
        assert_eq!(canon("3.0"), "3.0");
        assert_eq!(canon("1e2"), "100.0");
        assert_eq!(canon("18446744073709551615"), "18446744073709551615");
        assert_eq!(
            canon(r#""a\"\\\n\u00e9\ud83d\ude00""#),
            "\"a\\\"\\\\\\n\u{e9}\u{1F600}\""
        );
    }

    #[test]
    fn syntax_errors_carry_mysql_messages_and_offsets() {
        let e = |t: &str| parse(t.as_bytes()).err().map(|e| (e.message, e.offset));
        assert_eq!(e(""), Some(("The document is empty.", 0)));
        assert_eq!(
            e("{\"a\" 1}"),
            Some(("Missing a colon after a name of object member.", 5))
        );
        assert_eq!(
            e("[1 2]"),
            Some(("Missing a comma or ']' after an array element.", 3))
        );
        assert_eq!(e("{1}"), Some(("Missing a name for object member.", 1)));
        assert_eq!(
            e("1 2"),
            Some(("The document root must not be followed by other values.", 2))
        );
        assert_eq!(e("abc"), Some(("Invalid value.", 0)));
        assert_eq!(e("1."), Some(("Miss fraction part in number.", 2)));
        assert_eq!(
            e("\"a"),
            Some(("Missing a closing quotation mark in string.", 2))
        );
        let deep = "[".repeat(101) + &"]".repeat(101);
        assert!(parse(deep.as_bytes()).is_err_and(|e| e.too_deep));
    }

    #[test]
    fn paths_select_like_mysql() {
        let doc = parse(br#"{"a": [10, 20, {"b": 1}], "c": {"b": 2}}"#).unwrap_or(Json::Null);
        let sel = |p: &str| {
            let path = parse_path(p).unwrap_or(Path { legs: vec![] });
            path.select(&doc)
                .iter()
                .map(|j| j.to_text())
                .collect::<Vec<_>>()
                .join(";")
        };
        assert_eq!(sel("$.a[1]"), "20");
        assert_eq!(sel("$.a[last]"), r#"{"b": 1}"#);
        assert_eq!(sel("$.a[last-1]"), "20");
        assert_eq!(sel("$.a[0 to 1]"), "10;20");
        assert_eq!(sel("$**.b"), "1;2");
        assert_eq!(sel("$.*.b"), "2");
        assert_eq!(sel("$.c[0].b"), "2");
        assert_eq!(sel("$.\"a\"[*]"), r#"10;20;{"b": 1}"#);
        assert_eq!(parse_path("a"), Err(1));
        assert_eq!(parse_path("$.:typeField"), Err(12));
        assert!(parse_path("$**").is_err());
    }
}
