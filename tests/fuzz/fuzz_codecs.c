/* Fuzz target: every codec of include/hcomp_codec.h, and the filters with them.
 * Input: byte 0 = codec id (bits 0-2, plus 8 when bit 7 is set; modulo the number of
 * codecs) | 8 for a round trip | level selector (bits 4-6).
 *  - decode (bit 3 clear): bytes 1-2 are the expected raw length (little-endian), the rest
 *    is a hostile stream. Properties: the decoder returns HCOMP_OK or HCOMP_E_CORRUPT,
 *    never writes outside the buffer of exactly that length (ASan), and on success has
 *    written every byte of it (two decodes into buffers filled differently agree); a
 *    stream that decodes to n bytes does not also decode to n-1 or n+1; what it decoded
 *    compresses and decompresses back to itself.
 *  - round trip (bit 3 set): the rest is data. Properties: compress into bound() bytes
 *    succeeds at the selected level, decompress gives the data back, and not at another
 *    length; every filter the codec carries (byte shuffles; bitshuffles inside c-blosc and
 *    c-blosc2 chunks; bytedelta and delta inside c-blosc2 chunks) round-trips with it and
 *    is refused by a decode as another filter. */
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

/* data[0..n) through filter and codec and back; refused as any other filter. */
static void filtered_roundtrip(const hcomp_codec *c, int f, const unsigned char *d, size_t n,
                               int level)
{
    unsigned char *tmp = NULL;
    size_t tmp_cap = 0, zn = 0, cap = c->bound(n);
    unsigned char *z = xmalloc(cap), *u = xmalloc(n);
    int rc = hcomp_filter_encode(c, level, f, d, n, &tmp, &tmp_cap, z, cap, &zn);
    if (!hcomp_filter_fits(f, c)) {
        CHECK(rc == HCOMP_E_INVAL, "%s: filter %d it cannot carry gave %d", c->name, f, rc);
    } else {
        CHECK(rc == HCOMP_OK, "%s: filter %d, %zu bytes: encode returned %d", c->name, f, n, rc);
        rc = hcomp_filter_decode(c, f, z, zn, n ? u : NULL, n, &tmp, &tmp_cap);
        CHECK(rc == HCOMP_OK && (n == 0 || memcmp(u, d, n) == 0),
              "%s: filter %d does not undo (%d)", c->name, f, rc);
        /* a chunk that records its transform is refused as another (when it holds one) */
        if (c->decompress_typed != NULL)
            for (int g = 0; g < HCOMP_FILTER_COUNT; g++) {
                int r = hcomp_filter_decode(c, g, z, zn, n ? u : NULL, n, &tmp, &tmp_cap);
                CHECK(r == HCOMP_OK || r == HCOMP_E_CORRUPT, "%s: filter %d as %d gave %d",
                      c->name, f, g, r);
                CHECK(r != HCOMP_OK || n == 0 || memcmp(u, d, n) == 0,
                      "%s: filter %d decoded as %d gave other bytes", c->name, f, g);
            }
    }
    free(tmp);
    free(z);
    free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned id = ((data[0] & 7u) | (data[0] & 0x80u ? 8u : 0u)) % HCOMP_CODEC_COUNT;
    const hcomp_codec *c = hcomp_codec_by_id(id);
    CHECK(c != NULL && c->id == id, "codec %u missing", id);
    int range = c->level_max - c->level_min + 1;
    int level = c->level_min + ((data[0] >> 4) & 7) % range;

    if (data[0] & 8) {          /* round trip of the data */
        const unsigned char *d = data + 1;
        size_t n = size - 1;
        roundtrip(c, d, n, level);
        for (int f = HCOMP_FILTER_SHUFFLE4; f < HCOMP_FILTER_COUNT; f++)
            filtered_roundtrip(c, f, d, n, level);
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
