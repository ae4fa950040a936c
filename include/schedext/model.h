/* The object model: compact C structs decoded from Kubernetes JSON
 * (staging/src/k8s.io/api). Plugins read only these structs, never JSON.
 *
 * Ownership: every object kind (sx_pod, sx_node, ...) is allocated by its
 * decoder as one owner of all its arrays and strings, carries an atomic
 * reference count starting at 1, and is immutable once published to the
 * cache (an update replaces the object). sx_*_ref()/sx_*_unref() may be
 * called from any thread; the last unref frees.
 *
 * Strings that repeat across objects (label keys/values, namespaces, node
 * names, resource names, topology keys, image names) are interned (sx_str);
 * unique ones (pod name, uid, resourceVersion) are owned char *.
 */
#ifndef SCHEDEXT_MODEL_H
#define SCHEDEXT_MODEL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/intern.h"

/* ---------- labels and selectors ---------- */

struct sx_label {
	sx_str key;
	sx_str value;
};

/* A label map, sorted by key id (so lookups are a binary search). */
struct sx_labels {
	uint32_t n;
	struct sx_label *items;
};

enum sx_sel_op {
	SX_OP_IN,
	SX_OP_NOT_IN,
	SX_OP_EXISTS,
	SX_OP_DOES_NOT_EXIST,
	SX_OP_GT,     /* node selectors only */
	SX_OP_LT,     /* node selectors only */
	SX_OP_EQUALS, /* matchLabels entry: key = values[0] */
};

struct sx_requirement {
	sx_str key;
	uint8_t op; /* enum sx_sel_op */
	uint32_t nvalues;
	sx_str *values;
};

/* metav1.LabelSelector: matchLabels become SX_OP_EQUALS requirements,
 * followed by matchExpressions. An empty selector (nreqs 0) matches every
 * label set; a *null* selector is represented by a NULL pointer and matches
 * nothing (callers decide). */
struct sx_label_selector {
	uint32_t nreqs;
	struct sx_requirement *reqs;
};

/* v1.NodeSelectorTerm: all expressions and fields ANDed. matchFields only
 * support key metadata.name. An empty term matches nothing. */
struct sx_node_selector_term {
	uint32_t nexprs;
	struct sx_requirement *exprs;
	uint32_t nfields;
	struct sx_requirement *fields;
};

/* v1.NodeSelector: terms ORed. No terms matches nothing. */
struct sx_node_selector {
	uint32_t nterms;
	struct sx_node_selector_term *terms;
};

struct sx_preferred_scheduling_term {
	int32_t weight;
	struct sx_node_selector_term preference;
};

struct sx_node_affinity {
	struct sx_node_selector *required; /* NULL when absent */
	uint32_t npreferred;
	struct sx_preferred_scheduling_term *preferred;
};

struct sx_pod_affinity_term {
	struct sx_label_selector *selector; /* NULL = matches no pods */
	uint32_t nnamespaces;
	sx_str *namespaces;
	struct sx_label_selector *ns_selector; /* NULL = absent; empty = all */
	sx_str topology_key;
	uint32_t nmatch_label_keys;
	sx_str *match_label_keys;
	uint32_t nmismatch_label_keys;
	sx_str *mismatch_label_keys;
};

struct sx_weighted_pod_affinity_term {
	int32_t weight;
	struct sx_pod_affinity_term term;
};

struct sx_pod_affinity {
	uint32_t nrequired;
	struct sx_pod_affinity_term *required;
	uint32_t npreferred;
	struct sx_weighted_pod_affinity_term *preferred;
};

struct sx_affinity {
	struct sx_node_affinity *node_affinity;	   /* NULL when absent */
	struct sx_pod_affinity *pod_affinity;	   /* NULL when absent */
	struct sx_pod_affinity *pod_anti_affinity; /* NULL when absent */
};

/* ---------- taints and tolerations ---------- */

