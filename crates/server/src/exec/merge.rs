//! Merging views and derived tables into the SELECT that reads them (MySQL's "merge"
//! algorithm): `SELECT ... FROM v WHERE v.x = 5`, with `v` a view or a derived table over one
//! base table, is compiled as a SELECT of that base table with `v`'s WHERE added and each of
//! `v`'s columns replaced by its expression, so the planner sees the base table's indexes
//! (instead of the view's rows made in full and searched).
//!
//! INVARIANTS
//! - G1: only what cannot change the result merges: the inner SELECT has one base table in
//!   FROM and no UNION, DISTINCT, GROUP BY, HAVING, aggregate, window function, ORDER BY,
//!   LIMIT, locking clause or subquery; every column it reads is its table's; its column
//!   names are distinct. Anything else is left to be read as rows (select.rs), which gives
//!   the errors such a SELECT gives.
//! - G2: the base table takes the name `\0alias`, which no statement can write and which
//!   unqualified names do not reach (expr.rs `resolve`): the outer query reaches it only
//!   through the merged columns' expressions, so a column the view does not show stays
//!   unknown (1054).
//! - G3: the inner WHERE goes where it filters exactly the inner rows: into the outer WHERE
//!   when no join can null-extend the merged table, into the leaf's ON when it is the right
//!   side of a LEFT JOIN (then only if every column is a plain column, which null-extension
//!   makes NULL as the view's would be); otherwise nothing merges.
//! - G4: an unqualified outer name is replaced only when exactly one FROM item has that
//!   column and it is a merged one (two: 1052, as the unmerged query would give). Nothing
//!   merges when the outer query has a subquery, a USING or NATURAL join, or a FROM item
//!   whose columns are not known without reading it.
//! - G5: a plan with a merged view is never kept by a prepared statement (select.rs makes
//!   its basis not cacheable): the view's definition may change.
//! - G6: INSERT, UPDATE and DELETE through a view change its base table: only a view that
//!   merges (G1); the statement is rewritten as on the base table, the view's WHERE added to
//!   UPDATE's and DELETE's, each column named replaced by the base column it is (another
//!   expression: 1348 for UPDATE, 1471 for INSERT). The base table's privileges are checked
//!   for the invoker. The rewritten statement keeps no plan (dml.rs `through_view`).
//! - G7: WITH [CASCADED | LOCAL] CHECK OPTION: every row an INSERT or UPDATE through the view
//!   writes must satisfy the view's WHERE (`ViewCheck`), else error 1369 (a warning and the
//!   row skipped with IGNORE); the view reads one base table, so CASCADED and LOCAL agree.
//! - G8: with other FROM items, an item whose computed column (not a plain column of its
//!   base table) the WHERE or an ON condition reads is not merged: the joins pair rows by
//!   hash or index on column values, and an expression over the merged table would leave
//!   them a nested loop. Its rows are made first, as a derived table's, and joined by hash.
//!
//! - G9: a view or derived table whose one FROM item is itself a view that merges is merged
//!   after that inner view was merged into it (so a chain of views reads its base table),
//!   up to MAX_NESTED_MERGES deep.
//!
//! Latch order: the catalog's maps only, one at a time (leaves).

use std::sync::Arc;

use innoxide_sql::ast::{self, Expr, JoinKind, ObjectName, Select, SelectItem, TableRef};
use innoxide_sql::error::*;

use super::Session;
use crate::catalog::SqlTable;

/// How deep views over views are merged into one another (G9).
const MAX_NESTED_MERGES: u8 = 16;

/// A FROM item of the outer query, as the merge sees it.
enum Leaf {
    /// Merged: what replaces it.
    Merged(Box<Merged>),
    /// Kept as it is: the name it goes by and its column names.
    Kept(String, Vec<String>),
}

/// A view's WITH CHECK OPTION as an INSERT or UPDATE of its base table tests it (G7): the
/// view's WHERE over the base table named `alias`.
pub(crate) struct ViewCheck {
    pub cond: Expr,
    pub alias: String,
    pub db: String,
    pub view: String,
}

