/* Nonblocking I/O: iwrite_at / iread_at (several outstanding per rank), iwrite /
 * iread through the individual file pointer, iwrite_all / iread_all through a
 * view, iwrite_at_all / iread_at_all. Completion by MPI_Waitall, MPI_Wait and
 * an MPI_Test loop; statuses must carry the byte counts.
 *
 *   t_nonblocking TARGET [CONFIG]
 *
 * Regions (CH = 70001 bytes; every byte is t_byte(offset, seed of its region)):
 *   A: 4 chunks per rank interleaved by rank: chunk j of rank r at (j*P + r)*CH
 *   B: 2 consecutive chunks per rank via the file pointer
 *   C: one chunk per rank via a view displaced to it + iwrite_all
 *   D: one chunk per rank via iwrite_at_all */
#include "tcommon.h"

#define CH 70001
#define NA 4

static int P;
static uint64_t aoff(int r, int j) { return ((uint64_t)j * P + r) * CH; }
static uint64_t B0(void) { return (uint64_t)NA * P * CH; }
static uint64_t C0(void) { return B0() + (uint64_t)2 * P * CH + 13; }
static uint64_t D0(void) { return C0() + (uint64_t)P * CH + 4096; }
static uint64_t END(void) { return D0() + (uint64_t)P * CH; }

