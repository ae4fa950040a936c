/* The table of kinds (include/schedext/kinds.def) and what is generated
 * from it: descriptors and names (model.c), the informers' rows
 * (informer.c), and every cached kind reaching its snapshot array
 * (cache_map.c, snapshot.c). */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/informer.h"
#include "schedext/snapshot.h"

/* Kind strings and collection paths, as kube-apiserver serves them. */
static void test_descriptors(void)
{
	const struct sx_kind_desc *d;

	CHECK(sx_kind_desc(SX_KIND_UNKNOWN) == NULL);
	CHECK(sx_kind_desc(SX_KIND_COUNT) == NULL);
	CHECK_STR(sx_kind_name(SX_KIND_UNKNOWN), "Unknown");
	CHECK_STR(sx_kind_name(SX_KIND_COUNT), "Unknown");
	d = sx_kind_desc(SX_KIND_POD);
	CHECK_STR(d->path, "/api/v1/pods");
	CHECK(d->namespaced);
	d = sx_kind_desc(SX_KIND_CSI_STORAGE_CAPACITY);
	CHECK_STR(d->path, "/apis/storage.k8s.io/v1/csistoragecapacities");
	CHECK_STR(d->group, "storage.k8s.io");
	CHECK(d->namespaced);
	d = sx_kind_desc(SX_KIND_STATEFUL_SET);
	CHECK_STR(d->path, "/apis/apps/v1/statefulsets");
	CHECK(!sx_kind_desc(SX_KIND_NODE)->namespaced);
	for (int k = SX_KIND_UNKNOWN + 1; k < SX_KIND_COUNT; k++) {
		d = sx_kind_desc((enum sx_kind)k);
		CHECK(d && d->kind && d->resource && d->path);
		if (!d)
			continue;
		/* keyed by group and kind: two rows are "PodGroup" */
		char api_version[128];
		snprintf(api_version, sizeof(api_version), "%s%s%s", d->group, *d->group ? "/" : "",
			 d->version);
		CHECK_INT(sx_kind_lookup(api_version, d->kind), k);
		if (k != SX_KIND_COSCHED_POD_GROUP)
			CHECK_INT(sx_kind_from_name(d->kind), k);
		CHECK_STR(sx_kind_name((enum sx_kind)k), d->kind);
	}
	CHECK_INT(sx_kind_from_name("Deployment"), SX_KIND_UNKNOWN);
	d = sx_kind_desc(SX_KIND_COSCHED_POD_GROUP);
	CHECK_STR(d->path, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
	CHECK_STR(d->kind, "PodGroup");
	CHECK(d->namespaced);
}

/* The informers watch every WATCHED kind in table order (all of them
 * today), at the descriptor's path; only pods carry a field selector. */
static void test_informer_rows(void)
{
	unsigned n = sx_informer_nkinds();

	CHECK_INT(n, SX_KIND_COUNT - 1);
	for (unsigned i = 0; i < n && i + 1 < SX_KIND_COUNT; i++) {
		const char *sel = NULL;
		const char *path = sx_informer_kind_path(i, &sel);
		enum sx_kind k = (enum sx_kind)(i + 1);

		CHECK_STR(path, sx_kind_desc(k)->path);
		CHECK(k == SX_KIND_POD ? sel != NULL : sel == NULL);
	}
}

/* One object of each cached kind, decoded from its minimal JSON: the
 * snapshot's array of its group holds it. */
static const struct {
	enum sx_kind kind;
	const char *json;
	size_t array; /* offset of the snapshot's array */
	size_t count; /* offset of its count */
} objects[] = {
#define AT(field) offsetof(struct sx_snapshot, field), offsetof(struct sx_snapshot, n##field)
	{SX_KIND_NAMESPACE, "{\"metadata\":{\"name\":\"a\"}}", AT(namespaces)},
	{SX_KIND_SERVICE, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}", AT(services)},
	{SX_KIND_REPLICA_SET, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}",
	 AT(controllers)},
	{SX_KIND_PDB, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}", AT(pdbs)},
	{SX_KIND_PV, "{\"metadata\":{\"name\":\"a\"}}", AT(pvs)},
	{SX_KIND_PVC, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}", AT(pvcs)},
	{SX_KIND_STORAGE_CLASS, "{\"metadata\":{\"name\":\"a\"},\"provisioner\":\"p\"}",
	 AT(storage_classes)},
	{SX_KIND_CSI_NODE, "{\"metadata\":{\"name\":\"a\"}}", AT(csi_nodes)},
	{SX_KIND_DEVICE_CLASS, "{\"metadata\":{\"name\":\"a\"},\"spec\":{}}", AT(device_classes)},
	{SX_KIND_CSI_DRIVER, "{\"metadata\":{\"name\":\"a\"}}", AT(csi_drivers)},
	{SX_KIND_CSI_STORAGE_CAPACITY,
	 "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"storageClassName\":\"s\"}",
	 AT(csi_capacities)},
	{SX_KIND_VOLUME_ATTACHMENT,
	 "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"attacher\":\"x\",\"nodeName\":\"n1\"}}",
	 AT(volume_attachments)},
	{SX_KIND_DEVICE_TAINT_RULE,
	 "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"taint\":{\"key\":\"k\",\"effect\":\"None\"}}}",
	 AT(device_taint_rules)},
	{SX_KIND_WORKLOAD, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"spec\":{}}",
	 AT(workloads)},
	{SX_KIND_POD_GROUP,
	 "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},"
	 "\"spec\":{\"schedulingPolicy\":{\"basic\":{}}}}",
	 AT(pod_groups)},
	{SX_KIND_COSCHED_POD_GROUP,
	 "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"metadata\":{\"name\":\"a\","
	 "\"namespace\":\"n\"},\"spec\":{\"minMember\":2}}",
	 AT(cosched_pod_groups)},
#undef AT
};

static void test_snapshot_arrays(void)
{
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		struct sx_cache *c = sx_cache_new();
		cJSON *j = cJSON_Parse(objects[i].json);
		struct sx_error err = {0};
		struct sx_object o;
		struct sx_snapshot *s;

		CHECK(j != NULL);
		CHECK_INT(sx_decode_object(j, sx_kind_name(objects[i].kind), &o, &err), 0);
		cJSON_Delete(j);
		CHECK_INT(sx_cache_upsert(c, &o), 0);
		s = sx_cache_snapshot(c);
		CHECK_INT(*(const uint32_t *)((const char *)s + objects[i].count), 1);
		CHECK((*(const void *const *)((const char *)s + objects[i].array)) != NULL);
		sx_snapshot_unref(s);
		sx_cache_free(c);
	}
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_descriptors), SX_TEST(test_informer_rows), SX_TEST(test_snapshot_arrays))
