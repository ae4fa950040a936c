/* kubectl-schedext (src/cmd/kubectl.c) and its YAML output. */
#ifndef SCHEDEXT_CMD_KUBECTL_H
#define SCHEDEXT_CMD_KUBECTL_H

#include "schedext/buf.h"

struct cJSON;

/* argv[1] is the subcommand (why, pending, what-if). Exit code. */
int sx_cmd_kubectl(int argc, char **argv);

/* json as a YAML document (block style; strings double-quoted as in JSON,
 * which YAML reads back unchanged). */
void sx_yaml_write(struct sx_buf *b, const struct cJSON *json);

#endif
