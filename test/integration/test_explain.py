#!/usr/bin/env python3
"""`schedext explain` end to end: runs the real binary on the demo cluster and
on small generated states, and checks the JSON shape, exact reasons and
FitError messages, text output, --nodes, single-plugin profiles and the exit
codes for bad input."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("SCHEDEXT_BIN", "build/schedext")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEMO = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
DEMO_POD = os.path.join(ROOT, "extender-config", "demo-pod.yaml")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def run(*args):
    p = subprocess.run([BIN, "explain", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def write(tmp, name, obj):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def node(name, cpu="4", taints=None, labels=None):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))},
         "spec": {},
         "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def pod(name, cpu="1", **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "uid-" + name},
            "spec": dict({"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}, **spec)}


def test_demo_json():
    rc, out, err = run("--state", DEMO, "--pod", DEMO_POD)
    check(rc == 0, f"demo explain exit {rc}: {err}")
    r = json.loads(out)
    for key in ("pod", "profile", "numNodes", "feasibleNodes", "selectedNode", "message",
                "preFilter", "filter", "scores"):
        check(key in r, f"key {key} in explain output")
    check(r["profile"] == "default-scheduler", "default profile")
    check(r["numNodes"] == 7, f"numNodes {r['numNodes']}")
    check(r["selectedNode"] in r["feasibleNodes"], "selected node is feasible")
    check(r["message"] is None and r["preFilter"] is None, "fits: no message")
    cp = r["filter"].get("control-plane-1")
    check(cp == {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                 "reasons": ["node(s) had untolerated taint(s)"],
                 "detail": {"text": "taint node-role.kubernetes.io/control-plane:NoSchedule",
                            "taint": "node-role.kubernetes.io/control-plane:NoSchedule"}},
          f"control-plane status {cp}")
    check(r["filter"].get("worker-b3", {}).get("reasons") == ["node(s) were unschedulable"],
          "cordoned node reason")
    check(sorted(r["scores"]) == r["feasibleNodes"], "every feasible node scored")
    for name, s in r["scores"].items():
        total = sum(p["weighted"] for p in s["plugins"].values())
        check(total == s["total"], f"{name}: total {s['total']} == sum {total}")
        for pname, p in s["plugins"].items():
            check(p["weighted"] == p["normalized"] * p["weight"], f"{name}/{pname} weighted")
            check(0 <= p["normalized"] <= 100, f"{name}/{pname} normalized range")
    best = max(s["total"] for s in r["scores"].values())
    check(r["scores"][r["selectedNode"]]["total"] == best, "selected node has the best total")
    rc, text, _ = run("--state", DEMO, "--pod", DEMO_POD, "--format", "text")
    check(rc == 0 and "Selected:" in text and "TaintToleration: node(s) had untolerated taint" in text,
          "text format")


def test_no_fit_message(tmp):
    state = write(tmp, "s.json", {"apiVersion": "v1", "kind": "List", "items": [
        node("n1", cpu="1"), node("n2", cpu="1"),
        node("n3", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])]})
    p = write(tmp, "p.json", pod("big", cpu="2"))
    rc, out, err = run("--state", state, "--pod", p)
    r = json.loads(out)
    check(rc == 0, "exit 0 when nothing fits")
    check(r["selectedNode"] is None and r["feasibleNodes"] == [], "nothing feasible")
    # PostFilter runs as a dry run: the message is the FailedScheduling event's,
    # every PostFilter plugin's words included (DynamicResources, then
    # DefaultPreemption), exactly as kube-scheduler 1.35 writes it.
    check(r["message"] == "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
          "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
          "available: 3 Preemption is not helpful for scheduling.", f"FitError: {r['message']}")
    check(r["postFilter"] == {"plugin": "DynamicResources", "code": "Unschedulable",
                              "message": "no new claims to deallocate, preemption: 0/3 nodes "
                                         "are available: 3 Preemption is not helpful for "
                                         "scheduling.",
                              "nominatedNode": None, "victims": []},
          f"postFilter: {r.get('postFilter')}")
    rc, text, _ = run("--state", state, "--pod", p, "--format", "text")
    check("Message:    0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 "
          "Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
          "available: 3 Preemption is not helpful for scheduling." in text.splitlines(),
          f"text message: {text}")
    check(r["filter"]["n1"]["plugin"] == "NodeResourcesFit", "n1 rejected by fit")
    # --nodes: only n3 is a candidate, the others are not reported
    rc, out, _ = run("--state", state, "--pod", p, "--nodes", "n3")
    r = json.loads(out)
    check(list(r["filter"]) == ["n3"] and r["numNodes"] == 3, f"--nodes subset {r['filter']}")


def test_missing_claim(tmp):
    """A PersistentVolumeClaim that does not exist: PreFilter rejects the pod
    (VolumeRestrictions, UnschedulableAndUnresolvable), DynamicResources'
    PreFilter never runs, so its PostFilter fails with CycleState's "not
    found" and PostFilter stops there with an Error: kube-scheduler's message
    ends `... not found. not found`, without the preemption part."""
    state = write(tmp, "s.json", {"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), node("n2"), node("n3")]})
    p = write(tmp, "p.json", pod("vol", volumes=[{"name": "v", "persistentVolumeClaim":
                                                   {"claimName": "no-such-claim"}}]))
    rc, out, err = run("--state", state, "--pod", p)
    r = json.loads(out)
    check(rc == 0, f"missing claim exit {rc}: {err}")
    check(r["message"] == '0/3 nodes are available: persistentvolumeclaim "no-such-claim" '
          'not found. not found', f"missing claim message: {r['message']}")
    check(r["postFilter"] == {"plugin": "DynamicResources", "code": "Error",
                              "message": "not found", "nominatedNode": None, "victims": []},
          f"missing claim postFilter: {r['postFilter']}")
    # the preFilter object as before, plus the volume that names the claim
    want = {"plugin": "VolumeRestrictions", "code": "UnschedulableAndUnresolvable",
            "reasons": ['persistentvolumeclaim "no-such-claim" not found'],
            "detail": {"text": "volume v: claim default/no-such-claim is not in the cluster",
                       "volume": "v", "claim": "no-such-claim"}}
    check(r["preFilter"] == want, f"missing claim preFilter: {r['preFilter']}")
    check(r["filter"]["n1"] == want and r["filter"]["n3"] == want,
          f"every node carries the PreFilter status and its detail: {r['filter']}")
    rc, out, err = run("--state", state, "--pod", p, "--format", "text")
    check('PreFilter:  VolumeRestrictions rejected the pod: persistentvolumeclaim "no-such-claim" '
          'not found (volume v: claim default/no-such-claim is not in the cluster)' in out.splitlines(),
          f"missing claim text: {out} {err}")


def test_gated_pod(tmp):
    state = write(tmp, "s.json", {"apiVersion": "v1", "kind": "List", "items": [node("n1"), node("n2")]})
    p = write(tmp, "gated.json", pod("gated", schedulingGates=[{"name": "example.com/wait"},
                                                              {"name": "example.com/quota"}]))
    rc, out, _ = run("--state", state, "--pod", p)
    r = json.loads(out)
    # kube-scheduler's status as before, plus the gates left as an array
    want = {"plugin": "SchedulingGates", "code": "UnschedulableAndUnresolvable",
            "reasons": ["waiting for scheduling gates: [example.com/wait example.com/quota]"],
            "detail": {"text": "2 scheduling gate(s) left: example.com/wait, example.com/quota",
                       "gates": ["example.com/wait", "example.com/quota"]}}
    check(r["preFilter"] == want, f"gated preFilter {r['preFilter']}")
    check(r["filter"].get("n1") == want and r["filter"].get("n2") == want,
          f"every node carries it, with its detail: {r['filter']}")
    # A gated pod never enters a scheduling cycle: no PostFilter, no PostFilter words.
    check("postFilter" not in r and r["message"] == "0/2 nodes are available: waiting for "
          "scheduling gates: [example.com/wait example.com/quota].",
          f"gated: {r.get('postFilter')} {r['message']}")
    rc, out, _ = run("--state", state, "--pod", p, "--format", "text")
    lines = out.splitlines()
    check("PreFilter:  SchedulingGates rejected the pod: waiting for scheduling gates: "
          "[example.com/wait example.com/quota] (2 scheduling gate(s) left: example.com/wait, "
          "example.com/quota)" in lines, f"gated text: {out}")
    check("n1                           rejected   cannot help  SchedulingGates: waiting for "
          "scheduling gates: [example.com/wait example.com/quota]" in lines,
          f"node rows keep the reason alone (the PreFilter line has the numbers): {out}")
    # kubectl schedext why: the same words for the gated pod in the state
    g = pod("gated", schedulingGates=[{"name": "example.com/wait"}, {"name": "example.com/quota"}])
    full = write(tmp, "gated-full.json", {"apiVersion": "v1", "kind": "List", "items": [node("n1"), node("n2"), g]})
    k = subprocess.run([BIN.replace("schedext", "kubectl-schedext") if BIN.endswith("/schedext") else BIN,
                        "why", "gated", "--state", full], capture_output=True, text=True, timeout=60)
    check(k.returncode == 0 and "PreFilter:  SchedulingGates rejected the pod: waiting for scheduling gates: "
          "[example.com/wait example.com/quota] (2 scheduling gate(s) left: example.com/wait, "
          "example.com/quota)" in k.stdout.splitlines(), f"kubectl why gated: {k.stdout} {k.stderr}")


def test_single_plugin_profile(tmp):
    state = write(tmp, "s.json", {"apiVersion": "v1", "kind": "List", "items": [
        node("n1", cpu="1"), node("n2", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}])]})
    p = write(tmp, "p.json", pod("p", cpu="2"))
    cfg = write(tmp, "cfg.yaml", """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: only-taints
  plugins:
    multiPoint:
      enabled: [{name: TaintToleration}]
      disabled: [{name: "*"}]
