/* `schedext serve`: options, cluster source (--state file or a live cluster
 * through informers), the extender context, the HTTP server, and graceful
 * shutdown on SIGTERM/SIGINT. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/extender.h"
#include "schedext/node_memo.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/informer.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/pool.h"
#include "schedext/leader.h"
#include "schedext/framework_metrics.h"
#include "schedext/scheduler.h"
#include "schedext/server.h"
#include "schedext/state.h"
#include "authz.h"
#include "serve_metrics.h"

#define EXIT_USAGE	 2
#define MAX_PEM_BYTES	 (1u << 20)
#define SHUTDOWN_GRACE_S 10.0

static const char usage_serve[] =
	"usage: schedext serve [options]\n"
	"\n"
	"Serves a cluster (--state files, or a live cluster through informers) over HTTP:\n"
	"  POST <prefix>/filter, /prioritize, /preempt, /bind\n"
	"                         kube-scheduler's extender verbs (--url-prefix)\n"
	"  GET  /healthz, /livez, /readyz  health (?verbose: one line per check)\n"
	"  GET  /version          schedext's version and the extender API it speaks\n"
	"  GET  /metrics          Prometheus metrics (kube-scheduler's families)\n"
	"  GET  /configz          the effective KubeSchedulerConfiguration\n"
	"  GET  /debug/explain?pod=NS/NAME, POST /debug/explain (a v1 Pod)\n"
	"                         why a pod would go where, JSON\n"
	"  GET  /debug/cache      the nodes and pods in the cache\n"
	"  GET  /debug/pending[?namespace=NS]  pending pods grouped by reason\n"
	"  POST /debug/whatif     what-if's edits, in order: {\"addNodes\":[{\"like\":NODE,\n"
	"                         \"count\":N}], \"drain\":[NODE], \"cordon\":[NODE],\n"
	"                         \"removeNodes\":[NODE], \"addPods\":[{\"like\":NS/NAME,\n"
	"                         \"count\":N}], \"scale\":[{\"deployment\":NS/NAME,\n"
	"                         \"replicas\":N}]}: place pods on a changed copy of the\n"
	"                         cluster; GET /debug/whatif: what the edits may name\n"
	"  GET  /ui               the operators' page over the /debug endpoints\n"
	"All but the verbs and health need authorization (--authorization-always-allow-paths;\n"
	"with --state, loopback clients only unless --debug-allow-remote).\n"
	"With --standalone it also schedules pods whose schedulerName is a profile.\n"
	"\n"
	"  --listen ADDR:PORT     listen address (default 127.0.0.1:8888; 0.0.0.0:8888 in a pod)\n"
	"  --threads N            HTTP worker threads (default: one per core, 2 to 16)\n"
	"  --max-connections N    connection cap (default 1024)\n"
	"  --connection-timeout S idle/slow client timeout in seconds (default 30)\n"
	"  --max-body-bytes N     request body limit (default 67108864 = 64 MiB, a 5000-node\n"
	"                         NodeList); larger requests get 413\n"
	"  --url-prefix PATH      serve the verbs under PATH (e.g. /scheduler)\n"
	"  --state FILE           cluster state file (v1 List or YAML stream) instead of a "
	"cluster;\n"
	"                         repeat to merge several files (later objects win)\n"
	"  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
	"  --context NAME         kubeconfig context\n"
	"  --kube-api-qps N       API server requests per second (default 50, as client-go)\n"
	"  --kube-api-burst N     burst above that rate (default 100)\n"
	"  --config FILE          KubeSchedulerConfiguration (default: the upstream default "
	"profile)\n"
	"  --extender-profile N   profile (schedulerName) served to kube-scheduler (default: "
	"first)\n"
	"  --tls-cert FILE        serve HTTPS with this certificate (PEM)\n"
	"  --tls-key FILE         its private key (PEM)\n"
	"  --tls-client-ca FILE   require client certificates signed by this CA (PEM)\n"
	"  --standalone           also schedule pods whose schedulerName is a profile (needs a\n"
	"                         cluster: --kubeconfig or in-cluster)\n"
	"  --leader-elect         with --standalone: schedule only while holding a Lease\n"
	"  --leader-elect-lease-name N  Lease name (default schedext)\n"
	"  --leader-elect-namespace NS  Lease namespace (default: in-cluster namespace or "
	"kube-system)\n"
	"  --leader-elect-lease-duration D, --leader-elect-renew-deadline D,\n"
	"  --leader-elect-retry-period D  election timing (default 15s, 10s, 2s)\n"
	"  --authorization-always-allow-paths LIST\n"
	"                         paths served without authentication (default\n"
	"                         /healthz,/readyz,/livez); every other path but the verbs\n"
	"                         needs a TokenReview'd user that a SubjectAccessReview allows\n"
	"  --debug-allow-remote   with --state (no cluster to ask): serve /metrics, /debug/*,\n"
	"                         /ui to non-loopback clients too\n"
	"  --leader-elect-resource-name N, --leader-elect-resource-namespace NS,\n"
	"  --leader-elect-resource-lock leases  kube-scheduler's names for the above\n"
	"  --kube-api-content-type T  API content type (only application/json is spoken)\n"
	"  --debug-time-budget D  time one /debug/pending or /debug/whatif request may\n"
	"                         spend placing pods (default 10s); the rest are\n"
	"                         reported as notEvaluated\n"
	"  --emulated-version V   the kube-scheduler release whose defaults run: 1.35, 1.36\n"
	"                         or 1.37 (default 1.37; also kube=1.36, as kube-scheduler)\n"
	"  --feature-gates LIST   key=value pairs turning that release's feature gates on\n"
	"                         or off (e.g. OpportunisticBatching=false; kube:A=true as\n"
	"                         kube-scheduler); may be given more than once\n"
	"                         Flags given explicitly override the --config file's\n"
	"                         clientConnection and leaderElection.\n"
	"  -v=N                   log verbosity (2: one line per request)\n"
	"  -h, --help             this help\n";

#define MAX_STATE_FILES 16

struct serve_args {
	const char *listen, *state, *config, *profile, *kubeconfig, *context;
	const char *tls_cert, *tls_key, *tls_client_ca, *url_prefix, *always_allow;
	unsigned long threads, max_conns, conn_timeout, max_body;
	unsigned long kube_qps, kube_burst; /* 0 = client defaults (50 / 100) */
	/* standalone scheduler (--standalone, --leader-elect*) */
	const char *le_name, *le_ns, *le_dur, *le_renew, *le_retry, *le_lock;
	const char *content_type;
	const char *debug_budget; /* --debug-time-budget */
	/* every --feature-gates and --emulated-version value, joined by ','
	 * (the flags repeat, as component-base's do) */
	char feature_gates[4096], emulated_version[256];
	/* every --state, in order: the files merge (a later object replaces
	 * an earlier one with the same key), as kubectl-schedext's do */
	const char *states[MAX_STATE_FILES];
	unsigned nstates;
	double debug_budget_s;
	bool standalone, leader_elect, leader_elect_set, debug_allow_remote;
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("schedext serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static bool parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (unsigned long)v;
	return true;
}

