/* Kubernetes API client (libcurl) and informers feeding the cache
 * (as client-go: clientcmd, rest, tools/cache).
 *
 * Threads: a client may be used from any thread (requests are serialized
 * per call on their own curl handles; the QPS limiter is shared). Informers
 * run on their own threads and write to the cache through its API.
 */
#ifndef SCHEDEXT_KUBE_H
#define SCHEDEXT_KUBE_H

#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

struct sx_kube;
struct curl_slist;

struct sx_kube_opts {
	const char *kubeconfig;	     /* NULL: sx_kubeconfig_resolve's order */
	const char *context;	     /* NULL: current-context */
	double qps;		     /* default 50 */
	int burst;		     /* default 100 */
	const char *user_agent;	     /* default sx_kube_user_agent(user_agent_role) */
	const char *user_agent_role; /* rest.AddUserAgent's suffix ("scheduler"), or NULL */
};

/* client-go's default User-Agent for this build into buf:
 * "schedext/v0.1.0 (linux/amd64) kubernetes/<commit>", plus "/<role>"
 * when role is non-NULL (src/api/user_agent.c). Returns buf. */
const char *sx_kube_user_agent(const char *role, char *buf, size_t len);

/* Loads credentials and prepares a client; does not contact the server.
 * NULL with err naming the file/field on failure. */
struct sx_kube *sx_kube_new(const struct sx_kube_opts *opts, struct sx_error *err);
void sx_kube_free(struct sx_kube *kube);
/* Obtains the credential now (an exec credential plugin runs if none is
 * cached), so a front end can fail at startup with the plugin's error
 * instead of retrying in the background. 0 when no credential is needed. */
int sx_kube_authenticate(struct sx_kube *kube, struct sx_error *err);
/* Server URL (for the "connected to" log line). */
const char *sx_kube_server(const struct sx_kube *kube);

/* client-go's request metrics hooks (k8s.io/client-go/tools/metrics
 * RequestResult and RequestLatency, which component-base's restclient
 * package feeds into rest_client_requests_total{code,method,host} and
 * rest_client_request_duration_seconds{verb,host}): called after every
 * attempt of sx_kube_request, retries included, as client-go's
 * updateURLMetrics is. code is "200" or "<error>" for a transport failure;
 * server is the client's server URL. Process-wide, like client-go's
 * metrics.Register: set once at startup (NULL unsets), from any thread
 * afterwards only read. */
typedef void (*sx_kube_observer_fn)(void *ctx, const char *method, const char *server,
				    const char *code, double seconds);
void sx_kube_set_observer(sx_kube_observer_fn fn, void *ctx);
/* Reports one request made outside sx_kube_request (the informers'
 * LIST and WATCH over their own curl handles) to the observer: failed is
 * a transport failure (code "<error>"), else status is the HTTP status;
 * the duration runs from start_ns (sx_now_ns()). */
void sx_kube_observe(const struct sx_kube *kube, const char *method, bool failed, long status,
		     uint64_t start_ns);

/* A raw request. body may be NULL. On return *status is the HTTP status
 * (0 when no response), *resp the body (caller frees; may be NULL). Retries
 * 429 (Retry-After) and 5xx with backoff, re-reads a rotated token on 401.
 * Returns 0 when a response was received, negative on transport failure
 * (err->msg says why, e.g. the TLS verification error). */
int sx_kube_request(struct sx_kube *kube, const char *method, const char *path,
		    const char *content_type, const char *body, size_t body_len, long *status,
		    char **resp, size_t *resp_len, struct sx_error *err);

/* POST /api/v1/namespaces/{ns}/pods/{name}/binding with metadata.uid as a
 * precondition. 0 on 201; otherwise negative with err->msg = the API
 * server's Status message (e.g. "pods \"x\" is already assigned to node
 * \"y\""). */
int sx_kube_bind(struct sx_kube *kube, const char *ns, const char *name, const char *uid,
		 const char *node, struct sx_error *err);

/* ---------- API writes of the standalone scheduler ----------
 * Write helpers for the standalone scheduler. All return 0 on a 2xx answer;
 * otherwise a negative code (SX_ENOENT on 404, SX_ECONFLICT on 409, SX_EIO
 * on transport failure or other statuses) with err->msg = the API server's
 * Status message. Callable from any thread. */

