/* NodeDeclaredFeatures (PreFilter, Filter): a pod whose spec needs a node
 * feature goes only to nodes that declare it in status.declaredFeatures
 * (upstream nodedeclaredfeatures/nodedeclaredfeatures.go, with the
 * inference of k8s.io/component-helpers/nodedeclaredfeatures).
 *
 * Gate NodeDeclaredFeatures: Beta and on in 1.36, GA in 1.37, Alpha and off
 * in 1.35. With it off the plugin does nothing (upstream New returns a
 * disabled plugin: PreFilter Skip, Filter Success).
 *
 * Inference (Framework.InferForPodScheduling over the registry's
 * features): the features whose InferForScheduling reads the pod spec,
 * computed at decode time into sx_pod.needs_features:
 *   RestartAllContainersOnContainerExits  (restartallcontainers)
 *   UserNamespacesHostNetworkSupport      (usernamespaceshostnetwork)
 *   VolumeBindMountOptions                (volumebindmountoptions)
 * None of them has a MaxVersion, so the scheduler's version drops none.
 * 1.36's registry (component-helpers v0.36) has no VolumeBindMountOptions
 * yet: emulating 1.36, a pod with bindMountOptions needs nothing.
 * The registry's in-place resize features infer only for pod updates
 * (InferForUpdate), which the scheduler never asks.
 *
 * Words: 1.37 "node(s) didn't match Pod's required features" (Filter
 * checks IsSubset); 1.36 "node declared features check failed -
 * unsatisfied requirements: A, B" (MatchNodeFeatureSet; the missing
 * features, here in name order where upstream iterates a set).
 *
 * Stateless after init; any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"
#include "slots.h"

#define NAME	   "NodeDeclaredFeatures"
#define REASON_137 "node(s) didn't match Pod's required features"
#define REASON_136 "node declared features check failed - unsatisfied requirements: "

/* The features of sx_pod.needs_features, bit i named names[i], sorted. */
static const char *const feature_names[] = {
	"RestartAllContainersOnContainerExits",
	"UserNamespacesHostNetworkSupport",
	"VolumeBindMountOptions",
};
#define NFEATURES (sizeof(feature_names) / sizeof(feature_names[0]))

struct ndf {
	bool enabled;	   /* gate NodeDeclaredFeatures */
	bool list_missing; /* 1.36's words: list the unsatisfied features */
	uint8_t known;	   /* SX_POD_NEEDS_* bits the release's registry has */
	sx_str ids[NFEATURES];
};

static struct sx_status reject_137 =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_137);

static void *init_node_declared_features(const struct cJSON *args, struct sx_handle *h,
					 struct sx_error *err)
{
	struct ndf *p = calloc(1, sizeof(*p));
	struct sx_features fv = sx_handle_features(h);
	const struct sx_features *f = &fv;

	SX_UNUSED(args);
	if (!p) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->enabled = sx_feature_enabled(f, SX_FEATURE_NODE_DECLARED_FEATURES);
	p->list_missing = sx_release(f) < 37;
	p->known = SX_POD_NEEDS_RESTART_ALL_CONTAINERS | SX_POD_NEEDS_USERNS_HOST_NETWORK;
	if (sx_release(f) >= 37)
		p->known |= SX_POD_NEEDS_VOLUME_BIND_MOUNT_OPTIONS;
	for (unsigned i = 0; i < NFEATURES; i++) {
		p->ids[i] = sx_intern(feature_names[i]);
		if (p->ids[i] == SX_STR_INVALID) {
			free(p);
			sx_error_set(err, SX_ENOMEM, "string table full");
			return NULL;
		}
	}
	return p;
}

static void destroy_node_declared_features(void *self)
{
	free(self);
}

/* The cycle state: the features the pod needs (SX_POD_NEEDS_* bits). */
struct ndf_state {
	uint8_t needs;
};

static void *state_clone_node_declared_features(const void *state)
{
	struct ndf_state *c = malloc(sizeof(*c));

	if (c)
		memcpy(c, state, sizeof(*c));
	return c;
}

static void state_free_node_declared_features(void *state)
{
	free(state);
}

static struct sx_status *pre_filter_node_declared_features(void *self, struct sx_cycle_state *cs,
							   const struct sx_pod *pod,
							   struct sx_node_set **result)
{
	const struct ndf *p = self;
	struct ndf_state *s;

