/* Strict decoding of a KubeSchedulerConfiguration, as kube-scheduler's
 * scheme decodes it (pkg/scheduler/apis/config/scheme: a codec factory
 * with serializer.EnableStrict): every key at any depth must be a field
 * of the v1 types (staging/src/k8s.io/kube-scheduler/config/v1), matched
 * case-sensitively; pluginConfig[].args are a RawExtension, decoded
 * afterwards per plugin as <Name>Args (types.go
 * KubeSchedulerConfiguration.DecodeNestedObjects, PluginConfig
 * decodeNestedObjects), and args of plugins without an args type are not
 * looked into. The errors are gathered as the versioning codec does
 * (runtime/serializer/versioning codec.Decode) into one
 * runtime.NewStrictDecodingError:
 *
 *   strict decoding error: unknown field "profiles[0].plugins.bogusSet",
 *   decoding .profiles[0].pluginConfig[1]: strict decoding error: decoding
 *   args for plugin DynamicResources: strict decoding error: unknown field
 *   "bogusArg"
 *
 * A field carries the release that added it: with an older release
 * emulated it is unknown, as that release's kube-scheduler refuses it. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "schedext/buf.h"

enum kind {
	K_VALUE,  /* a scalar, or any JSON not looked into (maps, RawExtension) */
	K_OBJECT, /* an object of sub's fields */
	K_LIST,	  /* a list of objects of sub's fields */
};

struct schema;

struct field {
	const char *key;
	enum kind kind;
	const struct schema *sub;
	int since; /* minor of the first release with the field (0: every one) */
};

struct schema {
	const struct field *f;
	size_t n;
};

