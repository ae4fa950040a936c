/* Placing pods one after another with assume, and the what-if report
 * (include/schedext/whatif.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/intern.h"
#include "schedext/whatif.h"

#define TEXT_NAMES_PER_GROUP 10

void sx_placements_free(struct sx_placements *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->v[i].pod);
		free(p->v[i].message);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* One cycle for key ("ns/name") on the cache's current state; on success
 * the pod is assumed on the chosen node. */
static int place_one(struct sx_cache *cache, const struct sx_cycle_opts *base,
		     const struct sx_profile *prof, const char *key, struct sx_placement *out)
{
	const char *slash = strchr(key, '/');
	sx_str ns = sx_intern_n(key, (size_t)(slash - key)), node = SX_STR_EMPTY;
	bool assumed = false;
	const struct sx_pod *pod = sx_cache_get_pod(cache, ns, slash + 1, &node, &assumed);
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct sx_cycle_opts opts = *base;
	struct sx_cycle_result res;
	char msg[2048];
	int rc = 0;

	out->node = SX_STR_EMPTY;
	if (!(out->pod = strdup(key)) || !snap || !pod) {
		sx_pod_unref(pod);
		sx_snapshot_unref(snap);
		return SX_ENOMEM;
	}
	opts.snap = snap;
	rc = sx_schedule(prof, pod, &opts, &res);
	if (rc == 0 && res.selected >= 0) {
		out->node = snap->nodes[res.selected]->name;
		rc = sx_cache_assume(cache, pod, out->node);
	} else if (rc == 0) {
		const char *m = res.message ? res.message
			      : res.error   ? sx_status_message(res.error, msg, sizeof(msg))
					    : "no node fits";
		out->message = strdup(m);
		rc = out->message ? 0 : SX_ENOMEM;
	}
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	return rc;
}

int sx_place_pods(struct sx_cache *cache, const struct sx_config *cfg,
		  const struct sx_profile *prof, struct sx_pool *pool, char *const *pods, uint32_t n,
		  double deadline, struct sx_placements *out)
{
	uint32_t next_start = 0;
	uint64_t rng = 0x5eed;
	struct sx_cycle_opts base = {
		.mode = SX_CYCLE_FULL, .percentage = -1,
		.global_percentage = cfg->percentage_of_nodes_to_score,
		.next_start_index = &next_start, .rng = &rng, .pool = pool,
	};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v)
		return SX_ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		if (deadline && sx_now_s() >= deadline) {
			out->not_evaluated = n - i;
			break;
		}
		rc = place_one(cache, &base, prof, pods[i], &out->v[i]);
		out->n = i + 1;
		out->placed += out->v[i].node != SX_STR_EMPTY;
	}
	return rc;
}

/* ---------- report ---------- */

struct count {
	const char *key;
	uint32_t n;
	uint32_t first; /* first placement with this key */
};

