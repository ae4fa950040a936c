/* Claims in flight and assumed (upstream's inFlightAllocations and the
 * ResourceClaim assume cache), the devices in use, and the claim writes
 * through the API server (dra_alloc.h). All of it is one tracker's state
 * (struct sx_dra_claims), owned by the configuration. */
#include "dra_int.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/decode.h"
#include "schedext/hmap.h"
#include "schedext/kube.h"

struct entry {
	char *uid;
	bool pending; /* Reserve..PreBind */
	uint32_t ndevs;
	struct sx_dra_devref *devs;	   /* pending: the devices */
	const struct sx_dra_object *claim; /* assumed: as written */
	struct entry *next;		   /* assumed: the list; dead ones */
};

/* Bounds of the tables: claims in flight, claims of the cluster known to
 * PreEnqueue. Past them an entry is not added (as on allocation
 * failure). RECENT_MAX: pending entries remembered since the last freeze
 * (more, and the next freeze copies the whole set). */
#define PENDING_MAX (1u << 20)
#define KNOWN_MAX   (1u << 22)
#define RECENT_MAX  64
#define CLASSES_MAX (1u << 16)

/* The base set of the last snapshot's claims (pointers compared, the
 * claims held so they cannot be reused meanwhile). */
struct base {
	uint32_t n;
	const struct sx_dra_object **claims;
	struct sx_dra_allocated *set;
};

struct sx_dra_claims {
	pthread_mutex_t mu;	/* guards pending..frozen_gen */
	struct sx_hmap pending; /* sx_hash_str(uid) -> struct entry */
	struct entry *entries;	/* the assumed ones */
	uint32_t nassumed;
	/* The devices of the pending entries, kept as entries are added
	 * (rebuilt after a removal: dirty), and a copy frozen for the cycles
	 * until the next change (gen counts the changes), so a PreFilter
	 * takes a reference instead of walking every pending allocation.
	 * recent: the entries added since the freeze (unless recent_lost: a
	 * removal, or more than RECENT_MAX), so that a frozen copy no cycle
	 * holds any more is brought up to date instead of copied anew. */
	struct sx_dra_allocated *pending_devs, *frozen;
	bool pending_dirty;
	uint64_t gen, frozen_gen;
	uint32_t nrecent;
	bool recent_lost;
	const struct entry *recent[RECENT_MAX];

	pthread_mutex_t base_mu; /* guards base */
	struct base base;

	/* PreEnqueue runs under the queue's lock, which the cache listener
	 * holds while it is under the cache's: it cannot take a snapshot.
	 * The live cache's events feed this table instead (lock order:
	 * cache, queue, this table). */
	pthread_mutex_t known_mu; /* guards known, tracking */
	struct sx_hmap known;	  /* known_hash(ns, name) -> the claim (a reference) */
	bool tracking;
	/* The DeviceClasses, for the extended resources they serve (upstream
	 * DefaultDRAManager.DeviceClassResolver, the extended resource cache
	 * fed by DeviceClass events), under known_mu with the claims. */
	struct sx_hmap classes; /* name_id -> the class (a reference) */

	struct sx_dra_index_cache ix;
};

struct sx_dra_claims *sx_dra_claims_new(void)
{
	struct sx_dra_claims *m = sx_calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	pthread_mutex_init(&m->base_mu, NULL);
	pthread_mutex_init(&m->known_mu, NULL);
	pthread_mutex_init(&m->ix.mu, NULL);
	sx_hmap_init(&m->pending, PENDING_MAX);
	sx_hmap_init(&m->known, KNOWN_MAX);
	sx_hmap_init(&m->classes, CLASSES_MAX);
	m->pending_dirty = true;
	return m;
}

static bool uid_eq(uint64_t val, const void *uid)
{
	return strcmp(((const struct entry *)(uintptr_t)val)->uid, uid) == 0;
}

