/* Consumable capacity (DRAConsumableCapacity): what one request consumes
 * of a device's capacities under their request policies, whether that
 * still fits beside the shares allocated before and those of the search
 * in progress, share IDs and the canonical quantity strings of results.
 *
 * Upstream: staging/src/k8s.io/dynamic-resource-allocation/structured/
 * internal/incubating/consumable_capacity.go (cmpRequestOverCapacity,
 * resolveDeviceCapacity, resolveCapacityName, calculateConsumedQuantity,
 * roundUpRange, roundUpValidValues, violatesPolicy; the integer
 * arithmetic, DRAFractionalCapacityRange being off) and
 * allocatedstate.go (GenerateShareID). Errors of the arithmetic (a
 * negative or unrepresentable value) make the device unusable, as the
 * allocator of 1.37 skips a device whose comparison fails. */
#include "dra_alloc_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define NANO ((sx_nano)1000000000)

/* The device's capacity named `name` as its driver would resolve it, or
 * NULL (resolveCapacityName): the exact key, else the same identifier
 * with or without the driver's own domain. */
static const struct sx_dra_capacity *resolve(const struct sx_dra_device *dev, sx_str driver,
					     const char *name)
{
	const char *drv = sx_str_get(driver), *slash = strchr(name, '/');
	size_t dl = strlen(drv);

	for (uint32_t i = 0; i < dev->ncaps; i++)
		if (strcmp(dev->caps[i].name, name) == 0)
			return &dev->caps[i];
	for (uint32_t i = 0; i < dev->ncaps; i++) {
		const char *c = dev->caps[i].name;

		if (slash) {
			if ((size_t)(slash - name) == dl && strncmp(name, drv, dl) == 0 &&
			    strcmp(c, slash + 1) == 0)
				return &dev->caps[i];
		} else if (strncmp(c, drv, dl) == 0 && c[dl] == '/' &&
			   strcmp(c + dl + 1, name) == 0) {
			return &dev->caps[i];
		}
	}
	return NULL;
}

/* An unqualified capacity shadowed by the same one qualified with the
 * driver's domain: counted once, as the qualified one
 * (resolveDeviceCapacity). */
static bool shadowed(const struct sx_dra_device *dev, sx_str driver, uint32_t i)
{
	const char *drv = sx_str_get(driver), *n = dev->caps[i].name;
	size_t dl = strlen(drv);

	if (strchr(n, '/'))
		return false;
	for (uint32_t k = 0; k < dev->ncaps; k++) {
		const char *c = dev->caps[k].name;

		if (strncmp(c, drv, dl) == 0 && c[dl] == '/' && strcmp(c + dl + 1, n) == 0)
			return true;
	}
	return false;
}

/* resource.Quantity.Value(): rounded up to a whole unit. */
static sx_nano whole(sx_nano v)
{
	sx_nano u = v / NANO;

	return u * NANO < v ? u + 1 : u;
}

/* roundUpRange, integer path. false when not representable. */
static bool round_up_range(struct sx_dra_qty req, const struct sx_dra_cap_policy *p,
			   struct sx_dra_qty *out)
{
	sx_nano r, mn, st, n;

	if (req.v < p->min.v) {
		*out = p->min;
		return true;
	}
	if (!p->has_step) {
		*out = req;
		return true;
	}
	r = whole(req.v);
	mn = whole(p->min.v);
	st = whole(p->step.v);
	if (st <= 0 || r > INT64_MAX)
		return false;
	n = (r - mn) / st;
	if ((r - mn) % st)
		n++;
	if (mn + st * n > INT64_MAX)
		return false;
	out->v = (mn + st * n) * NANO;
	out->binary = p->step.binary;
	return true;
}

/* calculateConsumedQuantity: what a request (NULL: none for this
 * capacity) consumes of cap. false when not representable. */
static bool consumed_of(const struct sx_dra_qty *req, const struct sx_dra_capacity *cap,
			struct sx_dra_qty *out)
{
	const struct sx_dra_cap_policy *p = cap->policy;

	if (!req) {
		if (p && p->has_default)
			*out = p->def;
		else
			*out = (struct sx_dra_qty){cap->value, cap->binary};
		return true;
	}
	*out = *req;
	if (!p)
		return true;
	if (p->has_range && p->has_min)
		return round_up_range(*req, p, out);
	for (uint32_t i = 0; i < p->nvalid; i++)
		if (req->v <= p->valid[i].v) {
			*out = p->valid[i];
			break;
		}
	return true;
}

/* violatesPolicy */
static bool violates(sx_nano v, const struct sx_dra_cap_policy *p)
{
	if (!p || (p->has_default && v == p->def.v))
		return false;
	if (p->has_range) {
		if (p->has_max && v > p->max.v)
			return true;
		if (p->has_step) {
			sx_nano st = whole(p->step.v), mn = p->has_min ? whole(p->min.v) : 0;

			return st > 0 && (whole(v) - mn) % st != 0;
		}
		return false;
	}
	if (p->nvalid == 0)
		return false;
	for (uint32_t i = 0; i < p->nvalid; i++)
		if (p->valid[i].v == v)
			return false;
	return true;
}

/* The requested quantity for cap (resolved), or NULL; -1 when a request
 * names a capacity the device lacks or names one twice. */
