//! Lowering of sqlparser statements (queries, DML, CREATE/DROP/ALTER TABLE, CREATE/DROP
//! INDEX, TRUNCATE) into `crate::ast`, and the context every lowering step shares.
//!
//! INVARIANTS
//! - `Ctx` knows the original statement text and its tokens: a `?` is numbered by the rank of
//!   its byte offset among the statement's `?` tokens (sqlparser's span gives the offset), and
//!   an unaliased select item's `text` is the original text of the item (found from the
//!   SELECT keyword's offset), so both are independent of the order lowering visits nodes.
//! - The text sqlparser parses may differ from the statement only by same-length rewrites
//!   (`special::rewrite`), so offsets agree.
//! - Whatever sqlparser accepted that our AST cannot express gives 1235.

use super::expr::{column_type, object_last};
use super::lexer::{self, Kind, Token};
use crate::ast::*;
use crate::error::{
    SqlError, ER_DERIVED_MUST_HAVE_ALIAS, ER_NOT_SUPPORTED_YET, ER_TF_MUST_HAVE_ALIAS,
    ER_TOO_LONG_IDENT, ER_WRONG_ARGUMENTS, ER_WRONG_COLUMN_NAME, ER_WRONG_FIELD_SPEC,
    ER_WRONG_USAGE,
};
use sqlparser::ast as sp;
use sqlparser::tokenizer::Span;
use std::cell::{Cell, RefCell};

type R<T> = Result<T, SqlError>;

/// The longest table or column name MySQL takes (NAME_CHAR_LEN).
const MAX_IDENT_CHARS: usize = 64;

/// LIMIT and OFFSET take only unsigned integer literals and `?` (MySQL's grammar): LIMIT -1
/// or LIMIT 'a' is a syntax error.
fn limit_operand(e: &Option<Expr>) -> R<()> {
    match e {
        None | Some(Expr::Param(_)) => Ok(()),
        Some(Expr::Literal(Literal::Number(n))) if n.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        Some(_) => Err(SqlError::parse("LIMIT", 1)),
    }
}

pub fn unsupported(what: &str) -> SqlError {
    SqlError::new(ER_NOT_SUPPORTED_YET, &[&what])
}

/// One SELECT's items: for each item, the byte ranges of its tokens.
type ItemSpans = Vec<Vec<(usize, usize)>>;

#[derive(Clone)]
pub struct Ctx<'a> {
    pub(super) sql: &'a str,
    /// Byte offset in `sql` of the text sqlparser is parsing (sub-expressions of SET/SHOW).
    base: usize,
    params: Vec<usize>,
    /// (offset of a SELECT keyword, its items).
    selects: Vec<(usize, ItemSpans)>,
    /// Offsets of ZEROFILL words blanked out by `special::rewrite`.
    pub zerofill: Vec<usize>,
    /// Compound INTERVAL units replaced by `special::rewrite`: (offset, unit).
    pub compound_units: Vec<(usize, String)>,
    /// JSON_VALUE's ON EMPTY / ON ERROR clauses, blanked out by `special::rewrite`.
    pub json_value: Vec<super::special::JsonValueClauses>,
    /// Where ALTER TABLE's DROP CHECK had CHECK (`special::rewrite` made it DROP INDEX).
    pub drop_checks: Vec<usize>,
    /// ALTER TABLE operations `special::rewrite` took out of the list (table options, RENAME
    /// INDEX): added after sqlparser's.
    pub alter_extra: Vec<AlterOp>,
    /// UPDATE IGNORE / DELETE IGNORE (the word is blanked out by `special::rewrite`).
    pub ignore: bool,
    /// CREATE TABLE ... IGNORE (false) / REPLACE (true) SELECT (blanked out likewise).
    pub create_select_dup: Option<bool>,
    /// Fallback numbering for a placeholder without a usable span.
    next_param: Cell<usize>,
    /// Queries lowered so far (subqueries included).
    queries: Cell<usize>,
    /// WINDOW name AS (...) definitions of the SELECTs lowered so far (the last one of a name
    /// wins: an inner SELECT's own come after its outer one's).
    pub(super) windows: RefCell<Vec<(String, sp::WindowSpec)>>,
}

