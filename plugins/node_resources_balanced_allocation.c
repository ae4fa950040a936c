/* NodeResourcesBalancedAllocation (upstream
 * noderesources/balanced_allocation.go): favours nodes whose resource
 * fractions (requested / allocatable) are close to each other.
 *
 * Up to 1.35: score = (1 - std) * 100, truncated, of the fractions with the
 * pod placed. From 1.36 (kubernetes PR 135573, no gate; it follows the
 * emulated release): the change in balance placing the pod causes,
 * 50 + (50 + balance(with pod) - balance(without pod)) / 2, so 75 means no
 * change, 100 the most improvement, 50 the most harm
 * (balancedResourceScorer, resource_allocation.go).
 */
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "resource_allocation.h"
#include "schedext/plugin.h"
#include "slots.h"

/* Cycle state: the pod's actual request per configured resource. */
struct ba_state {
	int64_t pod_reqs[SX_RA_MAX_RESOURCES];
	struct sx_ra_dra *dra; /* draPreScoreState (a reference), or NULL */
};

/* Upstream ValidateNodeResourcesBalancedAllocationArgs: no duplicate names,
 * every weight exactly 1 (after the v1 default of 0 -> 1). */
static int validate(const struct sx_ra_scorer *sc, struct sx_error *err)
{
	for (uint32_t i = 0; i < sc->nresources; i++) {
		for (uint32_t j = 0; j < i; j++) {
			if (sc->resources[j].name == sc->resources[i].name) {
				sx_error_set(err, SX_EINVAL, "Duplicate value: \"%s\"",
					     sx_str_get(sc->resources[i].name));
				sx_error_prefixf(err, "resources[%u].name", i);
				return SX_EINVAL;
			}
		}
		if (sc->resources[i].weight != 1) {
			sx_error_set(err, SX_EINVAL, "Invalid value: %lld: must be 1",
				     (long long)sc->resources[i].weight);
			sx_error_prefixf(err, "resources[%u].weight", i);
			return SX_EINVAL;
		}
	}
	return 0;
}

struct ba_args {
	struct sx_ra_resource_arg *res;
	uint32_t nres;
};

static const struct sx_arg ba_fields[] = {
	SX_RA_RESOURCES_ARG("resources", struct ba_args, res, nres),
};

static void *init_node_resources_balanced_allocation(const struct cJSON *args, struct sx_handle *h,
						     struct sx_error *err)
{
	struct sx_ra_scorer *sc = calloc(1, sizeof(*sc));
	struct sx_arg_errors e = {0};
	struct ba_args a = {0};
	struct sx_features f = sx_handle_features(h);

	if (!sc) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	sc->strategy = SX_RA_BALANCED;
	sc->use_requested = true;
	/* 1.36 scores the change in balance (kubernetes PR 135573) */
	sc->balance_change = sx_release(&f) >= 36;
	sc->no_sign = sx_feature_enabled(&f, SX_FEATURE_DRA_EXTENDED_RESOURCE);
	if (!sx_args_is_object(args, "NodeResourcesBalancedAllocationArgs", err) ||
	    sx_args_read(args, ba_fields, SX_ARRAY_SIZE(ba_fields), &a, &e, err) < 0 ||
	    sx_ra_set_resources(sc, a.res, a.nres, "resources", err) < 0 || validate(sc, err) < 0)
		goto out_free;
	sx_args_free(ba_fields, SX_ARRAY_SIZE(ba_fields), &a);
	if (sx_ra_dra_init(sc, h) < 0) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		sx_ra_dra_destroy(sc);
		free(sc);
		return NULL;
	}
	return sc;
out_free:
	sx_args_free(ba_fields, SX_ARRAY_SIZE(ba_fields), &a);
	free(sc);
	return NULL;
}

static void destroy_node_resources_balanced_allocation(void *self)
{
	if (self)
		sx_ra_dra_destroy(self);
	free(self);
}

static void write_args_node_resources_balanced_allocation(const void *self, struct sx_jw *w)
{
	sx_ra_write_args(w, self);
}

