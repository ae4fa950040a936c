/* The effective configuration as kube-scheduler's /configz shows it
 * (include/schedext/config.h): {"componentconfig": KubeSchedulerConfiguration}
 * with every default applied, then the emulated release and the feature
 * gates set away from its defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/extender_client.h"
#include "schedext/plugin.h"
#include "schedext/registry.h"

/* Upstream's field names of the extension points (plugins.<point>). */
static const char *const point_fields[SX_PT_COUNT] = {
	"preEnqueue", "queueSort", "preFilter", "filter",  "postFilter", "preScore",
	"score",      "reserve",   "permit",	"preBind", "bind",	 "postBind",
};

static void write_client(struct sx_jw *w, const struct sx_client_connection *c)
{
	sx_jw_kobject(w, "clientConnection");
	sx_jw_kstr(w, "kubeconfig", c->kubeconfig);
	sx_jw_kstr(w, "acceptContentTypes", c->accept_content_types);
	/* what the client speaks: schedext has no protobuf codec */
	sx_jw_kstr(w, "contentType", c->content_type ? c->content_type : "application/json");
	sx_jw_kdouble(w, "qps", c->qps ? c->qps : 50);
	sx_jw_kint(w, "burst", c->burst ? c->burst : 100);
	sx_jw_end_object(w);
}

/* A duration as the Go encoder writes metav1.Duration ("15s"). */
static void kduration(struct sx_jw *w, const char *key, double seconds)
{
	sx_jw_key(w, key);
	sx_jw_strf(w, "%gs", seconds);
}

static void write_leader(struct sx_jw *w, const struct sx_leader_election *l)
{
	sx_jw_kobject(w, "leaderElection");
	sx_jw_kbool(w, "leaderElect", !l->set || l->leader_elect);
	kduration(w, "leaseDuration", l->lease_duration_s ? l->lease_duration_s : 15);
	kduration(w, "renewDeadline", l->renew_deadline_s ? l->renew_deadline_s : 10);
	kduration(w, "retryPeriod", l->retry_period_s ? l->retry_period_s : 2);
	sx_jw_kstr(w, "resourceLock", l->resource_lock ? l->resource_lock : "leases");
	sx_jw_kstr(w, "resourceName", l->resource_name ? l->resource_name : "kube-scheduler");
	sx_jw_kstr(w, "resourceNamespace",
		   l->resource_namespace ? l->resource_namespace : "kube-system");
	sx_jw_end_object(w);
}

/* One pluginConfig entry {"name","args":{"kind","apiVersion",...}} of
 * registry index idx, when it runs and has args. */
static void write_config_entry(struct sx_jw *w, const struct sx_profile *p, unsigned idx)
{
	const struct sx_plugin *pl = sx_plugins[idx];

	if (!p->instantiated[idx] || !pl->write_args)
		return;
	sx_jw_object(w);
	sx_jw_kstr(w, "name", pl->name);
	sx_jw_kobject(w, "args");
	sx_jw_kstr(w, "kind", pl->args_kind);
	sx_jw_kstr(w, "apiVersion", "kubescheduler.config.k8s.io/v1");
	pl->write_args(p->instances[idx], w);
	sx_jw_end_object(w);
	sx_jw_end_object(w);
}

static int cmp_plugin_name(const void *a, const void *b)
{
	return strcmp(sx_plugins[*(const unsigned *)a]->name,
		      sx_plugins[*(const unsigned *)b]->name);
}

/* pluginConfig as upstream's defaulting leaves it: the file's entries in
 * its order, then one defaulted entry per other running plugin with args,
 * by name. */
static void write_plugin_config(struct sx_jw *w, const struct sx_profile *p)
{
	unsigned rest[SX_MAX_PLUGINS], nrest = 0;
	bool given[SX_MAX_PLUGINS] = {false};

	sx_jw_karray(w, "pluginConfig");
	for (unsigned i = 0; i < p->nconfig; i++) {
		given[p->config_order[i]] = true;
		write_config_entry(w, p, p->config_order[i]);
	}
	for (unsigned i = 0; i < sx_plugin_count && nrest < SX_MAX_PLUGINS; i++)
		if (!given[i])
			rest[nrest++] = i;
	qsort(rest, nrest, sizeof(rest[0]), cmp_plugin_name);
	for (unsigned i = 0; i < nrest; i++)
		write_config_entry(w, p, rest[i]);
	sx_jw_end_array(w);
}

