/* State files (--state FILE): a v1 List, a single object or a multi-document
 * JSON/YAML stream whose documents are objects or Lists. Every object is
 * decoded first; the cache sees them only when the whole file is good
 * (sx_cache_load), so a bad file loads nothing.
 *
 * Error messages (err->msg; err->path stays empty) name the file, where the
 * object sits, the object when its kind/name are readable, the field and
 * the reason:
 *   "demo.yaml: items[3] (pod default/web-1): spec.containers[0].resources.requests.cpu: <msg>"
 * `where` is items[i] for a file holding one List, documents[d] for the
 * documents of a stream (or a single object), documents[d].items[i] for a
 * List inside a stream.
 */
#include "schedext/state.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "schedext/decode.h"
#include "schedext/vec.h"

#define STATE_MAX_BYTES	 ((size_t)1 << 30)
#define STREAM_FAILED	 1 /* not an error: decode the whole tree instead */
#define PAGE_BYTES	 ((uintptr_t)4096)
#define RELEASE_STEP	 ((uintptr_t)8 << 20) /* release read pages 8 MB at a time */
#define MAX_WARNED_KINDS 64

struct loader {
	const char *name;	/* file name for messages */
	struct sx_object *objs; /* decoded, references owned */
	uint32_t n, cap;
	char *warned[MAX_WARNED_KINDS]; /* unknown kinds already reported */
	uint32_t nwarned;
	struct sx_field_warnings fields; /* unknown fields reported */
	bool check_fields;		 /* a file: warn about unknown fields */
	struct sx_error *err;
	const char *map;      /* the file when mapped (pages released as read) */
	const char *released; /* map's pages before this are released */
};

static void loader_free(struct loader *l, bool release_objs)
{
	if (release_objs)
		for (uint32_t i = 0; i < l->n; i++)
			sx_object_unref(&l->objs[i]);
	free(l->objs);
	for (uint32_t i = 0; i < l->nwarned; i++)
		free(l->warned[i]);
	sx_field_warnings_free(&l->fields);
}

/* One warning per unknown kind and load. */
static void warn_unknown(struct loader *l, const char *kind)
{
	for (uint32_t i = 0; i < l->nwarned; i++)
		if (strcmp(l->warned[i], kind) == 0)
			return;
	sx_log(0, "%s: skipping objects of unknown kind %.64s", l->name, kind);
	if (l->nwarned < MAX_WARNED_KINDS) {
		l->warned[l->nwarned] = sx_strndup(kind, 64);
		if (l->warned[l->nwarned])
			l->nwarned++;
	}
}

/* " (pod default/web-1)", " (pod)" or "" from whatever the JSON shows. */
static void describe(const cJSON *item, const char *kind, char *buf, size_t len)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(item, "metadata");
	const char *name = cJSON_IsObject(meta) ? sx_json_string(meta, "name") : NULL;
	const char *ns = cJSON_IsObject(meta) ? sx_json_string(meta, "namespace") : NULL;
	char lower[64];
	size_t i;

	buf[0] = '\0';
	if (!kind || !*kind)
		return;
	for (i = 0; kind[i] && i + 1 < sizeof(lower); i++)
		lower[i] = (char)tolower((unsigned char)kind[i]);
	lower[i] = '\0';
	if (name && ns && *ns)
		snprintf(buf, len, " (%s %.64s/%.128s)", lower, ns, name);
	else if (name)
		snprintf(buf, len, " (%s %.128s)", lower, name);
	else
		snprintf(buf, len, " (%s)", lower);
}

/* An unknown field of a dumped object is a warning, not an error. A dump
 * comes from a cluster, whose apiserver may be newer than the v1 types
 * schedext knows; kubectl's field validation "Warn" (KEP-2885) reports
 * each unknown field and goes on, and so does this: once per kind and path
 * (indices dropped, so 5,000 pods with the same new field warn once), at
 * most SX_FIELD_WARNINGS_MAX per load. */
struct warn_ctx {
	struct sx_field_warnings *w;
	const char *file, *where, *kind;
	const cJSON *item;
};

