/* v1.Node decoding (staging/src/k8s.io/api/core/v1/types.go) and image name
 * normalisation shared with the pod decoder.
 */
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/decode.h"

sx_str sx_normalized_image(const char *name, size_t len)
{
	const char *slash = NULL, *colon = NULL;
	char *tmp;
	sx_str id;

	for (size_t i = 0; i < len; i++) {
		if (name[i] == '/')
			slash = name + i;
		else if (name[i] == ':')
			colon = name + i;
		else if (name[i] == '@')
			return sx_intern_n(name, len); /* a digest pins the image */
	}
	/* Tagged when the last ':' comes after the last '/' (a registry port
	 * "host:5000/img" is not a tag). */
	if (colon && (!slash || colon > slash))
		return sx_intern_n(name, len);
	tmp = malloc(len + sizeof(":latest"));
	if (!tmp)
		return SX_STR_INVALID;
	memcpy(tmp, name, len);
	memcpy(tmp + len, ":latest", sizeof(":latest"));
	id = sx_intern_n(tmp, len + sizeof(":latest") - 1);
	free(tmp);
	return id;
}

static int decode_taint(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
	struct sx_taint *t = elem;
	const char *effect;
	int rc = sx_dec_intern(j, "key", &t->key, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "value", &t->value, err);
	if (rc == 0)
		rc = sx_dec_string(j, "effect", &effect, err);
	if (rc < 0 || !effect)
		return rc;
	for (uint8_t e = 0; e < SX_ARRAY_SIZE(effects); e++) {
		if (strcmp(effect, effects[e]) == 0) {
			t->effect = e;
			return 0;
		}
	}
	sx_error_set(err, SX_EINVAL, "unknown effect \"%.64s\"", effect);
	sx_error_prefix(err, "effect");
	return SX_EINVAL;
}

static int decode_spec(const cJSON *spec, struct sx_node *node, struct sx_error *err)
{
	int rc = sx_dec_bool(spec, "unschedulable", &node->unschedulable, err);

	if (rc == 0)
		rc = sx_dec_objects(spec, "taints", &node->taints, &node->ntaints, decode_taint,
				    NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static int decode_resource_field(const cJSON *status, const char *key, struct sx_resources *out,
				 struct sx_error *err)
{
	struct sx_rlist l = {0};
	int rc = sx_dec_rlist(status, key, true, &l, NULL, err);

	if (rc == 0) {
		rc = sx_rlist_to_resources(&l, out, err);
		if (rc < 0)
			sx_error_prefix(err, key);
	}
	sx_rlist_clear(&l);
	return rc;
}

/* One images[].names entry, normalized like a container image. */
static int decode_image_name(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	sx_str *name = elem;
	const char *s;
	int rc = sx_dec_string_value(j, &s, err);

	if (rc < 0)
		return rc;
	*name = sx_normalized_image(s, strlen(s));
	if (*name == SX_STR_INVALID) {
		*name = SX_STR_EMPTY;
		return sx_error_set(err, SX_ETOOBIG, "string table full");
	}
	return 0;
}

static int decode_image(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_image *img = elem;
	int rc = sx_dec_int64(j, "sizeBytes", 0, INT64_MAX, &img->size_bytes, NULL, err);

	if (rc == 0)
		rc = sx_dec_items(j, "names", &img->names, &img->nnames, decode_image_name, NULL,
				  err);
	return rc;
}

static int decode_condition(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_node_condition *c = elem;
	int rc = sx_dec_intern(j, "type", &c->type, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "status", &c->status, err);
	return rc;
}

static int decode_status(const cJSON *status, struct sx_node *node, struct sx_error *err)
{
	int rc = decode_resource_field(status, "allocatable", &node->allocatable, err);

	if (rc == 0)
		rc = decode_resource_field(status, "capacity", &node->capacity, err);
	if (rc == 0)
		rc = sx_dec_objects(status, "images", &node->images, &node->nimages, decode_image,
				    NULL, err);
	if (rc == 0)
		rc = sx_dec_objects(status, "conditions", &node->conditions, &node->nconditions,
				    decode_condition, NULL, err);
	if (rc == 0)
		rc = sx_dec_str_list(status, "declaredFeatures", &node->ndeclared_features,
				     &node->declared_features, err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

struct sx_node *sx_decode_node(const cJSON *json, struct sx_error *err)
{
	const cJSON *spec, *status;
	struct sx_error tmp;
	struct sx_node *node;
	int rc;

	if (!err)
		err = &tmp;
	node = sx_dec_new(json, sizeof(*node), err);
	if (!node)
		return NULL;
	atomic_init(&node->refcount, 1);
	rc = sx_dec_meta(json, &node->meta, err);
	if (rc == 0)
		rc = sx_dec_name_id(&node->meta, &node->name_id, err);
	if (rc == 0)
		sx_node_index_labels(node);
	if (rc == 0)
		rc = sx_dec_object(json, "spec", &spec, err);
	if (rc == 0)
		rc = decode_spec(spec, node, err);
	if (rc == 0)
		rc = sx_dec_object(json, "status", &status, err);
	if (rc == 0)
		rc = decode_status(status, node, err);
	if (rc < 0) {
		sx_node_free(node);
		return NULL;
	}
	return node;
}
