/* Decoders of the resource.k8s.io/v1 kinds (dra.h) and of the pod's
 * resource claim fields. Each object owns an arena: a chain of malloc'd
 * blocks (one per allocation, so sanitizers see every one) freed whole
 * with the object; node selectors come from the shared decoder and are
 * freed with sx_node_selector_free. */
#include "schedext/dra.h"

#include <cjson/cJSON.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"

struct blk {
	struct blk *next;
	alignas(max_align_t) unsigned char data[];
};

struct ctx {
	struct sx_dra_object *o;
};

static void *aalloc(struct sx_dra_object *o, size_t size)
{
	struct blk *b = calloc(1, sizeof(*b) + (size ? size : 1));

	if (!b)
		return NULL;
	b->next = o->arena;
	o->arena = b;
	return b->data;
}

static char *astrdup(struct sx_dra_object *o, const char *s)
{
	size_t n = strlen(s);
	char *d = aalloc(o, n + 1);

	if (d)
		memcpy(d, s, n + 1);
	return d;
}

/* String field into the arena; NULL when absent. */
static int dec_str(struct sx_dra_object *o, const cJSON *j, const char *key, char **out,
		   struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(j, key, &s, err);

	*out = NULL;
	if (rc < 0 || !s)
		return rc;
	*out = astrdup(o, s);
	return *out ? 0 : sx_dec_oom(err);
}

/* Array of objects/values into an arena array of `size` elements. */
static int dec_arr(struct sx_dra_object *o, const cJSON *j, const char *key, size_t size,
		   void **items, uint32_t *n, sx_dec_item_fn fn, bool objects, struct sx_error *err)
{
	const cJSON *arr;
	int rc = sx_dec_array(j, key, &arr, n, err);

	*items = NULL;
	if (rc < 0 || !arr || *n == 0) {
		*n = rc < 0 ? 0 : *n;
		return rc;
	}
	*items = aalloc(o, (size_t)*n * size);
	if (!*items)
		return sx_dec_oom(err);
	return objects ? sx_dec_each_object(arr, key, *items, size, fn, o, err)
		       : sx_dec_each(arr, key, *items, size, fn, o, err);
}

static int str_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string_value(j, &s, err);

	if (rc < 0)
		return rc;
	*(char **)elem = astrdup(arg, s);
	return *(char **)elem ? 0 : sx_dec_oom(err);
}

static int dec_strs(struct sx_dra_object *o, const cJSON *j, const char *key, char ***out,
		    uint32_t *n, struct sx_error *err)
{
	return dec_arr(o, j, key, sizeof(char *), (void **)out, n, str_item, false, err);
}

static int dec_nodesel(const cJSON *j, const char *key, struct sx_node_selector **out,
		       struct sx_error *err)
{
	const cJSON *v;
	int rc = sx_dec_object(j, key, &v, err);

	*out = NULL;
	if (rc < 0 || !v)
		return rc;
	*out = sx_dec_node_selector(v, err);
	if (!*out) {
		sx_error_prefix(err, key);
		return err->code < 0 ? err->code : SX_EINVAL;
	}
	return 0;
}

/* ---------- ResourceSlice ---------- */

static int attr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sx_dra_attr *)a)->name, ((const struct sx_dra_attr *)b)->name);
}

static int int_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	(void)arg;
	return sx_dec_int64_value(j, INT64_MIN, INT64_MAX, elem, err);
}

static int bool_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	(void)arg;
	if (!cJSON_IsBool(j))
		return sx_error_set(err, SX_EINVAL, "expected boolean, got %s",
				    sx_dec_type_name(j));
	*(bool *)elem = cJSON_IsTrue(j);
	return 0;
}

/* The value members of a DeviceAttribute (k8s.io/api/resource/v1), in the
 * order a value is taken when several are set (scalars first, as
 * upstream's getAttributeValue looks at them); the lists are
 * DRAListTypeAttributes' (alpha). */
static const char *const attr_keys[] = {"int",	"bool",	 "string",  "version",
					"ints", "bools", "strings", "versions"};

#define NKEYS (sizeof(attr_keys) / sizeof(*attr_keys))

/* The type of attr_keys[k] (NONE sits between scalars and lists). */
static uint8_t key_type(size_t k)
{
	return (uint8_t)(k < SX_DRA_ATTR_NONE ? k : k + 1);
}

/* The list member attr_keys[k] of attribute a into at. */
static int dec_attr_list(struct sx_dra_object *o, const cJSON *a, size_t k, struct sx_dra_attr *at,
			 struct sx_error *err)
{
	void *vals = NULL;
	int rc;

	at->type = key_type(k);
	if (at->type == SX_DRA_ATTR_INTS)
		rc = dec_arr(o, a, attr_keys[k], sizeof(int64_t), &vals, &at->nlist, int_item,
			     false, err);
	else if (at->type == SX_DRA_ATTR_BOOLS)
		rc = dec_arr(o, a, attr_keys[k], sizeof(bool), &vals, &at->nlist, bool_item, false,
			     err);
	else
		rc = dec_arr(o, a, attr_keys[k], sizeof(char *), &vals, &at->nlist, str_item, false,
			     err);
	if (at->type == SX_DRA_ATTR_INTS)
		at->list.ints = vals;
	else if (at->type == SX_DRA_ATTR_BOOLS)
		at->list.bools = vals;
	else
		at->list.strs = vals;
	return rc;
}

