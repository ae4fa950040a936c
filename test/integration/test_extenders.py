#!/usr/bin/env python3
"""Standalone scheduling with an `extenders:` stanza,
against test/fakeapi/fakeapi.py:

(a) a second schedext process serves the extender verbs with a profile
    that only accepts nodes labelled accept=yes; the standalone scheduler
    calls it twice (nodeCacheCapable true: names; false: full Node
    objects), filter and prioritize, and every pod is bound only on an
    accepted node;
(b) a small Python extender that answers 500, sleeps past httpTimeout or
    sends garbage: the pod gets PodScheduled=False/SchedulerError with
    kube-scheduler's exact error text; the same extender marked ignorable
    is skipped and pods bind;
(c) bindVerb: the Python extender binds (POSTs the Binding itself) instead
    of DefaultBinder; managedResources: it is called only for pods that
    request example.com/widget, and ignoredByScheduler lets such pods fit
    nodes that do not advertise the resource.
"""
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def node(i, accept):
    name = "node-%d" % i
    lb = {"kubernetes.io/hostname": name}
    if accept:
        lb["accept"] = "yes"
    return {"kind": "Node", "metadata": {"name": name, "labels": lb}, "spec": {},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name, ns="work", widget=False):
    req = {"cpu": "100m", "memory": "64Mi"}
    if widget:
        req["example.com/widget"] = "1"
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": req}}]},
            "status": {"phase": "Pending"}}


def pods_state(api, prefix):
    return [p for p in api.control("state")["objects"]["pods"]
            if p["metadata"]["name"].startswith(prefix)]


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


class PyExtender:
    """A test extender: mode "ok" passes every node but node-0 (listed in
    FailedNodes), "500" answers 500, "slow" sleeps 3 s, "garbage" answers
    non-JSON, "error" sets Error. bind POSTs the Binding to the API."""

    def __init__(self, api_port):
        self.calls = []
        self.mode = "ok"
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.rsplit("/", 1)[-1]
                outer.calls.append((verb, body))
                mode = outer.mode
                if mode == "500":
                    return self.reply(500, b"boom")
                if mode == "slow":
                    time.sleep(3)
                if mode == "garbage":
                    return self.reply(200, b"<html>")
                if verb == "filter":
                    names = body.get("NodeNames") or [
                        n["metadata"]["name"] for n in (body.get("Nodes") or {}).get("items", [])]
                    out = {"FailedNodes": {"node-0": "widget: no free widget"}}
                    if body.get("NodeNames") is not None:
                        out["NodeNames"] = [n for n in names if n != "node-0"]
                    else:  # echo the mode: full objects in, full objects out
                        out["Nodes"] = {"metadata": {}, "items": [
                            n for n in body["Nodes"]["items"] if n["metadata"]["name"] != "node-0"]}
                    if mode == "error":
                        out = {"Error": "widget inventory not synchronized"}
                    return self.reply(200, json.dumps(out).encode())
                if verb == "bind":
                    b = {"apiVersion": "v1", "kind": "Binding",
                         "metadata": {"name": body["PodName"], "namespace": body["PodNamespace"],
                                      "uid": body["PodUID"]},
                         "target": {"kind": "Node", "name": body["Node"]}}
                    code, out = http("POST", "http://127.0.0.1:%d/api/v1/namespaces/%s/pods/%s/binding"
                                     % (api_port, body["PodNamespace"], body["PodName"]), b)
                    err = "" if code == 201 else str(out)
                    return self.reply(200, json.dumps({"Error": err}).encode())
                return self.reply(404, b"")

            def reply(self, code, data):
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        self.url = "http://127.0.0.1:%d/x" % self.port
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def sched_config(tmp, name, extenders):
    return write(os.path.join(tmp, name + ".json"),
                 {"apiVersion": "kubescheduler.config.k8s.io/v1",
                  "kind": "KubeSchedulerConfiguration", "extenders": extenders})


def start(tmp, api, name, extenders, *extra):
    kc = os.path.join(tmp, "kc-%s.json" % name)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    cfg = sched_config(tmp, name, extenders)
    sx = Serve(tmp, kc, name, "--standalone", "-v=2", "--config", cfg, *extra)
    check(sx.wait_ready(), "%s ready" % name)
    return sx