impl ViewCheck {
    pub(crate) fn failed(&self) -> SqlError {
        SqlError::new(ER_VIEW_CHECK_FAILED, &[&self.db, &self.view])
    }
}

/// The view a change goes through, merged, and its CHECK OPTION.
type Target = (Box<Merged>, Option<ViewCheck>);

struct Merged {
    /// The name the outer query uses.
    alias: String,
    base: ObjectName,
    hints: Vec<ast::IndexHint>,
    /// The merged table's columns: name and expression over `\0alias`.
    cols: Vec<(String, Expr)>,
    /// The inner WHERE, over `\0alias`.
    cond: Option<Expr>,
    /// `cond` goes into the leaf's ON (G3).
    on: bool,
}

/// The FROM items of `from` in order with the join kind each is joined by (select.rs
/// `flatten`), and whether any join has USING or NATURAL.
fn leaves<'a>(from: &'a [TableRef], out: &mut Vec<(&'a TableRef, JoinKind)>) -> bool {
    fn walk<'a>(tr: &'a TableRef, kind: JoinKind, out: &mut Vec<(&'a TableRef, JoinKind)>) -> bool {
        match tr {
            TableRef::Join {
                left,
                right,
                kind: k,
                using,
                natural,
                ..
            } => {
                let a = walk(left, kind, out);
                let b = walk(right, *k, out);
                a || b || !using.is_empty() || *natural
            }
            other => {
                out.push((other, kind));
                false
            }
        }
    }
    let mut joined = false;
    for (i, tr) in from.iter().enumerate() {
        let kind = if i == 0 {
            JoinKind::Inner
        } else {
            JoinKind::Cross
        };
        joined |= walk(tr, kind, out);
    }
    joined
}

/// Whether `q` has the shape G1 asks: one base table or view in FROM, no UNION, DISTINCT,
/// GROUP BY, HAVING, ORDER BY, LIMIT, locking clause, aggregate, window function or subquery
/// (a view of that shape is updatable: information_schema.VIEWS.IS_UPDATABLE).
pub(crate) fn single_table(q: &Select) -> bool {
    q.unions.is_empty()
        && !q.distinct
        && q.group_by.is_empty()
        && q.having.is_none()
        && q.order_by.is_empty()
        && q.limit.is_none()
        && q.offset.is_none()
        && q.lock.is_none()
        && q.lock_of.is_empty()
        && matches!(q.from[..], [TableRef::Table { .. }])
        && !q.selection.as_ref().is_some_and(complex)
        && !q
            .items
            .iter()
            .any(|i| matches!(i, SelectItem::Expr { expr, .. } if complex(expr)))
}

/// Whether `e` holds a subquery, an aggregate or a window function.
fn complex(e: &Expr) -> bool {
    let mut found = false;
    let mut e = e.clone();
    e.visit_mut(&mut |x| {
        match x {
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. }
            | Expr::Quantified { .. }
            | Expr::Window { .. }
            | Expr::GroupConcat { .. } => found = true,
            Expr::Function { name, .. } if ast::is_aggregate(name) => found = true,
            _ => {}
        }
        !found
    });
    found
}

/// Whether the WHERE or an ON condition of `q` (with other FROM items) reads a column of `m`
/// that is not a plain column of its base table (G8).
fn joins_on_computed(q: &Select, m: &Merged) -> bool {
    fn ons<'a>(tr: &'a TableRef, out: &mut Vec<&'a Expr>) {
        if let TableRef::Join {
            left, right, on, ..
        } = tr
        {
            ons(left, out);
            ons(right, out);
            out.extend(on.iter());
        }
    }
    let mut conds: Vec<&Expr> = q.selection.iter().collect();
    for tr in &q.from {
        ons(tr, &mut conds);
    }
    let computed = |name: &str| {
        m.cols
            .iter()
            .any(|c| c.0.eq_ignore_ascii_case(name) && !matches!(c.1, Expr::Column { .. }))
    };
    conds.into_iter().any(|e| {
        let mut found = false;
        e.clone().visit_mut(&mut |x| {
            if let Expr::Column { table, name } = x {
                found |= table
                    .as_deref()
                    .is_none_or(|t| t.eq_ignore_ascii_case(&m.alias))
                    && computed(name);
            }
            !found
        });
        found
    })
}

