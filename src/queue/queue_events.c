/* Cluster events in the scheduling queue (upstream
 * backend/queue/scheduling_queue.go with queueing hints): which
 * registrations each profile's plugins made, isPodWorthRequeuing, the
 * moves an event causes, and the events kept for in-flight pods. */
#include <stdlib.h>
#include <string.h>

#include "schedext/framework_metrics.h"
#include "schedext/vec.h"
#include "queue_int.h"

/* A plugin without an events table is interested in everything. */
static const struct sx_event_reg wildcard_reg = {SX_RES_WILDCARD, SX_ACT_ALL, NULL};

/* Points whose plugins can reject a pod before it is bound. */
static const enum sx_point hint_points[] = {SX_PT_PRE_ENQUEUE, SX_PT_PRE_FILTER, SX_PT_FILTER,
					    SX_PT_RESERVE, SX_PT_PERMIT};

static bool seen(const struct qprof *qp, int plugin)
{
	for (uint32_t i = 0; i < qp->n; i++)
		if (qp->regs[i].plugin == plugin)
			return true;
	return false;
}

static int add_reg(struct qprof *qp, uint32_t *cap, int plugin, void *self,
		   const struct sx_event_reg *reg)
{
	if (sx_vec_reserve(qp->regs, *cap, qp->n + 1, 16) < 0)
		return SX_ENOMEM;
	qp->regs[qp->n++] = (struct qreg){plugin, self, reg};
	return 0;
}

/* The plugin's rows (or the wildcard) appended to qp. */
static int add_plugin(struct qprof *qp, uint32_t *cap, const struct sx_enabled *en)
{
	const struct sx_event_reg *r = en->plugin->events;

	if (!r)
		return add_reg(qp, cap, en->index, en->self, &wildcard_reg);
	for (; r->resource != SX_RES_NONE; r++)
		if (add_reg(qp, cap, en->index, en->self, r) < 0)
			return SX_ENOMEM;
	return 0;
}

static int build_profile(struct qprof *qp, const struct sx_profile *prof)
{
	uint32_t cap = 0;

	for (unsigned k = 0; k < SX_ARRAY_SIZE(hint_points); k++) {
		enum sx_point pt = hint_points[k];

		for (unsigned i = 0; i < prof->n[pt]; i++) {
			const struct sx_enabled *en = &prof->points[pt][i];

			if (seen(qp, en->index))
				continue;
			if (add_plugin(qp, &cap, en) < 0)
				return SX_ENOMEM;
		}
	}
	return 0;
}

int sx__queue_build_hints(struct sx_queue *q)
{
	q->profs = calloc(q->cfg->nprofiles, sizeof(*q->profs));
	if (!q->profs)
		return SX_ENOMEM;
	for (unsigned i = 0; i < q->cfg->nprofiles; i++)
		if (build_profile(&q->profs[i], q->cfg->profiles[i]) < 0) {
			sx__queue_free_hints(q);
			return SX_ENOMEM;
		}
	return 0;
}

void sx__queue_free_hints(struct sx_queue *q)
{
	for (unsigned i = 0; q->profs && i < q->cfg->nprofiles; i++)
		free(q->profs[i].regs);
	free(q->profs);
	q->profs = NULL;
}

/* ---------- isPodWorthRequeuing ---------- */

static bool has_objects(const struct sx_cluster_event *ev)
{
	return ev->resource == SX_RES_POD || ev->resource == SX_RES_ASSIGNED_POD ||
	       ev->resource == SX_RES_UNSCHEDULED_POD || ev->resource == SX_RES_NODE;
}

enum strategy sx__queue_worth(struct sx_queue *q, const struct qpod *e,
			      const struct sx_cluster_event *ev, const void *old_obj,
			      const void *new_obj)
{
	uint64_t rej = e->unsched | e->pending;
	const struct qprof *qp = &q->profs[e->prof_idx];
	enum strategy s = S_SKIP;

	if (rej == 0 || ev->resource == SX_RES_WILDCARD)
		return S_AFTER_BACKOFF;
	if (rej & (SX_REJ_ANY | SX_REJ_EXTENDER)) {
		if (!e->pending)
			return S_AFTER_BACKOFF;
		s = S_AFTER_BACKOFF;
	}
	for (uint32_t i = 0; i < qp->n; i++) {
		const struct qreg *r = &qp->regs[i];
		uint64_t bit = 1ull << r->plugin;
		enum sx_hint h = SX_QUEUE;

		if (!(rej & bit) || !sx_event_matches(r->reg, ev))
			continue;
		if (r->reg->hint && (old_obj || new_obj || has_objects(ev))) {
			uint64_t t0 = sx_fw_metrics_now();
			q->stats.hint_calls++;
			h = r->reg->hint(r->self, e->pod, old_obj, new_obj);
			sx_fw_metrics_hint(r->plugin, q->cur_event ? q->cur_event : "",
					   h == SX_QUEUE, sx_fw_metrics_now() - t0);
		}
		if (h == SX_QUEUE_SKIP)
			continue;
		if (e->pending & bit)
			return S_IMMEDIATELY;
		s = S_AFTER_BACKOFF;
		if (!e->pending)
			return s;
	}
	return s;
}

/* ---------- moves ---------- */

