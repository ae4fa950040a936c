#!/usr/bin/env python3
"""End-to-end figures against test/fakeapi/fakeapi.py for `make bench`.

  e2e.py standalone BIN CLUSTER PENDING NODES
      Loads NODES nodes (the first ones of the generated CLUSTER List) and
      the unbound pods of PENDING into the fake API server, starts
      `schedext serve --standalone`, and prints
      `bench standalone_e2e <pods/s> pods/s ...`: bound pods over the time
      from the first pod leaving the pending state to the last Binding
      observed back in schedext's cache (schedext's /metrics, polled every
      20 ms). The fake server's Binding records confirm the count.

  e2e.py watch BIN CLUSTER NODES PODS UPDATES
      Loads NODES nodes and PODS bound pods, starts `schedext serve
      --kubeconfig` (extender mode, no scheduling), then applies UPDATES pod
      label updates through /_control/objects as fast as the server accepts
      them, and prints `bench watch_events <events/s> events/s ...`: UPDATES
      over the time from the first update sent to the last resourceVersion
      seen in schedext's /debug/cache.

  e2e.py scale BIN CLUSTER PENDING NODES SIZES [--runs N] [--bind-delay-ms MS]
                [--scheduler PATH] [--storage FILE]
      Standalone at each size of SIZES (comma-separated pending pod counts,
      the first ones of PENDING) on NODES nodes, each on a fresh fake API
      server, and prints one `bench scale_standalone ...` line per size and
      run: pods/s from process start and from the first binding (the fake
      server's accepted Bindings), CPU seconds and peak RSS (VmHWM) of the
      scheduler at the last binding, API requests per bound pod by verb (the
      fake server's counts), how many `Scheduled` events arrived and the
      seconds from the last binding to the last of them, and schedext's
      own time split from its /metrics (scheduling attempts vs the pod
      scheduling SLI). --bind-delay-ms slows every Binding down (the
      fake's bind_delay_ms fault). --storage FILE creates gen.py's
      --storage-out objects (a volumes mix's claims, PVs and classes)
      before the pods. --scheduler PATH runs a kube-scheduler
      binary the same way right after each schedext run (same client
      limits: qps 5000, burst 5000, no leader election); without it that
      half prints one `skipped` line.

Both report the fake server's and schedext's CPU use over the measured
window (from /proc) and `bound_by=fakeapi` when the single-threaded Python
server used more than 85% of a core: then the figure is the fake server's
limit, not schedext's.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKEAPI = os.path.join(ROOT, "test", "fakeapi", "fakeapi.py")
TICK = os.sysconf("SC_CLK_TCK")
BATCH = 250
CLIENT_QPS, CLIENT_BURST = 5000, 5000  # passed as --kube-api-qps/--kube-api-burst


def http(method, url, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


def cpu_s(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class FakeApi:
    def __init__(self, tmp, history):
        self.log = open(os.path.join(tmp, "fakeapi.log"), "w")
        self.p = subprocess.Popen([sys.executable, FAKEAPI, "--port", "0", "--history", str(history)],
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError("fakeapi did not start: %r" % line)
        self.base = "http://127.0.0.1:%d" % int(line.split()[-1])

    def apply(self, ops):
        for k in range(0, len(ops), BATCH):
            out = json.loads(http("POST", self.base + "/_control/objects", {"ops": ops[k:k + BATCH]}))
            bad = [r for r in out["results"] if r.get("kind") == "Status"]
            if bad:
                raise RuntimeError("fakeapi rejected an op: %r" % bad[0])
        return out

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()


def listening_base(logpath, proc, timeout=30):
    """http://127.0.0.1:PORT of a `schedext serve --listen 127.0.0.1:0`
    started with its log in logpath, once the log says which port it bound."""
    end = time.time() + timeout
    while time.time() < end:
        with open(logpath, errors="replace") as f:
            m = re.search(r"listening on \S+ \(port (\d+)", f.read())
        if m:
            return "http://127.0.0.1:%s" % m.group(1)
        if proc.poll() is not None:
            raise RuntimeError("schedext exited with %d" % proc.returncode)
        time.sleep(0.02)
    raise RuntimeError("schedext did not start")


def wait_ready(base, timeout=120):
    """True once base/readyz answers 200 within timeout."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            http("GET", base + "/readyz", timeout=5)
            return True
        except Exception:
            time.sleep(0.05)
    return False