/// Whether `e` holds a subquery.
fn has_subquery(e: &Expr) -> bool {
    let mut found = false;
    let mut e = e.clone();
    e.visit_mut(&mut |x| {
        if matches!(
            x,
            Expr::Subquery(_)
                | Expr::Exists { .. }
                | Expr::InSubquery { .. }
                | Expr::Quantified { .. }
        ) {
            found = true;
        }
        !found
    });
    found
}

/// `e` with its columns (of `t`, called `inner` in its SELECT) qualified by `hidden`; None if
/// it reads anything else (an outer query's column: G1).
fn qualify(e: &Expr, inner: &str, t: &SqlTable, hidden: &str) -> Option<Expr> {
    let mut e = e.clone();
    let mut ok = true;
    e.visit_mut(&mut |x| {
        if let Expr::Column { table, name } = x {
            let mine = table
                .as_deref()
                .is_none_or(|q| q.eq_ignore_ascii_case(inner));
            match t.column(name).filter(|_| mine) {
                Some(i) => {
                    *x = Expr::Column {
                        table: Some(hidden.to_string()),
                        name: t.columns[i].name.clone(),
                    }
                }
                None => ok = false,
            }
            return false;
        }
        ok
    });
    ok.then_some(e)
}

fn and(a: Option<Expr>, b: Expr) -> Expr {
    match a {
        Some(a) => Expr::Binary {
            op: ast::BinaryOp::And,
            left: Box::new(a),
            right: Box::new(b),
        },
        None => b,
    }
}

/// Replaces the outer query's references to merged columns (G4).
struct Subst<'a> {
    leaves: &'a [Leaf],
    /// The outer SELECT's aliases (which ORDER BY, GROUP BY and HAVING names mean first).
    aliases: Vec<String>,
}

impl Subst<'_> {
    fn expr(&self, e: &mut Expr, clause: &str) -> Result<(), SqlError> {
        let mut err = None;
        e.visit_mut(&mut |x| {
            let Expr::Column { table, name } = x else {
                return err.is_none();
            };
            match self.find(table.as_deref(), name, clause) {
                Ok(Some(with)) => *x = with,
                Ok(None) => {}
                Err(e) => err = Some(e),
            }
            false
        });
        err.map_or(Ok(()), Err)
    }

    /// The expression a column reference stands for, if it is a merged column.
    fn find(
        &self,
        table: Option<&str>,
        name: &str,
        clause: &str,
    ) -> Result<Option<Expr>, SqlError> {
        let col = |m: &Merged| {
            m.cols
                .iter()
                .find(|c| c.0.eq_ignore_ascii_case(name))
                .map(|c| c.1.clone())
        };
        if let Some(q) = table {
            return Ok(self.leaves.iter().find_map(|l| match l {
                Leaf::Merged(m) if m.alias.eq_ignore_ascii_case(q) => col(m),
                _ => None,
            }));
        }
        if clause != "field list"
            && clause != "where clause"
            && clause != "on clause"
            && self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        {
            return Ok(None);
        }
        let mut hit = None;
        let mut count = 0;
        for l in self.leaves {
            match l {
                Leaf::Merged(m) => {
                    if let Some(e) = col(m) {
                        hit = Some(e);
                        count += 1;
                    }
                }
                Leaf::Kept(_, cols) => {
                    count += usize::from(cols.iter().any(|c| c.eq_ignore_ascii_case(name)));
                }
            }
        }
        if hit.is_some() && count > 1 {
            return Err(SqlError::new(ER_NON_UNIQ_ERROR, &[&name, &clause]));
        }
        Ok(hit)
    }
}

