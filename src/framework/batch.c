/* Opportunistic batching (include/schedext/batch.h): pod signatures
 * (upstream runtime/framework.go computeBatchablePlugins and SignPod, the
 * common signers of staging/src/k8s.io/kube-scheduler/framework) and the
 * batch state (runtime/batch.go OpportunisticBatch: GetNodeHint,
 * StoreScheduleResults, batchStateCompatible, refreshHintCandidates,
 * rescoreHintedNode).
 *
 * Signatures are compared byte for byte, as upstream compares its JSON:
 * each part is written once, tagged, in a fixed order, with upstream's
 * canonical orders where the scheduler's verdict cannot depend on the
 * order (tolerations, host ports, image names, scalar resources; labels
 * and node selectors are kept sorted by the decoder). Node affinity terms
 * are written in the pod's order (upstream sorts them): pods whose terms
 * differ only in order do not share a batch, which costs hints, never a
 * decision. Volumes are written as the plugins read them (source, claim,
 * disk id); configMap, secret, emptyDir and the other sources no plugin
 * reads are left out, as upstream leaves out configMap and secret.
 *
 * Ownership: the batch owns its state arrays and its signature copy; the
 * profile and the metrics registry are borrowed. Threads: one loop. */
#include "schedext/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/common.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/framework_metrics.h"
#include "schedext/metrics.h"
#include "schedext/plugin.h"
#include "schedext/snapshot.h"

/* maxBatchAge (runtime/batch.go). */
#define MAX_BATCH_AGE_S 0.5

struct sx_batch {
	const struct sx_profile *prof;
	struct sx_metrics *m;
	/* the scheduler_batch_* families, resolved once (NULL without m) */
	struct {
		struct sx_metric *attempts, *flushed, *rescores, *rescore_duration, *hint_duration,
			*store_duration;
	} f;
	char profile[300]; /* the profile label, escaped */
	bool sign_enabled;
	unsigned nsigners;
	const struct sx_enabled *signers[SX_MAX_PLUGINS];
	bool rescore; /* 1.37: rescoreHintedNode, pod_nominated */
	double (*now)(void);
	uint64_t rng;
	/* batchState: sorted nodes [head, n) with their raw scores per
	 * score plugin ([i * np + p]), totals and tie-break keys. */
	bool has_state;
	struct sx_buf sig;
	double created;
	uint32_t n, head, np;
	sx_str *names;
	uint64_t *keys;
	int64_t *totals;
	int64_t *raw;
	/* schedulingCycle of the last stored result */
	int64_t last_cycle;
	sx_str last_chosen;
	bool last_succeeded;
	int64_t batched;
};

/* ---------- metrics ---------- */

static void count(struct sx_batch *b, struct sx_metric *family, const char *label,
		  const char *value)
{
	char labels[400];

	if (!family)
		return;
	if (label)
		snprintf(labels, sizeof(labels), "profile=\"%s\",%s=\"%s\"", b->profile, label,
			 value);
	else
		snprintf(labels, sizeof(labels), "profile=\"%s\"", b->profile);
	sx_metric_inc(family, labels, 1);
}

static void observe(struct sx_batch *b, struct sx_metric *family, const char *hinted, double s)
{
	char labels[400];

	if (!family)
		return;
	if (hinted)
		snprintf(labels, sizeof(labels), "hinted=\"%s\",profile=\"%s\"", hinted,
			 b->profile);
	else
		snprintf(labels, sizeof(labels), "profile=\"%s\"", b->profile);
	sx_metric_observe(family, labels, s);
}

