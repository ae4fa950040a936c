#!/usr/bin/env python3
"""Compares the counters of bench/perf_check.c with the committed baseline
(make perf-check; bench/perf_check.sh runs it).

  perf_compare.py --native FILE --callgrind DIR --baseline FILE
                  [--tolerance PCT] [--write]

FILE (--native) holds perf_check's lines `case NAME ops=N faults=F
allocs=A`; DIR holds callgrind's dumps, one per case (the dump's trigger
names the case, its totals line counts the instructions of the case), so
instructions per operation = totals / ops.

A figure fails when it exceeds baseline * (1 + PCT/100) + slack, where the
slack absorbs what a noisy machine can add to a small figure: none for
instructions (callgrind counts them exactly), 4 minor faults and 2
allocations per operation. The table lists every figure; the exit status
is 1 when any failed, or when a case of the baseline was not measured.
--write replaces the baseline with this run's figures.
"""
import argparse
import glob
import os
import re
import sys

METRICS = ("instructions", "faults", "allocs")
TRIGGER = "desc: Trigger: Client Request: "
SLACK = {"instructions": 0.0, "faults": 4.0, "allocs": 2.0}


def read_native(path):
    cases = {}
    for line in open(path):
        m = re.match(r"case (\S+) ops=(\d+) faults=([\d.]+) allocs=([\d.]+)", line)
        if m:
            cases[m.group(1)] = {"ops": int(m.group(2)), "faults": float(m.group(3)),
                                 "allocs": float(m.group(4))}
    return cases


def read_callgrind(folder):
    """case name -> instructions of the whole case (every thread)."""
    out = {}
    for path in glob.glob(os.path.join(folder, "callgrind.out*")):
        name = total = None
        for line in open(path, errors="replace"):
            if line.startswith(TRIGGER):
                name = line[len(TRIGGER):].strip()
            elif line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
        if name and total is not None:
            out[name] = total
    return out


def read_baseline(path):
    base = {}
    if not os.path.exists(path):
        return base
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        case, metric, value = line.split()
        base[(case, metric)] = float(value)
    return base


def current(native, cg):
    now = {}
    for case, v in native.items():
        for metric in ("faults", "allocs"):
            now[(case, metric)] = v[metric]
        if case in cg:
            now[(case, "instructions")] = cg[case] / v["ops"]
    return now


def write_baseline(path, now):
    with open(path, "w") as f:
        f.write("# make perf-check baseline: per operation, bench/perf_check.c's cases\n"
                "# (instructions under callgrind, minor faults and heap allocations\n"
                "# natively). Rewritten by `make perf-check UPDATE=1`; commit it alone,\n"
                "# saying why the figures changed.\n")
        for (case, metric) in sorted(now):
            f.write("%s %s %.2f\n" % (case, metric, now[(case, metric)]))
    print("perf-check: wrote %s (%d figures)" % (path, len(now)))


def fmt(v):
    return "-" if v is None else ("{:,.0f}".format(v) if v >= 100 else "{:.2f}".format(v))


def compare(base, now, tol):
    failed = []
    keys = sorted(set(base) | set(now))
    print("%-24s %-12s %14s %14s %8s  %s" % ("case", "metric", "baseline", "now", "change",
                                            "verdict"))
    for key in keys:
        b, n = base.get(key), now.get(key)
        if b is None:
            verdict, change = "new (not in baseline)", ""
        elif n is None:
            verdict, change = "FAIL: not measured", ""
            failed.append(key)
        else:
            limit = b * (1 + tol / 100.0) + SLACK[key[1]]
            change = "%+.1f%%" % ((n - b) / b * 100) if b else ""
            verdict = "ok" if n <= limit else "FAIL: above %s" % fmt(limit)
            if n > limit:
                failed.append(key)
        print("%-24s %-12s %14s %14s %8s  %s" % (key[0], key[1], fmt(b), fmt(n), change,
                                                verdict))
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--native", required=True)
    ap.add_argument("--callgrind", required=True)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--tolerance", type=float, default=25.0)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    native = read_native(a.native)
    cg = read_callgrind(a.callgrind)
    if not native or not cg:
        print("perf-check: no figures measured (native %d, callgrind %d cases)"
              % (len(native), len(cg)))
        return 1
    now = current(native, cg)
    if a.write:
        write_baseline(a.baseline, now)
        return 0
    failed = compare(read_baseline(a.baseline), now, a.tolerance)
    if failed:
        print("perf-check: %d figure(s) grew more than %.0f%% over %s: %s"
              % (len(failed), a.tolerance, a.baseline,
                 ", ".join("%s/%s" % k for k in failed)))
        return 1
    print("perf-check: %d figures within %.0f%% of %s" % (len(now), a.tolerance, a.baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
