/* PodTopologySpreadArgs (topology_spread_args.h): read by the table reader
 * (plugin_args.h), then validated as upstream's
 * ValidatePodTopologySpreadArgs words it. */
#include "topology_spread_args.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/intern.h"
#include "schedext/model.h"
#include "schedext/plugin_args.h"

/* metav1validation.ValidateLabelName's parts, true when valid: the name
 * (alphanumerics, '-', '_', '.'; at most 63) or the prefix, a DNS subdomain
 * (lower case, '-', '.'; at most 253). */
static bool valid_label_part(const char *s, size_t len, bool prefix)
{
	if (len == 0 || len > (prefix ? 253 : 63))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (!prefix && c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');
		if (!alnum &&
		    ((i == 0 || i == len - 1) || (c != '-' && c != '.' && (prefix || c != '_'))))
			return false;
	}
	return true;
}

static void validate_key(struct sx_arg_errors *e, int idx, const char *key)
{
	const char *slash = strchr(key, '/');
	const char *name = slash ? slash + 1 : key;
	if (!*key) {
		sx_arg_errors_add(
			e, NULL,
			"defaultConstraints[%d].topologyKey: Required value: can not be empty",
			idx);
		return;
	}
	if ((slash && (!valid_label_part(key, (size_t)(slash - key), true) || strchr(name, '/'))) ||
	    !valid_label_part(name, strlen(name), false))
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d].topologyKey: Invalid value: \"%s\": not "
				  "a valid label name",
				  idx, key);
}

/* One defaultConstraints entry as read (plugin_args.h), leniently: a value
 * of the wrong type reads as absent (maxSkew 0, topologyKey empty). */
struct constraint_arg {
	int32_t max_skew, min_domains; /* any number, truncated */
	char *key, *when;	       /* NULL: absent or not a string */
	bool selector;		       /* labelSelector given (and not null) */
	int32_t aff, taint;	       /* index in policies, -1 absent, SX_ARG_ENUM_BAD */
};

struct pts_args {
	struct constraint_arg *list; /* defaultConstraints, the first 64 */
	uint32_t n;
	int32_t type; /* index in defaulting_types */
};

const char *const sx_pts_policies[] = {"Honor", "Ignore", NULL};
static const char *const defaulting_types[] = {"System", "List", NULL};
#define DEFAULTING_SYSTEM 0

static const struct sx_arg constraint_fields[] = {
	{.name = "maxSkew",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct constraint_arg, max_skew),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_LENIENT | SX_ARG_TRUNCATE},
	{.name = "topologyKey",
	 .type = SX_ARG_STRING,
	 .offset = offsetof(struct constraint_arg, key),
	 .flags = SX_ARG_LENIENT},
	{.name = "whenUnsatisfiable",
	 .type = SX_ARG_STRING,
	 .offset = offsetof(struct constraint_arg, when),
	 .flags = SX_ARG_LENIENT},
	{.name = "labelSelector",
	 .type = SX_ARG_GIVEN, /* forbidden: only "given" matters */
	 .offset = offsetof(struct constraint_arg, selector)},
	{.name = "minDomains",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct constraint_arg, min_domains),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_LENIENT | SX_ARG_TRUNCATE},
	{.name = "nodeAffinityPolicy",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct constraint_arg, aff),
	 .def = -1,
	 .flags = SX_ARG_QUIET,
	 .values = sx_pts_policies},
	{.name = "nodeTaintsPolicy",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct constraint_arg, taint),
	 .def = -1,
	 .flags = SX_ARG_QUIET,
	 .values = sx_pts_policies},
};

static const struct sx_arg constraint_elem[] = {
	{.type = SX_ARG_OBJECT,
	 .flags = SX_ARG_LENIENT,
	 .sub = constraint_fields,
	 .nsub = SX_ARRAY_SIZE(constraint_fields)},
};

/* The list's type error is collected, so that defaultingType's errors
 * follow it; entries beyond 64 are not read. */
