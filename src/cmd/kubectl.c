/* kubectl-schedext: the operator's commands (why, pending, what-if) on a
 * live cluster (one short-lived LIST through the user's kubeconfig) or on
 * a dump (--state FILE). The same binary as schedext, dispatched on its
 * name: `kubectl schedext why POD` runs `kubectl-schedext why POD`.
 * Usage errors and bad input print one line and exit 2. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedext/explain.h"
#include "schedext/intern.h"
#include "schedext/kube.h"
#include "schedext/pending.h"
#include "schedext/pool.h"
#include "schedext/server.h"
#include "schedext/whatif.h"
#include "kubectl.h"
#include "opts.h"

#define EXIT_USAGE	     2
#define MAX_INPUT_FILE_BYTES (4u << 20)
#define MAX_EDITS	     64

static const char usage_kubectl[] =
	"usage: kubectl schedext <command> [options]\n"
	"\n"
	"Commands:\n"
	"  why POD        where POD would go now and why every other node was rejected\n"
	"                 or scored lower (with PostFilter: what preemption would do)\n"
	"  pending        every pending pod, grouped by the plugin and reason that block it\n"
	"  what-if        place pods after changing the cluster, without changing it\n"
	"\n"
	"Run 'kubectl schedext <command> --help' for the options of a command.\n";

/* The options every command takes. */
#define USAGE_CLUSTER                                                                              \
	"Cluster (default: the current context of $KUBECONFIG or ~/.kube/config):\n"               \
	"  --kubeconfig FILE   kubeconfig file\n"                                                  \
	"  --context NAME      kubeconfig context\n"                                               \
	"  --state FILE        a dump instead of a live cluster (kubectl get\n"                    \
	"                      nodes,pods,pvc,pv,pdb,deploy -A -o json); repeat to merge\n"        \
	"                      several files (later objects win)\n"                                \
	"Scheduler:\n"                                                                             \
	"  --config FILE       KubeSchedulerConfiguration (default: the upstream default)\n"       \
	"  --config-map NS/NAME[/KEY]  the one the cluster runs, from a ConfigMap (of the\n"       \
	"                      live cluster, or of the dump); KEY defaults to its only key\n"      \
	"  --profile NAME      profile to use (default: the pod's schedulerName)\n"                \
	"  --emulated-version V  the kube-scheduler release whose defaults run (1.35,\n"           \
	"                      1.36, 1.37; default 1.37), as for schedext serve\n"                 \
	"  --feature-gates LIST  feature gates on top of them (A=true,B=false); repeatable\n"      \
	"Output:\n"                                                                                \
	"  -o, --output text|json|yaml  (default text)\n"                                          \
	"  -h, --help          this help\n"

static const char usage_why[] =
	"usage: kubectl schedext why POD [-n NS] [options]\n"
	"\n"
	"Runs one scheduling cycle for the pending pod POD over every node and prints\n"
	"where it would go and why every other node was rejected or scored lower; when\n"
	"no node fits, the FailedScheduling message and what preemption would do (a dry\n"
	"run: nothing is evicted). A bound pod is reported as such.\n"
	"\n"
	"  -n, --namespace NS  the pod's namespace (default: the context's)\n"
	"  --web               serve the page for the pod instead of printing\n"
	"  --listen ADDR       with --web: where to listen (default "
	"127.0.0.1:8899)\n" USAGE_CLUSTER;

static const char usage_pending[] =
	"usage: kubectl schedext pending [-n NS | -A] [options]\n"
	"\n"
	"Runs one cycle for every pending pod and groups them by the plugin and reason\n"
	"that reject the most nodes (or their PreFilter rejection).\n"
	"\n"
	"  -n, --namespace NS  only this namespace (default: the context's)\n"
	"  -A, --all-namespaces  every namespace\n" USAGE_CLUSTER;

