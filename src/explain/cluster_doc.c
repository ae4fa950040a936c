/* The cluster as a document (include/schedext/whatif.h): a dump read from
 * a file, or one short-lived paginated LIST per kind from the API server,
 * flattened into one array of objects that what-if edits before loading. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/decode.h"
#include "schedext/informer.h"
#include "schedext/kube.h"
#include "schedext/state.h"
#include "schedext/whatif.h"

#define LIST_PAGE      500
#define MAX_LIST_PAGES 100000

/* Moves every item of list (a parsed XList) into out, giving items without
 * a kind the list's item kind, and items without an apiVersion the list's
 * (kube-apiserver's list items carry neither; the group tells kinds of the
 * same name apart, sx_kind_lookup). */
static int take_list_items(cJSON *out, cJSON *list, const char *list_kind)
{
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	const char *api_version = sx_json_string(list, "apiVersion");
	char kind[128] = "";
	size_t n = list_kind ? strlen(list_kind) : 0;

	if (n > 4 && n - 4 < sizeof(kind))
		memcpy(kind, list_kind, n - 4);
	if (!cJSON_IsArray(items))
		return 0;
	while (items->child) {
		cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
		if (cJSON_IsObject(it) && !cJSON_GetObjectItemCaseSensitive(it, "kind") &&
		    kind[0] && !cJSON_AddStringToObject(it, "kind", kind)) {
			cJSON_Delete(it);
			return SX_ENOMEM;
		}
		if (cJSON_IsObject(it) && !cJSON_GetObjectItemCaseSensitive(it, "apiVersion") &&
		    api_version && *api_version &&
		    !cJSON_AddStringToObject(it, "apiVersion", api_version)) {
			cJSON_Delete(it);
			return SX_ENOMEM;
		}
		cJSON_AddItemToArray(out, it);
	}
	return 0;
}

/* Unknown fields of the file's Pods and Nodes: one warning per kind and
 * path, as the state loader gives them (sx_state_warn_fields), with the
 * same places: items[i], documents[d], documents[d].items[i]. */
static void warn_fields(const char *path, const cJSON *docs)
{
	struct sx_field_warnings w = {0};
	int ndocs = cJSON_GetArraySize(docs), d = 0;
	const cJSON *doc, *it;
	char where[96];

	cJSON_ArrayForEach(doc, docs)
	{
		const char *kind = sx_json_string(doc, "kind");
		char item_kind[128] = "";
		int i = 0;

		if (!cJSON_IsObject(doc) || !kind) {
			d++;
			continue;
		}
		if (!sx_kind_is_list(kind)) {
			snprintf(where, sizeof(where), "documents[%d]", d++);
			sx_state_warn_fields(&w, path, where, doc, kind);
			continue;
		}
		if (strlen(kind) > 4 && strlen(kind) - 4 < sizeof(item_kind))
			memcpy(item_kind, kind, strlen(kind) - 4);
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "items"))
		{
			const char *k = sx_json_string(it, "kind");
			if (ndocs > 1)
				snprintf(where, sizeof(where), "documents[%d].items[%d]", d, i++);
			else
				snprintf(where, sizeof(where), "items[%d]", i++);
			sx_state_warn_fields(&w, path, where, it,
					     k		    ? k
					     : item_kind[0] ? item_kind
							    : NULL);
		}
		d++;
	}
	sx_field_warnings_free(&w);
}

int sx_cluster_doc_read(struct sx_cluster_doc *doc, const char *path, struct sx_error *err)
{
	size_t len;
	char *data = sx_state_read_file(path, &len, err);
	cJSON *docs;
	int rc = 0;

	if (!data)
		return err->code < 0 ? err->code : SX_EIO;
	docs = sx_parse_documents(data, len, err);
	free(data);
	if (!docs) {
		char msg[600];
		sx_error_string(err, msg, sizeof(msg));
		return sx_error_set(err, SX_EINVAL, "%s: %s", path, msg);
	}
	if (!doc->quiet)
		warn_fields(path, docs);
	if (!doc->items)
		doc->items = cJSON_CreateArray();
	while (doc->items && docs->child && rc == 0) {
		cJSON *d = cJSON_DetachItemViaPointer(docs, docs->child);
		const char *kind = sx_json_string(d, "kind");
		if (cJSON_IsObject(d) && sx_kind_is_list(kind)) {
			rc = take_list_items(doc->items, d, kind);
			cJSON_Delete(d);
		} else if (cJSON_IsObject(d)) {
			cJSON_AddItemToArray(doc->items, d);
		} else {
			cJSON_Delete(d); /* empty YAML documents */
		}
	}
	cJSON_Delete(docs);
	if (!doc->items || rc < 0) {
		sx_cluster_doc_free(doc);
		return sx_error_set(err, SX_ENOMEM, "%s: out of memory", path);
	}
	return 0;
}

