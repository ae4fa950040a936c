/* The HTTP server (libmicrohttpd): routing, body collection with limits,
 * TLS client verification, operations endpoints, metrics and the
 * per-request log line. The verbs themselves are in extender.c.
 *
 * Latency: every reply is one buffer handed to MHD
 * (MHD_RESPMEM_MUST_FREE), which writes headers and body together, and
 * TCP_NODELAY is set on every accepted socket, so a Go client never waits
 * on delayed ACKs. Connections are kept alive.
 */
#include "schedext/server.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "schedext/buf.h"
#include "schedext/bufpool.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/explain.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/informer.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/procstat.h"
#include "schedext/framework_metrics.h"
#include "authz.h"
#include "ui.h"

enum route {
	R_NOT_FOUND,
	R_FILTER,
	R_PRIORITIZE,
	R_PREEMPT,
	R_BIND,
	R_HEALTHZ,
	R_LIVEZ,
	R_READYZ,
	R_VERSION,
	R_METRICS,
	R_EXPLAIN,
	R_CACHE,
	R_CONFIGZ,
	R_UI,
	R_PENDING,
	R_WHATIF,
	R_COUNT
};

struct sx_server {
	struct MHD_Daemon *daemon;
	const struct sx_extender *ex;
	struct sx_informers *inf;
	size_t max_body;
	const char *const *state_paths; /* what-if re-reads them; none on a live cluster */
	unsigned nstates;
	char lease_label[300];	/* name="LEASE" with --standalone, else "" */
	double debug_budget_s;	/* per /debug/pending or /debug/whatif request */
	struct sx_authz *authz; /* who may read the non-verb endpoints; not owned */
	atomic_bool stopping;	/* graceful shutdown began: readyz fails */
	char prefix[256];
	bool tls_client_auth;
	uint16_t port;
	atomic_int inflight; /* requests between first callback and completion */
	double started;
	int (*verify_peers)(void *session, unsigned int *status); /* gnutls, via dlsym */
	struct sx_bufpool bufs; /* request bodies and replies, reused (bufpool.h) */
	/* metric handles (NULL without a registry), resolved at start */
	struct {
		struct sx_metric *requests, *duration, *nodes, *pods, *restarts, *uptime;
		struct sx_metric *cache_size, *master_status, *leader;
		struct sx_procstat_metrics proc;
	} m;
};

/* Bodies and replies above POOLED_MIN come from, and go back to, the
 * server's buffer pool; below it glibc's heap serves them well. At most
 * BUFPOOL_BUDGET bytes stay kept between requests. */
#define POOLED_MIN     ((size_t)64 << 10)
#define BUFPOOL_BUDGET ((size_t)16 << 20)

/* Per-request state (MHD's con_cls). */
struct request {
	enum route route;
	uint64_t start_ns;
	struct sx_buf body;
	size_t discarded; /* bytes dropped past the limit */
	bool too_big;
	bool replied;		     /* a response was queued at the first call */
	bool get;		     /* GET or HEAD (else POST) */
	struct MHD_Connection *conn; /* for query arguments */
};

