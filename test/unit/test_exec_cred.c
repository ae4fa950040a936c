/* Exec credential plugins (src/api/exec_cred.c and user.exec in
 * src/api/kubeconfig.c): the kubeconfig stanza and its errors, the
 * ExecCredential a plugin prints and its errors, running real plugins
 * (small /bin/sh scripts written to a scratch directory): environment and
 * KUBERNETES_EXEC_INFO, timeout, output cap, not found, exit codes, no fd
 * or child left behind; and the credential cache (expiry, 401, threads). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/kube.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char bufs[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof(bufs[i]), "%s/%s", tmpdir, name);
	return bufs[i];
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(tpath(name), "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(tpath(name), mode);
}

static void setup_dir(void)
{
	if (tmpdir[0])
		return;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/schedext-test-exec-%d", (int)getpid());
	mkdir(tmpdir, 0700);
	mkdir(tpath("bin"), 0700);
}

#define KC_HEAD                                                                                    \
	"current-context: x\n"                                                                     \
	"contexts:\n- name: x\n  context: {cluster: c, user: u}\n"                                 \
	"clusters:\n- name: c\n  cluster:\n    server: https://api.example:6443\n"                 \
	"    tls-server-name: kube.example\n"                                                      \
	"    certificate-authority-data: UEVNLUNB\n"                                               \
	"    extensions:\n    - name: client.authentication.k8s.io/exec\n"                         \
	"      extension: {audience: sched, n: 3}\n"                                               \
	"users:\n- name: u\n  user:\n    exec:\n"

/* Loads KC_HEAD + the exec stanza's lines; 0 or the error code. */
static int load(const char *exec_lines, struct sx_kube_config *c, struct sx_error *err)
{
	char buf[4000];

	snprintf(buf, sizeof(buf), "%s%s", KC_HEAD, exec_lines);
	write_file("config", buf, 0600);
	memset(err, 0, sizeof(*err));
	return sx_kubeconfig_load(tpath("config"), NULL, c, err);
}

static void expect_error(const char *exec_lines, const char *msg)
{
	struct sx_kube_config c;
	struct sx_error err;
	char want[800];

	snprintf(want, sizeof(want), msg, tpath("config"));
	CHECK(load(exec_lines, &c, &err) < 0);
	CHECK_STR(err.msg, want);
	CHECK(c.exec == NULL && c.server == NULL);
}

/* ---------- the kubeconfig stanza ---------- */

static void test_exec_stanza_parsed(void)
{
	struct sx_kube_config c;
	struct sx_error err;
	struct sx_exec_config *x;

	setup_dir();
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1\n"
		       "      command: bin/plugin\n"
		       "      args: [get-token, --cluster, c1]\n"
		       "      env: [{name: A, value: '1'}, {name: B, value: x=y}]\n"
		       "      interactiveMode: Never\n"
		       "      provideClusterInfo: true\n"
		       "      installHint: run apt install plugin\n",
		       &c, &err),
		  0);
	x = c.exec;
	CHECK(x != NULL);
	if (!x)
		return;
	CHECK_STR(x->command, tpath("bin/plugin")); /* relative to the kubeconfig */
	CHECK_INT(x->nargs, 3);
	CHECK_STR(x->args[0], "get-token");
	CHECK_STR(x->args[2], "c1");
	CHECK_INT(x->nenv, 2);
	CHECK_STR(x->env[0], "A=1");
	CHECK_STR(x->env[1], "B=x=y");
	CHECK_STR(x->api_version, "client.authentication.k8s.io/v1");
	CHECK_INT(x->interactive, SX_EXEC_NEVER);
	CHECK(x->provide_cluster_info);
	CHECK_STR(x->install_hint, "run apt install plugin");
	CHECK_STR(x->cluster_config, "{\"audience\":\"sched\",\"n\":3}");
	CHECK_STR(x->user, "u");
	CHECK_STR(x->source, tpath("config"));
	sx_kube_config_clear(&c);

	/* A bare name stays a bare name (PATH), v1beta1 defaults IfAvailable. */
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1beta1\n"
		       "      command: aws\n",
		       &c, &err),
		  0);
	CHECK_STR(c.exec->command, "aws");
	CHECK_INT(c.exec->interactive, SX_EXEC_IF_AVAILABLE);
	CHECK(!c.exec->provide_cluster_info && c.exec->nargs == 0 && c.exec->nenv == 0);
	sx_kube_config_clear(&c);
	/* "./" is cleaned away, and "./x" is relative to the file, not PATH. */
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1beta1\n"
		       "      command: ././/bin/plugin\n",
		       &c, &err),
		  0);
	CHECK_STR(c.exec->command, tpath("bin/plugin"));
	sx_kube_config_clear(&c);
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1beta1\n"
		       "      command: ./plugin\n",
		       &c, &err),
		  0);
	CHECK_STR(c.exec->command, tpath("plugin"));
	sx_kube_config_clear(&c);
	/* An absolute command is kept as it is. */
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1\n"
		       "      command: /usr/bin/aws\n      interactiveMode: Always\n",
		       &c, &err),
		  0);
	CHECK_STR(c.exec->command, "/usr/bin/aws");
	CHECK_INT(c.exec->interactive, SX_EXEC_ALWAYS);
	sx_kube_config_clear(&c);
}

