/* CEL type checker: gives every node a static type, resolves function
 * calls against the overload table and reports cel-go's messages
 * ("undeclared reference to 'x' (in container '')", "found no matching
 * overload for '_+_' applied to '(int, string)'", "undefined field 'x'"). */
#include <stdio.h>
#include <string.h>

#include "cel_int.h"

const struct cel_type cel_t_dyn = {K_DYN, NULL, NULL};
const struct cel_type cel_t_null = {K_NULL, NULL, NULL};
const struct cel_type cel_t_bool = {K_BOOL, NULL, NULL};
const struct cel_type cel_t_int = {K_INT, NULL, NULL};
const struct cel_type cel_t_uint = {K_UINT, NULL, NULL};
const struct cel_type cel_t_double = {K_DOUBLE, NULL, NULL};
const struct cel_type cel_t_string = {K_STRING, NULL, NULL};
const struct cel_type cel_t_bytes = {K_BYTES, NULL, NULL};
const struct cel_type cel_t_qty = {K_QTY, NULL, NULL};
const struct cel_type cel_t_semver = {K_SEMVER, NULL, NULL};
const struct cel_type cel_t_device = {K_DEVICE, NULL, NULL};
const struct cel_type cel_t_list_dyn = {K_LIST, &cel_t_dyn, NULL};
const struct cel_type cel_t_attr_inner = {K_MAP, &cel_t_dyn, &cel_t_string};
const struct cel_type cel_t_attr_outer = {K_MAP, &cel_t_attr_inner, &cel_t_string};
const struct cel_type cel_t_cap_inner = {K_MAP, &cel_t_qty, &cel_t_string};
const struct cel_type cel_t_cap_outer = {K_MAP, &cel_t_cap_inner, &cel_t_string};

static const struct cel_type *const kind_types[] = {
	[K_DYN] = &cel_t_dyn,	    [K_NULL] = &cel_t_null,	[K_BOOL] = &cel_t_bool,
	[K_INT] = &cel_t_int,	    [K_UINT] = &cel_t_uint,	[K_DOUBLE] = &cel_t_double,
	[K_STRING] = &cel_t_string, [K_BYTES] = &cel_t_bytes,	[K_QTY] = &cel_t_qty,
	[K_SEMVER] = &cel_t_semver, [K_DEVICE] = &cel_t_device,
};

#define CEL_MAX_SCOPES 32 /* nested cel.bind */

struct scope {
	const char *name;
	size_t len;
	const struct cel_type *type;
	int slot;
};

struct checker {
	struct cel_prog_build *b;
	struct scope scopes[CEL_MAX_SCOPES];
	int n_scopes;
};

void cel_type_str(const struct cel_type *t, char *buf, size_t len)
{
	static const char *const names[] = {
		[K_ERR] = "error",
		[K_DYN] = "dyn",
		[K_NULL] = "null_type",
		[K_BOOL] = "bool",
		[K_INT] = "int",
		[K_UINT] = "uint",
		[K_DOUBLE] = "double",
		[K_STRING] = "string",
		[K_BYTES] = "bytes",
		[K_QTY] = "kubernetes.Quantity",
		[K_SEMVER] = "kubernetes.Semver",
		[K_DEVICE] = "kubernetes.DRADevice",
	};
	char a[128], b[128];

	if (t->kind == K_LIST) {
		cel_type_str(t->elem, a, sizeof(a));
		snprintf(buf, len, "list(%s)", a);
	} else if (t->kind == K_MAP) {
		cel_type_str(t->key, a, sizeof(a));
		cel_type_str(t->elem, b, sizeof(b));
		snprintf(buf, len, "map(%s, %s)", a, b);
	} else {
		snprintf(buf, len, "%s", names[t->kind]);
	}
}