static int warn_field(void *ctx, const char *path)
{
	struct warn_ctx *c = ctx;
	struct sx_field_warnings *w = c->w;
	char key[600], desc[300];
	size_t k = (size_t)snprintf(key, sizeof(key), "%s ", c->kind);

	for (const char *p = path; *p && k + 2 < sizeof(key); p++) {
		key[k++] = *p;
		if (*p == '[' && strchr(p, ']')) /* "[12]" -> "[]" */
			p = strchr(p, ']') - 1;
	}
	key[k] = '\0';
	for (uint32_t i = 0; i < w->n; i++)
		if (strcmp(w->seen[i], key) == 0)
			return 0;
	if (w->n == SX_FIELD_WARNINGS_MAX || !(w->seen[w->n] = sx_strdup(key)))
		return 1; /* enough said: stop walking */
	w->n++;
	describe(c->item, c->kind, desc, sizeof(desc));
	sx_log(0, "warning: %s: %s%s: unknown field \"%s\"", c->file, c->where, desc, path);
	return 0;
}

void sx_state_warn_fields(struct sx_field_warnings *w, const char *file, const char *where,
			  const cJSON *item, const char *kind)
{
	struct warn_ctx c = {w, file, where, kind, item};

	if (kind)
		sx_decode_check_fields(item,
				       sx_kind_lookup(sx_json_string(item, "apiVersion"), kind),
				       SX_FIELDS_WARN, warn_field, &c, NULL);
}

void sx_field_warnings_free(struct sx_field_warnings *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		free(w->seen[i]);
	w->n = 0;
}

/* Rewrites err as the full message for the item at `where`. */
static int item_error(struct loader *l, const char *where, const cJSON *item, const char *kind)
{
	struct sx_error *err = l->err;
	char desc[300], what[380], detail[sizeof(err->path) + sizeof(err->msg) + 2];
	int code = err->code < 0 ? err->code : SX_EINVAL;

	describe(item, kind, desc, sizeof(desc));
	snprintf(what, sizeof(what), "%s%s", where, desc);
	sx_error_string(err, detail, sizeof(detail)); /* "path: msg" (copied: err is rewritten) */
	sx_error_set(err, code, "%s: %s: %s", l->name, what, detail);
	return code;
}

static int push(struct loader *l, const struct sx_object *o)
{
	if (sx_vec_reserve(l->objs, l->cap, l->n + 1, 64) < 0)
		return SX_ENOMEM;
	l->objs[l->n++] = *o;
	return 0;
}

/* Decodes one object. `kind` is the list's item kind or NULL. */
static int load_item(struct loader *l, const cJSON *item, const char *list_kind, const char *where)
{
	const char *own = cJSON_IsObject(item) ? sx_json_string(item, "kind") : NULL;
	const char *kind = own && *own ? own : list_kind;
	struct sx_object o;
	const struct sx_meta *m;
	int rc;

	if (kind && sx_kind_from_name(kind) == SX_KIND_UNKNOWN) {
		warn_unknown(l, kind);
		return 0;
	}
	/* no usable kind: let the decoder report the object's own "kind" */
	rc = sx_decode_object(item, kind, &o, l->err);
	if (rc < 0)
		return item_error(l, where, item, kind);
	if (l->check_fields)
		sx_state_warn_fields(&l->fields, l->name, where, item, kind);
	m = sx_object_meta(&o);
	if (!m || !m->name || !m->name[0]) {
		sx_object_unref(&o);
		sx_error_set(l->err, SX_EINVAL, "missing name");
		sx_error_prefix(l->err, "metadata.name");
		return item_error(l, where, item, kind);
	}
	rc = push(l, &o);
	if (rc < 0) {
		sx_object_unref(&o);
		sx_error_set(l->err, SX_ENOMEM, "%s: out of memory", l->name);
	}
	return rc;
}

/* One element of a List at items[i]. */
static int load_element(struct loader *l, const cJSON *it, const char *item_kind,
			const char *prefix, int i)
{
	char where[96];

	snprintf(where, sizeof(where), "%sitems[%d]", prefix, i);
	if (!cJSON_IsObject(it)) {
		sx_error_set(l->err, SX_EINVAL, "%s: %s: expected an object", l->name, where);
		return SX_EINVAL;
	}
	return load_item(l, it, item_kind, where);
}

/* Gives back the pages of a mapped file read so far (they would stay
 * resident, on top of the objects decoded from them). */
static void release_read(struct loader *l, const char *pos)
{
	uintptr_t base = (uintptr_t)l->map, upto = (uintptr_t)pos & ~(uintptr_t)(PAGE_BYTES - 1);

	if (!l->map || !pos || upto < (uintptr_t)l->released + RELEASE_STEP)
		return;
	madvise((void *)base, upto - base, MADV_DONTNEED);
	l->released = (const char *)upto;
}

