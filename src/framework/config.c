/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → profiles
 * (upstream pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go).
 *
 * Steps, as upstream: (1) the user's plugin sets are merged with the default
 * multiPoint set (defaults.go mergePluginSet: defaults keep their order,
 * re-configured ones are updated in place, disabled ones dropped, new ones
 * appended); (2) at each extension point the explicit list and the
 * multiPoint plugins implementing that point are combined (framework.go
 * expandMultiPointPlugins: overrides first, then multiPoint, then the
 * remaining explicit ones); (3) one instance per plugin from its args. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "schedext/decode.h"
#include "schedext/dra_alloc.h"
#include "schedext/framework.h"
#include "schedext/handle.h"
#include "schedext/registry.h"

#define MAX_CONFIG_BYTES (16u << 20)
#define MAX_PROFILES	 64
#define MAX_ENTRIES	 SX_MAX_PLUGINS

static const char *const point_names[SX_PT_COUNT] = {
	"preEnqueue", "queueSort", "preFilter", "filter",  "postFilter", "preScore",
	"score",      "reserve",   "permit",	"preBind", "bind",	 "postBind",
};

const char *sx_point_name(enum sx_point pt)
{
	return pt < SX_PT_COUNT ? point_names[pt] : "?";
}

/* The PodGroup extension points and the release whose Plugins type added
 * them (kubernetes PRs 137083 and 137201 in 1.36, 139674 in 1.37). */
static const struct {
	const char *name;
	int since;
} group_points[SX_GPT_COUNT] = {
	{"placementGenerate", 36},
	{"placementScore", 36},
	{"podGroupPostFilter", 37},
};

const char *sx_group_point_name(enum sx_group_point gpt)
{
	return gpt < SX_GPT_COUNT ? group_points[gpt].name : "?";
}

int sx_group_point_since(enum sx_group_point gpt)
{
	return gpt < SX_GPT_COUNT ? group_points[gpt].since : 0;
}

/* Upstream plugins schedext does not implement (volume, DRA): accepted in
 * configs (enabling one is ignored with a warning) so that kube-scheduler's
 * own configs load. */
static const char *const unimplemented[] = {
	"VolumeRestrictions",
	"NodeVolumeLimits",
	"VolumeBinding",
	"VolumeZone",
	"DynamicResources",
	"DefaultPreemption",
	NULL,
};

static bool is_unimplemented(const char *name)
{
	for (int i = 0; unimplemented[i]; i++)
		if (strcmp(unimplemented[i], name) == 0)
			return sx_plugin_index(name) < 0;
	return false;
}

/* The default multiPoint set (1.34 order) with score weights. */
static const struct {
	const char *name;
	int weight;
} default_multipoint[] = {
	{"SchedulingGates", 0},
	{"PrioritySort", 0},
	{"NodeUnschedulable", 0},
	{"NodeName", 0},
	{"TaintToleration", 3},
	{"NodeAffinity", 2},
	{"NodePorts", 0},
	{"NodeResourcesFit", 1},
	{"VolumeRestrictions", 0},
	{"NodeVolumeLimits", 0},
	{"VolumeBinding", 0},
	{"VolumeZone", 0},
	{"PodTopologySpread", 2},
	{"InterPodAffinity", 2},
	{"DynamicResources", 0},
	{"DefaultPreemption", 0},
	{"NodeResourcesBalancedAllocation", 1},
	{"ImageLocality", 1},
	{"DefaultBinder", 0},
};

struct entry {
	const char *name; /* borrowed from the JSON tree or static */
	int64_t weight;
};

struct plugin_set {
	unsigned nenabled, ndisabled;
	struct entry enabled[MAX_ENTRIES];
	const char *disabled[MAX_ENTRIES];
};

static bool implements(const struct sx_plugin *p, enum sx_point pt)
{
	switch (pt) {
	case SX_PT_PRE_ENQUEUE:
		return p->pre_enqueue != NULL;
	case SX_PT_QUEUE_SORT:
		return p->less != NULL;
	case SX_PT_PRE_FILTER:
		return p->pre_filter != NULL;
	case SX_PT_FILTER:
		return p->filter != NULL;
	case SX_PT_POST_FILTER:
		return p->post_filter != NULL;
	case SX_PT_PRE_SCORE:
		return p->pre_score != NULL;
	case SX_PT_SCORE:
		return p->score != NULL;
	case SX_PT_RESERVE:
		return p->reserve != NULL || p->unreserve != NULL;
	case SX_PT_PERMIT:
		return p->permit != NULL;
	case SX_PT_PRE_BIND:
		return p->pre_bind != NULL;
	case SX_PT_BIND:
		return p->bind != NULL;
	case SX_PT_POST_BIND:
		return p->post_bind != NULL;
	default:
		return false;
	}
}

