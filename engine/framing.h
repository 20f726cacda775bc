/* Pieces framed in blocks (docs/FORMAT.md, "Pieces framed in blocks"): each block of a
 * piece is encoded on its own with the piece's codec and filter, behind a table of the
 * blocks' stored lengths and checksums, so a read decodes only the blocks it needs. */
#ifndef HCOMP_FRAMING_H
#define HCOMP_FRAMING_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_codec.h"

/* The most a framed payload of len bytes takes without its table: every block at its
 * codec's bound (or stored as it is). */
size_t hcomp_frame_bound(const hcomp_codec *c, uint32_t len, uint32_t block_size);

/* Encode src[0..len) block by block into dst (dst_cap >= hcomp_frame_bound) and fill the
 * table (hcomp_block_table_size(blocks) bytes): a block that does not shrink is stored as
 * it is. *dst_len: the blocks' bytes; *coded: the codec's output summed over the blocks
 * (what it made, even where a block was stored as it is); *any: blocks the codec shrank.
 * When *any is 0 the table's checksums are not filled in (such a piece is framed again in
 * HCOMP_BLOCK_AS_IS blocks: hcomp_frame_table_raw). Returns the codec's error, or HCOMP_OK. */
int hcomp_frame_encode(const hcomp_codec *c, int level, int filter, uint32_t block_size,
                       const unsigned char *src, uint32_t len, unsigned char **tmp,
                       size_t *tmp_cap, unsigned char *dst, size_t dst_cap, unsigned char *table,
                       size_t *dst_len, uint64_t *coded, uint32_t *any);
/* The table of src stored as it is, block by block (a piece no block of which shrank). */
void hcomp_frame_table_raw(uint32_t block_size, const unsigned char *src, uint32_t len,
                           unsigned char *table);


/* Check the blocks of a piece stored as it is (no block shrank; codec none, no filter) that
 * were read into place, dst[0..raw_len), against its table (table_len bytes, read apart):
 * HCOMP_OK, or HCOMP_E_CORRUPT with *bad the first block whose length or checksum the
 * table does not give (-1: the table itself does not fit the piece). */
int hcomp_frame_check_raw(const unsigned char *table, size_t table_len, const unsigned char *dst,
                          uint32_t raw_len, uint32_t block_size, int64_t *bad);

/* Check a whole framed payload (table, then blocks; stored_len bytes) of raw_len logical
 * bytes: the table against block_size (0: the table's own, which must be a valid one) and
 * the codec's bounds, every block against its checksum; and, when dst is not NULL, decode
 * it into dst. HCOMP_OK, or HCOMP_E_CORRUPT with *bad the first damaged block (-1: the
 * table) and *bad_crc (if not NULL) set when its checksum did not match. */
int hcomp_frame_decode(const hcomp_codec *c, int filter, const unsigned char *payload,
                       uint32_t stored_len, uint32_t raw_len, uint32_t block_size,
                       unsigned char *dst, unsigned char **tmp, size_t *tmp_cap, int64_t *bad,
                       int *bad_crc);

/* fsck: every block of a framed payload checked as hcomp_frame_decode checks it (each
 * decoded into out, block_size bytes), the damaged ones flagged in damaged[0..blocks) (1:
 * its checksum does not match, 2: it does but does not decode) and counted in *ndamaged. HCOMP_E_CORRUPT when the table itself does not fit the piece (no
 * block can be told), else HCOMP_OK. */
int hcomp_frame_scan(const hcomp_codec *c, int filter, const unsigned char *payload,
                     uint32_t stored_len, uint32_t raw_len, uint32_t block_size,
                     unsigned char *out, unsigned char **tmp, size_t *tmp_cap,
                     unsigned char *damaged, uint32_t *ndamaged);

#endif
