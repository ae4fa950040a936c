/* Decoding of the storage kinds and pod volumes (src/api/decode_storage.c),
 * and the state-file loader's error naming object and field for them. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_decode_parse.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/model.h"
#include "schedext/state.h"

static const char *S(sx_str id)
{
	return sx_str_get(id);
}

/* Decodes one object of any kind; 0 or the decoder's code. */
static int decode(const char *text, struct sx_object *o, struct sx_error *err)
{
	cJSON *j = parse(text);
	int rc = sx_decode_object(j, NULL, o, err);

	cJSON_Delete(j);
	return rc;
}

static void test_pv(void)
{
	struct sx_object o;
	struct sx_error err = {0};
	int rc = decode("{'kind':'PersistentVolume','metadata':{'name':'pv1','uid':'u1','"
			"resourceVersion':'7',"
			" 'labels':{'topology.kubernetes.io/zone':'a__b'},"
			" 'annotations':{'pv.kubernetes.io/bound-by-controller':'yes',"
			"  'pv.kubernetes.io/provisioned-by':'ebs.csi.aws.com',"
			"  'volume.beta.kubernetes.io/storage-class':'beta'}},"
			" 'spec':{'storageClassName':'fast','capacity':{'storage':'10Gi'},"
			"  'accessModes':['ReadWriteOnce','ReadOnlyMany'],'volumeMode':'Block',"
			"  'csi':{'driver':'ebs.csi.aws.com','volumeHandle':'vol-1'},"
			"  'claimRef':{'namespace':'prod','name':'data','uid':'c1'},"
			"  'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':"
			"   [{'key':'zone','operator':'In','values':['a']}]}]}}},"
			" 'status':{'phase':'Bound'}}",
			&o, &err);

	CHECK_INT(rc, 0);
	CHECK_INT(o.kind, SX_KIND_PV);
	const struct sx_pv *pv = o.obj;
	CHECK_STR(pv->meta.uid, "u1");
	CHECK_STR(pv->meta.resource_version, "7");
	CHECK_STR(S(pv->storage_class), "beta"); /* the beta annotation wins */
	CHECK(pv->has_capacity);
	CHECK_INT(pv->capacity_storage, 10737418240LL);
	CHECK_INT(pv->access_modes, SX_ACCESS_RWO | SX_ACCESS_ROX);
	CHECK_INT(pv->volume_mode, SX_VOLUME_BLOCK);
	CHECK_INT(pv->phase, SX_PV_BOUND);
	CHECK_INT(pv->source, SX_VSRC_CSI);
	CHECK_STR(S(pv->csi_driver), "ebs.csi.aws.com");
	CHECK_STR(S(pv->volume_handle), "vol-1");
	CHECK(pv->has_claim_ref);
	CHECK_STR(S(pv->claim_ns), "prod");
	CHECK_STR(S(pv->claim_name), "data");
	CHECK_STR(pv->claim_uid, "c1");
	CHECK(pv->bound_by_controller);
	CHECK_STR(S(pv->provisioned_by), "ebs.csi.aws.com");
	CHECK(pv->node_affinity && pv->node_affinity->nterms == 1);
	CHECK(!pv->deleting);
	sx_object_unref(&o);

	rc = decode("{'kind':'PersistentVolume','metadata':{'name':'pv2',"
		    " 'deletionTimestamp':'2025-01-01T00:00:00Z'},"
		    " 'spec':{'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-9'}}}",
		    &o, &err);
	CHECK_INT(rc, 0);
	pv = o.obj;
	CHECK(pv->deleting);
	CHECK_INT(pv->source, SX_VSRC_AWS_EBS);
	CHECK_STR(S(pv->volume_handle), "vol-9");
	CHECK_INT(pv->volume_mode, SX_VOLUME_FILESYSTEM);
	CHECK_INT(pv->phase, SX_PV_PHASE_NONE);
	CHECK(!pv->has_claim_ref && !pv->has_capacity && pv->node_affinity == NULL);
	sx_object_unref(&o);
}

