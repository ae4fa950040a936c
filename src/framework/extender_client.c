/* The HTTP client side of the extender protocol (extender/v1 types;
 * upstream pkg/scheduler/extender.go and the
 * extender parts of schedule_one.go and preemption.go).
 *
 * Ownership: struct sx_extenders owns one struct ext per configured
 * extender (the configuration itself is borrowed) and, per extender, a few
 * idle curl easy handles: a call borrows one for its duration, so each
 * concurrent caller (scheduling thread, bind workers) keeps its own
 * kept-alive connection. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/preemption.h"

#define IDLE_HANDLES	      8
#define MAX_REPLY_BYTES	      ((size_t)64 << 20)
#define MAX_EXTENDER_PRIORITY 10 /* extenderv1.MaxExtenderPriority */

struct ext {
	const struct sx_extender_cfg *cfg;
	char *base; /* urlPrefix without trailing '/' */
	/* tlsConfig.serverName: curl's URL names serverName (SNI, the
	 * certificate check and the Host header use it) and route dials
	 * base's host:port instead. Both NULL without it. */
	char *sni_base;
	struct curl_slist *route; /* "serverName:port:host:port" */
	pthread_mutex_t mu;
	CURL *idle[IDLE_HANDLES];
	int nidle;
};

struct sx_extenders {
	unsigned n;
	struct ext *ext; /* non-ignorable first, then ignorable */
	bool any_filter, any_prioritize;
	struct sx_metric *requests, *duration; /* NULL without a registry */
};

static int server_name_route(struct ext *e);

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---------- construction ---------- */

static void define_metrics(struct sx_extenders *x, struct sx_metrics *m)
{
	/* 1 ms .. 16 s, doubling: httpTimeout defaults to 5 s */
	double buckets[15];

	for (unsigned i = 0; i < SX_ARRAY_SIZE(buckets); i++)
		buckets[i] = 0.001 * (double)(1u << i);
	x->requests = sx_metrics_family(
		m, "schedext_extender_requests_total", SX_METRIC_COUNTER,
		"Calls to configured extenders, by extender, verb and result.", NULL, 0);
	x->duration = sx_metrics_family(
		m, "schedext_extender_request_duration_seconds", SX_METRIC_HISTOGRAM,
		"Round-trip time of calls to configured extenders, by extender and verb.", buckets,
		SX_ARRAY_SIZE(buckets));
}

struct sx_extenders *sx_extenders_new(const struct sx_extender_cfg *cfgs, unsigned n,
				      struct sx_metrics *metrics, struct sx_error *err)
{
	struct sx_extenders *x;
	unsigned k = 0;

	if (n == 0)
		return NULL;
	pthread_once(&curl_once, curl_init_once);
	x = sx_calloc(1, sizeof(*x));
	if (x)
		x->ext = sx_calloc(n, sizeof(*x->ext));
	if (!x || !x->ext) {
		free(x);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < n; i++) {
			struct ext *e;
			size_t len;

			if (cfgs[i].ignorable != (pass == 1))
				continue;
			e = &x->ext[k++];
			e->cfg = &cfgs[i];
			e->base = sx_strdup(cfgs[i].url_prefix);
			len = e->base ? strlen(e->base) : 0;
			while (len > 0 && e->base[len - 1] == '/')
				e->base[--len] = '\0';
			pthread_mutex_init(&e->mu, NULL);
			x->any_filter |= cfgs[i].filter_verb != NULL;
			x->any_prioritize |= cfgs[i].prioritize_verb != NULL;
		}
	}
	x->n = k;
	if (metrics)
		define_metrics(x, metrics);
	for (unsigned i = 0; i < k; i++) {
		if (!x->ext[i].base || server_name_route(&x->ext[i])) {
			sx_extenders_free(x);
			sx_error_set(err, SX_ENOMEM, "out of memory");
			return NULL;
		}
	}
	return x;
}

/* makeTransport's tlsConfig.serverName (Go's tls.Config.ServerName): the
 * extender's certificate is verified against serverName while the URL's
 * host is dialled. 0, or SX_ENOMEM. */
