#!/usr/bin/env python3
"""Replay the isolation cases (Hermitage and extras) against a real MariaDB
and write the reference outcomes that the engine's Rust tests compare with.

See tools/hermitage/README.md for the output format and how to regenerate the
expected file; the case file format is described at the top of
crates/engine/tests/isolation/cases.txt. The Hermitage cases are transcribed
from https://github.com/ept/hermitage (Martin Kleppmann, CC BY 4.0).
"""

import argparse
import datetime
import os
import queue
import re
import sys
import threading
import time

try:
    import pymysql
except ImportError:  # pragma: no cover
    sys.stderr.write(
        "error: PyMySQL is not installed for %s\n"
        "  apt-get install -y python3-pymysql   (then run with /usr/bin/python3)\n"
        "  or: python3 -m pip install pymysql\n" % sys.executable
    )
    sys.exit(2)

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "tools", "bench"))
from servers import MariadbServer, ServerError, Settings  # noqa: E402

DEFAULT_CASES = os.path.join(REPO_ROOT, "crates/engine/tests/isolation/cases.txt")
DEFAULT_OUT = os.path.join(
    REPO_ROOT, "crates/engine/tests/isolation/expected-mariadb-10.11.txt"
)

LEVELS = ["READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"]
LEVEL_SQL = {
    "READ-UNCOMMITTED": "read uncommitted",
    "READ-COMMITTED": "read committed",
    "REPEATABLE-READ": "repeatable read",
    "SERIALIZABLE": "serializable",
}
SETUP_SQL = [
    "drop table if exists test",
    "create table test (id int primary key, value int) engine=innodb",
    "insert into test (id, value) values (1, 10), (2, 20)",
]

# ---------------------------------------------------------------------------
# Statement grammar: exactly what the Rust replayer's hand-written parser takes.
INT = r"\d+"
PRED = (
    r"(?:id = {i}|value = {i}|value % {i} = {i}|id in \({i}(?:, {i})*\)"
    r"|id > {i}|id >= {i}|id < {i})"
).format(i=INT)
STATEMENT_RES = [
    re.compile(r"^(?:begin|commit|rollback)$"),
    re.compile(
        r"^select \* from test(?: where {p})?(?: for update| lock in share mode)?$".format(
            p=PRED
        )
    ),
    re.compile(r"^update test set value = {i} where {p}$".format(i=INT, p=PRED)),
    re.compile(
        r"^update test set value = value \+ {i}(?: where {p})?$".format(i=INT, p=PRED)
    ),
    re.compile(r"^delete from test where {p}$".format(p=PRED)),
    re.compile(r"^insert into test \(id, value\) values \({i}, {i}\)$".format(i=INT)),
]
NAME_RE = re.compile(r"^[a-z0-9_-]+$")
STEP_RE = re.compile(r"^T([0-9]+): (.*)$")


class CaseError(Exception):
    pass


class HardFailure(Exception):
    pass


class Case:
    def __init__(self, name, levels, steps, lineno):
        self.name = name
        self.levels = levels
        self.steps = steps  # list of (txn number, sql)
        self.lineno = lineno

    def txns(self):
        return sorted({t for t, _ in self.steps})


def parse_cases(path):
    cases = []
    cur = None
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.strip() == "" or line.startswith("#"):
                continue
            where = "%s:%d" % (path, lineno)
            if cur is None:
                parts = line.split(" ")
                if parts[0] != "case" or len(parts) < 2:
                    raise CaseError("%s: expected 'case <name> [option ...]'" % where)
                name = parts[1]
                if not NAME_RE.match(name):
                    raise CaseError("%s: bad case name %r" % (where, name))
                if any(c.name == name for c in cases):
                    raise CaseError("%s: duplicate case name %r" % (where, name))
                levels = list(LEVELS)
                for opt in parts[2:]:
                    if opt.startswith("levels="):
                        levels = opt[len("levels="):].split(",")
                        for lv in levels:
                            if lv not in LEVELS:
                                raise CaseError("%s: unknown level %r" % (where, lv))
                        levels = [lv for lv in LEVELS if lv in levels]
                    else:
                        raise CaseError("%s: unknown option %r" % (where, opt))
                cur = Case(name, levels, [], lineno)
            elif line == "end":
                if not cur.steps:
                    raise CaseError("%s: case %s has no steps" % (where, cur.name))
                cases.append(cur)
                cur = None
            else:
                m = STEP_RE.match(line)
                if not m:
                    raise CaseError("%s: expected 'T<n>: <statement>' or 'end'" % where)
                txn, sql = int(m.group(1)), m.group(2)
                if not any(r.match(sql) for r in STATEMENT_RES):
                    raise CaseError("%s: statement outside the grammar: %r" % (where, sql))
                cur.steps.append((txn, sql))
    if cur is not None:
        raise CaseError("%s: case %s has no 'end'" % (path, cur.name))
    return cases


