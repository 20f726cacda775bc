/* The environment variables c-blosc2 applies over its caller's settings when it makes a
 * compression context (BLOSC_SHUFFLE, BLOSC_DELTA, BLOSC_TYPESIZE, BLOSC_COMPRESSOR): with
 * one set, a blosc2-* chunk would not be what the piece's record says, so those codecs
 * refuse to encode (codec_blosc2.c checks every chunk it makes), the engine leaves them out
 * of its candidates, and a file whose hint names one fails to open, naming the variable. */
#ifndef HCOMP_BLOSC2_ENV_H
#define HCOMP_BLOSC2_ENV_H

#include <stddef.h>

/* The name of the first such variable set in the environment, else NULL. */
const char *hcomp_blosc2_env_override(void);

#endif
