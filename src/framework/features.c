/* Feature gates per emulated release (include/schedext/features.h).
 *
 * The table is upstream's versioned specs for the scheduler's gates, read
 * in kubernetes/kubernetes: the scheduler's feature list
 * (defaultVersionedKubernetesFeatureGates, split out of
 * pkg/features/kube_features.go) as of the 1.38 development branch, whose
 * entries up to 1.37 are the released ones. Where a gate carries two specs
 * at one version told apart by MinCompatibilityVersion
 * (DRAFractionalCapacityRange at 1.37), the one in force with the default
 * min compatibility version (emulated minus one) is kept. Validation
 * follows staging/src/k8s.io/component-base/featuregate/feature_gate.go
 * (Set, unsafeSetFromMap, featureSpecAtEmulationVersion) and the
 * emulated-version flag component-base/compatibility/registry.go
 * (toVersionMap, Set) and version.go (Validate). */
#include "schedext/features.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"

_Static_assert(SX_FEATURE_COUNT <= 64, "the gate bitsets are 64 bits wide");

/* One versioned spec: in force from 1.<minor> on (0: every release). */
struct vspec {
	unsigned char minor;
	bool def;
	unsigned char stage;
	bool locked;
};

#define MAX_SPECS 4
#define A(m, d)                                                                                    \
	{                                                                                          \
		m, d, SX_ALPHA, false                                                              \
	}
#define B(m, d)                                                                                    \
	{                                                                                          \
		m, d, SX_BETA, false                                                               \
	}
#define G(m)                                                                                       \
	{                                                                                          \
		m, true, SX_GA, false                                                              \
	}
#define L(m)                                                                                       \
	{                                                                                          \
		m, true, SX_GA, true                                                               \
	}

/* Upstream's specs, older ones left out where a later one at or before
 * 1.35 replaces them (they cannot be in force here). */
static const struct vspec specs[SX_FEATURE_COUNT][MAX_SPECS] = {
	[SX_FEATURE_ALL_ALPHA] = {A(0, false)},
	[SX_FEATURE_ALL_BETA] = {B(0, false)},
	[SX_FEATURE_COMPOSITE_POD_GROUP] = {A(37, false)},
	[SX_FEATURE_DRA_ADMIN_ACCESS] = {B(34, true), L(36)},
	[SX_FEATURE_DRA_CONSUMABLE_CAPACITY] = {A(34, false), B(36, true)},
	[SX_FEATURE_DRA_DERIVED_ATTRIBUTES] = {A(37, false)},
	[SX_FEATURE_DRA_DEVICE_BINDING_CONDITIONS] = {A(34, false), B(36, true)},
	[SX_FEATURE_DRA_DEVICE_COMPATIBILITY_GROUPS] = {A(37, false)},
	/* GA in 1.37 without LockToDefault ("true in 1.38") */
	[SX_FEATURE_DRA_DEVICE_TAINT_RULES] = {A(35, false), B(36, false), G(37)},
	[SX_FEATURE_DRA_DEVICE_TAINTS] = {A(33, false), B(36, true), G(37)},
	[SX_FEATURE_DRA_EXTENDED_RESOURCE] = {A(34, false), B(36, true), L(37)},
	[SX_FEATURE_DRA_FRACTIONAL_CAPACITY_RANGE] = {B(37, false)},
	[SX_FEATURE_DRA_LIST_TYPE_ATTRIBUTES] = {A(36, false)},
	[SX_FEATURE_DRA_NODE_ALLOCATABLE_RESOURCES] = {A(36, false)},
	[SX_FEATURE_DRA_OPTIONAL_NODE_OPERATIONS] = {A(37, false)},
	[SX_FEATURE_DRA_PARTITIONABLE_DEVICES] = {A(33, false), B(36, true)},
	[SX_FEATURE_DRA_PRIORITIZED_LIST] = {B(34, true), G(36), L(37)},
	[SX_FEATURE_DRA_RESOURCE_CLAIM_DEVICE_STATUS] = {B(33, true), L(37)},
	[SX_FEATURE_DRA_SCHEDULER_FILTER_TIMEOUT] = {B(34, true)},
	[SX_FEATURE_DRA_WORKLOAD_RESOURCE_CLAIMS] = {A(36, false), B(37, false)},
	[SX_FEATURE_DYNAMIC_RESOURCE_ALLOCATION] = {L(35)},
	/* kube-scheduler's gate accepts every kube feature (component-base
	 * registers them all): WorkloadWithJob is the job controller's. */
	[SX_FEATURE_GANG_SCHEDULING] = {A(35, false)},
	[SX_FEATURE_GENERIC_WORKLOAD] = {A(35, false), B(37, false)},
	[SX_FEATURE_IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING] = {A(35, false), B(36, true)},
	[SX_FEATURE_IN_PLACE_POD_VERTICAL_SCALING] = {L(35)},
	[SX_FEATURE_IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION] = {A(37, false)},
	[SX_FEATURE_INTER_POD_AFFINITY_HOSTNAME_FAST_PATH] = {A(37, false)},
	[SX_FEATURE_MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD] = {B(27, true)},
	[SX_FEATURE_NODE_DECLARED_FEATURES] = {A(35, false), B(36, true), L(37)},
	[SX_FEATURE_NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD] = {L(33)},
	[SX_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION] = {B(35, true)},
	[SX_FEATURE_OPPORTUNISTIC_BATCHING] = {B(35, true)},
	[SX_FEATURE_POD_GROUP_PREEMPTION_POLICY] = {A(37, false)},
	[SX_FEATURE_POD_LEVEL_RESOURCES] = {B(34, true)},
	[SX_FEATURE_SCHEDULER_ASYNC_API_CALLS] = {B(34, false)},
	[SX_FEATURE_SCHEDULER_ASYNC_PREEMPTION] = {B(33, true)},
	[SX_FEATURE_SCHEDULER_POP_FROM_BACKOFF_Q] = {B(33, true)},
	[SX_FEATURE_SCHEDULER_PRE_QUEUEING_HINTS] = {A(37, false)},
	[SX_FEATURE_STORAGE_CAPACITY_SCORING] = {A(33, false), B(37, true)},
	[SX_FEATURE_TAINT_TOLERATION_COMPARISON_OPERATORS] = {A(35, false)},
	[SX_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING] = {A(36, false)},
	[SX_FEATURE_VOLUME_ATTRIBUTES_CLASS] = {G(34), L(36)},
	[SX_FEATURE_VOLUME_LIMIT_SCALING] = {A(35, false), B(37, true)},
	[SX_FEATURE_WORKLOAD_AWARE_PREEMPTION] = {A(36, false)},
	[SX_FEATURE_WORKLOAD_WITH_JOB] = {A(36, false)},
};

