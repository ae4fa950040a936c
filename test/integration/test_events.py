#!/usr/bin/env python3
"""Events, shutdown and what the API server sees of the standalone
scheduler's client (issues 29 and 31), against the fake API server:

* a burst of 2,000 pods gets 2,000 `Scheduled` events, every one accepted
  by the fake's events.k8s.io/v1 validation, the last of them shortly
  after the last binding (the client's qps/burst, not a fixed budget);
* a pod that keeps failing makes one FailedScheduling event and one
  series patch (count 2), as client-go's broadcaster does, not one
  event object per attempt;
* SIGTERM with hundreds of events still queued: the process exits within
  a few seconds, every binding made stays, and the events not sent are
  counted in one log line;
* the fake refuses the events kube-apiserver refuses (exact messages);
* the User-Agent of each client is client-go's form, without repetition;
* leader election logs "attempting", then "successfully acquired", then
  "scheduling", never "waiting for the lease" once it holds it;
* while the API server is unreachable, each pod's failed status patch is
  logged once at the default level, not at every retry.
"""
import collections
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402
from test_chaos import Proxy, node, pod, wait_for  # noqa: E402

NS = {"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}


def start(tmp, name, nodes, *extra, proxy=False):
    api = FakeApi(tmp, "--history", "20000")
    api.apply([NS] + [{"op": "create", "object": node("node-%d" % i, "64")}
                      for i in range(nodes)])
    px = Proxy(api.port) if proxy else None
    kc = os.path.join(tmp, name + ".kubeconfig")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % (px.port if px else api.port))
    sx = Serve(tmp, kc, name, "--standalone", *extra)
    check(sx.wait_ready(30), "%s: schedext ready" % name)
    return api, px, sx


def bound(api):
    return sum(1 for p in api.control("state")["objects"]["pods"] if p["spec"].get("nodeName"))


def scheduled(api):
    return [e for e in api.control("records")["events"] if e.get("reason") == "Scheduled"]


def refused(rec):
    return [w for w in rec["event_writes"] if "code" in w]


def test_burst_2000_scheduled_events(tmp):
    api, _, sx = start(tmp, "burst", 40, "--kube-api-qps", "5000", "--kube-api-burst", "10000")
    try:
        names = ["p-%d" % i for i in range(2000)]
        api.apply([{"op": "create", "object": pod(n, "10m")} for n in names])
        check(wait_for(lambda: len(api.control("records")["accepted_bindings"]) >= 2000, 120),
              "burst: 2,000 pods bound")
        wait_for(lambda: len(scheduled(api)) >= 2000, 30)
        rec = api.control("records")
        ev = [e for e in rec["events"] if e.get("reason") == "Scheduled"]
        got = collections.Counter(e["regarding"]["name"] for e in ev)
        check(len(ev) == 2000 and set(got) == set(names) and max(got.values()) == 1,
              "burst: one Scheduled event per pod (%d events, %d pods)" % (len(ev), len(got)))
        check(refused(rec) == [], "burst: the API server refused none (%r)" % refused(rec)[:2])
        last_bind = max(b["received"] for b in rec["accepted_bindings"])
        last_event = max(w["received"] for w in rec["event_writes"])
        lag = last_event - last_bind
        check(lag < 2.0, "burst: last event %.2fs after the last binding (< 2 s)" % lag)
        code, metrics = http("GET", sx.url + "/metrics")
        dropped = [l for l in metrics.splitlines() if l.startswith("schedext_events_dropped_total")]
        check(code == 200 and dropped == [], "burst: no event dropped (%r)" % dropped)
        print("burst: %d of 2000 Scheduled events, last %.2fs after the last binding"
              % (len(ev), lag))
        check(sx.stop() == 0, "burst: clean exit")
    finally:
        api.stop()


