/* "bzip2": a standard .bz2 stream; the level is the block size in 100 kB units,
 * 1..9, default 9 (bzip2's own default: best ratio, ~7.6 MB of encoder memory).
 *
 * BZ2_bzBuffToBuff{Compress,Decompress} take unsigned int lengths, which would cap
 * a piece at 4 GiB, and the decompressor ignores bytes after the end of the stream.
 * So this drives the bz_stream API directly, in chunks, with the same semantics. */
#include <bzlib.h>
#include "codecs_internal.h"

#define HC_BZIP2_LEVEL_MIN 1
#define HC_BZIP2_LEVEL_MAX 9
#define HC_BZIP2_LEVEL_DEFAULT 9

static size_t bzip2_bound(size_t n)
{
    /* The manual promises 1% + 600 bytes. The extra 1% + 424 bytes is headroom
     * because that figure is a documented rule of thumb, not a proven bound, and
     * a bound that is too small turns into spurious compress failures. */
    return hcomp_codec_sat_add_(n, n / 50 + 1024);
}

/* bz_stream.next_in is a plain char * although bzip2 never writes through it. */
static char *bzip2_in(const void *p)
{
    return (char *)(uintptr_t)p;
}

static void bzip2_refill(bz_stream *s, size_t *in_left, size_t *out_left)
{
    if (s->avail_in == 0 && *in_left > 0) {
        size_t n = *in_left < HCOMP_CODEC_CHUNK ? *in_left : HCOMP_CODEC_CHUNK;
        s->avail_in = (unsigned)n;
        *in_left -= n;
    }
    if (s->avail_out == 0 && *out_left > 0) {
        size_t n = *out_left < HCOMP_CODEC_CHUNK ? *out_left : HCOMP_CODEC_CHUNK;
        s->avail_out = (unsigned)n;
        *out_left -= n;
    }
}

static int bzip2_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                          size_t *dst_len, int level)
{
    unsigned char zs = 0, zd = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap))
        return HCOMP_E_INVAL;
    level = hcomp_codec_level_(level, &hcomp_codec_bzip2);
    bz_stream s = {0};
    int r = BZ2_bzCompressInit(&s, level, 0, 0);
    if (r != BZ_OK)
        return r == BZ_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
    s.next_in = bzip2_in(HCOMP_IN_(src, zs));
    s.next_out = HCOMP_OUT_(dst, zd);
    size_t in_left = src_len, out_left = dst_cap;
    int rc = HCOMP_OK;
    for (;;) {
        bzip2_refill(&s, &in_left, &out_left);
        /* bzip2 calls without output room an error, so check first. */
        if (s.avail_out == 0) {
            rc = HCOMP_E_INVAL;
            break;
        }
        /* BZ_FINISH once the last chunk is handed over; bzip2 then requires
         * avail_in to shrink only by what it consumes, which the loop respects. */
        r = BZ2_bzCompress(&s, in_left == 0 ? BZ_FINISH : BZ_RUN);
        if (r == BZ_STREAM_END)
            break;
        if (r != BZ_RUN_OK && r != BZ_FINISH_OK) {
            rc = HCOMP_E_INVAL;
            break;
        }
    }
    if (rc == HCOMP_OK)
        *dst_len = dst_cap - out_left - s.avail_out;
    BZ2_bzCompressEnd(&s);
    return rc;
}

static int bzip2_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    bz_stream s = {0};
    int r = BZ2_bzDecompressInit(&s, 0, 0);
    if (r != BZ_OK)
        return r == BZ_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
    s.next_in = bzip2_in(HCOMP_IN_(src, zs));
    s.next_out = HCOMP_OUT_(dst, zd);
    size_t in_left = src_len, out_left = dst_len;
    int rc = HCOMP_OK;
    for (;;) {
        bzip2_refill(&s, &in_left, &out_left);
        unsigned in0 = s.avail_in, out0 = s.avail_out;
        r = BZ2_bzDecompress(&s);
        if (r == BZ_STREAM_END)
            break;
        if (r != BZ_OK) {
            rc = r == BZ_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_CORRUPT;
            break;
        }
        /* Unlike inflate, bzip2 just returns BZ_OK when stuck. Each call got all the
         * input and room it could, so no progress means truncated input or more
         * data than dst_len. */
        if (s.avail_in == in0 && s.avail_out == out0) {
            rc = HCOMP_E_CORRUPT;
            break;
        }
    }
    /* Exactly dst_len bytes out, and nothing after the stream's end. */
    if (rc == HCOMP_OK &&
        (s.avail_in != 0 || in_left != 0 || s.avail_out != 0 || out_left != 0))
        rc = HCOMP_E_CORRUPT;
    BZ2_bzDecompressEnd(&s);
    return rc;
}

const hcomp_codec hcomp_codec_bzip2 = {
    .id = HCOMP_CODEC_BZIP2,
    .name = "bzip2",
    .level_min = HC_BZIP2_LEVEL_MIN, .level_max = HC_BZIP2_LEVEL_MAX,
    .level_default = HC_BZIP2_LEVEL_DEFAULT,
    .bound = bzip2_bound,
    .compress = bzip2_compress,
    .decompress = bzip2_decompress,
};