# ---------------------------------------------------------------------------
# Execution


def fmt_value(v):
    return "null" if v is None else str(v)


def execute(conn, sql):
    """Run one statement; return its outcome string."""
    try:
        with conn.cursor() as cur:
            n = cur.execute(sql)
            if cur.description is not None:
                rows = cur.fetchall()
                return "rows" + "".join(
                    " (%s)" % ",".join(fmt_value(v) for v in row) for row in rows
                )
            if sql in ("begin", "commit", "rollback"):
                return "ok"
            return "ok affected=%d" % n
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args else None
        if isinstance(code, int) and 1000 <= code < 5000:
            return "error %d" % code
        return "fatal %r" % (e,)
    except Exception as e:  # connection trouble etc.
        return "fatal %r" % (e,)


class Worker(threading.Thread):
    """One transaction: one connection, one thread."""

    def __init__(self, txn, conn):
        super().__init__(daemon=True, name="T%d" % txn)
        self.txn = txn
        self.conn = conn
        self.conn_id = conn.thread_id()
        self.inbox = queue.Queue()
        self.outbox = queue.Queue()
        self.pending = None  # step number of the statement in flight

    def run(self):
        while True:
            item = self.inbox.get()
            if item is None:
                return
            step, sql = item
            self.outbox.put((step, execute(self.conn, sql)))

    def submit(self, step, sql):
        assert self.pending is None
        self.pending = step
        self.inbox.put((step, sql))

    def poll(self, timeout):
        """Outcome of the statement in flight, or None if still running."""
        try:
            if timeout <= 0:
                step, outcome = self.outbox.get_nowait()
            else:
                step, outcome = self.outbox.get(timeout=timeout)
        except queue.Empty:
            return None
        assert step == self.pending
        self.pending = None
        return outcome


class Lines(list):
    """The outcome lines of one run; echoed to stderr with --verbose."""

    def __init__(self, verbose):
        super().__init__()
        self.verbose = verbose

    def append(self, line):
        if self.verbose:
            sys.stderr.write("  " + line + "\n")
        super().append(line)


