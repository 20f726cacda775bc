/* Internal to codecs/: the codec structs the registry lists, plus small helpers
 * every codec file shares (kept static inline so each codec stays one file). */
#ifndef HCOMP_CODECS_INTERNAL_H
#define HCOMP_CODECS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_codec.h"
#include "hcomp_error.h"

extern const hcomp_codec hcomp_codec_none;
extern const hcomp_codec hcomp_codec_lz4;
extern const hcomp_codec hcomp_codec_zstd;
extern const hcomp_codec hcomp_codec_zlib;
extern const hcomp_codec hcomp_codec_bzip2;
extern const hcomp_codec hcomp_codec_brotli;
extern const hcomp_codec hcomp_codec_snappy;
extern const hcomp_codec hcomp_codec_lzma;
extern const hcomp_codec hcomp_codec_blosc_lz4;
extern const hcomp_codec hcomp_codec_blosc_zstd;
extern const hcomp_codec hcomp_codec_blosc2_lz4;
extern const hcomp_codec hcomp_codec_blosc2_zstd;

/* Libraries whose stream APIs count in 32-bit units (zlib, bzip2) are fed at most
 * this many bytes per call, so buffers above 4 GiB work instead of being truncated.
 * Overridable only so tests can exercise the chunk loops with small buffers. */
#ifndef HCOMP_CODEC_CHUNK
#define HCOMP_CODEC_CHUNK ((size_t)1 << 30)
#endif

/* The level to use: HCOMP_LEVEL_DEFAULT selects c's default, others are clamped. */
static inline int hcomp_codec_level_(int level, const hcomp_codec *c)
{
    if (level == HCOMP_LEVEL_DEFAULT)
        return c->level_default;
    if (level < c->level_min)
        return c->level_min;
    return level > c->level_max ? c->level_max : level;
}

/* a + b, saturating: bound() must never wrap to a small number for huge inputs. */
static inline size_t hcomp_codec_sat_add_(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Argument checks shared by every compress/decompress. A NULL pointer is only
 * acceptable with a zero length. */
static inline int hcomp_codec_args_ok_(const void *src, size_t src_len, const void *dst,
                                       size_t dst_len)
{
    return (src != NULL || src_len == 0) && (dst != NULL || dst_len == 0);
}

/* Libraries differ on whether NULL is fine for an empty buffer (and memcpy(NULL, .., 0)
 * is undefined), so an empty buffer is replaced by a caller-provided local byte
 * (local, not a shared static, so concurrent calls never share a writable byte). */
#define HCOMP_IN_(p, local) ((p) != NULL ? (const void *)(p) : (const void *)&(local))
#define HCOMP_OUT_(p, local) ((p) != NULL ? (void *)(p) : (void *)&(local))

#endif
