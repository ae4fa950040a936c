/* Runs a fuzz target without libFuzzer (make test): every file given on the
 * command line, or with no arguments every file of
 * test/fuzz/corpus/FUZZ_NAME/ and test/fuzz/regressions/FUZZ_NAME/ (run from
 * the repository root, as test/run.sh does). Each input is copied into a
 * malloc'd buffer of its exact size, as libFuzzer does. Prints
 * "<name>: N inputs replayed"; a failing input aborts. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"name\""
#endif

static int run_file(const char *path)
{
	struct stat st;
	FILE *f;
	uint8_t *buf;
	size_t n;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 1;
}

static int run_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), done = 0;
	char path[4096];

	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			done += run_file(path);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return done;
}

int main(int argc, char **argv)
{
	int done = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			done += run_dir(argv[i]) + run_file(argv[i]);
	} else {
		done += run_dir("test/fuzz/corpus/" FUZZ_NAME);
		done += run_dir("test/fuzz/regressions/" FUZZ_NAME);
	}
	printf("fuzz replay %s: %d inputs replayed\n", FUZZ_NAME, done);
	return done > 0 ? 0 : 1;
}
