//! Option files (`my.cnf`), read the way MySQL 8.0's mysys `my_load_defaults` reads them: the
//! result is the list of `--name[=value]` arguments the files give to the groups asked for, in
//! file order, which the caller puts before the command line's.
//!
//! Rules (each one a case in crates/server/tests/option_files/):
//! - A line is blank, a comment (`#` or `;` first), `[group]`, `!include PATH`,
//!   `!includedir DIR`, or `name[=value]`. Group names match without regard to case.
//! - `#` outside quotes ends the line (an end comment); `;` is a comment only at the start.
//! - Around the name and the value, spaces are dropped; one pair of matching quotes around the
//!   whole value is removed; inside the value `\n \t \r \b \s \" \' \\` are escapes and any
//!   other backslash stays as written.
//! - An option before any group, a `[` without `]`, an `!include` without a path, a required file
//!   that cannot be opened and an `!includedir` that cannot be listed are fatal errors with
//!   mysqld's messages; an `!include` of a missing file is skipped, as in MySQL.
//! - `!includedir` reads the directory's `*.cnf` files, sorted by name; includes nest at most
//!   10 deep (deeper ones are skipped with a warning).
//! - A world-writable file is ignored with a warning (anyone could have written it).
//!
//! INVARIANTS
//! - F1: reading never panics and never stops at the first problem silently: every line is
//!   either used, skipped by a rule above, or the cause of a returned error.
//! - F2: the arguments come out in the order mysqld would see them (file order, includes in
//!   place), so a later setting of the same option wins.

use std::path::{Path, PathBuf};

/// Includes nest at most this deep (mysys `max_recursion_level`).
const MAX_DEPTH: usize = 10;

/// One argument taken from an option file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileArg {
    /// `--name` or `--name=value`, as my_print_defaults prints it.
    pub text: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Its line number (from 1).
    pub line: usize,
}

/// The arguments of the groups asked for, and the warnings met on the way.
#[derive(Debug, Default)]
pub struct Collected {
    pub args: Vec<FileArg>,
    pub warnings: Vec<String>,
}

/// Reads option files for a set of groups.
pub struct Reader<'a> {
    groups: &'a [String],
    pub out: Collected,
}

