//! One client connection: handshake and authentication, then the command loop (COM_QUERY
//! with multi-statements, prepared statements, INIT_DB, PING, FIELD_LIST, STATISTICS,
//! RESET_CONNECTION, CHANGE_USER, QUIT), over any byte stream.
//!
//! INVARIANTS
//! - N1: every response is built in one buffer and written with one write call; the
//!   sequence id restarts at 0 with each command.
//! - N2: a malformed packet gets an error packet; only I/O errors, COM_QUIT, KILL, a packet
//!   above max_allowed_packet (error 1153 first) and a wrong sequence id (error 1156 first)
//!   end the connection, and the server closes it with [`lingering_close`] so the client
//!   reads that last error even when it was still sending.
//! - N3: the status flags of every OK/EOF come from the session (IN_TRANS, AUTOCOMMIT), with
//!   MORE_RESULTS_EXISTS while statements of a multi-statement query remain.
//! - N4: COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY of a statement that gives rows opens a
//!   cursor: the rows are gathered in a row buffer (memory up to tmp_table_size, tmpdir
//!   beyond it), the client gets the columns with CURSOR_EXISTS, and COM_STMT_FETCH hands
//!   out the rows in batches, LAST_ROW_SENT with the last (the cursor then closes), as
//!   mysqld's materialized cursors. A statement without rows answers as without the flag.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use innoxide_protocol::consts::*;
use innoxide_protocol::packet::put_lenenc_bytes;
use innoxide_protocol::value::{encode_binary, is_lenenc_type};
use innoxide_protocol::{
    self as proto, result, Command, Greeting, HandshakeResponse, PacketReader, ParamType,
};
use innoxide_sql::ast::{Show, Statement, TypeName};
use innoxide_sql::error::*;
use innoxide_sql::parse;
use innoxide_sql::types::{self, Datum};

use crate::exec::expr::EType;
use crate::exec::rowbuf::CursorRows;
use crate::exec::KeptPlan;
use crate::exec::{Closer, Column, Output, Server, Session};
use crate::status;
use crate::tls::Link;

/// A client's byte stream (TCP or Unix socket).
pub trait Stream: Read + Write + Send {
    /// Timeouts of blocking reads and writes (None: wait forever).
    fn set_timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> std::io::Result<()>;
    /// A handle that shuts the socket down from another thread (KILL).
    fn closer(&self) -> Option<Closer>;
    /// Ends the sending direction (the client reads end of stream after what was sent).
    fn shutdown_write(&mut self) -> std::io::Result<()>;
}

macro_rules! socket_stream {
    ($t:ty) => {
        impl Stream for $t {
            fn set_timeouts(
                &self,
                read: Option<Duration>,
                write: Option<Duration>,
            ) -> std::io::Result<()> {
                self.set_read_timeout(read)?;
                self.set_write_timeout(write)
            }
            fn closer(&self) -> Option<Closer> {
                let s = self.try_clone().ok()?;
                Some(Arc::new(move || {
                    let _ = s.shutdown(std::net::Shutdown::Both);
                }))
            }
            fn shutdown_write(&mut self) -> std::io::Result<()> {
                self.shutdown(std::net::Shutdown::Write)
            }
        }
    };
}
socket_stream!(std::net::TcpStream);
socket_stream!(std::os::unix::net::UnixStream);

/// How long a client may take to complete the handshake (MySQL's connect_timeout default).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long, and how many bytes, [`lingering_close`] reads from a client before closing.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 256 << 20;