static bool set_has_disabled(const struct plugin_set *s, const char *name)
{
	for (unsigned i = 0; i < s->ndisabled; i++)
		if (strcmp(s->disabled[i], name) == 0 || strcmp(s->disabled[i], "*") == 0)
			return true;
	return false;
}

static int find_enabled(const struct plugin_set *s, const char *name)
{
	for (unsigned i = 0; i < s->nenabled; i++)
		if (strcmp(s->enabled[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* ---------- reading the plugin sets ---------- */

static int read_name(const cJSON *item, const char **name, struct sx_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "name");
	if (!cJSON_IsObject(item) || !cJSON_IsString(n) || !n->valuestring[0])
		return sx_error_set(err, SX_EINVAL, "name: Required value");
	if (strcmp(n->valuestring, "*") != 0 && sx_plugin_index(n->valuestring) < 0 &&
	    !is_unimplemented(n->valuestring))
		return sx_error_set(err, SX_EINVAL, "name: Invalid value: \"%s\": unknown plugin",
				    n->valuestring);
	*name = n->valuestring;
	return 0;
}

static int read_weight(const cJSON *item, int64_t *weight, struct sx_error *err)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(item, "weight");
	*weight = 0;
	if (!w || cJSON_IsNull(w))
		return 0;
	if (!cJSON_IsNumber(w) || !sx_double_is_int64(w->valuedouble) || w->valuedouble < 0 ||
	    w->valuedouble > 2147483647.0)
		return sx_error_set(
			err, SX_EINVAL,
			"weight: Invalid value: %s: must be an integer in [0, 2147483647]",
			cJSON_IsNumber(w) ? "number" : "non-number");
	*weight = (int64_t)w->valuedouble;
	return 0;
}

static int read_entries(const cJSON *list, bool want_weight, struct plugin_set *s, bool disabled,
			struct sx_error *err)
{
	const cJSON *item;
	unsigned i = 0;
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list))
		return sx_error_set(err, SX_EINVAL, "expected a list");
	cJSON_ArrayForEach(item, list)
	{
		const char *name;
		int64_t weight = 0;
		int rc = read_name(item, &name, err);
		if (!rc && want_weight && !disabled)
			rc = read_weight(item, &weight, err);
		if (!rc && (disabled ? s->ndisabled : s->nenabled) >= MAX_ENTRIES)
			rc = sx_error_set(err, SX_ETOOBIG, "too many plugins");
		if (!rc && !disabled && find_enabled(s, name) >= 0)
			rc = sx_error_set(err, SX_EINVAL, "name: Duplicate value: \"%s\"", name);
		if (rc) {
			sx_error_prefixf(err, "[%u]", i);
			return rc;
		}
		if (disabled)
			s->disabled[s->ndisabled++] = name;
		else
			s->enabled[s->nenabled++] = (struct entry){name, weight};
		i++;
	}
	return 0;
}

static int read_plugin_set(const cJSON *obj, const char *key, struct plugin_set *s,
			   struct sx_error *err)
{
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(obj, key);
	int rc;
	memset(s, 0, sizeof(*s));
	if (!set || cJSON_IsNull(set))
		return 0;
	if (!cJSON_IsObject(set))
		rc = sx_error_set(err, SX_EINVAL, "expected an object");
	else if ((rc = read_entries(cJSON_GetObjectItemCaseSensitive(set, "enabled"), true, s,
				    false, err)) < 0)
		sx_error_prefix(err, "enabled");
	else if ((rc = read_entries(cJSON_GetObjectItemCaseSensitive(set, "disabled"), false, s,
				    true, err)) < 0)
		sx_error_prefix(err, "disabled");
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

/* mergePluginSet(defaults, custom) into out. */
static void merge_plugin_set(const struct plugin_set *def, const struct plugin_set *custom,
			     struct plugin_set *out)
{
	bool replaced[MAX_ENTRIES] = {false};
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < def->nenabled; i++) {
		if (set_has_disabled(custom, def->enabled[i].name))
			continue;
		int c = find_enabled(custom, def->enabled[i].name);
		if (c >= 0) {
			out->enabled[out->nenabled++] = custom->enabled[c];
			replaced[c] = true;
		} else {
			out->enabled[out->nenabled++] = def->enabled[i];
		}
	}
	for (unsigned i = 0; i < custom->nenabled && out->nenabled < MAX_ENTRIES; i++)
		if (!replaced[i])
			out->enabled[out->nenabled++] = custom->enabled[i];
	memcpy(out->disabled, custom->disabled, sizeof(custom->disabled));
	out->ndisabled = custom->ndisabled;
}

/* ---------- building a profile ---------- */

