/* Overwrites: the newest write wins, including writes that partially overlap
 * earlier pieces (hcomp_piece_size=4096) and writes by other ranks.
 *
 *   t_overwrite TARGET [CONFIG]
 *
 * Every rank keeps a reference copy of the file. Steps are separated by
 * sync-barrier-sync; within a step, writes by different ranks never overlap
 * (as MPI requires outside atomic mode), while writes by one rank may. After each
 * step every rank reads the whole file and compares it with the reference; at
 * the end the file is reopened and compared once more. */
#include "tcommon.h"

#define N 200000 /* initial size */
#define MAXSZ (N + 8192)

typedef struct {
    int rank;     /* who writes (taken modulo the rank count) */
    uint64_t off, len, seed;
} wr;

static uint8_t ref[MAXSZ];
static uint64_t ref_size;

static void apply(const wr *w)
{
    t_fill(ref + w->off, w->len, w->off, w->seed);
    if (w->off + w->len > ref_size)
        ref_size = w->off + w->len;
}

static void verify(MPI_File fh, const char *what)
{
    static uint8_t buf[MAXSZ];
    MPI_Status st;
    TASSERT(t_get_size(fh) == (MPI_Offset)ref_size, "%s: size %lld, want %llu", what,
            (long long)t_get_size(fh), (unsigned long long)ref_size);
    memset(buf, 0xEE, sizeof buf);
    TCHK(MPI_File_read_at_all(fh, 0, buf, (int)ref_size, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)ref_size, "%s: read %d bytes", what, t_count(&st));
    TEXPECT_BYTES(buf, ref, ref_size, 0, what);
}

/* independent writes of one step: everybody applies all of them to ref in order */
static void step(MPI_File fh, const tctx *t, const wr *ws, int n, const char *what)
{
    MPI_Status st;
    for (int i = 0; i < n; i++) {
        wr w = ws[i];
        w.rank %= t->nprocs;
        if (w.rank == t->rank) {
            uint8_t *b = t_malloc(w.len);
            t_fill(b, w.len, w.off, w.seed);
            TCHK(MPI_File_write_at(fh, (MPI_Offset)w.off, b, (int)w.len, MPI_BYTE, &st));
            TASSERT(t_count(&st) == (int)w.len, "write count %d", t_count(&st));
            free(b);
        }
        apply(&w);
    }
    sync_all(fh);
    verify(fh, what);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, "hcomp_piece_size", "4096", NULL);
    MPI_Status st;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* 1: base content, collective */
    for (int o = 0; o < P; o++) {
        wr w = {o, (uint64_t)o * N / P, (uint64_t)(o + 1) * N / P - (uint64_t)o * N / P, 10};
        if (o == r) {
            uint8_t *b = t_malloc(w.len);
            t_fill(b, w.len, w.off, w.seed);
            TCHK(MPI_File_write_at_all(fh, (MPI_Offset)w.off, b, (int)w.len, MPI_BYTE, &st));
            free(b);
        }
        apply(&w);
    }
    sync_all(fh);
    verify(fh, "step 1 (base)");

    /* 2: partial overwrites inside and across pieces, from two ranks */
    const wr s2[] = {{0, 5000, 4000, 11}, {P - 1, 100000, 1, 12}, {P - 1, 40959, 2, 12}};
    step(fh, &t, s2, 3, "step 2 (partial overwrites)");

    /* 3: overwrite parts of step 2's writes, from other ranks */
    const wr s3[] = {{1, 4090, 10, 13}, {0, 8999, 4001, 14}, {2, 99999, 3, 15}};
    step(fh, &t, s3, 3, "step 3 (overwrite earlier overwrites)");

    /* 4: one rank rewrites the same region repeatedly, program order must hold */
    wr s4[3 * 4];
    int n4 = 0;
    for (int o = 0; o < 4; o++) {
        uint64_t base = 50000 + (uint64_t)o * 12000;
        s4[n4++] = (wr){o, base, 10000, 16};
        s4[n4++] = (wr){o, base + 2000, 1000, 17};
        s4[n4++] = (wr){o, base + 1999, 2, 18};
    }
    /* (with fewer than 4 ranks, owners o >= P map onto existing ranks; the
     * regions stay disjoint so the step is still well defined) */
    step(fh, &t, s4, n4, "step 4 (repeated overwrites by one rank)");

    /* 5: collective overwrite of everything, shifted by 2047 so that piece
     * boundaries never line up; extends the file */
    for (int o = 0; o < P; o++) {
        wr w = {o, 2047 + (uint64_t)o * N / P, (uint64_t)(o + 1) * N / P - (uint64_t)o * N / P, 19};
        if (o == r) {
            uint8_t *b = t_malloc(w.len);
            t_fill(b, w.len, w.off, w.seed);
            TCHK(MPI_File_write_at_all(fh, (MPI_Offset)w.off, b, (int)w.len, MPI_BYTE, &st));
            free(b);
        }
        apply(&w);
    }
    sync_all(fh);
    verify(fh, "step 5 (shifted collective overwrite)");

    /* 6: exactly piece-aligned overwrite, a 1-byte write on a boundary, and a
     * write past EOF leaving a hole */
    const wr s6[] = {{0, 8192, 8192, 20}, {1, 4096 * 30, 1, 21}, {1, 4096 * 30 - 1, 1, 22},
                     {P - 1, N + 5000, 100, 23}};
    step(fh, &t, s6, 4, "step 6 (aligned overwrite, hole at end)");

    /* 7: many small rewrites of the same 3 pieces (stresses superseded data) */
    wr s7[40];
    for (int i = 0; i < 40; i++)
        s7[i] = (wr){0, 20000 + (uint64_t)i * 97, 9000 - (uint64_t)i * 50, 30 + (uint64_t)i};
    step(fh, &t, s7, 40, "step 7 (40 rewrites of the same range)");

    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify(fh, "after reopen");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    return t_finish(&t);
}
