/* Concurrent small independent writes from all ranks into the same pieces:
 * records of REC bytes, record i owned by rank i % P, every rank writing its
 * records in a shuffled order with MPI_File_write_at (no collective, no locks,
 * no barrier in between). Disjoint bytes written by different ranks must all
 * survive, whatever the piece boundaries (hcomp_piece_size=4096 and the 1 MiB
 * default are both run).
 *
 *   t_interleave TARGET [CONFIG] */
#include "tcommon.h"

#define REC 777
#define NREC 1200 /* 932400 bytes */

static void run(const tctx *t, const char *piece)
{
    const int r = t->rank, P = t->nprocs;
    MPI_Info info = piece ? t_info(t, "hcomp_piece_size", piece, NULL) : t_info(t, NULL);
    MPI_Status st;
    const uint64_t size = (uint64_t)NREC * REC;
    uint64_t seed = piece ? 60 : 61;

    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    /* my records, shuffled (Fisher-Yates with a fixed per-rank seed) */
    int mine[NREC], n = 0;
    for (int i = r; i < NREC; i += P)
        mine[n++] = i;
    t_shuffle(mine, n, (uint64_t)r);
    uint8_t rec[REC];
    for (int k = 0; k < n; k++) {
        uint64_t off = (uint64_t)mine[k] * REC;
        t_fill(rec, REC, off, seed);
        TCHK(MPI_File_write_at(fh, (MPI_Offset)off, rec, REC, MPI_BYTE, &st));
    }
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));

    uint8_t *all = t_malloc(size), *exp = t_malloc(size);
    t_fill(exp, size, 0, seed);
    for (int pass = 0; pass < 2; pass++) {
        const char *when = pass ? "after reopen" : "same open";
        TASSERT(t_get_size(fh) == (MPI_Offset)size, "%s (piece %s): size %lld, want %llu", when,
                piece ? piece : "default", (long long)t_get_size(fh), (unsigned long long)size);
        memset(all, 0xEE, size);
        TCHK(MPI_File_read_at(fh, 0, all, (int)size, MPI_BYTE, &st));
        t_expect_bytes(__FILE__, __LINE__, all, exp, size, 0,
                       t_fmt("interleaved records, piece size %s, %s", piece ? piece : "default",
                             when));
        TCHK(MPI_File_close(&fh));
        if (pass == 0)
            fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    }
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(all), free(exp);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    run(&t, "4096");
    run(&t, NULL);
    return t_finish(&t);
}
