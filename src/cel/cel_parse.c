/* CEL parser: recursive descent over the cel-spec grammar into the AST of
 * cel_int.h. Operators become N_CALL nodes named as cel-go names them
 * ("_+_", "!_", "@in"); && and || chains become one n-ary node each. The
 * nesting depth is bounded like cel-go's parser (max recursion depth 250). */
#include <stdio.h>
#include <string.h>

#include "cel_lex.h"

struct parser {
	struct cel_prog_build *b;
	struct cel_lexer lx;
	struct cel_token tok;
	int depth;
};

static const char *const reserved[] = {
	"as",  "break", "const",   "continue",	"else",	  "for", "function", "if",    "import",
	"let", "loop",	"package", "namespace", "return", "var", "void",     "while",
};

static void next(struct parser *p)
{
	if (p->b->failed)
		return;
	if (cel_lex_next(&p->lx, &p->tok) != 0)
		cel_compile_error(p->b, p->tok.pos, "%s", p->tok.text);
}

static void syntax_error(struct parser *p, const char *expecting)
{
	const struct cel_token *t = &p->tok;

	if (t->kind == T_EOF)
		cel_compile_error(p->b, t->pos,
				  "Syntax error: mismatched input '<EOF>' expecting %s", expecting);
	else
		cel_compile_error(p->b, t->pos,
				  "Syntax error: mismatched input '%.*s' expecting %s",
				  (int)(t->len ? t->len : 1), t->text, expecting);
}

static bool accept(struct parser *p, enum cel_tok k)
{
	if (p->b->failed || p->tok.kind != k)
		return false;
	next(p);
	return true;
}

static bool expect(struct parser *p, enum cel_tok k, const char *what)
{
	if (accept(p, k))
		return true;
	if (!p->b->failed)
		syntax_error(p, what);
	return false;
}

static struct cel_node *new_node(struct parser *p, enum cel_node_kind kind, uint32_t pos)
{
	struct cel_node *n = cel_arena_alloc(p->b->arena, sizeof(*n));

	if (!n) {
		cel_compile_error(p->b, pos, "out of memory");
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = pos;
	return n;
}

static bool enter(struct parser *p, uint32_t pos)
{
	if (++p->depth > SX_CEL_MAX_RECURSION) {
		cel_compile_error(p->b, pos, "max recursion depth exceeded");
		return false;
	}
	return true;
}

/* A growable operand array in the arena. */
struct vec {
	struct cel_node **items;
	size_t n, cap;
};

static bool vec_push(struct parser *p, struct vec *v, struct cel_node *x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4;
		struct cel_node **items = cel_arena_alloc(p->b->arena, cap * sizeof(*items));

		if (!items) {
			cel_compile_error(p->b, x ? x->pos : 0, "out of memory");
			return false;
		}
		if (v->n)
			memcpy(items, v->items, v->n * sizeof(*items));
		v->items = items;
		v->cap = cap;
	}
	v->items[v->n++] = x;
	return true;
}

static struct cel_node *call(struct parser *p, const char *name, uint32_t pos, size_t nargs,
			     struct cel_node *a, struct cel_node *b)
{
	struct cel_node *n = new_node(p, N_CALL, pos);

	if (!n)
		return NULL;
	n->name = name;
	n->name_len = strlen(name);
	n->args = cel_arena_alloc(p->b->arena, 2 * sizeof(*n->args));
	if (!n->args) {
		cel_compile_error(p->b, pos, "out of memory");
		return NULL;
	}
	n->args[0] = a;
	n->args[1] = b;
	n->nargs = nargs;
	return n;
}

static struct cel_node *parse_expr(struct parser *p);

static struct cel_node *literal(struct parser *p, enum cel_kind k, uint32_t pos)
{
	struct cel_node *n = new_node(p, N_LIT, pos);

	if (!n)
		return NULL;
	n->lit = cel_arena_alloc(p->b->arena, sizeof(*n->lit));
	if (!n->lit) {
		cel_compile_error(p->b, pos, "out of memory");
		return NULL;
	}
	memset(n->lit, 0, sizeof(*n->lit));
	n->lit->kind = k;
	return n;
}

