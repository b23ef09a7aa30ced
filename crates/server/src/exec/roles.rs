//! Roles, as MySQL 8.0 has them: CREATE ROLE / DROP ROLE, GRANT role TO account [WITH ADMIN
//! OPTION] / REVOKE role FROM account, SET DEFAULT ROLE (and ALTER USER ... DEFAULT ROLE),
//! SET ROLE, CURRENT_ROLE(), activate_all_roles_on_login. A role is an account (a row of
//! `mysql/user` without password) marked in `mysql/innoxide_roles`; so are the grants of
//! roles and the default roles (privs.rs `RoleRow`).
//!
//! INVARIANTS
//! - R1: what a session may do is its account's grants and its active roles' (privs.rs P3);
//!   changing its active roles makes it re-read them at its next check.
//! - R2: a session starts (login, COM_CHANGE_USER, COM_RESET_CONNECTION) with its account's
//!   default roles active, or every role granted to it when activate_all_roles_on_login is
//!   ON.
//! - R3: nobody logs in as a role (its account is locked: 3118).
//! - R4: the graph of role grants has no cycle: a GRANT that would make a role reach itself
//!   is refused whole (4027, as MySQL 8.0.22+).
//! - R5: the roles of mandatory_roles are held by every account (privs.rs P4): SET ROLE,
//!   SET DEFAULT ROLE and activate_all_roles_on_login see them; SHOW GRANTS lists them for
//!   the session's own account only; they cannot be revoked or dropped (3628).
//!
//! No latches: the catalog's grants are read through its own lock; changes take `ddl`.

use innoxide_sql::ast::{RoleSpec, Show, Statement, UserName};
use innoxide_sql::error::*;

use super::{Output, Server, Session};
use crate::privs::{self, AuthId};

fn id(u: &UserName) -> AuthId {
    (u.user.clone(), u.host.clone())
}

/// `user`@`host` as MySQL's role messages write it.
fn shown((u, h): &AuthId) -> String {
    format!("`{u}`@`{h}`")
}

/// 4027 if granting `roles` to `users` would make a role reach itself (R4): a user that is, or is granted, one of the roles through the
/// grants there are and those the statement makes before it. Nothing is granted then.
fn no_loop(g: &privs::Grants, roles: &[UserName], users: &[UserName]) -> Result<(), SqlError> {
    let mut added: Vec<(AuthId, AuthId)> = Vec::new();
    for u in users.iter().map(id) {
        for r in roles.iter().map(id) {
            // Does `u` sit among the roles `r` holds (or is it `r`)?
            let mut stack = vec![r.clone()];
            let mut seen: Vec<AuthId> = Vec::new();
            while let Some(x) = stack.pop() {
                if x == u {
                    return Err(SqlError::new(
                        ER_ROLE_GRANTED_TO_ITSELF,
                        &[&shown(&u), &shown(&r)],
                    ));
                }
                if seen.contains(&x) {
                    continue;
                }
                let held = g.granted_to(&x).iter().map(|(role, _)| role);
                let pending = added
                    .iter()
                    .filter(|(to, _)| *to == x)
                    .map(|(_, role)| role);
                stack.extend(held.chain(pending).cloned());
                seen.push(x);
            }
            added.push((u.clone(), r));
        }
    }
    Ok(())
}

/// The roles a session of `user`@`host` starts with (R2).
pub(crate) fn login_roles(server: &Server, user: &str, host: &str) -> Vec<AuthId> {
    let g = server.catalog.grants();
    let me = (user.to_string(), host.to_string());
    if server.vars.activate_all_roles_on_login() {
        g.held_by(&me).into_iter().map(|(r, _)| r).collect()
    } else {
        g.defaults.get(&me).cloned().unwrap_or_default()
    }
}

impl Session {
    fn me(&self) -> AuthId {
        (self.user.clone(), self.account_host.clone())
    }

