/* NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore): the
 * pod's nodeSelector and required node affinity, plus the scheduler-enforced
 * `addedAffinity` arg, must match the node; preferred terms (the pod's and
 * the arg's) add their weights to the score (upstream nodeaffinity/node_affinity.go).
 *
 * No cycle state: Filter and Score read the (immutable) pod directly, which
 * is what upstream's fallback does when PreFilter/PreScore did not run. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/decode.h"
#include "schedext/plugin.h"
#include "schedext/plugin_args.h"
#include "schedext/selector.h"
#include "schedext/vec.h"

#define REASON_POD	"node(s) didn't match Pod's node affinity/selector"
#define REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define REASON_CONFLICT "pod affinity terms conflict"
#define NAME		"NodeAffinity"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_enforced =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_ENFORCED);
static struct sx_status reject_pod_affinity =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_POD);

/* Plugin instance: the parsed addedAffinity (NULL when not configured). */
struct node_affinity {
	struct sx_node_affinity *added;
	char *added_json; /* addedAffinity as given, for /configz (no defaults apply) */
};

/* ---------- term validation (component-helpers' parse errors) ---------- */

static bool parse_int64(sx_str s)
{
	const char *p = sx_str_get(s);
	char *end;

	if (*p == '\0')
		return false;
	errno = 0;
	(void)strtoll(p, &end, 10);
	return errno == 0 && *end == '\0';
}

/* Kubernetes label value: empty, or at most 63 chars of [A-Za-z0-9-_.]
 * starting and ending alphanumeric. */
