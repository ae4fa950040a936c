/* The component part of KubeSchedulerConfiguration: clientConnection,
 * leaderElection, delayCacheUntilActive, the extenders stanza (and what
 * its ignoredByScheduler resources do to NodeResourcesFit), and the strict
 * check of the top-level keys (apis/config/v1 types, defaults and
 * validation; componentbase's client connection and leader election). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "schedext/buf.h"
#include "schedext/extender_client.h"
#include "schedext/leader.h"

static const char *const top_keys[] = {
	"apiVersion",
	"kind",
	"parallelism",
	"leaderElection",
	"clientConnection",
	"healthzBindAddress",
	"metricsBindAddress",
	"enableProfiling",
	"enableContentionProfiling",
	"percentageOfNodesToScore",
	"podInitialBackoffSeconds",
	"podMaxBackoffSeconds",
	"profiles",
	"extenders",
	"delayCacheUntilActive",
	NULL,
};
static const char *const client_keys[] = {
	"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst", NULL,
};
static const char *const leader_keys[] = {
	"leaderElect",	"leaseDuration", "renewDeadline",     "retryPeriod",
	"resourceLock", "resourceName",	 "resourceNamespace", NULL,
};

int sx__config_strict(const cJSON *obj, const char *const *known, struct sx_error *err)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, obj)
	{
		bool ok = false;

		for (int i = 0; known[i] && !ok; i++)
			ok = strcmp(known[i], it->string) == 0;
		if (!ok) {
			sx_error_set(err, SX_EINVAL, "unknown field \"%s\"", it->string);
			sx_error_prefix(err, it->string);
			return SX_EINVAL;
		}
	}
	return 0;
}

int sx__config_str(const cJSON *obj, const char *key, char **out, struct sx_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	free(*out);
	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return sx_error_set(err, SX_EINVAL, "%s: expected a string", key);
	if (v->valuestring[0] && !(*out = sx_strdup(v->valuestring)))
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	return 0;
}

static int get_bool(const cJSON *obj, const char *key, bool *out, bool *seen, struct sx_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return sx_error_set(err, SX_EINVAL, "%s: expected true or false", key);
	*out = cJSON_IsTrue(v);
	if (seen)
		*seen = true;
	return 0;
}

static int get_duration(const cJSON *obj, const char *key, double *out, struct sx_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || sx_parse_duration(v->valuestring, out) < 0)
		return sx_error_set(err, SX_EINVAL, "%s: Invalid value: %s%s%s: not a duration",
				    key, cJSON_IsString(v) ? "\"" : "",
				    cJSON_IsString(v) ? v->valuestring : "a non-string",
				    cJSON_IsString(v) ? "\"" : "");
	return 0;
}

static int read_client(const cJSON *obj, struct sx_client_connection *c, struct sx_error *err)
{
	const cJSON *qps = cJSON_GetObjectItemCaseSensitive(obj, "qps");
	const cJSON *burst = cJSON_GetObjectItemCaseSensitive(obj, "burst");
	int rc;

	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj))
		return sx_error_set(err, SX_EINVAL, "expected an object");
	if ((rc = sx__config_strict(obj, client_keys, err)) ||
	    (rc = sx__config_str(obj, "kubeconfig", &c->kubeconfig, err)) ||
	    (rc = sx__config_str(obj, "contentType", &c->content_type, err)) ||
	    (rc = sx__config_str(obj, "acceptContentTypes", &c->accept_content_types, err)))
		return rc;
	if (qps && !cJSON_IsNull(qps)) {
		if (!cJSON_IsNumber(qps) || qps->valuedouble > 1e9)
			return sx_error_set(err, SX_EINVAL, "qps: Invalid value: must be a number");
		c->qps = qps->valuedouble;
	}
	if (burst && !cJSON_IsNull(burst)) {
		if (!cJSON_IsNumber(burst) ||
		    burst->valuedouble != (double)(int)burst->valuedouble ||
		    burst->valuedouble > 2147483647.0)
			return sx_error_set(err, SX_EINVAL,
					    "burst: Invalid value: must be an integer");
		if (burst->valuedouble < 0)
			return sx_error_set(err, SX_EINVAL,
					    "burst: Invalid value: %d: must be "
					    "non-negative",
					    (int)burst->valuedouble);
		c->burst = (int)burst->valuedouble;
	}
	return 0;
}

/* ValidateLeaderElectionConfiguration, when leaderElect is true. */
static int validate_leader(const struct sx_leader_election *l, struct sx_error *err)
{
	if (!l->leader_elect)
		return 0;
	if (l->lease_duration_s && l->renew_deadline_s &&
	    l->lease_duration_s <= l->renew_deadline_s)
		return sx_error_set(err, SX_EINVAL,
				    "leaseDuration: Invalid value: LeaseDuration "
				    "must be greater than RenewDeadline");
	if (l->resource_lock && strcmp(l->resource_lock, "leases") != 0)
		return sx_error_set(err, SX_EINVAL,
				    "resourceLock: Unsupported value: \"%s\": "
				    "supported values: \"leases\"",
				    l->resource_lock);
	return 0;
}

