#!/usr/bin/env python3
"""schedext against a real control plane (issue 29, items 3 and 4), by
envtest's convention: KUBEBUILDER_ASSETS names a directory holding etcd and
kube-apiserver, and kube-controller-manager and kube-scheduler when present
(controlplane.py starts them). Without them this test prints one SKIP line
and exits 0.

schedext always runs as the ServiceAccount kube-system/schedext with the
ClusterRole and bindings of extender-config/deploy.yaml (a TokenRequest
token), never as cluster-admin: after every scenario, any request of that
identity the API server answered 403 is a failure naming the missing rule.

Scenarios (each on its own namespace and nodes, cleaned up after):
  standalone   a mixed cluster (requests, node affinity, taints, anti-affinity,
               topology spread): every placement against the hard constraints,
               a Scheduled event per binding, PodScheduled=False and the exact
               FailedScheduling words for pods that fit nowhere;
  extender     schedext's verbs behind the real kube-scheduler (needs
               kube-scheduler): its profile only accepts nodes labelled
               accept=yes, every pod lands on one, schedext posts every Binding;
  volumes      with the real PV binder (needs kube-controller-manager): static
               PV, WaitForFirstConsumer with local PVs, ReadWriteOncePod,
               a missing claim;
  dra          with the real ResourceClaim controller (needs
               kube-controller-manager): claims from a template, one device
               each, the pod too many stays pending;
  leader       two schedext with leader election, the leader killed with -9:
               the other takes over, no pod bound twice (audit log);
  restart      kube-apiserver stopped and started mid-run: watches resume,
               every pod bound exactly once;
  kubectl      build/kubectl-schedext why/pending live, as user "operator":
               no write in the audit log, resourceVersions unchanged;
  differential (needs a kube-scheduler: --scheduler PATH, $PEER_KUBE_SCHEDULER
               or KUBEBUILDER_ASSETS/kube-scheduler) the same pending pods on
               generated clusters through kube-scheduler and through schedext,
               one at a time on fresh namespaces and nodes: the same verdicts,
               kube-scheduler's node among schedext's best-scored for the state
               it saw (`schedext explain` on the state dumped from the API), the
               same FailedScheduling words.

Usage: test_real_control_plane.py [--scheduler PATH] [--only a,b] [--seeds N]
"""
import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import shutil
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import controlplane as cpl  # noqa: E402
from controlplane import wait_for  # noqa: E402
from sxtest import BIN, LIVE, Serve, check, failures  # noqa: E402

NAME = "test_real_control_plane"
PLUGIN = os.path.join(os.path.dirname(os.path.abspath(BIN)), "kubectl-schedext")
ZONES = ["zone-a", "zone-b", "zone-c", "zone-d"]
LE = ["--leader-elect", "--leader-elect-lease-name", "schedext-test",
      "--leader-elect-namespace", "kube-system", "--leader-elect-lease-duration", "4s",
      "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "1s"]


# ---------------------------------------------------------------- objects

def milli(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mem_bytes(q):
    for u, f in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30)):
        if str(q).endswith(u):
            return int(q[:-2]) * f
    return int(q)


def node_obj(name, cpu="8", mem="16Gi", labels=None, taints=None, unschedulable=False):
    lb = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    lb.update(labels or {})
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lb},
            "spec": spec}


def node_status(cpu, mem):
    res = {"cpu": cpu, "memory": mem, "pods": "110"}
    return {"status": {"capacity": res, "allocatable": res, "conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady",
         "message": "created by test_real_control_plane"}]}}


def pod_obj(name, cpu="100m", mem="64Mi", labels=None, **spec):
    s = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                         "resources": {"requests": {"cpu": cpu, "memory": mem}}}],
         "terminationGracePeriodSeconds": 0}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {}}, "spec": s}


TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


def in_affinity(key, values):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": values}]}]}}}


def anti_affinity(app):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}},
         "topologyKey": "kubernetes.io/hostname"}]}}