static int add_enabled(struct sx_profile *prof, enum sx_point pt, const char *name, int64_t weight)
{
	int idx = sx_plugin_index(name);
	if (idx < 0)
		return 0; /* unimplemented: warned once by warn_unimplemented */
	const struct sx_plugin *p = sx_plugins[idx];
	if (!implements(p, pt))
		return 0;
	struct sx_enabled *arr = realloc(prof->points[pt], sizeof(*arr) * (prof->n[pt] + 1));
	if (!arr)
		return SX_ENOMEM;
	prof->points[pt] = arr;
	arr[prof->n[pt]++] = (struct sx_enabled){p, idx, NULL, weight > 0 ? weight : 1};
	prof->instantiated[idx] = true;
	return 0;
}

/* Weight of a Score plugin: the score set's entry if present, else multiPoint's. */
static int64_t score_weight(const struct plugin_set *score, const struct plugin_set *multi,
			    const char *name)
{
	int i = find_enabled(score, name);
	if (i >= 0 && score->enabled[i].weight > 0)
		return score->enabled[i].weight;
	i = find_enabled(multi, name);
	return i >= 0 ? multi->enabled[i].weight : 0;
}

static bool explicitly_implements(const char *name, enum sx_point pt)
{
	int idx = sx_plugin_index(name);
	return idx >= 0 && implements(sx_plugins[idx], pt);
}

/* Logs one warning per plugin the configuration enables (its multiPoint
 * or any extension point; not the defaults) that schedext does not
 * implement: it is accepted so that kube-scheduler's configs load, and
 * ignored. */
static void warn_unimplemented(const struct sx_profile *prof, const struct plugin_set *sets,
			       unsigned nsets, const struct plugin_set *multi)
{
	const char *warned[MAX_ENTRIES];
	unsigned nwarned = 0;

	for (unsigned s = 0; s <= nsets; s++) {
		const struct plugin_set *set = s < nsets ? &sets[s] : multi;

		for (unsigned i = 0; i < set->nenabled; i++) {
			const char *name = set->enabled[i].name;
			unsigned w = 0;

			if (strcmp(name, "*") == 0 || sx_plugin_index(name) >= 0)
				continue;
			while (w < nwarned && strcmp(warned[w], name) != 0)
				w++;
			if (w < nwarned || nwarned == MAX_ENTRIES)
				continue;
			warned[nwarned++] = name;
			sx_log(0,
			       "warning: profile %s: plugin %s is not implemented by schedext; "
			       "ignored",
			       prof->scheduler_name, name);
		}
	}
}

/* expandMultiPointPlugins for one extension point. */
static int expand_point(struct sx_profile *prof, enum sx_point pt, const struct plugin_set *set,
			const struct plugin_set *multi, const struct plugin_set *score,
			struct sx_error *err)
{
	bool override[MAX_ENTRIES] = {false};
	const char *from_multi[MAX_ENTRIES];
	unsigned nmulti = 0;
	int rc = 0;
	bool all_disabled = false;
	for (unsigned i = 0; i < set->ndisabled; i++)
		all_disabled |= strcmp(set->disabled[i], "*") == 0;
	for (unsigned i = 0; i < multi->nenabled && !all_disabled; i++) {
		const char *name = multi->enabled[i].name;
		if (!explicitly_implements(name, pt) || set_has_disabled(set, name))
			continue;
		int at = find_enabled(set, name);
		if (at >= 0) {
			override[at] = true;
			continue;
		}
		from_multi[nmulti++] = name;
	}
	for (unsigned i = 0; i < set->nenabled && !rc; i++) {
		if (!override[i])
			continue;
		rc = add_enabled(prof, pt, set->enabled[i].name,
				 score_weight(score, multi, set->enabled[i].name));
	}
	for (unsigned i = 0; i < nmulti && !rc; i++)
		rc = add_enabled(prof, pt, from_multi[i],
				 score_weight(score, multi, from_multi[i]));
	for (unsigned i = 0; i < set->nenabled && !rc; i++) {
		const char *name = set->enabled[i].name;
		if (override[i])
			continue;
		if (sx_plugin_index(name) >= 0 && !explicitly_implements(name, pt)) {
			rc = sx_error_set(err, SX_EINVAL, "plugin \"%s\" does not extend %s plugin",
					  name, point_names[pt]);
			break;
		}
		rc = add_enabled(prof, pt, name, score_weight(score, multi, name));
	}
	return rc;
}

static int add_group_enabled(struct sx_profile *prof, enum sx_group_point gpt, const char *name,
			     int64_t weight)
{
	struct sx_group_enabled *arr =
		realloc(prof->group[gpt], sizeof(*arr) * (prof->ngroup[gpt] + 1));

	if (!arr)
		return SX_ENOMEM;
	prof->group[gpt] = arr;
	arr[prof->ngroup[gpt]] = (struct sx_group_enabled){
		.weight = gpt == SX_GPT_PLACEMENT_SCORE ? (weight > 0 ? weight : 1) : 0,
		.index = sx_plugin_index(name),
		.name = sx_strdup(name)};
	if (!arr[prof->ngroup[gpt]].name)
		return SX_ENOMEM;
	if (arr[prof->ngroup[gpt]].index >= 0)
		prof->instantiated[arr[prof->ngroup[gpt]].index] = true;
	prof->ngroup[gpt]++;
	return 0;
}

