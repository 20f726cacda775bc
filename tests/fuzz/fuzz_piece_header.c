/* Fuzz target: the 16-byte piece header (tiers/piece_header.h, docs/FORMAT.md).
 * Properties: decode accepts exactly the version-1 and version-2 (framed) headers with a
 * known codec (and, unframed, stored == raw for codec 0); what it accepts re-encodes to
 * the same 16 bytes. */
#include "fuzz_common.h"
#include "tiers/piece_header.h"
#include "hcomp_codec.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char in[HCOMP_PIECE_HEADER_SIZE] = {0};
    memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
    hcomp_piece_header h;
    memset(&h, 0xa5, sizeof(h));
    int rc = hcomp_piece_header_decode(in, &h);
    uint32_t raw = (uint32_t) in[8] | (uint32_t) in[9] << 8 | (uint32_t) in[10] << 16 |
                   (uint32_t) in[11] << 24;
    uint32_t stored = (uint32_t) in[12] | (uint32_t) in[13] << 8 | (uint32_t) in[14] << 16 |
                      (uint32_t) in[15] << 24;
    int framed = (in[7] >> 4) == HCOMP_PIECE_HEADER_VERSION_FRAMED;
    int valid = ((in[7] >> 4) == HCOMP_PIECE_HEADER_VERSION || framed) &&
                in[6] < HCOMP_CODEC_COUNT && !(in[6] == HCOMP_CODEC_NONE && !framed && raw != stored);
    CHECK(rc == 0 || rc == -1, "decode returned %d", rc);
    CHECK((rc == 0) == valid, "decode returned %d for a header that is %svalid", rc,
          valid ? "" : "in");
    if (rc != 0)
        return 0;
    CHECK(h.start <= HCOMP_PIECE_MAX_OFFSET, "start %llu beyond 48 bits",
          (unsigned long long) h.start);
    CHECK(h.codec < HCOMP_CODEC_COUNT && h.filter < 16, "codec %u filter %u", h.codec, h.filter);
    CHECK(h.raw_len == raw && h.stored_len == stored, "lengths %u/%u, header says %u/%u",
          h.raw_len, h.stored_len, raw, stored);
    unsigned char out[HCOMP_PIECE_HEADER_SIZE];
    hcomp_piece_header_encode(&h, out);
    CHECK(memcmp(in, out, sizeof(in)) == 0, "re-encoding a decoded header changed its bytes");
    hcomp_piece_header h2;
    CHECK(hcomp_piece_header_decode(out, &h2) == 0 && h2.start == h.start &&
          h2.raw_len == h.raw_len && h2.stored_len == h.stored_len && h2.codec == h.codec &&
          h2.filter == h.filter && h2.framed == h.framed && h.framed == framed,
          "decode(encode(h)) != h");
    return 0;
}
