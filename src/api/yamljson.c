/* sx_parse_documents: JSON (cJSON) or a YAML stream (libyaml) into one cJSON
 * array of documents, so that everything downstream sees only cJSON.
 *
 * YAML is converted conservatively: quoted scalars are always strings; plain
 * scalars become null / booleans / numbers only for the unambiguous YAML 1.1
 * forms (null ~ true false, integers, floats); anchors and aliases are
 * rejected (they would allow billion-laughs expansion). Both formats are
 * limited to MAX_DEPTH levels of nesting.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "schedext/decode.h"

#define MAX_DEPTH SX_DECODE_MAX_DEPTH

/* 1-based line and column of offset off in data. */
static void line_col(const char *data, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (data[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* Nesting depth of JSON text beyond MAX_DEPTH: the offset where it is
 * exceeded, or (size_t)-1. Strings are skipped. cJSON's own limit (1000)
 * protects its recursion; this keeps ours (free, decode) shallow too. */
static size_t json_too_deep(const char *data, size_t len)
{
	bool in_str = false;
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > MAX_DEPTH)
				return i;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return (size_t)-1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (!is_space(*p))
			return false;
	return true;
}

/* Parses data as one JSON document. Returns the tree, or NULL with *err_off
 * at the failure. */
static cJSON *parse_json(const char *data, size_t len, size_t *err_off)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, false);

	if (!root) {
		*err_off = end && end >= data && end <= data + len ? (size_t)(end - data) : 0;
		return NULL;
	}
	if (!only_space(end, data + len)) {
		/* Point at the garbage. Bounded by len and blind to NUL: a
		 * buffer is not a C string (strchr matched the terminator and
		 * walked off the end of a document followed by NUL bytes). */
		while (end < data + len && is_space(*end))
			end++;
		*err_off = (size_t)(end - data);
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* ---------- YAML ---------- */

struct yctx {
	yaml_parser_t parser;
	struct sx_error *err;
	int depth;
};

static int yerr_at(struct yctx *y, const yaml_mark_t *mark, int code, const char *msg)
{
	return sx_error_set(y->err, code, "YAML line %zu column %zu: %s", mark->line + 1,
			    mark->column + 1, msg);
}

static bool all_digits(const char *s, const char *set)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr(set, *s))
			return false;
	return true;
}

/* YAML 1.1 integers (decimal, 0x hex, 0 octal, optional sign) and floats
 * (digits with '.', exponent). */
static bool plain_number(const char *s, double *out)
{
	const char *p = s + (*s == '-' || *s == '+');
	char *end;

	if (!*p)
		return false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    all_digits(p + 2, "0123456789abcdefABCDEF")) {
		*out = (double)strtoull(p + 2, NULL, 16);
	} else if (p[0] == '0' && p[1] && all_digits(p + 1, "01234567")) {
		*out = (double)strtoull(p + 1, NULL, 8);
	} else if (all_digits(p, "0123456789")) {
		*out = strtod(p, NULL);
	} else {
		/* float: [0-9]*.[0-9]*([eE][-+]?[0-9]+)? or [0-9]+[eE]..., no inf/nan. */
		if (!strchr("0123456789.", *p) || strspn(p, "0123456789.eE+-") != strlen(p))
			return false;
		errno = 0;
		*out = strtod(p, &end);
		if (*end || errno || !isfinite(*out) || (p[0] == '.' && !p[1]))
			return false;
		if (!strchr(p, '.') && !strchr(p, 'e') && !strchr(p, 'E'))
			return false;
	}
	if (*s == '-')
		*out = -*out;
	return isfinite(*out);
}

static cJSON *yaml_scalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	double d;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag && strcmp(tag, YAML_STR_TAG) == 0))
		return cJSON_CreateString(v);
	if (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	    !strcmp(v, "NULL"))
		return cJSON_CreateNull();
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return cJSON_CreateTrue();
	if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return cJSON_CreateFalse();
	if (plain_number(v, &d))
		return cJSON_CreateNumber(d);
	return cJSON_CreateString(v);
}

static int yaml_next(struct yctx *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->parser, ev)) {
		const char *problem = y->parser.problem ? y->parser.problem : "parse error";

		return yerr_at(y, &y->parser.problem_mark, SX_EINVAL, problem);
	}
	return 0;
}

static int yaml_node(struct yctx *y, yaml_event_t *ev, cJSON **out);

/* Children of a mapping/sequence until its end event. */
static int yaml_children(struct yctx *y, cJSON *parent, bool mapping)
{
	yaml_event_t ev;
	int rc;

	for (;;) {
		char *key = NULL;
		cJSON *child = NULL;

		if ((rc = yaml_next(y, &ev)) < 0)
			return rc;
		if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (mapping) {
			if (ev.type != YAML_SCALAR_EVENT) {
				rc = yerr_at(y, &ev.start_mark, SX_EINVAL,
					     "mapping keys must be scalars");
				yaml_event_delete(&ev);
				return rc;
			}
			key = strdup((const char *)ev.data.scalar.value);
			yaml_event_delete(&ev);
			if (!key)
				return sx_error_set(y->err, SX_ENOMEM, "out of memory");
			if ((rc = yaml_next(y, &ev)) < 0) {
				free(key);
				return rc;
			}
		}
		rc = yaml_node(y, &ev, &child);
		if (rc == 0 && mapping && !cJSON_AddItemToObject(parent, key, child))
			rc = sx_error_set(y->err, SX_ENOMEM, "out of memory");
		else if (rc == 0 && !mapping && !cJSON_AddItemToArray(parent, child))
			rc = sx_error_set(y->err, SX_ENOMEM, "out of memory");
		if (rc < 0)
			cJSON_Delete(child);
		free(key);
		if (rc < 0)
			return rc;
	}
}