static void test_exec_stanza_errors(void)
{
	setup_dir();
	expect_error("      command: aws\n",
		     "kubeconfig %s: users[u].user.exec.apiVersion: apiVersion must be specified "
		     "for u to use exec authentication plugin");
	expect_error(
		"      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: aws\n",
		"kubeconfig %s: users[u].user.exec.apiVersion: exec plugin: invalid "
		"apiVersion \"client.authentication.k8s.io/v1alpha1\"");
	expect_error("      apiVersion: client.authentication.k8s.io/v1\n",
		     "kubeconfig %s: users[u].user.exec.command: command must be specified for u "
		     "to use exec authentication plugin");
	expect_error("      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n",
		     "kubeconfig %s: users[u].user.exec.interactiveMode: interactiveMode must be "
		     "specified for u to use exec authentication plugin");
	expect_error("      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"
		     "      interactiveMode: Sometimes\n",
		     "kubeconfig %s: users[u].user.exec.interactiveMode: invalid interactiveMode "
		     "for u: \"Sometimes\"");
	expect_error("      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n"
		     "      env: [{value: x}]\n",
		     "kubeconfig %s: users[u].user.exec.env: env variable name must be specified "
		     "for u to use exec authentication plugin");
	expect_error("      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n"
		     "      args: [1, {a: b}]\n",
		     "kubeconfig %s: users[u].user.exec.args: not a list of strings");
	expect_error("      [a]\n", "kubeconfig %s: users[u].user.exec: not a mapping");
}

/* ---------- the ExecCredential ---------- */

static struct sx_exec_config XV1 = {.api_version = "client.authentication.k8s.io/v1",
				    .user = "u",
				    .source = "/k/config",
				    .command = "p"};

static void expect_cred_error(const char *out, const char *msg)
{
	struct sx_exec_credential c;
	struct sx_error err = {0};

	CHECK(sx_exec_credential_parse(&XV1, out, strlen(out), &c, &err) < 0);
	CHECK_STR(err.msg, msg);
	CHECK(c.token == NULL && c.cert_data == NULL);
}

