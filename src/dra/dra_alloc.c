/* The backtracking search of the structured allocator (dra_alloc.h), a
 * port of upstream's stable allocator: claims in order, requests in order,
 * one subrequest of a firstAvailable list after the other, and for each
 * required device the candidates in pool order. The first full solution
 * wins. Results and configs are assembled in dra_result.c. */
#include "dra_alloc_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_MAXSIZE (-2000) /* errAllocationResultMaxSizeExceeded */

static int fail(struct alloc *a, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct alloc *a, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, a->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

const char *sx__dra_kobj(const struct sx_dra_claim_in *c, char *buf, size_t len)
{
	if (c->ns && *c->ns)
		snprintf(buf, len, "%s/%s", c->ns, c->name ? c->name : "");
	else
		snprintf(buf, len, "%s", c->name ? c->name : "");
	return buf;
}

static const char *claim_kobj(struct alloc *a, uint32_t ci)
{
	return sx__dra_kobj(&a->claims[ci], a->kobj, sizeof(a->kobj));
}

/* ---------- pools for the node ---------- */

static int slice_pool_cmp(const void *x, const void *y, void *arg)
{
	const struct sx_dra_index *ix = arg;
	const struct dra_slice_meta *a = &ix->meta[*(const uint32_t *)x];
	const struct dra_slice_meta *b = &ix->meta[*(const uint32_t *)y];
	int c = sx__dra_pool_cmp(a->driver, a->pool, b->driver, b->pool);

	if (c)
		return c;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Is a slice of the node's candidates (nodeName this node, or without
 * nodeName) relevant for it? pools_experimental.go, GatherPools: without
 * DRAPartitionableDevices slices using perDeviceNodeSelection or
 * sharedCounters are ignored; with it, a slice of counter sets always
 * counts and a per-device slice when one of its devices selects the node. */
static bool slice_relevant(const struct alloc *a, const struct sx_dra_slice *s)
{
	if (!a->env->features.partitionable)
		return !s->has_per_device && !s->shared_counters &&
		       sx_dra_node_matches(a->node, s->node_name, s->all_nodes, s->node_selector);
	if (s->shared_counters)
		return true;
	if (s->node_name != SX_STR_EMPTY || s->all_nodes || s->node_selector)
		return sx_dra_node_matches(a->node, s->node_name, s->all_nodes, s->node_selector);
	if (!s->per_device)
		return false;
	for (uint32_t d = 0; d < s->ndevices; d++)
		if (sx_dra_node_matches(a->node, s->devices[d].node_name, s->devices[d].all_nodes,
					s->devices[d].node_selector))
			return true;
	return false;
}

static bool duplicate_names(const struct sx_dra_index *ix, const uint32_t *sl, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_dra_slice *a = &ix->slices[sl[i]]->u.slice;

		for (uint32_t d = 0; d < a->ndevices; d++)
			for (uint32_t j = i; j < n; j++) {
				const struct sx_dra_slice *b = &ix->slices[sl[j]]->u.slice;

				for (uint32_t e = j == i ? d + 1 : 0; e < b->ndevices; e++)
					if (a->devices[d].name == b->devices[e].name)
						return true;
			}
	}
	return false;
}

static struct counter *find_counter(const struct pool *p, sx_str set, sx_str name)
{
	for (uint32_t i = 0; i < p->nsets; i++) {
		if (p->sets[i].name != set)
			continue;
		for (uint32_t k = 0; k < p->sets[i].n; k++)
			if (p->sets[i].c[k].name == name)
				return &p->sets[i].c[k];
		return NULL;
	}
	return NULL;
}

/* Is there a counter set of that name? A consumption naming none makes
 * the pool invalid even when it consumes no counter of it
 * (pools_experimental.go, validateDeviceCounterConsumption). */
static bool has_set(const struct pool *p, sx_str set)
{
	for (uint32_t i = 0; i < p->nsets; i++)
		if (p->sets[i].name == set)
			return true;
	return false;
}

/* Allocated before this search (AllocatedDevices): whole, or shared
 * while DRAConsumableCapacity is off (then a share is a whole device, as
 * upstream gathers the allocated state without the gate). p: the
 * device's pool, whose any_allocated skips the lookups. */
static bool device_allocated(const struct alloc *a, const struct pool *p, sx_str drv, sx_str pool,
			     sx_str dev)
{
	bool shared_too = !a->env->features.consumable;
	const struct sx_dra_allocated *set[2] = {a->env->allocated, a->env->allocated2};

	if (!p)
		return sx__dra_allocated_in_use(set[0], drv, pool, dev, shared_too) ||
		       sx__dra_allocated_in_use(set[1], drv, pool, dev, shared_too);
	for (int i = 0; i < 2; i++) {
		const struct sx__dra_pool_devs *pd = p->pd[i];
		bool listed = false;

		if (!pd)
			continue;
		if (pd->n > SX__DRA_POOL_DEVS)
			listed = true;
		for (uint32_t k = 0; !listed && k < pd->n; k++)
			listed = pd->dev[k] == dev;
		if (listed && sx__dra_allocated_in_use(set[i], drv, pool, dev, shared_too))
			return true;
	}
	return false;
}

