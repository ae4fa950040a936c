/* Extended resources backed by DRA (DRAExtendedResource): which
 * DeviceClass serves an extended resource name, and the special
 * ResourceClaim (requests and container mappings) the scheduler makes for
 * a pod's extended resources on a node that does not advertise them.
 *
 * Upstream: pkg/scheduler/framework/plugins/dynamicresources/
 * extendeddynamicresources.go (preFilterExtendedResources,
 * createRequestsAndMappings, createResourceRequestAndMappings,
 * partitionContainerIndices) and extended/cache.go (the class resolver:
 * spec.extendedResourceName, or the implicit
 * deviceclass.resource.kubernetes.io/<class>). */
#include "dra_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/snapshot.h"

const struct sx_dra_object *sx_dra_class_for_resource(const struct sx_snapshot *snap,
						      const char *name)
{
	const struct sx_dra_object *best = NULL;
	size_t pl = strlen(SX_DRA_CLASS_PREFIX);

	if (strncmp(name, SX_DRA_CLASS_PREFIX, pl) == 0)
		return sx_snapshot_find_dra(snap, SX_KIND_DEVICE_CLASS, SX_STR_EMPTY,
					    sx_intern(name + pl));
	for (uint32_t i = 0; i < snap->ndevice_classes; i++) {
		const struct sx_dra_object *c = snap->device_classes[i];
		const char *ern = c->u.cls.extended_resource_name;

		if (!ern || strcmp(ern, name) != 0)
			continue;
		/* several classes naming one resource: the newest, then by name */
		if (!best || c->meta.creation_ts > best->meta.creation_ts ||
		    (c->meta.creation_ts == best->meta.creation_ts &&
		     strcmp(c->meta.name, best->meta.name) < 0))
			best = c;
	}
	return best;
}

/* The container's request of resource r (0: none). */
static int64_t container_request(const struct sx_container *c, sx_str r)
{
	for (uint32_t i = 0; i < c->requests.nscalar; i++)
		if (c->requests.scalar[i].name == r)
			return c->requests.scalar[i].value;
	return 0;
}

/* The index of r among the container's request names, sorted. */
static int request_index(const struct sx_container *c, sx_str r)
{
	const char *rn = sx_str_get(r);
	int ix = 0;

	if (c->has_cpu_request && strcmp("cpu", rn) < 0)
		ix++;
	if (c->has_memory_request && strcmp("memory", rn) < 0)
		ix++;
	if (c->requests.ephemeral_storage && strcmp("ephemeral-storage", rn) < 0)
		ix++;
	for (uint32_t i = 0; i < c->requests.nscalar; i++)
		if (strcmp(sx_str_get(c->requests.scalar[i].name), rn) < 0)
			ix++;
	return ix;
}

struct ext_req {
	char name[64];
	int64_t count;
	const char *cls;
};

struct ext_map {
	sx_str container, resource;
	char request[64];
	bool short_lived; /* an init container's (not a sidecar) */
};

struct builder {
	struct ext_req *reqs;
	uint32_t nreqs, capreqs;
	struct ext_map *maps;
	uint32_t nmaps, capmaps;
	bool oom;
};

static struct ext_map *add_map(struct builder *b, const struct sx_container *c, sx_str r,
			       const char *req)
{
	struct ext_map *m;

	if (b->nmaps == b->capmaps) {
		uint32_t cap = b->capmaps ? b->capmaps * 2 : 8;
		void *p = realloc(b->maps, cap * sizeof(*b->maps));

		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->maps = p;
		b->capmaps = cap;
	}
	m = &b->maps[b->nmaps++];
	m->container = c->name;
	m->resource = r;
	snprintf(m->request, sizeof(m->request), "%s", req);
	m->short_lived = false;
	return m;
}

static int cmp_req(const void *x, const void *y)
{
	return strcmp(((const struct ext_req *)x)->name, ((const struct ext_req *)y)->name);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(sx_str_get(*(const sx_str *)x), sx_str_get(*(const sx_str *)y));
}