static int server_name_route(struct ext *e)
{
	const char *sn = e->cfg->tls.server_name, *rest;
	char host[300], port[16], line[700];
	size_t n;

	if (!e->cfg->has_tls || !sn || !*sn || strncmp(e->base, "https://", 8) != 0)
		return 0;
	sx_url_hostport(e->base, host, sizeof(host), port, sizeof(port), &rest);
	n = strlen(sn) + strlen(port) + strlen(rest) + 16;
	e->sni_base = malloc(n);
	if (!e->sni_base)
		return SX_ENOMEM;
	snprintf(e->sni_base, n, "https://%s:%s%s", sn, port, rest);
	snprintf(line, sizeof(line), "%s:%s:%s:%s", sn, port, host, port);
	e->route = curl_slist_append(NULL, line);
	return e->route ? 0 : SX_ENOMEM;
}

void sx_extenders_free(struct sx_extenders *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->n; i++) {
		for (int j = 0; j < x->ext[i].nidle; j++)
			curl_easy_cleanup(x->ext[i].idle[j]);
		pthread_mutex_destroy(&x->ext[i].mu);
		free(x->ext[i].base);
		free(x->ext[i].sni_base);
		curl_slist_free_all(x->ext[i].route);
	}
	free(x->ext);
	free(x);
}

bool sx_extenders_affect_search(const struct sx_extenders *x)
{
	return x && (x->any_filter || x->any_prioritize);
}

/* ---------- IsInterested ---------- */

static bool manages(const struct ext *e, sx_str name)
{
	const char *s = sx_str_get(name);

	for (unsigned i = 0; i < e->cfg->nmanaged; i++)
		if (strcmp(e->cfg->managed[i].name, s) == 0)
			return true;
	return false;
}

static bool containers_use(const struct ext *e, const struct sx_container *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < c[i].requests.nscalar; j++)
			if (manages(e, c[i].requests.scalar[j].name))
				return true;
		for (uint32_t j = 0; j < c[i].limits.nscalar; j++)
			if (manages(e, c[i].limits.scalar[j].name))
				return true;
	}
	return false;
}

static bool interested(const struct ext *e, const struct sx_pod *pod)
{
	if (e->cfg->nmanaged == 0)
		return true;
	return containers_use(e, pod->containers, pod->ncontainers) ||
	       containers_use(e, pod->init_containers, pod->ninit);
}

bool sx_extenders_interested(const struct sx_extenders *x, const struct sx_pod *pod)
{
	for (unsigned i = 0; x && i < x->n; i++)
		if (interested(&x->ext[i], pod))
			return true;
	return false;
}

/* ---------- transport ---------- */

static CURL *handle_get(struct ext *e)
{
	CURL *h = NULL;

	pthread_mutex_lock(&e->mu);
	if (e->nidle > 0)
		h = e->idle[--e->nidle];
	pthread_mutex_unlock(&e->mu);
	return h ? h : curl_easy_init();
}

