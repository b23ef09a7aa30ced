#!/usr/bin/env python3
"""Cold full scan: how long a full scan of a table takes after a restart with a cold buffer
pool and a cold OS page cache, with linear read-ahead (innodb_read_ahead_threshold=56, the
default), with it off (0), and with random read-ahead alone.

One innoxide on a temporary data directory: a table of --rows rows (id INT primary key,
v VARCHAR(300) of 250 bytes, loaded in key order), then for each mode --rounds restarts with
innodb_buffer_pool_load_at_startup=OFF. While the server is down the data directory's files
leave the OS page cache: posix_fadvise(DONTNEED) on each file (default), or the whole cache with
`sync; echo 3 > /proc/sys/vm/drop_caches` (--drop-caches, root only; it slows every other
process on the machine for a while). `fincore` (util-linux), when present, reports how much of
the table file was still cached. Reported per run: the scan's wall time as the client sees it,
the same scan's again right after (warm pool: the CPU floor), and what the cold scan moved in
Innodb_buffer_pool_read_ahead, _read_ahead_rnd, Innodb_buffer_pool_reads, Innodb_pages_read
and Innodb_data_reads.

    python3 tools/bench/cold_scan.py --innoxide target/release/innoxide
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, Settings  # noqa: E402

MODES = [
    ("linear (threshold 56)", []),
    ("off (threshold 0)", ["--innodb-read-ahead-threshold=0"]),
    (
        "random only",
        ["--innodb-read-ahead-threshold=0", "--innodb-random-read-ahead=ON"],
    ),
]

COUNTERS = [
    "Innodb_buffer_pool_read_ahead",
    "Innodb_buffer_pool_read_ahead_rnd",
    "Innodb_buffer_pool_reads",
    "Innodb_pages_read",
    "Innodb_data_reads",
]


def counters(server):
    out = server.sql("SHOW GLOBAL STATUS LIKE 'Innodb_%'")
    m = dict(line.split("\t") for line in out.strip().splitlines())
    return [int(m[k]) for k in COUNTERS]


def evict(datadir, drop_caches):
    """Takes the data directory's files out of the OS page cache."""
    subprocess.run(["sync"], check=True)
    if drop_caches:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return
    for root, _, files in os.walk(datadir):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def cached(path):
    """fincore's RES column for a file ('?' without fincore)."""
    if shutil.which("fincore") is None:
        return "?"
    r = subprocess.run(
        ["fincore", "--noheadings", "--output", "RES", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    return r.stdout.decode().strip() or "?"


def scan(server, rows):
    """Runs the full scan; its wall time in seconds."""
    t0 = time.monotonic()
    out = server.sql("SELECT COUNT(*), SUM(LENGTH(v)) FROM cs.t").split()
    dt = time.monotonic() - t0
    if out != [str(rows), str(rows * 250)]:
        raise SystemExit("wrong scan result: %s" % out)
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--innoxide", default="target/release/innoxide")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--buffer-pool", default="1G")
    ap.add_argument("--drop-caches", action="store_true")
    args = ap.parse_args()

    settings = Settings(buffer_pool=args.buffer_pool, log_capacity_mb=512)
    base = ["--innodb-buffer-pool-load-at-startup=OFF"]
    with InnoxideServer(args.innoxide, settings, extra=base) as s:
        datadir = os.path.join(s.tmp, "data")
        s.sql("CREATE DATABASE cs")
        s.sql("CREATE TABLE cs.t (id INT PRIMARY KEY, v VARCHAR(300))")
        t0 = time.monotonic()
        s.sql(
            "SET SESSION cte_max_recursion_depth = %d; INSERT INTO cs.t WITH RECURSIVE seq (n) "
            "AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < %d) "
            "SELECT n, REPEAT('x', 250) FROM seq" % (args.rows, args.rows)
        )
        print("loaded %d rows in %.1f s" % (args.rows, time.monotonic() - t0), flush=True)
        table = os.path.join(datadir, "cs", "t.ibd")
        print(
            "| mode | round | cold scan s | warm scan s | read ahead | random | pool reads "
            "| pages read | data reads | table cached before |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for name, extra in MODES:
            for r in range(args.rounds):
                s.restart(extra=extra, between=lambda: evict(datadir, args.drop_caches))
                before_cache = cached(table)
                c0 = counters(s)
                cold = scan(s, args.rows)
                time.sleep(0.5)
                d = [b - a for a, b in zip(c0, counters(s))]
                warm = scan(s, args.rows)
                print(
                    "| %s | %d | %.3f | %.3f | %d | %d | %d | %d | %d | %s |"
                    % (name, r + 1, cold, warm, d[0], d[1], d[2], d[3], d[4], before_cache),
                    flush=True,
                )


if __name__ == "__main__":
    main()