/* Does registry plugin idx implement group point gpt? */
static bool implements_group(int idx, enum sx_group_point gpt)
{
	const struct sx_plugin *pl = idx >= 0 ? sx_plugins[idx] : NULL;

	if (!pl)
		return false;
	switch (gpt) {
	case SX_GPT_PLACEMENT_GENERATE:
		return pl->placement_generate != NULL;
	case SX_GPT_PLACEMENT_SCORE:
		return pl->placement_score != NULL;
	default:
		return pl->pod_group_post_filter != NULL;
	}
}

/* podGroupPostFilter, placementGenerate and placementScore (1.37)
 * resolved as every other point is (framework.go expandMultiPointPlugins):
 * multiPoint's plugins that implement it (DefaultPreemption's
 * pod_group_post_filter, TopologyPlacementGenerator's placement_generate,
 * NodeResourcesFit's and PodGroupPodsCount's placement_score) unless the
 * set disables them or "*", then what the set enables; enabling a plugin that does not
 * implement podGroupPostFilter is refused with upstream's words. */
static int expand_group_point(struct sx_profile *prof, enum sx_group_point gpt,
			      const struct plugin_set *set, const struct plugin_set *multi,
			      struct sx_error *err)
{
	bool all_disabled = false;
	int rc = 0;

	for (unsigned i = 0; i < set->ndisabled; i++)
		all_disabled |= strcmp(set->disabled[i], "*") == 0;
	for (unsigned i = 0; i < multi->nenabled && !all_disabled && !rc; i++) {
		const char *name = multi->enabled[i].name;
		int idx = sx_plugin_index(name);

		if (idx < 0 || !implements_group(idx, gpt) || set_has_disabled(set, name) ||
		    find_enabled(set, name) >= 0)
			continue;
		rc = add_group_enabled(prof, gpt, name, multi->enabled[i].weight);
	}
	for (unsigned i = 0; i < set->nenabled && !rc; i++) {
		const char *name = set->enabled[i].name;
		int idx = sx_plugin_index(name);

		/* At the placement points, a plugin schedext's registry has
		 * without the hook is kept, and warned about by the caller. */
		if (idx >= 0 && !implements_group(idx, gpt) &&
		    gpt == SX_GPT_POD_GROUP_POST_FILTER) {
			sx_error_set(err, SX_EINVAL, "plugin \"%s\" does not extend %s plugin",
				     name, group_points[gpt].name);
			sx_error_prefix(err, group_points[gpt].name);
			return SX_EINVAL;
		}
		rc = add_group_enabled(prof, gpt, name, set->enabled[i].weight);
	}
	return rc ? sx_error_set(err, SX_ENOMEM, "out of memory") : 0;
}

/* A group point's set: resolved as the other points (expand_group_point);
 * what it enables that no schedext plugin implements (an upstream plugin
 * schedext lacks, or one without the hook) is kept as configured, shown
 * by /configz, skipped by the pod-group cycle and named in one warning. */
static int read_group_point(const cJSON *plugins, struct sx_profile *prof, enum sx_group_point gpt,
			    const struct plugin_set *multi, struct plugin_set *set,
			    struct sx_error *err)
{
	const char *first = NULL;
	unsigned nmissing = 0;
	int rc;

	if (prof->features.release < group_points[gpt].since)
		return 0; /* refused by strict decoding already */
	if ((rc = read_plugin_set(plugins, group_points[gpt].name, set, err)) < 0)
		return rc;
	if ((rc = expand_group_point(prof, gpt, set, multi, err)) < 0 ||
	    gpt == SX_GPT_POD_GROUP_POST_FILTER)
		return rc;
	for (unsigned i = 0; i < prof->ngroup[gpt]; i++) {
		if (implements_group(prof->group[gpt][i].index, gpt))
			continue;
		first = first ? first : prof->group[gpt][i].name;
		nmissing++;
	}
	if (nmissing)
		sx_log(0,
		       "warning: profile %s: plugins.%s enables %s%s: no schedext plugin "
		       "implements it at %s; ignored",
		       prof->scheduler_name, group_points[gpt].name, first,
		       nmissing > 1 ? " and others" : "", group_points[gpt].name);
	return 0;
}

static int read_group_points(const cJSON *plugins, struct sx_profile *prof,
			     const struct plugin_set *multi, struct sx_error *err)
{
	struct plugin_set *set = malloc(sizeof(*set));
	int rc = set ? 0 : sx_error_set(err, SX_ENOMEM, "out of memory");

	for (unsigned gpt = 0; gpt < SX_GPT_COUNT && !rc; gpt++)
		rc = read_group_point(plugins, prof, gpt, multi, set, err);
	free(set);
	return rc;
}

