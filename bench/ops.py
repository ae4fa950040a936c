#!/usr/bin/env python3
"""Operator tools bench: `kubectl schedext what-if --scale` of
10,000 replicas over 5,000 nodes, and `kubectl schedext pending` over 10,000
pending pods. Prints `bench <metric> <seconds> s ...` lines. The cluster has
5,000 nodes and 20,000 running pods (gen.py), the what-if Deployment
requests 100m CPU / 128Mi; the pending pods are gen.py's plain mix.

usage: ops.py BIN OUTDIR"""
import json
import os
import subprocess
import sys
import time

NODES, RUNNING, REPLICAS, PENDING = 5000, 20000, 10000, 10000


def main():
    binary, out = sys.argv[1], sys.argv[2]
    plugin = os.path.join(os.path.dirname(os.path.abspath(binary)), "kubectl-schedext")
    here = os.path.dirname(os.path.abspath(__file__))
    cluster = os.path.join(out, "ops-cluster.json")
    pending = os.path.join(out, "ops-pending.json")
    deploy = os.path.join(out, "ops-deploy.json")
    subprocess.run([sys.executable, os.path.join(here, "gen.py"), "--nodes", str(NODES),
                    "--pods", str(RUNNING), "--seed", "1", "--out", cluster], check=True)
    subprocess.run([sys.executable, os.path.join(here, "gen.py"), "--nodes", str(NODES),
                    "--pending", str(PENDING), "--mix", "plain", "--seed", "1",
                    "--pending-out", pending], check=True)
    with open(deploy, "w") as f:
        json.dump({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "namespace": "bench"},
                   "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{
                                             "name": "c", "image": "nginx",
                                             "resources": {"requests": {"cpu": "100m",
                                                                        "memory": "128Mi"}}}]}}}},
                  f)
    t0 = time.time()
    p = subprocess.run([plugin, "what-if", "--state", cluster, "--state", deploy, "--scale",
                        "bench/web=%d" % REPLICAS, "-o", "json"], capture_output=True, text=True)
    dt = time.time() - t0
    placed = json.loads(p.stdout)["placed"] if p.returncode == 0 else -1
    print(f"bench ops_whatif_scale {dt:.2f} s replicas={REPLICAS} nodes={NODES} "
          f"running={RUNNING} placed={placed} target<5")
    t0 = time.time()
    p = subprocess.run([plugin, "pending", "-A", "--state", cluster, "--state", pending, "-o",
                        "json"], capture_output=True, text=True)
    dt = time.time() - t0
    pods = json.loads(p.stdout)["pods"] if p.returncode == 0 else -1
    print(f"bench ops_pending {dt:.2f} s pending={pods} nodes={NODES} running={RUNNING}")


if __name__ == "__main__":
    main()
