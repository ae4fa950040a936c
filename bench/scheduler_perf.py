#!/usr/bin/env python3
"""scheduler_perf runner: upstream's performance-config.yaml workloads
against schedext (or a kube-scheduler binary), three ways.

  scheduler_perf.py [--mode inprocess|fake|real] [--workloads LIST]
                    [--config-dir DIR] [--scale F] [--scheduler PATH]
                    [--bin build/schedext] [--driver build/bench/perf_workload]
                    [--threads N] [--json FILE] [--save-plan DIR] [--list]

--workloads: comma-separated `TestCase` or `TestCase/workload` names (the
  workload name may itself contain `/`, as upstream's `5kNodes/100Init/10kPods`);
  a bare test case picks its first workload with a `threshold` (upstream's
  CI figure), else its largest. Default: the short set below.
--config-dir: a directory searched recursively for performance-config.yaml
  (bench/scheduler_perf by default; a kubernetes checkout's
  test/integration/scheduler_perf works as it is). Template paths are
  relative to the file that names them, as upstream resolves them.
--scale: multiplies every count parameter (e.g. 0.1: 5000 nodes -> 500);
  thresholds are printed for scale 1 only.
--mode inprocess: the workload's objects go straight into schedext's cache
  and bench/perf_workload.c runs the scheduling cycles (no API server).
--mode fake: test/fakeapi/fakeapi.py as API server, `schedext serve
  --standalone` (or --scheduler PATH: kube-scheduler with the same client
  QPS/burst), objects created through the fake's /_control endpoints,
  bindings observed through a WATCH as upstream's informer does.
--mode real: etcd + kube-apiserver from $KUBEBUILDER_ASSETS (skipped with
  one line when they are not there).

Per workload it prints one line
  perf <TestCase>/<workload> mode=... pods_per_s=<Average> p50= p90= p99= ...
and a table at the end. Figures follow scheduler_perf: the measured pods'
throughput sampled every second (Average = mean of the samples, and its
percentiles), plus the overall rate (measured pods / window), scheduling
attempt latency, scheduler CPU seconds and peak RSS (VmHWM), and in the
API-server modes the requests per scheduled pod by verb.
"""
import argparse
import copy
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (listening_base, wait_ready)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKEAPI = os.path.join(ROOT, "test", "fakeapi", "fakeapi.py")
TICK = os.sysconf("SC_CLK_TCK")
CLIENT_QPS, CLIENT_BURST = 5000, 5000  # scheduler_perf's client limits
DEFAULT_SET = ["SchedulingBasic", "SchedulingPodAntiAffinity", "SchedulingPodAffinity",
               "SchedulingNodeAffinity", "TopologySpreading", "MixedSchedulingBasePod",
               "SchedulingRequiredPodAntiAffinityWithNSSelector",
               "PreemptionAsync", "Unschedulable", "SchedulingWithMixedChurn"]

# What upstream's Go code uses when a createNodes/createPods op names no
# template (scheduler_perf's makeBaseNode / makeBasePod, testutils.MakePodSpec).
BASE_NODE = {"apiVersion": "v1", "kind": "Node",
             "metadata": {"generateName": "scheduler-perf-"},
             "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                        "conditions": [{"type": "Ready", "status": "True"}],
                        "phase": "Running"}}
BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                                   "limits": {"cpu": "100m", "memory": "500Mi"}}}]}}


# Debian's interpreter, which has PyYAML once python3-yaml is installed,
# when the python3 running this (e.g. a pyenv one) has none.
SYSTEM_PYTHON = "/usr/bin/python3"


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        return load_yaml_with_system_python(path)
    with open(path) as f:
        return yaml.safe_load(f)


def load_yaml_with_system_python(path):
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and \
            os.access(SYSTEM_PYTHON, os.X_OK):
        out = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import json, sys, yaml; "
             "json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", path],
            capture_output=True, text=True,
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")})
        if out.returncode == 0:
            return json.loads(out.stdout)
    sys.exit("scheduler_perf: PyYAML is needed (Debian: apt-get install python3-yaml; "
             "`make bench-perf` and `make test` install it)")


# ---------------------------------------------------------------- configs

class TestCase:
    def __init__(self, doc, path):
        self.doc, self.path, self.dir = doc, path, os.path.dirname(path)
        self.name = doc["name"]

    def workload(self, name=None):
        wls = self.doc.get("workloads") or []
        if name:
            for w in wls:
                if w["name"] == name:
                    return w
            raise SystemExit("scheduler_perf: %s has no workload %s (has: %s)"
                             % (self.name, name, ", ".join(w["name"] for w in wls)))
        with_thr = [w for w in wls if w.get("threshold")]
        if with_thr:
            return with_thr[0]
        return max(wls, key=lambda w: sum(v for v in (w.get("params") or {}).values()
                                          if isinstance(v, (int, float))))


def find_testcases(config_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(config_dir, "**", "performance-config.yaml"),
                                 recursive=True)):
        for doc in load_yaml(path) or []:
            if isinstance(doc, dict) and "name" in doc:
                out.setdefault(doc["name"], TestCase(doc, path))
    return out


def pick(testcases, spec):
    name, _, wl = spec.partition("/")
    if name not in testcases:
        raise SystemExit("scheduler_perf: no test case %s in the config dir" % name)
    tc = testcases[name]
    return tc, tc.workload(wl or None)


