/* What-if edits of a cluster document and placing pods one after another
 * (include/schedext/whatif.h). Edits work on the JSON objects, before the
 * cache sees them, so a what-if cluster is loaded by the same loader as a
 * real one. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/decode.h"
#include "schedext/whatif.h"

/* ---------- names in use: an open-addressing set of "Kind/ns/name" ---------- */

struct sx_name_set {
	uint32_t cap, used; /* cap: a power of two; used counts tombstones too */
	char **keys;	    /* NULL = empty slot, TOMBSTONE = deleted */
};
static char tombstone;
#define TOMBSTONE (&tombstone)

/* The slot of key, or of the first free slot where it would go. */
static char **name_slot(const struct sx_name_set *set, const char *key)
{
	char **free_slot = NULL;
	for (uint32_t i = sx_hash_str(key) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		char **slot = &set->keys[i];
		if (!*slot)
			return free_slot ? free_slot : slot;
		if (*slot == TOMBSTONE)
			free_slot = free_slot ? free_slot : slot;
		else if (strcmp(*slot, key) == 0)
			return slot;
	}
}

static int name_set_grow(struct sx_name_set *set)
{
	struct sx_name_set big = {set->cap ? set->cap * 2 : 1024, 0, NULL};
	big.keys = calloc(big.cap, sizeof(*big.keys));
	if (!big.keys)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < set->cap; i++) {
		if (set->keys[i] && set->keys[i] != TOMBSTONE) {
			*name_slot(&big, set->keys[i]) = set->keys[i];
			big.used++;
		}
	}
	free(set->keys);
	*set = big;
	return 0;
}

static void key_of(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
	snprintf(buf, len, "%s/%s/%s", kind, ns ? ns : "", name);
}

static bool name_set_has(const struct sx_name_set *set, const char *key)
{
	char **slot = name_slot(set, key);
	return *slot && *slot != TOMBSTONE;
}

static int name_set_add(struct sx_name_set *set, const char *key)
{
	char **slot;
	if ((set->used + 1) * 2 > set->cap && name_set_grow(set) < 0)
		return SX_ENOMEM;
	slot = name_slot(set, key);
	if (*slot && *slot != TOMBSTONE)
		return 0;
	if (!*slot)
		set->used++;
	*slot = strdup(key);
	return *slot ? 0 : SX_ENOMEM;
}

static void name_set_del(struct sx_name_set *set, const char *key)
{
	char **slot = set->cap ? name_slot(set, key) : NULL;
	if (slot && *slot && *slot != TOMBSTONE) {
		free(*slot);
		*slot = TOMBSTONE;
	}
}

static void name_set_free(struct sx_name_set *set)
{
	for (uint32_t i = 0; set && i < set->cap; i++)
		if (set->keys[i] != TOMBSTONE)
			free(set->keys[i]);
	if (set)
		free(set->keys);
	free(set);
}

/* The kind/ns/name key of a document object (cluster kinds: ns ""). */
static void object_key(char *buf, size_t len, const cJSON *obj)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *kind = sx_json_string(obj, "kind"), *ns = sx_json_string(meta, "namespace");
	if (kind && !strcmp(kind, "Pod") && !ns)
		ns = "default";
	key_of(buf, len, kind ? kind : "", kind && !strcmp(kind, "Node") ? "" : ns,
	       sx_json_string(meta, "name") ? sx_json_string(meta, "name") : "");
}

/* The set of names in use, built from the document on first call. */
static struct sx_name_set *names(struct sx_whatif *w)
{
	const cJSON *it;
	char key[800];

	if (w->names)
		return w->names;
	w->names = calloc(1, sizeof(*w->names));
	if (!w->names || name_set_grow(w->names) < 0)
		goto fail;
	cJSON_ArrayForEach(it, w->doc->items)
	{
		object_key(key, sizeof(key), it);
		if (name_set_add(w->names, key) < 0)
			goto fail;
	}
	return w->names;
fail:
	name_set_free(w->names);
	w->names = NULL;
	return NULL;
}

