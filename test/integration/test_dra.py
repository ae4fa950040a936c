#!/usr/bin/env python3
"""Dynamic Resource Allocation end to end: `schedext serve --standalone`
against the fake API server with resource.k8s.io/v1 objects. The tests play
the parts of the DRA drivers (ResourceSlices) and of kube-controller-manager's
resourceclaim controller (claims from templates, pod status, deallocation)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

NS = "work"
DRIVER = "gpu.example.com"


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def node(name):
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def device(name, **attrs):
    a = {}
    for k, v in attrs.items():
        a[k] = {"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int) else {"string": v}
    return {"name": name, "attributes": a, "capacity": {"memory": {"value": "40Gi"}}}


def rslice(node_name, *devices, driver=DRIVER):
    return {"kind": "ResourceSlice", "metadata": {"name": "%s-%s" % (node_name, driver)},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": list(devices)}}


def dclass(name, driver=DRIVER):
    return {"kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % driver}}]}}


def request(name, cls, expr=None, count=1):
    ex = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if expr:
        ex["selectors"] = [{"cel": {"expression": expr}}]
    return {"name": name, "exactly": ex}


def claim(name, *requests, constraints=None):
    spec = {"devices": {"requests": list(requests)}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    return {"kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def pod(name, *claims):
    """claims: ("name", {"resourceClaimName": ...} or {"resourceClaimTemplateName": ...})."""
    return {"kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m"}}}],
                     "resourceClaims": [dict({"name": n}, **src) for n, src in claims]}}


def state(api, kind):
    return api.control("state")["objects"][kind]


def get(api, kind, name):
    for o in state(api, kind):
        if o["metadata"]["name"] == name:
            return o
    return None


def bound(api, name):
    p = get(api, "pods", name)
    return p and p["spec"].get("nodeName")


def sched_condition(api, name):
    p = get(api, "pods", name) or {}
    for c in p.get("status", {}).get("conditions") or []:
        if c["type"] == "PodScheduled":
            return c
    return None


class Cluster:
    def __init__(self, tmp, tag, objects):
        self.api = FakeApi(tmp)
        kc = os.path.join(tmp, "kubeconfig-" + tag)
        write_kubeconfig(kc, "http://127.0.0.1:%d" % self.api.port)
        self.api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": NS}}}])
        self.api.apply([{"op": "create", "object": o} for o in objects])
        self.sx = Serve(tmp, kc, "sx-" + tag, "--standalone", "-v=2")
        self.tag = tag

    def create(self, *objs):
        return self.api.apply([{"op": "create", "object": o} for o in objs])["results"]

    def stop(self):
        rc = self.sx.stop()
        self.api.stop()
        return rc


def results(c):
    alloc = (c.get("status") or {}).get("allocation") or {}
    return [(r["request"], r["pool"], r["device"]) for r in alloc.get("devices", {}).get("results", [])]


def reserved(c):
    return [r["name"] for r in (c.get("status") or {}).get("reservedFor") or []]


def test_template_claims(tmp):
    """Per-node GPU slices; pods claim an a100 through a template. A pod
    waits (PreEnqueue) until its claim exists and its status names it."""
    objs = [node("node-a1"), node("node-a2"), node("node-a3"), dclass("gpu"),
            rslice("node-a1", device("gpu-0", model="t4"), device("gpu-1", model="t4")),
            rslice("node-a2", device("gpu-0", model="t4")),
            rslice("node-a3", device("gpu-0", model="a100"), device("gpu-1", model="a100")),
            {"kind": "ResourceClaimTemplate", "metadata": {"name": "a100", "namespace": NS},
             "spec": {"spec": {"devices": {"requests": [request(
                 "gpu", "gpu", 'device.attributes["%s"].model == "a100"' % DRIVER)]}}}}]
    cl = Cluster(tmp, "tmpl", objs)
    try:
        pods = [pod("t-%d" % i, ("gpu", {"resourceClaimTemplateName": "a100"})) for i in range(3)]
        created = cl.create(*pods)
        time.sleep(1.5)
        check(not any(bound(cl.api, "t-%d" % i) for i in range(3)), "template: gated without claims")
        for i, p in enumerate(created):
            c = claim("t-%d-gpu" % i, request("gpu", "gpu",
                                              'device.attributes["%s"].model == "a100"' % DRIVER))
            c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": p["metadata"]["name"],
                                                 "uid": p["metadata"]["uid"], "controller": True}]
            cl.create(c)
            p2 = dict(p, status={"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "t-%d-gpu" % i}]})
            cl.api.apply([{"op": "update", "object": p2}])
        check(wait_for(lambda: bound(cl.api, "t-0") and bound(cl.api, "t-1"), 20),
              "template: two pods bound")
        for i in range(2):
            c = get(cl.api, "resourceclaims", "t-%d-gpu" % i)
            check(bound(cl.api, "t-%d" % i) == "node-a3", "template: t-%d on the a100 node" % i)
            check(reserved(c) == ["t-%d" % i], "template: claim %d reserved for its pod (%r)" % (i, reserved(c)))
            check("resource.kubernetes.io/delete-protection" in (c["metadata"].get("finalizers") or []),
                  "template: claim %d has the finalizer" % i)
            ns = c["status"]["allocation"].get("nodeSelector")
            check(ns == {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                 "values": ["node-a3"]}]}]},
                  "template: allocation node selector %r" % ns)
        devs = sorted(results(get(cl.api, "resourceclaims", "t-%d-gpu" % i))[0][2] for i in range(2))
        check(devs == ["gpu-0", "gpu-1"], "template: distinct devices %r" % devs)
        cond = lambda: (sched_condition(cl.api, "t-2") or {}).get("message", "")
        check(wait_for(lambda: "cannot allocate all claims" in cond(), 15),
              "template: third pod unschedulable: %r" % cond())
        check(not bound(cl.api, "t-2"), "template: third pod waits")
    finally:
        check(cl.stop() == 0, "template: clean exit")


def test_competing_pods(tmp):
    """One device, two pods with their own claims: one runs, the other waits
    and runs once the first is gone and its claim deallocated."""
    cl = Cluster(tmp, "compete", [node("node-b1"), dclass("gpu"), rslice("node-b1", device("only"))])
    try:
        cl.create(claim("c1", request("gpu", "gpu")), claim("c2", request("gpu", "gpu")))
        cl.create(pod("p1", ("gpu", {"resourceClaimName": "c1"})))
        check(wait_for(lambda: bound(cl.api, "p1"), 15), "compete: p1 bound")
        cl.create(pod("p2", ("gpu", {"resourceClaimName": "c2"})))
        cond = lambda: (sched_condition(cl.api, "p2") or {}).get("message", "")
        check(wait_for(lambda: "cannot allocate all claims" in cond(), 15),
              "compete: p2 unschedulable (%r)" % cond())
        # kubelet and the resourceclaim controller: p1 goes, c1 is deallocated.
        cl.api.apply([{"op": "delete", "object": get(cl.api, "pods", "p1")}])
        c1 = get(cl.api, "resourceclaims", "c1")
        c1["status"] = {}
        cl.api.apply([{"op": "update", "object": c1}])
        check(wait_for(lambda: bound(cl.api, "p2"), 20), "compete: p2 bound after c1 freed")
        check(results(get(cl.api, "resourceclaims", "c2")) == [("gpu", "node-b1", "only")],
              "compete: c2 got the device")
    finally:
        check(cl.stop() == 0, "compete: clean exit")


def test_shared_claim(tmp):
    cl = Cluster(tmp, "shared", [node("node-s1"), node("node-s2"), dclass("gpu"),
                                  rslice("node-s2", device("g0"))])
    try:
        cl.create(claim("shared", request("gpu", "gpu")))
        cl.create(pod("s1", ("gpu", {"resourceClaimName": "shared"})),
                  pod("s2", ("gpu", {"resourceClaimName": "shared"})))
        check(wait_for(lambda: bound(cl.api, "s1") and bound(cl.api, "s2"), 20), "shared: both bound")
        check(bound(cl.api, "s1") == bound(cl.api, "s2") == "node-s2", "shared: both on node-s2")
        c = get(cl.api, "resourceclaims", "shared")
        check(sorted(reserved(c)) == ["s1", "s2"], "shared: reserved for both (%r)" % reserved(c))
        check(results(c) == [("gpu", "node-s2", "g0")], "shared: one allocation (%r)" % results(c))
    finally:
        check(cl.stop() == 0, "shared: clean exit")


def test_match_attribute(tmp):
    """r1 (a gpu) and r2 (a nic) must share numa: the first gpu (numa 0)
    has no nic beside it, so the allocator backtracks to gpu-1."""
    cl = Cluster(tmp, "numa", [node("node-c1"), dclass("dev"),
                               rslice("node-c1", device("gpu-0", kind="gpu", numa=0),
                                      device("gpu-1", kind="gpu", numa=1),
                                      device("nic-0", kind="nic", numa=1))])
    try:
        sel = 'device.attributes["%s"].kind == "%s"'
        cl.create(claim("pair", request("r1", "dev", sel % (DRIVER, "gpu")),
                        request("r2", "dev", sel % (DRIVER, "nic")),
                        constraints=[{"requests": ["r1", "r2"], "matchAttribute": DRIVER + "/numa"}]))
        cl.create(pod("n1", ("pair", {"resourceClaimName": "pair"})))
        check(wait_for(lambda: bound(cl.api, "n1"), 15), "numa: bound")
        got = results(get(cl.api, "resourceclaims", "pair"))
        check(got == [("r1", "node-c1", "gpu-1"), ("r2", "node-c1", "nic-0")], "numa: %r" % got)
    finally:
        check(cl.stop() == 0, "numa: clean exit")


def test_prebind_conflict(tmp):
    """Conflicts on the claim status write: two are retried on a fresh copy
    within PreBind; then six make one binding cycle fail cleanly (pod not
    bound, no allocation written) and a later attempt succeeds."""
    cl = Cluster(tmp, "conflict", [node("node-d1"), dclass("gpu"), rslice("node-d1", device("g0"), device("g1"))])
    try:
        cl.api.control("faults", {"claim_status_409": 2})
        cl.create(claim("k1", request("gpu", "gpu")))
        cl.create(pod("k1", ("gpu", {"resourceClaimName": "k1"})))
        check(wait_for(lambda: bound(cl.api, "k1"), 15), "conflict: bound despite two conflicts")
        pats = [p for p in cl.api.control("records")["patches"] if p.get("name") == "k1"
                and p.get("resource") == "resourceclaims"]
        check(len(pats) == 4, "conflict: finalizer and three status writes (%d)" % len(pats))
        check(reserved(get(cl.api, "resourceclaims", "k1")) == ["k1"], "conflict: reserved once")

        cl.api.control("faults", {"claim_status_409": 6})
        cl.create(claim("k2", request("gpu", "gpu")))
        cl.create(pod("k2", ("gpu", {"resourceClaimName": "k2"})))
        check(wait_for(lambda: cl.api.control("faults")["claim_status_409"] <= 1, 15),
              "conflict: first binding cycle used five attempts")
        time.sleep(0.3)
        c = get(cl.api, "resourceclaims", "k2")
        check(not bound(cl.api, "k2") or results(c), "conflict: no binding without allocation")
        check(wait_for(lambda: bound(cl.api, "k2"), 30), "conflict: bound on a later attempt")
        c = get(cl.api, "resourceclaims", "k2")
        check(results(c) == [("gpu", "node-d1", "g1")] and reserved(c) == ["k2"],
              "conflict: allocated the free device once (%r %r)" % (results(c), reserved(c)))
        check("add allocation and reservation to claim work/k2" in cl.sx.logtext(),
              "conflict: the failed binding cycle is logged")
    finally:
        check(cl.stop() == 0, "conflict: clean exit")


def test_explain(tmp):
    """explain: DynamicResources' verdict per node and, for the selected
    node, the devices each claim would get; a missing claim is reported."""
    import json
    import subprocess
    from sxtest import BIN
    state = {"apiVersion": "v1", "kind": "List", "items": [
        node("worker-a1"), node("worker-a3"), dclass("gpu"),
        rslice("worker-a3", device("gpu-0", model="a100")),
        claim("c", request("gpu", "gpu", 'device.attributes["%s"].model == "a100"' % DRIVER))]}
    sp, pp, mp = (os.path.join(tmp, n) for n in ("state.json", "pod.json", "missing.json"))
    with open(sp, "w") as f:
        json.dump(state, f)
    with open(pp, "w") as f:
        json.dump(pod("p", ("gpu", {"resourceClaimName": "c"})), f)
    with open(mp, "w") as f:
        json.dump(pod("q", ("gpu", {"resourceClaimName": "nope"})), f)
    out = json.loads(subprocess.run([BIN, "explain", "--state", sp, "--pod", pp], check=True,
                                    capture_output=True, text=True).stdout)
    check(out["selectedNode"] == "worker-a3", "explain: selected %r" % out["selectedNode"])
    check(out["filter"].get("worker-a1") == {"plugin": "DynamicResources", "code": "UnschedulableAndUnresolvable",
                                             "reasons": ["cannot allocate all claims"]},
          "explain: verdict on worker-a1 %r" % out["filter"].get("worker-a1"))
    da = out.get("deviceAllocations") or [{}]
    check(da[0].get("claim") == "work/c" and
          da[0]["allocation"]["devices"]["results"] == [{"request": "gpu", "driver": DRIVER, "pool": "worker-a3",
                                                         "device": "gpu-0"}],
          "explain: devices %r" % da)
    out = json.loads(subprocess.run([BIN, "explain", "--state", sp, "--pod", mp], check=True,
                                    capture_output=True, text=True).stdout)
    check(out["selectedNode"] is None and out["preFilter"]["reasons"] ==
          ['resourceclaim.resource.k8s.io "nope" not found'], "explain: missing claim %r" % out["preFilter"])
    check(out["preFilter"].get("detail") == {"text": "claim work/nope is not in the cluster",
                                             "claim": "nope", "namespace": "work"},
          "explain: missing claim detail %r" % out["preFilter"])


def main():
    return run_tests("test_dra.py", (test_explain, test_template_claims, test_competing_pods, test_shared_claim,
                                     test_match_attribute, test_prebind_conflict))


if __name__ == "__main__":
    sys.exit(main())
