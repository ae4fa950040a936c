/* sx_dra_allocate(): request validation and setup before the search
 * (dra_alloc.c), then the allocation results: configs and node selector,
 * as upstream's stable allocator builds them. */
#include "dra_alloc_int.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct alloc *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct alloc *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, a->errlen, fmt, ap);
	va_end(ap);
	return SX_DRA_FATAL;
}

/* sx__dra_amem; zeroed only when zero (scratch is not: for arrays whose
 * entries are written before they are read, like the stack). */
static void *amem_z(struct alloc *a, size_t n, size_t size, bool zero)
{
	size_t bytes = (n ? n : 1) * size, at = (a->scratch_used + 15) & ~(size_t)15;
	void *p;

	if (a->scratch && at + bytes <= a->scratch_len) {
		a->scratch_used = at + bytes;
		return zero ? memset(a->scratch + at, 0, bytes) : a->scratch + at;
	}
	if (a->nmem == a->capmem) {
		uint32_t cap = a->capmem ? a->capmem * 2 : 16;
		void **m = realloc(a->mem, cap * sizeof(*m));

		if (!m)
			return NULL;
		a->mem = m;
		a->capmem = cap;
	}
	p = sx_calloc(n ? n : 1, size);
	if (p)
		a->mem[a->nmem++] = p;
	return p;
}

void *sx__dra_amem(struct alloc *a, size_t n, size_t size)
{
	return amem_z(a, n, size, true);
}

#define amem sx__dra_amem

static const char *kobj(struct alloc *a, uint32_t ci)
{
	return sx__dra_kobj(&a->claims[ci], a->kobj, sizeof(a->kobj));
}

static sx_str *intern_all(struct alloc *a, char *const *exprs, uint32_t n)
{
	sx_str *ids = amem(a, n, sizeof(*ids));

	for (uint32_t i = 0; ids && i < n; i++)
		ids[i] = exprs[i] ? sx_intern(exprs[i]) : SX_STR_EMPTY;
	return ids;
}

/* allocationMode All: every selectable device of every pool. */
static int collect_all(struct alloc *a, uint32_t ci, struct rdata *rd)
{
	const struct sx_dra_index *ix = a->env->index;
	uint32_t total = 0;

	for (uint32_t p = 0; p < a->npools; p++) {
		const struct pool *pl = &a->pools[p];

		if (pl->incomplete)
			return fail(a,
				    "claim %s, request %s: asks for all devices, but resource pool "
				    "%s/%s is currently being updated",
				    kobj(a, ci), rd->req->name, sx_str_get(pl->driver),
				    sx_str_get(pl->pool));
		if (pl->invalid)
			return fail(a,
				    "claim %s, request %s: asks for all devices, but resource pool "
				    "%s/%s is currently invalid",
				    kobj(a, ci), rd->req->name, sx_str_get(pl->driver),
				    sx_str_get(pl->pool));
		for (uint32_t k = 0; k < pl->nslices; k++)
			total += ix->slices[pl->slices[k]]->u.slice.ndevices;
	}
	rd->all = amem(a, total, sizeof(*rd->all));
	if (!rd->all)
		return fail(a, "out of memory");
	for (uint32_t p = 0; p < a->npools; p++)
		for (uint32_t k = 0; k < a->pools[p].nslices; k++) {
			uint32_t si = a->pools[p].slices[k];

			for (uint32_t d = 0; d < ix->slices[si]->u.slice.ndevices; d++) {
				struct devref dr = {ix->slices[si], si, d, p};
				int rc = sx__dra_selectable(a, ci, rd, dr);

				if (rc < 0)
					return rc;
				/* DRAConsumableCapacity: only devices with room
				 * (validateDeviceRequest) */
				if (rc && a->env->features.consumable)
					rc = sx__dra_capacity_fits(a, rd, dr);
				if (rc)
					rd->all[rd->nall++] = dr;
			}
		}
	rd->num_devices = (int)rd->nall;
	return 0;
}

