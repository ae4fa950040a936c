#!/usr/bin/env python3
"""kubectl-schedext end to end: why, pending and what-if on dumps and against
the fake API server (through a kubeconfig, as kubectl runs a plugin),
asserting the exact text and JSON an operator sees, and the one-line errors
and exit code 2 for bad input."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, write_kubeconfig  # noqa: E402

BIN = os.environ.get("SCHEDEXT_BIN", "build/schedext")
PLUGIN = os.path.join(os.path.dirname(os.path.abspath(BIN)), "kubectl-schedext")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def kubectl(*args, timeout=120):
    """Runs the plugin by its kubectl name, as `kubectl schedext ...` does."""
    p = subprocess.run([PLUGIN, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def node(name, cpu="4", taints=None, labels=None, pods="110"):
    labels = dict({"kubernetes.io/hostname": name}, **(labels or {}))
    spec = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": pods},
                       "capacity": {"cpu": cpu, "memory": "16Gi", "pods": pods}}}


def pod(name, cpu="1", ns="default", node_name=None, priority=None, labels=None, **spec):
    s = {"containers": [{"name": "c", "image": "nginx",
                         "resources": {"requests": {"cpu": cpu}}}]}
    s.update(spec)
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    meta = {"name": name, "namespace": ns, "uid": "uid-" + ns + "-" + name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s,
            "status": {"phase": "Running" if node_name else "Pending"}}


def namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def dump(tmp, name, items):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    return path


def write(tmp, name, obj):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


def blocked_cluster():
    """Three pending pods, each blocked by one thing, on three nodes."""
    return [namespace("default"), namespace("shop"),
            node("n1", cpu="2"), node("n2", cpu="2"), node("gpu1", taints=TAINT),
            pod("low-1", cpu="1500m", node_name="n1", priority=0),
            pod("low-2", cpu="1500m", node_name="n2", priority=10, labels={"app": "db"}),
            pod("needs-gpu", cpu="100m", ns="shop", nodeSelector={"dedicated": "gpu"}),
            pod("zone-z", cpu="100m", ns="shop", nodeSelector={"zone": "z"}),
            pod("important", cpu="1", ns="shop", priority=100),
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": "db", "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"app": "db"}}},
             "status": {"disruptionsAllowed": 0}}]


def test_why_taints(tmp):
    st = dump(tmp, "blocked.json", blocked_cluster())
    rc, out, err = kubectl("why", "needs-gpu", "-n", "shop", "--state", st, "-o", "json")
    check(rc == 0, f"why taints rc {rc} {err}")
    r = json.loads(out)
    check(r["selectedNode"] is None, "needs-gpu does not fit")
    check(r["filter"]["gpu1"]["reasons"] == ["node(s) had untolerated taint(s)"],
          f"taint reason: {r['filter']['gpu1']}")
    check(r["filter"]["n1"]["reasons"] == ["node(s) didn't match Pod's node affinity/selector"],
          f"selector reason: {r['filter']['n1']}")
    check(r["message"] == "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
          "2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, "
          "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
          f"message: {r['message']}")
    check(r["postFilter"]["code"] == "Unschedulable" and r["postFilter"]["victims"] == [],
          f"postFilter: {r['postFilter']}")


def test_why_affinity_text(tmp):
    st = dump(tmp, "blocked.json", blocked_cluster())
    rc, out, err = kubectl("why", "zone-z", "--namespace", "shop", "--state", st)
    check(rc == 0, f"why affinity rc {rc} {err}")
    lines = out.splitlines()
    check(lines[0] == "Pod:        shop/zone-z" and lines[3] == "Selected:   (none)",
          f"text head: {lines[:4]}")
    check("Preemption: would not help" in lines, f"text preemption line: {out}")
    check("n1                           rejected   cannot help  NodeAffinity: node(s) didn't match "
          "Pod's node affinity/selector (nodeSelector: zone=z, node has no zone label)" in lines,
          f"text node line: {out}")


def test_why_preemption_victims(tmp):
    st = dump(tmp, "blocked.json", blocked_cluster())
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "json")
    check(rc == 0, f"why preemption rc {rc} {err}")
    r = json.loads(out)
    check(r["message"] == "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
          "2 Insufficient cpu.", f"message when preemption helps: {r['message']}")
    pf = r["postFilter"]
    # n1's victim has priority 0 and no PDB: the least disruptive choice.
    check(pf == {"plugin": "DefaultPreemption", "code": "Success", "message": None,
                 "nominatedNode": "n1",
                 "victims": [{"pod": "default/low-1", "priority": 0, "pdbViolated": False}]},
          f"postFilter: {pf}")
    rc, out, _ = kubectl("why", "important", "-n", "shop", "--state", st)
    check("Preemption: would nominate n1 and evict 1 pod(s):" in out and
          "  default/low-1 (priority 0)" in out, f"text victims: {out}")


def test_why_pdb(tmp):
    items = blocked_cluster()
    items[5] = pod("low-1", cpu="1500m", node_name="n1", priority=50)  # now above low-2
    st = dump(tmp, "pdb.json", items)
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "json")
    pf = json.loads(out)["postFilter"]
    # Both nodes need one eviction; n2's would violate the db PDB, so n1 wins
    # even though its victim has the higher priority.
    check(pf["nominatedNode"] == "n1" and pf["victims"] ==
          [{"pod": "default/low-1", "priority": 50, "pdbViolated": False}], f"pdb choice: {pf}")
    items = [i for i in items if i["metadata"]["name"] != "low-1"] + \
        [pod("low-1", cpu="1500m", node_name="n1", priority=200)]
    st = dump(tmp, "pdb2.json", items)
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "json")
    pf = json.loads(out)["postFilter"]
    check(pf["nominatedNode"] == "n2" and pf["victims"] ==
          [{"pod": "default/low-2", "priority": 10, "pdbViolated": True}],
          f"only a PDB-violating victim is left: {pf}")
    rc, out, _ = kubectl("why", "important", "-n", "shop", "--state", st)
    check("  default/low-2 (priority 10, violates its PodDisruptionBudget)" in out,
          f"text pdb: {out}")


def test_why_missing_claim(tmp):
    """why and pending on a pod whose PersistentVolumeClaim does not exist give
    kube-scheduler's message: PostFilter stops at DynamicResources' error
    ("not found": its PreFilter never ran), without the preemption part."""
    items = [namespace("default"), node("n1"), node("n2"),
             pod("vol", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "no-such-claim"}}])]
    st = dump(tmp, "claim.json", items)
    want = '0/2 nodes are available: persistentvolumeclaim "no-such-claim" not found. not found'
    rc, out, err = kubectl("why", "vol", "--state", st)
    check(rc == 0 and "Message:    " + want in out.splitlines(), f"why missing claim: {rc} {out} {err}")
    rc, out, err = kubectl("pending", "--state", st, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    got = [p["message"] for g in r.get("groups", []) for p in g["pods"]]
    check(got == [want], f"pending missing claim: {got} {err}")


def test_why_yaml(tmp):
    st = dump(tmp, "blocked.json", blocked_cluster())
    rc, out, _ = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "yaml")
    check(rc == 0 and out.startswith('pod: "shop/important"\nprofile: "default-scheduler"\n'
                                     "numNodes: 3\nfeasibleNodes: []\nselectedNode: null\n"),
          f"yaml head: {out[:200]}")
    check('  nominatedNode: "n1"\n  victims:\n  - pod: "default/low-1"\n    priority: 0\n'
          "    pdbViolated: false\n" in out, f"yaml victims: {out[-300:]}")


def test_pending_groups(tmp):
    items = [namespace("default"), node("n1", cpu="4"), node("n2", cpu="4"),
             node("n3", cpu="4"), node("t1", taints=TAINT)]
    items += [pod("big-%03d" % i, cpu="8") for i in range(120)]
    items += [pod("sel-%03d" % i, cpu="100m", nodeSelector={"disk": "ssd"}) for i in range(50)]
    items += [pod("fit-%03d" % i, cpu="100m") for i in range(30)]
    st = dump(tmp, "pending.json", items)
    rc, out, err = kubectl("pending", "-A", "--state", st, "-o", "json")
    check(rc == 0, f"pending rc {rc} {err}")
    r = json.loads(out)
    got = [(g["plugin"], g["reason"], g["count"]) for g in r["groups"]]
    check(r["pods"] == 200 and got == [
        ("NodeResourcesFit", "Insufficient cpu", 120),
        ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector", 50),
        (None, "schedulable now", 30)], f"groups: {got}")
    first = r["groups"][0]["pods"][0]
    check(first == {"pod": "default/big-000", "nodesRejected": 4, "numNodes": 4,
                    "message": "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                               "3 Insufficient cpu. no new claims to deallocate, preemption: "
                               "0/4 nodes are available: 4 Preemption is not helpful for "
                               "scheduling.", "node": None}, f"first pod: {first}")
    rc, out, _ = kubectl("pending", "-A", "--state", st)
    lines = out.splitlines()
    check(lines[0] == "200 pending pod(s)" and
          lines[2] == "PODS   PLUGIN                       REASON" and
          lines[3] == "120    NodeResourcesFit             Insufficient cpu" and
          lines[4].endswith("default/big-009 and 110 more") and
          lines[7] == "30     -                            schedulable now", f"text: {lines[:8]}")


def gang_cluster():
    """A gang of 4 (minCount 4) of which 3 fit: n1 holds two members, n2 one."""
    def member(name):
        p = pod(name, cpu="1500m", ns="work")
        p["spec"]["schedulingGroup"] = {"podGroupName": "big"}
        return p
    return [namespace("work"), node("n1", cpu="4"), node("n2", cpu="2"),
            {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "big", "namespace": "work"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}] + \
        [member("w-%d" % i) for i in range(4)]


GANG_WORDS = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"


def test_why_gang(tmp):
    st = dump(tmp, "gang.json", gang_cluster())
    rc, out, err = kubectl("why", "w-2", "-n", "work", "--state", st, "-o", "json")
    check(rc == 0 and "unknown field" not in err, f"why gang rc {rc} {err}")
    g = json.loads(out).get("podGroup")
    check(g == {"name": "big", "policy": "gang", "minCount": 4, "pending": 4,
                "scheduledAlready": 0, "fit": {"w-0": "n1", "w-1": "n1", "w-2": "n2"},
                "rejected": [{"pod": "w-3",
                              "message": "0/2 nodes are available: 2 Insufficient cpu.",
                              "nodes": {"n1": {"plugin": "NodeResourcesFit",
                                               "reason": "Insufficient cpu"},
                                        "n2": {"plugin": "NodeResourcesFit",
                                               "reason": "Insufficient cpu"}}}],
                "notTried": [], "status": "Unschedulable", "message": GANG_WORDS},
          f"why gang json: {g}")
    rc, out, _ = kubectl("why", "w-0", "-n", "work", "--state", st)
    tail = out.splitlines()[-7:]
    check(tail == ["Pod group:  work/big (gang, minCount 4)",
                   "Members:    4 pending, 0 scheduled already",
                   "Fit:        3 of 4 pending: w-0 -> n1, w-1 -> n1, w-2 -> n2",
                   "Rejected:   w-3: 0/2 nodes are available: 2 Insufficient cpu.",
                   "              n1                       NodeResourcesFit: Insufficient cpu",
                   "              n2                       NodeResourcesFit: Insufficient cpu",
                   "Group:      Unschedulable: " + GANG_WORDS], f"why gang text: {tail}")


def test_pending_gang(tmp):
    st = dump(tmp, "gang-pending.json", gang_cluster() + [pod("solo", cpu="100m", ns="work")])
    rc, out, err = kubectl("pending", "-A", "--state", st, "-o", "json")
    check(rc == 0, f"pending gang rc {rc} {err}")
    r = json.loads(out)
    got = [(g["plugin"], g["reason"], g["count"], [p["pod"] for p in g["pods"]])
           for g in r["groups"]]
    check(got == [("GangScheduling", GANG_WORDS, 4, ["work/w-0", "work/w-1", "work/w-2",
                                                     "work/w-3"]),
                  (None, "schedulable now", 1, ["work/solo"])], f"pending gang: {got}")


COSCHED_LABEL = "scheduling.x-k8s.io/pod-group"
COSCHED_CONFIG = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                  "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
                  "      enabled:\n      - name: Coscheduling\n      disabled:\n"
                  "      - name: PrioritySort\n")


def cosched_cluster(min_member, nodes, members, spec=None, status=None, bound=(), cpu="1500m"):
    """A Coscheduling gang (scheduler-plugins' PodGroup CRD, pods joining by
    label) and the ConfigMap of a profile that enables Coscheduling, as
    scheduler-plugins' sample configuration does."""
    def member(name, node_name=None):
        return pod(name, cpu=cpu, ns="work",
                   node_name=node_name, labels={COSCHED_LABEL: "train"})
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "work"},
             "spec": dict({"minMember": min_member}, **(spec or {}))}
    if status:
        group["status"] = status
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "sched", "namespace": "kube-system"},
          "data": {"config.yaml": COSCHED_CONFIG}}
    return [namespace("work"), cm, group] + [node(n, cpu=c) for n, c in nodes] + \
        [member(n, nn) for n, nn in bound] + [member("w-%d" % i) for i in range(members)]


