#!/usr/bin/env python3
"""Gang scheduling (GangScheduling, scheduling.k8s.io/v1beta1 PodGroup)
with the standalone scheduler against test/fakeapi/fakeapi.py:

(a) with --feature-gates GenericWorkload=true, a gang of 4 with minCount 4
    that fits is bound whole;
(b) a gang of 4 with minCount 4 of which only 2 fit binds none: the 2 that
    fit wait at Permit and are rejected after the timeout with upstream's
    words (the 5-minute timeout is shortened through the plugin's test hook
    SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS), releasing what they held;
(c) with the gate off (the default), the same pods are plain pods: the 2
    that fit are bound;
(d) members created before their PodGroup are held back until it appears
    (the PodGroup/Add queueing hint), then bound whole.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

TIMEOUT_MS = 1500


def node(name, cpu="4"):
    return {"kind": "Node", "metadata": {"name": name,
                                         "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def member(name, group, cpu="1500m"):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work", "uid": "uid-" + name},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": cpu,
                                                                "memory": "64Mi"}}}]},
            "status": {"phase": "Pending"}}


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


def start(tmp, tag, nodes, group, pods, *extra):
    """The fake with nodes and group (None: no PodGroup yet), schedext, then
    the pods."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
    api.apply([{"op": "create", "object": o} for o in nodes + ([group] if group else [])])
    os.environ["SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS"] = str(TIMEOUT_MS)
    try:
        sx = Serve(tmp, kc, "sx-" + tag, "--standalone", "-v=2", *extra)
    finally:
        del os.environ["SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS"]
    check(sx.wait_ready(), "%s: schedext ready" % tag)
    api.apply([{"op": "create", "object": p} for p in pods])
    return api, sx


def bindings(api):
    return sorted(b["metadata"]["name"] for b in api.control("records")["bindings"])


def test_gang_fits(tmp):
    pods = [member("w-%d" % i, "train") for i in range(4)]
    api, sx = start(tmp, "fits", [node("n1"), node("n2")], pod_group("train", 4), pods,
                    "--feature-gates", "GenericWorkload=true")
    try:
        check(wait_for(lambda: len(bindings(api)) == 4, 20),
              "fits: the 4 members are bound: %r\n%s" % (bindings(api), sx.logtext()))
        check(bindings(api) == ["w-0", "w-1", "w-2", "w-3"], "fits: one Binding each")
        check(sx.stop() == 0, "fits: clean exit")
    finally:
        api.stop()


def test_gang_does_not_fit(tmp):
    pods = [member("w-%d" % i, "big") for i in range(4)]
    api, sx = start(tmp, "nofit", [node("n1")], pod_group("big", 4), pods,
                    "--feature-gates", "GenericWorkload=true")
    want = ("rejected due to timeout after waiting %.1fs at plugin GangScheduling"
            % (TIMEOUT_MS / 1000)).replace(".0s", "s")

    def timed_out():
        return [e for e in api.control("records")["events"]
                if e.get("reason") == "FailedScheduling" and want in (e.get("note") or "")]
    try:
        check(wait_for(lambda: len(timed_out()) >= 2, 20),
              "nofit: the 2 members that fit are rejected at Permit's timeout (%r)\n%s"
              % (want, sx.logtext()))
        full = [e for e in api.control("records")["events"]
                if e.get("reason") == "FailedScheduling" and "Insufficient cpu" in e.get("note", "")]
        check(full, "nofit: the members that do not fit fail with Insufficient cpu")
        check(bindings(api) == [], "nofit: no member bound: %r" % bindings(api))
        # What the waiting members held is released: once rejected, the
        # members that did not fit can take it (and wait in turn), and
        # still nothing binds.
        time.sleep(TIMEOUT_MS / 1000 + 1)
        check(bindings(api) == [], "nofit: still none bound: %r" % bindings(api))
        check(sx.stop() == 0, "nofit: clean exit")
    finally:
        api.stop()


def test_gate_off(tmp):
    pods = [member("w-%d" % i, "big") for i in range(4)]
    api, sx = start(tmp, "off", [node("n1")], pod_group("big", 4), pods)
    try:
        check(wait_for(lambda: len(bindings(api)) == 2, 20),
              "off: without GenericWorkload the 2 pods that fit are bound: %r" % bindings(api))
        time.sleep(1)
        check(len(bindings(api)) == 2, "off: and only they")
        check(sx.stop() == 0, "off: clean exit")
    finally:
        api.stop()


def test_group_after_pods(tmp):
    pods = [member("w-%d" % i, "late") for i in range(4)]
    api, sx = start(tmp, "late", [node("n1"), node("n2")], None, pods,
                    "--feature-gates", "GenericWorkload=true")
    try:
        time.sleep(1)
        check(bindings(api) == [], "late: nothing bound before the PodGroup exists")
        api.apply([{"op": "create", "object": pod_group("late", 4)}])
        check(wait_for(lambda: len(bindings(api)) == 4, 10),
              "late: the PodGroup's arrival requeues its members, all bound: %r\n%s"
              % (bindings(api), sx.logtext()))
        check(sx.stop() == 0, "late: clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_gang_fits, test_gang_does_not_fit, test_gate_off,
                        test_group_after_pods]))