enum sx_taint_effect {
	SX_EFFECT_NONE = 0, /* empty: matches every effect (tolerations only) */
	SX_EFFECT_NO_SCHEDULE,
	SX_EFFECT_PREFER_NO_SCHEDULE,
	SX_EFFECT_NO_EXECUTE,
};

struct sx_taint {
	sx_str key;
	sx_str value;
	uint8_t effect; /* enum sx_taint_effect */
};

/* Lt and Gt: TaintTolerationComparisonOperators (1.35+); they match only
 * where the gate is on (sx_toleration_tolerates_ops). */
enum sx_toleration_op { SX_TOL_EQUAL = 0, SX_TOL_EXISTS, SX_TOL_LT, SX_TOL_GT };

struct sx_toleration {
	sx_str key;
	sx_str value;
	uint8_t op;	/* enum sx_toleration_op */
	uint8_t effect; /* enum sx_taint_effect */
	bool has_seconds;
	int64_t toleration_seconds;
};

/* ---------- topology spread ---------- */

enum sx_unsatisfiable { SX_DO_NOT_SCHEDULE = 0, SX_SCHEDULE_ANYWAY };
enum sx_inclusion_policy { SX_POLICY_DEFAULT = 0, SX_POLICY_HONOR, SX_POLICY_IGNORE };

struct sx_spread_constraint {
	int32_t max_skew;
	sx_str topology_key;
	uint8_t when_unsatisfiable;	    /* enum sx_unsatisfiable */
	uint8_t node_affinity_policy;	    /* enum sx_inclusion_policy; DEFAULT = Honor */
	uint8_t node_taints_policy;	    /* enum sx_inclusion_policy; DEFAULT = Ignore */
	int32_t min_domains;		    /* 0 when unset (treated as 1) */
	struct sx_label_selector *selector; /* NULL = matches nothing */
	uint32_t nmatch_label_keys;
	sx_str *match_label_keys;
};

/* ---------- resources ---------- */

struct sx_scalar {
	sx_str name;
	int64_t value;
};

/* A resource list converted to integers: cpu in millicores, memory and
 * ephemeral-storage in bytes, pods as a count, everything else (extended
 * resources, hugepages-*) in `scalar`, sorted by name id. */
struct sx_resources {
	int64_t milli_cpu;
	int64_t memory;
	int64_t ephemeral_storage;
	int64_t pods;
	uint32_t nscalar;
	struct sx_scalar *scalar;
};

/* Value of a named resource in r (cpu in millicores); 0 when absent. */
int64_t sx_resources_get(const struct sx_resources *r, sx_str name);

/* ---------- pods ---------- */

enum sx_pod_phase {
	SX_PHASE_UNKNOWN = 0, /* absent or "Unknown" */
	SX_PHASE_PENDING,
	SX_PHASE_RUNNING,
	SX_PHASE_SUCCEEDED,
	SX_PHASE_FAILED,
};

enum sx_protocol { SX_PROTO_TCP = 0, SX_PROTO_UDP, SX_PROTO_SCTP };

struct sx_host_port {
	sx_str ip;	  /* SX_STR_EMPTY or "0.0.0.0" means every address */
	uint8_t protocol; /* enum sx_protocol */
	uint16_t port;
};

struct sx_container {
	sx_str name;
	sx_str image;		 /* normalized: ":latest" appended when no tag/digest */
	bool sidecar;		 /* init container with restartPolicy: Always */
	bool has_cpu_request;	 /* the requests map has a "cpu" key */
	bool has_memory_request; /* the requests map has a "memory" key */
	struct sx_resources requests;
	struct sx_resources limits;
};

struct sx_owner_ref {
	sx_str kind;
	sx_str name;
	char *uid;
	bool controller;
};