COSCHED_REJECTED = ("PodGroup work/train gets rejected due to Pod w-3 is unschedulable even after "
                    "PostFilter")


def test_why_cosched(tmp):
    """A Coscheduling gang of 4 (minMember 4) of which 3 fit: the member that
    fits nowhere rejects the group in PostFilter's words (3 of 4 with a
    node misses minMember by more than 10%)."""
    st = dump(tmp, "cosched.json", cosched_cluster(4, [("n1", "4"), ("n2", "2")], 4))
    cm = ("--config-map", "kube-system/sched")
    rc, out, err = kubectl("why", "w-2", "-n", "work", "--state", st, "-o", "json", *cm)
    check(rc == 0, f"why cosched rc {rc} {err}")
    g = json.loads(out).get("podGroup") if rc == 0 else None
    check(g == {"name": "train", "plugin": "Coscheduling", "minMember": 4, "pending": 4,
                "bound": 0, "waitingAtPermit": 0, "timeoutSeconds": 60,
                "timeoutFrom": "permitWaitingTimeSeconds", "phase": None, "scheduled": 0,
                "fit": {"w-0": "n1", "w-1": "n1", "w-2": "n2"},
                "rejected": [{"pod": "w-3",
                              "message": "0/2 nodes are available: 2 Insufficient cpu.",
                              "nodes": {"n1": {"plugin": "NodeResourcesFit",
                                               "reason": "Insufficient cpu"},
                                        "n2": {"plugin": "NodeResourcesFit",
                                               "reason": "Insufficient cpu"}}}],
                "notTried": [], "status": "Unschedulable", "message": COSCHED_REJECTED},
          f"why cosched json: {g}")
    rc, out, _ = kubectl("why", "w-0", "-n", "work", "--state", st, *cm)
    tail = out.splitlines()[-8:]
    check(tail == ["Pod group:  work/train (Coscheduling, minMember 4)",
                   "Members:    4 pending, 0 bound, 0 waiting at Permit",
                   "Timeout:    a member waits at Permit up to 60s (permitWaitingTimeSeconds)",
                   "Fit:        3 of 4 pending: w-0 -> n1, w-1 -> n1, w-2 -> n2",
                   "Rejected:   w-3: 0/2 nodes are available: 2 Insufficient cpu.",
                   "              n1                       NodeResourcesFit: Insufficient cpu",
                   "              n2                       NodeResourcesFit: Insufficient cpu",
                   "Group:      Unschedulable: " + COSCHED_REJECTED], f"why cosched text: {tail}")
    # without Coscheduling in the profile the label means nothing: no group report
    rc, out, _ = kubectl("why", "w-0", "-n", "work", "--state", st, "-o", "json")
    check(rc == 0 and "podGroup" not in json.loads(out), "default profile: no podGroup")
    rc, out, err = kubectl("pending", "-A", "--state", st, "-o", "json", *cm)
    got = [(g["plugin"], g["reason"], g["count"]) for g in json.loads(out)["groups"]] \
        if rc == 0 else err
    check(got == [("Coscheduling", COSCHED_REJECTED, 4)], f"pending cosched: {got}")