    /// `stmt` with CURRENT_USER() as an account name replaced by the session's account, or
    /// None when it names none (the parser writes it as user CURRENT_USER).
    pub(crate) fn with_current_user(&self, stmt: &Statement) -> Option<Statement> {
        let is_it = |u: &UserName| u.user == "CURRENT_USER" && u.host == "%";
        let mine = UserName {
            user: self.user.clone(),
            host: self.account_host.clone(),
        };
        let fix = |v: &mut Vec<UserName>| {
            for u in v.iter_mut().filter(|u| is_it(u)) {
                *u = mine.clone();
            }
        };
        // Only account statements are looked at (and copied): not the hot path's.
        if !matches!(
            stmt,
            Statement::AlterUser { .. }
                | Statement::CreateUser { .. }
                | Statement::DropUser { .. }
                | Statement::Grant { .. }
                | Statement::Revoke { .. }
                | Statement::RevokeAll { .. }
                | Statement::GrantRole { .. }
                | Statement::RevokeRole { .. }
                | Statement::SetDefaultRole { .. }
                | Statement::Show(Show::Grants { user: Some(_), .. } | Show::CreateUser(_))
        ) {
            return None;
        }
        let mut s = stmt.clone();
        let found = match &mut s {
            Statement::AlterUser { users, .. } | Statement::CreateUser { users, .. } => {
                let any = users.iter().any(|(u, _)| is_it(u));
                for (u, _) in users.iter_mut().filter(|(u, _)| is_it(u)) {
                    *u = mine.clone();
                }
                any
            }
            Statement::DropUser { users, .. }
            | Statement::Grant { users, .. }
            | Statement::Revoke { users, .. }
            | Statement::RevokeAll { users }
            | Statement::GrantRole { users, .. }
            | Statement::RevokeRole { users, .. }
            | Statement::SetDefaultRole { users, .. } => {
                let any = users.iter().any(is_it);
                fix(users);
                any
            }
            Statement::Show(Show::Grants { user: Some(u), .. } | Show::CreateUser(u))
                if is_it(u) =>
            {
                *u = mine.clone();
                true
            }
            _ => false,
        };
        found.then_some(s)
    }

    /// The session's active roles became `roles` (R1).
    fn activate(&mut self, roles: Vec<AuthId>) {
        self.active_roles = roles;
        self.privs.0 = u64::MAX;
    }

    /// CURRENT_ROLE(): the active roles, sorted, or NONE.
    pub(crate) fn current_role(&self) -> String {
        if self.active_roles.is_empty() {
            return "NONE".into();
        }
        let mut v: Vec<String> = self.active_roles.iter().map(shown).collect();
        v.sort();
        v.join(",")
    }

    /// 3523 unless every one of `ids` is an account (or role).
    fn known(&self, ids: &[UserName]) -> Result<(), SqlError> {
        let users = self.server.catalog.users()?;
        for u in ids {
            if !users.iter().any(|x| x.user == u.user && x.host == u.host) {
                return Err(SqlError::new(ER_UNKNOWN_AUTHID, &[&u.user, &u.host]));
            }
        }
        Ok(())
    }

    /// CREATE ROLE (`create`) or DROP ROLE of `roles`; with IF [NOT] EXISTS (`tolerant`) the
    /// ones already there (or missing) are passed over, else they make error 1396.
    pub(super) fn create_or_drop_roles(
        &mut self,
        roles: &[UserName],
        tolerant: bool,
        create: bool,
    ) -> Result<Output, SqlError> {
        let what = if create { "CREATE ROLE" } else { "DROP ROLE" };
        self.role_admin(privs::bit(what), what)?;
        let cat = self.server.catalog.clone();
        if !create {
            self.not_mandatory(roles)?;
        }
        let mut failed = Vec::new();
        for r in roles {
            let done = if create {
                cat.create_role(&r.user, &r.host)?
            } else {
                cat.drop_user(&r.user, &r.host)?
            };
            if !done && !tolerant {
                failed.push(format!("'{}'@'{}'", r.user, r.host));
            }
        }
        if !failed.is_empty() {
            return Err(SqlError::new(ER_CANNOT_USER, &[&what, &failed.join(",")]));
        }
        Ok(Output::ok(0))
    }

    /// 3628 if one of `ids` is a mandatory role (R5).
    pub(crate) fn not_mandatory(&self, ids: &[UserName]) -> Result<(), SqlError> {
        match (ids.iter()).find(|u| self.server.catalog.is_mandatory_role(&u.user, &u.host)) {
            Some(u) => Err(SqlError::new(ER_MANDATORY_ROLE, &[&shown(&id(u))])),
            None => Ok(()),
        }
    }

    /// 1227 unless the account holds `own` (CREATE ROLE, DROP ROLE) or CREATE USER globally.
    fn role_admin(&mut self, own: u64, what: &str) -> Result<(), SqlError> {
        if self.privs().global & (own | privs::CREATE_USER) != 0 {
            return Ok(());
        }
        let need = format!("{what} or CREATE USER");
        Err(SqlError::new(ER_SPECIFIC_ACCESS_DENIED_ERROR, &[&need]))
    }

