/* Preemption units (victim_units.h): upstream
 * pkg/scheduler/framework/preemption/types.go (getCrossNodesVictims,
 * searchCrossNodesVictimPods, NewPodVictim, NewVictim, newDomainVictim),
 * podgrouppreemption.go (moreImportantVictim) and util.go
 * (FilterVictimsWithPDBViolation, GetPodPriority). */
#include <stdlib.h>
#include <string.h>

#include "victim_units.h"

#include "schedext/podgroup.h"
#include "schedext/preemption.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

const struct sx_pod_group *sx_victim_pod_group(const struct sx_snapshot *snap, sx_str ns,
					       sx_str name)
{
	const char *want = sx_str_get(name);

	for (uint32_t i = 0; i < snap->npod_groups; i++) {
		const struct sx_pod_group *g = snap->pod_groups[i];

		if (g->meta.ns == ns && strcmp(g->meta.name, want) == 0)
			return g;
	}
	return NULL;
}

int32_t sx_victim_pod_priority(const struct sx_snapshot *snap, const struct sx_pod *p)
{
	const struct sx_pod_group *g =
		p->scheduling_group != SX_STR_EMPTY
			? sx_victim_pod_group(snap, p->meta.ns, p->scheduling_group)
			: NULL;

	return g ? sx_pod_group_priority(g) : p->priority;
}

/* GetPodStartTime: an unset start time is "now", later than any recorded. */
static int64_t start_of(const struct sx_pod *p)
{
	return p->start_time ? p->start_time : INT64_MAX;
}

bool sx_victim_unit_more_important(const struct sx_victim_unit *a, const struct sx_victim_unit *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->group != b->group)
		return a->group;
	if (a->group && a->n != b->n)
		return a->n > b->n;
	return a->earliest < b->earliest;
}

void sx_victim_units_sort(struct sx_victim_unit **u, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct sx_victim_unit *x = u[i];
		uint32_t j = i;

		while (j > 0 && sx_victim_unit_more_important(x, u[j - 1])) {
			u[j] = u[j - 1];
			j--;
		}
		u[j] = x;
	}
}

static int unit_add(struct sx_victim_unit *u, const struct sx_pod *p, sx_str node, uint32_t cap)
{
	if (!u->pods && cap <= 1) {
		u->pods = &u->one_pod;
		u->nodes = &u->one_node;
		u->earliest = INT64_MAX;
	} else if (!u->pods) {
		u->pods = sx_calloc(cap, sizeof(*u->pods));
		u->nodes = sx_calloc(cap, sizeof(*u->nodes));
		if (!u->pods || !u->nodes)
			return SX_ENOMEM;
		u->earliest = INT64_MAX;
	}
	u->pods[u->n] = p;
	u->nodes[u->n++] = node;
	if (start_of(p) < u->earliest)
		u->earliest = start_of(p);
	return 0;
}

void sx_victim_units_free(struct sx_victim_unit *u, uint32_t n)
{
	for (uint32_t i = 0; u && i < n; i++) {
		if (u[i].pods == &u[i].one_pod)
			continue;
		free(u[i].pods);
		free(u[i].nodes);
	}
	free(u);
}

static uint32_t node_at(const uint32_t *at, uint32_t i)
{
	return at ? at[i] : i;
}

/* searchCrossNodesVictimPods: every scheduled pod of p's group, from
 * every node of the snapshot (its PodGroupState's scheduled pods). */
static int whole_group(const struct sx_snapshot *snap, const struct sx_pod *p,
		       struct sx_victim_unit *u, uint32_t cap)
{
	for (uint32_t a = 0; a < snap->nnodes; a++)
		for (uint32_t b = 0; b < snap->nodes[a]->npods; b++) {
			const struct sx_pod *q = snap->nodes[a]->pods[b];

			if (q->meta.ns == p->meta.ns &&
			    q->scheduling_group == p->scheduling_group &&
			    unit_add(u, q, snap->nodes[a]->name, cap) < 0)
				return SX_ENOMEM;
		}
	return 0;
}