/* Percent-encodes a continue token for a query string; caller frees. */
static char *escape_query(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = n < (1u << 20) ? malloc(3 * n + 1) : NULL, *o = out;

	for (; out && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	if (out)
		*o = '\0';
	return out;
}

/* GET one page; *list receives the parsed XList. 1 when the server does
 * not serve the collection (404/403), 0 on success, negative on error. */
static int get_page(struct sx_kube *kube, const char *path, cJSON **list, struct sx_error *err)
{
	char *resp = NULL, msg[512];
	size_t len = 0;
	long status = 0;
	int rc = sx_kube_request(kube, "GET", path, NULL, NULL, 0, &status, &resp, &len, err);

	*list = NULL;
	if (rc < 0) {
		free(resp);
		return rc;
	}
	if (status == 404 || status == 403) {
		free(resp);
		return 1;
	}
	if (status != 200) {
		sx_kube_status_message(resp, len, status, msg, sizeof(msg));
		free(resp);
		return sx_error_set(err, SX_EIO, "GET %s: %s", path, msg);
	}
	*list = cJSON_ParseWithLength(resp ? resp : "", len);
	free(resp);
	if (!cJSON_IsObject(*list)) {
		cJSON_Delete(*list);
		*list = NULL;
		return sx_error_set(err, SX_EINVAL, "GET %s: the answer is not a JSON object",
				    path);
	}
	return 0;
}

/* Every page of one collection into doc. */
static int list_collection(struct sx_cluster_doc *doc, struct sx_kube *kube, const char *base,
			   const char *field_selector, struct sx_error *err)
{
	char path[2048];
	char *cont = NULL;
	int rc = 0;

	for (int page = 0; page < MAX_LIST_PAGES; page++) {
		cJSON *list;
		int n = snprintf(path, sizeof(path), "%s?limit=%d%s%s%s%s", base, LIST_PAGE,
				 field_selector ? "&fieldSelector=" : "",
				 field_selector ? field_selector : "", cont ? "&continue=" : "",
				 cont ? cont : "");
		free(cont);
		cont = NULL;
		if (n < 0 || (size_t)n >= sizeof(path))
			return sx_error_set(err, SX_EINVAL, "GET %s: continue token too long",
					    base);
		rc = get_page(kube, path, &list, err);
		if (rc != 0)
			return rc > 0 ? 0 : rc;
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
		const char *next = sx_json_string(meta, "continue");
		if (next && *next)
			cont = escape_query(next);
		rc = take_list_items(doc->items, list, sx_json_string(list, "kind"));
		cJSON_Delete(list);
		if (rc < 0 || (next && *next && !cont)) {
			free(cont);
			return sx_error_set(err, SX_ENOMEM, "GET %s: out of memory", base);
		}
		if (!cont)
			return 0;
	}
	free(cont);
	return sx_error_set(err, SX_ETOOBIG, "GET %s: more than %d pages", base, MAX_LIST_PAGES);
}

int sx_cluster_doc_list(struct sx_cluster_doc *doc, struct sx_kube *kube, struct sx_error *err)
{
	int rc = 0;

	doc->items = cJSON_CreateArray();
	if (!doc->items)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	for (unsigned i = 0; rc == 0 && i < sx_informer_nkinds(); i++) {
		const char *selector = NULL;
		const char *path = sx_informer_kind_path(i, &selector);
		rc = list_collection(doc, kube, path, selector, err);
	}
	if (rc == 0)
		rc = list_collection(doc, kube, "/apis/apps/v1/deployments", NULL, err);
	if (rc < 0)
		sx_cluster_doc_free(doc);
	return rc;
}

void sx_cluster_doc_free(struct sx_cluster_doc *doc)
{
	cJSON_Delete(doc->items);
	doc->items = NULL;
}

struct cJSON *sx_cluster_doc_find(const struct sx_cluster_doc *doc, const char *kind,
				  const char *ns, const char *name)
{
	cJSON *it;
	cJSON_ArrayForEach(it, doc->items)
	{
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const char *k = sx_json_string(it, "kind"), *n = sx_json_string(meta, "name");
		const char *itns = sx_json_string(meta, "namespace");
		if (!k || !n || strcmp(k, kind) != 0 || strcmp(n, name) != 0)
			continue;
		if (!ns || strcmp(itns ? itns : "default", ns) == 0)
			return it;
	}
	return NULL;
}

int sx_cluster_doc_load(const struct sx_cluster_doc *doc, struct sx_cache *cache,
			struct sx_error *err)
{
	/* Only kinds the cache models: Deployments are what-if's input, and
	 * the loader would warn about each unknown kind. */
	cJSON *docs = cJSON_CreateArray(), *it;
	int rc;

	if (!docs)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, doc->items)
	{
		const char *kind = sx_json_string(it, "kind");
		if (kind && sx_kind_from_name(kind) == SX_KIND_UNKNOWN)
			continue;
		if (!cJSON_AddItemReferenceToArray(docs, it)) {
			cJSON_Delete(docs);
			return sx_error_set(err, SX_ENOMEM, "out of memory");
		}
	}
	rc = sx_state_load_documents(cache, "cluster", docs, err);
	cJSON_Delete(docs);
	return rc;
}