/* validateDeviceRequest */
static int validate(struct alloc *a, uint32_t ci, struct rdata *rd)
{
	const struct sx_dra_exact *r = rd->req;

	for (uint32_t i = 0; i < r->nselectors; i++)
		if (!r->selectors[i])
			return fail(a,
				    "claim %s, request %s, selector #%u: CEL expression empty "
				    "(unsupported selector type?)",
				    kobj(a, ci), r->name, i);
	if (!a->env->features.admin_access && r->has_admin_access)
		return fail(a,
			    "claim %s, request %s: admin access is requested, but the feature is "
			    "disabled",
			    kobj(a, ci), r->name);
	if (!r->class_name || !*r->class_name)
		return fail(a,
			    "claim %s, request %s: missing device class name (unsupported request "
			    "type?)",
			    kobj(a, ci), r->name);
	rd->cls = a->env->get_class(a->env->class_ctx, r->class_name);
	if (!rd->cls)
		return fail(a,
			    "claim %s, request %s: could not retrieve device class %s: "
			    "deviceclass.resource.k8s.io \"%s\" not found",
			    kobj(a, ci), r->name, r->class_name, r->class_name);
	rd->class_ids = intern_all(a, rd->cls->u.cls.selectors, rd->cls->u.cls.nselectors);
	rd->req_ids = intern_all(a, r->selectors, r->nselectors);
	if (!rd->class_ids || !rd->req_ids)
		return fail(a, "out of memory");
	if (r->bad_mode)
		return fail(a, "claim %s, request %s: unsupported count mode %s", kobj(a, ci),
			    r->name, r->mode_name);
	if (r->mode == SX_DRA_ALL)
		return a->prep_mode ? 0 : collect_all(a, ci, rd);
	if (r->count > INT32_MAX)
		return fail(a, "claim %s, request %s: exact count %lld is too large", kobj(a, ci),
			    r->name, (long long)r->count);
	rd->num_devices = (int)r->count;
	return 0;
}

static int setup_request(struct alloc *a, uint32_t ci, uint32_t ri, int *min_devices)
{
	const struct sx_dra_request *req = &a->claims[ci].spec->requests[ri];
	struct rreq *rq = &a->reqs[ci][ri];
	int rc, min = INT32_MAX;

	rq->sub = req->nsub > 0;
	if (rq->sub && !a->env->features.prioritized_list)
		return fail(a,
			    "claim %s, request %s: has subrequests, but the DRAPrioritizedList "
			    "feature is disabled",
			    kobj(a, ci), req->name);
	if (!a->env->features.consumable) {
		if (req->has_exactly && req->exactly.has_capacity)
			return fail(a,
				    "claim %s, request %s: has capacity requests, but the "
				    "DRAConsumableCapacity feature is disabled",
				    kobj(a, ci), req->name);
		for (uint32_t s = 0; s < req->nsub; s++)
			if (req->first_available[s].has_capacity)
				return fail(
					a,
					"claim %s, subrequest %s: has capacity requests, but the "
					"DRAConsumableCapacity feature is disabled",
					kobj(a, ci), req->first_available[s].name);
	}
	rq->n = rq->sub ? req->nsub : 1;
	rq->rd = amem(a, rq->n, sizeof(*rq->rd));
	if (!rq->rd)
		return fail(a, "out of memory");
	for (uint32_t s = 0; s < rq->n; s++) {
		rq->rd[s].req = rq->sub ? &req->first_available[s] : &req->exactly;
		rq->rd[s].parent = rq->sub ? req : NULL;
		rc = validate(a, ci, &rq->rd[s]);
		if (rc < 0)
			return rc;
		if (rq->rd[s].num_devices < min)
			min = rq->rd[s].num_devices;
	}
	*min_devices += min;
	return 0;
}

/* Node-independent setup of claim ci (prep mode). On error the prep
 * records where it happened: a node reports it after the node-dependent
 * checks that upstream makes before that point. */
