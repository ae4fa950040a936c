/* Feature gates per release (src/framework/features.c): the spec table at
 * each release, --feature-gates and --emulated-version with upstream's
 * error texts (component-base featuregate/feature_gate_test.go,
 * compatibility/registry_test.go). */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedext/buf.h"
#include "schedext/features.h"

/* Stage and default of the gates at 1.35, 1.36, 1.37, as read in
 * upstream's versioned specs. */
static void test_spec_table(void)
{
	static const struct {
		enum sx_feature id;
		struct {
			enum sx_prerelease stage;
			bool def, locked;
		} at[3];
	} rows[] = {
		{SX_FEATURE_OPPORTUNISTIC_BATCHING,
		 {{SX_BETA, true, false}, {SX_BETA, true, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION,
		 {{SX_BETA, true, false}, {SX_BETA, true, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_NODE_DECLARED_FEATURES,
		 {{SX_ALPHA, false, false}, {SX_BETA, true, false}, {SX_GA, true, true}}},
		{SX_FEATURE_STORAGE_CAPACITY_SCORING,
		 {{SX_ALPHA, false, false}, {SX_ALPHA, false, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_VOLUME_LIMIT_SCALING,
		 {{SX_ALPHA, false, false}, {SX_ALPHA, false, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_SCHEDULER_ASYNC_API_CALLS,
		 {{SX_BETA, false, false}, {SX_BETA, false, false}, {SX_BETA, false, false}}},
		{SX_FEATURE_IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING,
		 {{SX_ALPHA, false, false}, {SX_BETA, true, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_TAINT_TOLERATION_COMPARISON_OPERATORS,
		 {{SX_ALPHA, false, false}, {SX_ALPHA, false, false}, {SX_ALPHA, false, false}}},
		{SX_FEATURE_DRA_EXTENDED_RESOURCE,
		 {{SX_ALPHA, false, false}, {SX_BETA, true, false}, {SX_GA, true, true}}},
		{SX_FEATURE_DRA_DEVICE_TAINTS,
		 {{SX_ALPHA, false, false}, {SX_BETA, true, false}, {SX_GA, true, false}}},
		{SX_FEATURE_DRA_DEVICE_TAINT_RULES,
		 {{SX_ALPHA, false, false}, {SX_BETA, false, false}, {SX_GA, true, false}}},
		{SX_FEATURE_DRA_PRIORITIZED_LIST,
		 {{SX_BETA, true, false}, {SX_GA, true, false}, {SX_GA, true, true}}},
		{SX_FEATURE_DRA_ADMIN_ACCESS,
		 {{SX_BETA, true, false}, {SX_GA, true, true}, {SX_GA, true, true}}},
		{SX_FEATURE_DRA_DEVICE_BINDING_CONDITIONS,
		 {{SX_ALPHA, false, false}, {SX_BETA, true, false}, {SX_BETA, true, false}}},
		{SX_FEATURE_DRA_RESOURCE_CLAIM_DEVICE_STATUS,
		 {{SX_BETA, true, false}, {SX_BETA, true, false}, {SX_GA, true, true}}},
		{SX_FEATURE_GENERIC_WORKLOAD,
		 {{SX_ALPHA, false, false}, {SX_ALPHA, false, false}, {SX_BETA, false, false}}},
		{SX_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
		 {{SX_PRE_ALPHA, false, false},
		  {SX_ALPHA, false, false},
		  {SX_ALPHA, false, false}}},
		{SX_FEATURE_DYNAMIC_RESOURCE_ALLOCATION,
		 {{SX_GA, true, true}, {SX_GA, true, true}, {SX_GA, true, true}}},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++)
		for (int r = 0; r < 3; r++) {
			struct sx_feature_spec s = sx_feature_spec_at(rows[i].id, 35 + r);
			struct sx_features f;

			sx_features_init(&f, 35 + r);
			if (s.stage != rows[i].at[r].stage || s.def != rows[i].at[r].def ||
			    s.locked != rows[i].at[r].locked)
				sx_test_fail(__FILE__, __LINE__, "%s at 1.%d: %s/%d/%d",
					     sx_feature_name(rows[i].id), 35 + r,
					     sx_prerelease_name(s.stage), s.def, s.locked);
			CHECK(sx_feature_enabled(&f, rows[i].id) == rows[i].at[r].def);
			CHECK_INT(sx_release(&f), 35 + r);
		}
}

/* featureGate.Set at a release: the value in force, or the exact error. */
static void test_set(void)
{
	static const struct {
		int release;
		const char *flag, *err; /* err NULL: accepted */
		enum sx_feature id;
		bool want;
	} rows[] = {
		{37, "OpportunisticBatching=false", NULL, SX_FEATURE_OPPORTUNISTIC_BATCHING, false},
		{37, " OpportunisticBatching = false ", NULL, SX_FEATURE_OPPORTUNISTIC_BATCHING,
		 false},
		{37, "OpportunisticBatching=F", NULL, SX_FEATURE_OPPORTUNISTIC_BATCHING, false},
		{37, "kube:TaintTolerationComparisonOperators=true", NULL,
		 SX_FEATURE_TAINT_TOLERATION_COMPARISON_OPERATORS, true},
		{35, "NodeDeclaredFeatures=true", NULL, SX_FEATURE_NODE_DECLARED_FEATURES, true},
		{37, "NodeDeclaredFeatures=true", NULL, SX_FEATURE_NODE_DECLARED_FEATURES, true},
		{37, "DRADeviceTaints=false", NULL, SX_FEATURE_DRA_DEVICE_TAINTS, false},
		{37, "StorageCapacityScoring=false,StorageCapacityScoring=true", NULL,
		 SX_FEATURE_STORAGE_CAPACITY_SCORING, true},
		{37, "AllAlpha=true,GenericWorkload=true", NULL,
		 SX_FEATURE_TAINT_TOLERATION_COMPARISON_OPERATORS, true},
		{37, "AllAlpha=true,GenericWorkload=true", NULL, SX_FEATURE_COMPOSITE_POD_GROUP,
		 true},
		/* the workload gates: stages per release and dependencies */
		{35, "GangScheduling=true,GenericWorkload=true", NULL, SX_FEATURE_GANG_SCHEDULING,
		 true},
		{37, "GangScheduling=true,GenericWorkload=true", NULL, SX_FEATURE_GANG_SCHEDULING,
		 true},
		{37, "", NULL, SX_FEATURE_GANG_SCHEDULING, false},
		{37, "", NULL, SX_FEATURE_WORKLOAD_AWARE_PREEMPTION, false},
		{37, "", NULL, SX_FEATURE_WORKLOAD_WITH_JOB, false},
		{36, "GenericWorkload=true,WorkloadWithJob=true", NULL,
		 SX_FEATURE_WORKLOAD_WITH_JOB, true},
		{36, "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true", NULL,
		 SX_FEATURE_WORKLOAD_AWARE_PREEMPTION, true},
		{35, "WorkloadAwarePreemption=true",
		 "cannot set feature gate WorkloadAwarePreemption to true, feature is PreAlpha at "
		 "emulated version 1.35",
		 SX_FEATURE_COUNT, false},
		{37, "GangScheduling=true",
		 "feature GangScheduling depends on GenericWorkload, which is disabled",
		 SX_FEATURE_COUNT, false},
		{37, "GenericWorkload=true,WorkloadAwarePreemption=true",
		 "feature WorkloadAwarePreemption depends on GangScheduling, which is disabled",
		 SX_FEATURE_COUNT, false},
		{37, "AllBeta=false", NULL, SX_FEATURE_OPPORTUNISTIC_BATCHING, false},
		{37, "AllBeta=false,OpportunisticBatching=true", NULL,
		 SX_FEATURE_OPPORTUNISTIC_BATCHING, true},
		{37, "", NULL, SX_FEATURE_VOLUME_LIMIT_SCALING, true},
		{37, "Bogus=true", "unrecognized feature gate: Bogus", SX_FEATURE_COUNT, false},
		{37, "OpportunisticBatching=true,Bogus=false", "unrecognized feature gate: Bogus",
		 SX_FEATURE_COUNT, false},
		{37, "NodeDeclaredFeatures=false",
		 "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true",
		 SX_FEATURE_COUNT, false},
		{37, "DynamicResourceAllocation=false,DRAExtendedResource=false",
		 "[cannot set feature gate DynamicResourceAllocation to false, feature is locked "
		 "to "
		 "true, cannot set feature gate DRAExtendedResource to false, feature is locked to "
		 "true]",
		 SX_FEATURE_COUNT, false},
		{35, "TopologyAwareWorkloadScheduling=true",
		 "cannot set feature gate TopologyAwareWorkloadScheduling to true, feature is "
		 "PreAlpha at emulated version 1.35",
		 SX_FEATURE_COUNT, false},
		{37, "OpportunisticBatching", "missing bool value for OpportunisticBatching",
		 SX_FEATURE_COUNT, false},
		{37, "OpportunisticBatching=maybe",
		 "invalid value of OpportunisticBatching=maybe, err: strconv.ParseBool: parsing "
		 "\"maybe\": invalid syntax",
		 SX_FEATURE_COUNT, false},
		{37, "wardle:A=true", "component not registered: wardle", SX_FEATURE_COUNT, false},
		{37, "kube:OpportunisticBatching=true,NodeDeclaredFeatures=true",
		 "set kube feature gates with default empty prefix or kube: prefix consistently, "
		 "do not mix use",
		 SX_FEATURE_COUNT, false},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		struct sx_features f, before;
		struct sx_error err = {0};
		int rc;

		sx_features_init(&f, rows[i].release);
		before = f;
		rc = sx_features_set(&f, rows[i].flag, &err);
		if (rows[i].err) {
			CHECK(rc == SX_EINVAL);
			CHECK_STR(err.msg, rows[i].err);
			CHECK(memcmp(&f, &before, sizeof(f)) == 0);
			continue;
		}
		CHECK_INT(rc, 0);
		if (rc)
			fprintf(stderr, "  %s: %s\n", rows[i].flag, err.msg);
		CHECK(sx_feature_enabled(&f, rows[i].id) == rows[i].want);
	}
}

/* AllAlpha does not override an explicit value, and explicit values win
 * over AllBeta whatever the order. */
static void test_special_gates(void)
{
	struct sx_features f;
	struct sx_error err = {0};

	sx_features_init(&f, 37);
	CHECK_INT(sx_features_set(&f, "GenericWorkload=true,AllBeta=false", &err), 0);
	CHECK(sx_feature_enabled(&f, SX_FEATURE_GENERIC_WORKLOAD));
	CHECK(!sx_feature_enabled(&f, SX_FEATURE_STORAGE_CAPACITY_SCORING));
	/* locked GA gates are not beta: untouched */
	CHECK(sx_feature_enabled(&f, SX_FEATURE_NODE_DECLARED_FEATURES));
}

static void test_release_flag(void)
{
	static const struct {
		const char *flag, *err;
		int want;
	} rows[] = {
		{"1.36", NULL, 36},
		{"kube=1.35", NULL, 35},
		{" kube = 1.37 ", NULL, 37},
		{"v1.36", NULL, 36},
		{"1.36.0", NULL, 36},
		{"1.34", "emulation version 1.34 is not between [1.35, 1.37]", 0},
		{"1.38", "emulation version 1.38 is not between [1.35, 1.37]", 0},
		{"2.0", "emulation version 2.0 is not between [1.35, 1.37]", 0},
		{"1.36.1", "patch version not allowed, got: kube=1.36.1", 0},
		{"kube=1.36.2", "patch version not allowed, got: kube=1.36.2", 0},
		{"newest", "could not parse \"newest\" as version", 0},
		{"1", "could not parse \"1\" as version", 0},
		{"wardle=1.2", "component not registered: wardle", 0},
		{"1.35,kube=1.36", "duplicate version flag, kube=1.35 and kube=1.36", 0},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		struct sx_error err = {0};
		int minor = 0, rc = sx_features_parse_release(rows[i].flag, &minor, &err);

		if (rows[i].err) {
			CHECK(rc == SX_EINVAL);
			CHECK_STR(err.msg, rows[i].err);
		} else {
			CHECK_INT(rc, 0);
			CHECK_INT(minor, rows[i].want);
		}
	}
}

/* What differs from the release's defaults, for the log and /configz. */
static void test_report(void)
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_buf b;
	char buf[256];

	sx_features_init(&f, 36);
	CHECK_STR(sx_features_diff(&f, buf, sizeof(buf)), "");
	CHECK_INT(sx_features_set(&f,
				  "OpportunisticBatching=false,StorageCapacityScoring=true,"
				  "NodeDeclaredFeatures=true",
				  &err),
		  0);
	CHECK_STR(sx_features_diff(&f, buf, sizeof(buf)),
		  "OpportunisticBatching=false,StorageCapacityScoring=true");
	sx_buf_init(&b);
	sx_features_write_json(&b, &f);
	sx_buf_putc(&b, '\0');
	CHECK_STR(b.data,
		  "\"emulatedVersion\":\"1.36\",\"featureGates\":{\"OpportunisticBatching\":"
		  "false,\"StorageCapacityScoring\":true}");
	sx_buf_free(&b);
	CHECK_STR(sx_feature_name(SX_FEATURE_IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING),
		  "InPlacePodLevelResourcesVerticalScaling");
}

SX_TESTS(SX_TEST(test_spec_table), SX_TEST(test_set), SX_TEST(test_special_gates),
	 SX_TEST(test_release_flag), SX_TEST(test_report))
