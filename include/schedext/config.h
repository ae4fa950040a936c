/* Profiles and the configuration they come from: a
 * KubeSchedulerConfiguration (YAML or JSON) read into one sx_profile per
 * schedulerName, each with the enabled plugins flattened into one array
 * per extension point (upstream apis/config/v1/default_plugins.go). Implemented in
 * src/framework/config.c.
 *
 * Threads: a configuration and its profiles are immutable once built and
 * may be read by any thread; sx_config_free is the owner's alone.
 */
#ifndef SCHEDEXT_CONFIG_H
#define SCHEDEXT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"
#include "schedext/features.h"
#include "schedext/plugin.h"

struct cJSON;

enum sx_point {
	SX_PT_PRE_ENQUEUE,
	SX_PT_QUEUE_SORT,
	SX_PT_PRE_FILTER,
	SX_PT_FILTER,
	SX_PT_POST_FILTER,
	SX_PT_PRE_SCORE,
	SX_PT_SCORE,
	SX_PT_RESERVE,
	SX_PT_PERMIT,
	SX_PT_PRE_BIND,
	SX_PT_BIND,
	SX_PT_POST_BIND,
	SX_PT_COUNT
};

/* Config key of an extension point ("preFilter", ...). */
const char *sx_point_name(enum sx_point pt);

/* The PodGroup extension points of 1.36 and 1.37 (plugins.placementGenerate,
 * placementScore, podGroupPostFilter), used by the pod-group cycle
 * (podgroup.h) with GenericWorkload. Each is resolved as every other
 * point (multiPoint's plugins that implement it, then the set's own): the
 * pod-group cycle runs exactly those (the placement points with
 * TopologyAwareWorkloadScheduling: TopologyPlacementGenerator,
 * NodeResourcesFit and PodGroupPodsCount). At the placement points, what
 * the configuration enables that no schedext plugin implements (an
 * upstream plugin schedext lacks) is kept for /configz, skipped by the
 * cycle and warned about once. podGroupPostFilter refuses a registry
 * plugin without the hook. (PlacementFeasible is not
 * configured: the cycle runs it for the Permit plugins that have it, as
 * upstream.) */
enum sx_group_point {
	SX_GPT_PLACEMENT_GENERATE,
	SX_GPT_PLACEMENT_SCORE,
	SX_GPT_POD_GROUP_POST_FILTER,
	SX_GPT_COUNT
};

/* Config key of a PodGroup extension point, and the release that added it. */
const char *sx_group_point_name(enum sx_group_point gpt);
int sx_group_point_since(enum sx_group_point gpt);

struct sx_group_enabled {
	char *name;	/* owned */
	int64_t weight; /* placementScore: >= 1; else 0 */
	int index;	/* registry index, -1 for an upstream plugin schedext lacks */
};

/* One enabled plugin at one extension point. */
struct sx_enabled {
	const struct sx_plugin *plugin;
	int index;	/* registry index (cycle state slot) */
	void *self;	/* the profile's instance */
	int64_t weight; /* Score only: >= 1 */
};

struct sx_handle;
struct sx_dra_claims;

struct sx_profile {
	char *scheduler_name;
	/* The profile's framework handle (handle.h), made before its plugins'
	 * init and freed after their destroy; owned. */
	struct sx_handle *handle;
	int percentage_of_nodes_to_score; /* -1: use the global setting */
	unsigned n[SX_PT_COUNT];
	struct sx_enabled *points[SX_PT_COUNT];
	void *instances[SX_MAX_PLUGINS]; /* by registry index; owned */
	bool instantiated[SX_MAX_PLUGINS];
	/* pluginConfig args while the profile is being built (cleared after). */
	const struct cJSON *args[SX_MAX_PLUGINS];
	/* registry indexes in the file's pluginConfig order (/configz lists
	 * them first, then the defaulted ones by name, as upstream does) */
	unsigned short config_order[SX_MAX_PLUGINS];
	unsigned nconfig;
	/* the PodGroup extension points, as configured (owned) */
	unsigned ngroup[SX_GPT_COUNT];
	struct sx_group_enabled *group[SX_GPT_COUNT];
	/* The release and feature gates the profile runs with: a copy of the
	 * configuration's, for plugins to ask (sx_feature_enabled). */
	struct sx_features features;
};

