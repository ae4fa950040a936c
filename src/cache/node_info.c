/* NodeInfo: the per-node sums plugins read (upstream pkg/scheduler/framework/types.go NodeInfo).
 *
 * Ownership: a NodeInfo holds one reference on its node and one on its
 * pods block, which holds one reference on each pod it lists; `pods` is
 * the block's array; affinity_pods and required_anti_pods borrow from
 * it. Clones share the block (Go-slice style) instead of copying the
 * array and taking a reference per pod, which cost two atomic operations
 * on a cold pod per pod of the node for every pod the cache assumed: a
 * clone that adds a pod appends in place when nothing was appended past
 * its length (claimed with a CAS, as two clones may race); any other
 * change to a shared block copies it first. Scalar
 * resources in `requested` are kept sorted by name id with no zero entries,
 * so two NodeInfos with the same pods have identical sums.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"
#include "schedext/vec.h"

/* pods[0..used) hold one reference each (NULL = claimed, never filled). */
struct sx__pods_block {
	atomic_int refcount;
	atomic_uint used;
	uint32_t cap;
	const struct sx_pod *pods[];
};

static void pods_block_unref(struct sx__pods_block *b)
{
	if (!b || atomic_fetch_sub(&b->refcount, 1) != 1)
		return;
	for (uint32_t i = 0; i < atomic_load(&b->used); i++)
		sx_pod_unref(b->pods[i]);
	free(b);
}

/* A private block with room for cap pods holding ni's pods (a reference
 * taken on each), replacing ni's; SX_ENOMEM leaves ni unchanged. */
static int pods_copy(struct sx_node_info *ni, uint32_t cap)
{
	struct sx__pods_block *b;

	if (cap < 4)
		cap = 4;
	b = malloc(sizeof(*b) + (size_t)cap * sizeof(b->pods[0]));
	if (!b)
		return SX_ENOMEM;
	atomic_init(&b->refcount, 1);
	atomic_init(&b->used, ni->npods);
	b->cap = cap;
	for (uint32_t i = 0; i < ni->npods; i++)
		b->pods[i] = sx_pod_ref(ni->pods[i]);
	pods_block_unref(ni->pods_block);
	ni->pods_block = b;
	ni->pods = b->pods;
	ni->cap_pods = cap;
	return 0;
}

/* Makes ni's block private, with used == npods (slots past npods dropped). */
static int pods_own(struct sx_node_info *ni)
{
	struct sx__pods_block *b = ni->pods_block;

	if (!b || atomic_load(&b->refcount) != 1)
		return pods_copy(ni, b ? b->cap : ni->npods);
	for (uint32_t i = ni->npods; i < atomic_load(&b->used); i++)
		sx_pod_unref(b->pods[i]);
	atomic_store(&b->used, ni->npods);
	return 0;
}

/* Makes slot pods[npods] writable by ni (it is then counted in used,
 * holding NULL). Last step of reserve_for: nothing after it may fail. */
static int pods_claim_slot(struct sx_node_info *ni)
{
	struct sx__pods_block *b = ni->pods_block;
	unsigned expected = ni->npods;

	if (b && atomic_load(&b->refcount) > 1 && ni->npods < b->cap &&
	    atomic_compare_exchange_strong(&b->used, &expected, ni->npods + 1)) {
		b->pods[ni->npods] = NULL; /* appended in place, shared */
		return 0;
	}
	if (pods_own(ni) < 0)
		return SX_ENOMEM;
	b = ni->pods_block;
	if (ni->npods == b->cap) {
		uint64_t cap = (uint64_t)b->cap * 2;
		struct sx__pods_block *nb;

		if (cap > UINT32_MAX / 2)
			return SX_ENOMEM;
		nb = realloc(b, sizeof(*b) + cap * sizeof(b->pods[0]));
		if (!nb)
			return SX_ENOMEM;
		nb->cap = (uint32_t)cap;
		ni->pods_block = b = nb;
		ni->pods = b->pods;
		ni->cap_pods = b->cap;
	}
	b->pods[ni->npods] = NULL;
	atomic_store(&b->used, ni->npods + 1);
	return 0;
}

static void images_unref(struct sx_node_images *im)
{
	if (im && atomic_fetch_sub(&im->refcount, 1) == 1)
		free(im);
}

struct sx_node_info *sx_node_info_ref(const struct sx_node_info *ni)
{
	struct sx_node_info *m = (struct sx_node_info *)ni;

