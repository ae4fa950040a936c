/* Kube client pieces that need no server: the watch-stream line splitter,
 * kubeconfig / in-cluster loading, base64, the QPS token bucket and Status
 * messages. The live paths are covered by test/integration/test_kube.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/kube.h"

/* ---------- line splitter ---------- */

struct lines {
	char got[8][256];
	int n;
	int stop_after; /* return -1 after this many lines (0 = never) */
};

static int collect(void *ctx, char *line, size_t len)
{
	struct lines *l = ctx;

	if (l->n < 8)
		snprintf(l->got[l->n], sizeof(l->got[0]), "%.*s", (int)len, line);
	l->n++;
	if (l->stop_after && l->n >= l->stop_after)
		return -1;
	return 0;
}

static const char STREAM[] =
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\\u00e9\",\"label\":"
	"\"caf\xc3\xa9\"}}}\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\r\n"
	"\n"
	"{\"type\":\"DELETED\",\"object\":{}}\n";

static void check_stream(const struct lines *l)
{
	CHECK_INT(l->n, 3);
	CHECK_STR(l->got[0], "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\\u00e9\","
			     "\"label\":\"caf\xc3\xa9\"}}}");
	CHECK_STR(l->got[1],
		  "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}");
	CHECK_STR(l->got[2], "{\"type\":\"DELETED\",\"object\":{}}");
}

static void test_line_buf_every_two_way_split(void)
{
	size_t n = strlen(STREAM);

	for (size_t cut = 0; cut <= n; cut++) {
		struct sx_line_buf lb;
		struct lines l = {.n = 0};

		sx_line_buf_init(&lb, 1024);
		CHECK_INT(sx_line_buf_feed(&lb, STREAM, cut, collect, &l), 0);
		CHECK_INT(sx_line_buf_feed(&lb, STREAM + cut, n - cut, collect, &l), 0);
		check_stream(&l);
		sx_line_buf_free(&lb);
	}
}

static void test_line_buf_byte_by_byte_and_random(void)
{
	size_t n = strlen(STREAM);
	unsigned seed = 7;

	for (int round = 0; round < 200; round++) {
		struct sx_line_buf lb;
		struct lines l = {.n = 0};
		size_t i = 0;

		sx_line_buf_init(&lb, 1024);
		while (i < n) {
			size_t k = round == 0 ? 1 : 1 + (size_t)(rand_r(&seed) % 9);

			if (k > n - i)
				k = n - i;
			CHECK_INT(sx_line_buf_feed(&lb, STREAM + i, k, collect, &l), 0);
			i += k;
		}
		check_stream(&l);
		sx_line_buf_free(&lb);
	}
}

static void test_line_buf_partial_tail_kept(void)
{
	struct sx_line_buf lb;
	struct lines l = {.n = 0};

	sx_line_buf_init(&lb, 1024);
	CHECK_INT(sx_line_buf_feed(&lb, "{\"a\":1}\n{\"b\"", 12, collect, &l), 0);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.got[0], "{\"a\":1}");
	CHECK_INT(lb.len, 4); /* the torn event waits for its end */
	sx_line_buf_free(&lb);
}

static void test_line_buf_cap_and_stop(void)
{
	struct sx_line_buf lb;
	struct lines l = {.n = 0};
	char big[100];

	memset(big, 'x', sizeof(big));
	sx_line_buf_init(&lb, 64);
	CHECK_INT(sx_line_buf_feed(&lb, big, 60, collect, &l), 0);
	CHECK_INT(sx_line_buf_feed(&lb, big, 10, collect, &l), SX_ETOOBIG);
	sx_line_buf_free(&lb);

	l = (struct lines){.stop_after = 1};
	sx_line_buf_init(&lb, 64);
	CHECK_INT(sx_line_buf_feed(&lb, "a\nb\nc\n", 6, collect, &l), -1);
	CHECK_INT(l.n, 1);
	sx_line_buf_free(&lb);
}

/* ---------- base64, token bucket, status ---------- */

static void test_base64(void)
{
	size_t n = 0;
	char *s = sx_base64_decode("aGVsbG8g\nd29ybGQ=", &n);

	CHECK_STR(s, "hello world");
	CHECK_INT(n, 11);
	free(s);
	s = sx_base64_decode("YQ==", &n);
	CHECK_STR(s, "a");
	free(s);
	CHECK(sx_base64_decode("a$b=", &n) == NULL);
	CHECK(sx_base64_decode("YQ=a", &n) == NULL);
}

