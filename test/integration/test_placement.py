#!/usr/bin/env python3
"""Topology placement of the pod-group cycle (TopologyAwareWorkloadScheduling,
upstream schedule_one_podgroup.go podGroupSchedulingPlacementAlgorithm)
with the standalone scheduler against test/fakeapi/fakeapi.py, the
TopologyPlacementGenerator and PodGroupPodsCount plugins enabled through multiPoint
(or, in (a), by the default profile with the gate, as upstream's applyFeatureGates):

(a) a gang of 3 (2 cpu each) whose PodGroup asks for one
    topology.kubernetes.io/zone, on zone-a (one 4-cpu node) and zone-b
    (a 2-cpu and a 4-cpu node), binds whole in zone-b, the only zone that
    holds it, with no configuration file;
(b) without the constraint, on zone-a's node and zone-b's 2-cpu node
    only, the same gang is split across the zones;
(c) with the constraint there, no zone holds it: nothing binds and the
    PodGroup's PodGroupInitiallyScheduled condition says "0/2 placements are
    available, first placement status: ..., <PodGroupPostFilter's words>".
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true,TopologyAwareWorkloadScheduling=true"
CONFIG = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
          "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
          "      enabled: [{name: TopologyPlacementGenerator}, {name: PodGroupPodsCount}]\n")
ZONE = "topology.kubernetes.io/zone"


def node(name, zone, cpu):
    return {"kind": "Node", "metadata": {"name": name,
                                         "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def member(name, group):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work", "uid": "uid-" + name},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "2",
                                                                "memory": "64Mi"}}}]},
            "status": {"phase": "Pending"}}


def pod_group(name, min_count, key):
    spec = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
            "metadata": {"name": name, "namespace": "work"}, "spec": spec}


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def start(tmp, tag, nodes, group, pods, config=CONFIG):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    args = []
    if config:
        cfg = os.path.join(tmp, "config-" + tag + ".yaml")
        with open(cfg, "w") as f:
            f.write(config)
        args = ["--config", cfg]
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
    api.apply([{"op": "create", "object": o} for o in nodes + [group]])
    sx = Serve(tmp, kc, "sx-" + tag, "--standalone", "-v=2", *args,
               "--feature-gates", GATES)
    check(sx.wait_ready(), "%s: schedext ready" % tag)
    api.apply([{"op": "create", "object": p} for p in pods])
    return api, sx


def placed(api):
    """pod -> node of every Binding received."""
    return {b["metadata"]["name"]: b["target"]["name"]
            for b in api.control("records")["bindings"]}


def metric(sx, name, labels):
    """The value of the first series of name carrying every label, or None."""
    import urllib.request
    with urllib.request.urlopen(sx.url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith(name + "{") and all(lb in line for lb in labels):
            return float(line.rsplit(" ", 1)[1])
    return None


def pod_group_condition(api, name):
    for g in api.control("state")["objects"].get("podgroups", []):
        if g["metadata"]["name"] == name:
            for c in (g.get("status") or {}).get("conditions", []):
                if c.get("type") == "PodGroupInitiallyScheduled":
                    return c
    return None


def test_fits_one_zone(tmp):
    pods = [member("w-%d" % i, "train") for i in range(3)]
    nodes = [node("a1", "zone-a", "4"), node("b1", "zone-b", "2"), node("b2", "zone-b", "4")]
    api, sx = start(tmp, "zone", nodes, pod_group("train", 3, ZONE), pods, config=None)
    try:
        check(wait_for(lambda: len(placed(api)) == 3, 20),
              "zone: the 3 members are bound: %r\n%s" % (placed(api), sx.logtext()))
        check(sorted(placed(api).values()) == ["b1", "b2", "b2"],
              "zone: all in zone-b: %r" % placed(api))
        # metrics.go RecordGeneratedPlacements / ObservePlacementEvaluation:
        # two placements, zone-a infeasible, zone-b feasible.
        prof = 'profile="default-scheduler"'
        check(metric(sx, "scheduler_generated_placements_total", [prof]) == 2,
              "zone: 2 placements generated")
        check(metric(sx, "scheduler_placement_evaluations_total",
                     [prof, 'result="feasible"']) == 1, "zone: one feasible placement")
        check(metric(sx, "scheduler_placement_evaluations_total",
                     [prof, 'result="infeasible"']) == 1, "zone: one infeasible placement")
        check(sx.stop() == 0, "zone: clean exit")
    finally:
        api.stop()


def test_split_without_constraint(tmp):
    pods = [member("w-%d" % i, "train") for i in range(3)]
    nodes = [node("a1", "zone-a", "4"), node("b1", "zone-b", "2")]
    api, sx = start(tmp, "split", nodes, pod_group("train", 3, None), pods)
    try:
        check(wait_for(lambda: len(placed(api)) == 3, 20),
              "split: the 3 members are bound: %r\n%s" % (placed(api), sx.logtext()))
        check(sorted(placed(api).values()) == ["a1", "a1", "b1"],
              "split: across the zones: %r" % placed(api))
        check(sx.stop() == 0, "split: clean exit")
    finally:
        api.stop()


def test_no_zone_holds_it(tmp):
    pods = [member("w-%d" % i, "train") for i in range(3)]
    nodes = [node("a1", "zone-a", "4"), node("b1", "zone-b", "2")]
    api, sx = start(tmp, "none", nodes, pod_group("train", 3, ZONE), pods)
    want = ("0/2 placements are available, first placement status: "
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, "
            "pod group preemption: not supported with topology constraints")
    try:
        check(wait_for(lambda: pod_group_condition(api, "train") is not None, 20),
              "none: the PodGroup gets its condition\n%s" % sx.logtext())
        cond = pod_group_condition(api, "train")
        check(cond["status"] == "False" and cond["message"] == want,
              "none: PodGroupInitiallyScheduled False %r: %r" % (want, cond))
        time.sleep(1)
        check(placed(api) == {}, "none: no member bound: %r" % placed(api))
        check(sx.stop() == 0, "none: clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_fits_one_zone, test_split_without_constraint,
                        test_no_zone_holds_it]))
