/* Kubernetes API client over libcurl (as client-go: rest/request.go retries
 * on 429 and 5xx, util/flowcontrol token bucket): construction, credentials, the
 * connection pool, requests with client-go's retry and backoff rules, and
 * the JSON write primitive; the writes themselves are in kube_writes.c,
 * kube_lease.c and kube_events.c.
 *
 * Ownership: struct sx_kube owns its resolved config, the cached bearer
 * token and a small pool of idle curl easy handles (kept so connections are
 * reused). Each request borrows one handle for its duration, so any number
 * of threads may issue requests at once; the token cache, the pool and the
 * QPS bucket each have their own mutex. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "schedext/buf.h"
#include "schedext/kube.h"

#define POOL_MAX	   8
#define TOKEN_TTL_NS	   (50ull * 1000000000ull)
#define MAX_RESPONSE_BYTES ((size_t)512 << 20)
#define MAX_ATTEMPTS	   8
#define MAX_TOKEN_HDR	   (64 * 1024 + 64)

struct sx_kube {
	struct sx_kube_config cfg;
	char *user_agent;
	struct sx_token_bucket bucket;
	pthread_mutex_t mu; /* guards token, token_ns, pool */
	char *token;	    /* last good token (file) or static token */
	uint64_t token_ns;  /* when token was read; 0 = re-read now */
	CURL *pool[POOL_MAX];
	int npool;
	struct curl_slist *connect_to; /* tls-server-name redirection, or NULL */
	struct sx_exec_auth *exec;     /* exec credential plugin's cache, or NULL */
};

static struct curl_slist *make_connect_to(const struct sx_kube_config *c);

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void sx_kube_throttle(struct sx_kube *kube, const atomic_bool *stop)
{
	uint64_t wait = sx_token_bucket_reserve(&kube->bucket, sx_now_ns());

	while (wait > 0 && !(stop && atomic_load(stop))) {
		uint64_t step = wait < 100000000ull ? wait : 100000000ull;

		sleep_ns(step);
		wait -= step;
	}
}

/* ---------- construction ---------- */

struct sx_kube *sx_kube_new(const struct sx_kube_opts *opts, struct sx_error *err)
{
	struct sx_kube *kube;
	char ua[256];

	pthread_once(&curl_once, curl_init_once);
	kube = sx_calloc(1, sizeof(*kube));
	if (!kube) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (sx_kubeconfig_resolve(opts ? opts->kubeconfig : NULL, opts ? opts->context : NULL,
				  &kube->cfg, err) != 0) {
		free(kube);
		return NULL;
	}
	if (kube->cfg.insecure)
		sx_log(0, "warning: insecure-skip-tls-verify is set: the API server's certificate "
			  "is not verified");
	sx_kube_user_agent(opts ? opts->user_agent_role : NULL, ua, sizeof(ua));
	kube->user_agent = sx_strdup(opts && opts->user_agent ? opts->user_agent : ua);
	sx_token_bucket_init(&kube->bucket, opts ? opts->qps : 0, opts ? opts->burst : 0,
			     sx_now_ns());
	pthread_mutex_init(&kube->mu, NULL);
	if (kube->cfg.token)
		kube->token = sx_strdup(kube->cfg.token);
	kube->connect_to = make_connect_to(&kube->cfg);
	/* client-go ignores exec when a token or client certificate is set. */
	if (kube->cfg.exec && !kube->cfg.token && !kube->cfg.token_file && !kube->cfg.cert_file &&
	    !kube->cfg.cert_data && !(kube->exec = sx_exec_auth_new(&kube->cfg))) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		sx_kube_free(kube);
		return NULL;
	}
	return kube;
}

void sx_kube_free(struct sx_kube *kube)
{
	if (!kube)
		return;
	for (int i = 0; i < kube->npool; i++)
		curl_easy_cleanup(kube->pool[i]);
	if (kube->token)
		memset(kube->token, 0, strlen(kube->token));
	free(kube->token);
	free(kube->user_agent);
	curl_slist_free_all(kube->connect_to);
	sx_exec_auth_free(kube->exec);
	sx_kube_config_clear(&kube->cfg);
	pthread_mutex_destroy(&kube->mu);
	pthread_mutex_destroy(&kube->bucket.mu);
	free(kube);
}

