/* A growable byte buffer and a streaming JSON writer: replies are written
 * straight into a buffer, never built as cJSON trees.
 *
 * Allocation failures are sticky: after one, the buffer is marked failed
 * (buf->failed) and further writes are ignored, so callers check once at
 * the end.
 */
#ifndef SCHEDEXT_BUF_H
#define SCHEDEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sx_buf {
	char *data; /* NUL-terminated when len > 0 or after sx_buf_cstr */
	size_t len;
	size_t cap;
	bool failed;
};

void sx_buf_init(struct sx_buf *b);
void sx_buf_free(struct sx_buf *b);
void sx_buf_reset(struct sx_buf *b);
void sx_buf_put(struct sx_buf *b, const char *s, size_t n);
void sx_buf_puts(struct sx_buf *b, const char *s);
void sx_buf_putc(struct sx_buf *b, char c);
void sx_buf_printf(struct sx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sx_buf_int(struct sx_buf *b, int64_t v);
/* Takes ownership of the data (caller frees); the buffer is reset. */
char *sx_buf_take(struct sx_buf *b, size_t *len);
const char *sx_buf_cstr(struct sx_buf *b);

/* JSON string literal with escapes (control chars, quotes, backslash;
 * invalid UTF-8 bytes replaced by U+FFFD). */
void sx_json_str(struct sx_buf *b, const char *s);
void sx_json_strn(struct sx_buf *b, const char *s, size_t n);
/* "key": */
void sx_json_key(struct sx_buf *b, const char *key);

#endif /* SCHEDEXT_BUF_H */
