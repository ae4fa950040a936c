/* Label selectors, node selectors and node affinity (decode.h), built on
 * the field readers of decode.c. */
#include "schedext/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/quantity.h"

static const char *const op_names[] = {
	[SX_OP_IN] = "In",	   [SX_OP_NOT_IN] = "NotIn",
	[SX_OP_EXISTS] = "Exists", [SX_OP_DOES_NOT_EXIST] = "DoesNotExist",
	[SX_OP_GT] = "Gt",	   [SX_OP_LT] = "Lt",
};

/* One {key, operator, values} expression into elem (struct sx_requirement);
 * *(bool *)node allows the node selector operators Gt/Lt. */
static int decode_requirement(const cJSON *j, void *elem, void *node, struct sx_error *err)
{
	struct sx_requirement *req = elem;
	int nops = *(bool *)node ? SX_OP_LT + 1 : SX_OP_DOES_NOT_EXIST + 1;
	const char *op;
	int rc = sx_dec_intern(j, "key", &req->key, err);

	if (rc < 0)
		return rc;
	rc = sx_dec_string(j, "operator", &op, err);
	if (rc < 0)
		return rc;
	for (req->op = 0; op && req->op < nops; req->op++)
		if (strcmp(op, op_names[req->op]) == 0)
			break;
	if (!op || req->op == nops) {
		sx_error_set(err, SX_EINVAL, "unknown operator \"%.64s\"", op ? op : "");
		sx_error_prefix(err, "operator");
		return SX_EINVAL;
	}
	return sx_dec_str_list(j, "values", &req->nvalues, &req->values, err);
}

/* Appends the requirements of array obj[key] to *reqs (count *n). */
static int decode_requirements(const cJSON *obj, const char *key, bool node,
			       struct sx_requirement **reqs, uint32_t *n, struct sx_error *err)
{
	const cJSON *arr;
	uint32_t cnt, old = *n;
	int rc = sx_dec_array(obj, key, &arr, &cnt, err);

	if (rc < 0 || !arr || cnt == 0)
		return rc;
	if (old + cnt > SX_DECODE_MAX_ITEMS) {
		sx_error_set(err, SX_ETOOBIG, "more than %d requirements", SX_DECODE_MAX_ITEMS);
		sx_error_prefix(err, key);
		return SX_ETOOBIG;
	}
	struct sx_requirement *grown = realloc(*reqs, (old + cnt) * sizeof(**reqs));
	if (!grown)
		return sx_dec_oom(err);
	*reqs = grown;
	memset(grown + old, 0, cnt * sizeof(*grown));
	*n = old + cnt; /* counted before decoding so that a free sees them */
	return sx_dec_each_object(arr, key, grown + old, sizeof(*grown), decode_requirement, &node,
				  err);
}

/* matchLabels into SX_OP_EQUALS requirements. */
static int decode_match_labels(const cJSON *j, struct sx_label_selector *sel, struct sx_error *err)
{
	struct sx_labels ml;
	int rc = sx_dec_labels(j, "matchLabels", &ml, NULL, err);

	if (rc < 0 || ml.n == 0) {
		free(ml.items);
		return rc;
	}
	sel->reqs = sx_calloc(ml.n, sizeof(*sel->reqs));
	if (!sel->reqs) {
		free(ml.items);
		return sx_dec_oom(err);
	}
	for (uint32_t i = 0; i < ml.n; i++) {
		struct sx_requirement *r = &sel->reqs[sel->nreqs++];

		r->key = ml.items[i].key;
		r->op = SX_OP_EQUALS;
		r->values = sx_calloc(1, sizeof(sx_str));
		if (!r->values) {
			free(ml.items);
			return sx_dec_oom(err);
		}
		r->nvalues = 1;
		r->values[0] = ml.items[i].value;
	}
	free(ml.items);
	return 0;
}

/* A present selector value j (non-null) into a new selector. */
static struct sx_label_selector *decode_selector_value(const cJSON *j, struct sx_error *err)
{
	struct sx_label_selector *sel;

	sel = sx_dec_new(j, sizeof(*sel), err);
	if (!sel)
		return NULL;
	if (decode_match_labels(j, sel, err) < 0 ||
	    decode_requirements(j, "matchExpressions", false, &sel->reqs, &sel->nreqs, err) < 0) {
		sx_label_selector_free(sel);
		return NULL;
	}
	return sel;
}

struct sx_label_selector *sx_decode_label_selector(const cJSON *json, struct sx_error *err)
{
	struct sx_error tmp;

	if (!err)
		err = &tmp;
	if (!json || cJSON_IsNull(json)) {
		sx_error_set(err, SX_EINVAL, "expected object, got null");
		return NULL;
	}
	return decode_selector_value(json, err);
}

int sx_dec_selector_field(const cJSON *obj, const char *key, struct sx_label_selector **out,
			  struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	*out = decode_selector_value(v, err);
	if (!*out) {
		sx_error_prefix(err, key);
		return err ? err->code : SX_EINVAL;
	}
	return 0;
}

int sx_dec_node_selector_term(const cJSON *j, struct sx_node_selector_term *term,
			      struct sx_error *err)
{
	int rc;

	if (!cJSON_IsObject(j))
		return sx_dec_not_object(err, j);
	rc = decode_requirements(j, "matchExpressions", true, &term->exprs, &term->nexprs, err);
	if (rc == 0)
		rc = decode_requirements(j, "matchFields", true, &term->fields, &term->nfields,
					 err);
	return rc;
}

static int node_selector_term_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_node_selector_term(j, elem, err);
}

struct sx_node_selector *sx_dec_node_selector(const cJSON *j, struct sx_error *err)
{
	struct sx_node_selector *sel;

	sel = sx_dec_new(j, sizeof(*sel), err);
	if (!sel)
		return NULL;
	if (sx_dec_objects(j, "nodeSelectorTerms", &sel->terms, &sel->nterms,
			   node_selector_term_item, NULL, err) < 0) {
		sx_node_selector_free(sel);
		return NULL;
	}
	return sel;
}

/* A v1.PreferredSchedulingTerm into elem. */
static int decode_preferred_term(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_preferred_scheduling_term *t = elem;
	int rc = sx_dec_int32(j, "weight", &t->weight, NULL, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "preference", node_selector_term_item, &t->preference, NULL,
				err);
	return rc;
}

struct sx_node_affinity *sx_decode_node_affinity(const cJSON *json, struct sx_error *err)
{
	static const char req_key[] = "requiredDuringSchedulingIgnoredDuringExecution";
	struct sx_node_affinity *na;
	const cJSON *req;
	struct sx_error tmp;

	if (!err)
		err = &tmp;
	na = sx_dec_new(json, sizeof(*na), err);
	if (!na)
		return NULL;
	req = sx_dec_get(json, req_key);
	if (req) {
		na->required = sx_dec_node_selector(req, err);
		if (!na->required) {
			sx_error_prefix(err, req_key);
			goto out_free;
		}
	}
	if (sx_dec_objects(json, "preferredDuringSchedulingIgnoredDuringExecution", &na->preferred,
			   &na->npreferred, decode_preferred_term, NULL, err) < 0)
		goto out_free;
	return na;
out_free:
	sx_node_affinity_free(na);
	return NULL;
}
