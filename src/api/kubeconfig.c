/* Connection settings: kubeconfig files (KUBECONFIG lists, first-wins
 * merge, relative paths) and in-cluster service-account config
 * (upstream client-go tools/clientcmd/loader.go and rest/config.go InClusterConfig).
 *
 * Secrets (tokens, keys) are copied into the config but never logged or put
 * into error messages. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedext/decode.h"
#include "schedext/kube.h"

#define MAX_CONFIG_FILES 16
#define MAX_CONFIG_BYTES (4 << 20)
#define MAX_PEM_BYTES	 (1 << 20)
#define MAX_TOKEN_BYTES	 (64 << 10)
#define DEFAULT_SA_DIR	 "/var/run/secrets/kubernetes.io/serviceaccount"

/* One parsed kubeconfig file: its root mapping and directory. */
struct cfg_file {
	cJSON *docs; /* owns root */
	const cJSON *root;
	char *path;
	char *dir;
};

void sx_kube_config_clear(struct sx_kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->source);
	free(cfg->context);
	free(cfg->namespace);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->cert_file);
	free(cfg->cert_data);
	if (cfg->key_data)
		memset(cfg->key_data, 0, cfg->key_len);
	free(cfg->key_file);
	free(cfg->key_data);
	if (cfg->token)
		memset(cfg->token, 0, strlen(cfg->token));
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->tls_server_name);
	sx_exec_config_free(cfg->exec);
	memset(cfg, 0, sizeof(*cfg));
}

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

char *sx_base64_decode(const char *in, size_t *out_len)
{
	size_t n = strlen(in), o = 0;
	unsigned acc = 0;
	int bits = 0, pad = 0;
	char *out = malloc(n / 4 * 3 + 4);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad)
			goto out_bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (pad > 2 || bits >= 6)
		goto out_bad;
	out[o] = '\0';
	*out_len = o;
	return out;
out_bad:
	free(out);
	return NULL;
}

/* Reads a whole file, bounded; NUL-terminated. NULL with errno set. */
static char *read_file_bounded(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, max + 1, f);
	fclose(f);
	if (n > max) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *sx_read_token_file(const char *path)
{
	size_t n;
	char *tok = read_file_bounded(path, MAX_TOKEN_BYTES, &n);

	if (!tok)
		return NULL;
	while (n > 0 && isspace((unsigned char)tok[n - 1]))
		tok[--n] = '\0';
	if (n == 0 || strchr(tok, '\n') || strchr(tok, '\r')) {
		free(tok);
		return NULL;
	}
	return tok;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return sx_strdup(".");
	if (slash == path)
		return sx_strdup("/");
	return sx_strndup(path, (size_t)(slash - path));
}

/* A path from a file, resolved against that file's directory. */
static char *resolve_path(const char *dir, const char *p)
{
	char *out;
	size_t n;

	if (p[0] == '/')
		return sx_strdup(p);
	n = strlen(dir) + strlen(p) + 2;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s/%s", dir, p);
	return out;
}

static const char *get_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* Parses one file's bytes (path names it and anchors its relative paths).
 * 1 = loaded, negative = error. */
static int parse_file(const char *path, const char *data, size_t len, struct cfg_file *cf,
		      struct sx_error *err)
{
	const cJSON *root;

	memset(cf, 0, sizeof(*cf));
	cf->docs = sx_parse_documents(data, len, err);
	if (!cf->docs) {
		char inner[sizeof(((struct sx_error *)0)->msg)];

		snprintf(inner, sizeof(inner), "%s", err ? err->msg : "parse error");
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: %s", path, inner);
	}
	root = cJSON_GetArrayItem(cf->docs, 0);
	if (root && cJSON_IsNull(root))
		root = NULL;
	if (root && !cJSON_IsObject(root)) {
		cJSON_Delete(cf->docs);
		cf->docs = NULL;
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: not a mapping", path);
	}
	cf->root = root;
	cf->path = sx_strdup(path);
	cf->dir = dir_of(path);
	if (!cf->path || !cf->dir) {
		cJSON_Delete(cf->docs);
		free(cf->path);
		free(cf->dir);
		memset(cf, 0, sizeof(*cf));
		return sx_error_set(err, SX_ENOMEM, "kubeconfig %s: out of memory", path);
	}
	return 1;
}