# ---------------------------------------------------------------- expansion

class Gen:
    """Names and UIDs for generateName objects, one counter per run."""

    def __init__(self):
        self.n = 0

    def name(self, obj):
        self.n += 1
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            meta["name"] = "%s%d" % (meta.pop("generateName", "obj-"), self.n)
        meta.pop("generateName", None)
        meta["uid"] = "perf-%08d" % self.n
        return obj


def param(op, key, params, scale, default=None):
    """count / countParam ($name) with --scale applied to parameters."""
    if key + "Param" in op:
        v = params[op[key + "Param"].lstrip("$")]
        if isinstance(v, (int, float)) and scale != 1:
            v = max(1, int(round(v * scale)))
        return v
    return op.get(key, default)


def read_template(tc, rel, default):
    if not rel:
        return copy.deepcopy(default)
    docs = load_yaml(os.path.join(tc.dir, rel))
    return docs


def node_defaults(n):
    st = n.setdefault("status", {})
    if "allocatable" not in st and "capacity" in st:  # the API server's SetDefaults_NodeStatus
        st["allocatable"] = dict(st["capacity"])
    return n


def duration_s(v):
    if isinstance(v, (int, float)):
        return float(v) / 1e9  # a Go time.Duration in ns
    m = re.fullmatch(r"([\d.]+)(ms|s|m)", str(v).strip())
    if not m:
        return 0.0
    return float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60}[m.group(2)]


def expand(tc, wl, scale, gen):
    """The workload as a list of steps (the in-process plan's vocabulary;
    the API-server modes play the same steps):
      objects {items}, pods {items, measure, wait, namespace}, churn {...},
      delete_pods {namespace, per_second, wait}, barrier, sleep {ms}."""
    params = wl.get("params") or {}
    steps, namespaces, warnings = [], set(), []
    ops = []
    for op in tc.doc.get("workloadTemplate") or []:
        if op.get("opcode") == "createPodSets":
            n = param(op, "count", params, 1)
            for i in range(n):
                sub = dict(op["createPodsOp"], namespace="%s-%d" % (op["namespacePrefix"], i))
                ops.append(sub)
        else:
            ops.append(op)

    def ns_obj(name):
        namespaces.add(name)
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}

    for idx, op in enumerate(ops):
        code = op.get("opcode")
        if code == "createNodes":
            count = param(op, "count", params, scale, 0)
            tmpl = read_template(tc, op.get("nodeTemplatePath"), BASE_NODE)
            lab = op.get("labelNodePrepareStrategy")
            uniq = op.get("uniqueNodeLabelStrategy")
            alloc = op.get("nodeAllocatableStrategy")
            items = []
            for i in range(count):
                n = gen.name(node_defaults(copy.deepcopy(tmpl)))
                labels = n["metadata"].setdefault("labels", {})
                # scheduler_perf's node preparer names the node and labels it
                # kubernetes.io/hostname=<name>, as a kubelet would.
                labels["kubernetes.io/hostname"] = n["metadata"]["name"]
                if lab:
                    vals = lab.get("labelValues") or []
                    labels[lab["labelKey"]] = vals[i % len(vals)] if vals else ""
                if uniq:
                    labels[uniq["labelKey"]] = "%s-%d" % (uniq["labelKey"].split("/")[-1], gen.n)
                if alloc:
                    n["status"].setdefault("allocatable", {}).update(alloc.get("nodeAllocatable") or {})
                    n["status"].setdefault("capacity", {}).update(alloc.get("nodeAllocatable") or {})
                    drivers = alloc.get("csiNodeAllocatable") or {}
                    if drivers:
                        items.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                      "metadata": {"name": n["metadata"]["name"]},
                                      "spec": {"drivers": [
                                          {"name": d, "nodeID": n["metadata"]["name"],
                                           "allocatable": {"count": (v or {}).get("count", 0)}}
                                          for d, v in drivers.items()]}})
                items.append(n)
            steps.append({"op": "objects", "items": items})
        elif code == "createNamespaces":
            count = param(op, "count", params, 1, 1)
            tmpl = op.get("namespaceTemplatePath")
            items = []
            for i in range(count):
                o = read_template(tc, tmpl, {"apiVersion": "v1", "kind": "Namespace"}) if tmpl else \
                    {"apiVersion": "v1", "kind": "Namespace"}
                o = copy.deepcopy(o)
                o.setdefault("metadata", {})["name"] = "%s-%d" % (op["prefix"], i)
                o["metadata"].pop("generateName", None)
                namespaces.add(o["metadata"]["name"])
                items.append(o)
            steps.append({"op": "objects", "items": items})
        elif code == "createPods":
            if op.get("steadyState"):
                warnings.append("createPods steadyState not supported: created once")
            count = param(op, "count", params, scale, 0)
            ns = op.get("namespace") or "namespace-%d" % idx
            path = op.get("podTemplatePath") or tc.doc.get("defaultPodTemplatePath")
            tmpl = read_template(tc, path, BASE_POD)
            if ns not in namespaces:
                steps.append({"op": "objects", "items": [ns_obj(ns)]})
            items = []
            for _ in range(count):
                p = gen.name(copy.deepcopy(tmpl))
                p["metadata"]["namespace"] = ns
                items.append(p)
            steps.append({"op": "pods", "items": items, "namespace": ns,
                          "measure": bool(op.get("collectMetrics")),
                          "wait": not op.get("skipWaitToCompletion")})
        elif code == "churn":
            ns = op.get("namespace") or "namespace-%d" % idx
            if ns not in namespaces:
                steps.append({"op": "objects", "items": [ns_obj(ns)]})
            tmpls = []
            for rel in op.get("templatePaths") or []:
                t = read_template(tc, rel, None)
                if t.get("kind") == "Node":
                    node_defaults(t)
                else:
                    t.setdefault("metadata", {})["namespace"] = ns
                tmpls.append(t)
            steps.append({"op": "churn", "mode": op.get("mode", "create"), "templates": tmpls,
                          "interval_ms": op.get("intervalMilliseconds", 500),
                          "number": op.get("number", 0), "namespace": ns})
        elif code == "barrier":
            steps.append({"op": "barrier"})
        elif code == "deletePods":
            steps.append({"op": "delete_pods", "namespace": op["namespace"],
                          "per_second": op.get("deletePodsPerSecond", 0),
                          "wait": not op.get("skipWaitToCompletion")})
        elif code == "createAny":
            count = param(op, "count", params, scale, 1)
            tmpl = read_template(tc, op["templatePath"], None)
            items = []
            for _ in range(count):
                o = gen.name(copy.deepcopy(tmpl))
                if op.get("namespace"):
                    if op["namespace"] not in namespaces:
                        items.append(ns_obj(op["namespace"]))
                    o["metadata"]["namespace"] = op["namespace"]
                items.append(o)
            steps.append({"op": "objects", "items": items})
        elif code == "sleep":
            d = param(op, "duration", params, 1, 0)
            steps.append({"op": "sleep", "ms": duration_s(d) * 1000})
        elif code in ("startCollectingMetrics", "stopCollectingMetrics"):
            warnings.append("%s: measuring the collectMetrics pods instead" % code)
        else:
            warnings.append("opcode %s not supported: skipped" % code)
    return steps, warnings


