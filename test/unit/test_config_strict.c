/* KubeSchedulerConfiguration per release (src/framework/config_strict.c,
 * config_dra.c, config.c): strict decoding at every depth and in plugin
 * args with kube-scheduler's texts, the 1.36/1.37 fields (the PodGroup
 * plugin sets, DynamicResourcesArgs.bindingTimeout) and what an older
 * release or a gate turned off makes of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/intern.h"

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static struct sx_features at(int release, const char *gates)
{
	struct sx_features f;
	struct sx_error err = {0};

	sx_features_init(&f, release);
	if (gates && sx_features_set(&f, gates, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "gates %s: %s", gates, err.msg);
	return f;
}

/* The error text of a configuration refused at release/gates ("" when it
 * loads). */
static const char *fail_at(int release, const char *gates, const char *yaml, char *buf, size_t len)
{
	struct sx_features f = at(release, gates);
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_parse_for(yaml, strlen(yaml), &f, &err);

	if (cfg) {
		sx_config_free(cfg);
		buf[0] = '\0';
		return buf;
	}
	return sx_error_string(&err, buf, len);
}

static char *configz(const struct sx_config *cfg)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_config_write_json(&b, cfg);
	sx_buf_putc(&b, '\0');
	return b.data;
}

/* A file as written for 1.37, with every field 1.36 and 1.37 added. */
static const char file_137[] =
	HEAD "profiles:\n"
	     "- schedulerName: default-scheduler\n"
	     "  plugins:\n"
	     "    placementGenerate:\n      enabled: [{name: PodTopologySpread}]\n"
	     "    placementScore:\n      enabled: [{name: NodeResourcesFit, weight: 3}]\n"
	     "      disabled: [{name: '*'}]\n"
	     "    podGroupPostFilter:\n      enabled: [{name: DefaultPreemption}]\n"
	     "  pluginConfig:\n"
	     "  - name: DynamicResources\n"
	     "    args: {filterTimeout: 5s, bindingTimeout: 2m}\n";

static void test_file_137(void)
{
	struct sx_features f = at(37, NULL);
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_parse_for(file_137, strlen(file_137), &f, &err);
	const struct sx_profile *p;
	char *z;

	CHECK(cfg != NULL);
	if (!cfg) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	p = cfg->profiles[0];
	CHECK_INT(sx_release(&p->features), 37);
	CHECK(sx_feature_enabled(&p->features, SX_FEATURE_NODE_DECLARED_FEATURES));
	CHECK_INT(p->ngroup[SX_GPT_PLACEMENT_GENERATE], 1);
	CHECK_STR(p->group[SX_GPT_PLACEMENT_GENERATE][0].name, "PodTopologySpread");
	CHECK_INT(p->ngroup[SX_GPT_PLACEMENT_SCORE], 1);
	CHECK_INT(p->group[SX_GPT_PLACEMENT_SCORE][0].weight, 3);
	CHECK_INT(p->ngroup[SX_GPT_POD_GROUP_POST_FILTER], 1);
	/* the pod extension points are untouched by the PodGroup ones */
	CHECK(sx_profile_has(p, SX_PT_SCORE, "NodeResourcesFit"));
	z = configz(cfg);
	CHECK(z &&
	      strstr(z, "\"placementGenerate\":{\"enabled\":[{\"name\":\"PodTopologySpread\"}]},"
			"\"placementScore\":{\"enabled\":[{\"name\":\"NodeResourcesFit\","
			"\"weight\":3}]},\"podGroupPostFilter\":{\"enabled\":[{\"name\":"
			"\"DefaultPreemption\"}]}}"));
	CHECK(z && strstr(z, "\"filterTimeout\":\"5s\",\"bindingTimeout\":\"2m0s\"}"));
	CHECK(z && strstr(z, "},\"emulatedVersion\":\"1.37\",\"featureGates\":{}}\n"));
	free(z);
	sx_config_free(cfg);
}

/* Unknown fields at any depth and in plugin args: kube-scheduler's
 * strict decoding errors, all of them in one. */
