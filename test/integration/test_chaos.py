#!/usr/bin/env python3
"""Chaos at the edges, each against the real binary:

* the API server disappears (every connection cut, new ones closed at
  once) while pods are being bound: no pod bound twice or lost, bindings
  in flight fail, their assumed pods are forgotten and retried, and the
  cache converges to the server's state with nothing left assumed. The
  outage lasts SCHEDEXT_CHAOS_OUTAGE_S seconds (default 8; 60 for the
  full-length run) through a TCP proxy in front of the fake API server;
* a watch stream sends a 30 MB object (over the 16 MiB event limit): the
  informer drops the stream and re-lists instead of growing without
  bound, and keeps serving and scheduling;
* the kubeconfig's token file rotates mid-run (the old token is refused
  at once): pods created afterwards are still scheduled;
* extender requests hang up halfway through the body, or stall: the
  server keeps answering, and closes what it was holding (fds return to
  their level)."""
import collections
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import (FakeApi, Serve, Server, check, http, run_tests,  # noqa: E402
                    write_kubeconfig)

OUTAGE_S = float(os.environ.get("SCHEDEXT_CHAOS_OUTAGE_S", "8"))


class Proxy:
    """TCP forwarder to 127.0.0.1:target. down(s): cuts every open
    connection and, for s seconds, closes new ones at once (the API server
    is gone); then forwards again."""

    def __init__(self, target):
        self.target = target
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(128)
        self.port = self.ls.getsockname()[1]
        self.down_until = 0.0
        self.lock = threading.Lock()
        self.conns = set()
        self.refused = 0
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            if time.time() < self.down_until:
                self.refused += 1
                c.close()
                continue
            try:
                u = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns.update((c, u))
            threading.Thread(target=self.pump, args=(c, u), daemon=True).start()
            threading.Thread(target=self.pump, args=(u, c), daemon=True).start()

    def pump(self, a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self.lock:
            for s in (a, b):
                if s in self.conns:
                    self.conns.discard(s)
                    s.close()

    def down(self, seconds):
        self.down_until = time.time() + seconds
        with self.lock:
            for s in list(self.conns):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.ls.close()
        self.down(0)


def node(name, cpu="4"):
    return {"kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def pod(name, cpu="200m", ns="work"):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
                "requests": {"cpu": cpu, "memory": "64Mi"}}}]},
            "status": {"phase": "Pending"}}


def milli(q):
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def wait_for(fn, timeout, step=0.25):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def work_pods(api):
    return [p for p in api.control("state")["objects"]["pods"]
            if p["metadata"]["namespace"] == "work"]


def converged(api, sx):
    """The cache holds exactly the server's pods, on the server's nodes,
    none assumed."""
    st = api.control("state")["objects"]["pods"]
    want = {(p["metadata"]["namespace"], p["metadata"]["name"], p["spec"].get("nodeName", ""))
            for p in st}
    cache = sx.cache()["pods"]
    got = {(p["namespace"], p["name"], p["nodeName"]) for p in cache}
    return want == got and not any(p["assumed"] for p in cache)


def start_cluster(tmp, name, nodes=4, proxy=False, token=None, extra=()):
    args = ["--history", "5000", "--bookmark-interval", "1"]
    if token:
        args += ["--token", token]
    api = FakeApi(tmp, *args)
    api.apply([{"op": "create", "object": {"kind": "Namespace", "metadata": {"name": "work"}}}] +
              [{"op": "create", "object": node("node-%d" % i)} for i in range(nodes)])
    px = Proxy(api.port) if proxy else None
    kc = os.path.join(tmp, name + ".kubeconfig")
    user = {"tokenFile": os.path.join(tmp, name + ".token")} if token else None
    if token:
        with open(user["tokenFile"], "w") as f:
            f.write(token + "\n")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % (px.port if px else api.port), user)
    sx = Serve(tmp, kc, name, "--standalone", "-v=2", *extra)
    check(sx.wait_ready(30), "%s: schedext ready" % name)
    return api, px, sx, user


