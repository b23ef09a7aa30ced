//! Privileges: the static privileges of MySQL 8.0 as bits, the levels they may be granted
//! at, what one account holds (global, per database, per table), and SHOW GRANTS' lines.
//!
//! Grants persist as rows of `mysql/innoxide_grants` (catalog.rs): (host, user, db, tbl,
//! privs) with db = tbl = "" for a global grant and tbl = "" for a database grant. The catalog
//! keeps them parsed in a `Grants` map, replaced as a whole after every change, and counts the
//! changes so a session re-reads its account's entry only when it changed.
//!
//! INVARIANTS
//! - P1: a stored privilege set is never 0 (a REVOKE that empties a row deletes it), and holds
//!   only privileges valid at its level (`level_mask`).
//! - P2: what an account may do on a table is the union of its global, database and table
//!   grants (no partial revokes); on a column, that and its grants on the column (SELECT,
//!   INSERT, UPDATE, REFERENCES: `COLUMN_ALL`), stored as rows of
//!   `mysql/innoxide_column_grants` (host, user, db, tbl, col, privs). A statement that lacks
//!   a table privilege the account holds on some columns of the table is checked column by
//!   column (access.rs A3).
//! - P3: with roles active, what a session may do is the union of its account's grants and
//!   those of its active roles still granted to it and of the roles granted to those,
//!   transitively. Roles persist as rows of `mysql/innoxide_roles` (`RoleRow`).
//! - P4: the roles of mandatory_roles that exist are held by every account (`held_by`) as if
//!   granted without ADMIN OPTION; they are not stored as grants.
//!
//! LOCKING: none here; the catalog swaps `Arc<Grants>` under its own RwLock.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use innoxide_sql::error::*;

/// The static privileges in the order SHOW GRANTS lists them (MySQL 8.0).
pub const NAMES: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE",
    "DROP",
    "RELOAD",
    "SHUTDOWN",
    "PROCESS",
    "FILE",
    "REFERENCES",
    "INDEX",
    "ALTER",
    "SHOW DATABASES",
    "SUPER",
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "EXECUTE",
    "REPLICATION SLAVE",
    "REPLICATION CLIENT",
    "CREATE VIEW",
    "SHOW VIEW",
    "CREATE ROUTINE",
    "ALTER ROUTINE",
    "CREATE USER",
    "EVENT",
    "TRIGGER",
    "CREATE TABLESPACE",
    "CREATE ROLE",
    "DROP ROLE",
];

/// The bit of privilege `name` (a compile-time error in a constant for an unknown name).
pub const fn bit(name: &str) -> u64 {
    let mut i = 0;
    while i < NAMES.len() {
        if crate::vars::str_eq(NAMES[i], name) {
            return 1 << i;
        }
        i += 1;
    }
    panic!("not a privilege name");
}

pub const SELECT: u64 = bit("SELECT");
pub const INSERT: u64 = bit("INSERT");
pub const UPDATE: u64 = bit("UPDATE");
pub const DELETE: u64 = bit("DELETE");
pub const CREATE: u64 = bit("CREATE");
pub const DROP: u64 = bit("DROP");
pub const RELOAD: u64 = bit("RELOAD");
pub const SHUTDOWN: u64 = bit("SHUTDOWN");
pub const PROCESS: u64 = bit("PROCESS");
pub const INDEX: u64 = bit("INDEX");
pub const ALTER: u64 = bit("ALTER");
pub const SHOW_DATABASES: u64 = bit("SHOW DATABASES");
pub const SUPER: u64 = bit("SUPER");
pub const CREATE_USER: u64 = bit("CREATE USER");
pub const CREATE_VIEW: u64 = bit("CREATE VIEW");
/// WITH GRANT OPTION (shown apart from the list).
pub const GRANT_OPTION: u64 = 1 << 40;

