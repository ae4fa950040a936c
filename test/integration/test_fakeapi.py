#!/usr/bin/env python3
"""The fake API server (test/fakeapi/fakeapi.py) answers LIST and WATCH as
kube-apiserver does, for what schedext's informers rely on
(docs/fake-api-server.md): pagination and its expiry, resourceVersion and
resourceVersionMatch on list and watch, "too old" watches, bookmarks, the
streaming list (sendInitialEvents) and watch timeouts. Each case is what a
client of a real server would see."""
import json
import os
import sys
import time
from http.client import HTTPConnection
from urllib.parse import urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, check, http, run_tests  # noqa: E402

EXPIRED_CONTINUE = ("The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.")


def pod(name, label="a"):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                        "labels": {"v": label}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}


def seeded(tmp, n=7, *args):
    api = FakeApi(tmp, *args)
    out = api.apply([{"op": "create", "object": pod("p%d" % i)} for i in range(n)])
    return api, int(out["resourceVersion"])


def get(api, path, **q):
    url = "http://127.0.0.1:%d%s" % (api.port, path)
    if q:
        url += "?" + urlencode(q)
    return http("GET", url, timeout=30)


def names(lst):
    return [o["metadata"]["name"] for o in lst["items"]]


class Watch:
    """One watch request; events() reads newline-delimited events until the
    stream ends or `until` returns true for the events so far."""

    def __init__(self, api, path, **q):
        self.conn = HTTPConnection("127.0.0.1", api.port, timeout=10)
        self.conn.request("GET", path + "?" + urlencode(dict(q, watch="1")))
        self.resp = self.conn.getresponse()
        self.status = self.resp.status

    def events(self, until=None, timeout=10):
        out, end = [], time.time() + timeout
        while time.time() < end:
            line = self.resp.readline()
            if not line:
                self.ended = True
                return out
            out.append(json.loads(line))
            if until and until(out):
                break
        self.ended = False
        return out

    def close(self):
        self.conn.close()


# ---------------------------------------------------------------- list
def test_pagination(tmp):
    api, rv = seeded(tmp)
    try:
        code, p1 = get(api, "/api/v1/pods", limit=3)
        check(code == 200 and names(p1) == ["p0", "p1", "p2"], "page 1: %r" % (p1,))
        md = p1["metadata"]
        check(md.get("continue") and md.get("remainingItemCount") == 4,
              "page 1 has continue and remainingItemCount 4: %r" % md)
        # a write between pages does not show: every page is of one snapshot
        api.apply([{"op": "create", "object": pod("p0a")}])
        code, p2 = get(api, "/api/v1/pods", limit=3, **{"continue": md["continue"]})
        code3, p3 = get(api, "/api/v1/pods", limit=3, **{"continue": p2["metadata"]["continue"]})
        check(names(p2) == ["p3", "p4", "p5"] and names(p3) == ["p6"],
              "pages 2 and 3 from the first page's snapshot: %r %r" % (names(p2), names(p3)))
        check(p2["metadata"]["resourceVersion"] == md["resourceVersion"] == str(rv),
              "every page carries the snapshot's RV")
        check("continue" not in p3["metadata"], "the last page has no continue")
        code, err = get(api, "/api/v1/pods", limit=3, resourceVersion="5",
                        **{"continue": md["continue"]})
        check(code == 400 and "specifying resource version is not allowed when using continue"
              in err.get("message", ""), "continue with a resourceVersion: 400 (%r)" % (err,))
        # expiry: the snapshot's RV was compacted away
        code, p1 = get(api, "/api/v1/pods", limit=3)
        api.control("compact", {})
        code, err = get(api, "/api/v1/pods", limit=3, **{"continue": p1["metadata"]["continue"]})
        check(code == 410 and err.get("reason") == "Expired" and err.get("code") == 410
              and err.get("kind") == "Status" and err.get("message") == EXPIRED_CONTINUE,
              "an expired continue token: 410 Expired with upstream's message (%r)" % (err,))
        code, fresh = get(api, "/api/v1/pods", limit=3)
        check(code == 200 and fresh["metadata"].get("continue"), "a fresh list works again")
    finally:
        api.stop()


