#!/usr/bin/env python3
"""A protocol-faithful fake Kubernetes API server for schedext's tests.

Standard library only. Serves, for every kind schedext watches plus events
and leases (as the API server answers client-go's reflector and writers):

* LIST with kube-apiserver's resourceVersion semantics (docs/fake-api-server.md):
  resourceVersion=0 answered from the "watch cache" whole, ignoring limit;
  unset: a consistent read, paginated by limit/continue (pages of one
  snapshot; a token expires with compaction: 410 Expired); a non-zero RV
  "not older than" (unset match, no limit) or exact (resourceVersionMatch=
  Exact, or a limit); ListOptions validated as upstream (422);
* WATCH (?watch=1) over HTTP/1.1 chunked encoding: events after the given
  RV, 410 "too old resource version" as an ERROR event when the RV fell out
  of the history window, BOOKMARKs (only metadata.resourceVersion) with
  allowWatchBookmarks=true, the streaming list (sendInitialEvents=true with
  resourceVersionMatch=NotOlderThan: ADDED for every object, then a BOOKMARK
  annotated k8s.io/initial-events-end), timeoutSeconds, field selectors with
  selector-transition semantics (an object leaving the selector is DELETED);
* writes: pods/binding (with the real server's conflicts), pods/status PATCH
  (strategic merge of conditions by type, merge patch), resourceclaims/status
  and podgroups/status PATCH (merge patch of status only), DELETE with
  preconditions, core/v1 events, generic create/get/update/delete (leases
  with resourceVersion conflicts), generic PATCH (JSON merge patch; a
  metadata.resourceVersion in the patch is a precondition: 409 Conflict);
* the two storage controllers of a real cluster (class Controllers): the PV
  controller completes a binding once a PV carries a claimRef (PV phase
  Bound; claim spec.volumeName, phase Bound, pv.kubernetes.io/bind-completed),
  and an external provisioner creates a PV for a claim annotated with
  volume.kubernetes.io/selected-node whose class's provisioner it serves,
  with node affinity to the selected node's zone (its hostname when the node
  has no zone label). Each can be switched off to test timeouts.

Tests drive it through /_control/* (never subject to auth or faults):

  POST /_control/objects   {"ops":[{"op":"create|update|upsert|delete","object":{...}}]}
  GET  /_control/state     {"resourceVersion":"N","objects":{"pods":[...],...}}
  POST /_control/faults    set fault knobs (see FAULT_DEFAULTS); GET reads them
  GET  /_control/records   bindings (as received), accepted_bindings (the ones
                           that bound a pod), events, patches, deletes, requests,
                           watches, lists (a streaming list counts as both)
  GET  /_control/requests  the last 20,000 API requests as the server saw them:
                           {"requests":[{"t","done","method","path","query",
                           "status"}]} (t: arrival, done: response written,
                           Unix seconds); ?resource=pods keeps one resource's
  POST /_control/compact   drop the watch history (old RVs now get 410)
  POST /_control/token     {"token":"new"}: the old token now gets 401
  POST /_control/tokens    expiring bearer tokens (exec credential plugins):
                           {"add":{"tok":<unix expiry or null>}} accepts tok
                           until its expiry (plus 1 s of skew), {"revoke":
                           "all"|[toks]} drops some; the first call turns the
                           check on. GET: {"tokens":{...}, "unauthorized":N}
  POST /_control/drop      abruptly close every open watch
  POST /_control/controllers {"pvController": bool, "provisioner": bool,
                            "provisioners": [names] or null (= every one but
                            kubernetes.io/no-provisioner), "delayMs": N,
                            "kubeletGraceMs": N (a bound pod's DELETE sets
                            deletionTimestamp; a kubelet removes it N ms
                            later; 0, the default: removed at once)};
                            GET reads them

Usage: fakeapi.py [--port 0] [--token T] [--tls-cert F --tls-key F
       [--client-ca F]] [--history N] [--bookmark-interval S] [--seed N]
       [--no-pv-controller] [--no-provisioner] [--provisioners a,b]
Prints "listening on <port>" once ready.
"""
import argparse
import base64
import bisect
import collections
import copy
import itertools
import json
import os
import random
import re
import socket
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit, unquote