static void handle_put(struct ext *e, CURL *h)
{
	pthread_mutex_lock(&e->mu);
	if (e->nidle < IDLE_HANDLES) {
		e->idle[e->nidle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&e->mu);
	if (h)
		curl_easy_cleanup(h);
}

/* makeTransport: tlsConfig as given; enableHTTPS without a CA turns
 * verification off. */
static void set_tls(const struct sx_extender_cfg *c, CURL *h)
{
	const struct sx_extender_tls *t = &c->tls;
	bool has_ca = t->ca_file || t->ca_data;

	if (t->insecure || (c->enable_https && !has_ca)) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	sx_curl_set_pems(h, &(struct sx_tls_pems){.ca_data = t->ca_data,
						  .ca_len = t->ca_len,
						  .ca_file = t->ca_file,
						  .cert_data = t->cert_data,
						  .cert_len = t->cert_len,
						  .cert_file = t->cert_file,
						  .key_data = t->key_data,
						  .key_len = t->key_len,
						  .key_file = t->key_file});
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct sx_buf *b = ctx;

	if (b->len + size * n > MAX_REPLY_BYTES)
		return 0;
	sx_buf_put(b, data, size * n);
	return b->failed ? 0 : size * n;
}

/* Go's wording for a failed round trip: `Post "<url>": <why>`. */
static void transport_error(CURLcode rc, const char *url, const char *ebuf, struct sx_error *err)
{
	const char *why = ebuf[0] ? ebuf : curl_easy_strerror(rc);

	if (rc == CURLE_OPERATION_TIMEDOUT)
		why = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
	sx_error_set(err, SX_EIO, "Post \"%s\": %s", url, why);
}

/* One call: its result and its round-trip time (transport and decoding),
 * so that a slow extender shows in the dashboards before it times out. */
static void count(struct sx_extenders *x, const struct ext *e, const char *verb, const char *result,
		  double start)
{
	char labels[600], esc[400];
	int n;

	if (!x->requests)
		return;
	n = snprintf(labels, sizeof(labels), "extender=\"%s\",verb=\"%s\"",
		     sx_metrics_label_escape(e->cfg->url_prefix, esc, sizeof(esc)), verb);
	sx_metric_observe(x->duration, labels, sx_now_s() - start);
	snprintf(labels + n, sizeof(labels) - (size_t)n, ",result=\"%s\"", result);
	sx_metric_inc(x->requests, labels, 1);
}

/* send(): POSTs body to <base>/<verb>; 0 and the decoded reply (caller
 * deletes) on a 200 with a JSON body, else negative with Go's message. */
static int send_verb(struct sx_extenders *x, struct ext *e, const char *verb,
		     const struct sx_buf *body, cJSON **reply, struct sx_error *err)
{
	char url[2048], curl_url[2048], ebuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	struct sx_buf resp;
	CURL *h = handle_get(e);
	long status = 0;
	CURLcode rc;
	int ret = 0;
	double start = sx_now_s();

	*reply = NULL;
	snprintf(url, sizeof(url), "%s/%s", e->base, verb);
	snprintf(curl_url, sizeof(curl_url), "%s/%s", e->sni_base ? e->sni_base : e->base, verb);
	if (!h || !hdrs || body->failed) {
		curl_slist_free_all(hdrs);
		if (h)
			curl_easy_cleanup(h);
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	sx_buf_init(&resp);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, curl_url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(e->cfg->http_timeout_s * 1000 + 0.5));
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "schedext/" SX_VERSION);
	if (e->route)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, e->route);
	set_tls(e->cfg, h);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	handle_put(e, h);
	if (rc != CURLE_OK) {
		transport_error(rc, url, ebuf, err);
		ret = SX_EIO;
	} else if (status != 200) {
		ret = sx_error_set(err, SX_EIO, "failed %s with extender at URL %s, code %ld", verb,
				   url, status);
	} else if (resp.failed) {
		ret = sx_error_set(err, SX_ENOMEM, "out of memory");
	} else {
		const char *end = NULL, *p = resp.data ? resp.data : "";
		size_t n = resp.len;

		while (n > 0 && strchr(" \t\r\n", *p)) {
			p++;
			n--;
		}
		*reply = n ? cJSON_ParseWithLengthOpts(p, n, &end, false) : NULL;
		if (!*reply)
			ret = n == 0 ? sx_error_set(err, SX_EINVAL, "EOF")
				     : sx_error_set(err, SX_EINVAL,
						    "invalid character '%c' looking for beginning "
						    "of value",
						    *p);
	}
	sx_buf_free(&resp);
	count(x, e, verb, ret ? "error" : "success", start);
	return ret;
}

/* "json: cannot unmarshal <kind> into Go value of type <type>" */
static int shape_error(const cJSON *v, const char *type, struct sx_error *err)
{
	const char *kind = cJSON_IsArray(v)    ? "array"
			   : cJSON_IsObject(v) ? "object"
			   : cJSON_IsString(v) ? "string"
			   : cJSON_IsNumber(v) ? "number"
			   : cJSON_IsBool(v)   ? "bool"
					       : "null";

	return sx_error_set(err, SX_EINVAL, "json: cannot unmarshal %s into Go value of type %s",
			    kind, type);
}

/* ---------- request bodies ---------- */

