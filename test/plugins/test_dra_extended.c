/* Extended resources backed by DRA: the special claim's requests and the
 * pod's request mappings (src/dra/dra_extended.c), transcribed from
 * upstream's
 * pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go
 * (Test_createRequestsAndMappings_requests and _mappings; pods built as
 * st.MakePod does: Res adds container con<i>, InitReq init container
 * init-con<i>, SidecarReq init container sidecar-con<i> restarting
 * Always). The resources a case passes are those of its
 * extendedResources the case's class mapping resolves. */
#include <stdio.h>

#include "plugin_util.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"

#define ERN	 "example.com/gpu" /* upstream's extendedResourceName */
#define IMPLICIT SX_DRA_CLASS_PREFIX "classInit"

#define CON(name, reqs)                                                                            \
	"{\"name\":\"" name "\",\"image\":\"i\",\"resources\":{\"requests\":{" reqs "}}}"
#define SIDECAR(name, reqs)                                                                        \
	"{\"name\":\"" name "\",\"image\":\"i\",\"restartPolicy\":\"Always\",\"resources\":{"      \
	"\"requests\":{" reqs "}}}"
#define POD(init, cons)                                                                            \
	"{\"metadata\":{\"name\":\"pod\",\"namespace\":\"ns\",\"uid\":\"uid\"},\"spec\":{"         \
	"\"initContainers\":[" init "],\"containers\":[" cons "]}}"

static const char *const pod1 = POD("", CON("con0", "\"" ERN "\":\"1\",\"" ERN "1\":\"2\""));
static const char *const pod2 =
	POD("", CON("con0", "\"" ERN "\":\"1\"") "," CON("con1", "\"" ERN "1\":\"2\""));
static const char *const pod_init =
	POD(CON("init-con0", "\"" ERN "init\":\"2\""), CON("con0", "\"" ERN "\":\"1\""));
static const char *const pod_init2 =
	POD(CON("init-con0", "\"" ERN "init\":\"1\"") "," CON("init-con1", "\"" ERN "init\":\"2\""),
	    CON("con0", "\"" ERN "\":\"1\""));
static const char *const pod_init3 =
	POD(CON("init-con0", "\"" ERN "init\":\"1\"") "," SIDECAR(
		    "sidecar-con1", "\"" ERN "init\":\"1\"") "," CON("init-con2",
								     "\"" ERN "init\":\"2\""),
	    CON("con0", "\"" ERN "\":\"1\""));
static const char *const pod1_init_implicit =
	POD(CON("init-con0", "\"" ERN "init\":\"1\",\"" IMPLICIT "\":\"2\""), "");
static const char *const pod_init_implicit = POD(
	CON("init-con0", "\"" ERN "init\":\"1\"") "," CON("init-con1", "\"" IMPLICIT "\":\"2\""),
	CON("con0", "\"" ERN "\":\"1\""));

struct tcase {
	const char *name;
	const char *pod;
	const char *res[3], *cls[3]; /* resolved resources and their classes */
	const char *want;	     /* requests "name class count;..." in name order, or
				      * mappings "request container resource;..." sorted */
};