static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool valid_name_part(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static bool valid_label_value(sx_str v)
{
	size_t n = sx_str_len(v);

	return n == 0 || valid_name_part(sx_str_get(v), n, 63);
}

/* Qualified name: [prefix/]name, prefix a DNS subdomain (lower case). */
static bool valid_label_key(sx_str k)
{
	const char *s = sx_str_get(k), *slash = strchr(s, '/');
	size_t n = sx_str_len(k);

	if (!slash)
		return valid_name_part(s, n, 63);
	size_t plen = (size_t)(slash - s);
	if (plen == 0 || plen > 253)
		return false;
	for (size_t i = 0; i < plen; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return false;
	}
	return valid_name_part(slash + 1, n - plen - 1, 63);
}

/* Why a requirement cannot be parsed into a selector, or NULL when fine;
 * *field names the offending member. */
static const char *requirement_error(const struct sx_requirement *r, bool field, const char **what)
{
	*what = "values";
	if (field && r->key != SX_S_METADATA_NAME) {
		*what = "key";
		return "Invalid value: not a supported field selector key";
	}
	if (!field && !valid_label_key(r->key)) {
		*what = "key";
		return "Invalid value: name part must consist of alphanumeric characters, '-', '_' "
		       "or '.', and must start and end with an alphanumeric character";
	}
	for (uint32_t i = 0; !field && r->op != SX_OP_GT && r->op != SX_OP_LT && i < r->nvalues;
	     i++)
		if (!valid_label_value(r->values[i])) {
			*what = "values";
			return "Invalid value: a valid label must be an empty string or consist of "
			       "alphanumeric characters, '-', '_' or '.', and must start and end "
			       "with an alphanumeric character";
		}
	switch (r->op) {
	case SX_OP_IN:
	case SX_OP_NOT_IN:
		if (field && r->nvalues != 1)
			return "Invalid value: must have one element";
		if (r->nvalues == 0)
			return "Invalid value: for 'in', 'notin' operators, values set can't be "
			       "empty";
		return NULL;
	case SX_OP_EXISTS:
	case SX_OP_DOES_NOT_EXIST:
		if (field)
			break;
		if (r->nvalues != 0)
			return "Invalid value: values set must be empty for exists and does not "
			       "exist";
		return NULL;
	case SX_OP_GT:
	case SX_OP_LT:
		if (field)
			break;
		if (r->nvalues != 1)
			return "Invalid value: for 'Gt', 'Lt' operators, exactly one value is "
			       "required";
		if (!parse_int64(r->values[0])) {
			*what = "values[0]";
			return "Invalid value: for 'Gt', 'Lt' operators, the value must be an "
			       "integer";
		}
		return NULL;
	default:
		break;
	}
	*what = "operator";
	return "Unsupported value";
}

static bool reqs_valid(const struct sx_requirement *reqs, uint32_t n, bool field,
		       struct sx_error *err)
{
	const char *why, *what;

	for (uint32_t i = 0; i < n; i++) {
		why = requirement_error(&reqs[i], field, &what);
		if (!why)
			continue;
		sx_error_set(err, SX_EINVAL, "%s", why);
		sx_error_prefix(err, what);
		sx_error_prefixf(err, "[%u]", i);
		sx_error_prefix(err, field ? "matchFields" : "matchExpressions");
		return false;
	}
	return true;
}

/* Fills err (path relative to the term) for the first invalid requirement
 * of a term; returns false then. */
static bool term_valid(const struct sx_node_selector_term *t, struct sx_error *err)
{
	return reqs_valid(t->exprs, t->nexprs, false, err) &&
	       reqs_valid(t->fields, t->nfields, true, err);
}

static bool term_empty(const struct sx_node_selector_term *t)
{
	return t->nexprs == 0 && t->nfields == 0;
}

/* Upstream NewPreferredSchedulingTerms: terms with weight 0 or an empty
 * preference are dropped, every other term must parse. */
static bool preferred_valid(const struct sx_node_affinity *na, struct sx_error *err)
{
	for (uint32_t i = 0; i < na->npreferred; i++) {
		const struct sx_preferred_scheduling_term *p = &na->preferred[i];
		if (p->weight == 0 || term_empty(&p->preference))
			continue;
		if (!term_valid(&p->preference, err)) {
			sx_error_prefix(err, "preference");
			sx_error_prefixf(err, "[%u]", i);
			return false;
		}
	}
	return true;
}

/* Upstream NewNodeSelector: every non-empty term must parse. */
static bool required_valid(const struct sx_node_selector *sel, struct sx_error *err)
{
	for (uint32_t i = 0; i < sel->nterms; i++) {
		if (term_empty(&sel->terms[i]))
			continue;
		if (!term_valid(&sel->terms[i], err)) {
			sx_error_prefixf(err, "[%u]", i);
			sx_error_prefix(err, "nodeSelectorTerms");
			return false;
		}
	}
	return true;
}

/* ---------- args ---------- */

/* addedAffinity, a NodeAffinity, to its typed decoder (SX_ARG_DECODE). */
static int decode_added(const struct cJSON *v, void *field, struct sx_error *err)
{
	struct sx_node_affinity **na = field;

	*na = sx_decode_node_affinity(v, err);
	return *na ? 0 : err->code ? err->code : SX_EINVAL;
}

static void release_added(void *field)
{
	struct sx_node_affinity **na = field;

	sx_node_affinity_free(*na);
	*na = NULL;
}

static const struct sx_arg node_affinity_fields[] = {
	{.name = "addedAffinity",
	 .type = SX_ARG_DECODE,
	 .offset = offsetof(struct node_affinity, added),
	 .decode = decode_added,
	 .release = release_added},
};

static void *init_node_affinity(const struct cJSON *args, struct sx_handle *h, struct sx_error *err)
{
	struct node_affinity *self = sx_calloc(1, sizeof(*self));
	struct sx_arg_errors e = {0};

	if (!self) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (sx_args_read(args, node_affinity_fields, 1, self, &e, err) < 0)
		goto out_free;
	if (!self->added)
		return self;
	self->added_json = sx_args_raw(args, "addedAffinity");
	if (!self->added_json) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		goto out_free;
	}
	if (self->added->required && !required_valid(self->added->required, err)) {
		sx_error_prefix(err,
				"addedAffinity.requiredDuringSchedulingIgnoredDuringExecution");
		goto out_free;
	}
	if (!preferred_valid(self->added, err)) {
		sx_error_prefix(err,
				"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution");
		goto out_free;
	}
	return self;
out_free:
	sx_args_free(node_affinity_fields, 1, self);
	free(self->added_json);
	free(self);
	return NULL;
}