/* Matches "--name VALUE" or "--name=VALUE"; advances *i past the value. */
static bool opt_value(int argc, char **argv, int *i, const char *name, const char **val, int *rc)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
	} else if (*i + 1 < argc) {
		*val = argv[++*i];
	} else {
		*rc = usage_error("%s needs a value", name);
		return true;
	}
	return true;
}

struct num_opt {
	const char *name;
	unsigned long *dst;
	unsigned long min, max;
};

/* Appends val to a ','-joined list; false when it does not fit. */
static bool append_list(char *list, size_t size, const char *val)
{
	size_t len = strlen(list);

	return (size_t)snprintf(list + len, size - len, "%s%s", len ? "," : "", val) < size - len;
}

/* --feature-gates and --emulated-version, which repeat: -2 when argv[*i]
 * was one, -1 when not, or an exit code. */
static int list_opt(int argc, char **argv, int *i, struct serve_args *a)
{
	const char *val;
	int rc = -1;

	if (opt_value(argc, argv, i, "--feature-gates", &val, &rc)) {
		if (rc < 0 && !append_list(a->feature_gates, sizeof(a->feature_gates), val))
			return usage_error("--feature-gates: too long");
		return rc < 0 ? -2 : rc;
	}
	if (opt_value(argc, argv, i, "--emulated-version", &val, &rc)) {
		if (rc < 0 && !append_list(a->emulated_version, sizeof(a->emulated_version), val))
			return usage_error("--emulated-version: too long");
		return rc < 0 ? -2 : rc;
	}
	return -1;
}