const char *sx_kube_server(const struct sx_kube *kube)
{
	return kube ? kube->cfg.server : "";
}

/* ---------- tokens ---------- */

void sx_kube_invalidate_token(struct sx_kube *kube)
{
	pthread_mutex_lock(&kube->mu);
	kube->token_ns = 0;
	pthread_mutex_unlock(&kube->mu);
	if (kube->exec)
		sx_exec_auth_invalidate(kube->exec, 0);
}

/* The exec plugin's error, prefixed as client-go's round tripper does. */
static int exec_auth(struct sx_kube *kube, CURL *h, char *auth, size_t len, uint64_t *gen,
		     struct sx_error *err)
{
	char msg[sizeof(err->msg)];

	if (sx_exec_auth_apply(kube->exec, h, auth, len, gen, err) == 0)
		return 0;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	return sx_error_set(err, SX_EINVAL, "getting credentials: %s", msg);
}

int sx_kube_authenticate(struct sx_kube *kube, struct sx_error *err)
{
	char auth[MAX_TOKEN_HDR];
	int rc = kube->exec ? exec_auth(kube, NULL, auth, sizeof(auth), NULL, err) : 0;

	memset(auth, 0, sizeof(auth));
	return rc;
}

/* "Authorization: Bearer ..." header into out, or "" without a token.
 * A token file is re-read after ~50 s or an invalidation; on read failure
 * the last good token stays. */
static void auth_header(struct sx_kube *kube, char *out, size_t len)
{
	uint64_t now = sx_now_ns();

	out[0] = '\0';
	pthread_mutex_lock(&kube->mu);
	if (kube->cfg.token_file && (kube->token_ns == 0 || now - kube->token_ns > TOKEN_TTL_NS)) {
		char *tok = sx_read_token_file(kube->cfg.token_file);

		if (tok) {
			free(kube->token);
			kube->token = tok;
		} else {
			sx_log(1, "cannot re-read token file %s; keeping the previous token",
			       kube->cfg.token_file);
		}
		kube->token_ns = now;
	}
	if (kube->token)
		snprintf(out, len, "Authorization: Bearer %s", kube->token);
	pthread_mutex_unlock(&kube->mu);
}

/* ---------- handles ---------- */

static CURL *pool_get(struct sx_kube *kube)
{
	CURL *h = NULL;

	pthread_mutex_lock(&kube->mu);
	if (kube->npool > 0)
		h = kube->pool[--kube->npool];
	pthread_mutex_unlock(&kube->mu);
	if (h)
		curl_easy_reset(h);
	else
		h = curl_easy_init();
	return h;
}

static void pool_put(struct sx_kube *kube, CURL *h)
{
	pthread_mutex_lock(&kube->mu);
	if (kube->npool < POOL_MAX) {
		kube->pool[kube->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&kube->mu);
	if (h)
		curl_easy_cleanup(h);
}

void sx_url_hostport(const char *url, char *host, size_t hlen, char *port, size_t plen,
		     const char **rest)
{
	const char *p = strstr(url, "://"), *end, *colon;
	bool tls = strncmp(url, "https", 5) == 0;

	p = p ? p + 3 : url;
	end = p + strcspn(p, "/");
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		colon = rb && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
	}
	snprintf(host, hlen, "%.*s", (int)((colon ? colon : end) - p), p);
	if (colon)
		snprintf(port, plen, "%.*s", (int)(end - colon - 1), colon + 1);
	else
		snprintf(port, plen, "%s", tls ? "443" : "80");
	if (rest)
		*rest = end;
}

/* Full URL for path. With tls-server-name the URL names that host (so
 * SNI and verification use it) and kube->connect_to sends the TCP
 * connection to the real address. */