/* DRAPartitionableDevices: the pool's counter sets from its sharedCounters
 * slices (a set name twice makes the pool invalid), every device of the
 * pool's generation consuming only counters that exist (else invalid:
 * pools_experimental.go, getAndValidateCounterSets,
 * validateDeviceCounterConsumption, over the node's slices and those it
 * does not see), and what is left after the allocated devices' consumption
 * (allocator_incubating.go, checkAvailableCounters). 0 or SX_ENOMEM. */
static int pool_counters(struct alloc *a, struct pool *p, int64_t gen, uint32_t pool_ix)
{
	const struct sx_dra_index *ix = a->env->index;
	const struct dra_pool_info *pi = &ix->pools[pool_ix];
	uint32_t nsets = 0;

	for (uint32_t k = 0; k < p->nslices; k++)
		nsets += ix->slices[p->slices[k]]->u.slice.ncounter_sets;
	p->sets = sx__dra_amem(a, nsets, sizeof(*p->sets));
	if (!p->sets)
		return SX_ENOMEM;
	for (uint32_t k = 0; k < p->nslices; k++) {
		const struct sx_dra_slice *s = &ix->slices[p->slices[k]]->u.slice;

		for (uint32_t i = 0; i < s->ncounter_sets; i++) {
			const struct sx_dra_counter_set *cs = &s->counter_sets[i];
			struct counter_set *set = &p->sets[p->nsets];

			for (uint32_t j = 0; j < p->nsets; j++)
				if (p->sets[j].name == cs->name)
					p->invalid = true; /* duplicate counter set name */
			set->name = cs->name;
			set->n = cs->ncounters;
			set->c = sx__dra_amem(a, cs->ncounters, sizeof(*set->c));
			if (!set->c)
				return SX_ENOMEM;
			for (uint32_t j = 0; j < cs->ncounters; j++)
				set->c[j] = (struct counter){cs->counters[j].name,
							     cs->counters[j].value, 0};
			p->nsets++;
		}
	}
	for (uint32_t k = 0; !p->invalid && k < pi->n; k++) {
		const struct sx_dra_slice *s = &ix->slices[ix->pool_slices[pi->first + k]]->u.slice;

		if (s->generation != gen || !s->consumes)
			continue;
		for (uint32_t d = 0; d < s->ndevices; d++) {
			const struct sx_dra_device *dev = &s->devices[d];
			bool allocated = dev->nconsumes &&
					 device_allocated(a, p, s->driver, s->pool, dev->name);

			for (uint32_t u = 0; u < dev->nconsumes; u++) {
				if (!has_set(p, dev->consumes[u].name)) {
					p->invalid = true; /* counter set not found */
					return 0;
				}
				for (uint32_t c = 0; c < dev->consumes[u].ncounters; c++) {
					struct counter *ctr =
						find_counter(p, dev->consumes[u].name,
							     dev->consumes[u].counters[c].name);

					if (!ctr) {
						p->invalid = true; /* counter (set) not found */
						return 0;
					}
					if (allocated)
						ctr->avail -= dev->consumes[u].counters[c].value;
				}
			}
		}
	}
	return 0;
}

/* pool_counters for a node seeing the pool's whole newest generation,
 * whose counter sets the index prepared (dra_pool_info.sets_ok): a copy,
 * less the allocated devices' consumption when the pool has any.
 * 0 or SX_ENOMEM. */
static int pool_counters_tmpl(struct alloc *a, struct pool *p, const struct dra_pool_info *pi)
{
	const struct sx_dra_index *ix = a->env->index;
	uint32_t nctr = 0;
	struct counter *c;

	if (!pi->nsets)
		return 0;
	for (uint32_t i = 0; i < pi->nsets; i++)
		nctr += ix->tmpl_sets[pi->set_first + i].n;
	p->sets = sx__dra_amem(a, pi->nsets, sizeof(*p->sets));
	c = sx__dra_amem(a, nctr + 1, sizeof(*c));
	if (!p->sets || !c)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < pi->nsets; i++) {
		const struct dra_tmpl_set *ts = &ix->tmpl_sets[pi->set_first + i];

		p->sets[i] = (struct counter_set){ts->name, ts->n, c};
		for (uint32_t j = 0; j < ts->n; j++)
			c[j] = (struct counter){ix->tmpl_ctrs[ts->first + j].name,
						ix->tmpl_ctrs[ts->first + j].value, 0};
		c += ts->n;
	}
	p->nsets = pi->nsets;
	if (!p->any_allocated)
		return 0;
	c = p->sets[0].c;
	for (uint32_t k = 0; k < pi->nuses;) {
		const struct dra_tmpl_use *u = &ix->tmpl_uses[pi->use_first + k];
		uint32_t e = k + 1;

		while (e < pi->nuses && ix->tmpl_uses[pi->use_first + e].device == u->device)
			e++;
		if (device_allocated(a, p, p->driver, p->pool, u->device))
			for (; k < e; k++)
				c[ix->tmpl_uses[pi->use_first + k].ctr].avail -=
					ix->tmpl_uses[pi->use_first + k].value;
		k = e;
	}
	return 0;
}

/* One pool from the node-relevant slices sl[0..n) of one (driver, pool).
 * 0 or SX_ENOMEM. */
