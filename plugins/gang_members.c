/* The members of pod groups, shared by GangScheduling and Coscheduling
 * (gang_members.h): groups by (namespace, name), their pods by UID with
 * assumed/bound flags, and the group object each holds a reference to.
 * Followed upstream: the PodGroupManager of
 * pkg/scheduler/framework/plugins/gangscheduling (AddPodGroupMember,
 * DeletePodGroupMember, AssumedPods, ScheduledPodsCount), and
 * kubernetes-sigs/scheduler-plugins pkg/coscheduling/core (the pod lister
 * by label of PodGroupManager.PreFilter, CalculateAssignedPods).
 *
 * Ownership and threads: gang_members.h.
 */
#include "gang_members.h"

#include <stdlib.h>
#include <string.h>

#include "schedext/binding_cycle.h"
#include "schedext/workload.h"

int sx_gang_members_init(struct sx_gang_members *t, enum sx_kind group_kind, const char *label)
{
	memset(t, 0, sizeof(*t));
	t->group_kind = group_kind;
	t->label = SX_STR_EMPTY;
	if (label && (t->label = sx_intern(label)) == SX_STR_INVALID)
		return SX_ENOMEM;
	return pthread_mutex_init(&t->mu, NULL) == 0 ? 0 : SX_ENOMEM;
}

static const void *group_ref(enum sx_kind kind, const void *obj)
{
	if (kind == SX_KIND_POD_GROUP)
		return sx_pod_group_ref(obj);
	return sx_cosched_group_ref(obj);
}

static void group_unref(enum sx_kind kind, const void *obj)
{
	if (!obj)
		return;
	if (kind == SX_KIND_POD_GROUP)
		sx_pod_group_unref(obj);
	else
		sx_cosched_group_unref(obj);
}

void sx_gang_members_destroy(struct sx_gang_members *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		for (uint32_t j = 0; j < t->g[i].n; j++) {
			free(t->g[i].m[j].key);
			free(t->g[i].m[j].name);
		}
		free(t->g[i].m);
		group_unref(t->group_kind, t->g[i].obj);
	}
	free(t->g);
	pthread_mutex_destroy(&t->mu);
	t->g = NULL;
	t->n = t->cap = 0;
}

sx_str sx_gang_group_of(const struct sx_gang_members *t, const struct sx_pod *pod)
{
	sx_str v;

	if (t->label == SX_STR_EMPTY)
		return pod->scheduling_group;
	return sx_labels_get(&pod->meta.labels, t->label, &v) ? v : SX_STR_EMPTY;
}

static struct sx_gang_group *find(const struct sx_gang_members *t, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->g[i].ns == ns && t->g[i].name == name)
			return &t->g[i];
	return NULL;
}

static struct sx_gang_group *find_or_add(struct sx_gang_members *t, sx_str ns, sx_str name)
{
	struct sx_gang_group *g = find(t, ns, name);

	if (g)
		return g;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 8;
		struct sx_gang_group *a = realloc(t->g, cap * sizeof(*a));

		if (!a)
			return NULL;
		t->g = a;
		t->cap = cap;
	}
	t->g[t->n] = (struct sx_gang_group){.ns = ns, .name = name};
	return &t->g[t->n++];
}

static void drop_if_empty(struct sx_gang_members *t, struct sx_gang_group *g)
{
	if (g->n || g->obj)
		return;
	free(g->m);
	*g = t->g[--t->n];
}

static struct sx_gang_member *find_member(const struct sx_gang_group *g, const char *key)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (strcmp(g->m[i].key, key) == 0)
			return &g->m[i];
	return NULL;
}

static struct sx_gang_member *add_member(struct sx_gang_group *g, const char *key, const char *name)
{
	struct sx_gang_member *m = find_member(g, key);

	if (m)
		return m;
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 8;
		struct sx_gang_member *a = realloc(g->m, cap * sizeof(*a));

		if (!a)
			return NULL;
		g->m = a;
		g->cap = cap;
	}
	m = &g->m[g->n];
	*m = (struct sx_gang_member){.key = strdup(key), .name = strdup(name)};
	if (!m->key || !m->name) {
		free(m->key);
		free(m->name);
		return NULL;
	}
	g->n++;
	return m;
}

static void remove_member(struct sx_gang_members *t, struct sx_gang_group *g, const char *key)
{
	struct sx_gang_member *m = find_member(g, key);

	if (!m)
		return;
	free(m->key);
	free(m->name);
	*m = g->m[--g->n];
	drop_if_empty(t, g);
}

