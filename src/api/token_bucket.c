/* Client-side QPS/burst limiter (client-go flowcontrol's token bucket
 * with reservation semantics), shared by every thread of one client. */
#include <pthread.h>

#include "schedext/kube.h"

void sx_token_bucket_init(struct sx_token_bucket *tb, double qps, int burst, uint64_t now_ns)
{
	tb->rate = qps > 0 ? qps : 50;
	tb->burst = burst > 0 ? burst : 100;
	tb->tokens = tb->burst;
	tb->last_ns = now_ns;
	pthread_mutex_init(&tb->mu, NULL);
}

uint64_t sx_token_bucket_reserve(struct sx_token_bucket *tb, uint64_t now_ns)
{
	uint64_t wait = 0;

	pthread_mutex_lock(&tb->mu);
	if (now_ns > tb->last_ns) {
		tb->tokens += (double)(now_ns - tb->last_ns) * 1e-9 * tb->rate;
		if (tb->tokens > tb->burst)
			tb->tokens = tb->burst;
		tb->last_ns = now_ns;
	}
	/* Reservation semantics: the token is taken now, possibly driving the
	 * balance negative; the caller sleeps until it would have been there. */
	tb->tokens -= 1.0;
	if (tb->tokens < 0)
		wait = (uint64_t)(-tb->tokens / tb->rate * 1e9 + 0.5);
	pthread_mutex_unlock(&tb->mu);
	return wait;
}
