/* Exact option names (opts.h). */
#include "opts.h"

#include <stdio.h>
#include <string.h>

static const struct option *find_long(const struct option *opts, const char *name, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

int sx_opts_exact(int argc, char **argv, int first, const struct option *opts, const char *shorts,
		  char *msg, size_t msglen)
{
	for (int i = first; i < argc; i++) {
		const char *a = argv[i], *eq;
		const struct option *o;

		if (strcmp(a, "--") == 0)
			return 0;
		if (a[0] != '-' || a[1] == '\0')
			continue; /* a positional argument (or "-") */
		if (a[1] != '-') {
			const char *s = strchr(shorts, a[1]);
			/* "-n VALUE": the value is the next argument; "-nVALUE" is one */
			if (s && s[1] == ':' && a[2] == '\0')
				i++;
			continue; /* getopt_long reports unknown short options */
		}
		eq = strchr(a + 2, '=');
		o = find_long(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		if (!o) {
			snprintf(msg, msglen, "unknown option '%.*s'",
				 (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
			return -1;
		}
		if (o->has_arg == no_argument && eq) {
			snprintf(msg, msglen, "option '--%s' takes no value", o->name);
			return -1;
		}
		if (o->has_arg == required_argument && !eq && ++i >= argc) {
			snprintf(msg, msglen, "option '--%s' needs a value", o->name);
			return -1;
		}
	}
	return 0;
}
