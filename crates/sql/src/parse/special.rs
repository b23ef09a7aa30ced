//! The pre-dispatcher: statements recognised by keyword prefix and parsed by hand (sqlparser
//! cannot parse them or loses information), and same-length rewrites of the few constructs
//! sqlparser mis-handles inside statements it otherwise parses.
//!
//! Handled here: SHOW ..., START TRANSACTION / BEGIN / COMMIT / ROLLBACK / SAVEPOINT /
//! RELEASE SAVEPOINT, SET (all forms, scope kept), XA, CREATE/ALTER/DROP USER, GRANT/REVOKE,
//! CREATE/DROP DATABASE|SCHEMA, USE, ANALYZE/OPTIMIZE/CHECK TABLE, KILL, RENAME TABLE, FLUSH,
//! DO, LOCK/UNLOCK TABLES, ALTER TABLE with table options only, EXPLAIN/DESCRIBE; PREPARE,
//! EXECUTE, DEALLOCATE and LOAD give 1235.
//!
//! INVARIANTS
//! - `dispatch` returns None only for statements sqlparser is to parse.
//! - `rewrite` never changes the length of the text or any byte outside the rewritten tokens
//!   (so sqlparser's positions are the statement's): `a MOD b` → `a %   b`, `LOCK IN SHARE
//!   MODE` → `FOR SHARE` + blanks, ZEROFILL (in CREATE/ALTER TABLE), the IGNORE of
//!   UPDATE/DELETE IGNORE, the IGNORE/REPLACE of CREATE TABLE ... SELECT and a SELECT's
//!   `INTO @a, @b` → blanks, ALTER TABLE's `DROP CHECK` → `DROP INDEX`, recorded for the
//!   lowering.
//! - Expressions inside hand-parsed statements (SET values, SHOW ... WHERE, KILL, DO) are
//!   parsed by sqlparser from the statement's own text and lowered with the same context.

use super::expr::str_lit;
use super::lexer::{Kind, Token};
use super::lower::{unsupported, Ctx};
use super::{error_at, error_at_end, sp_error, sp_parser};
use crate::ast::*;
use crate::error::SqlError;
use sqlparser::tokenizer::Token as SpToken;
use std::borrow::Cow;

type R<T> = Result<T, SqlError>;

/// The statement as sqlparser is to see it, plus what the blanked-out words meant.
pub struct Rewritten<'a> {
    pub text: Cow<'a, str>,
    pub zerofill: Vec<usize>,
    pub ignore: bool,
    /// SELECT ... INTO @a, @b (the variables, lower-case) or INTO OUTFILE/DUMPFILE.
    pub into: Option<R<IntoTarget>>,
    /// CREATE TABLE ... IGNORE (false) / REPLACE (true) SELECT.
    pub create_select_dup: Option<bool>,
    /// MySQL's compound INTERVAL units (DAY_HOUR, YEAR_MONTH...), which sqlparser does not
    /// know: (offset, unit in lower case); each is replaced by the single unit its value is
    /// counted in (`compound_unit`), padded to the same length.
    pub compound_units: Vec<(usize, String)>,
    /// The ON EMPTY / ON ERROR clauses of JSON_VALUE calls, which sqlparser does not know
    /// (blanked out); Err for clauses out of order or repeated.
    pub json_value: R<Vec<JsonValueClauses>>,
    /// ALTER TABLE ... DROP CHECK name, which sqlparser does not know: where each CHECK was
    /// (written INDEX for sqlparser, same length).
    pub drop_checks: Vec<usize>,
    /// ALTER TABLE's table options and RENAME INDEX among operations sqlparser reads
    /// (blanked out with a comma each): the operations they are, added after sqlparser's.
    pub alter_extra: R<Vec<AlterOp>>,
}

/// A JSON_VALUE call's `{NULL | ERROR | DEFAULT value} ON {EMPTY | ERROR}` clauses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonValueClauses {
    /// Where the word JSON_VALUE starts.
    pub call: usize,
    pub on_empty: Option<JsonResponseText>,
    pub on_error: Option<JsonResponseText>,
}

/// One response as written: DEFAULT's value is the text from `.0` to `.1`.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonResponseText {
    Null,
    Error,
    Default(usize, usize),
}

/// A stretch of the statement's text: (start, end) byte offsets.
type Span = (usize, usize);

/// The ON EMPTY / ON ERROR clauses of each `JSON_VALUE(` call in `tokens`, and the spans they
/// take (to be blanked): a clause is `NULL`, `ERROR` or `DEFAULT <tokens>` followed by `ON
/// EMPTY` or `ON ERROR`, at the call's own parenthesis depth. ON EMPTY after ON ERROR is a
/// syntax error, as in MySQL.
fn json_value_clauses(sql: &str, tokens: &[Token]) -> R<(Vec<JsonValueClauses>, Vec<Span>)> {
    let error_at_token = |k: usize| error_at(sql, tokens.get(k).map_or(sql.len(), |t| t.start));
    let mut calls = Vec::new();
    let mut spans = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !t.is("JSON_VALUE") || !tokens.get(i + 1).is_some_and(|p| p.is_punct("(")) {
            continue;
        }
        let mut c = JsonValueClauses {
            call: t.start,
            ..Default::default()
        };
        let mut depth = 0usize;
        let mut k = i + 1;
        while let Some(tk) = tokens.get(k) {
            if tk.is_punct("(") {
                depth += 1;
            } else if tk.is_punct(")") {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            } else if depth == 1 && (tk.is("NULL") || tk.is("ERROR") || tk.is("DEFAULT")) {
                // The value of DEFAULT runs to the next ON at this depth.
                let mut on = k + 1;
                if tk.is("DEFAULT") {
                    let mut d = 0usize;
                    while let Some(x) = tokens.get(on) {
                        if d == 0 && (x.is("ON") || x.is_punct(")") || x.is_punct(",")) {
                            break;
                        }
                        if x.is_punct("(") {
                            d += 1;
                        } else if x.is_punct(")") {
                            d -= 1;
                        }
                        on += 1;
                    }
                }
                let what = tokens.get(on + 1);
                let is_on = tokens.get(on).is_some_and(|x| x.is("ON"));
                let empty = what.is_some_and(|w| w.is("EMPTY"));
                if is_on && (empty || what.is_some_and(|w| w.is("ERROR"))) {
                    let resp = if tk.is("NULL") {
                        JsonResponseText::Null
                    } else if tk.is("ERROR") {
                        JsonResponseText::Error
                    } else if on > k + 1 {
                        JsonResponseText::Default(tokens[k + 1].start, tokens[on - 1].end())
                    } else {
                        return Err(error_at_token(on));
                    };
                    let slot = if empty {
                        if c.on_error.is_some() {
                            return Err(error_at_token(k));
                        }
                        &mut c.on_empty
                    } else {
                        &mut c.on_error
                    };
                    if slot.is_some() {
                        return Err(error_at_token(k));
                    }
                    *slot = Some(resp);
                    spans.push((tk.start, tokens[on + 1].end()));
                    k = on + 2;
                    continue;
                }
            }
            k += 1;
        }
        if c.on_empty.is_some() || c.on_error.is_some() {
            calls.push(c);
        }
    }
    Ok((calls, spans))
}

/// A compound INTERVAL unit: the single unit sqlparser is given instead, and the number of
/// each field in that unit (the last field is 1), largest first.
pub fn compound_unit(name: &str) -> Option<(&'static str, &'static [i64])> {
    const S: i64 = 1;
    const MIN: i64 = 60;
    const H: i64 = 3600;
    const D: i64 = 86_400;
    const US: i64 = 1_000_000;
    Some(match name {
        "year_month" => ("MONTH", &[12, 1]),
        "day_hour" => ("SECOND", &[D, H]),
        "day_minute" => ("SECOND", &[D, H, MIN]),
        "day_second" => ("SECOND", &[D, H, MIN, S]),
        "hour_minute" => ("SECOND", &[H, MIN]),
        "hour_second" => ("SECOND", &[H, MIN, S]),
        "minute_second" => ("SECOND", &[MIN, S]),
        "day_microsecond" => ("MICROSECOND", &[D * US, H * US, MIN * US, US, 1]),
        "hour_microsecond" => ("MICROSECOND", &[H * US, MIN * US, US, 1]),
        "minute_microsecond" => ("MICROSECOND", &[MIN * US, US, 1]),
        "second_microsecond" => ("MICROSECOND", &[US, 1]),
        _ => return None,
    })
}