static int make_pool(struct alloc *a, uint32_t *sl, uint32_t n)
{
	const struct sx_dra_index *ix = a->env->index;
	const struct dra_slice_meta *first = &ix->meta[sl[0]];
	struct pool *p = &a->pools[a->npools];
	int64_t gen = 0;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (ix->meta[sl[i]].generation > gen)
			gen = ix->meta[sl[i]].generation;
	for (uint32_t i = 0; i < n; i++)
		if (ix->meta[sl[i]].generation == gen)
			sl[k++] = sl[i];
	first = &ix->meta[sl[0]];
	*p = (struct pool){
		.driver = first->driver, .pool = first->pool, .nslices = k, .slices = sl};
	p->pd[0] = sx__dra_allocated_pool(a->env->allocated, p->driver, p->pool);
	p->pd[1] = sx__dra_allocated_pool(a->env->allocated2, p->driver, p->pool);
	p->any_allocated = p->pd[0] || p->pd[1];
	if ((int64_t)k != first->slice_count) {
		/* Slices irrelevant for the node may complete the pool, or a
		 * newer generation may be under way (then skip the pool). */
		if (first->pool_max_gen > gen)
			return 0;
		if ((int64_t)first->pool_count_at_max != first->slice_count) {
			p->incomplete = true;
			a->npools++;
			return 0;
		}
	}
	p->invalid = k == first->pool_count_at_max && gen == first->pool_max_gen
			     ? first->pool_duplicates
			     : duplicate_names(ix, sl, k);
	a->npools++;
	if (p->invalid || !a->env->features.partitionable)
		return 0;
	if (k == first->pool_count_at_max && gen == first->pool_max_gen &&
	    ix->pools[first->pool_ix].sets_ok) {
		for (uint32_t i = 0; i < k; i++)
			if (ix->meta[sl[i]].counters)
				return pool_counters_tmpl(a, p, &ix->pools[first->pool_ix]);
		return 0;
	}
	for (uint32_t i = 0; i < k; i++)
		if (ix->meta[sl[i]].counters)
			return pool_counters(a, p, gen, first->pool_ix);
	return 0;
}

/* Does a pool offer a device with binding conditions? */
static bool pool_binds(const struct alloc *a, const struct pool *p)
{
	for (uint32_t k = 0; k < p->nslices; k++) {
		const struct sx_dra_slice *s = &a->env->index->slices[p->slices[k]]->u.slice;

		for (uint32_t d = 0; d < s->ndevices; d++)
			if (s->devices[d].binding_conditions)
				return true;
	}
	return false;
}

/* Pools offering devices with binding conditions go after the others,
 * each group still sorted by driver and pool, so the first-fit search
 * prefers devices usable without waiting (pools_experimental.go,
 * GatherPools: poolHasBindingConditions). A stable partition. */
static void binding_pools_last(struct alloc *a)
{
	struct pool tmp;
	uint32_t k = 0;

	if (a->npools < 2)
		return; /* nothing to reorder: skip the device walk */
	for (uint32_t i = 0; i < a->npools; i++) {
		if (pool_binds(a, &a->pools[i]))
			continue;
		tmp = a->pools[i];
		memmove(&a->pools[k + 1], &a->pools[k], (size_t)(i - k) * sizeof(tmp));
		a->pools[k++] = tmp;
	}
}

int sx__dra_gather_pools(struct alloc *a)
{
	const struct sx_dra_index *ix = a->env->index;
	uint32_t first, n = 0, nn;

	nn = a->node ? sx__dra_node_slices(ix, a->node->name_id, &first) : 0;
	a->pool_slices = sx__dra_amem(a, nn + ix->nglobal + 1, sizeof(uint32_t));
	a->pools = sx__dra_amem(a, nn + ix->nglobal + 1, sizeof(*a->pools));
	if (!a->pool_slices || !a->pools)
		return fail(a, SX_DRA_FATAL, "out of memory");
	for (uint32_t i = 0; i < nn; i++)
		if (!ix->meta[ix->by_node[first + i].slice].partitionable ||
		    a->env->features.partitionable)
			a->pool_slices[n++] = ix->by_node[first + i].slice;
	for (uint32_t i = 0; i < ix->nglobal; i++)
		if (slice_relevant(a, &ix->slices[ix->global[i]]->u.slice))
			a->pool_slices[n++] = ix->global[i];
	for (uint32_t i = 1; i < n; i++)
		if (slice_pool_cmp(&a->pool_slices[i - 1], &a->pool_slices[i], (void *)ix) > 0) {
			/* not in order already (one node's slices usually are) */
			qsort_r(a->pool_slices, n, sizeof(uint32_t), slice_pool_cmp, (void *)ix);
			break;
		}
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;

		while (j < n &&
		       ix->meta[a->pool_slices[j]].pool_ix == ix->meta[a->pool_slices[i]].pool_ix)
			j++;
		if (make_pool(a, a->pool_slices + i, j - i) < 0)
			return fail(a, SX_DRA_FATAL, "out of memory");
		i = j;
	}
	binding_pools_last(a);
	return 0;
}

/* ---------- selectors ---------- */

static int memo_get(const struct sx_dra_index *ix, uint32_t row, sx_str id)
{
	for (int k = 0; k < SX__DRA_MEMO; k++) {
		uint64_t v = atomic_load_explicit(&ix->memo[(size_t)row * SX__DRA_MEMO + k],
						  memory_order_relaxed);

		if (v && (sx_str)(v >> 2) == id)
			return (int)(v & 3) - 1;
	}
	return -1;
}

