#!/usr/bin/env python3
"""The scheduler_perf runner (bench/scheduler_perf.py) keeps working: a tiny
SchedulingBasic (50 nodes, 10 + 100 pods: the 5000-node workload at
--scale 0.01) in-process and against the fake API server, and a small
preemption workload in-process (churn, sleep, barrier, preemption). Every measured
pod is scheduled and the figures are printed."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, check, run_tests  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BUILD = os.environ.get("SCHEDEXT_BUILD", os.path.join(ROOT, "build"))
RUNNER = os.path.join(ROOT, "bench", "scheduler_perf.py")
DRIVER = os.path.join(BUILD, "bench", "perf_workload")


def run(tmp, *args):
    out = os.path.join(tmp, "perf.json")
    p = subprocess.run([sys.executable, RUNNER, "--bin", BIN, "--driver", DRIVER, "--json", out,
                        "--timeout", "60"] + list(args),
                       capture_output=True, text=True, timeout=120)
    sys.stdout.write(p.stdout)
    check(p.returncode == 0, "runner %s exits 0 (got %d: %s)" % (args, p.returncode, p.stderr[-500:]))
    with open(out) as f:
        return p.stdout, json.load(f)["workloads"]


def figures_ok(stdout, lines, mode, measured):
    check(len(lines) == 1, "%s: one workload reported" % mode)
    ln = lines[0]
    check(ln["measured"] == measured and ln["scheduled"] == measured,
          "%s: every measured pod scheduled (%s/%s)" % (mode, ln["scheduled"], ln["measured"]))
    check(ln["pods_per_s"] > 0 and ln["p50"] > 0, "%s: throughput printed" % mode)
    check(ln["attempt_ms"].get("50") is not None, "%s: attempt latency printed" % mode)
    check(ln["peak_rss_mb"] > 0, "%s: peak RSS printed" % mode)
    check(re.search(r"^perf \S+ mode=%s .*pods_per_s=" % mode, stdout, re.M) is not None,
          "%s: the perf line is printed" % mode)
    check("| workload | mode |" in stdout, "%s: the table is printed" % mode)
    return ln


def test_inprocess(tmp):
    if not os.path.exists(DRIVER):
        print("SKIP: %s not built (make tools)" % DRIVER)
        return
    out, lines = run(tmp, "--mode", "inprocess", "--workloads",
                     "SchedulingBasic/5000Nodes_10000Pods", "--scale", "0.01")
    figures_ok(out, lines, "inprocess", 100)


def test_inprocess_preemption(tmp):
    if not os.path.exists(DRIVER):
        return
    # 5 nodes of 4 CPUs, each full of 900m pods; high-priority pods of 3
    # CPUs arrive every 100 ms (churn) during a 450 ms sleep and must
    # preempt 3 pods each; then the measured pods, which fit.
    tpl = os.path.join(os.path.abspath(ROOT), "bench", "scheduler_perf", "templates")
    cfg = os.path.join(tmp, "cfg")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, "performance-config.yaml"), "w") as f:
        f.write("""- name: SmokePreemption
  workloadTemplate:
  - {opcode: createNodes, countParam: $initNodes}
  - {opcode: createPods, countParam: $initPods, podTemplatePath: %(t)s/pod-low-priority.yaml}
  - {opcode: churn, mode: create, number: 4, templatePaths: [%(t)s/pod-high-priority.yaml], intervalMilliseconds: 100}
  - {opcode: sleep, duration: 450ms}
  - {opcode: barrier}
  - {opcode: createPods, countParam: $measurePods, podTemplatePath: %(t)s/pod-default.yaml, collectMetrics: true}
  workloads:
  - {name: 5Nodes, threshold: 1, params: {initNodes: 5, initPods: 20, measurePods: 5}}
""" % {"t": tpl})
    out, lines = run(tmp, "--mode", "inprocess", "--config-dir", cfg, "--workloads", "SmokePreemption")
    ln = figures_ok(out, lines, "inprocess", 5)
    check(ln.get("churn_objects") == 4 and ln.get("preemptions") == 4 and ln.get("victims") == 12,
          "inprocess: 4 churn pods preempted 3 victims each (%r)"
          % {k: ln.get(k) for k in ("churn_objects", "preemptions", "victims")})


def test_fake(tmp):
    out, lines = run(tmp, "--mode", "fake", "--workloads", "SchedulingBasic/5000Nodes_10000Pods",
                     "--scale", "0.01")
    ln = figures_ok(out, lines, "fake", 100)
    req = ln.get("requests_per_pod") or {}
    check(abs(req.get("bind", 0) - 1.0) < 0.01, "fake: one Binding per pod (%r)" % req)
    check(ln["cpu_s_total"] >= 0 and ln.get("from_start_s"), "fake: CPU and time from start printed")


def test_skips(tmp):
    env = dict(os.environ)
    env.pop("KUBEBUILDER_ASSETS", None)
    p = subprocess.run([sys.executable, RUNNER, "--mode", "real"], capture_output=True, text=True,
                       env=env, timeout=30)
    check(p.returncode == 0 and p.stdout.count("\n") == 1 and "skipped" in p.stdout,
          "real mode without KUBEBUILDER_ASSETS: one skip line (%r)" % p.stdout)


if __name__ == "__main__":
    sys.exit(run_tests("test_scheduler_perf.py", [test_inprocess, test_inprocess_preemption, test_fake,
                                                   test_skips]))