/* One attribute's value: the first member of attr_keys present; none
 * (`{}`, or only nulls) is SX_DRA_ATTR_NONE, which selectors and
 * constraints report as upstream does ("unsupported attribute value");
 * a member the v1 type does not have is an error naming it. */
static int dec_attr_value(struct sx_dra_object *o, const cJSON *a, struct sx_dra_attr *at,
			  struct sx_error *err)
{
	const cJSON *m;
	size_t k;

	cJSON_ArrayForEach(m, a)
	{
		for (k = 0; k < NKEYS && strcmp(m->string, attr_keys[k]); k++)
			;
		if (k == NKEYS) {
			sx_error_set(err, SX_EINVAL, "unknown field \"%s\"", m->string);
			sx_error_prefix(err, m->string);
			return SX_EINVAL;
		}
	}
	for (k = 0; k < NKEYS && !sx_dec_get(a, attr_keys[k]); k++)
		;
	at->type = k < NKEYS ? key_type(k) : SX_DRA_ATTR_NONE;
	switch (at->type) {
	case SX_DRA_ATTR_INT:
		return sx_dec_int64(a, "int", INT64_MIN, INT64_MAX, &at->i, NULL, err);
	case SX_DRA_ATTR_BOOL:
		return sx_dec_bool(a, "bool", &at->b, err);
	case SX_DRA_ATTR_STRING:
	case SX_DRA_ATTR_VERSION:
		return dec_str(o, a, attr_keys[k], (char **)&at->s, err);
	case SX_DRA_ATTR_NONE:
		return 0;
	default:
		return dec_attr_list(o, a, k, at, err);
	}
}

static int dec_attrs(struct sx_dra_object *o, const cJSON *dev, struct sx_dra_device *d,
		     struct sx_error *err)
{
	const cJSON *m, *a;
	uint32_t k = 0;
	int rc = sx_dec_object(dev, "attributes", &m, err);

	if (rc < 0 || !m)
		return rc;
	d->attrs = aalloc(o, (size_t)cJSON_GetArraySize(m) * sizeof(*d->attrs));
	if (!d->attrs)
		return sx_dec_oom(err);
	cJSON_ArrayForEach(a, m)
	{
		struct sx_dra_attr *at = &d->attrs[k];

		if (!cJSON_IsObject(a)) {
			sx_dec_not_object(err, a);
			goto fail;
		}
		at->name = astrdup(o, a->string);
		if (!at->name)
			return sx_dec_oom(err);
		if (dec_attr_value(o, a, at, err) < 0)
			goto fail;
		k++;
	}
	d->nattrs = k;
	qsort(d->attrs, k, sizeof(*d->attrs), attr_cmp);
	return 0;
fail:
	sx_error_prefix(err, a->string ? a->string : "");
	sx_error_prefix(err, "attributes");
	return err->code < 0 ? err->code : SX_EINVAL;
}