static void memo_put(const struct sx_dra_index *ix, uint32_t row, sx_str id, bool match)
{
	_Atomic uint64_t *m = &ix->memo[(size_t)row * SX__DRA_MEMO];
	uint64_t v = ((uint64_t)id << 2) | (match ? 2 : 1);
	int k = atomic_load_explicit(&m[0], memory_order_relaxed) == 0 ? 0 : 1;

	atomic_store_explicit(&m[k], v, memory_order_relaxed);
}

/* Every selector matches: 1, 0, or SX_DRA_FATAL with the message. */
static int selectors_match(struct alloc *a, uint32_t ci, const struct sx_dra_object *cls,
			   char *const *exprs, const sx_str *ids, uint32_t n, struct devref d)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	const struct sx_dra_device *dev = &s->devices[d.dev];
	uint32_t row = a->env->index->meta[d.slice_ix].dev_base + d.dev;
	char msg[SX_DRA_ERR_LEN];

	for (uint32_t i = 0; i < n; i++) {
		int m = memo_get(a->env->index, row, ids[i]);

		if (m < 0) {
			msg[0] = '\0';
			m = a->env->match(a->env->match_ctx, exprs[i], s->driver, s->pool, dev, msg,
					  sizeof(msg));
			if (m == SX_DRA_COMPILE_ERROR)
				return cls ? fail(a, SX_DRA_FATAL,
						  "class %s: selector #%u: CEL compile error: %s",
						  cls->meta.name, i, msg)
					   : fail(a, SX_DRA_FATAL,
						  "claim %s: selector #%u: CEL compile error: %s",
						  claim_kobj(a, ci), i, msg);
			if (m < 0)
				return cls ? fail(a, SX_DRA_FATAL,
						  "class %s: selector #%u on device %s/%s/%s: CEL "
						  "runtime error: %s",
						  cls->meta.name, i, sx_str_get(s->driver),
						  sx_str_get(s->pool), sx_str_get(dev->name), msg)
					   : fail(a, SX_DRA_FATAL,
						  "claim %s: selector #%u on device %s/%s/%s: CEL "
						  "runtime error: %s",
						  claim_kobj(a, ci), i, sx_str_get(s->driver),
						  sx_str_get(s->pool), sx_str_get(dev->name), msg);
			memo_put(a->env->index, row, ids[i], m == SX_DRA_MATCH);
		}
		if (!m)
			return 0;
	}
	return 1;
}

int sx__dra_selectable(struct alloc *a, uint32_t ci, const struct rdata *rd, struct devref d)
{
	int rc;

	if (d.slice->u.slice.devices[d.dev].binding_conditions && !a->env->features.binding)
		return 0; /* DRADeviceBindingConditions off */
	rc = selectors_match(a, ci, rd->cls, rd->cls->u.cls.selectors, rd->class_ids,
			     rd->cls->u.cls.nselectors, d);
	if (rc != 1)
		return rc;
	rc = selectors_match(a, ci, NULL, rd->req->selectors, rd->req_ids, rd->req->nselectors, d);
	if (rc == 1 && d.slice->u.slice.per_device) {
		/* perDeviceNodeSelection: the device's own node selection
		 * (allocator_incubating.go, isSelectable) */
		const struct sx_dra_device *dev = &d.slice->u.slice.devices[d.dev];

		rc = sx_dra_node_matches(a->node, dev->node_name, dev->all_nodes,
					 dev->node_selector);
	}
	return rc;
}

/* ---------- constraints and devices in use ---------- */

static bool constraint_applies(const struct cons *c, const char *req, const char *sub)
{
	char full[512];

	if (c->c->nrequests == 0)
		return true;
	if (sub)
		snprintf(full, sizeof(full), "%s/%s", req, sub);
	for (uint32_t i = 0; i < c->c->nrequests; i++)
		if (strcmp(c->c->requests[i], req) == 0 ||
		    (sub && strcmp(c->c->requests[i], full) == 0))
			return true;
	return false;
}

/* Both one value of the same type, and equal; a value of no known type
 * (or a list, DRAListTypeAttributes off) never matches (constraint.go:
 * "Unknown value type, cannot match"). */
static bool attr_equal(const struct sx_dra_attr *x, const struct sx_dra_attr *y)
{
	if (x->type != y->type || !sx_dra_attr_scalar(x))
		return false;
	switch (x->type) {
	case SX_DRA_ATTR_INT:
		return x->i == y->i;
	case SX_DRA_ATTR_BOOL:
		return x->b == y->b;
	default:
		return strcmp(x->s, y->s) == 0;
	}
}

/* distinctAttribute (DRAConsumableCapacity): every device of the
 * constraint has the attribute, each with another value
 * (allocator_incubating.go, distinctAttributeConstraint). The devices
 * come and go in stack order. */
static bool distinct_add(struct cons *c, const struct sx_dra_attr *at)
{
	if (!at || c->n >= SX_DRA_ALLOCATION_RESULTS_MAX)
		return false;
	if (!sx_dra_attr_scalar(at) && c->n > 0)
		return false; /* "Distinct attribute type unknown" */
	for (int i = 0; i < c->n; i++)
		if (attr_equal(c->seen[i], at))
			return false;
	c->seen[c->n++] = at;
	return true;
}

