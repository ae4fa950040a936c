#!/usr/bin/env python3
"""Prints this `make bench` run's figures beside the last committed ones
(bench/last-results.txt), so a figure that got much worse is visible to
whoever caused it.

  compare_last.py NEW LAST

Both files hold bench/run.sh's lines `bench NAME VALUE UNIT key=value...`.
Figures are matched by NAME (and for the HTTP lines also their p50 and
p99). Rates (UNIT ending in /s, and ratio) are better higher; times,
sizes and counts better lower. A change past 25% in the worse direction is
marked WORSE, with the factor. The machine and commit of the committed
figures are the file's `bench machine` line and its git history: compare
only runs of the same machine kind. Exit status is always 0: wall-clock
figures on a shared machine are for people, the deterministic guard is
`make perf-check`.
"""
import re
import sys

HIGHER_BETTER = ("/s", "ratio")


def parse(path):
    figs = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return figs
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or parts[0] != "bench" or parts[1] == "machine":
            continue
        try:
            value = float(parts[2])
        except ValueError:
            continue
        # the HTTP lines come once per concurrency, the scale lines once per size
        name = parts[1]
        for kv in parts[4:]:
            m = re.match(r"(concurrency|pods)=(\d+)$", kv)
            if m and ((m.group(1) == "concurrency" and name.startswith("http_")) or
                      (m.group(1) == "pods" and name.startswith("scale_"))):
                name += "@%s%s" % ("c" if m.group(1) == "concurrency" else "", m.group(2))
        figs[name] = (value, parts[3])
        for kv in parts[4:]:
            m = re.match(r"(p50|p99)=([\d.]+)(us|ms|s)$", kv)
            if m:
                scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(3)]
                figs[name + "." + m.group(1)] = (float(m.group(2)) * scale, "ms")
    return figs


def verdict(new, old, unit):
    if old == 0 or new == 0:
        return ""
    higher = unit.endswith(HIGHER_BETTER)
    factor = old / new if higher else new / old
    return "WORSE x%.2f" % factor if factor > 1.25 else ""


def main():
    if len(sys.argv) != 3:
        print("usage: compare_last.py NEW LAST", file=sys.stderr)
        return 2
    new, last = parse(sys.argv[1]), parse(sys.argv[2])
    if not last:
        print("(no committed figures in %s to compare with)" % sys.argv[2])
        return 0
    print("%-44s %14s %14s %8s  %s" % ("figure", "now", "committed", "change", ""))
    for name, (value, unit) in new.items():
        if name not in last:
            print("%-44s %14.3f %14s %8s  %s" % (name, value, "-", "", unit))
            continue
        old = last[name][0]
        change = "%+.0f%%" % ((value - old) / old * 100) if old else ""
        print("%-44s %14.3f %14.3f %8s  %s %s" % (name, value, old, change, unit,
                                                  verdict(value, old, unit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
