#!/usr/bin/env python3
"""Exec credential plugins in the kubeconfig, against
test/fakeapi/fakeapi.py with expiring bearer tokens (/_control/tokens):

(a) standalone with leader election, whose kubeconfig runs a small plugin
    (a relative command path, args, env, provideClusterInfo) that issues a
    new token valid 3 s on each run: pods are bound before and after the
    token expires, the plugin ran again, and no request was refused: the
    client renewed the credential at its expirationTimestamp, not after a
    401. KUBERNETES_EXEC_INFO carried spec.cluster with the cluster's exec
    extension;
(b) the server revokes every token (the plugin now issues tokens without
    an expiry): the next writes get 401, the plugin runs again and pods are
    still bound;
(c) a failing plugin (exit 1) and a missing one (with installHint): serve
    exits at startup with the plugin's error naming the kubeconfig and the
    user; the kubectl plugin (explain's entry point) reads the cluster
    through the exec plugin, and reports a failing one; a token the server
    never accepts is fetched again once after the 401, then the request
    fails;
(d) a v1beta1 plugin returning a client certificate: the API server
    requires mutual TLS and schedext lists through the plugin's certificate;
    KUBERNETES_EXEC_INFO carries the CA file's bytes.
"""
import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

PLUGIN = os.path.join(os.path.dirname(os.path.abspath(BIN)), "kubectl-schedext")

TOKEN_PLUGIN = r'''#!/usr/bin/env python3
import fcntl, json, os, sys, time, urllib.request
d = os.environ["SX_EXEC_DIR"]
ctl, ttl = sys.argv[1], float(sys.argv[2])
with open(os.path.join(d, "info.json"), "w") as f:
    f.write(os.environ.get("KUBERNETES_EXEC_INFO", ""))
with open(os.path.join(d, "count.lock"), "w") as lk:
    fcntl.flock(lk, fcntl.LOCK_EX)
    path = os.path.join(d, "count")
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as f:
        f.write(str(n))
tok = "exec-token-%d" % n
status = {"token": tok}
exp = None
if not os.path.exists(os.path.join(d, "noexpiry")):
    exp = int(time.time() + ttl)
    status["expirationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(exp))
req = urllib.request.Request(ctl + "tokens", data=json.dumps({"add": {tok: exp}}).encode(),
                             method="POST", headers={"Content-Type": "application/json"})
if not os.environ.get("SX_NO_REGISTER"):  # else the server never accepts it
    urllib.request.urlopen(req, timeout=10).read()
print(json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1",
                  "status": status}))
'''

EXT = [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "fake-api"}}]


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()


def node(name):
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Pending"}}


def bound(api, names):
    pods = api.control("state")["objects"].get("pods", [])
    done = {p["metadata"]["name"] for p in pods if p.get("spec", {}).get("nodeName")}
    return all(n in done for n in names)


def runs(tmp):
    try:
        with open(os.path.join(tmp, "count")) as f:
            return int(f.read())
    except OSError:
        return 0


def exec_user(command, args=None, env=None, **extra):
    e = {"apiVersion": "client.authentication.k8s.io/v1", "command": command,
         "interactiveMode": "Never", "args": args or [], "env": env or []}
    e.update(extra)
    return {"exec": e}


