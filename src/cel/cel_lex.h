/* CEL tokens (internal to src/cel). */
#ifndef SCHEDEXT_CEL_LEX_H
#define SCHEDEXT_CEL_LEX_H

#include "cel_int.h"

enum cel_tok {
	T_EOF,
	T_ERROR,
	T_INT,
	T_UINT,
	T_DOUBLE,
	T_STRING,
	T_BYTES,
	T_IDENT,
	T_IN,
	T_AND,
	T_OR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_LBRACE,
	T_RBRACE,
	T_DOT,
	T_COMMA,
	T_QUESTION,
	T_COLON,
	T_NOT,
	T_MINUS,
	T_PLUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
};

struct cel_token {
	enum cel_tok kind;
	uint32_t pos;	  /* byte offset */
	const char *text; /* source text (T_ERROR: the message) */
	size_t len;	  /* source length of identifiers and punctuation */
	uint64_t u;	  /* T_INT / T_UINT magnitude */
	bool overflow;	  /* T_INT / T_UINT did not fit 64 bits */
	double d;	  /* T_DOUBLE */
	const char *str;  /* T_STRING / T_BYTES decoded, arena-owned */
	size_t str_len;
};

struct cel_lexer {
	const char *src;
	size_t len;
	size_t pos;
	struct cel_arena *arena;
};

/* Reads the next token into *t; -1 with t->kind == T_ERROR on bad input. */
int cel_lex_next(struct cel_lexer *lx, struct cel_token *t);

#endif /* SCHEDEXT_CEL_LEX_H */