/* An invalid value of member key (the path names it). */
static int bad_field(struct sx_error *err, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad_field(struct sx_error *err, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sx_error_set(err, SX_EINVAL, "%s", msg);
	sx_error_prefix(err, key);
	return SX_EINVAL;
}

/* One quantity value v into q, its format from its suffix. */
static int dec_qty(const cJSON *v, struct sx_dra_qty *q, struct sx_error *err)
{
	int rc = sx_dec_quantity_value(v, false, &q->v, err);

	if (rc == 0 && cJSON_IsString(v)) {
		size_t n = strlen(v->valuestring);

		while (n && (v->valuestring[n - 1] == ' ' || v->valuestring[n - 1] == '\n'))
			n--;
		q->binary = n >= 2 && v->valuestring[n - 1] == 'i';
	}
	return rc;
}

/* An optional quantity member key of j. */
static int dec_qty_member(const cJSON *j, const char *key, bool *has, struct sx_dra_qty *q,
			  struct sx_error *err)
{
	const cJSON *v = sx_dec_get(j, key);
	int rc;

	*has = v && !cJSON_IsNull(v);
	if (!*has)
		return 0;
	rc = dec_qty(v, q, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

/* A map name -> quantity at j[key] (capacity.requests, consumedCapacity). */
static int dec_qmap(struct sx_dra_object *o, const cJSON *j, const char *key,
		    struct sx_dra_named_qty **out, uint32_t *n, struct sx_error *err)
{
	const cJSON *m, *c;
	int rc = sx_dec_object(j, key, &m, err);

	*out = NULL;
	*n = 0;
	if (rc < 0 || !m)
		return rc;
	if (cJSON_GetArraySize(m) > 128)
		return bad_field(err, key, "Too many: %d: must have at most 128 items",
				 cJSON_GetArraySize(m));
	*out = aalloc(o, (size_t)cJSON_GetArraySize(m) * sizeof(**out));
	if (!*out)
		return sx_dec_oom(err);
	cJSON_ArrayForEach(c, m)
	{
		struct sx_dra_named_qty *q = &(*out)[*n];

		q->name = astrdup(o, c->string);
		if (!q->name)
			return sx_dec_oom(err);
		rc = dec_qty(c, &q->q, err);
		if (rc < 0) {
			sx_error_prefix(err, c->string);
			sx_error_prefix(err, key);
			return rc;
		}
		(*n)++;
	}
	return 0;
}

static int valid_value_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	(void)arg;
	return dec_qty(j, elem, err);
}

/* capacity[name].requestPolicy (CapacityRequestPolicy). */
static int dec_policy(struct sx_dra_object *o, const cJSON *c, struct sx_dra_capacity *cap,
		      struct sx_error *err)
{
	const cJSON *pj, *r;
	struct sx_dra_cap_policy *p;
	int rc = sx_dec_object(c, "requestPolicy", &pj, err);

	if (rc < 0 || !pj)
		return rc;
	p = cap->policy = aalloc(o, sizeof(*p));
	if (!p)
		return sx_dec_oom(err);
	rc = dec_qty_member(pj, "default", &p->has_default, &p->def, err);
	if (rc == 0)
		rc = dec_arr(o, pj, "validValues", sizeof(*p->valid), (void **)&p->valid,
			     &p->nvalid, valid_value_item, false, err);
	if (rc == 0)
		rc = sx_dec_object(pj, "validRange", &r, err);
	if (rc == 0 && r) {
		p->has_range = true;
		rc = dec_qty_member(r, "min", &p->has_min, &p->min, err);
		if (rc == 0)
			rc = dec_qty_member(r, "max", &p->has_max, &p->max, err);
		if (rc == 0)
			rc = dec_qty_member(r, "step", &p->has_step, &p->step, err);
		if (rc == 0 && p->has_step && p->step.v <= 0)
			rc = bad_field(err, "step", "Invalid value: must be positive");
		if (rc < 0)
			sx_error_prefix(err, "validRange");
	}
	if (rc < 0)
		sx_error_prefix(err, "requestPolicy");
	return rc;
}

static int dec_caps(struct sx_dra_object *o, const cJSON *dev, struct sx_dra_device *d,
		    struct sx_error *err)
{
	const cJSON *m, *c;
	uint32_t k = 0;
	int rc = sx_dec_object(dev, "capacity", &m, err);

	if (rc < 0 || !m)
		return rc;
	d->caps = aalloc(o, (size_t)cJSON_GetArraySize(m) * sizeof(*d->caps));
	if (!d->caps)
		return sx_dec_oom(err);
	cJSON_ArrayForEach(c, m)
	{
		const cJSON *v = cJSON_IsObject(c) ? sx_dec_get(c, "value") : NULL;
		struct sx_dra_qty q = {0};

		d->caps[k].name = astrdup(o, c->string);
		if (!d->caps[k].name)
			return sx_dec_oom(err);
		d->caps[k].name_id = sx_intern(c->string);
		rc = v ? dec_qty(v, &q, err) : sx_error_set(err, SX_EINVAL, "missing value");
		d->caps[k].value = q.v;
		d->caps[k].binary = q.binary;
		if (rc < 0)
			sx_error_prefix(err, "value");
		else
			rc = dec_policy(o, c, &d->caps[k], err);
		if (rc < 0) {
			sx_error_prefix(err, c->string);
			sx_error_prefix(err, "capacity");
			return rc;
		}
		k++;
	}
	d->ncaps = k;
	return 0;
}

/* A DeviceTaint effect: the three of v1; any other string is kept as
 * OTHER, which consumers treat like None (DeviceTaint.Effect: "More
 * effects may get added in the future. Consumers must treat unknown
 * effects like None."). */
static uint8_t taint_effect(const char *s)
{
	if (strcmp(s, "NoSchedule") == 0)
		return SX_DRA_EFFECT_NO_SCHEDULE;
	if (strcmp(s, "NoExecute") == 0)
		return SX_DRA_EFFECT_NO_EXECUTE;
	if (strcmp(s, "None") == 0)
		return SX_DRA_EFFECT_NONE;
	return SX_DRA_EFFECT_OTHER;
}

/* devices[].taints[]: key and effect are required (validateDeviceTaint). */
static int taint_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_taint *t = elem;
	const char *effect = NULL;
	int rc = sx_dec_intern(j, "key", &t->key, err);

	(void)arg;
	if (rc == 0 && t->key == SX_STR_EMPTY)
		rc = bad_field(err, "key", "Required value");
	if (rc == 0)
		rc = sx_dec_intern(j, "value", &t->value, err);
	if (rc == 0)
		rc = sx_dec_string(j, "effect", &effect, err);
	if (rc == 0 && (!effect || !*effect))
		rc = bad_field(err, "effect", "Required value");
	if (rc == 0)
		t->effect = taint_effect(effect);
	if (rc == 0)
		rc = sx_dec_time(j, "timeAdded", &t->time_added, &t->has_time_added, err);
	return rc;
}

/* exactly.tolerations[] and firstAvailable[].tolerations[]: operator
 * Exists or Equal (default Equal), effect empty, NoSchedule, NoExecute
 * or None (validateDeviceToleration); anything else is an error. */
static int toleration_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_toleration *t = elem;
	const char *op = NULL, *effect = NULL;
	int rc = sx_dec_intern(j, "key", &t->key, err);

	(void)arg;
	if (rc == 0)
		rc = sx_dec_intern(j, "value", &t->value, err);
	if (rc == 0)
		rc = sx_dec_string(j, "operator", &op, err);
	if (rc == 0 && op && *op) {
		if (strcmp(op, "Exists") == 0)
			t->op = SX_DRA_TOL_EXISTS;
		else if (strcmp(op, "Equal") != 0)
			rc = bad_field(err, "operator",
				       "Unsupported value: \"%s\": supported values: \"Equal\", "
				       "\"Exists\"",
				       op);
	}
	if (rc == 0)
		rc = sx_dec_string(j, "effect", &effect, err);
	if (rc == 0 && effect && *effect) {
		t->has_effect = true;
		t->effect = taint_effect(effect);
		if (t->effect == SX_DRA_EFFECT_OTHER)
			rc = bad_field(err, "effect",
				       "Unsupported value: \"%s\": supported values: "
				       "\"NoExecute\", \"NoSchedule\", \"None\"",
				       effect);
	}
	if (rc == 0 && t->op == SX_DRA_TOL_EXISTS && t->value != SX_STR_EMPTY)
		rc = bad_field(err, "value",
			       "Invalid value: \"%s\": must be empty when `operator` is 'Exists'",
			       sx_str_get(t->value));
	if (rc == 0)
		rc = sx_dec_int64(j, "tolerationSeconds", INT64_MIN, INT64_MAX, &t->seconds,
				  &t->has_seconds, err);
	return rc;
}

