/* The component part of KubeSchedulerConfiguration: clientConnection,
 * leaderElection, delayCacheUntilActive, extenders, strict keys, and what
 * bad input says (src/framework/config_component.c, extender_config.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/intern.h"
#include "schedext/leader.h"

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static struct sx_config *parse(const char *yaml, struct sx_error *err)
{
	memset(err, 0, sizeof(*err));
	return sx_config_parse(yaml, strlen(yaml), err);
}

/* "path: msg" of a failed parse. */
static const char *fail_msg(const char *yaml, char *buf, size_t len)
{
	struct sx_error err;
	struct sx_config *cfg = parse(yaml, &err);

	if (cfg) {
		sx_config_free(cfg);
		return "(parsed)";
	}
	return sx_error_string(&err, buf, len);
}

static void test_client_and_leader(void)
{
	struct sx_error err;
	struct sx_config *cfg =
		parse(HEAD "clientConnection:\n  kubeconfig: /k\n  qps: 5000\n"
			   "  burst: 6000\n  contentType: application/vnd.kubernetes.protobuf\n"
			   "leaderElection:\n  leaderElect: true\n  leaseDuration: 1m30s\n"
			   "  renewDeadline: 20s\n  retryPeriod: 500ms\n  resourceLock: leases\n"
			   "  resourceName: sx\n  resourceNamespace: ops\n"
			   "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\n"
			   "delayCacheUntilActive: true\nenableProfiling: true\n",
		      &err);

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_STR(cfg->client.kubeconfig, "/k");
	CHECK(cfg->client.qps == 5000);
	CHECK_INT(cfg->client.burst, 6000);
	CHECK(cfg->leader.set && cfg->leader.leader_elect);
	CHECK(cfg->leader.lease_duration_s == 90);
	CHECK(cfg->leader.renew_deadline_s == 20);
	CHECK(cfg->leader.retry_period_s == 0.5);
	CHECK_STR(cfg->leader.resource_name, "sx");
	CHECK_STR(cfg->leader.resource_namespace, "ops");
	CHECK(cfg->pod_initial_backoff_s == 2 && cfg->pod_max_backoff_s == 20);
	CHECK(cfg->delay_cache_until_active);
	CHECK_STR(cfg->unsupported, "enableProfiling, clientConnection.contentType "
				    "application/vnd.kubernetes.protobuf (JSON is used)");
	sx_config_free(cfg);
}

static void test_extenders(void)
{
	struct sx_error err;
	struct sx_config *cfg = parse(
		HEAD "extenders:\n"
		     "- urlPrefix: http://a/\n  ignorable: true\n  filterVerb: filter\n"
		     "- urlPrefix: https://b\n  prioritizeVerb: prio\n  weight: 3\n"
		     "  httpTimeout: 1m30s\n  enableHTTPS: true\n  nodeCacheCapable: true\n"
		     "  tlsConfig: {insecure: true, serverName: b.example, caData: aGVsbG8=}\n"
		     "  bindVerb: bind\n"
		     "  managedResources: [{name: example.com/widget, ignoredByScheduler: true}]\n",
		&err);

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_INT(cfg->nextenders, 2);
	CHECK(cfg->extenders[0].ignorable && cfg->extenders[0].http_timeout_s == 5);
	CHECK_STR(cfg->extenders[1].prioritize_verb, "prio");
	CHECK_INT(cfg->extenders[1].weight, 3);
	CHECK(cfg->extenders[1].http_timeout_s == 90);
	CHECK(cfg->extenders[1].tls.insecure && cfg->extenders[1].tls.ca_len == 5);
	CHECK(memcmp(cfg->extenders[1].tls.ca_data, "hello", 5) == 0);
	CHECK_STR(cfg->extenders[1].managed[0].name, "example.com/widget");
	CHECK(cfg->extenders[1].managed[0].ignored_by_scheduler);
	CHECK(sx_profile_has(cfg->profiles[0], SX_PT_FILTER, "NodeResourcesFit"));
	sx_config_free(cfg);
}

