/* metav1.LabelSelector documents (JSON or YAML bytes, as in a pod's
 * affinity terms or a PDB). Invariants: decode -> encode -> decode gives
 * the same selector (same encoding, same verdict on a fixed set of label
 * sets); matching never crashes. */
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "fuzz.h"
#include "schedext/decode.h"
#include "schedext/selector.h"

static struct sx_label sets[3][3];
static struct sx_labels label_sets[4];

static int by_key(const void *a, const void *b)
{
	const struct sx_label *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static void setup_labels(void)
{
	static const char *kv[3][3][2] = {
		{{"app", "web"}, {"tier", "1"}, {"zone", "a"}},
		{{"app", "db"}, {"tier", "20"}, {"x", ""}},
		{{"a", "b"}, {"app", "web"}, {"k8s.io/name", "n"}},
	};

	for (int s = 0; s < 3; s++) {
		for (int i = 0; i < 3; i++) {
			sets[s][i].key = sx_intern(kv[s][i][0]);
			sets[s][i].value = sx_intern(kv[s][i][1]);
		}
		qsort(sets[s], 3, sizeof(sets[s][0]), by_key); /* sx_labels_get bisects */
		label_sets[s].n = 3;
		label_sets[s].items = sets[s];
	}
}

static unsigned verdicts(const struct sx_label_selector *sel)
{
	unsigned v = 0;

	for (int s = 0; s < 4; s++)
		v |= (unsigned)sx_selector_matches(sel, &label_sets[s]) << s;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_label_selector *sel, *sel2;
	cJSON *docs, *again;
	char *text, *text2;

	fuzz_init();
	if (!label_sets[0].items)
		setup_labels();
	docs = sx_parse_documents((const char *)data, size, &err);
	if (!docs)
		return 0;
	sel = sx_decode_label_selector(cJSON_GetArrayItem(docs, 0), &err);
	cJSON_Delete(docs);
	if (!sel)
		return 0;
	text = fuzz_print(fuzz_encode_label_selector(sel));
	again = cJSON_Parse(text);
	sel2 = sx_decode_label_selector(again, &err);
	FUZZ_CHECK(sel2 != NULL, "re-decode of %s: %s: %s", text, err.path, err.msg);
	cJSON_Delete(again);
	text2 = fuzz_print(fuzz_encode_label_selector(sel2));
	FUZZ_CHECK(strcmp(text, text2) == 0, "%s != %s", text, text2);
	FUZZ_CHECK(verdicts(sel) == verdicts(sel2), "verdicts differ for %s", text);
	free(text);
	free(text2);
	sx_label_selector_free(sel);
	sx_label_selector_free(sel2);
	return 0;
}
