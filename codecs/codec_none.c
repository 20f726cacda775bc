/* "none": stores the bytes as they are. Used for incompressible data and as the
 * baseline the other codecs are measured against. */
#include <string.h>
#include "codecs_internal.h"

static size_t none_bound(size_t src_len)
{
    return src_len;
}

static int none_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                         size_t *dst_len, int level)
{
    (void)level;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        dst_cap < src_len)
        return HCOMP_E_INVAL;
    if (src_len > 0)
        memcpy(dst, src, src_len);
    *dst_len = src_len;
    return HCOMP_OK;
}

static int none_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    /* The stored form is the data itself, so any other length is damage. */
    if (src_len != dst_len)
        return HCOMP_E_CORRUPT;
    if (dst_len > 0)
        memcpy(dst, src, dst_len);
    return HCOMP_OK;
}

const hcomp_codec hcomp_codec_none = {
    .id = HCOMP_CODEC_NONE,
    .name = "none",
    .level_min = 0, .level_max = 0, .level_default = 0,
    .bound = none_bound,
    .compress = none_compress,
    .decompress = none_decompress,
};
