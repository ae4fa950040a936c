/* DynamicResourcesArgs under the feature gates (config_int.h): which
 * fields a release's gates allow, and the defaults they bring. The
 * plugin reads the result like any args, and its gates from its handle
 * (sx_handle_features).
 *
 * Upstream: pkg/scheduler/apis/config/v1/defaults.go
 * (SetDefaults_DynamicResourcesArgs: filterTimeout 10s with
 * DRASchedulerFilterTimeout; bindingTimeout 600s, kubernetes PR 134905,
 * when DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are
 * both on) and validation/validation_pluginargs.go
 * (ValidateDynamicResourcesArgs: a field whose gate is off is Forbidden,
 * "in contrast to the REST API").
 */
#include <cjson/cJSON.h>

#include "config_int.h"
#include "schedext/plugin_args.h"

static bool given(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return v && !cJSON_IsNull(v);
}

/* Replaces key (absent or null) with a duration string. */
static bool put_default(cJSON *args, const char *key, const char *value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(args, key);
	return cJSON_AddStringToObject(args, key, value) != NULL;
}

cJSON *sx__config_dra_args(const cJSON *args, const struct sx_features *f, struct sx_error *err)
{
	bool filter_gate = sx_feature_enabled(f, SX_FEATURE_DRA_SCHEDULER_FILTER_TIMEOUT);
	bool binding_gates = sx_feature_enabled(f, SX_FEATURE_DRA_DEVICE_BINDING_CONDITIONS) &&
			     sx_feature_enabled(f, SX_FEATURE_DRA_RESOURCE_CLAIM_DEVICE_STATUS);
	struct sx_arg_errors e = {0};
	cJSON *out;
	bool ok = true;

	if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
		out = cJSON_Duplicate(args, true); /* the plugin words the type error */
		goto done;
	}
	if (!filter_gate && given(args, "filterTimeout"))
		sx_arg_errors_add(&e, "filterTimeout",
				  "Forbidden: DRASchedulingFilterTimeout "
				  "feature gate is disabled");
	if (!binding_gates && given(args, "bindingTimeout"))
		sx_arg_errors_add(&e, "bindingTimeout",
				  "Forbidden: DRADeviceBindingConditions or "
				  "DRAResourceClaimDeviceStatus feature gate is disabled");
	if (sx_arg_errors_finish(&e, err))
		return NULL;
	out = cJSON_IsObject(args) ? cJSON_Duplicate(args, true) : cJSON_CreateObject();
	if (!out)
		goto done;
	/* without its gate, no filter timeout at all (FilterTimeout nil) */
	if (!filter_gate)
		ok = put_default(out, "filterTimeout", "0s");
	if (ok && binding_gates && !given(out, "bindingTimeout"))
		ok = put_default(out, "bindingTimeout", "10m0s");
	if (!ok) {
		cJSON_Delete(out);
		out = NULL;
	}
done:
	if (!out)
		sx_error_set(err, SX_ENOMEM, "out of memory");
	return out;
}
