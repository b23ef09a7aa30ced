#!/usr/bin/env python3
"""dbSTRESS (and sysbench) side by side: innoxide against a private MariaDB 10.11.

Starts both servers with equivalent settings (tools/bench/servers.py: buffer pool, redo
capacity, innodb_flush_log_at_trx_commit=1, doublewrite, page size, max_connections), loads the
same dbSTRESS data in both with `innoxide-bench dbstress load`, then runs each scenario step by
step, ALTERNATING servers at every step (innoxide first on even steps, MariaDB first on odd
ones) so that drift on a shared machine (other jobs, thermal, page cache) hits both alike.
Each step is one `innoxide-bench dbstress run` with a single session count and its own JSON
file; after each read/write ratio both servers are verified (`dbstress verify`: row count =
loaded + inserts - deletes acknowledged, no orphans, 20 rows per object, index consistency).
With --sysbench, sysbench workloads run on the same servers the same way
(tools/bench/sysbench.py's functions). The result is a markdown table with the
innoxide/MariaDB ratios and, per scenario and ratio, the charts of `innoxide-bench chart`
(TPS and p95 against sessions, TPS each second).

Each step's row also gives the CPU that other processes took meanwhile (cores; machine busy
time from /proc/stat minus both servers' and the client's own), so a step disturbed by a
compile elsewhere can be seen.

Quick run (a few minutes):

    python3 tools/bench/dbstress.py --objects 20000 --rw 0,1,10 --sessions 1,2,4,8,16,32,64 \\
        --step-time 10 --out-dir docs/charts --markdown /tmp/dbstress.md

The issue's full run, about 2 hours (200,000 objects; stress at rw 0, 1 and 10 with sessions
1..256 and 60 s steps, about 55 min; users at rw 1 with sessions 50..1600, think time 1 s and
120 s steps, about 20 min per server; then sysbench point_select, read_only, read_write and
write_only at 1, 16 and 64 threads):

    python3 tools/bench/dbstress.py --full --out-dir docs/charts --markdown /tmp/dbstress-full.md

With --step-time 30 it takes about 85 minutes (the run recorded in docs/benchmarks.md).
"""

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import InnoxideServer, MariadbServer, ServerError, Settings  # noqa: E402
import sysbench as sb  # noqa: E402

STRESS_SESSIONS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
USERS_SESSIONS = [50, 100, 200, 400, 600, 800, 1000, 1200, 1400, 1600]


class RunFailed(Exception):
    pass


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def machine_busy():
    """Busy and total clock ticks of all CPUs so far (/proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + v[4]
    busy = sum(v[:8]) - idle
    return busy, busy + idle


def process_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return 0


class Load:
    """Cores' worth of CPU that processes other than the servers and the client used."""

    def __init__(self, servers):
        self.pids = [s.pid for s in servers]
        self.start = machine_busy()
        self.own = sum(process_ticks(p) for p in self.pids)
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.children = r.ru_utime + r.ru_stime

    def others_cores(self):
        end = machine_busy()
        if self.start is None or end is None:
            return None
        hz = os.sysconf("SC_CLK_TCK")
        busy = end[0] - self.start[0]
        total = end[1] - self.start[1]
        own = sum(process_ticks(p) for p in self.pids) - self.own
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = (r.ru_utime + r.ru_stime - self.children) * hz
        if total <= 0:
            return None
        ncpu = os.cpu_count() or 1
        return max(0.0, (busy - own - client) / total * ncpu)