/* Number literal at the current token; neg when a '-' preceded it. */
static struct cel_node *number(struct parser *p, bool neg, uint32_t pos)
{
	struct cel_token t = p->tok;
	struct cel_node *n;

	next(p);
	if (t.kind == T_DOUBLE) {
		n = literal(p, K_DOUBLE, pos);
		if (n)
			n->lit->d = neg ? -t.d : t.d;
		return n;
	}
	if (t.kind == T_UINT) {
		if (t.overflow || neg) {
			cel_compile_error(p->b, pos, "invalid uint literal");
			return NULL;
		}
		n = literal(p, K_UINT, pos);
		if (n)
			n->lit->u = t.u;
		return n;
	}
	if (t.overflow || t.u > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
		cel_compile_error(p->b, pos, "invalid int literal");
		return NULL;
	}
	n = literal(p, K_INT, pos);
	if (n)
		n->lit->i = neg ? (int64_t)(0 - t.u) : (int64_t)t.u;
	return n;
}

static bool parse_args(struct parser *p, struct vec *v, enum cel_tok close, const char *what)
{
	if (accept(p, close))
		return true;
	for (;;) {
		struct cel_node *a;

		if (p->tok.kind == T_QUESTION) {
			cel_compile_error(p->b, p->tok.pos,
					  "optional syntax is not supported by this evaluator");
			return false;
		}
		a = parse_expr(p);
		if (!a || !vec_push(p, v, a))
			return false;
		if (accept(p, T_COMMA)) {
			if (close == T_RBRACK && accept(p, close))
				return true;
			continue;
		}
		return expect(p, close, what);
	}
}

static struct cel_node *ident_or_call(struct parser *p, uint32_t pos)
{
	const char *name = p->tok.text;
	size_t len = p->tok.len;
	struct cel_node *n;
	struct vec v = {0};

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		if (strlen(reserved[i]) == len && memcmp(reserved[i], name, len) == 0) {
			cel_compile_error(p->b, pos, "reserved identifier: %.*s", (int)len, name);
			return NULL;
		}
	}
	next(p);
	if (p->tok.kind == T_LBRACE) {
		cel_compile_error(p->b, p->tok.pos,
				  "message construction is not supported by this evaluator");
		return NULL;
	}
	if (p->tok.kind != T_LPAREN) {
		if ((len == 4 && memcmp(name, "true", 4) == 0) ||
		    (len == 5 && memcmp(name, "false", 5) == 0)) {
			n = literal(p, K_BOOL, pos);
			if (n)
				n->lit->b = len == 4;
			return n;
		}
		if (len == 4 && memcmp(name, "null", 4) == 0)
			return literal(p, K_NULL, pos);
		n = new_node(p, N_IDENT, pos);
		if (n) {
			n->name = name;
			n->name_len = len;
		}
		return n;
	}
	pos = p->tok.pos;
	next(p);
	if (!parse_args(p, &v, T_RPAREN, "')'"))
		return NULL;
	if (len == 3 && memcmp(name, "has", 3) == 0) {
		if (v.n != 1 || v.items[0]->kind != N_SELECT) {
			cel_compile_error(p->b, pos, "invalid argument to has() macro");
			return NULL;
		}
		v.items[0]->kind = N_HAS;
		return v.items[0];
	}
	n = new_node(p, N_CALL, pos);
	if (n) {
		n->name = name;
		n->name_len = len;
		n->args = v.items;
		n->nargs = v.n;
	}
	return n;
}

static struct cel_node *parse_primary(struct parser *p, bool neg)
{
	uint32_t pos = p->tok.pos;
	struct cel_node *n;
	struct vec v = {0};

