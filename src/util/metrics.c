/* Prometheus registry (see metrics.h). */
#include "schedext/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/common.h"

struct series {
	struct series *next;
	char *labels;	/* "" when none */
	double value;	/* counter / gauge */
	uint64_t count; /* histogram */
	double sum;
	uint64_t *buckets; /* [nbuckets] cumulative at render time */
};

/* A family; its address is the handle callers keep (struct sx_metric). */
struct sx_metric {
	struct sx_metric *next;
	struct sx_metrics *reg; /* its registry: the lock, the series bound */
	char *name;
	char *help;
	enum sx_metric_type type;
	unsigned nbuckets;
	double bounds[SX_METRICS_MAX_BUCKETS];
	struct series *head, **tail;
};

struct sx_metrics {
	pthread_mutex_t lock;
	struct sx_metric *head, **tail;
	unsigned nseries;
};

struct sx_metrics *sx_metrics_new(void)
{
	struct sx_metrics *m = sx_calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->tail = &m->head;
	return m;
}

static void family_free(struct sx_metric *f)
{
	struct series *s, *next;

	for (s = f->head; s; s = next) {
		next = s->next;
		free(s->labels);
		free(s->buckets);
		free(s);
	}
	free(f->name);
	free(f->help);
	free(f);
}

void sx_metrics_free(struct sx_metrics *m)
{
	struct sx_metric *f, *next;

	if (!m)
		return;
	for (f = m->head; f; f = next) {
		next = f->next;
		family_free(f);
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Caller holds the lock. */
static struct sx_metric *find_family(struct sx_metrics *m, const char *name)
{
	struct sx_metric *f;

	for (f = m->head; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* Defines name; *out is the new family, or the existing one (rc
 * SX_EEXIST). */
static int define(struct sx_metrics *m, const char *name, enum sx_metric_type type,
		  const char *help, const double *buckets, unsigned nbuckets,
		  struct sx_metric **out)
{
	struct sx_metric *f;
	int rc = 0;

	*out = NULL;
	if (nbuckets > SX_METRICS_MAX_BUCKETS || (type == SX_METRIC_HISTOGRAM && !buckets))
		return SX_EINVAL;
	pthread_mutex_lock(&m->lock);
	if ((*out = find_family(m, name))) {
		rc = SX_EEXIST;
		goto out;
	}
	f = sx_calloc(1, sizeof(*f));
	if (!f || !(f->name = sx_strdup(name)) || !(f->help = sx_strdup(help ? help : ""))) {
		if (f)
			family_free(f);
		rc = SX_ENOMEM;
		goto out;
	}
	f->reg = m;
	f->type = type;
	f->nbuckets = type == SX_METRIC_HISTOGRAM ? nbuckets : 0;
	if (f->nbuckets)
		memcpy(f->bounds, buckets, nbuckets * sizeof(double));
	f->tail = &f->head;
	*m->tail = f;
	m->tail = &f->next;
	*out = f;
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* component-base's help of a KubeOpts metric (opts.go markDeprecated,
 * then annotateStabilityLevel); malloc'd, NULL on a bad level or out of
 * memory. */
static char *kube_help(enum sx_metric_stability stability, const char *deprecated, const char *help)
{
	static const char *const levels[] = {"", "[ALPHA] ", "[BETA] ", "[STABLE] "};
	size_t len;
	char *text;

	if ((unsigned)stability >= SX_ARRAY_SIZE(levels))
		return NULL;
	help = help ? help : "";
	len = strlen(levels[stability]) + strlen(help) + (deprecated ? strlen(deprecated) + 20 : 0);
	text = malloc(len + 1);
	if (text)
		snprintf(text, len + 1, "%s%s%s%s%s", levels[stability],
			 deprecated ? "(Deprecated since " : "", deprecated ? deprecated : "",
			 deprecated ? ") " : "", help);
	return text;
}

int sx_metrics_define_kube(struct sx_metrics *m, const char *name, enum sx_metric_type type,
			   enum sx_metric_stability stability, const char *deprecated,
			   const char *help, const double *buckets, unsigned nbuckets)
{
	char *text = kube_help(stability, deprecated, help);
	int rc;

	if (!text)
		return (unsigned)stability > SX_STABILITY_STABLE ? SX_EINVAL : SX_ENOMEM;
	rc = sx_metrics_define(m, name, type, text, buckets, nbuckets);
	free(text);
	return rc;
}

struct sx_metric *sx_metrics_family_kube(struct sx_metrics *m, const char *name,
					 enum sx_metric_type type,
					 enum sx_metric_stability stability, const char *deprecated,
					 const char *help, const double *buckets, unsigned nbuckets)
{
	char *text = kube_help(stability, deprecated, help);
	struct sx_metric *f =
		text ? sx_metrics_family(m, name, type, text, buckets, nbuckets) : NULL;

	free(text);
	return f;
}

int sx_metrics_define(struct sx_metrics *m, const char *name, enum sx_metric_type type,
		      const char *help, const double *buckets, unsigned nbuckets)
{
	struct sx_metric *f;

	return define(m, name, type, help, buckets, nbuckets, &f);
}

struct sx_metric *sx_metrics_family(struct sx_metrics *m, const char *name,
				    enum sx_metric_type type, const char *help,
				    const double *buckets, unsigned nbuckets)
{
	struct sx_metric *f;
	int rc;

	if (!m)
		return NULL;
	rc = define(m, name, type, help, buckets, nbuckets, &f);
	return (rc == 0 || rc == SX_EEXIST) && f && f->type == type ? f : NULL;
}

struct sx_metric *sx_metrics_find(struct sx_metrics *m, const char *name)
{
	struct sx_metric *f;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	pthread_mutex_unlock(&m->lock);
	return f;
}

/* The series of f with these labels, created when `create`; NULL when the
 * registry is full or allocation fails. Caller holds the lock. */
static struct series *get_series(struct sx_metric *f, const char *labels, bool create)
{
	struct sx_metrics *m = f->reg;
	struct series *s;

	if (!labels)
		labels = "";
	for (s = f->head; s; s = s->next)
		if (strcmp(s->labels, labels) == 0)
			return s;
	if (!create || m->nseries >= SX_METRICS_MAX_SERIES)
		return NULL;
	s = sx_calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->labels = sx_strdup(labels);
	if (f->nbuckets)
		s->buckets = sx_calloc(f->nbuckets, sizeof(uint64_t));
	if (!s->labels || (f->nbuckets && !s->buckets)) {
		free(s->labels);
		free(s->buckets);
		free(s);
		return NULL;
	}
	*f->tail = s;
	f->tail = &s->next;
	m->nseries++;
	return s;
}

/* Applies one update of `type` under the registry's lock. */
static void update(struct sx_metric *f, const char *labels, enum sx_metric_type type, double v)
{
	struct series *s;
	unsigned i;

	/* A counter may also be set from a monotonic source (watch restarts). */
	if (!f || (f->type != type && !(type == SX_METRIC_GAUGE && f->type == SX_METRIC_COUNTER)))
		return;
	pthread_mutex_lock(&f->reg->lock);
	s = get_series(f, labels, true);
	if (!s)
		goto out;
	switch (type) {
	case SX_METRIC_COUNTER:
		s->value += v;
		break;
	case SX_METRIC_GAUGE:
		s->value = v;
		break;
	case SX_METRIC_HISTOGRAM:
		s->count++;
		s->sum += v;
		for (i = 0; i < f->nbuckets; i++)
			if (v <= f->bounds[i]) {
				s->buckets[i]++;
				break;
			}
		break;
	}
out:
	pthread_mutex_unlock(&f->reg->lock);
}

void sx_metric_touch(struct sx_metric *f, const char *labels)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->reg->lock);
	get_series(f, labels, true);
	pthread_mutex_unlock(&f->reg->lock);
}

void sx_metric_inc(struct sx_metric *f, const char *labels, uint64_t v)
{
	update(f, labels, SX_METRIC_COUNTER, (double)v);
}

void sx_metric_set(struct sx_metric *f, const char *labels, double v)
{
	update(f, labels, SX_METRIC_GAUGE, v);
}

void sx_metric_observe(struct sx_metric *f, const char *labels, double v)
{
	if (isnan(v))
		return;
	update(f, labels, SX_METRIC_HISTOGRAM, v);
}

void sx_metric_set_histogram(struct sx_metric *f, const char *labels, const uint64_t *buckets,
			     unsigned nbuckets, uint64_t count, double sum)
{
	struct series *s;

	if (!f || f->type != SX_METRIC_HISTOGRAM || f->nbuckets != nbuckets)
		return;
	pthread_mutex_lock(&f->reg->lock);
	s = get_series(f, labels, true);
	if (s) {
		memcpy(s->buckets, buckets, nbuckets * sizeof(*buckets));
		s->count = count;
		s->sum = sum;
	}
	pthread_mutex_unlock(&f->reg->lock);
}

double sx_metric_value(struct sx_metric *f, const char *labels)
{
	struct series *s;
	double v = 0;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->reg->lock);
	s = get_series(f, labels, false);
	if (s)
		v = f->type == SX_METRIC_HISTOGRAM ? (double)s->count : s->value;
	pthread_mutex_unlock(&f->reg->lock);
	return v;
}

/* ---------- by name (tests, and callers that update a family once) ---------- */

void sx_metrics_touch(struct sx_metrics *m, const char *name, const char *labels)
{
	sx_metric_touch(sx_metrics_find(m, name), labels);
}

void sx_metrics_inc(struct sx_metrics *m, const char *name, const char *labels, uint64_t v)
{
	sx_metric_inc(sx_metrics_find(m, name), labels, v);
}

void sx_metrics_set(struct sx_metrics *m, const char *name, const char *labels, double v)
{
	sx_metric_set(sx_metrics_find(m, name), labels, v);
}

void sx_metrics_set_histogram(struct sx_metrics *m, const char *name, const char *labels,
			      const uint64_t *buckets, unsigned nbuckets, uint64_t count,
			      double sum)
{
	sx_metric_set_histogram(sx_metrics_find(m, name), labels, buckets, nbuckets, count, sum);
}

void sx_metrics_observe(struct sx_metrics *m, const char *name, const char *labels, double v)
{
	sx_metric_observe(sx_metrics_find(m, name), labels, v);
}

double sx_metrics_value(struct sx_metrics *m, const char *name, const char *labels)
{
	return sx_metric_value(sx_metrics_find(m, name), labels);
}

static const char *type_name(enum sx_metric_type t)
{
	return t == SX_METRIC_COUNTER ? "counter" : t == SX_METRIC_GAUGE ? "gauge" : "histogram";
}

/* Prometheus float: integers without a fraction, +Inf spelled out. */
static void put_number(struct sx_buf *out, double v)
{
	if (isinf(v))
		sx_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9e15)
		sx_buf_int(out, (int64_t)v);
	else
		sx_buf_printf(out, "%.9g", v);
}