bool cel_arg_accepts(enum cel_arg a, enum cel_kind k)
{
	static const enum cel_kind map[] = {
		[A_BOOL] = K_BOOL,     [A_INT] = K_INT,	      [A_UINT] = K_UINT,
		[A_DOUBLE] = K_DOUBLE, [A_STRING] = K_STRING, [A_BYTES] = K_BYTES,
		[A_LIST] = K_LIST,     [A_MAP] = K_MAP,	      [A_QTY] = K_QTY,
		[A_SEMVER] = K_SEMVER,
	};

	if (a == A_ANY || k == K_DYN)
		return true;
	if (a == A_NONE)
		return false;
	return map[a] == k;
}

/* CEL assignability for (A, A) operators: equal types, dyn on either side,
 * element-wise for lists and maps. */
static bool compatible(const struct cel_type *a, const struct cel_type *b)
{
	if (a->kind == K_DYN || b->kind == K_DYN)
		return true;
	if (a->kind != b->kind)
		return false;
	if (a->kind == K_LIST)
		return compatible(a->elem, b->elem);
	if (a->kind == K_MAP)
		return compatible(a->key, b->key) && compatible(a->elem, b->elem);
	return true;
}

/* The most specific type both a and b can be seen as. */
static const struct cel_type *join(struct checker *c, const struct cel_type *a,
				   const struct cel_type *b)
{
	struct cel_type *t;

	if (a == b)
		return a;
	if (a->kind != b->kind || a->kind == K_MAP)
		return &cel_t_dyn;
	if (a->kind != K_LIST)
		return a;
	t = cel_arena_alloc(c->b->arena, sizeof(*t));
	if (!t)
		return &cel_t_list_dyn;
	t->kind = K_LIST;
	t->elem = join(c, a->elem, b->elem);
	t->key = NULL;
	return t;
}

static void no_overload(struct checker *c, const struct cel_node *n, const char *name, size_t nlen)
{
	char args[400], t[128];
	size_t off = 0;
	size_t first = 0;

	args[0] = '\0';
	if (n->member && n->nargs > 0) {
		cel_type_str(n->args[0]->type, t, sizeof(t));
		off += (size_t)snprintf(args + off, sizeof(args) - off, "%s.", t);
		first = 1;
	}
	off += (size_t)snprintf(args + off, sizeof(args) - off, "(");
	for (size_t i = first; i < n->nargs && off < sizeof(args); i++) {
		cel_type_str(n->args[i]->type, t, sizeof(t));
		off += (size_t)snprintf(args + off, sizeof(args) - off, "%s%s",
					i > first ? ", " : "", t);
	}
	if (off < sizeof(args))
		snprintf(args + off, sizeof(args) - off, ")");
	cel_compile_error(c->b, n->pos, "found no matching overload for '%.*s' applied to '%s'",
			  (int)nlen, name, args);
}

static const struct cel_type *check(struct checker *c, struct cel_node *n);

static const struct cel_type *check_select(struct checker *c, struct cel_node *n)
{
	const struct cel_type *t = check(c, n->args[0]);
	char buf[128];

	if (!t)
		return NULL;
	if (t->kind == K_DEVICE) {
		if (n->name_len == 6 && memcmp(n->name, "driver", 6) == 0)
			return &cel_t_string;
		if (n->name_len == 10 && memcmp(n->name, "attributes", 10) == 0)
			return &cel_t_attr_outer;
		if (n->name_len == 8 && memcmp(n->name, "capacity", 8) == 0)
			return &cel_t_cap_outer;
		if (c->b->consumable && n->name_len == 24 &&
		    memcmp(n->name, "allowMultipleAllocations", 24) == 0)
			return &cel_t_bool;
		cel_compile_error(c->b, n->pos, "undefined field '%.*s'", (int)n->name_len,
				  n->name);
		return NULL;
	}
	if (t->kind == K_MAP)
		return t->elem;
	if (t->kind == K_DYN)
		return &cel_t_dyn;
	cel_type_str(t, buf, sizeof(buf));
	cel_compile_error(c->b, n->pos, "type '%s' does not support field selection", buf);
	return NULL;
}

