/* "lz4": the LZ4 block format (no frame: the caller keeps the sizes).
 *
 * Level mapping (levels 0..12, default 1):
 *   0      LZ4_compress_fast, acceleration 8: fastest, for data that barely compresses
 *   1      LZ4_compress_fast, acceleration 1: plain LZ4, what "lz4" usually means
 *   2..12  LZ4_compress_HC at the same level (HC 10..12 are the optimal parsers);
 *          every level decodes with the same fast LZ4_decompress_safe.
 * The block API counts in int, so one buffer holds at most LZ4_MAX_INPUT_SIZE
 * (~2 GiB); larger requests are HCOMP_E_INVAL rather than being truncated. */
#include <limits.h>
#include <lz4.h>
#include <lz4hc.h>
#include "codecs_internal.h"

#define HC_LZ4_LEVEL_MIN 0
#define HC_LZ4_LEVEL_MAX LZ4HC_CLEVEL_MAX
#define HC_LZ4_LEVEL_DEFAULT 1
#define HC_LZ4_FASTEST_ACCELERATION 8

static size_t lz4_bound(size_t src_len)
{
    /* LZ4_COMPRESSBOUND's formula, computed in size_t so it stays an upper bound
     * (instead of LZ4's 0) beyond LZ4_MAX_INPUT_SIZE; compress rejects those anyway. */
    return hcomp_codec_sat_add_(src_len, src_len / 255 + 16);
}

static int lz4_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                        size_t *dst_len, int level)
{
    unsigned char zs = 0, zd = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        src_len > LZ4_MAX_INPUT_SIZE)
        return HCOMP_E_INVAL;
    /* Capping the capacity only under-states the room we have; the largest
     * possible output (bound of LZ4_MAX_INPUT_SIZE) is below INT_MAX. */
    int cap = dst_cap > INT_MAX ? INT_MAX : (int)dst_cap;
    const char *s = HCOMP_IN_(src, zs);
    char *d = HCOMP_OUT_(dst, zd);
    level = hcomp_codec_level_(level, &hcomp_codec_lz4);
    int n;
    if (level >= 2)
        n = LZ4_compress_HC(s, d, (int)src_len, cap, level);
    else
        n = LZ4_compress_fast(s, d, (int)src_len, cap,
                              level == 0 ? HC_LZ4_FASTEST_ACCELERATION : 1);
    if (n <= 0) /* LZ4 reports only "did not fit" */
        return HCOMP_E_INVAL;
    *dst_len = (size_t)n;
    return HCOMP_OK;
}

static int lz4_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len) || src_len > INT_MAX ||
        dst_len > LZ4_MAX_INPUT_SIZE)
        return HCOMP_E_INVAL;
    /* _safe never reads past src_len nor writes past dst_len; it returns the decoded
     * size, which must be all of dst. */
    int n = LZ4_decompress_safe(HCOMP_IN_(src, zs), HCOMP_OUT_(dst, zd),
                                (int)src_len, (int)dst_len);
    return n >= 0 && (size_t)n == dst_len ? HCOMP_OK : HCOMP_E_CORRUPT;
}

const hcomp_codec hcomp_codec_lz4 = {
    .id = HCOMP_CODEC_LZ4,
    .name = "lz4",
    .level_min = HC_LZ4_LEVEL_MIN, .level_max = HC_LZ4_LEVEL_MAX,
    .level_default = HC_LZ4_LEVEL_DEFAULT,
    .bound = lz4_bound,
    .compress = lz4_compress,
    .decompress = lz4_decompress,
};