/* The object as received, or a minimal stand-in when it was not kept. */
static void put_pod(struct sx_jw *w, const struct sx_pod *pod)
{
	if (pod->meta.raw) {
		sx_jw_raw(w, pod->meta.raw, strlen(pod->meta.raw));
		return;
	}
	sx_jw_object(w);
	sx_jw_kobject(w, "metadata");
	sx_jw_kstr(w, "name", pod->meta.name);
	sx_jw_kstr(w, "namespace", sx_str_get(pod->meta.ns));
	sx_jw_kstr(w, "uid", pod->meta.uid);
	sx_jw_end_object(w);
	sx_jw_kobject(w, "spec");
	sx_jw_kstr(w, "schedulerName", sx_str_get(pod->scheduler_name));
	sx_jw_end_object(w);
	sx_jw_end_object(w);
}

static void put_node(struct sx_jw *w, const struct sx_node_info *ni)
{
	if (ni->node && ni->node->meta.raw) {
		sx_jw_raw(w, ni->node->meta.raw, strlen(ni->node->meta.raw));
		return;
	}
	sx_jw_object(w);
	sx_jw_kobject(w, "metadata");
	sx_jw_kstr(w, "name", sx_str_get(ni->name));
	sx_jw_end_object(w);
	sx_jw_end_object(w);
}

/* ExtenderArgs {Pod, Nodes, NodeNames} for the snapshot indices idx[]. */
static void put_args(struct sx_buf *b, const struct ext *e, const struct sx_pod *pod,
		     const struct sx_snapshot *snap, const uint32_t *idx, uint32_t n)
{
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_key(&w, "Pod");
	put_pod(&w, pod);
	if (e->cfg->node_cache_capable) {
		sx_jw_key(&w, "Nodes");
		sx_jw_null(&w);
		sx_jw_karray(&w, "NodeNames");
		for (uint32_t i = 0; i < n; i++)
			sx_jw_str(&w, sx_str_get(snap->nodes[idx[i]]->name));
		sx_jw_end_array(&w);
	} else {
		sx_jw_kobject(&w, "Nodes");
		sx_jw_kobject(&w, "metadata");
		sx_jw_end_object(&w);
		sx_jw_karray(&w, "items");
		for (uint32_t i = 0; i < n; i++)
			put_node(&w, snap->nodes[idx[i]]);
		sx_jw_end_array(&w);
		sx_jw_end_object(&w);
		sx_jw_key(&w, "NodeNames");
		sx_jw_null(&w);
	}
	sx_jw_end_object(&w);
}

/* Snapshot index of a node name from a reply (never interns), or -1. */
static int find_node(const struct sx_snapshot *snap, const char *name)
{
	sx_str id = sx_intern_lookup_n(name, strlen(name));

	return id == SX_STR_EMPTY ? -1 : sx_snapshot_find(snap, id);
}

/* ---------- filter ---------- */

struct filter_ctx {
	const struct sx_snapshot *snap;
	struct sx_cycle_result *res;
	uint8_t *in_input; /* [nnodes]: 1 = sent to this extender */
};

static void set_status(struct sx_cycle_result *res, int at, enum sx_code code, const char *msg)
{
	struct sx_status *st = sx_status_new(code, "%s", msg);

	if (!st)
		return;
	st->plugin = "Extender";
	sx_status_free(res->statuses[at]);
	res->statuses[at] = st;
}

/* Records FailedAndUnresolvableNodes, then FailedNodes not in it. */
static void record_failed(struct filter_ctx *f, const cJSON *failed, const cJSON *unresolvable)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, unresolvable)
	{
		int at = find_node(f->snap, it->string);

		if (at >= 0 && cJSON_IsString(it))
			set_status(f->res, at, SX_UNSCHEDULABLE_AND_UNRESOLVABLE, it->valuestring);
	}
	cJSON_ArrayForEach(it, failed)
	{
		int at = find_node(f->snap, it->string);

		if (at < 0 || !cJSON_IsString(it) ||
		    (cJSON_IsObject(unresolvable) && cJSON_GetObjectItem(unresolvable, it->string)))
			continue;
		set_status(f->res, at, SX_UNSCHEDULABLE, it->valuestring);
	}
}

/* Passing set from the reply into res->feasible; marks dropped nodes. */
static int apply_filter_reply(struct ext *e, struct filter_ctx *f, const cJSON *reply,
			      struct sx_error *err)
{
	const cJSON *names = cJSON_GetObjectItem(reply, "NodeNames");
	const cJSON *nodes = cJSON_GetObjectItem(reply, "Nodes"), *it;
	struct sx_cycle_result *res = f->res;
	uint32_t k = 0;