def test_list_resource_versions(tmp):
    api, rv = seeded(tmp)
    try:
        code, l0 = get(api, "/api/v1/pods", limit=3, resourceVersion="0")
        check(code == 200 and len(l0["items"]) == 7 and "continue" not in l0["metadata"],
              "resourceVersion=0: the whole list from the watch cache, limit ignored")
        api.control("faults", {"watch_cache_off": ["pods"]})
        code, l0 = get(api, "/api/v1/pods", limit=3, resourceVersion="0")
        check(len(l0["items"]) == 3 and l0["metadata"].get("continue"),
              "resourceVersion=0 without a watch cache: paginated")
        api.control("faults", {"reset": True})
        code, lu = get(api, "/api/v1/pods", limit=3)
        check(len(lu["items"]) == 3 and lu["metadata"]["resourceVersion"] == str(rv),
              "resourceVersion unset: the most recent state, paginated")
        # history after rv: p0 deleted, p7 created, p1 relabelled
        api.apply([{"op": "delete", "object": pod("p0")},
                   {"op": "create", "object": pod("p7")},
                   {"op": "update", "object": pod("p1", "b")}])
        for q in ({"resourceVersionMatch": "Exact"}, {"limit": "100"}):
            code, ex = get(api, "/api/v1/pods", resourceVersion=str(rv), **q)
            p1 = [o for o in ex.get("items", []) if o["metadata"]["name"] == "p1"]
            check(code == 200 and names(ex) == ["p%d" % i for i in range(7)] and
                  p1 and p1[0]["metadata"]["labels"] == {"v": "a"} and
                  ex["metadata"]["resourceVersion"] == str(rv),
                  "exact (%r): the state at %d: %r" % (q, rv, ex))
        code, nt = get(api, "/api/v1/pods", resourceVersion=str(rv))
        check(code == 200 and "p0" not in names(nt) and "p7" in names(nt) and
              int(nt["metadata"]["resourceVersion"]) == rv + 3,
              "resourceVersion=N without limit: not older than N (the current state)")
        code, nt = get(api, "/api/v1/pods", resourceVersion=str(rv),
                       resourceVersionMatch="NotOlderThan")
        check(code == 200 and int(nt["metadata"]["resourceVersion"]) == rv + 3,
              "NotOlderThan: the current state")
        t0 = time.time()
        code, err = get(api, "/api/v1/pods", resourceVersion=str(rv + 100))
        causes = (err.get("details") or {}).get("causes") or [{}]
        check(code == 504 and err.get("reason") == "Timeout" and
              causes[0].get("reason") == "ResourceVersionTooLarge" and
              "Too large resource version" in err.get("message", "") and
              2.5 < time.time() - t0 < 10,
              "a future RV: the cache waits ~3 s, then 504 ResourceVersionTooLarge (%r)" % (err,))
        api.control("compact", {})
        code, err = get(api, "/api/v1/pods", resourceVersion=str(rv),
                        resourceVersionMatch="Exact")
        check(code == 410 and err.get("reason") == "Expired" and
              err.get("message") == "The resourceVersion for the provided list is too old.",
              "exact at a compacted RV: 410 Expired (%r)" % (err,))
        for q, words in (({"resourceVersionMatch": "Exact"},
                          "resourceVersionMatch is forbidden unless resourceVersion is provided"),
                         ({"resourceVersionMatch": "Exact", "resourceVersion": "0"},
                          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
                         ({"resourceVersionMatch": "Newest", "resourceVersion": "1"},
                          'Unsupported value: "Newest"'),
                         ({"sendInitialEvents": "true"},
                          "sendInitialEvents is forbidden for list")):
            code, err = get(api, "/api/v1/pods", **q)
            check(code == 422 and err.get("reason") == "Invalid" and
                  err.get("message", "").startswith('ListOptions.meta.k8s.io "" is invalid: ')
                  and words in err.get("message", ""), "%r: 422 Invalid (%r)" % (q, err))
        code, err = get(api, "/api/v1/pods", resourceVersion="abc")
        check(code == 400, "a resourceVersion that is no number: 400 (%r)" % (err,))
    finally:
        api.stop()


# ---------------------------------------------------------------- watch
def test_watch_too_old(tmp):
    api, rv = seeded(tmp)
    try:
        api.apply([{"op": "create", "object": pod("late")}])
        api.control("compact", {})
        w = Watch(api, "/api/v1/pods", resourceVersion=str(rv))
        evs = w.events(timeout=5)
        w.close()
        obj = evs[0]["object"] if evs else {}
        check(w.status == 200 and len(evs) == 1 and evs[0]["type"] == "ERROR" and w.ended,
              "a watch from a compacted RV: 200, one ERROR event, end (%r)" % (evs,))
        check(obj.get("kind") == "Status" and obj.get("code") == 410 and
              obj.get("reason") == "Expired" and
              obj.get("message", "").startswith("too old resource version: %d (" % rv),
              "the ERROR event is a Status 410 Expired (%r)" % (obj,))
        w = Watch(api, "/api/v1/pods", resourceVersion=str(rv + 1))
        api.apply([{"op": "create", "object": pod("later")}])
        evs = w.events(until=lambda e: e, timeout=5)
        w.close()
        check([e["type"] for e in evs] == ["ADDED"] and
              evs[0]["object"]["metadata"]["name"] == "later",
              "a watch from the compaction point on is served (%r)" % (evs,))
    finally:
        api.stop()


def test_bookmarks(tmp):
    api, rv = seeded(tmp, 3, "--bookmark-interval", "0.3")
    try:
        w = Watch(api, "/api/v1/pods", resourceVersion=str(rv), allowWatchBookmarks="true")
        evs = w.events(until=lambda e: any(x["type"] == "BOOKMARK" for x in e), timeout=5)
        w.close()
        bm = [e["object"] for e in evs if e["type"] == "BOOKMARK"]
        check(bm and bm[0] == {"kind": "Pod", "apiVersion": "v1",
                               "metadata": {"resourceVersion": str(rv)}},
              "a BOOKMARK carries only the kind and metadata.resourceVersion (%r)" % (bm,))
        w = Watch(api, "/apis/apps/v1/replicasets", resourceVersion=str(rv),
                  allowWatchBookmarks="true")
        evs = w.events(until=lambda e: e, timeout=5)
        w.close()
        check(evs and evs[0]["object"].get("apiVersion") == "apps/v1" and
              evs[0]["object"].get("kind") == "ReplicaSet",
              "a bookmark names its group's apiVersion (%r)" % (evs[:1],))
        w = Watch(api, "/api/v1/pods", resourceVersion=str(rv), timeoutSeconds="2")
        evs = w.events(timeout=5)
        w.close()
        check(w.ended and not any(e["type"] == "BOOKMARK" for e in evs),
              "no BOOKMARK without allowWatchBookmarks (%r)" % (evs,))
    finally:
        api.stop()


def test_streaming_list(tmp):
    api, rv = seeded(tmp, 3)
    try:
        w = Watch(api, "/api/v1/pods", sendInitialEvents="true",
                  resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true")
        evs = w.events(until=lambda e: any(x["type"] == "BOOKMARK" for x in e), timeout=5)
        check([e["type"] for e in evs] == ["ADDED"] * 3 + ["BOOKMARK"],
              "sendInitialEvents: ADDED for each object, then a BOOKMARK (%r)" %
              [e["type"] for e in evs])
        bm = evs[-1]["object"] if evs else {}
        check(bm.get("metadata") == {"resourceVersion": str(rv),
                                     "annotations": {"k8s.io/initial-events-end": "true"}},
              "the bookmark closes the initial events at the list's RV (%r)" % (bm,))
        api.apply([{"op": "update", "object": pod("p1", "b")}])
        more = w.events(until=lambda e: e, timeout=5)
        w.close()
        check([e["type"] for e in more] == ["MODIFIED"], "then the changes (%r)" % (more,))
        for q, words in (({"sendInitialEvents": "true"},
                          "sendInitialEvents requires setting resourceVersionMatch to "
                          "NotOlderThan"),
                         ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
                          "resourceVersionMatch is forbidden for watch unless "
                          "sendInitialEvents is provided")):
            code, err = get(api, "/api/v1/pods", watch="1", **q)
            check(code == 422 and words in err.get("message", ""),
                  "watch %r: 422 (%r)" % (q, err))
    finally:
        api.stop()


def test_watch_timeout(tmp):
    api, rv = seeded(tmp, 1)
    try:
        t0 = time.time()
        w = Watch(api, "/api/v1/pods", resourceVersion=str(rv), timeoutSeconds="1")
        w.events(timeout=10)
        took = time.time() - t0
        w.close()
        check(w.ended and 0.9 < took < 4, "timeoutSeconds=1 ends the watch after ~1 s (%.1f s)"
              % took)
    finally:
        api.stop()


def test_request_log(tmp):
    api, rv = seeded(tmp, 1)
    try:
        get(api, "/api/v1/pods", limit=1, resourceVersion="0")
        get(api, "/api/v1/namespaces/default/pods", limit=2)
        # The fake records "done" after the reply is written, so the client
        # may read the log first (seen once under a loaded make test).
        end = time.time() + 5
        while True:
            reqs = api.control("requests?resource=pods")["requests"]
            if all(r["done"] is not None for r in reqs) or time.time() > end:
                break
            time.sleep(0.02)
        check([r["query"] for r in reqs] == [{"limit": "1", "resourceVersion": "0"},
                                             {"limit": "2"}] and
              all(r["status"] == 200 and r["t"] <= r["done"] for r in reqs),
              "the request log has each request's parameters and times (%r)" % (reqs,))
    finally:
        api.stop()


def test_graceful_pod_delete(tmp):
    """kubeletGraceMs: a bound pod's DELETE marks it terminating (MODIFIED
    with deletionTimestamp), a kubelet removes it later (DELETED); an
    unbound pod goes at once."""
    api = FakeApi(tmp)
    try:
        bound = dict(pod("bound"), spec=dict(pod("bound")["spec"], nodeName="n1"))
        out = api.apply([{"op": "create", "object": bound},
                         {"op": "create", "object": pod("unbound")}])
        api.control("controllers", {"kubeletGraceMs": 400})
        w = Watch(api, "/api/v1/pods", resourceVersion=out["resourceVersion"])
        base = "http://127.0.0.1:%d/api/v1/namespaces/default/pods/" % api.port
        code, first = http("DELETE", base + "bound", {})
        check(code == 200 and first["metadata"].get("deletionTimestamp") and
              first["metadata"].get("deletionGracePeriodSeconds") == 1,
              "a bound pod's DELETE answers it terminating: %r %r" % (code, first))
        code, _ = http("DELETE", base + "unbound", {})
        evs = w.events(until=lambda e: len(e) >= 3, timeout=5)
        w.close()
        check([(e["type"], e["object"]["metadata"]["name"]) for e in evs] ==
              [("MODIFIED", "bound"), ("DELETED", "unbound"), ("DELETED", "bound")],
              "terminating, the unbound one gone, then the kubelet's removal: %r"
              % [(e["type"], e["object"]["metadata"]["name"]) for e in evs])
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_fakeapi.py", (
        test_pagination, test_list_resource_versions, test_watch_too_old, test_bookmarks,
        test_streaming_list, test_watch_timeout, test_request_log, test_graceful_pod_delete)))
