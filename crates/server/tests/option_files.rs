//! Option files and the command line as mysqld reads them (issue #5 item 1), as goldenscripts:
//! each case in `tests/option_files/*.test` writes option files into a temporary directory,
//! runs `innoxide ARGS --help --verbose`, and prints the values of the variables it names
//! (from the "Value (after reading options)" table), the warnings and errors the server logged,
//! and its exit status. `UPDATE_GOLDENFILES=1` rewrites the expected parts; review the diff.
//!
//! Case format:
//! ```text
//! === name
//! --- file my.cnf            (a file, relative to the case's directory; `$DIR` is replaced)
//! [mysqld]
//! port = 3307
//! --- args                   (one line of arguments, split at spaces; `$DIR` is replaced)
//! --defaults-file=$DIR/my.cnf --max-connections=10
//! --- show                   (variables whose values to print)
//! port max_connections
//! --- expect                 (the output, up to the next case)
//! ```
//! Cases marked `--- compare` also check that `innoxide --print-defaults` gives the same
//! arguments as MariaDB's `my_print_defaults` for groups mysqld, server and mysqld-8.0 (skipped
//! when my_print_defaults is not installed).
//!
//! Run: `cargo test -p innoxide-server --test option_files`.

use std::path::Path;
use std::process::Command;

#[derive(Default, Debug)]
struct Case {
    name: String,
    files: Vec<(String, String)>,
    args: String,
    show: Vec<String>,
    compare: bool,
    expect: String,
    /// Line range of the expect block in the script, for rewriting.
    expect_at: (usize, usize),
}

fn parse(script: &str) -> Vec<Case> {
    let lines: Vec<&str> = script.lines().collect();
    let mut cases: Vec<Case> = Vec::new();
    let mut section = String::new();
    for (n, l) in lines.iter().enumerate() {
        if let Some(name) = l.strip_prefix("=== ") {
            if let Some(c) = cases.last_mut() {
                if section == "expect" {
                    c.expect_at.1 = n;
                }
            }
            cases.push(Case {
                name: name.to_string(),
                ..Case::default()
            });
            section = String::new();
            continue;
        }
        let Some(c) = cases.last_mut() else { continue };
        if let Some(s) = l.strip_prefix("--- ") {
            if section == "expect" {
                c.expect_at.1 = n;
            }
            section = s.to_string();
            if let Some(f) = s.strip_prefix("file ") {
                c.files.push((f.to_string(), String::new()));
            } else if s == "compare" {
                c.compare = true;
            } else if s == "expect" {
                c.expect_at = (n + 1, lines.len());
            }
            continue;
        }
        match section.as_str() {
            s if s.starts_with("file ") => {
                let f = c.files.last_mut().expect("a file section");
                f.1.push_str(l);
                f.1.push('\n');
            }
            "args" => c.args = l.to_string(),
            "show" => c.show.extend(l.split_whitespace().map(str::to_string)),
            "expect" => {
                c.expect.push_str(l);
                c.expect.push('\n');
            }
            _ => {}
        }
    }
    // Trailing blank lines of each expect block are not part of it.
    for c in &mut cases {
        while c.expect.ends_with("\n\n") {
            c.expect.pop();
        }
        while c.expect_at.1 > c.expect_at.0 && lines[c.expect_at.1 - 1].trim().is_empty() {
            c.expect_at.1 -= 1;
        }
    }
    cases
}

/// Removes ANSI colour sequences.
fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn args_of(c: &Case, dir: &Path) -> Vec<String> {
    let d = dir.display().to_string();
    c.args
        .split_whitespace()
        .map(|a| a.replace("$DIR", &d))
        .collect()
}

fn write_files(c: &Case, dir: &Path) {
    let d = dir.display().to_string();
    for (name, text) in &c.files {
        let mode = name.split_once(" mode=");
        let (name, mode) = mode.map_or((name.as_str(), None), |(n, m)| (n, Some(m)));
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text.replace("$DIR", &d)).unwrap();
        if let Some(m) = mode {
            use std::os::unix::fs::PermissionsExt;
            let m = u32::from_str_radix(m, 8).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
        }
    }
}

