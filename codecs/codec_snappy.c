/* "snappy": the raw snappy format (a varint32 length, then the data), no levels.
 * The length header is 32-bit, so one buffer is at most 4 GiB - 1; snappy would
 * silently wrap longer lengths, so they are HCOMP_E_INVAL here. */
#include <snappy-c.h>
#include "codecs_internal.h"

#define HC_SNAPPY_MAX_INPUT ((size_t)UINT32_MAX)

static size_t hc_snappy_bound(size_t src_len)
{
    if (src_len <= HC_SNAPPY_MAX_INPUT)
        return snappy_max_compressed_length(src_len);
    /* snappy's formula (32 + n + n/6), saturating; compress rejects these sizes. */
    return hcomp_codec_sat_add_(src_len, src_len / 6 + 32);
}

static int hc_snappy_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                              size_t *dst_len, int level)
{
    unsigned char zs = 0, zd = 0;
    (void)level;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        src_len > HC_SNAPPY_MAX_INPUT)
        return HCOMP_E_INVAL;
    size_t n = dst_cap;
    /* snappy refuses (SNAPPY_BUFFER_TOO_SMALL) any dst smaller than its bound. */
    if (snappy_compress(HCOMP_IN_(src, zs), src_len, HCOMP_OUT_(dst, zd), &n) !=
        SNAPPY_OK)
        return HCOMP_E_INVAL;
    *dst_len = n;
    return HCOMP_OK;
}

static int hc_snappy_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len) || dst_len > HC_SNAPPY_MAX_INPUT)
        return HCOMP_E_INVAL;
    const char *s = HCOMP_IN_(src, zs);
    /* The header states the decoded length: it must be ours before decoding, so
     * snappy's own check that the data fills exactly that length is ours too. */
    size_t want;
    if (snappy_uncompressed_length(s, src_len, &want) != SNAPPY_OK || want != dst_len)
        return HCOMP_E_CORRUPT;
    size_t n = dst_len;
    if (snappy_uncompress(s, src_len, HCOMP_OUT_(dst, zd), &n) != SNAPPY_OK ||
        n != dst_len)
        return HCOMP_E_CORRUPT;
    return HCOMP_OK;
}

const hcomp_codec hcomp_codec_snappy = {
    .id = HCOMP_CODEC_SNAPPY,
    .name = "snappy",
    .level_min = 0, .level_max = 0, .level_default = 0,
    .bound = hc_snappy_bound,
    .compress = hc_snappy_compress,
    .decompress = hc_snappy_decompress,
};
