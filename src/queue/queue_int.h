/* Internals of the scheduling queue shared by queue.c (places, heaps, pop,
 * requeue after an attempt) and queue_events.c (cluster events, queueing
 * hints, in-flight events). Everything here runs under sx_queue.mu. */
#ifndef SCHEDEXT_QUEUE_INT_H
#define SCHEDEXT_QUEUE_INT_H

#include <pthread.h>

#include "schedext/hmap.h"
#include "schedext/queue.h"
#include "schedext/registry.h"

enum where { W_NONE, W_ACTIVE, W_BACKOFF, W_UNSCHED, W_INFLIGHT };

/* What a cluster event means for one unschedulable pod (upstream
 * queueingStrategy). */
enum strategy { S_SKIP, S_AFTER_BACKOFF, S_IMMEDIATELY };

struct qpod {
	char *key;
	struct qpod *hnext;
	const struct sx_pod *pod; /* latest object, one reference */
	const struct sx_profile *prof;
	unsigned prof_idx; /* index in cfg->profiles (hint table) */
	enum where where;
	bool gated;		   /* in W_UNSCHED because PreEnqueue said no */
	bool gone;		   /* deleted or bound while in flight */
	bool err_backoff;	   /* last failure was an error: error backoff heap */
	bool assumed;		   /* in flight and assumed (sx_queue_assumed) */
	int gating;		   /* registry index of the gating plugin, or -1 */
	uint64_t unsched, pending; /* rejector plugins (SX_REJ_* bits) */
	double timestamp;	   /* last (re)queue time */
	double initial_attempt;	   /* first time in activeQ; 0 = never */
	double expiry;		   /* backoff expiry */
	uint32_t attempts, unsched_count, err_count;
	uint64_t pop_seq;		  /* first in-flight event seq it must see */
	struct qpod *inf_prev, *inf_next; /* in-flight list, pop order */
	int heap_idx;			  /* index in its heap */
	sx_str nominated;		  /* nominated node, SX_STR_EMPTY = none */
	sx_str gns, gname;		  /* the pod group it is indexed under (queue_group.c);
					   * gname SX_STR_EMPTY = none */
};

/* The queued members of one pod group (queue_group.c). */
struct qgroup {
	uint32_t n, cap;
	struct qpod **m;
};

struct heap {
	struct qpod **items;
	uint32_t n, cap;
	bool (*less)(const struct sx_queue *q, const struct qpod *a, const struct qpod *b);
};

/* One registration of one plugin of a profile. */
struct qreg {
	int plugin; /* registry index */
	void *self;
	const struct sx_event_reg *reg;
};

struct qprof {
	uint32_t n;
	struct qreg *regs;
};

/* A cluster event kept while pods are in flight, with object references
 * (pods and nodes; other kinds are kept without objects). */
struct qevent {
	uint64_t seq;
	struct sx_cluster_event ev;
	const void *old_obj, *new_obj;
};

struct sx_queue {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	const struct sx_config *cfg;
	const struct sx_profile *sort_prof;
	double (*now)(void *ctx);
	void *now_ctx;
	struct qpod **buckets;
	uint32_t nbuckets, count;
	struct heap active, backoff, err_backoff;
	uint32_t nunsched, ngated, ninflight, nnominated;
	struct qprof *profs;   /* [cfg->nprofiles] */
	struct sx_hmap groups; /* SX_HMAP_PAIR(ns, podGroupName) -> struct qgroup * */
	int gates_idx;	       /* registry index of SchedulingGates */
	bool pop_from_backoff; /* SchedulerPopFromBackoffQ (on) */
	/* in-flight pods and the events seen while they are in flight */
	struct qpod *inf_head, *inf_tail;
	struct qevent *evs;
	uint32_t ev_head, ev_n, ev_cap; /* live events: evs[ev_head .. ev_n) */
	uint64_t next_seq;
	struct sx_queue_stats stats;
	double last_unsched_flush;
	bool closed;
	/* scheduler_queue_incoming_pods_total: what moved the pod (cur_event,
	 * set by each entry point) and where it went */
	const char *cur_event;
	uint32_t nincoming;
	struct {
		char event[64];
		uint8_t queue;
		uint64_t n;
	} incoming[SX_QUEUE_MAX_INCOMING];
};

/* queue.c */
const char *sx__queue_pod_key(const struct sx_pod *pod, char *buf, size_t len);
struct qpod *sx__queue_lookup(const struct sx_queue *q, const char *key);
void sx__queue_set_nominated(struct sx_queue *q, struct qpod *e, sx_str node);
/* Counts one pod entering queue ("active", "backoff", "unschedulable",
 * "gated") because of q->cur_event. */
void sx__queue_count_incoming(struct sx_queue *q, unsigned queue);
void sx__queue_to_unsched(struct sx_queue *q, struct qpod *e, bool gated);
/* Puts e where strategy says (upstream requeuePodWithQueueingStrategy);
 * returns its new place. */
enum where sx__queue_requeue_strategy(struct sx_queue *q, struct qpod *e, enum strategy s,
				      double now);

/* Pops e (from any place): it is in flight, its rejectors reset. */
void sx__queue_pop_locked(struct sx_queue *q, struct qpod *e, struct sx_queue_item *out);

/* queue_group.c: keeps e in the index of its pod's group (call after
 * e->pod changes); unindex before e is freed; free the index. */
void sx__queue_group_index(struct sx_queue *q, struct qpod *e);
void sx__queue_group_unindex(struct sx_queue *q, struct qpod *e);
void sx__queue_groups_free(struct sx_queue *q);

/* queue_events.c */
int sx__queue_build_hints(struct sx_queue *q);
void sx__queue_free_hints(struct sx_queue *q);
/* isPodWorthRequeuing for one event. */
enum strategy sx__queue_worth(struct sx_queue *q, const struct qpod *e,
			      const struct sx_cluster_event *ev, const void *old_obj,
			      const void *new_obj);
/* Moves unschedulable pods for which ev is worth it, then records ev for
 * the in-flight pods; skip (may be NULL) is left alone. */
void sx__queue_event_locked(struct sx_queue *q, const struct sx_cluster_event *ev,
			    const void *old_obj, const void *new_obj, const struct qpod *skip);
/* Keeps ev for the in-flight pods' replay (no move). */
void sx__queue_record_locked(struct sx_queue *q, const struct sx_cluster_event *ev,
			     const void *old_obj, const void *new_obj);
/* determineSchedulingHintForInFlightPod. */
enum strategy sx__queue_replay(struct sx_queue *q, const struct qpod *e);
void sx__queue_inflight_add(struct sx_queue *q, struct qpod *e);
void sx__queue_inflight_remove(struct sx_queue *q, struct qpod *e);
void sx__queue_free_events(struct sx_queue *q);

#endif /* SCHEDEXT_QUEUE_INT_H */