static int read_leader(const cJSON *obj, struct sx_leader_election *l, struct sx_error *err)
{
	int rc;

	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj))
		return sx_error_set(err, SX_EINVAL, "expected an object");
	if ((rc = sx__config_strict(obj, leader_keys, err)) ||
	    (rc = get_bool(obj, "leaderElect", &l->leader_elect, &l->set, err)) ||
	    (rc = get_duration(obj, "leaseDuration", &l->lease_duration_s, err)) ||
	    (rc = get_duration(obj, "renewDeadline", &l->renew_deadline_s, err)) ||
	    (rc = get_duration(obj, "retryPeriod", &l->retry_period_s, err)) ||
	    (rc = sx__config_str(obj, "resourceLock", &l->resource_lock, err)) ||
	    (rc = sx__config_str(obj, "resourceName", &l->resource_name, err)) ||
	    (rc = sx__config_str(obj, "resourceNamespace", &l->resource_namespace, err)))
		return rc;
	return validate_leader(l, err);
}

/* ignoredByScheduler: every profile's NodeResourcesFit args get exactly
 * these ignoredResources (scheduler.go New replaces the list); profiles
 * without NodeResourcesFit pluginConfig get one (defaulting adds it). */
static int inject_ignored(cJSON *root, const cJSON *names)
{
	cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles"), *prof;

	if (!profiles || cJSON_IsNull(profiles) || cJSON_GetArraySize(profiles) == 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, "profiles");
		profiles = cJSON_AddArrayToObject(root, "profiles");
		prof = profiles ? cJSON_CreateObject() : NULL;
		if (!prof || !cJSON_AddItemToArray(profiles, prof))
			return SX_ENOMEM;
	}
	if (!cJSON_IsArray(profiles))
		return 0; /* read_profiles reports it */
	cJSON_ArrayForEach(prof, profiles)
	{
		cJSON *pc = cJSON_GetObjectItemCaseSensitive(prof, "pluginConfig"), *it,
		      *args = NULL;

		if (!cJSON_IsObject(prof))
			continue;
		if (!pc || cJSON_IsNull(pc)) {
			cJSON_DeleteItemFromObjectCaseSensitive(prof, "pluginConfig");
			pc = cJSON_AddArrayToObject(prof, "pluginConfig");
		}
		if (!cJSON_IsArray(pc))
			continue;
		cJSON_ArrayForEach(it, pc)
		{
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");

			if (cJSON_IsString(n) && strcmp(n->valuestring, "NodeResourcesFit") == 0)
				args = cJSON_GetObjectItemCaseSensitive(it, "args");
		}
		if (!args) {
			it = cJSON_CreateObject();
			if (!it || !cJSON_AddItemToArray(pc, it))
				return SX_ENOMEM;
			cJSON_AddStringToObject(it, "name", "NodeResourcesFit");
			args = cJSON_AddObjectToObject(it, "args");
		}
		if (!cJSON_IsObject(args))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(args, "ignoredResources");
		if (!cJSON_AddItemToObject(args, "ignoredResources", cJSON_Duplicate(names, true)))
			return SX_ENOMEM;
	}
	return 0;
}

