/* Delegated authentication and authorization (src/cmd/authz.h). */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "schedext/buf.h"
#include "schedext/common.h"
#include "schedext/kube.h"
#include "authz.h"

#define CACHE_TTL_S 10.0
#define CACHE_SLOTS 512
#define MAX_TOKEN   8192
#define MAX_ALLOW   32
#define MAX_GROUPS  32
#define ANONYMOUS   "system:anonymous"

/* One authenticated user: what TokenReview said. */
struct user {
	char name[256];
	char uid[128];
	unsigned ngroups;
	char groups[MAX_GROUPS][128];
};

struct authn_entry {
	char *token; /* NULL = empty slot */
	bool ok;
	struct user user;
	double expires;
};

struct authz_entry {
	char *key; /* "user\npath\nverb" */
	bool allowed;
	char reason[160];
	double expires;
};

struct sx_authz {
	struct sx_kube *kube;
	bool allow_remote;
	unsigned nallow;
	char allow[MAX_ALLOW][128];
	pthread_mutex_t mu;
	struct authn_entry authn[CACHE_SLOTS];
	struct authz_entry authz[CACHE_SLOTS];
};

struct sx_authz *sx_authz_new(const struct sx_authz_opts *o)
{
	struct sx_authz *a = sx_calloc(1, sizeof(*a));
	const char *p = o->always_allow ? o->always_allow : SX_AUTHZ_DEFAULT_ALLOW;

	if (!a)
		return NULL;
	a->kube = o->kube;
	a->allow_remote = o->allow_remote;
	pthread_mutex_init(&a->mu, NULL);
	while (*p && a->nallow < MAX_ALLOW) {
		size_t n = strcspn(p, ",");
		if (n && n < sizeof(a->allow[0]))
			snprintf(a->allow[a->nallow++], sizeof(a->allow[0]), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
	}
	return a;
}

void sx_authz_free(struct sx_authz *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < CACHE_SLOTS; i++) {
		free(a->authn[i].token);
		free(a->authz[i].key);
	}
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* An always-allowed path: exact, or a prefix ending in "*", as upstream. */
static bool always_allowed(const struct sx_authz *a, const char *path)
{
	for (unsigned i = 0; i < a->nallow; i++) {
		size_t n = strlen(a->allow[i]);
		if (n && a->allow[i][n - 1] == '*' && strncmp(path, a->allow[i], n - 1) == 0)
			return true;
		if (strcmp(path, a->allow[i]) == 0)
			return true;
	}
	return false;
}

static bool loopback(const struct sockaddr *peer)
{
	if (!peer)
		return false;
	if (peer->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)peer)->sin_addr.s_addr) >> 24) == 127;
	if (peer->sa_family == AF_INET6) {
		const struct in6_addr *ad = &((const struct sockaddr_in6 *)peer)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(ad))
			return true;
		return IN6_IS_ADDR_V4MAPPED(ad) && ad->s6_addr[12] == 127;
	}
	return false;
}

/* ---------- the API calls ---------- */