def test_why_cosched_too_few(tmp):
    """Fewer pods than minMember: PreFilter stops every member before any
    node, in Coscheduling's words; pending groups the members under it."""
    st = dump(tmp, "cosched-few.json", cosched_cluster(5, [("n1", "4"), ("n2", "2")], 4))
    cm = ("--config-map", "kube-system/sched")
    rc, out, err = kubectl("why", "w-1", "-n", "work", "--state", st, *cm)
    tail = out.splitlines()[-6:]
    check(tail == ["Pod group:  work/train (Coscheduling, minMember 5)",
                   "Members:    4 pending, 0 bound, 0 waiting at Permit",
                   "Timeout:    a member waits at Permit up to 60s (permitWaitingTimeSeconds)",
                   "Fit:        0 of 4 pending",
                   "Not tried:  w-0, w-1, w-2, w-3",
                   "Group:      UnschedulableAndUnresolvable: pre-filter pod w-1 cannot find "
                   "enough sibling pods, current pods number: 4, minMember of group: 5"],
          f"why cosched too few: {rc} {err} {tail}")
    rc, out, err = kubectl("pending", "-A", "--state", st, *cm)
    lines = out.splitlines()
    check(lines[3:5] == ["4      Coscheduling                 pre-filter pod w-0 cannot find "
                         "enough sibling pods, current pods number: 4, minMember of group: 5",
                         "       work/w-0, work/w-1, work/w-2, work/w-3"],
          f"pending cosched too few: {lines}")


