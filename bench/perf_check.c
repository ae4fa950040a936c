/* perf_check: deterministic counters of the hot paths, for `make
 * perf-check` (bench/perf_check.sh compares them with the committed
 * baseline, bench/perf-baseline.txt).
 *
 *   perf_check --data DIR
 *
 * DIR holds what bench/perf_check.sh generates: cluster.json, the pending
 * pods of each mix (pending-MIX.json), storage-volumes.json,
 * storage-dra.json and the extender bodies names.json, nodes.json and
 * preempt.json (bench/payloads.py).
 *
 * Each case runs its operation `ops` times and prints one line
 *   case NAME ops=N faults=F allocs=A
 * with minor page faults (getrusage, every thread) and heap allocations
 * made by schedext's own code (malloc, calloc, realloc, strdup and
 * strndup, counted through the linker's --wrap) per operation. Run under
 * `valgrind --tool=callgrind`, each case is also dumped as its own profile
 * (CALLGRIND_DUMP_STATS_AT("NAME"), counters zeroed before it), whose
 * total is the user-space instructions of every thread during the case;
 * natively those requests are no-ops.
 *
 * The extender cases go through the real HTTP server (src/cmd/server.c)
 * over loopback with one keep-alive connection, so buffer handling and
 * reply writing count, not just the verb. The pool has no threads and MHD
 * one, so the counts do not depend on scheduling.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
/* valgrind's client requests; `make perf-check` installs valgrind, and a
 * build without its headers (make test builds every bench tool) counts
 * no instructions, only faults and allocations. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_ZERO_STATS
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/node_memo.h"
#include "schedext/server.h"
#include "schedext/state.h"
#include "schedext/binding_cycle.h" /* after the headers it needs */

/* ---------- allocation counting (linked with --wrap=malloc, ...) ---------- */

static atomic_ulong allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return __real_strndup(s, n);
}

/* ---------- one measured case ---------- */

struct mark {
	long faults;
	unsigned long allocs;
};

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static struct mark case_begin(void)
{
	CALLGRIND_ZERO_STATS;
	return (struct mark){minor_faults(), atomic_load(&allocs)};
}

static void case_end(const char *name, struct mark m, unsigned ops)
{
	long faults = minor_faults() - m.faults;
	unsigned long n = atomic_load(&allocs) - m.allocs;

	CALLGRIND_DUMP_STATS_AT(name);
	printf("case %s ops=%u faults=%.2f allocs=%.2f\n", name, ops, (double)faults / ops,
	       (double)n / ops);
	fflush(stdout);
}

/* ---------- inputs ---------- */

