#!/usr/bin/env python3
"""Dynamic Resource Allocation device features end to end (1.37 defaults):
`schedext serve --standalone` against the fake API server. Device taints:
a tainted device (in its ResourceSlice or through a DeviceTaintRule) is
avoided unless the request tolerates the taint. Partitionable devices: a
GPU published as partitions consuming its shared counters serves as many
pods as the counters allow."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import check, run_tests  # noqa: E402
from test_dra import (DRIVER, Cluster, bound, claim, dclass, device, get, node, pod,  # noqa: E402
                      request, results, rslice, sched_condition, wait_for)


def tainted(dev, key, effect):
    return dict(dev, taints=[{"key": key, "value": "true", "effect": effect}])


def test_device_taints(tmp):
    """node-t1's GPU is tainted broken:NoSchedule in its slice, node-t2's by a
    DeviceTaintRule (maintenance:NoExecute), node-t3's only with effect None.
    An untolerating pod gets node-t3; one tolerating broken gets node-t1,
    with its toleration in the allocation result; a third one, tolerating
    nothing, finds no device left it may use."""
    rule = {"kind": "DeviceTaintRule", "metadata": {"name": "maintenance"},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": "node-t2"},
                     "taint": {"key": "maintenance", "effect": "NoExecute"}}}
    cl = Cluster(tmp, "taints", [node("node-t1"), node("node-t2"), node("node-t3"), dclass("gpu"),
                                 rslice("node-t1", tainted(device("gpu-0"), "broken", "NoSchedule")),
                                 rslice("node-t2", device("gpu-0")),
                                 rslice("node-t3", tainted(device("gpu-0"), "note", "None")), rule])
    try:
        tol = request("gpu", "gpu")
        tol["exactly"]["tolerations"] = [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}]
        cl.create(claim("plain", request("gpu", "gpu")), claim("tolerant", tol),
                  claim("other", request("gpu", "gpu")))
        cl.create(pod("p-plain", ("gpu", {"resourceClaimName": "plain"})))
        check(wait_for(lambda: bound(cl.api, "p-plain"), 15), "taints: untolerating pod bound")
        check(bound(cl.api, "p-plain") == "node-t3", "taints: on the untainted (None) device: %r"
              % bound(cl.api, "p-plain"))
        cl.create(pod("p-tolerant", ("gpu", {"resourceClaimName": "tolerant"})))
        check(wait_for(lambda: bound(cl.api, "p-tolerant"), 15), "taints: tolerating pod bound")
        check(bound(cl.api, "p-tolerant") == "node-t1", "taints: on the device it tolerates: %r"
              % bound(cl.api, "p-tolerant"))
        c = get(cl.api, "resourceclaims", "tolerant")
        check(results(c) == [("gpu", "node-t1", "gpu-0")], "taints: allocation %r" % results(c))
        r0 = c["status"]["allocation"]["devices"]["results"][0]
        check(r0.get("tolerations") == [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}],
              "taints: result tolerations %r" % r0.get("tolerations"))
        cl.create(pod("p-other", ("gpu", {"resourceClaimName": "other"})))
        cond = lambda: (sched_condition(cl.api, "p-other") or {}).get("message", "")
        check(wait_for(lambda: "cannot allocate all claims" in cond(), 15),
              "taints: third pod unschedulable (%r)" % cond())
        check(cond().startswith("0/3 nodes are available: 3 cannot allocate all claims."),
              "taints: FailedScheduling words %r" % cond())
        check(not bound(cl.api, "p-other"), "taints: third pod waits")
    finally:
        check(cl.stop() == 0, "taints: clean exit")


def test_partitioned_gpu(tmp):
    """One 80Gi GPU on node-p1, published as four 40Gi partitions (one slice
    of devices consuming counter set gpu-0, one slice holding that set):
    two pods get a partition each, the third does not fit although two
    partitions are unallocated, and fits once a partition is released."""
    parts = [dict(device("mig-%d" % i), consumesCounters=[
        {"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]) for i in range(4)]
    devs = {"kind": "ResourceSlice", "metadata": {"name": "node-p1-parts"},
            "spec": {"driver": DRIVER, "nodeName": "node-p1",
                     "pool": {"name": "node-p1", "generation": 1, "resourceSliceCount": 2}, "devices": parts}}
    ctrs = {"kind": "ResourceSlice", "metadata": {"name": "node-p1-counters"},
            "spec": {"driver": DRIVER, "nodeName": "node-p1",
                     "pool": {"name": "node-p1", "generation": 1, "resourceSliceCount": 2},
                     "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]}}
    cl = Cluster(tmp, "parts", [node("node-p1"), dclass("gpu"), devs, ctrs])
    try:
        cl.create(*[claim("part-%d" % i, request("gpu", "gpu")) for i in range(3)])
        cl.create(*[pod("w-%d" % i, ("gpu", {"resourceClaimName": "part-%d" % i})) for i in range(3)])
        check(wait_for(lambda: sum(1 for i in range(3) if bound(cl.api, "w-%d" % i)) == 2, 20),
              "parts: two pods bound")
        waiting = [i for i in range(3) if not bound(cl.api, "w-%d" % i)]
        check(len(waiting) == 1, "parts: one pod waits (%r)" % waiting)
        got = sorted(results(get(cl.api, "resourceclaims", "part-%d" % i))[0][2]
                     for i in range(3) if i not in waiting)
        check(got == ["mig-0", "mig-1"], "parts: first two partitions %r" % got)
        cond = lambda: (sched_condition(cl.api, "w-%d" % waiting[0]) or {}).get("message", "")
        check(wait_for(lambda: "cannot allocate all claims" in cond(), 15),
              "parts: third pod unschedulable (%r)" % cond())
        # The first pod goes and its claim is deallocated: its counters come back.
        gone = [i for i in range(3) if i not in waiting][0]
        cl.api.apply([{"op": "delete", "object": get(cl.api, "pods", "w-%d" % gone)}])
        c = get(cl.api, "resourceclaims", "part-%d" % gone)
        c["status"] = {}
        cl.api.apply([{"op": "update", "object": c}])
        check(wait_for(lambda: bound(cl.api, "w-%d" % waiting[0]), 20), "parts: third pod bound after release")
    finally:
        check(cl.stop() == 0, "parts: clean exit")


def main():
    return run_tests("test_dra_devices.py", (test_device_taints, test_partitioned_gpu))


if __name__ == "__main__":
    sys.exit(main())