static int requested(const struct sx_dra_exact *req, sx_str driver, const struct sx_dra_device *dev,
		     const struct sx_dra_capacity *cap, const struct sx_dra_qty **out)
{
	*out = NULL;
	for (uint32_t i = 0; i < req->ncapreq; i++) {
		const struct sx_dra_capacity *c = resolve(dev, driver, req->capreq[i].name);

		if (!c)
			return -1; /* the device does not define it */
		if (c != cap)
			continue;
		if (*out)
			return -1; /* requested both qualified and not */
		*out = &req->capreq[i].q;
	}
	return 0;
}

uint32_t sx_dra_consumed(const struct sx_dra_exact *req, sx_str driver,
			 const struct sx_dra_device *dev, struct sx_dra_named_qty *out,
			 uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < dev->ncaps && n < max; i++) {
		const struct sx_dra_qty *rq;

		if (shadowed(dev, driver, i) ||
		    requested(req, driver, dev, &dev->caps[i], &rq) < 0 ||
		    !consumed_of(rq, &dev->caps[i], &out[n].q))
			continue;
		out[n++].name = dev->caps[i].name;
	}
	return n;
}

int sx__dra_capacity_fits(const struct alloc *a, const struct rdata *rd, struct devref d)
{
	const struct sx_dra_slice *s = &d.slice->u.slice;
	const struct sx_dra_device *dev = &s->devices[d.dev];
	const struct sx_dra_exact *req = rd->req;
	bool shared;

	/* The common case, a device allocated whole asked nothing of: it
	 * consumes all of each capacity, which always fits, unless a request
	 * policy says otherwise or shares from before count against it. */
	if (!dev->allow_multiple && req->ncapreq == 0 &&
	    !sx_dra_allocated_any_shared(a->env->allocated) &&
	    !sx_dra_allocated_any_shared(a->env->allocated2)) {
		uint32_t i = 0;

		while (i < dev->ncaps && !dev->caps[i].policy)
			i++;
		if (i == dev->ncaps)
			return 1;
	}
	shared = sx_dra_allocated_shared(a->env->allocated, s->driver, s->pool, dev->name) ||
		 sx_dra_allocated_shared(a->env->allocated2, s->driver, s->pool, dev->name);

	for (uint32_t i = 0; i < req->ncapreq; i++)
		if (!resolve(dev, s->driver, req->capreq[i].name))
			return 0; /* a capacity the device does not define */
	for (uint32_t i = 0; i < dev->ncaps; i++) {
		const struct sx_dra_capacity *cap = &dev->caps[i];
		const struct sx_dra_qty *rq;
		struct sx_dra_qty c;
		sx_nano total;

		if (shadowed(dev, s->driver, i))
			continue;
		if (requested(req, s->driver, dev, cap, &rq) < 0 || !consumed_of(rq, cap, &c) ||
		    c.v < 0 || violates(c.v, cap->policy))
			return 0;
		total = c.v;
		if (shared) {
			total += sx_dra_allocated_consumed(a->env->allocated, s->driver, s->pool,
							   dev->name, cap->name_id);
			total += sx_dra_allocated_consumed(a->env->allocated2, s->driver, s->pool,
							   dev->name, cap->name_id);
		}
		/* what the search has given this device's shares so far */
		for (uint32_t k = 0; k < a->nstack; k++) {
			const struct inflight *f = &a->stack[k];
			const struct sx_dra_qty *fq;
			struct sx_dra_qty fc;

			if (!f->shared || f->device != dev->name || f->pool != s->pool ||
			    f->driver != s->driver)
				continue;
			if (requested(f->req, s->driver, dev, cap, &fq) == 0 &&
			    consumed_of(fq, cap, &fc))
				total += fc.v;
		}
		if (total > cap->value)
			return 0;
	}
	return 1;
}

/* GenerateShareID: k8s.io/apimachinery/pkg/util/uuid NewUUID, which is
 * google/uuid New: a random version 4 UUID, canonical lower-case text. */
void sx__dra_share_id(char out[37])
{
	unsigned char b[16];
	static const char hex[] = "0123456789abcdef";
	int k = 0;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		/* no entropy source: time and address still differ per share */
		uint64_t t = sx_now_ns() ^ (uint64_t)(uintptr_t)out;

		for (int i = 0; i < 16; i++)
			b[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)(i * 37);
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[k++] = '-';
		out[k++] = hex[b[i] >> 4];
		out[k++] = hex[b[i] & 15];
	}
	out[k] = '\0';
}

/* resource.Quantity's canonical string of q (Quantity.String()): the
 * largest exponent that keeps the number whole, binary suffixes for a
 * binary quantity that is a whole number of units, else decimal ones. */
void sx_dra_qty_string(struct sx_dra_qty q, char *buf, size_t len)
{
	static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
	sx_nano v = q.v < 0 ? -q.v : q.v;
	const char *sign = q.v < 0 ? "-" : "";
	int e = 0;

	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	if (q.binary && v % NANO == 0) {
		sx_nano u = v / NANO;

		while (e < 6 && u % 1024 == 0) {
			u /= 1024;
			e++;
		}
		snprintf(buf, len, "%s%llu%s", sign, (unsigned long long)u, bin[e]);
		return;
	}
	/* v in nano units: exponent index 0 = n */
	while (e < 9 && v % 1000 == 0) {
		v /= 1000;
		e++;
	}
	if (v > (sx_nano)UINT64_MAX) {
		snprintf(buf, len, "%s%.0Lf%s", sign, (long double)v, dec[e]);
		return;
	}
	snprintf(buf, len, "%s%llu%s", sign, (unsigned long long)v, dec[e]);
}