void sx__queue_event_locked(struct sx_queue *q, const struct sx_cluster_event *ev,
			    const void *old_obj, const void *new_obj, const struct qpod *skip)
{
	double now = q->now(q->now_ctx);
	char label[64];

	q->stats.events++;
	q->cur_event = sx_event_label(ev, label, sizeof(label));
	for (uint32_t i = 0; q->nunsched && i < q->nbuckets; i++) {
		struct qpod *e = q->buckets[i], *next;

		for (; e; e = next) {
			enum strategy s;

			next = e->hnext;
			if (e->where != W_UNSCHED || e == skip)
				continue;
			/* Gated by SchedulingGates: only its own update helps
			 * (upstream's shortcut, kubernetes issue 124384). */
			if (e->gated && e->gating == q->gates_idx && q->gates_idx >= 0)
				continue;
			s = sx__queue_worth(q, e, ev, old_obj, new_obj);
			if (s != S_SKIP && sx__queue_requeue_strategy(q, e, s, now) != W_UNSCHED)
				q->stats.moved++;
		}
	}
	q->cur_event = NULL; /* label is a local */
	sx__queue_record_locked(q, ev, old_obj, new_obj);
}

void sx__queue_record_locked(struct sx_queue *q, const struct sx_cluster_event *ev,
			     const void *old_obj, const void *new_obj)
{
	struct qevent *rec;

	if (!q->inf_head)
		return;
	if (sx_vec_reserve(q->evs, q->ev_cap, q->ev_n + 1, 64) < 0)
		return; /* the replay misses it: the flush catches up */
	rec = &q->evs[q->ev_n++];
	*rec = (struct qevent){q->next_seq++, *ev, NULL, NULL};
	rec->ev.label = NULL; /* labels are only for logs; do not keep pointers */
	if (ev->resource == SX_RES_NODE) {
		rec->old_obj = old_obj ? sx_node_ref(old_obj) : NULL;
		rec->new_obj = new_obj ? sx_node_ref(new_obj) : NULL;
	} else if (has_objects(ev)) {
		rec->old_obj = old_obj ? sx_pod_ref(old_obj) : NULL;
		rec->new_obj = new_obj ? sx_pod_ref(new_obj) : NULL;
	}
}

/* ---------- in-flight events ---------- */

static void event_clear(struct qevent *r)
{
	if (r->ev.resource == SX_RES_NODE) {
		sx_node_unref(r->old_obj);
		sx_node_unref(r->new_obj);
	} else if (has_objects(&r->ev)) {
		sx_pod_unref(r->old_obj);
		sx_pod_unref(r->new_obj);
	}
	r->old_obj = r->new_obj = NULL;
}

/* Drops the events no in-flight pod needs any more. */
static void prune(struct sx_queue *q)
{
	uint64_t min = q->inf_head ? q->inf_head->pop_seq : q->next_seq;

	while (q->ev_head < q->ev_n && q->evs[q->ev_head].seq < min)
		event_clear(&q->evs[q->ev_head++]);
	if (q->ev_head == q->ev_n) {
		q->ev_head = q->ev_n = 0;
	} else if (q->ev_head > q->ev_n / 2) {
		memmove(q->evs, q->evs + q->ev_head, (q->ev_n - q->ev_head) * sizeof(*q->evs));
		q->ev_n -= q->ev_head;
		q->ev_head = 0;
	}
}

void sx__queue_inflight_add(struct sx_queue *q, struct qpod *e)
{
	e->pop_seq = q->next_seq;
	e->inf_next = NULL;
	e->inf_prev = q->inf_tail;
	if (q->inf_tail)
		q->inf_tail->inf_next = e;
	else
		q->inf_head = e;
	q->inf_tail = e;
}

void sx__queue_inflight_remove(struct sx_queue *q, struct qpod *e)
{
	if (e->inf_prev)
		e->inf_prev->inf_next = e->inf_next;
	else
		q->inf_head = e->inf_next;
	if (e->inf_next)
		e->inf_next->inf_prev = e->inf_prev;
	else
		q->inf_tail = e->inf_prev;
	e->inf_prev = e->inf_next = NULL;
	prune(q);
}

enum strategy sx__queue_replay(struct sx_queue *q, const struct qpod *e)
{
	enum strategy s = S_SKIP;

	for (uint32_t i = q->ev_head; i < q->ev_n; i++) {
		const struct qevent *r = &q->evs[i];

		if (r->seq < e->pop_seq)
			continue;
		switch (sx__queue_worth(q, e, &r->ev, r->old_obj, r->new_obj)) {
		case S_SKIP:
			break;
		case S_IMMEDIATELY:
			return S_IMMEDIATELY;
		case S_AFTER_BACKOFF:
			s = S_AFTER_BACKOFF;
			if (!e->pending)
				return s;
			break;
		}
	}
	return s;
}

void sx__queue_free_events(struct sx_queue *q)
{
	for (uint32_t i = q->ev_head; i < q->ev_n; i++)
		event_clear(&q->evs[i]);
	free(q->evs);
	q->evs = NULL;
	q->ev_head = q->ev_n = q->ev_cap = 0;
}

/* ---------- rejectors ---------- */

void sx_rejectors_add_status(struct sx_rejectors *r, const struct sx_status *st)
{
	uint64_t bit;
	int idx;

	if (!st || (!sx_status_is_rejected(st) && st->code != SX_PENDING))
		return;
	if (st->plugin && strcmp(st->plugin, "Extender") == 0) {
		bit = SX_REJ_EXTENDER;
	} else {
		idx = st->plugin ? sx_plugin_index(st->plugin) : -1;
		bit = idx >= 0 && idx < 62 ? 1ull << idx : SX_REJ_ANY;
	}
	if (st->code == SX_PENDING)
		r->pending |= bit;
	else
		r->unschedulable |= bit;
}

void sx_rejectors_from_result(struct sx_rejectors *r, const struct sx_cycle_result *res)
{
	sx_rejectors_add_status(r, res->pre_filter);
	if (res->absent_status && res->absent_status->nreasons)
		sx_rejectors_add_status(r, res->absent_status);
	for (uint32_t i = 0; res->statuses && i < res->num_all_nodes; i++)
		sx_rejectors_add_status(r, res->statuses[i]);
}
