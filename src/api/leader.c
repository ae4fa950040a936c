/* Lease-based leader election (upstream client-go tools/leaderelection/
 * leaderelection.go, LeaderElector.tryAcquireOrRenew): acquire by
 * retrying every retryPeriod with jitter; renew every retryPeriod; give up
 * after renewDeadline without success; release on clean shutdown. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedext/kube.h"
#include "schedext/leader.h"

struct sx_leader {
	struct sx_leader_opts o;
	char ns[254], name[254], id[250];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool stop; /* under mu */
	atomic_bool leading;
	atomic_uint_least64_t last_renew_ns; /* monotonic time of the last success */
	uint64_t deadline_ns;		     /* renew deadline */
	/* election-thread state */
	struct sx_lease record; /* last lease we wrote or read */
	bool have_record;
	struct sx_lease observed; /* spec as last seen to change */
	uint64_t observed_at_ns;
	unsigned rand_state;
};

void sx_leader_identity(char *buf, size_t len)
{
	unsigned char r[16] = {0};
	char host[256] = "schedext";
	FILE *f = fopen("/dev/urandom", "rb");

	if (!f || fread(r, 1, sizeof(r), f) != sizeof(r)) {
		uint64_t t = sx_now_ns() ^ (uint64_t)getpid() << 32;

		for (int i = 0; i < 16; i++)
			r[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)(i * 37);
	}
	if (f)
		fclose(f);
	gethostname(host, sizeof(host) - 1);
	r[6] = (r[6] & 0x0f) | 0x40; /* version 4 */
	r[8] = (r[8] & 0x3f) | 0x80; /* variant */
	snprintf(buf, len,
		 "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", host,
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
		 r[13], r[14], r[15]);
}

