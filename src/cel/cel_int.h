/* Internals of the CEL evaluator: tokens, AST, static types, runtime
 * values, the overload table. Shared by the files of src/cel only. */
#ifndef SCHEDEXT_CEL_INT_H
#define SCHEDEXT_CEL_INT_H

#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/cel.h"

/* ---- compile-time arena: every node, type and literal of a program ---- */

struct cel_chunk {
	struct cel_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct cel_arena {
	struct cel_chunk *head;
	size_t total; /* bytes handed out */
	size_t limit; /* allocation fails beyond this */
	bool limited; /* an allocation failed on the limit, not for lack of memory */
};

void *cel_arena_alloc(struct cel_arena *a, size_t n);
void cel_arena_free(struct cel_arena *a);

/* ---- static types ---- */

enum cel_kind {
	K_ERR, /* runtime error value */
	K_DYN, /* static only: unknown */
	K_NULL,
	K_BOOL,
	K_INT,
	K_UINT,
	K_DOUBLE,
	K_STRING,
	K_BYTES,
	K_LIST,
	K_MAP,
	K_QTY,
	K_SEMVER,
	K_DEVICE,
};

struct cel_type {
	enum cel_kind kind;
	const struct cel_type *elem; /* K_LIST element, K_MAP value */
	const struct cel_type *key;  /* K_MAP key */
};

extern const struct cel_type cel_t_dyn, cel_t_null, cel_t_bool, cel_t_int, cel_t_uint, cel_t_double,
	cel_t_string, cel_t_bytes, cel_t_qty, cel_t_semver, cel_t_device, cel_t_attr_inner,
	cel_t_attr_outer, cel_t_cap_inner, cel_t_cap_outer, cel_t_list_dyn;

/* "int", "list(string)", ... as cel-go prints types. */
void cel_type_str(const struct cel_type *t, char *buf, size_t len);

/* ---- AST ---- */

enum cel_node_kind {
	N_LIT,	  /* literal value */
	N_IDENT,  /* the `device` variable */
	N_SELECT, /* a.field */
	N_HAS,	  /* has(a.field) */
	N_INDEX,  /* a[b] */
	N_LIST,	  /* [a, b] */
	N_CALL,	  /* operators and functions */
	N_AND,
	N_OR,
	N_COND, /* a ? b : c */
	N_BIND, /* cel.bind(name, args[0], args[1]) */
	N_COMP, /* args[0].all(name, args[1]) and the other macros: `macro` */
	N_ATTR, /* device.attributes|capacity[dom].id fused: `name` = id, `dom`, `macro` = 1 for
		   capacity, `member` = has() */
};

struct cel_overload;

struct cel_node {
	enum cel_node_kind kind;
	uint32_t pos; /* byte offset in the source, for messages */
	const struct cel_type *type;
	const char *name; /* N_SELECT/N_HAS field, N_CALL function */
	size_t name_len;
	bool member;		/* N_CALL: receiver style, args[0] is the receiver */
	struct cel_node **args; /* operands */
	size_t nargs;
	const struct cel_overload *ov;	     /* N_CALL: resolved when unique, else NULL */
	const struct cel_overload *ov_first; /* N_CALL: candidates [ov_first, ov_end) */
	const struct cel_overload *ov_end;
	regex_t *re;	     /* matches() with a literal pattern */
	struct cel_val *lit; /* N_LIT */
	int slot;	     /* N_IDENT, N_BIND, N_COMP: 0 = device, k = variable slot k - 1 */
	int macro;	     /* N_COMP: enum cel_macro */
	const char *dom;     /* N_ATTR: domain */
	size_t dom_len;
};

enum cel_macro { M_ALL, M_EXISTS, M_EXISTS_ONE, M_MAP, M_MAP_FILTER, M_FILTER };

/* ---- runtime values ---- */

struct cel_semver {
	uint64_t major, minor, patch;
	const char *pre; /* prerelease text after '-', without build metadata */
	uint32_t pre_len;
};

struct cel_val {
	enum cel_kind kind;
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct {
			const char *p;
			size_t n;
		} s; /* K_STRING, K_BYTES */
		struct {
			const struct cel_val *items;
			size_t n;
		} l; /* K_LIST */
		struct {
			int which; /* CEL_MAP_* */
			const char *dom;
			size_t dom_len;
		} m; /* K_MAP: device maps only */
		sx_nano q;
		struct cel_semver v;
		const char *err; /* K_ERR: message */
	};
};

enum { CEL_MAP_ATTRS, CEL_MAP_ATTR_DOM, CEL_MAP_CAPS, CEL_MAP_CAP_DOM };

/* ---- overloads ---- */

enum cel_arg {
	A_ANY,
	A_BOOL,
	A_INT,
	A_UINT,
	A_DOUBLE,
	A_STRING,
	A_BYTES,
	A_LIST,
	A_MAP,
	A_QTY,
	A_SEMVER,
	A_NONE
};

struct cel_eval;
typedef struct cel_val (*cel_fn)(struct cel_eval *ev, const struct cel_node *n,
				 const struct cel_val *args);

/* Runtime cost of a call, modelled on cel-go's CostTracker and the
 * Kubernetes library cost estimator. */
