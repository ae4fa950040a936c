/* FitError: the message of a cycle in which no node fits
 * (upstream framework/types.go FitError.Error). Implemented in src/framework/fit_error.c.
 */
#ifndef SCHEDEXT_FIT_ERROR_H
#define SCHEDEXT_FIT_ERROR_H

struct sx_cycle_result;

/* The FitError message (FitError.Error) for a result whose nodes all
 * failed; post_filter_msg may be NULL. Caller frees. */
char *sx_fit_error_message(const struct sx_cycle_result *res, const char *post_filter_msg);

#endif /* SCHEDEXT_FIT_ERROR_H */