static void test_token_bucket(void)
{
	struct sx_token_bucket tb;
	const uint64_t s = 1000000000ull;

	sx_token_bucket_init(&tb, 10, 2, 5 * s);
	CHECK_INT(sx_token_bucket_reserve(&tb, 5 * s), 0);
	CHECK_INT(sx_token_bucket_reserve(&tb, 5 * s), 0);
	/* Burst spent: the next ones wait 100 ms, 200 ms at 10 QPS. */
	CHECK_INT(sx_token_bucket_reserve(&tb, 5 * s), 100000000);
	CHECK_INT(sx_token_bucket_reserve(&tb, 5 * s), 200000000);
	/* 1 s later: +10 tokens, from -2 to 8 then capped by burst only above 2. */
	CHECK_INT(sx_token_bucket_reserve(&tb, 6 * s), 0);
	/* 10 s later the bucket is full again (burst 2), not 100. */
	CHECK_INT(sx_token_bucket_reserve(&tb, 16 * s), 0);
	CHECK_INT(sx_token_bucket_reserve(&tb, 16 * s), 0);
	CHECK_INT(sx_token_bucket_reserve(&tb, 16 * s), 100000000);
	pthread_mutex_destroy(&tb.mu);

	sx_token_bucket_init(&tb, 0, 0, 0); /* defaults 50 / 100 */
	CHECK(tb.rate == 50.0);
	CHECK(tb.burst == 100.0);
	pthread_mutex_destroy(&tb.mu);
}

static void test_status_message(void)
{
	char buf[128];
	const char *b =
		"{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" not found\",\"code\":404}";

	CHECK_STR(sx_kube_status_message(b, strlen(b), 404, buf, sizeof(buf)),
		  "pods \"x\" not found");
	CHECK_STR(sx_kube_status_message("<html>", 6, 502, buf, sizeof(buf)),
		  "HTTP 502 from the API server");
	CHECK_STR(sx_kube_status_message(NULL, 0, 500, buf, sizeof(buf)),
		  "HTTP 500 from the API server");
}

/* ---------- kubeconfig ---------- */

static char tmpdir[256];

static void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static const char *tpath(const char *name)
{
	static char bufs[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof(bufs[i]), "%s/%s", tmpdir, name);
	return bufs[i];
}

static void setup_dir(void)
{
	if (tmpdir[0])
		return;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/schedext-test-kube-%d", (int)getpid());
	mkdir(tmpdir, 0700);
	mkdir(tpath("pki"), 0700);
	write_file("pki/ca.crt", "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n");
	write_file("pki/client.crt", "CERT");
	write_file("pki/client.key", "KEY");
	write_file("token", "file-token\n");
}

/* "PEM-DATA" base64 = UEVNLURBVEE= */
static const char MAIN_CFG[] = "apiVersion: v1\n"
			       "kind: Config\n"
			       "current-context: dev\n"
			       "clusters:\n"
			       "- name: lab\n"
			       "  cluster:\n"
			       "    server: https://203.0.113.10:6443/k8s/clusters/c-abc/\n"
			       "    certificate-authority-data: UEVNLURBVEE=\n"
			       "    tls-server-name: kubernetes\n"
			       "- name: other\n"
			       "  cluster:\n"
			       "    server: http://127.0.0.1:8080\n"
			       "    certificate-authority: pki/ca.crt\n"
			       "users:\n"
			       "- name: admin\n"
			       "  user:\n"
			       "    client-certificate: pki/client.crt\n"
			       "    client-key: pki/client.key\n"
			       "- name: robot\n"
			       "  user:\n"
			       "    token: static-token\n"
			       "    tokenFile: token\n"
			       "contexts:\n"
			       "- name: dev\n"
			       "  context: {cluster: lab, user: admin, namespace: kube-system}\n"
			       "- name: ci\n"
			       "  context: {cluster: other, user: robot}\n";

static void test_kubeconfig_current_context(void)
{
	struct sx_kube_config c;
	struct sx_error err = {0};

	setup_dir();
	write_file("config", MAIN_CFG);
	CHECK_INT(sx_kubeconfig_load(tpath("config"), NULL, &c, &err), 0);
	CHECK_STR(c.server, "https://203.0.113.10:6443/k8s/clusters/c-abc");
	CHECK_STR(c.context, "dev");
	CHECK_STR(c.namespace, "kube-system");
	CHECK_STR(c.source, tpath("config"));
	CHECK_INT(c.ca_len, 8);
	CHECK(c.ca_data && memcmp(c.ca_data, "PEM-DATA", 8) == 0);
	CHECK(c.ca_file == NULL);
	CHECK_STR(c.tls_server_name, "kubernetes");
	CHECK_STR(c.cert_file, tpath("pki/client.crt"));
	CHECK_STR(c.key_file, tpath("pki/client.key"));
	CHECK(c.token == NULL);
	CHECK(!c.insecure);
	sx_kube_config_clear(&c);
}

