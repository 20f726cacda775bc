/* The 16-byte header in front of every stored piece, and the block table of framed
 * pieces (docs/FORMAT.md): enough to decode the piece from the data alone. */
#ifndef HCOMP_PIECE_HEADER_H
#define HCOMP_PIECE_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define HCOMP_PIECE_HEADER_SIZE 16
#define HCOMP_PIECE_HEADER_VERSION 1        /* unframed */
#define HCOMP_PIECE_HEADER_VERSION_FRAMED 2 /* a block table, then the blocks */
#define HCOMP_PIECE_MAX_OFFSET ((UINT64_C(1) << 48) - 1)

/* Framing k (PIECE/RELOCATE flags bits 4..7): blocks of 4096 << (k - 1); 0 unframed. */
#define HCOMP_FRAME_MAX 15
#define HCOMP_BLOCK_MIN 4096u
#define HCOMP_BLOCK_MAX (64u << 20)
#define HCOMP_BLOCK_TABLE_FIXED 8
#define HCOMP_BLOCK_ENTRY 8
/* Pieces no block of which shrank are framed in blocks of this size whatever the file's
 * block size: a finer table costs them only 8 bytes per 4 KiB (nothing is compressed to
 * lose), and lets a small read fetch and check 4 KiB of them instead of a whole block. */
#define HCOMP_BLOCK_AS_IS 4096u

typedef struct hcomp_piece_header {
    uint64_t start;       /* logical offset of the piece's first byte (48 bits) */
    uint32_t raw_len;     /* logical bytes the piece holds */
    uint32_t stored_len;  /* bytes of payload after the header (table and blocks) */
    uint8_t codec;        /* enum hcomp_codec_id */
    uint8_t filter;       /* 0: none (4 bits on disk) */
    uint8_t framed;       /* 1: header version 2, a block table follows */
} hcomp_piece_header;

void hcomp_piece_header_encode(const hcomp_piece_header *h, unsigned char out[HCOMP_PIECE_HEADER_SIZE]);
/* Returns 0, or -1 if the bytes are not a valid version-1 or version-2 header. */
int hcomp_piece_header_decode(const unsigned char in[HCOMP_PIECE_HEADER_SIZE], hcomp_piece_header *h);

/* Block size of framing k (0 for k = 0 or k out of range). */
uint32_t hcomp_frame_block_size(unsigned k);
/* Framing of a block size (a power of two from 4 KiB to 64 MiB), else 0. */
unsigned hcomp_frame_of_block_size(uint32_t block_size);
/* Blocks of a piece of raw_len bytes and its table's length. */
uint32_t hcomp_frame_blocks(uint32_t raw_len, uint32_t block_size);
size_t hcomp_block_table_size(uint32_t nblocks);
/* Table access (t: the table's bytes). */
void hcomp_block_table_init(unsigned char *t, uint32_t block_size, uint32_t nblocks);
void hcomp_block_table_set(unsigned char *t, uint32_t i, uint32_t stored, uint32_t crc);
uint32_t hcomp_block_stored(const unsigned char *t, uint32_t i);
uint32_t hcomp_block_crc(const unsigned char *t, uint32_t i);
/* 0 when the table says blocks of block_size and as many as raw_len needs, whose stored
 * lengths add up to payload_len (the piece's stored length) with the table, each no
 * larger than bound(its logical length); else -1. */
int hcomp_block_table_check(const unsigned char *t, uint32_t raw_len, uint32_t block_size,
                            uint64_t payload_len, size_t (*bound)(size_t));

#endif
