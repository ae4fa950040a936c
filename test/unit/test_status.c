/* Plugin status objects. */
#include "harness.h"

#include "schedext/status.h"

static void test_code_names(void)
{
	CHECK_STR(sx_code_name(SX_SUCCESS), "Success");
	CHECK_STR(sx_code_name(SX_ERROR), "Error");
	CHECK_STR(sx_code_name(SX_UNSCHEDULABLE), "Unschedulable");
	CHECK_STR(sx_code_name(SX_UNSCHEDULABLE_AND_UNRESOLVABLE), "UnschedulableAndUnresolvable");
	CHECK_STR(sx_code_name(SX_WAIT), "Wait");
	CHECK_STR(sx_code_name(SX_SKIP), "Skip");
	CHECK_STR(sx_code_name(SX_PENDING), "Pending");
	CHECK_STR(sx_code_name((enum sx_code)99), "Unknown");
	CHECK_STR(sx_code_name((enum sx_code) - 1), "Unknown");
}

static void test_null_is_success(void)
{
	char buf[16] = "junk";

	CHECK_INT(sx_status_code(NULL), SX_SUCCESS);
	CHECK(sx_status_is_success(NULL));
	CHECK(!sx_status_is_rejected(NULL));
	CHECK(sx_status_clone(NULL) == NULL);
	CHECK_STR(sx_status_message(NULL, buf, sizeof(buf)), "");
	sx_status_free(NULL);
}

static void test_reasons(void)
{
	char buf[128];
	struct sx_status *st = sx_status_new(SX_UNSCHEDULABLE, "Insufficient %s", "cpu");

	CHECK(st != NULL);
	CHECK(sx_status_is_rejected(st));
	CHECK(!sx_status_is_success(st));
	CHECK_INT(st->nreasons, 1);
	sx_status_add_reason(st, "Insufficient %s", "memory");
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)), "Insufficient cpu, Insufficient memory");
	/* truncated to the buffer */
	CHECK_STR(sx_status_message(st, buf, 12), "Insufficien");
	for (int i = 0; i < 40; i++)
		sx_status_add_reason(st, "r%d", i);
	CHECK_INT(st->nreasons, SX_STATUS_MAX_REASONS);
	CHECK_STR(st->reasons[SX_STATUS_MAX_REASONS - 1], "r13");
	sx_status_add_reason(st, NULL);
	CHECK_INT(st->nreasons, SX_STATUS_MAX_REASONS);
	sx_status_free(st);
}

static void test_no_reason_and_clone(void)
{
	char buf[64];
	struct sx_status *st = sx_status_new(SX_SKIP, NULL);
	struct sx_status *c;

	CHECK(st != NULL);
	CHECK_INT(st->nreasons, 0);
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)), "");
	CHECK(!sx_status_is_rejected(st));
	sx_status_free(st);

	st = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			   "node(s) didn't match Pod's node affinity/selector");
	st->plugin = "NodeAffinity";
	sx_status_add_reason(st, "second");
	c = sx_status_clone(st);
	sx_status_free(st);
	CHECK(c != NULL);
	CHECK_INT(c->code, SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
	CHECK_STR(c->plugin, "NodeAffinity");
	CHECK_INT(c->nreasons, 2);
	CHECK_STR(sx_status_message(c, buf, sizeof(buf)),
		  "node(s) didn't match Pod's node affinity/selector, second");
	sx_status_free(c);
}

/* Reasons with only %s conversions take a fast path; others go through
 * vasprintf. Both must format exactly as printf does. */
static void test_reason_formats(void)
{
	char buf[128];
	struct sx_status *st;

	st = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			   "node(s) had untolerated taint {%s: %s}", "gpu", "");
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)), "node(s) had untolerated taint {gpu: }");
	sx_status_add_reason(st, "100%% of %s", "y");
	sx_status_add_reason(st, "%d of %s%%", 3, "x");
	CHECK_INT(st->nreasons, 3);
	CHECK_STR(st->reasons[1], "100% of y");
	CHECK_STR(st->reasons[2], "3 of x%");
	sx_status_free(st);

	st = sx_status_new(SX_UNSCHEDULABLE, "%s%s%s", "a", "bc", "");
	CHECK_STR(st->reasons[0], "abc");
	CHECK_STR(sx_status_message(st, buf, 3), "ab");
	sx_status_free(st);
}

/* A shared status survives the runtime's free/set_plugin/add_reason and
 * is released once by its owner (ASan: no leak, no double free). */
static void test_shared(void)
{
	struct sx_status *st = sx_status_share(sx_status_new(SX_UNSCHEDULABLE, "r"), "Mine");
	struct sx_status *copy;
	char buf[64];

	CHECK(st->shared);
	sx_status_set_plugin(st, "Other");
	sx_status_add_reason(st, "more");
	sx_status_free(st);
	sx_status_free(st);
	CHECK_STR(st->plugin, "Mine");
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)), "r");
	copy = sx_status_clone(st); /* an ordinary status */
	CHECK(!copy->shared);
	sx_status_free(copy);
	sx_status_unshare(st);
	CHECK(sx_status_share(NULL, "x") == sx_status_oom());
}

/* A static status (SX_STATUS_STATIC) is shared from the start: the
 * runtime's free/set_plugin/add_reason leave it as it was. */
static void test_static(void)
{
	static struct sx_status st = SX_STATUS_STATIC(SX_UNSCHEDULABLE, "Mine", "r");
	struct sx_status *copy;
	char buf[64];

	sx_status_set_plugin(&st, "Other");
	sx_status_add_reason(&st, "more");
	sx_status_free(&st);
	CHECK(st.shared && sx_status_is_rejected(&st));
	CHECK_STR(st.plugin, "Mine");
	CHECK_STR(sx_status_message(&st, buf, sizeof(buf)), "r");
	copy = sx_status_clone(&st);
	CHECK(!copy->shared);
	CHECK_STR(copy->reasons[0], "r");
	sx_status_free(copy);
}

SX_TESTS(SX_TEST(test_code_names), SX_TEST(test_null_is_success), SX_TEST(test_reasons),
	 SX_TEST(test_no_reason_and_clone), SX_TEST(test_reason_formats), SX_TEST(test_shared),
	 SX_TEST(test_static))
