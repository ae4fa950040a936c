#!/usr/bin/env python3
"""Synthetic cluster generator for `make bench`.

Writes a v1 List (JSON) with N nodes and M running pods, deterministic from
--seed: nodes over regions/zones with ~16 realistic labels, 0-2 taints,
varied allocatable, 5-15 images, conditions; pods owned by ReplicaSets with
matching Services, with requests and, for some, node affinity, pod
(anti-)affinity, topology spread constraints, host ports and tolerations.

--pending K adds K unscheduled pods of the shape given by --mix
(plain, spread, affinity, anti-affinity, mixed, volumes), written to
--pending-out as a List, in the shapes of kube-scheduler's scheduler_perf
workloads (SchedulingBasic, TopologySpreading, PodAffinity, PodAntiAffinity).
The volumes mix is plain pods of which 30% mount a claim: half bound to a
zonal PV, half unbound of a WaitForFirstConsumer class (SchedulingWithPVs-
like); --storage-out receives those claims, PVs and their StorageClass.
The dra mix is plain pods each with one ResourceClaim for a GPU picked by a
CEL selector on two attributes; --storage-out receives the claims, the
DeviceClass and one ResourceSlice per node (--nodes) of 8 devices with 6
attributes each. The dra-partitionable mix (at --nodes, 1,000 in make
bench) is half pods claiming a 40Gi partition of a GPU, half pods asking
the extended resource example.com/gpu served by DRA; --storage-out receives
the claims, the DeviceClass (naming the extended resource) and per node a
pool of two slices: two GPUs' shared counters, and each GPU as a whole
device and two halves consuming them.
"""
import argparse
import json
import random

REGIONS = ["eu-west-1", "us-east-1"]
ZONES_PER_REGION = 3
INSTANCE_TYPES = [("m6i.xlarge", 4, 16), ("m6i.2xlarge", 8, 32), ("c6i.4xlarge", 16, 32),
                  ("r6i.2xlarge", 8, 64), ("m6i.4xlarge", 16, 64)]
IMAGES = [f"registry.example.com/team{i % 7}/service{i}:v{i % 5}.{i % 3}" for i in range(60)]
APPS = [f"app-{i}" for i in range(200)]
TAINTS = [("dedicated", "batch", "NoSchedule"), ("gpu", "true", "NoSchedule"),
          ("spot", "true", "PreferNoSchedule"), ("maintenance", "soon", "PreferNoSchedule")]


def zone_of(i):
    r = REGIONS[i % len(REGIONS)]
    return r, f"{r}{'abc'[(i // len(REGIONS)) % ZONES_PER_REGION]}"


def make_node(i, rng):
    name = f"node-{i:05d}"
    region, zone = zone_of(i)
    itype, cpu, mem = INSTANCE_TYPES[rng.randrange(len(INSTANCE_TYPES))]
    labels = {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": itype,
        "beta.kubernetes.io/instance-type": itype,
        "node-pool": f"pool-{i % 8}", "team": f"team-{i % 5}",
        "disk": "ssd" if i % 3 else "hdd", "network": "10g" if i % 4 else "25g",
        "kubernetes.io/role": "worker",
    }
    taints = [{"key": k, "value": v, "effect": e}
              for (k, v, e) in rng.sample(TAINTS, rng.choice([0, 0, 0, 1, 2]))]
    images = [{"names": [img, img.split(":")[0] + "@sha256:" + f"{j:064x}"],
               "sizeBytes": rng.randrange(20, 900) * 1024 * 1024}
              for j, img in enumerate(rng.sample(IMAGES, rng.randrange(5, 16)))]
    alloc = {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem * 1024 - 512}Mi",
             "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(1000 + i),
                     "labels": labels},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": dict(alloc, cpu=str(cpu), memory=f"{mem}Gi"),
                   "allocatable": alloc, "images": images,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"},
                                  {"type": "MemoryPressure", "status": "False"},
                                  {"type": "DiskPressure", "status": "False"}]},
    }


def owner(app):
    return [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-rs",
             "uid": f"uid-rs-{app}", "controller": True}]


def base_pod(name, ns, app, rng, node=None):
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
                     "resourceVersion": str(rng.randrange(10**6, 10**7)),
                     "labels": {"app": app, "pod-template-hash": "5d8f7c9b4"},
                     "ownerReferences": owner(app)},
        "spec": {"schedulerName": "default-scheduler", "containers": [{
            "name": "main", "image": IMAGES[hash(app) % len(IMAGES)],
            "resources": {"requests": {"cpu": f"{rng.choice([50, 100, 100, 200, 250])}m",
                                       "memory": f"{rng.choice([64, 128, 256, 256, 512])}Mi"}}}]},
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def decorate(pod, i, rng, nnodes):
    """Adds the occasional constraint to a running pod."""
    spec = pod["spec"]
    app = pod["metadata"]["labels"]["app"]
    r = i % 20
    if r == 1:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}
    elif r == 2:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}},
                                                "topologyKey": "kubernetes.io/hostname"}}]}}
    elif r == 3:
        spec["topologySpreadConstraints"] = [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    elif r == 4:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                "effect": "NoSchedule"}]
    elif r == 5 and i % 200 == 5:
        spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 30000 + i % 1000}]
    return pod