/* clientConnection (componentbase ClientConnectionConfiguration). Unset
 * fields are 0/NULL; `schedext serve` flags given explicitly win. */
struct sx_client_connection {
	char *kubeconfig;
	double qps; /* 0 = unset (client default 50); < 0 = no client-side limit */
	int burst;  /* 0 = unset (100) */
	char *content_type, *accept_content_types;
};

/* leaderElection (componentbase LeaderElectionConfiguration). */
struct sx_leader_election {
	bool set; /* leaderElect appeared in the file */
	bool leader_elect;
	double lease_duration_s, renew_deadline_s, retry_period_s; /* 0 = unset */
	char *resource_lock, *resource_name, *resource_namespace;  /* NULL = unset */
};

struct sx_extender_cfg;

struct sx_config {
	int parallelism;		  /* default 16 */
	int percentage_of_nodes_to_score; /* default 0 (adaptive) */
	double pod_initial_backoff_s;	  /* default 1 */
	double pod_max_backoff_s;	  /* default 10 */
	unsigned nprofiles;
	struct sx_profile **profiles;
	/* The component part (src/framework/config_component.c). */
	struct sx_client_connection client;
	struct sx_leader_election leader;
	bool delay_cache_until_active;
	unsigned nextenders;
	struct sx_extender_cfg *extenders; /* extender_client.h; shared by the profiles */
	/* DRA claims in flight and assumed (dra_alloc.h), one per scheduler
	 * as upstream's SharedDRAManager; every profile's handle borrows it.
	 * Owned. */
	struct sx_dra_claims *dra;
	/* Fields read but not acted on, "a, b" (for one startup warning), or NULL. */
	char *unsupported;
	/* The emulated release and feature gates (--emulated-version,
	 * --feature-gates); every profile holds a copy. */
	struct sx_features features;
};

/* The upstream default configuration (one profile, default-scheduler). */
struct sx_config *sx_config_default(struct sx_error *err);
/* Loads a KubeSchedulerConfiguration (YAML or JSON). NULL with err naming
 * the file and field on failure. */
struct sx_config *sx_config_load(const char *path, struct sx_error *err);
struct sx_config *sx_config_parse(const char *data, size_t len, struct sx_error *err);
/* The same for a release and feature gates (copied into the
 * configuration; NULL: the defaults of SX_RELEASE_DEFAULT). The file is
 * decoded strictly as that release's kube-scheduler decodes it: a field
 * it does not know, at any depth, is "strict decoding error: unknown
 * field \"profiles[0].plugins.bogusSet\"" (plugin args included). */
struct sx_config *sx_config_default_for(const struct sx_features *f, struct sx_error *err);
struct sx_config *sx_config_load_for(const char *path, const struct sx_features *f,
				     struct sx_error *err);
struct sx_config *sx_config_parse_for(const char *data, size_t len, const struct sx_features *f,
				      struct sx_error *err);
void sx_config_free(struct sx_config *cfg);

/* GET /configz: {"componentconfig": the effective KubeSchedulerConfiguration
 * (defaults applied; plugins enabled per extension point with their
 * weights; pluginConfig args as the plugins hold them),
 * "emulatedVersion": "1.37", "featureGates": {the gates whose value
 * differs from that release's default}}. */
struct sx_buf;
void sx_config_write_json(struct sx_buf *b, const struct sx_config *cfg);
/* Makes pod decoding follow this configuration's release and
 * InPlacePodLevelResourcesVerticalScaling gate (decode.h
 * sx_decode_set_pod_resources; upstream reads the gate process-wide when
 * it computes a pod's requests). Call before any pod is decoded. */
void sx_config_set_pod_decoding(const struct sx_config *cfg);

/* Profile by schedulerName; name NULL = the first. */
const struct sx_profile *sx_config_profile(const struct sx_config *cfg, const char *name);

/* Is the plugin enabled at this point in the profile? */
bool sx_profile_has(const struct sx_profile *prof, enum sx_point pt, const char *plugin);

#endif /* SCHEDEXT_CONFIG_H */
