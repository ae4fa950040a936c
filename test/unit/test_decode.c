/* Decoding of the object model (src/decode*.c, src/yamljson.c, src/model.c).
 * JSON in the tests is written with single quotes, turned into double quotes
 * by parse() (test_decode_parse.h) so the literals stay readable. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_decode_parse.h"
#include "schedext/decode.h"
#include "schedext/model.h"

static struct sx_pod *pod_of(const char *text, struct sx_error *err)
{
	cJSON *j = parse(text);
	struct sx_pod *pod = sx_decode_pod(j, err);

	cJSON_Delete(j);
	return pod;
}

static struct sx_node *node_of(const char *text, struct sx_error *err)
{
	cJSON *j = parse(text);
	struct sx_node *node = sx_decode_node(j, err);

	cJSON_Delete(j);
	return node;
}

static const char *S(sx_str id)
{
	return sx_str_get(id);
}

static const char *label(const struct sx_labels *l, const char *key)
{
	sx_str v;

	for (uint32_t i = 0; i < l->n; i++)
		if (l->items[i].key == sx_intern(key)) {
			v = l->items[i].value;
			return S(v);
		}
	return NULL;
}

static int64_t scalar(const struct sx_resources *r, const char *name)
{
	for (uint32_t i = 0; i < r->nscalar; i++)
		if (r->scalar[i].name == sx_intern(name))
			return r->scalar[i].value;
	return -1;
}

static const char full_pod[] =
	"{'kind':'Pod','apiVersion':'v1',"
	" 'metadata':{'name':'web-1','namespace':'prod','uid':'u-1','resourceVersion':'42',"
	"  'creationTimestamp':'2025-06-01T12:00:06Z','deletionTimestamp':'2025-06-01T13:00:00Z',"
	"  'labels':{'app':'web','tier':'front','pod-template-hash':'abc'},"
	"  "
	"'ownerReferences':[{'apiVersion':'apps/"
	"v1','kind':'ReplicaSet','name':'web-rs','uid':'rs-1','controller':true},"
	"                     {'kind':'Other','name':'o','uid':'o-1'}]},"
	" 'spec':{'nodeName':'node-a','schedulerName':'my-sched','priority':1000,"
	"  'preemptionPolicy':'Never','nodeSelector':{'disk':'ssd'},"
	"  'affinity':{"
	"   'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
	"      "
	"{'matchExpressions':[{'key':'zone','operator':'In','values':['a','b']},{'key':'cores','"
	"operator':'Gt','values':['4']}]},"
	"      {'matchFields':[{'key':'metadata.name','operator':'In','values':['node-7']}]}]},"
	"    "
	"'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':20,'preference':{'"
	"matchExpressions':[{'key':'disk','operator':'Exists'}]}}]},"
	"   "
	"'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':{'"
	"matchLabels':{'app':'db'}},"
	"      'topologyKey':'kubernetes.io/hostname','namespaces':['data'],'namespaceSelector':{},"
	"      'matchLabelKeys':['pod-template-hash'],'mismatchLabelKeys':['tier']}]},"
	"   "
	"'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'zone'"
	"}],"
	"     'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':100,'podAffinityTerm':{"
	"        "
	"'labelSelector':{'matchExpressions':[{'key':'app','operator':'NotIn','values':['web']}]},'"
	"topologyKey':'zone'}}]}},"
	"  "
	"'tolerations':[{'key':'dedicated','operator':'Equal','value':'gpu','effect':'NoSchedule'},"
	"                 "
	"{'operator':'Exists','effect':'NoExecute','tolerationSeconds':300},{'key':'k'}],"
	"  "
	"'topologySpreadConstraints':[{'maxSkew':2,'topologyKey':'zone','whenUnsatisfiable':'"
	"ScheduleAnyway',"
	"      "
	"'labelSelector':{'matchLabels':{'app':'web'}},'minDomains':3,'nodeAffinityPolicy':'Ignore'"
	","
	"      "
	"'nodeTaintsPolicy':'Honor','matchLabelKeys':['pod-template-hash']},{'maxSkew':1,'"
	"topologyKey':'h'}],"
	"  "
	"'containers':[{'name':'app','image':'nginx','ports':[{'containerPort':80,'hostPort':8080},"
	"        "
	"{'containerPort':53,'hostPort':53,'protocol':'UDP','hostIP':'10.0.0.1'},{'containerPort':"
	"9090}],"
	"      "
	"'resources':{'requests':{'cpu':'500m','memory':'1Gi','nvidia.com/"
	"gpu':'1'},'limits':{'cpu':1,'memory':'2Gi'}}},"
	"    {'name':'side','image':'registry:5000/proxy','resources':{'requests':{'cpu':0.25}}}],"
	"  "
	"'initContainers':[{'name':'init','image':'busybox:1.36','resources':{'requests':{'cpu':'1'"
	"}},"
	"      'ports':[{'containerPort':1,'hostPort':1111}]},"
	"    "
	"{'name':'mesh','image':'envoy@sha256:abcd','restartPolicy':'Always','ports':[{'"
	"containerPort':15000,'hostPort':15000,'protocol':'SCTP'}]}],"
	"  "
	"'volumes':[{'name':'data','persistentVolumeClaim':{'claimName':'data-pvc'}},{'name':'"
	"scratch','ephemeral':{'volumeClaimTemplate':{}}},"
	"    {'name':'cfg','configMap':{'name':'x'}}],"
	"  'schedulingGates':[{'name':'example.com/wait'}]},"
	" 'status':{'phase':'Running','nominatedNodeName':'node-b','startTime':'2025-06-01T12:00:"
	"10Z'}}";

static void test_full_pod(void)
{
	struct sx_error err = {0};
	struct sx_pod *pod = pod_of(full_pod, &err);
	char key[64];

	CHECK(pod != NULL);
	if (!pod) {
		fprintf(stderr, "%s: %s\n", err.path, err.msg);
		return;
	}
	CHECK_STR(pod->meta.name, "web-1");
	CHECK_STR(S(pod->meta.ns), "prod");
	CHECK_STR(pod->meta.uid, "u-1");
	CHECK_STR(pod->meta.resource_version, "42");
	CHECK_INT(pod->meta.creation_ts, 1748779206);
	CHECK_INT(pod->meta.labels.n, 3);
	CHECK_STR(label(&pod->meta.labels, "app"), "web");
	for (uint32_t i = 1; i < pod->meta.labels.n; i++)
		CHECK(pod->meta.labels.items[i - 1].key < pod->meta.labels.items[i].key);
	CHECK_STR(sx_pod_key(pod, key, sizeof(key)), "prod/web-1");
	CHECK_INT(pod->nowners, 2);
	CHECK(sx_pod_controller(pod) == &pod->owners[0]);
	CHECK_STR(S(pod->owners[0].kind), "ReplicaSet");
	CHECK_STR(S(pod->owners[0].name), "web-rs");
	CHECK_STR(pod->owners[0].uid, "rs-1");
	CHECK(!pod->owners[1].controller);
	CHECK(pod->deleting);
	CHECK_INT(pod->phase, SX_PHASE_RUNNING);
	CHECK_STR(S(pod->node_name), "node-a");
	CHECK_STR(S(pod->scheduler_name), "my-sched");
	CHECK_INT(pod->priority, 1000);
	CHECK(pod->preempt_never);
	CHECK(!pod->host_network);
	CHECK_STR(label(&pod->node_selector, "disk"), "ssd");

	/* affinity */
	CHECK(pod->affinity && pod->affinity->node_affinity);
	const struct sx_node_affinity *na = pod->affinity->node_affinity;
	CHECK_INT(na->required->nterms, 2);
	CHECK_INT(na->required->terms[0].nexprs, 2);
	CHECK_INT(na->required->terms[0].exprs[0].op, SX_OP_IN);
	CHECK_INT(na->required->terms[0].exprs[0].nvalues, 2);
	CHECK_STR(S(na->required->terms[0].exprs[0].values[1]), "b");
	CHECK_INT(na->required->terms[0].exprs[1].op, SX_OP_GT);
	CHECK_INT(na->required->terms[1].nfields, 1);
	CHECK_STR(S(na->required->terms[1].fields[0].key), "metadata.name");
	CHECK_INT(na->npreferred, 1);
	CHECK_INT(na->preferred[0].weight, 20);
	CHECK_INT(na->preferred[0].preference.exprs[0].op, SX_OP_EXISTS);
	const struct sx_pod_affinity_term *t = &pod->affinity->pod_affinity->required[0];
	CHECK_INT(t->selector->nreqs, 1);
	CHECK_INT(t->selector->reqs[0].op, SX_OP_EQUALS);
	CHECK_STR(S(t->selector->reqs[0].values[0]), "db");
	CHECK_STR(S(t->topology_key), "kubernetes.io/hostname");
	CHECK_INT(t->nnamespaces, 1);
	CHECK_STR(S(t->namespaces[0]), "data");
	CHECK(t->ns_selector != NULL && t->ns_selector->nreqs == 0); /* {} = all */
	CHECK_STR(S(t->match_label_keys[0]), "pod-template-hash");
	CHECK_STR(S(t->mismatch_label_keys[0]), "tier");
	const struct sx_pod_affinity *anti = pod->affinity->pod_anti_affinity;
	CHECK(anti->required[0].selector == NULL); /* null: matches no pods */
	CHECK(anti->required[0].ns_selector == NULL);
	CHECK_INT(anti->preferred[0].weight, 100);
	CHECK_INT(anti->preferred[0].term.selector->reqs[0].op, SX_OP_NOT_IN);
	CHECK(sx_pod_has_affinity(pod));
	CHECK(sx_pod_has_required_anti_affinity(pod));

	/* tolerations */
	CHECK_INT(pod->ntolerations, 3);
	CHECK_STR(S(pod->tolerations[0].value), "gpu");
	CHECK_INT(pod->tolerations[0].effect, SX_EFFECT_NO_SCHEDULE);
	CHECK_INT(pod->tolerations[1].op, SX_TOL_EXISTS);
	CHECK(pod->tolerations[1].has_seconds);
	CHECK_INT(pod->tolerations[1].toleration_seconds, 300);
	CHECK_INT(pod->tolerations[2].op, SX_TOL_EQUAL);
	CHECK_INT(pod->tolerations[2].effect, SX_EFFECT_NONE);

	/* spread */
	CHECK_INT(pod->nspread, 2);
	CHECK_INT(pod->spread[0].max_skew, 2);
	CHECK_INT(pod->spread[0].when_unsatisfiable, SX_SCHEDULE_ANYWAY);
	CHECK_INT(pod->spread[0].min_domains, 3);
	CHECK_INT(pod->spread[0].node_affinity_policy, SX_POLICY_IGNORE);
	CHECK_INT(pod->spread[0].node_taints_policy, SX_POLICY_HONOR);
	CHECK_INT(pod->spread[0].nmatch_label_keys, 1);
	CHECK_INT(pod->spread[1].when_unsatisfiable, SX_DO_NOT_SCHEDULE);
	CHECK_INT(pod->spread[1].node_affinity_policy, SX_POLICY_DEFAULT);
	CHECK(pod->spread[1].selector == NULL);

	/* containers */
	CHECK_INT(pod->ncontainers, 2);
	CHECK_STR(S(pod->containers[0].name), "app");
	CHECK_STR(S(pod->containers[0].image), "nginx:latest");
	CHECK_STR(S(pod->containers[1].image), "registry:5000/proxy:latest");
	CHECK(pod->containers[0].has_cpu_request && pod->containers[0].has_memory_request);
	CHECK(pod->containers[1].has_cpu_request && !pod->containers[1].has_memory_request);
	CHECK_INT(pod->containers[0].requests.milli_cpu, 500);
	CHECK_INT(pod->containers[0].requests.memory, 1073741824);
	CHECK_INT(scalar(&pod->containers[0].requests, "nvidia.com/gpu"), 1);
	CHECK_INT(pod->containers[0].limits.milli_cpu, 1000);
	CHECK_INT(pod->containers[0].limits.memory, 2147483648LL);
	CHECK_INT(pod->containers[1].requests.milli_cpu, 250);
	CHECK_INT(pod->ninit, 2);
	CHECK(!pod->init_containers[0].sidecar);
	CHECK(pod->init_containers[1].sidecar);
	CHECK_STR(S(pod->init_containers[0].image), "busybox:1.36");
	CHECK_STR(S(pod->init_containers[1].image), "envoy@sha256:abcd");

	/* requests: C = 750m; init 1 -> I = 1000m; sidecar 0 -> A = 1000m */
	CHECK_INT(pod->request.milli_cpu, 1000);
	CHECK_INT(pod->request.memory, 1073741824);
	CHECK_INT(scalar(&pod->request, "nvidia.com/gpu"), 1);
	/* non-zero: side +200Mi, mesh +100m/+200Mi: C = 850m / 1Gi+400Mi;
	 * init = 1000m + 100m(mesh is after) -> I = max(1000m+0, 100m) */
	CHECK_INT(pod->nonzero_milli_cpu, 1000);
	CHECK_INT(pod->nonzero_memory, 1073741824LL + 2 * 209715200LL);
	CHECK(!pod->has_overhead);

	/* ports: app 8080/TCP, 53/UDP on 10.0.0.1; mesh 15000/SCTP; init ignored */
	CHECK_INT(pod->nports, 3);
	CHECK_INT(pod->ports[0].port, 8080);
	CHECK_INT(pod->ports[0].protocol, SX_PROTO_TCP);
	CHECK(pod->ports[0].ip == SX_STR_EMPTY);
	CHECK_INT(pod->ports[1].port, 53);
	CHECK_INT(pod->ports[1].protocol, SX_PROTO_UDP);
	CHECK_STR(S(pod->ports[1].ip), "10.0.0.1");
	CHECK_INT(pod->ports[2].port, 15000);
	CHECK_INT(pod->ports[2].protocol, SX_PROTO_SCTP);

	CHECK_INT(pod->npvcs, 2);
	CHECK_STR(S(pod->pvcs[0]), "data-pvc");
	CHECK_STR(S(pod->pvcs[1]), "web-1-scratch");
	CHECK_INT(pod->ngates, 1);
	CHECK_STR(S(pod->gates[0]), "example.com/wait");
	CHECK_STR(S(pod->nominated_node), "node-b");
	CHECK_INT(pod->start_time, 1748779210);
	sx_pod_unref(pod);
}

