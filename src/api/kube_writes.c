/* The writes the scheduler makes for a pod and its volumes (kube.h): the
 * Binding, the PodScheduled condition and nominatedNodeName, the victim's
 * DisruptionTarget and deletion (upstream pkg/scheduler/util
 * DeletePod/PatchPodStatus, framework/plugins/defaultbinder), and the
 * VolumeBinding PreBind writes (the PV's claimRef and the claim's
 * selected-node annotation, upstream pkg/scheduler/framework/plugins/
 * volumebinding binder.go bindAPIUpdate). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/buf.h"
#include "schedext/kube.h"

/* A JSON write whose HTTP status the caller does not need. */
static int write_json(struct sx_kube *kube, const char *method, const char *path, const char *ctype,
		      struct sx_buf *b, char **out, struct sx_error *err)
{
	long status;

	return sx_kube_write_json(kube, method, path, ctype, b, out, &status, err);
}

/* obj[key] as a string into dst ("" when absent or not a string). */
static void copy_str(char *dst, size_t len, const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	snprintf(dst, len, "%s", cJSON_IsString(v) && v->valuestring ? v->valuestring : "");
}

int sx_kube_bind(struct sx_kube *kube, const char *ns, const char *name, const char *uid,
		 const char *node, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/api/v1", ns, "pods", name, "binding");
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "v1");
	sx_jw_kstr(&w, "kind", "Binding");
	sx_jw_kobject(&w, "metadata");
	sx_jw_kstr(&w, "name", name);
	sx_jw_kstr(&w, "namespace", ns);
	if (uid && *uid)
		sx_jw_kstr(&w, "uid", uid);
	sx_jw_end_object(&w);
	sx_jw_kobject(&w, "target");
	sx_jw_kstr(&w, "apiVersion", "v1");
	sx_jw_kstr(&w, "kind", "Node");
	sx_jw_kstr(&w, "name", node);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	rc = write_json(kube, "POST", path, "application/json", &b, NULL, err);
	sx_buf_free(&b);
	free(path);
	return rc;
}

static void time_str(char *out, size_t len, bool micro)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	if (micro)
		snprintf(out, len, "%.24s.%06dZ", base, (int)(ts.tv_nsec / 1000) % 1000000);
	else
		snprintf(out, len, "%sZ", base);
}

void sx_kube_micro_time(char out[40])
{
	time_str(out, 40, true);
}

int sx_kube_patch_pod_group_status(struct sx_kube *kube, const char *ns, const char *name,
				   const char *cond_type, const char *cond_status,
				   const char *reason, const char *message,
				   int64_t observed_generation, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/scheduling.k8s.io/v1beta1", ns, "podgroups", name,
				     "status"),
	     now[40], gen[32];
	struct sx_buf b;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	time_str(now, sizeof(now), false);
	snprintf(gen, sizeof(gen), "%lld", (long long)observed_generation);
	sx_buf_init(&b);
	sx_buf_puts(&b, "{\"status\":{\"conditions\":[{\"type\":");
	sx_json_str(&b, cond_type);
	sx_buf_puts(&b, ",\"status\":");
	sx_json_str(&b, cond_status);
	sx_buf_puts(&b, ",\"observedGeneration\":");
	sx_buf_puts(&b, gen);
	sx_buf_puts(&b, ",\"lastTransitionTime\":");
	sx_json_str(&b, now);
	sx_buf_puts(&b, ",\"reason\":");
	sx_json_str(&b, reason ? reason : "");
	sx_buf_puts(&b, ",\"message\":");
	sx_json_str(&b, message ? message : "");
	sx_buf_puts(&b, "}]}}");
	rc = write_json(kube, "PATCH", path, "application/merge-patch+json", &b, NULL, err);
	sx_buf_free(&b);
	free(path);
	return rc;
}

int sx_kube_patch_cosched_group_status(struct sx_kube *kube, const char *ns, const char *name,
				       const char *phase, int32_t scheduled, bool start_now,
				       struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/scheduling.x-k8s.io/v1alpha1", ns, "podgroups", name,
				     "status"),
	     now[40];
	struct sx_buf b;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_buf_puts(&b, "{\"status\":{\"phase\":");
	sx_json_str(&b, phase);
	sx_buf_printf(&b, ",\"scheduled\":%d", (int)scheduled);
	if (start_now) {
		time_str(now, sizeof(now), false);
		sx_buf_puts(&b, ",\"scheduleStartTime\":");
		sx_json_str(&b, now);
	}
	sx_buf_puts(&b, "}}");
	rc = write_json(kube, "PATCH", path, "application/merge-patch+json", &b, NULL, err);
	sx_buf_free(&b);
	free(path);
	return rc;
}

