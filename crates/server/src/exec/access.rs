//! Privilege checks: what the session's account may do (privs.rs holds the bits, the
//! catalog the grants), GRANT and REVOKE, and SHOW GRANTS.
//!
//! Data statements are checked where they open a table (select.rs, dml.rs), so subqueries,
//! joins and INSERT ... SELECT sources are all covered; other statements in `authorize`
//! before they run. MySQL's errors: 1142 for a table, 1044 for a database, 1227 for a global
//! privilege, 1045 for a global GRANT the account may not give.
//!
//! INVARIANTS
//! - A1: `Session::privs` is the account's grants as of `Catalog::grants_version`; it is
//!   re-read before any check when the version moved, so a REVOKE takes effect at the next
//!   statement of every session of that account (MySQL: at the next statement too).
//! - A2: information_schema and performance_schema may always be read.
//! - A3: a SELECT, INSERT or UPDATE may lack a table privilege the account holds on some
//!   columns of the table (`check_table_or_columns`); each column the statement reads
//!   (SELECT), writes (INSERT, UPDATE) is then checked (`check_columns`, 1143), once the
//!   statement's columns are known and again at each execution of a kept plan.
//!
//! LOCKING: none of its own (catalog calls only).

use std::sync::Arc;

use innoxide_sql::ast::{self, GrantOn, Show, Statement};
use innoxide_sql::error::*;

use super::{Output, Session};
use crate::privs::{self, AccountPrivs, Level};

/// The schemas every account may read (A2).
pub fn is_system_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case("information_schema") || db.eq_ignore_ascii_case("performance_schema")
}

impl Session {
    /// The account's grants (A1).
    pub(crate) fn privs(&mut self) -> &AccountPrivs {
        let v = self.server.catalog.grants_version();
        if self.privs.0 != v {
            let p = self.server.catalog.grants().effective(
                &self.user,
                &self.account_host,
                &self.active_roles,
            );
            self.privs = (v, p);
        }
        &self.privs.1
    }

    /// Whether the account holds all of `need` globally (the common case: one comparison).
    pub(crate) fn holds_globally(&mut self, need: u64) -> bool {
        self.privs().global & need == need
    }

    /// Error 1142 unless the account holds all of `need` on `db.table`; then the LOCK TABLES
    /// rules for reaching it (`use_table`: it writes unless `need` is SELECT alone).
    pub(crate) fn check_table(&mut self, db: &str, table: &str, need: u64) -> Result<(), SqlError> {
        self.check_table_privs(db, table, need)?;
        self.use_table(db, table, need & !privs::SELECT != 0)
    }

    pub(crate) fn check_table_privs(
        &mut self,
        db: &str,
        table: &str,
        need: u64,
    ) -> Result<(), SqlError> {
        if self.holds_globally(need) || (need & !privs::SELECT == 0 && is_system_schema(db)) {
            return Ok(());
        }
        let has = self.privs().on_table(db, table);
        if has & need == need {
            return Ok(());
        }
        Err(SqlError::new(
            ER_TABLEACCESS_DENIED_ERROR,
            &[
                &privs::first_name(need & !has),
                &self.user,
                &self.host,
                &table,
            ],
        ))
    }

    /// A3: `check_table`, except that privileges of `need` the account holds only on some
    /// columns of the table pass; those are returned, for `check_columns`.
    pub(crate) fn check_table_or_columns(
        &mut self,
        db: &str,
        table: &str,
        need: u64,
    ) -> Result<u64, SqlError> {
        if self.holds_globally(need) || (need & !privs::SELECT == 0 && is_system_schema(db)) {
            self.use_table(db, table, need & !privs::SELECT != 0)?;
            return Ok(0);
        }
        let p = self.privs();
        let missing = need & !p.on_table(db, table);
        let lacking = missing & !p.on_some_column(db, table);
        if lacking != 0 {
            return Err(SqlError::new(
                ER_TABLEACCESS_DENIED_ERROR,
                &[&privs::first_name(lacking), &self.user, &self.host, &table],
            ));
        }
        self.use_table(db, table, need & !privs::SELECT != 0)?;
        Ok(missing)
    }

