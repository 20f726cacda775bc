/* Spill between tiers: with a first tier of 256 KiB, 4 MiB of incompressible
 * data must land on both tiers (the first holding no more than its capacity) and
 * read back exactly. hcomp targets only.
 *
 *   t_spill TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * The ranks write the 4 MiB collectively (one contiguous slice each), in two
 * calls, then verify in the same open; then overwrite scattered ranges (which
 * now go to the second tier) and verify after reopening. */
#include "tcommon.h"

#define TOTAL (4 * MiB)
#define CAP0 (256 * KiB)

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_spill needs an hcomp: target");
    static const char *const caps[2] = {"256KiB", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    t.config = tt.cfg;
    MPI_Info info = t_info(&t, "hcomp_codec", "lz4", "hcomp_piece_size", "65536", NULL);
    MPI_Status st;

    uint8_t *all = t_malloc(TOTAL), *back = t_malloc(TOTAL);
    t_fill_random(all, TOTAL, 4242);
    uint64_t a = (uint64_t)t.rank * TOTAL / t.nprocs, b = (uint64_t)(t.rank + 1) * TOTAL / t.nprocs;
    uint64_t m = a + (b - a) / 2;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, all + a, (int)(m - a), MPI_BYTE, &st));
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)m, all + m, (int)(b - m), MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)TOTAL, "size %lld", (long long)t_get_size(fh));
    memset(back, 0, TOTAL);
    TCHK(MPI_File_read_at_all(fh, 0, back, TOTAL, MPI_BYTE, &st));
    TEXPECT_BYTES(back, all, TOTAL, 0, "whole file, same open");
    TCHK(MPI_File_close(&fh));

    if (t.rank == 0) {
        uint64_t n0, n1, s0 = t_du(tt.dir[0], &n0), s1 = t_du(tt.dir[1], &n1);
        t_log(&t, "tier0 (256KiB): %llu bytes in %llu files; tier1: %llu bytes in %llu files",
              (unsigned long long)s0, (unsigned long long)n0, (unsigned long long)s1,
              (unsigned long long)n1);
        TASSERT(s0 > 0, "nothing stored on the first tier %s", tt.dir[0]);
        TASSERT(s0 <= CAP0 + 4 * KiB, "first tier holds %llu bytes, over its 256 KiB capacity",
                (unsigned long long)s0);
        TASSERT(s1 > 0, "nothing spilled to the second tier %s", tt.dir[1]);
        TASSERT(s0 + s1 >= TOTAL, "only %llu bytes stored for 4 MiB of random data",
                (unsigned long long)(s0 + s1));
    }

    /* overwrites now land on the second tier: newer data there must win over
     * older data on the first tier (and vice versa, for what is on the second) */
    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    for (int k = 0; k < 4; k++) {
        uint64_t off = (uint64_t)(k * t.nprocs + t.rank) * 200000 + 4093 * (uint64_t)k;
        uint64_t len = 30000 + 1000 * (uint64_t)k;
        if (off + len > TOTAL)
            continue;
        t_fill_random(all + off, len, 7000 + (uint64_t)k * 100 + (uint64_t)t.rank);
        TCHK(MPI_File_write_at(fh, (MPI_Offset)off, all + off, (int)len, MPI_BYTE, &st));
    }
    TCHK(MPI_File_close(&fh));
    /* everybody's overwrites, into everybody's reference copy */
    for (int o = 0; o < t.nprocs; o++)
        for (int k = 0; k < 4; k++) {
            uint64_t off = (uint64_t)(k * t.nprocs + o) * 200000 + 4093 * (uint64_t)k;
            uint64_t len = 30000 + 1000 * (uint64_t)k;
            if (off + len <= TOTAL)
                t_fill_random(all + off, len, 7000 + (uint64_t)k * 100 + (uint64_t)o);
        }

    MPI_Info_free(&info);
    info = t_info(&t, NULL);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    memset(back, 0, TOTAL);
    TCHK(MPI_File_read_at_all(fh, 0, back, TOTAL, MPI_BYTE, &st));
    TEXPECT_BYTES(back, all, TOTAL, 0, "whole file after overwrites that spilled");
    memset(back, 0, TOTAL);
    /* each rank reads somebody else's slice, independently, in odd-sized reads */
    int o = (t.rank + 1) % t.nprocs;
    uint64_t oa = (uint64_t)o * TOTAL / t.nprocs, ob = (uint64_t)(o + 1) * TOTAL / t.nprocs;
    for (uint64_t off = oa; off < ob; off += 100003) {
        int n = (int)(ob - off < 100003 ? ob - off : 100003);
        TCHK(MPI_File_read_at(fh, (MPI_Offset)off, back + off, n, MPI_BYTE, &st));
        TASSERT(t_count(&st) == n, "read %d of %d bytes", t_count(&st), n);
    }
    TEXPECT_BYTES(back + oa, all + oa, ob - oa, oa, "another rank's slice, after reopen");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    t_remove_tiers(&t, &tt);
    free(all), free(back);
    return t_finish(&t);
}
