/* A wait a PreBind makes on its profile's handle (handle.h): woken by the
 * cache events of the kinds it names (upstream: the informer handlers
 * that feed the state a PreBind polls), by the environment coming or
 * going (shutdown detaches the cache) and by sx_handle_wake (a PreBind
 * cancelled by preemption). Shared by VolumeBinding's wait for its
 * volumes and DynamicResources' wait for device binding conditions.
 * Thread-safe: any number of bind workers wait on one waiter; the
 * handle's listeners notify it from any thread. */
#ifndef SCHEDEXT_PLUGINS_HANDLE_WAITER_H
#define SCHEDEXT_PLUGINS_HANDLE_WAITER_H

#include <stdbool.h>
#include <stdint.h>

struct sx_cache;
struct sx_handle;
struct sx_waiter;

/* A waiter listening on h for the kinds in `kinds` (bit 1 << enum
 * sx_kind); h NULL: never notified (plugins built alone). NULL when out
 * of memory or h's listener table is full. */
struct sx_waiter *sx_waiter_new(struct sx_handle *h, uint64_t kinds);
/* Stops listening and frees w (no wait may be running on it). */
void sx_waiter_free(struct sx_waiter *w);
/* The notification count, to pass to sx_waiter_wait. */
uint64_t sx_waiter_gen(struct sx_waiter *w);
/* CLOCK_MONOTONIC nanoseconds (the clock of until_ns below). */
uint64_t sx_waiter_now_ns(void);
/* Sleeps until a notification newer than *gen or until_ns, then sets *gen
 * to the current count and *cache (may be NULL) to the handle's live
 * cache. false when the cache is gone (the scheduler is stopping, or no
 * environment). */
bool sx_waiter_wait(struct sx_waiter *w, uint64_t *gen, uint64_t until_ns, struct sx_cache **cache);

#endif /* SCHEDEXT_PLUGINS_HANDLE_WAITER_H */