/* 1 when the object's name is taken, 0 after recording it, or SX_ENOMEM. */
static int claim_name(struct sx_whatif *w, const cJSON *obj)
{
	struct sx_name_set *set = names(w);
	char key[800];

	if (!set)
		return SX_ENOMEM;
	object_key(key, sizeof(key), obj);
	if (name_set_has(set, key))
		return 1;
	return name_set_add(set, key);
}

static cJSON *object_of(cJSON *obj, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsObject(v))
		return v;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddObjectToObject(obj, key);
}

/* Replaces obj[key] by a string; false when out of memory. */
static bool set_str(cJSON *obj, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);
	if (!v)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
	return cJSON_AddItemToObject(obj, key, v);
}

static void note(struct sx_whatif *w, const char *fmt, const char *a, unsigned n)
{
	size_t len = strlen(w->summary);
	if (len + 3 >= sizeof(w->summary))
		return;
	if (len)
		len += (size_t)snprintf(w->summary + len, sizeof(w->summary) - len, "; ");
	snprintf(w->summary + len, sizeof(w->summary) - len, fmt, a, n);
}

static int push_pending(struct sx_whatif *w, const char *ns, const char *name)
{
	if (w->npending == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 64;
		char **v = realloc(w->pending, cap * sizeof(*v));
		if (!v)
			return SX_ENOMEM;
		w->pending = v;
		w->cap = cap;
	}
	if (asprintf(&w->pending[w->npending], "%s/%s", ns, name) < 0)
		return SX_ENOMEM;
	w->npending++;
	return 0;
}

/* The single object of kind `kind` in text (JSON or YAML); caller frees. */
int sx_input_check(const cJSON *obj, const char *kind, struct sx_error *err)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *name = sx_json_string(meta, "name"), *ns = sx_json_string(meta, "namespace");
	enum sx_kind k = sx_kind_from_name(kind);
	char what[400], detail[sizeof(err->path) + sizeof(err->msg) + 2];
	struct sx_object o;
	int rc;

	rc = sx_decode_check_fields(obj, k, SX_FIELDS_STRICT, NULL, NULL, err);
	if (rc == 0) {
		rc = sx_decode_object(obj, kind, &o, err);
		if (rc == 0)
			sx_object_unref(&o);
	}
	if (rc >= 0)
		return 0;
	snprintf(what, sizeof(what), "%s%s%.128s%s%.200s", k == SX_KIND_NODE ? "node" : "pod",
		 ns || name ? " " : "", k == SX_KIND_POD && ns ? ns : "",
		 k == SX_KIND_POD && ns ? "/" : "", name ? name : "");
	sx_error_string(err, detail, sizeof(detail));
	return sx_error_set(err, rc, "%s: %s", what, detail);
}

