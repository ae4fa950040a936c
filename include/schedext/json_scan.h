/* Streaming JSON scanning: walks a JSON text in place, without building a
 * tree, validating as it goes.
 *
 * Grammar: RFC 8259, strictly (UTF-8 only, no BOM, no control characters in
 * strings, the four whitespace characters only). On top of it, what cJSON
 * 1.7 would refuse is refused too, so a text this scanner accepts parses
 * with cJSON into the same values: a number of SX_JSON_MAX_NUMBER bytes or
 * more, a \u escape that is a lone or unpaired UTF-16 surrogate. Texts that
 * are valid JSON but refused here (a BOM, a lone surrogate, ...) are rare;
 * callers fall back to cJSON for them.
 *
 * Containers are lazy: sx_json_next_* returns an object or array after
 * reading only its opening byte; the caller either opens it with
 * sx_json_enter (and iterates it) or lets the next call skip it, which
 * validates it byte by byte. Every byte of the text is validated exactly
 * once on either path.
 *
 * Threads: cursors are plain values owned by the caller; no global state.
 */
#ifndef SCHEDEXT_JSON_SCAN_H
#define SCHEDEXT_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* cJSON releases before 1.7.15 copy at most 63 bytes of a number before
 * strtod and fail on longer ones: refused here whatever the version. */
#define SX_JSON_MAX_NUMBER 64
/* Hard cap on the depth a cursor accepts, whatever the caller asks. */
#define SX_JSON_DEPTH_CAP 256

enum sx_json_type {
	SX_JSON_NONE,
	SX_JSON_NULL,
	SX_JSON_BOOL,
	SX_JSON_NUMBER,
	SX_JSON_STRING,
	SX_JSON_ARRAY,
	SX_JSON_OBJECT,
};

/* One value in the text. */
struct sx_json_val {
	enum sx_json_type type;
	const char *p;	 /* first byte (the quote of a string) */
	const char *end; /* past the last byte; NULL for a container not yet consumed */
	bool escaped;	 /* strings: contains a backslash escape */
};

/* Iterates the members of an object, the elements of an array, or the one
 * value of a document. */
struct sx_json_cur {
	const char *p;		    /* next byte to read */
	const char *end;	    /* end of the text */
	const char *bad;	    /* where the text was found malformed, or NULL */
	struct sx_json_cur *parent; /* resumed when this container closes */
	struct sx_json_val last;    /* the value last returned */
	int depth;		    /* containers open, this one included (0: document) */
	int max_depth;		    /* deepest nesting accepted (at most SX_JSON_DEPTH_CAP) */
	char close;		    /* '}', ']' or 0 for the document */
	bool started;		    /* a member/element was returned */
	bool closed;		    /* iteration reached the end */
};

/* Starts a cursor over a whole text of len bytes holding exactly one value
 * (whitespace around it allowed) nested at most max_depth deep. */
void sx_json_doc(struct sx_json_cur *c, const char *text, size_t len, int max_depth);

/* Next element of an array or document cursor. Returns 1 with *v set, 0 when
 * the container (or the document, with nothing but whitespace after its
 * value) ends, -1 when the text is malformed (c->bad set). A container
 * returned earlier and not entered is skipped (and validated) first. */
int sx_json_next(struct sx_json_cur *c, struct sx_json_val *v);

/* Next member of an object cursor: 1 with *key (a string) and *v, 0 at the
 * closing brace, -1 when malformed. */
int sx_json_next_member(struct sx_json_cur *c, struct sx_json_val *key, struct sx_json_val *v);

/* Opens the container c last returned as child. Once child returns 0, c
 * continues after the container and c->last.end is set. */
void sx_json_enter(struct sx_json_cur *c, struct sx_json_cur *child);

/* Consumes the value c last returned (skipping a container not entered or
 * not iterated to its end) and returns its end, or NULL when malformed. */
const char *sx_json_finish(struct sx_json_cur *c);
/* The container c last returned is known to end at end, because the
 * caller validated the same bytes before (src/extender/node_memo.h): c
 * goes on after it without scanning it. Returns end. */
const char *sx_json_consume_known(struct sx_json_cur *c, const char *end);

/* Validates one value starting at p (leading whitespace allowed) with depth
 * containers already open around it. Returns the byte past it or NULL. */
const char *sx_json_skip(const char *p, const char *end, int depth, int max_depth);

/* Decodes the string value s as cJSON would: escapes resolved, cut at the
 * first NUL (cJSON keeps C strings). Writes at most cap bytes (no NUL
 * terminator) into dst and returns the full decoded length, which may exceed
 * cap. s must come from a cursor (validated). */
size_t sx_json_unescape(const struct sx_json_val *s, char *dst, size_t cap);

/* True when the string value s decodes to lit (ASCII case-insensitively
 * when nocase, as strcasecmp). */
bool sx_json_str_eq(const struct sx_json_val *s, const char *lit, bool nocase);

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid
 * (overlong, surrogate, beyond U+10FFFF, truncated). p < end. */
size_t sx_utf8_seq(const unsigned char *p, const unsigned char *end);

/* "object", "array", "string", "number", "boolean" or "null". */
const char *sx_json_type_name(enum sx_json_type t);

#endif /* SCHEDEXT_JSON_SCAN_H */