	if (e->cfg->node_cache_capable && names && !cJSON_IsNull(names)) {
		if (!cJSON_IsArray(names))
			return shape_error(names, "[]string", err);
		cJSON_ArrayForEach(it, names)
		{
			int at = cJSON_IsString(it) ? find_node(f->snap, it->valuestring) : -1;

			if (at < 0 || f->in_input[at] != 1)
				return sx_error_set(err, SX_EINVAL,
						    "extender \"%s\" claims a filtered node \"%s\" "
						    "which is not found in the input node list",
						    e->cfg->url_prefix,
						    cJSON_IsString(it) ? it->valuestring : "");
			f->in_input[at] = 2;
		}
	} else if (nodes && !cJSON_IsNull(nodes)) {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(nodes, "items"))
		{
			const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
			int at = cJSON_IsString(name) ? find_node(f->snap, name->valuestring) : -1;

			if (at >= 0 && f->in_input[at] == 1)
				f->in_input[at] = 2;
		}
	}
	for (uint32_t i = 0; i < res->nfeasible; i++) {
		uint32_t at = res->feasible[i];

		if (f->in_input[at] == 2)
			res->feasible[k++] = at;
		f->in_input[at] = 0;
	}
	res->nfeasible = k;
	return 0;
}

static int filter_one(struct sx_extenders *x, struct ext *e, const struct sx_pod *pod,
		      struct filter_ctx *f, struct sx_error *err)
{
	struct sx_cycle_result *res = f->res;
	const cJSON *error;
	cJSON *reply;
	struct sx_buf b;
	int rc;

	sx_buf_init(&b);
	put_args(&b, e, pod, f->snap, res->feasible, res->nfeasible);
	rc = send_verb(x, e, e->cfg->filter_verb, &b, &reply, err);
	sx_buf_free(&b);
	if (rc)
		return rc;
	error = cJSON_GetObjectItem(reply, "Error");
	if (!cJSON_IsObject(reply))
		rc = shape_error(reply, "v1.ExtenderFilterResult", err);
	else if (cJSON_IsString(error) && error->valuestring[0])
		rc = sx_error_set(err, SX_EIO, "%s", error->valuestring);
	if (rc == 0) {
		for (uint32_t i = 0; i < res->nfeasible; i++)
			f->in_input[res->feasible[i]] = 1;
		rc = apply_filter_reply(e, f, reply, err);
		for (uint32_t i = 0; rc && i < res->nfeasible; i++)
			f->in_input[res->feasible[i]] = 0;
	}
	if (rc == 0)
		record_failed(f, cJSON_GetObjectItem(reply, "FailedNodes"),
			      cJSON_GetObjectItem(reply, "FailedAndUnresolvableNodes"));
	cJSON_Delete(reply);
	return rc;
}

int sx_extenders_filter(struct sx_extenders *x, const struct sx_pod *pod,
			struct sx_cycle_result *res)
{
	const struct sx_snapshot *snap = res->state->snap;
	struct filter_ctx f = {snap, res, NULL};

	if (!x || !x->any_filter || res->nfeasible == 0)
		return 0;
	f.in_input = sx_calloc(snap->nnodes ? snap->nnodes : 1, 1);
	if (!f.in_input)
		return SX_ENOMEM;
	for (unsigned i = 0; i < x->n && res->nfeasible > 0; i++) {
		struct ext *e = &x->ext[i];
		struct sx_error err = {0};

		if (!e->cfg->filter_verb || !interested(e, pod))
			continue;
		if (filter_one(x, e, pod, &f, &err) == 0)
			continue;
		if (e->cfg->ignorable) {
			sx_log(1,
			       "Skipping extender as it returned error and has ignorable flag "
			       "set: extender %s: %s",
			       e->cfg->url_prefix, err.msg);
			continue;
		}
		res->error = sx_status_new(SX_ERROR, "%s", err.msg);
		res->nfeasible = 0;
		break;
	}
	free(f.in_input);
	return 0;
}

/* ---------- prioritize ---------- */

struct prio_job {
	struct sx_extenders *x;
	struct ext *e;
	const struct sx_pod *pod;
	const struct sx_cycle_result *res;
	const int32_t *pos; /* snapshot index -> feasible position, -1 */
	int64_t *add;	    /* [nfeasible] this extender's contribution */
	pthread_t thread;
	bool started;
};