# ---------------------------------------------------------------- figures

def throughput(times, window_end=None):
    """scheduler_perf's throughput collector: scheduled measured pods
    sampled every second from the start of collection; the last, partial
    interval counts at its own length. Returns (samples, summary)."""
    if not times:
        return [], {"Average": 0.0, "Perc50": 0.0, "Perc90": 0.0, "Perc99": 0.0}
    times = sorted(times)
    end = window_end if window_end is not None else times[-1]
    samples, k, t = [], 0, 1.0
    while t <= end + 1e-9:
        c = 0
        while k < len(times) and times[k] <= t:
            k += 1
            c += 1
        samples.append(float(c))
        t += 1.0
    rest = len(times) - k
    part = end - (t - 1.0)
    if rest > 0 and part > 0:
        samples.append(rest / max(part, 1e-3))
    s = sorted(samples)
    n = len(s)

    def perc(p):
        return s[max(int(math.ceil(n * p / 100.0)) - 1, 0)]
    return samples, {"Average": sum(s) / n, "Perc50": perc(50), "Perc90": perc(90),
                     "Perc99": perc(99)}


def quantiles(vals, qs=(50, 90, 99)):
    if not vals:
        return {}
    s = sorted(vals)
    return {q: s[min(int(math.ceil(len(s) * q / 100.0)) - 1, len(s) - 1)] for q in qs}


def hist_quantiles(text, family, qs=(50, 90, 99)):
    """Prometheus histogram_quantile over every series of `family` summed."""
    buckets = {}
    for line in text.splitlines():
        m = re.match(r'%s_bucket\{(.*)\} (\S+)' % re.escape(family), line)
        if not m:
            continue
        le = re.search(r'(?:^|,)le="([^"]+)"', m.group(1)).group(1)
        buckets[float(le)] = buckets.get(float(le), 0) + float(m.group(2))
    if not buckets:
        return {}
    les = sorted(buckets)
    total = buckets[les[-1]]
    out = {}
    for q in qs:
        rank = total * q / 100.0
        prev_le, prev_c = 0.0, 0.0
        for le in les:
            c = buckets[le]
            if c >= rank:
                if math.isinf(le):
                    out[q] = prev_le * 1000
                else:
                    frac = (rank - prev_c) / (c - prev_c) if c > prev_c else 0
                    out[q] = (prev_le + (le - prev_le) * frac) * 1000
                break
            prev_le, prev_c = le, c
    return out


def verb_of(r):
    m, path, q = r["method"], r["path"], r.get("query") or {}
    if path.endswith("/binding"):
        return "bind"
    if "/events" in path:
        return "event"
    if path.endswith("/status") and m == "PATCH":
        return "status_patch"
    if "/leases" in path:
        return "lease"
    if m == "DELETE":
        return "delete"
    if m == "GET":
        if q.get("watch") in ("1", "true"):
            return "watch"
        parts = [p for p in path.split("/") if p]
        # /api/v1/pods, /api/v1/namespaces/x/pods: a collection
        return "list" if (len(parts) % 2 == 1) == path.startswith("/api/") else "get"
    parts = [x for x in path.split("/") if x]
    return "%s_%s" % (m.lower(), parts[-1] if parts else "")