static int prep_claim(struct sx_dra_prep *p, uint32_t ci)
{
	struct alloc *a = &p->a;
	const struct sx_dra_claim_spec *spec = a->claims[ci].spec;
	int min = 0, rc;

	a->reqs[ci] = amem(a, spec->nrequests, sizeof(**a->reqs));
	a->cons[ci] = amem(a, spec->nconstraints, sizeof(**a->cons));
	if (!a->reqs[ci] || !a->cons[ci])
		return fail(a, "out of memory");
	for (uint32_t ri = 0; ri < spec->nrequests; ri++) {
		rc = setup_request(a, ci, ri, &min);
		if (rc < 0) {
			p->err_req = ri;
			return rc;
		}
	}
	p->err_req = spec->nrequests;
	for (uint32_t i = 0; i < spec->nconstraints; i++) {
		if (!spec->constraints[i].match_attribute &&
		    (!spec->constraints[i].distinct_attribute || !a->env->features.consumable)) {
			p->err_constraint = true;
			return fail(a,
				    "claim %s, constraint #%u: empty constraint (unsupported "
				    "constraint type?)",
				    kobj(a, ci), i);
		}
		a->cons[ci][i].c = &spec->constraints[i];
	}
	a->ncons[ci] = spec->nconstraints;
	return 0;
}

/* Per node: copies claim ci's prepared requests, collects the devices of
 * allocationMode All, checks the claim limit; reports the prep's error
 * where upstream would meet it. */
static int node_claim(struct alloc *a, const struct sx_dra_prep *p, uint32_t ci)
{
	const struct sx_dra_claim_spec *spec = a->claims[ci].spec;
	uint32_t stop = ci == p->err_claim ? p->err_req : spec->nrequests;
	int min = 0, rc;

	a->reqs[ci] = amem(a, spec->nrequests, sizeof(**a->reqs));
	a->cons[ci] = amem(a, spec->nconstraints, sizeof(**a->cons));
	if (!a->reqs[ci] || !a->cons[ci])
		return fail(a, "out of memory");
	for (uint32_t ri = 0; ri < stop; ri++) {
		struct rreq *rq = &a->reqs[ci][ri];
		int m = INT32_MAX;

		*rq = p->a.reqs[ci][ri];
		rq->rd = amem(a, rq->n, sizeof(*rq->rd));
		if (!rq->rd)
			return fail(a, "out of memory");
		memcpy(rq->rd, p->a.reqs[ci][ri].rd, rq->n * sizeof(*rq->rd));
		for (uint32_t s = 0; s < rq->n; s++) {
			if (rq->rd[s].req->mode == SX_DRA_ALL && !rq->rd[s].req->bad_mode) {
				rc = collect_all(a, ci, &rq->rd[s]);
				if (rc < 0)
					return rc;
			}
			if (rq->rd[s].num_devices < m)
				m = rq->rd[s].num_devices;
		}
		min += m;
	}
	if (ci == p->err_claim && !p->err_constraint)
		return fail(a, "%s", p->err);
	if (min > SX_DRA_ALLOCATION_RESULTS_MAX)
		return fail(
			a, "claim %s: number of requested devices %d exceeds the claim limit of %d",
			kobj(a, ci), min, SX_DRA_ALLOCATION_RESULTS_MAX);
	if (ci == p->err_claim)
		return fail(a, "%s", p->err);
	memcpy(a->cons[ci], p->a.cons[ci], spec->nconstraints * sizeof(**a->cons));
	a->ncons[ci] = spec->nconstraints;
	return 0;
}

/* ---------- results ---------- */