def test_why_cosched_timeout(tmp):
    """One member bound, 8 of the 9 pending fit: 9 of minMember 10 have a
    node, within 10%, so PostFilter rejects nothing and the members that
    fit wait at Permit until the PodGroup's scheduleTimeoutSeconds; the
    status PostBind wrote shows."""
    st = dump(tmp, "cosched-timeout.json",
              cosched_cluster(10, [("n1", "8"), ("n0", "1")], 9,
                              spec={"scheduleTimeoutSeconds": 90},
                              status={"phase": "Scheduling", "scheduled": 1},
                              bound=[("w-b", "n0")], cpu="1"))
    cm = ("--config-map", "kube-system/sched")
    rc, out, err = kubectl("why", "w-8", "-n", "work", "--state", st, *cm)
    lines = out.splitlines()
    head = lines[lines.index("Pod group:  work/train (Coscheduling, minMember 10)"):] \
        if "Pod group:  work/train (Coscheduling, minMember 10)" in lines else lines
    check(head[1:4] == ["Members:    9 pending, 1 bound, 0 waiting at Permit",
                        "Timeout:    a member waits at Permit up to 90s (scheduleTimeoutSeconds)",
                        "Phase:      Scheduling, 1 scheduled"] and
          head[-1] == "Group:      Unschedulable: rejected due to timeout after waiting 1m30s "
                      "at plugin Coscheduling", f"why cosched timeout: {rc} {err} {head}")
    rc, out, err = kubectl("why", "w-8", "-n", "work", "--state", st, "-o", "json", *cm)
    g = json.loads(out).get("podGroup") if rc == 0 else {}
    check((g.get("bound"), g.get("timeoutSeconds"), g.get("timeoutFrom"), g.get("phase"),
           g.get("scheduled"), len(g.get("fit", {})), [r["pod"] for r in g.get("rejected", [])])
          == (1, 90, "scheduleTimeoutSeconds", "Scheduling", 1, 8, ["w-8"]),
          f"why cosched timeout json: {g}")


