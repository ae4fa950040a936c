/* The preempt verb (extender/v1 ExtenderPreemptionArgs/Result; upstream
 * pkg/scheduler/extender.go HTTPExtender.ProcessPreemption): kube-scheduler's
 * proposed victims per node, checked and reprieved by the shared engine. */
#include <cjson/cJSON.h> /* cJSON_free of the normalised body */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender_int.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/preemption.h"
#include "schedext/vec.h"

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

/* NumPDBViolations as cJSON reads it (strtod of the number's text) is an
 * integer from 0 to 1e15. */
static bool pdb_violations_ok(const struct sx_json_val *num)
{
	char text[SX_JSON_MAX_NUMBER + 1];
	size_t n = (size_t)(num->end - num->p);
	double d;

	if (num->type != SX_JSON_NUMBER || n >= sizeof(text))
		return false;
	memcpy(text, num->p, n);
	text[n] = '\0';
	d = strtod(text, NULL);
	return sx_double_is_int64(d) && d >= 0 && d <= 1e15;
}

/* The victims named in one entry, as they are resolved. */
struct victims {
	const struct sx_pod **v; /* pods counted on the node, in the order named */
	uint32_t n, cap;
};

static int victims_add(struct victims *vs, const struct sx_pod *p)
{
	if (sx_vec_reserve(vs->v, vs->cap, vs->n + 1, 16) < 0)
		return SX_ENOMEM;
	vs->v[vs->n++] = p; /* duplicates are harmless: the engine walks the node's pods */
	return 0;
}

/* The UID of one meta victim ({"UID": ...}) into *uid (free()). Returns 0
 * or an HTTP status with the reply written. */
static int victim_uid(const struct sx_json_val *pod, const char *name, uint32_t i, char **uid,
		      struct sx_buf *out, struct sx_verb_log *log)
{
	static const char *const names[] = {"UID"};
	struct sx_ext_key key = {0};
	struct sx_json_cur doc, c;
	struct sx_json_val k, v;

	sx_ext_span_enter(pod, &doc, &c);
	while (sx_json_next_member(&c, &k, &v) == 1)
		sx_ext_key_take(&c, names, &key, 1, &k, &v);
	if (key.count > 1)
		return sx_ext_fail(out, log, 400,
				   "victims of node %.200s: Pods[%u]: duplicate key UID", name, i);
	if (sx_ext_key_absent(&key) || key.v.type != SX_JSON_STRING)
		return sx_ext_fail(out, log, 400,
				   "victims of node %.200s: Pods[%u].UID: expected string", name,
				   i);
	*uid = sx_ext_str_dup(&key.v);
	return *uid ? 0 : sx_ext_fail(out, log, 500, "out of memory");
}

/* One victim pod: Pods[i]. Adds it to vs when the node counts it. Returns
 * 0 or an HTTP status with the reply written. */
static int parse_victim(const struct sx_json_val *pod, bool meta, const char *name, uint32_t i,
			const struct sx_node_info *ni, struct victims *vs, struct sx_buf *out,
			struct sx_verb_log *log)
{
	struct sx_error err = {0};
	const struct sx_pod *on = NULL;
	struct sx_pod *full = NULL;
	char *uid = NULL, ebuf[600];
	int rc = 0;

	if (pod->type != SX_JSON_OBJECT)
		return sx_ext_fail(out, log, 400,
				   "victims of node %.200s: Pods[%u]: expected object", name, i);
	if (meta) {
		rc = victim_uid(pod, name, i, &uid, out, log);
		if (rc)
			return rc;
		on = ni ? pod_on_node(ni, uid) : NULL;
		free(uid);
	} else {
		full = sx_ext_pod_from_span(pod, &err);
		if (!full)
			return sx_ext_fail(out, log, sx_ext_decode_status(&err),
					   "victims of node %.200s: Pods[%u].%s", name, i,
					   sx_error_string(&err, ebuf, sizeof(ebuf)));
		on = ni ? pod_on_node(ni, full->meta.uid) : NULL;
		sx_pod_unref(full);
	}
	if (on && victims_add(vs, on) < 0)
		rc = sx_ext_fail(out, log, 500, "out of memory");
	return rc;
}

/* Reads one victims entry ({Pods, NumPDBViolations}, keys in any letter
 * case) of node name into vs. Unknown UIDs are skipped: they hold nothing
 * in our view, so evicting them cannot help the pod fit here. Returns 0 or
 * an HTTP status with the reply written. */
