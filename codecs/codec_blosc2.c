/* "blosc2-lz4" and "blosc2-zstd": one c-blosc2 chunk (libblosc2 2.x, built by
 * scripts/setup from Debian's source tarball) with that compressor inside and the
 * element transform in c-blosc2's filter pipeline: byte shuffle, bitshuffle, bytedelta
 * (byte shuffle, then each byte plane delta-coded) or delta (XOR against the chunk's
 * first block, then byte shuffle). The chunk's 32-byte extended header records the
 * pipeline (filter codes and their meta), the element size, the compressor and the
 * sizes, so a chunk decodes on its own; hcomp checks that the header says what the
 * piece's record says before it lets c-blosc2 decode, which also keeps a damaged header
 * from naming a user filter or codec (c-blosc2 would try to load a plugin for those).
 *
 * Levels 1..9 are c-blosc2's clevel (default 5): zstd inside gets clevel's zstd level
 * (c-blosc2's mapping), lz4 stays lz4 (not lz4hc). A chunk is one c-blosc2 block
 * (blocksize = the whole input): hcomp frames pieces in its own blocks (engine/framing.c,
 * 64 KiB-256 KiB) and runs them on its pool, so c-blosc2's blocks inside would add
 * per-block costs and cut zstd's window for nothing (docs/ENGINE.md, "c-blosc2").
 * Every call runs on the calling thread (nthreads 1) with a context of its own.
 *
 * Tails: a chunk of a transform holds whole elements only, and the last (length mod element
 * size) bytes follow the chunk as they are (docs/FORMAT.md, "Codec ids"). c-blosc2 2.17.1
 * mishandles a length that is not a multiple of the element size three ways: bytedelta
 * leaves the bytes past the last whole element unwritten (its forward pass covers
 * length / typesize elements per plane), delta gets them wrong (round trips of 4099 bytes
 * in 4- and 8-byte elements differed from byte 4096 on), and for all-zero input it writes
 * a chunk of zeros that its own decoder refuses ("nbytes is not a multiple of typesize":
 * 33 zero bytes of 4-byte elements, found by tests/fuzz/fuzz_codecs). */
#include <blosc2.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "codecs_internal.h"
#include "blosc2_env.h"

#define HC_BLOSC2_LEVEL_MIN 1
#define HC_BLOSC2_LEVEL_MAX 9
#define HC_BLOSC2_LEVEL_DEFAULT 5
/* BLOSC_FILTER_BYTEDELTA of c-blosc2's include/blosc2/filters-registry.h, which it does not
 * install; the id is in every chunk's header that used the filter, so it never changes (34
 * is the first, buggy bytedelta, which hcomp never writes) */
#define HC_BLOSC2_FILTER_BYTEDELTA 35

/* c-blosc2 registers its built-in filters (bytedelta among them) in blosc2_init(), which
 * is not thread-safe; the _ctx calls need nothing else. */
static pthread_once_t blosc2_once = PTHREAD_ONCE_INIT;
static void blosc2_start(void)
{
    blosc2_init();
}