# ---------------------------------------------------------------- processes

def http(method, url, body=None, timeout=120, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    h = {"Content-Type": "application/json"} if data else {}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


def cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except OSError:
        return 0.0


def vmhwm_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


class PodWatch(threading.Thread):
    """A WATCH on pods, as scheduler_perf's informer: records when each pod
    is first seen bound. Its requests carry timeoutSeconds=86399, which the
    request counts leave out."""

    def __init__(self, base, rv, headers=None, ctx=None):
        super().__init__(daemon=True)
        self.base, self.rv, self.headers, self.ctx = base, rv, headers or {}, ctx
        self.bound = {}
        self.deleted = set()
        self.lock = threading.Lock()
        self.stop = False

    def run(self):
        while not self.stop:
            url = "%s/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=86399&resourceVersion=%s" \
                  % (self.base, self.rv)
            try:
                req = urllib.request.Request(url, headers=self.headers)
                with urllib.request.urlopen(req, timeout=None, context=self.ctx) as r:
                    for line in r:
                        if self.stop:
                            return
                        ev = json.loads(line)
                        o = ev.get("object") or {}
                        md = o.get("metadata") or {}
                        if md.get("resourceVersion"):
                            self.rv = md["resourceVersion"]
                        if ev.get("type") == "ERROR":
                            raise RuntimeError("watch error: %r" % o)
                        key = (md.get("namespace"), md.get("name"))
                        if ev.get("type") == "DELETED":
                            with self.lock:
                                self.deleted.add(key)
                        elif (o.get("spec") or {}).get("nodeName"):
                            with self.lock:
                                self.bound.setdefault(key, time.time())
            except Exception as e:  # reconnect from the last RV
                if self.stop:
                    return
                sys.stderr.write("scheduler_perf: pod watch: %s; reconnecting\n" % e)
                time.sleep(0.2)

    def count(self, keys):
        with self.lock:
            return sum(1 for k in keys if k in self.bound)


class FakeCluster:
    """test/fakeapi/fakeapi.py, objects through /_control/objects."""
    BATCH = 500

    def __init__(self, tmp):
        self.log = open(os.path.join(tmp, "fakeapi.log"), "w")
        self.p = subprocess.Popen([sys.executable, FAKEAPI, "--port", "0", "--history", "1000000",
                                   "--bookmark-interval", "5"],
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError("fakeapi did not start: %r" % line)
        self.base = "http://127.0.0.1:%d" % int(line.split()[-1])
        self.headers, self.ctx = {}, None

    def kubeconfig(self, tmp):
        return write_kubeconfig(tmp, self.base, None, None)

    def rv(self):
        return json.loads(http("POST", self.base + "/_control/objects", {"ops": []}))["resourceVersion"]

    def apply(self, op, objs):
        for k in range(0, len(objs), self.BATCH):
            out = json.loads(http("POST", self.base + "/_control/objects",
                                  {"ops": [{"op": op, "object": o} for o in objs[k:k + self.BATCH]]}))
            bad = [r for r in out["results"] if r.get("kind") == "Status" and r.get("code") != 404]
            if bad:
                raise RuntimeError("fakeapi rejected an op: %r" % bad[0])

    def create(self, objs):
        self.apply("create", objs)

    def delete(self, objs):
        self.apply("delete", objs)

    def requests(self):
        return json.loads(http("GET", self.base + "/_control/requests"))["requests"]

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()


def write_kubeconfig(tmp, server, token, ca):
    path = os.path.join(tmp, "kubeconfig")
    cluster = {"server": server}
    if ca:
        cluster["certificate-authority"] = ca
    user = {"token": token} if token else {}
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "perf",
                   "clusters": [{"name": "c", "cluster": cluster}],
                   "users": [{"name": "u", "user": user}],
                   "contexts": [{"name": "perf", "context": {"cluster": "c", "user": "u"}}]}, f)
    return path


KINDS = {"Node": ("/api/v1", "nodes", False), "Pod": ("/api/v1", "pods", True),
         "Namespace": ("/api/v1", "namespaces", False), "Service": ("/api/v1", "services", True),
         "PersistentVolume": ("/api/v1", "persistentvolumes", False),
         "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
         "StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
         "CSINode": ("/apis/storage.k8s.io/v1", "csinodes", False),
         "DeviceClass": ("/apis/resource.k8s.io/v1", "deviceclasses", False),
         "ResourceSlice": ("/apis/resource.k8s.io/v1", "resourceslices", False),
         "ResourceClaim": ("/apis/resource.k8s.io/v1", "resourceclaims", True),
         "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1", "resourceclaimtemplates", True)}


