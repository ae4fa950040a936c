/* Encoders of decoded selector structs back to their Kubernetes JSON, for
 * the decode -> encode -> decode checks of the selector targets. */
#ifndef SCHEDEXT_FUZZ_ENCODE_H
#define SCHEDEXT_FUZZ_ENCODE_H

#include <cjson/cJSON.h>

#include "schedext/intern.h"
#include "schedext/model.h"

static const char *const fuzz_op_names[] = {
	[SX_OP_IN] = "In",	   [SX_OP_NOT_IN] = "NotIn",
	[SX_OP_EXISTS] = "Exists", [SX_OP_DOES_NOT_EXIST] = "DoesNotExist",
	[SX_OP_GT] = "Gt",	   [SX_OP_LT] = "Lt",
};

static inline cJSON *fuzz_encode_reqs(const struct sx_requirement *r, uint32_t n, bool labels)
{
	cJSON *arr = labels ? cJSON_CreateObject() : cJSON_CreateArray();

	for (uint32_t i = 0; i < n; i++) {
		cJSON *e, *vals;

		if (labels) {
			if (r[i].op == SX_OP_EQUALS)
				cJSON_AddStringToObject(arr, sx_str_get(r[i].key),
							sx_str_get(r[i].values[0]));
			continue;
		}
		if (r[i].op == SX_OP_EQUALS)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "key", sx_str_get(r[i].key));
		cJSON_AddStringToObject(e, "operator", fuzz_op_names[r[i].op]);
		vals = cJSON_AddArrayToObject(e, "values");
		for (uint32_t k = 0; k < r[i].nvalues; k++)
			cJSON_AddItemToArray(vals, cJSON_CreateString(sx_str_get(r[i].values[k])));
		cJSON_AddItemToArray(arr, e);
	}
	return arr;
}

static inline cJSON *fuzz_encode_label_selector(const struct sx_label_selector *s)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddItemToObject(j, "matchLabels", fuzz_encode_reqs(s->reqs, s->nreqs, true));
	cJSON_AddItemToObject(j, "matchExpressions", fuzz_encode_reqs(s->reqs, s->nreqs, false));
	return j;
}

static inline cJSON *fuzz_encode_term(const struct sx_node_selector_term *t)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddItemToObject(j, "matchExpressions", fuzz_encode_reqs(t->exprs, t->nexprs, false));
	cJSON_AddItemToObject(j, "matchFields", fuzz_encode_reqs(t->fields, t->nfields, false));
	return j;
}

static inline cJSON *fuzz_encode_node_affinity(const struct sx_node_affinity *na)
{
	cJSON *j = cJSON_CreateObject(), *terms, *pref;

	if (na->required) {
		cJSON *req = cJSON_AddObjectToObject(
			j, "requiredDuringSchedulingIgnoredDuringExecution");

		terms = cJSON_AddArrayToObject(req, "nodeSelectorTerms");
		for (uint32_t i = 0; i < na->required->nterms; i++)
			cJSON_AddItemToArray(terms, fuzz_encode_term(&na->required->terms[i]));
	}
	pref = cJSON_AddArrayToObject(j, "preferredDuringSchedulingIgnoredDuringExecution");
	for (uint32_t i = 0; i < na->npreferred; i++) {
		cJSON *p = cJSON_CreateObject();

		cJSON_AddNumberToObject(p, "weight", na->preferred[i].weight);
		cJSON_AddItemToObject(p, "preference",
				      fuzz_encode_term(&na->preferred[i].preference));
		cJSON_AddItemToArray(pref, p);
	}
	return j;
}

/* The canonical text of a cJSON tree (caller frees), consumed. */
static inline char *fuzz_print(cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);

	cJSON_Delete(j);
	return s;
}

#endif