static void test_unknown_fields(void)
{
	static const struct {
		const char *yaml, *want;
	} rows[] = {
		{HEAD "profiles:\n- plugins:\n    bogusSet: {}\n",
		 "strict decoding error: unknown field \"profiles[0].plugins.bogusSet\""},
		{HEAD "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, "
		      "wieght: 2}]\n",
		 "strict decoding error: unknown field "
		 "\"profiles[0].plugins.score.enabled[0].wieght\""},
		{HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    filter:\n"
		      "      enable: [{name: NodeName}]\n",
		 "strict decoding error: unknown field \"profiles[1].plugins.filter.enable\""},
		{HEAD "leaderElection: {leaderelect: true}\n",
		 "strict decoding error: unknown field \"leaderElection.leaderelect\""},
		{HEAD
		 "extenders:\n- urlPrefix: http://a\n  tlsConfig: {insecure: true, caPath: /x}\n",
		 "strict decoding error: unknown field \"extenders[0].tlsConfig.caPath\""},
		{HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
		      "    args: {bogusArg: 1}\n",
		 "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding "
		 "error: decoding args for plugin DynamicResources: strict decoding error: unknown "
		 "field \"bogusArg\""},
		{HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
		      "      scoringStrategy:\n        resources: [{name: cpu, wieght: 1}]\n"
		      "      ignoredResource: [a]\n",
		 "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding "
		 "error: decoding args for plugin NodeResourcesFit: strict decoding error: unknown "
		 "field \"scoringStrategy.resources[0].wieght\", unknown field "
		 "\"ignoredResource\""},
		{HEAD "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
		      "      defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
		      "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabel: {a: b}}}]\n",
		 "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding "
		 "error: decoding args for plugin PodTopologySpread: strict decoding error: "
		 "unknown "
		 "field \"defaultConstraints[0].labelSelector.matchLabel\""},
		/* every error at once: the top-level decode's, then the args' */
		{HEAD "parallelizm: 4\nprofiles:\n- plugins:\n    bogusSet: {}\n  pluginConfig:\n"
		      "  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 1}\n"
		      "  - name: VolumeBinding\n    args: {bindTimeout: 5}\n",
		 "strict decoding error: unknown field \"parallelizm\", unknown field "
		 "\"profiles[0].plugins.bogusSet\", decoding .profiles[0].pluginConfig[1]: strict "
		 "decoding error: decoding args for plugin VolumeBinding: strict decoding error: "
		 "unknown field \"bindTimeout\""},
		/* case-sensitive, as sigs.k8s.io/json decodes */
		{HEAD "Parallelism: 4\n", "strict decoding error: unknown field \"Parallelism\""},
		/* a plugin without an args type: its args are not looked into */
		{HEAD "profiles:\n- pluginConfig:\n  - name: TaintToleration\n    args: {any: 1}\n",
		 ""},
		/* maps are values: their keys are not fields (decoding passes;
		 * validation then refuses a default constraint's selector) */
		{HEAD "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
		      "      defaultingType: List\n      defaultConstraints: [{maxSkew: 1, "
		      "topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
		      "{matchLabels: {anything: b}}}]\n",
		 "profiles[0].pluginConfig[PodTopologySpread].args: defaultConstraints[0]."
		 "labelSelector: Forbidden: constraint must not define a selector, as they deduced "
		 "for each pod"},
	};
	char buf[1024];

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++)
		CHECK_STR(fail_at(37, NULL, rows[i].yaml, buf, sizeof(buf)), rows[i].want);
}

/* A field of a later release is unknown to an older one, as that
 * release's kube-scheduler refuses it. */
static void test_release_fields(void)
{
	static const char pg[] = HEAD "profiles:\n- plugins:\n    placementGenerate: {}\n";
	static const char pgpf[] = HEAD "profiles:\n- plugins:\n    podGroupPostFilter: {}\n";
	static const char ps[] = HEAD "profiles:\n- plugins:\n    placementScore:\n"
				      "      enabled: [{name: NodeResourcesFit}]\n";
	char buf[1024];

	CHECK_STR(fail_at(35, NULL, pg, buf, sizeof(buf)),
		  "strict decoding error: unknown field \"profiles[0].plugins.placementGenerate\"");
	CHECK_STR(fail_at(36, NULL, pg, buf, sizeof(buf)), "");
	CHECK_STR(fail_at(35, NULL, ps, buf, sizeof(buf)),
		  "strict decoding error: unknown field \"profiles[0].plugins.placementScore\"");
	CHECK_STR(fail_at(36, NULL, ps, buf, sizeof(buf)), "");
	CHECK_STR(
		fail_at(36, NULL, pgpf, buf, sizeof(buf)),
		"strict decoding error: unknown field \"profiles[0].plugins.podGroupPostFilter\"");
	CHECK_STR(fail_at(37, NULL, pgpf, buf, sizeof(buf)), "");
	CHECK_STR(fail_at(35, NULL, file_137, buf, sizeof(buf)),
		  "strict decoding error: unknown field \"profiles[0].plugins.placementGenerate\", "
		  "unknown field \"profiles[0].plugins.placementScore\", unknown field "
		  "\"profiles[0].plugins.podGroupPostFilter\"");
}