/// The INTO clause of a SELECT statement (at parenthesis depth 0): its token range and
/// what it names.
fn select_into(sql: &str, tokens: &[Token]) -> Option<(usize, usize, R<IntoTarget>)> {
    let first = tokens.first()?;
    if !(first.is("SELECT") || first.is_punct("(")) {
        return None;
    }
    let mut depth = 0i32;
    let mut at = None;
    for (i, t) in tokens.iter().enumerate() {
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
        } else if depth == 0 && t.is("INTO") {
            at = Some(i);
            break;
        }
    }
    let i = at?;
    let start = tokens[i].start;
    if let Some(kind) = tokens
        .get(i + 1)
        .filter(|t| t.is("OUTFILE") || t.is("DUMPFILE"))
    {
        let dump = kind.is("DUMPFILE");
        let ctx = Ctx::new(sql, tokens);
        let mut p = P {
            sql,
            text: sql,
            toks: tokens,
            i: i + 2,
            ctx: &ctx,
        };
        let export = (|| {
            let file = p.string()?;
            let format = if dump {
                FileFormat::default()
            } else {
                if p.eat("CHARACTER") {
                    p.expect("SET")?;
                    p.file_charset("SELECT ... INTO OUTFILE")?;
                }
                p.file_format()?
            };
            Ok(IntoTarget::File(Box::new(Export { file, dump, format })))
        })();
        let end = tokens[p.i.max(i + 2) - 1].end();
        return Some((start, end, export));
    }
    let mut vars = Vec::new();
    let mut j = i + 1;
    let mut end = tokens[i].end();
    while let (Some(a), Some(n)) = (tokens.get(j), tokens.get(j + 1)) {
        if !a.is_punct("@") || !matches!(n.kind, Kind::Word | Kind::QuotedIdent | Kind::Str) {
            break;
        }
        vars.push(n.value().to_lowercase());
        end = n.end();
        j += 2;
        if tokens.get(j).is_some_and(|t| t.is_punct(",")) {
            j += 1;
        } else {
            break;
        }
    }
    if vars.is_empty() {
        return Some((
            start,
            end,
            Err(unsupported("SELECT ... INTO other than @variables")),
        ));
    }
    Some((start, end, Ok(IntoTarget::Vars(vars))))
}

/// What SELECT ... INTO names.
pub enum IntoTarget {
    Vars(Vec<String>),
    File(Box<Export>),
}

/// CREATE TABLE ... IGNORE|REPLACE [AS] SELECT: the word's token and what it means.
fn create_select_dup<'t>(tokens: &'t [Token]) -> Option<(&'t Token<'t>, bool)> {
    if !(tokens.first()?.is("CREATE")) {
        return None;
    }
    let mut depth = 0i32;
    for (i, t) in tokens.iter().enumerate() {
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
        } else if depth == 0 && (t.is("IGNORE") || t.is("REPLACE")) {
            let mut n = tokens.get(i + 1)?;
            if n.is("AS") {
                n = tokens.get(i + 2)?;
            }
            if n.is("SELECT") || n.is_punct("(") {
                return Some((t, t.is("REPLACE")));
            }
        }
    }
    None
}

/// Words after which `MOD` is the function, not the operator.
const OPERAND_KEYWORDS: [&str; 22] = [
    "SELECT", "WHERE", "AND", "OR", "NOT", "ON", "BY", "WHEN", "THEN", "ELSE", "SET", "HAVING",
    "CASE", "IN", "LIKE", "BETWEEN", "IS", "DISTINCT", "XOR", "DIV", "VALUES", "LIMIT",
];

fn ends_operand(t: &Token) -> bool {
    match t.kind {
        Kind::Word => !OPERAND_KEYWORDS.iter().any(|k| t.is(k)),
        Kind::Number | Kind::Str | Kind::QuotedIdent | Kind::Param => true,
        Kind::Punct => t.text == ")",
        Kind::Unterminated => false,
    }
}

pub fn rewrite<'a>(sql: &'a str, tokens: &[Token]) -> Rewritten<'a> {
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    let mut zerofill = Vec::new();
    let mut ignore = false;
    let first = tokens.first();
    let is_ddl = first.is_some_and(|t| t.is("CREATE") || t.is("ALTER"));
    let mut into = None;
    if let Some((start, end, vars)) = select_into(sql, tokens) {
        edits.push((start, end, ""));
        into = Some(vars);
    }
    let json_value = match json_value_clauses(sql, tokens) {
        Ok((calls, spans)) => {
            edits.extend(spans.into_iter().map(|(a, b)| (a, b, "")));
            Ok(calls)
        }
        Err(e) => Err(e),
    };
    let mut alter_extra = Ok(Vec::new());
    if let Some((spans, ops)) = alter_list_extras(sql, tokens) {
        edits.extend(spans.into_iter().map(|(a, b)| (a, b, "")));
        alter_extra = ops;
    }
    let mut drop_checks = Vec::new();
    if first.is_some_and(|t| t.is("ALTER")) {
        for (i, t) in tokens.iter().enumerate() {
            if t.is("CHECK") && i > 0 && tokens[i - 1].is("DROP") {
                drop_checks.push(t.start);
                edits.push((t.start, t.end(), "INDEX"));
            }
        }
    }
    let mut compound_units = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        // Every compound unit has an underscore: other words are not even lowered.
        if t.kind == Kind::Word && t.text.contains('_') && i > 0 && !tokens[i - 1].is_punct(".") {
            let lower = t.text.to_ascii_lowercase();
            if let Some((single, _)) = compound_unit(&lower) {
                compound_units.push((t.start, lower));
                edits.push((t.start, t.end(), single));
            }
        }
    }
    let mut create_dup = None;
    if let Some((t, replace)) = create_select_dup(tokens) {
        edits.push((t.start, t.end(), ""));
        create_dup = Some(replace);
    }
    if first.is_some_and(|t| t.is("UPDATE") || t.is("DELETE")) {
        // LOW_PRIORITY and QUICK change nothing on InnoDB tables (MySQL): blanked too.
        let mut i = 1;
        while let Some(t) = tokens
            .get(i)
            .filter(|t| t.is("LOW_PRIORITY") || t.is("QUICK"))
        {
            edits.push((t.start, t.end(), ""));
            i += 1;
        }
        if let Some(t) = tokens.get(i).filter(|t| t.is("IGNORE")) {
            ignore = true;
            edits.push((t.start, t.end(), ""));
        }
    }
    for (i, t) in tokens.iter().enumerate() {
        if t.is("MOD")
            && i > 0
            && ends_operand(&tokens[i - 1])
            && tokens.get(i + 1).is_some_and(|n| {
                !n.is_punct(",") && !n.is_punct(")") && n.kind != Kind::Unterminated
            })
        {
            edits.push((t.start, t.end(), "%"));
        } else if t.is("LOCK")
            && tokens.get(i + 1).is_some_and(|t| t.is("IN"))
            && tokens.get(i + 2).is_some_and(|t| t.is("SHARE"))
        {
            if let Some(m) = tokens.get(i + 3).filter(|t| t.is("MODE")) {
                edits.push((t.start, m.end(), "FOR SHARE"));
            }
        } else if is_ddl && t.is("ZEROFILL") {
            zerofill.push(t.start);
            edits.push((t.start, t.end(), ""));
        }
    }
    if edits.is_empty() {
        return Rewritten {
            text: Cow::Borrowed(sql),
            zerofill,
            ignore,
            into,
            create_select_dup: create_dup,
            compound_units,
            json_value,
            drop_checks,
            alter_extra,
        };
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(sql.len());
    let mut pos = 0;
    for (start, end, with) in edits {
        out.push_str(&sql[pos..start]);
        out.push_str(with);
        // Blank the rest, keeping line breaks so lines and columns stay put.
        for c in sql[start..end].chars().skip(with.len()) {
            out.push(if c == '\n' { '\n' } else { ' ' });
            out.extend(std::iter::repeat_n(' ', c.len_utf8() - 1));
        }
        pos = end;
    }
    out.push_str(&sql[pos..]);
    Rewritten {
        text: Cow::Owned(out),
        zerofill,
        ignore,
        into,
        create_select_dup: create_dup,
        compound_units,
        json_value,
        drop_checks,
        alter_extra,
    }
}

/// Byte ranges of the statement.
type Spans = Vec<(usize, usize)>;

/// The items of an ALTER TABLE list from token `from`: token ranges between the commas
/// outside parentheses.
fn alter_items(tokens: &[Token], from: usize) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, from);
    for (j, t) in tokens.iter().enumerate().skip(from) {
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
        } else if t.is_punct(",") && depth == 0 {
            items.push((start, j));
            start = j + 1;
        }
    }
    if start < tokens.len() || !items.is_empty() {
        items.push((start, tokens.len()));
    }
    items
}

/// Whether ALTER TABLE list item `tokens[a..b]` is one `P::alter_item` reads (sqlparser
/// does not, or not among others): table options, ALGORITHM=, LOCK=, RENAME {INDEX | KEY},
/// ALTER {CHECK | CONSTRAINT} ... [NOT] ENFORCED, DISABLE/ENABLE KEYS.
fn ours(tokens: &[Token], a: usize, b: usize) -> bool {
    const WORDS: [&str; 12] = [
        "ENGINE",
        "ROW_FORMAT",
        "KEY_BLOCK_SIZE",
        "CHARACTER",
        "CHARSET",
        "COLLATE",
        "COMMENT",
        "AUTO_INCREMENT",
        "ALGORITHM",
        "LOCK",
        "DISABLE",
        "ENABLE",
    ];
    let first = tokens.get(a).filter(|_| a < b);
    let second = tokens.get(a + 1).filter(|_| a + 1 < b);
    match first {
        Some(t) if t.is("RENAME") => second.is_some_and(|n| n.is("INDEX") || n.is("KEY")),
        Some(t) if t.is("ALTER") => second.is_some_and(|n| n.is("CHECK") || n.is("CONSTRAINT")),
        Some(t) if t.is("DEFAULT") => {
            second.is_some_and(|n| n.is("CHARSET") || n.is("CHARACTER") || n.is("COLLATE"))
        }
        Some(t) => WORDS.iter().any(|w| t.is(w)),
        None => false,
    }
}

