#!/usr/bin/env python3
"""Who may read what: /healthz, /livez, /readyz are open; /metrics, /configz,
/debug/* and /ui need a user that the API server's TokenReview authenticates
and its SubjectAccessReview allows (kube-scheduler's delegated authn/authz),
checked against the fake API server's review policy; without a cluster only
loopback clients are served unless --debug-allow-remote. Denials are 401/403
with a JSON body and are counted in /metrics; the extender verbs need none
of it."""
import json
import os
import socket
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, Server, check, http, run_tests, write_kubeconfig  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
POLICY = {
    "tokens": {"prom-token": {"username": "prometheus", "groups": ["monitoring"]},
               "ops-token": {"username": "olga", "groups": ["ops"]},
               "eve-token": {"username": "eve", "groups": []}},
    "rules": [{"user": "prometheus", "path": "/metrics", "verb": "get"},
              {"group": "ops", "path": "*", "verb": "*"}],
}


def get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def test_delegated(tmp):
    api = FakeApi(tmp)
    try:
        api.apply([{"op": "upsert", "object": node("n1")}])
        api.control("authn", POLICY)
        kc = os.path.join(tmp, "kubeconfig")
        write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
        sx = Serve(tmp, kc, "authz", "--kube-api-burst", "333", "--leader-elect-lease-name", "mylease")
        check(sx.wait_ready(), "ready")
        u = sx.url
        for path in ("/healthz", "/livez", "/readyz"):
            code, body = get(u + path)
            check(code == 200 and body == "ok", f"{path} open: {code} {body!r}")
        code, body = get(u + "/readyz?verbose")
        check(code == 200 and body == "[+]ping ok\n[+]log ok\n[+]sched-handler-sync ok\n"
              "[+]shutdown ok\nreadyz check passed\n", f"readyz verbose: {body!r}")
        code, body = get(u + "/livez?verbose")
        check(body == "[+]ping ok\n[+]log ok\nlivez check passed\n", f"livez verbose: {body!r}")
        code, body = get(u + "/metrics")
        check(code == 403 and json.loads(body) == {"error": 'forbidden: User "system:anonymous" '
                                                   'cannot get path "/metrics": no RBAC policy '
                                                   "matched"}, f"anonymous /metrics: {code} {body}")
        code, body = get(u + "/metrics", "wrong-token")
        check(code == 401 and json.loads(body) == {"error": "Unauthorized"},
              f"bad token: {code} {body}")
        code, body = get(u + "/metrics", "eve-token")
        check(code == 403 and 'User \\"eve\\" cannot get path \\"/metrics\\"' in body,
              f"unauthorized user: {code} {body}")
        code, body = get(u + "/metrics", "prom-token")
        check(code == 200 and "schedext_http_requests_total" in body, f"prometheus: {code}")
        code, body = get(u + "/debug/cache", "prom-token")
        check(code == 403, f"prometheus may not read /debug/cache: {code}")
        code, body = get(u + "/configz")
        check(code == 403, f"anonymous /configz: {code}")
        code, body = get(u + "/configz", "ops-token")
        cz = json.loads(body).get("componentconfig", {}) if code == 200 else {}
        check(cz.get("kind") == "KubeSchedulerConfiguration" and
              cz["profiles"][0]["schedulerName"] == "default-scheduler" and
              {"name": "NodeResourcesFit", "weight": 1} in cz["profiles"][0]["plugins"]["score"]["enabled"]
              and cz["clientConnection"]["contentType"] == "application/json",
              f"/configz: {code} {body[:300]}")
        # flags merged into what /configz shows: it is what runs
        check(cz.get("clientConnection", {}).get("burst") == 333 and
              cz["clientConnection"]["qps"] == 50 and cz["clientConnection"]["kubeconfig"] == kc and
              cz["leaderElection"]["leaderElect"] is False and
              cz["leaderElection"]["resourceName"] == "mylease",
              f"/configz effective client and leader election: {cz.get('clientConnection')} "
              f"{cz.get('leaderElection')}")
        for path in ("/debug/cache", "/ui", "/debug/pending"):
            code, _ = get(u + path, "ops-token")
            check(code == 200, f"ops reads {path}: {code}")
        code, body = get(u + "/metrics", "ops-token")
        check('schedext_http_requests_total{verb="metrics",code="403"} 2' in body and
              'schedext_http_requests_total{verb="metrics",code="401"} 1' in body and
              'schedext_http_requests_total{verb="cache",code="403"} 1' in body,
              "denials counted: " + "\n".join(l for l in body.splitlines() if "http_requests" in l))
        # the extender verbs are not behind delegated auth (mutual TLS guards them)
        code, out = http("POST", u + "/filter", {"Pod": {"metadata": {"name": "p",
                         "namespace": "default"}, "spec": {"containers": []}},
                         "NodeNames": ["n1"]})
        check(code == 200 and out.get("NodeNames") == ["n1"], f"verbs open: {code} {out}")
        reviews = api.control("records").get("reviews", [])
        sar = [r["spec"] for r in reviews if r["path"].endswith("subjectaccessreviews")]
        check({"user": "prometheus", "groups": ["monitoring"],
               "nonResourceAttributes": {"path": "/metrics", "verb": "get"}} in sar,
              f"SubjectAccessReview sent: {sar[:3]}")
        check(all("token" not in r["spec"] for r in reviews), "records hold no token")
        n = len(reviews)
        get(u + "/metrics", "prom-token")
        check(len(api.control("records").get("reviews", [])) == n, "decisions cached")
        check("prom-token" not in sx.logtext(), "tokens never logged")
    finally:
        api.stop()


def local_ip():
    """A non-loopback address of this machine, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent
        ip = s.getsockname()[0]
        return None if ip.startswith("127.") else ip
    except OSError:
        return None
    finally:
        s.close()


def test_no_cluster(tmp):
    demo = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
    ip = local_ip()
    for extra, remote_code in (([], 403), (["--debug-allow-remote"], 200)):
        srv = Server("--state", demo, "--listen", "0.0.0.0:0", *extra)
        try:
            code, _ = get("http://127.0.0.1:%d/metrics" % srv.port)
            check(code == 200, f"loopback reads /metrics without a cluster {extra}: {code}")
            if ip:
                code, body = get("http://%s:%d/debug/cache" % (ip, srv.port))
                check(code == remote_code, f"remote /debug/cache {extra}: {code} {body[:120]}")
                code, _ = get("http://%s:%d/healthz" % (ip, srv.port))
                check(code == 200, "remote /healthz stays open")
            else:
                print("note: no non-loopback address; remote checks skipped")
        finally:
            srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests("test_authz.py", [test_delegated, test_no_cluster]))
