/* Exact option names for the getopt_long parsers of src/cmd (explain,
 * why, pending, what-if). */
#ifndef SCHEDEXT_CMD_OPTS_H
#define SCHEDEXT_CMD_OPTS_H

#include <getopt.h>
#include <stddef.h>

/* getopt_long accepts any unambiguous prefix of a long option ("--stat"
 * is read as "--state"); kubectl and kube-scheduler (spf13/pflag) accept
 * exact names only, and so does schedext. Checks argv[first..argc) before
 * getopt_long runs: every "--name" or "--name=value" must be a name of
 * opts exactly, and one that takes a value must have one. Values are
 * skipped as getopt_long would take them (the next argument for
 * "--name VALUE" and for a short option of shorts followed by ':'); "--"
 * ends the options. 0, or -1 with msg set ("unknown option '--stat'",
 * "option '--state' needs a value"). */
int sx_opts_exact(int argc, char **argv, int first, const struct option *opts, const char *shorts,
		  char *msg, size_t msglen);

#endif
