/* resource.k8s.io/v1 decoding (src/api/decode_dra.c). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/decode.h"
#include "schedext/dra.h"
#include "unit/test_decode_parse.h"

static struct sx_dra_object *dec(const char *text, struct sx_error *err)
{
	cJSON *j = parse(text);
	struct sx_object o;
	int rc = sx_decode_object(j, NULL, &o, err);

	cJSON_Delete(j);
	return rc == 0 ? o.obj : NULL;
}

static void test_slice(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *o = dec(
		"{'kind':'ResourceSlice','metadata':{'name':'s1'},'spec':{'driver':'gpu.example."
		"com',"
		"'pool':{'name':'node-a','generation':2,'resourceSliceCount':1},'nodeName':'node-a'"
		","
		"'devices':[{'name':'gpu-0','attributes':{'model':{'string':'a100'},"
		"'gpu.example.com/index':{'int':0},'ecc':{'bool':true},'fw':{'version':'1.2.3'}},"
		"'capacity':{'memory':{'value':'40Gi'}}}]}}",
		&err);
	const struct sx_dra_device *d;

	CHECK(o != NULL);
	if (!o)
		return;
	CHECK_INT(o->kind, SX_KIND_RESOURCE_SLICE);
	CHECK_STR(sx_str_get(o->u.slice.driver), "gpu.example.com");
	CHECK_STR(sx_str_get(o->u.slice.pool), "node-a");
	CHECK_INT(o->u.slice.generation, 2);
	CHECK_INT(o->u.slice.slice_count, 1);
	CHECK_STR(sx_str_get(o->u.slice.node_name), "node-a");
	CHECK_INT(o->u.slice.ndevices, 1);
	d = &o->u.slice.devices[0];
	CHECK_INT(d->nattrs, 4);
	CHECK(sx_dra_lookup_attr(d, o->u.slice.driver, "gpu.example.com/model") != NULL);
	CHECK(sx_dra_lookup_attr(d, o->u.slice.driver, "other.com/model") == NULL);
	CHECK_INT(sx_dra_lookup_attr(d, o->u.slice.driver, "gpu.example.com/index")->i, 0);
	CHECK_INT(d->ncaps, 1);
	CHECK(d->caps[0].value == (sx_nano)40 * 1024 * 1024 * 1024 * SX_NANO_PER_UNIT);
	sx_dra_unref(o);
}

/* DeviceAttribute's lists (DRAListTypeAttributes) and an attribute with
 * no value this release knows (`{}`: kept, as upstream keeps it, for
 * selectors and constraints to report "unsupported attribute value"). */
static void test_attribute_types(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *o =
		dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'driver':'d',"
		    "'devices':[{'name':'x','attributes':{'n':{'ints':[0,-3]},'b':{'bools':[true,"
		    "false]},"
		    "'s':{'strings':['p','q','r']},'v':{'versions':['1.0.0']},'e':{'strings':[]},"
		    "'u':{},'z':{'versions':null}}}]}}",
		    &err);
	const struct sx_dra_device *d;
	const struct sx_dra_attr *a;

	CHECK(o != NULL);
	if (!o)
		return;
	d = &o->u.slice.devices[0];
	CHECK_INT(d->nattrs, 7);
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/n");
	CHECK(a && a->type == SX_DRA_ATTR_INTS && a->nlist == 2 && a->list.ints[1] == -3);
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/b");
	CHECK(a && a->type == SX_DRA_ATTR_BOOLS && a->nlist == 2 && a->list.bools[0] &&
	      !a->list.bools[1]);
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/s");
	CHECK(a && a->type == SX_DRA_ATTR_STRINGS && a->nlist == 3);
	CHECK_STR(a ? a->list.strs[2] : "", "r");
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/v");
	CHECK(a && a->type == SX_DRA_ATTR_VERSIONS && a->nlist == 1);
	CHECK_STR(a ? a->list.strs[0] : "", "1.0.0");
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/e");
	CHECK(a && a->type == SX_DRA_ATTR_STRINGS && a->nlist == 0);
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/u");
	CHECK(a && a->type == SX_DRA_ATTR_NONE && !sx_dra_attr_scalar(a));
	a = sx_dra_lookup_attr(d, o->u.slice.driver, "d/z");
	CHECK(a && a->type == SX_DRA_ATTR_NONE);
	sx_dra_unref(o);
}