static void test_exec_credential_parse(void)
{
	const char *ok = "{\"kind\":\"ExecCredential\",\"apiVersion\":"
			 "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"t0k\","
			 "\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}";
	const char *cert = "{\"kind\":\"ExecCredential\",\"apiVersion\":"
			   "\"client.authentication.k8s.io/v1\",\"status\":{"
			   "\"clientCertificateData\":\"-----BEGIN CERTIFICATE-----\\nA\\n\","
			   "\"clientKeyData\":\"-----BEGIN EC PRIVATE KEY-----\\nB\\n\"}}";
	struct sx_exec_credential c;
	struct sx_error err = {0};

	CHECK_INT(sx_exec_credential_parse(&XV1, ok, strlen(ok), &c, &err), 0);
	CHECK_STR(c.token, "t0k");
	CHECK_INT(c.expiry, 1893553445);
	CHECK(c.cert_data == NULL);
	sx_exec_credential_clear(&c);
	CHECK_INT(sx_exec_credential_parse(&XV1, cert, strlen(cert), &c, &err), 0);
	CHECK(c.token == NULL);
	CHECK_INT(c.expiry, 0);
	CHECK_STR(c.cert_data, "-----BEGIN CERTIFICATE-----\nA\n");
	CHECK_INT(c.key_len, strlen("-----BEGIN EC PRIVATE KEY-----\nB\n"));
	sx_exec_credential_clear(&c);

#define P  "kubeconfig /k/config: users[u].user.exec: "
#define V1 "\"apiVersion\":\"client.authentication.k8s.io/v1\","
	expect_cred_error("token", P "decoding stdout: not a JSON object (5 bytes)");
	expect_cred_error("{" V1 "\"status\":{\"token\":\"x\"}}",
			  P "decoding stdout: kind: want \"ExecCredential\", got \"\"");
	expect_cred_error("{\"kind\":\"ExecCredential\",\"apiVersion\":"
			  "\"client.authentication.k8s.io/v1beta1\",\"status\":{\"token\":\"x\"}}",
			  P "exec plugin is configured to use API version "
			    "client.authentication.k8s.io/v1, plugin returned version "
			    "client.authentication.k8s.io/v1beta1");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"spec\":{}}",
			  P "exec plugin didn't return a status field");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"status\":{\"token\":\"\"}}",
			  P "exec plugin didn't return a token or cert/key pair");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"status\":{\"token\":\"x\","
			  "\"clientKeyData\":\"-----BEGIN KEY-----\"}}",
			  P "exec plugin returned only certificate or key, not both");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"status\":{"
			  "\"clientCertificateData\":\"abc\",\"clientKeyData\":\"def\"}}",
			  P "failed parsing client key/certificate: status.clientCertificateData "
			    "and status.clientKeyData must be PEM");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"status\":{\"token\":\"x\","
			  "\"expirationTimestamp\":\"tomorrow\"}}",
			  P "decoding stdout: status.expirationTimestamp: not an RFC 3339 time: "
			    "\"tomorrow\"");
	expect_cred_error("{\"kind\":\"ExecCredential\"," V1 "\"status\":{\"token\":7}}",
			  P "decoding stdout: status: token, clientCertificateData, clientKeyData "
			    "and expirationTimestamp must be strings");
}

/* ---------- running plugins ---------- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* No child left to reap (a zombie would be one). */
static bool no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

/* A plugin that records its argv, env and stdin, then prints a token. */
static const char DUMP_PLUGIN[] =
	"#!/bin/sh\n"
	"d=$(dirname \"$0\")/..\n"
	"printf '%s\\n' \"$@\" > \"$d/args.out\"\n"
	"env > \"$d/env.out\"\n"
	"printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info.out\"\n"
	"if [ -t 0 ]; then echo tty > \"$d/stdin.out\"; else cat > \"$d/stdin.out\"; fi\n"
	"if [ -n \"$SX_LEAK_FD\" ] && [ -e /proc/$$/fd/$SX_LEAK_FD ]; then echo leaked; "
	"else echo closed; fi > \"$d/fd.out\"\n"
	"echo 'a warning on stderr' >&2\n"
	"echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	"\"status\":{\"token\":\"dumped\"}}'\n";

static char *slurp(const char *name)
{
	size_t n;

	return sx_test_read_file(tpath(name), &n);
}

