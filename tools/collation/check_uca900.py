#!/usr/bin/env python3
"""Checks innoxide's utf8mb4_0900_ai_ci order against MariaDB 10.11's utf8mb4_uca1400_nopad_ai_ci
(the same algorithm at the primary level, NO PAD, from DUCET 14.0.0 where MySQL 8.0 uses
9.0.0), through both servers' SQL: a table with one row per character, ranked by the column.

    /usr/bin/python3 tools/collation/check_uca900.py --innoxide-port 3551 --mariadb-socket /tmp/mdb/sock

The characters are those Unicode 9.0 assigned (Perl's Unicode::UCD lists them), up to
U+2FFFF, but Hangul syllables (MariaDB gives them implicit weights where MySQL weighs their
jamo), private use and all but the first 64 core Han ideographs (implicit weights in both).
Prints the pairs of characters whose order differs: these come from DUCET's changes between
versions (7 of 36,454 characters on 2026-11-25: Arabic letters with high hamza and a few
others DUCET 14.0 moved) and must stay few (the exit status is 1 past 20).
"""

import argparse
import bisect
import os
import sys

import pymysql

sys.path.insert(0, os.path.dirname(__file__))
from uca900 import unicode_9_chars  # noqa: E402

SKIP = [(0x3400, 0x4DB5), (0x4E40, 0x9FD5), (0xAC00, 0xD7A3), (0xD800, 0xF8FF), (0x20000, 0x2CEA1)]


def characters():
    inv = unicode_9_chars()
    return [
        cp
        for cp in range(0, 0x30000)
        if bisect.bisect_right(inv, cp) % 2 == 1 and not any(a <= cp <= b for a, b in SKIP)
    ]


def ranks(conn, collation, cps):
    """{code point: dense rank of its character under `collation`}."""
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS uca_check")
    cur.execute(
        f"CREATE TABLE uca_check (cp INT PRIMARY KEY, c VARCHAR(4) CHARACTER SET utf8mb4 "
        f"COLLATE {collation} NOT NULL)"
    )
    for i in range(0, len(cps), 1000):
        chunk = cps[i : i + 1000]
        cur.execute(
            "INSERT INTO uca_check VALUES " + ",".join(["(%s, %s)"] * len(chunk)),
            [v for cp in chunk for v in (cp, chr(cp))],
        )
    conn.commit()
    cur.execute("SELECT cp, DENSE_RANK() OVER (ORDER BY c) FROM uca_check")
    out = {cp: r for cp, r in cur.fetchall()}
    cur.execute("DROP TABLE uca_check")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--innoxide-host", default="127.0.0.1")
    ap.add_argument("--innoxide-port", type=int, default=3306)
    ap.add_argument("--mariadb-socket", required=True)
    args = ap.parse_args()
    cps = characters()
    ours = pymysql.connect(host=args.innoxide_host, port=args.innoxide_port, user="root", charset="utf8mb4")
    theirs = pymysql.connect(unix_socket=args.mariadb_socket, user="root", charset="utf8mb4")
    for c in (ours, theirs):
        c.cursor().execute("CREATE DATABASE IF NOT EXISTS uca_check")
        c.select_db("uca_check")
    a = ranks(ours, "utf8mb4_0900_ai_ci", cps)
    b = ranks(theirs, "utf8mb4_uca1400_nopad_ai_ci", cps)
    order = sorted(cps, key=lambda cp: (a[cp], cp))
    bad = []
    for x, y in zip(order, order[1:]):
        same_ours, same_theirs = a[x] == a[y], b[x] == b[y]
        if same_ours != same_theirs or (not same_ours and b[x] > b[y]):
            bad.append((x, y))
    for x, y in bad:
        rel = "=" if a[x] == a[y] else "<"
        print(f"U+{x:04X} {rel} U+{y:04X} in innoxide; MariaDB ranks {b[x]} and {b[y]}")
    print(f"{len(cps)} characters, {len(bad)} adjacent pairs ordered differently")
    for c in (ours, theirs):
        c.cursor().execute("DROP DATABASE uca_check")
    sys.exit(0 if len(bad) <= 20 else 1)


if __name__ == "__main__":
    main()