static const char *pod_key(const struct sx_pod *p)
{
	return p->meta.uid && p->meta.uid[0] ? p->meta.uid : p->meta.name;
}

void sx_gang_members_event(struct sx_gang_members *t, enum sx_kind kind, const void *old_obj,
			   const void *new_obj)
{
	struct sx_gang_group *g;

	pthread_mutex_lock(&t->mu);
	t->fed |= kind == SX_KIND_POD;
	if (kind == t->group_kind) {
		const void *any = new_obj ? new_obj : old_obj;
		const struct sx_meta *m = kind == SX_KIND_POD_GROUP
						  ? &((const struct sx_pod_group *)any)->meta
						  : &((const struct sx_cosched_group *)any)->meta;
		sx_str name = sx_intern(m->name);

		g = new_obj ? find_or_add(t, m->ns, name) : find(t, m->ns, name);
		if (g) {
			group_unref(kind, g->obj);
			g->obj = new_obj ? group_ref(kind, new_obj) : NULL;
			drop_if_empty(t, g);
		}
	} else if (kind == SX_KIND_POD) {
		const struct sx_pod *o = old_obj, *n = new_obj;
		sx_str og = o ? sx_gang_group_of(t, o) : SX_STR_EMPTY;
		sx_str ng = n ? sx_gang_group_of(t, n) : SX_STR_EMPTY;

		if (og != SX_STR_EMPTY && (!n || ng != og || strcmp(pod_key(n), pod_key(o)) != 0)) {
			g = find(t, o->meta.ns, og);
			if (g)
				remove_member(t, g, pod_key(o));
		}
		if (ng != SX_STR_EMPTY) {
			struct sx_gang_member *m;

			g = find_or_add(t, n->meta.ns, ng);
			m = g ? add_member(g, pod_key(n), n->meta.name) : NULL;
			if (m)
				m->bound = n->node_name != SX_STR_EMPTY;
		}
	}
	pthread_mutex_unlock(&t->mu);
}

void sx_gang_members_assume(struct sx_gang_members *t, const struct sx_pod *pod, bool assumed)
{
	sx_str name = sx_gang_group_of(t, pod);
	struct sx_gang_group *g;
	struct sx_gang_member *m;

	if (name == SX_STR_EMPTY)
		return;
	pthread_mutex_lock(&t->mu);
	g = assumed ? find_or_add(t, pod->meta.ns, name) : find(t, pod->meta.ns, name);
	m = g ? (assumed ? add_member(g, pod_key(pod), pod->meta.name)
			 : find_member(g, pod_key(pod)))
	      : NULL;
	if (m)
		m->assumed = assumed;
	pthread_mutex_unlock(&t->mu);
}

void sx_gang_members_lock(struct sx_gang_members *t)
{
	pthread_mutex_lock(&t->mu);
}

void sx_gang_members_unlock(struct sx_gang_members *t)
{
	pthread_mutex_unlock(&t->mu);
}

const struct sx_gang_group *sx_gang_members_find(const struct sx_gang_members *t, sx_str ns,
						 sx_str name)
{
	return find(t, ns, name);
}

uint32_t sx_gang_group_scheduled(const struct sx_gang_group *g)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->n; i++)
		n += g->m[i].assumed || g->m[i].bound;
	return n;
}

int32_t sx_gang_group_add_bind(struct sx_gang_members *t, sx_str ns, sx_str name, int32_t floor)
{
	struct sx_gang_group *g = find(t, ns, name);

	if (!g)
		return 0;
	g->binds = (g->binds > floor ? g->binds : floor) + 1;
	return g->binds;
}

struct settle {
	const struct sx_gang_members *t;
	sx_str ns, name;
	const char *plugin, *msg;
};

static void settle_one(void *ctx, struct sx_waiting_pod *wp, const struct sx_pod *pod)
{
	const struct settle *s = ctx;

	if (pod->meta.ns != s->ns || sx_gang_group_of(s->t, pod) != s->name)
		return;
	if (s->msg)
		sx_waiting_pod_reject(wp, s->plugin, s->msg);
	else
		sx_waiting_pod_allow(wp, s->plugin);
}

void sx_gang_members_settle_waiting(const struct sx_gang_members *t, struct sx_handle *h, sx_str ns,
				    sx_str name, const char *plugin, const char *msg)
{
	struct settle s = {t, ns, name, plugin, msg};

	if (h)
		sx_handle_iterate_waiting(h, settle_one, &s);
}
