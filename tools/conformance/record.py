#!/usr/bin/env python3
"""Record the expected results of the SQL conformance suite from a real MariaDB 10.11.

The suite is crates/server/tests/conformance/*.test; its format is described at the top of
crates/server/tests/conformance.rs (and in docs/testing.md). This script runs every record of
every file, in order, against MariaDB with MySQL 8.0's session defaults, and rewrites in place
what a record expects: the `statement ok` / `statement error <code>` header of statements, the
column types, rows and error code of queries, and the (level, code) pairs of `warnings`
records. Everything else (comments, directives, SQL, blank lines) is kept as written.

    /usr/bin/python3 tools/conformance/record.py --start-server          # all files
    /usr/bin/python3 tools/conformance/record.py --start-server joins    # only joins.test

--start-server runs a private mariadbd (a temporary datadir made by mariadb-install-db, its
own port and socket, no system service), reusing tools/hermitage/run_mariadb.py's
PrivateServer. Without it, --socket or --host/--port name a running server.
"""

import argparse
import glob
import os
import re
import sys
from types import SimpleNamespace

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "tools", "hermitage"))

# PrivateServer (start/stop of a throw-away mariadbd) and the PyMySQL import check.
from run_mariadb import HardFailure, PrivateServer  # noqa: E402
import pymysql  # noqa: E402

SUITE_DIR = os.path.join(REPO_ROOT, "crates/server/tests/conformance")

# MySQL 8.0's defaults where MariaDB 10.11's differ. The collation: MySQL 8.0's default
# utf8mb4_0900_ai_ci does not exist in MariaDB; files that depend on collation name one
# explicitly. character_set_server/collation_server make CREATE DATABASE use utf8mb4 (mariadbd
# --no-defaults would use latin1).
SESSION_SQL = [
    "SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,"
    "NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
    "SET NAMES utf8mb4",
    "SET SESSION character_set_server = utf8mb4",
    "SET SESSION collation_server = utf8mb4_general_ci",
    "SET SESSION time_zone = '+00:00'",
    "SET SESSION group_concat_max_len = 1024",
    "SET SESSION div_precision_increment = 4",
    "SET SESSION explicit_defaults_for_timestamp = ON",
    "SET SESSION autocommit = 1",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
]

# Column type codes (the protocol's MYSQL_TYPE_*) to the suite's type letters.
INT_TYPES = {1, 2, 3, 8, 9, 13}  # TINY, SHORT, LONG, LONGLONG, INT24, YEAR
REAL_TYPES = {0, 4, 5, 246}  # DECIMAL, FLOAT, DOUBLE, NEWDECIMAL

HEADER_RE = re.compile(
    r"^(statement ok|statement error \d+|query( [ITR]+)?( rowsort)?|warnings)$"
)
SKIP_RE = re.compile(r"^skipif innoxide \S.*$")
CONN_RE = re.compile(r"^connection [a-z0-9_]+$")


class SuiteError(Exception):
    pass


def type_letter(code):
    if code in INT_TYPES:
        return "I"
    if code in REAL_TYPES:
        return "R"
    return "T"


def fmt_value(v):
    """A value as the runner prints it: NULL, (empty), text with \\ \\t \\n escaped, or 0x.. for
    bytes that are not UTF-8."""
    if v is None:
        return "NULL"
    b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + b.hex().upper()
    if s == "":
        return "(empty)"
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


# ---------------------------------------------------------------------------------------------
# Parsing: a file is a list of items, each a list of output lines plus what to run.


class Record:
    def __init__(self, lineno, header, sql, rowsort):
        self.lineno = lineno
        self.header = header  # "statement", "query" or "warnings"
        self.sql = sql
        self.rowsort = rowsort


def parse(path):
    """Yield ("text", line) for lines kept as they are, ("conn", name), and ("record", Record)."""
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    items = []
    i = 0
    while i < len(lines):
        line = lines[i]
        where = "%s:%d" % (path, i + 1)
        if line.strip() == "" or line.startswith("#") or SKIP_RE.match(line):
            items.append(("text", line))
            i += 1
            continue
        if line.startswith("skipif") or line.startswith("onlyif"):
            raise SuiteError("%s: only 'skipif innoxide <reason>' is known" % where)
        if CONN_RE.match(line):
            items.append(("text", line))
            items.append(("conn", line.split()[1]))
            i += 1
            continue
        if not HEADER_RE.match(line):
            raise SuiteError("%s: expected a record header, got %r" % (where, line))
        kind = line.split()[0]
        rowsort = line.endswith(" rowsort")
        i += 1
        sql = []
        while i < len(lines) and lines[i].strip() != "" and lines[i] != "----":
            sql.append(lines[i])
            i += 1
        if kind != "warnings" and not sql:
            raise SuiteError("%s: record without SQL" % where)
        if kind == "warnings" and sql:
            raise SuiteError("%s: a warnings record has no SQL" % where)
        if i < len(lines) and lines[i] == "----":
            if kind == "statement":
                raise SuiteError("%s: a statement has no result section" % where)
            i += 1
            while i < len(lines) and lines[i].strip() != "":
                i += 1  # old expected rows: replaced
        elif kind != "statement":
            raise SuiteError("%s: %s record without '----'" % (where, kind))
        items.append(("record", Record(where, kind, "\n".join(sql), rowsort)))
    return items