/* PATCH /apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/{name}/status
 * with a merge patch setting one metav1.Condition {type, status, reason,
 * message, observedGeneration, lastTransitionTime=now} (upstream
 * updatePodGroupCondition / util.PatchPodGroupStatus). The scheduler owns
 * every condition of a PodGroup's status, so the list sent is this one. */
int sx_kube_patch_pod_group_status(struct sx_kube *kube, const char *ns, const char *name,
				   const char *cond_type, const char *cond_status,
				   const char *reason, const char *message,
				   int64_t observed_generation, struct sx_error *err);

/* PATCH /apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups/{name}/status
 * (scheduler-plugins' PodGroup CRD) with a merge patch setting phase and
 * scheduled, and scheduleStartTime=now when start_now (scheduler-plugins
 * pkg/coscheduling/core, PodGroupManager.PostBind). */
int sx_kube_patch_cosched_group_status(struct sx_kube *kube, const char *ns, const char *name,
				       const char *phase, int32_t scheduled, bool start_now,
				       struct sx_error *err);

/* PATCH /api/v1/namespaces/{ns}/pods/{name}/status with a strategic merge
 * patch. cond_type NULL: no condition; otherwise one condition
 * {type, status, reason, message, lastTransitionTime=now}. nominated: NULL
 * leaves status.nominatedNodeName alone, "" clears it (null). */
int sx_kube_patch_pod_status(struct sx_kube *kube, const char *ns, const char *name,
			     const char *cond_type, const char *cond_status, const char *reason,
			     const char *message, const char *nominated, struct sx_error *err);

/* DELETE /api/v1/namespaces/{ns}/pods/{name} with preconditions.uid (when
 * uid is non-NULL). 404 counts as success (already gone). */
int sx_kube_delete_pod(struct sx_kube *kube, const char *ns, const char *name, const char *uid,
		       struct sx_error *err);

/* An events.k8s.io/v1 Event about a pod, as client-go's events recorder
 * writes it (k8s.io/client-go/tools/events). type "Normal"/"Warning";
 * note truncated to 1024 bytes ending " ..." and reportingInstance to 128
 * bytes (the API server's limits, pkg/apis/core/validation/events.go). */
struct sx_kube_event {
	const char *ns, *pod_name, *pod_uid;
	const char *type, *reason, *action, *message;
	const char *component;	   /* reportingController (the scheduler name) */
	const char *instance;	   /* reportingInstance */
	const char *name;	   /* metadata.name; NULL: "<pod>.<hex unix ns>" */
	const char *event_time;	   /* MicroTime; NULL: now */
	int32_t series_count;	   /* 0: no series, else series.count (>= 2) */
	const char *last_observed; /* series.lastObservedTime (MicroTime) */
};
/* POST the event (with its series when series_count > 0). 0 on 201;
 * SX_EEXIST when the name exists (409), SX_EINVAL when the server refused
 * it (another 4xx: it would refuse it again), SX_EIO on transport failure
 * or a 5xx/429 that outlived the client's retries. */
int sx_kube_create_event(struct sx_kube *kube, const struct sx_kube_event *ev,
			 struct sx_error *err);
/* PATCH (strategic merge) series {count, lastObservedTime} onto the event
 * ev->name, as client-go's recordEvent does for a series. Codes as
 * sx_kube_create_event's, SX_ENOENT when the event is gone (404). */
int sx_kube_patch_event_series(struct sx_kube *kube, const struct sx_kube_event *ev,
			       struct sx_error *err);

/* coordination.k8s.io/v1 Lease. Times are MicroTime strings
 * ("2025-06-01T12:00:06.518211Z"); sx_kube_micro_time formats now. */
struct sx_lease {
	char holder[256];
	int32_t duration_s;
	char acquire_time[40];
	char renew_time[40];
	int32_t transitions;
	char resource_version[64]; /* "" for create */
};
void sx_kube_micro_time(char out[40]);
/* 0 and *lease filled; SX_ENOENT when absent. */
int sx_kube_lease_get(struct sx_kube *kube, const char *ns, const char *name,
		      struct sx_lease *lease, struct sx_error *err);
/* POST (create) or PUT (update, with lease->resource_version as the
 * optimistic-concurrency precondition). On success lease->resource_version
 * is the new RV. SX_ECONFLICT on 409 (AlreadyExists / Conflict). */
