/* The operators' page and its endpoints (src/cmd/ui.h). The page is
 * src/cmd/ui.html, linked into the binary as it is (.incbin), so the
 * served bytes are the file's bytes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/decode.h"
#include "schedext/explain.h"
#include "schedext/intern.h"
#include "schedext/pending.h"
#include "schedext/whatif.h"
#include "ui.h"

__asm__(".section .rodata\n"
	".global sx_ui_html_start\n"
	"sx_ui_html_start:\n"
	".incbin \"src/cmd/ui.html\"\n"
	".global sx_ui_html_end\n"
	"sx_ui_html_end:\n"
	".previous\n");
extern const char sx_ui_html_start[], sx_ui_html_end[];

#define WHATIF_MAX_ENTRIES 16
#define WHATIF_MAX_COUNT   1000

unsigned sx_ui_page(struct sx_buf *b)
{
	sx_buf_put(b, sx_ui_html_start, (size_t)(sx_ui_html_end - sx_ui_html_start));
	return 200;
}

unsigned sx_ui_explain_pod(const struct sx_extender *ex, const char *key, struct sx_buf *b)
{
	const char *slash = key ? strchr(key, '/') : NULL;
	sx_str node = SX_STR_EMPTY;
	bool assumed = false;
	const struct sx_pod *pod;
	struct sx_snapshot *snap;
	int rc;

	if (!slash || slash == key || !slash[1] || strlen(key) > 512) {
		sx_reply_error(b, "pod: expected NAMESPACE/NAME");
		return 400;
	}
	pod = sx_cache_get_pod(ex->cache, sx_intern_n(key, (size_t)(slash - key)), slash + 1, &node,
			       &assumed);
	if (!pod) {
		sx_reply_error(b, "pod not found in the schedext cache");
		return 404;
	}
	if (node != SX_STR_EMPTY) {
		/* as `kubectl schedext why -o json` answers for a bound pod */
		char pk[512];
		sx_buf_puts(b, "{\"pod\":");
		sx_json_str(b, sx_pod_key(pod, pk, sizeof(pk)));
		sx_buf_puts(b, ",\"boundNode\":");
		sx_json_str(b, sx_str_get(node));
		sx_buf_puts(b, assumed ? ",\"assumed\":true}\n" : "}\n");
		sx_pod_unref(pod);
		return 200;
	}
	snap = sx_cache_snapshot(ex->cache);
	struct sx_explain_opts o = {
		.profile = ex->profile, .snap = snap, .pool = ex->pool, .cache = ex->cache};
	rc = snap ? sx_explain(&o, pod, b) : SX_ENOMEM;
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	if (rc < 0) {
		sx_buf_reset(b);
		sx_reply_error(b, "out of memory");
		return 500;
	}
	return 200;
}

unsigned sx_ui_pending(const struct sx_extender *ex, const char *ns, double budget_s,
		       struct sx_buf *b)
{
	struct sx_pending_opts o = {
		.cfg = ex->cfg, .pool = ex->pool, .ns = ns, .deadline = sx_now_s() + budget_s};
	if (sx_pending_report(ex->cache, &o, b) < 0) {
		sx_buf_reset(b);
		sx_reply_error(b, "out of memory");
		return 500;
	}
	return 200;
}

/* The node named like, renamed <like>-whatif, as JSON text; caller frees. */
static char *node_template(const struct sx_cluster_doc *doc, const char *like)
{
	cJSON *n = sx_cluster_doc_find(doc, "Node", NULL, like), *copy, *meta;
	char name[300], *text = NULL;

	if (!n || !(copy = cJSON_Duplicate(n, true)))
		return NULL;
	meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
	snprintf(name, sizeof(name), "%s-whatif", like);
	if (cJSON_ReplaceItemInObjectCaseSensitive(meta, "name", cJSON_CreateString(name)))
		text = cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return text;
}

/* A count in 1..max, or 0. */
static uint32_t count_of(const cJSON *entry, const char *key, double max)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(entry, key);

	if (!cJSON_IsNumber(c) || c->valuedouble < 1 || c->valuedouble > max ||
	    c->valuedouble != (double)(uint32_t)c->valuedouble)
		return 0;
	return (uint32_t)c->valuedouble;
}

