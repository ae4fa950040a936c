/* TopologyPlacementGenerator (PlacementGenerate, 1.37, behind
 * TopologyAwareWorkloadScheduling): upstream
 * pkg/scheduler/framework/plugins/topologyaware (TopologyPlacement,
 * registered as names.TopologyPlacementGenerator; the alpha's package
 * topologyplacement named it TopologyPlacement), GeneratePlacements. For
 * a PodGroup with schedulingConstraints.topology, one placement per distinct value of the
 * first constraint's key among the nodes (upstream's alpha reads only the
 * first), in the values' string order: the nodes labelled with that value.
 * A group without constraints gets none (no opinion); an empty key is an
 * Error, a key no node carries Unschedulable, with upstream's words.
 *
 * The parent placement is the whole snapshot (no CompositePodGroups).
 *
 * Threads: no state; any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

static int cmp_value(const void *a, const void *b)
{
	return strcmp(sx_str_get(*(const sx_str *)a), sx_str_get(*(const sx_str *)b));
}

/* The distinct values of key among snap's nodes, sorted; *n their count.
 * NULL with *n 0 when none (or on OOM: *oom). */
static sx_str *distinct_values(const struct sx_snapshot *snap, sx_str key, uint32_t *n, bool *oom)
{
	sx_str *v = malloc(sizeof(*v) * (snap->nnodes ? snap->nnodes : 1));
	uint32_t k = 0;

	*n = 0;
	if (!v) {
		*oom = true;
		return NULL;
	}
	for (uint32_t i = 0; i < snap->nnodes; i++) {
		sx_str val;
		uint32_t j;

		if (!sx_node_label(snap->nodes[i]->node, key, &val))
			continue;
		for (j = 0; j < k && v[j] != val; j++)
			;
		if (j == k)
			v[k++] = val;
	}
	qsort(v, k, sizeof(*v), cmp_value);
	*n = k;
	return v;
}

static int add_placement(struct sx_pg_placements *out, const struct sx_snapshot *snap, sx_str key,
			 sx_str val)
{
	struct sx_pg_placement *arr = realloc(out->v, sizeof(*arr) * (out->n + 1));
	struct sx_pg_placement *p;

	if (!arr)
		return -1;
	out->v = arr;
	p = &arr[out->n];
	*p = (struct sx_pg_placement){.name = strdup(sx_str_get(val)),
				      .nodes = malloc(sizeof(sx_str) * snap->nnodes)};
	if (!p->name || !p->nodes) {
		free(p->name);
		free(p->nodes);
		return -1;
	}
	for (uint32_t i = 0; i < snap->nnodes; i++) {
		sx_str have;

		if (sx_node_label(snap->nodes[i]->node, key, &have) && have == val)
			p->nodes[p->nnodes++] = snap->nodes[i]->name;
	}
	out->n++;
	return 0;
}

static struct sx_status *
placement_generate_topology_placement_generator(void *self, const struct sx_pod_group *pg,
						const struct sx_snapshot *snap,
						struct sx_pg_placements *out)
{
	sx_str key, *vals;
	uint32_t n;
	bool oom = false;

	(void)self;
	if (!pg || pg->spec.ntopology == 0)
		return NULL;
	key = pg->spec.topology[0];
	if (key == SX_STR_EMPTY || !*sx_str_get(key))
		return sx_status_new(SX_ERROR, "topology constraint level cannot be empty");
	vals = distinct_values(snap, key, &n, &oom);
	for (uint32_t i = 0; i < n && !oom; i++)
		oom = add_placement(out, snap, key, vals[i]) < 0;
	free(vals);
	if (oom)
		return sx_status_new(SX_ERROR, "out of memory");
	if (n == 0)
		return sx_status_new(SX_UNSCHEDULABLE, "no nodes found with topology label '%s'",
				     sx_str_get(key));
	return NULL;
}

const struct sx_plugin sx_plugin_topology_placement_generator = {
	.name = "TopologyPlacementGenerator",
	.placement_generate = placement_generate_topology_placement_generator,
};
