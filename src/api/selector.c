/* Label selectors, node selector terms, node affinity and tolerations
 * (apimachinery labels/selector.go, component-helpers nodeaffinity.go,
 * api core/v1 toleration.go ToleratesTaint), plus the pure resource lookup of
 * model.h (the label lookup is inline there). Everything here is a pure
 * function over immutable structs: any thread may call it.
 *
 * Invalid requirements never match, as upstream, where converting them to a
 * selector fails and the term (or selector) is skipped: In/NotIn without
 * values, Gt/Lt without exactly one integer value, matchFields other than
 * metadata.name In/NotIn with one value.
 */
#include "schedext/selector.h"

#include <stdint.h>

#include "schedext/model.h"

int64_t sx_resources_get(const struct sx_resources *r, sx_str name)
{
	uint32_t lo = 0, hi;

	if (!r)
		return 0;
	if (name == SX_S_CPU)
		return r->milli_cpu;
	if (name == SX_S_MEMORY)
		return r->memory;
	if (name == SX_S_EPHEMERAL_STORAGE)
		return r->ephemeral_storage;
	if (name == SX_S_PODS)
		return r->pods;
	hi = r->scalar ? r->nscalar : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->scalar[mid].name == name)
			return r->scalar[mid].value;
		if (r->scalar[mid].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* strconv.ParseInt(s, 10, 64): optional sign, at least one digit, nothing
 * else, no overflow. */
static bool parse_int64(sx_str id, int64_t *out)
{
	const char *s = sx_str_get(id);
	size_t n = sx_str_len(id), i = 0;
	bool neg = false;
	uint64_t v = 0, limit;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		return false;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static bool values_contain(const struct sx_requirement *req, sx_str v)
{
	for (uint32_t i = 0; i < req->nvalues; i++)
		if (req->values[i] == v)
			return true;
	return false;
}

/* Gt/Lt: both the label value and the single requirement value must parse. */
static bool compare_matches(const struct sx_requirement *req, bool has, sx_str value)
{
	int64_t lv, rv;

	if (!has || req->nvalues != 1 || !parse_int64(value, &lv) ||
	    !parse_int64(req->values[0], &rv))
		return false;
	return req->op == SX_OP_GT ? lv > rv : lv < rv;
}

/* req given the lookup of its key: has, and the value when has. */
static bool requirement_holds(const struct sx_requirement *req, bool has, sx_str value)
{
	switch (req->op) {
	case SX_OP_IN:
		return has && values_contain(req, value);
	case SX_OP_NOT_IN:
		/* An absent key satisfies NotIn. */
		return req->nvalues > 0 && (!has || !values_contain(req, value));
	case SX_OP_EXISTS:
		return has;
	case SX_OP_DOES_NOT_EXIST:
		return !has;
	case SX_OP_GT:
	case SX_OP_LT:
		return compare_matches(req, has, value);
	case SX_OP_EQUALS:
		return has && req->nvalues >= 1 && req->values[0] == value;
	default:
		return false;
	}
}

bool sx_requirement_matches(const struct sx_requirement *req, const struct sx_labels *labels)
{
	sx_str value = SX_STR_EMPTY;
	bool has;

	if (!req)
		return false;
	has = sx_labels_get(labels, req->key, &value);
	return requirement_holds(req, has, value);
}

bool sx_node_requirement_matches(const struct sx_requirement *req, const struct sx_node *node)
{
	sx_str value = SX_STR_EMPTY;
	bool has;

	if (!req || !node)
		return false;
	has = sx_node_label(node, req->key, &value);
	return requirement_holds(req, has, value);
}

bool sx_selector_matches(const struct sx_label_selector *sel, const struct sx_labels *labels)
{
	if (!sel)
		return false;
	for (uint32_t i = 0; i < sel->nreqs; i++)
		if (!sx_requirement_matches(&sel->reqs[i], labels))
			return false;
	return true;
}

/* A NULL map is treated as empty (matches everything). */
bool sx_map_selector_matches(const struct sx_labels *selector, const struct sx_labels *labels)
{
	if (!selector || !selector->items)
		return true;
	for (uint32_t i = 0; i < selector->n; i++) {
		sx_str v;

		if (!sx_labels_get(labels, selector->items[i].key, &v) ||
		    v != selector->items[i].value)
			return false;
	}
	return true;
}

/* matchFields: only metadata.name, In/NotIn, exactly one value. */
static bool field_matches(const struct sx_requirement *req, const struct sx_node *node)
{
	if (req->key != SX_S_METADATA_NAME || req->nvalues != 1)
		return false;
	if (req->op == SX_OP_IN)
		return node->name_id == req->values[0];
	if (req->op == SX_OP_NOT_IN)
		return node->name_id != req->values[0];
	return false;
}

bool sx_node_selector_term_matches(const struct sx_node_selector_term *term,
				   const struct sx_node *node)
{
	if (!term || !node || (term->nexprs == 0 && term->nfields == 0))
		return false;
	for (uint32_t i = 0; i < term->nexprs; i++)
		if (!sx_node_requirement_matches(&term->exprs[i], node))
			return false;
	for (uint32_t i = 0; i < term->nfields; i++)
		if (!field_matches(&term->fields[i], node))
			return false;
	return true;
}

/* sel == NULL means "no node selector" and matches every node (as a nil
 * required affinity or a PV without nodeAffinity upstream); a selector
 * with no terms matches nothing. */
bool sx_node_selector_matches(const struct sx_node_selector *sel, const struct sx_node *node)
{
	if (!sel)
		return true;
	for (uint32_t i = 0; i < sel->nterms; i++)
		if (sx_node_selector_term_matches(&sel->terms[i], node))
			return true;
	return false;
}

bool sx_pod_matches_node_selector_and_affinity(const struct sx_pod *pod, const struct sx_node *node)
{
	const struct sx_node_affinity *na;

	if (!pod || !node)
		return false;
	if (!sx_map_selector_matches(&pod->node_selector, &node->meta.labels))
		return false;
	na = pod->affinity ? pod->affinity->node_affinity : NULL;
	if (na && na->required)
		return sx_node_selector_matches(na->required, node);
	return true;
}

/* content.IsDecimalInteger then strconv.ParseInt(s, 10, 64): an optional
 * '-', then "0" or digits without a leading zero, within int64. */
static bool decimal_int64(const char *s, int64_t *out)
{
	const char *d = *s == '-' ? s + 1 : s;
	int64_t v = 0;
	bool neg = *s == '-';

	if (*d == '\0' || (d[0] == '0' && d[1] != '\0'))
		return false;
	for (; *d; d++) {
		int digit;

		if (*d < '0' || *d > '9')
			return false;
		digit = *d - '0';
		if (!neg && v > (INT64_MAX - digit) / 10)
			return false;
		if (neg && v < (INT64_MIN + digit) / 10)
			return false;
		v = v * 10 + (neg ? -digit : digit);
	}
	*out = v;
	return true;
}

/* v1.Toleration.ToleratesTaint: an empty effect or key is a wildcard;
 * Equal (the default) compares values, Exists ignores them; Lt and Gt
 * (with compare) compare the taint's value with the toleration's as
 * decimal int64s: Lt tolerates a smaller taint value, Gt a larger one
 * (compareNumericValues); a value that is no such integer tolerates
 * nothing. */
bool sx_toleration_tolerates_ops(const struct sx_toleration *tol, const struct sx_taint *taint,
				 bool compare)
{
	int64_t tv, nv;

	if (!tol || !taint)
		return false;
	if (tol->effect != SX_EFFECT_NONE && tol->effect != taint->effect)
		return false;
	if (tol->key != SX_STR_EMPTY && tol->key != taint->key)
		return false;
	switch (tol->op) {
	case SX_TOL_EQUAL:
		return tol->value == taint->value;
	case SX_TOL_EXISTS:
		return true;
	case SX_TOL_LT:
	case SX_TOL_GT:
		if (!compare || !decimal_int64(sx_str_get(tol->value), &tv) ||
		    !decimal_int64(sx_str_get(taint->value), &nv))
			return false;
		return tol->op == SX_TOL_LT ? nv < tv : nv > tv;
	default:
		return false;
	}
}

bool sx_toleration_tolerates(const struct sx_toleration *tol, const struct sx_taint *taint)
{
	return sx_toleration_tolerates_ops(tol, taint, false);
}

bool sx_tolerations_tolerate_ops(const struct sx_toleration *tols, uint32_t ntols,
				 const struct sx_taint *taint, bool compare)
{
	for (uint32_t i = 0; i < ntols; i++)
		if (sx_toleration_tolerates_ops(&tols[i], taint, compare))
			return true;
	return false;
}

bool sx_tolerations_tolerate(const struct sx_toleration *tols, uint32_t ntols,
			     const struct sx_taint *taint)
{
	return sx_tolerations_tolerate_ops(tols, ntols, taint, false);
}

/* effect_mask 0 means the Filter default: NoSchedule and NoExecute. */
const struct sx_taint *sx_find_untolerated_taint_ops(const struct sx_taint *taints,
						     uint32_t ntaints,
						     const struct sx_toleration *tols,
						     uint32_t ntols, unsigned effect_mask,
						     bool compare)
{
	if (effect_mask == 0)
		effect_mask = (1u << SX_EFFECT_NO_SCHEDULE) | (1u << SX_EFFECT_NO_EXECUTE);
	for (uint32_t i = 0; i < ntaints; i++) {
		const struct sx_taint *t = &taints[i];

		if (t->effect >= 32 || !(effect_mask & (1u << t->effect)))
			continue;
		if (!sx_tolerations_tolerate_ops(tols, ntols, t, compare))
			return t;
	}
	return NULL;
}

const struct sx_taint *sx_find_untolerated_taint(const struct sx_taint *taints, uint32_t ntaints,
						 const struct sx_toleration *tols, uint32_t ntols,
						 unsigned effect_mask)
{
	return sx_find_untolerated_taint_ops(taints, ntaints, tols, ntols, effect_mask, false);
}
