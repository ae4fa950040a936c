#!/usr/bin/env python3
"""Soak: schedext serve --standalone against the fake API server for N
minutes, with three loads at once:

* extender load: filter / prioritize / preempt in both node modes, and bind
  of pods left to another scheduler, from one client thread;
* watch churn: pods created and deleted, node labels updated, nodes added
  and removed, while every fault knob of test/fakeapi/fakeapi.py is cycled
  (split chunks, mid-event disconnects, 410 at start and as an event,
  ERROR events, slow writes, 429/500 bursts and probabilities, unserved and
  forbidden resources, small list pages, compaction, dropped watches, token
  rotation with a token file);
* standalone scheduling of the churned pods by schedext itself.

Every minute it prints RSS, open fds, threads and cache size of the
schedext process. At the end it stops faults and churn, waits for
convergence and checks: the cache equals the server's objects (names,
resourceVersions, nodes), every pod that was created is bound or still
pending for a reason, no pod was bound twice, the process never crashed;
growth of RSS/fds/threads after warm-up within GROWTH (5 %).

Usage: soak.py --bin build/schedext --minutes N [--tmp DIR]
Exit status 0 when every check holds."""
import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKEAPI = os.environ.get("FAKEAPI") or os.path.join(ROOT, "test", "fakeapi", "fakeapi.py")
GROWTH = 0.05
ZONES = ["z1", "z2", "z3"]

FAULTS = [  # (name, knobs) cycled every period; {} = none
    ("none", {}),
    ("split_chunks", {"split_chunks": True}),
    ("disconnect", {"disconnect_prob": 0.05}),
    ("410_start", {"watch_410_start": 3}),
    ("410_event", {"watch_410_event": 3}),
    ("error_events", {"error_event_prob": 0.02}),
    ("slow", {"slow_ms": 20}),
    ("429_burst", {"status_429": 20, "retry_after": 1}),
    ("500_burst", {"status_500": 20}),
    ("429_500_prob", {"fail_prob_429": 0.05, "fail_prob_500": 0.05}),
    ("small_pages", {"list_page_max": 7, "watch_410_start": 2}),
    ("unserved", {"unserved": ["services"], "forbidden": ["statefulsets"]}),
    ("compact", "compact"),
    ("drop", "drop"),
    ("token", "token"),
]


def http(method, url, body=None, timeout=10, headers=None):
    data = body if isinstance(body, bytes) else (json.dumps(body).encode()
                                                  if body is not None else None)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            try:
                return r.status, json.loads(raw or b"null")
            except ValueError:
                return r.status, raw.decode(errors="replace")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


class Api:
    def __init__(self, tmp, token):
        self.log = open(os.path.join(tmp, "fakeapi.log"), "w")
        self.p = subprocess.Popen([sys.executable, FAKEAPI, "--port", "0", "--token", token,
                                   "--history", "2000", "--bookmark-interval", "5"],
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("listening on "), line
        self.port = int(line.split()[-1])
        self.ctl = "http://127.0.0.1:%d/_control/" % self.port

    def control(self, what, body=None):
        code, out = http("POST" if body is not None else "GET", self.ctl + what, body,
                         timeout=60)
        assert code == 200, (what, code, out)
        return out

    def apply(self, ops):
        return self.control("objects", {"ops": ops})

    def stop(self):
        self.p.terminate()
        self.p.wait()


def node(name, zone, extra_labels=None):
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    labels.update(extra_labels or {})
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                       "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                       "images": [{"names": ["busybox:1"], "sizeBytes": 5000000},
                                  {"sizeBytes": 10}]}}


def pod(name, rng, scheduler=None, ns="work"):
    kind = rng.randrange(4)
    spec = {"containers": [{"name": "c", "image": "busybox:1", "resources": {"requests": {
        "cpu": "%dm" % rng.choice([50, 100, 200]), "memory": "64Mi"}}}]}
    labels = {"app": "a%d" % rng.randrange(5)}
    if kind == 1:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": labels},
                                               "topologyKey": "kubernetes.io/hostname"}}]}}
    elif kind == 2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}]
    elif kind == 3:
        spec["containers"][0]["ports"] = [{"containerPort": 8080,
                                           "hostPort": 20000 + rng.randrange(50)}]
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": spec, "status": {"phase": "Pending"}}


