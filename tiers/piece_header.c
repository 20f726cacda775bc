/* Piece header layout (little-endian):
 *   0..5  start offset (48 bits)   6 codec id   7 version (high nibble) | filter (low)
 *   8..11 raw length               12..15 stored length
 * Block table of a framed piece (version 2): block size u32, block count u32, then per
 * block its stored length u32 and CRC-32 u32. */
#include "piece_header.h"
#include "common/util.h"
#include "hcomp_codec.h"

void hcomp_piece_header_encode(const hcomp_piece_header *h, unsigned char out[HCOMP_PIECE_HEADER_SIZE])
{
    uint64_t start = h->start & HCOMP_PIECE_MAX_OFFSET;
    for (int i = 0; i < 6; i++)
        out[i] = (unsigned char) (start >> (8 * i));
    out[6] = h->codec;
    unsigned v = h->framed ? HCOMP_PIECE_HEADER_VERSION_FRAMED : HCOMP_PIECE_HEADER_VERSION;
    out[7] = (unsigned char) ((v << 4) | (h->filter & 0x0f));
    hcomp_put_u32(out + 8, h->raw_len);
    hcomp_put_u32(out + 12, h->stored_len);
}

int hcomp_piece_header_decode(const unsigned char in[HCOMP_PIECE_HEADER_SIZE], hcomp_piece_header *h)
{
    unsigned v = in[7] >> 4;
    if ((v != HCOMP_PIECE_HEADER_VERSION && v != HCOMP_PIECE_HEADER_VERSION_FRAMED) ||
        in[6] >= HCOMP_CODEC_COUNT)
        return -1;
    uint64_t start = 0;
    for (int i = 5; i >= 0; i--)
        start = (start << 8) | in[i];
    h->start = start;
    h->codec = in[6];
    h->filter = in[7] & 0x0f;
    h->framed = v == HCOMP_PIECE_HEADER_VERSION_FRAMED;
    h->raw_len = hcomp_get_u32(in + 8);
    h->stored_len = hcomp_get_u32(in + 12);
    if (h->codec == 0 && !h->framed && h->stored_len != h->raw_len)
        return -1;
    return 0;
}

uint32_t hcomp_frame_block_size(unsigned k)
{
    return k == 0 || k > HCOMP_FRAME_MAX ? 0 : HCOMP_BLOCK_MIN << (k - 1);
}

unsigned hcomp_frame_of_block_size(uint32_t block_size)
{
    for (unsigned k = 1; k <= HCOMP_FRAME_MAX; k++)
        if (hcomp_frame_block_size(k) == block_size && block_size <= HCOMP_BLOCK_MAX)
            return k;
    return 0;
}

uint32_t hcomp_frame_blocks(uint32_t raw_len, uint32_t block_size)
{
    return block_size ? (uint32_t) (((uint64_t) raw_len + block_size - 1) / block_size) : 0;
}

size_t hcomp_block_table_size(uint32_t nblocks)
{
    return HCOMP_BLOCK_TABLE_FIXED + (size_t) nblocks * HCOMP_BLOCK_ENTRY;
}

void hcomp_block_table_init(unsigned char *t, uint32_t block_size, uint32_t nblocks)
{
    hcomp_put_u32(t, block_size);
    hcomp_put_u32(t + 4, nblocks);
}

void hcomp_block_table_set(unsigned char *t, uint32_t i, uint32_t stored, uint32_t crc)
{
    unsigned char *e = t + HCOMP_BLOCK_TABLE_FIXED + (size_t) i * HCOMP_BLOCK_ENTRY;
    hcomp_put_u32(e, stored);
    hcomp_put_u32(e + 4, crc);
}

uint32_t hcomp_block_stored(const unsigned char *t, uint32_t i)
{
    return hcomp_get_u32(t + HCOMP_BLOCK_TABLE_FIXED + (size_t) i * HCOMP_BLOCK_ENTRY);
}

uint32_t hcomp_block_crc(const unsigned char *t, uint32_t i)
{
    return hcomp_get_u32(t + HCOMP_BLOCK_TABLE_FIXED + (size_t) i * HCOMP_BLOCK_ENTRY + 4);
}

int hcomp_block_table_check(const unsigned char *t, uint32_t raw_len, uint32_t block_size,
                            uint64_t payload_len, size_t (*bound)(size_t))
{
    uint32_t n = hcomp_frame_blocks(raw_len, block_size);
    if (block_size == 0 || hcomp_get_u32(t) != block_size || hcomp_get_u32(t + 4) != n)
        return -1;
    uint64_t sum = hcomp_block_table_size(n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t raw = i + 1 < n ? block_size : raw_len - i * block_size;
        uint32_t s = hcomp_block_stored(t, i);
        if (s == 0 && raw > 0)
            return -1;
        if (s > raw && (bound == NULL || s > bound(raw)))
            return -1;
        sum += s;
    }
    return sum == payload_len ? 0 : -1;
}