class Runner:
    def __init__(self, args, connect_kwargs):
        self.args = args
        self.ckw = connect_kwargs
        self.admin = self.connect()

    def connect(self, db=True):
        kw = dict(self.ckw)
        if not db:
            kw.pop("database", None)
        return pymysql.connect(autocommit=True, client_flag=0, **kw)

    def version(self):
        with self.admin.cursor() as c:
            c.execute("select version()")
            return c.fetchone()[0]

    def reset_table(self):
        with self.admin.cursor() as c:
            for sql in SETUP_SQL:
                c.execute(sql)

    def run_case(self, case, level, si):
        block = self.args.block_ms / 1000.0
        settle = self.args.settle_ms / 1000.0
        self.reset_table()
        workers = {}
        try:
            for t in case.txns():
                conn = self.connect()
                with conn.cursor() as c:
                    c.execute("set session transaction isolation level " + LEVEL_SQL[level])
                    c.execute("set session innodb_snapshot_isolation=" + ("ON" if si else "OFF"))
                w = Worker(t, conn)
                w.start()
                workers[t] = w
            lines = Lines(self.args.verbose)
            sql_of = {}
            if self.args.verbose:
                sys.stderr.write("case %s %s si=%s\n" % (case.name, level, "on" if si else "off"))

            def fail(msg):
                raise HardFailure(
                    "case %s %s si=%s: %s" % (case.name, level, "on" if si else "off", msg)
                )

            def check(outcome, step):
                if outcome.startswith("fatal"):
                    fail("step %d (%s): %s" % (step, sql_of[step], outcome))
                return outcome

            def collect(released_by, window):
                """Wait up to `window` for pending statements; attribute the
                ones that return to step `released_by`."""
                deadline = time.monotonic() + window
                done = []
                while True:
                    waiting = [w for w in workers.values() if w.pending is not None]
                    if not waiting:
                        break
                    for w in waiting:
                        step = w.pending
                        out = w.poll(0)
                        if out is not None:
                            done.append((step, w.txn, check(out, step)))
                    if all(w.pending is None for w in waiting):
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    time.sleep(min(0.005, left))
                for step, txn, out in sorted(done):
                    lines.append("%d T%d after %d %s" % (step, txn, released_by, out))

            for k, (t, sql) in enumerate(case.steps, 1):
                sql_of[k] = sql
                w = workers[t]
                if w.pending is not None:
                    fail(
                        "case bug: step %d gives T%d a statement while its step %d is still blocked"
                        % (k, t, w.pending)
                    )
                w.submit(k, sql)
                out = w.poll(block)
                if out is None:
                    lines.append("%d T%d blocks" % (k, t))
                else:
                    lines.append("%d T%d %s" % (k, t, check(out, k)))
                if any(x.pending is not None for x in workers.values()):
                    collect(k, settle)
            stuck = [w for w in workers.values() if w.pending is not None]
            if stuck:
                # Give them a last chance, then it's a hard failure.
                collect(len(case.steps), block)
                stuck = [w for w in workers.values() if w.pending is not None]
                if stuck:
                    fail(
                        "never returned: "
                        + ", ".join(
                            "step %d T%d (%s)" % (w.pending, w.txn, sql_of[w.pending])
                            for w in stuck
                        )
                    )
            return lines
        finally:
            self.close_workers(workers)

    def close_workers(self, workers):
        for w in workers.values():
            if w.pending is not None:
                try:
                    with self.admin.cursor() as c:
                        c.execute("kill connection %d" % w.conn_id)
                except pymysql.err.MySQLError:
                    pass
        for w in workers.values():
            w.inbox.put(None)
        for w in workers.values():
            w.join(timeout=15)
            try:
                w.conn.close()
            except Exception:
                pass


# ---------------------------------------------------------------------------
# Private server


class PrivateServer(MariadbServer):
    """A throw-away mariadbd (tools/bench/servers.py: its own temporary datadir, port and
    socket, no system service) with what the cases need: no grant tables and a 10 s lock wait
    timeout; MariaDB's own defaults otherwise."""

    def __init__(self, args):
        super().__init__(
            Settings(buffer_pool="64M", log_capacity_mb=96),
            extra=["--skip-grant-tables", "--innodb-lock-wait-timeout=10"],
            mariadbd=args.mariadbd,
            install_db=args.install_db,
            mysql_defaults=False,
        )
        self.port = args.port

    def start(self):
        try:
            super().start()
        except ServerError as e:
            raise HardFailure(str(e))