static bool has_name(const char *const *names, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static const struct rdata *chosen(const struct alloc *a, uint32_t ci, uint32_t ri)
{
	const struct rreq *rq = &a->reqs[ci][ri];

	return &rq->rd[rq->sub ? rq->selected : 0];
}

static const char *request_name(struct alloc *a, const struct rdata *rd)
{
	char *s;
	size_t n;

	if (!rd->parent)
		return rd->req->name;
	n = strlen(rd->parent->name) + strlen(rd->req->name) + 2;
	s = amem(a, n, 1);
	if (s)
		snprintf(s, n, "%s/%s", rd->parent->name, rd->req->name);
	return s ? s : rd->req->name;
}

/* The request's name as stored in the output (a pick's buffer outlives this
 * call; the claim's own strings outlive the output). */
static const char *out_name(struct alloc *a, const struct sx_dra_claim_out *o,
			    const struct rdata *rd)
{
	const char *name = request_name(a, rd);

	if (!rd->parent)
		return name;
	for (uint32_t i = 0; i < o->npicks; i++)
		if (strcmp(o->picks[i].request, name) == 0)
			return o->picks[i].request;
	return rd->req->name;
}

static struct sx_dra_out_config *add_config(struct sx_dra_claim_out *o, uint8_t source,
					    const char *opaque)
{
	struct sx_dra_out_config *c = &o->config[o->nconfig++];

	memset(c, 0, sizeof(*c));
	c->source = source;
	c->opaque = opaque;
	return c;
}

static void add_request(struct sx_dra_out_config *c, const char *name)
{
	if (c->nrequests < SX_DRA_ALLOCATION_RESULTS_MAX)
		c->requests[c->nrequests++] = name;
}

static void claim_configs(struct alloc *a, uint32_t ci, struct sx_dra_claim_out *o)
{
	const struct sx_dra_claim_spec *spec = a->claims[ci].spec;

	for (uint32_t k = 0; k < spec->nconfig; k++) {
		const struct sx_dra_class_config *cc = &spec->config[k];
		const char *const *names = (const char *const *)cc->requests;

		if (cc->nrequests == 0) {
			add_config(o, SX_DRA_FROM_CLAIM, cc->opaque);
			continue;
		}
		for (uint32_t ri = 0; ri < spec->nrequests; ri++) {
			const struct rdata *rd = chosen(a, ci, ri);
			struct sx_dra_out_config *c;

			if (!has_name(names, cc->nrequests, spec->requests[ri].name) &&
			    !(rd->parent && has_name(names, cc->nrequests, request_name(a, rd))))
				continue;
			c = add_config(o, SX_DRA_FROM_CLAIM, cc->opaque);
			for (uint32_t i = 0; i < cc->nrequests; i++)
				add_request(c, cc->requests[i]);
		}
	}
}

static int build_configs(struct alloc *a, uint32_t ci, struct sx_dra_claim_out *o)
{
	const struct sx_dra_claim_spec *spec = a->claims[ci].spec;
	uint32_t cap = spec->nconfig * (spec->nrequests + 1) + 1;
	uint32_t start[SX_DRA_ALLOCATION_RESULTS_MAX * 4], end[SX_DRA_ALLOCATION_RESULTS_MAX * 4];
	const struct sx_dra_object *seen[SX_DRA_ALLOCATION_RESULTS_MAX * 4];
	uint32_t nseen = 0;

	for (uint32_t ri = 0; ri < spec->nrequests; ri++)
		cap += chosen(a, ci, ri)->cls->u.cls.nconfig;
	o->config = sx_calloc(cap, sizeof(*o->config));
	if (!o->config)
		return fail(a, "out of memory");
	for (uint32_t ri = 0; ri < spec->nrequests && ri < SX_DRA_ALLOCATION_RESULTS_MAX * 4;
	     ri++) {
		const struct rdata *rd = chosen(a, ci, ri);
		const char *name = out_name(a, o, rd);
		uint32_t s;

		for (s = 0; s < nseen && seen[s] != rd->cls; s++)
			;
		if (s < nseen) {
			for (uint32_t i = start[s]; i < end[s]; i++)
				add_request(&o->config[i], name);
			continue;
		}
		seen[nseen] = rd->cls;
		start[nseen] = o->nconfig;
		for (uint32_t i = 0; i < rd->cls->u.cls.nconfig; i++)
			add_request(
				add_config(o, SX_DRA_FROM_CLASS, rd->cls->u.cls.config[i].opaque),
				name);
		end[nseen++] = o->nconfig;
	}
	claim_configs(a, ci, o);
	return 0;
}

static bool same_requirement(const struct sx_requirement *x, const struct sx_requirement *y)
{
	if (x->key != y->key || x->op != y->op)
		return false;
	for (uint32_t i = 0; i < x->nvalues; i++) {
		uint32_t j;

		for (j = 0; j < y->nvalues && y->values[j] != x->values[i]; j++)
			;
		if (j == y->nvalues)
			return false;
	}
	for (uint32_t i = 0; i < y->nvalues; i++) {
		uint32_t j;

		for (j = 0; j < x->nvalues && x->values[j] != y->values[i]; j++)
			;
		if (j == x->nvalues)
			return false;
	}
	return true;
}

static void add_reqs(const struct sx_requirement *from, uint32_t n,
		     const struct sx_requirement **to, uint32_t *nto)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < *nto && !same_requirement(to[j], &from[i]); j++)
			;
		if (j == *nto && *nto < 16)
			to[(*nto)++] = &from[i];
	}
}