	if (m)
		atomic_fetch_add_explicit(&m->refcount, 1, memory_order_relaxed);
	return m;
}

static void node_info_free(struct sx_node_info *ni)
{
	pods_block_unref(ni->pods_block);
	sx_node_unref(ni->node);
	free(ni->affinity_pods);
	free(ni->required_anti_pods);
	free(ni->requested.scalar);
	free(ni->used_ports);
	free(ni->pvcs);
	free(ni->ns_counts);
	images_unref(ni->images);
	free(ni);
}

void sx_node_info_unref(const struct sx_node_info *ni)
{
	struct sx_node_info *m = (struct sx_node_info *)ni;
	int old;

	if (!m)
		return;
	old = atomic_fetch_sub_explicit(&m->refcount, 1, memory_order_acq_rel);
	if (old <= 0)
		abort(); /* underflow: a use-after-free in the making */
	if (old == 1)
		node_info_free(m);
}

struct image_tmp {
	sx_str name;
	uint32_t order; /* position in the node's lists: the first one wins */
	int64_t size;
};

static int cmp_image_tmp(const void *a, const void *b)
{
	const struct image_tmp *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* node's image names, each once with its first image's size, sorted by
 * name (O(n log n): the lists come from untrusted Node objects). NULL on
 * OOM or when the node lists no image. */
static struct sx_node_images *flatten_images(const struct sx_node *node)
{
	size_t total = 0, k = 0;
	struct image_tmp *tmp;
	struct sx_node_images *im;

	for (uint32_t i = 0; node && i < node->nimages; i++)
		total += node->images[i].nnames;
	if (total == 0 || total > UINT32_MAX / 2)
		return NULL;
	tmp = malloc(total * sizeof(*tmp));
	im = malloc(sizeof(*im) + total * sizeof(im->e[0]));
	if (!tmp || !im) {
		free(tmp);
		free(im);
		return NULL;
	}
	for (uint32_t i = 0; i < node->nimages; i++)
		for (uint32_t j = 0; j < node->images[i].nnames; j++, k++)
			tmp[k] = (struct image_tmp){node->images[i].names[j], (uint32_t)k,
						    node->images[i].size_bytes};
	qsort(tmp, total, sizeof(*tmp), cmp_image_tmp);
	k = 0;
	for (size_t t = 0; t < total; t++)
		if (t == 0 || tmp[t].name != tmp[t - 1].name)
			im->e[k++] = (struct sx_node_image){tmp[t].name, tmp[t].size};
	free(tmp);
	atomic_init(&im->refcount, 1);
	im->n = (uint32_t)k;
	return im;
}

/* Recomputes the image-name filter and index for ni->node. On OOM the
 * filter stays invalid and readers walk node->images. */
static void compute_image_bloom(struct sx_node_info *ni)
{
	const struct sx_node *node = ni->node;

	images_unref(ni->images);
	ni->images = NULL;
	ni->image_bloom_node = NULL;
	ni->image_bloom[0] = ni->image_bloom[1] = 0;
	if (node && node->nimages > 0) {
		ni->images = flatten_images(node);
		if (!ni->images)
			return;
	}
	for (uint32_t i = 0; ni->images && i < ni->images->n; i++) {
		unsigned bit = sx_node_info_image_bit(ni->images->e[i].name);

		ni->image_bloom[bit >> 6] |= 1ull << (bit & 63);
	}
	ni->image_bloom_node = node;
}

int64_t sx_node_info_image_size(const struct sx_node_info *ni, sx_str name)
{
	const struct sx_node *node = ni->node;

	if (node && ni->image_bloom_node == node) {
		const struct sx_node_images *im = ni->images;
		uint32_t lo = 0, hi = im ? im->n : 0;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (im->e[mid].name < name)
				lo = mid + 1;
			else
				hi = mid;
		}
		return im && lo < im->n && im->e[lo].name == name ? im->e[lo].size : -1;
	}
	for (uint32_t i = 0; node && i < node->nimages; i++)
		for (uint32_t j = 0; j < node->images[i].nnames; j++)
			if (node->images[i].names[j] == name)
				return node->images[i].size_bytes;
	return -1;
}

struct sx_node_info *sx_node_info_new(sx_str name, const struct sx_node *node)
{
	struct sx_node_info *ni = sx_calloc(1, sizeof(*ni));

