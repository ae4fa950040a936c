#!/usr/bin/env python3
"""Standalone scheduler against test/fakeapi/fakeapi.py:

(a) 1,000 pending pods over 100 nodes (requests, node affinity, taints and
    tolerations, anti-affinity, topology spread) are all bound, and every
    binding satisfies every constraint -- checked here from the server's
    state, not by trusting the scheduler;
(b) pods that fit nowhere get PodScheduled=False/Unschedulable and a
    FailedScheduling event with the exact FitError message, and are bound
    once a fitting node is added;
(c) two processes with --leader-elect: exactly one schedules; killing it
    hands over within the lease duration; no pod is bound twice; a clean
    shutdown releases the lease;
(d) preemption: a priority-1000 pod that fits nowhere has exactly the
    victims upstream's criteria choose deleted (recomputed here by a small
    model of SelectVictimsOnNode and pickOneNodeForPreemption), is nominated
    to that node and bound there once they are gone;
(e) the same with a PodDisruptionBudget: the node whose victims violate no
    budget wins over a cheaper one that does;
(f) preemptionPolicy: Never evicts nothing and appends upstream's
    "preemption: not eligible due to preemptionPolicy=Never." to the FitError.
"""
import collections
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402

ZONES = ["zone-a", "zone-b", "zone-c", "zone-d"]
CPU_MILLI = {"m": 1}


def milli(q):
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mem_bytes(q):
    units = {"Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3}
    for u, f in units.items():
        if q.endswith(u):
            return int(q[:-2]) * f
    return int(q)


class Sched(Serve):
    """schedext serve --standalone -v=2 against the fake API server."""

    def __init__(self, tmp, kubeconfig, name, *extra):
        super().__init__(tmp, kubeconfig, name, "--standalone", "-v=2", *extra)

    def assigned(self):
        return self.logtext().count("Successfully assigned")


def node(i, cpu="8", taint=False, labels=None):
    name = "node-%03d" % i if isinstance(i, int) else i
    lb = {"kubernetes.io/hostname": name}
    if isinstance(i, int):
        lb["topology.kubernetes.io/zone"] = ZONES[i % 4]
        if i % 10 < 3:
            lb["disktype"] = "ssd"
    lb.update(labels or {})
    n = {"kind": "Node", "metadata": {"name": name, "labels": lb},
         "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                                "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}
    if taint:
        n["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return n


def pod(name, cpu, mem, labels=None, **spec):
    s = {"containers": [{"name": "c", "image": "busybox",
                         "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    s.update(spec)
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work",
                                        "labels": labels or {}},
            "spec": s, "status": {"phase": "Pending"}}


def workload(rng):
    pods = []
    for i in range(500):
        pods.append(pod("plain-%d" % i, "%dm" % rng.choice([100, 200, 300, 500]),
                        "%dMi" % rng.choice([128, 256, 512])))
    ssd = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "disktype", "operator": "In", "values": ["ssd"]}]}]}}}
    for i in range(150):
        pods.append(pod("ssd-%d" % i, "200m", "256Mi", affinity=ssd))
    tol = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    for i in range(120):
        pods.append(pod("gpu-%d" % i, "300m", "256Mi", tolerations=tol))
    for g in range(5):
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "anti-%d" % g}},
             "topologyKey": "kubernetes.io/hostname"}]}}
        for i in range(10):
            pods.append(pod("anti-%d-%d" % (g, i), "100m", "128Mi", {"app": "anti-%d" % g},
                            affinity=anti))
    for g in range(6):
        tsc = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "spread-%d" % g}}}]
        for i in range(30):
            pods.append(pod("spread-%d-%d" % (g, i), "100m", "128Mi", {"app": "spread-%d" % g},
                            topologySpreadConstraints=tsc))
    rng.shuffle(pods)
    return pods  # 500 + 150 + 120 + 50 + 180 = 1000