def test_what_if_drain(tmp):
    items = [node("n1", cpu="4"), node("n2", cpu="4"),
             pod("a", cpu="1", node_name="n1"), pod("b", cpu="1", node_name="n1"),
             pod("c", cpu="3", node_name="n1"), pod("d", cpu="2", node_name="n2")]
    ds = pod("ds", cpu="100m", node_name="n1")
    ds["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                          "name": "x", "uid": "u", "controller": True}]
    st = dump(tmp, "drain.json", items + [ds])
    rc, out, err = kubectl("what-if", "--state", st, "--drain", "n1", "-o", "json")
    check(rc == 0, f"drain rc {rc} {err}")
    r = json.loads(out)
    check(r["summary"] == "drained node n1 (3 pod(s) to re-place)" and r["pods"] == 3 and
          r["placed"] == 2 and r["byNode"] == {"n2": 2}, f"drain: {r}")
    bad = [p for p in r["placements"] if p["node"] is None]
    misfit = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. "
              "no new claims to deallocate, preemption: 0/2 nodes are available: 1 No "
              "preemption victims found for incoming pod, 1 Preemption is not helpful for "
              "scheduling.")
    check(len(bad) == 1 and bad[0]["pod"] == "default/c" and bad[0]["message"] == misfit,
          f"drain misfit: {bad}")
    rc, out, _ = kubectl("what-if", "--state", st, "--drain", "n1")
    check("Placed 2 of 3 pod(s)." in out and "  1 pod(s): " + misfit + "\n    default/c\n" in out,
          f"drain text: {out}")


def deployment(name, replicas, cpu):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests":
                                                                         {"cpu": cpu}}}]}}}}


def scale_cluster():
    # 3 nodes of 4 CPUs with 1 CPU used each: room for exactly 9 more 1-CPU replicas.
    items = [node("n%d" % i, cpu="4") for i in range(3)]
    items += [pod("web-%d" % i, cpu="1", node_name="n%d" % i, labels={"app": "web"})
              for i in range(3)]
    return items + [deployment("web", 3, "1")]


def test_what_if_scale(tmp):
    st = dump(tmp, "scale.json", scale_cluster())
    rc, out, err = kubectl("what-if", "--state", st, "--scale", "default/web=20", "-o", "json")
    check(rc == 0, f"scale rc {rc} {err}")
    r = json.loads(out)
    check(r["pods"] == 17 and r["placed"] == 9 and r["byNode"] == {"n0": 3, "n1": 3, "n2": 3},
          f"scale: pods {r['pods']} placed {r['placed']} {r['byNode']}")
    check(r["placements"][0]["pod"] == "default/web-whatif-4", r["placements"][0])
    rc, out, _ = kubectl("what-if", "--state", st, "--scale", "default/web=12")
    check(out.splitlines()[:2] == ["What if: scaled default/web to 12 replicas",
                                   "Placed 9 of 9 pod(s)."], f"scale text: {out}")
    # More nodes like n0 answer "how many nodes would I need?"
    rc, out, _ = kubectl("what-if", "--state", st, "--scale", "default/web=20",
                         "--add-node", write(tmp, "n.json", node("extra", cpu="4")) + "x2",
                         "-o", "json")
    r = json.loads(out)
    check(r["placed"] == 17 and r["summary"] == "scaled default/web to 20 replicas; "
          "added 2 node(s) like extra", f"scale+add: {r['summary']} {r['placed']}")


