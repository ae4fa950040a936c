/* CEL evaluator: walks a checked AST against one device. Errors are values
 * (K_ERR) so that && and || absorb them as CEL specifies; cost is charged
 * as cel-go's tracker does and evaluation stops once it passes the limit. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cel_int.h"
#include "schedext/common.h"

#define CEL_LIST_COST 10 /* common.ListCreateBaseCost */

struct cel_val cel_err(struct cel_eval *ev, const char *fmt, ...)
{
	struct cel_val v = {.kind = K_ERR, .err = "out of memory"};
	char buf[SX_CEL_ERR_LEN];
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return v;
	p = cel_arena_alloc(&ev->arena, strlen(buf) + 1);
	if (!p)
		return cel_oom(ev);
	strcpy(p, buf);
	v.err = p;
	return v;
}

struct cel_val cel_oom(struct cel_eval *ev)
{
	struct cel_val v = {.kind = K_ERR, .err = "evaluation exceeded its memory limit"};

	if (!ev->arena.limited) {
		ev->oom = true;
		v.err = "out of memory";
	}
	return v;
}

bool cel_charge(struct cel_eval *ev, uint64_t c)
{
	ev->cost += c;
	if (ev->cost > ev->limit)
		ev->cancelled = true;
	return !ev->cancelled;
}

static struct cel_val cancelled(void)
{
	return (struct cel_val){.kind = K_ERR,
				.err = "operation cancelled: actual cost limit exceeded"};
}

size_t cel_utf8_len(const char *s, size_t n)
{
	size_t cnt = 0;

	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cnt++;
	return cnt;
}

bool cel_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80		      ? 1
			     : c >= 0xc2 && c <= 0xdf ? 2
			     : c >= 0xe0 && c <= 0xef ? 3
			     : c >= 0xf0 && c <= 0xf4 ? 4
						      : 0;
		uint32_t cp;

		if (!len || i + len > n)
			return false;
		cp = len == 1 ? c : c & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if (((unsigned char)s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | ((unsigned char)s[i + k] & 0x3f);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += len;
	}
	return true;
}

uint64_t cel_val_size(struct cel_eval *ev, const struct cel_val *v)
{
	switch (v->kind) {
	case K_STRING:
		return cel_utf8_len(v->s.p, v->s.n);
	case K_BYTES:
		return v->s.n;
	case K_LIST:
		return v->l.n;
	default:
		return 1;
	}
}

/* ---- device maps ---- */

/* The device's qualified names split into domain (the driver's when
 * absent) and id, once per evaluation and map kind. */
static const struct cel_name *names(struct cel_eval *ev, bool caps)
{
	const struct sx_cel_device *d = ev->dev;
	size_t n = caps ? d->n_caps : d->n_attrs;
	struct cel_name *out = ev->names[caps];

	if (ev->names_done[caps])
		return out;
	if (!out && n) {
		out = cel_arena_alloc(&ev->arena, n * sizeof(*out));
		if (!out) {
			cel_oom(ev);
			return NULL;
		}
		ev->names[caps] = out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = caps ? d->caps[i].name : d->attrs[i].name;
		const char *slash = strchr(name, '/');

		if (!slash) {
			out[i].dom = ev->driver;
			out[i].dom_len = ev->driver_len;
			out[i].id = name;
		} else {
			out[i].dom = name;
			out[i].dom_len = (size_t)(slash - name);
			out[i].id = slash + 1;
		}
		out[i].id_len = strlen(out[i].id);
	}
	ev->names_done[caps] = true;
	return out;
}

static size_t entry_count(const struct sx_cel_device *d, bool caps)
{
	return caps ? d->n_caps : d->n_attrs;
}

static bool same_domain(const struct cel_name *nm, const char *dom, size_t len)
{
	return nm->dom_len == len && memcmp(nm->dom, dom, len) == 0;
}