/* Parses argv[1..]; returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct serve_args *a)
{
	const char **strs[] = {&a->listen,	  &a->state,	  &a->config,	&a->profile,
			       &a->kubeconfig,	  &a->context,	  &a->tls_cert, &a->tls_key,
			       &a->tls_client_ca, &a->url_prefix, &a->le_name,	&a->le_ns,
			       &a->le_dur,	  &a->le_renew,	  &a->le_retry, &a->always_allow,
			       &a->le_name,	  &a->le_ns,	  &a->le_lock,	&a->content_type,
			       &a->debug_budget};
	static const char *const snames[] = {"--listen",
					     "--state",
					     "--config",
					     "--extender-profile",
					     "--kubeconfig",
					     "--context",
					     "--tls-cert",
					     "--tls-key",
					     "--tls-client-ca",
					     "--url-prefix",
					     "--leader-elect-lease-name",
					     "--leader-elect-namespace",
					     "--leader-elect-lease-duration",
					     "--leader-elect-renew-deadline",
					     "--leader-elect-retry-period",
					     "--authorization-always-allow-paths",
					     "--leader-elect-resource-name",
					     "--leader-elect-resource-namespace",
					     "--leader-elect-resource-lock",
					     "--kube-api-content-type",
					     "--debug-time-budget"};
	struct num_opt nums[] = {
		{"--threads", &a->threads, 1, 1024},
		{"--max-connections", &a->max_conns, 1, 1000000},
		{"--connection-timeout", &a->conn_timeout, 1, 86400},
		{"--max-body-bytes", &a->max_body, 1024, (unsigned long)4 << 30},
		{"--kube-api-qps", &a->kube_qps, 1, 100000},
		{"--kube-api-burst", &a->kube_burst, 1, 100000},
	};
	const char *val;
	int rc = -1;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		bool done = false;

		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			fputs(usage_serve, stdout);
			return 0;
		}
		if (strcmp(arg, "--standalone") == 0 || strcmp(arg, "--leader-elect") == 0 ||
		    strcmp(arg, "--leader-elect=true") == 0 ||
		    strcmp(arg, "--leader-elect=false") == 0) {
			if (arg[2] == 's')
				a->standalone = true;
			else
				a->leader_elect = strcmp(arg, "--leader-elect=false") != 0;
			if (arg[2] != 's')
				a->leader_elect_set = true;
			continue;
		}
		if (strcmp(arg, "--debug-allow-remote") == 0) {
			a->debug_allow_remote = true;
			continue;
		}
		if ((rc = list_opt(argc, argv, &i, a)) >= 0)
			return rc;
		if (rc == -2)
			continue;
		if (strncmp(arg, "-v", 2) == 0 && strncmp(arg, "--", 2) != 0) {
			unsigned long v;
			const char *s = arg[2] == '=' ? arg + 3 : arg + 2;

			if (!*s && i + 1 < argc)
				s = argv[++i];
			if (!parse_ulong(s, 0, 10, &v))
				return usage_error("-v: expected a level 0..10, got '%s'", s);
			sx_log_verbosity = (int)v;
			continue;
		}
		for (size_t k = 0; !done && k < SX_ARRAY_SIZE(snames); k++) {
			done = opt_value(argc, argv, &i, snames[k], &val, &rc);
			if (done && rc < 0)
				*strs[k] = val;
			if (done && rc < 0 && strs[k] == &a->state) {
				if (a->nstates == MAX_STATE_FILES)
					return usage_error("at most %d --state files",
							   MAX_STATE_FILES);
				a->states[a->nstates++] = val;
			}
		}
		for (size_t k = 0; !done && k < SX_ARRAY_SIZE(nums); k++) {
			done = opt_value(argc, argv, &i, nums[k].name, &val, &rc);
			if (done && rc < 0 &&
			    !parse_ulong(val, nums[k].min, nums[k].max, nums[k].dst))
				return usage_error("%s: expected an integer in %lu..%lu, got '%s'",
						   nums[k].name, nums[k].min, nums[k].max, val);
		}
		if (rc >= 0)
			return rc;
		if (!done)
			return usage_error("unknown option '%s' (see --help)", arg);
	}
	if (a->state && (a->kubeconfig || a->context))
		return usage_error("--state cannot be combined with --kubeconfig/--context");
	if (!a->tls_cert != !a->tls_key)
		return usage_error("--tls-cert and --tls-key go together");
	if (a->tls_client_ca && !a->tls_cert)
		return usage_error("--tls-client-ca needs --tls-cert and --tls-key");
	if (a->standalone && a->state)
		return usage_error("--standalone needs a cluster, not --state");
	if (a->url_prefix && a->url_prefix[0] && a->url_prefix[0] != '/')
		return usage_error("--url-prefix must start with '/', got '%s'", a->url_prefix);
	if (a->debug_budget && (sx_parse_duration(a->debug_budget, &a->debug_budget_s) < 0 ||
				a->debug_budget_s <= 0 || a->debug_budget_s > 3600))
		return usage_error("--debug-time-budget: expected a duration in (0s, 1h], got '%s'",
				   a->debug_budget);
	return -1;
}

static char *read_pem(const char *path, struct sx_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data;
	size_t n;

	if (!f) {
		sx_error_set(err, SX_EIO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	data = malloc(MAX_PEM_BYTES + 1);
	n = data ? fread(data, 1, MAX_PEM_BYTES + 1, f) : 0;
	fclose(f);
	if (!data || n > MAX_PEM_BYTES || n == 0) {
		free(data);
		sx_error_set(err, SX_EINVAL, "%s: empty, unreadable or larger than 1 MiB", path);
		return NULL;
	}
	data[n] = '\0';
	return data;
}

/* Filter and Score are CPU-bound: more workers than cores only adds
 * switches and memory (kube-scheduler's `parallelism` goroutines run on
 * GOMAXPROCS = cores). The calling thread works too, hence the - 1. */
