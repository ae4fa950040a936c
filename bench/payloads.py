#!/usr/bin/env python3
"""Builds extender request bodies from a generated cluster (bench/gen.py):
filter/prioritize with N node names (nodeCacheCapable: true) and filter with
N full Node objects (nodeCacheCapable: false), for a pod of the plain mix."""
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