""")
    rc, out, err = run("--state", state, "--pod", p, "--config", cfg)
    r = json.loads(out)
    check(rc == 0 and r["profile"] == "only-taints", f"single-plugin profile: {err}")
    check(r["feasibleNodes"] == ["n1", "n2"], "resources are not checked by this profile")
    check(set(r["scores"]["n1"]["plugins"]) == {"TaintToleration"}, "only TaintToleration scores")
    check(r["scores"]["n1"]["plugins"]["TaintToleration"]["normalized"] == 100 and
          r["scores"]["n2"]["plugins"]["TaintToleration"]["normalized"] == 0, "taint scores")


def test_bad_input(tmp):
    state = write(tmp, "s.json", {"apiVersion": "v1", "kind": "List", "items": [node("n1")]})
    good = write(tmp, "p.json", pod("p"))
    cases = [
        (["--pod", good], "--state is required"),
        (["--state", state], "--pod is required"),
        (["--state", state, "--pod", good, "--format", "xml"], "--format must be json or text"),
        (["--state", "/nonexistent", "--pod", good], "/nonexistent"),
        (["--state", state, "--pod", write(tmp, "bad.json", "{not json")], "bad.json"),
        (["--state", state, "--pod", write(tmp, "badq.json", pod("q", cpu="1Gb"))], "invalid quantity"),
        (["--state", write(tmp, "bads.json", {"kind": "List", "items": [{"kind": "Node", "metadata": 5}]}),
          "--pod", good], "items[0]"),
        (["--state", state, "--pod", good, "--config", write(tmp, "badc.yaml", "apiVersion: x\n")],
         "apiVersion"),
        (["--state", state, "--pod", good, "--profile", "nope"], "no profile named 'nope'"),
        (["--state", state, "--pod", good, "--bogus"], "explain: unknown option '--bogus'"),
    ]
    for args, needle in cases:
        rc, out, err = run(*args)
        check(rc == 2, f"exit 2 for {args}: got {rc}")
        check(needle in err, f"stderr names the problem ({needle!r}): {err.strip()}")
        check(err.count("\n") <= 2, f"short error for {args}")


def test_demo_volume_pod(tmp):
    """The README's volume example: a pod mounting shop/media (PV pinned to
    eu-west-1b) on the demo cluster; and a claim that does not exist."""
    rc, out, err = run("--state", DEMO, "--pod", os.path.join(ROOT, "extender-config", "demo-volume-pod.yaml"))
    check(rc == 0, f"volume pod explain exit {rc}: {err}")
    r = json.loads(out)
    check(r["selectedNode"] == "worker-b2", f"volume pod lands on worker-b2: {r['selectedNode']}")
    for n in ("worker-a1", "worker-a2", "worker-a3"):
        check(r["filter"].get(n) == {
            "plugin": "VolumeBinding", "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) didn't match PersistentVolume's node affinity"],
            "detail": {"text": "PersistentVolume pv-media: topology.kubernetes.io/zone In [eu-west-1b], "
                               "node has topology.kubernetes.io/zone=eu-west-1a",
                       "persistentVolume": "pv-media", "claim": "media"}},
            f"{n}: {r['filter'].get(n)}")
    check(r["filter"].get("worker-b1") == {
        "plugin": "NodeVolumeLimits", "code": "Unschedulable", "reasons": ["node(s) exceed max volume count"],
        "detail": {"text": "driver ebs.csi.aws.com: 1 attached + 1 new > limit 1", "driver": "ebs.csi.aws.com",
                   "attached": 1, "new": 1, "limit": 1}},
        f"worker-b1: {r['filter'].get('worker-b1')}")
    missing = pod("needs-claim", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "does-not-exist"}}])
    missing["metadata"]["namespace"] = "shop"
    rc, out, err = run("--state", DEMO, "--pod", write(tmp, "missing-claim.json", missing))
    r = json.loads(out)
    check(r["selectedNode"] is None and r["preFilter"] is not None
          and r["preFilter"]["code"] == "UnschedulableAndUnresolvable"
          and r["preFilter"]["reasons"] == ['persistentvolumeclaim "does-not-exist" not found'],
          f"missing claim rejected at PreFilter: {r['preFilter']}")


def test_fit_numbers(tmp):
    """NodeResourcesFit's reasons carry the pod's request, the node's free
    and allocatable amounts (text and JSON); the FailedScheduling message
    keeps kube-scheduler's words (issue 25)."""
    small = node("small", cpu="2")
    small["status"]["allocatable"].update({"memory": "3Gi", "pods": "1"})
    big = node("big", cpu="8")
    running = pod("running", cpu="500m")
    running["spec"]["nodeName"] = "small"
    running["spec"]["containers"][0]["resources"]["requests"]["memory"] = "1Gi"
    state = write(tmp, "fit.json", {"apiVersion": "v1", "kind": "List", "items": [small, big, running]})
    p = pod("greedy", cpu="1500m")
    p["spec"]["containers"][0]["resources"]["requests"]["memory"] = "2560Mi"
    p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "small"}
    pf = write(tmp, "greedy.json", p)
    rc, out, err = run("--state", state, "--pod", pf, "--format", "text")
    line = [l for l in out.splitlines() if l.startswith("small ")]
    check(rc == 0 and line == ["small                        rejected   may help     NodeResourcesFit: Too many pods "
                               "(requests 1, free 0 of 1), Insufficient memory (requests 2560Mi, free 2Gi of 3Gi)"],
          f"text numbers: {line} {err}")
    check("Message:    0/2 nodes are available: 1 Insufficient memory, 1 Too many pods, "
          "1 node(s) didn't match Pod's node affinity/selector." in out, f"FailedScheduling words unchanged: {out}")
    rc, out, err = run("--state", state, "--pod", pf)
    r = json.loads(out)
    check(r["filter"]["small"]["resources"] == [
        {"resource": "pods", "requests": "1", "free": "0", "allocatable": "1"},
        {"resource": "memory", "requests": "2560Mi", "free": "2Gi", "allocatable": "3Gi"}],
        f"JSON numbers: {r['filter']['small']}")
    check("resources" not in r["filter"]["big"], f"other plugins: no numbers: {r['filter']['big']}")