static const struct cel_type *check_index(struct checker *c, struct cel_node *n)
{
	const struct cel_type *t = n->args[0]->type, *i = n->args[1]->type;

	if (t->kind == K_DYN)
		return &cel_t_dyn;
	if (t->kind == K_LIST && (i->kind == K_INT || i->kind == K_DYN))
		return t->elem;
	if (t->kind == K_MAP && compatible(t->key, i))
		return t->elem;
	no_overload(c, n, "_[_]", 4);
	return NULL;
}

static const struct cel_type *check_list(struct checker *c, struct cel_node *n)
{
	const struct cel_type *elem = NULL;
	struct cel_type *t;

	for (size_t i = 0; i < n->nargs; i++)
		elem = elem ? join(c, elem, n->args[i]->type) : n->args[i]->type;
	if (!elem)
		return &cel_t_list_dyn;
	t = cel_arena_alloc(c->b->arena, sizeof(*t));
	if (!t) {
		cel_compile_error(c->b, n->pos, "out of memory");
		return NULL;
	}
	t->kind = K_LIST;
	t->elem = elem;
	t->key = NULL;
	return t;
}

static const struct cel_type *check_logic(struct checker *c, struct cel_node *n)
{
	const char *op = n->kind == N_AND ? "_&&_" : n->kind == N_OR ? "_||_" : "_?_:_";
	size_t nb = n->kind == N_COND ? 1 : n->nargs;

	for (size_t i = 0; i < nb; i++) {
		enum cel_kind k = n->args[i]->type->kind;

		if (k != K_BOOL && k != K_DYN) {
			no_overload(c, n, op, strlen(op));
			return NULL;
		}
	}
	if (n->kind != N_COND)
		return &cel_t_bool;
	if (!compatible(n->args[1]->type, n->args[2]->type)) {
		no_overload(c, n, op, strlen(op));
		return NULL;
	}
	if (n->args[1]->type->kind == K_DYN || n->args[2]->type->kind == K_DYN)
		return &cel_t_dyn;
	return join(c, n->args[1]->type, n->args[2]->type);
}

static bool name_is(const struct cel_node *n, const char *s)
{
	return n->name_len == strlen(s) && memcmp(n->name, s, n->name_len) == 0;
}

/* Maps and the device object are not compared by this evaluator: the
 * device maps answer lookups of absent domains with an empty map, which
 * makes upstream's map equality depend on its map representation. */
static bool has_opaque(const struct cel_type *t)
{
	if (t->kind == K_MAP || t->kind == K_DEVICE)
		return true;
	return t->kind == K_LIST && has_opaque(t->elem);
}

/* ==, != and in: generic over their operand types. */
static const struct cel_type *check_generic(struct checker *c, struct cel_node *n)
{
	const struct cel_type *a = n->args[0]->type, *b = n->args[1]->type;
	bool ok;

	bool in = name_is(n, "@in");

	if (has_opaque(a) || (!in && has_opaque(b)) ||
	    (in && b->kind == K_LIST && has_opaque(b->elem))) {
		cel_compile_error(c->b, n->pos,
				  "comparing maps or objects is not supported by this evaluator");
		return NULL;
	}
	if (in)
		ok = b->kind == K_DYN || (b->kind == K_LIST && compatible(a, b->elem)) ||
		     (b->kind == K_MAP && compatible(a, b->key));
	else
		ok = compatible(a, b);
	if (!ok) {
		no_overload(c, n, n->name, n->name_len);
		return NULL;
	}
	return &cel_t_bool;
}

static const struct cel_type *result_type(struct checker *c, struct cel_node *n,
					  const struct cel_overload *ov)
{
	if (ov->result != K_LIST)
		return kind_types[ov->result];
	/* list + list */
	if (n->args[0]->type->kind != K_LIST || n->args[1]->type->kind != K_LIST)
		return &cel_t_list_dyn;
	return join(c, n->args[0]->type, n->args[1]->type);
}