/* {"enabled":[{"name":...[,"weight":n]}...]} */
static void write_enabled(struct sx_jw *w, const char *point, unsigned n,
			  const char *(*name_at)(const void *, unsigned),
			  int64_t (*weight_at)(const void *, unsigned), const void *arr)
{
	sx_jw_kobject(w, point);
	sx_jw_karray(w, "enabled");
	for (unsigned i = 0; i < n; i++) {
		sx_jw_object(w);
		sx_jw_kstr(w, "name", name_at(arr, i));
		if (weight_at)
			sx_jw_kint(w, "weight", weight_at(arr, i));
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	sx_jw_end_object(w);
}

static const char *point_name_at(const void *arr, unsigned i)
{
	return ((const struct sx_enabled *)arr)[i].plugin->name;
}

static int64_t point_weight_at(const void *arr, unsigned i)
{
	return ((const struct sx_enabled *)arr)[i].weight;
}

static const char *group_name_at(const void *arr, unsigned i)
{
	return ((const struct sx_group_enabled *)arr)[i].name;
}

static int64_t group_weight_at(const void *arr, unsigned i)
{
	return ((const struct sx_group_enabled *)arr)[i].weight;
}

/* plugins: every point's enabled plugins in order, with score weights;
 * the PodGroup points of the profile's release as configured. */
static void write_plugins(struct sx_jw *w, const struct sx_profile *p)
{
	sx_jw_kobject(w, "plugins");
	for (unsigned pt = 0; pt < SX_PT_COUNT; pt++)
		write_enabled(w, point_fields[pt], p->n[pt], point_name_at,
			      pt == SX_PT_SCORE ? point_weight_at : NULL, p->points[pt]);
	for (unsigned gpt = 0; gpt < SX_GPT_COUNT; gpt++)
		if (p->features.release >= sx_group_point_since(gpt))
			write_enabled(w, sx_group_point_name(gpt), p->ngroup[gpt], group_name_at,
				      gpt == SX_GPT_PLACEMENT_SCORE ? group_weight_at : NULL,
				      p->group[gpt]);
	sx_jw_end_object(w);
}

static void write_extender(struct sx_jw *w, const struct sx_extender_cfg *e)
{
	sx_jw_object(w);
	sx_jw_kstr(w, "urlPrefix", e->url_prefix);
	sx_jw_kstr(w, "filterVerb", e->filter_verb);
	sx_jw_kstr(w, "preemptVerb", e->preempt_verb);
	sx_jw_kstr(w, "prioritizeVerb", e->prioritize_verb);
	sx_jw_kstr(w, "bindVerb", e->bind_verb);
	sx_jw_kint(w, "weight", e->weight);
	sx_jw_kbool(w, "enableHTTPS", e->enable_https);
	kduration(w, "httpTimeout", e->http_timeout_s ? e->http_timeout_s : 5);
	sx_jw_kbool(w, "nodeCacheCapable", e->node_cache_capable);
	sx_jw_kbool(w, "ignorable", e->ignorable);
	sx_jw_karray(w, "managedResources");
	for (unsigned i = 0; i < e->nmanaged; i++) {
		sx_jw_object(w);
		sx_jw_kstr(w, "name", e->managed[i].name);
		sx_jw_kbool(w, "ignoredByScheduler", e->managed[i].ignored_by_scheduler);
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	sx_jw_end_object(w);
}

void sx_config_write_json(struct sx_buf *b, const struct sx_config *cfg)
{
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kobject(&w, "componentconfig");
	sx_jw_kstr(&w, "kind", "KubeSchedulerConfiguration");
	sx_jw_kstr(&w, "apiVersion", "kubescheduler.config.k8s.io/v1");
	sx_jw_kint(&w, "parallelism", cfg->parallelism);
	write_leader(&w, &cfg->leader);
	write_client(&w, &cfg->client);
	sx_jw_kint(&w, "percentageOfNodesToScore", cfg->percentage_of_nodes_to_score);
	sx_jw_kdouble(&w, "podInitialBackoffSeconds", cfg->pod_initial_backoff_s);
	sx_jw_kdouble(&w, "podMaxBackoffSeconds", cfg->pod_max_backoff_s);
	sx_jw_kbool(&w, "delayCacheUntilActive", cfg->delay_cache_until_active);
	sx_jw_karray(&w, "profiles");
	for (unsigned i = 0; i < cfg->nprofiles; i++) {
		const struct sx_profile *p = cfg->profiles[i];

		sx_jw_object(&w);
		sx_jw_kstr(&w, "schedulerName", p->scheduler_name);
		if (p->percentage_of_nodes_to_score >= 0)
			sx_jw_kint(&w, "percentageOfNodesToScore", p->percentage_of_nodes_to_score);
		write_plugins(&w, p);
		write_plugin_config(&w, p);
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_jw_karray(&w, "extenders");
	for (unsigned i = 0; i < cfg->nextenders; i++)
		write_extender(&w, &cfg->extenders[i]);
	sx_jw_end_array(&w);
	sx_jw_end_object(&w);
	/* which release's behaviour runs, and the gates set away from its
	 * defaults (not part of upstream's componentconfig) */
	sx_features_write_jw(&w, &cfg->features);
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
}