static void build_url(struct sx_kube *kube, const char *path, char *url, size_t len)
{
	char host[256], port[16];
	const char *s = kube->cfg.server, *rest;

	if (!kube->cfg.tls_server_name) {
		snprintf(url, len, "%s%s", s, path);
		return;
	}
	sx_url_hostport(s, host, sizeof(host), port, sizeof(port), NULL);
	rest = strstr(s, "://");
	rest = rest ? rest + 3 : s;
	rest += strcspn(rest, "/");
	snprintf(url, len, "https://%s:%s%s%s", kube->cfg.tls_server_name, port, rest, path);
}

static struct curl_slist *make_connect_to(const struct sx_kube_config *c)
{
	char host[256], port[16], line[600];

	if (!c->tls_server_name)
		return NULL;
	sx_url_hostport(c->server, host, sizeof(host), port, sizeof(port), NULL);
	snprintf(line, sizeof(line), "%s:%s:%s:%s", c->tls_server_name, port, host, port);
	return curl_slist_append(NULL, line);
}

void sx_curl_set_pems(void *curl, const struct sx_tls_pems *p)
{
	CURL *h = curl;

	if (p->ca_data) {
		struct curl_blob b = {(void *)p->ca_data, p->ca_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	} else if (p->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, p->ca_file);
	}
	if (p->cert_data) {
		struct curl_blob b = {(void *)p->cert_data, p->cert_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (p->cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, p->cert_file);
	}
	if (p->key_data) {
		struct curl_blob b = {(void *)p->key_data, p->key_len, CURL_BLOB_COPY};

		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (p->key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, p->key_file);
	}
}

static void set_tls(struct sx_kube *kube, CURL *h)
{
	const struct sx_kube_config *c = &kube->cfg;

	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	sx_curl_set_pems(h, &(struct sx_tls_pems){.ca_data = c->ca_data,
						  .ca_len = c->ca_len,
						  .ca_file = c->ca_file,
						  .cert_data = c->cert_data,
						  .cert_len = c->cert_len,
						  .cert_file = c->cert_file,
						  .key_data = c->key_data,
						  .key_len = c->key_len,
						  .key_file = c->key_file});
}

/* The credential onto h: *gen names an exec plugin's credential. A
 * failure is logged too (informers retry it quietly otherwise). */
static int authenticate(struct sx_kube *kube, CURL *h, char *auth, size_t len, uint64_t *gen,
			struct sx_error *err)
{
	if (!kube->exec) {
		auth_header(kube, auth, len);
		return 0;
	}
	if (exec_auth(kube, h, auth, len, gen, err) == 0)
		return 0;
	sx_log(0, "%s", err->msg);
	return SX_EINVAL;
}

static int setup_handle(struct sx_kube *kube, CURL *h, const char *path,
			struct curl_slist **headers, uint64_t *gen, struct sx_error *err)
{
	char url[4096], auth[MAX_TOKEN_HDR];
	struct curl_slist *hdrs = NULL;

	build_url(kube, path, url, sizeof(url));
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (kube->connect_to)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, kube->connect_to);
	curl_easy_setopt(h, CURLOPT_USERAGENT, kube->user_agent);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 30L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	set_tls(kube, h);
	*headers = NULL;
	if (authenticate(kube, h, auth, sizeof(auth), gen, err))
		return SX_EINVAL;
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (auth[0])
		hdrs = curl_slist_append(hdrs, auth);
	memset(auth, 0, sizeof(auth));
	*headers = hdrs;
	if (!hdrs)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	return 0;
}

int sx_kube_setup_handle(struct sx_kube *kube, void *curl, const char *path,
			 struct curl_slist **headers, struct sx_error *err)
{
	return setup_handle(kube, curl, path, headers, NULL, err);
}

/* ---------- requests ---------- */

struct resp {
	struct sx_buf body;
	double retry_after; /* seconds; <0 when absent */
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct resp *r = ctx;

