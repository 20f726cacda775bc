/* "blosc-lz4" and "blosc-zstd": a c-blosc 1 chunk (libblosc, Debian's libblosc-dev) with
 * that compressor inside. A chunk is a 16-byte header and independently compressed
 * blocks; blosc shuffles or bit-shuffles each block's elements before compressing it
 * (SIMD), and records the element size and the shuffle in the header, so a chunk decodes
 * on its own. These are hcomp's only codecs that take the element transform inside
 * (compress_typed); hcomp's own byte shuffle (engine/filter.c) serves the others.
 *
 * Levels 1..9 are blosc's clevel (default 5, blosc's): it sets the block size and the
 * inner codec's level (zstd: 2 clevel - 1, so 1..17). Every call runs on the calling
 * thread alone (numinternalthreads 1): hcomp's pool is the parallelism. The _ctx calls
 * keep no global state, so they are thread-safe without blosc_init(). */
#include <blosc.h>
#include <limits.h>
#include <string.h>
#include "codecs_internal.h"

#define HC_BLOSC_LEVEL_MIN 1
#define HC_BLOSC_LEVEL_MAX 9
#define HC_BLOSC_LEVEL_DEFAULT 5

static size_t blosc_bound(size_t src_len)
{
    /* blosc stores a block it cannot shrink as it is: never more than the header over */
    return hcomp_codec_sat_add_(src_len, BLOSC_MAX_OVERHEAD);
}

static int blosc_shuffle_mode(int shuffle)
{
    return shuffle == HCOMP_SHUFFLE_BIT ? BLOSC_BITSHUFFLE
         : shuffle == HCOMP_SHUFFLE_BYTE ? BLOSC_SHUFFLE : BLOSC_NOSHUFFLE;
}

static int blosc_encode(const hcomp_codec *self, const char *inner, const void *src,
                        size_t src_len, void *dst, size_t dst_cap, size_t *dst_len, int level,
                        unsigned typesize, int shuffle)
{
    unsigned char zs = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        src_len > BLOSC_MAX_BUFFERSIZE || typesize == 0 || typesize > BLOSC_MAX_TYPESIZE ||
        shuffle < HCOMP_SHUFFLE_NONE || shuffle > HCOMP_SHUFFLE_BIT || dst_cap < BLOSC_MAX_OVERHEAD)
        return HCOMP_E_INVAL;
    level = hcomp_codec_level_(level, self);
    /* no shuffle: element size 1, so that the header says exactly what was done */
    size_t ts = shuffle == HCOMP_SHUFFLE_NONE ? 1 : typesize;
    size_t cap = dst_cap > (size_t) INT_MAX ? (size_t) INT_MAX : dst_cap;
    int n = blosc_compress_ctx(level, blosc_shuffle_mode(shuffle), ts, src_len,
                               HCOMP_IN_(src, zs), dst, cap, inner, 0, 1);
    if (n <= 0)         /* 0: did not fit; < 0: an internal error */
        return HCOMP_E_INVAL;
    *dst_len = (size_t) n;
    return HCOMP_OK;
}