STORAGE_CLASS = "bench-zonal"


def add_volume(pod, i, storage, rng):
    """Every 10 pods, 3 mount a claim: bound zonal PV or WaitForFirstConsumer."""
    if i % 10 >= 3:
        return
    name = pod["metadata"]["name"]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data-" + name, "namespace": "bench", "uid": "uid-data-" + name,
                          "resourceVersion": "1"},
             "spec": {"storageClassName": STORAGE_CLASS, "accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "10Gi"}}},
             "status": {"phase": "Pending"}}
    if (i // 10 * 3 + i % 10) % 2 == 0:  # every other volume pod: bound to a PV in one zone
        _, zone = zone_of(rng.randrange(len(REGIONS) * ZONES_PER_REGION))
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": "pv-" + name, "resourceVersion": "1",
                           "annotations": {"pv.kubernetes.io/provisioned-by": "zonal.csi.example.com"}},
              "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                       "storageClassName": STORAGE_CLASS,
                       "csi": {"driver": "zonal.csi.example.com", "volumeHandle": "vol-" + name},
                       "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "bench",
                                    "name": "data-" + name, "uid": "uid-data-" + name},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": "topology.kubernetes.io/zone", "operator": "In",
                            "values": [zone]}]}]}}},
              "status": {"phase": "Bound"}}
        claim["spec"]["volumeName"] = pv["metadata"]["name"]
        claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        claim["status"]["phase"] = "Bound"
        storage.append(pv)
    storage.append(claim)
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-" + name}}]


DRA_DRIVER = "gpu.bench.example.com"
DRA_MODELS = ["a100", "a100", "a100", "a100", "h100", "h100", "l4", "l4"]
DRA_MEMORY = {"a100": 80, "h100": 80, "l4": 24}


def dra_objects(nodes):
    """The DeviceClass and one ResourceSlice of 8 GPUs per node."""
    items = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": "bench-gpu"},
              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % DRA_DRIVER}}]}}]
    for n in range(nodes):
        node = f"node-{n:05d}"
        devs = []
        for d, model in enumerate(DRA_MODELS):
            devs.append({"name": f"gpu-{d}", "attributes": {
                "model": {"string": model}, "memory": {"int": DRA_MEMORY[model]},
                "index": {"int": d}, "numa": {"int": d // 4},
                "driverVersion": {"version": "550.54.15"}, "ecc": {"bool": d % 2 == 0}},
                "capacity": {"memory": {"value": "%dGi" % DRA_MEMORY[model]}}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{node}-gpu"},
                      "spec": {"driver": DRA_DRIVER, "nodeName": node,
                               "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                               "devices": devs}})
    return items


DRA_PART_CLASS = "bench-mig"
DRA_EXT_RESOURCE = "example.com/gpu"


def dra_partitionable_objects(nodes):
    """DRAPartitionableDevices and DRAExtendedResource: per node two 80Gi
    GPUs published as partitions (a whole-GPU device consuming all of its
    counter set, and two halves of 40Gi each), in one slice of devices and
    one slice of counter sets (a pool of two slices); the DeviceClass also
    serves the extended resource example.com/gpu."""
    items = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": DRA_PART_CLASS},
              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % DRA_DRIVER}}],
                       "extendedResourceName": DRA_EXT_RESOURCE}}]
    for n in range(nodes):
        node = f"node-{n:05d}"
        devs, sets = [], []
        for g in range(2):
            sets.append({"name": f"gpu-{g}", "counters": {"memory": {"value": "80Gi"}}})
            for part, mem in (("whole", 80), ("half-0", 40), ("half-1", 40)):
                devs.append({"name": f"gpu-{g}-{part}", "attributes": {
                    "model": {"string": "a100"}, "memory": {"int": mem}, "index": {"int": g}},
                    "capacity": {"memory": {"value": "%dGi" % mem}},
                    "consumesCounters": [{"counterSet": f"gpu-{g}",
                                          "counters": {"memory": {"value": "%dGi" % mem}}}]})
        pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{node}-gpu-counters"},
                      "spec": {"driver": DRA_DRIVER, "nodeName": node, "pool": pool, "sharedCounters": sets}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{node}-gpu-devices"},
                      "spec": {"driver": DRA_DRIVER, "nodeName": node, "pool": pool, "devices": devs}})
    return items


