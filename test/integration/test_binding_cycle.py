#!/usr/bin/env python3
"""The binding cycle of kube-scheduler 1.35-1.37 with the standalone
scheduler against test/fakeapi/fakeapi.py (upstream
pkg/scheduler/schedule_one.go bindingCycle; the preemption executor's
PreemptPod):

(a) NominatedNodeNameForExpectation (on by default since 1.35): a pod
    whose PreBind has work (VolumeBinding with an unbound claim, the PV
    controller off) gets status.nominatedNodeName = its node in a status
    PATCH before its volumes are written; when the binding cycle fails
    (bindTimeoutSeconds) the failure's status PATCH clears it (null);
(b) a pod without work in PreBind (no claims) gets no such patch; with
    --feature-gates NominatedNodeNameForExpectation=false the pod of (a)
    gets none either (and nothing to clear);
(c) a gang member waiting at Permit gets nominatedNodeName too;
(d) preemption of a victim waiting at Permit (a gang member waiting for
    its quorum, which only 1.35's Permit-only gangs leave waiting: from
    1.36 the pod-group cycle rejects a gang that cannot fit whole, so no
    member waits): under --emulated-version 1.35 it is rejected
    ("preempted", Unschedulable), not deleted. 1.36's in-memory preemption
    of a pod waiting at Permit is covered by test/unit/test_binding_cycle.c
    (the same Executor path as (e) below);
(e) preemption of a victim in PreBind (1.36): its binding is cancelled in
    memory (no DELETE), VolumeBinding's wait for its volumes gives up at
    once (upstream cancels PreBind's context), and it fails with
    "preempted by DefaultPreemption"; the preemptor is bound in its place.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

HOST = "kubernetes.io/hostname"
PROVISIONER = "zonal.csi.example.com"
GANG_TIMEOUT_MS = 30000


def node(name, cpu="4"):
    return {"kind": "Node", "metadata": {"name": name, "labels": {HOST: name}},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def claim(name):
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "work"},
            "spec": {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def pod(name, cpu="100m", claims=(), priority=None, group=None):
    spec = {"containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
            "volumes": [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}}
                        for i, c in enumerate(claims)]}
    if priority is not None:
        spec["priority"] = priority
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work", "uid": "uid-" + name},
            "spec": spec, "status": {"phase": "Pending"}}


def pod_group(name, min_count):
    return {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
            "metadata": {"name": name, "namespace": "work"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def start(tmp, tag, objs, *extra, api_args=(), bind_timeout=2):
    api = FakeApi(tmp, *api_args)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    cfg = os.path.join(tmp, "config-%s.json" % tag)
    with open(cfg, "w") as f:
        json.dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                   "kind": "KubeSchedulerConfiguration",
                   "profiles": [{"schedulerName": "default-scheduler",
                                 "pluginConfig": [{"name": "VolumeBinding",
                                                   "args": {"bindTimeoutSeconds": bind_timeout}}]}]},
                  f)
    ops = [{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}},
           {"op": "create", "object": {"kind": "StorageClass", "metadata": {"name": "wffc"},
                                       "provisioner": PROVISIONER,
                                       "volumeBindingMode": "WaitForFirstConsumer"}}]
    api.apply(ops + [{"op": "create", "object": o} for o in objs])
    os.environ["SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS"] = str(GANG_TIMEOUT_MS)
    try:
        sx = Serve(tmp, kc, "sx-" + tag, "--standalone", "-v=2", "--config", cfg, *extra)
    finally:
        del os.environ["SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS"]
    check(sx.wait_ready(), "%s: schedext ready" % tag)
    return api, sx


def create(api, *objs):
    api.apply([{"op": "create", "object": o} for o in objs])


def records(api, what):
    return api.control("records")[what]


def status_patches(api, name):
    """The status PATCHes of pod work/name, in order."""
    return [p["patch"].get("status", {}) for p in records(api, "patches")
            if p.get("namespace") == "work" and p.get("name") == name and "resource" not in p]


def nnn_patches(api, name):
    """The nominatedNodeName values the status PATCHes of name wrote."""
    return [s["nominatedNodeName"] for s in status_patches(api, name) if "nominatedNodeName" in s]


def bound_to(api, name):
    for b in records(api, "bindings"):
        if b["metadata"]["name"] == name:
            return b["target"]["name"]
    return None


def events(api, reason, name=None):
    return [e for e in records(api, "events") if e.get("reason") == reason and
            (name is None or (e.get("regarding") or {}).get("name") == name)]


def deletes(api, name):
    return [d for d in records(api, "deletes") if d.get("name") == name]


def test_nominated_for_prebind_and_cleared(tmp):
    api, sx = start(tmp, "nnn", [node("n1")], api_args=("--no-pv-controller",))
    try:
        create(api, claim("data"))
        time.sleep(0.5)  # the claim in the cache before its pod
        create(api, pod("vol", claims=["data"]), pod("plain"))
        check(wait_for(lambda: bound_to(api, "plain") == "n1", 20),
              "nnn: the plain pod is bound\n%s" % sx.logtext())
        check(nnn_patches(api, "plain") == [],
              "nnn: no PreBind work, no Permit wait: no nominatedNodeName (%r)"
              % status_patches(api, "plain"))
        check(wait_for(lambda: nnn_patches(api, "vol")[:1] == ["n1"], 20),
              "nnn: nominatedNodeName n1 set in the binding cycle (%r)\n%s"
              % (status_patches(api, "vol"), sx.logtext()))
        first = [p for p in status_patches(api, "vol") if "nominatedNodeName" in p][0]
        check(first == {"nominatedNodeName": "n1"},
              "nnn: the nominating patch only nominates: %r" % first)

        def cleared():
            return [s for s in status_patches(api, "vol")
                    if "nominatedNodeName" in s and s["nominatedNodeName"] is None
                    and s.get("conditions")]
        check(wait_for(cleared, 20),
              "nnn: the binding failure clears it with the PodScheduled=False patch (%r)"
              % status_patches(api, "vol"))
        cond = cleared()[0]["conditions"][0]
        check(cond["reason"] == "SchedulerError" and
              cond["message"] == 'running PreBind plugin "VolumeBinding": binding volumes: '
                                 'context deadline exceeded',
              "nnn: with the PreBind error: %r" % cond)
        check(bound_to(api, "vol") is None, "nnn: the pod is not bound")
        check(sx.stop() == 0, "nnn: clean exit")
    finally:
        api.stop()


def test_gate_off(tmp):
    api, sx = start(tmp, "off", [node("n1")], "--feature-gates",
                    "NominatedNodeNameForExpectation=false", api_args=("--no-pv-controller",))
    try:
        create(api, claim("data"))
        time.sleep(0.5)
        create(api, pod("vol", claims=["data"]))
        check(wait_for(lambda: [s for s in status_patches(api, "vol") if s.get("conditions")], 20),
              "off: the binding cycle fails as before\n%s" % sx.logtext())
        check(nnn_patches(api, "vol") == [],
              "off: no nominatedNodeName written: %r" % status_patches(api, "vol"))
        check(sx.stop() == 0, "off: clean exit")
    finally:
        api.stop()


def gang_setup(tmp, tag, *extra):
    """n1 with 2 cpu: a gang of 2 (minCount 2) of which one member fits
    and waits at Permit; the other stays pending."""
    # WorkloadAwarePreemption is PreAlpha (not settable) before 1.36
    gates = "GenericWorkload=true,GangScheduling=true"
    if "1.35" not in extra:
        gates += ",WorkloadAwarePreemption=true"
    api, sx = start(tmp, tag, [node("n1", cpu="2"), pod_group("g", 2)],
                    "--feature-gates", gates, *extra)
    create(api, pod("m-0", cpu="1500m", priority=1, group="g"),
           pod("m-1", cpu="1500m", priority=1, group="g"))
    check(wait_for(lambda: nnn_patches(api, "m-0") == ["n1"] or
                   nnn_patches(api, "m-1") == ["n1"], 20),
          "%s: the waiting member is nominated to n1 (%r %r)\n%s"
          % (tag, status_patches(api, "m-0"), status_patches(api, "m-1"), sx.logtext()))
    victim = "m-0" if nnn_patches(api, "m-0") else "m-1"
    return api, sx, victim


def test_waiting_victim_rejected_135(tmp):
    api, sx, victim = gang_setup(tmp, "wait135", "--emulated-version", "1.35")
    try:
        create(api, pod("boss", cpu="1500m", priority=1000))
        check(wait_for(lambda: bound_to(api, "boss") == "n1", 20),
              "wait135: the preemptor is bound\n%s" % sx.logtext())
        check(wait_for(lambda: [e for e in events(api, "FailedScheduling", victim)
                                if e.get("note") == "0/1 nodes are available: 1 preempted."], 10),
              "wait135: the victim is rejected at Permit: %r"
              % [e.get("note") for e in events(api, "FailedScheduling", victim)])
        check(deletes(api, victim) == [], "wait135: the victim is not deleted")
        pre = events(api, "Preempted", victim)
        check(pre and pre[0].get("note") == "Preempted by pod uid-boss on node n1",
              "wait135: 1.35's Preempted words: %r" % [e.get("note") for e in pre])
        check(sx.stop() == 0, "wait135: clean exit")
    finally:
        api.stop()


def test_prebind_victim_cancelled(tmp):
    # bindTimeoutSeconds 600: the victim's PreBind only ends because its
    # cancellation interrupts its wait for the volumes.
    api, sx = start(tmp, "prebind", [node("n1", cpu="2")], api_args=("--no-pv-controller",),
                    bind_timeout=600)
    try:
        create(api, claim("data"))
        time.sleep(0.5)
        create(api, pod("low", cpu="1500m", claims=["data"], priority=1))
        check(wait_for(lambda: nnn_patches(api, "low") == ["n1"], 20),
              "prebind: the victim is in PreBind (nominated)\n%s" % sx.logtext())
        create(api, pod("boss", cpu="1500m", priority=1000))
        want = "preempted by DefaultPreemption"
        check(wait_for(lambda: [e for e in events(api, "FailedScheduling", "low")
                                if e.get("note") == want], 20),
              "prebind: the victim's binding fails with %r: %r\n%s"
              % (want, [e.get("note") for e in events(api, "FailedScheduling", "low")],
                 sx.logtext()))
        check(deletes(api, "low") == [], "prebind: the victim is not deleted")
        pre = events(api, "Preempted", "low")
        check(pre and pre[0].get("note") ==
              "Preempted by pod uid-boss on node n1 (in kube-scheduler memory).",
              "prebind: Preempted in memory: %r" % [e.get("note") for e in pre])
        check(wait_for(lambda: bound_to(api, "boss") == "n1", 20),
              "prebind: the preemptor is bound\n%s" % sx.logtext())
        check(bound_to(api, "low") is None, "prebind: the victim is not bound")
        check(sx.stop() == 0, "prebind: clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_nominated_for_prebind_and_cleared, test_gate_off,
                        test_waiting_victim_rejected_135, test_prebind_victim_cancelled]))
