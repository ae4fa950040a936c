/* Informers: one thread for every watched kind (libcurl's multi
 * interface) keeping the cache equal to the API server's state (upstream
 * client-go tools/cache/reflector.go, Reflector.ListAndWatch).
 *
 * Per kind: paginated LIST -> sx_cache_replace_all -> WATCH from the list's
 * resourceVersion with bookmarks; ADDED/MODIFIED upsert, DELETED delete,
 * BOOKMARK only advances the resume point. A clean end of the stream
 * re-watches at once; 410 (HTTP or ERROR event) re-lists; connection
 * failures back off (0.8 s doubling to 30 s, jitter up to +100 %).
 *
 * Ownership: struct sx_informers owns its thread, the multi handle, one
 * easy handle per kind and each transfer's buffers. The kube client and the cache are
 * borrowed and must outlive sx_informers_stop(). */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "schedext/buf.h"
#include "schedext/decode.h"
#include "schedext/informer.h"
#include "schedext/kube.h"

#define MAX_EVENT_BYTES ((size_t)16 << 20)
#define MAX_LIST_BYTES ((size_t)1 << 30)
#define MAX_ERROR_BODY (64 * 1024)
#define WATCHDOG_NS (180ull * 1000000000ull)
#define BACKOFF_MIN 0.8
#define BACKOFF_MAX 30.0
#define UNSERVED_RETRY_S 60.0

struct kind_desc {
	enum sx_kind kind;
	const char *path;
	const char *resource;
	const char *field_selector; /* already percent-encoded, or NULL */
};

