/* The resource.k8s.io/v1 DeviceTaintRule decoder (dra.h): metadata,
 * spec.deviceSelector and spec.taint, with the same type checks and
 * limits as every other kind (decode.c's field readers); status is only
 * checked to be an object. Fields follow
 * staging/src/k8s.io/api/resource/v1/types.go (DeviceTaintRuleSpec,
 * DeviceTaintSelector, DeviceTaint).
 *
 * Ownership: the rule is allocated here and owned by the caller (reference
 * count 1, released with sx_device_taint_rule_unref, model.c).
 */
#include <stdlib.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/dra.h"

/* spec.deviceSelector (elem: the rule). */
static int decode_selector(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_device_taint_rule *r = elem;
	int rc = sx_dec_intern(j, "driver", &r->driver, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "pool", &r->pool, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "device", &r->device, err);
	r->has_selector = rc == 0;
	return rc;
}

/* A required string member of a taint: the API server rejects a rule
 * without one (pkg/apis/resource/validation, validateDeviceTaint). */
static int required(const cJSON *j, const char *key, sx_str *out, struct sx_error *err)
{
	int rc = sx_dec_intern(j, key, out, err);

	if (rc == 0 && *out == SX_STR_EMPTY) {
		sx_error_set(err, SX_EINVAL, "required value");
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	return rc;
}

/* spec.taint (elem: the rule). */
static int decode_taint(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_device_taint_rule *r = elem;
	int rc = required(j, "key", &r->key, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "value", &r->value, err);
	if (rc == 0)
		rc = required(j, "effect", &r->effect, err);
	if (rc == 0)
		rc = sx_dec_time(j, "timeAdded", &r->time_added, &r->has_time_added, err);
	return rc;
}

static int decode_spec(const cJSON *json, struct sx_device_taint_rule *r, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(json, "spec");
	int rc = sx_dec_sub(spec, "deviceSelector", decode_selector, r, NULL, err);

	if (rc == 0 && !sx_dec_get(spec, "taint")) {
		sx_error_set(err, SX_EINVAL, "required value");
		sx_error_prefix(err, "taint");
		rc = SX_EINVAL;
	}
	if (rc == 0)
		rc = sx_dec_sub(spec, "taint", decode_taint, r, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

struct sx_device_taint_rule *sx_decode_device_taint_rule(const cJSON *json, struct sx_error *err)
{
	struct sx_device_taint_rule *r = sx_dec_new(json, sizeof(*r), err);
	int rc;

	if (!r)
		return NULL;
	atomic_init(&r->refcount, 1);
	rc = sx_dec_head(json, &r->meta, err);
	if (rc == 0)
		rc = decode_spec(json, r, err);
	if (rc < 0) {
		sx_device_taint_rule_free(r);
		return NULL;
	}
	return r;
}
