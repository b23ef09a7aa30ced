//! A small MySQL lexer: the token stream the statement splitter, the placeholder counter, the
//! pre-dispatcher and the select-item text finder work on.
//!
//! INVARIANTS
//! - Never fails and never panics: an unterminated string or quoted identifier becomes a
//!   `Kind::Unterminated` token running to the end of the text.
//! - Every token is a slice of the input (`start` is its byte offset), so positions map back to
//!   the text exactly.
//! - Comments (`-- `, `#`, `/* */`) produce no token; `/*! ... */` and `/*!NNNNN ... */` are
//!   content: their opening and closing markers are skipped and what lies between is lexed,
//!   nested ones too (mariadb-dump writes `/*!80001 CREATE ROLE 'r'/*!80001 @'%'*/ */`).
//!   MariaDB's own `/*M!NNNNNN ... */` is a comment, a nested comment inside it included, and
//!   so is `/*!NNNNN ... */` whose version (5 or 6 digits) is past `SERVER_VERSION_ID`.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A bare word: keyword or identifier.
    Word,
    /// `identifier` (backquoted).
    QuotedIdent,
    /// 'string' or "string".
    Str,
    Number,
    /// `?`
    Param,
    /// Operators and punctuation (`<=>`, `(`, `;`, `@`, ...).
    Punct,
    /// A string or quoted identifier without its closing quote.
    Unterminated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub start: usize,
}

impl Token<'_> {
    /// A bare word equal to `kw`, ignoring case.
    pub fn is(&self, kw: &str) -> bool {
        self.kind == Kind::Word && self.text.eq_ignore_ascii_case(kw)
    }

    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.text == p
    }

    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// The value of an identifier-like token (word or backquoted) or a string.
    pub fn value(&self) -> String {
        match self.kind {
            Kind::QuotedIdent => unquote_ident(self.text),
            Kind::Str => unquote_string(self.text),
            _ => self.text.to_string(),
        }
    }
}

const MULTI_PUNCT: [&str; 10] = ["<=>", "<=", ">=", "<>", "!=", ":=", "<<", ">>", "&&", "||"];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

/// A statement a latin1 client sent, as UTF-8 text: each byte is one latin1 character
/// (`types::latin1_char`), except inside `_binary'...'` literals, whose bytes are data: those
/// become `X'...'` literals so they reach the executor unchanged (PyMySQL sends bytes so).
pub fn latin1_statement(b: &[u8]) -> String {
    let latin1 = |b: &[u8]| b.iter().map(|&c| crate::types::latin1_char(c)).collect();
    rewrite_literals(
        b,
        |t, i| t[i].is("_binary") && t.get(i + 1).is_some_and(|s| s.kind == Kind::Str),
        latin1,
    )
}

/// A statement a utf8mb4 client sent, as UTF-8 text. Bytes that are not UTF-8 can only be
/// data: a string literal holding some (a BLOB value mysqldump wrote as it is) becomes an
/// `X'...'` literal with the same bytes; elsewhere they become U+FFFD.
pub fn utf8_statement(b: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(b) {
        return s.to_string();
    }
    let byte_of = |c: char| u8::try_from(u32::from(c)).unwrap_or(b'?');
    let hex = |t: &[Token], i: usize| {
        t[i].kind == Kind::Str && {
            let raw: Vec<u8> = unquote_string(t[i].text).chars().map(byte_of).collect();
            std::str::from_utf8(&raw).is_err()
        }
    };
    rewrite_literals(b, hex, |b| String::from_utf8_lossy(b).into_owned())
}

/// `b` as text: the token at `i` for which `hex(tokens, i)` holds starts a string literal
/// written as `X'...'` (an introducer token before the literal is dropped with it: a hex
/// literal is binary); every other run of bytes goes through `text`.
fn rewrite_literals(
    b: &[u8],
    hex: impl Fn(&[Token], usize) -> bool,
    text: impl Fn(&[u8]) -> String,
) -> String {
    // Bytes as the characters U+0000..U+00FF: lexable, and each maps back to its byte.
    let iso: String = b.iter().map(|&c| char::from(c)).collect();
    let byte_of = |c: char| u8::try_from(u32::from(c)).unwrap_or(b'?');
    let bytes = |s: &str| -> Vec<u8> { s.chars().map(byte_of).collect() };
    let mut out = String::with_capacity(b.len() + 8);
    let mut last = 0;
    let toks = tokenize(&iso);
    let mut i = 0;
    while i < toks.len() {
        if !hex(&toks, i) {
            i += 1;
            continue;
        }
        let lit = if toks[i].kind == Kind::Str { i } else { i + 1 };
        out.push_str(&text(&bytes(&iso[last..toks[i].start])));
        out.push_str("X'");
        for c in unquote_string(toks[lit].text).chars() {
            out.push_str(&format!("{:02X}", byte_of(c)));
        }
        out.push('\'');
        last = toks[lit].end();
        i = lit + 1;
    }
    out.push_str(&text(&bytes(&iso[last..])));
    out
}

/// The MySQL version executable comments are judged against (vars.rs SERVER_VERSION, 8.0.40):
/// `/*!NNNNN ... */` runs when NNNNN is at most this.
pub const SERVER_VERSION_ID: u32 = 80040;

