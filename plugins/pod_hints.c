/* Queueing hints of PodTopologySpread and InterPodAffinity (upstream
 * podtopologyspread/plugin.go and
 * interpodaffinity/plugin.go isSchedulableAfter*). Kept apart from the two
 * plugins' files, which are at the file-size limit; the descriptors point
 * at the tables below (pod_hints.h).
 *
 * A hint has no snapshot, so where upstream reads listers (default spread
 * constraints deduced from Services, namespaceSelector terms) it answers
 * Queue: a hint may be more eager than upstream, never miss a move. */
#include <string.h>

#include "pod_hints.h"
#include "schedext/selector.h"

static bool same_uid(const struct sx_pod *a, const struct sx_pod *b)
{
	return a->meta.uid && b->meta.uid && strcmp(a->meta.uid, b->meta.uid) == 0;
}

/* ---------- PodTopologySpread ---------- */

/* The constraint's selector plus the pod's matchLabelKeys values matches
 * labels (a nil selector matches nothing). */
static bool spread_selects(const struct sx_spread_constraint *c, const struct sx_pod *pod,
			   const struct sx_labels *labels)
{
	sx_str v, w;

	if (!c->selector || !sx_selector_matches(c->selector, labels))
		return false;
	for (uint32_t i = 0; i < c->nmatch_label_keys; i++)
		if (sx_labels_get(&pod->meta.labels, c->match_label_keys[i], &v) &&
		    (!sx_labels_get(labels, c->match_label_keys[i], &w) || w != v))
			return false;
	return true;
}

static bool hard(const struct sx_spread_constraint *c)
{
	return c->when_unsatisfiable == SX_DO_NOT_SCHEDULE;
}

/* involvedInTopologySpreading: the pod itself, or a scheduled pod of its
 * namespace. */
static bool involved(const struct sx_pod *p, const struct sx_pod *pod)
{
	return same_uid(p, pod) || (p->node_name != SX_STR_EMPTY && p->meta.ns == pod->meta.ns);
}

static bool honors_taints(const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nspread; i++)
		if (hard(&pod->spread[i]) && pod->spread[i].node_taints_policy == SX_POLICY_HONOR)
			return true;
	return false;
}

static bool tolerations_differ(const struct sx_pod *a, const struct sx_pod *b)
{
	if (a->ntolerations != b->ntolerations)
		return true;
	for (uint32_t i = 0; i < a->ntolerations; i++) {
		const struct sx_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];

		if (x->key != y->key || x->value != y->value || x->op != y->op ||
		    x->effect != y->effect || x->has_seconds != y->has_seconds ||
		    x->toleration_seconds != y->toleration_seconds)
			return true;
	}
	return false;
}

/* isSchedulableAfterPodChange: the pod itself got a toleration (with a
 * NodeTaintsPolicy Honor constraint); a scheduled pod of its namespace
 * added or deleted that a constraint selects, or relabelled into or out
 * of a constraint's selector. */
static enum sx_hint hint_pod_pod_topology_spread(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_pod *o = old_obj, *n = new_obj, *p = n ? n : o;

	SX_UNUSED(self);
	if ((n && !involved(n, pod)) || (o && !involved(o, pod)))
		return SX_QUEUE_SKIP;
	if (pod->nspread == 0)
		return SX_QUEUE; /* default constraints: not known here */
	if (o && n && same_uid(n, pod) && tolerations_differ(o, n) && honors_taints(pod))
		return SX_QUEUE;
	if (o && n && sx_labels_equal(&o->meta.labels, &n->meta.labels))
		return SX_QUEUE_SKIP;
	for (uint32_t i = 0; i < pod->nspread; i++) {
		const struct sx_spread_constraint *c = &pod->spread[i];

		if (!hard(c))
			continue;
		if (o && n) {
			if (spread_selects(c, pod, &o->meta.labels) !=
			    spread_selects(c, pod, &n->meta.labels))
				return SX_QUEUE;
		} else if (spread_selects(c, pod, &p->meta.labels)) {
			return SX_QUEUE;
		}
	}
	return SX_QUEUE_SKIP;
}

static bool node_has_keys(const struct sx_node *node, const struct sx_pod *pod)
{
	sx_str v;

	for (uint32_t i = 0; i < pod->nspread; i++)
		if (hard(&pod->spread[i]) && !sx_node_label(node, pod->spread[i].topology_key, &v))
			return false;
	return true;
}

static bool keys_changed(const struct sx_node *o, const struct sx_node *n, const struct sx_pod *pod)
{
	sx_str a, b;

	for (uint32_t i = 0; i < pod->nspread; i++)
		if (hard(&pod->spread[i]) &&
		    sx_labels_get(&o->meta.labels, pod->spread[i].topology_key, &a) &&
		    sx_labels_get(&n->meta.labels, pod->spread[i].topology_key, &b) && a != b)
			return true;
	return false;
}

static bool node_taints_differ(const struct sx_node *a, const struct sx_node *b)
{
	return (sx_node_update_actions(a, b) & SX_ACT_UPDATE_NODE_TAINT) != 0;
}

/* isSchedulableAfterNodeChange: a node with every topology key added or
 * deleted; an update making the node gain or lose them, or, while it has
 * them, changing a key's value or the taints. */
