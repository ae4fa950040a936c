/* Reused large buffers (bufpool.h). Allocations are freed outside the
 * lock; the lock only guards the table of kept buffers. */
#include "schedext/bufpool.h"

#include <stdlib.h>
#include <string.h>

int sx_bufpool_init(struct sx_bufpool *p, unsigned slots, size_t budget)
{
	memset(p, 0, sizeof(*p));
	p->slots = slots < 1 ? 1 : slots > SX_BUFPOOL_MAX_SLOTS ? SX_BUFPOOL_MAX_SLOTS : slots;
	p->budget = budget;
	return pthread_mutex_init(&p->mu, NULL) ? -1 : 0;
}

void sx_bufpool_destroy(struct sx_bufpool *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->data[i]);
	p->n = 0;
	p->kept = 0;
	pthread_mutex_destroy(&p->mu);
}

/* Removes entry i (the last one takes its place); the lock is held. */
static char *unkeep(struct sx_bufpool *p, unsigned i, size_t *cap)
{
	char *d = p->data[i];

	*cap = p->cap[i];
	p->kept -= p->cap[i];
	p->n--;
	p->data[i] = p->data[p->n];
	p->cap[i] = p->cap[p->n];
	return d;
}

/* Index of the smallest kept buffer of at least `need` bytes (need 0:
 * the smallest of all), or -1. The lock is held. */
static int smallest_fit(const struct sx_bufpool *p, size_t need)
{
	int best = -1;

	for (unsigned i = 0; i < p->n; i++)
		if (p->cap[i] >= need && (best < 0 || p->cap[i] < p->cap[best]))
			best = (int)i;
	return best;
}

void sx_bufpool_take(struct sx_bufpool *p, struct sx_buf *b, size_t need)
{
	char *d = NULL;
	size_t cap = need;
	int i;

	pthread_mutex_lock(&p->mu);
	i = smallest_fit(p, need);
	if (i >= 0)
		d = unkeep(p, (unsigned)i, &cap);
	pthread_mutex_unlock(&p->mu);
	if (!d && !(d = malloc(cap)))
		return;
	sx_buf_free(b);
	d[0] = '\0';
	b->data = d;
	b->cap = cap;
}

void sx_bufpool_give(struct sx_bufpool *p, char *data, size_t cap)
{
	char *drop = data;
	size_t dropped;
	int i;

	if (!data)
		return;
	pthread_mutex_lock(&p->mu);
	if (cap <= p->budget) {
		/* Full: a larger buffer displaces the smallest kept one. */
		if (p->n == p->slots || p->kept + cap > p->budget) {
			i = smallest_fit(p, 0);
			if (i >= 0 && p->cap[i] < cap && p->kept - p->cap[i] + cap <= p->budget)
				drop = unkeep(p, (unsigned)i, &dropped);
		}
		if (drop != data || (p->n < p->slots && p->kept + cap <= p->budget)) {
			p->data[p->n] = data;
			p->cap[p->n] = cap;
			p->n++;
			p->kept += cap;
			if (drop == data)
				drop = NULL;
		}
	}
	pthread_mutex_unlock(&p->mu);
	free(drop);
}

void sx_bufpool_give_buf(struct sx_bufpool *p, struct sx_buf *b)
{
	sx_bufpool_give(p, b->data, b->cap);
	sx_buf_init(b);
}
