/* How an informer lists its kind (informer_int.h): the parameters of
 * each LIST, the streaming list, the decoding of what they return, and
 * what follows when the server refuses.
 *
 * LISTs are asked for as client-go's reflector and pager ask for them
 * (k8s.io/client-go/tools/cache/reflector.go, Reflector.list and
 * relistResourceVersion; tools/pager/pager.go, ListPager.list), because
 * what they cost the API server depends on the parameters:
 *
 *  - resourceVersion=0 (the first LIST): "any state". kube-apiserver
 *    answers from its watch cache, in memory, and ignores limit there, so
 *    the whole collection comes back in one response without touching
 *    etcd. Cost: one serialisation of the collection from memory.
 *  - resourceVersion=<last seen> without limit (a relist after the watch
 *    broke): "not older than" what the cache already holds, also from the
 *    watch cache, never travelling back in time (as "0" could on an HA
 *    control plane whose caches lag). Cost: as above.
 *  - no resourceVersion, limit=500 and continue (the fallback once the
 *    server refused the RV with 410 Expired or "Too large resource
 *    version"): a consistent read. The watch cache is bypassed: every page
 *    is a range read from etcd plus a quorum read, 100 round trips for
 *    50,000 pods. Cost: the most expensive of the three, bounded in memory
 *    per page.
 *
 * A server that paginated a resourceVersion=0 list (its watch cache is
 * off) keeps getting limit=500 on relists. A continue token that expired
 * mid-list (410) is followed by one unpaginated LIST at the requested RV
 * (ListPager.FullListIfExpired).
 *
 * The streaming list replaces the LIST where client-go's WatchListClient
 * feature is on, as it is by default since client-go 1.35
 * (k8s.io/client-go/features/known_features.go), so in kube-scheduler 1.35
 * and later; like client-go it reads KUBE_FEATURE_WatchListClient=false
 * from the environment to turn it off. A WATCH with sendInitialEvents=true,
 * resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true
 * (Reflector.watchList) streams every object as ADDED from the watch cache,
 * then a BOOKMARK annotated k8s.io/initial-events-end, and goes on as the
 * kind's watch. Cost: the cheapest for the API server, which writes the
 * objects one event at a time from its cache instead of building one
 * response holding the whole collection, and needs no second request to
 * start watching. A server that refuses it (4xx: the WatchList feature off,
 * or too old) is asked with LISTs from then on; a stream that ends before
 * its bookmark falls back to a LIST for that round, as ListAndWatch does.
 * */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informer_int.h"
#include "schedext/decode.h"
#include "schedext/kube.h"
#include "schedext/vec.h"

static int objs_push(struct objs *o, struct sx_object *obj);
static enum result apply_list(struct informer *inf);
static void trim_after_sync(struct sx_informers *p);

/* A list item (a LIST page's or a streaming list's ADDED object) decoded
 * into the list so far; an undecodable one is skipped. SX_ENOMEM when
 * memory ran out (the list is incomplete: list again). */
static int collect(struct informer *inf, const cJSON *item, struct objs *out)
{
	struct sx_object o;
	struct sx_error err = {0};
	char ebuf[600];
	int rc = sx_decode_object_as(item, inf->d->kind, &o, &err);

	if (rc == SX_ENOMEM || err.code == SX_ENOMEM)
		return SX_ENOMEM;
	if (rc != 0) {
		sx_log(1, "%s: skipping undecodable item %s: %s", inf->d->resource,
		       sx__inf_meta_str(item, "name") ? sx__inf_meta_str(item, "name") : "?",
		       sx_error_string(&err, ebuf, sizeof(ebuf)));
		return 0;
	}
	if (objs_push(out, &o) != 0) {
		sx_object_unref(&o);
		return SX_ENOMEM;
	}
	return 0;
}

/* The bookmark that ends a streaming list's initial events carries the
 * annotation k8s.io/initial-events-end: "true" (metav1.InitialEventsAnnotationKey). */
