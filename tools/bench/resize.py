#!/usr/bin/env python3
"""Online buffer pool resize under load, innoxide and MariaDB 10.11 side by side.

Each server (tools/bench/servers.py: same buffer pool, redo capacity, trx_commit=1,
doublewrite, page size; innodb_buffer_pool_chunk_size given to both) gets the sbtest tables,
then runs sysbench oltp_read_write with one report a second while this script changes
innodb_buffer_pool_size every --every seconds through --sizes (shrinking below the data and
growing again). For each resize it measures the time from SET GLOBAL until
Innodb_buffer_pool_resize_status says "Completed resizing buffer pool at ..." (innoxide, like
MySQL 8.0, resizes in the background; MariaDB 10.11 does it inside the SET statement and leaves
the status empty, so there the SET's return is the end), and checks that
@@innodb_buffer_pool_size and Innodb_buffer_pool_pages_total then match. It reports the TPS
over the run, the lowest one-second TPS, p95 latency and the resize times, with the
innoxide/MariaDB ratio, and fails unless sysbench exits 0 with no reconnects and no errors,
every resize completes with the size asked for, and the tables are consistent afterwards.

    python3 tools/bench/resize.py --innoxide target/release/innoxide --mariadb
"""

import argparse
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, MariadbServer, ServerError, Settings  # noqa: E402
from sysbench import RunFailed, consistency, log, parse_run, prepare, sysbench  # noqa: E402

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_bytes(text):
    text = text.strip().upper()
    if text[-1] in UNITS:
        return int(text[:-1]) * UNITS[text[-1]]
    return int(text)


def status(server, name):
    out = server.sql("SHOW GLOBAL STATUS LIKE '%s'" % name).strip()
    return out.split("\t", 1)[1] if "\t" in out else ""


def resizer(server, args, results, stop):
    """Changes the pool size every args.every seconds; records (asked, seconds, size, pages)."""
    page = size_bytes(args.page_size)
    sizes = [size_bytes(s) for s in args.sizes.split(",")]
    i = 0
    time.sleep(args.every)
    while not stop.is_set():
        want = sizes[i % len(sizes)]
        before = status(server, "Innodb_buffer_pool_resize_status")
        t0 = time.monotonic()
        server.sql("SET GLOBAL innodb_buffer_pool_size = %d" % want)
        while True:
            now = status(server, "Innodb_buffer_pool_resize_status")
            if now.startswith("Completed resizing buffer pool at") and now != before:
                break
            if now == "" and before == "":
                # MariaDB 10.11 resizes inside the SET statement and leaves the status empty.
                break
            if time.monotonic() - t0 > 120:
                raise RunFailed("%s: resize to %d not done after 120 s: %r" % (server.name, want, now))
            time.sleep(0.02)
        took = time.monotonic() - t0
        size = int(server.sql("SELECT @@innodb_buffer_pool_size").strip())
        pages = int(status(server, "Innodb_buffer_pool_pages_total"))
        results.append((want, took, size, pages))
        # MariaDB keeps a few pages of the pool for its own hash tables.
        if size < want or not 0.95 * size <= pages * page <= size:
            raise RunFailed(
                "%s: asked %d, @@innodb_buffer_pool_size %d, %d pages" % (server.name, want, size, pages)
            )
        i += 1
        stop.wait(max(0.0, args.every - took))


def run_one(server, args):
    prepare(server, args)
    results = []
    stop = threading.Event()
    failure = []

    def resize_thread():
        try:
            resizer(server, args, results, stop)
        except (RunFailed, ServerError) as e:
            failure.append(e)

    t = threading.Thread(target=resize_thread)
    t.start()
    try:
        out = sysbench(
            server,
            args,
            "oltp_read_write",
            "run",
            ["--threads=%d" % args.threads, "--time=%d" % args.time, "--report-interval=1"],
        )
    finally:
        stop.set()
        t.join()
    if failure:
        raise failure[0]
    res = parse_run(out)
    if res["reconnects"] or res["ignored"] or res["alerts"]:
        raise RunFailed("%s: sysbench reported errors: %s" % (server.name, res))
    per_second = [float(x) for x in re.findall(r"^\[ *\d+s \].*? tps: ([\d.]+)", out, re.M)]
    consistency(server, args)
    res["min_tps"] = min(per_second) if per_second else 0.0
    res["resizes"] = results
    log(
        "%s: %.0f TPS, lowest second %.0f, p95 %.2f ms; resizes: %s"
        % (
            server.name,
            res["tps"],
            res["min_tps"],
            res["p95"],
            ", ".join("%dM %.2fs" % (w >> 20, s) for w, s, _, _ in results),
        )
    )
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--innoxide", required=True, help="path of the innoxide binary")
    p.add_argument("--mariadb", action="store_true", help="run the same on MariaDB 10.11")
    p.add_argument("--buffer-pool", default="256M", help="size at start (default 256M)")
    p.add_argument("--chunk-size", default="32M", help="innodb_buffer_pool_chunk_size (default 32M)")
    p.add_argument(
        "--sizes",
        default="96M,512M,128M,384M,96M,256M",
        help="sizes to resize to, in turn (default 96M,512M,128M,384M,96M,256M)",
    )
    p.add_argument("--every", type=float, default=10.0, help="seconds between resizes (default 10)")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=100000)
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--time", type=int, default=70, help="sysbench run time in seconds (default 70)")
    p.add_argument("--page-size", default="16K")
    p.add_argument("--markdown", help="write the result table to this file")
    args = p.parse_args()
    settings = Settings(buffer_pool=args.buffer_pool, page_size=args.page_size)
    chunk = ["--innodb-buffer-pool-chunk-size=" + args.chunk_size]
    servers = [lambda: InnoxideServer(args.innoxide, settings, extra=chunk)]
    if args.mariadb:
        servers.append(lambda: MariadbServer(settings, extra=chunk))
    results = {}
    try:
        for make in servers:
            with make() as s:
                results[s.name] = run_one(s, args)
    except (RunFailed, ServerError) as e:
        log("FAILED: %s" % e)
        sys.exit(1)
    rows = [
        "| server | TPS | lowest 1-s TPS | p95 ms | resizes | mean resize s | longest resize s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        took = [s for _, s, _, _ in r["resizes"]]
        rows.append(
            "| %s | %.0f | %.0f | %.2f | %d | %.2f | %.2f |"
            % (name, r["tps"], r["min_tps"], r["p95"], len(took), sum(took) / max(1, len(took)), max(took, default=0))
        )
    if "mariadb" in results:
        a, b = results["innoxide"], results["mariadb"]
        rows.append(
            "| innoxide/MariaDB | %.2f | %.2f | %.2f | | | |"
            % (a["tps"] / b["tps"], a["min_tps"] / max(b["min_tps"], 1e-9), a["p95"] / b["p95"])
        )
    text = "\n".join(rows) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