static int cmp_key_then_first(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

/* Distinct node names (placed) or messages (not placed) with counts,
 * sorted by key. Caller frees; *n set. NULL only when out of memory. */
static struct count *tally(const struct sx_placements *p, bool placed, uint32_t *n)
{
	struct count *c = calloc(p->n + 1, sizeof(*c));
	uint32_t m = 0;

	*n = 0;
	for (uint32_t i = 0; c && i < p->n; i++) {
		const struct sx_placement *x = &p->v[i];
		if ((x->node != SX_STR_EMPTY) == placed)
			c[m++] = (struct count){ placed ? sx_str_get(x->node) : x->message, 1, i };
	}
	if (!c)
		return NULL;
	qsort(c, m, sizeof(*c), cmp_key_then_first);
	for (uint32_t i = 0; i < m; i++) {
		if (*n && strcmp(c[*n - 1].key, c[i].key) == 0)
			c[*n - 1].n++;
		else
			c[(*n)++] = c[i];
	}
	return c;
}

static void write_json(struct sx_buf *b, const struct sx_placements *p, const char *summary)
{
	uint32_t nn = 0;
	struct count *by_node = tally(p, true, &nn);

	sx_buf_puts(b, "{\"summary\":");
	sx_json_str(b, summary ? summary : "");
	sx_buf_printf(b, ",\"pods\":%u,\"placed\":%u,\"unschedulable\":%u,",
		      p->n + p->not_evaluated, p->placed, p->n - p->placed);
	if (p->not_evaluated)
		sx_buf_printf(b, "\"notEvaluated\":%u,", p->not_evaluated);
	sx_buf_puts(b, "\"byNode\":{");
	for (uint32_t i = 0; by_node && i < nn; i++) {
		if (i)
			sx_buf_putc(b, ',');
		sx_json_key(b, by_node[i].key);
		sx_buf_printf(b, "%u", by_node[i].n);
	}
	sx_buf_puts(b, "},\"placements\":[");
	for (uint32_t i = 0; i < p->n; i++) {
		const struct sx_placement *x = &p->v[i];
		sx_buf_puts(b, i ? ",{\"pod\":" : "{\"pod\":");
		sx_json_str(b, x->pod);
		sx_buf_puts(b, ",\"node\":");
		if (x->node != SX_STR_EMPTY)
			sx_json_str(b, sx_str_get(x->node));
		else
			sx_buf_puts(b, "null");
		sx_buf_puts(b, ",\"message\":");
		if (x->message)
			sx_json_str(b, x->message);
		else
			sx_buf_puts(b, "null");
		sx_buf_putc(b, '}');
	}
	sx_buf_puts(b, "]}\n");
	if (!by_node)
		b->failed = true;
	free(by_node);
}

/* The pods of one "did not fit" group, at most TEXT_NAMES_PER_GROUP. */
static void write_group_names(struct sx_buf *b, const struct sx_placements *p, const char *msg,
			      uint32_t total)
{
	uint32_t shown = 0;
	sx_buf_puts(b, "    ");
	for (uint32_t i = 0; i < p->n && shown < TEXT_NAMES_PER_GROUP; i++) {
		if (p->v[i].node != SX_STR_EMPTY || strcmp(p->v[i].message, msg) != 0)
			continue;
		sx_buf_puts(b, shown++ ? ", " : "");
		sx_buf_puts(b, p->v[i].pod);
	}
	if (total > shown)
		sx_buf_printf(b, " and %u more", total - shown);
	sx_buf_putc(b, '\n');
}

static void write_text(struct sx_buf *b, const struct sx_placements *p, const char *summary)
{
	uint32_t nn = 0, nm = 0;
	struct count *by_node = tally(p, true, &nn);
	struct count *by_msg = tally(p, false, &nm);

	sx_buf_printf(b, "What if: %s\n", summary && *summary ? summary : "no change");
	sx_buf_printf(b, "Placed %u of %u pod(s).\n", p->placed, p->n + p->not_evaluated);
	if (p->not_evaluated)
		sx_buf_printf(b, "%u pod(s) not evaluated within the time budget.\n",
			      p->not_evaluated);
	if (nn)
		sx_buf_printf(b, "\n%-40s %s\n", "NODE", "PODS");
	for (uint32_t i = 0; by_node && i < nn; i++)
		sx_buf_printf(b, "%-40s %u\n", by_node[i].key, by_node[i].n);
	if (nm)
		sx_buf_printf(b, "\nDid not fit: %u pod(s)\n", p->n - p->placed);
	for (uint32_t i = 0; by_msg && i < nm; i++) {
		sx_buf_printf(b, "  %u pod(s): %s\n", by_msg[i].n, by_msg[i].key);
		write_group_names(b, p, by_msg[i].key, by_msg[i].n);
	}
	if (!by_node || !by_msg)
		b->failed = true;
	free(by_node);
	free(by_msg);
}

void sx_placements_write(struct sx_buf *b, const struct sx_placements *p, const char *summary,
			 bool text)
{
	if (text)
		write_text(b, p, summary);
	else
		write_json(b, p, summary);
}
