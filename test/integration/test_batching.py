#!/usr/bin/env python3
"""Opportunistic batching end to end: the standalone scheduler against
test/fakeapi/fakeapi.py, 1,000 identical pods of one Deployment-like
template on 1,000 nodes.

Each pod asks for host port 8080, so a node holds one of them: the
"one pod per node" shape upstream's batching is for (runtime/batch.go
reuses the previous cycle's sorted nodes only when the node chosen last
can no longer take the next pod). The profile clears PodTopologySpread's
default constraints (defaultingType: List), as upstream's batching test
does, and runs as 1.35, whose NodeResourcesFit signs pods (from 1.36
DRAExtendedResource is on, and Fit.SignPod then signs nothing).

(a) Gate on: every pod is bound, each on its own node, and
    scheduler_batch_attempts_total{result="hint_used"} counts most of them.
(b) Gate off (--feature-gates=OpportunisticBatching=false): the same pods
    are bound the same way and no scheduler_batch_* series counts.
(c) The default profile (PodTopologySpread's system defaults) signs no
    pod: every pod counts no_hint, none hint_used.
"""
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402

NODES = 1000
PODS = 1000

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "pluginConfig": [{"name": "PodTopologySpread",
                                    "args": {"defaultingType": "List"}}]}],
}


def node(i):
    name = "node-%04d" % i
    res = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {"kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone":
                                                  "zone-%d" % (i % 3)}},
            "spec": {}, "status": {"allocatable": res, "capacity": res}}


def pod(i):
    return {"kind": "Pod",
            "metadata": {"name": "web-%04d" % i, "namespace": "work",
                         "labels": {"app": "web"}},
            "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27",
                "ports": [{"containerPort": 8080, "hostPort": 8080}],
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]},
            "status": {"phase": "Pending"}}


def wait_for(fn, timeout, step=0.5):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def bindings(api):
    out = {}
    for p in api.control("state")["objects"]["pods"]:
        if p["metadata"]["namespace"] == "work" and p["spec"].get("nodeName"):
            out[p["metadata"]["name"]] = p["spec"]["nodeName"]
    return out


def metrics(sx):
    code, body = http("GET", sx.url + "/metrics")
    assert code == 200, code
    text = body if isinstance(body, str) else json.dumps(body)
    series = {}
    for line in text.splitlines():
        m = re.match(r'^(scheduler_batch_\w+|scheduler_batch_cache_flushed_total)'
                     r'(\{[^}]*\})? (\S+)$', line)
        if m:
            series[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return series


def run(tmp, tag, extra, config=True):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
    api.apply([{"op": "create", "object": node(i)} for i in range(NODES)])
    api.apply([{"op": "create", "object": pod(i)} for i in range(PODS)])
    args = ["--standalone"] + extra
    if config:
        path = os.path.join(tmp, "config-%s.json" % tag)
        with open(path, "w") as f:
            json.dump(CONFIG, f)
        args += ["--config", path]
    sx = Serve(tmp, kc, "sx-" + tag, *args)
    try:
        check(wait_for(lambda: len(bindings(api)) == PODS, 180),
              "%s: every pod bound (%d of %d)" % (tag, len(bindings(api)), PODS))
        b = bindings(api)
        check(len(set(b.values())) == PODS,
              "%s: one pod per node (host port 8080), %d nodes used" % (tag, len(set(b.values()))))
        m = metrics(sx)
        check(sx.stop() == 0, "%s: clean exit" % tag)
        return m
    finally:
        api.stop()


def key(name, **labels):
    return name + "{" + ",".join('%s="%s"' % kv for kv in labels.items()) + "}"


def test_batching_on(tmp):
    m = run(tmp, "on", ["--emulated-version=1.35"])
    used = m.get(key("scheduler_batch_attempts_total", profile="default-scheduler",
                     result="hint_used"), 0)
    no_hint = m.get(key("scheduler_batch_attempts_total", profile="default-scheduler",
                        result="no_hint"), 0)
    print("batching on: hint_used %d, no_hint %d, flushes %r" % (
        used, no_hint, {k: v for k, v in m.items() if "flushed" in k}))
    check(used >= PODS * 0.8, "hint_used counts most pods: %d of %d" % (used, PODS))
    check(used + no_hint >= PODS, "every cycle asked for a hint: %d + %d" % (used, no_hint))


def test_batching_off(tmp):
    m = run(tmp, "off", ["--emulated-version=1.35", "--feature-gates=OpportunisticBatching=false"])
    counted = {k: v for k, v in m.items() if v and ("_total" in k or "_count" in k)}
    check(not counted, "no scheduler_batch_* series counts with the gate off: %r" % counted)


def test_default_profile_signs_nothing(tmp):
    m = run(tmp, "default", ["--emulated-version=1.35"], config=False)
    used = m.get(key("scheduler_batch_attempts_total", profile="default-scheduler",
                     result="hint_used"), 0)
    no_hint = m.get(key("scheduler_batch_attempts_total", profile="default-scheduler",
                        result="no_hint"), 0)
    check(used == 0, "no hint with system default spreading: %d" % used)
    check(no_hint >= PODS, "every pod counted no_hint: %d" % no_hint)


def main():
    return run_tests("test_batching.py",
                     (test_batching_on, test_batching_off, test_default_profile_signs_nothing))


if __name__ == "__main__":
    sys.exit(main())