static void test_pod_defaults(void)
{
	struct sx_error err;
	struct sx_pod *pod =
		pod_of("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}]}}", &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK(pod->scheduler_name == SX_S_DEFAULT_SCHEDULER);
	CHECK_INT(pod->priority, 0);
	CHECK(!pod->preempt_never);
	CHECK(!pod->deleting);
	CHECK_INT(pod->phase, SX_PHASE_UNKNOWN);
	CHECK(pod->node_name == SX_STR_EMPTY);
	CHECK(pod->meta.ns == SX_STR_EMPTY);
	CHECK(pod->affinity == NULL);
	CHECK(!sx_pod_has_affinity(pod));
	CHECK(sx_pod_controller(pod) == NULL);
	CHECK_INT(pod->request.milli_cpu, 0);
	CHECK_INT(pod->request.memory, 0);
	CHECK_INT(pod->nonzero_milli_cpu, 100);
	CHECK_INT(pod->nonzero_memory, 209715200);
	CHECK_STR(pod->meta.uid, "");
	sx_pod_unref(pod);
}

/* PodRequests on sidecar and init containers, worked example. */
static void test_effective_request_example(void)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of(
		"{'metadata':{'name':'p'},'spec':{"
		"'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'}}},"
		"              {'name':'b','resources':{'requests':{'cpu':'250m'}}}],"
		"'initContainers':[{'name':'init-db','resources':{'requests':{'cpu':'1'}}},"
		"  "
		"{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'100m'}}},"
		"  {'name':'migrate','resources':{'requests':{'cpu':'300m'}}}],"
		"'overhead':{'cpu':'250m'}}}",
		&err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 1250);
	CHECK(pod->has_overhead);
	CHECK_INT(pod->overhead.milli_cpu, 250);
	/* non-zero: cpu set everywhere; memory 200Mi × (2 + proxy) vs init
	 * usages (200Mi + sidecars) -> C = 600Mi. */
	CHECK_INT(pod->nonzero_milli_cpu, 1250);
	CHECK_INT(pod->nonzero_memory, 3 * 209715200LL);
	sx_pod_unref(pod);

	/* Sidecar first (500m): init-db needs 1000m + 500m; C = 1250m. */
	pod = pod_of(
		"{'metadata':{'name':'p'},'spec':{"
		"'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'}}},"
		"              {'name':'b','resources':{'requests':{'cpu':'250m'}}}],"
		"'initContainers':["
		"  "
		"{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'500m'}}},"
		"  {'name':'init-db','resources':{'requests':{'cpu':'1'}}},"
		"  {'name':'migrate','resources':{'requests':{'cpu':'300m'}}}]}}",
		&err);
	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 1500);
	sx_pod_unref(pod);
}

