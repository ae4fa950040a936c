/* Informers: one thread for every watched kind (libcurl's multi
 * interface) keeping the cache equal to the API server's state (upstream
 * client-go tools/cache/reflector.go, Reflector.ListAndWatch).
 *
 * Per kind: LIST -> sx_cache_replace_all -> WATCH from the list's
 * resourceVersion with bookmarks; ADDED/MODIFIED upsert, DELETED delete,
 * BOOKMARK only advances the resume point. A clean end of the stream
 * re-watches at once; 410 (HTTP or ERROR event) re-lists; connection
 * failures back off (0.8 s doubling to 30 s, jitter up to +100 %).
 *
 * How a kind is listed (LIST parameters, the streaming list, fallbacks)
 * is informer_list.c's job; types shared by both are in informer_int.h.
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

#include "informer_int.h"
#include "schedext/decode.h"
#include "schedext/kube.h"

/* The WATCHED rows of kinds.def, in its order. */
static const struct kind_desc kinds[] = {
#define INFORMER_ROW_UNWATCHED(ID, GROUP, VERSION, RESOURCE, SELECTOR)
#define INFORMER_ROW_WATCHED(ID, GROUP, VERSION, RESOURCE, SELECTOR)                               \
	{SX_KIND_##ID, SX_KIND_PATH(GROUP, VERSION, RESOURCE), RESOURCE, SELECTOR},
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, KEY, EVENT,   \
		WATCH, SELECTOR)                                                                   \
	INFORMER_ROW_##WATCH(ID, GROUP, VERSION, RESOURCE, SELECTOR)
#include "schedext/kinds.def"
#undef INFORMER_ROW_UNWATCHED
#undef INFORMER_ROW_WATCHED
};
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == NKINDS, "NKINDS counts kinds[]");

unsigned sx_informer_nkinds(void)
{
	return NKINDS;
}

const char *sx_informer_kind_path(unsigned i, const char **field_selector)
{
	*field_selector = kinds[i].field_selector;
	return kinds[i].path;
}

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

int sx_line_buf_feed(struct sx_line_buf *lb, const char *data, size_t n, sx_line_fn fn, void *ctx)
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

