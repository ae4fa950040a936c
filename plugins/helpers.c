/* Helpers shared by several plugins (upstream pkg/scheduler/framework/
 * plugins/helper) and the sx_detail_* writers of the plugins' explain
 * hooks (plugin.h). Stateless and thread-safe. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_match.h"
#include "schedext/buf.h"
#include "schedext/cel.h"
#include "schedext/intern.h"
#include "schedext/plugin.h"
#include "state_pair.h"

/* Scales scores to [0, max_priority] relative to the highest one (integer
 * division, as upstream); with reverse, the highest raw score gets 0. When
 * every score is 0 (or negative) nothing is scaled: reverse makes them all
 * max_priority, otherwise they are left as they are. */
void sx_default_normalize_score(int64_t max_priority, bool reverse, struct sx_node_score *scores,
				uint32_t n)
{
	int64_t max_count = 0;

	for (uint32_t i = 0; i < n; i++)
		if (scores[i].score > max_count)
			max_count = scores[i].score;
	if (max_count == 0) {
		if (reverse)
			for (uint32_t i = 0; i < n; i++)
				scores[i].score = max_priority;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t s = max_priority * scores[i].score / max_count;
		scores[i].score = reverse ? max_priority - s : s;
	}
}

void sx_state_pair_free(const struct sx_state_pair_ops *ops, struct sx_state_pair *st)
{
	if (!st)
		return;
	if (st->f)
		ops->free_f(st->f);
	if (st->s)
		ops->free_s(st->s);
	free(st);
}

void *sx_state_pair_clone(const struct sx_state_pair_ops *ops, const struct sx_state_pair *st)
{
	struct sx_state_pair *c = sx_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if ((st->f && !(c->f = ops->clone_f(st->f))) || (st->s && !(c->s = ops->clone_s(st->s)))) {
		sx_state_pair_free(ops, c);
		return NULL;
	}
	return c;
}

struct sx_state_pair *sx_state_pair_slot(struct sx_cycle_state *cs, unsigned slot)
{
	return sx_cycle_state_slot(cs, slot, sizeof(struct sx_state_pair));
}

/* ---------- the numbers behind a rejection (plugin.h) ---------- */

void sx_detail_text(struct sx_detail *d, const char *fmt, ...)
{
	size_t n = strlen(d->text);
	va_list ap;

	if (n && n + 2 < sizeof(d->text)) {
		memcpy(d->text + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(d->text + n, sizeof(d->text) - n, fmt, ap);
	va_end(ap);
}

/* Adds member `name` whose value is the JSON text json[0..len), or null
 * when it does not fit in what is left of d->json. */
void sx_detail_json(struct sx_detail *d, const char *name, const char *json, size_t len)
{
	static const char null_json[] = "null";

	if (d->n >= SX_DETAIL_MAX)
		return;
	if (!json || len == 0 || len > sizeof(d->json) - d->used) {
		json = null_json;
		len = 4;
		if (len > sizeof(d->json) - d->used)
			return;
	}
	snprintf(d->members[d->n].name, sizeof(d->members[d->n].name), "%s", name);
	memcpy(d->json + d->used, json, len);
	d->members[d->n].off = d->used;
	d->members[d->n].len = (uint32_t)len;
	d->used += (uint32_t)len;
	d->n++;
}

/* The member from b's JSON text (null when b failed), then frees b. */
static void detail_buf(struct sx_detail *d, const char *name, struct sx_buf *b)
{
	sx_detail_json(d, name, b->failed ? NULL : b->data, b->failed ? 0 : b->len);
	sx_buf_free(b);
}

void sx_detail_str(struct sx_detail *d, const char *name, const char *value)
{
	struct sx_buf b;

	sx_buf_init(&b);
	if (value)
		sx_json_str(&b, value);
	detail_buf(d, name, &b);
}

void sx_detail_int(struct sx_detail *d, const char *name, int64_t value)
{
	char v[24];

	sx_detail_json(d, name, v, (size_t)snprintf(v, sizeof(v), "%" PRId64, value));
}

void sx_detail_strs(struct sx_detail *d, const char *name, const sx_str *values, uint32_t n)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_putc(&b, '[');
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			sx_buf_putc(&b, ',');
		sx_json_str(&b, sx_str_get(values[i]));
	}
	sx_buf_putc(&b, ']');
	detail_buf(d, name, &b);
}

const char *sx_taint_string(const struct sx_taint *t, char *buf, size_t len)
{
	static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
	const char *value = sx_str_get(t->value);

	snprintf(buf, len, "%s%s%s:%s", sx_str_get(t->key), value[0] ? "=" : "", value,
		 t->effect < 4 ? effects[t->effect] : "");
	return buf;
}

const char *sx_requirement_string(const struct sx_requirement *r, char *buf, size_t len)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
	size_t n;

	if (r->op == SX_OP_EQUALS) {
		snprintf(buf, len, "%s=%s", sx_str_get(r->key),
			 r->nvalues ? sx_str_get(r->values[0]) : "");
		return buf;
	}
	n = (size_t)snprintf(buf, len, "%s %s", sx_str_get(r->key), r->op < 6 ? ops[r->op] : "?");
	if (r->op == SX_OP_EXISTS || r->op == SX_OP_DOES_NOT_EXIST)
		return buf;
	for (uint32_t i = 0; i < r->nvalues && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : " [",
				      sx_str_get(r->values[i]));
	if (n < len)
		snprintf(buf + n, len - n, "%s", r->nvalues ? "]" : " []");
	return buf;
}

/* ---------- DRA device selectors (dra_match.h) ---------- */

int sx_dra_cel_match(void *cel_cache, const char *expr, sx_str driver, sx_str pool,
		     const struct sx_dra_device *dev, char *err, size_t errlen)
{
	struct sx_cel_attr attrs[64];
	struct sx_cel_capacity caps[64];
	struct sx_cel_device d = {sx_str_get(driver), attrs, 0, caps, 0, dev->allow_multiple};
	struct sx_cel_program *p = sx_cel_cache_get(cel_cache, expr, strlen(expr), err, errlen);
	bool result = false;
	int rc;

	(void)pool;
	if (!p)
		return SX_DRA_COMPILE_ERROR;
	for (uint32_t i = 0; i < dev->nattrs && i < 64; i++) {
		const struct sx_dra_attr *a = &dev->attrs[i];

		if (!sx_dra_attr_scalar(a)) {
			/* upstream's Device conversion for CEL (cel/compile.go,
			 * getAttributeValue): a value of no known type, or a list
			 * (DRAListTypeAttributes, which this evaluator does not
			 * implement), fails every selector on the device */
			snprintf(err, errlen, "attribute %s: unsupported attribute value", a->name);
			sx_cel_program_unref(p);
			return SX_DRA_RUNTIME_ERROR;
		}
		attrs[d.n_attrs++] = (struct sx_cel_attr){a->name, (enum sx_cel_attr_type)a->type,
							  a->i, a->b, a->s};
	}
	for (uint32_t i = 0; i < dev->ncaps && i < 64; i++)
		caps[d.n_caps++] = (struct sx_cel_capacity){dev->caps[i].name, dev->caps[i].value};
	rc = sx_cel_eval_device(p, &d, &result, NULL, err, errlen);
	sx_cel_program_unref(p);
	if (rc < 0)
		return SX_DRA_RUNTIME_ERROR;
	return result ? SX_DRA_MATCH : SX_DRA_NO_MATCH;
}
