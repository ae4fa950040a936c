#!/usr/bin/env python3
"""Gang scheduling (GangScheduling, scheduling.k8s.io/v1beta1 PodGroup)
with the standalone scheduler against test/fakeapi/fakeapi.py, through
the pod-group cycle of 1.37 (schedule_one_podgroup.go):

(a) with --feature-gates GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true, a gang of 4 with minCount 4
    that fits is bound whole;
(b) a gang of 4 with minCount 4 of which only 2 fit binds none and holds
    nothing: the group is rejected whole in its cycle with
    GangScheduling.PlacementFeasible's words, the member that did not fit
    with its own FitError, and PodGroupInitiallyScheduled=False is written
    on the PodGroup; a pod that needs what the 2 would have held binds;
(c) with the gate off (the default), the same pods are plain pods: the 2
    that fit are bound;
(d) members created before their PodGroup are held back until it appears
    (the PodGroup/Add queueing hint), then bound whole;
(e) a gang of 8 whose minCount fits binds all at once: one pod-group
    attempt, no member ever rejected, PodGroupInitiallyScheduled=True;
(f) two gangs competing for nodes that hold one of them never deadlock:
    one binds whole, the other binds nothing and waits, and binds once the
    first is deleted;
(g) a member added to a gang whose minCount is already bound binds alone
    (the members scheduled before count, PodGroupState.ScheduledPodsCount);
(h) group preemption (DefaultPreemption's PodGroupPostFilter): a gang of
    priority 100 that fits nowhere preempts a bound group of priority 10
    whose disruptionMode is All whole (every member gets the
    DisruptionTarget condition and is deleted, though one per node could
    have stayed beside it), its members are nominated to the nodes being
    freed, the victims get upstream's Preempted event, then (once their
    graceful deletion ends, a kubelet's confirmation) the gang binds;
    scheduler_workload_preemption_attempts_total{result="Success"} counts it.
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
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    try:
        check(wait_for(lambda: len(bindings(api)) == 4, 20),
              "fits: the 4 members are bound: %r\n%s" % (bindings(api), sx.logtext()))
        check(bindings(api) == ["w-0", "w-1", "w-2", "w-3"], "fits: one Binding each")
        check(sx.stop() == 0, "fits: clean exit")
    finally:
        api.stop()


def pod_group_condition(api, name):
    for g in api.control("state")["objects"].get("podgroups", []):
        if g["metadata"]["name"] == name:
            for c in (g.get("status") or {}).get("conditions", []):
                if c.get("type") == "PodGroupInitiallyScheduled":
                    return c
    return None


def failed_notes(api, pod):
    return [e.get("note") for e in api.control("records")["events"]
            if e.get("reason") == "FailedScheduling"
            and (e.get("regarding") or {}).get("name") == pod]


def plain(name, cpu):
    p = member(name, "x", cpu)
    del p["spec"]["schedulingGroup"]
    return p


def test_gang_does_not_fit(tmp):
    pods = [member("w-%d" % i, "big") for i in range(4)]
    api, sx = start(tmp, "nofit", [node("n1")], pod_group("big", 4), pods,
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    # The algorithm's words, then (WorkloadAwarePreemption on) PodGroupPostFilter's,
    # appended to the group's status (applyPodGroupPostFilterResult).
    algo = "minCount (4) cannot be satisfied: 2 scheduled, 1 remaining"
    want = algo + ", pod group preemption: No preemption victims found for incoming preemptor"
    try:
        check(wait_for(lambda: pod_group_condition(api, "big") is not None, 20),
              "nofit: the PodGroup gets its condition\n%s" % sx.logtext())
        cond = pod_group_condition(api, "big")
        check(cond["status"] == "False" and cond["reason"] == "Unschedulable"
              and cond["message"] == want,
              "nofit: PodGroupInitiallyScheduled False/Unschedulable %r: %r" % (want, cond))
        check(wait_for(lambda: all(failed_notes(api, "w-%d" % i) for i in range(4)), 10),
              "nofit: every member is rejected")
        # Two members fit: the group's status; the third does not (its own
        # FitError); the fourth is not tried: the algorithm's status
        # (completePodGroupAlgorithmResult, before the post filter).
        notes = [failed_notes(api, "w-%d" % i)[0] for i in range(4)]
        check(sorted(notes) == sorted([want, want, "0/1 nodes are available: 1 Insufficient "
                                       "cpu.", algo]),
              "nofit: two placed, one FitError, one not tried: %r" % notes)
        check(bindings(api) == [], "nofit: no member bound: %r" % bindings(api))
        # Nothing is held: a pod needing 3.5 of the node's 4 cpus binds.
        api.apply([{"op": "create", "object": plain("solo", "3500m")}])
        check(wait_for(lambda: bindings(api) == ["solo"], 10),
              "nofit: the gang holds nothing, solo binds: %r" % bindings(api))
        time.sleep(1)
        check(bindings(api) == ["solo"], "nofit: still no member bound: %r" % bindings(api))
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
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
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


def metric(sx, name, labels):
    import urllib.request
    with urllib.request.urlopen(sx.url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith(name + "{") and all(l in line for l in labels):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_gang_of_8(tmp):
    nodes = [node("n%d" % i) for i in range(1, 5)]
    pods = [member("g-%d" % i, "eight") for i in range(8)]
    api, sx = start(tmp, "eight", nodes, pod_group("eight", 8), pods,
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    try:
        check(wait_for(lambda: len(bindings(api)) == 8, 20),
              "eight: the 8 members are bound: %r\n%s" % (bindings(api), sx.logtext()))
        check(bindings(api) == ["g-%d" % i for i in range(8)], "eight: one Binding each")
        rejected = [e for e in api.control("records")["events"]
                    if e.get("reason") == "FailedScheduling"]
        check(rejected == [], "eight: no member ever rejected: %r" % rejected[:2])
        cond = pod_group_condition(api, "eight")
        check(cond and cond["status"] == "True" and cond["reason"] == "Scheduled",
              "eight: PodGroupInitiallyScheduled True/Scheduled: %r" % cond)
        check(wait_for(lambda: metric(sx, "scheduler_podgroup_schedule_attempts_total",
                                      ['result="scheduled"']) == 1, 5),
              "eight: one pod-group attempt, scheduled")
        check(wait_for(lambda: metric(sx, "scheduler_queued_entities",
                                      ['queue="active"', 'type="podgroup"']) == 0, 5),
              "eight: no group left in activeQ (the gauges refresh every second)")
        check(sx.stop() == 0, "eight: clean exit")
    finally:
        api.stop()


def test_two_gangs_compete(tmp):
    nodes = [node("n1"), node("n2")]  # room for 4 members of 1500m
    pods = ([member("a-%d" % i, "ga") for i in range(4)] +
            [member("b-%d" % i, "gb") for i in range(4)])
    api, sx = start(tmp, "two", nodes, pod_group("ga", 4), [],
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    api.apply([{"op": "create", "object": pod_group("gb", 4)}])
    api.apply([{"op": "create", "object": p} for p in pods])
    try:
        check(wait_for(lambda: len(bindings(api)) == 4, 20),
              "two: one gang binds: %r\n%s" % (bindings(api), sx.logtext()))
        time.sleep(1.5)
        got = bindings(api)
        winner = got[0][0]
        loser = "b" if winner == "a" else "a"
        check(got == ["%s-%d" % (winner, i) for i in range(4)],
              "two: exactly one whole gang bound, none of the other: %r" % got)
        cond = pod_group_condition(api, "g" + loser)
        check(cond and cond["status"] == "False" and cond["reason"] == "Unschedulable",
              "two: the other gang is Unschedulable: %r" % cond)
        # The first gang leaves: the second binds (it was waiting, not stuck).
        api.apply([{"op": "delete", "object": p} for p in pods if p["metadata"]["name"][0] == winner])
        check(wait_for(lambda: len([b for b in bindings(api) if b[0] == loser]) == 4, 20),
              "two: the waiting gang binds once room is made: %r\n%s"
              % (bindings(api), sx.logtext()))
        check(sx.stop() == 0, "two: clean exit")
    finally:
        api.stop()


def test_member_after_quorum(tmp):
    pods = [member("q-%d" % i, "quorum") for i in range(2)]
    api, sx = start(tmp, "quorum", [node("n1"), node("n2")], pod_group("quorum", 2), pods,
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    try:
        check(wait_for(lambda: bindings(api) == ["q-0", "q-1"], 20),
              "quorum: the gang of 2 binds: %r\n%s" % (bindings(api), sx.logtext()))
        api.apply([{"op": "create", "object": member("q-2", "quorum")}])
        check(wait_for(lambda: bindings(api) == ["q-0", "q-1", "q-2"], 20),
              "quorum: a third member binds alone: %r\n%s" % (bindings(api), sx.logtext()))
        check(sx.stop() == 0, "quorum: clean exit")
    finally:
        api.stop()


def test_gang_preempts_group_whole(tmp):
    low_group = pod_group("low", 4)
    low_group["metadata"]["uid"] = "uid-pg-low"
    low_group["spec"].update({"priority": 10, "disruptionMode": {"all": {}}})
    high_group = pod_group("high", 2)
    high_group["metadata"]["uid"] = "uid-pg-high"
    high_group["spec"]["priority"] = 100
    low = [member("low-%d" % i, "low") for i in range(4)]
    for p in low:
        p["spec"]["priority"] = 10
    api, sx = start(tmp, "preempt", [node("n1"), node("n2")], low_group, low,
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    try:
        # Victims terminate as on a real cluster: a kubelet confirms each
        # deletion 300 ms after its DELETE, so the gang's retries meanwhile
        # see terminating pods (not eligible to preempt again).
        api.control("controllers", {"kubeletGraceMs": 300})
        check(wait_for(lambda: len(bindings(api)) == 4, 20),
              "preempt: the low group binds first: %r\n%s" % (bindings(api), sx.logtext()))
        high = [member("high-%d" % i, "high", cpu="2500m") for i in range(2)]
        for p in high:
            p["spec"]["priority"] = 100
        api.apply([{"op": "create", "object": high_group}])
        api.apply([{"op": "create", "object": p} for p in high])

        def deleted():
            return sorted(d["name"] for d in api.control("records")["deletes"]
                          if d["resource"] == "pods")
        check(wait_for(lambda: deleted() == ["low-%d" % i for i in range(4)], 20),
              "preempt: every member of the low group is deleted: %r\n%s"
              % (deleted(), sx.logtext()))
        rec = api.control("records")
        for i in range(2):
            noms = [(p["patch"].get("status") or {}).get("nominatedNodeName")
                    for p in rec["patches"] if p["name"] == "high-%d" % i
                    and "nominatedNodeName" in (p["patch"].get("status") or {})]
            check(noms and noms[0] in ("n1", "n2"),
                  "preempt: high-%d nominated to a node being freed: %r" % (i, noms))
        conds = sorted((p["name"], c["reason"], c["message"]) for p in rec["patches"]
                       if p["name"].startswith("low-")
                       for c in (p["patch"].get("status") or {}).get("conditions", [])
                       if c.get("type") == "DisruptionTarget")
        check(conds == [("low-%d" % i, "PreemptionByScheduler",
                         "default-scheduler: preempting to accommodate a higher priority PodGroup")
                        for i in range(4)],
              "preempt: DisruptionTarget once on each victim: %r" % conds)
        check(wait_for(lambda: bindings(api) == ["high-0", "high-1", "low-0", "low-1",
                                                 "low-2", "low-3"], 20),
              "preempt: the gang binds where the group was: %r\n%s"
              % (bindings(api), sx.logtext()))
        notes = [e.get("note") for e in api.control("records")["events"]
                 if e.get("reason") == "Preempted"]
        check(sorted(notes) == ["Preempted by PodGroup uid-pg-high on node cluster"] * 4,
              "preempt: the Preempted events: %r" % notes)
        # A retry while the victims terminate (a victim's update moves the
        # gang) may find no member nominated any more -- an ineligible
        # attempt clears the nominations, as upstream's -- and "preempt"
        # again: the victims are terminating, so nothing more is evicted.
        got = metric(sx, "scheduler_workload_preemption_attempts_total", ['result="Success"'])
        check(got and got >= 1, "preempt: a successful workload preemption attempt: %r" % got)
        got = metric(sx, "scheduler_podgroup_schedule_attempts_total",
                     ['result="waiting_on_preemption"'])
        check(got and got >= 1, "preempt: an attempt counted waiting_on_preemption: %r" % got)
        # While waiting, the group's status is the algorithm's (a Success of
        # PodGroupPostFilter has no words to append).
        waiting = "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"
        msgs = [c["message"] for p in api.control("records")["patches"] if p["name"] == "high"
                for c in (p["patch"].get("status") or {}).get("conditions", [])
                if c.get("reason") == "Unschedulable"]
        check(msgs and msgs[0] == waiting, "preempt: the waiting group's condition: %r" % msgs)
        # Its members: the first tried does not fit (its FitError), the other
        # is not tried (the algorithm's status, before the post filter).
        notes = sorted(e.get("note") for e in api.control("records")["events"]
                       if e.get("reason") == "FailedScheduling"
                       and (e.get("regarding") or {}).get("name", "").startswith("high-"))
        check({"0/2 nodes are available: 2 Insufficient cpu.", waiting} <= set(notes),
              "preempt: the waiting members' events: %r" % notes)
        check(sorted(d["name"] for d in api.control("records")["deletes"]) ==
              ["low-%d" % i for i in range(4)], "preempt: one DELETE per victim")
        check(sx.stop() == 0, "preempt: clean exit")
    finally:
        api.stop()


def test_invalid_group(tmp):
    """validatePodGroup: a member whose priority is not its PodGroup's makes
    every member fail with the error, and the PodGroup's condition
    False/SchedulerError says it; nothing binds."""
    pods = [member("v-%d" % i, "mixed") for i in range(2)]
    pods[1]["spec"]["priority"] = 7
    api, sx = start(tmp, "invalid", [node("n1")], pod_group("mixed", 2), pods,
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true")
    want = ("all pods in a pod group hierarchy should have the same priority as the root "
            "pod group's priority, got 7 (\"v-1\") and 0 (\"podgroup/work/mixed\")")
    try:
        check(wait_for(lambda: pod_group_condition(api, "mixed") is not None, 20),
              "invalid: the PodGroup gets its condition\n%s" % sx.logtext())
        cond = pod_group_condition(api, "mixed")
        check(cond["status"] == "False" and cond["reason"] == "SchedulerError"
              and cond["message"] == want, "invalid: False/SchedulerError %r: %r" % (want, cond))
        check(wait_for(lambda: all(failed_notes(api, "v-%d" % i) for i in range(2)), 10),
              "invalid: every member is rejected")
        notes = [failed_notes(api, "v-%d" % i)[0] for i in range(2)]
        check(notes == [want, want], "invalid: each member gets the error: %r" % notes)
        check(bindings(api) == [], "invalid: nothing bound: %r" % bindings(api))
        check(sx.stop() == 0, "invalid: clean exit")
    finally:
        api.stop()


def test_plain_pod_preempts_group_whole(tmp):
    """A plain pod preempting on one node takes a victim PodGroup whose
    disruptionMode is All whole, its member on the other node too
    (upstream default_preemption.go SelectVictimsOnNode over DomainVictims;
    the row "pod group victim across multiple nodes, pod-group-as-victim
    enabled" of test/integration/scheduler/preemption TestPreemption): both
    members get DisruptionTarget and are deleted, each gets the Preempted
    event naming the pod and node n1, then the preemptor binds on n1."""
    group = {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
             "metadata": {"name": "pg1", "namespace": "work", "uid": "uid-pg1"},
             "spec": {"schedulingPolicy": {"basic": {}}, "priority": 10,
                      "disruptionMode": {"all": {}}}}
    low = [member("pod-group-victim-%d" % i, "pg1", cpu="1") for i in (1, 2)]
    for p, n in zip(low, ("n1", "n2")):
        p["spec"].update({"priority": 10, "nodeName": n})
        p["status"]["phase"] = "Running"
    api, sx = start(tmp, "plainpreempt", [node("n1", cpu="1"), node("n2", cpu="1")], group, low,
                    "--feature-gates", "GenericWorkload=true")
    try:
        api.control("controllers", {"kubeletGraceMs": 300})
        pre = {"kind": "Pod", "metadata": {"name": "preemptor-pod", "namespace": "work",
                                           "uid": "uid-preemptor"},
               "spec": {"priority": 100, "nodeSelector": {"kubernetes.io/hostname": "n1"},
                        "containers": [{"name": "c", "image": "busybox",
                                        "resources": {"requests": {"cpu": "1",
                                                                   "memory": "64Mi"}}}]},
               "status": {"phase": "Pending"}}
        api.apply([{"op": "create", "object": pre}])

        def deleted():
            return sorted(d["name"] for d in api.control("records")["deletes"]
                          if d["resource"] == "pods")
        want = ["pod-group-victim-1", "pod-group-victim-2"]
        check(wait_for(lambda: deleted() == want, 20),
              "plain preempt: both members deleted: %r\n%s" % (deleted(), sx.logtext()))
        check(wait_for(lambda: bindings(api) == ["preemptor-pod"], 20),
              "plain preempt: the preemptor binds: %r\n%s" % (bindings(api), sx.logtext()))
        rec = api.control("records")
        conds = sorted((p["name"], c["reason"], c["message"]) for p in rec["patches"]
                       if p["name"].startswith("pod-group-victim-")
                       for c in (p["patch"].get("status") or {}).get("conditions", [])
                       if c.get("type") == "DisruptionTarget")
        check(conds == [(n, "PreemptionByScheduler",
                         "default-scheduler: preempting to accommodate a higher priority pod")
                        for n in want], "plain preempt: DisruptionTarget on each: %r" % conds)
        notes = sorted((e["regarding"]["name"], e.get("note")) for e in rec["events"]
                       if e.get("reason") == "Preempted")
        check(notes == [(n, "Preempted by pod uid-preemptor on node n1") for n in want],
              "plain preempt: the Preempted events: %r" % notes)
        check(sx.stop() == 0, "plain preempt: clean exit")
    finally:
        api.stop()


def test_plain_pod_preempts_one_member_gate_off(tmp):
    """The same cluster without GenericWorkload: every pod is its own victim
    (upstream's pgLister is nil), so only the member on n1 goes."""
    group = {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
             "metadata": {"name": "pg1", "namespace": "work", "uid": "uid-pg1"},
             "spec": {"schedulingPolicy": {"basic": {}}, "priority": 10,
                      "disruptionMode": {"all": {}}}}
    low = [member("pod-group-victim-%d" % i, "pg1", cpu="1") for i in (1, 2)]
    for p, n in zip(low, ("n1", "n2")):
        p["spec"].update({"priority": 10, "nodeName": n})
        p["status"]["phase"] = "Running"
    api, sx = start(tmp, "plainoff", [node("n1", cpu="1"), node("n2", cpu="1")], group, low)
    try:
        api.control("controllers", {"kubeletGraceMs": 300})
        pre = {"kind": "Pod", "metadata": {"name": "preemptor-pod", "namespace": "work",
                                           "uid": "uid-preemptor"},
               "spec": {"priority": 100, "nodeSelector": {"kubernetes.io/hostname": "n1"},
                        "containers": [{"name": "c", "image": "busybox",
                                        "resources": {"requests": {"cpu": "1",
                                                                   "memory": "64Mi"}}}]},
               "status": {"phase": "Pending"}}
        api.apply([{"op": "create", "object": pre}])
        check(wait_for(lambda: bindings(api) == ["preemptor-pod"], 20),
              "gate off: the preemptor binds: %r\n%s" % (bindings(api), sx.logtext()))
        got = sorted(d["name"] for d in api.control("records")["deletes"]
                     if d["resource"] == "pods")
        check(got == ["pod-group-victim-1"], "gate off: only the member on n1: %r" % got)
        check(sx.stop() == 0, "gate off: clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__),
                       [test_gang_fits, test_gang_does_not_fit, test_gate_off,
                        test_group_after_pods, test_gang_of_8, test_two_gangs_compete,
                       test_member_after_quorum, test_gang_preempts_group_whole,
                        test_invalid_group, test_plain_pod_preempts_group_whole,
                        test_plain_pod_preempts_one_member_gate_off]))