static const struct sx_arg pts_fields[] = {
	{.name = "defaultConstraints",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct pts_args, list),
	 .max = 64,
	 .flags = SX_ARG_SOFT | SX_ARG_AT_MOST,
	 .type_err = "Invalid value: must be a list",
	 .sub = constraint_elem,
	 .nsub = 1,
	 .elem_size = sizeof(struct constraint_arg),
	 .count = offsetof(struct pts_args, n)},
	{.name = "defaultingType",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct pts_args, type),
	 .def = DEFAULTING_SYSTEM,
	 .flags = SX_ARG_LENIENT,
	 .values = defaulting_types},
};

/* One entry checked (upstream's wording) into d; errors go to e. */
static void check_constraint(struct sx_arg_errors *e, const struct constraint_arg *c, int idx,
			     struct sx_pts_dconstraint *d, const struct sx_pts_dconstraint *prev)
{
	const char *ks = c->key ? c->key : "";
	const char *ws = c->when ? c->when : "";

	d->max_skew = c->max_skew;
	if (d->max_skew <= 0)
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d].maxSkew: Invalid value: %d: not in valid "
				  "range (0, inf)",
				  idx, d->max_skew);
	validate_key(e, idx, ks);
	d->key = sx_intern(ks);
	if (!*ws)
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d].whenUnsatisfiable: Required value: can "
				  "not be empty",
				  idx);
	else if (strcmp(ws, "DoNotSchedule") == 0)
		d->when = SX_DO_NOT_SCHEDULE;
	else if (strcmp(ws, "ScheduleAnyway") == 0)
		d->when = SX_SCHEDULE_ANYWAY;
	else
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d].whenUnsatisfiable: Unsupported value: "
				  "\"%s\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
				  idx, ws);
	if (c->selector)
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d].labelSelector: Forbidden: constraint "
				  "must not define a selector, as they deduced for each pod",
				  idx);
	d->min_domains = c->min_domains;
	if (c->aff == SX_ARG_ENUM_BAD || c->taint == SX_ARG_ENUM_BAD)
		sx_arg_errors_add(e, NULL,
				  "defaultConstraints[%d]: Unsupported node inclusion policy", idx);
	d->aff_policy = (uint8_t)(c->aff + 1); /* absent (-1): SX_POLICY_DEFAULT */
	d->taint_policy = (uint8_t)(c->taint + 1);
	for (int i = 0; *ws && i < idx; i++)
		if (prev[i].key == d->key && prev[i].when == d->when) {
			sx_arg_errors_add(e, NULL,
					  "defaultConstraints[%d]: Duplicate value: \"{%s, %s}\"",
					  idx, ks, ws);
			break;
		}
}

static const struct sx_pts_dconstraint system_defaults[] = {
	{.max_skew = 3, .when = SX_SCHEDULE_ANYWAY}, /* kubernetes.io/hostname */
	{.max_skew = 5, .when = SX_SCHEDULE_ANYWAY}, /* topology.kubernetes.io/zone */
};

int sx_pts_args_read(const struct cJSON *json, struct sx_pts_args *a, struct sx_error *err)
{
	struct sx_arg_errors e = {0};
	struct pts_args in = {0};

	if (sx_args_read(json, pts_fields, SX_ARRAY_SIZE(pts_fields), &in, &e, err) < 0)
		goto out_free;
	if (in.type == DEFAULTING_SYSTEM && in.n > 0)
		sx_arg_errors_add(&e, NULL,
				  "defaultingType: Invalid value: \"System\": when "
				  ".defaultConstraints are not empty");
	a->v = sx_calloc((size_t)in.n + 2, sizeof(*a->v));
	if (!a->v) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		goto out_free;
	}
	for (uint32_t i = 0; i < in.n; i++)
		check_constraint(&e, &in.list[i], (int)i, &a->v[a->n++], a->v);
	if (sx_arg_errors_finish(&e, err) < 0)
		goto out_free;
	sx_args_free(pts_fields, SX_ARRAY_SIZE(pts_fields), &in);
	if (in.type == DEFAULTING_SYSTEM) {
		a->system_defaulted = true;
		a->n = 2;
		a->v[0] = system_defaults[0];
		a->v[0].key = SX_S_HOSTNAME;
		a->v[1] = system_defaults[1];
		a->v[1].key = SX_S_ZONE;
	}
	return 0;
out_free:
	sx_args_free(pts_fields, SX_ARRAY_SIZE(pts_fields), &in);
	free(a->v);
	a->v = NULL;
	a->n = 0;
	return err->code ? err->code : SX_EINVAL;
}