/* Loads one file. 1 = loaded, 0 = missing (skipped), negative = error. */
static int load_file(const char *path, struct cfg_file *cf, struct sx_error *err)
{
	size_t len;
	char *data = read_file_bounded(path, MAX_CONFIG_BYTES, &len);
	int rc;

	memset(cf, 0, sizeof(*cf));
	if (!data && errno == ENOENT)
		return 0;
	if (!data)
		return sx_error_set(err, SX_EIO, "kubeconfig %s: %s", path, strerror(errno));
	rc = parse_file(path, data, len, cf, err);
	free(data);
	return rc;
}

static void free_files(struct cfg_file *files, int n)
{
	for (int i = 0; i < n; i++) {
		cJSON_Delete(files[i].docs);
		free(files[i].path);
		free(files[i].dir);
	}
}

/* The first entry named `name` in list `list` ("clusters", ...) across the
 * files, and the file it came from. The first file defining it wins. */
static const cJSON *find_named(struct cfg_file *files, int n, const char *list, const char *inner,
			       const char *name, struct cfg_file **from)
{
	for (int i = 0; i < n; i++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(files[i].root, list), *e;

		if (!cJSON_IsArray(arr))
			continue;
		cJSON_ArrayForEach(e, arr)
		{
			const char *en = get_str(e, "name");

			if (en && strcmp(en, name) == 0) {
				*from = &files[i];
				return cJSON_GetObjectItemCaseSensitive(e, inner);
			}
		}
	}
	return NULL;
}

static int oom(const struct cfg_file *from, struct sx_error *err)
{
	return sx_error_set(err, SX_ENOMEM, "kubeconfig %s: out of memory", from->path);
}

/* Reads the *-data (base64) or file form of a PEM item; data wins. */
static int load_pem(const cJSON *obj, const char *key, struct cfg_file *from, char **file,
		    char **data, size_t *len, struct sx_error *err)
{
	char dkey[64];
	const char *d, *f;

	snprintf(dkey, sizeof(dkey), "%s-data", key);
	d = get_str(obj, dkey);
	f = get_str(obj, key);
	if (d && *d) {
		*data = sx_base64_decode(d, len);
		if (!*data || *len > MAX_PEM_BYTES)
			return sx_error_set(err, SX_EINVAL, "kubeconfig %s: %s: invalid base64",
					    from->path, dkey);
		return 0;
	}
	if (f && *f) {
		*file = resolve_path(from->dir, f);
		if (!*file)
			return oom(from, err);
		if (access(*file, R_OK) != 0)
			return sx_error_set(err, SX_EIO, "kubeconfig %s: %s: cannot read %s: %s",
					    from->path, key, *file, strerror(errno));
	}
	return 0;
}

static int apply_cluster(const cJSON *cl, struct cfg_file *from, struct sx_kube_config *cfg,
			 struct sx_error *err)
{
	const char *server = get_str(cl, "server"), *sni = get_str(cl, "tls-server-name");
	const cJSON *insecure = cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify");
	char host[256], port[16];
	size_t n;
	int rc;