impl<'a> Ctx<'a> {
    pub fn new(sql: &'a str, tokens: &[Token<'a>]) -> Ctx<'a> {
        Ctx {
            sql,
            base: 0,
            params: tokens
                .iter()
                .filter(|t| t.kind == Kind::Param)
                .map(|t| t.start)
                .collect(),
            selects: select_items(tokens),
            zerofill: vec![],
            compound_units: vec![],
            json_value: vec![],
            drop_checks: vec![],
            alter_extra: vec![],
            ignore: false,
            create_select_dup: None,
            next_param: Cell::new(0),
            queries: Cell::new(0),
            windows: RefCell::new(Vec::new()),
        }
    }

    /// The same context for text starting at byte `base` of the statement.
    pub fn at(&self, base: usize) -> Ctx<'a> {
        Ctx {
            base,
            ..self.clone()
        }
    }

    fn offset(&self, span: Span) -> Option<usize> {
        self.offset_at(span.start)
    }

    /// The byte offset in the statement of a sqlparser location.
    pub(super) fn offset_at(&self, at: sqlparser::tokenizer::Location) -> Option<usize> {
        let text = self.sql.get(self.base..)?;
        lexer::offset_of(text, at.line, at.column).map(|o| o + self.base)
    }

    pub fn param_number(&self, span: Span) -> usize {
        match self
            .offset(span)
            .and_then(|o| self.params.binary_search(&o).ok())
        {
            Some(i) => i,
            None => {
                let n = self.next_param.get();
                self.next_param.set(n + 1);
                n
            }
        }
    }

    pub fn statement(&self, s: sp::Statement) -> R<Statement> {
        use sp::Statement as S;
        Ok(match s {
            S::Query(q) => Statement::Select(Box::new(self.query(*q)?)),
            S::Insert(i) => Statement::Insert(Box::new(self.insert(i)?)),
            S::Update(u) if !u.table.joins.is_empty() => self.update_multi(u)?,
            S::Update(u) => Statement::Update(Box::new(self.update(u)?)),
            S::Delete(d) if !d.tables.is_empty() || d.using.is_some() => self.delete_multi(d)?,
            S::Delete(d) => Statement::Delete(Box::new(self.delete(d)?)),
            S::CreateTable(c) => Statement::CreateTable(Box::new(self.create_table(c)?)),
            S::Drop {
                object_type,
                if_exists,
                mut names,
                temporary,
                table,
                ..
            } => match object_type {
                sp::ObjectType::Table => Statement::DropTable {
                    names: names.iter().map(object_name).collect::<R<_>>()?,
                    if_exists,
                    temporary,
                },
                sp::ObjectType::Index if names.len() == 1 => Statement::DropIndex {
                    name: names.pop().map(|n| object_last(&n)).unwrap_or_default(),
                    table: object_name(
                        table
                            .as_ref()
                            .ok_or_else(|| unsupported("DROP INDEX without ON"))?,
                    )?,
                },
                _ => return Err(unsupported("this DROP")),
            },
            S::Truncate(t) if t.table_names.len() == 1 && t.partitions.is_none() => {
                Statement::TruncateTable(object_name(&t.table_names[0].name)?)
            }
            S::CreateIndex(c) => Statement::CreateIndex {
                name: c
                    .name
                    .as_ref()
                    .map(object_last)
                    .ok_or_else(|| unsupported("CREATE INDEX without a name"))?,
                table: object_name(&c.table_name)?,
                columns: index_columns(c.columns)?,
                unique: c.unique,
            },
            S::AlterTable(a) => Statement::AlterTable {
                table: object_name(&a.name)?,
                ops: {
                    let mut ops = Vec::new();
                    for op in a.operations {
                        ops.extend(self.alter_op(op)?);
                    }
                    ops.extend(self.alter_extra.iter().cloned());
                    ops
                },
            },
            _ => return Err(unsupported("this statement")),
        })
    }

    pub fn query(&self, mut q: sp::Query) -> R<Select> {
        self.queries.set(self.queries.get() + 1);
        if q.fetch.is_some() || q.for_clause.is_some() || q.settings.is_some() {
            return Err(unsupported("this query form"));
        }
        // WITH: each CTE lowered (seeing the ones before it), then inlined (parse::cte).
        let mut ctes: Vec<super::cte::Cte> = Vec::new();
        if let Some(with) = q.with.take() {
            for c in with.cte_tables {
                let name = c.alias.name.value.clone();
                if ctes.iter().any(|x| x.name == name) {
                    return Err(SqlError::new(crate::error::ER_NONUNIQ_TABLE, &[&name]));
                }
                let mut body = self.query(*c.query)?;
                super::cte::inline(&mut body, &ctes);
                let cols: Vec<String> = c
                    .alias
                    .columns
                    .iter()
                    .map(|d| d.name.value.clone())
                    .collect();
                super::cte::rename_columns(&mut body, &name, &cols)?;
                // Without RECURSIVE a CTE's own name inside it is another table, as in MySQL.
                let body = if with.recursive {
                    super::cte::split_recursive(&name, body)?
                } else {
                    super::cte::CteBody::Plain(body)
                };
                ctes.push(super::cte::Cte { name, body });
            }
        }
        let mut sel = self.set_expr(*q.body)?;
        // WITH ROLLUP's own order gives way to the statement's ORDER BY (rollup.rs U2).
        let rollup = super::rollup::is_rollup(&sel);
        if q.order_by.is_some() && rollup {
            sel.order_by.clear();
        }
        let has_outer = q.order_by.is_some() || q.limit_clause.is_some() || !q.locks.is_empty();
        if has_outer && !sel.unions.is_empty() {
            // ORDER BY and LIMIT after a UNION apply to the whole of it: the UNION becomes a
            // derived table, read by a SELECT * that has them (names and positions are the
            // UNION's columns, as in MySQL).
            sel = Select::star_from(sel, "<union>");
        }
        let own_order = !sel.order_by.is_empty() && !rollup;
        if has_outer && (own_order || sel.limit.is_some() || sel.lock.is_some()) {
            return Err(unsupported("nested ORDER BY / LIMIT"));
        }
        if let Some(ob) = q.order_by {
            sel.order_by = self.order_by(ob)?;
        }
        match q.limit_clause {
            Some(sp::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) if limit_by.is_empty() => {
                sel.limit = self.opt_expr(limit)?;
                sel.offset = self.opt_expr(offset.map(|o| o.value))?;
            }
            Some(sp::LimitClause::OffsetCommaLimit { offset, limit }) => {
                sel.offset = Some(self.expr(offset)?);
                sel.limit = Some(self.expr(limit)?);
            }
            Some(_) => return Err(unsupported("LIMIT BY")),
            None => {}
        }
        limit_operand(&sel.limit)?;
        limit_operand(&sel.offset)?;
        for l in &q.locks {
            let nowait = matches!(l.nonblock, Some(sp::NonBlock::Nowait));
            let skip_locked = matches!(l.nonblock, Some(sp::NonBlock::SkipLocked));
            let clause = match l.lock_type {
                sp::LockType::Update => LockClause::ForUpdate {
                    nowait,
                    skip_locked,
                },
                sp::LockType::Share => LockClause::ForShare {
                    nowait,
                    skip_locked,
                },
            };
            match &l.of {
                Some(name) => {
                    let table = name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map_or_else(|| name.to_string(), |i| i.value.clone());
                    sel.lock_of.push((table, clause));
                }
                None => sel.lock = Some(clause),
            }
        }
        super::cte::inline(&mut sel, &ctes);
        Ok(sel)
    }

    fn set_expr(&self, body: sp::SetExpr) -> R<Select> {
        match body {
            sp::SetExpr::Select(s) => self.select(*s),
            sp::SetExpr::Query(q) => self.query(*q),
            sp::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let all = match set_quantifier {
                    sp::SetQuantifier::All => true,
                    sp::SetQuantifier::Distinct | sp::SetQuantifier::None => false,
                    _ => return Err(unsupported("this set operation")),
                };
                let (mut head, mut right) = (self.set_expr(*left)?, self.set_expr(*right)?);
                let op = match op {
                    sp::SetOperator::Union => {
                        let tail = std::mem::take(&mut right.unions);
                        head.unions.push((all, right));
                        head.unions.extend(tail);
                        return Ok(head);
                    }
                    sp::SetOperator::Intersect => SetOp::Intersect,
                    sp::SetOperator::Except => SetOp::Except,
                    _ => return Err(unsupported("this set operation")),
                };
                Ok(Select::star_from_set(op, all, head, right))
            }
            _ => Err(unsupported("this query form")),
        }
    }

    fn select(&self, s: sp::Select) -> R<Select> {
        if s.top.is_some()
            || s.into.is_some()
            || !s.lateral_views.is_empty()
            || s.prewhere.is_some()
            || !s.connect_by.is_empty()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || s.qualify.is_some()
            || s.exclude.is_some()
        {
            return Err(unsupported("this SELECT form"));
        }
        let distinct = match s.distinct {
            None | Some(sp::Distinct::All) => false,
            Some(sp::Distinct::Distinct) => true,
            Some(sp::Distinct::On(_)) => return Err(unsupported("DISTINCT ON")),
        };
        let spans = self
            .offset(s.select_token.0.span)
            .and_then(|o| self.selects.iter().find(|(k, _)| *k == o))
            .map(|(_, items)| items)
            .filter(|items| items.len() == s.projection.len());
        for sp::NamedWindowDefinition(name, def) in s.named_window {
            let spec = match def {
                sp::NamedWindowExpr::WindowSpec(mut spec) => match spec.window_name.take() {
                    Some(base) => self.inherit(spec, &base.value)?,
                    None => spec,
                },
                sp::NamedWindowExpr::NamedWindow(other) => self.named_window(&other.value)?,
            };
            self.windows.borrow_mut().push((name.value, spec));
        }
        let mut items = Vec::with_capacity(s.projection.len());
        for (i, item) in s.projection.into_iter().enumerate() {
            let item_spans = spans.and_then(|sp| sp.get(i)).map(Vec::as_slice);
            items.push(self.select_item(item, item_spans)?);
        }
        let mut from = Vec::with_capacity(s.from.len());
        for twj in s.from {
            from.push(self.table_with_joins(twj)?);
        }
        // FROM DUAL: no table (MySQL's dummy table name).
        if let [TableRef::Table {
            name,
            alias: None,
            hints,
        }] = &from[..]
        {
            if name.db.is_none() && hints.is_empty() && name.name.eq_ignore_ascii_case("dual") {
                from.clear();
            }
        }
        let selection = self.opt_expr(s.selection)?;
        let (group_by, rollup) = match s.group_by {
            sp::GroupByExpr::Expressions(list, mods) if mods.is_empty() => {
                (self.exprs(list)?, false)
            }
            sp::GroupByExpr::Expressions(list, mods)
                if mods == [sp::GroupByWithModifier::Rollup] && !list.is_empty() =>
            {
                (self.exprs(list)?, true)
            }
            _ => return Err(unsupported("this GROUP BY")),
        };
        let q = Select {
            distinct,
            items,
            from,
            selection,
            group_by,
            having: self.opt_expr(s.having)?,
            order_by: vec![],
            limit: None,
            offset: None,
            lock: None,
            lock_of: vec![],
            unions: vec![],
        };
        if rollup {
            return super::rollup::rollup(q);
        }
        Ok(q)
    }

    fn select_item(&self, item: sp::SelectItem, spans: Option<&[(usize, usize)]>) -> R<SelectItem> {
        let (expr, alias) = match item {
            sp::SelectItem::Wildcard(_) => return Ok(SelectItem::Wildcard),
            sp::SelectItem::QualifiedWildcard(
                sp::SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) => {
                return Ok(SelectItem::QualifiedWildcard(object_last(&n)));
            }
            sp::SelectItem::UnnamedExpr(e) => (e, None),
            sp::SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value)),
            _ => return Err(unsupported("this select item")),
        };
        let text = match spans {
            Some(sp) => {
                let mut sp = sp;
                if alias.is_some() {
                    sp = sp.split_last().map_or(sp, |(_, rest)| rest);
                    if let Some(((s, e), rest)) = sp.split_last() {
                        if self
                            .sql
                            .get(*s..*e)
                            .is_some_and(|w| w.eq_ignore_ascii_case("as"))
                        {
                            sp = rest;
                        }
                    }
                }
                match (sp.first(), sp.last()) {
                    (Some(first), Some(last)) => {
                        self.sql.get(first.0..last.1).unwrap_or("").to_string()
                    }
                    _ => expr.to_string(),
                }
            }
            None => expr.to_string(),
        };
        Ok(SelectItem::Expr {
            expr: self.expr(expr)?,
            alias,
            text,
        })
    }

    fn order_by(&self, ob: sp::OrderBy) -> R<Vec<OrderItem>> {
        match ob.kind {
            sp::OrderByKind::Expressions(list) if ob.interpolate.is_none() => {
                self.order_items(list)
            }
            _ => Err(unsupported("this ORDER BY")),
        }
    }

    pub(super) fn order_items(&self, list: Vec<sp::OrderByExpr>) -> R<Vec<OrderItem>> {
        list.into_iter()
            .map(|o| {
                Ok(OrderItem {
                    desc: matches!(o.options.sort, Some(sp::OrderBySort::Desc)),
                    expr: self.expr(o.expr)?,
                })
            })
            .collect()
    }

    pub(super) fn table_with_joins(&self, twj: sp::TableWithJoins) -> R<TableRef> {
        let mut left = self.table_factor(twj.relation)?;
        for j in twj.joins {
            use sp::JoinOperator as J;
            let (kind, c) = match j.join_operator {
                J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
                J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
                J::Right(c) | J::RightOuter(c) => (JoinKind::Right, c),
                J::CrossJoin(c) => (JoinKind::Cross, c),
                J::StraightJoin(c) => (JoinKind::Straight, c),
                _ => return Err(unsupported("this join")),
            };
            let (on, using, natural) = match c {
                sp::JoinConstraint::On(e) => (Some(self.expr(e)?), vec![], false),
                sp::JoinConstraint::Using(names) => {
                    (None, names.iter().map(object_last).collect(), false)
                }
                sp::JoinConstraint::None => (None, vec![], false),
                sp::JoinConstraint::Natural => (None, vec![], true),
            };
            left = TableRef::Join {
                left: Box::new(left),
                right: Box::new(self.table_factor(j.relation)?),
                kind,
                on,
                using,
                natural,
            };
        }
        Ok(left)
    }

    fn table_factor(&self, f: sp::TableFactor) -> R<TableRef> {
        match f {
            sp::TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version: None,
                partitions,
                sample: None,
                index_hints,
                ..
            } if with_hints.is_empty() && partitions.is_empty() => Ok(TableRef::Table {
                name: object_name(&name)?,
                alias: table_alias(alias)?,
                hints: index_hints
                    .into_iter()
                    .map(|h| {
                        let names = h.index_names.into_iter().map(|i| i.value).collect();
                        match h.hint_type {
                            sp::TableIndexHintType::Use => IndexHint::Use(names),
                            sp::TableIndexHintType::Force => IndexHint::Force(names),
                            sp::TableIndexHintType::Ignore => IndexHint::Ignore(names),
                        }
                    })
                    .collect(),
            }),
            sp::TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                sample: None,
            } => {
                let subquery = Box::new(self.query(*subquery)?);
                match table_alias(alias)? {
                    Some(alias) => Ok(TableRef::Derived { subquery, alias }),
                    None => Err(SqlError::new(ER_DERIVED_MUST_HAVE_ALIAS, &[])),
                }
            }
            sp::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.table_with_joins(*table_with_joins),
            sp::TableFactor::JsonTable {
                json_expr,
                json_path,
                columns,
                alias,
            } => {
                let Some(alias) = table_alias(alias)? else {
                    return Err(SqlError::new(ER_TF_MUST_HAVE_ALIAS, &[]));
                };
                // The document may not hold a subquery (MySQL: 1210).
                let before = self.queries.get();
                let expr = self.expr(json_expr)?;
                if self.queries.get() != before {
                    return Err(SqlError::new(ER_WRONG_ARGUMENTS, &[&"JSON_TABLE"]));
                }
                Ok(TableRef::JsonTable(Box::new(JsonTable {
                    expr,
                    path: quoted(&json_path.value)?,
                    columns: jt_columns(columns)?,
                    alias,
                })))
            }
            _ => Err(unsupported("this table reference")),
        }
    }

    fn insert(&self, i: sp::Insert) -> R<Insert> {
        if i.table_alias.is_some()
            || i.insert_alias.is_some()
            || i.returning.is_some()
            || i.partitioned.is_some()
            || !i.after_columns.is_empty()
            || i.or.is_some()
        {
            return Err(unsupported("this INSERT form"));
        }
        let table = match &i.table {
            sp::TableObject::TableName(n) => object_name(n)?,
            _ => return Err(unsupported("this INSERT target")),
        };
        let mut columns: Vec<String> = i.columns.iter().map(object_last).collect();
        let source = match i.source {
            Some(q) => match *q {
                sp::Query {
                    body,
                    order_by: None,
                    limit_clause: None,
                    with: None,
                    ..
                } if matches!(*body, sp::SetExpr::Values(_)) => match *body {
                    sp::SetExpr::Values(v) => InsertSource::Values(
                        v.rows
                            .into_iter()
                            .map(|r| self.exprs(r.content))
                            .collect::<R<_>>()?,
                    ),
                    _ => return Err(unsupported("this INSERT source")),
                },
                q => InsertSource::Select(Box::new(self.query(q)?)),
            },
            None => {
                let (cols, row) = self.assignments(i.assignments)?.into_iter().unzip();
                columns = cols;
                InsertSource::Values(vec![row])
            }
        };
        let on_duplicate = match i.on {
            Some(sp::OnInsert::DuplicateKeyUpdate(a)) => self.assignments(a)?,
            Some(_) => return Err(unsupported("ON CONFLICT")),
            None => vec![],
        };
        Ok(Insert {
            table,
            columns,
            source,
            ignore: i.ignore,
            replace: i.replace_into,
            on_duplicate,
        })
    }

    fn assignments(&self, list: Vec<sp::Assignment>) -> R<Vec<(String, Expr)>> {
        list.into_iter()
            .map(|a| match a.target {
                sp::AssignmentTarget::ColumnName(n) => Ok((object_last(&n), self.expr(a.value)?)),
                sp::AssignmentTarget::Tuple(_) => Err(unsupported("tuple assignment")),
            })
            .collect()
    }

    /// The one table of a single-table UPDATE or DELETE, with its index hints.
    fn single_table(
        &self,
        twj: sp::TableWithJoins,
        what: &str,
    ) -> R<(ObjectName, Option<String>, Vec<IndexHint>)> {
        if !twj.joins.is_empty() {
            return Err(unsupported(what));
        }
        match self.table_factor(twj.relation)? {
            TableRef::Table { name, alias, hints } => Ok((name, alias, hints)),
            _ => Err(unsupported(what)),
        }
    }

    fn update(&self, u: sp::Update) -> R<Update> {
        if u.from.is_some() || u.returning.is_some() || u.or.is_some() {
            return Err(unsupported("multi-table UPDATE"));
        }
        let (table, alias, hints) = self.single_table(u.table, "multi-table UPDATE")?;
        Ok(Update {
            table,
            alias,
            hints,
            assignments: self.assignments(u.assignments)?,
            selection: self.opt_expr(u.selection)?,
            order_by: self.order_items(u.order_by)?,
            limit: self.opt_expr(u.limit)?,
            ignore: self.ignore,
        })
    }

    /// `UPDATE <table references> SET [t.]c = v, ... [WHERE ...]` (no ORDER BY or LIMIT:
    /// 1221, as MySQL).
    fn update_multi(&self, u: sp::Update) -> R<Statement> {
        if u.from.is_some() || u.returning.is_some() || u.or.is_some() {
            return Err(unsupported("this UPDATE form"));
        }
        no_order_or_limit("UPDATE", !u.order_by.is_empty(), u.limit.is_some())?;
        let from = vec![self.table_with_joins(u.table)?];
        let assignments = self.qualified_assignments(u.assignments)?;
        Ok(update_over(
            from,
            assignments,
            self.opt_expr(u.selection)?,
            self.ignore,
        ))
    }

    /// SET's assignments with the table each names (None: an unqualified column).
    pub(super) fn qualified_assignments(
        &self,
        list: Vec<sp::Assignment>,
    ) -> R<Vec<(Option<String>, String, Expr)>> {
        list.into_iter()
            .map(|a| match a.target {
                sp::AssignmentTarget::ColumnName(n) => {
                    let parts: Vec<String> =
                        n.0.iter()
                            .filter_map(|p| p.as_ident())
                            .map(|i| i.value.clone())
                            .collect();
                    let (table, col) = match parts.as_slice() {
                        [c] => (None, c.clone()),
                        [.., t, c] => (Some(t.clone()), c.clone()),
                        [] => return Err(unsupported("this assignment")),
                    };
                    Ok((table, col, self.expr(a.value)?))
                }
                sp::AssignmentTarget::Tuple(_) => Err(unsupported("tuple assignment")),
            })
            .collect()
    }

    /// `DELETE t1[, t2] FROM <references> ...` or `DELETE FROM t1[, t2] USING <references>
    /// ...` (no ORDER BY or LIMIT: 1221, as MySQL).
    fn delete_multi(&self, d: sp::Delete) -> R<Statement> {
        if d.returning.is_some() {
            return Err(unsupported("this DELETE form"));
        }
        no_order_or_limit("DELETE", !d.order_by.is_empty(), d.limit.is_some())?;
        let from = match d.from {
            sp::FromTable::WithFromKeyword(v) | sp::FromTable::WithoutKeyword(v) => v,
        };
        let (targets, refs) = match d.using {
            // DELETE FROM t1, t2 USING <references>
            Some(using) => {
                let mut targets = Vec::with_capacity(from.len());
                for t in from {
                    match self.table_with_joins(t)? {
                        TableRef::Table { name, .. } => targets.push(name),
                        _ => return Err(unsupported("this DELETE target")),
                    }
                }
                (targets, using)
            }
            // DELETE t1, t2 FROM <references>
            None => (
                d.tables.iter().map(object_name).collect::<R<Vec<_>>>()?,
                from,
            ),
        };
        let from = refs
            .into_iter()
            .map(|t| self.table_with_joins(t))
            .collect::<R<Vec<_>>>()?;
        Ok(Statement::DeleteMulti(Box::new(DeleteMulti {
            targets,
            from,
            selection: self.opt_expr(d.selection)?,
            ignore: self.ignore,
        })))
    }

    fn delete(&self, d: sp::Delete) -> R<Delete> {
        let mut from = match d.from {
            sp::FromTable::WithFromKeyword(v) | sp::FromTable::WithoutKeyword(v) => v,
        };
        if !d.tables.is_empty() || d.using.is_some() || d.returning.is_some() || from.len() != 1 {
            return Err(unsupported("multi-table DELETE"));
        }
        let twj = from
            .pop()
            .ok_or_else(|| unsupported("multi-table DELETE"))?;
        let (table, alias, hints) = self.single_table(twj, "multi-table DELETE")?;
        if !hints.is_empty() {
            // MySQL's single-table DELETE has no index hints (a multiple-table one has).
            return Err(unsupported("index hints in a single-table DELETE"));
        }
        Ok(Delete {
            table,
            alias,
            selection: self.opt_expr(d.selection)?,
            order_by: self.order_items(d.order_by)?,
            limit: self.opt_expr(d.limit)?,
            ignore: self.ignore,
        })
    }

    fn create_table(&self, c: sp::CreateTable) -> R<CreateTable> {
        if c.or_replace || c.external || c.clone.is_some() || c.partition_by.is_some() {
            return Err(unsupported("this CREATE TABLE form"));
        }
        // `CREATE TABLE t ()` is a syntax error in MySQL (`CREATE TABLE t` alone is 1113).
        if c.columns.is_empty()
            && c.constraints.is_empty()
            && c.like.is_none()
            && c.query.is_none()
            && self
                .sql
                .split_whitespace()
                .collect::<String>()
                .contains("()")
        {
            return Err(SqlError::parse(")", 1));
        }
        let mut keys = Vec::new();
        let mut checks = Vec::new();
        let mut foreign_keys = Vec::new();
        let mut columns = Vec::with_capacity(c.columns.len());
        let starts: Vec<Option<usize>> = c
            .columns
            .iter()
            .map(|col| self.offset(col.name.span))
            .collect();
        for (i, col) in c.columns.into_iter().enumerate() {
            let range = (starts[i], starts.get(i + 1).copied().flatten());
            columns.push(self.column_spec(col, range, &mut keys, &mut checks)?);
        }
        for con in c.constraints {
            match con {
                sp::TableConstraint::Check(ch) => checks.push(self.check_spec(ch, None, None)?),
                sp::TableConstraint::ForeignKey(f) => foreign_keys.push(fk_spec(f)?),
                con => keys.push(key_spec(con)?),
            }
        }
        let mut options = TableOptions::default();
        if let sp::CreateTableOptions::Plain(opts) | sp::CreateTableOptions::Options(opts) =
            c.table_options
        {
            for o in opts {
                table_option(o, &mut options)?;
            }
        }
        if let Some(sp::CommentDef::WithEq(s) | sp::CommentDef::WithoutEq(s)) = c.comment {
            options.comment = Some(s);
        }
        let like = match c.like {
            Some(sp::CreateTableLikeKind::Parenthesized(l) | sp::CreateTableLikeKind::Plain(l)) => {
                Some(object_name(&l.name)?)
            }
            None => None,
        };
        let name = object_name(&c.name)?;
        if name.name.chars().count() > MAX_IDENT_CHARS {
            return Err(SqlError::new(ER_TOO_LONG_IDENT, &[&name.name]));
        }
        Ok(CreateTable {
            name,
            if_not_exists: c.if_not_exists,
            temporary: c.temporary,
            columns,
            keys,
            checks,
            foreign_keys,
            options,
            like,
            as_select: c.query.map(|q| self.query(*q)).transpose()?.map(Box::new),
            on_duplicate: self.create_select_dup,
        })
    }

    /// A column definition; `range` is (this column's offset, the next one's) to find the
    /// ZEROFILL words that belong to it. Inline PRIMARY KEY / UNIQUE go to `keys` too.
    /// A CHECK constraint (`name`: the CONSTRAINT name of a column's, `column`: that column).
    fn check_spec(
        &self,
        c: sp::CheckConstraint,
        name: Option<String>,
        column: Option<&str>,
    ) -> R<CheckSpec> {
        let text = c.expr.to_string();
        Ok(CheckSpec {
            name: c.name.map(|n| n.value).or(name),
            expr: self.expr(*c.expr)?,
            text,
            enforced: c.enforced.unwrap_or(true),
            column: column.map(str::to_string),
        })
    }

    fn column_spec(
        &self,
        col: sp::ColumnDef,
        range: (Option<usize>, Option<usize>),
        keys: &mut Vec<KeySpec>,
        checks: &mut Vec<CheckSpec>,
    ) -> R<ColumnSpec> {
        let mut ty = column_type(&col.data_type)?;
        if let (Some(start), end) = range {
            ty.zerofill = self
                .zerofill
                .iter()
                .any(|&z| z > start && end.is_none_or(|e| z < e));
        }
        let name = col.name.value;
        // MySQL refuses column names that end with a space (and empty ones).
        if name.is_empty() || name.ends_with(' ') {
            return Err(SqlError::new(ER_WRONG_COLUMN_NAME, &[&name]));
        }
        if name.chars().count() > MAX_IDENT_CHARS {
            return Err(SqlError::new(ER_TOO_LONG_IDENT, &[&name]));
        }
        let mut spec = ColumnSpec {
            name: name.clone(),
            ty,
            nullable: None,
            default: None,
            default_text: None,
            auto_increment: false,
            on_update_now: false,
            comment: None,
            generated: None,
        };
        let key = |kind| KeySpec {
            kind,
            name: None,
            columns: vec![IndexColumn {
                name: name.clone(),
                prefix: None,
                desc: false,
            }],
        };
        for o in col.options {
            match o.option {
                sp::ColumnOption::Null => spec.nullable = Some(true),
                sp::ColumnOption::NotNull => spec.nullable = Some(false),
                sp::ColumnOption::Default(e) => {
                    spec.default_text = default_text(&e);
                    spec.default = Some(self.expr(e)?);
                }
                sp::ColumnOption::PrimaryKey(_) => keys.push(key(KeyKind::Primary)),
                sp::ColumnOption::Unique(_) => keys.push(key(KeyKind::Unique)),
                sp::ColumnOption::CharacterSet(n) => spec.ty.charset = Some(object_last(&n)),
                sp::ColumnOption::Collation(n) => spec.ty.collate = Some(object_last(&n)),
                sp::ColumnOption::Comment(s) => spec.comment = Some(s),
                sp::ColumnOption::OnUpdate(e) => match self.expr(e)? {
                    Expr::Function { name, .. } if name == "now" => spec.on_update_now = true,
                    _ => return Err(unsupported("ON UPDATE other than CURRENT_TIMESTAMP")),
                },
                sp::ColumnOption::DialectSpecific(tokens)
                    if tokens
                        .iter()
                        .any(|t| t.to_string().eq_ignore_ascii_case("AUTO_INCREMENT")) =>
                {
                    spec.auto_increment = true
                }
                sp::ColumnOption::Generated {
                    generation_expr: Some(e),
                    generation_expr_mode,
                    ..
                } => {
                    let text = e.to_string();
                    spec.generated = Some(GeneratedSpec {
                        expr: self.expr(e)?,
                        text,
                        stored: matches!(
                            generation_expr_mode,
                            Some(sp::GeneratedExpressionMode::Stored)
                        ),
                    });
                }
                // MySQL ignores a column's REFERENCES (only a table's FOREIGN KEY counts).
                sp::ColumnOption::ForeignKey(_) => {}
                sp::ColumnOption::Check(c) => {
                    let cname = o.name.as_ref().map(|n| n.value.clone());
                    checks.push(self.check_spec(c, cname, Some(&name))?);
                }
                _ => return Err(unsupported("this column option")),
            }
        }
        // AUTO_INCREMENT only on integer and floating-point columns (MySQL: 1063).
        if spec.auto_increment
            && !matches!(
                spec.ty.name,
                TypeName::TinyInt
                    | TypeName::SmallInt
                    | TypeName::MediumInt
                    | TypeName::Int
                    | TypeName::BigInt
                    | TypeName::Bool
                    | TypeName::Float
                    | TypeName::Double
            )
        {
            return Err(SqlError::new(ER_WRONG_FIELD_SPEC, &[&spec.name]));
        }
        Ok(spec)
    }

    fn change_column(
        &self,
        old: String,
        name: sp::Ident,
        data_type: sp::DataType,
        options: Vec<sp::ColumnOption>,
        position: Option<sp::MySQLColumnPosition>,
    ) -> R<Vec<AlterOp>> {
        let start = self.offset(name.span);
        let def = sp::ColumnDef {
            name,
            data_type,
            options: options
                .into_iter()
                .map(|option| sp::ColumnOptionDef { name: None, option })
                .collect(),
        };
        let (mut keys, mut checks) = (vec![], vec![]);
        let column = self.column_spec(def, (start, None), &mut keys, &mut checks)?;
        let change = AlterOp::ChangeColumn {
            old,
            column,
            position: position.map(|p| match p {
                sp::MySQLColumnPosition::First => None,
                sp::MySQLColumnPosition::After(c) => Some(c.value),
            }),
        };
        Ok(with_column_parts(change, keys, checks))
    }

    /// One ALTER TABLE operation as ours: a column's definition with a key or CHECK in it
    /// gives those as operations of their own after it.
    fn alter_op(&self, op: sp::AlterTableOperation) -> R<Vec<AlterOp>> {
        use sp::AlterTableOperation as A;
        Ok(vec![match op {
            A::AddColumn {
                column_def,
                column_position,
                ..
            } => {
                let (mut keys, mut checks) = (vec![], vec![]);
                let start = self.offset(column_def.name.span);
                let column = self.column_spec(column_def, (start, None), &mut keys, &mut checks)?;
                let add = AlterOp::AddColumn {
                    column,
                    position: column_position.map(|p| match p {
                        sp::MySQLColumnPosition::First => None,
                        sp::MySQLColumnPosition::After(c) => Some(c.value),
                    }),
                };
                return Ok(with_column_parts(add, keys, checks));
            }
            A::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => {
                return self.change_column(
                    col_name.value.clone(),
                    col_name,
                    data_type,
                    options,
                    column_position,
                )
            }
            A::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => {
                return self.change_column(
                    old_name.value,
                    new_name,
                    data_type,
                    options,
                    column_position,
                )
            }
            A::DropColumn { column_names, .. } if column_names.len() == 1 => {
                AlterOp::DropColumn(column_names.into_iter().map(|c| c.value).collect())
            }
            A::AddConstraint {
                constraint: sp::TableConstraint::Check(ch),
                ..
            } => AlterOp::AddCheck(self.check_spec(ch, None, None)?),
            A::AddConstraint {
                constraint: sp::TableConstraint::ForeignKey(f),
                ..
            } => AlterOp::AddForeignKey(fk_spec(f)?),
            A::AddConstraint { constraint, .. } => AlterOp::AddKey(key_spec(constraint)?),
            A::DropForeignKey { name, .. } => AlterOp::DropForeignKey(name.value),
            A::DropConstraint { name, .. } => AlterOp::DropConstraint(name.value),
            A::DropIndex { name } => {
                let at = self.offset(name.span);
                let check = at.is_some_and(|o| {
                    self.drop_checks.iter().any(|&c| {
                        c < o
                            && self
                                .sql
                                .get(c + "CHECK".len()..o)
                                .is_some_and(|g| g.trim().is_empty())
                    })
                });
                if check {
                    AlterOp::DropCheck(name.value)
                } else {
                    AlterOp::DropIndex(name.value)
                }
            }
            A::RenameColumn {
                old_column_name,
                new_column_name,
            } => AlterOp::RenameColumn {
                old: old_column_name.value,
                new: new_column_name.value,
            },
            A::DropPrimaryKey { .. } => AlterOp::DropPrimaryKey,
            A::AlterColumn { column_name, op } => match op {
                sp::AlterColumnOperation::SetDefault { value } => AlterOp::AlterDefault {
                    column: column_name.value,
                    text: default_text(&value),
                    default: Some(self.expr(value)?),
                },
                sp::AlterColumnOperation::DropDefault => AlterOp::AlterDefault {
                    column: column_name.value,
                    default: None,
                    text: None,
                },
                _ => return Err(unsupported("this ALTER COLUMN")),
            },
            A::RenameTable {
                table_name: sp::RenameTableNameKind::To(n) | sp::RenameTableNameKind::As(n),
            } => AlterOp::RenameTo(object_name(&n)?),
            A::AutoIncrement { value, .. } => AlterOp::Options(TableOptions {
                auto_increment: Some(
                    value
                        .value
                        .to_string()
                        .parse()
                        .map_err(|_| unsupported("this AUTO_INCREMENT"))?,
                ),
                ..TableOptions::default()
            }),
            A::Algorithm { algorithm, .. } => AlterOp::Algorithm(algorithm.to_string()),
            A::Lock { lock, .. } => AlterOp::Lock(lock.to_string()),
            _ => return Err(unsupported("this ALTER TABLE operation")),
        }])
    }
}