static const struct cel_type *check_call(struct checker *c, struct cel_node *n)
{
	const struct cel_overload *first = NULL, *end = NULL, *match = NULL;
	const struct cel_type *t = NULL;
	size_t nmatch = 0;

	for (size_t i = 0; i < cel_n_overloads; i++) {
		const struct cel_overload *ov = &cel_overloads[i];

		if (strlen(ov->name) != n->name_len || memcmp(ov->name, n->name, n->name_len) != 0)
			continue;
		if (!first)
			first = ov;
		end = ov + 1;
		if (ov->member != n->member || ov->nargs != n->nargs)
			continue;
		bool ok = true;

		for (size_t a = 0; a < n->nargs && ok; a++)
			ok = cel_arg_accepts(ov->args[a], n->args[a]->type->kind);
		if (!ok)
			continue;
		const struct cel_type *rt = result_type(c, n, ov);

		nmatch++;
		match = ov;
		if (!t)
			t = rt;
		else if (t != rt && (t->kind != rt->kind || t->kind == K_LIST))
			t = &cel_t_dyn;
	}
	if (!first) {
		if (cel_unsupported_function(n->name, n->name_len))
			cel_compile_error(c->b, n->pos,
					  "function '%.*s' is not supported by this evaluator",
					  (int)n->name_len, n->name);
		else
			cel_compile_error(c->b, n->pos,
					  "undeclared reference to '%.*s' (in container '')",
					  (int)n->name_len, n->name);
		return NULL;
	}
	n->ov_first = first;
	n->ov_end = end;
	if (first->args[0] == A_ANY && first->nargs == 2 && !first->member)
		return check_generic(c, n);
	if (!nmatch) {
		no_overload(c, n, n->name, n->name_len);
		return NULL;
	}
	if (nmatch == 1)
		n->ov = match;
	return t;
}

static int check_regex_literal(struct checker *c, struct cel_node *n)
{
	const struct cel_node *pat;
	char msg[256];

	if (!name_is(n, "matches") || n->nargs != 2 || n->args[1]->kind != N_LIT ||
	    n->args[1]->lit->kind != K_STRING)
		return 0;
	pat = n->args[1];
	n->re = cel_arena_alloc(c->b->arena, sizeof(*n->re));
	if (!n->re) {
		cel_compile_error(c->b, n->pos, "out of memory");
		return -1;
	}
	if (cel_regex_compile(pat->lit->s.p, pat->lit->s.n, n->re, msg, sizeof(msg)) != 0) {
		n->re = NULL;
		cel_compile_error(c->b, pat->pos, "%s", msg);
		return -1;
	}
	return 0;
}

static const struct cel_type *check(struct checker *c, struct cel_node *n);

static const struct cel_type *check_ident(struct checker *c, struct cel_node *n)
{
	for (int i = c->n_scopes - 1; i >= 0; i--) {
		if (c->scopes[i].len == n->name_len &&
		    memcmp(c->scopes[i].name, n->name, n->name_len) == 0) {
			n->slot = c->scopes[i].slot + 1;
			return c->scopes[i].type;
		}
	}
	if (!name_is(n, "device")) {
		cel_compile_error(c->b, n->pos, "undeclared reference to '%.*s' (in container '')",
				  (int)n->name_len, n->name);
		return NULL;
	}
	n->slot = 0;
	return &cel_t_device;
}

/* cel.bind: the init is checked outside the variable's scope, the body
 * inside it. */
static const struct cel_type *check_bind(struct checker *c, struct cel_node *n)
{
	const struct cel_type *init = check(c, n->args[0]), *body;

	if (!init)
		return NULL;
	if (c->n_scopes == CEL_MAX_SCOPES) {
		cel_compile_error(c->b, n->pos, "cel.bind nested more than %d deep",
				  CEL_MAX_SCOPES);
		return NULL;
	}
	n->slot = c->b->n_slots++ + 1;
	c->scopes[c->n_scopes++] = (struct scope){n->name, n->name_len, init, n->slot - 1};
	body = check(c, n->args[1]);
	c->n_scopes--;
	return body;
}

static bool is_bool(const struct cel_type *t)
{
	return t->kind == K_BOOL || t->kind == K_DYN;
}

