/* Exec credential plugins (client-go plugin/pkg/client/auth/exec, API
 * group client.authentication.k8s.io v1 and v1beta1): the kubeconfig's
 * command runs as a non-interactive child (fork + execve, never a shell;
 * stdin /dev/null; its own process group), with the process environment
 * plus exec.env plus KUBERNETES_EXEC_INFO. Its stdout is an ExecCredential
 * whose status gives a bearer token and/or a client certificate, cached
 * until status.expirationTimestamp or until the API server answers 401.
 *
 * Bounds: one run lasts at most timeout_ms (30 s; the group is killed) and
 * may print at most max_output bytes (1 MiB). Secrets (the token, the key)
 * are wiped after use and never logged nor put in an error message. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "schedext/buf.h"
#include "schedext/decode.h"
#include "schedext/kube.h"

#define DEFAULT_TIMEOUT_MS 30000u
#define DEFAULT_MAX_OUTPUT ((size_t)1 << 20)
#define MAX_STDERR	   4096
#define MAX_CA_BYTES	   (1 << 20)
#define INFO_ENV	   "KUBERNETES_EXEC_INFO"

extern char **environ;

static const char INSTALL_HELP[] =
	"\n\nIt looks like you are trying to use a client-go credential plugin that is not "
	"installed.\n\nTo learn more about this feature, consult the documentation available "
	"at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
	"#client-go-credential-plugins";

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i])
			memset(v[i], 0, strlen(v[i]));
		free(v[i]);
	}
	free(v);
}

void sx_exec_config_free(struct sx_exec_config *x)
{
	if (!x)
		return;
	free(x->command);
	if (x->args)
		free_list(x->args, x->nargs);
	if (x->env)
		free_list(x->env, x->nenv);
	free(x->api_version);
	free(x->install_hint);
	free(x->cluster_config);
	free(x->user);
	free(x->source);
	free(x);
}

void sx_exec_credential_clear(struct sx_exec_credential *c)
{
	if (c->token)
		memset(c->token, 0, strlen(c->token));
	if (c->key_data)
		memset(c->key_data, 0, c->key_len);
	free(c->token);
	free(c->cert_data);
	free(c->key_data);
	memset(c, 0, sizeof(*c));
}

/* "kubeconfig K: users[U].user.exec: <what>" into err. */
__attribute__((format(printf, 3, 4))) static int
exec_fail(const struct sx_exec_config *x, struct sx_error *err, const char *fmt, ...)
{
	char what[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return sx_error_set(err, SX_EINVAL, "kubeconfig %s: users[%s].user.exec: %s", x->source,
			    x->user, what);
}

/* ---------- the ExecCredential the plugin prints ---------- */

static const char *str_field(const cJSON *obj, const char *key, bool *bad)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsString(v)) {
		*bad = true;
		return NULL;
	}
	return *v->valuestring ? v->valuestring : NULL;
}

static bool is_pem(const char *s)
{
	return strstr(s, "-----BEGIN ") != NULL;
}

/* status of the ExecCredential into c. 0 or negative with err set. */
static int parse_status(const struct sx_exec_config *x, const cJSON *st,
			struct sx_exec_credential *c, struct sx_error *err)
{
	bool bad = false;
	const char *tok = str_field(st, "token", &bad);
	const char *crt = str_field(st, "clientCertificateData", &bad);
	const char *key = str_field(st, "clientKeyData", &bad);
	const char *exp = str_field(st, "expirationTimestamp", &bad);