/* Test_createRequestsAndMappings_requests */
static const struct tcase requests[] = {
	{"nil", pod1, {NULL}, {NULL}, ""},
	{"one resource match", pod1, {ERN}, {"class"}, "container-0-request-0 class 1;"},
	{"one resource match, one resource not match",
	 pod1,
	 {ERN},
	 {"class"},
	 "container-0-request-0 class 1;"},
	{"two resources match",
	 pod1,
	 {ERN, ERN "1"},
	 {"class", "class1"},
	 "container-0-request-0 class 1;container-0-request-1 class1 2;"},
	{"two containers match",
	 pod2,
	 {ERN, ERN "1"},
	 {"class", "class1"},
	 "container-0-request-0 class 1;container-1-request-0 class1 2;"},
	{"one init container, one regular container",
	 pod_init,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-0-request-0 classInit 2;container-1-request-0 class 1;"},
	{"two init containers, one regular container",
	 pod_init2,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-1-request-0 classInit 2;container-2-request-0 class 1;"},
	{"three init containers, one sidecar, one regular container",
	 pod_init3,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-1-request-0 classInit 1;container-2-request-0 classInit 2;"
	 "container-3-request-0 class 1;"},
};

/* Test_createRequestsAndMappings_mappings (sorted by request, then container) */
static const struct tcase mappings[] = {
	{"one container, two requests",
	 pod1,
	 {ERN, ERN "1"},
	 {"class", "class1"},
	 "container-0-request-0 con0 " ERN ";container-0-request-1 con0 " ERN "1;"},
	{"one container, one explicit and one implicit request",
	 pod1_init_implicit,
	 {ERN, ERN "init", IMPLICIT},
	 {"class", "classInit", "classInit"},
	 "container-0-request-0 init-con0 " IMPLICIT ";container-0-request-1 init-con0 " ERN
	 "init;"},
	{"two containers, two requests",
	 pod2,
	 {ERN, ERN "1"},
	 {"class", "class1"},
	 "container-0-request-0 con0 " ERN ";container-1-request-0 con1 " ERN "1;"},
	{"one init container, one regular container, one request",
	 pod_init,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-0-request-0 init-con0 " ERN "init;container-1-request-0 con0 " ERN ";"},
	{"three containers (two are init container), two requests",
	 pod_init2,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-1-request-0 init-con0 " ERN "init;container-1-request-0 init-con1 " ERN
	 "init;container-2-request-0 con0 " ERN ";"},
	{"three containers (two are init container), both explicit and implicit resources",
	 pod_init_implicit,
	 {ERN, ERN "init", IMPLICIT},
	 {"class", "classInit", "classInit"},
	 "container-0-request-0 init-con0 " ERN "init;container-1-request-0 init-con1 " IMPLICIT
	 ";container-2-request-0 con0 " ERN ";"},
	{"four containers (two are init container, one sidecar), three requests",
	 pod_init3,
	 {ERN, ERN "init"},
	 {"class", "classInit"},
	 "container-1-request-0 init-con0 " ERN "init;container-1-request-0 sidecar-con1 " ERN
	 "init;container-2-request-0 init-con2 " ERN "init;container-3-request-0 con0 " ERN ";"},
};

static cJSON *build(const struct tcase *t, cJSON **maps)
{
	struct sx_pod *pod = tu_pod(t->pod);
	sx_str res[3];
	uint32_t n = 0;
	cJSON *claim;

	while (n < 3 && t->res[n]) {
		res[n] = sx_intern(t->res[n]);
		n++;
	}
	claim = sx_dra_extended_claim_json(pod, res, t->cls, n, maps);
	sx_pod_unref(pod);
	return claim;
}

static void test_requests(void)
{
	for (size_t i = 0; i < SX_ARRAY_SIZE(requests); i++) {
		const struct tcase *t = &requests[i];
		cJSON *maps = NULL, *claim = build(t, &maps), *r;
		char got[1024] = "";
		size_t off = 0;

		cJSON_ArrayForEach(
			r,
			cJSON_GetObjectItem(
				cJSON_GetObjectItem(cJSON_GetObjectItem(claim, "spec"), "devices"),
				"requests"))
		{
			const cJSON *ex = cJSON_GetObjectItem(r, "exactly");

			off += (size_t)snprintf(
				got + off, sizeof(got) - off, "%s %s %d;",
				cJSON_GetObjectItem(r, "name")->valuestring,
				cJSON_GetObjectItem(ex, "deviceClassName")->valuestring,
				cJSON_GetObjectItem(ex, "count")->valueint);
			CHECK_STR(cJSON_GetObjectItem(ex, "allocationMode")->valuestring,
				  "ExactCount");
		}
		if (strcmp(got, t->want))
			sx_test_fail(__FILE__, __LINE__, "%s: requests %s, want %s", t->name, got,
				     t->want);
		cJSON_Delete(claim);
		cJSON_Delete(maps);
	}
}

static int cmp_map(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void test_mappings(void)
{
	for (size_t i = 0; i < SX_ARRAY_SIZE(mappings); i++) {
		const struct tcase *t = &mappings[i];
		cJSON *maps = NULL, *claim = build(t, &maps), *m;
		char lines[16][256], got[2048] = "";
		const char *sorted[16];
		size_t off = 0;
		int n = 0;

		cJSON_ArrayForEach(m, maps)
		{
			if (n == 16)
				break;
			snprintf(lines[n], sizeof(lines[n]), "%s %s %s;",
				 cJSON_GetObjectItem(m, "requestName")->valuestring,
				 cJSON_GetObjectItem(m, "containerName")->valuestring,
				 cJSON_GetObjectItem(m, "resourceName")->valuestring);
			sorted[n] = lines[n];
			n++;
		}
		qsort(sorted, (size_t)n, sizeof(*sorted), cmp_map);
		for (int k = 0; k < n; k++)
			off += (size_t)snprintf(got + off, sizeof(got) - off, "%s", sorted[k]);
		if (strcmp(got, t->want))
			sx_test_fail(__FILE__, __LINE__, "%s: mappings %s, want %s", t->name, got,
				     t->want);
		cJSON_Delete(claim);
		cJSON_Delete(maps);
	}
}

/* The special claim's metadata: generated name, the pod as controller
 * owner, the annotation (preFilterExtendedResources). */
static void test_claim_metadata(void)
{
	const struct tcase t = {"meta", pod1, {ERN}, {"class"}, ""};
	cJSON *maps = NULL, *claim = build(&t, &maps);
	char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(claim, "metadata"));

	CHECK_STR(s,
		  "{\"namespace\":\"ns\",\"generateName\":\"pod-extended-resources-\","
		  "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"pod\","
		  "\"uid\":\"uid\",\"controller\":true}],\"annotations\":{\"resource.kubernetes.io/"
		  "extended-resource-claim\":\"true\"}}");
	cJSON_free(s);
	cJSON_Delete(claim);
	cJSON_Delete(maps);
}

SX_TESTS(SX_TEST(test_requests), SX_TEST(test_mappings), SX_TEST(test_claim_metadata))
