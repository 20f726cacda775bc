/* Piece header layout (little-endian):
 *   0..5  start offset (48 bits)   6 codec id   7 version (high nibble) | filter (low)
 *   8..11 raw length               12..15 stored length */
#include "piece_header.h"
#include "common/util.h"
#include "hcomp_codec.h"

void hcomp_piece_header_encode(const hcomp_piece_header *h, unsigned char out[HCOMP_PIECE_HEADER_SIZE])
{
    uint64_t start = h->start & HCOMP_PIECE_MAX_OFFSET;
    for (int i = 0; i < 6; i++)
        out[i] = (unsigned char) (start >> (8 * i));
    out[6] = h->codec;
    out[7] = (unsigned char) ((HCOMP_PIECE_HEADER_VERSION << 4) | (h->filter & 0x0f));
    hcomp_put_u32(out + 8, h->raw_len);
    hcomp_put_u32(out + 12, h->stored_len);
}

int hcomp_piece_header_decode(const unsigned char in[HCOMP_PIECE_HEADER_SIZE], hcomp_piece_header *h)
{
    if ((in[7] >> 4) != HCOMP_PIECE_HEADER_VERSION || in[6] >= HCOMP_CODEC_COUNT)
        return -1;
    uint64_t start = 0;
    for (int i = 5; i >= 0; i--)
        start = (start << 8) | in[i];
    h->start = start;
    h->codec = in[6];
    h->filter = in[7] & 0x0f;
    h->raw_len = hcomp_get_u32(in + 8);
    h->stored_len = hcomp_get_u32(in + 12);
    if (h->codec == 0 && h->stored_len != h->raw_len)
        return -1;
    return 0;
}