/* Seconds per unit of a Go duration suffix, or 0 when unknown. */
static double unit_seconds(const char *u, size_t n)
{
	static const struct {
		const char *name;
		double s;
	} units[] = {
		{"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"\xce\xbcs", 1e-6},
		{"ms", 1e-3}, {"s", 1},	    {"m", 60},		 {"h", 3600},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(units); i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
			return units[i].s;
	return 0;
}

/* "<whole>[.<frac>]<unit>" of v units of size unit (ns), the fraction
 * without trailing zeros, as Go prints. */
static int put_unit(char *buf, size_t len, uint64_t v, uint64_t unit, const char *name)
{
	char all[24], *frac;
	int digits = 0;

	for (uint64_t u = unit; u > 1 && digits < 9; u /= 10)
		digits++;
	snprintf(all, sizeof(all), "%09llu", (unsigned long long)(v % unit % 1000000000ull));
	frac = all + 9 - digits; /* unit <= 1e9: the last `digits` digits */
	for (int i = digits - 1; i >= 0 && frac[i] == '0'; i--)
		frac[i] = '\0';
	return snprintf(buf, len, "%llu%s%s%s", (unsigned long long)(v / unit), frac[0] ? "." : "",
			frac, name);
}

void sx_format_duration(double s, char *buf, size_t len)
{
	/* capped at 1e9 s (31 years) so that the nanoseconds fit 64 bits */
	uint64_t ns = s > 0 ? (uint64_t)llround((s < 1e9 ? s : 1e9) * 1e9) : 0;
	uint64_t h = ns / 3600000000000ull, m = ns / 60000000000ull % 60;
	int n = 0;

	if (ns == 0) {
		snprintf(buf, len, "0s");
	} else if (ns < 1000) {
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	} else if (ns < 1000000) {
		put_unit(buf, len, ns, 1000, "\u00b5s");
	} else if (ns < 1000000000) {
		put_unit(buf, len, ns, 1000000, "ms");
	} else {
		if (h)
			n = snprintf(buf, len, "%lluh", (unsigned long long)h);
		if ((h || m) && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, "%llum", (unsigned long long)m);
		if (n >= 0 && (size_t)n < len)
			put_unit(buf + n, len - (size_t)n, ns % 60000000000ull, 1000000000, "s");
	}
}

int sx_parse_duration(const char *s, double *out_s)
{
	double total = 0;
	char *end;

	if (!s || !*s || *s == '-')
		return SX_EINVAL;
	if (*s == '+')
		s++;
	if (strcmp(s, "0") == 0) {
		*out_s = 0;
		return 0;
	}
	while (*s) {
		const char *u;
		double v, mul;

		errno = 0;
		v = strtod(s, &end);
		if (errno || end == s || !isfinite(v) || v < 0)
			return SX_EINVAL;
		u = end;
		while (*end && (isalpha((unsigned char)*end) || (unsigned char)*end >= 0x80))
			end++;
		if (end == u) { /* plain seconds, the whole string */
			if (total != 0)
				return SX_EINVAL;
			*out_s = v;
			return 0;
		}
		mul = unit_seconds(u, (size_t)(end - u));
		if (mul == 0)
			return SX_EINVAL;
		total += v * mul;
		s = end;
	}
	*out_s = total;
	return 0;
}

static bool same_spec(const struct sx_lease *a, const struct sx_lease *b)
{
	return strcmp(a->holder, b->holder) == 0 && a->duration_s == b->duration_s &&
	       strcmp(a->acquire_time, b->acquire_time) == 0 &&
	       strcmp(a->renew_time, b->renew_time) == 0 && a->transitions == b->transitions;
}

static int32_t duration_field(const struct sx_leader *l)
{
	return (int32_t)ceil(l->o.lease_duration_s);
}

/* Stores a lease we just wrote successfully. */
static void wrote(struct sx_leader *l, const struct sx_lease *lease, uint64_t now)
{
	l->record = *lease;
	l->have_record = true;
	l->observed = *lease;
	l->observed_at_ns = now;
}

/* Renews the cached record without a GET while it is still valid. */
static bool fast_renew(struct sx_leader *l, uint64_t now)
{
	struct sx_lease lease;
	struct sx_error err = {0};
	uint64_t dur_ns = (uint64_t)(l->o.lease_duration_s * 1e9);

	if (!atomic_load(&l->leading) || !l->have_record || l->observed_at_ns + dur_ns <= now)
		return false;
	lease = l->record;
	sx_kube_micro_time(lease.renew_time);
	if (sx_kube_lease_update(l->o.kube, l->ns, l->name, &lease, &err) < 0)
		return false;
	wrote(l, &lease, now);
	return true;
}

static bool create_lease(struct sx_leader *l, uint64_t now)
{
	struct sx_lease lease = {0};
	struct sx_error err = {0};

	snprintf(lease.holder, sizeof(lease.holder), "%s", l->id);
	lease.duration_s = duration_field(l);
	sx_kube_micro_time(lease.acquire_time);
	memcpy(lease.renew_time, lease.acquire_time, sizeof(lease.renew_time));
	if (sx_kube_lease_create(l->o.kube, l->ns, l->name, &lease, &err) < 0) {
		sx_log(2, "leader election: create lease %s/%s: %s", l->ns, l->name, err.msg);
		return false;
	}
	wrote(l, &lease, now);
	return true;
}

/* One tryAcquireOrRenew. True when we hold the lease afterwards. */
static bool try_acquire_or_renew(struct sx_leader *l)
{
	uint64_t now = sx_now_ns();
	struct sx_lease cur;
	struct sx_error err = {0};
	int rc;

	if (fast_renew(l, now))
		return true;
	rc = sx_kube_lease_get(l->o.kube, l->ns, l->name, &cur, &err);
	if (rc == SX_ENOENT)
		return create_lease(l, now);
	if (rc < 0) {
		sx_log(2, "leader election: get lease %s/%s: %s", l->ns, l->name, err.msg);
		return false;
	}
	if (!same_spec(&cur, &l->observed)) {
		l->observed = cur;
		l->observed_at_ns = now;
	}
	if (cur.holder[0] && strcmp(cur.holder, l->id) != 0 &&
	    l->observed_at_ns + (uint64_t)cur.duration_s * 1000000000ull > now)
		return false; /* someone else holds a valid lease */
	if (strcmp(cur.holder, l->id) != 0) {
		sx_kube_micro_time(cur.acquire_time);
		cur.transitions++;
	}
	snprintf(cur.holder, sizeof(cur.holder), "%s", l->id);
	cur.duration_s = duration_field(l);
	sx_kube_micro_time(cur.renew_time);
	if (sx_kube_lease_update(l->o.kube, l->ns, l->name, &cur, &err) < 0) {
		sx_log(2, "leader election: update lease %s/%s: %s", l->ns, l->name, err.msg);
		return false;
	}
	wrote(l, &cur, now);
	return true;
}

bool sx_leader_is_leader(struct sx_leader *l)
{
	uint64_t last;

	if (!l || !atomic_load(&l->leading))
		return false;
	last = atomic_load(&l->last_renew_ns);
	return sx_now_ns() - last < l->deadline_ns;
}

const char *sx_leader_holder(const struct sx_leader *l)
{
	return l->id;
}

/* Sleeps up to s seconds; returns true when asked to stop. */
static bool sleep_or_stop(struct sx_leader *l, double s)
{
	struct timespec ts = sx_deadline_after_s(s);
	bool stop;

	pthread_mutex_lock(&l->mu);
	if (!l->stop)
		pthread_cond_timedwait(&l->cond, &l->mu, &ts);
	stop = l->stop;
	pthread_mutex_unlock(&l->mu);
	return stop;
}

static void step(struct sx_leader *l)
{
	bool ok = try_acquire_or_renew(l);
	uint64_t now = sx_now_ns();

	if (ok) {
		atomic_store(&l->last_renew_ns, now);
		if (!atomic_load(&l->leading)) {
			atomic_store(&l->leading, true);
			sx_log(1, "leader election: successfully acquired lease %s/%s as %s", l->ns,
			       l->name, l->id);
			if (l->o.on_started)
				l->o.on_started(l->o.ctx);
		}
	} else if (atomic_load(&l->leading) &&
		   now - atomic_load(&l->last_renew_ns) >= l->deadline_ns) {
		atomic_store(&l->leading, false);
		l->have_record = false;
		sx_log(0, "leader election: lost lease %s/%s (no renewal within %.1fs)", l->ns,
		       l->name, l->o.renew_deadline_s);
		if (l->o.on_stopped)
			l->o.on_stopped(l->o.ctx);
	}
}

static void *election_thread(void *arg)
{
	struct sx_leader *l = arg;

	for (;;) {
		double wait = l->o.retry_period_s;

		step(l);
		if (!atomic_load(&l->leading)) /* JitterUntil factor 1.2 */
			wait += l->o.retry_period_s * 1.2 *
				(rand_r(&l->rand_state) / (RAND_MAX + 1.0));
		if (sleep_or_stop(l, wait))
			break;
	}
	return NULL;
}

static int check_opts(struct sx_leader_opts *o, struct sx_error *err)
{
	if (!o->kube)
		return sx_error_set(err, SX_EINVAL, "leader election needs a cluster connection");
	if (o->lease_duration_s <= 0)
		o->lease_duration_s = 15;
	if (o->renew_deadline_s <= 0)
		o->renew_deadline_s = 10;
	if (o->retry_period_s <= 0)
		o->retry_period_s = 2;
	if (!(o->lease_duration_s > o->renew_deadline_s))
		return sx_error_set(err, SX_EINVAL,
				    "leaseDuration must be greater than renewDeadline");
	if (!(o->renew_deadline_s > 1.2 * o->retry_period_s))
		return sx_error_set(err, SX_EINVAL,
				    "renewDeadline must be greater than retryPeriod*JitterFactor");
	return 0;
}

struct sx_leader *sx_leader_start(const struct sx_leader_opts *opts, struct sx_error *err)
{
	struct sx_leader *l = calloc(1, sizeof(*l));

	if (!l) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	l->o = *opts;
	if (check_opts(&l->o, err) < 0) {
		free(l);
		return NULL;
	}
	snprintf(l->ns, sizeof(l->ns), "%s", opts->ns && *opts->ns ? opts->ns : "kube-system");
	snprintf(l->name, sizeof(l->name), "%s",
		 opts->name && *opts->name ? opts->name : "schedext");
	if (opts->identity)
		snprintf(l->id, sizeof(l->id), "%s", opts->identity);
	else
		sx_leader_identity(l->id, sizeof(l->id));
	l->deadline_ns = (uint64_t)(l->o.renew_deadline_s * 1e9);
	l->rand_state = (unsigned)(sx_now_ns() ^ (uint64_t)getpid());
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cond, NULL);
	/* client-go leaderelection.acquire's words, in its order: "attempting
	 * to acquire", then "successfully acquired" once it holds it; said
	 * before the thread starts, which may acquire at once. */
	sx_log(1, "leader election: attempting to acquire leader lease %s/%s as %s", l->ns, l->name,
	       l->id);
	if (pthread_create(&l->thread, NULL, election_thread, l) != 0) {
		sx_error_set(err, SX_ENOMEM, "cannot start the leader election thread");
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cond);
		free(l);
		return NULL;
	}
	return l;
}

/* ReleaseOnCancel: empty holder, 1-second duration; one retry after a
 * conflict when the fresh record still names us. */
static void release(struct sx_leader *l)
{
	struct sx_lease lease = l->record;
	struct sx_error err = {0};

	for (int attempt = 0; attempt < 2; attempt++) {
		lease.holder[0] = '\0';
		lease.duration_s = 1;
		sx_kube_micro_time(lease.acquire_time);
		memcpy(lease.renew_time, lease.acquire_time, sizeof(lease.renew_time));
		if (sx_kube_lease_update(l->o.kube, l->ns, l->name, &lease, &err) == 0) {
			sx_log(1, "leader election: released lease %s/%s", l->ns, l->name);
			return;
		}
		if (sx_kube_lease_get(l->o.kube, l->ns, l->name, &lease, &err) < 0 ||
		    strcmp(lease.holder, l->id) != 0)
			break;
	}
	sx_log(0, "leader election: release of %s/%s failed: %s", l->ns, l->name, err.msg);
}

void sx_leader_stop(struct sx_leader *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	if (atomic_load(&l->leading) && l->have_record) {
		atomic_store(&l->leading, false);
		release(l);
	}
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cond);
	free(l);
}