/* HTTP workers: one per core (at least 2, so a slow client cannot stall
 * the probes), unless --threads says otherwise. */
static unsigned http_threads(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	return cores > 2 ? (unsigned)(cores < 16 ? cores : 16) : 2;
}

static unsigned pool_threads(int parallelism)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long n = parallelism < cores || cores < 1 ? parallelism : cores;

	return n > 1 ? (unsigned)n - 1 : 0;
}

/* Full-Node extender bodies: validated Node items kept for byte
 * comparison (node_memo.h), at most this many bytes and items. 32 MB holds
 * 5,000 typical Nodes; a larger cluster evicts the least recently sent. */
#define NODE_MEMO_BYTES ((size_t)32 << 20)
#define NODE_MEMO_ITEMS 65536u

/* Everything serve owns, torn down in reverse order by serve_free(). */
struct serve {
	struct sx_serve_metrics *sm; /* rest_client_* handles (serve_metrics.h) */
	struct sx_cache *cache;
	struct sx_config *cfg;
	struct sx_pool *pool;
	struct sx_kube *kube;
	struct sx_informers *inf;
	struct sx_metrics *metrics;
	struct sx_extender ex;
	char *pem[3];
	struct sx_kube_opts ko;
	struct sx_scheduler *sched;
	struct sx_authz *authz;
	struct sx_extenders *extenders;
	/* leader election after merging the file and the flags */
	bool leader_elect;
	const char *le_name, *le_ns;
	double le_s[3]; /* lease duration, renew deadline, retry period */
};