static void *prioritize_one(void *arg)
{
	struct prio_job *j = arg;
	const struct sx_snapshot *snap = j->res->state->snap;
	struct sx_error err = {0};
	const cJSON *it;
	cJSON *reply;
	struct sx_buf b;
	int rc;

	sx_buf_init(&b);
	put_args(&b, j->e, j->pod, snap, j->res->feasible, j->res->nfeasible);
	rc = send_verb(j->x, j->e, j->e->cfg->prioritize_verb, &b, &reply, &err);
	sx_buf_free(&b);
	if (rc == 0 && !cJSON_IsArray(reply))
		rc = shape_error(reply, "v1.HostPriorityList", &err);
	if (rc) {
		sx_log(5,
		       "Failed to run extender's priority function. No score given by this "
		       "extender: extender %s: %s",
		       j->e->cfg->url_prefix, err.msg);
		cJSON_Delete(reply);
		return NULL;
	}
	cJSON_ArrayForEach(it, reply)
	{
		const cJSON *host = cJSON_GetObjectItem(it, "Host");
		const cJSON *score = cJSON_GetObjectItem(it, "Score");
		int at = cJSON_IsString(host) ? find_node(snap, host->valuestring) : -1;

		int64_t inc, sum;

		if (at < 0 || j->pos[at] < 0 || !cJSON_IsNumber(score) ||
		    !sx_double_is_int64(score->valuedouble))
			continue; /* a score no int64 holds cannot be decoded, as upstream */
		if (__builtin_mul_overflow((int64_t)score->valuedouble, j->e->cfg->weight, &inc) ||
		    __builtin_mul_overflow(inc, SX_MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY, &inc) ||
		    __builtin_add_overflow(j->add[j->pos[at]], inc, &sum))
			continue; /* no wrap-around into a nonsense total */
		j->add[j->pos[at]] = sum;
	}
	cJSON_Delete(reply);
	return NULL;
}

void sx_extenders_prioritize(struct sx_extenders *x, const struct sx_pod *pod,
			     struct sx_cycle_result *res)
{
	const struct sx_snapshot *snap = res->state->snap;
	struct prio_job *jobs;
	int32_t *pos;
	unsigned nj = 0;

	if (!x || !x->any_prioritize || res->nfeasible == 0 || !res->totals)
		return;
	jobs = sx_calloc(x->n, sizeof(*jobs));
	pos = malloc(sizeof(*pos) * (snap->nnodes ? snap->nnodes : 1));
	if (!jobs || !pos)
		goto out;
	for (uint32_t i = 0; i < snap->nnodes; i++)
		pos[i] = -1;
	for (uint32_t i = 0; i < res->nfeasible; i++)
		pos[res->feasible[i]] = (int32_t)i;
	for (unsigned i = 0; i < x->n; i++) {
		struct ext *e = &x->ext[i];
		struct prio_job *j = &jobs[nj];

		if (!e->cfg->prioritize_verb || !interested(e, pod))
			continue;
		*j = (struct prio_job){
			x, e, pod, res, pos, sx_calloc(res->nfeasible, sizeof(int64_t)), 0, false};
		if (!j->add)
			continue;
		nj++;
	}
	/* In parallel as upstream; the last one runs on this thread. */
	for (unsigned i = 0; i + 1 < nj; i++)
		jobs[i].started =
			pthread_create(&jobs[i].thread, NULL, prioritize_one, &jobs[i]) == 0;
	for (unsigned i = 0; i < nj; i++)
		if (!jobs[i].started)
			prioritize_one(&jobs[i]);
	for (unsigned i = 0; i < nj; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].thread, NULL);
		for (uint32_t k = 0; k < res->nfeasible; k++)
			res->totals[k] += jobs[i].add[k];
		free(jobs[i].add);
	}
out:
	free(pos);
	free(jobs);
}

/* ---------- bind ---------- */

