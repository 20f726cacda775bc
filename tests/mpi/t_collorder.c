/* Collective reads whose ranges are not in rank order: rank r reads block P-1-r (reversed)
 * or block r+1 mod P (IOR's -C, each rank its neighbour's data), whole or a part at the
 * block's start, with MPI_File_read_at_all, through a file view in etypes, and with the
 * individual file pointer (MPI_File_read_all, whose position must move by what was read);
 * then ranges that overlap (every rank the same bytes; each its block and its neighbours'
 * edges) and ranks that read nothing. Every byte is checked.
 *
 * ROMIO reads collectively (two-phase) when the ranges overlap in rank order; the hcomp
 * driver takes them in offset order, so that ranges apart are read by each process on its
 * own instead of by aggregators that read, check and decode whole 16 MiB buffers around
 * them. hcomp: with 2 or more ranks, the bytes all ranks read (rchar) for the part reads
 * must stay far below what an aggregator reads over the span between them.
 *
 *   t_collorder TARGET [CONFIG] */
#include "tcommon.h"
#include "../proc_io.h"

#define BLK (4u << 20)   /* a block per rank */
#define PART (64u << 10) /* what each rank reads of it in the part reads */

/* one collective read of len bytes at off into got, checked against exp */
static void read_check(MPI_File fh, uint8_t *got, const uint8_t *exp, uint64_t off, uint64_t len,
                       const char *what)
{
    MPI_Status st;
    memset(got, 0xEE, len ? len : 1);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)off, got, (int)len, MPI_BYTE, &st));
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    TASSERT(n == (int)len, "%s: read %d bytes, want %llu", what, n, (unsigned long long)len);
    t_expect_bytes(__FILE__, __LINE__, got, exp + off, len, off, what);
}

static void run(const tctx *t)
{
    const int r = t->rank, P = t->nprocs;
    const uint64_t size = (uint64_t)P * BLK;
    MPI_Info info = t_info(t, NULL);
    MPI_Status st;
    uint8_t *exp = t_malloc(size), *got = t_malloc(3 * BLK);
    t_fill_random(exp, size, 91);

    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)r * BLK, exp + (uint64_t)r * BLK, (int)BLK,
                               MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));

    fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    const int rev = P - 1 - r, next = (r + 1) % P;
    read_check(fh, got, exp, 0, BLK / 2, "every rank the same first half block");
    read_check(fh, got, exp, (uint64_t)rev * BLK, BLK, "reversed blocks");
    read_check(fh, got, exp, (uint64_t)next * BLK, BLK, "each rank its neighbour's block");

    /* the part reads: how much all ranks read from storage for them */
    long long before = proc_bytes_read();
    read_check(fh, got, exp, (uint64_t)rev * BLK, PART, "reversed parts");
    read_check(fh, got, exp, (uint64_t)next * BLK + PART, PART, "the neighbour's parts");
    long long mine = proc_bytes_read() - before, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (t->is_hcomp && P > 1 && before >= 0) {
        /* read alone: each rank its two parts and what a sequential reader takes ahead
         * (256 KiB) with block tables; two aggregated reads cover (P-1) blocks or more */
        long long bound = (long long)P * 2 * (PART + 320 * 1024);
        TASSERT(all <= bound, "the part reads read %lld bytes from storage over all ranks, "
                "more than %lld (they were read by aggregators over the span between them?)",
                all, bound);
    }

    /* ranges that overlap, in and out of rank order: ROMIO's two-phase read */
    uint64_t lo = rev ? (uint64_t)rev * BLK - 1000 : 0;
    uint64_t hi = (uint64_t)(rev + 1) * BLK + (rev + 1 < P ? 1000 : 0);
    read_check(fh, got, exp, lo, hi - lo, "reversed blocks and their neighbours' edges");
    /* some ranks read nothing */
    read_check(fh, got, exp, (uint64_t)rev * BLK, r % 2 ? PART : 0, "odd ranks only, reversed");

    /* a view in etypes (MPI_INT) after a displacement of one block (offsets count ints):
     * rank r < P-1 reads the view's block P-2-r, the last rank nothing */
    TCHK(MPI_File_set_view(fh, BLK, MPI_INT, MPI_INT, "native", info));
    uint64_t vb = r < P - 1 ? (uint64_t)(P - 2 - r) : 0, vn = r < P - 1 ? BLK : 0;
    memset(got, 0xEE, BLK);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)(vb * BLK / 4), got, (int)(vn / 4), MPI_INT, &st));
    t_expect_bytes(__FILE__, __LINE__, got, exp + BLK + vb * BLK, vn, BLK + vb * BLK,
                   "reversed blocks through a view of ints after one block");
    /* the individual file pointer: read_all from a reversed place moves it by what was read */
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    TCHK(MPI_File_seek(fh, (MPI_Offset)rev * BLK + 4096, MPI_SEEK_SET));
    memset(got, 0xEE, PART);
    TCHK(MPI_File_read_all(fh, got, (int)PART, MPI_BYTE, &st));
    t_expect_bytes(__FILE__, __LINE__, got, exp + (uint64_t)rev * BLK + 4096, PART,
                   (uint64_t)rev * BLK + 4096, "read_all with the file pointer, reversed");
    MPI_Offset pos = -1;
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == (MPI_Offset)rev * BLK + 4096 + PART, "file pointer at %lld after read_all, want %llu",
            (long long)pos, (unsigned long long)((uint64_t)rev * BLK + 4096 + PART));
    TCHK(MPI_File_close(&fh));

    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(exp), free(got);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    run(&t);
    return t_finish(&t);
}