static const char *const names[SX_FEATURE_COUNT] = {
#define SX_FEATURE_NAME(id, name) [SX_FEATURE_##id] = name,
	SX_FEATURE_LIST(SX_FEATURE_NAME)
#undef SX_FEATURE_NAME
};

const char *sx_feature_name(enum sx_feature id)
{
	return (unsigned)id < SX_FEATURE_COUNT ? names[id] : "?";
}

const char *sx_prerelease_name(enum sx_prerelease p)
{
	static const char *const s[] = {"PRE-ALPHA", "ALPHA", "BETA", "", "DEPRECATED"};

	return (unsigned)p < SX_ARRAY_SIZE(s) ? s[p] : "?";
}

/* featureSpecAtEmulationVersion: the last spec not after the release; a
 * specs row ends at the first entry whose minor is 0 past the first. */
struct sx_feature_spec sx_feature_spec_at(enum sx_feature id, int minor)
{
	struct sx_feature_spec out = {false, SX_PRE_ALPHA, false};

	if ((unsigned)id >= SX_FEATURE_COUNT)
		return out;
	for (int i = 0; i < MAX_SPECS; i++) {
		const struct vspec *v = &specs[id][i];

		if (i > 0 && v->minor == 0)
			break;
		if (v->minor > minor)
			break;
		out = (struct sx_feature_spec){v->def, (enum sx_prerelease)v->stage, v->locked};
	}
	return out;
}

/* strings.TrimSpace, in place. */
static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

static uint64_t bit(enum sx_feature id)
{
	return (uint64_t)1 << id;
}

static uint64_t defaults_at(int minor)
{
	uint64_t on = 0;

	for (int id = 0; id < SX_FEATURE_COUNT; id++)
		if (sx_feature_spec_at(id, minor).def)
			on |= bit(id);
	return on;
}