def write_plugin(tmp, name, text):
    os.makedirs(os.path.join(tmp, "plugins"), exist_ok=True)
    path = os.path.join(tmp, "plugins", name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def batch(api, prefix, n):
    names = ["%s-%d" % (prefix, i) for i in range(n)]
    api.apply([{"op": "create", "object": pod(x)} for x in names])
    return names


def test_expiry_and_401(tmp):
    api = FakeApi(tmp)
    try:
        api.control("tokens", {"add": {}})  # from now on only issued tokens pass
        api.apply([{"op": "create", "object": node("n%d" % i)} for i in range(3)])
        write_plugin(tmp, "token.py", TOKEN_PLUGIN)
        kc = os.path.join(tmp, "kubeconfig")
        url = "http://127.0.0.1:%d" % api.port
        write_kubeconfig(kc, url, user=exec_user(
            "plugins/token.py", [api.ctl, "3"], [{"name": "SX_EXEC_DIR", "value": tmp}],
            provideClusterInfo=True), cluster_extra={"extensions": EXT})
        sx = Serve(tmp, kc, "exec", "--standalone", "-v=2", "--leader-elect",
                   "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
                   "--leader-elect-retry-period", "1s")
        check(sx.wait_ready(20), "standalone with an exec plugin ready")
        a = batch(api, "a", 5)
        check(wait_for(lambda: bound(api, a), 20), "pods bound with the first tokens")
        leases = api.control("state")["objects"].get("leases", [])
        check(any(le.get("spec", {}).get("holderIdentity") for le in leases),
              "leader election took the lease through the exec plugin: %s" % leases)
        try:
            info = json.load(open(os.path.join(tmp, "info.json")))
        except (OSError, ValueError):
            info = {}
        check(info.get("kind") == "ExecCredential" and info.get("apiVersion") ==
              "client.authentication.k8s.io/v1", "KUBERNETES_EXEC_INFO: %s" % info)
        check(info.get("spec", {}).get("interactive") is False, "spec.interactive false")
        check(info.get("spec", {}).get("cluster") == {"server": url, "config": {"audience": "fake-api"}},
              "spec.cluster: %s" % info.get("spec"))
        n1 = runs(tmp)
        check(n1 >= 1, "the plugin ran (%d)" % n1)
        time.sleep(4.5)  # every token issued so far has expired
        b = batch(api, "b", 5)
        check(wait_for(lambda: bound(api, b), 20), "pods bound after the tokens expired")
        n2 = runs(tmp)
        check(n2 > n1, "the plugin ran again after the expiry (%d -> %d)" % (n1, n2))
        unauth = api.control("tokens")["unauthorized"]
        check(unauth == 0, "renewed at expirationTimestamp, before any 401 (%d 401s)" % unauth)

        # (b) tokens without an expiry, then revoked: only a 401 can renew them.
        open(os.path.join(tmp, "noexpiry"), "w").close()
        time.sleep(3.5)
        w = batch(api, "w", 3)  # clients renew their expired tokens
        check(wait_for(lambda: bound(api, w), 20), "pods bound with non-expiring tokens")
        time.sleep(0.5)
        n3 = runs(tmp)
        api.control("tokens", {"revoke": "all"})
        c = batch(api, "c", 5)
        check(wait_for(lambda: bound(api, c), 30), "pods bound after the tokens were revoked")
        unauth = api.control("tokens")["unauthorized"]
        check(unauth > 0, "revoked tokens got 401 (%d)" % unauth)
        check(runs(tmp) > n3, "a 401 ran the plugin again (%d -> %d)" % (n3, runs(tmp)))
        log = sx.logtext()
        check("getting credentials" not in log, "no credential failure in the log")
        check("exec-token-" not in log, "tokens never logged")
        check(sx.stop() == 0, "clean shutdown")
    finally:
        api.stop()


def serve_fails(tmp, kc):
    p = subprocess.run([BIN, "serve", "--standalone", "--kubeconfig", kc, "--listen",
                        "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def test_failing_plugin(tmp):
    api = FakeApi(tmp)
    try:
        api.control("tokens", {"add": {}})
        url = "http://127.0.0.1:%d" % api.port
        fail = write_plugin(tmp, "fail.sh", "#!/bin/sh\necho 'boom: no credentials' >&2\nexit 1\n")
        kc = os.path.join(tmp, "kc-fail")
        write_kubeconfig(kc, url, user=exec_user("./plugins/fail.sh"))
        t0 = time.time()
        rc, err = serve_fails(tmp, kc)
        check(rc != 0 and time.time() - t0 < 20, "serve exits at startup (rc %d)" % rc)
        want = ("getting credentials: kubeconfig %s: users[u].user.exec: exec: executable %s "
                "failed with exit code 1: boom: no credentials" % (kc, fail))
        check(want in err, "failing plugin's error:\n  got:  %r\n  want: %r" % (err, want))

        kc2 = os.path.join(tmp, "kc-missing")
        write_kubeconfig(kc2, url, user=exec_user("sx-no-such-credential-plugin",
                                                  installHint="Install it with: apt install x"))
        rc, err = serve_fails(tmp, kc2)
        check(rc != 0, "serve exits without the plugin (rc %d)" % rc)
        check("users[u].user.exec: exec: executable sx-no-such-credential-plugin not found" in err
              and err.rstrip().endswith("Install it with: apt install x"),
              "not found with the install hint: %r" % err)

        # The kubectl plugin (explain): through a working exec plugin, then a failing one.
        write_plugin(tmp, "token.py", TOKEN_PLUGIN)
        kc3 = os.path.join(tmp, "kc-ok")
        write_kubeconfig(kc3, url, user=exec_user(
            "plugins/token.py", [api.ctl, "60"], [{"name": "SX_EXEC_DIR", "value": tmp}]))
        api.apply([{"op": "create", "object": node("n0")},
                   {"op": "create", "object": pod("pending-1")}])
        p = subprocess.run([PLUGIN, "pending", "-A", "-o", "json", "--kubeconfig", kc3],
                           capture_output=True, text=True, timeout=60)
        out = json.loads(p.stdout) if p.returncode == 0 else {}
        check(out.get("pods") == 1, "kubectl pending via exec: rc %d %s %s" %
              (p.returncode, p.stdout[:300], p.stderr[:300]))
        check(runs(tmp) >= 1, "the kubectl plugin ran the exec plugin")
        p = subprocess.run([PLUGIN, "pending", "-A", "--kubeconfig", kc],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode != 0 and "boom: no credentials" in p.stderr,
              "kubectl with a failing exec plugin: rc %d %r" % (p.returncode, p.stderr))

        # Tokens the server never accepts: the first GET gets 401, runs the
        # plugin once more, gets 401 again and fails (once per request).
        d = os.path.join(tmp, "unreg")
        os.makedirs(d)
        kc4 = os.path.join(tmp, "kc-unreg")
        write_kubeconfig(kc4, url, user=exec_user(
            "plugins/token.py", [api.ctl, "60"], [{"name": "SX_EXEC_DIR", "value": d},
                                                  {"name": "SX_NO_REGISTER", "value": "1"}]))
        p = subprocess.run([PLUGIN, "pending", "-A", "--kubeconfig", kc4],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode != 0 and "Unauthorized" in p.stderr,
              "a rejected token fails the command: rc %d %r" % (p.returncode, p.stderr))
        check(runs(d) == 2, "one re-run after the 401, then the request failed (%d runs)"
              % runs(d))
    finally:
        api.stop()


CERT_PLUGIN = r'''#!/usr/bin/env python3
import json, os, sys
d = os.environ["SX_EXEC_DIR"]
with open(os.path.join(d, "info-tls.json"), "w") as f:
    f.write(os.environ.get("KUBERNETES_EXEC_INFO", ""))
with open(os.path.join(d, "tls-runs"), "a") as f:
    f.write("x")
print(json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1beta1",
                  "status": {"clientCertificateData": open(sys.argv[1]).read(),
                             "clientKeyData": open(sys.argv[2]).read()}}))
'''


def openssl(d, *args):
    subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True)


def make_pki(d):
    """A CA, a server certificate for 127.0.0.1, a client certificate."""
    os.makedirs(d)
    openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ca",
            "-keyout", "ca.key", "-out", "ca.crt")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext)
        openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout",
                name + ".key", "-out", name + ".csr")
        openssl(d, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", name + ".ext", "-out", name + ".crt")


def test_client_certificate(tmp):
    """(d) The plugin returns a client certificate (v1beta1): the API server
    requires one (mutual TLS) and schedext lists through it."""
    if not shutil.which("openssl"):
        check(False, "exec TLS: openssl is required")
        return
    d = os.path.join(tmp, "pki")
    make_pki(d)
    api = FakeApi(tmp, "--tls-cert", os.path.join(d, "server.crt"), "--tls-key",
                  os.path.join(d, "server.key"), "--client-ca", os.path.join(d, "ca.crt"))
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
    ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))
    body = json.dumps({"ops": [{"op": "create", "object": node("tls-node")}]}).encode()
    req = urllib.request.Request("https://127.0.0.1:%d/_control/objects" % api.port, data=body,
                                 method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, context=ctx, timeout=10).read()
    try:
        write_plugin(tmp, "cert.py", CERT_PLUGIN)
        kc = os.path.join(tmp, "kc-cert")
        url = "https://127.0.0.1:%d" % api.port
        write_kubeconfig(kc, url, user={"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "plugins/cert.py",
            "args": [os.path.join(d, "client.crt"), os.path.join(d, "client.key")],
            "env": [{"name": "SX_EXEC_DIR", "value": tmp}], "provideClusterInfo": True}},
            cluster_extra={"certificate-authority": "pki/ca.crt"})
        sx = Serve(tmp, kc, "exec-tls")
        ok = sx.wait_ready()
        check(ok, "mutual TLS with the plugin's client certificate: ready")
        if ok:
            check("tls-node" in json.dumps(sx.cache()), "nodes listed over mutual TLS")
        try:
            info = json.load(open(os.path.join(tmp, "info-tls.json")))
        except (OSError, ValueError):
            info = {}
        with open(os.path.join(d, "ca.crt"), "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        check(info.get("apiVersion") == "client.authentication.k8s.io/v1beta1" and
              info.get("spec", {}).get("cluster") == {"server": url,
                                                      "certificate-authority-data": ca},
              "v1beta1 exec info with the CA file's bytes: %s" % info)
        log = sx.logtext()
        check("BEGIN" not in log, "no key material in the log")
        sx.stop()
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_exec_plugin.py", [test_expiry_and_401, test_failing_plugin,
                                                   test_client_certificate]))
