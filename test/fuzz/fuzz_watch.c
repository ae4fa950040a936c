/* WATCH response bodies: newline-delimited {"type","object"} events, fed to
 * a Node and a Pod informer's event handler as curl delivers them. */
#define REPLAY	      sx_informer_replay_watch
#define REPLAY_ATOMIC 0 /* events before a broken one stay applied */
#include "informer_target.h"
