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
    "scheduler_permit_wait_duration_seconds", "scheduler_cache_size",
    "scheduler_event_handling_duration_seconds",
    "scheduler_queueing_hint_execution_duration_seconds",
    "scheduler_queued_entities", "scheduler_queue_incoming_entities_total", "scheduler_goroutines",
    "scheduler_preemption_goroutines_duration_seconds",
    "scheduler_preemption_goroutines_execution_total",
    "dynamic_resource_allocation_resourceclaim_creates_total",
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
        check(value(text, 'scheduler_cache_size{type="nodes"}') == 7, "cache size")
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


def series_of(text, family):
    return [l for l in text.splitlines() if re.match(r"%s(_bucket|_sum|_count)?[{ ]" % re.escape(family), l)]


def test_extender_zero_series(tmp):
    """Issue 25: before any request, every family of extender mode has
    series, at 0 (rest_client_* need an API client: --state has none);
    extender verbs are counted under their own name, not as attempts."""
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    srv = Server("--state", demo)
    try:
        _, text = srv.get("/metrics")
        text = text.decode()
        fams = re.findall(r"^# TYPE (\S+) ", text, re.M)
        no_series = [f for f in fams if not series_of(text, f)]
        check(no_series == ["rest_client_requests_total", "rest_client_request_duration_seconds",
                            "schedext_http_requests_total", "schedext_http_request_duration_seconds"],
              f"families without series at start: {no_series}")
        for f in fams:
            if f.startswith("scheduler_") and f != "scheduler_cache_size":
                vals = {float(l.rsplit(" ", 1)[1]) for l in series_of(text, f)}
                check(vals == {0.0}, f"{f}: 0 at start, got {vals}")
        for series, want in (
                ('scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"}', 0),
                ('scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"}', 0),
                ('scheduler_schedule_attempts_total{result="error",profile="default-scheduler"}', 0),
                ('scheduler_pending_pods{queue="gated"}', 0),
                ('scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"}', 0),
                ('scheduler_preemption_attempts_total', 0),
                ('leader_election_master_status{name="schedext"}', 0),
                ('schedext_extender_verb_requests_total{verb="filter",result="feasible"}', 0),
                ('schedext_extender_verb_requests_total{verb="bind",result="error"}', 0)):
            check(value(text, series) == want, f"{series} = {value(text, series)}, want {want}")
        check(re.search(r'^schedext_build_info\{major="\d+",minor="\d+",gitVersion="v[^"]+",.*'
                        r'platform="linux/[^"]+"\} 1$', text, re.M), "schedext_build_info")
        body = open(os.path.join(ROOT, "extender-config", "examples", "filter-nodenames.json")).read()
        srv.request("POST", "/filter", body)
        srv.request("POST", "/prioritize", body)
        _, text = srv.get("/metrics")
        text = text.decode()
        for series, want in (
                ('schedext_extender_verb_requests_total{verb="filter",result="feasible"}', 1),
                ('schedext_extender_verb_requests_total{verb="prioritize",result="scored"}', 1),
                ('scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"}', 0)):
            check(value(text, series) == want, f"after a filter: {series} = {value(text, series)}")
        check("schedext_schedule_attempts_total" not in text, "no attempts counted for verbs")
    finally:
        srv.kill()


# kube-scheduler 1.37's HELP lines (pkg/scheduler/metrics/metrics.go, as
# component-base prints them: "[LEVEL] " and "(Deprecated since V) ").
HELP_137 = {
    "scheduler_schedule_attempts_total": "[STABLE] Number of attempts to schedule pods, by the "
    "result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal "
    "scheduler problem.",
    "scheduler_scheduling_algorithm_duration_seconds": "[BETA] Scheduling algorithm latency in seconds",
    "scheduler_pod_scheduling_sli_duration_seconds": "[BETA] E2e latency for a pod being scheduled, "
    "from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
    "scheduler_plugin_execution_duration_seconds": "[BETA] Duration for running a plugin at a "
    "specific extension point.",
    "scheduler_permit_wait_duration_seconds": "[BETA] Duration of waiting on permit.",
    "scheduler_goroutines": "[BETA] Number of running goroutines split by the work they do such "
    "as binding.",
    "scheduler_unschedulable_pods": "[BETA] The number of unschedulable pods broken down by plugin "
    "name. A pod will increment the gauge for all plugins that caused it to not schedule and so "
    "this metric have meaning only when broken down by plugin.",
    "scheduler_plugin_evaluation_total": "[BETA] Number of attempts to schedule pods by each plugin "
    "and the extension point (available only in PreFilter, Filter, PreScore, and Score).",
    "scheduler_preemption_victims": "[STABLE] Number of selected preemption victims for preemption "
    "initiated by a single pod",
    "scheduler_cache_size": "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the "
    "scheduler cache.",
    "scheduler_queueing_hint_execution_duration_seconds": "[ALPHA] Duration for running a queueing "
    "hint function of a plugin.",
    "scheduler_preemption_goroutines_duration_seconds": "[ALPHA] (Deprecated since 1.37.0) Duration "
    "in seconds for running goroutines for the preemption.",
    "scheduler_preemption_goroutines_execution_total": "[ALPHA] Number of preemption goroutines "
    "executed.",
    "dynamic_resource_allocation_resourceclaim_creates_total": "[ALPHA] Number of ResourceClaims "
    "creation requests, categorized by creation status and admin access",
    "rest_client_requests_total": "[ALPHA] Number of HTTP requests, partitioned by status code, "
    "method, and host.",
}