const char *sx__inf_meta_str(const cJSON *obj, const char *key)
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
	const char *name = sx__inf_meta_str(obj, "name"), *ns = sx__inf_meta_str(obj, "namespace");
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
	struct sx_error err = {0};
	char ebuf[600];
	int rc = sx_decode_object_as(obj, inf->d->kind, &o, &err);

	if (rc == SX_ENOMEM || err.code == SX_ENOMEM)
		return SX_ENOMEM;
	if (rc != 0) {
		sx_log(1, "%s: cannot decode %s/%s: %s", inf->d->resource,
		       sx__inf_meta_str(obj, "namespace") ? sx__inf_meta_str(obj, "namespace") : "",
		       sx__inf_meta_str(obj, "name") ? sx__inf_meta_str(obj, "name") : "?",
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
	} else if (inf->phase == PH_WATCH_LIST && strcmp(t, "ERROR") != 0) {
		rc = sx__inf_initial_event(inf, x, t, obj);
	} else if (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0) {
		rc = upsert(inf, obj);
		if (rc == 0)
			set_rv(inf, sx__inf_meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "DELETED") == 0) {
		rc = delete_key(inf, obj) == SX_ENOMEM ? SX_ENOMEM : 0;
		if (rc == 0)
			set_rv(inf, sx__inf_meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "BOOKMARK") == 0) {
		set_rv(inf, sx__inf_meta_str(obj, "resourceVersion"));
	} else if (strcmp(t, "ERROR") == 0) {
		x->result = error_event(inf, obj);
		rc = SX_EIO;
	} else {
		sx_log(2, "%s: ignoring watch event type %s", inf->d->resource, t);
	}
	if (rc == SX_ENOMEM) {
		sx_log(1, "%s: out of memory applying a watch event; re-listing", inf->d->resource);
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
	/* A watch is counted when its response begins, as client-go's
	 * rest/request.go (Request.Watch) calls updateURLMetrics once
	 * client.Do returned the headers: the stream then runs for minutes. */
	if (x->watch && !x->observed) {
		x->observed = true;
		sx_kube_observe(x->inf->parent->kube, "GET", false, x->status, x->start_ns);
	}
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
static void log_transport(struct informer *inf, const struct xfer *x, CURLcode rc, const char *ebuf)
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
enum result sx__inf_status_result(struct informer *inf, long status, struct sx_buf *body)
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

/* ---------- the engine: every kind on one thread (curl multi) ---------- */

void sx__inf_backoff(struct informer *inf)
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
	bool watch = inf->phase != PH_LIST;
	char *path = sx__inf_path(inf);
	struct sx_error err = {0};

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
	inf->x.last_data_ns = inf->watch_t0 = inf->x.start_ns = sx_now_ns();
	if (curl_multi_add_handle(p->multi, inf->h) != CURLM_OK) {
		curl_slist_free_all(inf->hdrs);
		inf->hdrs = NULL;
		xfer_free(&inf->x);
		return false;
	}
	inf->busy = true;
	return true;
}

static void watch_done(struct informer *inf, CURLcode rc)
{
	struct xfer *x = &inf->x;
	unsigned long events = x->events;
	enum result r;

	if (sx__inf_too_large_rv(x))
		r = RES_GONE; /* relist at that RV: refused too, then at "" */
	else if (x->status != 200 && x->status != 0)
		r = sx__inf_status_result(inf, x->status, &x->body);
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
		sx__inf_relist(inf);
		inf->wake_at = 0;
	} else {
		/* A very short empty watch, a dropped connection or an error. */
		if (events > 0)
			inf->backoff = BACKOFF_MIN;
		sx__inf_backoff(inf);
		if (r == RES_BROKEN)
			sx__inf_relist(inf);
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
	/* a LIST page (or a watch that never answered) in rest_client_*,
	 * like every other API call; not a transfer we aborted to stop */
	if (!inf->x.observed && !stopping(inf))
		sx_kube_observe(p->kube, "GET", inf->x.status == 0, inf->x.status, inf->x.start_ns);
	curl_slist_free_all(inf->hdrs);
	inf->hdrs = NULL;
	if (!stopping(inf)) {
		if (inf->phase == PH_LIST)
			sx__inf_list_done(inf, rc);
		else if (inf->phase == PH_WATCH_LIST)
			sx__inf_watch_list_done(inf, rc);
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
			sx__inf_backoff(inf);
	}
	return (int)((next - now) * 1000) + 1;
}

/* One pass: drive the transfers, finish what completed, and only then
 * start what is due and work out how long to sleep. Computed before the
 * finished transfers were handled, the timeout ignored the LIST page or
 * WATCH that a finished transfer had just made due, and the poll slept up
 * to a second before asking for it: a second per page of every LIST. */
static void *informers_main(void *arg)
{
	struct sx_informers *p = arg;

	while (!atomic_load(&p->stop)) {
		int ms, running = 0, left;
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
		ms = start_due(p);
		/* a transfer just added makes libcurl's own timeout 0: the poll
		 * returns at once and the next perform sends the request */
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

/* client-go's WatchListClient feature, on unless the environment turns it
 * off as client-go's envVarFeatureGates read it (KUBE_FEATURE_<name>,
 * strconv.ParseBool's spellings of false). */
static bool watch_list_client(void)
{
	static const char *const off[] = {"0", "f", "F", "false", "FALSE", "False"};
	const char *v = getenv("KUBE_FEATURE_WatchListClient");

	for (size_t i = 0; v && i < sizeof(off) / sizeof(off[0]); i++)
		if (strcmp(v, off[i]) == 0)
			return false;
	return true;
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
	p->watch_list = watch_list_client();
	p->multi = curl_multi_init();
	for (size_t i = 0; p->multi && i < NKINDS; i++) {
		struct informer *inf = &p->inf[i];

		inf->parent = p;
		inf->d = &kinds[i];
		sx__inf_relist(inf);
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
		sx__inf_objs_free(&p->inf[i].objs);
		free(p->inf[i].cont);
		if (p->inf[i].h)
			curl_easy_cleanup(p->inf[i].h);
	}
	if (p->multi)
		curl_multi_cleanup(p->multi);
	free(p);
}

/* ---------- replay entry points (tests, fuzzing, allocation sweep) ---------- */

const struct kind_desc *sx__inf_desc_of(enum sx_kind kind)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

int sx_informer_replay_watch(struct sx_cache *cache, enum sx_kind kind, const char *data,
			     size_t len, char *rv, size_t rvlen)
{
	struct sx_informers p = {.cache = cache};
	struct informer inf = {.parent = &p, .d = sx__inf_desc_of(kind)};
	struct xfer x = {.inf = &inf, .status = 200, .watch = true, .result = RES_OK};
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
