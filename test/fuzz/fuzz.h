/* Shared by the fuzz targets (test/fuzz/README.md). A target is one file
 * test/fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput(); it is built
 * twice: with libFuzzer (make fuzz) and with test/fuzz/replay.c (make test),
 * which replays test/fuzz/corpus/<name>/ and test/fuzz/regressions/<name>/.
 *
 * Inputs arrive as production receives them: `data` is a heap buffer of
 * exactly `size` bytes with no terminator, so any read past the end is an
 * ASan report. Invariant violations abort() through FUZZ_CHECK. */
#ifndef SCHEDEXT_FUZZ_H
#define SCHEDEXT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "schedext/common.h"
#include "schedext/intern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__,       \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Once per process: interning and a silent log. */
static inline void fuzz_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	sx_intern_init();
	sx_log_verbosity = -1;
}

#endif