/// A DEFAULT in parentheses is an expression default (MySQL 8.0.13): its text as written
/// back, without the parentheses.
fn default_text(e: &sp::Expr) -> Option<String> {
    match e {
        sp::Expr::Nested(inner) => Some(inner.to_string()),
        _ => None,
    }
}

/// `name` or `db.name`.
pub fn object_name(n: &sp::ObjectName) -> R<ObjectName> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| match p {
                sp::ObjectNamePart::Identifier(id) => Ok(id.value.clone()),
                sp::ObjectNamePart::Function(_) => Err(unsupported("this name")),
            })
            .collect::<R<_>>()?;
    match parts.as_slice() {
        [name] => Ok(ObjectName {
            db: None,
            name: name.clone(),
        }),
        [db, name] => Ok(ObjectName {
            db: Some(db.clone()),
            name: name.clone(),
        }),
        _ => Err(unsupported("this name")),
    }
}

/// ORDER BY or LIMIT in a multiple-table `stmt`: 1221, as MySQL.
pub(super) fn no_order_or_limit(stmt: &str, order_by: bool, limit: bool) -> R<()> {
    match (order_by, limit) {
        (_, true) => Err(SqlError::new(ER_WRONG_USAGE, &[&stmt, &"LIMIT"])),
        (true, false) => Err(SqlError::new(ER_WRONG_USAGE, &[&stmt, &"ORDER BY"])),
        (false, false) => Ok(()),
    }
}