class Schedext:
    def __init__(self, tmp, binary, kubeconfig, *extra):
        self.logpath = os.path.join(tmp, "schedext.log")
        self.log = open(self.logpath, "w")
        self.p = subprocess.Popen([binary, "serve", "--kubeconfig", kubeconfig,
                                   "--listen", "127.0.0.1:0"] + list(extra),
                                  stdout=subprocess.DEVNULL, stderr=self.log)
        self.base = listening_base(self.logpath, self.p)

    def wait_ready(self, timeout=120):
        if not wait_ready(self.base, timeout):
            raise RuntimeError("schedext not ready")

    def metrics(self):
        text = http("GET", self.base + "/metrics").decode()
        out = {}
        for line in text.splitlines():
            m = re.match(r'(schedext_cache_pods\{state="(\w+)"\}|schedext_watch_restarts_total) (\S+)', line)
            if m:
                out[m.group(2) or "restarts"] = float(m.group(3))
        return out

    def stop(self):
        """SIGTERM, then SIGKILL after 3 s: a graceful stop drains the
        rate-limited event queue, which is not part of the figures."""
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(3)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


def kubeconfig(tmp, server):
    path = os.path.join(tmp, "kubeconfig")
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "bench",
           "clusters": [{"name": "fake", "cluster": {"server": server}}],
           "users": [{"name": "u", "user": {}}],
           "contexts": [{"name": "bench", "context": {"cluster": "fake", "user": "u"}}]}
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def load_items(path):
    with open(path) as f:
        return json.load(f)["items"]


def fresh_obj(o):
    """o without the server-owned metadata fields."""
    return dict(o, metadata={k: v for k, v in o["metadata"].items()
                             if k not in ("uid", "resourceVersion", "creationTimestamp")})


def nodes_of(cluster, n):
    """The first n Nodes, without the server-owned fields."""
    out = []
    for o in cluster:
        if o.get("kind") == "Node":
            o = dict(o, metadata={k: v for k, v in o["metadata"].items()
                                  if k not in ("uid", "resourceVersion")})
            out.append({"op": "create", "object": o})
            if len(out) == n:
                break
    return out


def namespace(name):
    return {"op": "create", "object": {"kind": "Namespace", "metadata": {"name": name}}}


def fresh_pod(p, node=None):
    p = json.loads(json.dumps(p))
    for k in ("uid", "resourceVersion"):
        p["metadata"].pop(k, None)
    if node:
        p["spec"]["nodeName"] = node
        p.setdefault("status", {})["phase"] = "Running"
    return p


def cpu_note(api, sx, t0_cpu, wall, bound=None):
    """CPU use of both processes over the window and what bounds the figure:
    the caller's finding, else the fake server when its one Python thread
    was near a full core, else schedext."""
    fa = (cpu_s(api.p.pid) - t0_cpu[0]) / wall
    sc = (cpu_s(sx.p.pid) - t0_cpu[1]) / wall
    if bound is None:
        # Neither process near a core: the figure is bound by round trips
        # (one Binding POST per pod on the binder threads), not by CPU.
        bound = "fakeapi" if fa > 0.85 else ("schedext" if sc > 0.85 else "round_trips")
    return "fakeapi_cpu=%d%% schedext_cpu=%d%% bound_by=%s" % (fa * 100, sc * 100, bound)