def bench(args, server, *extra, capture=True):
    cmd = [args.bench, "dbstress"] + list(extra[:1]) + ["--socket", server.socket] + list(extra[1:])
    log("$ " + " ".join(shlex.quote(c) for c in cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE)
    out = r.stdout.decode(errors="replace") if capture else ""
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0:
        raise RunFailed("%s: `%s` exited with %d:\n%s\n%s" % (server.name, " ".join(cmd), r.returncode, out[-3000:], err[-3000:]))
    return out, err


def run_step(args, server, scenario, rw, sessions, path):
    extra = [
        "run",
        "--scenario", scenario,
        "--sessions", str(sessions),
        "--step-time", str(args.step_time if scenario == "stress" else args.users_step_time),
        "--warmup", str(args.warmup),
        "--rw", str(rw),
        "--label", server.name,
        "--json", path,
        "--no-verify",
        "--quiet",
    ]
    if args.update_only:
        extra.append("--update-only")
    bench(args, server, *extra)
    with open(path) as f:
        return json.load(f)


def step_figures(doc):
    s = doc["steps"][0]
    t = s["types"]
    return {
        "tps": s["tps"],
        "p95": t["ALL"]["p95_ms"],
        "p99": t["ALL"]["p99_ms"],
        "errors": s["errors"],
        "slow": s["session_tps"]["below_95pct_of_target"],
        "min_rate": s["session_tps"]["min"],
    }


def average(rounds):
    """The figures of a step's rounds: means, but errors and slow sessions summed, the
    slowest session's rate the minimum."""
    out = {}
    for k in rounds[0]:
        vals = [r[k] for r in rounds if r[k] is not None]
        if not vals:
            out[k] = None
        elif k in ("errors", "slow"):
            out[k] = sum(vals)
        elif k == "min_rate":
            out[k] = min(vals)
        else:
            out[k] = sum(vals) / len(vals)
    return out


def run_scenario(args, servers, scenario, rw, results_dir, rows, charts):
    sessions = args.sessions or (STRESS_SESSIONS if scenario == "stress" else USERS_SESSIONS)
    files = {s.name: [] for s in servers}
    for i, n in enumerate(sessions):
        rounds = {s.name: [] for s in servers}
        for r in range(args.repeat):
            # innoxide first on even (step + round), MariaDB first on odd: with --repeat 2
            # each step runs A B B A, which cancels a linear drift.
            order = servers if (i + r) % 2 == 0 else list(reversed(servers))
            for s in order:
                path = os.path.join(results_dir, "%s-rw%d-%s-%04d-r%d.json" % (scenario, rw, s.name, n, r))
                load = Load(servers)
                doc = run_step(args, s, scenario, rw, n, path)
                f = step_figures(doc)
                f["others"] = load.others_cores()
                rounds[s.name].append(f)
                files[s.name].append(path)
        figs = {name: average(rs) for name, rs in rounds.items()}
        a, b = figs["innoxide"], figs["mariadb"]
        ratio = a["tps"] / b["tps"] if b["tps"] > 0 else float("nan")
        rows.append((scenario, rw, n, a, b, ratio))
        log(
            "%-6s rw %-4d %5d sessions | innoxide %9.1f tps p95 %8.2f ms err %d | mariadb %9.1f tps p95 %8.2f ms err %d | ratio %.2f"
            % (scenario, rw, n, a["tps"], a["p95"], a["errors"], b["tps"], b["p95"], b["errors"], ratio)
        )
    verdicts = {}
    for s in servers:
        out, _ = bench(args, s, "verify")
        verdicts[s.name] = out.strip().splitlines()[0] if out.strip() else "?"
        log("%s: %s" % (s.name, verdicts[s.name]))
    name = "%s-%s-rw%d" % (args.name, scenario, rw)
    if args.update_only:
        name += "-update-only"
    cmd = [args.bench, "chart", "--out-dir", args.out_dir, "--name", name]
    for s in servers:
        cmd += ["%s=%s" % (s.name, p) for p in files[s.name]]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RunFailed("chart failed:\n" + r.stdout.decode(errors="replace"))
    charts.append((scenario, rw, name))
    return verdicts


def run_sysbench(args, servers):
    """sysbench workloads on the same servers, alternating servers run by run."""
    sargs = types.SimpleNamespace(tables=args.sysbench_tables, table_size=args.sysbench_table_size)
    for s in servers:
        log("%s: sysbench prepared in %.1f s" % (s.name, sb.prepare(s, sargs)))
    rows = []
    threads = [int(t) for t in args.sysbench_threads.split(",")]
    for w in args.sysbench_workloads.split(","):
        for i, t in enumerate(threads):
            res = {}
            order = servers if (len(rows) % 2 == 0) else list(reversed(servers))
            for s in order:
                extra = ["--threads=%d" % t, "--time=%d" % args.sysbench_time, "--report-interval=0"]
                res[s.name] = sb.parse_run(sb.sysbench(s, sargs, w, "run", extra))
            a, b = res["innoxide"], res["mariadb"]
            rows.append((w, t, a, b))
            log("sysbench %-18s %3d thr innoxide %9.1f tps | mariadb %9.1f tps | ratio %.2f" % (w, t, a["tps"], b["tps"], a["tps"] / b["tps"]))
    for s in servers:
        sb.consistency(s, sargs)
        s.sql("DROP DATABASE sbtest")
    return rows


def fmt_others(x):
    return "-" if x is None else "%.2f" % x


def markdown(args, rows, verdicts, charts, sysbench_rows, load_times, started):
    sha = args.commit or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ).stdout.decode().strip()
    lines = [
        "Command: `%s`" % " ".join(shlex.quote(a) for a in sys.argv),
        "",
        "Commit %s, %s, %d CPUs, %.0f min, %d round(s) per step. Load: %s." % (
            sha or "?",
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            os.cpu_count() or 0,
            (time.time() - started) / 60,
            args.repeat,
            ", ".join("%s %.1f s" % kv for kv in load_times.items()),
        ),
        "",
        "| scenario | rw | sessions | innoxide TPS | innoxide p95 ms | MariaDB TPS | MariaDB p95 ms | TPS ratio | errors (i/M) | other load, cores (i/M) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, rw, n, a, b, ratio in rows:
        lines.append(
            "| %s | %d | %d | %.1f | %.2f | %.1f | %.2f | %.2f | %d/%d | %s/%s |"
            % (scenario, rw, n, a["tps"], a["p95"], b["tps"], b["p95"], ratio, a["errors"], b["errors"], fmt_others(a["others"]), fmt_others(b["others"]))
        )
    users = [r for r in rows if r[0] == "users"]
    if users:
        lines += [
            "",
            "Users scenario, per-session rate (target 1 TPS): sessions below 95% of it (less one transaction per step), and the slowest session's rate.",
            "",
            "| rw | sessions | innoxide slow sessions | innoxide min TPS | MariaDB slow sessions | MariaDB min TPS |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for _, rw, n, a, b, _ in users:
            lines.append("| %d | %d | %d | %.3f | %d | %.3f |" % (rw, n, a["slow"], a["min_rate"], b["slow"], b["min_rate"]))
    lines += ["", "Verify after each scenario and ratio:", ""]
    for (scenario, rw), v in verdicts.items():
        lines.append("- %s rw %d: %s" % (scenario, rw, "; ".join("%s %s" % kv for kv in v.items())))
    if sysbench_rows:
        lines += [
            "",
            "| sysbench workload | threads | innoxide TPS | innoxide p95 ms | MariaDB TPS | MariaDB p95 ms | TPS ratio |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for w, t, a, b in sysbench_rows:
            lines.append("| %s | %d | %.1f | %.2f | %.1f | %.2f | %.2f |" % (w, t, a["tps"], a["p95"], b["tps"], b["p95"], a["tps"] / b["tps"]))
    lines += ["", "Charts:", ""]
    rel = args.link_prefix or os.path.relpath(
        args.out_dir, os.path.dirname(os.path.abspath(args.markdown)) if args.markdown else "."
    )
    for scenario, rw, name in charts:
        for kind in ("tps", "p95", "timeline"):
            lines.append("![%s rw %d %s](%s/%s-%s.png)" % (scenario, rw, kind, rel, name, kind))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--innoxide", default="target/release/innoxide", help="the innoxide binary")
    p.add_argument("--bench", default=None, help="the innoxide-bench binary (default: beside --innoxide)")
    p.add_argument("--objects", type=int, default=20000, help="OBJECT rows (HISTORY gets 20x; default 20000)")
    p.add_argument("--load-threads", type=int, default=4, help="loading connections per server")
    p.add_argument("--scenarios", default="stress", help="comma-separated: stress, users (default stress)")
    p.add_argument("--rw", default="0,1,10", help="read/write ratios, comma-separated (default 0,1,10)")
    p.add_argument("--update-only", action="store_true", help="write transactions only UPDATE")
    p.add_argument("--sessions", help="session counts (default: the scenario's, 1..256 or 50..1600)")
    p.add_argument("--step-time", type=float, default=60, help="seconds per stress step (default 60)")
    p.add_argument("--users-step-time", type=float, default=120, help="seconds per users step (default 120)")
    p.add_argument("--warmup", type=float, default=2, help="unmeasured seconds at the start of each step (default 2)")
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds per step (default 1); each round swaps which server goes first, "
                        "the figures are the rounds' means")
    p.add_argument("--buffer-pool", default="1G", help="innodb_buffer_pool_size of both servers")
    p.add_argument("--log-capacity-mb", type=int, default=512, help="redo capacity of both servers")
    p.add_argument("--out-dir", default="docs/charts", help="where the charts go (default docs/charts)")
    p.add_argument("--name", default="dbstress", help="chart file prefix (default dbstress)")
    p.add_argument("--results-dir", help="where each step's JSON goes (default: a new directory in /tmp)")
    p.add_argument("--markdown", help="write the markdown report to this file (it is printed too)")
    p.add_argument("--sysbench", action="store_true", help="also run sysbench workloads on both servers")
    p.add_argument("--sysbench-workloads", default="oltp_point_select,oltp_read_only,oltp_read_write,oltp_write_only",
                   help="with --sysbench: workloads, comma-separated (default: point_select, read_only, read_write, write_only)")
    p.add_argument("--sysbench-threads", default="1,16,64", help="with --sysbench: thread counts (default 1,16,64)")
    p.add_argument("--sysbench-time", type=int, default=30, help="with --sysbench: seconds per run (default 30)")
    p.add_argument("--sysbench-tables", type=int, default=4, help="with --sysbench: sbtest tables (default 4)")
    p.add_argument("--sysbench-table-size", type=int, default=100000, help="with --sysbench: rows per table (default 100000)")
    p.add_argument("--link-prefix",
                   help="path of --out-dir as the markdown's image links use it (default: relative to --markdown's "
                        "directory; use 'charts' to paste into docs/benchmarks.md)")
    p.add_argument("--commit", help="the commit the binaries were built from, for the report (default: git HEAD)")
    p.add_argument("--full", action="store_true",
                   help="the issue's full run: --objects 200000 --scenarios stress,users --rw 0,1,10 "
                        "with the scenarios' own session lists, 60 s stress steps, 120 s users steps "
                        "(users at rw 1 only), and --sysbench")
    args = p.parse_args()
    if args.full:
        args.objects = 200000
        args.scenarios = "stress,users"
        args.sessions = None
        args.sysbench = True
        args.link_prefix = args.link_prefix or "charts"
    if args.bench is None:
        args.bench = os.path.join(os.path.dirname(args.innoxide) or ".", "innoxide-bench")
    args.sessions = [int(x) for x in args.sessions.split(",")] if args.sessions else None
    rws = [int(x) for x in args.rw.split(",")]
    scenarios = args.scenarios.split(",")
    results_dir = args.results_dir or tempfile.mkdtemp(prefix="dbstress-results-")
    os.makedirs(results_dir, exist_ok=True)
    os.makedirs(args.out_dir, exist_ok=True)
    log("step results in %s" % results_dir)
    started = time.time()
    st = Settings(buffer_pool=args.buffer_pool, log_capacity_mb=args.log_capacity_mb, max_connections=2000)
    servers = [InnoxideServer(args.innoxide, st), MariadbServer(st)]
    rows, charts, verdicts, load_times, sysbench_rows = [], [], {}, {}, []
    try:
        for s in servers:
            s.start()
            t0 = time.monotonic()
            bench(args, s, "load", "--objects", str(args.objects), "--load-threads", str(args.load_threads), capture=False)
            load_times[s.name] = time.monotonic() - t0
        for scenario in scenarios:
            for rw in rws:
                if args.full and scenario == "users" and rw != 1:
                    continue
                verdicts[(scenario, rw)] = run_scenario(args, servers, scenario, rw, results_dir, rows, charts)
        if args.sysbench:
            sysbench_rows = run_sysbench(args, servers)
    except (RunFailed, ServerError, sb.RunFailed) as e:
        log("FAILED: %s" % e)
        return 1
    finally:
        for s in servers:
            s.stop()
    md = markdown(args, rows, verdicts, charts, sysbench_rows, load_times, started)
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    failed = [k for k, v in verdicts.items() if any("passed" not in x for x in v.values())]
    if failed:
        log("FAILED: verify did not pass for %s" % failed)
        return 1
    log("dbstress side by side done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