	if (!server || !*server)
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: cluster.server: missing",
				    from->path);
	if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
		return sx_error_set(err, SX_EINVAL,
				    "kubeconfig %s: cluster.server: not an http(s) URL: %s",
				    from->path, server);
	cfg->server = sx_strdup(server);
	if (!cfg->server)
		return oom(from, err);
	n = strlen(cfg->server);
	while (n > 0 && cfg->server[n - 1] == '/')
		cfg->server[--n] = '\0';
	/* "https:///" strips to the bare scheme, "http://:80" names no host */
	sx_url_hostport(server, host, sizeof(host), port, sizeof(port), NULL);
	if (!host[0])
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: cluster.server: no host: %s",
				    from->path, server);
	cfg->insecure = cJSON_IsTrue(insecure) ||
			(cJSON_IsString(insecure) && strcmp(insecure->valuestring, "true") == 0);
	if (sni && *sni) {
		cfg->tls_server_name = sx_strdup(sni);
		if (!cfg->tls_server_name)
			return oom(from, err);
	}
	rc = load_pem(cl, "certificate-authority", from, &cfg->ca_file, &cfg->ca_data, &cfg->ca_len,
		      err);
	if (rc)
		return rc;
	if (cfg->insecure && (cfg->ca_file || cfg->ca_data))
		return sx_error_set(err, SX_EINVAL,
				    "kubeconfig %s: cluster: specifying a root certificates file "
				    "with the insecure flag is not allowed",
				    from->path);
	return 0;
}

#define EXEC_V1	     "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"

static int exec_error(const struct cfg_file *from, const char *user, const char *field,
		      const char *what, const char *value, struct sx_error *err)
{
	return sx_error_set(err, SX_EINVAL, "kubeconfig %s: users[%s].user.exec.%s: %s%s%.200s%s",
			    from->path, user, field, what, value ? " \"" : "", value ? value : "",
			    value ? "\"" : "");
}

/* exec.args: a list of strings (NULL/absent = none). */
static int exec_args(const cJSON *arr, struct sx_exec_config *x, const struct cfg_file *from,
		     struct sx_error *err)
{
	const cJSON *it;

	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return exec_error(from, x->user, "args", "not a list", NULL, err);
	x->args = sx_calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*x->args));
	if (!x->args)
		return oom(from, err);
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it))
			return exec_error(from, x->user, "args", "not a list of strings", NULL,
					  err);
		x->args[x->nargs] = sx_strdup(it->valuestring);
		if (!x->args[x->nargs++])
			return oom(from, err);
	}
	return 0;
}

/* exec.env: a list of {name, value} into "NAME=value" strings. */
static int exec_env(const cJSON *arr, struct sx_exec_config *x, const struct cfg_file *from,
		    struct sx_error *err)
{
	char what[300];
	const cJSON *it;

	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return exec_error(from, x->user, "env", "not a list", NULL, err);
	x->env = sx_calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*x->env));
	if (!x->env)
		return oom(from, err);
	cJSON_ArrayForEach(it, arr)
	{
		const char *name = get_str(it, "name"), *value = get_str(it, "value");
		size_t n;

		snprintf(what, sizeof(what),
			 "env variable name must be specified for %s to use "
			 "exec authentication plugin",
			 x->user);
		if (!name || !*name || strchr(name, '='))
			return exec_error(from, x->user, "env", what, NULL, err);
		n = strlen(name) + (value ? strlen(value) : 0) + 2;
		x->env[x->nenv] = malloc(n);
		if (!x->env[x->nenv])
			return oom(from, err);
		snprintf(x->env[x->nenv++], n, "%s=%s", name, value ? value : "");
	}
	return 0;
}

/* exec.interactiveMode: required for v1, IfAvailable by default for
 * v1beta1 (clientcmd's defaulting and validation). */
static int exec_mode(const cJSON *e, struct sx_exec_config *x, const struct cfg_file *from,
		     struct sx_error *err)
{
	const char *mode = get_str(e, "interactiveMode");
	char what[300];