static void test_exec_run_env_and_info(void)
{
	struct sx_kube_config c;
	struct sx_exec_credential cred;
	struct sx_error err;
	char *env, *args, *info, *in, *fdout, leak[16];
	cJSON *j;
	int fds, leaky;

	setup_dir();
	write_file("bin/dump", DUMP_PLUGIN, 0755);
	CHECK_INT(load("      apiVersion: client.authentication.k8s.io/v1\n"
		       "      command: ./bin/dump\n      args: [one, 'two words']\n"
		       "      env: [{name: SX_PLUGIN_VAR, value: from-kubeconfig}, "
		       "{name: HOME, value: /plugin-home}]\n"
		       "      interactiveMode: IfAvailable\n      provideClusterInfo: true\n",
		       &c, &err),
		  0);
	setenv("SX_PROCESS_VAR", "inherited", 1);
	setenv("KUBERNETES_EXEC_INFO", "stale", 1);
	leaky = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: the child closes it */
	snprintf(leak, sizeof(leak), "%d", leaky);
	setenv("SX_LEAK_FD", leak, 1);
	fds = count_fds();
	CHECK_INT(sx_exec_run(c.exec, &c, &cred, &err), 0);
	CHECK_STR(cred.token, "dumped");
	CHECK_INT(count_fds(), fds);
	CHECK(no_children());
	sx_exec_credential_clear(&cred);
	args = slurp("args.out");
	env = slurp("env.out");
	info = slurp("info.out");
	in = slurp("stdin.out");
	CHECK_STR(args, "one\ntwo words\n");
	CHECK(env && strstr(env, "\nSX_PROCESS_VAR=inherited\n"));
	CHECK(env && strstr(env, "\nSX_PLUGIN_VAR=from-kubeconfig\n"));
	CHECK(env && strstr(env, "\nHOME=/plugin-home\n")); /* exec.env wins */
	CHECK(env && strstr(env, "KUBERNETES_EXEC_INFO=stale") == NULL);
	CHECK_STR(in, ""); /* /dev/null, not a terminal */
	fdout = slurp("fd.out");
	CHECK_STR(fdout, "closed\n");
	free(fdout);
	close(leaky);
	unsetenv("SX_LEAK_FD");
	CHECK_STR(info, "{\"spec\":{\"cluster\":{\"server\":\"https://api.example:6443\","
			"\"tls-server-name\":\"kube.example\",\"certificate-authority-data\":"
			"\"UEVNLUNB\",\"config\":{\"audience\":\"sched\",\"n\":3}},"
			"\"interactive\":false},\"kind\":\"ExecCredential\",\"apiVersion\":"
			"\"client.authentication.k8s.io/v1\"}");
	j = info ? cJSON_Parse(info) : NULL;
	CHECK(j != NULL);
	cJSON_Delete(j);
	free(args);
	free(env);
	free(info);
	free(in);
	/* Without provideClusterInfo: no spec.cluster. */
	c.exec->provide_cluster_info = false;
	info = sx_exec_info(c.exec, &c);
	CHECK_STR(info, "{\"spec\":{\"interactive\":false},\"kind\":\"ExecCredential\","
			"\"apiVersion\":\"client.authentication.k8s.io/v1\"}");
	free(info);
	unsetenv("SX_PROCESS_VAR");
	unsetenv("KUBERNETES_EXEC_INFO");
	sx_kube_config_clear(&c);
}

static int run_error(const char *exec_lines, unsigned timeout_ms, size_t max_output,
		     struct sx_error *err)
{
	struct sx_kube_config c;
	struct sx_exec_credential cred;
	int rc;

	CHECK_INT(load(exec_lines, &c, err), 0);
	if (!c.exec)
		return 0;
	c.exec->timeout_ms = timeout_ms;
	c.exec->max_output = max_output;
	rc = sx_exec_run(c.exec, &c, &cred, err);
	CHECK(cred.token == NULL);
	sx_kube_config_clear(&c);
	return rc;
}

#define EXEC_V1 "      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n"