def _kinds_table():
    """resource -> (api prefix, kind, namespaced) of every WATCHED row of
    include/schedext/kinds.def, the table schedext's informers are
    generated from: the fake serves each kind schedext watches."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "include", "schedext", "kinds.def")
    with open(path, encoding="utf-8") as fh:
        text = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
    out, plurals = {}, set()
    for start in (m.end() for m in re.finditer(r"^SX_KIND\(", text, re.M)):
        depth, end = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        cols = [c.strip() for c in re.split(r",(?![^()]*\))", text[start:end - 1])]
        kind, group, version, resource = (c.strip('"') for c in cols[1:5])
        if cols[12] != "WATCHED":
            continue
        prefix = "/api/" + version if not group else "/apis/%s/%s" % (group, version)
        # A plural a previous row took (podgroups of scheduling.k8s.io and
        # of scheduling.x-k8s.io) is keyed resource.group, as kubectl
        # spells a qualified resource.
        key = resource if resource not in plurals else "%s.%s" % (resource, group)
        plurals.add(resource)
        out[key] = (prefix, kind, cols[5] == "NAMESPACED")
    return out


# resource -> (api prefix, kind, namespaced): the watched kinds, and what
# else schedext reads or writes (Events, Deployments for what-if, Leases).
RESOURCES = dict(_kinds_table(), **{
    "events": ("/api/v1", "Event", True),
    "deployments": ("/apis/apps/v1", "Deployment", True),
    "leases": ("/apis/coordination.k8s.io/v1", "Lease", True),
})
# (apiVersion, kind) -> resource key; a kind alone names its first row.
KIND_TO_RESOURCE = {}
for _k, _v in RESOURCES.items():
    _av = (_v[0].split("/", 2)[2] if _v[0].startswith("/apis/") else _v[0].split("/")[2])
    KIND_TO_RESOURCE[(_av, _v[1])] = _k
    KIND_TO_RESOURCE.setdefault(_v[1], _k)
# (api prefix, plural) -> resource key
PATH_TO_RESOURCE = {(v[0], k.split(".", 1)[0]): k for k, v in RESOURCES.items()}


def plural(res):
    """The URL plural of a resource key ("podgroups.scheduling.x-k8s.io")."""
    return res.split(".", 1)[0]


def kind_resource(obj):
    """The resource key of an object, by its apiVersion and kind."""
    return KIND_TO_RESOURCE.get((obj.get("apiVersion", ""), obj.get("kind", ""))) or \
        KIND_TO_RESOURCE.get(obj.get("kind", ""))
EVENTS_V1 = re.compile(r"^/apis/events\.k8s\.io/v1/namespaces/([^/]+)/events$")
EVENT_V1 = re.compile(r"^/apis/events\.k8s\.io/v1/namespaces/([^/]+)/events/([^/]+)$")
REVIEW_PATHS = ("/apis/authentication.k8s.io/v1/tokenreviews",
                "/apis/authorization.k8s.io/v1/subjectaccessreviews")
# api prefix -> API group ("/apis/storage.k8s.io/v1" -> "storage.k8s.io")
GROUP_OF = {p: (p.split("/")[2] if p.startswith("/apis/") else "")
            for p, _, _ in RESOURCES.values()}

FAULT_DEFAULTS = {
    "split_chunks": False,        # cut watch output into random small chunks
    "disconnect_prob": 0.0,       # per event: write part of it, then drop the connection
    "watch_410_start": 0,         # next N watches answer HTTP 410
    "watch_410_event": 0,         # next N watches send an ERROR 410 event, then close
    "error_event_prob": 0.0,      # per event: send an ERROR 410 instead and close
    "slow_ms": 0,                 # pause between watch writes
    "status_429": 0,              # next N API requests: 429 with Retry-After
    "status_500": 0,              # next N API requests: 500
    "retry_after": 1,             # seconds in Retry-After
    "fail_prob_429": 0.0,         # probability an API request gets 429
    "fail_prob_500": 0.0,         # probability an API request gets 500
    "event_delay_ms": 0,          # events.k8s.io/v1 writes: answer after this long
    "bind_delay_ms": 0,           # pods/binding: answer after this long (a slow API server)
    "unserved": [],               # resources answering 404
    "forbidden": [],              # resources answering 403
    "list_page_max": 0,           # cap page size (0: honour limit)
    "conflict_patches": 0,        # next N generic PATCHes: 409 as if the object had moved
    "claim_status_409": 0,        # next N resourceclaims/status patches: bump RV, answer 409
    # kube-apiserver --watch-cache=false (or --watch-cache-sizes=<res>#0):
    # resources listed here answer resourceVersion=0 from "etcd", paginated
    "watch_cache_off": [],
    "list_410": 0,                # next N LISTs with a non-empty resourceVersion: 410 Expired
    "continue_410": 0,            # next N LISTs with a continue token: 410 Expired
    # kube-apiserver with the WatchList feature gate off: a watch with
    # sendInitialEvents is refused (422)
    "watch_list_off": False,
}

# Upstream's texts (k8s.io/apiserver/pkg/storage/etcd3/store.go: expired,
# continueExpired; pkg/storage/errors.go: NewTooLargeResourceVersionError).
EXPIRED_LIST = "The resourceVersion for the provided list is too old."
EXPIRED_CONTINUE = ("The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.")
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
# cacher.go blocks a read ahead of the cache up to 3 s (blockTimeout) before
# answering "Too large resource version".
FRESH_WAIT_S = 3.0


def status_body(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    if code < 300:
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
             "code": code}
    return s


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch; returns a new value (target untouched)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def match_field_selector(obj, sel):
    """Only the forms schedext and tests use: a=b, a==b, a!=b, comma AND."""
    if not sel:
        return True
    for req in sel.split(","):
        if "!=" in req:
            k, v = req.split("!=", 1)
            neg = True
        else:
            k, v = req.replace("==", "=").split("=", 1)
            neg = False
        cur = obj
        for part in k.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        cur = "" if cur is None else str(cur)
        if (cur == v) == neg:
            return False
    return True


class ApiError(Exception):
    def __init__(self, code, reason, message, headers=None, details=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.headers = headers or {}
        self.details = details


class Store:
    """All objects, the global resourceVersion and the watch history."""

    def __init__(self, history, bookmark_interval):
        # One mutex; the global condition plus one per resource, so an
        # event wakes only the watchers of its own resource.
        mutex = threading.RLock()
        self.lock = threading.Condition(mutex)
        self.changed = {r: threading.Condition(mutex) for r in RESOURCES}
        self.rv = 1000
        self.objects = {r: {} for r in RESOURCES}
        self.history = []            # (rv, resource, type, old, new)
        self.history_max = history
        self.compacted_rv = self.rv  # events with rv <= this are gone
        # Per resource: rv of its newest event and of its newest compacted
        # one. A watcher is too old only when it missed events of its own
        # resource (as with the API server's per-resource watch cache).
        self.last_rv = {r: self.rv for r in RESOURCES}
        self.compacted_res = {r: self.rv for r in RESOURCES}
        self.snapshots = {}          # continue token id -> (rv, items)
        self.bookmark_interval = bookmark_interval
        self.faults = copy.deepcopy(FAULT_DEFAULTS)
        self.records = {"bindings": [], "accepted_bindings": [], "events": [], "patches": [], "deletes": [],
                        "requests": 0, "watches": 0, "lists": 0,
                        # events.k8s.io/v1 writes as received: {"verb", "namespace",
                        # "name", "received", and "code"/"message" when refused}
                        "event_writes": [], "user_agents": {}}
        self.events_v1 = {}  # (namespace, name) -> stored events.k8s.io/v1 Event
        self.token = None
        self.exec_tokens = None  # token -> unix expiry (None = none); None = off
        self.unauthorized = 0    # 401s answered for a missing/expired/revoked token
        self.authn = None  # TokenReview/SubjectAccessReview policy: None = allow all
        self.write_seq = 0           # orders the records of writes
        self.watch_conns = set()
        self.rand = random.Random(0)
        self.request_log = collections.deque(maxlen=20000)
        # "METHOD resource[/subresource]" -> requests, over the whole run
        # (the request log keeps only the last 20,000)
        self.verb_counts = collections.Counter()
        self.scheduled_events = 0    # events.k8s.io/v1 creates with reason Scheduled

    # ----- mutations (lock held by caller) -----
    def next_seq(self):
        self.write_seq += 1
        return self.write_seq

    def _next_rv(self):
        self.rv += 1
        return str(self.rv)

    def _emit(self, resource, etype, old, new):
        self.history.append((self.rv, resource, etype, old, new))
        self.last_rv[resource] = self.rv
        while len(self.history) > self.history_max:
            gone = self.history.pop(0)
            self.compacted_rv = gone[0]
            self.compacted_res[gone[1]] = gone[0]
        self.lock.notify_all()
        self.changed[resource].notify_all()

    def key_of(self, resource, obj):
        md = obj.get("metadata") or {}
        ns = md.get("namespace", "") if RESOURCES[resource][2] else ""
        return (ns or "", md.get("name", ""))

    def create(self, resource, obj):
        prefix, kind, namespaced = RESOURCES[resource]
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise ApiError(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        if namespaced:
            md.setdefault("namespace", "default")
        else:
            md.pop("namespace", None)
        key = self.key_of(resource, obj)
        if key in self.objects[resource]:
            raise ApiError(409, "AlreadyExists", '%s%s "%s" already exists' % (
                plural(resource), "." + GROUP_OF[prefix] if GROUP_OF[prefix] else "", key[1]))
        obj["kind"] = kind
        obj["apiVersion"] = (GROUP_OF[prefix] + "/" if GROUP_OF[prefix] else "") + prefix.rsplit("/", 1)[1]
        md["uid"] = md.get("uid") or str(uuid.uuid4())
        md.setdefault("creationTimestamp", now_rfc3339())
        md["resourceVersion"] = self._next_rv()
        self.objects[resource][key] = obj
        self._emit(resource, "ADDED", None, obj)
        return obj

    def update(self, resource, obj, check_rv=True, owned=False):
        """owned: obj is a fresh object the caller gives away (its nested
        values may be shared with the stored one but are never mutated)."""
        key = self.key_of(resource, obj)
        old = self.objects[resource].get(key)
        if old is None:
            raise ApiError(404, "NotFound", '%s "%s" not found' % (resource, key[1]))
        want = (obj.get("metadata") or {}).get("resourceVersion")
        if check_rv and want and want != old["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your changes to the latest version and try again' % (self.qualified(resource), key[1]))
        new = obj if owned else copy.deepcopy(obj)
        new["kind"], new["apiVersion"] = old["kind"], old["apiVersion"]
        md = new["metadata"] = dict(new.get("metadata") or {})
        md["uid"] = old["metadata"]["uid"]
        md["creationTimestamp"] = old["metadata"].get("creationTimestamp")
        if RESOURCES[resource][2]:
            md["namespace"] = key[0]
        md["resourceVersion"] = self._next_rv()
        self.objects[resource][key] = new
        self._emit(resource, "MODIFIED", old, new)
        return new

    def delete(self, resource, key, uid=None, grace_ms=0):
        """grace_ms > 0: a pod bound to a node is deleted gracefully as by
        a real API server with a kubelet: deletionTimestamp and
        deletionGracePeriodSeconds are set (MODIFIED) and the kubelet's
        confirmation removes it grace_ms later (DELETED)."""
        old = self.objects[resource].get(key)
        if old is None:
            raise ApiError(404, "NotFound", '%s "%s" not found' % (resource, key[1]))
        if uid and uid != old["metadata"]["uid"]:
            raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: %s, UID in object meta: %s" % (uid, old["metadata"]["uid"]))
        if grace_ms and (old.get("spec") or {}).get("nodeName"):
            if old["metadata"].get("deletionTimestamp"):
                return old
            md = dict(old["metadata"], deletionTimestamp=now_rfc3339(),
                      deletionGracePeriodSeconds=max(1, grace_ms // 1000))
            new = self.update(resource, dict(old, metadata=md), check_rv=False, owned=True)
            uid_now = md["uid"]
            threading.Timer(grace_ms / 1000.0, self._kubelet_confirm,
                            (resource, key, uid_now)).start()
            return new
        del self.objects[resource][key]
        last = copy.deepcopy(old)
        last["metadata"]["resourceVersion"] = self._next_rv()
        self._emit(resource, "DELETED", old, last)
        return last

    def _kubelet_confirm(self, resource, key, uid):
        with self.lock:
            cur = self.objects[resource].get(key)
            if cur is not None and cur["metadata"]["uid"] == uid:
                self.delete(resource, key, uid)

    def qualified(self, resource):
        g = GROUP_OF[RESOURCES[resource][0]]
        return plural(resource) + ("." + g if g else "")

    def state_at(self, resource, rv):
        """The objects of resource as they were at rv (an etcd read at a
        revision), or None when events after rv were compacted away."""
        if rv < self.compacted_rv:
            return None
        objs = dict(self.objects[resource])
        start = bisect.bisect_right(self.history, rv, key=lambda h: h[0])
        for _, r, etype, old, new in reversed(self.history[start:]):
            if r != resource:
                continue
            key = self.key_of(resource, new if new is not None else old)
            if etype == "ADDED":
                objs.pop(key, None)
            else:
                objs[key] = old
        return objs

    def take_fault(self, name):
        n = self.faults.get(name, 0)
        if n:
            self.faults[name] = n - 1
            return True
        return False

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


class Controllers:
    """The PV controller and an external provisioner, on one thread that
    wakes on every store change (and every 0.2 s). Both act only through
    Store.create/update, so their writes are watch events like any other.
    delay_ms holds every action back that long after the change that
    triggered it (a slow controller)."""

    def __init__(self, store, pv_controller=True, provisioner=True, provisioners=None):
        self.store = store
        self.pv_controller = pv_controller
        self.provisioner = provisioner
        self.provisioners = provisioners  # None: every provisioner but NO_PROVISIONER
        self.delay_ms = 0
        self.kubelet_grace_ms = 0  # 0: pods are deleted at once (no kubelet)
        self.seen_rv = -1
        t = threading.Thread(target=self.run, name="controllers", daemon=True)
        t.start()

    def settings(self):
        with self.store.lock:
            return {"pvController": self.pv_controller, "provisioner": self.provisioner,
                    "provisioners": self.provisioners, "delayMs": self.delay_ms,
                    "kubeletGraceMs": self.kubelet_grace_ms}

    def configure(self, body):
        with self.store.lock:
            if "pvController" in body:
                self.pv_controller = bool(body["pvController"])
            if "provisioner" in body:
                self.provisioner = bool(body["provisioner"])
            if "provisioners" in body:
                self.provisioners = body["provisioners"]
            if "delayMs" in body:
                self.delay_ms = int(body["delayMs"] or 0)
            if "kubeletGraceMs" in body:
                self.kubelet_grace_ms = max(0, int(body["kubeletGraceMs"] or 0))
            self.seen_rv = -1  # re-examine everything with the new settings
            self.store.lock.notify_all()

    def run(self):
        st = self.store
        while True:
            with st.lock:
                while st.rv == self.seen_rv:
                    st.lock.wait(0.2)
                delay = self.delay_ms
            if delay:
                time.sleep(delay / 1000.0)
            with st.lock:
                self.seen_rv = st.rv
                try:
                    if self.provisioner:
                        self.provision_all()
                    if self.pv_controller:
                        self.bind_all()
                except ApiError as e:  # a test deleted something under us: next pass
                    sys.stderr.write("fakeapi: controllers: %s\n" % e.message)

    # ----- external provisioner -----
    def serves(self, provisioner):
        if not provisioner or provisioner == NO_PROVISIONER:
            return False
        return self.provisioners is None or provisioner in self.provisioners

    def provision_all(self):
        st = self.store
        for (ns, name), pvc in list(st.objects["persistentvolumeclaims"].items()):
            md, spec = pvc.get("metadata") or {}, pvc.get("spec") or {}
            node_name = (md.get("annotations") or {}).get(ANN_SELECTED_NODE)
            if not node_name or spec.get("volumeName") or md.get("deletionTimestamp"):
                continue
            cls = st.objects["storageclasses"].get(("", claim_class(pvc)))
            if cls is None or not self.serves(cls.get("provisioner")):
                continue
            pv_name = "pvc-" + md["uid"]
            if ("", pv_name) in st.objects["persistentvolumes"]:
                continue
            node = st.objects["nodes"].get(("", node_name))
            if node is None:  # provisioning failed for good: give the claim back
                ann = dict(md.get("annotations") or {})
                ann.pop(ANN_SELECTED_NODE, None)
                st.update("persistentvolumeclaims",
                          dict(pvc, metadata=dict(md, annotations=ann)), check_rv=False)
                continue
            st.create("persistentvolumes", self.new_pv(pv_name, pvc, cls, node))

    def new_pv(self, name, pvc, cls, node):
        md, spec = pvc["metadata"], pvc.get("spec") or {}
        labels = (node.get("metadata") or {}).get("labels") or {}
        for key in ZONE_LABELS:
            if key in labels:
                term = {"key": key, "operator": "In", "values": [labels[key]]}
                break
        else:
            host = labels.get("kubernetes.io/hostname", node["metadata"]["name"])
            term = {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}
        request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        pv_spec = {
            "capacity": {"storage": request},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "storageClassName": claim_class(pvc),
            "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy", "Delete"),
            "volumeMode": spec.get("volumeMode", "Filesystem"),
            "csi": {"driver": cls["provisioner"], "volumeHandle": name},
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                         "namespace": md["namespace"], "name": md["name"], "uid": md["uid"],
                         "resourceVersion": md["resourceVersion"]},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}},
        }
        return {"kind": "PersistentVolume", "apiVersion": "v1",
                "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: cls["provisioner"]}},
                "spec": pv_spec, "status": {"phase": "Pending"}}

    # ----- PV controller (binding completion) -----
    def bind_all(self):
        st = self.store
        for key, pv in list(st.objects["persistentvolumes"].items()):
            ref = (pv.get("spec") or {}).get("claimRef")
            if not ref or pv.get("metadata", {}).get("deletionTimestamp"):
                continue
            pvc = st.objects["persistentvolumeclaims"].get((ref.get("namespace") or "default",
                                                            ref.get("name")))
            if pvc is None:
                continue
            uid = pvc["metadata"]["uid"]
            if ref.get("uid") and ref["uid"] != uid:
                continue  # bound to an older claim of that name
            other = (pvc.get("spec") or {}).get("volumeName")
            if other and other != key[1]:
                continue  # the claim is bound to another volume
            self.bind_pv(pv, uid)
            self.bind_claim(pvc, st.objects["persistentvolumes"][key])

    def bind_pv(self, pv, uid):
        ref = pv["spec"]["claimRef"]
        if ref.get("uid") == uid and (pv.get("status") or {}).get("phase") == "Bound":
            return
        spec = dict(pv["spec"], claimRef=dict(ref, uid=uid))
        self.store.update("persistentvolumes",
                          dict(pv, spec=spec, status=dict(pv.get("status") or {}, phase="Bound")),
                          check_rv=False, owned=True)

    def bind_claim(self, pvc, pv):
        md, spec, status = pvc["metadata"], pvc.get("spec") or {}, pvc.get("status") or {}
        ann = md.get("annotations") or {}
        if (spec.get("volumeName") == pv["metadata"]["name"] and ANN_BIND_COMPLETED in ann
                and status.get("phase") == "Bound"):
            return
        ann = dict(ann)
        ann[ANN_BIND_COMPLETED] = "yes"
        if not spec.get("volumeName"):
            ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        status = dict(status, phase="Bound",
                      accessModes=pv["spec"].get("accessModes") or [],
                      capacity=pv["spec"].get("capacity") or {})
        self.store.update("persistentvolumeclaims",
                          dict(pvc, metadata=dict(md, annotations=ann),
                               spec=dict(spec, volumeName=pv["metadata"]["name"]), status=status),
                          check_rv=False, owned=True)


def claim_class(pvc):
    """GetPersistentVolumeClaimClass: the beta annotation wins."""
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return ann["volume.beta.kubernetes.io/storage-class"]
    return (pvc.get("spec") or {}).get("storageClassName") or ""



# ----- events.k8s.io/v1 validation (kube-apiserver's
# pkg/apis/core/validation/events.go: ValidateEventCreate with its
# legacyValidateEvent and validateV1EventSeries, ValidateEventUpdate; the
# v1 fields are checked under their internal names, as the server reports
# them: note -> message, regarding -> involvedObject) -----
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")
DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
               "'-' or '.', and must start and end with an alphanumeric character (e.g. "
               "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
               "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def is_qualified_name(v):
    """validation.IsQualifiedName: [prefix/]name, name <= 63 characters."""
    parts = v.split("/")
    if len(parts) > 2 or not parts[-1] or len(parts[-1]) > 63 or not QUALIFIED_NAME.match(parts[-1]):
        return False
    return len(parts) == 1 or (len(parts[0]) <= 253 and bool(DNS1123_SUBDOMAIN.match(parts[0])))


def micro_time_set(v, field, errs):
    """A MicroTime that decodes; None and "" are the zero time."""
    if v in (None, ""):
        return False
    if not isinstance(v, str) or not MICRO_TIME.match(v):
        raise ApiError(400, "BadRequest", 'parsing time "%s" as "2006-01-02T15:04:05.000000Z07:00": '
                       'cannot parse %s' % (v, field))
    return True


def validate_event_v1(ev):
    errs = []
    md = ev.get("metadata") or {}
    ns, name = md.get("namespace", ""), md.get("name", "")
    reg = ev.get("regarding") or {}
    # ValidateObjectMeta(NameIsDNSSubdomain)
    if not name:
        errs.append("metadata.name: Required value: name or generateName is required")
    elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        errs.append('metadata.name: Invalid value: "%s": %s' % (name, DNS1123_MSG))
    series = ev.get("series")
    if series is not None:
        errs += validate_series(series)
    has_time = micro_time_set(ev.get("eventTime"), "eventTime", errs)
    # legacyValidateEvent, with eventTime set
    if has_time:
        if not reg.get("namespace") and ns not in ("default", "kube-system"):
            errs.append('involvedObject.namespace: Invalid value: "": does not match event.namespace')
        rc = ev.get("reportingController") or ""
        if not rc:
            errs.append("reportingController: Required value")
        elif not is_qualified_name(rc):
            errs.append('reportingController: Invalid value: "%s": name part must consist of '
                        'alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end '
                        'with an alphanumeric character' % rc)
        for f, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
            v = ev.get(f) or ""
            if not v:
                errs.append("%s: Required value" % f)
            if len(v) > limit:
                errs.append('%s: Invalid value: "": can have at most %d characters' % (f, limit))
        if len(ev.get("note") or "") > 1024:
            errs.append('message: Invalid value: "": can have at most 1024 characters')
    elif ((not reg.get("namespace") and ns not in ("", "default")) or
          (reg.get("namespace") and reg["namespace"] != ns)):
        errs.append('involvedObject.namespace: Invalid value: "%s": does not match event.namespace'
                    % reg.get("namespace", ""))
    if not DNS1123_SUBDOMAIN.match(ns) or len(ns) > 253:
        errs.append('namespace: Invalid value: "%s": %s' % (ns, DNS1123_MSG))
    # strict events.k8s.io/v1 checks
    if not has_time:
        errs.append("eventTime: Required value")
    if ev.get("type") not in ("Normal", "Warning"):
        errs.append('type: Invalid value: "": has invalid value: %s' % (ev.get("type") or ""))
    for f, internal in (("deprecatedFirstTimestamp", "firstTimestamp"),
                        ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count")):
        if ev.get(f):
            errs.append('%s: Invalid value: "": needs to be unset' % internal)
    src = ev.get("deprecatedSource") or {}
    if src.get("component") or src.get("host"):
        errs.append('source: Invalid value: "": needs to be unset')
    return errs


def validate_series(series):
    errs = []
    if not isinstance(series.get("count"), int) or series["count"] < 2:
        errs.append('series.count: Invalid value: "": should be at least 2')
    if not micro_time_set(series.get("lastObservedTime"), "series.lastObservedTime", errs):
        errs.append("series.lastObservedTime: Required value")
    return errs


def validate_event_v1_update(new, old):
    errs = []
    if new.get("series") != old.get("series") and new.get("series") is not None:
        errs += validate_series(new["series"])
    for f, internal in (("regarding", "involvedObject"), ("reason", "reason"), ("note", "message"),
                        ("type", "type"), ("eventTime", "eventTime"), ("action", "action"),
                        ("related", "related"), ("reportingController", "reportingController"),
                        ("reportingInstance", "reportingInstance")):
        if new.get(f) != old.get(f):
            errs.append("%s: Invalid value: %s: field is immutable"
                        % (internal, json.dumps(new.get(f))))
    return errs


def invalid_event(name, errs):
    detail = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    return ApiError(422, "Invalid", 'Event.events.k8s.io "%s" is invalid: %s' % (name, detail))


def merge_patch(obj, patch):
    """RFC 7386 merge (a strategic merge patch of an Event has no lists
    with merge keys to treat otherwise)."""
    for k, v in patch.items():
        if v is None:
            obj.pop(k, None)
        elif isinstance(v, dict) and isinstance(obj.get(k), dict):
            merge_patch(obj[k], v)
        else:
            obj[k] = copy.deepcopy(v)
    return obj


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi/1"

    def setup(self):
        super().setup()
        # Replies go out as a header write then a body write; with Nagle the
        # body waits for the client's delayed ACK of the headers (~40 ms),
        # which would cap every client at ~25 requests/s per connection.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("fakeapi: " + fmt % args + "\n")

    @property
    def store(self):
        return self.server.store

    # ----- plumbing -----
    def body_json(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid JSON body")

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        # One write for headers and body (see setup()).
        self._headers_buffer.append(b"\r\n")
        self._headers_buffer.append(data)
        self.flush_headers()

    def send_error_status(self, e):
        self.send_json(e.code, status_body(e.code, e.reason, e.message, e.details), e.headers)

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def send_response(self, code, message=None):
        self.last_status = code
        super().send_response(code, message)

    def dispatch(self, method):
        u = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        if u.path.startswith("/_control/"):
            try:
                return self.control(method, u.path[len("/_control/"):], q)
            except ApiError as e:
                return self.send_error_status(e)
        entry = {"t": time.time(), "done": None, "method": method, "path": u.path,
                 "query": q, "status": None}
        with self.store.lock:
            self.store.request_log.append(entry)
            self.store.verb_counts[self.verb_key(method, u.path, q)] += 1
        try:
            self.api_request(method, u, q)
        finally:
            entry["done"], entry["status"] = time.time(), getattr(self, "last_status", None)

    def api_request(self, method, u, q):
        try:
            self.check_auth_and_faults()
            if method == "POST" and u.path in REVIEW_PATHS:
                return self.review(u.path)
            if method == "POST" and EVENTS_V1.match(u.path):
                return self.create_event_v1(EVENTS_V1.match(u.path).group(1))
            if method == "PATCH" and EVENT_V1.match(u.path):
                return self.patch_event_v1(*EVENT_V1.match(u.path).groups())
            self.api(method, u.path, q)
        except ApiError as e:
            self.send_error_status(e)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def check_auth_and_faults(self):
        st = self.store
        with st.lock:
            st.records["requests"] += 1
            ua = self.headers.get("User-Agent", "")
            st.records["user_agents"][ua] = st.records["user_agents"].get(ua, 0) + 1
            if st.token is not None:
                auth = self.headers.get("Authorization", "")
                if auth != "Bearer " + st.token:
                    raise ApiError(401, "Unauthorized", "Unauthorized")
            if st.exec_tokens is not None:
                auth = self.headers.get("Authorization", "")
                tok = auth[7:] if auth.startswith("Bearer ") else None
                exp = st.exec_tokens.get(tok, 0) if tok else 0
                if exp == 0 or (exp is not None and time.time() > exp + 1):
                    st.unauthorized += 1
                    raise ApiError(401, "Unauthorized", "Unauthorized")
            ra = {"Retry-After": str(st.faults["retry_after"])}
            if st.take_fault("status_429") or st.rand.random() < st.faults["fail_prob_429"]:
                raise ApiError(429, "TooManyRequests", "Too many requests, please try again later.", ra)
            if st.take_fault("status_500") or st.rand.random() < st.faults["fail_prob_500"]:
                raise ApiError(500, "InternalError", "Internal error occurred: injected fault")

    # ----- events.k8s.io/v1 (what kube-scheduler's recorder writes) -----
    def create_event_v1(self, ns):
        body = self.body_json() or {}
        md = body.setdefault("metadata", {})
        if md.get("namespace") not in (None, "", ns):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                           "match the namespace sent on the request")
        md["namespace"] = ns
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
        self.event_verdict("create", ns, md.get("name", ""), validate_event_v1(body))
        st = self.store
        with st.lock:
            delay = st.faults["event_delay_ms"]
        if delay:
            time.sleep(delay / 1000.0)
        with st.lock:
            if (ns, md["name"]) in st.events_v1:
                self.refuse_event(st, "create", ns, md["name"], ApiError(
                    409, "AlreadyExists", 'events.events.k8s.io "%s" already exists' % md["name"]))
            obj = dict(body, metadata=dict(md, uid=str(uuid.uuid4()),
                                           resourceVersion=str(st._next_rv()),
                                           creationTimestamp=now_rfc3339()))
            st.events_v1[(ns, md["name"])] = obj
            st.records["events"].append(obj)
            if obj.get("reason") == "Scheduled":
                st.scheduled_events += 1
            st.records["event_writes"].append({"verb": "create", "namespace": ns,
                                               "name": md["name"], "received": time.time()})
        return self.send_json(201, obj)

    def patch_event_v1(self, ns, name):
        """A strategic merge patch (what client-go's recorder sends for a
        series), validated as ValidateEventUpdate does."""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype not in ("application/strategic-merge-patch+json", "application/merge-patch+json"):
            raise ApiError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted media "
                           "types include: application/json-patch+json, application/merge-patch"
                           "+json, application/apply-patch+yaml, application/strategic-merge-patch+json")
        patch = self.body_json()
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "invalid JSON patch")
        st = self.store
        with st.lock:
            old = st.events_v1.get((ns, name))
            if old is None:
                self.refuse_event(st, "patch", ns, name, ApiError(
                    404, "NotFound", 'events.events.k8s.io "%s" not found' % name))
            new = merge_patch(copy.deepcopy(old), patch)
            errs = validate_event_v1_update(new, old)
            if errs:
                self.refuse_event(st, "patch", ns, name, invalid_event(name, errs))
            new["metadata"]["resourceVersion"] = str(st._next_rv())
            old.clear()
            old.update(new)  # the object in records["events"] too
            st.records["event_writes"].append({"verb": "patch", "namespace": ns, "name": name,
                                               "series": new.get("series"),
                                               "received": time.time()})
        return self.send_json(200, old)

    def event_verdict(self, verb, ns, name, errs):
        if errs:
            with self.store.lock:
                self.refuse_event(self.store, verb, ns, name, invalid_event(name, errs))

    @staticmethod
    def refuse_event(st, verb, ns, name, e):
        """Records a refused event write (lock held) and raises e."""
        st.records["event_writes"].append({"verb": verb, "namespace": ns, "name": name,
                                           "received": time.time(), "code": e.code,
                                           "message": e.message})
        raise e

    # ----- delegated authn/authz (TokenReview, SubjectAccessReview) -----
    def review(self, path):
        """The schedext server's delegated checks. Policy (set through
        /_control/authn): "tokens" maps a bearer token to a user
        {"username", "groups"}; "rules" lists {"user" or "group", "path",
        "verb"} that are allowed ("*" matches anything). With no policy
        set, every token is the user "admin" and everything is allowed."""
        body = self.body_json() or {}
        spec = body.get("spec") or {}
        st = self.store
        with st.lock:
            policy = st.authn
            st.records.setdefault("reviews", []).append({"path": path, "spec": {
                k: v for k, v in spec.items() if k != "token"}})
        if path.endswith("tokenreviews"):
            if policy is None:
                user = {"username": "admin", "groups": ["system:masters"]}
            else:
                user = (policy.get("tokens") or {}).get(spec.get("token"))
            status = {"authenticated": user is not None}
            if user is not None:
                status["user"] = user
            return self.send_json(201, dict(body, status=status))
        attrs = spec.get("nonResourceAttributes") or {}
        allowed = policy is None
        for r in (policy or {}).get("rules") or []:
            who = r.get("user") == spec.get("user") or r.get("group") in (spec.get("groups") or [])
            if who and r.get("path") in ("*", attrs.get("path")) and r.get("verb") in ("*", attrs.get("verb")):
                allowed = True
        status = {"allowed": allowed}
        if not allowed:
            status["reason"] = "no RBAC policy matched"
        return self.send_json(201, dict(body, status=status))

    # ----- API -----
    @classmethod
    def verb_key(cls, method, path, q):
        """"GET pods", "WATCH pods", "POST pods/binding", "PATCH pods/status",
        "POST events": what /_control/counts counts requests by."""
        if EVENTS_V1.match(path) or EVENT_V1.match(path):
            return method + " events"
        res = cls.resource_of(path) or path
        parts = [p for p in path.split("/") if p]
        sub = ""
        if res in parts:
            rest = parts[parts.index(res) + 1:]
            if len(rest) >= 2:
                sub = "/" + rest[1]
        if method == "GET" and q.get("watch") in ("1", "true"):
            method = "WATCH"
        return "%s %s%s" % (method, res, sub)

    @staticmethod
    def resource_of(path):
        """The resource a request path names (for the request log)."""
        for prefix in sorted(set(p for p, _, _ in RESOURCES.values()), key=len, reverse=True):
            if path.startswith(prefix + "/"):
                parts = [p for p in path[len(prefix):].split("/") if p]
                if len(parts) >= 3 and parts[0] == "namespaces":
                    parts = parts[2:]
                return PATH_TO_RESOURCE.get((prefix, parts[0])) if parts else None
        return None

    def parse_path(self, path):
        """-> (resource, namespace or None, name or None, subresource or None)"""
        for prefix in sorted(set(p for p, _, _ in RESOURCES.values()), key=len, reverse=True):
            if path == prefix or path.startswith(prefix + "/"):
                parts = [unquote(p) for p in path[len(prefix):].split("/") if p]
                break
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = None
        if len(parts) >= 2 and parts[0] == "namespaces" and len(parts) != 2:
            ns, parts = parts[1], parts[2:]
        res = PATH_TO_RESOURCE.get((prefix, parts[0])) if parts else None
        if res is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = parts[1] if len(parts) > 1 else None
        sub = parts[2] if len(parts) > 2 else None
        if len(parts) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        with self.store.lock:
            if res in self.store.faults["unserved"]:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if res in self.store.faults["forbidden"]:
                raise ApiError(403, "Forbidden", '%s is forbidden: User "test" cannot list resource "%s"' % (res, res))
        return res, ns, name, sub

    def api(self, method, path, q):
        res, ns, name, sub = self.parse_path(path)
        namespaced = RESOURCES[res][2]
        key = (ns or "" if namespaced else "", name)
        if method == "GET" and name is None:
            if q.get("watch", "").lower() not in ("", "0", "false"):
                return self.watch(res, ns, q)
            return self.list(res, ns, q)
        if method == "POST" and res == "pods" and sub == "binding":
            return self.bind(ns, name)
        if method == "PATCH" and res == "pods" and sub == "status":
            return self.patch_status(ns, name)
        if method == "PATCH" and res in ("resourceclaims", "podgroups",
                                         "podgroups.scheduling.x-k8s.io") and sub == "status":
            return self.patch_object(res, key, status_only=True)
        if sub:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        st = self.store
        if method == "GET":
            with st.lock:
                obj = st.objects[res].get(key)
                if obj is None:
                    raise ApiError(404, "NotFound", '%s "%s" not found' % (st.qualified(res), name))
                return self.send_json(200, obj)
        if method == "POST" and name is None:
            body = self.body_json() or {}
            if namespaced:
                body.setdefault("metadata", {})["namespace"] = ns or "default"
            with st.lock:
                obj = st.create(res, body)
                if res == "events":
                    st.records["events"].append(obj)
            return self.send_json(201, obj)
        if method == "PATCH" and name:
            return self.patch_object(res, key)
        if method == "PUT" and name:
            body = self.body_json() or {}
            md = body.setdefault("metadata", {})
            if md.get("name") != name:
                raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)" % (md.get("name"), name))
            if namespaced:
                md["namespace"] = ns
            with st.lock:
                obj = st.update(res, body)
            return self.send_json(200, obj)
        if method == "DELETE" and name:
            body = self.body_json() or {}
            uid = ((body.get("preconditions") or {}).get("uid"))
            with st.lock:
                grace = self.server.controllers.kubelet_grace_ms if res == "pods" else 0
                obj = st.delete(res, key, uid, grace)
                st.records["deletes"].append({"resource": res, "namespace": key[0], "name": name,
                                              "body": body, "seq": st.next_seq()})
            return self.send_json(200, obj)
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    @staticmethod
    def invalid_options(errs):
        """422 as the handlers answer a ListOptions that fails
        ValidateListOptions (apimachinery/pkg/apis/meta/internalversion/
        validation/validation.go)."""
        detail = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        return ApiError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: ' + detail)

    def validate_list(self, q):
        match, rv, cont = (q.get("resourceVersionMatch", ""), q.get("resourceVersion", ""),
                           q.get("continue", ""))
        errs = []
        if match:
            if not rv:
                errs.append("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                            "unless resourceVersion is provided")
            if cont:
                errs.append("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                            "when continue is provided")
            if match not in ("Exact", "NotOlderThan"):
                errs.append('resourceVersionMatch: Unsupported value: "%s": supported values: '
                            '"Exact", "NotOlderThan", ""' % match)
            if match == "Exact" and rv == "0":
                errs.append('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is '
                            'forbidden for resourceVersion "0"')
        if "sendInitialEvents" in q:
            errs.append("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list")
        if errs:
            raise self.invalid_options(errs)

    def validate_watch(self, q):
        match, send = q.get("resourceVersionMatch", ""), q.get("sendInitialEvents")
        errs = []
        with self.store.lock:
            gate_off = self.store.faults["watch_list_off"]
        if send is not None and gate_off:
            errs.append("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for "
                        "watch unless the WatchList feature gate is enabled")
        if send is not None and match != "NotOlderThan":
            errs.append("resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                        "resourceVersionMatch to NotOlderThan")
        if match:
            if send is None:
                errs.append("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                            "for watch unless sendInitialEvents is provided")
            if match != "NotOlderThan":
                errs.append('resourceVersionMatch: Unsupported value: "%s": supported values: '
                            '"NotOlderThan"' % match)
        if errs:
            raise self.invalid_options(errs)

    @staticmethod
    def parse_rv(rv):
        try:
            n = int(rv)
            if n < 0:
                raise ValueError
            return n
        except ValueError:
            raise ApiError(400, "BadRequest", 'invalid resource version "%s"' % rv)

    def too_large(self, want, have):
        return ApiError(504, "Timeout", "Too large resource version: %d, current: %d" % (want, have),
                        details={"causes": [{"reason": "ResourceVersionTooLarge",
                                             "message": "Too large resource version"}]})

    def wait_fresh(self, want):
        """The cacher's waitUntilFreshAndBlock: a read at an RV the cache has
        not seen yet waits for it up to FRESH_WAIT_S, then 504 (lock held)."""
        st = self.store
        end = time.monotonic() + FRESH_WAIT_S
        while st.rv < want and time.monotonic() < end:
            st.lock.wait(end - time.monotonic())
        if st.rv < want:
            raise self.too_large(want, st.rv)

    def list(self, res, ns, q):
        """What kube-apiserver answers for the combination of resourceVersion,
        resourceVersionMatch, limit and continue (the table "Semantics for get
        and list" of the API concepts; cacher.go shouldDelegateList):

        * continue: the next page of the first page's snapshot (410 Expired
          once its RV was compacted); an RV other than "0" with it is a 400;
        * resourceVersion=0 (match unset or NotOlderThan): any state, from
          the watch cache, whole: limit is ignored (unless the resource is in
          the watch_cache_off fault: then from "etcd", paginated);
        * resourceVersion unset: the most recent state, paginated by limit;
        * resourceVersion=N: not older than N from the cache (match unset and
          no limit, or NotOlderThan), blocking up to 3 s for a future N; or
          exactly N (Exact, or match unset with a limit): the state at N from
          the history, 410 Expired when compacted, 504 when in the future.
        """
        st = self.store
        self.validate_list(q)
        limit = int(q.get("limit") or 0)
        cont, rv_q, match = q.get("continue") or "", q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
        sel = q.get("fieldSelector", "")
        if cont and rv_q not in ("", "0"):
            raise ApiError(400, "BadRequest", "specifying resource version is not allowed when using continue")
        want = self.parse_rv(rv_q) if rv_q else None
        with st.lock:
            st.records["lists"] += 1
            if cont and st.take_fault("continue_410"):
                raise ApiError(410, "Expired", EXPIRED_CONTINUE)
            if rv_q and not cont and st.take_fault("list_410"):
                raise ApiError(410, "Expired", EXPIRED_LIST)
            cached = res not in (st.faults["watch_cache_off"] or [])
            if st.faults["list_page_max"]:
                limit = min(limit or 10 ** 9, st.faults["list_page_max"])
            if cont:
                try:
                    tid, off = cont.rsplit(":", 1)
                    rv, items = st.snapshots[tid]
                    off = int(off)
                except (KeyError, ValueError):
                    raise ApiError(410, "Expired", EXPIRED_CONTINUE)
                if int(rv) < st.compacted_rv:
                    st.snapshots.pop(tid, None)
                    raise ApiError(410, "Expired", EXPIRED_CONTINUE)
            else:
                objs = st.objects[res]
                if want == 0 and cached and not st.faults["list_page_max"]:
                    limit = 0  # the watch cache ignores limit for RV=0
                elif want and (match == "Exact" or (not match and limit)):
                    if want > st.rv:
                        raise self.too_large(want, st.rv)
                    objs = st.state_at(res, want)
                    if objs is None:
                        raise ApiError(410, "Expired", EXPIRED_LIST)
                elif want:
                    self.wait_fresh(want)
                    objs = st.objects[res]
                rv = str(want if want and objs is not st.objects[res] else st.rv)
                # Stored objects are never mutated in place: a shallow copy
                # without kind/apiVersion is the item.
                items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                         for k, o in sorted(objs.items())
                         if (ns is None or k[0] == ns) and match_field_selector(o, sel)]
                off, tid = 0, uuid.uuid4().hex
                if limit and limit < len(items):
                    st.snapshots[tid] = (rv, items)
                    while len(st.snapshots) > 64:  # abandoned lists: their tokens expire
                        st.snapshots.pop(next(iter(st.snapshots)))
            page = items[off:off + limit] if limit else items[off:]
            md = {"resourceVersion": rv}
            if limit and off + limit < len(items):
                md["continue"] = "%s:%d" % (tid, off + limit)
                if not sel:  # upstream omits it under a selector
                    md["remainingItemCount"] = len(items) - off - limit
            else:
                st.snapshots.pop(tid, None)
        prefix, kind, _ = RESOURCES[res]
        self.send_json(200, {"kind": kind + "List", "apiVersion": self.api_version(res),
                             "metadata": md, "items": page})

    @staticmethod
    def api_version(res):
        prefix = RESOURCES[res][0]
        return (GROUP_OF[prefix] + "/" if GROUP_OF[prefix] else "") + prefix.rsplit("/", 1)[1]

    def bookmark(self, res, rv, initial_end=False):
        """A BOOKMARK as kube-apiserver sends it: an object of the kind whose
        metadata carries only the resourceVersion (and, closing the initial
        events of a streaming list, the k8s.io/initial-events-end
        annotation; cacher watchCacheInterval / cache_watcher.go)."""
        md = {"resourceVersion": str(rv)}
        if initial_end:
            md["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"type": "BOOKMARK", "object": {"kind": RESOURCES[res][1],
                                               "apiVersion": self.api_version(res),
                                               "metadata": md}}

    # ----- watch -----
    def watch(self, res, ns, q):
        st = self.store
        self.validate_watch(q)
        sel = q.get("fieldSelector", "")
        rv = q.get("resourceVersion", "")
        timeout = float(q.get("timeoutSeconds") or 1800)
        bookmarks = q.get("allowWatchBookmarks", "") == "true"
        send_initial = q.get("sendInitialEvents")
        want = self.parse_rv(rv) if rv else None
        with st.lock:
            st.records["watches"] += 1
            if send_initial == "true":  # a streaming list: the state, as a LIST's
                st.records["lists"] += 1
            if st.take_fault("watch_410_start"):
                raise ApiError(410, "Expired", "too old resource version: %s (%d)" % (rv, st.compacted_rv))
            error_event = st.take_fault("watch_410_event")
            if want and want > st.rv:
                self.wait_fresh(want)
            initial = []
            # Legacy (sendInitialEvents unset): RV unset or 0 starts with the
            # current state as ADDED events; sendInitialEvents=true does so
            # whatever the RV (not older than it), =false never.
            if send_initial == "true" or (send_initial is None and not want):
                initial = [("ADDED", o) for k, o in sorted(st.objects[res].items())
                           if (ns is None or k[0] == ns) and match_field_selector(o, sel)]
                cur = st.rv
            elif not want:
                cur = st.rv
            else:
                cur = want
                if cur < st.compacted_res[res]:
                    error_event = "old"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        conn = self.connection
        with st.lock:
            st.watch_conns.add(conn)
        try:
            if error_event:
                with st.lock:
                    msg = "too old resource version: %s (%d)" % (rv, st.compacted_rv)
                self.write_events([{"type": "ERROR", "object": status_body(410, "Expired", msg)}])
                return self.end_chunks()
            evs = [{"type": t, "object": o} for t, o in initial]
            if send_initial == "true" and bookmarks:
                evs.append(self.bookmark(res, cur, initial_end=True))
            self.write_events(evs)
            self.stream(res, ns, sel, cur, time.monotonic() + timeout, bookmarks)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
        finally:
            with st.lock:
                st.watch_conns.discard(conn)

    def stream(self, res, ns, sel, cur, deadline, bookmarks):
        """Sends every event of res after cur until the deadline. cur moves
        to the store RV after each pass (everything up to it was seen), so
        a live watcher survives compaction; one left behind gets 410."""
        st = self.store
        last_bm = time.monotonic()
        while True:
            evs, dropped = [], False
            with st.lock:
                now = time.monotonic()
                if now >= deadline:
                    break
                if cur >= st.compacted_res[res] and st.last_rv[res] <= cur:
                    st.changed[res].wait(min(0.2, deadline - now))
                if cur < st.compacted_res[res]:
                    dropped = True
                else:
                    # history is in rv order: start after cur, so a wake-up
                    # costs the new events, not the whole history.
                    start = bisect.bisect_right(st.history, cur, key=lambda h: h[0])
                    for rv, r, etype, old, new in itertools.islice(st.history, start, None):
                        if r == res:
                            ev = self.filter_event(etype, old, new, ns, sel)
                            if ev:
                                evs.append(ev)
                    cur = st.rv
                error_prob = st.faults["error_event_prob"]
                compacted = st.compacted_rv
            if dropped:
                self.write_events([{"type": "ERROR", "object": status_body(410, "Expired", "too old resource version: %d (%d)" % (cur, compacted))}])
                return self.end_chunks()
            if evs and st.rand.random() < error_prob * len(evs):
                self.write_events([{"type": "ERROR", "object": status_body(410, "Expired", "too old resource version: %d (%d)" % (cur, compacted))}])
                return self.end_chunks()
            if evs and not self.write_events(evs):
                return
            if bookmarks and time.monotonic() - last_bm >= st.bookmark_interval:
                last_bm = time.monotonic()
                self.write_events([self.bookmark(res, cur)], faults=False)
        self.end_chunks()

    def filter_event(self, etype, old, new, ns, sel):
        def ok(o):
            if o is None:
                return False
            if ns is not None and (o.get("metadata") or {}).get("namespace") != ns:
                return False
            return match_field_selector(o, sel)
        if etype == "ADDED":
            return {"type": "ADDED", "object": new} if ok(new) else None
        if etype == "DELETED":
            return {"type": "DELETED", "object": new} if ok(old) else None
        was, now = ok(old), ok(new)
        if was and now:
            return {"type": "MODIFIED", "object": new}
        if now:
            return {"type": "ADDED", "object": new}
        if was:  # left the selector: DELETED with the previous state at the new RV
            last = copy.deepcopy(old)
            last["metadata"]["resourceVersion"] = new["metadata"]["resourceVersion"]
            return {"type": "DELETED", "object": last}
        return None

    def write_chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_chunks(self):
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def write_events(self, evs, faults=True):
        """Writes events with the configured faults; False when it dropped
        the connection on purpose."""
        st = self.store
        with st.lock:
            f = dict(st.faults) if faults else dict(FAULT_DEFAULTS)
        data = b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in evs)
        if not data:
            return True
        if f["disconnect_prob"] and evs and st.rand.random() < f["disconnect_prob"] * len(evs):
            cut = st.rand.randrange(1, len(data))
            # Never cut exactly after a newline: the point is a torn event.
            while data[cut - 1:cut] == b"\n" and cut > 1:
                cut -= 1
            self.write_chunk(data[:cut])
            self.abort()
            return False
        pieces = [data]
        if f["split_chunks"]:
            pieces, i = [], 0
            while i < len(data):
                n = st.rand.randint(1, 64)
                pieces.append(data[i:i + n])
                i += n
        for p in pieces:
            self.write_chunk(p)
            if f["slow_ms"]:
                time.sleep(f["slow_ms"] / 1000.0)
        return True

    def abort(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise ConnectionResetError("injected disconnect")

    def patch_object(self, res, key, status_only=False):
        """JSON merge patch (RFC 7386); strategic merge patches are applied
        the same way (enough for maps such as annotations and claimRef).
        metadata.resourceVersion in the patch is a precondition, as on the
        real server."""
        st = self.store
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format")
        patch = self.body_json()
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "the patch must be a JSON object")
        with st.lock:
            st.records["patches"].append({"resource": res, "namespace": key[0], "name": key[1],
                                          "type": ctype, "patch": patch})
            old = st.objects[res].get(key)
            if old is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (st.qualified(res), key[1]))
            if status_only and st.take_fault("claim_status_409"):
                # a concurrent writer got there first: new RV, then 409
                st.update(res, copy.deepcopy(old), check_rv=False, owned=True)
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your changes to the latest version and try again' % (st.qualified(res), key[1]))
            uid = (patch.get("metadata") or {}).get("uid")
            if uid and uid != old["metadata"]["uid"]:
                raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: %s, UID in object meta: %s" % (uid, old["metadata"]["uid"]))
            want = (patch.get("metadata") or {}).get("resourceVersion")
            if st.take_fault("conflict_patches") or (
                    want and want != old["metadata"]["resourceVersion"]):
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your changes to the latest version and try again' % (st.qualified(res), key[1]))
            if status_only:  # the status subresource ignores everything else
                patch = {"status": patch.get("status")} if "status" in patch else {}
            new = merge_patch(old, patch)
            new.setdefault("metadata", {})["name"] = key[1]
            obj = st.update(res, new, check_rv=False, owned=True)
        self.send_json(200, obj)

    # ----- pod subresources -----
    def bind(self, ns, name):
        st = self.store
        b = self.body_json() or {}
        with st.lock:
            delay = st.faults["bind_delay_ms"]
        if delay:
            time.sleep(delay / 1000.0)
        md, target = b.get("metadata") or {}, b.get("target") or {}
        with st.lock:
            st.records["bindings"].append(b)
            if md.get("name") != name:
                raise ApiError(400, "BadRequest", "name in URL does not match name in Binding object")
            if target.get("kind", "Node") not in ("", "Node") or not target.get("name"):
                raise ApiError(422, "Invalid", 'Binding.target.kind: Invalid value: "%s": must be empty or \'Node\'' % target.get("kind"))
            pod = st.objects["pods"].get((ns, name))
            if pod is None:
                raise ApiError(404, "NotFound", 'pods "%s" not found' % name)
            pre = 'Operation cannot be fulfilled on pods/binding "%s": ' % name
            if md.get("uid") and md["uid"] != pod["metadata"]["uid"]:
                raise ApiError(409, "Conflict", pre + "Precondition failed: UID in precondition: %s, UID in object meta: %s" % (md["uid"], pod["metadata"]["uid"]))
            if pod["metadata"].get("deletionTimestamp"):
                raise ApiError(409, "Conflict", pre + "pod %s is being deleted, cannot be assigned to a host" % name)
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                raise ApiError(409, "Conflict", pre + 'pod %s is already assigned to node "%s"' % (name, node))
            if (pod.get("spec") or {}).get("schedulingGates"):
                raise ApiError(409, "Conflict", pre + "pod %s has non-empty .spec.schedulingGates" % name)
            # Copy only what changes: stored objects are never mutated.
            new = dict(pod)
            new["spec"] = dict(pod.get("spec") or {}, nodeName=target["name"])
            conds = [c for c in (pod.get("status") or {}).get("conditions", [])
                     if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
            new["status"] = dict(pod.get("status") or {}, conditions=conds)
            st.update("pods", new, check_rv=False, owned=True)
            st.records["accepted_bindings"].append(
                {"namespace": ns, "name": name, "uid": pod["metadata"].get("uid"),
                 "node": target["name"], "received": time.time()})
        self.send_json(201, status_body(201, "", ""))

    def patch_status(self, ns, name):
        st = self.store
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        patch = self.body_json() or {}
        with st.lock:
            st.records["patches"].append({"namespace": ns, "name": name, "type": ctype,
                                          "patch": patch, "seq": st.next_seq()})
            pod = st.objects["pods"].get((ns, name))
            if pod is None:
                raise ApiError(404, "NotFound", 'pods "%s" not found' % name)
            new = copy.deepcopy(pod)
            strategic = ctype == "application/strategic-merge-patch+json"
            if ctype not in ("application/strategic-merge-patch+json", "application/merge-patch+json"):
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format")
            st_patch = patch.get("status") or {}
            status = new.setdefault("status", {})
            for k, v in st_patch.items():
                if k == "conditions" and strategic and isinstance(v, list):
                    conds = status.setdefault("conditions", [])
                    for c in v:
                        for i, old in enumerate(conds):
                            if old.get("type") == c.get("type"):
                                merged = dict(old)
                                merged.update(c)
                                conds[i] = merged
                                break
                        else:
                            conds.append(c)
                elif v is None:
                    status.pop(k, None)
                else:
                    status[k] = v
            obj = st.update("pods", new, check_rv=False)
        self.send_json(200, obj)

    # ----- control -----
    def control(self, method, what, q=None):
        st = self.store
        if what == "counts":
            # Small enough to poll at 20,000 pods (records is not).
            with st.lock:
                ab, ev = st.records["accepted_bindings"], st.records["event_writes"]
                return self.send_json(200, {
                    "requests": dict(st.verb_counts),
                    "accepted_bindings": len(ab),
                    "first_binding": ab[0]["received"] if ab else None,
                    "last_binding": ab[-1]["received"] if ab else None,
                    "event_writes": len(ev),
                    "last_event": ev[-1]["received"] if ev else None,
                    "scheduled_events": st.scheduled_events})
        if what == "requests":
            res = (q or {}).get("resource")
            with st.lock:
                reqs = [dict(r) for r in st.request_log
                        if not res or self.resource_of(r["path"]) == res]
            return self.send_json(200, {"requests": reqs})
        if what == "objects" and method == "POST":
            body = self.body_json() or {}
            ops = body.get("ops") or [body]
            out = []
            with st.lock:
                for op in ops:
                    try:
                        out.append(self.apply_op(op))
                    except ApiError as e:
                        out.append(status_body(e.code, e.reason, e.message))
            return self.send_json(200, {"results": out, "resourceVersion": str(st.rv)})
        if what == "state":
            with st.lock:
                objs = {r: [o for _, o in sorted(d.items())] for r, d in st.objects.items()}
                return self.send_json(200, {"resourceVersion": str(st.rv), "objects": objs})
        if what == "faults":
            if method == "POST":
                body = self.body_json() or {}
                with st.lock:
                    if body.get("reset"):
                        st.faults = copy.deepcopy(FAULT_DEFAULTS)
                    for k, v in body.items():
                        if k in FAULT_DEFAULTS:
                            st.faults[k] = v
            with st.lock:
                return self.send_json(200, st.faults)
        if what == "records":
            with st.lock:
                return self.send_json(200, st.records)
        if what == "compact" and method == "POST":
            with st.lock:
                st.compacted_rv = st.rv
                st.compacted_res = {r: st.rv for r in RESOURCES}
                st.history = []
                st.snapshots.clear()
            return self.send_json(200, {"compactedTo": str(st.compacted_rv)})
        if what == "authn" and method == "POST":
            with st.lock:
                st.authn = self.body_json()
            return self.send_json(200, {})
        if what == "token" and method == "POST":
            body = self.body_json() or {}
            with st.lock:
                st.token = body.get("token")
            return self.send_json(200, {})
        if what == "tokens":
            body = (self.body_json() or {}) if method == "POST" else {}
            with st.lock:
                if method == "POST":
                    if st.exec_tokens is None:
                        st.exec_tokens = {}
                    revoke = body.get("revoke") or []
                    if revoke == "all":
                        st.exec_tokens.clear()
                    else:
                        for t in revoke:
                            st.exec_tokens.pop(t, None)
                    st.exec_tokens.update(body.get("add") or {})
                return self.send_json(200, {"tokens": st.exec_tokens or {},
                                            "unauthorized": st.unauthorized})
        if what == "drop" and method == "POST":
            with st.lock:
                conns = list(st.watch_conns)
            for c in conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return self.send_json(200, {"dropped": len(conns)})
        if what == "controllers":
            ctl = self.server.controllers
            if method == "POST":
                ctl.configure(self.body_json() or {})
            return self.send_json(200, ctl.settings())
        raise ApiError(404, "NotFound", "unknown control endpoint")

    def apply_op(self, op):
        st = self.store
        obj = op.get("object") or {}
        res = kind_resource(obj)
        if res is None:
            raise ApiError(400, "BadRequest", "unknown kind %r" % obj.get("kind"))
        kind = op.get("op", "upsert")
        key = st.key_of(res, dict(obj, metadata=dict(obj.get("metadata") or {}, namespace=(obj.get("metadata") or {}).get("namespace") or ("default" if RESOURCES[res][2] else ""))))
        if kind == "create":
            return st.create(res, obj)
        if kind == "update":
            return st.update(res, obj, check_rv=False)
        if kind == "upsert":
            if key in st.objects[res]:
                return st.update(res, obj, check_rv=False)
            return st.create(res, obj)
        if kind == "delete":
            return st.delete(res, key)
        raise ApiError(400, "BadRequest", "unknown op %r" % kind)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass  # TLS handshake failures and resets are expected in tests


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca")
    ap.add_argument("--history", type=int, default=1000)
    ap.add_argument("--bookmark-interval", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-pv-controller", action="store_true")
    ap.add_argument("--no-provisioner", action="store_true")
    ap.add_argument("--provisioners", help="comma-separated provisioner names to serve")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    srv = Server((a.host, a.port), Handler)
    srv.verbose = a.v
    srv.store = Store(a.history, a.bookmark_interval)
    srv.store.token = a.token
    srv.store.rand = random.Random(a.seed)
    srv.controllers = Controllers(srv.store, not a.no_pv_controller, not a.no_provisioner,
                                  a.provisioners.split(",") if a.provisioners else None)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        if a.client_ca:
            ctx.load_verify_locations(a.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("listening on %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