class RealCluster:
    """etcd + kube-apiserver from $KUBEBUILDER_ASSETS (as controller-runtime's
    envtest lays them out), token auth, AlwaysAllow; objects through the
    ordinary API, 8 writers in parallel."""

    @staticmethod
    def available():
        d = os.environ.get("KUBEBUILDER_ASSETS")
        return d and all(os.access(os.path.join(d, b), os.X_OK) for b in ("etcd", "kube-apiserver"))

    def __init__(self, tmp):
        import ssl
        import socket
        d = os.environ["KUBEBUILDER_ASSETS"]

        def port():
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
            s.close()
            return p
        self.token = "perf-token"
        with open(os.path.join(tmp, "tokens.csv"), "w") as f:
            f.write('%s,perf,perf,"system:masters"\n' % self.token)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", os.path.join(tmp, "tls.key"), "-out", os.path.join(tmp, "tls.crt")],
                       check=True, capture_output=True)
        subprocess.run(["openssl", "genrsa", "-out", os.path.join(tmp, "sa.key"), "2048"],
                       check=True, capture_output=True)
        ep, peer, api = port(), port(), port()
        self.logs = [open(os.path.join(tmp, "etcd.log"), "w"), open(os.path.join(tmp, "apiserver.log"), "w")]
        self.etcd = subprocess.Popen([os.path.join(d, "etcd"), "--data-dir", os.path.join(tmp, "etcd"),
                                      "--listen-client-urls", "http://127.0.0.1:%d" % ep,
                                      "--advertise-client-urls", "http://127.0.0.1:%d" % ep,
                                      "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
                                      "--unsafe-no-fsync"], stdout=self.logs[0], stderr=self.logs[0])
        self.api = subprocess.Popen([os.path.join(d, "kube-apiserver"),
                                     "--etcd-servers", "http://127.0.0.1:%d" % ep,
                                     "--secure-port", str(api), "--bind-address", "127.0.0.1",
                                     "--tls-cert-file", os.path.join(tmp, "tls.crt"),
                                     "--tls-private-key-file", os.path.join(tmp, "tls.key"),
                                     "--token-auth-file", os.path.join(tmp, "tokens.csv"),
                                     "--authorization-mode", "AlwaysAllow",
                                     "--service-account-issuer", "https://127.0.0.1",
                                     "--service-account-key-file", os.path.join(tmp, "sa.key"),
                                     "--service-account-signing-key-file", os.path.join(tmp, "sa.key"),
                                     "--service-cluster-ip-range", "10.0.0.0/16",
                                     "--disable-admission-plugins", "ServiceAccount",
                                     "--runtime-config", "resource.k8s.io/v1=true",
                                     "--max-requests-inflight", "4000",
                                     "--max-mutating-requests-inflight", "2000"],
                                    stdout=self.logs[1], stderr=self.logs[1])
        self.base = "https://127.0.0.1:%d" % api
        self.ca = os.path.join(tmp, "tls.crt")
        self.ctx = ssl.create_default_context(cafile=self.ca)
        self.headers = {"Authorization": "Bearer " + self.token}
        end = time.time() + 60
        while time.time() < end:
            try:
                req = urllib.request.Request(self.base + "/readyz", headers=self.headers)
                urllib.request.urlopen(req, context=self.ctx, timeout=2).read()
                break
            except Exception:
                time.sleep(0.3)
        else:
            raise RuntimeError("kube-apiserver not ready (see %s)" % self.logs[1].name)
        self.nreq = 0

    def kubeconfig(self, tmp):
        return write_kubeconfig(tmp, self.base, self.token, self.ca)

    def _req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        h = dict(self.headers)
        if data:
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
            return json.loads(r.read() or b"{}")

    def rv(self):
        return self._req("GET", "/api/v1/pods?limit=1")["metadata"]["resourceVersion"]

    def _path(self, o, named):
        prefix, res, namespaced = KINDS[o["kind"]]
        md = o["metadata"]
        p = prefix + ("/namespaces/%s" % md["namespace"] if namespaced else "") + "/" + res
        return p + ("/" + md["name"] if named else "")

    def _each(self, fn, objs):
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(8) as ex:
            list(ex.map(fn, objs))

    def create(self, objs):
        def one(o):
            o = copy.deepcopy(o)
            o["metadata"].pop("uid", None)
            status = o.pop("status", None) if o["kind"] == "Node" else None
            try:
                self._req("POST", self._path(o, False), o)
            except urllib.error.HTTPError as e:
                if e.code != 409:
                    raise
            if status:
                self._req("PUT", self._path(o, True) + "/status",
                          dict(self._req("GET", self._path(o, True)), status=status))
        self._each(one, objs)

    def delete(self, objs):
        def one(o):
            try:
                self._req("DELETE", self._path(o, True))
            except urllib.error.HTTPError:
                pass
        self._each(one, objs)

    def requests(self):
        return None  # the API server's own metrics do not tell clients apart

    def stop(self):
        for p in (self.api, self.etcd):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        for f in self.logs:
            f.close()