def test_api_server_outage_while_binding(tmp):
    api, px, sx, _ = start_cluster(tmp, "outage", proxy=True)
    try:
        # 200 pods: at the default 50 API requests/s their bindings take
        # seconds, so some are in flight when the server goes away
        api.apply([{"op": "create", "object": pod("p-%d" % i, "50m")} for i in range(200)])
        # cut the server off while the first bindings are going through
        wait_for(lambda: sum(1 for p in work_pods(api) if p["spec"].get("nodeName")) >= 5, 30,
                 step=0.05)
        t0 = time.time()
        px.down(OUTAGE_S)
        at_cut = sum(1 for p in work_pods(api) if p["spec"].get("nodeName"))
        # more pods arrive on the server during the outage
        api.apply([{"op": "create", "object": pod("late-%d" % i, "50m")} for i in range(20)])
        time.sleep(max(0.0, OUTAGE_S - (time.time() - t0)))
        ok = wait_for(lambda: all(p["spec"].get("nodeName") for p in work_pods(api)),
                      90 + OUTAGE_S)
        pods = work_pods(api)
        unbound = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        check(ok and len(pods) == 220, "outage: every pod bound after the server came back "
              "(unbound: %s)" % unbound[:5])
        check(px.refused > 0, "outage: the scheduler tried the server during the outage")
        # no pod bound twice: the server refuses a second binding, and a
        # node never holds more than its capacity
        by_node = collections.Counter()
        for p in pods:
            if p["spec"].get("nodeName"):
                by_node[p["spec"]["nodeName"]] += milli(
                    p["spec"]["containers"][0]["resources"]["requests"]["cpu"])
        check(all(v <= 4000 for v in by_node.values()), "outage: capacity %r" % by_node)
        rec = api.control("records")
        # no pod bound twice: the server accepted exactly one binding per
        # pod (a retry after a lost response is refused with 409)
        accepted = collections.Counter(b["name"] for b in rec["accepted_bindings"]
                                       if b["namespace"] == "work")
        check(all(accepted[p["metadata"]["name"]] == 1 for p in pods),
              "outage: every pod bound exactly once (%r)" %
              [k for k, v in accepted.items() if v != 1][:5])
        check(wait_for(lambda: converged(api, sx), 60),
              "outage: cache equals the server's pods, nothing assumed")
        before = sum(1 for p in pods if p["metadata"]["name"].startswith("p-"))
        check(len(rec["bindings"]) > 0 and px.refused > 0 and before == 200,
              "outage: bindings were attempted around the outage")
        check(sx.p.poll() is None, "outage: schedext still running")
        # bindings that failed during the outage were forgotten and retried
        retried = {l.split("scheduling ")[1].split(" failed")[0]
                   for l in sx.logtext().splitlines() if 'running Bind plugin' in l}
        check(retried, "outage: bindings failed during the outage (and were retried)")
        print("outage %.0fs: %d of 200 pods bound at the cut, %d bindings failed and were "
              "retried, %d binding requests reached the server for %d pods, %d connections "
              "refused" % (OUTAGE_S, at_cut, len(retried), len(rec["bindings"]), len(pods),
                           px.refused))
    finally:
        check(sx.stop() == 0, "outage: clean exit")
        px.close()
        api.stop()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_watch_30mb_object(tmp):
    api, _, sx, _ = start_cluster(tmp, "big")
    try:
        big = node("huge")
        big["metadata"]["annotations"] = {"blob": "x" * (30 << 20)}
        api.apply([{"op": "create", "object": big}])
        # over the 16 MiB event limit: the stream is dropped and re-listed
        check(wait_for(lambda: "watch event over" in sx.logtext(), 60),
              "30 MB: the oversized watch event is refused")
        api.apply([{"op": "create", "object": pod("after-big")}])
        check(wait_for(lambda: any(p["spec"].get("nodeName") for p in work_pods(api)
                                   if p["metadata"]["name"] == "after-big"), 60),
              "30 MB: a later pod is still scheduled")
        check(wait_for(lambda: any(n["name"] == "huge" for n in sx.cache()["nodes"]), 60),
              "30 MB: the object arrives through the re-list")
        rss = rss_kb(sx.p.pid)
        check(rss < 600 * 1024, "30 MB: RSS %d KiB stays bounded" % rss)
        check(sx.p.poll() is None, "30 MB: schedext still running")
    finally:
        check(sx.stop() == 0, "30 MB: clean exit")
        api.stop()


def test_token_file_rotation(tmp):
    api, _, sx, user = start_cluster(tmp, "token", token="t-1")
    try:
        api.apply([{"op": "create", "object": pod("before")}])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in work_pods(api)), 30),
              "token: pod bound before the rotation")
        tmpf = user["tokenFile"] + ".new"
        with open(tmpf, "w") as f:
            f.write("t-2\n")
        os.replace(tmpf, user["tokenFile"])
        api.control("token", {"token": "t-2"})  # t-1 is refused from now on
        api.control("drop", {})  # every watch reconnects with the new token
        api.apply([{"op": "create", "object": pod("after-%d" % i)} for i in range(5)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in work_pods(api)), 60),
              "token: pods created after the rotation are bound")
        check(wait_for(lambda: converged(api, sx), 30), "token: cache converges")
    finally:
        check(sx.stop() == 0, "token: clean exit")
        api.stop()


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_extender_hangs_up_halfway(tmp):
    state = os.path.join(tmp, "state.json")
    with open(state, "w") as f:
        json.dump({"kind": "List", "items": [node("a"), node("b")]}, f)
    sx = Server("--state", state, "--connection-timeout", "2")
    try:
        body = json.dumps({"Pod": pod("p"), "NodeNames": ["a", "b"]}).encode()
        url = "http://127.0.0.1:%d/filter" % sx.port
        code, _ = http("POST", url, json.loads(body))
        check(code == 200, "hangup: baseline request")
        base = fd_count(sx.proc.pid)
        head = (b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % (len(body) * 100))
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", sx.port))
            s.sendall(head + body[: len(body) // 2])
            if i % 2:
                s.shutdown(socket.SHUT_WR)  # half-close: no more body is coming
                s.settimeout(5)
                try:
                    reply = s.recv(4096)
                except OSError:
                    reply = b""
                check(b" 200 " not in reply.split(b"\r\n")[0], "hangup: no 200 for half a body")
            s.close()  # hang up mid-body
        stalled = [socket.create_connection(("127.0.0.1", sx.port)) for _ in range(5)]
        for s in stalled:
            s.sendall(head + body[:10])  # and stall (the 2 s timeout closes them)
        code, out = http("POST", url, json.loads(body))
        check(code == 200 and out.get("NodeNames") == ["a", "b"],
              "hangup: requests still answered (%s %r)" % (code, out))
        check(wait_for(lambda: fd_count(sx.proc.pid) <= base + 1, 15),
              "hangup: fds back to %d (now %d)" % (base, fd_count(sx.proc.pid)))
        for s in stalled:
            s.close()
        check(sx.proc.poll() is None, "hangup: schedext still running")
    finally:
        check(sx.stop() == 0, "hangup: clean exit")


if __name__ == "__main__":
    sys.exit(run_tests("test_chaos.py", [test_api_server_outage_while_binding,
                                         test_watch_30mb_object, test_token_file_rotation,
                                         test_extender_hangs_up_halfway]))