def standalone(binary, cluster_path, pending_path, nnodes):
    tmp = tempfile.mkdtemp(prefix="bench-e2e-")
    api = FakeApi(tmp, 1000)
    sx = None
    try:
        cluster = load_items(cluster_path)
        pending = [fresh_pod(p) for p in load_items(pending_path)]
        ns = sorted({p["metadata"]["namespace"] for p in pending})
        api.apply([namespace(n) for n in ns])
        t = time.time()
        api.apply(nodes_of(cluster, nnodes))
        if storage:
            api.apply([{"op": "create", "object": fresh_obj(o)} for o in storage])
        api.apply([{"op": "create", "object": p} for p in pending])
        load_s = time.time() - t
        del cluster
        total = len(pending)
        sx = Schedext(tmp, binary, kubeconfig(tmp, api.base), "--standalone",
                      "--kube-api-qps", str(CLIENT_QPS), "--kube-api-burst", str(CLIENT_BURST))
        sx.wait_ready()
        t0 = t_last = None
        cpu0 = None
        deadline = time.time() + 600
        while time.time() < deadline:
            m = sx.metrics()
            now = time.time()
            done = m.get("bound", 0)
            if t0 is None and done + m.get("assumed", 0) > 0:
                t0, cpu0 = now, (cpu_s(api.p.pid), cpu_s(sx.p.pid))
            if done >= total:
                t_last = now
                break
            time.sleep(0.02)
        if t_last is None:
            raise RuntimeError("only %d of %d pods bound" % (done, total))
        wall = max(t_last - t0, 1e-3)
        # The client's token bucket is raised to 5000 QPS (as kube-scheduler's
        # scheduler_perf does); report when it is what bounds the figure.
        # Only a rate near the bucket's refill rate can be the bucket's doing.
        bucket = max(total - CLIENT_BURST, 0) / CLIENT_QPS
        limited = bucket > 0 and total / wall > 0.8 * CLIENT_QPS and wall > 0.85 * bucket
        note = cpu_note(api, sx, cpu0, wall, "client_qps" if limited else None)
        rec = json.loads(http("GET", api.base + "/_control/records"))
        names = [b["metadata"]["name"] for b in rec["bindings"]]
        print("bench standalone_e2e %.0f pods/s nodes=%d pending=%d seconds=%.2f bindings=%d "
              "duplicate_bindings=%d load_s=%.1f %s"
              % (total / wall, nnodes, total, wall, len(names), len(names) - len(set(names)),
                 load_s, note), flush=True)
    finally:
        if sx:
            sx.stop()
        api.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def watch(binary, cluster_path, nnodes, npods, updates):
    tmp = tempfile.mkdtemp(prefix="bench-watch-")
    # Every pass of a fake-server watcher must find its last RV in the history.
    api = FakeApi(tmp, 4 * BATCH)
    sx = None
    try:
        cluster = load_items(cluster_path)
        node_ops = nodes_of(cluster, nnodes)
        names = [o["object"]["metadata"]["name"] for o in node_ops]
        pods = [o for o in cluster if o.get("kind") == "Pod"][:npods]
        del cluster
        pods = [fresh_pod(p, names[i % len(names)]) for i, p in enumerate(pods)]
        api.apply([namespace(n) for n in sorted({p["metadata"]["namespace"] for p in pods})])
        api.apply(node_ops)
        api.apply([{"op": "create", "object": p} for p in pods])
        sx = Schedext(tmp, binary, kubeconfig(tmp, api.base))
        sx.wait_ready()
        restarts0 = sx.metrics().get("restarts", 0)
        ops = []
        for k in range(updates):
            p = pods[k % len(pods)]
            p["metadata"].setdefault("labels", {})["bench-rev"] = str(k)
            ops.append({"op": "update", "object": json.loads(json.dumps(p))})
        last = ops[-1]["object"]["metadata"]
        cpu0 = (cpu_s(api.p.pid), cpu_s(sx.p.pid))
        t0 = time.time()
        out = api.apply(ops)
        t_sent = time.time()
        want = out["results"][-1]["metadata"]["resourceVersion"]
        t_seen = None
        while time.time() < t_sent + 300:
            cache = json.loads(http("GET", sx.base + "/debug/cache"))
            if any(p["name"] == last["name"] and p["namespace"] == last["namespace"]
                   and p["resourceVersion"] == want for p in cache["pods"]):
                t_seen = time.time()
                break
            time.sleep(0.01)
        if t_seen is None:
            raise RuntimeError("resourceVersion %s never reached the cache" % want)
        wall = t_seen - t0
        # The cache caught up within 10% of the window after the last update
        # was accepted: the figure is the rate the fake server (and this
        # Python producer) accepted updates, not schedext's limit.
        producer = (t_seen - t_sent) < 0.1 * wall
        note = cpu_note(api, sx, cpu0, wall, "fakeapi_apply" if producer else None)
        restarts = sx.metrics().get("restarts", 0) - restarts0
        print("bench watch_events %.0f events/s updates=%d nodes=%d pods=%d seconds=%.2f "
              "applied_per_s=%.0f lag_after_last_ms=%.0f watch_restarts=%d %s"
              % (updates / wall, updates, nnodes, npods, wall, updates / (t_sent - t0),
                 (t_seen - t_sent) * 1000, restarts, note), flush=True)
    finally:
        if sx:
            sx.stop()
        api.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def vm_hwm_mb(pid, field="VmHWM"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def thread_cpu(pid):
    """CPU seconds per thread name (comm) of a process's live threads, from
    schedstat (nanoseconds; stat's ticks miss short bursts)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[name] = out.get(name, 0.0) + ns / 1e9
    return out


def binding_latency_ms(base):
    """Mean time the fake server took per Binding (arrival to response
    written), over the request log's last 20,000 requests."""
    reqs = json.loads(http("GET", base + "/_control/requests?resource=pods"))["requests"]
    d = [r["done"] - r["t"] for r in reqs
         if r["method"] == "POST" and r["path"].endswith("/binding") and r["done"]]
    return 1e3 * sum(d) / len(d) if d else float("nan")


def prom_sum(text, name):
    """Sum of every sample of one metric name (all label sets)."""
    tot = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            tot += float(line.rsplit(" ", 1)[1])
    return tot


def kube_scheduler_config(tmp, kubeconfig_path):
    path = os.path.join(tmp, "kube-scheduler.yaml")
    with open(path, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                "clientConnection:\n  kubeconfig: %s\n  qps: %d\n  burst: %d\n"
                "leaderElection:\n  leaderElect: false\n" % (kubeconfig_path, CLIENT_QPS, CLIENT_BURST))
    return path


def scale_once(binary, kind, cluster, pending, nnodes, bind_delay_ms, storage=()):
    """One run; returns the figures as a dict. storage: objects the pods'
    volumes need (claims, PVs, classes), created before the pods."""
    tmp = tempfile.mkdtemp(prefix="bench-scale-")
    api = FakeApi(tmp, 1000)
    proc = log = None
    try:
        total = len(pending)
        ns = sorted({p["metadata"]["namespace"] for p in pending})
        api.apply([namespace(n) for n in ns])
        api.apply(nodes_of(cluster, nnodes))
        if storage:
            api.apply([{"op": "create", "object": fresh_obj(o)} for o in storage])
        api.apply([{"op": "create", "object": p} for p in pending])
        if bind_delay_ms:
            http("POST", api.base + "/_control/faults", {"bind_delay_ms": bind_delay_ms})
        kc = kubeconfig(tmp, api.base)
        log = open(os.path.join(tmp, "sched.log"), "w")
        if kind == "schedext":
            port_file = os.path.join(tmp, "sched.log")
            argv = [binary, "serve", "--kubeconfig", kc, "--listen", "127.0.0.1:0", "--standalone",
                    "--kube-api-qps", str(CLIENT_QPS), "--kube-api-burst", str(CLIENT_BURST)]
        else:
            argv = [binary, "--config", kube_scheduler_config(tmp, kc), "--secure-port", "0", "-v", "0"]
        api_cpu0 = cpu_s(api.p.pid)
        t_start = time.time()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log)
        c = {}
        deadline = t_start + 900
        sx_base = None
        while time.time() < deadline:
            c = json.loads(http("GET", api.base + "/_control/counts"))
            if c["accepted_bindings"] >= total:
                break
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %d" % (kind, proc.returncode))
            time.sleep(0.05)
        else:
            raise RuntimeError("only %d of %d pods bound" % (c["accepted_bindings"], total))
        sched_cpu, peak = cpu_s(proc.pid), vm_hwm_mb(proc.pid)
        threads = thread_cpu(proc.pid)
        api_cpu = cpu_s(api.p.pid) - api_cpu0
        reqs = dict(c["requests"])
        split = ""
        if kind == "schedext":
            with open(port_file, errors="replace") as f:
                m = re.search(r"listening on \S+ \(port (\d+)", f.read())
            if m:
                sx_base = "http://127.0.0.1:%s" % m.group(1)
                text = http("GET", sx_base + "/metrics").decode()
                attempt = prom_sum(text, "scheduler_scheduling_attempt_duration_seconds_sum")
                algo = prom_sum(text, "scheduler_scheduling_algorithm_duration_seconds_sum")
                sli = prom_sum(text, "scheduler_pod_scheduling_sli_duration_seconds_sum")
                named = ("sx-loop", "sx-bind", "sx-events")
                other = sum(v for k, v in threads.items() if k not in named)
                # CPU by thread: the scheduling cycle (loop; the pool's
                # workers are in "other" with the informer), the binding
                # path, the event path; the API server's side is the fake's
                # mean Binding latency.
                split = (" cpu_ms_per_pod_loop=%.3f cpu_ms_per_pod_bind=%.3f "
                         "cpu_ms_per_pod_events=%.3f cpu_ms_per_pod_other=%.3f "
                         "api_binding_ms=%.2f attempt_ms_per_pod=%.1f algorithm_ms_per_pod=%.3f "
                         "sli_ms_per_pod=%.1f"
                         % tuple([threads.get(k, 0) * 1e3 / total for k in named]
                                 + [other * 1e3 / total, binding_latency_ms(api.base),
                                    attempt * 1e3 / total, algo * 1e3 / total, sli * 1e3 / total]))
        # The Scheduled events: wait for all, or 20 s without a new one.
        last_n, quiet = -1, time.time()
        while time.time() - quiet < 20:
            e = json.loads(http("GET", api.base + "/_control/counts"))
            if e["scheduled_events"] >= total:
                break
            if e["scheduled_events"] != last_n:
                last_n, quiet = e["scheduled_events"], time.time()
            time.sleep(0.1)
        if kind == "schedext" and proc.poll() is None:
            # The event path goes on after the last binding: its CPU up
            # to the last event.
            threads_end = thread_cpu(proc.pid)
            split += " cpu_ms_per_pod_events_total=%.3f cpu_s_total=%.2f rss_after_mb=%.1f" % (
                threads_end.get("sx-events", 0) * 1e3 / total, cpu_s(proc.pid),
                vm_hwm_mb(proc.pid, "VmRSS"))
        first, last = c["first_binding"], c["last_binding"]
        wall = max(last - t_start, 1e-3)
        fa = api_cpu / wall
        return {
            "from_start": total / wall,
            "from_first": total / max(last - first, 1e-3),
            "first_binding_s": first - t_start,
            "cpu_s": sched_cpu,
            "peak_mb": peak,
            "reqs": reqs,
            "scheduled_events": e["scheduled_events"],
            "last_event_after_s": (e["last_event"] - last) if e["last_event"] else float("nan"),
            "fakeapi_cpu": fa,
            "split": split,
        }
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if log:
            log.close()
        api.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def scale_line(kind, nnodes, total, bind_delay_ms, r):
    per = lambda k: r["reqs"].get(k, 0) / total
    writes = ("POST pods/binding", "PATCH pods/status", "POST events", "PATCH events")
    other = sum(v for k, v in r["reqs"].items() if k not in writes) / total
    print("bench scale_%s %.0f pods/s from_first=%.0f first_binding_s=%.2f pods=%d nodes=%d "
          "bind_delay_ms=%d cpu_s=%.2f cpu_ms_per_pod=%.3f peak_rss_mb=%.1f "
          "req_per_pod_binding=%.3f req_per_pod_status=%.3f req_per_pod_event_post=%.3f "
          "req_per_pod_event_patch=%.3f req_per_pod_other=%.3f scheduled_events=%d "
          "last_event_after_s=%.2f fakeapi_cpu=%d%% bound_by=%s load=%s%s"
          % (kind, r["from_start"], r["from_first"], r["first_binding_s"], total, nnodes,
             bind_delay_ms, r["cpu_s"], r["cpu_s"] * 1e3 / total, r["peak_mb"],
             per("POST pods/binding"), per("PATCH pods/status"), per("POST events"),
             per("PATCH events"), other, r["scheduled_events"], r["last_event_after_s"],
             r["fakeapi_cpu"] * 100, "fakeapi" if r["fakeapi_cpu"] > 0.85 else "-",
             "%.2f" % os.getloadavg()[0], r["split"]), flush=True)


