"""Integration tests of `schedext serve`: every extender verb in both node
modes with exact field names and codes, TLS (a CA generated here, curl as
the client), the operations endpoints, and a table of hostile requests after
each of which the server must still answer correctly."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import ROOT, Checker, Server  # noqa: E402

T = Checker("test_server")
TMP = tempfile.mkdtemp(prefix="schedext-server-")

# A small cluster whose answers are known exactly.
STATE = """
apiVersion: v1
kind: Node
metadata: {name: node-a, resourceVersion: "11", labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: z1}}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, resourceVersion: "12", labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: z2}}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: cp, resourceVersion: "13", labels: {kubernetes.io/hostname: cp}}
spec:
  taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: node-u, resourceVersion: "14", labels: {kubernetes.io/hostname: node-u}}
spec: {unschedulable: true}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default, uid: uid-low, resourceVersion: "21", labels: {app: low}}
spec:
  nodeName: node-b
  priority: 0
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]
status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: mid, namespace: default, uid: uid-mid, resourceVersion: "22", labels: {app: mid}}
spec:
  nodeName: node-b
  priority: 5
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 200m, memory: 100Mi}}}]
status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: pend, namespace: default, uid: uid-pend, resourceVersion: "23"}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
status: {phase: Pending}
"""


def pod(name, cpu="1", priority=None, uid=None):
    spec = {"containers": [{"name": "c", "image": "nginx",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or "uid-" + name},
            "spec": spec, "status": {"phase": "Pending"}}


NODE_B_OBJ = {"metadata": {"name": "node-b", "labels": {"kubernetes.io/hostname": "node-b"}},
              "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"},
                         "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}
NODE_NEW_OBJ = {"metadata": {"name": "node-new", "creationTimestamp": None},
                "spec": {}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}

FILTER_REQ = {"Pod": pod("p1"), "Nodes": None,
              "NodeNames": ["node-a", "node-b", "cp", "node-u", "ghost"]}
FILTER_WANT = {
    "NodeNames": ["node-a"],
    "Nodes": None,
    "FailedNodes": {"node-b": "Insufficient cpu",
                    "ghost": "node(s) not found in the schedext cache"},
    "FailedAndUnresolvableNodes": {
        "cp": "node(s) had untolerated taint(s)",
        "node-u": "node(s) were unschedulable"},
    "Error": "",
}


def check_filter_ok(srv, what):
    status, body = srv.post_json("/filter", FILTER_REQ)
    T.eq(status, 200, what + ": filter status")
    T.eq(body, FILTER_WANT, what + ": filter body")


def test_filter(srv):
    check_filter_ok(srv, "filter NodeNames")
    # Key order of the raw reply: PascalCase, exactly these keys.
    _, _, raw = srv.request("POST", "/filter", FILTER_REQ)
    T.check(raw.startswith(b'{"NodeNames":["node-a"],"Nodes":null,"FailedNodes":'), "filter raw prefix", raw[:80])
    # Lower-case keys (legacy clients) are accepted.
    status, body = srv.post_json("/filter", {"pod": pod("p1"), "nodes": None,
                                             "nodenames": ["node-a", "node-b"]})
    T.eq((status, body["NodeNames"], sorted(body["FailedNodes"])), (200, ["node-a"], ["node-b"]),
         "filter lower-case keys")
    # Nothing fits: [] not null.
    status, body = srv.post_json("/filter", {"Pod": pod("p1"), "NodeNames": ["node-b"]})
    T.eq(body, {"NodeNames": [], "Nodes": None, "FailedNodes": {"node-b": "Insufficient cpu"},
                "FailedAndUnresolvableNodes": {}, "Error": ""}, "filter none pass")
    # A request above the node's whole allocatable cannot be helped by preemption.
    status, body = srv.post_json("/filter", {"Pod": pod("huge", cpu="64"), "NodeNames": ["node-a"]})
    T.eq(body["FailedAndUnresolvableNodes"], {"node-a": "Insufficient cpu"}, "filter over allocatable")
    # Nodes mode: the node objects of the request are used (node-b with 8
    # cpus fits although the cache has 2), pods still come from the cache,
    # passing nodes are echoed byte for byte.
    req = {"Pod": pod("p1", cpu="6"), "NodeNames": None,
           "Nodes": {"metadata": {}, "items": [NODE_B_OBJ, NODE_NEW_OBJ]}}
    status, hdrs, raw = srv.request("POST", "/filter", req)
    body = json.loads(raw)
    T.eq(status, 200, "filter Nodes status")
    T.eq(body["Nodes"], {"metadata": {}, "items": [NODE_B_OBJ]}, "filter Nodes passing objects")
    T.eq(body["NodeNames"], None, "filter Nodes: NodeNames null")
    T.eq((body["FailedNodes"], body["FailedAndUnresolvableNodes"]),
         ({}, {"node-new": "Insufficient cpu"}), "filter Nodes failed")
    T.check(json.dumps(NODE_B_OBJ).encode() in raw, "filter Nodes echoes the original bytes")
    # node-b in the request has 8 cpus but low+mid (1700m) still run there.
    req["Pod"] = pod("p1", cpu="7")
    _, body = srv.post_json("/filter", req)
    T.eq(body["FailedNodes"], {"node-b": "Insufficient cpu"}, "filter Nodes counts cached pods")
    T.eq(hdrs.get("content-type"), "application/json", "filter content type")


def test_prioritize(srv):
    status, body = srv.post_json("/prioritize", {"Pod": pod("p1", cpu="500m"),
                                                 "NodeNames": ["node-a", "node-b", "ghost"]})
    T.eq(status, 200, "prioritize status")
    T.eq([e["Host"] for e in body], ["node-a", "node-b", "ghost"], "prioritize hosts in order")
    T.check(all(set(e) == {"Host", "Score"} and isinstance(e["Score"], int) for e in body),
            "prioritize exact keys and integer scores", body)
    T.eq(body[0]["Score"], 10, "prioritize best node gets 10")
    T.check(0 <= body[1]["Score"] < 10, "prioritize busier node scores lower", body)
    T.eq(body[2]["Score"], 0, "prioritize unknown node scores 0")
    _, _, raw = srv.request("POST", "/prioritize", {"Pod": pod("p1"), "NodeNames": ["node-a"]})
    T.eq(raw.strip(), b'[{"Host":"node-a","Score":10}]', "prioritize raw bytes")
    status, body = srv.post_json("/prioritize", {"Pod": pod("p1"), "Nodes": {
        "metadata": {}, "items": [NODE_B_OBJ, NODE_NEW_OBJ]}})
    T.eq((status, [e["Host"] for e in body]), (200, ["node-b", "node-new"]), "prioritize Nodes mode")


def test_preempt(srv):
    big = pod("big", cpu="1500m", priority=100)
    req = {"Pod": big, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
        "node-b": {"Pods": [{"UID": "uid-low"}, {"UID": "uid-mid"}], "NumPDBViolations": 0},
        "node-a": {"Pods": [{"UID": "not-there"}], "NumPDBViolations": 0},
        "ghost": {"Pods": [{"UID": "uid-low"}], "NumPDBViolations": 0}}}
    status, body = srv.post_json("/preempt", req)
    T.eq(status, 200, "preempt status")
    # mid (priority 5) is reprieved; node-a needs no victim -> dropped; ghost unknown -> dropped.
    T.eq(body, {"NodeNameToMetaVictims": {"node-b": {"Pods": [{"UID": "uid-low"}],
                                                     "NumPDBViolations": 0}}}, "preempt meta victims")
    # Full victims (nodeCacheCapable false); a pod that cannot fit even with all victims gone.
    full = {"Pod": pod("giant", cpu="3", priority=100), "NodeNameToMetaVictims": None,
            "NodeNameToVictims": {"node-b": {"Pods": [
                {"metadata": {"name": "low", "namespace": "default", "uid": "uid-low"},
                 "spec": {"nodeName": "node-b", "containers": [{"name": "c", "image": "nginx"}]}}],
                "NumPDBViolations": 0}}}
    status, body = srv.post_json("/preempt", full)
    T.eq((status, body), (200, {"NodeNameToMetaVictims": {}}), "preempt drops nodes where it cannot fit")
    full["Pod"] = big
    status, body = srv.post_json("/preempt", full)
    T.eq(body, {"NodeNameToMetaVictims": {"node-b": {"Pods": [{"UID": "uid-low"}],
                                                     "NumPDBViolations": 0}}}, "preempt full victims")


def test_bind(srv):
    ok = {"Error": ""}
    args = {"PodName": "pend", "PodNamespace": "default", "PodUID": "uid-pend", "Node": "node-a"}
    T.eq(srv.post_json("/bind", args), (200, ok), "bind")
    T.eq(srv.post_json("/bind", args), (200, ok), "bind idempotent")
    T.eq(srv.post_json("/bind", dict(args, Node="node-b")),
         (200, {"Error": 'pods "pend" is already assigned to node "node-a"'}), "bind elsewhere")
    T.eq(srv.post_json("/bind", dict(args, PodName="nope", PodUID="x")),
         (200, {"Error": 'pods "nope" not found'}), "bind unknown pod")
    T.eq(srv.post_json("/bind", dict(args, PodUID="other")),
         (200, {"Error": "Precondition failed: UID in precondition: other, UID in object meta: uid-pend"}),
         "bind UID precondition")
    T.eq(srv.post_json("/bind", {"podname": "low", "podnamespace": "default", "poduid": "uid-low",
                                 "node": "node-b"}), (200, ok), "bind lower-case keys, already there")
    # The assumed pod's cpu now counts on node-a: 3.5 cpus no longer fit.
    status, body = srv.post_json("/filter", {"Pod": pod("p2", cpu="3500m"), "NodeNames": ["node-a"]})
    T.eq(body["FailedNodes"], {"node-a": "Insufficient cpu"}, "bind: assumed pod counted")
    status, data = srv.get("/debug/cache")
    pend = [p for p in json.loads(data)["pods"] if p["name"] == "pend"]
    T.eq([(p["nodeName"], p["resourceVersion"]) for p in pend], [("node-a", "23")], "debug/cache after bind")


def test_ops(srv):
    T.eq(srv.get("/healthz"), (200, b"ok"), "healthz (as the apiserver healthz handler: no newline)")
    T.eq(srv.get("/livez"), (200, b"ok"), "livez")
    T.eq(srv.get("/readyz"), (200, b"ok"), "readyz with --state")
    status, data = srv.get("/version")
    T.eq((status, "version" in json.loads(data)), (200, True), "version")
    status, data = srv.get("/debug/cache")
    cache = json.loads(data)
    T.eq(cache["nodes"], [{"name": "cp", "resourceVersion": "13"},
                          {"name": "node-a", "resourceVersion": "11"},
                          {"name": "node-b", "resourceVersion": "12"},
                          {"name": "node-u", "resourceVersion": "14"}], "debug/cache nodes sorted")
    T.eq([(p["namespace"], p["name"], p["nodeName"], p["resourceVersion"]) for p in cache["pods"]],
         [("default", "low", "node-b", "21"), ("default", "mid", "node-b", "22"),
          ("default", "pend", "", "23")], "debug/cache pods sorted")
    status, hdrs, raw = srv.request("POST", "/debug/explain", pod("p1"))
    ex = json.loads(raw)
    T.eq((status, ex["pod"], ex["feasibleNodes"], ex["selectedNode"]),
         (200, "default/p1", ["node-a"], "node-a"), "debug/explain")
    T.eq(sorted(ex["filter"]), ["cp", "node-b", "node-u"], "debug/explain filter nodes")
    status, hdrs, _ = srv.request("GET", "/filter")
    T.eq((status, hdrs.get("allow")), (405, "POST"), "GET /filter -> 405 with Allow")
    T.eq(srv.request("POST", "/healthz", "{}")[0], 405, "POST /healthz -> 405")
    T.eq(srv.request("GET", "/nope")[0], 404, "unknown path -> 404")
    status, hdrs, raw = srv.request("GET", "/metrics")
    text = raw.decode()
    T.eq(status, 200, "metrics status")
    T.check(hdrs.get("content-type", "").startswith("text/plain; version=0.0.4"), "metrics content type")
    for needle in ['schedext_http_requests_total{verb="filter",code="200"}',
                   'schedext_http_requests_total{verb="unknown",code="404"}',
                   'schedext_http_request_duration_seconds_bucket{verb="filter",le="+Inf"}',
                   'schedext_http_request_duration_seconds_count{verb="prioritize"}',
                   "schedext_cache_nodes 4", 'schedext_cache_pods{state="bound"} 2',
                   'schedext_extender_verb_requests_total{verb="filter",result="feasible"} ',
                   "schedext_watch_restarts_total 0", "# TYPE schedext_http_request_duration_seconds histogram"]:
        T.check(needle in text, "metrics has " + needle)
    status, hdrs, _ = srv.request("HEAD", "/healthz")
    T.eq(status, 200, "HEAD /healthz")


def test_keepalive(srv):
    """Several requests on one connection, each reply in one piece."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    for i in range(5):
        conn.request("POST", "/filter", body=json.dumps(FILTER_REQ),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        T.eq((r.status, json.loads(r.read())), (200, FILTER_WANT), "keep-alive request %d" % i)
    conn.close()


# (name, method, path, body bytes, extra headers, expected status, error substring)
P = json.dumps(pod("p1"))
HOSTILE = [
    ("empty body", "POST", "/filter", b"", {}, 400, "empty request body"),
    ("not json", "POST", "/filter", b"hello", {}, 400, "malformed JSON"),
    ("truncated json", "POST", "/filter", b'{"Pod":{"metadata":', {}, 400, "malformed JSON"),
    ("trailing garbage", "POST", "/filter", b'{"Pod":{},"NodeNames":[]} xx', {}, 400, "trailing data"),
    ("array body", "POST", "/filter", b"[1,2]", {}, 400, "must be a JSON object"),
    ("string body", "POST", "/filter", b'"x"', {}, 400, "must be a JSON object"),
    ("missing Pod", "POST", "/filter", b'{"NodeNames":["node-a"]}', {}, 400, "missing Pod"),
    ("null Pod", "POST", "/filter", b'{"Pod":null,"NodeNames":["node-a"]}', {}, 400, "missing Pod"),
    ("Pod wrong type", "POST", "/filter", b'{"Pod":[],"NodeNames":["node-a"]}', {}, 400, "Pod: expected object"),
    ("no nodes", "POST", "/filter", ('{"Pod":%s}' % P).encode(), {}, 400, "missing NodeNames or Nodes"),
    ("both node forms", "POST", "/filter", ('{"Pod":%s,"NodeNames":[],"Nodes":{"items":[]}}' % P).encode(),
     {}, 400, "only one of"),
    ("NodeNames wrong type", "POST", "/filter", ('{"Pod":%s,"NodeNames":"node-a"}' % P).encode(), {}, 400,
     "NodeNames: expected array"),
    ("NodeNames item type", "POST", "/filter", ('{"Pod":%s,"NodeNames":[7]}' % P).encode(), {}, 400,
     "NodeNames[0]: expected string"),
    ("duplicate key", "POST", "/filter", ('{"Pod":%s,"NodeNames":[],"nodeNames":[]}' % P).encode(), {}, 400,
     "duplicate key"),
    ("Nodes.items wrong type", "POST", "/filter", ('{"Pod":%s,"Nodes":{"items":{}}}' % P).encode(), {}, 400,
     "Nodes.items: expected array"),
    ("bad node quantity", "POST", "/filter",
     ('{"Pod":%s,"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}]}}' % P).encode(),
     {}, 400, "Nodes.items[0]"),
    ("bad pod quantity", "POST", "/filter",
     b'{"Pod":{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1e999999"}}}]}},"NodeNames":[]}',
     {}, 400, "Pod.spec.containers[0].resources.requests.cpu"),
    ("absurd priority", "POST", "/filter", b'{"Pod":{"metadata":{"name":"x"},"spec":{"priority":1e300}},"NodeNames":[]}',
     {}, 400, "Pod.spec.priority"),
    ("deep nesting", "POST", "/filter", b"[" * 100000 + b"]" * 100000, {}, 400, "nesting"),
    ("deep nesting in pod", "POST", "/filter", b'{"Pod":{"metadata":' + b'{"a":' * 80 + b"1" + b"}" * 81 + b"}",
     {}, 400, "nesting"),
    ("invalid utf-8", "POST", "/filter", b'{"Pod":{"metadata":{"name":"\xc3\x28"}},"NodeNames":[]}', {}, 400, "invalid UTF-8"),
    ("overlong utf-8", "POST", "/filter", b'{"Pod":{"metadata":{"name":"\xc0\xaf"}},"NodeNames":[]}', {}, 400, "invalid UTF-8"),
    ("NUL byte", "POST", "/filter", b'{"Pod":\x00}', {}, 400, "NUL"),
    ("prioritize bad", "POST", "/prioritize", b'{"Pod":1,"NodeNames":[]}', {}, 400, "Pod: expected object"),
    ("preempt no map", "POST", "/preempt", ('{"Pod":%s}' % P).encode(), {}, 400, "missing NodeNameToMetaVictims"),
    ("preempt bad victims", "POST", "/preempt", ('{"Pod":%s,"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":5}]}}}' % P).encode(),
     {}, 400, "UID: expected string"),
    ("preempt fractional count", "POST", "/preempt",
     ('{"Pod":%s,"NodeNameToMetaVictims":{"node-b":{"Pods":[],"NumPDBViolations":1.5}}}' % P).encode(), {}, 400,
     "NumPDBViolations"),
    ("bind missing node", "POST", "/bind", b'{"PodName":"a","PodNamespace":"default","PodUID":"u"}', {}, 400, "missing Node"),
    ("bind wrong type", "POST", "/bind", b'{"PodName":1,"PodNamespace":"default","PodUID":"u","Node":"n"}', {}, 400,
     "PodName: expected string"),
    ("bind huge name", "POST", "/bind", ('{"PodName":"%s","PodNamespace":"d","PodUID":"u","Node":"n"}' % ("x" * 5000)).encode(),
     {}, 400, "longer than 253"),
    ("explain not a pod", "POST", "/debug/explain", b"[]", {}, 400, "v1 Pod"),
    ("too large", "POST", "/filter", b"x" * 100, {"Content-Length": str(2 << 20)}, 413, "exceeds the limit"),
    ("wrong method", "PUT", "/filter", b"{}", {}, 405, "not allowed"),
    ("DELETE healthz", "DELETE", "/healthz", None, {}, 405, "not allowed"),
    ("unknown path", "POST", "/filterx", b"{}", {}, 404, "no such path"),
    ("path traversal", "GET", "/../../etc/passwd", None, {}, 404, ""),
]


def test_hostile(srv):
    for name, method, path, body, hdrs, want, needle in HOSTILE:
        try:
            status, _, raw = srv.request(method, path, body, headers=hdrs)
        except Exception as e:  # the server may close after an early reply
            T.check(False, "hostile %s: request failed: %r" % (name, e))
            continue
        T.eq(status, want, "hostile %s: status" % name)
        if needle:
            try:
                err = json.loads(raw)["error"]
            except Exception:
                err = raw.decode(errors="replace")
            T.check(needle in err, "hostile %s: error names the problem" % name, err)
        T.eq(srv.get("/healthz")[0], 200, "hostile %s: healthz after" % name)
        check_filter_ok(srv, "hostile %s: filter after" % name)
    # Raw socket abuse: garbage, a lying Content-Length, half a request, a slow client.
    raws = [b"GARBAGE\r\n\r\n", b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
            b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\"",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Junk: " + b"a" * 300000 + b"\r\n\r\n"]
    for i, data in enumerate(raws):
        try:
            srv.raw(data, read_timeout=3)
        except OSError:
            pass
        T.eq(srv.get("/healthz")[0], 200, "raw abuse %d: healthz after" % i)
        check_filter_ok(srv, "raw abuse %d: filter after" % i)
    # A chunked body past the limit (no Content-Length to refuse early).
    chunk = b"x" * 65536
    data = b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    data += (b"10000\r\n" + chunk + b"\r\n") * 20 + b"0\r\n\r\n"
    out = srv.raw(data)
    T.check(out.startswith(b"HTTP/1.1 413"), "chunked body over the limit -> 413", out[:100])
    check_filter_ok(srv, "after chunked over limit")
    # Many idle connections, then a normal request.
    socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(50)]
    check_filter_ok(srv, "with 50 idle connections")
    for s in socks:
        s.close()


def test_url_prefix(state):
    srv = Server("--state", state, "--url-prefix", "/scheduler/")
    try:
        status, body = srv.post_json("/scheduler/filter", FILTER_REQ)
        T.eq((status, body), (200, FILTER_WANT), "url prefix filter")
        T.eq(srv.request("POST", "/filter", FILTER_REQ)[0], 404, "url prefix: bare verb 404")
        T.eq(srv.get("/healthz")[0], 200, "url prefix: healthz at root")
    finally:
        T.eq(srv.stop(), 0, "url prefix: graceful exit code")


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=TMP)