/* counters: {name: {value: quantity}} into set->counters. */
static int dec_counters(struct sx_dra_object *o, const cJSON *j, struct sx_dra_counter_set *set,
			struct sx_error *err)
{
	const cJSON *m, *c;
	uint32_t k = 0;
	int rc = sx_dec_object(j, "counters", &m, err);

	if (rc < 0 || !m)
		return rc;
	set->counters = aalloc(o, (size_t)cJSON_GetArraySize(m) * sizeof(*set->counters));
	if (!set->counters)
		return sx_dec_oom(err);
	cJSON_ArrayForEach(c, m)
	{
		const cJSON *v = cJSON_IsObject(c) ? sx_dec_get(c, "value") : NULL;

		set->counters[k].name = sx_intern(c->string);
		rc = v ? sx_dec_quantity_value(v, false, &set->counters[k].value, err)
		       : sx_error_set(err, SX_EINVAL, "Required value");
		if (rc < 0) {
			if (v)
				sx_error_prefix(err, "value");
			sx_error_prefix(err, c->string);
			sx_error_prefix(err, "counters");
			return rc;
		}
		k++;
	}
	set->ncounters = k;
	return 0;
}

/* sharedCounters[] (key "name") and consumesCounters[] (key "counterSet"). */
static int counter_set_item(const cJSON *j, void *elem, void *arg, struct sx_error *err,
			    const char *key)
{
	struct sx_dra_counter_set *set = elem;
	int rc = sx_dec_intern(j, key, &set->name, err);

	if (rc == 0 && set->name == SX_STR_EMPTY)
		rc = bad_field(err, key, "Required value");
	if (rc == 0)
		rc = dec_counters(arg, j, set, err);
	return rc;
}

static int shared_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return counter_set_item(j, elem, arg, err, "name");
}

static int consumes_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return counter_set_item(j, elem, arg, err, "counterSet");
}

static int device_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_object *o = arg;
	struct sx_dra_device *d = elem;
	uint32_t n;
	const cJSON *a;
	int rc = sx_dec_intern(j, "name", &d->name, err);

	if (rc == 0 && d->name == SX_STR_EMPTY)
		rc = sx_error_set(err, SX_EINVAL, "name: Required value");
	if (rc == 0)
		rc = dec_attrs(o, j, d, err);
	if (rc == 0)
		rc = dec_caps(o, j, d, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "nodeName", &d->node_name, err);
	if (rc == 0)
		rc = sx_dec_bool(j, "allNodes", &d->all_nodes, err);
	if (rc == 0)
		rc = dec_nodesel(j, "nodeSelector", &d->node_selector, err);
	if (rc == 0)
		rc = dec_arr(o, j, "consumesCounters", sizeof(*d->consumes), (void **)&d->consumes,
			     &d->nconsumes, consumes_item, true, err);
	if (rc == 0)
		rc = sx_dec_bool(j, "allowMultipleAllocations", &d->allow_multiple, err);
	if (rc == 0)
		rc = sx_dec_array(j, "bindingConditions", &a, &n, err);
	d->binding_conditions = rc == 0 && n > 0;
	if (rc == 0)
		rc = dec_strs(o, j, "bindingConditions", &d->bind_conds, &d->nbind_conds, err);
	if (rc == 0)
		rc = dec_strs(o, j, "bindingFailureConditions", &d->bind_fail, &d->nbind_fail, err);
	if (rc == 0)
		rc = sx_dec_bool(j, "bindsToNode", &d->binds_to_node, err);
	if (rc == 0)
		rc = dec_arr(o, j, "taints", sizeof(*d->taints), (void **)&d->taints, &d->ntaints,
			     taint_item, true, err);
	return rc;
}