/// A multiple-table UPDATE over the FROM items `from`.
pub(super) fn update_over(
    from: Vec<TableRef>,
    assignments: Vec<(Option<String>, String, Expr)>,
    selection: Option<Expr>,
    ignore: bool,
) -> Statement {
    Statement::UpdateMulti(Box::new(UpdateMulti {
        from,
        assignments,
        selection,
        ignore,
    }))
}

fn table_alias(a: Option<sp::TableAlias>) -> R<Option<String>> {
    match a {
        Some(a) if !a.columns.is_empty() => Err(unsupported("column aliases for a table")),
        Some(a) => Ok(Some(a.name.value)),
        None => Ok(None),
    }
}

/// Index columns: `c`, `c DESC`, `c(10)` (sqlparser reads the prefix as a call).
fn index_columns(cols: Vec<sp::IndexColumn>) -> R<Vec<IndexColumn>> {
    cols.into_iter()
        .map(|c| {
            let desc = matches!(c.column.options.sort, Some(sp::OrderBySort::Desc));
            let (name, prefix) = match c.column.expr {
                sp::Expr::Identifier(id) => (id.value, None),
                sp::Expr::Function(f) => {
                    let prefix = match &f.args {
                        sp::FunctionArguments::List(l) => match l.args.as_slice() {
                            [sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(
                                sp::Expr::Value(v),
                            ))] => v.value.to_string().parse().ok(),
                            _ => None,
                        },
                        _ => None,
                    };
                    (
                        object_last(&f.name),
                        Some(prefix.ok_or_else(|| unsupported("this key part"))?),
                    )
                }
                _ => return Err(unsupported("functional key parts")),
            };
            Ok(IndexColumn { name, prefix, desc })
        })
        .collect()
}

