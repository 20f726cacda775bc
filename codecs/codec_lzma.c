/* "lzma": a raw LZMA2 stream (no .xz container, whose headers, index and check would
 * only repeat what the caller records about a piece), preset 0..9, default 1 (fast;
 * higher presets mostly buy a larger dictionary, which only helps larger pieces).
 *
 * A raw stream does not record the dictionary size, and the decoder allocates
 * whatever it is told. Matches never reach before the start of the piece, so the
 * encoder caps its dictionary at the piece size (saving the preset's huge match
 * finder for small pieces) and at HC_LZMA_DICT_CAP, and the decoder uses
 * min(dst_len, HC_LZMA_DICT_CAP): enough for any stream we write, and bounded memory
 * for hostile ones. HC_LZMA_DICT_CAP is part of the on-disk format: never lower it. */
#include <lzma.h>
#include <string.h>
#include "codecs_internal.h"

#define HC_LZMA_LEVEL_MIN 0
#define HC_LZMA_LEVEL_MAX 9
#define HC_LZMA_LEVEL_DEFAULT 1
#define HC_LZMA_DICT_CAP ((uint32_t)64 << 20) /* preset 9's dictionary, the largest */
#define HC_LZMA2_CHUNK ((size_t)1 << 16)      /* max data bytes of an uncompressed chunk */

static uint32_t hc_lzma_dict_for(size_t len, uint32_t preset_dict)
{
    uint32_t d = len < HC_LZMA_DICT_CAP ? (uint32_t)len : HC_LZMA_DICT_CAP;
    if (d > preset_dict)
        d = preset_dict;
    return d < LZMA_DICT_SIZE_MIN ? LZMA_DICT_SIZE_MIN : d;
}

static size_t hc_lzma_bound(size_t n)
{
    /* Size of n bytes stored as LZMA2 uncompressed chunks (3-byte header per 64 KiB)
     * plus the end marker: the fallback below guarantees output never exceeds it. */
    size_t chunks = n / HC_LZMA2_CHUNK + (n % HC_LZMA2_CHUNK != 0);
    size_t hdr = chunks > (SIZE_MAX - 1) / 3 ? SIZE_MAX : 3 * chunks + 1;
    return hcomp_codec_sat_add_(n, hdr);
}

/* Store src as uncompressed LZMA2 chunks, as liblzma itself does for incompressible
 * .xz blocks: the first chunk resets the dictionary (control 1), later ones do not
 * (control 2); each has a big-endian 16-bit size-1; a 0 byte ends the stream. */
static int hc_lzma_store(const unsigned char *src, size_t n, unsigned char *dst,
                         size_t dst_cap, size_t *dst_len)
{
    if (dst_cap < hc_lzma_bound(n))
        return HCOMP_E_INVAL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += HC_LZMA2_CHUNK) {
        size_t k = n - i < HC_LZMA2_CHUNK ? n - i : HC_LZMA2_CHUNK;
        dst[o++] = i == 0 ? 1 : 2;
        dst[o++] = (unsigned char)((k - 1) >> 8);
        dst[o++] = (unsigned char)((k - 1) & 0xff);
        memcpy(dst + o, src + i, k);
        o += k;
    }
    dst[o++] = 0;
    *dst_len = o;
    return HCOMP_OK;
}

static int hc_lzma_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                            size_t *dst_len, int level)
{
    unsigned char zs = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap) ||
        dst_cap == 0)
        return HCOMP_E_INVAL;
    level = hcomp_codec_level_(level, &hcomp_codec_lzma);
    lzma_options_lzma opt;
    if (lzma_lzma_preset(&opt, (uint32_t)level))
        return HCOMP_E_INVAL;
    opt.dict_size = hc_lzma_dict_for(src_len, opt.dict_size);
    lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    /* The LZMA2 encoder can exceed the stored size by a few header bytes per chunk
     * on incompressible data, so it gets at most bound() bytes and the stored form
     * is the fallback: output never exceeds bound(), whatever dst_cap is. */
    size_t cap = dst_cap < hc_lzma_bound(src_len) ? dst_cap : hc_lzma_bound(src_len);
    size_t pos = 0;
    lzma_ret r = lzma_raw_buffer_encode(filters, NULL, HCOMP_IN_(src, zs), src_len,
                                        dst, &pos, cap);
    if (r == LZMA_OK) {
        *dst_len = pos;
        return HCOMP_OK;
    }
    if (r == LZMA_BUF_ERROR)
        return hc_lzma_store(HCOMP_IN_(src, zs), src_len, dst, dst_cap, dst_len);
    return r == LZMA_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
}

static int hc_lzma_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    lzma_options_lzma opt;
    /* Of these options the decoder uses only dict_size (lc/lp/pb are in the stream). */
    if (lzma_lzma_preset(&opt, HC_LZMA_LEVEL_MIN))
        return HCOMP_E_INVAL;
    opt.dict_size = hc_lzma_dict_for(dst_len, HC_LZMA_DICT_CAP);
    lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    size_t in_pos = 0, out_pos = 0;
    /* Decoding stops at the end marker; then it must have used all of src and
     * filled all of dst. Truncated input and too-long output are errors here. */
    lzma_ret r = lzma_raw_buffer_decode(filters, NULL, HCOMP_IN_(src, zs), &in_pos,
                                        src_len, HCOMP_OUT_(dst, zd), &out_pos, dst_len);
    if (r == LZMA_MEM_ERROR)
        return HCOMP_E_NOMEM;
    if (r != LZMA_OK || in_pos != src_len || out_pos != dst_len)
        return HCOMP_E_CORRUPT;
    return HCOMP_OK;
}

const hcomp_codec hcomp_codec_lzma = {
    .id = HCOMP_CODEC_LZMA,
    .name = "lzma",
    .level_min = HC_LZMA_LEVEL_MIN, .level_max = HC_LZMA_LEVEL_MAX,
    .level_default = HC_LZMA_LEVEL_DEFAULT,
    .bound = hc_lzma_bound,
    .compress = hc_lzma_compress,
    .decompress = hc_lzma_decompress,
};