impl Session {
    /// `q` with its mergeable views and derived tables merged (module doc) and whether a view
    /// was among them; None when it has none.
    pub(crate) fn merge_derived(&mut self, q: &Select) -> Result<Option<(Select, bool)>, SqlError> {
        fn derived(tr: &TableRef) -> bool {
            match tr {
                TableRef::Derived { .. } => true,
                TableRef::Join { left, right, .. } => derived(left) || derived(right),
                _ => false,
            }
        }
        let cat = self.server.catalog.clone();
        // The common case: nothing to look at (no allocation).
        if !cat.has_views() && !q.from.iter().any(derived) {
            return Ok(None);
        }
        let mut list = Vec::new();
        if leaves(&q.from, &mut list) {
            return Ok(None);
        }
        let candidate = |tr: &TableRef| match tr {
            TableRef::Derived { .. } => true,
            TableRef::Table { .. } => cat.has_views(),
            _ => false,
        };
        if !list.iter().any(|(tr, _)| candidate(tr)) {
            return Ok(None);
        }
        let outer_exprs = q
            .items
            .iter()
            .filter_map(|i| match i {
                SelectItem::Expr { expr, .. } => Some(expr),
                _ => None,
            })
            .chain(q.selection.iter())
            .chain(q.having.iter())
            .chain(q.group_by.iter())
            .chain(q.order_by.iter().map(|o| &o.expr));
        if outer_exprs.into_iter().any(has_subquery) {
            return Ok(None);
        }
        let mut out: Vec<Leaf> = Vec::with_capacity(list.len());
        let mut merged_any = false;
        let mut view = false;
        for (i, (tr, kind)) in list.iter().enumerate() {
            // G3: what may null-extend this item.
            let later_right = list[i + 1..].iter().any(|l| l.1 == JoinKind::Right);
            let place = match kind {
                _ if later_right => None,
                JoinKind::Left => Some(true),
                _ => Some(false),
            };
            let leaf = match self.merge_leaf(tr, place)? {
                Some(l) => l,
                None => return Ok(None),
            };
            merged_any |= matches!(leaf, Leaf::Merged(_));
            view |= matches!(leaf, Leaf::Merged(_)) && matches!(tr, TableRef::Table { .. });
            out.push(leaf);
        }
        // G8: a computed column compared in a join stays a derived table's.
        if out.len() > 1 {
            for leaf in &mut out {
                if let Leaf::Merged(m) = leaf {
                    if joins_on_computed(q, m) {
                        let names = m.cols.iter().map(|c| c.0.clone()).collect();
                        *leaf = Leaf::Kept(m.alias.clone(), names);
                    }
                }
            }
            merged_any = out.iter().any(|l| matches!(l, Leaf::Merged(_)));
        }
        if !merged_any {
            return Ok(None);
        }
        Ok(Some((rewrite(q, &out)?, view)))
    }

    /// What FROM item `tr` becomes: merged, kept, or None when its columns cannot be known
    /// without reading it (then nothing merges). `place`: where an inner WHERE would go
    /// (Some(true): the ON), None if it cannot.
    fn merge_leaf(&mut self, tr: &TableRef, place: Option<bool>) -> Result<Option<Leaf>, SqlError> {
        let cat = self.server.catalog.clone();
        let (alias, inner, names) = match tr {
            TableRef::Derived { subquery, alias } => (alias.clone(), &**subquery, None),
            TableRef::Table { name, alias, .. } => {
                let shown = alias.clone().unwrap_or_else(|| name.name.clone());
                if name.db.is_none() && self.cte_work.iter().any(|b| b.0 == name.name) {
                    return Ok(None);
                }
                let db = match self.db_of(name) {
                    Ok(d) => d,
                    Err(_) => return Ok(None),
                };
                if db.eq_ignore_ascii_case("information_schema")
                    || db.eq_ignore_ascii_case("performance_schema")
                {
                    return Ok(None);
                }
                if let Ok(t) = self.open_table(&db, &name.name) {
                    let cols = t.visible().map(|(_, c)| c.name.clone()).collect();
                    return Ok(Some(Leaf::Kept(shown, cols)));
                }
                let Some(v) = cat.view(&db, &name.name) else {
                    return Ok(None);
                };
                let names: Vec<String> = v.def.columns.iter().map(|c| c.name.clone()).collect();
                let keep = Leaf::Kept(shown.clone(), names.clone());
                let Some(q) = &v.query else {
                    return Ok(Some(keep));
                };
                if place.is_none() || v.def.algorithm == "TEMPTABLE" {
                    return Ok(Some(keep));
                }
                self.check_table(&db, &name.name, crate::privs::SELECT)?;
                let saved = self.db.replace(db);
                let m = self.mergeable(q, &shown, Some(&names), place, true);
                self.db = saved;
                return Ok(Some(m.map_or(keep, |m| Leaf::Merged(Box::new(m)))));
            }
            _ => return Ok(None),
        };
        if place.is_none() {
            return Ok(None);
        }
        Ok(self
            .mergeable(inner, &alias, names, place, false)
            .map(|m| Leaf::Merged(Box::new(m))))
    }

