/* The kind dispatcher (decode.h): an object of any known kind to its
 * decoder. It sits above the per-kind decoders (decode_pod.c, decode_node.c,
 * decode_misc.c, decode_dra.c, decode_storage.c), which sit above the
 * field readers of decode.c; nothing below calls back up here. Which
 * decoder a kind has is its DECODE column in kinds.def.
 */
#include "schedext/decode.h"

#include <stdatomic.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/dra.h"
#include "schedext/workload.h"

static atomic_uint keep_raw_kinds; /* bit per enum sx_kind */
_Static_assert(SX_KIND_COUNT <= 32, "keep_raw_kinds holds a bit per kind");

void sx_decode_keep_raw(enum sx_kind kind, bool on)
{
	if (on)
		atomic_fetch_or(&keep_raw_kinds, 1u << kind);
	else
		atomic_fetch_and(&keep_raw_kinds, ~(1u << kind));
}

/* meta.raw for the kinds asked for (extenders send them as received). */
static void keep_raw(const cJSON *json, struct sx_object *o)
{
	struct sx_meta *m;

	if (!(atomic_load_explicit(&keep_raw_kinds, memory_order_relaxed) & (1u << o->kind)))
		return;
	m = (struct sx_meta *)sx_object_meta(o);
	if (m)
		m->raw = cJSON_PrintUnformatted(json);
}

int sx_decode_object(const cJSON *json, const char *kind, struct sx_object *out,
		     struct sx_error *err)
{
	struct sx_error tmp;
	enum sx_kind k;

	if (!err)
		err = &tmp;
	out->kind = SX_KIND_UNKNOWN;
	out->obj = NULL;
	if (!cJSON_IsObject(json))
		return sx_dec_not_object(err, json);
	if (!kind) {
		int rc = sx_dec_string(json, "kind", &kind, err);

		if (rc < 0)
			return rc;
		if (!kind) {
			sx_error_set(err, SX_EINVAL, "missing kind");
			sx_error_prefix(err, "kind");
			return SX_EINVAL;
		}
	}
	k = sx_kind_lookup(sx_json_string(json, "apiVersion"), kind);
	if (k == SX_KIND_UNKNOWN)
		return sx_error_set(err, SX_ENOENT, "unknown kind %.64s", kind);
	return sx_decode_object_as(json, k, out, err);
}

int sx_decode_object_as(const cJSON *json, enum sx_kind k, struct sx_object *out,
			struct sx_error *err)
{
	struct sx_error tmp;

	if (!err)
		err = &tmp;
	out->kind = SX_KIND_UNKNOWN;
	out->obj = NULL;
	if (!cJSON_IsObject(json))
		return sx_dec_not_object(err, json);
	switch (k) {
#define DECODE(fn)	fn(json, err)
#define DECODE_KIND(fn) fn(json, k, err)
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE_FN, ...)              \
	case SX_KIND_##ID:                                                                         \
		out->obj = DECODE_FN;                                                              \
		break;
#include "schedext/kinds.def"
#undef DECODE
#undef DECODE_KIND
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		return sx_error_set(err, SX_ENOENT, "unknown kind %.64s", sx_kind_name(k));
	}
	if (!out->obj)
		return err->code < 0 ? err->code : SX_EINVAL;
	out->kind = k;
	keep_raw(json, out);
	return 0;
}
