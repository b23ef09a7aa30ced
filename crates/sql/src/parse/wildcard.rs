//! The `*` and `t.*` items of a view's SELECT, found in its text so CREATE VIEW can store
//! them as the columns they stand for (MySQL does: a view keeps its columns when its tables
//! gain one).
//!
//! INVARIANTS
//! - W1: only the select lists of the query's own SELECTs are looked at: the main one, the
//!   branches of a UNION / EXCEPT / INTERSECT and the parenthesized forms of these; a `*`
//!   inside a function call (`COUNT(*)`) or an expression is never a site.
//! - W2: a site's probe is a query that makes exactly the columns its wildcard stands for:
//!   the statement's WITH clause, `SELECT <wildcard>`, and its SELECT's FROM and WHERE
//!   clauses (GROUP BY, HAVING, ORDER BY and the rest may name the select list's aliases and
//!   do not change which columns a wildcard stands for).
//! - W3: the spans are byte ranges of `text`, in text order and disjoint.

use super::lexer::{self, Kind, Token};
use super::lower::SELECT_MODIFIERS;

/// One wildcard item of a view's SELECT.
#[derive(Debug, PartialEq, Eq)]
pub struct WildcardSite {
    /// Byte range of the item in the text.
    pub span: (usize, usize),
    /// A query making the columns the item stands for (W2).
    pub probe: String,
}

/// Keywords that end the FROM and WHERE clauses of a SELECT (W2).
const CLAUSE_ENDS: &[&str] = &[
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "WINDOW",
    "FOR",
    "LOCK",
    "INTO",
    "PROCEDURE",
    "UNION",
    "EXCEPT",
    "INTERSECT",
];

/// The wildcard items of the query `text` (a SELECT, possibly with WITH and set operations).
pub fn view_wildcards(text: &str) -> Vec<WildcardSite> {
    let tokens = lexer::tokenize(text);
    let main = main_query_start(&tokens);
    let with_prefix = text[..tokens.get(main).map_or(text.len(), |t| t.start)].trim();
    // depth[i]: parentheses open before token i.
    let mut depth = Vec::with_capacity(tokens.len());
    let mut d = 0usize;
    for t in &tokens {
        if t.is_punct(")") {
            d = d.saturating_sub(1);
        }
        depth.push(d);
        if t.is_punct("(") {
            d += 1;
        }
    }
    // query_paren[i]: token i is a `(` around a query of the statement's own (W1).
    let mut query_paren = vec![false; tokens.len()];
    let mut sites = Vec::new();
    for i in main..tokens.len() {
        let t = &tokens[i];
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        if t.is_punct("(") {
            query_paren[i] = i == main
                || prev.is_some_and(|p| {
                    ["UNION", "EXCEPT", "INTERSECT", "ALL", "DISTINCT"]
                        .iter()
                        .any(|k| p.is(k))
                })
                || (i > main && query_paren[i - 1]);
            continue;
        }
        if !t.is("SELECT") || !(i == main || prev.is_some_and(|p| branch_lead(p, &query_paren, i)))
        {
            continue;
        }
        select_sites(text, &tokens, &depth, i, with_prefix, &mut sites);
    }
    sites
}

/// Whether a SELECT right after `prev` (token `i - 1`) starts a branch of the statement's
/// own query: after a query parenthesis or a set operation at that level.
fn branch_lead(prev: &Token, query_paren: &[bool], i: usize) -> bool {
    (prev.is_punct("(") && query_paren[i - 1])
        || ["UNION", "EXCEPT", "INTERSECT", "ALL", "DISTINCT"]
            .iter()
            .any(|k| prev.is(k))
}

/// The index of the token that starts the main query: the first one, or the one after a
/// leading WITH [RECURSIVE] clause (its CTE bodies are the parentheses after AS).
fn main_query_start(tokens: &[Token]) -> usize {
    if !tokens.first().is_some_and(|t| t.is("WITH")) {
        return 0;
    }
    let mut depth = 0usize;
    let mut body = false;
    for (i, t) in tokens.iter().enumerate() {
        if t.is_punct("(") {
            if depth == 0 && i > 0 && tokens[i - 1].is("AS") {
                body = true;
            }
            depth += 1;
        } else if t.is_punct(")") {
            depth = depth.saturating_sub(1);
            if depth == 0 && body {
                body = false;
                if !tokens.get(i + 1).is_some_and(|n| n.is_punct(",")) {
                    return i + 1;
                }
            }
        }
    }
    tokens.len()
}

/// The wildcard items of the SELECT at token `s`, added to `out`.
fn select_sites(
    text: &str,
    tokens: &[Token],
    depth: &[usize],
    s: usize,
    with_prefix: &str,
    out: &mut Vec<WildcardSite>,
) {
    let d = depth[s];
    let at_level = |j: usize| depth[j] == d && !tokens[j].is_punct(")");
    let mut i = s + 1;
    while i < tokens.len() && SELECT_MODIFIERS.iter().any(|m| tokens[i].is(m)) {
        i += 1;
    }
    // Items up to FROM at this level; none without FROM (a wildcard needs a table).
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut begin = i;
    let mut from = None;
    while i < tokens.len() && depth[i] >= d {
        if at_level(i) && tokens[i].is("FROM") {
            items.push((begin, i));
            from = Some(i);
            break;
        }
        if at_level(i) && tokens[i].is_punct(",") {
            items.push((begin, i));
            begin = i + 1;
        }
        i += 1;
    }
    let Some(from) = from else {
        return;
    };
    let mut end = from + 1;
    while end < tokens.len()
        && depth[end] >= d
        && !(at_level(end) && CLAUSE_ENDS.iter().any(|k| tokens[end].is(k)))
    {
        end += 1;
    }
    let tail_end = tokens
        .get(end)
        .map_or(text.len(), |t| t.start)
        .min(text.len());
    let tail = &text[tokens[from].start..tail_end];
    for (a, b) in items {
        if !is_wildcard(&tokens[a..b]) {
            continue;
        }
        let span = (tokens[a].start, tokens[b - 1].end());
        let probe = format!(
            "{with_prefix}{}SELECT {} {}",
            if with_prefix.is_empty() { "" } else { " " },
            &text[span.0..span.1],
            tail.trim_end()
        );
        out.push(WildcardSite { span, probe });
    }
}

/// `*` or `name.*` or `db.name.*`.
fn is_wildcard(item: &[Token]) -> bool {
    let Some((last, names)) = item.split_last() else {
        return false;
    };
    if !last.is_punct("*") {
        return false;
    }
    names.len() % 2 == 0
        && names
            .chunks(2)
            .all(|c| matches!(c[0].kind, Kind::Word | Kind::QuotedIdent) && c[1].is_punct("."))
}