void sx_batch_zero_series(struct sx_metrics *m, const struct sx_profile *p)
{
	static const char *const results[] = {"no_hint", "hint_used", "hint_not_used"};
	/* pkg/scheduler/metrics: the reasons of 1.35/1.36, then 1.37's */
	static const char *const reasons135[] = {
		"pod_failed", "pod_skipped", "node_missing",	 "node_not_full",
		"empty_list", "expired",     "pod_incompatible", "pod_not_batchable"};
	static const char *const reasons137[] = {
		"pod_failed",	  "pod_skipped",   "pod_nominated",    "node_missing",
		"empty_list",	  "expired",	   "pod_incompatible", "pod_not_batchable",
		"prescore_error", "rescore_error", "normalize_error"};
	bool v137 = sx_release(&p->features) >= 37;
	const char *const *reasons = v137 ? reasons137 : reasons135;
	size_t nreasons = v137 ? SX_ARRAY_SIZE(reasons137) : SX_ARRAY_SIZE(reasons135);
	char esc[300], labels[400];

	if (!m)
		return;
	sx_metrics_label_escape(p->scheduler_name, esc, sizeof(esc));
	for (size_t i = 0; i < SX_ARRAY_SIZE(results); i++) {
		snprintf(labels, sizeof(labels), "profile=\"%s\",result=\"%s\"", esc, results[i]);
		sx_metrics_touch(m, "scheduler_batch_attempts_total", labels);
	}
	for (size_t i = 0; i < nreasons; i++) {
		snprintf(labels, sizeof(labels), "profile=\"%s\",reason=\"%s\"", esc, reasons[i]);
		sx_metrics_touch(m, "scheduler_batch_cache_flushed_total", labels);
	}
	snprintf(labels, sizeof(labels), "hinted=\"no_hint\",profile=\"%s\"", esc);
	sx_metrics_touch(m, "scheduler_get_node_hint_duration_seconds", labels);
	snprintf(labels, sizeof(labels), "profile=\"%s\"", esc);
	sx_metrics_touch(m, "scheduler_store_schedule_results_duration_seconds", labels);
	sx_metrics_touch(m, "scheduler_batch_rescore_attempts_total", labels);
	sx_metrics_touch(m, "scheduler_batch_rescore_duration_seconds", labels);
}

/* logUnusableState: counts the flush (the state itself stays, as upstream). */
static void unusable(struct sx_batch *b, int64_t cycle, const char *reason)
{
	count(b, b->f.flushed, "reason", reason);
	sx_log(4, "OpportunisticBatch found unusable state profile=%s cycleCount=%lld reason=%s",
	       b->profile, (long long)cycle, reason);
}

/* ---------- the batch ---------- */

static double default_now(void)
{
	return sx_now_s();
}

/* computeBatchablePlugins: the PreFilter, Filter, PreScore and Score
 * plugins, each once; off when one cannot sign or extenders exist. */
static void batchable_plugins(struct sx_batch *b, bool extenders)
{
	static const int points[] = {SX_PT_PRE_FILTER, SX_PT_FILTER, SX_PT_PRE_SCORE, SX_PT_SCORE};
	const struct sx_profile *prof = b->prof;
	bool seen[SX_MAX_PLUGINS] = {false};
	char missing[512] = "";
	size_t off = 0;

	b->sign_enabled = true;
	if (extenders) {
		sx_log(1,
		       "Disabling signatures for profile because it has extenders configured. "
		       "profile=%s",
		       prof->scheduler_name);
		b->sign_enabled = false;
	}
	for (size_t k = 0; k < SX_ARRAY_SIZE(points); k++) {
		const struct sx_enabled *e = prof->points[points[k]];

		for (unsigned i = 0; i < prof->n[points[k]]; i++) {
			if (seen[e[i].index])
				continue;
			seen[e[i].index] = true;
			if (e[i].plugin->sign) {
				b->signers[b->nsigners++] = &e[i];
				continue;
			}
			b->sign_enabled = false;
			if (off < sizeof(missing))
				off += (size_t)snprintf(missing + off, sizeof(missing) - off,
							"%s%s", off ? " " : "", e[i].plugin->name);
		}
	}
	if (off)
		sx_log(1,
		       "Disabling signatures for profile because plugins do not support it. "
		       "profile=%s plugins=[%s]",
		       prof->scheduler_name, missing);
}

struct sx_batch *sx_batch_new(const struct sx_profile *prof, struct sx_metrics *m, bool extenders)
{
	struct sx_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->prof = prof;
	b->m = m;
	b->f.attempts = sx_metrics_find(m, "scheduler_batch_attempts_total");
	b->f.flushed = sx_metrics_find(m, "scheduler_batch_cache_flushed_total");
	b->f.rescores = sx_metrics_find(m, "scheduler_batch_rescore_attempts_total");
	b->f.rescore_duration = sx_metrics_find(m, "scheduler_batch_rescore_duration_seconds");
	b->f.hint_duration = sx_metrics_find(m, "scheduler_get_node_hint_duration_seconds");
	b->f.store_duration =
		sx_metrics_find(m, "scheduler_store_schedule_results_duration_seconds");
	b->now = default_now;
	b->rng = 0x9E3779B97F4A7C15ull;
	b->rescore = sx_release(&prof->features) >= 37;
	b->np = prof->n[SX_PT_SCORE];
	sx_buf_init(&b->sig);
	sx_metrics_label_escape(prof->scheduler_name, b->profile, sizeof(b->profile));
	batchable_plugins(b, extenders);
	return b;
}

