/* The preempt verb (reference extender-protocol.md §6): kube-scheduler's
 * proposed victims per node, checked and reprieved by the shared engine. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender_int.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/preemption.h"

/* The victims kube-scheduler proposes are checked by the shared engine
 * (preemption.h, SelectVictimsOnNode with the given pods): the pod must fit
 * without them, and those not needed are reprieved as DefaultPreemption
 * does. */

/* The pod with this uid counted on the node, or NULL. */
static const struct sx_pod *pod_on_node(const struct sx_node_info *ni, const char *uid)
{
	uint32_t i;

	for (i = 0; uid && uid[0] && i < ni->npods; i++)
		if (ni->pods[i]->meta.uid && strcmp(ni->pods[i]->meta.uid, uid) == 0)
			return ni->pods[i];
	return NULL;
}

/* Reads one victims entry ({Pods, NumPDBViolations}) into v. Unknown UIDs
 * are skipped: they hold nothing in our view, so evicting them cannot help
 * the pod fit here. Returns 0 or an HTTP status with the reply written. */
static int parse_victims(const cJSON *entry, bool meta, const struct sx_node_info *ni,
			 const struct sx_pod **v, uint32_t *nv, struct sx_buf *out,
			 struct sx_verb_log *log)
{
	const cJSON *pods, *it, *uid, *num;
	struct sx_error err = { 0 };
	char msg[256], ebuf[600];
	const char *name = entry->string;
	uint32_t i = 0;

	if (!cJSON_IsObject(entry))
		return sx_ext_fail(out, log, 400, "victims of node %.200s: expected object, got %s", name,
			    sx_ext_type_name(entry));
	if (!sx_ext_env_get(entry, "Pods", &pods, msg, sizeof(msg)) ||
	    !sx_ext_env_get(entry, "NumPDBViolations", &num, msg, sizeof(msg)))
		return sx_ext_fail(out, log, 400, "victims of node %.200s: %s", name, msg);
	/* range first: converting inf (from "1e999") or beyond to an integer
	 * is undefined behaviour (found by fuzz_extender_preempt) */
	if (num && (!cJSON_IsNumber(num) || !sx_double_is_int64(num->valuedouble) ||
		    num->valuedouble < 0 || num->valuedouble > 1e15))
		return sx_ext_fail(out, log, 400, "victims of node %.200s: NumPDBViolations: expected a non-negative integer", name);
	if (pods && !cJSON_IsArray(pods))
		return sx_ext_fail(out, log, 400, "victims of node %.200s: Pods: expected array, got %s", name,
			    sx_ext_type_name(pods));
	*nv = 0;
	cJSON_ArrayForEach(it, pods) {
		struct sx_pod *full = NULL;
		const char *u = NULL;

		if (!cJSON_IsObject(it))
			return sx_ext_fail(out, log, 400, "victims of node %.200s: Pods[%u]: expected object", name, i);
		if (meta) {
			if (!sx_ext_env_get(it, "UID", &uid, msg, sizeof(msg)))
				return sx_ext_fail(out, log, 400, "victims of node %.200s: Pods[%u]: %s", name, i, msg);
			if (!cJSON_IsString(uid))
				return sx_ext_fail(out, log, 400, "victims of node %.200s: Pods[%u].UID: expected string", name, i);
			u = uid->valuestring;
		} else {
			full = sx_decode_pod(it, &err);
			if (!full)
				return sx_ext_fail(out, log, sx_ext_decode_status(&err),
						   "victims of node %.200s: Pods[%u].%s", name, i,
					    sx_error_string(&err, ebuf, sizeof(ebuf)));
			u = full->meta.uid;
		}
		if (ni && (v[*nv] = pod_on_node(ni, u)) != NULL)
			(*nv)++; /* duplicates are harmless: the engine walks the node's pods */
		sx_pod_unref(full);
		i++;
	}
	return 0;
}

struct preempt_req {
	cJSON *root;
	struct sx_pod *pod;
	const cJSON *map;
	bool meta;
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs0;
};

/* "node":{"Pods":[{"UID":...}...],"NumPDBViolations":n}, victims most
 * important first as the engine orders them. */
static void put_meta_victims(struct sx_buf *out, const char *node, const struct sx_victims *v,
			     bool *first)
{
	uint32_t i;

	if (!*first)
		sx_buf_putc(out, ',');
	*first = false;
	sx_json_str(out, node);
	sx_buf_puts(out, ":{\"Pods\":[");
	for (i = 0; i < v->n; i++) {
		if (i)
			sx_buf_putc(out, ',');
		sx_buf_puts(out, "{\"UID\":");
		sx_json_str(out, v->pods[i]->meta.uid ? v->pods[i]->meta.uid : "");
		sx_buf_putc(out, '}');
	}
	sx_buf_puts(out, "],\"NumPDBViolations\":");
	sx_buf_int(out, v->num_pdb_violations);
	sx_buf_putc(out, '}');
}

/* Victims for one node entry: 1 kept, 0 when the node is dropped (unknown,
 * the pod does not fit even without the victims, or none is needed), or
 * negative with *err (owned by the caller) on an Error status (out of
 * memory, a failing AddPod/RemovePod): dropping the node would answer
 * with missing data. */