static int build_node_selector(struct alloc *a, uint32_t ci, struct sx_dra_claim_out *o)
{
	for (uint32_t i = 0; i < o->npicks; i++) {
		const struct sx_dra_slice *s = &o->picks[i].slice->u.slice;
		/* perDeviceNodeSelection: the device's own (createNodeSelector) */
		const struct sx_dra_device *dev = s->per_device ? o->picks[i].dev : NULL;
		sx_str node_name = dev ? dev->node_name : s->node_name;
		const struct sx_node_selector *sel = dev ? dev->node_selector : s->node_selector;

		/* bindsToNode (DRADeviceBindingConditions): this node only */
		if (node_name != SX_STR_EMPTY ||
		    (a->env->features.binding && o->picks[i].dev->binds_to_node && a->node)) {
			/* the node allocated for, as upstream's targetNodeName */
			o->nexprs = o->nfields = 0;
			o->node_name = a->node ? a->node->name_id : node_name;
			return 0;
		}
		if (!sel || sel->nterms == 0)
			continue;
		if (sel->nterms > 1)
			return fail(a,
				    "create NodeSelector for claim %s: unsupported "
				    "ResourceSlice.NodeSelector with %u terms",
				    a->claims[ci].name, sel->nterms);
		add_reqs(sel->terms[0].fields, sel->terms[0].nfields, o->fields, &o->nfields);
		add_reqs(sel->terms[0].exprs, sel->terms[0].nexprs, o->exprs, &o->nexprs);
	}
	return 0;
}

/* ---------- entry ---------- */

static void alloc_free(struct alloc *a)
{
	for (uint32_t i = 0; i < a->nmem; i++)
		free(a->mem[i]);
	free(a->mem);
}

/* Resets what a caller may read (picks[] beyond npicks are never read). */
static void out_reset(struct sx_dra_claim_out *out)
{
	out->npicks = out->nconfig = out->nexprs = out->nfields = 0;
	out->config = NULL;
	out->node_name = SX_STR_EMPTY;
}

void sx_dra_claim_out_clear(struct sx_dra_claim_out *out)
{
	free(out->config);
	out_reset(out);
}

static int alloc_arrays(struct alloc *a)
{
	a->reqs = amem(a, a->nclaims, sizeof(*a->reqs));
	a->cons = amem(a, a->nclaims, sizeof(*a->cons));
	a->ncons = amem(a, a->nclaims, sizeof(*a->ncons));
	/* each entry is written whole when pushed, read only below nstack */
	a->stack = amem_z(a, (size_t)a->nclaims * SX_DRA_ALLOCATION_RESULTS_MAX, sizeof(*a->stack),
			  false);
	return a->reqs && a->cons && a->ncons && a->stack ? 0 : fail(a, "out of memory");
}