def make_certs():
    """A CA, a server cert for 127.0.0.1, a client cert from the CA, and a
    client cert from an unrelated CA."""
    ext = os.path.join(TMP, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for ca in ("ca", "evil-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key",
                "-out", ca + ".crt", "-days", "2", "-subj", "/CN=" + ca)
    for name, ca, extra in (("server", "ca", ["-extfile", ext]), ("client", "ca", []),
                            ("evil", "evil-ca", [])):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
                name + ".csr", "-subj", "/CN=" + name)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
                "-CAcreateserial", "-out", name + ".crt", "-days", "2", *extra)
    return {n: os.path.join(TMP, n) for n in ("ca.crt", "server.crt", "server.key", "client.crt",
                                               "client.key", "evil.crt", "evil.key")}


def curl(port, path, certs, client=None, data=None):
    cmd = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "--cacert", certs["ca.crt"],
           "https://127.0.0.1:%d%s" % (port, path)]
    if client:
        cmd += ["--cert", certs[client + ".crt"], "--key", certs[client + ".key"]]
    if data is not None:
        cmd += ["-H", "Content-Type: application/json", "--data-binary", data]
    r = subprocess.run(cmd, capture_output=True, timeout=30)
    out = r.stdout.decode().rsplit("\n", 1)
    return (int(out[1]) if len(out) == 2 and out[1].isdigit() else 0), out[0].strip(), r.returncode


