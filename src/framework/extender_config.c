/* The `extenders:` stanza of KubeSchedulerConfiguration (apis/config/v1
 * Extender, its defaults and validation.go ValidateExtenders). Decoded
 * strictly as kube-scheduler does: an unknown key is an error. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/extender_client.h"
#include "schedext/kube.h"
#include "schedext/leader.h"
#include "config_int.h"

#define MAX_EXTENDERS	  64
#define MAX_MANAGED	  256
#define MAX_PEM_BYTES	  (1u << 20)
#define DEFAULT_TIMEOUT_S 5.0

static const char *const extender_keys[] = {
	"urlPrefix",	    "filterVerb",  "preemptVerb", "prioritizeVerb", "weight",
	"bindVerb",	    "enableHTTPS", "tlsConfig",	  "httpTimeout",    "nodeCacheCapable",
	"managedResources", "ignorable",   NULL,
};
static const char *const tls_keys[] = {
	"insecure", "serverName", "certFile", "keyFile", "caFile",
	"certData", "keyData",	  "caData",   NULL,
};
static const char *const managed_keys[] = {"name", "ignoredByScheduler", NULL};

static int opt_bool(const cJSON *obj, const char *key, bool *out, struct sx_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = false;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v)) {
		sx_error_set(err, SX_EINVAL, "expected true or false");
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	*out = cJSON_IsTrue(v);
	return 0;
}

/* A []byte field: base64 in YAML/JSON, decoded to PEM. */
static int opt_bytes(const cJSON *obj, const char *key, char **out, size_t *len,
		     struct sx_error *err)
{
	char *s = NULL;
	int rc = sx__config_str(obj, key, &s, err);

	*out = NULL;
	*len = 0;
	if (rc || !s)
		return rc;
	*out = sx_base64_decode(s, len);
	free(s);
	if (!*out || *len > MAX_PEM_BYTES) {
		free(*out);
		*out = NULL;
		sx_error_set(err, SX_EINVAL, "illegal base64 data");
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	return 0;
}

static int read_tls(const cJSON *obj, struct sx_extender_tls *t, struct sx_error *err)
{
	int rc;

	if (!cJSON_IsObject(obj))
		return sx_error_set(err, SX_EINVAL, "expected an object");
	if ((rc = sx__config_strict(obj, tls_keys, err)) ||
	    (rc = opt_bool(obj, "insecure", &t->insecure, err)) ||
	    (rc = sx__config_str(obj, "serverName", &t->server_name, err)) ||
	    (rc = sx__config_str(obj, "certFile", &t->cert_file, err)) ||
	    (rc = sx__config_str(obj, "keyFile", &t->key_file, err)) ||
	    (rc = sx__config_str(obj, "caFile", &t->ca_file, err)) ||
	    (rc = opt_bytes(obj, "certData", &t->cert_data, &t->cert_len, err)) ||
	    (rc = opt_bytes(obj, "keyData", &t->key_data, &t->key_len, err)) ||
	    (rc = opt_bytes(obj, "caData", &t->ca_data, &t->ca_len, err)))
		return rc;
	return 0;
}

static bool dns_label_char(char c)
{
	return isalnum((unsigned char)c) || c == '-';
}

/* validation.IsQualifiedName: [prefix/]name, prefix a DNS subdomain, name
 * at most 63 of [A-Za-z0-9_.-] starting and ending alphanumeric. */
static bool qualified_name(const char *s)
{
	const char *slash = strchr(s, '/'), *name = slash ? slash + 1 : s;
	size_t n = strlen(name);

	if (slash) {
		size_t plen = (size_t)(slash - s);

		if (plen == 0 || plen > 253 || strchr(name, '/'))
			return false;
		for (size_t i = 0; i < plen; i++)
			if (!dns_label_char(s[i]) && s[i] != '.')
				return false;
		if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[plen - 1]))
			return false;
	}
	if (n == 0 || n > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return false;
	return true;
}

/* v1helper.IsExtendedResourceName: not native (has a prefix outside
 * kubernetes.io/), not "requests."-prefixed, qualified. */
static bool extended_resource_name(const char *s)
{
	char buf[512];

	if (!strchr(s, '/') || strstr(s, "kubernetes.io/") || strncmp(s, "requests.", 9) == 0)
		return false;
	snprintf(buf, sizeof(buf), "requests.%s", s);
	return qualified_name(buf);
}