struct sx_meta {
	/* name, uid and resource_version are one block at name (never NULL
	 * once decoded; "" when absent), freed by sx_meta_clear. */
	char *name;
	sx_str ns; /* SX_STR_EMPTY for cluster-scoped kinds */
	char *uid;
	char *resource_version;
	int64_t creation_ts; /* unix seconds; 0 when absent */
	struct sx_labels labels;
	/* The object's JSON as received, kept only for the kinds
	 * sx_decode_keep_raw() asks for (extenders are sent pods and nodes
	 * exactly as the informer saw them); NULL otherwise. Owned. */
	char *raw;
};

/* spec.resourceClaims[i] with its status.resourceClaimStatuses entry. */
struct sx_pod_claim {
	char *name;	     /* the pod-level name */
	char *claim_name;    /* resourceClaimName, or NULL */
	char *template_name; /* resourceClaimTemplateName, or NULL */
	bool has_status;     /* a resourceClaimStatuses entry with this name */
	char *status_claim;  /* its resourceClaimName (NULL: none generated) */
};

/* Fields are ordered to leave no padding (a pod is the object there are
 * most of: 150,000 in the bench cluster); arrays are a count, then, with
 * the next array's count, the pointers. */
struct sx_pod {
	atomic_int refcount;
	sx_str node_name; /* spec.nodeName; SX_STR_EMPTY = unscheduled */
	struct sx_meta meta;
	sx_str scheduler_name;	 /* defaulted to default-scheduler */
	sx_str scheduling_group; /* spec.schedulingGroup.podGroupName (workload.h) */
	int32_t priority;	 /* spec.priority, 0 when absent */
	sx_str nominated_node;	 /* status.nominatedNodeName */
	uint8_t phase;		 /* enum sx_pod_phase */
	bool deleting;		 /* metadata.deletionTimestamp set */
	bool preempt_never;	 /* spec.preemptionPolicy == Never */
	bool host_network;
	bool has_overhead;
	bool preemption_target; /* first DisruptionTarget condition: True,
				 * reason PreemptionByScheduler */
	/* What NodeDeclaredFeatures infers from the spec (SX_POD_NEEDS_*
	 * bits, component-helpers nodedeclaredfeatures InferForScheduling). */
	uint8_t needs_features;
	uint32_t nowners;
	struct sx_owner_ref *owners;
	struct sx_labels node_selector;
	struct sx_affinity *affinity; /* NULL when spec.affinity absent */
	uint32_t ntolerations;
	uint32_t nspread;
	struct sx_toleration *tolerations;
	struct sx_spread_constraint *spread;
	uint32_t ncontainers;
	uint32_t ninit;
	struct sx_container *containers;
	struct sx_container *init_containers;
	struct sx_resources overhead;
	/* Derived at decode time (component-helpers resource PodRequests): */
	struct sx_resources request; /* effective request (fit) */
	int64_t nonzero_milli_cpu;   /* non-zero variant (scoring) */
	int64_t nonzero_memory;
	/* NodeResourcesFit's score: the non-zero cpu/memory of the containers
	 * alone, pod-level spec.resources ignored (as upstream's Fit scorer) */
	int64_t fit_score_milli_cpu;
	int64_t fit_score_memory;
	uint32_t nports;
	uint32_t npvcs;
	struct sx_host_port *ports; /* containers + sidecar init containers */
	sx_str *pvcs;		    /* claim names (ephemeral: <pod>-<volume>) */
	uint32_t ngates;
	uint32_t nresource_claims;
	sx_str *gates;			      /* spec.schedulingGates[].name */
	struct sx_pod_claim *resource_claims; /* spec.resourceClaims (dra.h decodes) */
	int64_t start_time;		      /* status.startTime, unix seconds; 0 = unset */
	uint32_t nvolumes;
	struct sx_volume *volumes; /* spec.volumes, in order */
	/* A view made by sx_pod_assumed_on: every other field is borrowed from
	 * this pod, on which the view holds a reference. NULL otherwise. */
	const struct sx_pod *view_of;
};