def tolerates(p, taint):
    for t in p["spec"].get("tolerations") or []:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def affinity_ok(p, n):
    na = ((p["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if not na:
        return True
    labels = n["metadata"].get("labels") or {}
    for term in na["nodeSelectorTerms"]:
        if all(e["operator"] == "In" and labels.get(e["key"]) in e["values"]
               for e in term.get("matchExpressions") or []):
            return True
    return False


def verify(state, what):
    """Every constraint, recomputed from the server's objects."""
    nodes = {n["metadata"]["name"]: n for n in state["objects"]["nodes"]}
    pods = [p for p in state["objects"]["pods"] if p["metadata"]["namespace"] == "work"]
    by_node = collections.defaultdict(list)
    for p in pods:
        nn = p["spec"].get("nodeName")
        if nn:
            check(nn in nodes, "%s: %s bound to unknown node %s" % (what, p["metadata"]["name"], nn))
            by_node[nn].append(p)
    bad = []
    for nn, ps in by_node.items():
        n = nodes.get(nn)
        if not n:
            continue
        alloc = n["status"]["allocatable"]
        cpu = sum(milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for p in ps)
        mem = sum(mem_bytes(p["spec"]["containers"][0]["resources"]["requests"]["memory"])
                  for p in ps)
        if cpu > milli(alloc["cpu"]) or mem > mem_bytes(alloc["memory"]) or \
                len(ps) > int(alloc["pods"]):
            bad.append("%s over capacity (cpu %dm)" % (nn, cpu))
        for p in ps:
            for t in (n["spec"].get("taints") or []):
                if t["effect"] == "NoSchedule" and not tolerates(p, t):
                    bad.append("%s on tainted %s" % (p["metadata"]["name"], nn))
            if not affinity_ok(p, n):
                bad.append("%s violates node affinity on %s" % (p["metadata"]["name"], nn))
        apps = collections.Counter(p["metadata"]["labels"].get("app", "") for p in ps)
        for app, c in apps.items():
            if app.startswith("anti-") and c > 1:
                bad.append("%d pods of %s share %s" % (c, app, nn))
    for g in range(6):
        counts = collections.Counter({z: 0 for z in ZONES})
        for p in pods:
            if p["metadata"]["labels"].get("app") == "spread-%d" % g and p["spec"].get("nodeName"):
                counts[nodes[p["spec"]["nodeName"]]["metadata"]["labels"]
                       ["topology.kubernetes.io/zone"]] += 1
        if max(counts.values()) - min(counts.values()) > 1:
            bad.append("spread-%d skew %r" % (g, dict(counts)))
    check(not bad, "%s: constraint violations: %s" % (what, bad[:10]))
    return pods


def wait_for(fn, timeout, step=0.25):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def unbound(api, prefix=""):
    st = api.control("state")
    return [p["metadata"]["name"] for p in st["objects"]["pods"]
            if p["metadata"]["namespace"] == "work" and not p["spec"].get("nodeName")
            and p["metadata"]["name"].startswith(prefix)]


def test_thousand_pods(tmp):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    rng = random.Random(6)
    try:
        api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
        api.apply([{"op": "create", "object": node(i, taint=(i % 10 == 9))} for i in range(100)])
        pods = workload(rng)
        big = [pod("huge-%d" % i, "20", "1Gi") for i in range(5)]
        for k in range(0, len(pods), 250):
            api.apply([{"op": "create", "object": p} for p in pods[k:k + 250]])
        api.apply([{"op": "create", "object": p} for p in big])
        sx = Sched(tmp, kc, "sx-main")
        t0 = time.time()
        ok = wait_for(lambda: len(unbound(api)) == len(big), 120, 1.0)
        print("bound 1000 pods in %.1fs" % (time.time() - t0), flush=True)
        check(ok, "all feasible pods bound (unbound: %s)" % unbound(api)[:10])
        verify(api.control("state"), "1000 pods")
        # The exact FitError: 10 tainted nodes, 90 without 20 CPUs. 20 CPUs exceed
        # every node's allocatable, so NodeResourcesFit's rejection is
        # unresolvable and preemption cannot help anywhere.
        want = ("0/100 nodes are available: 10 node(s) had untolerated taint(s), "
                "90 Insufficient cpu. no new claims to deallocate, "
                "preemption: 0/100 nodes are available: "
                "100 Preemption is not helpful for scheduling.")

        def condition_set():
            st = api.control("state")
            for p in st["objects"]["pods"]:
                if p["metadata"]["name"].startswith("huge-"):
                    conds = [c for c in p["status"].get("conditions") or []
                             if c["type"] == "PodScheduled"]
                    if not conds or conds[0]["message"] != want:
                        return False
            return True
        check(wait_for(condition_set, 15), "PodScheduled condition with the FitError")
        st = api.control("state")
        for p in st["objects"]["pods"]:
            if p["metadata"]["name"] == "huge-0":
                c = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"][0]
                check(c["status"] == "False" and c["reason"] == "Unschedulable",
                      "condition False/Unschedulable: %r" % c)
                check(c["message"] == want, "condition message %r" % c["message"])

        def events_ok():
            ev = api.control("records")["events"]
            got = {e["regarding"]["name"] for e in ev
                   if e.get("reason") == "FailedScheduling" and e.get("note") == want}
            return got >= {p["metadata"]["name"] for p in big}
        check(wait_for(events_ok, 15), "FailedScheduling events with the FitError")
        ev = api.control("records")["events"]
        sched = [e for e in ev if e.get("reason") == "Scheduled"]
        check(any(e["note"].startswith("Successfully assigned work/") and
                  e["type"] == "Normal" for e in sched), "Scheduled events")
        fails = [e for e in ev if e.get("reason") == "FailedScheduling"]
        check(all(e["type"] == "Warning" and e.get("action") == "Scheduling" for e in fails),
              "FailedScheduling is a Warning with action Scheduling")
        # events.k8s.io/v1, as kube-scheduler's recorder writes them
        check(all(e["apiVersion"] == "events.k8s.io/v1" and
                  e["reportingController"] == "default-scheduler" and
                  e["reportingInstance"].startswith("default-scheduler") and
                  re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", e["eventTime"]) and
                  e["regarding"]["kind"] == "Pod" and e["regarding"]["uid"] for e in ev),
              "events.k8s.io/v1 shape: %r" % ev[:1])
        # A fitting node arrives: the five are retried and bound there.
        api.apply([{"op": "create", "object": node("big-node", cpu="128",
                                                   labels={"topology.kubernetes.io/zone": "zone-a"})}])
        check(wait_for(lambda: not unbound(api), 30), "huge pods bound once big-node exists")
        st = api.control("state")
        huge = [p for p in st["objects"]["pods"] if p["metadata"]["name"].startswith("huge-")]
        check(all(p["spec"].get("nodeName") == "big-node" for p in huge), "huge pods on big-node")
        verify(st, "after big-node")
        binds = collections.Counter(b["metadata"]["name"] for b in api.control("records")["bindings"])
        check(all(c == 1 for c in binds.values()), "one Binding per pod: %r" %
              [k for k, c in binds.items() if c > 1][:5])
        rc = sx.stop()
        check(rc == 0, "clean exit (rc %r)" % rc)
    finally:
        api.stop()


def lease_of(api, name="schedext", ns="kube-system"):
    code, out = http("GET", "http://127.0.0.1:%d/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s"
                     % (api.port, ns, name))
    return out if code == 200 else None


def test_leader_election(tmp):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-le")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    le = ["--leader-elect", "--leader-elect-lease-duration", "4s",
          "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "1s"]
    try:
        api.apply([{"op": "create", "object": node(i)} for i in range(10)])
        a = Sched(tmp, kc, "sx-a", *le)
        b = Sched(tmp, kc, "sx-b", *le)
        check(wait_for(lambda: (lease_of(api) or {}).get("spec", {}).get("holderIdentity"), 10),
              "a lease holder appears")
        api.apply([{"op": "create", "object": pod("first-%d" % i, "100m", "64Mi")}
                   for i in range(40)])
        check(wait_for(lambda: not unbound(api), 30), "first batch bound")
        na, nb = a.assigned(), b.assigned()
        check(sorted([na, nb]) == [0, 40], "exactly one scheduler bound the first batch (%d/%d)"
              % (na, nb))
        leader, other = (a, b) if na else (b, a)
        holder = lease_of(api)["spec"]["holderIdentity"]
        leader.stop(signal.SIGKILL)
        t0 = time.time()
        api.apply([{"op": "create", "object": pod("second-%d" % i, "100m", "64Mi")}
                   for i in range(40)])
        check(wait_for(lambda: not unbound(api), 30, 0.1), "second batch bound after failover")
        took = time.time() - t0
        print("failover: second batch bound %.1fs after killing the leader" % took, flush=True)
        # lease 4s + one jittered retry (<= 2.2s) + scheduling
        check(took < 4 + 2.2 + 2.0, "handover within the lease duration (+retry): %.1fs" % took)
        check(wait_for(lambda: other.assigned() == 40, 5), "the survivor bound the second batch (%d)" % other.assigned())
        new = lease_of(api)["spec"]
        check(new["holderIdentity"] not in ("", holder), "lease changed hands")
        check(new.get("leaseTransitions", 0) >= 1, "leaseTransitions counted")
        binds = collections.Counter(b_["metadata"]["name"] for b_ in api.control("records")["bindings"])
        check(len(binds) == 80 and all(c == 1 for c in binds.values()), "no pod bound twice")
        check(other.stop() == 0, "survivor exits cleanly")
        rel = lease_of(api)["spec"]
        check(rel.get("holderIdentity", "") == "" and rel.get("leaseDurationSeconds") == 1,
              "clean shutdown releases the lease: %r" % rel)
    finally:
        api.stop()


# ---------- preemption ----------

INT32_MAX = 2 ** 31 - 1


def running(name, node_name, cpu, prio, start, labels=None):
    """A pod already bound and running on node_name."""
    p = pod(name, cpu, "64Mi", labels, nodeName=node_name, priority=prio)
    p["status"] = {"phase": "Running", "startTime": "2026-01-01T00:%02d:00Z" % start}
    return p


def pdb_matches(pdb, p):
    sel = pdb["spec"]["selector"]["matchLabels"]
    labels = p["metadata"].get("labels") or {}
    return p["metadata"]["namespace"] == pdb["metadata"]["namespace"] and sel and \
        all(labels.get(k) == v for k, v in sel.items())


def expected_preemption(nodes, pods, preemptor, pdbs):
    """Upstream's SelectVictimsOnNode and pickOneNodeForPreemption for a
    CPU-only scenario, recomputed here: -> (node, [victim names])."""
    prio = preemptor["spec"]["priority"]
    want = milli(preemptor["spec"]["containers"][0]["resources"]["requests"]["cpu"])
    cpu = lambda p: milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"])
    start = lambda p: p["status"]["startTime"]
    cands = []
    for n in nodes:
        nn = n["metadata"]["name"]
        alloc = milli(n["status"]["allocatable"]["cpu"])
        on = [p for p in pods if p["spec"].get("nodeName") == nn]
        lower = [p for p in on if p["spec"].get("priority", 0) < prio]
        used = sum(cpu(p) for p in on if p not in lower)
        if not lower or used + want > alloc:
            continue  # no victims / preemption does not help here
        lower.sort(key=lambda p: (-p["spec"].get("priority", 0), start(p)))
        allowed = [pdb["status"]["disruptionsAllowed"] for pdb in pdbs]
        violating = []
        for p in lower:
            v = False
            for j, pdb in enumerate(pdbs):
                if pdb_matches(pdb, p):
                    allowed[j] -= 1
                    v = v or allowed[j] < 0
            violating.append(v)
        victims, nviol = [], 0
        for group in (True, False):
            for p, v in zip(lower, violating):
                if v != group:
                    continue
                if used + cpu(p) + want <= alloc:
                    used += cpu(p)  # reprieved
                else:
                    victims.append(p)
                    nviol += v
        victims.sort(key=lambda p: (-p["spec"].get("priority", 0), start(p)))
        top = victims[0]["spec"].get("priority", 0)
        # Criteria 1-4 minimised in order; the 5th (the latest "earliest
        # start among the highest-priority victims") maximised after.
        key = (nviol, top, sum(p["spec"].get("priority", 0) + INT32_MAX + 1 for p in victims),
               len(victims))
        cands.append({"node": nn, "victims": victims, "key": key,
                      "earliest": min(start(p) for p in victims
                                      if p["spec"].get("priority", 0) == top)})
    best = min(c["key"] for c in cands)
    cands = [c for c in cands if c["key"] == best]
    latest = max(c["earliest"] for c in cands)
    cands = [c for c in cands if c["earliest"] == latest]
    check(len(cands) == 1, "scenario has a unique best candidate: %r" % [c["node"] for c in cands])
    return cands[0]["node"], sorted(p["metadata"]["name"] for p in cands[0]["victims"])


def pod_state(api, name):
    for p in api.control("state")["objects"]["pods"]:
        if p["metadata"]["name"] == name and p["metadata"]["namespace"] == "work":
            return p
    return None


def run_preemption(tmp, tag, nodes, pods, preemptor, pdbs, hand_node, hand_victims):
    """Creates the cluster, starts schedext, and checks that exactly the
    model's victims are deleted, the preemptor nominated to and then bound
    on the model's node. hand_*: the same answer worked out by hand, so a
    bug in the model cannot pass silently either."""
    want_node, want_victims = expected_preemption(nodes, pods, preemptor, pdbs)
    check((want_node, want_victims) == (hand_node, sorted(hand_victims)),
          "%s: model agrees with the hand-worked answer: %r" % (tag, (want_node, want_victims)))
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    name = preemptor["metadata"]["name"]
    try:
        api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
        api.apply([{"op": "create", "object": o} for o in nodes + pods + pdbs])
        sx = Sched(tmp, kc, "sx-" + tag)
        api.apply([{"op": "create", "object": preemptor}])
        bound = lambda: (pod_state(api, name) or {"spec": {}})["spec"].get("nodeName")
        check(wait_for(bound, 20), "%s: preemptor bound" % tag)
        check(bound() == want_node, "%s: preemptor bound to %s (got %r)" % (tag, want_node, bound()))
        rec = api.control("records")
        deleted = sorted(d["name"] for d in rec["deletes"] if d["resource"] == "pods")
        check(deleted == want_victims, "%s: victims deleted %r, want %r" % (tag, deleted, want_victims))
        for d in rec["deletes"]:
            pre = (d["body"] or {}).get("preconditions") or {}
            check(pre.get("uid"), "%s: DELETE of %s carries a UID precondition" % (tag, d["name"]))
            # Async preemption: the DisruptionTarget condition is patched first.
            dt = [p for p in rec["patches"] if p["name"] == d["name"] and
                  any(c.get("type") == "DisruptionTarget"
                      for c in (p["patch"].get("status") or {}).get("conditions") or [])]
            check(dt and dt[0]["seq"] < d["seq"],
                  "%s: DisruptionTarget patched on %s before its DELETE" % (tag, d["name"]))
            c = [c for c in (dt[0]["patch"]["status"]["conditions"] if dt else [])
                 if c.get("type") == "DisruptionTarget"]
            check(c and c[0].get("status") == "True" and c[0].get("reason") == "PreemptionByScheduler"
                  and c[0].get("message") == "default-scheduler: preempting to accommodate a "
                  "higher priority pod", "%s: DisruptionTarget condition %r" % (tag, c))
        noms = [(p["patch"].get("status") or {}).get("nominatedNodeName") for p in rec["patches"]
                if p["name"] == name and "nominatedNodeName" in (p["patch"].get("status") or {})]
        check(noms[:1] == [want_node], "%s: status.nominatedNodeName patched to %s (%r)"
              % (tag, want_node, noms))
        st = pod_state(api, name)
        check(st["status"].get("nominatedNodeName") in (want_node, None, ""),
              "%s: nominatedNodeName %r" % (tag, st["status"].get("nominatedNodeName")))
        # Upstream: Success from PostFilter leaves the FitError without a
        # PostFilter message; every node lacked CPU.
        fit = "0/%d nodes are available: %d Insufficient cpu." % (len(nodes), len(nodes))
        ev = rec["events"]
        failed = [e["note"] for e in ev if e.get("reason") == "FailedScheduling"
                  and e["regarding"]["name"] == name]
        check(failed[:1] == [fit], "%s: FailedScheduling %r, want %r" % (tag, failed[:1], fit))
        preempted = sorted(e["regarding"]["name"] for e in ev if e.get("reason") == "Preempted")
        check(preempted == want_victims, "%s: Preempted events for %r" % (tag, preempted))
        left = {p["metadata"]["name"] for p in api.control("state")["objects"]["pods"]}
        check(all(v not in left for v in want_victims) and
              all(p["metadata"]["name"] in left for p in pods
                  if p["metadata"]["name"] not in want_victims),
              "%s: only the victims are gone" % tag)
        binds = [b["metadata"]["name"] for b in api.control("records")["bindings"]]
        check(binds == [name], "%s: one Binding, for the preemptor (%r)" % (tag, binds))
        # Bound only once there was room: the node is within its capacity.
        on = [p for p in api.control("state")["objects"]["pods"]
              if p["spec"].get("nodeName") == want_node]
        used = sum(milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for p in on)
        cap = [milli(n["status"]["allocatable"]["cpu"]) for n in nodes
               if n["metadata"]["name"] == want_node][0]
        check(used <= cap, "%s: %s within capacity after the preemption (%dm)"
              % (tag, want_node, used))
        check(sx.stop() == 0, "%s: clean exit" % tag)
    finally:
        api.stop()


def test_preemption_minimal_victims(tmp):
    """Four full 4-CPU nodes; a priority-1000 pod asks 2 CPUs. Each node
    loses on a different criterion: n1 its victim has priority 10, n2 needs
    two priority-0 victims (larger priority sum), n3 and n4 tie until start
    time, where n4's victim started later."""
    nodes = [node("pn-%d" % i, cpu="4") for i in range(1, 5)]
    pods = [running("n1-a", "pn-1", "2", 10, 1), running("n1-b", "pn-1", "2", 10, 2),
            running("n2-a", "pn-2", "1", 0, 3), running("n2-b", "pn-2", "1", 0, 4),
            running("n2-c", "pn-2", "2", 10, 5),
            running("n3-a", "pn-3", "2", 0, 6), running("n3-b", "pn-3", "2", 10, 7),
            running("n4-a", "pn-4", "2", 0, 9), running("n4-b", "pn-4", "2", 10, 8)]
    hi = pod("high", "2", "64Mi", priority=1000)
    run_preemption(tmp, "minimal", nodes, pods, hi, [], "pn-4", ["n4-a"])


def test_preemption_respects_pdb(tmp):
    """pd-1's pods are the cheapest victims (priority 0) but a PDB with
    disruptionsAllowed 0 covers them; pd-2 costs one priority-10 pod without
    a violation; pd-3 would need two priority-10 pods."""
    nodes = [node("pd-%d" % i, cpu="4") for i in range(1, 4)]
    g = {"app": "guarded"}
    pods = [running("g-a", "pd-1", "2", 0, 1, g), running("g-b", "pd-1", "2", 0, 2, g),
            running("m-a", "pd-2", "2", 10, 3), running("m-b", "pd-2", "2", 10, 4),
            running("t-a", "pd-3", "1", 10, 5), running("t-b", "pd-3", "1", 10, 6),
            running("t-c", "pd-3", "1", 10, 7), running("t-d", "pd-3", "1", 10, 8)]
    pdb = {"kind": "PodDisruptionBudget", "metadata": {"name": "guard", "namespace": "work"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": g}},
           "status": {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2,
                      "expectedPods": 2}}
    hi = pod("high-pdb", "2", "64Mi", priority=1000)
    # Without the budget pd-1 would win (lowest highest-victim priority).
    check(expected_preemption(nodes, pods, hi, [])[0] == "pd-1", "pdb: pd-1 wins without the PDB")
    run_preemption(tmp, "pdb", nodes, pods, hi, [pdb], "pd-2", ["m-b"])


def test_preemption_policy_never(tmp):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-never")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    nodes = [node("nv-%d" % i, cpu="4") for i in range(1, 4)]
    pods = [running("lo-%d-%d" % (i, k), "nv-%d" % i, "2", 0, 2 * i + k)
            for i in range(1, 4) for k in range(2)]
    never = pod("never", "2", "64Mi", priority=1000, preemptionPolicy="Never")
    # DynamicResources (default profile since 1.34) runs first at PostFilter.
    want = ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, "
            "preemption: not eligible due to preemptionPolicy=Never.")
    try:
        api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
        api.apply([{"op": "create", "object": o} for o in nodes + pods + [never]])
        sx = Sched(tmp, kc, "sx-never")

        def cond():
            c = [c for c in (pod_state(api, "never") or {}).get("status", {}).get("conditions") or []
                 if c["type"] == "PodScheduled"]
            return c[0] if c else None
        check(wait_for(lambda: (cond() or {}).get("message") == want, 15),
              "never: condition message %r" % (cond() or {}).get("message"))
        c = cond() or {}
        check(c.get("status") == "False" and c.get("reason") == "Unschedulable",
              "never: PodScheduled False/Unschedulable (%r)" % c)
        ev = [e for e in api.control("records")["events"] if e.get("reason") == "FailedScheduling"
              and e["regarding"]["name"] == "never"]
        check(ev and ev[0]["note"] == want, "never: FailedScheduling event %r"
              % [e["note"] for e in ev[:1]])
        time.sleep(1.0)  # a late eviction would show up here
        rec = api.control("records")
        check(rec["deletes"] == [], "never: no pod deleted (%r)" % rec["deletes"])
        check(not [p for p in rec["patches"] if (p["patch"].get("status") or {}).get("nominatedNodeName")],
              "never: not nominated")
        check(len(api.control("state")["objects"]["pods"]) == 7, "never: every pod still there")
        check(not (pod_state(api, "never") or {"spec": {}})["spec"].get("nodeName"), "never: unbound")
        check(sx.stop() == 0, "never: clean exit")
    finally:
        api.stop()


def test_missing_claim(tmp):
    """A pod whose PersistentVolumeClaim does not exist: PreFilter rejects it,
    so DynamicResources' PreFilter never runs and its PostFilter fails with
    CycleState's "not found"; PostFilter stops there with an Error (upstream
    RunPostFilterPlugins), and FitError.Error appends that message: kube-
    scheduler's FailedScheduling ends `... not found. not found`, with no
    DRA or preemption words."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-claim")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    vol = pod("vol", "100m", "64Mi", volumes=[{"name": "data", "persistentVolumeClaim":
                                                {"claimName": "no-such-claim"}}])
    want = '0/3 nodes are available: persistentvolumeclaim "no-such-claim" not found. not found'
    try:
        api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
        api.apply([{"op": "create", "object": o} for o in [node("mc-%d" % i) for i in range(3)] + [vol]])
        sx = Sched(tmp, kc, "sx-claim")

        def notes():
            return [e["note"] for e in api.control("records")["events"]
                    if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == "vol"]
        check(wait_for(lambda: notes(), 15) and notes()[0] == want,
              "missing claim: FailedScheduling %r" % notes()[:1])
        c = [c for c in (pod_state(api, "vol") or {}).get("status", {}).get("conditions") or []
             if c["type"] == "PodScheduled"]
        check(c and c[0]["message"] == want and c[0]["reason"] == "Unschedulable",
              "missing claim: condition %r" % c)
        check(sx.stop() == 0, "missing claim: clean exit")
    finally:
        api.stop()


def test_delay_cache_until_active(tmp):
    """delayCacheUntilActive with leader election: a standby lists and
    watches nothing while another instance holds the lease; once the lease
    is free it fills its cache and schedules (kube-scheduler's semantics)."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-delay")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    cfg = os.path.join(tmp, "delay.yaml")
    with open(cfg, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                "delayCacheUntilActive: true\nleaderElection:\n  leaderElect: true\n"
                "  leaseDuration: 4s\n  renewDeadline: 3s\n  retryPeriod: 1s\n"
                "  resourceName: delayed\n  resourceNamespace: kube-system\n")
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    try:
        api.apply([{"op": "create", "object": node(i)} for i in range(3)] +
                  [{"op": "create", "object": pod("p-%d" % i, "100m", "64Mi")} for i in range(5)] +
                  [{"op": "create", "object": {
                      "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": "delayed", "namespace": "kube-system"},
                      "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 600,
                               "acquireTime": now, "renewTime": now}}}])
        lists0 = api.control("records")["lists"]
        sx = Sched(tmp, kc, "sx-delay", "--config", cfg)
        check(sx.wait_ready(), "the standby is ready")
        time.sleep(2.5)
        check(api.control("records")["lists"] == lists0,
              "a standby lists nothing (%d lists)" % (api.control("records")["lists"] - lists0))
        check(len(unbound(api)) == 5, "a standby binds nothing")
        # the other holder goes away: its lease is released
        lease = lease_of(api, "delayed")
        lease["spec"].update({"holderIdentity": "", "leaseDurationSeconds": 1})
        api.apply([{"op": "update", "object": lease}])
        check(wait_for(lambda: not unbound(api), 20), "the new leader fills its cache and binds")
        check(api.control("records")["lists"] > lists0, "it listed once leading")
        check(lease_of(api, "delayed")["spec"]["holderIdentity"] not in ("", "someone-else"),
              "it holds the lease")
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


def main():
    return run_tests("test_standalone.py",
                     (test_thousand_pods, test_leader_election, test_preemption_minimal_victims,
                      test_preemption_respects_pdb, test_preemption_policy_never,
                      test_missing_claim, test_delay_cache_until_active))


if __name__ == "__main__":
    sys.exit(main())
