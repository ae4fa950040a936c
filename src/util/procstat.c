/* Process figures from /proc/self and malloc_info() (procstat.h). */
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "schedext/metrics.h"
#include "schedext/procstat.h"

/* "VmRSS:  1234 kB" lines of /proc/self/status. */
static void read_status(struct sx_procstat *o)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long v;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %lu", &v) == 1)
			o->rss_bytes = (double)v * 1024;
		else if (sscanf(line, "VmHWM: %lu", &v) == 1)
			o->peak_rss_bytes = (double)v * 1024;
		else if (sscanf(line, "VmSize: %lu", &v) == 1)
			o->virtual_bytes = (double)v * 1024;
		else if (sscanf(line, "Threads: %lu", &v) == 1)
			o->threads = (unsigned)v;
	}
	if (f)
		fclose(f);
}

/* utime+stime and the start time from /proc/self/stat (fields 14, 15, 22). */
static void read_stat(struct sx_procstat *o)
{
	FILE *f = fopen("/proc/self/stat", "r");
	char buf[1024], *p;
	unsigned long long ut, st, start;
	double tick = (double)sysconf(_SC_CLK_TCK), boot = 0;
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || tick <= 0 ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
		   "%*d %*d %llu",
		   &ut, &st, &start) != 3)
		return;
	o->cpu_seconds = (double)(ut + st) / tick;
	f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lf", &boot) == 1)
			break;
	if (f)
		fclose(f);
	o->start_time_seconds = boot + (double)start / tick;
}

static void read_fds(struct sx_procstat *o)
{
	DIR *d = opendir("/proc/self/fd");
	struct rlimit rl;

	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.')
			o->open_fds++;
	if (d) {
		closedir(d);
		o->open_fds--; /* the directory stream itself */
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		o->max_fds = (unsigned)rl.rlim_cur;
}

/* malloc_info's XML: one <heap nr="N"> per arena, and the total
 * <system type="current" size="..."/> after them. */
static void read_malloc(struct sx_procstat *o)
{
	char *xml = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);

	if (!f)
		return;
	malloc_info(0, f);
	fclose(f);
	for (p = xml; p && (p = strstr(p, "<heap nr=")); p++)
		o->arenas++;
	p = xml ? strstr(xml, "</heap>") : NULL;
	for (char *q = p; q && (q = strstr(q, "</heap>")); q++)
		p = q; /* the totals follow the last heap */
	if (p && (p = strstr(p, "<system type=\"current\" size=\"")))
		o->heap_bytes = strtod(p + strlen("<system type=\"current\" size=\""), NULL);
	free(xml);
}

void sx_procstat_read(struct sx_procstat *out)
{
	memset(out, 0, sizeof(*out));
	read_status(out);
	read_stat(out);
	read_fds(out);
	read_malloc(out);
}

/* The families in the order of sx_procstat_update's values. */
void sx_procstat_define(struct sx_metrics *m, struct sx_procstat_metrics *h)
{
	static const struct {
		const char *name, *help;
		enum sx_metric_type t;
	} fam[] = {
		{"process_resident_memory_bytes", "Resident memory size in bytes.",
		 SX_METRIC_GAUGE},
		{"process_virtual_memory_bytes", "Virtual memory size in bytes.", SX_METRIC_GAUGE},
		{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
		 SX_METRIC_COUNTER},
		{"process_start_time_seconds",
		 "Start time of the process since unix epoch in seconds.", SX_METRIC_GAUGE},
		{"process_open_fds", "Number of open file descriptors.", SX_METRIC_GAUGE},
		{"process_max_fds", "Maximum number of open file descriptors.", SX_METRIC_GAUGE},
		{"schedext_resident_memory_peak_bytes", "Peak resident memory (VmHWM) in bytes.",
		 SX_METRIC_GAUGE},
		{"schedext_threads", "Threads of the process.", SX_METRIC_GAUGE},
		{"schedext_malloc_arenas", "glibc malloc arenas (main and per-thread).",
		 SX_METRIC_GAUGE},
		{"schedext_malloc_system_bytes", "Bytes malloc holds from the system, all arenas.",
		 SX_METRIC_GAUGE},
	};
	_Static_assert(sizeof(fam) / sizeof(fam[0]) == SX_PROCSTAT_FAMILIES, "one handle each");
	for (size_t i = 0; i < SX_PROCSTAT_FAMILIES; i++)
		h->f[i] = sx_metrics_family(m, fam[i].name, fam[i].t, fam[i].help, NULL, 0);
}

void sx_procstat_update(const struct sx_procstat_metrics *h)
{
	struct sx_procstat s;

	sx_procstat_read(&s);
	sx_metric_set(h->f[0], NULL, s.rss_bytes);
	sx_metric_set(h->f[1], NULL, s.virtual_bytes);
	sx_metric_set(h->f[2], NULL, s.cpu_seconds);
	sx_metric_set(h->f[3], NULL, s.start_time_seconds);
	sx_metric_set(h->f[4], NULL, s.open_fds);
	sx_metric_set(h->f[5], NULL, s.max_fds);
	sx_metric_set(h->f[6], NULL, s.peak_rss_bytes);
	sx_metric_set(h->f[7], NULL, s.threads);
	sx_metric_set(h->f[8], NULL, s.arenas);
	sx_metric_set(h->f[9], NULL, s.heap_bytes);
}
