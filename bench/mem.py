#!/usr/bin/env python3
"""Memory figures for `make bench`: peak and steady RSS, threads
and glibc malloc arenas of `schedext serve`, each case run RUNS times, with
min/median/max so the run-to-run variance shows.

  mem.py BIN CLUSTER NODES PODS RUNS
    extender    serve --kubeconfig (extender mode) against the fake API
                server holding NODES nodes and PODS bound pods; sampled 3 s
                after /readyz turned 200.
    standalone  serve --standalone with NODES nodes and PODS pending pods,
                sampled 3 s after every pod is bound.
    ingest      serve --state CLUSTER (the whole generated List), sampled
                2 s after it listens; seconds = time until it listens.

peak is VmHWM, rss VmRSS (/proc/PID/status); arenas are glibc's malloc
arenas as malloc_info() counts them in the process (schedext_malloc_arenas
on /metrics).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def arenas(base):
    """malloc arenas as the process counts them (malloc_info, on /metrics)."""
    text = e2e.http("GET", base + "/metrics").decode()
    for line in text.splitlines():
        if line.startswith("schedext_malloc_arenas "):
            return int(float(line.split()[1]))
    return -1


def sample(pid, base):
    st = status(pid)
    mb = lambda k: int(st[k].split()[0]) / 1024.0  # noqa: E731
    return {"peak": mb("VmHWM"), "rss": mb("VmRSS"), "threads": int(st["Threads"]),
            "arenas": arenas(base)}


def load_cluster(api, cluster, nodes, pods, bound):
    """NODES nodes and PODS pods of the generated cluster, the pods bound
    round-robin, or pending."""
    node_ops = e2e.nodes_of(cluster, nodes)
    names = [o["object"]["metadata"]["name"] for o in node_ops]
    src = [o for o in cluster if o.get("kind") == "Pod"][:pods]
    api.apply([e2e.namespace(n) for n in sorted({p["metadata"]["namespace"] for p in src})])
    api.apply(node_ops)
    ops = []
    for i, p in enumerate(src):
        q = e2e.fresh_pod(p, names[i % len(names)] if bound else None)
        if not bound:
            q["spec"].pop("nodeName", None)
            q["status"] = {"phase": "Pending"}
        ops.append({"op": "create", "object": q})
    api.apply(ops)


def live_run(binary, cluster, nodes, pods, standalone):
    tmp = tempfile.mkdtemp(prefix="bench-mem-")
    api = e2e.FakeApi(tmp, 1000)
    sx = None
    try:
        load_cluster(api, cluster, nodes, pods, bound=not standalone)
        extra = ["--standalone", "--kube-api-qps", str(e2e.CLIENT_QPS), "--kube-api-burst",
                 str(e2e.CLIENT_BURST)] if standalone else []
        sx = e2e.Schedext(tmp, binary, e2e.kubeconfig(tmp, api.base), *extra)
        sx.wait_ready()
        end = time.time() + 300
        while standalone and time.time() < end:
            m = sx.metrics()
            if m.get("bound", 0) >= pods and m.get("pending", 1) == 0:
                break
            time.sleep(0.1)
        time.sleep(3)
        return sample(sx.p.pid, sx.base)
    finally:
        if sx:
            sx.stop()
        api.stop()


def ingest_run(binary, cluster_path):
    t0 = time.time()
    p = subprocess.Popen([binary, "serve", "--state", cluster_path, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in p.stderr:
            m = re.search(r"listening on \S+ \(port (\d+)", line)
            if m:
                port = m.group(1)
                break
        took = time.time() - t0
        time.sleep(2)
        s = sample(p.pid, "http://127.0.0.1:%s" % port)
        s["seconds"] = took
        return s
    finally:
        p.terminate()
        p.wait()


def report(case, runs, extra):
    def mmm(key, fmt="%.1f"):
        vals = sorted(r[key] for r in runs)
        return "/".join(fmt % v for v in (vals[0], statistics.median(vals), vals[-1]))
    peaks = [r["peak"] for r in runs]
    print("bench mem_%s %s MB peak(min/median/max) rss_mb=%s threads=%s arenas=%s runs=%d "
          "max_over_min=%.2f%s" % (case, mmm("peak"), mmm("rss"), mmm("threads", "%d"),
                                   mmm("arenas", "%d"), len(runs), max(peaks) / min(peaks), extra),
          flush=True)


def main():
    binary, cluster_path = sys.argv[1], sys.argv[2]
    nodes, pods, nruns = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    cases = sys.argv[6].split(",") if len(sys.argv) > 6 else ["extender", "standalone", "ingest"]
    cluster = e2e.load_items(cluster_path)
    if "extender" in cases:
        report("extender", [live_run(binary, cluster, nodes, pods, False) for _ in range(nruns)],
               " nodes=%d pods=%d" % (nodes, pods))
    if "standalone" in cases:
        report("standalone", [live_run(binary, cluster, nodes, pods, True) for _ in range(nruns)],
               " nodes=%d pending=%d" % (nodes, pods))
    if "ingest" in cases:
        runs = [ingest_run(binary, cluster_path) for _ in range(nruns)]
        secs = sorted(r["seconds"] for r in runs)
        report("ingest", runs, " seconds=%.2f/%.2f/%.2f" % (secs[0], statistics.median(secs),
                                                           secs[-1]))


if __name__ == "__main__":
    main()
