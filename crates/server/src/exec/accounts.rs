//! Accounts as MySQL 8.0 shows them: the credentials of CREATE / ALTER USER (`IDENTIFIED
//! [WITH plugin] [BY 'password' | AS 'stored form']`), SHOW CREATE USER, and the account
//! tables of the `mysql` schema that tools read (user, db, tables_priv, and the role, column,
//! routine and proxy tables, which have no rows here), computed from the catalog's accounts
//! and grants.
//!
//! INVARIANTS
//! - U1: an account's plugin is mysql_native_password or caching_sha2_password (another name
//!   is 1524). Its stored form, SHOW CREATE USER's `AS '...'`, gives the same credentials back
//!   when it is given to CREATE USER: '*' and 40 hex digits (SHA1(SHA1(password)), MySQL's own
//!   mysql_native_password form) when only that hash is known; `$innoxide$`, 64 hex digits
//!   (SHA256(SHA256(password))), '*' and the 40 when both are; nothing for an empty
//!   password. Another form (MySQL's `$A$005$` caching_sha2_password form among them) is 1827.
//! - U2: the `mysql` account tables are computed at each read and cannot be written (1036);
//!   reading one needs SELECT on it, as in MySQL.
//!
//! No latches: the catalog's accounts and grants are read through its own locks.

use innoxide_sql::ast;
use innoxide_sql::error::*;
use innoxide_sql::types::Datum;

use super::{Column, Session};
pub(crate) use crate::catalog::is_account_table;
use crate::catalog::UserInfo;
use crate::privs::{self, bit};

const NATIVE: &str = "mysql_native_password";
const SHA2: &str = "caching_sha2_password";
/// The prefix of the stored form that carries both hashes (U1).
const BOTH_PREFIX: &str = "$innoxide$";

/// The privilege columns of mysql.user and mysql.db, with their privileges, in MySQL 8.0's
/// order (`db` has the ones marked true).
const PRIV_COLUMNS: [(&str, u64, bool); 31] = [
    ("Select_priv", bit("SELECT"), true),
    ("Insert_priv", bit("INSERT"), true),
    ("Update_priv", bit("UPDATE"), true),
    ("Delete_priv", bit("DELETE"), true),
    ("Create_priv", bit("CREATE"), true),
    ("Drop_priv", bit("DROP"), true),
    ("Reload_priv", bit("RELOAD"), false),
    ("Shutdown_priv", bit("SHUTDOWN"), false),
    ("Process_priv", bit("PROCESS"), false),
    ("File_priv", bit("FILE"), false),
    ("Grant_priv", privs::GRANT_OPTION, true),
    ("References_priv", bit("REFERENCES"), true),
    ("Index_priv", bit("INDEX"), true),
    ("Alter_priv", bit("ALTER"), true),
    ("Show_db_priv", bit("SHOW DATABASES"), false),
    ("Super_priv", bit("SUPER"), false),
    (
        "Create_tmp_table_priv",
        bit("CREATE TEMPORARY TABLES"),
        true,
    ),
    ("Lock_tables_priv", bit("LOCK TABLES"), true),
    ("Execute_priv", bit("EXECUTE"), true),
    ("Repl_slave_priv", bit("REPLICATION SLAVE"), false),
    ("Repl_client_priv", bit("REPLICATION CLIENT"), false),
    ("Create_view_priv", bit("CREATE VIEW"), true),
    ("Show_view_priv", bit("SHOW VIEW"), true),
    ("Create_routine_priv", bit("CREATE ROUTINE"), true),
    ("Alter_routine_priv", bit("ALTER ROUTINE"), true),
    ("Create_user_priv", bit("CREATE USER"), false),
    ("Event_priv", bit("EVENT"), true),
    ("Trigger_priv", bit("TRIGGER"), true),
    ("Create_tablespace_priv", bit("CREATE TABLESPACE"), false),
    ("Create_role_priv", bit("CREATE ROLE"), false),
    ("Drop_role_priv", bit("DROP ROLE"), false),
];