static cJSON *parse_one(const char *text, size_t len, const char *kind, struct sx_error *err)
{
	cJSON *docs = sx_parse_documents(text, len, err), *obj;
	const char *k;

	if (!docs)
		return NULL;
	obj = cJSON_GetArraySize(docs) == 1 ? cJSON_DetachItemFromArray(docs, 0) : NULL;
	cJSON_Delete(docs);
	k = sx_json_string(obj, "kind");
	if (!cJSON_IsObject(obj) || !k || strcmp(k, kind) != 0) {
		cJSON_Delete(obj);
		sx_error_set(err, SX_EINVAL, "expected exactly one object of kind %s", kind);
		return NULL;
	}
	if (!sx_json_string(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name")) {
		cJSON_Delete(obj);
		sx_error_set(err, SX_EINVAL, "%s: metadata.name: required", kind);
		return NULL;
	}
	if (sx_input_check(obj, kind, err) < 0) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

/* A copy of template named name (suffix 0) or name-<suffix>. */
static cJSON *named_copy(const cJSON *tmpl, const char *name, uint32_t suffix)
{
	cJSON *c = cJSON_Duplicate(tmpl, true), *meta;
	char buf[300];

	if (!c)
		return NULL;
	meta = object_of(c, "metadata");
	if (suffix == 0)
		snprintf(buf, sizeof(buf), "%s", name);
	else
		snprintf(buf, sizeof(buf), "%s-%u", name, suffix);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	if (!meta || !set_str(meta, "name", buf)) {
		cJSON_Delete(c);
		return NULL;
	}
	char uid[340];
	snprintf(uid, sizeof(uid), "whatif-%s", buf);
	if (!set_str(meta, "uid", uid)) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

static int check_copies(uint32_t copies, struct sx_error *err)
{
	if (copies == 0 || copies > SX_WHATIF_MAX_COPIES)
		return sx_error_set(err, SX_EINVAL, "copies must be between 1 and %u, not %u",
				    SX_WHATIF_MAX_COPIES, copies);
	return 0;
}

int sx_whatif_add_node(struct sx_whatif *w, const char *text, size_t len, uint32_t copies,
		       struct sx_error *err)
{
	cJSON *node;
	const char *name;
	int rc = check_copies(copies, err);

	if (rc < 0 || !(node = parse_one(text, len, "Node", err)))
		return rc < 0 ? rc : SX_EINVAL;
	name = sx_json_string(cJSON_GetObjectItemCaseSensitive(node, "metadata"), "name");
	for (uint32_t i = 0; rc == 0 && i < copies; i++) {
		cJSON *c = named_copy(node, name, i ? i + 1 : 0);
		const char *cname =
			c ? sx_json_string(cJSON_GetObjectItemCaseSensitive(c, "metadata"), "name")
			  : NULL;
		int taken = c ? claim_name(w, c) : SX_ENOMEM;
		if (taken < 0)
			rc = sx_error_set(err, SX_ENOMEM, "out of memory");
		else if (taken)
			rc = sx_error_set(err, SX_EEXIST, "node %s already exists", cname);
		if (rc == 0)
			cJSON_AddItemToArray(w->doc->items, c);
		else
			cJSON_Delete(c);
	}
	if (rc == 0)
		note(w, "added %2$u node(s) like %1$s", name, copies);
	cJSON_Delete(node);
	return rc;
}

static cJSON *find_node(struct sx_whatif *w, const char *name, struct sx_error *err)
{
	cJSON *n = sx_cluster_doc_find(w->doc, "Node", NULL, name);
	if (!n)
		sx_error_set(err, SX_ENOENT, "node %s not found", name);
	return n;
}

/* DaemonSet pods and mirror (static) pods belong to their node. */
static bool pod_stays_with_node(const cJSON *pod)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	const cJSON *ref;

	if (cJSON_GetObjectItemCaseSensitive(ann, "kubernetes.io/config.mirror"))
		return true;
	cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences"))
	{
		const cJSON *ctl = cJSON_GetObjectItemCaseSensitive(ref, "controller");
		const char *kind = sx_json_string(ref, "kind");
		if (cJSON_IsTrue(ctl) && kind && strcmp(kind, "DaemonSet") == 0)
			return true;
	}
	return false;
}

/* Turns a bound pod into a pending one (as its controller would recreate
 * it) and queues it for placement. */
/* pod without spec.nodeName, status.phase Pending: 0 or SX_ENOMEM. */
static int unbind(cJSON *pod)
{
	cJSON *spec = object_of(pod, "spec"), *status;

	if (!spec)
		return SX_ENOMEM;
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
	cJSON_DeleteItemFromObjectCaseSensitive(pod, "status");
	status = cJSON_AddObjectToObject(pod, "status");
	if (!status || !cJSON_AddStringToObject(status, "phase", "Pending"))
		return SX_ENOMEM;
	return 0;
}

static int make_pending(struct sx_whatif *w, cJSON *pod)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const char *ns = sx_json_string(meta, "namespace");

	if (unbind(pod) < 0)
		return SX_ENOMEM;
	return push_pending(w, ns ? ns : "default", sx_json_string(meta, "name"));
}

/* Pods bound to node: re-placed, or (remove) deleted with it. */
static int evict_pods(struct sx_whatif *w, const char *node, bool removing, unsigned *moved)
{
	cJSON *it = w->doc->items->child;
	int rc = 0;

	*moved = 0;
	while (it && rc == 0) {
		cJSON *next = it->next;
		const char *kind = sx_json_string(it, "kind");
		const char *on =
			sx_json_string(cJSON_GetObjectItemCaseSensitive(it, "spec"), "nodeName");
		const char *phase =
			sx_json_string(cJSON_GetObjectItemCaseSensitive(it, "status"), "phase");
		bool terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));

		if (kind && !strcmp(kind, "Pod") && on && !strcmp(on, node) && !terminal) {
			if (!pod_stays_with_node(it)) {
				rc = make_pending(w, it);
				(*moved)++;
			} else if (removing) {
				cJSON_Delete(cJSON_DetachItemViaPointer(w->doc->items, it));
			}
		}
		it = next;
	}
	return rc;
}