/* Converts the node starting with ev (consumed) into *out. */
static int yaml_node(struct yctx *y, yaml_event_t *ev, cJSON **out)
{
	yaml_event_type_t type = ev->type;
	bool mapping = type == YAML_MAPPING_START_EVENT;
	yaml_mark_t mark = ev->start_mark;
	int rc;

	*out = NULL;
	if (ev->type == YAML_ALIAS_EVENT ||
	    (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor) ||
	    (mapping && ev->data.mapping_start.anchor) ||
	    (ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor)) {
		yaml_event_delete(ev);
		return yerr_at(y, &mark, SX_EINVAL, "anchors and aliases are not supported");
	}
	if (ev->type == YAML_SCALAR_EVENT) {
		*out = yaml_scalar(ev);
		yaml_event_delete(ev);
		return *out ? 0 : sx_error_set(y->err, SX_ENOMEM, "out of memory");
	}
	yaml_event_delete(ev); /* zeroes *ev */
	if (!mapping && type != YAML_SEQUENCE_START_EVENT)
		return yerr_at(y, &mark, SX_EINVAL, "unexpected YAML event");
	if (++y->depth > MAX_DEPTH)
		return yerr_at(y, &mark, SX_ETOOBIG, "nesting deeper than 64 levels");
	*out = mapping ? cJSON_CreateObject() : cJSON_CreateArray();
	if (!*out)
		return sx_error_set(y->err, SX_ENOMEM, "out of memory");
	rc = yaml_children(y, *out, mapping);
	y->depth--;
	if (rc < 0) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	return rc;
}

/* Documents of the stream into docs. */
static int yaml_stream(struct yctx *y, cJSON *docs)
{
	yaml_event_t ev;
	cJSON *doc;
	int rc;

	for (;;) {
		if ((rc = yaml_next(y, &ev)) < 0)
			return rc;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&ev);
			return 0;
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			yaml_event_delete(&ev);
			continue;
		default:
			break;
		}
		rc = yaml_node(y, &ev, &doc);
		if (rc < 0)
			return rc;
		if (!cJSON_AddItemToArray(docs, doc)) {
			cJSON_Delete(doc);
			return sx_error_set(y->err, SX_ENOMEM, "out of memory");
		}
	}
}

static cJSON *parse_yaml(const char *data, size_t len, struct sx_error *err)
{
	struct yctx y = {.err = err};
	cJSON *docs;
	int rc;

	if (!yaml_parser_initialize(&y.parser)) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&y.parser, (const unsigned char *)data, len);
	docs = cJSON_CreateArray();
	rc = docs ? yaml_stream(&y, docs) : sx_error_set(err, SX_ENOMEM, "out of memory");
	yaml_parser_delete(&y.parser);
	if (rc < 0) {
		cJSON_Delete(docs);
		return NULL;
	}
	return docs;
}

/* ---------- entry point ---------- */

static cJSON *wrap_document(cJSON *root, struct sx_error *err)
{
	cJSON *docs = cJSON_CreateArray();

	if (!docs || !cJSON_AddItemToArray(docs, root)) {
		cJSON_Delete(docs);
		cJSON_Delete(root);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return docs;
}

cJSON *sx_parse_documents(const char *data, size_t len, struct sx_error *err)
{
	size_t start = 0, off = 0, line, col, deep;
	cJSON *root;

	if (!data) {
		sx_error_set(err, SX_EINVAL, "no data");
		return NULL;
	}
	/* A UTF-8 byte order mark is not content. */
	if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
		start = 3;
	while (start < len && is_space(data[start]))
		start++;
	if (start < len && (data[start] == '{' || data[start] == '[')) {
		deep = json_too_deep(data + start, len - start);
		if (deep != (size_t)-1) {
			line_col(data, start + deep, &line, &col);
			sx_error_set(err, SX_ETOOBIG,
				     "JSON line %zu column %zu: nesting deeper than %d levels",
				     line, col, MAX_DEPTH);
			return NULL;
		}
		/* Like kubectl, a document opening with a bracket is JSON and
		 * only JSON: falling back to YAML flow style would accept
		 * broken JSON ({"a": } is valid YAML). */
		root = parse_json(data + start, len - start, &off);
		if (root)
			return wrap_document(root, err);
		line_col(data, start + off, &line, &col);
		sx_error_set(err, SX_EINVAL, "JSON line %zu column %zu: syntax error", line, col);
		return NULL;
	}
	return parse_yaml(data, len, err);
}
