/* Cluster events (upstream
 * pkg/scheduler/framework/events.go and kube-scheduler's fwk.ClusterEvent):
 * matching registrations against incoming events, and turning an update
 * of a pod or node into its specific actions. */
#include <stdio.h>
#include <string.h>

#include "schedext/plugin.h"

static const char *const resource_names[SX_RES_COUNT] = {
	[SX_RES_NONE] = "",
	[SX_RES_POD] = "Pod",
	[SX_RES_ASSIGNED_POD] = "AssignedPod",
	[SX_RES_UNSCHEDULED_POD] = "UnschedulablePod",
	[SX_RES_NODE] = "Node",
	[SX_RES_PV] = "PersistentVolume",
	[SX_RES_PVC] = "PersistentVolumeClaim",
	[SX_RES_STORAGE_CLASS] = "storage.k8s.io/StorageClass",
	[SX_RES_CSI_NODE] = "storage.k8s.io/CSINode",
	[SX_RES_CSI_DRIVER] = "storage.k8s.io/CSIDriver",
	[SX_RES_CSI_STORAGE_CAPACITY] = "storage.k8s.io/CSIStorageCapacity",
	[SX_RES_VOLUME_ATTACHMENT] = "storage.k8s.io/VolumeAttachment",
	[SX_RES_RESOURCE_CLAIM] = "resource.k8s.io/ResourceClaim",
	[SX_RES_RESOURCE_SLICE] = "resource.k8s.io/ResourceSlice",
	[SX_RES_DEVICE_CLASS] = "resource.k8s.io/DeviceClass",
	[SX_RES_POD_GROUP] = "scheduling.k8s.io/PodGroup",
	[SX_RES_COSCHED_POD_GROUP] = "podgroups.v1alpha1.scheduling.x-k8s.io",
	[SX_RES_WILDCARD] = "*",
};

const char *sx_event_resource_name(unsigned resource)
{
	return resource < SX_RES_COUNT ? resource_names[resource] : "";
}

const char *sx_action_name(uint32_t action)
{
	static const char *const names[] = {
		"Add",
		"Delete",
		"UpdateNodeAllocatable",
		"UpdateNodeLabel",
		"UpdateNodeTaint",
		"UpdateNodeCondition",
		"UpdateNodeAnnotation",
		"UpdatePodLabel",
		"UpdatePodScaleDown",
		"UpdatePodToleration",
		"UpdatePodSchedulingGatesEliminated",
		"UpdatePodGeneratedResourceClaim",
		"UpdateNodeDeclaredFeature",
	};

	if (action == SX_ACT_ALL)
		return "All";
	if (action == SX_ACT_UPDATE)
		return "Update";
	for (unsigned i = 0; i < SX_ARRAY_SIZE(names); i++)
		if (action == 1u << i)
			return names[i];
	return "";
}

const char *sx_event_label(const struct sx_cluster_event *ev, char *buf, size_t len)
{
	if (ev->label)
		snprintf(buf, len, "%s", ev->label);
	else
		snprintf(buf, len, "%s%s", sx_event_resource_name(ev->resource),
			 sx_action_name(ev->action));
	return buf;
}

static bool resource_matches(uint8_t reg, uint8_t in)
{
	return reg == SX_RES_WILDCARD || reg == in ||
	       (reg == SX_RES_POD && (in == SX_RES_ASSIGNED_POD || in == SX_RES_UNSCHEDULED_POD));
}

bool sx_event_matches(const struct sx_event_reg *reg, const struct sx_cluster_event *ev)
{
	if (reg->resource == SX_RES_WILDCARD && reg->actions == SX_ACT_ALL)
		return true;
	if (ev->resource == SX_RES_WILDCARD)
		return false; /* only a wildcard registration takes a wildcard event */
	return resource_matches(reg->resource, ev->resource) &&
	       (reg->actions & ev->action) == ev->action;
}

bool sx_labels_equal(const struct sx_labels *a, const struct sx_labels *b)
{
	return a->n == b->n &&
	       (a->n == 0 || memcmp(a->items, b->items, a->n * sizeof(*a->items)) == 0);
}

/* ---------- pods ---------- */

static int64_t scalar_of(const struct sx_resources *r, sx_str name, bool *found)
{
	for (uint32_t i = 0; i < r->nscalar; i++)
		if (r->scalar[i].name == name) {
			*found = true;
			return r->scalar[i].value;
		}
	*found = false;
	return 0;
}

/* extractPodScaleDown: a request of the old pod is gone or smaller. The
 * model keeps cpu/memory/ephemeral as plain numbers (absent = 0), so a
 * removed request shows as a drop to 0. */
