/* Partial reads at unaligned offsets, with hcomp_piece_size=4096 so that reads
 * start, end and span piece boundaries (and, for ufs, block boundaries); then all again
 * with 16 KiB pieces framed in 4 KiB blocks (format 2) compressed by zstd, so that the
 * same reads start, end and span block boundaries inside pieces, of blocks compressed and
 * stored as they are (the data mixes smooth, counting and random 8 KiB runs).
 *
 *   t_unaligned TARGET [CONFIG]
 *
 * The file (FSIZE bytes, t_byte(off, 7)) is written collectively in uneven
 * slices that themselves start and end off 4096 boundaries. Every rank then does
 * the same list of independent reads plus its own rank-dependent ones. */
#include "tcommon.h"

#define SEED 7
#define FSIZE (16 * 4096 * 5 + 1234) /* 328914 bytes: ~80 pieces of 4 KiB */

static void check_read(MPI_File fh, const uint8_t *exp, uint64_t off, uint64_t len)
{
    static uint8_t buf[3 * 65536];
    MPI_Status st;
    if (len > sizeof buf)
        TFAIL("test bug: read too long");
    memset(buf, 0xA5, len + 16);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)len, MPI_BYTE, &st));
    uint64_t want = off >= FSIZE ? 0 : (off + len > FSIZE ? FSIZE - off : len);
    TASSERT((uint64_t)t_count(&st) == want, "read of %llu bytes at %llu returned %d, want %llu",
            (unsigned long long)len, (unsigned long long)off, t_count(&st),
            (unsigned long long)want);
    t_expect_bytes(__FILE__, __LINE__, buf, exp + off, want, off,
                   t_fmt("read of %llu bytes at offset %llu", (unsigned long long)len,
                         (unsigned long long)off));
    for (uint64_t i = want; i < len + 16; i++)
        if (buf[i] != 0xA5)
            TFAIL("read of %llu at %llu wrote past the %llu bytes it returned (index %llu)",
                  (unsigned long long)len, (unsigned long long)off,
                  (unsigned long long)want, (unsigned long long)i);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Status st;
    uint8_t *exp = t_malloc(FSIZE);
    t_fill(exp, FSIZE, 0, SEED);
    for (int layout = 0; layout < 2; layout++) {
        MPI_Info info = layout == 0 ? t_info(&t, "hcomp_piece_size", "4096", NULL)
                                    : t_info(&t, "hcomp_piece_size", "16384", "hcomp_block_size",
                                             "4096", "hcomp_codec", "zstd", NULL);

        t_delete_quiet(&t, t.target, info);
        MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
        /* uneven slices: rank r writes [b_r, b_{r+1}) with b_r = r * FSIZE / P + 333*r */
        uint64_t b0 = (uint64_t)r * FSIZE / P + (r ? 333u * r : 0);
        uint64_t b1 = r == P - 1 ? FSIZE : (uint64_t)(r + 1) * FSIZE / P + 333u * (r + 1);
        TCHK(MPI_File_write_at_all(fh, (MPI_Offset)b0, exp + b0, (int)(b1 - b0), MPI_BYTE, &st));
        TCHK(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        TCHK(MPI_File_sync(fh));
        TASSERT(t_get_size(fh) == FSIZE, "size %lld, want %d", (long long)t_get_size(fh), FSIZE);

        /* the same reads, within the same open and after reopening read-only */
        for (int pass = 0; pass < 2; pass++) {
            check_read(fh, exp, 4093, 7);          /* 7 bytes straddling the 1st boundary */
            check_read(fh, exp, 0, 1);
            check_read(fh, exp, 4095, 1);          /* last byte of a piece */
            check_read(fh, exp, 4096, 1);          /* first byte of the next */
            check_read(fh, exp, 4095, 2);
            check_read(fh, exp, 1, 4095);          /* rest of piece 0 */
            check_read(fh, exp, 4097, 8190);       /* spans 3 pieces */
            check_read(fh, exp, 8191, 3 * 4096 + 2); /* starts 1 before a boundary */
            check_read(fh, exp, 12345, 65536);     /* long, unaligned both ends */
            check_read(fh, exp, 40000, 0);         /* empty read */
            check_read(fh, exp, FSIZE - 3, 3);     /* last bytes */
            check_read(fh, exp, FSIZE - 3, 100);   /* short read at EOF */
            check_read(fh, exp, FSIZE, 10);        /* at EOF */
            check_read(fh, exp, FSIZE + 4093, 7);  /* past EOF */
            /* rank-dependent: a sweep of odd offsets and lengths */
            for (uint64_t i = 0; i < 64; i++) {
                uint64_t off = (t_mix64(i * 131 + (uint64_t)r + 1000u * pass) % FSIZE);
                uint64_t len = 1 + t_mix64(i + 77u * (uint64_t)r) % 20000;
                check_read(fh, exp, off, len);
            }
            /* each boundary k*4096 with 3 bytes either side, split among ranks */
            for (uint64_t k = 1 + (uint64_t)r; k * 4096 < FSIZE; k += (uint64_t)P)
                check_read(fh, exp, k * 4096 - 3, 6);

            /* collective read of a slice misaligned by rank */
            uint64_t coff = 4093 + 1000u * (uint64_t)r, clen = 3 * 4096 + 11;
            uint8_t *cb = t_malloc(clen);
            TCHK(MPI_File_read_at_all(fh, (MPI_Offset)coff, cb, (int)clen, MPI_BYTE, &st));
            TEXPECT_BYTES(cb, exp + coff, clen, coff, "collective unaligned read");
            free(cb);

            if (pass == 0) {
                TCHK(MPI_File_close(&fh));
                fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
            }
        }
        TCHK(MPI_File_close(&fh));
        t_delete(&t, t.target, info);
        MPI_Info_free(&info);
    }
    free(exp);
    return t_finish(&t);
}