static void test_claim(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *o = dec(
		"{'kind':'ResourceClaim','metadata':{'name':'c','namespace':'ns','uid':'u1',"
		"'resourceVersion':'7','finalizers':['resource.kubernetes.io/delete-protection'],"
		"'ownerReferences':[{'kind':'Pod','name':'p','uid':'pu','controller':true}]},"
		"'spec':{'devices':{'requests':[{'name':'r','exactly':{'deviceClassName':'gpu',"
		"'selectors':[{'cel':{'expression':'true'}}]}},{'name':'f','firstAvailable':["
		"{'name':'a','deviceClassName':'x','allocationMode':'All'}]}],"
		"'constraints':[{'requests':['r'],'matchAttribute':'gpu.example.com/numa'}],"
		"'config':[{'requests':['r'],'opaque':{'driver':'d','parameters':{'a':1}}}]}},"
		"'status':{'allocation':{'devices':{'results':[{'request':'r','driver':'d','pool':'"
		"p',"
		"'device':'g0'}]},'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':"
		"'metadata.name','operator':'In','values':['n1']}]}]}},'reservedFor':[{'resource':"
		"'pods','name':'p','uid':'pu'}]}}",
		&err);
	const struct sx_dra_claim *c;

	CHECK(o != NULL);
	if (!o)
		return;
	c = &o->u.claim;
	CHECK(c->has_finalizer);
	CHECK_STR(c->owner_uid, "pu");
	CHECK_INT(c->spec.nrequests, 2);
	CHECK_INT(c->spec.requests[0].exactly.count, 1);
	CHECK_STR(c->spec.requests[0].exactly.selectors[0], "true");
	CHECK_INT(c->spec.requests[1].nsub, 1);
	CHECK_INT(c->spec.requests[1].first_available[0].mode, SX_DRA_ALL);
	CHECK_STR(c->spec.constraints[0].match_attribute, "gpu.example.com/numa");
	CHECK_STR(c->spec.config[0].opaque, "{\"driver\":\"d\",\"parameters\":{\"a\":1}}");
	CHECK(c->allocation && c->allocation->nresults == 1 && c->allocation->node_selector);
	CHECK_INT(c->nreserved, 1);
	CHECK_STR(c->reserved[0].uid, "pu");
	sx_dra_unref(o);
}

static void test_errors(void)
{
	struct sx_error err = {0};

	/* an attribute member the v1 type lacks names itself */
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'attributes':{'a':{'floats':[1.5]}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].attributes.a.floats");
	CHECK_STR(err.msg, "unknown field \"floats\"");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'attributes':{'a':{'ints':[1,'x']}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].attributes.a.ints[1]");
	CHECK_STR(err.msg, "expected integer, got string");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'attributes':{'a':{'bools':[true,1]}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].attributes.a.bools[1]");
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','exactly':{'count':'x'}}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].exactly.count");
	/* device taints and request tolerations (DRADeviceTaints) */
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'taints':[{'key':'k','effect':''}]}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].taints[0].effect");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'taints':[{'effect':'NoSchedule'}]}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].taints[0].key");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'taints':[{'key':'k','effect':'NoSchedule','timeAdded':7}]}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].taints[0].timeAdded");
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','exactly':{'deviceClassName':'x','tolerations':[{'key':'k',"
		  "'operator':'Gt'}]}}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].exactly.tolerations[0].operator");
	CHECK(strstr(err.msg, "Unsupported value: \"Gt\"") != NULL);
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','firstAvailable':[{'name':'s','deviceClassName':'x','tolerations':"
		  "[{'key':'k','operator':'Exists','effect':'PreferNoSchedule'}]}]}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].firstAvailable[0].tolerations[0].effect");
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','exactly':{'deviceClassName':'x','tolerations':[{'key':'k',"
		  "'operator':'Exists','value':'v'}]}}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].exactly.tolerations[0].value");
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','exactly':{'deviceClassName':'x','tolerations':[{'key':'k',"
		  "'tolerationSeconds':'x'}]}}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].exactly.tolerations[0].tolerationSeconds");
}