/// Every static privilege: what ALL [PRIVILEGES] means ON *.*.
pub const GLOBAL_ALL: u64 = (1 << NAMES.len()) - 1;
/// What may be granted ON db.table (ALL there).
pub const TABLE_ALL: u64 = SELECT
    | INSERT
    | UPDATE
    | DELETE
    | CREATE
    | DROP
    | bit("REFERENCES")
    | INDEX
    | ALTER
    | bit("CREATE VIEW")
    | bit("SHOW VIEW")
    | bit("TRIGGER");
/// What may be granted on a column.
pub const COLUMN_ALL: u64 = SELECT | INSERT | UPDATE | bit("REFERENCES");
/// LOCK TABLES (database level).
pub const LOCK_TABLES: u64 = bit("LOCK TABLES");
/// What may be granted ON db.* (ALL there).
pub const DB_ALL: u64 = TABLE_ALL
    | bit("CREATE TEMPORARY TABLES")
    | bit("LOCK TABLES")
    | bit("EXECUTE")
    | bit("CREATE ROUTINE")
    | bit("ALTER ROUTINE")
    | bit("EVENT");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Global,
    Db,
    Table,
}

/// The privileges valid at `level` (GRANT OPTION at every level).
pub fn level_mask(level: Level) -> u64 {
    GRANT_OPTION
        | match level {
            Level::Global => GLOBAL_ALL,
            Level::Db => DB_ALL,
            Level::Table => TABLE_ALL,
        }
}

/// The first privilege of `bits` by name ("SELECT" for the 1142 message).
pub fn first_name(bits: u64) -> &'static str {
    NAMES
        .iter()
        .enumerate()
        .find(|(i, _)| bits & (1 << i) != 0)
        .map_or("GRANT", |(_, n)| n)
}

/// The bits of GRANT/REVOKE's privilege list at `level`: ALL [PRIVILEGES] is the level's
/// whole set, USAGE nothing. A name MySQL does not know is error 3929 (it would be a
/// dynamic privilege); one not valid at the level is 1221 (database) or 1144 (table).
pub fn parse_list(names: &[String], level: Level) -> Result<u64, SqlError> {
    let mut bits = 0;
    for n in names {
        let b = match n.as_str() {
            "ALL" | "ALL PRIVILEGES" => level_mask(level) & !GRANT_OPTION,
            "USAGE" => 0,
            "GRANT OPTION" => GRANT_OPTION,
            other => match NAMES.iter().position(|x| *x == other) {
                Some(i) => 1 << i,
                None => {
                    return Err(SqlError::new(ER_DYNAMIC_PRIV_NOT_REGISTERED, &[&other]));
                }
            },
        };
        if b & !level_mask(level) != 0 {
            return Err(match level {
                Level::Table => SqlError::new(ER_ILLEGAL_GRANT_FOR_TABLE, &[]),
                _ => SqlError::new(ER_WRONG_USAGE, &[&"DB GRANT", &"GLOBAL PRIVILEGES"]),
            });
        }
        bits |= b;
    }
    Ok(bits)
}

/// What one account holds (P2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountPrivs {
    pub global: u64,
    pub dbs: BTreeMap<String, u64>,
    pub tables: BTreeMap<(String, String), u64>,
    /// Column grants: (db, table) to column to privileges (within COLUMN_ALL).
    pub columns: BTreeMap<(String, String), BTreeMap<String, u64>>,
}

impl AccountPrivs {
    /// Privileges on database `db` (global ones included).
    pub fn on_db(&self, db: &str) -> u64 {
        self.global | self.dbs.get(db).copied().unwrap_or(0)
    }

    /// Privileges on table `db.table` (global and database ones included).
    pub fn on_table(&self, db: &str, table: &str) -> u64 {
        let t = if self.tables.is_empty() {
            0
        } else {
            self.tables
                .get(&(db.to_string(), table.to_string()))
                .copied()
                .unwrap_or(0)
        };
        self.on_db(db) | t
    }