	SX_UNUSED(result);
	if (!p->enabled || (pod->needs_features & p->known) == 0)
		return sx_status_new(SX_SKIP, NULL);
	s = sx_cycle_state_slot(cs, SX_SLOT_node_declared_features, sizeof(*s));
	if (!s)
		return sx_status_oom();
	s->needs = pod->needs_features & p->known;
	return NULL;
}

static bool node_declares(const struct sx_node *n, sx_str id)
{
	for (uint32_t i = 0; i < n->ndeclared_features; i++)
		if (n->declared_features[i] == id)
			return true;
	return false;
}

static struct sx_status *filter_node_declared_features(void *self, const struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       const struct sx_node_info *ni)
{
	const struct ndf *p = self;
	const struct ndf_state *s = cs->slots[SX_SLOT_node_declared_features];
	uint8_t missing = 0;
	struct sx_buf b;
	struct sx_status *st;

	SX_UNUSED(pod);
	if (!p->enabled)
		return NULL;
	if (!s)
		return sx_status_new(SX_ERROR, "error reading \"PreFilter" NAME
					       "\" from cycle-state: not found");
	for (unsigned i = 0; i < NFEATURES; i++)
		if ((s->needs & (1u << i)) && !node_declares(ni->node, p->ids[i]))
			missing |= (uint8_t)(1u << i);
	if (!missing)
		return NULL;
	if (!p->list_missing)
		return &reject_137;
	sx_buf_init(&b);
	sx_buf_puts(&b, REASON_136);
	for (unsigned i = 0, k = 0; i < NFEATURES; i++)
		if (missing & (1u << i))
			sx_buf_printf(&b, "%s%s", k++ ? ", " : "", feature_names[i]);
	st = b.failed ? sx_status_oom()
		      : sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", sx_buf_cstr(&b));
	sx_buf_free(&b);
	return st;
}

/* ---------- queueing hints ---------- */

/* isSchedulableAfterNodeChange: a new node, or status.declaredFeatures
 * changed (compared in order, as slices.Equal). */
static enum sx_hint hint_node_node_declared_features(void *self, const struct sx_pod *pod,
						     const void *old_obj, const void *new_obj)
{
	const struct sx_node *o = old_obj, *n = new_obj;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	if (!n)
		return SX_QUEUE_SKIP;
	if (o && o->ndeclared_features == n->ndeclared_features &&
	    (o->ndeclared_features == 0 || memcmp(o->declared_features, n->declared_features,
						  o->ndeclared_features * sizeof(sx_str)) == 0))
		return SX_QUEUE_SKIP;
	return SX_QUEUE;
}

/* isSchedulableAfterTargetPodUpdate: the pod itself, and what it needs
 * changed. */
static enum sx_hint hint_pod_node_declared_features(void *self, const struct sx_pod *pod,
						    const void *old_obj, const void *new_obj)
{
	const struct ndf *p = self;
	const struct sx_pod *o = old_obj, *n = new_obj;

	if (!o || !n || !n->meta.uid || !pod->meta.uid || strcmp(n->meta.uid, pod->meta.uid) != 0)
		return SX_QUEUE_SKIP;
	return (o->needs_features & p->known) == (n->needs_features & p->known) ? SX_QUEUE_SKIP
										: SX_QUEUE;
}

static const struct sx_event_reg events_node_declared_features[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_DECLARED_FEATURE,
	 hint_node_node_declared_features},
	{SX_RES_POD, SX_ACT_UPDATE, hint_pod_node_declared_features},
	SX_EVENTS_END,
};

/* NodeDeclaredFeatures.SignPod: the features inferred from the spec
 * (node_declared_features.go). */
static struct sx_status *sign_node_declared_features(void *self, const struct sx_pod *pod,
						     uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_FEATURES;
	return NULL;
}

const struct sx_plugin sx_plugin_node_declared_features = {
	.name = NAME,
	.init = init_node_declared_features,
	.destroy = destroy_node_declared_features,
	.state_clone = state_clone_node_declared_features,
	.state_free = state_free_node_declared_features,
	.pre_filter = pre_filter_node_declared_features,
	.filter = filter_node_declared_features,
	.events = events_node_declared_features,
	.sign = sign_node_declared_features,
};