static int dec_slice(struct sx_dra_object *o, const cJSON *spec, struct sx_error *err)
{
	struct sx_dra_slice *s = &o->u.slice;
	const cJSON *pool;
	int rc = sx_dec_intern(spec, "driver", &s->driver, err);

	if (rc == 0)
		rc = sx_dec_object(spec, "pool", &pool, err);
	if (rc == 0 && pool) {
		rc = sx_dec_intern(pool, "name", &s->pool, err);
		if (rc == 0)
			rc = sx_dec_int64(pool, "generation", 0, INT64_MAX, &s->generation, NULL,
					  err);
		if (rc == 0)
			rc = sx_dec_int64(pool, "resourceSliceCount", 0, INT64_MAX, &s->slice_count,
					  NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "pool");
	}
	if (rc == 0)
		rc = sx_dec_intern(spec, "nodeName", &s->node_name, err);
	if (rc == 0)
		rc = sx_dec_bool(spec, "allNodes", &s->all_nodes, err);
	if (rc == 0)
		rc = dec_nodesel(spec, "nodeSelector", &s->node_selector, err);
	if (rc == 0) {
		s->has_per_device = sx_dec_get(spec, "perDeviceNodeSelection") != NULL;
		rc = sx_dec_bool(spec, "perDeviceNodeSelection", &s->per_device, err);
	}
	if (rc == 0)
		rc = dec_arr(o, spec, "sharedCounters", sizeof(*s->counter_sets),
			     (void **)&s->counter_sets, &s->ncounter_sets, shared_item, true, err);
	s->shared_counters = s->ncounter_sets > 0;
	if (rc == 0)
		rc = dec_arr(o, spec, "devices", sizeof(*s->devices), (void **)&s->devices,
			     &s->ndevices, device_item, true, err);
	for (uint32_t i = 0; rc == 0 && i < s->ndevices; i++)
		s->consumes |= s->devices[i].nconsumes > 0;
	return rc;
}

/* ---------- requests, claims, templates, classes ---------- */

static int selector_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	const cJSON *cel;
	int rc = sx_dec_object(j, "cel", &cel, err);

	*(char **)elem = NULL;
	if (rc == 0 && cel) {
		rc = dec_str(arg, cel, "expression", (char **)elem, err);
		if (rc < 0)
			sx_error_prefix(err, "cel");
	}
	return rc;
}

static int dec_exact(struct sx_dra_object *o, const cJSON *j, struct sx_dra_exact *e,
		     struct sx_error *err)
{
	char *mode;
	bool has_count;
	const cJSON *cap;
	int rc = dec_str(o, j, "name", &e->name, err);

	if (rc == 0)
		rc = dec_str(o, j, "deviceClassName", &e->class_name, err);
	if (rc == 0)
		rc = dec_arr(o, j, "selectors", sizeof(char *), (void **)&e->selectors,
			     &e->nselectors, selector_item, true, err);
	if (rc == 0)
		rc = dec_str(o, j, "allocationMode", &mode, err);
	if (rc == 0 && mode && strcmp(mode, "All") == 0) {
		e->mode = SX_DRA_ALL;
	} else if (rc == 0 && mode && strcmp(mode, "ExactCount") != 0) {
		e->bad_mode = true;
		e->mode_name = mode;
	}
	if (rc == 0)
		rc = sx_dec_int64(j, "count", INT64_MIN, INT64_MAX, &e->count, &has_count, err);
	if (rc == 0 && !has_count && e->mode == SX_DRA_EXACT_COUNT)
		e->count = 1; /* API default */
	if (rc == 0) {
		e->has_admin_access = sx_dec_get(j, "adminAccess") != NULL;
		rc = sx_dec_bool(j, "adminAccess", &e->admin_access, err);
	}
	if (rc == 0)
		rc = dec_arr(o, j, "tolerations", sizeof(*e->tolerations), (void **)&e->tolerations,
			     &e->ntolerations, toleration_item, true, err);
	if (rc == 0)
		rc = sx_dec_object(j, "capacity", &cap, err);
	if (rc == 0 && cap) {
		e->has_capacity = true;
		rc = dec_qmap(o, cap, "requests", &e->capreq, &e->ncapreq, err);
		if (rc < 0)
			sx_error_prefix(err, "capacity");
	}
	return rc;
}

static int sub_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return dec_exact(arg, j, elem, err);
}

static int request_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_object *o = arg;
	struct sx_dra_request *r = elem;
	const cJSON *ex;
	int rc = dec_str(o, j, "name", &r->name, err);

	if (rc == 0 && !r->name)
		rc = sx_error_set(err, SX_EINVAL, "name: Required value");
	if (rc == 0)
		rc = sx_dec_object(j, "exactly", &ex, err);
	if (rc == 0 && ex) {
		r->has_exactly = true;
		rc = dec_exact(o, ex, &r->exactly, err);
		r->exactly.name = r->name;
		if (rc < 0)
			sx_error_prefix(err, "exactly");
	}
	if (rc == 0)
		rc = dec_arr(o, j, "firstAvailable", sizeof(*r->first_available),
			     (void **)&r->first_available, &r->nsub, sub_item, true, err);
	return rc;
}

static int constraint_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_constraint *c = elem;
	int rc = dec_strs(arg, j, "requests", &c->requests, &c->nrequests, err);

	if (rc == 0)
		rc = dec_str(arg, j, "matchAttribute", &c->match_attribute, err);
	if (rc == 0)
		rc = dec_str(arg, j, "distinctAttribute", &c->distinct_attribute, err);
	return rc;
}