    /// A3: error 1143 unless the account holds `bits` on each of `columns` of `db.table`.
    pub(crate) fn check_columns<'c>(
        &mut self,
        db: &str,
        table: &str,
        bits: u64,
        columns: impl IntoIterator<Item = &'c str>,
    ) -> Result<(), SqlError> {
        if bits == 0 {
            return Ok(());
        }
        for c in columns {
            let has = self.privs().on_column(db, table, c);
            if has & bits != bits {
                return Err(SqlError::new(
                    ER_COLUMNACCESS_DENIED_ERROR,
                    &[
                        &privs::first_name(bits & !has),
                        &self.user,
                        &self.host,
                        &c,
                        &table,
                    ],
                ));
            }
        }
        Ok(())
    }

    /// Error 1142 (`verb` command) unless the account holds some privilege on `db.table`
    /// or one of its columns (SHOW COLUMNS, SHOW CREATE TABLE, SHOW INDEX).
    pub(crate) fn check_table_any(
        &mut self,
        db: &str,
        table: &str,
        verb: &str,
    ) -> Result<(), SqlError> {
        let p = self.privs();
        if is_system_schema(db)
            || p.on_table(db, table) & privs::TABLE_ALL != 0
            || p.on_some_column(db, table) != 0
        {
            return Ok(());
        }
        Err(SqlError::new(
            ER_TABLEACCESS_DENIED_ERROR,
            &[&verb, &self.user, &self.host, &table],
        ))
    }

    /// Error 1044 unless the account holds all of `need` on database `db`.
    fn check_db(&mut self, db: &str, need: u64) -> Result<(), SqlError> {
        if self.privs().on_db(db) & need == need {
            return Ok(());
        }
        Err(self.db_denied(db))
    }

    fn db_denied(&self, db: &str) -> SqlError {
        SqlError::new(ER_DBACCESS_DENIED_ERROR, &[&self.user, &self.host, &db])
    }

    /// Error 1227 naming `what` unless the account holds `need` globally.
    pub(crate) fn check_global(&mut self, need: u64, what: &str) -> Result<(), SqlError> {
        if self.holds_globally(need) {
            return Ok(());
        }
        Err(SqlError::new(ER_SPECIFIC_ACCESS_DENIED_ERROR, &[&what]))
    }

    /// Whether the account may see database `db` (SHOW DATABASES, USE).
    pub(crate) fn sees_db(&mut self, db: &str) -> bool {
        is_system_schema(db) || self.privs().sees_db(db)
    }

    /// Whether the account may see table `db.table` (SHOW TABLES, information_schema).
    pub(crate) fn sees_table(&mut self, db: &str, table: &str) -> bool {
        let p = self.privs();
        p.on_table(db, table) & privs::TABLE_ALL != 0 || p.on_some_column(db, table) != 0
    }

    /// Whether the account holds some privilege on column `col` of `db.table` (SHOW COLUMNS
    /// and information_schema.COLUMNS list only those).
    pub(crate) fn sees_column(&mut self, db: &str, table: &str, col: &str) -> bool {
        is_system_schema(db) || self.privs().on_column(db, table, col) & privs::TABLE_ALL != 0
    }

    /// Error 1044 unless the session may USE `db` (also COM_INIT_DB and the handshake's
    /// database).
    pub(crate) fn check_use(&mut self, db: &str) -> Result<(), SqlError> {
        if self.sees_db(db) {
            Ok(())
        } else {
            Err(self.db_denied(db))
        }
    }

    /// The checks of statements that do not open tables through the executor's table
    /// access paths (DDL, administration, SHOW).
    pub(crate) fn authorize(&mut self, stmt: &Statement) -> Result<(), SqlError> {
        if self.holds_globally(privs::GLOBAL_ALL) {
            return Ok(());
        }
        let table = |s: &Session, n: &ast::ObjectName| -> Option<(String, String)> {
            n.db.clone()
                .or_else(|| s.db.clone())
                .map(|d| (d, n.name.clone()))
        };
        let mut need_tables: Vec<((String, String), u64)> = Vec::new();
        match stmt {
            Statement::CreateDatabase { name, .. } => return self.check_db(name, privs::CREATE),
            Statement::DropDatabase { name, .. } => return self.check_db(name, privs::DROP),
            Statement::Use(db) => return self.check_use(db),
            Statement::CreateTable(ct) => {
                let need = if ct.as_select.is_some() {
                    privs::CREATE | privs::INSERT
                } else {
                    privs::CREATE
                };
                need_tables.extend(table(self, &ct.name).map(|t| (t, need)));
                if let Some(like) = &ct.like {
                    need_tables.extend(table(self, like).map(|t| (t, privs::SELECT)));
                }
            }
            Statement::CreateView(cv) => {
                let need = if cv.or_replace || cv.alter {
                    privs::CREATE_VIEW | privs::DROP
                } else {
                    privs::CREATE_VIEW
                };
                need_tables.extend(table(self, &cv.name).map(|t| (t, need)));
            }
            Statement::DropView { names, .. } => {
                for n in names {
                    need_tables.extend(table(self, n).map(|t| (t, privs::DROP)));
                }
            }
            Statement::DropTable { names, .. } => {
                for n in names {
                    need_tables.extend(table(self, n).map(|t| (t, privs::DROP)));
                }
            }
            Statement::TruncateTable(n) => {
                need_tables.extend(table(self, n).map(|t| (t, privs::DROP)));
            }
            Statement::RenameTable(pairs) => {
                for (from, to) in pairs {
                    need_tables.extend(table(self, from).map(|t| (t, privs::ALTER | privs::DROP)));
                    need_tables.extend(table(self, to).map(|t| (t, privs::CREATE | privs::INSERT)));
                }
            }
            Statement::CreateIndex { table: n, .. } | Statement::DropIndex { table: n, .. } => {
                need_tables.extend(table(self, n).map(|t| (t, privs::INDEX)));
            }
            Statement::AlterTable { table: n, .. } => {
                need_tables.extend(table(self, n).map(|t| (t, privs::ALTER)));
            }
            Statement::TableMaintenance { op, tables } => {
                let need = match op {
                    ast::MaintenanceOp::Check => privs::SELECT,
                    _ => privs::SELECT | privs::INSERT,
                };
                for n in tables {
                    need_tables.extend(table(self, n).map(|t| (t, need)));
                }
            }
            Statement::SetTransaction {
                scope: ast::TrxScope::Global,
                ..
            } => return self.check_global(privs::SUPER, "SUPER or SYSTEM_VARIABLES_ADMIN"),
            Statement::Set(assigns) => {
                let global = assigns.iter().any(|a| {
                    matches!(
                        a.target,
                        ast::SetTarget::System {
                            scope: ast::VarScope::Global,
                            ..
                        }
                    )
                });
                if global {
                    return self.check_global(privs::SUPER, "SUPER or SYSTEM_VARIABLES_ADMIN");
                }
            }
            Statement::Flush(_) => return self.check_global(privs::RELOAD, "RELOAD"),
            Statement::Shutdown => return self.check_global(privs::SHUTDOWN, "SHUTDOWN"),
            // LOCK TABLES on the database and SELECT on each table (not the LOCK TABLES rules:
            // the statement replaces the session's locks).
            Statement::LockTables(list) => {
                for (n, _) in list {
                    if let Some((db, t)) = table(self, n) {
                        if !self.holds_globally(privs::LOCK_TABLES) {
                            self.check_db(&db, privs::LOCK_TABLES)?;
                        }
                        self.check_table_privs(&db, &t, privs::SELECT)?;
                    }
                }
                return Ok(());
            }
            Statement::Show(Show::EngineStatus { .. }) => {
                return self.check_global(privs::PROCESS, "PROCESS");
            }
            Statement::CreateUser { .. } | Statement::DropUser { .. } => {
                return self.check_global(privs::CREATE_USER, "CREATE USER");
            }
            Statement::AlterUser { users, .. } => {
                // An account may change its own password.
                let own = users
                    .iter()
                    .all(|(u, _)| u.user == self.user && u.host == self.account_host);
                if !own {
                    return self.check_global(privs::CREATE_USER, "CREATE USER");
                }
            }
            Statement::Show(Show::Grants { user: Some(u), .. })
                if !(u.user == self.user && u.host == self.account_host) =>
            {
                return self.check_db("mysql", privs::SELECT);
            }
            _ => {}
        }
        for ((db, t), need) in need_tables {
            self.check_table(&db, &t, need)?;
        }
        Ok(())
    }

    /// KILL of another account's thread needs SUPER (error 1095 otherwise).
    pub(crate) fn check_kill(&mut self, owner: &str, id: u64) -> Result<(), SqlError> {
        if owner == self.user || self.holds_globally(privs::SUPER) {
            Ok(())
        } else {
            Err(SqlError::new(ER_KILL_DENIED_ERROR, &[&id]))
        }
    }

    /// Whether the session sees every thread in SHOW PROCESSLIST (PROCESS), or only its
    /// account's.
    pub(crate) fn sees_all_threads(&mut self) -> bool {
        self.holds_globally(privs::PROCESS)
    }

    /// GRANT and REVOKE: the granter must hold the privileges and GRANT OPTION at the
    /// level (or globally); the accounts must exist (GRANT: 1410, REVOKE: 1141), and a
    /// REVOKE at a database or table level must find a grant there (1141, 1147).
    /// Column privileges (`SELECT (a, b)`) go on a table only (1144), are SELECT, INSERT,
    /// UPDATE or REFERENCES (1144), name its columns (1054), and a REVOKE must find each one
    /// (1147).
    pub(crate) fn grant(
        &mut self,
        privileges: &[String],
        columns: &[(String, Vec<String>)],
        on: &GrantOn,
        users: &[ast::UserName],
        add: bool,
    ) -> Result<Output, SqlError> {
        let (level, db, tbl) = match on {
            GrantOn::Global => (Level::Global, String::new(), String::new()),
            GrantOn::Database(d) => {
                let d = d
                    .clone()
                    .or_else(|| self.db.clone())
                    .ok_or_else(|| SqlError::new(ER_NO_DB_ERROR, &[]))?;
                (Level::Db, d, String::new())
            }
            GrantOn::Table(n) => {
                let d =
                    n.db.clone()
                        .or_else(|| self.db.clone())
                        .ok_or_else(|| SqlError::new(ER_NO_DB_ERROR, &[]))?;
                if self.server.catalog.table(&d, &n.name).is_err()
                    && self.server.catalog.view(&d, &n.name).is_none()
                {
                    return Err(SqlError::new(ER_NO_SUCH_TABLE, &[&d, &n.name]));
                }
                (Level::Table, d, n.name.clone())
            }
        };
        // Column privileges: (column as the table names it, privileges).
        let mut col_changes: Vec<(String, u64)> = Vec::new();
        if !columns.is_empty() {
            if level != Level::Table {
                return Err(SqlError::new(ER_ILLEGAL_GRANT_FOR_TABLE, &[]));
            }
            let t = self.server.catalog.table(&db, &tbl)?;
            for (p, cols) in columns {
                let b = privs::parse_list(std::slice::from_ref(p), level)?;
                if b == 0 || b & !privs::COLUMN_ALL != 0 {
                    return Err(SqlError::new(ER_ILLEGAL_GRANT_FOR_TABLE, &[]));
                }
                for c in cols {
                    let Some(i) = t.column(c) else {
                        return Err(SqlError::new(ER_BAD_FIELD_ERROR, &[c, &tbl]));
                    };
                    let name = &t.columns[i].name;
                    match col_changes.iter_mut().find(|x| &x.0 == name) {
                        Some(x) => x.1 |= b,
                        None => col_changes.push((name.clone(), b)),
                    }
                }
            }
        }
        let bits = privs::parse_list(privileges, level)?;
        // The granter holds each column privilege on the column (or the table).
        for (c, b) in &col_changes {
            if self.privs().on_column(&db, &tbl, c) & b != *b {
                return Err(SqlError::new(
                    ER_TABLEACCESS_DENIED_ERROR,
                    &[&"GRANT", &self.user, &self.host, &tbl],
                ));
            }
        }
        let need = bits | privs::GRANT_OPTION;
        let has = match level {
            Level::Global => self.privs().global,
            Level::Db => self.privs().on_db(&db),
            Level::Table => self.privs().on_table(&db, &tbl),
        };
        if has & need != need {
            return Err(match level {
                Level::Global => {
                    SqlError::new(ER_ACCESS_DENIED_ERROR, &[&self.user, &self.host, &"YES"])
                }
                Level::Db => self.db_denied(&db),
                Level::Table => SqlError::new(
                    ER_TABLEACCESS_DENIED_ERROR,
                    &[&"GRANT", &self.user, &self.host, &tbl],
                ),
            });
        }
        let cat = self.server.catalog.clone();
        if let Some(u) = self.missing_account(users)? {
            return Err(if add {
                SqlError::new(ER_CANT_CREATE_USER_WITH_GRANT, &[])
            } else {
                SqlError::new(ER_NONEXISTING_GRANT, &[&u.user, &u.host])
            });
        }
        if !add && !col_changes.is_empty() {
            // Every column grant revoked must be there (checked before anything changes).
            for u in users {
                let p = cat.privileges(&u.user, &u.host);
                let held = p.columns.get(&(db.clone(), tbl.clone()));
                for (c, b) in &col_changes {
                    if held.and_then(|m| m.get(c)).is_none_or(|h| h & b != *b) {
                        return Err(SqlError::new(
                            ER_NONEXISTING_TABLE_GRANT,
                            &[&u.user, &u.host, &tbl],
                        ));
                    }
                }
            }
        }
        for u in users {
            if !col_changes.is_empty() {
                cat.change_column_grants(&u.user, &u.host, &db, &tbl, &col_changes, add)?;
                if bits == 0 {
                    continue;
                }
            }
            let old = cat.change_grant(&u.user, &u.host, &db, &tbl, bits, add)?;
            if !add && old == 0 {
                match level {
                    Level::Global => {}
                    Level::Db => {
                        return Err(SqlError::new(ER_NONEXISTING_GRANT, &[&u.user, &u.host]));
                    }
                    Level::Table => {
                        return Err(SqlError::new(
                            ER_NONEXISTING_TABLE_GRANT,
                            &[&u.user, &u.host, &tbl],
                        ));
                    }
                }
            }
        }
        Ok(Output::ok(0))
    }

    /// The first of `users` that is not an account.
    fn missing_account<'a>(
        &self,
        users: &'a [ast::UserName],
    ) -> Result<Option<&'a ast::UserName>, SqlError> {
        let accounts = self.server.catalog.users()?;
        Ok(users.iter().find(|u| {
            !accounts
                .iter()
                .any(|x| x.user == u.user && x.host == u.host)
        }))
    }

    /// REVOKE ALL PRIVILEGES, GRANT OPTION FROM users: every grant of each account, at every
    /// level (needs CREATE USER, as in MySQL).
    pub(crate) fn revoke_all(&mut self, users: &[ast::UserName]) -> Result<Output, SqlError> {
        self.check_global(privs::CREATE_USER, "CREATE USER")?;
        let cat = self.server.catalog.clone();
        if let Some(u) = self.missing_account(users)? {
            return Err(SqlError::new(ER_NONEXISTING_GRANT, &[&u.user, &u.host]));
        }
        for u in users {
            let p = cat.privileges(&u.user, &u.host);
            cat.change_grant(&u.user, &u.host, "", "", u64::MAX, false)?;
            for db in p.dbs.keys() {
                cat.change_grant(&u.user, &u.host, db, "", u64::MAX, false)?;
            }
            for (db, t) in p.tables.keys() {
                cat.change_grant(&u.user, &u.host, db, t, u64::MAX, false)?;
            }
            for ((db, t), cols) in &p.columns {
                let all: Vec<(String, u64)> = cols.keys().map(|c| (c.clone(), u64::MAX)).collect();
                cat.change_column_grants(&u.user, &u.host, db, t, &all, false)?;
            }
        }
        Ok(Output::ok(0))
    }

    /// SHOW GRANTS [FOR user]: the account's grants (its own by default); 1141 for an
    /// account that does not exist.
    /// SHOW GRANTS [FOR user [USING roles]]: without FOR, what the session may do (its
    /// active roles' privileges merged in); with USING, the account's merged with those roles'
    /// (each must be granted to it: 3530).
    pub(crate) fn show_grants(
        &mut self,
        user: Option<&ast::UserName>,
        using: &[ast::UserName],
    ) -> Result<(String, Vec<String>), SqlError> {
        let (u, h) = user.map_or((self.user.clone(), self.account_host.clone()), |u| {
            (u.user.clone(), u.host.clone())
        });
        let cat = &self.server.catalog;
        if !cat.users()?.iter().any(|x| x.user == u && x.host == h) {
            return Err(SqlError::new(ER_NONEXISTING_GRANT, &[&u, &h]));
        }
        // Without FOR: what the session may do, its active roles' privileges included.
        let p: Arc<AccountPrivs> = match user {
            None => self.privs().clone().into(),
            Some(_) if using.is_empty() => cat.privileges(&u, &h),
            Some(_) => {
                let roles = self.granted_roles_named(&(u.clone(), h.clone()), using)?;
                cat.grants().effective(&u, &h, &roles)
            }
        };
        let mut lines = p.show(&u, &h);
        lines.extend(self.role_grant_lines(&(u.clone(), h.clone())));
        Ok((format!("Grants for {u}@{h}"), lines))
    }
}