static int preempt_node(const struct sx_extender *ex, const struct preempt_req *r,
			const struct sx_node_info *ni, const struct sx_pod *const *v,
			uint32_t nv, struct sx_victims *out, struct sx_status **err)
{
	struct sx_status *st;

	memset(out, 0, sizeof(*out));
	if (!ni || nv == 0)
		return 0;
	st = sx_preempt_select_victims_on_node(ex->profile, r->cs0, r->pod, ni, r->snap, v, nv,
					       NULL, out);
	if (sx_status_code(st) == SX_ERROR) {
		*err = st;
		return SX_EIO;
	}
	if (st) {
		sx_status_free(st);
		return 0;
	}
	if (out->n == 0) {
		sx_victims_free(out); /* kube-scheduler rejects a node without victims */
		return 0;
	}
	return 1;
}

static int parse_preempt(const struct sx_extender *ex, const char *body, size_t len,
			 struct preempt_req *r, struct sx_buf *out, struct sx_verb_log *log)
{
	const cJSON *full, *meta;
	char msg[256];
	int rc = 0;

	r->root = sx_request_parse(body, len, msg, sizeof(msg));
	if (!r->root)
		return sx_ext_fail(out, log, sx_ext_parse_status(msg), "%s", msg);
	if (!cJSON_IsObject(r->root))
		return sx_ext_fail(out, log, 400, "request body must be a JSON object, got %s",
			    sx_ext_type_name(r->root));
	if (!sx_ext_env_get(r->root, "NodeNameToVictims", &full, msg, sizeof(msg)) ||
	    !sx_ext_env_get(r->root, "NodeNameToMetaVictims", &meta, msg, sizeof(msg)))
		return sx_ext_fail(out, log, 400, "%s", msg);
	if (full && meta)
		return sx_ext_fail(out, log, 400, "only one of NodeNameToVictims and NodeNameToMetaVictims may be set");
	if (!full && !meta)
		return sx_ext_fail(out, log, 400, "missing NodeNameToMetaVictims or NodeNameToVictims");
	r->map = meta ? meta : full;
	r->meta = meta != NULL;
	if (!cJSON_IsObject(r->map))
		return sx_ext_fail(out, log, 400, "%s: expected object, got %s",
			    meta ? "NodeNameToMetaVictims" : "NodeNameToVictims", sx_ext_type_name(r->map));
	r->pod = sx_ext_decode_pod_key(r->root, out, log, &rc);
	if (!r->pod)
		return rc;
	log->nnodes = (uint32_t)cJSON_GetArraySize(r->map);
	r->snap = sx_cache_snapshot(ex->cache);
	r->cs0 = r->snap ? sx_cycle_state_new(r->snap) : NULL;
	if (!r->cs0)
		return sx_ext_fail(out, log, 500, "out of memory");
	return 0;
}

static void preempt_req_free(const struct sx_extender *ex, struct preempt_req *r)
{
	if (r->cs0)
		sx_cycle_state_free(ex->profile, r->cs0);
	sx_snapshot_unref(r->snap);
	sx_pod_unref(r->pod);
	cJSON_Delete(r->root);
}

int sx_extender_preempt(const struct sx_extender *ex, const char *body, size_t len,
			struct sx_buf *out, struct sx_verb_log *log)
{
	struct preempt_req r = { 0 };
	const struct sx_pod **v = NULL;
	struct sx_victims vict;
	struct sx_status *st;
	const cJSON *entry;
	bool first = true, pre_ok;
	uint32_t nv = 0, nnodes = 0;
	char sbuf[256];
	int rc, at, kept;

	rc = parse_preempt(ex, body, len, &r, out, log);
	if (rc)
		goto out;
	st = sx_run_pre_filter(ex->profile, r.cs0, r.pod);
	pre_ok = sx_status_is_success(st) || sx_status_code(st) == SX_SKIP;
	if (sx_status_code(st) == SX_ERROR) {
		rc = sx_ext_fail(out, log, 500, "PreFilter: %s",
				 sx_status_message(st, sbuf, sizeof(sbuf)));
		sx_status_free(st);
		goto out;
	}
	sx_status_free(st);
	sx_buf_puts(out, "{\"NodeNameToMetaVictims\":{");
	cJSON_ArrayForEach(entry, r.map) {
		const struct sx_node_info *ni = NULL;
		sx_str id = sx_intern_lookup_n(entry->string, strlen(entry->string));
		uint32_t cap = (uint32_t)cJSON_GetArraySize(cJSON_GetObjectItem(entry, "Pods"));

		at = id == SX_STR_INVALID ? -1 : sx_snapshot_find(r.snap, id);
		ni = at >= 0 ? r.snap->nodes[at] : NULL;
		free(v);
		v = sx_calloc(cap + 1, sizeof(*v));
		if (!v) {
			rc = sx_ext_fail(out, log, 500, "out of memory");
			goto out;
		}
		rc = parse_victims(entry, r.meta, ni, v, &nv, out, log);
		if (rc)
			goto out;
		kept = pre_ok ? preempt_node(ex, &r, ni, v, nv, &vict, &st) : 0;
		if (kept < 0) {
			rc = sx_ext_fail(out, log, 500, "node %.200s: %s", entry->string,
					 sx_status_message(st, sbuf, sizeof(sbuf)));
			sx_status_free(st);
			goto out;
		}
		if (!kept)
			continue;
		put_meta_victims(out, entry->string, &vict, &first);
		sx_victims_free(&vict);
		nnodes++;
	}
	sx_buf_puts(out, "}}\n");
	snprintf(log->result, sizeof(log->result), "%u of %u nodes kept", nnodes, log->nnodes);
	sx_ext_count_attempt(ex, "preempt", nnodes ? "preemption" : "unschedulable");
	rc = 200;
out:
	free(v);
	preempt_req_free(ex, &r);
	return rc;
}

