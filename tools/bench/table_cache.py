#!/usr/bin/env python3
"""The cost of opening a table with few and with many tables (issue #5, the table caches).

For each table count of --tables (default 100 and 15,000) an innoxide is started
(tools/bench/servers.py settings, table_open_cache_instances=1 so that one client uses the
whole table open cache) and given that many one-row tables; then one client at a time runs
--opens point selects `SELECT v FROM tc.t<k> WHERE id = 1`, k going round the tables in a
shuffled order, under three cache settings, alternating the servers run by run so that the
load of a shared machine falls on both alike:

hits          table_open_cache and table_definition_cache above the table count, after a
              warm-up pass: every open finds its table in the open cache.
open-misses   table_open_cache = 1 (below the table count), descriptions all cached: every
              open misses the open cache and takes the description from the definition cache.
all-misses    table_open_cache = 1 and table_definition_cache = 400 (MySQL's least) below the
              table count: every open also loads the description again (with 400 tables or
              fewer it cannot be below: reported as n/a).

(15,000 rather than 20,000: the engine keeps every tablespace file open, innodb_open_files
having no limit in innoxide, and near 20,000 tables a usual open-files limit of 20,000 makes
CREATE TABLE fail with "Too many open files".)

It reports the server's CPU time per statement (user + system from /proc/PID/stat, all
threads; the pages the CREATE TABLEs left dirty are written back before the runs) and the
client's wall time per statement, the least of --repeat runs first. The statement is the same for both table counts; only the
number of tables differs, so equal figures mean the cost of an open does not grow with it.

Checks (exit 1 when one fails): every SELECT returns its table's row; the counters moved as
the setting implies (hits: Table_open_cache_hits by --opens and no miss; open-misses: a miss
and an Opened_tables each, no description loaded; all-misses: a description loaded each);
Open_tables never exceeds table_open_cache after the runs.

    python3 tools/bench/table_cache.py --innoxide target/release/innoxide

With --before, a binary from before the table caches is measured the same way (the hits
setting only: it kept every description it had loaded), for comparison.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, ServerError, Settings  # noqa: E402


class Failed(Exception):
    pass


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far (all its threads, ended ones too)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quiesce(server):
    """Has the page cleaners write back what CREATE TABLE left dirty, so that their work does
    not count in the runs' CPU time."""
    server.sql("SET GLOBAL innodb_max_dirty_pages_pct = 0")
    deadline = time.monotonic() + 600
    while int(status(server)["Innodb_buffer_pool_pages_dirty"]) > 0:
        if time.monotonic() > deadline:
            raise Failed("dirty pages were not written back within 600 s")
        time.sleep(1)
    server.sql("SET GLOBAL innodb_max_dirty_pages_pct = DEFAULT")