def test_rejection_details(tmp):
    """Every Filter rejection carries its numbers, in text (in parentheses
    after kube-scheduler's reason) and in JSON (filter.NODE.detail): the
    taint, the nodeSelector entry or affinity term with what the node has,
    the spread counts as PodTopologySpread's Filter computes them, the
    anti-affinity term and pod, the host port; the PREEMPTION column says
    which rejections preemption cannot fix (UnschedulableAndUnresolvable)."""
    def n(name, zone, taints=None):
        return node(name, labels={"topology.kubernetes.io/zone": zone}, taints=taints)

    def p(name, node_name=None, labels=None, **spec):
        x = pod(name, cpu="100m", **spec)
        x["metadata"]["labels"] = labels or {}
        if node_name:
            x["spec"]["nodeName"] = node_name
        return x
    w1 = p("w1", "a1", {"app": "web"})
    w1["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    anti_web = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}
    state = write(tmp, "details.json", {"apiVersion": "v1", "kind": "List", "items": [
        n("a1", "a"), n("a2", "a"), n("b1", "b"),
        n("c1", "c", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        w1, p("w2", "a2", {"app": "web"}), p("w3", "b1", {"app": "web"}),
        p("lonely", "b1", {"app": "db"}, affinity={"podAntiAffinity": anti_web})]})
    spread = p("w4", labels={"app": "web"}, topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web"}}}])
    anti = p("w5", labels={"app": "web"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}]}})
    aff = p("w6", affinity={
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "topology.kubernetes.io/zone"}]}})
    naff = p("w10", affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b", "c"]}]}]}}})
    ports = p("w7")
    ports["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    plain = p("w8", labels={"app": "web"})

    def text(obj):
        rc, out, err = run("--state", state, "--pod", write(tmp, "p.json", obj), "--format", "text")
        check(rc == 0, f"details: rc {rc} {err}")
        return {l.split()[0]: l for l in out.splitlines()[out.splitlines().index(
            "NODE                         RESULT     PREEMPTION   DETAIL") + 1:]}

    def detail(obj):
        """filter.NODE.detail without its text, which is the text output's phrase."""
        rc, out, err = run("--state", state, "--pod", write(tmp, "p.json", obj))
        lines = text(obj)
        got = {}
        for k, v in json.loads(out)["filter"].items():
            d = dict(v.get("detail") or {})
            check(not d or lines[k].endswith("(" + d.pop("text") + ")"), f"detail text of {k}: {v}")
            got[k] = d or None
        return got
    want = {
        "c1": "c1                           rejected   cannot help  TaintToleration: node(s) had untolerated "
              "taint(s) (taint dedicated=gpu:NoSchedule)",
        "a1": "a1                           rejected   may help     PodTopologySpread: node(s) didn't match pod "
              "topology spread constraints (topology.kubernetes.io/zone=a: 2 matching pod(s) + this one, "
              "minimum 0 in c: skew 3 > maxSkew 1)"}
    t = text(spread)
    check(t["c1"] == want["c1"] and t["a1"] == want["a1"], f"spread and taint lines: {t}")
    d = detail(spread)
    check(d["c1"] == {"taint": "dedicated=gpu:NoSchedule"} and
          d["b1"] == {"topologyKey": "topology.kubernetes.io/zone", "domain": "b", "matchingPods": 1,
                      "selfMatch": 1, "minMatchingPods": 0, "skew": 2, "maxSkew": 1}, f"spread JSON: {d}")
    t = text(anti)
    check(t["a2"] == "a2                           rejected   may help     InterPodAffinity: node(s) didn't "
          "match pod anti-affinity rules (anti-affinity term 0: 2 matching pod(s) in "
          "topology.kubernetes.io/zone=a, e.g. default/w1)", f"anti line: {t['a2']}")
    check(detail(anti)["b1"] == {"term": 0, "topologyKey": "topology.kubernetes.io/zone", "domain": "b",
                                 "matchingPods": 1, "pod": "default/w3"}, "anti JSON")
    t = text(plain)
    check(t["b1"] == "b1                           rejected   may help     InterPodAffinity: node(s) didn't "
          "satisfy existing pods anti-affinity rules (default/lonely's anti-affinity term 0 selects this "
          "pod in kubernetes.io/hostname=b1)", f"existing anti line: {t['b1']}")
    t = text(naff)
    check(t["a1"] == "a1                           rejected   cannot help  NodeAffinity: node(s) didn't match "
          "Pod's node affinity/selector (nodeAffinity term 0: topology.kubernetes.io/zone In [b, c], node "
          "has topology.kubernetes.io/zone=a)", f"node affinity term line: {t['a1']}")
    d = detail(naff)
    check(d["a1"] == {"failed": "nodeAffinity term 0", "key": "topology.kubernetes.io/zone",
                      "operator": "In", "values": ["b", "c"], "nodeValue": "a",
                      "terms": [{"term": 0, "expression": "matchExpressions[0]",
                                 "key": "topology.kubernetes.io/zone", "operator": "In",
                                 "values": ["b", "c"], "nodeValue": "a"}]}, f"node affinity JSON: {d}")
    # required terms are ORed: a node fails when every term fails, and the
    # JSON lists each term with the first expression the node fails in it
    naff3 = p("w11", affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b", "c"]}]},
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]},
                                  {"key": "disk", "operator": "Exists"}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b1"]}]}]}}})
    t = text(naff3)
    check(t["a1"] == "a1                           rejected   cannot help  NodeAffinity: node(s) didn't match "
          "Pod's node affinity/selector (nodeAffinity term 0: topology.kubernetes.io/zone In [b, c], node "
          "has topology.kubernetes.io/zone=a; nodeAffinity term 1: disk Exists, node has no disk label; "
          "nodeAffinity term 2: metadata.name In [b1], node is a1)", f"three terms line: {t['a1']}")
    d = detail(naff3)
    check(d["a1"] == {"failed": "nodeAffinity term 0", "key": "topology.kubernetes.io/zone",
                      "operator": "In", "values": ["b", "c"], "nodeValue": "a", "terms": [
                          {"term": 0, "expression": "matchExpressions[0]", "key": "topology.kubernetes.io/zone",
                           "operator": "In", "values": ["b", "c"], "nodeValue": "a"},
                          {"term": 1, "expression": "matchExpressions[1]", "key": "disk",
                           "operator": "Exists", "nodeValue": None},
                          {"term": 2, "expression": "matchFields[0]", "key": "metadata.name",
                           "operator": "In", "values": ["b1"], "nodeValue": "a1"}]},
          f"three terms JSON: {d.get('a1')}")
    check("b1" not in d and d["a2"]["terms"][2]["nodeValue"] == "a2", f"b1 matches term 0 and 2: {d}")
    t = text(aff)
    check(t["a1"] == "a1                           rejected   cannot help  InterPodAffinity: node(s) didn't "
          "match pod affinity rules (affinity term 0: no pod matching the terms in "
          "topology.kubernetes.io/zone=a)", f"affinity line: {t['a1']}")
    check(detail(aff)["a2"] == {"term": 0, "topologyKey": "topology.kubernetes.io/zone", "domain": "a",
                                "matchingPods": 0}, "affinity JSON")
    t = text(ports)
    check(t["a1"].endswith("NodePorts: node(s) didn't have free ports for the requested pod ports "
                           "(host port 8080/TCP in use)") and " may help " in t["a1"], f"ports: {t['a1']}")
    check(detail(ports)["a1"] == {"hostPort": "8080/TCP"}, "ports JSON")
    t = text(p("w9", nodeSelector={"topology.kubernetes.io/zone": "z"}))
    check(t["a1"].endswith("(nodeSelector: topology.kubernetes.io/zone=z, node has "
                           "topology.kubernetes.io/zone=a)"), f"nodeSelector line: {t['a1']}")
    rc, out, _ = run("--state", state, "--pod", write(tmp, "p.json", spread), "--format", "text")
    check("Message:    0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't "
          "match pod topology spread constraints." in out, f"FailedScheduling words unchanged: {out}")


def test_dra_details(tmp):
    """DynamicResources in the operator's words: for each rejected node,
    the first request short of devices and why each device did not fit
    (tainted by which taint, in use, selector false, shared counters or
    capacity exhausted), in text and in filter.NODE.detail; for each
    feasible node, which device, partition or share each claim would get
    (text "devices:" line, JSON devicesByNode). The same through
    kubectl schedext why; a pod asking an extended resource backed by DRA
    shows its special claim as "extended resources"."""
    drv = "gpu.example.com"

    def dev(name, model="a100", **kw):
        return dict({"name": name, "attributes": {"model": {"string": model}}}, **kw)

    def rslice(nn, *devs, name=None, count=1, counters=None):
        spec = {"driver": drv, "nodeName": nn,
                "pool": {"name": nn, "generation": 1, "resourceSliceCount": count}}
        if devs:
            spec["devices"] = list(devs)
        if counters:
            spec["sharedCounters"] = [{"name": "gpu-0", "counters": {"memory": {"value": counters}}}]
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": name or nn}, "spec": spec}

    def part(name, mem):
        return dev(name, consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": mem}}}])

    def held(name, nn, device, **extra):
        r = dict({"request": "gpu", "driver": drv, "pool": nn, "device": device}, **extra)
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "work", "uid": "uid-" + name},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": [r]}, "nodeSelector": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nn]}]}]}}}}

    def nic():
        return dev("nic-0", allowMultipleAllocations=True, capacity={"bandwidth": {"value": "10G"}})
    items = [node(n) for n in ("n-cap", "n-none", "n-ok", "n-parts", "n-sel", "n-share", "n-taint", "n-used")] + [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % drv}}],
                  "extendedResourceName": "example.com/gpu"}},
        rslice("n-taint", dev("gpu-0", taints=[{"key": "broken", "value": "true", "effect": "NoSchedule"}])),
        rslice("n-used", dev("gpu-0")), held("held", "n-used", "gpu-0"),
        rslice("n-sel", dev("gpu-0", model="h100"), dev("gpu-1", model="t4")),
        rslice("n-parts", part("whole", "80Gi"), part("mig-0", "40Gi"), part("mig-1", "40Gi"),
               name="n-parts-devs", count=2),
        rslice("n-parts", name="n-parts-counters", count=2, counters="80Gi"),
        held("held-part", "n-parts", "whole"),
        rslice("n-cap", nic()), held("held-share", "n-cap", "nic-0", shareID="11111111-2222-4333-8444-555555555555",
                                     consumedCapacity={"bandwidth": "8G"}),
        rslice("n-ok", part("mig-0", "40Gi"), name="n-ok-devs", count=2),
        rslice("n-ok", name="n-ok-counters", count=2, counters="80Gi"),
        rslice("n-share", nic()),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "work", "uid": "uid-c"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [
             {"cel": {"expression": 'device.attributes["%s"].model == "a100"' % drv}}]}}]}}}]
    p = pod("p", cpu="100m", resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    p["metadata"]["namespace"] = "work"
    state = write(tmp, "dra.json", {"apiVersion": "v1", "kind": "List", "items": items})
    pp = write(tmp, "dra-pod.json", p)
    col = "                             "
    want = [
        "n-cap                        rejected   cannot help  DynamicResources: cannot allocate all claims "
        "(claim work/c, request gpu needs 1, 0 of 1 device(s) fit: nic-0 capacity exhausted)",
        "n-none                       rejected   cannot help  DynamicResources: cannot allocate all claims",
        col + "devices: work/c: gpu -> mig-0 (partition of gpu-0)",
        "n-parts                      rejected   cannot help  DynamicResources: cannot allocate all claims "
        "(claim work/c, request gpu needs 1, 0 of 3 device(s) fit: whole in use; mig-0 counters exhausted "
        "(counter set gpu-0: memory); mig-1 counters exhausted (counter set gpu-0: memory))",
        "n-sel                        rejected   cannot help  DynamicResources: cannot allocate all claims "
        "(claim work/c, request gpu needs 1, 0 of 2 device(s) fit: gpu-0 selector false (request); "
        "gpu-1 selector false (request))",
        col + "devices: work/c: gpu -> nic-0 (share: bandwidth 10G)",
        "n-taint                      rejected   cannot help  DynamicResources: cannot allocate all claims "
        "(claim work/c, request gpu needs 1, 0 of 1 device(s) fit: gpu-0 tainted broken=true:NoSchedule)",
        "n-used                       rejected   cannot help  DynamicResources: cannot allocate all claims "
        "(claim work/c, request gpu needs 1, 0 of 1 device(s) fit: gpu-0 in use)"]
    rc, out, err = run("--state", state, "--pod", pp, "--format", "text")
    check(rc == 0, f"dra details: rc {rc} {err}")
    lines = out.splitlines()
    for w in want:
        check(w in lines, f"dra text line {w!r} in {out}")
    check(lines[lines.index(col + "devices: work/c: gpu -> mig-0 (partition of gpu-0)") - 1].startswith(
        "n-ok                         feasible "), "devices line under n-ok")
    rc, out, err = run("--state", state, "--pod", pp)
    r = json.loads(out)
    f = r["filter"]
    check(f["n-taint"]["detail"] == {
        "text": "claim work/c, request gpu needs 1, 0 of 1 device(s) fit: gpu-0 tainted broken=true:NoSchedule",
        "claim": "work/c", "request": "gpu", "needs": 1, "fit": 0, "taint": "broken=true:NoSchedule",
        "tainted": ["gpu-0"]}, f"taint JSON {f['n-taint']}")
    check({k: v for k, v in f["n-parts"]["detail"].items() if k != "text"} == {
        "claim": "work/c", "request": "gpu", "needs": 1, "fit": 0, "inUse": ["whole"],
        "countersExhausted": ["mig-0", "mig-1"]}, f"counters JSON {f['n-parts']}")
    check(f["n-cap"]["detail"]["capacityExhausted"] == ["nic-0"], f"capacity JSON {f['n-cap']}")
    check(f["n-sel"]["detail"]["selectorFalse"] == ["gpu-0", "gpu-1"], f"selector JSON {f['n-sel']}")
    check(f["n-used"]["detail"]["inUse"] == ["gpu-0"], f"in use JSON {f['n-used']}")
    check("detail" not in f["n-none"], f"no device, no detail {f['n-none']}")
    by = r.get("devicesByNode") or {}
    check(sorted(by) == ["n-ok", "n-share"] and by["n-ok"]["text"] == "work/c: gpu -> mig-0 (partition of gpu-0)"
          and by["n-ok"]["claims"][0]["allocation"]["devices"]["results"] == [
              {"request": "gpu", "driver": drv, "pool": "n-ok", "device": "mig-0"}], f"devicesByNode {by}")
    # kubectl schedext why: the same words for the pending pod in the state
    full = write(tmp, "dra-full.json", {"apiVersion": "v1", "kind": "List", "items": items + [p]})
    k = subprocess.run([BIN.replace("schedext", "kubectl-schedext") if BIN.endswith("/schedext") else BIN,
                        "why", "p", "-n", "work", "--state", full], capture_output=True, text=True, timeout=60)
    check(k.returncode == 0 and all(w in k.stdout.splitlines() for w in want), f"kubectl why: {k.stdout} {k.stderr}")
    # extended resources backed by DRA: the special claim in the same words
    x = pod("x", cpu="100m")
    x["metadata"]["namespace"] = "work"
    x["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    rc, out, err = run("--state", state, "--pod", write(tmp, "dra-x.json", x), "--format", "text")
    lines = out.splitlines()
    check(col + "devices: extended resources: container-0-request-1 -> mig-0 (partition of gpu-0)" in lines and
          "n-taint                      rejected   cannot help  DynamicResources: cannot allocate all claims "
          "(claim extended resources, request container-0-request-1 needs 1, 0 of 1 device(s) fit: gpu-0 "
          "tainted broken=true:NoSchedule)" in lines, f"extended resources: {out} {err}")


def test_pre_filter_details(tmp):
    """A PreFilter rejection shows its numbers too (issue 25): NodeAffinity's
    conflicting matchFields terms, VolumeBinding's unbound immediate claim;
    the FailedScheduling message keeps kube-scheduler's words."""
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
          "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "Immediate"}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "default"},
           "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}}
    state = write(tmp, "pf.json", {"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), node("n2"), sc, pvc]})
    pinned = write(tmp, "pinned.json", pod("pinned", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]},
            {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}))
    rc, out, err = run("--state", state, "--pod", pinned, "--format", "text")
    check(rc == 0 and "PreFilter:  NodeAffinity rejected the pod: pod affinity terms conflict "
          "(nodeAffinity term 0: matchFields metadata.name In [n1] and metadata.name In [n2] "
          "name no node in common)" in out.splitlines(), f"NodeAffinity PreFilter text: {out} {err}")
    check("Message:    0/2 nodes are available: pod affinity terms conflict. not found"
          in out.splitlines(), f"FailedScheduling words unchanged: {out}")
    rc, out, err = run("--state", state, "--pod", pinned)
    r = json.loads(out)
    check(r["preFilter"] == {
        "plugin": "NodeAffinity", "code": "UnschedulableAndUnresolvable",
        "reasons": ["pod affinity terms conflict"],
        "detail": {"text": "nodeAffinity term 0: matchFields metadata.name In [n1] and "
                           "metadata.name In [n2] name no node in common",
                   "failed": "nodeAffinity term 0", "key": "metadata.name", "operator": "In",
                   "values": ["n1"], "terms": [{"term": 0, "names": [["n1"], ["n2"]]}]}},
          f"NodeAffinity PreFilter JSON: {r['preFilter']}")
    check(r["filter"]["n1"] == r["preFilter"] and r["filter"]["n2"] == r["preFilter"],
          f"every node carries the PreFilter status and its detail: {r['filter']}")
    two = write(tmp, "two.json", pod("two", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                             {"key": "metadata.name", "operator": "In", "values": ["n2"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n3"]},
                             {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}))
    rc, out, err = run("--state", state, "--pod", two)
    r = json.loads(out)
    check(r["preFilter"]["detail"]["terms"] == [{"term": 0, "names": [["n1"], ["n2"]]},
                                                {"term": 1, "names": [["n1", "n3"], ["n2"]]}] and
          r["preFilter"]["detail"]["text"] == "nodeAffinity term 0: matchFields metadata.name In [n1] and "
          "metadata.name In [n2] name no node in common; nodeAffinity term 1: matchFields metadata.name "
          "In [n1, n3] and metadata.name In [n2] name no node in common",
          f"NodeAffinity PreFilter: every term: {r['preFilter']}")
    vol = write(tmp, "vol.json", pod("vol", volumes=[{"name": "v", "persistentVolumeClaim":
                                                     {"claimName": "data"}}]))
    rc, out, err = run("--state", state, "--pod", vol, "--format", "text")
    check(rc == 0 and "PreFilter:  VolumeBinding rejected the pod: pod has unbound immediate "
          "PersistentVolumeClaims (claim data: storageClass fast, volumeBindingMode Immediate)"
          in out.splitlines(), f"VolumeBinding PreFilter text: {out} {err}")
    rc, out, err = run("--state", state, "--pod", vol)
    r = json.loads(out)
    check(r["preFilter"] == {
        "plugin": "VolumeBinding", "code": "UnschedulableAndUnresolvable",
        "reasons": ["pod has unbound immediate PersistentVolumeClaims"],
        "detail": {"text": "claim data: storageClass fast, volumeBindingMode Immediate",
                   "claim": "data", "storageClass": "fast", "volumeBindingMode": "Immediate"}},
          f"VolumeBinding PreFilter JSON: {r['preFilter']}")
    check(r["message"] == "0/2 nodes are available: pod has unbound immediate "
          "PersistentVolumeClaims. not found", f"FailedScheduling words unchanged: {r['message']}")


def test_volume_restrictions_details(tmp):
    """VolumeRestrictions' Filter reasons name neither the claim nor the
    disk: explain names the ReadWriteOncePod claim and the pod using it
    (on which node), and the in-tree disk and the pod on the node that
    mounts it; the FailedScheduling message keeps kube-scheduler's words."""
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "solo", "namespace": "default",
                        "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"accessModes": ["ReadWriteOncePod"], "volumeName": "pv1", "storageClassName": ""},
           "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
          "spec": {"accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"},
                   "claimRef": {"namespace": "default", "name": "solo"},
                   "csi": {"driver": "d.example.com", "volumeHandle": "h"}},
          "status": {"phase": "Bound"}}
    holder = pod("holder", nodeName="n2", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "solo"}}])
    disk = pod("diskpod", nodeName="n1", volumes=[{"name": "x", "gcePersistentDisk": {"pdName": "disk-1"}}])
    state = write(tmp, "vr.json", {"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), node("n2"), pvc, pv, holder, disk]})
    rwop = write(tmp, "rwop.json", pod("second", volumes=[{"name": "d", "persistentVolumeClaim":
                                                           {"claimName": "solo"}}]))
    rc, out, err = run("--state", state, "--pod", rwop)
    r = json.loads(out)
    reason = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
              "already in-use by another pod")
    for n in ("n1", "n2"):
        check(r["filter"].get(n) == {
            "plugin": "VolumeRestrictions", "code": "Unschedulable", "reasons": [reason],
            "detail": {"text": "ReadWriteOncePod claim solo in use by pod default/holder on node n2",
                       "claim": "solo", "usedBy": "default/holder", "node": "n2"}},
            f"RWOP {n}: {r['filter'].get(n)} {err}")
    check(r["message"].startswith("0/2 nodes are available: 2 " + reason + ". "),
          f"FailedScheduling words unchanged: {r['message']}")
    rc, out, err = run("--state", state, "--pod", rwop, "--format", "text")
    check("n1                           rejected   may help     VolumeRestrictions: " + reason +
          " (ReadWriteOncePod claim solo in use by pod default/holder on node n2)" in out.splitlines(),
          f"RWOP text: {out} {err}")
    gce = write(tmp, "gce.json", pod("gce", volumes=[{"name": "y", "gcePersistentDisk": {"pdName": "disk-1"}}]))
    rc, out, err = run("--state", state, "--pod", gce)
    r = json.loads(out)
    check(r["selectedNode"] == "n2" and r["filter"].get("n1") == {
        "plugin": "VolumeRestrictions", "code": "Unschedulable", "reasons": ["node(s) had no available disk"],
        "detail": {"text": "volume y: gcePersistentDisk disk-1 mounted by pod default/diskpod",
                   "volume": "y", "disk": "disk-1", "mountedBy": "default/diskpod"}},
        f"disk conflict: {r['filter']} {err}")


def main():
    if not os.path.exists(BIN):
        print(f"FAIL: {BIN} not built", file=sys.stderr)
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        test_demo_json()
        test_no_fit_message(tmp)
        test_missing_claim(tmp)
        test_gated_pod(tmp)
        test_single_plugin_profile(tmp)
        test_bad_input(tmp)
        test_demo_volume_pod(tmp)
        test_fit_numbers(tmp)
        test_rejection_details(tmp)
        test_dra_details(tmp)
        test_pre_filter_details(tmp)
        test_volume_restrictions_details(tmp)
    print(f"test_explain: {checks - failures} checks passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
