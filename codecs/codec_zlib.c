/* "zlib": a zlib-format stream (RFC 1950, what compress2 writes: header, deflate
 * data, adler32), levels 1..9, default 6 (zlib's own default; 0 would store).
 *
 * compress2/uncompress themselves are not used: before zlib 1.2.9 they cast the
 * lengths to the 32-bit uInt (so 4 GiB and more fail or are cut), and uncompress
 * ignores bytes after the end of the stream. The loops below feed z_stream in
 * chunks instead and insist the stream ends exactly at src_len. */
#define ZLIB_CONST /* next_in is const: src stays const */
#include <zlib.h>
#include "codecs_internal.h"

#define HC_ZLIB_LEVEL_MIN 1
#define HC_ZLIB_LEVEL_MAX 9
#define HC_ZLIB_LEVEL_DEFAULT 6

static size_t zlib_bound(size_t n)
{
    /* compressBound() of zlib 1.2.12+ (valid for deflateInit's default window and
     * memLevel and for any chunking of the input with Z_NO_FLUSH), in size_t. */
    size_t b = hcomp_codec_sat_add_(n, (n >> 12) + (n >> 14) + (n >> 25) + 13);
    /* Should a future zlib widen its bound, trust it. */
    if (n <= (uLong)-1) {
        uLong zb = compressBound((uLong)n);
        if (zb > b)
            b = zb;
    }
    return b;
}

/* Hand the stream up to HCOMP_CODEC_CHUNK more bytes of each side once it has used
 * up what it had; *in_left / *out_left count what it has not been given yet. */
static void zlib_refill(z_stream *s, size_t *in_left, size_t *out_left)
{
    if (s->avail_in == 0 && *in_left > 0) {
        size_t n = *in_left < HCOMP_CODEC_CHUNK ? *in_left : HCOMP_CODEC_CHUNK;
        s->avail_in = (uInt)n;
        *in_left -= n;
    }
    if (s->avail_out == 0 && *out_left > 0) {
        size_t n = *out_left < HCOMP_CODEC_CHUNK ? *out_left : HCOMP_CODEC_CHUNK;
        s->avail_out = (uInt)n;
        *out_left -= n;
    }
}

static int zlib_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                         size_t *dst_len, int level)
{
    unsigned char zs = 0, zd = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap))
        return HCOMP_E_INVAL;
    level = hcomp_codec_level_(level, &hcomp_codec_zlib);
    z_stream s = {0};
    int r = deflateInit(&s, level);
    if (r != Z_OK)
        return r == Z_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
    s.next_in = HCOMP_IN_(src, zs);
    s.next_out = HCOMP_OUT_(dst, zd);
    size_t in_left = src_len, out_left = dst_cap;
    int rc = HCOMP_OK;
    for (;;) {
        zlib_refill(&s, &in_left, &out_left);
        if (s.avail_out == 0) { /* stream not finished and dst is full */
            rc = HCOMP_E_INVAL;
            break;
        }
        r = deflate(&s, in_left == 0 ? Z_FINISH : Z_NO_FLUSH);
        if (r == Z_STREAM_END)
            break;
        if (r != Z_OK) { /* Z_BUF_ERROR cannot happen with room and input left */
            rc = r == Z_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
            break;
        }
    }
    if (rc == HCOMP_OK)
        *dst_len = dst_cap - out_left - s.avail_out;
    deflateEnd(&s);
    return rc;
}

static int zlib_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    z_stream s = {0};
    int r = inflateInit(&s);
    if (r != Z_OK)
        return r == Z_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_INVAL;
    s.next_in = HCOMP_IN_(src, zs);
    s.next_out = HCOMP_OUT_(dst, zd);
    size_t in_left = src_len, out_left = dst_len;
    int rc = HCOMP_OK;
    for (;;) {
        zlib_refill(&s, &in_left, &out_left);
        /* inflate honours avail_in/avail_out on any input, and says Z_BUF_ERROR
         * once it can make no progress: input truncated or dst too small. */
        r = inflate(&s, Z_NO_FLUSH);
        if (r == Z_STREAM_END)
            break;
        if (r != Z_OK) { /* includes Z_NEED_DICT: we never use a dictionary */
            rc = r == Z_MEM_ERROR ? HCOMP_E_NOMEM : HCOMP_E_CORRUPT;
            break;
        }
    }
    /* Exactly dst_len bytes out, and nothing after the stream's end. */
    if (rc == HCOMP_OK &&
        (s.avail_in != 0 || in_left != 0 || s.avail_out != 0 || out_left != 0))
        rc = HCOMP_E_CORRUPT;
    inflateEnd(&s);
    return rc;
}

const hcomp_codec hcomp_codec_zlib = {
    .id = HCOMP_CODEC_ZLIB,
    .name = "zlib",
    .level_min = HC_ZLIB_LEVEL_MIN, .level_max = HC_ZLIB_LEVEL_MAX,
    .level_default = HC_ZLIB_LEVEL_DEFAULT,
    .bound = zlib_bound,
    .compress = zlib_compress,
    .decompress = zlib_decompress,
};