static bool cons_add(struct cons *c, const char *req, const char *sub, struct devref d)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	const struct sx_dra_attr *at;

	if (!constraint_applies(c, req, sub))
		return true;
	if (!c->c->match_attribute)
		return distinct_add(c, sx_dra_lookup_attr(&s->devices[d.dev], s->driver,
							  c->c->distinct_attribute));
	at = sx_dra_lookup_attr(&s->devices[d.dev], s->driver, c->c->match_attribute);
	if (!at)
		return false;
	if (c->n == 0) {
		c->attr = at;
		c->n = 1;
		return true;
	}
	if (!attr_equal(at, c->attr))
		return false;
	c->n++;
	return true;
}

static void cons_remove(struct cons *c, const char *req, const char *sub)
{
	if (constraint_applies(c, req, sub))
		c->n--; /* distinct: the last device added goes first */
}

static bool allocating(const struct alloc *a, sx_str drv, sx_str pool, sx_str dev, int claim)
{
	for (uint32_t i = 0; i < a->nstack; i++)
		if (!a->stack[i].shared && a->stack[i].device == dev && a->stack[i].pool == pool &&
		    a->stack[i].driver == drv &&
		    (claim < 0 || a->stack[i].claim == (uint32_t)claim))
			return true;
	return false;
}

static bool in_use(const struct alloc *a, const struct rdata *rd, uint32_t ci, struct devref d)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	sx_str name = s->devices[d.dev].name;

	if (rd->req->admin_access)
		return allocating(a, s->driver, s->pool, name, (int)ci);
	return device_allocated(a, &a->pools[d.pool], s->driver, s->pool, name) ||
	       allocating(a, s->driver, s->pool, name, -1);
}

/* ---------- device taints ---------- */

/* resourceclaim.ToleratesTaint
 * (staging/src/k8s.io/dynamic-resource-allocation/resourceclaim). */
static bool tolerates(const struct sx_dra_toleration *t, sx_str key, sx_str value, uint8_t effect)
{
	if (t->has_effect && t->effect != effect)
		return false;
	if (t->key != SX_STR_EMPTY && t->key != key)
		return false;
	return t->op == SX_DRA_TOL_EXISTS || t->value == value;
}

/* One taint prevents allocation when its effect is NoSchedule or NoExecute
 * (others, None included, are ignored) and no toleration of the request
 * tolerates it (allocator_incubating.go, taintPreventsAllocation). */
static bool taint_blocks(const struct sx_dra_exact *req, sx_str key, sx_str value, uint8_t effect)
{
	if (effect != SX_DRA_EFFECT_NO_SCHEDULE && effect != SX_DRA_EFFECT_NO_EXECUTE)
		return false;
	for (uint32_t i = 0; i < req->ntolerations; i++)
		if (tolerates(&req->tolerations[i], key, value, effect))
			return false;
	return true;
}

static uint8_t rule_effect(sx_str effect)
{
	const char *s = sx_str_get(effect);

	if (strcmp(s, "NoSchedule") == 0)
		return SX_DRA_EFFECT_NO_SCHEDULE;
	if (strcmp(s, "NoExecute") == 0)
		return SX_DRA_EFFECT_NO_EXECUTE;
	return SX_DRA_EFFECT_NONE; /* None, or unknown: treated like None */
}

/* The device's own taints, then those of the DeviceTaintRules selecting
 * it (the ResourceSlice tracker adds those to the slices it hands the
 * allocator: dynamic-resource-allocation/resourceslice/tracker,
 * Tracker.applyPatches; a rule without deviceSelector selects nothing,
 * an unset field of the selector matches anything). */
static bool taint_blocking(const struct alloc *a, const struct rdata *rd, struct devref d,
			   char *why, size_t len)
{
	static const char *const effects[] = {"None", "NoSchedule", "NoExecute", "None"};
	const struct sx_dra_slice *s = &d.slice->u.slice;
	const struct sx_dra_device *dev = &s->devices[d.dev];
	const char *v;

	for (uint32_t i = 0; i < dev->ntaints; i++)
		if (taint_blocks(rd->req, dev->taints[i].key, dev->taints[i].value,
				 dev->taints[i].effect)) {
			if (why) {
				v = sx_str_get(dev->taints[i].value);
				snprintf(why, len, "%s%s%s:%s", sx_str_get(dev->taints[i].key),
					 *v ? "=" : "", v, effects[dev->taints[i].effect & 3]);
			}
			return true;
		}
	for (uint32_t i = 0; i < a->env->ntaint_rules; i++) {
		const struct sx_device_taint_rule *r = a->env->taint_rules[i];

		if (!r->has_selector || (r->driver != SX_STR_EMPTY && r->driver != s->driver) ||
		    (r->pool != SX_STR_EMPTY && r->pool != s->pool) ||
		    (r->device != SX_STR_EMPTY && r->device != dev->name))
			continue;
		if (taint_blocks(rd->req, r->key, r->value, rule_effect(r->effect))) {
			if (why) {
				v = sx_str_get(r->value);
				snprintf(why, len, "%s%s%s:%s (DeviceTaintRule %s)",
					 sx_str_get(r->key), *v ? "=" : "", v,
					 sx_str_get(r->effect), r->meta.name ? r->meta.name : "");
			}
			return true;
		}
	}
	return false;
}