const char *hcomp_blosc2_env_override(void)
{
    /* what blosc2_create_cctx reads over its parameters and that changes the stream (the
     * level, block size, split mode and threads it also reads change only its speed) */
    static const char *const names[] = {"BLOSC_SHUFFLE", "BLOSC_DELTA", "BLOSC_TYPESIZE",
                                        "BLOSC_COMPRESSOR"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (getenv(names[i]) != NULL)
            return names[i];
    return NULL;
}

static size_t blosc2_bound(size_t src_len)
{
    /* c-blosc2 stores a chunk it cannot shrink as it is: never more than the header over */
    return hcomp_codec_sat_add_(src_len, BLOSC2_MAX_OVERHEAD);
}

/* The filter pipeline of an element transform (enum hcomp_shuffle) on typesize-byte
 * elements: the six slots of the chunk header, last slot applied last. Returns 0 for a
 * transform this container does not have. */
static int blosc2_pipeline(int shuffle, unsigned typesize, uint8_t codes[BLOSC2_MAX_FILTERS],
                           uint8_t meta[BLOSC2_MAX_FILTERS])
{
    memset(codes, BLOSC_NOFILTER, BLOSC2_MAX_FILTERS);
    memset(meta, 0, BLOSC2_MAX_FILTERS);
    switch (shuffle) {
        case HCOMP_SHUFFLE_NONE:
            return 1;
        case HCOMP_SHUFFLE_BYTE:
            codes[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
            return 1;
        case HCOMP_SHUFFLE_BIT:
            codes[BLOSC2_MAX_FILTERS - 1] = BLOSC_BITSHUFFLE;
            return 1;
        case HCOMP_SHUFFLE_BYTEDELTA:
            /* bytedelta works on the planes a byte shuffle made: shuffle first */
            codes[BLOSC2_MAX_FILTERS - 2] = BLOSC_SHUFFLE;
            codes[BLOSC2_MAX_FILTERS - 1] = HC_BLOSC2_FILTER_BYTEDELTA;
            meta[BLOSC2_MAX_FILTERS - 1] = (uint8_t) typesize;
            return 1;
        case HCOMP_SHUFFLE_DELTA:
            codes[BLOSC2_MAX_FILTERS - 2] = BLOSC_DELTA;
            codes[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
            return 1;
        default:
            return 0;
    }
}

/* the transforms whose chunks leave the bytes past the last whole element out (see top):
 * all but none (element size 1) */
static int has_tail(int shuffle)
{
    return shuffle != HCOMP_SHUFFLE_NONE;
}

static int blosc2_encode(const hcomp_codec *self, int compcode, const void *src,
                         size_t src_len, void *dst, size_t dst_cap, size_t *dst_len, int level,
                         unsigned typesize, int shuffle)
{
    unsigned char zs = 0;
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        src_len > (size_t) BLOSC2_MAX_BUFFERSIZE || typesize == 0 ||
        typesize > BLOSC_MAX_TYPESIZE || dst_cap < BLOSC2_MAX_OVERHEAD ||
        !blosc2_pipeline(shuffle, typesize, cp.filters, cp.filters_meta))
        return HCOMP_E_INVAL;
    pthread_once(&blosc2_once, blosc2_start);
    cp.compcode = (uint8_t) compcode;
    cp.clevel = (uint8_t) hcomp_codec_level_(level, self);
    /* no transform: element size 1, so that the header says exactly what was done */
    cp.typesize = shuffle == HCOMP_SHUFFLE_NONE ? 1 : (int32_t) typesize;
    cp.nthreads = 1;
    /* one c-blosc2 block per chunk (see the top; set below); an empty chunk takes the
     * default */
    /* c-blosc2's own choice of splitting streams per byte plane, the same for every
     * writer (not a process-wide setting as in c-blosc 1) */
    cp.splitmode = BLOSC_AUTO_SPLIT;
    size_t tail = has_tail(shuffle) ? src_len % typesize : 0;
    size_t body = src_len - tail;
    if (dst_cap - BLOSC2_MAX_OVERHEAD < tail)   /* bound() leaves room: tail <= src_len */
        return HCOMP_E_INVAL;
    cp.blocksize = body > 0 ? (int32_t) body : 0;
    blosc2_context *ctx = blosc2_create_cctx(cp);
    if (ctx == NULL)
        return HCOMP_E_NOMEM;
    size_t cap = dst_cap - tail > (size_t) INT_MAX ? (size_t) INT_MAX : dst_cap - tail;
    int n = blosc2_compress_ctx(ctx, HCOMP_IN_(src, zs), (int32_t) body, dst, (int32_t) cap);
    blosc2_free_ctx(ctx);
    if (n <= 0)         /* 0: did not fit; < 0: an internal error */
        return HCOMP_E_INVAL;
    /* the chunk must be what was asked for (c-blosc2 applies BLOSC_* environment variables
     * over its parameters, blosc2_env.h): a piece whose record says otherwise would not
     * read back */
    const uint8_t *h = dst;
    int special = (h[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK;
    if (memcmp(h + BLOSC2_CHUNK_FILTER_CODES, cp.filters, BLOSC2_MAX_FILTERS) != 0 ||
        memcmp(h + BLOSC2_CHUNK_FILTER_META, cp.filters_meta, BLOSC2_MAX_FILTERS) != 0 ||
        h[BLOSC2_CHUNK_TYPESIZE] != (uint8_t) cp.typesize ||
        (!(h[BLOSC2_CHUNK_FLAGS] & BLOSC_MEMCPYED) && special == 0 &&
         ((h[BLOSC2_CHUNK_FLAGS] >> 5) & 7) != (compcode == BLOSC_LZ4 ? BLOSC_LZ4_FORMAT
                                                                      : BLOSC_ZSTD_FORMAT)))
        return HCOMP_E_INVAL;
    if (tail > 0)
        memcpy((unsigned char *) dst + n, (const unsigned char *) src + body, tail);
    *dst_len = (size_t) n + tail;
    return HCOMP_OK;
}

/* The chunk header's fields hcomp checks (README_CHUNK_FORMAT.rst of c-blosc2). */
enum {
    HC_B2_FLAGS_EXTENDED = BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE, /* both set: extended header */
};

/* typesize 0: whatever the chunk's header says about the transform (untyped decompress) */
static int blosc2_decode(const void *src, size_t src_len, void *dst, size_t dst_len,
                         unsigned typesize, int shuffle, int format)
{
    unsigned char zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len) || src == NULL)
        return src == NULL && src_len == 0 ? HCOMP_E_CORRUPT : HCOMP_E_INVAL;
    if (src_len < BLOSC_EXTENDED_HEADER_LENGTH || src_len > (size_t) INT_MAX ||
        dst_len > (size_t) INT_MAX)
        return HCOMP_E_CORRUPT;
    const uint8_t *h = src;
    uint8_t flags = h[BLOSC2_CHUNK_FLAGS], b2flags = h[BLOSC2_CHUNK_BLOSC2_FLAGS];
    if ((flags & HC_B2_FLAGS_EXTENDED) != HC_B2_FLAGS_EXTENDED || h[BLOSC2_CHUNK_VERSION] <
        BLOSC2_VERSION_FORMAT_ALPHA)
        return HCOMP_E_CORRUPT;     /* a c-blosc 1 chunk, or not a chunk */
    /* the pipeline must be one hcomp writes (never a user filter: a plugin load), and the
     * record's when it names one */
    unsigned ts = h[BLOSC2_CHUNK_TYPESIZE];
    uint8_t want[BLOSC2_MAX_FILTERS], want_meta[BLOSC2_MAX_FILTERS];
    int got = -1;
    for (int s = HCOMP_SHUFFLE_NONE; s <= HCOMP_SHUFFLE_DELTA && got < 0; s++)
        if (blosc2_pipeline(s, ts, want, want_meta) &&
            memcmp(h + BLOSC2_CHUNK_FILTER_CODES, want, BLOSC2_MAX_FILTERS) == 0 &&
            memcmp(h + BLOSC2_CHUNK_FILTER_META, want_meta, BLOSC2_MAX_FILTERS) == 0)
            got = s;
    if (got < 0 || ts == 0)
        return HCOMP_E_CORRUPT;
    if (typesize != 0 && (got != shuffle || ts != (shuffle == HCOMP_SHUFFLE_NONE ? 1 : typesize)))
        return HCOMP_E_CORRUPT;     /* the piece's record says another transform */
    size_t tail = has_tail(got) ? dst_len % ts : 0;
    if (src_len < BLOSC_EXTENDED_HEADER_LENGTH + tail)
        return HCOMP_E_CORRUPT;
    size_t chunk_len = src_len - tail, body = dst_len - tail;
    int32_t nbytes = 0, cbytes = 0, bsize = 0;
    /* the header's sizes must be the piece's exactly, so no read goes past src */
    if (blosc2_cbuffer_sizes(src, &nbytes, &cbytes, &bsize) < 0 || nbytes < 0 ||
        (size_t) nbytes != body || cbytes < 0 || (size_t) cbytes != chunk_len)
        return HCOMP_E_CORRUPT;
    /* a chunk of zeros (what c-blosc2 writes for an all-zero input) has no blocks of this
     * compressor; hcomp writes no other special chunk (an "uninitialized" one would decode
     * to whatever the reader's buffer held); anything else must be this codec's (never a
     * user codec: a plugin load) */
    int special = (b2flags >> 4) & BLOSC2_SPECIAL_MASK;
    int memcpyed = (flags & BLOSC_MEMCPYED) != 0;
    if (special != 0 && special != BLOSC2_SPECIAL_ZERO)
        return HCOMP_E_CORRUPT;
    if (!memcpyed && special == 0 && ((flags >> 5) & 7) != format)
        return HCOMP_E_CORRUPT;     /* another codec's chunk under this id */
    if (tail > 0)
        memcpy((unsigned char *) dst + body, (const unsigned char *) src + chunk_len, tail);
    if (body == 0)
        return HCOMP_OK;
    pthread_once(&blosc2_once, blosc2_start);
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    blosc2_context *ctx = blosc2_create_dctx(dp);
    if (ctx == NULL)
        return HCOMP_E_NOMEM;
    int n = blosc2_decompress_ctx(ctx, src, (int32_t) chunk_len, HCOMP_OUT_(dst, zd),
                                  (int32_t) body);
    blosc2_free_ctx(ctx);
    return n >= 0 && (size_t) n == body ? HCOMP_OK : HCOMP_E_CORRUPT;
}

/* One codec per inner compressor, as in codec_blosc.c: the struct's context-free
 * functions bound to c-blosc2's compressor code and its format code in the header. */
#define HC_BLOSC2_CODEC(var, ID, NAME, compcode, format)                                    \
    static int var##_compress_typed(const void *src, size_t src_len, void *dst,             \
                                    size_t dst_cap, size_t *dst_len, int level,             \
                                    unsigned typesize, int shuffle)                         \
    {                                                                                       \
        return blosc2_encode(&hcomp_codec_##var, compcode, src, src_len, dst, dst_cap,     \
                             dst_len, level, typesize, shuffle);                            \
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
        return blosc2_decode(src, src_len, dst, dst_len, typesize, shuffle, format);        \
    }                                                                                       \
    static int var##_decompress(const void *src, size_t src_len, void *dst, size_t dst_len) \
    {                                                                                       \
        return blosc2_decode(src, src_len, dst, dst_len, 0, 0, format);                     \
    }                                                                                       \
    const hcomp_codec hcomp_codec_##var = {                                                 \
        .id = ID,                                                                           \
        .name = NAME,                                                                       \
        .level_min = HC_BLOSC2_LEVEL_MIN, .level_max = HC_BLOSC2_LEVEL_MAX,                 \
        .level_default = HC_BLOSC2_LEVEL_DEFAULT,                                           \
        .bound = blosc2_bound,                                                              \
        .compress = var##_compress,                                                         \
        .decompress = var##_decompress,                                                     \
        .compress_typed = var##_compress_typed,                                             \
        .decompress_typed = var##_decompress_typed,                                         \
    };

HC_BLOSC2_CODEC(blosc2_lz4, HCOMP_CODEC_BLOSC2_LZ4, "blosc2-lz4", BLOSC_LZ4, BLOSC_LZ4_FORMAT)
HC_BLOSC2_CODEC(blosc2_zstd, HCOMP_CODEC_BLOSC2_ZSTD, "blosc2-zstd", BLOSC_ZSTD,
                BLOSC_ZSTD_FORMAT)
