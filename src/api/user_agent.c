/* The User-Agent of schedext's API clients, built as client-go builds its
 * default (k8s.io/client-go/rest/config.go DefaultKubernetesUserAgent):
 * "<command>/<version> (<os>/<arch>) kubernetes/<commit>", where command
 * is the base name the program was started by (adjustCommand), version
 * the release without a pre-release suffix (adjustVersion) and commit the
 * first 7 hex digits of the build's commit or "unknown" (adjustCommit).
 * A client with a role appends "/<role>" (rest.AddUserAgent), as
 * kube-scheduler's main client does with "scheduler". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "schedext/kube.h"

#ifndef SX_GIT_COMMIT
#define SX_GIT_COMMIT "unknown" /* set by the Makefile when built from git */
#endif

/* runtime.GOARCH's names for the target this file is compiled for. */
#if defined(__x86_64__)
#define SX_ARCH "amd64"
#elif defined(__aarch64__)
#define SX_ARCH "arm64"
#elif defined(__i386__)
#define SX_ARCH "386"
#elif defined(__arm__)
#define SX_ARCH "arm"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SX_ARCH "ppc64le"
#elif defined(__s390x__)
#define SX_ARCH "s390x"
#elif defined(__riscv) && __riscv_xlen == 64
#define SX_ARCH "riscv64"
#else
#define SX_ARCH "unknown"
#endif

const char *sx_kube_user_agent(const char *role, char *buf, size_t len)
{
	const char *cmd = program_invocation_short_name;
	char commit[8];

	snprintf(commit, sizeof(commit), "%s", SX_GIT_COMMIT[0] ? SX_GIT_COMMIT : "unknown");
	if (!cmd || !*cmd)
		cmd = "unknown";
	snprintf(buf, len, "%s/v%.*s (linux/" SX_ARCH ") kubernetes/%s%s%s", cmd,
		 (int)strcspn(SX_VERSION, "-"), SX_VERSION, commit, role ? "/" : "",
		 role ? role : "");
	return buf;
}