void sx_features_init(struct sx_features *f, int minor)
{
	f->release = minor;
	f->enabled = defaults_at(minor);
	f->set = 0;
}

bool sx_feature_enabled(const struct sx_features *f, enum sx_feature id)
{
	return (unsigned)id < SX_FEATURE_COUNT && (f->enabled & bit(id)) != 0;
}

int sx_release(const struct sx_features *f)
{
	return f->release;
}

/* ---------- --emulated-version ---------- */

/* version.Parse as far as a release flag needs: "[v]X.Y[.Z]". */
static bool parse_version(const char *s, long v[3], int *n)
{
	char *end;

	*n = 0;
	if (*s == 'v')
		s++;
	while (*n < 3) {
		if (!isdigit((unsigned char)*s))
			return false;
		v[(*n)++] = strtol(s, &end, 10);
		s = end;
		if (*s != '.')
			break;
		s++;
	}
	return *s == '\0' && *n >= 2 && v[0] < 100000 && v[1] < 100000;
}

/* One "kube=1.36" or "1.36" entry: the component and the version. */
static int release_entry(const char *entry, long *major, long *minor, bool *seen,
			 struct sx_error *err)
{
	char comp[64] = "kube", ver[64];
	const char *eq = strchr(entry, '=');
	long v[3];
	int n;

	if (eq)
		snprintf(comp, sizeof(comp), "%.*s", (int)(eq - entry), entry);
	snprintf(ver, sizeof(ver), "%s", eq ? eq + 1 : entry);
	trim(comp);
	trim(ver);
	if (!parse_version(ver, v, &n))
		return sx_error_set(err, SX_EINVAL, "could not parse \"%s\" as version", ver);
	if (n == 3 && v[2] != 0)
		return sx_error_set(err, SX_EINVAL,
				    "patch version not allowed, got: %s=%ld.%ld.%ld", comp, v[0],
				    v[1], v[2]);
	if (*seen)
		return sx_error_set(err, SX_EINVAL,
				    "duplicate version flag, %s=%ld.%ld and %s=%ld.%ld", comp,
				    *major, *minor, comp, v[0], v[1]);
	if (strcmp(comp, "kube") != 0)
		return sx_error_set(err, SX_EINVAL, "component not registered: %s", comp);
	*seen = true;
	*major = v[0];
	*minor = v[1];
	return 0;
}

int sx_features_parse_release(const char *value, int *minor, struct sx_error *err)
{
	char buf[256];
	long maj = 1, min = SX_RELEASE_DEFAULT;
	bool seen = false;
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", value);
	for (char *save = NULL, *e = strtok_r(buf, ",", &save); e && !rc;
	     e = strtok_r(NULL, ",", &save))
		rc = release_entry(e, &maj, &min, &seen, err);
	if (rc)
		return rc;
	/* effectiveVersion.Validate: the floor is the oldest release whose
	 * behaviour schedext has (upstream's is binary minus three). */
	if (maj != 1 || min < SX_RELEASE_MIN || min > SX_RELEASE_MAX)
		return sx_error_set(err, SX_EINVAL,
				    "emulation version %ld.%ld is not between "
				    "[1.%d, 1.%d]",
				    maj, min, SX_RELEASE_MIN, SX_RELEASE_MAX);
	*minor = (int)min;
	return 0;
}

/* ---------- --feature-gates ---------- */

/* strconv.ParseBool. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

	for (size_t i = 0; i < SX_ARRAY_SIZE(t); i++) {
		if (strcmp(s, t[i]) == 0)
			return *out = true, 0;
		if (strcmp(s, f[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

static int feature_by_name(const char *name)
{
	for (int id = 0; id < SX_FEATURE_COUNT; id++)
		if (strcmp(names[id], name) == 0)
			return id;
	return -1;
}

/* The raw key=value pairs of a flag value (later wins, as in a Go map). */
struct raw {
	unsigned n;
	struct {
		char key[96];
		bool val;
	} kv[SX_FEATURE_COUNT + 8];
};

/* The component prefix of one item (ColonSeparatedMultimapStringString
 * with a default empty key): "" or "kube" (*prefixed), else an error. */