static void test_exec_run_timeout_kills_group(void)
{
	struct sx_error err;
	uint64_t t0;
	char want[600], *pid;
	int fds;

	setup_dir();
	/* The plugin leaves a grandchild in its group, then hangs. */
	write_file("bin/slow",
		   "#!/bin/sh\nsleep 30 &\necho $! > \"$(dirname \"$0\")/../bg.pid\"\n"
		   "sleep 30\n",
		   0755);
	fds = count_fds();
	t0 = sx_now_ns();
	CHECK(run_error(EXEC_V1 "      command: bin/slow\n", 300, 0, &err) < 0);
	CHECK(sx_now_ns() - t0 < 3000000000ull);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: exec: executable %s "
		 "did not finish within 300 ms (killed)",
		 tpath("config"), tpath("bin/slow"));
	CHECK_STR(err.msg, want);
	CHECK_INT(count_fds(), fds);
	CHECK(no_children());
	pid = slurp("bg.pid");
	if (pid) {
		char stat[64], st[512] = "";
		FILE *f;

		/* Gone, or at most a zombie waiting for init to reap it. */
		snprintf(stat, sizeof(stat), "/proc/%d/stat", atoi(pid));
		for (int i = 0; i < 100 && access(stat, F_OK) == 0; i++)
			usleep(10000);
		f = fopen(stat, "r");
		if (f && !fgets(st, sizeof(st), f))
			st[0] = '\0';
		if (f)
			fclose(f);
		CHECK(!f || strstr(st, ") Z ") != NULL);
		free(pid);
	}
}

static void test_exec_run_output_cap(void)
{
	struct sx_error err;
	char want[600];

	setup_dir();
	write_file("bin/chatty", "#!/bin/sh\nhead -c 5000000 /dev/zero\n", 0755);
	CHECK(run_error(EXEC_V1 "      command: bin/chatty\n", 0, 0, &err) < 0);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: exec: executable %s "
		 "wrote more than 1048576 bytes to stdout (killed)",
		 tpath("config"), tpath("bin/chatty"));
	CHECK_STR(err.msg, want);
	CHECK(run_error(EXEC_V1 "      command: bin/chatty\n", 0, 100, &err) < 0);
	CHECK(strstr(err.msg, "wrote more than 100 bytes to stdout (killed)") != NULL);
	CHECK(no_children());
}

static void test_exec_run_failures(void)
{
	struct sx_error err;
	char want[1200];

	setup_dir();
	write_file("bin/fail",
		   "#!/bin/sh\necho 'token expired: please log in' >&2\n"
		   "echo second line >&2\nexit 3\n",
		   0755);
	CHECK(run_error(EXEC_V1 "      command: bin/fail\n", 0, 0, &err) < 0);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: exec: executable %s "
		 "failed with exit code 3: token expired: please log in",
		 tpath("config"), tpath("bin/fail"));
	CHECK_STR(err.msg, want);

	CHECK(run_error(EXEC_V1 "      command: sx-no-such-plugin\n"
				"      installHint: install it with apt\n",
			0, 0, &err) < 0);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: exec: executable "
		 "sx-no-such-plugin not found\n\nIt looks like you are trying to use a client-go "
		 "credential plugin that is not installed.\n\nTo learn more about this feature, "
		 "consult the documentation available at:\n      https://kubernetes.io/docs/"
		 "reference/access-authn-authz/authentication/#client-go-credential-plugins"
		 "\n\ninstall it with apt",
		 tpath("config"));
	CHECK_STR(err.msg, want);

	write_file("bin/notexec", "#!/bin/sh\n", 0644);
	CHECK(run_error(EXEC_V1 "      command: bin/notexec\n", 0, 0, &err) < 0);
	CHECK(strstr(err.msg, "exec: executable ") && strstr(err.msg, "bin/notexec not found"));

	write_file("bin/garbage", "#!/bin/sh\necho hello\n", 0755);
	CHECK(run_error(EXEC_V1 "      command: bin/garbage\n", 0, 0, &err) < 0);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: decoding stdout: not "
		 "a JSON object (6 bytes)",
		 tpath("config"));
	CHECK_STR(err.msg, want);

	CHECK(run_error("      apiVersion: client.authentication.k8s.io/v1\n"
			"      interactiveMode: Always\n      command: bin/garbage\n",
			0, 0, &err) < 0);
	snprintf(want, sizeof(want),
		 "kubeconfig %s: users[u].user.exec: exec plugin cannot "
		 "support interactive mode: standard input is not a terminal (interactiveMode "
		 "Always needs a terminal; schedext runs plugins non-interactively)",
		 tpath("config"));
	CHECK_STR(err.msg, want);
	CHECK(no_children());
}