enum cel_cost {
	C_ONE,	    /* 1 */
	C_CMP,	    /* ceil(0.1 * min(size(a), size(b))) */
	C_CONCAT,   /* string/bytes +: ceil(0.1 * (size(a) + size(b))); lists: 1 */
	C_ARG0,	    /* ceil(0.1 * size(args[0])) */
	C_ARG1,	    /* ceil(0.1 * size(args[1])) */
	C_CONTAINS, /* ceil(0.1 * size(s)) * ceil(0.1 * size(sub)) */
	C_MATCHES,  /* ceil(0.1 * (1 + size(s))) * ceil(0.25 * size(re)) */
	C_IN,	    /* size(list); maps 1 */
};

struct cel_overload {
	const char *name; /* "_+_", "startsWith", ... */
	bool member;
	uint8_t nargs;	      /* including the receiver */
	uint8_t args[3];      /* enum cel_arg */
	enum cel_kind result; /* K_LIST: joined by the checker */
	enum cel_cost cost;
	cel_fn fn;
};

/* The runtime cost of calling ov on args. */
uint64_t cel_call_cost(const struct cel_overload *ov, const struct cel_val *args);
/* Size as cel-go's cost tracker sees it: code points, elements, else 1. */
uint64_t cel_val_size(struct cel_eval *ev, const struct cel_val *v);

extern const struct cel_overload cel_overloads[];
extern const size_t cel_n_overloads;

/* true when a static kind can hold a value matching arg spec a. */
bool cel_arg_accepts(enum cel_arg a, enum cel_kind k);

/* ---- parse / check ---- */

struct cel_prog_build {
	struct cel_arena *arena;
	const char *src;
	size_t len;
	char *err;
	size_t errlen;
	bool failed;
	bool oom;	 /* failed for lack of memory: do not cache the message */
	int n_slots;	 /* cel.bind variables, set by the checker */
	bool consumable; /* device.allowMultipleAllocations declared (cel.Features) */
};

/* Sets the compile error (first one wins) in cel-go's display format. */
void cel_compile_error(struct cel_prog_build *b, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct cel_node *cel_parse(struct cel_prog_build *b);
int cel_check(struct cel_prog_build *b, struct cel_node *root);

/* Known functions of the upstream environment this evaluator rejects. */
bool cel_unsupported_function(const char *name, size_t len);

/* ---- evaluation ---- */

struct cel_name {
	const char *dom, *id;
	size_t dom_len, id_len;
};

struct cel_eval {
	const struct sx_cel_device *dev;
	const char *driver; /* dev->driver, "" when NULL */
	size_t driver_len;
	const struct cel_semver *versions; /* parsed version attributes, by attr index */
	struct cel_arena arena;		   /* runtime strings and lists */
	uint64_t cost;
	uint64_t limit;
	bool cancelled;		   /* cost limit hit: unwind */
	bool oom;		   /* an allocation failed: the answer is SX_ENOMEM */
	struct cel_val *slots;	   /* cel.bind values */
	struct cel_name *names[2]; /* split attribute [0] / capacity [1] names */
	bool names_done[2];
};

struct cel_val cel_eval_node(struct cel_eval *ev, const struct cel_node *n);
struct cel_val cel_err(struct cel_eval *ev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* An allocation failed: the arena's limit, or lack of memory (sets oom). */
struct cel_val cel_oom(struct cel_eval *ev);
/* Adds cost; false (and ev->cancelled) when the limit is exceeded. */
bool cel_charge(struct cel_eval *ev, uint64_t c);

/* Equality with CEL's heterogeneous semantics; K_ERR on error. */
struct cel_val cel_equals(struct cel_eval *ev, const struct cel_val *a, const struct cel_val *b);

/* Device map lookup: found → *out. */
/* Looks key up in a device map. real: whether an absent domain of the
 * outer maps is absent (`in`) rather than an empty map (index, has()). */
bool cel_map_find(struct cel_eval *ev, const struct cel_val *m, const char *key, size_t key_len,
		  bool real, struct cel_val *out);
size_t cel_map_size(struct cel_eval *ev, const struct cel_val *m);
/* The value of dom/id in the device's attributes (caps false) or capacity. */
bool cel_find_id(struct cel_eval *ev, bool caps, const char *dom, size_t dom_len, const char *id,
		 size_t id_len, struct cel_val *out);
/* device.attributes[dom].id and friends rewritten into N_ATTR nodes. */
void cel_fuse(struct cel_node *n);

/* ---- library helpers ---- */

int cel_semver_parse(const char *s, size_t n, bool normalize, struct cel_semver *out, char *err,
		     size_t errlen, struct cel_arena *a);
int cel_semver_cmp(const struct cel_semver *a, const struct cel_semver *b);

/* Translates an RE2 pattern to POSIX ERE and compiles it. 0 or an error
 * message in err. */
int cel_regex_compile(const char *pat, size_t n, regex_t *re, char *err, size_t errlen);

size_t cel_utf8_len(const char *s, size_t n);
bool cel_utf8_valid(const char *s, size_t n);

#define CEL_STR_COST(n) (((uint64_t)(n) + 9) / 10) /* ceil(n * 0.1) */

#endif /* SCHEDEXT_CEL_INT_H */
