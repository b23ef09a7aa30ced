#!/usr/bin/env python3
"""Warm restart: how long after a restart the buffer pool hit ratio is back above 99%, with the
buffer pool dump/load (innodb_buffer_pool_dump_at_shutdown + _load_at_startup) and without it.

For each server (innoxide, and MariaDB 10.11 with --mariadb) on its own temporary data
directory: sysbench prepares the tables (sized to fit the buffer pool), oltp_read_only warms the
pool, then the server is restarted twice, cold (load at startup OFF) and warm (ON), with the OS
page cache dropped before each start when this user may (otherwise the cold start reads from the
page cache and looks better than it would on a real machine: the report says which). After each
restart sysbench oltp_point_select runs while Innodb_buffer_pool_read_requests and
Innodb_buffer_pool_reads are sampled every second; the hit ratio of a second is
1 - reads / read_requests in it. Reported: seconds until the first second at >= 99%, the hit
ratio of the first second, transactions in the first 10 s.

    python3 tools/bench/warm_restart.py --innoxide target/release/innoxide --mariadb
"""

import argparse
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, MariadbServer, ServerError, Settings  # noqa: E402
from sysbench import RunFailed, log, parse_run, prepare, sysbench  # noqa: E402


def drop_page_cache():
    """True if the OS page cache could be dropped (root)."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def counters(server):
    out = server.sql("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read%'")
    m = dict(line.split("\t") for line in out.strip().splitlines())
    return int(m["Innodb_buffer_pool_read_requests"]), int(m["Innodb_buffer_pool_reads"])


def measure(server, args):
    """Runs point selects for args.measure seconds while sampling the hit ratio each second."""
    samples = []
    stop = threading.Event()

    def sampler():
        prev = counters(server)
        t0 = time.monotonic()
        while not stop.wait(1.0):
            cur = counters(server)
            req, rd = cur[0] - prev[0], cur[1] - prev[1]
            samples.append((time.monotonic() - t0, 1.0 - rd / req if req else 1.0))
            prev = cur

    th = threading.Thread(target=sampler)
    th.start()
    try:
        out = sysbench(
            server,
            args,
            "oltp_point_select",
            "run",
            [
                "--threads=%d" % args.threads,
                "--time=%d" % args.measure,
                "--rand-type=uniform",
                "--report-interval=1",
            ],
        )
    finally:
        stop.set()
        th.join()
    first10 = 0.0
    for line in out.splitlines():
        # "[ 3s ] thds: 4 tps: 1234.00 ..."
        if line.startswith("[ ") and "tps:" in line:
            sec = float(line[2 : line.index("s ]")])
            if sec <= 10:
                first10 += float(line.split("tps:")[1].split()[0])
    res = parse_run(out)
    reached = next((t for t, h in samples if h >= 0.99), None)
    return {
        "to99": reached,
        "first": samples[0][1] if samples else None,
        "first10": first10,
        "tps": res["tps"],
    }


def run_server(server, args, load_opt, cache_dropped):
    with server:
        log("%s: preparing %d x %d rows" % (server.name, args.tables, args.table_size))
        prepare(server, args)
        log("%s: warming up for %d s" % (server.name, args.warmup))
        sysbench(server, args, "oltp_read_only", "run", ["--threads=%d" % args.threads, "--time=%d" % args.warmup])
        results = {}
        for mode, on in (("cold", False), ("warm", True)):
            # The dump is written at this shutdown; the start either loads it or not.
            def between():
                dropped = drop_page_cache()
                cache_dropped[0] = dropped if cache_dropped[0] is None else cache_dropped[0] and dropped

            server.restart([load_opt(on)], between=between)
            if on:
                # Wait for the load to finish, as an operator would before sending traffic.
                deadline = time.monotonic() + 600
                while "completed" not in server.sql("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_load_status'"):
                    if time.monotonic() > deadline:
                        raise RunFailed("%s: the buffer pool load did not complete" % server.name)
                    time.sleep(0.2)
            results[mode] = measure(server, args)
            log("%s %s: %s" % (server.name, mode, results[mode]))
        return results


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--innoxide", default="target/release/innoxide", help="the innoxide binary")
    p.add_argument("--mariadb", action="store_true", help="measure a private MariaDB 10.11 too")
    p.add_argument("--tables", type=int, default=4, help="sbtest tables (default 4)")
    p.add_argument("--table-size", type=int, default=250000, help="rows per table (default 250000)")
    p.add_argument("--buffer-pool", default="1G", help="innodb_buffer_pool_size (default 1G)")
    p.add_argument("--dump-pct", type=int, default=100, help="innodb_buffer_pool_dump_pct (default 100)")
    p.add_argument("--threads", type=int, default=4, help="sysbench threads (default 4)")
    p.add_argument("--warmup", type=int, default=60, help="seconds of oltp_read_only before the restarts")
    p.add_argument("--measure", type=int, default=60, help="seconds measured after each restart")
    args = p.parse_args()
    settings = Settings(buffer_pool=args.buffer_pool)
    pct = "--innodb-buffer-pool-dump-pct=%d" % args.dump_pct
    servers = [
        (
            InnoxideServer(args.innoxide, settings, extra=[pct]),
            lambda on: "--innodb-buffer-pool-load-at-startup=" + ("ON" if on else "OFF"),
        )
    ]
    if args.mariadb:
        servers.append(
            (
                MariadbServer(settings, extra=[pct]),
                lambda on: "--innodb-buffer-pool-load-at-startup=" + ("1" if on else "0"),
            )
        )
    cache_dropped = [None]
    table = []
    try:
        for server, load_opt in servers:
            res = run_server(server, args, load_opt, cache_dropped)
            table.append((server.name, res))
    except (RunFailed, ServerError) as e:
        log("FAILED: %s" % e)
        return 1
    print(
        "OS page cache dropped before each start: %s"
        % ("yes" if cache_dropped[0] else "no (not root): cold starts read from the page cache")
    )
    print()
    print("| server | start | seconds to hit ratio >= 99% | hit ratio, 1st second | transactions, first 10 s | TPS over the run |")
    print("|---|---|---:|---:|---:|---:|")
    for name, res in table:
        for mode in ("cold", "warm"):
            r = res[mode]
            to99 = "not within the run" if r["to99"] is None else "%.0f" % r["to99"]
            first = "-" if r["first"] is None else "%.1f%%" % (100 * r["first"])
            print("| %s | %s | %s | %s | %.0f | %.0f |" % (name, mode, to99, first, r["first10"], r["tps"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