/* name{labels[,extra]} */
static void put_name(struct sx_buf *out, const char *name, const char *suffix, const char *labels,
		     const char *extra)
{
	bool has = labels && labels[0];

	sx_buf_puts(out, name);
	sx_buf_puts(out, suffix);
	if (!has && !extra)
		return;
	sx_buf_putc(out, '{');
	if (has)
		sx_buf_puts(out, labels);
	if (has && extra)
		sx_buf_putc(out, ',');
	if (extra)
		sx_buf_puts(out, extra);
	sx_buf_putc(out, '}');
}

static void render_histogram(struct sx_buf *out, const struct sx_metric *f, const struct series *s)
{
	char le[64];
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i < f->nbuckets; i++) {
		cum += s->buckets[i];
		snprintf(le, sizeof(le), "le=\"%.9g\"", f->bounds[i]);
		put_name(out, f->name, "_bucket", s->labels, le);
		sx_buf_putc(out, ' ');
		sx_buf_int(out, (int64_t)cum);
		sx_buf_putc(out, '\n');
	}
	put_name(out, f->name, "_bucket", s->labels, "le=\"+Inf\"");
	sx_buf_printf(out, " %llu\n", (unsigned long long)s->count);
	put_name(out, f->name, "_sum", s->labels, NULL);
	sx_buf_putc(out, ' ');
	put_number(out, s->sum);
	sx_buf_putc(out, '\n');
	put_name(out, f->name, "_count", s->labels, NULL);
	sx_buf_printf(out, " %llu\n", (unsigned long long)s->count);
}

void sx_metrics_render(struct sx_metrics *m, struct sx_buf *out)
{
	const struct sx_metric *f;
	const struct series *s;

	pthread_mutex_lock(&m->lock);
	for (f = m->head; f; f = f->next) {
		sx_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
			      type_name(f->type));
		for (s = f->head; s; s = s->next) {
			if (f->type == SX_METRIC_HISTOGRAM) {
				render_histogram(out, f, s);
				continue;
			}
			put_name(out, f->name, "", s->labels, NULL);
			sx_buf_putc(out, ' ');
			put_number(out, s->value);
			sx_buf_putc(out, '\n');
		}
	}
	pthread_mutex_unlock(&m->lock);
}

const char *sx_metrics_label_escape(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; s && *s && o + 2 < len; s++) {
		if (*s == '\\' || *s == '"') {
			buf[o++] = '\\';
			buf[o++] = *s;
		} else if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}