/* Exact sums: two 0.5m requests make 1m, not 2m. */
static void test_exact_sums(void)
{
	struct sx_error err;
	struct sx_pod *pod =
		pod_of("{'metadata':{'name':'p'},'spec':{'containers':["
		       "{'name':'a','resources':{'requests':{'cpu':'0.5m','memory':'500m'}}},"
		       "{'name':'b','resources':{'requests':{'cpu':'0.5m','memory':'500m'}}}]}}",
		       &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 1);
	CHECK_INT(pod->request.memory, 1);
	CHECK_INT(pod->containers[0].requests.milli_cpu, 1);
	sx_pod_unref(pod);
}

static void test_nonzero_defaults(void)
{
	struct sx_error err;
	/* explicit zero stays zero; a missing key gets the default */
	struct sx_pod *pod =
		pod_of("{'metadata':{'name':'p'},'spec':{'containers':["
		       "{'name':'a','resources':{'requests':{'cpu':'0','memory':'0'}}},"
		       "{'name':'b','resources':{'requests':{'memory':'1Gi'}}},"
		       "{'name':'c','resources':{'limits':{'cpu':'2'}}}]}}",
		       &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 0);
	CHECK_INT(pod->request.memory, 1073741824);
	CHECK_INT(pod->nonzero_milli_cpu, 200);
	CHECK_INT(pod->nonzero_memory, 1073741824LL + 209715200LL);
	CHECK(!pod->containers[2].has_cpu_request);
	CHECK_INT(pod->containers[2].limits.milli_cpu, 2000);
	sx_pod_unref(pod);
}

static void test_overhead_and_pod_level(void)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of(
		"{'metadata':{'name':'p'},'spec':{"
		"'resources':{'requests':{'cpu':'2','memory':'1Gi','ephemeral-storage':'5Gi'}},"
		"'containers':[{'name':'a','resources':{'requests':{'cpu':'500m','memory':'100Mi','"
		"ephemeral-storage':'1Gi','example.com/foo':'3'}}}],"
		"'overhead':{'cpu':'100m','memory':'10Mi'}}}",
		&err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	/* pod level replaces cpu/memory, not ephemeral-storage; overhead added */
	CHECK_INT(pod->request.milli_cpu, 2100);
	CHECK_INT(pod->request.memory, 1073741824LL + 10485760LL);
	CHECK_INT(pod->request.ephemeral_storage, 1073741824LL);
	CHECK_INT(scalar(&pod->request, "example.com/foo"), 3);
	CHECK_INT(pod->nonzero_milli_cpu, 2100);
	CHECK_INT(pod->nonzero_memory, 1073741824LL + 10485760LL);
	CHECK_INT(pod->overhead.memory, 10485760);
	sx_pod_unref(pod);

	/* pod-level memory only, no cpu anywhere: cpu default per container */
	pod = pod_of("{'metadata':{'name':'p'},'spec':{'resources':{'requests':{'memory':'1Gi'}},"
		     "'containers':[{'name':'a'},{'name':'b'}]}}",
		     &err);
	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 0);
	CHECK_INT(pod->nonzero_milli_cpu, 200);
	CHECK_INT(pod->nonzero_memory, 1073741824);
	sx_pod_unref(pod);
}

/* InPlacePodVerticalScaling: max of spec, actuated and allocated. */
static void test_resize_status(void)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of(
		"{'metadata':{'name':'p'},'spec':{'nodeName':'n','containers':["
		"{'name':'a','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]},"
		"'status':{'containerStatuses':[{'name':'a','allocatedResources':{'cpu':'2'},"
		"  'resources':{'requests':{'cpu':'1500m','memory':'2Gi'}}}]}}",
		&err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 2000);
	CHECK_INT(pod->request.memory, 2147483648LL);
	CHECK_INT(pod->containers[0].requests.milli_cpu, 1000);
	sx_pod_unref(pod);

	/* Infeasible resize: the spec value is dropped. */
	pod = pod_of("{'metadata':{'name':'p'},'spec':{'containers':["
		     "{'name':'a','resources':{'requests':{'cpu':'4'}}}]},"
		     "'status':{'conditions':[{'type':'PodResizePending','status':'True','reason':'"
		     "Infeasible'}],"
		     " 'containerStatuses':[{'name':'a','allocatedResources':{'cpu':'1'},"
		     "  'resources':{'requests':{'cpu':'1'}}}]}}",
		     &err);
	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 1000);
	sx_pod_unref(pod);
}

/* The pod's cpu request in millicores (-1 when it does not decode). */
static int64_t cpu_of(const char *text)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of(text, &err);
	int64_t v = pod ? pod->request.milli_cpu : -1;

	sx_pod_unref(pod);
	return v;
}

/* InPlacePodLevelResourcesVerticalScaling: rows of
 * staging/src/k8s.io/component-helpers/resource/helpers_test.go
 * (TestPodRequestsAndLimitsVerticalScalingWrappers and the pod-level rows
 * of the AggregateContainerRequests table), through the decoder's
 * request, which is PodRequests with the scheduler's options
 * (UseStatusResources, the gate from the configuration). */
static void test_pod_level_resize(void)
{
	/* "pod level requests/limits with PLR vertical scaling enabled and
	 * status populated" */
	static const char *status_populated =
		"{'metadata':{'name':'p'},'spec':{'resources':{'requests':{'cpu':'2'},"
		"'limits':{'cpu':'4'}},'containers':[{'name':'c1','resources':{'requests':{'cpu':'"
		"1'},'limits':{'cpu':'2'}}}]},'status':{'allocatedResources':{'cpu':'3'},"
		"'resources':{'requests':{'cpu':'3.5'},'limits':{'cpu':'5'}}}}";
	/* "... and infeasible resize" */
	static const char *infeasible =
		"{'metadata':{'name':'p'},'spec':{'resources':{'requests':{'cpu':'10'},"
		"'limits':{'cpu':'20'}},'containers':[{'name':'c1','resources':{'requests':{'cpu':"
		"'1'},'limits':{'cpu':'2'}}}]},'status':{'conditions':[{'type':'PodResizePending',"
		"'status':'True','reason':'Infeasible'}],'allocatedResources':{'cpu':'3'},"
		"'resources':{'requests':{'cpu':'4'},'limits':{'cpu':'8'}}}}";
	/* "aggregate container request/limit resolves directly from pod
	 * status when PLR vertical scaling enabled" */
	static const char *from_pod_status =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c1','resources':{"
		"'requests':{'cpu':'1'},'limits':{'cpu':'2'}}}]},'status':{'allocatedResources':{"
		"'cpu':'4'},'resources':{'requests':{'cpu':'3'},'limits':{'cpu':'5'}}}}";
	/* "falls back to container status aggregation when PLR vertical
	 * scaling enabled but podAllocatedResources is nil" */
	static const char *no_pod_alloc =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c1','resources':{"
		"'requests':{'cpu':'1'},'limits':{'cpu':'2'}}}]},'status':{'containerStatuses':[{"
		"'name':'c1','allocatedResources':{'cpu':'6'},'resources':{'requests':{'cpu':'5'},"
		"'limits':{'cpu':'7'}}}],'resources':{'requests':{'cpu':'3'},'limits':{'cpu':'7'}}}"
		"}";
	/* "... but podResources is nil" */
	static const char *no_pod_res =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c1','resources':{"
		"'requests':{'cpu':'1'},'limits':{'cpu':'2'}}}]},'status':{'containerStatuses':[{"
		"'name':'c1','allocatedResources':{'cpu':'6'},'resources':{'requests':{'cpu':'5'},"
		"'limits':{'cpu':'8'}}}],'allocatedResources':{'cpu':'6'}}}";

	/* "aggregate container request resolves max of sums instead of sum
	 * of maxes" (1.37, PR 140047) */
	static const char *max_of_sums =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c1','resources':{"
		"'requests':{'cpu':'1'}}},{'name':'c2','resources':{'requests':{'cpu':'2'}}}]},"
		"'status':{'containerStatuses':[{'name':'c1','allocatedResources':{'cpu':'2'}},"
		"{'name':'c2','allocatedResources':{'cpu':'1'}}]}}";
	/* "regularcontainers with empty requests, but status with non-empty
	 * requests" and its always-restart init container twin */
	static const char *status_only =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'container-1'}]},"
		"'status':{'containerStatuses':[{'name':'container-1','resources':{'requests':{"
		"'cpu':'2'}}}]}}";
	static const char *sidecar_status_only =
		"{'metadata':{'name':'p'},'spec':{'containers':[],'initContainers':[{'name':"
		"'container-1','restartPolicy':'Always'}]},'status':{'initContainerStatuses':[{"
		"'name':'container-1','resources':{'requests':{'cpu':'2'}}}]}}";

	/* derived: the same crossing in status.resources.requests: 3 as
	 * 1.37 sums, 4 as 1.36 summed the per-container max */
	static const char *actuated_crossed =
		"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c1','resources':{"
		"'requests':{'cpu':'1'}}},{'name':'c2','resources':{'requests':{'cpu':'2'}}}]},"
		"'status':{'containerStatuses':[{'name':'c1','resources':{'requests':{'cpu':'2'}}},"
		"{'name':'c2','resources':{'requests':{'cpu':'1'}}}]}}";

	/* the default: 1.37, gate on */
	CHECK_INT(cpu_of(max_of_sums), 3000);
	CHECK_INT(cpu_of(status_only), 2000);
	CHECK_INT(cpu_of(sidecar_status_only), 2000);
	CHECK_INT(cpu_of(actuated_crossed), 3000);
	CHECK_INT(cpu_of(status_populated), 3500);
	CHECK_INT(cpu_of(infeasible), 4000);
	CHECK_INT(cpu_of(from_pod_status), 4000);
	CHECK_INT(cpu_of(no_pod_alloc), 6000);
	CHECK_INT(cpu_of(no_pod_res), 6000);

	/* derived: 1.36 (gate beta, on) reads the pod-level status for
	 * pod-level requests only; its AggregateContainerRequests walks the
	 * containers (helpers.go before the pod-level aggregate) */
	sx_decode_set_pod_resources(true, 36);
	CHECK_INT(cpu_of(status_populated), 3500);
	/* derived: before PR 140047 the per-container max was summed, for
	 * containers whose status reports resources (helpers.go
	 * determineContainerReqs); with allocatedResources alone the spec
	 * counted */
	CHECK_INT(cpu_of(max_of_sums), 3000);
	CHECK_INT(cpu_of(actuated_crossed), 4000);
	CHECK_INT(cpu_of(status_only), 2000);
	CHECK_INT(cpu_of(from_pod_status), 1000);
	CHECK_INT(cpu_of(no_pod_alloc), 6000);
	/* derived: the gate off (1.35's default, alpha): the spec's
	 * pod-level requests, container statuses as before */
	sx_decode_set_pod_resources(false, 35);
	CHECK_INT(cpu_of(status_populated), 2000);
	CHECK_INT(cpu_of(infeasible), 10000);
	CHECK_INT(cpu_of(from_pod_status), 1000);
	CHECK_INT(cpu_of(no_pod_res), 6000);
	sx_decode_set_pod_resources(true, 37);
}