	if (!mode || !*mode) {
		x->interactive = SX_EXEC_IF_AVAILABLE;
		if (strcmp(x->api_version, EXEC_V1BETA1) == 0)
			return 0;
		snprintf(what, sizeof(what),
			 "interactiveMode must be specified for %s to use "
			 "exec authentication plugin",
			 x->user);
		return exec_error(from, x->user, "interactiveMode", what, NULL, err);
	}
	if (strcmp(mode, "Never") == 0)
		x->interactive = SX_EXEC_NEVER;
	else if (strcmp(mode, "IfAvailable") == 0)
		x->interactive = SX_EXEC_IF_AVAILABLE;
	else if (strcmp(mode, "Always") == 0)
		x->interactive = SX_EXEC_ALWAYS;
	else {
		snprintf(what, sizeof(what), "invalid interactiveMode for %s:", x->user);
		return exec_error(from, x->user, "interactiveMode", what, mode, err);
	}
	return 0;
}

static bool json_true(const cJSON *v)
{
	return cJSON_IsTrue(v) || (cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0);
}

/* user.exec (client-go api.ExecConfig), validated as clientcmd does. The
 * command is only recorded here; nothing runs until the client's first
 * request. */
static int load_exec(const cJSON *e, const char *user, struct cfg_file *from,
		     struct sx_kube_config *cfg, struct sx_error *err)
{
	const char *api = get_str(e, "apiVersion"), *cmd = get_str(e, "command");
	const char *hint = get_str(e, "installHint");
	struct sx_exec_config *x;
	char what[300];
	int rc;

	if (!e || cJSON_IsNull(e))
		return 0;
	if (!cJSON_IsObject(e))
		return sx_error_set(err, SX_EINVAL,
				    "kubeconfig %s: users[%s].user.exec: not a "
				    "mapping",
				    from->path, user);
	x = cfg->exec = sx_calloc(1, sizeof(*x));
	if (!x || !(x->user = sx_strdup(user)) || !(x->source = sx_strdup(from->path)))
		return oom(from, err);
	if (!cmd || !*cmd) {
		snprintf(what, sizeof(what),
			 "command must be specified for %s to use exec "
			 "authentication plugin",
			 user);
		return exec_error(from, user, "command", what, NULL, err);
	}
	if (!api || !*api) {
		snprintf(what, sizeof(what),
			 "apiVersion must be specified for %s to use exec "
			 "authentication plugin",
			 user);
		return exec_error(from, user, "apiVersion", what, NULL, err);
	}
	if (strcmp(api, EXEC_V1) != 0 && strcmp(api, EXEC_V1BETA1) != 0)
		return exec_error(from, user, "apiVersion", "exec plugin: invalid apiVersion", api,
				  err);
	x->api_version = sx_strdup(api);
	if (strchr(cmd, '/')) {
		while (cmd[0] == '.' && cmd[1] == '/' && cmd[2]) /* as filepath.Join cleans */
			cmd += 2 + strspn(cmd + 2, "/");
		x->command = resolve_path(from->dir, cmd);
	} else {
		x->command = sx_strdup(cmd);
	}
	if (!x->api_version || !x->command || (hint && !(x->install_hint = sx_strdup(hint))))
		return oom(from, err);
	x->provide_cluster_info =
		json_true(cJSON_GetObjectItemCaseSensitive(e, "provideClusterInfo"));
	rc = exec_mode(e, x, from, err);
	if (!rc)
		rc = exec_args(cJSON_GetObjectItemCaseSensitive(e, "args"), x, from, err);
	if (!rc)
		rc = exec_env(cJSON_GetObjectItemCaseSensitive(e, "env"), x, from, err);
	return rc;
}

/* clusters[].cluster.extensions[client.authentication.k8s.io/exec]: passed
 * to a plugin with provideClusterInfo as spec.cluster.config. */
static int exec_cluster_config(const cJSON *cl, struct sx_exec_config *x)
{
	const cJSON *exts = cJSON_GetObjectItemCaseSensitive(cl, "extensions"), *it;

	if (!cJSON_IsArray(exts))
		return 0;
	cJSON_ArrayForEach(it, exts)
	{
		const char *name = get_str(it, "name");
		const cJSON *ext = cJSON_GetObjectItemCaseSensitive(it, "extension");

		if (!name || strcmp(name, "client.authentication.k8s.io/exec") != 0 || !ext)
			continue;
		x->cluster_config = cJSON_PrintUnformatted(ext);
		return x->cluster_config ? 0 : SX_ENOMEM;
	}
	return 0;
}

