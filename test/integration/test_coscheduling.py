#!/usr/bin/env python3
"""Coscheduling (scheduler-plugins' gang scheduling over its PodGroup CRD,
scheduling.x-k8s.io/v1alpha1, for clusters without the Workload API) with
the standalone scheduler against test/fakeapi/fakeapi.py, enabled by a
profile as scheduler-plugins' sample configuration does (Coscheduling in
multiPoint, PrioritySort disabled):

(a) a gang of 4 with minMember 4 that fits: the members wait at Permit
    until the fourth is assumed, then all 4 are bound; PostBind writes the
    PodGroup's status (phase Scheduled, scheduled 4);
(b) a gang of 4 with minMember 4 of which only 2 fit binds none: the third
    fits nowhere, and its PostFilter rejects the waiting members
    ("optimistic rejection in PostFilter") and, with podGroupBackoffSeconds,
    backs the group off ("failed recently"); nothing stays held: a plain
    pod that needs the whole node binds;
(c) a group with fewer pods than minMember is refused at PreFilter with
    upstream's words, and binds once its missing member is created;
(d) minResources the cluster cannot hold: refused at PreFilter
    ("resource gap"), nothing bound;
(f) /debug/explain and /debug/pending on a live gang whose members wait
    at Permit (test_explain_waiting);
(e) the configuration: /configz shows CoschedulingArgs with their defaults
    filled in, a negative podGroupBackoffSeconds is refused, an unknown
    args field is a strict decoding error.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402

LABEL = "scheduling.x-k8s.io/pod-group"


def config(tmp, tag, args=None):
    path = os.path.join(tmp, "config-%s.yaml" % tag)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
      disabled:
      - name: PrioritySort
  pluginConfig:
  - name: Coscheduling
    args: %s
""" % (args or "{permitWaitingTimeSeconds: 3}"))
    return path


