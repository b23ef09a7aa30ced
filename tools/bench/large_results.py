#!/usr/bin/env python3
"""Large results side by side: innoxide and a private MariaDB 10.11 with the same settings
(tools/bench/servers.py) and the same dbSTRESS data (`innoxide-bench dbstress load`, HISTORY =
20 x --objects rows), then each query run --repeat times, alternating servers. Reported per
query and server: the client's wall time for the whole result (`mariadb --quick`, output
discarded) and how much the server's peak resident memory (VmHWM) grew while it ran. Each
result is checked: its row count must be the one expected, a sorted result must come in its
order, and a window function's rows must be the same on both servers, else the run fails.

    python3 tools/bench/large_results.py --innoxide target/release/innoxide \\
        --bench target/release/innoxide-bench --objects 50000 --repeat 2
"""

import argparse
import hashlib
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, MariadbServer, Settings  # noqa: E402

def sorted_by_created_desc(out):
    """True if the rows (REF_OBJECT, HORDER, REF_STAT, VALUE, NOTE, CREATED) come in
    CREATED DESC, REF_OBJECT, HORDER order."""
    prev = None
    for line in out.splitlines():
        f = line.split(b"\t")
        key = (f[5], -int(f[0]), -int(f[1]))
        if prev is not None and key > prev:
            return False
        prev = key
    return True


# The check of a query whose rows (in any order) must be the same on every server and run.
SAME = "same rows on both servers"

QUERIES = [
    # (label, statement, expected rows as a function of --objects[, check of the output])
    ("SELECT * FROM HISTORY", "SELECT * FROM HISTORY", lambda n: 20 * n),
    (
        "SELECT * FROM HISTORY ORDER BY CREATED DESC, REF_OBJECT, HORDER",
        "SELECT * FROM HISTORY ORDER BY CREATED DESC, REF_OBJECT, HORDER",
        lambda n: 20 * n,
        sorted_by_created_desc,
    ),
    (
        "SELECT * FROM HISTORY ORDER BY CREATED DESC, REF_OBJECT LIMIT 10",
        "SELECT * FROM HISTORY ORDER BY CREATED DESC, REF_OBJECT LIMIT 10",
        lambda n: 10,
    ),
    (
        "SELECT REF_OBJECT, HORDER FROM HISTORY WHERE REF_STAT < 100",
        "SELECT REF_OBJECT, HORDER FROM HISTORY WHERE REF_STAT < 100",
        None,
    ),
    (
        "GROUP BY REF_OBJECT (OBJECT groups)",
        "SELECT REF_OBJECT, COUNT(*), MAX(CREATED) FROM HISTORY GROUP BY REF_OBJECT",
        lambda n: n,
    ),
    (
        "GROUP BY REF_STAT (1,000 groups)",
        "SELECT REF_STAT, COUNT(*), SUM(VALUE) FROM HISTORY GROUP BY REF_STAT",
        None,
    ),
    (
        "GROUP BY REF_OBJECT, HORDER (a group per row)",
        "SELECT REF_OBJECT, HORDER, COUNT(*) FROM HISTORY GROUP BY REF_OBJECT, HORDER",
        lambda n: 20 * n,
    ),
    (
        "SELECT DISTINCT REF_OBJECT, REF_STAT",
        "SELECT DISTINCT REF_OBJECT, REF_STAT FROM HISTORY",
        None,
    ),
    (
        "scan: COUNT, SUM of a DECIMAL and a BIGINT",
        "SELECT COUNT(*), SUM(VALUE), SUM(HORDER) FROM HISTORY",
        lambda n: 1,
        SAME,
    ),
    (
        "scan: AVG, MIN, MAX of a DECIMAL",
        "SELECT AVG(VALUE), MIN(VALUE), MAX(VALUE) FROM HISTORY",
        lambda n: 1,
        SAME,
    ),
    (
        "scan: string range, MAX of a string",
        "SELECT COUNT(*), MAX(NOTE), MIN(CREATED) FROM HISTORY WHERE NOTE < 'c'",
        lambda n: 1,
        SAME,
    ),
    (
        "scan: LIKE '%zz%'",
        "SELECT COUNT(*) FROM HISTORY WHERE NOTE LIKE '%zz%'",
        lambda n: 1,
        SAME,
    ),
    (
        "IN (SELECT ...) of numbers, 1,000 values",
        "SELECT COUNT(*) FROM HISTORY WHERE HORDER IN (SELECT REF_STAT FROM STAT)",
        lambda n: 1,
        SAME,
    ),
    (
        "IN (SELECT ...) of strings, 1,980 values",
        "SELECT COUNT(*) FROM HISTORY WHERE NOTE IN "
        "(SELECT NOTE FROM HISTORY WHERE REF_OBJECT < 100)",
        lambda n: 1,
        SAME,
    ),
    (
        "JOIN (SELECT ... GROUP BY) ON equality, 1,000 derived rows",
        "SELECT COUNT(*), SUM(d.c) FROM HISTORY h JOIN (SELECT REF_STAT, COUNT(*) AS c "
        "FROM HISTORY WHERE REF_OBJECT <= 1000 GROUP BY REF_STAT) d ON d.REF_STAT = h.REF_STAT",
        lambda n: 1,
        SAME,
    ),
    (
        "IN (SELECT ...) of 20 x OBJECT strings, past tmp_table_size",
        "SELECT COUNT(*) FROM HISTORY WHERE CONCAT(REF_OBJECT, ':', HORDER) IN "
        "(SELECT CONCAT(REF_OBJECT, ':', HORDER + 1) FROM HISTORY)",
        lambda n: 1,
        SAME,
    ),
    (
        "JOIN (SELECT ...) of 20 x OBJECT rows, past tmp_table_size",
        "SELECT COUNT(*), SUM(d.VALUE) FROM HISTORY h JOIN (SELECT REF_OBJECT, "
        "HORDER + 1 AS HORDER, VALUE FROM HISTORY) d "
        "ON d.REF_OBJECT = h.REF_OBJECT AND d.HORDER = h.HORDER",
        lambda n: 1,
        SAME,
    ),
    (
        "derived table over HISTORY, filtered on its key outside (merged)",
        "SELECT COUNT(*), SUM(d.VALUE) FROM (SELECT REF_OBJECT, HORDER, VALUE FROM HISTORY) d "
        "WHERE d.REF_OBJECT BETWEEN 1000 AND 1099",
        lambda n: 1,
        SAME,
    ),
    (
        "OBJECT joined to a derived table of HISTORY on its key (merged)",
        "SELECT COUNT(*), SUM(h.VALUE) FROM OBJECT o JOIN (SELECT REF_OBJECT, VALUE FROM "
        "HISTORY WHERE HORDER < 5) h ON h.REF_OBJECT = o.REF_OBJECT WHERE o.REF_OBJECT < 500",
        lambda n: 1,
        SAME,
    ),
    (
        "JOIN ON an unindexed column (SECTION, then OBJECT.REF_SECTION)",
        "SELECT COUNT(*), SUM(o.REF_OBJECT) FROM SECTION s JOIN OBJECT o "
        "ON o.REF_SECTION = s.REF_SECTION",
        lambda n: 1,
        SAME,
    ),
    (
        "window: ROW_NUMBER per OBJECT",
        "SELECT REF_OBJECT, HORDER, ROW_NUMBER() OVER (PARTITION BY REF_OBJECT "
        "ORDER BY VALUE DESC, HORDER) FROM HISTORY",
        lambda n: 20 * n,
        SAME,
    ),
    (
        "window: SUM over 11 rows, one partition",
        "SELECT REF_OBJECT, HORDER, SUM(VALUE) OVER (ORDER BY REF_OBJECT, HORDER "
        "ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) FROM HISTORY",
        lambda n: 20 * n,
        SAME,
    ),
    (
        "window: RANK by NOTE, one partition",
        "SELECT REF_OBJECT, HORDER, RANK() OVER (ORDER BY NOTE) FROM HISTORY",
        lambda n: 20 * n,
        SAME,
    ),
]


def peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def run_query(server, statement, check=None):
    """(seconds, rows, peak growth in MB, digest of the sorted rows or None) of one query
    read whole by the mariadb client; `check` (if any, but SAME) must accept the output."""
    before = peak_kb(server.pid)
    t0 = time.monotonic()
    r = subprocess.run(
        ["mariadb", "--no-defaults", "-S", server.socket, "-uroot", "-N", "-B", "--quick",
         "dbstress", "-e", statement],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    elapsed = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit("%s: %s failed: %s" % (server.name, statement, r.stderr.decode()))
    rows = r.stdout.count(b"\n")
    grown = (peak_kb(server.pid) - before) / 1024
    digest = None
    if check is SAME:
        digest = hashlib.sha256(b"\n".join(sorted(r.stdout.splitlines()))).hexdigest()
    elif check is not None and not check(r.stdout):
        raise SystemExit("%s: %s: the rows are not in order" % (server.name, statement))
    return elapsed, rows, grown, digest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--innoxide", default="target/release/innoxide", help="innoxide binary")
    ap.add_argument("--bench", default="target/release/innoxide-bench",
                    help="innoxide-bench binary (loads the data)")
    ap.add_argument("--objects", type=int, default=50000, help="dbSTRESS OBJECT rows")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each query per server")
    ap.add_argument("--match", default="",
                    help="run only the queries whose label contains this text")
    args = ap.parse_args()
    settings = Settings()
    servers = [InnoxideServer(args.innoxide, settings), MariadbServer(settings)]
    try:
        for s in servers:
            s.start()
            subprocess.run([args.bench, "dbstress", "load", "-S", s.socket,
                            "--objects", str(args.objects)], check=True,
                           stdout=subprocess.DEVNULL)
            s.sql("SELECT COUNT(*) FROM dbstress.HISTORY")
        print("| query | server | seconds | rows | server peak memory growth (MB) |")
        print("|---|---|---|---:|---|")
        for label, statement, want, *check in QUERIES:
            if args.match not in label:
                continue
            results = {s.name: [] for s in servers}
            for i in range(args.repeat):
                order = servers if i % 2 == 0 else servers[::-1]
                for s in order:
                    results[s.name].append(run_query(s, statement, *check))
            counts = {rows for runs in results.values() for _, rows, _, _ in runs}
            digests = {d for runs in results.values() for _, _, _, d in runs}
            if len(digests) != 1:
                raise SystemExit("%s: the servers' rows differ" % label)
            expected = want(args.objects) if want else None
            if len(counts) != 1 or (expected is not None and counts != {expected}):
                raise SystemExit("%s: row counts differ: %s (expected %s)"
                                 % (label, results, expected))
            for s in servers:
                runs = results[s.name]
                print("| `%s` | %s | %s | %d | %s |" % (
                    label, s.name,
                    " / ".join("%.3f" % t for t, _, _, _ in runs),
                    runs[0][1],
                    " / ".join("%.0f" % g for _, _, g, _ in runs)))
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    main()
