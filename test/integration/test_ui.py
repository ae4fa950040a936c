#!/usr/bin/env python3
"""The operators' page in a real browser: `schedext serve` on a dump, headless
Chromium loads /ui with a pod preselected (#pod=NS/NAME, as
`kubectl schedext why POD --web` opens it), and the test reads the rendered
DOM: the pending list, the node x plugin matrix (verdicts, reasons with their
numbers, scores, the selected node), sorting, tables that fit their panel,
what-if from the URL (a drain: the placements shown, and what does not fit
with its message), the scores of every pending pod, a bound pod, no
JavaScript error. A live Chromium is then driven over DevTools: clicks,
back and an edited URL switch pod and what-if. A screenshot is kept under
the build folder. Chromium comes from Debian (make install-test-deps)."""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, Server, write_kubeconfig  # noqa: E402

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


class DevTools:
    """A minimal Chrome DevTools Protocol client over one WebSocket (RFC 6455,
    text frames; the standard library has no WebSocket client): enough to
    click, navigate history and read the page of a live headless Chromium."""

    def __init__(self, ws_url):
        u = urllib.parse.urlparse(ws_url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % (u.path, u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(4096)
        head, self.buf = head.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.id = 0

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("devtools closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _message(self):
        payload = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            data = self._read(n)
            if b0 & 0x0F in (0x0, 0x1, 0x2):
                payload += data
                if b0 & 0x80:
                    return json.loads(payload)

    def call(self, method, **params):
        self.id += 1
        data = json.dumps({"id": self.id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else
                                bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
        while True:
            msg = self._message()
            if msg.get("id") == self.id:
                return msg.get("result", {})

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")

    def wait(self, expr, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if self.js(expr):
                return True
            time.sleep(0.1)
        return False


def live_chromium(tmp, name):
    """A headless Chromium with DevTools on an ephemeral port: (process,
    DevTools client of its page, or None)."""
    p = subprocess.Popen([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                          "--no-first-run", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
                          "--window-size=1400,900", "--user-data-dir=" + os.path.join(tmp, name),
                          "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = None
    for line in p.stderr:
        m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
        if m:
            port = int(m.group(1))
            break
    check(port is not None, "chromium's DevTools port")
    if port is None:
        return p, None
    pages = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port).read())
    return p, DevTools([t for t in pages if t["type"] == "page"][0]["webSocketDebuggerUrl"])


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def live_refresh(tmp):
    """Against a live cluster (the fake API server) the page refreshes by
    itself: auto-refresh starts checked, and a pod created after the page
    loaded appears in the pending list without a reload."""
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-ui")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    sx, p = None, None
    try:
        api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "default"}}},
                   {"op": "create", "object": node("n1", "4")},
                   {"op": "create", "object": pod("first", "64")}])
        sx = Serve(tmp, kc, "ui-live", "--authorization-always-allow-paths",
                   "/healthz,/readyz,/livez,/ui,/debug/pending,/debug/explain,/debug/whatif")
        check(sx.wait_ready(), "live serve ready")
        p, dt = live_chromium(tmp, "chromium-live")
        if not dt:
            return
        dt.call("Page.navigate", url=sx.url + "/ui")
        check(dt.wait("document.body.dataset.ready === '1' && "
                      "document.querySelector('.pod[data-pod=\"default/first\"]') !== null"),
              "live page lists the pending pod")
        check(dt.js("document.getElementById('auto-refresh').checked") is True,
              "auto-refresh is on against a live cluster")
        api.apply([{"op": "create", "object": pod("second", "64")}])
        check(dt.wait("document.querySelector('.pod[data-pod=\"default/second\"]') !== null", timeout=40),
              "a pod created later appears without a reload")
    finally:
        if p:
            stop(p)
        if sx:
            sx.p.terminate()
            sx.p.wait()
            sx.log.close()
        api.stop()


def browser_history(base, tmp):
    """The page in a live headless Chromium driven over DevTools: a click on
    a pending pod, back, an edited URL and a what-if built with the form
    (drain a) each switch what the page shows, and the URL follows."""
    p, dt = live_chromium(tmp, "chromium-devtools")
    try:
        if not dt:
            return
        title = "document.getElementById('pod-title').textContent"
        msg = "document.getElementById('message').textContent"
        dt.call("Page.navigate", url=base + "#pod=default/web")
        check(dt.wait("document.body.dataset.ready === '1' && %s.indexOf('Would be scheduled to b.') === 0" % msg),
              "live page: default/web explained")
        dt.js("document.querySelector('#groups .pod[data-pod=\"default/huge\"]').click()")
        check(dt.wait("%s === 'default/huge' && %s.indexOf('0/3 nodes are available') === 0" % (title, msg)) and
              dt.js("location.hash") == "#pod=default/huge", "a click switches pod and writes the URL")
        dt.js("history.back()")
        check(dt.wait("%s === 'default/web' && %s.indexOf('Would be scheduled') === 0" % (title, msg)),
              "back switches to the previous pod")
        dt.js("location.hash = '#pod=default/huge'")
        check(dt.wait("%s === 'default/huge' && %s.indexOf('0/3 nodes') === 0" % (title, msg)),
              "an edited URL switches pod")
        dt.js("var k = document.getElementById('whatif-kind'); k.value = 'drain';"
              "k.dispatchEvent(new Event('change'));"
              "document.getElementById('whatif-target').value = 'a';"
              "document.getElementById('whatif-add').click();"
              "document.getElementById('whatif-run').click()")
        check(dt.wait("document.querySelector('#whatif-table tr.placed[data-pod=\"default/busy\"] td.node') !== null"
                      " && document.querySelector('#whatif-table tr.placed[data-pod=\"default/busy\"] td.node')"
                      ".textContent === 'b'") and
              dt.js("location.hash") == "#pod=default/huge&whatif=drain%3Aa",
              "what-if built with the form: drained a's pod placed on b, in the URL: %r" % dt.js("location.hash"))
        dt.js("history.back()")
        check(dt.wait("document.getElementById('whatif-table') === null && %s === 'default/huge'" % title),
              "back undoes the what-if")
        check(dt.js("window.sxErrors.length") == 0, "live page: no JS error %r" % dt.js("window.sxErrors"))
    finally:
        stop(p)


def gated_page(tmp):
    """A rejection before Filter (SchedulingGates) is every node's status on
    the page, with its numbers (the gates left) and the unresolvable marker
    on each row; a rejection preemption may fix (Insufficient cpu within
    the node's allocatable) has no marker."""
    path = os.path.join(tmp, "gated.json")
    gated = pod("gated", "1")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    items = [node("a", "4"), node("b", "4"), pod("busy", "3", "a"), pod("mid", "2"), gated,
             node("t", "8", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])]
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    srv = Server("--state", path)
    try:
        rc, dom, err = chromium("http://127.0.0.1:%d/ui#pod=default/mid" % srv.port, tmp, ["--dump-dom"])
        r = {x[0]: x for x in rows(dom)}
        check(r["a"][2][1] == "rejected" and r["t"][2][1] == "rejectedunresolvable" and
              r["b"][2][1] == "feasible" and dom.count('<span class="unres">unresolvable</span>') == 2,
              f"a marker on the tainted row only: {r}")
        rc, dom, err = chromium("http://127.0.0.1:%d/ui#pod=default/gated" % srv.port, tmp, ["--dump-dom"])
        check(rc == 0 and 'data-js-errors="0"' in dom, f"gated page: {err[-300:]}")
        r = {x[0]: x for x in rows(dom)}
        want = ("SchedulingGates: waiting for scheduling gates: [example.com/quota] "
                "(1 scheduling gate(s) left: example.com/quota)")
        check(sorted(r) == ["a", "b", "t"] and all(x[2][1] == "rejectedunresolvable" and x[2][2] == want
                                              for x in r.values()),
              f"every node row: the PreFilter reason, its numbers, the marker: {r}")
        check(dom.count('id="unres-legend"') == 1, "the legend once")
    finally:
        srv.kill()


