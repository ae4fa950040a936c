#!/usr/bin/env python3
"""How the informers list, as the API server sees it (issues 29 and 31),
against test/fakeapi/fakeapi.py and its request log (/_control/requests).
With KUBE_FEATURE_WatchListClient=false (client-go's switch) they LIST:

(a) the pages of one LIST follow each other at once (no second-long wait
    between pages) and 50,000 pods in pages of 500 are listed in seconds;
(b) the first LIST of each kind asks as client-go's reflector does:
    resourceVersion=0&limit=500, answered whole from the watch cache;
    a relist after a watch expired asks for the last RV seen, without limit;
(c) the fallbacks: a refused RV (410) lists again without RV, paginated (a
    consistent read); an expired continue token (410) lists again at the
    requested RV without limit (ListPager.FullListIfExpired).
By default (client-go 1.35+'s default) they stream the list:
(d) one WATCH per kind with sendInitialEvents=true, no LIST, 50,000 pods
    in seconds, the same stream then carrying the changes;
(e) a server that refuses it (422) gets LISTs; a 410 makes the fallback
    LIST a consistent one.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import FakeApi, Serve, check, run_tests, write_kubeconfig  # noqa: E402

POD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def node(name):
    return {"kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1000"},
                       "capacity": {"cpu": "64", "memory": "256Gi", "pods": "1000"}}}


def pod(i, nodes):
    return {"kind": "Pod",
            "metadata": {"name": "p-%05d" % i, "namespace": "ns-%d" % (i % 7),
                         "labels": {"app": "a-%d" % (i % 50)}},
            "spec": {"nodeName": "n-%d" % (i % nodes),
                     "containers": [{"name": "c", "image": "registry.example/app:%d" % (i % 9),
                                     "resources": {"requests": {"cpu": "10m",
                                                                "memory": "16Mi"}}}]},
            "status": {"phase": "Running"}}


def cluster(tmp, npods, nnodes=20, faults=None):
    """A fake API server holding nnodes nodes and npods bound pods, and a
    kubeconfig for it. Bookmarks about once a minute, as kube-apiserver's
    cacher sends them (bookmarkFrequency): frequent ones would wake the
    informers' poll and hide a stall between pages."""
    api = FakeApi(tmp, "--bookmark-interval", "60")
    if faults:
        api.control("faults", faults)
    api.apply([{"op": "create", "object": node("n-%d" % i)} for i in range(nnodes)])
    for lo in range(0, npods, 5000):
        api.apply([{"op": "create", "object": pod(i, nnodes)}
                   for i in range(lo, min(npods, lo + 5000))])
    kc = os.path.join(tmp, "kubeconfig")
    write_kubeconfig(kc, "http://127.0.0.1:%d" % api.port)
    return api, kc


def by_path(api):
    """Every API request so far by collection path."""
    out = {}
    for r in api.control("requests")["requests"]:
        out.setdefault(r["path"], []).append(r)
    return out


def serve(tmp, kc, watch_list=True):
    """schedext serve with client-go's WatchListClient switch set."""
    old = os.environ.get("KUBE_FEATURE_WatchListClient")
    os.environ["KUBE_FEATURE_WatchListClient"] = "true" if watch_list else "false"
    try:
        return Serve(tmp, kc, "schedext")
    finally:
        if old is None:
            del os.environ["KUBE_FEATURE_WatchListClient"]
        else:
            os.environ["KUBE_FEATURE_WatchListClient"] = old


def requests(api, resource):
    return api.control("requests?resource=" + resource)["requests"]


def lists(reqs):
    return [r for r in reqs if r["method"] == "GET" and "watch" not in r["query"]]


def watches(reqs):
    return [r for r in reqs if r["method"] == "GET" and "watch" in r["query"]]