static bool taint_prevents(const struct alloc *a, const struct rdata *rd, struct devref d)
{
	return taint_blocking(a, rd, d, NULL, 0);
}

/* ---------- shared counters ---------- */

static void counters_add(struct pool *p, const struct sx_dra_device *dev, int sign)
{
	for (uint32_t u = 0; u < dev->nconsumes; u++)
		for (uint32_t c = 0; c < dev->consumes[u].ncounters; c++) {
			struct counter *ctr = find_counter(p, dev->consumes[u].name,
							   dev->consumes[u].counters[c].name);

			if (ctr) /* always: the pool was validated */
				ctr->used += sign * dev->consumes[u].counters[c].value;
		}
}

/* Takes the device's counters; false (nothing taken) when some counter of
 * the pool would then be consumed beyond what is available
 * (allocator_incubating.go, checkAvailableCounters: every counter of the
 * pool is checked, so an over-consumed one blocks the pool). */
static bool counters_take(struct alloc *a, uint32_t pool_ix, const struct sx_dra_device *dev)
{
	struct pool *p = &a->pools[pool_ix];

	counters_add(p, dev, 1);
	for (uint32_t i = 0; i < p->nsets; i++)
		for (uint32_t k = 0; k < p->sets[i].n; k++)
			if (p->sets[i].c[k].avail < p->sets[i].c[k].used) {
				counters_add(p, dev, -1);
				return false;
			}
	return true;
}

static void names_of(const struct rdata *rd, const char **req, const char **sub)
{
	*req = rd->parent ? rd->parent->name : rd->req->name;
	*sub = rd->parent ? rd->req->name : NULL;
}

/* 1 allocated (undo with deallocate), 0 not usable, SX_DRA_FATAL. Unless
 * `must` (allocationMode All), the caller has just seen that d is not in
 * use. */
static int allocate_device(struct alloc *a, uint32_t ci, const struct rdata *rd, struct devref d,
			   bool must)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	struct sx_dra_claim_out *out = &a->out[ci];
	const char *req, *sub;
	struct sx_dra_pick *p;

	const struct sx_dra_device *dev = &s->devices[d.dev];
	bool counters = dev->nconsumes > 0;
	bool shared = a->env->features.consumable && dev->allow_multiple;

	if (must && in_use(a, rd, ci, d))
		return 0;
	if (counters && !a->env->features.partitionable)
		return 0;
	/* Taints before counters: upstream takes the counters first and
	 * keeps them when the taint or a constraint then refuses the
	 * device; here nothing stays taken for a device not allocated. */
	if (a->env->features.device_taints && taint_prevents(a, rd, d))
		return 0;
	/* Capacity before counters and constraints likewise
	 * (allocator_incubating.go, allocateDevice: CmpRequestOverCapacity). */
	if (a->env->features.consumable && !sx__dra_capacity_fits(a, rd, d))
		return 0;
	/* A device allocated many times (DRAConsumableCapacity) consumes its
	 * counters once, with its first share of the search. */
	if (counters && shared) {
		for (uint32_t i = 0; counters && i < a->nstack; i++)
			if (a->stack[i].shared && a->stack[i].device == dev->name &&
			    a->stack[i].pool == s->pool && a->stack[i].driver == s->driver)
				counters = false;
	}
	if (counters && !counters_take(a, d.pool, dev))
		return 0;
	names_of(rd, &req, &sub);
	for (uint32_t i = 0; i < a->ncons[ci]; i++) {
		if (cons_add(&a->cons[ci][i], req, sub, d))
			continue;
		while (i-- > 0)
			cons_remove(&a->cons[ci][i], req, sub);
		if (counters)
			counters_add(&a->pools[d.pool], dev, -1);
		if (must)
			return fail(a, SX_DRA_FATAL,
				    "claim %s, request %s: cannot add device %s/%s/%s because a "
				    "claim constraint would not be satisfied",
				    claim_kobj(a, ci), rd->req->name, sx_str_get(s->driver),
				    sx_str_get(s->pool), sx_str_get(dev->name));
		return 0;
	}
	a->stack[a->nstack++] = (struct inflight){s->driver, s->pool, dev->name, shared, counters,
						  rd->req,   ci,      dev,	 d.pool};
	p = &out->picks[out->npicks++];
	if (!a->results)
		p->request[0] = '\0'; /* Filter: only whether a device fits */
	else if (sub)
		snprintf(p->request, sizeof(p->request), "%s/%s", req, sub);
	else
		snprintf(p->request, sizeof(p->request), "%s", req);
	p->driver = s->driver;
	p->pool = s->pool;
	p->device = s->devices[d.dev].name;
	p->admin_access = rd->req->admin_access;
	p->slice = d.slice;
	p->req = rd->req;
	p->dev = dev;
	p->shared = shared;
	if (shared && a->results)
		sx__dra_share_id(p->share_id); /* GenerateShareID */
	else
		p->share_id[0] = '\0';
	return 1;
}

static void deallocate(struct alloc *a, uint32_t ci, const struct rdata *rd)
{
	const char *req, *sub;

	names_of(rd, &req, &sub);
	for (uint32_t i = 0; i < a->ncons[ci]; i++)
		cons_remove(&a->cons[ci][i], req, sub);
	a->nstack--;
	if (a->stack[a->nstack].counters)
		counters_add(&a->pools[a->stack[a->nstack].pool_ix], a->stack[a->nstack].dev, -1);
	a->out[ci].npicks--;
}

