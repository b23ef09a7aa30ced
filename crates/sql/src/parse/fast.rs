//! A short path for the most common write statement: INSERT or REPLACE ... VALUES with
//! literal values only (sysbench's oltp_insert, mysqldump output, bulk loaders), read straight
//! from the lexer's tokens instead of being rewritten, tokenized again and parsed by sqlparser.
//!
//! INVARIANTS
//! - FP1: what it accepts it turns into exactly the `Statement` the general path
//!   (`special` + sqlparser + `lower`) makes of the same text; the differential test in
//!   parse/tests.rs holds the two to that over many statements.
//! - FP2: anything else returns None and takes the general path, errors included: the
//!   accepted form is `INSERT [IGNORE] INTO name[.name] [(col, ...)] VALUES (v, ...), ...` or
//!   `REPLACE INTO ...`, each name a backquoted identifier or a word MySQL 8.0 does not
//!   reserve (`RESERVED`),
//!   each value a plain decimal number (optionally negated), a quoted string, NULL, TRUE,
//!   FALSE or `?`.

use super::lexer::{unquote_string, Kind, Token};
use crate::ast::{Expr, Insert, InsertSource, Literal, ObjectName, Statement, UnaryOp};

/// The statement, when `tokens` (no trailing `;`) have the accepted form (FP2).
pub fn insert_values(tokens: &[Token]) -> Option<Statement> {
    let mut r = Reader { tokens, at: 0 };
    let replace = if r.word("INSERT") {
        false
    } else if r.word("REPLACE") {
        true
    } else {
        return None;
    };
    let ignore = !replace && r.word("IGNORE");
    if !r.word("INTO") {
        return None;
    }
    let first = r.name()?;
    let table = if r.punct(".") {
        ObjectName {
            db: Some(first),
            name: r.name()?,
        }
    } else {
        ObjectName {
            db: None,
            name: first,
        }
    };
    let mut columns = Vec::new();
    if r.punct("(") {
        loop {
            columns.push(r.name()?);
            if r.punct(")") {
                break;
            }
            if !r.punct(",") {
                return None;
            }
        }
    }
    if !r.word("VALUES") {
        return None;
    }
    let mut rows = Vec::new();
    let mut params = 0;
    loop {
        if !r.punct("(") {
            return None;
        }
        let mut row = Vec::new();
        loop {
            row.push(r.value(&mut params)?);
            if r.punct(")") {
                break;
            }
            if !r.punct(",") {
                return None;
            }
        }
        rows.push(row);
        if r.at == tokens.len() {
            break;
        }
        if !r.punct(",") {
            return None;
        }
    }
    Some(Statement::Insert(Box::new(Insert {
        table,
        columns,
        source: InsertSource::Values(rows),
        ignore,
        replace,
        on_duplicate: Vec::new(),
    })))
}