def scale(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="e2e.py scale")
    ap.add_argument("binary")
    ap.add_argument("cluster")
    ap.add_argument("pending")
    ap.add_argument("nodes", type=int)
    ap.add_argument("sizes")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--bind-delay-ms", type=int, default=0)
    ap.add_argument("--scheduler", default=None, help="a kube-scheduler binary")
    ap.add_argument("--storage", default=None,
                    help="gen.py --storage-out of a volumes mix: created before the pods")
    a = ap.parse_args(argv)
    cluster = [o for o in load_items(a.cluster) if o.get("kind") == "Node"][:a.nodes]
    storage = load_items(a.storage) if a.storage else []
    pending_all = [fresh_pod(p) for p in load_items(a.pending)]
    got = {}
    for size in [int(x) for x in a.sizes.split(",")]:
        if size > len(pending_all):
            raise SystemExit("only %d pending pods in %s" % (len(pending_all), a.pending))
        pending = pending_all[:size]
        for _ in range(a.runs):
            r = scale_once(a.binary, "schedext", cluster, pending, a.nodes, a.bind_delay_ms,
                           storage)
            got.setdefault(size, []).append(r)
            scale_line("standalone", a.nodes, size, a.bind_delay_ms, r)
            if a.scheduler:
                scale_line("kube_scheduler", a.nodes, size, a.bind_delay_ms,
                           scale_once(a.scheduler, "kube-scheduler", cluster, pending, a.nodes,
                                      a.bind_delay_ms, storage))
        if not a.scheduler:
            print("bench scale_kube_scheduler skipped pods=%d: no --scheduler PATH given" % size,
                  flush=True)
    flatness(got)