/* Bits of sx_pod.needs_features: a spec field that needs a node
 * feature (the features of component-helpers nodedeclaredfeatures'
 * registry whose InferForScheduling looks at the pod). */
enum {
	/* a container or init container has a restartPolicyRules entry
	 * with action RestartAllContainers */
	SX_POD_NEEDS_RESTART_ALL_CONTAINERS = 1u << 0,
	/* hostNetwork: true with hostUsers: false */
	SX_POD_NEEDS_USERNS_HOST_NETWORK = 1u << 1,
	/* a (init, ephemeral) container's volume mount has bindMountOptions */
	SX_POD_NEEDS_VOLUME_BIND_MOUNT_OPTIONS = 1u << 2,
};

/* ---------- nodes ---------- */

struct sx_image {
	uint32_t nnames;
	sx_str *names; /* normalized like sx_container.image */
	int64_t size_bytes;
};

struct sx_node_condition {
	sx_str type;
	sx_str status;
};

/* Labels of a node kept beside meta.labels (sx_node_label): the
 * topology keys that Filter and Score look up on every node they visit. */
enum sx_node_topology { SX_TOPO_HOSTNAME, SX_TOPO_ZONE, SX_TOPO_REGION, SX_TOPO_COUNT };

struct sx_node {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str name_id; /* interned meta.name */
	bool unschedulable;
	/* Values of kubernetes.io/hostname, topology.kubernetes.io/zone and
	 * region (enum sx_node_topology), bit k of topo_has set when label k
	 * is present: read with the node's first lines instead of a search of
	 * meta.labels, whose items are a separate allocation. */
	uint8_t topo_has;
	sx_str topo[SX_TOPO_COUNT];
	uint32_t ntaints;
	struct sx_taint *taints;
	struct sx_resources allocatable;
	struct sx_resources capacity;
	uint32_t nimages;
	struct sx_image *images;
	uint32_t nconditions;
	struct sx_node_condition *conditions;
	uint32_t ndeclared_features;
	sx_str *declared_features; /* status.declaredFeatures, in order */
};

/* ---------- other kinds ---------- */

/* One value per row of kinds.def, in its order. */
enum sx_kind {
	SX_KIND_UNKNOWN = 0,
#define SX_KIND(ID, ...) SX_KIND_##ID,
#include "schedext/kinds.def"
	SX_KIND_COUNT
};

/* What kinds.def says of a kind: where the API serves it. */
struct sx_kind_desc {
	const char *kind;     /* "PersistentVolume" */
	const char *group;    /* "" for the core group */
	const char *version;  /* "v1" */
	const char *resource; /* "persistentvolumes" */
	const char *path;     /* the collection: "/api/v1/persistentvolumes" */
	bool namespaced;
};
/* The collection path of a resource, a string constant:
 * /api/VERSION/RESOURCE in the core group, /apis/GROUP/VERSION/RESOURCE
 * otherwise (k8s.io/client-go/rest, the legacy and named API prefixes). */
#define SX_KIND_PATH(GROUP, VERSION, RESOURCE)                                                     \
	(sizeof(GROUP) == 1 ? "/api/" VERSION "/" RESOURCE                                         \
			    : "/apis/" GROUP "/" VERSION "/" RESOURCE)

/* The descriptor of a kind; NULL for SX_KIND_UNKNOWN and out-of-range values. */
const struct sx_kind_desc *sx_kind_desc(enum sx_kind kind);
/* "Node", "Pod", ... (the Kubernetes kind string); "Unknown" for others. */
const char *sx_kind_name(enum sx_kind kind);
/* Kind from a kind string ("Pod"); SX_KIND_UNKNOWN when not modelled. A
 * kind string several groups serve ("PodGroup": scheduling.k8s.io and
 * scheduling.x-k8s.io) names its first row; sx_kind_lookup tells them
 * apart. */
enum sx_kind sx_kind_from_name(const char *kind);
/* Kind from an object's apiVersion ("scheduling.x-k8s.io/v1alpha1", "v1";
 * the group decides, not the version) and kind string. A NULL or empty
 * apiVersion, or a group no row of that kind has, is sx_kind_from_name. */