static const char usage_what_if[] =
	"usage: kubectl schedext what-if EDIT... [options]\n"
	"\n"
	"Changes a copy of the cluster and places pods one after another with assume,\n"
	"in QueueSort order, preempting as DefaultPreemption would. Nothing is written.\n"
	"\n"
	"Edits (repeatable, applied in order; FILExN means N copies):\n"
	"  --add-node FILE[xN]  add N nodes like the Node in FILE (NAME, NAME-2, ...)\n"
	"  --remove-node NAME   remove a node; its pods become pending\n"
	"  --drain NODE         cordon a node and make its pods pending (but DaemonSet\n"
	"                       and mirror pods)\n"
	"  --cordon NODE        mark a node unschedulable\n"
	"  --pods FILE[xN]      add N pods like the Pod in FILE\n"
	"  --scale NS/DEPLOYMENT=N  the Deployment's pod template, for replicas above\n"
	"                       spec.replicas\n"
	"The pods the edits make pending are placed; when the edits make none (only\n"
	"--add-node/--cordon), the cluster's pending pods are.\n"
	"\n" USAGE_CLUSTER;

enum edit_kind { E_ADD_NODE, E_REMOVE_NODE, E_DRAIN, E_CORDON, E_PODS, E_SCALE };

struct edit {
	enum edit_kind kind;
	const char *arg;
};