static int read_extenders(cJSON *root, struct sx_config *cfg, struct sx_error *err)
{
	cJSON *names;
	int rc = sx_extender_cfg_parse(cJSON_GetObjectItemCaseSensitive(root, "extenders"),
				       &cfg->extenders, &cfg->nextenders, err);

	if (rc) {
		sx_error_prefix(err, "extenders");
		return rc;
	}
	names = cJSON_CreateArray();
	if (!names)
		return SX_ENOMEM;
	for (unsigned i = 0; i < cfg->nextenders; i++)
		for (unsigned j = 0; j < cfg->extenders[i].nmanaged; j++)
			if (cfg->extenders[i].managed[j].ignored_by_scheduler)
				cJSON_AddItemToArray(
					names,
					cJSON_CreateString(cfg->extenders[i].managed[j].name));
	rc = cJSON_GetArraySize(names) > 0 ? inject_ignored(root, names) : 0;
	cJSON_Delete(names);
	return rc ? sx_error_set(err, rc, "out of memory") : 0;
}

static void note(struct sx_buf *b, const char *what)
{
	if (b->len)
		sx_buf_puts(b, ", ");
	sx_buf_puts(b, what);
}

static bool json_type(const char *t)
{
	return strcmp(t, "application/json") == 0 || strncmp(t, "application/json;", 17) == 0;
}

/* What the file asks for that schedext does not do, for one warning. */
static void collect_unsupported(const cJSON *root, struct sx_config *cfg)
{
	const char *bools[] = {"enableProfiling", "enableContentionProfiling"};
	const char *addrs[] = {"healthzBindAddress", "metricsBindAddress"};
	struct sx_buf b;
	char tmp[300];

	sx_buf_init(&b);
	for (size_t i = 0; i < SX_ARRAY_SIZE(bools); i++)
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, bools[i])))
			note(&b, bools[i]);
	for (size_t i = 0; i < SX_ARRAY_SIZE(addrs); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, addrs[i]);

		if (cJSON_IsString(v) && v->valuestring[0]) {
			snprintf(tmp, sizeof(tmp), "%s (served on --listen)", addrs[i]);
			note(&b, tmp);
		}
	}
	if (cfg->client.content_type && !json_type(cfg->client.content_type)) {
		snprintf(tmp, sizeof(tmp), "clientConnection.contentType %.200s (JSON is used)",
			 cfg->client.content_type);
		note(&b, tmp);
	}
	if (cfg->client.accept_content_types && !json_type(cfg->client.accept_content_types)) {
		snprintf(tmp, sizeof(tmp),
			 "clientConnection.acceptContentTypes %.200s (JSON is used)",
			 cfg->client.accept_content_types);
		note(&b, tmp);
	}
	cfg->unsupported = b.len && !b.failed ? sx_buf_take(&b, NULL) : NULL;
	sx_buf_free(&b);
}

int sx_config_read_component(cJSON *root, struct sx_config *cfg, struct sx_error *err)
{
	int rc;

	if ((rc = sx__config_strict(root, top_keys, err)))
		return rc;
	if ((rc = read_client(cJSON_GetObjectItemCaseSensitive(root, "clientConnection"),
			      &cfg->client, err))) {
		sx_error_prefix(err, "clientConnection");
		return rc;
	}
	if ((rc = read_leader(cJSON_GetObjectItemCaseSensitive(root, "leaderElection"),
			      &cfg->leader, err))) {
		sx_error_prefix(err, "leaderElection");
		return rc;
	}
	rc = get_bool(root, "delayCacheUntilActive", &cfg->delay_cache_until_active, NULL, err);
	if (!rc)
		rc = read_extenders(root, cfg, err);
	if (!rc)
		collect_unsupported(root, cfg);
	return rc;
}

void sx_config_component_free(struct sx_config *cfg)
{
	free(cfg->client.kubeconfig);
	free(cfg->client.content_type);
	free(cfg->client.accept_content_types);
	free(cfg->leader.resource_lock);
	free(cfg->leader.resource_name);
	free(cfg->leader.resource_namespace);
	sx_extender_cfgs_free(cfg->extenders, cfg->nextenders);
	free(cfg->unsupported);
}