static void test_pvc(void)
{
	struct sx_object o;
	struct sx_error err = {0};
	int rc = decode(
		"{'kind':'PersistentVolumeClaim','metadata':{'name':'data','namespace':'prod','uid'"
		":'c1',"
		" 'ownerReferences':[{'uid':'x'},{'uid':'pod-uid','controller':true}],"
		" 'annotations':{'volume.kubernetes.io/selected-node':'node-a',"
		"  "
		"'pv.kubernetes.io/bind-completed':'yes','pv.kubernetes.io/"
		"bound-by-controller':'yes',"
		"  'volume.kubernetes.io/storage-provisioner':'p1',"
		"  'volume.beta.kubernetes.io/storage-provisioner':'p2'}},"
		" 'spec':{'volumeName':'pv1','storageClassName':'fast','accessModes':['"
		"ReadWriteOncePod'],"
		"  'selector':{'matchLabels':{'tier':'gold'}},'volumeAttributesClassName':'silver',"
		"  'resources':{'requests':{'storage':'5Gi'}}},'status':{'phase':'Bound'}}",
		&o, &err);

	CHECK_INT(rc, 0);
	const struct sx_pvc *pvc = o.obj;
	CHECK_STR(S(pvc->volume_name), "pv1");
	CHECK(pvc->has_storage_class);
	CHECK_STR(S(pvc->storage_class), "fast");
	CHECK_STR(S(pvc->vac), "silver");
	CHECK(pvc->bound && pvc->phase == SX_PVC_BOUND);
	CHECK_INT(pvc->access_modes, SX_ACCESS_RWOP);
	CHECK(pvc->read_write_once_pod);
	CHECK(pvc->has_request);
	CHECK_INT(pvc->request_storage, 5368709120LL);
	CHECK(pvc->selector && pvc->selector->nreqs == 1);
	CHECK_STR(S(pvc->selected_node), "node-a");
	CHECK(pvc->bind_completed && pvc->bound_by_controller);
	CHECK_STR(S(pvc->storage_provisioner), "p1");
	CHECK_STR(S(pvc->beta_storage_provisioner), "p2");
	CHECK_STR(pvc->controller_uid, "pod-uid");
	sx_object_unref(&o);

	rc = decode("{'kind':'PersistentVolumeClaim','metadata':{'name':'d2','namespace':'prod'},"
		    " 'spec':{}}",
		    &o, &err);
	CHECK_INT(rc, 0);
	pvc = o.obj;
	CHECK(!pvc->has_storage_class && !pvc->bound && pvc->phase == SX_PVC_PHASE_NONE);
	CHECK(pvc->controller_uid == NULL && pvc->selector == NULL);
	sx_object_unref(&o);
}

static void test_storage_class(void)
{
	struct sx_object o;
	struct sx_error err = {0};
	int rc = decode("{'kind':'StorageClass','metadata':{'name':'zonal'},'provisioner':'ebs.csi."
			"aws.com',"
			" 'volumeBindingMode':'WaitForFirstConsumer','allowedTopologies':[{'"
			"matchLabelExpressions':"
			" [{'key':'topology.kubernetes.io/zone','values':['a','b']}]}]}",
			&o, &err);

	CHECK_INT(rc, 0);
	CHECK_INT(o.kind, SX_KIND_STORAGE_CLASS);
	const struct sx_storage_class *sc = o.obj;
	CHECK_STR(S(sc->provisioner), "ebs.csi.aws.com");
	CHECK_INT(sc->binding_mode, SX_BINDING_WAIT_FOR_FIRST_CONSUMER);
	CHECK(sc->wait_for_first_consumer);
	CHECK(sc->allowed_topologies && sc->allowed_topologies->nterms == 1);
	CHECK_INT(sc->allowed_topologies->terms[0].nexprs, 1);
	CHECK_INT(sc->allowed_topologies->terms[0].exprs[0].op, SX_OP_IN);
	CHECK_INT(sc->allowed_topologies->terms[0].exprs[0].nvalues, 2);
	sx_object_unref(&o);

	rc = decode("{'kind':'StorageClass','metadata':{'name':'plain'}}", &o, &err);
	CHECK_INT(rc, 0);
	sc = o.obj;
	CHECK_INT(sc->binding_mode, SX_BINDING_UNSET);
	CHECK(sc->allowed_topologies == NULL);
	sx_object_unref(&o);
}