enum sx_kind sx_kind_lookup(const char *api_version, const char *kind);

/* Namespace, Service, ReplicationController, ReplicaSet, StatefulSet,
 * PodDisruptionBudget share one struct: the fields each kind
 * does not have stay zero. */
struct sx_generic {
	atomic_int refcount;
	uint8_t kind; /* enum sx_kind */
	struct sx_meta meta;
	/* Service spec.selector / RC spec.selector (map form). has_map_selector
	 * false = no selector (selects nothing). */
	bool has_map_selector;
	struct sx_labels map_selector;
	/* ReplicaSet / StatefulSet / PDB spec.selector. */
	struct sx_label_selector *selector;
	/* PDB */
	bool has_min_available, has_max_unavailable;
	bool min_available_percent, max_unavailable_percent;
	int32_t min_available, max_unavailable;
	int32_t disruptions_allowed; /* status.disruptionsAllowed */
};

/* ---------- storage (what the volume plugins read) ---------- */

/* Access modes as a bit set (PV and PVC spec.accessModes). */
enum sx_access_mode {
	SX_ACCESS_RWO = 1u << 0,  /* ReadWriteOnce */
	SX_ACCESS_ROX = 1u << 1,  /* ReadOnlyMany */
	SX_ACCESS_RWX = 1u << 2,  /* ReadWriteMany */
	SX_ACCESS_RWOP = 1u << 3, /* ReadWriteOncePod */
};

/* spec.volumeMode; absent is Filesystem (the API default). */
enum sx_volume_mode { SX_VOLUME_FILESYSTEM = 0, SX_VOLUME_BLOCK };

enum sx_pv_phase {
	SX_PV_PHASE_NONE = 0, /* status.phase absent */
	SX_PV_PENDING,
	SX_PV_AVAILABLE,
	SX_PV_BOUND,
	SX_PV_RELEASED,
	SX_PV_FAILED,
};

enum sx_pvc_phase { SX_PVC_PHASE_NONE = 0, SX_PVC_PENDING, SX_PVC_BOUND, SX_PVC_LOST };

/* The volume source of a pod volume or a PV, as far as the volume plugins
 * tell them apart. SX_VSRC_OTHER: any other source (configMap, emptyDir,
 * hostPath, nfs, local, ...). */
enum sx_volume_source {
	SX_VSRC_OTHER = 0,
	SX_VSRC_PVC,	    /* pod only: persistentVolumeClaim */
	SX_VSRC_EPHEMERAL,  /* pod only: generic ephemeral (claim <pod>-<volume>) */
	SX_VSRC_CSI,	    /* csi (inline on a pod, or a PV's) */
	SX_VSRC_GCE_PD,	    /* gcePersistentDisk */
	SX_VSRC_AWS_EBS,    /* awsElasticBlockStore */
	SX_VSRC_AZURE_DISK, /* azureDisk */
	SX_VSRC_AZURE_FILE, /* azureFile */
	SX_VSRC_CINDER,	    /* cinder */
	SX_VSRC_VSPHERE,    /* vsphereVolume */
	SX_VSRC_PORTWORX,   /* portworxVolume */
	SX_VSRC_RBD,	    /* rbd */
	SX_VSRC_ISCSI,	    /* iscsi */
	SX_VSRC_IMAGE,	    /* pod only: image (an OCI image volume); id: the
			     * reference, normalized like sx_container.image */
};

/* In-tree plugin name ("kubernetes.io/gce-pd") and CSI driver name
 * ("pd.csi.storage.gke.io") of a migratable in-tree source; NULL for the
 * others (CSI, RBD, iSCSI, PVC, ...). */
