//! Start-up options, read as mysqld 8.0 reads them: option files first (see [`files`]), then
//! the command line, each `--name[=value]` applied in order so the last setting wins.
//!
//! An option is a system variable of [`VARS`] (its [`option_kind`] says whether and how it may
//! be set at start), one of innoxide's own few ([`EXTRAS`]: --log-level, --help...), or one of
//! mysqld's that innoxide does not implement ([`IGNORED`]: a warning, nothing else). Names take
//! dashes or underscores alike, and the prefixes `loose-` (an unknown option is a warning, not an
//! error), `skip-`/`disable-` (value 0, or 1 for `=0`), `enable-` (value 1). Numbers take
//! K/M/G/T/P/E suffixes, booleans ON/OFF/TRUE/FALSE/1/0.
//!
//! INVARIANTS
//! - O1: one source of truth: [`Options::get`] holds the stored form (vars.rs V3) of each
//!   variable an option set; the engine configuration ([`Options::engine_config`]) and the
//!   registry's global values (`vars::Registry::new`) are both built from it, so SHOW
//!   VARIABLES shows what the options asked for, or the value in force when innoxide adjusted it.
//! - O2: a value is never silently changed: out of range is clamped with mysqld's warning
//!   ("option 'x': unsigned value N adjusted to M"); a value innoxide cannot honour for a
//!   read-only variable ([`OptKind::Fixed`]) is refused with a warning and the value in force
//!   stays; anything that cannot be read at all is an error that stops startup.
//! - O3: parsing never panics on user input; messages are mysqld's texts.

pub mod files;

use std::path::{Path, PathBuf};

use innoxide_engine::EngineConfig;

use crate::vars::{self, idx, Kind, OptKind, VarValue, VARS};

/// Options innoxide has that are not system variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extra {
    LogLevel,
    Help,
    Verbose,
    Version,
}

/// (name, what, takes a value).
const EXTRAS: &[(&str, Extra, &str)] = &[
    (
        "help",
        Extra::Help,
        "Display this help and exit (with --verbose: every option).",
    ),
    (
        "log_level",
        Extra::LogLevel,
        "Log level: error, warn, info, debug, trace (or a RUST_LOG filter).",
    ),
    (
        "verbose",
        Extra::Verbose,
        "With --help: list every option, its default and its value.",
    ),
    (
        "version",
        Extra::Version,
        "Output version information and exit.",
    ),
];

/// mysqld options whose function innoxide does not have: accepted with a warning so a usual
/// my.cnf starts, and never shown as variables.
const IGNORED: &[&str] = &[
    "binlog_expire_logs_seconds",
    "expire_logs_days",
    "external_locking",
    "key_buffer_size",
    "lc_messages_dir",
    "log_error",
    "max_binlog_size",
    "myisam_recover_options",
    "pid_file",
    "plugin_load_add",
    "secure_file_priv",
    "skip_external_locking",
    "skip_name_resolve",
    "symbolic_links",
    "thread_stack",
    "tmpdir",
    "user",
];

/// innoxide's own defaults for variables whose value is decided at start.
const DEFAULT_DATADIR: &str = "./data";
const DEFAULT_BIND_ADDRESS: &str = "127.0.0.1";
const DEFAULT_PORT: u64 = 3306;
const DEFAULT_SOCKET: &str = "/tmp/innoxide.sock";

const DATADIR: usize = idx("datadir");
const BIND_ADDRESS: usize = idx("bind_address");
const PORT: usize = idx("port");
const SOCKET: usize = idx("socket");
const TMPDIR: usize = idx("tmpdir");
const SSL_CERT: usize = idx("ssl_cert");
const SSL_KEY: usize = idx("ssl_key");
const MAX_ALLOWED_PACKET: usize = idx("max_allowed_packet");
const PAGE_SIZE: usize = idx("innodb_page_size");
const BUFFER_POOL_SIZE: usize = idx("innodb_buffer_pool_size");
const BUFFER_POOL_INSTANCES: usize = idx("innodb_buffer_pool_instances");
const BUFFER_POOL_CHUNK_SIZE: usize = idx("innodb_buffer_pool_chunk_size");
const PAGE_CLEANERS: usize = idx("innodb_page_cleaners");
const LOG_FILE_SIZE: usize = idx("innodb_log_file_size");
const LOG_FILES_IN_GROUP: usize = idx("innodb_log_files_in_group");
const LOG_BUFFER_SIZE: usize = idx("innodb_log_buffer_size");
const DOUBLEWRITE: usize = idx("innodb_doublewrite");
const FLUSH_METHOD: usize = idx("innodb_flush_method");
const OPEN_FILES: usize = idx("innodb_open_files");
const TABLE_OPEN_CACHE: usize = idx("table_open_cache");
const PURGE_THREADS: usize = idx("innodb_purge_threads");
const READ_IO_THREADS: usize = idx("innodb_read_io_threads");
const WRITE_IO_THREADS: usize = idx("innodb_write_io_threads");
const AHI_PARTS: usize = idx("innodb_adaptive_hash_index_parts");
const LOAD_AT_STARTUP: usize = idx("innodb_buffer_pool_load_at_startup");
const IO_CAPACITY: usize = idx("innodb_io_capacity");
const IO_CAPACITY_MAX: usize = idx("innodb_io_capacity_max");

