/* The cache's storage indexes and listers (src/cache/volumes.c): PVs and
 * CSIStorageCapacities by class, VolumeAttachments by node, the set of PVCs
 * in use by pods on nodes, and the storage events of the listener. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "test_decode_parse.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"

/* Decodes and upserts one object written with single quotes. */
static void put(struct sx_cache *c, const char *text)
{
	cJSON *j = parse(text);
	struct sx_object o;
	struct sx_error err = {0};
	int rc = sx_decode_object(j, NULL, &o, &err);

	cJSON_Delete(j);
	if (rc < 0) {
		sx_test_fail(__FILE__, __LINE__, "decode: %s: %s", err.path, err.msg);
		return;
	}
	CHECK_INT(sx_cache_upsert(c, &o), 0);
}

static struct sx_pod *pod_of(const char *text)
{
	cJSON *j = parse(text);
	struct sx_error err = {0};
	struct sx_pod *pod = sx_decode_pod(j, &err);

	cJSON_Delete(j);
	CHECK(pod != NULL);
	return pod;
}

static void test_listers(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	uint32_t n;

	put(c, "{'kind':'Node','metadata':{'name':'n1'}}");
	put(c, "{'kind':'PersistentVolume','metadata':{'name':'pv-b'},'spec':{'storageClassName':'"
	       "fast'}}");
	put(c, "{'kind':'PersistentVolume','metadata':{'name':'pv-a'},'spec':{'storageClassName':'"
	       "fast'}}");
	put(c, "{'kind':'PersistentVolume','metadata':{'name':'pv-c'},'spec':{'storageClassName':'"
	       "slow'}}");
	put(c, "{'kind':'PersistentVolume','metadata':{'name':'pv-d'},'spec':{}}");
	put(c, "{'kind':'StorageClass','metadata':{'name':'fast'},'provisioner':'p',"
	       "'volumeBindingMode':'Immediate'}");
	put(c, "{'kind':'CSIDriver','metadata':{'name':'d1'},'spec':{'attachRequired':false}}");
	put(c, "{'kind':'CSINode','metadata':{'name':'n1'},'spec':{'drivers':[{'name':'d1'}]}}");
	put(c, "{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'kube-system'},"
	       "'storageClassName':'fast','capacity':'1Gi'}");
	put(c, "{'kind':'VolumeAttachment','metadata':{'name':'va1'},'spec':{'attacher':'d1',"
	       "'nodeName':'n1','source':{'persistentVolumeName':'pv-a'}}}");
	put(c, "{'kind':'VolumeAttachment','metadata':{'name':'va2'},'spec':{'attacher':'d1',"
	       "'nodeName':'n2'}}");
	put(c, "{'kind':'PersistentVolumeClaim','metadata':{'name':'data','namespace':'prod'},"
	       "'spec':{'storageClassName':'fast'}}");
	s = sx_cache_snapshot(c);

	const struct sx_pv *const *pvs = sx_snapshot_pvs_by_class(s, sx_intern("fast"), &n);
	CHECK_INT(n, 2);
	CHECK_STR(pvs[0]->meta.name, "pv-a");
	CHECK_STR(pvs[1]->meta.name, "pv-b");
	pvs = sx_snapshot_pvs_by_class(s, SX_STR_EMPTY, &n);
	CHECK_INT(n, 1);
	CHECK_STR(pvs[0]->meta.name, "pv-d");
	CHECK(sx_snapshot_pvs_by_class(s, sx_intern("none"), &n) == NULL && n == 0);
	CHECK_STR(sx_snapshot_find_pv(s, sx_intern("pv-c"))->meta.name, "pv-c");
	CHECK(sx_snapshot_find_pvc(s, sx_intern("prod"), sx_intern("data")) != NULL);
	CHECK(sx_snapshot_find_pvc(s, sx_intern("dev"), sx_intern("data")) == NULL);
	CHECK_INT(sx_snapshot_find_storage_class(s, sx_intern("fast"))->binding_mode,
		  SX_BINDING_IMMEDIATE);
	CHECK(!sx_snapshot_find_csi_driver(s, sx_intern("d1"))->attach_required);
	CHECK_INT(sx_snapshot_find_csi_node(s, sx_intern("n1"))->ndrivers, 1);
	CHECK(sx_snapshot_capacities_by_class(s, sx_intern("fast"), &n) && n == 1);
	const struct sx_volume_attachment *const *vas =
		sx_snapshot_attachments_on_node(s, sx_intern("n1"), &n);
	CHECK_INT(n, 1);
	CHECK_STR(vas[0]->meta.name, "va1");
	CHECK_INT(s->nvolume_attachments, 2);
	CHECK_INT(s->ncsi_drivers, 1);
	CHECK_INT(s->ncsi_capacities, 1);
	sx_snapshot_unref(s);

	/* a delete reaches the next snapshot */
	CHECK_INT(sx_cache_delete(c, SX_KIND_PV, SX_STR_EMPTY, "pv-a"), 0);
	s = sx_cache_snapshot(c);
	pvs = sx_snapshot_pvs_by_class(s, sx_intern("fast"), &n);
	CHECK_INT(n, 1);
	CHECK_STR(pvs[0]->meta.name, "pv-b");
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static const char rwop_pod[] =
	"{'metadata':{'name':'%s','namespace':'prod','uid':'%s'},'spec':{%s"
	"'volumes':[{'name':'d','persistentVolumeClaim':{'claimName':'data'}},"
	"{'name':'e','ephemeral':{}}]}}";

static struct sx_pod *volume_pod(const char *name, const char *node)
{
	char buf[512], spec[64] = "";

	if (node)
		snprintf(spec, sizeof(spec), "'nodeName':'%s',", node);
	snprintf(buf, sizeof(buf), rwop_pod, name, name, spec);
	return pod_of(buf);
}

static void test_pvcs_in_use(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_object o;
	struct sx_snapshot *s;
	sx_str prod = sx_intern("prod"), data = sx_intern("data");

	put(c, "{'kind':'Node','metadata':{'name':'n1'}}");
	/* pending pods use nothing */
	o = (struct sx_object){SX_KIND_POD, volume_pod("p0", NULL)};
	CHECK_INT(sx_cache_upsert(c, &o), 0);
	s = sx_cache_snapshot(c);
	CHECK(!sx_snapshot_pvc_in_use(s, prod, data));
	sx_snapshot_unref(s);

	/* two bound pods share the claim; the ephemeral one is <pod>-<volume> */
	o = (struct sx_object){SX_KIND_POD, volume_pod("p1", "n1")};
	CHECK_INT(sx_cache_upsert(c, &o), 0);
	o = (struct sx_object){SX_KIND_POD, volume_pod("p2", "n1")};
	CHECK_INT(sx_cache_upsert(c, &o), 0);
	s = sx_cache_snapshot(c);
	CHECK(sx_snapshot_pvc_in_use(s, prod, data));
	CHECK(sx_snapshot_pvc_in_use(s, prod, sx_intern("p1-e")));
	CHECK(!sx_snapshot_pvc_in_use(s, sx_intern("dev"), data));
	sx_snapshot_unref(s);

	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, prod, "p1"), 0);
	s = sx_cache_snapshot(c);
	CHECK(sx_snapshot_pvc_in_use(s, prod, data));
	CHECK(!sx_snapshot_pvc_in_use(s, prod, sx_intern("p1-e")));
	sx_snapshot_unref(s);
	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, prod, "p2"), 0);
	s = sx_cache_snapshot(c);
	CHECK(!sx_snapshot_pvc_in_use(s, prod, data));
	sx_snapshot_unref(s);

	/* an assumed pod counts until it is forgotten */
	struct sx_pod *p0 = volume_pod("p0", NULL);
	CHECK_INT(sx_cache_assume(c, p0, sx_intern("n1")), 0);
	s = sx_cache_snapshot(c);
	CHECK(sx_snapshot_pvc_in_use(s, prod, data));
	sx_snapshot_unref(s);
	CHECK_INT(sx_cache_forget(c, prod, "p0"), 0);
	s = sx_cache_snapshot(c);
	CHECK(!sx_snapshot_pvc_in_use(s, prod, data));
	sx_snapshot_unref(s);
	sx_pod_unref(p0);
	sx_cache_free(c);
}