const char *sx_volume_source_plugin(enum sx_volume_source src);
const char *sx_volume_source_csi_driver(enum sx_volume_source src);
/* The in-tree source whose plugin name is `plugin` (a StorageClass
 * provisioner such as "kubernetes.io/aws-ebs"), or SX_VSRC_OTHER. */
enum sx_volume_source sx_volume_source_from_plugin(const char *plugin);

/* One entry of pod.spec.volumes. `id` is what identifies the disk:
 * gcePersistentDisk.pdName, awsElasticBlockStore.volumeID, azureDisk.diskURI,
 * azureFile.shareName, cinder.volumeID, vsphereVolume.volumePath,
 * portworxVolume.volumeID, iscsi.iqn, rbd.image; csi: the driver; image:
 * image.reference, normalized. */
struct sx_volume {
	sx_str name;
	uint8_t source; /* enum sx_volume_source */
	bool read_only; /* persistentVolumeClaim/gce/ebs/rbd/iscsi/... readOnly */
	sx_str claim;	/* PVC: claimName; ephemeral: <pod>-<volume> */
	sx_str id;
	sx_str pool; /* rbd.pool ("rbd" when absent, the API default) */
	uint32_t nmonitors;
	sx_str *monitors; /* rbd.monitors */
};

struct sx_pv {
	atomic_int refcount;
	struct sx_meta meta;
	bool deleting; /* metadata.deletionTimestamp set */
	/* volume.beta.kubernetes.io/storage-class annotation, else
	 * spec.storageClassName (GetPersistentVolumeClass). */
	sx_str storage_class;
	sx_str vac;				/* spec.volumeAttributesClassName */
	struct sx_node_selector *node_affinity; /* spec.nodeAffinity.required; NULL when absent */
	bool has_claim_ref;			/* spec.claimRef set */
	sx_str claim_ns, claim_name;		/* spec.claimRef */
	char *claim_uid;			/* spec.claimRef.uid; NULL when absent */
	bool has_capacity;
	int64_t capacity_storage; /* spec.capacity.storage, bytes */
	uint8_t access_modes;	  /* enum sx_access_mode bits */
	uint8_t volume_mode;	  /* enum sx_volume_mode */
	uint8_t phase;		  /* enum sx_pv_phase */
	uint8_t source;		  /* enum sx_volume_source (SX_VSRC_CSI or in-tree) */
	sx_str csi_driver;	  /* spec.csi.driver */
	sx_str volume_handle;	  /* spec.csi.volumeHandle, or the in-tree id */
	bool bound_by_controller; /* pv.kubernetes.io/bound-by-controller: "yes" */
	sx_str provisioned_by;	  /* pv.kubernetes.io/provisioned-by */
};

struct sx_pvc {
	atomic_int refcount;
	struct sx_meta meta;
	bool deleting;	    /* metadata.deletionTimestamp set */
	sx_str volume_name; /* spec.volumeName */
	/* volume.beta.kubernetes.io/storage-class annotation, else
	 * spec.storageClassName (GetPersistentVolumeClaimClass). */
	sx_str storage_class;
	bool has_storage_class;	  /* either of the two is set (possibly "") */
	sx_str vac;		  /* spec.volumeAttributesClassName */
	bool bound;		  /* status.phase == Bound */
	uint8_t phase;		  /* enum sx_pvc_phase */
	uint8_t access_modes;	  /* enum sx_access_mode bits */
	uint8_t volume_mode;	  /* enum sx_volume_mode */
	bool read_write_once_pod; /* access_modes has SX_ACCESS_RWOP */
	bool has_request;
	int64_t request_storage;	    /* spec.resources.requests.storage, bytes */
	struct sx_label_selector *selector; /* spec.selector; NULL when absent */
	bool has_data_source;		    /* spec.dataSource or dataSourceRef set */
	/* annotations */
	sx_str selected_node;		 /* volume.kubernetes.io/selected-node */
	bool bind_completed;		 /* pv.kubernetes.io/bind-completed present */
	bool bound_by_controller;	 /* pv.kubernetes.io/bound-by-controller present */
	sx_str storage_provisioner;	 /* volume.kubernetes.io/storage-provisioner */
	sx_str beta_storage_provisioner; /* volume.beta.kubernetes.io/storage-provisioner */
	char *controller_uid;		 /* uid of the controller ownerReference, or NULL */
};