/* A predicate of a macro: cel-go reports the operator of its expansion. */
static bool check_pred(struct checker *c, const struct cel_node *n, const struct cel_type *t,
		       const struct cel_type *var)
{
	char pt[128], vt[128];

	if (is_bool(t))
		return true;
	cel_type_str(t, pt, sizeof(pt));
	cel_type_str(var, vt, sizeof(vt));
	if (n->macro == M_ALL || n->macro == M_EXISTS)
		cel_compile_error(c->b, n->args[1]->pos,
				  "found no matching overload for '%s' applied to '(bool, %s)'",
				  n->macro == M_ALL ? "_&&_" : "_||_", pt);
	else if (n->macro == M_EXISTS_ONE)
		cel_compile_error(
			c->b, n->args[1]->pos,
			"found no matching overload for '_?_:_' applied to '(%s, int, int)'", pt);
	else
		cel_compile_error(c->b, n->args[1]->pos,
				  "found no matching overload for '_?_:_' applied to '(%s, "
				  "list(%s), list(%s))'",
				  pt, vt, vt);
	return false;
}

static const struct cel_type *list_of(struct checker *c, const struct cel_type *elem)
{
	struct cel_type *t = cel_arena_alloc(c->b->arena, sizeof(*t));

	if (!t)
		return &cel_t_list_dyn;
	t->kind = K_LIST;
	t->elem = elem;
	t->key = NULL;
	return t;
}

/* all, exists, exists_one, map, filter over a list (elements) or a map
 * (keys); the variable is in scope in the predicate and transform only. */
static const struct cel_type *check_comprehension(struct checker *c, struct cel_node *n)
{
	const struct cel_type *range = check(c, n->args[0]), *var, *t = NULL, *p;
	char buf[128];

	if (!range)
		return NULL;
	if (range->kind == K_LIST) {
		var = range->elem;
	} else if (range->kind == K_MAP) {
		var = range->key;
	} else if (range->kind == K_DYN) {
		var = &cel_t_dyn;
	} else {
		cel_type_str(range, buf, sizeof(buf));
		cel_compile_error(c->b, n->args[0]->pos,
				  "expression of type '%s' cannot be range of "
				  "a comprehension (must be list, map, or dynamic)",
				  buf);
		return NULL;
	}
	if (c->n_scopes == CEL_MAX_SCOPES) {
		cel_compile_error(c->b, n->pos, "comprehensions nested more than %d deep",
				  CEL_MAX_SCOPES);
		return NULL;
	}
	n->slot = c->b->n_slots++ + 1;
	c->scopes[c->n_scopes++] = (struct scope){n->name, n->name_len, var, n->slot - 1};
	p = check(c, n->args[1]);
	if (p && n->nargs == 3)
		t = check(c, n->args[2]);
	c->n_scopes--;
	if (!p || (n->nargs == 3 && !t))
		return NULL;
	switch (n->macro) {
	case M_MAP:
		return list_of(c, p);
	case M_MAP_FILTER:
		return check_pred(c, n, p, var) ? list_of(c, t) : NULL;
	case M_FILTER:
		return check_pred(c, n, p, var) ? list_of(c, var) : NULL;
	default:
		return check_pred(c, n, p, var) ? &cel_t_bool : NULL;
	}
}

/* Names outside the table are reported before their arguments are
 * checked, so macros such as all(x, p) name themselves, not x. */
static bool known_function(struct checker *c, const struct cel_node *n)
{
	for (size_t i = 0; i < cel_n_overloads; i++)
		if (strlen(cel_overloads[i].name) == n->name_len &&
		    memcmp(cel_overloads[i].name, n->name, n->name_len) == 0)
			return true;
	if (cel_unsupported_function(n->name, n->name_len))
		cel_compile_error(c->b, n->pos,
				  "function '%.*s' is not supported by this evaluator",
				  (int)n->name_len, n->name);
	else
		cel_compile_error(c->b, n->pos, "undeclared reference to '%.*s' (in container '')",
				  (int)n->name_len, n->name);
	return false;
}