static bool seen_whole(const struct sx_victim_unit *u, uint32_t n, const struct sx_pod *p)
{
	for (uint32_t k = 0; k < n; k++)
		if (u[k].whole && u[k].pods[0]->meta.ns == p->meta.ns &&
		    u[k].pods[0]->scheduling_group == p->scheduling_group)
			return true;
	return false;
}

int sx_victim_units_collect(const struct sx_snapshot *snap, const uint32_t *at, uint32_t nat,
			    bool groups, struct sx_victim_unit **out, uint32_t *nout)
{
	uint32_t total = 0, npods = 0, n = 0, nn = at ? nat : snap->nnodes;
	struct sx_victim_unit *u;

	for (uint32_t i = 0; i < snap->nnodes; i++)
		total += snap->nodes[i]->npods;
	for (uint32_t i = 0; i < nn; i++)
		npods += snap->nodes[node_at(at, i)]->npods;
	*out = u = sx_calloc(npods ? npods : 1, sizeof(*u));
	*nout = 0;
	if (!u)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < nn; i++) {
		const struct sx_node_info *ni = snap->nodes[node_at(at, i)];

		for (uint32_t j = 0; j < ni->npods; j++) {
			const struct sx_pod *p = ni->pods[j];
			const struct sx_pod_group *g =
				groups && p->scheduling_group != SX_STR_EMPTY
					? sx_victim_pod_group(snap, p->meta.ns, p->scheduling_group)
					: NULL;

			if (!g || g->spec.disruption != SX_DISRUPTION_ALL) {
				u[n].priority = g ? sx_pod_group_priority(g) : p->priority;
				u[n].group = groups && p->scheduling_group != SX_STR_EMPTY;
				if (unit_add(&u[n++], p, ni->name, 1) < 0)
					goto oom;
				continue;
			}
			if (seen_whole(u, n, p))
				continue;
			u[n].group = u[n].whole = true;
			u[n].priority = sx_pod_group_priority(g);
			if (whole_group(snap, p, &u[n++], total) < 0)
				goto oom;
		}
	}
	*nout = n;
	return 0;
oom:
	sx_victim_units_free(u, n);
	*out = NULL;
	return SX_ENOMEM;
}

int sx_victim_units_of_pods(const struct sx_pod *const *pods, uint32_t n, sx_str node,
			    struct sx_victim_unit **out, uint32_t *nout)
{
	struct sx_victim_unit *u = sx_calloc(n ? n : 1, sizeof(*u));

	*out = u;
	*nout = 0;
	if (!u)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		u[i].priority = pods[i]->priority;
		if (unit_add(&u[i], pods[i], node, 1) < 0) {
			sx_victim_units_free(u, i + 1);
			*out = NULL;
			return SX_ENOMEM;
		}
	}
	*nout = n;
	return 0;
}

int sx_victim_units_mark_pdbs(const struct sx_snapshot *snap, struct sx_victim_unit **pot,
			      uint32_t npot)
{
	uint32_t total = 0, k = 0;
	const struct sx_pod **flat;
	bool *violating;
	int rc;

	for (uint32_t i = 0; i < npot; i++)
		total += pot[i]->n;
	flat = sx_calloc(total + 1, sizeof(*flat));
	violating = sx_calloc(total + 1, sizeof(*violating));
	rc = flat && violating ? 0 : SX_ENOMEM;
	for (uint32_t i = 0; i < npot && !rc; i++)
		for (uint32_t j = 0; j < pot[i]->n; j++)
			flat[k++] = pot[i]->pods[j];
	if (!rc)
		rc = sx_preempt_mark_pdb_violations(snap, flat, total, violating);
	k = 0;
	for (uint32_t i = 0; i < npot && !rc; i++) {
		pot[i]->violations = 0;
		for (uint32_t j = 0; j < pot[i]->n; j++)
			pot[i]->violations += violating[k++];
	}
	free(flat);
	free(violating);
	return rc;
}