enum sx_binding_mode {
	SX_BINDING_UNSET = 0, /* volumeBindingMode absent (the API defaults it) */
	SX_BINDING_IMMEDIATE,
	SX_BINDING_WAIT_FOR_FIRST_CONSUMER,
};

struct sx_storage_class {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str provisioner;
	uint8_t binding_mode;	      /* enum sx_binding_mode */
	bool wait_for_first_consumer; /* binding_mode == WaitForFirstConsumer */
	/* allowedTopologies: each term's matchLabelExpressions as In
	 * requirements of one node selector term (terms ORed); NULL when
	 * absent or empty (every node). */
	struct sx_node_selector *allowed_topologies;
};

struct sx_csi_driver_info {
	sx_str name;
	bool has_count;
	int32_t allocatable_count; /* allocatable.count, >= 0 */
	uint32_t ntopology_keys;
	sx_str *topology_keys;
};

struct sx_csi_node {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str name_id; /* interned meta.name: the node it describes (the snapshot's key) */
	uint32_t ndrivers;
	struct sx_csi_driver_info *drivers;
	/* storage.alpha.kubernetes.io/migrated-plugins annotation, split on
	 * commas: in-tree plugin names migrated to CSI on this node. */
	uint32_t nmigrated;
	sx_str *migrated;
};

/* Driver `name` of a CSINode, or NULL. */
const struct sx_csi_driver_info *sx_csi_node_driver(const struct sx_csi_node *csi, sx_str name);
/* Is in-tree plugin `plugin` ("kubernetes.io/gce-pd") migrated on csi's node?
 * False when csi is NULL. */
bool sx_csi_node_migrated(const struct sx_csi_node *csi, const char *plugin);

struct sx_csi_driver {
	atomic_int refcount;
	struct sx_meta meta;   /* meta.name is the driver name */
	sx_str name_id;	       /* interned meta.name */
	bool attach_required;  /* spec.attachRequired, default true */
	bool storage_capacity; /* spec.storageCapacity, default false */
	/* spec.preventPodSchedulingIfMissing (1.35+, VolumeLimitScaling),
	 * default false */
	bool prevent_if_missing;
};

struct sx_csi_capacity {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str storage_class; /* storageClassName */
	/* nodeTopology; NULL when absent (matches no node). */
	struct sx_label_selector *node_topology;
	bool has_capacity;
	int64_t capacity; /* bytes */
	bool has_max_size;
	int64_t maximum_volume_size; /* bytes */
};

struct sx_volume_attachment {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str attacher;  /* spec.attacher (a CSI driver name) */
	sx_str node_name; /* spec.nodeName */
	sx_str pv_name;	  /* spec.source.persistentVolumeName; empty when inline */
	bool attached;	  /* status.attached */
};

/* Reference counting. ref returns its argument; unref frees at zero and
 * accepts NULL. */
/* pod as the scheduler assumed it on node (upstream's assumed pod: a copy
 * with spec.nodeName set), for the cluster event a forgotten assumed pod
 * makes. A reference-counted view sharing pod's fields; NULL when out of
 * memory. */
