/* Compression really happens: 8 MiB of compressible data written with
 * hcomp_codec=zstd must occupy far less than 8 MiB on the tiers, while the same
 * data with hcomp_codec=none occupies at least 8 MiB (so the measurement sees
 * the data). Both read back exactly. hcomp targets only.
 *
 *   t_compress TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * Stored size = sum of the sizes of all files under the test's tier directories
 * + the size of the mapping file. The data is realistic output: 4 MiB of
 * fixed-width text log lines, then 4 MiB of a smooth int32 field. */
#include "tcommon.h"

#define TOTAL (8 * MiB)

/* write the data with codec, return the stored size (on every rank) */
static uint64_t run(const tctx *t, const ttiers *tt, const char *codec)
{
    MPI_Info info = t_info(t, "hcomp_codec", codec, NULL);
    MPI_Status st;
    uint64_t a = (uint64_t)t->rank * TOTAL / t->nprocs, b = (uint64_t)(t->rank + 1) * TOTAL / t->nprocs;
    uint8_t *w = t_malloc(b - a), *r = t_malloc(b - a);
    t_gen_log_field(w, a, b - a, TOTAL);

    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, info);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, w, (int)(b - a), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t s = 0;
    if (t->rank == 0)
        s = t_stored(tt, t->path);
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    MPI_Info_free(&info);
    info = t_info(t, NULL);
    fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    TASSERT(t_get_size(fh) == (MPI_Offset)TOTAL, "codec %s: size %lld", codec,
            (long long)t_get_size(fh));
    memset(r, 0, b - a);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, r, (int)(b - a), MPI_BYTE, &st));
    TEXPECT_BYTES(r, w, b - a, a, t_fmt("codec %s: read back", codec));
    TCHK(MPI_File_close(&fh));
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(w), free(r);
    t_log(t, "codec %-5s: 8 MiB stored in %llu bytes (ratio %.2f)", codec,
          (unsigned long long)s, (double)TOTAL / (double)s);
    return s;
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_compress needs an hcomp: target");
    static const char *const caps[2] = {"16MiB", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    t.config = tt.cfg;
    t_delete_quiet(&t, t.target, MPI_INFO_NULL);

    uint64_t s_zstd = run(&t, &tt, "zstd");
    uint64_t s_none = run(&t, &tt, "none");
    TASSERT(s_none >= TOTAL, "codec none stored only %llu bytes for 8 MiB: the size "
            "measurement does not see the data", (unsigned long long)s_none);
    TASSERT(s_zstd < TOTAL / 3, "codec zstd stored %llu bytes for 8 MiB of compressible "
            "data (ratio %.2f); want less than a third", (unsigned long long)s_zstd,
            (double)TOTAL / (double)s_zstd);

    t_remove_tiers(&t, &tt);
    return t_finish(&t);
}
