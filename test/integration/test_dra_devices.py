#!/usr/bin/env python3
"""Dynamic Resource Allocation device features end to end (1.37 defaults):
`schedext serve --standalone` against the fake API server. Device taints:
a tainted device (in its ResourceSlice or through a DeviceTaintRule) is
avoided unless the request tolerates the taint. Partitionable devices: a
GPU published as partitions consuming its shared counters serves as many
pods as the counters allow. Consumable capacity: two pods share one
device by capacity, each claim's result carrying its share. Extended
resources backed by DRA: a pod asking example.com/gpu lands on the node
whose device a DeviceClass maps to that name, with the special claim
created, the pod's status.extendedResourceClaimStatus written and the
create counted in dynamic_resource_allocation_resourceclaim_creates_total.
Binding conditions: PreBind waits for a device's binding conditions up to
DynamicResourcesArgs.bindingTimeout; a condition that never comes times the
pod out and sends it back to the queue."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402
from test_dra import (DRIVER, Cluster, bound, claim, dclass, device, get, node, pod,  # noqa: E402
                      request, reserved, results, rslice, sched_condition, state, wait_for, NS)


def tainted(dev, key, effect):
    return dict(dev, taints=[{"key": key, "value": "true", "effect": effect}])


def test_device_taints(tmp):
    """node-t1's GPU is tainted broken:NoSchedule in its slice, node-t2's by a
    DeviceTaintRule (maintenance:NoExecute), node-t3's only with effect None.
    An untolerating pod gets node-t3; one tolerating broken gets node-t1,
    with its toleration in the allocation result; a third one, tolerating
    nothing, finds no device left it may use, until the rule is deleted."""
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
        # The rule goes away: upstream's slice tracker reports node-t2's slice
        # as updated, DynamicResources' ResourceSlice registration requeues
        # the pod at once (not after the 5-minute flush of unschedulable pods).
        cl.api.apply([{"op": "delete", "object": rule}])
        check(wait_for(lambda: bound(cl.api, "p-other"), 15),
              "taints: third pod bound once the DeviceTaintRule is deleted")
        check(bound(cl.api, "p-other") == "node-t2", "taints: on the device the rule tainted: %r"
              % bound(cl.api, "p-other"))
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


def test_shared_by_capacity(tmp):
    """node-c1 has one NIC allowing multiple allocations, 10G of bandwidth
    taken in steps of 1G (at least 1G): two pods asking 4G and 3500M share
    it, each claim's result with its own shareID and consumedCapacity
    (3500M rounded up to 4G); a third asking 4G does not fit in what is
    left and waits."""
    nic = dict(device("nic-0"), allowMultipleAllocations=True,
               capacity={"bandwidth": {"value": "10G", "requestPolicy": {
                   "default": "1G", "validRange": {"min": "1G", "step": "1G"}}}})
    cl = Cluster(tmp, "share", [node("node-c1"), dclass("nic"), rslice("node-c1", nic)])

    def bw(name, q):
        r = request("nic", "nic")
        r["exactly"]["capacity"] = {"requests": {"bandwidth": q}}
        return claim(name, r)
    try:
        cl.create(bw("bw-a", "4G"), bw("bw-b", "3500M"), bw("bw-c", "4G"))
        cl.create(pod("s-a", ("nic", {"resourceClaimName": "bw-a"})))
        check(wait_for(lambda: bound(cl.api, "s-a"), 15), "share: first pod bound")
        cl.create(pod("s-b", ("nic", {"resourceClaimName": "bw-b"})))
        check(wait_for(lambda: bound(cl.api, "s-b"), 15), "share: second pod bound")
        ra = get(cl.api, "resourceclaims", "bw-a")["status"]["allocation"]["devices"]["results"][0]
        rb = get(cl.api, "resourceclaims", "bw-b")["status"]["allocation"]["devices"]["results"][0]
        check((ra["device"], rb["device"]) == ("nic-0", "nic-0"), "share: one device %r %r" % (ra, rb))
        check(ra.get("consumedCapacity") == {"bandwidth": "4G"}, "share: a consumes %r" % ra.get("consumedCapacity"))
        check(rb.get("consumedCapacity") == {"bandwidth": "4G"}, "share: b rounded up %r" % rb.get("consumedCapacity"))
        check(len(ra.get("shareID", "")) == 36 and ra.get("shareID") != rb.get("shareID"),
              "share: distinct share IDs %r %r" % (ra.get("shareID"), rb.get("shareID")))
        cl.create(pod("s-c", ("nic", {"resourceClaimName": "bw-c"})))
        cond = lambda: (sched_condition(cl.api, "s-c") or {}).get("message", "")
        check(wait_for(lambda: "cannot allocate all claims" in cond(), 15),
              "share: third pod unschedulable (%r)" % cond())
        check(not bound(cl.api, "s-c"), "share: third pod waits")
    finally:
        check(cl.stop() == 0, "share: clean exit")


def test_extended_resource(tmp):
    """Two nodes advertise no example.com/gpu; only node-x2 publishes a
    device, and DeviceClass gpu names example.com/gpu. A pod whose
    container asks example.com/gpu: 1 binds to node-x2 (NodeResourcesFit
    leaves the resource to DynamicResources); the fake receives a claim
    with the annotation, the pod as controller owner and one request
    container-0-request-1 (the resource sorts after cpu), allocated to
    node-x2's device and reserved for the pod, and the pod's
    extendedResourceClaimStatus naming that claim."""
    cls = dict(dclass("gpu"))
    cls["spec"] = dict(cls["spec"], extendedResourceName="example.com/gpu")
    cl = Cluster(tmp, "ext", [node("node-x1"), node("node-x2"), cls, rslice("node-x2", device("gpu-0"))])
    try:
        p = pod("x-gpu")
        del p["spec"]["resourceClaims"]
        p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
        p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
        cl.create(p)
        check(wait_for(lambda: bound(cl.api, "x-gpu"), 15), "ext: pod bound")
        check(bound(cl.api, "x-gpu") == "node-x2", "ext: on the node with the device: %r" % bound(cl.api, "x-gpu"))
        claims = [c for c in state(cl.api, "resourceclaims")
                  if (c["metadata"].get("annotations") or {}).get("resource.kubernetes.io/extended-resource-claim") == "true"]
        check(len(claims) == 1, "ext: one special claim %r" % claims)
        c = claims[0]
        pod_uid = get(cl.api, "pods", "x-gpu")["metadata"]["uid"]
        check(c["metadata"]["name"].startswith("x-gpu-extended-resources-"), "ext: name %r" % c["metadata"]["name"])
        own = c["metadata"].get("ownerReferences") or [{}]
        check((own[0].get("kind"), own[0].get("name"), own[0].get("uid"), own[0].get("controller")) ==
              ("Pod", "x-gpu", pod_uid, True), "ext: owner %r" % own)
        check(c["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}],
            "ext: requests %r" % c["spec"]["devices"]["requests"])
        check(results(c) == [("container-0-request-1", "node-x2", "gpu-0")], "ext: allocation %r" % results(c))
        check([r.get("uid") for r in c["status"].get("reservedFor") or []] == [pod_uid], "ext: reserved for the pod")
        check("resource.kubernetes.io/delete-protection" in (c["metadata"].get("finalizers") or []), "ext: finalizer")
        ers = (get(cl.api, "pods", "x-gpu").get("status") or {}).get("extendedResourceClaimStatus")
        check(ers == {"resourceClaimName": c["metadata"]["name"], "requestMappings": [
            {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}]},
            "ext: pod status %r" % ers)
        # the one Create of the special claim is counted (createExtendedResourceClaimInAPI)
        code, body = http("GET", cl.sx.url + "/metrics")
        text = body.decode() if isinstance(body, bytes) else str(body)
        series = [ln for ln in text.splitlines()
                  if ln.startswith("dynamic_resource_allocation_resourceclaim_creates_total{")]
        check(series == ['dynamic_resource_allocation_resourceclaim_creates_total'
                         '{status="success",admin_access="false"} 1'],
              "ext: claim creates counted %r" % series)
    finally:
        check(cl.stop() == 0, "ext: clean exit")


def test_stale_extended_claim(tmp):
    """A special claim left by an earlier attempt (annotation, the pod as
    controller owner, allocated node-s1's gpu-0) is not reused: Filter
    rejects every node ("cannot schedule extended resource claim"),
    PostFilter removes its finalizer and deletes it ("deletion of
    ResourceClaim completed"); the next attempt (a node added) creates a
    new special claim on the device the stale one held."""
    cls = dict(dclass("gpu"))
    cls["spec"] = dict(cls["spec"], extendedResourceName="example.com/gpu")
    p = pod("x-stale")
    del p["spec"]["resourceClaims"]
    p["metadata"]["uid"] = "uid-x-stale"
    p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    stale = {"kind": "ResourceClaim", "metadata": {
        "name": "x-stale-extended-resources-old", "namespace": NS,
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
        "finalizers": ["resource.kubernetes.io/delete-protection"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "x-stale", "uid": "uid-x-stale",
                             "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-1", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "container-0-request-1", "driver": DRIVER, "pool": "node-s1", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-s1"]}]}]}}}}
    cl = Cluster(tmp, "stale", [node("node-s1"), cls, rslice("node-s1", device("gpu-0")), stale, p])
    try:
        names = lambda: sorted(c["metadata"]["name"] for c in state(cl.api, "resourceclaims"))
        check(wait_for(lambda: "x-stale-extended-resources-old" not in names(), 15),
              "stale: the old claim deleted %r" % names())
        def failed():
            return [e.get("note") for e in cl.api.control("records")["events"]
                    if e["regarding"]["name"] == "x-stale" and e["reason"] == "FailedScheduling"]
        check(wait_for(lambda: failed(), 15), "stale: a FailedScheduling event")
        check(failed()[:1] == ["0/1 nodes are available: 1 cannot schedule extended resource claim. "
                               "deletion of ResourceClaim completed, preemption: 0/1 nodes are available: "
                               "1 No preemption victims found for incoming pod."], "stale: words %r" % failed())
        cl.create(node("node-s2"))  # an event that moves the pod back to the queue, if it waits
        check(wait_for(lambda: bound(cl.api, "x-stale"), 20), "stale: bound on the next attempt")
        claims = [c for c in state(cl.api, "resourceclaims")
                  if (c["metadata"].get("annotations") or {}).get("resource.kubernetes.io/extended-resource-claim")]
        check(bound(cl.api, "x-stale") == "node-s1" and len(claims) == 1 and
              claims[0]["metadata"]["name"].startswith("x-stale-extended-resources-") and
              results(claims[0]) == [("container-0-request-1", "node-s1", "gpu-0")],
              "stale: new claim %r on %r" % (claims, bound(cl.api, "x-stale")))
    finally:
        check(cl.stop() == 0, "stale: clean exit")


def test_binding_conditions(tmp):
    """node-b1's device gpu-0 must be attached before use (bindingConditions
    Attached, failure condition AttachFailed); bindingTimeout is 2s. The
    pod's claim is allocated with the device's conditions copied into the
    result and a timestamp; no condition comes, so PreBind fails with
    "device binding timeout" (counted as timeout) and the pod is not
    bound. Once the driver reports Attached=True in the claim's
    status.devices, the pod's next attempt binds it."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-bc")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    cfg = os.path.join(tmp, "config-bc.json")
    with open(cfg, "w") as f:
        json.dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                   "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                       {"name": "DynamicResources", "args": {"bindingTimeout": "2s"}}]}]}, f)
    dev = dict(device("gpu-0"), bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"])
    api.apply([{"op": "create", "object": o} for o in [
        {"kind": "Namespace", "metadata": {"name": NS}}, node("node-b1"), dclass("gpu"),
        rslice("node-b1", dev), claim("bc", request("gpu", "gpu"))]])
    sx = Serve(tmp, kc, "sx-bc", "--standalone", "-v=2", "--config", cfg)
    try:
        api.apply([{"op": "create", "object": pod("b-0", ("gpu", {"resourceClaimName": "bc"}))}])
        cond = lambda: (sched_condition(api, "b-0") or {}).get("message", "")
        check(wait_for(lambda: "device binding timeout" in cond(), 20), "bc: timed out (%r)" % cond())
        check(cond() == 'running PreBind plugin "DynamicResources": device binding timeout',
              "bc: words %r" % cond())
        check(not bound(api, "b-0"), "bc: not bound")
        c = get(api, "resourceclaims", "bc")
        r0 = c["status"]["allocation"]["devices"]["results"][0]
        check((r0.get("bindingConditions"), r0.get("bindingFailureConditions")) == (["Attached"], ["AttachFailed"]),
              "bc: result conditions %r" % r0)
        check(bool(c["status"]["allocation"].get("allocationTimestamp")), "bc: allocation timestamp")
        code, body = http("GET", sx.url + "/metrics")
        text = body.decode() if isinstance(body, bytes) else str(body)
        line = [ln for ln in text.splitlines() if ln.startswith("scheduler_dra_bindingconditions_allocations_total{")
                and 'status="timeout"' in ln]
        check(line and line[0].startswith('scheduler_dra_bindingconditions_allocations_total{profile="default-scheduler",'
                                          'driver="%s",status="timeout"}' % DRIVER), "bc: metric %r" % line)
        # The driver attaches the device: the pod, back in the queue, binds.
        c = get(api, "resourceclaims", "bc")
        c["status"]["devices"] = [{"driver": DRIVER, "pool": "node-b1", "device": "gpu-0",
                                   "conditions": [{"type": "Attached", "status": "True", "reason": "Done",
                                                   "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
        api.apply([{"op": "update", "object": c}])
        check(wait_for(lambda: bound(api, "b-0") == "node-b1", 30), "bc: bound once attached")
    finally:
        check(sx.stop() == 0, "bc: clean exit")
        api.stop()


def test_binding_failed_deallocated(tmp):
    """Claim bf was allocated node-f1's gpu-0 by an earlier attempt whose
    device then reported its failure condition AttachFailed (reserved for
    no pod). The next attempt does not wait on it again: Filter finds it
    unavailable on every node, PostFilter deallocates it ("deallocation of
    ResourceClaim completed"), and the attempt after allocates it anew and
    binds (the device, republished, has no binding conditions now)."""
    failed = {"kind": "ResourceClaim", "metadata": {"name": "bf", "namespace": NS},
              "spec": {"devices": {"requests": [request("gpu", "gpu")]}},
              "status": {"allocation": {
                  "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "node-f1", "device": "gpu-0",
                                           "bindingConditions": ["Attached"],
                                           "bindingFailureConditions": ["AttachFailed"]}]},
                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["node-f1"]}]}]},
                  "allocationTimestamp": "2026-01-01T00:00:00Z"},
                  "devices": [{"driver": DRIVER, "pool": "node-f1", "device": "gpu-0", "conditions": [
                      {"type": "AttachFailed", "status": "True", "reason": "NoPath", "message": "link down",
                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}}
    cl = Cluster(tmp, "bfail", [node("node-f1"), dclass("gpu"), rslice("node-f1", device("gpu-0")), failed])
    try:
        cl.create(pod("f-0", ("gpu", {"resourceClaimName": "bf"})))

        def notes():
            return [e.get("note") for e in cl.api.control("records")["events"]
                    if e["regarding"]["name"] == "f-0" and e["reason"] == "FailedScheduling"]
        check(wait_for(lambda: notes(), 15), "bfail: a FailedScheduling event")
        check(notes()[:1] == ["0/1 nodes are available: 1 resourceclaim not available on the node. "
                              "deallocation of ResourceClaim completed, preemption: 0/1 nodes are available: "
                              "1 Preemption is not helpful for scheduling."], "bfail: words %r" % notes())
        check(wait_for(lambda: bound(cl.api, "f-0") == "node-f1", 20), "bfail: bound after deallocation")
        r0 = get(cl.api, "resourceclaims", "bf")["status"]["allocation"]["devices"]["results"][0]
        check(r0.get("device") == "gpu-0" and "bindingConditions" not in r0, "bfail: allocated anew %r" % r0)
    finally:
        check(cl.stop() == 0, "bfail: clean exit")


def test_binding_wait_shutdown(tmp):
    """A pod waits in PreBind for its device's binding condition, with the
    default bindingTimeout (10 minutes). The scheduler is stopped meanwhile:
    the wait ends at once ("context canceled"), the binding is given up
    (not bound) and schedext exits 0 within the 20 s stop() allows (before,
    the bind worker slept on until the timeout and the process was killed)."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-bw")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    dev = dict(device("gpu-0"), bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"])
    api.apply([{"op": "create", "object": o} for o in [
        {"kind": "Namespace", "metadata": {"name": NS}}, node("node-w1"), dclass("gpu"),
        rslice("node-w1", dev), claim("bw", request("gpu", "gpu"))]])
    sx = Serve(tmp, kc, "sx-bw", "--standalone", "-v=2")
    try:
        api.apply([{"op": "create", "object": pod("w-0", ("gpu", {"resourceClaimName": "bw"}))}])
        waiting = lambda: "w-0" in reserved(get(api, "resourceclaims", "bw"))
        check(wait_for(waiting, 20), "bwait: claim reserved, PreBind waiting")
        check(wait_for(lambda: "waiting for binding conditions" in open(sx.logpath).read(), 10),
              "bwait: the wait started")
    finally:
        rc = sx.stop()
        check(rc == 0, "bwait: clean exit while waiting (rc %r)" % rc)
        check(not bound(api, "w-0"), "bwait: not bound")
        api.stop()


def main():
    return run_tests("test_dra_devices.py", (test_device_taints, test_partitioned_gpu, test_stale_extended_claim,
                                             test_shared_by_capacity, test_extended_resource,
                                             test_binding_conditions, test_binding_failed_deallocated,
                                             test_binding_wait_shutdown))


if __name__ == "__main__":
    sys.exit(main())