class Soak:
    def __init__(self, args):
        self.args = args
        self.tmp = args.tmp or tempfile.mkdtemp(prefix="schedext-soak-")
        os.makedirs(self.tmp, exist_ok=True)
        self.rng = random.Random(args.seed)
        self.stop = threading.Event()
        self.churn_on = threading.Event()
        self.churn_on.set()
        self.errors = []
        self.counts = collections.Counter()
        self.lock = threading.Lock()
        self.token = "t0"
        self.token_file = os.path.join(self.tmp, "token")
        with open(self.token_file, "w") as f:
            f.write(self.token + "\n")

    # ---------- setup ----------

    def start(self):
        self.api = Api(self.tmp, self.token)
        ops = [{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": n}}}
               for n in ("work", "ext")]
        ops += [{"op": "create", "object": node("node-%02d" % i, ZONES[i % 3])}
                for i in range(40)]
        self.api.apply(ops)
        kc = os.path.join(self.tmp, "kubeconfig")
        with open(kc, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "soak",
                       "clusters": [{"name": "fake", "cluster": {
                           "server": "http://127.0.0.1:%d" % self.api.port}}],
                       "users": [{"name": "u", "user": {"tokenFile": self.token_file}}],
                       "contexts": [{"name": "soak", "context": {"cluster": "fake",
                                                                 "user": "u"}}]}, f)
        self.port = self.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.logpath = os.path.join(self.tmp, "schedext.log")
        self.log = open(self.logpath, "w")
        self.p = subprocess.Popen([self.args.bin, "serve", "--kubeconfig", kc, "--standalone",
                                   "--listen", "127.0.0.1:%d" % self.port, "-v=1",
                                   "--kube-api-qps", "200", "--kube-api-burst", "400"],
                                  stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 30
        while time.time() < end:
            try:
                if http("GET", self.url + "/readyz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("schedext not ready; see " + self.logpath)

    @staticmethod
    def free_port():
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        return p

    def error(self, what):
        with self.lock:
            if len(self.errors) < 50:
                self.errors.append(what)
        print("ERROR:", what, flush=True)

    # ---------- loads ----------

    def extender_load(self):
        rng = random.Random(self.args.seed + 1)
        names = ["node-%02d" % i for i in range(40)]
        i = 0
        while not self.stop.is_set():
            i += 1
            p = pod("ext-%d" % i, rng, scheduler="other-scheduler", ns="ext")
            p["metadata"]["uid"] = "ext-uid-%d" % i
            verb = ("filter", "prioritize", "preempt", "bind")[i % 4]
            try:
                if verb == "preempt":
                    body = {"Pod": p, "NodeNameToMetaVictims": {
                        names[0]: {"Pods": [], "NumPDBViolations": 0}}}
                elif verb == "bind":
                    self.bind_one(p, rng.choice(names))
                    continue
                elif i % 8 < 4:
                    body = {"Pod": p, "NodeNames": rng.sample(names, 20)}
                else:
                    body = {"Pod": p, "Nodes": {"items": [node(n, "z1") for n in
                                                          rng.sample(names, 5)]}}
                code, out = http("POST", self.url + "/" + verb, body, timeout=30)
                if code != 200:
                    self.error("extender %s: %s %r" % (verb, code, out))
                self.counts["extender_" + verb] += 1
            except OSError as e:
                self.error("extender %s: %r" % (verb, e))
                time.sleep(1)

    def bind_one(self, p, node_name):
        """Creates a pod for another scheduler, binds it through /bind."""
        try:
            self.api.apply([{"op": "create", "object": p}])
        except AssertionError:
            return
        st = self.api.control("state")  # its uid
        uid = next((q["metadata"]["uid"] for q in st["objects"]["pods"]
                    if q["metadata"]["name"] == p["metadata"]["name"]
                    and q["metadata"]["namespace"] == "ext"), None)
        if not uid:
            return
        # the informer must have seen it; retry briefly on "not found"
        for _ in range(50):
            code, out = http("POST", self.url + "/bind", {
                "PodName": p["metadata"]["name"], "PodNamespace": "ext", "PodUID": uid,
                "Node": node_name}, timeout=30)
            if code == 200 and not out.get("Error"):
                self.counts["extender_bind"] += 1
                break
            time.sleep(0.1)
        # keep the ext namespace bounded
        n = int(p["metadata"]["name"].split("-")[1])
        if n > 40:
            try:
                self.api.apply([{"op": "delete", "object": {
                    "kind": "Pod", "metadata": {"name": "ext-%d" % (n - 160), "namespace": "ext"}}}])
            except AssertionError:
                pass

    def churn(self):
        rng = random.Random(self.args.seed + 2)
        live = collections.deque()
        i = 0
        extra_nodes = []
        while not self.stop.is_set():
            if not self.churn_on.is_set():
                time.sleep(0.2)
                continue
            i += 1
            ops = []
            for _ in range(3):
                name = "w-%d" % (i * 3 + _)
                ops.append({"op": "create", "object": pod(name, rng)})
                live.append(name)
            while len(live) > 300:
                ops.append({"op": "delete", "object": {"kind": "Pod", "metadata": {
                    "name": live.popleft(), "namespace": "work"}}})
            if i % 10 == 0:
                n = "node-%02d" % rng.randrange(40)
                ops.append({"op": "upsert", "object": node(
                    n, ZONES[int(n[-2:]) % 3], {"churn": str(i)})})
            if i % 50 == 0:
                if extra_nodes and rng.random() < 0.5:
                    ops.append({"op": "delete", "object": {"kind": "Node", "metadata": {
                        "name": extra_nodes.pop()}}})
                else:
                    nn = "extra-%d" % i
                    extra_nodes.append(nn)
                    ops.append({"op": "create", "object": node(nn, rng.choice(ZONES))})
            try:
                self.api.apply(ops)
                self.counts["churn_ops"] += len(ops)
            except AssertionError as e:
                self.error("churn: %r" % (e,))
            time.sleep(0.2)

    def faults(self):
        k = 0
        period = self.args.fault_period
        while not self.stop.wait(period):
            name, knobs = FAULTS[k % len(FAULTS)]
            k += 1
            self.api.control("faults", {"reset": True})
            if knobs == "compact":
                self.api.control("compact", {})
            elif knobs == "drop":
                self.api.control("drop", {})
            elif knobs == "token":
                self.rotate_token()
            else:
                self.api.control("faults", knobs)
            self.counts["fault_" + name] += 1

    def rotate_token(self):
        """New token in the file first, then the server: the client re-reads."""
        self.token = "t%d" % (int(self.token[1:]) + 1)
        tmpf = self.token_file + ".new"
        with open(tmpf, "w") as f:
            f.write(self.token + "\n")
        os.replace(tmpf, self.token_file)
        time.sleep(1)
        self.api.control("token", {"token": self.token})

    # ---------- measurements ----------

    def sample(self):
        pid = self.p.pid
        rss = threads = 0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = len(os.listdir("/proc/%d/fd" % pid))
        code, cache = http("GET", self.url + "/debug/cache", timeout=30)
        npods = len(cache["pods"]) if code == 200 else -1
        nnodes = len(cache["nodes"]) if code == 200 else -1
        return {"rss_kb": rss, "fds": fds, "threads": threads, "pods": npods, "nodes": nnodes}

    # ---------- convergence ----------

    def converged(self):
        st = self.api.control("state")
        code, cache = http("GET", self.url + "/debug/cache", timeout=30)
        if code != 200:
            return False, "debug/cache %s" % code
        want_nodes = {(n["metadata"]["name"], n["metadata"]["resourceVersion"])
                      for n in st["objects"]["nodes"]}
        got_nodes = {(n["name"], n["resourceVersion"]) for n in cache["nodes"]}
        want_pods = {(p["metadata"]["namespace"], p["metadata"]["name"],
                      p["spec"].get("nodeName", ""), p["metadata"]["resourceVersion"])
                     for p in st["objects"]["pods"]
                     if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")}
        got_pods = {(p["namespace"], p["name"], p["nodeName"], p["resourceVersion"])
                    for p in cache["pods"]}
        pending = [p for p in st["objects"]["pods"] if not p["spec"].get("nodeName")
                   and p["metadata"]["namespace"] == "work"]
        assumed = [p for p in cache["pods"] if p["assumed"]]
        diff = []
        if want_nodes != got_nodes:
            diff.append("nodes: missing %d, extra %d" % (len(want_nodes - got_nodes),
                                                         len(got_nodes - want_nodes)))
        if want_pods != got_pods:
            diff.append("pods: missing %s, extra %s" % (sorted(want_pods - got_pods)[:3],
                                                        sorted(got_pods - want_pods)[:3]))
        if pending:
            diff.append("%d work pods pending" % len(pending))
        if assumed:
            diff.append("%d pods still assumed" % len(assumed))
        return not diff, "; ".join(diff) or "exact: %d nodes, %d pods" % (len(got_nodes),
                                                                          len(got_pods))

    def double_bindings(self):
        """Pods the server accepted more than one binding for (a retry after
        a lost response is refused with 409, so this must stay empty), and
        the number of binding requests."""
        rec = self.api.control("records")
        accepted = collections.Counter((b["namespace"], b["name"], b["uid"])
                                       for b in rec.get("accepted_bindings", []))
        return [k for k, c in accepted.items() if c > 1], len(rec["bindings"])

    # ---------- main ----------

    def run(self):
        self.start()
        threads = [threading.Thread(target=f, daemon=True)
                   for f in (self.extender_load, self.churn, self.faults)]
        for t in threads:
            t.start()
        t0 = time.time()
        rows = []
        print("| min | RSS MiB | fds | threads | cache pods | cache nodes | requests | churn ops |",
              flush=True)
        print("|---|---|---|---|---|---|---|---|", flush=True)
        crashed = False
        for m in range(1, self.args.minutes + 1):
            while time.time() < t0 + 60 * m:
                if self.p.poll() is not None:
                    crashed = True
                    break
                time.sleep(1)
            if crashed:
                break
            s = self.sample()
            s["min"] = m
            rows.append(s)
            req = sum(v for k, v in self.counts.items() if k.startswith("extender_"))
            print("| %d | %.1f | %d | %d | %d | %d | %d | %d |" % (
                m, s["rss_kb"] / 1024, s["fds"], s["threads"], s["pods"], s["nodes"], req,
                self.counts["churn_ops"]), flush=True)
        self.churn_on.clear()
        self.stop.set()
        for t in threads:
            t.join(timeout=60)
        ok = True
        if crashed or self.p.poll() is not None:
            print("CRASH: schedext exited with %s; log %s" % (self.p.returncode, self.logpath))
            return 1
        self.api.control("faults", {"reset": True})
        end = time.time() + 120
        conv, why = self.converged()
        while not conv and time.time() < end:
            time.sleep(2)
            conv, why = self.converged()
        print("convergence:", "exact" if conv else "NOT converged", "-", why, flush=True)
        ok &= conv
        doubles, nbind = self.double_bindings()
        print("binding requests: %d, pods bound twice: %d %s" % (nbind, len(doubles),
                                                                       doubles[:3]))
        ok &= not doubles
        warm = rows[min(len(rows) - 1, max(1, len(rows) // 6))] if rows else None
        last = rows[-1] if rows else None
        if warm and last and len(rows) >= 3:
            for k in ("rss_kb", "fds", "threads"):
                g = (last[k] - warm[k]) / max(warm[k], 1)
                print("growth %s after warm-up (min %d -> %d): %+.1f%%" % (
                    k, warm["min"], last["min"], 100 * g))
                if g > GROWTH and not (k != "rss_kb" and last[k] - warm[k] <= 2):
                    ok = False
        print("counts:", dict(self.counts))
        print("errors (%d): %s" % (len(self.errors), self.errors[:5]))
        rc = self.shutdown()
        print("schedext exit status on SIGTERM: %s" % rc)
        ok &= rc == 0
        print("soak:", "PASS" if ok else "FAIL", "(logs in %s)" % self.tmp, flush=True)
        return 0 if ok else 1

    def shutdown(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.api.stop()
        return self.p.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "schedext"))
    ap.add_argument("--minutes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--fault-period", type=float, default=20.0)
    ap.add_argument("--tmp")
    args = ap.parse_args()
    s = Soak(args)
    try:
        return s.run()
    finally:
        if s.p.poll() is None if hasattr(s, "p") else False:
            s.p.kill()
        if hasattr(s, "api") and s.api.p.poll() is None:
            s.api.stop()


if __name__ == "__main__":
    sys.exit(main())