static char *slurp(const char *dir, const char *file, size_t *len)
{
	char path[4096];
	FILE *f;
	char *d = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "perf_check: cannot open %s\n", path);
		exit(1);
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (d = malloc((size_t)n + 1)) && fread(d, 1, (size_t)n, f) == (size_t)n) {
		d[n] = '\0';
		*len = (size_t)n;
	} else {
		fprintf(stderr, "perf_check: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return d;
}

static void load(struct sx_cache *cache, const char *dir, const char *file)
{
	struct sx_error err = {0};
	size_t len;
	char *data = slurp(dir, file, &len);

	if (sx_state_load_buffer(cache, file, data, len, &err) < 0) {
		fprintf(stderr, "perf_check: %s: %s\n", file, err.msg);
		exit(1);
	}
	free(data);
}

/* The pending pods of a List file, decoded. */
static struct sx_pod **load_pods(const char *dir, const char *file, uint32_t max, uint32_t *n)
{
	size_t len;
	char *data = slurp(dir, file, &len);
	cJSON *root = cJSON_ParseWithLength(data, len), *it;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
	struct sx_pod **pods = calloc(max + 1, sizeof(*pods));

	*n = 0;
	cJSON_ArrayForEach(it, items)
	{
		struct sx_error err = {0};
		struct sx_pod *pod = *n < max ? sx_decode_pod(it, &err) : NULL;

		if (pod)
			pods[(*n)++] = pod;
	}
	cJSON_Delete(root);
	free(data);
	return pods;
}

/* ---------- cases ---------- */

/* The state file's ingest: parse, decode, apply into a fresh cache. */
static void case_ingest(const char *dir)
{
	size_t len;
	char *data = slurp(dir, "cluster.json", &len);
	struct sx_cache *cache = sx_cache_new();
	struct sx_error err = {0};
	struct mark m = case_begin();

	if (sx_state_load_buffer(cache, "cluster.json", data, len, &err) < 0)
		fprintf(stderr, "perf_check: ingest: %s\n", err.msg);
	case_end("ingest_state", m, 1);
	sx_cache_free(cache);
	free(data);
}

/* One cycle per pending pod of a mix, each placed pod assumed and
 * Reserved as the scheduler does (bench/cycle_bench.c run_pods). */
static void case_cycle(struct sx_cache *cache, const struct sx_config *cfg, const char *dir,
		       const char *mix, uint32_t npods)
{
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	char file[64], name[64];
	uint32_t n, next = 0;
	uint64_t rng = 1;
	struct sx_pod **pods;
	struct mark m;

	snprintf(file, sizeof(file), "pending-%s.json", mix);
	snprintf(name, sizeof(name), "cycle_%s", mix);
	pods = load_pods(dir, file, npods, &n);
	m = case_begin();
	for (uint32_t i = 0; i < n; i++) {
		struct sx_snapshot *snap = sx_cache_snapshot(cache);
		struct sx_cycle_opts opts = {.snap = snap,
					     .mode = SX_CYCLE_FULL,
					     .percentage = -1,
					     .global_percentage = cfg->percentage_of_nodes_to_score,
					     .next_start_index = &next,
					     .rng = &rng};
		struct sx_cycle_result res;

		sx_schedule(prof, pods[i], &opts, &res);
		if (res.selected >= 0) {
			sx_str node = snap->nodes[res.selected]->name;

			sx_cache_assume(cache, pods[i], node);
			sx_status_free(sx_run_reserve(prof, res.state, pods[i], node));
		}
		sx_cycle_result_free(&res);
		sx_snapshot_unref(snap);
	}
	case_end(name, m, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		sx_pod_unref(pods[i]);
	free(pods);
}

/* A keep-alive HTTP/1.1 client of the server under test. */
static int connect_to(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("perf_check: connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0) {
			perror("perf_check: write");
			exit(1);
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Sends one POST and reads the whole reply; returns its status code. */
static int post(int fd, const char *path, const char *body, size_t len, char *buf, size_t cap)
{
	char head[256];
	size_t got = 0, need = 0;
	int code = 0;

	snprintf(head, sizeof(head),
		 "POST %s HTTP/1.1\r\nHost: perf\r\nContent-Type: application/json\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 path, len);
	send_all(fd, head, strlen(head));
	send_all(fd, body, len);
	for (;;) {
		ssize_t r = read(fd, buf + got, cap - got - 1);
		char *eoh, *cl;

		if (r <= 0) {
			fprintf(stderr, "perf_check: %s: connection closed\n", path);
			exit(1);
		}
		got += (size_t)r;
		buf[got] = '\0';
		if (!need && (eoh = strstr(buf, "\r\n\r\n"))) {
			cl = strcasestr(buf, "Content-Length:");
			sscanf(buf, "HTTP/1.1 %d", &code);
			need = (size_t)(eoh + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (need && got >= need)
			return code;
		if (got + 1 >= cap) {
			fprintf(stderr, "perf_check: %s: reply larger than %zu bytes\n", path, cap);
			exit(1);
		}
	}
}

static void case_http(int fd, const char *name, const char *path, const char *dir, const char *file,
		      unsigned ops)
{
	size_t len, cap = (size_t)64 << 20;
	char *body = slurp(dir, file, &len), *reply = malloc(cap);
	struct mark m;
	int code;

	/* one request first: the memo and the pools reach their steady state */
	code = post(fd, path, body, len, reply, cap);
	m = case_begin();
	for (unsigned i = 0; i < ops; i++)
		code = post(fd, path, body, len, reply, cap);
	case_end(name, m, ops);
	if (code != 200)
		fprintf(stderr, "perf_check: %s answered %d\n", name, code);
	free(reply);
	free(body);
}

static void cases_http(struct sx_cache *cache, const struct sx_config *cfg, const char *dir)
{
	struct sx_extender ex = {.cache = cache, .cfg = cfg};
	struct sx_server_opts so = {.listen = "127.0.0.1:0", .threads = 1};
	struct sx_error err = {0};
	struct sx_server *srv;
	int fd;

	ex.profile = sx_config_profile(cfg, NULL);
	ex.node_memo = sx_node_memo_new((size_t)32 << 20, 65536);
	srv = sx_server_start(&so, &ex, NULL, &err);
	if (!srv) {
		fprintf(stderr, "perf_check: server: %s\n", err.msg);
		exit(1);
	}
	fd = connect_to(sx_server_port(srv));
	case_http(fd, "http_filter_names", "/filter", dir, "names.json", 20);
	case_http(fd, "http_filter_fullnodes", "/filter", dir, "nodes.json", 20);
	case_http(fd, "http_prioritize_names", "/prioritize", dir, "names.json", 20);
	case_http(fd, "http_preempt", "/preempt", dir, "preempt.json", 20);
	close(fd);
	sx_server_stop(srv, 1);
	sx_node_memo_free(ex.node_memo);
}

int main(int argc, char **argv)
{
	static const char *const mixes[] = {"plain",	     "spread",	"affinity",
					    "anti-affinity", "volumes", "dra"};
	struct sx_error err = {0};
	struct sx_config *cfg;
	struct sx_cache *cache;
	const char *dir;

	if (argc != 3 || strcmp(argv[1], "--data") != 0) {
		fprintf(stderr, "usage: perf_check --data DIR\n");
		return 2;
	}
	dir = argv[2];
	sx_malloc_bound(); /* as serve runs */
	sx_intern_init();
	cfg = sx_config_default(&err);
	if (!cfg) {
		fprintf(stderr, "perf_check: %s\n", err.msg);
		return 1;
	}
	case_ingest(dir);
	cache = sx_cache_new();
	load(cache, dir, "cluster.json");
	load(cache, dir, "storage-volumes.json");
	load(cache, dir, "storage-dra.json");
	cases_http(cache, cfg, dir);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		case_cycle(cache, cfg, dir, mixes[i], 40);
	sx_cache_free(cache);
	sx_config_free(cfg);
	return 0;
}