static const struct kind_desc kinds[] = {
	{ SX_KIND_NODE, "/api/v1/nodes", "nodes", NULL },
	{ SX_KIND_POD, "/api/v1/pods", "pods",
	  "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed" },
	{ SX_KIND_NAMESPACE, "/api/v1/namespaces", "namespaces", NULL },
	{ SX_KIND_SERVICE, "/api/v1/services", "services", NULL },
	{ SX_KIND_REPLICATION_CONTROLLER, "/api/v1/replicationcontrollers",
	  "replicationcontrollers", NULL },
	{ SX_KIND_REPLICA_SET, "/apis/apps/v1/replicasets", "replicasets", NULL },
	{ SX_KIND_STATEFUL_SET, "/apis/apps/v1/statefulsets", "statefulsets", NULL },
	{ SX_KIND_PDB, "/apis/policy/v1/poddisruptionbudgets", "poddisruptionbudgets", NULL },
	{ SX_KIND_PV, "/api/v1/persistentvolumes", "persistentvolumes", NULL },
	{ SX_KIND_PVC, "/api/v1/persistentvolumeclaims", "persistentvolumeclaims", NULL },
	{ SX_KIND_STORAGE_CLASS, "/apis/storage.k8s.io/v1/storageclasses", "storageclasses",
	  NULL },
	{ SX_KIND_CSI_NODE, "/apis/storage.k8s.io/v1/csinodes", "csinodes", NULL },
	{ SX_KIND_DEVICE_CLASS, "/apis/resource.k8s.io/v1/deviceclasses", "deviceclasses", NULL },
	{ SX_KIND_RESOURCE_SLICE, "/apis/resource.k8s.io/v1/resourceslices", "resourceslices",
	  NULL },
	{ SX_KIND_RESOURCE_CLAIM, "/apis/resource.k8s.io/v1/resourceclaims", "resourceclaims",
	  NULL },
	{ SX_KIND_CLAIM_TEMPLATE, "/apis/resource.k8s.io/v1/resourceclaimtemplates",
	  "resourceclaimtemplates", NULL },
	{ SX_KIND_CSI_DRIVER, "/apis/storage.k8s.io/v1/csidrivers", "csidrivers", NULL },
	{ SX_KIND_CSI_STORAGE_CAPACITY, "/apis/storage.k8s.io/v1/csistoragecapacities",
	  "csistoragecapacities", NULL },
	{ SX_KIND_VOLUME_ATTACHMENT, "/apis/storage.k8s.io/v1/volumeattachments",
	  "volumeattachments", NULL },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

unsigned sx_informer_nkinds(void)
{
	return NKINDS;
}

const char *sx_informer_kind_path(unsigned i, const char **field_selector)
{
	*field_selector = kinds[i].field_selector;
	return kinds[i].path;
}

/* Outcome of one LIST or WATCH. */
enum result {
	RES_OK = 0,      /* list applied / watch ended cleanly */
	RES_GONE,        /* 410: re-list */
	RES_UNSERVED,    /* 404/403 on the collection */
	RES_RETRY,       /* connection failure, 429, 5xx: back off, same RV */
	RES_BROKEN,      /* bad data, other errors: back off, re-list */
	RES_STOPPED,
};

/* Per-transfer state shared with curl callbacks. */
struct xfer {
	struct informer *inf;
	long status;
	bool watch;
	struct sx_buf body;        /* LIST body, or error body */
	struct sx_line_buf lines;  /* WATCH events */
	enum result result;
	unsigned long events;
	uint64_t last_data_ns;
};

/* LIST pages decoded so far (applied at once with the last page). */
struct objs {
	struct sx_object *v;
	uint32_t n, cap;
};

enum phase { PH_LIST, PH_WATCH };

/* One watched kind: a small state machine driven by the informers'
 * thread. Between transfers it waits until wake_at (back-off). */
struct informer {
	struct sx_informers *parent;
	const struct kind_desc *d;
	CURL *h;
	struct curl_slist *hdrs;
	bool busy;               /* h is in the multi handle */
	enum phase phase;        /* the current or next transfer */
	double wake_at;          /* start no transfer before (sx_now_s()) */
	struct xfer x;           /* the current transfer */
	struct objs objs;        /* LIST pages so far */
	char *cont;              /* the next LIST page's continue token */
	char list_rv[128];       /* the LIST's resourceVersion */
	uint64_t watch_t0;
	char rv[128];            /* resume point */
	char ebuf[CURL_ERROR_SIZE];
	atomic_bool synced;
	bool listed_once;
	bool unserved_logged;
	double backoff;
};

struct sx_informers {
	struct sx_kube *kube;
	struct sx_cache *cache;
	atomic_bool stop;
	CURLM *multi;
	pthread_t thread;
	bool started;
	atomic_ulong restarts;
	atomic_bool connected_logged;
	bool trimmed;           /* malloc_trim after the first full sync */
	struct informer inf[NKINDS];
};

/* ---------- line buffer ---------- */

void sx_line_buf_init(struct sx_line_buf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->max = max;
}

void sx_line_buf_free(struct sx_line_buf *lb)
{
	free(lb->data);
	memset(lb, 0, sizeof(*lb));
}

static int line_append(struct sx_line_buf *lb, const char *p, size_t n)
{
	if (lb->len + n > lb->max)
		return SX_ETOOBIG;
	if (lb->len + n + 1 > lb->cap) {
		size_t cap = lb->cap ? lb->cap : 4096;
		char *d;

		while (cap < lb->len + n + 1)
			cap *= 2;
		d = realloc(lb->data, cap);
		if (!d)
			return SX_ENOMEM;
		lb->data = d;
		lb->cap = cap;
	}
	memcpy(lb->data + lb->len, p, n);
	lb->len += n;
	lb->data[lb->len] = '\0';
	return 0;
}

int sx_line_buf_feed(struct sx_line_buf *lb, const char *data, size_t n, sx_line_fn fn,
		     void *ctx)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		int rc = line_append(lb, data, take);

		if (rc)
			return rc;
		if (!nl)
			return 0;
		data += take + 1;
		n -= take + 1;
		if (lb->len > 0 && lb->data[lb->len - 1] == '\r')
			lb->data[--lb->len] = '\0';
		if (lb->len > 0) {
			size_t len = lb->len;

			lb->len = 0;
			rc = fn(ctx, lb->data, len);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* ---------- helpers ---------- */

static bool stopping(const struct informer *inf)
{
	return atomic_load(&inf->parent->stop);
}

static const char *meta_str(const cJSON *obj, const char *key)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void set_rv(struct informer *inf, const char *rv)
{
	if (rv && *rv && strlen(rv) < sizeof(inf->rv))
		snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
}

static int delete_key(struct informer *inf, const cJSON *obj)
{
	const char *name = meta_str(obj, "name"), *ns = meta_str(obj, "namespace");
	sx_str nsid = SX_STR_EMPTY;

	if (!name)
		return SX_EINVAL;
	if (ns && *ns) {
		nsid = sx_intern_lookup_n(ns, strlen(ns));
		if (nsid == SX_STR_INVALID)
			return SX_ENOENT; /* never interned: cannot be cached */
	}
	return sx_cache_delete(inf->parent->cache, inf->d->kind, nsid, name);
}

/* Decodes and upserts; an undecodable object is dropped from the cache so
 * a stale copy does not linger. Returns SX_ENOMEM when memory ran out
 * (decoding or applying): the event is lost, so the stream is broken and
 * the informer must re-list rather than carry on without it. */
static int upsert(struct informer *inf, const cJSON *obj)
{
	struct sx_object o;
	struct sx_error err = { 0 };
	char ebuf[600];
	int rc = sx_decode_object(obj, sx_kind_name(inf->d->kind), &o, &err);

	if (rc == SX_ENOMEM || err.code == SX_ENOMEM)
		return SX_ENOMEM;
	if (rc != 0) {
		sx_log(1, "%s: cannot decode %s/%s: %s", inf->d->resource,
		       meta_str(obj, "namespace") ? meta_str(obj, "namespace") : "",
		       meta_str(obj, "name") ? meta_str(obj, "name") : "?",
		       sx_error_string(&err, ebuf, sizeof(ebuf)));
		return delete_key(inf, obj) == SX_ENOMEM ? SX_ENOMEM : 0;
	}
	return sx_cache_upsert(inf->parent->cache, &o) == SX_ENOMEM ? SX_ENOMEM : 0;
}

/* ---------- watch events ---------- */

static enum result error_event(struct informer *inf, const cJSON *obj)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
	const char *m = cJSON_IsString(msg) ? msg->valuestring : "";

	if (cJSON_IsNumber(code) && code->valuedouble == 410) {
		sx_log(2, "%s: watch expired (%s); re-listing", inf->d->resource, m);
		return RES_GONE;
	}
	sx_log(1, "%s: watch error: %s", inf->d->resource, m);
	if (cJSON_IsNumber(code) && (code->valuedouble == 429 || code->valuedouble >= 500))
		return RES_RETRY;
	return RES_BROKEN;
}

static int on_event(void *ctx, char *line, size_t len)
{
	struct xfer *x = ctx;
	struct informer *inf = x->inf;
	cJSON *ev = cJSON_ParseWithLength(line, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
	int rc = 0;

	if (!t || !cJSON_IsObject(obj)) {
		sx_log(1, "%s: malformed watch event", inf->d->resource);
		x->result = RES_BROKEN;
		rc = SX_EINVAL;
	} else if (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0) {
		rc = upsert(inf, obj);
		if (rc == 0)
			set_rv(inf, meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "DELETED") == 0) {
		rc = delete_key(inf, obj) == SX_ENOMEM ? SX_ENOMEM : 0;
		if (rc == 0)
			set_rv(inf, meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "BOOKMARK") == 0) {
		set_rv(inf, meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "ERROR") == 0) {
		x->result = error_event(inf, obj);
		rc = SX_EIO;
	} else {
		sx_log(2, "%s: ignoring watch event type %s", inf->d->resource, t);
	}
	if (rc == SX_ENOMEM) {
		sx_log(1, "%s: out of memory applying a watch event; re-listing",
		       inf->d->resource);
		x->result = RES_BROKEN;
	}
	x->events++;
	cJSON_Delete(ev);
	return rc;
}

/* ---------- transfers ---------- */

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	size_t len = size * n;

	x->last_data_ns = sx_now_ns();
	if (x->status == 0)
		curl_easy_getinfo(x->inf->h, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->watch && x->status == 200) {
		int rc = sx_line_buf_feed(&x->lines, data, len, on_event, x);

		if (rc == SX_ETOOBIG || rc == SX_ENOMEM) {
			sx_log(1, "%s: watch event over %zu bytes", x->inf->d->resource,
			       (size_t)MAX_EVENT_BYTES);
			x->result = RES_BROKEN;
		}
		return rc < 0 ? 0 : len;
	}
	if (x->body.len + len > (x->status == 200 ? MAX_LIST_BYTES : MAX_ERROR_BODY))
		return 0;
	sx_buf_put(&x->body, data, len);
	return x->body.failed ? 0 : len;
}

/* Aborts the transfer on stop or after WATCHDOG_NS without any data. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = ctx;

	if (stopping(x->inf))
		return 1;
	return sx_now_ns() - x->last_data_ns > WATCHDOG_NS ? 1 : 0;
}

static bool tls_failure(CURLcode rc)
{
	return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
	       rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CONNECT_ERROR;
}

/* TLS problems are configuration errors: say so plainly, at level 0. */
static void log_transport(struct informer *inf, const struct xfer *x, CURLcode rc,
			  const char *ebuf)
{
	const char *detail = ebuf[0] ? ebuf : curl_easy_strerror(rc);

	if (tls_failure(rc))
		sx_log(0, "%s: TLS with %s failed: x509: certificate verification failed (%s)",
		       inf->d->resource, sx_kube_server(inf->parent->kube), detail);
	else
		sx_log(x->watch ? 2 : 1, "%s: %s: %s", inf->d->resource,
		       x->watch ? "watch" : "list", detail);
}

/* Maps a non-200 HTTP status to what to do next. */
static enum result status_result(struct informer *inf, long status, struct sx_buf *body)
{
	char msg[256];

	if (status == 401)
		sx_kube_invalidate_token(inf->parent->kube);
	if (status == 410)
		return RES_GONE;
	if (status == 404 || status == 403) {
		if (!inf->unserved_logged)
			sx_log(0, "%s: %s; continuing without it", inf->d->resource,
			       sx_kube_status_message(body->data, body->len, status, msg,
						      sizeof(msg)));
		inf->unserved_logged = true;
		return RES_UNSERVED;
	}
	sx_log(2, "%s: HTTP %ld: %s", inf->d->resource, status,
	       sx_kube_status_message(body->data, body->len, status, msg, sizeof(msg)));
	if (status == 401 || status == 429 || status >= 500)
		return RES_RETRY;
	return RES_BROKEN;
}

static void xfer_init(struct xfer *x, struct informer *inf, bool watch)
{
	memset(x, 0, sizeof(*x));
	x->inf = inf;
	x->watch = watch;
	sx_buf_init(&x->body);
	sx_line_buf_init(&x->lines, MAX_EVENT_BYTES);
}

static void xfer_free(struct xfer *x)
{
	sx_buf_free(&x->body);
	sx_line_buf_free(&x->lines);
}

/* ---------- LIST ---------- */

/* Drops the objects and empties o (it is reused by the next LIST). */
static void objs_free(struct objs *o)
{
	for (uint32_t i = 0; i < o->n; i++)
		sx_object_unref(&o->v[i]);
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static int objs_push(struct objs *o, struct sx_object *obj)
{
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? o->cap * 2 : 64;
		struct sx_object *v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return SX_ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = *obj;
	return 0;
}

/* A page's items: the elements of the split "items" text one at a time
 * (json_items.c), or of the whole tree when the body was parsed whole. */
struct page_items {
	const cJSON *next;        /* tree: the next element */
	struct sx_json_items s;   /* split: the scanner over items */
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
	const char *c = meta_str(list, "continue"), *rv = meta_str(list, "resourceVersion");
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
		struct sx_object o;
		struct sx_error err = { 0 };
		char ebuf[600];
		int rc = sx_decode_object(item, sx_kind_name(inf->d->kind), &o, &err);

		if (rc != 0) {
			sx_log(1, "%s: skipping undecodable item %s: %s", inf->d->resource,
			       meta_str(item, "name") ? meta_str(item, "name") : "?",
			       sx_error_string(&err, ebuf, sizeof(ebuf)));
		} else if (objs_push(out, &o) != 0) {
			sx_object_unref(&o);
			got = -1;
		}
		cJSON_Delete(owned);
		if (got < 0)
			break;
	}
	if (got < 0) /* out of memory: list again */
		r = RES_BROKEN;
	cJSON_Delete(list);
	return r;
}

static char *list_path(const struct kind_desc *d, const char *cont, bool watch, const char *rv)
{
	struct sx_buf b;
	char *esc = NULL;

	sx_buf_init(&b);
	sx_buf_puts(&b, d->path);
	if (watch) {
		sx_buf_printf(&b, "?watch=1&allowWatchBookmarks=true&timeoutSeconds=%d",
			      300 + rand() % 300);
		esc = curl_easy_escape(NULL, rv, 0);
		sx_buf_printf(&b, "&resourceVersion=%s", esc ? esc : "");
	} else {
		sx_buf_puts(&b, "?limit=500");
		if (cont) {
			esc = curl_easy_escape(NULL, cont, 0);
			sx_buf_printf(&b, "&continue=%s", esc ? esc : "");
		}
	}
	curl_free(esc);
	if (d->field_selector)
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

/* ---------- the engine: every kind on one thread (curl multi) ---------- */

static void schedule_backoff(struct informer *inf)
{
	inf->wake_at = sx_now_s() + inf->backoff * (1.0 + (double)rand() / RAND_MAX);
	inf->backoff *= 2;
	if (inf->backoff > BACKOFF_MAX)
		inf->backoff = BACKOFF_MAX;
}

/* Starts the informer's next transfer (a LIST page or a WATCH); false
 * when it could not be set up (then it backs off). */
static bool start_transfer(struct informer *inf)
{
	struct sx_informers *p = inf->parent;
	bool watch = inf->phase == PH_WATCH;
	char *path = list_path(inf->d, watch ? NULL : inf->cont, watch, inf->rv);
	struct sx_error err = { 0 };

	xfer_init(&inf->x, inf, watch);
	inf->x.result = RES_OK;
	curl_easy_reset(inf->h);
	if (!path || sx_kube_setup_handle(p->kube, inf->h, path, &inf->hdrs, &err) != 0) {
		free(path);
		xfer_free(&inf->x);
		return false;
	}
	free(path);
	inf->ebuf[0] = '\0';
	curl_easy_setopt(inf->h, CURLOPT_HTTPHEADER, inf->hdrs);
	curl_easy_setopt(inf->h, CURLOPT_TIMEOUT, watch ? 700L : 300L);
	curl_easy_setopt(inf->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(inf->h, CURLOPT_WRITEDATA, &inf->x);
	curl_easy_setopt(inf->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(inf->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(inf->h, CURLOPT_XFERINFODATA, &inf->x);
	curl_easy_setopt(inf->h, CURLOPT_ERRORBUFFER, inf->ebuf);
	curl_easy_setopt(inf->h, CURLOPT_PRIVATE, inf);
	sx_kube_throttle(p->kube, &p->stop);
	inf->x.last_data_ns = inf->watch_t0 = sx_now_ns();
	if (curl_multi_add_handle(p->multi, inf->h) != CURLM_OK) {
		curl_slist_free_all(inf->hdrs);
		inf->hdrs = NULL;
		xfer_free(&inf->x);
		return false;
	}
	inf->busy = true;
	return true;
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

static void list_done(struct informer *inf, CURLcode rc)
{
	struct xfer *x = &inf->x;
	char *next = NULL;
	enum result r;

	if (rc != CURLE_OK)
		r = RES_RETRY;
	else if (x->status != 200)
		r = status_result(inf, x->status, &x->body);
	else
		r = decode_page(inf, &x->body, &inf->objs, &next, inf->list_rv,
				sizeof(inf->list_rv));
	free(inf->cont);
	inf->cont = next;
	if (r == RES_OK && inf->cont) {
		inf->wake_at = 0; /* the next page at once */
		return;
	}
	if (r == RES_OK)
		r = apply_list(inf);
	inf->list_rv[0] = '\0';
	if (r == RES_OK) {
		inf->phase = PH_WATCH;
		inf->wake_at = 0;
		atomic_store(&inf->synced, true);
		trim_after_sync(inf->parent);
		return;
	}
	objs_free(&inf->objs);
	free(inf->cont);
	inf->cont = NULL;
	if (r == RES_UNSERVED) {
		atomic_store(&inf->synced, true);
		trim_after_sync(inf->parent);
		inf->wake_at = sx_now_s() + UNSERVED_RETRY_S;
	} else {
		schedule_backoff(inf);
	}
}

static void watch_done(struct informer *inf, CURLcode rc)
{
	struct xfer *x = &inf->x;
	unsigned long events = x->events;
	enum result r;

	if (x->status != 200 && x->status != 0)
		r = status_result(inf, x->status, &x->body);
	else if (x->result != RES_OK)
		r = x->result;
	else if (rc == CURLE_OK)
		r = RES_OK;
	else
		r = RES_RETRY; /* dropped connection: resume from the last RV */
	atomic_fetch_add(&inf->parent->restarts, 1);
	if (r == RES_OK && (events > 0 || sx_now_ns() - inf->watch_t0 > 1000000000ull)) {
		inf->backoff = BACKOFF_MIN;
		inf->wake_at = 0;
	} else if (r == RES_GONE || r == RES_UNSERVED) {
		inf->phase = PH_LIST;
		inf->wake_at = 0;
	} else {
		/* A very short empty watch, a dropped connection or an error. */
		if (events > 0)
			inf->backoff = BACKOFF_MIN;
		schedule_backoff(inf);
		if (r == RES_BROKEN)
			inf->phase = PH_LIST;
	}
}

/* A transfer of inf ended with rc: the state machine's next step. */
static void transfer_done(struct informer *inf, CURLcode rc)
{
	struct sx_informers *p = inf->parent;

	curl_multi_remove_handle(p->multi, inf->h);
	inf->busy = false;
	if (inf->x.status == 0)
		curl_easy_getinfo(inf->h, CURLINFO_RESPONSE_CODE, &inf->x.status);
	if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR && !stopping(inf))
		log_transport(inf, &inf->x, rc, inf->ebuf);
	curl_slist_free_all(inf->hdrs);
	inf->hdrs = NULL;
	if (!stopping(inf)) {
		if (inf->phase == PH_LIST)
			list_done(inf, rc);
		else
			watch_done(inf, rc);
	}
	xfer_free(&inf->x);
}

/* Starts what is due; returns how long the poll may sleep (ms). */
static int start_due(struct sx_informers *p)
{
	double now = sx_now_s(), next = now + 1.0;

	for (size_t i = 0; i < NKINDS && !atomic_load(&p->stop); i++) {
		struct informer *inf = &p->inf[i];

		if (inf->busy)
			continue;
		if (inf->wake_at > now) {
			if (inf->wake_at < next)
				next = inf->wake_at;
			continue;
		}
		if (!start_transfer(inf))
			schedule_backoff(inf);
	}
	return (int)((next - now) * 1000) + 1;
}

static void *informers_main(void *arg)
{
	struct sx_informers *p = arg;

	while (!atomic_load(&p->stop)) {
		int ms = start_due(p), running = 0, left;
		CURLMsg *m;

		curl_multi_perform(p->multi, &running);
		while ((m = curl_multi_info_read(p->multi, &left))) {
			struct informer *inf = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&inf);
			if (inf)
				transfer_done(inf, m->data.result);
		}
		if (!atomic_load(&p->stop))
			curl_multi_poll(p->multi, NULL, 0, ms > 1000 ? 1000 : ms, NULL);
	}
	for (size_t i = 0; i < NKINDS; i++) {
		struct informer *inf = &p->inf[i];

		if (inf->busy) {
			curl_multi_remove_handle(p->multi, inf->h);
			inf->busy = false;
			curl_slist_free_all(inf->hdrs);
			inf->hdrs = NULL;
			xfer_free(&inf->x);
		}
	}
	return NULL;
}

struct sx_informers *sx_informers_start(struct sx_kube *kube, struct sx_cache *cache,
					struct sx_error *err)
{
	struct sx_informers *p = sx_calloc(1, sizeof(*p));

	if (!p) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->kube = kube;
	p->cache = cache;
	p->multi = curl_multi_init();
	for (size_t i = 0; p->multi && i < NKINDS; i++) {
		struct informer *inf = &p->inf[i];

		inf->parent = p;
		inf->d = &kinds[i];
		inf->phase = PH_LIST;
		inf->backoff = BACKOFF_MIN;
		inf->h = curl_easy_init();
		if (!inf->h)
			break;
	}
	if (!p->multi || !p->inf[NKINDS - 1].h ||
	    pthread_create(&p->thread, NULL, informers_main, p) != 0) {
		sx_error_set(err, SX_ENOMEM, "cannot start the informers");
		sx_informers_stop(p);
		return NULL;
	}
	p->started = true;
	return p;
}

bool sx_informers_synced(const struct sx_informers *inf)
{
	if (!inf)
		return false;
	for (size_t i = 0; i < NKINDS; i++)
		if (!atomic_load(&inf->inf[i].synced))
			return false;
	return true;
}

unsigned long sx_informers_restarts(const struct sx_informers *inf)
{
	return inf ? atomic_load(&inf->restarts) : 0;
}

/* Stop: the flag makes every transfer's progress callback abort it and
 * the wakeup ends the poll at once; the thread then drops its transfers. */
void sx_informers_stop(struct sx_informers *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	if (p->multi)
		curl_multi_wakeup(p->multi);
	if (p->started)
		pthread_join(p->thread, NULL);
	for (size_t i = 0; i < NKINDS; i++) {
		objs_free(&p->inf[i].objs);
		free(p->inf[i].cont);
		if (p->inf[i].h)
			curl_easy_cleanup(p->inf[i].h);
	}
	if (p->multi)
		curl_multi_cleanup(p->multi);
	free(p);
}

/* ---------- replay entry points (tests, fuzzing, allocation sweep) ---------- */

static const struct kind_desc *desc_of(enum sx_kind kind)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

int sx_informer_replay_watch(struct sx_cache *cache, enum sx_kind kind, const char *data,
			     size_t len, char *rv, size_t rvlen)
{
	struct sx_informers p = { .cache = cache };
	struct informer inf = { .parent = &p, .d = desc_of(kind) };
	struct xfer x = { .inf = &inf, .status = 200, .watch = true, .result = RES_OK };
	int rc;

	if (!inf.d)
		return SX_EINVAL;
	sx_line_buf_init(&x.lines, MAX_EVENT_BYTES);
	rc = sx_line_buf_feed(&x.lines, data, len, on_event, &x);
	sx_line_buf_free(&x.lines);
	if (rv && rvlen)
		snprintf(rv, rvlen, "%s", inf.rv);
	if (rc == 0 && x.result != RES_OK)
		rc = SX_EIO;
	return rc < 0 ? rc : 0;
}

int sx_informer_replay_list(struct sx_cache *cache, enum sx_kind kind, const char *data,
			    size_t len, char *rv, size_t rvlen)
{
	struct sx_informers p = { .cache = cache };
	struct informer inf = { .parent = &p, .d = desc_of(kind) };
	struct sx_buf body = { .data = (char *)data, .len = len };
	struct objs objs = { 0 };
	char list_rv[sizeof(inf.rv)] = "", *cont = NULL;
	enum result r;
	int rc;

	if (!inf.d)
		return SX_EINVAL;
	r = decode_page(&inf, &body, &objs, &cont, list_rv, sizeof(list_rv));
	free(cont);
	if (r != RES_OK) {
		objs_free(&objs);
		return SX_EINVAL;
	}
	rc = sx_cache_replace_all(cache, kind, objs.v, objs.n);
	free(objs.v);
	if (rv && rvlen)
		snprintf(rv, rvlen, "%s", list_rv);
	return rc;
}