static void destroy_node_affinity(void *p)
{
	struct node_affinity *self = p;

	if (!self)
		return;
	sx_node_affinity_free(self->added);
	free(self->added_json);
	free(self);
}

static void write_args_node_affinity(const void *p, struct sx_jw *w)
{
	const struct node_affinity *self = p;

	/* added_json: the args' addedAffinity as cJSON printed it at init */
	if (self->added_json) {
		sx_jw_key(w, "addedAffinity");
		sx_jw_raw(w, self->added_json, strlen(self->added_json));
	}
}

/* ---------- PreFilter / Filter ---------- */

static const struct sx_node_selector *pod_required(const struct sx_pod *pod)
{
	if (!pod->affinity || !pod->affinity->node_affinity)
		return NULL;
	return pod->affinity->node_affinity->required;
}

/* A growable list of interned node names. */
struct names {
	uint32_t n, cap;
	sx_str *v;
};

static bool names_has(const struct names *s, sx_str x)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return true;
	return false;
}

static int names_add(struct names *s, sx_str x)
{
	if (names_has(s, x))
		return 0;
	if (sx_vec_reserve(s->v, s->cap, s->n + 1, 8) < 0)
		return SX_ENOMEM;
	s->v[s->n++] = x;
	return 0;
}

/* Names a term pins the pod to: the intersection of its `metadata.name In`
 * matchFields. Returns false when the term has no such field (any node may
 * match it). */
static bool term_node_names(const struct sx_node_selector_term *t, struct names *out, int *rc)
{
	bool found = false;

	out->n = 0;
	for (uint32_t i = 0; i < t->nfields && *rc == 0; i++) {
		const struct sx_requirement *r = &t->fields[i];
		if (r->key != SX_S_METADATA_NAME || r->op != SX_OP_IN)
			continue;
		if (!found) {
			for (uint32_t k = 0; k < r->nvalues && *rc == 0; k++)
				*rc = names_add(out, r->values[k]);
			found = true;
			continue;
		}
		uint32_t keep = 0; /* intersect in place */
		for (uint32_t k = 0; k < out->n; k++) {
			bool in = false;
			for (uint32_t m = 0; m < r->nvalues && !in; m++)
				in = r->values[m] == out->v[k];
			if (in)
				out->v[keep++] = out->v[k];
		}
		out->n = keep;
	}
	return found;
}

/* Union over terms of their pinned names. Returns 1 with *all set when the
 * pod is pinned to those names, 0 when some term leaves every node
 * possible, negative on OOM. */
static int pinned_names(const struct sx_node_selector *sel, struct names *all)
{
	struct names term = {0};
	int rc = 0;

	for (uint32_t i = 0; i < sel->nterms; i++) {
		if (!term_node_names(&sel->terms[i], &term, &rc) && rc == 0) {
			free(term.v);
			return 0;
		}
		for (uint32_t k = 0; k < term.n && rc == 0; k++)
			rc = names_add(all, term.v[k]);
		if (rc < 0)
			break;
	}
	free(term.v);
	return rc < 0 ? rc : 1;
}

static struct sx_status *pre_filter_node_affinity(void *p, struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  struct sx_node_set **result)
{
	const struct node_affinity *self = p;
	const struct sx_node_selector *req = pod_required(pod);
	bool added_req = self && self->added && self->added->required;
	struct names all = {0};
	struct sx_node_set *set;
	int rc;

	if (!req && !added_req && pod->node_selector.n == 0)
		return sx_status_new(SX_SKIP, NULL);
	if (!req || req->nterms == 0)
		return NULL;
	rc = pinned_names(req, &all);
	if (rc <= 0) {
		free(all.v);
		return rc < 0 ? sx_status_oom() : NULL;
	}
	if (all.n == 0) {
		free(all.v);
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT);
	}
	set = malloc(sizeof(*set));
	if (!set) {
		free(all.v);
		return sx_status_oom();
	}
	set->n = all.n;
	set->names = all.v; /* the caller frees names, then the set */
	*result = set;
	return NULL;
}

