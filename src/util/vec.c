/* The slow path of sx_vec_reserve (vec.h): doubling with overflow checks.
 * The caller's pointer is read and written with memcpy, so any object
 * pointer type can be passed as void * without breaking aliasing rules.
 * No state of its own. */
#include "schedext/vec.h"

#include <stdlib.h>
#include <string.h>

int sx_vec_grow(void *pp, uint32_t *cap, uint64_t need, size_t elem, uint32_t min)
{
	uint64_t ncap = *cap ? *cap : (min ? min : 1);
	void *p;

	if (need > UINT32_MAX || elem == 0)
		return SX_ENOMEM;
	while (ncap < need)
		ncap *= 2; /* need <= 2^32: no wrap */
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap > SIZE_MAX / elem)
		return SX_ENOMEM;
	memcpy(&p, pp, sizeof(p));
	p = realloc(p, (size_t)ncap * elem);
	if (!p)
		return SX_ENOMEM;
	memcpy(pp, &p, sizeof(p));
	*cap = (uint32_t)ncap;
	return 0;
}