def test_what_if_pending_after_add(tmp):
    items = [node("n1", cpu="2"), pod("p1", cpu="3"), pod("p2", cpu="3")]
    st = dump(tmp, "add.json", items)
    nf = write(tmp, "big.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n"
               "status:\n  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf, "-o", "json")
    r = json.loads(out)
    check(rc == 0 and r["pods"] == 2 and r["placed"] == 1 and r["byNode"] == {"big": 1},
          f"pending after add-node: {r}")


def created(obj, ts):
    obj["metadata"]["creationTimestamp"] = ts
    return obj


def test_what_if_queue_order(tmp):
    """kube-scheduler pops the higher priority first (PrioritySort), whatever
    the order of the dump or of arrival: given an 8-CPU node, hi (priority
    1000, 3 CPUs, created later) goes there and big (6 CPUs) stays pending."""
    items = [node("n1", cpu="2"),
             created(pod("big", cpu="6"), "2026-01-01T00:00:00Z"),
             created(pod("hi", cpu="3", priority=1000), "2026-01-01T00:05:00Z")]
    st = dump(tmp, "order.json", items)
    nf = write(tmp, "eight.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: eight\n"
               "status:\n  allocatable: {cpu: '8', memory: 16Gi, pods: '110'}\n")
    big_msg = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
               "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming "
               "pod, 1 Preemption is not helpful for scheduling.")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    check(r.get("placements") == [{"pod": "default/hi", "node": "eight", "message": None},
                                  {"pod": "default/big", "node": None, "message": big_msg}],
          f"queue order: {rc} {err} {r.get('placements')}")
    # Equal priorities: the earlier creationTimestamp first, then the dump's order.
    items = [node("n1", cpu="2"),
             created(pod("late", cpu="6"), "2026-01-01T00:05:00Z"),
             created(pod("early", cpu="3"), "2026-01-01T00:00:00Z"),
             created(pod("tie", cpu="3"), "2026-01-01T00:00:00Z")]
    st = dump(tmp, "order2.json", items)
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    check([(p["pod"], p["node"]) for p in r.get("placements", [])] ==
          [("default/early", "eight"), ("default/tie", "eight"), ("default/late", None)],
          f"arrival order: {r.get('placements')}")
    rc, out, err = kubectl("what-if", "--state", dump(tmp, "order.json", items[:1] + [
        created(pod("big", cpu="6"), "2026-01-01T00:00:00Z"),
        created(pod("hi", cpu="3", priority=1000), "2026-01-01T00:05:00Z")]), "--add-node", nf)
    check(out.splitlines() == [
        "What if: added 1 node(s) like eight", "Placed 1 of 2 pod(s).", "",
        "NODE                                     PODS",
        "eight                                    1", "",
        "Did not fit: 1 pod(s)", "  1 pod(s): " + big_msg, "    default/big"],
          f"queue order, text: {out}")


def test_what_if_preemption(tmp):
    """A pod that fits nowhere preempts as DefaultPreemption would: hi
    (priority 1000) evicts low (priority 0) on n1, not mid (priority 2000) on
    n2, and is placed on n1; low becomes pending and finds no room."""
    items = [node("n1", cpu="4"), node("n2", cpu="4"),
             pod("low", cpu="3", node_name="n1"), pod("mid", cpu="3", node_name="n2", priority=2000),
             pod("hi", cpu="3", priority=1000)]
    st = dump(tmp, "preempt.json", items)
    nf = write(tmp, "tiny.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: tiny\n"
               "status:\n  allocatable: {cpu: '1', memory: 16Gi, pods: '110'}\n")
    low_msg = ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, "
               "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
               "2 No preemption victims found for incoming pod.")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    check(r == {"summary": "added 1 node(s) like tiny", "pods": 2, "placed": 1, "unschedulable": 1,
                "byNode": {"n1": 1},
                "placements": [{"pod": "default/hi", "node": "n1", "message": None,
                                "victims": ["default/low"]},
                               {"pod": "default/low", "node": None, "message": low_msg}]},
          f"preemption: {rc} {err} {r}")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf)
    check(out.splitlines()[-3:] == ["", "Preempted: 1 pod(s)", "default/low by default/hi (n1)"],
          f"preemption, text: {out}")


