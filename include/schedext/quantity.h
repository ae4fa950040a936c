/* resource.Quantity parsing exactly as Kubernetes does
 * (apimachinery pkg/api/resource/quantity.go): exact decimal value kept as a signed 128-bit
 * count of nano-units (1e-9), sub-nano remainders rounded up (away from zero),
 * magnitudes beyond int64 in the final conversions rejected.
 */
#ifndef SCHEDEXT_QUANTITY_H
#define SCHEDEXT_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef __int128 sx_nano; /* value × 10^9 */

#define SX_NANO_PER_UNIT ((sx_nano)1000000000)

/* Parses s[0..len) (no surrounding whitespace allowed). Returns 0 and sets
 * *out, or SX_EINVAL for garbage (bad suffix, empty, junk) and SX_ETOOBIG for
 * values whose magnitude exceeds what Kubernetes can represent (> 2^63-1 units
 * after scaling). */
int sx_quantity_parse(const char *s, size_t len, sx_nano *out);

/* Ceil conversions (MilliValue / Value). Return 0, or SX_ETOOBIG when the
 * result does not fit in int64. */
int sx_quantity_milli(sx_nano q, int64_t *out);
int sx_quantity_value(sx_nano q, int64_t *out);

#endif /* SCHEDEXT_QUANTITY_H */
