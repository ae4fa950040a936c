/* What the process itself uses, for /metrics and `make bench`: the
 * Prometheus process collector's figures plus threads and glibc malloc
 * arenas. Read from /proc/self and malloc_info(); Linux and glibc only
 * (fields that cannot be read are left 0). Any thread may call it. */
#ifndef SCHEDEXT_PROCSTAT_H
#define SCHEDEXT_PROCSTAT_H

#include <stdint.h>

struct sx_metrics;

struct sx_procstat {
	double rss_bytes, peak_rss_bytes, virtual_bytes;
	double cpu_seconds, start_time_seconds;
	unsigned threads, open_fds, max_fds;
	unsigned arenas;   /* malloc arenas: main + per-thread ones */
	double heap_bytes; /* bytes malloc holds from the system (all arenas) */
};

void sx_procstat_read(struct sx_procstat *out);

/* Defines the families (process_resident_memory_bytes, ...) in m. */
void sx_procstat_define(struct sx_metrics *m);
/* Sets them from a fresh sx_procstat_read(). */
void sx_procstat_update(struct sx_metrics *m);

#endif