def client(server, sql_file):
    """Runs a file of statements through one mariadb client; its output lines."""
    with open(sql_file, "rb") as f:
        r = subprocess.run(
            ["mariadb", "--no-defaults", "-S", server.socket, "-uroot", "-N", "-B"],
            stdin=f,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    if r.returncode != 0:
        raise Failed("client: %s" % r.stderr.decode(errors="replace")[-2000:])
    return r.stdout.decode().split()


def status(server):
    out = server.sql("SHOW GLOBAL STATUS")
    return {k: v for k, _, v in (line.partition("\t") for line in out.splitlines())}


def counters(server):
    st = status(server)
    names = [
        "Open_tables",
        "Opened_tables",
        "Table_open_cache_hits",
        "Table_open_cache_misses",
        "Opened_table_definitions",
        "Open_table_definitions",
    ]
    return {n: int(st[n]) for n in names}


def create_tables(server, n, tmp):
    path = os.path.join(tmp, "create.sql")
    with open(path, "w") as f:
        f.write("CREATE DATABASE tc;\n")
        for i in range(n):
            f.write("CREATE TABLE tc.t%d (id INT PRIMARY KEY, v INT);\n" % i)
            f.write("INSERT INTO tc.t%d VALUES (1, %d);\n" % (i, i))
    t0 = time.monotonic()
    client(server, path)
    return time.monotonic() - t0


def select_file(tmp, order, opens):
    """The statements of a run: `opens` point selects going round `order`; the values each
    must return."""
    path = os.path.join(tmp, "select-%d-%d.sql" % (len(order), opens))
    want = [order[i % len(order)] for i in range(opens)]
    if not os.path.exists(path):
        with open(path, "w") as f:
            for k in want:
                f.write("SELECT v FROM tc.t%d WHERE id = 1;\n" % k)
    return path, [str(k) for k in want]


def run(server, path, want):
    before = cpu_seconds(server.pid)
    t0 = time.monotonic()
    got = client(server, path)
    wall = time.monotonic() - t0
    cpu = cpu_seconds(server.pid) - before
    if got != want:
        bad = next(i for i, (a, b) in enumerate(zip(got + [None] * len(want), want)) if a != b)
        raise Failed("statement %d returned %r, not %r" % (bad, got[bad:bad + 1], want[bad]))
    return cpu / len(want) * 1e6, wall / len(want) * 1e6


SETTINGS = [("hits", 524288, 524288), ("open-misses", 1, 524288), ("all-misses", 1, 400)]


def prepare(args, n, tmp, started):
    """Starts a server (appended to `started`) holding `n` tables; (n, server, the statements
    of a run, the statements of a warm-up pass)."""
    settings = Settings(buffer_pool=args.buffer_pool, flush_log_at_trx_commit=0, doublewrite=False)
    s = InnoxideServer(args.innoxide, settings, ["--table-open-cache-instances=1"])
    started.append(s)
    s.start()
    secs = create_tables(s, n, tmp)
    log("%d tables created in %.0f s" % (n, secs))
    quiesce(s)
    order = list(range(n))
    random.Random(n).shuffle(order)
    return n, s, select_file(tmp, order, args.opens), select_file(tmp, order, n)


def measure(args, servers):
    """Runs each setting on each server, alternating servers run by run. Rows (tables,
    setting, [(cpu us, wall us)] or None where the setting cannot apply)."""
    rows = []
    for name, open_cache, def_cache in SETTINGS[:1] if args.before else SETTINGS:
        # With 400 tables or fewer every description fits in the least table_definition_cache.
        group = [x for x in servers if name != "all-misses" or x[0] > 400]
        runs = {x[0]: [] for x in group}
        for _, s, _, warm in group:
            if not args.before:
                s.sql("SET GLOBAL table_open_cache = %d" % open_cache)
                s.sql("SET GLOBAL table_definition_cache = %d" % def_cache)
            run(s, *warm)
        for rep in range(args.repeat):
            for n, s, statements, _ in group:
                c0 = None if args.before else counters(s)
                cpu, wall = run(s, *statements)
                if c0 is not None:
                    c1 = counters(s)
                    check(name, {k: c1[k] - c0[k] for k in c0}, c1, open_cache, args.opens)
                log("%d tables, %s, run %d: %.1f us CPU, %.1f us wall per statement" % (n, name, rep + 1, cpu, wall))
                runs[n].append((cpu, wall))
        rows += [(x[0], name, runs.get(x[0])) for x in servers]
    return rows


def check(name, d, now, open_cache, opens):
    def need(cond, what):
        if not cond:
            raise Failed("%s: %s (%r)" % (name, what, d))

    if name == "hits":
        need(d["Table_open_cache_hits"] == opens, "a hit per statement")
        need(d["Table_open_cache_misses"] == 0 and d["Opened_tables"] == 0, "no miss")
    else:
        need(d["Table_open_cache_misses"] == opens, "a miss per statement")
        need(d["Opened_tables"] == opens, "an Opened_tables per statement")
        need(now["Open_tables"] <= open_cache, "Open_tables within table_open_cache")
    if name == "all-misses":
        need(d["Opened_table_definitions"] == opens, "a description loaded per statement")
    else:
        need(d["Opened_table_definitions"] == 0, "no description loaded")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--innoxide", default="target/release/innoxide", help="the innoxide binary")
    p.add_argument("--tables", default="100,15000", help="table counts (default 100,15000)")
    p.add_argument("--opens", type=int, default=50000, help="statements per run (default 50000)")
    p.add_argument("--repeat", type=int, default=3, help="runs per setting and server (default 3)")
    p.add_argument("--buffer-pool", default="512M", help="innodb_buffer_pool_size of each server")
    p.add_argument(
        "--before",
        action="store_true",
        help="a binary from before the table caches (it kept every description): the hits "
        "setting only, without the SETs and the counter checks",
    )
    args = p.parse_args()
    started = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-table-cache-") as tmp:
            try:
                servers = [prepare(args, int(n), tmp, started) for n in args.tables.split(",")]
                rows = measure(args, servers)
            finally:
                for s in started:
                    s.stop()
    except (Failed, ServerError) as e:
        log("FAILED: %s" % e)
        return 1
    print("| tables | setting | server CPU us/statement: least (runs) | client wall us/statement: least (runs) |")
    print("|---:|---|---:|---:|")
    for n, name, runs in rows:
        if not runs:
            print("| %d | %s | n/a | n/a |" % (n, name))
            continue
        cpu = ", ".join("%.1f" % r[0] for r in runs)
        wall = ", ".join("%.1f" % r[1] for r in runs)
        least = min(r[0] for r in runs), min(r[1] for r in runs)
        print("| %d | %s | %.1f (%s) | %.1f (%s) |" % (n, name, least[0], cpu, least[1], wall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
