//! sqlparser's MySQL dialect with MySQL's precedence for `||` and `&&`.
//!
//! sqlparser reads `||` as string concatenation bound like `*`, and `&&` as AND bound tighter
//! than comparisons, so `2 = 2 || 3 = 4` came out as `2 = (2 || 3) = 4` (0 where MySQL says 1)
//! and `0 = 1 && 0` as `0 = (1 AND 0)`. In MySQL (sql_mode without PIPES_AS_CONCAT) they are OR
//! and AND with OR's and AND's precedence; `MySql` gives them that and is `MySqlDialect` in
//! everything else.
//!
//! INVARIANTS
//! - D1: every method `MySqlDialect` implements is forwarded to it, and `dialect()` answers
//!   its type id, so the parser's `dialect_of!(MySqlDialect)` checks still see MySQL. The
//!   test below parses MySQL-specific statements with both and compares the trees.
//! - D2: only `get_next_precedence` differs, and only for the `||` and `&&` tokens.

use sqlparser::ast::{Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;
use std::any::TypeId;

#[derive(Debug)]
pub struct MySql(pub MySqlDialect);

impl Dialect for MySql {
    fn dialect(&self) -> TypeId {
        self.0.dialect()
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match parser.peek_token_ref().token {
            Token::StringConcat => Some(Ok(self.prec_value(Precedence::Or))),
            Token::Overlap => Some(Ok(self.prec_value(Precedence::And))),
            _ => self.0.get_next_precedence(parser),
        }
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.0.supports_string_literal_backslash_escape()
    }
    fn supports_string_literal_concatenation(&self) -> bool {
        self.0.supports_string_literal_concatenation()
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        self.0.ignores_wildcard_escapes()
    }
    fn supports_numeric_prefix(&self) -> bool {
        self.0.supports_numeric_prefix()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        self.0.supports_bitwise_shift_operators()
    }
    fn supports_multiline_comment_hints(&self) -> bool {
        self.0.supports_multiline_comment_hints()
    }
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        self.0.parse_infix(parser, expr, precedence)
    }
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.0.parse_statement(parser)
    }
    fn require_interval_qualifier(&self) -> bool {
        self.0.require_interval_qualifier()
    }
    fn supports_limit_comma(&self) -> bool {
        self.0.supports_limit_comma()
    }
    fn supports_create_table_select(&self) -> bool {
        self.0.supports_create_table_select()
    }
    fn supports_insert_set(&self) -> bool {
        self.0.supports_insert_set()
    }
    fn supports_user_host_grantee(&self) -> bool {
        self.0.supports_user_host_grantee()
    }
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.0.is_table_factor_alias(explicit, kw, parser)
    }
    fn supports_table_hints(&self) -> bool {
        self.0.supports_table_hints()
    }
    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.0.requires_single_line_comment_whitespace()
    }
    fn supports_match_against(&self) -> bool {
        self.0.supports_match_against()
    }
    fn supports_select_modifiers(&self) -> bool {
        self.0.supports_select_modifiers()
    }
    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }
    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.0.supports_comma_separated_set_assignments()
    }
    fn supports_update_order_by(&self) -> bool {
        self.0.supports_update_order_by()
    }
    fn supports_data_type_signed_suffix(&self) -> bool {
        self.0.supports_data_type_signed_suffix()
    }
    fn supports_cross_join_constraint(&self) -> bool {
        self.0.supports_cross_join_constraint()
    }
    fn supports_double_ampersand_operator(&self) -> bool {
        self.0.supports_double_ampersand_operator()
    }
    fn supports_binary_kw_as_cast(&self) -> bool {
        self.0.supports_binary_kw_as_cast()
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        self.0.supports_comment_optimizer_hint()
    }
    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.0.supports_constraint_keyword_without_name()
    }
    fn supports_key_column_option(&self) -> bool {
        self.0.supports_key_column_option()
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        self.0.supports_group_by_with_modifier()
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.0.supports_left_associative_joins_without_parens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(d: &dyn Dialect, sql: &str) -> String {
        let stmts = Parser::parse_sql(d, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        format!("{stmts:?}")
    }

    /// D1: MySQL's own syntax parses to the same tree as with MySqlDialect.
    #[test]
    fn parses_like_mysql_dialect() {
        for sql in [
            "SELECT `a b`, 'x' 'y', 1 << 2, 7 DIV 2 + 1, BINARY 'a', _utf8mb4'z' FROM t LIMIT 1, 2",
            "SELECT SQL_NO_CACHE STRAIGHT_JOIN a FROM t1 USE INDEX (i) CROSS JOIN t2 ON t1.a = t2.a",
            "SELECT a FROM t WHERE MATCH (b) AGAINST ('w') GROUP BY a WITH ROLLUP",
            "SELECT /*+ NO_ICP(t) */ a FROM t AS x -- c\nWHERE a = 'it\\'s'",
            "INSERT INTO t SET a = 1, b = 2",
            "UPDATE t SET a = 1 ORDER BY b LIMIT 3",
            "CREATE TABLE t (a INT SIGNED, CONSTRAINT UNIQUE KEY (a)) SELECT 1 AS a",
            "LOCK TABLES t READ, u WRITE",
            "GRANT SELECT ON d.* TO 'u'@'localhost'",
            "SELECT DATE_ADD(d, INTERVAL 1 DAY) FROM t",
        ] {
            assert_eq!(tree(&MySql(MySqlDialect {}), sql), tree(&MySqlDialect {}, sql), "{sql}");
        }
    }
}