def test_tls(state):
    if not shutil.which("openssl") or not shutil.which("curl"):
        T.check(False, "tls: openssl and curl are required")
        return
    certs = make_certs()
    srv = Server("--state", state, "--tls-cert", certs["server.crt"], "--tls-key", certs["server.key"])
    try:
        code, body, _ = curl(srv.port, "/healthz", certs)
        T.eq((code, body), (200, "ok"), "tls healthz")
        code, body, _ = curl(srv.port, "/filter", certs, data=json.dumps(FILTER_REQ))
        T.eq((code, json.loads(body)), (200, FILTER_WANT), "tls filter")
        r = subprocess.run(["curl", "-sS", "http://127.0.0.1:%d/healthz" % srv.port], capture_output=True,
                           timeout=30)
        T.check(r.stdout not in (b"ok", b"ok\n"), "tls: plain HTTP is not served")
        T.check(b"listening" in srv.log_text().encode() and b"https" in srv.log_text().encode(), "tls logged")
    finally:
        T.eq(srv.stop(), 0, "tls: exit code")
    srv = Server("--state", state, "--tls-cert", certs["server.crt"], "--tls-key", certs["server.key"],
                 "--tls-client-ca", certs["ca.crt"])
    try:
        code, body, _ = curl(srv.port, "/filter", certs, client="client", data=json.dumps(FILTER_REQ))
        T.eq((code, json.loads(body)), (200, FILTER_WANT), "mtls filter with a client cert")
        code, _, _ = curl(srv.port, "/healthz", certs)
        T.check(code != 200, "mtls: no client cert rejected", code)
        code, _, _ = curl(srv.port, "/healthz", certs, client="evil")
        T.check(code != 200, "mtls: cert from another CA rejected", code)
        code, body, _ = curl(srv.port, "/healthz", certs, client="client")
        T.eq((code, body), (200, "ok"), "mtls: still serving")
    finally:
        T.eq(srv.stop(), 0, "mtls: exit code")