    /// The privileges granted on some column of `db.table` (the union over its columns).
    pub fn on_some_column(&self, db: &str, table: &str) -> u64 {
        if self.columns.is_empty() {
            return 0;
        }
        (self.columns.get(&(db.to_string(), table.to_string())))
            .map_or(0, |m| m.values().fold(0, |a, b| a | b))
    }

    /// The privileges on column `col` of `db.table`: the table's and the column's own (column
    /// names compare case-insensitively).
    pub fn on_column(&self, db: &str, table: &str, col: &str) -> u64 {
        let own = match self.columns.get(&(db.to_string(), table.to_string())) {
            Some(m) => (m.iter())
                .filter(|(c, _)| c.eq_ignore_ascii_case(col))
                .fold(0, |a, (_, b)| a | b),
            None => 0,
        };
        self.on_table(db, table) | own
    }

    /// Whether the account may see database `db` at all (USE, SHOW DATABASES): some
    /// privilege on it or on one of its tables or their columns.
    pub fn sees_db(&self, db: &str) -> bool {
        self.on_db(db) & DB_ALL != 0
            || self.global & SHOW_DATABASES != 0
            || self.tables.keys().any(|(d, _)| d == db)
            || self.columns.keys().any(|(d, _)| d == db)
    }

    /// SHOW GRANTS' lines for `'user'@'host'`, as MySQL 8.0 writes them: the global line
    /// first (USAGE when there is none), each privilege named; then database and table
    /// grants, ALL PRIVILEGES where the whole level's set is held.
    pub fn show(&self, user: &str, host: &str) -> Vec<String> {
        let to = format!("TO `{user}`@`{host}`");
        let line = |bits: u64, all: u64, on: &str| {
            let list = if bits & !GRANT_OPTION == all && all != GLOBAL_ALL {
                "ALL PRIVILEGES".to_string()
            } else if bits & !GRANT_OPTION == 0 {
                "USAGE".to_string()
            } else {
                names_of(bits).join(", ")
            };
            let opt = if bits & GRANT_OPTION != 0 {
                " WITH GRANT OPTION"
            } else {
                ""
            };
            format!("GRANT {list} ON {on} {to}{opt}")
        };
        let mut v = vec![line(self.global, GLOBAL_ALL, "*.*")];
        for (db, bits) in &self.dbs {
            v.push(line(*bits, DB_ALL, &format!("`{db}`.*")));
        }
        let mut tables: Vec<&(String, String)> = self.tables.keys().collect();
        tables.extend(
            self.columns
                .keys()
                .filter(|k| !self.tables.contains_key(*k)),
        );
        tables.sort();
        for key in tables {
            let on = format!("`{}`.`{}`", key.0, key.1);
            let bits = self.tables.get(key).copied().unwrap_or(0);
            match self.columns.get(key) {
                None => v.push(line(bits, TABLE_ALL, &on)),
                Some(cols) => v.push(with_columns(bits, cols, &on, &to)),
            }
        }
        v
    }
}

/// A SHOW GRANTS line for a table with column grants, as MySQL writes it: each privilege
/// in order, a table-level one named, then again with its columns when it also has column
/// grants (`SELECT, SELECT (`a`)`); one held on columns only is named with its columns.
fn with_columns(bits: u64, cols: &BTreeMap<String, u64>, on: &str, to: &str) -> String {
    let col_bits = cols.values().fold(0, |a, b| a | b);
    let mut parts: Vec<String> = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let b = 1u64 << i;
        if bits & b != 0 {
            parts.push(name.to_string());
        }
        if col_bits & b != 0 {
            let names: Vec<String> = (cols.iter())
                .filter(|(_, x)| *x & b != 0)
                .map(|(c, _)| format!("`{}`", c.replace('`', "``")))
                .collect();
            parts.push(format!("{name} ({})", names.join(", ")));
        }
    }
    let opt = if bits & GRANT_OPTION != 0 {
        " WITH GRANT OPTION"
    } else {
        ""
    };
    format!("GRANT {} ON {on} {to}{opt}", parts.join(", "))
}