static void serve_free(struct serve *s)
{
	sx_serve_metrics_stop(); /* no API client may count into a freed registry */
	sx_authz_free(s->authz);
	sx_informers_stop(s->inf);
	sx_extenders_free(s->extenders);
	sx_kube_free(s->kube);
	sx_pool_free(s->pool);
	sx_config_free(s->cfg);
	sx_serve_metrics_free(s->sm); /* the informers and clients have stopped */
	sx_metrics_free(s->metrics);
	sx_cache_free(s->cache);
	sx_node_memo_free(s->ex.node_memo);
	for (int i = 0; i < 3; i++)
		free(s->pem[i]);
}

/* clientConnection of the file, each flag given explicitly winning. */
static void client_options(struct serve *s, const struct serve_args *a)
{
	const struct sx_client_connection *c = &s->cfg->client;

	s->ko = (struct sx_kube_opts){
		.kubeconfig = a->kubeconfig ? a->kubeconfig : c->kubeconfig,
		.context = a->context,
		.qps = a->kube_qps ? (double)a->kube_qps : c->qps,
		.burst = a->kube_burst ? (int)a->kube_burst : c->burst,
		/* kube-scheduler's main client: rest.AddUserAgent(.., "scheduler") */
		.user_agent_role = "scheduler",
	};
	if (s->ko.qps < 0) /* client-go: a negative QPS disables the limiter */
		s->ko.qps = 1e9;
	sx_log(1, "API client: %g requests/s, burst %d", s->ko.qps > 0 ? s->ko.qps : 50.0,
	       s->ko.burst > 0 ? s->ko.burst : 100);
}

/* leaderElection of the file, each flag given explicitly winning (as
 * kube-scheduler's ApplyLeaderElectionTo). */
static int leader_options(struct serve *s, const struct serve_args *a)
{
	const struct sx_leader_election *l = &s->cfg->leader;
	const char *d[3] = {a->le_dur, a->le_renew, a->le_retry};
	const double file[3] = {l->lease_duration_s, l->renew_deadline_s, l->retry_period_s};

	s->leader_elect = a->leader_elect_set ? a->leader_elect : l->set && l->leader_elect;
	s->le_name = a->le_name ? a->le_name : l->resource_name;
	s->le_ns = a->le_ns ? a->le_ns : l->resource_namespace;
	for (int i = 0; i < 3; i++) {
		s->le_s[i] = file[i];
		if (d[i] && sx_parse_duration(d[i], &s->le_s[i]) < 0)
			return usage_error("invalid duration '%s'", d[i]);
	}
	if (a->le_lock && strcmp(a->le_lock, "leases") != 0)
		return usage_error("--leader-elect-resource-lock: only \"leases\" is supported, "
				   "not '%s'",
				   a->le_lock);
	if (a->content_type && strcmp(a->content_type, "application/json") != 0)
		sx_log(0,
		       "warning: --kube-api-content-type %s ignored: schedext speaks "
		       "application/json",
		       a->content_type);
	return -1;
}