static int read_managed(const cJSON *list, struct sx_extender_cfg *e, struct sx_error *err)
{
	const cJSON *it;
	unsigned i = 0;

	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > MAX_MANAGED)
		return sx_error_set(err, SX_EINVAL, "expected a list of at most %d", MAX_MANAGED);
	e->managed = sx_calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*e->managed));
	if (!e->managed)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, list)
	{
		struct sx_managed_resource *m = &e->managed[i];
		int rc =
			cJSON_IsObject(it) ? 0 : sx_error_set(err, SX_EINVAL, "expected an object");

		if (!rc && !(rc = sx__config_strict(it, managed_keys, err)) &&
		    !(rc = sx__config_str(it, "name", &m->name, err)))
			rc = opt_bool(it, "ignoredByScheduler", &m->ignored_by_scheduler, err);
		e->nmanaged = i + 1;
		if (!rc && (!m->name || !extended_resource_name(m->name))) {
			rc = sx_error_set(
				err, SX_EINVAL,
				"Invalid value: \"%s\": is an invalid extended resource name",
				m->name ? m->name : "");
			sx_error_prefix(err, "name");
		}
		if (rc) {
			sx_error_prefixf(err, "[%u]", i);
			return rc;
		}
		i++;
	}
	return 0;
}

static int read_weight(const cJSON *obj, int64_t *out, struct sx_error *err)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(obj, "weight");

	*out = 0;
	if (!w || cJSON_IsNull(w))
		return 0;
	if (!cJSON_IsNumber(w) || !sx_double_is_int64(w->valuedouble) || w->valuedouble > 9.2e18 ||
	    w->valuedouble < -9.2e18) {
		sx_error_set(err, SX_EINVAL, "expected an integer");
		sx_error_prefix(err, "weight");
		return SX_EINVAL;
	}
	*out = (int64_t)w->valuedouble;
	return 0;
}

static int read_timeout(const cJSON *obj, double *out, struct sx_error *err)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "httpTimeout");

	*out = DEFAULT_TIMEOUT_S;
	if (!t || cJSON_IsNull(t))
		return 0;
	if (!cJSON_IsString(t) || sx_parse_duration(t->valuestring, out) < 0) {
		sx_error_set(err, SX_EINVAL, "invalid duration %s%s%s",
			     cJSON_IsString(t) ? "\"" : "", cJSON_IsString(t) ? t->valuestring : "",
			     cJSON_IsString(t) ? "\"" : "");
		sx_error_prefix(err, "httpTimeout");
		return SX_EINVAL;
	}
	if (*out == 0) /* NewHTTPExtender: zero means DefaultExtenderTimeout */
		*out = DEFAULT_TIMEOUT_S;
	return 0;
}

static int read_extender(const cJSON *obj, struct sx_extender_cfg *e, struct sx_error *err)
{
	const cJSON *tls = cJSON_GetObjectItemCaseSensitive(obj, "tlsConfig");
	int rc;

	if (!cJSON_IsObject(obj))
		return sx_error_set(err, SX_EINVAL, "expected an object");
	if ((rc = sx__config_strict(obj, extender_keys, err)) ||
	    (rc = sx__config_str(obj, "urlPrefix", &e->url_prefix, err)) ||
	    (rc = sx__config_str(obj, "filterVerb", &e->filter_verb, err)) ||
	    (rc = sx__config_str(obj, "preemptVerb", &e->preempt_verb, err)) ||
	    (rc = sx__config_str(obj, "prioritizeVerb", &e->prioritize_verb, err)) ||
	    (rc = sx__config_str(obj, "bindVerb", &e->bind_verb, err)) ||
	    (rc = read_weight(obj, &e->weight, err)) ||
	    (rc = opt_bool(obj, "enableHTTPS", &e->enable_https, err)) ||
	    (rc = opt_bool(obj, "nodeCacheCapable", &e->node_cache_capable, err)) ||
	    (rc = opt_bool(obj, "ignorable", &e->ignorable, err)) ||
	    (rc = read_timeout(obj, &e->http_timeout_s, err)))
		return rc;
	if (tls && !cJSON_IsNull(tls)) {
		e->has_tls = true;
		if ((rc = read_tls(tls, &e->tls, err)) < 0) {
			sx_error_prefix(err, "tlsConfig");
			return rc;
		}
	}
	if ((rc = read_managed(cJSON_GetObjectItemCaseSensitive(obj, "managedResources"), e, err)) <
	    0) {
		sx_error_prefix(err, "managedResources");
		return rc;
	}
	if (!e->url_prefix)
		return sx_error_set(err, SX_EINVAL, "urlPrefix: Required value");
	if (strncmp(e->url_prefix, "http://", 7) != 0 && strncmp(e->url_prefix, "https://", 8) != 0)
		return sx_error_set(err, SX_EINVAL,
				    "urlPrefix: Invalid value: \"%s\": not an http(s) URL",
				    e->url_prefix);
	if (e->prioritize_verb && e->weight <= 0)
		return sx_error_set(err, SX_EINVAL,
				    "weight: Invalid value: %lld: must have a positive weight "
				    "applied to it",
				    (long long)e->weight);
	return 0;
}

