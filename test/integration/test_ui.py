#!/usr/bin/env python3
"""The operators' page in a real browser: `schedext serve` on a dump, headless
Chromium loads /ui with a pod preselected (#pod=NS/NAME, as
`kubectl schedext why POD --web` opens it), and the test reads the rendered
DOM: the pending list, the node x plugin matrix (verdicts, reasons, scores,
the selected node), sorting, no JavaScript error. A screenshot is kept under
the build folder. Chromium comes from Debian (make install-test-deps)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import Server  # noqa: E402

BUILD = os.environ.get("SCHEDEXT_BUILD", "build")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def node(name, cpu="4", taints=None):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints} if taints else {},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name, cpu, node_name=None):
    spec = {"containers": [{"name": "c", "image": "nginx",
                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def cluster(tmp):
    items = [node("a", "4"), node("b", "8"),
             node("t", "8", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
             pod("busy", "3", "a"), pod("web", "1"), pod("huge", "64")]
    path = os.path.join(tmp, "ui-cluster.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    return path


def chromium(url, tmp, extra):
    exe = shutil.which("chromium")
    assert exe, "chromium is not installed (make install-test-deps)"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + os.path.join(tmp, "chromium-profile"), "--enable-logging=stderr",
           "--v=0", "--virtual-time-budget=8000", "--window-size=1400,900"] + extra + [url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def rows(dom):
    """(node, classes, cells text) per matrix row."""
    out = []
    for m in re.finditer(r'<tr class="([^"]*)" data-node="([^"]*)">(.*?)</tr>', dom):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(3))]
        out.append((m.group(2), m.group(1), [c.replace("&amp;", "&") for c in cells]))
    return out


def whatif_rows(dom):
    """(class, pod, node, notes) per row of the what-if placements."""
    out = []
    for m in re.finditer(r'<tr class="(placed|unplaced)" data-pod="([^"]*)">(.*?)</tr>', dom):
        cells = [re.sub(r"<[^>]+>", "", c).replace("&amp;", "&")
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(3))]
        out.append((m.group(1), m.group(2), cells[1], cells[2]))
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server("--state", cluster(tmp))
        base = "http://127.0.0.1:%d/ui" % srv.port
        try:
            status, page = srv.get("/ui")
            check(status == 200 and b"<script" in page and b"http://" not in page.replace(
                b"http://www.w3.org", b"") and b"src=" not in page, "page is self-contained")
            shots = os.path.join(BUILD, "ui-test")
            os.makedirs(shots, exist_ok=True)
            rc, dom, err = chromium(base + "#pod=default/web", tmp, ["--dump-dom"])
            check(rc == 0, f"chromium rc {rc}: {err[-500:]}")
            check('data-ready="1"' in dom and 'data-js-errors="0"' in dom, "page ready, no JS error")
            check("Uncaught" not in err, f"console errors: {[l for l in err.splitlines() if 'Uncaught' in l]}")
            check("2 pending pod(s)" in dom, "pending count in the header")
            check('data-pod="default/huge"' in dom and 'data-pod="default/web"' in dom,
                  "pending pods listed")
            check('1 × NodeResourcesFit: Insufficient cpu' in dom, "huge's group")
            r = rows(dom)
            names = [x[0] for x in r]
            check(sorted(names) == ["a", "b", "t"], f"one row per node: {names}")
            byname = {x[0]: x for x in r}
            check(byname["t"][1] == "rejected" and
                  byname["t"][2][2] == "TaintToleration: node(s) had untolerated taint(s) "
                                      "(taint dedicated=gpu:NoSchedule)",
                  f"tainted node row, with the taint: {byname.get('t')}")
            check(byname["b"][1] == "feasible selected", f"selected node marked: {byname.get('b')}")
            check(byname["a"][1] == "feasible", f"feasible node: {byname.get('a')}")
            # scores: NodeResourcesFit column "normalized ×weight = weighted", total last
            cells_b = byname["b"][2]
            check(any(re.fullmatch(r"\d+ ×\d+ = \d+", c) for c in cells_b) and
                  cells_b[-1].isdigit(), f"score cells: {cells_b}")
            check("Would be scheduled to b." in dom, "verdict message")
            # sorted by total, descending: b (selected, best) first
            rc, dom2, _ = chromium(base + "#pod=default/web&sort=-total", tmp, ["--dump-dom"])
            check([x[0] for x in rows(dom2)][:2] == ["b", "a"], f"sort by total: {rows(dom2)}")
            rc, dom3, _ = chromium(base + "#pod=default/huge", tmp, ["--dump-dom"])
            huge_msg = ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient "
                        "cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 "
                        "Preemption is not helpful for scheduling.")
            shown = re.search(r'<div id="message"><div class="msg">(.*?)</div>', dom3)
            check(shown and shown.group(1) == huge_msg,
                  f"unschedulable pod message, every PostFilter part, each sentence once: {shown}")
            r3 = {x[0]: x for x in rows(dom3)}
            check(r3["a"][2][2] == "NodeResourcesFit: Insufficient cpu "
                                   "(cpu: requests 64000m, free 1000m of 4000m)",
                  f"the numbers behind Insufficient cpu: {r3.get('a')}")
            check('data-tables-fit="1"' in dom and 'data-tables-fit="1"' in dom3,
                  "the matrix fits its panel (Total visible)")
            check(re.search(r'<select id="whatif-target"[^>]*><option value="a">', dom),
                  "the what-if node picker starts on a node without taints")
            check(re.search(r'<input id="auto-refresh" type="checkbox">', dom),
                  "no auto-refresh with --state")
            # what-if from the page: drain a (its pod goes to b), then also
            # cordon b (it fits nowhere: the page says why)
            status, want = srv.post_json("/debug/whatif", {"drain": ["a"], "cordon": ["b"]})
            rc, dom4, err = chromium(base + "#whatif=drain:a", tmp, ["--dump-dom"])
            check('data-js-errors="0"' in dom4, f"what-if page: no JS error {err[-300:]}")
            check("What if: drained node a (1 pod(s) to re-place). Placed 1 of 1 pod(s)." in dom4,
                  "what-if summary")
            check(whatif_rows(dom4) == [("placed", "default/busy", "b", "")],
                  f"what-if placements: {whatif_rows(dom4)}")
            check('<li class="edit">drain a<button' in dom4, "the edit is listed")
            rc, dom5, err = chromium(base + "#pod=default/web&whatif=drain:a;cordon:b", tmp, ["--dump-dom"])
            check(status == 200 and whatif_rows(dom5) == [
                ("unplaced", "default/busy", "does not fit", want["placements"][0]["message"])] and
                want["placements"][0]["message"].startswith("0/3 nodes are available: "),
                f"what-if: what does not fit and why: {whatif_rows(dom5)} {want}")
            check("Would be scheduled to b." in dom5, "pod and what-if from one URL")
            rc, dom6, err = chromium(base + "#scores=1", tmp, ["--dump-dom"])
            got = re.findall(r'<tr data-pod="([^"]*)" class="(placed|unplaced)">', dom6)
            check(sorted(got) == [("default/huge", "unplaced"), ("default/web", "placed")] and
                  huge_msg in dom6 and 'data-tables-fit="1"' in dom6,
                  f"scores of every pending pod, and why not: {got}")
            rc, dom7, err = chromium(base + "#pod=default/busy", tmp, ["--dump-dom"])
            check("Pod default/busy is already bound to node a." in dom7 and
                  'data-node=' not in dom7, "a bound pod is already bound")
            shot = os.path.abspath(os.path.join(shots, "ui.png"))
            rc, _, err = chromium(base + "#pod=default/web", tmp, ["--screenshot=" + shot])
            check(rc == 0 and os.path.getsize(shot) > 10000, f"screenshot {shot}")
            status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "b", "count": 8}]})
            check(status == 200 and body["summary"] == "added 8 node(s) like b-whatif" and
                  body["pods"] == 2 and body["placed"] == 1, f"what-if endpoint: {body}")
            status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "zz", "count": 1}]})
            check(status == 400 and body == {"error": "addNodes[].like: node zz not found"},
                  f"what-if bad node: {status} {body}")
            status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "b", "count": 1e9}]})
            check(status == 400 and "count" in body["error"], f"what-if absurd count: {body}")
            status, _, data = srv.request("GET", "/debug/explain?pod=default")
            check(status == 400, "explain ?pod without a name")
            status, _, data = srv.request("GET", "/debug/explain?pod=default/nope")
            check(status == 404, "explain ?pod unknown")
            status, _, data = srv.request("GET", "/debug/pending")
            body = json.loads(data)
            check(status == 200 and body["pods"] == 2 and "notEvaluated" not in body,
                  f"pending within the default budget: {body}")
            got = [p["message"] for g in body["groups"] for p in g["pods"] if p["pod"] == "default/huge"]
            check(got == [huge_msg], f"/debug/pending message: {got}")
            status, _, data = srv.request("GET", "/debug/explain?pod=default/huge")
            body = json.loads(data)
            check(status == 200 and body["message"] == huge_msg and
                  body["postFilter"]["message"] == huge_msg[huge_msg.index("no new"):],
                  f"/debug/explain message: {body.get('message')} {body.get('postFilter')}")
        finally:
            srv.kill()
        # A budget that is over before the first pod: every pod is counted, none judged.
        srv = Server("--state", cluster(tmp), "--debug-time-budget", "1ns")
        try:
            status, _, data = srv.request("GET", "/debug/pending")
            body = json.loads(data)
            check(status == 200 and body == {"pods": 2, "notEvaluated": 2, "groups": []},
                  f"pending past its budget: {body}")
            status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "b", "count": 1}]})
            check(status == 200 and body["pods"] == 2 and body["notEvaluated"] == 2 and
                  body["placed"] == 0 and body["placements"] == [], f"what-if past its budget: {body}")
        finally:
            srv.kill()
        # /debug/whatif places the pending pods in the profile's QueueSort order:
        # hi (priority 1000, created later) takes the copy of n8 and big stays
        # pending, as kube-scheduler pops the higher priority first.
        hi = pod("hi", "3")
        hi["spec"]["priority"] = 1000
        hi["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
        big = pod("big", "6")
        big["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
        path = os.path.join(tmp, "order.json")
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List",
                       "items": [node("n8", "8"), pod("fill", "7", "n8"), big, hi]}, f)
        srv = Server("--state", path)
        try:
            status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "n8", "count": 1}]})
            check(status == 200 and body["placements"] == [
                {"pod": "default/hi", "node": "n8-whatif", "message": None},
                {"pod": "default/big", "node": None, "message":
                 "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
                 "preemption: 0/2 nodes are available: 2 No preemption victims found for "
                 "incoming pod."}], f"what-if in queue order: {status} {body}")
        finally:
            srv.kill()
        p = subprocess.run([os.path.join(BUILD, "schedext"), "serve", "--state", cluster(tmp),
                            "--debug-time-budget", "0s"], capture_output=True, text=True, timeout=20)
        check(p.returncode == 2 and "--debug-time-budget: expected a duration in (0s, 1h], got '0s'"
              in p.stderr, f"a zero budget is refused: {p.returncode} {p.stderr!r}")
    print(f"test_ui.py: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
