/* VolumeRestrictions, VolumeZone and NodeVolumeLimits hooks called
 * directly: what the fixture tables cannot express (Error statuses,
 * AddPod/RemovePod, state clones, queueing hints). */
#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_volume_restrictions;
extern const struct sx_plugin sx_plugin_volume_zone;
extern const struct sx_plugin sx_plugin_node_volume_limits;
#define VR  (&sx_plugin_volume_restrictions)
#define VZ  (&sx_plugin_volume_zone)
#define NVL (&sx_plugin_node_volume_limits)

#define RWOP_POD(name, node)                                                                       \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"d\"},\"spec\":{" node                \
	"\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"c1\"}}]}}"

/* AddPod/RemovePod move the ReadWriteOncePod reference count. */
static void test_rwop_add_remove(void)
{
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"n\"}}");
	tu_add(c, "PersistentVolumeClaim",
	       "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"d\"},"
	       "\"spec\":{\"accessModes\":[\"ReadWriteOncePod\"]}}");
	tu_add(c, "Pod", RWOP_POD("holder", "\"nodeName\":\"n\","));
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(RWOP_POD("p", ""));
	struct sx_pod *holder = tu_pod(RWOP_POD("holder", "\"nodeName\":\"n\","));

	cs.snap = snap;
	CHECK(VR->pre_filter(NULL, &cs, pod, &set) == NULL);
	CHECK_STR(tu_status(VR->filter(NULL, &cs, pod, tu_ni(snap, "n")), buf, sizeof(buf)),
		  "Unschedulable: node(s) unavailable due to PersistentVolumeClaim with "
		  "ReadWriteOncePod access mode already in-use by another pod");
	void *clone = VR->state_clone(cs.slots[SX_SLOT_volume_restrictions]);
	CHECK(VR->remove_pod(NULL, &cs, pod, holder, tu_ni(snap, "n")) == NULL);
	CHECK(VR->filter(NULL, &cs, pod, tu_ni(snap, "n")) == NULL);
	CHECK(VR->add_pod(NULL, &cs, pod, holder, tu_ni(snap, "n")) == NULL);
	CHECK(strncmp(tu_status(VR->filter(NULL, &cs, pod, tu_ni(snap, "n")), buf, sizeof(buf)),
		      "Unschedulable", 13) == 0);
	VR->state_free(clone);
	VR->state_free(cs.slots[SX_SLOT_volume_restrictions]);
	cs.slots[SX_SLOT_volume_restrictions] = NULL;
	CHECK_STR(
		tu_status(VR->add_pod(NULL, &cs, pod, holder, tu_ni(snap, "n")), buf, sizeof(buf)),
		"Error: cannot read \"PreFilterVolumeRestrictions\" from cycleState");
	sx_pod_unref(pod);
	sx_pod_unref(holder);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