/// What the command line asks the binary to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Run,
    Help {
        verbose: bool,
    },
    Version,
    /// --print-defaults: the arguments the server would start with.
    PrintDefaults,
}

/// The options in force after reading option files and the command line.
#[derive(Clone, Debug)]
pub struct Options {
    /// Per row of [`VARS`]: the stored value an option set (O1).
    values: Vec<Option<VarValue>>,
    pub action: Action,
    /// --log-level.
    pub log_level: String,
    /// Effective values of the variables main.rs and the listeners read directly.
    pub datadir: PathBuf,
    pub bind_address: String,
    pub port: u16,
    pub socket: String,
    /// Where sorts write their runs (tmpdir): $TMPDIR or /tmp, as mysqld.
    pub tmpdir: PathBuf,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    /// The arguments in the order applied: option files' then the command line's.
    pub args: Vec<String>,
    /// Warnings for the error log (clamped values, loose unknown options...).
    pub warnings: Vec<String>,
}

/// Startup cannot go on: every message (warnings first), then "Aborting".
#[derive(Debug)]
pub struct Fatal {
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
}

/// Where to look for option files, and the groups to read (the environment, for tests).
#[derive(Clone, Debug)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub mysql_home: Option<PathBuf>,
}

impl Env {
    pub fn from_process() -> Env {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            mysql_home: var("MYSQL_HOME"),
        }
    }
}

/// The option groups mysqld 8.0 reads, with an optional --defaults-group-suffix.
fn groups(suffix: Option<&str>) -> Vec<String> {
    let mut g: Vec<String> = ["mysqld", "server", "mysqld-8.0"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    if let Some(s) = suffix {
        let more: Vec<String> = g.iter().map(|n| format!("{n}{s}")).collect();
        g.extend(more);
    }
    g
}

/// `--name=value` split, with the value if any.
fn split_arg(a: &str) -> (&str, Option<&str>) {
    match a.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (a, None),
    }
}

/// A name as the tables spell it: dashes are underscores, lower case.
fn canonical(name: &str) -> String {
    name.replace('-', "_").to_ascii_lowercase()
}