static int parse_victims(const struct sx_json_val *entry, bool meta, const char *name,
			 const struct sx_node_info *ni, struct victims *vs, struct sx_buf *out,
			 struct sx_verb_log *log)
{
	static const char *const names[] = {"Pods", "NumPDBViolations"};
	struct sx_ext_key keys[2] = {0}, *pods = &keys[0], *num = &keys[1];
	struct sx_json_cur doc, c;
	struct sx_json_val k, v;
	uint32_t i = 0;
	int rc;

	vs->n = 0;
	if (entry->type != SX_JSON_OBJECT)
		return sx_ext_fail(out, log, 400, "victims of node %.200s: expected object, got %s",
				   name, sx_json_type_name(entry->type));
	sx_ext_span_enter(entry, &doc, &c);
	while (sx_json_next_member(&c, &k, &v) == 1)
		sx_ext_key_take(&c, names, keys, 2, &k, &v);
	for (i = 0; i < 2; i++)
		if (keys[i].count > 1)
			return sx_ext_fail(out, log, 400,
					   "victims of node %.200s: duplicate key %s", name,
					   names[i]);
	/* range first: converting inf (from "1e999") or beyond to an integer
	 * is undefined behaviour (found by fuzz_extender_preempt) */
	if (!sx_ext_key_absent(num) && !pdb_violations_ok(&num->v))
		return sx_ext_fail(
			out, log, 400,
			"victims of node %.200s: NumPDBViolations: expected a non-negative integer",
			name);
	if (sx_ext_key_absent(pods))
		return 0;
	if (pods->v.type != SX_JSON_ARRAY)
		return sx_ext_fail(out, log, 400,
				   "victims of node %.200s: Pods: expected array, got %s", name,
				   sx_json_type_name(pods->v.type));
	sx_ext_span_enter(&pods->v, &doc, &c);
	for (i = 0; sx_json_next(&c, &v) == 1; i++) {
		if (!(v.end = sx_json_finish(&c)))
			return sx_ext_fail(out, log, 500,
					   "request body unreadable after normalising");
		rc = parse_victim(&v, meta, name, i, ni, vs, out, log);
		if (rc)
			return rc;
	}
	return 0;
}

/* One node of the victims map: its name and its victims' span. */
struct preempt_entry {
	struct sx_json_val key, val;
};

struct preempt_req {
	struct sx_ext_key keys[3]; /* Pod, NodeNameToVictims, NodeNameToMetaVictims */
	char *norm;		   /* the body re-printed, when it had to be normalised */
	struct preempt_entry *entries;
	uint32_t n;
	struct sx_pod *pod;
	bool meta;
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs0;
};

