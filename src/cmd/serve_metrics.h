/* The metrics `schedext serve` adds to the framework's: client-go's
 * rest_client_* (fed by every API client of the process), leader election,
 * build info, and the zero series of extender mode (serve_metrics.c). */
#ifndef SCHEDEXT_CMD_SERVE_METRICS_H
#define SCHEDEXT_CMD_SERVE_METRICS_H

#include <stdbool.h>

struct sx_config;
struct sx_metrics;
struct sx_serve_metrics;

/* Defines the families and their first series, and hooks the API
 * clients (sx_kube_set_observer) to the rest_client_* handles it returns
 * (NULL when m is NULL or out of memory: API calls are not counted); m
 * must outlive every client. lease_name: leader_election_master_status{name}.
 * extender_only: no scheduling loop; every scheduler_* family gets zero
 * series for each profile (the loop, when running, makes its own). */
struct sx_serve_metrics *sx_serve_metrics_init(struct sx_metrics *m, const struct sx_config *cfg,
					       const char *lease_name, bool extender_only);
/* Unhooks the API clients (before m is freed). A request already in
 * flight may still count into the handles: free them with
 * sx_serve_metrics_free only once every API client has stopped. */
void sx_serve_metrics_stop(void);
void sx_serve_metrics_free(struct sx_serve_metrics *sm);

#endif
