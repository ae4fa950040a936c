/* Unknown fields of v1 Pods and Nodes (decode.h, sx_decode_check_fields).
 *
 * kube-apiserver decodes a request with field validation Strict, Warn or
 * Ignore (KEP-2885; staging/src/k8s.io/apimachinery/pkg/runtime/serializer/
 * json strict decoding through sigs.k8s.io/json): a key the Go type does
 * not have, matched case-sensitively, is `unknown field "spec.contianers"`.
 * The decoders of this folder read only what the scheduler uses and skip
 * everything else, so a misspelled key would silently vanish; this walks
 * the object against the field names of the v1 types instead.
 *
 * The tables below are the JSON names of k8s.io/api/core/v1 (types.go, as
 * of 1.35) for the types a scheduler reads and people write by hand: Pod,
 * ObjectMeta, PodSpec, Container, Affinity, tolerations, spread
 * constraints, volumes (by source name), Node, NodeSpec. Subtrees written
 * by the cluster or free-form (status, managedFields, probes, security
 * contexts, each volume source's own fields) are ANY: not checked, so a
 * newer kube-apiserver's additions there never refuse a file. Maps (labels,
 * requests) have no fixed keys. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/decode.h"

enum shape { ANY, OBJECT, ARRAY, MAP };

struct type;
struct field {
	const char *name;
	const struct type *type; /* NULL: a scalar or anything (not walked) */
};
struct type {
	enum shape shape;
	const struct field *fields; /* OBJECT: NULL-terminated */
	const struct type *elem;    /* ARRAY: the element type */
};