/* sharedCounters and consumesCounters (DRAPartitionableDevices). */
static void test_counters(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *s = dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'"
				      "driver':'d','pool':{'name':'p',"
				      "'generation':1,'resourceSliceCount':2},'sharedCounters':[{'"
				      "name':'gpu-0','counters':"
				      "{'memory':{'value':'80Gi'},'sms':{'value':'132'}}}]}}",
				      &err);
	struct sx_dra_object *d = dec("{'kind':'ResourceSlice','metadata':{'name':'s2'},'spec':{'"
				      "driver':'d','pool':{'name':'p',"
				      "'generation':1,'resourceSliceCount':2},'"
				      "perDeviceNodeSelection':true,'devices':[{'name':"
				      "'mig-1','nodeName':'n1','consumesCounters':[{'counterSet':'"
				      "gpu-0','counters':{'memory':"
				      "{'value':'10Gi'}}}]},{'name':'whole','allNodes':true}]}}",
				      &err);

	CHECK(s != NULL && d != NULL);
	if (s) {
		CHECK(s->u.slice.shared_counters && !s->u.slice.consumes);
		CHECK_INT(s->u.slice.ncounter_sets, 1);
		CHECK_STR(sx_str_get(s->u.slice.counter_sets[0].name), "gpu-0");
		CHECK_INT(s->u.slice.counter_sets[0].ncounters, 2);
		CHECK(s->u.slice.counter_sets[0].counters[1].value == 132 * SX_NANO_PER_UNIT);
	}
	if (d) {
		CHECK(d->u.slice.per_device && d->u.slice.consumes && !d->u.slice.shared_counters);
		CHECK_INT(d->u.slice.devices[0].nconsumes, 1);
		CHECK_STR(sx_str_get(d->u.slice.devices[0].consumes[0].name), "gpu-0");
		CHECK(d->u.slice.devices[0].consumes[0].counters[0].value ==
		      (sx_nano)10 * 1024 * 1024 * 1024 * SX_NANO_PER_UNIT);
		CHECK_STR(sx_str_get(d->u.slice.devices[0].node_name), "n1");
		CHECK(d->u.slice.devices[1].all_nodes && d->u.slice.devices[1].nconsumes == 0);
	}
	sx_dra_unref(s);
	sx_dra_unref(d);
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'sharedCounters':[{"
		  "'counters':{'m':{'value':'1'}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.sharedCounters[0].name");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'sharedCounters':[{"
		  "'name':'c','counters':{'m':{'value':'lots'}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.sharedCounters[0].counters.m.value");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'consumesCounters':[{'counterSet':'c','counters':{'m':{}}}]}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].consumesCounters[0].counters.m");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'consumesCounters':[{'counters':{}}]}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].consumesCounters[0].counterSet");
}