static bool domain_present(struct cel_eval *ev, bool caps, const char *dom, size_t len)
{
	const struct cel_name *nm = names(ev, caps);

	for (size_t i = 0; nm && i < entry_count(ev->dev, caps); i++)
		if (same_domain(&nm[i], dom, len))
			return true;
	return false;
}

static struct cel_val entry_value(struct cel_eval *ev, bool caps, size_t i)
{
	const struct sx_cel_attr *a;
	struct cel_val v = {.kind = K_QTY};

	if (caps) {
		v.q = ev->dev->caps[i].value;
		return v;
	}
	a = &ev->dev->attrs[i];
	switch (a->type) {
	case SX_CEL_ATTR_INT:
		v.kind = K_INT;
		v.i = a->i;
		break;
	case SX_CEL_ATTR_BOOL:
		v.kind = K_BOOL;
		v.b = a->b;
		break;
	case SX_CEL_ATTR_STRING:
		v.kind = K_STRING;
		v.s.p = a->s ? a->s : "";
		v.s.n = strlen(v.s.p);
		break;
	case SX_CEL_ATTR_VERSION:
		v.kind = K_SEMVER;
		v.v = ev->versions[i];
		break;
	}
	return v;
}

/* name[0..n) equals s[0..n) and ends there; never reads past name's NUL. */
static bool name_eq(const char *name, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name[i] == '\0' || name[i] != s[i])
			return false;
	return name[n] == '\0';
}

/* name starts with s[0..n); never reads past name's NUL. */
static bool prefix_eq(const char *name, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name[i] == '\0' || name[i] != s[i])
			return false;
	return true;
}

/* The entry whose qualified name is dom/key, or key alone when dom is the
 * driver's domain; the last one wins. Compares the raw names, without
 * splitting them (the hot path of every selector). */
bool cel_find_id(struct cel_eval *ev, bool caps, const char *dom, size_t dom_len, const char *key,
		 size_t key_len, struct cel_val *out)
{
	const struct sx_cel_device *d = ev->dev;
	bool short_ok = dom_len == ev->driver_len && memcmp(dom, ev->driver, dom_len) == 0 &&
			!memchr(key, '/', key_len);

	for (size_t i = entry_count(d, caps); i-- > 0;) {
		const char *name = caps ? d->caps[i].name : d->attrs[i].name;

		if ((short_ok && name_eq(name, key, key_len)) ||
		    (prefix_eq(name, dom, dom_len) && name[dom_len] == '/' &&
		     !memchr(dom, '/', dom_len) && name_eq(name + dom_len + 1, key, key_len))) {
			*out = entry_value(ev, caps, i);
			return true;
		}
	}
	return false;
}

bool cel_map_find(struct cel_eval *ev, const struct cel_val *m, const char *key, size_t key_len,
		  bool real, struct cel_val *out)
{
	bool caps = m->m.which == CEL_MAP_CAPS || m->m.which == CEL_MAP_CAP_DOM;

	if (m->m.which == CEL_MAP_ATTRS || m->m.which == CEL_MAP_CAPS) {
		out->kind = K_MAP;
		out->m.which = caps ? CEL_MAP_CAP_DOM : CEL_MAP_ATTR_DOM;
		out->m.dom = key;
		out->m.dom_len = key_len;
		/* upstream's outer maps answer any lookup with an empty map */
		return !real || domain_present(ev, caps, key, key_len);
	}
	return cel_find_id(ev, caps, m->m.dom, m->m.dom_len, key, key_len, out);
}