static bool scaled_down(const struct sx_resources *o, const struct sx_resources *n)
{
	if (n->milli_cpu < o->milli_cpu || n->memory < o->memory ||
	    n->ephemeral_storage < o->ephemeral_storage)
		return true;
	for (uint32_t i = 0; i < o->nscalar; i++) {
		bool found;
		int64_t v = scalar_of(n, o->scalar[i].name, &found);

		if (!found || v < o->scalar[i].value)
			return true;
	}
	return false;
}

/* status.resourceClaimStatuses changed (DynamicResources). */
static bool claim_statuses_changed(const struct sx_pod *o, const struct sx_pod *n)
{
	if (o->nresource_claims != n->nresource_claims)
		return true;
	for (uint32_t i = 0; i < n->nresource_claims; i++) {
		const struct sx_pod_claim *a = &o->resource_claims[i], *b = &n->resource_claims[i];

		if (a->has_status != b->has_status || !a->status_claim != !b->status_claim ||
		    (a->status_claim && strcmp(a->status_claim, b->status_claim) != 0))
			return true;
	}
	return false;
}

uint32_t sx_pod_update_actions(const struct sx_pod *o, const struct sx_pod *n)
{
	uint32_t a = 0;

	if (!sx_labels_equal(&o->meta.labels, &n->meta.labels))
		a |= SX_ACT_UPDATE_POD_LABEL;
	if (scaled_down(&o->request, &n->request))
		a |= SX_ACT_UPDATE_POD_SCALE_DOWN;
	if (n->ngates == 0 && o->ngates != 0)
		a |= SX_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
	if (n->ntolerations != o->ntolerations)
		a |= SX_ACT_UPDATE_POD_TOLERATION;
	if (claim_statuses_changed(o, n))
		a |= SX_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM;
	return a;
}

/* ---------- nodes ---------- */

static bool resources_equal(const struct sx_resources *a, const struct sx_resources *b)
{
	if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
	    a->ephemeral_storage != b->ephemeral_storage || a->pods != b->pods ||
	    a->nscalar != b->nscalar)
		return false;
	for (uint32_t i = 0; i < a->nscalar; i++)
		if (a->scalar[i].name != b->scalar[i].name ||
		    a->scalar[i].value != b->scalar[i].value)
			return false;
	return true;
}

static bool taints_equal(const struct sx_node *a, const struct sx_node *b)
{
	if (a->ntaints != b->ntaints)
		return false;
	for (uint32_t i = 0; i < a->ntaints; i++)
		if (a->taints[i].key != b->taints[i].key ||
		    a->taints[i].value != b->taints[i].value ||
		    a->taints[i].effect != b->taints[i].effect)
			return false;
	return true;
}

static sx_str condition_status(const struct sx_node *n, sx_str type, bool *found)
{
	sx_str st = SX_STR_EMPTY;

	*found = false;
	for (uint32_t i = 0; i < n->nconditions; i++)
		if (n->conditions[i].type == type) {
			*found = true;
			st = n->conditions[i].status; /* the last one wins, as a Go map */
		}
	return st;
}

/* Conditions compared as type -> status maps. */
static bool conditions_equal(const struct sx_node *a, const struct sx_node *b)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct sx_node *x = pass ? b : a, *y = pass ? a : b;

		for (uint32_t i = 0; i < x->nconditions; i++) {
			bool fx, fy;
			sx_str sx = condition_status(x, x->conditions[i].type, &fx);
			sx_str sy = condition_status(y, x->conditions[i].type, &fy);

			if (!fy || sx != sy)
				return false;
		}
	}
	return true;
}

uint32_t sx_node_update_actions(const struct sx_node *o, const struct sx_node *n)
{
	uint32_t a = 0;

	if (o->unschedulable != n->unschedulable && !n->unschedulable)
		a |= SX_ACT_UPDATE_NODE_TAINT;
	if (!resources_equal(&o->allocatable, &n->allocatable))
		a |= SX_ACT_UPDATE_NODE_ALLOCATABLE;
	if (!sx_labels_equal(&o->meta.labels, &n->meta.labels))
		a |= SX_ACT_UPDATE_NODE_LABEL;
	if (!taints_equal(o, n))
		a |= SX_ACT_UPDATE_NODE_TAINT;
	if (!conditions_equal(o, n))
		a |= SX_ACT_UPDATE_NODE_CONDITION;
	/* upstream extractNodeDeclaredFeaturesChange: compared in order */
	if (o->ndeclared_features != n->ndeclared_features ||
	    (o->ndeclared_features && memcmp(o->declared_features, n->declared_features,
					     o->ndeclared_features * sizeof(sx_str)) != 0))
		a |= SX_ACT_UPDATE_NODE_DECLARED_FEATURE;
	/* annotations are not modelled: UpdateNodeAnnotation never fires */
	return a;
}