/* POSTs body to path; the parsed answer or NULL with msg set. */
static cJSON *review(struct sx_authz *a, const char *path, const char *body, char *msg,
		     size_t msglen)
{
	struct sx_error err = {0};
	char *resp = NULL, smsg[512];
	size_t len = 0;
	long status = 0;
	cJSON *out;

	if (sx_kube_request(a->kube, "POST", path, "application/json", body, strlen(body), &status,
			    &resp, &len, &err) < 0) {
		snprintf(msg, msglen, "%s", err.msg);
		free(resp);
		return NULL;
	}
	if (status != 201 && status != 200) {
		sx_kube_status_message(resp, len, status, smsg, sizeof(smsg));
		snprintf(msg, msglen, "%.*s", (int)(msglen ? msglen - 1 : 0), smsg);
		free(resp);
		return NULL;
	}
	out = cJSON_ParseWithLength(resp ? resp : "", len);
	free(resp);
	if (!out)
		snprintf(msg, msglen, "malformed review answer");
	return out;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* TokenReview: 1 authenticated (u filled), 0 not, negative on error. */
static int token_review(struct sx_authz *a, const char *token, struct user *u, char *msg,
			size_t msglen)
{
	struct sx_buf b;
	struct sx_jw w;
	cJSON *ans, *st, *user, *g;
	int rc;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "authentication.k8s.io/v1");
	sx_jw_kstr(&w, "kind", "TokenReview");
	sx_jw_kobject(&w, "spec");
	sx_jw_kstr(&w, "token", token);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	ans = b.failed ? NULL
		       : review(a, "/apis/authentication.k8s.io/v1/tokenreviews", b.data, msg,
				msglen);
	sx_buf_free(&b);
	if (!ans)
		return -1;
	st = cJSON_GetObjectItemCaseSensitive(ans, "status");
	user = cJSON_GetObjectItemCaseSensitive(st, "user");
	rc = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "authenticated")) ? 1 : 0;
	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", jstr(user, "username"));
	snprintf(u->uid, sizeof(u->uid), "%s", jstr(user, "uid"));
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(user, "groups"))
	{
		if (cJSON_IsString(g) && u->ngroups < MAX_GROUPS)
			snprintf(u->groups[u->ngroups++], sizeof(u->groups[0]), "%s",
				 g->valuestring);
	}
	if (rc && !u->name[0])
		rc = 0;
	cJSON_Delete(ans);
	return rc;
}

/* SubjectAccessReview of a non-resource URL: 1 allowed, 0 denied, <0 error. */
static int access_review(struct sx_authz *a, const struct user *u, const char *path,
			 const char *verb, char *reason, size_t rlen, char *msg, size_t msglen)
{
	struct sx_buf b;
	struct sx_jw w;
	cJSON *ans, *st;
	int rc;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "authorization.k8s.io/v1");
	sx_jw_kstr(&w, "kind", "SubjectAccessReview");
	sx_jw_kobject(&w, "spec");
	sx_jw_kstr(&w, "user", u->name);
	if (u->uid[0])
		sx_jw_kstr(&w, "uid", u->uid);
	sx_jw_karray(&w, "groups");
	for (unsigned i = 0; i < u->ngroups; i++)
		sx_jw_str(&w, u->groups[i]);
	sx_jw_end_array(&w);
	sx_jw_kobject(&w, "nonResourceAttributes");
	sx_jw_kstr(&w, "path", path);
	sx_jw_kstr(&w, "verb", verb);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	ans = b.failed ? NULL
		       : review(a, "/apis/authorization.k8s.io/v1/subjectaccessreviews", b.data,
				msg, msglen);
	sx_buf_free(&b);
	if (!ans)
		return -1;
	st = cJSON_GetObjectItemCaseSensitive(ans, "status");
	rc = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "allowed")) ? 1 : 0;
	snprintf(reason, rlen, "%s", jstr(st, "reason"));
	cJSON_Delete(ans);
	return rc;
}

/* ---------- caches ---------- */

/* 1 hit (ok, *u set), 0 miss. */
static int authn_cached(struct sx_authz *a, const char *token, bool *ok, struct user *u)
{
	struct authn_entry *e = &a->authn[hash_str(token) % CACHE_SLOTS];
	int hit = 0;

	pthread_mutex_lock(&a->mu);
	if (e->token && strcmp(e->token, token) == 0 && e->expires > sx_now_s()) {
		*ok = e->ok;
		*u = e->user;
		hit = 1;
	}
	pthread_mutex_unlock(&a->mu);
	return hit;
}

static void authn_store(struct sx_authz *a, const char *token, bool ok, const struct user *u)
{
	struct authn_entry *e = &a->authn[hash_str(token) % CACHE_SLOTS];
	char *copy = strdup(token);

	if (!copy)
		return;
	pthread_mutex_lock(&a->mu);
	free(e->token);
	e->token = copy;
	e->ok = ok;
	e->user = *u;
	e->expires = sx_now_s() + CACHE_TTL_S;
	pthread_mutex_unlock(&a->mu);
}