class Scheduler:
    """schedext serve --standalone, or a kube-scheduler binary, with
    scheduler_perf's client limits (QPS 5000, burst 5000), no leader
    election."""

    def __init__(self, tmp, binary, kubeconfig, kube_scheduler, feature_gates):
        self.kube = kube_scheduler
        self.logpath = os.path.join(tmp, "scheduler.log")
        self.log = open(self.logpath, "w")
        self.base = None
        if kube_scheduler:
            cfg = os.path.join(tmp, "kube-scheduler.yaml")
            with open(cfg, "w") as f:
                f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                        "clientConnection:\n  kubeconfig: %s\n  qps: %d\n  burst: %d\n"
                        "leaderElection:\n  leaderElect: false\n" % (kubeconfig, CLIENT_QPS, CLIENT_BURST))
            cmd = [binary, "--config", cfg, "--secure-port", "0"]
            if feature_gates:
                cmd.append("--feature-gates=" + ",".join("%s=%s" % (k, str(v).lower())
                                                         for k, v in sorted(feature_gates.items())))
        else:
            cmd = [binary, "serve", "--standalone", "--kubeconfig", kubeconfig,
                   "--listen", "127.0.0.1:0", "--kube-api-qps", str(CLIENT_QPS),
                   "--kube-api-burst", str(CLIENT_BURST)]
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        self.t_start = time.time()
        if not kube_scheduler:
            self.base = e2e.listening_base(self.logpath, self.p)
            e2e.wait_ready(self.base, 60)

    def metrics(self):
        if not self.base:
            return ""
        try:
            return http("GET", self.base + "/metrics").decode()
        except Exception:
            return ""

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(3)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


class Churner(threading.Thread):
    def __init__(self, cluster, step, gen):
        super().__init__(daemon=True)
        self.cluster, self.step, self.gen = cluster, step, gen
        self.stop = threading.Event()
        self.created = 0

    def run(self):
        st = self.step
        number = int(st.get("number") or 0)
        recreate = st.get("mode") == "recreate"
        slots = {}
        ticks = 0
        while not self.stop.wait(st["interval_ms"] / 1000.0):
            if not recreate and number and ticks >= number:
                return
            for i, t in enumerate(st["templates"]):
                o = self.gen.name(copy.deepcopy(t))
                if recreate:
                    old = slots.get((i, ticks % max(number, 1)))
                    if old:
                        self.cluster.delete([old])
                    slots[(i, ticks % max(number, 1))] = o
                self.cluster.create([o])
                self.created += 1
            ticks += 1


class Deleter(threading.Thread):
    def __init__(self, cluster, pods, per_second):
        super().__init__(daemon=True)
        self.cluster, self.pods, self.rate = cluster, pods, per_second
        self.stop = threading.Event()

    def run(self):
        for p in self.pods:
            if self.stop.is_set():
                return
            self.cluster.delete([p])
            if self.rate:
                time.sleep(1.0 / self.rate)


def run_api(mode, tc, wl, steps, args, tmp):
    """Plays the steps against an API server with the scheduler running."""
    cluster = FakeCluster(tmp) if mode == "fake" else RealCluster(tmp)
    sched = watch = None
    threads = []
    res = {}
    try:
        kube = bool(args.scheduler)
        binary = args.scheduler or args.bin
        # Namespaces and the watch before the scheduler, as upstream's
        # informers are up before the first op.
        watch = PodWatch(cluster.base, cluster.rv(), cluster.headers, cluster.ctx)
        watch.start()
        sched = Scheduler(tmp, binary, cluster.kubeconfig(tmp), kube,
                          (tc.doc.get("featureGates") or {}) | (wl.get("featureGates") or {}))
        cpu0 = cpu_s(sched.p.pid)
        created_ns = set()
        by_ns = {}
        measure_keys, t_measure0, cpu_measure0, api_cpu0 = [], None, None, None
        for st in steps:
            op = st["op"]
            if op == "objects":
                objs = [o for o in st["items"] if not (o["kind"] == "Namespace"
                                                       and o["metadata"]["name"] in created_ns)]
                created_ns |= {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
                cluster.create(objs)
            elif op == "pods":
                keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in st["items"]]
                by_ns.setdefault(st["namespace"], []).extend(st["items"])
                if st["measure"]:
                    if t_measure0 is None:
                        t_measure0, cpu_measure0 = time.time(), cpu_s(sched.p.pid)
                        api_cpu0 = cpu_s(cluster.p.pid) if hasattr(cluster, "p") else None
                    measure_keys += keys
                cluster.create(st["items"])
                if st["wait"]:
                    wait_bound(watch, keys, args.timeout, sched)
            elif op == "churn":
                c = Churner(cluster, st, Gen())
                c.gen.n = 10 ** 8 + 10 ** 6 * len(threads)
                c.start()
                threads.append(c)
            elif op == "delete_pods":
                pods = [p for p in by_ns.get(st["namespace"], [])]
                d = Deleter(cluster, pods, st["per_second"])
                d.start()
                threads.append(d)
                if st["wait"]:
                    d.join()
            elif op == "barrier":
                wait_bound(watch, [k for ps in by_ns.values() for k in
                                   ((p["metadata"]["namespace"], p["metadata"]["name"]) for p in ps)],
                           args.timeout, sched, allow_deleted=True)
            elif op == "sleep":
                time.sleep(st["ms"] / 1000.0)
        if measure_keys:
            wait_bound(watch, measure_keys, args.timeout, sched)
        t_end = time.time()
        cpu_end = cpu_s(sched.p.pid)
        with watch.lock:
            times = [watch.bound[k] - t_measure0 for k in measure_keys if k in watch.bound]
            all_bound = len(watch.bound)
            first_bind = min(watch.bound.values()) if watch.bound else None
        res = {"measured": len(measure_keys), "measured_scheduled": len(times), "times": times,
               "measure_seconds": max(times) if times else 0,
               "cpu_seconds_measured": cpu_end - cpu_measure0 if cpu_measure0 is not None else 0,
               "cpu_seconds_total": cpu_end - cpu0, "vmhwm_kib": vmhwm_mb(sched.p.pid) * 1024,
               "scheduled": all_bound,
               "apiserver_cpu_s": (cpu_s(cluster.p.pid) - api_cpu0) if api_cpu0 is not None else None,
               "from_start_s": t_end - sched.t_start,
               "from_first_binding_s": (t_end - first_bind) if first_bind else None}
        reqs = cluster.requests()  # before /metrics: that scrape makes a SubjectAccessReview
        text = sched.metrics()
        lat = hist_quantiles(text, "scheduler_scheduling_attempt_duration_seconds")
        res["attempt_latency_hist_ms"] = lat
        res["algorithm_latency_hist_ms"] = hist_quantiles(
            text, "scheduler_scheduling_algorithm_duration_seconds")
        for th in threads:
            th.stop.set()
        if reqs is not None:
            counts = {}
            for r in reqs:
                if (r.get("query") or {}).get("timeoutSeconds") == "86399":
                    continue  # the runner's own watch
                v = verb_of(r)
                counts[v] = counts.get(v, 0) + 1
            res["requests"] = counts
            res["requests_truncated"] = len(reqs) >= 20000
    finally:
        for th in threads:
            th.stop.set()
        if watch:
            watch.stop = True
        if sched:
            sched.stop()
        cluster.stop()
    return res