static int read_plugin_config(const cJSON *list, struct sx_profile *prof, struct sx_error *err)
{
	const cJSON *item;
	unsigned i = 0;
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list))
		return sx_error_set(err, SX_EINVAL, "pluginConfig: expected a list");
	cJSON_ArrayForEach(item, list)
	{
		const char *name;
		int rc = read_name(item, &name, err);
		int idx = rc ? -1 : sx_plugin_index(name);
		if (!rc && idx >= 0 && prof->args[idx])
			rc = sx_error_set(err, SX_EINVAL, "name: Duplicate value: \"%s\"", name);
		if (rc) {
			sx_error_prefixf(err, "pluginConfig[%u]", i);
			return rc;
		}
		if (idx >= 0)
			prof->args[idx] = cJSON_GetObjectItemCaseSensitive(item, "args");
		if (idx >= 0 && prof->nconfig < SX_MAX_PLUGINS)
			prof->config_order[prof->nconfig++] = (unsigned short)idx;
		i++;
	}
	return 0;
}

/* Upstream requires exactly one QueueSort and at least one Bind plugin; a
 * profile that enables a single plugin for inspection (explain) gets
 * PrioritySort and DefaultBinder implicitly instead of being rejected. */
static int ensure_required(struct sx_profile *prof, struct sx_error *err)
{
	int rc = 0;
	if (prof->n[SX_PT_QUEUE_SORT] > 1)
		return sx_error_set(err, SX_EINVAL,
				    "only one queue sort plugin required for profile with "
				    "scheduler name \"%s\", but got %u",
				    prof->scheduler_name, prof->n[SX_PT_QUEUE_SORT]);
	if (prof->n[SX_PT_QUEUE_SORT] == 0)
		rc = add_enabled(prof, SX_PT_QUEUE_SORT, "PrioritySort", 0);
	if (!rc && prof->n[SX_PT_BIND] == 0)
		rc = add_enabled(prof, SX_PT_BIND, "DefaultBinder", 0);
	return rc;
}

static int check_weights(const struct sx_profile *prof, struct sx_error *err)
{
	__int128 total = 0;
	for (unsigned i = 0; i < prof->n[SX_PT_SCORE]; i++)
		total += (__int128)prof->points[SX_PT_SCORE][i].weight * SX_MAX_NODE_SCORE;
	if (total > (__int128)INT64_MAX)
		return sx_error_set(err, SX_EINVAL, "total score of Score plugins could overflow");
	return 0;
}

/* One plugin's instance from its args; DynamicResources' args first take
 * what the profile's feature gates default or forbid (config_dra.c). */
static void *init_plugin(const struct sx_profile *prof, unsigned idx, struct sx_error *err)
{
	const struct sx_plugin *p = sx_plugins[idx];
	cJSON *gated;
	void *self;

	if (strcmp(p->name, "DynamicResources") != 0)
		return p->init(prof->args[idx], prof->handle, err);
	gated = sx__config_dra_args(prof->args[idx], &prof->features, err);
	if (!gated)
		return NULL;
	self = p->init(gated, prof->handle, err);
	cJSON_Delete(gated);
	return self;
}

static int instantiate(struct sx_profile *prof, struct sx_error *err)
{
	for (unsigned idx = 0; idx < sx_plugin_count; idx++) {
		const struct sx_plugin *p = sx_plugins[idx];
		if (!prof->instantiated[idx] || !p->init)
			continue;
		prof->instances[idx] = init_plugin(prof, idx, err);
		if (!prof->instances[idx]) {
			if (!err || !err->msg[0])
				sx_error_set(err, SX_EINVAL, "invalid args");
			sx_error_prefixf(err, "pluginConfig[%s].args", p->name);
			return SX_EINVAL;
		}
	}
	for (unsigned pt = 0; pt < SX_PT_COUNT; pt++)
		for (unsigned i = 0; i < prof->n[pt]; i++)
			prof->points[pt][i].self = prof->instances[prof->points[pt][i].index];
	/* The args belong to the configuration document, freed after loading. */
	memset(prof->args, 0, sizeof(prof->args));
	return 0;
}

static void profile_free(struct sx_profile *prof)
{
	if (!prof)
		return;
	for (unsigned idx = 0; idx < sx_plugin_count; idx++)
		if (prof->instances[idx] && sx_plugins[idx]->destroy)
			sx_plugins[idx]->destroy(prof->instances[idx]);
	sx_handle_free(prof->handle); /* after the instances: they may hold it */
	for (unsigned pt = 0; pt < SX_PT_COUNT; pt++)
		free(prof->points[pt]);
	for (unsigned gpt = 0; gpt < SX_GPT_COUNT; gpt++) {
		for (unsigned i = 0; i < prof->ngroup[gpt]; i++)
			free(prof->group[gpt][i].name);
		free(prof->group[gpt]);
	}
	free(prof->scheduler_name);
	free(prof);
}