static void test_kubeconfig_explicit_context(void)
{
	struct sx_kube_config c;
	struct sx_error err = {0};
	char *tok;

	setup_dir();
	write_file("config", MAIN_CFG);
	CHECK_INT(sx_kubeconfig_load(tpath("config"), "ci", &c, &err), 0);
	CHECK_STR(c.server, "http://127.0.0.1:8080");
	CHECK_STR(c.namespace, "default");
	CHECK_STR(c.ca_file, tpath("pki/ca.crt"));
	CHECK_STR(c.token, "static-token");
	CHECK_STR(c.token_file, tpath("token"));
	tok = sx_read_token_file(c.token_file);
	CHECK_STR(tok, "file-token");
	free(tok);
	sx_kube_config_clear(&c);
}

static void test_kubeconfig_merge_first_wins(void)
{
	struct sx_kube_config c;
	struct sx_error err = {0};
	char list[1200];

	setup_dir();
	write_file("config", MAIN_CFG);
	/* The first file defines cluster "lab" differently and no
	 * current-context; the second supplies current-context and the rest. */
	write_file("first",
		   "clusters:\n- name: lab\n  cluster:\n    server: https://first.example:443\n"
		   "    insecure-skip-tls-verify: true\n");
	snprintf(list, sizeof(list), "%s:%s:%s", tpath("missing"), tpath("first"), tpath("config"));
	CHECK_INT(sx_kubeconfig_load(list, NULL, &c, &err), 0);
	CHECK_STR(c.server, "https://first.example:443");
	CHECK(c.insecure);
	CHECK(c.ca_data == NULL); /* no field-by-field merge with the second "lab" */
	CHECK_STR(c.cert_file, tpath("pki/client.crt"));
	CHECK_STR(c.source, tpath("config")); /* the context's file */
	sx_kube_config_clear(&c);
}

static void expect_error(const char *cfg, const char *context, const char *msg)
{
	struct sx_kube_config c;
	struct sx_error err = {0};
	char want[600];

	write_file("bad", cfg);
	snprintf(want, sizeof(want), msg, tpath("bad"));
	CHECK(sx_kubeconfig_load(tpath("bad"), context, &c, &err) < 0);
	CHECK_STR(err.msg, want);
	CHECK(c.server == NULL);
}

static void test_kubeconfig_errors(void)
{
	const char *ctx =
		"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n";
	char buf[1000];

	setup_dir();
	expect_error("clusters: []\n", NULL, "kubeconfig %s: current-context: not set");
	expect_error(ctx, "y", "kubeconfig %s: context \"y\" not found");
	expect_error(ctx, NULL, "kubeconfig %s: cluster \"c\" not found");
	snprintf(buf, sizeof(buf),
		 "%sclusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: true}\n", ctx);
	expect_error(buf, NULL, "kubeconfig %s: cluster.server: missing");
	snprintf(buf, sizeof(buf), "%sclusters:\n- name: c\n  cluster: {server: ftp://x}\n", ctx);
	expect_error(buf, NULL, "kubeconfig %s: cluster.server: not an http(s) URL: ftp://x");
	snprintf(buf, sizeof(buf), "%sclusters:\n- name: c\n  cluster: {server: 'http:///'}\n",
		 ctx);
	expect_error(buf, NULL, "kubeconfig %s: cluster.server: no host: http:///");
	snprintf(buf, sizeof(buf), "%sclusters:\n- name: c\n  cluster: {server: 'https://:6443'}\n",
		 ctx);
	expect_error(buf, NULL, "kubeconfig %s: cluster.server: no host: https://:6443");
	snprintf(buf, sizeof(buf),
		 "%sclusters:\n- name: c\n  cluster: {server: 'https://x', "
		 "certificate-authority-data: '%%%%'}\n",
		 ctx);
	expect_error(buf, NULL, "kubeconfig %s: certificate-authority-data: invalid base64");
	snprintf(buf, sizeof(buf),
		 "%sclusters:\n- name: c\n  cluster: {server: 'https://x', "
		 "insecure-skip-tls-verify: true, certificate-authority-data: UEVN}\n",
		 ctx);
	expect_error(buf, NULL,
		     "kubeconfig %s: cluster: specifying a root certificates file with the "
		     "insecure flag is not allowed");
	snprintf(buf, sizeof(buf),
		 "%sclusters:\n- name: c\n  cluster: {server: 'https://x'}\nusers:\n- name: u\n  "
		 "user: {exec: {command: aws}}\n",
		 ctx);
	expect_error(buf, NULL,
		     "kubeconfig %s: users[u].user.exec.apiVersion: apiVersion must be specified "
		     "for u to use exec authentication plugin");
	snprintf(buf, sizeof(buf),
		 "%sclusters:\n- name: c\n  cluster: {server: 'https://x'}\nusers:\n- name: u\n  "
		 "user: {client-certificate-data: UEVN}\n",
		 ctx);
	expect_error(buf, NULL,
		     "kubeconfig %s: user: client-certificate and client-key must be given "
		     "together");
	expect_error("- a\n- b\n", NULL, "kubeconfig %s: not a mapping");
}