	if (!ni)
		return NULL;
	atomic_init(&ni->refcount, 1);
	ni->name = name;
	ni->node = sx_node_ref(node);
	ni->generation = sx__next_generation();
	compute_image_bloom(ni);
	return ni;
}

/* Copies n elements of size sz (an empty array stays NULL). */
static void *dup_array(const void *src, uint32_t n, size_t sz, bool *failed)
{
	void *p;

	if (n == 0)
		return NULL;
	p = malloc((size_t)n * sz);
	if (!p)
		*failed = true;
	else
		memcpy(p, src, (size_t)n * sz);
	return p;
}

struct sx_node_info *sx_node_info_clone(const struct sx_node_info *ni)
{
	struct sx_node_info *c = sx_calloc(1, sizeof(*c));
	bool failed = false;

	if (!c)
		return NULL;
	*c = (struct sx_node_info){.generation = ni->generation,
				   .name = ni->name,
				   .requested = ni->requested,
				   .nonzero_milli_cpu = ni->nonzero_milli_cpu,
				   .nonzero_memory = ni->nonzero_memory};
	atomic_init(&c->refcount, 1);
	c->affinity_pods = dup_array(ni->affinity_pods, ni->naffinity, sizeof(void *), &failed);
	c->required_anti_pods =
		dup_array(ni->required_anti_pods, ni->nanti, sizeof(void *), &failed);
	c->requested.scalar = dup_array(ni->requested.scalar, ni->requested.nscalar,
					sizeof(struct sx_scalar), &failed);
	c->used_ports = dup_array(ni->used_ports, ni->nports, sizeof(*ni->used_ports), &failed);
	c->pvcs = dup_array(ni->pvcs, ni->npvcs, sizeof(*ni->pvcs), &failed);
	c->ns_counts = dup_array(ni->ns_counts, ni->nns, sizeof(*ni->ns_counts), &failed);
	if (failed) {
		node_info_free(c); /* counts are still 0: nothing was referenced */
		return NULL;
	}
	c->npods = ni->npods;
	c->pods_block = ni->pods_block; /* shared: see the head comment */
	if (c->pods_block) {
		atomic_fetch_add(&c->pods_block->refcount, 1);
		c->pods = ni->pods;
		c->cap_pods = ni->cap_pods;
	}
	c->naffinity = c->cap_affinity = ni->naffinity;
	c->nanti = c->cap_anti = ni->nanti;
	c->nports = c->cap_ports = ni->nports;
	c->npvcs = c->cap_pvcs = ni->npvcs;
	c->nns = c->cap_ns = ni->nns;
	c->naffinity_any_ns = ni->naffinity_any_ns;
	c->nanti_any_ns = ni->nanti_any_ns;
	c->node = sx_node_ref(ni->node);
	c->image_bloom_node = ni->image_bloom_node;
	c->image_bloom[0] = ni->image_bloom[0];
	c->image_bloom[1] = ni->image_bloom[1];
	c->images = ni->images;
	if (c->images)
		atomic_fetch_add(&c->images->refcount, 1);
	return c;
}

void sx_node_info_set_node(struct sx_node_info *ni, const struct sx_node *node)
{
	const struct sx_node *old = ni->node;

	ni->node = sx_node_ref(node);
	sx_node_unref(old);
	ni->generation = sx__next_generation();
	compute_image_bloom(ni);
}

/* Adds sign * pod's scalar requests into r (sorted, zero entries dropped).
 * r->scalar must have room for r->nscalar + pod's nscalar entries. */
static void add_scalars(struct sx_resources *r, const struct sx_resources *p, int sign)
{
	for (uint32_t k = 0; k < p->nscalar; k++) {
		const struct sx_scalar *s = &p->scalar[k];
		uint32_t lo = 0, hi = r->nscalar;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (r->scalar[mid].name < s->name)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < r->nscalar && r->scalar[lo].name == s->name) {
			r->scalar[lo].value += sign * s->value;
			if (r->scalar[lo].value != 0)
				continue;
			memmove(&r->scalar[lo], &r->scalar[lo + 1],
				(r->nscalar - lo - 1) * sizeof(*r->scalar));
			r->nscalar--;
		} else if (s->value != 0 && sign > 0) { /* removal never inserts */
			memmove(&r->scalar[lo + 1], &r->scalar[lo],
				(r->nscalar - lo) * sizeof(*r->scalar));
			r->scalar[lo] = (struct sx_scalar){s->name, sign * s->value};
			r->nscalar++;
		}
	}
}