static int strip_component(char **item, int *mode, struct sx_error *err)
{
	char *colon = strchr(*item, ':');
	int m = 1; /* 1: no prefix, 2: "kube:" */

	if (colon) {
		*colon = '\0';
		trim(*item);
		if (strcmp(*item, "kube") != 0 && (*item)[0])
			return sx_error_set(err, SX_EINVAL, "component not registered: %s", *item);
		m = (*item)[0] ? 2 : 1;
		*item = colon + 1;
	}
	if (*mode && *mode != m)
		return sx_error_set(err, SX_EINVAL,
				    "set kube feature gates with default empty "
				    "prefix or kube: prefix consistently, do not mix use");
	*mode = m;
	return 0;
}

static int raw_add(struct raw *r, const char *k, bool v, struct sx_error *err)
{
	unsigned i = 0;

	while (i < r->n && strcmp(r->kv[i].key, k) != 0)
		i++;
	if (i == SX_ARRAY_SIZE(r->kv))
		return sx_error_set(err, SX_ETOOBIG, "too many feature gates");
	if (i == r->n) {
		snprintf(r->kv[i].key, sizeof(r->kv[i].key), "%s", k);
		r->n++;
	}
	r->kv[i].val = v;
	return 0;
}

/* featureGate.Set's parsing: "missing bool value", "invalid value". */
static int parse_gates(char *buf, struct raw *r, struct sx_error *err)
{
	int mode = 0, rc = 0;

	for (char *save = NULL, *it = strtok_r(buf, ",", &save); it && !rc;
	     it = strtok_r(NULL, ",", &save)) {
		char *eq;
		bool v;

		if ((rc = strip_component(&it, &mode, err)))
			break;
		eq = strchr(it, '=');
		if (eq)
			*eq = '\0';
		trim(it);
		if (!eq)
			return sx_error_set(err, SX_EINVAL, "missing bool value for %s", it);
		trim(eq + 1);
		if (parse_bool(eq + 1, &v) < 0)
			return sx_error_set(err, SX_EINVAL,
					    "invalid value of %s=%s, err: "
					    "strconv.ParseBool: parsing \"%s\": invalid syntax",
					    it, eq + 1, eq + 1);
		rc = raw_add(r, it, v, err);
	}
	return rc;
}

/* Appends one error to the aggregate ("e" or "[e1, e2]" when finished). */
static void agg_add(char *agg, size_t len, unsigned *n, const char *msg)
{
	size_t at = strlen(agg);

	snprintf(agg + at, len - at, "%s%s", (*n)++ ? ", " : "", msg);
}

/* setUnsetAlphaGates / setUnsetBetaGates. */
static void set_unset_stage(struct sx_features *f, enum sx_prerelease stage, bool v,
			    uint64_t explicit)
{
	for (int id = SX_FEATURE_ALL_BETA + 1; id < SX_FEATURE_COUNT; id++) {
		if (explicit & bit(id) || sx_feature_spec_at(id, f->release).stage != stage)
			continue;
		f->enabled = v ? f->enabled | bit(id) : f->enabled & ~bit(id);
		f->set |= bit(id);
	}
}

/* Upstream's feature dependencies (kube_features.go's dependency table):
 * an enabled gate needs each of its dependencies on. */
static const struct {
	enum sx_feature gate, needs;
} deps[] = {
	{SX_FEATURE_GANG_SCHEDULING, SX_FEATURE_GENERIC_WORKLOAD},
	{SX_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, SX_FEATURE_GENERIC_WORKLOAD},
	{SX_FEATURE_WORKLOAD_AWARE_PREEMPTION, SX_FEATURE_GANG_SCHEDULING},
	{SX_FEATURE_WORKLOAD_WITH_JOB, SX_FEATURE_GENERIC_WORKLOAD},
};

/* component-base's dependency validation after Set: every enabled gate
 * whose dependency is disabled, aggregated as the other errors. */
static int check_dependencies(const struct sx_features *f, struct sx_error *err)
{
	char agg[sizeof(err->msg)] = "", msg[200];
	unsigned nerr = 0;

	for (size_t i = 0; i < SX_ARRAY_SIZE(deps); i++) {
		if (!(f->enabled & bit(deps[i].gate)) || (f->enabled & bit(deps[i].needs)))
			continue;
		snprintf(msg, sizeof(msg), "feature %s depends on %s, which is disabled",
			 names[deps[i].gate], names[deps[i].needs]);
		agg_add(agg, sizeof(agg), &nerr, msg);
	}
	if (nerr)
		return sx_error_set(err, SX_EINVAL, nerr > 1 ? "[%s]" : "%s", agg);
	return 0;
}