def test_usage():
    import subprocess as sp
    from sxtest import BIN
    for args, needle in ((["--threads", "0"], "--threads"), (["--bogus"], "unknown option"),
                         (["--listen"], "needs a value"), (["--tls-cert", "x"], "--tls-key"),
                         (["--state", "/nonexistent.yaml"], "nonexistent"),
                         (["--listen", "nonsense", "--state", "x"], "")):
        r = sp.run([BIN, "serve"] + args, capture_output=True, timeout=30)
        T.eq(r.returncode, 2, "usage %s: exit 2" % args)
        T.check(needle in r.stderr.decode(), "usage %s names the problem" % args, r.stderr)
        T.eq(r.stderr.decode().count("\n"), 1, "usage %s: one line" % args)
    r = sp.run([BIN, "serve", "--help"], capture_output=True, timeout=30)
    T.check(r.returncode == 0 and b"--listen" in r.stdout, "serve --help")


def test_demo_examples():
    """The checked-in example payloads against the demo cluster."""
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    exdir = os.path.join(ROOT, "extender-config", "examples")
    if not os.path.exists(demo) or not os.path.isdir(exdir):
        print("skipping demo examples (demo cluster or examples missing)")
        return
    srv = Server("--state", demo)
    try:
        for name in sorted(os.listdir(exdir)):
            if not name.endswith(".json"):
                continue
            verb = name.split("-")[0].split(".")[0]
            path = "/debug/explain" if verb == "explain" else "/" + verb
            with open(os.path.join(exdir, name), "rb") as f:
                status, _, raw = srv.request("POST", path, f.read())
            T.eq(status, 200, "example %s: status" % name)
            body = json.loads(raw)
            if verb == "filter":
                T.check(body.get("Error") == "" and (body.get("NodeNames") or body.get("Nodes", {}).get("items")),
                        "example %s: some node passes" % name, body)
            elif verb == "prioritize":
                T.check(isinstance(body, list) and any(e["Score"] == 10 for e in body), "example %s" % name, body)
            elif verb == "preempt":
                T.check(len(body.get("NodeNameToMetaVictims") or {}) >= 1, "example %s: a node kept" % name, body)
            elif verb == "bind":
                T.eq(body, {"Error": ""}, "example %s" % name)
            elif verb == "explain":
                T.eq(body.get("pod"), "shop/web-7c9d8f6b5-p6vnq", "example %s" % name)
    finally:
        T.eq(srv.stop(), 0, "demo: exit code")