struct sx_dra_prep *sx_dra_prepare(const struct sx_dra_alloc_env *env,
				   const struct sx_dra_claim_in *claims, uint32_t n)
{
	struct sx_dra_prep *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->env = *env;
	p->a = (struct alloc){.env = &p->env,
			      .claims = claims,
			      .nclaims = n,
			      .err = p->err,
			      .errlen = sizeof(p->err),
			      .prep_mode = true};
	p->err_claim = n;
	p->err_rc = alloc_arrays(&p->a);
	if (p->err_rc < 0) {
		sx_dra_prep_free(p);
		return NULL;
	}
	for (uint32_t ci = 0; ci < n; ci++) {
		p->err_rc = prep_claim(p, ci);
		if (p->err_rc < 0) {
			p->err_claim = ci;
			break;
		}
	}
	return p;
}

void sx_dra_prep_free(struct sx_dra_prep *p)
{
	if (!p)
		return;
	alloc_free(&p->a);
	free(p);
}

static int build_results(struct alloc *a)
{
	int rc = 0;

	for (uint32_t ci = 0; rc == 0 && ci < a->nclaims; ci++) {
		rc = build_configs(a, ci, &a->out[ci]);
		if (rc == 0)
			rc = build_node_selector(a, ci, &a->out[ci]);
	}
	return rc;
}

int sx_dra_allocate_prepared(const struct sx_dra_prep *p, const struct sx_node *node,
			     uint64_t timeout_ns, bool results, struct sx_dra_claim_out *out,
			     char *err, size_t errlen)
{
	unsigned char scratch[24 * 1024];
	struct alloc a = {.env = &p->env,
			  .node = node,
			  .claims = p->a.claims,
			  .nclaims = p->a.nclaims,
			  .out = out,
			  .err = err,
			  .errlen = errlen,
			  .timeout_ns = timeout_ns,
			  .results = results,
			  .scratch = scratch,
			  .scratch_len = sizeof(scratch)};
	int rc;

	err[0] = '\0';
	for (uint32_t ci = 0; ci < a.nclaims; ci++)
		out_reset(&out[ci]);
	rc = sx__dra_gather_pools(&a);
	if (rc == 0)
		rc = alloc_arrays(&a);
	for (uint32_t ci = 0; rc == 0 && ci < a.nclaims; ci++)
		rc = node_claim(&a, p, ci);
	if (rc == 0)
		rc = sx__dra_search(&a);
	if (rc == 1 && results && build_results(&a) < 0)
		rc = SX_DRA_FATAL;
	if (rc != 1)
		for (uint32_t ci = 0; ci < a.nclaims; ci++)
			sx_dra_claim_out_clear(&out[ci]);
	alloc_free(&a);
	return rc == 1 ? SX_DRA_ALLOCATED : rc;
}

int sx_dra_diagnose(const struct sx_dra_prep *p, const struct sx_node *node, struct sx_dra_diag *d,
		    char *err, size_t errlen)
{
	struct sx_dra_claim_out *out = calloc(p->a.nclaims + 1, sizeof(*out));
	struct alloc a = {.env = &p->env,
			  .node = node,
			  .claims = p->a.claims,
			  .nclaims = p->a.nclaims,
			  .out = out,
			  .err = err,
			  .errlen = errlen};
	int rc;

	memset(d, 0, sizeof(*d));
	err[0] = '\0';
	if (!out)
		return fail(&a, "out of memory");
	rc = sx__dra_gather_pools(&a);
	if (rc == 0)
		rc = alloc_arrays(&a);
	for (uint32_t ci = 0; rc == 0 && ci < a.nclaims; ci++)
		rc = node_claim(&a, p, ci);
	if (rc == 0)
		rc = sx__dra_diagnose(&a, d);
	alloc_free(&a);
	free(out);
	return rc < 0 ? rc : 0;
}

/* The timeout until an sx_now_ns() deadline (0 = none; at least 1). */
static uint64_t time_left(uint64_t deadline_ns)
{
	uint64_t now;

	if (!deadline_ns)
		return 0;
	now = sx_now_ns();
	return deadline_ns > now ? deadline_ns - now : 1;
}

