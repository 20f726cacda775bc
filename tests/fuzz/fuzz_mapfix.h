/* For the mapping-file fuzz targets: make checksums right, so that mutated records
 * get past the CRCs and reach the code that interprets them. Without this nearly every
 * mutation of a record is plain damage. */
#ifndef HCOMP_FUZZ_MAPFIX_H
#define HCOMP_FUZZ_MAPFIX_H

#include <string.h>
#include "common/util.h"
#include "file/mapfile.h"
#include "tiers/piece_header.h"

/* Walk m[0..len) as the writer would have laid it out (header, then records one after
 * the other wherever a record magic with a plausible length starts) and recompute
 * every frame check and CRC. With seg (writable, seglen bytes): first rewrite the piece
 * header of every PIECE record found inside seg to agree with the record, then set the
 * record's payload CRC to that of the payload in seg. */
static void fuzz_fix_map(unsigned char *m, size_t len, unsigned char *seg, size_t seglen)
{
    size_t start = 0;
    if (len >= HCOMP_MAP_HEADER_SIZE && memcmp(m, HCOMP_MAP_MAGIC, 8) == 0) {
        hcomp_put_u32(m + 60, hcomp_crc32(m, 60));
        start = HCOMP_MAP_HEADER_SIZE;
    }
    for (int pass = 0; pass < 3; pass++) {
        size_t p = start;
        while (p + HCOMP_MAP_FRAME_SIZE <= len) {
            uint32_t n = hcomp_get_u32(m + p + 4);
            if (hcomp_get_u32(m + p) != HCOMP_MAP_RECORD_MAGIC || n > HCOMP_MAP_MAX_PAYLOAD ||
                (size_t) n + HCOMP_MAP_FRAME_SIZE > len - p) {
                p++;
                continue;
            }
            unsigned char *pl = m + p + 12;
            if (pass < 2 && seg != NULL && hcomp_get_u16(m + p + 8) == HCOMP_REC_PIECE &&
                n >= HCOMP_MAP_PIECE_FIXED) {
                uint64_t off = hcomp_get_u64(pl + 8);
                uint32_t stored = hcomp_get_u32(pl + 16);
                if (off <= seglen && seglen - off >= HCOMP_PIECE_HEADER_SIZE &&
                    seglen - off - HCOMP_PIECE_HEADER_SIZE >= stored) {
                    uint32_t raw = hcomp_get_u32(pl + 20);
                    uint32_t bs = hcomp_frame_block_size(pl[30] >> 4);
                    uint32_t nb = hcomp_frame_blocks(raw, bs);
                    unsigned char *payload = seg + off + HCOMP_PIECE_HEADER_SIZE;
                    size_t tlen = bs ? hcomp_block_table_size(nb) : 0;
                    if (pass == 0) {    /* the piece header agrees with the record */
                        hcomp_piece_header h = {0, raw, stored, pl[28], pl[29], bs != 0};
                        if (n >= HCOMP_MAP_PIECE_FIXED + HCOMP_MAP_EXTENT_SIZE)
                            h.start = hcomp_get_u64(pl + 36) - hcomp_get_u32(pl + 36 + 12);
                        hcomp_piece_header_encode(&h, seg + off);
                        /* a framed piece: its table's blocks' checksums */
                        for (uint32_t i = 0, at = (uint32_t) tlen; bs && tlen <= stored && i < nb; i++) {
                            uint32_t s = hcomp_block_stored(payload, i);
                            if (s > stored - at)
                                break;
                            hcomp_block_table_set(payload, i, s, hcomp_crc32(payload + at, s));
                            at += s;
                        }
                    } else if (bs == 0) {   /* the payload's checksum */
                        hcomp_put_u32(pl + 24, hcomp_crc32(payload, stored));
                    } else if (tlen <= stored) {    /* a framed piece's: its table's */
                        hcomp_put_u32(pl + 24, hcomp_crc32(payload, tlen));
                    }
                }
            }
            if (pass == 2) {
                hcomp_put_u16(m + p + 10, (uint16_t) (hcomp_crc32(m + p + 4, 6) & 0xffff));
                hcomp_put_u32(pl + n, hcomp_crc32(m + p + 4, 8 + (size_t) n));
            }
            p += (size_t) n + HCOMP_MAP_FRAME_SIZE;
        }
    }
}

#endif