	if (r->body.len + size * n > MAX_RESPONSE_BYTES)
		return 0;
	sx_buf_put(&r->body, data, size * n);
	return r->body.failed ? 0 : size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct resp *r = ctx;
	size_t len = size * n;

	if (len > 12 && strncasecmp(data, "Retry-After:", 12) == 0) {
		char tmp[32];

		snprintf(tmp, sizeof(tmp), "%.*s", (int)(len - 12 < 31 ? len - 12 : 31), data + 12);
		r->retry_after = atof(tmp);
	} else if (len > 8 && strncasecmp(data, "Warning:", 8) == 0) {
		sx_log(2, "API warning:%.*s", (int)(len - 8), data + 8);
	}
	return len;
}

const char *sx_kube_status_message(const char *body, size_t len, long status, char *buf,
				   size_t buflen)
{
	cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");

	if (cJSON_IsString(m) && m->valuestring && *m->valuestring)
		snprintf(buf, buflen, "%s", m->valuestring);
	else
		snprintf(buf, buflen, "HTTP %ld from the API server", status);
	cJSON_Delete(j);
	return buf;
}

/* Explains a transport failure; TLS errors get the "x509:"-style wording. */
static void transport_error(struct sx_kube *kube, CURLcode rc, const char *ebuf,
			    struct sx_error *err)
{
	const char *detail = ebuf[0] ? ebuf : curl_easy_strerror(rc);

	if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
	    rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CONNECT_ERROR)
		sx_error_set(err, SX_EIO,
			     "TLS with %s failed: x509: certificate verification failed (%s)",
			     kube->cfg.server, detail);
	else
		sx_error_set(err, SX_EIO, "request to %s failed: %s", kube->cfg.server, detail);
}

/* One attempt. 0 when a response arrived (status set), else negative. */
static int attempt(struct sx_kube *kube, const char *method, const char *path, const char *ctype,
		   const char *body, size_t blen, long *status, struct resp *r, uint64_t *gen,
		   struct sx_error *err)
{
	CURL *h = pool_get(kube);
	struct curl_slist *hdrs = NULL;
	char ebuf[CURL_ERROR_SIZE] = "", cth[128];
	CURLcode rc;
	int ret;

	if (!h)
		return sx_error_set(err, SX_ENOMEM, "curl_easy_init failed");
	ret = setup_handle(kube, h, path, &hdrs, gen, err);
	if (ret)
		goto out;
	if (ctype) {
		snprintf(cth, sizeof(cth), "Content-Type: %s", ctype);
		hdrs = curl_slist_append(hdrs, cth);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		transport_error(kube, rc, ebuf, err);
		*status = 0;
		ret = SX_EIO;
	}
out:
	curl_slist_free_all(hdrs);
	pool_put(kube, h);
	return ret;
}

/* Backoff for attempt i: 100 ms doubling to 5 s, jitter up to +100 %. */
static uint64_t backoff_ns(int i, double retry_after)
{
	double base = 0.1 * (double)(1u << (i < 6 ? i : 6));

	if (retry_after > 0)
		return (uint64_t)((retry_after < 30 ? retry_after : 30) * 1e9);
	if (base > 5)
		base = 5;
	return (uint64_t)(base * (1.0 + (double)rand() / RAND_MAX) * 1e9);
}

static _Atomic(sx_kube_observer_fn) observer;
static void *_Atomic observer_ctx;

void sx_kube_set_observer(sx_kube_observer_fn fn, void *ctx)
{
	atomic_store(&observer_ctx, ctx);
	atomic_store(&observer, fn);
}

/* One attempt's metrics (client-go request.go updateURLMetrics). */
void sx_kube_observe(const struct sx_kube *kube, const char *method, bool failed, long status,
		     uint64_t start_ns)
{
	sx_kube_observer_fn fn = atomic_load(&observer);
	char code[24];

	if (!fn || !kube)
		return;
	if (failed)
		snprintf(code, sizeof(code), "<error>");
	else
		snprintf(code, sizeof(code), "%ld", status);
	fn(atomic_load(&observer_ctx), method, kube->cfg.server, code,
	   (double)(sx_now_ns() - start_ns) / 1e9);
}

