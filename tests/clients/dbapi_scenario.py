"""The scenario both Python DB-API drivers run against innoxide (pymysql_client.py,
mysqldb_client.py): each driver script supplies what differs (connect, reading the warning
count of the last statement, its IntegrityError class, ping) as a `Driver`.

Neither driver has server-side prepared statements: `cursor.execute(sql, args)` escapes the
arguments and interpolates them on the client, so the "prepared statement" here is that
parameter interpolation (including a NULL and a quote that must be escaped).
"""

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Driver:
    name: str  # as printed: "<name>: OK"
    db: str  # the database the run creates and drops
    connect: Callable[..., Any]  # (db or None, autocommit) -> connection
    warning_count: Callable[[Any], int]  # connection -> warnings of its last statement
    integrity_error: type
    ping: Callable[[Any], None]


def args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--socket")
    return ap.parse_args()


def run(d: Driver):
    def fail(msg):
        print(f"{d.name}: FAIL: {msg}", file=sys.stderr)
        sys.exit(1)

    def expect(what, got, want):
        if got != want:
            fail(f"{what}: got {got!r}, want {want!r}")

    conn = d.connect(None, False)
    cur = conn.cursor()
    cur.execute("SELECT @@autocommit")
    expect("autocommit after connect (the DB-API default: off)", cur.fetchone(), (0,))

    cur.execute(f"DROP DATABASE IF EXISTS {d.db}")
    cur.execute(f"CREATE DATABASE {d.db}")
    conn.select_db(d.db)  # COM_INIT_DB
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), n INT)")

    # Client-side parameter interpolation; executemany batches into one multi-row INSERT.
    n = cur.executemany(
        "INSERT INTO t (id, name, n) VALUES (%s, %s, %s)",
        [(1, "one", 10), (2, "it's", 20), (3, "three", 30), (4, None, None)],
    )
    expect("rows inserted by executemany", n, 4)
    conn.commit()
    cur.execute("SELECT name, n FROM t WHERE id = %s", (2,))
    expect("row 2", cur.fetchall(), (("it's", 20),))
    cur.execute("SELECT name, n FROM t WHERE id = %(id)s", {"id": 4})
    expect("row 4 (NULLs)", cur.fetchone(), (None, None))
    cur.execute("SELECT SUM(n) FROM t WHERE id BETWEEN %s AND %s", (1, 3))
    expect("SUM(n)", int(cur.fetchone()[0]), 60)

    # A transaction that commits and one that rolls back; another connection checks what
    # became visible.
    conn.begin()
    cur.execute("INSERT INTO t (id, name, n) VALUES (%s, %s, %s)", (10, "ten", 100))
    cur.execute("UPDATE t SET n = n + 1 WHERE id = 1")
    expect("rows changed by UPDATE", cur.rowcount, 1)
    conn.commit()
    conn.begin()
    cur.execute("INSERT INTO t (id, name, n) VALUES (11, 'eleven', 110)")
    cur.execute("DELETE FROM t WHERE id = 2")
    cur.execute("UPDATE t SET n = 0 WHERE id = 1")
    conn.rollback()
    other = d.connect(d.db, True)
    oc = other.cursor()
    oc.execute("SELECT id, n FROM t ORDER BY id")
    expect(
        "rows seen by another client",
        oc.fetchall(),
        ((1, 11), (2, 20), (3, 30), (4, None), (10, 100)),
    )
    other.close()

    # Warnings: outside strict mode 'abc' into an INT column is stored as 0 with warning 1366,
    # and a string too long for VARCHAR(10) is cut with warning 1265.
    cur.execute("SET sql_mode = ''")
    cur.execute("INSERT INTO t (id, name, n) VALUES (%s, %s, %s)", (20, "w", "abc"))
    expect("warning count of the INSERT", d.warning_count(conn), 1)
    cur.execute("SHOW WARNINGS")
    expect(
        "SHOW WARNINGS",
        cur.fetchall(),
        (("Warning", 1366, "Incorrect integer value: 'abc' for column 'n' at row 1"),),
    )
    expect("warning count of SHOW WARNINGS itself", d.warning_count(conn), 0)
    cur.execute("INSERT INTO t (id, name) VALUES (21, 'abcdefghijklmno')")
    expect("warning count after a too-long string", d.warning_count(conn), 1)
    cur.execute("SHOW WARNINGS")
    expect(
        "SHOW WARNINGS after a too-long string",
        cur.fetchall(),
        (("Warning", 1265, "Data truncated for column 'name' at row 1"),),
    )
    cur.execute("SELECT id, name, n FROM t WHERE id >= 20 ORDER BY id")
    expect("warned rows", cur.fetchall(), ((20, "w", 0), (21, "abcdefghij", None)))
    conn.commit()

    # A duplicate key is error 1062 and the connection stays usable.
    try:
        cur.execute("INSERT INTO t (id) VALUES (%s)", (1,))
        fail("duplicate key: no error")
    except d.integrity_error as e:
        expect("duplicate key error number", e.args[0], 1062)
    conn.rollback()
    d.ping(conn)  # COM_PING
    cur.execute(f"DROP DATABASE {d.db}")
    conn.close()
    print(f"{d.name}: OK")