/* csi_test.go "ephemeral volume not owned": an Error status. */
static void test_ephemeral_not_owned(void)
{
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"n\"}}");
	tu_add(c, "PersistentVolumeClaim",
	       "{\"metadata\":{\"name\":\"abc-xyz\",\"namespace\":\"test\"},"
	       "\"spec\":{\"storageClassName\":\"csi-sc\"}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod("{\"metadata\":{\"name\":\"abc\",\"namespace\":\"test\","
				    "\"uid\":\"12345\"},\"spec\":{\"volumes\":[{\"name\":\"xyz\","
				    "\"ephemeral\":{}}]}}");

	cs.snap = snap;
	CHECK(NVL->pre_filter(NULL, &cs, pod, &set) == NULL);
	CHECK_STR(tu_status(NVL->filter(NULL, &cs, pod, tu_ni(snap, "n")), buf, sizeof(buf)),
		  "Error: PVC test/abc-xyz was not created for pod test/abc (pod is not owner)");
	NVL->state_free(cs.slots[SX_SLOT_node_volume_limits]);
	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

#define PX_CSI_NODE(name, annotations)                                                             \
	"{\"metadata\":{\"name\":\"" name "\"" annotations "},\"spec\":{\"drivers\":[{"            \
	"\"name\":\"pxd.portworx.com\",\"nodeID\":\"" name "\",\"allocatable\":{\"count\":1}}]}}"

/* NodeVolumeLimits resolves the pod's volumes once in PreFilter; whether
 * an in-tree one counts is still decided per node (its CSINode's migrated
 * plugins), on the original state and on a clone; a missing claim
 * rejects every node. */
static void test_limits_state_per_node(void)
{
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"a\"}}");
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"b\"}}");
	tu_add(c, "CSINode",
	       PX_CSI_NODE("a", ",\"annotations\":{\"storage.alpha.kubernetes.io/migrated-"
				"plugins\":\"kubernetes.io/portworx-volume\"}"));
	tu_add(c, "CSINode", PX_CSI_NODE("b", ""));
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod =
		tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"volumes\":["
		       "{\"name\":\"x\",\"portworxVolume\":{\"volumeID\":\"px1\"}},"
		       "{\"name\":\"y\",\"portworxVolume\":{\"volumeID\":\"px2\"}}]}}");
	struct sx_pod *missing = tu_pod(RWOP_POD("m", ""));

	cs.snap = snap;
	CHECK(NVL->pre_filter(NULL, &cs, pod, &set) == NULL);
	void *clone = NVL->state_clone(cs.slots[SX_SLOT_node_volume_limits]);
	NVL->state_free(cs.slots[SX_SLOT_node_volume_limits]);
	cs.slots[SX_SLOT_node_volume_limits] = clone;
	CHECK_STR(tu_status(NVL->filter(NULL, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) exceed max volume count");
	CHECK(NVL->filter(NULL, &cs, pod, tu_ni(snap, "b")) == NULL);
	CHECK(NVL->pre_filter(NULL, &cs, missing, &set) == NULL); /* replaces the state */
	for (int i = 0; i < 2; i++)
		CHECK_STR(
			tu_status(NVL->filter(NULL, &cs, missing, tu_ni(snap, i ? "b" : "a")), buf,
				  sizeof(buf)),
			"UnschedulableAndUnresolvable: looking up PVC d/c1: persistentvolumeclaim "
			"\"c1\" not found");
	NVL->state_free(cs.slots[SX_SLOT_node_volume_limits]);
	sx_pod_unref(pod);
	sx_pod_unref(missing);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

/* A VolumeZone state survives a clone (the nominated-pods pass). */
static void test_zone_clone(void)
{
	char buf[256];
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();

	tu_add(c, "Node",
	       "{\"metadata\":{\"name\":\"n\",\"labels\":{"
	       "\"topology.kubernetes.io/zone\":\"b\"}}}");
	tu_add(c, "PersistentVolume",
	       "{\"metadata\":{\"name\":\"pv\",\"labels\":{"
	       "\"topology.kubernetes.io/zone\":\"a__c\"}}}");
	tu_add(c, "PersistentVolumeClaim",
	       "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"d\"},"
	       "\"spec\":{\"volumeName\":\"pv\"}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(RWOP_POD("p", ""));

	cs.snap = snap;
	CHECK(VZ->pre_filter(NULL, &cs, pod, &set) == NULL);
	void *clone = VZ->state_clone(cs.slots[SX_SLOT_volume_zone]);
	VZ->state_free(cs.slots[SX_SLOT_volume_zone]);
	cs.slots[SX_SLOT_volume_zone] = clone;
	CHECK_STR(tu_status(VZ->filter(NULL, &cs, pod, tu_ni(snap, "n")), buf, sizeof(buf)),
		  "UnschedulableAndUnresolvable: node(s) had no available volume zone");
	VZ->state_free(clone);
	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

/* The hint of a registration of plugin p for resource res. */
static sx_hint_fn hint_of(const struct sx_plugin *p, unsigned res)
{
	for (const struct sx_event_reg *r = p->events; r->resource != SX_RES_NONE; r++)
		if (r->resource == res)
			return r->hint;
	return NULL;
}

/* Queueing hints, from upstream's hint tables. */
static void test_hints(void)
{
	struct sx_pod *pod = tu_pod(RWOP_POD("p", ""));
	struct sx_pod *other_ns =
		tu_pod("{\"metadata\":{\"name\":\"q\",\"namespace\":\"e\"},"
		       "\"spec\":{\"nodeName\":\"n\",\"volumes\":[{\"name\":\"v\","
		       "\"persistentVolumeClaim\":{\"claimName\":\"c1\"}}]}}");
	struct sx_pod *same = tu_pod(RWOP_POD("q", "\"nodeName\":\"n\","));
	struct sx_pod *novol = tu_pod("{\"metadata\":{\"name\":\"q\",\"namespace\":\"d\"},"
				      "\"spec\":{\"nodeName\":\"n\"}}");
	sx_hint_fn vr_pod = hint_of(VR, SX_RES_POD), nvl_pod = hint_of(NVL, SX_RES_POD);

	CHECK(vr_pod(NULL, pod, other_ns, NULL) == SX_QUEUE_SKIP);
	CHECK(vr_pod(NULL, pod, same, NULL) == SX_QUEUE);
	CHECK(vr_pod(NULL, pod, novol, NULL) == SX_QUEUE_SKIP);
	CHECK(nvl_pod(NULL, pod, same, NULL) == SX_QUEUE);
	CHECK(nvl_pod(NULL, pod, novol, NULL) == SX_QUEUE_SKIP);
	sx_pod_unref(pod);
	sx_pod_unref(other_ns);
	sx_pod_unref(same);
	sx_pod_unref(novol);
}

/* isSchedulableAfterCSINodeUpdated (VolumeLimitScaling): a driver added
 * or a count raised requeues; a count lowered does not. */
static void test_csi_node_update_hint(void)
{
	const struct sx_event_reg *r = NULL;
	struct sx_pod *pod = tu_pod(RWOP_POD("p", ""));
	struct sx_object o[4] = {{0}};
	static const char *const json[] = {
		"{\"metadata\":{\"name\":\"n\"},\"spec\":{\"drivers\":[{\"name\":\"a\",\"nodeID\":"
		"\"n\","
		"\"allocatable\":{\"count\":2}}]}}",
		"{\"metadata\":{\"name\":\"n\"},\"spec\":{\"drivers\":[{\"name\":\"a\",\"nodeID\":"
		"\"n\","
		"\"allocatable\":{\"count\":3}}]}}",
		"{\"metadata\":{\"name\":\"n\"},\"spec\":{\"drivers\":[{\"name\":\"a\",\"nodeID\":"
		"\"n\","
		"\"allocatable\":{\"count\":1}}]}}",
		"{\"metadata\":{\"name\":\"n\"},\"spec\":{\"drivers\":[{\"name\":\"a\",\"nodeID\":"
		"\"n\","
		"\"allocatable\":{\"count\":2}},{\"name\":\"b\",\"nodeID\":\"n\"}]}}",
	};

	for (int i = 0; i < 4; i++) {
		struct sx_error err = {0};
		cJSON *j = cJSON_Parse(json[i]);

		CHECK_INT(sx_decode_object(j, "CSINode", &o[i], &err), 0);
		cJSON_Delete(j);
	}
	for (const struct sx_event_reg *e = NVL->events; e->resource != SX_RES_NONE; e++)
		if (e->resource == SX_RES_CSI_NODE && e->actions == SX_ACT_UPDATE)
			r = e;
	CHECK(r != NULL);
	if (r) {
		CHECK(r->hint(NULL, pod, &o[0], &o[1]) == SX_QUEUE);	  /* 2 -> 3 */
		CHECK(r->hint(NULL, pod, &o[0], &o[2]) == SX_QUEUE_SKIP); /* 2 -> 1 */
		CHECK(r->hint(NULL, pod, &o[0], &o[0]) == SX_QUEUE_SKIP); /* unchanged */
		CHECK(r->hint(NULL, pod, &o[0], &o[3]) == SX_QUEUE);	  /* driver b added */
	}
	for (int i = 0; i < 4; i++)
		sx_object_unref(&o[i]);
	sx_pod_unref(pod);
}

/* CSIDriver.spec.preventPodSchedulingIfMissing is decoded (default false). */
static void test_csi_driver_prevent(void)
{
	struct sx_object o = {0};
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse("{\"metadata\":{\"name\":\"d\"},\"spec\":"
			       "{\"preventPodSchedulingIfMissing\":true}}");

	CHECK_INT(sx_decode_object(j, "CSIDriver", &o, &err), 0);
	CHECK(((const struct sx_csi_driver *)o.obj)->prevent_if_missing);
	sx_object_unref(&o);
	cJSON_Delete(j);
	j = cJSON_Parse(
		"{\"metadata\":{\"name\":\"d\"},\"spec\":{\"preventPodSchedulingIfMissing\":1}}");
	CHECK(sx_decode_object(j, "CSIDriver", &o, &err) < 0);
	CHECK_STR(err.path, "spec.preventPodSchedulingIfMissing");
	cJSON_Delete(j);
}

SX_TESTS(SX_TEST(test_rwop_add_remove), SX_TEST(test_csi_node_update_hint),
	 SX_TEST(test_csi_driver_prevent), SX_TEST(test_ephemeral_not_owned),
	 SX_TEST(test_zone_clone), SX_TEST(test_limits_state_per_node), SX_TEST(test_hints))
