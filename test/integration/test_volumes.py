#!/usr/bin/env python3
"""Storage end to end: the standalone scheduler against
test/fakeapi/fakeapi.py with its PV controller and external provisioner.

(a) a StatefulSet-like set of 30 pods, one volumeClaimTemplate-style claim
    each, on a WaitForFirstConsumer zonal class over 3 zones: every pod is
    bound to the node its claim was annotated with
    (volume.kubernetes.io/selected-node), in the zone of the PV the
    provisioner made for it;
(b) pods whose claims are bound to zonal PVs land only in their PV's zone;
    pods with unbound claims of a no-provisioner class get the smallest
    available local PV that fits (the scheduler writes its claimRef, the PV
    controller finishes);
(c) with the PV controller off, binding times out after
    bindTimeoutSeconds (2 s here) with upstream's error, the assumed
    bindings are reverted and the pod retried; it is bound once the
    controller is back on;
(d) a claim deleted while PreBind waits fails the binding cycle with
    upstream's error;
(e) binding cycles waiting for volumes (more than the binder pool's 8
    threads) do not hold back the binding of other pods;
(f) a conflicting write (the PV changed since the cycle's snapshot: 409)
    fails the binding cycle with the API server's error, the assumed
    bindings are reverted and the retried pod is bound.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

ZONES = ["zone-a", "zone-b", "zone-c"]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
PROVISIONER = "zonal.csi.example.com"
TIMEOUT_ERR = 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'


def node(name, zone):
    return {"kind": "Node", "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
            "spec": {}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def storage_class(name, provisioner, mode="WaitForFirstConsumer"):
    return {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner,
            "volumeBindingMode": mode, "reclaimPolicy": "Delete"}


def claim(name, cls, size="1Gi", **meta):
    md = {"name": name, "namespace": "work"}
    md.update(meta)
    return {"kind": "PersistentVolumeClaim", "metadata": md,
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}}}


def pv(name, cls, size, term, claim_ref=None, phase="Available"):
    spec = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls, "persistentVolumeReclaimPolicy": "Retain",
            "local": {"path": "/mnt/" + name},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}}
    if claim_ref:
        spec["claimRef"] = claim_ref
    return {"kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": phase}}


def pod(name, claims, labels=None):
    vols = [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}}
            for i, c in enumerate(claims)]
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work", "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                     "volumes": vols},
            "status": {"phase": "Pending"}}


def wait_for(fn, timeout, step=0.25):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def objects(api, res):
    return {o["metadata"]["name"]: o for o in api.control("state")["objects"][res]}


def pods_of(api, prefix):
    return {n: p for n, p in objects(api, "pods").items() if n.startswith(prefix)}


def scheduled_cond(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodScheduled":
            return c
    return None


def setup(tmp, name, *api_args, timeout=None):
    api = FakeApi(tmp, *api_args)
    kc = os.path.join(tmp, "kubeconfig-" + name)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    extra = []
    if timeout is not None:
        cfg = os.path.join(tmp, "config-%s.json" % name)
        with open(cfg, "w") as f:
            json.dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                       "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler",
                                     "pluginConfig": [{"name": "VolumeBinding",
                                                       "args": {"bindTimeoutSeconds": timeout}}]}]},
                      f)
        extra = ["--config", cfg]
    ops = [{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}]
    ops += [{"op": "create", "object": node("%s-%d" % (z, i), z)} for z in ZONES for i in range(3)]
    ops += [{"op": "create", "object": storage_class("zonal", PROVISIONER)},
            {"op": "create", "object": storage_class("local", "kubernetes.io/no-provisioner")}]
    api.apply(ops)
    return api, kc, extra


def sched(tmp, kc, name, extra):
    return Serve(tmp, kc, name, "--standalone", "-v=2", *extra)


def test_statefulset_zonal(tmp):
    api, kc, extra = setup(tmp, "sts")
    sx = None
    try:
        n = 30
        api.apply([{"op": "create", "object": claim("data-web-%d" % i, "zonal")} for i in range(n)])
        api.apply([{"op": "create", "object": pod("web-%d" % i, ["data-web-%d" % i], {"app": "web"})}
                   for i in range(n)])
        sx = sched(tmp, kc, "sx-sts", extra)
        t0 = time.time()
        ok = wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_of(api, "web-").values()),
                      90, 0.5)
        print("bound %d stateful pods in %.1fs" % (n, time.time() - t0), flush=True)
        check(ok, "all %d pods with WaitForFirstConsumer claims bound" % n)
        nodes, claims, pvs = objects(api, "nodes"), objects(api, "persistentvolumeclaims"), \
            objects(api, "persistentvolumes")
        bad, zones = [], set()
        for name, p in pods_of(api, "web-").items():
            where = p["spec"].get("nodeName")
            c = claims["data-" + name]
            sel = (c["metadata"].get("annotations") or {}).get("volume.kubernetes.io/selected-node")
            vol = pvs.get(c["spec"].get("volumeName") or "")
            if not where or sel != where or not vol:
                bad.append("%s on %s, claim selected %s, volume %s" % (name, where, sel, vol and
                                                                      vol["metadata"]["name"]))
                continue
            pv_zone = vol["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
                "matchExpressions"][0]["values"][0]
            node_zone = nodes[where]["metadata"]["labels"][ZONE]
            zones.add(node_zone)
            if pv_zone != node_zone or c["status"].get("phase") != "Bound":
                bad.append("%s in %s, its volume in %s (claim %s)" % (
                    name, node_zone, pv_zone, c["status"].get("phase")))
        check(not bad, "every pod where its volume was provisioned: %s" % bad[:5])
        check(len(zones) == 3, "pods in all three zones: %s" % sorted(zones))
        patches = [r for r in api.control("records")["patches"]
                   if r.get("resource") == "persistentvolumeclaims"]
        check(len(patches) == n and all(
            r["patch"]["metadata"].get("resourceVersion") for r in patches),
            "one selected-node PATCH per claim, with a resourceVersion precondition (%d)" %
            len(patches))
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def test_prebound_and_static(tmp):
    api, kc, extra = setup(tmp, "static")
    sx = None
    try:
        ops = []
        for i, z in enumerate(ZONES * 2):
            ref = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "work",
                   "name": "bound-%d" % i}
            ops.append({"op": "create", "object": pv("zonal-pv-%d" % i, "zonal", "5Gi",
                                                     {"key": ZONE, "operator": "In", "values": [z]},
                                                     ref, "Bound")})
            c = claim("bound-%d" % i, "zonal", annotations={"pv.kubernetes.io/bind-completed": "yes"})
            c["spec"]["volumeName"] = "zonal-pv-%d" % i
            c["status"] = {"phase": "Bound"}
            ops.append({"op": "create", "object": c})
            ops.append({"op": "create", "object": pod("pre-%d" % i, ["bound-%d" % i])})
        # Local PVs on zone-b-1: the 5Gi claim must get the smallest that fits (8Gi).
        host = {"key": HOST, "operator": "In", "values": ["zone-b-1"]}
        ops += [{"op": "create", "object": pv("local-2g", "local", "2Gi", host)},
                {"op": "create", "object": pv("local-8g", "local", "8Gi", host)},
                {"op": "create", "object": pv("local-50g", "local", "50Gi", host)},
                {"op": "create", "object": claim("scratch", "local", "5Gi")},
                {"op": "create", "object": pod("static-0", ["scratch"])}]
        api.apply(ops)
        sx = sched(tmp, kc, "sx-static", extra)
        ok = wait_for(lambda: all(p["spec"].get("nodeName") for p in
                                  list(pods_of(api, "pre-").values()) +
                                  list(pods_of(api, "static-").values())), 60, 0.5)
        check(ok, "pods with bound and static claims bound")
        nodes = objects(api, "nodes")
        for name, p in pods_of(api, "pre-").items():
            i = int(name.split("-")[1])
            where = p["spec"].get("nodeName")
            check(where and nodes[where]["metadata"]["labels"][ZONE] == (ZONES * 2)[i],
                  "%s on %s, in its PV's zone %s" % (name, where, (ZONES * 2)[i]))
        st = pods_of(api, "static-")["static-0"]
        check(st["spec"].get("nodeName") == "zone-b-1", "static claim's pod on the PV's node: %s"
              % st["spec"].get("nodeName"))
        c = objects(api, "persistentvolumeclaims")["scratch"]
        check(c["spec"].get("volumeName") == "local-8g",
              "smallest fitting PV chosen: %s" % c["spec"].get("volumeName"))
        pvs = objects(api, "persistentvolumes")
        ann = pvs["local-8g"]["metadata"].get("annotations") or {}
        check(ann.get("pv.kubernetes.io/bound-by-controller") == "yes" and
              pvs["local-8g"]["spec"]["claimRef"]["uid"] == c["metadata"]["uid"],
              "claimRef with the claim's uid and bound-by-controller: %r" %
              pvs["local-8g"]["spec"].get("claimRef"))
        check(not pvs["local-2g"]["spec"].get("claimRef") and
              not pvs["local-50g"]["spec"].get("claimRef"), "the other PVs untouched")
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def test_bind_timeout(tmp):
    api, kc, extra = setup(tmp, "timeout", "--no-pv-controller", timeout=2)
    sx = None
    try:
        api.apply([{"op": "create", "object": claim("slow", "zonal")},
                   {"op": "create", "object": pod("waiter", ["slow"])}])
        sx = sched(tmp, kc, "sx-timeout", extra)

        def timed_out():
            c = scheduled_cond(pods_of(api, "waiter")["waiter"])
            return c is not None and c["message"] == TIMEOUT_ERR
        t0 = time.time()
        check(wait_for(timed_out, 30), "PodScheduled=False with %r" % TIMEOUT_ERR)
        took = time.time() - t0
        c = scheduled_cond(pods_of(api, "waiter")["waiter"])
        check(c and c["status"] == "False" and c["reason"] == "SchedulerError",
              "condition False/SchedulerError: %r" % c)
        check(took >= 1.5, "binding waited bindTimeoutSeconds (%.1fs)" % took)
        check(not pods_of(api, "waiter")["waiter"]["spec"].get("nodeName"), "pod not bound")
        check(wait_for(lambda: "assumed volume bindings reverted" in sx.logtext(), 10),
              "assumed bindings reverted")
        check(wait_for(lambda: [e for e in api.control("records")["events"]
                                if e.get("reason") == "FailedScheduling" and
                                e.get("note") == TIMEOUT_ERR], 10),
              "FailedScheduling event with the timeout error")
        # Retried: a second attempt times out again while the controller is off.
        check(wait_for(lambda: sx.logtext().count("assumed volume bindings reverted") >= 2, 30),
              "pod retried after the timeout")
        claim_node = (objects(api, "persistentvolumeclaims")["slow"]["metadata"].get(
            "annotations") or {}).get("volume.kubernetes.io/selected-node")
        check(claim_node, "the claim carries the selected node")
        api.control("controllers", {"pvController": True})
        check(wait_for(lambda: pods_of(api, "waiter")["waiter"]["spec"].get("nodeName"), 60),
              "bound once the PV controller is back")
        # Once bound, the claim's PV (provisioned in the selected node's
        # zone) decides: any node of that zone.
        where = pods_of(api, "waiter")["waiter"]["spec"].get("nodeName") or ""
        nodes = objects(api, "nodes")
        check(claim_node and where and nodes[where]["metadata"]["labels"][ZONE] ==
              nodes[claim_node]["metadata"]["labels"][ZONE],
              "bound in the zone of the provisioned volume (%s, selected %s)" % (where, claim_node))
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def test_claim_deleted_while_waiting(tmp):
    api, kc, extra = setup(tmp, "deleted", "--no-pv-controller", "--no-provisioner", timeout=30)
    sx = None
    try:
        api.apply([{"op": "create", "object": claim("doomed", "zonal")},
                   {"op": "create", "object": pod("orphan", ["doomed"])}])
        sx = sched(tmp, kc, "sx-deleted", extra)

        def annotated():
            c = objects(api, "persistentvolumeclaims").get("doomed")
            return c and "volume.kubernetes.io/selected-node" in (c["metadata"].get("annotations")
                                                                  or {})
        check(wait_for(annotated, 20), "claim annotated with the selected node")
        api.apply([{"op": "delete", "object": claim("doomed", "zonal")}])
        want = ('running PreBind plugin "VolumeBinding": binding volumes: failed to check '
                'provisioning pvc: could not find v1.PersistentVolumeClaim "work/doomed"')
        check(wait_for(lambda: (scheduled_cond(pods_of(api, "orphan")["orphan"]) or {}).get(
            "message") in (want, 'persistentvolumeclaim "doomed" not found',
                           # PostFilter stops at DynamicResources' "not found" (its
                           # PreFilter never ran), as kube-scheduler's does
                           '0/9 nodes are available: persistentvolumeclaim "doomed" not found. '
                           'not found'), 20),
              "binding cycle failed on the deleted claim")
        def failed_events():
            return [e["note"] for e in api.control("records")["events"]
                    if e.get("reason") == "FailedScheduling"]
        check(wait_for(lambda: want in failed_events(), 10),
              "FailedScheduling with %r (got %r)" % (want, failed_events()[:3]))
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def test_waiting_bindings_do_not_block(tmp):
    api, kc, extra = setup(tmp, "busy", "--no-pv-controller", timeout=60)
    sx = None
    try:
        api.apply([{"op": "create", "object": claim("wait-%d" % i, "zonal")} for i in range(12)] +
                  [{"op": "create", "object": pod("stuck-%d" % i, ["wait-%d" % i])}
                   for i in range(12)])
        sx = sched(tmp, kc, "sx-busy", extra)
        check(wait_for(lambda: sx.logtext().count("binding volumes of pod") >= 12, 20),
              "12 binding cycles waiting for their volumes")
        api.apply([{"op": "create", "object": pod("free", [])}])
        t0 = time.time()
        check(wait_for(lambda: pods_of(api, "free")["free"]["spec"].get("nodeName"), 10),
              "a pod without volumes bound while 12 bindings wait (%.1fs)" % (time.time() - t0))
        check(not any(p["spec"].get("nodeName") for p in pods_of(api, "stuck-").values()),
              "the waiting pods are not bound")
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def test_conflicting_write(tmp):
    api, kc, extra = setup(tmp, "conflict")
    sx = None
    try:
        host = {"key": HOST, "operator": "In", "values": ["zone-c-2"]}
        api.apply([{"op": "create", "object": pv("disk", "local", "10Gi", host)},
                   {"op": "create", "object": claim("mine", "local", "5Gi")}])
        api.control("faults", {"conflict_patches": 1})
        api.apply([{"op": "create", "object": pod("racer", ["mine"])}])
        sx = sched(tmp, kc, "sx-conflict", extra)
        want = ('running PreBind plugin "VolumeBinding": Operation cannot be fulfilled on '
                'persistentvolumes "disk": the object has been modified; please apply your '
                'changes to the latest version and try again')

        def failed_events():
            return [e["note"] for e in api.control("records")["events"]
                    if e.get("reason") == "FailedScheduling"]
        check(wait_for(lambda: want in failed_events(), 20),
              "FailedScheduling with the conflict (got %r)" % failed_events()[:3])
        check(wait_for(lambda: pods_of(api, "racer")["racer"]["spec"].get("nodeName") ==
                       "zone-c-2", 30), "retried and bound on the PV's node")
        check("assumed volume bindings reverted" in sx.logtext(), "assumed bindings reverted")
        check(objects(api, "persistentvolumeclaims")["mine"]["spec"].get("volumeName") == "disk",
              "the claim bound to the PV")
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__), [
        test_statefulset_zonal, test_prebound_and_static, test_bind_timeout,
        test_claim_deleted_while_waiting, test_waiting_bindings_do_not_block,
        test_conflicting_write]))