/* devices[].taints and exactly/firstAvailable tolerations as decoded. */
static void test_taints(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *s = dec(
		"{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'driver':'d','devices':["
		"{'name':'a','taints':[{'key':'k','value':'v','effect':'NoExecute',"
		"'timeAdded':'2026-01-01T00:00:00Z'},{'key':'k2','effect':'SomeFutureEffect'},"
		"{'key':'k3','effect':'None'}]}]}}",
		&err);
	struct sx_dra_object *c = dec(
		"{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':["
		"{'name':'r','exactly':{'deviceClassName':'x','tolerations':[{'key':'k',"
		"'operator':'Equal','value':'v','effect':'NoExecute','tolerationSeconds':30},"
		"{'operator':'Exists'}]}},{'name':'f','firstAvailable':[{'name':'s',"
		"'deviceClassName':'x','tolerations':[{'key':'k','value':'v'}]}]}]}}}",
		&err);
	const struct sx_dra_device *d;
	const struct sx_dra_exact *e;

	CHECK(s != NULL && c != NULL);
	if (!s || !c) {
		sx_dra_unref(s);
		sx_dra_unref(c);
		return;
	}
	d = &s->u.slice.devices[0];
	CHECK_INT(d->ntaints, 3);
	CHECK_STR(sx_str_get(d->taints[0].key), "k");
	CHECK_STR(sx_str_get(d->taints[0].value), "v");
	CHECK_INT(d->taints[0].effect, SX_DRA_EFFECT_NO_EXECUTE);
	CHECK(d->taints[0].has_time_added && d->taints[0].time_added == 1767225600);
	/* consumers treat an unknown effect like None */
	CHECK_INT(d->taints[1].effect, SX_DRA_EFFECT_OTHER);
	CHECK_INT(d->taints[2].effect, SX_DRA_EFFECT_NONE);
	e = &c->u.claim.spec.requests[0].exactly;
	CHECK_INT(e->ntolerations, 2);
	CHECK_INT(e->tolerations[0].op, SX_DRA_TOL_EQUAL);
	CHECK(e->tolerations[0].has_effect && e->tolerations[0].effect == SX_DRA_EFFECT_NO_EXECUTE);
	CHECK(e->tolerations[0].has_seconds && e->tolerations[0].seconds == 30);
	CHECK_INT(e->tolerations[1].op, SX_DRA_TOL_EXISTS);
	CHECK(!e->tolerations[1].has_effect && e->tolerations[1].key == SX_STR_EMPTY);
	e = &c->u.claim.spec.requests[1].first_available[0];
	CHECK_INT(e->ntolerations, 1);
	CHECK_INT(e->tolerations[0].op, SX_DRA_TOL_EQUAL); /* the API default */
	sx_dra_unref(s);
	sx_dra_unref(c);
}

static void test_pod_claims(void)
{
	struct sx_error err = {0};
	cJSON *j =
		parse("{'metadata':{'name':'p','namespace':'ns'},'spec':{'containers':[],"
		      "'resourceClaims':[{'name':'gpu','resourceClaimTemplateName':'t'},"
		      "{'name':'shared','resourceClaimName':'c'}]},'status':{"
		      "'resourceClaimStatuses':[{'name':'gpu','resourceClaimName':'p-gpu-x'}]}}");
	struct sx_pod *pod = sx_decode_pod(j, &err);

	cJSON_Delete(j);
	CHECK(pod != NULL);
	if (!pod)
		return;
	CHECK_INT(pod->nresource_claims, 2);
	CHECK_STR(pod->resource_claims[0].template_name, "t");
	CHECK(pod->resource_claims[0].has_status);
	CHECK_STR(pod->resource_claims[0].status_claim, "p-gpu-x");
	CHECK_STR(pod->resource_claims[1].claim_name, "c");
	CHECK(!pod->resource_claims[1].has_status);
	sx_pod_unref(pod);
}

/* DRAConsumableCapacity, DRADeviceBindingConditions and DRAExtendedResource
 * fields, and the errors naming the field of a bad value. */
