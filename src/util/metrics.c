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

struct family {
	struct family *next;
	char *name;
	char *help;
	enum sx_metric_type type;
	unsigned nbuckets;
	double bounds[SX_METRICS_MAX_BUCKETS];
	struct series *head, **tail;
};

struct sx_metrics {
	pthread_mutex_t lock;
	struct family *head, **tail;
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

static void family_free(struct family *f)
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
	struct family *f, *next;

	if (!m)
		return;
	for (f = m->head; f; f = next) {
		next = f->next;
		family_free(f);
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct family *find_family(struct sx_metrics *m, const char *name)
{
	struct family *f;

	for (f = m->head; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

int sx_metrics_define(struct sx_metrics *m, const char *name, enum sx_metric_type type,
		      const char *help, const double *buckets, unsigned nbuckets)
{
	struct family *f;
	int rc = 0;

	if (nbuckets > SX_METRICS_MAX_BUCKETS || (type == SX_METRIC_HISTOGRAM && !buckets))
		return SX_EINVAL;
	pthread_mutex_lock(&m->lock);
	if (find_family(m, name)) {
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
	f->type = type;
	f->nbuckets = type == SX_METRIC_HISTOGRAM ? nbuckets : 0;
	if (f->nbuckets)
		memcpy(f->bounds, buckets, nbuckets * sizeof(double));
	f->tail = &f->head;
	*m->tail = f;
	m->tail = &f->next;
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int sx_metrics_define_kube(struct sx_metrics *m, const char *name, enum sx_metric_type type,
			   enum sx_metric_stability stability, const char *deprecated,
			   const char *help, const double *buckets, unsigned nbuckets)
{
	static const char *const levels[] = {"", "[ALPHA] ", "[BETA] ", "[STABLE] "};
	size_t len;
	char *text;
	int rc;

	if ((unsigned)stability >= SX_ARRAY_SIZE(levels))
		return SX_EINVAL;
	help = help ? help : "";
	len = strlen(levels[stability]) + strlen(help) + (deprecated ? strlen(deprecated) + 20 : 0);
	text = malloc(len + 1);
	if (!text)
		return SX_ENOMEM;
	snprintf(text, len + 1, "%s%s%s%s%s", levels[stability],
		 deprecated ? "(Deprecated since " : "", deprecated ? deprecated : "",
		 deprecated ? ") " : "", help);
	rc = sx_metrics_define(m, name, type, text, buckets, nbuckets);
	free(text);
	return rc;
}

/* The series of f with these labels, created when `create`; NULL when the
 * registry is full or allocation fails. Caller holds the lock. */
static struct series *get_series(struct sx_metrics *m, struct family *f, const char *labels,
				 bool create)
{
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

/* Applies one update of `type` under the lock. */
static void update(struct sx_metrics *m, const char *name, const char *labels,
		   enum sx_metric_type type, double v)
{
	struct family *f;
	struct series *s;
	unsigned i;

	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	/* A counter may also be set from a monotonic source (watch restarts). */
	if (!f || (f->type != type && !(type == SX_METRIC_GAUGE && f->type == SX_METRIC_COUNTER)))
		goto out;
	s = get_series(m, f, labels, true);
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
	pthread_mutex_unlock(&m->lock);
}

void sx_metrics_touch(struct sx_metrics *m, const char *name, const char *labels)
{
	struct family *f;

	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	if (f)
		get_series(m, f, labels, true);
	pthread_mutex_unlock(&m->lock);
}

void sx_metrics_inc(struct sx_metrics *m, const char *name, const char *labels, uint64_t v)
{
	update(m, name, labels, SX_METRIC_COUNTER, (double)v);
}

void sx_metrics_set(struct sx_metrics *m, const char *name, const char *labels, double v)
{
	update(m, name, labels, SX_METRIC_GAUGE, v);
}

void sx_metrics_set_histogram(struct sx_metrics *m, const char *name, const char *labels,
			      const uint64_t *buckets, unsigned nbuckets, uint64_t count,
			      double sum)
{
	struct family *f;
	struct series *s;

	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	s = f && f->type == SX_METRIC_HISTOGRAM && f->nbuckets == nbuckets
		    ? get_series(m, f, labels, true)
		    : NULL;
	if (s) {
		memcpy(s->buckets, buckets, nbuckets * sizeof(*buckets));
		s->count = count;
		s->sum = sum;
	}
	pthread_mutex_unlock(&m->lock);
}

void sx_metrics_observe(struct sx_metrics *m, const char *name, const char *labels, double v)
{
	if (isnan(v))
		return;
	update(m, name, labels, SX_METRIC_HISTOGRAM, v);
}

double sx_metrics_value(struct sx_metrics *m, const char *name, const char *labels)
{
	struct family *f;
	struct series *s;
	double v = 0;

	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	s = f ? get_series(m, f, labels, false) : NULL;
	if (s)
		v = f->type == SX_METRIC_HISTOGRAM ? (double)s->count : s->value;
	pthread_mutex_unlock(&m->lock);
	return v;
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

static void render_histogram(struct sx_buf *out, const struct family *f, const struct series *s)
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
	const struct family *f;
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