int sx_kube_lease_create(struct sx_kube *kube, const char *ns, const char *name,
			 struct sx_lease *lease, struct sx_error *err);
int sx_kube_lease_update(struct sx_kube *kube, const char *ns, const char *name,
			 struct sx_lease *lease, struct sx_error *err);

/* ---------- API writes of VolumeBinding ----------
 * The API writes of VolumeBinding's PreBind (upstream binder.go
 * bindAPIUpdate). Upstream sends the whole object with PUT; these send JSON
 * merge patches carrying metadata.resourceVersion = rv, which the API
 * server checks the same way: SX_ECONFLICT (409 "the object has been
 * modified") when the object changed since rv. 0 on success, new_rv (when
 * non-NULL) receiving the object's new resourceVersion; otherwise as the
 * other writes (err->msg = the API server's message). Any thread. */
struct sx_kube_claim_ref {
	const char *ns, *name, *uid, *resource_version;
};
/* PATCH /api/v1/persistentvolumes/{pv}: spec.claimRef = the claim, and
 * pv.kubernetes.io/bound-by-controller: "yes" when bound_by_controller. */
int sx_kube_bind_pv(struct sx_kube *kube, const char *pv, const char *rv,
		    const struct sx_kube_claim_ref *claim, bool bound_by_controller, char *new_rv,
		    size_t len, struct sx_error *err);
/* PATCH /api/v1/namespaces/{ns}/persistentvolumeclaims/{name}: sets one
 * annotation (volume.kubernetes.io/selected-node). */
int sx_kube_annotate_pvc(struct sx_kube *kube, const char *ns, const char *name, const char *rv,
			 const char *key, const char *value, char *new_rv, size_t len,
			 struct sx_error *err);

/* ---------- kube internals shared by kube.c, kubeconfig.c, informer.c and
 * test/unit/test_kube.c (not for other modules) ---------- */

/* users[].user.exec of a kubeconfig (client-go api.ExecConfig, apiVersion
 * client.authentication.k8s.io/v1 or v1beta1). Parsing never runs the
 * command; the client runs it on first use (sx_exec_auth_apply). Every
 * string is owned and freed by sx_exec_config_free. */
enum sx_exec_interactive { SX_EXEC_NEVER, SX_EXEC_IF_AVAILABLE, SX_EXEC_ALWAYS };
struct sx_exec_config {
	char *command; /* with a '/': resolved against the kubeconfig's
			* directory; a bare name is looked up in PATH */
	char **args;   /* nargs of them */
	size_t nargs;
	char **env; /* "NAME=value", nenv of them, added to the environment */
	size_t nenv;
	char *api_version;    /* client.authentication.k8s.io/v1 or v1beta1 */
	char *install_hint;   /* shown when the command is not found, or NULL */
	char *cluster_config; /* JSON of the cluster's client.authentication.k8s.io/exec
			       * extension (spec.cluster.config), or NULL */
	char *user;	      /* the users[] entry's name, for messages */
	char *source;	      /* the kubeconfig file that entry came from */
	enum sx_exec_interactive interactive;
	bool provide_cluster_info;
	unsigned timeout_ms; /* wall-clock bound of one run; 0 = 30 s */
	size_t max_output;   /* bound of stdout; 0 = 1 MiB */
};
void sx_exec_config_free(struct sx_exec_config *x);

/* What one run of the plugin returned (status of its ExecCredential).
 * PEM blobs as text. Clear with sx_exec_credential_clear (wipes secrets). */
struct sx_exec_credential {
	char *token;		    /* NULL when only a client certificate */
	char *cert_data, *key_data; /* both or neither */
	size_t cert_len, key_len;
	int64_t expiry; /* unix seconds; 0 = none (good until a 401) */
};
void sx_exec_credential_clear(struct sx_exec_credential *c);

struct sx_kube_config;
/* Decodes a plugin's stdout (data[0..len)) against x (apiVersion must
 * match). 0 and *c filled, else negative with err naming the kubeconfig,
 * the user and the field; secrets never appear in messages. */
int sx_exec_credential_parse(const struct sx_exec_config *x, const char *data, size_t len,
			     struct sx_exec_credential *c, struct sx_error *err);
/* KUBERNETES_EXEC_INFO's value: an ExecCredential with spec.interactive
 * false and, with provideClusterInfo, spec.cluster from cfg. Caller frees;
 * NULL when out of memory. */