/// MySQL 8.0's reserved words (sorted): not names unless backquoted.
const RESERVED: &[&str] = &[
    "ACCESSIBLE",
    "ADD",
    "ALL",
    "ALTER",
    "ANALYZE",
    "AND",
    "AS",
    "ASC",
    "ASENSITIVE",
    "BEFORE",
    "BETWEEN",
    "BIGINT",
    "BINARY",
    "BLOB",
    "BOTH",
    "BY",
    "CALL",
    "CASCADE",
    "CASE",
    "CHANGE",
    "CHAR",
    "CHARACTER",
    "CHECK",
    "COLLATE",
    "COLUMN",
    "CONDITION",
    "CONSTRAINT",
    "CONTINUE",
    "CONVERT",
    "CREATE",
    "CROSS",
    "CUBE",
    "CUME_DIST",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURSOR",
    "DATABASE",
    "DATABASES",
    "DAY_HOUR",
    "DAY_MICROSECOND",
    "DAY_MINUTE",
    "DAY_SECOND",
    "DEC",
    "DECIMAL",
    "DECLARE",
    "DEFAULT",
    "DELAYED",
    "DELETE",
    "DENSE_RANK",
    "DESC",
    "DESCRIBE",
    "DETERMINISTIC",
    "DISTINCT",
    "DISTINCTROW",
    "DIV",
    "DOUBLE",
    "DROP",
    "DUAL",
    "EACH",
    "ELSE",
    "ELSEIF",
    "EMPTY",
    "ENCLOSED",
    "ESCAPED",
    "EXCEPT",
    "EXISTS",
    "EXIT",
    "EXPLAIN",
    "FALSE",
    "FETCH",
    "FIRST_VALUE",
    "FLOAT",
    "FLOAT4",
    "FLOAT8",
    "FOR",
    "FORCE",
    "FOREIGN",
    "FROM",
    "FULLTEXT",
    "FUNCTION",
    "GENERATED",
    "GET",
    "GRANT",
    "GROUP",
    "GROUPING",
    "GROUPS",
    "HAVING",
    "HIGH_PRIORITY",
    "HOUR_MICROSECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "IF",
    "IGNORE",
    "IN",
    "INDEX",
    "INFILE",
    "INNER",
    "INOUT",
    "INSENSITIVE",
    "INSERT",
    "INT",
    "INT1",
    "INT2",
    "INT3",
    "INT4",
    "INT8",
    "INTEGER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IO_AFTER_GTIDS",
    "IO_BEFORE_GTIDS",
    "IS",
    "ITERATE",
    "JOIN",
    "JSON_TABLE",
    "KEY",
    "KEYS",
    "KILL",
    "LAG",
    "LAST_VALUE",
    "LATERAL",
    "LEAD",
    "LEADING",
    "LEAVE",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LINEAR",
    "LINES",
    "LOAD",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOCK",
    "LONG",
    "LONGBLOB",
    "LONGTEXT",
    "LOOP",
    "LOW_PRIORITY",
    "MASTER_BIND",
    "MASTER_SSL_VERIFY_SERVER_CERT",
    "MATCH",
    "MAXVALUE",
    "MEDIUMBLOB",
    "MEDIUMINT",
    "MEDIUMTEXT",
    "MIDDLEINT",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "MOD",
    "MODIFIES",
    "NATURAL",
    "NOT",
    "NO_WRITE_TO_BINLOG",
    "NTH_VALUE",
    "NTILE",
    "NULL",
    "NUMERIC",
    "OF",
    "ON",
    "OPTIMIZE",
    "OPTIMIZER_COSTS",
    "OPTION",
    "OPTIONALLY",
    "OR",
    "ORDER",
    "OUT",
    "OUTER",
    "OUTFILE",
    "OVER",
    "PARTITION",
    "PERCENT_RANK",
    "PRECISION",
    "PRIMARY",
    "PROCEDURE",
    "PURGE",
    "RANGE",
    "RANK",
    "READ",
    "READS",
    "READ_WRITE",
    "REAL",
    "RECURSIVE",
    "REFERENCES",
    "REGEXP",
    "RELEASE",
    "RENAME",
    "REPEAT",
    "REPLACE",
    "REQUIRE",
    "RESIGNAL",
    "RESTRICT",
    "RETURN",
    "REVOKE",
    "RIGHT",
    "RLIKE",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SCHEMA",
    "SCHEMAS",
    "SECOND_MICROSECOND",
    "SELECT",
    "SENSITIVE",
    "SEPARATOR",
    "SET",
    "SHOW",
    "SIGNAL",
    "SMALLINT",
    "SPATIAL",
    "SPECIFIC",
    "SQL",
    "SQLEXCEPTION",
    "SQLSTATE",
    "SQLWARNING",
    "SQL_BIG_RESULT",
    "SQL_CALC_FOUND_ROWS",
    "SQL_SMALL_RESULT",
    "SSL",
    "STARTING",
    "STORED",
    "STRAIGHT_JOIN",
    "SYSTEM",
    "TABLE",
    "TERMINATED",
    "THEN",
    "TINYBLOB",
    "TINYINT",
    "TINYTEXT",
    "TO",
    "TRAILING",
    "TRIGGER",
    "TRUE",
    "UNDO",
    "UNION",
    "UNIQUE",
    "UNLOCK",
    "UNSIGNED",
    "UPDATE",
    "USAGE",
    "USE",
    "USING",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "VALUES",
    "VARBINARY",
    "VARCHAR",
    "VARCHARACTER",
    "VARYING",
    "VIRTUAL",
    "WHEN",
    "WHERE",
    "WHILE",
    "WINDOW",
    "WITH",
    "WRITE",
    "XOR",
    "YEAR_MONTH",
    "ZEROFILL",
];

struct Reader<'t, 'a> {
    tokens: &'t [Token<'a>],
    at: usize,
}

impl<'a> Reader<'_, 'a> {
    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.at).copied()
    }

    /// Takes the bare word `kw` if it is next.
    fn word(&mut self, kw: &str) -> bool {
        let yes = self.peek().is_some_and(|t| t.is(kw));
        self.at += usize::from(yes);
        yes
    }

    fn punct(&mut self, p: &str) -> bool {
        let yes = self.peek().is_some_and(|t| t.is_punct(p));
        self.at += usize::from(yes);
        yes
    }

    /// A backquoted identifier, or a word that is not reserved.
    fn name(&mut self) -> Option<String> {
        let t = self.peek()?;
        let ok = match t.kind {
            Kind::QuotedIdent => true,
            Kind::Word => {
                let upper = t.text.to_ascii_uppercase();
                RESERVED.binary_search(&upper.as_str()).is_err()
            }
            _ => false,
        };
        self.at += 1;
        ok.then(|| t.value())
    }

    /// A literal value or `?` (numbered from `params` in text order).
    fn value(&mut self, params: &mut usize) -> Option<Expr> {
        let t = self.peek()?;
        self.at += 1;
        let lit = match t.kind {
            Kind::Number if plain_number(t.text) => Literal::Number(t.text.to_string()),
            Kind::Str => Literal::String {
                bytes: unquote_string(t.text).into_bytes(),
                charset: None,
            },
            Kind::Word if t.is("NULL") => Literal::Null,
            Kind::Word if t.is("TRUE") => Literal::Bool(true),
            Kind::Word if t.is("FALSE") => Literal::Bool(false),
            Kind::Param => {
                *params += 1;
                return Some(Expr::Param(*params - 1));
            }
            Kind::Punct if t.text == "-" => {
                let n = self.peek()?;
                self.at += 1;
                if n.kind != Kind::Number || !plain_number(n.text) {
                    return None;
                }
                return Some(Expr::Unary {
                    op: UnaryOp::Neg,
                    expr: Box::new(Expr::Literal(Literal::Number(n.text.to_string()))),
                });
            }
            _ => return None,
        };
        Some(Expr::Literal(lit))
    }
}

/// Digits with at most one decimal point inside or after them (no sign, exponent or hex).
fn plain_number(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}