static void test_bad_input(void)
{
	char buf[700];

	CHECK_STR(fail_msg(HEAD "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: p\n", buf,
			   sizeof(buf)),
		  "extenders[0]: weight: Invalid value: 0: must have a positive weight applied to "
		  "it");
	CHECK_STR(fail_msg(HEAD "extenders:\n- {urlPrefix: http://a, bindVerb: b}\n"
				"- {urlPrefix: http://b, bindVerb: b}\n",
			   buf, sizeof(buf)),
		  "extenders: Invalid value: \"found 2 extenders implementing bind\": only one "
		  "extender can implement bind");
	CHECK_STR(fail_msg(HEAD "extenders:\n- {urlPrefix: http://a, enableHttps: true}\n", buf,
			   sizeof(buf)),
		  "strict decoding error: unknown field \"extenders[0].enableHttps\"");
	CHECK_STR(fail_msg(HEAD "extenders:\n- urlPrefix: http://a\n  managedResources:\n"
				"  - name: kubernetes.io/foo\n",
			   buf, sizeof(buf)),
		  "extenders[0].managedResources[0].name: Invalid value: \"kubernetes.io/foo\": is "
		  "an invalid extended resource name");
	CHECK_STR(
		fail_msg(HEAD
			 "extenders:\n- {urlPrefix: http://a, managedResources: [{name: "
			 "a.io/x}]}\n- {urlPrefix: http://b, managedResources: [{name: a.io/x}]}\n",
			 buf, sizeof(buf)),
		"extenders[1].managedResources[0].name: Invalid value: \"a.io/x\": duplicate "
		"extender managed resource name");
	CHECK_STR(fail_msg(HEAD "extenders:\n- {urlPrefix: http://a, httpTimeout: soon}\n", buf,
			   sizeof(buf)),
		  "extenders[0].httpTimeout: invalid duration \"soon\"");
	CHECK_STR(fail_msg(HEAD "clientConnection: {qps: fast}\n", buf, sizeof(buf)),
		  "clientConnection: qps: Invalid value: must be a number");
	CHECK_STR(fail_msg(HEAD "clientConnection: {burst: -1}\n", buf, sizeof(buf)),
		  "clientConnection: burst: Invalid value: -1: must be non-negative");
	CHECK_STR(
		fail_msg(HEAD "leaderElection: {leaderElect: true, leaseDuration: 5s, "
			      "renewDeadline: 10s}\n",
			 buf, sizeof(buf)),
		"leaderElection: leaseDuration: Invalid value: LeaseDuration must be greater than "
		"RenewDeadline");
	CHECK_STR(fail_msg(HEAD "leaderElection: {resourceLock: endpoints, leaderElect: true}\n",
			   buf, sizeof(buf)),
		  "leaderElection: resourceLock: Unsupported value: \"endpoints\": supported "
		  "values: \"leases\"");
	CHECK_STR(fail_msg(HEAD "leaderElection: {leaseDuration: forever}\n", buf, sizeof(buf)),
		  "leaderElection: leaseDuration: Invalid value: \"forever\": not a duration");
	CHECK_STR(fail_msg(HEAD "percentOfNodesToScore: 5\n", buf, sizeof(buf)),
		  "strict decoding error: unknown field \"percentOfNodesToScore\"");
}