char *sx_exec_info(const struct sx_exec_config *x, const struct sx_kube_config *cfg);
/* Runs the plugin once (fork + execve, no shell; stdin /dev/null, its own
 * process group, bounded by x->timeout_ms and x->max_output; stderr kept
 * up to 4 KiB for the error message) and decodes its output. Callable from
 * any thread. 0 and *c filled, else negative with err set. */
int sx_exec_run(const struct sx_exec_config *x, const struct sx_kube_config *cfg,
		struct sx_exec_credential *c, struct sx_error *err);

/* The credential cache (client-go's exec Authenticator): runs the plugin
 * on first use, when the credential's expirationTimestamp passed, and
 * after a 401. Thread-safe: one mutex serializes the plugin's runs, so
 * concurrent requests wait for one run instead of starting many. */
struct sx_exec_auth;
/* The process-wide cache for cfg's exec stanza and cluster (cfg->exec
 * set; copied, not borrowed): clients built from the same kubeconfig user
 * share one, as client-go's globalCache does. Reference-counted; NULL when
 * out of memory. */
struct sx_exec_auth *sx_exec_auth_new(const struct sx_kube_config *cfg);
/* Drops a reference; the last one frees the cache and wipes its secrets. */
void sx_exec_auth_free(struct sx_exec_auth *a);
/* Puts the current credential on curl handle h (void * = CURL *): the
 * "Authorization: Bearer" header line into hdr ("" when the credential has
 * no token) and the client certificate and key as PEM blobs. *gen names
 * the credential for sx_exec_auth_invalidate. Negative with err set when
 * the plugin fails. */
int sx_exec_auth_apply(struct sx_exec_auth *a, void *h, char *hdr, size_t len, uint64_t *gen,
		       struct sx_error *err);
/* A request made with credential gen got 401: the next apply runs the
 * plugin again, unless it already did since (gen 0 = unknown: ignored when
 * the credential is less than a second old). */
void sx_exec_auth_invalidate(struct sx_exec_auth *a, uint64_t gen);
/* How many times the plugin ran (tests). */
unsigned sx_exec_auth_runs(struct sx_exec_auth *a);

/* Resolved connection settings. Every string is owned (free with
 * sx_kube_config_clear). PEM blobs are raw PEM, already base64-decoded. */
struct sx_kube_config {
	char *server;	 /* "https://host:port[/prefix]", no trailing '/' */
	char *source;	 /* file the context came from, or "in-cluster" */
	char *context;	 /* context name ("" in-cluster) */
	char *namespace; /* context namespace, default "default" */
	char *ca_file, *ca_data;
	size_t ca_len;
	char *cert_file, *cert_data;
	size_t cert_len;
	char *key_file, *key_data;
	size_t key_len;
	char *token;	  /* static token */
	char *token_file; /* re-read periodically; wins over token */
	char *tls_server_name;
	bool insecure;
	struct sx_exec_config *exec; /* credential plugin, or NULL */
};
void sx_kube_config_clear(struct sx_kube_config *cfg);
/* Loads a kubeconfig: `paths` is one path or a ':'-separated list
 * (first-wins merge, missing files skipped); context NULL = current-context.
 * Errors name the file and field. */
int sx_kubeconfig_load(const char *paths, const char *context, struct sx_kube_config *cfg,
		       struct sx_error *err);
/* The same from one file's bytes in memory (data[0..len), no terminator
 * needed); path names the file in messages and anchors relative paths. */
int sx_kubeconfig_parse(const char *data, size_t len, const char *path, const char *context,
			struct sx_kube_config *cfg, struct sx_error *err);
/* In-cluster settings from KUBERNETES_SERVICE_HOST/PORT and sa_dir
 * (NULL = /var/run/secrets/kubernetes.io/serviceaccount). */
int sx_kubeconfig_in_cluster(const char *sa_dir, struct sx_kube_config *cfg, struct sx_error *err);
/* The order of clientcmd BuildConfigFromFlags and the default loading
 * rules: explicit path; in-cluster when the env is set;
 * $KUBECONFIG; ~/.kube/config. */
int sx_kubeconfig_resolve(const char *explicit_path, const char *context,
			  struct sx_kube_config *cfg, struct sx_error *err);
/* Decodes standard base64 (whitespace ignored). Caller frees; NULL on
 * garbage. */