static void test_kubeconfig_missing_file_message(void)
{
	struct sx_kube_config c;
	struct sx_error err = {0};
	char want[600];

	setup_dir();
	CHECK_INT(sx_kubeconfig_load(tpath("nope"), NULL, &c, &err), SX_ENOENT);
	snprintf(want, sizeof(want), "kubeconfig %s: no such file", tpath("nope"));
	CHECK_STR(err.msg, want);
}

static void test_in_cluster(void)
{
	struct sx_kube_config c;
	struct sx_error err = {0};

	setup_dir();
	mkdir(tpath("sa"), 0700);
	write_file("sa/token", "sa-token\n");
	write_file("sa/namespace", "sched");
	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CHECK_INT(sx_kubeconfig_in_cluster(tpath("sa"), &c, &err), 0);
	CHECK_STR(c.server, "https://[fd00:10:96::1]:443");
	CHECK_STR(c.token_file, tpath("sa/token"));
	CHECK_STR(c.ca_file, tpath("sa/ca.crt"));
	CHECK_STR(c.namespace, "sched");
	CHECK_STR(c.source, "in-cluster");
	sx_kube_config_clear(&c);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	CHECK_INT(sx_kubeconfig_in_cluster(tpath("sa"), &c, &err), 0);
	CHECK_STR(c.server, "https://10.96.0.1:443");
	sx_kube_config_clear(&c);

	CHECK(sx_kubeconfig_in_cluster(tpath("no-sa"), &c, &err) < 0);
	{
		char want[600];

		snprintf(want, sizeof(want), "in-cluster: cannot read token %s/token",
			 tpath("no-sa"));
		CHECK_STR(err.msg, want);
	}
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	CHECK(sx_kubeconfig_in_cluster(tpath("sa"), &c, &err) < 0);
	CHECK_STR(err.msg, "in-cluster: KUBERNETES_SERVICE_HOST/PORT not set");
}

static void test_kube_new_resolves_kubeconfig_env(void)
{
	struct sx_error err = {0};
	struct sx_kube *k;

	setup_dir();
	write_file("config", MAIN_CFG);
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("KUBECONFIG", tpath("config"), 1);
	k = sx_kube_new(&(struct sx_kube_opts){.context = "ci"}, &err);
	CHECK(k != NULL);
	CHECK_STR(sx_kube_server(k), "http://127.0.0.1:8080");
	sx_kube_free(k);
	unsetenv("KUBECONFIG");
}

static void test_zz_cleanup(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	CHECK_INT(tmpdir[0] ? system(cmd) : 0, 0);
}

SX_TESTS(SX_TEST(test_line_buf_every_two_way_split), SX_TEST(test_line_buf_byte_by_byte_and_random),
	 SX_TEST(test_line_buf_partial_tail_kept), SX_TEST(test_line_buf_cap_and_stop),
	 SX_TEST(test_base64), SX_TEST(test_token_bucket), SX_TEST(test_status_message),
	 SX_TEST(test_kubeconfig_current_context), SX_TEST(test_kubeconfig_explicit_context),
	 SX_TEST(test_kubeconfig_merge_first_wins), SX_TEST(test_kubeconfig_errors),
	 SX_TEST(test_kubeconfig_missing_file_message), SX_TEST(test_in_cluster),
	 SX_TEST(test_kube_new_resolves_kubeconfig_env), SX_TEST(test_zz_cleanup))