static const struct cel_type *check(struct checker *c, struct cel_node *n)
{
	if (c->b->failed)
		return NULL;
	if (n->kind == N_CALL && !known_function(c, n))
		return NULL;
	for (size_t i = 0; i < n->nargs && n->kind != N_SELECT && n->kind != N_HAS &&
			   n->kind != N_BIND && n->kind != N_COMP;
	     i++)
		if (!check(c, n->args[i]))
			return NULL;
	switch (n->kind) {
	case N_LIT:
		n->type = kind_types[n->lit->kind];
		break;
	case N_IDENT:
		n->type = check_ident(c, n);
		break;
	case N_BIND:
		n->type = check_bind(c, n);
		break;
	case N_COMP:
		n->type = check_comprehension(c, n);
		break;
	case N_ATTR:
		break; /* made after checking */
	case N_SELECT:
		n->type = check_select(c, n);
		break;
	case N_HAS:
		n->type = check_select(c, n) ? &cel_t_bool : NULL;
		break;
	case N_INDEX:
		n->type = check_index(c, n);
		break;
	case N_LIST:
		n->type = check_list(c, n);
		break;
	case N_AND:
	case N_OR:
	case N_COND:
		n->type = check_logic(c, n);
		break;
	case N_CALL:
		n->type = check_call(c, n);
		if (n->type && check_regex_literal(c, n) != 0)
			n->type = NULL;
		break;
	}
	return n->type;
}

/* A constant string operand: the field of a select, the literal key of an
 * index. */
static bool const_key(const struct cel_node *n, const char **s, size_t *len)
{
	if (n->kind == N_SELECT) {
		*s = n->name;
		*len = n->name_len;
		return true;
	}
	if (n->kind == N_INDEX && n->args[1]->kind == N_LIT && n->args[1]->lit->kind == K_STRING) {
		*s = n->args[1]->lit->s.p;
		*len = n->args[1]->lit->s.n;
		return true;
	}
	return false;
}

/* Rewrites device.attributes["dom"].id (any mix of select and literal
 * index, has() too) into one N_ATTR node: same value, errors and cost,
 * one lookup instead of four steps. */
static void fuse(struct cel_node *n)
{
	const struct cel_node *outer, *var;
	const char *id, *dom;
	size_t id_len, dom_len;

	if ((n->kind != N_SELECT && n->kind != N_HAS && n->kind != N_INDEX) || n->nargs < 1)
		goto children;
	outer = n->args[0];
	if (n->kind == N_HAS) {
		id = n->name;
		id_len = n->name_len;
	} else if (!const_key(n, &id, &id_len)) {
		goto children;
	}
	if (!const_key(outer, &dom, &dom_len) || outer->args[0]->kind != N_SELECT)
		goto children;
	var = outer->args[0]->args[0];
	if (var->kind != N_IDENT || var->slot != 0 || outer->args[0]->type->kind != K_MAP)
		goto children;
	n->member = n->kind == N_HAS;
	n->macro = outer->args[0]->name[0] == 'c'; /* capacity */
	n->kind = N_ATTR;
	n->name = id;
	n->name_len = id_len;
	n->dom = dom;
	n->dom_len = dom_len;
	n->nargs = 0;
	return;
children:
	if (n->kind == N_LIT)
		return;
	for (size_t i = 0; i < n->nargs; i++)
		fuse(n->args[i]);
}

void cel_fuse(struct cel_node *n)
{
	fuse(n);
}

int cel_check(struct cel_prog_build *b, struct cel_node *root)
{
	struct checker c = {.b = b};
	const struct cel_type *t = check(&c, root);
	char buf[128];

	if (!t)
		return -1;
	if (t->kind != K_BOOL && t->kind != K_DYN) {
		cel_type_str(t, buf, sizeof(buf));
		snprintf(b->err, b->errlen, "must evaluate to bool or the unknown type, not %s",
			 buf);
		b->failed = true;
		return -1;
	}
	fuse(root);
	return 0;
}