#define SCHEMA(name, ...)                                                                          \
	static const struct field name##_f[] = {__VA_ARGS__};                                      \
	static const struct schema name = {name##_f, SX_ARRAY_SIZE(name##_f)}
#define V(k)                                                                                       \
	{                                                                                          \
		k, K_VALUE, NULL, 0                                                                \
	}
#define O(k, s)                                                                                    \
	{                                                                                          \
		k, K_OBJECT, &s, 0                                                                 \
	}
#define LST(k, s)                                                                                  \
	{                                                                                          \
		k, K_LIST, &s, 0                                                                   \
	}
#define TYPEMETA V("kind"), V("apiVersion")

/* ---------- KubeSchedulerConfiguration (config/v1 types.go) ---------- */

SCHEMA(plugin_s, V("name"), V("weight"));
SCHEMA(plugin_set_s, LST("enabled", plugin_s), LST("disabled", plugin_s));
SCHEMA(plugins_s, O("preEnqueue", plugin_set_s), O("queueSort", plugin_set_s),
       O("preFilter", plugin_set_s), O("filter", plugin_set_s), O("postFilter", plugin_set_s),
       O("preScore", plugin_set_s), O("score", plugin_set_s), O("reserve", plugin_set_s),
       O("permit", plugin_set_s), O("preBind", plugin_set_s), O("bind", plugin_set_s),
       O("postBind", plugin_set_s), O("multiPoint", plugin_set_s),
       /* the PodGroup extension points of topology-aware and workload-aware
	* scheduling (kubernetes PRs 137083, 137201: 1.36; 139674: 1.37) */
       {"placementGenerate", K_OBJECT, &plugin_set_s, 36},
       {"placementScore", K_OBJECT, &plugin_set_s, 36},
       {"podGroupPostFilter", K_OBJECT, &plugin_set_s, 37});
/* args are checked by check_args, per plugin */
SCHEMA(plugin_config_s, V("name"), V("args"));
SCHEMA(profile_s, V("schedulerName"), V("percentageOfNodesToScore"), O("plugins", plugins_s),
       LST("pluginConfig", plugin_config_s));
SCHEMA(tls_s, V("insecure"), V("serverName"), V("certFile"), V("keyFile"), V("caFile"),
       V("certData"), V("keyData"), V("caData"));
SCHEMA(managed_s, V("name"), V("ignoredByScheduler"));
SCHEMA(extender_s, V("urlPrefix"), V("filterVerb"), V("preemptVerb"), V("prioritizeVerb"),
       V("weight"), V("bindVerb"), V("enableHTTPS"), O("tlsConfig", tls_s), V("httpTimeout"),
       V("nodeCacheCapable"), LST("managedResources", managed_s), V("ignorable"));
SCHEMA(leader_s, V("leaderElect"), V("leaseDuration"), V("renewDeadline"), V("retryPeriod"),
       V("resourceLock"), V("resourceName"), V("resourceNamespace"));
SCHEMA(client_s, V("kubeconfig"), V("acceptContentTypes"), V("contentType"), V("qps"), V("burst"));
/* healthzBindAddress and metricsBindAddress are read (and warned about)
 * as schedext always has, for configurations written for older APIs. */
SCHEMA(config_s, TYPEMETA, V("parallelism"), O("leaderElection", leader_s),
       O("clientConnection", client_s), V("healthzBindAddress"), V("metricsBindAddress"),
       V("enableProfiling"), V("enableContentionProfiling"), V("percentageOfNodesToScore"),
       V("podInitialBackoffSeconds"), V("podMaxBackoffSeconds"), LST("profiles", profile_s),
       LST("extenders", extender_s), V("delayCacheUntilActive"));

/* ---------- plugin args (config/v1 types_pluginargs.go) ---------- */

SCHEMA(resource_spec_s, V("name"), V("weight"));
SCHEMA(shape_s, V("utilization"), V("score"));
SCHEMA(rtcr_s, LST("shape", shape_s));
SCHEMA(scoring_s, V("type"), LST("resources", resource_spec_s),
       O("requestedToCapacityRatio", rtcr_s));
SCHEMA(fit_args_s, TYPEMETA, V("ignoredResources"), V("ignoredResourceGroups"),
       O("scoringStrategy", scoring_s));
SCHEMA(requirement_s, V("key"), V("operator"), V("values"));
SCHEMA(label_selector_s, V("matchLabels"), LST("matchExpressions", requirement_s));
/* core/v1 TopologySpreadConstraint */
SCHEMA(constraint_s, V("maxSkew"), V("topologyKey"), V("whenUnsatisfiable"),
       O("labelSelector", label_selector_s), V("minDomains"), V("nodeAffinityPolicy"),
       V("nodeTaintsPolicy"), V("matchLabelKeys"));
SCHEMA(pts_args_s, TYPEMETA, LST("defaultConstraints", constraint_s), V("defaultingType"));
SCHEMA(ipa_args_s, TYPEMETA, V("hardPodAffinityWeight"), V("ignorePreferredTermsOfExistingPods"));
/* core/v1 NodeAffinity */
SCHEMA(node_selector_term_s, LST("matchExpressions", requirement_s),
       LST("matchFields", requirement_s));
SCHEMA(node_selector_s, LST("nodeSelectorTerms", node_selector_term_s));
SCHEMA(preferred_term_s, V("weight"), O("preference", node_selector_term_s));
SCHEMA(node_affinity_s, O("requiredDuringSchedulingIgnoredDuringExecution", node_selector_s),
       LST("preferredDuringSchedulingIgnoredDuringExecution", preferred_term_s));
SCHEMA(na_args_s, TYPEMETA, O("addedAffinity", node_affinity_s));
SCHEMA(ba_args_s, TYPEMETA, LST("resources", resource_spec_s));
SCHEMA(vb_args_s, TYPEMETA, V("bindTimeoutSeconds"), LST("shape", shape_s));
SCHEMA(dp_args_s, TYPEMETA, V("minCandidateNodesPercentage"), V("minCandidateNodesAbsolute"));
/* bindingTimeout: kubernetes PR 134905, 1.35 */
SCHEMA(dra_args_s, TYPEMETA, V("filterTimeout"), {"bindingTimeout", K_VALUE, NULL, 35});

/* scheduler-plugins apis/config/v1 CoschedulingArgs */
SCHEMA(cosched_args_s, TYPEMETA, V("permitWaitingTimeSeconds"), V("podGroupBackoffSeconds"));

/* The plugins with an args type registered in the v1 scheme (and the
 * out-of-tree ones of the registry). */
static const struct {
	const char *plugin;
	const struct schema *args;
} args_types[] = {
	{"NodeResourcesFit", &fit_args_s},
	{"PodTopologySpread", &pts_args_s},
	{"InterPodAffinity", &ipa_args_s},
	{"NodeAffinity", &na_args_s},
	{"NodeResourcesBalancedAllocation", &ba_args_s},
	{"VolumeBinding", &vb_args_s},
	{"DefaultPreemption", &dp_args_s},
	{"DynamicResources", &dra_args_s},
	{"Coscheduling", &cosched_args_s},
};

/* ---------- the walk ---------- */

/* The strict errors gathered: "e1, e2, ..." (as NewStrictDecodingError
 * joins them). */
struct strict {
	int release;
	unsigned n;
	struct sx_buf all;
};

static void add(struct strict *s, const char *fmt, const char *a, const char *b)
{
	if (s->n++)
		sx_buf_puts(&s->all, ", ");
	sx_buf_printf(&s->all, fmt, a, b);
}

static const struct field *lookup(const struct schema *sc, const char *key, int release)
{
	for (size_t i = 0; i < sc->n; i++)
		if (strcmp(sc->f[i].key, key) == 0 && sc->f[i].since <= release)
			return &sc->f[i];
	return NULL;
}

static void walk(const cJSON *obj, const struct schema *sc, const char *path, struct strict *s);

/* One field's value: objects and lists of objects are looked into. */
static void walk_value(const cJSON *v, const struct field *f, const char *path, struct strict *s)
{
	char sub[512];
	int i = 0;
	const cJSON *it;

	if (f->kind == K_OBJECT && cJSON_IsObject(v)) {
		walk(v, f->sub, path, s);
		return;
	}
	if (f->kind != K_LIST || !cJSON_IsArray(v))
		return;
	cJSON_ArrayForEach(it, v)
	{
		/* a path past the buffer is cut (the message is bounded anyway) */
		if (snprintf(sub, sizeof(sub), "%s[%d]", path, i++) < 0)
			return;
		if (cJSON_IsObject(it))
			walk(it, f->sub, sub, s);
	}
}

static void walk(const cJSON *obj, const struct schema *sc, const char *path, struct strict *s)
{
	char sub[512];
	const cJSON *it;

	cJSON_ArrayForEach(it, obj)
	{
		const struct field *f = lookup(sc, it->string, s->release);

		if (snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", it->string) < 0)
			return;
		if (!f)
			add(s, "unknown field \"%s\"%s", sub, "");
		else
			walk_value(it, f, sub, s);
	}
}

static const struct schema *args_schema(const cJSON *item)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");

	for (size_t i = 0; cJSON_IsString(name) && i < SX_ARRAY_SIZE(args_types); i++)
		if (strcmp(args_types[i].plugin, name->valuestring) == 0)
			return args_types[i].args;
	return NULL;
}

/* DecodeNestedObjects: one error per pluginConfig entry whose args have
 * unknown fields, wrapping those fields' errors. */
static void check_args(const cJSON *root, struct strict *s)
{
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles"), *prof;
	int i = 0;

	if (!cJSON_IsArray(profiles))
		return;
	cJSON_ArrayForEach(prof, profiles)
	{
		const cJSON *pc = cJSON_GetObjectItemCaseSensitive(prof, "pluginConfig"), *item;
		int j = 0;

		i++;
		if (!cJSON_IsArray(pc))
			continue;
		cJSON_ArrayForEach(item, pc)
		{
			const struct schema *sc = args_schema(item);
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(item, "args");
			struct strict in = {.release = s->release};
			char head[160];

			j++;
			if (!sc || !cJSON_IsObject(args))
				continue;
			sx_buf_init(&in.all);
			walk(args, sc, "", &in);
			sx_buf_putc(&in.all, '\0');
			if (in.all.failed)
				s->all.failed = true;
			else if (in.n) {
				snprintf(head, sizeof(head),
					 "decoding .profiles[%d].pluginConfig[%d]: "
					 "strict decoding error: decoding args for plugin %.40s: ",
					 i - 1, j - 1,
					 cJSON_GetObjectItemCaseSensitive(item, "name")
						 ->valuestring);
				add(s, "%sstrict decoding error: %s", head, in.all.data);
			}
			sx_buf_free(&in.all);
		}
	}
}

int sx__config_strict_decode(const cJSON *root, int release, struct sx_error *err)
{
	struct strict s = {.release = release};
	int rc = 0;

	sx_buf_init(&s.all);
	walk(root, &config_s, "", &s);
	check_args(root, &s);
	sx_buf_putc(&s.all, '\0');
	if (s.all.failed)
		rc = sx_error_set(err, SX_ENOMEM, "out of memory");
	else if (s.n)
		rc = sx_error_set(err, SX_EINVAL, "strict decoding error: %s", s.all.data);
	sx_buf_free(&s.all);
	return rc;
}