	if (neg && p->tok.kind != T_INT && p->tok.kind != T_DOUBLE)
		neg = false; /* caller handles it */
	switch (p->tok.kind) {
	case T_INT:
	case T_UINT:
	case T_DOUBLE:
		return number(p, neg, pos);
	case T_STRING:
	case T_BYTES:
		n = literal(p, p->tok.kind == T_STRING ? K_STRING : K_BYTES, pos);
		if (n) {
			n->lit->s.p = p->tok.str;
			n->lit->s.n = p->tok.str_len;
		}
		next(p);
		return n;
	case T_DOT:
		next(p);
		if (p->tok.kind != T_IDENT) {
			syntax_error(p, "IDENTIFIER");
			return NULL;
		}
		return ident_or_call(p, pos);
	case T_IDENT:
		return ident_or_call(p, pos);
	case T_LPAREN:
		next(p);
		n = parse_expr(p);
		if (!n || !expect(p, T_RPAREN, "')'"))
			return NULL;
		return n;
	case T_LBRACK:
		next(p);
		if (!parse_args(p, &v, T_RBRACK, "']'"))
			return NULL;
		n = new_node(p, N_LIST, pos);
		if (n) {
			n->args = v.items;
			n->nargs = v.n;
		}
		return n;
	case T_LBRACE:
		cel_compile_error(p->b, pos, "map literals are not supported by this evaluator");
		return NULL;
	default:
		syntax_error(p, "an expression");
		return NULL;
	}
}

/* cel.bind(var, init, body) from ext.Bindings: receiver `cel`, 3 args. */
static bool is_bind(const struct cel_node *x, const char *name, size_t len, size_t nargs)
{
	return x->kind == N_IDENT && x->name_len == 3 && memcmp(x->name, "cel", 3) == 0 &&
	       len == 4 && memcmp(name, "bind", 4) == 0 && nargs == 4;
}

static struct cel_node *bind(struct parser *p, uint32_t pos, struct vec *v)
{
	struct cel_node *var = v->items[1], *n;

	if (var->kind != N_IDENT) {
		cel_compile_error(p->b, var->pos,
				  "cel.bind() variable names must be simple identifiers");
		return NULL;
	}
	n = new_node(p, N_BIND, pos);
	if (!n)
		return NULL;
	n->name = var->name;
	n->name_len = var->name_len;
	n->args = v->items + 2;
	n->nargs = 2;
	return n;
}

/* The comprehension macros of the standard environment, by name and
 * argument count (receiver included); -1 for an ordinary call. */
static int macro_of(const char *name, size_t len, size_t nargs)
{
	static const struct {
		const char *name;
		size_t nargs;
		int macro;
	} macros[] = {
		{"all", 3, M_ALL}, {"exists", 3, M_EXISTS},  {"exists_one", 3, M_EXISTS_ONE},
		{"map", 3, M_MAP}, {"map", 4, M_MAP_FILTER}, {"filter", 3, M_FILTER},
	};

	for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
		if (strlen(macros[i].name) == len && memcmp(macros[i].name, name, len) == 0 &&
		    macros[i].nargs == nargs)
			return macros[i].macro;
	return -1;
}

static struct cel_node *comprehension(struct parser *p, uint32_t pos, int macro, struct vec *v)
{
	struct cel_node *var = v->items[1], *n;

	if (var->kind != N_IDENT) {
		cel_compile_error(p->b, var->pos, "argument must be a simple name");
		return NULL;
	}
	n = new_node(p, N_COMP, pos);
	if (!n)
		return NULL;
	n->macro = macro;
	n->name = var->name;
	n->name_len = var->name_len;
	v->items[1] = v->items[0]; /* range first, then predicate / transform */
	n->args = v->items + 1;
	n->nargs = v->n - 1;
	return n;
}

static struct cel_node *parse_member(struct parser *p, bool neg)
{
	struct cel_node *x = parse_primary(p, neg);

