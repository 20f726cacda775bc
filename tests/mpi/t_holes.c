/* Holes read as zeros: a file whose only data are small blocks far apart
 * (leading hole, holes between ranks' blocks), later partly filled in.
 *
 *   t_holes TARGET [CONFIG]
 *
 * Rank r writes 1000 bytes at (r+1) MiB + 333. Reads of pure holes (7 bytes at
 * 4093, 64 KiB in the middle), reads from hole into data and data into hole are
 * checked in the same open and after reopening. */
#include "tcommon.h"

#define BLK 1000
#define SEED 5

static uint64_t blk_off(int r) { return (uint64_t)(r + 1) * MiB + 333; }

/* expected content of [0, size) given which ranks wrote and the fill */
static void expected(uint8_t *e, uint64_t size, int P, int filled)
{
    memset(e, 0, size);
    for (int o = 0; o < P; o++)
        t_fill(e + blk_off(o), BLK, blk_off(o), SEED);
    if (filled) /* the later write into the first hole */
        t_fill(e + 500000, 3000, 500000, SEED + 1);
}

static void read_check(MPI_File fh, const uint8_t *e, uint64_t size, uint64_t off,
                       uint64_t len, const char *what)
{
    if (off + len > size) /* never read past EOF here */
        len = size - off;
    uint8_t *b = t_malloc(len);
    MPI_Status st;
    memset(b, 0xEE, len);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "%s: read %d of %llu bytes", what, t_count(&st),
            (unsigned long long)len);
    t_expect_bytes(__FILE__, __LINE__, b, e + off, len, off, what);
    free(b);
}

static void check_all(MPI_File fh, int P, int filled, const char *when)
{
    uint64_t size = blk_off(P - 1) + BLK;
    TASSERT(t_get_size(fh) == (MPI_Offset)size, "%s: size %lld, want %llu", when,
            (long long)t_get_size(fh), (unsigned long long)size);
    uint8_t *e = t_malloc(size), *b = t_malloc(size);
    expected(e, size, P, filled);
    MPI_Status st;
    memset(b, 0xEE, size);
    TCHK(MPI_File_read_at_all(fh, 0, b, (int)size, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)size, "%s: whole read returned %d", when, t_count(&st));
    t_expect_bytes(__FILE__, __LINE__, b, e, size, 0, t_fmt("%s: whole file", when));

    read_check(fh, e, size, 4093, 7, "7 bytes of the leading hole at 4093");
    read_check(fh, e, size, 0, 1, "first byte (hole)");
    read_check(fh, e, size, 600 * KiB, 64 * KiB, "64 KiB inside the leading hole");
    read_check(fh, e, size, blk_off(0) - 4000, 4100, "hole into data");
    read_check(fh, e, size, blk_off(0) + BLK - 50, 4000, "data into hole");
    read_check(fh, e, size, 499990, 3020, "across the filled-in part of the hole");
    for (int o = 1; o < P; o++)
        read_check(fh, e, size, blk_off(o) - 300 * KiB, 300 * KiB + 10, "hole between blocks");
    free(e), free(b);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    uint8_t b[BLK];
    t_fill(b, BLK, blk_off(r), SEED);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)blk_off(r), b, BLK, MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    check_all(fh, P, 0, "same open");

    /* fill part of the leading hole (last rank), the rest must stay zero */
    MPI_Barrier(MPI_COMM_WORLD); /* everybody finished reading the old content */
    if (r == P - 1) {
        uint8_t f[3000];
        t_fill(f, sizeof f, 500000, SEED + 1);
        TCHK(MPI_File_write_at(fh, 500000, f, sizeof f, MPI_BYTE, &st));
    }
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    check_all(fh, P, 1, "after filling part of a hole");
    TCHK(MPI_File_close(&fh));

    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    check_all(fh, P, 1, "after reopen");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    return t_finish(&t);
}