static void drop_state(struct sx_batch *b)
{
	free(b->names);
	free(b->keys);
	free(b->totals);
	free(b->raw);
	b->names = NULL;
	b->keys = NULL;
	b->totals = NULL;
	b->raw = NULL;
	b->n = b->head = 0;
	b->has_state = false;
}

void sx_batch_free(struct sx_batch *b)
{
	if (!b)
		return;
	drop_state(b);
	sx_buf_free(&b->sig);
	free(b);
}

bool sx_batch_signs(const struct sx_batch *b)
{
	return b && b->sign_enabled;
}

int64_t sx_batch_batched(const struct sx_batch *b)
{
	return b->batched;
}

uint32_t sx_batch_remaining(const struct sx_batch *b)
{
	return b->has_state ? b->n - b->head : 0;
}

uint32_t sx_batch_nodes(const struct sx_batch *b, sx_str *out, uint32_t max)
{
	uint32_t n = sx_batch_remaining(b);

	for (uint32_t i = 0; i < n && i < max; i++)
		out[i] = b->names[b->head + i];
	return n;
}

void sx_batch_set_clock(struct sx_batch *b, double (*now)(void))
{
	b->now = now ? now : default_now;
}

/* ---------- signatures ---------- */

static void put_u32(struct sx_buf *s, uint32_t v)
{
	sx_buf_put(s, (const char *)&v, sizeof(v));
}

static void put_i64(struct sx_buf *s, int64_t v)
{
	sx_buf_put(s, (const char *)&v, sizeof(v));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void put_sorted(struct sx_buf *s, uint64_t *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	put_u32(s, n);
	sx_buf_put(s, (const char *)v, sizeof(*v) * n);
}

static void put_requirements(struct sx_buf *s, const struct sx_requirement *r, uint32_t n)
{
	put_u32(s, n);
	for (uint32_t i = 0; i < n; i++) {
		put_u32(s, r[i].key);
		put_u32(s, r[i].op);
		put_u32(s, r[i].nvalues);
		sx_buf_put(s, (const char *)r[i].values, sizeof(sx_str) * r[i].nvalues);
	}
}

static void put_term(struct sx_buf *s, const struct sx_node_selector_term *t)
{
	put_requirements(s, t->exprs, t->nexprs);
	put_requirements(s, t->fields, t->nfields);
}

static void put_labels(struct sx_buf *s, const struct sx_labels *l)
{
	put_u32(s, l->n);
	sx_buf_put(s, (const char *)l->items, sizeof(*l->items) * l->n);
}

static void put_resources(struct sx_buf *s, const struct sx_resources *r)
{
	uint64_t sc[64];
	uint32_t n = r->nscalar < 32 ? r->nscalar : 32;

	put_i64(s, r->milli_cpu);
	put_i64(s, r->memory);
	put_i64(s, r->ephemeral_storage);
	put_i64(s, r->pods);
	for (uint32_t i = 0; i < n; i++)
		sc[i] = ((uint64_t)r->scalar[i].name << 32) | (uint32_t)i;
	qsort(sc, n, sizeof(*sc), cmp_u64);
	put_u32(s, r->nscalar);
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_scalar *x = &r->scalar[(uint32_t)sc[i]];

		put_u32(s, x->name);
		put_i64(s, x->value);
	}
	for (uint32_t i = n; i < r->nscalar; i++) { /* beyond 32: in order */
		put_u32(s, r->scalar[i].name);
		put_i64(s, r->scalar[i].value);
	}
}

/* Orders tolerations by key and value (TolerationsSigner), then by the
 * rest, so that equal sets give equal bytes. */