static void default_set(struct plugin_set *s, const struct sx_features *f)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < SX_ARRAY_SIZE(default_multipoint); i++)
		s->enabled[s->nenabled++] =
			(struct entry){default_multipoint[i].name, default_multipoint[i].weight};
	/* applyFeatureGates (default_plugins.go): NodeDeclaredFeatures goes
	 * last, after DefaultBinder, when its gate is on (1.36's effective
	 * configuration lists it there, weight 0). */
	if (sx_feature_enabled(f, SX_FEATURE_NODE_DECLARED_FEATURES))
		s->enabled[s->nenabled++] = (struct entry){"NodeDeclaredFeatures", 0};
	/* GangScheduling joins the default set with the GangScheduling gate
	 * (which needs GenericWorkload), as upstream's default_plugins.go
	 * applyFeatureGates; without it the profile is unchanged. */
	if (sx_feature_enabled(f, SX_FEATURE_GANG_SCHEDULING) &&
	    sx_feature_enabled(f, SX_FEATURE_GENERIC_WORKLOAD))
		s->enabled[s->nenabled++] = (struct entry){"GangScheduling", 0};
	/* applyFeatureGates' TopologyAwareWorkloadScheduling step appends the
	 * placement generator and PodGroupPodsCount (weight 1); NodeResourcesFit,
	 * already in the set, scores placements as well (multiPoint). */
	if (sx_feature_enabled(f, SX_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)) {
		s->enabled[s->nenabled++] = (struct entry){"TopologyPlacementGenerator", 0};
		s->enabled[s->nenabled++] = (struct entry){"PodGroupPodsCount", 1};
	}
}

static int read_percentage(const cJSON *obj, int *out, struct sx_error *err)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "percentageOfNodesToScore");
	if (!p || cJSON_IsNull(p))
		return 0;
	if (!cJSON_IsNumber(p) || p->valuedouble < 0 || p->valuedouble > 100 ||
	    p->valuedouble != (double)(int)p->valuedouble)
		return sx_error_set(
			err, SX_EINVAL,
			"percentageOfNodesToScore: Invalid value: not in valid range [0-100]");
	*out = (int)p->valuedouble;
	return 0;
}

/* Builds one profile of cfg from its JSON (NULL = the default profile),
 * for cfg's release and gates. */
static struct sx_profile *build_profile(struct sx_config *cfg, const cJSON *json,
					struct sx_error *err)
{
	struct sx_profile *prof = calloc(1, sizeof(*prof));
	struct plugin_set *sets = calloc(SX_PT_COUNT + 3, sizeof(*sets));
	struct plugin_set *multi_def = &sets[SX_PT_COUNT], *multi_custom = &sets[SX_PT_COUNT + 1],
			  *multi = &sets[SX_PT_COUNT + 2];
	const cJSON *name = json ? cJSON_GetObjectItemCaseSensitive(json, "schedulerName") : NULL;
	const cJSON *plugins = json ? cJSON_GetObjectItemCaseSensitive(json, "plugins") : NULL;
	int rc = 0;
	if (!prof || !sets || !(prof->handle = sx_handle_new(prof, cfg->dra)))
		goto oom;
	prof->percentage_of_nodes_to_score = -1;
	prof->features = cfg->features;
	if (name && !cJSON_IsNull(name) && (!cJSON_IsString(name) || !name->valuestring[0]))
		rc = sx_error_set(err, SX_EINVAL, "schedulerName: Required value");
	prof->scheduler_name =
		sx_strdup(cJSON_IsString(name) ? name->valuestring : "default-scheduler");
	if (!prof->scheduler_name)
		goto oom;
	if (!rc && json)
		rc = read_percentage(json, &prof->percentage_of_nodes_to_score, err);
	if (!rc && plugins && !cJSON_IsNull(plugins) && !cJSON_IsObject(plugins))
		rc = sx_error_set(err, SX_EINVAL, "plugins: expected an object");
	for (unsigned pt = 0; pt < SX_PT_COUNT && !rc; pt++)
		if ((rc = read_plugin_set(plugins, point_names[pt], &sets[pt], err)) < 0)
			sx_error_prefix(err, "plugins");
	if (!rc && (rc = read_plugin_set(plugins, "multiPoint", multi_custom, err)) < 0)
		sx_error_prefix(err, "plugins");
	if (!rc && json)
		rc = read_plugin_config(cJSON_GetObjectItemCaseSensitive(json, "pluginConfig"),
					prof, err);
	if (!rc) {
		default_set(multi_def, &prof->features);
		merge_plugin_set(multi_def, multi_custom, multi);
	}
	if (!rc && (rc = read_group_points(plugins, prof, multi, err)) < 0)
		sx_error_prefix(err, "plugins");
	for (unsigned pt = 0; pt < SX_PT_COUNT && !rc; pt++) {
		if ((rc = expand_point(prof, pt, &sets[pt], multi, &sets[SX_PT_SCORE], err)) < 0)
			sx_error_prefixf(err, "plugins.%s", point_names[pt]);
	}
	if (!rc)
		warn_unimplemented(prof, sets, SX_PT_COUNT, multi_custom);
	if (!rc)
		rc = ensure_required(prof, err);
	if (!rc)
		rc = check_weights(prof, err);
	if (!rc)
		rc = instantiate(prof, err);
	free(sets);
	if (rc) {
		profile_free(prof);
		return NULL;
	}
	return prof;
oom:
	free(sets);
	profile_free(prof);
	sx_error_set(err, SX_ENOMEM, "out of memory");
	return NULL;
}