static void *state_clone_node_resources_balanced_allocation(const void *state)
{
	struct ba_state *c = malloc(sizeof(*c));

	if (c) {
		memcpy(c, state, sizeof(*c));
		sx_ra_dra_ref(c->dra);
	}
	return c;
}

static void state_free_node_resources_balanced_allocation(void *state)
{
	struct ba_state *s = state;

	if (s)
		sx_ra_dra_unref(s->dra);
	free(s);
}

/* Skip for best-effort pods (1.33+): every configured request is 0, so all
 * nodes would be equal and such pods would pile onto one node. */
static struct sx_status *
pre_score_node_resources_balanced_allocation(void *self, struct sx_cycle_state *cs,
					     const struct sx_pod *pod,
					     struct sx_node_info *const *nodes, uint32_t n)
{
	const struct sx_ra_scorer *sc = self;
	int64_t reqs[SX_RA_MAX_RESOURCES];
	struct ba_state *s;

	SX_UNUSED(nodes);
	SX_UNUSED(n);
	sx_ra_pod_requests(sc, pod, reqs);
	if (sx_ra_all_zero(reqs, sc->nresources))
		return sx_status_new(SX_SKIP, NULL);
	s = sx_cycle_state_slot(cs, SX_SLOT_node_resources_balanced_allocation, sizeof(*s));
	if (!s)
		return sx_status_oom();
	memcpy(s->pod_reqs, reqs, sizeof(reqs));
	sx_ra_dra_unref(s->dra);
	s->dra = NULL;
	if (sx_ra_dra_prescore(sc, cs->snap, &s->dra) < 0)
		return sx_status_oom();
	return NULL;
}

static struct sx_status *score_node_resources_balanced_allocation(void *self,
								  const struct sx_cycle_state *cs,
								  const struct sx_pod *pod,
								  const struct sx_node_info *ni,
								  int64_t *score)
{
	const struct sx_ra_scorer *sc = self;
	const struct ba_state *s = cs->slots[SX_SLOT_node_resources_balanced_allocation];
	int64_t local[SX_RA_MAX_RESOURCES];

	struct sx_ra_dra *dra = NULL;
	int rc;

	/* Without PreScore (as upstream) the request vector and the DRA
	 * state are computed here. */
	if (!s) {
		sx_ra_pod_requests(sc, pod, local);
		if (sx_ra_dra_prescore(sc, cs->snap, &dra) < 0)
			return sx_status_oom();
	}
	rc = sx_ra_score(sc, ni, s ? s->pod_reqs : local, s ? s->dra : dra, score);
	if (dra)
		sx_ra_dra_unref(dra);
	if (rc < 0)
		return sx_status_new(SX_ERROR, "resources not found");
	return NULL;
}

/* BalancedAllocation.SignPod (noderesources/balanced_allocation.go):
 * the requests and overheads; not signable while DRAExtendedResource
 * is on, as upstream. */
static struct sx_status *
sign_node_resources_balanced_allocation(void *self, const struct sx_pod *pod, uint32_t *signers)
{
	const struct sx_ra_scorer *sc = self;

	(void)pod;
	if (sc->no_sign)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "signature disabled when dra extended resources enabled");
	*signers |= SX_SIGNER_RESOURCES;
	return NULL;
}

const struct sx_plugin sx_plugin_node_resources_balanced_allocation = {
	.name = "NodeResourcesBalancedAllocation",
	.init = init_node_resources_balanced_allocation,
	.destroy = destroy_node_resources_balanced_allocation,
	.args_kind = "NodeResourcesBalancedAllocationArgs",
	.write_args = write_args_node_resources_balanced_allocation,
	.state_clone = state_clone_node_resources_balanced_allocation,
	.state_free = state_free_node_resources_balanced_allocation,
	.pre_score = pre_score_node_resources_balanced_allocation,
	.score = score_node_resources_balanced_allocation,
	.sign = sign_node_resources_balanced_allocation,
};
