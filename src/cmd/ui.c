/* The operators' page and its endpoints (src/cmd/ui.h). The page is
 * src/cmd/ui.html, linked into the binary as it is (.incbin), so the
 * served bytes are the file's bytes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int add_like(struct sx_whatif *w, const cJSON *entry, char *msg, size_t msglen)
{
	const cJSON *like = cJSON_GetObjectItemCaseSensitive(entry, "like");
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(entry, "count");
	struct sx_error err = {0};
	char *text;
	int rc;

	if (!cJSON_IsString(like) || !cJSON_IsNumber(count) || count->valuedouble < 1 ||
	    count->valuedouble > WHATIF_MAX_COUNT) {
		snprintf(msg, msglen, "addNodes[]: expected {\"like\":NODE,\"count\":1..%d}",
			 WHATIF_MAX_COUNT);
		return SX_EINVAL;
	}
	text = node_template(w->doc, like->valuestring);
	if (!text) {
		snprintf(msg, msglen, "addNodes[].like: node %.200s not found", like->valuestring);
		return SX_ENOENT;
	}
	rc = sx_whatif_add_node(w, text, strlen(text), (uint32_t)count->valuedouble, &err);
	free(text);
	if (rc < 0)
		snprintf(msg, msglen, "%s", err.msg);
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
	const cJSON *adds = cJSON_GetObjectItemCaseSensitive(req, "addNodes"), *it;
	struct sx_cluster_doc doc = {.quiet = true}; /* serve warned at startup */
	struct sx_whatif w = {.doc = &doc};
	struct sx_placements p = {0};
	struct sx_cache *cache = NULL;
	struct sx_error err = {0};
	unsigned code = 400;

	if (req && (!cJSON_IsArray(adds) || cJSON_GetArraySize(adds) > WHATIF_MAX_ENTRIES))
		snprintf(msg, sizeof(msg), "addNodes: expected an array of at most %d entries",
			 WHATIF_MAX_ENTRIES);
	else if (req && read_doc(ex, states, nstates, &doc, msg, sizeof(msg)) == 0)
		msg[0] = '\0';
	for (it = msg[0] ? NULL : adds->child; it; it = it->next)
		if (add_like(&w, it, msg, sizeof(msg)) < 0)
			break;
	if (!msg[0] && sx_whatif_add_cluster_pending(&w, ex->cfg) < 0)
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
