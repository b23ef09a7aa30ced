//! Short paths for the most common statements, read straight from the lexer's tokens instead
//! of being rewritten, tokenized again and parsed by sqlparser:
//! - INSERT or REPLACE ... VALUES with literal values only (sysbench's oltp_insert, mysqldump
//!   output, bulk loaders);
//! - single-table SELECT, UPDATE and DELETE over a small expression grammar (what ORMs and
//!   sysbench send through the text protocol: point and range reads, `SET k = k + 1`,
//!   `DELETE ... WHERE id = 5`).
//!
//! INVARIANTS
//! - FP1: what it accepts it turns into exactly the `Statement` the general path
//!   (`special` + sqlparser + `lower`) makes of the same text; the differential tests in
//!   parse/tests.rs hold the two to that over many statements, and over every statement of
//!   the conformance suite (crates/server/tests/conformance) that a short path takes.
//! - FP2: anything else returns None and takes the general path, errors included: the
//!   accepted INSERT form is `INSERT [IGNORE] INTO name[.name] [(col, ...)] VALUES (v, ...), ...`
//!   or `REPLACE INTO ...`, each name a backquoted identifier or a word MySQL 8.0 does not
//!   reserve (`RESERVED`),
//!   each value a plain decimal number (optionally negated), a quoted string, NULL, TRUE,
//!   FALSE or `?`.
//! - FP3: the SELECT/UPDATE/DELETE grammar (`query`) has no operator whose binding differs
//!   between MySQL and sqlparser and no chained comparison: after a comparison, IS, IN,
//!   BETWEEN or LIKE the predicate ends, and any other token where a clause keyword is due
//!   gives up. A bare word is a column only if sqlparser would read it as one: neither
//!   reserved by MySQL nor one of the words sqlparser turns into an expression of its own
//!   (`SQLPARSER_PREFIX`: USER, CAST, TRIM ...); a word is an implicit alias only if it is no
//!   keyword of sqlparser's at all. Calls are the five aggregates only.