static enum sx_hint hint_node_pod_topology_spread(void *self, const struct sx_pod *pod,
						  const void *old_obj, const void *new_obj)
{
	const struct sx_node *o = old_obj, *n = new_obj;
	bool om, nm;

	SX_UNUSED(self);
	if (pod->nspread == 0)
		return SX_QUEUE;
	if (!o || !n)
		return node_has_keys(o ? o : n, pod) ? SX_QUEUE : SX_QUEUE_SKIP;
	om = node_has_keys(o, pod);
	nm = node_has_keys(n, pod);
	if (om != nm)
		return SX_QUEUE;
	if (nm && (keys_changed(o, n, pod) || node_taints_differ(o, n)))
		return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

const struct sx_event_reg sx_events_pod_topology_spread[] = {
	{SX_RES_POD,
	 SX_ACT_ADD | SX_ACT_UPDATE_POD_LABEL | SX_ACT_UPDATE_POD_TOLERATION | SX_ACT_DELETE,
	 hint_pod_pod_topology_spread},
	{SX_RES_NODE,
	 SX_ACT_ADD | SX_ACT_DELETE | SX_ACT_UPDATE_NODE_LABEL | SX_ACT_UPDATE_NODE_TAINT,
	 hint_node_pod_topology_spread},
	SX_EVENTS_END,
};

/* ---------- InterPodAffinity ---------- */

static const struct sx_pod_affinity *affinity_of(const struct sx_pod *p, bool anti)
{
	if (!p->affinity)
		return NULL;
	return anti ? p->affinity->pod_anti_affinity : p->affinity->pod_affinity;
}

/* A required term of owner (namespaces as the term says; a namespace
 * selector counts as matching) selects target. */
static bool term_selects(const struct sx_pod_affinity_term *t, const struct sx_pod *owner,
			 const struct sx_pod *target)
{
	bool ns_ok = t->ns_selector != NULL;
	sx_str v, w;

	if (t->nnamespaces == 0 && !t->ns_selector)
		ns_ok = target->meta.ns == owner->meta.ns;
	for (uint32_t i = 0; !ns_ok && i < t->nnamespaces; i++)
		ns_ok = t->namespaces[i] == target->meta.ns;
	if (!ns_ok || !sx_selector_matches(t->selector, &target->meta.labels))
		return false;
	for (uint32_t i = 0; i < t->nmatch_label_keys; i++)
		if (sx_labels_get(&owner->meta.labels, t->match_label_keys[i], &v) &&
		    (!sx_labels_get(&target->meta.labels, t->match_label_keys[i], &w) || w != v))
			return false;
	for (uint32_t i = 0; i < t->nmismatch_label_keys; i++)
		if (sx_labels_get(&owner->meta.labels, t->mismatch_label_keys[i], &v) &&
		    sx_labels_get(&target->meta.labels, t->mismatch_label_keys[i], &w) && w == v)
			return false;
	return true;
}

/* podMatchesAllAffinityTerms over the affinity (or anti-affinity) terms:
 * false without terms. */
static bool matches_all(const struct sx_pod *pod, const struct sx_pod *p, bool anti)
{
	const struct sx_pod_affinity *a = affinity_of(pod, anti);

	if (!a || a->nrequired == 0)
		return false;
	for (uint32_t i = 0; i < a->nrequired; i++)
		if (!term_selects(&a->required[i], pod, p))
			return false;
	return true;
}

/* An existing pod whose own required anti-affinity selects the pod (not
 * checked upstream, whose hints then never requeue on that pod's
 * deletion; checked here so such a pod is not left to the 5-minute
 * flush). */
static bool blocks_by_own_anti(const struct sx_pod *existing, const struct sx_pod *pod)
{
	const struct sx_pod_affinity *a = affinity_of(existing, true);

	for (uint32_t i = 0; a && i < a->nrequired; i++)
		if (term_selects(&a->required[i], existing, pod))
			return true;
	return false;
}

/* Scheduled pods only. Added: it satisfies every affinity term. Updated:
 * it starts satisfying them, or stops matching the anti-affinity terms (or
 * its own anti-affinity stops selecting the pod). Deleted: it matched the
 * anti-affinity terms, or its own anti-affinity selected the pod. */
static enum sx_hint hint_pod_inter_pod_affinity(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_pod *o = old_obj, *n = new_obj;

	SX_UNUSED(self);
	if ((n && n->node_name == SX_STR_EMPTY) || (o && o->node_name == SX_STR_EMPTY))
		return SX_QUEUE_SKIP;
	if (o && n) {
		if (!matches_all(pod, o, false) && matches_all(pod, n, false))
			return SX_QUEUE;
		if (matches_all(pod, o, true) && !matches_all(pod, n, true))
			return SX_QUEUE;
		return blocks_by_own_anti(o, pod) && !blocks_by_own_anti(n, pod) ? SX_QUEUE
										 : SX_QUEUE_SKIP;
	}
	if (n)
		return matches_all(pod, n, false) ? SX_QUEUE : SX_QUEUE_SKIP;
	return matches_all(pod, o, true) || blocks_by_own_anti(o, pod) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* A node added or updated that has the topology key of one of the pod's
 * required affinity or anti-affinity terms (upstream asks no more). */
static enum sx_hint hint_node_inter_pod_affinity(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_node *n = new_obj;
	sx_str v;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!n)
		return SX_QUEUE_SKIP;
	for (int anti = 0; anti < 2; anti++) {
		const struct sx_pod_affinity *a = affinity_of(pod, anti);

		for (uint32_t i = 0; a && i < a->nrequired; i++)
			if (sx_labels_get(&n->meta.labels, a->required[i].topology_key, &v))
				return SX_QUEUE;
	}
	return SX_QUEUE_SKIP;
}

const struct sx_event_reg sx_events_inter_pod_affinity[] = {
	{SX_RES_POD, SX_ACT_ADD | SX_ACT_UPDATE_POD_LABEL | SX_ACT_DELETE,
	 hint_pod_inter_pod_affinity},
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL, hint_node_inter_pod_affinity},
	SX_EVENTS_END,
};
