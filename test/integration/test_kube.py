#!/usr/bin/env python3
"""Live-cluster client against test/fakeapi/fakeapi.py:

(a) convergence: thousands of random node/pod changes while every fault is
    injected; afterwards /debug/cache equals the server's state exactly;
(b) a bind through /bind arrives as a correct v1 Binding, and conflicts
    come back with the API server's message;
(c) TLS with a test CA and client certificate works (also through
    tls-server-name); a wrong CA fails with a clear message.
"""
import base64
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, http, run_tests, write_kubeconfig  # noqa: E402


def node(name, labels=None, cpu="4"):
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(ns, name, node_name="", phase="Pending", labels=None, cpu="100m"):
    spec = {"containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": spec, "status": {"phase": phase}}


def expected_state(api):
    st = api.control("state")["objects"]
    nodes = {n["metadata"]["name"]: n["metadata"]["resourceVersion"] for n in st["nodes"]}
    pods = {}
    for p in st["pods"]:
        if p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        md = p["metadata"]
        pods[(md["namespace"], md["name"])] = (md["resourceVersion"],
                                               p.get("spec", {}).get("nodeName", ""))
    return nodes, pods


def cache_state(sx):
    c = sx.cache()
    nodes = {n["name"]: n["resourceVersion"] for n in c["nodes"]}
    pods = {(p["namespace"], p["name"]): (p["resourceVersion"], p["nodeName"]) for p in c["pods"]}
    return nodes, pods


def diff(exp, got):
    missing = sorted(set(exp) - set(got))[:5]
    extra = sorted(set(got) - set(exp))[:5]
    wrong = sorted(k for k in set(exp) & set(got) if exp[k] != got[k])[:5]
    return "missing %s extra %s wrong %s" % (missing, extra, [(k, exp[k], got[k]) for k in wrong])


# ---------------------------------------------------------------- (a)
def random_op(rng, nodes, pods):
    r = rng.random()
    if r < 0.12 or not nodes:
        name = "node-%d" % rng.randrange(200)
        return {"op": "upsert", "object": node(name, {"zone": rng.choice("abc")})}, ("n", name)
    if r < 0.20:
        name = rng.choice(sorted(nodes))
        return {"op": "delete", "object": {"kind": "Node", "metadata": {"name": name}}}, ("nd", name)
    if r < 0.55 or not pods:
        ns = rng.choice(["default", "team-a", "team-b"])
        name = "pod-%d" % rng.randrange(1500)
        nn = rng.choice(sorted(nodes)) if rng.random() < 0.6 else ""
        return {"op": "upsert", "object": pod(ns, name, nn, labels={"v": str(rng.randrange(9))})}, ("p", (ns, name))
    key = rng.choice(sorted(pods))
    if r < 0.75:
        return {"op": "delete", "object": {"kind": "Pod", "metadata": {"namespace": key[0], "name": key[1]}}}, ("pd", key)
    if r < 0.82:  # terminal: leaves the field selector, cache must drop it
        return {"op": "update", "object": pod(key[0], key[1], pods[key], phase="Succeeded")}, ("pt", key)
    return {"op": "update", "object": pod(key[0], key[1], pods[key], phase="Running",
                                          labels={"v": str(rng.randrange(9))})}, ("p", key)


def run_ops(api, rng, count, nodes, pods, between=None):
    done = 0
    while done < count:
        batch = []
        for _ in range(min(25, count - done)):
            op, (what, key) = random_op(rng, nodes, pods)
            batch.append(op)
            if what == "n":
                nodes.add(key)
            elif what == "nd":
                nodes.discard(key)
            elif what == "p":
                pods[key] = op["object"]["spec"].get("nodeName", "")
            elif what in ("pd", "pt"):
                pods.pop(key, None)
        api.apply(batch)
        done += len(batch)
        if between:
            between(done)
        time.sleep(0.02)


