/* Byte shuffle and its inverse. */
#include "filter.h"

#include <string.h>

unsigned hcomp_filter_typesize(int filter)
{
    return filter == HCOMP_FILTER_SHUFFLE4 ? 4u : filter == HCOMP_FILTER_SHUFFLE8 ? 8u : 0u;
}

void hcomp_filter_apply(int filter, const unsigned char *src, unsigned char *dst, size_t len)
{
    unsigned k = hcomp_filter_typesize(filter);
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
    unsigned k = hcomp_filter_typesize(filter);
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
