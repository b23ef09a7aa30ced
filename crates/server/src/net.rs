//! Listeners: TCP (--bind-address, --port) and a Unix socket (--socket); one thread per
//! connection, a cached one when the thread cache has one (thread_cache.rs). Clients on the
//! socket or from 127.0.0.1/::1 are local ('localhost' accounts).
//!
//! INVARIANTS
//! - L1: an accept loop never blocks on a client; each connection's thread owns its stream
//!   and its session while it serves it, and a panic-free error in one connection never
//!   touches another. The listeners are non-blocking and wait in poll(2), so a new client is
//!   accepted at once and `stop` is seen within [`STOP_CHECK`].
//! - L2: a thread that served a connection keeps nothing of it when it goes back to the
//!   thread cache: `serve` drops the connection (session, statements, socket, server handle)
//!   and [`forget_connection`] resets the thread-locals a session sets (the error log's
//!   connection id, the session time zone, GET_LOCK's statement context). What stays is not
//!   session state: the allocator's thread heap, the regex cache of compiled patterns, the
//!   engine's per-thread counter stripes.

use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::conn::{Conn, Stream};
use crate::exec::Server;

/// How often an idle accept loop checks `stop`.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Waits until a client is in `fd`'s accept queue, or `STOP_CHECK` passes.
fn wait_for_client(fd: RawFd) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd that outlives the call; poll writes only `revents`.
    // Errors (EINTR) and timeouts only mean that the loop looks again.
    let _ = unsafe { libc::poll(&mut p, 1, STOP_CHECK.as_millis() as libc::c_int) };
}

fn serve(server: Arc<Server>, io: Box<dyn Stream>, host: String, local: bool) {
    let id = server.next_conn_id.fetch_add(1, Ordering::Relaxed);
    crate::errlog::set_connection(id);
    server.connections.fetch_add(1, Ordering::Relaxed);
    let mut c = Conn::new(io, server, id, host, local);
    if let Err(e) = c.run() {
        tracing::debug!("connection ended: {e}");
    }
    drop(c);
    forget_connection();
}

/// L2: the thread-locals a connection's statements set go back to a new thread's values.
fn forget_connection() {
    crate::errlog::set_connection(0);
    innoxide_sql::types::set_session_tz(innoxide_sql::types::tz::Tz::default());
    crate::exec::userlock::leave();
}

fn spawn_conn(server: &Arc<Server>, io: Box<dyn Stream>, host: String, local: bool) {
    let s = server.clone();
    let job = Box::new(move || serve(s, io, host, local));
    if let Err(e) = server.threads.dispatch(job) {
        tracing::error!("cannot start a connection thread: {e}");
    }
}

/// Accepts TCP clients until `stop`.
pub fn tcp(server: Arc<Server>, l: TcpListener, stop: Arc<AtomicBool>) {
    if let Err(e) = l.set_nonblocking(true) {
        tracing::error!("TCP listener: {e}");
        return;
    }
    while !stop.load(Ordering::Acquire) {
        match l.accept() {
            Ok((s, addr)) => {
                let prep = |s: &TcpStream| -> std::io::Result<()> {
                    s.set_nonblocking(false)?;
                    s.set_nodelay(true)
                };
                if let Err(e) = prep(&s) {
                    tracing::warn!("client {addr}: {e}");
                    continue;
                }
                let ip = addr.ip();
                let local = ip.is_loopback();
                let host = if local {
                    "localhost".to_string()
                } else {
                    ip.to_string()
                };
                spawn_conn(&server, Box::new(s), host, local);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait_for_client(l.as_raw_fd()),
            Err(e) => {
                tracing::warn!("accept: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Accepts Unix-socket clients until `stop`.
pub fn unix(server: Arc<Server>, l: UnixListener, stop: Arc<AtomicBool>) {
    if let Err(e) = l.set_nonblocking(true) {
        tracing::error!("socket listener: {e}");
        return;
    }
    while !stop.load(Ordering::Acquire) {
        match l.accept() {
            Ok((s, _)) => {
                let s: UnixStream = s;
                if let Err(e) = s.set_nonblocking(false) {
                    tracing::warn!("socket client: {e}");
                    continue;
                }
                spawn_conn(&server, Box::new(s), "localhost".into(), true);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait_for_client(l.as_raw_fd()),
            Err(e) => {
                tracing::warn!("accept: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