/* Many claims: the set grows and shrinks back without losing any. */
static void test_pvc_set_growth(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	char buf[512];
	int ok = 0;

	put(c, "{'kind':'Node','metadata':{'name':'n1'}}");
	for (int i = 0; i < 300; i++) {
		snprintf(buf, sizeof(buf),
			 "{'metadata':{'name':'p%d','namespace':'ns%d','uid':'u%d'},'spec':{"
			 "'nodeName':'n1','volumes':[{'name':'d','persistentVolumeClaim':"
			 "{'claimName':'c%d'}}]}}",
			 i, i % 7, i, i);
		struct sx_object o = {SX_KIND_POD, pod_of(buf)};
		CHECK_INT(sx_cache_upsert(c, &o), 0);
	}
	for (int i = 0; i < 300; i += 2) {
		snprintf(buf, sizeof(buf), "p%d", i);
		snprintf(buf + 100, 100, "ns%d", i % 7);
		CHECK_INT(sx_cache_delete(c, SX_KIND_POD, sx_intern(buf + 100), buf), 0);
	}
	s = sx_cache_snapshot(c);
	for (int i = 0; i < 300; i++) {
		char ns[16], claim[16];

		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(claim, sizeof(claim), "c%d", i);
		ok += sx_snapshot_pvc_in_use(s, sx_intern(ns), sx_intern(claim)) == (i % 2 == 1);
	}
	CHECK_INT(ok, 300);
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

struct events {
	int n;
	enum sx_kind last;
	bool had_old, had_new;
};

static void on_object(void *ctx, enum sx_kind kind, const void *old_obj, const void *new_obj)
{
	struct events *e = ctx;

	e->n++;
	e->last = kind;
	e->had_old = old_obj != NULL;
	e->had_new = new_obj != NULL;
}

static void test_listener(void)
{
	struct sx_cache *c = sx_cache_new();
	struct events ev = {0};
	struct sx_cache_listener l = {.ctx = &ev, .object_changed = on_object};

	sx_cache_set_listener(c, &l);
	put(c, "{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'ns'}}");
	CHECK(ev.n == 1 && ev.last == SX_KIND_CSI_STORAGE_CAPACITY && !ev.had_old && ev.had_new);
	put(c, "{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'ns'}}");
	CHECK(ev.n == 2 && ev.had_old && ev.had_new);
	CHECK_INT(sx_cache_delete(c, SX_KIND_CSI_STORAGE_CAPACITY, sx_intern("ns"), "c1"), 0);
	CHECK(ev.n == 3 && ev.had_old && !ev.had_new);
	sx_cache_set_listener(c, NULL);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_listers), SX_TEST(test_pvcs_in_use), SX_TEST(test_pvc_set_growth),
	 SX_TEST(test_listener))
