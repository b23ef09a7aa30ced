//! MySQL statement text → our AST (`crate::ast`).
//!
//! Pipeline: `lexer` tokenizes; `special` recognises by keyword prefix what sqlparser cannot
//! parse or parses wrongly (SHOW, SET, transactions, XA, users, ...) and rewrites the few
//! constructs it mis-handles inside otherwise normal statements (`a MOD b`, `LOCK IN SHARE
//! MODE`) without moving any other character; everything else goes to sqlparser's MySQL
//! dialect (`dialect`: MySqlDialect with MySQL's precedence for `||` and `&&`) and is lowered by `lower` (statements) and `expr` (expressions, types). `fast`
//! reads INSERT ... VALUES with literal values and simple single-table SELECT, UPDATE and
//! DELETE straight from the tokens.
//!
//! INVARIANTS
//! - No input panics; errors are `SqlError`s: 1065 for an empty query, 1064 with MySQL's
//!   `near '...' at line N` for syntax errors, 1235 for recognised but unsupported statements.
//! - `?` placeholders become `Expr::Param(i)` numbered from 0 in text order: a placeholder's
//!   number is its rank among the `?` tokens of the statement, found from sqlparser's span.

mod cte;
mod dialect;
mod expr;
mod fast;
mod lexer;
pub use lexer::SERVER_VERSION_ID;
mod lower;
mod rollup;
mod special;
#[cfg(test)]
mod tests;
mod wildcard;

use crate::ast::Statement;
use crate::error::{SqlError, ER_EMPTY_QUERY};
pub use lexer::{latin1_statement, utf8_statement};
use lexer::{Kind, Token};
pub use special::compound_unit;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token as SpToken;
pub use wildcard::{view_wildcards, WildcardSite};

/// Splits a COM_QUERY text (CLIENT_MULTI_STATEMENTS) at `;` outside strings, quoted
/// identifiers and comments; each statement is trimmed; empty ones (only whitespace or
/// comments) are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    // No `;` and nothing that may start a comment: one statement, or none if only blanks
    // (no need to tokenize the text twice, here and in `parse`).
    if !sql.contains([';', '#']) && !sql.contains("--") && !sql.contains("/*") {
        let t = sql.trim();
        return if t.is_empty() { vec![] } else { vec![t] };
    }
    let tokens = lexer::tokenize(sql);
    let mut out = Vec::new();
    let mut begin = 0;
    let mut has_content = false;
    for t in &tokens {
        if t.is_punct(";") {
            if has_content {
                out.push(sql[begin..t.start].trim());
            }
            begin = t.end();
            has_content = false;
        } else {
            has_content = true;
        }
    }
    if has_content {
        out.push(sql[begin..].trim());
    }
    out
}

/// The number of `?` placeholders outside strings and comments (COM_STMT_PREPARE).
pub fn count_params(sql: &str) -> usize {
    lexer::tokenize(sql)
        .iter()
        .filter(|t| t.kind == Kind::Param)
        .count()
}

/// Parses one statement (a trailing `;` is allowed).
pub fn parse(sql: &str) -> Result<Statement, SqlError> {
    let all = lexer::tokenize(sql);
    let mut tokens: &[Token] = &all;
    while let [rest @ .., last] = tokens {
        if !last.is_punct(";") {
            break;
        }
        tokens = rest;
    }
    if tokens.is_empty() {
        // Comments alone are a statement that does nothing (MySQL's SQLCOM_EMPTY_QUERY); no
        // text at all is 1065.
        if sql
            .trim_matches(|c: char| c.is_whitespace() || c == ';')
            .is_empty()
        {
            return Err(SqlError::new(ER_EMPTY_QUERY, &[]));
        }
        return Ok(Statement::Do(Vec::new()));
    }
    if let Some(t) = tokens.iter().find(|t| t.kind == Kind::Unterminated) {
        return Err(error_at(sql, t.start));
    }
    if let Some(stmt) = fast::insert_values(tokens).or_else(|| fast::query(sql, tokens)) {
        return Ok(stmt);
    }
    parse_general(sql, tokens)
}

/// `parse` past the checks, without the short path (fast.rs FP1 compares the two).
fn parse_general(sql: &str, tokens: &[Token]) -> Result<Statement, SqlError> {
    let rewritten = special::rewrite(sql, tokens);
    let mut ctx = lower::Ctx::new(sql, tokens);
    ctx.zerofill = rewritten.zerofill;
    ctx.ignore = rewritten.ignore;
    ctx.create_select_dup = rewritten.create_select_dup;
    ctx.compound_units = rewritten.compound_units;
    ctx.json_value = rewritten.json_value?;
    ctx.drop_checks = rewritten.drop_checks;
    ctx.alter_extra = rewritten.alter_extra?;
    if let Some(result) = special::dispatch(sql, &rewritten.text, tokens, &ctx) {
        return result;
    }
    let into = rewritten.into.transpose()?;
    let mut parser = sp_parser(&rewritten.text).map_err(|e| sp_error(sql, 0, &e))?;
    let stmt = parser.parse_statement().map_err(|e| sp_error(sql, 0, &e))?;
    while parser.consume_token(&SpToken::SemiColon) {}
    let next = parser.peek_token();
    if next.token != SpToken::EOF {
        return Err(sp_position_error(sql, 0, next.span.start));
    }
    match (ctx.statement(stmt)?, into) {
        (Statement::Select(q), Some(special::IntoTarget::Vars(vars))) => {
            Ok(Statement::SelectInto(q, vars))
        }
        (Statement::Select(q), Some(special::IntoTarget::File(e))) => {
            Ok(Statement::SelectOutfile(q, e))
        }
        (_, Some(_)) => Err(error_at(sql, 0)),
        (s, None) => Ok(s),
    }
}

fn sp_parser(text: &str) -> Result<Parser<'static>, ParserError> {
    static DIALECT: dialect::MySql = dialect::MySql(sqlparser::dialect::MySqlDialect {});
    Parser::new(&DIALECT).try_with_sql(text)
}

/// A 1064 error whose `near` starts at byte `pos` of `sql`.
fn error_at(sql: &str, pos: usize) -> SqlError {
    let pos = pos.min(sql.len());
    let near = sql.get(pos..).unwrap_or("");
    SqlError::parse(near, lexer::line_of(sql, pos))
}

/// A 1064 error at the end of the statement (MySQL's `near ''`).
fn error_at_end(sql: &str) -> SqlError {
    error_at(sql, sql.len())
}

/// A 1064 error from a sqlparser error on text that starts at byte `base` of `sql`: its
/// `Line: L, Column: C` suffix gives the position (none: the end of the statement).
fn sp_error(sql: &str, base: usize, e: &ParserError) -> SqlError {
    let msg = e.to_string();
    let loc = msg.rfind(" at Line: ").and_then(|p| {
        let rest = &msg[p + " at Line: ".len()..];
        let (line, col) = rest.split_once(", Column: ")?;
        Some((line.trim().parse().ok()?, col.trim().parse().ok()?))
    });
    match loc {
        Some((line, column)) => {
            sp_position_error(sql, base, sqlparser::tokenizer::Location { line, column })
        }
        None => error_at_end(sql),
    }
}

fn sp_position_error(sql: &str, base: usize, loc: sqlparser::tokenizer::Location) -> SqlError {
    let text = sql.get(base..).unwrap_or("");
    match lexer::offset_of(text, loc.line, loc.column) {
        Some(off) => error_at(sql, base + off),
        None => error_at_end(sql),
    }
}