def test_failed_scheduling_series(tmp):
    api, _, sx = start(tmp, "series", 2, "--kube-api-qps", "1000", "--kube-api-burst", "2000",
                       "-v=2")
    try:
        huge = pod("huge", "100")
        api.apply([{"op": "create", "object": huge}])
        # each node added has the CPU but a taint: NodeResourcesFit's hint
        # retries the pod (after its backoff), and TaintToleration fails it
        for i in range(4):
            time.sleep(2.5)
            big = node("tainted-%d" % i, "200")
            big["spec"] = {"taints": [{"key": "x", "value": "y", "effect": "NoSchedule"}]}
            api.apply([{"op": "create", "object": big}])

        def attempts():
            text = sx.logtext()
            return text.count("scheduling work/huge failed")
        wait_for(lambda: attempts() >= 3, 20)
        time.sleep(1.0)
        rec = api.control("records")
        mine = [w for w in rec["event_writes"] if w["name"].startswith("huge.")]
        verbs = [w["verb"] for w in mine]
        check(verbs == ["create", "patch"],
              "series: one create and one series patch for %d attempts (%r)" % (attempts(), verbs))
        check(mine[1:] and mine[1]["series"]["count"] == 2 and
              mine[1]["name"] == mine[0]["name"],
              "series: the patch sets series.count 2 on the same event (%r)" % mine[1:])
        ev = [e for e in rec["events"] if e["regarding"]["name"] == "huge"]
        check(len(ev) == 1 and ev[0]["series"]["count"] == 2 and
              ev[0]["reason"] == "FailedScheduling", "series: the stored event %r" % ev)
        check(refused(rec) == [], "series: nothing refused (%r)" % refused(rec))
        check(sx.stop() == 0, "series: clean exit")
    finally:
        api.stop()


def test_shutdown_with_events_queued(tmp):
    api, _, sx = start(tmp, "shutdown", 10, "--kube-api-qps", "5000", "--kube-api-burst", "10000")
    try:
        # the API server takes 100 ms per event: they pile up behind the
        # bindings, as behind a slow or rate-limited events endpoint
        api.control("faults", {"event_delay_ms": 100})
        api.apply([{"op": "create", "object": pod("p-%d" % i, "10m")} for i in range(600)])
        check(wait_for(lambda: len(api.control("records")["accepted_bindings"]) >= 600, 60),
              "shutdown: 600 pods bound")
        t0 = time.time()
        rc = sx.stop(timeout=60)
        took = time.time() - t0
        check(rc == 0, "shutdown: exit code %r" % rc)
        check(took < 5.0, "shutdown: exited %.1fs after SIGTERM (< 5 s)" % took)
        sent = len(scheduled(api))
        lines = [l for l in sx.logtext().splitlines() if "still queued at shutdown" in l]
        want = "events: %d events still queued at shutdown were not sent" % (600 - sent)
        check(len(lines) == 1 and lines[0].endswith(want),
              "shutdown: one line %r (got %r)" % (want, lines))
        check(bound(api) == 600, "shutdown: every binding made stays (%d)" % bound(api))
        print("shutdown: %.1fs after SIGTERM, %d of 600 events sent" % (took, sent))
    finally:
        api.stop()


def post_event(api, body, ns="work"):
    return http("POST", "http://127.0.0.1:%d/apis/events.k8s.io/v1/namespaces/%s/events"
                % (api.port, ns), body)


def good_event(**kw):
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "p.1", "namespace": "work"},
          "eventTime": "2025-06-01T12:00:06.518211Z", "reportingController": "default-scheduler",
          "reportingInstance": "default-scheduler-host", "action": "Scheduling",
          "reason": "Scheduled", "type": "Normal", "note": "ok",
          "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "work", "name": "p"}}
    for k, v in kw.items():
        if v is None:
            ev.pop(k, None)
        else:
            ev[k] = v
    return ev


def test_fake_validates_events_like_the_apiserver(tmp):
    api = FakeApi(tmp)
    try:
        api.apply([NS])
        pre = 'Event.events.k8s.io "p.1" is invalid: '
        cases = [
            (good_event(reportingController=None), pre + "reportingController: Required value"),
            (good_event(reportingInstance=None), pre + "reportingInstance: Required value"),
            (good_event(action=None), pre + "action: Required value"),
            (good_event(reason=None), pre + "reason: Required value"),
            (good_event(note="x" * 1025),
             pre + 'message: Invalid value: "": can have at most 1024 characters'),
            (good_event(reportingInstance="i" * 129),
             pre + 'reportingInstance: Invalid value: "": can have at most 128 characters'),
            (good_event(eventTime=None), pre + "eventTime: Required value"),
            (good_event(type="Info"), pre + 'type: Invalid value: "": has invalid value: Info'),
            (good_event(series={"count": 1, "lastObservedTime": "2025-06-01T12:00:07.000000Z"}),
             pre + 'series.count: Invalid value: "": should be at least 2'),
            (good_event(regarding=None),
             pre + 'involvedObject.namespace: Invalid value: "": does not match event.namespace'),
            (good_event(deprecatedCount=3), pre + 'count: Invalid value: "": needs to be unset'),
            (good_event(reason=None, action=None),
             pre + "[action: Required value, reason: Required value]"),
        ]
        for body, want in cases:
            code, out = post_event(api, body)
            msg = out.get("message") if isinstance(out, dict) else out
            check(code == 422 and msg == want, "validation: %d %r, want 422 %r" % (code, msg, want))
        code, out = post_event(api, good_event())
        check(code == 201, "validation: a valid event is created (%d %r)" % (code, out))
        code, out = post_event(api, good_event())
        check(code == 409 and out.get("reason") == "AlreadyExists",
              "validation: the same name again is 409 AlreadyExists (%d)" % code)
        url = "http://127.0.0.1:%d/apis/events.k8s.io/v1/namespaces/work/events/" % api.port
        code, out = http("PATCH", url + "p.1", {"series": {"count": 2}})
        check(code == 415, "validation: a JSON PATCH without a patch type is 415 (%d)" % code)
        import urllib.request
        req = urllib.request.Request(url + "nope", method="PATCH", data=json.dumps(
            {"series": {"count": 2, "lastObservedTime": "2025-06-01T12:00:07.000000Z"}}).encode(),
            headers={"Content-Type": "application/strategic-merge-patch+json"})
        try:
            urllib.request.urlopen(req, timeout=10)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        check(code == 404, "validation: a series patch of a missing event is 404 (%d)" % code)
    finally:
        api.stop()


