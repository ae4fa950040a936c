#!/usr/bin/env python3
"""What of the real-control-plane harness (controlplane.py) runs without
kube-apiserver: asset discovery and its one-line skip reasons, the
openssl-made CA, serving certificate and service-account key, the token
file, the kubeconfigs (consumed by schedext and by the plugin over TLS with
a bearer token, against test/fakeapi/fakeapi.py serving that certificate),
the command lines of etcd, kube-apiserver, kube-controller-manager and
kube-scheduler, deploy.yaml's documents, the audit-log reader, and etcd
itself when one is installed (KUBEBUILDER_ASSETS or /usr/bin/etcd from
Debian's etcd-server): started with the harness's arguments, healthy,
storing and returning a key."""
import base64
import csv
import json
import re
import os
import ssl
import subprocess
import sys
import tempfile
import shutil
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import controlplane as cp  # noqa: E402
from sxtest import BIN, FakeApi, Serve, check, run_tests  # noqa: E402

PLUGIN = os.path.join(os.path.dirname(os.path.abspath(BIN)), "kubectl-schedext")


def flag(args, name):
    """The value after --name (or in --name=value), None when absent."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def test_find_assets(tmp):
    _, why = cp.find_assets({})
    check(why.startswith("KUBEBUILDER_ASSETS not set (needs etcd and kube-apiserver; see README"),
          "unset: %r" % why)
    d = os.path.join(tmp, "assets")
    os.makedirs(d)
    _, why = cp.find_assets({"KUBEBUILDER_ASSETS": d, "PATH": ""})
    check(why.startswith("no kube-apiserver in KUBEBUILDER_ASSETS=" + d), "no apiserver: %r" % why)
    for n in ("kube-apiserver", "kube-scheduler"):
        with open(os.path.join(d, n), "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(os.path.join(d, n), 0o755)
    _, why = cp.find_assets({"KUBEBUILDER_ASSETS": d, "PATH": ""})
    check(why and "no etcd in KUBEBUILDER_ASSETS" in why and "etcd-server" in why,
          "no etcd: %r" % why)
    found, why = cp.find_assets({"KUBEBUILDER_ASSETS": d, "PATH": "/usr/bin:/bin"})
    if shutil.which("etcd", path="/usr/bin:/bin"):
        check(why is None and found["etcd"] and found["kube-scheduler"] == d + "/kube-scheduler"
              and found["kube-controller-manager"] is None, "etcd from PATH: %r %r" % (found, why))
    for why in [cp.find_assets(e)[1] for e in ({}, {"KUBEBUILDER_ASSETS": d, "PATH": ""})]:
        check(why and "\n" not in why, "skip reason is one line: %r" % why)


def test_certs_tokens_kubeconfig(tmp):
    certs = cp.make_certs(os.path.join(tmp, "pki"))
    r = subprocess.run(["openssl", "verify", "-CAfile", certs["ca"], certs["cert"]],
                       capture_output=True, text=True)
    check(r.returncode == 0, "serving cert verifies against the CA: %s" % r.stderr)
    r = subprocess.run(["openssl", "x509", "-in", certs["cert"], "-noout", "-text"],
                       capture_output=True, text=True)
    check("IP Address:127.0.0.1" in r.stdout and "DNS:localhost" in r.stdout and
          "TLS Web Server Authentication" in r.stdout, "SANs and serverAuth")
    r = subprocess.run(["openssl", "rsa", "-pubin", "-in", certs["sa_pub"], "-noout"],
                       capture_output=True)
    check(r.returncode == 0, "service-account public key is a PEM RSA key")
    r = subprocess.run(["openssl", "rsa", "-in", certs["sa_key"], "-check", "-noout"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "service-account private key checks")

    tokens = cp.make_tokens()
    check(len(set(tokens.values())) == 3 and all(len(t) >= 32 for t in tokens.values()),
          "three distinct long tokens")
    tf = os.path.join(tmp, "tokens.csv")
    cp.write_token_file(tf, tokens)
    with open(tf) as f:
        rows = list(csv.reader(f))
    check(all(len(r) == 4 for r in rows), "token file rows have 4 fields: %r" % rows)
    users = {r[1]: r for r in rows}
    check(users["admin"][3] == "system:masters" and users["operator"][3] == "system:masters",
          "admin and operator in system:masters")
    check(users[cp.SA_USER][3].split(",") == ["system:serviceaccounts",
                                              "system:serviceaccounts:kube-system"],
          "static schedext token: the ServiceAccount's user and groups")
    check(oct(os.stat(tf).st_mode & 0o777) == "0o600", "token file mode 600")

    # The kubeconfig with CA data and a bearer token, used over TLS against
    # the fake API server serving the generated certificate: by a Python
    # client validating the certificate, by schedext and by the plugin.
    api = FakeApi(tmp, "--token", tokens["admin"], "--tls-cert", certs["cert"],
                  "--tls-key", certs["key"])
    try:
        server = "https://127.0.0.1:%d" % api.port
        kc = cp.write_json(os.path.join(tmp, "kc.json"),
                           cp.kubeconfig(server, certs["ca"], tokens["admin"], "admin"))
        with open(kc) as f:
            cfg = json.load(f)
        check(base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"])
              == open(certs["ca"], "rb").read(), "CA data embedded")
        k = cp.Kube(server, tokens["admin"], certs["ca"])
        code, out = k.request("GET", "/api/v1/nodes")
        check(code == 200 and out.get("kind") == "NodeList", "TLS + token GET: %r %r" % (code, out))
        bad = cp.Kube(server, tokens["operator"], certs["ca"])
        check(bad.request("GET", "/api/v1/nodes")[0] == 401, "another token is refused")
        try:
            ctx = ssl.create_default_context()  # system CAs only: must not trust it
            urllib.request.urlopen(server + "/api/v1/nodes", context=ctx, timeout=5)
            check(False, "an unknown CA must fail verification")
        except (ssl.SSLError, OSError):
            pass
        k.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}, "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        items = k.items("/api/v1/nodes")
        check([i["kind"] for i in items] == ["Node"], "items() sets kind: %r" % items)
        if os.path.exists(PLUGIN):
            r = subprocess.run([PLUGIN, "pending", "-A", "--kubeconfig", kc],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, "kubectl-schedext over TLS with the generated kubeconfig: "
                  "%d %s" % (r.returncode, r.stderr))
        sx = Serve(tmp, kc, "sx-tls")
        check(sx.wait_ready(20), "schedext serve ready over TLS with the generated kubeconfig")
        check(sx.stop() == 0, "schedext exits cleanly")
    finally:
        api.stop()


def test_command_lines(tmp):
    certs = {k: "/pki/" + k for k in ("ca", "cert", "key", "sa_key", "sa_pub")}
    a = cp.apiserver_args("/a/kube-apiserver", 2379, 6443, certs, "/c", "/t.csv", "/p.json",
                          "/audit.log")
    check(a[0] == "/a/kube-apiserver", "binary first")
    want = {"--etcd-servers": "http://127.0.0.1:2379", "--secure-port": "6443",
            "--bind-address": "127.0.0.1", "--authorization-mode": "RBAC",
            "--token-auth-file": "/t.csv", "--service-account-issuer": "https://127.0.0.1:6443",
            "--service-account-key-file": "/pki/sa_pub",
            "--service-account-signing-key-file": "/pki/sa_key",
            "--tls-cert-file": "/pki/cert", "--tls-private-key-file": "/pki/key",
            "--service-cluster-ip-range": cp.SERVICE_CIDR, "--cert-dir": "/c",
            "--audit-log-path": "/audit.log", "--audit-policy-file": "/p.json"}
    for k, v in want.items():
        check(flag(a, k) == v, "kube-apiserver %s=%r (got %r)" % (k, v, flag(a, k)))
    check("ServiceAccount" in flag(a, "--disable-admission-plugins").split(",") and
          "TaintNodesByCondition" in flag(a, "--disable-admission-plugins").split(","),
          "admission plugins that need absent controllers are off")
    check(all(x.startswith("--") or a[i - 1].startswith("--") and "=" not in a[i - 1]
              for i, x in enumerate(a) if i), "every value follows its flag: %r" % a)
    e = cp.etcd_args("/usr/bin/etcd", "/d", 1111, 2222)
    check(flag(e, "--listen-client-urls") == "http://127.0.0.1:1111" and
          flag(e, "--initial-cluster") == "default=http://127.0.0.1:2222" and
          flag(e, "--data-dir") == "/d" and "--unsafe-no-fsync" not in e, "etcd args: %r" % e)
    check("--unsafe-no-fsync" in cp.etcd_args("etcd", "/d", 1, 2, True), "no-fsync when known")
    k = cp.controller_manager_args("/a/kcm", "/kc", 10257, "/c")
    check(flag(k, "--controllers") == "persistentvolume-binder-controller,resourceclaim-controller"
          and "--use-service-account-credentials=false" in k and flag(k, "--kubeconfig") == "/kc",
          "kcm args: %r" % k)
    cfg = cp.scheduler_config("/kc", [{"urlPrefix": "http://127.0.0.1:1"}])
    check(cfg["clientConnection"]["kubeconfig"] == "/kc" and cfg["extenders"] and
          cfg["leaderElection"]["leaderElect"] is False, "scheduler config")
    s = cp.scheduler_args("/a/ks", "/cfg", "/kc", 10259, "/c")
    check(flag(s, "--config") == "/cfg" and flag(s, "--secure-port") == "10259", "scheduler args")


def test_deploy_documents(tmp):
    docs = cp.deploy_documents()
    kinds = [(k, n) for k, n, _ in docs]
    for want in [("ServiceAccount", "schedext"), ("ClusterRole", "schedext"),
                 ("ClusterRoleBinding", "schedext"), ("ClusterRoleBinding", "schedext:auth-delegator")]:
        check(want in kinds, "deploy.yaml has %r: %r" % (want, kinds))
    for k, n, text in docs:
        if k in cp.RBAC_PATHS:
            check(len(re.findall(r"(?m)^apiVersion:", text)) == 1 and "kind: " + k in text,
                  "one object per document (%s/%s)" % (k, n))
    # Bindings name the ServiceAccount the harness makes a token for.
    crb = [t for k, n, t in docs if (k, n) == ("ClusterRoleBinding", "schedext")][0]
    check("kind: ServiceAccount" in crb and "name: " + cp.SA_NAME in crb and
          "namespace: " + cp.SA_NAMESPACE in crb, "binding subject is kube-system/schedext")


def test_audit_reader(tmp):
    class Fake(cp.ControlPlane):
        def __init__(self, path):  # no processes: only the reader
            self.audit_log = path
    p = os.path.join(tmp, "audit.log")
    with open(p, "w") as f:
        for stage, user, verb in [("RequestReceived", "operator", "create"),
                                  ("ResponseComplete", "operator", "list"),
                                  ("ResponseComplete", "admin", "create")]:
            f.write(json.dumps({"stage": stage, "verb": verb, "user": {"username": user}}) + "\n")
        f.write("not json\n")
    a = Fake(p)
    check([e["verb"] for e in a.audit("operator")] == ["list"], "audit(user) filters")
    check(len(a.audit()) == 2, "ResponseComplete only")


def test_etcd(tmp):
    etcd = None
    assets, _ = cp.find_assets()
    etcd = (assets or {}).get("etcd") or shutil.which("etcd")
    if not etcd:
        print("test_etcd: no etcd installed (apt-get install etcd-server); not started")
        return
    cport, pport = cp.free_port(), cp.free_port()
    p = cp.Proc(tmp, "etcd", cp.etcd_args(etcd, os.path.join(tmp, "etcd-data"), cport, pport,
                                          cp.etcd_supports_no_fsync(etcd)))
    try:
        check(cp.wait_for(lambda: cp.etcd_healthy(cport), 30), "etcd healthy: " + p.logtail())
        b64 = lambda s: base64.b64encode(s.encode()).decode()
        url = "http://127.0.0.1:%d/v3/kv/" % cport

        def post(what, body):
            req = urllib.request.Request(url + what, data=json.dumps(body).encode(), method="POST")
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.loads(r.read())
        post("put", {"key": b64("/registry/selftest"), "value": b64("ok")})
        got = post("range", {"key": b64("/registry/selftest")})
        check(base64.b64decode(got["kvs"][0]["value"]) == b"ok", "etcd stores and returns: %r" % got)
    finally:
        rc = p.stop()
        check(rc in (0, -15), "etcd stops on SIGTERM (rc %r)" % rc)


if __name__ == "__main__":
    sys.exit(run_tests(os.path.basename(__file__), [
        test_find_assets, test_certs_tokens_kubeconfig, test_command_lines,
        test_deploy_documents, test_audit_reader, test_etcd]))
