/* v1.NodeAffinity documents (node-selector terms: matchExpressions and
 * matchFields, required and preferred), JSON or YAML bytes. Invariants:
 * decode -> encode -> decode gives the same encoding and the same verdicts
 * on a fixed set of nodes. */
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "fuzz.h"
#include "schedext/decode.h"
#include "schedext/selector.h"

static struct sx_node *nodes[3];

static void setup_nodes(void)
{
	static const char *json[3] = {
		"{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"a\",\"gpu\":\"4\"}}}",
		/* one element, split over two lines */
		("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"zone\":\"b\",\"gpu\":\"-1\","
		 "\"x\":\"\"}}}"),
		"{\"metadata\":{\"name\":\"node-3\"}}",
	};
	struct sx_error err = {0};

	for (int i = 0; i < 3; i++) {
		cJSON *j = cJSON_Parse(json[i]);

		nodes[i] = sx_decode_node(j, &err);
		FUZZ_CHECK(nodes[i] != NULL, "%s", err.msg);
		cJSON_Delete(j);
	}
}

static unsigned verdicts(const struct sx_node_affinity *na)
{
	unsigned v = 0, bit = 0;

	for (int i = 0; i < 3; i++) {
		if (na->required)
			v |= (unsigned)sx_node_selector_matches(na->required, nodes[i]) << bit;
		bit++;
		for (uint32_t p = 0; p < na->npreferred && p < 8; p++)
			v |= (unsigned)sx_node_selector_term_matches(&na->preferred[p].preference,
								     nodes[i])
			     << (bit + p);
		bit += 8;
	}
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_node_affinity *na, *na2;
	cJSON *docs, *again;
	char *text, *text2;

	fuzz_init();
	if (!nodes[0])
		setup_nodes();
	docs = sx_parse_documents((const char *)data, size, &err);
	if (!docs)
		return 0;
	na = sx_decode_node_affinity(cJSON_GetArrayItem(docs, 0), &err);
	cJSON_Delete(docs);
	if (!na)
		return 0;
	text = fuzz_print(fuzz_encode_node_affinity(na));
	again = cJSON_Parse(text);
	na2 = sx_decode_node_affinity(again, &err);
	FUZZ_CHECK(na2 != NULL, "re-decode of %s: %s: %s", text, err.path, err.msg);
	cJSON_Delete(again);
	text2 = fuzz_print(fuzz_encode_node_affinity(na2));
	FUZZ_CHECK(strcmp(text, text2) == 0, "%s != %s", text, text2);
	FUZZ_CHECK(verdicts(na) == verdicts(na2), "verdicts differ for %s", text);
	free(text);
	free(text2);
	sx_node_affinity_free(na);
	sx_node_affinity_free(na2);
	return 0;
}
