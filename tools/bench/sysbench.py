#!/usr/bin/env python3
"""sysbench 1.0 against innoxide, and side by side with MariaDB 10.11.

Six commands:

check     Issue #4's acceptance run. Prepares the sbtest tables, runs every OLTP workload
          (oltp_read_write, oltp_read_only, oltp_point_select, oltp_write_only,
          oltp_update_index, oltp_update_non_index, oltp_delete, oltp_insert) with prepared
          statements and again with --db-ps-mode=disable, then cleanup. A run fails unless
          sysbench exits 0, reports no reconnects and no errors other than the ones it retries
          (deadlocks and lock wait timeouts, its "ignored errors"), and the tables pass a
          consistency check afterwards. With --mariadb the same runs go to a private MariaDB
          too, alternating servers, and the ignored-error rates are shown side by side.

compare   Throughput: each workload at each thread count on both servers, alternating
          servers run by run so machine drift hits both alike; prints (and with --markdown
          writes) a table of TPS, p95 latency and the innoxide/MariaDB ratio.

cpu       The server's CPU time (user + system, from /proc) per query for each query kind of
          oltp_read_only alone (point selects, and the four 100-row range queries), one
          client thread, --events queries each; with --mariadb for MariaDB too; with --no-ps
          through the text protocol (--db-ps-mode=disable).

trx-cpu   Throughput and the server's CPU time (user + system, from /proc) per transaction of
          each workload at --threads for --time seconds; with --mariadb for MariaDB too. At 64
          connections on 2 cores the CPU per transaction is what bounds the rate.

methods   innodb_flush_method: each workload at --threads on innoxide once per method of
          --methods (default fsync,O_DIRECT), each on its own server started and prepared
          once, and with --mariadb on MariaDB with the same methods; runs alternate between
          the servers; prints a table of TPS and p95 latency per server and method.

redo      Redo bytes per transaction of each writing workload (the LSN's advance over
          --events transactions, one client thread, after a warm-up), with --mariadb for
          MariaDB too: how much log each change costs, and so how soon the log fills and
          the checkpoint makes the page cleaners flush.

ahi       innodb_adaptive_hash_index's effect: oltp_point_select (or --workloads) at each
          thread count on innoxide with its adaptive hash index ON and OFF (SET GLOBAL between
          runs: one server, the same data) and, with --mariadb, on MariaDB with its adaptive
          hash index ON (MariaDB 10.11's default is OFF). The configurations alternate run by
          run, after the load's dirty pages are flushed; each measured run follows an unmeasured 5 s
          one (the index builds again after ON).
          Prints TPS, p95, the server's CPU time (user + system, from /proc) per transaction,
          and the share of innoxide's searches the hash answered (INNODB_METRICS
          adaptive_hash_searches against adaptive_hash_searches_btree, warm-up included).

Both servers run with equivalent settings (tools/bench/servers.py: buffer pool, redo
capacity, innodb_flush_log_at_trx_commit=1, doublewrite, page size), each on its own temporary
data directory and port. The quick CI version of `check` is
crates/server/tests/sysbench.rs; the full one is

    python3 tools/bench/sysbench.py check --innoxide target/release/innoxide --mariadb \\
        --tables 4 --table-size 100000 --threads 16 --time 30
"""

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, MariadbServer, ServerError, Settings  # noqa: E402

WORKLOADS = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_point_select",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
]


class RunFailed(Exception):
    pass


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def sysbench(server, args, workload, command, extra=()):
    cmd = [
        "sysbench",
        workload,
        "--db-driver=mysql",
        "--mysql-socket=" + server.socket,
        "--mysql-user=root",
        "--mysql-db=sbtest",
        "--tables=%d" % args.tables,
        "--table-size=%d" % args.table_size,
    ] + list(extra) + [command]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        raise RunFailed(
            "%s: `%s` exited with %d:\n%s" % (server.name, " ".join(cmd), r.returncode, out[-3000:])
        )
    return out