char *sx_base64_decode(const char *in, size_t *out_len);
/* Reads a token file whole, trailing whitespace trimmed; NULL on failure or
 * empty. Caller frees. */
char *sx_read_token_file(const char *path);

/* Token bucket (client-side QPS/burst): reserves one token at now_ns and
 * returns how long to wait (ns) before the request may start. Thread-safe. */
struct sx_token_bucket {
	double rate, burst, tokens;
	uint64_t last_ns;
	pthread_mutex_t mu;
};
void sx_token_bucket_init(struct sx_token_bucket *tb, double qps, int burst, uint64_t now_ns);
uint64_t sx_token_bucket_reserve(struct sx_token_bucket *tb, uint64_t now_ns);

/* Newline-delimited stream splitter: bytes are fed in arbitrary pieces;
 * fn is called once per complete line (without '\n', NUL-terminated,
 * empty lines skipped). A line longer than max fails the feed with
 * SX_ETOOBIG; a negative return from fn stops it and is returned. */
struct sx_line_buf {
	char *data;
	size_t len, cap, max;
};
typedef int (*sx_line_fn)(void *ctx, char *line, size_t len);
void sx_line_buf_init(struct sx_line_buf *lb, size_t max);
void sx_line_buf_free(struct sx_line_buf *lb);
int sx_line_buf_feed(struct sx_line_buf *lb, const char *data, size_t n, sx_line_fn fn, void *ctx);

/* Prepares a curl easy handle (void * = CURL *) for GET/other requests to
 * server+path: URL, TLS, auth header, User-Agent, Accept, gzip, timeouts.
 * *headers receives the list to free with curl_slist_free_all after the
 * transfer. Used by informers for LIST/WATCH. */
int sx_kube_setup_handle(struct sx_kube *kube, void *curl, const char *path,
			 struct curl_slist **headers, struct sx_error *err);
/* Waits for the QPS limiter (returns early when *stop becomes true). */
void sx_kube_throttle(struct sx_kube *kube, const atomic_bool *stop);
/* A 401 was seen: drop the cached token so the next request re-reads it. */
void sx_kube_invalidate_token(struct sx_kube *kube);
/* Status message of an API error body ("message" of a Status), else a
 * short generic text. Writes into buf. */
const char *sx_kube_status_message(const char *body, size_t len, long status, char *buf,
				   size_t buflen);

/* The SX_E* code of a failed request's HTTP status: SX_ENOENT for 404,
 * SX_ECONFLICT for 409, else SX_EIO. */
int sx_kube_status_code(long status);
/* Appends s to b as a percent-encoded URL path segment. */
struct sx_buf;
void sx_kube_put_segment(struct sx_buf *b, const char *s);

/* "<prefix>/namespaces/<ns>/<resource>[/<name>[/<sub>]]" with each part
 * escaped; caller frees; NULL when out of memory. */
char *sx_kube_ns_path(const char *prefix, const char *ns, const char *resource, const char *name,
		      const char *sub);
/* Sends b (a JSON body; NULL data when b->failed gives SX_ENOMEM) with
 * sx_kube_request: 0 on 2xx, *out (optional) receiving the body; else
 * SX_ENOENT on 404, SX_ECONFLICT on 409, SX_EIO otherwise, err->msg the
 * API server's message. *status: the HTTP status, 0 without a response. */
struct sx_buf;
int sx_kube_write_json(struct sx_kube *kube, const char *method, const char *path,
		       const char *ctype, struct sx_buf *b, char **out, long *status,
		       struct sx_error *err);

/* The host (IPv6 brackets kept) and port (default 443 for https, else 80)
 * of url's authority, and where its path starts (rest may be NULL). */
void sx_url_hostport(const char *url, char *host, size_t hlen, char *port, size_t plen,
		     const char **rest);

/* The PEM material of one TLS client: each of CA, certificate and key as
 * raw PEM bytes (which win) or a file path; NULL = not given. */
struct sx_tls_pems {
	const char *ca_data, *cert_data, *key_data;
	size_t ca_len, cert_len, key_len;
	const char *ca_file, *cert_file, *key_file;
};

/* Sets pems on a libcurl easy handle (a CURL *): the API client's and the
 * extender client's one way of handing certificates to curl. */
void sx_curl_set_pems(void *curl, const struct sx_tls_pems *pems);

#endif /* SCHEDEXT_KUBE_H */
