#!/usr/bin/env python3
"""Extenders over HTTPS with tlsConfig.serverName,
against test/fakeapi/fakeapi.py: a second schedext process serves the
extender verbs over TLS with a certificate for DNS:extender.test only (no
IP address in it), reached at https://127.0.0.1:<port>.

(a) with tlsConfig {caFile, serverName: extender.test} the certificate
    verifies against serverName while 127.0.0.1 is dialled: every pod is
    bound, only on nodes the extender accepted;
(b) without serverName the same certificate does not match 127.0.0.1: the
    call fails (Go's `Post "<url>": ...` wording) and no pod is bound.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, Server, check, run_tests, write_kubeconfig  # noqa: E402


def wait_for(fn, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return True
        time.sleep(step)
    return fn()


def openssl(tmp, *args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=tmp)


def make_certs(tmp):
    """A CA and a server certificate naming only DNS:extender.test."""
    with open(os.path.join(tmp, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:extender.test\n")
    openssl(tmp, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.crt", "-days", "2", "-subj", "/CN=test-ca")
    openssl(tmp, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "ext.key", "-out", "ext.csr",
            "-subj", "/CN=extender.test")
    openssl(tmp, "x509", "-req", "-in", "ext.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "ext.crt", "-days", "2", "-extfile", "san.ext")
    return {n: os.path.join(tmp, n) for n in ("ca.crt", "ext.crt", "ext.key")}


def node(i, accept):
    name = "node-%d" % i
    lb = {"kubernetes.io/hostname": name}
    if accept:
        lb["accept"] = "yes"
    return {"kind": "Node", "metadata": {"name": name, "labels": lb}, "spec": {},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "work"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Pending"}}


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def pods(api, prefix):
    return [p for p in api.control("state")["objects"]["pods"]
            if p["metadata"]["name"].startswith(prefix)]


def scheduled_message(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return c.get("message") or ""
    return ""


def test_server_name(tmp):
    if not shutil.which("openssl"):
        check(False, "extender TLS: openssl is required")
        return
    certs = make_certs(tmp)
    api = FakeApi(tmp)
    ext = None
    try:
        api.apply([{"op": "create", "object": node(i, i % 2 == 0)} for i in range(6)])
        kc = os.path.join(tmp, "kc.json")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        prof = write(os.path.join(tmp, "ext-profile.json"), {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeAffinity", "args": {"addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "accept", "operator": "In",
                                               "values": ["yes"]}]}]}}}}]}]})
        ext = Server("--kubeconfig", kc, "--config", prof, "--tls-cert", certs["ext.crt"],
                     "--tls-key", certs["ext.key"])
        url = "https://127.0.0.1:%d" % ext.port
        tls = {"caFile": certs["ca.crt"], "serverName": "extender.test"}

        def standalone(name, tls_config):
            cfg = write(os.path.join(tmp, name + ".json"), {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "extenders": [{"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True,
                               "tlsConfig": tls_config, "nodeCacheCapable": True,
                               "httpTimeout": "5s"}]})
            sx = Serve(tmp, kc, name, "--standalone", "-v=2", "--config", cfg)
            check(sx.wait_ready(), "%s ready" % name)
            return sx

        sx = standalone("with-server-name", tls)
        api.apply([{"op": "create", "object": pod("p-%d" % i)} for i in range(12)])
        check(wait_for(lambda: all(p["spec"].get("nodeName") for p in pods(api, "p-")), 30),
              "every pod bound through the TLS extender")
        nodes = {p["spec"].get("nodeName") for p in pods(api, "p-")}
        check(nodes and all(n and int(n.split("-")[1]) % 2 == 0 for n in nodes),
              "only nodes the extender accepted: %s" % sorted(n or "" for n in nodes))
        check(sx.stop() == 0, "clean shutdown")

        no_sni = dict(tls)
        del no_sni["serverName"]
        sx = standalone("without-server-name", no_sni)
        api.apply([{"op": "create", "object": pod("q-0")}])
        want = 'Post "%s/filter": ' % url
        check(wait_for(lambda: want in scheduled_message((pods(api, "q-") or [{}])[0]), 20),
              "without serverName 127.0.0.1 does not match the certificate: %r"
              % scheduled_message((pods(api, "q-") or [{}])[0]))
        check(not (pods(api, "q-") or [{}])[0].get("spec", {}).get("nodeName"), "q-0 not bound")
        sx.stop()
    finally:
        if ext:
            ext.stop()
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_extender_tls.py", [test_server_name]))