/* Distinct keys: domains of an outer map, ids of a domain. */
size_t cel_map_size(struct cel_eval *ev, const struct cel_val *m)
{
	bool caps = m->m.which == CEL_MAP_CAPS || m->m.which == CEL_MAP_CAP_DOM;
	bool outer = m->m.which == CEL_MAP_ATTRS || m->m.which == CEL_MAP_CAPS;
	const struct cel_name *nm = names(ev, caps);
	size_t n = entry_count(ev->dev, caps), cnt = 0;

	for (size_t i = 0; nm && i < n; i++) {
		bool dup = false;

		if (!outer && !same_domain(&nm[i], m->m.dom, m->m.dom_len))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = same_domain(&nm[j], nm[i].dom, nm[i].dom_len) &&
			      (outer || (nm[j].id_len == nm[i].id_len &&
					 memcmp(nm[j].id, nm[i].id, nm[i].id_len) == 0));
		cnt += !dup;
	}
	return cnt;
}

/* ---- equality ---- */

static bool is_num(enum cel_kind k)
{
	return k == K_INT || k == K_UINT || k == K_DOUBLE;
}

static bool num_equal(const struct cel_val *a, const struct cel_val *b)
{
	if (a->kind == K_DOUBLE && b->kind == K_DOUBLE)
		return a->d == b->d;
	if (a->kind == K_DOUBLE || b->kind == K_DOUBLE) {
		const struct cel_val *x = a->kind == K_DOUBLE ? b : a,
				     *d = a->kind == K_DOUBLE ? a : b;

		if (x->kind == K_INT)
			return d->d >= -9223372036854775808.0 && d->d < 9223372036854775808.0 &&
			       (double)x->i == d->d;
		return d->d >= 0 && d->d < 18446744073709551616.0 && (double)x->u == d->d;
	}
	if (a->kind == b->kind)
		return a->u == b->u;
	if (a->kind == K_INT)
		return a->i >= 0 && (uint64_t)a->i == b->u;
	return b->i >= 0 && (uint64_t)b->i == a->u;
}

struct cel_val cel_equals(struct cel_eval *ev, const struct cel_val *a, const struct cel_val *b)
{
	struct cel_val r = {.kind = K_BOOL, .b = false};

	if (is_num(a->kind) && is_num(b->kind)) {
		r.b = num_equal(a, b);
		return r;
	}
	if (a->kind != b->kind)
		return r;
	switch (a->kind) {
	case K_NULL:
		r.b = true;
		break;
	case K_BOOL:
		r.b = a->b == b->b;
		break;
	case K_STRING:
	case K_BYTES:
		r.b = a->s.n == b->s.n && memcmp(a->s.p, b->s.p, a->s.n) == 0;
		break;
	case K_QTY:
		r.b = a->q == b->q;
		break;
	case K_SEMVER:
		r.b = cel_semver_cmp(&a->v, &b->v) == 0;
		break;
	case K_LIST:
		if (a->l.n != b->l.n)
			break;
		r.b = true;
		for (size_t i = 0; i < a->l.n && r.kind == K_BOOL && r.b; i++)
			r = cel_equals(ev, &a->l.items[i], &b->l.items[i]);
		break;
	default:
		return cel_err(ev, "no such overload");
	}
	return r;
}

/* ---- nodes ---- */

static struct cel_val eval_select(struct cel_eval *ev, const struct cel_node *n, bool test)
{
	struct cel_val x = cel_eval_node(ev, n->args[0]), out;

	if (x.kind == K_ERR)
		return x;
	if (!cel_charge(ev, 1))
		return cancelled();
	if (x.kind == K_DEVICE) {
		if (test)
			return (struct cel_val){.kind = K_BOOL, .b = true};
		if (n->name[0] == 'd') {
			out.kind = K_STRING;
			out.s.p = ev->driver;
			out.s.n = ev->driver_len;
		} else if (n->name[0] == 'a' && n->name_len == 24) { /* allowMultipleAllocations */
			out.kind = K_BOOL;
			out.b = ev->dev->allow_multiple;
		} else {
			out.kind = K_MAP;
			out.m.which = n->name[0] == 'a' ? CEL_MAP_ATTRS : CEL_MAP_CAPS;
			out.m.dom = NULL;
			out.m.dom_len = 0;
		}
		return out;
	}
	if (x.kind != K_MAP)
		return cel_err(ev, "no such overload");
	if (cel_map_find(ev, &x, n->name, n->name_len, false, &out))
		return test ? (struct cel_val){.kind = K_BOOL, .b = true} : out;
	if (test)
		return (struct cel_val){.kind = K_BOOL, .b = false};
	return cel_err(ev, "no such key: %.*s", (int)n->name_len, n->name);
}