def spread(app):
    return [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": app}}}]


# ---------------------------------------------------------------- context

class Ctx:
    """The control plane plus what every scenario needs."""

    def __init__(self, cp, tmp, kc_sx, peer):
        self.cp, self.k, self.tmp, self.kc_sx, self.peer = cp, cp.admin, tmp, kc_sx, peer
        self.audit_mark = 0

    # --- objects
    def namespace(self, ns):
        self.k.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": ns}}, ok=(201, 409))
        return ns

    def node(self, name, cpu="8", mem="16Gi", **kw):
        obj = node_obj(name, cpu, mem, **kw)
        obj.update(node_status(cpu, mem))
        self.k.create("/api/v1/nodes", obj)
        # And through the status subresource, as a kubelet reports it.
        self.k.patch("/api/v1/nodes/%s/status" % name, node_status(cpu, mem))
        return name

    def pod(self, ns, obj):
        return self.k.create("/api/v1/namespaces/%s/pods" % ns, obj)

    def pods(self, ns):
        return {p["metadata"]["name"]: p for p in self.k.items("/api/v1/namespaces/%s/pods" % ns)}

    def events(self, ns, reason=None):
        evs = self.k.items("/apis/events.k8s.io/v1/namespaces/%s/events" % ns)
        return [e for e in evs if reason is None or e.get("reason") == reason]

    def unbound(self, ns):
        return sorted(n for n, p in self.pods(ns).items() if not p["spec"].get("nodeName"))

    def cleanup(self, ns, nodes=()):
        """Every pod of ns removed at once (grace 0: there is no kubelet),
        then the nodes."""
        for name in self.pods(ns):
            self.k.delete("/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0" % (ns, name))
        wait_for(lambda: not self.pods(ns), 30)
        for n in nodes:
            self.k.delete("/api/v1/nodes/" + n)

    def schedext(self, name, *extra):
        sx = Serve(self.tmp, self.kc_sx, name, "--standalone", "-v=2", *extra)
        check(sx.wait_ready(60), "%s ready" % name)
        return sx

    # --- the audit log
    def mark(self):
        self.audit_mark = len(self.cp.audit())

    def audit_since(self, user=None):
        evs = self.cp.audit()[self.audit_mark:]
        return [e for e in evs if user is None or e["user"].get("username") == user]

    def forbidden(self):
        """Requests of schedext's identity answered 403 since mark()."""
        out = set()
        for e in self.audit_since(cpl.SA_USER):
            if (e.get("responseStatus") or {}).get("code") == 403:
                o = e.get("objectRef") or {}
                out.add("%s %s%s%s" % (e["verb"], o.get("apiGroup", "") + "/" if o.get("apiGroup") else "",
                                       o.get("resource", e.get("requestURI")),
                                       "/" + o["subresource"] if o.get("subresource") else ""))
        return sorted(out)

    def bindings(self, ns):
        """Successful Binding creations per pod since mark(), and by whom."""
        n, who = collections.Counter(), collections.Counter()
        for e in self.audit_since():
            o = e.get("objectRef") or {}
            if e["verb"] == "create" and o.get("subresource") == "binding" and \
                    o.get("namespace") == ns and (e.get("responseStatus") or {}).get("code") == 201:
                n[o.get("name")] += 1
                who[e["user"]["username"]] += 1
        return n, who


def assigned(sx):
    return sx.logtext().count("Successfully assigned")


def pod_condition(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodScheduled":
            return c
    return None


# ---------------------------------------------------------------- standalone

def violations(nodes, pods):
    """Every hard constraint of the standalone workload, recomputed."""
    bad, by_node = [], collections.defaultdict(list)
    for p in pods:
        if p["spec"].get("nodeName"):
            by_node[p["spec"]["nodeName"]].append(p)
    for nn, ps in by_node.items():
        n = nodes.get(nn)
        if not n:
            bad.append("pods on unknown node %s" % nn)
            continue
        alloc = n["status"]["allocatable"]
        req = lambda p, r: sum((milli if r == "cpu" else mem_bytes)(
            c["resources"]["requests"].get(r, "0")) for c in p["spec"]["containers"])
        if sum(req(p, "cpu") for p in ps) > milli(alloc["cpu"]) or \
                sum(req(p, "memory") for p in ps) > mem_bytes(alloc["memory"]):
            bad.append("%s over capacity" % nn)
        labels = n["metadata"]["labels"]
        for p in ps:
            tols = p["spec"].get("tolerations") or []
            for t in n["spec"].get("taints") or []:
                if t["effect"] == "NoSchedule" and not any(
                        x.get("key") == t["key"] and x.get("value", "") == t.get("value", "")
                        for x in tols):
                    bad.append("%s on tainted %s" % (p["metadata"]["name"], nn))
            na = ((p["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution")
            if na and not any(all(labels.get(e["key"]) in e["values"]
                                  for e in term["matchExpressions"])
                              for term in na["nodeSelectorTerms"]):
                bad.append("%s violates node affinity on %s" % (p["metadata"]["name"], nn))
        apps = collections.Counter((p["metadata"].get("labels") or {}).get("app", "") for p in ps)
        bad += ["%d pods of %s share %s" % (c, a, nn) for a, c in apps.items()
                if a.startswith("anti-") and c > 1]
    for app in {(p["metadata"].get("labels") or {}).get("app", "") for p in pods}:
        if not app.startswith("spread-"):
            continue
        counts = collections.Counter({z: 0 for z in ZONES})
        for p in pods:
            if (p["metadata"].get("labels") or {}).get("app") == app and p["spec"].get("nodeName"):
                counts[nodes[p["spec"]["nodeName"]]["metadata"]["labels"]
                       ["topology.kubernetes.io/zone"]] += 1
        if max(counts.values()) - min(counts.values()) > 1:
            bad.append("%s skew %r" % (app, dict(counts)))
    return bad


def scenario_standalone(c):
    ns, rng = c.namespace("mixed"), random.Random(29)
    nodes = []
    for i in range(24):
        lb = {"topology.kubernetes.io/zone": ZONES[i % 4]}
        if i % 8 < 3:
            lb["disktype"] = "ssd"
        nodes.append(c.node("m-%02d" % i, cpu="4" if i % 2 else "8", labels=lb,
                            taints=[TAINT] if i % 8 == 7 else None))
    pods = [pod_obj("plain-%d" % i, "%dm" % rng.choice([100, 200, 300, 500]),
                    "%dMi" % rng.choice([128, 256, 512])) for i in range(120)]
    pods += [pod_obj("ssd-%d" % i, "200m", affinity=in_affinity("disktype", ["ssd"]))
             for i in range(30)]
    pods += [pod_obj("gpu-%d" % i, "300m", tolerations=TOLERATE) for i in range(20)]
    for g in range(3):
        pods += [pod_obj("anti-%d-%d" % (g, i), labels={"app": "anti-%d" % g},
                         affinity=anti_affinity("anti-%d" % g)) for i in range(6)]
        pods += [pod_obj("spread-%d-%d" % (g, i), labels={"app": "spread-%d" % g},
                         topologySpreadConstraints=spread("spread-%d" % g)) for i in range(12)]
    rng.shuffle(pods)
    huge = [pod_obj("huge-%d" % i, "64") for i in range(3)]
    sx = c.schedext("sx-standalone")
    t0 = time.time()
    for p in pods + huge:
        c.pod(ns, p)
    ok = wait_for(lambda: len(c.unbound(ns)) == len(huge), 120, 1.0)
    print("standalone: %d pods bound in %.1fs" % (len(pods), time.time() - t0), flush=True)
    check(ok, "standalone: every feasible pod bound (unbound: %s)" % c.unbound(ns)[:10])
    allnodes = {n["metadata"]["name"]: n for n in c.k.items("/api/v1/nodes")}
    state = c.pods(ns)
    bad = violations(allnodes, list(state.values()))
    check(not bad, "standalone: constraint violations: %s" % bad[:10])
    # kube-scheduler sorts the "count reason" strings (sort.Strings).
    want = ("0/24 nodes are available: 21 Insufficient cpu, 3 node(s) had untolerated taint(s). "
            "no new claims to deallocate, preemption: 0/24 nodes are available: "
            "24 Preemption is not helpful for scheduling.")

    def failed_events():
        return {e["regarding"]["name"]: e["note"] for e in c.events(ns, "FailedScheduling")}
    check(wait_for(lambda: set(failed_events()) >= {p["metadata"]["name"] for p in huge}, 30),
          "standalone: FailedScheduling events for the huge pods")
    for name, note in sorted(failed_events().items()):
        check(note == want, "standalone: FailedScheduling words of %s:\n  got:  %s\n  want: %s"
              % (name, note, want))
    for p in huge:
        cond = pod_condition(c.pods(ns)[p["metadata"]["name"]]) or {}
        check(cond.get("status") == "False" and cond.get("reason") == "Unschedulable" and
              cond.get("message") == want, "standalone: PodScheduled condition %r" % cond)
    bound = {n: p["spec"]["nodeName"] for n, p in c.pods(ns).items() if p["spec"].get("nodeName")}

    def scheduled():
        return {e["regarding"]["name"]: e["note"] for e in c.events(ns, "Scheduled")}
    t1 = time.time()
    check(wait_for(lambda: set(scheduled()) >= set(bound), 60, 1.0),
          "standalone: a Scheduled event for each of %d bindings (%d seen)"
          % (len(bound), len(scheduled())))
    print("standalone: Scheduled events complete %.1fs after the last binding was seen"
          % (time.time() - t1), flush=True)
    ev = scheduled()
    wrong = [n for n, node in bound.items()
             if n in ev and ev[n] != "Successfully assigned %s/%s to %s" % (ns, n, node)]
    check(not wrong, "standalone: Scheduled notes name the bound node: %s" % wrong[:5])
    check(sx.stop() == 0, "standalone: clean exit")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- extender

def scenario_extender(c):
    ns = c.namespace("ext")
    nodes = [c.node("e-%d" % i, labels={"accept": "yes" if i % 2 == 0 else "no"})
             for i in range(8)]
    prof = cpl.write_json(os.path.join(c.tmp, "ext-profile.json"), {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
            {"name": "NodeAffinity", "args": {"addedAffinity": in_affinity("accept", ["yes"])
                                              ["nodeAffinity"]}}]}]})
    ext = Serve(c.tmp, c.kc_sx, "sx-extender", "--config", prof, "-v=2")
    check(ext.wait_ready(60), "extender: schedext ready")
    ks = c.cp.start_scheduler("kube-scheduler-extender", extenders=[{
        "urlPrefix": ext.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
        "preemptVerb": "preempt", "bindVerb": "bind", "weight": 5, "nodeCacheCapable": True,
        "httpTimeout": "5s", "ignorable": False}])
    for i in range(40):
        c.pod(ns, pod_obj("p-%d" % i, "200m"))
    ok = wait_for(lambda: not c.unbound(ns), 90, 1.0)
    check(ok, "extender: every pod bound (unbound %s; kube-scheduler log: %s)"
          % (c.unbound(ns)[:5], ks.logtail(1500) if not ok else ""))
    pods = c.pods(ns)
    off = [n for n, p in pods.items() if p["spec"].get("nodeName") and
           int(p["spec"]["nodeName"].split("-")[1]) % 2]
    check(not off, "extender: pods only on accept=yes nodes: %s" % off[:5])
    n, who = c.bindings(ns)
    check(set(who) == {cpl.SA_USER} and sum(who.values()) == 40 and max(n.values()) == 1,
          "extender: schedext's bind verb posted each Binding once: %r" % dict(who))
    check(wait_for(lambda: len(c.events(ns, "Scheduled")) >= 40, 30),
          "extender: kube-scheduler's Scheduled events")
    c.cp.stop_scheduler()
    check(ext.stop() == 0, "extender: clean exit")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- volumes

def pv(name, mode, cls, node=None, local=False):
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": [mode],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": cls}
    if local:
        spec["local"] = {"path": "/mnt/disks/" + name}
    else:
        spec["hostPath"] = {"path": "/tmp/" + name}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": spec}