static struct sx_config *config_new(const struct sx_features *f)
{
	struct sx_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return NULL;
	if (f)
		cfg->features = *f;
	else
		sx_features_init(&cfg->features, SX_RELEASE_DEFAULT);
	cfg->parallelism = 16;
	cfg->percentage_of_nodes_to_score = 0;
	cfg->pod_initial_backoff_s = 1;
	cfg->pod_max_backoff_s = 10;
	cfg->dra = sx_dra_claims_new();
	if (!cfg->dra) {
		free(cfg);
		return NULL;
	}
	return cfg;
}

static int add_profile(struct sx_config *cfg, struct sx_profile *prof)
{
	struct sx_profile **p = realloc(cfg->profiles, sizeof(*p) * (cfg->nprofiles + 1));
	if (!p)
		return SX_ENOMEM;
	cfg->profiles = p;
	p[cfg->nprofiles++] = prof;
	return 0;
}

struct sx_config *sx_config_default(struct sx_error *err)
{
	return sx_config_default_for(NULL, err);
}

struct sx_config *sx_config_default_for(const struct sx_features *f, struct sx_error *err)
{
	struct sx_config *cfg = config_new(f);
	struct sx_profile *prof = cfg ? build_profile(cfg, NULL, err) : NULL;
	if (!prof || add_profile(cfg, prof) < 0) {
		profile_free(prof);
		sx_config_free(cfg);
		return NULL;
	}
	return cfg;
}

static int read_int_field(const cJSON *root, const char *key, double min, double max, double *out,
			  struct sx_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > max ||
	    !sx_double_is_int64(v->valuedouble))
		return sx_error_set(err, SX_EINVAL,
				    "%s: Invalid value: must be an integer in [%g, %g]", key, min,
				    max);
	*out = v->valuedouble;
	return 0;
}

static int read_globals(const cJSON *root, struct sx_config *cfg, struct sx_error *err)
{
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
	double par = cfg->parallelism, init = cfg->pod_initial_backoff_s,
	       max = cfg->pod_max_backoff_s;
	int rc;
	if (!cJSON_IsString(api) || strcmp(api->valuestring, "kubescheduler.config.k8s.io/v1") != 0)
		return sx_error_set(err, SX_EINVAL,
				    "apiVersion: must be \"kubescheduler.config.k8s.io/v1\"");
	if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "KubeSchedulerConfiguration") != 0)
		return sx_error_set(err, SX_EINVAL, "kind: must be \"KubeSchedulerConfiguration\"");
	if ((rc = read_int_field(root, "parallelism", 1, 1024, &par, err)) < 0 ||
	    (rc = read_int_field(root, "podInitialBackoffSeconds", 1, 3600, &init, err)) < 0 ||
	    (rc = read_int_field(root, "podMaxBackoffSeconds", 0, 3600, &max, err)) < 0 ||
	    (rc = read_percentage(root, &cfg->percentage_of_nodes_to_score, err)) < 0)
		return rc;
	if (max < init)
		return sx_error_set(err, SX_EINVAL,
				    "podMaxBackoffSeconds: Invalid value: must be greater than or "
				    "equal to PodInitialBackoffSeconds");
	cfg->parallelism = (int)par;
	cfg->pod_initial_backoff_s = init;
	cfg->pod_max_backoff_s = max;
	return 0;
}

static int read_profiles(const cJSON *root, struct sx_config *cfg, struct sx_error *err)
{
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles"), *item;
	unsigned i = 0;
	if (!profiles || cJSON_IsNull(profiles) || cJSON_GetArraySize(profiles) == 0) {
		struct sx_profile *prof = build_profile(cfg, NULL, err);
		if (!prof || add_profile(cfg, prof) < 0) {
			profile_free(prof);
			return SX_EINVAL;
		}
		return 0;
	}
	if (!cJSON_IsArray(profiles) || cJSON_GetArraySize(profiles) > MAX_PROFILES)
		return sx_error_set(err, SX_EINVAL, "profiles: expected a list of at most %d",
				    MAX_PROFILES);
	cJSON_ArrayForEach(item, profiles)
	{
		struct sx_profile *prof =
			cJSON_IsObject(item) ? build_profile(cfg, item, err) : NULL;
		if (!cJSON_IsObject(item))
			sx_error_set(err, SX_EINVAL, "expected an object");
		if (prof && sx_config_profile(cfg, prof->scheduler_name)) {
			sx_error_set(err, SX_EINVAL, "schedulerName: Duplicate value: \"%s\"",
				     prof->scheduler_name);
			profile_free(prof);
			prof = NULL;
		}
		if (!prof || add_profile(cfg, prof) < 0) {
			profile_free(prof);
			sx_error_prefixf(err, "profiles[%u]", i);
			return SX_EINVAL;
		}
		i++;
	}
	return 0;
}