UA = re.compile(r"^schedext/v\d+\.\d+\.\d+ \(linux/[a-z0-9]+\) kubernetes/([0-9a-f]{7}|unknown)"
                r"(/scheduler|/leader-election)?$")


def test_user_agent_and_leader_log(tmp):
    api, _, sx = start(tmp, "lease", 2, "--leader-elect", "--leader-elect-namespace", "work")
    try:
        api.apply([{"op": "create", "object": pod("one", "10m")}])
        check(wait_for(lambda: len(scheduled(api)) >= 1, 20), "lease: the pod was scheduled")
        uas = api.control("records")["user_agents"]
        check(uas and all(UA.match(u) for u in uas), "user agents %r" % sorted(uas))
        roles = sorted((UA.match(u).group(2) or "") for u in uas if UA.match(u))
        check(roles == ["", "/leader-election", "/scheduler"],
              "user agents: events, leader election, scheduler (%r)" % roles)
        lines = [l.split(" ", 2)[2] for l in sx.logtext().splitlines()
                 if "lease" in l or "standalone scheduler:" in l]
        order = [i for i, l in enumerate(lines) if
                 l.startswith("leader election: attempting to acquire leader lease work/schedext") or
                 l.startswith("leader election: successfully acquired lease work/schedext") or
                 l == "standalone scheduler: scheduling"]
        check(len(order) == 3 and order == sorted(order) and
              lines[order[0]].startswith("leader election: attempting") and
              lines[order[2]] == "standalone scheduler: scheduling",
              "lease: attempting, acquired, scheduling in that order (%r)" % lines)
        check(not any("waiting for the lease" in l for l in lines),
              "lease: no 'waiting for the lease' while holding it (%r)" % lines)
        check(sx.stop() == 0, "lease: clean exit")
    finally:
        api.stop()


def test_outage_logs_each_pod_once(tmp):
    # 40 requests/s: the bindings take seconds, so many fail in the outage
    api, px, sx = start(tmp, "outage", 4, "--kube-api-qps", "40", "--kube-api-burst", "1",
                        proxy=True)
    try:
        api.apply([{"op": "create", "object": pod("p-%d" % i, "10m")} for i in range(120)])
        wait_for(lambda: len(api.control("records")["accepted_bindings"]) >= 5, 30, step=0.05)
        px.down(8)
        time.sleep(8)
        check(wait_for(lambda: bound(api) == 120, 90), "outage: every pod bound after it")
        lines = [l for l in sx.logtext().splitlines() if "patching status of work/" in l]
        per_pod = collections.Counter(l.split("patching status of ")[1].split(":")[0]
                                      for l in lines)
        check(per_pod and max(per_pod.values()) == 1,
              "outage: %d lines for %d pods, each pod at most once (%r)"
              % (len(lines), len(per_pod), per_pod.most_common(3)))
        check(all(l.startswith("I") for l in lines), "outage: at the info level")
        print("outage: %d 'patching status' lines for %d pods" % (len(lines), len(per_pod)))
        check(sx.stop() == 0, "outage: clean exit")
    finally:
        px.close()
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_events.py", [
        test_fake_validates_events_like_the_apiserver, test_burst_2000_scheduled_events,
        test_failed_scheduling_series, test_shutdown_with_events_queued,
        test_user_agent_and_leader_log, test_outage_logs_each_pod_once]))