/* Endpoints of this file (below). */
static unsigned op_healthz(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_livez(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_readyz(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_version(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_metrics(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_explain(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_cache(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_ui(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_configz(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_pending(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
static unsigned op_whatif(struct sx_server *srv, const struct request *rq, struct sx_buf *b);

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define CT_HTML "text/html; charset=utf-8"

/* Route table: name (also the metrics "verb" label), path, POST or GET,
 * content type, and what answers: an extender verb, or an endpoint of
 * this file. logged: one line per call with the verb's log fields. */
static const struct route_def {
	const char *name;
	const char *path; /* verbs: appended to the URL prefix */
	bool post;
	bool verb;
	bool logged;
	const char *ctype;
	int (*verb_fn)(const struct sx_extender *ex, const char *body, size_t len,
		       struct sx_buf *out, struct sx_verb_log *log);
	unsigned (*handle)(struct sx_server *srv, const struct request *rq, struct sx_buf *b);
} routes[R_COUNT] = {
	[R_NOT_FOUND] = {"unknown", NULL, false, false, false, CT_JSON, NULL, NULL},
	[R_FILTER] = {"filter", "/filter", true, true, true, CT_JSON, sx_extender_filter, NULL},
	[R_PRIORITIZE] = {"prioritize", "/prioritize", true, true, true, CT_JSON,
			  sx_extender_prioritize, NULL},
	[R_PREEMPT] = {"preempt", "/preempt", true, true, true, CT_JSON, sx_extender_preempt, NULL},
	[R_BIND] = {"bind", "/bind", true, true, true, CT_JSON, sx_extender_bind, NULL},
	[R_HEALTHZ] = {"healthz", "/healthz", false, false, false, CT_TEXT, NULL, op_healthz},
	[R_LIVEZ] = {"livez", "/livez", false, false, false, CT_TEXT, NULL, op_livez},
	[R_READYZ] = {"readyz", "/readyz", false, false, false, CT_TEXT, NULL, op_readyz},
	[R_VERSION] = {"version", "/version", false, false, false, CT_JSON, NULL, op_version},
	[R_METRICS] = {"metrics", "/metrics", false, false, false, CT_PROM, NULL, op_metrics},
	[R_EXPLAIN] = {"explain", "/debug/explain", true, false, true, CT_JSON, NULL, op_explain},
	[R_CACHE] = {"cache", "/debug/cache", false, false, false, CT_JSON, NULL, op_cache},
	[R_CONFIGZ] = {"configz", "/configz", false, false, false, CT_JSON, NULL, op_configz},
	[R_UI] = {"ui", "/ui", false, false, false, CT_HTML, NULL, op_ui},
	[R_PENDING] = {"pending", "/debug/pending", false, false, false, CT_JSON, NULL, op_pending},
	[R_WHATIF] = {"whatif", "/debug/whatif", true, false, true, CT_JSON, NULL, op_whatif},
};

/* Per-connection state (socket context). */
struct conn_state {
	bool tls_checked;
	bool tls_ok;
};

static const double latency_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
					 0.1,	 0.25,	0.5,	1,     2.5,  5,	    10};

/* ---------- routing ---------- */

static enum route find_route(const struct sx_server *srv, const char *url)
{
	size_t plen = strlen(srv->prefix);
	int r;

	for (r = R_FILTER; r < R_COUNT; r++) {
		if (!routes[r].verb) {
			if (strcmp(url, routes[r].path) == 0)
				return (enum route)r;
			continue;
		}
		if (strncmp(url, srv->prefix, plen) == 0 && strcmp(url + plen, routes[r].path) == 0)
			return (enum route)r;
	}
	return R_NOT_FOUND;
}

/* ---------- replies ---------- */

static void record(struct sx_server *srv, const struct request *rq, unsigned code)
{
	char labels[96];
	double secs = (double)(sx_now_ns() - rq->start_ns) / 1e9;

	if (!srv->m.requests)
		return;
	snprintf(labels, sizeof(labels), "verb=\"%s\",code=\"%u\"", routes[rq->route].name, code);
	sx_metric_inc(srv->m.requests, labels, 1);
	snprintf(labels, sizeof(labels), "verb=\"%s\"", routes[rq->route].name);
	sx_metric_observe(srv->m.duration, labels, secs);
}

/* A reply MHD is sending: its buffer goes back to the pool when MHD is
 * done with it (reply_done). */
struct reply {
	struct sx_bufpool *pool;
	char *data;
	size_t cap;
};

static void reply_done(void *cls)
{
	struct reply *r = cls;

	sx_bufpool_give(r->pool, r->data, r->cap);
	free(r);
}

/* The response for b's contents; b's allocation passes to it (and back to
 * the pool afterwards). NULL when out of memory (b is then freed). */
static struct MHD_Response *reply_response(struct sx_server *srv, struct sx_buf *b)
{
	struct MHD_Response *resp;
	struct reply *r;

	if (!b->data || !b->len) {
		sx_bufpool_give_buf(&srv->bufs, b);
		return MHD_create_response_from_buffer(0, (char *)"", MHD_RESPMEM_PERSISTENT);
	}
	r = malloc(sizeof(*r));
	if (!r) {
		sx_buf_free(b);
		return NULL;
	}
	*r = (struct reply){&srv->bufs, b->data, b->cap};
	resp = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, reply_done,
								      r);
	if (!resp)
		reply_done(r);
	sx_buf_init(b);
	return resp;
}

/* Queues b's contents as the reply (ownership passes to MHD). */
static enum MHD_Result send_buf(struct sx_server *srv, struct MHD_Connection *conn,
				struct request *rq, unsigned code, struct sx_buf *b,
				const char *ctype, bool close)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (b->failed) {
		sx_buf_free(b);
		code = 500;
		sx_reply_error(b, "out of memory");
	}
	resp = reply_response(srv, b);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (code == 405)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
					routes[rq->route].post ? "POST" : "GET, HEAD");
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	rq->replied = true;
	record(srv, rq, code);
	return ret;
}

static enum MHD_Result send_error(struct sx_server *srv, struct MHD_Connection *conn,
				  struct request *rq, unsigned code, const char *msg, bool close)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_reply_error(&b, msg);
	sx_log(code >= 500 ? 0 : 2, "%s: %u %s", routes[rq->route].name, code, msg);
	return send_buf(srv, conn, rq, code, &b, "application/json", close);
}

/* ---------- operations endpoints ---------- */

/* One health check: name and NULL (ok) or why it fails. */
struct check {
	const char *name;
	const char *failure;
};

/* The apiserver-style health answer: "ok", or with ?verbose (or on a
 * failure) one "[+]name ok" / "[-]name failed: reason withheld" line per
 * check and "<endpoint> check passed|failed"; 500 on a failure. */
static unsigned write_checks(const struct request *rq, const char *endpoint, const struct check *c,
			     unsigned n, struct sx_buf *b)
{
	const char *val = NULL;
	size_t vlen = 0;
	/* "?verbose" has no value: ask whether the key is present at all */
	bool verbose = MHD_lookup_connection_value_n(rq->conn, MHD_GET_ARGUMENT_KIND, "verbose", 7,
						     &val, &vlen) == MHD_YES;
	bool ok = true;

	for (unsigned i = 0; i < n; i++)
		ok = ok && !c[i].failure;
	if (ok && !verbose) {
		sx_buf_puts(b, "ok");
		return 200;
	}
	for (unsigned i = 0; i < n; i++) {
		if (c[i].failure) {
			sx_buf_printf(b, "[-]%s failed: reason withheld\n", c[i].name);
			sx_log(1, "%s check %s failed: %s", endpoint, c[i].name, c[i].failure);
		} else {
			sx_buf_printf(b, "[+]%s ok\n", c[i].name);
		}
	}
	sx_buf_printf(b, "%s check %s\n", endpoint, ok ? "passed" : "failed");
	return ok ? 200 : 500;
}

static unsigned op_healthz(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	const struct check c[] = {{"ping", NULL}, {"log", NULL}};
	return write_checks(rq, "healthz", c, 2, b);
}

static unsigned op_livez(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	const struct check c[] = {{"ping", NULL}, {"log", NULL}};
	return write_checks(rq, "livez", c, 2, b);
}

/* Ready once every informer's initial LIST is in the cache, until the
 * graceful shutdown begins (kube-scheduler's sched-handler-sync and
 * shutdown checks). */
static unsigned op_readyz(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	bool synced = !srv->inf || sx_informers_synced(srv->inf);
	const struct check c[] = {
		{"ping", NULL},
		{"log", NULL},
		{"sched-handler-sync", synced ? NULL : "cache not synced"},
		{"shutdown", atomic_load(&srv->stopping) ? "shutting down" : NULL},
	};
	return write_checks(rq, "readyz", c, 4, b);
}

static unsigned op_version(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "version", SX_VERSION);
	sx_jw_kstr(&w, "extenderAPI", "k8s.io/kube-scheduler/extender/v1");
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
	return 200;
}

static unsigned op_metrics(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	struct sx_metrics *m = srv->ex->metrics;
	struct sx_cache_stats st = {0};

	sx_cache_stats(srv->ex->cache, &st);
	sx_metric_set(srv->m.nodes, NULL, st.nodes);
	sx_metric_set(srv->m.pods, "state=\"bound\"", st.bound_pods);
	sx_metric_set(srv->m.pods, "state=\"pending\"", st.pending_pods);
	sx_metric_set(srv->m.pods, "state=\"assumed\"", st.assumed_pods);
	sx_metric_set(srv->m.restarts, NULL,
		      srv->inf ? (double)sx_informers_restarts(srv->inf) : 0);
	sx_metric_set(srv->m.uptime, NULL, sx_now_s() - srv->started);
	sx_procstat_update(&srv->m.proc);
	sx_metric_set(srv->m.cache_size, "type=\"nodes\"", st.nodes);
	sx_metric_set(srv->m.cache_size, "type=\"pods\"", st.pods);
	sx_metric_set(srv->m.cache_size, "type=\"assumed_pods\"", st.assumed_pods);
	if (srv->lease_label[0]) /* client-go's leaderelection gauge, from the loop's */
		sx_metric_set(srv->m.master_status, srv->lease_label,
			      sx_metric_value(srv->m.leader, NULL));
	sx_fw_metrics_export(m, srv->ex->cfg);
	sx_metrics_render(m, b);
	return 200;
}

static void dump_node(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct sx_jw *w = ctx;
	const struct sx_meta *meta = sx_object_meta(obj);

	sx_jw_object(w);
	sx_jw_kstr(w, "name", meta->name);
	sx_jw_kstr(w, "resourceVersion", meta->resource_version);
	sx_jw_end_object(w);
}

static void dump_pod(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct sx_jw *w = ctx;
	const struct sx_meta *meta = sx_object_meta(obj);

	sx_jw_object(w);
	sx_jw_kstr(w, "namespace", sx_str_get(meta->ns));
	sx_jw_kstr(w, "name", meta->name);
	sx_jw_kstr(w, "nodeName", sx_str_get(node));
	sx_jw_kstr(w, "resourceVersion", meta->resource_version);
	sx_jw_kbool(w, "assumed", assumed);
	sx_jw_end_object(w);
}

static unsigned op_cache(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_karray(&w, "nodes");
	sx_cache_visit(srv->ex->cache, SX_KIND_NODE, dump_node, &w);
	sx_jw_end_array(&w);
	sx_jw_karray(&w, "pods");
	sx_cache_visit(srv->ex->cache, SX_KIND_POD, dump_pod, &w);
	sx_jw_end_array(&w);
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
	return 200;
}

/* POST /debug/explain: a v1 Pod in, the explain JSON out. */
/* GET /configz: the effective configuration (behind delegated authz). */
static unsigned op_configz(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	sx_config_write_json(b, srv->ex->cfg);
	return 200;
}

/* GET /ui: the operators' page; GET /debug/pending[?namespace=NS];
 * POST /debug/whatif, GET /debug/whatif (src/cmd/ui.c). */
static unsigned op_ui(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	return sx_ui_page(b);
}

static unsigned op_pending(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	return sx_ui_pending(
		srv->ex, MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "namespace"),
		srv->debug_budget_s, b);
}

static unsigned op_whatif(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	if (rq->get)
		return sx_ui_whatif_choices(srv->ex, srv->state_paths, srv->nstates, b);
	return sx_ui_whatif(srv->ex, srv->state_paths, srv->nstates, rq->body.data, rq->body.len,
			    srv->debug_budget_s, b);
}

/* GET /debug/explain?pod=NS/NAME explains a pod of the cache; POST takes
 * the Pod in the body. */
static unsigned op_explain(struct sx_server *srv, const struct request *rq, struct sx_buf *b)
{
	if (rq->get)
		return sx_ui_explain_pod(
			srv->ex,
			MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "pod"), b);
	const struct sx_extender *ex = srv->ex;
	struct sx_explain_opts opts = {0};
	struct sx_error err = {0};
	struct sx_snapshot *snap = NULL;
	struct sx_pod *pod = NULL;
	char msg[600], ebuf[600];
	unsigned code = 200;
	cJSON *root;

	root = sx_request_parse(rq->body.data, rq->body.len, msg, sizeof(msg));
	if (!root || !cJSON_IsObject(root)) {
		sx_reply_error(b, root ? "request body must be a v1 Pod object" : msg);
		cJSON_Delete(root);
		return 400;
	}
	/* As the verbs refuse an ExtenderArgs without a Pod, and kube-apiserver
	 * a create without a name or with an unknown field (kubectl's
	 * default, field validation Strict): a 400 naming the problem, never
	 * an explanation of a pod named "/". */
	const char *kind = sx_json_string(root, "kind");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const char *name = cJSON_IsObject(meta) ? sx_json_string(meta, "name") : NULL;
	if (cJSON_GetObjectItemCaseSensitive(root, "kind") && (!kind || strcmp(kind, "Pod") != 0))
		sx_error_set(&err, SX_EINVAL, "kind: expected \"Pod\"");
	else if (!name || !name[0])
		sx_error_set(&err, SX_EINVAL, "metadata.name: required");
	else if (sx_decode_check_fields(root, SX_KIND_POD, SX_FIELDS_STRICT, NULL, NULL, &err) == 0)
		pod = sx_decode_pod(root, &err);
	cJSON_Delete(root);
	if (!pod) {
		/* "Pod.spec.containers[0]...: why"; "Pod: strict decoding error: ..." */
		bool strict = strncmp(err.msg, "strict ", 7) == 0;
		snprintf(msg, sizeof(msg), "Pod%s%s", strict ? ": " : ".",
			 sx_error_string(&err, ebuf, sizeof(ebuf)));
		sx_reply_error(b, msg);
		return 400;
	}
	snap = sx_cache_snapshot(ex->cache);
	opts.profile = ex->profile;
	opts.snap = snap;
	opts.pool = ex->pool;
	opts.cache = ex->cache; /* read only: a pod group member's dry run */
	if (!snap || sx_explain(&opts, pod, b) < 0) {
		sx_reply_error(b, "out of memory");
		code = 500;
	}
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	return code;
}

/* ---------- dispatch ---------- */

static enum MHD_Result dispatch(struct sx_server *srv, struct MHD_Connection *conn,
				struct request *rq, const char *method)
{
	const struct route_def *r = &routes[rq->route];
	struct sx_verb_log log = {.pod = "", .result = ""};
	struct sx_buf b;
	unsigned code = 200;

	sx_buf_init(&b);
	/* A full-Node /filter echoes most of its body: start from a kept
	 * buffer of that size rather than doubling a fresh one. */
	if (r->verb_fn && rq->body.len > POOLED_MIN)
		sx_bufpool_take(&srv->bufs, &b, rq->body.len + 1);
	if (r->verb_fn)
		code = (unsigned)r->verb_fn(srv->ex, rq->body.data, rq->body.len, &b, &log);
	else if (r->handle)
		code = r->handle(srv, rq, &b);
	if (r->logged)
		sx_log(code == 200   ? 2
		       : code >= 500 ? 0
				     : 1,
		       "%s pod=%s nodes=%u code=%u result=%s duration=%.3fms", r->name,
		       log.pod[0] ? log.pod : "-", log.nnodes, code,
		       log.result[0] ? log.result : "ok",
		       (double)(sx_now_ns() - rq->start_ns) / 1e6);
	else
		sx_log(3, "%s %s code=%u", method, r->name, code);
	if (strcmp(method, MHD_HTTP_METHOD_HEAD) == 0)
		sx_buf_reset(&b);
	return send_buf(srv, conn, rq, code, &b, r->ctype, false);
}

/* ---------- TLS client certificates ---------- */

/* MHD asks for a client certificate when a trust store is set but does not
 * require or verify it; we verify once per connection. */
static bool client_cert_ok(struct sx_server *srv, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	struct conn_state *cs;
	unsigned int status = 0;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	cs = ci ? ci->socket_context : NULL;
	if (cs && cs->tls_checked)
		return cs->tls_ok;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	bool ok = ci && ci->tls_session && srv->verify_peers &&
		  srv->verify_peers(ci->tls_session, &status) == 0 && status == 0;
	if (cs) {
		cs->tls_checked = true;
		cs->tls_ok = ok;
	}
	return ok;
}

/* ---------- MHD callbacks ---------- */

static bool method_matches(enum route r, const char *method)
{
	/* /debug/explain: POST a Pod, or GET ?pod=NS/NAME for a pod of the cache */
	if ((r == R_EXPLAIN || r == R_WHATIF) && strcmp(method, MHD_HTTP_METHOD_GET) == 0)
		return true;
	if (routes[r].post)
		return strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
	       strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

/* Content-Length honoured up to this (a 500-Node body is ~2.5 MB); past
 * it the buffer grows with the data actually received, so a client cannot
 * make each of many idle connections reserve max_body bytes up front. */
#define PRESIZE_MAX ((size_t)4 << 20)

/* Gives b room for a body of n bytes (within the limit), so a 1.5 MB
 * body is not copied through a dozen doublings, from the pool so its
 * pages are not faulted in afresh. A failure leaves b empty: collect()
 * grows it as usual. */
static void presize(struct sx_server *srv, struct sx_buf *b, size_t n)
{
	size_t cap = (n < PRESIZE_MAX ? n : PRESIZE_MAX) + 1;
	char *p;

	if (cap > POOLED_MIN) {
		sx_bufpool_take(&srv->bufs, b, cap);
		return;
	}
	if (!(p = malloc(cap)))
		return;
	p[0] = '\0';
	sx_buf_free(b);
	b->data = p;
	b->cap = cap;
}

/* First call for a request: route, method, auth and size checks. */
static enum MHD_Result begin_request(struct sx_server *srv, struct MHD_Connection *conn,
				     struct request *rq, const char *url, const char *method)
{
	const char *cl;
	char msg[160];
	unsigned long long n = 0;

	/* Early replies close the connection only when an unread body may follow. */
	bool bodyless = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
			strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

	rq->route = find_route(srv, url);
	rq->get = bodyless;
	rq->conn = conn;
	if (srv->tls_client_auth && !client_cert_ok(srv, conn))
		return send_error(srv, conn, rq, 403, "a valid client certificate is required",
				  true);
	if (rq->route == R_NOT_FOUND) {
		snprintf(msg, sizeof(msg), "no such path: %.120s", url);
		return send_error(srv, conn, rq, 404, msg, !bodyless);
	}
	if (!method_matches(rq->route, method)) {
		snprintf(msg, sizeof(msg), "method %.20s not allowed on %s (use %s)", method,
			 routes[rq->route].name, routes[rq->route].post ? "POST" : "GET");
		return send_error(srv, conn, rq, 405, msg, !bodyless);
	}
	if (!routes[rq->route].verb && srv->authz) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		char why[400];
		unsigned code =
			sx_authz_check(srv->authz, routes[rq->route].path, method,
				       MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
								   MHD_HTTP_HEADER_AUTHORIZATION),
				       ci ? ci->client_addr : NULL, why, sizeof(why));
		if (code)
			return send_error(srv, conn, rq, code, why, !bodyless);
	}
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && sscanf(cl, "%llu", &n) == 1 && n > srv->max_body) {
		snprintf(msg, sizeof(msg),
			 "request body of %llu bytes exceeds the limit of %zu bytes", n,
			 srv->max_body);
		return send_error(srv, conn, rq, 413, msg, true);
	}
	if (cl && n > 0)
		presize(srv, &rq->body, (size_t)n);
	return MHD_YES;
}

