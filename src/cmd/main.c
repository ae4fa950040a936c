/* schedext command line: serve, explain, why, pending, what-if, version,
 * help. Usage errors print a one-line reason and exit 2. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/explain.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/pool.h"
#include "schedext/server.h"
#include "schedext/snapshot.h"
#include "schedext/state.h"
#include "schedext/whatif.h"
#include "kubectl.h"
#include "opts.h"

#define EXIT_USAGE	   2
#define MAX_POD_FILE_BYTES (4u << 20)
#define MAX_EXPLAIN_NODES  100000

static const char usage_main[] =
	"usage: schedext <command> [options]\n"
	"\n"
	"Commands:\n"
	"  serve     run the extender HTTP server and the page /ui (and, with\n"
	"            --standalone, the scheduler)\n"
	"  explain   explain where a pod from a file would be scheduled and why\n"
	"  why       where a pod of the cluster would go now, and why not elsewhere\n"
	"  pending   every pending pod, grouped by the plugin and reason that block it\n"
	"  what-if   place pods after changing a copy of the cluster\n"
	"  version   print the version\n"
	"  help      this help\n"
	"\n"
	"why, pending and what-if are also installed as kubectl-schedext\n"
	"(kubectl schedext why POD).\n"
	"Run 'schedext <command> --help' for the options of a command.\n";

static const char usage_explain[] =
	"usage: schedext explain --state FILE --pod FILE [options]\n"
	"\n"
	"Runs one scheduling cycle for the pod against the cluster state, evaluating\n"
	"every node (percentageOfNodesToScore 100), and prints why each node was\n"
	"rejected or how it scored.\n"
	"\n"
	"  --state FILE       cluster state: a v1 List or a multi-document YAML/JSON stream;\n"
	"                     repeat to merge several files (later objects win)\n"
	"  --pod FILE         the pod (v1 Pod, JSON or YAML; an unknown field is an error)\n"
	"  --config FILE      KubeSchedulerConfiguration (default: the upstream default profile)\n"
	"  --profile NAME     profile (schedulerName) to use (default: the pod's schedulerName\n"
	"                     if served, else the first profile)\n"
	"  --nodes A,B,...    only these candidate nodes (the others still count; each\n"
	"                     must exist)\n"
	"  --format json|text output format (default json)\n"
	"  --emulated-version V  the kube-scheduler release whose defaults run (1.35,\n"
	"                     1.36, 1.37; default 1.37), as for serve\n"
	"  --feature-gates LIST  feature gates on top of them (A=true,B=false), as for serve\n"
	"  -h, --help         this help\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "schedext: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* Reads a whole file of at most max bytes; caller frees. */