# ---------------------------------------------------------------------------------------------
# Execution


class Session:
    def __init__(self, ckw, db):
        self.ckw = ckw
        self.db = db
        self.conns = {}
        self.cur = self.open("default")

    def open(self, name):
        if name not in self.conns:
            c = pymysql.connect(autocommit=True, charset="utf8mb4", conv={}, **self.ckw)
            with c.cursor() as cur:
                for s in SESSION_SQL:
                    cur.execute(s)
                if name == "default":
                    cur.execute("DROP DATABASE IF EXISTS `%s`" % self.db)
                    cur.execute("CREATE DATABASE `%s`" % self.db)
                cur.execute("USE `%s`" % self.db)
            self.conns[name] = c
        return self.conns[name]

    def switch(self, name):
        self.cur = self.open(name)

    def run(self, sql):
        """("ok",), ("error", code) or ("rows", letters, rows)."""
        try:
            with self.cur.cursor() as c:
                c.execute(sql)
                if c.description is None:
                    return ("ok",)
                letters = "".join(type_letter(d[1]) for d in c.description)
                rows = [[fmt_value(v) for v in r] for r in c.fetchall()]
                return ("rows", letters, rows)
        except pymysql.err.MySQLError as e:
            code = e.args[0] if e.args else None
            if isinstance(code, int) and 1000 <= code < 5000:
                return ("error", code)
            raise HardFailure("%r" % (e,))

    def close(self):
        with self.conns["default"].cursor() as c:
            c.execute("DROP DATABASE IF EXISTS `%s`" % self.db)
        for c in self.conns.values():
            c.close()


def record_file(path, ckw):
    items = parse(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    sess = Session(ckw, "conf_" + stem)
    out = []
    n = 0
    try:
        for kind, v in items:
            if kind == "text":
                out.append(v)
                continue
            if kind == "conn":
                sess.switch(v)
                continue
            r = v
            n += 1
            if r.header == "warnings":
                res = sess.run("SHOW WARNINGS")
                assert res[0] == "rows"
                out.append("warnings")
                out.append("----")
                out.extend("%s\t%s" % (row[0], row[1]) for row in res[2])
                continue
            res = sess.run(r.sql)
            if r.header == "statement" or res[0] == "error":
                if r.header == "query":
                    sys.stderr.write(
                        "note: %s: the query failed with %d; recorded as a statement\n"
                        % (r.lineno, res[1])
                    )
                out.append("statement ok" if res[0] != "error" else "statement error %d" % res[1])
                out.append(r.sql)
                continue
            if res[0] != "rows":
                raise SuiteError("%s: a query that returned no result set" % r.lineno)
            _, letters, rows = res
            lines = ["\t".join(row) for row in rows]
            if r.rowsort:
                lines.sort()
            out.append("query %s%s" % (letters, " rowsort" if r.rowsort else ""))
            out.append(r.sql)
            out.append("----")
            out.extend(lines)
    finally:
        sess.close()
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="file stems or paths (default: every .test file)")
    p.add_argument("--start-server", action="store_true", help="run a private mariadbd")
    p.add_argument("--mariadbd", default="/usr/sbin/mariadbd")
    p.add_argument("--install-db", default="mariadb-install-db")
    p.add_argument("--port", type=int, default=3398, help="port of the private server or of --host")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--socket", default=None)
    p.add_argument("--user", default="root")
    p.add_argument("--password", default="")
    args = p.parse_args()

    if args.files:
        paths = []
        for f in args.files:
            paths.append(f if os.path.sep in f else os.path.join(SUITE_DIR, f + ".test"))
    else:
        paths = sorted(glob.glob(os.path.join(SUITE_DIR, "*.test")))
    server = None
    try:
        for path in paths:
            parse(path)  # refuse a malformed file before starting anything
        if args.start_server:
            server = PrivateServer(
                SimpleNamespace(install_db=args.install_db, mariadbd=args.mariadbd, port=args.port)
            )
            server.start()
            ckw = dict(unix_socket=server.socket, user="root", password="")
        elif args.socket:
            ckw = dict(unix_socket=args.socket, user=args.user, password=args.password)
        else:
            ckw = dict(host=args.host, port=args.port, user=args.user, password=args.password)
        c = pymysql.connect(**ckw)
        with c.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = cur.fetchone()[0]
        c.close()
        if not version.startswith("10.11."):
            sys.stderr.write("warning: the suite is recorded from MariaDB 10.11, this is %s\n" % version)
        total = 0
        for path in paths:
            n = record_file(path, ckw)
            total += n
            sys.stderr.write("%-40s %4d records\n" % (os.path.relpath(path, REPO_ROOT), n))
        sys.stderr.write("recorded %d records from MariaDB %s\n" % (total, version))
        return 0
    except (SuiteError, HardFailure, pymysql.err.MySQLError) as e:
        sys.stderr.write("error: %s\n" % e)
        return 1
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