static void add_sums(struct sx_node_info *ni, const struct sx_pod *pod, int sign)
{
	struct sx_resources *r = &ni->requested;

	r->milli_cpu += sign * pod->request.milli_cpu;
	r->memory += sign * pod->request.memory;
	r->ephemeral_storage += sign * pod->request.ephemeral_storage;
	r->pods += sign * pod->request.pods;
	add_scalars(r, &pod->request, sign);
	ni->nonzero_milli_cpu += sign * pod->nonzero_milli_cpu;
	ni->nonzero_memory += sign * pod->nonzero_memory;
}

static int find_pvc(const struct sx_node_info *ni, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; i < ni->npvcs; i++)
		if (ni->pvcs[i].ns == ns && ni->pvcs[i].name == name)
			return (int)i;
	return -1;
}

static void count_ns(struct sx_node_info *ni, const struct sx_pod *pod, int sign);

/* Grows every array the pod will need, so the update itself cannot fail. */
static int reserve_for(struct sx_node_info *ni, const struct sx_pod *pod)
{
	uint32_t scap = ni->requested.nscalar;
	void *p;

	if (sx_vec_reserve(ni->affinity_pods, ni->cap_affinity, (uint64_t)ni->naffinity + 1, 4) ||
	    sx_vec_reserve(ni->required_anti_pods, ni->cap_anti, (uint64_t)ni->nanti + 1, 4) ||
	    sx_vec_reserve(ni->used_ports, ni->cap_ports, (uint64_t)ni->nports + pod->nports, 4) ||
	    sx_vec_reserve(ni->pvcs, ni->cap_pvcs, (uint64_t)ni->npvcs + pod->npvcs, 4) ||
	    sx_vec_reserve(ni->ns_counts, ni->cap_ns, (uint64_t)ni->nns + 1, 4))
		return SX_ENOMEM;
	if (pod->request.nscalar > 0) {
		p = realloc(ni->requested.scalar,
			    ((size_t)scap + pod->request.nscalar) * sizeof(struct sx_scalar));
		if (!p)
			return SX_ENOMEM;
		ni->requested.scalar = p;
	}
	return pods_claim_slot(ni);
}

int sx_node_info_add_pod(struct sx_node_info *ni, const struct sx_pod *pod)
{
	if (reserve_for(ni, pod) < 0)
		return SX_ENOMEM;
	ni->pods[ni->npods++] = sx_pod_ref(pod);
	if (sx_pod_has_affinity(pod))
		ni->affinity_pods[ni->naffinity++] = pod;
	if (sx_pod_has_required_anti_affinity(pod))
		ni->required_anti_pods[ni->nanti++] = pod;
	add_sums(ni, pod, 1);
	count_ns(ni, pod, 1);
	for (uint32_t i = 0; i < pod->nports; i++)
		if (pod->ports[i].port > 0)
			ni->used_ports[ni->nports++] = pod->ports[i];
	for (uint32_t i = 0; i < pod->npvcs; i++) {
		int j = find_pvc(ni, pod->meta.ns, pod->pvcs[i]);

		if (j >= 0)
			ni->pvcs[j].count++;
		else
			ni->pvcs[ni->npvcs++] = (struct sx_pvc_ref){pod->meta.ns, pod->pvcs[i], 1};
	}
	ni->generation = sx__next_generation();
	return 0;
}

/* Swap-removes the first element equal to p from a pod pointer list. */
static void drop_ptr(const struct sx_pod **arr, uint32_t *n, const struct sx_pod *p)
{
	for (uint32_t i = 0; i < *n; i++)
		if (arr[i] == p) {
			arr[i] = arr[--*n];
			return;
		}
}

/* ---------- namespace counts ---------- */

/* A term selects only pods of its owner's namespace. */
static bool term_local(const struct sx_pod_affinity_term *t)
{
	return t->nnamespaces == 0 && !t->ns_selector;
}

static bool terms_local(const struct sx_pod_affinity *a)
{
	for (uint32_t i = 0; a && i < a->nrequired; i++)
		if (!term_local(&a->required[i]))
			return false;
	for (uint32_t i = 0; a && i < a->npreferred; i++)
		if (!term_local(&a->preferred[i].term))
			return false;
	return true;
}

static bool affinity_any_ns(const struct sx_pod *pod)
{
	return pod->affinity && (!terms_local(pod->affinity->pod_affinity) ||
				 !terms_local(pod->affinity->pod_anti_affinity));
}

