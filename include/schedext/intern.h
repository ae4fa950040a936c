/* Interned strings: label keys/values, namespaces, node names, resource
 * names, topology keys, image names. Equal strings get equal ids, so plugins
 * compare integers.
 *
 * Thread safety: every function may be called from any thread. Ids are never
 * freed for the life of the process; the table has a global byte cap
 * (SX_INTERN_MAX_BYTES) so hostile input cannot grow it without bound:
 * sx_intern() returns SX_STR_INVALID once the cap is reached.
 */
#ifndef SCHEDEXT_INTERN_H
#define SCHEDEXT_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t sx_str;

/* Id 0 is the empty string "" (also used for "absent"). */
#define SX_STR_EMPTY	    ((sx_str)0)
#define SX_STR_INVALID	    ((sx_str)UINT32_MAX)
#define SX_INTERN_MAX_BYTES ((size_t)512 << 20)

/* Interns s[0..len). Returns its id, or SX_STR_INVALID when the table is full
 * or allocation fails. */
sx_str sx_intern_n(const char *s, size_t len);
sx_str sx_intern(const char *s);

/* Looks s up without adding it: SX_STR_INVALID when not interned. Lets
 * request decoding test label values against known ones without growth. */
sx_str sx_intern_lookup_n(const char *s, size_t len);

/* The string of an id. The pointer is valid for the life of the process.
 * Unknown ids return "". */
const char *sx_str_get(sx_str id);
size_t sx_str_len(sx_str id);

/* Statistics for /metrics and bench. */
size_t sx_intern_count(void);
size_t sx_intern_bytes(void);

/* Well-known strings, interned once at start (sx_intern_init()). */
extern sx_str SX_S_CPU, SX_S_MEMORY, SX_S_EPHEMERAL_STORAGE, SX_S_PODS;
extern sx_str SX_S_HOSTNAME, SX_S_ZONE, SX_S_REGION, SX_S_ZONE_BETA, SX_S_REGION_BETA;
extern sx_str SX_S_DEFAULT, SX_S_DEFAULT_SCHEDULER, SX_S_TCP, SX_S_UDP, SX_S_SCTP;
extern sx_str SX_S_UNSCHEDULABLE_TAINT; /* node.kubernetes.io/unschedulable */
extern sx_str SX_S_METADATA_NAME;	/* metadata.name */

/* Idempotent; called from main and test setup. */
void sx_intern_init(void);

#endif /* SCHEDEXT_INTERN_H */