static bool initial_events_end(const cJSON *obj)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, "annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "k8s.io/initial-events-end");

	return cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
}

/* An event of a streaming list before its initial events ended: ADDED
 * objects are the list, kept aside and applied at once (as a LIST's
 * pages) when the closing bookmark arrives; from then on the stream is
 * the kind's watch. The server sends nothing else before that bookmark. */
int sx__inf_initial_event(struct informer *inf, struct xfer *x, const char *t, const cJSON *obj)
{
	const char *rv = sx__inf_meta_str(obj, "resourceVersion");

	if (strcmp(t, "ADDED") == 0)
		return collect(inf, obj, &inf->objs);
	if (strcmp(t, "BOOKMARK") == 0 && !initial_events_end(obj))
		return 0;
	if (strcmp(t, "BOOKMARK") != 0 || !rv || !*rv || strlen(rv) >= sizeof(inf->list_rv)) {
		sx_log(1, "%s: unexpected %s event in the initial events", inf->d->resource, t);
		x->result = RES_BROKEN;
		return SX_EINVAL;
	}
	snprintf(inf->list_rv, sizeof(inf->list_rv), "%s", rv);
	if (apply_list(inf) != RES_OK) {
		x->result = RES_BROKEN;
		return SX_EIO;
	}
	inf->list_rv[0] = '\0';
	inf->rv_unavailable = false;
	inf->phase = PH_WATCH;
	atomic_store(&inf->synced, true);
	trim_after_sync(inf->parent);
	return 0;
}