static const char *const preempt_keys[] = {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"};

/* The members of the victims map, in order (a name given twice is two
 * entries, as cJSON keeps it). 0 or SX_ENOMEM. */
static int read_entries(const struct sx_json_val *map, struct preempt_req *r)
{
	struct sx_json_cur doc, c;
	struct sx_json_val k, v;
	uint32_t cap = 0;

	sx_ext_span_enter(map, &doc, &c);
	while (sx_json_next_member(&c, &k, &v) == 1) {
		if (sx_vec_reserve(r->entries, cap, r->n + 1, 64) < 0)
			return SX_ENOMEM;
		v.end = sx_json_finish(&c);
		r->entries[r->n].key = k;
		r->entries[r->n++].val = v;
	}
	return 0;
}

/* "node":{"Pods":[{"UID":...}...],"NumPDBViolations":n}, victims most
 * important first as the engine orders them. */
static void put_meta_victims(struct sx_jw *w, const char *node, const struct sx_victims *v)
{
	sx_jw_kobject(w, node);
	sx_jw_karray(w, "Pods");
	for (uint32_t i = 0; i < v->n; i++) {
		sx_jw_object(w);
		sx_jw_kstr(w, "UID", v->pods[i]->meta.uid);
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	sx_jw_kint(w, "NumPDBViolations", v->num_pdb_violations);
	sx_jw_end_object(w);
}

/* Victims for one node entry: 1 kept, 0 when the node is dropped (unknown,
 * the pod does not fit even without the victims, or none is needed), or
 * negative with *err (owned by the caller) on an Error status (out of
 * memory, a failing AddPod/RemovePod): dropping the node would answer
 * with missing data. */
static int preempt_node(const struct sx_extender *ex, const struct preempt_req *r,
			const struct sx_node_info *ni, const struct sx_pod *const *v, uint32_t nv,
			struct sx_victims *out, struct sx_status **err)
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

/* The envelope, checked in the order kube-scheduler's decoder would fail:
 * the victims maps, then the Pod. Returns 0 or an HTTP status with the
 * reply written. */
static int parse_preempt(const struct sx_extender *ex, const char *body, size_t len,
			 struct preempt_req *r, struct sx_buf *out, struct sx_verb_log *log)
{
	struct sx_ext_envelope env = {preempt_keys, r->keys, SX_ARRAY_SIZE(r->keys)};
	struct sx_ext_scanner sc = {
		.member = sx_ext_envelope_member, .reset = sx_ext_envelope_reset, .ctx = &env};
	const struct sx_ext_key *full = &r->keys[1], *meta = &r->keys[2], *map;
	int rc = sx_ext_scan(&sc, body, len, out, log);

	r->norm = sc.norm;
	if (rc)
		return rc;
	if (full->count > 1 || meta->count > 1)
		return sx_ext_fail(out, log, 400, "duplicate key %s",
				   preempt_keys[full->count > 1 ? 1 : 2]);
	if (!sx_ext_key_absent(full) && !sx_ext_key_absent(meta))
		return sx_ext_fail(
			out, log, 400,
			"only one of NodeNameToVictims and NodeNameToMetaVictims may be set");
	if (sx_ext_key_absent(full) && sx_ext_key_absent(meta))
		return sx_ext_fail(out, log, 400,
				   "missing NodeNameToMetaVictims or NodeNameToVictims");
	r->meta = !sx_ext_key_absent(meta);
	map = r->meta ? meta : full;
	if (map->v.type != SX_JSON_OBJECT)
		return sx_ext_fail(out, log, 400, "%s: expected object, got %s",
				   preempt_keys[r->meta ? 2 : 1], sx_json_type_name(map->v.type));
	r->pod = sx_ext_decode_pod(&r->keys[0], out, log, &rc);
	if (!r->pod)
		return rc;
	if (read_entries(&map->v, r) < 0)
		return sx_ext_fail(out, log, 500, "out of memory");
	log->nnodes = r->n;
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
	free(r->entries);
	cJSON_free(r->norm);
}

/* One entry: its victims checked and, when the node is kept, written.
 * Returns 1 kept, 0 dropped, or an HTTP status with the reply written. */
static int preempt_entry(const struct sx_extender *ex, const struct preempt_req *r,
			 const struct preempt_entry *e, bool pre_ok, struct victims *vs,
			 struct sx_jw *w, struct sx_buf *out, struct sx_verb_log *log)
{
	const struct sx_node_info *ni;
	struct sx_victims vict;
	struct sx_status *st;
	char *name = sx_ext_str_dup(&e->key), sbuf[256];
	sx_str id;
	int rc, at;

	if (!name)
		return sx_ext_fail(out, log, 500, "out of memory");
	id = sx_intern_lookup_n(name, strlen(name));
	at = id == SX_STR_INVALID ? -1 : sx_snapshot_find(r->snap, id);
	ni = at >= 0 ? r->snap->nodes[at] : NULL;
	rc = parse_victims(&e->val, r->meta, name, ni, vs, out, log);
	if (rc)
		goto out;
	rc = pre_ok ? preempt_node(ex, r, ni, vs->v, vs->n, &vict, &st) : 0;
	if (rc < 0) {
		rc = sx_ext_fail(out, log, 500, "node %.200s: %s", name,
				 sx_status_message(st, sbuf, sizeof(sbuf)));
		sx_status_free(st);
	} else if (rc) {
		put_meta_victims(w, name, &vict);
		sx_victims_free(&vict);
	}
out:
	free(name);
	return rc;
}

int sx_extender_preempt(const struct sx_extender *ex, const char *body, size_t len,
			struct sx_buf *out, struct sx_verb_log *log)
{
	struct preempt_req r = {0};
	struct victims vs = {0};
	struct sx_status *st;
	struct sx_jw w;
	bool pre_ok;
	uint32_t i, nnodes = 0;
	char sbuf[256];
	int rc;

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
	sx_jw_init(&w, out);
	sx_jw_object(&w);
	sx_jw_kobject(&w, "NodeNameToMetaVictims");
	for (i = 0; i < r.n; i++) {
		rc = preempt_entry(ex, &r, &r.entries[i], pre_ok, &vs, &w, out, log);
		if (rc > 1)
			goto out;
		nnodes += (uint32_t)rc;
	}
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	sx_buf_putc(out, '\n');
	snprintf(log->result, sizeof(log->result), "%u of %u nodes kept", nnodes, log->nnodes);
	sx_ext_count_attempt(ex, "preempt", nnodes ? "preemption" : "unschedulable");
	rc = 200;
out:
	free(vs.v);
	preempt_req_free(ex, &r);
	return rc;
}
