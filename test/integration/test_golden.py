#!/usr/bin/env python3
"""Recorded kube-scheduler decisions (../shared/k8s/golden beside the
repository, see its README) replayed through the standalone scheduler,
end to end: `schedext serve --standalone` with the recorded profile and
the matching --emulated-version against the fake API server, one pending
pod at a time. test/unit/test_golden.c replays every step of every file
through the library (best-node sets compared exactly); this one checks
what the running scheduler writes: the binding goes to one of the
recorded best nodes, and an unschedulable pod's PodScheduled=False
message (PostFilter text included) is kube-scheduler's, word for word.

kube-scheduler picks one of its best nodes at random, and so does
schedext: when the two differ, the pod is moved to the recorded node
(deleted and created again, bound there) so that later steps see the
recorded state. Every seed of both versions (about 20 s); GOLDEN_ONE=1
replays only the first seed of each. Without the folder it prints one
SKIP line and passes."""
import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import ROOT, FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

GOLDEN = os.environ.get("GOLDEN_DIR") or os.path.join(ROOT, "..", "shared", "k8s", "golden")
VERSIONS = (("1.35.7", "1.35"), ("1.36.3", "1.36"))


def pod_now(api, ns, name):
    for p in api.control("state")["objects"].get("pods", []):
        if p["metadata"]["name"] == name and p["metadata"]["namespace"] == ns:
            return p
    return None


def outcome(p):
    """("bound", node), ("unschedulable", message) or None (not yet)."""
    if not p:
        return None
    if p["spec"].get("nodeName"):
        return "bound", p["spec"]["nodeName"]
    for c in p.get("status", {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return "unschedulable", c.get("message", "")
    return None


def replay(tmp, path, release):
    with open(path) as f:
        doc = json.load(f)
    name = os.path.relpath(path, GOLDEN)
    api = FakeApi(tmp)
    sx = None
    agree = 0
    try:
        api.apply([{"op": "create", "object": o} for o in doc["initial"]["items"]])
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(doc["config"], f)
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        sx = Serve(tmp, kc, "golden", "--standalone", "--config", cfg,
                   "--emulated-version", release)
        if not sx.wait_ready():
            check(False, "%s: schedext not ready:\n%s" % (name, open(sx.logpath).read()[-2000:]))
            return
        timeouts = 0
        for k, step in enumerate(doc["steps"]):
            pod = step["pod"]
            ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
            api.apply([{"op": "create", "object": pod}])
            got, end = None, time.time() + 10
            while got is None and time.time() < end:
                got = outcome(pod_now(api, ns, pname))
                if got is None:
                    time.sleep(0.01)
            timeouts = timeouts + 1 if got is None else 0
            if timeouts == 3:
                check(False, "%s: no verdict for three pods in a row; giving up" % name)
                return
            if step["outcome"] == "bound":
                ok = got is not None and got[0] == "bound" and got[1] in step["bestNodes"]
                check(ok, "%s step %d %s: %r, recorded bound to one of %s" %
                      (name, k, pname, got, step["bestNodes"]))
                if got and got[0] == "bound" and got[1] != step["node"]:
                    moved = json.loads(json.dumps(pod))
                    moved["spec"]["nodeName"] = step["node"]
                    api.apply([{"op": "delete", "object": pod}, {"op": "create", "object": moved}])
                elif not got or got[0] != "bound":
                    bound = json.loads(json.dumps(pod))
                    bound["spec"]["nodeName"] = step["node"]
                    api.apply([{"op": "delete", "object": pod}, {"op": "create", "object": bound}])
            else:
                ok = got == ("unschedulable", step["message"])
                check(ok, "%s step %d %s: %r\n    recorded %r" % (name, k, pname, got,
                                                                   step["message"]))
                api.apply([{"op": "delete", "object": pod}])
            agree += ok
        print("%s: %d/%d steps agree through the standalone scheduler" %
              (name, agree, len(doc["steps"])))
    finally:
        if sx:
            sx.stop()
        api.stop()


def test_golden_standalone(tmp):
    if not os.path.isdir(GOLDEN):
        print("SKIP: %s absent (recorded kube-scheduler decisions)" % GOLDEN)
        return
    for version, release in VERSIONS:
        files = sorted(glob.glob(os.path.join(GOLDEN, version, "seed-*.json")))
        check(files, "%s: seed files" % version)
        for path in files[:1] if os.environ.get("GOLDEN_ONE") else files:
            sub = tempfile.mkdtemp(dir=tmp)
            replay(sub, path, release)


if __name__ == "__main__":
    sys.exit(run_tests("test_golden.py", [test_golden_standalone]))