fn s(x: impl Into<String>) -> Datum {
    Datum::Bytes(x.into().into_bytes())
}

fn yn(bits: u64, b: u64) -> Datum {
    s(if bits & b != 0 { "Y" } else { "N" })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

fn unhex(t: &str, len: usize) -> Option<Vec<u8>> {
    if t.len() != 2 * len || !t.is_ascii() {
        return None;
    }
    (0..len)
        .map(|i| u8::from_str_radix(&t[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// The account CREATE / ALTER USER makes of `u` and its IDENTIFIED clause (U1).
pub(crate) fn user_info(
    u: &ast::UserName,
    auth: Option<&ast::UserAuth>,
) -> Result<UserInfo, SqlError> {
    let plugin = auth
        .and_then(|a| a.plugin.clone())
        .unwrap_or_else(|| SHA2.into());
    if plugin != NATIVE && plugin != SHA2 {
        return Err(SqlError::new(ER_PLUGIN_IS_NOT_LOADED, &[&plugin]));
    }
    let mut info = UserInfo {
        user: u.user.clone(),
        host: u.host.clone(),
        plugin,
        native: None,
        sha2: None,
    };
    match auth {
        Some(ast::UserAuth {
            password: Some(pw), ..
        }) if !pw.is_empty() => {
            info.native = Some(innoxide_protocol::auth::native_hash(pw.as_bytes()).to_vec());
            info.sha2 = Some(innoxide_protocol::auth::sha2_hash(pw.as_bytes()).to_vec());
        }
        Some(ast::UserAuth { hash: Some(h), .. }) if !h.is_empty() => {
            let bad = || SqlError::new(ER_PASSWORD_FORMAT, &[]);
            let (sha2, native) = match h.strip_prefix(BOTH_PREFIX) {
                Some(rest) => {
                    let (a, b) = rest.split_once('*').ok_or_else(bad)?;
                    (Some(unhex(a, 32).ok_or_else(bad)?), b)
                }
                None => (None, h.strip_prefix('*').ok_or_else(bad)?),
            };
            info.native = Some(unhex(native, 20).ok_or_else(bad)?);
            info.sha2 = sha2;
        }
        _ => {}
    }
    Ok(info)
}

/// An account's stored form (U1), None for an empty password.
fn stored_form(u: &UserInfo) -> Option<String> {
    match (&u.native, &u.sha2) {
        (Some(n), Some(s)) => Some(format!("{BOTH_PREFIX}{}*{}", hex(s), hex(n))),
        (Some(n), None) => Some(format!("*{}", hex(n))),
        _ => None,
    }
}

/// A name quoted as SHOW CREATE USER writes it.
fn quoted(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

impl Session {
    /// SHOW CREATE USER: (column name, statement).
    pub(crate) fn show_create_user(
        &mut self,
        u: &ast::UserName,
    ) -> Result<(String, String), SqlError> {
        let own = u.user == self.user && u.host == self.account_host;
        if !own && self.privs().on_db("mysql") & privs::SELECT == 0 {
            self.check_global(privs::CREATE_USER, "CREATE USER")?;
        }
        let cat = self.server.catalog.clone();
        let Some(info) = cat
            .users()?
            .into_iter()
            .find(|x| x.user == u.user && x.host == u.host)
        else {
            let name = format!("'{}'@'{}'", u.user, u.host);
            return Err(SqlError::new(ER_CANNOT_USER, &[&"SHOW CREATE USER", &name]));
        };
        let mut text = format!(
            "CREATE USER {}@{} IDENTIFIED WITH '{}'",
            quoted(&info.user),
            quoted(&info.host),
            info.plugin
        );
        if let Some(form) = stored_form(&info) {
            text.push_str(&format!(" AS '{form}'"));
        }
        text.push_str(
            " REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT \
             PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT",
        );
        Ok((format!("CREATE USER for {}@{}", info.user, info.host), text))
    }

    /// The rows of account table `mysql.name` (U2).
    pub(crate) fn account_table(
        &mut self,
        name: &str,
    ) -> Result<(Vec<Column>, Vec<Vec<Datum>>), SqlError> {
        let cat = self.server.catalog.clone();
        let name = name.to_ascii_lowercase();
        let text_cols = |names: &[&str]| names.iter().map(|c| Column::text(c)).collect::<Vec<_>>();
        let users = cat.users()?;
        let grants = cat.grants();
        let (cols, rows) = match name.as_str() {
            "user" => {
                let mut names = vec!["Host", "User"];
                names.extend(
                    PRIV_COLUMNS
                        .iter()
                        .filter(|c| c.0 != "Create_role_priv" && c.0 != "Drop_role_priv")
                        .map(|c| c.0),
                );
                names.extend([
                    "ssl_type",
                    "ssl_cipher",
                    "x509_issuer",
                    "x509_subject",
                    "max_questions",
                    "max_updates",
                    "max_connections",
                    "max_user_connections",
                    "plugin",
                    "authentication_string",
                    "password_expired",
                    "password_last_changed",
                    "password_lifetime",
                    "account_locked",
                    "Create_role_priv",
                    "Drop_role_priv",
                    "Password_reuse_history",
                    "Password_reuse_time",
                    "Password_require_current",
                    "User_attributes",
                ]);
                let mut rows = Vec::new();
                for u in &users {
                    let g = cat.privileges(&u.user, &u.host).global;
                    let mut r = vec![s(u.host.clone()), s(u.user.clone())];
                    for (c, b, _) in PRIV_COLUMNS.iter() {
                        if *c != "Create_role_priv" && *c != "Drop_role_priv" {
                            r.push(yn(g, *b));
                        }
                    }
                    r.extend([s(""), s(""), s(""), s("")]);
                    r.extend([
                        Datum::UInt(0),
                        Datum::UInt(0),
                        Datum::UInt(0),
                        Datum::UInt(0),
                    ]);
                    r.push(s(u.plugin.clone()));
                    r.push(s(stored_form(u).unwrap_or_default()));
                    // A role's account is locked (roles.rs R3).
                    let locked = grants.roles.contains(&(u.user.clone(), u.host.clone()));
                    r.extend([
                        s("N"),
                        Datum::Null,
                        Datum::Null,
                        s(if locked { "Y" } else { "N" }),
                    ]);
                    r.extend([yn(g, bit("CREATE ROLE")), yn(g, bit("DROP ROLE"))]);
                    r.extend([Datum::Null, Datum::Null, Datum::Null, Datum::Null]);
                    rows.push(r);
                }
                (text_cols(&names), rows)
            }
            "db" => {
                let mut names = vec!["Host", "Db", "User"];
                names.extend(PRIV_COLUMNS.iter().filter(|c| c.2).map(|c| c.0));
                let mut rows = Vec::new();
                for u in &users {
                    for (db, bits) in &cat.privileges(&u.user, &u.host).dbs {
                        let mut r = vec![s(u.host.clone()), s(db.clone()), s(u.user.clone())];
                        r.extend(PRIV_COLUMNS.iter().filter(|c| c.2).map(|c| yn(*bits, c.1)));
                        rows.push(r);
                    }
                }
                (text_cols(&names), rows)
            }
            "tables_priv" => {
                let mut rows = Vec::new();
                for u in &users {
                    let p = cat.privileges(&u.user, &u.host);
                    let mut keys: Vec<&(String, String)> = p.tables.keys().collect();
                    keys.extend(p.columns.keys().filter(|k| !p.tables.contains_key(*k)));
                    keys.sort();
                    for key in keys {
                        let (db, table) = key;
                        let bits = &p.tables.get(key).copied().unwrap_or(0);
                        let on_columns = p.on_some_column(db, table);
                        let names: Vec<String> = privs::names_of(*bits & !privs::GRANT_OPTION)
                            .iter()
                            .map(|n| table_priv_name(n))
                            .chain((*bits & privs::GRANT_OPTION != 0).then(|| "Grant".to_string()))
                            .collect();
                        rows.push(vec![
                            s(u.host.clone()),
                            s(db.clone()),
                            s(u.user.clone()),
                            s(table.clone()),
                            s(""),
                            Datum::Null,
                            s(names.join(",")),
                            s(column_privs(on_columns)),
                        ]);
                    }
                }
                let names = [
                    "Host",
                    "Db",
                    "User",
                    "Table_name",
                    "Grantor",
                    "Timestamp",
                    "Table_priv",
                    "Column_priv",
                ];
                (text_cols(&names), rows)
            }
            "columns_priv" => {
                let mut rows = Vec::new();
                for u in &users {
                    for ((db, table), cols) in &cat.privileges(&u.user, &u.host).columns {
                        for (c, bits) in cols {
                            rows.push(vec![
                                s(u.host.clone()),
                                s(db.clone()),
                                s(u.user.clone()),
                                s(table.clone()),
                                s(c.clone()),
                                Datum::Null,
                                s(column_privs(*bits)),
                            ]);
                        }
                    }
                }
                let names = [
                    "Host",
                    "Db",
                    "User",
                    "Table_name",
                    "Column_name",
                    "Timestamp",
                    "Column_priv",
                ];
                (text_cols(&names), rows)
            }
            "procs_priv" => (
                text_cols(&[
                    "Host",
                    "Db",
                    "User",
                    "Routine_name",
                    "Routine_type",
                    "Grantor",
                    "Proc_priv",
                    "Timestamp",
                ]),
                Vec::new(),
            ),
            "proxies_priv" => (
                text_cols(&[
                    "Host",
                    "User",
                    "Proxied_host",
                    "Proxied_user",
                    "With_grant",
                    "Grantor",
                    "Timestamp",
                ]),
                Vec::new(),
            ),
            // A role granted to an account is an edge from the role to the account.
            "role_edges" => {
                let mut rows = Vec::new();
                for ((user, host), roles) in &grants.granted {
                    for ((ru, rh), admin) in roles {
                        rows.push(vec![
                            s(rh.clone()),
                            s(ru.clone()),
                            s(host.clone()),
                            s(user.clone()),
                            s(if *admin { "Y" } else { "N" }),
                        ]);
                    }
                }
                rows.sort_by_key(|r| format!("{r:?}"));
                let names = [
                    "FROM_HOST",
                    "FROM_USER",
                    "TO_HOST",
                    "TO_USER",
                    "WITH_ADMIN_OPTION",
                ];
                (text_cols(&names), rows)
            }
            "default_roles" => {
                let mut rows = Vec::new();
                for ((user, host), roles) in &grants.defaults {
                    for (ru, rh) in roles {
                        rows.push(vec![
                            s(host.clone()),
                            s(user.clone()),
                            s(rh.clone()),
                            s(ru.clone()),
                        ]);
                    }
                }
                rows.sort_by_key(|r| format!("{r:?}"));
                let names = ["HOST", "USER", "DEFAULT_ROLE_HOST", "DEFAULT_ROLE_USER"];
                (text_cols(&names), rows)
            }
            _ => (
                text_cols(&["USER", "HOST", "PRIV", "WITH_GRANT_OPTION"]),
                Vec::new(),
            ),
        };
        Ok((cols, rows))
    }
}

/// A set of column privileges as mysql.tables_priv's and columns_priv's Column_priv write it
/// ("Select,Update").
fn column_privs(bits: u64) -> String {
    let names: Vec<String> = (privs::names_of(bits & privs::COLUMN_ALL).iter())
        .map(|n| table_priv_name(n))
        .collect();
    names.join(",")
}

/// A privilege as mysql.tables_priv's Table_priv set names it ("Create View", "Show view").
fn table_priv_name(n: &str) -> String {
    match n {
        "CREATE VIEW" => "Create View".into(),
        _ => {
            let lower = n.to_ascii_lowercase();
            let mut c = lower.chars();
            c.next().map_or(String::new(), |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        }
    }
}