struct kargs {
	const char *cmd, *pod, *kubeconfig, *context, *config, *profile, *ns, *output;
	const char *state; /* the first --state: set when offline */
	unsigned nstates;
	const char *states[16]; /* --state FILE, repeatable: a dump plus more objects */
	const char *listen;
	const char *config_map; /* NS/NAME[/KEY]: the cluster's KubeSchedulerConfiguration */
	bool all_ns, web;
	unsigned nedits;
	struct edit edits[MAX_EDITS];
	/* every --feature-gates / --emulated-version value, joined by ',' */
	char gates[2048], release[128];
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kubectl-schedext: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int fail(struct sx_error *err)
{
	char msg[700];
	fprintf(stderr, "kubectl-schedext: %s\n", sx_error_string(err, msg, sizeof(msg)));
	return EXIT_USAGE;
}

static int add_edit(struct kargs *a, enum edit_kind kind, const char *arg)
{
	if (a->nedits == MAX_EDITS)
		return usage_error("what-if: at most %s edits", "64");
	a->edits[a->nedits++] = (struct edit){kind, arg};
	return 0;
}

/* Appends val to a comma-joined list (a flag given several times). */
static int append_list(char *list, size_t size, const char *val)
{
	size_t len = strlen(list);

	return (size_t)snprintf(list + len, size - len, "%s%s", len ? "," : "", val) < size - len
		       ? 0
		       : -1;
}

static int parse_args(int argc, char **argv, struct kargs *a)
{
	static const struct option opts[] = {
		{"kubeconfig", required_argument, 0, 'k'},
		{"context", required_argument, 0, 'C'},
		{"state", required_argument, 0, 's'},
		{"config", required_argument, 0, 'c'},
		{"profile", required_argument, 0, 'P'},
		{"namespace", required_argument, 0, 'n'},
		{"all-namespaces", no_argument, 0, 'A'},
		{"output", required_argument, 0, 'o'},
		{"web", no_argument, 0, 'w'},
		{"listen", required_argument, 0, 'l'},
		{"add-node", required_argument, 0, 1},
		{"remove-node", required_argument, 0, 2},
		{"drain", required_argument, 0, 3},
		{"cordon", required_argument, 0, 4},
		{"pods", required_argument, 0, 5},
		{"scale", required_argument, 0, 6},
		{"config-map", required_argument, 0, 'M'},
		{"feature-gates", required_argument, 0, 'g'},
		{"emulated-version", required_argument, 0, 'e'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	char msg[200];
	int c, rc = 0;

	opterr = 0;
	optind = 2;
	if (sx_opts_exact(argc, argv, 2, opts, "n:Ao:h", msg, sizeof(msg)) < 0)
		return usage_error("%s", msg);
	while (rc == 0 && optind < argc) {
		c = getopt_long(argc, argv, "+n:Ao:h", opts, NULL);
		if (c == -1) { /* a positional argument: the pod */
			if (a->pod)
				return usage_error("unexpected argument '%s'", argv[optind]);
			a->pod = argv[optind++];
			continue;
		}
		switch (c) {
		case 'k':
			a->kubeconfig = optarg;
			break;
		case 'C':
			a->context = optarg;
			break;
		case 's':
			if (a->nstates == sizeof(a->states) / sizeof(a->states[0]))
				return usage_error("at most %s --state files", "16");
			a->states[a->nstates++] = optarg;
			a->state = a->states[0];
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'P':
			a->profile = optarg;
			break;
		case 'n':
			a->ns = optarg;
			break;
		case 'A':
			a->all_ns = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'w':
			a->web = true;
			break;
		case 'l':
			a->listen = optarg;
			break;
		case 'M':
			a->config_map = optarg;
			break;
		case 'g':
			if (append_list(a->gates, sizeof(a->gates), optarg) < 0)
				return usage_error("%s: too long", "--feature-gates");
			break;
		case 'e':
			if (append_list(a->release, sizeof(a->release), optarg) < 0)
				return usage_error("%s: too long", "--emulated-version");
			break;
		case 1:
		case 2:
		case 3:
		case 4:
		case 5:
		case 6:
			rc = add_edit(a, (enum edit_kind)(c - 1), optarg);
			break;
		case 'h':
			fputs(!strcmp(a->cmd, "why")	   ? usage_why
			      : !strcmp(a->cmd, "pending") ? usage_pending
							   : usage_what_if,
			      stdout);
			return 1;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (rc)
		return rc;
	if (strcmp(a->output, "text") && strcmp(a->output, "json") && strcmp(a->output, "yaml"))
		return usage_error("--output must be text, json or yaml, not '%s'", a->output);
	if (a->state && (a->kubeconfig || a->context))
		return usage_error("%s", "--state cannot be combined with --kubeconfig/--context");
	if (a->config && a->config_map)
		return usage_error("%s", "--config and --config-map exclude each other");
	return 0;
}

/* ---------- the cluster ---------- */

struct env {
	struct sx_cluster_doc doc;
	struct sx_config *cfg;
	struct sx_cache *cache;
	struct sx_pool *pool;
	char *ns;		     /* the namespace in effect */
	struct sx_features features; /* --emulated-version, --feature-gates */
};

static void env_free(struct env *e)
{
	sx_pool_free(e->pool);
	sx_cache_free(e->cache);
	sx_config_free(e->cfg);
	sx_cluster_doc_free(&e->doc);
	free(e->ns);
}

/* The context's namespace (kubectl's default for -n). */
static char *context_namespace(const struct kargs *a)
{
	struct sx_kube_config kc = {0};
	struct sx_error err = {0};
	char *ns = NULL;

	if (sx_kubeconfig_resolve(a->kubeconfig, a->context, &kc, &err) == 0 && kc.namespace)
		ns = strdup(kc.namespace);
	sx_kube_config_clear(&kc);
	return ns;
}

static int read_cluster(const struct kargs *a, struct env *e, struct sx_error *err)
{
	struct sx_kube_opts ko = {
		.kubeconfig = a->kubeconfig, .context = a->context, .qps = 200, .burst = 400};
	struct sx_kube *kube;
	int rc;

	for (unsigned i = 0; i < a->nstates; i++) {
		int rc = sx_cluster_doc_read(&e->doc, a->states[i], err);
		if (rc < 0)
			return rc;
	}
	if (a->state)
		return 0;
	kube = sx_kube_new(&ko, err);
	if (!kube)
		return err->code < 0 ? err->code : SX_EINVAL;
	rc = sx_cluster_doc_list(&e->doc, kube, err);
	sx_kube_free(kube);
	return rc;
}

/* The ConfigMap ns/name: from the dump, else GET from the live cluster.
 * Caller deletes. */
static cJSON *find_config_map(const struct kargs *a, struct env *e, const char *ns,
			      const char *name, struct sx_error *err)
{
	cJSON *cm = sx_cluster_doc_find(&e->doc, "ConfigMap", ns, name);
	struct sx_kube_opts ko = {.kubeconfig = a->kubeconfig, .context = a->context};
	char path[600], *resp = NULL;
	size_t len = 0;
	long status = 0;
	struct sx_kube *kube;

	if (cm || a->state) {
		if (!cm)
			sx_error_set(err, SX_ENOENT, "configmap %s/%s not found in the dump", ns,
				     name);
		return cm ? cJSON_Duplicate(cm, true) : NULL;
	}
	if (!(kube = sx_kube_new(&ko, err)))
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
	if (sx_kube_request(kube, "GET", path, NULL, NULL, 0, &status, &resp, &len, err) == 0 &&
	    status != 200)
		sx_error_set(err, SX_ENOENT, "configmap %s/%s: HTTP %ld", ns, name, status);
	cm = status == 200 ? cJSON_ParseWithLength(resp ? resp : "", len) : NULL;
	free(resp);
	sx_kube_free(kube);
	return cm;
}

/* --config-map NS/NAME[/KEY]: the KubeSchedulerConfiguration in data[KEY]
 * (KEY: the ConfigMap's only key when omitted). */
static struct sx_config *config_from_map(const struct kargs *a, struct env *e, struct sx_error *err)
{
	char ns[254], name[254], key[254] = "";
	const char *spec = a->config_map, *s1 = strchr(spec, '/'),
		   *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	const cJSON *data, *val = NULL;
	struct sx_config *cfg = NULL;
	cJSON *cm;

	if (!s1 || s1 == spec || !s1[1] || (size_t)(s1 - spec) >= sizeof(ns) || strlen(s1) > 500) {
		sx_error_set(err, SX_EINVAL, "--config-map %s: expected NS/NAME[/KEY]", spec);
		return NULL;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(s1 - spec), spec);
	snprintf(name, sizeof(name), "%.*s", (int)(s2 ? s2 - s1 - 1 : (long)strlen(s1 + 1)),
		 s1 + 1);
	if (s2)
		snprintf(key, sizeof(key), "%s", s2 + 1);
	if (!(cm = find_config_map(a, e, ns, name, err)))
		return NULL;
	data = cJSON_GetObjectItemCaseSensitive(cm, "data");
	if (key[0])
		val = cJSON_GetObjectItemCaseSensitive(data, key);
	else if (cJSON_GetArraySize(data) == 1)
		val = data->child;
	if (!cJSON_IsString(val))
		sx_error_set(err, SX_EINVAL, "configmap %s/%s: %s", ns, name,
			     key[0] ? "data has no such key" : "name the key (NS/NAME/KEY)");
	else if (!(cfg = sx_config_parse_for(val->valuestring, strlen(val->valuestring),
					     &e->features, err))) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		sx_error_set(err, SX_EINVAL, "configmap %s/%s: %s", ns, name, msg);
	}
	cJSON_Delete(cm);
	return cfg;
}

/* The release and gates of --emulated-version and --feature-gates,
 * validated as schedext serve validates them (the release first, then the
 * gates at it), into e->features. 0 or an exit code. */
static int features_from_flags(const struct kargs *a, struct env *e)
{
	struct sx_error err = {0};
	int minor = SX_RELEASE_DEFAULT;

	if (a->release[0] && sx_features_parse_release(a->release, &minor, &err) < 0)
		return usage_error("--emulated-version: %s", err.msg);
	sx_features_init(&e->features, minor);
	if (a->gates[0] && sx_features_set(&e->features, a->gates, &err) < 0)
		return usage_error("--feature-gates: %s", err.msg);
	return 0;
}

static int setup(const struct kargs *a, struct env *e)
{
	struct sx_error err = {0};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int rc = features_from_flags(a, e);

	if (rc)
		return rc;
	if (!a->config_map) {
		e->cfg = a->config ? sx_config_load_for(a->config, &e->features, &err)
				   : sx_config_default_for(&e->features, &err);
		if (!e->cfg)
			return fail(&err);
	}
	if (a->ns)
		e->ns = strdup(a->ns);
	else if (!a->state)
		e->ns = context_namespace(a);
	if (!e->ns)
		e->ns = strdup("default");
	if (read_cluster(a, e, &err) < 0)
		return fail(&err);
	if (a->config_map && !(e->cfg = config_from_map(a, e, &err)))
		return fail(&err);
	sx_config_set_pod_decoding(e->cfg);
	e->pool = sx_pool_new(cores > 1 ? (unsigned)cores - 1 : 0);
	e->cache = sx_cache_new();
	if (!e->ns || !e->cache)
		return usage_error("%s", "out of memory");
	return 0;
}

static int load(struct env *e)
{
	struct sx_error err = {0};
	return sx_cluster_doc_load(&e->doc, e->cache, &err) < 0 ? fail(&err) : 0;
}

/* A namespace named on the command line must exist when the cluster lists
 * namespaces (a dump of only nodes and pods has none to check against). */
static int check_namespace(const struct env *e, const char *ns)
{
	cJSON *it;
	bool any = false;

	cJSON_ArrayForEach(it, e->doc.items)
	{
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
		if (cJSON_IsString(k) && strcmp(k->valuestring, "Namespace") == 0)
			any = true;
	}
	if (any && !sx_cluster_doc_find(&e->doc, "Namespace", NULL, ns))
		return usage_error("namespace \"%s\" not found", ns);
	return 0;
}

/* ---------- output ---------- */

static int print_report(struct sx_buf *b, const char *output)
{
	cJSON *json;

	if (b->failed)
		return usage_error("%s", "out of memory");
	if (strcmp(output, "yaml") != 0) {
		fwrite(b->data, 1, b->len, stdout);
		return 0;
	}
	json = cJSON_ParseWithLength(b->data, b->len);
	if (!json)
		return usage_error("%s", "out of memory");
	sx_buf_reset(b);
	sx_yaml_write(b, json);
	cJSON_Delete(json);
	fwrite(b->data, 1, b->len, stdout);
	return 0;
}

/* ---------- why ---------- */

static const struct sx_profile *pick_profile(const struct env *e, const char *name,
					     const struct sx_pod *pod)
{
	const struct sx_profile *p;
	if (name)
		return sx_config_profile(e->cfg, name);
	p = sx_config_profile(e->cfg, sx_str_get(pod->scheduler_name));
	return p ? p : sx_config_profile(e->cfg, NULL);
}

/* why --web: `schedext serve` on the same cluster (every --state, or the
 * kubeconfig) and configuration, printing the page's address first. */
static int serve_web(const struct kargs *a, const char *ns, const char *pod)
{
	const char *listen = a->listen ? a->listen : "127.0.0.1:8899";
	const char *argv[8 + 2 * SX_ARRAY_SIZE(a->states)];
	int argc = 0;

	argv[argc++] = "serve";
	argv[argc++] = "--listen";
	argv[argc++] = listen;
	for (unsigned i = 0; i < a->nstates; i++) {
		argv[argc++] = "--state";
		argv[argc++] = a->states[i];
	}
	if (a->kubeconfig) { /* else in-cluster / $KUBECONFIG: no flag */
		argv[argc++] = "--kubeconfig";
		argv[argc++] = a->kubeconfig;
	}
	if (a->context) {
		argv[argc++] = "--context";
		argv[argc++] = a->context;
	}
	if (a->config) {
		argv[argc++] = "--config";
		argv[argc++] = a->config;
	}
	argv[argc] = NULL;
	printf("open http://%s/ui#pod=%s/%s\n", listen, ns, pod);
	fflush(stdout);
	return sx_cmd_serve(argc, (char **)argv);
}

static int cmd_why(const struct kargs *a, struct env *e)
{
	sx_str node = SX_STR_EMPTY;
	bool assumed = false;
	const struct sx_pod *pod;
	struct sx_snapshot *snap;
	struct sx_buf out;
	int rc;

	if (!a->pod)
		return usage_error("why: %s", "a pod name is required (why POD [-n NS])");
	if ((rc = check_namespace(e, e->ns)) || (rc = load(e)))
		return rc;
	pod = sx_cache_get_pod(e->cache, sx_intern(e->ns), a->pod, &node, &assumed);
	if (!pod)
		return fprintf(stderr,
			       "kubectl-schedext: pod \"%s\" not found in namespace \"%s\"\n",
			       a->pod, e->ns),
		       EXIT_USAGE;
	if (a->web) {
		sx_pod_unref(pod);
		return serve_web(a, e->ns, a->pod);
	}
	const struct sx_profile *prof = pick_profile(e, a->profile, pod);
	if (!prof) {
		sx_pod_unref(pod);
		return usage_error("why: no profile named '%s'", a->profile);
	}
	sx_buf_init(&out);
	if (node != SX_STR_EMPTY) {
		char key[512];
		sx_pod_key(pod, key, sizeof(key));
		if (strcmp(a->output, "text") == 0)
			sx_buf_printf(&out, "Pod %s is already bound to node %s.\n", key,
				      sx_str_get(node));
		else {
			struct sx_jw w;

			sx_jw_init(&w, &out);
			sx_jw_object(&w);
			sx_jw_kstr(&w, "pod", key);
			sx_jw_kstr(&w, "boundNode", sx_str_get(node));
			sx_jw_end_object(&w);
			sx_buf_putc(&out, '\n');
		}
		rc = 0;
	} else {
		snap = sx_cache_snapshot(e->cache);
		struct sx_explain_opts o = {.profile = prof,
					    .snap = snap,
					    .pool = e->pool,
					    .text = strcmp(a->output, "text") == 0,
					    .cache = e->cache};
		rc = snap ? sx_explain(&o, pod, &out) : SX_ENOMEM;
		sx_snapshot_unref(snap);
	}
	sx_pod_unref(pod);
	rc = rc < 0 ? usage_error("%s", "out of memory") : print_report(&out, a->output);
	sx_buf_free(&out);
	return rc;
}

/* ---------- pending ---------- */

static int cmd_pending(const struct kargs *a, struct env *e)
{
	struct sx_pending_opts o = {.cfg = e->cfg,
				    .pool = e->pool,
				    .ns = a->all_ns ? NULL : e->ns,
				    .text = strcmp(a->output, "text") == 0};
	struct sx_buf out;
	int rc;

	if (a->pod)
		return usage_error("pending: unexpected argument '%s'", a->pod);
	if ((!a->all_ns && (rc = check_namespace(e, e->ns))) || (rc = load(e)))
		return rc;
	sx_buf_init(&out);
	rc = sx_pending_report(e->cache, &o, &out);
	rc = rc < 0 ? usage_error("%s", "out of memory") : print_report(&out, a->output);
	sx_buf_free(&out);
	return rc;
}

/* ---------- what-if ---------- */

/* "FILE" or "FILExN": the file and the number of copies. */
static int split_copies(const char *arg, char *path, size_t pathlen, uint32_t *copies)
{
	const char *x = strrchr(arg, 'x');
	char *end;
	unsigned long n;

	*copies = 1;
	snprintf(path, pathlen, "%s", arg);
	if (!x || !x[1] || access(arg, R_OK) == 0)
		return 0;
	n = strtoul(x + 1, &end, 10);
	if (*end || x[1] < '0' || x[1] > '9')
		return 0;
	if (n == 0 || n > SX_WHATIF_MAX_COPIES) {
		fprintf(stderr, "kubectl-schedext: %s: copies must be between 1 and %u\n", arg,
			SX_WHATIF_MAX_COPIES);
		return EXIT_USAGE;
	}
	*copies = (uint32_t)n;
	if ((size_t)(x - arg) < pathlen)
		path[x - arg] = '\0';
	return 0;
}

static int file_edit(struct sx_whatif *w, const struct edit *ed, struct sx_error *err)
{
	char path[4096], *data;
	uint32_t copies;
	size_t len;
	int rc = split_copies(ed->arg, path, sizeof(path), &copies);
	FILE *f;

	if (rc)
		return rc;
	if (!(f = fopen(path, "rb")))
		return sx_error_set(err, SX_EIO, "open %s: %s", path, strerror(errno));
	data = malloc(MAX_INPUT_FILE_BYTES + 1);
	len = data ? fread(data, 1, MAX_INPUT_FILE_BYTES + 1, f) : 0;
	fclose(f);
	if (!data || len > MAX_INPUT_FILE_BYTES) {
		free(data);
		return sx_error_set(err, SX_ETOOBIG, "%s: larger than 4 MiB", path);
	}
	rc = ed->kind == E_ADD_NODE ? sx_whatif_add_node(w, data, len, copies, err)
				    : sx_whatif_add_pods(w, data, len, copies, err);
	free(data);
	if (rc < 0 && err->msg[0] && strncmp(err->msg, path, strlen(path)) != 0) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		sx_error_set(err, rc, "%s: %s", path, msg);
	}
	return rc;
}

/* --scale NS/DEPLOYMENT=N */
static int scale_edit(struct sx_whatif *w, const char *arg, struct sx_error *err)
{
	char ns[256], dep[256];
	const char *slash = strchr(arg, '/'), *eq = strrchr(arg, '=');
	char *end;
	unsigned long n;

	if (!slash || !eq || eq < slash || slash == arg || eq == slash + 1 ||
	    (size_t)(slash - arg) >= sizeof(ns) || (size_t)(eq - slash - 1) >= sizeof(dep))
		return sx_error_set(err, SX_EINVAL, "--scale %s: expected NS/DEPLOYMENT=N", arg);
	n = strtoul(eq + 1, &end, 10);
	if (!eq[1] || *end || eq[1] == '-' || n > SX_WHATIF_MAX_COPIES)
		return sx_error_set(err, SX_EINVAL, "--scale %s: replicas must be between 0 and %u",
				    arg, SX_WHATIF_MAX_COPIES);
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - arg), arg);
	snprintf(dep, sizeof(dep), "%.*s", (int)(eq - slash - 1), slash + 1);
	return sx_whatif_scale(w, ns, dep, (uint32_t)n, err);
}

static int apply_edit(struct sx_whatif *w, const struct edit *ed, struct sx_error *err)
{
	switch (ed->kind) {
	case E_ADD_NODE:
	case E_PODS:
		return file_edit(w, ed, err);
	case E_REMOVE_NODE:
		return sx_whatif_remove_node(w, ed->arg, err);
	case E_DRAIN:
		return sx_whatif_drain(w, ed->arg, err);
	case E_CORDON:
		return sx_whatif_cordon(w, ed->arg, err);
	case E_SCALE:
		return scale_edit(w, ed->arg, err);
	}
	return SX_EINVAL;
}

static int cmd_what_if(const struct kargs *a, struct env *e)
{
	struct sx_whatif w = {.doc = &e->doc};
	struct sx_placements p = {0};
	struct sx_error err = {0};
	const struct sx_profile *prof = sx_config_profile(e->cfg, a->profile);
	struct sx_buf out;
	int rc = 0;

	if (a->pod)
		return usage_error("what-if: unexpected argument '%s'", a->pod);
	if (!a->nedits)
		return usage_error("what-if: %s", "nothing to do: give --add-node, --remove-node, "
						  "--drain, --cordon, --pods or --scale");
	if (!prof)
		return usage_error("what-if: no profile named '%s'", a->profile);
	for (unsigned i = 0; rc == 0 && i < a->nedits; i++) {
		rc = apply_edit(&w, &a->edits[i], &err);
		if (rc == EXIT_USAGE)
			break;
		if (rc < 0)
			rc = fail(&err);
	}
	if (rc == 0 && w.npending == 0 && sx_whatif_add_cluster_pending(&w, e->cfg) < 0)
		rc = usage_error("%s", "out of memory");
	if (rc == 0 && sx_whatif_load(&w, e->cache, &err) < 0)
		rc = fail(&err);
	sx_buf_init(&out);
	if (rc == 0 && sx_place_pods(e->cache, &e->doc, e->cfg, prof, e->pool, w.pending,
				     w.npending, 0, &p) < 0)
		rc = usage_error("%s", "out of memory");
	if (rc == 0) {
		sx_placements_write(&out, &p, w.summary, strcmp(a->output, "text") == 0);
		rc = print_report(&out, a->output);
	}
	sx_buf_free(&out);
	sx_placements_free(&p);
	sx_whatif_free(&w);
	return rc;
}

/* ---------- entry ---------- */

int sx_cmd_kubectl(int argc, char **argv)
{
	struct kargs a = {.output = "text"};
	struct env e = {0};
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage_kubectl, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	a.cmd = argv[1];
	if (strcmp(a.cmd, "why") && strcmp(a.cmd, "pending") && strcmp(a.cmd, "what-if"))
		return usage_error("unknown command '%s' (why, pending, what-if)", a.cmd);
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (a.nedits && strcmp(a.cmd, "what-if") != 0)
		return usage_error("%s: what-if options belong to what-if", a.cmd);
	rc = setup(&a, &e);
	if (rc == 0 && !strcmp(a.cmd, "why"))
		rc = cmd_why(&a, &e);
	else if (rc == 0 && !strcmp(a.cmd, "pending"))
		rc = cmd_pending(&a, &e);
	else if (rc == 0)
		rc = cmd_what_if(&a, &e);
	env_free(&e);
	return rc;
}