def helps(text):
    return dict(re.findall(r"^# HELP (\S+) (.*)$", text, re.M))


def test_names_and_stability_137(tmp):
    """1.37's names, stability markers and deprecations; the families
    upstream registers behind SchedulerAsyncPreemption and
    DRAExtendedResource follow the gates; the removed
    scheduler_scheduler_cache_size is gone."""
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    srv = Server("--state", demo)
    try:
        _, text = srv.get("/metrics")
        text = text.decode()
        h = helps(text)
        for name, want in HELP_137.items():
            check(h.get(name) == want, f"HELP {name}: {h.get(name)!r}, want {want!r}")
        check("scheduler_scheduler_cache_size" not in text, "the pre-1.34 name is gone")
        check("scheduler_resourceclaim_creates_total" not in text, "the 1.36 claim counter name is gone")
        for series in ('scheduler_queued_entities{queue="active",type="pod"}',
                       'scheduler_queue_incoming_entities_total{queue="active",event="PodAdd",type="pod"}'):
            check(value(text, series) == 0, f"{series} at 0")
    finally:
        srv.kill()
    srv = Server("--state", demo, "--feature-gates",
                 "SchedulerAsyncPreemption=false,DRAExtendedResource=false", "--emulated-version", "1.36")
    try:
        _, text = srv.get("/metrics")
        fams = families(text.decode())
        for f in ("scheduler_preemption_goroutines_duration_seconds",
                  "scheduler_preemption_goroutines_execution_total",
                  "dynamic_resource_allocation_resourceclaim_creates_total"):
            check(f not in fams, f"{f} not registered with its gate off")
        check("scheduler_queued_entities" in fams, "ungated families stay")
    finally:
        srv.kill()


def test_rest_client(tmp):
    """rest_client_* as client-go exports them, from the API client's
    requests: a live extender binding a pod POSTs the Binding."""
    api = FakeApi(tmp)
    try:
        api.apply([{"op": "upsert", "object": o} for o in [node("n1"), pod("p1")]])
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        sx = Serve(tmp, kc, "rest")
        check(sx.wait_ready(), "ready")
        http("POST", sx.url + "/bind", {"PodName": "p1", "PodNamespace": "default",
                                                     "PodUID": "", "Node": "n1"})
        _, text = http("GET", sx.url + "/metrics")
        host = "127.0.0.1:%d" % api.port
        posts = [l for l in text.splitlines()
                 if l.startswith('rest_client_requests_total{') and 'method="POST",host="%s"' % host in l]
        check(posts, "rest_client_requests_total counts the Binding POST: %r" % series_of(text, "rest_client_requests_total"))
        check(re.search(r'^rest_client_request_duration_seconds_count\{verb="POST",host="%s"\} [1-9]' % re.escape(host),
                        text, re.M), "rest_client_request_duration_seconds{verb,host}")
        check('rest_client_request_duration_seconds_bucket{verb="POST",host="%s",le="0.005"}' % host in text,
              "client-go's latency buckets")
        # the informers' LIST and WATCH requests count too (one LIST and one
        # WATCH per watched kind at least), as client-go's reflectors' do
        m = re.search(r'^rest_client_requests_total\{code="200",method="GET",host="%s"\} (\d+)$'
                      % re.escape(host), text, re.M)
        check(m and int(m.group(1)) >= 4,
              "informers' GETs in rest_client_requests_total: %r" % series_of(text, "rest_client_requests_total"))
        check(re.search(r'^rest_client_request_duration_seconds_count\{verb="GET",host="%s"\} [1-9]' % re.escape(host),
                        text, re.M), "informers' GETs in rest_client_request_duration_seconds")
    finally:
        api.stop()


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
                ('scheduler_queued_entities{queue="unschedulable",type="pod"}', 1),
                ('scheduler_queue_incoming_entities_total{queue="active",event="PodAdd",type="pod"}', 11),
                ('scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",'
                 'status="Success",profile="default-scheduler"}', 10),
        ):
            check(value(text, series) == want, f"{series} = {value(text, series)}, want {want}")
        check((value(text, 'scheduler_goroutines{operation="binding"}') or 0) >= 0 and
              'scheduler_goroutines{operation="binding"}' in text, "binding cycles in flight")
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
    sys.exit(run_tests("test_metrics.py", [test_extender_mode, test_extender_zero_series,
                                           test_names_and_stability_137, test_rest_client,
                                           test_standalone]))