def wait_bound(watch, keys, timeout, sched, allow_deleted=False):
    end = time.time() + timeout
    keys = list(keys)
    while time.time() < end:
        with watch.lock:
            left = [k for k in keys if k not in watch.bound and not (allow_deleted and k in watch.deleted)]
        if not left:
            return
        keys = left
        if sched.p.poll() is not None:
            raise RuntimeError("scheduler exited with %d (log: %s)" % (sched.p.returncode, sched.logpath))
        time.sleep(0.05)
    raise RuntimeError("%d pods not bound after %d s (e.g. %s)" % (len(keys), timeout, keys[0]))


def run_inprocess(tc, wl, steps, args, tmp):
    plan = os.path.join(tmp, "plan.json")
    with open(plan, "w") as f:
        json.dump({"steps": steps}, f)
    if args.save_plan:
        os.makedirs(args.save_plan, exist_ok=True)
        keep = os.path.join(args.save_plan, re.sub(r"[^A-Za-z0-9_.-]", "_", "%s_%s.json"
                                                   % (tc.name, wl["name"])))
        shutil.copyfile(plan, keep)
    cmd = [args.driver, "--plan", plan, "--threads", str(args.threads)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=args.timeout)
    if p.returncode != 0:
        raise RuntimeError("perf_workload exited with %d" % p.returncode)
    return json.loads(p.stdout)


# ---------------------------------------------------------------- main

def fmt(v, nd=0):
    if v is None:
        return "-"
    return ("%%.%df" % nd) % v


def report(name, mode, wl, res, scale, who):
    samples, summ = throughput(res.get("times") or [])
    thr = wl.get("threshold") if scale == 1 else None
    lat = quantiles(res.get("attempt_latency_ms") or []) or res.get("attempt_latency_hist_ms") or {}
    alg = res.get("algorithm_latency_hist_ms")
    sched = max(res.get("measured_scheduled", 0), 1)
    overall = res["measured_scheduled"] / res["measure_seconds"] if res.get("measure_seconds") else 0
    line = {"workload": name, "mode": mode, "scheduler": who,
            "pods_per_s": round(summ["Average"], 1), "p50": round(summ["Perc50"], 1),
            "p90": round(summ["Perc90"], 1), "p99": round(summ["Perc99"], 1), "overall_pods_per_s": round(overall, 1),
            "measured": res.get("measured"), "scheduled": res.get("measured_scheduled"),
            "seconds": round(res.get("measure_seconds", 0), 3), "samples": len(samples),
            "threshold": thr,
            "x_threshold": round(summ["Average"] / thr, 1) if thr else None,
            "attempt_ms": {str(k): round(v, 3) for k, v in lat.items()},
            "algorithm_ms": {str(k): round(v, 3) for k, v in (alg or {}).items()} or None,
            "cpu_s": round(res.get("cpu_seconds_measured", 0), 2),
            "cpu_ms_per_pod": round(res.get("cpu_seconds_measured", 0) * 1000 / sched, 3),
            # Load-independent: the rate one CPU-second of the scheduler buys.
            "pods_per_cpu_s": round(sched / res["cpu_seconds_measured"], 1)
            if res.get("cpu_seconds_measured") else None,
            "cpu_s_total": round(res.get("cpu_seconds_total", 0), 2),
            "peak_rss_mb": round(res.get("vmhwm_kib", 0) / 1024.0, 1)}
    for k in ("unschedulable", "preemptions", "victims", "churn_objects", "from_start_s",
              "from_first_binding_s", "apiserver_cpu_s"):
        if res.get(k) is not None:
            line[k] = round(res[k], 2) if isinstance(res[k], float) else res[k]
    if res.get("requests") is not None:
        bound = max(res.get("scheduled", 0), 1)
        if res.get("requests_truncated"):
            # The fake's log keeps the last 20,000 requests: per Binding in it.
            bound = max(res["requests"].get("bind", 0), 1)
            line["requests_note"] = "last_20000_requests_per_binding_in_them"
        line["requests_per_pod"] = {k: round(v / bound, 3) for k, v in sorted(res["requests"].items())}
    kv = " ".join("%s=%s" % (k, json.dumps(v, separators=(",", ":")) if isinstance(v, dict) else v)
                  for k, v in line.items() if k not in ("workload",))
    print("perf %s %s" % (name, kv), flush=True)
    return line


