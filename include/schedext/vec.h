/* Growable arrays: one "make room for n elements" for every array that
 * grows by doubling (a pointer and a uint32_t capacity kept by the
 * caller, elements appended by the caller).
 *
 *	if (sx_vec_reserve(s->items, s->cap, s->n + 1, 8) < 0)
 *		return SX_ENOMEM;
 *	s->items[s->n++] = x;
 *
 * The capacity doubles from min (or from the current capacity) until the
 * request fits; an element count past UINT32_MAX or a byte count past
 * SIZE_MAX is refused like an allocation failure, so a capacity never
 * wraps. On failure the array and its capacity are unchanged (still
 * owned by the caller). The new part is not zeroed. No state, any thread
 * (the caller owns the array). */
#ifndef SCHEDEXT_VEC_H
#define SCHEDEXT_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

/* The slow path: *(T **)pp grown to at least need elements of elem bytes.
 * 0 or SX_ENOMEM. */
int sx_vec_grow(void *pp, uint32_t *cap, uint64_t need, size_t elem, uint32_t min);

static inline int sx_vec_reserve_(void *pp, uint32_t *cap, uint64_t need, size_t elem, uint32_t min)
{
	return need <= *cap ? 0 : sx_vec_grow(pp, cap, need, elem, min);
}

/* Room for at least need elements in p (an lvalue of pointer type) whose
 * capacity is cap (an lvalue uint32_t). 0 or SX_ENOMEM. */
#define sx_vec_reserve(p, cap, need, min) sx_vec_reserve_(&(p), &(cap), (need), sizeof(*(p)), (min))

#endif /* SCHEDEXT_VEC_H */