def test_convergence(tmp):
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write("token-1\n")
    api = FakeApi(tmp, "--token", "token-1", "--history", "300", "--bookmark-interval", "0.5",
                  "--seed", "5")
    kc = os.path.join(tmp, "kubeconfig")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port, {"tokenFile": token_file})
    rng = random.Random(42)
    nodes, pods = set(), {}
    api.apply([{"op": "create", "object": node("node-%d" % i)} for i in range(40)])
    nodes.update("node-%d" % i for i in range(40))
    # More than one LIST page (limit=500) for pods.
    initial = [pod("default", "seed-%d" % i, "node-%d" % (i % 40)) for i in range(700)]
    for i in range(0, 700, 100):
        api.apply([{"op": "create", "object": o} for o in initial[i:i + 100]])
    pods.update({("default", "seed-%d" % i): "node-%d" % (i % 40) for i in range(700)})
    sx = Serve(tmp, kc, "schedext")
    try:
        check(sx.wait_ready(), "readyz turns 200 after the initial lists")
        log = sx.logtext()
        check("connected to http://127.0.0.1:%d" % api.port in log, "logs the server it connected to")
        check("listed 700 pods" in log and "listed 40 nodes" in log, "logs per-kind list counts")
        exp, got = expected_state(api), cache_state(sx)
        check(exp == got, "initial list equals server state: " + diff(exp[1], got[1]))

        api.control("faults", {"split_chunks": True, "disconnect_prob": 0.01,
                               "error_event_prob": 0.005, "watch_410_start": 3,
                               "watch_410_event": 3, "status_429": 5, "status_500": 5,
                               "fail_prob_429": 0.03, "fail_prob_500": 0.03, "slow_ms": 1})

        def chaos(done):
            if done % 500 == 0:
                api.control("drop", {})
            if done % 750 == 0:
                api.control("compact", {})
            if done == 1500:  # token rotation: the old one is now rejected
                with open(token_file, "w") as f:
                    f.write("token-2\n")
                api.control("token", {"token": "token-2"})

        run_ops(api, rng, 3000, nodes, pods, chaos)
        api.control("faults", {"reset": True})
        end, ok = time.time() + 20, False
        while time.time() < end and not ok:
            exp, got = expected_state(api), cache_state(sx)
            ok = exp == got
            if not ok:
                time.sleep(0.25)
        check(ok, "cache converges to the server state: nodes " + diff(exp[0], got[0]) +
              "; pods " + diff(exp[1], got[1]))
        rec = api.control("records")
        print("convergence: %d nodes, %d pods, %d watches, %d lists, %.1fs" % (
            len(exp[0]), len(exp[1]), rec["watches"], rec["lists"], 20 - (end - time.time())))
        # 12 kinds: 12 lists + 12 watches without faults.
        check(rec["watches"] + rec["lists"] > 40, "the faults forced re-watches and re-lists")
        check(sx.stop() == 0, "schedext exits cleanly")
    finally:
        if sx.p.poll() is None:
            sx.stop()
        api.stop()


# ---------------------------------------------------------------- (b)
def test_bind(tmp):
    api = FakeApi(tmp)
    kc = os.path.join(tmp, "kubeconfig-bind")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    api.apply([{"op": "create", "object": node("n1")}, {"op": "create", "object": node("n2")},
               {"op": "create", "object": pod("shop", "api-0", cpu="1")}])
    uid = [p for p in api.control("state")["objects"]["pods"]][0]["metadata"]["uid"]
    sx = Serve(tmp, kc, "schedext-bind")
    try:
        check(sx.wait_ready(), "bind: ready")
        code, out = http("POST", sx.url + "/bind", {"PodName": "api-0", "PodNamespace": "shop",
                                                     "PodUID": uid, "Node": "n2"})
        check(code == 200 and not (out or {}).get("Error"), "bind succeeds: %r %r" % (code, out))
        bindings = api.control("records")["bindings"]
        check(bindings == [{"apiVersion": "v1", "kind": "Binding",
                            "metadata": {"name": "api-0", "namespace": "shop", "uid": uid},
                            "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"}}],
              "the server received a correct v1 Binding: %r" % bindings)
        end = time.time() + 5
        while time.time() < end:
            pods = cache_state(sx)[1]
            if pods.get(("shop", "api-0"), ("", ""))[1] == "n2":
                break
            time.sleep(0.1)
        check(cache_state(sx)[1].get(("shop", "api-0"), ("", ""))[1] == "n2",
              "the watch confirms the pod on n2")
        # A second binding elsewhere: the API server's conflict message.
        # (The extender may answer from its cache; either way the error
        # must name the conflict.)
        code, out = http("POST", sx.url + "/bind", {"PodName": "api-0", "PodNamespace": "shop",
                                                     "PodUID": uid, "Node": "n1"})
        err = (out or {}).get("Error", "") if isinstance(out, dict) else str(out)
        check("already" in err or "n2" in err, "conflicting bind reports an error: %r" % (out,))
        check(sx.stop() == 0, "bind: clean exit")
    finally:
        if sx.p.poll() is None:
            sx.stop()
        api.stop()