/* ---------- the search ---------- */

static int allocate_one(struct alloc *a, uint32_t ci, uint32_t ri, uint32_t si, int di,
			bool sub_mode);

static int next_claim(struct alloc *a, uint32_t ci)
{
	int rc = allocate_one(a, ci + 1, 0, 0, 0, false);

	return rc == ERR_MAXSIZE ? 0 : rc;
}

static int try_subrequests(struct alloc *a, uint32_t ci, uint32_t ri)
{
	struct rreq *rq = &a->reqs[ci][ri];
	bool all_exceeded = true;

	for (uint32_t si = 0; si < rq->n; si++) {
		int rc = allocate_one(a, ci, ri, si, 0, true);

		if (rc == ERR_MAXSIZE)
			continue;
		all_exceeded = false;
		if (rc < 0)
			return rc;
		if (rc == 1) {
			rq->selected = si;
			return 1;
		}
	}
	return all_exceeded ? ERR_MAXSIZE : 0;
}

static int allocate_all(struct alloc *a, uint32_t ci, uint32_t ri, uint32_t si, int di,
			bool sub_mode, const struct rdata *rd)
{
	int rc = allocate_device(a, ci, rd, rd->all[di], true);

	if (rc <= 0)
		return rc;
	rc = allocate_one(a, ci, ri, si, di + 1, sub_mode);
	if (rc != 1)
		deallocate(a, ci, rd);
	return rc;
}

static int try_candidates(struct alloc *a, uint32_t ci, uint32_t ri, uint32_t si, int di,
			  bool sub_mode, const struct rdata *rd)
{
	const struct sx_dra_index *ix = a->env->index;

	for (uint32_t p = 0; p < a->npools; p++) {
		const struct pool *pl = &a->pools[p];

		if (pl->incomplete || pl->invalid)
			continue;
		for (uint32_t k = 0; k < pl->nslices; k++) {
			const struct sx_dra_object *so = ix->slices[pl->slices[k]];

			for (uint32_t dv = 0; dv < so->u.slice.ndevices; dv++) {
				struct devref d = {so, pl->slices[k], dv, p};
				int rc;

				if (in_use(a, rd, ci, d))
					continue;
				rc = sx__dra_selectable(a, ci, rd, d);
				if (rc <= 0) {
					if (rc < 0)
						return rc;
					continue;
				}
				rc = allocate_device(a, ci, rd, d, false);
				if (rc < 0)
					return rc;
				if (rc == 0)
					continue;
				rc = allocate_one(a, ci, ri, si, di + 1, sub_mode);
				if (rc == 1)
					return 1;
				deallocate(a, ci, rd);
				if (rc < 0)
					return rc;
			}
		}
	}
	return 0;
}

static int allocate_one(struct alloc *a, uint32_t ci, uint32_t ri, uint32_t si, int di,
			bool sub_mode)
{
	struct rreq *rq;
	const struct rdata *rd;

	if (a->timeout_ns && (++a->calls & 63) == 0) {
		uint64_t now = sx_now_ns();

		if (!a->deadline_ns)
			a->deadline_ns = now + a->timeout_ns; /* the first check starts it */
		else if (now > a->deadline_ns)
			return SX_DRA_TIMEOUT;
	}
	if (ci >= a->nclaims)
		return 1;
	if (ri >= a->claims[ci].spec->nrequests)
		return next_claim(a, ci);
	rq = &a->reqs[ci][ri];
	if (!sub_mode && rq->sub)
		return try_subrequests(a, ci, ri);
	rd = &rq->rd[si];
	if (rd->req->mode == SX_DRA_ALL && rd->nall == 0)
		return 0;
	if (di >= rd->num_devices)
		return allocate_one(a, ci, ri + 1, 0, 0, false);
	if ((int64_t)a->out[ci].npicks + rd->num_devices - di > SX_DRA_ALLOCATION_RESULTS_MAX)
		return ERR_MAXSIZE;
	if (rd->req->mode == SX_DRA_ALL)
		return allocate_all(a, ci, ri, si, di, sub_mode, rd);
	return try_candidates(a, ci, ri, si, di, sub_mode, rd);
}

int sx__dra_search(struct alloc *a)
{
	int rc = allocate_one(a, 0, 0, 0, 0, false);

	if (rc == ERR_MAXSIZE)
		return 0;
	if (rc == 0) {
		for (uint32_t p = 0; p < a->npools; p++)
			if (a->pools[p].invalid)
				return fail(a, SX_DRA_NODE_FAILED,
					    "invalid resource pools were encountered");
	}
	return rc;
}

/* ---------- why a node's devices do not fit (sx_dra_diagnose) ---------- */

/* Which counter of the pool taking dev's counters would exhaust. */
static bool counters_short(struct alloc *a, uint32_t pool_ix, const struct sx_dra_device *dev,
			   char *why, size_t len)
{
	struct pool *p = &a->pools[pool_ix];
	bool short_ = false;

	counters_add(p, dev, 1);
	for (uint32_t i = 0; !short_ && i < p->nsets; i++)
		for (uint32_t k = 0; !short_ && k < p->sets[i].n; k++)
			if (p->sets[i].c[k].avail < p->sets[i].c[k].used) {
				snprintf(why, len, "counter set %s: %s",
					 sx_str_get(p->sets[i].name),
					 sx_str_get(p->sets[i].c[k].name));
				short_ = true;
			}
	counters_add(p, dev, -1);
	return short_;
}

