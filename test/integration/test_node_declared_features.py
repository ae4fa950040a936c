#!/usr/bin/env python3
"""NodeDeclaredFeatures end to end: the standalone scheduler against
test/fakeapi/fakeapi.py with the default profile (1.37).

(a) A pod whose container has a restart rule with action
    RestartAllContainers lands only on the one node that declares
    RestartAllContainersOnContainerExits in status.declaredFeatures, among
    nodes that would otherwise score better; a plain pod is free to go
    elsewhere.
(b) A pod needing a feature no node declares gets FailedScheduling with
    1.37's words, and is bound once a node's status.declaredFeatures gains
    the feature (the queueing hint on UpdateNodeDeclaredFeature).
(c) With --emulated-version=1.35 the plugin is not in the profile: the same
    pod is bound although no node declares anything.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

FEATURE = "RestartAllContainersOnContainerExits"


class Sched(Serve):
    """schedext serve --standalone -v=2 against the fake API server."""

    def __init__(self, tmp, kubeconfig, name, *extra):
        super().__init__(tmp, kubeconfig, name, "--standalone", "-v=2", *extra)


def node(name, cpu, features=None):
    st = {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
          "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}
    if features is not None:
        st["declaredFeatures"] = features
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": st}


def pod(name, restart_all=False):
    c = {"name": "c", "image": "busybox",
         "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}
    if restart_all:
        c["restartPolicy"] = "Never"
        c["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                    "exitCodes": {"operator": "In", "values": [42]}}]
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work"},
            "spec": {"containers": [c]}, "status": {"phase": "Pending"}}


def wait_for(fn, timeout, step=0.25):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def pod_state(api, name):
    for p in api.control("state")["objects"]["pods"]:
        if p["metadata"]["name"] == name and p["metadata"]["namespace"] == "work":
            return p
    return None


def bound_to(api, name):
    p = pod_state(api, name)
    return p and p["spec"].get("nodeName")


def notes(api, name):
    return [e["note"] for e in api.control("records")["events"]
            if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == name]


def setup(tmp, tag, nodes, pods):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
    api.apply([{"op": "create", "object": o} for o in nodes + pods])
    return api, kc


def test_lands_on_declaring_node(tmp):
    # node-small declares the feature but is the smallest, so every score
    # prefers the big nodes: only the filter can send the pod there.
    nodes = [node("node-big-1", "32"), node("node-big-2", "32", []),
             node("node-small", "2", [FEATURE, "UserNamespacesHostNetworkSupport"])]
    pods = [pod("needs-%d" % i, restart_all=True) for i in range(3)] + [pod("plain")]
    api, kc = setup(tmp, "ndf", nodes, pods)
    try:
        sx = Sched(tmp, kc, "sx-ndf")
        names = ["needs-%d" % i for i in range(3)] + ["plain"]
        check(wait_for(lambda: all(bound_to(api, n) for n in names), 20),
              "every pod is bound (%r)" % {n: bound_to(api, n) for n in names})
        for i in range(3):
            check(bound_to(api, "needs-%d" % i) == "node-small",
                  "needs-%d on the declaring node, got %r" % (i, bound_to(api, "needs-%d" % i)))
        check(bound_to(api, "plain") != "node-small",
              "the plain pod goes to a bigger node, got %r" % bound_to(api, "plain"))
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


def test_waits_for_declaration(tmp):
    nodes = [node("node-a", "8"), node("node-b", "8", ["SomethingElse"])]
    api, kc = setup(tmp, "ndf-wait", nodes, [pod("needs", restart_all=True)])
    want = ("0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
            "no new claims to deallocate, preemption: 0/2 nodes are available: "
            "2 Preemption is not helpful for scheduling.")
    try:
        sx = Sched(tmp, kc, "sx-ndf-wait")
        check(wait_for(lambda: notes(api, "needs"), 15) and notes(api, "needs")[0] == want,
              "FailedScheduling %r" % notes(api, "needs")[:1])
        n = node("node-b", "8", ["SomethingElse", FEATURE])
        api.apply([{"op": "update", "object": n}])
        check(wait_for(lambda: bound_to(api, "needs") == "node-b", 20),
              "bound once node-b declares the feature, got %r" % bound_to(api, "needs"))
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


def test_release_135(tmp):
    api, kc = setup(tmp, "ndf-135", [node("node-a", "8")], [pod("needs", restart_all=True)])
    try:
        sx = Sched(tmp, kc, "sx-ndf-135", "--emulated-version=1.35")
        check(wait_for(lambda: bound_to(api, "needs") == "node-a", 20),
              "1.35 has no NodeDeclaredFeatures: bound, got %r" % bound_to(api, "needs"))
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


def main():
    return run_tests("test_node_declared_features.py",
                     (test_lands_on_declaring_node, test_waits_for_declaration, test_release_135))


if __name__ == "__main__":
    sys.exit(main())
