/* Byte shuffle and its inverse; filters composed with codecs. */
#include "filter.h"
#include "common/util.h"
#include "hcomp_model.h"

#include <string.h>

unsigned hcomp_filter_typesize(int filter)
{
    switch (filter) {
        case HCOMP_FILTER_SHUFFLE4:
        case HCOMP_FILTER_BITSHUFFLE4:
            return 4u;
        case HCOMP_FILTER_SHUFFLE8:
        case HCOMP_FILTER_BITSHUFFLE8:
            return 8u;
        default:
            return 0u;
    }
}

int hcomp_filter_for(int shuffle, unsigned k)
{
    if (k != 4 && k != 8)
        return HCOMP_FILTER_NONE;
    if (shuffle == HCOMP_SHUFFLE_BYTE)
        return k == 4 ? HCOMP_FILTER_SHUFFLE4 : HCOMP_FILTER_SHUFFLE8;
    if (shuffle == HCOMP_SHUFFLE_BIT)
        return k == 4 ? HCOMP_FILTER_BITSHUFFLE4 : HCOMP_FILTER_BITSHUFFLE8;
    return HCOMP_FILTER_NONE;
}

int hcomp_filter_for_dtype(int shuffle, int dtype)
{
    switch (dtype) {
        case HCOMP_DTYPE_INT32:
        case HCOMP_DTYPE_FLOAT:
            return hcomp_filter_for(shuffle, 4);
        case HCOMP_DTYPE_INT64:
        case HCOMP_DTYPE_DOUBLE:
            return hcomp_filter_for(shuffle, 8);
        default:
            return HCOMP_FILTER_NONE;
    }
}

/* enum hcomp_shuffle of a filter */
static int shuffle_of(int filter)
{
    return filter == HCOMP_FILTER_BITSHUFFLE4 || filter == HCOMP_FILTER_BITSHUFFLE8
               ? HCOMP_SHUFFLE_BIT
               : filter == HCOMP_FILTER_NONE ? HCOMP_SHUFFLE_NONE : HCOMP_SHUFFLE_BYTE;
}

int hcomp_filter_fits(int filter, const hcomp_codec *c)
{
    if (c == NULL || filter < 0 || filter >= HCOMP_FILTER_COUNT)
        return 0;
    return shuffle_of(filter) != HCOMP_SHUFFLE_BIT || c->compress_typed != NULL;
}

void hcomp_filter_apply(int filter, const unsigned char *src, unsigned char *dst, size_t len)
{
    if (len == 0)       /* dst may be NULL then */
        return;
    unsigned k = shuffle_of(filter) == HCOMP_SHUFFLE_BYTE ? hcomp_filter_typesize(filter) : 0;
    if (k == 0) {
        memcpy(dst, src, len);
        return;
    }
    size_t n = len / k;
    for (unsigned b = 0; b < k; b++) {
        unsigned char *out = dst + (size_t) b * n;
        const unsigned char *in = src + b;
        for (size_t i = 0; i < n; i++)
            out[i] = in[i * k];
    }
    memcpy(dst + n * k, src + n * k, len - n * k);
}

void hcomp_filter_undo(int filter, const unsigned char *src, unsigned char *dst, size_t len)
{
    if (len == 0)       /* dst may be NULL then */
        return;
    unsigned k = shuffle_of(filter) == HCOMP_SHUFFLE_BYTE ? hcomp_filter_typesize(filter) : 0;
    if (k == 0) {
        memcpy(dst, src, len);
        return;
    }
    size_t n = len / k;
    for (unsigned b = 0; b < k; b++) {
        const unsigned char *in = src + (size_t) b * n;
        unsigned char *out = dst + b;
        for (size_t i = 0; i < n; i++)
            out[i * k] = in[i];
    }
    memcpy(dst + n * k, src + n * k, len - n * k);
}

int hcomp_filter_encode(const hcomp_codec *c, int level, int filter, const void *src,
                        size_t len, unsigned char **tmp, size_t *tmp_cap, void *dst,
                        size_t dst_cap, size_t *dst_len)
{
    if (!hcomp_filter_fits(filter, c))
        return HCOMP_E_INVAL;
    if (c->compress_typed != NULL)
        return c->compress_typed(src, len, dst, dst_cap, dst_len, level,
                                 filter ? hcomp_filter_typesize(filter) : 1, shuffle_of(filter));
    if (filter == HCOMP_FILTER_NONE)
        return c->compress(src, len, dst, dst_cap, dst_len, level);
    if (hcomp_grow(tmp, tmp_cap, len ? len : 1) != 0)
        return HCOMP_E_NOMEM;
    hcomp_filter_apply(filter, src, *tmp, len);
    return c->compress(*tmp, len, dst, dst_cap, dst_len, level);
}

int hcomp_filter_decode(const hcomp_codec *c, int filter, const void *src, size_t src_len,
                        void *dst, size_t dst_len, unsigned char **tmp, size_t *tmp_cap)
{
    if (!hcomp_filter_fits(filter, c))
        return HCOMP_E_CORRUPT;
    if (c->decompress_typed != NULL)
        return c->decompress_typed(src, src_len, dst, dst_len,
                                   filter ? hcomp_filter_typesize(filter) : 1, shuffle_of(filter));
    if (filter == HCOMP_FILTER_NONE)
        return c->decompress(src, src_len, dst, dst_len);
    if (hcomp_grow(tmp, tmp_cap, dst_len ? dst_len : 1) != 0)
        return HCOMP_E_NOMEM;
    int rc = c->decompress(src, src_len, *tmp, dst_len);
    if (rc == HCOMP_OK)
        hcomp_filter_undo(filter, *tmp, dst, dst_len);
    return rc;
}
