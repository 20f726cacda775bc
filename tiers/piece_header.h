/* The 16-byte header in front of every stored piece (docs/FORMAT.md): enough to
 * decode the piece from the data alone. */
#ifndef HCOMP_PIECE_HEADER_H
#define HCOMP_PIECE_HEADER_H

#include <stdint.h>

#define HCOMP_PIECE_HEADER_SIZE 16
#define HCOMP_PIECE_HEADER_VERSION 1
#define HCOMP_PIECE_MAX_OFFSET ((UINT64_C(1) << 48) - 1)

typedef struct hcomp_piece_header {
    uint64_t start;       /* logical offset of the piece's first byte (48 bits) */
    uint32_t raw_len;     /* logical bytes the piece holds */
    uint32_t stored_len;  /* bytes of payload after the header */
    uint8_t codec;        /* enum hcomp_codec_id */
    uint8_t filter;       /* 0: none (4 bits on disk) */
} hcomp_piece_header;

void hcomp_piece_header_encode(const hcomp_piece_header *h, unsigned char out[HCOMP_PIECE_HEADER_SIZE]);
/* Returns 0, or -1 if the bytes are not a version-1 header. */
int hcomp_piece_header_decode(const unsigned char in[HCOMP_PIECE_HEADER_SIZE], hcomp_piece_header *h);

#endif