def number(pattern, text, what):
    m = re.search(pattern, text)
    if m is None:
        raise RunFailed("sysbench output has no %s:\n%s" % (what, text[-3000:]))
    return float(m.group(1))


def parse_run(out):
    """The figures of one `sysbench ... run` output."""
    res = {
        "tps": number(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out, "transactions"),
        "transactions": number(r"transactions:\s+(\d+)", out, "transactions"),
        "qps": number(r"queries:\s+\d+\s+\(([\d.]+) per sec", out, "queries"),
        "ignored": number(r"ignored errors:\s+(\d+)", out, "ignored errors"),
        "reconnects": number(r"reconnects:\s+(\d+)", out, "reconnects"),
        "p95": number(r"95th percentile:\s+([\d.]+)", out, "95th percentile"),
        "time": number(r"total time:\s+([\d.]+)s", out, "total time"),
    }
    # sysbench prints FATAL/ALERT for errors it does not retry (and exits non-zero, which
    # sysbench() already reports); anything else it printed is kept for the report.
    res["alerts"] = [l for l in out.splitlines() if l.startswith(("FATAL", "ALERT", "WARNING"))]
    return res


def prepare(server, args):
    server.sql("DROP DATABASE IF EXISTS sbtest")
    server.sql("CREATE DATABASE sbtest")
    t0 = time.monotonic()
    sysbench(server, args, "oltp_common", "prepare", ["--threads=%d" % min(args.tables, 4)])
    return time.monotonic() - t0


def consistency(server, args):
    """Every table still has its secondary index consistent with its rows: the count through the
    primary key equals the count through k_1, and no id is duplicated."""
    for i in range(1, args.tables + 1):
        t = "sbtest.sbtest%d" % i
        out = server.sql(
            "SELECT (SELECT COUNT(*) FROM %s), (SELECT COUNT(*) FROM %s FORCE INDEX (k_%d) "
            "WHERE k >= -2147483648), (SELECT COUNT(DISTINCT id) FROM %s)" % (t, t, i, t)
        ).split()
        if len(set(out)) != 1:
            raise RunFailed("%s: %s counts differ (rows, via k_1, distinct ids): %s" % (server.name, t, out))


def check_one(server, args, workload, ps):
    extra = ["--threads=%d" % args.threads, "--time=%d" % args.time, "--report-interval=0"]
    if not ps:
        extra.append("--db-ps-mode=disable")
    out = sysbench(server, args, workload, "run", extra)
    r = parse_run(out)
    problems = []
    if r["reconnects"] != 0:
        problems.append("%d reconnects" % r["reconnects"])
    if r["transactions"] == 0:
        problems.append("no transaction completed")
    if r["alerts"]:
        problems.append("sysbench said: " + " | ".join(r["alerts"][:5]))
    return r, problems


def cmd_check(args):
    servers = [("innoxide", lambda: InnoxideServer(args.innoxide, settings(args)))]
    if args.mariadb:
        servers.append(("mariadb", lambda: MariadbServer(settings(args))))
    workloads = args.workloads or WORKLOADS
    results = {}
    failures = []
    started = {}
    try:
        for name, make in servers:
            s = make()
            s.start()
            started[name] = s
            secs = prepare(s, args)
            log("%s: prepared %d x %d rows in %.1f s" % (name, args.tables, args.table_size, secs))
        for workload in workloads:
            for ps in (True, False):
                # Alternate which server goes first so drift does not favour one.
                order = list(started.items())
                if len(results) // len(order) % 2 == 1:
                    order.reverse()
                for name, s in order:
                    r, problems = check_one(s, args, workload, ps)
                    results[(workload, ps, name)] = r
                    mode = "ps" if ps else "no-ps"
                    log(
                        "%-9s %-22s %-5s tps %9.1f  p95 %7.2f ms  ignored %5d (%.2f/s)  reconnects %d%s"
                        % (
                            name,
                            workload,
                            mode,
                            r["tps"],
                            r["p95"],
                            r["ignored"],
                            r["ignored"] / r["time"],
                            r["reconnects"],
                            "  FAILED: " + "; ".join(problems) if problems else "",
                        )
                    )
                    if problems and name == "innoxide":
                        failures.append("%s %s: %s" % (workload, mode, "; ".join(problems)))
        for name, s in started.items():
            consistency(s, args)
            sysbench(s, args, "oltp_common", "cleanup")
            left = s.sql("SHOW TABLES FROM sbtest").split()
            if left:
                failures.append("%s: cleanup left tables %s" % (name, left))
    finally:
        for s in started.values():
            s.stop()
    print_check_table(results, workloads, list(started))
    if failures:
        log("FAILED:\n  " + "\n  ".join(failures))
        return 1
    log("sysbench check passed")
    return 0


