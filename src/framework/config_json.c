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

static void str_or_null(struct sx_buf *b, const char *s)
{
	if (s)
		sx_json_str(b, s);
	else
		sx_buf_puts(b, "\"\"");
}

static void write_client(struct sx_buf *b, const struct sx_client_connection *c)
{
	sx_buf_puts(b, "\"clientConnection\":{\"kubeconfig\":");
	str_or_null(b, c->kubeconfig);
	sx_buf_puts(b, ",\"acceptContentTypes\":");
	str_or_null(b, c->accept_content_types);
	sx_buf_puts(b, ",\"contentType\":");
	/* what the client speaks: schedext has no protobuf codec */
	sx_json_str(b, c->content_type ? c->content_type : "application/json");
	sx_buf_printf(b, ",\"qps\":%g,\"burst\":%d}", c->qps ? c->qps : 50,
		      c->burst ? c->burst : 100);
}

static void write_leader(struct sx_buf *b, const struct sx_leader_election *l)
{
	sx_buf_printf(b,
		      "\"leaderElection\":{\"leaderElect\":%s,\"leaseDuration\":\"%gs\","
		      "\"renewDeadline\":\"%gs\",\"retryPeriod\":\"%gs\",\"resourceLock\":",
		      !l->set || l->leader_elect ? "true" : "false",
		      l->lease_duration_s ? l->lease_duration_s : 15,
		      l->renew_deadline_s ? l->renew_deadline_s : 10,
		      l->retry_period_s ? l->retry_period_s : 2);
	sx_json_str(b, l->resource_lock ? l->resource_lock : "leases");
	sx_buf_puts(b, ",\"resourceName\":");
	sx_json_str(b, l->resource_name ? l->resource_name : "kube-scheduler");
	sx_buf_puts(b, ",\"resourceNamespace\":");
	sx_json_str(b, l->resource_namespace ? l->resource_namespace : "kube-system");
	sx_buf_putc(b, '}');
}

/* One pluginConfig entry {"name","args":{"kind","apiVersion",...}} of
 * registry index idx, when it runs and has args. */
