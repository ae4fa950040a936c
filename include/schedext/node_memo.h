/* Node items already validated: full-Node /filter and /prioritize bodies
 * (nodeCacheCapable: false, kube-scheduler's default) repeat the same Node
 * objects, byte for byte, on every call until a Node changes. Validating
 * them again is most of such a call's cost; comparing the bytes with a
 * kept copy is a tenth of it.
 *
 * Why a byte-identical copy is enough: a JSON value's extent and validity
 * depend on its bytes alone, so an item whose bytes equal those of an item
 * that was scanned and validated at the same depth (every Nodes.items
 * element is) is that same valid value, with its metadata fields at the
 * same offsets.
 *
 * Entries are keyed by a hash of the item's first SX_NODE_MEMO_PREFIX
 * bytes; a lookup compares every entry of that key in full, so a hash
 * collision costs a memcmp, never a wrong answer. Bounded by bytes and
 * entries, least recently matched evicted first. Thread-safe (one mutex;
 * a lookup holds it for the hash and a memcmp of one item).
 */
#ifndef SCHEDEXT_NODE_MEMO_H
#define SCHEDEXT_NODE_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "schedext/json_scan.h"

/* Items shorter than this are not kept (validating them is cheap). */
#define SX_NODE_MEMO_PREFIX 128

struct sx_node_memo;

/* A validated item's metadata name, uid and resourceVersion, as the
 * scanner found them (type NONE when absent). */
struct sx_node_memo_fields {
	struct sx_json_val name, uid, rv;
};

/* NULL when out of memory. budget: most bytes kept; max_entries: most
 * items kept. */
struct sx_node_memo *sx_node_memo_new(size_t budget, uint32_t max_entries);
void sx_node_memo_free(struct sx_node_memo *m);
/* The length of the kept item equal to the bytes at p (before end), with
 * its fields re-pointed into p; 0 when none is. */
size_t sx_node_memo_match(struct sx_node_memo *m, const char *p, const char *end,
			  struct sx_node_memo_fields *f);
/* Keeps a copy of the validated item [p, p + len) and its fields (which
 * point into it). Out of memory or over the budget: not kept. */
void sx_node_memo_add(struct sx_node_memo *m, const char *p, size_t len,
		      const struct sx_node_memo_fields *f);
/* Items kept now, and lookups that matched / missed since creation. */
void sx_node_memo_stats(struct sx_node_memo *m, uint32_t *entries, uint64_t *hits,
			uint64_t *misses);

#endif /* SCHEDEXT_NODE_MEMO_H */
