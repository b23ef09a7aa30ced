#!/usr/bin/env python3
"""Writes crates/engine/src/collation/uca900.rs: the primary weights utf8mb4_0900_ai_ci gives
each character, from the Unicode Collation Algorithm's Default Unicode Collation Element Table
(DUCET, allkeys.txt) as MySQL 8.0 uses it.

    /usr/bin/python3 tools/collation/uca900.py [--allkeys PATH] && cargo fmt --all

MySQL 8.0 builds its 0900 collations from DUCET 9.0.0. This machine has DUCET 13.0.0 (Perl's
Unicode::Collate ships it); the script keeps the characters Unicode 9.0 had (Perl's
Unicode::UCD lists them) so that the characters added since weigh as unassigned ones do in
MySQL (implicit weights, engine collation/uca.rs). Like MySQL's:
- only single characters (DUCET's contractions are left out, as MySQL leaves them out);
- at most the first 8 collation elements of a character;
- at the primary level (ai_ci) only the non-zero primary weights count: a character with
  none is ignorable.

The output holds the ASCII weights as a table, runs of consecutive characters with one weight
each (the same weight, or one more each step), and the characters that weigh several weights
(an expansion: a slice of a shared pool, equal sequences shared).
"""

import argparse
import bisect
import os
import re
import subprocess

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(REPO_ROOT, "crates/engine/src/collation/uca900.rs")
ALLKEYS = "/usr/share/perl/5.36.0/Unicode/Collate/allkeys.txt"
MAX_CES = 8
STEP = 0x8000


def unicode_9_chars():
    """The inversion list of the code points Unicode 9.0 assigned."""
    out = subprocess.run(
        ["perl", "-MUnicode::UCD=prop_invlist", "-e", 'print join("\\n", prop_invlist("In=9.0"))'],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [int(x) for x in out.split()]


def load(path, inv):
    """{code point: tuple of non-zero primary weights} of the single characters kept."""
    version = None
    weights = {}
    ce = re.compile(r"\[[.*]([0-9A-F]+)\.[0-9A-F]+\.[0-9A-F]+\]")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("@version"):
                version = line.split()[1]
            line = line.split("#")[0].strip()
            if not line or line.startswith("@"):
                continue
            cps, ws = line.split(";")
            cps = cps.split()
            if len(cps) != 1:
                continue
            cp = int(cps[0], 16)
            if bisect.bisect_right(inv, cp) % 2 == 0:
                continue
            prim = [int(p, 16) for p in ce.findall(ws)][:MAX_CES]
            weights[cp] = tuple(p for p in prim if p)
    return version, weights


def runs_of(weights):
    """(first code point, count | STEP if the weight grows by one each step, first weight) of
    the characters weighing one weight or none (0: ignorable)."""
    singles = sorted((cp, w[0] if w else 0) for cp, w in weights.items() if len(w) <= 1)
    runs = []
    for cp, w in singles:
        if runs:
            first, n, step, w0 = runs[-1]
            if first + n == cp and n < STEP - 1:
                if n == 1 and w0 != 0 and w == w0 + 1 and step is None:
                    runs[-1] = (first, 2, 1, w0)
                    continue
                if n == 1 and w == w0 and step is None:
                    runs[-1] = (first, 2, 0, w0)
                    continue
                if step is not None and w == w0 + step * n:
                    runs[-1] = (first, n + 1, step, w0)
                    continue
        runs.append((cp, 1, None, w))
    return [(cp, n | (STEP if step == 1 else 0), w) for cp, n, step, w in runs]


def tables(weights):
    """The ASCII weights, runs, expansions and pool of {code point: weights} (equal weight
    sequences share their place in the pool)."""
    ascii_w = []
    for cp in range(128):
        w = weights.get(cp, ())
        assert len(w) <= 1, (cp, w)
        ascii_w.append(w[0] if w else 0)
    runs = runs_of({cp: w for cp, w in weights.items() if cp >= 128})
    pool, at, exps = [], {}, []
    for cp in sorted(weights):
        w = weights[cp]
        if len(w) < 2:
            continue
        assert len(w) < 256, (cp, w)
        if w not in at:
            at[w] = len(pool)
            pool.extend(w)
        exps.append((cp, at[w], len(w)))
    return ascii_w, runs, exps, pool


def table_lines(ascii_w, runs, exps, pool, own_step):
    """The Rust statics ASCII, RUNS, EXPANSIONS and POOL (and STEP if `own_step`)."""
    step = "STEP" if own_step else "uca900::STEP"
    lines = [
        "/// The primary weight of each ASCII character (0: ignorable).",
        "pub(crate) static ASCII: [u16; 128] = [",
    ]
    lines += ["    " + " ".join(f"0x{w:04X}," for w in ascii_w[i : i + 8]) for i in range(0, 128, 8)]
    lines += ["];", ""]
    if own_step:
        lines += [
            "/// Set in a run's count when each character weighs one more than the one before it.",
            f"pub(crate) const STEP: u16 = 0x{STEP:04X};",
            "",
        ]
    lines += [
        "/// Runs of consecutive characters past ASCII weighing one primary weight each (0:",
        f"/// ignorable): first character, count (| {step}), first weight; sorted, disjoint.",
        f"pub(crate) static RUNS: [(u32, u16, u16); {len(runs)}] = [",
    ]
    lines += [
        "    " + " ".join(f"(0x{cp:05X}, 0x{n:04X}, 0x{w:04X})," for cp, n, w in runs[i : i + 4])
        for i in range(0, len(runs), 4)
    ]
    lines += [
        "];",
        "",
        "/// Characters weighing several primary weights: character, start in `POOL`, count.",
        f"pub(crate) static EXPANSIONS: [(u32, u16, u8); {len(exps)}] = [",
    ]
    lines += [
        "    " + " ".join(f"(0x{cp:05X}, {o}, {n})," for cp, o, n in exps[i : i + 5])
        for i in range(0, len(exps), 5)
    ]
    lines += ["];", "", "/// The weights of the expansions.", f"pub(crate) static POOL: [u16; {len(pool)}] = ["]
    lines += ["    " + " ".join(f"0x{w:04X}," for w in pool[i : i + 10]) for i in range(0, len(pool), 10)]
    lines += ["];", ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--allkeys", default=ALLKEYS, help="DUCET's allkeys.txt")
    args = ap.parse_args()
    version, weights = load(args.allkeys, unicode_9_chars())
    header = [
        "//! utf8mb4_0900_ai_ci's primary weights: generated by tools/collation/uca900.py from",
        f"//! DUCET {version} (allkeys.txt), keeping the characters of Unicode 9.0 (MySQL 8.0 uses",
        "//! DUCET 9.0.0; do not edit by hand).",
        "",
    ]
    ascii_w, runs, exps, pool = tables(weights)
    lines = header + table_lines(ascii_w, runs, exps, pool, own_step=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"{OUT}: {len(runs)} runs, {len(exps)} expansions, {len(pool)} pooled weights")


if __name__ == "__main__":
    main()