/* Collects upload data, dropping it past the limit (the reply is 413 once
 * the body ends; a client that keeps sending far past it is cut off). */
static enum MHD_Result collect(struct sx_server *srv, struct request *rq, const char *data,
			       size_t size)
{
	if (!rq->too_big && rq->body.len + size > srv->max_body) {
		rq->too_big = true;
		sx_buf_free(&rq->body);
	}
	if (rq->too_big) {
		rq->discarded += size;
		return rq->discarded > 4 * srv->max_body + ((size_t)1 << 20) ? MHD_NO : MHD_YES;
	}
	sx_buf_put(&rq->body, data, size);
	return rq->body.failed ? MHD_NO : MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct sx_server *srv = cls;
	struct request *rq = *con_cls;
	char msg[160];

	if (!rq) {
		rq = sx_calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->start_ns = sx_now_ns();
		sx_buf_init(&rq->body);
		*con_cls = rq;
		atomic_fetch_add(&srv->inflight, 1);
		return begin_request(srv, conn, rq, url, method);
	}
	if (rq->replied) {
		*upload_data_size = 0; /* early reply queued: ignore the rest */
		return MHD_YES;
	}
	if (*upload_data_size) {
		enum MHD_Result r = collect(srv, rq, upload_data, *upload_data_size);

		*upload_data_size = 0;
		return r;
	}
	if (rq->too_big) {
		snprintf(msg, sizeof(msg), "request body exceeds the limit of %zu bytes",
			 srv->max_body);
		return send_error(srv, conn, rq, 413, msg, true);
	}
	return dispatch(srv, conn, rq, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct sx_server *srv = cls;
	struct request *rq = *con_cls;

	if (!rq)
		return;
	sx_bufpool_give_buf(&srv->bufs, &rq->body);
	free(rq);
	*con_cls = NULL;
	atomic_fetch_sub(&srv->inflight, 1);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *ci;
	int one = 1;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		free(*socket_context);
		*socket_context = NULL;
		return;
	}
	*socket_context = sx_calloc(1, sizeof(struct conn_state));
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	sx_log(2, "http: %s", msg);
}

