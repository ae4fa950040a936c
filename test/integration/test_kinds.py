#!/usr/bin/env python3
"""Kinds of include/schedext/kinds.def end to end: the fake API server
serves every watched row of the table (test/fakeapi/fakeapi.py reads it),
and `schedext serve` lists and watches each of them. DeviceTaintRule
(resource.k8s.io/v1), the last row added, is the witness: its list
reaches the cache, and its watch events reach its decoder."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402


def rule(name, key="example.com/maintenance"):
    return {"kind": "DeviceTaintRule", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name},
            "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                     "taint": {"key": key, "effect": "NoSchedule"}}}


def wait_for(fn, timeout, step=0.1):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def test_device_taint_rules(tmp):
    api = FakeApi(tmp)
    try:
        url = "http://127.0.0.1:%d" % api.port
        api.apply([{"op": "create", "object": rule("maintenance")},
                   {"op": "create", "object": {
                       "kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
                       "metadata": {"name": "train-0", "namespace": "default"},
                       "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}}])
        code, out = http("GET", url + "/apis/resource.k8s.io/v1/devicetaintrules")
        check(code == 200 and len(out.get("items", [])) == 1,
              "the fake serves DeviceTaintRules: %r %r" % (code, out))
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, url)
        sx = Serve(tmp, kc, "sx-kinds", "-v=2")
        check(sx.wait_ready(), "schedext ready")
        check(wait_for(lambda: "listed 1 devicetaintrules" in sx.logtext(), 10),
              "the DeviceTaintRule list reached the cache:\n" + sx.logtext())
        check(wait_for(lambda: "listed 1 podgroups" in sx.logtext(), 10),
              "the scheduling.k8s.io/v1beta1 PodGroup list reached the cache")
        for res in ("nodes", "pods", "csistoragecapacities", "resourceslices", "workloads"):
            check("listed 0 %s" % res in sx.logtext(), "listed %s" % res)
        check("continuing without it" not in sx.logtext(), "every watched kind is served")
        # a watch event of the kind goes through its decoder: a rule the
        # decoder refuses (taint.key not a string) is reported by name
        api.apply([{"op": "create", "object": rule("broken", key=7)}])
        check(wait_for(lambda: "devicetaintrules: cannot decode" in sx.logtext()
                       and "broken" in sx.logtext(), 10),
              "the watch event reached the decoder:\n" + sx.logtext())
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


def test_cosched_pod_groups(tmp):
    """Two kinds named PodGroup: scheduler-plugins' CRD
    (scheduling.x-k8s.io/v1alpha1) is served and listed apart from the
    Workload API's (scheduling.k8s.io/v1beta1)."""
    api = FakeApi(tmp)
    try:
        url = "http://127.0.0.1:%d" % api.port
        api.apply([{"op": "create", "object": {
            "kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": "pg1", "namespace": "default"},
            "spec": {"minMember": 3}}}])
        code, out = http("GET", url + "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups")
        items = out.get("items", []) if code == 200 else []
        check(len(items) == 1 and items[0]["spec"] == {"minMember": 3},
              "the fake serves the CRD's podgroups: %r %r" % (code, out))
        check(out.get("apiVersion") == "scheduling.x-k8s.io/v1alpha1" and
              out.get("kind") == "PodGroupList", "its list: %r" % out)
        code, out = http("GET", url + "/apis/scheduling.k8s.io/v1beta1/podgroups")
        check(code == 200 and out.get("items") == [],
              "the Workload API's podgroups are another collection: %r" % out)
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, url)
        sx = Serve(tmp, kc, "sx-kinds", "-v=2")
        check(sx.wait_ready(), "schedext ready")
        check(wait_for(lambda: "listed 1 podgroups" in sx.logtext()
                       and "listed 0 podgroups" in sx.logtext(), 10),
              "one PodGroup list of each group reached the cache:\n" + sx.logtext())
        check("continuing without it" not in sx.logtext(), "every watched kind is served")
        check(sx.stop() == 0, "clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__), [test_device_taint_rules,
                                                    test_cosched_pod_groups]))