	if (bad)
		return exec_fail(x, err,
				 "decoding stdout: status: token, clientCertificateData, "
				 "clientKeyData and expirationTimestamp must be strings");
	if (!tok && !crt && !key)
		return exec_fail(x, err, "exec plugin didn't return a token or cert/key pair");
	if (!crt != !key)
		return exec_fail(x, err, "exec plugin returned only certificate or key, not both");
	if (crt && (!is_pem(crt) || !is_pem(key)))
		return exec_fail(
			x, err,
			"failed parsing client key/certificate: "
			"status.clientCertificateData and status.clientKeyData must be PEM");
	if (exp && sx_parse_time(exp, &c->expiry) != 0)
		return exec_fail(x, err,
				 "decoding stdout: status.expirationTimestamp: not an "
				 "RFC 3339 time: \"%.64s\"",
				 exp);
	if (tok && !(c->token = sx_strdup(tok)))
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	if (crt) {
		c->cert_len = strlen(crt);
		c->key_len = strlen(key);
		c->cert_data = sx_strdup(crt);
		c->key_data = sx_strdup(key);
		if (!c->cert_data || !c->key_data)
			return sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	return 0;
}

/* Overwrites every string of a parsed document (it held secrets). */
static void wipe_json(cJSON *j)
{
	for (; j; j = j->next) {
		if (cJSON_IsString(j) && j->valuestring)
			memset(j->valuestring, 0, strlen(j->valuestring));
		wipe_json(j->child);
	}
}

int sx_exec_credential_parse(const struct sx_exec_config *x, const char *data, size_t len,
			     struct sx_exec_credential *c, struct sx_error *err)
{
	cJSON *j = cJSON_ParseWithLength(data, len);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(j, "apiVersion");
	int rc;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(j))
		rc = exec_fail(x, err, "decoding stdout: not a JSON object (%zu bytes)", len);
	else if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ExecCredential") != 0)
		rc = exec_fail(x, err,
			       "decoding stdout: kind: want \"ExecCredential\", got "
			       "\"%.64s\"",
			       cJSON_IsString(kind) ? kind->valuestring : "");
	else if (!cJSON_IsString(api) || strcmp(api->valuestring, x->api_version) != 0)
		rc = exec_fail(x, err,
			       "exec plugin is configured to use API version %s, plugin "
			       "returned version %.100s",
			       x->api_version, cJSON_IsString(api) ? api->valuestring : "");
	else if (!cJSON_IsObject(st))
		rc = exec_fail(x, err, "exec plugin didn't return a status field");
	else
		rc = parse_status(x, st, c, err);
	wipe_json(j);
	cJSON_Delete(j);
	if (rc)
		sx_exec_credential_clear(c);
	return rc;
}

/* ---------- KUBERNETES_EXEC_INFO ---------- */

