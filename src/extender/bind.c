/* The bind verb (extender/v1 ExtenderBindingArgs/Result; upstream
 * pkg/scheduler/extender.go HTTPExtender.Bind). */
#include <cjson/cJSON.h> /* cJSON_free of the normalised body */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender_int.h"
#include "schedext/binder.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/extender.h"
#include "schedext/intern.h"
#include "schedext/kube.h"

static const char *const bind_keys[] = {"PodName", "PodNamespace", "PodUID", "Node"};

struct bind_args {
	struct sx_ext_key keys[4]; /* bind_keys */
	char *str[4];		   /* their values decoded (free()) */
	const char *name, *ns, *uid, *node;
};

/* Checks the four keys in order (each: once, present, a string, at most
 * 253 characters but the UID). Returns 0 or an HTTP status with the reply
 * written. */
static int parse_bind(struct bind_args *b, struct sx_buf *out, struct sx_verb_log *log)
{
	const char **dst[] = {&b->name, &b->ns, &b->uid, &b->node};
	unsigned i;

	for (i = 0; i < SX_ARRAY_SIZE(bind_keys); i++) {
		const struct sx_ext_key *k = &b->keys[i];

		if (k->count > 1)
			return sx_ext_fail(out, log, 400, "duplicate key %s", bind_keys[i]);
		if (sx_ext_key_absent(k))
			return sx_ext_fail(out, log, 400, "missing %s", bind_keys[i]);
		if (k->v.type != SX_JSON_STRING)
			return sx_ext_fail(out, log, 400, "%s: expected string, got %s",
					   bind_keys[i], sx_json_type_name(k->v.type));
		if (!(b->str[i] = sx_ext_str_dup(&k->v)))
			return sx_ext_fail(out, log, 500, "out of memory");
		if (strlen(b->str[i]) > 253 && i != 2)
			return sx_ext_fail(out, log, 400, "%s: longer than 253 characters",
					   bind_keys[i]);
		*dst[i] = b->str[i];
	}
	if (!b->name[0] || !b->node[0])
		return sx_ext_fail(out, log, 400, "%s: must not be empty",
				   b->name[0] ? "Node" : "PodName");
	if (!b->ns[0])
		b->ns = "default";
	snprintf(log->pod, sizeof(log->pod), "%s/%s", b->ns, b->name);
	log->nnodes = 1;
	return 0;
}

/* Writes {"Error": msg} (msg "" = bound). */
static int bind_reply(struct sx_buf *out, struct sx_verb_log *log, const char *msg,
		      const struct bind_args *b)
{
	struct sx_jw w;

	sx_jw_init(&w, out);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "Error", msg);
	sx_jw_end_object(&w);
	sx_buf_putc(out, '\n');
	if (msg[0])
		snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
	else
		snprintf(log->result, sizeof(log->result), "bound to %.100s", b->node);
	return 200;
}

/* Binds in the cache only (--state). The success reply is written first:
 * when even that cannot be allocated (the server answers 500), the cache
 * must not hold a binding kube-scheduler was told failed. */
static int bind_cached(const struct sx_extender *ex, const struct bind_args *b,
		       const struct sx_pod *pod, sx_str ns, sx_str node, struct sx_buf *out,
		       struct sx_verb_log *log)
{
	const struct sx_binder binder = {.cache = ex->cache};
	char msg[1024];
	int rc = bind_reply(out, log, "", b);

	if (out->failed)
		return rc;
	rc = sx_binder_assume(&binder, pod, node);
	if (rc < 0) {
		snprintf(msg, sizeof(msg),
			 "cannot assume pod %.253s/%.253s on node %.253s (error %d)", b->ns,
			 b->name, b->node, rc);
		sx_buf_reset(out);
		return bind_reply(out, log, msg, b);
	}
	sx_binder_done(&binder, ns, b->name, true);
	return 200;
}

/* Binds through the API server (live cluster) with the pod assumed in the
 * cache meanwhile; returns the bind_reply status. */
static int bind_live(const struct sx_extender *ex, const struct bind_args *b,
		     const struct sx_pod *pod, sx_str ns, sx_str node, struct sx_buf *out,
		     struct sx_verb_log *log)
{
	const struct sx_binder binder = {.cache = ex->cache, .kube = ex->kube};
	struct sx_status *st = sx_binder_bind(&binder, pod, b->ns, b->name, b->uid, node);
	char msg[1024];
	int rc = bind_reply(out, log, sx_status_message(st, msg, sizeof(msg)), b);

	sx_status_free(st);
	return rc;
}

static bool node_known(struct sx_cache *cache, const char *name)
{
	const struct sx_node *n = sx_cache_get_node(cache, name);

	sx_node_unref(n);
	return n != NULL;
}

int sx_extender_bind(const struct sx_extender *ex, const char *body, size_t len, struct sx_buf *out,
		     struct sx_verb_log *log)
{
	struct bind_args b = {0};
	struct sx_ext_envelope env = {bind_keys, b.keys, SX_ARRAY_SIZE(b.keys)};
	struct sx_ext_scanner sc = {
		.member = sx_ext_envelope_member, .reset = sx_ext_envelope_reset, .ctx = &env};
	const struct sx_pod *pod = NULL;
	char msg[1024];
	sx_str ns, node, cur = SX_STR_EMPTY;
	bool assumed = false;
	int rc;

	rc = sx_ext_scan(&sc, body, len, out, log);
	if (rc == 0)
		rc = parse_bind(&b, out, log);
	if (rc)
		goto out;
	ns = sx_intern(b.ns);
	node = sx_intern(b.node);
	if (ns == SX_STR_INVALID || node == SX_STR_INVALID) {
		rc = sx_ext_fail(out, log, 500, "string table full");
		goto out;
	}
	pod = sx_cache_get_pod(ex->cache, ns, b.name, &cur, &assumed);
	if (pod && b.uid[0] && pod->meta.uid && strcmp(pod->meta.uid, b.uid) != 0) {
		snprintf(msg, sizeof(msg),
			 "Precondition failed: UID in precondition: %.100s, UID in object meta: "
			 "%.100s",
			 b.uid, pod->meta.uid);
		rc = bind_reply(out, log, msg, &b);
	} else if (pod && cur == node) {
		rc = bind_reply(out, log, "", &b); /* idempotent repeat */
	} else if (pod && cur != SX_STR_EMPTY) {
		snprintf(msg, sizeof(msg), "pods \"%.253s\" is already assigned to node \"%.253s\"",
			 b.name, sx_str_get(cur));
		rc = bind_reply(out, log, msg, &b);
	} else if (ex->kube) {
		rc = bind_live(ex, &b, pod, ns, node, out, log);
	} else if (!pod) {
		snprintf(msg, sizeof(msg), "pods \"%.253s\" not found", b.name);
		rc = bind_reply(out, log, msg, &b);
	} else if (!node_known(ex->cache, b.node)) {
		snprintf(msg, sizeof(msg), "nodes \"%.253s\" not found", b.node);
		rc = bind_reply(out, log, msg, &b);
	} else {
		rc = bind_cached(ex, &b, pod, ns, node, out, log);
	}
	sx_ext_count_attempt(ex, "bind", strstr(log->result, "error") ? "error" : "bound");
out:
	sx_pod_unref(pod);
	for (unsigned i = 0; i < SX_ARRAY_SIZE(b.str); i++)
		free(b.str[i]);
	cJSON_free(sc.norm);
	return rc;
}