static void write_config_entry(struct sx_buf *b, const struct sx_profile *p, unsigned idx,
			       bool *first)
{
	const struct sx_plugin *pl = sx_plugins[idx];

	if (!p->instantiated[idx] || !pl->write_args)
		return;
	sx_buf_puts(b, *first ? "{\"name\":" : ",{\"name\":");
	*first = false;
	sx_json_str(b, pl->name);
	sx_buf_puts(b, ",\"args\":{\"kind\":");
	sx_json_str(b, pl->args_kind);
	sx_buf_puts(b, ",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"");
	pl->write_args(p->instances[idx], b);
	sx_buf_puts(b, "}}");
}

static int cmp_plugin_name(const void *a, const void *b)
{
	return strcmp(sx_plugins[*(const unsigned *)a]->name,
		      sx_plugins[*(const unsigned *)b]->name);
}

/* pluginConfig as upstream's defaulting leaves it: the file's entries in
 * its order, then one defaulted entry per other running plugin with args,
 * by name. */
static void write_plugin_config(struct sx_buf *b, const struct sx_profile *p)
{
	unsigned rest[SX_MAX_PLUGINS], nrest = 0;
	bool given[SX_MAX_PLUGINS] = {false}, first = true;

	sx_buf_puts(b, "\"pluginConfig\":[");
	for (unsigned i = 0; i < p->nconfig; i++) {
		given[p->config_order[i]] = true;
		write_config_entry(b, p, p->config_order[i], &first);
	}
	for (unsigned i = 0; i < sx_plugin_count && nrest < SX_MAX_PLUGINS; i++)
		if (!given[i])
			rest[nrest++] = i;
	qsort(rest, nrest, sizeof(rest[0]), cmp_plugin_name);
	for (unsigned i = 0; i < nrest; i++)
		write_config_entry(b, p, rest[i], &first);
	sx_buf_putc(b, ']');
}

/* plugins: every point's enabled plugins in order, with score weights;
 * the PodGroup points of the profile's release as configured. */
static void write_plugins(struct sx_buf *b, const struct sx_profile *p)
{
	sx_buf_puts(b, "\"plugins\":{");
	for (unsigned pt = 0; pt < SX_PT_COUNT; pt++) {
		sx_buf_printf(b, "%s\"%s\":{\"enabled\":[", pt ? "," : "", point_fields[pt]);
		for (unsigned i = 0; i < p->n[pt]; i++) {
			sx_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
			sx_json_str(b, p->points[pt][i].plugin->name);
			if (pt == SX_PT_SCORE)
				sx_buf_printf(b, ",\"weight\":%lld",
					      (long long)p->points[pt][i].weight);
			sx_buf_putc(b, '}');
		}
		sx_buf_puts(b, "]}");
	}
	for (unsigned gpt = 0; gpt < SX_GPT_COUNT; gpt++) {
		if (p->features.release < sx_group_point_since(gpt))
			continue;
		sx_buf_printf(b, ",\"%s\":{\"enabled\":[", sx_group_point_name(gpt));
		for (unsigned i = 0; i < p->ngroup[gpt]; i++) {
			sx_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
			sx_json_str(b, p->group[gpt][i].name);
			if (gpt == SX_GPT_PLACEMENT_SCORE)
				sx_buf_printf(b, ",\"weight\":%lld",
					      (long long)p->group[gpt][i].weight);
			sx_buf_putc(b, '}');
		}
		sx_buf_puts(b, "]}");
	}
	sx_buf_putc(b, '}');
}

static void write_extender(struct sx_buf *b, const struct sx_extender_cfg *e)
{
	const char *verbs[][2] = {{"filterVerb", e->filter_verb},
				  {"preemptVerb", e->preempt_verb},
				  {"prioritizeVerb", e->prioritize_verb},
				  {"bindVerb", e->bind_verb}};

	sx_buf_puts(b, "{\"urlPrefix\":");
	str_or_null(b, e->url_prefix);
	for (unsigned i = 0; i < 4; i++) {
		sx_buf_printf(b, ",\"%s\":", verbs[i][0]);
		str_or_null(b, verbs[i][1]);
	}
	sx_buf_printf(b,
		      ",\"weight\":%lld,\"enableHTTPS\":%s,\"httpTimeout\":\"%gs\","
		      "\"nodeCacheCapable\":%s,\"ignorable\":%s,\"managedResources\":[",
		      (long long)e->weight, e->enable_https ? "true" : "false",
		      e->http_timeout_s ? e->http_timeout_s : 5,
		      e->node_cache_capable ? "true" : "false", e->ignorable ? "true" : "false");
	for (unsigned i = 0; i < e->nmanaged; i++) {
		sx_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		sx_json_str(b, e->managed[i].name);
		sx_buf_printf(b, ",\"ignoredByScheduler\":%s}",
			      e->managed[i].ignored_by_scheduler ? "true" : "false");
	}
	sx_buf_puts(b, "]}");
}

void sx_config_write_json(struct sx_buf *b, const struct sx_config *cfg)
{
	sx_buf_puts(b, "{\"componentconfig\":{\"kind\":\"KubeSchedulerConfiguration\","
		       "\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",");
	sx_buf_printf(b, "\"parallelism\":%d,", cfg->parallelism);
	write_leader(b, &cfg->leader);
	sx_buf_putc(b, ',');
	write_client(b, &cfg->client);
	sx_buf_printf(b,
		      ",\"percentageOfNodesToScore\":%d,\"podInitialBackoffSeconds\":%g,"
		      "\"podMaxBackoffSeconds\":%g,\"delayCacheUntilActive\":%s,\"profiles\":[",
		      cfg->percentage_of_nodes_to_score, cfg->pod_initial_backoff_s,
		      cfg->pod_max_backoff_s, cfg->delay_cache_until_active ? "true" : "false");
	for (unsigned i = 0; i < cfg->nprofiles; i++) {
		const struct sx_profile *p = cfg->profiles[i];
		sx_buf_puts(b, i ? ",{\"schedulerName\":" : "{\"schedulerName\":");
		sx_json_str(b, p->scheduler_name);
		if (p->percentage_of_nodes_to_score >= 0)
			sx_buf_printf(b, ",\"percentageOfNodesToScore\":%d",
				      p->percentage_of_nodes_to_score);
		sx_buf_putc(b, ',');
		write_plugins(b, p);
		sx_buf_putc(b, ',');
		write_plugin_config(b, p);
		sx_buf_putc(b, '}');
	}
	sx_buf_puts(b, "],\"extenders\":[");
	for (unsigned i = 0; i < cfg->nextenders; i++) {
		if (i)
			sx_buf_putc(b, ',');
		write_extender(b, &cfg->extenders[i]);
	}
	/* which release's behaviour runs, and the gates set away from its
	 * defaults (not part of upstream's componentconfig) */
	sx_buf_puts(b, "]},");
	sx_features_write_json(b, &cfg->features);
	sx_buf_puts(b, "}\n");
}