/// An ADD/CHANGE/MODIFY COLUMN operation followed by the keys and CHECKs its definition
/// holds (`x INT UNIQUE`, `x INT CHECK (x > 0)`).
fn with_column_parts(op: AlterOp, keys: Vec<KeySpec>, checks: Vec<CheckSpec>) -> Vec<AlterOp> {
    let mut out = vec![op];
    out.extend(keys.into_iter().map(AlterOp::AddKey));
    out.extend(checks.into_iter().map(AlterOp::AddCheck));
    out
}

fn fk_spec(f: sp::ForeignKeyConstraint) -> R<ForeignKeySpec> {
    let action = |a: Option<sp::ReferentialAction>| match a {
        None | Some(sp::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(sp::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(sp::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(sp::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(sp::ReferentialAction::SetDefault) => FkAction::SetDefault,
    };
    Ok(ForeignKeySpec {
        name: f.name.map(|n| n.value),
        index: f.index_name.map(|n| n.value),
        columns: f.columns.into_iter().map(|c| c.value).collect(),
        parent: object_name(&f.foreign_table)?,
        parent_columns: f.referred_columns.into_iter().map(|c| c.value).collect(),
        on_delete: action(f.on_delete),
        on_update: action(f.on_update),
    })
}

fn key_spec(c: sp::TableConstraint) -> R<KeySpec> {
    use sp::TableConstraint as T;
    let (kind, name, columns) = match c {
        T::PrimaryKey(p) => (
            KeyKind::Primary,
            p.index_name.or(p.name),
            index_columns(p.columns)?,
        ),
        T::Unique(u) => (
            KeyKind::Unique,
            u.index_name.or(u.name),
            index_columns(u.columns)?,
        ),
        T::Index(i) => (KeyKind::Index, i.name, index_columns(i.columns)?),
        T::FulltextOrSpatial(f) if f.fulltext => (
            KeyKind::Fulltext,
            f.opt_index_name,
            index_columns(f.columns)?,
        ),
        _ => return Err(unsupported("this constraint")),
    };
    Ok(KeySpec {
        kind,
        name: name.map(|n| n.value),
        columns,
    })
}

/// A JSON_TABLE path or DEFAULT: a string literal.
fn quoted(v: &sp::Value) -> R<String> {
    match v {
        sp::Value::SingleQuotedString(s) | sp::Value::DoubleQuotedString(s) => Ok(s.clone()),
        _ => Err(unsupported("a JSON_TABLE path that is not a string")),
    }
}

/// The COLUMNS clause of a JSON_TABLE.
fn jt_columns(cols: Vec<sp::JsonTableColumn>) -> R<Vec<JtColumn>> {
    let response = |r: Option<sp::JsonTableColumnErrorHandling>| -> R<JtResponse> {
        Ok(match r {
            None | Some(sp::JsonTableColumnErrorHandling::Null) => JtResponse::Null,
            Some(sp::JsonTableColumnErrorHandling::Error) => JtResponse::Error,
            Some(sp::JsonTableColumnErrorHandling::Default(v)) => {
                JtResponse::Default(quoted(&v.value)?)
            }
        })
    };
    cols.into_iter()
        .map(|c| {
            Ok(match c {
                sp::JsonTableColumn::ForOrdinality(name) => JtColumn::Ordinality(name.value),
                sp::JsonTableColumn::Named(n) => JtColumn::Path {
                    name: n.name.value,
                    ty: column_type(&n.r#type)?,
                    path: quoted(&n.path.value)?,
                    exists: n.exists,
                    on_empty: response(n.on_empty)?,
                    on_error: response(n.on_error)?,
                },
                sp::JsonTableColumn::Nested(n) => JtColumn::Nested {
                    path: quoted(&n.path.value)?,
                    columns: jt_columns(n.columns)?,
                },
            })
        })
        .collect()
}

fn option_text(e: &sp::Expr) -> String {
    match e {
        sp::Expr::Identifier(id) => id.value.clone(),
        sp::Expr::Value(v) => match &v.value {
            sp::Value::SingleQuotedString(s) | sp::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

fn table_option(o: sp::SqlOption, opts: &mut TableOptions) -> R<()> {
    match o {
        sp::SqlOption::KeyValue { key, value } => {
            let k = key.value.to_ascii_uppercase();
            let k = k.strip_prefix("DEFAULT ").unwrap_or(&k);
            let v = option_text(&value);
            let num = || {
                v.parse::<u64>()
                    .map_err(|_| unsupported("this table option value"))
            };
            match k {
                "ENGINE" => opts.engine = Some(v),
                "ROW_FORMAT" => opts.row_format = Some(v),
                "CHARSET" | "CHARACTER SET" => opts.charset = Some(v),
                "COLLATE" => opts.collate = Some(v),
                "AUTO_INCREMENT" => opts.auto_increment = Some(num()?),
                "KEY_BLOCK_SIZE" => opts.key_block_size = Some(num()?),
                "COMMENT" => opts.comment = Some(v),
                _ => return Err(unsupported("this table option")),
            }
        }
        sp::SqlOption::NamedParenthesizedList(l) if l.key.value.eq_ignore_ascii_case("ENGINE") => {
            opts.engine = l.name.map(|n| n.value);
        }
        sp::SqlOption::Comment(sp::CommentDef::WithEq(s) | sp::CommentDef::WithoutEq(s)) => {
            opts.comment = Some(s)
        }
        _ => return Err(unsupported("this table option")),
    }
    Ok(())
}

/// The keywords that may come between SELECT and its first item.
pub(super) const SELECT_MODIFIERS: [&str; 11] = [
    "ALL",
    "DISTINCT",
    "DISTINCTROW",
    "HIGH_PRIORITY",
    "STRAIGHT_JOIN",
    "SQL_SMALL_RESULT",
    "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT",
    "SQL_NO_CACHE",
    "SQL_CACHE",
    "SQL_CALC_FOUND_ROWS",
];

/// For every SELECT keyword: its offset and the token spans of each of its items (items end
/// at a comma or a clause keyword at the SELECT's parenthesis depth).
fn select_items(tokens: &[Token]) -> Vec<(usize, ItemSpans)> {
    const ENDS: [&str; 13] = [
        "FROM",
        "WHERE",
        "GROUP",
        "HAVING",
        "ORDER",
        "LIMIT",
        "INTO",
        "FOR",
        "LOCK",
        "UNION",
        "WINDOW",
        "EXCEPT",
        "INTERSECT",
    ];
    let mut out = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        if !t.is("SELECT") {
            continue;
        }
        let mut i = k + 1;
        while tokens
            .get(i)
            .is_some_and(|t| SELECT_MODIFIERS.iter().any(|m| t.is(m)))
        {
            i += 1;
        }
        let mut items: ItemSpans = vec![vec![]];
        let mut depth = 0usize;
        while let Some(t) = tokens.get(i) {
            if depth == 0 && (t.is_punct(")") || t.is_punct(";") || ENDS.iter().any(|e| t.is(e))) {
                break;
            }
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            }
            if depth == 0 && t.is_punct(",") {
                items.push(vec![]);
            } else if let Some(last) = items.last_mut() {
                last.push((t.start, t.end()));
            }
            i += 1;
        }
        out.push((t.start, items));
    }
    out
}
