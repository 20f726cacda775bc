/* Access modes: MPI_MODE_APPEND (all file pointers start at the end) and atomic
 * mode (concurrent overlapping writes are each all-or-nothing, and a write is
 * visible to other ranks after a barrier without sync).
 *
 *   t_modes TARGET [CONFIG]
 *
 * Atomic part: in each round all ranks write the same range at once, each with
 * its own byte value; afterwards the range must hold exactly one rank's bytes
 * throughout. hcomp_piece_size=4096 makes each write span many pieces. */
#include "tcommon.h"

#define BASE 10000
#define ROUNDS 12

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, "hcomp_piece_size", "4096", NULL);
    MPI_Status st;

    /* ---- append ------------------------------------------------------------ */
    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_WRONLY, info);
    uint8_t *base = t_malloc(BASE);
    t_fill(base, BASE, 0, 50);
    if (r == 0)
        TCHK(MPI_File_write_at(fh, 0, base, BASE, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));

    fh = t_open(&t, t.target, MPI_MODE_WRONLY | MPI_MODE_APPEND, info);
    MPI_Offset pos = -1;
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == BASE, "APPEND: individual pointer at %lld, want %d", (long long)pos, BASE);
    TCHK(MPI_File_get_position_shared(fh, &pos));
    TASSERT(pos == BASE, "APPEND: shared pointer at %lld, want %d", (long long)pos, BASE);
    MPI_Barrier(MPI_COMM_WORLD);
    uint8_t app[1000];
    t_fill(app, sizeof app, BASE + (uint64_t)r * 1000, 51);
    TCHK(MPI_File_write_ordered(fh, app, 1000, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));

    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    uint64_t end = BASE + (uint64_t)P * 1000;
    TASSERT(t_get_size(fh) == (MPI_Offset)end, "size after append %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)end);
    uint8_t *all = t_malloc(end), *exp = t_malloc(end);
    memcpy(exp, base, BASE);
    t_fill(exp + BASE, end - BASE, BASE, 51);
    TCHK(MPI_File_read_at_all(fh, 0, all, (int)end, MPI_BYTE, &st));
    TEXPECT_BYTES(all, exp, end, 0, "file after appending in rank order");

    /* ---- atomic mode ----------------------------------------------------- */
    int flag = -1;
    TCHK(MPI_File_get_atomicity(fh, &flag));
    TASSERT(flag == 0, "atomicity is %d by default", flag);
    TCHK(MPI_File_set_atomicity(fh, 1));
    TCHK(MPI_File_get_atomicity(fh, &flag));
    TASSERT(flag == 1, "atomicity is %d after set_atomicity(1)", flag);

    uint8_t *w = t_malloc(256 * KiB), *g = t_malloc(256 * KiB);
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t off = 4093 + (uint64_t)round * 10007, len = 40000 + (uint64_t)round * 15000;
        uint8_t mine = (uint8_t)(1 + r + 16 * (round % 8));
        memset(w, mine, len);
        MPI_Barrier(MPI_COMM_WORLD);
        TCHK(MPI_File_write_at(fh, (MPI_Offset)off, w, (int)len, MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD); /* no sync: atomic mode makes it visible */
        memset(g, 0, len);
        TCHK(MPI_File_read_at(fh, (MPI_Offset)off, g, (int)len, MPI_BYTE, &st));
        TASSERT(t_count(&st) == (int)len, "round %d: read %d bytes", round, t_count(&st));
        uint8_t v = g[0];
        int who = (v & 15) - 1;
        if (who < 0 || who >= P || (v >> 4) != round % 8)
            TFAIL("round %d: byte at %llu is 0x%02x, not any rank's value", round,
                  (unsigned long long)off, v);
        for (uint64_t i = 1; i < len; i++)
            if (g[i] != v)
                TFAIL("round %d: writes interleaved in atomic mode: byte %llu is 0x%02x "
                      "(rank %d's) but byte %llu is 0x%02x", round, (unsigned long long)(off + i),
                      g[i], (g[i] & 15) - 1, (unsigned long long)off, v);
        /* every rank sees the same winner */
        int wmin = who, wmax = who;
        MPI_Allreduce(MPI_IN_PLACE, &wmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &wmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        TASSERT(wmin == wmax, "round %d: ranks disagree on the content", round);
    }
    /* a write by one rank, read by the others after a barrier, no sync */
    if (r == P - 1) {
        memset(w, 0x5A, 3000);
        TCHK(MPI_File_write_at(fh, 7777, w, 3000, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_read_at(fh, 7777, g, 3000, MPI_BYTE, &st));
    for (int i = 0; i < 3000; i++)
        if (g[i] != 0x5A)
            TFAIL("atomic mode: rank %d's write not visible after a barrier (byte %d is 0x%02x)",
                  P - 1, 7777 + i, g[i]);
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    free(base), free(all), free(exp), free(w), free(g);
    return t_finish(&t);
}