/* ---------- start / stop ---------- */

/* "host:port", "[v6]:port", ":port" -> sockaddr. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen, bool *v6,
			struct sx_error *err)
{
	char host[256];
	const char *colon = strrchr(spec, ':'), *h = spec;
	size_t hlen;
	struct addrinfo hints = {0}, *ai = NULL;
	char *end;
	long port;

	if (!colon)
		return sx_error_set(err, SX_EINVAL, "--listen %s: expected ADDR:PORT", spec);
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return sx_error_set(err, SX_EINVAL, "--listen %s: bad port", spec);
	hlen = (size_t)(colon - spec);
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']')
		h++, hlen -= 2;
	if (hlen >= sizeof(host))
		return sx_error_set(err, SX_EINVAL, "--listen %s: address too long", spec);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(hlen ? host : NULL, colon + 1, &hints, &ai) != 0 || !ai)
		return sx_error_set(err, SX_EINVAL, "--listen %s: not a numeric IP address", spec);
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	*v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

/* The listening socket, made here rather than by MHD: MHD_start_daemon
 * only returns NULL when bind or listen fails, and its log line is the sole
 * place the reason appears. Doing it ourselves gives the errno text
 * ("cannot listen on 127.0.0.1:8888: Address already in use"), as
 * kube-scheduler's net.Listen error says. SO_REUSEADDR as MHD (and Go's
 * net.Listen) set it; IPv6 sockets take IPv6 only, as MHD_USE_IPv6 did. */
