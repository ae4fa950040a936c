/* Internals of one sx_dra_allocate() call, shared by dra_alloc.c (the
 * search) and dra_result.c (setup and results). Not a public header. */
#ifndef SCHEDEXT_DRA_ALLOC_INT_H
#define SCHEDEXT_DRA_ALLOC_INT_H

#include "dra_int.h"

/* A device of a slice of the index. */
struct devref {
	const struct sx_dra_object *slice;
	uint32_t slice_ix; /* index in the index's slices */
	uint32_t dev;
	uint32_t pool; /* index in alloc.pools */
};

/* One counter of a pool's counter set: what the set offers less what
 * allocated devices consume (may be negative: then nothing is left), and
 * what the devices of this search consume. */
struct counter {
	sx_str name;
	sx_nano avail, used;
};

struct counter_set {
	sx_str name;
	uint32_t n;
	struct counter *c;
};

/* A pool of the node: its newest relevant slices (indices). */
struct pool {
	sx_str driver, pool;
	bool incomplete, invalid;
	/* a device of the pool is in env's allocated sets (else no device
	 * of it needs looking up there); pd: its entries in allocated and
	 * allocated2 (NULL: no device of the pool there) */
	bool any_allocated;
	const struct sx__dra_pool_devs *pd[2];
	uint32_t nslices;
	uint32_t *slices;
	/* DRAPartitionableDevices: the counter sets of its sharedCounters
	 * slices (pools_experimental.go, buildPool). */
	uint32_t nsets;
	struct counter_set *sets;
};

/* requestData: one request, or one subrequest of a firstAvailable list. */
struct rdata {
	const struct sx_dra_exact *req;
	const struct sx_dra_request *parent; /* NULL unless a subrequest */
	const struct sx_dra_object *cls;
	sx_str *class_ids, *req_ids; /* interned selector expressions (memo keys) */
	int num_devices;
	uint32_t nall;
	struct devref *all; /* allocationMode All: the devices, found at setup */
};

struct rreq {
	bool sub;   /* firstAvailable */
	uint32_t n; /* entries in rd */
	struct rdata *rd;
	uint32_t selected; /* the subrequest that got picked */
};

struct cons {
	const struct sx_dra_constraint *c;
	const struct sx_dra_attr *attr; /* matchAttribute: the value */
	int n;
	/* distinctAttribute: the values taken, in order */
	const struct sx_dra_attr *seen[SX_DRA_ALLOCATION_RESULTS_MAX];
};

struct inflight {
	sx_str driver, pool, device;
	bool shared;			/* a share of a multi-allocatable device */
	bool counters;			/* took the device's counters (released on backtrack) */
	const struct sx_dra_exact *req; /* its request (what a share consumes) */
	uint32_t claim;
	const struct sx_dra_device *dev;
	uint32_t pool_ix; /* index in alloc.pools */
};

struct alloc {
	const struct sx_dra_alloc_env *env;
	const struct sx_node *node;
	const struct sx_dra_claim_in *claims;
	uint32_t nclaims;
	struct sx_dra_claim_out *out;
	uint32_t npools;
	struct pool *pools;
	uint32_t *pool_slices;
	struct rreq **reqs; /* [claim][request] */
	struct cons **cons; /* [claim][constraint] */
	uint32_t *ncons;
	uint32_t nstack;
	struct inflight *stack;
	uint64_t calls;
	char *err;
	size_t errlen;
	char kobj[320];
	uint64_t timeout_ns;  /* 0 = none */
	uint64_t deadline_ns; /* set at the first clock check */
	bool prep_mode;	      /* validating once for every node (sx_dra_prepare) */
	bool results;	      /* picks need their request names (not in Filter) */
	void **mem;	      /* heap allocations of this call */
	uint32_t nmem, capmem;
	unsigned char *scratch; /* bump allocations first (may be NULL) */
	size_t scratch_len, scratch_used;
};

/* A prepared allocation: the node-independent validation done once. */
struct sx_dra_prep {
	struct sx_dra_alloc_env env;
	struct alloc a;	    /* prep-mode setup: requests, classes, constraints */
	uint32_t err_claim; /* first node-independent error; nclaims = none */
	uint32_t err_req;
	bool err_constraint; /* the error is the claim's constraints' */
	int err_rc;
	char err[SX_DRA_ERR_LEN];
	uint32_t memo_sig; /* its signature in the index's Filter memo; 0 = none */
};

/* Zeroed memory owned by the call (scratch, else heap). */
void *sx__dra_amem(struct alloc *a, size_t n, size_t size);

const char *sx__dra_kobj(const struct sx_dra_claim_in *c, char *buf, size_t len);
int sx__dra_gather_pools(struct alloc *a);
/* 1 selectable, 0 not, SX_DRA_FATAL. */
int sx__dra_selectable(struct alloc *a, uint32_t ci, const struct rdata *rd, struct devref d);
/* dra_capacity.c: 1 when request rd's consumption of device d fits
 * beside the shares allocated and those of the search (and keeps every
 * request policy), else 0. */
int sx__dra_capacity_fits(const struct alloc *a, const struct rdata *rd, struct devref d);
/* A new share ID (a random RFC 4122 UUID). */
void sx__dra_share_id(char out[37]);
/* sx_dra_diagnose on a set-up alloc: 0 or a negative. */
int sx__dra_diagnose(struct alloc *a, struct sx_dra_diag *d);
/* The search: SX_DRA_ALLOCATED, SX_DRA_UNSATISFIED or a negative. */
int sx__dra_search(struct alloc *a);

#endif /* SCHEDEXT_DRA_ALLOC_INT_H */
