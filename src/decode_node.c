/* v1.Node decoding (reference kube-api.md §4.7) and image name
 * normalisation shared with the pod decoder.
 */
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
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

static int oom(struct sx_error *err)
{
	return sx_error_set(err, SX_ENOMEM, "out of memory");
}

static int not_object(struct sx_error *err, const cJSON *j)
{
	return sx_error_set(err, SX_EINVAL, "expected object, got %s", sx_dec_type_name(j));
}

static int decode_taint(const cJSON *j, struct sx_taint *t, struct sx_error *err)
{
	static const char *const effects[] = { "", "NoSchedule", "PreferNoSchedule", "NoExecute" };
	const char *effect;
	int rc;

	if (!cJSON_IsObject(j))
		return not_object(err, j);
	rc = sx_dec_intern(j, "key", &t->key, err);
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
	const cJSON *arr, *it;
	uint32_t i = 0;
	int rc = sx_dec_bool(spec, "unschedulable", &node->unschedulable, err);

	if (rc == 0)
		rc = sx_dec_array(spec, "taints", &arr, &node->ntaints, err);
	if (rc == 0 && arr) {
		node->taints = sx_calloc(node->ntaints, sizeof(*node->taints));
		if (!node->taints) {
			node->ntaints = 0;
			rc = oom(err);
		}
		cJSON_ArrayForEach(it, arr) {
			if (rc < 0)
				break;
			rc = decode_taint(it, &node->taints[i], err);
			if (rc < 0) {
				sx_error_prefixf(err, "[%u]", i);
				sx_error_prefix(err, "taints");
			}
			i++;
		}
	}
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static int decode_resource_field(const cJSON *status, const char *key, struct sx_resources *out,
				 struct sx_error *err)
{
	struct sx_rlist l = { 0 };
	int rc = sx_dec_rlist(status, key, true, &l, NULL, err);

	if (rc == 0) {
		rc = sx_rlist_to_resources(&l, out, err);
		if (rc < 0)
			sx_error_prefix(err, key);
	}
	sx_rlist_clear(&l);
	return rc;
}

static int decode_image(const cJSON *j, struct sx_image *img, struct sx_error *err)
{
	const cJSON *arr, *it;
	uint32_t n, i = 0;
	int rc;

	if (!cJSON_IsObject(j))
		return not_object(err, j);
	rc = sx_dec_int64(j, "sizeBytes", 0, INT64_MAX, &img->size_bytes, NULL, err);
	if (rc == 0)
		rc = sx_dec_array(j, "names", &arr, &n, err);
	if (rc < 0 || !arr)
		return rc;
	img->names = sx_calloc(n, sizeof(*img->names));
	if (!img->names)
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsString(it) || !it->valuestring) {
			rc = sx_error_set(err, SX_EINVAL, "expected string, got %s",
					  sx_dec_type_name(it));
		} else if (strlen(it->valuestring) > SX_DECODE_MAX_STRING) {
			rc = sx_error_set(err, SX_ETOOBIG, "string longer than %d bytes",
					  SX_DECODE_MAX_STRING);
		} else {
			img->names[i] = sx_normalized_image(it->valuestring,
							    strlen(it->valuestring));
			if (img->names[i] == SX_STR_INVALID) {
				img->names[i] = SX_STR_EMPTY;
				rc = sx_error_set(err, SX_ETOOBIG, "string table full");
			}
		}
		if (rc < 0) {
			sx_error_prefixf(err, "[%u]", i);
			sx_error_prefix(err, "names");
			return rc;
		}
		img->nnames = ++i;
	}
	return 0;
}

static int decode_images(const cJSON *status, struct sx_node *node, struct sx_error *err)
{
	const cJSON *arr, *it;
	uint32_t i = 0;
	int rc = sx_dec_array(status, "images", &arr, &node->nimages, err);

	if (rc < 0 || !arr)
		return rc;
	node->images = sx_calloc(node->nimages, sizeof(*node->images));
	if (!node->images) {
		node->nimages = 0;
		return oom(err);
	}
	cJSON_ArrayForEach(it, arr) {
		rc = decode_image(it, &node->images[i], err);
		if (rc < 0) {
			sx_error_prefixf(err, "[%u]", i);
			sx_error_prefix(err, "images");
			return rc;
		}
		i++;
	}
	return 0;
}

static int decode_conditions(const cJSON *status, struct sx_node *node, struct sx_error *err)
{
	const cJSON *arr, *it;
	uint32_t i = 0;
	int rc = sx_dec_array(status, "conditions", &arr, &node->nconditions, err);

	if (rc < 0 || !arr)
		return rc;
	node->conditions = sx_calloc(node->nconditions, sizeof(*node->conditions));
	if (!node->conditions) {
		node->nconditions = 0;
		return oom(err);
	}
	cJSON_ArrayForEach(it, arr) {
		struct sx_node_condition *c = &node->conditions[i];

		rc = cJSON_IsObject(it) ? sx_dec_intern(it, "type", &c->type, err)
					: not_object(err, it);
		if (rc == 0)
			rc = sx_dec_intern(it, "status", &c->status, err);
		if (rc < 0) {
			sx_error_prefixf(err, "[%u]", i);
			sx_error_prefix(err, "conditions");
			return rc;
		}
		i++;
	}
	return 0;
}

static int decode_status(const cJSON *status, struct sx_node *node, struct sx_error *err)
{
	int rc = decode_resource_field(status, "allocatable", &node->allocatable, err);

	if (rc == 0)
		rc = decode_resource_field(status, "capacity", &node->capacity, err);
	if (rc == 0)
		rc = decode_images(status, node, err);
	if (rc == 0)
		rc = decode_conditions(status, node, err);
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
	if (!cJSON_IsObject(json)) {
		not_object(err, json);
		return NULL;
	}
	node = sx_calloc(1, sizeof(*node));
	if (!node) {
		oom(err);
		return NULL;
	}
	atomic_init(&node->refcount, 1);
	rc = sx_dec_meta(json, &node->meta, err);
	if (rc == 0) {
		node->name_id = sx_intern(node->meta.name);
		if (node->name_id == SX_STR_INVALID) {
			node->name_id = SX_STR_EMPTY;
			rc = sx_error_set(err, SX_ETOOBIG, "string table full");
			sx_error_prefix(err, "metadata.name");
		}
	}
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