/// The length of a comment skipped whole at the start of `rest` (`/*M!...*/`, or `/*!NNNNN`
/// for a later version), comments nested in it included (to the end of the text if it is not
/// closed).
fn nested_comment_len(rest: &str) -> usize {
    let b = rest.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// Tokenizes `sql`.
pub fn tokenize(sql: &str) -> Vec<Token<'_>> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Executable comments open around the position.
    let mut exec_depth = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        let rest = &sql[i..];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if let Some(after) = rest.strip_prefix("/*!") {
            // Executable comment: skip the marker and an optional 5- or 6-digit version; one
            // for a later version than ours is a comment.
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let version = match digits {
                5 | 6 => after[..digits].parse::<u32>().ok(),
                _ => None,
            };
            if version.is_some_and(|v| v > SERVER_VERSION_ID) {
                i += nested_comment_len(rest);
            } else {
                i += 3 + if version.is_some() { digits } else { 0 };
                exec_depth += 1;
            }
        } else if exec_depth > 0 && rest.starts_with("*/") {
            exec_depth -= 1;
            i += 2;
        } else if rest.starts_with("/*M!") {
            i += nested_comment_len(rest);
        } else if let Some(body) = rest.strip_prefix("/*") {
            i = body.find("*/").map_or(bytes.len(), |p| i + 2 + p + 2);
        } else if b == b'#' || is_dash_comment(rest) {
            i = rest.find('\n').map_or(bytes.len(), |p| i + p + 1);
        } else if b == b'\'' || b == b'"' || b == b'`' {
            let (len, closed) = quoted_len(rest, b);
            let kind = match (closed, b) {
                (false, _) => Kind::Unterminated,
                (true, b'`') => Kind::QuotedIdent,
                _ => Kind::Str,
            };
            out.push(Token {
                kind,
                text: &rest[..len],
                start: i,
            });
            i += len;
        } else if b.is_ascii_digit()
            || (b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let len = number_len(rest);
            // `1abc` is an identifier in MySQL.
            let word_len = rest
                .char_indices()
                .find(|&(_, c)| !is_word_char(c))
                .map_or(rest.len(), |(p, _)| p);
            let (kind, len) = if word_len > len
                && !rest[..word_len].bytes().all(|c| c.is_ascii_digit())
                && !rest.starts_with("0x")
                && !rest.starts_with("0b")
            {
                (Kind::Word, word_len)
            } else {
                (Kind::Number, len)
            };
            out.push(Token {
                kind,
                text: &rest[..len],
                start: i,
            });
            i += len;
        } else if rest.chars().next().is_some_and(is_word_char) {
            let len = rest
                .char_indices()
                .find(|&(_, c)| !is_word_char(c))
                .map_or(rest.len(), |(p, _)| p);
            out.push(Token {
                kind: Kind::Word,
                text: &rest[..len],
                start: i,
            });
            i += len;
        } else {
            let len = MULTI_PUNCT
                .iter()
                .find(|p| rest.starts_with(*p))
                .map_or_else(
                    || rest.chars().next().map_or(1, char::len_utf8),
                    |p| p.len(),
                );
            let kind = if b == b'?' { Kind::Param } else { Kind::Punct };
            out.push(Token {
                kind,
                text: &rest[..len],
                start: i,
            });
            i += len;
        }
    }
    out
}

/// `-- ` starts a comment only when followed by whitespace, a control character or the end.
fn is_dash_comment(rest: &str) -> bool {
    rest.starts_with("--")
        && rest
            .as_bytes()
            .get(2)
            .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control())
}

/// Length of a quoted token starting at `rest[0] == q`, and whether it is closed. Doubled
/// quotes and (in strings) backslash escapes stay inside.
fn quoted_len(rest: &str, q: u8) -> (usize, bool) {
    let bytes = rest.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' && q != b'`' {
            i += 2;
        } else if b == q {
            if bytes.get(i + 1) == Some(&q) {
                i += 2;
            } else {
                return (i + 1, true);
            }
        } else {
            i += 1;
        }
    }
    (rest.len(), false)
}

fn number_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    if rest.len() > 2 && (rest.starts_with("0x") || rest.starts_with("0b")) {
        return 2 + bytes[2..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
    }
    let mut i = bytes
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        let digits = bytes[(i + 1 + sign).min(bytes.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            i += 1 + sign + digits;
        }
    }
    i
}

/// A backquoted identifier's name.
fn unquote_ident(raw: &str) -> String {
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
    inner.replace("``", "`")
}

/// A quoted string's value: doubled quotes and MySQL's backslash escapes resolved.
pub fn unquote_string(raw: &str) -> String {
    let mut chars = raw.chars();
    let q = chars.next();
    let inner: Vec<char> = chars.collect();
    let inner = &inner[..inner.len().saturating_sub(1)];
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        if c == '\\' && i + 1 < inner.len() {
            let e = inner[i + 1];
            // \% and \_ keep the backslash (LIKE patterns).
            if e == '%' || e == '_' {
                out.push('\\');
            }
            out.push(match e {
                '0' => '\0',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'b' => '\u{8}',
                'Z' => '\u{1a}',
                _ => e,
            });
            i += 2;
        } else if Some(c) == q && inner.get(i + 1) == Some(&c) {
            out.push(c);
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Line number (from 1) of byte offset `pos`.
pub fn line_of(sql: &str, pos: usize) -> usize {
    1 + sql
        .get(..pos)
        .unwrap_or(sql)
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
}

/// Byte offset of a 1-based (line, column-in-characters) position, as sqlparser reports it.
pub fn offset_of(sql: &str, line: u64, column: u64) -> Option<usize> {
    let mut cur_line = 1u64;
    let mut cur_col = 1u64;
    for (i, c) in sql.char_indices() {
        if cur_line == line && cur_col == column {
            return Some(i);
        }
        if c == '\n' {
            cur_line += 1;
            cur_col = 1;
        } else {
            cur_col += 1;
        }
    }
    (cur_line == line && cur_col == column).then_some(sql.len())
}