/* The PodGroup sets check plugin names as every set does. */
static void test_group_sets_validated(void)
{
	char buf[1024];
	const char *bogus_score =
		HEAD "profiles:\n- plugins:\n    score:\n      enabled: [{name: Bogus}]\n";
	const char *bogus_placement =
		HEAD "profiles:\n- plugins:\n    placementScore:\n      enabled: [{name: Bogus}]\n";

	CHECK_STR(fail_at(37, NULL, bogus_score, buf, sizeof(buf)),
		  "profiles[0].plugins.score.enabled[0]: name: Invalid value: \"Bogus\": unknown "
		  "plugin");
	CHECK_STR(fail_at(37, NULL, bogus_placement, buf, sizeof(buf)),
		  "profiles[0].plugins.placementScore.enabled[0]: name: Invalid value: \"Bogus\": "
		  "unknown plugin");
	CHECK_STR(fail_at(37, NULL,
			  HEAD "profiles:\n- plugins:\n    podGroupPostFilter:\n"
			       "      disabled: [{}]\n",
			  buf, sizeof(buf)),
		  "profiles[0].plugins.podGroupPostFilter.disabled[0]: name: Required value");
}

/* DynamicResourcesArgs under each release's gates. */
static void test_dra_args_gates(void)
{
	static const char bt[] = HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
				      "    args: {bindingTimeout: 30s}\n";
	static const char ft[] = HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
				      "    args: {filterTimeout: 30s, bindingTimeout: 30s}\n";
	static const char short_bt[] = HEAD "profiles:\n- pluginConfig:\n"
					    "  - name: DynamicResources\n"
					    "    args: {bindingTimeout: 500ms}\n";
	char buf[1024];

	/* 1.35: DRADeviceBindingConditions is alpha, off */
	CHECK_STR(fail_at(35, NULL, bt, buf, sizeof(buf)),
		  "profiles[0].pluginConfig[DynamicResources].args: bindingTimeout: Forbidden: "
		  "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
		  "disabled");
	CHECK_STR(fail_at(35, "DRADeviceBindingConditions=true", bt, buf, sizeof(buf)), "");
	CHECK_STR(fail_at(36, NULL, bt, buf, sizeof(buf)), "");
	CHECK_STR(fail_at(36, "DRAResourceClaimDeviceStatus=false", bt, buf, sizeof(buf)),
		  "profiles[0].pluginConfig[DynamicResources].args: bindingTimeout: Forbidden: "
		  "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
		  "disabled");
	CHECK_STR(fail_at(37, "DRASchedulerFilterTimeout=false,DRADeviceBindingConditions=false",
			  ft, buf, sizeof(buf)),
		  "profiles[0].pluginConfig[DynamicResources].args: [filterTimeout: Forbidden: "
		  "DRASchedulingFilterTimeout feature gate is disabled, bindingTimeout: Forbidden: "
		  "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
		  "disabled]");
	CHECK_STR(fail_at(37, NULL, short_bt, buf, sizeof(buf)),
		  "profiles[0].pluginConfig[DynamicResources].args: bindingTimeout: Invalid value: "
		  "\"500ms\": must be at least 1 second");
}

