#!/usr/bin/env python3
"""Builds extender request bodies from a generated cluster (bench/gen.py):
filter/prioritize with N node names (nodeCacheCapable: true) and filter with
N full Node objects (nodeCacheCapable: false), for a pod of the plain mix;
and preempt with the victims (by UID) of the first N nodes' running pods,
for the same pod at priority 1000."""
import json
import sys

cluster, pending, outdir, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
items = json.load(open(cluster))["items"]
nodes = [i for i in items if i["kind"] == "Node"][:count]
pod = json.load(open(pending))["items"][0]
names = [n["metadata"]["name"] for n in nodes]
with open(f"{outdir}/names.json", "w") as f:
    json.dump({"Pod": pod, "Nodes": None, "NodeNames": names}, f)
with open(f"{outdir}/nodes.json", "w") as f:
    json.dump({"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}, f)
pods = {}
for i in items:
    if i["kind"] == "Pod" and i.get("spec", {}).get("nodeName") in names:
        pods.setdefault(i["spec"]["nodeName"], []).append(i["metadata"]["uid"])
high = json.loads(json.dumps(pod))
high["spec"]["priority"] = 1000
victims = {n: {"Pods": [{"UID": u} for u in pods.get(n, [])[:5]], "NumPDBViolations": 0}
           for n in names}
with open(f"{outdir}/preempt.json", "w") as f:
    json.dump({"Pod": high, "NodeNameToVictims": None, "NodeNameToMetaVictims": victims}, f)