/* Replaces *dst with a copy of val (kept when val is NULL). */
static int set_str(char **dst, const char *val)
{
	char *copy;

	if (!val)
		return 0;
	copy = sx_strdup(val);
	if (!copy)
		return SX_ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* /configz shows what runs: the file's clientConnection and leaderElection
 * with the flags merged in (schedext elects no leader unless asked, and
 * its lease is "schedext" unless named). */
static int record_effective(struct serve *s, const struct serve_args *a)
{
	struct sx_leader_election *l = &s->cfg->leader;
	struct sx_client_connection *c = &s->cfg->client;

	l->set = true;
	l->leader_elect = s->leader_elect;
	l->lease_duration_s = s->le_s[0];
	l->renew_deadline_s = s->le_s[1];
	l->retry_period_s = s->le_s[2];
	if (a->kube_qps)
		c->qps = (double)a->kube_qps;
	if (a->kube_burst)
		c->burst = (int)a->kube_burst;
	if (set_str(&l->resource_name, s->le_name ? s->le_name : "schedext") ||
	    set_str(&l->resource_namespace, s->le_ns) || set_str(&c->kubeconfig, a->kubeconfig))
		return SX_ENOMEM;
	/* le_name/le_ns may point into the file's strings just replaced */
	s->le_name = l->resource_name;
	s->le_ns = l->resource_namespace;
	return 0;
}

/* The config's extenders, for the standalone loop. Pods (and nodes, for an
 * extender that is not nodeCacheCapable) keep their JSON from now on. */
static int setup_extenders(struct serve *s)
{
	struct sx_error err = {0};
	char ebuf[600];
	bool nodes = false;

	if (s->cfg->nextenders == 0)
		return -1;
	s->extenders = sx_extenders_new(s->cfg->extenders, s->cfg->nextenders, s->metrics, &err);
	if (!s->extenders)
		return usage_error("%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
	for (unsigned i = 0; i < s->cfg->nextenders; i++)
		nodes |= !s->cfg->extenders[i].node_cache_capable;
	sx_decode_keep_raw(SX_KIND_POD, true);
	if (nodes)
		sx_decode_keep_raw(SX_KIND_NODE, true);
	sx_log(1, "calling %u extender(s)", s->cfg->nextenders);
	return -1;
}

/* delayCacheUntilActive only matters to a standalone scheduler that
 * elects a leader: the standby keeps no cache (upstream's semantics). */
static bool delay_cache(const struct serve *s, const struct serve_args *a)
{
	return a->standalone && s->leader_elect && s->cfg->delay_cache_until_active;
}

/* The release and gates the flags select, validated as kube-scheduler's
 * component globals registry does (the release first, then the gates at
 * it). Returns -1 to go on, or an exit code. */
static int features_from_flags(const struct serve_args *a, struct sx_features *f)
{
	struct sx_error err = {0};
	int minor = SX_RELEASE_DEFAULT;

	if (a->emulated_version[0] &&
	    sx_features_parse_release(a->emulated_version, &minor, &err) < 0)
		return usage_error("--emulated-version: %s", err.msg);
	sx_features_init(f, minor);
	if (a->feature_gates[0] && sx_features_set(f, a->feature_gates, &err) < 0)
		return usage_error("--feature-gates: %s", err.msg);
	return -1;
}

/* One startup line: which release's behaviour runs, with which gates
 * away from its defaults (after setup, so a usage error stays one line). */
static void log_features(const struct sx_features *f)
{
	char diff[1024];

	sx_features_diff(f, diff, sizeof(diff));
	sx_log(1, "behaving as kube-scheduler 1.%d; feature gates set away from its defaults: %s",
	       sx_release(f), diff[0] ? diff : "none");
}

/* Loads one --state file into the cache (on top of the earlier ones) and
 * logs what it held, per kind: "state demo.yaml: 7 Node, 19 Pod". The
 * counts are the cache's growth, so an object that replaces one of an
 * earlier file with the same key is not counted again. -1 to go on, or
 * an exit code. */
static int load_state(struct sx_cache *cache, const char *path)
{
	struct sx_cache_stats before, after;
	struct sx_error err = {0};
	char ebuf[600], line[1024] = "";
	size_t len = 0;

	sx_cache_stats(cache, &before);
	if (sx_state_load_file(cache, path, &err) < 0)
		return usage_error("%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
	sx_cache_stats(cache, &after);
	for (int k = SX_KIND_UNKNOWN + 1; k < SX_KIND_COUNT && len < sizeof(line); k++) {
		uint64_t n = after.objects[k] - before.objects[k];
		if (n)
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%llu %s",
						len ? ", " : "", (unsigned long long)n,
						sx_kind_name((enum sx_kind)k));
	}
	sx_log(1, "state %s: %s", path, len ? line : "no objects");
	return -1;
}

/* Builds the profile, cache and cluster source. Returns -1 to go on, or an
 * exit code (2 for bad configuration, 1 for runtime failures). */
static int serve_setup(struct serve *s, const struct serve_args *a)
{
	struct sx_error err = {0};
	char ebuf[600];
	const char *pem_paths[3] = {a->tls_cert, a->tls_key, a->tls_client_ca};
	struct sx_features features;
	int rc;

	if ((rc = features_from_flags(a, &features)) >= 0)
		return rc;
	s->cfg = a->config ? sx_config_load_for(a->config, &features, &err)
			   : sx_config_default_for(&features, &err);
	if (!s->cfg)
		return usage_error("%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
	sx_config_set_pod_decoding(s->cfg);
	s->ex.profile = sx_config_profile(s->cfg, a->profile);
	if (!s->ex.profile)
		return usage_error("--extender-profile: no profile named '%s'", a->profile);
	for (int i = 0; i < 3; i++)
		if (pem_paths[i] && !(s->pem[i] = read_pem(pem_paths[i], &err)))
			return usage_error("%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
	if ((rc = leader_options(s, a)) >= 0)
		return rc;
	if (record_effective(s, a) < 0) {
		fprintf(stderr, "schedext serve: out of memory\n");
		return 1;
	}
	s->cache = sx_cache_new();
	s->metrics = sx_metrics_new();
	if (s->metrics) {
		sx_fw_metrics_define(s->metrics,
				     &s->cfg->features); /* the same families in every mode */
		s->sm = sx_serve_metrics_init(s->metrics, s->cfg, s->le_name, !a->standalone);
	}
	s->pool = sx_pool_new(pool_threads(s->cfg->parallelism));
	if (!s->cache || !s->metrics || !s->pool) {
		fprintf(stderr, "schedext serve: out of memory\n");
		return 1;
	}
	if (s->cfg->unsupported)
		sx_log(0,
		       "warning: the configuration asks for what schedext does not support "
		       "(ignored): %s",
		       s->cfg->unsupported);
	if (a->standalone && (rc = setup_extenders(s)) >= 0)
		return rc;
	if (a->state) {
		for (unsigned i = 0; i < a->nstates; i++)
			if ((rc = load_state(s->cache, a->states[i])) >= 0)
				return rc;
		/* The file's document tree is gone: give its pages back, or
		 * they stay resident for the life of the process. */
		malloc_trim(0);
	} else {
		client_options(s, a);
		s->kube = sx_kube_new(&s->ko, &err);
		if (!s->kube)
			return usage_error("%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
		sx_log(1, "connecting to %s", sx_kube_server(s->kube));
		/* An exec credential plugin that fails is a startup error. */
		if (sx_kube_authenticate(s->kube, &err) != 0) {
			fprintf(stderr, "schedext serve: %s\n",
				sx_error_string(&err, ebuf, sizeof(ebuf)));
			return 1;
		}
		/* delayed: the scheduler starts them once it leads */
		s->inf = delay_cache(s, a) ? NULL : sx_informers_start(s->kube, s->cache, &err);
		if (!s->inf && !delay_cache(s, a)) {
			fprintf(stderr, "schedext serve: %s\n",
				sx_error_string(&err, ebuf, sizeof(ebuf)));
			return 1;
		}
	}
	s->ex.cache = s->cache;
	s->ex.cfg = s->cfg;
	s->ex.pool = s->pool;
	s->ex.kube = s->kube;
	s->ex.metrics = s->metrics;
	s->ex.verb_requests = sx_metrics_find(s->metrics, "schedext_extender_verb_requests_total");
	s->ex.node_memo = sx_node_memo_new(NODE_MEMO_BYTES, NODE_MEMO_ITEMS);
	if (!s->ex.node_memo) {
		fprintf(stderr, "schedext serve: out of memory\n");
		return 1;
	}
	s->authz = sx_authz_new(&(struct sx_authz_opts){.kube = s->kube,
							.always_allow = a->always_allow,
							.allow_remote = a->debug_allow_remote});
	if (!s->authz) {
		fprintf(stderr, "schedext serve: out of memory\n");
		return 1;
	}
	log_features(&s->cfg->features);
	return -1;
}

/* --standalone: the scheduling loop on the same cache. */
static int start_standalone(struct serve *s, const struct serve_args *a)
{
	struct sx_scheduler_opts o = {.cache = s->cache,
				      .cfg = s->cfg,
				      .kube = s->kube,
				      .kube_opts = &s->ko,
				      .inf = s->inf,
				      .pool = s->pool,
				      .metrics = s->metrics,
				      .extenders = s->extenders,
				      .leader_elect = s->leader_elect,
				      .lease_name = s->le_name,
				      .lease_namespace = s->le_ns,
				      .lease_duration_s = s->le_s[0],
				      .renew_deadline_s = s->le_s[1],
				      .retry_period_s = s->le_s[2],
				      .delay_cache_until_active = delay_cache(s, a)};
	struct sx_error err = {0};

	if (sx_scheduler_start(&o, &s->sched, &err) < 0)
		return usage_error("%s", err.msg);
	return -1;
}

/* Waits for SIGTERM/SIGINT (blocked in every thread, taken here). */
static int wait_signal(const sigset_t *set)
{
	int sig = 0;

	while (sigwait(set, &sig) != 0)
		;
	return sig;
}

int sx_cmd_serve(int argc, char **argv)
{
	struct serve_args a = {.listen = "127.0.0.1:8888",
			       .threads = 0,
			       .max_conns = 1024,
			       .conn_timeout = 30,
			       .max_body = SX_SERVER_DEFAULT_MAX_BODY};
	struct serve s = {0};
	struct sx_server_opts so = {0};
	struct sx_server *srv;
	struct sx_error err = {0};
	char ebuf[600];
	sigset_t set;
	int rc, sig;

	sx_malloc_bound();
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	sx_intern_init();
	/* Block the stop signals before any thread starts so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = serve_setup(&s, &a);
	if (rc >= 0)
		goto out;
	so.listen = a.listen;
	so.threads = a.threads ? (unsigned)a.threads : http_threads();
	so.max_connections = (unsigned)a.max_conns;
	so.connection_timeout_s = (unsigned)a.conn_timeout;
	so.max_body_bytes = a.max_body;
	so.url_prefix = a.url_prefix;
	so.lease_name = a.standalone ? (s.le_name ? s.le_name : "schedext") : NULL;
	so.state_paths = a.states;
	so.nstates = a.nstates;
	so.debug_budget_s = a.debug_budget_s;
	so.authz = s.authz;
	so.tls_cert_pem = s.pem[0];
	so.tls_key_pem = s.pem[1];
	so.tls_client_ca_pem = s.pem[2];
	if (a.standalone && (rc = start_standalone(&s, &a)) >= 0)
		goto out;
	srv = sx_server_start(&so, &s.ex, s.inf, &err);
	if (!srv) {
		fprintf(stderr, "schedext serve: %s\n", sx_error_string(&err, ebuf, sizeof(ebuf)));
		rc = err.code == SX_EINVAL ? EXIT_USAGE : 1;
		goto out;
	}
	sx_log(1, "listening on %s (port %u, %s, profile %s)", a.listen, sx_server_port(srv),
	       so.tls_cert_pem ? "https" : "http", s.ex.profile->scheduler_name);
	sig = wait_signal(&set);
	sx_log(1, "received %s, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	sx_scheduler_stop(s.sched);
	s.sched = NULL;
	sx_server_stop(srv, SHUTDOWN_GRACE_S);
	rc = 0;
out:
	sx_scheduler_stop(s.sched);
	serve_free(&s);
	return rc;
}