/* createResourceRequestAndMappings: the request container i makes for r
 * (count 0: none), reusing the long-lived requests reuse[0..n). */
static struct ext_req one_request(struct builder *b, int i, const struct sx_container *c, sx_str r,
				  const char *cls, const struct ext_req *const *reuse, int n,
				  bool short_lived)
{
	struct ext_req q = {.cls = cls};
	int64_t crq = container_request(c, r), sum = 0;
	struct ext_map *m;

	if (crq <= 0)
		return q;
	for (int k = 0; k < n; k++) {
		if (!reuse[k])
			continue;
		sum += reuse[k]->count;
		if ((m = add_map(b, c, r, reuse[k]->name)))
			m->short_lived = short_lived;
		if (sum >= crq)
			return q;
	}
	snprintf(q.name, sizeof(q.name), "container-%d-request-%d", i, request_index(c, r));
	q.count = crq - sum;
	if ((m = add_map(b, c, r, q.name)))
		m->short_lived = short_lived;
	return q;
}

static void push_req(struct builder *b, const struct ext_req *q)
{
	if (b->nreqs == b->capreqs) {
		uint32_t cap = b->capreqs ? b->capreqs * 2 : 8;
		void *p = realloc(b->reqs, cap * sizeof(*b->reqs));

		if (!p) {
			b->oom = true;
			return;
		}
		b->reqs = p;
		b->capreqs = cap;
	}
	b->reqs[b->nreqs++] = *q;
}

/* createRequestsAndMappings for the resources res[0..n) (served by
 * classes cls[0..n)). */
static void build(struct builder *b, const struct sx_pod *pod, const sx_str *res,
		  const char *const *cls, uint32_t n)
{
	uint32_t total = pod->ninit + pod->ncontainers;
	const struct ext_req **longreq = calloc(total + 1, sizeof(*longreq));
	struct ext_req *storage = calloc(total + 1, sizeof(*storage));
	sx_str *order = calloc(n + 1, sizeof(*order));
	const char **ocls = calloc(n + 1, sizeof(*ocls));

	if (!longreq || !storage || !order || !ocls) {
		b->oom = true;
		goto out;
	}
	memcpy(order, res, n * sizeof(*order));
	qsort(order, n, sizeof(*order), cmp_str);
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t j = 0; j < n; j++)
			if (res[j] == order[k])
				ocls[k] = cls[j];
	for (uint32_t k = 0; k < n; k++) {
		struct ext_req maxshort = {0};
		uint32_t first_short_map = 0, nshortnames = 0;
		char shortnames[64][64];

		memset(longreq, 0, (total + 1) * sizeof(*longreq));
		for (uint32_t i = 0; i < total; i++) {
			const struct sx_container *c = i < pod->ninit
							       ? &pod->init_containers[i]
							       : &pod->containers[i - pod->ninit];

			if (i < pod->ninit && !c->sidecar)
				continue;
			storage[i] = one_request(b, (int)i, c, order[k], ocls[k], NULL, 0, false);
			if (storage[i].count > 0)
				longreq[i] = &storage[i];
		}
		first_short_map = b->nmaps;
		for (uint32_t i = 0; i < pod->ninit; i++) {
			const struct sx_container *c = &pod->init_containers[i];
			struct ext_req q;

			if (c->sidecar)
				continue;
			q = one_request(b, (int)i, c, order[k], ocls[k], longreq + i,
					(int)(total - i), true);
			if (q.count <= 0)
				continue;
			if (nshortnames < 64)
				snprintf(shortnames[nshortnames++], 64, "%s", q.name);
			if (maxshort.count < q.count)
				maxshort = q;
		}
		/* every short-lived container maps to the largest short-lived request */
		if (maxshort.count > 0 && nshortnames > 1)
			for (uint32_t m = first_short_map; m < b->nmaps; m++)
				for (uint32_t s = 0; s < nshortnames; s++)
					if (strcmp(b->maps[m].request, shortnames[s]) == 0 &&
					    strcmp(shortnames[s], maxshort.name) != 0)
						snprintf(b->maps[m].request, 64, "%s",
							 maxshort.name);
		if (maxshort.count > 0)
			push_req(b, &maxshort);
		for (uint32_t i = 0; i < total; i++)
			if (longreq[i])
				push_req(b, longreq[i]);
	}
	if (b->nreqs > 1)
		qsort(b->reqs, b->nreqs, sizeof(*b->reqs), cmp_req);