/* A bare command name is looked up in PATH. */
static void test_exec_run_path_lookup(void)
{
	struct sx_kube_config c;
	struct sx_exec_credential cred;
	struct sx_error err;
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL, path[1200];

	setup_dir();
	write_file("bin/sx-test-plugin", DUMP_PLUGIN, 0755);
	snprintf(path, sizeof(path), "/nonexistent::%s:%s", tpath("bin"), old ? old : "/bin");
	setenv("PATH", path, 1);
	CHECK_INT(load(EXEC_V1 "      command: sx-test-plugin\n", &c, &err), 0);
	CHECK_INT(sx_exec_run(c.exec, &c, &cred, &err), 0);
	CHECK_STR(cred.token, "dumped");
	sx_exec_credential_clear(&cred);
	sx_kube_config_clear(&c);
	if (old)
		setenv("PATH", old, 1);
	free(old);
}

/* ---------- the cache ---------- */

/* Each run prints token-<n>, n counting runs (a counter file). */
static void counter_plugin(const char *expiry)
{
	char buf[800];

	snprintf(buf, sizeof(buf),
		 "#!/bin/sh\nf=\"$(dirname \"$0\")/../count\"\nn=$(cat \"$f\" 2>/dev/null || "
		 "echo 0)\nn=$((n+1))\necho $n > \"$f\"\n"
		 "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":"
		 "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"token-'$n'\"%s}}'\n",
		 expiry);
	write_file("bin/counter", buf, 0755);
	unlink(tpath("count"));
}

static void apply_expect(struct sx_exec_auth *a, const char *want_hdr, uint64_t *gen)
{
	struct sx_error err = {0};
	char hdr[256];

	CHECK_INT(sx_exec_auth_apply(a, NULL, hdr, sizeof(hdr), gen, &err), 0);
	CHECK_STR(hdr, want_hdr);
}

static void test_exec_auth_cache_and_401(void)
{
	struct sx_kube_config c;
	struct sx_error err;
	struct sx_exec_auth *a;
	uint64_t g1 = 0, g2 = 0;

	setup_dir();
	counter_plugin("");
	CHECK_INT(load(EXEC_V1 "      command: bin/counter\n", &c, &err), 0);
	a = sx_exec_auth_new(&c);
	apply_expect(a, "Authorization: Bearer token-1", &g1);
	apply_expect(a, "Authorization: Bearer token-1", &g2);
	CHECK_INT(sx_exec_auth_runs(a), 1); /* no expiry: cached until a 401 */
	CHECK(g1 == g2 && g1 != 0);
	sx_exec_auth_invalidate(a, g1);
	sx_exec_auth_invalidate(a, g1); /* a second 401 of the same credential */
	apply_expect(a, "Authorization: Bearer token-2", &g2);
	CHECK(g2 != g1);
	sx_exec_auth_invalidate(a, g1); /* late 401 of the old one: no new run */
	apply_expect(a, "Authorization: Bearer token-2", NULL);
	sx_exec_auth_invalidate(a, 0); /* unknown credential, under a second old */
	apply_expect(a, "Authorization: Bearer token-2", NULL);
	CHECK_INT(sx_exec_auth_runs(a), 2);
	sx_exec_auth_free(a);

	/* Expired on arrival: every use runs the plugin again. */
	counter_plugin(",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"");
	a = sx_exec_auth_new(&c);
	apply_expect(a, "Authorization: Bearer token-1", NULL);
	apply_expect(a, "Authorization: Bearer token-2", NULL);
	sx_exec_auth_free(a);
	/* Valid for an hour: cached. */
	counter_plugin(",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"");
	a = sx_exec_auth_new(&c);
	apply_expect(a, "Authorization: Bearer token-1", NULL);
	apply_expect(a, "Authorization: Bearer token-1", NULL);
	CHECK_INT(sx_exec_auth_runs(a), 1);
	sx_exec_auth_free(a);
	sx_kube_config_clear(&c);
}

static void *apply_thread(void *arg)
{
	struct sx_error err = {0};
	char hdr[256];

	for (int i = 0; i < 20; i++)
		if (sx_exec_auth_apply(arg, NULL, hdr, sizeof(hdr), NULL, &err) != 0 ||
		    strcmp(hdr, "Authorization: Bearer token-1") != 0)
			return (void *)1;
	return NULL;
}

/* Many threads at once: one run, every thread gets its token. */
static void test_exec_auth_threads(void)
{
	struct sx_kube_config c;
	struct sx_error err;
	struct sx_exec_auth *a;
	pthread_t th[8];
	void *ret;

	setup_dir();
	counter_plugin("");
	CHECK_INT(load(EXEC_V1 "      command: bin/counter\n", &c, &err), 0);
	a = sx_exec_auth_new(&c);
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, apply_thread, a);
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], &ret);
		CHECK(ret == NULL);
	}
	CHECK_INT(sx_exec_auth_runs(a), 1);
	CHECK(no_children());
	sx_exec_auth_free(a);
	sx_kube_config_clear(&c);
}