enum Target {
    Var(usize),
    Extra(Extra),
    Ignored(&'static str),
}

fn find(name: &str) -> Option<Target> {
    let n = canonical(name);
    if let Some(i) = VARS
        .iter()
        .position(|d| d.name == n || vars::option_alias(&n) == Some(d.name))
    {
        if vars::option_kind(i) != OptKind::None {
            return Some(Target::Var(i));
        }
    }
    if let Some((_, e, _)) = EXTRAS.iter().find(|(x, _, _)| *x == n) {
        return Some(Target::Extra(*e));
    }
    IGNORED
        .iter()
        .find(|x| **x == n)
        .map(|x| Target::Ignored(x))
}

/// Reads a number as my_getopt does: digits, then an optional K/M/G/T/P/E suffix.
fn parse_unsigned(name: &str, v: &str) -> Result<u128, String> {
    let t = v.trim();
    if t.starts_with('-') {
        return Err(format!("Incorrect unsigned value: '{v}' for {name}"));
    }
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u128 = if digits_end == 0 {
        0
    } else {
        t[..digits_end]
            .parse()
            .map_err(|_| format!("Incorrect integer value: '{v}'"))?
    };
    let mult: u128 = match t[digits_end..].chars().next() {
        None => 1,
        Some(c) => match c.to_ascii_uppercase() {
            'K' => 1 << 10,
            'M' => 1 << 20,
            'G' => 1 << 30,
            'T' => 1 << 40,
            'P' => 1 << 50,
            'E' => 1 << 60,
            _ => {
                return Err(format!(
                    "Unknown suffix '{c}' used for variable '{name}' (value '{v}'). \
                     Legal suffix characters are: K, M, G, T, P, E"
                ))
            }
        },
    };
    if digits_end == 0 {
        return Err(format!(
            "Unknown suffix '{}' used for variable '{name}' (value '{v}'). \
             Legal suffix characters are: K, M, G, T, P, E",
            t.chars().next().unwrap_or(' ')
        ));
    }
    n.checked_mul(mult)
        .filter(|x| *x <= u128::from(u64::MAX))
        .ok_or_else(|| format!("Incorrect integer value: '{v}'"))
}

/// my_getopt's booleans.
fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Some(true),
        "off" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// A double as `value %g` prints it.
fn g(x: f64) -> String {
    let s = format!("{x}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// The value of an option for variable `i` in its stored form, with warnings; an error stops
/// startup.
fn parse_value(i: usize, v: &str, warnings: &mut Vec<String>) -> Result<VarValue, String> {
    let d = &VARS[i];
    let name = d.name;
    let setting = || format!("Error while setting value '{v}' to '{name}'");
    Ok(match d.kind {
        Kind::Bool => VarValue::Bool(parse_bool(v).unwrap_or_else(|| {
            warnings.push(format!(
                "option '{name}': boolean value '{v}' wasn't recognized. Set to OFF."
            ));
            false
        })),
        Kind::UInt { min, max } => {
            let n = parse_unsigned(name, v).map_err(|e| format!("{e}\n{}", setting()))?;
            let mut c = n.clamp(u128::from(min), u128::from(max));
            if c != n {
                warnings.push(format!(
                    "option '{name}': unsigned value {n} adjusted to {c}"
                ));
            }
            if i == MAX_ALLOWED_PACKET {
                // Block size 1024, rounded down without a warning, as mysqld.
                c -= c % 1024;
            }
            VarValue::UInt(u64::try_from(c).unwrap_or(max))
        }
        Kind::Double { min, max } => {
            let x: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| {
                    format!("Invalid decimal value for option '{name}'\n{}", setting())
                })?;
            let c = x.clamp(min, max);
            if c != x {
                warnings.push(format!(
                    "option '{name}': value {} adjusted to {}",
                    g(x),
                    g(c)
                ));
            }
            VarValue::Double(c)
        }
        Kind::Enum(names) => {
            let t = v.trim();
            let pos = names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(t))
                .or_else(|| t.parse::<usize>().ok().filter(|n| *n < names.len()));
            VarValue::UInt(pos.ok_or_else(setting)? as u64)
        }
        Kind::Set | Kind::Str(_) => {
            let (val, _) = vars::convert_option(i, v).map_err(|_| setting())?;
            val
        }
    })
}

/// The effective default of a variable an option may set: the compiled default, or for
/// values decided at start, innoxide's default (`None` if the registry computes it).
pub fn startup_default(i: usize) -> Option<VarValue> {
    let e = EngineConfig::new(DEFAULT_DATADIR);
    let u = |n: u64| Some(VarValue::UInt(n));
    match i {
        DATADIR => Some(VarValue::Str(DEFAULT_DATADIR.into())),
        BIND_ADDRESS => Some(VarValue::Str(DEFAULT_BIND_ADDRESS.into())),
        PORT => u(DEFAULT_PORT),
        SOCKET => Some(VarValue::Str(DEFAULT_SOCKET.into())),
        TMPDIR => Some(VarValue::Str(
            std::env::temp_dir().to_string_lossy().into_owned(),
        )),
        SSL_CERT | SSL_KEY => Some(VarValue::Str(String::new())),
        PAGE_SIZE => u(e.page_size as u64),
        BUFFER_POOL_SIZE => u(e.buffer_pool_size),
        BUFFER_POOL_INSTANCES => u(e.buffer_pool_instances as u64),
        BUFFER_POOL_CHUNK_SIZE => u(e.buffer_pool_chunk_size),
        PAGE_CLEANERS => u(4),
        LOG_FILE_SIZE => u(e.log_file_size),
        LOG_FILES_IN_GROUP => u(e.log_files_in_group.into()),
        LOG_BUFFER_SIZE => u(e.log_buffer_size as u64),
        DOUBLEWRITE => Some(VarValue::Bool(e.doublewrite)),
        FLUSH_METHOD => u(vars::flush_method_index(e.flush_method)),
        OPEN_FILES => u(e.open_files as u64),
        PURGE_THREADS => u(e.purge_threads as u64),
        READ_IO_THREADS => u(e.read_io_threads as u64),
        WRITE_IO_THREADS => u(e.write_io_threads as u64),
        AHI_PARTS => u(e.adaptive_hash_index_parts as u64),
        LOAD_AT_STARTUP => Some(VarValue::Bool(e.buffer_pool_load_at_startup)),
        _ => vars::compiled_default_of(i),
    }
}

/// The command line's leading --no-defaults, --defaults-file, --defaults-extra-file,
/// --defaults-group-suffix (mysys get_defaults_options), and --print-defaults after them.
#[derive(Default)]
struct Leading {
    no_defaults: bool,
    defaults_file: Option<PathBuf>,
    extra_file: Option<PathBuf>,
    group_suffix: Option<String>,
    print: bool,
    /// How many arguments they took.
    used: usize,
}

fn leading(args: &[String]) -> Leading {
    let mut l = Leading::default();
    for a in args {
        if a == "--no-defaults" && l.used == 0 {
            l.no_defaults = true;
        } else if let (None, Some(p)) = (&l.defaults_file, a.strip_prefix("--defaults-file=")) {
            l.defaults_file = Some(PathBuf::from(p));
        } else if let (None, Some(p)) = (&l.extra_file, a.strip_prefix("--defaults-extra-file=")) {
            l.extra_file = Some(PathBuf::from(p));
        } else if let (None, Some(s)) =
            (&l.group_suffix, a.strip_prefix("--defaults-group-suffix="))
        {
            l.group_suffix = Some(s.to_string());
        } else {
            break;
        }
        l.used += 1;
    }
    if args.get(l.used).is_some_and(|a| a == "--print-defaults") {
        l.print = true;
        l.used += 1;
    }
    l
}

/// Reads the option files the leading options select; their arguments in order.
fn read_files(l: &Leading, env: &Env, warnings: &mut Vec<String>) -> Result<Vec<String>, String> {
    if l.no_defaults {
        return Ok(Vec::new());
    }
    let groups = groups(l.group_suffix.as_deref());
    let mut r = files::Reader::new(&groups);
    let required = |r: &mut files::Reader, p: &Path| -> Result<(), String> {
        if r.read(p, 0)? {
            Ok(())
        } else {
            Err(format!(
                "Could not open required defaults file: {}",
                p.display()
            ))
        }
    };
    let result = (|| {
        if let Some(f) = &l.defaults_file {
            return required(&mut r, f);
        }
        for p in files::search_path(env.mysql_home.as_deref(), env.home.as_deref()) {
            match (p, &l.extra_file) {
                (Some(p), _) => {
                    r.read(&p, 0)?;
                }
                (None, Some(extra)) => required(&mut r, extra)?,
                (None, None) => {}
            }
        }
        Ok(())
    })();
    warnings.append(&mut r.out.warnings);
    result.map_err(|e| format!("{e}\nFatal error in defaults handling. Program aborted"))?;
    Ok(r.out.args.into_iter().map(|a| a.text).collect())
}

impl Options {
    /// Reads the option files and `args` (the command line without the program name).
    pub fn load(args: &[String], env: &Env) -> Result<Options, Fatal> {
        let mut warnings = Vec::new();
        let l = leading(args);
        let from_files = read_files(&l, env, &mut warnings).map_err(|e| Fatal {
            warnings: warnings.clone(),
            errors: vec![e],
        })?;
        let n_files = from_files.len();
        let mut all = from_files;
        all.extend(args[l.used..].iter().cloned());
        let mut o = Options {
            values: vec![None; VARS.len()],
            action: Action::Run,
            log_level: "info".into(),
            datadir: PathBuf::new(),
            bind_address: String::new(),
            port: 0,
            socket: String::new(),
            tmpdir: PathBuf::new(),
            ssl_cert: None,
            ssl_key: None,
            args: all.clone(),
            warnings,
        };
        if l.print {
            // mysqld prints the arguments before reading any of them.
            o.action = Action::PrintDefaults;
            return Ok(o);
        }
        let (mut help, mut verbose, mut version) = (false, false, false);
        let mut errors = Vec::new();
        let mut k = 0;
        while k < all.len() {
            let from_file = k < n_files;
            let next = if from_file { None } else { all.get(k + 1) };
            match o.apply(&all[k], next, &mut help, &mut verbose, &mut version) {
                Ok(took_next) => k += 1 + usize::from(took_next),
                Err(e) => {
                    errors.push(e);
                    break;
                }
            }
        }
        if !errors.is_empty() {
            return Err(Fatal {
                warnings: o.warnings,
                errors,
            });
        }
        o.action = if help {
            Action::Help { verbose }
        } else if version {
            Action::Version
        } else {
            Action::Run
        };
        o.settle();
        Ok(o)
    }