/* unsafeSetFromMap at f->release: unknown gates end it at once; locked
 * and PreAlpha gates are collected. */
static int apply(struct sx_features *f, const struct raw *r, struct sx_error *err)
{
	char agg[sizeof(err->msg)] = "", msg[300];
	unsigned nerr = 0;
	uint64_t explicit = 0;

	for (unsigned i = 0; i < r->n; i++) {
		int id = feature_by_name(r->kv[i].key);
		struct sx_feature_spec s;
		bool v = r->kv[i].val;

		if (id < 0)
			return sx_error_set(err, SX_EINVAL, "unrecognized feature gate: %s",
					    r->kv[i].key);
		s = sx_feature_spec_at(id, f->release);
		if (s.locked && s.def != v) {
			snprintf(msg, sizeof(msg),
				 "cannot set feature gate %s to %s, feature is "
				 "locked to %s",
				 names[id], v ? "true" : "false", s.def ? "true" : "false");
			agg_add(agg, sizeof(agg), &nerr, msg);
			continue;
		}
		if (id != SX_FEATURE_ALL_ALPHA && id != SX_FEATURE_ALL_BETA &&
		    s.stage == SX_PRE_ALPHA) {
			snprintf(msg, sizeof(msg),
				 "cannot set feature gate %s to %s, feature is "
				 "PreAlpha at emulated version 1.%d",
				 names[id], v ? "true" : "false", f->release);
			agg_add(agg, sizeof(agg), &nerr, msg);
			continue;
		}
		f->enabled = v ? f->enabled | bit(id) : f->enabled & ~bit(id);
		f->set |= bit(id);
		explicit |= bit(id);
		if (s.stage == SX_DEPRECATED || s.stage == SX_GA)
			sx_log(0,
			       "warning: Setting %s feature gate %s=%s. It will be removed in a "
			       "future release.",
			       s.stage == SX_GA ? "GA" : "deprecated", names[id],
			       v ? "true" : "false");
	}
	if (nerr)
		return sx_error_set(err, SX_EINVAL, nerr > 1 ? "[%s]" : "%s", agg);
	/* the special gates fill in what was not named (explicit ones win) */
	if (explicit & bit(SX_FEATURE_ALL_ALPHA))
		set_unset_stage(f, SX_ALPHA, f->enabled & bit(SX_FEATURE_ALL_ALPHA), explicit);
	if (explicit & bit(SX_FEATURE_ALL_BETA))
		set_unset_stage(f, SX_BETA, f->enabled & bit(SX_FEATURE_ALL_BETA), explicit);
	return check_dependencies(f, err);
}

int sx_features_set(struct sx_features *f, const char *value, struct sx_error *err)
{
	struct sx_features next = *f;
	struct raw *r = calloc(1, sizeof(*r));
	char *buf = sx_strdup(value ? value : "");
	int rc;

	if (!r || !buf)
		rc = sx_error_set(err, SX_ENOMEM, "out of memory");
	else if (!(rc = parse_gates(buf, r, err)) && !(rc = apply(&next, r, err)))
		*f = next;
	free(buf);
	free(r);
	return rc;
}

/* ---------- reporting ---------- */

const char *sx_features_diff(const struct sx_features *f, char *buf, size_t len)
{
	uint64_t diff = f->enabled ^ defaults_at(f->release);
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (int id = 0; id < SX_FEATURE_COUNT && at < len; id++)
		if (diff & bit(id))
			at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", at ? "," : "",
					       names[id],
					       (f->enabled & bit(id)) ? "true" : "false");
	return buf;
}

void sx_features_write_jw(struct sx_jw *w, const struct sx_features *f)
{
	uint64_t diff = f->enabled ^ defaults_at(f->release);

	sx_jw_key(w, "emulatedVersion");
	sx_jw_strf(w, "1.%d", f->release);
	sx_jw_kobject(w, "featureGates");
	for (int id = 0; id < SX_FEATURE_COUNT; id++)
		if (diff & bit(id))
			sx_jw_kbool(w, names[id], f->enabled & bit(id));
	sx_jw_end_object(w);
}

void sx_features_write_json(struct sx_buf *b, const struct sx_features *f)
{
	struct sx_jw w;

	sx_jw_init_in(&w, b, false);
	sx_features_write_jw(&w, f);
}
