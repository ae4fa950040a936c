/* events.k8s.io/v1 writes of the API client (kube.h: sx_kube_create_event,
 * sx_kube_patch_event_series): the bodies client-go's events recorder
 * sends (k8s.io/client-go/tools/events), and what a failure means to its
 * recordEvent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/buf.h"
#include "schedext/kube.h"

/* Appends message truncated to 1024 bytes ending " ..." (kube-scheduler's
 * rule), cutting on a UTF-8 boundary. */
static void put_event_message(struct sx_jw *w, const char *m)
{
	size_t n = strlen(m), cut = 1020;

	if (n <= 1024) {
		sx_jw_str(w, m);
		return;
	}
	while (cut > 0 && ((unsigned char)m[cut] & 0xC0) == 0x80)
		cut--;
	{
		char tmp[1025];

		memcpy(tmp, m, cut);
		memcpy(tmp + cut, " ...", 5);
		sx_jw_str(w, tmp);
	}
}

/* What an event write's failure means to client-go's recordEvent
 * (tools/events/event_broadcaster.go): a 4xx other than 404/409 is a
 * refusal not worth retrying, anything without a 4xx answer may be. */
static int event_code(int rc, long status, struct sx_error *err)
{
	if (rc == 0 || rc == SX_ENOMEM)
		return rc;
	if (status == 404)
		return SX_ENOENT;
	if (status == 409)
		return err->code = SX_EEXIST;
	if (status >= 400 && status < 500 && status != 429)
		return err->code = SX_EINVAL;
	return err->code = SX_EIO;
}

static void put_series(struct sx_jw *w, const struct sx_kube_event *ev)
{
	sx_jw_kobject(w, "series");
	sx_jw_kint(w, "count", (int)ev->series_count);
	sx_jw_kstr(w, "lastObservedTime", ev->last_observed);
	sx_jw_end_object(w);
}

/* The body as tools/events' recorder makes it (recorderImpl.makeEvent):
 * regarding the pod, reportingController the scheduler's name, eventTime
 * a MicroTime, note the message. */
static void put_event(struct sx_buf *b, const struct sx_kube_event *ev, const char *name,
		      const char *event_time)
{
	char instance[129];
	struct sx_jw w;

	snprintf(instance, sizeof(instance), "%s", ev->instance ? ev->instance : "");
	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "apiVersion", "events.k8s.io/v1");
	sx_jw_kstr(&w, "kind", "Event");
	sx_jw_kobject(&w, "metadata");
	sx_jw_kstr(&w, "name", name);
	sx_jw_kstr(&w, "namespace", ev->ns);
	sx_jw_end_object(&w);
	sx_jw_kstr(&w, "eventTime", event_time);
	if (ev->series_count > 0)
		put_series(&w, ev);
	sx_jw_kstr(&w, "reportingController", ev->component ? ev->component : "schedext");
	sx_jw_kstr(&w, "reportingInstance", instance);
	sx_jw_kstr(&w, "action", ev->action);
	sx_jw_kstr(&w, "reason", ev->reason);
	sx_jw_kobject(&w, "regarding");
	sx_jw_kstr(&w, "apiVersion", "v1");
	sx_jw_kstr(&w, "kind", "Pod");
	sx_jw_kstr(&w, "namespace", ev->ns);
	sx_jw_kstr(&w, "name", ev->pod_name);
	sx_jw_kstr(&w, "uid", ev->pod_uid);
	sx_jw_end_object(&w);
	sx_jw_key(&w, "note");
	put_event_message(&w, ev->message ? ev->message : "");
	sx_jw_kstr(&w, "type", ev->type ? ev->type : "Normal");
	sx_jw_end_object(&w);
}

int sx_kube_create_event(struct sx_kube *kube, const struct sx_kube_event *ev, struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/events.k8s.io/v1", ev->ns, "events", NULL, NULL),
	     now[40];
	char name[512];
	struct timespec ts;
	struct sx_buf b;
	long status;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(name, sizeof(name), "%s.%" PRIx64, ev->pod_name,
		 (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec);
	sx_kube_micro_time(now);
	sx_buf_init(&b);
	put_event(&b, ev, ev->name ? ev->name : name, ev->event_time ? ev->event_time : now);
	rc = sx_kube_write_json(kube, "POST", path, "application/json", &b, NULL, &status, err);
	sx_buf_free(&b);
	free(path);
	return event_code(rc, status, err);
}

int sx_kube_patch_event_series(struct sx_kube *kube, const struct sx_kube_event *ev,
			       struct sx_error *err)
{
	char *path = sx_kube_ns_path("/apis/events.k8s.io/v1", ev->ns, "events", ev->name, NULL);
	struct sx_buf b;
	struct sx_jw w;
	long status;
	int rc;

	if (!path)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	put_series(&w, ev);
	sx_jw_end_object(&w);
	rc = sx_kube_write_json(kube, "PATCH", path, "application/strategic-merge-patch+json", &b,
				NULL, &status, err);
	sx_buf_free(&b);
	free(path);
	return event_code(rc, status, err);
}