static int dec_opaque(struct sx_dra_object *o, const cJSON *j, char **out, struct sx_error *err)
{
	const cJSON *op;
	char *s;
	int rc = sx_dec_object(j, "opaque", &op, err);

	*out = NULL;
	if (rc < 0 || !op)
		return rc;
	s = cJSON_PrintUnformatted(op);
	if (!s)
		return sx_dec_oom(err);
	*out = astrdup(o, s);
	cJSON_free(s);
	return *out ? 0 : sx_dec_oom(err);
}

static int config_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_class_config *c = elem;
	int rc = dec_strs(arg, j, "requests", &c->requests, &c->nrequests, err);

	if (rc == 0)
		rc = dec_opaque(arg, j, &c->opaque, err);
	return rc;
}

static int dec_claim_spec(struct sx_dra_object *o, const cJSON *spec, struct sx_dra_claim_spec *cs,
			  struct sx_error *err)
{
	const cJSON *dev;
	int rc = sx_dec_object(spec, "devices", &dev, err);

	if (rc < 0 || !dev)
		return rc;
	rc = dec_arr(o, dev, "requests", sizeof(*cs->requests), (void **)&cs->requests,
		     &cs->nrequests, request_item, true, err);
	if (rc == 0)
		rc = dec_arr(o, dev, "constraints", sizeof(*cs->constraints),
			     (void **)&cs->constraints, &cs->nconstraints, constraint_item, true,
			     err);
	if (rc == 0)
		rc = dec_arr(o, dev, "config", sizeof(*cs->config), (void **)&cs->config,
			     &cs->nconfig, config_item, true, err);
	if (rc < 0)
		sx_error_prefix(err, "devices");
	return rc;
}

static int result_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_result *r = elem;
	int rc = dec_str(arg, j, "request", &r->request, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "driver", &r->driver, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "pool", &r->pool, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "device", &r->device, err);
	if (rc == 0) {
		r->has_admin_access = sx_dec_get(j, "adminAccess") != NULL;
		rc = sx_dec_bool(j, "adminAccess", &r->admin_access, err);
	}
	if (rc == 0)
		rc = dec_str(arg, j, "shareID", &r->share_id, err);
	if (rc == 0)
		rc = dec_strs(arg, j, "bindingConditions", &r->bind_conds, &r->nbind_conds, err);
	if (rc == 0)
		rc = dec_strs(arg, j, "bindingFailureConditions", &r->bind_fail, &r->nbind_fail,
			      err);
	if (rc == 0)
		rc = dec_qmap(arg, j, "consumedCapacity", &r->consumed, &r->nconsumed, err);
	return rc;
}

static int alloc_config_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_alloc_config *c = elem;
	const char *src;
	int rc = sx_dec_string(j, "source", &src, err);

	if (rc == 0)
		c->source = src && strcmp(src, "FromClaim") == 0 ? SX_DRA_FROM_CLAIM
								 : SX_DRA_FROM_CLASS;
	if (rc == 0)
		rc = dec_strs(arg, j, "requests", &c->requests, &c->nrequests, err);
	if (rc == 0)
		rc = dec_opaque(arg, j, &c->opaque, err);
	return rc;
}

static int dec_allocation(struct sx_dra_object *o, const cJSON *status, struct sx_error *err)
{
	struct sx_dra_allocation *a;
	const cJSON *aj, *dev;
	int rc = sx_dec_object(status, "allocation", &aj, err);

	if (rc < 0 || !aj)
		return rc;
	a = o->u.claim.allocation = aalloc(o, sizeof(*a));
	if (!a)
		return sx_dec_oom(err);
	rc = sx_dec_object(aj, "devices", &dev, err);
	if (rc == 0 && dev) {
		rc = dec_arr(o, dev, "results", sizeof(*a->results), (void **)&a->results,
			     &a->nresults, result_item, true, err);
		if (rc == 0)
			rc = dec_arr(o, dev, "config", sizeof(*a->config), (void **)&a->config,
				     &a->nconfig, alloc_config_item, true, err);
		if (rc < 0)
			sx_error_prefix(err, "devices");
	}
	if (rc == 0)
		rc = dec_nodesel(aj, "nodeSelector", &a->node_selector, err);
	if (rc == 0)
		rc = sx_dec_time(aj, "allocationTimestamp", &a->timestamp, &a->has_timestamp, err);
	if (rc < 0)
		sx_error_prefix(err, "allocation");
	return rc;
}

static int condition_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_condition *c = elem;
	char *st = NULL;
	int rc = dec_str(arg, j, "type", &c->type, err);

	if (rc == 0)
		rc = dec_str(arg, j, "status", &st, err);
	c->is_true = st && strcmp(st, "True") == 0;
	if (rc == 0)
		rc = dec_str(arg, j, "reason", &c->reason, err);
	if (rc == 0)
		rc = dec_str(arg, j, "message", &c->message, err);
	return rc;
}

static int device_status_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_device_status *d = elem;
	int rc = sx_dec_intern(j, "driver", &d->driver, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "pool", &d->pool, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "device", &d->device, err);
	if (rc == 0)
		rc = dec_arr(arg, j, "conditions", sizeof(*d->conds), (void **)&d->conds,
			     &d->nconds, condition_item, true, err);
	return rc;
}

static int consumer_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_consumer *c = elem;
	int rc = dec_str(arg, j, "apiGroup", &c->api_group, err);

	if (rc == 0)
		rc = dec_str(arg, j, "resource", &c->resource, err);
	if (rc == 0)
		rc = dec_str(arg, j, "name", &c->name, err);
	if (rc == 0)
		rc = dec_str(arg, j, "uid", &c->uid, err);
	return rc;
}