/* Upstream GetRequiredNodeAffinity(pod).Match: nodeSelector, then the
 * required terms ORed, where a term that fails to parse never matches
 * (parse errors are ignored for backwards compatibility). */
static bool pod_matches(const struct sx_pod *pod, const struct sx_node *node)
{
	const struct sx_node_selector *req = pod_required(pod);
	struct sx_error err;

	if (!sx_map_selector_matches(&pod->node_selector, &node->meta.labels))
		return false;
	if (!req)
		return true;
	for (uint32_t i = 0; i < req->nterms; i++) {
		const struct sx_node_selector_term *t = &req->terms[i];
		if (!term_empty(t) && term_valid(t, &err) && sx_node_selector_term_matches(t, node))
			return true;
	}
	return false;
}

static struct sx_status *filter_node_affinity(void *p, const struct sx_cycle_state *cs,
					      const struct sx_pod *pod,
					      const struct sx_node_info *ni)
{
	const struct node_affinity *self = p;

	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	if (self && self->added && self->added->required &&
	    !sx_node_selector_matches(self->added->required, ni->node))
		return &reject_enforced;
	if (!pod_matches(pod, ni->node))
		return &reject_pod_affinity;
	return NULL;
}

/* ---------- the numbers behind a rejection ---------- */

/* The first requirement of a term the node fails (a matchFields one sets
 * *field), or NULL when the term matches. */
static const struct sx_requirement *failing_requirement(const struct sx_node_selector_term *t,
							const struct sx_node *node, bool *field)
{
	struct sx_node_selector_term one = {0};

	for (uint32_t i = 0; i < t->nexprs; i++)
		if (!sx_node_requirement_matches(&t->exprs[i], node)) {
			*field = false;
			return &t->exprs[i];
		}
	for (uint32_t i = 0; i < t->nfields; i++) {
		one.nfields = 1;
		one.fields = &t->fields[i];
		if (!sx_node_selector_term_matches(&one, node)) {
			*field = true;
			return &t->fields[i];
		}
	}
	return NULL;
}

/* "node has no accelerator label", "node has accelerator=h100", or for a
 * matchFields requirement "node is worker-a1"; sets the JSON members. */
static void explain_requirement(struct sx_detail *d, const char *where,
				const struct sx_requirement *r, bool field,
				const struct sx_node *node)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
	char req[400];
	sx_str v = SX_STR_EMPTY;
	bool has = field || sx_node_label(node, r->key, &v);

	if (field)
		v = node->name_id;
	sx_requirement_string(r, req, sizeof(req));
	if (field)
		sx_detail_text(d, "%s: %s, node is %s", where, req, sx_str_get(v));
	else if (has)
		sx_detail_text(d, "%s: %s, node has %s=%s", where, req, sx_str_get(r->key),
			       sx_str_get(v));
	else
		sx_detail_text(d, "%s: %s, node has no %s label", where, req, sx_str_get(r->key));
	if (d->n)
		return; /* JSON: the first failure only */
	sx_detail_str(d, "failed", where);
	sx_detail_str(d, "key", sx_str_get(r->key));
	sx_detail_str(d, "operator", r->op < 6 ? ops[r->op] : "In");
	if (r->op != SX_OP_EXISTS && r->op != SX_OP_DOES_NOT_EXIST)
		sx_detail_strs(d, "values", r->values, r->nvalues);
	sx_detail_str(d, "nodeValue", has ? sx_str_get(v) : NULL);
}

#define TEXT_TERMS 4  /* terms the text phrase names */
#define JSON_TERMS 16 /* terms the "terms" member lists */

/* One element of "terms": the term's index, the expression the node
 * fails ("matchExpressions[k]" or "matchFields[k]") with its key,
 * operator and values and what the node has (its label value, its name
 * for matchFields, null without the label); or "empty"/"invalid". */
