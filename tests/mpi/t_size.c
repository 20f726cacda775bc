/* File size: get_size, set_size shrinking and growing, preallocate.
 *
 *   t_size TARGET [CONFIG]
 *
 * Shrinking drops data for good: growing again afterwards must show zeros, not
 * the old bytes. preallocate never shrinks and keeps existing data. The size seen
 * by every rank must include the other ranks' writes (after sync-barrier-sync). */
#include "tcommon.h"

#define SEED 9

static void expect_size(MPI_File fh, MPI_Offset want, const char *when)
{
    MPI_Offset got = t_get_size(fh);
    TASSERT(got == want, "%s: size %lld, want %lld", when, (long long)got, (long long)want);
}

/* read [off, off+len): the first data_len bytes must be t_byte(., SEED), rest zeros */
static void expect_content(MPI_File fh, uint64_t off, uint64_t len, uint64_t data_end,
                           const char *when)
{
    uint8_t *b = t_malloc(len), *e = t_malloc(len);
    MPI_Status st;
    for (uint64_t i = 0; i < len; i++)
        e[i] = off + i < data_end ? t_byte(off + i, SEED) : 0;
    memset(b, 0xEE, len);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "%s: read %d of %llu", when, t_count(&st),
            (unsigned long long)len);
    t_expect_bytes(__FILE__, __LINE__, b, e, len, off, when);
    free(b), free(e);
    MPI_Barrier(MPI_COMM_WORLD); /* reads done before anybody changes the size */
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, "hcomp_piece_size", "16384", NULL);
    MPI_Status st;
    const uint64_t N = 100000;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    expect_size(fh, 0, "new file");

    /* 1. 100000 bytes written collectively */
    uint64_t a = (uint64_t)r * N / P, b = (uint64_t)(r + 1) * N / P;
    uint8_t *buf = t_malloc(N);
    t_fill(buf, N, 0, SEED);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, buf + a, (int)(b - a), MPI_BYTE, &st));
    sync_all(fh);
    expect_size(fh, (MPI_Offset)N, "after write");

    /* 2. shrink to 60000 (inside a piece) */
    TCHK(MPI_File_set_size(fh, 60000));
    expect_size(fh, 60000, "after set_size(60000)");
    expect_content(fh, 0, 60000, 60000, "content after shrink");
    uint8_t small[100];
    TCHK(MPI_File_read_at(fh, 59990, small, 100, MPI_BYTE, &st));
    TASSERT(t_count(&st) == 10, "read across new EOF returned %d bytes, want 10", t_count(&st));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3. grow to 150000: the dropped bytes must not come back */
    TCHK(MPI_File_set_size(fh, 150000));
    expect_size(fh, 150000, "after set_size(150000)");
    expect_content(fh, 0, 150000, 60000, "content after shrink then grow");

    /* 4. a write past EOF by one rank, seen by all; then cut it in the middle */
    if (r == P - 1) {
        uint8_t w[10];
        t_fill(w, 10, 200000, SEED);
        TCHK(MPI_File_write_at(fh, 200000, w, 10, MPI_BYTE, &st));
    }
    sync_all(fh);
    expect_size(fh, 200010, "after a write at 200000 by the last rank");
    TCHK(MPI_File_set_size(fh, 200005));
    expect_size(fh, 200005, "after set_size(200005)");
    {
        uint8_t got[5], want[5];
        t_fill(want, 5, 200000, SEED);
        TCHK(MPI_File_read_at_all(fh, 200000, got, 5, MPI_BYTE, &st));
        TASSERT(t_count(&st) == 5, "read of the cut write returned %d", t_count(&st));
        TEXPECT_BYTES(got, want, 5, 200000, "the 5 bytes left of the cut write");
    }

    /* 5. preallocate: smaller than the size does nothing, larger grows */
    TCHK(MPI_File_preallocate(fh, 1000));
    expect_size(fh, 200005, "after preallocate(1000)");
    TCHK(MPI_File_preallocate(fh, 300000));
    expect_size(fh, 300000, "after preallocate(300000)");
    expect_content(fh, 0, 60000, 60000, "data kept by preallocate");
    /* MPI leaves newly preallocated bytes undefined; ufs (and hcomp) give zeros */
    expect_content(fh, 200005, 99995, 0, "preallocated tail");

    /* 6. set_size(0), then a write at 10 leaves a 10-byte hole */
    TCHK(MPI_File_set_size(fh, 0));
    expect_size(fh, 0, "after set_size(0)");
    MPI_Barrier(MPI_COMM_WORLD); /* all saw size 0 before anybody writes */
    if (r == 0) {
        TCHK(MPI_File_write_at(fh, 10, buf + 10, 5000, MPI_BYTE, &st));
    }
    sync_all(fh);
    expect_size(fh, 5010, "after set_size(0) and a write at 10");
    {
        uint8_t *e = t_malloc(5010), *g = t_malloc(5010);
        memset(e, 0, 10);
        memcpy(e + 10, buf + 10, 5000);
        TCHK(MPI_File_read_at_all(fh, 0, g, 5010, MPI_BYTE, &st));
        TEXPECT_BYTES(g, e, 5010, 0, "content after set_size(0) and a write at 10");
        free(e), free(g);
    }
    TCHK(MPI_File_close(&fh));

    /* 7. the size persists; set_size on a reopened file */
    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    expect_size(fh, 5010, "after reopen");
    TCHK(MPI_File_set_size(fh, 3000));
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    expect_size(fh, 3000, "after set_size(3000) and reopen");
    {
        uint8_t e[3000], g[3000];
        memset(e, 0, 10);
        memcpy(e + 10, buf + 10, 2990);
        TCHK(MPI_File_read_at_all(fh, 0, g, 3000, MPI_BYTE, &st));
        TEXPECT_BYTES(g, e, 3000, 0, "content after set_size(3000) and reopen");
    }
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    free(buf);
    return t_finish(&t);
}