def readme_examples():
    """(command, expected output) pairs of the console block in README.md's
    Extender section."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    sec = text.split("\n## Extender\n", 1)[1].split("\n## ", 1)[0]
    block = sec.split("```console\n", 1)[1].split("```", 1)[0]
    pairs = []
    for line in block.splitlines():
        if line.startswith("$ "):
            pairs.append([line[2:], []])
        elif pairs:
            pairs[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in pairs]


def test_readme_examples():
    """README.md's curl examples print what the README says, against the
    demo cluster that `make run` serves (localhost:8888 -> the test port)."""
    import subprocess as sp
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    pending = os.path.join(ROOT, "extender-config", "demo-pending.yaml")
    examples = readme_examples()
    T.check(len(examples) >= 6, "README Extender examples found", examples)
    srv = Server("--state", demo, "--state", pending)  # what `make run` serves
    try:
        for cmd, want in examples:
            if "| jq" in cmd and not shutil.which("jq"):
                print("skipping README example (no jq): %s" % cmd)
                continue
            run = cmd.replace("localhost:8888", "127.0.0.1:%d" % srv.port)
            r = sp.run(["bash", "-c", "set -o pipefail; " + run], cwd=ROOT, capture_output=True, timeout=60)
            T.eq(r.returncode, 0, "README example exit code: %s" % cmd)
            T.eq(r.stdout.decode().strip(), want.strip(), "README example output: %s" % cmd)
    finally:
        T.eq(srv.stop(), 0, "README examples: exit code")


def main():
    state = os.path.join(TMP, "state.yaml")
    with open(state, "w") as f:
        f.write(STATE)
    srv = Server("--state", state, "--max-body-bytes", str(1 << 20), "--threads", "4")
    try:
        test_filter(srv)
        test_prioritize(srv)
        test_preempt(srv)
        test_ops(srv)
        test_keepalive(srv)
        test_hostile(srv)
        test_bind(srv)
        T.check("filter pod=default/p1 nodes=5 code=200 result=1 passed, 4 failed" in srv.log_text(),
                "per-request log line at -v=2")
    finally:
        T.eq(srv.stop(), 0, "graceful shutdown exit code")
    test_url_prefix(state)
    test_tls(state)
    test_usage()
    test_demo_examples()
    test_readme_examples()
    shutil.rmtree(TMP, ignore_errors=True)
    T.done()


if __name__ == "__main__":
    main()