/* sx_config_load names the file in front of the field. */
static void test_file_named(void)
{
	char path[] = "/tmp/sx-config-XXXXXX";
	int fd = mkstemp(path);
	const char *bad = HEAD "clientConnection: {burst: -5}\n";
	struct sx_error err = {0};
	char buf[700];

	CHECK(fd >= 0);
	CHECK(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
	close(fd);
	CHECK(sx_config_load(path, &err) == NULL);
	snprintf(buf, sizeof(buf),
		 "%s: clientConnection: burst: Invalid value: -5: must be "
		 "non-negative",
		 path);
	CHECK_STR(err.msg, buf);
	unlink(path);
}

/* /configz's pluginConfig: the file's entries first, in its order, then a
 * defaulted entry for every other running plugin with args, by name; every
 * default applied (upstream's v1 defaulting; 1.37's gates default
 * DynamicResources' bindingTimeout, and with StorageCapacityScoring
 * VolumeBinding's shape). */
static void test_configz_plugin_config(void)
{
	struct sx_error err;
	struct sx_config *cfg = parse(
		HEAD
		"profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
		"  - name: NodeResourcesFit\n    args:\n      ignoredResources: [example.com/a]\n"
		"      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
		"        resources: [{name: cpu, weight: 2}]\n"
		"        requestedToCapacityRatio:\n"
		"          shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]\n"
		"  - name: DynamicResources\n    args: {filterTimeout: 1m30s}\n"
		"  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
		"      defaultConstraints: [{maxSkew: 2, topologyKey: zone, "
		"whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Honor}]\n",
		&err);
	struct sx_buf b;
	const char *pc;

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	sx_buf_init(&b);
	sx_config_write_json(&b, cfg);
	sx_buf_putc(&b, '\0');
	pc = b.data ? strstr(b.data, "\"pluginConfig\":") : NULL;
	CHECK(pc != NULL);
	if (pc) {
		const char *want =
			"\"pluginConfig\":[{\"name\":\"NodeResourcesFit\",\"args\":{\"kind\":"
			"\"NodeResourcesFitArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/"
			"v1\","
			"\"ignoredResources\":[\"example.com/a\"],\"scoringStrategy\":{\"type\":"
			"\"RequestedToCapacityRatio\",\"resources\":[{\"name\":\"cpu\",\"weight\":"
			"2}],"
			"\"requestedToCapacityRatio\":{\"shape\":[{\"utilization\":0,\"score\":10},"
			"{\"utilization\":100,\"score\":0}]}}}},"
			"{\"name\":\"DynamicResources\",\"args\":{\"kind\":"
			"\"DynamicResourcesArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/"
			"v1\",\"filterTimeout\":\"1m30s\","
			"\"bindingTimeout\":\"10m0s\"}},"
			"{\"name\":\"PodTopologySpread\",\"args\":{\"kind\":"
			"\"PodTopologySpreadArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"defaultConstraints\":"
			"[{\"maxSkew\":2,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
			"\"DoNotSchedule\","
			"\"nodeTaintsPolicy\":\"Honor\"}],\"defaultingType\":\"List\"}},"
			"{\"name\":\"DefaultPreemption\",\"args\":{\"kind\":"
			"\"DefaultPreemptionArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			"\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100}},"
			"{\"name\":\"InterPodAffinity\",\"args\":{\"kind\":"
			"\"InterPodAffinityArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/"
			"v1\",\"hardPodAffinityWeight\":1,"
			"\"ignorePreferredTermsOfExistingPods\":false}},"
			"{\"name\":\"NodeAffinity\",\"args\":{\"kind\":\"NodeAffinityArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}},"
			"{\"name\":\"NodeResourcesBalancedAllocation\",\"args\":{\"kind\":"
			"\"NodeResourcesBalancedAllocationArgs\",\"apiVersion\":"
			"\"kubescheduler.config.k8s.io/"
			"v1\",\"resources\":[{\"name\":\"cpu\",\"weight\":1},"
			"{\"name\":\"memory\",\"weight\":1}]}},"
			"{\"name\":\"VolumeBinding\",\"args\":{\"kind\":\"VolumeBindingArgs\","
			"\"apiVersion\":\"kubescheduler.config.k8s.io/"
			"v1\",\"bindTimeoutSeconds\":600,"
			"\"shape\":[{\"utilization\":0,\"score\":10},{\"utilization\":100,"
			"\"score\":0}]}}]";

		CHECK(strncmp(pc, want, strlen(want)) == 0);
		if (strncmp(pc, want, strlen(want)) != 0)
			fprintf(stderr, "got  %.*s\nwant %s\n", (int)strlen(want), pc, want);
	}
	sx_buf_free(&b);
	sx_config_free(cfg);
}

/* Go's Duration.String(), as /configz prints filterTimeout. */
static void test_format_duration(void)
{
	static const struct {
		double s;
		const char *want;
	} rows[] = {
		{0, "0s"},	   {10, "10s"},
		{90, "1m30s"},	   {3600, "1h0m0s"},
		{1.5, "1.5s"},	   {0.5, "500ms"},
		{0.0015, "1.5ms"}, {2e-6, "2\u00b5s"},
		{1e-9, "1ns"},	   {3661.25, "1h1m1.25s"},
		{-3, "0s"},
	};
	char buf[64];

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		sx_format_duration(rows[i].s, buf, sizeof(buf));
		CHECK_STR(buf, rows[i].want);
	}
}

int main(int argc, char **argv)
{
	static const struct sx_test_case cases[] = {
		SX_TEST(test_client_and_leader),
		SX_TEST(test_extenders),
		SX_TEST(test_bad_input),
		SX_TEST(test_file_named),
		SX_TEST(test_configz_plugin_config),
		SX_TEST(test_format_duration),
	};

	sx_intern_init();
	return sx_test_main(argc, argv, __FILE__, cases, SX_ARRAY_SIZE(cases));
}