impl AccountPrivs {
    /// Adds `other`'s grants to these (a role's, P3).
    fn merge(&mut self, other: &AccountPrivs) {
        self.global |= other.global;
        for (db, bits) in &other.dbs {
            *self.dbs.entry(db.clone()).or_default() |= bits;
        }
        for (t, bits) in &other.tables {
            *self.tables.entry(t.clone()).or_default() |= bits;
        }
        for (t, cols) in &other.columns {
            let mine = self.columns.entry(t.clone()).or_default();
            for (c, bits) in cols {
                *mine.entry(c.clone()).or_default() |= bits;
            }
        }
    }
}

/// The names of the static privileges in `bits`, in SHOW GRANTS order.
pub fn names_of(bits: u64) -> Vec<&'static str> {
    NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// One stored grant: (host, user, db, tbl, privileges); db and tbl "" above their level.
pub type GrantRow = (String, String, String, String, u64);

/// One stored column grant: (host, user, db, tbl, column, privileges).
pub type ColumnGrantRow = (String, String, String, String, String, u64);

/// One stored role row: (kind, host, user, role host, role user, WITH ADMIN OPTION); kind
/// "R": the account is a role (role columns empty); "G": the role is granted to the account;
/// "D": the role is one of the account's default roles.
pub type RoleRow = (String, String, String, String, String, bool);

/// An account or role as (user, host pattern).
pub type AuthId = (String, String);

/// Every account's grants, keyed by (user, host pattern), and its roles (P3).
#[derive(Debug, Default)]
pub struct Grants {
    pub accounts: HashMap<AuthId, Arc<AccountPrivs>>,
    /// The accounts that are roles (CREATE ROLE).
    pub roles: HashSet<AuthId>,
    /// The roles granted to each account, with WITH ADMIN OPTION.
    pub granted: HashMap<AuthId, Vec<(AuthId, bool)>>,
    /// Each account's default roles.
    pub defaults: HashMap<AuthId, Vec<AuthId>>,
    /// The existing roles of mandatory_roles (P4).
    pub mandatory: Vec<AuthId>,
}

impl Grants {
    /// Builds the map from the stored rows (host, user, db, tbl, privs) and column rows.
    pub fn from_rows(
        rows: impl IntoIterator<Item = GrantRow>,
        columns: impl IntoIterator<Item = ColumnGrantRow>,
    ) -> Self {
        let mut m: HashMap<(String, String), AccountPrivs> = HashMap::new();
        for (host, user, db, tbl, bits) in rows {
            let a = m.entry((user, host)).or_default();
            match (db.is_empty(), tbl.is_empty()) {
                (true, _) => a.global |= bits,
                (false, true) => *a.dbs.entry(db).or_default() |= bits,
                (false, false) => *a.tables.entry((db, tbl)).or_default() |= bits,
            }
        }
        for (host, user, db, tbl, col, bits) in columns {
            let a = m.entry((user, host)).or_default();
            *a.columns
                .entry((db, tbl))
                .or_default()
                .entry(col)
                .or_default() |= bits;
        }
        Grants {
            accounts: m.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            ..Grants::default()
        }
    }

