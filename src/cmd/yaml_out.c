/* JSON values as block-style YAML (src/cmd/kubectl.h), the way kubectl
 * prints it: plain keys where they cannot be read as another type, "- "
 * list items with a mapping's first key on the dash line. Strings are
 * written as JSON strings, which are valid YAML double-quoted scalars, so
 * no YAML rule can turn "no" or "1e3" into another type. */
#include <cjson/cJSON.h>
#include <string.h>

#include "kubectl.h"

static void indent(struct sx_buf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		sx_buf_puts(b, "  ");
}

static bool is_container(const cJSON *v)
{
	return (cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child;
}

/* A key YAML reads back as the same string without quotes. */
static bool plain_key(const char *k)
{
	static const char *const words[] = {"true", "false", "null", "yes", "no",
					    "on",   "off",   "y",    "n",   "~"};
	if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
		return false;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.' || *p == '/'))
			return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(k, words[i]) == 0)
			return false;
	return true;
}

static void scalar(struct sx_buf *b, const cJSON *v)
{
	if (cJSON_IsString(v))
		sx_json_str(b, v->valuestring);
	else if (cJSON_IsObject(v))
		sx_buf_puts(b, "{}");
	else if (cJSON_IsArray(v))
		sx_buf_puts(b, "[]");
	else if (cJSON_IsBool(v))
		sx_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNumber(v))
		sx_buf_printf(b, "%.17g", v->valuedouble);
	else
		sx_buf_puts(b, "null");
}

static void value(struct sx_buf *b, const cJSON *v, int depth, bool first_inline);

/* One entry: "key:" or "-", then a scalar on the line or a nested block. */
static void entry(struct sx_buf *b, const cJSON *parent, const cJSON *it, int depth)
{
	if (cJSON_IsObject(parent)) {
		if (plain_key(it->string))
			sx_buf_puts(b, it->string);
		else
			sx_json_str(b, it->string);
		sx_buf_putc(b, ':');
		if (is_container(it)) {
			sx_buf_putc(b, '\n');
			/* lists under a key sit at the key's column, as kubectl writes */
			value(b, it, cJSON_IsArray(it) ? depth : depth + 1, false);
			return;
		}
	} else {
		sx_buf_putc(b, '-');
		if (is_container(it)) {
			sx_buf_putc(b, ' ');
			value(b, it, depth + 1, true);
			return;
		}
	}
	sx_buf_putc(b, ' ');
	scalar(b, it);
	sx_buf_putc(b, '\n');
}

static void value(struct sx_buf *b, const cJSON *v, int depth, bool first_inline)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, v)
	{
		if (!(first_inline && it == v->child))
			indent(b, depth);
		entry(b, v, it, depth);
	}
}

void sx_yaml_write(struct sx_buf *b, const cJSON *json)
{
	if (is_container(json))
		value(b, json, 0, false);
	else {
		scalar(b, json);
		sx_buf_putc(b, '\n');
	}
}