struct sx_pod *sx_pod_assumed_on(const struct sx_pod *pod, sx_str node);
struct sx_pod *sx_pod_ref(const struct sx_pod *pod);
void sx_pod_unref(const struct sx_pod *pod);
struct sx_node *sx_node_ref(const struct sx_node *node);
void sx_node_unref(const struct sx_node *node);
struct sx_generic *sx_generic_ref(const struct sx_generic *obj);
void sx_generic_unref(const struct sx_generic *obj);
struct sx_pv *sx_pv_ref(const struct sx_pv *pv);
void sx_pv_unref(const struct sx_pv *pv);
struct sx_pvc *sx_pvc_ref(const struct sx_pvc *pvc);
void sx_pvc_unref(const struct sx_pvc *pvc);
struct sx_csi_node *sx_csi_node_ref(const struct sx_csi_node *csi);
void sx_csi_node_unref(const struct sx_csi_node *csi);
struct sx_storage_class *sx_storage_class_ref(const struct sx_storage_class *sc);
void sx_storage_class_unref(const struct sx_storage_class *sc);
struct sx_csi_driver *sx_csi_driver_ref(const struct sx_csi_driver *d);
void sx_csi_driver_unref(const struct sx_csi_driver *d);
struct sx_csi_capacity *sx_csi_capacity_ref(const struct sx_csi_capacity *c);
void sx_csi_capacity_unref(const struct sx_csi_capacity *c);
struct sx_volume_attachment *sx_volume_attachment_ref(const struct sx_volume_attachment *va);
void sx_volume_attachment_unref(const struct sx_volume_attachment *va);

/* A decoded object of any kind, as produced by sx_decode_object() and
 * consumed by the cache. `obj` points to the kind's struct. */
struct sx_object {
	enum sx_kind kind;
	void *obj;
};
/* The meta of any object. */
const struct sx_meta *sx_object_meta(const struct sx_object *o);
void sx_object_unref(struct sx_object *o);

/* Label value lookup: returns true and sets *value when key is present;
 * false, with *value set to "" (SX_STR_EMPTY), when it is not. Inline
 * and without a branch on the comparison (labels are sorted by key id;
 * the search halves the range with a conditional move): Filter looks
 * labels up on thousands of nodes per cycle, where a call and a branchy
 * search that mispredicted about half of its steps cost more than the
 * lookup itself. */
static inline bool sx_labels_get(const struct sx_labels *labels, sx_str key, sx_str *value)
{
	const struct sx_label *base;
	uint32_t n;

	if (value)
		*value = SX_STR_EMPTY;
	if (!labels || !labels->items || labels->n == 0)
		return false;
	base = labels->items;
	n = labels->n;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half].key <= key ? base + half : base;
		n -= half;
	}
	if (base->key != key)
		return false;
	if (value)
		*value = base->value;
	return true;
}

/* Fills node->topo from node->meta.labels: the decoder calls it, and so
 * must anything else that sets a node's labels. */
void sx_node_index_labels(struct sx_node *node);

/* A node's label: sx_labels_get on node->meta.labels, with the topology
 * labels (sx_node.topo) read from the node itself. */
static inline bool sx_node_label(const struct sx_node *node, sx_str key, sx_str *value)
{
	int k = key == SX_S_HOSTNAME ? SX_TOPO_HOSTNAME
		: key == SX_S_ZONE   ? SX_TOPO_ZONE
		: key == SX_S_REGION ? SX_TOPO_REGION
				     : -1;

	if (k < 0)
		return sx_labels_get(&node->meta.labels, key, value);
	if (value)
		*value = SX_STR_EMPTY;
	if (!(node->topo_has >> k & 1))
		return false;
	if (value)
		*value = node->topo[k];
	return true;
}

/* Pod helpers */
/* Does the pod have a volume of this source? */
bool sx_pod_has_volume_source(const struct sx_pod *pod, enum sx_volume_source src);
bool sx_pod_has_affinity(const struct sx_pod *pod); /* podAffinity or podAntiAffinity non-nil */
bool sx_pod_has_required_anti_affinity(const struct sx_pod *pod);
/* Controller owner reference (controller: true), or NULL. */
const struct sx_owner_ref *sx_pod_controller(const struct sx_pod *pod);
/* "ns/name" into buf. */
const char *sx_pod_key(const struct sx_pod *pod, char *buf, size_t len);

#endif /* SCHEDEXT_MODEL_H */