static struct cel_val eval_index(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val x = cel_eval_node(ev, n->args[0]), out, i;

	if (x.kind == K_ERR)
		return x;
	i = cel_eval_node(ev, n->args[1]);
	if (i.kind == K_ERR)
		return i;
	if (!cel_charge(ev, 1))
		return cancelled();
	if (x.kind == K_MAP) {
		if (i.kind != K_STRING)
			return cel_err(ev, "no such overload");
		if (cel_map_find(ev, &x, i.s.p, i.s.n, false, &out))
			return out;
		return cel_err(ev, "no such key: %.*s", (int)i.s.n, i.s.p);
	}
	if (x.kind != K_LIST || i.kind != K_INT)
		return cel_err(ev, "no such overload");
	if (i.i < 0 || (uint64_t)i.i >= x.l.n)
		return cel_err(ev, "index '%lld' out of range in list size '%zu'", (long long)i.i,
			       x.l.n);
	return x.l.items[i.i];
}

static struct cel_val eval_list(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val r = {.kind = K_LIST};
	struct cel_val *items;

	if (!cel_charge(ev, CEL_LIST_COST))
		return cancelled();
	items = cel_arena_alloc(&ev->arena, (n->nargs ? n->nargs : 1) * sizeof(*items));
	if (!items)
		return cel_oom(ev);
	for (size_t i = 0; i < n->nargs; i++) {
		items[i] = cel_eval_node(ev, n->args[i]);
		if (items[i].kind == K_ERR)
			return items[i];
	}
	r.l.items = items;
	r.l.n = n->nargs;
	return r;
}

/* n-ary && / ||: the first absorbing value wins, else the first error. */
static struct cel_val eval_logic(struct cel_eval *ev, const struct cel_node *n)
{
	bool absorb = n->kind == N_OR; /* true for ||, false for && */
	struct cel_val err = {.kind = K_BOOL};

	for (size_t i = 0; i < n->nargs; i++) {
		struct cel_val v = cel_eval_node(ev, n->args[i]);

		if (ev->cancelled)
			return cancelled();
		if (v.kind == K_BOOL && v.b == absorb)
			return v;
		if (v.kind != K_BOOL && err.kind != K_ERR)
			err = v.kind == K_ERR ? v : cel_err(ev, "no such overload");
	}
	if (err.kind == K_ERR)
		return err;
	return (struct cel_val){.kind = K_BOOL, .b = !absorb};
}

static struct cel_val eval_cond(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val c = cel_eval_node(ev, n->args[0]);

	if (c.kind == K_ERR)
		return c;
	if (c.kind != K_BOOL)
		return cel_err(ev, "no such overload");
	return cel_eval_node(ev, n->args[c.b ? 1 : 2]);
}

static bool ov_matches(const struct cel_overload *ov, const struct cel_node *n,
		       const struct cel_val *a)
{
	if (ov->member != n->member || ov->nargs != n->nargs)
		return false;
	for (size_t i = 0; i < n->nargs; i++)
		if (!cel_arg_accepts(ov->args[i], a[i].kind))
			return false;
	return true;
}

