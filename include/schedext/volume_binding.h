/* What the VolumeBinding plugin needs from the process it runs in
 * (upstream volumebinding/volume_binding.go): its PreBind writes claimRefs and
 * selected-node annotations through an API client and waits for the PV
 * controller by reading the live cache. The standalone loop installs both
 * (the extender and explain never run PreBind).
 *
 * Threads: all three may be called from any thread.
 */
#ifndef SCHEDEXT_VOLUME_BINDING_H
#define SCHEDEXT_VOLUME_BINDING_H

struct sx_kube;
struct sx_cache;

/* Installs (or, with NULLs, removes) the client and cache. Both stay owned
 * by the caller and must outlive every binding cycle started while they
 * were installed; removing them wakes every waiting PreBind, which then
 * fails ("scheduler shutting down"). */
void sx_volume_binding_set_env(struct sx_kube *kube, struct sx_cache *cache);

/* A PersistentVolume or PersistentVolumeClaim changed in the cache: wakes
 * waiting PreBinds to look again (they also look every second). Cheap;
 * may be called under the cache lock. */
void sx_volume_binding_notify(void);

#endif /* SCHEDEXT_VOLUME_BINDING_H */