    /// The command line `args` alone, as with --no-defaults (tests).
    #[cfg(test)]
    pub fn from_args(args: &[&str]) -> Result<Options, Fatal> {
        let mut v = vec!["--no-defaults".to_string()];
        v.extend(args.iter().map(|s| (*s).to_string()));
        Options::load(
            &v,
            &Env {
                home: None,
                mysql_home: None,
            },
        )
    }

    /// Applies one argument; `Ok(true)` if it took `next` as its value.
    fn apply(
        &mut self,
        arg: &str,
        next: Option<&String>,
        help: &mut bool,
        verbose: &mut bool,
        version: &mut bool,
    ) -> Result<bool, String> {
        // Short options: -? -v -V -h DIR -P PORT -b DIR -u USER.
        if let Some(short) = arg.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            let (flag, rest) = short.split_at(short.chars().next().map_or(0, char::len_utf8));
            let long = match flag {
                "?" => "help",
                "v" => "verbose",
                "V" => "version",
                "h" => "datadir",
                "P" => "port",
                "b" => "basedir",
                "u" => "user",
                _ => return Err(format!("unknown option '-{short}'")),
            };
            let (value, took) = match (rest, long) {
                ("", "help" | "verbose" | "version") => (None, false),
                ("", _) => (next.map(String::as_str), next.is_some()),
                (r, _) => (Some(r), false),
            };
            let text = value.map_or(format!("--{long}"), |v| format!("--{long}={v}"));
            self.apply(&text, None, help, verbose, version)?;
            return Ok(took);
        }
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!("Too many arguments (first extra is '{arg}')."));
        };
        let (raw_name, mut value) = split_arg(body);
        let (loose, name) = match raw_name
            .strip_prefix("loose-")
            .or(raw_name.strip_prefix("loose_"))
        {
            Some(n) => (true, n),
            None => (false, raw_name),
        };
        let mut target = find(name);
        let mut prefixed = String::new();
        if target.is_none() {
            // skip-/disable- set 0 (1 for =0), enable- sets 1 (0 for =0), as my_getopt.
            for (p, on) in [("skip", false), ("disable", false), ("enable", true)] {
                let Some(rest) = name
                    .strip_prefix(p)
                    .and_then(|r| r.strip_prefix('-').or(r.strip_prefix('_')))
                else {
                    continue;
                };
                if let Some(t) = find(rest) {
                    let zero = value == Some("0");
                    prefixed = if on != zero { "1" } else { "0" }.to_string();
                    target = Some(t);
                    break;
                }
            }
        }
        if !prefixed.is_empty() {
            value = Some(prefixed.as_str());
        }
        let Some(target) = target else {
            let msg = if value.is_some() {
                format!("unknown variable '{body}'")
            } else {
                format!("unknown option '--{body}'")
            };
            if loose {
                self.warnings.push(msg);
                return Ok(false);
            }
            return Err(msg);
        };
        match target {
            Target::Extra(e) => {
                match e {
                    Extra::Help => *help = true,
                    Extra::Verbose => *verbose = true,
                    Extra::Version => *version = true,
                    Extra::LogLevel => {
                        let (v, took) = self.value_or_next(name, value, next)?;
                        self.log_level = v;
                        return Ok(took);
                    }
                }
                Ok(false)
            }
            Target::Ignored(n) => {
                self.warnings.push(format!(
                    "option '{n}' is not implemented by innoxide and is ignored"
                ));
                // A value given as the next argument belongs to it.
                let takes_next = value.is_none()
                    && !n.starts_with("skip")
                    && next.is_some_and(|a| !a.starts_with('-'));
                Ok(takes_next)
            }
            Target::Var(i) => {
                let (v, took) = if VARS[i].kind == Kind::Bool {
                    (value.unwrap_or("1").to_string(), false)
                } else {
                    self.value_or_next(name, value, next)?
                };
                let val = parse_value(i, &v, &mut self.warnings)?;
                self.store(i, val, &v)?;
                Ok(took)
            }
        }
    }

    /// The option's value: after `=`, or the next command-line argument.
    fn value_or_next(
        &self,
        name: &str,
        value: Option<&str>,
        next: Option<&String>,
    ) -> Result<(String, bool), String> {
        match (value, next) {
            (Some(v), _) => Ok((v.to_string(), false)),
            (None, Some(n)) => Ok((n.clone(), true)),
            (None, None) => Err(format!("option '--{name}' requires an argument")),
        }
    }

    /// Stores a parsed value (O2: a read-only variable keeps the value in force).
    fn store(&mut self, i: usize, val: VarValue, text: &str) -> Result<(), String> {
        let d = &VARS[i];
        if vars::option_kind(i) == OptKind::Fixed {
            let in_force = vars::compiled_default_of(i).unwrap_or(VarValue::Null);
            let same = match (&val, &in_force) {
                (VarValue::Str(a), VarValue::Str(b)) => a.eq_ignore_ascii_case(b),
                (a, b) => a == b,
            };
            if !same {
                self.warnings.push(format!(
                    "option '{}': innoxide does not implement '{text}'; the value in force is '{}'",
                    d.name,
                    vars::show_value(i, in_force)
                ));
            }
            return Ok(());
        }
        vars::check_supported(i, &val)?;
        if let Some((p, pv)) = vars::partner_of(i, &val) {
            self.values[p] = Some(pv);
        }
        self.values[i] = Some(val);
        Ok(())
    }

    /// Fills the plain fields from the values (O1).
    fn settle(&mut self) {
        // innodb_io_capacity_max defaults to twice innodb_io_capacity (at least 2000); one set
        // below innodb_io_capacity lowers it, with InnoDB's warning.
        let io = self.u64_of(IO_CAPACITY);
        match self.get(IO_CAPACITY_MAX) {
            None => {
                self.values[IO_CAPACITY_MAX] = Some(VarValue::UInt(io.saturating_mul(2).max(2000)))
            }
            Some(VarValue::UInt(max)) if *max < io => {
                let max = *max;
                self.warnings.push(format!(
                    "innodb_io_capacity cannot be set higher than innodb_io_capacity_max. \
                     Setting innodb_io_capacity to {max}"
                ));
                self.values[IO_CAPACITY] = Some(VarValue::UInt(max));
            }
            Some(_) => {}
        }
        // thread_cache_size and table_definition_cache not set: sized from max_connections
        // and table_open_cache, as mysqld sizes them.
        for i in vars::AUTOSIZED {
            if self.get(i).is_none() {
                let v = vars::autosized_default(i, |j| self.u64_of(j));
                self.values[i] = v;
            }
        }
        // At most one page cleaner per buffer pool instance, as InnoDB adjusts it.
        let (pc, inst) = (
            self.u64_of(PAGE_CLEANERS),
            self.u64_of(BUFFER_POOL_INSTANCES),
        );
        if pc > inst {
            self.values[PAGE_CLEANERS] = Some(VarValue::UInt(inst));
        }
        let s = |o: &Options, i| match o.effective(i) {
            Some(VarValue::Str(s)) => s,
            _ => String::new(),
        };
        self.datadir = PathBuf::from(s(self, DATADIR));
        self.bind_address = s(self, BIND_ADDRESS);
        self.socket = s(self, SOCKET);
        self.tmpdir = PathBuf::from(s(self, TMPDIR));
        self.port = match self.effective(PORT) {
            Some(VarValue::UInt(p)) => u16::try_from(p).unwrap_or(u16::MAX),
            _ => 0,
        };
        let path = |v: String| (!v.is_empty()).then(|| PathBuf::from(v));
        self.ssl_cert = path(s(self, SSL_CERT));
        self.ssl_key = path(s(self, SSL_KEY));
    }

    /// The value an option set for variable `i` (stored form), if any.
    pub fn get(&self, i: usize) -> Option<&VarValue> {
        self.values.get(i).and_then(Option::as_ref)
    }

    /// The value an option set, else the default (stored form).
    pub fn effective(&self, i: usize) -> Option<VarValue> {
        self.get(i).cloned().or_else(|| startup_default(i))
    }

    fn u64_of(&self, i: usize) -> u64 {
        match self.effective(i) {
            Some(VarValue::UInt(n)) => n,
            Some(VarValue::Bool(b)) => u64::from(b),
            _ => 0,
        }
    }

    fn usize_of(&self, i: usize) -> Result<usize, String> {
        usize::try_from(self.u64_of(i)).map_err(|_| format!("{} is too large", VARS[i].name))
    }

    /// The engine configuration the options ask for (O1), checked as the engine checks it.
    pub fn engine_config(&self) -> Result<EngineConfig, String> {
        let mut c = EngineConfig::new(&self.datadir);
        c.page_size = self.usize_of(PAGE_SIZE)?;
        c.buffer_pool_size = self.u64_of(BUFFER_POOL_SIZE);
        c.buffer_pool_instances = self.usize_of(BUFFER_POOL_INSTANCES)?;
        c.buffer_pool_chunk_size = self.u64_of(BUFFER_POOL_CHUNK_SIZE);
        c.page_cleaners = self.usize_of(PAGE_CLEANERS)?;
        c.log_file_size = self.u64_of(LOG_FILE_SIZE);
        c.log_files_in_group = u32::try_from(self.u64_of(LOG_FILES_IN_GROUP))
            .map_err(|_| "innodb_log_files_in_group is too large")?;
        c.log_buffer_size = self.usize_of(LOG_BUFFER_SIZE)?;
        c.doublewrite = self.u64_of(DOUBLEWRITE) != 0;
        let method = vars::FLUSH_METHOD_NAMES
            .get(self.usize_of(FLUSH_METHOD)?)
            .copied()
            .unwrap_or_default();
        c.flush_method = innoxide_engine::FlushMethod::from_name(method)
            .ok_or_else(|| format!("innodb_flush_method={method} is not supported"))?;
        // MySQL 8.0 sizes innodb_open_files as the larger of 300 and table_open_cache.
        c.open_files = if self.get(OPEN_FILES).is_some() {
            self.usize_of(OPEN_FILES)?
        } else {
            self.usize_of(TABLE_OPEN_CACHE)?.max(300)
        };
        c.purge_threads = self.usize_of(PURGE_THREADS)?;
        c.read_io_threads = self.usize_of(READ_IO_THREADS)?;
        c.write_io_threads = self.usize_of(WRITE_IO_THREADS)?;
        c.adaptive_hash_index_parts = self.usize_of(AHI_PARTS)?;
        c.buffer_pool_load_at_startup = self.u64_of(LOAD_AT_STARTUP) != 0;
        // The engine's dynamic settings start from the variables bound to them.
        for (i, d) in VARS.iter().enumerate() {
            if let vars::Binding::Engine(t) = d.binding {
                if let Some(v) = self.effective(i) {
                    vars::tun_seed(&mut c.tunables, t, &v);
                }
            }
        }
        c.validate()?;
        Ok(c)
    }

    /// `--print-defaults`: the arguments the server would start with.
    pub fn print_defaults(&self) -> String {
        let mut s =
            String::from("innoxide would have been started with the following arguments:\n");
        for a in &self.args {
            s.push_str(a);
            s.push(' ');
        }
        s.push('\n');
        s
    }

    /// `--help` (and with `verbose` every option, its default and its value after reading
    /// the options, as mysqld --help --verbose).
    pub fn help(&self, verbose: bool) -> String {
        let mut s = format!(
            "innoxide  Ver {} (a MySQL-compatible server with an InnoDB-style engine)\n\
             Usage: innoxide [OPTIONS]\n\n\
             Default options are read from the following files in the given order:\n\
             /etc/my.cnf /etc/mysql/my.cnf $MYSQL_HOME/my.cnf ~/.my.cnf\n\
             The following groups are read: mysqld server mysqld-8.0\n\
             The following options may be given as the first argument:\n\
             --print-defaults        Print the program argument list and exit.\n\
             --no-defaults           Don't read default options from any option file.\n\
             --defaults-file=#       Only read default options from the given file #.\n\
             --defaults-extra-file=# Read this file after the global files are read.\n\
             --defaults-group-suffix=# Also read groups with concat(group, suffix).\n\n",
            vars::SERVER_VERSION
        );
        for (n, _, what) in EXTRAS {
            s.push_str(&format!("  --{:<38} {what}\n", n.replace('_', "-")));
        }
        s.push_str("\nSystem variables (dashes or underscores; prefixes loose-, skip-, enable-, disable-):\n");
        for (i, d) in VARS.iter().enumerate() {
            let kind = vars::option_kind(i);
            if kind == OptKind::None {
                continue;
            }
            let arg = if d.kind == Kind::Bool { "" } else { "=#" };
            let def = startup_default(i).map_or_else(
                || "computed at start".to_string(),
                |v| format!("'{}'", vars::show_value(i, v)),
            );
            let note = if kind == OptKind::Fixed {
                "; read-only in innoxide"
            } else {
                ""
            };
            s.push_str(&format!(
                "  --{:<38} default {def}{note}\n",
                format!("{}{arg}", d.name.replace('_', "-"))
            ));
        }
        if !verbose {
            s.push_str("\nTo see the value of every option: innoxide --help --verbose\n");
            return s;
        }
        s.push_str(
            "\nVariables (--variable-name=value)\n\
             and boolean options {FALSE|TRUE}         Value (after reading options)\n\
             ---------------------------------------- -----------------------------\n",
        );
        for (i, d) in VARS.iter().enumerate() {
            if vars::option_kind(i) == OptKind::None {
                continue;
            }
            let now = self.effective(i).map_or_else(
                || "(computed at start)".to_string(),
                |v| vars::show_value(i, v),
            );
            s.push_str(&format!("{:<40} {now}\n", d.name.replace('_', "-")));
        }
        s.push_str(&format!("{:<40} {}\n", "log-level", self.log_level));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use innoxide_engine::Isolation;

    fn opts(args: &[&str]) -> Options {
        Options::from_args(args).unwrap()
    }

    fn err(args: &[&str]) -> String {
        Options::from_args(args).unwrap_err().errors.join("\n")
    }

    #[test]
    fn sizes_booleans_and_names_like_mysqld() {
        let o = opts(&[
            "--datadir",
            "/x",
            "--innodb_buffer_pool_size=64M",
            "--innodb-page-size=4K",
        ]);
        let c = o.engine_config().unwrap();
        assert_eq!((c.buffer_pool_size, c.page_size), (64 << 20, 4096));
        assert_eq!(o.datadir, PathBuf::from("/x"));
        let o = opts(&[
            "--transaction_isolation=read-committed",
            "--innodb-snapshot-isolation=ON",
        ]);
        let c = o.engine_config().unwrap();
        assert_eq!(c.tunables.isolation, Isolation::ReadCommitted);
        assert!(c.tunables.snapshot_isolation);
        let o = opts(&["--innodb-doublewrite=OFF", "--innodb_deadlock_detect"]);
        let c = o.engine_config().unwrap();
        assert!(!c.doublewrite && c.tunables.deadlock_detect);
        let o = opts(&[
            "--skip-innodb-doublewrite",
            "--disable-innodb-adaptive-flushing",
        ]);
        let c = o.engine_config().unwrap();
        assert!(!c.doublewrite && !c.tunables.adaptive_flushing);
        let o = opts(&["--skip-innodb-doublewrite=0", "-P", "3307", "-h/d"]);
        assert!(o.engine_config().unwrap().doublewrite);
        assert_eq!((o.port, o.datadir.clone()), (3307, PathBuf::from("/d")));
        assert!(err(&["--transaction-isolation=SNAPSHOT"]).contains("transaction_isolation"));
        assert!(opts(&["--innodb-page-size=5K"])
            .engine_config()
            .unwrap_err()
            .contains("innodb_page_size"));
        assert_eq!(err(&["--foo=1"]), "unknown variable 'foo=1'");
        assert_eq!(err(&["--foo"]), "unknown option '--foo'");
        assert_eq!(err(&["--port"]), "option '--port' requires an argument");
        let o = opts(&[
            "--loose-foo=1",
            "--innodb-io-capacity=50",
            "--innodb-doublewrite=maybe",
        ]);
        assert_eq!(
            o.warnings,
            [
                "unknown variable 'loose-foo=1'",
                "option 'innodb_io_capacity': unsigned value 50 adjusted to 100",
                "option 'innodb_doublewrite': boolean value 'maybe' wasn't recognized. Set to OFF."
            ]
        );
        assert!(err(&["--max-connections=12q"]).starts_with("Unknown suffix 'q'"));
        assert!(err(&["--max-connections=-5"]).starts_with("Incorrect unsigned value"));
        assert_eq!(
            opts(&["--max-allowed-packet=1025"]).get(MAX_ALLOWED_PACKET),
            Some(&VarValue::UInt(1024))
        );
    }

    #[test]
    fn leading_options_must_come_first() {
        let l = leading(&[
            "--no-defaults".into(),
            "--print-defaults".into(),
            "--port=1".into(),
        ]);
        assert!(l.no_defaults && l.print && l.used == 2);
        let l = leading(&["--port=1".into(), "--no-defaults".into()]);
        assert!(!l.no_defaults && l.used == 0);
        assert_eq!(
            err(&["--port=1", "--no-defaults"]),
            "unknown option '--no-defaults'"
        );
    }
}
