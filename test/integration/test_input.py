#!/usr/bin/env python3
"""Issue 25, one demo and strict input: --state repeats and merges in every
command, the startup log says what it loaded, and every bad input of the
issue gets its exact one-line error (exit 2; 1 for a port in use); help
per command; what-if's memory bound."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, ROOT, Server, check, run_tests  # noqa: E402

KUBECTL = os.path.join(os.path.dirname(BIN), "kubectl-schedext")
DEMO = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
PENDING = os.path.join(ROOT, "extender-config", "demo-pending.yaml")
POD = os.path.join(ROOT, "extender-config", "demo-pod.yaml")


def run(*args, exe=BIN):
    r = subprocess.run([exe] + list(args), capture_output=True, timeout=60, cwd=ROOT)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def expect(args, rc, err, exe=BIN):
    got = run(*args, exe=exe)
    check(got[0] == rc and got[2] == err,
          "%s %s: want rc %d %r, got rc %d %r" % (os.path.basename(exe), args, rc, err, got[0], got[2]))


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


BAD_QTY = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: 1x5}}
"""
TYPO = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  contianers:
  - name: c
    image: x
"""


def test_options_exact(tmp):
    expect(["explain", "--stat", DEMO, "--pod", POD], 2, "schedext: explain: unknown option '--stat'\n")
    expect(["explain", "--pod", POD, "--state"], 2, "schedext: explain: option '--state' needs a value\n")
    expect(["explain", "--state", DEMO, "--pod", POD, "--format=text", "--help=x"], 2,
           "schedext: explain: option '--help' takes no value\n")
    expect(["why", "x", "--stat", DEMO], 2, "kubectl-schedext: unknown option '--stat'\n")
    expect(["pending", "--all-namespace"], 2, "kubectl-schedext: unknown option '--all-namespace'\n",
           exe=KUBECTL)
    expect(["serve", "--stat", DEMO], 2, "schedext serve: unknown option '--stat' (see --help)\n")


def test_pod_file_errors(tmp):
    missing = os.path.join(tmp, "missing.yaml")
    expect(["explain", "--state", DEMO, "--pod", missing], 2,
           "schedext: open %s: No such file or directory\n" % missing)
    bad = write(tmp, "badq.yaml", BAD_QTY)
    expect(["explain", "--state", DEMO, "--pod", bad], 2,
           "schedext: %s: pod default/p: spec.containers[0].resources.requests.cpu: "
           "invalid quantity \"1x5\"\n" % bad)
    typo = write(tmp, "typo.yaml", TYPO)
    expect(["explain", "--state", DEMO, "--pod", typo], 2,
           "schedext: %s: pod default/p: strict decoding error: unknown field \"spec.contianers\"\n" % typo)
    expect(["what-if", "--state", DEMO, "--pods", typo], 2,
           "kubectl-schedext: %s: pod default/p: strict decoding error: unknown field "
           "\"spec.contianers\"\n" % typo, exe=KUBECTL)
    expect(["what-if", "--state", DEMO, "--pods", missing + "x3"], 2,
           "kubectl-schedext: open %s: No such file or directory\n" % missing, exe=KUBECTL)
    node = write(tmp, "node.yaml", "kind: Node\nmetadata: {name: n9}\nspec: {unschedulabel: true}\n")
    expect(["what-if", "--state", DEMO, "--add-node", node], 2,
           "kubectl-schedext: %s: node n9: strict decoding error: unknown field "
           "\"spec.unschedulabel\"\n" % node, exe=KUBECTL)


def test_unknown_nodes(tmp):
    expect(["explain", "--state", DEMO, "--pod", POD, "--nodes", "worker-a1,nope"], 2,
           "schedext: explain: --nodes: node \"nope\" not found\n")
    rc, out, _ = run("explain", "--state", DEMO, "--pod", POD, "--nodes", "worker-a1,worker-a2")
    check(rc == 0 and json.loads(out)["numNodes"] == 7, "explain --nodes with known names")


def test_explain_merges_states(tmp):
    # a node only the second file has is a candidate
    extra = write(tmp, "extra.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: extra-1, labels: "
                  "{kubernetes.io/hostname: extra-1}}\nstatus: {allocatable: {cpu: '64', memory: 64Gi, "
                  "pods: '110'}}\n")
    rc, out, err = run("explain", "--state", DEMO, "--state", extra, "--pod", POD, "--nodes", "extra-1")
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r.get("numNodes") == 8 and r.get("selectedNode") == "extra-1",
          "explain merges --state files: %r %s" % (r.get("selectedNode"), err))


def test_state_field_warnings(tmp):
    dump = write(tmp, "dump.yaml", """apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, spec: {newNodeField: 1},
   status: {allocatable: {cpu: '4', pods: '110'}}}