static void expect_count(const MPI_Status *st, int want, const char *what)
{
    TASSERT(t_count(st) == want, "%s: status count %d, want %d", what, t_count(st), want);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank;
    P = t.nprocs;
    MPI_Info info = t_info(&t, NULL);
    MPI_Request rq[NA];
    MPI_Status sts[NA], st;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* A: four outstanding iwrite_at, then four iread_at */
    uint8_t *wa[NA], *ra[NA];
    for (int j = 0; j < NA; j++) {
        wa[j] = t_malloc(CH);
        ra[j] = t_malloc(CH);
        t_fill(wa[j], CH, aoff(r, j), 1);
        TCHK(MPI_File_iwrite_at(fh, (MPI_Offset)aoff(r, j), wa[j], CH, MPI_BYTE, &rq[j]));
    }
    TCHK(MPI_Waitall(NA, rq, sts));
    for (int j = 0; j < NA; j++)
        expect_count(&sts[j], CH, "iwrite_at");
    for (int j = 0; j < NA; j++) {
        memset(ra[j], 0xEE, CH);
        TCHK(MPI_File_iread_at(fh, (MPI_Offset)aoff(r, j), ra[j], CH, MPI_BYTE, &rq[j]));
    }
    /* complete with a Test loop */
    for (int j = 0; j < NA; j++) {
        int done = 0;
        long spins = 0;
        while (!done) {
            TCHK(MPI_Test(&rq[j], &done, &st));
            if (++spins > 100000000L)
                TFAIL("iread_at %d never completed", j);
        }
        expect_count(&st, CH, "iread_at");
        TEXPECT_BYTES(ra[j], wa[j], CH, aoff(r, j), "iread_at after iwrite_at");
    }

    /* B: iwrite through the file pointer (advanced at initiation) */
    uint8_t *wb = t_malloc(2 * CH), *rb = t_malloc(2 * CH);
    uint64_t boff = B0() + (uint64_t)r * 2 * CH;
    t_fill(wb, 2 * CH, boff, 2);
    TCHK(MPI_File_seek(fh, (MPI_Offset)boff, MPI_SEEK_SET));
    TCHK(MPI_File_iwrite(fh, wb, CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_File_iwrite(fh, wb + CH, CH, MPI_BYTE, &rq[1]));
    MPI_Offset pos;
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == (MPI_Offset)(boff + 2 * CH), "position %lld after 2 iwrite, want %llu",
            (long long)pos, (unsigned long long)(boff + 2 * CH));
    TCHK(MPI_Waitall(2, rq, sts));
    expect_count(&sts[0], CH, "iwrite #1");
    expect_count(&sts[1], CH, "iwrite #2");
    TCHK(MPI_File_seek(fh, (MPI_Offset)boff, MPI_SEEK_SET));
    memset(rb, 0xEE, 2 * CH);
    TCHK(MPI_File_iread(fh, rb, 2 * CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_Wait(&rq[0], &st));
    expect_count(&st, 2 * CH, "iread");
    TEXPECT_BYTES(rb, wb, 2 * CH, boff, "iread after iwrite");

    /* C: iwrite_all / iread_all through a view (one chunk per rank, contiguous
     * in the view: the filetype is a resized contiguous chunk) */
    uint8_t *wc = t_malloc(CH), *rc = t_malloc(CH);
    uint64_t coff = C0() + (uint64_t)r * CH;
    t_fill(wc, CH, coff, 3);
    TCHK(MPI_File_set_view(fh, (MPI_Offset)coff, MPI_BYTE, MPI_BYTE, "native", info));
    TCHK(MPI_File_iwrite_all(fh, wc, CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_Wait(&rq[0], &st));
    expect_count(&st, CH, "iwrite_all");
    TCHK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(rc, 0xEE, CH);
    TCHK(MPI_File_iread_all(fh, rc, CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_Wait(&rq[0], &st));
    TEXPECT_BYTES(rc, wc, CH, coff, "iread_all after iwrite_all");
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));

    /* D: iwrite_at_all / iread_at_all */
    uint8_t *wd = t_malloc(CH), *rd = t_malloc(CH);
    uint64_t doff = D0() + (uint64_t)r * CH;
    t_fill(wd, CH, doff, 4);
    TCHK(MPI_File_iwrite_at_all(fh, (MPI_Offset)doff, wd, CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_Wait(&rq[0], &st));
    expect_count(&st, CH, "iwrite_at_all");
    memset(rd, 0xEE, CH);
    TCHK(MPI_File_iread_at_all(fh, (MPI_Offset)doff, rd, CH, MPI_BYTE, &rq[0]));
    TCHK(MPI_Wait(&rq[0], &st));
    TEXPECT_BYTES(rd, wd, CH, doff, "iread_at_all after iwrite_at_all");

    /* everything, as seen by everybody, after sync-barrier-sync and after reopen */
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    uint64_t end = END();
    uint8_t *all = t_malloc(end), *exp = t_malloc(end);
    memset(exp, 0, end);
    for (int o = 0; o < P; o++) {
        for (int j = 0; j < NA; j++)
            t_fill(exp + aoff(o, j), CH, aoff(o, j), 1);
        t_fill(exp + B0() + (uint64_t)o * 2 * CH, 2 * CH, B0() + (uint64_t)o * 2 * CH, 2);
        t_fill(exp + C0() + (uint64_t)o * CH, CH, C0() + (uint64_t)o * CH, 3);
        t_fill(exp + D0() + (uint64_t)o * CH, CH, D0() + (uint64_t)o * CH, 4);
    }
    for (int pass = 0; pass < 2; pass++) {
        TASSERT(t_get_size(fh) == (MPI_Offset)end, "size %lld, want %llu",
                (long long)t_get_size(fh), (unsigned long long)end);
        memset(all, 0xEE, end);
        TCHK(MPI_File_iread_at(fh, 0, all, (int)end, MPI_BYTE, &rq[0]));
        TCHK(MPI_Wait(&rq[0], &st));
        expect_count(&st, (int)end, "whole-file iread_at");
        TEXPECT_BYTES(all, exp, end, 0, pass ? "whole file after reopen" : "whole file");
        TCHK(MPI_File_close(&fh));
        if (pass == 0)
            fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    }

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    for (int j = 0; j < NA; j++)
        free(wa[j]), free(ra[j]);
    free(wb), free(rb), free(wc), free(rc), free(wd), free(rd), free(all), free(exp);
    return t_finish(&t);
}