/* Clients built from the same kubeconfig user share one cache (standalone
 * has three clients): one run for all of them. */
static void test_exec_auth_shared(void)
{
	struct sx_kube_config c;
	struct sx_error err;
	struct sx_exec_auth *a, *b;
	struct sx_kube *k1, *k2;
	char *count;

	setup_dir();
	counter_plugin("");
	CHECK_INT(load(EXEC_V1 "      command: bin/counter\n", &c, &err), 0);
	a = sx_exec_auth_new(&c);
	b = sx_exec_auth_new(&c);
	CHECK(a == b);
	sx_kube_config_clear(&c); /* the cache keeps its own copy */
	apply_expect(a, "Authorization: Bearer token-1", NULL);
	apply_expect(b, "Authorization: Bearer token-1", NULL);
	CHECK_INT(sx_exec_auth_runs(b), 1);
	sx_exec_auth_free(a);
	sx_exec_auth_free(b);

	counter_plugin("");
	unsetenv("KUBERNETES_SERVICE_HOST");
	k1 = sx_kube_new(&(struct sx_kube_opts){.kubeconfig = tpath("config")}, &err);
	k2 = sx_kube_new(&(struct sx_kube_opts){.kubeconfig = tpath("config")}, &err);
	CHECK(k1 && k2);
	if (k1 && k2) {
		CHECK_INT(sx_kube_authenticate(k1, &err), 0);
		CHECK_INT(sx_kube_authenticate(k2, &err), 0);
	}
	count = slurp("count");
	CHECK_STR(count, "1\n");
	free(count);
	sx_kube_free(k1);
	sx_kube_free(k2);
}

static void test_zz_cleanup(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	CHECK_INT(tmpdir[0] ? system(cmd) : 0, 0);
}

SX_TESTS(SX_TEST(test_exec_stanza_parsed), SX_TEST(test_exec_stanza_errors),
	 SX_TEST(test_exec_credential_parse), SX_TEST(test_exec_run_env_and_info),
	 SX_TEST(test_exec_run_timeout_kills_group), SX_TEST(test_exec_run_output_cap),
	 SX_TEST(test_exec_run_failures), SX_TEST(test_exec_run_path_lookup),
	 SX_TEST(test_exec_auth_cache_and_401), SX_TEST(test_exec_auth_threads),
	 SX_TEST(test_exec_auth_shared), SX_TEST(test_zz_cleanup))