    /// Whether the one FROM item of `q` is a view (G9).
    fn over_view(&self, q: &Select) -> bool {
        let Some(TableRef::Table { name, .. }) = q.from.first() else {
            return false;
        };
        let cat = &self.server.catalog;
        if !cat.has_views() || name.db.is_none() && self.cte_work.iter().any(|b| b.0 == name.name) {
            return false;
        }
        let Ok(db) = self.db_of(name) else {
            return false;
        };
        self.open_table(&db, &name.name).is_err() && cat.view(&db, &name.name).is_some()
    }

    /// The view `table` names, merged under `alias` for a change of its base table (G6); None
    /// if `table` is not a view.
    fn target_view(
        &mut self,
        table: &ObjectName,
        alias: Option<&str>,
        op: &str,
    ) -> Result<Option<Target>, SqlError> {
        let cat = self.server.catalog.clone();
        if !cat.has_views() {
            return Ok(None);
        }
        let db = self.db_of(table)?;
        if self.open_table(&db, &table.name).is_ok() {
            return Ok(None);
        }
        let Some(v) = cat.view(&db, &table.name) else {
            return Ok(None);
        };
        let code = if op == "INSERT" {
            ER_NON_INSERTABLE_TABLE
        } else {
            ER_NON_UPDATABLE_TABLE
        };
        let refused = || SqlError::new(code, &[&table.name, &op]);
        let Some(q) = v.query.as_ref().filter(|_| v.def.algorithm != "TEMPTABLE") else {
            return Err(refused());
        };
        let names: Vec<String> = v.def.columns.iter().map(|c| c.name.clone()).collect();
        let shown = alias.unwrap_or(&table.name).to_string();
        // Seen as it is read: in its database, with its rights (view.rs V1); one that cannot
        // be read is error 1356 as when it is read (V2).
        let saved = self.db.replace(db.clone());
        let m = self.with_view_rights(&v, |s| {
            s.describe(q)?;
            Ok(s.mergeable(q, &shown, Some(&names), Some(false), true))
        });
        self.db = saved;
        let m = m.map_err(|e| super::ddl::invalid_view(e, &db, &table.name))?;
        let m = m.ok_or_else(refused)?;
        let check = match (&v.def.check_option, &m.cond) {
            (Some(_), Some(cond)) => Some(ViewCheck {
                cond: cond.clone(),
                alias: format!("\0{}", m.alias),
                db,
                view: table.name.clone(),
            }),
            _ => None,
        };
        Ok(Some((Box::new(m), check)))
    }