static void test_csi_kinds(void)
{
	struct sx_object o;
	struct sx_error err = {0};
	int rc = decode("{'kind':'CSINode','metadata':{'name':'n1','annotations':"
			"{'storage.alpha.kubernetes.io/migrated-plugins':"
			"'kubernetes.io/aws-ebs,kubernetes.io/gce-pd'}},"
			"'spec':{'drivers':[{'name':'ebs.csi.aws.com','allocatable':{'count':0}},"
			"{'name':'other'}]}}",
			&o, &err);

	CHECK_INT(rc, 0);
	const struct sx_csi_node *csi = o.obj;
	CHECK_INT(csi->ndrivers, 2);
	CHECK(csi->drivers[0].has_count && csi->drivers[0].allocatable_count == 0);
	CHECK(!csi->drivers[1].has_count);
	CHECK(sx_csi_node_driver(csi, sx_intern("other")) == &csi->drivers[1]);
	CHECK(sx_csi_node_driver(csi, sx_intern("nope")) == NULL);
	CHECK(sx_csi_node_migrated(csi, "kubernetes.io/gce-pd"));
	CHECK(sx_csi_node_migrated(csi, "kubernetes.io/aws-ebs"));
	CHECK(!sx_csi_node_migrated(csi, "kubernetes.io/cinder"));
	CHECK(!sx_csi_node_migrated(NULL, "kubernetes.io/gce-pd"));
	sx_object_unref(&o);

	rc = decode("{'kind':'CSIDriver','metadata':{'name':'ebs.csi.aws.com'},"
		    "'spec':{'storageCapacity':true}}",
		    &o, &err);
	CHECK_INT(rc, 0);
	const struct sx_csi_driver *d = o.obj;
	CHECK(d->attach_required && d->storage_capacity);
	CHECK_STR(S(d->name_id), "ebs.csi.aws.com");
	sx_object_unref(&o);

	rc = decode(
		"{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'kube-system'},"
		"'storageClassName':'zonal','capacity':'100Gi','maximumVolumeSize':'10Gi',"
		"'nodeTopology':{'matchLabels':{'topology.kubernetes.io/zone':'a'}}}",
		&o, &err);
	CHECK_INT(rc, 0);
	const struct sx_csi_capacity *c = o.obj;
	CHECK_STR(S(c->storage_class), "zonal");
	CHECK(c->has_capacity && c->capacity == 107374182400LL);
	CHECK(c->has_max_size && c->maximum_volume_size == 10737418240LL);
	CHECK(c->node_topology && c->node_topology->nreqs == 1);
	sx_object_unref(&o);

	rc = decode("{'kind':'VolumeAttachment','metadata':{'name':'va1'},"
		    "'spec':{'attacher':'ebs.csi.aws.com','nodeName':'n1',"
		    "'source':{'persistentVolumeName':'pv1'}},'status':{'attached':true}}",
		    &o, &err);
	CHECK_INT(rc, 0);
	const struct sx_volume_attachment *va = o.obj;
	CHECK_STR(S(va->attacher), "ebs.csi.aws.com");
	CHECK_STR(S(va->node_name), "n1");
	CHECK_STR(S(va->pv_name), "pv1");
	CHECK(va->attached);
	sx_object_unref(&o);
}

