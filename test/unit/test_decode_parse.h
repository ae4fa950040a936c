/* Shared by the decode tests: JSON literals written with single quotes,
 * turned into double quotes before parsing so the C strings stay readable. */
#ifndef SCHEDEXT_TEST_DECODE_PARSE_H
#define SCHEDEXT_TEST_DECODE_PARSE_H

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The parsed tree (caller deletes it); fails the test when it does not parse. */
static inline cJSON *parse(const char *text)
{
	char *s = strdup(text);
	cJSON *j;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = cJSON_Parse(s);
	free(s);
	if (!j)
		sx_test_fail(__FILE__, __LINE__, "test JSON does not parse: %.60s", text);
	return j;
}

#endif /* SCHEDEXT_TEST_DECODE_PARSE_H */
