/* Lease-based leader election (coordination.k8s.io/v1), client-go's
 * algorithm as kube-scheduler uses it (tools/leaderelection/leaderelection.go).
 *
 * Validity is judged by our own monotonic clock since the lease record was
 * last seen to change, never by comparing renewTime with our clock.
 * sx_leader_is_leader() turns false as soon as the renew deadline passed
 * without a successful renewal, even while a lease request still hangs.
 *
 * Threads: one election thread per sx_leader; the other functions may be
 * called from any thread. Callbacks run on the election thread.
 */
#ifndef SCHEDEXT_LEADER_H
#define SCHEDEXT_LEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "schedext/common.h"

struct sx_kube;
struct sx_leader;

struct sx_leader_opts {
	struct sx_kube *kube;	       /* a client for lease traffic only (borrowed) */
	const char *ns;		       /* default "kube-system" */
	const char *name;	       /* default "schedext" */
	const char *identity;	       /* NULL: sx_leader_identity() */
	double lease_duration_s;       /* default 15 */
	double renew_deadline_s;       /* default 10 */
	double retry_period_s;	       /* default 2 */
	void (*on_started)(void *ctx); /* became leader */
	void (*on_stopped)(void *ctx); /* lost the lease (not called by stop) */
	void *ctx;
};

/* Checks leaseDuration > renewDeadline > 1.2 × retryPeriod and starts the
 * election thread. NULL with err on failure. */
struct sx_leader *sx_leader_start(const struct sx_leader_opts *opts, struct sx_error *err);
/* True while we hold a lease renewed within the renew deadline. */
bool sx_leader_is_leader(struct sx_leader *l);
/* Our holderIdentity. */
const char *sx_leader_holder(const struct sx_leader *l);
/* Stops the thread and, when leading, releases the lease (holderIdentity
 * "", leaseDurationSeconds 1, as client-go's ReleaseOnCancel). Accepts NULL. */
void sx_leader_stop(struct sx_leader *l);

/* "<hostname>_<random UUID v4>" into buf. */
void sx_leader_identity(char *buf, size_t len);

/* Parses a Go duration ("15s", "1m30s", "500ms", "1.5h"; units ns, us,
 * ms, s, m, h) or plain seconds ("15"). Returns 0 or SX_EINVAL. */
int sx_parse_duration(const char *s, double *out_s);
/* Go's time.Duration String() of s seconds (>= 0, rounded to the
 * nanosecond): "0s", "500ms", "1.5s", "1m30s", "1h0m0s". */
void sx_format_duration(double s, char *buf, size_t len);

#endif /* SCHEDEXT_LEADER_H */