- {apiVersion: v1, kind: Pod, metadata: {name: p1, namespace: default},
   spec: {newPodField: 1, containers: [{name: c, image: x}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: p2, namespace: default},
   spec: {newPodField: 2, containers: [{name: c, image: x}]}}
""")
    rc, out, err = run("pending", "-A", "--state", dump, exe=KUBECTL)
    warns = [re.sub(r"^\S+ \S+ ", "", l) for l in err.splitlines()]
    check(rc == 0 and warns == [
        "warning: %s: items[0] (node n1): unknown field \"spec.newNodeField\"" % dump,
        "warning: %s: items[1] (pod default/p1): unknown field \"spec.newPodField\"" % dump,
    ], "one warning per unknown field path: %r" % warns)
    srv = Server("--state", dump)
    try:
        log = srv.log_text()
        check(log.count("unknown field \"spec.newPodField\"") == 1, "serve warns once per path")
        check(re.search(r"state %s: 1 Node, 2 Pod\n" % re.escape(dump), log), "serve logs what it loaded")
    finally:
        check(srv.stop() == 0, "serve stops")


def test_serve_merges_states(tmp):
    srv = Server("--state", DEMO, "--state", PENDING)
    try:
        log = srv.log_text()
        check(re.search(r"state %s: 7 Node, 16 Pod, 3 Namespace, 5 Service, 6 ReplicaSet, 1 StatefulSet, "
                        r"1 PodDisruptionBudget, 4 PersistentVolume, 3 PersistentVolumeClaim, 1 StorageClass, "
                        r"6 CSINode, 1 CSIDriver, 1 VolumeAttachment\n" % re.escape(DEMO), log),
              "startup log: the demo's kinds")
        check(re.search(r"state %s: 3 Pod\n" % re.escape(PENDING), log), "startup log: the pending pods")
        status, body = srv.get("/debug/pending")
        check(status == 200 and json.loads(body)["pods"] == 3, "/debug/pending: 3 pods")
        status, body = srv.post_json("/debug/whatif", {"addNodes": [{"like": "worker-a1", "count": 2}]})
        check(status == 200 and body["pods"] >= 3, "/debug/whatif re-reads both files: %r" % body)
        for req, want in (({}, "Pod.metadata.name: required"),
                          ({"kind": "Node", "metadata": {"name": "x"}}, "Pod.kind: expected \"Pod\""),
                          ({"metadata": {"name": "x"}, "spec": {"contianers": []}},
                           "Pod: strict decoding error: unknown field \"spec.contianers\""),
                          ({"metadata": {"name": "x"}, "spec": {"containers": [
                              {"name": "c", "resources": {"requests": {"cpu": "zz"}}}]}},
                           "Pod.spec.containers[0].resources.requests.cpu: invalid quantity \"zz\"")):
            status, body = srv.post_json("/debug/explain", req)
            check(status == 400 and body == {"error": want}, "/debug/explain %r: %r %r" % (req, status, body))
    finally:
        check(srv.stop() == 0, "serve stops")


def test_port_in_use(tmp):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        rc, _, err = run("serve", "--state", DEMO, "--listen", "127.0.0.1:%d" % port)
        last = err.splitlines()[-1] if err else ""
        check(rc == 1 and last == "schedext serve: cannot listen on 127.0.0.1:%d: Address already in use" % port,
              "port in use: %d %r" % (rc, last))
    finally:
        s.close()


def test_why_web_two_states(tmp):
    p = subprocess.Popen([KUBECTL, "why", "report-batch-5d8f7", "-n", "shop", "--state", DEMO,
                          "--state", PENDING, "--web", "--listen", "127.0.0.1:0", "-o", "text"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    port, log = None, b""
    deadline = time.time() + 20
    try:
        os.set_blocking(p.stderr.fileno(), False)
        while time.time() < deadline and port is None and p.poll() is None:
            log += p.stderr.read() or b""
            m = re.search(rb"listening on \S+ \(port (\d+)", log)
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        check(port is not None, "why --web with two --state files serves: %r" % log[-300:])
        if port:
            import urllib.request
            body = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/debug/pending" % port).read())
            check(body["pods"] == 3, "why --web: the page sees both files")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)


ENDPOINTS = ["/filter", "/prioritize", "/preempt", "/bind", "/healthz", "/livez", "/readyz", "/version",
             "/metrics", "/configz", "/debug/explain", "/debug/cache", "/debug/pending", "/debug/whatif", "/ui"]


def test_help(tmp):
    """Every command has its own --help; the top-level usage lists every
    command; serve --help and extender-config/README.md every endpoint (the
    server's route table, src/cmd/server.c)."""
    with open(os.path.join(ROOT, "src", "cmd", "server.c")) as f:
        routes = re.findall(r'\[R_[A-Z_]+\]\s*=\s*\{\s*"[a-z]+",\s*"(/[a-z/]+)"', f.read())
    check(sorted(routes) == sorted(ENDPOINTS), "route table: %r" % routes)
    rc, out, _ = run("--help")
    for cmd in ("serve", "explain", "why", "pending", "what-if", "version", "help"):
        check(rc == 0 and re.search(r"^  %s " % re.escape(cmd), out, re.M), "usage lists %s" % cmd)
    rc, _, err = run()
    check(rc == 2 and err.startswith("usage: schedext <command>"), "no command: the usage, exit 2")
    for cmd, head in (("serve", "usage: schedext serve "), ("explain", "usage: schedext explain "),
                      ("why", "usage: kubectl schedext why POD"), ("pending", "usage: kubectl schedext pending"),
                      ("what-if", "usage: kubectl schedext what-if"), ("version", "usage: schedext version")):
        rc, out, _ = run(cmd, "--help")
        check(rc == 0 and out.startswith(head), "%s --help: %r" % (cmd, out[:60]))
    rc, serve_help, _ = run("serve", "--help")
    with open(os.path.join(ROOT, "extender-config", "README.md")) as f:
        doc = f.read()
    for ep in ENDPOINTS:
        check(re.search(r"[ /]%s\b" % re.escape(ep.lstrip("/")), serve_help), "serve --help lists %s" % ep)
        check("`%s" % ep in doc, "extender-config/README.md lists %s" % ep)


def test_what_if_memory(tmp):
    """what-if x100000 on the demo stays within 200 MB (issue 25): the
    copies are made from one template as they are loaded. Measured on the
    plain build only (sanitizers multiply memory)."""
    import resource
    if os.path.basename(os.path.dirname(BIN)) != "build":
        print("skipping the memory bound under %s" % os.path.dirname(BIN))
        return
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rc, out, err = run("what-if", "--state", DEMO, "--pods", POD + "x100000", "-o", "json", exe=KUBECTL)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r.get("pods") == 100000 and r.get("placed", 0) > 0,
          "what-if x100000: %s %s" % ({k: r.get(k) for k in ("pods", "placed")}, err[-200:]))
    check(peak_kb >= before and peak_kb < 200 * 1024, "what-if x100000 peak RSS %d MB < 200 MB" % (peak_kb // 1024))


if __name__ == "__main__":
    sys.exit(run_tests("test_input.py", [
        test_options_exact, test_pod_file_errors, test_unknown_nodes, test_explain_merges_states,
        test_state_field_warnings, test_serve_merges_states, test_port_in_use, test_why_web_two_states,
        test_help, test_what_if_memory]))
