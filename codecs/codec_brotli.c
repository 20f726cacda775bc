/* "brotli": a raw brotli stream (RFC 7932), quality 0..11, default 5 (a good
 * speed/ratio middle; 10 and 11 are very slow), window BROTLI_DEFAULT_WINDOW
 * (4 MiB) so decoders never need the large-window extension. */
#include <brotli/decode.h>
#include <brotli/encode.h>
#include "codecs_internal.h"

#define HC_BROTLI_LEVEL_MIN BROTLI_MIN_QUALITY
#define HC_BROTLI_LEVEL_MAX BROTLI_MAX_QUALITY
#define HC_BROTLI_LEVEL_DEFAULT 5

static size_t brotli_bound(size_t src_len)
{
    /* BrotliEncoderCompress falls back to uncompressed meta-blocks, so with this
     * much room it cannot fail for lack of space. 0 means "too large". */
    size_t b = BrotliEncoderMaxCompressedSize(src_len);
    return b == 0 ? SIZE_MAX : b;
}

static int brotli_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                           size_t *dst_len, int level)
{
    unsigned char zs = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap))
        return HCOMP_E_INVAL;
    if (dst_cap == 0 || BrotliEncoderMaxCompressedSize(src_len) == 0)
        return HCOMP_E_INVAL; /* every stream has at least one byte; or too large */
    level = hcomp_codec_level_(level, &hcomp_codec_brotli);
    size_t n = dst_cap;
    if (!BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, src_len,
                               HCOMP_IN_(src, zs), &n, dst))
        /* The API does not say why. With the bound's room it can only be memory. */
        return dst_cap >= BrotliEncoderMaxCompressedSize(src_len) ? HCOMP_E_NOMEM
                                                                  : HCOMP_E_INVAL;
    *dst_len = n;
    return HCOMP_OK;
}

static int brotli_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    /* The streaming decoder rather than BrotliDecoderDecompress, because only it
     * tells whether input is left over after the end of the stream. */
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (s == NULL)
        return HCOMP_E_NOMEM;
    size_t avail_in = src_len, avail_out = dst_len;
    const uint8_t *next_in = HCOMP_IN_(src, zs);
    uint8_t *next_out = HCOMP_OUT_(dst, zd);
    BrotliDecoderResult r =
        BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
    int rc = HCOMP_OK;
    if (r == BROTLI_DECODER_RESULT_ERROR) {
        BrotliDecoderErrorCode e = BrotliDecoderGetErrorCode(s);
        /* The _ERROR_ALLOC_* codes are -30..-21. */
        rc = e <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
                     e >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES
                 ? HCOMP_E_NOMEM
                 : HCOMP_E_CORRUPT;
    } else if (r != BROTLI_DECODER_RESULT_SUCCESS || avail_in != 0 || avail_out != 0) {
        /* truncated, longer or shorter than dst_len, or bytes after the end */
        rc = HCOMP_E_CORRUPT;
    }
    BrotliDecoderDestroyInstance(s);
    return rc;
}

const hcomp_codec hcomp_codec_brotli = {
    .id = HCOMP_CODEC_BROTLI,
    .name = "brotli",
    .level_min = HC_BROTLI_LEVEL_MIN, .level_max = HC_BROTLI_LEVEL_MAX,
    .level_default = HC_BROTLI_LEVEL_DEFAULT,
    .bound = brotli_bound,
    .compress = brotli_compress,
    .decompress = brotli_decompress,
};