# ---------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(
        description=(
            "Run the isolation cases (Hermitage's MySQL tests plus extras) against "
            "MariaDB at READ-UNCOMMITTED, READ-COMMITTED, REPEATABLE-READ and "
            "SERIALIZABLE, each with innodb_snapshot_isolation OFF and ON, and write "
            "the outcome of every step. Each transaction T<n> of a case gets its own "
            "connection and thread; a statement that has not returned after "
            "--block-ms is recorded as 'blocks', and when it returns later it is "
            "recorded as released by the step that was just run."
        ),
    )
    p.add_argument("--cases", default=DEFAULT_CASES, help="case file to run (default: %(default)s)")
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        help="where to write the outcomes, '-' for standard output (default: %(default)s)",
    )
    p.add_argument(
        "--block-ms",
        type=int,
        default=1000,
        help="how long to wait for a statement before recording it as 'blocks' "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--settle-ms",
        type=int,
        default=300,
        help=(
            "after each step, while some earlier statement is still blocked, wait "
            "this long for such statements to return (they are attributed to that "
            "step); the wait ends early once nothing is pending (default: %(default)s)"
        ),
    )
    p.add_argument(
        "--start-server",
        action="store_true",
        help=(
            "initialise a temporary datadir with mariadb-install-db, start a private "
            "mariadbd (--no-defaults, --skip-grant-tables, "
            "--innodb-lock-wait-timeout=10) on 127.0.0.1:--port and a socket in the "
            "temporary directory, and stop it and remove the directory at the end. "
            "Without it, connect to a running server with --host/--port/--user/--password/--socket"
        ),
    )
    p.add_argument(
        "--mariadbd", default="/usr/sbin/mariadbd", help="server binary for --start-server (default: %(default)s)"
    )
    p.add_argument(
        "--install-db",
        default="mariadb-install-db",
        help="mariadb-install-db binary for --start-server (default: %(default)s)",
    )
    p.add_argument("--host", default="127.0.0.1", help="server host without --start-server (default: %(default)s)")
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="server port (default 3399 with --start-server, else 3306)",
    )
    p.add_argument("--user", default="root", help="user name without --start-server (default: %(default)s)")
    p.add_argument("--password", default="", help="password without --start-server (default: empty)")
    p.add_argument(
        "--socket",
        default=None,
        help="unix socket to use instead of --host/--port, without --start-server",
    )
    p.add_argument(
        "--database",
        default="hermitage",
        help="database holding the 'test' table; created if missing. "
        "The table is dropped and re-created before every case (default: %(default)s)",
    )
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated case names to run (default: all); for debugging",
    )
    p.add_argument(
        "--levels",
        default=None,
        help="comma-separated levels to run, e.g. REPEATABLE-READ,SERIALIZABLE "
        "(default: all four, further restricted by each case's levels= option)",
    )
    p.add_argument(
        "--si",
        choices=["off", "on", "both"],
        default="both",
        help="run with innodb_snapshot_isolation OFF, ON, or both (default: %(default)s)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="after a hard failure in one run of a case, note it in the output and "
        "go on with the next run (the exit status is still 1); for debugging cases",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="echo every outcome line to standard error as it is recorded",
    )
    args = p.parse_args()
    if args.port is None:
        args.port = 3399 if args.start_server else 3306

    try:
        cases = parse_cases(args.cases)
    except CaseError as e:
        sys.stderr.write("error: %s\n" % e)
        return 2
    if args.only:
        want = args.only.split(",")
        unknown = [n for n in want if not any(c.name == n for c in cases)]
        if unknown:
            sys.stderr.write("error: unknown case(s): %s\n" % ", ".join(unknown))
            return 2
        cases = [c for c in cases if c.name in want]
    levels = LEVELS
    if args.levels:
        levels = [lv for lv in LEVELS if lv in args.levels.split(",")]
    sis = {"off": [False], "on": [True], "both": [False, True]}[args.si]

    server = PrivateServer(args) if args.start_server else None
    try:
        if server:
            server.start()
            ckw = dict(unix_socket=server.socket, user="root", password="")
        elif args.socket:
            ckw = dict(unix_socket=args.socket, user=args.user, password=args.password)
        else:
            ckw = dict(host=args.host, port=args.port, user=args.user, password=args.password)
        boot = pymysql.connect(autocommit=True, **ckw)
        with boot.cursor() as c:
            c.execute("create database if not exists `%s`" % args.database)
        boot.close()
        ckw["database"] = args.database
        runner = Runner(args, ckw)
        version = runner.version()
        out = [
            "# generated by tools/hermitage/run_mariadb.py on %s against %s"
            % (datetime.date.today().isoformat(), version)
        ]
        t0 = time.monotonic()
        failures = 0
        for case in cases:
            for si in sis:
                for level in case.levels:
                    if level not in levels:
                        continue
                    try:
                        lines = runner.run_case(case, level, si)
                    except HardFailure as e:
                        if not args.keep_going:
                            raise
                        sys.stderr.write("HARD FAILURE: %s\n" % e)
                        failures += 1
                        lines = ["# HARD FAILURE: %s" % e]
                    out.append("case %s %s si=%s" % (case.name, level, "on" if si else "off"))
                    out.extend(lines)
                    out.append("end")
            sys.stderr.write("%-28s done (%.0f s)\n" % (case.name, time.monotonic() - t0))
        text = "\n".join(out) + "\n"
        if args.out == "-":
            sys.stdout.write(text)
        else:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                f.write(text)
            sys.stderr.write("wrote %s\n" % args.out)
        if failures:
            sys.stderr.write("%d run(s) had a hard failure\n" % failures)
            return 1
        return 0
    except HardFailure as e:
        sys.stderr.write("HARD FAILURE: %s\n" % e)
        return 1
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