static int authz_cached(struct sx_authz *a, const char *key, bool *allowed, char *reason,
			size_t rlen)
{
	struct authz_entry *e = &a->authz[hash_str(key) % CACHE_SLOTS];
	int hit = 0;

	pthread_mutex_lock(&a->mu);
	if (e->key && strcmp(e->key, key) == 0 && e->expires > sx_now_s()) {
		*allowed = e->allowed;
		snprintf(reason, rlen, "%s", e->reason);
		hit = 1;
	}
	pthread_mutex_unlock(&a->mu);
	return hit;
}

static void authz_store(struct sx_authz *a, const char *key, bool allowed, const char *reason)
{
	struct authz_entry *e = &a->authz[hash_str(key) % CACHE_SLOTS];
	char *copy = strdup(key);

	if (!copy)
		return;
	pthread_mutex_lock(&a->mu);
	free(e->key);
	e->key = copy;
	e->allowed = allowed;
	snprintf(e->reason, sizeof(e->reason), "%s", reason);
	e->expires = sx_now_s() + CACHE_TTL_S;
	pthread_mutex_unlock(&a->mu);
}

/* ---------- the check ---------- */

/* The user behind the Authorization header: 0, or 401 with msg. */
static unsigned authenticate(struct sx_authz *a, const char *authorization, struct user *u,
			     char *msg, size_t msglen)
{
	const char *token;
	bool ok = false;
	int rc;

	memset(u, 0, sizeof(*u));
	if (!authorization || !*authorization) {
		snprintf(u->name, sizeof(u->name), ANONYMOUS);
		snprintf(u->groups[0], sizeof(u->groups[0]), "system:unauthenticated");
		u->ngroups = 1;
		return 0;
	}
	if (strncasecmp(authorization, "Bearer ", 7) != 0 || !authorization[7] ||
	    strlen(authorization + 7) > MAX_TOKEN) {
		snprintf(msg, msglen, "Unauthorized");
		return 401;
	}
	token = authorization + 7;
	if (!authn_cached(a, token, &ok, u)) {
		char why[600] = "";
		rc = token_review(a, token, u, why, sizeof(why));
		if (rc < 0) {
			sx_log(1, "authentication: TokenReview failed: %s", why);
			snprintf(msg, msglen, "Unauthorized");
			return 401;
		}
		ok = rc == 1;
		authn_store(a, token, ok, u);
	}
	if (!ok) {
		snprintf(msg, msglen, "Unauthorized");
		return 401;
	}
	return 0;
}

static void lower(char *dst, size_t len, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < len; i++)
		dst[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	dst[i] = '\0';
}

unsigned sx_authz_check(struct sx_authz *a, const char *path, const char *method,
			const char *authorization, const struct sockaddr *peer, char *msg,
			size_t msglen)
{
	struct user u;
	char verb[16], key[640], reason[160] = "", why[600] = "";
	bool allowed = false;
	unsigned code;
	int rc;

	if (!a || always_allowed(a, path))
		return 0;
	if (!a->kube) {
		if (a->allow_remote || loopback(peer))
			return 0;
		snprintf(msg, msglen,
			 "forbidden: without a cluster to authorize against, %s is "
			 "served to loopback clients only (see --debug-allow-remote)",
			 path);
		return 403;
	}
	code = authenticate(a, authorization, &u, msg, msglen);
	if (code)
		return code;
	lower(verb, sizeof(verb), method);
	snprintf(key, sizeof(key), "%s\n%s\n%s", u.name, path, verb);
	if (!authz_cached(a, key, &allowed, reason, sizeof(reason))) {
		rc = access_review(a, &u, path, verb, reason, sizeof(reason), why, sizeof(why));
		if (rc < 0)
			sx_log(1, "authorization: SubjectAccessReview failed: %s", why);
		else
			authz_store(a, key, rc == 1, reason);
		allowed = rc == 1;
	}
	if (allowed)
		return 0;
	snprintf(msg, msglen, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s", u.name, verb,
		 path, reason[0] ? ": " : "", reason);
	return 403;
}