static bool cordon(cJSON *node)
{
	cJSON *spec = object_of(node, "spec");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "unschedulable");
	return spec && cJSON_AddTrueToObject(spec, "unschedulable");
}

int sx_whatif_remove_node(struct sx_whatif *w, const char *name, struct sx_error *err)
{
	cJSON *node = find_node(w, name, err);
	unsigned moved;

	if (!node)
		return SX_ENOENT;
	if (w->names) {
		char key[800];
		object_key(key, sizeof(key), node);
		name_set_del(w->names, key);
	}
	cJSON_Delete(cJSON_DetachItemViaPointer(w->doc->items, node));
	if (evict_pods(w, name, true, &moved) < 0)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	note(w, "removed node %s (%u pod(s) to re-place)", name, moved);
	return 0;
}

int sx_whatif_drain(struct sx_whatif *w, const char *name, struct sx_error *err)
{
	cJSON *node = find_node(w, name, err);
	unsigned moved;

	if (!node)
		return SX_ENOENT;
	if (!cordon(node) || evict_pods(w, name, false, &moved) < 0)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	note(w, "drained node %s (%u pod(s) to re-place)", name, moved);
	return 0;
}

int sx_whatif_cordon(struct sx_whatif *w, const char *name, struct sx_error *err)
{
	cJSON *node = find_node(w, name, err);

	if (!node)
		return SX_ENOENT;
	if (!cordon(node))
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	note(w, "cordoned node %s%.0u", name, 0);
	return 0;
}

/* A template and the copies made of it (struct sx_whatif.gens). */
struct sx_whatif_gen {
	cJSON *tmpl; /* the pod, pending, its metadata.name rewritten per copy */
	char *base;  /* copies are <base>-<i>, the first <base> when bare_first */
	uint32_t first, copies;
	bool bare_first;
};

/* The name of copy i of g (named_copy's rule). */
static void gen_name(const struct sx_whatif_gen *g, uint32_t i, char *buf, size_t len)
{
	if (g->bare_first && i == g->first)
		snprintf(buf, len, "%s", g->base);
	else
		snprintf(buf, len, "%s-%u", g->base, i);
}

/* Adds pending copies of pod named <name>-<first> .. <name>-<first+copies-1>,
 * the first one plain <name> when bare_first; ns defaults to "default".
 * The names are claimed and queued now; the pods themselves are made by
 * sx_whatif_load from one template. */