static int owner_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_dra_object *o = arg;
	bool ctrl = false;
	int rc = sx_dec_bool(j, "controller", &ctrl, err);

	if (rc == 0 && ctrl) {
		rc = sx_dec_intern(j, "kind", &o->u.claim.owner_kind, err);
		if (rc == 0)
			rc = dec_str(o, j, "uid", &o->u.claim.owner_uid, err);
	}
	return rc;
}

static int finalizer_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	int rc = str_item(j, elem, arg, err);

	if (rc == 0 && strcmp(*(char **)elem, SX_DRA_FINALIZER) == 0)
		((struct sx_dra_object *)arg)->u.claim.has_finalizer = true;
	return rc;
}

static int dec_claim(struct sx_dra_object *o, const cJSON *json, struct sx_error *err)
{
	const cJSON *md = sx_dec_get(json, "metadata"), *spec, *status, *arr;
	uint32_t n;
	int rc = 0;

	if (cJSON_IsObject(md)) {
		o->u.claim.deleting = sx_dec_get(md, "deletionTimestamp") != NULL;
		rc = sx_dec_array(md, "ownerReferences", &arr, &n, err);
		if (rc == 0)
			rc = sx_dec_each_object(arr, "ownerReferences", NULL, 0, owner_item, o,
						err);
		if (rc == 0)
			rc = dec_arr(o, md, "finalizers", sizeof(char *),
				     (void **)&o->u.claim.finalizers, &o->u.claim.nfinalizers,
				     finalizer_item, false, err);
		if (rc == 0) {
			const cJSON *ann;

			rc = sx_dec_object(md, "annotations", &ann, err);
			if (rc == 0 && ann) {
				const cJSON *v = cJSON_GetObjectItemCaseSensitive(
					ann, SX_DRA_EXTENDED_ANNOTATION);

				o->u.claim.extended =
					cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
			}
		}
		if (rc < 0) {
			sx_error_prefix(err, "metadata");
			return rc;
		}
	}
	rc = sx_dec_object(json, "spec", &spec, err);
	if (rc == 0 && spec) {
		rc = dec_claim_spec(o, spec, &o->u.claim.spec, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc == 0)
		rc = sx_dec_object(json, "status", &status, err);
	if (rc == 0 && status) {
		rc = dec_allocation(o, status, err);
		if (rc == 0)
			rc = dec_arr(o, status, "reservedFor", sizeof(*o->u.claim.reserved),
				     (void **)&o->u.claim.reserved, &o->u.claim.nreserved,
				     consumer_item, true, err);
		if (rc == 0)
			rc = dec_arr(o, status, "devices", sizeof(*o->u.claim.device_status),
				     (void **)&o->u.claim.device_status, &o->u.claim.ndevice_status,
				     device_status_item, true, err);
		if (rc < 0)
			sx_error_prefix(err, "status");
	}
	return rc;
}

static int dec_template(struct sx_dra_object *o, const cJSON *json, struct sx_error *err)
{
	const cJSON *spec, *inner = NULL;
	int rc = sx_dec_object(json, "spec", &spec, err);

	if (rc == 0 && spec)
		rc = sx_dec_object(spec, "spec", &inner, err);
	if (rc == 0 && inner) {
		rc = dec_claim_spec(o, inner, &o->u.tmpl, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static int dec_class(struct sx_dra_object *o, const cJSON *spec, struct sx_error *err)
{
	struct sx_dra_class *c = &o->u.cls;
	int rc = dec_arr(o, spec, "selectors", sizeof(char *), (void **)&c->selectors,
			 &c->nselectors, selector_item, true, err);

	if (rc == 0)
		rc = dec_arr(o, spec, "config", sizeof(*c->config), (void **)&c->config,
			     &c->nconfig, config_item, true, err);
	if (rc == 0)
		rc = dec_str(o, spec, "extendedResourceName", &c->extended_resource_name, err);
	return rc;
}

/* ---------- objects ---------- */

bool sx_kind_is_dra(enum sx_kind kind)
{
	return kind == SX_KIND_DEVICE_CLASS || kind == SX_KIND_RESOURCE_SLICE ||
	       kind == SX_KIND_RESOURCE_CLAIM || kind == SX_KIND_CLAIM_TEMPLATE;
}

static void dra_free(struct sx_dra_object *o)
{
	struct blk *b = o->arena;

	sx_meta_clear(&o->meta);
	if (o->kind == SX_KIND_RESOURCE_SLICE) {
		sx_node_selector_free(o->u.slice.node_selector);
		for (uint32_t i = 0; o->u.slice.devices && i < o->u.slice.ndevices; i++)
			sx_node_selector_free(o->u.slice.devices[i].node_selector);
	} else if (o->kind == SX_KIND_RESOURCE_CLAIM && o->u.claim.allocation) {
		sx_node_selector_free(o->u.claim.allocation->node_selector);
	}
	while (b) {
		struct blk *next = b->next;

		free(b);
		b = next;
	}
	free(o);
}

struct sx_dra_object *sx_dra_ref(const struct sx_dra_object *o)
{
	struct sx_dra_object *m = (struct sx_dra_object *)o;

	if (m)
		atomic_fetch_add(&m->refcount, 1);
	return m;
}

void sx_dra_unref(const struct sx_dra_object *o)
{
	struct sx_dra_object *m = (struct sx_dra_object *)o;

	if (m && atomic_fetch_sub(&m->refcount, 1) == 1)
		dra_free(m);
}

struct sx_dra_object *sx_decode_dra(const cJSON *json, enum sx_kind kind, struct sx_error *err)
{
	struct sx_dra_object *o;
	const cJSON *spec;
	struct sx_error tmp;
	int rc;

	if (!err)
		err = &tmp;
	o = sx_dec_new(json, sizeof(*o), err);
	if (!o)
		return NULL;
	atomic_init(&o->refcount, 1);
	o->kind = (uint8_t)kind;
	rc = sx_dec_meta(json, &o->meta, err);
	if (rc == 0 && (!o->meta.name || !*o->meta.name))
		rc = sx_error_set(err, SX_EINVAL, "metadata.name: Required value");
	if (rc == 0)
		o->name_id = sx_intern(o->meta.name);
	if (rc == 0 && kind == SX_KIND_RESOURCE_CLAIM)
		rc = dec_claim(o, json, err);
	else if (rc == 0 && kind == SX_KIND_CLAIM_TEMPLATE)
		rc = dec_template(o, json, err);
	else if (rc == 0) {
		rc = sx_dec_object(json, "spec", &spec, err);
		if (rc == 0 && spec)
			rc = kind == SX_KIND_RESOURCE_SLICE ? dec_slice(o, spec, err)
							    : dec_class(o, spec, err);
		if (rc < 0 && spec)
			sx_error_prefix(err, "spec");
	}
	if (rc < 0) {
		dra_free(o);
		return NULL;
	}
	return o;
}

const struct sx_dra_attr *sx_dra_lookup_attr(const struct sx_dra_device *dev, sx_str driver,
					     const char *qualified)
{
	struct sx_dra_attr key = {.name = qualified};
	const struct sx_dra_attr *a;
	const char *slash = strchr(qualified, '/');
	size_t dlen;

	if (dev->nattrs == 0)
		return NULL;
	a = bsearch(&key, dev->attrs, dev->nattrs, sizeof(*a), attr_cmp);
	if (a || !slash)
		return a;
	dlen = (size_t)(slash - qualified);
	if (dlen != sx_str_len(driver) || memcmp(qualified, sx_str_get(driver), dlen) != 0)
		return NULL;
	key.name = slash + 1;
	return bsearch(&key, dev->attrs, dev->nattrs, sizeof(*a), attr_cmp);
}

/* ---------- pod fields ---------- */

/* An optional string field: NULL when absent or null (sx_dec_strdup gives ""). */
static int opt_strdup(const cJSON *j, const char *key, char **out, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(j, key, &s, err);

	*out = NULL;
	if (rc < 0 || !s)
		return rc;
	*out = strdup(s);
	return *out ? 0 : sx_dec_oom(err);
}

static int pod_claim_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod_claim *c = elem;
	int rc = sx_dec_strdup(j, "name", &c->name, err);

	if (rc == 0)
		rc = opt_strdup(j, "resourceClaimName", &c->claim_name, err);
	if (rc == 0)
		rc = opt_strdup(j, "resourceClaimTemplateName", &c->template_name, err);
	if (rc == 0 && !*c->name)
		rc = sx_error_set(err, SX_EINVAL, "name: Required value");
	return rc;
}

static int pod_status_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod *pod = arg;
	const char *name, *claim;
	int rc = sx_dec_string(j, "name", &name, err);

	if (rc == 0)
		rc = sx_dec_string(j, "resourceClaimName", &claim, err);
	for (uint32_t i = 0; rc == 0 && name && i < pod->nresource_claims; i++) {
		struct sx_pod_claim *c = &pod->resource_claims[i];

		if (strcmp(c->name, name) != 0 || c->has_status)
			continue;
		c->has_status = true;
		if (claim && !(c->status_claim = strdup(claim)))
			rc = sx_dec_oom(err);
	}
	return rc;
}

int sx_dec_pod_resource_claims(const cJSON *pod_json, struct sx_pod *pod, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(pod_json, "spec"), *status = sx_dec_get(pod_json, "status");
	const cJSON *arr;
	uint32_t n;
	int rc = 0;

	if (cJSON_IsObject(spec)) {
		rc = sx_dec_objects(spec, "resourceClaims", &pod->resource_claims,
				    &pod->nresource_claims, pod_claim_item, NULL, err);
		if (rc < 0) {
			sx_error_prefix(err, "spec");
			return rc;
		}
	}
	if (pod->nresource_claims == 0 || !cJSON_IsObject(status))
		return 0;
	rc = sx_dec_array(status, "resourceClaimStatuses", &arr, &n, err);
	if (rc == 0)
		rc = sx_dec_each_object(arr, "resourceClaimStatuses", NULL, 0, pod_status_item, pod,
					err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

void sx_pod_resource_claims_free(struct sx_pod *pod)
{
	for (uint32_t i = 0; pod->resource_claims && i < pod->nresource_claims; i++) {
		free(pod->resource_claims[i].name);
		free(pod->resource_claims[i].claim_name);
		free(pod->resource_claims[i].template_name);
		free(pod->resource_claims[i].status_claim);
	}
	free(pod->resource_claims);
}
