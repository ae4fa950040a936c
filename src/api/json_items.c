/* Item-by-item decoding of List documents (decode.h): the document is
 * walked by the streaming scanner (json_scan.h), which validates every byte;
 * only the members around "items" and then one item at a time become cJSON
 * trees, so a 150,000-pod List never exists as one tree.
 *
 * The scanner refuses everything cJSON refuses (and a few rare texts cJSON
 * accepts); whatever it refuses is left to the caller's whole-document
 * parse, which keeps cJSON's verdict and error position.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/decode.h"
#include "schedext/json_scan.h"

/* Parses the value the cursor returned last (consuming it). NULL when the
 * scanner finds it malformed or cJSON fails (out of memory). */
static cJSON *parse_last(struct sx_json_cur *c, const struct sx_json_val *v)
{
	const char *end = sx_json_finish(c);

	return end ? cJSON_ParseWithLength(v->p, (size_t)(end - v->p)) : NULL;
}

/* Adds the member key: value to head, as cJSON would have (key unescaped,
 * cut at a NUL). 0 or SX_ENOMEM. */
static int add_member(cJSON *head, const struct sx_json_val *key, cJSON *value)
{
	char small[128], *name = small;
	size_t n = sx_json_unescape(key, small, sizeof(small) - 1);
	bool ok;

	if (n >= sizeof(small)) {
		name = malloc(n + 1);
		if (!name) {
			cJSON_Delete(value);
			return SX_ENOMEM;
		}
		sx_json_unescape(key, name, n);
	}
	name[n] = '\0';
	ok = cJSON_AddItemToObject(head, name, value);
	if (name != small)
		free(name);
	if (!ok) {
		cJSON_Delete(value);
		return SX_ENOMEM;
	}
	return 0;
}

/* The members of the object cursor obj into out. */
static int split_members(struct sx_json_cur *obj, struct sx_json_list *out)
{
	struct sx_json_val k, v;
	bool seen_items = false;
	int rc;

	while ((rc = sx_json_next_member(obj, &k, &v)) == 1) {
		cJSON *value;

		if (sx_json_str_eq(&k, "items", false)) {
			if (seen_items) { /* cJSON's lookup finds the first one */
				if (!sx_json_finish(obj))
					return SX_EINVAL;
				continue;
			}
			seen_items = true;
			if (v.type == SX_JSON_ARRAY) {
				const char *end = sx_json_finish(obj);

				if (!end)
					return SX_EINVAL;
				out->items = v.p;
				out->items_len = (size_t)(end - v.p);
				continue;
			}
		}
		value = parse_last(obj, &v);
		if (!value)
			return obj->bad ? SX_EINVAL : SX_ENOMEM;
		if (add_member(out->head, &k, value) < 0)
			return SX_ENOMEM;
	}
	return rc < 0 ? SX_EINVAL : 0;
}

int sx_json_list_split(const char *text, size_t len, int max_depth, struct sx_json_list *out)
{
	struct sx_json_cur doc, obj;
	struct sx_json_val v;
	int rc;

	memset(out, 0, sizeof(*out));
	sx_json_doc(&doc, text, len, max_depth);
	if (sx_json_next(&doc, &v) != 1 || v.type != SX_JSON_OBJECT)
		return SX_EINVAL;
	out->head = cJSON_CreateObject();
	if (!out->head)
		return SX_ENOMEM;
	sx_json_enter(&doc, &obj);
	rc = split_members(&obj, out);
	if (rc == 0 && sx_json_next(&doc, &v) != 0)
		rc = SX_EINVAL; /* something after the object */
	if (rc < 0)
		sx_json_list_free(out);
	return rc;
}

void sx_json_list_free(struct sx_json_list *l)
{
	cJSON_Delete(l->head);
	memset(l, 0, sizeof(*l));
}

void sx_json_items_start(struct sx_json_items *it, const char *items, size_t len)
{
	struct sx_json_val v;

	sx_json_doc(&it->doc, items, len, SX_JSON_DEPTH_CAP);
	if (sx_json_next(&it->doc, &v) == 1 && v.type == SX_JSON_ARRAY) {
		sx_json_enter(&it->doc, &it->arr);
		return;
	}
	memset(&it->arr, 0, sizeof(it->arr)); /* not an array: next fails */
	it->arr.closed = true;
	it->arr.bad = items;
}

int sx_json_items_next(struct sx_json_items *it, cJSON **item, const char **at)
{
	struct sx_json_val v;
	int rc = sx_json_next(&it->arr, &v);

	*item = NULL;
	if (rc <= 0)
		return rc < 0 ? SX_EINVAL : 0;
	if (at)
		*at = v.p;
	*item = parse_last(&it->arr, &v);
	if (!*item)
		return it->arr.bad ? SX_EINVAL : SX_ENOMEM;
	return 1;
}

const char *sx_json_items_pos(const struct sx_json_items *it)
{
	return it->arr.p;
}