static int add_pod_copies(struct sx_whatif *w, const cJSON *pod, const char *name, uint32_t first,
			  uint32_t copies, bool bare_first, struct sx_error *err)
{
	const char *ns =
		sx_json_string(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "namespace");
	struct sx_whatif_gen g = {
		.base = strdup(name), .first = first, .copies = copies, .bare_first = bare_first};
	struct sx_whatif_gen *v = realloc(w->gens, (w->ngens + 1) * sizeof(*v));
	struct sx_name_set *set = names(w);
	char cname[300], key[800];
	int rc = 0;

	if (v)
		w->gens = v;
	/* named_copy gives the template its uid and a fresh metadata; the
	 * pod is then made pending as a drained pod is */
	g.tmpl = v && g.base && set ? named_copy(pod, name, 0) : NULL;
	if (!g.tmpl || !set_str(cJSON_GetObjectItemCaseSensitive(g.tmpl, "metadata"), "namespace",
				ns ? ns : "default")) {
		cJSON_Delete(g.tmpl);
		free(g.base);
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	ns = ns ? ns : "default";
	for (uint32_t i = first; rc == 0 && i < first + copies; i++) {
		gen_name(&g, i, cname, sizeof(cname));
		key_of(key, sizeof(key), "Pod", ns, cname);
		if (name_set_has(set, key))
			rc = sx_error_set(err, SX_EEXIST, "pod %s/%s already exists", ns, cname);
		else if (name_set_add(set, key) < 0 || push_pending(w, ns, cname) < 0)
			rc = sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	if (rc == 0 && unbind(g.tmpl) < 0)
		rc = sx_error_set(err, SX_ENOMEM, "out of memory");
	if (rc < 0) {
		cJSON_Delete(g.tmpl);
		free(g.base);
		return rc;
	}
	w->gens[w->ngens++] = g;
	return 0;
}

int sx_whatif_load(struct sx_whatif *w, struct sx_cache *cache, struct sx_error *err)
{
	char cname[300], uid[340], detail[sizeof(err->path) + sizeof(err->msg) + 2];
	int rc = sx_cluster_doc_load(w->doc, cache, err);

	for (uint32_t k = 0; rc == 0 && k < w->ngens; k++) {
		const struct sx_whatif_gen *g = &w->gens[k];
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(g->tmpl, "metadata");
		const char *ns = sx_json_string(meta, "namespace");

		for (uint32_t i = g->first; rc == 0 && i < g->first + g->copies; i++) {
			struct sx_pod *pod;

			gen_name(g, i, cname, sizeof(cname));
			snprintf(uid, sizeof(uid), "whatif-%s", cname);
			if (!set_str(meta, "name", cname) || !set_str(meta, "uid", uid))
				return sx_error_set(err, SX_ENOMEM, "out of memory");
			if (!(pod = sx_decode_pod(g->tmpl, err))) {
				sx_error_string(err, detail, sizeof(detail));
				return sx_error_set(err, err->code < 0 ? err->code : SX_EINVAL,
						    "pod %s/%s: %s", ns, cname, detail);
			}
			rc = sx_cache_upsert(cache, &(struct sx_object){SX_KIND_POD, pod});
			if (rc < 0)
				sx_error_set(err, rc, "pod %s/%s: cannot load into the cache", ns,
					     cname);
		}
	}
	return rc;
}

int sx_whatif_add_pods(struct sx_whatif *w, const char *text, size_t len, uint32_t copies,
		       struct sx_error *err)
{
	cJSON *pod;
	int rc = check_copies(copies, err);
	char name[256];

	if (rc < 0 || !(pod = parse_one(text, len, "Pod", err)))
		return rc < 0 ? rc : SX_EINVAL;
	snprintf(name, sizeof(name), "%s",
		 sx_json_string(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "name"));
	rc = add_pod_copies(w, pod, name, 1, copies, true, err);
	if (rc == 0)
		note(w, "added %2$u pod(s) like %1$s", name, copies);
	cJSON_Delete(pod);
	return rc;
}

/* A Pod built from a Deployment's spec.template. */
static cJSON *pod_from_template(const cJSON *dep, const char *ns, struct sx_error *err)
{
	const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(dep, "spec"), "template");
	const cJSON *tspec = cJSON_GetObjectItemCaseSensitive(tmpl, "spec");
	const cJSON *tmeta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
	cJSON *pod = cJSON_CreateObject(), *meta;

	if (!cJSON_IsObject(tspec)) {
		cJSON_Delete(pod);
		sx_error_set(err, SX_EINVAL, "deployment %s: spec.template.spec: required", ns);
		return NULL;
	}
	meta = cJSON_IsObject(tmeta) ? cJSON_Duplicate(tmeta, true) : cJSON_CreateObject();
	if (!pod || !meta || !cJSON_AddStringToObject(pod, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(pod, "kind", "Pod") ||
	    !cJSON_AddItemToObject(pod, "metadata", meta) || !set_str(meta, "namespace", ns) ||
	    !set_str(meta, "name", "x") ||
	    !cJSON_AddItemToObject(pod, "spec", cJSON_Duplicate(tspec, true))) {
		if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(pod, "metadata")))
			cJSON_Delete(meta);
		cJSON_Delete(pod);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return pod;
}

int sx_whatif_scale(struct sx_whatif *w, const char *ns, const char *deployment, uint32_t replicas,
		    struct sx_error *err)
{
	cJSON *dep = sx_cluster_doc_find(w->doc, "Deployment", ns, deployment), *pod;
	const cJSON *cur;
	char name[300], what[600];
	uint32_t have = 1;
	int rc;

	if (!dep)
		return sx_error_set(err, SX_ENOENT, "deployment %s/%s not found", ns, deployment);
	if (replicas > SX_WHATIF_MAX_COPIES)
		return check_copies(replicas, err);
	cur = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(dep, "spec"),
					       "replicas");
	if (cJSON_IsNumber(cur))
		have = cur->valuedouble < 0 ? 0 : (uint32_t)cur->valuedouble;
	snprintf(what, sizeof(what), "%s/%s", ns, deployment);
	if (replicas <= have) {
		note(w, "scaled %s to %u replicas (nothing new to place)", what, replicas);
		return 0;
	}
	if (!(pod = pod_from_template(dep, ns, err)))
		return err->code;
	snprintf(name, sizeof(name), "%s-whatif", deployment);
	rc = add_pod_copies(w, pod, name, have + 1, replicas - have, false, err);
	cJSON_Delete(pod);
	if (rc == 0)
		note(w, "scaled %s to %u replicas", what, replicas);
	return rc;
}

