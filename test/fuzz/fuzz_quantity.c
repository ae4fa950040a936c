/* resource.Quantity strings (the bytes of a JSON string value).
 * Invariant (decode -> encode -> decode): a parsed quantity printed as its
 * exact nano count ("<n>n") parses back to the same value; Value/MilliValue
 * round the same way when both fit. */
#include <string.h>

#include "fuzz.h"
#include "schedext/quantity.h"

/* Prints q (any __int128) in decimal followed by 'n'. */
static size_t print_nano(sx_nano q, char *buf)
{
	char tmp[64];
	size_t n = 0, len = 0;
	unsigned __int128 u = q < 0 ? -(unsigned __int128)q : (unsigned __int128)q;

	do {
		tmp[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (q < 0)
		buf[len++] = '-';
	while (n)
		buf[len++] = tmp[--n];
	buf[len++] = 'n';
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sx_nano q, q2;
	int64_t milli, value;
	char buf[80];
	size_t len;

	fuzz_init();
	if (sx_quantity_parse((const char *)data, size, &q) != 0)
		return 0;
	len = print_nano(q, buf);
	FUZZ_CHECK(sx_quantity_parse(buf, len, &q2) == 0, "re-parse of %.*s failed", (int)len, buf);
	FUZZ_CHECK(q == q2, "%.*s re-parsed to a different value", (int)len, buf);
	if (sx_quantity_milli(q, &milli) == 0 && sx_quantity_value(q, &value) == 0) {
		/* Both round away from zero (Kubernetes' negativeScaleInt64):
		 * |value| - 1 < |milli| / 1000 <= |value|, same sign. */
		__int128 m = milli < 0 ? -(__int128)milli : milli;
		__int128 v = value < 0 ? -(__int128)value : value;

		FUZZ_CHECK(m <= v * 1000 && m > (v - 1) * 1000 && (milli < 0) == (value < 0),
			   "milli %lld vs value %lld", (long long)milli, (long long)value);
	}
	return 0;
}
