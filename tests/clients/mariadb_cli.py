#!/usr/bin/python3
"""End-to-end check of innoxide with the mariadb command-line client (libmariadb).

1. Batch: `mariadb -e "<statements>"` (and `--show-warnings`), output compared as text.
2. Interactive: the client runs in a pseudo-terminal, as a person would use it. The script
   waits for the prompt, types each statement, and checks what the client printed before the
   next prompt (result tables, "Query OK" lines, warnings shown with \\W, `status`).

The CLI has no binary-protocol prepared statements, so its prepared statement is SQL's
PREPARE / EXECUTE ... USING / DEALLOCATE PREPARE, checked in both modes.

Usage: mariadb_cli.py --host 127.0.0.1 --port 3306 [--socket /path/to.sock] [--client mariadb]
Prints "mariadb CLI: OK" and exits 0, or prints what differed and exits 1.
Only the standard library is used (pty, select).
"""

import argparse
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROMPT = re.compile(r"(MySQL|MariaDB) \[[^\]\n]*\]> $")
CONTINUATION = re.compile(r"\n\s+-> $")


def fail(msg):
    print(f"mariadb CLI: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def expect(what, got, want):
    if got != want:
        fail(f"{what}:\n--- got\n{got}\n--- want\n{want}")


def connection_args(a):
    # --no-defaults must come first: no option file from the machine may change the output.
    args = [a.client, "--no-defaults", "-u", "root"]
    if a.socket:
        args += ["--protocol=socket", "-S", a.socket]
    else:
        args += ["--protocol=tcp", "-h", a.host, "-P", str(a.port)]
    return args


def batch(a, env):
    ps_sql = (
        "PREPARE s FROM 'SELECT name, n FROM t WHERE id = ?'; SET @i = 2; "
        "EXECUTE s USING @i; DEALLOCATE PREPARE s; "
    )
    ps_out = "name\tn\ntwo\t20\n"
    sql = (
        "DROP DATABASE IF EXISTS clibatch; CREATE DATABASE clibatch; USE clibatch; "
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), n INT); "
        "INSERT INTO t VALUES (1, 'one', 10), (2, 'two', 20); "
        "SELECT id, name, n FROM t ORDER BY id; "
        + ps_sql
        + "BEGIN; INSERT INTO t VALUES (3, 'three', 30); COMMIT; "
        "BEGIN; DELETE FROM t; UPDATE t SET n = 0; ROLLBACK; "
        "SELECT COUNT(*), SUM(n) FROM t; "
        "SET sql_mode = ''; INSERT INTO t VALUES (4, 'four', 'abc'); "
        "SHOW WARNINGS; SELECT n FROM t WHERE id = 4; "
        "DROP DATABASE clibatch"
    )
    r = subprocess.run(
        connection_args(a) + ["-e", sql],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if r.returncode != 0:
        fail(f"-e exited with {r.returncode}: {r.stderr}")
    expect(
        "-e output",
        r.stdout,
        "id\tname\tn\n"
        "1\tone\t10\n"
        "2\ttwo\t20\n"
        + ps_out
        + "COUNT(*)\tSUM(n)\n"
        "3\t60\n"
        "Level\tCode\tMessage\n"
        "Warning\t1366\tIncorrect integer value: 'abc' for column 'n' at row 1\n"
        "n\n"
        "0\n",
    )
    # An error stops the batch with the server's code and SQLSTATE on stderr and exit 1.
    r = subprocess.run(
        connection_args(a) + ["-e", "SELECT 1; SELEC 2; SELECT 3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    expect("exit status after a syntax error", r.returncode, 1)
    expect("output before the error", r.stdout, "1\n1\n")
    if "ERROR 1064 (42000) at line 1: You have an error in your SQL" not in r.stderr:
        fail(f"syntax error message: {r.stderr!r}")
    # --show-warnings prints each statement's warnings after it.
    r = subprocess.run(
        connection_args(a)
        + ["--show-warnings", "-e", "SET sql_mode = ''; SELECT CAST('7x' AS SIGNED) AS v"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if r.returncode != 0:
        fail(f"--show-warnings exited with {r.returncode}: {r.stderr}")
    expect(
        "--show-warnings output",
        r.stdout,
        "v\n7\nWarning (Code 1292): Truncated incorrect INTEGER value: '7x'\n",
    )


class Session:
    """The client running in a pseudo-terminal."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe(args[0], args, env)
            finally:
                os._exit(127)
        self.log = ""

    def read_until_prompt(self, timeout=30):
        out = ""
        deadline = time.monotonic() + timeout
        while True:
            text = out.replace("\r\n", "\n")
            if PROMPT.search(text):
                self.log += text
                return PROMPT.sub("", text)
            if CONTINUATION.search(text):
                fail(f"the client waits for more input (statement not complete):\n{text}")
            left = deadline - time.monotonic()
            if left <= 0:
                fail(f"no prompt within {timeout} s; the client printed:\n{self.log}{text}")
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                fail(f"the client exited; it printed:\n{self.log}{text}")
            out += chunk.decode("utf-8", "replace")

    def run(self, line, *wants):
        """Types `line`, returns what was printed before the next prompt (without the echo)
        after checking that each of `wants` appears in it."""
        os.write(self.fd, line.encode() + b"\n")
        out = self.read_until_prompt()
        echo = line + "\n"
        if out.startswith(echo):
            out = out[len(echo):]
        for w in wants:
            if w not in out:
                fail(f"after {line!r}: {w!r} not in the output:\n{out}")
        return out

    def close(self):
        os.write(self.fd, b"exit\n")
        out = ""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.fd], [], [], 1)
            if r:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk.decode("utf-8", "replace")
        _, status = os.waitpid(self.pid, 0)
        if "Bye" not in out:
            fail(f"no 'Bye' after exit: {out!r}")
        expect("exit status of the interactive client", os.waitstatus_to_exitcode(status), 0)


def table(out):
    """The cells of the result table in `out`, header first."""
    rows = []
    for line in out.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def interactive(a, env):
    s = Session(connection_args(a), env)
    greeting = s.read_until_prompt()
    if "Server version: 8.0." not in greeting:
        fail(f"greeting without the server version:\n{greeting}")
    s.run("DROP DATABASE IF EXISTS cliterm;")
    s.run("CREATE DATABASE cliterm;", "Query OK, 1 row affected")
    s.run("CREATE TABLE cliterm.t (id INT PRIMARY KEY, n INT);", "Query OK, 0 rows affected")
    # USE makes the client read the table names (and COM_FIELD_LIST) for completion.
    s.run("USE cliterm", "Database changed")
    s.run(
        "INSERT INTO t VALUES (1, 10), (2, 20);",
        "Query OK, 2 rows affected",
        "Records: 2  Duplicates: 0  Warnings: 0",
    )
    out = s.run("SELECT id, n FROM t ORDER BY id;", "2 rows in set")
    expect("SELECT table", table(out), [["id", "n"], ["1", "10"], ["2", "20"]])
    s.run("PREPARE s FROM 'SELECT n FROM t WHERE id = ?';", "Statement prepared")
    s.run("SET @i = 2;", "Query OK, 0 rows affected")
    out = s.run("EXECUTE s USING @i;", "1 row in set")
    expect("EXECUTE table", table(out), [["n"], ["20"]])
    s.run("DEALLOCATE PREPARE s;", "Query OK")
    # Rolled back: nothing stays. Committed: the change stays.
    s.run("BEGIN;", "Query OK, 0 rows affected")
    s.run("INSERT INTO t VALUES (3, 30);", "Query OK, 1 row affected")
    s.run("ROLLBACK;", "Query OK, 0 rows affected")
    s.run("START TRANSACTION;")
    s.run(
        "UPDATE t SET n = 11 WHERE id = 1;",
        "Query OK, 1 row affected",
        "Rows matched: 1  Changed: 1  Warnings: 0",
    )
    s.run("COMMIT;", "Query OK, 0 rows affected")
    out = s.run("SELECT COUNT(*), SUM(n) FROM t;")
    expect("after ROLLBACK and COMMIT", table(out), [["COUNT(*)", "SUM(n)"], ["2", "31"]])
    # \W shows the warnings after each statement; \w stops that.
    s.run("\\W", "Show warnings enabled.")
    s.run("SET sql_mode = '';")
    s.run(
        "INSERT INTO t VALUES (5, 'abc');",
        "Query OK, 1 row affected, 1 warning",
        "Warning (Code 1366): Incorrect integer value: 'abc' for column 'n' at row 1",
    )
    s.run("\\w", "Show warnings disabled.")
    out = s.run("INSERT INTO t VALUES (6, 'xyz');", "Query OK, 1 row affected, 1 warning")
    if "Code 1366" in out:
        fail(f"warnings still shown after \\w:\n{out}")
    # SHOW WARNINGS lists them without counting any of its own.
    out = s.run("SHOW WARNINGS;", "1 row in set (")
    expect(
        "SHOW WARNINGS table",
        table(out),
        [
            ["Level", "Code", "Message"],
            ["Warning", "1366", "Incorrect integer value: 'xyz' for column 'n' at row 1"],
        ],
    )
    out = s.run("SELECT id, n FROM t WHERE id >= 5 ORDER BY id;")
    expect("warned rows", table(out), [["id", "n"], ["5", "0"], ["6", "0"]])
    # Errors keep the session.
    s.run("SELECT * FROM nope;", "ERROR 1146 (42S02): Table 'cliterm.nope' doesn't exist")
    # status: SELECT DATABASE(), USER(), the character sets and COM_STATISTICS.
    s.run("status", "Current database:\tcliterm", "Uptime:", "Threads: ")
    s.run("DROP DATABASE cliterm;", "Query OK")
    s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--socket")
    ap.add_argument("--client", default="mariadb")
    a = ap.parse_args()
    if shutil.which(a.client) is None:
        fail(f"{a.client} is not installed")
    signal.alarm(240)  # never hang a test run
    home = tempfile.mkdtemp(prefix="mariadb-cli-")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "TERM": "dumb",
        "MYSQL_HISTFILE": "/dev/null",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    try:
        batch(a, env)
        interactive(a, env)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("mariadb CLI: OK")


if __name__ == "__main__":
    main()
