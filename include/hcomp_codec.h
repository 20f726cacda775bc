/* The codec interface: one struct of function pointers per codec, found by
 * numeric id (the id is stored on disk and never changes) or by name. */
#ifndef HCOMP_CODEC_H
#define HCOMP_CODEC_H

#include <limits.h>
#include <stddef.h>
#include "hcomp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On-disk codec ids (docs/FORMAT.md). Append only. */
enum hcomp_codec_id {
    HCOMP_CODEC_NONE = 0,
    HCOMP_CODEC_LZ4 = 1,
    HCOMP_CODEC_ZSTD = 2,
    HCOMP_CODEC_ZLIB = 3,
    HCOMP_CODEC_BZIP2 = 4,
    HCOMP_CODEC_BROTLI = 5,
    HCOMP_CODEC_SNAPPY = 6,
    HCOMP_CODEC_LZMA = 7,
    HCOMP_CODEC_BLOSC_LZ4 = 8,   /* c-blosc 1 chunks: the element transform inside */
    HCOMP_CODEC_BLOSC_ZSTD = 9,
    HCOMP_CODEC_BLOSC2_LZ4 = 10, /* c-blosc2 chunks: the filter pipeline inside */
    HCOMP_CODEC_BLOSC2_ZSTD = 11,
    HCOMP_CODEC_COUNT
};

/* The element transforms a typed codec applies inside its blocks (compress_typed). */
enum hcomp_shuffle {
    HCOMP_SHUFFLE_NONE = 0,
    HCOMP_SHUFFLE_BYTE = 1,     /* byte k of every element together */
    HCOMP_SHUFFLE_BIT = 2,      /* bit k of every element together (bitshuffle) */
    HCOMP_SHUFFLE_BYTEDELTA = 3, /* byte shuffle, then each byte plane delta-coded (c-blosc2) */
    HCOMP_SHUFFLE_DELTA = 4     /* XOR against the chunk's first block, then byte shuffle
                                   (c-blosc2) */
};

/* Pass as level to use the codec's default level. */
#define HCOMP_LEVEL_DEFAULT INT_MIN

typedef struct hcomp_codec {
    unsigned id;
    const char *name;
    int level_min, level_max, level_default; /* all 0 for codecs without levels */
    /* Largest output compress() can produce for src_len input bytes. */
    size_t (*bound)(size_t src_len);
    /* Compress src into dst (dst_cap >= bound(src_len) always suffices). On success
     * sets *dst_len and returns HCOMP_OK; a level outside [level_min, level_max] is
     * clamped. Thread-safe. */
    int (*compress)(const void *src, size_t src_len, void *dst, size_t dst_cap,
                    size_t *dst_len, int level);
    /* Decompress exactly dst_len bytes. Safe on hostile input: never writes past
     * dst_len, returns HCOMP_E_CORRUPT when src is not a valid stream that decodes to
     * exactly dst_len bytes. Thread-safe. */
    int (*decompress)(const void *src, size_t src_len, void *dst, size_t dst_len);
    /* Only codecs that transform typed elements themselves (c-blosc and c-blosc2 chunks);
     * NULL for the others. compress() is compress_typed() with no shuffle. typesize is the
     * element size (1..255), shuffle an enum hcomp_shuffle (the c-blosc 1 codecs take none,
     * byte and bit only: HCOMP_E_INVAL for the others). decompress_typed() is decompress() that also
     * fails (HCOMP_E_CORRUPT) unless the stream says it was made with this transform. */
    int (*compress_typed)(const void *src, size_t src_len, void *dst, size_t dst_cap,
                          size_t *dst_len, int level, unsigned typesize, int shuffle);
    int (*decompress_typed)(const void *src, size_t src_len, void *dst, size_t dst_len,
                            unsigned typesize, int shuffle);
} hcomp_codec;

HCOMP_API const hcomp_codec *hcomp_codec_by_id(unsigned id);       /* NULL if unknown */
HCOMP_API const hcomp_codec *hcomp_codec_by_name(const char *name); /* NULL if unknown */
HCOMP_API size_t hcomp_codec_count(void);
HCOMP_API const hcomp_codec *hcomp_codec_at(size_t index);          /* by index, 0..count-1 */

/* Parse "name" or "name:level" (e.g. "zstd:3"). Fills *codec and *level (level is
 * HCOMP_LEVEL_DEFAULT when absent). Unknown names and out-of-range levels are errors. */
HCOMP_API int hcomp_codec_parse(const char *spec, const hcomp_codec **codec, int *level,
                      hcomp_error *err);

#ifdef __cplusplus
}
#endif
#endif