/// Runs the case and renders what it shows.
fn run(c: &Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_files(c, dir.path());
    let mut args = args_of(c, dir.path());
    args.extend(["--help".to_string(), "--verbose".to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args(&args)
        .env("RUST_LOG", "warn")
        .env("HOME", dir.path())
        .env_remove("MYSQL_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let d = dir.path().display().to_string();
    let mut r = String::new();
    for name in &c.show {
        let key = name.replace('_', "-");
        let row = stdout
            .lines()
            .skip_while(|l| !l.starts_with("----"))
            .find(|l| l.split_whitespace().next() == Some(key.as_str()));
        let value = row.map_or("(not shown)".to_string(), |l| {
            l.get(41..).unwrap_or("").to_string()
        });
        r.push_str(&format!("{name} = {}\n", value.replace(&d, "$DIR")));
    }
    for l in String::from_utf8_lossy(&out.stderr).lines() {
        let l = plain(l);
        // The error log's format (errlog.rs): "date time id [Level] message".
        let level = if l.contains(" [Warning] ") {
            "warning"
        } else if l.contains(" [ERROR] ") {
            "error"
        } else {
            continue;
        };
        let msg = l.split_once("] ").map_or(l.as_str(), |(_, m)| m);
        r.push_str(&format!("{level}: {}\n", msg.replace(&d, "$DIR")));
    }
    r.push_str(&format!("exit {}\n", out.status.code().unwrap_or(-1)));
    r
}

/// `innoxide --print-defaults` against `my_print_defaults` on the same files.
fn compare(c: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    write_files(c, dir.path());
    let args = args_of(c, dir.path());
    let leading: Vec<&String> = args
        .iter()
        .take_while(|a| a.starts_with("--defaults") || *a == "--no-defaults")
        .collect();
    let ours = Command::new(env!("CARGO_BIN_EXE_innoxide"))
        .args(&leading)
        .arg("--print-defaults")
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let Ok(theirs) = Command::new("my_print_defaults")
        .args(&leading)
        .args(["mysqld", "server", "mysqld-8.0"])
        .env("HOME", dir.path())
        .output()
    else {
        eprintln!(
            "my_print_defaults is not installed: {} not compared",
            c.name
        );
        return Ok(());
    };
    let ours_text = String::from_utf8_lossy(&ours.stdout);
    let ours_args = ours_text
        .lines()
        .nth(1)
        .unwrap_or("")
        .trim_end()
        .to_string();
    let theirs_args = String::from_utf8_lossy(&theirs.stdout)
        .lines()
        .collect::<Vec<_>>()
        .join(" ");
    if ours.status.success() != theirs.status.success() || ours_args != theirs_args {
        return Err(format!(
            "{}: innoxide --print-defaults ({}): {ours_args:?}\nmy_print_defaults ({}): {theirs_args:?}\n{}",
            c.name,
            ours.status,
            theirs.status,
            String::from_utf8_lossy(&theirs.stderr)
        ));
    }
    Ok(())
}

#[test]
fn option_files_goldenscripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/option_files");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let update = std::env::var_os("UPDATE_GOLDENFILES").is_some();
    let mut failures = Vec::new();
    let mut count = 0;
    for p in paths {
        let script = std::fs::read_to_string(&p).unwrap();
        let cases = parse(&script);
        let mut lines: Vec<String> = script.lines().map(str::to_string).collect();
        // Rewrite from the end so earlier line numbers stay valid.
        for c in cases.iter().rev() {
            count += 1;
            let got = run(c);
            if c.compare {
                if let Err(e) = compare(c) {
                    failures.push(e);
                }
            }
            if got != c.expect {
                if update {
                    let new: Vec<String> = got.lines().map(str::to_string).collect();
                    lines.splice(c.expect_at.0..c.expect_at.1, new);
                } else {
                    failures.push(format!(
                        "{}: {}\n--- expected\n{}--- got\n{}",
                        p.display(),
                        c.name,
                        c.expect,
                        got
                    ));
                }
            }
        }
        if update {
            std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{count} option-file cases passed");
}