def add_partition_claim(pod, storage):
    """A claim for one 40Gi partition."""
    name = pod["metadata"]["name"]
    storage.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "mig-" + name, "namespace": "bench", "uid": "uid-mig-" + name,
                                 "resourceVersion": "1"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                        "deviceClassName": DRA_PART_CLASS, "allocationMode": "ExactCount", "count": 1,
                        "selectors": [{"cel": {"expression": 'device.attributes["%s"].memory == 40'
                                                             % DRA_DRIVER}}]}}]}}})
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "mig-" + name}]


def add_claim(pod, storage):
    name = pod["metadata"]["name"]
    expr = ('device.attributes["%s"].model == "a100" && device.attributes["%s"].memory >= 40'
            % (DRA_DRIVER, DRA_DRIVER))
    storage.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "gpu-" + name, "namespace": "bench", "uid": "uid-gpu-" + name,
                                 "resourceVersion": "1"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                        "deviceClassName": "bench-gpu", "allocationMode": "ExactCount", "count": 1,
                        "selectors": [{"cel": {"expression": expr}}]}}]}}})
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-" + name}]


def pending_pod(i, mix, rng, storage=None):
    if mix == "dra":
        pod = base_pod(f"pending-dra-{i:06d}", "bench", "basic", rng)
        add_claim(pod, storage)
        return pod
    if mix == "dra-partitionable":
        # half the pods claim a partition, half ask the extended resource
        pod = base_pod(f"pending-drapart-{i:06d}", "bench", "basic", rng)
        if i % 2 == 0:
            add_partition_claim(pod, storage)
        else:
            res = pod["spec"]["containers"][0]["resources"]
            res["requests"][DRA_EXT_RESOURCE] = "1"
            res["limits"] = {DRA_EXT_RESOURCE: "1"}
        return pod
    if mix == "volumes":
        pod = base_pod(f"pending-volumes-{i:06d}", "bench", "basic", rng)
        add_volume(pod, i, storage, rng)
        return pod
    kind = mix if mix != "mixed" else ["plain", "spread", "affinity", "anti-affinity"][i % 4]
    app = {"plain": "basic", "spread": "spread", "affinity": "affine",
           "anti-affinity": f"anti-{i}"}[kind]
    pod = base_pod(f"pending-{kind}-{i:06d}", "bench", app, rng)
    spec = pod["spec"]
    if kind == "spread":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    elif kind == "affinity":
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "affine"}},
             "topologyKey": "topology.kubernetes.io/zone"}]}}
    elif kind == "anti-affinity":
        pod["metadata"]["labels"]["group"] = "anti"
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": "anti"}},
             "topologyKey": "kubernetes.io/hostname"}]}}
    return pod


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--pending", type=int, default=0)
    ap.add_argument("--mix", default="mixed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="cluster List file (omit to write only --pending-out)")
    ap.add_argument("--pending-out")
    ap.add_argument("--storage-out", help="--mix volumes: the claims/PVs/class; --mix dra: the "
                    "claims, class and slices (a List)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.out:
        write_cluster(a, rng)
    if a.pending_out:
        storage = []
        pend = [pending_pod(i, a.mix, rng, storage) for i in range(a.pending)]
        with open(a.pending_out, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": pend}, f, separators=(",", ":"))
        if a.storage_out and a.mix == "dra":
            with open(a.storage_out, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": dra_objects(a.nodes) + storage},
                          f, separators=(",", ":"))
        elif a.storage_out and a.mix == "dra-partitionable":
            with open(a.storage_out, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List",
                           "items": dra_partitionable_objects(a.nodes) + storage},
                          f, separators=(",", ":"))
        elif a.storage_out:
            storage.insert(0, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                               "metadata": {"name": STORAGE_CLASS},
                               "provisioner": "zonal.csi.example.com",
                               "volumeBindingMode": "WaitForFirstConsumer"})
            with open(a.storage_out, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": storage}, f,
                          separators=(",", ":"))


def write_cluster(a, rng):
    items = [make_node(i, rng) for i in range(a.nodes)]
    items.append({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": "bench", "labels": {"team": "bench"}}})
    for app in APPS:
        items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                      "metadata": {"name": f"{app}-rs", "namespace": "default", "uid": f"uid-rs-{app}"},
                      "spec": {"selector": {"matchLabels": {"app": app}}}})
        items.append({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": app, "namespace": "default"},
                      "spec": {"selector": {"app": app}}})
    for i in range(a.pods):
        node = f"node-{rng.randrange(a.nodes):05d}"
        pod = base_pod(f"pod-{i:06d}", "default", APPS[i % len(APPS)], rng, node)
        items.append(decorate(pod, i, rng, a.nodes))
    with open(a.out, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