    /// The account's grants (none when it has no row).
    pub fn of(&self, user: &str, host: &str) -> Arc<AccountPrivs> {
        self.accounts
            .get(&(user.to_string(), host.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// Adds the stored role rows.
    pub fn add_roles(&mut self, rows: impl IntoIterator<Item = RoleRow>) {
        for (kind, host, user, role_host, role_user, admin) in rows {
            let id = (user, host);
            let role = (role_user, role_host);
            match kind.as_str() {
                "R" => {
                    self.roles.insert(id);
                }
                "G" => self.granted.entry(id).or_default().push((role, admin)),
                _ => self.defaults.entry(id).or_default().push(role),
            }
        }
    }

    /// The roles granted to `id`.
    pub fn granted_to(&self, id: &AuthId) -> &[(AuthId, bool)] {
        self.granted.get(id).map_or(&[], Vec::as_slice)
    }

    /// The roles `id` holds: those granted to it and the mandatory ones (P4), each with
    /// whether it was granted WITH ADMIN OPTION.
    pub fn held_by(&self, id: &AuthId) -> Vec<(AuthId, bool)> {
        let mut v = self.granted_to(id).to_vec();
        for m in &self.mandatory {
            if m != id && !v.iter().any(|(r, _)| r == m) {
                v.push((m.clone(), false));
            }
        }
        v
    }

    /// What `user`@`host` may do with roles `active` (those it still holds) and the roles
    /// granted to those, transitively, in effect (P3).
    pub fn effective(&self, user: &str, host: &str, active: &[AuthId]) -> Arc<AccountPrivs> {
        let own = self.of(user, host);
        let me = (user.to_string(), host.to_string());
        let held = self.held_by(&me);
        let mut stack: Vec<AuthId> = active
            .iter()
            .filter(|r| held.iter().any(|(g, _)| g == *r))
            .cloned()
            .collect();
        if stack.is_empty() {
            return own;
        }
        let mut acc = (*own).clone();
        let mut seen: HashSet<AuthId> = HashSet::new();
        while let Some(r) = stack.pop() {
            if !seen.insert(r.clone()) {
                continue;
            }
            acc.merge(&self.of(&r.0, &r.1));
            stack.extend(self.granted_to(&r).iter().map(|(g, _)| g.clone()));
        }
        Arc::new(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn levels() {
        assert_eq!(
            parse_list(&v(&["ALL PRIVILEGES"]), Level::Global).unwrap(),
            GLOBAL_ALL
        );
        assert_eq!(parse_list(&v(&["ALL"]), Level::Db).unwrap(), DB_ALL);
        assert_eq!(
            parse_list(&v(&["SELECT", "GRANT OPTION"]), Level::Table).unwrap(),
            SELECT | GRANT_OPTION
        );
        assert_eq!(parse_list(&v(&["USAGE"]), Level::Global).unwrap(), 0);
        let e = parse_list(&v(&["SUPER"]), Level::Db).unwrap_err();
        assert_eq!(e.code, 1221);
        let e = parse_list(&v(&["EXECUTE"]), Level::Table).unwrap_err();
        assert_eq!(e.code, 1144);
        let e = parse_list(&v(&["BACKUP_ADMIN"]), Level::Global).unwrap_err();
        assert_eq!(e.code, 3929);
    }

    #[test]
    fn union_and_show() {
        let g = Grants::from_rows(
            [
                ("%".into(), "u".into(), "".into(), "".into(), PROCESS),
                ("%".into(), "u".into(), "d".into(), "".into(), DB_ALL),
                (
                    "%".into(),
                    "u".into(),
                    "e".into(),
                    "t".into(),
                    SELECT | INSERT | GRANT_OPTION,
                ),
            ],
            [],
        );
        let a = g.of("u", "%");
        assert_eq!(a.on_table("d", "x"), PROCESS | DB_ALL);
        assert_eq!(a.on_table("e", "t") & SELECT, SELECT);
        assert_eq!(a.on_table("e", "u") & SELECT, 0);
        assert!(a.sees_db("e") && a.sees_db("d") && !a.sees_db("f"));
        assert_eq!(
            a.show("u", "%"),
            vec![
                "GRANT PROCESS ON *.* TO `u`@`%`",
                "GRANT ALL PRIVILEGES ON `d`.* TO `u`@`%`",
                "GRANT SELECT, INSERT ON `e`.`t` TO `u`@`%` WITH GRANT OPTION",
            ]
        );
        assert_eq!(
            g.of("v", "%").show("v", "%"),
            vec!["GRANT USAGE ON *.* TO `v`@`%`"]
        );
        assert_eq!(first_name(DELETE | SELECT), "SELECT");
    }
}