static void test_pod_volumes(void)
{
	cJSON *j = parse("{'metadata':{'name':'web-0','namespace':'prod'},'spec':{'volumes':["
			 "{'name':'data','persistentVolumeClaim':{'claimName':'data-web-0','"
			 "readOnly':true}},"
			 "{'name':'scratch','ephemeral':{'volumeClaimTemplate':{'spec':{}}}},"
			 "{'name':'cfg','configMap':{'name':'c'}},"
			 "{'name':'pd','gcePersistentDisk':{'pdName':'disk-1','readOnly':true}},"
			 "{'name':'ebs','awsElasticBlockStore':{'volumeID':'vol-1'}},"
			 "{'name':'r','rbd':{'monitors':['m1','m2'],'image':'img'}},"
			 "{'name':'i','iscsi':{'iqn':'iqn.1','targetPortal':'t'}},"
			 "{'name':'c','csi':{'driver':'inline.csi'}}]}}");
	struct sx_error err = {0};
	struct sx_pod *pod = sx_decode_pod(j, &err);

	cJSON_Delete(j);
	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->nvolumes, 8);
	CHECK_INT(pod->npvcs, 2);
	CHECK_STR(S(pod->pvcs[0]), "data-web-0");
	CHECK_STR(S(pod->pvcs[1]), "web-0-scratch");
	CHECK_INT(pod->volumes[0].source, SX_VSRC_PVC);
	CHECK(pod->volumes[0].read_only);
	CHECK_INT(pod->volumes[1].source, SX_VSRC_EPHEMERAL);
	CHECK_STR(S(pod->volumes[1].claim), "web-0-scratch");
	CHECK_INT(pod->volumes[2].source, SX_VSRC_OTHER);
	CHECK_INT(pod->volumes[3].source, SX_VSRC_GCE_PD);
	CHECK_STR(S(pod->volumes[3].id), "disk-1");
	CHECK(pod->volumes[3].read_only);
	CHECK_INT(pod->volumes[4].source, SX_VSRC_AWS_EBS);
	CHECK(!pod->volumes[4].read_only);
	CHECK_INT(pod->volumes[5].source, SX_VSRC_RBD);
	CHECK_STR(S(pod->volumes[5].pool), "rbd");
	CHECK_INT(pod->volumes[5].nmonitors, 2);
	CHECK_STR(S(pod->volumes[6].id), "iqn.1");
	CHECK_INT(pod->volumes[7].source, SX_VSRC_CSI);
	CHECK_STR(S(pod->volumes[7].id), "inline.csi");
	CHECK(sx_pod_has_volume_source(pod, SX_VSRC_ISCSI));
	CHECK(!sx_pod_has_volume_source(pod, SX_VSRC_CINDER));
	CHECK_STR(sx_volume_source_plugin(SX_VSRC_AWS_EBS), "kubernetes.io/aws-ebs");
	CHECK_STR(sx_volume_source_csi_driver(SX_VSRC_GCE_PD), "pd.csi.storage.gke.io");
	CHECK(sx_volume_source_plugin(SX_VSRC_RBD) == NULL);
	CHECK_INT(sx_volume_source_from_plugin("kubernetes.io/cinder"), SX_VSRC_CINDER);
	CHECK_INT(sx_volume_source_from_plugin("ebs.csi.aws.com"), SX_VSRC_OTHER);
	sx_pod_unref(pod);
}