def test_what_if_nominated(tmp):
    """A pending pod nominated to n2 (status.nominatedNodeName, priority 500)
    keeps its room there: a new pod of priority 0 that only n2 could take
    does not fit, as kube-scheduler's two-pass Filter decides."""
    nom = pod("nom", cpu="2", priority=500)
    nom["status"]["nominatedNodeName"] = "n2"
    items = [node("n1", cpu="4"), node("n2", cpu="4"),
             pod("a", cpu="3", node_name="n1"), pod("b", cpu="1", node_name="n2"), nom]
    st = dump(tmp, "nominated.json", items)
    pf = write(tmp, "new.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: new\nspec:\n"
               "  containers:\n  - name: c\n    resources: {requests: {cpu: '2'}}\n")
    rc, out, err = kubectl("what-if", "--state", st, "--pods", pf, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    check(r.get("placements") == [{"pod": "default/new", "node": None, "message":
                                   "0/2 nodes are available: 2 Insufficient cpu. no new claims to "
                                   "deallocate, preemption: 0/2 nodes are available: 2 No "
                                   "preemption victims found for incoming pod."}],
          f"nominated pod honoured: {rc} {err} {r.get('placements')}")
    # Its own turn (the cluster's pending pods are placed): it takes n2.
    nf = write(tmp, "tiny2.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: tiny\n"
               "status:\n  allocatable: {cpu: '1', memory: 16Gi, pods: '110'}\n")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node", nf, "-o", "json")
    r = json.loads(out) if rc == 0 else {}
    check(r.get("placements") == [{"pod": "default/nom", "node": "n2", "message": None}],
          f"nominated pod placed: {r.get('placements')}")


def test_config_map(tmp):
    """--config-map NS/NAME[/KEY]: the configuration the cluster runs, from a
    ConfigMap of the dump (here one that disables NodeResourcesFit)."""
    cfg = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
           "      disabled:\n      - name: NodeResourcesFit\n")
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "sched-config", "namespace": "kube-system"},
          "data": {"config.yaml": cfg}}
    st = dump(tmp, "cm.json", blocked_cluster() + [cm])
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "json")
    check(json.loads(out)["selectedNode"] is None, "default profile: no room")
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st, "-o", "json",
                           "--config-map", "kube-system/sched-config")
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r.get("selectedNode") in ("n1", "n2"),
          f"profile from the ConfigMap (no NodeResourcesFit): {rc} {err} {out[:200]}")
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st,
                           "--config-map", "kube-system/sched-config/nokey")
    check(rc == 2 and err == "kubectl-schedext: configmap kube-system/sched-config: data has "
          "no such key\n", f"missing key: {err!r}")
    rc, out, err = kubectl("why", "important", "-n", "shop", "--state", st,
                           "--config-map", "kube-system/nope")
    check(rc == 2 and "configmap kube-system/nope not found" in err, f"missing map: {err!r}")


def test_release_flags(tmp):
    """--emulated-version and --feature-gates as schedext serve takes them:
    the same cluster, where NodeResourcesBalancedAllocation decides, picks
    node-a as 1.35 and node-b as 1.36/1.37 (the cluster of
    test/plugins/test_node_resources_balanced_allocation.c); bad values are
    refused with serve's words."""
    def n(name):
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "10", "memory": "10000", "pods": "110"}}}

    def p(name, cpu, mem, node_name=None):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "uid": "uid-" + name},
                "spec": dict({"containers": [{"name": "c", "resources": {
                    "requests": {"cpu": cpu, "memory": mem}}}]},
                    **({"nodeName": node_name} if node_name else {})),
                "status": {"phase": "Running" if node_name else "Pending"}}
    st = dump(tmp, "balance.json", [namespace("default"), n("node-a"), n("node-b"),
                                    p("ea", "2", "2000", "node-a"), p("eb", "4", "0", "node-b"),
                                    p("new", "1", "2000")])
    for args, want in ((["--emulated-version", "1.35"], "node-a"),
                       (["--emulated-version", "1.36"], "node-b"),
                       ([], "node-b"),
                       (["--emulated-version", "kube=1.35", "--feature-gates",
                         "OpportunisticBatching=false", "--feature-gates",
                         "NodeDeclaredFeatures=true"], "node-a")):
        rc, out, err = kubectl("why", "new", "--state", st, "-o", "json", *args)
        got = json.loads(out).get("selectedNode") if rc == 0 else None
        check(got == want, f"why {' '.join(args)}: {got} (want {want}) {err}")
    for args, want in (
            (["--feature-gates", "Bogus=true"],
             "--feature-gates: unrecognized feature gate: Bogus"),
            (["--feature-gates", "NodeDeclaredFeatures=false"],
             "--feature-gates: cannot set feature gate NodeDeclaredFeatures to false, feature is "
             "locked to true"),
            (["--emulated-version", "1.35", "--feature-gates",
              "TopologyAwareWorkloadScheduling=true"],
             "--feature-gates: cannot set feature gate TopologyAwareWorkloadScheduling to true, "
             "feature is PreAlpha at emulated version 1.35"),
            (["--emulated-version", "1.34"],
             "--emulated-version: emulation version 1.34 is not between [1.35, 1.37]")):
        rc, out, err = kubectl("pending", "--state", st, *args)
        check((rc, err) == (2, "kubectl-schedext: %s\n" % want), f"{args}: {rc} {err!r}")