static int cmp_toleration(const struct sx_toleration *a, const struct sx_toleration *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->effect != b->effect)
		return a->effect < b->effect ? -1 : 1;
	if (a->has_seconds != b->has_seconds)
		return a->has_seconds ? 1 : -1;
	if (a->toleration_seconds != b->toleration_seconds)
		return a->toleration_seconds < b->toleration_seconds ? -1 : 1;
	return 0;
}

static void sign_tolerations(struct sx_buf *s, const struct sx_pod *pod)
{
	const struct sx_toleration *v[64];
	uint32_t n = pod->ntolerations < 64 ? pod->ntolerations : 64;

	for (uint32_t i = 0; i < n; i++) { /* insertion sort: a handful */
		const struct sx_toleration *x = &pod->tolerations[i];
		uint32_t j = i;

		while (j > 0 && cmp_toleration(v[j - 1], x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	put_u32(s, pod->ntolerations);
	for (uint32_t i = 0; i < pod->ntolerations; i++) {
		const struct sx_toleration *t = i < n ? v[i] : &pod->tolerations[i];

		put_u32(s, t->key);
		put_u32(s, t->value);
		put_u32(s, (uint32_t)t->op << 8 | t->effect);
		put_i64(s, t->has_seconds ? t->toleration_seconds : -1);
	}
}

static void sign_node_affinity(struct sx_buf *s, const struct sx_pod *pod)
{
	const struct sx_node_affinity *na = pod->affinity ? pod->affinity->node_affinity : NULL;

	if (!na) {
		put_u32(s, 0xffffffffu);
		return;
	}
	if (na->required) {
		put_u32(s, na->required->nterms);
		for (uint32_t i = 0; i < na->required->nterms; i++)
			put_term(s, &na->required->terms[i]);
	} else {
		put_u32(s, 0xfffffffeu);
	}
	put_u32(s, na->npreferred);
	for (uint32_t i = 0; i < na->npreferred; i++) {
		put_u32(s, (uint32_t)na->preferred[i].weight);
		put_term(s, &na->preferred[i].preference);
	}
}

static void sign_host_ports(struct sx_buf *s, const struct sx_pod *pod)
{
	uint64_t v[64];
	uint32_t n = pod->nports < 64 ? pod->nports : 64;

	for (uint32_t i = 0; i < n; i++)
		v[i] = (uint64_t)pod->ports[i].ip << 32 | (uint32_t)pod->ports[i].protocol << 16 |
		       pod->ports[i].port;
	put_sorted(s, v, n);
	for (uint32_t i = n; i < pod->nports; i++)
		put_u32(s, (uint32_t)pod->ports[i].protocol << 16 | pod->ports[i].port);
}

static void sign_resources(struct sx_buf *s, const struct sx_pod *pod)
{
	put_resources(s, &pod->request);
	put_i64(s, pod->nonzero_milli_cpu);
	put_i64(s, pod->nonzero_memory);
	put_i64(s, pod->fit_score_milli_cpu);
	put_i64(s, pod->fit_score_memory);
}

static void sign_volumes(struct sx_buf *s, const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];

		if (v->source == SX_VSRC_OTHER)
			continue;
		put_u32(s, (uint32_t)v->source << 8 | v->read_only);
		put_u32(s, v->claim);
		put_u32(s, v->id);
		put_u32(s, v->pool);
		put_u32(s, v->nmonitors);
		sx_buf_put(s, (const char *)v->monitors, sizeof(sx_str) * v->nmonitors);
	}
	put_u32(s, 0xffffffffu);
}

static void sign_images(struct sx_buf *s, const struct sx_pod *pod)
{
	uint64_t v[64];
	uint32_t n = 0;

	for (uint32_t i = 0; i < pod->ncontainers && n < 64; i++)
		v[n++] = pod->containers[i].image;
	for (uint32_t i = 0; i < pod->ninit && n < 64; i++)
		v[n++] = (uint64_t)1 << 32 | pod->init_containers[i].image;
	for (uint32_t i = 0; i < pod->nvolumes && n < 64; i++)
		if (pod->volumes[i].source == SX_VSRC_IMAGE)
			v[n++] = (uint64_t)2 << 32 | pod->volumes[i].id;
	put_sorted(s, v, n);
}

/* frameworkImpl.SignPod: its extension point duration is labelled with
 * an outer status that the loop's shadows, so always Success upstream;
 * kept so. */
static void sign_done(const struct sx_batch *b, bool record, uint64_t t0)
{
	if (record)
		sx_fw_metrics_point(b->prof, SX_EP_SIGN, SX_SUCCESS, sx_fw_metrics_now() - t0);
}

bool sx_batch_sign(const struct sx_batch *b, const struct sx_pod *pod, struct sx_buf *sig,
		   bool record)
{
	uint32_t signers = 0;
	uint64_t t0 = record ? sx_fw_metrics_now() : 0;

	sx_buf_reset(sig);
	if (!b->sign_enabled) {
		sign_done(b, record, t0);
		return false;
	}
	for (unsigned i = 0; i < b->nsigners; i++) {
		const struct sx_enabled *e = b->signers[i];
		uint64_t t = sx_fw_metrics_ticks();
		struct sx_status *st = e->plugin->sign(e->self, pod, &signers);

		sx_fw_metrics_plugin(e->index, SX_EP_SIGN, sx_status_code(st),
				     sx_fw_metrics_ticks() - t);
		if (st) {
			char msg[256];

			if (sx_log_verbosity >= 5)
				sx_log(5,
				       "SignPod can't sign pod due to plugin plugin=%s status=%s",
				       e->plugin->name, sx_status_message(st, msg, sizeof(msg)));
			sx_status_free(st);
			sign_done(b, record, t0);
			return false;
		}
	}
	/* SchedulerNameSignerName, then each part asked for, in bit order */
	put_u32(sig, pod->scheduler_name);
	put_u32(sig, signers);
	if (signers & SX_SIGNER_NODE_NAME)
		put_u32(sig, pod->node_name);
	if (signers & SX_SIGNER_TOLERATIONS)
		sign_tolerations(sig, pod);
	if (signers & SX_SIGNER_NODE_AFFINITY)
		sign_node_affinity(sig, pod);
	if (signers & SX_SIGNER_NODE_SELECTOR)
		put_labels(sig, &pod->node_selector);
	if (signers & SX_SIGNER_HOST_PORTS)
		sign_host_ports(sig, pod);
	if (signers & SX_SIGNER_RESOURCES)
		sign_resources(sig, pod);
	if (signers & SX_SIGNER_VOLUMES)
		sign_volumes(sig, pod);
	if (signers & SX_SIGNER_IMAGE_NAMES)
		sign_images(sig, pod);
	if (signers & SX_SIGNER_LABELS)
		put_labels(sig, &pod->meta.labels);
	if (signers & SX_SIGNER_FEATURES)
		put_u32(sig, pod->needs_features);
	sign_done(b, record, t0);
	return !sig->failed;
}

/* ---------- the sorted nodes ---------- */

/* The order of NewSortedScoredNodes' heap: higher total first, ties by
 * the higher random key (upstream's Randomizer). */
static int cmp_rank(const void *pa, const void *pb, void *ctx)
{
	const struct sx_batch *b = ctx;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;

	if (b->totals[x] != b->totals[y])
		return b->totals[x] > b->totals[y] ? -1 : 1;
	if (b->keys[x] != b->keys[y])
		return b->keys[x] > b->keys[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Sorts the state's n entries in place by rank. */
static int sort_state(struct sx_batch *b)
{
	uint32_t n = b->n, np = b->np;
	uint32_t *idx = malloc(sizeof(*idx) * (n + 1));
	sx_str *names = malloc(sizeof(*names) * (n + 1));
	uint64_t *keys = malloc(sizeof(*keys) * (n + 1));
	int64_t *totals = malloc(sizeof(*totals) * (n + 1));
	int64_t *raw = malloc(sizeof(*raw) * ((size_t)n * np + 1));

	if (!idx || !names || !keys || !totals || !raw) {
		free(idx);
		free(names);
		free(keys);
		free(totals);
		free(raw);
		return SX_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_rank, b);
	for (uint32_t i = 0; i < n; i++) {
		names[i] = b->names[idx[i]];
		keys[i] = b->keys[idx[i]];
		totals[i] = b->totals[idx[i]];
		memcpy(raw + (size_t)i * np, b->raw + (size_t)idx[i] * np, sizeof(*raw) * np);
	}
	free(idx);
	free(b->names);
	free(b->keys);
	free(b->totals);
	free(b->raw);
	b->names = names;
	b->keys = keys;
	b->totals = totals;
	b->raw = raw;
	return 0;
}

static uint64_t next_key(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x2545F4914F6CDD1Dull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x >> 1; /* non-negative, as rand.Int */
}

/* ---------- StoreScheduleResults ---------- */

/* The feasible nodes of res but the chosen one, with their scores, as the
 * new state; SX_ENOMEM leaves no state. */
static int set_state(struct sx_batch *b, const struct sx_buf *sig,
		     const struct sx_cycle_result *res, uint64_t *rng)
{
	const struct sx_snapshot *snap = res->state->snap;
	uint32_t n = res->nfeasible - 1, np = b->np, k = 0;

	drop_state(b);
	b->names = malloc(sizeof(*b->names) * (n + 1));
	b->keys = malloc(sizeof(*b->keys) * (n + 1));
	b->totals = malloc(sizeof(*b->totals) * (n + 1));
	b->raw = malloc(sizeof(*b->raw) * ((size_t)n * np + 1));
	if (!b->names || !b->keys || !b->totals || !b->raw)
		goto oom;
	for (uint32_t i = 0; i < res->nfeasible; i++) {
		if ((int)res->feasible[i] == res->selected)
			continue;
		b->names[k] = snap->nodes[res->feasible[i]]->name;
		b->keys[k] = next_key(rng);
		b->totals[k] = res->totals[i];
		memcpy(b->raw + (size_t)k * np, res->raw + (size_t)i * np, sizeof(int64_t) * np);
		k++;
	}
	b->n = k;
	if (sort_state(b) < 0)
		goto oom;
	sx_buf_reset(&b->sig);
	sx_buf_put(&b->sig, sig->data, sig->len);
	if (b->sig.failed)
		goto oom;
	b->created = b->now();
	b->has_state = true;
	return 0;
oom:
	drop_state(b);
	return SX_ENOMEM;
}

void sx_batch_store(struct sx_batch *b, const struct sx_buf *sig, sx_str hint,
		    const struct sx_cycle_result *res, int64_t cycle, uint64_t *rng)
{
	double t0 = sx_now_s();
	const struct sx_snapshot *snap = res->state->snap;
	sx_str chosen = snap->nodes[res->selected]->name;
	/* otherNodes: nil with one feasible node (not scored) */
	bool others = res->nfeasible >= 2 && res->totals;

	b->last_cycle = cycle;
	b->last_chosen = chosen;
	b->last_succeeded = true;
	if (hint == chosen) {
		count(b, b->f.attempts, "result", "hint_used");
		b->batched++;
		goto out;
	}
	if (hint != SX_STR_EMPTY)
		count(b, b->f.attempts, "result", "hint_not_used");
	if (sig && others) {
		if (set_state(b, sig, res, rng ? rng : &b->rng) == 0)
			goto out;
	} else {
		unusable(b, cycle, others ? "pod_not_batchable" : "empty_list");
	}
	drop_state(b);
out:
	observe(b, b->f.store_duration, NULL, sx_now_s() - t0);
}

/* ---------- GetNodeHint ---------- */

/* batchStateCompatible, up to the check of the node chosen last. */
static bool compatible(struct sx_batch *b, const struct sx_pod *pod, const struct sx_buf *sig,
		       int64_t cycle)
{
	if (!b->has_state || b->head >= b->n)
		return false;
	if (cycle != b->last_cycle + 1) {
		unusable(b, cycle, "pod_skipped");
		return false;
	}
	if (!b->last_succeeded) {
		unusable(b, cycle, "pod_failed");
		return false;
	}
	if (b->rescore && pod->nominated_node != SX_STR_EMPTY) {
		unusable(b, cycle, "pod_nominated");
		return false;
	}
	if (!sig || sig->len != b->sig.len || memcmp(sig->data, b->sig.data, sig->len) != 0) {
		unusable(b, cycle, "pod_incompatible");
		return false;
	}
	if (b->now() > b->created + MAX_BATCH_AGE_S) {
		unusable(b, cycle, "expired");
		return false;
	}
	return true;
}

/* PreScore of one node on a copy of cs (the cycle's own PreScore state is
 * made later, over the feasible nodes, if the hint is not taken); fills
 * raw[np] and skipped[np]. NULL or the failing status, and *phase says
 * which: 0 PreScore, 1 Score. */
static struct sx_status *score_node(struct sx_batch *b, struct sx_cycle_state *cs,
				    const struct sx_pod *pod, struct sx_node_info *ni, int64_t *raw,
				    bool *skipped, int *phase)
{
	const struct sx_profile *prof = b->prof;
	const struct sx_enabled *e = prof->points[SX_PT_PRE_SCORE];
	const struct sx_enabled *sc = prof->points[SX_PT_SCORE];
	struct sx_node_info *nodes[1] = {ni};

	*phase = 0;
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_SCORE]; i++) {
		struct sx_status *st = e[i].plugin->pre_score(e[i].self, cs, pod, nodes, 1);
		enum sx_code code = sx_status_code(st);

		if (code == SX_SKIP)
			cs->skip_score[e[i].index] = true;
		else if (code != SX_SUCCESS)
			return sx_status_as_error(st, "running PreScore plugin \"%s\": %s",
						  e[i].plugin->name);
		sx_status_free(st);
	}
	*phase = 1;
	for (unsigned p = 0; p < b->np; p++) {
		int64_t score = 0;
		struct sx_status *st;

		skipped[p] = cs->skip_score[sc[p].index];
		raw[p] = 0;
		if (skipped[p])
			continue;
		st = sc[p].plugin->score(sc[p].self, cs, pod, ni, &score);
		if (!sx_status_is_success(st))
			return sx_status_as_error(st, "plugin \"%s\" failed with: %s",
						  sc[p].plugin->name);
		sx_status_free(st);
		raw[p] = score;
	}
	return NULL;
}

/* NormalizeScores over the state's nodes [head, n): totals again from
 * the raw scores, weighted. */
static struct sx_status *normalize(struct sx_batch *b, const struct sx_cycle_state *cs,
				   const struct sx_pod *pod, const bool *skipped)
{
	const struct sx_enabled *sc = b->prof->points[SX_PT_SCORE];
	uint32_t n = b->n - b->head, np = b->np;
	struct sx_node_score *list = malloc(sizeof(*list) * (n + 1));

	if (!list)
		return sx_status_oom();
	for (uint32_t i = b->head; i < b->n; i++)
		b->totals[i] = 0;
	for (uint32_t p = 0; p < np; p++) {
		if (skipped[p])
			continue;
		for (uint32_t i = 0; i < n; i++) {
			list[i].node = b->names[b->head + i];
			list[i].score = b->raw[(size_t)(b->head + i) * np + p];
		}
		if (sc[p].plugin->normalize_score) {
			struct sx_status *st =
				sc[p].plugin->normalize_score(sc[p].self, cs, pod, list, n);
			if (!sx_status_is_success(st)) {
				free(list);
				return sx_status_as_error(
					st, "running Normalize on Score plugin \"%s\": %s",
					sc[p].plugin->name);
			}
		}
		for (uint32_t i = 0; i < n; i++)
			b->totals[b->head + i] += list[i].score * sc[p].weight;
	}
	free(list);
	return NULL;
}

/* rescoreHintedNode: the node chosen last, scored again, joins the
 * candidates; every candidate is normalized again and the list sorted.
 * False (and a flush) when a phase fails. */
static bool rescore(struct sx_batch *b, const struct sx_pod *pod, struct sx_cycle_state *cs,
		    struct sx_node_info *ni, int64_t cycle)
{
	double t0 = sx_now_s();
	uint32_t np = b->np, n = b->n - b->head;
	int64_t *raw = calloc(np + 1, sizeof(*raw));
	bool *skipped = calloc(np + 1, sizeof(*skipped));
	struct sx_cycle_state *copy = sx_cycle_state_clone(b->prof, cs);
	struct sx_status *st = NULL;
	const char *reason = NULL;
	int phase = 0;

	count(b, b->f.rescores, NULL, NULL);
	if (!raw || !skipped || !copy) {
		reason = "rescore_error";
		goto out;
	}
	st = score_node(b, copy, pod, ni, raw, skipped, &phase);
	if (st) {
		reason = phase == 0 ? "prescore_error" : "rescore_error";
		goto out;
	}
	/* the candidates left, then the node chosen last (Randomizer 0) */
	if (b->head > 0) {
		memmove(b->names, b->names + b->head, sizeof(*b->names) * n);
		memmove(b->keys, b->keys + b->head, sizeof(*b->keys) * n);
		memmove(b->totals, b->totals + b->head, sizeof(*b->totals) * n);
		memmove(b->raw, b->raw + (size_t)b->head * np, sizeof(*b->raw) * n * np);
		b->head = 0;
		b->n = n;
	}
	{
		sx_str *names = realloc(b->names, sizeof(*names) * (n + 1));
		uint64_t *keys = names ? realloc(b->keys, sizeof(*keys) * (n + 1)) : NULL;
		int64_t *totals = keys ? realloc(b->totals, sizeof(*totals) * (n + 1)) : NULL;
		int64_t *r =
			totals ? realloc(b->raw, sizeof(*r) * ((size_t)(n + 1) * np + 1)) : NULL;

		if (names)
			b->names = names;
		if (keys)
			b->keys = keys;
		if (totals)
			b->totals = totals;
		if (r)
			b->raw = r;
		if (!r) {
			reason = "rescore_error";
			goto out;
		}
	}
	b->names[n] = ni->name;
	b->keys[n] = 0;
	b->totals[n] = 0;
	memcpy(b->raw + (size_t)n * np, raw, sizeof(*raw) * np);
	b->n = n + 1;
	st = normalize(b, copy, pod, skipped);
	if (st) {
		reason = "normalize_error";
		goto out;
	}
	if (sort_state(b) < 0)
		reason = "rescore_error";
out:
	if (st) {
		char msg[512];

		sx_log(4, "OpportunisticBatch rescoring: %s",
		       sx_status_message(st, msg, sizeof(msg)));
		sx_status_free(st);
	}
	if (reason)
		unusable(b, cycle, reason);
	sx_cycle_state_free(b->prof, copy);
	free(raw);
	free(skipped);
	observe(b, b->f.rescore_duration, NULL, sx_now_s() - t0);
	return !reason;
}

/* The node chosen last, filtered again for pod: 1.35/1.36 use the state
 * only when pod no longer fits there; 1.37 scores it again when it does
 * (refreshHintCandidates). */
static bool refresh(struct sx_batch *b, const struct sx_pod *pod, struct sx_cycle_state *cs,
		    int64_t cycle)
{
	const struct sx_snapshot *snap = cs->snap;
	int at = sx_snapshot_find(snap, b->last_chosen);
	struct sx_status *st;
	bool rejected;

	if (at < 0) {
		unusable(b, cycle, "node_missing");
		return false;
	}
	st = sx_run_filters(b->prof, cs, pod, snap->nodes[at]);
	rejected = sx_status_is_rejected(st);
	sx_status_free(st);
	if (rejected)
		return true;
	if (!b->rescore) {
		unusable(b, cycle, "node_not_full");
		return false;
	}
	return rescore(b, pod, cs, snap->nodes[at], cycle);
}

sx_str sx_batch_hint(struct sx_batch *b, const struct sx_pod *pod, const struct sx_buf *sig,
		     struct sx_cycle_state *cs, int64_t cycle)
{
	double t0 = sx_now_s();
	sx_str hint = SX_STR_EMPTY;

	if (compatible(b, pod, sig, cycle) && refresh(b, pod, cs, cycle) && b->head < b->n)
		hint = b->names[b->head++];
	if (hint == SX_STR_EMPTY) {
		count(b, b->f.attempts, "result", "no_hint");
		sx_log(4, "OpportunisticBatch no node hint available for pod profile=%s pod=%s/%s",
		       b->profile, sx_str_get(pod->meta.ns), pod->meta.name);
	} else {
		sx_log(3,
		       "OpportunisticBatch provided node hint profile=%s pod=%s/%s hint=%s "
		       "remainingNodes=%u",
		       b->profile, sx_str_get(pod->meta.ns), pod->meta.name, sx_str_get(hint),
		       b->n - b->head);
	}
	observe(b, b->f.hint_duration, hint ? "hint" : "no_hint", sx_now_s() - t0);
	return hint;
}