#define OBJ(n, ...)                                                                                \
	static const struct field n##_fields[] = {__VA_ARGS__, {NULL, NULL}};                      \
	static const struct type n = {OBJECT, n##_fields, NULL}
#define ARR(n, e) static const struct type n = {ARRAY, NULL, &e}
#define F(name)                                                                                    \
	{                                                                                          \
		name, NULL                                                                         \
	}
#define T(name, type)                                                                              \
	{                                                                                          \
		name, &type                                                                        \
	}

static const struct type any = {ANY, NULL, NULL};

OBJ(owner_ref, F("apiVersion"), F("kind"), F("name"), F("uid"), F("controller"),
    F("blockOwnerDeletion"));
ARR(owner_refs, owner_ref);
OBJ(object_meta, F("name"), F("generateName"), F("namespace"), F("selfLink"), F("uid"),
    F("resourceVersion"), F("generation"), F("creationTimestamp"), F("deletionTimestamp"),
    F("deletionGracePeriodSeconds"), F("labels"), F("annotations"),
    T("ownerReferences", owner_refs), F("finalizers"), F("managedFields"));

/* selectors */
OBJ(requirement, F("key"), F("operator"), F("values"));
ARR(requirements, requirement);
OBJ(label_selector, F("matchLabels"), T("matchExpressions", requirements));
OBJ(node_selector_term, T("matchExpressions", requirements), T("matchFields", requirements));
ARR(node_selector_terms, node_selector_term);
OBJ(node_selector, T("nodeSelectorTerms", node_selector_terms));
OBJ(preferred_term, F("weight"), T("preference", node_selector_term));
ARR(preferred_terms, preferred_term);
OBJ(node_affinity, T("requiredDuringSchedulingIgnoredDuringExecution", node_selector),
    T("preferredDuringSchedulingIgnoredDuringExecution", preferred_terms));
OBJ(pod_affinity_term, T("labelSelector", label_selector), F("namespaces"), F("topologyKey"),
    T("namespaceSelector", label_selector), F("matchLabelKeys"), F("mismatchLabelKeys"));
ARR(pod_affinity_terms, pod_affinity_term);
OBJ(weighted_term, F("weight"), T("podAffinityTerm", pod_affinity_term));
ARR(weighted_terms, weighted_term);
OBJ(pod_affinity, T("requiredDuringSchedulingIgnoredDuringExecution", pod_affinity_terms),
    T("preferredDuringSchedulingIgnoredDuringExecution", weighted_terms));
OBJ(affinity, T("nodeAffinity", node_affinity), T("podAffinity", pod_affinity),
    T("podAntiAffinity", pod_affinity));
OBJ(toleration, F("key"), F("operator"), F("value"), F("effect"), F("tolerationSeconds"));
ARR(tolerations, toleration);
OBJ(spread, F("maxSkew"), F("topologyKey"), F("whenUnsatisfiable"),
    T("labelSelector", label_selector), F("minDomains"), F("nodeAffinityPolicy"),
    F("nodeTaintsPolicy"), F("matchLabelKeys"));
ARR(spreads, spread);

/* containers */
OBJ(container_port, F("name"), F("hostPort"), F("containerPort"), F("protocol"), F("hostIP"));
ARR(container_ports, container_port);
OBJ(claim_ref, F("name"), F("request"));
ARR(claim_refs, claim_ref);
OBJ(resources, F("limits"), F("requests"), T("claims", claim_refs));
OBJ(env_var, F("name"), F("value"), T("valueFrom", any));
ARR(env_vars, env_var);
OBJ(volume_mount, F("name"), F("readOnly"), F("recursiveReadOnly"), F("mountPath"), F("subPath"),
    F("mountPropagation"), F("subPathExpr"));
ARR(volume_mounts, volume_mount);
#define CONTAINER_FIELDS                                                                           \
	F("name"), F("image"), F("command"), F("args"), F("workingDir"),                           \
		T("ports", container_ports), T("envFrom", any), T("env", env_vars),                \
		T("resources", resources), T("resizePolicy", any), F("restartPolicy"),             \
		T("restartPolicyRules", any), T("volumeMounts", volume_mounts),                    \
		T("volumeDevices", any), T("livenessProbe", any), T("readinessProbe", any),        \
		T("startupProbe", any), T("lifecycle", any), F("terminationMessagePath"),          \
		F("terminationMessagePolicy"), F("imagePullPolicy"), T("securityContext", any),    \
		F("stdin"), F("stdinOnce"), F("tty")
OBJ(container, CONTAINER_FIELDS);
ARR(containers, container);
OBJ(ephemeral_container, CONTAINER_FIELDS, F("targetContainerName"));
ARR(ephemeral_containers, ephemeral_container);

/* volumes: the name and one source; each source's fields are not checked */
OBJ(volume, F("name"), T("hostPath", any), T("emptyDir", any), T("gcePersistentDisk", any),
    T("awsElasticBlockStore", any), T("gitRepo", any), T("secret", any), T("nfs", any),
    T("iscsi", any), T("glusterfs", any), T("persistentVolumeClaim", any), T("rbd", any),
    T("flexVolume", any), T("cinder", any), T("cephfs", any), T("flocker", any),
    T("downwardAPI", any), T("fc", any), T("azureFile", any), T("configMap", any),
    T("vsphereVolume", any), T("quobyte", any), T("azureDisk", any), T("photonPersistentDisk", any),
    T("projected", any), T("portworxVolume", any), T("scaleIO", any), T("storageos", any),
    T("csi", any), T("ephemeral", any), T("image", any));
ARR(volumes, volume);
OBJ(gate, F("name"));
ARR(gates, gate);
OBJ(scheduling_group, F("podGroupName"));
OBJ(pod_claim, F("name"), F("resourceClaimName"), F("resourceClaimTemplateName"));
ARR(pod_claims, pod_claim);

OBJ(pod_spec, T("volumes", volumes), T("initContainers", containers), T("containers", containers),
    T("ephemeralContainers", ephemeral_containers), F("restartPolicy"),
    F("terminationGracePeriodSeconds"), F("activeDeadlineSeconds"), F("dnsPolicy"),
    F("nodeSelector"), F("serviceAccountName"), F("serviceAccount"),
    F("automountServiceAccountToken"), F("nodeName"), F("hostNetwork"), F("hostPID"), F("hostIPC"),
    F("shareProcessNamespace"), T("securityContext", any), T("imagePullSecrets", any),
    F("hostname"), F("subdomain"), T("affinity", affinity), F("schedulerName"),
    T("tolerations", tolerations), T("hostAliases", any), F("priorityClassName"), F("priority"),
    T("dnsConfig", any), T("readinessGates", any), F("runtimeClassName"), F("enableServiceLinks"),
    F("preemptionPolicy"), F("overhead"), T("topologySpreadConstraints", spreads),
    F("setHostnameAsFQDN"), T("os", any), F("hostUsers"), T("schedulingGates", gates),
    T("resourceClaims", pod_claims), T("resources", resources), F("hostnameOverride"),
    T("workloadRef", any), T("schedulingGroup", scheduling_group));
OBJ(pod, F("apiVersion"), F("kind"), T("metadata", object_meta), T("spec", pod_spec),
    T("status", any));

OBJ(taint, F("key"), F("value"), F("effect"), F("timeAdded"));
ARR(taints, taint);
OBJ(node_spec, F("podCIDR"), F("podCIDRs"), F("providerID"), F("unschedulable"),
    T("taints", taints), T("configSource", any), F("externalID"));
OBJ(node, F("apiVersion"), F("kind"), T("metadata", object_meta), T("spec", node_spec),
    T("status", any));

#define MAX_DEPTH 64 /* deeper than any path of the tables above */

/* The walk's position: the path is a stack of keys and indices, written
 * out only for an unknown field (building it at every key cost state
 * files a quarter more instructions: make perf-check's ingest_state). */
struct walk {
	enum sx_field_validation mode;
	sx_unknown_field_fn fn;
	void *ctx;
	struct sx_error *err;
	unsigned found, depth;
	bool stop;
	struct {
		const char *key; /* NULL: an array index */
		int index;
	} at[MAX_DEPTH];
	char path[512];
};

static void write_path(struct walk *w)
{
	size_t len = 0;

	w->path[0] = '\0';
	for (unsigned i = 0; i < w->depth && len < sizeof(w->path); i++)
		len += (size_t)(w->at[i].key ? snprintf(w->path + len, sizeof(w->path) - len,
							"%s%s", len ? "." : "", w->at[i].key)
					     : snprintf(w->path + len, sizeof(w->path) - len,
							"[%d]", w->at[i].index));
}

static void unknown(struct walk *w)
{
	w->found++;
	write_path(w);
	if (w->mode == SX_FIELDS_STRICT) {
		/* kube-apiserver's words (sigs.k8s.io/json strict errors) */
		sx_error_set(w->err, SX_EINVAL, "strict decoding error: unknown field \"%s\"",
			     w->path);
		w->stop = true;
	} else if (w->fn && w->fn(w->ctx, w->path) != 0) {
		w->stop = true;
	}
}

static void walk(struct walk *w, const cJSON *j, const struct type *t)
{
	const cJSON *it;
	int i = 0;

	if (!t || t->shape == ANY || t->shape == MAP || w->depth == MAX_DEPTH)
		return;
	if (t->shape == ARRAY) {
		if (!cJSON_IsArray(j))
			return; /* wrong types are the decoders' to report */
		cJSON_ArrayForEach(it, j)
		{
			w->at[w->depth].key = NULL;
			w->at[w->depth++].index = i++;
			walk(w, it, t->elem);
			w->depth--;
			if (w->stop)
				return;
		}
		return;
	}
	if (!cJSON_IsObject(j))
		return;
	cJSON_ArrayForEach(it, j)
	{
		const struct field *f = t->fields;
		const char *key = it->string ? it->string : "";

		/* the first byte rules out most names before strcmp */
		while (f->name && (f->name[0] != key[0] || strcmp(f->name, key) != 0))
			f++;
		w->at[w->depth++].key = key;
		if (!f->name)
			unknown(w);
		else if (f->type && !cJSON_IsNull(it))
			walk(w, it, f->type);
		w->depth--;
		if (w->stop)
			return;
	}
}

int sx_decode_check_fields(const struct cJSON *json, enum sx_kind kind,
			   enum sx_field_validation mode, sx_unknown_field_fn fn, void *ctx,
			   struct sx_error *err)
{
	struct walk w = {.mode = mode, .fn = fn, .ctx = ctx, .err = err};
	const struct type *t = kind == SX_KIND_POD ? &pod : kind == SX_KIND_NODE ? &node : NULL;

	if (mode == SX_FIELDS_IGNORE || !t)
		return 0;
	walk(&w, json, t);
	if (mode == SX_FIELDS_STRICT && w.found)
		return SX_EINVAL;
	return (int)w.found;
}