	while (x && !p->b->failed) {
		uint32_t pos = p->tok.pos;

		if (accept(p, T_DOT)) {
			const char *name = p->tok.text;
			size_t len = p->tok.len;
			struct cel_node *n;

			if (p->tok.kind == T_QUESTION) {
				cel_compile_error(
					p->b, p->tok.pos,
					"optional syntax is not supported by this evaluator");
				return NULL;
			}
			if (!expect(p, T_IDENT, "IDENTIFIER"))
				return NULL;
			if (p->tok.kind == T_LPAREN) {
				struct vec v = {0};

				pos = p->tok.pos;
				next(p);
				if (!vec_push(p, &v, x) || !parse_args(p, &v, T_RPAREN, "')'"))
					return NULL;
				if (is_bind(x, name, len, v.n))
					n = bind(p, pos, &v);
				else if (macro_of(name, len, v.n) >= 0)
					n = comprehension(p, pos, macro_of(name, len, v.n), &v);
				else
					n = new_node(p, N_CALL, pos);
				if (!n)
					return NULL;
				if (n->kind == N_BIND || n->kind == N_COMP) {
					x = n;
					goto next_suffix;
				}
				n->member = true;
				n->args = v.items;
				n->nargs = v.n;
			} else {
				n = new_node(p, N_SELECT, pos);
				if (!n)
					return NULL;
				n->args = cel_arena_alloc(p->b->arena, sizeof(*n->args));
				if (!n->args) {
					cel_compile_error(p->b, pos, "out of memory");
					return NULL;
				}
				n->args[0] = x;
				n->nargs = 1;
			}
			n->name = name;
			n->name_len = len;
			x = n;
		} else if (accept(p, T_LBRACK)) {
			struct cel_node *i;

			if (p->tok.kind == T_QUESTION) {
				cel_compile_error(
					p->b, p->tok.pos,
					"optional syntax is not supported by this evaluator");
				return NULL;
			}
			i = parse_expr(p);
			if (!i || !expect(p, T_RBRACK, "']'"))
				return NULL;
			x = call(p, "_[_]", pos, 2, x, i);
			if (x)
				x->kind = N_INDEX;
		} else {
			break;
		}
	next_suffix:
		if (!enter(p, pos))
			return NULL;
	}
	return p->b->failed ? NULL : x;
}

static struct cel_node *parse_unary(struct parser *p)
{
	uint32_t pos = p->tok.pos;
	int saved = p->depth;
	struct cel_node *x;
	int k = 0;

	if (p->tok.kind == T_NOT) {
		while (accept(p, T_NOT)) {
			k++;
			if (!enter(p, pos))
				return NULL;
		}
		x = parse_member(p, false);
		if (x && k % 2)
			x = call(p, "!_", pos, 1, x, NULL);
		p->depth = saved;
		return x;
	}
	if (p->tok.kind == T_MINUS) {
		while (accept(p, T_MINUS)) {
			k++;
			if (!enter(p, pos))
				return NULL;
		}
		if (p->tok.kind == T_INT || p->tok.kind == T_DOUBLE) {
			x = parse_member(p, true);
			k--;
		} else {
			x = parse_member(p, false);
		}
		if (x && k % 2)
			x = call(p, "-_", pos, 1, x, NULL);
		p->depth = saved;
		return x;
	}
	x = parse_member(p, false);
	p->depth = saved;
	return x;
}

struct binop {
	enum cel_tok tok;
	const char *name;
};

static const struct binop mul_ops[] = {
	{T_STAR, "_*_"}, {T_SLASH, "_/_"}, {T_PERCENT, "_%_"}, {T_EOF, NULL}};
static const struct binop add_ops[] = {{T_PLUS, "_+_"}, {T_MINUS, "_-_"}, {T_EOF, NULL}};
static const struct binop rel_ops[] = {{T_EQ, "_==_"}, {T_NE, "_!=_"}, {T_LT, "_<_"},
				       {T_LE, "_<=_"}, {T_GT, "_>_"},  {T_GE, "_>=_"},
				       {T_IN, "@in"},  {T_EOF, NULL}};

static const char *binop_name(const struct binop *ops, enum cel_tok t)
{
	for (; ops->name; ops++)
		if (ops->tok == t)
			return ops->name;
	return NULL;
}

