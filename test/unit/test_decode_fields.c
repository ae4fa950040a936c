/* Unknown fields of Pods and Nodes (src/api/decode_fields.c): Strict
 * stops at the first with kube-apiserver's words, Warn reports each path
 * in document order, Ignore and unchecked kinds report nothing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/decode.h"

struct seen {
	char paths[8][128];
	int n, stop_after;
};

static int note(void *ctx, const char *path)
{
	struct seen *s = ctx;

	if (s->n < 8)
		snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", path);
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static const char pod_json[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"any\":"
	"\"x\"},"
	"\"bogusMeta\":1},\"spec\":{\"contianers\":[],\"containers\":[{\"name\":\"c\","
	"\"resources\":{\"requests\":{\"cpu\":\"1\"},\"requets\":{}},\"livenessProbe\":{"
	"\"anything\":1}},"
	"{\"name\":\"d\",\"Image\":\"x\"}],\"affinity\":{\"nodeAffinity\":{"
	"\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	"\"matchExpresions\":[]}]}}},"
	"\"tolerations\":null,\"volumes\":[{\"name\":\"v\",\"csi\":{\"driver\":\"x\",\"new\":1}}]},"
	"\"status\":{\"whatever\":1}}";

static void test_strict_first_unknown(void)
{
	cJSON *j = cJSON_Parse(pod_json);
	struct sx_error err = {0};

	CHECK_INT(sx_decode_check_fields(j, SX_KIND_POD, SX_FIELDS_STRICT, NULL, NULL, &err),
		  SX_EINVAL);
	CHECK_STR(err.msg, "strict decoding error: unknown field \"metadata.bogusMeta\"");
	cJSON_Delete(j);
}

static void test_warn_every_path(void)
{
	cJSON *j = cJSON_Parse(pod_json);
	struct seen s = {0};

	CHECK_INT(sx_decode_check_fields(j, SX_KIND_POD, SX_FIELDS_WARN, note, &s, NULL), 5);
	CHECK_INT(s.n, 5);
	CHECK_STR(s.paths[0], "metadata.bogusMeta");
	CHECK_STR(s.paths[1], "spec.contianers");
	CHECK_STR(s.paths[2], "spec.containers[0].resources.requets");
	/* case-sensitive, as the apiserver's strict decoder */
	CHECK_STR(s.paths[3], "spec.containers[1].Image");
	CHECK_STR(s.paths[4],
		  "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		  "nodeSelectorTerms[0].matchExpresions");
	s = (struct seen){.stop_after = 2};
	CHECK_INT(sx_decode_check_fields(j, SX_KIND_POD, SX_FIELDS_WARN, note, &s, NULL), 2);
	cJSON_Delete(j);
}

static void test_node_and_others(void)
{
	cJSON *n =
		cJSON_Parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":"
			    "[{\"key\":\"k\",\"effect\":\"NoSchedule\",\"efect\":1}]},"
			    "\"status\":{\"allocatable\":{}}}");
	cJSON *pv = cJSON_Parse("{\"kind\":\"PersistentVolume\",\"spec\":{\"anything\":1}}");
	struct sx_error err = {0};

	CHECK_INT(sx_decode_check_fields(n, SX_KIND_NODE, SX_FIELDS_STRICT, NULL, NULL, &err),
		  SX_EINVAL);
	CHECK_STR(err.msg, "strict decoding error: unknown field \"spec.taints[0].efect\"");
	CHECK_INT(sx_decode_check_fields(n, SX_KIND_NODE, SX_FIELDS_IGNORE, NULL, NULL, &err), 0);
	CHECK_INT(sx_decode_check_fields(pv, SX_KIND_PV, SX_FIELDS_STRICT, NULL, NULL, &err), 0);
	cJSON_Delete(n);
	cJSON_Delete(pv);
}

static void test_clean_pod(void)
{
	cJSON *j = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
			       "\"p\",\"namespace\":\"d\","
			       "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\","
			       "\"uid\":\"u\",\"controller\":true}]},"
			       "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
			       "\"ports\":[{\"containerPort\":80,"
			       "\"hostPort\":80}],\"env\":[{\"name\":\"A\",\"valueFrom\":{\"x\":1}}"
			       "]}],\"topologySpreadConstraints\":"
			       "[{\"maxSkew\":1,\"topologyKey\":\"z\",\"whenUnsatisfiable\":"
			       "\"DoNotSchedule\",\"labelSelector\":"
			       "{\"matchLabels\":{\"a\":\"b\"}}}],\"schedulingGates\":[{\"name\":"
			       "\"g\"}],\"resourceClaims\":"
			       "[{\"name\":\"c\",\"resourceClaimTemplateName\":\"t\"}]}}");
	struct sx_error err = {0};

	CHECK_INT(sx_decode_check_fields(j, SX_KIND_POD, SX_FIELDS_STRICT, NULL, NULL, &err), 0);
	cJSON_Delete(j);
}

SX_TESTS(SX_TEST(test_strict_first_unknown), SX_TEST(test_warn_every_path),
	 SX_TEST(test_node_and_others), SX_TEST(test_clean_pod))