out:
	free(longreq);
	free(storage);
	free(order);
	free(ocls);
}

cJSON *sx_dra_extended_claim_json(const struct sx_pod *pod, const sx_str *res,
				  const char *const *cls, uint32_t n, cJSON **mappings)
{
	struct builder b = {0};
	cJSON *claim = NULL, *md, *owners, *owner, *reqs, *maps = NULL;
	char gen[300];

	*mappings = NULL;
	build(&b, pod, res, cls, n);
	if (b.oom || b.nreqs == 0)
		goto out;
	claim = cJSON_CreateObject();
	maps = cJSON_CreateArray();
	if (!claim || !maps)
		goto fail;
	cJSON_AddStringToObject(claim, "apiVersion", "resource.k8s.io/v1");
	cJSON_AddStringToObject(claim, "kind", "ResourceClaim");
	md = cJSON_AddObjectToObject(claim, "metadata");
	cJSON_AddStringToObject(md, "namespace", sx_str_get(pod->meta.ns));
	snprintf(gen, sizeof(gen), "%s-extended-resources-", pod->meta.name);
	cJSON_AddStringToObject(md, "generateName", gen);
	owners = cJSON_AddArrayToObject(md, "ownerReferences");
	owner = cJSON_CreateObject();
	cJSON_AddItemToArray(owners, owner);
	cJSON_AddStringToObject(owner, "apiVersion", "v1");
	cJSON_AddStringToObject(owner, "kind", "Pod");
	cJSON_AddStringToObject(owner, "name", pod->meta.name);
	cJSON_AddStringToObject(owner, "uid", pod->meta.uid);
	cJSON_AddTrueToObject(owner, "controller");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"),
				SX_DRA_EXTENDED_ANNOTATION, "true");
	reqs = cJSON_AddArrayToObject(
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(claim, "spec"), "devices"),
		"requests");
	for (uint32_t i = 0; reqs && i < b.nreqs; i++) {
		cJSON *r = cJSON_CreateObject(), *ex;

		cJSON_AddItemToArray(reqs, r);
		cJSON_AddStringToObject(r, "name", b.reqs[i].name);
		ex = cJSON_AddObjectToObject(r, "exactly");
		cJSON_AddStringToObject(ex, "deviceClassName", b.reqs[i].cls);
		cJSON_AddStringToObject(ex, "allocationMode", "ExactCount");
		cJSON_AddNumberToObject(ex, "count", (double)b.reqs[i].count);
	}
	/* built per resource: the long-lived containers' mappings, then the
	 * short-lived ones' */
	for (uint32_t i = 0; i < b.nmaps; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddItemToArray(maps, m);
		cJSON_AddStringToObject(m, "containerName", sx_str_get(b.maps[i].container));
		cJSON_AddStringToObject(m, "resourceName", sx_str_get(b.maps[i].resource));
		cJSON_AddStringToObject(m, "requestName", b.maps[i].request);
	}
	*mappings = maps;
	goto out;
fail:
	cJSON_Delete(claim);
	cJSON_Delete(maps);
	claim = NULL;
out:
	free(b.reqs);
	free(b.maps);
	return claim;
}

/* ---------- scoring: devices of a class on a node ---------- */

/* Does the device match every CEL selector of the class (none: all do)?
 * 1, 0, or -1 on an evaluation error. */