int sx_kube_request(struct sx_kube *kube, const char *method, const char *path,
		    const char *content_type, const char *body, size_t body_len, long *status,
		    char **resp, size_t *resp_len, struct sx_error *err)
{
	struct resp r;
	bool reauthed = false;
	uint64_t gen = 0;
	int rc = SX_EIO;

	*status = 0;
	if (resp)
		*resp = NULL;
	if (resp_len)
		*resp_len = 0;
	sx_buf_init(&r.body);
	for (int i = 0; i < MAX_ATTEMPTS; i++) {
		sx_buf_reset(&r.body);
		r.retry_after = -1;
		sx_kube_throttle(kube, NULL);
		uint64_t start_ns = sx_now_ns();
		rc = attempt(kube, method, path, content_type, body, body_len, status, &r, &gen,
			     err);
		sx_kube_observe(kube, method, rc != 0, *status, start_ns);
		if (rc) {
			/* Transport failure: only idempotent reads are retried
			 * (a failed credential plugin is not a transport one). */
			if (strcmp(method, "GET") != 0 || i == MAX_ATTEMPTS - 1 || rc == SX_EINVAL)
				break;
			sleep_ns(backoff_ns(i, -1));
			continue;
		}
		if (*status == 401 && !reauthed && (kube->cfg.token_file || kube->exec)) {
			reauthed = true;
			if (kube->exec)
				sx_exec_auth_invalidate(kube->exec, gen);
			else
				sx_kube_invalidate_token(kube);
			continue;
		}
		if ((*status == 429 || *status >= 500) && i < MAX_ATTEMPTS - 1) {
			sx_log(2, "%s %s: HTTP %ld, retrying", method, path, *status);
			sleep_ns(backoff_ns(i, r.retry_after));
			continue;
		}
		break;
	}
	if (rc == 0 && resp) {
		*resp = sx_buf_take(&r.body, resp_len);
	}
	sx_buf_free(&r.body);
	return rc;
}

/* ---------- writes ---------- */

int sx_kube_status_code(long status)
{
	if (status == 404)
		return SX_ENOENT;
	if (status == 409)
		return SX_ECONFLICT;
	return SX_EIO;
}

/* Sends a JSON write; 0 on 2xx. *out (optional) receives the body,
 * *status the HTTP status (0: no response). */
int sx_kube_write_json(struct sx_kube *kube, const char *method, const char *path,
		       const char *ctype, struct sx_buf *b, char **out, long *status,
		       struct sx_error *err)
{
	char *resp = NULL, msg[256];
	size_t rlen = 0;
	int rc;

	*status = 0;
	if (b->failed)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	rc = sx_kube_request(kube, method, path, ctype, b->data, b->len, status, &resp, &rlen, err);
	if (rc) {
		free(resp);
		return rc;
	}
	if (*status >= 200 && *status < 300) {
		if (out)
			*out = resp;
		else
			free(resp);
		return 0;
	}
	sx_kube_status_message(resp, rlen, *status, msg, sizeof(msg));
	free(resp);
	return sx_error_set(err, sx_kube_status_code(*status), "%s", msg);
}

/* Percent-encodes a path segment (names are DNS-ish, but stay safe). */
void sx_kube_put_segment(struct sx_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || c == ':')
			sx_buf_putc(b, (char)c);
		else
			sx_buf_printf(b, "%%%02X", c);
	}
}

char *sx_kube_ns_path(const char *prefix, const char *ns, const char *resource, const char *name,
		      const char *sub)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_printf(&b, "%s/namespaces/", prefix);
	sx_kube_put_segment(&b, ns);
	sx_buf_printf(&b, "/%s", resource);
	if (name) {
		sx_buf_putc(&b, '/');
		sx_kube_put_segment(&b, name);
	}
	if (sub)
		sx_buf_printf(&b, "/%s", sub);
	return sx_buf_take(&b, NULL);
}