static char *base64_encode(const unsigned char *p, size_t n)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		size_t left = n - i;
		unsigned v = (unsigned)p[i] << 16;

		v |= left > 1 ? (unsigned)p[i + 1] << 8 : 0;
		v |= left > 2 ? (unsigned)p[i + 2] : 0;
		*o++ = tbl[(v >> 18) & 63];
		*o++ = tbl[(v >> 12) & 63];
		*o++ = left > 1 ? tbl[(v >> 6) & 63] : '=';
		*o++ = left > 2 ? tbl[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The CA bundle (data or file, as client-go's rest config reads it),
 * base64-encoded; NULL when none or unreadable. */
static char *ca_base64(const struct sx_kube_config *cfg)
{
	char *pem = NULL, *out;
	size_t n = 0;
	FILE *f;

	if (cfg->ca_data)
		return base64_encode((const unsigned char *)cfg->ca_data, cfg->ca_len);
	if (!cfg->ca_file || !(f = fopen(cfg->ca_file, "rb")))
		return NULL;
	pem = malloc(MAX_CA_BYTES);
	if (pem)
		n = fread(pem, 1, MAX_CA_BYTES, f);
	fclose(f);
	out = pem && n ? base64_encode((const unsigned char *)pem, n) : NULL;
	free(pem);
	return out;
}

/* spec.cluster (clientauthentication Cluster's JSON names). */
static cJSON *cluster_json(const struct sx_exec_config *x, const struct sx_kube_config *cfg)
{
	cJSON *cl = cJSON_CreateObject(), *conf;
	char *ca = ca_base64(cfg);

	if (!cl)
		goto out;
	cJSON_AddStringToObject(cl, "server", cfg->server ? cfg->server : "");
	if (cfg->tls_server_name)
		cJSON_AddStringToObject(cl, "tls-server-name", cfg->tls_server_name);
	if (cfg->insecure)
		cJSON_AddBoolToObject(cl, "insecure-skip-tls-verify", true);
	if (ca)
		cJSON_AddStringToObject(cl, "certificate-authority-data", ca);
	conf = x->cluster_config ? cJSON_Parse(x->cluster_config) : NULL;
	if (conf && !cJSON_AddItemToObject(cl, "config", conf))
		cJSON_Delete(conf);
out:
	free(ca);
	return cl;
}

char *sx_exec_info(const struct sx_exec_config *x, const struct sx_kube_config *cfg)
{
	cJSON *root = cJSON_CreateObject(), *spec = cJSON_CreateObject(), *cl;
	char *out = NULL;

	if (!root || !spec || !cJSON_AddItemToObject(root, "spec", spec)) {
		cJSON_Delete(spec);
		goto out;
	}
	cJSON_AddStringToObject(root, "kind", "ExecCredential");
	cJSON_AddStringToObject(root, "apiVersion", x->api_version);
	if (x->provide_cluster_info) {
		cl = cluster_json(x, cfg);
		if (!cl || !cJSON_AddItemToObject(spec, "cluster", cl)) {
			cJSON_Delete(cl);
			goto out;
		}
	}
	cJSON_AddBoolToObject(spec, "interactive", false);
	out = cJSON_PrintUnformatted(root);
out:
	cJSON_Delete(root);
	return out;
}

/* ---------- running the plugin ---------- */

/* Everything the child needs, prepared before fork: after fork in a
 * threaded process the child may only make async-signal-safe calls. */
struct child {
	char *path;  /* what execve runs */
	char **argv; /* borrowed strings */
	char **envp; /* borrowed strings but info */
	char *info;  /* "KUBERNETES_EXEC_INFO=..." */
	int devnull;
	int out[2], err[2], fail[2]; /* stdout, stderr, execve's errno */
	int max_fd;		     /* highest fd to close without close_range */
	pid_t pid;
};

/* An executable regular file? */
static bool runnable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* A bare command name through PATH (client-go: exec.LookPath). NULL when
 * not found. */
static char *look_path(const char *cmd)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/'))
		return runnable(cmd) ? sx_strdup(cmd) : NULL;
	for (p = path ? path : ""; *p; p = *end ? end + 1 : end) {
		size_t n;
		char *full;

		end = p + strcspn(p, ":");
		if (end == p)
			continue;
		n = (size_t)(end - p) + strlen(cmd) + 2;
		full = malloc(n);
		if (!full)
			return NULL;
		snprintf(full, n, "%.*s/%s", (int)(end - p), p, cmd);
		if (runnable(full))
			return full;
		free(full);
	}
	return NULL;
}

/* Is environment entry e ("NAME=...") named in list (NULL-terminated)? */
static bool env_named(const char *e, char **list, size_t n)
{
	size_t len = strcspn(e, "=");

	if (len == sizeof(INFO_ENV) - 1 && strncmp(e, INFO_ENV, len) == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (strncmp(list[i], e, len) == 0 && list[i][len] == '=')
			return true;
	return false;
}

/* The process environment, exec.env overriding it, then INFO_ENV. */
static int child_env(struct child *ch, const struct sx_exec_config *x, const char *info)
{
	size_t n = 0, k = 0, len = strlen(info) + sizeof(INFO_ENV) + 1;

	while (environ && environ[n])
		n++;
	ch->envp = calloc(n + x->nenv + 2, sizeof(*ch->envp));
	ch->info = malloc(len);
	if (!ch->envp || !ch->info)
		return SX_ENOMEM;
	snprintf(ch->info, len, "%s=%s", INFO_ENV, info);
	for (size_t i = 0; i < n; i++)
		if (!env_named(environ[i], x->env, x->nenv))
			ch->envp[k++] = environ[i];
	for (size_t i = 0; i < x->nenv; i++)
		ch->envp[k++] = x->env[i];
	ch->envp[k] = ch->info;
	return 0;
}

static int child_argv(struct child *ch, const struct sx_exec_config *x)
{
	ch->argv = calloc(x->nargs + 2, sizeof(*ch->argv));
	if (!ch->argv)
		return SX_ENOMEM;
	ch->argv[0] = x->command;
	for (size_t i = 0; i < x->nargs; i++)
		ch->argv[i + 1] = x->args[i];
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void child_clear(struct child *ch)
{
	close_fd(&ch->devnull);
	for (int i = 0; i < 2; i++) {
		close_fd(&ch->out[i]);
		close_fd(&ch->err[i]);
		close_fd(&ch->fail[i]);
	}
	if (ch->info)
		memset(ch->info, 0, strlen(ch->info));
	free(ch->info);
	free(ch->envp);
	free(ch->argv);
	free(ch->path);
}

/* Closes every fd from 3 up but keep: descriptors some library opened
 * without close-on-exec (a listening socket, a connection) must not leak
 * into the plugin or whatever it leaves running. */
static void close_others(const struct child *ch, int keep)
{
	if (close_range(3, (unsigned)keep - 1, 0) == 0 &&
	    close_range((unsigned)keep + 1, ~0u, 0) == 0)
		return;
	for (int fd = 3; fd <= ch->max_fd; fd++)
		if (fd != keep)
			close(fd);
}

/* In the child: async-signal-safe calls only. */
static void child_exec(const struct child *ch)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	int e;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	if (dup2(ch->devnull, 0) >= 0 && dup2(ch->out[1], 1) >= 0 && dup2(ch->err[1], 2) >= 0) {
		close_others(ch, ch->fail[1]);
		execve(ch->path, ch->argv, ch->envp);
	}
	e = errno;
	if (write(ch->fail[1], &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

/* Starts the child. 0, or an errno from fork or from the child's execve. */
static int child_start(struct child *ch)
{
	int e = 0;
	ssize_t n;

	ch->pid = fork();
	if (ch->pid < 0)
		return errno;
	if (ch->pid == 0)
		child_exec(ch);
	setpgid(ch->pid, ch->pid); /* also here: no race with a kill of the group */
	close_fd(&ch->out[1]);
	close_fd(&ch->err[1]);
	close_fd(&ch->fail[1]);
	close_fd(&ch->devnull);
	/* EOF as execve succeeds (close-on-exec), or the child's errno. */
	do
		n = read(ch->fail[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/* Reaps the child; past the deadline kills its process group first. */
static int child_wait(struct child *ch, uint64_t deadline, bool kill_now)
{
	int status = 0;
	pid_t r;

	for (;;) {
		if (kill_now || sx_now_ns() >= deadline) {
			kill(-ch->pid, SIGKILL);
			kill(ch->pid, SIGKILL);
			kill_now = true;
		}
		r = waitpid(ch->pid, &status, kill_now ? 0 : WNOHANG);
		if (r == ch->pid || (r < 0 && errno != EINTR))
			break;
		if (r == 0) {
			struct timespec ts = {0, 5000000};

			nanosleep(&ts, NULL);
		}
	}
	return status;
}

enum collect_result { COLLECT_OK, COLLECT_TIMEOUT, COLLECT_TOO_BIG, COLLECT_NOMEM };

/* Reads stdout (bounded) and stderr (first MAX_STDERR bytes kept) until
 * both close or the deadline passes. */
static enum collect_result collect(struct child *ch, uint64_t deadline, size_t max,
				   struct sx_buf *out, char *errtext)
{
	struct pollfd p[2] = {{ch->out[0], POLLIN, 0}, {ch->err[0], POLLIN, 0}};
	size_t elen = 0;
	char buf[4096];

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		uint64_t now = sx_now_ns();
		int rc;

		if (now >= deadline)
			return COLLECT_TIMEOUT;
		rc = poll(p, 2, (int)((deadline - now) / 1000000ull) + 1);
		if (rc < 0 && errno != EINTR)
			return COLLECT_TIMEOUT;
		for (int i = 0; rc > 0 && i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
			} else if (i == 0) {
				if (out->len + (size_t)n > max)
					return COLLECT_TOO_BIG;
				sx_buf_put(out, buf, (size_t)n);
				if (out->failed)
					return COLLECT_NOMEM;
			} else if (elen < MAX_STDERR - 1) {
				size_t take = (size_t)n < MAX_STDERR - 1 - elen
						      ? (size_t)n
						      : MAX_STDERR - 1 - elen;

				memcpy(errtext + elen, buf, take);
				elen += take;
				errtext[elen] = '\0';
			}
		}
	}
	return COLLECT_OK;
}

/* The first line of the plugin's stderr, for an error message. */
static void first_line(const char *errtext, char *out, size_t len)
{
	size_t n = strcspn(errtext, "\r\n");

	snprintf(out, len, "%s%.*s", n ? ": " : "", (int)(n < 300 ? n : 300), errtext);
}

static int not_found(const struct sx_exec_config *x, struct sx_error *err)
{
	return exec_fail(x, err, "exec: executable %s not found%s%s%s", x->command, INSTALL_HELP,
			 x->install_hint ? "\n\n" : "", x->install_hint ? x->install_hint : "");
}

/* Why the run failed, from how it ended. */
static int run_result(const struct sx_exec_config *x, enum collect_result cr, int status,
		      const char *errtext, struct sx_error *err)
{
	unsigned timeout = x->timeout_ms ? x->timeout_ms : DEFAULT_TIMEOUT_MS;
	char line[320];

	first_line(errtext, line, sizeof(line));
	if (cr == COLLECT_TIMEOUT)
		return exec_fail(x, err,
				 "exec: executable %s did not finish within %u ms "
				 "(killed)",
				 x->command, timeout);
	if (cr == COLLECT_TOO_BIG)
		return exec_fail(x, err,
				 "exec: executable %s wrote more than %zu bytes to stdout "
				 "(killed)",
				 x->command, x->max_output ? x->max_output : DEFAULT_MAX_OUTPUT);
	if (cr == COLLECT_NOMEM)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	if (WIFSIGNALED(status))
		return exec_fail(x, err, "exec: executable %s was killed by signal %d%s",
				 x->command, WTERMSIG(status), line);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return exec_fail(x, err, "exec: executable %s failed with exit code %d%s",
				 x->command, WIFEXITED(status) ? WEXITSTATUS(status) : -1, line);
	return 0;
}

static int child_prepare(struct child *ch, const struct sx_exec_config *x,
			 const struct sx_kube_config *cfg)
{
	char *info = sx_exec_info(x, cfg);
	int rc = info ? child_env(ch, x, info) : SX_ENOMEM;
	struct rlimit lim;

	free(info);
	if (!rc)
		rc = child_argv(ch, x);
	if (rc)
		return rc;
	lim.rlim_cur = 0;
	getrlimit(RLIMIT_NOFILE, &lim);
	ch->max_fd = lim.rlim_cur > 0 && lim.rlim_cur < 65536 ? (int)lim.rlim_cur - 1 : 65535;
	ch->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ch->devnull < 0 || pipe2(ch->out, O_CLOEXEC) < 0 || pipe2(ch->err, O_CLOEXEC) < 0 ||
	    pipe2(ch->fail, O_CLOEXEC) < 0)
		return SX_EIO;
	return 0;
}

/* Runs the plugin: 0 and its stdout in out, else negative with err set. */
static int run_plugin(const struct sx_exec_config *x, const struct sx_kube_config *cfg,
		      struct sx_buf *out, struct sx_error *err)
{
	struct child ch = {.devnull = -1, .out = {-1, -1}, .err = {-1, -1}, .fail = {-1, -1}};
	unsigned timeout = x->timeout_ms ? x->timeout_ms : DEFAULT_TIMEOUT_MS;
	uint64_t deadline = sx_now_ns() + (uint64_t)timeout * 1000000ull;
	enum collect_result cr;
	char errtext[MAX_STDERR] = "";
	int rc, status;

	ch.path = look_path(x->command);
	if (!ch.path)
		return not_found(x, err);
	rc = child_prepare(&ch, x, cfg);
	if (rc) {
		rc = exec_fail(x, err, "exec: cannot prepare the plugin: %s", strerror(errno));
		goto out;
	}
	rc = child_start(&ch);
	if (rc) {
		if (ch.pid > 0)
			child_wait(&ch, deadline, true);
		rc = rc == ENOENT ? not_found(x, err)
				  : exec_fail(x, err, "exec: %s: %s", x->command, strerror(rc));
		goto out;
	}
	cr = collect(&ch, deadline, x->max_output ? x->max_output : DEFAULT_MAX_OUTPUT, out,
		     errtext);
	status = child_wait(&ch, deadline, cr != COLLECT_OK);
	rc = run_result(x, cr, status, errtext, err);
out:
	child_clear(&ch);
	return rc;
}

int sx_exec_run(const struct sx_exec_config *x, const struct sx_kube_config *cfg,
		struct sx_exec_credential *c, struct sx_error *err)
{
	struct sx_buf out;
	int rc;

	memset(c, 0, sizeof(*c));
	if (x->interactive == SX_EXEC_ALWAYS)
		return exec_fail(x, err,
				 "exec plugin cannot support interactive mode: standard "
				 "input is not a terminal (interactiveMode Always needs a "
				 "terminal; schedext runs plugins non-interactively)");
	sx_buf_init(&out);
	rc = run_plugin(x, cfg, &out, err);
	if (!rc)
		rc = sx_exec_credential_parse(x, out.data ? out.data : "", out.len, c, err);
	if (out.data)
		memset(out.data, 0, out.len);
	sx_buf_free(&out);
	return rc;
}

/* ---------- the cache ---------- */

/* One cache per plugin configuration, shared by every client of the
 * process (client-go's globalCache): standalone's API, events and lease
 * clients run the plugin once per credential, not once each. */
struct sx_exec_auth {
	struct sx_kube_config cfg;	/* own copy: the cluster fields and exec */
	char *key;			/* identity in the registry */
	unsigned refs;			/* under registry_mu */
	struct sx_exec_auth *next;	/* under registry_mu */
	pthread_mutex_t mu;		/* guards the rest; held while the plugin runs */
	struct sx_exec_credential cred; /* valid when gen != 0 */
	uint64_t gen;			/* bumped per successful run; 0 = none yet */
	uint64_t got_ns;		/* when cred was obtained (monotonic) */
	bool stale;			/* a 401 asked for a new one */
	unsigned runs;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sx_exec_auth *registry;

static bool dup_opt(char **dst, const char *src)
{
	*dst = src ? sx_strdup(src) : NULL;
	return !src || *dst;
}

static bool dup_list(char ***dst, char **src, size_t n)
{
	*dst = src ? sx_calloc(n + 1, sizeof(**dst)) : NULL;
	if (src && !*dst)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!dup_opt(&(*dst)[i], src[i]))
			return false;
	return true;
}

static struct sx_exec_config *exec_copy(const struct sx_exec_config *x)
{
	struct sx_exec_config *c = sx_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nargs = x->nargs;
	c->nenv = x->nenv;
	c->interactive = x->interactive;
	c->provide_cluster_info = x->provide_cluster_info;
	c->timeout_ms = x->timeout_ms;
	c->max_output = x->max_output;
	if (dup_opt(&c->command, x->command) && dup_list(&c->args, x->args, x->nargs) &&
	    dup_list(&c->env, x->env, x->nenv) && dup_opt(&c->api_version, x->api_version) &&
	    dup_opt(&c->install_hint, x->install_hint) &&
	    dup_opt(&c->cluster_config, x->cluster_config) && dup_opt(&c->user, x->user) &&
	    dup_opt(&c->source, x->source))
		return c;
	sx_exec_config_free(c);
	return NULL;
}

/* What the plugin's runs depend on: the exec stanza and the cluster. */
static char *auth_key(const struct sx_kube_config *cfg)
{
	const struct sx_exec_config *x = cfg->exec;
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_printf(&b, "%s\n%s\n%s\n%s\n%d%d%u/%zu\n%s\n%s\n", x->source, x->user, x->command,
		      x->api_version, (int)x->interactive, x->provide_cluster_info, x->timeout_ms,
		      x->max_output, x->install_hint ? x->install_hint : "",
		      x->cluster_config ? x->cluster_config : "");
	for (size_t i = 0; i < x->nargs; i++)
		sx_buf_printf(&b, "a%zu=%s\n", strlen(x->args[i]), x->args[i]);
	for (size_t i = 0; i < x->nenv; i++)
		sx_buf_printf(&b, "e%zu=%s\n", strlen(x->env[i]), x->env[i]);
	sx_buf_printf(&b, "%s\n%s\n%d\n%s\n%zu:", cfg->server ? cfg->server : "",
		      cfg->tls_server_name ? cfg->tls_server_name : "", cfg->insecure,
		      cfg->ca_file ? cfg->ca_file : "", cfg->ca_len);
	if (cfg->ca_data)
		sx_buf_put(&b, cfg->ca_data, cfg->ca_len);
	if (b.failed) {
		sx_buf_free(&b);
		return NULL;
	}
	return sx_buf_take(&b, NULL);
}

static void auth_destroy(struct sx_exec_auth *a)
{
	sx_exec_credential_clear(&a->cred);
	sx_kube_config_clear(&a->cfg);
	free(a->key);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* A new cache holding its own copy of what running the plugin needs. */
static struct sx_exec_auth *auth_create(const struct sx_kube_config *cfg, char *key)
{
	struct sx_exec_auth *a = sx_calloc(1, sizeof(*a));

	if (!a) {
		free(key);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	a->key = key;
	a->refs = 1;
	a->cfg.insecure = cfg->insecure;
	a->cfg.ca_len = cfg->ca_len;
	a->cfg.ca_data = cfg->ca_data ? malloc(cfg->ca_len + 1) : NULL;
	if (a->cfg.ca_data) {
		memcpy(a->cfg.ca_data, cfg->ca_data, cfg->ca_len);
		a->cfg.ca_data[cfg->ca_len] = '\0';
	}
	a->cfg.exec = exec_copy(cfg->exec);
	if ((cfg->ca_data && !a->cfg.ca_data) || !a->cfg.exec ||
	    !dup_opt(&a->cfg.server, cfg->server) || !dup_opt(&a->cfg.ca_file, cfg->ca_file) ||
	    !dup_opt(&a->cfg.tls_server_name, cfg->tls_server_name)) {
		auth_destroy(a);
		return NULL;
	}
	return a;
}

struct sx_exec_auth *sx_exec_auth_new(const struct sx_kube_config *cfg)
{
	char *key = auth_key(cfg);
	struct sx_exec_auth *a;

	if (!key)
		return NULL;
	pthread_mutex_lock(&registry_mu);
	for (a = registry; a && strcmp(a->key, key) != 0; a = a->next)
		;
	if (a) {
		a->refs++;
		free(key);
	} else if ((a = auth_create(cfg, key))) {
		a->next = registry;
		registry = a;
	}
	pthread_mutex_unlock(&registry_mu);
	return a;
}

void sx_exec_auth_free(struct sx_exec_auth *a)
{
	struct sx_exec_auth **pp;
	bool last;

	if (!a)
		return;
	pthread_mutex_lock(&registry_mu);
	last = --a->refs == 0;
	for (pp = &registry; last && *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_mu);
	if (last)
		auth_destroy(a);
}

static bool expired(const struct sx_exec_credential *c)
{
	return c->expiry != 0 && (int64_t)time(NULL) >= c->expiry;
}

/* Runs the plugin with a->mu held; keeps the old credential on failure. */
static int refresh_locked(struct sx_exec_auth *a, struct sx_error *err)
{
	const struct sx_exec_config *x = a->cfg.exec;
	struct sx_exec_credential c;
	int rc;

	a->runs++;
	rc = sx_exec_run(x, &a->cfg, &c, err);
	if (rc)
		return rc;
	sx_exec_credential_clear(&a->cred);
	a->cred = c;
	a->gen++;
	a->got_ns = sx_now_ns();
	a->stale = false;
	if (c.expiry)
		sx_log(1, "exec credential plugin %s (user %s): new credential, expires in %lld s",
		       x->command, x->user, (long long)(c.expiry - (int64_t)time(NULL)));
	else
		sx_log(1, "exec credential plugin %s (user %s): new credential, no expiry",
		       x->command, x->user);
	return 0;
}

int sx_exec_auth_apply(struct sx_exec_auth *a, void *h, char *hdr, size_t len, uint64_t *gen,
		       struct sx_error *err)
{
	int rc = 0;

	hdr[0] = '\0';
	pthread_mutex_lock(&a->mu);
	if (a->gen == 0 || a->stale || expired(&a->cred))
		rc = refresh_locked(a, err);
	if (!rc) {
		if (a->cred.token)
			snprintf(hdr, len, "Authorization: Bearer %s", a->cred.token);
		if (a->cred.cert_data && h)
			sx_curl_set_pems(h, &(struct sx_tls_pems){.cert_data = a->cred.cert_data,
								  .cert_len = a->cred.cert_len,
								  .key_data = a->cred.key_data,
								  .key_len = a->cred.key_len});
		if (gen)
			*gen = a->gen;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

void sx_exec_auth_invalidate(struct sx_exec_auth *a, uint64_t gen)
{
	pthread_mutex_lock(&a->mu);
	if (gen ? gen == a->gen : sx_now_ns() - a->got_ns > 1000000000ull)
		a->stale = true;
	pthread_mutex_unlock(&a->mu);
}

unsigned sx_exec_auth_runs(struct sx_exec_auth *a)
{
	unsigned n;

	pthread_mutex_lock(&a->mu);
	n = a->runs;
	pthread_mutex_unlock(&a->mu);
	return n;
}