def flatness(got):
    """Does the rate hold as the cluster fills? The largest size against
    the smallest: pods/s from the first binding (best run of each) and
    schedext's CPU per pod (median). When the fake server was near a core
    in either, the rate is its limit and CPU per pod is the figure."""
    sizes = sorted(got)
    if len(sizes) < 2:
        return
    lo, hi = sizes[0], sizes[-1]
    rate = lambda s: max(r["from_first"] for r in got[s])
    cpu = lambda s: statistics.median(r["cpu_s"] / s for r in got[s])
    fake = max(r["fakeapi_cpu"] for s in (lo, hi) for r in got[s])
    rr, cr = rate(hi) / rate(lo), cpu(hi) / cpu(lo)
    print("bench scale_flatness %.2f rate_ratio pods=%d/%d cpu_per_pod_ratio=%.2f "
          "rate_within_20pct=%s cpu_within_20pct=%s fakeapi_cpu_max=%d%% bound_by=%s"
          % (rr, hi, lo, cr, "yes" if rr >= 0.8 else "no", "yes" if cr <= 1.2 else "no",
             fake * 100, "fakeapi" if fake > 0.85 else "-"), flush=True)


def main(argv):
    if len(argv) == 6 and argv[1] == "standalone":
        standalone(argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) >= 2 and argv[1] == "scale":
        scale(argv[2:])
    elif len(argv) == 7 and argv[1] == "watch":
        watch(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
