#!/usr/bin/env python3
"""Storage end to end, the restriction plugins: the standalone
scheduler against test/fakeapi/fakeapi.py.

(f) two pods sharing a ReadWriteOncePod claim: the first is bound, the
    second stays pending with VolumeRestrictions' 1.34 reason;
(g) nodes at their CSI attach limit (CSINode allocatable.count) are skipped:
    the pod lands on the one node of its PV's zone with a free slot; a pod
    naming a claim that does not exist is rejected with the PreFilter
    reason, never placed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402
from test_volumes import (PROVISIONER, ZONE, ZONES, claim, node, objects, pod,  # noqa: E402
                          pods_of, scheduled_cond, storage_class, wait_for)

RWOP_REASON = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
               "access mode already in-use by another pod")
DRIVER = "attach.csi.example.com"


def start(tmp, name):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + name)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    ops = [{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}]
    ops += [{"op": "create", "object": node("%s-%d" % (z, i), z)} for z in ZONES for i in range(3)]
    ops += [{"op": "create", "object": storage_class("zonal", PROVISIONER)}]
    api.apply(ops)
    return api, kc


def message(p):
    c = scheduled_cond(p)
    return (c or {}).get("message") or ""


def test_read_write_once_pod(tmp):
    api, kc = start(tmp, "rwop")
    sx = None
    try:
        c = claim("solo", "zonal")
        c["spec"]["accessModes"] = ["ReadWriteOncePod"]
        api.apply([{"op": "create", "object": c},
                   {"op": "create", "object": pod("rwop-1", ["solo"])}])
        sx = Serve(tmp, kc, "sx-rwop", "--standalone", "-v=2")
        check(wait_for(lambda: pods_of(api, "rwop-1")["rwop-1"]["spec"].get("nodeName"), 30, 0.5),
              "the first pod of the ReadWriteOncePod claim is bound")
        api.apply([{"op": "create", "object": pod("rwop-2", ["solo"])}])
        check(wait_for(lambda: RWOP_REASON in message(pods_of(api, "rwop-2")["rwop-2"]), 30, 0.5),
              "the second pod is rejected with the upstream reason: %r"
              % message(pods_of(api, "rwop-2")["rwop-2"]))
        check(not pods_of(api, "rwop-2")["rwop-2"]["spec"].get("nodeName"),
              "the second pod is not bound")
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


def csi_pv(name, handle, zone, claim_name):
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": {ZONE: zone}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "zonal", "csi": {"driver": DRIVER, "volumeHandle": handle},
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "work",
                                  "name": claim_name},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": ZONE, "operator": "In", "values": [zone]}]}]}}},
            "status": {"phase": "Bound"}}


def bound_claim(name, volume):
    c = claim(name, "zonal", annotations={"pv.kubernetes.io/bind-completed": "yes"})
    c["spec"]["volumeName"] = volume
    c["status"] = {"phase": "Bound"}
    return c


def test_attach_limit(tmp):
    api, kc = start(tmp, "limit")
    sx = None
    try:
        ops = []
        for z in ZONES:
            for i in range(3):
                n = "%s-%d" % (z, i)
                ops.append({"op": "create", "object": {
                    "kind": "CSINode", "metadata": {"name": n},
                    "spec": {"drivers": [{"name": DRIVER, "nodeID": n, "allocatable": {"count": 1}}]}}})
        # zone-a-0 and zone-a-1 already attach one volume each (their limit).
        for i in range(2):
            ops += [{"op": "create", "object": csi_pv("held-%d" % i, "h-%d" % i, "zone-a", "held-%d" % i)},
                    {"op": "create", "object": bound_claim("held-%d" % i, "held-%d" % i)}]
            p = pod("holder-%d" % i, ["held-%d" % i])
            p["spec"]["nodeName"] = "zone-a-%d" % i
            p["status"] = {"phase": "Running"}
            ops.append({"op": "create", "object": p})
        ops += [{"op": "create", "object": csi_pv("fresh", "h-fresh", "zone-a", "fresh")},
                {"op": "create", "object": bound_claim("fresh", "fresh")},
                {"op": "create", "object": pod("limited", ["fresh"])},
                {"op": "create", "object": pod("ghost", ["does-not-exist"])}]
        api.apply(ops)
        sx = Serve(tmp, kc, "sx-limit", "--standalone", "-v=2")
        check(wait_for(lambda: pods_of(api, "limited")["limited"]["spec"].get("nodeName"), 30, 0.5),
              "the pod with a zone-a volume is bound")
        where = pods_of(api, "limited")["limited"]["spec"].get("nodeName")
        check(where == "zone-a-2", "nodes at their attach limit skipped: bound to %s" % where)
        want = 'persistentvolumeclaim "does-not-exist" not found'
        check(wait_for(lambda: want in message(pods_of(api, "ghost")["ghost"]), 30, 0.5),
              "a missing claim is rejected at PreFilter: %r" % message(pods_of(api, "ghost")["ghost"]))
        check(not pods_of(api, "ghost")["ghost"]["spec"].get("nodeName"), "never placed")
        check(objects(api, "csinodes")["zone-a-0"]["spec"]["drivers"][0]["allocatable"]["count"] == 1,
              "CSINodes served by the fake API server")
    finally:
        if sx:
            check(sx.stop() == 0, "%s: clean exit (no sanitizer report)" % sx.logpath)
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__), [test_read_write_once_pod, test_attach_limit]))
