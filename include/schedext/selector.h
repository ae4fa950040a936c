/* Matching: label selectors, node selector terms, node affinity,
 * tolerations (apimachinery labels, component-helpers nodeaffinity, core/v1 toleration.go).
 * Pure functions over model structs; safe from any thread.
 */
#ifndef SCHEDEXT_SELECTOR_H
#define SCHEDEXT_SELECTOR_H

#include <stdbool.h>

#include "schedext/model.h"

/* Does `labels` satisfy `req`? (In/NotIn/Exists/DoesNotExist/Gt/Lt/Equals).
 * Gt/Lt parse the label value and the single requirement value as int64;
 * a parse failure does not match. */
bool sx_requirement_matches(const struct sx_requirement *req, const struct sx_labels *labels);
/* The same against a node's labels (sx_node_label: its topology labels
 * without a search). */
bool sx_node_requirement_matches(const struct sx_requirement *req, const struct sx_node *node);

/* Label selector: every requirement holds. sel == NULL matches nothing;
 * an empty selector matches everything. */
bool sx_selector_matches(const struct sx_label_selector *sel, const struct sx_labels *labels);

/* Map selector (Service/RC spec.selector, pod nodeSelector): every key with
 * that value. An empty map matches everything. */
bool sx_map_selector_matches(const struct sx_labels *selector, const struct sx_labels *labels);

/* Node selector term against a node (expressions on labels, fields on
 * metadata.name). An empty term matches nothing. */
bool sx_node_selector_term_matches(const struct sx_node_selector_term *term,
				   const struct sx_node *node);
/* Terms ORed; no terms matches nothing. */
bool sx_node_selector_matches(const struct sx_node_selector *sel, const struct sx_node *node);

/* The pod's nodeSelector and required node affinity both hold
 * (component-helpers GetRequiredNodeAffinity().Match). */
bool sx_pod_matches_node_selector_and_affinity(const struct sx_pod *pod,
					       const struct sx_node *node);

/* Toleration tolerates taint (core/v1 toleration.go ToleratesTaint). */
bool sx_toleration_tolerates(const struct sx_toleration *tol, const struct sx_taint *taint);
/* Some toleration in the list tolerates taint. */
bool sx_tolerations_tolerate(const struct sx_toleration *tols, uint32_t ntols,
			     const struct sx_taint *taint);
/* First taint with effect NoSchedule or NoExecute (when filter_prefer is
 * false: those two; the effects to consider are given as a bitmask of
 * (1 << SX_EFFECT_*)) that no toleration tolerates, or NULL. */
const struct sx_taint *sx_find_untolerated_taint(const struct sx_taint *taints, uint32_t ntaints,
						 const struct sx_toleration *tols, uint32_t ntols,
						 unsigned effect_mask);
/* The same with the comparison operators Lt and Gt matching when compare
 * is set (ToleratesTaint's enableComparisonOperators; the functions above
 * pass false: Lt and Gt tolerate nothing). */
bool sx_toleration_tolerates_ops(const struct sx_toleration *tol, const struct sx_taint *taint,
				 bool compare);
bool sx_tolerations_tolerate_ops(const struct sx_toleration *tols, uint32_t ntols,
				 const struct sx_taint *taint, bool compare);
const struct sx_taint *sx_find_untolerated_taint_ops(const struct sx_taint *taints,
						     uint32_t ntaints,
						     const struct sx_toleration *tols,
						     uint32_t ntols, unsigned effect_mask,
						     bool compare);

#endif /* SCHEDEXT_SELECTOR_H */