static int apply_user(const cJSON *u, const char *user, struct cfg_file *from,
		      struct sx_kube_config *cfg, struct sx_error *err)
{
	const char *tok = get_str(u, "token"), *tf = get_str(u, "tokenFile");
	int rc;

	if (!u)
		return 0;
	rc = load_exec(cJSON_GetObjectItemCaseSensitive(u, "exec"), user, from, cfg, err);
	if (!rc)
		rc = load_pem(u, "client-certificate", from, &cfg->cert_file, &cfg->cert_data,
			      &cfg->cert_len, err);
	if (!rc)
		rc = load_pem(u, "client-key", from, &cfg->key_file, &cfg->key_data, &cfg->key_len,
			      err);
	if (rc)
		return rc;
	if ((cfg->cert_file || cfg->cert_data) != (cfg->key_file || cfg->key_data))
		return sx_error_set(err, SX_EINVAL,
				    "kubeconfig %s: user: client-certificate and client-key must "
				    "be given together",
				    from->path);
	if (tok && *tok) {
		cfg->token = sx_strdup(tok);
		if (!cfg->token)
			return oom(from, err);
	}
	if (tf && *tf) {
		cfg->token_file = resolve_path(from->dir, tf);
		if (!cfg->token_file)
			return oom(from, err);
	}
	return 0;
}

static int apply_context(struct cfg_file *files, int n, const char *ctxname,
			 struct sx_kube_config *cfg, struct sx_error *err)
{
	struct cfg_file *cfrom = NULL, *from = NULL;
	const cJSON *ctx = find_named(files, n, "contexts", "context", ctxname, &cfrom);
	const char *cluster, *user, *ns;
	const cJSON *cl, *u;
	int rc;

	if (!ctx || !cJSON_IsObject(ctx))
		return sx_error_set(err, SX_ENOENT, "kubeconfig %s: context \"%s\" not found",
				    files[0].path, ctxname);
	cluster = get_str(ctx, "cluster");
	user = get_str(ctx, "user");
	ns = get_str(ctx, "namespace");
	if (!cluster || !*cluster)
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: contexts[%s].cluster: missing",
				    cfrom->path, ctxname);
	cl = find_named(files, n, "clusters", "cluster", cluster, &from);
	if (!cl || !cJSON_IsObject(cl))
		return sx_error_set(err, SX_ENOENT, "kubeconfig %s: cluster \"%s\" not found",
				    cfrom->path, cluster);
	rc = apply_cluster(cl, from, cfg, err);
	if (rc)
		return rc;
	if (user && *user) {
		u = find_named(files, n, "users", "user", user, &from);
		if (!u)
			return sx_error_set(err, SX_ENOENT, "kubeconfig %s: user \"%s\" not found",
					    cfrom->path, user);
		rc = apply_user(u, user, from, cfg, err);
		if (!rc && cfg->exec && exec_cluster_config(cl, cfg->exec))
			rc = oom(from, err);
		if (rc)
			return rc;
	}
	cfg->source = sx_strdup(cfrom->path);
	cfg->context = sx_strdup(ctxname);
	cfg->namespace = sx_strdup(ns && *ns ? ns : "default");
	if (!cfg->source || !cfg->context || !cfg->namespace)
		return oom(cfrom, err);
	return 0;
}

static const char *current_context(struct cfg_file *files, int n)
{
	for (int i = 0; i < n; i++) {
		const char *c = get_str(files[i].root, "current-context");

		if (c && *c)
			return c;
	}
	return NULL;
}

