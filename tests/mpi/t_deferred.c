/* ROMIO's deferred open: with romio_no_indep_rw=true and cb_nodes=1 only the
 * aggregator (rank 0) really opens the file; every collective operation, the
 * size queries and changes, sync and get_info must still work on all ranks.
 *
 *   t_deferred TARGET [CONFIG] */
#include "tcommon.h"

#define LEN (100 * KiB + 3)

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, "romio_no_indep_rw", "true", "cb_nodes", "1", NULL);
    MPI_Status st;
    uint8_t *w = t_malloc(LEN), *g = t_malloc(LEN);
    const MPI_Offset off = (MPI_Offset)r * LEN, total = (MPI_Offset)P * LEN;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TASSERT(t_get_size(fh) == 0, "new file: size %lld", (long long)t_get_size(fh));

    t_fill(w, LEN, (uint64_t)off, 90);
    TCHK(MPI_File_write_at_all(fh, off, w, LEN, MPI_BYTE, &st));
    sync_all(fh);
    TASSERT(t_get_size(fh) == total, "size %lld, want %lld", (long long)t_get_size(fh),
            (long long)total);
    int o = (r + 1) % P;
    uint8_t *e = t_malloc(LEN);
    t_fill(e, LEN, (uint64_t)o * LEN, 90);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)o * LEN, g, LEN, MPI_BYTE, &st));
    TEXPECT_BYTES(g, e, LEN, (uint64_t)o * LEN, "read_at_all with deferred open");

    /* get_info works everywhere and reports the hcomp hints */
    if (t.is_hcomp) {
        MPI_Info got;
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        TCHK(MPI_File_get_info(fh, &got));
        MPI_Info_get(got, "hcomp_piece_size", MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_free(&got);
        TASSERT(flag, "hcomp_piece_size missing from get_info with deferred open");
    }

    /* view + write_all: every rank appends a second block, interleaved */
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_set_view(fh, total + (MPI_Offset)r * 1000, MPI_BYTE, MPI_BYTE, "native", info));
    t_fill(w, 1000, (uint64_t)(total + r * 1000), 91);
    TCHK(MPI_File_write_all(fh, w, 1000, MPI_BYTE, &st));
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    sync_all(fh);
    MPI_Offset total2 = total + (MPI_Offset)P * 1000;
    TASSERT(t_get_size(fh) == total2, "size %lld, want %lld", (long long)t_get_size(fh),
            (long long)total2);

    /* size changes */
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_set_size(fh, total - 10));
    TASSERT(t_get_size(fh) == total - 10, "after set_size: %lld", (long long)t_get_size(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_preallocate(fh, total2 + 5000));
    TASSERT(t_get_size(fh) == total2 + 5000, "after preallocate: %lld", (long long)t_get_size(fh));
    TCHK(MPI_File_close(&fh));

    /* reopen without the hints: content as expected */
    MPI_Info plain = t_info(&t, NULL);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, plain);
    uint8_t *all = t_malloc((size_t)(total2 + 5000)), *exp = t_malloc((size_t)(total2 + 5000));
    memset(exp, 0, (size_t)(total2 + 5000));
    t_fill(exp, (uint64_t)(total - 10), 0, 90);
    TCHK(MPI_File_read_at(fh, 0, all, (int)(total2 + 5000), MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)(total2 + 5000), "read %d bytes", t_count(&st));
    TEXPECT_BYTES(all, exp, (uint64_t)(total2 + 5000), 0, "file after truncate and preallocate");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, plain);
    MPI_Info_free(&info);
    MPI_Info_free(&plain);
    free(w), free(g), free(e), free(all), free(exp);
    return t_finish(&t);
}