static int class_matches(const struct sx_dra_object *cls, sx_str driver, sx_str pool,
			 const struct sx_dra_device *dev, sx_dra_match_fn match, void *mctx)
{
	char err[SX_DRA_ERR_LEN];

	for (uint32_t i = 0; i < cls->u.cls.nselectors; i++) {
		const char *expr = cls->u.cls.selectors[i];
		int rc;

		if (!expr)
			continue;
		rc = match(mctx, expr, driver, pool, dev, err, sizeof(err));
		if (rc < 0)
			return -1;
		if (rc == SX_DRA_NO_MATCH)
			return 0;
	}
	return 1;
}

struct class_count {
	const struct sx_dra_object *cls;
	const struct sx_dra_allocated *a, *a2;
	sx_dra_match_fn match;
	void *mctx;
	int64_t capacity, allocated;
};

/* Counts one device of slice s (structured.IsDeviceAllocated: whole or a
 * share). 0 or -1 on a selector error. */
static int count_device(struct class_count *c, const struct sx_dra_slice *s,
			const struct sx_dra_device *dev)
{
	int m = class_matches(c->cls, s->driver, s->pool, dev, c->match, c->mctx);

	if (m <= 0)
		return m;
	c->capacity++;
	if ((c->a && sx__dra_allocated_in_use(c->a, s->driver, s->pool, dev->name, true)) ||
	    (c->a2 && sx__dra_allocated_in_use(c->a2, s->driver, s->pool, dev->name, true)))
		c->allocated++;
	return 0;
}

/* The devices of slice s that serve node, counted (upstream
 * calculateDRAResourceTotals' node filtering, per device with
 * perDeviceNodeSelection, else per slice). 0 or -1. */
static int count_slice(struct class_count *c, const struct sx_dra_slice *s,
		       const struct sx_node *node)
{
	sx_str name = node->name_id;

	if (s->per_device) {
		for (uint32_t d = 0; d < s->ndevices; d++) {
			const struct sx_dra_device *dev = &s->devices[d];

			if (!dev->all_nodes &&
			    (dev->node_name == SX_STR_EMPTY || dev->node_name != name) &&
			    (!dev->node_selector ||
			     !sx_dra_node_matches(node, dev->node_name, dev->all_nodes,
						  dev->node_selector)))
				continue;
			if (count_device(c, s, dev) < 0)
				return -1;
		}
		return 0;
	}
	if (!s->all_nodes && s->node_name != name && s->node_selector) {
		if (!sx_dra_node_matches(node, s->node_name, s->all_nodes, s->node_selector))
			return 0;
	} else if (!s->all_nodes && s->node_name != SX_STR_EMPTY && s->node_name != name) {
		return 0;
	}
	for (uint32_t d = 0; d < s->ndevices; d++)
		if (count_device(c, s, &s->devices[d]) < 0)
			return -1;
	return 0;
}

int sx_dra_class_devices(const struct sx_dra_index *ix, const struct sx_dra_allocated *a,
			 const struct sx_dra_allocated *a2, const struct sx_node *node,
			 const struct sx_dra_object *cls, sx_dra_match_fn match, void *mctx,
			 int64_t *capacity, int64_t *allocated)
{
	struct class_count c = {cls, a, a2, match, mctx, 0, 0};
	uint32_t first, n = sx__dra_node_slices(ix, node->name_id, &first);

	*capacity = 0;
	*allocated = 0;
	/* the slices naming this node, then those naming none (allNodes,
	 * a selector, per-device selection); slices of other nodes never
	 * serve it */
	for (uint32_t i = 0; i < n; i++)
		if (count_slice(&c, &ix->slices[ix->by_node[first + i].slice]->u.slice, node) < 0)
			return -1;
	for (uint32_t i = 0; i < ix->nglobal; i++)
		if (count_slice(&c, &ix->slices[ix->global[i]]->u.slice, node) < 0)
			return -1;
	*capacity = c.capacity;
	*allocated = c.allocated;
	return 0;
}
