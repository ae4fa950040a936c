#!/usr/bin/env python3
"""Standalone pods/s against the fake API server: 500 pods on 20 nodes,
(1) default client rate (50/s, burst 100), (2) clientConnection.qps 5000
from the config file, (3) the same with an extender in the loop (a second
schedext serving filter + prioritize, nodeCacheCapable). Run:
  SCHEDEXT_BIN=build/schedext python3 bench/extender_e2e.py
"""
import json, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
from sxtest import FakeApi, Serve, write_kubeconfig, run_tests
N = 500
def node(i):
    n = "node-%d" % i
    return {"kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}, "spec": {},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                       "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
def pod(i):
    return {"kind": "Pod", "metadata": {"name": "b-%d" % i, "namespace": "work"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}]},
            "status": {"phase": "Pending"}}
def run(tmp, tag, cfg, ext):
    api = FakeApi(tmp)
    api.apply([{"op": "create", "object": node(i)} for i in range(20)])
    kc = os.path.join(tmp, "kc.json"); write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    extsrv = None
    if ext:
        extsrv = Serve(tmp, kc, "ext-" + tag); extsrv.wait_ready()
        cfg["extenders"] = [{"urlPrefix": extsrv.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                             "weight": 1, "nodeCacheCapable": True}]
    p = os.path.join(tmp, tag + ".json"); json.dump(cfg, open(p, "w"))
    sx = Serve(tmp, kc, tag, "--standalone", "--config", p); sx.wait_ready()
    time.sleep(1)
    t0 = time.time()
    api.apply([{"op": "create", "object": pod(i)} for i in range(N)])
    while True:
        pods = api.control("state")["objects"]["pods"]
        if sum(1 for q in pods if q["spec"].get("nodeName")) == N: break
        time.sleep(0.2)
    dt = time.time() - t0
    print("%-28s %d pods bound in %.2fs = %.0f pods/s" % (tag, N, dt, N / dt), flush=True)
    sx.stop()
    if extsrv: extsrv.stop()
    api.stop()
base = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
def t(tmp):
    run(tmp, "default-qps50", dict(base), False)
    run(tmp, "file-qps5000", dict(base, clientConnection={"qps": 5000, "burst": 5000}), False)
    run(tmp, "file-qps5000+extender", dict(base, clientConnection={"qps": 5000, "burst": 5000}), True)
sys.exit(run_tests("bench", [t]))