/* Why device d cannot serve rd alone, in allocateOne's and
 * allocateDevice's order; SX_DRA_WHY_FITS when it can. A selector error
 * counts as the selector being false (the search reports the error). */
static uint8_t why_not(struct alloc *a, uint32_t ci, const struct rdata *rd, struct devref d,
		       char *why, size_t len)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	const struct sx_dra_device *dev = &s->devices[d.dev];

	why[0] = '\0';
	if (in_use(a, rd, ci, d))
		return SX_DRA_WHY_IN_USE;
	if (dev->binding_conditions && !a->env->features.binding) {
		snprintf(why, len, "binding conditions, DRADeviceBindingConditions off");
		return SX_DRA_WHY_GATE;
	}
	if (selectors_match(a, ci, rd->cls, rd->cls->u.cls.selectors, rd->class_ids,
			    rd->cls->u.cls.nselectors, d) != 1) {
		snprintf(why, len, "class %s", rd->cls->meta.name);
		return SX_DRA_WHY_SELECTOR;
	}
	if (selectors_match(a, ci, NULL, rd->req->selectors, rd->req_ids, rd->req->nselectors, d) !=
	    1) {
		snprintf(why, len, "request");
		return SX_DRA_WHY_SELECTOR;
	}
	if (s->per_device &&
	    !sx_dra_node_matches(a->node, dev->node_name, dev->all_nodes, dev->node_selector))
		return SX_DRA_WHY_NODE;
	if (dev->nconsumes && !a->env->features.partitionable) {
		snprintf(why, len, "consumes counters, DRAPartitionableDevices off");
		return SX_DRA_WHY_GATE;
	}
	if (a->env->features.device_taints && taint_blocking(a, rd, d, why, len))
		return SX_DRA_WHY_TAINT;
	if (a->env->features.consumable && !sx__dra_capacity_fits(a, rd, d))
		return SX_DRA_WHY_CAPACITY;
	if (dev->nconsumes && counters_short(a, d.pool, dev, why, len))
		return SX_DRA_WHY_COUNTERS;
	return SX_DRA_WHY_FITS;
}

/* One request: every candidate device classified; true when it is short. */
static bool diagnose_request(struct alloc *a, uint32_t ci, const struct rdata *rd,
			     struct sx_dra_diag *d)
{
	const struct sx_dra_index *ix = a->env->index;
	const char *req, *sub;
	char why[96];

	memset(d->count, 0, sizeof(d->count));
	d->ndevices = d->nlisted = 0;
	for (uint32_t p = 0; p < a->npools; p++) {
		const struct pool *pl = &a->pools[p];

		if (pl->incomplete || pl->invalid)
			continue;
		for (uint32_t k = 0; k < pl->nslices; k++) {
			const struct sx_dra_object *so = ix->slices[pl->slices[k]];

			for (uint32_t dv = 0; dv < so->u.slice.ndevices; dv++) {
				struct devref dr = {so, pl->slices[k], dv, p};
				uint8_t w = why_not(a, ci, rd, dr, why, sizeof(why));

				d->ndevices++;
				d->count[w]++;
				if (w == SX_DRA_WHY_FITS || d->nlisted == SX_DRA_DIAG_LISTED)
					continue;
				d->listed[d->nlisted].pool = so->u.slice.pool;
				d->listed[d->nlisted].device = so->u.slice.devices[dv].name;
				d->listed[d->nlisted].why = w;
				snprintf(d->listed[d->nlisted].detail,
					 sizeof(d->listed[d->nlisted].detail), "%s", why);
				d->nlisted++;
			}
		}
	}
	names_of(rd, &req, &sub);
	snprintf(d->request, sizeof(d->request), "%s%s%s", req, sub ? "/" : "", sub ? sub : "");
	d->claim = ci;
	if (rd->req->mode == SX_DRA_ALL) {
		/* every device the request selects, at least one (collect_all) */
		d->needs = (int)rd->nall;
		return rd->nall == 0 ||
		       d->count[SX_DRA_WHY_FITS] < d->ndevices - d->count[SX_DRA_WHY_SELECTOR] -
							   d->count[SX_DRA_WHY_NODE];
	}
	d->needs = rd->num_devices;
	return (int64_t)d->count[SX_DRA_WHY_FITS] < rd->num_devices;
}

int sx__dra_diagnose(struct alloc *a, struct sx_dra_diag *d)
{
	for (uint32_t p = 0; p < a->npools; p++)
		if (a->pools[p].incomplete || a->pools[p].invalid) {
			if (!d->nskipped++) {
				d->skipped_pool = a->pools[p].pool;
				d->skipped_incomplete = a->pools[p].incomplete;
			}
		}
	for (uint32_t ci = 0; ci < a->nclaims; ci++)
		for (uint32_t ri = 0; ri < a->claims[ci].spec->nrequests; ri++) {
			const struct rreq *rq = &a->reqs[ci][ri];

			if (rq->n && diagnose_request(a, ci, &rq->rd[0], d)) {
				d->found = true;
				return 0;
			}
		}
	d->found = false;
	return 0;
}
