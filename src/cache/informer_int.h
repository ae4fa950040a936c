/* Internals shared by informer.c (the engine: transfers, watch events,
 * the thread) and informer_list.c (how a kind is listed): the per-kind
 * state machine and its transfers. Not a public header; every function
 * runs on the informers' thread (or in the replay entry points). */
#ifndef SCHEDEXT_INFORMER_INT_H
#define SCHEDEXT_INFORMER_INT_H

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/buf.h"
#include "schedext/informer.h"
#include "schedext/kube.h"

#define MAX_EVENT_BYTES	 ((size_t)16 << 20)
#define MAX_LIST_BYTES	 ((size_t)1 << 30)
#define MAX_ERROR_BODY	 (64 * 1024)
#define WATCHDOG_NS	 (180ull * 1000000000ull)
#define BACKOFF_MIN	 0.8
#define BACKOFF_MAX	 30.0
#define UNSERVED_RETRY_S 60.0

/* Entries of kinds[] (informer.c): the WATCHED rows of kinds.def. */
enum {
	NKINDS = 0
#define INFORMER_COUNT_WATCHED +1
#define INFORMER_COUNT_UNWATCHED
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, KEY, EVENT,   \
		WATCH, SELECTOR)                                                                   \
	INFORMER_COUNT_##WATCH
#include "schedext/kinds.def"
#undef INFORMER_COUNT_WATCHED
#undef INFORMER_COUNT_UNWATCHED
};

/* One informer row, from kinds.def. */
struct kind_desc {
	enum sx_kind kind;
	const char *path;
	const char *resource;
	const char *field_selector; /* already percent-encoded, or NULL */
};

/* Outcome of one LIST or WATCH. */
enum result {
	RES_OK = 0,   /* list applied / watch ended cleanly */
	RES_GONE,     /* 410: re-list */
	RES_UNSERVED, /* 404/403 on the collection */
	RES_RETRY,    /* connection failure, 429, 5xx: back off, same RV */
	RES_BROKEN,   /* bad data, other errors: back off, re-list */
	RES_STOPPED,
};

/* Per-transfer state shared with curl callbacks. */
struct xfer {
	struct informer *inf;
	long status;
	bool watch;
	struct sx_buf body;	  /* LIST body, or error body */
	struct sx_line_buf lines; /* WATCH events */
	enum result result;
	unsigned long events;
	uint64_t last_data_ns;
	uint64_t start_ns; /* when the request was sent */
	bool observed;	   /* counted in rest_client_* already */
};

/* LIST pages decoded so far (applied at once with the last page). */
struct objs {
	struct sx_object *v;
	uint32_t n, cap;
};

/* The current or next transfer: a LIST page, a streaming list (a WATCH
 * whose initial events are the list) or a WATCH. */
enum phase { PH_LIST, PH_WATCH_LIST, PH_WATCH };

/* One watched kind: a small state machine driven by the informers'
 * thread. Between transfers it waits until wake_at (back-off). */
struct informer {
	struct sx_informers *parent;
	const struct kind_desc *d;
	CURL *h;
	struct curl_slist *hdrs;
	bool busy;	     /* h is in the multi handle */
	enum phase phase;    /* the current or next transfer */
	double wake_at;	     /* start no transfer before (sx_now_s()) */
	struct xfer x;	     /* the current transfer */
	struct objs objs;    /* LIST pages so far */
	char *cont;	     /* the next LIST page's continue token */
	char list_rv[128];   /* the LIST's resourceVersion */
	bool paginated;	     /* the server paginated a resourceVersion=0 LIST */
	bool rv_unavailable; /* rv was refused (410/too large): list at "" */
	bool full_list;	     /* next LIST: one request, no limit (pager) */
	bool wl_refused;     /* the server refused the streaming list */
	bool wl_fallback;    /* a streaming list failed: LIST this round */
	uint64_t watch_t0;
	char rv[128]; /* resume point */
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
	bool trimmed;	 /* malloc_trim after the first full sync */
	bool watch_list; /* client-go's WatchListClient feature */
	struct informer inf[NKINDS];
};

/* ---------- informer.c ---------- */

const struct kind_desc *sx__inf_desc_of(enum sx_kind kind);
/* metadata.<key> of obj when a string, else NULL. */
const char *sx__inf_meta_str(const cJSON *obj, const char *key);
/* What to do after a non-200 answer (logs it; 401 drops the token). */
enum result sx__inf_status_result(struct informer *inf, long status, struct sx_buf *body);
/* Sets wake_at after the current back-off (with jitter) and doubles it. */
void sx__inf_backoff(struct informer *inf);

/* ---------- informer_list.c ---------- */

/* The path and query of inf's next transfer (by inf->phase); owned by the
 * caller, NULL when out of memory. */
char *sx__inf_path(const struct informer *inf);
/* The next transfer lists the kind again (a streaming list or a LIST). */
void sx__inf_relist(struct informer *inf);
/* A LIST page or a streaming list ended with rc: the next step. */
void sx__inf_list_done(struct informer *inf, CURLcode rc);
void sx__inf_watch_list_done(struct informer *inf, CURLcode rc);
/* An event of a streaming list before its initial events ended; 0, or
 * negative with x->result set when the stream is broken. */
int sx__inf_initial_event(struct informer *inf, struct xfer *x, const char *t, const cJSON *obj);
/* A 504 whose cause is ResourceVersionTooLarge. */
bool sx__inf_too_large_rv(const struct xfer *x);
/* Drops the objects and empties o. */
void sx__inf_objs_free(struct objs *o);

#endif