/// Closes a connection so that the client can read the last reply: ends the sending side
/// first (the client sees end of stream after it), then reads and drops whatever the client
/// still sends until it closes too, for at most [`LINGER`] and [`LINGER_BYTES`]. Closing a
/// socket with unread bytes makes the kernel answer with a reset, which may destroy the
/// reply before the client reads it (error 1153 after an oversized packet the client is
/// still writing).
fn lingering_close(io: &mut dyn Stream) {
    if io.shutdown_write().is_err() {
        return;
    }
    let deadline = Instant::now() + LINGER;
    let mut buf = [0u8; 16384];
    let mut drained = 0;
    while drained < LINGER_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || io.set_timeouts(Some(left), None).is_err() {
            return;
        }
        match io.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

struct Prepared {
    stmt: Statement,
    /// The statement's text (slow query log, profiles).
    sql: String,
    n_params: usize,
    types: Vec<ParamType>,
    long_data: HashMap<u16, Vec<u8>>,
    /// The plan of its SELECT, UPDATE or DELETE, kept between executions (P3 in
    /// exec/prepared.rs).
    plan: Option<KeptPlan>,
    /// The cursor its last execution opened (N4), until fetched to the end, reset, closed or
    /// executed again.
    cursor: Option<CursorRows>,
}

pub struct Conn {
    io: Link,
    reader: PacketReader,
    /// What each read from the socket lands in before the reader takes it (allocated once: a
    /// fresh zeroed buffer per command cost a 16 KiB memset each time).
    read_buf: Box<[u8]>,
    out: Vec<u8>,
    seq: u8,
    caps: u32,
    /// The cursor the statement being executed opened (N4), for `execute` to keep.
    opened_cursor: Option<CursorRows>,
    session: Option<Session>,
    server: Arc<Server>,
    id: u32,
    host: String,
    local: bool,
    stmts: HashMap<u32, Prepared>,
    next_stmt: u32,
    /// The read timeout in force on the socket (set only when it changes).
    read_timeout: Option<Duration>,
    /// Host part of the account the client logged in as (CURRENT_USER()).
    account_host: String,
    /// The statement being answered is SHOW WARNINGS/ERRORS: it lists the previous
    /// statement's conditions without adding any, so its OK/EOF counts none (as mysqld).
    diagnostics: bool,
    /// The client said COM_QUIT (not counted in Aborted_clients).
    quit: bool,
}

const DEFAULT_PLUGIN: &str = "caching_sha2_password";

impl Conn {
    pub fn new(
        io: Box<dyn Stream>,
        server: Arc<Server>,
        id: u32,
        host: String,
        local: bool,
    ) -> Self {
        let max = server.vars.max_allowed_packet_global() as usize;
        Conn {
            io: Link::Plain(io),
            reader: PacketReader::new(max),
            read_buf: vec![0u8; 16384].into_boxed_slice(),
            out: Vec::with_capacity(16384),
            seq: 0,
            caps: 0,
            opened_cursor: None,
            session: None,
            server,
            id,
            host,
            local,
            stmts: HashMap::new(),
            next_stmt: 1,
            read_timeout: None,
            account_host: String::new(),
            diagnostics: false,
            quit: false,
        }
    }

    /// Reads the next payload, expecting sequence id `self.seq`; replies continue after it.
    fn read_payload(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        self.reader.set_expected_seq(self.seq);
        loop {
            match self.reader.next_payload() {
                Ok(Some((seq, p))) => {
                    self.seq = seq.wrapping_add(1);
                    return Ok(Some(p));
                }
                Ok(None) => {}
                Err(e) => {
                    // Framing is lost: answer as mysqld (1153 or 1156, with the sequence id
                    // the reader gives) and end the connection.
                    tracing::debug!("{e}");
                    let (code, state) = e.mysql_error();
                    self.seq = self.reader.expected_seq();
                    self.send(&result::err_packet(code, state, e.mysql_message()));
                    self.flush()?;
                    return Ok(None);
                }
            }
            // About to block. Waiting for a command: wait_timeout; in the middle of a packet:
            // net_read_timeout. A command that arrives whole (the usual case) is read while
            // idle, so the socket's timeout stays as it is and costs no system call.
            let idle = self.reader.buffered() == 0;
            self.set_read_timeout(idle)?;
            let n = match self.io.read(&mut self.read_buf) {
                Ok(n) => n,
                Err(e) if idle && self.session.is_some() && is_timeout(&e) => {
                    let e = SqlError::new(ER_CLIENT_INTERACTION_TIMEOUT, &[]);
                    self.seq = 0;
                    self.send(&result::err_packet(e.code, e.state, &e.message));
                    let _ = self.flush();
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(None);
            }
            self.reader.feed(&self.read_buf[..n]);
            self.received(n as u64);
        }
    }

    /// Applies wait_timeout (`idle`) or net_read_timeout, and net_write_timeout, from the
    /// session (CONNECT_TIMEOUT before there is one).
    fn set_read_timeout(&mut self, idle: bool) -> std::io::Result<()> {
        let (read, write) = match &self.session {
            None => (CONNECT_TIMEOUT, CONNECT_TIMEOUT),
            Some(s) => {
                let r = if idle {
                    s.vars.wait_timeout()
                } else {
                    s.vars.net_read_timeout()
                };
                (
                    Duration::from_secs(r),
                    Duration::from_secs(s.vars.net_write_timeout()),
                )
            }
        };
        if self.read_timeout != Some(read) {
            self.io.set_timeouts(Some(read), Some(write))?;
            self.read_timeout = Some(read);
        }
        Ok(())
    }

    fn send(&mut self, payload: &[u8]) {
        proto::write_packets(&mut self.out, &mut self.seq, payload);
    }

    /// Bytes_received: the session's and the server's (before login, the server's only).
    fn received(&self, n: u64) {
        match &self.session {
            Some(s) => s.status.received(&self.server.status, n),
            None => self.server.status.received(n),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let n = self.out.len() as u64;
        match &self.session {
            Some(s) => s.status.sent(&self.server.status, n),
            None => self.server.status.sent(n),
        }
        self.io.write_all(&self.out)?;
        self.io.flush()?;
        self.out.clear();
        Ok(())
    }

    fn send_error(&mut self, e: &SqlError) {
        if let Some(s) = &mut self.session {
            // Warnings the failed statement raised for its error stay before it (CREATE
            // TABLE's 1478 warnings before 1031, as in MySQL); otherwise the error is alone.
            if !std::mem::take(&mut s.warnings_explain_error) {
                s.warnings.clear();
            }
            s.note(innoxide_sql::types::Level::Error, e.clone());
        }
        self.send(&result::err_packet(e.code, e.state, &e.message));
    }

    fn status(&self, more: bool) -> u16 {
        let mut f = self
            .session
            .as_ref()
            .map_or(SERVER_STATUS_AUTOCOMMIT, Session::status_flags);
        if more {
            f |= SERVER_MORE_RESULTS_EXISTS;
        }
        f
    }

    /// The warning count of the statement being answered.
    fn warning_count(&self) -> u16 {
        if self.diagnostics {
            return 0;
        }
        self.session
            .as_ref()
            .map_or(0, |s| s.warnings.len().min(65535) as u16)
    }

    /// Runs the connection to its end.
    pub fn run(&mut self) -> std::io::Result<()> {
        let server = self.server.clone();
        let g = &server.status;
        // MySQL's rule: max_connections + 1 connections, the last one kept for an account
        // with SUPER (checked once the account is known, in `handshake`).
        if server.sessions.lock().len() > server.vars.max_connections() as usize {
            g.max_connection_errors.fetch_add(1, Ordering::Relaxed);
            let e = SqlError::new(ER_CON_COUNT_ERROR, &[]);
            self.send(&result::err_packet(e.code, e.state, &e.message));
            return self.flush();
        }
        match self.handshake() {
            Ok(true) => {}
            r => {
                g.aborted_connects.fetch_add(1, Ordering::Relaxed);
                return r.map(|_| ());
            }
        }
        let open = server.sessions.lock().len() as u64;
        g.max_used_connections.fetch_max(open, Ordering::Relaxed);
        loop {
            if self
                .session
                .as_ref()
                .is_some_and(|s| s.killed.load(Ordering::Acquire))
            {
                return Ok(());
            }
            self.seq = 0;
            let Some(p) = self.read_payload()? else {
                return Ok(());
            };
            if !self.command(&p)? {
                self.flush()?;
                return Ok(());
            }
            // Idle before the client hears the end of the command, so a PROCESSLIST or
            // INNODB_TRX it reads next never shows the finished statement as running.
            if let Some(s) = &self.session {
                // Tables a command opened outside a statement (COM_STMT_PREPARE) go back too.
                s.close_tables();
                s.set_state("Sleep", "");
            }
            self.flush()?;
        }
    }

    fn handshake(&mut self) -> std::io::Result<bool> {
        let nonce = proto::new_nonce();
        let tls = self.server.tls.clone();
        let offered = if tls.is_some() {
            SERVER_CAPABILITIES | CLIENT_SSL
        } else {
            SERVER_CAPABILITIES
        };
        let g = Greeting {
            connection_id: self.id,
            server_version: crate::vars::SERVER_VERSION.into(),
            nonce,
            capabilities: offered,
            charset: 255,
            status: SERVER_STATUS_AUTOCOMMIT,
            auth_plugin: DEFAULT_PLUGIN.into(),
        };
        self.seq = 0;
        let p = g.encode();
        self.send(&p);
        self.flush()?;
        let Some(mut p) = self.read_payload()? else {
            return Ok(false);
        };
        let mut tls_info = None;
        if let (true, Some(cfg)) = (proto::is_ssl_request(&p), tls) {
            let early = self.reader.take_unread();
            if let Err(e) = self.io.start_tls(cfg, &early) {
                tracing::info!("TLS handshake failed: {e}");
                return Ok(false);
            }
            tls_info = self.io.tls_info();
            p = match self.read_payload()? {
                Some(p) => p,
                None => return Ok(false),
            };
        }
        if proto::is_ssl_request(&p) {
            let e = SqlError::new(ER_HANDSHAKE_ERROR, &[]);
            self.send(&result::err_packet(
                e.code,
                e.state,
                "SSL is not enabled on this server (ssl_cert/ssl_key are not set)",
            ));
            self.flush()?;
            return Ok(false);
        }
        let hr = match HandshakeResponse::parse(&p) {
            Ok(h) => h,
            Err(_) => {
                let e = SqlError::new(ER_HANDSHAKE_ERROR, &[]);
                self.send(&result::err_packet(e.code, e.state, &e.message));
                self.flush()?;
                return Ok(false);
            }
        };
        self.caps = hr.capabilities & offered;
        if !self.authenticate(
            &hr.username,
            hr.auth_plugin.as_deref(),
            hr.auth_response.clone(),
            &nonce,
        )? {
            return Ok(false);
        }
        let mut s = Session::new(
            self.server.clone(),
            self.id,
            (&hr.username, &self.account_host),
            &self.host,
            self.io.closer(),
        );
        // The connection past max_connections is for an account with SUPER only (MySQL's
        // CONNECTION_ADMIN or SUPER).
        let others = self.server.sessions.lock().len().saturating_sub(1);
        if others >= self.server.vars.max_connections() as usize
            && !s.holds_globally(crate::privs::SUPER)
        {
            drop(s);
            self.server
                .status
                .max_connection_errors
                .fetch_add(1, Ordering::Relaxed);
            let e = SqlError::new(ER_CON_COUNT_ERROR, &[]);
            self.send(&result::err_packet(e.code, e.state, &e.message));
            self.flush()?;
            return Ok(false);
        }
        s.client_found_rows = self.caps & CLIENT_FOUND_ROWS != 0;
        // The handshake's collation sets the connection character set, as SET NAMES (an id
        // the server does not know keeps the default).
        if let Some(c) = types::collation_by_id(u16::from(hr.charset)) {
            let r = self
                .server
                .vars
                .set_names(&mut s.vars, Some(c.charset), Some(c.name));
            if let Err(e) = r {
                tracing::debug!("handshake collation {}: {}", c.name, e.message);
            }
        }
        s.tls = tls_info;
        if hr.capabilities & CLIENT_INTERACTIVE != 0 {
            s.vars.use_interactive_timeout();
        }
        if let Some(db) = hr.database {
            let refused = match s.check_use(&db) {
                Err(e) => Some(e),
                Ok(()) if self.server.catalog.database(&db).is_none() => {
                    Some(SqlError::new(ER_BAD_DB_ERROR, &[&db]))
                }
                Ok(()) => None,
            };
            if let Some(e) = refused {
                // The session goes (leaves SHOW PROCESSLIST) before the client hears why.
                drop(s);
                self.send(&result::err_packet(e.code, e.state, &e.message));
                self.flush()?;
                return Ok(false);
            }
            s.db = Some(db);
        }
        self.session = Some(s);
        let st = self.status(false);
        self.send(&result::ok_packet(0, 0, st, 0, ""));
        self.flush()?;
        Ok(true)
    }

    /// Checks the client's proof of password; switches the client to our plugin when it
    /// used another one. Sends the error itself on failure.
    fn authenticate(
        &mut self,
        user: &str,
        plugin: Option<&str>,
        mut response: Vec<u8>,
        nonce: &[u8; 20],
    ) -> std::io::Result<bool> {
        let account = match self.server.catalog.find_user(user, &self.host, self.local) {
            Ok(a) => a,
            Err(e) => {
                self.send_error(&e);
                self.flush()?;
                return Ok(false);
            }
        };
        let mut plugin = plugin.unwrap_or(DEFAULT_PLUGIN).to_string();
        // An account whose password only MySQL's mysql_native_password form gave (CREATE USER
        // ... AS '*...': exec/accounts.rs U1) is checked with that plugin.
        let native_only = account
            .as_ref()
            .is_some_and(|a| a.sha2.is_none() && a.native.is_some());
        let wanted = if native_only {
            "mysql_native_password"
        } else if plugin != "caching_sha2_password" && plugin != "mysql_native_password" {
            DEFAULT_PLUGIN
        } else {
            plugin.as_str()
        };
        if plugin != wanted {
            plugin = wanted.to_string();
            let p = proto::auth::auth_switch_request(&plugin, nonce);
            self.send(&p);
            self.flush()?;
            match self.read_payload()? {
                Some(r) => response = r,
                None => return Ok(false),
            }
        }
        let ok = account.as_ref().is_some_and(|a| match plugin.as_str() {
            "mysql_native_password" => {
                let stored: Option<[u8; 20]> = a.native.as_deref().and_then(|b| b.try_into().ok());
                proto::auth::native_check(stored.as_ref(), nonce, &response)
            }
            _ => {
                let stored: Option<[u8; 32]> = a.sha2.as_deref().and_then(|b| b.try_into().ok());
                proto::auth::sha2_check(stored.as_ref(), nonce, &response)
            }
        });
        if !ok {
            let used = if response.is_empty() { "NO" } else { "YES" };
            let e = SqlError::new(ER_ACCESS_DENIED_ERROR, &[&user, &self.host, &used]);
            // As MariaDB (log_warnings=2): a failed login is a warning in the error log.
            tracing::warn!("{}", e.message);
            self.send(&result::err_packet(e.code, e.state, &e.message));
            self.flush()?;
            return Ok(false);
        }
        // Nobody logs in as a role (exec/roles.rs R3).
        if let Some(a) = account.as_ref().filter(|a| {
            let g = self.server.catalog.grants();
            g.roles.contains(&(a.user.clone(), a.host.clone()))
        }) {
            let e = SqlError::new(ER_ACCOUNT_HAS_BEEN_LOCKED, &[&a.user, &self.host]);
            tracing::warn!("{}", e.message);
            self.send(&result::err_packet(e.code, e.state, &e.message));
            self.flush()?;
            return Ok(false);
        }
        if plugin == "caching_sha2_password" && !response.is_empty() {
            self.send(&proto::auth::FAST_AUTH_SUCCESS);
        }
        self.account_host = account.map(|a| a.host).unwrap_or_default();
        Ok(true)
    }

    /// Counts a statement or command in Com_* (and in Questions when `question`: S2).
    fn count(&self, com: usize, question: bool) {
        if let Some(s) = &self.session {
            if question {
                s.status.statement(&self.server.status, com);
            } else {
                s.status.command(&self.server.status, com);
            }
        }
    }

    /// Text from the client (a statement, a name) as UTF-8: latin1 when character_set_client
    /// says so.
    fn decode(&mut self, b: &[u8]) -> String {
        if self
            .session
            .as_ref()
            .is_some_and(|s| s.vars.client_latin1())
        {
            parse::latin1_statement(b)
        } else {
            parse::utf8_statement(b)
        }
    }

    fn session(&mut self) -> &mut Session {
        self.session
            .as_mut()
            .expect("a session exists after the handshake")
    }

    /// Handles one command; false ends the connection.
    fn command(&mut self, p: &[u8]) -> std::io::Result<bool> {
        self.diagnostics = false;
        let cmd = match Command::parse(p, self.caps) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("{e}");
                let (code, state) = e.mysql_error();
                self.send(&result::err_packet(code, state, e.mysql_message()));
                return Ok(!e.is_fatal());
            }
        };
        let counted = match &cmd {
            Command::InitDb(_) => Some((status::COM_CHANGE_DB, true)),
            Command::FieldList { .. } => Some((status::COM_SHOW_FIELDS, true)),
            Command::Statistics => Some((status::COM_SHOW_STATUS, false)),
            Command::Refresh(_) => Some((status::COM_FLUSH, true)),
            Command::Ping => Some((status::COM_ADMIN, false)),
            Command::ProcessKill(_) => Some((status::COM_KILL, true)),
            Command::Shutdown => Some((status::COM_SHUTDOWN, true)),
            Command::Debug
            | Command::SetOption(_)
            | Command::ResetConnection
            | Command::ChangeUser(_) => Some((status::COM_ADMIN, true)),
            Command::StmtPrepare(_) => Some((status::COM_STMT_PREPARE, false)),
            Command::StmtExecute { .. } => Some((status::COM_STMT_EXECUTE, true)),
            Command::StmtSendLongData { .. } => Some((status::COM_STMT_SEND_LONG_DATA, false)),
            Command::StmtClose(_) => Some((status::COM_STMT_CLOSE, false)),
            Command::StmtReset(_) => Some((status::COM_STMT_RESET, false)),
            Command::StmtFetch { .. } => Some((status::COM_STMT_FETCH, true)),
            // Each statement of a query is counted as it runs.
            Command::Query(_) | Command::Quit | Command::Unknown(_) => None,
        };
        if let Some((com, question)) = counted {
            self.count(com, question);
        }
        match cmd {
            Command::Quit => {
                self.quit = true;
                return Ok(false);
            }
            Command::Ping => {
                let st = self.status(false);
                self.send(&result::ok_packet(0, 0, st, 0, ""));
            }
            Command::InitDb(db) => {
                let db = self.decode(&db);
                let r = self.session().execute(&Statement::Use(db), &[]);
                self.respond(r, false, false);
            }
            Command::Query(q) => {
                let text = self.decode(&q);
                let parts: Vec<String> = if self.caps & CLIENT_MULTI_STATEMENTS != 0 {
                    parse::split_statements(&text)
                        .into_iter()
                        .map(str::to_string)
                        .collect()
                } else {
                    vec![text.clone()]
                };
                if parts.is_empty() {
                    // Comments alone are an empty statement MySQL accepts (parse()).
                    if text.trim().is_empty() {
                        self.send_error(&SqlError::new(ER_EMPTY_QUERY, &[]));
                    } else {
                        let r = self.session().execute(&Statement::Do(Vec::new()), &[]);
                        self.respond(r, false, false);
                    }
                }
                let n = parts.len();
                for (i, sql) in parts.iter().enumerate() {
                    let s = self.session();
                    s.set_state("Query", sql);
                    if s.vars.profiling() {
                        s.profiler.begin(sql);
                    }
                    let r = parse::parse(sql);
                    let com = r.as_ref().map_or(status::COM_ADMIN, status::com_index);
                    self.count(com, true);
                    // SHOW PROFILE(S) are not profiled themselves.
                    let shows_profiles = matches!(
                        r,
                        Ok(Statement::Show(Show::Profiles | Show::Profile { .. }))
                    );
                    let more = i + 1 < n;
                    // LOAD DATA LOCAL: the client's file first (load.rs L2).
                    let local = match &r {
                        Ok(Statement::LoadData(ld)) if ld.local => Some(ld.file.clone()),
                        _ => None,
                    };
                    let received = match local {
                        Some(name) => match self.receive_local_file(&name)? {
                            Ok(path) => Some(path),
                            Err(e) => {
                                self.respond(Err(e), false, false);
                                self.end_profile(false);
                                break;
                            }
                        },
                        None => None,
                    };
                    self.session().load_local_file = received.clone();
                    let r = r.and_then(|st| self.execute_timed(&st, &[], sql, more, false, false));
                    if let Some(path) = received {
                        self.session().load_local_file = None;
                        let _ = innoxide_io::FileSystem::remove(&innoxide_io::OsFs, &path);
                    }
                    let failed = r.is_err();
                    self.session().profiler.stage("Sending data");
                    self.respond(r, i + 1 < n, false);
                    self.end_profile(shows_profiles);
                    if failed {
                        break;
                    }
                }
            }
            Command::FieldList { table, .. } => {
                let t = self.decode(&table);
                let results = self.session().vars.results_charset();
                let s = self.session.as_mut().expect("session");
                let db = s.db.clone();
                let r = match db {
                    None => Err(SqlError::new(ER_NO_DB_ERROR, &[])),
                    Some(db) => s
                        .check_table_any(&db, &t, "SELECT")
                        .and_then(|()| s.server.catalog.table(&db, &t)),
                };
                match r {
                    Ok(t) => {
                        for (_, c) in t.visible() {
                            let mut col =
                                Column::expr(&c.name, &EType::Column(Box::new(c.ty.clone())));
                            col.table = t.name.clone();
                            col.org_table = t.name.clone();
                            col.schema = t.db.clone();
                            col.org_name = c.name.clone();
                            let def = column_def(&col, results);
                            self.send(&def.encode_with_default(None));
                        }
                        let st = self.status(false);
                        self.send(&result::eof_or_ok_terminator(
                            st,
                            0,
                            self.caps & CLIENT_DEPRECATE_EOF != 0,
                        ));
                    }
                    Err(e) => self.send_error(&e),
                }
            }
            Command::Statistics => {
                let srv = &self.server;
                let up = srv.started.elapsed().as_secs();
                let q = srv.status.questions();
                let tc = srv.catalog.cache_status();
                let text = format!(
                    "Uptime: {up}  Threads: {}  Questions: {q}  Slow queries: {}  Opens: {}  Flush tables: {}  Open tables: {}  Queries per second avg: {:.3}",
                    srv.sessions.lock().len(),
                    srv.slow_queries.load(Ordering::Relaxed),
                    tc.opened_tables,
                    srv.flushes.load(Ordering::Relaxed),
                    tc.open_tables,
                    q as f64 / up.max(1) as f64
                );
                self.send(text.as_bytes());
            }
            // As FLUSH with the flags' words: REFRESH_GRANT 1, REFRESH_LOG 2, REFRESH_TABLES 4,
            // REFRESH_STATUS 16.
            Command::Refresh(flags) => {
                let words = [
                    (1, "privileges"),
                    (2, "logs"),
                    (4, "tables"),
                    (16, "status"),
                ];
                let mut r = Ok(Output::ok(0));
                for (_, w) in words.iter().filter(|(bit, _)| flags & bit != 0) {
                    r = self
                        .session()
                        .execute(&Statement::Flush(vec![w.to_string()]), &[]);
                    if r.is_err() {
                        break;
                    }
                }
                self.respond(r, false, false);
            }
            Command::ProcessKill(id) => {
                let st = Statement::Kill {
                    id: innoxide_sql::ast::Expr::Literal(innoxide_sql::ast::Literal::Number(
                        id.to_string(),
                    )),
                    query_only: false,
                };
                let r = self.session().execute(&st, &[]);
                self.respond(r, false, false);
            }
            Command::Shutdown => {
                let st = innoxide_sql::ast::Statement::Shutdown;
                let r = self.session().execute(&st, &[]);
                self.respond(r, false, false);
            }
            Command::ResetConnection => {
                self.session().reset();
                self.close_all_statements();
                let st = self.status(false);
                self.send(&result::ok_packet(0, 0, st, 0, ""));
            }
            Command::ChangeUser(cu) => {
                self.session().reset();
                self.close_all_statements();
                let nonce = proto::new_nonce();
                let p = proto::auth::auth_switch_request(DEFAULT_PLUGIN, &nonce);
                self.send(&p);
                self.flush()?;
                let Some(resp) = self.read_payload()? else {
                    return Ok(false);
                };
                if !self.authenticate(&cu.user, Some(DEFAULT_PLUGIN), resp, &nonce)? {
                    return Ok(false);
                }
                let s = Session::new(
                    self.server.clone(),
                    self.id,
                    (&cu.user, &self.account_host),
                    &self.host,
                    self.io.closer(),
                );
                self.session = Some(s);
                if let Some(db) = cu.database {
                    if let Err(e) = self.session().check_use(&db) {
                        self.send(&result::err_packet(e.code, e.state, &e.message));
                        self.flush()?;
                        return Ok(false);
                    }
                    self.session().db = Some(db);
                }
                let st = self.status(false);
                self.send(&result::ok_packet(0, 0, st, 0, ""));
            }
            Command::SetOption(_) | Command::Debug => {
                let st = self.status(false);
                self.send(&result::eof_or_ok_terminator(st, 0, false));
            }
            Command::StmtPrepare(sql) => {
                let sql = self.decode(&sql);
                self.prepare(&sql)
            }
            Command::StmtExecute { stmt_id } => self.execute(p, stmt_id),
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                if let Some(s) = self.stmts.get_mut(&stmt_id) {
                    s.long_data.entry(param).or_default().extend(data);
                }
            }
            Command::StmtClose(id) => {
                if self.stmts.remove(&id).is_some() {
                    self.server.prepared.fetch_sub(1, Ordering::Relaxed);
                }
            }
            Command::StmtReset(id) => match self.stmts.get_mut(&id) {
                Some(s) => {
                    s.long_data.clear();
                    s.cursor = None;
                    let st = self.status(false);
                    self.send(&result::ok_packet(0, 0, st, 0, ""));
                }
                None => self.send_error(&unknown_statement(id)),
            },
            Command::StmtFetch { stmt_id, rows } => {
                if let Some(mut ps) = self.stmts.remove(&stmt_id) {
                    self.fetch(&mut ps, stmt_id, rows);
                    self.stmts.insert(stmt_id, ps);
                } else {
                    self.send_error(&unknown_statement(stmt_id));
                }
            }
            Command::Unknown(_) => self.send_error(&SqlError::new(ER_UNKNOWN_COM_ERROR, &[])),
        }
        Ok(true)
    }

    /// COM_STMT_FETCH: up to `n` rows of the statement's cursor (N4), or mysqld's
    /// ER_STMT_HAS_NO_OPEN_CURSOR when it has none.
    fn fetch(&mut self, ps: &mut Prepared, stmt_id: u32, n: u32) {
        let Some(cur) = ps.cursor.as_mut() else {
            let e = SqlError {
                code: ER_STMT_HAS_NO_OPEN_CURSOR,
                state: "HY000",
                message: format!("The statement ({stmt_id}) has no open cursor."),
            };
            return self.send_error(&e);
        };
        let results = self.session().vars.results_charset();
        let mut enc = RowEncoder::new(&cur.columns, results, true);
        let mut buf = Vec::with_capacity(256);
        let end = cur.rows.len().min(cur.next + n.max(1) as usize);
        while cur.next < end {
            buf.clear();
            let r = cur
                .rows
                .row(cur.next)
                .and_then(|row| enc.encode(&mut buf, row));
            if let Err(e) = r {
                ps.cursor = None;
                return self.send_error(&e);
            }
            proto::write_packets(&mut self.out, &mut self.seq, &buf);
            cur.next += 1;
        }
        let mut st = self.status(false) | SERVER_STATUS_CURSOR_EXISTS;
        if cur.next >= cur.rows.len() {
            st |= SERVER_STATUS_LAST_ROW_SENT;
            ps.cursor = None;
        }
        let deprecate = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let w = self.warning_count();
        self.send(&result::eof_or_ok_terminator(st, w, deprecate));
    }

    /// Ends the profile of the statement just answered (SET profiling = 1), or drops it.
    fn end_profile(&mut self, discard: bool) {
        let s = self.session();
        if discard {
            s.profiler.discard();
        } else {
            let keep = s.vars.profiling_history_size();
            s.profiler.end(keep);
        }
    }

    /// Runs a statement; one that takes over long_query_time counts in Slow_queries and goes
    /// to the slow query log when it is on (admin statements only with
    /// log_slow_admin_statements).
    fn execute_timed(
        &mut self,
        stmt: &Statement,
        params: &[Datum],
        sql: &str,
        more: bool,
        binary: bool,
        cursor: bool,
    ) -> Result<Output, SqlError> {
        self.diagnostics = matches!(stmt, Statement::Show(Show::Warnings { .. }));
        let start = Instant::now();
        let rows0 = innoxide_engine::monitor::thread_rows_read();
        let lock0 = innoxide_engine::monitor::thread_lock_wait();
        // A SELECT's rows may go out as they are made: the session gets the socket for the
        // statement (`Streamer`) and gives it back.
        let streams = matches!(stmt, Statement::Select(_) | Statement::Execute { .. });
        if streams && cursor {
            // The rows go to the cursor (N4).
            let tmp = self.session().tmp_area();
            let rows = CursorRows::new(tmp.budget, tmp.sort.tmpdir);
            self.session().sink = Some(Box::new(rows));
        } else if streams {
            let status = self.status(more);
            let results = self.session().vars.results_charset();
            let sink = Streamer {
                io: std::mem::replace(&mut self.io, Link::Closed),
                out: std::mem::take(&mut self.out),
                seq: self.seq,
                results,
                binary,
                deprecate: self.caps & CLIENT_DEPRECATE_EOF != 0,
                status,
                enc: None,
                buf: Vec::with_capacity(256),
                written: 0,
            };
            self.session().sink = Some(Box::new(sink));
        }
        let r = self.session().execute(stmt, params);
        if let Some(sink) = self.session().sink.take() {
            match sink.into_any().downcast::<Streamer>() {
                Ok(st) => {
                    let st = *st;
                    self.io = st.io;
                    self.out = st.out;
                    self.seq = st.seq;
                    if let Some(s) = &self.session {
                        s.status.sent(&self.server.status, st.written);
                    }
                }
                Err(other) => self.opened_cursor = other.downcast::<CursorRows>().ok().map(|c| *c),
            }
        }
        let elapsed = start.elapsed();
        let s = self
            .session
            .as_ref()
            .expect("a session exists after the handshake");
        if elapsed > s.vars.long_query_time() {
            let srv = &self.server;
            srv.slow_queries.fetch_add(1, Ordering::Relaxed);
            let admin = matches!(
                stmt,
                Statement::AlterTable { .. }
                    | Statement::TableMaintenance { .. }
                    | Statement::CreateIndex { .. }
                    | Statement::DropIndex { .. }
            );
            let file = srv.vars.slow_query_log_file();
            if let Some(path) = file.filter(|_| !admin || srv.vars.log_slow_admin_statements()) {
                let started = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64())
                    - elapsed.as_secs_f64();
                let rows_sent = match &r {
                    Ok(Output::Rows { rows, .. }) => rows.len() as u64,
                    Ok(Output::Streamed { rows }) => *rows,
                    _ => 0,
                };
                srv.slow_log.write(
                    std::path::Path::new(&path),
                    &crate::slowlog::Entry {
                        user: &s.user,
                        host: &s.host,
                        id: s.id,
                        db: s.db.as_deref(),
                        query_time: elapsed,
                        lock_time: innoxide_engine::monitor::thread_lock_wait() - lock0,
                        rows_sent,
                        rows_examined: innoxide_engine::monitor::thread_rows_read() - rows0,
                        started,
                        sql,
                    },
                );
            }
        }
        r
    }

    /// LOAD DATA LOCAL: asks the client for file `name` (0xFB and its name) and keeps the
    /// packets it sends, up to the empty one, in a file under tmpdir. 3948 without
    /// local_infile or a client that allows it (nothing asked then).
    fn receive_local_file(
        &mut self,
        name: &str,
    ) -> std::io::Result<Result<std::path::PathBuf, SqlError>> {
        if !self.server.vars.local_infile() || self.caps & CLIENT_LOCAL_FILES == 0 {
            return Ok(Err(SqlError::new(ER_CLIENT_LOCAL_FILES_DISABLED, &[])));
        }
        let mut ask = vec![0xFB];
        ask.extend_from_slice(name.as_bytes());
        self.send(&ask);
        self.flush()?;
        let path = self.server.vars.tmpdir().join(format!(
            "innoxide-load-{}-{}",
            std::process::id(),
            self.id
        ));
        // A file that cannot be written: the client's packets are still read to the end,
        // then the statement fails (the connection stays usable).
        use innoxide_io::FileSystem;
        let fs = innoxide_io::OsFs;
        let _ = fs.remove(&path);
        let file = fs.create(&path);
        let mut failed: Option<std::io::Error> = None;
        let mut at = 0u64;
        loop {
            let Some(p) = self.read_payload()? else {
                let _ = fs.remove(&path);
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            };
            if p.is_empty() {
                break;
            }
            match &file {
                Ok(f) if failed.is_none() => {
                    failed = f.write_at(&p, at).err();
                    at += p.len() as u64;
                }
                Ok(_) => {}
                Err(e) => failed = Some(std::io::Error::new(e.kind(), e.to_string())),
            }
        }
        Ok(match failed {
            None => Ok(path),
            Some(e) => {
                let _ = fs.remove(&path);
                let errno = e.raw_os_error().unwrap_or(0);
                let shown = path.display().to_string();
                Err(SqlError::new(
                    ER_ERROR_ON_WRITE,
                    &[&shown, &errno, &e.to_string()],
                ))
            }
        })
    }

    fn close_all_statements(&mut self) {
        let n = self.stmts.len() as u64;
        self.stmts.clear();
        self.server.prepared.fetch_sub(n, Ordering::Relaxed);
    }

    fn prepare(&mut self, sql: &str) {
        let max = self.server.vars.max_prepared_stmt_count();
        if self.server.prepared.load(Ordering::Relaxed) >= max {
            return self.send_error(&SqlError::new(ER_MAX_PREPARED_STMT_COUNT_REACHED, &[&max]));
        }
        let n_params = parse::count_params(sql);
        let stmt = match parse::parse(sql) {
            Ok(s) => s,
            Err(e) => return self.send_error(&e),
        };
        let columns = match &stmt {
            Statement::Select(q) => match self.session().describe(q) {
                Ok(c) => c,
                Err(e) => return self.send_error(&e),
            },
            _ => Vec::new(),
        };
        let id = self.next_stmt;
        self.next_stmt = self.next_stmt.wrapping_add(1).max(1);
        let deprecate = self.caps & CLIENT_DEPRECATE_EOF != 0;
        self.send(&result::stmt_prepare_ok(
            id,
            columns.len() as u16,
            n_params as u16,
            0,
        ));
        if n_params > 0 {
            for _ in 0..n_params {
                let def = proto::ColumnDef {
                    name: "?".into(),
                    charset: 63,
                    column_type: MYSQL_TYPE_VAR_STRING,
                    ..Default::default()
                };
                self.send(&def.encode());
            }
            if !deprecate {
                let st = self.status(false);
                self.send(&result::eof_or_ok_terminator(st, 0, false));
            }
        }
        if !columns.is_empty() {
            let results = self.session().vars.results_charset();
            for c in &columns {
                self.send(&column_def(c, results).encode());
            }
            if !deprecate {
                let st = self.status(false);
                self.send(&result::eof_or_ok_terminator(st, 0, false));
            }
        }
        self.server.prepared.fetch_add(1, Ordering::Relaxed);
        self.stmts.insert(
            id,
            Prepared {
                stmt,
                sql: sql.to_string(),
                n_params,
                types: Vec::new(),
                long_data: HashMap::new(),
                plan: None,
                cursor: None,
            },
        );
    }

    fn execute(&mut self, payload: &[u8], stmt_id: u32) {
        // Command byte, id, flags and iteration count come first, even for an unknown id.
        if payload.len() < 10 {
            let e = proto::ProtocolError::Malformed("COM_STMT_EXECUTE shorter than 10 bytes");
            let (code, state) = e.mysql_error();
            return self.send(&result::err_packet(code, state, e.mysql_message()));
        }
        let id = if stmt_id == u32::MAX {
            self.next_stmt.wrapping_sub(1)
        } else {
            stmt_id
        };
        let Some(mut ps) = self.stmts.remove(&id) else {
            return self.send_error(&unknown_statement(stmt_id));
        };
        let mut long = std::mem::take(&mut ps.long_data);
        let exec = proto::parse_execute(payload, ps.n_params, &mut ps.types, &mut |i| {
            long.remove(&i)
        });
        let r = match exec {
            Ok(ex) => {
                let latin1 = self.session().vars.client_latin1();
                let params: Vec<Datum> = ex
                    .params
                    .into_iter()
                    .zip(&ps.types)
                    .map(|(v, t)| match v {
                        // Text parameters are in character_set_client; BLOB-typed ones are
                        // bytes and stay as they are.
                        proto::Value::Bytes(b)
                            if latin1
                                && matches!(
                                    t.code,
                                    MYSQL_TYPE_STRING | MYSQL_TYPE_VAR_STRING | MYSQL_TYPE_VARCHAR
                                ) =>
                        {
                            Datum::Bytes(types::latin1_to_utf8(&b).into_bytes())
                        }
                        v => param_datum(v),
                    })
                    .collect();
                // Com_stmt_execute and the statement's own Com_* (as mysqld).
                self.count(status::com_index(&ps.stmt), false);
                let s = self.session();
                if s.vars.profiling() {
                    s.profiler.begin(&ps.sql);
                }
                s.stmt_plan = Some(ps.plan.take());
                // Executing again closes the cursor the last execution opened.
                ps.cursor = None;
                let cursor = ex.flags & CURSOR_TYPE_READ_ONLY != 0;
                let r = self.execute_timed(&ps.stmt, &params, &ps.sql, false, true, cursor);
                ps.plan = self.session().stmt_plan.take().flatten();
                r
            }
            Err(e) => {
                tracing::debug!("COM_STMT_EXECUTE: {e}");
                let (code, state) = e.mysql_error();
                self.send(&result::err_packet(code, state, e.mysql_message()));
                self.stmts.insert(id, ps);
                return;
            }
        };
        self.session().profiler.stage("Sending data");
        match (self.opened_cursor.take(), r) {
            (Some(cur), Ok(Output::Streamed { .. })) => self.open_cursor(&mut ps, cur),
            (Some(mut cur), Ok(Output::Rows { columns, rows })) => {
                cur.columns = columns;
                match rows.into_iter().try_for_each(|row| cur.rows.push(row)) {
                    Ok(()) => self.open_cursor(&mut ps, cur),
                    Err(e) => self.send_error(&e),
                }
            }
            (_, r) => self.respond(r, false, true),
        }
        self.end_profile(false);
        self.stmts.insert(id, ps);
    }

    /// Answers an execution that opened cursor `cur` (N4): the result's columns, then the
    /// end of the metadata with CURSOR_EXISTS; the rows wait for COM_STMT_FETCH.
    fn open_cursor(&mut self, ps: &mut Prepared, cur: CursorRows) {
        let results = self.session().vars.results_charset();
        RowEncoder::new(&cur.columns, results, true).header(&mut self.out, &mut self.seq);
        let st = self.status(false) | SERVER_STATUS_CURSOR_EXISTS;
        let w = self.warning_count();
        let deprecate = self.caps & CLIENT_DEPRECATE_EOF != 0;
        self.send(&result::eof_or_ok_terminator(st, w, deprecate));
        ps.cursor = Some(cur);
    }

    /// Sends a statement's result: OK, error, or a result set (text or binary rows).
    fn respond(&mut self, r: Result<Output, SqlError>, more: bool, binary: bool) {
        let deprecate = self.caps & CLIENT_DEPRECATE_EOF != 0;
        match r {
            Err(e) => self.send_error(&e),
            Ok(Output::Ok {
                affected,
                last_insert_id,
                info,
            }) => {
                let st = self.status(more);
                let w = self.warning_count();
                self.send(&result::ok_packet(affected, last_insert_id, st, w, &info));
            }
            Ok(Output::Rows { columns, rows }) => {
                let results = self.session().vars.results_charset();
                let mut enc = RowEncoder::new(&columns, results, binary);
                enc.header(&mut self.out, &mut self.seq);
                if !deprecate {
                    let st = self.status(more);
                    self.send(&result::eof_or_ok_terminator(st, 0, false));
                }
                let mut buf = Vec::with_capacity(256);
                for r in &rows {
                    buf.clear();
                    if let Err(e) = enc.encode(&mut buf, r) {
                        self.send_error(&e);
                        return;
                    }
                    proto::write_packets(&mut self.out, &mut self.seq, &buf);
                }
                let st = self.status(more);
                let w = self.warning_count();
                self.send(&result::eof_or_ok_terminator(st, w, deprecate));
            }
            // The columns and rows went out while the statement ran (`Streamer`).
            Ok(Output::Streamed { .. }) => {
                let st = self.status(more);
                let w = self.warning_count();
                self.send(&result::eof_or_ok_terminator(st, w, deprecate));
            }
        }
    }
}