static int listen_socket(const char *spec, const struct sockaddr_storage *ss, socklen_t len,
			 bool v6, struct sx_error *err)
{
	int one = 1, fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		sx_error_set(err, SX_EIO, "cannot listen on %s: socket: %s", spec, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) != 0 || listen(fd, 1024) != 0) {
		sx_error_set(err, SX_EIO, "cannot listen on %s: %s", spec, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The server's families, and the handles of those it sets that others
 * declared before it starts (the framework's cache size; the standalone
 * loop's leader gauge and serve's leader_election_master_status). */
static void define_metrics(struct sx_server *srv, struct sx_metrics *m)
{
	srv->m.requests = sx_metrics_family(m, "schedext_http_requests_total", SX_METRIC_COUNTER,
					    "HTTP requests by verb and status code.", NULL, 0);
	srv->m.duration = sx_metrics_family(m, "schedext_http_request_duration_seconds",
					    SX_METRIC_HISTOGRAM, "HTTP request latency by verb.",
					    latency_buckets, SX_ARRAY_SIZE(latency_buckets));
	srv->m.nodes = sx_metrics_family(m, "schedext_cache_nodes", SX_METRIC_GAUGE,
					 "Nodes in the cache.", NULL, 0);
	srv->m.pods = sx_metrics_family(m, "schedext_cache_pods", SX_METRIC_GAUGE,
					"Pods in the cache by state.", NULL, 0);
	srv->m.restarts = sx_metrics_family(m, "schedext_watch_restarts_total", SX_METRIC_COUNTER,
					    "Watch restarts of the informers.", NULL, 0);
	srv->m.uptime = sx_metrics_family(m, "schedext_uptime_seconds", SX_METRIC_GAUGE,
					  "Seconds since the server started.", NULL, 0);
	sx_procstat_define(m, &srv->m.proc);
	srv->m.cache_size = sx_metrics_find(m, "scheduler_cache_size");
	srv->m.master_status = sx_metrics_find(m, "leader_election_master_status");
	srv->m.leader = sx_metrics_find(m, "schedext_leader");
}

struct sx_server *sx_server_start(const struct sx_server_opts *o, const struct sx_extender *ex,
				  struct sx_informers *inf, struct sx_error *err)
{
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	bool v6 = false;
	struct sx_server *srv;
	const union MHD_DaemonInfo *di;
	unsigned flags =
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_AUTO;
	unsigned threads = o->threads ? o->threads : 1;

	int fd;

	if (parse_listen(o->listen, &ss, &sslen, &v6, err) < 0)
		return NULL;
	srv = sx_calloc(1, sizeof(*srv));
	if (!srv) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if ((fd = listen_socket(o->listen, &ss, sslen, v6, err)) < 0) {
		free(srv);
		return NULL;
	}
	if (sx_bufpool_init(&srv->bufs, 2 * threads + 2, BUFPOOL_BUDGET) < 0) {
		sx_error_set(err, SX_ENOMEM, "cannot initialise the buffer pool");
		close(fd);
		free(srv);
		return NULL;
	}
	srv->ex = ex;
	srv->inf = inf;
	srv->max_body = o->max_body_bytes ? o->max_body_bytes : SX_SERVER_DEFAULT_MAX_BODY;
	if (o->lease_name)
		snprintf(srv->lease_label, sizeof(srv->lease_label), "name=\"%.250s\"",
			 o->lease_name);
	srv->state_paths = o->state_paths;
	srv->nstates = o->nstates;
	srv->debug_budget_s =
		o->debug_budget_s > 0 ? o->debug_budget_s : SX_SERVER_DEFAULT_DEBUG_BUDGET_S;
	srv->authz = o->authz;
	srv->started = sx_now_s();
	snprintf(srv->prefix, sizeof(srv->prefix), "%s", o->url_prefix ? o->url_prefix : "");
	while (srv->prefix[0] && srv->prefix[strlen(srv->prefix) - 1] == '/')
		srv->prefix[strlen(srv->prefix) - 1] = '\0';
	if (ex->metrics)
		define_metrics(srv, ex->metrics);
	if (v6)
		flags |= MHD_USE_IPv6;
	if (o->tls_cert_pem)
		flags |= MHD_USE_TLS;
	if (o->tls_client_ca_pem) {
		srv->tls_client_auth = true;
		*(void **)&srv->verify_peers =
			dlsym(RTLD_DEFAULT, "gnutls_certificate_verify_peers2");
		if (!srv->verify_peers) {
			sx_error_set(err, SX_EINVAL,
				     "--tls-client-ca: GnuTLS verification unavailable");
			close(fd);
			sx_bufpool_destroy(&srv->bufs);
			free(srv);
			return NULL;
		}
	}
	/* A list of options; TLS ones only when set (MHD rejects NULL PEMs). */
	struct MHD_OptionItem tls[] = {
		{o->tls_cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
		 (void *)o->tls_cert_pem},
		{o->tls_cert_pem ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0,
		 (void *)o->tls_key_pem},
		{o->tls_client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
		 (void *)o->tls_client_ca_pem},
		{MHD_OPTION_END, 0, NULL},
	};
	/* MHD_OPTION_ARRAY stops at the first END: compact the set ones. */
	unsigned k = 0;
	for (unsigned i = 0; i < 3; i++)
		if (tls[i].option != MHD_OPTION_END)
			tls[k++] = tls[i];
	tls[k] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

	srv->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_THREAD_POOL_SIZE, threads,
		MHD_OPTION_CONNECTION_LIMIT, o->max_connections ? o->max_connections : 1024,
		MHD_OPTION_CONNECTION_TIMEOUT,
		o->connection_timeout_s ? o->connection_timeout_s : 30,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
		MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!srv->daemon) {
		/* the socket listens: what failed is MHD's own setup, the TLS
		 * credentials above all (MHD logs the detail at -v=2) */
		sx_error_set(err, SX_EIO, "cannot serve on %s: %s", o->listen,
			     o->tls_cert_pem ? "the TLS certificate or key is unusable"
					     : "libmicrohttpd failed to start (see -v=2)");
		/* fd is not closed here: whether MHD closed it is its business */
		sx_bufpool_destroy(&srv->bufs);
		free(srv);
		return NULL;
	}
	di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = di ? di->port : 0;
	if (!srv->port) { /* port 0: the one the kernel chose */
		sslen = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0)
			srv->port = ntohs(ss.ss_family == AF_INET6
						  ? ((struct sockaddr_in6 *)&ss)->sin6_port
						  : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return srv;
}

uint16_t sx_server_port(const struct sx_server *srv)
{
	return srv->port;
}

void sx_server_stop(struct sx_server *srv, double grace_s)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	double deadline;
	MHD_socket s;

	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	s = MHD_quiesce_daemon(srv->daemon);
	if (s != MHD_INVALID_SOCKET)
		close(s);
	deadline = sx_now_s() + grace_s;
	while (atomic_load(&srv->inflight) > 0 && sx_now_s() < deadline)
		nanosleep(&ts, NULL);
	if (atomic_load(&srv->inflight) > 0)
		sx_log(0, "shutdown: %d request(s) still in flight after %.0fs",
		       atomic_load(&srv->inflight), grace_s);
	MHD_stop_daemon(srv->daemon);
	sx_bufpool_destroy(&srv->bufs);
	free(srv);
}