    /// UPDATE of a view as UPDATE of its base table (G6); None if `u` is not of a view.
    pub(crate) fn update_through_view(
        &mut self,
        u: &ast::Update,
    ) -> Result<Option<(ast::Update, Option<ViewCheck>)>, SqlError> {
        let Some((m, check)) = self.target_view(&u.table, u.alias.as_deref(), "UPDATE")? else {
            return Ok(None);
        };
        let mut out = u.clone();
        out.assignments.clear();
        for (col, e) in &u.assignments {
            match m.cols.iter().find(|c| c.0.eq_ignore_ascii_case(col)) {
                Some((_, Expr::Column { name, .. })) => {
                    out.assignments.push((name.clone(), e.clone()))
                }
                Some(_) => return Err(SqlError::new(ER_NONUPDATEABLE_COLUMN, &[col])),
                None => return Err(SqlError::new(ER_BAD_FIELD_ERROR, &[col, &"field list"])),
            }
        }
        let (base, hidden, cond) = (m.base.clone(), format!("\0{}", m.alias), m.cond.clone());
        let leaves = [Leaf::Merged(m)];
        let subst = Subst {
            leaves: &leaves,
            aliases: Vec::new(),
        };
        for (_, e) in &mut out.assignments {
            subst.expr(e, "field list")?;
        }
        changed_rows(&subst, &mut out.selection, &mut out.order_by, cond)?;
        out.table = base;
        out.alias = Some(hidden);
        Ok(Some((out, check)))
    }

    /// DELETE from a view as DELETE from its base table (G6); None if `d` is not of a view.
    pub(crate) fn delete_through_view(
        &mut self,
        d: &ast::Delete,
    ) -> Result<Option<ast::Delete>, SqlError> {
        let Some((m, _)) = self.target_view(&d.table, d.alias.as_deref(), "DELETE")? else {
            return Ok(None);
        };
        let mut out = d.clone();
        let (base, hidden, cond) = (m.base.clone(), format!("\0{}", m.alias), m.cond.clone());
        let leaves = [Leaf::Merged(m)];
        let subst = Subst {
            leaves: &leaves,
            aliases: Vec::new(),
        };
        changed_rows(&subst, &mut out.selection, &mut out.order_by, cond)?;
        out.table = base;
        out.alias = Some(hidden);
        Ok(Some(out))
    }

    /// INSERT or REPLACE into a view as into its base table (G6); None if `ins` is not into a
    /// view.
    pub(crate) fn insert_through_view(
        &mut self,
        ins: &ast::Insert,
    ) -> Result<Option<(ast::Insert, Option<ViewCheck>)>, SqlError> {
        let Some((m, check)) = self.target_view(&ins.table, None, "INSERT")? else {
            return Ok(None);
        };
        let base_of = |col: &str| -> Result<String, SqlError> {
            match m.cols.iter().find(|c| c.0.eq_ignore_ascii_case(col)) {
                Some((_, Expr::Column { name, .. })) => Ok(name.clone()),
                Some(_) => Err(SqlError::new(
                    ER_NON_INSERTABLE_TABLE,
                    &[&ins.table.name, &"INSERT"],
                )),
                None => Err(SqlError::new(ER_BAD_FIELD_ERROR, &[&col, &"field list"])),
            }
        };
        let mut out = ins.clone();
        out.columns = if ins.columns.is_empty() {
            m.cols
                .iter()
                .map(|c| base_of(&c.0))
                .collect::<Result<_, _>>()?
        } else {
            ins.columns
                .iter()
                .map(|c| base_of(c))
                .collect::<Result<_, _>>()?
        };
        out.on_duplicate.clear();
        for (col, e) in &ins.on_duplicate {
            let mut e = e.clone();
            let mut err = None;
            e.visit_mut(&mut |x| {
                match x {
                    // The base table's columns are the statement's own there (no qualifier).
                    Expr::Column { table, name } => match base_of(name) {
                        Ok(b)
                            if table
                                .as_deref()
                                .is_none_or(|q| q.eq_ignore_ascii_case(&ins.table.name)) =>
                        {
                            *x = Expr::Column {
                                table: None,
                                name: b,
                            }
                        }
                        Ok(_) => {}
                        Err(e) => err = Some(e),
                    },
                    Expr::Values(c) => match base_of(c) {
                        Ok(b) => *c = b,
                        Err(e) => err = Some(e),
                    },
                    _ => {}
                }
                err.is_none()
            });
            if let Some(e) = err {
                return Err(e);
            }
            out.on_duplicate.push((base_of(col)?, e));
        }
        out.table = m.base.clone();
        Ok(Some((out, check)))
    }

