/* A file over 4 GiB logical size holding a few small blocks (sparse): 64-bit
 * offsets everywhere, size, content, and holes reading as zeros.
 *
 *   t_large TARGET [CONFIG]
 *
 * Blocks (offset, length): 5 GiB (4113), 6 GiB + 123 (10000), 4 GiB - 100 (200,
 * across the 2^32 boundary), 2 GiB - 2 (4, across 2^31), 4.5 GiB + 7 (3 KiB).
 * Block i is written independently by rank i % P. In addition every rank writes
 * a block of its own near 5 GiB + 64 KiB with one collective call (CB blocks).
 *
 * (The scattered blocks are not written collectively on purpose: ROMIO 4.0.2's
 * generic two-phase write misplaces data when the ranks' requests span several
 * GiB, on ufs too; see the report that came with these tests.) */
#include "tcommon.h"

typedef struct {
    uint64_t off, len;
} blk;

static const blk B[] = {
    {5 * GiB, 4113},
    {6 * GiB + 123, 10000},
    {4 * GiB - 100, 200},
    {2 * GiB - 2, 4},
    {4 * GiB + GiB / 2 + 7, 3 * KiB},
};
#define NB ((int)(sizeof B / sizeof B[0]))
#define END (6 * GiB + 123 + 10000)
#define SEED 77
#define CB_OFF (5 * GiB + 64 * KiB) /* rank r: CB_OFF + r * 10000, 5000 + r bytes */
#define CB_STRIDE 10000
#define CB_LEN(r) (5000 + (uint64_t)(r))
static int nprocs;

/* expected byte at off */
static uint8_t exp_byte(uint64_t off)
{
    for (int i = 0; i < NB; i++)
        if (off >= B[i].off && off < B[i].off + B[i].len)
            return t_byte(off, SEED);
    if (off >= CB_OFF && off < CB_OFF + (uint64_t)nprocs * CB_STRIDE) {
        uint64_t r = (off - CB_OFF) / CB_STRIDE;
        if (off - CB_OFF - r * CB_STRIDE < CB_LEN(r))
            return t_byte(off, SEED + 1);
    }
    return 0;
}

static void check_range(MPI_File fh, uint64_t off, uint64_t len, int collective, const char *what)
{
    uint8_t *b = t_malloc(len), *e = t_malloc(len);
    MPI_Status st;
    for (uint64_t i = 0; i < len; i++)
        e[i] = exp_byte(off + i);
    memset(b, 0xEE, len);
    if (collective)
        TCHK(MPI_File_read_at_all(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, &st));
    else
        TCHK(MPI_File_read_at(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "%s: read %d of %llu bytes at %llu", what, t_count(&st),
            (unsigned long long)len, (unsigned long long)off);
    t_expect_bytes(__FILE__, __LINE__, b, e, len, off, what);
    free(b), free(e);
}

static void check_all(MPI_File fh, const tctx *t, const char *when)
{
    MPI_Offset sz = t_get_size(fh);
    TASSERT(sz == (MPI_Offset)END, "%s: size %lld, want %llu", when, (long long)sz,
            (unsigned long long)END);
    for (int i = 0; i < NB; i++)
        check_range(fh, B[i].off, B[i].len, 0, t_fmt("%s: block %d", when, i));
    check_range(fh, CB_OFF - 100, (uint64_t)t->nprocs * CB_STRIDE + 200, 0,
                t_fmt("%s: the collectively written blocks", when));
    /* holes, and blocks with their surroundings */
    check_range(fh, 4 * GiB + 4096, 4 * KiB, 0, t_fmt("%s: hole after 4 GiB", when));
    check_range(fh, 5 * GiB - 3000, 5000, 0, t_fmt("%s: hole into block 0", when));
    check_range(fh, 5 * GiB + 4113 - 10, 6 * KiB, 0, t_fmt("%s: block 0 into hole", when));
    check_range(fh, 4 * GiB - 2048, 4096, 0, t_fmt("%s: across 2^32", when));
    check_range(fh, 2 * GiB - 1000, 2000, 0, t_fmt("%s: across 2^31", when));
    check_range(fh, 0, 8 * KiB, 0, t_fmt("%s: first 8 KiB (hole)", when));
    check_range(fh, 3 * GiB + 12345, 7, 0, t_fmt("%s: 7 hole bytes", when));
    check_range(fh, END - 100, 100, 0, t_fmt("%s: last 100 bytes", when));
    /* collective: each rank a few KiB of hole somewhere else */
    check_range(fh, 5 * GiB + GiB / 2 + (uint64_t)t->rank * 100 * KiB + 4093, 5 * KiB, 1,
                t_fmt("%s: collective read of hole", when));
    /* a view whose displacement is past 4 GiB, read through the file pointer */
    TCHK(MPI_File_set_view(fh, (MPI_Offset)(6 * GiB), MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    TCHK(MPI_File_seek(fh, 100, MPI_SEEK_SET));
    uint8_t v[200], e[200];
    MPI_Status st;
    for (int i = 0; i < 200; i++)
        e[i] = exp_byte(6 * GiB + 100 + (uint64_t)i);
    TCHK(MPI_File_read(fh, v, 200, MPI_BYTE, &st));
    TEXPECT_BYTES(v, e, 200, 6 * GiB + 100, "read through a view at 6 GiB");
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    nprocs = P;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* independent: block i by rank i % P */
    uint8_t *b = t_malloc(16 * KiB);
    for (int i = 0; i < NB; i++)
        if (i % P == r) {
            t_fill(b, B[i].len, B[i].off, SEED);
            TCHK(MPI_File_write_at(fh, (MPI_Offset)B[i].off, b, (int)B[i].len, MPI_BYTE, &st));
        }
    /* collective: one block per rank near 5 GiB */
    uint64_t coff = CB_OFF + (uint64_t)r * CB_STRIDE;
    t_fill(b, CB_LEN(r), coff, SEED + 1);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)coff, b, (int)CB_LEN(r), MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    check_all(fh, &t, "same open");
    TCHK(MPI_File_close(&fh));

    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    check_all(fh, &t, "after reopen");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    free(b);
    return t_finish(&t);
}