/* Bad input: a clear error naming the field, never a crash. */
static void test_malformed(void)
{
	static const struct {
		const char *json, *path, *msg;
	} cases[] = {
		{"{'kind':'PersistentVolume','spec':{'nodeAffinity':{'required':{'"
		 "nodeSelectorTerms':"
		 "[{'matchExpressions':[{'key':'zone','operator':'Near','values':['a']}]}]}}}}",
		 "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
		 "unknown operator \"Near\""},
		{"{'kind':'PersistentVolume','spec':{'nodeAffinity':{'required':{'"
		 "nodeSelectorTerms':"
		 "{}}}}}",
		 "spec.nodeAffinity.required.nodeSelectorTerms", "expected array, got object"},
		{"{'kind':'PersistentVolume','spec':{'nodeAffinity':{'required':[]}}}",
		 "spec.nodeAffinity.required", "expected object, got array"},
		{"{'kind':'PersistentVolume','spec':{'capacity':{'storage':'ten gigs'}}}",
		 "spec.capacity.storage", "invalid quantity \"ten gigs\""},
		{"{'kind':'PersistentVolume','spec':{'capacity':{'storage':'-1Gi'}}}",
		 "spec.capacity.storage", "negative quantity \"-1Gi\""},
		{"{'kind':'PersistentVolume','spec':{'accessModes':['ReadWriteSometimes']}}",
		 "spec.accessModes[0]", "unsupported access mode \"ReadWriteSometimes\""},
		{"{'kind':'PersistentVolume','spec':{'accessModes':'ReadWriteOnce'}}",
		 "spec.accessModes", "expected array, got string"},
		{"{'kind':'PersistentVolume','spec':{'volumeMode':'Raw'}}", "spec.volumeMode",
		 "unsupported volume mode \"Raw\""},
		{"{'kind':'PersistentVolume','spec':{'claimRef':{'name':3}}}", "spec.claimRef.name",
		 "expected string, got number"},
		{"{'kind':'PersistentVolume','metadata':{'annotations':"
		 "{'pv.kubernetes.io/provisioned-by':1}}}",
		 "metadata.annotations.pv.kubernetes.io/provisioned-by",
		 "expected string, got number"},
		{"{'kind':'PersistentVolumeClaim','spec':{'accessModes':[1]}}",
		 "spec.accessModes[0]", "expected string, got number"},
		{"{'kind':'PersistentVolumeClaim','spec':{'resources':{'requests':{'storage':'1Qi'}"
		 "}}}",
		 "spec.resources.requests.storage", "invalid quantity \"1Qi\""},
		{"{'kind':'PersistentVolumeClaim','metadata':{'annotations':"
		 "{'volume.kubernetes.io/selected-node':false}}}",
		 "metadata.annotations.volume.kubernetes.io/selected-node",
		 "expected string, got boolean"},
		{"{'kind':'StorageClass','volumeBindingMode':'Later'}", "volumeBindingMode",
		 "unsupported volume binding mode \"Later\""},
		{"{'kind':'StorageClass','allowedTopologies':[{'matchLabelExpressions':[{'key':'z',"
		 "'values':'a'}]}]}",
		 "allowedTopologies[0].matchLabelExpressions[0].values",
		 "expected array, got string"},
		{"{'kind':'CSINode','spec':{'drivers':[{'name':'d','allocatable':{'count':-1}}]}}",
		 "spec.drivers[0].allocatable.count", "must be non-negative, got -1"},
		{"{'kind':'CSIDriver','spec':{'attachRequired':'yes'}}", "spec.attachRequired",
		 "expected boolean, got string"},
		{"{'kind':'CSIStorageCapacity','capacity':'lots'}", "capacity",
		 "invalid quantity \"lots\""},
		{"{'kind':'CSIStorageCapacity','nodeTopology':{'matchExpressions':[{'key':'a',"
		 "'operator':'Gt'}]}}",
		 "nodeTopology.matchExpressions[0].operator", "unknown operator \"Gt\""},
		{"{'kind':'VolumeAttachment','spec':{'source':{'persistentVolumeName':[]}}}",
		 "spec.source.persistentVolumeName", "expected string, got array"},
		{"{'kind':'Pod','spec':{'volumes':[{'name':'r','rbd':{'monitors':'m1'}}]}}",
		 "spec.volumes[0].rbd.monitors", "expected array, got string"},
		{"{'kind':'Pod','spec':{'volumes':[{'name':'g','gcePersistentDisk':{'readOnly':1}}]"
		 "}}",
		 "spec.volumes[0].gcePersistentDisk.readOnly", "expected boolean, got number"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct sx_object o;
		struct sx_error err = {0};

		CHECK(decode(cases[i].json, &o, &err) < 0);
		CHECK(o.obj == NULL);
		CHECK_STR(err.path, cases[i].path);
		CHECK_STR(err.msg, cases[i].msg);
	}
}

/* A state file with a bad PV names the object and the field. */
static void test_state_error_names_object(void)
{
	static const char doc[] =
		"{'kind':'List','items':[{'kind':'CSINode','metadata':{'name':'worker-1'},"
		"'spec':{'drivers':[{'name':'ebs.csi.aws.com','allocatable':{'count':-3}}]}}]}";
	char *s = strdup(doc);
	struct sx_cache *cache = sx_cache_new();
	struct sx_error err = {0};

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	CHECK(sx_state_load_buffer(cache, "state.json", s, strlen(s), &err) < 0);
	CHECK_STR(err.msg, "state.json: items[0] (csinode worker-1): "
			   "spec.drivers[0].allocatable.count: must be non-negative, got -3");
	free(s);
	sx_cache_free(cache);
}

SX_TESTS(SX_TEST(test_pv), SX_TEST(test_pvc), SX_TEST(test_storage_class), SX_TEST(test_csi_kinds),
	 SX_TEST(test_pod_volumes), SX_TEST(test_malformed), SX_TEST(test_state_error_names_object))