    /// `q` (the inner SELECT, compiled in the session's current database) merged as `alias`
    /// (G1), or None. `names`: the column names a view gives its columns; `view`: it is a
    /// view's, so it merges only if the session may read the base table (else the view is
    /// read with its definer's rights, or fails with 1356 for an invoker who may not).
    fn mergeable(
        &mut self,
        q: &Select,
        alias: &str,
        names: Option<&[String]>,
        place: Option<bool>,
        view: bool,
    ) -> Option<Merged> {
        if !single_table(q) {
            return None;
        }
        // G9: a view (or derived table) over a view: the inner one merged into it first, so
        // the result reads the base table.
        let composed;
        let q = if self.over_view(q) {
            if self.merge_nesting >= MAX_NESTED_MERGES {
                return None;
            }
            self.merge_nesting += 1;
            let r = self.merge_derived(q);
            self.merge_nesting -= 1;
            composed = r.ok()??.0;
            &composed
        } else {
            q
        };
        let TableRef::Table {
            name,
            alias: inner_alias,
            hints,
        } = &q.from[0]
        else {
            return None;
        };
        if name.db.is_none() && self.cte_work.iter().any(|b| b.0 == name.name) {
            return None;
        }
        let db = self.db_of(name).ok()?;
        if db.eq_ignore_ascii_case("information_schema")
            || db.eq_ignore_ascii_case("performance_schema")
        {
            return None;
        }
        let t: Arc<SqlTable> = self.open_table(&db, &name.name).ok()?;
        if view
            && self
                .check_table(&db, &name.name, crate::privs::SELECT)
                .is_err()
        {
            return None;
        }
        let inner = inner_alias.as_deref().unwrap_or(&name.name);
        let hidden = format!("\0{alias}");
        let mut cols: Vec<(String, Expr)> = Vec::new();
        for it in &q.items {
            match it {
                SelectItem::Wildcard => {}
                SelectItem::QualifiedWildcard(n) if n.eq_ignore_ascii_case(inner) => {}
                SelectItem::QualifiedWildcard(_) => return None,
                SelectItem::Expr { expr, alias, text } => {
                    if complex(expr) {
                        return None;
                    }
                    let e = qualify(expr, inner, &t, &hidden)?;
                    let n = match (alias, expr) {
                        (Some(a), _) => a.clone(),
                        (None, Expr::Column { name, .. }) => name.clone(),
                        (None, _) => text.clone(),
                    };
                    cols.push((n, e));
                    continue;
                }
            }
            for (_, c) in t.visible() {
                let e = Expr::Column {
                    table: Some(hidden.clone()),
                    name: c.name.clone(),
                };
                cols.push((c.name.clone(), e));
            }
        }
        if let Some(names) = names {
            if names.len() != cols.len() {
                return None;
            }
            for (c, n) in cols.iter_mut().zip(names) {
                c.0.clone_from(n);
            }
        }
        for (i, c) in cols.iter().enumerate() {
            if cols[..i].iter().any(|p| p.0.eq_ignore_ascii_case(&c.0)) {
                return None;
            }
        }
        let on = place?;
        if on && !cols.iter().all(|c| matches!(c.1, Expr::Column { .. })) {
            return None;
        }
        let cond = match &q.selection {
            Some(w) if complex(w) => return None,
            Some(w) => Some(qualify(w, inner, &t, &hidden)?),
            None => None,
        };
        Some(Merged {
            alias: alias.to_string(),
            base: ObjectName {
                db: Some(db),
                name: name.name.clone(),
            },
            hints: hints.clone(),
            cols,
            cond,
            on,
        })
    }
}

/// An UPDATE's or DELETE's WHERE and ORDER BY over a view's base table: the view's columns
/// replaced, its WHERE added (G6).
fn changed_rows(
    subst: &Subst<'_>,
    selection: &mut Option<Expr>,
    order_by: &mut [ast::OrderItem],
    cond: Option<Expr>,
) -> Result<(), SqlError> {
    if let Some(w) = selection.as_mut() {
        subst.expr(w, "where clause")?;
    }
    if let Some(c) = cond {
        *selection = Some(and(selection.take(), c));
    }
    for o in order_by {
        subst.expr(&mut o.expr, "order clause")?;
    }
    Ok(())
}