static int bind_one(struct sx_extenders *x, struct ext *e, const struct sx_pod *pod, sx_str node,
		    struct sx_error *err)
{
	const cJSON *error;
	cJSON *reply;
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "PodName", pod->meta.name);
	sx_jw_kstr(&w, "PodNamespace", sx_str_get(pod->meta.ns));
	sx_jw_kstr(&w, "PodUID", pod->meta.uid);
	sx_jw_kstr(&w, "Node", sx_str_get(node));
	sx_jw_end_object(&w);
	rc = send_verb(x, e, e->cfg->bind_verb, &b, &reply, err);
	sx_buf_free(&b);
	if (rc)
		return rc;
	error = cJSON_GetObjectItem(reply, "Error");
	if (!cJSON_IsObject(reply))
		rc = shape_error(reply, "v1.ExtenderBindingResult", err);
	else if (cJSON_IsString(error) && error->valuestring[0])
		rc = sx_error_set(err, SX_EIO, "%s", error->valuestring);
	cJSON_Delete(reply);
	return rc;
}

struct sx_status *sx_extenders_bind(struct sx_extenders *x, const struct sx_pod *pod, sx_str node,
				    bool *bound)
{
	*bound = false;
	for (unsigned i = 0; x && i < x->n; i++) {
		struct ext *e = &x->ext[i];
		struct sx_error err = {0};

		if (!e->cfg->bind_verb || !interested(e, pod))
			continue;
		if (bind_one(x, e, pod, node, &err) == 0) {
			*bound = true;
			return NULL;
		}
		if (e->cfg->ignorable) {
			sx_log(1,
			       "Skipping extender in bind as it returned error and has ignorable "
			       "flag set: extender %s: %s",
			       e->cfg->url_prefix, err.msg);
			continue;
		}
		*bound = true;
		return sx_status_new(SX_ERROR, "%s", err.msg);
	}
	return NULL;
}

/* ---------- preempt ---------- */

/* NodeNameToVictims (full pods) or NodeNameToMetaVictims (UIDs, for a
 * nodeCacheCapable extender), the other null. */
static void put_victims(struct sx_jw *w, const struct ext *e, const struct sx_preempt_candidate *c,
			uint32_t n)
{
	bool meta = e->cfg->node_cache_capable;

	if (meta) {
		sx_jw_key(w, "NodeNameToVictims");
		sx_jw_null(w);
	}
	sx_jw_kobject(w, meta ? "NodeNameToMetaVictims" : "NodeNameToVictims");
	for (uint32_t i = 0; i < n; i++) {
		sx_jw_kobject(w, sx_str_get(c[i].node));
		sx_jw_karray(w, "Pods");
		for (uint32_t k = 0; k < c[i].victims.n; k++) {
			const struct sx_pod *v = c[i].victims.pods[k];

			if (meta) {
				sx_jw_object(w);
				sx_jw_kstr(w, "UID", v->meta.uid);
				sx_jw_end_object(w);
			} else {
				put_pod(w, v);
			}
		}
		sx_jw_end_array(w);
		sx_jw_kint(w, "NumPDBViolations", c[i].victims.num_pdb_violations);
		sx_jw_end_object(w);
	}
	sx_jw_end_object(w);
	if (!meta) {
		sx_jw_key(w, "NodeNameToMetaVictims");
		sx_jw_null(w);
	}
}

/* convertToVictims for one node: UIDs to the pods of that node. */
static int resolve_victims(const struct ext *e, const struct sx_node_info *ni, const cJSON *mv,
			   struct sx_victims *out, struct sx_error *err)
{
	const cJSON *pods = cJSON_GetObjectItem(mv, "Pods"), *it;
	const cJSON *pdb = cJSON_GetObjectItem(mv, "NumPDBViolations");
	uint32_t cap = (uint32_t)cJSON_GetArraySize(pods);

	memset(out, 0, sizeof(*out));
	out->num_pdb_violations =
		cJSON_IsNumber(pdb) && pdb->valuedouble > 0 ? (uint32_t)pdb->valuedouble : 0;
	out->pods = sx_calloc(cap ? cap : 1, sizeof(*out->pods));
	if (!out->pods)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, pods)
	{
		const cJSON *uid = cJSON_GetObjectItem(it, "UID");
		const char *u = cJSON_IsString(uid) ? uid->valuestring : "";
		const struct sx_pod *found = NULL;

		for (uint32_t k = 0; k < ni->npods && !found; k++)
			if (ni->pods[k]->meta.uid && strcmp(ni->pods[k]->meta.uid, u) == 0)
				found = ni->pods[k];
		if (!found)
			return sx_error_set(err, SX_EINVAL,
					    "extender: %s claims to preempt pod (UID: &{%s}) on "
					    "node: %s, but the pod is not found on that node",
					    e->cfg->url_prefix, u, sx_str_get(ni->name));
		out->pods[out->n++] = sx_pod_ref(found);
	}
	return 0;
}