def test_schedext_extender(tmp):
    api = FakeApi(tmp)
    try:
        api.apply([{"op": "create", "object": node(i, i % 2 == 0)} for i in range(10)])
        kc = os.path.join(tmp, "kc-ext.json")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        prof = write(os.path.join(tmp, "ext-profile.json"), {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeAffinity", "args": {"addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "accept", "operator": "In",
                                               "values": ["yes"]}]}]}}}}]}]})
        ext = Serve(tmp, kc, "extender", "--config", prof)
        check(ext.wait_ready(), "extender process ready")
        exts = [{"urlPrefix": ext.url + "/", "filterVerb": "filter", "prioritizeVerb": "prioritize",
                 "weight": 2, "nodeCacheCapable": True, "httpTimeout": "5s"},
                {"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": False}]
        sx = start(tmp, api, "standalone", exts)
        api.apply([{"op": "create", "object": pod("p-%d" % i)} for i in range(60)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_state(api, "p-")), 30),
              "every pod bound")
        nodes = {p["spec"].get("nodeName") for p in pods_state(api, "p-")}
        check(nodes and all(n and int(n.split("-")[1]) % 2 == 0 for n in nodes),
              "only nodes the extender accepted: %s" % sorted(n or "" for n in nodes))
        check(len(nodes) > 1, "spread over several accepted nodes: %s" % sorted(nodes))
        # A pod the extender rejects everywhere: the FitError names its reasons.
        api.apply([{"op": "update", "object": node(i, False)} for i in range(0, 10, 2)])
        time.sleep(0.5)
        api.apply([{"op": "create", "object": pod("nowhere")}])
        want = ("0/10 nodes are available: 10 node(s) didn't match scheduler-enforced node "
                "affinity.")

        def cond():
            for p in pods_state(api, "nowhere"):
                for c in (p.get("status") or {}).get("conditions") or []:
                    if c.get("type") == "PodScheduled":
                        return c
            return None
        # (PostFilter parts follow: DRA's, then "preemption: ...".)
        check(wait_for(lambda: ((cond() or {}).get("message") or "").startswith(want), 15),
              "FitError from the extender's FailedAndUnresolvableNodes: %r" % (cond(),))
        # The extender client's own series: calls by verb and result, and their latency.
        code, text = http("GET", sx.url + "/metrics")
        lbl = 'extender="%s/",verb="filter"' % ext.url
        calls = [l for l in text.splitlines()
                 if l.startswith('schedext_extender_requests_total{%s,result="success"} ' % lbl)]
        check(calls and int(float(calls[0].split()[-1])) >= 61,
              "filter calls counted per extender: %r" % calls)
        hist = [l for l in text.splitlines()
                if l.startswith('schedext_extender_request_duration_seconds_count{%s} ' % lbl)]
        check(hist and calls and hist[0].split()[-1] == calls[0].split()[-1],
              "every filter call timed: %r" % hist)
        check('schedext_extender_request_duration_seconds_bucket{%s,le="0.001"}' % lbl in text,
              "latency buckets from 1 ms")
        sx.stop()
        ext.stop()
    finally:
        api.stop()


def condition(api, name):
    for p in pods_state(api, name):
        for c in (p.get("status") or {}).get("conditions") or []:
            if c.get("type") == "PodScheduled":
                return c
    return None