struct sx_config *sx_config_parse(const char *data, size_t len, struct sx_error *err)
{
	return sx_config_parse_for(data, len, NULL, err);
}

/* The group, version and kind come first: they choose the decoder. */
static int check_kind(const cJSON *root, struct sx_error *err)
{
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");

	if (!cJSON_IsString(api) || strcmp(api->valuestring, "kubescheduler.config.k8s.io/v1") != 0)
		return sx_error_set(err, SX_EINVAL,
				    "apiVersion: must be \"kubescheduler.config.k8s.io/v1\"");
	if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "KubeSchedulerConfiguration") != 0)
		return sx_error_set(err, SX_EINVAL, "kind: must be \"KubeSchedulerConfiguration\"");
	return 0;
}

struct sx_config *sx_config_parse_for(const char *data, size_t len, const struct sx_features *f,
				      struct sx_error *err)
{
	cJSON *docs = sx_parse_documents(data, len, err);
	struct sx_config *cfg = NULL;
	if (!docs)
		return NULL;
	const cJSON *root = cJSON_GetArrayItem(docs, 0);
	if (!cJSON_IsObject(root)) {
		sx_error_set(err, SX_EINVAL, "expected a KubeSchedulerConfiguration object");
		goto out;
	}
	cfg = config_new(f);
	if (!cfg) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		goto out;
	}
	/* decoding (strict) before any validation, as the scheme does */
	if (check_kind(root, err) < 0 ||
	    sx__config_strict_decode(root, cfg->features.release, err) < 0 ||
	    read_globals(root, cfg, err) < 0 ||
	    sx_config_read_component((cJSON *)root, cfg, err) < 0 ||
	    read_profiles(root, cfg, err) < 0) {
		sx_config_free(cfg);
		cfg = NULL;
	}
out:
	cJSON_Delete(docs);
	return cfg;
}

struct sx_config *sx_config_load(const char *path, struct sx_error *err)
{
	return sx_config_load_for(path, NULL, err);
}

struct sx_config *sx_config_load_for(const char *path, const struct sx_features *features,
				     struct sx_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t len = 0;
	struct sx_config *cfg = NULL;
	if (!f) {
		sx_error_set(err, SX_EIO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	data = malloc(MAX_CONFIG_BYTES + 1);
	if (data)
		len = fread(data, 1, MAX_CONFIG_BYTES + 1, f);
	fclose(f);
	if (!data) {
		sx_error_set(err, SX_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	if (len > MAX_CONFIG_BYTES) {
		sx_error_set(err, SX_ETOOBIG, "%s: larger than %u bytes", path, MAX_CONFIG_BYTES);
	} else {
		cfg = sx_config_parse_for(data, len, features, err);
		if (!cfg) {
			char msg[600];
			sx_error_string(err, msg, sizeof(msg));
			sx_error_set(err, SX_EINVAL, "%s: %s", path, msg);
			err->path[0] = 0;
		}
	}
	free(data);
	return cfg;
}

void sx_config_set_pod_decoding(const struct sx_config *cfg)
{
	sx_decode_set_pod_resources(
		sx_feature_enabled(&cfg->features,
				   SX_FEATURE_IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING),
		sx_release(&cfg->features));
}

void sx_config_free(struct sx_config *cfg)
{
	if (!cfg)
		return;
	for (unsigned i = 0; i < cfg->nprofiles; i++)
		profile_free(cfg->profiles[i]);
	free(cfg->profiles);
	sx_config_component_free(cfg);
	sx_dra_claims_free(cfg->dra); /* after the profiles: their handles borrow it */
	free(cfg);
}

const struct sx_profile *sx_config_profile(const struct sx_config *cfg, const char *name)
{
	if (!cfg || cfg->nprofiles == 0)
		return NULL;
	if (!name)
		return cfg->profiles[0];
	for (unsigned i = 0; i < cfg->nprofiles; i++)
		if (strcmp(cfg->profiles[i]->scheduler_name, name) == 0)
			return cfg->profiles[i];
	return NULL;
}

bool sx_profile_has(const struct sx_profile *prof, enum sx_point pt, const char *plugin)
{
	for (unsigned i = 0; i < prof->n[pt]; i++)
		if (strcmp(prof->points[pt][i].plugin->name, plugin) == 0)
			return true;
	return false;
}