static struct cel_val eval_call(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val a[3];
	const struct cel_overload *ov = n->ov;

	if (n->nargs > 3)
		return cel_err(ev, "no such overload");
	for (size_t i = 0; i < n->nargs; i++) {
		a[i] = cel_eval_node(ev, n->args[i]);
		if (a[i].kind == K_ERR)
			return a[i];
	}
	if (!ov || !ov_matches(ov, n, a)) {
		for (ov = n->ov_first; ov < n->ov_end; ov++)
			if (ov_matches(ov, n, a))
				break;
		if (ov == n->ov_end)
			return cel_err(ev, "no such overload");
	}
	if (!cel_charge(ev, cel_call_cost(ov, a)))
		return cancelled();
	return ov->fn(ev, n, a);
}

/* The n-th key of a device map: its distinct domains or ids. */
static bool map_key(struct cel_eval *ev, const struct cel_val *m, size_t *pos, struct cel_val *key)
{
	bool caps = m->m.which == CEL_MAP_CAPS || m->m.which == CEL_MAP_CAP_DOM;
	bool outer = m->m.which == CEL_MAP_ATTRS || m->m.which == CEL_MAP_CAPS;
	const struct cel_name *nm = names(ev, caps);

	for (; nm && *pos < entry_count(ev->dev, caps); (*pos)++) {
		size_t i = *pos;
		bool dup = false;

		if (!outer && !same_domain(&nm[i], m->m.dom, m->m.dom_len))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = same_domain(&nm[j], nm[i].dom, nm[i].dom_len) &&
			      (outer || (nm[j].id_len == nm[i].id_len &&
					 memcmp(nm[j].id, nm[i].id, nm[i].id_len) == 0));
		if (dup)
			continue;
		key->kind = K_STRING;
		key->s.p = outer ? nm[i].dom : nm[i].id;
		key->s.n = outer ? nm[i].dom_len : nm[i].id_len;
		(*pos)++;
		return true;
	}
	return false;
}

static const char *go_type(enum cel_kind k)
{
	switch (k) {
	case K_NULL:
		return "types.Null";
	case K_BOOL:
		return "types.Bool";
	case K_INT:
		return "types.Int";
	case K_UINT:
		return "types.Uint";
	case K_DOUBLE:
		return "types.Double";
	case K_STRING:
		return "types.String";
	case K_BYTES:
		return "types.Bytes";
	case K_QTY:
		return "cel.Quantity";
	case K_SEMVER:
		return "cel.Semver";
	default:
		return "object";
	}
}

/* Appends v to a result list, doubling its arena storage. */
static bool push(struct cel_eval *ev, struct cel_val *list, size_t *cap, const struct cel_val *v)
{
	if (list->l.n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct cel_val *items = cel_arena_alloc(&ev->arena, ncap * sizeof(*items));

		if (!items)
			return false;
		if (list->l.n)
			memcpy(items, list->l.items, list->l.n * sizeof(*items));
		list->l.items = items;
		*cap = ncap;
	}
	((struct cel_val *)list->l.items)[list->l.n++] = *v;
	return true;
}

/* The macros as cel-go expands them: per element, the loop condition
 * (all: not_strictly_false(accu) = 2, exists: not_strictly_false(!accu)
 * = 3, others: true = 0) then the step; all/exists stop once decided. */