def test_failing_extender(tmp):
    api = FakeApi(tmp)
    py = PyExtender(api.port)
    try:
        api.apply([{"op": "create", "object": node(i, True)} for i in range(4)])
        cases = [("500", "failed filter with extender at URL %s/filter, code 500" % py.url),
                 ("slow", 'Post "%s/filter": context deadline exceeded (Client.Timeout exceeded '
                          'while awaiting headers)' % py.url),
                 ("garbage", "invalid character '<' looking for beginning of value"),
                 ("error", "widget inventory not synchronized")]
        sx = start(tmp, api, "failing", [{"urlPrefix": py.url, "filterVerb": "filter",
                                          "httpTimeout": "500ms"}])
        for i, (mode, want) in enumerate(cases):
            py.mode = mode
            name = "f%d-%s" % (i, mode)
            api.apply([{"op": "create", "object": pod(name)}])
            check(wait_for(lambda: (condition(api, name) or {}).get("message") == want, 15),
                  "%s: SchedulerError %r, got %r" % (mode, want, condition(api, name)))
            c = condition(api, name) or {}
            check(c.get("reason") == "SchedulerError", "%s: reason %r" % (mode, c.get("reason")))
        sx.stop()
        # ignorable: the same failures are skipped and pods bind anywhere.
        py.mode = "500"
        sx = start(tmp, api, "ignorable", [{"urlPrefix": py.url, "filterVerb": "filter",
                                            "ignorable": True, "httpTimeout": "500ms"}])
        api.apply([{"op": "create", "object": pod("ign-%d" % i)} for i in range(5)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_state(api, "ign-")), 20),
              "ignorable extender failing: pods bound")
        sx.stop()
    finally:
        py.stop()
        api.stop()


def test_bind_and_managed(tmp):
    api = FakeApi(tmp)
    py = PyExtender(api.port)
    try:
        api.apply([{"op": "create", "object": node(i, True)} for i in range(4)])
        sx = start(tmp, api, "binder", [{
            "urlPrefix": py.url, "filterVerb": "filter", "bindVerb": "bind",
            "managedResources": [{"name": "example.com/widget", "ignoredByScheduler": True}]}])
        api.apply([{"op": "create", "object": pod("plain-%d" % i)} for i in range(3)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_state(api, "plain-")), 20),
              "pods without the managed resource bound")
        check(not py.calls, "extender not called for uninterested pods: %d calls" % len(py.calls))
        api.apply([{"op": "create", "object": pod("w-%d" % i, widget=True)} for i in range(4)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_state(api, "w-")), 20),
              "widget pods bound although no node advertises example.com/widget")
        on = {p["spec"].get("nodeName") for p in pods_state(api, "w-")}
        check("node-0" not in on, "widget pods avoid node-0 (FailedNodes): %s" % sorted(on))
        binds = [b for v, b in py.calls if v == "bind"]
        check(len(binds) == 4 and {b["PodName"] for b in binds} == {"w-%d" % i for i in range(4)},
              "the extender bound the widget pods: %s" % [b.get("PodName") for b in binds])
        check(set(binds[0]) == {"PodName", "PodNamespace", "PodUID", "Node"} if binds else False,
              "ExtenderBindingArgs fields")
        filters = [b for v, b in py.calls if v == "filter"]
        check(filters and filters[0].get("Nodes") is not None and filters[0].get("NodeNames") is None
              and filters[0]["Pod"]["metadata"]["name"].startswith("w-"),
              "nodeCacheCapable false sends full Node objects and the Pod")
        sx.stop()
    finally:
        py.stop()
        api.stop()


def test_client_qps_from_file(tmp):
    """clientConnection.qps/burst from the file is what the client uses:
    500 bindings finish well inside the 8 s a 50/s limiter would need."""
    api = FakeApi(tmp)
    try:
        api.apply([{"op": "create", "object": node(i, True)} for i in range(10)])
        kc = os.path.join(tmp, "kc-qps.json")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        cfg = write(os.path.join(tmp, "qps.json"), {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"qps": 5000, "burst": 5000}})
        sx = Serve(tmp, kc, "qps", "--standalone", "-v=1", "--config", cfg)
        check(sx.wait_ready(), "qps: ready")
        check("API client: 5000 requests/s, burst 5000" in sx.logtext(),
              "qps: the client runs at the file's rate")
        t0 = time.time()
        api.apply([{"op": "create", "object": pod("q-%d" % i)} for i in range(500)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods_state(api, "q-")), 30),
              "qps: 500 pods bound")
        dt = time.time() - t0
        check(dt < 8.0, "qps: not throttled at 50/s (500 bindings took %.1f s)" % dt)
        sx.stop()
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_schedext_extender, test_failing_extender, test_bind_and_managed,
                        test_client_qps_from_file]))