def test_bad_input(tmp):
    st = dump(tmp, "blocked.json", blocked_cluster())
    cases = [
        (["why", "nope", "-n", "shop", "--state", st],
         'kubectl-schedext: pod "nope" not found in namespace "shop"\n'),
        (["why", "x", "-n", "nosuch", "--state", st],
         'kubectl-schedext: namespace "nosuch" not found\n'),
        (["what-if", "--state", st, "--add-node", write(tmp, "bad.yaml", "kind: Node\nmetadata: [\n")],
         None),
        (["what-if", "--state", st, "--add-node", write(tmp, "pod.json", pod("x")) + "x2"],
         None),
        (["what-if", "--state", st, "--pods", write(tmp, "p.json", pod("x")) + "x99999999"],
         None),
        (["what-if", "--state", st, "--scale", "default/web=5"],
         "kubectl-schedext: deployment default/web not found\n"),
        (["what-if", "--state", st, "--scale", "web=-1"], None),
        (["why", "--state", st], None),
        (["frobnicate"], "kubectl-schedext: unknown command 'frobnicate' (why, pending, what-if)\n"),
        (["pending", "--state", os.path.join(tmp, "missing.json")], None),
    ]
    for args, want in cases:
        rc, out, err = kubectl(*args)
        check(rc == 2 and out == "" and err.count("\n") == 1 and
              err.startswith("kubectl-schedext: ") and (want is None or err == want),
              f"bad input {args[:2]}: rc {rc} err {err!r}")
    rc, out, err = kubectl("what-if", "--state", st, "--add-node",
                           os.path.join(tmp, "bad.yaml"))
    check("bad.yaml" in err, f"malformed node file named: {err!r}")
    rc, out, err = kubectl("what-if", "--state", st, "--pods",
                           os.path.join(tmp, "p.json") + "x99999999")
    check("copies must be between 1 and 100000" in err, f"absurd N: {err!r}")


def test_live(tmp):
    api = FakeApi(tmp)
    try:
        ops = [{"op": "upsert", "object": o} for o in blocked_cluster() + [deployment("web", 1, "1")]]
        api.apply(ops)
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        rc, out, err = kubectl("why", "important", "-n", "shop", "--kubeconfig", kc, "-o", "json")
        check(rc == 0, f"live why rc {rc} {err}")
        r = json.loads(out) if rc == 0 else {}
        check(r.get("postFilter", {}).get("nominatedNode") == "n1", f"live why: {out[:300]}")
        env = dict(os.environ, KUBECONFIG=kc)
        p = subprocess.run([PLUGIN, "pending", "-A", "-o", "json"], capture_output=True,
                           text=True, env=env, timeout=60)
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(r.get("pods") == 3, f"live pending via $KUBECONFIG: {p.stdout[:300]} {p.stderr}")
        rc, out, err = kubectl("what-if", "--kubeconfig", kc, "--scale", "default/web=3",
                               "-o", "json")
        r = json.loads(out) if rc == 0 else {}
        check(r.get("pods") == 2, f"live what-if scale: {out[:300]} {err}")
        rc, out, err = kubectl("why", "important", "-n", "shop", "--kubeconfig", kc,
                               "--context", "nosuch")
        check(rc == 2 and "nosuch" in err, f"unknown context: {rc} {err!r}")
    finally:
        api.stop()


def main():
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_why_taints, test_why_affinity_text, test_why_preemption_victims,
                  test_why_pdb, test_why_missing_claim, test_why_yaml, test_pending_groups,
                  test_why_gang, test_pending_gang, test_why_cosched, test_why_cosched_too_few,
                  test_why_cosched_timeout, test_what_if_drain, test_config_map,
                  test_what_if_scale, test_what_if_pending_after_add, test_what_if_queue_order,
                  test_what_if_preemption, test_what_if_nominated, test_release_flags,
                  test_bad_input,
                  test_live):
            t0 = time.time()
            t(tmp)
            print(f"{t.__name__}: {time.time() - t0:.1f}s")
    print(f"test_kubectl.py: {checks} checks, {failures} failed ({time.time() - start:.1f}s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