def wait_for(pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


# ---------------------------------------------------------------- (a)
def test_pages_without_stall(tmp):
    """100 pages of 500 pods (the watch cache off for pods, so the server
    paginates): each page is asked for as soon as the previous one arrived.
    With the informer loop's old one-second poll between pages, the gaps
    were ~1 s each and start-up took over 100 s."""
    npods = 50000
    api, kc = cluster(tmp, npods, faults={"watch_cache_off": ["pods"]})
    t0 = time.time()
    sx = serve(tmp, kc, watch_list=False)
    try:
        ready = sx.wait_ready(timeout=45)
        took = time.time() - t0
        check(ready, "ready after listing 50,000 pods")
        check("listed %d pods" % npods in sx.logtext(), "every pod listed")
        pages = lists(requests(api, "pods"))
        check(len(pages) == 100, "100 pages of 500 (got %d)" % len(pages))
        check(pages and pages[0]["query"] == {"limit": "500", "resourceVersion": "0",
                                              "fieldSelector": POD_SELECTOR},
              "the first page asks resourceVersion=0&limit=500: %r" % (pages[:1],))
        check(all(set(p["query"]) == {"limit", "continue", "fieldSelector"} and
                  p["query"]["limit"] == "500" for p in pages[1:]),
              "the next pages carry limit and continue only (no resourceVersion)")
        # the time from a page's response to the next page's request
        gaps = [b["t"] - a["done"] for a, b in zip(pages, pages[1:])]
        mean = sum(gaps) / len(gaps) if gaps else 99
        print("50,000 pods in %d pages: ready after %.1f s; gap between pages: mean %.0f ms, "
              "max %.0f ms" % (len(pages), took, mean * 1000, max(gaps or [99]) * 1000))
        check(mean < 0.25, "pages follow each other at once (mean gap %.3f s)" % mean)
        check(max(gaps or [99]) < 0.9, "no page waits a poll period (max gap %.3f s)" %
              max(gaps or [99]))
        # 100 stalls of ~1 s take 100 s; without them this is ~2 s (~10 s
        # under sanitizers), so 30 s leaves room for a loaded 2-core machine.
        check(took < 30, "ready within 30 s (took %.1f s)" % took)
        check(sx.stop() == 0, "pages: clean exit")
    finally:
        api.stop()


def test_list_from_watch_cache(tmp):
    """The same 50,000 pods from the watch cache: one request, whole."""
    npods = 50000
    api, kc = cluster(tmp, npods)
    t0 = time.time()
    sx = serve(tmp, kc, watch_list=False)
    try:
        check(sx.wait_ready(timeout=150), "ready after listing 50,000 pods from the cache")
        took = time.time() - t0
        check("listed %d pods" % npods in sx.logtext(), "every pod listed")
        ls = lists(requests(api, "pods"))
        print("50,000 pods from the watch cache: %d request(s), ready after %.1f s" %
              (len(ls), took))
        check(len(ls) == 1, "one LIST request (got %d)" % len(ls))
        check(ls and ls[0]["query"] == {"limit": "500", "resourceVersion": "0",
                                        "fieldSelector": POD_SELECTOR},
              "asked with resourceVersion=0&limit=500: %r" % (ls[:1],))
        check(took < 60, "ready within 60 s (took %.1f s)" % took)
        check(sx.stop() == 0, "cache: clean exit")
    finally:
        api.stop()


# ---------------------------------------------------------------- (b)
def test_relist_after_expired_watch(tmp):
    """A watch that ends with an ERROR 410 event: the kind relists at the
    RV it last saw, without limit (served from the watch cache, never older
    than what the informer holds), then watches from the new list's RV."""
    api, kc = cluster(tmp, 1200, nnodes=5)
    sx = serve(tmp, kc, watch_list=False)
    try:
        check(sx.wait_ready(), "ready")
        for r in ("nodes", "pods", "services"):
            ls = lists(requests(api, r))
            check(len(ls) == 1 and ls[0]["query"].get("resourceVersion") == "0"
                  and ls[0]["query"].get("limit") == "500",
                  "%s: one first LIST at resourceVersion=0&limit=500: %r" % (r, ls))
        before = by_path(api)
        api.control("faults", {"watch_410_event": 1})
        api.control("drop", {})

        def relisted():  # and answered
            return [p for p, rs in by_path(api).items()
                    if len(lists(rs)) > len(lists(before.get(p, []))) and lists(rs)[-1]["done"]]
        check(wait_for(relisted, 10), "a kind relisted after its watch expired")
        for p in relisted():
            rv = watches(before[p])[-1]["query"]["resourceVersion"]
            ls = lists(by_path(api)[p])[len(lists(before[p])):]
            check(ls[0]["query"].get("resourceVersion") == rv and "limit" not in ls[0]["query"],
                  "%s: relist at the last RV seen (%s), no limit: %r" % (p, rv, ls[0]["query"]))
            check(ls[0]["status"] == 200, "%s: relist answered: %r" % (p, ls[0]))
            check(wait_for(lambda: watches(by_path(api)[p])[-1]["t"] > ls[0]["t"], 10),
                  "%s: watches again after the relist" % p)
        check(sx.stop() == 0, "relist: clean exit")
    finally:
        api.stop()


# ---------------------------------------------------------------- (c)
def test_refused_rv_falls_back(tmp):
    """The server refuses the first LIST's resourceVersion (410 Expired):
    at once a consistent read, no resourceVersion, limit=500 and continue."""
    api, kc = cluster(tmp, 1200, nnodes=5, faults={"list_410": 1, "watch_cache_off": ["pods"]})
    sx = serve(tmp, kc, watch_list=False)
    try:
        check(sx.wait_ready(), "ready despite the refused RV")
        paths = {p: lists(rs) for p, rs in by_path(api).items()}
        refused = [p for p, ls in paths.items() if ls and ls[0]["status"] == 410]
        check(len(refused) == 1, "one kind's first LIST was refused: %r" % refused)
        for p in refused:
            ls = paths[p]
            check(len(ls) >= 2 and ls[1]["query"].get("limit") == "500"
                  and "resourceVersion" not in ls[1]["query"] and ls[1]["status"] == 200,
                  "%s: then limit=500 without resourceVersion: %r" % (p, [l["query"] for l in ls]))
            check(ls[1]["t"] - ls[0]["done"] < 0.5, "%s: retried at once" % p)
        check("listed 1200 pods" in sx.logtext(), "every pod listed")
        check(sx.stop() == 0, "refused: clean exit")
    finally:
        api.stop()


def test_expired_continue(tmp):
    """A continue token that expired mid-list (410 Expired): one LIST at the
    requested RV without limit, as client-go's pager does; every pod is
    there, none twice."""
    api, kc = cluster(tmp, 1200, nnodes=5,
                      faults={"watch_cache_off": ["pods"], "continue_410": 1})
    sx = serve(tmp, kc, watch_list=False)
    try:
        check(sx.wait_ready(), "ready despite the expired continue token")
        ls = lists(requests(api, "pods"))
        qs = [(l["query"].get("resourceVersion"), l["query"].get("limit"),
               "continue" in l["query"], l["status"]) for l in ls]
        check(qs == [("0", "500", False, 200), (None, "500", True, 410), ("0", None, False, 200)],
              "page, expired page, full list at RV 0: %r" % qs)
        check("listed 1200 pods" in sx.logtext(), "every pod listed once")
        pods = sx.cache()["pods"]
        check(len(pods) == 1200, "1200 pods in the cache (%d)" % len(pods))
        check(sx.stop() == 0, "continue: clean exit")
    finally:
        api.stop()


# ---------------------------------------------------------------- (d)
STREAM_QUERY = {"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                "allowWatchBookmarks": "true"}


def test_streaming_list(tmp):
    npods = 50000
    api, kc = cluster(tmp, npods)
    t0 = time.time()
    sx = serve(tmp, kc)
    try:
        check(sx.wait_ready(timeout=45), "ready after streaming 50,000 pods")
        took = time.time() - t0
        check("listed %d pods" % npods in sx.logtext(), "every pod listed")
        paths = by_path(api)
        check(all(not lists(rs) for rs in paths.values()), "no LIST request at all")
        check(all(len(rs) == 1 for rs in paths.values()), "one request per kind: %r" %
              {p: len(rs) for p, rs in paths.items() if len(rs) != 1})
        pods = paths.get("/api/v1/pods", [{}])[0].get("query", {})
        want = dict(STREAM_QUERY, fieldSelector=POD_SELECTOR)
        check({k: v for k, v in pods.items() if k != "timeoutSeconds"} == want and
              pods.get("timeoutSeconds"), "pods: %r" % pods)
        print("50,000 pods streamed: ready after %.1f s" % took)
        check(took < 30, "ready within 30 s (took %.1f s)" % took)
        api.apply([{"op": "create", "object": pod(npods + 1, 20)}])
        check(wait_for(lambda: any(p["name"] == "p-%05d" % (npods + 1)
                                   for p in sx.cache()["pods"]), 10),
              "a pod created after the initial events reaches the cache")
        check(len(requests(api, "pods")) == 1, "through the same stream")
        check(sx.stop() == 0, "stream: clean exit")
    finally:
        api.stop()


# ---------------------------------------------------------------- (e)
def test_streaming_list_refused(tmp):
    api, kc = cluster(tmp, 1200, nnodes=5, faults={"watch_list_off": True})
    sx = serve(tmp, kc)
    try:
        check(sx.wait_ready(), "ready with LISTs")
        rs = requests(api, "pods")
        shape = [("watch" in r["query"], r["query"].get("sendInitialEvents"),
                  r["query"].get("resourceVersion"), r["status"]) for r in rs[:3]]
        check(shape[:2] == [(True, "true", None, 422), (False, None, "0", 200)],
              "refused streaming list (422), then LIST at RV 0: %r" % shape)
        check("listed 1200 pods" in sx.logtext(), "every pod listed")
        check("refused the streaming list" in sx.logtext(), "the refusal is logged")
        # a relist after an expired watch LISTs again (no new streaming try)
        before = by_path(api)
        api.control("faults", {"watch_410_event": 1})
        api.control("drop", {})
        check(wait_for(lambda: any(len(lists(rs)) > len(lists(before.get(p, [])))
                                   for p, rs in by_path(api).items()), 10), "relisted")
        after = by_path(api)
        check(all(len([r for r in rs if r["query"].get("sendInitialEvents")]) == 1
                  for rs in after.values()), "the refused streaming list is not tried again")
        check(sx.stop() == 0, "refused stream: clean exit")
    finally:
        api.stop()


def test_streaming_list_expired(tmp):
    """A streaming list answered 410 (its RV is gone): this round LISTs,
    consistently (no resourceVersion, limit=500), then streams again."""
    api, kc = cluster(tmp, 1200, nnodes=5, faults={"watch_410_start": 1})
    sx = serve(tmp, kc)
    try:
        check(sx.wait_ready(), "ready")
        paths = by_path(api)
        gone = [p for p, rs in paths.items() if rs[0]["status"] == 410]
        check(len(gone) == 1, "one kind's streaming list got 410: %r" % gone)
        for p in gone:
            q = paths[p][1]["query"] if len(paths[p]) > 1 else {}
            check("watch" not in q and q.get("limit") == "500" and "resourceVersion" not in q,
                  "%s: then a consistent paginated LIST: %r" % (p, q))
        check(sx.stop() == 0, "expired stream: clean exit")
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(run_tests("test_informer_list.py", (
        test_refused_rv_falls_back, test_expired_continue, test_relist_after_expired_watch,
        test_list_from_watch_cache, test_pages_without_stall, test_streaming_list,
        test_streaming_list_refused, test_streaming_list_expired)))