/* The defaults the gates bring, as /configz shows them. */
static void test_dra_defaults(void)
{
	static const struct {
		int release;
		const char *gates, *want;
	} rows[] = {
		{37, NULL, "\"filterTimeout\":\"10s\",\"bindingTimeout\":\"10m0s\"}"},
		{36, NULL, "\"filterTimeout\":\"10s\",\"bindingTimeout\":\"10m0s\"}"},
		{35, NULL, "\"filterTimeout\":\"10s\"}"},
		{37, "DRASchedulerFilterTimeout=false,DRADeviceBindingConditions=false",
		 "\"filterTimeout\":\"0s\"}"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		struct sx_features f = at(rows[i].release, rows[i].gates);
		struct sx_error err = {0};
		struct sx_config *cfg = sx_config_default_for(&f, &err);
		char *z = cfg ? configz(cfg) : NULL;
		const char *dra = z ? strstr(z, "\"DynamicResourcesArgs\"") : NULL;

		CHECK(dra != NULL);
		if (dra && !strstr(dra, rows[i].want))
			sx_test_fail(__FILE__, __LINE__, "1.%d %s: %.200s", rows[i].release,
				     rows[i].gates ? rows[i].gates : "", dra);
		free(z);
		sx_config_free(cfg);
	}
}

/* /configz names the release and the gates set away from its defaults;
 * the PodGroup sets appear from the release that has them. */
static void test_configz_release(void)
{
	struct sx_features f = at(35, "OpportunisticBatching=false,NodeDeclaredFeatures=true");
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_default_for(&f, &err);
	char *z = cfg ? configz(cfg) : NULL;

	CHECK(z &&
	      strstr(z, "\"emulatedVersion\":\"1.35\",\"featureGates\":{\"NodeDeclaredFeatures\""
			":true,\"OpportunisticBatching\":false}}"));
	CHECK(z && !strstr(z, "placementScore"));
	CHECK(cfg &&
	      !sx_feature_enabled(&cfg->profiles[0]->features, SX_FEATURE_OPPORTUNISTIC_BATCHING));
	free(z);
	sx_config_free(cfg);
	f = at(36, NULL);
	cfg = sx_config_default_for(&f, &err);
	z = cfg ? configz(cfg) : NULL;
	/* NodeResourcesFit implements PlacementScore: multiPoint enables it. */
	CHECK(z && strstr(z, "\"placementScore\":{\"enabled\":[{\"name\":\"NodeResourcesFit\","
			     "\"weight\":1}]}}"));
	CHECK(z && !strstr(z, "podGroupPostFilter"));
	free(z);
	sx_config_free(cfg);
}

/* The file named in front of a strict error (sx_config_load_for). */
static void test_load_named(void)
{
	char path[] = "/tmp/sx-strict-XXXXXX", want[600];
	int fd = mkstemp(path);
	const char *bad = HEAD "profiles:\n- plugins:\n    bogusSet: {}\n";
	struct sx_features f = at(36, NULL);
	struct sx_error err = {0};
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(fp != NULL);
	if (!fp)
		return;
	fputs(bad, fp);
	fclose(fp);
	CHECK(sx_config_load_for(path, &f, &err) == NULL);
	snprintf(want, sizeof(want),
		 "%s: strict decoding error: unknown field "
		 "\"profiles[0].plugins.bogusSet\"",
		 path);
	CHECK_STR(err.msg, want);
	unlink(path);
}

/* podGroupPostFilter is resolved as every point: multiPoint's
 * DefaultPreemption by default, removed when the set disables it (the
 * pod-group cycle then runs no group preemption), and a plugin that does
 * not implement it refused (framework.go expandMultiPointPlugins). */
static void test_pod_group_post_filter_expanded(void)
{
	static const char dflt[] = HEAD "profiles:\n- schedulerName: default-scheduler\n";
	static const char off[] = HEAD "profiles:\n- plugins:\n    podGroupPostFilter:\n"
				       "      disabled: [{name: DefaultPreemption}]\n";
	static const char star[] = HEAD "profiles:\n- plugins:\n    podGroupPostFilter:\n"
					"      disabled: [{name: '*'}]\n";
	static const char wrong[] = HEAD "profiles:\n- plugins:\n    podGroupPostFilter:\n"
					 "      enabled: [{name: NodeResourcesFit}]\n";
	struct sx_features f = at(37, NULL);
	struct sx_error err = {0};
	struct sx_config *cfg;
	char buf[1024];
	char *z;

	cfg = sx_config_parse_for(dflt, strlen(dflt), &f, &err);
	CHECK(cfg != NULL);
	if (cfg) {
		CHECK_INT(cfg->profiles[0]->ngroup[SX_GPT_POD_GROUP_POST_FILTER], 1);
		CHECK_STR(cfg->profiles[0]->group[SX_GPT_POD_GROUP_POST_FILTER][0].name,
			  "DefaultPreemption");
		z = configz(cfg);
		CHECK(z && strstr(z, "\"podGroupPostFilter\":{\"enabled\":[{\"name\":"
				     "\"DefaultPreemption\"}]}"));
		free(z);
		sx_config_free(cfg);
	}
	for (int i = 0; i < 2; i++) {
		const char *y = i ? star : off;

		cfg = sx_config_parse_for(y, strlen(y), &f, &err);
		CHECK(cfg != NULL);
		if (cfg) {
			CHECK_INT(cfg->profiles[0]->ngroup[SX_GPT_POD_GROUP_POST_FILTER], 0);
			/* PostFilter itself keeps DefaultPreemption */
			CHECK(sx_profile_has(cfg->profiles[0], SX_PT_POST_FILTER,
					     "DefaultPreemption"));
			sx_config_free(cfg);
		}
	}
	CHECK_STR(fail_at(37, NULL, wrong, buf, sizeof(buf)),
		  "profiles[0].plugins.podGroupPostFilter: plugin \"NodeResourcesFit\" does not "
		  "extend podGroupPostFilter plugin");
}

int main(int argc, char **argv)
{
	static const struct sx_test_case cases[] = {
		SX_TEST(test_file_137),
		SX_TEST(test_unknown_fields),
		SX_TEST(test_release_fields),
		SX_TEST(test_group_sets_validated),
		SX_TEST(test_dra_args_gates),
		SX_TEST(test_dra_defaults),
		SX_TEST(test_configz_release),
		SX_TEST(test_load_named),
		SX_TEST(test_pod_group_post_filter_expanded),
	};

	sx_intern_init();
	return sx_test_main(argc, argv, __FILE__, cases, SX_ARRAY_SIZE(cases));
}