static bool managed_seen(const struct sx_extender_cfg *cfgs, unsigned upto, unsigned upto_m,
			 const char *name)
{
	for (unsigned i = 0; i <= upto; i++)
		for (unsigned j = 0; j < (i == upto ? upto_m : cfgs[i].nmanaged); j++)
			if (strcmp(cfgs[i].managed[j].name, name) == 0)
				return true;
	return false;
}

/* The cross-extender rules: one binder, no managed resource twice. */
static int validate_all(const struct sx_extender_cfg *cfgs, unsigned n, struct sx_error *err)
{
	unsigned binders = 0;

	for (unsigned i = 0; i < n; i++) {
		binders += cfgs[i].bind_verb != NULL;
		for (unsigned j = 0; j < cfgs[i].nmanaged; j++) {
			if (managed_seen(cfgs, i, j, cfgs[i].managed[j].name)) {
				sx_error_set(err, SX_EINVAL,
					     "Invalid value: \"%s\": duplicate extender managed "
					     "resource name",
					     cfgs[i].managed[j].name);
				sx_error_prefixf(err, "[%u].managedResources[%u].name", i, j);
				return SX_EINVAL;
			}
		}
	}
	if (binders > 1)
		return sx_error_set(err, SX_EINVAL,
				    "Invalid value: \"found %u extenders implementing bind\": only "
				    "one extender can implement bind",
				    binders);
	return 0;
}

int sx_extender_cfg_parse(const cJSON *list, struct sx_extender_cfg **out, unsigned *n,
			  struct sx_error *err)
{
	struct sx_extender_cfg *cfgs;
	const cJSON *it;
	unsigned i = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > MAX_EXTENDERS)
		return sx_error_set(err, SX_EINVAL, "expected a list of at most %d", MAX_EXTENDERS);
	cfgs = sx_calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*cfgs));
	if (!cfgs)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, list)
	{
		rc = read_extender(it, &cfgs[i], err);
		i++;
		if (rc) {
			sx_error_prefixf(err, "[%u]", i - 1);
			break;
		}
	}
	if (!rc)
		rc = validate_all(cfgs, i, err);
	if (rc) {
		sx_extender_cfgs_free(cfgs, i);
		return rc;
	}
	*out = cfgs;
	*n = i;
	return 0;
}

static void free_pem(char *p, size_t n)
{
	if (p)
		memset(p, 0, n);
	free(p);
}

void sx_extender_cfgs_free(struct sx_extender_cfg *cfgs, unsigned n)
{
	for (unsigned i = 0; cfgs && i < n; i++) {
		struct sx_extender_cfg *e = &cfgs[i];

		free(e->url_prefix);
		free(e->filter_verb);
		free(e->preempt_verb);
		free(e->prioritize_verb);
		free(e->bind_verb);
		free(e->tls.server_name);
		free(e->tls.cert_file);
		free(e->tls.key_file);
		free(e->tls.ca_file);
		free_pem(e->tls.cert_data, e->tls.cert_len);
		free_pem(e->tls.key_data, e->tls.key_len);
		free_pem(e->tls.ca_data, e->tls.ca_len);
		for (unsigned j = 0; j < e->nmanaged; j++)
			free(e->managed[j].name);
		free(e->managed);
	}
	free(cfgs);
}