/* The slot of the pending entry of uid (m->mu held), or NULL. */
static struct sx_hmap_slot *find_pending(struct sx_dra_claims *m, const char *uid)
{
	return m->pending.n ? sx_hmap_find(&m->pending, sx_hash_str(uid), uid_eq, uid) : NULL;
}

static struct entry **find_assumed(struct sx_dra_claims *m, const char *uid)
{
	struct entry **e;

	for (e = &m->entries; *e; e = &(*e)->next)
		if (strcmp((*e)->uid, uid) == 0)
			return e;
	return NULL;
}

static void entry_free(struct entry *e)
{
	free(e->uid);
	free(e->devs);
	sx_dra_unref(e->claim);
	free(e);
}

/* Adds e's devices (not those of admin access) to a. */
static int add_pending_devs(struct sx_dra_allocated *a, const struct entry *e)
{
	for (uint32_t i = 0; i < e->ndevs; i++) {
		const struct sx_dra_devref *d = &e->devs[i];

		if (d->admin_access)
			continue;
		if (d->shared
			    ? sx_dra_allocated_add_shared(a, d->driver, d->pool, d->device,
							  d->cons_name, d->cons_value, d->ncons) < 0
			    : sx_dra_allocated_add(a, d->driver, d->pool, d->device) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

int sx_dra_pending_add(struct sx_dra_claims *m, const char *uid, const struct sx_dra_claim_out *out)
{
	struct entry *e = calloc(1, sizeof(*e));
	int rc;

	if (!e || !(e->uid = strdup(uid ? uid : "")) ||
	    !(e->devs = calloc(out->npicks + 1, sizeof(*e->devs)))) {
		if (e)
			free(e->uid);
		free(e);
		return SX_ENOMEM;
	}
	e->pending = true;
	for (uint32_t i = 0; i < out->npicks; i++) {
		const struct sx_dra_pick *p = &out->picks[i];
		struct sx_dra_devref *d = &e->devs[e->ndevs++];

		memset(d, 0, sizeof(*d));
		d->driver = p->driver;
		d->pool = p->pool;
		d->device = p->device;
		d->admin_access = p->admin_access;
		if (p->shared && p->req && p->dev) {
			/* a share: what it consumes counts until PreBind */
			struct sx_dra_named_qty q[SX_DRA_SHARE_CAPS];

			d->shared = true;
			d->ncons = sx_dra_consumed(p->req, p->driver, p->dev, q, SX_DRA_SHARE_CAPS);
			for (uint32_t k = 0; k < d->ncons; k++) {
				d->cons_name[k] = sx_intern(q[k].name);
				d->cons_value[k] = q[k].q.v;
			}
		}
	}
	pthread_mutex_lock(&m->mu);
	rc = sx_hmap_add(&m->pending, sx_hash_str(e->uid), e);
	if (rc == 0) {
		if (!m->pending_dirty && add_pending_devs(m->pending_devs, e) < 0)
			m->pending_dirty = true;
		if (m->nrecent < RECENT_MAX)
			m->recent[m->nrecent++] = e;
		else
			m->recent_lost = true;
		m->gen++;
	}
	pthread_mutex_unlock(&m->mu);
	if (rc < 0)
		entry_free(e);
	return rc < 0 ? SX_ENOMEM : 0;
}

static bool remove_entry(struct sx_dra_claims *m, const char *uid, bool is_pending)
{
	struct entry **e, *dead = NULL;
	struct sx_hmap_slot *s;

	pthread_mutex_lock(&m->mu);
	if (is_pending && (s = find_pending(m, uid ? uid : ""))) {
		dead = sx_hmap_ptr(s);
		sx_hmap_del_slot(&m->pending, s);
		m->pending_dirty = true;
		m->recent_lost = true; /* dead may be among them */
		m->gen++;
	} else if (!is_pending && (e = find_assumed(m, uid ? uid : ""))) {
		dead = *e;
		*e = dead->next;
		m->nassumed--;
	}
	pthread_mutex_unlock(&m->mu);
	if (dead)
		entry_free(dead);
	return dead != NULL;
}

bool sx_dra_pending_remove(struct sx_dra_claims *m, const char *uid)
{
	return remove_entry(m, uid, true);
}

bool sx_dra_pending_has(struct sx_dra_claims *m, const char *uid)
{
	bool has;

	pthread_mutex_lock(&m->mu);
	has = find_pending(m, uid ? uid : "") != NULL;
	pthread_mutex_unlock(&m->mu);
	return has;
}

void sx_dra_assume(struct sx_dra_claims *m, const struct sx_dra_object *claim)
{
	struct entry *e = calloc(1, sizeof(*e));

	sx_dra_assume_drop(m, claim->meta.uid);
	if (!e || !(e->uid = strdup(claim->meta.uid ? claim->meta.uid : ""))) {
		free(e);
		return; /* the claim is simply not assumed: the watch catches up */
	}
	e->claim = sx_dra_ref(claim);
	pthread_mutex_lock(&m->mu);
	e->next = m->entries;
	m->entries = e;
	m->nassumed++;
	pthread_mutex_unlock(&m->mu);
}

void sx_dra_assume_drop(struct sx_dra_claims *m, const char *uid)
{
	remove_entry(m, uid, false);
}

/* Numeric resourceVersion comparison (the assume cache's rule); a
 * non-numeric version counts as newer. */
static bool newer_or_same(const char *snap_rv, const char *assumed_rv)
{
	char *end;
	unsigned long long a, b;

	if (!snap_rv || !assumed_rv)
		return snap_rv != NULL;
	a = strtoull(snap_rv, &end, 10);
	if (*end)
		return true;
	b = strtoull(assumed_rv, &end, 10);
	return *end || a >= b;
}

const struct sx_dra_object *sx_dra_claim_current(struct sx_dra_claims *m,
						 const struct sx_dra_object *snap_claim, sx_str ns,
						 const char *name)
{
	const struct sx_dra_object *out = NULL;
	struct entry **e, *dead = NULL;

	pthread_mutex_lock(&m->mu);
	for (e = &m->entries; m->nassumed && *e; e = &(*e)->next) {
		const struct sx_dra_object *c = (*e)->claim;

		if (c->meta.ns != ns || strcmp(c->meta.name, name) != 0)
			continue;
		if (snap_claim &&
		    (strcmp(snap_claim->meta.uid ? snap_claim->meta.uid : "",
			    c->meta.uid ? c->meta.uid : "") != 0 ||
		     newer_or_same(snap_claim->meta.resource_version, c->meta.resource_version))) {
			dead = *e;
			*e = dead->next;
			m->nassumed--;
		} else {
			out = sx_dra_ref(c);
		}
		break;
	}
	pthread_mutex_unlock(&m->mu);
	if (dead)
		entry_free(dead);
	return out ? out : sx_dra_ref(snap_claim);
}

static void base_clear(struct base *base)
{
	for (uint32_t i = 0; i < base->n; i++)
		sx_dra_unref(base->claims[i]);
	free(base->claims);
	sx_dra_allocated_free(base->set);
	memset(base, 0, sizeof(*base));
}

struct sx_dra_allocated *sx_dra_allocated_base(struct sx_dra_claims *m,
					       const struct sx_snapshot *snap)
{
	uint32_t n = snap->nresource_claims;
	struct sx_dra_allocated *set = NULL;
	const struct sx_dra_object **copy;

	pthread_mutex_lock(&m->base_mu);
	if (m->base.set && m->base.n == n &&
	    (n == 0 || memcmp(m->base.claims, snap->resource_claims, n * sizeof(*copy)) == 0))
		set = sx_dra_allocated_ref(m->base.set);
	pthread_mutex_unlock(&m->base_mu);
	if (set)
		return set;
	set = sx_dra_allocated_new();
	copy = calloc(n + 1, sizeof(*copy));
	for (uint32_t i = 0; set && copy && i < n; i++) {
		copy[i] = sx_dra_ref(snap->resource_claims[i]);
		if (sx_dra_allocated_add_allocation(set, copy[i]->u.claim.allocation) < 0) {
			for (uint32_t k = 0; k <= i; k++)
				sx_dra_unref(copy[k]);
			free(copy);
			sx_dra_allocated_free(set);
			return NULL;
		}
	}
	if (!set || !copy) {
		free(copy);
		sx_dra_allocated_free(set);
		return NULL;
	}
	pthread_mutex_lock(&m->base_mu);
	base_clear(&m->base);
	m->base.n = n;
	m->base.claims = copy;
	m->base.set = sx_dra_allocated_ref(set);
	pthread_mutex_unlock(&m->base_mu);
	return set;
}

/* Adds the entries added since the freeze to the frozen copy a, which no
 * cycle holds (m->mu held): a equals pending_devs then. 0 or SX_ENOMEM. */
static int add_recent(struct sx_dra_allocated *a, const struct sx_dra_claims *m)
{
	for (uint32_t i = 0; i < m->nrecent; i++)
		if (add_pending_devs(a, m->recent[i]) < 0)
			return SX_ENOMEM;
	return 0;
}

/* The pending devices as of now, frozen (m->mu held); NULL on OOM. */
static struct sx_dra_allocated *frozen_pending(struct sx_dra_claims *m)
{
	if (m->pending_dirty) {
		struct sx_dra_allocated *a = sx_dra_allocated_new();
		struct sx_hmap_slot *s;

		for (uint32_t i = 0; a && (s = sx_hmap_next(&m->pending, &i));)
			if (add_pending_devs(a, sx_hmap_ptr(s)) < 0) {
				sx_dra_allocated_free(a);
				return NULL;
			}
		if (!a)
			return NULL;
		sx_dra_allocated_free(m->pending_devs);
		m->pending_devs = a;
		m->pending_dirty = false;
	}
	if (!m->frozen || m->frozen_gen != m->gen) {
		struct sx_dra_allocated *f = NULL;

		if (m->frozen && !m->recent_lost && sx__dra_allocated_exclusive(m->frozen) &&
		    add_recent(m->frozen, m) == 0)
			f = sx_dra_allocated_ref(m->frozen);
		else
			f = sx_dra_allocated_clone(m->pending_devs);
		if (!f)
			return NULL;
		sx_dra_allocated_free(m->frozen);
		m->frozen = f;
		m->frozen_gen = m->gen;
		m->nrecent = 0;
		m->recent_lost = false;
	}
	return m->frozen;
}

/* Adds the allocations of the assumed claims the snapshot has not caught
 * up with to *a (copied from the shared set first); drops the others onto
 * *dead. */
static int add_assumed(struct sx_dra_claims *m, const struct sx_snapshot *snap,
		       struct sx_dra_allocated **a, struct entry **dead)
{
	for (struct entry **pe = &m->entries, *e; (e = *pe);) {
		const struct sx_dra_object *c = e->claim;
		const struct sx_dra_object *sc = sx_snapshot_find_dra(
			snap, SX_KIND_RESOURCE_CLAIM, c->meta.ns, sx_intern(c->meta.name));

		if (sc &&
		    (strcmp(sc->meta.uid ? sc->meta.uid : "", c->meta.uid ? c->meta.uid : "") ||
		     newer_or_same(sc->meta.resource_version, c->meta.resource_version))) {
			*pe = e->next; /* the snapshot caught up */
			e->next = *dead;
			*dead = e;
			m->nassumed--;
			continue;
		}
		pe = &e->next;
		if (!c->u.claim.allocation || c->u.claim.allocation->nresults == 0)
			continue;
		if (*a == m->frozen) {
			struct sx_dra_allocated *own = sx_dra_allocated_clone(m->frozen);

			sx_dra_allocated_free(*a);
			*a = own;
			if (!own)
				return SX_ENOMEM;
		}
		if (sx_dra_allocated_add_allocation(*a, c->u.claim.allocation) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

struct sx_dra_allocated *sx_dra_inflight(struct sx_dra_claims *m, const struct sx_snapshot *snap)
{
	struct entry *dead = NULL;
	struct sx_dra_allocated *a;

	pthread_mutex_lock(&m->mu);
	a = sx_dra_allocated_ref(frozen_pending(m));
	if (a && add_assumed(m, snap, &a, &dead) < 0) {
		sx_dra_allocated_free(a);
		a = NULL;
	}
	pthread_mutex_unlock(&m->mu);
	while (dead) {
		struct entry *next = dead->next;

		entry_free(dead);
		dead = next;
	}
	return a;
}

struct sx_dra_index *sx_dra_index_get(struct sx_dra_claims *m, const struct sx_snapshot *snap)
{
	return sx__dra_index_cached(&m->ix, snap);
}

/* ---------- API ---------- */

static int decode_claim(const char *body, size_t len, struct sx_dra_object **out, char *msg,
			size_t mlen)
{
	cJSON *j = cJSON_ParseWithLength(body, len);
	struct sx_error err = {0};
	struct sx_object o;
	int rc;

	if (!j) {
		snprintf(msg, mlen, "undecodable ResourceClaim in the API response");
		return SX_EINVAL;
	}
	rc = sx_decode_object(j, "ResourceClaim", &o, &err);
	cJSON_Delete(j);
	if (rc < 0) {
		snprintf(msg, mlen, "decode ResourceClaim: %s: %s", err.path, err.msg);
		return rc;
	}
	*out = o.obj;
	return 0;
}

static int request(struct sx_kube *k, const char *method, const char *ns, const char *name,
		   bool status, const char *body, struct sx_dra_object **out, char *msg,
		   size_t mlen)
{
	char path[1024], *resp = NULL;
	struct sx_error err = {0};
	size_t rlen = 0;
	long code = 0;
	int rc;

	if (out)
		*out = NULL;
	if (!k) {
		snprintf(msg, mlen, "no API client");
		return SX_EIO;
	}
	snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims%s%s%s",
		 ns, *name ? "/" : "", name, status ? "/status" : "");
	rc = sx_kube_request(k, method, path,
			     !body			   ? NULL
			     : strcmp(method, "POST") == 0 ? "application/json"
							   : "application/merge-patch+json",
			     body, body ? strlen(body) : 0, &code, &resp, &rlen, &err);
	if (rc < 0) {
		snprintf(msg, mlen, "%s", err.msg);
		free(resp);
		return SX_EIO;
	}
	if (code / 100 != 2) {
		sx_kube_status_message(resp, rlen, code, msg, mlen);
		free(resp);
		return code == 409 ? SX_ECONFLICT : code == 404 ? SX_ENOENT : SX_EIO;
	}
	rc = out ? decode_claim(resp ? resp : "", rlen, out, msg, mlen) : 0;
	free(resp);
	return rc;
}

int sx_dra_patch_claim(struct sx_kube *kube, const char *ns, const char *name, bool status,
		       const char *body, struct sx_dra_object **out, char *msg, size_t len)
{
	return request(kube, "PATCH", ns, name, status, body, out, msg, len);
}

int sx_dra_get_claim(struct sx_kube *kube, const char *ns, const char *name,
		     struct sx_dra_object **out, char *msg, size_t len)
{
	return request(kube, "GET", ns, name, false, NULL, out, msg, len);
}

int sx_dra_create_claim(struct sx_kube *kube, const char *ns, const char *body,
			struct sx_dra_object **out, char *msg, size_t len)
{
	return request(kube, "POST", ns, "", false, body, out, msg, len);
}

int sx_dra_delete_claim(struct sx_kube *kube, const char *ns, const char *name, char *msg,
			size_t len)
{
	int rc = request(kube, "DELETE", ns, name, false, NULL, NULL, msg, len);

	return rc == SX_ENOENT ? 0 : rc;
}

int sx_dra_patch_pod_status(struct sx_kube *kube, const char *ns, const char *name,
			    const char *body, char *msg, size_t mlen)
{
	struct sx_error err = {0};
	char path[1024], *resp = NULL;
	size_t rlen = 0;
	long code = 0;
	int rc;

	if (!kube) {
		snprintf(msg, mlen, "no API client");
		return SX_EIO;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	rc = sx_kube_request(kube, "PATCH", path, "application/strategic-merge-patch+json", body,
			     strlen(body), &code, &resp, &rlen, &err);
	if (rc < 0) {
		snprintf(msg, mlen, "%s", err.msg);
		rc = SX_EIO;
	} else if (code / 100 != 2) {
		sx_kube_status_message(resp, rlen, code, msg, mlen);
		rc = code == 409 ? SX_ECONFLICT : code == 404 ? SX_ENOENT : SX_EIO;
	}
	free(resp);
	return rc;
}

/* ---------- claims known to PreEnqueue (struct sx_dra_claims.known) ---------- */

struct known_key {
	sx_str ns;
	const char *name;
};

static uint64_t known_hash(sx_str ns, const char *name)
{
	return sx_hash_str(name) ^ (uint64_t)ns * 0x9E3779B97F4A7C15ull;
}

static bool known_eq(uint64_t val, const void *key)
{
	const struct sx_dra_object *c = (const void *)(uintptr_t)val;
	const struct known_key *k = key;

	return c->meta.ns == k->ns && strcmp(c->meta.name, k->name) == 0;
}

/* The slot of the known claim ns/name (m->known_mu held), or NULL. */
static struct sx_hmap_slot *known_find(struct sx_dra_claims *m, sx_str ns, const char *name)
{
	struct known_key k = {ns, name};

	return m->known.n ? sx_hmap_find(&m->known, known_hash(ns, name), known_eq, &k) : NULL;
}

/* Drops every known claim (m->known_mu held, or m unreachable). */
static void known_clear(struct sx_dra_claims *m)
{
	struct sx_hmap_slot *s;

	for (uint32_t i = 0; (s = sx_hmap_next(&m->known, &i));)
		sx_dra_unref(sx_hmap_ptr(s));
	sx_hmap_clear(&m->known);
}

/* Drops every class (m->known_mu held, or m unreachable). */
static void classes_clear(struct sx_dra_claims *m)
{
	struct sx_hmap_slot *s;

	for (uint32_t i = 0; (s = sx_hmap_next(&m->classes, &i));)
		sx_dra_unref((const struct sx_dra_object *)(uintptr_t)s->val);
	sx_hmap_clear(&m->classes);
}

void sx_dra_track_claims(struct sx_dra_claims *m, bool on)
{
	pthread_mutex_lock(&m->known_mu);
	m->tracking = on;
	if (!on) {
		known_clear(m);
		classes_clear(m);
	}
	pthread_mutex_unlock(&m->known_mu);
}

void sx_dra_class_event(struct sx_dra_claims *m, const struct sx_dra_object *old_class,
			const struct sx_dra_object *new_class)
{
	const struct sx_dra_object *c = new_class ? new_class : old_class;
	const struct sx_dra_object *dead = NULL;

	if (!c)
		return;
	pthread_mutex_lock(&m->known_mu);
	if (m->tracking && !new_class) {
		dead = m->classes.n ? (const void *)(uintptr_t)sx_hmap_del(&m->classes, c->name_id)
				    : NULL;
	} else if (m->tracking) {
		struct sx_hmap_slot *s =
			m->classes.n ? sx_hmap_slot(&m->classes, c->name_id) : NULL;

		if (s) {
			dead = (const void *)(uintptr_t)s->val;
			s->val = (uintptr_t)sx_dra_ref(new_class);
		} else if (sx_hmap_put(&m->classes, c->name_id, (uintptr_t)new_class) == 0) {
			sx_dra_ref(new_class);
		}
	}
	pthread_mutex_unlock(&m->known_mu);
	sx_dra_unref(dead);
}

int sx_dra_resource_backed(struct sx_dra_claims *m, const char *name)
{
	size_t pl = strlen(SX_DRA_CLASS_PREFIX);
	struct sx_hmap_slot *s;
	int rc = 0;

	if (!m)
		return -1;
	pthread_mutex_lock(&m->known_mu);
	if (!m->tracking)
		rc = -1;
	else if (strncmp(name, SX_DRA_CLASS_PREFIX, pl) == 0) {
		sx_str id = sx_intern_lookup_n(name + pl, strlen(name + pl));

		rc = id != SX_STR_INVALID && m->classes.n && sx_hmap_slot(&m->classes, id) != NULL;
	} else
		for (uint32_t i = 0; !rc && (s = sx_hmap_next(&m->classes, &i));) {
			const struct sx_dra_object *c = (const void *)(uintptr_t)s->val;
			const char *ern = c->u.cls.extended_resource_name;

			rc = ern && strcmp(ern, name) == 0;
		}
	pthread_mutex_unlock(&m->known_mu);
	return rc;
}

void sx_dra_claim_event(struct sx_dra_claims *m, const struct sx_dra_object *old_claim,
			const struct sx_dra_object *new_claim)
{
	const struct sx_dra_object *c = new_claim ? new_claim : old_claim;
	const struct sx_dra_object *dead = NULL;
	struct sx_hmap_slot *k;

	if (!c || !c->meta.name)
		return;
	pthread_mutex_lock(&m->known_mu);
	if (!m->tracking)
		goto out;
	k = known_find(m, c->meta.ns, c->meta.name);
	if (k) {
		dead = sx_hmap_ptr(k);
		if (new_claim)
			k->val = (uintptr_t)sx_dra_ref(new_claim); /* same ns and name: same key */
		else
			sx_hmap_del_slot(&m->known, k);
	} else if (new_claim &&
		   sx_hmap_add(&m->known, known_hash(c->meta.ns, c->meta.name), new_claim) == 0) {
		sx_dra_ref(new_claim);
	}
out:
	pthread_mutex_unlock(&m->known_mu);
	sx_dra_unref(dead);
}

int sx_dra_claim_known(struct sx_dra_claims *m, sx_str ns, const char *name,
		       const struct sx_dra_object **out)
{
	struct sx_hmap_slot *k;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&m->known_mu);
	if (!m->tracking) {
		pthread_mutex_unlock(&m->known_mu);
		return -1;
	}
	k = known_find(m, ns, name);
	rc = k != NULL;
	if (k)
		*out = sx_dra_ref(sx_hmap_ptr(k));
	pthread_mutex_unlock(&m->known_mu);
	return rc;
}

/* Entries of one chain (the assumed list). */
static void entries_free(struct entry *e)
{
	while (e) {
		struct entry *next = e->next;

		entry_free(e);
		e = next;
	}
}

void sx_dra_claims_free(struct sx_dra_claims *m)
{
	struct sx_hmap_slot *s;

	if (!m)
		return;
	for (uint32_t i = 0; (s = sx_hmap_next(&m->pending, &i));)
		entry_free(sx_hmap_ptr(s));
	sx_hmap_clear(&m->pending);
	entries_free(m->entries);
	sx_dra_allocated_free(m->pending_devs);
	sx_dra_allocated_free(m->frozen);
	base_clear(&m->base);
	known_clear(m);
	classes_clear(m);
	sx_dra_index_unref(m->ix.cached);
	pthread_mutex_destroy(&m->mu);
	pthread_mutex_destroy(&m->base_mu);
	pthread_mutex_destroy(&m->known_mu);
	pthread_mutex_destroy(&m->ix.mu);
	free(m);
}