# ---------------------------------------------------------------- (c)
def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=%s" % name, "-keyout", name + ".key", "-out", name + ".crt", cwd=d)


def make_cert(d, ca, name, san, client=False):
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\n" % san if san else "")
        f.write("extendedKeyUsage=%s\n" % ("clientAuth" if client else "serverAuth"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=%s" % name,
            "-keyout", name + ".key", "-out", name + ".csr", cwd=d)
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
            "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", name + ".crt", cwd=d)


def test_tls(tmp):
    d = os.path.join(tmp, "pki")
    os.makedirs(d)
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_cert(d, "ca", "server", "IP:127.0.0.1,DNS:kubernetes")
    make_cert(d, "ca", "client", None, client=True)
    api = FakeApi(tmp, "--tls-cert", os.path.join(d, "server.crt"), "--tls-key",
                  os.path.join(d, "server.key"), "--client-ca", os.path.join(d, "ca.crt"))
    api_ctl = "http://"  # control goes over TLS too: use the client cert with urllib
    import ssl
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
    ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))
    body = json.dumps({"ops": [{"op": "create", "object": node("tls-node")}]}).encode()
    req = urllib.request.Request("https://127.0.0.1:%d/_control/objects" % api.port, data=body,
                                 method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, context=ctx, timeout=10).read()
    del api_ctl
    with open(os.path.join(d, "ca.crt"), "rb") as f:
        ca_data = base64.b64encode(f.read()).decode()
    user = {"client-certificate": "pki/client.crt", "client-key": "pki/client.key"}
    try:
        # Good CA (as -data), client cert by relative path.
        kc = os.path.join(tmp, "kc-tls")
        write_kubeconfig(kc, "https://127.0.0.1:%d" % api.port, user,
                         {"certificate-authority-data": ca_data})
        sx = Serve(tmp, kc, "schedext-tls")
        ok = sx.wait_ready()
        check(ok, "TLS with the right CA and a client certificate: ready")
        if ok:
            check("tls-node" in cache_state(sx)[0], "TLS: nodes listed")
        sx.stop()
        # tls-server-name: the certificate names "kubernetes", not the URL host.
        kc = os.path.join(tmp, "kc-sni")
        write_kubeconfig(kc, "https://localhost:%d" % api.port, user,
                         {"certificate-authority": "pki/ca.crt", "tls-server-name": "kubernetes"})
        sx = Serve(tmp, kc, "schedext-sni")
        check(sx.wait_ready(), "TLS via tls-server-name: ready")
        sx.stop()
        # Wrong CA: never ready, and the log says why.
        kc = os.path.join(tmp, "kc-bad")
        write_kubeconfig(kc, "https://127.0.0.1:%d" % api.port, user,
                         {"certificate-authority": "pki/other-ca.crt"})
        sx = Serve(tmp, kc, "schedext-badca")
        check(not sx.wait_ready(3), "TLS with the wrong CA is never ready")
        log = sx.logtext()
        check("x509: certificate verification failed" in log and "https://127.0.0.1" in log,
              "wrong CA gives a clear message: %r" % log[-400:])
        check("BEGIN" not in log, "no key material in the log")
        sx.stop()
    finally:
        api.stop()


def main():
    return run_tests("test_kube.py", (test_bind, test_tls, test_convergence))


if __name__ == "__main__":
    sys.exit(main())