    /// GRANT roles TO users / REVOKE roles FROM users: CREATE USER, or WITH ADMIN OPTION on
    /// each role, is needed.
    pub(super) fn grant_roles(
        &mut self,
        roles: &[UserName],
        users: &[UserName],
        admin: bool,
        add: bool,
    ) -> Result<Output, SqlError> {
        if self.privs().global & privs::CREATE_USER == 0 {
            let g = self.server.catalog.grants();
            let me = self.me();
            let mine = g.granted_to(&me);
            if !roles
                .iter()
                .all(|r| mine.iter().any(|(m, a)| *a && *m == id(r)))
            {
                let need = "CREATE USER or WITH ADMIN OPTION";
                return Err(SqlError::new(ER_SPECIFIC_ACCESS_DENIED_ERROR, &[&need]));
            }
        }
        self.known(roles)?;
        self.known(users)?;
        let cat = self.server.catalog.clone();
        if add {
            no_loop(&cat.grants(), roles, users)?;
        } else {
            self.not_mandatory(roles)?;
        }
        for u in users {
            for r in roles {
                cat.change_role_grant((&u.user, &u.host), (&r.user, &r.host), admin, add)?;
            }
        }
        Ok(Output::ok(0))
    }

    /// The roles `spec` names for `account` (3530 for one not granted to it).
    fn roles_of(&self, spec: &RoleSpec, account: &AuthId) -> Result<Vec<AuthId>, SqlError> {
        let g = self.server.catalog.grants();
        let granted: Vec<AuthId> = g.held_by(account).into_iter().map(|(r, _)| r).collect();
        Ok(match spec {
            RoleSpec::None => Vec::new(),
            RoleSpec::Default => g.defaults.get(account).cloned().unwrap_or_default(),
            RoleSpec::All(except) => granted
                .into_iter()
                .filter(|r| !except.iter().any(|e| id(e) == *r))
                .collect(),
            RoleSpec::List(list) => {
                let mut out = Vec::new();
                for r in list.iter().map(id) {
                    if !granted.contains(&r) {
                        return Err(SqlError::new(
                            ER_ROLE_NOT_GRANTED,
                            &[&shown(&r), &shown(account)],
                        ));
                    }
                    out.push(r);
                }
                out
            }
        })
    }

    /// `names`, each a role granted to `account` (3530 for one that is not).
    pub(crate) fn granted_roles_named(
        &self,
        account: &AuthId,
        names: &[UserName],
    ) -> Result<Vec<AuthId>, SqlError> {
        self.roles_of(&RoleSpec::List(names.to_vec()), account)
    }

    /// SET ROLE (R1).
    pub(super) fn set_role(&mut self, spec: &RoleSpec) -> Result<Output, SqlError> {
        let roles = self.roles_of(spec, &self.me())?;
        self.activate(roles);
        Ok(Output::ok(0))
    }

    /// SET DEFAULT ROLE ... TO users: CREATE USER is needed for another account.
    pub(super) fn set_default_role(
        &mut self,
        spec: &RoleSpec,
        users: &[UserName],
    ) -> Result<Output, SqlError> {
        let me = self.me();
        if users.iter().any(|u| id(u) != me) {
            self.check_global(privs::CREATE_USER, "CREATE USER")?;
        }
        self.known(users)?;
        let cat = self.server.catalog.clone();
        for u in users {
            let roles = self.roles_of(spec, &id(u))?;
            cat.set_default_roles((&u.user, &u.host), &roles)?;
        }
        Ok(Output::ok(0))
    }

    /// The roles granted to `account`, as SHOW GRANTS' lines: `GRANT r1, r2 TO account`
    /// and one line for those WITH ADMIN OPTION; the mandatory roles too when `account` is the
    /// session's own (R5).
    pub(crate) fn role_grant_lines(&self, account: &AuthId) -> Vec<String> {
        let g = self.server.catalog.grants();
        let held = if *account == self.me() {
            g.held_by(account)
        } else {
            g.granted_to(account).to_vec()
        };
        let mut lines = Vec::new();
        for admin in [false, true] {
            let mut names: Vec<String> = held
                .iter()
                .filter(|(_, a)| *a == admin)
                .map(|(r, _)| shown(r))
                .collect();
            names.sort();
            if !names.is_empty() {
                let opt = if admin { " WITH ADMIN OPTION" } else { "" };
                lines.push(format!(
                    "GRANT {} TO {}{opt}",
                    names.join(","),
                    shown(account)
                ));
            }
        }
        lines
    }
}