/// The outer SELECT over the merged items (G2-G4).
fn rewrite(q: &Select, leaves: &[Leaf]) -> Result<Select, SqlError> {
    let aliases = q
        .items
        .iter()
        .filter_map(|i| match i {
            SelectItem::Expr { alias: Some(a), .. } => Some(a.clone()),
            _ => None,
        })
        .collect();
    let subst = Subst { leaves, aliases };
    let mut out = q.clone();
    let merged_items = |m: &Merged, items: &mut Vec<SelectItem>| {
        for (n, e) in &m.cols {
            items.push(SelectItem::Expr {
                expr: e.clone(),
                alias: Some(n.clone()),
                text: n.clone(),
            });
        }
    };
    let mut items = Vec::with_capacity(q.items.len());
    for it in &q.items {
        match it {
            SelectItem::Wildcard => {
                for l in leaves {
                    match l {
                        Leaf::Merged(m) => merged_items(m, &mut items),
                        Leaf::Kept(name, _) => {
                            items.push(SelectItem::QualifiedWildcard(name.clone()))
                        }
                    }
                }
            }
            SelectItem::QualifiedWildcard(n) => {
                match leaves.iter().find_map(|l| match l {
                    Leaf::Merged(m) if m.alias.eq_ignore_ascii_case(n) => Some(m),
                    _ => None,
                }) {
                    Some(m) => merged_items(m, &mut items),
                    None => items.push(it.clone()),
                }
            }
            SelectItem::Expr { expr, alias, text } => {
                let mut e = expr.clone();
                subst.expr(&mut e, "field list")?;
                // A column keeps its name when it becomes an expression.
                let alias = match (alias, expr) {
                    (None, Expr::Column { name, .. }) if e != *expr => Some(name.clone()),
                    _ => alias.clone(),
                };
                items.push(SelectItem::Expr {
                    expr: e,
                    alias,
                    text: text.clone(),
                });
            }
        }
    }
    out.items = items;
    if let Some(w) = &mut out.selection {
        subst.expr(w, "where clause")?;
    }
    for l in leaves {
        if let Leaf::Merged(m) = l {
            if let (Some(c), false) = (&m.cond, m.on) {
                out.selection = Some(and(out.selection.take(), c.clone()));
            }
        }
    }
    for g in &mut out.group_by {
        subst.expr(g, "group statement")?;
    }
    if let Some(h) = &mut out.having {
        subst.expr(h, "having clause")?;
    }
    for o in &mut out.order_by {
        subst.expr(&mut o.expr, "order clause")?;
    }
    let mut next = 0;
    for tr in &mut out.from {
        replace_leaves(tr, leaves, &subst, &mut next)?;
    }
    Ok(out)
}

/// Puts each merged item's base table in its place in the FROM tree (leaves in `leaves`'
/// order) and rewrites the ON conditions, adding a LEFT JOIN's inner WHERE to its ON.
fn replace_leaves(
    tr: &mut TableRef,
    leaves: &[Leaf],
    subst: &Subst<'_>,
    next: &mut usize,
) -> Result<(), SqlError> {
    match tr {
        TableRef::Join {
            left, right, on, ..
        } => {
            replace_leaves(left, leaves, subst, next)?;
            let right_leaf = *next;
            replace_leaves(right, leaves, subst, next)?;
            if let Some(o) = on {
                subst.expr(o, "on clause")?;
            }
            // The first item of the right side is the one this join's kind and ON apply to
            // (select.rs `flatten`).
            if let Some(Leaf::Merged(m)) = leaves.get(right_leaf) {
                if let (Some(c), true) = (&m.cond, m.on) {
                    *on = Some(and(on.take(), c.clone()));
                }
            }
        }
        _ => {
            if let Some(Leaf::Merged(m)) = leaves.get(*next) {
                *tr = TableRef::Table {
                    name: m.base.clone(),
                    alias: Some(format!("\0{}", m.alias)),
                    hints: m.hints.clone(),
                };
            }
            *next += 1;
        }
    }
    Ok(())
}
