/* What the process itself uses, for /metrics and `make bench`: the
 * Prometheus process collector's figures plus threads and glibc malloc
 * arenas. Read from /proc/self and malloc_info(); Linux and glibc only
 * (fields that cannot be read are left 0). Any thread may call it. */
#ifndef SCHEDEXT_PROCSTAT_H
#define SCHEDEXT_PROCSTAT_H

#include <stdint.h>

struct sx_metric;
struct sx_metrics;

struct sx_procstat {
	double rss_bytes, peak_rss_bytes, virtual_bytes;
	double cpu_seconds, start_time_seconds;
	unsigned threads, open_fds, max_fds;
	unsigned arenas;   /* malloc arenas: main + per-thread ones */
	double heap_bytes; /* bytes malloc holds from the system (all arenas) */
};

void sx_procstat_read(struct sx_procstat *out);

/* The families' handles, kept by whoever updates them. */
#define SX_PROCSTAT_FAMILIES 10
struct sx_procstat_metrics {
	struct sx_metric *f[SX_PROCSTAT_FAMILIES];
};

/* Defines the families (process_resident_memory_bytes, ...) in m and
 * fills h with their handles. */
void sx_procstat_define(struct sx_metrics *m, struct sx_procstat_metrics *h);
/* Sets them from a fresh sx_procstat_read(). */
void sx_procstat_update(const struct sx_procstat_metrics *h);

#endif