static void term_json(struct sx_jw *w, uint32_t i, const struct sx_node_selector_term *t,
		      const struct sx_node *node)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
	struct sx_error err;
	bool field = false;
	const struct sx_requirement *r = failing_requirement(t, node, &field);
	sx_str v = SX_STR_EMPTY;
	bool has;

	sx_jw_object(w);
	sx_jw_kint(w, "term", i);
	if (term_empty(t) || !term_valid(t, &err) || !r) {
		sx_jw_kbool(w, term_empty(t) ? "empty" : "invalid", true);
		sx_jw_end_object(w);
		return;
	}
	sx_jw_key(w, "expression");
	sx_jw_strf(w, "%s[%u]", field ? "matchFields" : "matchExpressions",
		   (unsigned)(field ? r - t->fields : r - t->exprs));
	sx_jw_kstr(w, "key", sx_str_get(r->key));
	sx_jw_kstr(w, "operator", r->op < 6 ? ops[r->op] : "In");
	if (r->op != SX_OP_EXISTS && r->op != SX_OP_DOES_NOT_EXIST) {
		sx_jw_karray(w, "values");
		for (uint32_t k = 0; k < r->nvalues; k++)
			sx_jw_str(w, sx_str_get(r->values[k]));
		sx_jw_end_array(w);
	}
	has = field || sx_node_label(node, r->key, &v);
	sx_jw_key(w, "nodeValue");
	sx_jw_str_or_null(w, !has ? NULL : sx_str_get(field ? node->name_id : v));
	sx_jw_end_object(w);
}

/* "terms": every term of sel (up to JSON_TERMS; "moreTerms" counts the
 * rest) with the expression the node fails in it. */
static void terms_json(struct sx_detail *d, const struct sx_node_selector *sel,
		       const struct sx_node *node)
{
	struct sx_buf b;
	struct sx_jw w;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_array(&w);
	for (uint32_t i = 0; i < sel->nterms && i < JSON_TERMS; i++)
		term_json(&w, i, &sel->terms[i], node);
	sx_jw_end_array(&w);
	sx_detail_json(d, "terms", b.failed ? NULL : b.data, b.failed ? 0 : b.len);
	sx_buf_free(&b);
	if (sel->nterms > JSON_TERMS)
		sx_detail_int(d, "moreTerms", sel->nterms - JSON_TERMS);
}

/* Each term of sel (ORed: the node failed every one) with its first
 * failing requirement: the text names TEXT_TERMS of them; the JSON keeps
 * the first failure's members and lists every term in "terms"
 * (upstream nodeaffinity.RequiredNodeAffinity.Match: any term matching
 * admits the node). */
static void explain_terms(struct sx_detail *d, const char *what, const struct sx_node_selector *sel,
			  const struct sx_node *node)
{
	struct sx_error err;
	char where[96];
	bool field;

	for (uint32_t i = 0; i < sel->nterms && i < TEXT_TERMS; i++) {
		const struct sx_node_selector_term *t = &sel->terms[i];
		const struct sx_requirement *r = failing_requirement(t, node, &field);

		snprintf(where, sizeof(where), "%s term %u", what, i);
		if (term_empty(t) || !term_valid(t, &err))
			sx_detail_text(d, "%s: %s", where, term_empty(t) ? "empty" : "invalid");
		else if (r)
			explain_requirement(d, where, r, field, node);
	}
	if (sel->nterms > TEXT_TERMS)
		sx_detail_text(d, "%u more term(s)", sel->nterms - TEXT_TERMS);
	terms_json(d, sel, node);
}

/* "terms" of the conflict: every term (up to JSON_TERMS) with the value
 * sets of its metadata.name In requirements ("names"), whose
 * intersection is empty in each term (upstream NodeAffinity.PreFilter
 * intersects them within a term and unions the terms). */