static struct cel_node *parse_mul(struct parser *p)
{
	int saved = p->depth;
	struct cel_node *x = parse_unary(p);
	const char *op;

	while (x && (op = binop_name(mul_ops, p->tok.kind))) {
		uint32_t pos = p->tok.pos;
		struct cel_node *y;

		next(p);
		if (!enter(p, pos))
			return NULL;
		y = parse_unary(p);
		x = y ? call(p, op, pos, 2, x, y) : NULL;
	}
	p->depth = saved;
	return x;
}

static struct cel_node *parse_add(struct parser *p)
{
	int saved = p->depth;
	struct cel_node *x = parse_mul(p);
	const char *op;

	while (x && (op = binop_name(add_ops, p->tok.kind))) {
		uint32_t pos = p->tok.pos;
		struct cel_node *y;

		next(p);
		if (!enter(p, pos))
			return NULL;
		y = parse_mul(p);
		x = y ? call(p, op, pos, 2, x, y) : NULL;
	}
	p->depth = saved;
	return x;
}

static struct cel_node *parse_rel(struct parser *p)
{
	int saved = p->depth;
	struct cel_node *x = parse_add(p);
	const char *op;

	while (x && (op = binop_name(rel_ops, p->tok.kind))) {
		uint32_t pos = p->tok.pos;
		struct cel_node *y;

		next(p);
		if (!enter(p, pos))
			return NULL;
		y = parse_add(p);
		x = y ? call(p, op, pos, 2, x, y) : NULL;
	}
	p->depth = saved;
	return x;
}

/* a && b && c (or ||) as one n-ary node. */
static struct cel_node *parse_logic(struct parser *p, bool is_or)
{
	enum cel_tok t = is_or ? T_OR : T_AND;
	struct cel_node *x = is_or ? parse_logic(p, false) : parse_rel(p);
	struct cel_node *n;
	struct vec v = {0};
	uint32_t pos = p->tok.pos;

	if (!x || p->tok.kind != t)
		return x;
	if (!vec_push(p, &v, x))
		return NULL;
	while (accept(p, t)) {
		x = is_or ? parse_logic(p, false) : parse_rel(p);
		if (!x || !vec_push(p, &v, x))
			return NULL;
	}
	n = new_node(p, is_or ? N_OR : N_AND, pos);
	if (n) {
		n->args = v.items;
		n->nargs = v.n;
	}
	return p->b->failed ? NULL : n;
}

static struct cel_node *parse_expr(struct parser *p)
{
	uint32_t pos = p->tok.pos;
	struct cel_node *c, *a, *b, *n;

	if (!enter(p, pos))
		return NULL;
	c = parse_logic(p, true);
	if (c && p->tok.kind == T_QUESTION) {
		pos = p->tok.pos;
		next(p);
		a = parse_logic(p, true);
		if (!a || !expect(p, T_COLON, "':'"))
			return NULL;
		b = parse_expr(p);
		if (!b)
			return NULL;
		n = new_node(p, N_COND, pos);
		if (!n)
			return NULL;
		n->args = cel_arena_alloc(p->b->arena, 3 * sizeof(*n->args));
		if (!n->args) {
			cel_compile_error(p->b, pos, "out of memory");
			return NULL;
		}
		n->args[0] = c;
		n->args[1] = a;
		n->args[2] = b;
		n->nargs = 3;
		c = n;
	}
	p->depth--;
	return p->b->failed ? NULL : c;
}

struct cel_node *cel_parse(struct cel_prog_build *b)
{
	struct parser p = {.b = b};
	struct cel_node *root;

	p.lx.src = b->src;
	p.lx.len = b->len;
	p.lx.arena = b->arena;
	next(&p);
	if (b->failed)
		return NULL;
	root = parse_expr(&p);
	if (root && p.tok.kind != T_EOF && !b->failed)
		syntax_error(&p, "<EOF>");
	return b->failed ? NULL : root;
}