/* The elements of a List read one at a time from its text: one item's
 * tree at a time. STREAM_FAILED when the text fails now though the scanner
 * accepted it (out of memory): the caller starts over the whole-tree way. */
static int load_streamed_items(struct loader *l, struct sx_json_items *s, const char *item_kind)
{
	for (int i = 0;; i++) {
		cJSON *it;
		int rc = sx_json_items_next(s, &it, NULL);

		if (rc <= 0)
			return rc < 0 ? STREAM_FAILED : 0;
		rc = load_element(l, it, item_kind, "", i);
		cJSON_Delete(it);
		if (rc < 0)
			return rc;
		release_read(l, sx_json_items_pos(s));
	}
}

/* A List document: every item, kind from the item or "<X>List"; the items
 * from doc, or from s when the document was split (json_items.c). */
static int load_list(struct loader *l, const cJSON *doc, const char *kind, const char *prefix,
		     struct sx_json_items *s)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items");
	char item_kind[128] = "";
	const cJSON *it;
	int i = 0;

	if (strlen(kind) > 4 && strlen(kind) - 4 < sizeof(item_kind))
		memcpy(item_kind, kind, strlen(kind) - 4);
	if (s)
		return load_streamed_items(l, s, item_kind[0] ? item_kind : NULL);
	if (items && !cJSON_IsNull(items) && !cJSON_IsArray(items)) {
		sx_error_set(l->err, SX_EINVAL, "%s: %sitems: expected an array", l->name, prefix);
		return SX_EINVAL;
	}
	if (!cJSON_IsArray(items))
		return 0;
	cJSON_ArrayForEach(it, items)
	{
		int rc = load_element(l, it, item_kind[0] ? item_kind : NULL, prefix, i++);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_document(struct loader *l, const cJSON *doc, int index, bool stream)
{
	const char *kind;
	char prefix[48], where[48];

	snprintf(where, sizeof(where), "documents[%d]", index);
	if (cJSON_IsNull(doc))
		return 0; /* an empty YAML document ("---" at the end) */
	if (!cJSON_IsObject(doc)) {
		sx_error_set(l->err, SX_EINVAL, "%s: %s: expected an object", l->name, where);
		return SX_EINVAL;
	}
	kind = sx_json_string(doc, "kind");
	if (!sx_kind_is_list(kind))
		return load_item(l, doc, NULL, where);
	snprintf(prefix, sizeof(prefix), "%s", stream ? where : "");
	if (stream)
		strcat(prefix, ".");
	return load_list(l, doc, kind, prefix, NULL);
}

/* Decodes every document into l; 0 or negative (l->err set). */
static int decode_documents(struct loader *l, const cJSON *docs)
{
	const cJSON *doc;
	int rc = 0, i = 0, ndocs = cJSON_GetArraySize(docs);

	cJSON_ArrayForEach(doc, docs)
	{
		rc = load_document(l, doc, i++, ndocs > 1);
		if (rc < 0)
			break;
	}
	return rc;
}

/* Applies what l decoded (all or nothing) and frees l. */
static int apply_decoded(struct sx_cache *cache, struct loader *l, int rc)
{
	if (rc < 0) {
		loader_free(l, true);
		return rc;
	}
	rc = sx_cache_load(cache, l->objs, l->n); /* takes the references */
	if (rc < 0)
		sx_error_set(l->err, rc, "%s: cannot load into the cache", l->name);
	else
		sx_log(2, "%s: loaded %u objects", l->name, l->n);
	loader_free(l, false);
	return rc;
}

int sx_state_load_documents(struct sx_cache *cache, const char *name, const struct cJSON *docs,
			    struct sx_error *err)
{
	struct sx_error tmp;
	struct loader l = {.name = name ? name : "state", .err = err ? err : &tmp};

	return apply_decoded(cache, &l, decode_documents(&l, docs));
}

/* Decodes the whole tree of data into l (the file's error messages). */
static int decode_tree(struct loader *l, const char *data, size_t len)
{
	cJSON *docs = sx_parse_documents(data, len, l->err);
	int rc;

	if (!docs) {
		char msg[600];

		sx_error_string(l->err, msg, sizeof(msg));
		return sx_error_set(l->err, l->err->code < 0 ? l->err->code : SX_EINVAL, "%s: %s",
				    l->name, msg);
	}
	rc = decode_documents(l, docs);
	/* The tree goes before the cache fills: the objects and the first
	 * snapshot then reuse its pages instead of faulting in new ones (the
	 * first snapshot of 5,000 nodes took 100 ms instead of 1 ms). */
	cJSON_Delete(docs);
	return rc;
}

/* A JSON List decoded item by item (json_items.c), so that a 150,000-pod
 * file never is one tree: the same objects and messages as decode_tree,
 * which JSON this does not take (not one object, or one the scanner
 * refuses) goes to instead: STREAM_FAILED. */
static int decode_streamed(struct loader *l, const char *data, size_t len)
{
	struct sx_json_list list;
	struct sx_json_items s;
	const char *kind;
	size_t start = 0;
	int rc;

	if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
		start = 3; /* as sx_parse_documents */
	while (start < len && strchr(" \t\r\n", data[start]) && data[start])
		start++;
	if (start == len || data[start] != '{')
		return STREAM_FAILED;
	if (sx_json_list_split(data + start, len - start, SX_DECODE_MAX_DEPTH, &list) < 0)
		return STREAM_FAILED;
	kind = sx_json_string(list.head, "kind");
	if (!list.items) {
		rc = load_document(l, list.head, 0, false); /* head is the whole object */
	} else if (sx_kind_is_list(kind)) {
		release_read(l, data + len); /* the scan's pages; then again as read */
		l->released = l->map;
		sx_json_items_start(&s, list.items, list.items_len);
		rc = load_list(l, list.head, kind, "", &s);
	} else {
		rc = STREAM_FAILED; /* an object with an "items" array: rare */
	}
	sx_json_list_free(&list);
	return rc;
}

/* Decodes data into l, streaming when it can. */
static int decode_data(struct loader *l, const char *data, size_t len)
{
	int rc = decode_streamed(l, data, len);

	if (rc != STREAM_FAILED)
		return rc;
	for (uint32_t i = 0; i < l->n; i++) /* what the stream decoded */
		sx_object_unref(&l->objs[i]);
	l->n = 0;
	return decode_tree(l, data, len);
}

int sx_state_load_buffer(struct sx_cache *cache, const char *name, const char *data, size_t len,
			 struct sx_error *err)
{
	struct sx_error tmp;
	struct loader l = {
		.name = name ? name : "state", .err = err ? err : &tmp, .check_fields = true};

	if (!data) /* sx_parse_documents' message */
		return apply_decoded(cache, &l, decode_tree(&l, data, len));
	return apply_decoded(cache, &l, decode_data(&l, data, len));
}

/* Reads the whole file, bounded by STATE_MAX_BYTES (pipes included). */
char *sx_state_read_file(const char *path, size_t *len, struct sx_error *err)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL;

	if (!f) {
		sx_error_set(err, SX_EIO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		char *p;
		size_t got;

		if (n == cap || !buf) {
			if (buf)
				cap = cap * 2 > STATE_MAX_BYTES + 1 ? STATE_MAX_BYTES + 1 : cap * 2;
			p = realloc(buf, cap + 1);
			if (!p) {
				sx_error_set(err, SX_ENOMEM, "%s: out of memory", path);
				goto fail;
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n > STATE_MAX_BYTES) {
			sx_error_set(err, SX_ETOOBIG, "%s: larger than %zu bytes", path,
				     STATE_MAX_BYTES);
			goto fail;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		sx_error_set(err, SX_EIO, "%s: read error", path);
		goto fail;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

/* Maps a regular file read-only (NULL for anything else: pipes, empty or
 * oversized files go through sx_state_read_file). */
static const char *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > STATE_MAX_BYTES) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return p;
}

/* A mapped file: its pages are released as the items are decoded, so the
 * peak is the objects, not the objects plus the file. */
static int load_mapped(struct sx_cache *cache, const char *path, const char *map, size_t len,
		       struct sx_error *err)
{
	struct loader l = {
		.name = path, .err = err, .map = map, .released = map, .check_fields = true};
	int rc;

	madvise((void *)map, len, MADV_SEQUENTIAL);
	rc = decode_data(&l, map, len);
	munmap((void *)map, len);
	return apply_decoded(cache, &l, rc);
}

int sx_state_load_file(struct sx_cache *cache, const char *path, struct sx_error *err)
{
	struct sx_error tmp;
	const char *map;
	size_t len = 0;
	char *data;
	int rc;

	if (!err)
		err = &tmp;
	map = map_file(path, &len);
	if (map)
		return load_mapped(cache, path, map, len, err);
	data = sx_state_read_file(path, &len, err);
	if (!data)
		return err->code;
	rc = sx_state_load_buffer(cache, path, data, len, err);
	free(data);
	return rc;
}
