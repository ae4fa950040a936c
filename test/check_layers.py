#!/usr/bin/env python3
"""Fails when a lower layer includes a header of a higher one.

The layers, lowest first, are the folders of src/ (ls src shows them):

  util        buffers, JSON scanning, interning, quantities, pool, metrics
  api, cel    object model and decoding, API client, kubeconfig, leases;
              the CEL evaluator (peers: neither includes the other)
  cache       cache, NodeInfo, snapshots, state files, informers feeding it
  dra         the structured-parameters allocator and the claims in flight
              (the DynamicResources plugin's engine; cache objects in,
              allocations out, no framework types)
  framework   cycle runtime, profiles/config, registry, preemption,
              binding cycle, FitError; plugins/ sits here too
  queue       the scheduling queue (activeQ, backoff, unschedulable pods,
              queueing hints, the nominator); used by the standalone loop
  extender, standalone, explain
              the three front ends (peers: none includes another)
  cmd         main, `serve` wiring and the HTTP server mounting them all

Every public header in include/schedext/ belongs to one layer (HEADERS
below); a header missing from the table fails the check, so a new module
has to say where it sits, and a name in the table that is not a header
fails it too, so the table stays the list of what exists. Internal headers live beside their .c files and
take the folder's layer.
"""
import os
import re
import sys

RANK = {"util": 0, "api": 1, "cel": 1, "cache": 2, "dra": 3, "framework": 4, "plugins": 4,
        "queue": 5, "extender": 6, "standalone": 6, "explain": 6, "cmd": 7}

HEADERS = {
    "buf.h": "util", "common.h": "util", "intern.h": "util", "json_scan.h": "util",
    "pool.h": "util", "procstat.h": "util", "quantity.h": "util", "metrics.h": "util", "arena.h": "util",
    "hmap.h": "util", "vec.h": "util",
    "model.h": "api", "kinds.def": "api", "selector.h": "api", "decode.h": "api", "kube.h": "api",
    "leader.h": "api", 
    "cel.h": "cel", "dra.h": "api", "workload.h": "api",
    "cache.h": "cache", "snapshot.h": "cache", "node_info.h": "cache", "state.h": "cache", "informer.h": "cache", 
    
    "status.h": "framework", "plugin.h": "framework", "framework.h": "framework",
    "handle.h": "framework", "batch.h": "framework",
    "preemption.h": "framework", "queue.h": "queue", "config.h": "framework", "features.h": "framework",
    "registry.h": "framework", "binder.h": "framework",
    "fit_error.h": "framework", "framework_metrics.h": "framework", "plugin_args.h": "framework",
    "binding_cycle.h": "framework", "podgroup.h": "framework", "post_filter.h": "framework", "dra_alloc.h": "dra",
    "extender_client.h": "framework",
    "extender.h": "extender", "node_memo.h": "extender", "bufpool.h": "util",
    "scheduler.h": "standalone", "explain.h": "explain",
    "whatif.h": "explain", "pending.h": "explain",
    "server.h": "cmd",
}

# The plugin list is read by the registry (and the slot enum beside it).
PLUGIN_LIST_READERS = {os.path.join("src", "framework", "registry.c"),
                       os.path.join("plugins", "slots.h")}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_path(path):
    parts = path.split(os.sep)
    if parts[0] == "plugins":
        return "plugins"
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "include":
        return HEADERS.get(parts[-1])
    return None


def may_include(src_layer, dst_layer):
    if src_layer == dst_layer:
        return True
    if RANK[src_layer] == RANK[dst_layer]:
        return {src_layer, dst_layer} == {"framework", "plugins"}
    return RANK[dst_layer] < RANK[src_layer]


# A file has one job, said in the comment it opens with: the check asks
# for that comment (a line count only pushed people to trim rather than
# split by job).
def opens_with_job(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.lstrip().startswith("/*")
    return False


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    errors = []
    files = []
    for top in ("src", "include", "plugins"):
        for d, _, names in os.walk(top):
            files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    for f in sorted(files):
        if not opens_with_job(f):
            errors.append(f"{f}: open the file with a comment saying its one job")
        if f.startswith("src" + os.sep) and f.count(os.sep) < 2:
            errors.append(f"{f}: source files live in a layer folder of src/")
            continue
        src_layer = layer_of_path(f)
        if src_layer is None:
            errors.append(f"{f}: public header not assigned to a layer in test/check_layers.py")
            continue
        if src_layer not in RANK:
            errors.append(f"{f}: folder src/{src_layer} is not a known layer")
            continue
        for inc in INCLUDE.findall(open(f, encoding="utf-8", errors="replace").read()):
            name = os.path.basename(inc)
            if f.startswith("include" + os.sep) and not inc.startswith("schedext/"):
                errors.append(f"{f}: a public header includes only schedext/ headers, not {inc}")
                continue
            if inc.endswith("plugins.def") and f not in PLUGIN_LIST_READERS:
                errors.append(f"{f}: only the registry reads the plugin list ({inc})")
                continue
            if inc.startswith("schedext/"):
                dst = HEADERS.get(name)
                if dst is None:
                    errors.append(f"{f}: includes {inc}, which has no layer")
                    continue
            elif inc.endswith(".def") or "/" not in inc:
                continue  # beside the file: same layer
            else:
                dst = layer_of_path(os.path.normpath(os.path.join(os.path.dirname(f), inc)))
            if dst and not may_include(src_layer, dst):
                errors.append(f"{f}: layer {src_layer} includes {inc} of higher layer {dst}")
    for name in sorted(HEADERS):
        if not os.path.exists(os.path.join("include", "schedext", name)):
            errors.append(f"test/check_layers.py: HEADERS names {name}, which does not exist")
    for e in errors:
        print("check_layers: " + e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"check_layers: {len(files)} files, no include crosses a layer upward")


if __name__ == "__main__":
    main()