def node(name, cpu="4"):
    return {"kind": "Node", "metadata": {"name": name,
                                         "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def member(name, group, cpu="1500m"):
    p = {"kind": "Pod", "metadata": {"name": name, "namespace": "work", "uid": "uid-" + name,
                                     "labels": {LABEL: group}},
         "spec": {"containers": [{"name": "c", "image": "busybox",
                                  "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
         "status": {"phase": "Pending"}}
    if group is None:
        del p["metadata"]["labels"]
    return p


def pod_group(name, min_member, min_resources=None):
    spec = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": name, "namespace": "work"}, "spec": spec}


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def start(tmp, tag, nodes, groups, pods, args=None, pods_first=False):
    """pods_first: the pods exist before schedext starts (its first LIST
    has them all), so no member is judged while a sibling's Pod event is
    still on its way."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-" + tag)
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}])
    api.apply([{"op": "create", "object": o} for o in nodes + groups])
    if pods_first:
        api.apply([{"op": "create", "object": p} for p in pods])
    sx = Serve(tmp, kc, "sx-" + tag, "--standalone", "-v=2", "--config", config(tmp, tag, args))
    check(sx.wait_ready(), "%s: schedext ready" % tag)
    if not pods_first:
        api.apply([{"op": "create", "object": p} for p in pods])
    return api, sx


def bindings(api):
    return sorted(b["metadata"]["name"] for b in api.control("records")["bindings"])


def failed_notes(api, pod):
    return [e.get("note") for e in api.control("records")["events"]
            if e.get("reason") == "FailedScheduling"
            and (e.get("regarding") or {}).get("name") == pod]


def group_status(api, name):
    for g in api.control("state")["objects"].get("podgroups.scheduling.x-k8s.io", []):
        if g["metadata"]["name"] == name:
            return g.get("status") or {}
    return None


def test_gang_fits(tmp):
    pods = [member("w-%d" % i, "train") for i in range(4)]
    api, sx = start(tmp, "fits", [node("n1"), node("n2")], [pod_group("train", 4)], pods)
    try:
        check(wait_for(lambda: len(bindings(api)) == 4, 20),
              "fits: the 4 members are bound: %r\n%s" % (bindings(api), sx.logtext()))
        check(bindings(api) == ["w-0", "w-1", "w-2", "w-3"], "fits: one Binding each")
        # PostBind's status, as scheduler-plugins wrote it before its
        # PodGroup controller: Scheduled with 4 scheduled
        check(wait_for(lambda: (group_status(api, "train") or {}).get("phase") == "Scheduled",
                       10),
              "fits: the PodGroup's phase is Scheduled: %r" % group_status(api, "train"))
        st = group_status(api, "train")
        check(st.get("scheduled") == 4 and st.get("scheduleStartTime"),
              "fits: scheduled 4, scheduleStartTime set: %r" % st)
        check(not api.control("state")["objects"].get("podgroups"),
              "fits: the Workload API's podgroups are untouched")
        check(sx.stop() == 0, "fits: clean exit")
    finally:
        api.stop()


def test_gang_does_not_fit(tmp):
    pods = [member("w-%d" % i, "big") for i in range(4)]
    api, sx = start(tmp, "nofit", [node("n1")], [pod_group("big", 4)], pods,
                    "{permitWaitingTimeSeconds: 3, podGroupBackoffSeconds: 60}", pods_first=True)
    post = ("PodGroup work/big gets rejected due to Pod %s is unschedulable even after "
            "PostFilter")
    try:
        check(wait_for(lambda: any(failed_notes(api, "w-%d" % i) for i in range(4)) and
                       any("failed recently" in n for i in range(4)
                           for n in failed_notes(api, "w-%d" % i)), 20),
              "nofit: members are rejected, then backed off\n%s" % sx.logtext())
        notes = [n for i in range(4) for n in failed_notes(api, "w-%d" % i)]
        check(any("1 Insufficient cpu." in n and
                  any(post % ("w-%d" % i) in n for i in range(4)) for n in notes),
              "nofit: a member fits nowhere and PostFilter rejects the group: %r" % notes)
        check("0/1 nodes are available: 1 optimistic rejection in PostFilter." in notes,
              "nofit: the waiting members are rejected by PostFilter: %r" % notes)
        check(any(n.startswith("0/1 nodes are available: podGroup work/big failed recently.")
                  for n in notes),
              "nofit: podGroupBackoffSeconds: the group failed recently: %r" % notes)
        check(bindings(api) == [], "nofit: nothing bound: %r" % bindings(api))
        # nothing stays held: a pod that needs the whole node binds
        api.apply([{"op": "create", "object": member("whole", None, cpu="4")}])
        check(wait_for(lambda: "whole" in bindings(api), 20),
              "nofit: the gang holds nothing, a 4-cpu pod binds: %r\n%s"
              % (bindings(api), sx.logtext()))
        check(bindings(api) == ["whole"], "nofit: no member bound: %r" % bindings(api))
        check(sx.stop() == 0, "nofit: clean exit")
    finally:
        api.stop()


def test_too_few_pods(tmp):
    pods = [member("w-%d" % i, "trio") for i in range(2)]
    api, sx = start(tmp, "few", [node("n1"), node("n2")], [pod_group("trio", 3)], pods)
    want = ("0/2 nodes are available: pre-filter pod %s cannot find enough sibling pods, "
            "current pods number: 2, minMember of group: 3. ")
    post = "PodGroup work/trio gets rejected due to Pod %s is unschedulable even after PostFilter"
    try:
        # (a member scheduled before its sibling's Pod event arrived sees
        # 1 pod; the other sees both)
        check(wait_for(lambda: any(n.startswith(want % p) and n.endswith(post % p)
                                   for p in ("w-0", "w-1") for n in failed_notes(api, p)), 20),
              "few: a member is refused with PreFilter's words: %r\n%s"
              % (failed_notes(api, "w-0") + failed_notes(api, "w-1"), sx.logtext()))
        check(bindings(api) == [], "few: nothing bound")
        api.apply([{"op": "create", "object": member("w-2", "trio")}])
        check(wait_for(lambda: len(bindings(api)) == 3, 20),
              "few: the third member's arrival binds all 3: %r\n%s"
              % (bindings(api), sx.logtext()))
        check(sx.stop() == 0, "few: clean exit")
    finally:
        api.stop()


def test_min_resources(tmp):
    pods = [member("w-%d" % i, "huge", cpu="1") for i in range(2)]
    api, sx = start(tmp, "minres", [node("n1"), node("n2")],
                    [pod_group("huge", 2, {"cpu": "10"})], pods)
    try:
        gap = "0/2 nodes are available: resource gap: map[cpu:2]. "
        # (the member tried before its sibling's Pod event may see 1 pod
        # and wait for the queue's flush: upstream's too)
        check(wait_for(lambda: any(any(n.startswith(gap) for n in failed_notes(api, p))
                                   for p in ("w-0", "w-1")), 20),
              "minres: a member is refused with the resource gap: %r\n%s"
              % (failed_notes(api, "w-0") + failed_notes(api, "w-1"), sx.logtext()))
        check(bindings(api) == [], "minres: nothing bound")
        check(sx.stop() == 0, "minres: clean exit")
    finally:
        api.stop()


def test_explain_waiting(tmp):
    """(f) /debug/explain on a member of a live gang: 9 of minMember 10 fit
    and wait at Permit (the cache holds them assumed); the tenth fits
    nowhere, 9 of 10 misses minMember by 10%, so PostFilter rejects
    nothing and the verdict is the Permit timeout of the PodGroup's
    scheduleTimeoutSeconds. /debug/pending groups the tenth under
    Coscheduling's words."""
    pods = [member("w-%d" % i, "ten", cpu="1") for i in range(9)]
    for p in pods:
        p["spec"]["priority"] = 1  # before the tenth in Coscheduling's queue order
    last = member("w-9", "ten", cpu="1")
    last["spec"]["nodeSelector"] = {"disk": "none"}
    group = pod_group("ten", 10)
    group["spec"]["scheduleTimeoutSeconds"] = 60
    # every member exists before the scheduler starts (its first LIST), so
    # no member is refused for missing siblings and the nine wait together
    api, sx = start(tmp, "explain", [node("n1", cpu="9")] + pods + [last], [group], [])
    words = "rejected due to timeout after waiting 1m0s at plugin Coscheduling"
    try:
        def report():
            code, body = http("GET", sx.url + "/debug/explain?pod=work/w-9")
            return (body or {}).get("podGroup") if code == 200 else None
        check(wait_for(lambda: (report() or {}).get("waitingAtPermit") == 9, 20),
              "explain: 9 members waiting at Permit: %r\n%s" % (report(), sx.logtext()))
        g = report() or {}
        check({k: g.get(k) for k in ("name", "plugin", "minMember", "pending", "bound",
                                     "waitingAtPermit", "timeoutSeconds", "timeoutFrom",
                                     "fit", "notTried", "status", "message")} ==
              {"name": "ten", "plugin": "Coscheduling", "minMember": 10, "pending": 1,
               "bound": 0, "waitingAtPermit": 9, "timeoutSeconds": 60,
               "timeoutFrom": "scheduleTimeoutSeconds", "fit": {}, "notTried": [],
               "status": "Unschedulable", "message": words}, "explain: the group: %r" % g)
        check([r["pod"] for r in g.get("rejected", [])] == ["w-9"],
              "explain: the tenth is rejected: %r" % g.get("rejected"))
        code, body = http("GET", sx.url + "/debug/pending")
        got = [(x["plugin"], x["reason"], [p["pod"] for p in x["pods"]])
               for x in (body or {}).get("groups", [])]
        check(got == [("Coscheduling", words, ["work/w-9"])], "explain: pending: %r" % got)
        check(bindings(api) == [], "explain: nothing bound while the gang waits")
        check(sx.stop() == 0, "explain: clean exit")
    finally:
        api.stop()


def test_configuration(tmp):
    api = FakeApi(tmp)
    try:
        kc = os.path.join(tmp, "kubeconfig-cfg")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        sx = Serve(tmp, kc, "sx-cfg", "--standalone", "--config",
                   config(tmp, "cfg", "{}"))
        check(sx.wait_ready(), "cfg: schedext ready")
        code, out = http("GET", sx.url + "/configz")
        text = str(out)
        check(code == 200 and "CoschedulingArgs" in text and
              "'permitWaitingTimeSeconds': 60" in text and "'podGroupBackoffSeconds': 0" in text,
              "cfg: /configz shows CoschedulingArgs with defaults: %r" % text[:2000])
        check(sx.stop() == 0, "cfg: clean exit")
        for args, want in (("{podGroupBackoffSeconds: -1}", "parse arguments failed"),
                           ("{bogus: 1}", 'decoding args for plugin Coscheduling: strict '
                                          'decoding error: unknown field "bogus"')):
            r = subprocess.run([BIN, "serve", "--kubeconfig", kc, "--standalone", "--config",
                                config(tmp, "bad", args), "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=20)
            check(r.returncode != 0 and want in r.stderr,
                  "cfg: %s refused with %r: %r" % (args, want, r.stderr))
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_gang_fits, test_gang_does_not_fit, test_too_few_pods,
                        test_min_resources, test_explain_waiting, test_configuration]))