static void test_host_network_ports(void)
{
	struct sx_error err;
	struct sx_pod *pod =
		pod_of("{'metadata':{'name':'p'},'spec':{'hostNetwork':true,'containers':["
		       "{'name':'a','ports':[{'containerPort':8080},{'containerPort':9000,'"
		       "hostPort':9001},"
		       "  {'containerPort':53,'protocol':'UDP'}]}],"
		       "'initContainers':[{'name':'i','ports':[{'containerPort':7000}]}]}}",
		       &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK(pod->host_network);
	CHECK_INT(pod->nports, 3);
	CHECK_INT(pod->ports[0].port, 8080);
	CHECK_INT(pod->ports[1].port, 9001);
	CHECK_INT(pod->ports[2].port, 53);
	CHECK_INT(pod->ports[2].protocol, SX_PROTO_UDP);
	sx_pod_unref(pod);
}

static const char full_node[] =
	"{'kind':'Node','apiVersion':'v1',"
	" 'metadata':{'name':'node-a','uid':'n-1','resourceVersion':'7','labels':{"
	"   'kubernetes.io/hostname':'node-a','topology.kubernetes.io/zone':'eu-1a'}},"
	" 'spec':{'unschedulable':true,"
	"   'taints':[{'key':'node-role.kubernetes.io/control-plane','effect':'NoSchedule'},"
	"             "
	"{'key':'k','value':'v','effect':'PreferNoSchedule','timeAdded':'2025-01-01T00:00:00Z'}]},"
	" 'status':{"
	"   "
	"'capacity':{'cpu':'4','memory':'16211592Ki','pods':'110','ephemeral-storage':'101430960Ki'"
	"},"
	"   "
	"'allocatable':{'cpu':'3920m','memory':'15223432Ki','pods':110,'ephemeral-storage':'"
	"93478772582',"
	"                  'hugepages-2Mi':'0','nvidia.com/gpu':'1'},"
	"   'conditions':[{'type':'Ready','status':'True','reason':'KubeletReady'}],"
	"   "
	"'images':[{'names':['registry.k8s.io/pause@sha256:1234','registry.k8s.io/"
	"pause:3.10'],'sizeBytes':320368},"
	"             {'names':['nginx','localhost:5000/app'],'sizeBytes':1000}]}}";

static void test_full_node(void)
{
	struct sx_error err = {0};
	struct sx_node *node = node_of(full_node, &err);

	CHECK(node != NULL);
	if (!node) {
		fprintf(stderr, "%s: %s\n", err.path, err.msg);
		return;
	}
	CHECK_STR(node->meta.name, "node-a");
	CHECK_STR(S(node->name_id), "node-a");
	CHECK_STR(node->meta.uid, "n-1");
	CHECK_STR(node->meta.resource_version, "7");
	CHECK_STR(label(&node->meta.labels, "topology.kubernetes.io/zone"), "eu-1a");
	CHECK(node->unschedulable);
	CHECK_INT(node->ntaints, 2);
	CHECK_STR(S(node->taints[0].key), "node-role.kubernetes.io/control-plane");
	CHECK_INT(node->taints[0].effect, SX_EFFECT_NO_SCHEDULE);
	CHECK_STR(S(node->taints[1].value), "v");
	CHECK_INT(node->taints[1].effect, SX_EFFECT_PREFER_NO_SCHEDULE);
	CHECK_INT(node->allocatable.milli_cpu, 3920);
	CHECK_INT(node->allocatable.memory, 15223432LL * 1024);
	CHECK_INT(node->allocatable.pods, 110);
	CHECK_INT(node->allocatable.ephemeral_storage, 93478772582LL);
	CHECK_INT(node->allocatable.nscalar, 2);
	CHECK(node->allocatable.scalar[0].name < node->allocatable.scalar[1].name);
	CHECK_INT(scalar(&node->allocatable, "hugepages-2Mi"), 0);
	CHECK_INT(scalar(&node->allocatable, "nvidia.com/gpu"), 1);
	CHECK_INT(node->capacity.milli_cpu, 4000);
	CHECK_INT(node->capacity.memory, 16211592LL * 1024);
	CHECK_INT(node->nconditions, 1);
	CHECK_STR(S(node->conditions[0].type), "Ready");
	CHECK_STR(S(node->conditions[0].status), "True");
	CHECK_INT(node->nimages, 2);
	CHECK_INT(node->images[0].size_bytes, 320368);
	CHECK_STR(S(node->images[0].names[0]), "registry.k8s.io/pause@sha256:1234");
	CHECK_STR(S(node->images[0].names[1]), "registry.k8s.io/pause:3.10");
	CHECK_STR(S(node->images[1].names[0]), "nginx:latest");
	CHECK_STR(S(node->images[1].names[1]), "localhost:5000/app:latest");
	struct sx_node *ref = sx_node_ref(node);
	CHECK(ref == node);
	sx_node_unref(node);
	sx_node_unref(ref);
}

static void test_other_kinds(void)
{
	static const char list[] =
		"{'kind':'List','items':["
		"{'kind':'Namespace','metadata':{'name':'prod','labels':{'team':'a'}}},"
		"{'kind':'Service','metadata':{'name':'s','namespace':'prod'},'spec':{'selector':{'"
		"app':'web'}}},"
		"{'kind':'Service','metadata':{'name':'headless'},'spec':{}},"
		"{'kind':'ReplicationController','metadata':{'name':'rc'},'spec':{'selector':{}}},"
		"{'kind':'ReplicaSet','metadata':{'name':'rs'},'spec':{'selector':{'matchLabels':{'"
		"app':'web'},"
		"   'matchExpressions':[{'key':'tier','operator':'DoesNotExist'}]}}},"
		"{'kind':'StatefulSet','metadata':{'name':'ss'},'spec':{}},"
		"{'kind':'PodDisruptionBudget','metadata':{'name':'pdb'},'spec':{'minAvailable':'"
		"50%',"
		"   'selector':{}},'status':{'disruptionsAllowed':2}},"
		"{'kind':'PodDisruptionBudget','metadata':{'name':'pdb2'},'spec':{'maxUnavailable':"
		"1}},"
		"{'kind':'StorageClass','metadata':{'name':'fast'},'provisioner':'ebs.csi.aws.com',"
		"   'volumeBindingMode':'WaitForFirstConsumer'},"
		"{'kind':'PersistentVolume','metadata':{'name':'pv1'},'spec':{'storageClassName':'"
		"fast',"
		"   'capacity':{'storage':'10Gi'},'csi':{'driver':'ebs.csi.aws.com'},"
		"   'claimRef':{'namespace':'prod','name':'data'},"
		"   "
		"'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'"
		"zone','operator':'In','values':['a']}]}]}}}},"
		"{'kind':'PersistentVolumeClaim','metadata':{'name':'data','namespace':'prod',"
		"   'annotations':{'volume.kubernetes.io/selected-node':'node-a'}},"
		"   "
		"'spec':{'volumeName':'pv1','storageClassName':'','accessModes':['ReadWriteOncePod'"
		"],"
		"   'resources':{'requests':{'storage':'5Gi'}}},'status':{'phase':'Bound'}},"
		"{'kind':'CSINode','metadata':{'name':'node-a'},'spec':{'drivers':[{'name':'ebs."
		"csi.aws.com',"
		"   "
		"'nodeID':'i-1','allocatable':{'count':25},'topologyKeys':['topology.ebs.csi.aws."
		"com/zone']}]}},"
		"{'kind':'Deployment','metadata':{'name':'d'}}]}";
	cJSON *j = parse(list), *items = cJSON_GetObjectItem(j, "items");
	struct sx_object objs[13];
	struct sx_error err;
	int i = 0;
	cJSON *it;

	cJSON_ArrayForEach(it, items)
	{
		int rc = sx_decode_object(it, NULL, &objs[i], &err);

		if (i < 12) {
			CHECK_INT(rc, 0);
		} else {
			CHECK_INT(rc, SX_ENOENT);
			CHECK_STR(err.msg, "unknown kind Deployment");
		}
		i++;
	}
	cJSON_Delete(j);
	CHECK_INT(objs[0].kind, SX_KIND_NAMESPACE);
	CHECK_STR(sx_object_meta(&objs[0])->name, "prod");
	CHECK_STR(label(&sx_object_meta(&objs[0])->labels, "team"), "a");
	const struct sx_generic *svc = objs[1].obj;
	CHECK(svc->has_map_selector);
	CHECK_STR(label(&svc->map_selector, "app"), "web");
	CHECK(!((const struct sx_generic *)objs[2].obj)->has_map_selector);
	CHECK(((const struct sx_generic *)objs[3].obj)->has_map_selector);
	CHECK_INT(((const struct sx_generic *)objs[3].obj)->map_selector.n, 0);
	const struct sx_generic *rs = objs[4].obj;
	CHECK_INT(rs->kind, SX_KIND_REPLICA_SET);
	CHECK_INT(rs->selector->nreqs, 2);
	CHECK_INT(rs->selector->reqs[0].op, SX_OP_EQUALS);
	CHECK_INT(rs->selector->reqs[1].op, SX_OP_DOES_NOT_EXIST);
	CHECK(((const struct sx_generic *)objs[5].obj)->selector == NULL);
	const struct sx_generic *pdb = objs[6].obj;
	CHECK(pdb->has_min_available && pdb->min_available_percent);
	CHECK_INT(pdb->min_available, 50);
	CHECK_INT(pdb->disruptions_allowed, 2);
	CHECK(pdb->selector && pdb->selector->nreqs == 0);
	pdb = objs[7].obj;
	CHECK(pdb->has_max_unavailable && !pdb->max_unavailable_percent);
	CHECK_INT(pdb->max_unavailable, 1);
	const struct sx_storage_class *sc = objs[8].obj;
	CHECK_STR(S(sc->provisioner), "ebs.csi.aws.com");
	CHECK(sc->wait_for_first_consumer);
	CHECK_INT(objs[9].kind, SX_KIND_PV);
	const struct sx_pv *pv = objs[9].obj;
	CHECK_STR(S(pv->storage_class), "fast");
	CHECK_INT(pv->capacity_storage, 10737418240LL);
	CHECK_STR(S(pv->csi_driver), "ebs.csi.aws.com");
	CHECK_STR(S(pv->claim_ns), "prod");
	CHECK_STR(S(pv->claim_name), "data");
	CHECK(pv->node_affinity && pv->node_affinity->nterms == 1);
	const struct sx_pvc *pvc = objs[10].obj;
	CHECK_STR(S(pvc->volume_name), "pv1");
	CHECK(pvc->has_storage_class);
	CHECK(pvc->storage_class == SX_STR_EMPTY);
	CHECK(pvc->bound);
	CHECK(pvc->read_write_once_pod);
	CHECK_STR(S(pvc->selected_node), "node-a");
	CHECK_INT(pvc->request_storage, 5368709120LL);
	const struct sx_csi_node *csi = objs[11].obj;
	CHECK_INT(csi->ndrivers, 1);
	CHECK(csi->drivers[0].has_count);
	CHECK_INT(csi->drivers[0].allocatable_count, 25);
	CHECK_STR(S(csi->drivers[0].topology_keys[0]), "topology.ebs.csi.aws.com/zone");
	for (int k = 0; k < 12; k++) {
		sx_object_unref(&objs[k]);
		CHECK(objs[k].obj == NULL);
	}
}

static void test_kind_names(void)
{
	CHECK_STR(sx_kind_name(SX_KIND_PDB), "PodDisruptionBudget");
	CHECK_STR(sx_kind_name(SX_KIND_CSI_NODE), "CSINode");
	CHECK_INT(sx_kind_from_name("PersistentVolumeClaim"), SX_KIND_PVC);
	CHECK_INT(sx_kind_from_name("pod"), SX_KIND_UNKNOWN);
	CHECK_INT(sx_kind_from_name(NULL), SX_KIND_UNKNOWN);
	/* A kind string names its first row; a later row of the same string
	 * (scheduling.x-k8s.io's PodGroup) is found by its group. */
	for (int k = 1; k < SX_KIND_COUNT; k++)
		if (k != SX_KIND_COSCHED_POD_GROUP)
			CHECK_INT(sx_kind_from_name(sx_kind_name((enum sx_kind)k)), k);
	CHECK_INT(sx_kind_from_name("PodGroup"), SX_KIND_POD_GROUP);
	CHECK_INT(sx_kind_lookup("scheduling.k8s.io/v1beta1", "PodGroup"), SX_KIND_POD_GROUP);
	CHECK_INT(sx_kind_lookup("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
		  SX_KIND_COSCHED_POD_GROUP);
	CHECK_INT(sx_kind_lookup("scheduling.x-k8s.io/v1alpha1", "Pod"), SX_KIND_POD);
	CHECK_INT(sx_kind_lookup("v1", "Pod"), SX_KIND_POD);
	CHECK_INT(sx_kind_lookup("", "Pod"), SX_KIND_POD);
	CHECK_INT(sx_kind_lookup("v1", "Deployment"), SX_KIND_UNKNOWN);
}

/* Decoding with an explicit kind (list items get it from the list). */
static void test_decode_object_kind_arg(void)
{
	cJSON *j = parse("{'metadata':{'name':'n1'}}");
	struct sx_object o;
	struct sx_error err;

	CHECK_INT(sx_decode_object(j, "Node", &o, &err), 0);
	CHECK_INT(o.kind, SX_KIND_NODE);
	CHECK_STR(sx_object_meta(&o)->name, "n1");
	sx_object_unref(&o);
	CHECK_INT(sx_decode_object(j, NULL, &o, &err), SX_EINVAL);
	CHECK_STR(err.path, "kind");
	cJSON_Delete(j);
}

static void test_parse_time(void)
{
	int64_t t;

	CHECK_INT(sx_parse_time("1970-01-01T00:00:00Z", &t), 0);
	CHECK_INT(t, 0);
	CHECK_INT(sx_parse_time("2025-06-01T12:00:06.518211Z", &t), 0);
	CHECK_INT(t, 1748779206);
	CHECK_INT(sx_parse_time("2025-06-01T14:00:06+02:00", &t), 0);
	CHECK_INT(t, 1748779206);
	CHECK_INT(sx_parse_time("2024-02-29T00:00:00-00:30", &t), 0);
	CHECK_INT(t, 1709166600);
	CHECK_INT(sx_parse_time("1969-12-31T23:59:59Z", &t), 0);
	CHECK_INT(t, -1);
	CHECK_INT(sx_parse_time("2023-02-29T00:00:00Z", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("2025-06-01 12:00:06Z", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("2025-06-01T12:00:06", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("2025-06-01T24:00:00Z", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("2025-06-01T12:00:06.Z", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("2025-06-01T12:00:06Zjunk", &t), SX_EINVAL);
	CHECK_INT(sx_parse_time("", &t), SX_EINVAL);
}

/* Each malformed input: the exact path and message. */
static void test_malformed(void)
{
	static const struct {
		const char *json, *path, *msg;
	} cases[] = {
		{"{'metadata':[]}", "metadata", "expected object, got array"},
		{"{'metadata':{'name':5}}", "metadata.name", "expected string, got number"},
		{"{'metadata':{'labels':{'a':1}}}", "metadata.labels.a",
		 "expected string, got number"},
		{"{'metadata':{'creationTimestamp':'yesterday'}}", "metadata.creationTimestamp",
		 "invalid time \"yesterday\""},
		{"{'spec':{'containers':[{'resources':{'requests':{'cpu':'1Gb'}}}]}}",
		 "spec.containers[0].resources.requests.cpu", "invalid quantity \"1Gb\""},
		{"{'spec':{'containers':[{},{'resources':{'requests':{'memory':'-1'}}}]}}",
		 "spec.containers[1].resources.requests.memory", "negative quantity \"-1\""},
		{"{'spec':{'containers':[{'resources':{'limits':{'cpu':true}}}]}}",
		 "spec.containers[0].resources.limits.cpu",
		 "expected quantity (string or number), got boolean"},
		{"{'spec':{'containers':{}}}", "spec.containers", "expected array, got object"},
		{"{'spec':{'containers':[5]}}", "spec.containers[0]",
		 "expected object, got number"},
		{"{'spec':{'priority':1.5}}", "spec.priority", "expected integer, got 1.5"},
		{"{'spec':{'priority':3000000000}}", "spec.priority",
		 "integer 3000000000 out of range"},
		{"{'spec':{'hostNetwork':'yes'}}", "spec.hostNetwork",
		 "expected boolean, got string"},
		{"{'spec':{'tolerations':[{},{'effect':'NoWay'}]}}", "spec.tolerations[1].effect",
		 "unknown effect \"NoWay\""},
		/* Lt and Gt are toleration operators since 1.35
		 * (TaintTolerationComparisonOperators); Ge is none */
		{"{'spec':{'tolerations':[{'operator':'Ge'}]}}", "spec.tolerations[0].operator",
		 "unknown operator \"Ge\""},
		{"{'spec':{'affinity':{'podAntiAffinity':{'"
		 "requiredDuringSchedulingIgnoredDuringExecution':"
		 "[{'labelSelector':{'matchExpressions':[{'key':'a','operator':'Gt','values':['1']}"
		 "]}}]}}}}",
		 "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
		 ".labelSelector.matchExpressions[0].operator",
		 "unknown operator \"Gt\""},
		{"{'spec':{'affinity':{'nodeAffinity':{'"
		 "requiredDuringSchedulingIgnoredDuringExecution':"
		 "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'a','operator':'In','values':["
		 "1]}]}]}}}}}",
		 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
		 ".nodeSelectorTerms[0].matchExpressions[0].values[0]",
		 "expected string, got number"},
		{"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'Sometimes'}]}}",
		 "spec.topologySpreadConstraints[0].whenUnsatisfiable",
		 "unknown whenUnsatisfiable \"Sometimes\""},
		{"{'spec':{'containers':[{'ports':[{'containerPort':80,'hostPort':70000}]}]}}",
		 "spec.containers[0].ports[0].hostPort", "port 70000 out of range"},
		{"{'spec':{'containers':[{'ports':[{'hostPort':80,'protocol':'tcp'}]}]}}",
		 "spec.containers[0].ports[0].protocol", "unknown protocol \"tcp\""},
		{"{'spec':{'volumes':[{'persistentVolumeClaim':{'claimName':['x']}}]}}",
		 "spec.volumes[0].persistentVolumeClaim.claimName", "expected string, got array"},
		{"{'spec':{'schedulingGates':['x']}}", "spec.schedulingGates[0]",
		 "expected object, got string"},
		{"{'status':{'phase':'Dancing'}}", "status.phase", "unknown phase \"Dancing\""},
		{"{'metadata':{'ownerReferences':[{'controller':'true'}]}}",
		 "metadata.ownerReferences[0].controller", "expected boolean, got string"},
		{"{'spec':{'overhead':{'cpu':'1E'}}}", "spec.overhead.cpu",
		 "quantity out of range"},
		{"{'spec':{'containers':[{'resources':{'requests':{'cpu':'5P'}}},"
		 "{'resources':{'requests':{'cpu':'5P'}}}]}}",
		 "spec", "total cpu request out of range"},
		{"{'spec':{'containers':[{'resources':{'requests':{'memory':'1e100'}}}]}}",
		 "spec.containers[0].resources.requests.memory", "quantity \"1e100\" out of range"},
		{"{'status':{'containerStatuses':[{'name':'a','resources':{'requests':{'cpu':'x'}}}"
		 "]},"
		 "'spec':{'containers':[{'name':'a'}]}}",
		 "status.containerStatuses[0].resources.requests.cpu", "invalid quantity \"x\""},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct sx_error err = {0};
		struct sx_pod *pod = pod_of(cases[i].json, &err);

		CHECK(pod == NULL);
		sx_pod_unref(pod);
		CHECK_STR(err.path, cases[i].path);
		CHECK_STR(err.msg, cases[i].msg);
		CHECK(err.code < 0);
	}

	/* node side */
	struct sx_error err = {0};
	CHECK(node_of("{'status':{'allocatable':{'cpu':'4 cores'}}}", &err) == NULL);
	CHECK_STR(err.path, "status.allocatable.cpu");
	CHECK_STR(err.msg, "invalid quantity \"4 cores\"");
	CHECK(node_of("{'spec':{'taints':[{'key':'a','effect':'Sometimes'}]}}", &err) == NULL);
	CHECK_STR(err.path, "spec.taints[0].effect");
	CHECK(node_of("{'status':{'images':[{'names':['a',{}]}]}}", &err) == NULL);
	CHECK_STR(err.path, "status.images[0].names[1]");
	CHECK(node_of("{'status':{'images':[{'sizeBytes':-1}]}}", &err) == NULL);
	CHECK_STR(err.path, "status.images[0].sizeBytes");
	CHECK(node_of("[]", &err) == NULL);
	CHECK_STR(err.msg, "expected object, got array");

	/* other kinds */
	struct sx_object o;
	cJSON *j = parse("{'kind':'PodDisruptionBudget','spec':{'minAvailable':'half'}}");
	CHECK_INT(sx_decode_object(j, NULL, &o, &err), SX_EINVAL);
	CHECK_STR(err.path, "spec.minAvailable");
	CHECK_STR(err.msg, "invalid percentage \"half\"");
	cJSON_Delete(j);
	j = parse("{'kind':'CSINode','spec':{'drivers':[{'allocatable':{'count':'5'}}]}}");
	CHECK_INT(sx_decode_object(j, NULL, &o, &err), SX_EINVAL);
	CHECK_STR(err.path, "spec.drivers[0].allocatable.count");
	cJSON_Delete(j);
	j = parse("{'kind':7}");
	CHECK_INT(sx_decode_object(j, NULL, &o, &err), SX_EINVAL);
	CHECK_STR(err.path, "kind");
	cJSON_Delete(j);
}

/* Nulls and wrong types as array elements and sub-objects, in every kind
 * (the shared helpers of src/decode_util.h build these paths). */
static void test_element_edges(void)
{
	static const struct {
		const char *kind, *json, *path, *msg;
	} cases[] = {
		{"Pod", "{'spec':{'tolerations':[{},null]}}", "spec.tolerations[1]",
		 "expected object, got null"},
		{"Pod", "{'spec':{'topologySpreadConstraints':[[]]}}",
		 "spec.topologySpreadConstraints[0]", "expected object, got array"},
		{"Pod", "{'spec':{'containers':[{'ports':[null]}]}}", "spec.containers[0].ports[0]",
		 "expected object, got null"},
		{"Pod", "{'spec':{'volumes':[{'name':'v'},7]}}", "spec.volumes[1]",
		 "expected object, got number"},
		{"Pod", "{'status':{'conditions':[{'type':'Ready'},{'reason':false}]}}",
		 "status.conditions[1].reason", "expected string, got boolean"},
		{"Pod", "{'metadata':{'ownerReferences':[null]}}", "metadata.ownerReferences[0]",
		 "expected object, got null"},
		{"Pod",
		 "{'spec':{'affinity':{'podAffinity':{'"
		 "preferredDuringSchedulingIgnoredDuringExecution':"
		 "[{'weight':1,'podAffinityTerm':[]}]}}}}",
		 "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
		 ".podAffinityTerm",
		 "expected object, got array"},
		{"Pod",
		 "{'spec':{'affinity':{'podAffinity':{'"
		 "requiredDuringSchedulingIgnoredDuringExecution':"
		 "[{'namespaces':['a',null]}]}}}}",
		 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
		 ".namespaces[1]",
		 "expected string, got null"},
		{"Node", "{'spec':{'taints':[null]}}", "spec.taints[0]",
		 "expected object, got null"},
		{"Node", "{'status':{'conditions':[{'type':1}]}}", "status.conditions[0].type",
		 "expected string, got number"},
		{"Node", "{'status':{'images':[{'names':'a'}]}}", "status.images[0].names",
		 "expected array, got string"},
		{"CSINode", "{'spec':{'drivers':[null]}}", "spec.drivers[0]",
		 "expected object, got null"},
		{"CSINode", "{'spec':{'drivers':[{'allocatable':5}]}}",
		 "spec.drivers[0].allocatable", "expected object, got number"},
		{"PersistentVolumeClaim", "{'spec':{'accessModes':['ReadWriteOnce',null]}}",
		 "spec.accessModes[1]", "expected string, got null"},
		{"PersistentVolume", "{'spec':{'claimRef':[]}}", "spec.claimRef",
		 "expected object, got array"},
		{"PersistentVolume", "{'spec':{'csi':{'driver':{}}}}", "spec.csi.driver",
		 "expected string, got object"},
		{"PersistentVolume",
		 "{'spec':{'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchFields':[null]}]"
		 "}}}}",
		 "spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0]",
		 "expected object, got null"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		cJSON *j = parse(cases[i].json);
		struct sx_error err = {0};
		struct sx_object o;

		CHECK_INT(sx_decode_object(j, cases[i].kind, &o, &err), SX_EINVAL);
		CHECK_STR(err.path, cases[i].path);
		CHECK_STR(err.msg, cases[i].msg);
		cJSON_Delete(j);
	}
}

static cJSON *nth_node(cJSON *root, int *k, cJSON **parent);

/* Every array field of a full pod and node over the limit. */
static void test_array_limits(void)
{
	const char *docs[] = {full_pod, full_node};

	for (int d = 0; d < 2; d++) {
		cJSON *orig = parse(docs[d]);
		int over = 0;

		for (int k = 0;; k++) {
			cJSON *copy = cJSON_Duplicate(orig, true), *parent = NULL;
			int idx = k;
			cJSON *v = nth_node(copy, &idx, &parent), *big;
			struct sx_error err = {0};
			struct sx_object o;
			char want[sizeof(err.path)];

			if (!v) {
				cJSON_Delete(copy);
				break;
			}
			if (!cJSON_IsArray(v) || !v->string || !v->child) {
				cJSON_Delete(copy);
				continue;
			}
			big = cJSON_CreateArray();
			for (int i = 0; i <= SX_DECODE_MAX_ITEMS; i++)
				cJSON_AddItemToArray(big, cJSON_Duplicate(v->child, true));
			cJSON_ReplaceItemInObjectCaseSensitive(parent, v->string, big);
			CHECK(sx_decode_object(copy, d ? "Node" : "Pod", &o, &err) < 0);
			CHECK_INT(err.code, SX_ETOOBIG);
			/* the path ends at the array's own key */
			snprintf(want, sizeof(want), "%s", big->string);
			size_t pl = strlen(err.path), wl = strlen(want);
			CHECK(pl >= wl && strcmp(err.path + pl - wl, want) == 0);
			over++;
			cJSON_Delete(copy);
		}
		CHECK(over >= (d ? 4 : 15));
		cJSON_Delete(orig);
	}
}

/* Arrays and strings over the limits. */
static void test_limits(void)
{
	cJSON *pod = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(pod, "spec");
	cJSON *gates = cJSON_AddArrayToObject(spec, "schedulingGates");
	struct sx_error err;
	char *big;

	for (int i = 0; i <= SX_DECODE_MAX_ITEMS; i++)
		cJSON_AddItemToArray(gates, cJSON_CreateObject());
	CHECK(sx_decode_pod(pod, &err) == NULL);
	CHECK_STR(err.path, "spec.schedulingGates");
	CHECK_INT(err.code, SX_ETOOBIG);
	cJSON_Delete(pod);

	big = malloc(SX_DECODE_MAX_STRING + 2);
	memset(big, 'a', SX_DECODE_MAX_STRING + 1);
	big[SX_DECODE_MAX_STRING + 1] = '\0';
	pod = cJSON_CreateObject();
	cJSON_AddStringToObject(cJSON_AddObjectToObject(pod, "spec"), "nodeName", big);
	CHECK(sx_decode_pod(pod, &err) == NULL);
	CHECK_STR(err.path, "spec.nodeName");
	CHECK_INT(err.code, SX_ETOOBIG);
	cJSON_Delete(pod);
	free(big);
}

/* Decode -> ref -> unref cycles of every shape; ASan proves no leak. */
static void test_decode_free_cycle(void)
{
	for (int i = 0; i < 50; i++) {
		struct sx_error err;
		struct sx_pod *pod = pod_of(full_pod, &err);
		struct sx_node *node = node_of(full_node, &err);
		struct sx_pod *ref = sx_pod_ref(pod);

		sx_pod_unref(pod);
		sx_pod_unref(ref);
		sx_node_unref(node);
	}
	sx_pod_unref(NULL);
	sx_node_unref(NULL);
	/* errors late in a big object free what was built */
	struct sx_error err;
	char *bad = strdup(full_pod);
	char *p = strstr(bad, "'Running'");
	memcpy(p, "'Dancing'", 9);
	CHECK(pod_of(bad, &err) == NULL);
	CHECK_STR(err.path, "status.phase");
	free(bad);
}

static void test_label_duplicates(void)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of("{'metadata':{'labels':{'a':'1','b':'2','a':'3'}}}", &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->meta.labels.n, 2);
	CHECK_STR(label(&pod->meta.labels, "a"), "3");
	sx_pod_unref(pod);
}

static void test_node_affinity_api(void)
{
	struct sx_error err;
	cJSON *j = parse("{'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':5,"
			 "'preference':{'matchFields':[{'key':'metadata.name','operator':'NotIn','"
			 "values':['x']}]}}]}");
	struct sx_node_affinity *na = sx_decode_node_affinity(j, &err);

	CHECK(na != NULL);
	CHECK(na && na->required == NULL);
	CHECK(na && na->npreferred == 1 &&
	      na->preferred[0].preference.fields[0].op == SX_OP_NOT_IN);
	sx_node_affinity_free(na);
	cJSON_Delete(j);
	j = parse("{'matchLabels':{'a':'b'},'matchExpressions':[{'key':'c','operator':'Exists'}]}");
	struct sx_label_selector *sel = sx_decode_label_selector(j, &err);
	CHECK(sel && sel->nreqs == 2);
	sx_label_selector_free(sel);
	cJSON_Delete(j);
}

/* ---------- sx_parse_documents ---------- */

static void test_parse_json_documents(void)
{
	static const char good[] = " {\"kind\": \"Pod\"}\n ";
	static const char trailing[] = "{\"a\": 1} x";
	static const char bad[] = "{\"a\": 1,\n \"b\": }";
	struct sx_error err = {0};
	cJSON *d = sx_parse_documents(good, strlen(good), &err);

	CHECK(cJSON_IsArray(d));
	CHECK_INT(cJSON_GetArraySize(d), 1);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "kind")->valuestring, "Pod");
	cJSON_Delete(d);
	CHECK(sx_parse_documents(trailing, strlen(trailing), &err) == NULL);
	CHECK_STR(err.msg, "JSON line 1 column 10: syntax error");
	CHECK(sx_parse_documents(bad, strlen(bad), &err) == NULL);
	CHECK_STR(err.msg, "JSON line 2 column 7: syntax error");
	CHECK(sx_parse_documents("{a: b}", 6, &err) == NULL); /* JSON only */
	/* not NUL-terminated */
	d = sx_parse_documents("[1,2]xyz", 5, &err);
	CHECK(d && cJSON_GetArraySize(cJSON_GetArrayItem(d, 0)) == 2);
	cJSON_Delete(d);
}

static void test_parse_deep(void)
{
	size_t n = 5000;
	char *s = malloc(2 * n + 1);
	struct sx_error err;

	for (size_t i = 0; i < n; i++) {
		s[i] = '[';
		s[n + i] = ']';
	}
	s[2 * n] = '\0';
	CHECK(sx_parse_documents(s, 2 * n, &err) == NULL);
	CHECK_STR(err.msg, "JSON line 1 column 65: nesting deeper than 64 levels");
	/* YAML flow and block nesting too */
	for (size_t i = 0; i < n; i++)
		s[i] = '-', s[n + i] = ' ';
	for (size_t i = 0; i < n; i++) {
		s[2 * i] = '-';
		s[2 * i + 1] = ' ';
	}
	CHECK(sx_parse_documents(s, 2 * n, &err) == NULL);
	CHECK_INT(err.code, SX_ETOOBIG);
	free(s);
	/* exactly 64 is fine */
	char ok[129];
	memset(ok, '[', 64);
	memset(ok + 64, ']', 64);
	ok[128] = '\0';
	cJSON *d = sx_parse_documents(ok, 128, &err);
	CHECK(d != NULL);
	cJSON_Delete(d);
}

static void test_parse_yaml(void)
{
	static const char yaml[] =
		"# cluster\n"
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata:\n"
		"  name: node-a\n"
		"  labels: {zone: a, \"quoted\": \"true\"}\n"
		"status:\n"
		"  allocatable:\n"
		"    cpu: 4\n"
		"    memory: 8Gi\n"
		"    pods: '110'\n"
		"---\n"
		"kind: Pod\n"
		"metadata: {name: p}\n"
		"spec:\n"
		"  priority: -10\n"
		"  x: [1.5, 0x10, 010, ~, null, true, False, yes, '3', 1e3, .5, 1.2.3, -0]\n"
		"  empty:\n"
		"---\n"
		"# empty document\n";
	struct sx_error err = {0};
	cJSON *d = sx_parse_documents(yaml, strlen(yaml), &err);
	struct sx_node *node;

	CHECK(d != NULL);
	if (!d) {
		fprintf(stderr, "%s\n", err.msg);
		return;
	}
	CHECK_INT(cJSON_GetArraySize(d), 3);
	node = sx_decode_node(cJSON_GetArrayItem(d, 0), &err);
	CHECK(node != NULL);
	if (node) {
		CHECK_STR(node->meta.name, "node-a");
		CHECK_INT(node->allocatable.milli_cpu, 4000);
		CHECK_INT(node->allocatable.memory, 8589934592LL);
		CHECK_INT(node->allocatable.pods, 110);
		CHECK_STR(label(&node->meta.labels, "quoted"), "true");
		sx_node_unref(node);
	}
	cJSON *spec = cJSON_GetObjectItem(cJSON_GetArrayItem(d, 1), "spec");
	CHECK_INT(cJSON_GetObjectItem(spec, "priority")->valuedouble, -10);
	cJSON *x = cJSON_GetObjectItem(spec, "x");
	CHECK_INT(cJSON_GetArraySize(x), 13);
	CHECK(cJSON_GetArrayItem(x, 0)->valuedouble == 1.5);
	CHECK_INT(cJSON_GetArrayItem(x, 1)->valuedouble, 16);
	CHECK_INT(cJSON_GetArrayItem(x, 2)->valuedouble, 8);
	CHECK(cJSON_IsNull(cJSON_GetArrayItem(x, 3)));
	CHECK(cJSON_IsNull(cJSON_GetArrayItem(x, 4)));
	CHECK(cJSON_IsTrue(cJSON_GetArrayItem(x, 5)));
	CHECK(cJSON_IsFalse(cJSON_GetArrayItem(x, 6)));
	CHECK_STR(cJSON_GetArrayItem(x, 7)->valuestring, "yes");
	CHECK_STR(cJSON_GetArrayItem(x, 8)->valuestring, "3");
	CHECK_INT(cJSON_GetArrayItem(x, 9)->valuedouble, 1000);
	CHECK(cJSON_GetArrayItem(x, 10)->valuedouble == 0.5);
	CHECK_STR(cJSON_GetArrayItem(x, 11)->valuestring, "1.2.3");
	CHECK(cJSON_IsNumber(cJSON_GetArrayItem(x, 12)));
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(spec, "empty")));
	CHECK(cJSON_IsNull(cJSON_GetArrayItem(d, 2)));
	cJSON_Delete(d);
}

static void test_parse_yaml_errors(void)
{
	static const char anchors[] = "a: &x {b: 1}\nc: *x\n";
	static const char bad[] = "a: 1\n  b: 2\n";
	static const char complex_key[] = "? [a]\n: 1\n";
	struct sx_error err = {0};

	CHECK(sx_parse_documents(anchors, strlen(anchors), &err) == NULL);
	CHECK_STR(err.msg, "YAML line 1 column 4: anchors and aliases are not supported");
	CHECK(sx_parse_documents(bad, strlen(bad), &err) == NULL);
	CHECK_STR(err.msg, "YAML line 2 column 4: mapping values are not allowed in this context");
	CHECK(sx_parse_documents(complex_key, strlen(complex_key), &err) == NULL);
	CHECK_STR(err.msg, "YAML line 1 column 3: mapping keys must be scalars");
	cJSON *d = sx_parse_documents("", 0, &err);
	CHECK(d && cJSON_GetArraySize(d) == 0);
	cJSON_Delete(d);
	/* flow YAML inside block YAML */
	d = sx_parse_documents("a: {b: [c]}", 11, &err);
	CHECK(d && cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "a")));
	cJSON_Delete(d);
}

/* Quantities given as JSON numbers. */
static void test_numeric_quantities(void)
{
	struct sx_error err;
	struct sx_pod *pod = pod_of("{'spec':{'containers':[{'resources':{'requests':"
				    "{'cpu':0.1,'memory':1e9,'example.com/x':3}}}]}}",
				    &err);

	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->request.milli_cpu, 100);
	CHECK_INT(pod->request.memory, 1000000000);
	CHECK_INT(scalar(&pod->request, "example.com/x"), 3);
	sx_pod_unref(pod);
}