/* typesize 0: whatever the chunk's header says (the untyped decompress) */
static int blosc_decode(const void *src, size_t src_len, void *dst, size_t dst_len,
                        unsigned typesize, int shuffle, int inner_code)
{
    unsigned char zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len) || src == NULL)
        return src == NULL && src_len == 0 ? HCOMP_E_CORRUPT : HCOMP_E_INVAL;
    size_t nbytes = 0;
    /* the header's chunk size must be src_len exactly, so no read goes past src */
    if (blosc_cbuffer_validate(src, src_len, &nbytes) != 0 || nbytes != dst_len)
        return HCOMP_E_CORRUPT;
    size_t ts = 0;
    int flags = 0;
    blosc_cbuffer_metainfo(src, &ts, &flags);
    int memcpyed = (flags & BLOSC_MEMCPYED) != 0;
    /* byte 2 of the header holds the flags; its bits 5..7 the format of the blocks
     * inside (blosc_cbuffer_metainfo returns only the low bits) */
    if (!memcpyed && ((((const unsigned char *) src)[2] >> 5) & 7) != inner_code)
        return HCOMP_E_CORRUPT;     /* another codec's chunk under this id */
    if (typesize != 0 && !memcpyed) {
        int bit = (flags & BLOSC_DOBITSHUFFLE) != 0, byte = (flags & BLOSC_DOSHUFFLE) != 0;
        int got = bit && byte ? -1 : bit ? HCOMP_SHUFFLE_BIT
                                          : byte ? HCOMP_SHUFFLE_BYTE : HCOMP_SHUFFLE_NONE;
        if (got != shuffle || (shuffle != HCOMP_SHUFFLE_NONE && ts != typesize))
            return HCOMP_E_CORRUPT; /* the piece's record says another transform */
    }
    if (dst_len == 0)
        return HCOMP_OK;
    int n = blosc_decompress_ctx(src, HCOMP_OUT_(dst, zd), dst_len, 1);
    return n >= 0 && (size_t) n == dst_len ? HCOMP_OK : HCOMP_E_CORRUPT;
}

/* One codec per inner compressor: the codec struct's functions (which take no context)
 * bound to the compressor's name and its format code in the chunk header (blosc.h). */
#define HC_BLOSC_CODEC(var, ID, NAME, compname, format)                                     \
    static int var##_compress_typed(const void *src, size_t src_len, void *dst,             \
                                    size_t dst_cap, size_t *dst_len, int level,             \
                                    unsigned typesize, int shuffle)                         \
    {                                                                                       \
        return blosc_encode(&hcomp_codec_##var, compname, src, src_len, dst, dst_cap,      \
                            dst_len, level, typesize, shuffle);                             \
    }                                                                                       \
    static int var##_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,   \
                              size_t *dst_len, int level)                                   \
    {                                                                                       \
        return var##_compress_typed(src, src_len, dst, dst_cap, dst_len, level, 1,          \
                                    HCOMP_SHUFFLE_NONE);                                    \
    }                                                                                       \
    static int var##_decompress_typed(const void *src, size_t src_len, void *dst,           \
                                      size_t dst_len, unsigned typesize, int shuffle)       \
    {                                                                                       \
        if (typesize == 0)                                                                  \
            return HCOMP_E_INVAL;                                                           \
        return blosc_decode(src, src_len, dst, dst_len, typesize, shuffle, format);         \
    }                                                                                       \
    static int var##_decompress(const void *src, size_t src_len, void *dst, size_t dst_len) \
    {                                                                                       \
        return blosc_decode(src, src_len, dst, dst_len, 0, 0, format);                      \
    }                                                                                       \
    const hcomp_codec hcomp_codec_##var = {                                                 \
        .id = ID,                                                                           \
        .name = NAME,                                                                       \
        .level_min = HC_BLOSC_LEVEL_MIN, .level_max = HC_BLOSC_LEVEL_MAX,                   \
        .level_default = HC_BLOSC_LEVEL_DEFAULT,                                            \
        .bound = blosc_bound,                                                               \
        .compress = var##_compress,                                                         \
        .decompress = var##_decompress,                                                     \
        .compress_typed = var##_compress_typed,                                             \
        .decompress_typed = var##_decompress_typed,                                         \
    };

HC_BLOSC_CODEC(blosc_lz4, HCOMP_CODEC_BLOSC_LZ4, "blosc-lz4", BLOSC_LZ4_COMPNAME,
               BLOSC_LZ4_FORMAT)
HC_BLOSC_CODEC(blosc_zstd, HCOMP_CODEC_BLOSC_ZSTD, "blosc-zstd", BLOSC_ZSTD_COMPNAME,
               BLOSC_ZSTD_FORMAT)