/* addNodes[]: {"like":NODE,"count":N}, N copies of an existing node. */
static int add_like(struct sx_whatif *w, const cJSON *entry, struct sx_error *err)
{
	const cJSON *like = cJSON_GetObjectItemCaseSensitive(entry, "like");
	uint32_t count = count_of(entry, "count", WHATIF_MAX_COUNT);
	char *text;
	int rc;

	if (!cJSON_IsString(like) || !count)
		return sx_error_set(err, SX_EINVAL,
				    "addNodes[]: expected {\"like\":NODE,\"count\":1..%d}",
				    WHATIF_MAX_COUNT);
	text = node_template(w->doc, like->valuestring);
	if (!text)
		return sx_error_set(err, SX_ENOENT, "addNodes[].like: node %.200s not found",
				    like->valuestring);
	rc = sx_whatif_add_node(w, text, strlen(text), count, err);
	free(text);
	return rc;
}

/* "NS/NAME" split into ns and name; false when it is not that. */
static bool split_key(const char *key, char *ns, size_t nslen, char *name, size_t namelen)
{
	const char *slash = key ? strchr(key, '/') : NULL;

	if (!slash || slash == key || !slash[1] || (size_t)(slash - key) >= nslen ||
	    strlen(slash + 1) >= namelen)
		return false;
	snprintf(ns, nslen, "%.*s", (int)(slash - key), key);
	snprintf(name, namelen, "%s", slash + 1);
	return true;
}

/* The pod ns/name of the document as a new pending pod named
 * <name>-whatif: its labels, annotations, owners and spec, without
 * spec.nodeName and status (what kubectl would create from it). JSON
 * text; caller frees; NULL when absent. */
static char *pod_template(const struct sx_cluster_doc *doc, const char *ns, const char *name)
{
	static const char *const keep[] = {"labels", "annotations", "ownerReferences"};
	cJSON *p = sx_cluster_doc_find(doc, "Pod", ns, name), *out, *meta, *spec;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(p, "metadata");
	char copy[300], *text = NULL;

	if (!p || !(out = cJSON_CreateObject()))
		return NULL;
	snprintf(copy, sizeof(copy), "%s-whatif", name);
	meta = cJSON_AddObjectToObject(out, "metadata");
	spec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p, "spec"), true);
	if (meta && spec && cJSON_AddStringToObject(out, "apiVersion", "v1") &&
	    cJSON_AddStringToObject(out, "kind", "Pod") &&
	    cJSON_AddStringToObject(meta, "name", copy) &&
	    cJSON_AddStringToObject(meta, "namespace", ns)) {
		for (unsigned i = 0; i < 3; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, keep[i]);
			if (v)
				cJSON_AddItemToObject(meta, keep[i], cJSON_Duplicate(v, true));
		}
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
		cJSON_AddItemToObject(out, "spec", spec);
		spec = NULL;
		text = cJSON_PrintUnformatted(out);
	}
	cJSON_Delete(spec);
	cJSON_Delete(out);
	return text;
}

/* addPods[]: {"like":"NS/NAME","count":N}, N pending copies of a pod. */
static int add_pods_like(struct sx_whatif *w, const cJSON *entry, struct sx_error *err)
{
	const cJSON *like = cJSON_GetObjectItemCaseSensitive(entry, "like");
	uint32_t count = count_of(entry, "count", WHATIF_MAX_COUNT);
	char ns[256], name[256], *text;
	int rc;

	if (!cJSON_IsString(like) || !count ||
	    !split_key(like->valuestring, ns, sizeof(ns), name, sizeof(name)))
		return sx_error_set(
			err, SX_EINVAL,
			"addPods[]: expected {\"like\":\"NAMESPACE/NAME\",\"count\":1..%d}",
			WHATIF_MAX_COUNT);
	text = pod_template(w->doc, ns, name);
	if (!text)
		return sx_error_set(err, SX_ENOENT, "addPods[].like: pod %.200s not found",
				    like->valuestring);
	rc = sx_whatif_add_pods(w, text, strlen(text), count, err);
	free(text);
	return rc;
}

/* scale[]: {"deployment":"NS/NAME","replicas":N}. */
static int scale(struct sx_whatif *w, const cJSON *entry, struct sx_error *err)
{
	const cJSON *dep = cJSON_GetObjectItemCaseSensitive(entry, "deployment");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(entry, "replicas");
	char ns[256], name[256];

	if (!cJSON_IsString(dep) ||
	    !split_key(dep->valuestring, ns, sizeof(ns), name, sizeof(name)) ||
	    !cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > WHATIF_MAX_COUNT ||
	    r->valuedouble != (double)(uint32_t)r->valuedouble)
		return sx_error_set(
			err, SX_EINVAL,
			"scale[]: expected {\"deployment\":\"NAMESPACE/NAME\",\"replicas\":0..%d}",
			WHATIF_MAX_COUNT);
	return sx_whatif_scale(w, ns, name, (uint32_t)r->valuedouble, err);
}