/// Drops a `#` end comment that is outside quotes (mysys `remove_end_comment`).
fn remove_end_comment(s: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escape = false;
    for (i, c) in s.char_indices() {
        if (c == '\'' || c == '"') && !escape {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && c == '#' {
            return &s[..i];
        }
        escape = quote.is_some() && c == '\\' && !escape;
    }
    s
}

/// The value as mysqld receives it: one pair of matching outer quotes removed, escapes
/// replaced.
fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    let inner = if b.len() > 1 && (b[0] == b'"' || b[0] == b'\'') && b[0] == b[b.len() - 1] {
        &v[1..v.len() - 1]
    } else {
        v
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        // A backslash at the very end stays.
        let Some(&n) = chars.peek() else {
            out.push('\\');
            break;
        };
        chars.next();
        match n {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            's' => out.push(' '),
            '"' | '\'' | '\\' => out.push(n),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// `name[=value]` (comment already removed) as `--name[=value]`.
fn option_text(s: &str) -> String {
    match s.split_once('=') {
        None => format!("--{}", s.trim()),
        Some((name, value)) => format!("--{}={}", name.trim(), unquote(value.trim())),
    }
}

/// True if others than the owner's group may write the file (mysys `is_world_writable`
/// checks "others"; so do we).
fn world_writable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
}

impl<'a> Reader<'a> {
    /// A reader for `groups` (compared without regard to case).
    pub fn new(groups: &'a [String]) -> Self {
        Reader {
            groups,
            out: Collected::default(),
        }
    }

    fn wanted(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g.eq_ignore_ascii_case(group))
    }

    /// Reads one file. `Ok(false)` if it does not exist or cannot be opened (the caller
    /// decides whether that is an error: it is for --defaults-file); errors are fatal.
    pub fn read(&mut self, path: &Path, depth: usize) -> Result<bool, String> {
        if path.is_dir() {
            return Ok(false);
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(_) => return Ok(false),
        };
        if world_writable(path) {
            self.out.warnings.push(format!(
                "World-writable config file '{}' is ignored.",
                path.display()
            ));
            return Ok(true);
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut in_group: Option<bool> = None;
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let s = raw.trim_start();
            if s.is_empty() || s.starts_with('#') || s.starts_with(';') {
                continue;
            }
            if let Some(rest) = s.strip_prefix('!') {
                self.directive(path, line, rest, depth)?;
                continue;
            }
            if let Some(rest) = s.strip_prefix('[') {
                let Some(end) = rest.find(']') else {
                    return Err(format!(
                        "Wrong group definition in config file: {} at line {line}",
                        path.display()
                    ));
                };
                in_group = Some(self.wanted(rest[..end].trim()));
                continue;
            }
            match in_group {
                None => {
                    return Err(format!(
                        "Found option without preceding group in config file: {} at line: {line}",
                        path.display()
                    ))
                }
                Some(false) => continue,
                Some(true) => {}
            }
            let body = remove_end_comment(s).trim_end();
            if body.is_empty() {
                continue;
            }
            self.out.args.push(FileArg {
                text: option_text(body),
                file: path.to_path_buf(),
                line,
            });
        }
        Ok(true)
    }

    /// `!include PATH` and `!includedir DIR` (`rest` follows the `!`); other directives are
    /// skipped, as mysys does.
    fn directive(
        &mut self,
        path: &Path,
        line: usize,
        rest: &str,
        depth: usize,
    ) -> Result<(), String> {
        let rest = rest.trim_start();
        let (dir, arg) = if let Some(a) = rest.strip_prefix("includedir") {
            (true, a)
        } else if let Some(a) = rest.strip_prefix("include") {
            (false, a)
        } else {
            return Ok(());
        };
        if !arg.starts_with(char::is_whitespace) && !arg.is_empty() {
            return Ok(());
        }
        let target = arg.trim();
        if target.is_empty() {
            return Err(format!(
                "Wrong '!include' directive in config file: {} at line {line}",
                path.display()
            ));
        }
        if depth >= MAX_DEPTH {
            self.out.warnings.push(format!(
                "skipping '!{}' directive as maximum include recursion level was reached in file {} at line {line}",
                rest.trim_end(),
                path.display()
            ));
            return Ok(());
        }
        if !dir {
            // A missing included file is skipped, as in MySQL.
            self.read(Path::new(target), depth + 1)?;
            return Ok(());
        }
        let entries = std::fs::read_dir(target).map_err(|e| {
            let text = e.to_string();
            let what = text.split(" (os error").next().unwrap_or(&text);
            format!(
                "Can't read dir of '{target}' (Errcode: {} \"{what}\")",
                e.raw_os_error().unwrap_or(0)
            )
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cnf") && !p.is_dir())
            .collect();
        files.sort();
        for f in files {
            self.read(&f, depth + 1)?;
        }
        Ok(())
    }
}

/// The files mysqld 8.0 reads when no --defaults-file is given, in order; `None` marks where
/// --defaults-extra-file goes. `mysql_home` is $MYSQL_HOME, `home` is $HOME.
pub fn search_path(mysql_home: Option<&Path>, home: Option<&Path>) -> Vec<Option<PathBuf>> {
    let mut v = vec![
        Some(PathBuf::from("/etc/my.cnf")),
        Some(PathBuf::from("/etc/mysql/my.cnf")),
    ];
    if let Some(m) = mysql_home {
        v.push(Some(m.join("my.cnf")));
    }
    v.push(None);
    if let Some(h) = home {
        v.push(Some(h.join(".my.cnf")));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_unquote_and_unescape_like_mysys() {
        assert_eq!(option_text("port = 3307 "), "--port=3307");
        assert_eq!(option_text("a = \"64M\""), "--a=64M");
        assert_eq!(option_text("a = 'x y'"), "--a=x y");
        assert_eq!(
            option_text(r#"a = a\tb\sc\\d\qe\"f"#),
            "--a=a\tb c\\d\\qe\"f"
        );
        assert_eq!(option_text("a = ab\"cd\"ef"), "--a=ab\"cd\"ef");
        assert_eq!(option_text("a = \""), "--a=\"");
        assert_eq!(option_text("a ="), "--a=");
        assert_eq!(option_text("  flag  "), "--flag");
        assert_eq!(remove_end_comment("a=1 # c"), "a=1 ");
        assert_eq!(remove_end_comment("a='x#y' # c"), "a='x#y' ");
        assert_eq!(remove_end_comment(r##"a="x\"#y""##), r##"a="x\"#y""##);
        assert_eq!(unquote("x\\"), "x\\");
    }

    #[test]
    fn search_path_is_mysql_80s() {
        let v = search_path(Some(Path::new("/m")), Some(Path::new("/h")));
        let names: Vec<String> = v
            .iter()
            .map(|p| {
                p.as_ref()
                    .map_or("EXTRA".into(), |p| p.display().to_string())
            })
            .collect();
        assert_eq!(
            names,
            [
                "/etc/my.cnf",
                "/etc/mysql/my.cnf",
                "/m/my.cnf",
                "EXTRA",
                "/h/.my.cnf"
            ]
        );
    }
}