int sx_whatif_add_cluster_pending(struct sx_whatif *w, const struct sx_config *cfg)
{
	const cJSON *it;
	int rc = 0;

	cJSON_ArrayForEach(it, w->doc->items)
	{
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *spec = cJSON_GetObjectItemCaseSensitive(it, "spec");
		const char *kind = sx_json_string(it, "kind"), *name = sx_json_string(meta, "name");
		const char *ns = sx_json_string(meta, "namespace"),
			   *sched = sx_json_string(spec, "schedulerName");
		const char *phase =
			sx_json_string(cJSON_GetObjectItemCaseSensitive(it, "status"), "phase");

		if (!kind || strcmp(kind, "Pod") != 0 || !name ||
		    sx_json_string(spec, "nodeName") ||
		    cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp"))
			continue;
		if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
			continue;
		if (!sx_config_profile(cfg, sched ? sched : "default-scheduler"))
			continue;
		rc = push_pending(w, ns ? ns : "default", name);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void sx_whatif_free(struct sx_whatif *w)
{
	for (uint32_t i = 0; i < w->ngens; i++) {
		cJSON_Delete(w->gens[i].tmpl);
		free(w->gens[i].base);
	}
	free(w->gens);
	w->gens = NULL;
	w->ngens = 0;
	name_set_free(w->names);
	w->names = NULL;
	for (uint32_t i = 0; i < w->npending; i++)
		free(w->pending[i]);
	free(w->pending);
	w->pending = NULL;
	w->npending = w->cap = 0;
}