/* Drops the objects and empties o (it is reused by the next LIST). */
void sx__inf_objs_free(struct objs *o)
{
	for (uint32_t i = 0; i < o->n; i++)
		sx_object_unref(&o->v[i]);
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static int objs_push(struct objs *o, struct sx_object *obj)
{
	if (sx_vec_reserve(o->v, o->cap, o->n + 1, 64) < 0)
		return SX_ENOMEM;
	o->v[o->n++] = *obj;
	return 0;
}

/* A page's items: the elements of the split "items" text one at a time
 * (json_items.c), or of the whole tree when the body was parsed whole. */
struct page_items {
	const cJSON *next;	/* tree: the next element */
	struct sx_json_items s; /* split: the scanner over items */
	bool split;
};

/* 1 with *item (and *owned, to delete, when split), 0 after the last, <0. */
static int page_next(struct page_items *pi, const cJSON **item, cJSON **owned)
{
	int rc;

	*owned = NULL;
	if (!pi->split) {
		*item = pi->next;
		pi->next = pi->next ? pi->next->next : NULL;
		return *item ? 1 : 0;
	}
	rc = sx_json_items_next(&pi->s, owned, NULL);
	*item = *owned;
	return rc < 0 ? -1 : rc;
}

/* The page's head (everything but the split items; the whole tree when
 * the scanner refused the body: cJSON's verdict then) and its items. */
static cJSON *page_open(const struct sx_buf *body, struct page_items *pi)
{
	struct sx_json_list l;
	cJSON *head;

	memset(pi, 0, sizeof(*pi));
	if (sx_json_list_split(body->data, body->len, SX_JSON_DEPTH_CAP, &l) != 0)
		return cJSON_ParseWithLength(body->data, body->len);
	head = l.head;
	if (l.items) {
		pi->split = true;
		sx_json_items_start(&pi->s, l.items, l.items_len);
	}
	return head;
}

/* Decodes one page item by item (the page never is one tree); fills
 * *cont with the continue token (owned) and the list RV into list_rv when
 * it is the first page. */
static enum result decode_page(struct informer *inf, const struct sx_buf *body, struct objs *out,
			       char **cont, char *list_rv, size_t rvlen)
{
	struct page_items pi;
	cJSON *list = page_open(body, &pi), *owned;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *item;
	const char *c = sx__inf_meta_str(list, "continue"),
		   *rv = sx__inf_meta_str(list, "resourceVersion");
	enum result r = RES_OK;
	int got;

	if (!cJSON_IsObject(list) || !(cJSON_IsArray(items) || !items || cJSON_IsNull(items))) {
		sx_log(1, "%s: malformed list response", inf->d->resource);
		cJSON_Delete(list);
		return RES_BROKEN;
	}
	if (rv && !list_rv[0])
		snprintf(list_rv, rvlen, "%s", rv);
	*cont = c && *c ? sx_strdup(c) : NULL;
	if (c && *c && !*cont) { /* the next pages would be lost */
		cJSON_Delete(list);
		return RES_BROKEN;
	}
	pi.next = cJSON_IsArray(items) ? items->child : NULL;
	while ((got = page_next(&pi, &item, &owned)) == 1) {
		if (collect(inf, item, out) != 0)
			got = -1;
		cJSON_Delete(owned);
		if (got < 0)
			break;
	}
	if (got < 0) /* out of memory: list again */
		r = RES_BROKEN;
	cJSON_Delete(list);
	return r;
}

/* The RV a LIST asks for (Reflector.relistResourceVersion): "0" before
 * anything was listed, the last RV seen after, "" once that was refused. */
static const char *relist_rv(const struct informer *inf)
{
	if (inf->rv_unavailable)
		return "";
	return inf->rv[0] ? inf->rv : "0";
}

/* Whether the next LIST request carries limit=500 (Reflector.list's choice
 * of pager.PageSize): always for a continuation, and for "0" or "" (the
 * watch cache ignores limit for "0"; "" is the paginated etcd read); not for
 * a last-seen RV unless the server paginated before, so that the relist is
 * answered from the watch cache instead of etcd. */
static bool list_limited(const struct informer *inf, const char *rv)
{
	if (inf->cont)
		return true;
	if (inf->full_list)
		return false;
	return inf->paginated || !rv[0] || strcmp(rv, "0") == 0;
}

static void put_escaped(struct sx_buf *b, const char *key, const char *val)
{
	char *esc = curl_easy_escape(NULL, val, 0);

	sx_buf_printf(b, "%s%s", key, esc ? esc : "");
	curl_free(esc);
}

/* A LIST request: its page's continue token alone (the pager clears the RV
 * on continuations: "specifying resource version is not allowed when using
 * continue"), else the relist RV. */
static void list_query(const struct informer *inf, struct sx_buf *b)
{
	const char *rv = relist_rv(inf);
	bool limited = list_limited(inf, rv);

	sx_buf_putc(b, '?');
	if (limited)
		sx_buf_puts(b, "limit=500");
	if (inf->cont) {
		put_escaped(b, "&continue=", inf->cont);
		return;
	}
	if (rv[0])
		put_escaped(b, limited ? "&resourceVersion=" : "resourceVersion=", rv);
}

/* A streaming list (Reflector.watchList) asks for the last RV seen, "" (a
 * consistent read, served from the watch cache once it is fresh) before
 * anything was seen or once the RV was refused (rewatchResourceVersion). */
static void watch_list_query(const struct informer *inf, struct sx_buf *b)
{
	sx_buf_printf(b,
		      "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
		      "&allowWatchBookmarks=true&timeoutSeconds=%d",
		      300 + rand() % 300);
	if (!inf->rv_unavailable && inf->rv[0])
		put_escaped(b, "&resourceVersion=", inf->rv);
}

char *sx__inf_path(const struct informer *inf)
{
	const struct kind_desc *d = inf->d;
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_puts(&b, d->path);
	if (inf->phase == PH_WATCH_LIST) {
		watch_list_query(inf, &b);
	} else if (inf->phase == PH_WATCH) {
		sx_buf_printf(&b, "?watch=1&allowWatchBookmarks=true&timeoutSeconds=%d",
			      300 + rand() % 300);
		put_escaped(&b, "&resourceVersion=", inf->rv);
	} else {
		list_query(inf, &b);
	}
	if (d->field_selector) /* after at least one parameter (list_query) */
		sx_buf_printf(&b, "&fieldSelector=%s", d->field_selector);
	return sx_buf_take(&b, NULL);
}

static void log_listed(struct informer *inf, uint32_t n)
{
	bool was = false;

	if (atomic_compare_exchange_strong(&inf->parent->connected_logged, &was, true))
		sx_log(1, "connected to %s", sx_kube_server(inf->parent->kube));
	sx_log(inf->listed_once ? 2 : 1, "listed %u %s", n, inf->d->resource);
	inf->listed_once = true;
}

/* The next transfer lists the kind again: a streaming list where the
 * feature is on and the server has not refused it, else a LIST. */
void sx__inf_relist(struct informer *inf)
{
	bool wl = inf->parent->watch_list && !inf->wl_refused && !inf->wl_fallback;

	inf->phase = wl ? PH_WATCH_LIST : PH_LIST;
}

/* The last LIST page arrived: the whole list replaces the kind's objects. */
static enum result apply_list(struct informer *inf)
{
	if (sx_cache_replace_all(inf->parent->cache, inf->d->kind, inf->objs.v, inf->objs.n) ==
	    SX_ENOMEM) {
		/* partly applied: list again after a back-off */
		sx_log(1, "%s: out of memory applying the list", inf->d->resource);
		free(inf->objs.v);
		memset(&inf->objs, 0, sizeof(inf->objs));
		return RES_BROKEN;
	}
	log_listed(inf, inf->objs.n);
	free(inf->objs.v);
	memset(&inf->objs, 0, sizeof(inf->objs));
	snprintf(inf->rv, sizeof(inf->rv), "%s", inf->list_rv);
	return RES_OK;
}

/* Once every kind's first LIST is in the cache, the pages' document trees
 * are gone: give their memory back, or it stays resident for good. */
static void trim_after_sync(struct sx_informers *p)
{
	if (p->trimmed || !sx_informers_synced(p))
		return;
	p->trimmed = true;
	malloc_trim(0);
}

/* A 504 whose cause is ResourceVersionTooLarge: the RV asked for is ahead
 * of the server (a restored etcd, another API server). The reflector
 * treats it as 410 (reflector.go, isTooLargeResourceVersionError). */
bool sx__inf_too_large_rv(const struct xfer *x)
{
	return x->status == 504 && x->body.data &&
	       memmem(x->body.data, x->body.len, "ResourceVersionTooLarge", 23);
}

/* The LIST was refused with 410 Expired or a too-large RV: what
 * client-go does next. A continuation expired: one unpaginated LIST at
 * the requested RV (ListPager.list, FullListIfExpired). The RV itself was
 * refused: at once again with "" (Reflector.list sets
 * isLastSyncResourceVersionUnavailable). False when both were tried. */
static bool list_refused(struct informer *inf, bool continuation)
{
	if (continuation && !inf->full_list) {
		inf->full_list = true;
	} else if (!inf->rv_unavailable) {
		inf->rv_unavailable = true;
		inf->full_list = false;
	} else {
		return false;
	}
	sx_log(2, "%s: list expired; listing again%s", inf->d->resource,
	       inf->full_list ? " unpaginated" : " from a consistent read");
	sx__inf_objs_free(&inf->objs);
	inf->list_rv[0] = '\0';
	inf->wake_at = 0;
	return true;
}

void sx__inf_list_done(struct informer *inf, CURLcode rc)
{
	struct xfer *x = &inf->x;
	bool continuation = inf->cont != NULL;
	bool asked_any = !continuation && strcmp(relist_rv(inf), "0") == 0;
	char *next = NULL;
	enum result r;

	if (rc != CURLE_OK)
		r = RES_RETRY;
	else if (sx__inf_too_large_rv(x))
		r = RES_GONE;
	else if (x->status != 200)
		r = sx__inf_status_result(inf, x->status, &x->body);
	else
		r = decode_page(inf, &x->body, &inf->objs, &next, inf->list_rv,
				sizeof(inf->list_rv));
	free(inf->cont);
	inf->cont = next;
	if (r == RES_GONE && list_refused(inf, continuation))
		return;
	if (r == RES_OK && inf->cont) {
		/* Reflector.list: paginatedResult for an RV=0 list means the
		 * server has no watch cache for this kind: keep paging. */
		if (asked_any)
			inf->paginated = true;
		inf->wake_at = 0; /* the next page at once */
		return;
	}
	if (r == RES_OK)
		r = apply_list(inf);
	inf->list_rv[0] = '\0';
	inf->full_list = false;
	if (r == RES_OK) {
		inf->rv_unavailable = false;
		inf->wl_fallback = false;
		inf->phase = PH_WATCH;
		inf->wake_at = 0;
		atomic_store(&inf->synced, true);
		trim_after_sync(inf->parent);
		return;
	}
	sx__inf_objs_free(&inf->objs);
	free(inf->cont);
	inf->cont = NULL;
	if (r == RES_UNSERVED) {
		atomic_store(&inf->synced, true);
		trim_after_sync(inf->parent);
		inf->wake_at = sx_now_s() + UNSERVED_RETRY_S;
	} else {
		sx__inf_backoff(inf);
	}
}

/* A streaming list ended before its initial events did, or never began.
 * As Reflector.ListAndWatch: LIST instead this round ("making progress is
 * better than deadlocking"), consistently when the RV was refused (410,
 * too large). A server that refused the parameters (400/422: the
 * WatchList feature is off, or the server predates it) gets LISTs from
 * then on. Connection failures, 429 and 5xx back off and try again. */
void sx__inf_watch_list_done(struct informer *inf, CURLcode rc)
{
	struct xfer *x = &inf->x;
	enum result r;

	sx__inf_objs_free(&inf->objs);
	inf->list_rv[0] = '\0';
	if (x->status == 0)
		r = RES_RETRY;
	else if (sx__inf_too_large_rv(x) || x->result == RES_GONE)
		r = RES_GONE;
	else if (x->status != 200)
		r = sx__inf_status_result(inf, x->status, &x->body);
	else
		r = RES_BROKEN; /* ended early, or broken */
	if (r == RES_RETRY) {
		sx__inf_backoff(inf);
		return;
	}
	if (r == RES_UNSERVED) {
		atomic_store(&inf->synced, true);
		trim_after_sync(inf->parent);
		inf->wake_at = sx_now_s() + UNSERVED_RETRY_S;
		return;
	}
	if (r == RES_GONE) {
		inf->rv_unavailable = true;
	} else if (x->status != 200) {
		char msg[256];

		sx_log(1, "%s: the server refused the streaming list (%s); listing instead",
		       inf->d->resource,
		       sx_kube_status_message(x->body.data, x->body.len, x->status, msg,
					      sizeof(msg)));
		inf->wl_refused = true;
	}
	inf->wl_fallback = true;
	inf->phase = PH_LIST;
	inf->wake_at = 0;
}

int sx_informer_replay_list(struct sx_cache *cache, enum sx_kind kind, const char *data, size_t len,
			    char *rv, size_t rvlen)
{
	struct sx_informers p = {.cache = cache};
	struct informer inf = {.parent = &p, .d = sx__inf_desc_of(kind)};
	struct sx_buf body = {.data = (char *)data, .len = len};
	struct objs objs = {0};
	char list_rv[sizeof(inf.rv)] = "", *cont = NULL;
	enum result r;
	int rc;

	if (!inf.d)
		return SX_EINVAL;
	r = decode_page(&inf, &body, &objs, &cont, list_rv, sizeof(list_rv));
	free(cont);
	if (r != RES_OK) {
		sx__inf_objs_free(&objs);
		return SX_EINVAL;
	}
	rc = sx_cache_replace_all(cache, kind, objs.v, objs.n);
	free(objs.v);
	if (rv && rvlen)
		snprintf(rv, rvlen, "%s", list_rv);
	return rc;
}
