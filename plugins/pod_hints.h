/* Event tables of PodTopologySpread and InterPodAffinity (pod_hints.c). */
#ifndef SCHEDEXT_PLUGINS_POD_HINTS_H
#define SCHEDEXT_PLUGINS_POD_HINTS_H

#include "schedext/plugin.h"

extern const struct sx_event_reg sx_events_pod_topology_spread[];
extern const struct sx_event_reg sx_events_inter_pod_affinity[];

#endif /* SCHEDEXT_PLUGINS_POD_HINTS_H */
