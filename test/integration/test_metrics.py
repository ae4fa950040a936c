#!/usr/bin/env python3
"""kube-scheduler's metrics on /metrics, same names and labels, in extender
mode (the framework runs on each request) and standalone (the scheduling
loop): every family a kube-scheduler dashboard reads is listed in both,
and the series a workload produces carry the expected labels and counts."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, Server, check, http, run_tests, write_kubeconfig  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FAMILIES = [
    "scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds",
    "scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pod_scheduling_attempts",
    "scheduler_pending_pods", "scheduler_queue_incoming_pods_total",
    "scheduler_unschedulable_pods", "scheduler_framework_extension_point_duration_seconds",
    "scheduler_plugin_execution_duration_seconds", "scheduler_plugin_evaluation_total",
    "scheduler_preemption_attempts_total", "scheduler_preemption_victims",
    "scheduler_permit_wait_duration_seconds", "scheduler_scheduler_cache_size",
    "scheduler_event_handling_duration_seconds",
    "scheduler_queueing_hint_execution_duration_seconds",
    "process_resident_memory_bytes", "process_open_fds",
]


def families(text):
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M))


def value(text, series):
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def node(name, cpu="4"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name, cpu="100m"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu}}}]}}


def test_extender_mode(tmp):
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    srv = Server("--state", demo)
    try:
        body = open(os.path.join(ROOT, "extender-config", "examples", "filter-nodenames.json")).read()
        for _ in range(20):
            status, _, _ = srv.request("POST", "/filter", body)
            check(status == 200, "filter")
            srv.request("POST", "/prioritize", body)
        status, text = srv.get("/metrics")
        text = text.decode()
        missing = [f for f in FAMILIES if f not in families(text)]
        check(not missing, f"extender mode lists every family, missing {missing}")
        pf = ('scheduler_framework_extension_point_duration_seconds_count{extension_point='
              '"PreFilter",status="Success",profile="default-scheduler"}')
        ps = pf.replace('"PreFilter"', '"PreScore"')
        check(value(text, pf) == 20 and value(text, ps) == 20,
              f"PreFilter once per filter, PreScore once per prioritize: {value(text, pf)} "
              f"{value(text, ps)}")
        check(value(text, 'scheduler_scheduler_cache_size{type="nodes"}') == 7, "cache size")
        ev = ('scheduler_plugin_evaluation_total{plugin="TaintToleration",extension_point='
              '"Filter",profile="default-scheduler"}')
        check((value(text, ev) or 0) >= 20, f"filter evaluations counted: {value(text, ev)}")
        sampled = re.findall(r'^scheduler_plugin_execution_duration_seconds_count\{plugin='
                             r'"NodeResourcesFit",extension_point="PreFilter",status="Success"\} '
                             r'(\d+)', text, re.M)
        check(sampled and 1 <= int(sampled[0]) <= 4,
              f"plugin durations sampled in 10% of the 20 filter cycles: {sampled}")
        check('le="1e-05"' in text or 'le="1e-05"' in text.replace("1.0000000000000001e-05", "1e-05"),
              "plugin duration buckets start at 10us")
    finally:
        srv.kill()


def test_standalone(tmp):
    api = FakeApi(tmp)
    try:
        api.apply([{"op": "upsert", "object": o} for o in
                   [node("n1"), node("n2")] + [pod("p%d" % i) for i in range(10)] +
                   [pod("huge", cpu="64")]])
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        sx = Serve(tmp, kc, "metrics", "--standalone")
        check(sx.wait_ready(), "ready")
        end = time.time() + 30
        text = ""
        while time.time() < end:
            _, text = http("GET", sx.url + "/metrics")
            if value(text, 'scheduler_schedule_attempts_total{result="scheduled",'
                           'profile="default-scheduler"}') == 10 and \
                    value(text, 'scheduler_unschedulable_pods{plugin="NodeResourcesFit",'
                                'profile="default-scheduler"}') == 1:
                break
            time.sleep(0.5)
        missing = [f for f in FAMILIES if f not in families(text)]
        check(not missing, f"standalone lists every family, missing {missing}")
        for series, want in (
                ('scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"}', 10),
                ('scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"}', 1),
                ('scheduler_pod_scheduling_attempts_count', 10),
                ('scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}', 10),
                ('scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"}', 11),
                ('scheduler_queue_incoming_pods_total{queue="unschedulable",event="ScheduleAttemptFailure"}', 1),
                ('scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"}', 1),
                ('scheduler_pending_pods{queue="unschedulable"}', 1),
                ('scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",'
                 'status="Success",profile="default-scheduler"}', 10),
        ):
            check(value(text, series) == want, f"{series} = {value(text, series)}, want {want}")
        check((value(text, 'scheduler_event_handling_duration_seconds_count{event="AssignedPodUpdate"}')
               or 0) >= 1, "event handling observed")
        # a new big node: NodeResourcesFit's hint says Queue
        api.apply([{"op": "upsert", "object": node("big", cpu="128")}])
        end = time.time() + 20
        while time.time() < end:
            _, text = http("GET", sx.url + "/metrics")
            if value(text, 'scheduler_queue_incoming_pods_total{queue="active",event="NodeAdd"}') or \
               value(text, 'scheduler_queue_incoming_pods_total{queue="backoff",event="NodeAdd"}'):
                break
            time.sleep(0.5)
        check(value(text, 'scheduler_queue_incoming_pods_total{queue="active",event="NodeAdd"}') or
              value(text, 'scheduler_queue_incoming_pods_total{queue="backoff",event="NodeAdd"}'),
              "the NodeAdd event moved the pod: " +
              " ".join(l for l in text.splitlines() if "incoming_pods_total{" in l))
        check(re.search(r'^scheduler_queueing_hint_execution_duration_seconds_count\{plugin='
                        r'"NodeResourcesFit",event="NodeAdd",hint="Queue"\} 1$', text, re.M),
              "hint duration recorded: " +
              " ".join(l for l in text.splitlines() if "hint_execution_duration_seconds_count" in l))
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_metrics.py", [test_extender_mode, test_standalone]))