def pvc(name, mode, cls):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": [mode], "storageClassName": cls,
                     "resources": {"requests": {"storage": "1Gi"}}}}


def with_claim(name, claim):
    return pod_obj(name, volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": claim}}])


def scenario_volumes(c):
    ns, k = c.namespace("vol"), c.k
    nodes = [c.node("v-%d" % i) for i in (1, 2, 3)]
    k.create("/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "local-wffc"}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer"})
    for o in (pv("static-pv", "ReadWriteOnce", "", "v-2"), pv("rwop-pv", "ReadWriteOncePod", ""),
              pv("local-1", "ReadWriteOnce", "local-wffc", "v-1", True),
              pv("local-3", "ReadWriteOnce", "local-wffc", "v-3", True)):
        k.create("/api/v1/persistentvolumes", o)
    for o in (pvc("static-claim", "ReadWriteOnce", ""), pvc("rwop-claim", "ReadWriteOncePod", ""),
              pvc("wffc-claim", "ReadWriteOnce", "local-wffc")):
        k.create("/api/v1/namespaces/%s/persistentvolumeclaims" % ns, o)
    phase = lambda n: (k.get("/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (ns, n))
                       .get("status") or {}).get("phase")
    check(wait_for(lambda: phase("static-claim") == "Bound" and phase("rwop-claim") == "Bound",
                   60, 0.5), "volumes: the PV binder binds the static claims")
    check(phase("wffc-claim") == "Pending", "volumes: the WaitForFirstConsumer claim waits")
    sx = c.schedext("sx-volumes")
    c.pod(ns, with_claim("static-user", "static-claim"))
    c.pod(ns, with_claim("wffc-user", "wffc-claim"))
    c.pod(ns, with_claim("rwop-a", "rwop-claim"))
    c.pod(ns, with_claim("missing", "no-such-claim"))
    node_of = lambda n: c.pods(ns)[n]["spec"].get("nodeName")
    check(wait_for(lambda: node_of("static-user") and node_of("wffc-user") and node_of("rwop-a"),
                   90, 0.5), "volumes: static, WaitForFirstConsumer and RWOP pods bound")
    check(node_of("static-user") == "v-2", "volumes: static PV's node affinity: %s"
          % node_of("static-user"))
    wn = node_of("wffc-user")
    check(wn in ("v-1", "v-3"), "volumes: WaitForFirstConsumer pod on a node with a local PV: %s"
          % wn)
    check(wait_for(lambda: phase("wffc-claim") == "Bound", 60, 0.5),
          "volumes: the WaitForFirstConsumer claim bound after scheduling")
    vol = k.get("/api/v1/namespaces/%s/persistentvolumeclaims/wffc-claim" % ns)["spec"].get(
        "volumeName")
    check(vol == "local-" + (wn or "?")[-1:], "volumes: claim bound to the chosen node's PV: %s on %s"
          % (vol, wn))
    c.pod(ns, with_claim("rwop-b", "rwop-claim"))

    def note(name):
        return {e["regarding"]["name"]: e["note"]
                for e in c.events(ns, "FailedScheduling")}.get(name, "")
    rwop = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
    check(wait_for(lambda: rwop in note("rwop-b"), 30),
          "volumes: RWOP conflict: %r" % note("rwop-b"))
    check(wait_for(lambda: 'persistentvolumeclaim "no-such-claim" not found' in note("missing"), 30),
          "volumes: missing claim: %r" % note("missing"))
    check(not node_of("rwop-b") and not node_of("missing"), "volumes: those two stay pending")
    print("volumes: missing claim: %s" % note("missing"), flush=True)
    check(sx.stop() == 0, "volumes: clean exit")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- DRA

def scenario_dra(c):
    ns, k, driver = c.namespace("dra"), c.k, "gpu.example.com"
    nodes = [c.node("d-%d" % i) for i in (1, 2)]
    k.create("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % driver}}]}})
    for n in nodes:
        k.create("/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": n + "-gpu"},
            "spec": {"driver": driver, "nodeName": n,
                     "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    k.create("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaimtemplates" % ns, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": driver}}]}}}})
    sx = c.schedext("sx-dra")
    for i in range(5):
        p = pod_obj("gpu-%d" % i, resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu"}])
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        c.pod(ns, p)
    check(wait_for(lambda: len(c.unbound(ns)) == 1, 90, 0.5),
          "dra: four pods bound, one pending (unbound: %s)" % c.unbound(ns))
    claims = {cl["metadata"]["name"]: cl
              for cl in k.items("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % ns)}
    used = []
    for name, p in c.pods(ns).items():
        nn = p["spec"].get("nodeName")
        if not nn:
            continue
        st = (p.get("status") or {}).get("resourceClaimStatuses") or []
        cl = claims.get(st[0].get("resourceClaimName")) if st else None
        check(cl is not None, "dra: %s has its claim from the template: %r" % (name, st))
        if not cl:
            continue
        alloc = (cl.get("status") or {}).get("allocation") or {}
        res = alloc.get("devices", {}).get("results", [])
        check(len(res) == 1 and res[0]["pool"] == nn and res[0]["driver"] == driver,
              "dra: %s's device on its node %s: %r" % (name, nn, res))
        check(any(r.get("uid") == p["metadata"]["uid"] for r in cl["status"].get("reservedFor") or []),
              "dra: claim reserved for %s" % name)
        used += [(r["pool"], r["device"]) for r in res]
    check(len(used) == len(set(used)) == 4, "dra: four distinct devices: %r" % used)
    pending = (c.unbound(ns) or ["?"])[0]

    def note():
        return {e["regarding"]["name"]: e["note"]
                for e in c.events(ns, "FailedScheduling")}.get(pending, "")
    check(wait_for(lambda: "cannot allocate all claims" in note(), 30),
          "dra: FailedScheduling for %s: %r" % (pending, note()))
    check(sx.stop() == 0, "dra: clean exit")
    c.cleanup(ns, nodes)
    for n in nodes:
        k.delete("/apis/resource.k8s.io/v1/resourceslices/%s-gpu" % n)


# ---------------------------------------------------------------- leader

def scenario_leader(c):
    ns = c.namespace("leader")
    nodes = [c.node("l-%d" % i) for i in range(5)]
    a = c.schedext("sx-leader-a", *LE)
    b = c.schedext("sx-leader-b", *LE)
    lease = lambda: c.k.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/"
                                "leases/schedext-test")[1]
    holder = lambda: ((lease() or {}).get("spec") or {}).get("holderIdentity")
    check(wait_for(holder, 30), "leader: a lease holder")
    for i in range(30):
        c.pod(ns, pod_obj("first-%d" % i))
    check(wait_for(lambda: not c.unbound(ns), 60, 0.5), "leader: first batch bound")
    na, nb = assigned(a), assigned(b)
    check(sorted([na, nb]) == [0, 30], "leader: one scheduler bound the first batch (%d/%d)"
          % (na, nb))
    leader, other = (a, b) if na else (b, a)
    first = holder()
    leader.stop(signal.SIGKILL)
    t0 = time.time()
    for i in range(30):
        c.pod(ns, pod_obj("second-%d" % i))
    check(wait_for(lambda: not c.unbound(ns), 60, 0.25), "leader: second batch bound")
    print("leader: second batch bound %.1fs after kill -9" % (time.time() - t0), flush=True)
    check(assigned(other) == 30, "leader: the survivor bound the second batch (%d)"
          % assigned(other))
    check(holder() not in (None, "", first), "leader: the lease changed hands")
    n, _ = c.bindings(ns)
    check(len(n) == 60 and max(n.values()) == 1,
          "leader: no pod bound twice (%d pods, max %d)" % (len(n), max(n.values() or [0])))
    check(other.stop() == 0, "leader: survivor exits cleanly")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- restart

def scenario_restart(c):
    ns = c.namespace("restart")
    nodes = [c.node("r-%d" % i) for i in range(10)]
    sx = c.schedext("sx-restart")
    for i in range(150):
        c.pod(ns, pod_obj("before-%d" % i))
    wait_for(lambda: len(c.unbound(ns)) <= 120, 60, 0.2)
    t0 = time.time()
    c.cp.stop_apiserver()
    time.sleep(5)
    c.cp.start_apiserver()
    print("restart: kube-apiserver down %.1fs" % (time.time() - t0), flush=True)
    for i in range(100):
        c.pod(ns, pod_obj("after-%d" % i))
    t1 = time.time()
    check(wait_for(lambda: not c.unbound(ns), 120, 0.5),
          "restart: every pod bound after the restart (unbound: %s)" % c.unbound(ns)[:10])
    print("restart: all bound %.1fs after the API server returned" % (time.time() - t1), flush=True)
    check(sx.p.poll() is None, "restart: schedext kept running")
    n, _ = c.bindings(ns)
    twice = [p for p, k in n.items() if k > 1]
    check(len(n) == 250 and not twice, "restart: each pod bound exactly once (%d, twice: %s)"
          % (len(n), twice[:5]))
    check(sx.stop() == 0, "restart: clean exit")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- kubectl

def scenario_kubectl(c):
    ns = c.namespace("ops")
    nodes = [c.node("o-1", cpu="2"), c.node("o-2", cpu="2", taints=[TAINT])]
    c.k.create("/api/v1/namespaces/%s/pods" % ns, pod_obj("running", "1500m", nodeName="o-1"))
    c.pod(ns, pod_obj("stuck", "1"))
    before = {n: p["metadata"]["resourceVersion"] for n, p in c.pods(ns).items()}
    total = len(c.k.items("/api/v1/nodes"))
    r = subprocess.run([PLUGIN, "why", "stuck", "-n", ns, "--kubeconfig", c.cp.kc_operator,
                        "-o", "json"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "kubectl: why rc %d %s" % (r.returncode, r.stderr))
    out = json.loads(r.stdout) if r.returncode == 0 else {}
    want = ("0/%d nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)"
            % total) if total == 2 else None
    check(out.get("selectedNode") is None and "Insufficient cpu" in (out.get("message") or "") and
          (want is None or out["message"].startswith(want)), "kubectl: why: %s" % r.stdout[:600])
    r = subprocess.run([PLUGIN, "pending", "-n", ns, "--kubeconfig", c.cp.kc_operator],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "1 pending pod(s)" in r.stdout and "ops/stuck" in r.stdout,
          "kubectl: pending: %s %s" % (r.stdout, r.stderr))
    time.sleep(1)
    mine = c.audit_since("operator")
    verbs = collections.Counter(e["verb"] for e in mine)
    check(verbs and set(verbs) <= {"get", "list"}, "kubectl: reads only, no watch: %r" % dict(verbs))
    after = {n: p["metadata"]["resourceVersion"] for n, p in c.pods(ns).items()}
    check(before == after, "kubectl: resourceVersions unchanged")
    c.cleanup(ns, nodes)


# ---------------------------------------------------------------- differential

def gen_cluster(seed):
    """-> (nodes [(name, cpu, mem, kw)], running pods, pending pods)."""
    rng = random.Random(seed)
    nodes = []
    for i in range(8):
        kw = {"labels": {"topology.kubernetes.io/zone": ZONES[i % 3]}}
        if i == 6:
            kw["taints"] = [TAINT]
        if i == 7:
            kw["unschedulable"] = True
        nodes.append(("x%d-n%d" % (seed, i), str(rng.choice([2, 4, 8])),
                      rng.choice(["4Gi", "8Gi", "16Gi"]), kw))
    running = [pod_obj("run-%d" % i, "%dm" % rng.choice([250, 500, 1000]),
                       "%dMi" % rng.choice([256, 512, 1024]), nodeName=nodes[i % 6][0])
               for i in range(6)]
    pending = []
    for i in range(14):
        kind = rng.choice(["plain", "plain", "zone", "tol", "anti", "spread"])
        cpu = "%dm" % rng.choice([200, 500, 900, 1500])
        mem = "%dMi" % rng.choice([128, 512, 1024])
        if kind == "plain":
            p = pod_obj("p%02d-plain" % i, cpu, mem)
        elif kind == "zone":
            p = pod_obj("p%02d-zone" % i, cpu, mem, affinity=in_affinity(
                "topology.kubernetes.io/zone", [rng.choice(ZONES[:3])]))
        elif kind == "tol":
            p = pod_obj("p%02d-tol" % i, cpu, mem, tolerations=TOLERATE)
        elif kind == "anti":
            p = pod_obj("p%02d-anti" % i, cpu, mem, {"app": "anti"}, affinity=anti_affinity("anti"))
        else:
            p = pod_obj("p%02d-spread" % i, cpu, mem, {"app": "spread"},
                        topologySpreadConstraints=spread("spread"))
        pending.append(p)
    pending.append(pod_obj("p90-huge", "32"))
    pending.append(pod_obj("p91-nowhere", "100m", nodeSelector={"disktype": "nvme"}))
    return nodes, running, pending


def explain(c, state, pod, tag):
    sp = cpl.write_json(os.path.join(c.tmp, "diff-state-%s.json" % tag),
                        {"apiVersion": "v1", "kind": "List", "items": state})
    pp = cpl.write_json(os.path.join(c.tmp, "diff-pod-%s.json" % tag), pod)
    r = subprocess.run([BIN, "explain", "--state", sp, "--pod", pp], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        check(False, "differential: explain failed: %s" % r.stderr)
        return set(), None
    out = json.loads(r.stdout)
    totals = {n: s["total"] for n, s in (out.get("scores") or {}).items()}
    best = {n for n, t in totals.items() if t == max(totals.values())} if totals else set()
    return best, out.get("message")


def run_one(c, who, seed, cluster):
    """Creates the cluster, runs the scheduler, places the pending pods one
    at a time. -> {pod: (node or None, FailedScheduling note, best set,
    explain message)}."""
    nodes, running, pending = cluster
    ns = c.namespace("diff-%d-%s" % (seed, who))
    for name, cpu, mem, kw in nodes:
        c.node(name, cpu, mem, **kw)
    for p in running:
        c.pod(ns, p)
    if who == "kube-scheduler":
        proc = c.cp.start_scheduler("peer-kube-scheduler", binary=c.peer)
        time.sleep(3)  # its informers sync
    else:
        proc = c.schedext("sx-diff-%d" % seed)
    out = {}
    for p in pending:
        name = p["metadata"]["name"]
        state = c.k.items("/api/v1/nodes") + list(c.pods(ns).values())
        created = c.pod(ns, p)
        created["spec"].pop("nodeName", None)
        best, msg = explain(c, state, created, "%d-%s-%s" % (seed, who, name))

        def settled():
            if c.pods(ns)[name]["spec"].get("nodeName"):
                return True
            return any(e["regarding"]["name"] == name for e in c.events(ns, "FailedScheduling"))
        check(wait_for(settled, 30, 0.2), "differential: %s settled %s under %s" % (name, seed, who))
        node = c.pods(ns)[name]["spec"].get("nodeName")
        note = next((e["note"] for e in c.events(ns, "FailedScheduling")
                     if e["regarding"]["name"] == name), None)
        out[name] = (node, note, best, msg)
    time.sleep(2)
    final = c.pods(ns)
    out = {n: (final[n]["spec"].get("nodeName"),) + v[1:] for n, v in out.items()}
    if who == "kube-scheduler":
        c.cp.stop_scheduler()
    else:
        proc.stop()
    c.cleanup(ns, [n[0] for n in nodes])
    return out


def scenario_differential(c, seeds):
    agree = total = 0
    for seed in range(1, seeds + 1):
        cluster = gen_cluster(seed)
        ks = run_one(c, "kube-scheduler", seed, cluster)
        sx = run_one(c, "schedext", seed, cluster)
        for name in sorted(ks):
            kn, knote, kbest, kmsg = ks[name]
            sn, snote, sbest, smsg = sx[name]
            total += 1
            ok = True
            if bool(kn) != bool(sn):
                ok = False
                check(False, "differential seed %d %s: kube-scheduler %s, schedext %s"
                      % (seed, name, kn or "pending", sn or "pending"))
            if kn and kn not in kbest:
                ok = False
                check(False, "differential seed %d %s: kube-scheduler chose %s, schedext's best %s"
                      % (seed, name, kn, sorted(kbest)))
            if sn and sn not in sbest:
                ok = False
                check(False, "differential seed %d %s: schedext chose %s outside its best %s"
                      % (seed, name, sn, sorted(sbest)))
            if not kn and not sn:
                if knote != snote or knote != kmsg:
                    ok = False
                    check(False, "differential seed %d %s: FailedScheduling words\n"
                          "  kube-scheduler: %s\n  schedext:       %s\n  explain:        %s"
                          % (seed, name, knote, snote, kmsg))
            agree += ok
    print("differential: %d/%d pods agree over %d generated clusters" % (agree, total, seeds),
          flush=True)


# ---------------------------------------------------------------- main

SCENARIOS = [
    ("standalone", scenario_standalone, []),
    ("extender", scenario_extender, ["kube-scheduler"]),
    ("volumes", scenario_volumes, ["kube-controller-manager"]),
    ("dra", scenario_dra, ["kube-controller-manager"]),
    ("leader", scenario_leader, []),
    ("kubectl", scenario_kubectl, []),
    ("differential", None, ["peer"]),
    ("restart", scenario_restart, []),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scheduler", help="kube-scheduler binary for the differential test")
    ap.add_argument("--only", help="comma-separated scenarios")
    ap.add_argument("--seeds", type=int, default=3, help="differential: generated clusters")
    args = ap.parse_args()
    if not os.path.exists(BIN):
        print("SKIP %s: %s not built (make)" % (NAME, BIN))
        return 0
    assets, why = cpl.find_assets()
    if why:
        print("SKIP %s: %s" % (NAME, why))
        return 0
    peer = args.scheduler or os.environ.get("PEER_KUBE_SCHEDULER") or assets["kube-scheduler"]
    have = {"kube-scheduler": assets["kube-scheduler"] or peer,
            "kube-controller-manager": assets["kube-controller-manager"], "peer": peer}
    assets = dict(assets, **{"kube-scheduler": assets["kube-scheduler"] or peer})
    tmp = tempfile.mkdtemp(prefix="schedext-realapi-")
    cp = None
    try:
        cp = cpl.ControlPlane(tmp, assets)
        done = cp.apply_deploy_rbac()
        print("applied from deploy.yaml: %s" % ", ".join("%s/%s" % d for d in done), flush=True)
        kc, how = cp.schedext_kubeconfig()
        who = cp.whoami(kc)
        print("schedext runs as %s (%s)" % (who, how), flush=True)
        check(who == cpl.SA_USER, "schedext's identity is the ServiceAccount: %s" % who)
        c = Ctx(cp, tmp, kc, peer)
        only = set(args.only.split(",")) if args.only else None
        for name, fn, needs in SCENARIOS:
            if only and name not in only:
                continue
            missing = [n for n in needs if not have[n]]
            if missing:
                what = {"kube-scheduler": "no kube-scheduler (KUBEBUILDER_ASSETS, --scheduler "
                                          "PATH or PEER_KUBE_SCHEDULER)",
                        "kube-controller-manager": "no kube-controller-manager in KUBEBUILDER_ASSETS",
                        "peer": "no kube-scheduler (--scheduler PATH, PEER_KUBE_SCHEDULER or "
                                "KUBEBUILDER_ASSETS)"}[missing[0]]
                print("SKIP %s: %s" % (name, what), flush=True)
                continue
            t0 = time.time()
            c.mark()
            try:
                if name == "differential":
                    scenario_differential(c, args.seeds)
                else:
                    fn(c)
            except Exception as e:  # one scenario's crash must not hide the others
                traceback.print_exc()
                check(False, "%s raised %r" % (name, e))
            denied = c.forbidden()
            check(not denied, "%s: deploy.yaml's RBAC refused schedext: %s" % (name, denied))
            for sx in LIVE:
                if sx.p.poll() is None:
                    sx.p.kill()
                    sx.p.wait()
            cp.stop_scheduler()
            print("%s: %.1fs" % (name, time.time() - t0), flush=True)
    except Exception as e:
        traceback.print_exc()
        check(False, "control plane: %r" % e)
    finally:
        for sx in LIVE:
            if sx.p.poll() is None:
                sx.p.kill()
                sx.p.wait()
        if cp:
            cp.stop()
        if failures:
            print("logs kept in", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failed" % (NAME, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