static struct cel_val eval_comp(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val range = cel_eval_node(ev, n->args[0]), x, p, acc = {.kind = K_BOOL};
	struct cel_val *slot = &ev->slots[n->slot - 1];
	size_t i = 0, cap = 0;
	int64_t count = 0;
	bool decided = false;

	if (range.kind == K_ERR)
		return range;
	if (range.kind != K_LIST && range.kind != K_MAP)
		return cel_err(ev, "got '%s', expected iterable type", go_type(range.kind));
	acc.b = n->macro == M_ALL;
	if (n->macro >= M_MAP) {
		acc.kind = K_LIST;
		acc.l.items = NULL;
		acc.l.n = 0;
		if (!cel_charge(ev, 10))
			return cancelled();
	}
	for (;;) {
		if (range.kind == K_LIST) {
			if (i == range.l.n)
				break;
			x = range.l.items[i++];
		} else if (!map_key(ev, &range, &i, &x)) {
			break;
		}
		if (!cel_charge(ev, n->macro == M_ALL ? 2 : n->macro == M_EXISTS ? 3 : 0))
			return cancelled();
		if (decided)
			break;
		*slot = x;
		p = cel_eval_node(ev, n->args[1]);
		if (ev->cancelled || !cel_charge(ev, 1))
			return cancelled();
		if (p.kind != K_BOOL && p.kind != K_ERR && n->macro != M_MAP)
			p = cel_err(ev, "no such overload");
		switch (n->macro) {
		case M_ALL:
		case M_EXISTS:
			if (p.kind == K_BOOL && p.b == (n->macro == M_EXISTS)) {
				acc = p;
				decided = true;
			} else if (p.kind == K_ERR && acc.kind != K_ERR) {
				acc = p;
			}
			break;
		case M_EXISTS_ONE:
			if (p.kind == K_ERR)
				return p;
			if (p.b) {
				count++;
				if (!cel_charge(ev, 1))
					return cancelled();
			}
			break;
		default:
			if (p.kind == K_ERR)
				return p;
			if (n->macro == M_MAP_FILTER || n->macro == M_FILTER) {
				if (!p.b)
					break;
				if (n->macro == M_MAP_FILTER)
					p = cel_eval_node(ev, n->args[2]);
				else
					p = x;
				if (p.kind == K_ERR)
					return p;
			}
			/* accu + [x]: the list and the add (accu charged above) */
			if (!cel_charge(ev, n->macro == M_FILTER ? 12 : 11))
				return cancelled();
			if (!push(ev, &acc, &cap, &p))
				return cel_oom(ev);
		}
	}
	if (!cel_charge(ev, n->macro == M_EXISTS_ONE ? 2 : 1))
		return cancelled();
	if (n->macro == M_EXISTS_ONE)
		return (struct cel_val){.kind = K_BOOL, .b = count == 1};
	return acc;
}

/* A fused device.attributes[dom].id: the cost of its four steps (the
 * variable and three qualifiers), one lookup. */
static struct cel_val eval_attr(struct cel_eval *ev, const struct cel_node *n)
{
	struct cel_val out;
	bool found;

	if (!cel_charge(ev, 4))
		return cancelled();
	found = cel_find_id(ev, n->macro, n->dom, n->dom_len, n->name, n->name_len, &out);
	if (n->member)
		return (struct cel_val){.kind = K_BOOL, .b = found};
	if (!found)
		return cel_err(ev, "no such key: %.*s", (int)n->name_len, n->name);
	return out;
}

struct cel_val cel_eval_node(struct cel_eval *ev, const struct cel_node *n)
{
	if (ev->cancelled)
		return cancelled();
	switch (n->kind) {
	case N_LIT:
		return *n->lit;
	case N_IDENT:
		if (!cel_charge(ev, 1))
			return cancelled();
		if (n->slot)
			return ev->slots[n->slot - 1];
		return (struct cel_val){.kind = K_DEVICE};
	case N_BIND:
		/* the init is evaluated once; an error surfaces where it is used */
		ev->slots[n->slot - 1] = cel_eval_node(ev, n->args[0]);
		if (ev->cancelled)
			return cancelled();
		return cel_eval_node(ev, n->args[1]);
	case N_SELECT:
		return eval_select(ev, n, false);
	case N_HAS:
		return eval_select(ev, n, true);
	case N_INDEX:
		return eval_index(ev, n);
	case N_LIST:
		return eval_list(ev, n);
	case N_AND:
	case N_OR:
		return eval_logic(ev, n);
	case N_COND:
		return eval_cond(ev, n);
	case N_CALL:
		return eval_call(ev, n);
	case N_COMP:
		return eval_comp(ev, n);
	case N_ATTR:
		return eval_attr(ev, n);
	}
	return cel_err(ev, "internal error: unknown node");
}