int sx_dra_allocate(const struct sx_dra_alloc_env *env, const struct sx_node *node,
		    const struct sx_dra_claim_in *claims, uint32_t n, struct sx_dra_claim_out *out,
		    char *err, size_t errlen)
{
	struct sx_dra_prep *p = sx_dra_prepare(env, claims, n);
	int rc;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		memset(out, 0, n * sizeof(*out));
		return SX_DRA_FATAL;
	}
	rc = sx_dra_allocate_prepared(p, node, time_left(env->deadline_ns), true, out, err, errlen);
	sx_dra_prep_free(p);
	return rc;
}

/* ---------- JSON ---------- */

static const char *const effect_names[] = {"None", "NoSchedule", "NoExecute", "None"};

/* The request's tolerations, copied into each of its results
 * (DeviceRequestAllocationResult.Tolerations). */
static void tolerations_json(cJSON *r, const struct sx_dra_exact *req)
{
	cJSON *arr;

	if (!req || req->ntolerations == 0)
		return;
	arr = cJSON_AddArrayToObject(r, "tolerations");
	for (uint32_t i = 0; arr && i < req->ntolerations; i++) {
		const struct sx_dra_toleration *t = &req->tolerations[i];
		cJSON *tj = cJSON_CreateObject();

		if (!tj)
			return;
		if (t->key != SX_STR_EMPTY)
			cJSON_AddStringToObject(tj, "key", sx_str_get(t->key));
		cJSON_AddStringToObject(tj, "operator",
					t->op == SX_DRA_TOL_EXISTS ? "Exists" : "Equal");
		if (t->value != SX_STR_EMPTY)
			cJSON_AddStringToObject(tj, "value", sx_str_get(t->value));
		if (t->has_effect)
			cJSON_AddStringToObject(tj, "effect", effect_names[t->effect]);
		if (t->has_seconds)
			cJSON_AddNumberToObject(tj, "tolerationSeconds", (double)t->seconds);
		cJSON_AddItemToArray(arr, tj);
	}
}

/* shareID and consumedCapacity of a share (DRAConsumableCapacity). */
static void consumed_json(cJSON *r, const struct sx_dra_pick *p)
{
	struct sx_dra_named_qty q[64];
	uint32_t n = sx_dra_consumed(p->req, p->driver, p->dev, q, 64);
	cJSON *m;
	char buf[64];

	if (p->share_id[0])
		cJSON_AddStringToObject(r, "shareID", p->share_id);
	if (n == 0)
		return;
	m = cJSON_AddObjectToObject(r, "consumedCapacity");
	for (uint32_t i = 0; m && i < n; i++) {
		sx_dra_qty_string(q[i].q, buf, sizeof(buf));
		cJSON_AddStringToObject(m, q[i].name, buf);
	}
}

static cJSON *requirement_json(const struct sx_requirement *r)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
					  "Gt", "Lt",	 "In"};
	cJSON *j = cJSON_CreateObject(), *vals = cJSON_CreateArray();

	cJSON_AddStringToObject(j, "key", sx_str_get(r->key));
	cJSON_AddStringToObject(j, "operator", ops[r->op]);
	for (uint32_t i = 0; i < r->nvalues; i++)
		cJSON_AddItemToArray(vals, cJSON_CreateString(sx_str_get(r->values[i])));
	cJSON_AddItemToObject(j, "values", vals);
	return j;
}