static char *read_file(const char *path, size_t max, size_t *len, struct sx_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		/* Go's os.Open words, as kubectl prints them */
		sx_error_set(err, SX_EIO, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	char *data = malloc(max + 1);
	size_t n = data ? fread(data, 1, max + 1, f) : 0;
	fclose(f);
	if (!data) {
		sx_error_set(err, SX_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	if (n > max) {
		free(data);
		sx_error_set(err, SX_ETOOBIG, "%s: larger than %zu bytes", path, max);
		return NULL;
	}
	data[n] = 0;
	*len = n;
	return data;
}

/* The pod of --pod FILE, checked strictly (sx_input_check): an unknown
 * field, a bad quantity or a file that is not a Pod fails, naming the file,
 * the pod and the field. */
static struct sx_pod *load_pod(const char *path, struct sx_error *err)
{
	char msg[sizeof(err->path) + sizeof(err->msg) + 2];
	size_t len;
	char *data = read_file(path, MAX_POD_FILE_BYTES, &len, err);
	if (!data)
		return NULL;
	cJSON *docs = sx_parse_documents(data, len, err);
	free(data);
	if (!docs)
		goto fail;
	const cJSON *obj = cJSON_GetArrayItem(docs, 0);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	struct sx_pod *pod = NULL;
	if (!cJSON_IsObject(obj))
		sx_error_set(err, SX_EINVAL, "expected a v1 Pod object");
	else if (kind && (!cJSON_IsString(kind) || strcmp(kind->valuestring, "Pod") != 0))
		sx_error_set(err, SX_EINVAL, "kind: expected \"Pod\"");
	else if (sx_input_check(obj, "Pod", err) == 0)
		pod = sx_decode_pod(obj, err);
	cJSON_Delete(docs);
	if (pod)
		return pod;
fail:
	sx_error_string(err, msg, sizeof(msg));
	sx_error_set(err, SX_EINVAL, "%s: %s", path, msg);
	return NULL;
}

/* Splits "a,b,c" into interned names. */
static sx_str *parse_node_list(const char *list, uint32_t *n)
{
	sx_str *out = calloc(MAX_EXPLAIN_NODES, sizeof(*out));
	*n = 0;
	if (!out)
		return NULL;
	for (const char *p = list; *p && *n < MAX_EXPLAIN_NODES;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len)
			out[(*n)++] = sx_intern_n(p, len);
		p += len + (end ? 1 : 0);
	}
	return out;
}

#define MAX_STATE_FILES 16

struct explain_args {
	const char *states[MAX_STATE_FILES]; /* --state, repeatable: merged in order */
	unsigned nstates;
	const char *pod, *config, *profile, *nodes, *format;
	/* every --feature-gates / --emulated-version value, joined by ',' */
	char gates[2048], release[128];
};

/* Appends val to a ','-joined list; 0, or -1 when it does not fit. */
static int append_list(char *list, size_t size, const char *val)
{
	size_t len = strlen(list);

	return (size_t)snprintf(list + len, size - len, "%s%s", len ? "," : "", val) < size - len
		       ? 0
		       : -1;
}

static int parse_explain_args(int argc, char **argv, struct explain_args *a)
{
	static const struct option opts[] = {
		{"state", required_argument, 0, 's'},
		{"pod", required_argument, 0, 'p'},
		{"config", required_argument, 0, 'c'},
		{"profile", required_argument, 0, 'P'},
		{"nodes", required_argument, 0, 'n'},
		{"format", required_argument, 0, 'f'},
		{"feature-gates", required_argument, 0, 'g'},
		{"emulated-version", required_argument, 0, 'e'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	char msg[200];
	int c;
	opterr = 0;
	optind = 1;
	memset(a, 0, sizeof(*a));
	a->format = "json";
	if (sx_opts_exact(argc, argv, 1, opts, "h", msg, sizeof(msg)) < 0)
		return usage_error("explain: %s", msg);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (a->nstates == MAX_STATE_FILES)
				return usage_error("explain: at most %s --state files", "16");
			a->states[a->nstates++] = optarg;
			break;
		case 'p':
			a->pod = optarg;
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'P':
			a->profile = optarg;
			break;
		case 'n':
			a->nodes = optarg;
			break;
		case 'f':
			a->format = optarg;
			break;
		case 'g':
			if (append_list(a->gates, sizeof(a->gates), optarg) < 0)
				return usage_error("explain: %s: too long", "--feature-gates");
			break;
		case 'e':
			if (append_list(a->release, sizeof(a->release), optarg) < 0)
				return usage_error("explain: %s: too long", "--emulated-version");
			break;
		case 'h':
			fputs(usage_explain, stdout);
			return 1;
		default:
			return usage_error("explain: unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("explain: unexpected argument '%s'", argv[optind]);
	if (!a->nstates)
		return usage_error("explain: %s is required", "--state");
	if (!a->pod)
		return usage_error("explain: %s is required", "--pod");
	if (strcmp(a->format, "json") != 0 && strcmp(a->format, "text") != 0)
		return usage_error("explain: --format must be json or text, not '%s'", a->format);
	return 0;
}

static const struct sx_profile *pick_profile(const struct sx_config *cfg, const char *name,
					     const struct sx_pod *pod)
{
	if (name)
		return sx_config_profile(cfg, name);
	const struct sx_profile *p = sx_config_profile(cfg, sx_str_get(pod->scheduler_name));
	return p ? p : sx_config_profile(cfg, NULL);
}

struct explain_env {
	struct sx_config *cfg;
	struct sx_cache *cache;
	struct sx_pod *pod;
	struct sx_snapshot *snap;
	sx_str *nodes;
	uint32_t nnodes;
};

static void explain_env_free(struct explain_env *e)
{
	sx_snapshot_unref(e->snap);
	sx_pod_unref(e->pod);
	sx_cache_free(e->cache);
	sx_config_free(e->cfg);
	free(e->nodes);
}

static int fail_input(struct sx_error *err)
{
	char msg[700];
	fprintf(stderr, "schedext: %s\n", sx_error_string(err, msg, sizeof(msg)));
	return EXIT_USAGE;
}

/* The release and gates of --emulated-version and --feature-gates
 * (features.h); 0, or the exit code after printing the error. */
static int explain_features(const struct explain_args *a, struct sx_features *f)
{
	struct sx_error err = {0};
	int minor = SX_RELEASE_DEFAULT;

	if (a->release[0] && sx_features_parse_release(a->release, &minor, &err) < 0)
		return usage_error("explain: --emulated-version: %s", err.msg);
	sx_features_init(f, minor);
	if (a->gates[0] && sx_features_set(f, a->gates, &err) < 0)
		return usage_error("explain: --feature-gates: %s", err.msg);
	return 0;
}

static int cmd_explain(int argc, char **argv)
{
	struct explain_args a;
	struct explain_env e = {0};
	struct sx_error err = {0};
	char msg[700];
	int rc = parse_explain_args(argc, argv, &a);
	struct sx_features features;
	if (rc)
		return rc == 1 ? 0 : rc;
	if ((rc = explain_features(&a, &features)))
		return rc;
	e.cfg = a.config ? sx_config_load_for(a.config, &features, &err)
			 : sx_config_default_for(&features, &err);
	if (!e.cfg)
		return fail_input(&err);
	sx_config_set_pod_decoding(e.cfg);
	e.cache = sx_cache_new();
	if (!e.cache)
		return usage_error("explain: %s", "out of memory");
	for (unsigned i = 0; i < a.nstates; i++) {
		if (sx_state_load_file(e.cache, a.states[i], &err) < 0) {
			explain_env_free(&e);
			return fail_input(&err);
		}
	}
	e.pod = load_pod(a.pod, &err);
	if (!e.pod) {
		explain_env_free(&e);
		return fail_input(&err);
	}
	const struct sx_profile *prof = pick_profile(e.cfg, a.profile, e.pod);
	if (!prof) {
		explain_env_free(&e);
		return usage_error("explain: no profile named '%s'", a.profile);
	}
	if (a.nodes && !(e.nodes = parse_node_list(a.nodes, &e.nnodes))) {
		explain_env_free(&e);
		return usage_error("explain: %s", "out of memory");
	}
	e.snap = sx_cache_snapshot(e.cache);
	/* A name kube-scheduler would never send: refusing it beats explaining
	 * "0/7 nodes are available" over an empty candidate list. */
	for (uint32_t i = 0; e.snap && i < e.nnodes; i++) {
		if (sx_snapshot_find(e.snap, e.nodes[i]) < 0) {
			snprintf(msg, sizeof(msg), "%s", sx_str_get(e.nodes[i]));
			explain_env_free(&e);
			return usage_error("explain: --nodes: node \"%s\" not found", msg);
		}
	}
	struct sx_explain_opts opts = {.profile = prof,
				       .snap = e.snap,
				       .nodes = e.nodes,
				       .nnodes = e.nnodes,
				       .text = strcmp(a.format, "text") == 0,
				       .cache = e.cache};
	struct sx_buf out;
	sx_buf_init(&out);
	rc = e.snap ? sx_explain(&opts, e.pod, &out) : SX_ENOMEM;
	if (rc == 0 && !out.failed)
		fwrite(out.data, 1, out.len, stdout);
	sx_buf_free(&out);
	explain_env_free(&e);
	if (rc < 0) {
		fprintf(stderr, "schedext: explain: out of memory\n");
		return 1;
	}
	return 0;
}

/* The name the binary was started by, without its directory. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int main(int argc, char **argv)
{
	sx_intern_init();
	if (argc > 0 && strcmp(base_name(argv[0]), "kubectl-schedext") == 0)
		return sx_cmd_kubectl(argc, argv);
	if (argc < 2) {
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
			puts("usage: schedext version\n\nPrints the version of schedext.");
			return 0;
		}
		if (argc > 2)
			return usage_error("version: unexpected argument '%s'", argv[2]);
		printf("schedext %s\n", SX_VERSION);
		return 0;
	}
	if (strcmp(cmd, "serve") == 0)
		return sx_cmd_serve(argc - 1, argv + 1);
	if (strcmp(cmd, "explain") == 0)
		return cmd_explain(argc - 1, argv + 1);
	if (strcmp(cmd, "why") == 0 || strcmp(cmd, "pending") == 0 || strcmp(cmd, "what-if") == 0)
		return sx_cmd_kubectl(argc, argv);
	return usage_error("unknown command '%s' (serve, explain, why, pending, what-if, version, "
			   "help)",
			   cmd);
}