/// The operations of an ALTER TABLE list that sqlparser does not read among others: table
/// options (ENGINE=, COMMENT=, [DEFAULT] CHARSET=, ROW_FORMAT=, ...) and RENAME {INDEX | KEY}
/// a TO b. When the list mixes them with operations sqlparser reads, returns the spans to
/// blank out (each with one comma, so the rest stays a list) and the operations they hold.
/// (A list of only such operations is `dispatch`'s.)
fn alter_list_extras(sql: &str, tokens: &[Token]) -> Option<(Spans, R<Vec<AlterOp>>)> {
    if !(tokens.first()?.is("ALTER") && tokens.get(1)?.is("TABLE")) {
        return None;
    }
    let mut i = 3;
    if tokens.get(3).is_some_and(|t| t.is_punct(".")) {
        i = 5;
    }
    let items = alter_items(tokens, i);
    let ours = |&(a, b): &(usize, usize)| ours(tokens, a, b);
    let first_other = items.iter().position(|x| !ours(x))?;
    if !items.iter().any(ours) {
        return None;
    }
    let ctx = Ctx::new(sql, tokens);
    let mut spans = Vec::new();
    let mut ops = Vec::new();
    let mut options = TableOptions::default();
    let mut failed = None;
    for (k, item) in items.iter().enumerate() {
        if !ours(item) {
            continue;
        }
        let (a, b) = *item;
        // The comma after an item before the first of sqlparser's, else the one before.
        let (from, to) = if k < first_other {
            (tokens[a].start, tokens[b].end())
        } else {
            (tokens[a - 1].start, tokens[b - 1].end())
        };
        spans.push((from, to));
        let mut p = P {
            sql,
            text: sql,
            toks: &tokens[a..b],
            i: 0,
            ctx: &ctx,
        };
        match p.alter_item(&mut options) {
            Ok(v) => ops.extend(v),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    if options != TableOptions::default() {
        ops.push(AlterOp::Options(options));
    }
    Some((spans, failed.map_or(Ok(ops), Err)))
}

/// Parses `tokens` by hand if the statement is one of ours.
pub fn dispatch(sql: &str, text: &str, tokens: &[Token], ctx: &Ctx) -> Option<R<Statement>> {
    let mut p = P {
        sql,
        text,
        toks: tokens,
        i: 1,
        ctx,
    };
    let first = tokens.first()?;
    if first.kind != Kind::Word {
        return None;
    }
    let kw = first.text.to_ascii_uppercase();
    let second = tokens.get(1);
    let second_is = |w: &str| second.is_some_and(|t| t.is(w));
    let r = match kw.as_str() {
        "SHOW" => p.show(),
        "START" => p.start_transaction(),
        "BEGIN" => {
            p.eat("WORK");
            p.done(Statement::Begin {
                consistent_snapshot: false,
                read_only: false,
            })
        }
        "COMMIT" => {
            p.eat("WORK");
            p.done(Statement::Commit)
        }
        "ROLLBACK" => p.rollback(),
        "SAVEPOINT" => p.ident().and_then(|s| p.done(Statement::Savepoint(s))),
        "RELEASE" => p
            .expect("SAVEPOINT")
            .and_then(|_| p.ident())
            .and_then(|s| p.done(Statement::ReleaseSavepoint(s))),
        "SET" => p.set(),
        "UPDATE" => return p.update_with_commas(),
        "XA" => p.xa(),
        "CREATE" if second_is("ROLE") => p.role_list_stmt(true),
        "DROP" if second_is("ROLE") => p.role_list_stmt(false),
        "CREATE" if second_is("USER") => p.user_list_stmt(UserStmt::Create),
        "ALTER" if second_is("USER") => p.user_list_stmt(UserStmt::Alter),
        "DROP" if second_is("USER") => p.user_list_stmt(UserStmt::Drop),
        "CREATE" | "ALTER" if view_keyword(tokens).is_some() => p.create_view(kw == "ALTER"),
        "DROP" if second_is("VIEW") => p.drop_view(),
        "CREATE" if second_is("DATABASE") || second_is("SCHEMA") => p.create_database(),
        "DROP" if second_is("DATABASE") || second_is("SCHEMA") => p.drop_database(),
        "ALTER" if second_is("TABLE") => return p.alter_table_options(),
        "GRANT" | "REVOKE" => p.grant(kw == "GRANT"),
        "USE" => p.ident().and_then(|db| p.done(Statement::Use(db))),
        "ANALYZE" => p.maintenance(MaintenanceOp::Analyze),
        "OPTIMIZE" => p.maintenance(MaintenanceOp::Optimize),
        "CHECK" => p.maintenance(MaintenanceOp::Check),
        "KILL" => p.kill(),
        "SHUTDOWN" => p.done(Statement::Shutdown),
        "RENAME" => p.rename(),
        "FLUSH" => p.flush(),
        "DO" => p.expr_list().map(Statement::Do),
        "LOCK" => p.lock_tables(),
        "UNLOCK" => {
            if !p.eat("TABLES") {
                p.eat("TABLE");
            }
            p.done(Statement::UnlockTables)
        }
        "EXPLAIN" | "DESCRIBE" | "DESC" => p.explain(),
        "PREPARE" => p.prepare(),
        "EXECUTE" => p.execute(),
        "DEALLOCATE" => p.deallocate(),
        "DROP" if second_is("PREPARE") => p.deallocate(),
        "LOAD" => p.load_data(),
        _ => return None,
    };
    Some(r)
}

/// Where the word VIEW is in `CREATE [OR REPLACE] [ALGORITHM = a] [DEFINER = user] [SQL
/// SECURITY s] VIEW` or `ALTER [...] VIEW`; None for any other statement.
fn view_keyword(tokens: &[Token]) -> Option<usize> {
    let mut i = 1;
    let at = |i: usize, w: &str| tokens.get(i).is_some_and(|t| t.is(w));
    let punct = |i: usize, p: &str| tokens.get(i).is_some_and(|t| t.is_punct(p));
    if tokens.first()?.is("CREATE") && at(i, "OR") && at(i + 1, "REPLACE") {
        i += 2;
    }
    if at(i, "ALGORITHM") && punct(i + 1, "=") {
        i += 3;
    }
    if at(i, "DEFINER") && punct(i + 1, "=") {
        i += 3;
        // CURRENT_USER() or user@host: two more tokens.
        if (punct(i, "(") && punct(i + 1, ")")) || punct(i, "@") {
            i += 2;
        }
    }
    if at(i, "SQL") && at(i + 1, "SECURITY") {
        i += 3;
    }
    at(i, "VIEW").then_some(i)
}

enum UserStmt {
    Create,
    Alter,
    Drop,
}

/// A cursor over the statement's tokens.
struct P<'a, 'c> {
    sql: &'a str,
    /// The rewritten text (same offsets as `sql`), for sub-expressions.
    text: &'a str,
    toks: &'a [Token<'a>],
    i: usize,
    ctx: &'c Ctx<'a>,
}

impl<'a> P<'a, '_> {
    fn peek(&self) -> Option<Token<'a>> {
        self.toks.get(self.i).copied()
    }

    fn peek_is(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| t.is(kw))
    }

    fn eat(&mut self, kw: &str) -> bool {
        let hit = self.peek_is(kw);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.peek().is_some_and(|t| t.is_punct(p));
        if hit {
            self.i += 1;
        }
        hit
    }

    fn err(&self) -> SqlError {
        match self.peek() {
            Some(t) => error_at(self.sql, t.start),
            None => error_at_end(self.sql),
        }
    }

    fn expect(&mut self, kw: &str) -> R<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    fn expect_punct(&mut self, p: &str) -> R<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    fn done<T>(&self, v: T) -> R<T> {
        if self.at_end() {
            Ok(v)
        } else {
            Err(self.err())
        }
    }

    /// Upper-case text of the next word (None if not a bare word).
    fn word(&mut self) -> Option<String> {
        let t = self.peek().filter(|t| t.kind == Kind::Word)?;
        let w = t.text.to_ascii_uppercase();
        self.i += 1;
        Some(w)
    }

    fn ident(&mut self) -> R<String> {
        match self.peek() {
            Some(t) if matches!(t.kind, Kind::Word | Kind::QuotedIdent) => {
                self.i += 1;
                Ok(t.value())
            }
            _ => Err(self.err()),
        }
    }

    /// An identifier or a quoted string (charset names, user names...).
    fn name(&mut self) -> R<String> {
        match self.peek() {
            Some(t) if t.kind == Kind::Str => {
                self.i += 1;
                Ok(t.value())
            }
            _ => self.ident(),
        }
    }

    fn object_name(&mut self) -> R<ObjectName> {
        let first = self.ident()?;
        if self.eat_punct(".") {
            Ok(ObjectName {
                db: Some(first),
                name: self.ident()?,
            })
        } else {
            Ok(ObjectName {
                db: None,
                name: first,
            })
        }
    }

    fn string(&mut self) -> R<String> {
        match self.peek() {
            Some(t) if t.kind == Kind::Str => {
                self.i += 1;
                Ok(t.value())
            }
            _ => Err(self.err()),
        }
    }

    /// A user variable: `@name` (lower-case).
    fn user_var(&mut self) -> R<String> {
        self.expect_punct("@")?;
        Ok(self.name()?.to_lowercase())
    }

    /// [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY
    /// 'c']] [LINES [STARTING BY 's'] [TERMINATED BY 's']] of LOAD DATA and INTO OUTFILE.
    fn file_format(&mut self) -> R<FileFormat> {
        let mut f = FileFormat::default();
        if self.eat("FIELDS") || self.eat("COLUMNS") {
            loop {
                if self.eat("TERMINATED") {
                    self.expect("BY")?;
                    f.field_end = self.string()?.into_bytes();
                } else if self.eat("OPTIONALLY") {
                    f.optionally = true;
                    self.expect("ENCLOSED")?;
                    self.expect("BY")?;
                    f.enclosed = self.load_byte()?;
                } else if self.eat("ENCLOSED") {
                    self.expect("BY")?;
                    f.enclosed = self.load_byte()?;
                } else if self.eat("ESCAPED") {
                    self.expect("BY")?;
                    f.escaped = self.load_byte()?;
                } else {
                    break;
                }
            }
        }
        if self.eat("LINES") {
            loop {
                if self.eat("STARTING") {
                    self.expect("BY")?;
                    f.line_start = self.string()?.into_bytes();
                } else if self.eat("TERMINATED") {
                    self.expect("BY")?;
                    f.line_end = self.string()?.into_bytes();
                } else {
                    break;
                }
            }
        }
        Ok(f)
    }

    /// The CHARACTER SET of LOAD DATA's or INTO OUTFILE's file: the text is UTF-8 (utf8mb4,
    /// utf8, binary); another is refused (1235) rather than read or written as UTF-8.
    fn file_charset(&mut self, what: &str) -> R<()> {
        let cs = self.name()?;
        match cs.to_ascii_lowercase().as_str() {
            "utf8mb4" | "utf8" | "utf8mb3" | "binary" => Ok(()),
            _ => Err(unsupported(&format!("{what} CHARACTER SET {cs}"))),
        }
    }

    /// A one-byte string option of LOAD DATA ('' is none); longer ones are 1083.
    fn load_byte(&mut self) -> R<Option<u8>> {
        let v = self.string()?.into_bytes();
        match v.len() {
            0 => Ok(None),
            1 => Ok(Some(v[0])),
            _ => Err(SqlError::new(crate::error::ER_WRONG_FIELD_TERMINATORS, &[])),
        }
    }

    /// LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file' [REPLACE | IGNORE] INTO
    /// TABLE t [CHARACTER SET cs] [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY]
    /// ENCLOSED BY 'c'] [ESCAPED BY 'c']] [LINES [STARTING BY 's'] [TERMINATED BY 's']]
    /// [IGNORE n {LINES | ROWS}] [(col_or_@var, ...)] [SET col = expr, ...]
    fn load_data(&mut self) -> R<Statement> {
        self.expect("DATA")?;
        if !self.eat("LOW_PRIORITY") {
            self.eat("CONCURRENT");
        }
        let local = self.eat("LOCAL");
        self.expect("INFILE")?;
        let file = self.string()?;
        let duplicates = if self.eat("REPLACE") {
            Some(true)
        } else if self.eat("IGNORE") {
            Some(false)
        } else {
            None
        };
        self.expect("INTO")?;
        self.expect("TABLE")?;
        let table = self.object_name()?;
        if self.eat("CHARACTER") {
            self.expect("SET")?;
            self.file_charset("LOAD DATA")?;
        } else if self.eat("CHARSET") {
            self.file_charset("LOAD DATA")?;
        }
        let mut ld = LoadData {
            local,
            file,
            duplicates,
            table,
            format: self.file_format()?,
            skip: 0,
            targets: Vec::new(),
            sets: Vec::new(),
        };
        if ld.format.line_end.is_empty() {
            return Err(unsupported("LOAD DATA with empty LINES TERMINATED BY"));
        }
        if self.eat("IGNORE") {
            ld.skip = self.number()?;
            if !self.eat("LINES") {
                self.expect("ROWS")?;
            }
        }
        if self.eat_punct("(") && !self.eat_punct(")") {
            loop {
                if self.peek().is_some_and(|t| t.is_punct("@")) {
                    ld.targets.push(LoadTarget::Var(self.user_var()?));
                } else {
                    ld.targets.push(LoadTarget::Column(self.ident()?));
                }
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        if self.eat("SET") {
            loop {
                let col = self.ident()?;
                self.expect_punct("=")?;
                ld.sets.push((col, self.expr_item()?));
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.done(Statement::LoadData(Box::new(ld)))
    }

    fn prepare(&mut self) -> R<Statement> {
        let name = self.ident()?.to_ascii_lowercase();
        self.expect("FROM")?;
        let source = if self.peek().is_some_and(|t| t.is_punct("@")) {
            PrepareSource::UserVar(self.user_var()?)
        } else {
            PrepareSource::Text(self.string()?)
        };
        self.done(Statement::Prepare { name, source })
    }

    fn deallocate(&mut self) -> R<Statement> {
        self.expect("PREPARE")?;
        let name = self.ident()?.to_ascii_lowercase();
        self.done(Statement::DeallocatePrepare(name))
    }

    fn execute(&mut self) -> R<Statement> {
        let name = self.ident()?.to_ascii_lowercase();
        let mut using = Vec::new();
        if self.eat("USING") {
            loop {
                using.push(self.user_var()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.done(Statement::Execute { name, using })
    }

    fn number(&mut self) -> R<u64> {
        match self
            .peek()
            .filter(|t| t.kind == Kind::Number)
            .and_then(|t| t.text.parse().ok())
        {
            Some(n) => {
                self.i += 1;
                Ok(n)
            }
            None => Err(self.err()),
        }
    }

    /// `UPDATE [LOW_PRIORITY] [IGNORE] t1, t2 ... SET ... [WHERE ...]`: sqlparser reads no
    /// comma between UPDATE's tables, so the pieces are read with it one by one (None when
    /// there is no such comma: sqlparser reads the statement).
    fn update_with_commas(&mut self) -> Option<R<Statement>> {
        let (mut depth, mut comma, mut set_at, mut where_at) = (0usize, false, None, None);
        for (k, t) in self.toks.iter().enumerate().skip(1) {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth = depth.saturating_sub(1);
            } else if depth == 0 && set_at.is_none() && t.is_punct(",") {
                comma = true;
            } else if depth == 0 && set_at.is_none() && t.is("SET") {
                set_at = Some(k);
            } else if depth == 0 && set_at.is_some() && t.is("WHERE") {
                where_at = Some(k);
                break;
            }
        }
        let set_at = set_at.filter(|_| comma)?;
        let mut from = 1;
        while self
            .toks
            .get(from)
            .is_some_and(|t| t.is("LOW_PRIORITY") || t.is("IGNORE"))
        {
            from += 1;
        }
        Some(self.update_pieces(from, set_at, where_at))
    }

    fn update_pieces(&self, from: usize, set_at: usize, where_at: Option<usize>) -> R<Statement> {
        let end = self.toks.len();
        let span = |a: usize, b: usize| -> R<(usize, &str)> {
            let (Some(first), Some(last)) = (
                self.toks.get(a),
                b.checked_sub(1).and_then(|l| self.toks.get(l)),
            ) else {
                return Err(self.err());
            };
            let text = self
                .text
                .get(first.start..last.end())
                .ok_or_else(|| self.err())?;
            Ok((first.start, text))
        };
        let parse_err =
            |start: usize| move |e: sqlparser::parser::ParserError| sp_error(self.sql, start, &e);
        let (start, text) = span(from, set_at)?;
        let mut p = sp_parser(text).map_err(parse_err(start))?;
        let tables = p
            .parse_comma_separated(|p| p.parse_table_and_joins())
            .map_err(parse_err(start))?;
        if p.peek_token().token != SpToken::EOF {
            return Err(self.err());
        }
        let ctx = self.ctx.at(start);
        let tables = tables
            .into_iter()
            .map(|t| ctx.table_with_joins(t))
            .collect::<R<Vec<_>>>()?;
        let (start, text) = span(set_at + 1, where_at.unwrap_or(end))?;
        let mut p = sp_parser(text).map_err(parse_err(start))?;
        let assignments = p
            .parse_comma_separated(|p| p.parse_assignment())
            .map_err(parse_err(start))?;
        if p.peek_token().token != SpToken::EOF {
            // Nothing but WHERE may follow; ORDER BY and LIMIT are 1221 with several tables.
            let next = p.peek_token().token.to_string().to_ascii_uppercase();
            super::lower::no_order_or_limit("UPDATE", next == "ORDER", next == "LIMIT")?;
            return Err(self.err());
        }
        let assignments = self.ctx.at(start).qualified_assignments(assignments)?;
        let selection = match where_at {
            Some(w) => Some(self.expr_at(w + 1, end)?),
            None => None,
        };
        Ok(super::lower::update_over(
            tables,
            assignments,
            selection,
            self.ctx.ignore,
        ))
    }

    /// Parses tokens `from..to` as one expression with sqlparser.
    fn expr_at(&self, from: usize, to: usize) -> R<Expr> {
        let (Some(first), Some(last)) = (
            self.toks.get(from),
            to.checked_sub(1).and_then(|l| self.toks.get(l)),
        ) else {
            return Err(self.err());
        };
        let (start, end) = (first.start, last.end());
        let sub = self.text.get(start..end).ok_or_else(|| self.err())?;
        let mut parser = sp_parser(sub).map_err(|e| sp_error(self.sql, start, &e))?;
        let e = parser
            .parse_expr()
            .map_err(|e| sp_error(self.sql, start, &e))?;
        if parser.peek_token().token != SpToken::EOF {
            return Err(error_at(
                self.sql,
                self.toks.get(to).map_or(end, |t| t.start),
            ));
        }
        self.ctx.at(start).expr(e)
    }

    /// Index of the next top-level `,` (or the end) from the cursor.
    fn next_comma(&self) -> usize {
        let mut depth = 0usize;
        for (k, t) in self.toks.iter().enumerate().skip(self.i) {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth = depth.saturating_sub(1);
            } else if depth == 0 && t.is_punct(",") {
                return k;
            }
        }
        self.toks.len()
    }

    /// The expression from the cursor up to the next top-level comma.
    fn expr_item(&mut self) -> R<Expr> {
        let end = self.next_comma();
        if end == self.i {
            return Err(self.err());
        }
        let e = self.expr_at(self.i, end)?;
        self.i = end;
        Ok(e)
    }

    fn expr_list(&mut self) -> R<Vec<Expr>> {
        let mut out = vec![self.expr_item()?];
        while self.eat_punct(",") {
            out.push(self.expr_item()?);
        }
        self.done(out)
    }

    /// [LIKE 'pattern' | WHERE expr] and the end of the statement.
    fn filter(&mut self) -> R<Option<ShowFilter>> {
        if self.eat("LIKE") {
            let s = self.string()?;
            self.done(Some(ShowFilter::Like(s)))
        } else if self.eat("WHERE") {
            let e = self.expr_at(self.i, self.toks.len())?;
            self.i = self.toks.len();
            Ok(Some(ShowFilter::Where(e)))
        } else {
            self.done(None)
        }
    }

    fn opt_db(&mut self) -> R<Option<String>> {
        if self.eat("FROM") || self.eat("IN") {
            Ok(Some(self.ident()?))
        } else {
            Ok(None)
        }
    }

    fn show(&mut self) -> R<Statement> {
        let full = self.eat("FULL");
        let global = self.eat("GLOBAL");
        if !global && !self.eat("SESSION") {
            self.eat("LOCAL");
        }
        let w = self.word().ok_or_else(|| self.err())?;
        let show = match w.as_str() {
            "VARIABLES" => Show::Variables {
                global,
                filter: self.filter()?,
            },
            "STATUS" => Show::Status {
                global,
                filter: self.filter()?,
            },
            "TABLES" => Show::Tables {
                db: self.opt_db()?,
                full,
                filter: self.filter()?,
            },
            "COLUMNS" | "FIELDS" => {
                if !self.eat("FROM") {
                    self.expect("IN")?;
                }
                let mut table = self.object_name()?;
                if let Some(db) = self.opt_db()? {
                    table.db = Some(db);
                }
                Show::Columns {
                    table,
                    full,
                    filter: self.filter()?,
                }
            }
            "INDEX" | "INDEXES" | "KEYS" => {
                if !self.eat("FROM") {
                    self.expect("IN")?;
                }
                let mut table = self.object_name()?;
                if let Some(db) = self.opt_db()? {
                    table.db = Some(db);
                }
                self.done(Show::Index { table })?
            }
            "CREATE" => {
                if self.eat("TABLE") {
                    Show::CreateTable(self.object_name()?)
                } else if self.eat("VIEW") {
                    Show::CreateView(self.object_name()?)
                } else if self.eat("USER") {
                    Show::CreateUser(self.user()?)
                } else if self.eat("DATABASE") || self.eat("SCHEMA") {
                    let if_not_exists = self.eat("IF");
                    if if_not_exists {
                        self.expect("NOT")?;
                        self.expect("EXISTS")?;
                    }
                    Show::CreateDatabase {
                        name: self.ident()?,
                        if_not_exists,
                    }
                } else {
                    return Err(unsupported("this SHOW CREATE"));
                }
            }
            "TABLE" => {
                self.expect("STATUS")?;
                Show::TableStatus {
                    db: self.opt_db()?,
                    filter: self.filter()?,
                }
            }
            "WARNINGS" | "ERRORS" => {
                let limit = if self.eat("LIMIT") {
                    let a = self.number()?;
                    if self.eat_punct(",") {
                        Some((a, self.number()?))
                    } else {
                        Some((0, a))
                    }
                } else {
                    None
                };
                Show::Warnings {
                    errors_only: w == "ERRORS",
                    count: false,
                    limit,
                }
            }
            "COUNT" => {
                for p in ["(", "*", ")"] {
                    self.expect_punct(p)?;
                }
                let w = self
                    .word()
                    .filter(|w| w == "WARNINGS" || w == "ERRORS")
                    .ok_or_else(|| self.err())?;
                Show::Warnings {
                    errors_only: w == "ERRORS",
                    count: true,
                    limit: None,
                }
            }
            "PROCESSLIST" => Show::Processlist { full },
            "STORAGE" => {
                self.expect("ENGINES")?;
                Show::Engines
            }
            "ENGINES" => Show::Engines,
            "COLLATION" => Show::Collation {
                filter: self.filter()?,
            },
            "CHARSET" => Show::CharacterSet {
                filter: self.filter()?,
            },
            "CHARACTER" => {
                self.expect("SET")?;
                Show::CharacterSet {
                    filter: self.filter()?,
                }
            }
            "ENGINE" => {
                let engine = self.ident()?;
                let mutex = match self.word().as_deref() {
                    Some("STATUS") => false,
                    Some("MUTEX") => true,
                    _ => return Err(self.err()),
                };
                Show::EngineStatus { engine, mutex }
            }
            "GRANTS" => {
                let user = if self.eat("FOR") {
                    Some(self.user()?)
                } else {
                    None
                };
                let using = if user.is_some() && self.eat("USING") {
                    self.user_names()?
                } else {
                    Vec::new()
                };
                Show::Grants { user, using }
            }
            "PLUGINS" => Show::Plugins,
            "PROFILES" => Show::Profiles,
            // SHOW PROFILE [FOR QUERY n]: only the Duration column (no CPU, BLOCK IO... types).
            "PROFILE" => {
                let query = if self.eat("FOR") {
                    self.expect("QUERY")?;
                    Some(self.number()?)
                } else {
                    None
                };
                Show::Profile { query }
            }
            "DATABASES" | "SCHEMAS" => Show::Databases {
                filter: self.filter()?,
            },
            "MASTER" | "BINARY" | "SLAVE" | "REPLICA" | "ALL" | "REPLICAS" => {
                let mut words = vec![w];
                while let Some(w) = self.word() {
                    words.push(w);
                }
                Show::Replication(words.join(" "))
            }
            "EVENTS" | "TRIGGERS" => {
                self.opt_db()?;
                self.filter()?;
                Show::NoObjects(if w == "EVENTS" {
                    ObjectKind::Events
                } else {
                    ObjectKind::Triggers
                })
            }
            "PROCEDURE" | "FUNCTION" if self.peek_is("STATUS") => {
                self.eat("STATUS");
                self.filter()?;
                Show::NoObjects(if w == "PROCEDURE" {
                    ObjectKind::Procedures
                } else {
                    ObjectKind::Functions
                })
            }
            _ => return Err(unsupported("this SHOW")),
        };
        self.done(Statement::Show(show))
    }

    fn start_transaction(&mut self) -> R<Statement> {
        self.expect("TRANSACTION")?;
        let mut consistent_snapshot = false;
        let mut read_only = false;
        if !self.at_end() {
            loop {
                if self.eat("WITH") {
                    self.expect("CONSISTENT")?;
                    self.expect("SNAPSHOT")?;
                    consistent_snapshot = true;
                } else if self.eat("READ") {
                    read_only = self.eat("ONLY");
                    if !read_only {
                        self.expect("WRITE")?;
                    }
                } else {
                    return Err(self.err());
                }
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.done(Statement::Begin {
            consistent_snapshot,
            read_only,
        })
    }

    fn rollback(&mut self) -> R<Statement> {
        self.eat("WORK");
        if self.eat("TO") {
            self.eat("SAVEPOINT");
            let s = self.ident()?;
            return self.done(Statement::RollbackToSavepoint(s));
        }
        self.done(Statement::Rollback)
    }

    fn set(&mut self) -> R<Statement> {
        if self.peek_is("ROLE") {
            self.i += 1;
            let spec = self.role_spec(true)?;
            return self.done(Statement::SetRole(spec));
        }
        if self.peek_is("DEFAULT") && self.toks.get(self.i + 1).is_some_and(|t| t.is("ROLE")) {
            self.i += 2;
            let spec = self.role_spec(false)?;
            self.expect("TO")?;
            let users = self.user_names()?;
            return self.done(Statement::SetDefaultRole { spec, users });
        }
        let scope_kw = |t: Token| t.is("GLOBAL") || t.is("SESSION") || t.is("LOCAL");
        let j = self.i + usize::from(self.peek().is_some_and(scope_kw));
        if self.toks.get(j).is_some_and(|t| t.is("TRANSACTION")) {
            let scope = if self.eat("GLOBAL") {
                TrxScope::Global
            } else if self.eat("SESSION") || self.eat("LOCAL") {
                TrxScope::Session
            } else {
                TrxScope::Next
            };
            return self.set_transaction(scope);
        }
        if self.eat("NAMES") {
            let (charset, collate) = self.names()?;
            if self.at_end() {
                return Ok(Statement::SetNames { charset, collate });
            }
            // Not alone (sqlx): handled as assignments below.
            self.i = 1;
        } else if self.eat("CHARSET")
            || (self.peek_is("CHARACTER") && self.toks.get(self.i + 1).is_some_and(|t| t.is("SET")))
        {
            if self.eat("CHARACTER") {
                self.i += 1;
            }
            let charset = self.name()?;
            return self.done(Statement::SetNames {
                charset,
                collate: None,
            });
        }
        let mut out = Vec::new();
        let mut scope = VarScope::Default;
        loop {
            self.assignment(&mut scope, &mut out)?;
            if !self.eat_punct(",") {
                break;
            }
        }
        self.done(Statement::Set(out))
    }

    /// NAMES already eaten: `charset|DEFAULT [COLLATE collation]`.
    fn names(&mut self) -> R<(String, Option<String>)> {
        let charset = self.name()?;
        let collate = if self.eat("COLLATE") {
            Some(self.name()?)
        } else {
            None
        };
        Ok((charset, collate))
    }

    fn assignment(&mut self, scope: &mut VarScope, out: &mut Vec<SetAssignment>) -> R<()> {
        if self.eat("GLOBAL") {
            *scope = VarScope::Global;
        } else if self.eat("SESSION") || self.eat("LOCAL") {
            *scope = VarScope::Session;
        }
        if self.eat("NAMES") {
            let (charset, collate) = self.names()?;
            for v in [
                "character_set_client",
                "character_set_connection",
                "character_set_results",
            ] {
                out.push(SetAssignment {
                    target: SetTarget::System {
                        scope: VarScope::Session,
                        name: v.into(),
                    },
                    value: str_lit(&charset),
                });
            }
            if let Some(c) = collate {
                out.push(SetAssignment {
                    target: SetTarget::System {
                        scope: VarScope::Session,
                        name: "collation_connection".into(),
                    },
                    value: str_lit(&c),
                });
            }
            return Ok(());
        }
        let target = if self.eat_punct("@") {
            if self.eat_punct("@") {
                let mut this_scope = VarScope::Default;
                let mut name = self.ident()?;
                if self.eat_punct(".") {
                    this_scope = match name.to_ascii_lowercase().as_str() {
                        "global" => VarScope::Global,
                        "session" | "local" => VarScope::Session,
                        _ => return Err(self.err()),
                    };
                    name = self.ident()?;
                }
                SetTarget::System {
                    scope: this_scope,
                    name: name.to_ascii_lowercase(),
                }
            } else {
                SetTarget::User(self.name()?.to_lowercase())
            }
        } else {
            let mut name = self.ident()?;
            if self.eat_punct(".") {
                name = format!("{name}.{}", self.ident()?);
            }
            SetTarget::System {
                scope: *scope,
                name: name.to_ascii_lowercase(),
            }
        };
        if !self.eat_punct("=") {
            self.expect_punct(":=")?;
        }
        let end = self.next_comma();
        let value = match self.toks.get(self.i..end) {
            Some([t]) if t.is("DEFAULT") => Expr::Default,
            Some([t])
                if t.kind == Kind::Word && !["NULL", "TRUE", "FALSE"].iter().any(|k| t.is(k)) =>
            {
                str_lit(t.text)
            }
            _ => self.expr_at(self.i, end)?,
        };
        self.i = end;
        out.push(SetAssignment { target, value });
        Ok(())
    }

    fn set_transaction(&mut self, scope: TrxScope) -> R<Statement> {
        self.expect("TRANSACTION")?;
        let mut isolation = None;
        let mut read_only = None;
        loop {
            if self.eat("ISOLATION") {
                self.expect("LEVEL")?;
                isolation = Some(match (self.word().as_deref(), self.word().as_deref()) {
                    (Some("READ"), Some("UNCOMMITTED")) => IsolationLevel::ReadUncommitted,
                    (Some("READ"), Some("COMMITTED")) => IsolationLevel::ReadCommitted,
                    (Some("REPEATABLE"), Some("READ")) => IsolationLevel::RepeatableRead,
                    (Some("SERIALIZABLE"), None) => IsolationLevel::Serializable,
                    (Some("SERIALIZABLE"), Some(_)) => {
                        self.i -= 1;
                        IsolationLevel::Serializable
                    }
                    _ => return Err(self.err()),
                });
            } else if self.eat("READ") {
                read_only = Some(match self.word().as_deref() {
                    Some("ONLY") => true,
                    Some("WRITE") => false,
                    _ => return Err(self.err()),
                });
            } else {
                return Err(self.err());
            }
            if !self.eat_punct(",") {
                break;
            }
        }
        self.done(Statement::SetTransaction {
            scope,
            isolation,
            read_only,
        })
    }

    /// An XA transaction id: its gtrid (a string, X'hex' or a number).
    fn xid(&mut self) -> R<Vec<u8>> {
        let t = self.peek().ok_or_else(|| self.err())?;
        let id = match t.kind {
            Kind::Str => t.value().into_bytes(),
            Kind::Number => t.text.as_bytes().to_vec(),
            _ => return Err(self.err()),
        };
        self.i += 1;
        if self.peek().is_some_and(|t| t.is_punct(",")) {
            return Err(unsupported("XA ids with a branch qualifier"));
        }
        Ok(id)
    }

    fn xa(&mut self) -> R<Statement> {
        let w = self.word().ok_or_else(|| self.err())?;
        let cmd = match w.as_str() {
            "START" | "BEGIN" => {
                let x = self.xid()?;
                if self.eat("JOIN") || self.eat("RESUME") {
                    return Err(unsupported("XA START JOIN/RESUME"));
                }
                XaCommand::Start(x)
            }
            "END" => {
                let x = self.xid()?;
                if self.eat("SUSPEND") {
                    return Err(unsupported("XA END SUSPEND"));
                }
                XaCommand::End(x)
            }
            "PREPARE" => XaCommand::Prepare(self.xid()?),
            "COMMIT" => {
                let xid = self.xid()?;
                let one_phase = self.eat("ONE");
                if one_phase {
                    self.expect("PHASE")?;
                }
                XaCommand::Commit { xid, one_phase }
            }
            "ROLLBACK" => XaCommand::Rollback(self.xid()?),
            "RECOVER" => XaCommand::Recover,
            _ => return Err(error_at(self.sql, self.toks[self.i - 1].start)),
        };
        self.done(Statement::Xa(cmd))
    }

    /// 'user'@'host', user@host, 'user' (host '%'), CURRENT_USER[()].
    fn user(&mut self) -> R<UserName> {
        if self.eat("CURRENT_USER") {
            if self.eat_punct("(") {
                self.expect_punct(")")?;
            }
            return Ok(UserName {
                user: "CURRENT_USER".into(),
                host: "%".into(),
            });
        }
        let user = self.name()?;
        let host = if self.eat_punct("@") {
            self.name()?
        } else {
            "%".into()
        };
        Ok(UserName { user, host })
    }

    fn if_exists(&mut self) -> R<bool> {
        if self.eat("IF") {
            self.expect("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn if_not_exists(&mut self) -> R<bool> {
        if self.eat("IF") {
            self.expect("NOT")?;
            self.expect("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// CREATE ROLE [IF NOT EXISTS] roles / DROP ROLE [IF EXISTS] roles.
    fn role_list_stmt(&mut self, create: bool) -> R<Statement> {
        self.i = 2;
        Ok(if create {
            let if_not_exists = self.if_not_exists()?;
            let roles = self.user_names()?;
            self.done(Statement::CreateRole {
                if_not_exists,
                roles,
            })?
        } else {
            let if_exists = self.if_exists()?;
            let roles = self.user_names()?;
            self.done(Statement::DropRole { if_exists, roles })?
        })
    }

    /// What SET ROLE / SET DEFAULT ROLE name: DEFAULT (when `default_ok`), NONE, ALL [EXCEPT
    /// roles] or roles.
    fn role_spec(&mut self, default_ok: bool) -> R<RoleSpec> {
        Ok(if default_ok && self.eat("DEFAULT") {
            RoleSpec::Default
        } else if self.eat("NONE") {
            RoleSpec::None
        } else if self.eat("ALL") {
            let except = if self.eat("EXCEPT") {
                self.user_names()?
            } else {
                Vec::new()
            };
            RoleSpec::All(except)
        } else {
            RoleSpec::List(self.user_names()?)
        })
    }

    fn user_list_stmt(&mut self, kind: UserStmt) -> R<Statement> {
        self.i = 2;
        // ALTER USER user DEFAULT ROLE ...
        if matches!(kind, UserStmt::Alter) {
            let save = self.i;
            if let Ok(u) = self.user() {
                if self.eat("DEFAULT") && self.eat("ROLE") {
                    let spec = self.role_spec(false)?;
                    return self.done(Statement::SetDefaultRole {
                        spec,
                        users: vec![u],
                    });
                }
            }
            self.i = save;
        }
        let flag = match kind {
            UserStmt::Create => self.if_not_exists()?,
            UserStmt::Alter | UserStmt::Drop => self.if_exists()?,
        };
        let mut users = Vec::new();
        loop {
            let u = self.user()?;
            let mut auth = None;
            if !matches!(kind, UserStmt::Drop) && self.eat("IDENTIFIED") {
                let mut a = UserAuth::default();
                if self.eat("WITH") {
                    a.plugin = Some(self.name()?.to_ascii_lowercase());
                }
                if self.eat("BY") {
                    a.password = Some(self.string()?);
                } else if a.plugin.is_some() && self.eat("AS") {
                    a.hash = Some(self.string()?);
                } else if a.plugin.is_none() {
                    return Err(self.err());
                }
                auth = Some(a);
            }
            users.push((u, auth));
            if !self.eat_punct(",") {
                break;
            }
        }
        // The options SHOW CREATE USER writes, at the values innoxide implements (MySQL's
        // defaults), so its output runs again; other values are not supported.
        const DEFAULTS: [&[&str]; 6] = [
            &["REQUIRE", "NONE"],
            &["PASSWORD", "EXPIRE", "DEFAULT"],
            &["ACCOUNT", "UNLOCK"],
            &["PASSWORD", "HISTORY", "DEFAULT"],
            &["PASSWORD", "REUSE", "INTERVAL", "DEFAULT"],
            &["PASSWORD", "REQUIRE", "CURRENT", "DEFAULT"],
        ];
        if !matches!(kind, UserStmt::Drop) {
            while let Some(words) = DEFAULTS.iter().find(|ws| {
                ws.iter()
                    .enumerate()
                    .all(|(k, w)| self.toks.get(self.i + k).is_some_and(|t| t.is(w)))
            }) {
                self.i += words.len();
            }
        }
        if !self.at_end() {
            return Err(unsupported("these user options"));
        }
        Ok(match kind {
            UserStmt::Create => Statement::CreateUser {
                if_not_exists: flag,
                users,
            },
            UserStmt::Alter => Statement::AlterUser {
                if_exists: flag,
                users,
            },
            UserStmt::Drop => Statement::DropUser {
                if_exists: flag,
                users: users.into_iter().map(|(u, _)| u).collect(),
            },
        })
    }

    /// GRANT privileges ON what TO users [WITH GRANT OPTION], REVOKE privileges ON what FROM
    /// users, REVOKE ALL [PRIVILEGES], GRANT OPTION FROM users.
    fn grant(&mut self, grant: bool) -> R<Statement> {
        // GRANT roles TO users [WITH ADMIN OPTION] / REVOKE roles FROM users: no ON.
        let end = if grant { "TO" } else { "FROM" };
        let on_at = self.toks.iter().position(|t| t.is("ON"));
        let end_at = self.toks.iter().position(|t| t.is(end));
        // (A privilege's name is not a role's: `REVOKE SELECT FROM u` is an error.)
        const PRIVILEGE_WORDS: [&str; 24] = [
            "ALL",
            "PROXY",
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "CREATE",
            "DROP",
            "ALTER",
            "INDEX",
            "REFERENCES",
            "USAGE",
            "GRANT",
            "EXECUTE",
            "TRIGGER",
            "EVENT",
            "RELOAD",
            "SHUTDOWN",
            "PROCESS",
            "FILE",
            "SUPER",
            "SHOW",
            "LOCK",
            "REPLICATION",
        ];
        if end_at.is_some_and(|e| on_at.is_none_or(|o| e < o))
            && !self
                .peek()
                .is_some_and(|t| PRIVILEGE_WORDS.iter().any(|w| t.is(w)))
        {
            let roles = self.user_names()?;
            self.expect(end)?;
            let users = self.user_names()?;
            let admin = grant && self.eat("WITH");
            if admin {
                self.expect("ADMIN")?;
                self.expect("OPTION")?;
            }
            return self.done(if grant {
                Statement::GrantRole {
                    roles,
                    users,
                    admin,
                }
            } else {
                Statement::RevokeRole { roles, users }
            });
        }
        let mut privileges = Vec::new();
        let mut columns: Vec<(String, Vec<String>)> = Vec::new();
        let mut cur: Vec<String> = Vec::new();
        loop {
            match self.peek() {
                Some(t) if t.is("ON") || (!grant && t.is("FROM")) => break,
                Some(t) if t.is_punct(",") => {
                    // (After a column list the privilege is already taken.)
                    if !cur.is_empty() {
                        privileges.push(std::mem::take(&mut cur).join(" "));
                    }
                }
                Some(t) if t.kind == Kind::Word => cur.push(t.text.to_ascii_uppercase()),
                Some(t) if t.is_punct("(") && !cur.is_empty() => {
                    // A column privilege: `SELECT (a, b)`.
                    self.i += 1;
                    let mut cols = vec![self.ident()?];
                    while self.eat_punct(",") {
                        cols.push(self.ident()?);
                    }
                    self.expect_punct(")")?;
                    columns.push((std::mem::take(&mut cur).join(" "), cols));
                    continue;
                }
                _ => return Err(self.err()),
            }
            self.i += 1;
        }
        if !cur.is_empty() || (privileges.is_empty() && columns.is_empty()) {
            privileges.push(cur.join(" "));
        }
        if self.eat("FROM") {
            // Only REVOKE ALL [PRIVILEGES], GRANT OPTION has no ON.
            let all = privileges.len() == 2
                && columns.is_empty()
                && matches!(privileges[0].as_str(), "ALL" | "ALL PRIVILEGES")
                && privileges[1] == "GRANT OPTION";
            if !all {
                return Err(self.err());
            }
            let users = self.user_names()?;
            return self.done(Statement::RevokeAll { users });
        }
        self.i += 1;
        self.eat("TABLE");
        let on = if self.eat_punct("*") {
            if self.eat_punct(".") {
                self.expect_punct("*")?;
                GrantOn::Global
            } else {
                GrantOn::Database(None)
            }
        } else {
            let first = self.ident()?;
            if !self.eat_punct(".") {
                GrantOn::Table(ObjectName {
                    db: None,
                    name: first,
                })
            } else if self.eat_punct("*") {
                GrantOn::Database(Some(first))
            } else {
                GrantOn::Table(ObjectName {
                    db: Some(first),
                    name: self.ident()?,
                })
            }
        };
        if !self.eat(if grant { "TO" } else { "FROM" }) {
            return Err(self.err());
        }
        let users = self.user_names()?;
        if grant && self.eat("WITH") {
            self.expect("GRANT")?;
            self.expect("OPTION")?;
            privileges.push("GRANT OPTION".into());
        }
        self.done(if grant {
            Statement::Grant {
                privileges,
                columns,
                on,
                users,
            }
        } else {
            Statement::Revoke {
                privileges,
                columns,
                on,
                users,
            }
        })
    }

    fn user_names(&mut self) -> R<Vec<UserName>> {
        let mut users = vec![self.user()?];
        while self.eat_punct(",") {
            users.push(self.user()?);
        }
        Ok(users)
    }

    /// CREATE / ALTER VIEW: the clauses before VIEW, the name and column list, then the
    /// SELECT (parsed on its own, and kept as written) and WITH [CASCADED | LOCAL] CHECK
    /// OPTION.
    fn create_view(&mut self, alter: bool) -> R<Statement> {
        let or_replace = !alter && self.eat("OR") && self.eat("REPLACE");
        let mut algorithm = "UNDEFINED".to_string();
        if self.eat("ALGORITHM") {
            self.expect_punct("=")?;
            algorithm = match self.word() {
                Some(w) if matches!(w.as_str(), "UNDEFINED" | "MERGE" | "TEMPTABLE") => w,
                _ => return Err(self.err()),
            };
        }
        let mut definer = None;
        if self.eat("DEFINER") {
            self.expect_punct("=")?;
            let u = self.user()?;
            definer = (u.user != "CURRENT_USER").then_some(u);
        }
        let mut invoker = false;
        if self.eat("SQL") {
            self.expect("SECURITY")?;
            invoker = match self.word().as_deref() {
                Some("INVOKER") => true,
                Some("DEFINER") => false,
                _ => return Err(self.err()),
            };
        }
        self.expect("VIEW")?;
        let name = self.object_name()?;
        let mut columns = Vec::new();
        if self.eat_punct("(") {
            loop {
                columns.push(self.ident()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        self.expect("AS")?;
        let mut end = self.toks.len();
        let mut check_option = None;
        let tail = |k: usize| self.toks.get(end.wrapping_sub(k));
        if tail(1).is_some_and(|t| t.is("OPTION")) && tail(2).is_some_and(|t| t.is("CHECK")) {
            let level = tail(3).filter(|t| t.is("CASCADED") || t.is("LOCAL"));
            let with = if level.is_some() { 4 } else { 3 };
            if tail(with).is_some_and(|t| t.is("WITH")) {
                check_option = Some(level.map_or("CASCADED".into(), |t| t.text.to_uppercase()));
                end -= with;
            }
        }
        let toks = &self.toks[self.i.min(end)..end];
        let (Some(first), Some(last)) = (toks.first(), toks.last()) else {
            return Err(self.err());
        };
        let text = self.sql[first.start..last.end()].to_string();
        let query = match super::parse(&text) {
            Ok(Statement::Select(q)) => q,
            Ok(Statement::SelectInto(..)) => {
                return Err(SqlError::new(
                    crate::error::ER_VIEW_SELECT_CLAUSE,
                    &[&"INTO"],
                ))
            }
            Ok(_) => return Err(error_at(self.sql, first.start)),
            Err(e) => return Err(e),
        };
        if toks
            .iter()
            .any(|t| t.kind == Kind::Param || t.is_punct("@"))
        {
            return Err(SqlError::new(crate::error::ER_VIEW_SELECT_VARIABLE, &[]));
        }

        Ok(Statement::CreateView(Box::new(CreateView {
            name,
            or_replace,
            alter,
            algorithm,
            definer,
            invoker,
            columns,
            query,
            text,
            check_option,
        })))
    }

    /// DROP VIEW [IF EXISTS] v, ... [RESTRICT | CASCADE]
    fn drop_view(&mut self) -> R<Statement> {
        self.i = 2;
        let if_exists = self.if_exists()?;
        let mut names = vec![self.object_name()?];
        while self.eat_punct(",") {
            names.push(self.object_name()?);
        }
        if !self.eat("RESTRICT") {
            self.eat("CASCADE");
        }
        self.done(Statement::DropView { names, if_exists })
    }

    fn create_database(&mut self) -> R<Statement> {
        self.i = 2;
        let if_not_exists = self.if_not_exists()?;
        let name = self.ident()?;
        let mut charset = None;
        let mut collate = None;
        while !self.at_end() {
            self.eat("DEFAULT");
            if self.eat("CHARSET") || (self.eat("CHARACTER") && self.eat("SET")) {
                self.eat_punct("=");
                charset = Some(self.name()?);
            } else if self.eat("COLLATE") {
                self.eat_punct("=");
                collate = Some(self.name()?);
            } else if self.eat("ENCRYPTION") {
                // As SHOW CREATE DATABASE writes it: 'N' (no encryption) is all there is.
                self.eat_punct("=");
                if !self.string()?.eq_ignore_ascii_case("N") {
                    return Err(unsupported("ENCRYPTION='Y'"));
                }
            } else {
                return Err(self.err());
            }
        }
        Ok(Statement::CreateDatabase {
            name,
            if_not_exists,
            charset,
            collate,
        })
    }

    fn drop_database(&mut self) -> R<Statement> {
        self.i = 2;
        let if_exists = self.if_exists()?;
        let name = self.ident()?;
        self.done(Statement::DropDatabase { name, if_exists })
    }

    /// ALTER TABLE t option [,] option ... (only table options, ALGORITHM= and LOCK=; None
    /// for anything else).
    fn alter_table_options(&mut self) -> Option<R<Statement>> {
        self.i = 2;
        let table = self.object_name().ok()?;
        // RENAME without TO/AS (sqlparser wants one of them).
        if self.peek_is("RENAME") {
            self.eat("RENAME");
            if ["TO", "AS", "COLUMN", "INDEX", "KEY"]
                .iter()
                .any(|w| self.peek_is(w))
            {
                // Back onto RENAME: the list is read below (or by sqlparser).
                self.i -= 1;
            } else {
                let r = self.object_name().and_then(|n| {
                    self.done(Statement::AlterTable {
                        table,
                        ops: vec![AlterOp::RenameTo(n)],
                    })
                });
                return Some(r);
            }
        }
        // A list of operations sqlparser does not read (table options, RENAME INDEX, ALTER
        // CHECK, ...): ours; mixed with others, `alter_list_extras` takes ours out.
        let items = alter_items(self.toks, self.i);
        if items.is_empty() || !items.iter().all(|&(a, b)| ours(self.toks, a, b)) {
            return None;
        }
        let mut ops = Vec::new();
        let mut o = TableOptions::default();
        for &(a, b) in &items {
            let mut p = P {
                sql: self.sql,
                text: self.text,
                toks: &self.toks[a..b],
                i: 0,
                ctx: self.ctx,
            };
            match p.alter_item(&mut o) {
                Ok(v) => ops.extend(v),
                Err(e) => return Some(Err(e)),
            }
        }
        if o != TableOptions::default() {
            ops.push(AlterOp::Options(o));
        }
        Some(Ok(Statement::AlterTable { table, ops }))
    }

    /// One of `ours` ALTER TABLE operations, to the end of the tokens (table options into
    /// `o`).
    fn alter_item(&mut self, o: &mut TableOptions) -> R<Vec<AlterOp>> {
        let mut ops = Vec::new();
        if self.peek_is("RENAME") {
            ops.push(self.rename_index()?);
        } else if self.eat("ALTER") {
            // ALTER {CHECK | CONSTRAINT} name [NOT] ENFORCED (MySQL 8.0.16 / 8.0.19).
            if !self.eat("CHECK") {
                self.expect("CONSTRAINT")?;
            }
            let name = self.ident()?;
            let enforced = !self.eat("NOT");
            self.expect("ENFORCED")?;
            ops.push(AlterOp::CheckEnforced { name, enforced });
        } else if self.eat("DISABLE") || self.peek_is("ENABLE") {
            let enable = self.eat("ENABLE");
            self.expect("KEYS")?;
            ops.push(AlterOp::Keys(enable));
        } else if !self.table_options(o, &mut ops)? {
            return Err(self.err());
        }
        self.done(ops)
    }

    /// Table options (into `o`), ALGORITHM= and LOCK= (into `ops`) to the end of the
    /// tokens; false at a word that is none of them.
    fn table_options(&mut self, o: &mut TableOptions, ops: &mut Vec<AlterOp>) -> R<bool> {
        while !self.at_end() {
            self.eat("DEFAULT");
            let w = self.word().ok_or_else(|| self.err())?;
            if w == "CHARACTER" {
                self.expect("SET")?;
            }
            self.eat_punct("=");
            match w.as_str() {
                "ALGORITHM" => ops.push(AlterOp::Algorithm(self.name()?.to_uppercase())),
                "LOCK" => ops.push(AlterOp::Lock(self.name()?.to_uppercase())),
                "ENGINE" => o.engine = Some(self.name()?),
                "ROW_FORMAT" => o.row_format = Some(self.name()?),
                "KEY_BLOCK_SIZE" => o.key_block_size = Some(self.number()?),
                "AUTO_INCREMENT" => o.auto_increment = Some(self.number()?),
                "CHARACTER" | "CHARSET" => o.charset = Some(self.name()?),
                "COLLATE" => o.collate = Some(self.name()?),
                "COMMENT" => o.comment = Some(self.string()?),
                _ => return Ok(false),
            }
            self.eat_punct(",");
        }
        Ok(true)
    }

    /// RENAME {INDEX | KEY} a TO b, from RENAME.
    fn rename_index(&mut self) -> R<AlterOp> {
        self.expect("RENAME")?;
        if !self.eat("INDEX") {
            self.expect("KEY")?;
        }
        let old = self.ident()?;
        self.expect("TO")?;
        let new = self.ident()?;
        Ok(AlterOp::RenameIndex { old, new })
    }

    fn table_list(&mut self) -> R<Vec<ObjectName>> {
        let mut out = vec![self.object_name()?];
        while self.eat_punct(",") {
            out.push(self.object_name()?);
        }
        Ok(out)
    }

    fn maintenance(&mut self, op: MaintenanceOp) -> R<Statement> {
        if !self.eat("NO_WRITE_TO_BINLOG") {
            self.eat("LOCAL");
        }
        if !self.eat("TABLE") {
            self.expect("TABLES")?;
        }
        let tables = self.table_list()?;
        // CHECK TABLE options (QUICK, FAST, ...) change nothing for us.
        while op == MaintenanceOp::Check && self.word().is_some() {}
        self.done(Statement::TableMaintenance { op, tables })
    }

    fn kill(&mut self) -> R<Statement> {
        let query_only = self.eat("QUERY");
        if !query_only {
            self.eat("CONNECTION");
        }
        let id = self.expr_at(self.i, self.toks.len())?;
        Ok(Statement::Kill { id, query_only })
    }

    fn rename(&mut self) -> R<Statement> {
        if !self.eat("TABLE") {
            self.expect("TABLES")?;
        }
        let mut out = Vec::new();
        loop {
            let from = self.object_name()?;
            self.expect("TO")?;
            out.push((from, self.object_name()?));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.done(Statement::RenameTable(out))
    }

    fn flush(&mut self) -> R<Statement> {
        if !self.eat("NO_WRITE_TO_BINLOG") {
            self.eat("LOCAL");
        }
        let mut words = Vec::new();
        while let Some(t) = self.peek() {
            if !t.is_punct(",") {
                words.push(t.value().to_ascii_lowercase());
            }
            self.i += 1;
        }
        if words.is_empty() {
            return Err(self.err());
        }
        Ok(Statement::Flush(words))
    }

    fn lock_tables(&mut self) -> R<Statement> {
        if !self.eat("TABLES") {
            self.expect("TABLE")?;
        }
        let mut out = Vec::new();
        loop {
            let t = self.object_name()?;
            if self.eat("AS")
                || self.peek().is_some_and(|t| {
                    t.kind == Kind::QuotedIdent
                        || (t.kind == Kind::Word
                            && !t.is("READ")
                            && !t.is("WRITE")
                            && !t.is("LOW_PRIORITY"))
                })
            {
                self.ident()?;
            }
            let write = if self.eat("READ") {
                self.eat("LOCAL");
                false
            } else {
                self.eat("LOW_PRIORITY");
                self.expect("WRITE")?;
                true
            };
            out.push((t, write));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.done(Statement::LockTables(out))
    }

    fn explain(&mut self) -> R<Statement> {
        if self.eat("FORMAT") {
            self.expect_punct("=")?;
            // Only the tabular form is made: JSON and TREE are refused rather than answered
            // in another form than asked.
            let format = self.ident()?;
            match format.to_ascii_uppercase().as_str() {
                "TRADITIONAL" => {}
                "JSON" | "TREE" => {
                    return Err(unsupported(&format!(
                        "EXPLAIN FORMAT={}",
                        format.to_ascii_uppercase()
                    )))
                }
                _ => {
                    return Err(SqlError::new(
                        crate::error::ER_UNKNOWN_EXPLAIN_FORMAT,
                        &[&format],
                    ))
                }
            }
        }
        let explainable = [
            "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH", "TABLE",
        ];
        match self.peek() {
            Some(t) if t.is_punct("(") || explainable.iter().any(|k| t.is(k)) => {
                let inner = self.sql.get(t.start..).unwrap_or("");
                super::parse(inner).map(|s| Statement::Explain(Box::new(s)))
            }
            Some(_) => {
                let table = self.object_name()?;
                let filter = if self.at_end() {
                    None
                } else {
                    Some(ShowFilter::Like(self.name()?))
                };
                self.done(Statement::Show(Show::Columns {
                    table,
                    full: false,
                    filter,
                }))
            }
            None => Err(self.err()),
        }
    }
}