static void conflict_terms_json(struct sx_detail *d, const struct sx_node_selector *sel)
{
	struct sx_buf b;
	struct sx_jw w;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_array(&w);
	for (uint32_t i = 0; i < sel->nterms && i < JSON_TERMS; i++) {
		const struct sx_node_selector_term *t = &sel->terms[i];
		sx_jw_object(&w);
		sx_jw_kint(&w, "term", i);
		sx_jw_karray(&w, "names");
		for (uint32_t k = 0; k < t->nfields; k++) {
			const struct sx_requirement *r = &t->fields[k];
			if (r->key != SX_S_METADATA_NAME || r->op != SX_OP_IN)
				continue;
			sx_jw_array(&w);
			for (uint32_t v = 0; v < r->nvalues; v++)
				sx_jw_str(&w, sx_str_get(r->values[v]));
			sx_jw_end_array(&w);
		}
		sx_jw_end_array(&w);
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_detail_json(d, "terms", b.failed ? NULL : b.data, b.failed ? 0 : b.len);
	sx_buf_free(&b);
	if (sel->nterms > JSON_TERMS)
		sx_detail_int(d, "moreTerms", sel->nterms - JSON_TERMS);
}

/* PreFilter's "pod affinity terms conflict": each required term's
 * metadata.name In requirements, which name no node in common (the JSON
 * members: the first requirement, and every term in "terms"). */
static void explain_conflict(struct sx_detail *d, const struct sx_node_selector *sel)
{
	char req[400], term[600];

	for (uint32_t i = 0; sel && i < sel->nterms && i < 4; i++) {
		const struct sx_node_selector_term *t = &sel->terms[i];
		size_t n = 0;

		term[0] = '\0';
		for (uint32_t k = 0; k < t->nfields && n < sizeof(term); k++) {
			const struct sx_requirement *r = &t->fields[k];
			if (r->key != SX_S_METADATA_NAME || r->op != SX_OP_IN)
				continue;
			sx_requirement_string(r, req, sizeof(req));
			n += (size_t)snprintf(term + n, sizeof(term) - n, "%s%s", n ? " and " : "",
					      req);
			if (d->n)
				continue;
			snprintf(req, sizeof(req), "nodeAffinity term %u", i);
			sx_detail_str(d, "failed", req);
			sx_detail_str(d, "key", sx_str_get(r->key));
			sx_detail_str(d, "operator", "In");
			sx_detail_strs(d, "values", r->values, r->nvalues);
		}
		if (term[0])
			sx_detail_text(
				d, "nodeAffinity term %u: matchFields %s name no node in common", i,
				term);
	}
	if (sel && sel->nterms > 4)
		sx_detail_text(d, "%u more term(s)", sel->nterms - 4);
	if (sel)
		conflict_terms_json(d, sel);
}

/* Which nodeSelector entry or required term the node failed (upstream
 * GetRequiredNodeAffinity(pod).Match checks the same, in this order). */
static void explain_node_affinity(void *p, const struct sx_cycle_state *cs,
				  const struct sx_pod *pod, const struct sx_node_info *ni,
				  const struct sx_status *st, struct sx_detail *d)
{
	const struct node_affinity *self = p;
	const struct sx_node_selector *req = pod_required(pod);
	const struct sx_node *node = ni ? ni->node : NULL;

	SX_UNUSED(cs);
	if (!ni && st->nreasons && strcmp(st->reasons[0], REASON_CONFLICT) == 0)
		explain_conflict(d, req);
	if (!node || !st->nreasons)
		return;
	if (strcmp(st->reasons[0], REASON_ENFORCED) == 0) {
		if (self && self->added && self->added->required)
			explain_terms(d, "addedAffinity", self->added->required, node);
		return;
	}
	if (strcmp(st->reasons[0], REASON_POD) != 0)
		return;
	for (uint32_t i = 0; i < pod->node_selector.n; i++) {
		const struct sx_label *l = &pod->node_selector.items[i];
		struct sx_requirement r = {.key = l->key,
					   .op = SX_OP_EQUALS,
					   .nvalues = 1,
					   .values = (sx_str *)&l->value};
		if (!sx_node_requirement_matches(&r, node)) {
			explain_requirement(d, "nodeSelector", &r, false, node);
			return;
		}
	}
	if (req)
		explain_terms(d, "nodeAffinity", req, node);
}

/* ---------- PreScore / Score ---------- */

static const struct sx_node_affinity *pod_node_affinity(const struct sx_pod *pod)
{
	return pod->affinity ? pod->affinity->node_affinity : NULL;
}

/* Skip when neither the pod nor addedAffinity has preferred terms; Error
 * when a pod's preferred term cannot be parsed (fails the cycle, as
 * upstream). */
static struct sx_status *pre_score_node_affinity(void *p, struct sx_cycle_state *cs,
						 const struct sx_pod *pod,
						 struct sx_node_info *const *nodes, uint32_t n)
{
	const struct node_affinity *self = p;
	const struct sx_node_affinity *na = pod_node_affinity(pod);
	struct sx_error err = {0};
	char buf[600];

	if (na && !preferred_valid(na, &err)) {
		return sx_status_new(SX_ERROR, "%s", sx_error_string(&err, buf, sizeof(buf)));
	}
	if ((!na || na->npreferred == 0) && !(self && self->added && self->added->npreferred))
		return sx_status_new(SX_SKIP, NULL);
	return NULL;
}

/* Σ weight of the preferred terms that match. Empty terms match nothing
 * and weight-0 terms add nothing, which is why upstream drops them. */
static int64_t preferred_score(const struct sx_node_affinity *na, const struct sx_node *node)
{
	int64_t sum = 0;

	for (uint32_t i = 0; i < na->npreferred; i++) {
		const struct sx_preferred_scheduling_term *t = &na->preferred[i];
		if (t->weight != 0 && !term_empty(&t->preference) &&
		    sx_node_selector_term_matches(&t->preference, node))
			sum += t->weight;
	}
	return sum;
}

static struct sx_status *score_node_affinity(void *p, const struct sx_cycle_state *cs,
					     const struct sx_pod *pod,
					     const struct sx_node_info *ni, int64_t *score)
{
	const struct node_affinity *self = p;
	const struct sx_node_affinity *na = pod_node_affinity(pod);
	int64_t sum = 0;

	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	if (self && self->added)
		sum += preferred_score(self->added, ni->node);
	if (na)
		sum += preferred_score(na, ni->node);
	*score = sum;
	return NULL;
}

static struct sx_status *normalize_score_node_affinity(void *self, const struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       struct sx_node_score *scores, uint32_t n)
{
	sx_default_normalize_score(SX_MAX_NODE_SCORE, false, scores, n);
	return NULL;
}

/* ---------- queueing hints ---------- */

/* isSchedulableAfterNodeChange: the node (added, or whose labels changed)
 * matches the enforced and the pod's required affinity, and did not match
 * before. */
static enum sx_hint hint_node_node_affinity(void *p, const struct sx_pod *pod, const void *old_obj,
					    const void *new_obj)
{
	const struct node_affinity *self = p;
	const struct sx_node *o = old_obj, *n = new_obj;

	if (!n)
		return SX_QUEUE_SKIP;
	if (self && self->added && self->added->required &&
	    !sx_node_selector_matches(self->added->required, n))
		return SX_QUEUE_SKIP;
	if (!pod_matches(pod, n))
		return SX_QUEUE_SKIP;
	return !o || !pod_matches(pod, o) ? SX_QUEUE : SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_node_affinity[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL, hint_node_node_affinity},
	SX_EVENTS_END,
};

/* NodeAffinity.SignPod: the node affinity and the node selector
 * (node_affinity.go). */
static struct sx_status *sign_node_affinity(void *self, const struct sx_pod *pod, uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_NODE_AFFINITY | SX_SIGNER_NODE_SELECTOR;
	return NULL;
}

const struct sx_plugin sx_plugin_node_affinity = {
	.name = NAME,
	.init = init_node_affinity,
	.destroy = destroy_node_affinity,
	.args_kind = "NodeAffinityArgs",
	.write_args = write_args_node_affinity,
	.pre_filter = pre_filter_node_affinity,
	.filter = filter_node_affinity,
	.pre_score = pre_score_node_affinity,
	.score = score_node_affinity,
	.normalize_score = normalize_score_node_affinity,
	.events = events_node_affinity,
	.explain = explain_node_affinity,
	.sign = sign_node_affinity,
};
