/* The other modelled kinds: Namespace, Service, ReplicationController,
 * ReplicaSet, StatefulSet and PodDisruptionBudget (one generic struct).
 * Only the fields the scheduler's plugins read are kept; the storage kinds
 * are in decode_storage.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/decode.h"

/* IntOrString (PDB minAvailable/maxUnavailable): an integer or "N%". */
static int decode_int_or_percent(const cJSON *obj, const char *key, bool *has, bool *percent,
				 int32_t *out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	const char *s;
	char *end;
	long n;

	*has = *percent = false;
	*out = 0;
	if (!v)
		return 0;
	if (cJSON_IsNumber(v)) {
		*has = true;
		return sx_dec_int32(obj, key, out, NULL, err);
	}
	if (!cJSON_IsString(v) || !v->valuestring)
		return sx_dec_type_error(err, key, "integer or percentage", v);
	s = v->valuestring;
	errno = 0;
	n = strtol(s, &end, 10);
	if (end == s || *s < '0' || *s > '9' || strcmp(end, "%") != 0 || errno || n > INT32_MAX) {
		sx_error_set(err, SX_EINVAL, "invalid percentage \"%.64s\"", s);
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	*has = *percent = true;
	*out = (int32_t)n;
	return 0;
}

static int decode_pdb(const cJSON *json, struct sx_generic *g, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(json, "spec"), *status = sx_dec_get(json, "status");
	int rc = decode_int_or_percent(spec, "minAvailable", &g->has_min_available,
				       &g->min_available_percent, &g->min_available, err);

	if (rc == 0)
		rc = decode_int_or_percent(spec, "maxUnavailable", &g->has_max_unavailable,
					   &g->max_unavailable_percent, &g->max_unavailable, err);
	if (rc < 0) {
		sx_error_prefix(err, "spec");
		return rc;
	}
	rc = sx_dec_int32(status, "disruptionsAllowed", &g->disruptions_allowed, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

/* The kind-specific part of a generic object; json's spec/status are
 * type-checked by the caller. */
static int decode_generic_body(const cJSON *json, struct sx_generic *g, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(json, "spec");
	int rc = 0;

	switch (g->kind) {
	case SX_KIND_SERVICE:
	case SX_KIND_REPLICATION_CONTROLLER:
		/* A null/absent selector selects nothing; {} selects all. */
		rc = sx_dec_labels(spec, "selector", &g->map_selector, &g->has_map_selector, err);
		break;
	case SX_KIND_REPLICA_SET:
	case SX_KIND_STATEFUL_SET:
	case SX_KIND_PDB:
		rc = sx_dec_selector_field(spec, "selector", &g->selector, err);
		break;
	default:
		return 0;
	}
	if (rc < 0) {
		sx_error_prefix(err, "spec");
		return rc;
	}
	return g->kind == SX_KIND_PDB ? decode_pdb(json, g, err) : 0;
}

/* metadata into meta, and checks that spec and status, when present, are
 * objects. */
int sx_dec_head(const cJSON *json, struct sx_meta *meta, struct sx_error *err)
{
	const cJSON *o;
	int rc = sx_dec_meta(json, meta, err);

	if (rc == 0)
		rc = sx_dec_object(json, "spec", &o, err);
	return rc < 0 ? rc : sx_dec_object(json, "status", &o, err);
}

int sx_dec_name_id(const struct sx_meta *meta, sx_str *id, struct sx_error *err)
{
	*id = sx_intern(meta->name);
	if (*id != SX_STR_INVALID)
		return 0;
	*id = SX_STR_EMPTY;
	sx_error_set(err, SX_ETOOBIG, "string table full");
	sx_error_prefix(err, "metadata.name");
	return SX_ETOOBIG;
}

struct sx_generic *sx_decode_generic(const cJSON *json, enum sx_kind kind, struct sx_error *err)
{
	struct sx_generic *g;
	int rc;

	g = sx_dec_new(json, sizeof(*g), err);
	if (!g)
		return NULL;
	atomic_init(&g->refcount, 1);
	g->kind = (uint8_t)kind;
	rc = sx_dec_head(json, &g->meta, err);
	if (rc == 0)
		rc = decode_generic_body(json, g, err);
	if (rc < 0) {
		sx_generic_free(g);
		return NULL;
	}
	return g;
}