static cJSON *node_selector_json(const struct sx_dra_claim_out *o)
{
	cJSON *sel, *terms, *term, *exprs, *fields;

	if (o->node_name == SX_STR_EMPTY && !o->nexprs && !o->nfields)
		return cJSON_CreateNull();
	sel = cJSON_CreateObject();
	terms = cJSON_AddArrayToObject(sel, "nodeSelectorTerms");
	term = cJSON_CreateObject();
	cJSON_AddItemToArray(terms, term);
	if (o->node_name != SX_STR_EMPTY) {
		cJSON *f = cJSON_CreateObject(), *vals = cJSON_CreateArray();

		fields = cJSON_AddArrayToObject(term, "matchFields");
		cJSON_AddStringToObject(f, "key", "metadata.name");
		cJSON_AddStringToObject(f, "operator", "In");
		cJSON_AddItemToArray(vals, cJSON_CreateString(sx_str_get(o->node_name)));
		cJSON_AddItemToObject(f, "values", vals);
		cJSON_AddItemToArray(fields, f);
		return sel;
	}
	if (o->nexprs) {
		exprs = cJSON_AddArrayToObject(term, "matchExpressions");
		for (uint32_t i = 0; i < o->nexprs; i++)
			cJSON_AddItemToArray(exprs, requirement_json(o->exprs[i]));
	}
	if (o->nfields) {
		fields = cJSON_AddArrayToObject(term, "matchFields");
		for (uint32_t i = 0; i < o->nfields; i++)
			cJSON_AddItemToArray(fields, requirement_json(o->fields[i]));
	}
	return sel;
}

cJSON *sx_dra_allocation_json(const struct sx_dra_claim_out *o)
{
	cJSON *j = cJSON_CreateObject(), *devs = cJSON_CreateObject();
	cJSON *results = cJSON_CreateArray(), *config = cJSON_CreateArray();

	if (!j || !devs || !results || !config) {
		cJSON_Delete(j);
		cJSON_Delete(devs);
		cJSON_Delete(results);
		cJSON_Delete(config);
		return NULL;
	}
	cJSON_AddItemToObject(j, "devices", devs);
	cJSON_AddItemToObject(devs, "results", results);
	for (uint32_t i = 0; i < o->npicks; i++) {
		const struct sx_dra_pick *p = &o->picks[i];
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "request", p->request);
		cJSON_AddStringToObject(r, "driver", sx_str_get(p->driver));
		cJSON_AddStringToObject(r, "pool", sx_str_get(p->pool));
		cJSON_AddStringToObject(r, "device", sx_str_get(p->device));
		if (p->admin_access)
			cJSON_AddTrueToObject(r, "adminAccess");
		tolerations_json(r, p->req);
		if (p->shared)
			consumed_json(r, p);
		/* devices with binding conditions are only picked with
		 * DRADeviceBindingConditions (Allocate: DeviceBindingAndStatus) */
		if (p->dev && p->dev->nbind_conds) {
			cJSON *bc = cJSON_AddArrayToObject(r, "bindingConditions");

			for (uint32_t k = 0; bc && k < p->dev->nbind_conds; k++)
				cJSON_AddItemToArray(bc, cJSON_CreateString(p->dev->bind_conds[k]));
			if (p->dev->nbind_fail) {
				cJSON *bf = cJSON_AddArrayToObject(r, "bindingFailureConditions");

				for (uint32_t k = 0; bf && k < p->dev->nbind_fail; k++)
					cJSON_AddItemToArray(
						bf, cJSON_CreateString(p->dev->bind_fail[k]));
			}
		}
		cJSON_AddItemToArray(results, r);
	}
	for (uint32_t i = 0; i < o->nconfig; i++) {
		const struct sx_dra_out_config *c = &o->config[i];
		cJSON *cj = cJSON_CreateObject();

		cJSON_AddStringToObject(cj, "source",
					c->source == SX_DRA_FROM_CLASS ? "FromClass" : "FromClaim");
		if (c->nrequests) {
			cJSON *reqs = cJSON_AddArrayToObject(cj, "requests");

			for (uint32_t k = 0; k < c->nrequests; k++)
				cJSON_AddItemToArray(reqs, cJSON_CreateString(c->requests[k]));
		}
		if (c->opaque)
			cJSON_AddItemToObject(cj, "opaque", cJSON_Parse(c->opaque));
		cJSON_AddItemToArray(config, cj);
	}
	if (o->nconfig)
		cJSON_AddItemToObject(devs, "config", config);
	else
		cJSON_Delete(config);
	cJSON_AddItemToObject(j, "nodeSelector", node_selector_json(o));
	return j;
}