/// Encodes the rows of one result set, text or binary protocol, as a client is sent them.
struct RowEncoder {
    defs: Vec<proto::ColumnDef>,
    /// Text columns go out in character_set_results: latin1 is converted from the server's
    /// UTF-8 here (a character latin1 lacks becomes '?').
    latin1: Vec<bool>,
    /// Table columns are sent as their type shows them (ZEROFILL padding, YEAR's four digits,
    /// FLOAT(M,D)'s D places); the binary protocol sends the numbers.
    typed: Vec<Option<types::SqlType>>,
    /// ZEROFILL, YEAR and BIT columns show integers their own way.
    plain_int: Vec<bool>,
    binary: bool,
    digits: itoa::Buffer,
    /// Temporal values are written here, then copied into the row.
    scratch: Vec<u8>,
}

impl RowEncoder {
    fn new(
        columns: &[Column],
        results: Option<&'static types::CollationInfo>,
        binary: bool,
    ) -> RowEncoder {
        let defs: Vec<proto::ColumnDef> = columns.iter().map(|c| column_def(c, results)).collect();
        let latin1 = defs
            .iter()
            .map(|d| results.is_some_and(|r| r.charset == "latin1") && d.charset != 63)
            .collect();
        let typed: Vec<Option<types::SqlType>> = columns
            .iter()
            .map(|c| match &c.ety {
                EType::Column(ty) => Some((**ty).clone()),
                _ => None,
            })
            .collect();
        let plain_int = typed
            .iter()
            .map(|ty| {
                ty.as_ref().is_none_or(|t| {
                    !t.zerofill && !matches!(t.name, TypeName::Year | TypeName::Bit)
                })
            })
            .collect();
        RowEncoder {
            defs,
            latin1,
            typed,
            plain_int,
            binary,
            digits: itoa::Buffer::new(),
            scratch: Vec::with_capacity(32),
        }
    }