/* removeNodes[], drain[], cordon[]: a node name. */
static int node_edit(struct sx_whatif *w, const char *key, const cJSON *entry, struct sx_error *err)
{
	if (!cJSON_IsString(entry))
		return sx_error_set(err, SX_EINVAL, "%s[]: expected a node name", key);
	if (strcmp(key, "drain") == 0)
		return sx_whatif_drain(w, entry->valuestring, err);
	if (strcmp(key, "cordon") == 0)
		return sx_whatif_cordon(w, entry->valuestring, err);
	return sx_whatif_remove_node(w, entry->valuestring, err);
}

/* The edits of a body, the CLI's what-if options, applied in the order
 * the body gives them (members in order, entries in order). */
static const char *const edit_keys[] = {"addNodes", "removeNodes", "drain",
					"cordon",   "addPods",	   "scale"};

static int apply_edits(struct sx_whatif *w, const cJSON *req, struct sx_error *err)
{
	const cJSON *m, *it;
	unsigned k, total = 0;
	int rc = 0;

	if (!cJSON_IsObject(req) || !req->child)
		return sx_error_set(err, SX_EINVAL,
				    "nothing to do: give addNodes, removeNodes, drain, cordon, "
				    "addPods or scale");
	for (m = req->child; m; m = m->next) {
		for (k = 0; k < 6 && strcmp(m->string, edit_keys[k]) != 0; k++)
			;
		if (k == 6)
			return sx_error_set(err, SX_EINVAL, "unknown field \"%.100s\"", m->string);
		total += (unsigned)cJSON_GetArraySize(m);
		if (!cJSON_IsArray(m) || total > WHATIF_MAX_ENTRIES)
			return sx_error_set(err, SX_EINVAL,
					    "%s: expected an array; at most %d edits in all",
					    m->string, WHATIF_MAX_ENTRIES);
	}
	for (m = req->child; m && rc == 0; m = m->next)
		for (it = m->child; it && rc == 0; it = it->next)
			rc = strcmp(m->string, "addNodes") == 0	 ? add_like(w, it, err)
			     : strcmp(m->string, "addPods") == 0 ? add_pods_like(w, it, err)
			     : strcmp(m->string, "scale") == 0	 ? scale(w, it, err)
								 : node_edit(w, m->string, it, err);
	return rc;
}

/* The cluster: every --state file merged in order, or a LIST of each kind. */
static int read_doc(const struct sx_extender *ex, const char *const *states, unsigned nstates,
		    struct sx_cluster_doc *doc, char *msg, size_t msglen)
{
	struct sx_error err = {0};
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < nstates; i++)
		rc = sx_cluster_doc_read(doc, states[i], &err);
	if (nstates == 0)
		rc = ex->kube ? sx_cluster_doc_list(doc, ex->kube, &err)
			      : sx_error_set(&err, SX_EINVAL, "what-if needs --state or a cluster");
	if (rc < 0)
		snprintf(msg, msglen, "%s", err.msg);
	return rc;
}

unsigned sx_ui_whatif(const struct sx_extender *ex, const char *const *states, unsigned nstates,
		      const char *body, size_t len, double budget_s, struct sx_buf *b)
{
	char msg[600] = "";
	cJSON *req = sx_request_parse(body, len, msg, sizeof(msg));
	struct sx_cluster_doc doc = {.quiet = true}; /* serve warned at startup */
	struct sx_whatif w = {.doc = &doc};
	struct sx_placements p = {0};
	struct sx_cache *cache = NULL;
	struct sx_error err = {0};
	unsigned code = 400;

	if (req && read_doc(ex, states, nstates, &doc, msg, sizeof(msg)) == 0 &&
	    apply_edits(&w, req, &err) < 0)
		snprintf(msg, sizeof(msg), "%s", err.msg);
	/* Only node edits (addNodes, cordon): the cluster's pending pods. */
	if (!msg[0] && w.npending == 0 && sx_whatif_add_cluster_pending(&w, ex->cfg) < 0)
		snprintf(msg, sizeof(msg), "out of memory");
	if (!msg[0] && (!(cache = sx_cache_new()) || sx_whatif_load(&w, cache, &err) < 0))
		snprintf(msg, sizeof(msg), "%s", cache ? err.msg : "out of memory");
	if (!msg[0] && sx_place_pods(cache, &doc, ex->cfg, ex->profile, ex->pool, w.pending,
				     w.npending, sx_now_s() + budget_s, &p) < 0)
		snprintf(msg, sizeof(msg), "out of memory");
	if (msg[0]) {
		sx_reply_error(b, msg);
	} else {
		sx_placements_write(b, &p, w.summary, false);
		code = 200;
	}
	sx_placements_free(&p);
	sx_whatif_free(&w);
	sx_cache_free(cache);
	sx_cluster_doc_free(&doc);
	cJSON_Delete(req);
	return code;
}

