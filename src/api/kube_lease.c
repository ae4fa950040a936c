/* Leases of coordination.k8s.io/v1 for leader election (kube.h
 * sx_kube_lease_*; src/api/leader.c drives them as client-go's
 * tools/leaderelection LeaseLock does). */
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

static int parse_lease(const char *body, struct sx_lease *l, struct sx_error *err)
{
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(j, "spec");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	const cJSON *v;

	if (!cJSON_IsObject(meta)) {
		cJSON_Delete(j);
		return sx_error_set(err, SX_EINVAL, "lease: malformed response");
	}
	memset(l, 0, sizeof(*l));
	copy_str(l->resource_version, sizeof(l->resource_version), meta, "resourceVersion");
	copy_str(l->holder, sizeof(l->holder), spec, "holderIdentity");
	copy_str(l->acquire_time, sizeof(l->acquire_time), spec, "acquireTime");
	copy_str(l->renew_time, sizeof(l->renew_time), spec, "renewTime");
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
	l->duration_s = cJSON_IsNumber(v) ? (int32_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
	l->transitions = cJSON_IsNumber(v) ? (int32_t)v->valuedouble : 0;
	cJSON_Delete(j);
	return 0;
}

int sx_kube_lease_get(struct sx_kube *kube, const char *ns, const char *name,
		      struct sx_lease *lease, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/coordination.k8s.io/v1", ns, "leases", name, NULL);
	char *resp = NULL, msg[256];
	size_t rlen = 0;
	long status = 0;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	rc = sx_kube_request(kube, "GET", path, NULL, NULL, 0, &status, &resp, &rlen, err);
	free(path);
	if (rc == 0 && status == 200)
		rc = parse_lease(resp, lease, err);
	else if (rc == 0)
		rc = sx_error_set(err, sx_kube_status_code(status), "%s",
				  sx_kube_status_message(resp, rlen, status, msg, sizeof(msg)));
	free(resp);
	return rc;
}

static int lease_write(struct sx_kube *kube, const char *method, const char *ns, const char *name,
		       struct sx_lease *l, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/coordination.k8s.io/v1", ns, "leases",
				     strcmp(method, "PUT") == 0 ? name : NULL, NULL);
	char *out = NULL;
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "coordination.k8s.io/v1");
	sx_jw_kstr(&w, "kind", "Lease");
	sx_jw_kobject(&w, "metadata");
	sx_jw_kstr(&w, "name", name);
	sx_jw_kstr(&w, "namespace", ns);
	if (l->resource_version[0])
		sx_jw_kstr(&w, "resourceVersion", l->resource_version);
	sx_jw_end_object(&w);
	sx_jw_kobject(&w, "spec");
	sx_jw_kstr(&w, "holderIdentity", l->holder);
	sx_jw_kint(&w, "leaseDurationSeconds", (int)l->duration_s);
	if (l->acquire_time[0])
		sx_jw_kstr(&w, "acquireTime", l->acquire_time);
	if (l->renew_time[0])
		sx_jw_kstr(&w, "renewTime", l->renew_time);
	sx_jw_kint(&w, "leaseTransitions", (int)l->transitions);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	rc = write_json(kube, method, path, "application/json", &b, &out, err);
	if (rc == 0)
		rc = parse_lease(out, l, err);
	free(out);
	sx_buf_free(&b);
	free(path);
	return rc;
}

int sx_kube_lease_create(struct sx_kube *kube, const char *ns, const char *name,
			 struct sx_lease *lease, struct sx_error *err)
{
	lease->resource_version[0] = '\0';
	return lease_write(kube, "POST", ns, name, lease, err);
}

int sx_kube_lease_update(struct sx_kube *kube, const char *ns, const char *name,
			 struct sx_lease *lease, struct sx_error *err)
{
	return lease_write(kube, "PUT", ns, name, lease, err);
}
