/* Programs: compile (parse + check), evaluate against a device, reference
 * counting, and the compile cache. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_int.h"
#include "schedext/common.h"

#define CEL_COMPILE_MEM	   (16u << 20) /* arena bound for one program */
#define CEL_EVAL_MEM	   (64u << 20) /* arena bound for one evaluation */
#define CEL_CHUNK	   4096
#define CEL_STACK_VERSIONS 32 /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */

struct sx_cel_program {
	int refs; /* atomic */
	struct cel_arena arena;
	struct cel_node *root;
	int n_slots; /* cel.bind variables */
	char *expr;
};

/* ---- arena ---- */

void *cel_arena_alloc(struct cel_arena *a, size_t n)
{
	struct cel_chunk *c = a->head;
	size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (need < n || a->total + need > a->limit) {
		a->limited = true;
		return NULL;
	}
	if (!c || c->cap - c->used < need) {
		size_t cap = need > CEL_CHUNK ? need : CEL_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	a->total += need;
	c->used += need;
	return (char *)c->data + c->used - need;
}

void cel_arena_free(struct cel_arena *a)
{
	while (a->head) {
		struct cel_chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
	a->total = 0;
}

/* ---- compile errors in cel-go's display format ---- */

void cel_compile_error(struct cel_prog_build *b, uint32_t pos, const char *fmt, ...)
{
	char msg[SX_CEL_ERR_LEN];
	size_t line = 1, col = 0, ls = 0, le;
	va_list ap;
	int n;

	if (b->failed)
		return;
	b->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strcmp(msg, "out of memory") == 0) {
		b->oom = true;
		snprintf(b->err, b->errlen, "%s", msg);
		return;
	}
	if (pos > b->len)
		pos = (uint32_t)b->len;
	for (size_t i = 0; i < pos; i++) {
		if (b->src[i] == '\n') {
			line++;
			col = 0;
			ls = i + 1;
		} else if (((unsigned char)b->src[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	for (le = ls; le < b->len && b->src[le] != '\n'; le++)
		;
	n = snprintf(b->err, b->errlen,
		     "compilation failed: ERROR: <input>:%zu:%zu: %s\n | %.*s\n | ", line, col + 1,
		     msg, (int)(le - ls > 200 ? 200 : le - ls), b->src + ls);
	for (size_t i = 0; i < col && n >= 0 && (size_t)n + 2 < b->errlen; i++)
		b->err[n++] = '.';
	if (n >= 0 && (size_t)n + 2 <= b->errlen) {
		b->err[n++] = '^';
		b->err[n] = '\0';
	}
}

/* ---- programs ---- */

/* Frees the compiled literal patterns of the tree. */
static void free_regexes(struct cel_node *n)
{
	if (n->re) {
		regfree(n->re);
		n->re = NULL;
	}
	if (n->kind == N_LIT)
		return;
	for (size_t i = 0; i < n->nargs; i++)
		if (n->args[i])
			free_regexes(n->args[i]);
}

static void program_free(struct sx_cel_program *p)
{
	if (p->root)
		free_regexes(p->root);
	cel_arena_free(&p->arena);
	free(p->expr);
	free(p);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* sx_cel_compile; *oom tells a failure for lack of memory from an
 * invalid expression. */
static struct sx_cel_program *compile(const char *expr, size_t len, bool consumable, char *err,
				      size_t errlen, bool *oom)
{
	char local[SX_CEL_ERR_LEN];
	struct cel_prog_build b = {.err = err ? err : local,
				   .errlen = err ? errlen : sizeof(local),
				   .consumable = consumable};
	struct sx_cel_program *p;
	if (b.errlen)
		b.err[0] = '\0';
	if (len > SX_CEL_MAX_EXPR_LEN) {
		set_err(err, errlen,
			"compilation failed: expression is %zu bytes long, the limit is %d", len,
			SX_CEL_MAX_EXPR_LEN);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->expr = malloc(len + 1))) {
		free(p);
		set_err(err, errlen, "out of memory");
		*oom = true;
		return NULL;
	}
	memcpy(p->expr, expr, len);
	p->expr[len] = '\0';
	p->refs = 1;
	p->arena.limit = CEL_COMPILE_MEM;
	b.arena = &p->arena;
	b.src = p->expr;
	b.len = len;
	p->root = cel_parse(&b);
	if (p->root && cel_check(&b, p->root) != 0)
		b.failed = true;
	p->n_slots = b.n_slots;
	if (b.failed || !p->root) {
		if (!b.failed)
			set_err(err, errlen, "out of memory");
		*oom = b.oom || !b.failed;
		program_free(p);
		return NULL;
	}
	return p;
}

struct sx_cel_program *sx_cel_compile(const char *expr, size_t len, char *err, size_t errlen)
{
	bool oom = false;

	return compile(expr, len, false, err, errlen, &oom);
}

struct sx_cel_program *sx_cel_program_ref(struct sx_cel_program *p)
{
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void sx_cel_program_unref(struct sx_cel_program *p)
{
	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		program_free(p);
}

const char *sx_cel_program_expr(const struct sx_cel_program *p)
{
	return p->expr;
}

/* Parses the device's version attributes as upstream does before
 * evaluating: an invalid one fails the evaluation. */
static int parse_versions(struct cel_eval *ev, struct cel_semver *stack, char *err, size_t errlen)
{
	const struct sx_cel_device *d = ev->dev;
	struct cel_semver *v = NULL;
	char msg[256];

	for (size_t i = 0; i < d->n_attrs; i++) {
		const struct sx_cel_attr *a = &d->attrs[i];

		if (a->type != SX_CEL_ATTR_VERSION)
			continue;
		if (!v) {
			v = d->n_attrs <= CEL_STACK_VERSIONS
				    ? stack
				    : cel_arena_alloc(&ev->arena, d->n_attrs * sizeof(*v));
			if (!v) {
				set_err(err, errlen, "out of memory");
				return SX_ENOMEM;
			}
			ev->versions = v;
		}
		if (cel_semver_parse(a->s ? a->s : "", a->s ? strlen(a->s) : 0, false, &v[i], msg,
				     sizeof(msg), &ev->arena) != 0) {
			set_err(err, errlen, "attribute %s: parse semantic version: %s", a->name,
				msg);
			return SX_EINVAL;
		}
	}
	return 0;
}

int sx_cel_eval_device(const struct sx_cel_program *p, const struct sx_cel_device *dev,
		       bool *result, uint64_t *cost, char *err, size_t errlen)
{
	return sx_cel_eval_device_limit(p, dev, SX_CEL_MAX_COST, result, cost, err, errlen);
}

int sx_cel_eval_device_limit(const struct sx_cel_program *p, const struct sx_cel_device *dev,
			     uint64_t limit, bool *result, uint64_t *cost, char *err, size_t errlen)
{
	struct cel_eval ev = {.dev = dev, .limit = limit};
	struct cel_semver versions[CEL_STACK_VERSIONS];
	struct cel_name names[2][CEL_STACK_VERSIONS];
	struct cel_val v;
	int rc = 0;

	ev.arena.limit = CEL_EVAL_MEM;
	*result = false;
	if (p->n_slots) {
		ev.slots = cel_arena_alloc(&ev.arena, (size_t)p->n_slots * sizeof(*ev.slots));
		if (!ev.slots) {
			set_err(err, errlen, "out of memory");
			cel_arena_free(&ev.arena);
			return SX_ENOMEM;
		}
	}
	if (dev->n_attrs <= CEL_STACK_VERSIONS)
		ev.names[0] = names[0];
	if (dev->n_caps <= CEL_STACK_VERSIONS)
		ev.names[1] = names[1];
	ev.driver = dev->driver ? dev->driver : "";
	ev.driver_len = strlen(ev.driver);
	rc = parse_versions(&ev, versions, err, errlen);
	if (rc == 0) {
		v = cel_eval_node(&ev, p->root);
		if (ev.cancelled)
			v = (struct cel_val){
				.kind = K_ERR,
				.err = "operation cancelled: actual cost limit exceeded"};
		if (v.kind == K_BOOL) {
			*result = v.b;
		} else if (v.kind == K_ERR) {
			set_err(err, errlen, "%s", v.err);
			rc = SX_EINVAL;
		} else {
			char t[64];
			struct cel_type ty = {.kind = v.kind};

			if (v.kind == K_LIST || v.kind == K_MAP)
				snprintf(t, sizeof(t), "%s", v.kind == K_LIST ? "list" : "map");
			else
				cel_type_str(&ty, t, sizeof(t));
			set_err(err, errlen, "CEL result of type %s could not be converted to bool",
				t);
			rc = SX_EINVAL;
		}
	}
	if (ev.oom && rc != SX_ENOMEM) {
		/* a lookup or value went missing: the answer cannot be trusted */
		*result = false;
		set_err(err, errlen, "out of memory");
		rc = SX_ENOMEM;
	}
	if (cost)
		*cost = ev.cost;
	cel_arena_free(&ev.arena);
	return rc;
}

/* ---- compile cache: LRU over a doubly linked list, one mutex ---- */

struct cache_entry {
	struct cache_entry *prev, *next;
	uint64_t hash;
	char *expr;
	size_t len;
	struct sx_cel_program *prog; /* NULL: compile failed, msg holds why */
	char *msg;
};

struct sx_cel_cache {
	pthread_mutex_t lock;
	struct cache_entry *head, *tail; /* most recently used first */
	size_t n, max;
	uint64_t misses;
	bool consumable; /* programs compiled with cel.Features.EnableConsumableCapacity */
};

struct sx_cel_cache *sx_cel_cache_new(size_t max_entries)
{
	struct sx_cel_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max = max_entries ? max_entries : 1;
	return c;
}

struct sx_cel_cache *sx_cel_cache_new_features(size_t max_entries, bool consumable)
{
	struct sx_cel_cache *c = sx_cel_cache_new(max_entries);

	if (c)
		c->consumable = consumable;
	return c;
}

static void entry_free(struct cache_entry *e)
{
	sx_cel_program_unref(e->prog);
	free(e->msg);
	free(e->expr);
	free(e);
}

void sx_cel_cache_free(struct sx_cel_cache *c)
{
	if (!c)
		return;
	while (c->head) {
		struct cache_entry *next = c->head->next;

		entry_free(c->head);
		c->head = next;
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void unlink_entry(struct sx_cel_cache *c, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	c->n--;
}

static void push_front(struct sx_cel_cache *c, struct cache_entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
	c->n++;
}

/* Computed outside the lock. */
static uint64_t hash_expr(const char *s, size_t n)
{
	return sx_hash_bytes(s, n);
}

/* Under the lock: the entry for expr, moved to the front, or NULL. */
static struct cache_entry *lookup(struct sx_cel_cache *c, uint64_t hash, const char *expr,
				  size_t len)
{
	for (struct cache_entry *e = c->head; e; e = e->next) {
		if (e->hash == hash && e->len == len && memcmp(e->expr, expr, len) == 0) {
			if (e != c->head) {
				unlink_entry(c, e);
				push_front(c, e);
			}
			return e;
		}
	}
	return NULL;
}

static struct sx_cel_program *answer(struct cache_entry *e, char *err, size_t errlen)
{
	if (!e->prog)
		set_err(err, errlen, "%s", e->msg);
	return sx_cel_program_ref(e->prog);
}

struct sx_cel_program *sx_cel_cache_get(struct sx_cel_cache *c, const char *expr, size_t len,
					char *err, size_t errlen)
{
	char msg[SX_CEL_ERR_LEN];
	struct sx_cel_program *p;
	struct cache_entry *e;
	bool oom = false;
	uint64_t hash = hash_expr(expr, len);

	pthread_mutex_lock(&c->lock);
	e = lookup(c, hash, expr, len);
	if (e) {
		p = answer(e, err, errlen);
		pthread_mutex_unlock(&c->lock);
		return p;
	}
	c->misses++;
	pthread_mutex_unlock(&c->lock);

	/* compile outside the lock; a racing thread may compile it too */
	p = compile(expr, len, c->consumable, msg, sizeof(msg), &oom);
	if (!p && oom) {
		set_err(err, errlen, "%s", msg); /* transient: not cached */
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e) {
		e->expr = malloc(len + 1);
		e->msg = p ? NULL : sx_strdup(msg);
	}
	if (!e || !e->expr || (!p && !e->msg)) {
		if (e) {
			free(e->expr);
			free(e->msg);
			free(e);
		}
		if (!p)
			set_err(err, errlen, "%s", msg);
		return p; /* uncached */
	}
	memcpy(e->expr, expr, len);
	e->expr[len] = '\0';
	e->len = len;
	e->hash = hash;
	e->prog = p;
	pthread_mutex_lock(&c->lock);
	struct cache_entry *old = lookup(c, hash, expr, len);

	if (old) {
		/* another thread won the race: use its entry */
		p = answer(old, err, errlen);
		pthread_mutex_unlock(&c->lock);
		entry_free(e);
		return p;
	}
	push_front(c, e);
	while (c->n > c->max) {
		struct cache_entry *victim = c->tail;

		unlink_entry(c, victim);
		entry_free(victim);
	}
	p = answer(e, err, errlen);
	pthread_mutex_unlock(&c->lock);
	return p;
}

uint64_t sx_cel_cache_misses(const struct sx_cel_cache *c)
{
	return __atomic_load_n(&c->misses, __ATOMIC_RELAXED);
}