/* The context (NULL = current-context) resolved over loaded files. */
static int apply_files(struct cfg_file *files, int n, const char *context,
		       struct sx_kube_config *cfg, struct sx_error *err)
{
	if (!context)
		context = current_context(files, n);
	if (!context)
		return sx_error_set(err, SX_EINVAL, "kubeconfig %s: current-context: not set",
				    files[0].path);
	return apply_context(files, n, context, cfg, err);
}

int sx_kubeconfig_parse(const char *data, size_t len, const char *path, const char *context,
			struct sx_kube_config *cfg, struct sx_error *err)
{
	struct cfg_file file;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = parse_file(path, data, len, &file, err);
	if (rc < 0)
		return rc;
	rc = apply_files(&file, 1, context, cfg, err);
	if (rc)
		sx_kube_config_clear(cfg);
	free_files(&file, 1);
	return rc;
}

int sx_kubeconfig_load(const char *paths, const char *context, struct sx_kube_config *cfg,
		       struct sx_error *err)
{
	struct cfg_file files[MAX_CONFIG_FILES];
	char *list = sx_strdup(paths), *save = NULL, *p;
	int n = 0, rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (!list)
		return SX_ENOMEM;
	for (p = strtok_r(list, ":", &save); p && n < MAX_CONFIG_FILES;
	     p = strtok_r(NULL, ":", &save)) {
		rc = load_file(p, &files[n], err);
		if (rc < 0)
			goto out;
		n += rc;
	}
	rc = n == 0 ? sx_error_set(err, SX_ENOENT, "kubeconfig %s: no such file", paths)
		    : apply_files(files, n, context, cfg, err);
out:
	if (rc)
		sx_kube_config_clear(cfg);
	free_files(files, n);
	free(list);
	return rc;
}

int sx_kubeconfig_in_cluster(const char *sa_dir, struct sx_kube_config *cfg, struct sx_error *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char url[512], path[512];
	char *tok;

	memset(cfg, 0, sizeof(*cfg));
	if (!sa_dir)
		sa_dir = DEFAULT_SA_DIR;
	if (!host || !*host || !port || !*port)
		return sx_error_set(err, SX_ENOENT,
				    "in-cluster: KUBERNETES_SERVICE_HOST/PORT not set");
	if (strchr(host, ':'))
		snprintf(url, sizeof(url), "https://[%s]:%s", host, port);
	else
		snprintf(url, sizeof(url), "https://%s:%s", host, port);
	snprintf(path, sizeof(path), "%s/token", sa_dir);
	tok = sx_read_token_file(path);
	if (!tok)
		return sx_error_set(err, SX_EIO, "in-cluster: cannot read token %s", path);
	memset(tok, 0, strlen(tok));
	free(tok);
	cfg->server = sx_strdup(url);
	cfg->token_file = sx_strdup(path);
	snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
	cfg->ca_file = sx_strdup(path);
	snprintf(path, sizeof(path), "%s/namespace", sa_dir);
	cfg->namespace = sx_read_token_file(path);
	if (!cfg->namespace)
		cfg->namespace = sx_strdup("default");
	cfg->source = sx_strdup("in-cluster");
	cfg->context = sx_strdup("");
	return 0;
}

int sx_kubeconfig_resolve(const char *explicit_path, const char *context,
			  struct sx_kube_config *cfg, struct sx_error *err)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char def[1024];

	if (explicit_path && *explicit_path)
		return sx_kubeconfig_load(explicit_path, context, cfg, err);
	if (getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_PORT"))
		return sx_kubeconfig_in_cluster(NULL, cfg, err);
	if (env && *env)
		return sx_kubeconfig_load(env, context, cfg, err);
	if (!home || !*home)
		return sx_error_set(err, SX_ENOENT, "no kubeconfig: $HOME not set");
	snprintf(def, sizeof(def), "%s/.kube/config", home);
	return sx_kubeconfig_load(def, context, cfg, err);
}