    /// The column count and the column definitions.
    fn header(&self, out: &mut Vec<u8>, seq: &mut u8) {
        proto::write_packets(out, seq, &result::column_count(self.defs.len() as u64));
        let mut b = Vec::with_capacity(64);
        for d in &self.defs {
            b.clear();
            d.encode_into(&mut b);
            proto::write_packets(out, seq, &b);
        }
    }

    /// One row's payload, straight into `buf`: strings and integers with no conversion to
    /// make are copied from the value, the rest rendered first.
    fn encode(&mut self, buf: &mut Vec<u8>, r: &[Datum]) -> Result<(), SqlError> {
        if self.binary {
            let bitmap = result::binary_row_begin(buf, self.defs.len());
            let cols = r.iter().zip(&self.defs).zip(&self.latin1).zip(&self.typed);
            for (i, (((d, c), &l), ty)) in cols.enumerate() {
                let v = match d {
                    Datum::Bytes(b) if !l && is_lenenc_type(c.column_type) => {
                        put_lenenc_bytes(buf, b);
                        continue;
                    }
                    // A BIT column's value goes out as its bytes, as in text rows.
                    Datum::UInt(_) if ty.as_ref().is_some_and(|t| t.name == TypeName::Bit) => {
                        match ty.as_ref().and_then(|t| t.render(d)) {
                            Some(b) => put_lenenc_bytes(buf, &b),
                            None => result::binary_row_null(buf, bitmap, i),
                        }
                        continue;
                    }
                    _ => match bin_value(d, c.column_type) {
                        proto::Value::Bytes(b) if l => {
                            proto::Value::Bytes(types::utf8_to_latin1(&b).0)
                        }
                        v => v,
                    },
                };
                if let proto::Value::Null = v {
                    result::binary_row_null(buf, bitmap, i);
                } else if let Err(e) = encode_binary(buf, c.column_type, &v) {
                    return Err(SqlError::new(ER_INTERNAL_ERROR, &[&e]));
                }
            }
            return Ok(());
        }
        let cols = r
            .iter()
            .zip(&self.typed)
            .zip(&self.latin1)
            .zip(&self.plain_int);
        for (((d, ty), &l), &plain_int) in cols {
            match d {
                Datum::Null => buf.push(0xFB),
                Datum::Bytes(b) if !l && ty.as_ref().is_none_or(|t| !t.zerofill) => {
                    put_lenenc_bytes(buf, b)
                }
                Datum::Int(v) if plain_int => {
                    put_lenenc_bytes(buf, self.digits.format(*v).as_bytes())
                }
                Datum::UInt(v) if plain_int => {
                    put_lenenc_bytes(buf, self.digits.format(*v).as_bytes())
                }
                // ASCII in every character set (ZEROFILL, numeric only, pads in `render`).
                Datum::DateTime(_) | Datum::Date(_) | Datum::Decimal(_)
                    if ty.as_ref().is_none_or(|t| !t.zerofill) =>
                {
                    self.scratch.clear();
                    d.push_text(&mut self.scratch);
                    put_lenenc_bytes(buf, &self.scratch)
                }
                _ => {
                    let t = match ty {
                        Some(ty) => ty.render(d),
                        None => d.to_text(),
                    };
                    match t {
                        Some(t) if l => put_lenenc_bytes(buf, &types::utf8_to_latin1(&t).0),
                        Some(t) => put_lenenc_bytes(buf, &t),
                        None => buf.push(0xFB),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Writes a top-level SELECT's result to the client while the statement runs (exec's
/// `RowSink`): the connection lends it its socket, output buffer and sequence number for the
/// statement and takes them back after (`Conn::execute_timed`). The buffer is written out
/// whenever it passes `STREAM_FLUSH` bytes, so a result is never held whole.
struct Streamer {
    io: Link,
    out: Vec<u8>,
    seq: u8,
    results: Option<&'static types::CollationInfo>,
    binary: bool,
    /// CLIENT_DEPRECATE_EOF: no EOF after the column definitions.
    deprecate: bool,
    /// Server status for the EOF after the column definitions.
    status: u16,
    enc: Option<RowEncoder>,
    buf: Vec<u8>,
    /// Bytes written to the socket (Bytes_sent).
    written: u64,
}

const STREAM_FLUSH: usize = 64 * 1024;

impl Streamer {
    fn flush(&mut self) -> Result<(), SqlError> {
        if self.out.is_empty() {
            return Ok(());
        }
        let r = self.io.write_all(&self.out).and_then(|()| self.io.flush());
        self.written += self.out.len() as u64;
        self.out.clear();
        r.map_err(|_| SqlError::new(ER_NET_ERROR_ON_WRITE, &[]))
    }
}

impl crate::exec::RowSink for Streamer {
    fn begin(&mut self, columns: &[Column]) -> Result<(), SqlError> {
        let enc = RowEncoder::new(columns, self.results, self.binary);
        enc.header(&mut self.out, &mut self.seq);
        if !self.deprecate {
            proto::write_packets(
                &mut self.out,
                &mut self.seq,
                &result::eof_or_ok_terminator(self.status, 0, false),
            );
        }
        self.enc = Some(enc);
        Ok(())
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        let Some(enc) = self.enc.as_mut() else {
            return Err(SqlError::new(
                ER_INTERNAL_ERROR,
                &[&"result row before its columns"],
            ));
        };
        self.buf.clear();
        enc.encode(&mut self.buf, row)?;
        proto::write_packets(&mut self.out, &mut self.seq, &self.buf);
        if self.out.len() >= STREAM_FLUSH {
            self.flush()?;
        }
        Ok(())
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// mysqld's ER_STMT_HAS_NO_OPEN_CURSOR (not in the SQL layer's error table).
const ER_STMT_HAS_NO_OPEN_CURSOR: u16 = 1421;

/// ER_UNKNOWN_STMT_HANDLER for COM_STMT_EXECUTE, RESET and FETCH, worded as mysqld 8.0 does
/// (it looks statements up in `mysql_stmt_precheck`).
fn unknown_statement(id: u32) -> SqlError {
    SqlError::new(ER_UNKNOWN_STMT_HANDLER, &[&id, &"mysql_stmt_precheck"])
}

/// A prepared statement parameter as a value.
fn param_datum(v: proto::Value) -> Datum {
    let fsp = |micros: u32| if micros == 0 { 0 } else { 6 };
    match v {
        proto::Value::Null => Datum::Null,
        proto::Value::Int(i) => Datum::Int(i),
        proto::Value::UInt(u) => Datum::UInt(u),
        proto::Value::Float(f) => Datum::Double(f64::from(f)),
        proto::Value::Double(f) => Datum::Double(f),
        proto::Value::Bytes(b) => Datum::Bytes(b),
        proto::Value::Date { year, month, day } => Datum::Date(types::Date { year, month, day }),
        proto::Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Datum::DateTime(types::DateTime {
            date: types::Date { year, month, day },
            hour,
            minute,
            second,
            micro: micros,
            fsp: fsp(micros),
        }),
        proto::Value::Time {
            negative,
            days,
            hours,
            minutes,
            seconds,
            micros,
        } => {
            let h = u64::from(days) * 24 + u64::from(hours);
            Datum::Time(types::Time {
                negative,
                hours: u16::try_from(h).unwrap_or(u16::MAX),
                minute: minutes,
                second: seconds,
                micro: micros,
                fsp: fsp(micros),
            })
        }
    }
}

/// A result value in the binary protocol form of its column's type.
fn bin_value(d: &Datum, ty: u8) -> proto::Value {
    let mut w = innoxide_sql::types::Warnings::default();
    match d {
        Datum::Null => proto::Value::Null,
        _ => match ty {
            MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_INT24
            | MYSQL_TYPE_LONGLONG | MYSQL_TYPE_YEAR => match d {
                Datum::UInt(u) => proto::Value::UInt(*u),
                other => proto::Value::Int(other.to_i64(&mut w)),
            },
            MYSQL_TYPE_FLOAT => proto::Value::Float(d.to_f64(&mut w) as f32),
            MYSQL_TYPE_DOUBLE => proto::Value::Double(d.to_f64(&mut w)),
            MYSQL_TYPE_DATE => match d {
                Datum::Date(x) => proto::Value::Date {
                    year: x.year,
                    month: x.month,
                    day: x.day,
                },
                Datum::DateTime(x) => proto::Value::Date {
                    year: x.date.year,
                    month: x.date.month,
                    day: x.date.day,
                },
                other => proto::Value::Bytes(other.to_text().unwrap_or_default()),
            },
            MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP => match d {
                Datum::DateTime(x) => proto::Value::DateTime {
                    year: x.date.year,
                    month: x.date.month,
                    day: x.date.day,
                    hour: x.hour,
                    minute: x.minute,
                    second: x.second,
                    micros: x.micro,
                },
                Datum::Date(x) => proto::Value::DateTime {
                    year: x.year,
                    month: x.month,
                    day: x.day,
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micros: 0,
                },
                other => proto::Value::Bytes(other.to_text().unwrap_or_default()),
            },
            MYSQL_TYPE_TIME => match d {
                Datum::Time(t) => proto::Value::Time {
                    negative: t.negative,
                    days: u32::from(t.hours / 24),
                    hours: (t.hours % 24) as u8,
                    minutes: t.minute,
                    seconds: t.second,
                    micros: t.micro,
                },
                other => proto::Value::Bytes(other.to_text().unwrap_or_default()),
            },
            _ => proto::Value::Bytes(d.to_text().unwrap_or_default()),
        },
    }
}

/// The column definition a client sees for a result column. A text column is described in
/// `results` (character_set_results) when set, as mysqld does: its collation id is the
/// results charset's and its length is in that charset's bytes.
pub fn column_def(c: &Column, results: Option<&types::CollationInfo>) -> proto::ColumnDef {
    let (column_type, length, decimals, flags, charset) = match &c.ety {
        EType::Column(t) => (
            t.protocol_type(),
            t.column_length(),
            t.decimals(),
            t.flags(),
            t.charset_id(),
        ),
        EType::Int { unsigned } => (
            MYSQL_TYPE_LONGLONG,
            21,
            0,
            BINARY_FLAG | NUM_FLAG | if *unsigned { UNSIGNED_FLAG } else { 0 },
            63,
        ),
        EType::Decimal { scale } => (
            MYSQL_TYPE_NEWDECIMAL,
            67,
            *scale,
            BINARY_FLAG | NUM_FLAG,
            63,
        ),
        EType::Double => (MYSQL_TYPE_DOUBLE, 23, 31, BINARY_FLAG | NUM_FLAG, 63),
        EType::Str { coll } => {
            let id = coll.id();
            let bin = if id == 63 { BINARY_FLAG } else { 0 };
            (MYSQL_TYPE_VAR_STRING, 1024, 31, bin, id)
        }
        EType::Date => (MYSQL_TYPE_DATE, 10, 0, BINARY_FLAG, 63),
        EType::DateTime { fsp } => (
            MYSQL_TYPE_DATETIME,
            19 + u32::from(*fsp) + u32::from(*fsp > 0),
            *fsp,
            BINARY_FLAG,
            63,
        ),
        EType::Time { fsp } => (
            MYSQL_TYPE_TIME,
            10 + u32::from(*fsp) + u32::from(*fsp > 0),
            *fsp,
            BINARY_FLAG,
            63,
        ),
        EType::Null => (MYSQL_TYPE_NULL, 0, 0, BINARY_FLAG, 63),
    };
    let (charset, length) = match (results, types::collation_by_id(charset)) {
        (Some(r), Some(own)) if charset != 63 => {
            let chars = length / types::mbmaxlen(own.charset).max(1);
            (r.id, chars.saturating_mul(types::mbmaxlen(r.charset)))
        }
        _ => (charset, length),
    };
    proto::ColumnDef {
        schema: c.schema.clone(),
        table: c.table.clone(),
        org_table: c.org_table.clone(),
        name: c.name.clone(),
        org_name: c.org_name.clone(),
        charset,
        length,
        column_type,
        flags,
        decimals,
    }
}

impl Drop for Conn {
    /// The statements and the session go first (Threads_connected drops), then the socket.
    /// A session that ends without COM_QUIT counts in Aborted_clients.
    fn drop(&mut self) {
        if self.session.is_some() && !self.quit {
            self.server
                .status
                .aborted_clients
                .fetch_add(1, Ordering::Relaxed);
        }
        self.close_all_statements();
        self.session = None;
        lingering_close(&mut self.io);
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