def whatif_rows(dom):
    """(class, pod, node, notes) per row of the what-if placements."""
    out = []
    for m in re.finditer(r'<tr class="(placed|unplaced)" data-pod="([^"]*)">(.*?)</tr>', dom):
        cells = [re.sub(r"<[^>]+>", "", c).replace("&amp;", "&")
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(3))]
        out.append((m.group(1), m.group(2), cells[1], cells[2]))
    return out


COSCHED_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
      disabled:
      - name: PrioritySort
"""


def gang_page(tmp):
    """A Coscheduling gang (scheduler-plugins' PodGroup, pods joining by
    label) of minMember 4 of which 3 fit: the page shows the member's group
    under the verdict as `why` does, and the pending list groups the four
    members under Coscheduling's words."""
    items = [node("n1", "4"), node("n2", "2"),
             {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
              "metadata": {"name": "train", "namespace": "work"},
              "spec": {"minMember": 4, "scheduleTimeoutSeconds": 30}}]
    for i in range(4):
        p = pod("w-%d" % i, "1500m")
        p["metadata"]["namespace"] = "work"
        p["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "train"}
        items.append(p)
    path = os.path.join(tmp, "gang.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    cfg = os.path.join(tmp, "cosched.yaml")
    with open(cfg, "w") as f:
        f.write(COSCHED_CONFIG)
    words = ("PodGroup work/train gets rejected due to Pod w-3 is unschedulable even after "
             "PostFilter")
    srv = Server("--state", path, "--config", cfg)
    try:
        base = "http://127.0.0.1:%d/ui" % srv.port
        rc, dom, err = chromium(base + "#pod=work/w-0", tmp, ["--dump-dom"])
        check(rc == 0 and 'data-js-errors="0"' in dom, f"gang page: chromium rc {rc}")
        shown = re.search(r'<div class="podgroup" id="pod-group">(.*?)</div>', dom, re.S)
        want = "\n".join([
            "Pod group train (Coscheduling, minMember 4)",
            "4 pending, 0 bound, 0 waiting at Permit",
            "A member waits at Permit up to 30s (scheduleTimeoutSeconds)",
            "Fit: 3 of 4 pending: w-0 \u2192 n1, w-1 \u2192 n1, w-2 \u2192 n2",
            "Rejected: w-3: 0/2 nodes are available: 2 Insufficient cpu.",
            "Group: Unschedulable: " + words])
        check(shown and shown.group(1) == want,
              f"gang page: the member's group: {shown.group(1) if shown else dom[-800:]!r}")
        check("4 × Coscheduling: " + words in dom, "gang page: the members grouped as pending")
    finally:
        srv.kill()


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
            # which rejections preemption cannot fix, as visible text: a marker in the
            # Filter cell of each UnschedulableAndUnresolvable row (the taint; 64 cpu is
            # more than any node's allocatable), the meaning said once under the table
            check(all(r3[n][2][1] == "rejectedunresolvable" for n in "abt"), f"unresolvable marker per row: {r3}")
            check(dom3.count('<span class="unres">unresolvable</span>') == 4 and
                  dom3.count("UnschedulableAndUnresolvable: evicting pods cannot make the node fit, "
                             "so preemption does not consider it.") == 1,
                  "one marker per row, one legend")
            check(byname["t"][2][1] == "rejectedunresolvable" and dom.count('id="unres-legend"') == 1,
                  f"the marker for a schedulable pod too: {byname['t']}")
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
            browser_history(base, tmp)
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
            for req, err in [({}, "nothing to do: give addNodes, removeNodes, drain, cordon, addPods or scale"),
                             ({"drain": ["a"], "bogus": []}, 'unknown field "bogus"'),
                             ({"drain": "a"}, "drain: expected an array; at most 16 edits in all"),
                             ({"drain": [1]}, "drain[]: expected a node name"),
                             ({"cordon": ["zz"]}, "node zz not found"),
                             ({"addPods": [{"like": "default/nope", "count": 1}]},
                              "addPods[].like: pod default/nope not found"),
                             ({"scale": [{"deployment": "default/web", "replicas": 2}]},
                              "deployment default/web not found")]:
                status, body = srv.post_json("/debug/whatif", req)
                check(status == 400 and body == {"error": err}, f"what-if {req}: {status} {body}")
            status, body = srv.post_json("/debug/whatif", {"addPods": [{"like": "default/busy", "count": 2}],
                                                           "removeNodes": ["b"]})
            check(status == 200 and body["summary"] == "added 2 pod(s) like busy-whatif; removed node b (0 pod(s) to re-place)" and
                  [(p["pod"], p["node"]) for p in body["placements"]] == [
                      ("default/busy-whatif", None), ("default/busy-whatif-2", None)],
                  f"what-if: copies of a pod, a node removed: {body}")
            status, _, data = srv.request("GET", "/debug/whatif")
            body = json.loads(data)
            check(status == 200 and body["live"] is False and body["nodes"][2] == {
                "name": "t", "unschedulable": False, "taints": ["dedicated=gpu:NoSchedule"]} and
                {"pod": "default/busy", "node": "a"} in body["pods"] and body["deployments"] == [],
                f"GET /debug/whatif: {body}")
            status, _, data = srv.request("GET", "/debug/explain?pod=default/busy")
            check(status == 200 and json.loads(data) == {"pod": "default/busy", "boundNode": "a"},
                  f"explain a bound pod: {data}")
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
        gated_page(tmp)
        gang_page(tmp)
        live_refresh(tmp)
    print(f"test_ui.py: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
