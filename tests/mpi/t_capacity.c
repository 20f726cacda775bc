/* Tier capacity holds when several processes write different files at the same
 * time (file per process on MPI_COMM_SELF): together they must not place more
 * than the capacity on the tier; the rest spills to the next tier. hcomp only.
 *
 *   t_capacity TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * Every rank writes 200 KiB of random data in 16 KiB pieces to its own file on a
 * 256 KiB first tier: one piece first, then (after a barrier) the rest, so that
 * all ranks have started writing before any of them has filled much. */
#include "tcommon.h"

#define LEN (200 * KiB)
#define SLACK (8 * KiB) /* piece headers */

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_capacity needs an hcomp: target");
    static const char *const caps[2] = {"256KiB", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "16384", NULL);
    MPI_Status st;
    uint8_t *w = t_malloc(LEN), *g = t_malloc(LEN);
    t_fill_random(w, LEN, 500 + (uint64_t)t.rank);

    char name[4200], suffix[32];
    snprintf(suffix, sizeof suffix, ".rank%d", t.rank);
    snprintf(name, sizeof name, "%s", t_name(&t, suffix));
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("open %s: %s", name, t_errstr(rc));
    TCHK(MPI_File_write_at(fh, 0, w, 16384, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_write_at(fh, 16384, w + 16384, (int)(LEN - 16384), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);

    uint64_t used0 = 0, used1 = 0;
    if (t.rank == 0) {
        used0 = t_du(tt.dir[0], NULL);
        used1 = t_du(tt.dir[1], NULL);
        t_log(&t, "%d files of 200 KiB: %llu bytes on the 256 KiB tier, %llu on the next",
              t.nprocs, (unsigned long long)used0, (unsigned long long)used1);
    }
    MPI_Bcast(&used0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    TASSERT(used0 <= 256 * KiB + SLACK, "%d concurrent writers put %llu bytes on a 256 KiB tier",
            t.nprocs, (unsigned long long)used0);

    rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("reopen %s: %s", name, t_errstr(rc));
    TCHK(MPI_File_read_at(fh, 0, g, (int)LEN, MPI_BYTE, &st));
    TEXPECT_BYTES(g, w, LEN, 0, "own file read back");
    TCHK(MPI_File_close(&fh));
    TCHK(MPI_File_delete(name, info));
    MPI_Info_free(&info);
    t_remove_tiers(&t, &tt);
    free(w), free(g);
    return t_finish(&t);
}
