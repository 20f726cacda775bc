/* Read-after-write across processes: one mpiexec writes, a later one (possibly
 * with another rank count) verifies. The layout does not depend on the rank count.
 *
 *   t_persist --write  TARGET [CONFIG]            create and write, keep the file
 *   t_persist --verify TARGET [CONFIG] [--delete] reopen read-only, check every
 *                                                 byte, then delete if asked
 *
 * Content: 3 smooth 3-D double fields of 40 x 33 x 50 written with a 3-D block
 * decomposition (subarray view + write_all), then NPART int64 particle ids
 * (sequential) written with write_at_all in per-rank blocks. */
#include "tcommon.h"

static const int G[3] = {40, 33, 50};
#define NVARS 3
#define NPART 100003L

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    const int writing = t_has_opt(&t, "--write"), verifying = t_has_opt(&t, "--verify");
    if (writing == verifying)
        TFAIL("give exactly one of --write or --verify");
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    const MPI_Offset field_bytes = (MPI_Offset)G[0] * G[1] * G[2] * 8;
    const MPI_Offset part_off = NVARS * field_bytes;
    const MPI_Offset fsize = part_off + NPART * 8;

    /* this run's decomposition */
    int dims[3] = {0, 0, 0}, c[3], st3[3], ls3[3];
    MPI_Dims_create(P, 3, dims);
    c[0] = r / (dims[1] * dims[2]);
    c[1] = (r / dims[2]) % dims[1];
    c[2] = r % dims[2];
    for (int d = 0; d < 3; d++)
        t_split(G[d], dims[d], c[d], &st3[d], &ls3[d]);
    size_t nloc = (size_t)ls3[0] * ls3[1] * ls3[2];
    MPI_Datatype ftype;
    MPI_Type_create_subarray(3, G, ls3, st3, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_commit(&ftype);
    int pst, pn;
    t_split((int)NPART, P, r, &pst, &pn);

    double *f = t_malloc(nloc * 8), *fr = t_malloc(nloc * 8);
    int64_t *ids = t_malloc((size_t)pn * 8), *idr = t_malloc((size_t)pn * 8);
    for (int i = 0; i < pn; i++)
        ids[i] = 1000000000LL + pst + i;

    MPI_File fh;
    if (writing) {
        t_delete_quiet(&t, t.target, info);
        fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_WRONLY, info);
    } else {
        fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
        TASSERT(t_get_size(fh) == fsize, "size %lld, want %lld (written by an earlier run)",
                (long long)t_get_size(fh), (long long)fsize);
    }

    for (int v = 0; v < NVARS; v++) {
        for (int i = 0, n = 0; i < ls3[0]; i++)
            for (int j = 0; j < ls3[1]; j++)
                for (int k = 0; k < ls3[2]; k++)
                    f[n++] = t_field(v, st3[0] + i, st3[1] + j, st3[2] + k);
        TCHK(MPI_File_set_view(fh, v * field_bytes, MPI_DOUBLE, ftype, "native", info));
        if (writing) {
            TCHK(MPI_File_write_all(fh, f, (int)nloc, MPI_DOUBLE, &st));
        } else {
            memset(fr, 0, nloc * 8);
            TCHK(MPI_File_read_all(fh, fr, (int)nloc, MPI_DOUBLE, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_DOUBLE, &cnt);
            TASSERT(cnt == (int)nloc, "field %d: read %d doubles, want %zu", v, cnt, nloc);
            TEXPECT_BYTES(fr, f, nloc * 8, v * field_bytes, t_fmt("field %d block", v));
        }
    }

    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    if (writing) {
        TCHK(MPI_File_write_at_all(fh, part_off + (MPI_Offset)pst * 8, ids, pn, MPI_INT64_T, &st));
    } else {
        memset(idr, 0, (size_t)pn * 8);
        TCHK(MPI_File_read_at_all(fh, part_off + (MPI_Offset)pst * 8, idr, pn, MPI_INT64_T, &st));
        TEXPECT_BYTES(idr, ids, (uint64_t)pn * 8, part_off + (MPI_Offset)pst * 8, "particle ids");

        /* the last rank also reads the whole file independently, contiguously */
        if (r == P - 1) {
            uint8_t *all = t_malloc((size_t)fsize), *exp = t_malloc((size_t)fsize);
            for (int v = 0; v < NVARS; v++) {
                double *e = (double *)(exp + v * field_bytes);
                for (int i = 0, n = 0; i < G[0]; i++)
                    for (int j = 0; j < G[1]; j++)
                        for (int k = 0; k < G[2]; k++)
                            e[n++] = t_field(v, i, j, k);
            }
            for (long i = 0; i < NPART; i++) {
                int64_t id = 1000000000LL + i;
                memcpy(exp + part_off + i * 8, &id, 8);
            }
            TCHK(MPI_File_read_at(fh, 0, all, (int)fsize, MPI_BYTE, &st));
            TASSERT(t_count(&st) == (int)fsize, "whole-file read: %d bytes", t_count(&st));
            TEXPECT_BYTES(all, exp, (uint64_t)fsize, 0, "whole file read contiguously");
            free(all), free(exp);
        }
    }
    TCHK(MPI_File_close(&fh));
    if (verifying && t_has_opt(&t, "--delete"))
        t_delete(&t, t.target, info);
    t_log(&t, "%s %lld bytes with %d rank(s)", writing ? "wrote" : "verified", (long long)fsize, P);

    MPI_Type_free(&ftype);
    MPI_Info_free(&info);
    free(f), free(fr), free(ids), free(idr);
    return t_finish(&t);
}