/* Pre-order walk: the k-th node below root (root excluded) and its parent. */
static cJSON *nth_node(cJSON *root, int *k, cJSON **parent)
{
	cJSON *it, *found;

	cJSON_ArrayForEach(it, root)
	{
		if ((*k)-- == 0) {
			*parent = root;
			return it;
		}
		if ((found = nth_node(it, k, parent)))
			return found;
	}
	return NULL;
}

/* Every node of the full pod and node replaced by every JSON type in turn:
 * each decode either succeeds or fails with a path, never crashes, and
 * frees everything (ASan). */
static void test_type_mutations(void)
{
	const char *docs[] = {full_pod, full_node};
	int decoded = 0, rejected = 0;

	for (int d = 0; d < 2; d++) {
		cJSON *orig = parse(docs[d]);

		for (int k = 0;; k++) {
			cJSON *copy = cJSON_Duplicate(orig, true), *parent = NULL;
			int idx = k;
			cJSON *victim = nth_node(copy, &idx, &parent);

			if (!victim) {
				cJSON_Delete(copy);
				break;
			}
			for (int t = 0; t < 5; t++) {
				cJSON *rep = t == 0   ? cJSON_CreateNumber(-3.5)
					     : t == 1 ? cJSON_CreateString("x")
					     : t == 2 ? cJSON_CreateArray()
					     : t == 3 ? cJSON_CreateObject()
						      : cJSON_CreateNull();
				cJSON *mut = cJSON_Duplicate(copy, true), *mparent = NULL;
				int j = k;
				cJSON *mv = nth_node(mut, &j, &mparent);
				struct sx_error err = {0};
				struct sx_object o;

				if (mv->string) /* keep the member name */
					rep->string = strdup(mv->string);
				cJSON_ReplaceItemViaPointer(mparent, mv, rep);
				if (sx_decode_object(mut, d ? "Node" : "Pod", &o, &err) == 0) {
					decoded++;
					sx_object_unref(&o);
				} else {
					rejected++;
					CHECK(err.msg[0] != '\0');
				}
				cJSON_Delete(mut);
			}
			cJSON_Delete(copy);
		}
		cJSON_Delete(orig);
	}
	CHECK(decoded > 100);
	CHECK(rejected > 100);
}

SX_TESTS(SX_TEST(test_full_pod), SX_TEST(test_type_mutations), SX_TEST(test_pod_defaults),
	 SX_TEST(test_effective_request_example), SX_TEST(test_exact_sums),
	 SX_TEST(test_nonzero_defaults), SX_TEST(test_overhead_and_pod_level),
	 SX_TEST(test_resize_status), SX_TEST(test_pod_level_resize),
	 SX_TEST(test_host_network_ports), SX_TEST(test_full_node), SX_TEST(test_other_kinds),
	 SX_TEST(test_kind_names), SX_TEST(test_decode_object_kind_arg), SX_TEST(test_parse_time),
	 SX_TEST(test_malformed), SX_TEST(test_limits), SX_TEST(test_decode_free_cycle),
	 SX_TEST(test_label_duplicates), SX_TEST(test_node_affinity_api),
	 SX_TEST(test_parse_json_documents), SX_TEST(test_parse_deep), SX_TEST(test_parse_yaml),
	 SX_TEST(test_parse_yaml_errors), SX_TEST(test_numeric_quantities),
	 SX_TEST(test_element_edges), SX_TEST(test_array_limits))
