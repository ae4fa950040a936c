/* The HTTP server of `schedext serve` (libmicrohttpd): the extender verbs
 * under an optional URL prefix, and the operations endpoints /healthz,
 * /readyz, /version, /metrics, /debug/explain, /debug/cache.
 *
 * Threads: sx_server_start() returns once the socket listens; requests run
 * on MHD's thread pool. sx_server_stop() is called once, from the thread
 * that started it.
 */
#ifndef SCHEDEXT_SERVER_H
#define SCHEDEXT_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

struct sx_extender;
struct sx_informers;
struct sx_server;
struct sx_authz;

/* Default request body limit: a 5000-node NodeList at ~12 KB per node is
 * ~60 MB of JSON. */
#define SX_SERVER_DEFAULT_MAX_BODY ((size_t)64 << 20)
/* under --connection-timeout's default of 30 s, with room to write */
#define SX_SERVER_DEFAULT_DEBUG_BUDGET_S 10.0

struct sx_server_opts {
	const char *listen;	       /* "ADDR:PORT", "[v6]:PORT"; port 0 = any */
	unsigned threads;	       /* MHD thread pool size (>= 1) */
	unsigned max_connections;      /* connection cap */
	unsigned connection_timeout_s; /* idle/slow client timeout */
	size_t max_body_bytes;	       /* larger bodies get 413 */
	const char *url_prefix;	       /* "" or "/scheduler": verbs at prefix + "/filter" */
	/* TLS: PEM contents (not paths), NUL-terminated; NULL = plain HTTP. */
	const char *tls_cert_pem;
	const char *tls_key_pem;
	const char *tls_client_ca_pem; /* non-NULL: clients must present a cert it signed */
	/* --standalone: the Lease name of leader_election_master_status,
	 * copied from the loop's schedext_leader at each scrape; NULL = none */
	const char *lease_name;
	/* --state files, in order: re-read by /debug/whatif; none = live */
	const char *const *state_paths;
	unsigned nstates;
	/* Time one /debug/pending or /debug/whatif request may spend
	 * evaluating pods; the rest are reported as not evaluated. */
	double debug_budget_s; /* 0 = SX_SERVER_DEFAULT_DEBUG_BUDGET_S */
	/* Delegated authn/authz of every endpoint but the verbs (src/cmd/authz.h);
	 * NULL = no check. Not owned; outlives the server. */
	struct sx_authz *authz;
};

/* Starts serving. ex and inf (NULL = always ready, e.g. --state) must
 * outlive the server. NULL with err set when the address cannot be parsed
 * or bound. */
struct sx_server *sx_server_start(const struct sx_server_opts *opts, const struct sx_extender *ex,
				  struct sx_informers *inf, struct sx_error *err);

/* The bound port (useful with port 0). */
uint16_t sx_server_port(const struct sx_server *srv);

/* Graceful stop: stops accepting, waits up to grace_s for requests in
 * flight to finish, then closes every connection and frees. Accepts NULL. */
void sx_server_stop(struct sx_server *srv, double grace_s);

/* `schedext serve [options]`: returns the process exit code (2 on usage
 * errors, 1 on runtime failure, 0 after a graceful shutdown on
 * SIGTERM/SIGINT). */
int sx_cmd_serve(int argc, char **argv);

#endif /* SCHEDEXT_SERVER_H */