def print_check_table(results, workloads, names):
    head = "| workload | mode |" + "".join(" %s TPS | %s ignored errors/s |" % (n, n) for n in names)
    print(head)
    print("|---|---|" + "---:|---:|" * len(names))
    for w in workloads:
        for ps in (True, False):
            row = "| %s | %s |" % (w, "prepared" if ps else "--db-ps-mode=disable")
            for n in names:
                r = results.get((w, ps, n))
                row += " %.1f | %.2f |" % (r["tps"], r["ignored"] / r["time"]) if r else " - | - |"
            print(row)


def cmd_compare(args):
    st = settings(args)
    inno = InnoxideServer(args.innoxide, st)
    maria = MariadbServer(st)
    workloads = args.workloads or ["oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only"]
    threads = [int(t) for t in args.thread_list.split(",")]
    rows = []
    try:
        for s in (inno, maria):
            s.start()
            log("%s: prepared in %.1f s" % (s.name, prepare(s, args)))
        for w in workloads:
            for i, t in enumerate(threads):
                res = {}
                order = [inno, maria] if i % 2 == 0 else [maria, inno]
                for s in order:
                    extra = ["--threads=%d" % t, "--time=%d" % args.time, "--report-interval=0"]
                    res[s.name] = parse_run(sysbench(s, args, w, "run", extra))
                    if res[s.name]["reconnects"] or res[s.name]["alerts"]:
                        raise RunFailed("%s %s %d threads: %s" % (s.name, w, t, res[s.name]))
                a, b = res["innoxide"], res["mariadb"]
                rows.append((w, t, a, b))
                log(
                    "%-18s %3d thr  innoxide %9.1f tps p95 %7.2f | mariadb %9.1f tps p95 %7.2f | ratio %.2f"
                    % (w, t, a["tps"], a["p95"], b["tps"], b["p95"], a["tps"] / b["tps"])
                )
        for s in (inno, maria):
            consistency(s, args)
    finally:
        inno.stop()
        maria.stop()
    lines = [
        "| workload | threads | innoxide TPS | innoxide p95 ms | MariaDB TPS | MariaDB p95 ms | TPS ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for w, t, a, b in rows:
        lines.append(
            "| %s | %d | %.1f | %.2f | %.1f | %.2f | %.2f |"
            % (w, t, a["tps"], a["p95"], b["tps"], b["p95"], a["tps"] / b["tps"])
        )
    return emit_table(lines, args)


def emit_table(lines, args):
    """Prints a markdown table's lines and, with --markdown, writes them to that file too."""
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    return 0


def innoxide_metric(server, name):
    out = server.sql("SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = '%s'" % name)
    return int(out.strip())


def cmd_ahi(args):
    st = settings(args)
    inno = InnoxideServer(args.innoxide, st)
    servers = [inno]
    configs = [("innoxide ON", inno, "ON"), ("innoxide OFF", inno, "OFF")]
    if args.mariadb:
        maria = MariadbServer(st, extra=["--innodb-adaptive-hash-index=ON"])
        servers.append(maria)
        configs.append(("MariaDB ON", maria, None))
    workloads = args.workloads or ["oltp_point_select"]
    threads = [int(t) for t in args.thread_list.split(",")]
    rows = []
    try:
        for s in servers:
            s.start()
            log("%s: prepared in %.1f s" % (s.name, prepare(s, args)))
        if args.mariadb and maria.sql("SELECT @@innodb_adaptive_hash_index").strip() != "1":
            raise RunFailed("MariaDB's adaptive hash index is not ON")
        # The load leaves dirty pages; their flushing would count in the first runs' CPU.
        for s in servers:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                out = s.sql("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'").split()
                if out and out[-1] == "0":
                    break
                time.sleep(1)
        for w in workloads:
            for i, t in enumerate(threads):
                res = {}
                for name, s, ahi in configs if i % 2 == 0 else configs[::-1]:
                    if ahi is not None:
                        s.sql("SET GLOBAL innodb_adaptive_hash_index = %s" % ahi)
                        h0 = innoxide_metric(s, "adaptive_hash_searches")
                        b0 = innoxide_metric(s, "adaptive_hash_searches_btree")
                    extra = ["--threads=%d" % t, "--report-interval=0"]
                    sysbench(s, args, w, "run", extra + ["--time=5"])  # warm-up, not measured
                    c0 = cpu_seconds(s.pid)
                    r = parse_run(sysbench(s, args, w, "run", extra + ["--time=%d" % args.time]))
                    r["cpu_us"] = (cpu_seconds(s.pid) - c0) / max(r["transactions"], 1) * 1e6
                    if r["reconnects"] or r["alerts"]:
                        raise RunFailed("%s %s %d threads: %s" % (name, w, t, r))
                    if ahi is not None:
                        h = innoxide_metric(s, "adaptive_hash_searches") - h0
                        b = innoxide_metric(s, "adaptive_hash_searches_btree") - b0
                        r["hash_share"] = h / max(h + b, 1)
                    res[name] = r
                rows.append((w, t, res))
                log(
                    "%-18s %3d thr  " % (w, t)
                    + " | ".join(
                        "%s %9.1f tps p95 %6.2f cpu %6.1f us" % (n, res[n]["tps"], res[n]["p95"], res[n]["cpu_us"])
                        for n, _, _ in configs
                    )
                    + " | hash share ON %.3f OFF %.3f" % (res["innoxide ON"]["hash_share"], res["innoxide OFF"]["hash_share"])
                )
        for s in servers:
            consistency(s, args)
    finally:
        for s in servers:
            s.stop()
    names = [n for n, _, _ in configs]
    lines = [
        "| workload | threads | "
        + " | ".join("%s TPS | %s p95 ms | %s CPU us/trx" % (n, n, n) for n in names)
        + " | TPS ON/OFF | CPU ON/OFF | hash share ON |",
        "|---|---:|" + "---:|---:|---:|" * len(names) + "---:|---:|---:|",
    ]
    for w, t, res in rows:
        on, off = res["innoxide ON"], res["innoxide OFF"]
        lines.append(
            "| %s | %d | " % (w, t)
            + " | ".join("%.1f | %.2f | %.1f" % (res[n]["tps"], res[n]["p95"], res[n]["cpu_us"]) for n in names)
            + " | %.3f | %.3f | %.3f |" % (on["tps"] / off["tps"], on["cpu_us"] / off["cpu_us"], on["hash_share"])
        )
    return emit_table(lines, args)


QUERY_KINDS = ["point-selects", "simple-ranges", "sum-ranges", "order-ranges", "distinct-ranges"]


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_each(args, items, measure, unit):
    """Starts innoxide (and, with --mariadb, MariaDB), prepares the tables, then calls
    measure(server, item) for each item on each server in turn. Returns the server names and
    the rows (item, {server name: value})."""
    st = settings(args)
    servers = [InnoxideServer(args.innoxide, st)]
    if args.mariadb:
        servers.append(MariadbServer(st))
    rows = []
    try:
        for s in servers:
            s.start()
            log("%s: prepared in %.1f s" % (s.name, prepare(s, args)))
        for item in items:
            res = {s.name: measure(s, item) for s in servers}
            rows.append((item, res))
            log("%-22s " % item + "  ".join("%s %.1f %s" % (n, v, unit) for n, v in res.items()))
    finally:
        for s in servers:
            s.stop()
    return [s.name for s in servers], rows


def print_table(first, what, names, rows, fmt):
    print("| %s | " % first + " | ".join("%s %s" % (n, what) for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for item, res in rows:
        print("| %s | " % item + " | ".join(fmt % res[n] for n in names) + " |")


def cmd_cpu(args):
    """Server CPU per query for each of oltp_read_only's query kinds alone, one thread."""

    def measure(s, kind):
        only = ["--%s=%d" % (k, 1 if k == kind else 0) for k in QUERY_KINDS]
        extra = only + ["--skip-trx=on", "--threads=1", "--time=0"]
        if args.no_ps:
            extra.append("--db-ps-mode=disable")
        sysbench(s, args, "oltp_read_only", "run", extra + ["--events=300"])  # warm up
        before = cpu_seconds(s.pid)
        sysbench(s, args, "oltp_read_only", "run", extra + ["--events=%d" % args.events])
        return (cpu_seconds(s.pid) - before) / args.events * 1e6

    names, rows = measure_each(args, QUERY_KINDS, measure, "us")
    print_table("query", "CPU us/query", names, rows, "%.1f")
    return 0


def cmd_trx_cpu(args):
    """TPS and server CPU microseconds per transaction of each workload."""

    def measure(s, w):
        before = cpu_seconds(s.pid)
        run = parse_run(sysbench(s, args, w, "run", ["--threads=%d" % args.threads, "--time=%d" % args.time]))
        used = cpu_seconds(s.pid) - before
        log("%s %s: %.1f TPS" % (s.name, w, run["tps"]))
        return used / run["transactions"] * 1e6

    names, rows = measure_each(args, args.workloads or ["oltp_update_non_index"], measure, "us")
    print_table("workload", "CPU us/trx (%d threads)" % args.threads, names, rows, "%.1f")
    return 0


REDO_WORKLOADS = [
    "oltp_update_non_index",
    "oltp_update_index",
    "oltp_delete",
    "oltp_insert",
    "oltp_write_only",
]


def lsn(server):
    """The server's current LSN, from SHOW ENGINE INNODB STATUS (both servers print it)."""
    status = server.sql("SHOW ENGINE INNODB STATUS").replace("\\n", "\n")
    return int(number(r"Log sequence number\s+(\d+)", status, "Log sequence number"))


def cmd_redo(args):
    """Redo bytes per transaction of each writing workload, one thread."""

    def measure(s, w):
        extra = ["--threads=1", "--time=0"]
        sysbench(s, args, w, "run", extra + ["--events=300"])  # warm up
        before = lsn(s)
        out = sysbench(s, args, w, "run", extra + ["--events=%d" % args.events])
        done = parse_run(out)["transactions"]
        if done != args.events:
            raise RunFailed("%s %s: %d transactions of %d" % (s.name, w, done, args.events))
        return (lsn(s) - before) / args.events

    names, rows = measure_each(args, args.workloads or REDO_WORKLOADS, measure, "bytes")
    print_table("workload", "redo bytes/trx", names, rows, "%.0f")
    return 0


def settings(args, flush_method=None):
    return Settings(
        buffer_pool=args.buffer_pool, log_capacity_mb=args.log_capacity_mb, flush_method=flush_method
    )


def cmd_methods(args):
    methods = args.methods.split(",")
    servers = []
    for m in methods:
        servers.append(("innoxide", m, InnoxideServer(args.innoxide, settings(args, m))))
        if args.mariadb:
            servers.append(("mariadb", m, MariadbServer(settings(args, m))))
    workloads = args.workloads or ["oltp_read_only", "oltp_read_write", "oltp_write_only"]
    res = {}
    try:
        for name, m, s in servers:
            s.start()
            log("%s %s: prepared in %.1f s" % (name, m, prepare(s, args)))
        for i, w in enumerate(workloads):
            order = servers if i % 2 == 0 else list(reversed(servers))
            for name, m, s in order:
                extra = ["--threads=%d" % args.threads, "--time=%d" % args.time, "--report-interval=0"]
                r = parse_run(sysbench(s, args, w, "run", extra))
                if r["reconnects"] or r["alerts"]:
                    raise RunFailed("%s %s %s: %s" % (name, m, w, r))
                res[(w, name, m)] = r
                log("%-18s %-9s %-18s tps %9.1f  p95 %7.2f ms" % (w, name, m, r["tps"], r["p95"]))
        for _, _, s in servers:
            consistency(s, args)
    finally:
        for _, _, s in servers:
            s.stop()
    cols = [(name, m) for name, m, _ in servers]
    print("| workload |" + "".join(" %s %s TPS | p95 ms |" % c for c in cols))
    print("|---|" + "---:|---:|" * len(cols))
    for w in workloads:
        print("| %s |" % w + "".join(" %.1f | %.2f |" % (res[(w,) + c]["tps"], res[(w,) + c]["p95"]) for c in cols))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("check", "compare", "cpu", "methods", "redo", "trx-cpu", "ahi"):
        c = sub.add_parser(name)
        c.add_argument("--innoxide", default="target/release/innoxide", help="the innoxide binary")
        c.add_argument("--tables", type=int, default=4, help="sbtest tables (default 4)")
        c.add_argument("--table-size", type=int, default=100000, help="rows per table (default 100000)")
        c.add_argument("--time", type=int, default=30, help="seconds per run (default 30)")
        c.add_argument("--buffer-pool", default="1G", help="innodb_buffer_pool_size of both servers")
        c.add_argument("--log-capacity-mb", type=int, default=512, help="redo capacity of both servers")
        c.add_argument("--workloads", nargs="*", help="workloads to run (default: all of the command's)")
    c = sub.choices["check"]
    c.add_argument("--threads", type=int, default=16, help="sysbench threads (default 16)")
    c.add_argument("--mariadb", action="store_true", help="run the same on a private MariaDB too")
    c = sub.choices["cpu"]
    c.add_argument("--mariadb", action="store_true", help="measure a private MariaDB too")
    c.add_argument("--events", type=int, default=10000, help="queries per kind (default 10000)")
    c.add_argument("--no-ps", action="store_true", help="send the queries as text (--db-ps-mode=disable)")
    c = sub.choices["redo"]
    c.add_argument("--mariadb", action="store_true", help="measure a private MariaDB too")
    c.add_argument("--events", type=int, default=5000, help="transactions per workload (default 5000)")
    c = sub.choices["trx-cpu"]
    c.add_argument("--mariadb", action="store_true", help="measure a private MariaDB too")
    c.add_argument("--threads", type=int, default=64, help="sysbench threads (default 64)")
    c = sub.choices["methods"]
    c.add_argument("--mariadb", action="store_true", help="run MariaDB with the same methods too")
    c.add_argument("--threads", type=int, default=16, help="sysbench threads (default 16)")
    c.add_argument("--methods", default="fsync,O_DIRECT", help="innodb_flush_method values")
    for name in ("compare", "ahi"):
        c = sub.choices[name]
        c.add_argument("--thread-list", default="1,16,64", help="thread counts (default 1,16,64)")
        c.add_argument("--markdown", help="also write the table to this file")
    sub.choices["ahi"].add_argument(
        "--mariadb", action="store_true", help="also MariaDB with its adaptive hash index ON"
    )
    args = p.parse_args()
    try:
        run = {
            "check": cmd_check,
            "compare": cmd_compare,
            "cpu": cmd_cpu,
            "methods": cmd_methods,
            "redo": cmd_redo,
            "trx-cpu": cmd_trx_cpu,
            "ahi": cmd_ahi,
        }[args.command]
        return run(args)
    except (RunFailed, ServerError) as e:
        log("FAILED: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
