/* After a write fails with MPI_ERR_NO_SPACE, the file stays usable: when room comes back
 * the next writes succeed and read back, and MPI_File_delete removes every segment the
 * failed write created. hcomp targets only.
 *
 *   t_nospace TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * One tier of 256 KiB; pieces of 16 KiB, random data (stored as it is). Rank 0:
 *  1. writes 128 KiB into another file (the tier is half full);
 *  2. opens the file (all ranks) and writes 512 KiB at offset 0: MPI_ERR_NO_SPACE; the
 *     pieces it stored before running out of room are in a new segment;
 *  3. the other file is deleted (room comes back), and after 1.5 s (hcomp does not ask
 *     the capacity ledger again for a second after it said no) rank 0 writes 64 KiB at
 *     1 MiB: it must succeed and read back at once, and every rank reads it after
 *     reopening;
 *  4. MPI_File_delete leaves the tier directory empty (no orphaned segment). */
#include "tfault.h"

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_nospace needs an hcomp: target");
    static const char *const caps[1] = {"256KiB"};
    ttiers tt;
    t_make_tiers(&t, &tt, 1, caps);
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "16384", NULL);
    MPI_Status st;
    uint8_t *big = t_malloc(512 * KiB), *small = t_malloc(64 * KiB), *back = t_malloc(64 * KiB);
    t_fill_random(big, 512 * KiB, 1);
    t_fill_random(small, 64 * KiB, 2);
    const char *other = t_name(&t, ".other");

    /* 1 */
    t_delete_quiet(&t, other, info);
    MPI_File fh = t_open(&t, other, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t.rank == 0)
        TCHK(MPI_File_write_at(fh, 0, big, 128 * KiB, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));

    /* 2 */
    t_delete_quiet(&t, t.target, info);
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t.rank == 0) {
        int rc = MPI_File_write_at(fh, 0, big, 512 * KiB, MPI_BYTE, &st);
        TASSERT(t_err_class(rc) == MPI_ERR_NO_SPACE, "512 KiB into 128 KiB of room: %s",
                rc ? t_errstr(rc) : "succeeded");
        uint64_t n, used = t_du(tt.dir[0], &n);
        t_log(&t, "the failed write left %llu bytes in %llu files on the tier",
              (unsigned long long)used, (unsigned long long)n);
    }

    /* 3 */
    t_delete(&t, other, info);
    if (t.rank == 0) {
        usleep(1500000);
        int rc = MPI_File_write_at(fh, (MPI_Offset)MiB, small, 64 * KiB, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            TFAIL("64 KiB after room came back: %s", t_errstr(rc));
        memset(back, 0, 64 * KiB);
        TCHK(MPI_File_read_at(fh, (MPI_Offset)MiB, back, 64 * KiB, MPI_BYTE, &st));
        TEXPECT_BYTES(back, small, 64 * KiB, MiB, "the write after MPI_ERR_NO_SPACE, same open");
    }
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    memset(back, 0, 64 * KiB);
    int rc = MPI_File_read_at(fh, (MPI_Offset)MiB, back, 64 * KiB, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS)
        TFAIL("reading the write made after MPI_ERR_NO_SPACE, after reopening: %s", t_errstr(rc));
    TEXPECT_BYTES(back, small, 64 * KiB, MiB, "the write after MPI_ERR_NO_SPACE, after reopening");
    TCHK(MPI_File_close(&fh));

    /* 4 */
    t_delete(&t, t.target, info);
    t_remove_tiers(&t, &tt); /* fails if a segment was left behind */
    MPI_Info_free(&info);
    free(big), free(small), free(back);
    return t_finish(&t);
}