static void test_1_37_fields(void)
{
	struct sx_error err = {0};
	struct sx_dra_object *o = dec(
		"{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'driver':'nic.example.com'"
		","
		"'pool':{'name':'p','generation':1,'resourceSliceCount':1},'nodeName':'n',"
		"'devices':[{'name':'nic','allowMultipleAllocations':true,'bindsToNode':true,"
		"'bindingConditions':['Attached'],'bindingFailureConditions':['Failed'],"
		"'capacity':{'bw':{'value':'10Gi','requestPolicy':{'default':'1Gi','validRange':"
		"{'min':'1Gi','max':'8Gi','step':'1Gi'}}},'q':{'value':'4','requestPolicy':"
		"{'validValues':['1','2','4']}}}}]}}",
		&err);
	const struct sx_dra_device *d;
	const struct sx_dra_cap_policy *bw;

	CHECK(o != NULL);
	if (!o)
		return;
	d = &o->u.slice.devices[0];
	CHECK(d->allow_multiple && d->binds_to_node && d->binding_conditions);
	CHECK_INT(d->nbind_conds, 1);
	CHECK_STR(d->bind_conds[0], "Attached");
	CHECK_STR(d->bind_fail[0], "Failed");
	CHECK_INT(d->ncaps, 2);
	bw = d->caps[0].policy;
	CHECK(bw && bw->has_default && bw->has_range && bw->has_min && bw->has_max &&
	      bw->has_step && d->caps[0].binary);
	CHECK(bw->step.v == (sx_nano)1024 * 1024 * 1024 * SX_NANO_PER_UNIT);
	CHECK_INT(d->caps[1].policy->nvalid, 3);
	sx_dra_unref(o);

	o = dec("{'kind':'ResourceClaim','metadata':{'name':'c','namespace':'ns'},'spec':{"
		"'devices':{'requests':[{'name':'r','exactly':{'deviceClassName':'x','capacity':"
		"{'requests':{'bw':'3Gi'}}}}],'constraints':[{'distinctAttribute':'a/b'}]}},"
		"'status':{'allocation':{'devices':{'results':[{'request':'r','driver':'d','pool':"
		"'p','device':'nic','shareID':'s-1','consumedCapacity':{'bw':'4Gi'},"
		"'bindingConditions':['Attached']}]}},'devices':[{'driver':'d','pool':'p','device':"
		"'nic','conditions':[{'type':'Attached','status':'True','reason':'R'}]}]}}",
		&err);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK(o->u.claim.spec.requests[0].exactly.has_capacity);
	CHECK_STR(o->u.claim.spec.requests[0].exactly.capreq[0].name, "bw");
	CHECK_STR(o->u.claim.spec.constraints[0].distinct_attribute, "a/b");
	CHECK_STR(o->u.claim.allocation->results[0].share_id, "s-1");
	CHECK_INT(o->u.claim.allocation->results[0].nconsumed, 1);
	CHECK_INT(o->u.claim.allocation->results[0].nbind_conds, 1);
	CHECK_INT(o->u.claim.ndevice_status, 1);
	CHECK(o->u.claim.device_status[0].conds[0].is_true);
	sx_dra_unref(o);

	o = dec("{'kind':'DeviceClass','metadata':{'name':'gpu'},'spec':{'extendedResourceName':"
		"'example.com/gpu'}}",
		&err);
	CHECK(o && o->u.cls.extended_resource_name &&
	      strcmp(o->u.cls.extended_resource_name, "example.com/gpu") == 0);
	sx_dra_unref(o);

	/* bad values name their field */
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'capacity':{'bw':{'value':'1','requestPolicy':{'validRange':{'min':'1',"
		  "'step':'0'}}}}}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].capacity.bw.requestPolicy.validRange.step");
	CHECK(dec("{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{'devices':[{'name':'d',"
		  "'allowMultipleAllocations':'yes'}]}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices[0].allowMultipleAllocations");
	CHECK(dec("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':"
		  "[{'name':'r','exactly':{'deviceClassName':'x','capacity':{'requests':{'bw':"
		  "'lots'}}}}]}}}",
		  &err) == NULL);
	CHECK_STR(err.path, "spec.devices.requests[0].exactly.capacity.requests.bw");
}

SX_TESTS(SX_TEST(test_slice), SX_TEST(test_attribute_types), SX_TEST(test_claim),
	 SX_TEST(test_errors), SX_TEST(test_taints), SX_TEST(test_counters),
	 SX_TEST(test_pod_claims), SX_TEST(test_1_37_fields))