def table(lines):
    print()
    print("| workload | mode | scheduler | pods/s avg (p50/p90/p99) | threshold | ×thr | attempt p50/p99 ms "
          "| CPU ms/pod | pods per CPU-s | peak RSS MB | requests/pod |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for ln in lines:
        a = ln["attempt_ms"]
        req = ln.get("requests_per_pod")
        print("| %s | %s | %s | %s (%s/%s/%s) | %s | %s | %s/%s | %s | %s | %s | %s |" % (
            ln["workload"], ln["mode"], ln["scheduler"], fmt(ln["pods_per_s"]), fmt(ln["p50"]),
            fmt(ln["p90"]), fmt(ln["p99"]), ln["threshold"] or "-",
            ("%.1f" % ln["x_threshold"]) if ln["x_threshold"] else "-",
            fmt(a.get("50"), 3), fmt(a.get("99"), 3), fmt(ln["cpu_ms_per_pod"], 3),
            fmt(ln["pods_per_cpu_s"]), fmt(ln["peak_rss_mb"], 1),
            " ".join("%s %.2f" % kv for kv in req.items()) if req else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="inprocess", choices=["inprocess", "fake", "real"])
    ap.add_argument("--workloads", default=",".join(DEFAULT_SET))
    ap.add_argument("--config-dir", default=os.path.join(ROOT, "bench", "scheduler_perf"))
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--scheduler", help="a kube-scheduler binary instead of schedext (fake/real)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "schedext"))
    ap.add_argument("--driver", default=os.path.join(ROOT, "build", "bench", "perf_workload"))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--save-plan", metavar="DIR",
                    help="in-process: keep each workload's plan in DIR (for perf_workload under perf)")
    ap.add_argument("--list", action="store_true", help="list test cases and workloads")
    a = ap.parse_args()
    if a.mode == "real" and not RealCluster.available():
        print("scheduler_perf: skipped mode real: KUBEBUILDER_ASSETS has no etcd and kube-apiserver")
        return 0
    if a.scheduler and a.mode == "inprocess":
        print("scheduler_perf: --scheduler needs --mode fake or real; skipped")
        return 0
    if a.mode != "inprocess":
        if not a.scheduler:
            print("scheduler_perf: kube-scheduler side by side skipped (no --scheduler PATH given)")
        elif not os.access(a.scheduler, os.X_OK):
            print("scheduler_perf: skipped: --scheduler %s is not an executable" % a.scheduler)
            return 0
    tcs = find_testcases(a.config_dir)
    if a.list:
        for n, tc in sorted(tcs.items()):
            print("%s (%s): %s" % (n, os.path.relpath(tc.path, a.config_dir),
                                   ", ".join("%s%s" % (w["name"], " [%s]" % w["threshold"]
                                                       if w.get("threshold") else "")
                                             for w in tc.doc.get("workloads") or [])))
        return 0
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = -1
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    print("perf machine cores=%d model=%r commit=%s load=%.2f mode=%s scale=%g"
          % (os.cpu_count(), model, commit, load, a.mode, a.scale), flush=True)
    lines, failed = [], 0
    who = os.path.basename(a.scheduler) if a.scheduler else "schedext"
    for spec in [s for s in a.workloads.split(",") if s.strip()]:
        tc, wl = pick(tcs, spec.strip())
        name = "%s/%s" % (tc.name, wl["name"])
        gen = Gen()
        steps, warnings = expand(tc, wl, a.scale, gen)
        for w in warnings:
            print("perf %s note: %s" % (name, w), flush=True)
        gates = (tc.doc.get("featureGates") or {}) | (wl.get("featureGates") or {})
        if gates and not a.scheduler:
            print("perf %s note: featureGates %s not applied (schedext takes none yet)"
                  % (name, json.dumps(gates, separators=(",", ":"))), flush=True)
        tmp = tempfile.mkdtemp(prefix="perf-")
        try:
            t0 = time.time()
            if a.mode == "inprocess":
                res = run_inprocess(tc, wl, steps, a, tmp)
            else:
                res = run_api(a.mode, tc, wl, steps, a, tmp)
            ln = report(name, a.mode, wl, res, a.scale, who)
            ln["wall_s"] = round(time.time() - t0, 1)
            ln["load"] = round(os.getloadavg()[0], 2)
            lines.append(ln)
            if res.get("measured_scheduled") != res.get("measured"):
                print("perf %s FAILED: %s of %s measured pods scheduled"
                      % (name, res.get("measured_scheduled"), res.get("measured")), flush=True)
                failed += 1
        except Exception as e:  # one workload's failure does not stop the set
            print("perf %s FAILED: %s" % (name, e), flush=True)
            failed += 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    table(lines)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"commit": commit, "model": model, "cores": os.cpu_count(), "load": load,
                       "mode": a.mode, "scale": a.scale, "workloads": lines}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