/* The reply's NodeNameToMetaVictims as new candidates; nodes without
 * victims are dropped (ignorable) or an error. */
static int convert_reply(const struct ext *e, const struct sx_snapshot *snap, const cJSON *reply,
			 struct sx_preempt_candidate **out, uint32_t *nout, struct sx_error *err)
{
	const cJSON *map = cJSON_GetObjectItem(reply, "NodeNameToMetaVictims"), *it;
	uint32_t cap = (uint32_t)cJSON_GetArraySize(map), n = 0;
	struct sx_preempt_candidate *c = sx_calloc(cap ? cap : 1, sizeof(*c));
	int rc = c ? 0 : sx_error_set(err, SX_ENOMEM, "out of memory");

	const cJSON *objmap = cJSON_IsObject(map) ? map : NULL;

	cJSON_ArrayForEach(it, objmap)
	{
		int at = find_node(snap, it->string);

		if (rc)
			break;
		if (at < 0) {
			rc = sx_error_set(err, SX_ENOENT, "nodeinfo not found for node name \"%s\"",
					  it->string);
			break;
		}
		rc = resolve_victims(e, snap->nodes[at], it, &c[n].victims, err);
		c[n].node = snap->nodes[at]->name;
		n++;
		if (!rc && c[n - 1].victims.n == 0) {
			if (!e->cfg->ignorable) {
				rc = sx_error_set(err, SX_EINVAL,
						  "expected at least one victim pod on node \"%s\"",
						  it->string);
				break;
			}
			sx_log(1, "Ignored node %s for which the extender %s didn't report victims",
			       it->string, e->cfg->url_prefix);
			sx_victims_free(&c[--n].victims);
		}
	}
	if (rc) {
		sx_preempt_candidates_free(c, n);
		return rc;
	}
	*out = c;
	*nout = n;
	return 0;
}

static int preempt_one(struct sx_extenders *x, struct ext *e, const struct sx_pod *pod,
		       const struct sx_snapshot *snap, struct sx_preempt_candidate **cands,
		       uint32_t *ncands, struct sx_error *err)
{
	struct sx_preempt_candidate *next = NULL;
	uint32_t nnext = 0;
	cJSON *reply;
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_key(&w, "Pod");
	put_pod(&w, pod);
	put_victims(&w, e, *cands, *ncands);
	sx_jw_end_object(&w);
	rc = send_verb(x, e, e->cfg->preempt_verb, &b, &reply, err);
	sx_buf_free(&b);
	if (rc)
		return rc;
	rc = cJSON_IsObject(reply) ? convert_reply(e, snap, reply, &next, &nnext, err)
				   : shape_error(reply, "v1.ExtenderPreemptionResult", err);
	cJSON_Delete(reply);
	if (rc)
		return rc;
	sx_preempt_candidates_free(*cands, *ncands);
	*cands = next;
	*ncands = nnext;
	return 0;
}

struct sx_status *sx_extenders_preempt(struct sx_extenders *x, const struct sx_pod *pod,
				       const struct sx_snapshot *snap,
				       struct sx_preempt_candidate **cands, uint32_t *ncands)
{
	for (unsigned i = 0; x && i<x->n && * ncands> 0; i++) {
		struct ext *e = &x->ext[i];
		struct sx_error err = {0};

		if (!e->cfg->preempt_verb || !interested(e, pod))
			continue;
		if (preempt_one(x, e, pod, snap, cands, ncands, &err) == 0)
			continue;
		if (e->cfg->ignorable) {
			sx_log(1,
			       "Skipped extender as it returned error and has ignorable flag set: "
			       "extender %s: %s",
			       e->cfg->url_prefix, err.msg);
			continue;
		}
		return sx_status_new(SX_ERROR, "%s", err.msg);
	}
	return NULL;
}