static bool anti_any_ns(const struct sx_pod *pod)
{
	const struct sx_pod_affinity *a = pod->affinity ? pod->affinity->pod_anti_affinity : NULL;

	for (uint32_t i = 0; a && i < a->nrequired; i++)
		if (!term_local(&a->required[i]))
			return true;
	return false;
}

const struct sx_ns_count *sx_node_info_ns(const struct sx_node_info *ni, sx_str ns)
{
	for (uint32_t i = 0; i < ni->nns; i++)
		if (ni->ns_counts[i].ns == ns)
			return &ni->ns_counts[i];
	return NULL;
}

/* Counts pod (sign +1) or uncounts it (-1); room was reserved for a new
 * entry. An entry reaching zero pods is swap-removed. */
static void count_ns(struct sx_node_info *ni, const struct sx_pod *pod, int sign)
{
	struct sx_ns_count *e = (struct sx_ns_count *)sx_node_info_ns(ni, pod->meta.ns);
	bool aff = sx_pod_has_affinity(pod), anti = sx_pod_has_required_anti_affinity(pod);

	if (!e) {
		if (sign < 0)
			return;
		e = &ni->ns_counts[ni->nns++];
		*e = (struct sx_ns_count){.ns = pod->meta.ns};
	}
	e->pods += sign;
	e->affinity += aff ? sign : 0;
	e->anti += anti ? sign : 0;
	if (aff && affinity_any_ns(pod))
		ni->naffinity_any_ns += sign;
	if (anti && anti_any_ns(pod))
		ni->nanti_any_ns += sign;
	if (e->pods == 0)
		*e = ni->ns_counts[--ni->nns];
}

static bool same_port(const struct sx_host_port *a, const struct sx_host_port *b)
{
	return a->ip == b->ip && a->protocol == b->protocol && a->port == b->port;
}

static void drop_claims(struct sx_node_info *ni, const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nports; i++)
		for (uint32_t j = 0; j < ni->nports; j++)
			if (same_port(&ni->used_ports[j], &pod->ports[i])) {
				ni->used_ports[j] = ni->used_ports[--ni->nports];
				break;
			}
	for (uint32_t i = 0; i < pod->npvcs; i++) {
		int j = find_pvc(ni, pod->meta.ns, pod->pvcs[i]);

		if (j >= 0 && --ni->pvcs[j].count == 0)
			ni->pvcs[j] = ni->pvcs[--ni->npvcs];
	}
}

static bool same_pod(const struct sx_pod *a, const struct sx_pod *b)
{
	return a->meta.ns == b->meta.ns && a->meta.name && b->meta.name &&
	       strcmp(a->meta.name, b->meta.name) == 0;
}

/* Subtracts the stored copy's contribution (which may differ from `pod`
 * when the caller passes a newer version). */
int sx_node_info_remove_pod(struct sx_node_info *ni, const struct sx_pod *pod)
{
	const struct sx_pod *stored = NULL;
	uint32_t at = 0;

	while (at < ni->npods && !same_pod(ni->pods[at], pod))
		at++;
	if (at == ni->npods)
		return SX_ENOENT;
	if (pods_own(ni) < 0)
		return SX_ENOMEM;
	stored = ni->pods[at];
	ni->pods[at] = ni->pods[--ni->npods];
	atomic_store(&ni->pods_block->used, ni->npods);
	drop_ptr(ni->affinity_pods, &ni->naffinity, stored);
	drop_ptr(ni->required_anti_pods, &ni->nanti, stored);
	add_sums(ni, stored, -1);
	count_ns(ni, stored, -1);
	drop_claims(ni, stored);
	ni->generation = sx__next_generation();
	sx_pod_unref(stored);
	return 0;
}

static bool wildcard_ip(sx_str ip)
{
	return ip == SX_STR_EMPTY || strcmp(sx_str_get(ip), "0.0.0.0") == 0;
}

bool sx_node_info_port_conflicts(const struct sx_node_info *ni, const struct sx_host_port *p)
{
	for (uint32_t i = 0; i < ni->nports; i++) {
		const struct sx_host_port *u = &ni->used_ports[i];

		if (u->protocol != p->protocol || u->port != p->port)
			continue;
		if (u->ip == p->ip || wildcard_ip(u->ip) || wildcard_ip(p->ip))
			return true;
	}
	return false;
}