/* obj[key] when it is a string, else "". */
static const char *str_of(const cJSON *obj, const char *key)
{
	const char *s = sx_json_string(obj, key);
	return s ? s : "";
}

/* ,"nodes":[{"name","unschedulable","taints":["k=v:Effect"]}] of the doc. */
static void write_choice_nodes(struct sx_buf *b, const struct sx_cluster_doc *doc)
{
	const cJSON *it;
	bool first = true;

	sx_buf_puts(b, ",\"nodes\":[");
	cJSON_ArrayForEach(it, doc->items)
	{
		const cJSON *spec = cJSON_GetObjectItemCaseSensitive(it, "spec"), *t;
		const char *name = str_of(cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name");
		bool tfirst = true;
		if (strcmp(str_of(it, "kind"), "Node") != 0 || !name[0])
			continue;
		sx_buf_puts(b, first ? "{\"name\":" : ",{\"name\":");
		first = false;
		sx_json_str(b, name);
		sx_buf_puts(b, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "unschedulable"))
				       ? ",\"unschedulable\":true,\"taints\":["
				       : ",\"unschedulable\":false,\"taints\":[");
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(spec, "taints"))
		{
			char taint[700];
			const char *v = str_of(t, "value");
			snprintf(taint, sizeof(taint), "%s%s%s:%s", str_of(t, "key"),
				 v[0] ? "=" : "", v, str_of(t, "effect"));
			if (!tfirst)
				sx_buf_putc(b, ',');
			tfirst = false;
			sx_json_str(b, taint);
		}
		sx_buf_puts(b, "]}");
	}
	sx_buf_putc(b, ']');
}

unsigned sx_ui_whatif_choices(const struct sx_extender *ex, const char *const *states,
			      unsigned nstates, struct sx_buf *b)
{
	struct sx_cluster_doc doc = {.quiet = true};
	char msg[600] = "", key[600];
	const cJSON *it;
	bool first = true;

	if (read_doc(ex, states, nstates, &doc, msg, sizeof(msg)) < 0) {
		sx_cluster_doc_free(&doc);
		sx_reply_error(b, msg);
		return 503;
	}
	sx_buf_puts(b, nstates ? "{\"live\":false" : "{\"live\":true");
	write_choice_nodes(b, &doc);
	sx_buf_puts(b, ",\"pods\":[");
	cJSON_ArrayForEach(it, doc.items)
	{
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const char *node = str_of(cJSON_GetObjectItemCaseSensitive(it, "spec"), "nodeName");
		if (strcmp(str_of(it, "kind"), "Pod") != 0)
			continue;
		snprintf(key, sizeof(key), "%s/%s", str_of(meta, "namespace"),
			 str_of(meta, "name"));
		sx_buf_puts(b, first ? "{\"pod\":" : ",{\"pod\":");
		first = false;
		sx_json_str(b, key);
		sx_buf_puts(b, ",\"node\":");
		if (node[0])
			sx_json_str(b, node);
		else
			sx_buf_puts(b, "null");
		sx_buf_putc(b, '}');
	}
	sx_buf_puts(b, "],\"deployments\":[");
	first = true;
	cJSON_ArrayForEach(it, doc.items)
	{
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(it, "spec"), "replicas");
		if (strcmp(str_of(it, "kind"), "Deployment") != 0)
			continue;
		snprintf(key, sizeof(key), "%s/%s", str_of(meta, "namespace"),
			 str_of(meta, "name"));
		sx_buf_puts(b, first ? "{\"deployment\":" : ",{\"deployment\":");
		first = false;
		sx_json_str(b, key);
		/* spec.replicas defaults to 1 (apps/v1 SetDefaults_Deployment) */
		sx_buf_printf(b, ",\"replicas\":%d}", cJSON_IsNumber(r) ? r->valueint : 1);
	}
	sx_buf_puts(b, "]}\n");
	sx_cluster_doc_free(&doc);
	return 200;
}
