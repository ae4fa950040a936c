/* NodePorts (PreFilter, Filter): the pod's host ports must be free on the
 * node (upstream nodeports/node_ports.go). The pod's wanted ports are derived at
 * decode time (regular containers and, as in 1.34, sidecar init
 * containers); the node's used ports are kept by the cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"
#include "slots.h"

#define REASON_PORTS "node(s) didn't have free ports for the requested pod ports"
#define NAME	     "NodePorts"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_ports = SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_PORTS);

/* PreFilter state: the wanted host ports. Owned by the cycle's slot. */
struct wanted {
	uint32_t n;
	struct sx_host_port ports[]; /* flexible array */
};

static struct wanted *wanted_new(uint32_t n)
{
	struct wanted *w = malloc(sizeof(*w) + (size_t)n * sizeof(w->ports[0]));

	if (w)
		w->n = 0;
	return w;
}

static void *state_clone_node_ports(const void *state)
{
	const struct wanted *src = state;
	struct wanted *dst = wanted_new(src->n);

	if (!dst)
		return NULL;
	dst->n = src->n;
	memcpy(dst->ports, src->ports, (size_t)src->n * sizeof(src->ports[0]));
	return dst;
}

static void state_free_node_ports(void *state)
{
	free(state);
}

/* Skip when the pod wants no host port (1.34), so Filter never runs. */
static struct sx_status *pre_filter_node_ports(void *self, struct sx_cycle_state *cs,
					       const struct sx_pod *pod,
					       struct sx_node_set **result)
{
	struct wanted *w;

	w = wanted_new(pod->nports);
	if (!w)
		return sx_status_oom();
	for (uint32_t i = 0; i < pod->nports; i++)
		if (pod->ports[i].port > 0) /* hostPort 0 is no claim */
			w->ports[w->n++] = pod->ports[i];
	if (w->n == 0) {
		free(w);
		return sx_status_new(SX_SKIP, NULL);
	}
	free(cs->slots[SX_SLOT_node_ports]);
	cs->slots[SX_SLOT_node_ports] = w;
	return NULL;
}

static struct sx_status *filter_node_ports(void *self, const struct sx_cycle_state *cs,
					   const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const struct wanted *w = cs->slots[SX_SLOT_node_ports];

	if (!w)
		return sx_status_new(SX_ERROR,
				     "reading \"PreFilterNodePorts\" from cycleState: not found");
	for (uint32_t i = 0; i < w->n; i++)
		if (sx_node_info_port_conflicts(ni, &w->ports[i]))
			return &reject_ports;
	return NULL;
}

/* The first wanted host port the node has in use ("8080/TCP", with the
 * host IP when the pod names one), as Filter finds it. */
static void explain_node_ports(void *self, const struct sx_cycle_state *cs,
			       const struct sx_pod *pod, const struct sx_node_info *ni,
			       const struct sx_status *st, struct sx_detail *d)
{
	static const char *const protocols[] = {"TCP", "UDP", "SCTP"};
	const struct wanted *w = cs->slots[SX_SLOT_node_ports];
	char port[320];

	for (uint32_t i = 0; w && ni && i < w->n; i++) {
		const struct sx_host_port *p = &w->ports[i];
		if (!sx_node_info_port_conflicts(ni, p))
			continue;
		snprintf(port, sizeof(port), "%s%s%u/%s", sx_str_get(p->ip), p->ip ? ":" : "",
			 p->port, p->protocol < 3 ? protocols[p->protocol] : "?");
		sx_detail_text(d, "host port %s in use", port);
		sx_detail_str(d, "hostPort", port);
		return;
	}
}

/* ---------- queueing hints ---------- */

static bool ports_conflict(const struct sx_host_port *a, const struct sx_host_port *b)
{
	sx_str any = sx_intern("0.0.0.0");

	if (a->port != b->port || a->protocol != b->protocol)
		return false;
	return a->ip == b->ip || a->ip == SX_STR_EMPTY || b->ip == SX_STR_EMPTY || a->ip == any ||
	       b->ip == any;
}

/* isSchedulableAfterPodDeleted: a scheduled (or nominated) pod holding one
 * of the host ports the pod wants went away. */
static enum sx_hint hint_pod_node_ports(void *self, const struct sx_pod *pod, const void *old_obj,
					const void *new_obj)
{
	const struct sx_pod *d = old_obj;

	SX_UNUSED(self);
	SX_UNUSED(new_obj);
	if (!d || (d->node_name == SX_STR_EMPTY && d->nominated_node == SX_STR_EMPTY))
		return SX_QUEUE_SKIP;
	for (uint32_t i = 0; i < d->nports; i++)
		for (uint32_t j = 0; d->ports[i].port > 0 && j < pod->nports; j++)
			if (ports_conflict(&d->ports[i], &pod->ports[j]))
				return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* Pod updates cannot change ports (immutable); a new node always helps. */
static const struct sx_event_reg events_node_ports[] = {
	{SX_RES_POD, SX_ACT_DELETE, hint_pod_node_ports},
	{SX_RES_NODE, SX_ACT_ADD, NULL},
	SX_EVENTS_END,
};

/* NodePorts.SignPod: the host ports (node_ports.go). */
static struct sx_status *sign_node_ports(void *self, const struct sx_pod *pod, uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_HOST_PORTS;
	return NULL;
}

const struct sx_plugin sx_plugin_node_ports = {
	.name = NAME,
	.state_clone = state_clone_node_ports,
	.state_free = state_free_node_ports,
	.pre_filter = pre_filter_node_ports,
	.filter = filter_node_ports,
	.events = events_node_ports,
	.explain = explain_node_ports,
	.sign = sign_node_ports,
};
