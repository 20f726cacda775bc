/* Fuzz target: every codec of include/hcomp_codec.h, and the byte-shuffle filters.
 * Input: byte 0 = codec id (bits 0-2) | 8 for a round trip | level selector (bits 4-7).
 *  - decode (bit 3 clear): bytes 1-2 are the expected raw length (little-endian), the rest
 *    is a hostile stream. Properties: the decoder returns HCOMP_OK or HCOMP_E_CORRUPT,
 *    never writes outside the buffer of exactly that length (ASan), and on success has
 *    written every byte of it (two decodes into buffers filled differently agree); a
 *    stream that decodes to n bytes does not also decode to n-1 or n+1; what it decoded
 *    compresses and decompresses back to itself.
 *  - round trip (bit 3 set): the rest is data. Properties: compress into bound() bytes
 *    succeeds at the selected level, decompress gives the data back, and not at another
 *    length; the byte shuffles of 4- and 8-byte elements undo to the data. */
#include "fuzz_common.h"
#include "hcomp_codec.h"
#include "engine/filter.h"

#include <string.h>

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    CHECK(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* data[0..n) compresses at level and decompresses back; not at another length. */
static void roundtrip(const hcomp_codec *c, const unsigned char *data, size_t n, int level)
{
    size_t cap = c->bound(n);
    CHECK(cap >= n, "%s: bound %zu < %zu", c->name, cap, n);
    unsigned char *z = xmalloc(cap);
    size_t zn = 0;
    int rc = c->compress(n ? data : NULL, n, z, cap, &zn, level);
    CHECK(rc == HCOMP_OK, "%s level %d: compress of %zu bytes returned %d", c->name, level, n, rc);
    CHECK(zn <= cap, "%s: %zu bytes out, bound %zu", c->name, zn, cap);
    unsigned char *back = xmalloc(n);
    rc = c->decompress(z, zn, n ? back : NULL, n);
    CHECK(rc == HCOMP_OK, "%s level %d: decompress of its own %zu-byte stream returned %d",
          c->name, level, zn, rc);
    CHECK(n == 0 || memcmp(back, data, n) == 0, "%s level %d: round trip changed the data",
          c->name, level);
    free(back);
    unsigned char *longer = xmalloc(n + 1);
    rc = c->decompress(z, zn, longer, n + 1);
    CHECK(rc == HCOMP_E_CORRUPT, "%s: a stream of %zu bytes also decodes to %zu (%d)", c->name,
          n, n + 1, rc);
    free(longer);
    free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const hcomp_codec *c = hcomp_codec_by_id(data[0] & 7);
    CHECK(c != NULL && c->id == (unsigned) (data[0] & 7), "codec %u missing", data[0] & 7);
    int range = c->level_max - c->level_min + 1;
    int level = c->level_min + (data[0] >> 4) % range;

    if (data[0] & 8) {          /* round trip of the data */
        const unsigned char *d = data + 1;
        size_t n = size - 1;
        roundtrip(c, d, n, level);
        for (int f = HCOMP_FILTER_SHUFFLE4; f < HCOMP_FILTER_COUNT; f++) {
            unsigned char *s = xmalloc(n), *u = xmalloc(n);
            hcomp_filter_apply(f, d, s, n);
            hcomp_filter_undo(f, s, u, n);
            CHECK(n == 0 || memcmp(u, d, n) == 0, "filter %d does not undo", f);
            free(s);
            free(u);
        }
        return 0;
    }

    if (size < 3)
        return 0;
    size_t n = (size_t) data[1] | (size_t) data[2] << 8;
    const unsigned char *src = data + 3;
    size_t sn = size - 3;
    /* a copy of exactly sn bytes, so reading past the stream is caught */
    unsigned char *s = xmalloc(sn);
    memcpy(s, src, sn);
    unsigned char *a = xmalloc(n), *b = xmalloc(n);
    memset(a, 0x00, n);
    memset(b, 0xff, n);
    int ra = c->decompress(sn ? s : NULL, sn, n ? a : NULL, n);
    int rb = c->decompress(sn ? s : NULL, sn, n ? b : NULL, n);
    CHECK(ra == HCOMP_OK || ra == HCOMP_E_CORRUPT, "%s: decompress of %zu bytes to %zu returned %d",
          c->name, sn, n, ra);
    CHECK(ra == rb, "%s: two decodes of the same stream returned %d and %d", c->name, ra, rb);
    if (ra == HCOMP_OK) {
        CHECK(n == 0 || memcmp(a, b, n) == 0,
              "%s: a successful decode did not write all %zu bytes", c->name, n);
        if (n > 0) {
            unsigned char *shorter = xmalloc(n - 1);
            int r = c->decompress(sn ? s : NULL, sn, n - 1 ? shorter : NULL, n - 1);
            CHECK(r == HCOMP_E_CORRUPT, "%s: a stream that decodes to %zu also decodes to %zu "
                  "(%d)", c->name, n, n - 1, r);
            free(shorter);
        }
        unsigned char *longer = xmalloc(n + 1);
        int r = c->decompress(sn ? s : NULL, sn, longer, n + 1);
        CHECK(r == HCOMP_E_CORRUPT, "%s: a stream that decodes to %zu also decodes to %zu (%d)",
              c->name, n, n + 1, r);
        free(longer);
        roundtrip(c, a, n, level);
    }
    free(a);
    free(b);
    free(s);
    return 0;
}