use super::lexer::{unquote_string, Kind, Token};
use crate::ast::{
    BinaryOp, Delete, Expr, Insert, InsertSource, Literal, LockClause, ObjectName, OrderItem,
    Select, SelectItem, Statement, TableRef, UnaryOp, Update,
};

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
    let table = object_name(&mut r)?;
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

    /// Takes the next token if it is one of `ops` (punctuation, or a bare word ignoring case).
    fn operator(&mut self, ops: &[(&str, BinaryOp)]) -> Option<BinaryOp> {
        let t = self.peek()?;
        let (_, op) = ops
            .iter()
            .find(|(text, _)| t.is_punct(text) || t.is(text))?;
        self.at += 1;
        Some(*op)
    }

    fn punct(&mut self, p: &str) -> bool {
        let yes = self.peek().is_some_and(|t| t.is_punct(p));
        self.at += usize::from(yes);
        yes
    }

    /// A backquoted identifier, or a word that is not reserved.
    fn name(&mut self) -> Option<String> {
        self.name_except(&[])
    }

    /// `name`, refusing also the bare words of `also` (sorted, upper-case).
    fn name_except(&mut self, also: &[&str]) -> Option<String> {
        let t = self.peek()?;
        let ok = match t.kind {
            Kind::QuotedIdent => true,
            Kind::Word => {
                let upper = t.text.to_ascii_uppercase();
                [RESERVED, also]
                    .iter()
                    .all(|list| list.binary_search(&upper.as_str()).is_err())
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

/// Words sqlparser reads as an expression of their own (a call without parentheses, a CAST,
/// a literal ...) rather than as a column, that MySQL does not reserve (sorted).
const SQLPARSER_PREFIX: &[&str] = &[
    "ARRAY",
    "BOX",
    "CAST",
    "CEIL",
    "CIRCLE",
    "CURRENT_CATALOG",
    "EXTRACT",
    "FLOOR",
    "LAMBDA",
    "LINE",
    "LSEG",
    "MAP",
    "OVERLAY",
    "PATH",
    "POINT",
    "POLYGON",
    "POSITION",
    "PRIOR",
    "SAFE_CAST",
    "SESSION_USER",
    "STRUCT",
    "SUBSTR",
    "SUBSTRING",
    "TRIM",
    "TRY_CAST",
    "TRY_CONVERT",
    "USER",
];

/// The aggregate calls the short path reads (FP3).
const AGGREGATES: [&str; 5] = ["count", "sum", "min", "max", "avg"];

/// A single-table SELECT, UPDATE or DELETE of the accepted form (FP3), `sql` being the text
/// `tokens` came from (no trailing `;`).
pub fn query(sql: &str, tokens: &[Token]) -> Option<Statement> {
    let mut r = Reader { tokens, at: 0 };
    let mut params = 0;
    let mut q = Query {
        sql,
        params: &mut params,
    };
    let stmt = if r.word("SELECT") {
        Statement::Select(Box::new(q.select(&mut r)?))
    } else if r.word("UPDATE") {
        Statement::Update(Box::new(q.update(&mut r)?))
    } else if r.word("DELETE") {
        Statement::Delete(Box::new(q.delete(&mut r)?))
    } else {
        return None;
    };
    (r.at == tokens.len()).then_some(stmt)
}

struct Query<'s, 'p> {
    sql: &'s str,
    /// `?` placeholders read so far.
    params: &'p mut usize,
}

impl Query<'_, '_> {
    fn select(&mut self, r: &mut Reader) -> Option<Select> {
        let distinct = r.word("DISTINCT");
        // Select modifiers MySQL does not reserve would read as a column with an alias.
        if ["SQL_NO_CACHE", "SQL_CACHE", "SQL_BUFFER_RESULT"]
            .iter()
            .any(|m| r.peek().is_some_and(|t| t.is(m)))
        {
            return None;
        }
        let mut items = Vec::new();
        loop {
            items.push(self.select_item(r)?);
            if !r.punct(",") {
                break;
            }
        }
        if !r.word("FROM") {
            return None;
        }
        let (name, alias) = table(r)?;
        let selection = self.selection(r)?;
        let mut group_by = Vec::new();
        if r.word("GROUP") {
            if !r.word("BY") {
                return None;
            }
            loop {
                group_by.push(self.expr(r)?);
                if !r.punct(",") {
                    break;
                }
            }
        }
        let order_by = self.order_by(r)?;
        let (mut limit, mut offset) = (None, None);
        if r.word("LIMIT") {
            let first = self.limit_operand(r)?;
            if r.punct(",") {
                offset = Some(first);
                limit = Some(self.limit_operand(r)?);
            } else {
                limit = Some(first);
                if r.word("OFFSET") {
                    offset = Some(self.limit_operand(r)?);
                }
            }
        }
        let lock = if r.word("FOR") {
            let update = if r.word("UPDATE") {
                true
            } else if r.word("SHARE") {
                false
            } else {
                return None;
            };
            let nowait = r.word("NOWAIT");
            let skip_locked = !nowait && r.word("SKIP") && r.word("LOCKED");
            Some(if update {
                LockClause::ForUpdate {
                    nowait,
                    skip_locked,
                }
            } else {
                LockClause::ForShare {
                    nowait,
                    skip_locked,
                }
            })
        } else if r.word("LOCK") {
            if !(r.word("IN") && r.word("SHARE") && r.word("MODE")) {
                return None;
            }
            Some(LockClause::ForShare {
                nowait: false,
                skip_locked: false,
            })
        } else {
            None
        };
        Some(Select {
            distinct,
            items,
            from: vec![TableRef::Table {
                name,
                alias,
                hints: Vec::new(),
            }],
            selection,
            group_by,
            having: None,
            order_by,
            limit,
            offset,
            lock,
            lock_of: Vec::new(),
            unions: Vec::new(),
        })
    }

    fn select_item(&mut self, r: &mut Reader) -> Option<SelectItem> {
        if r.punct("*") {
            return Some(SelectItem::Wildcard);
        }
        let first = r.peek()?;
        if matches!(first.kind, Kind::Word | Kind::QuotedIdent)
            && r.tokens.get(r.at + 1).is_some_and(|t| t.is_punct("."))
            && r.tokens.get(r.at + 2).is_some_and(|t| t.is_punct("*"))
        {
            let t = r.name()?;
            r.at += 2;
            return Some(SelectItem::QualifiedWildcard(t));
        }
        let expr = self.expr(r)?;
        let last = r.tokens[r.at - 1];
        let text = self.sql.get(first.start..last.end())?.to_string();
        let alias = alias(r)?;
        Some(SelectItem::Expr { expr, alias, text })
    }

    fn update(&mut self, r: &mut Reader) -> Option<Update> {
        let table = object_name(r)?;
        if !r.word("SET") {
            return None;
        }
        let mut assignments = Vec::new();
        loop {
            let mut col = r.name()?;
            if r.punct(".") {
                col = r.name()?;
            }
            if !r.punct("=") {
                return None;
            }
            assignments.push((col, self.expr(r)?));
            if !r.punct(",") {
                break;
            }
        }
        let selection = self.selection(r)?;
        let order_by = self.order_by(r)?;
        let limit = self.dml_limit(r)?;
        Some(Update {
            table,
            alias: None,
            hints: Vec::new(),
            assignments,
            selection,
            order_by,
            limit,
            ignore: false,
        })
    }

    fn delete(&mut self, r: &mut Reader) -> Option<Delete> {
        if !r.word("FROM") {
            return None;
        }
        let table = object_name(r)?;
        let selection = self.selection(r)?;
        let order_by = self.order_by(r)?;
        let limit = self.dml_limit(r)?;
        Some(Delete {
            table,
            alias: None,
            selection,
            order_by,
            limit,
            ignore: false,
        })
    }

    /// `[WHERE expr]`: Some(None) without a WHERE.
    fn selection(&mut self, r: &mut Reader) -> Option<Option<Expr>> {
        if r.word("WHERE") {
            self.expr(r).map(Some)
        } else {
            Some(None)
        }
    }

    fn order_by(&mut self, r: &mut Reader) -> Option<Vec<OrderItem>> {
        let mut out = Vec::new();
        if r.word("ORDER") {
            if !r.word("BY") {
                return None;
            }
            loop {
                let expr = self.expr(r)?;
                let desc = if r.word("DESC") {
                    true
                } else {
                    r.word("ASC");
                    false
                };
                out.push(OrderItem { expr, desc });
                if !r.punct(",") {
                    break;
                }
            }
        }
        Some(out)
    }

    /// UPDATE/DELETE `[LIMIT n]`.
    fn dml_limit(&mut self, r: &mut Reader) -> Option<Option<Expr>> {
        if r.word("LIMIT") {
            self.limit_operand(r).map(Some)
        } else {
            Some(None)
        }
    }

    /// A LIMIT or OFFSET operand: digits or `?` (others are errors the general path reports).
    fn limit_operand(&mut self, r: &mut Reader) -> Option<Expr> {
        let t = r.peek()?;
        if t.kind == Kind::Number && t.text.bytes().all(|b| b.is_ascii_digit()) {
            r.at += 1;
            return Some(Expr::Literal(Literal::Number(t.text.to_string())));
        }
        if t.kind == Kind::Param {
            return r.value(self.params);
        }
        None
    }

    /// expr: OR of ANDs of [NOT] predicates (FP3).
    fn expr(&mut self, r: &mut Reader) -> Option<Expr> {
        self.chain(r, Self::conjunction, |r| {
            r.word("OR").then_some(BinaryOp::Or)
        })
    }

    fn conjunction(&mut self, r: &mut Reader) -> Option<Expr> {
        self.chain(r, Self::negation, |r| {
            r.word("AND").then_some(BinaryOp::And)
        })
    }

    /// `next (op next)*`, left-associative; `op` takes one of the level's operators.
    fn chain(
        &mut self,
        r: &mut Reader,
        next: impl Fn(&mut Self, &mut Reader) -> Option<Expr>,
        op: impl Fn(&mut Reader) -> Option<BinaryOp>,
    ) -> Option<Expr> {
        let mut left = next(self, r)?;
        while let Some(o) = op(r) {
            let right = next(self, r)?;
            left = binary(o, left, right);
        }
        Some(left)
    }

    fn negation(&mut self, r: &mut Reader) -> Option<Expr> {
        if r.word("NOT") {
            let e = self.negation(r)?;
            return Some(Expr::Unary {
                op: UnaryOp::Not,
                expr: Box::new(e),
            });
        }
        self.predicate(r)
    }

    /// An operand, then at most one comparison, IS [NOT] NULL, [NOT] IN (list), [NOT] BETWEEN
    /// or [NOT] LIKE; another such operator after it gives up (FP3).
    fn predicate(&mut self, r: &mut Reader) -> Option<Expr> {
        let left = self.sum(r)?;
        let cmp = r.peek().and_then(|t| {
            if t.kind != Kind::Punct {
                return None;
            }
            Some(match t.text {
                "=" => BinaryOp::Eq,
                "<=>" => BinaryOp::NullSafeEq,
                "<>" | "!=" => BinaryOp::Ne,
                "<" => BinaryOp::Lt,
                "<=" => BinaryOp::Le,
                ">" => BinaryOp::Gt,
                ">=" => BinaryOp::Ge,
                _ => return None,
            })
        });
        let e = if let Some(op) = cmp {
            r.at += 1;
            let right = self.sum(r)?;
            binary(op, left, right)
        } else if r.word("IS") {
            let negated = r.word("NOT");
            if !r.word("NULL") {
                return None;
            }
            Expr::IsNull {
                expr: Box::new(left),
                negated,
            }
        } else {
            let negated = r.word("NOT");
            if r.word("IN") {
                if !r.punct("(") {
                    return None;
                }
                let list = self.list_to_close(r)?;
                Expr::InList {
                    expr: Box::new(left),
                    list,
                    negated,
                }
            } else if r.word("BETWEEN") {
                let low = self.sum(r)?;
                if !r.word("AND") {
                    return None;
                }
                let high = self.sum(r)?;
                Expr::Between {
                    expr: Box::new(left),
                    low: Box::new(low),
                    high: Box::new(high),
                    negated,
                }
            } else if r.word("LIKE") {
                let pattern = self.sum(r)?;
                Expr::Like {
                    expr: Box::new(left),
                    pattern: Box::new(pattern),
                    escape: None,
                    negated,
                }
            } else if negated {
                return None;
            } else {
                return Some(left);
            }
        };
        let next = r.peek();
        let chained = next.is_some_and(|t| {
            (t.kind == Kind::Punct
                && matches!(t.text, "=" | "<=>" | "<>" | "!=" | "<" | "<=" | ">" | ">="))
                || ["IS", "NOT", "IN", "BETWEEN", "LIKE", "ESCAPE", "COLLATE"]
                    .iter()
                    .any(|k| t.is(k))
        });
        (!chained).then_some(e)
    }

    /// Terms joined by + and -.
    fn sum(&mut self, r: &mut Reader) -> Option<Expr> {
        self.chain(r, Self::product, |r| {
            r.operator(&[("+", BinaryOp::Add), ("-", BinaryOp::Sub)])
        })
    }

    /// Factors joined by *, /, % and DIV.
    fn product(&mut self, r: &mut Reader) -> Option<Expr> {
        self.chain(r, Self::unary, |r| {
            r.operator(&[
                ("*", BinaryOp::Mul),
                ("/", BinaryOp::Div),
                ("%", BinaryOp::Mod),
                ("DIV", BinaryOp::IntDiv),
            ])
        })
    }

    fn unary(&mut self, r: &mut Reader) -> Option<Expr> {
        let op = if r.punct("-") {
            UnaryOp::Neg
        } else if r.punct("+") {
            UnaryOp::Plus
        } else {
            return self.primary(r);
        };
        let e = self.unary(r)?;
        Some(Expr::Unary {
            op,
            expr: Box::new(e),
        })
    }

    fn primary(&mut self, r: &mut Reader) -> Option<Expr> {
        let t = r.peek()?;
        match t.kind {
            Kind::Number | Kind::Str | Kind::Param => r.value(self.params),
            Kind::Word if t.is("NULL") || t.is("TRUE") || t.is("FALSE") => r.value(self.params),
            Kind::Punct if t.text == "(" => {
                r.at += 1;
                let e = self.expr(r)?;
                r.punct(")").then_some(e)
            }
            Kind::Word | Kind::QuotedIdent => {
                let next = r.tokens.get(r.at + 1);
                if t.kind == Kind::Word && next.is_some_and(|n| n.is_punct("(")) {
                    return self.aggregate(r);
                }
                let mut parts = vec![column_word(r)?];
                while parts.len() < 3 && r.punct(".") {
                    parts.push(r.name()?);
                }
                let name = parts.pop()?;
                Some(Expr::Column {
                    table: parts.pop(),
                    name,
                })
            }
            _ => None,
        }
    }

    /// `expr, ... )`: a non-empty list and the closing parenthesis.
    fn list_to_close(&mut self, r: &mut Reader) -> Option<Vec<Expr>> {
        let mut list = Vec::new();
        loop {
            list.push(self.expr(r)?);
            if r.punct(")") {
                return Some(list);
            }
            if !r.punct(",") {
                return None;
            }
        }
    }

    /// COUNT(*), COUNT/SUM/MIN/MAX/AVG([DISTINCT] expr, ...).
    fn aggregate(&mut self, r: &mut Reader) -> Option<Expr> {
        let name = r.peek()?.text.to_ascii_lowercase();
        if !AGGREGATES.contains(&name.as_str()) {
            return None;
        }
        r.at += 2;
        if name == "count" && r.punct("*") {
            return r.punct(")").then(|| Expr::Function {
                name,
                args: Vec::new(),
                distinct: false,
                star: true,
            });
        }
        let distinct = r.word("DISTINCT");
        let args = self.list_to_close(r)?;
        Some(Expr::Function {
            name,
            args,
            distinct,
            star: false,
        })
    }
}

fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// A name in an expression: a backquoted identifier, or a word that is neither reserved nor
/// an expression to sqlparser (FP3).
fn column_word(r: &mut Reader) -> Option<String> {
    r.name_except(SQLPARSER_PREFIX)
}

/// `name[.name]`.
fn object_name(r: &mut Reader) -> Option<ObjectName> {
    let first = r.name()?;
    Some(if r.punct(".") {
        ObjectName {
            db: Some(first),
            name: r.name()?,
        }
    } else {
        ObjectName {
            db: None,
            name: first,
        }
    })
}

/// A FROM table with its alias.
fn table(r: &mut Reader) -> Option<(ObjectName, Option<String>)> {
    let name = object_name(r)?;
    Some((name, alias(r)?))
}

/// `[AS] alias`: Some(None) when there is none. A bare word must be no sqlparser keyword
/// (FP3); a string alias takes the general path.
fn alias(r: &mut Reader) -> Option<Option<String>> {
    let with_as = r.word("AS");
    let Some(t) = r.peek() else {
        return if with_as { None } else { Some(None) };
    };
    match t.kind {
        Kind::QuotedIdent => {
            r.at += 1;
            Some(Some(t.value()))
        }
        Kind::Word => {
            let upper = t.text.to_ascii_uppercase();
            let keyword = sqlparser::keywords::ALL_KEYWORDS
                .binary_search(&upper.as_str())
                .is_ok()
                || RESERVED.binary_search(&upper.as_str()).is_ok();
            if keyword {
                // A clause keyword (FROM, WHERE, ...) ends the item; after AS it is an error
                // or a form for the general path.
                return if with_as { None } else { Some(None) };
            }
            r.at += 1;
            Some(Some(t.text.to_string()))
        }
        _ if with_as => None,
        _ => Some(None),
    }
}
