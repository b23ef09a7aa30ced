#!/usr/bin/python3
"""latin1 connections, end to end with PyMySQL: a client whose connection character set is
latin1 (from the handshake, and by SET NAMES) sends latin1 bytes and gets latin1 bytes back,
including Windows-1252's 0x80..0x9F (MySQL's latin1 is cp1252); a utf8mb4 client reads the same
rows as UTF-8; a character latin1 lacks comes back as '?'.

Usage: latin1_client.py --host 127.0.0.1 --port 3306 [--socket /path/to.sock]
Prints "latin1: OK" and exits 0, or prints what differed and exits 1.
"""

import os
import sys

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbapi_scenario import args  # noqa: E402


def fail(msg):
    print(f"latin1: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def expect(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def main():
    a = args()
    kw = dict(user="root", password="", connect_timeout=10, read_timeout=60, autocommit=True)
    if a.socket:
        kw["unix_socket"] = a.socket
    else:
        kw.update(host=a.host, port=a.port)

    u = pymysql.connect(charset="utf8mb4", **kw).cursor()
    u.execute("CREATE DATABASE IF NOT EXISTS l1")
    u.execute("DROP TABLE IF EXISTS l1.t")
    u.execute(
        "CREATE TABLE l1.t (id INT PRIMARY KEY, a VARCHAR(10) CHARACTER SET latin1, "
        "b VARCHAR(10), bin VARBINARY(10))"
    )
    u.execute("INSERT INTO l1.t VALUES (1, 'café', 'é€日', x'E9')")

    # The handshake's collation (PyMySQL sends latin1_swedish_ci, 8) sets the connection.
    # binary_prefix: bytes go as _binary'...', which keeps them bytes. (A plain non-ASCII
    # string literal stored into a binary column from a latin1 connection is stored as UTF-8,
    # where MySQL stores its latin1 bytes: strings inside the server are UTF-8.)
    conn = pymysql.connect(charset="latin1", binary_prefix=True, **kw)
    c = conn.cursor()
    c.execute("SELECT @@character_set_client, @@character_set_results, @@collation_connection")
    expect("variables", c.fetchone(), ("latin1", "latin1", "latin1_swedish_ci"))
    # PyMySQL encodes the statement in cp1252 and decodes results with it.
    c.execute("INSERT INTO l1.t VALUES (%s, %s, %s, %s)", (2, "Œuvre", "naïve €", b"\x80"))
    c.execute("SELECT id, a, b, bin FROM l1.t ORDER BY id")
    expect(
        "latin1 rows",
        c.fetchall(),
        ((1, "café", "é€?", b"\xe9"), (2, "Œuvre", "naïve €", b"\x80")),
    )
    expect("text column type", c.description[1][1], pymysql.constants.FIELD_TYPE.VAR_STRING)
    # The bytes on the wire: HEX() is computed in the server's UTF-8.
    c.execute("SELECT HEX(b) FROM l1.t WHERE id = 2")
    expect("stored as UTF-8", c.fetchone()[0], "6E61C3AF766520E282AC")

    # SET NAMES utf8mb4 on the same connection switches both directions.
    c.execute("SET NAMES utf8mb4")
    conn.encoding = "utf8"
    c.execute("SELECT b FROM l1.t WHERE id = 1")
    expect("after SET NAMES utf8mb4", c.fetchone()[0], "é€日")

    # A utf8mb4 client reads what the latin1 client wrote.
    u.execute("SELECT a, b FROM l1.t WHERE id = 2")
    expect("utf8mb4 reader", u.fetchone(), ("Œuvre", "naïve €"))
    print("latin1: OK")


if __name__ == "__main__":
    main()