int sx_kube_patch_pod_status(struct sx_kube *kube, const char *ns, const char *name,
			     const char *cond_type, const char *cond_status, const char *reason,
			     const char *message, const char *nominated, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/api/v1", ns, "pods", name, "status"), now[40];
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kobject(&w, "status");
	if (nominated) {
		sx_jw_key(&w, "nominatedNodeName");
		sx_jw_str_or_null(&w, *nominated ? nominated : NULL);
	}
	if (cond_type) {
		time_str(now, sizeof(now), false);
		sx_jw_karray(&w, "conditions");
		sx_jw_object(&w);
		sx_jw_kstr(&w, "type", cond_type);
		sx_jw_kstr(&w, "status", cond_status ? cond_status : "False");
		sx_jw_kstr(&w, "reason", reason);
		sx_jw_kstr(&w, "message", message);
		sx_jw_key(&w, "lastProbeTime");
		sx_jw_null(&w);
		sx_jw_kstr(&w, "lastTransitionTime", now);
		sx_jw_end_object(&w);
		sx_jw_end_array(&w);
	}
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	rc = write_json(kube, "PATCH", path, "application/strategic-merge-patch+json", &b, NULL,
			err);
	sx_buf_free(&b);
	free(path);
	return rc;
}

int sx_kube_delete_pod(struct sx_kube *kube, const char *ns, const char *name, const char *uid,
		       struct sx_error *err)
{
	char *path = sx_kube_ns_path("/api/v1", ns, "pods", name, NULL);
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "v1");
	sx_jw_kstr(&w, "kind", "DeleteOptions");
	if (uid && *uid) {
		sx_jw_kobject(&w, "preconditions");
		sx_jw_kstr(&w, "uid", uid);
		sx_jw_end_object(&w);
	}
	sx_jw_kstr(&w, "propagationPolicy", "Background");
	sx_jw_end_object(&w);
	rc = write_json(kube, "DELETE", path, "application/json", &b, NULL, err);
	sx_buf_free(&b);
	free(path);
	return rc == SX_ENOENT ? 0 : rc;
}

/* Sends a merge patch; on success copies metadata.resourceVersion of the
 * answer into new_rv. */
static int merge_patch(struct sx_kube *kube, const char *path, struct sx_buf *b, char *new_rv,
		       size_t len, struct sx_error *err)
{
	char *out = NULL;
	int rc = write_json(kube, "PATCH", path, "application/merge-patch+json", b, &out, err);

	if (rc == 0 && new_rv && len) {
		cJSON *j = out ? cJSON_Parse(out) : NULL;

		copy_str(new_rv, len, cJSON_GetObjectItemCaseSensitive(j, "metadata"),
			 "resourceVersion");
		cJSON_Delete(j);
	}
	free(out);
	return rc;
}

/* Opens a merge patch and its metadata with the resourceVersion
 * precondition; the caller adds to metadata and closes it. */
static void open_rv_patch(struct sx_jw *w, struct sx_buf *b, const char *rv)
{
	sx_jw_init(w, b);
	sx_jw_object(w);
	sx_jw_kobject(w, "metadata");
	sx_jw_kstr(w, "resourceVersion", rv);
}

int sx_kube_bind_pv(struct sx_kube *kube, const char *pv, const char *rv,
		    const struct sx_kube_claim_ref *claim, bool bound_by_controller, char *new_rv,
		    size_t len, struct sx_error *err)
{
	struct sx_buf b, pb;
	struct sx_jw w;
	char *path;
	int rc;

	sx_buf_init(&pb);
	sx_buf_puts(&pb, "/api/v1/persistentvolumes/");
	sx_kube_put_segment(&pb, pv);
	path = sx_buf_take(&pb, NULL);
	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	open_rv_patch(&w, &b, rv);
	if (bound_by_controller) {
		sx_jw_kobject(&w, "annotations");
		sx_jw_kstr(&w, "pv.kubernetes.io/bound-by-controller", "yes");
		sx_jw_end_object(&w);
	}
	sx_jw_end_object(&w);
	sx_jw_kobject(&w, "spec");
	sx_jw_kobject(&w, "claimRef");
	sx_jw_kstr(&w, "kind", "PersistentVolumeClaim");
	sx_jw_kstr(&w, "apiVersion", "v1");
	sx_jw_kstr(&w, "namespace", claim->ns);
	sx_jw_kstr(&w, "name", claim->name);
	sx_jw_kstr(&w, "uid", claim->uid);
	sx_jw_kstr(&w, "resourceVersion", claim->resource_version);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	rc = merge_patch(kube, path, &b, new_rv, len, err);
	sx_buf_free(&b);
	free(path);
	return rc;
}

int sx_kube_annotate_pvc(struct sx_kube *kube, const char *ns, const char *name, const char *rv,
			 const char *key, const char *value, char *new_rv, size_t len,
			 struct sx_error *err)
{
	char *path = sx_kube_ns_path("/api/v1", ns, "persistentvolumeclaims", name, NULL);
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	open_rv_patch(&w, &b, rv);
	sx_jw_kobject(&w, "annotations");
	sx_jw_kstr(&w, key, value);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	rc = merge_patch(kube, path, &b, new_rv, len, err);
	sx_buf_free(&b);
	free(path);
	return rc;
}
