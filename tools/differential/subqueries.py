#!/usr/bin/env python3
"""Random correlated subqueries run on innoxide and on MariaDB 10.11, results compared.

Builds two small tables (t1: 300 rows, t2: 1,200 rows, NULLs and case-differing strings
among their values, indexes on the columns the subqueries join on) in a database `rdiff` on
both servers, then runs --queries random SELECTs over t1 whose WHERE (and, one in five, select
list) holds correlated subqueries of every kind: EXISTS, NOT EXISTS, IN, NOT IN, scalar COUNT
and MAX, ANY; an equality or another comparison to the outer row, with or without a condition
of its own; alone, beside another condition, inside an OR, after a BETWEEN on the outer key,
two of them, or nested with a reference two levels out. A query's rows (or its error code)
must be the same on both servers; the differing ones are printed (the first five) and the exit
status is 1 if any differ.

    /usr/bin/python3 tools/differential/subqueries.py --innoxide /tmp/s1/sock \\
        --mariadb /tmp/mdb/sock --seed 1 --queries 300

Both servers run with MySQL 8.0's sql_mode; the seed makes a run repeatable.
"""

import argparse
import random
import sys

import pymysql

SQL_MODE = (
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)


def tables(rnd):
    """The statements that make and fill the two tables."""
    out = [
        "DROP DATABASE IF EXISTS rdiff",
        "CREATE DATABASE rdiff",
        "USE rdiff",
        "CREATE TABLE t1 (id INT PRIMARY KEY, g INT, v INT, "
        "s VARCHAR(6) COLLATE utf8mb4_general_ci, KEY (g))",
        "CREATE TABLE t2 (id INT PRIMARY KEY, t1_id INT, w INT, "
        "s VARCHAR(6) COLLATE utf8mb4_general_ci, KEY (t1_id), KEY (w))",
    ]
    strings = ["a", "b", "A", "c", "ab", "B "]
    rows = []
    for i in range(1, 301):
        g = "NULL" if i % 13 == 0 else str(i % 17)
        v = "NULL" if i % 7 == 0 else str((i * 37) % 50)
        s = "NULL" if i % 11 == 0 else "'%s'" % rnd.choice(strings)
        rows.append(f"({i},{g},{v},{s})")
    out.append("INSERT INTO t1 VALUES " + ",".join(rows))
    rows = []
    for i in range(1, 1201):
        t = "NULL" if i % 19 == 0 else str(rnd.randint(1, 330))
        w = "NULL" if i % 23 == 0 else str(rnd.randint(0, 60))
        s = "NULL" if i % 29 == 0 else "'%s'" % rnd.choice(strings)
        rows.append(f"({i},{t},{w},{s})")
    out.append("INSERT INTO t2 VALUES " + ",".join(rows))
    out.append("ANALYZE TABLE t1, t2")
    return out


def correlation(rnd):
    """A condition of t2 on the outer row of t1, maybe with one of its own."""
    outer = rnd.choice(["t1.id", "t1.g", "t1.v", "t1.id + 1", "t1.s"])
    inner = "t2.s" if outer == "t1.s" else rnd.choice(["t2.t1_id", "t2.w", "t2.id"])
    op = rnd.choice(["=", "=", "=", "<", ">", "<>"])
    own = rnd.choice(
        [
            "",
            " AND t2.w = %d" % rnd.randint(0, 60),
            " AND t2.w < %d" % rnd.randint(0, 60),
            " AND t2.s = 'a'",
            " AND t2.id > %d" % rnd.randint(0, 1200),
            " AND t2.w IS NULL",
        ]
    )
    return f"{inner} {op} {outer}{own}"


def subquery(rnd):
    """A correlated subquery used as a condition."""
    c = correlation(rnd)
    return rnd.choice(
        [
            f"EXISTS (SELECT 1 FROM t2 WHERE {c})",
            f"NOT EXISTS (SELECT * FROM t2 WHERE {c})",
            f"t1.v IN (SELECT t2.w FROM t2 WHERE {c})",
            f"t1.v NOT IN (SELECT t2.w FROM t2 WHERE {c})",
            f"(SELECT COUNT(*) FROM t2 WHERE {c}) > %d" % rnd.randint(0, 5),
            f"(SELECT MAX(t2.w) FROM t2 WHERE {c}) > %d" % rnd.randint(0, 60),
            f"t1.v > ANY (SELECT t2.w FROM t2 WHERE {c})",
        ]
    )


def query(rnd):
    """One SELECT over t1 with correlated subqueries."""
    w = subquery(rnd)
    r = rnd.random()
    if r < 0.3:
        w = f"{w} AND t1.g = {rnd.randint(0, 16)}"
    elif r < 0.5:
        w = f"({w} OR t1.id < {rnd.randint(0, 50)})"
    elif r < 0.6:
        w = f"t1.id BETWEEN {rnd.randint(1, 100)} AND {rnd.randint(100, 300)} AND {w}"
    elif r < 0.7:
        w = f"{w} AND {subquery(rnd)}"
    elif r < 0.85:
        inner = rnd.choice(
            [
                "t3.w = t2.w AND t3.t1_id = t1.id",
                "t3.id = t2.t1_id AND t3.w > t1.v",
                "t3.s = t2.s AND t3.id < t1.id",
            ]
        )
        w = (
            f"EXISTS (SELECT 1 FROM t2 WHERE {correlation(rnd)} "
            f"AND EXISTS (SELECT 1 FROM t2 t3 WHERE {inner}))"
        )
    items = "t1.id"
    if rnd.random() < 0.2:
        items = (
            f"t1.id, (SELECT COUNT(*) FROM t2 WHERE {correlation(rnd)}), "
            f"(SELECT MIN(t2.id) FROM t2 WHERE {correlation(rnd)})"
        )
    return f"SELECT {items} FROM t1 WHERE {w} ORDER BY t1.id"


def result(conn, sql):
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return ("rows", cur.fetchall())
    except pymysql.MySQLError as e:
        return ("error", e.args[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--innoxide", required=True, help="innoxide's Unix socket")
    ap.add_argument("--mariadb", required=True, help="MariaDB's Unix socket")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--queries", type=int, default=300, help="queries to compare (default 300)")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    servers = [
        pymysql.connect(unix_socket=s, user="root", autocommit=True)
        for s in (args.innoxide, args.mariadb)
    ]
    setup = tables(rnd)
    for conn in servers:
        cur = conn.cursor()
        for sql in setup:
            cur.execute(sql)
        cur.execute(f"SET SESSION sql_mode = '{SQL_MODE}'")
    differ = 0
    for _ in range(args.queries):
        sql = query(rnd)
        ours, theirs = (result(c, sql) for c in servers)
        if ours != theirs:
            differ += 1
            if differ <= 5:
                print("DIFFERENT:", sql)
                print("  innoxide:", str(ours)[:300])
                print("  mariadb: ", str(theirs)[:300])
    print(f"{args.queries} queries, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
