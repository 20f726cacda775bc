/* Shared file pointer: write_ordered / read_ordered (rank order), write_shared /
 * read_shared (any order, each record exactly once), seek_shared and
 * get_position_shared.
 *
 *   t_shared TARGET [CONFIG]
 *
 * Part 1 (offset 0): write_ordered, rank r contributes olen(r) bytes.
 * Part 2 (after it): write_shared, each rank 3 records of REC bytes; a record
 *   starts with "rank=<r> rec=<k>" and its payload is t_byte(k*1000+r based).
 * Then read_ordered from 0 gives each rank its own part 1 bytes, and read_shared
 * of part 2 hands out every record exactly once. */
#include "tcommon.h"

#define REC 1000
#define NREC 3

static uint64_t olen(int r) { return 5000 + 777 * (uint64_t)r; }
static uint64_t ooff(int r)
{
    uint64_t o = 0;
    for (int i = 0; i < r; i++)
        o += olen(i);
    return o;
}

static void make_rec(uint8_t *b, int r, int k)
{
    t_fill(b, REC, (uint64_t)(k * 1000 + r) * REC, 21);
    memset(b, ' ', 32);
    int n = snprintf((char *)b, 32, "rank=%d rec=%d", r, k);
    b[n] = '|';
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;
    MPI_Offset pos;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* part 1: write_ordered */
    uint8_t *ob = t_malloc(olen(r));
    t_fill(ob, olen(r), ooff(r), 20);
    TCHK(MPI_File_write_ordered(fh, ob, (int)olen(r), MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)olen(r), "write_ordered count %d", t_count(&st));
    const uint64_t p1 = ooff(P);
    TCHK(MPI_File_get_position_shared(fh, &pos));
    TASSERT(pos == (MPI_Offset)p1, "shared position %lld after write_ordered, want %llu",
            (long long)pos, (unsigned long long)p1);

    MPI_Barrier(MPI_COMM_WORLD); /* everybody looked before the pointer moves on */

    /* part 2: write_shared, any order */
    uint8_t rec[REC];
    for (int k = 0; k < NREC; k++) {
        make_rec(rec, r, k);
        TCHK(MPI_File_write_shared(fh, rec, REC, MPI_BYTE, &st));
        TASSERT(t_count(&st) == REC, "write_shared count %d", t_count(&st));
    }
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    const uint64_t end = p1 + (uint64_t)P * NREC * REC;
    TCHK(MPI_File_get_position_shared(fh, &pos));
    TASSERT(pos == (MPI_Offset)end, "shared position %lld after write_shared, want %llu",
            (long long)pos, (unsigned long long)end);
    TASSERT(t_get_size(fh) == (MPI_Offset)end, "size %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)end);

    /* whole file: part 1 in rank order; part 2 each record once, per-rank order kept */
    uint8_t *all = t_malloc(end);
    TCHK(MPI_File_read_at(fh, 0, all, (int)end, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)end, "read %d bytes", t_count(&st));
    for (int o = 0; o < P; o++) {
        uint8_t *e = t_malloc(olen(o));
        t_fill(e, olen(o), ooff(o), 20);
        TEXPECT_BYTES(all + ooff(o), e, olen(o), ooff(o), t_fmt("write_ordered part of rank %d", o));
        free(e);
    }
    int *next = calloc((size_t)P, sizeof(int));
    for (int i = 0; i < P * NREC; i++) {
        const uint8_t *g = all + p1 + (uint64_t)i * REC;
        int ro = -1, k = -1;
        if (sscanf((const char *)g, "rank=%d rec=%d", &ro, &k) != 2 || ro < 0 || ro >= P)
            TFAIL("record slot %d (offset %llu) has no valid header: '%.20s'", i,
                  (unsigned long long)(p1 + (uint64_t)i * REC), (const char *)g);
        TASSERT(k == next[ro], "slot %d: rank %d record %d, expected its record %d (program order)",
                i, ro, k, next[ro]);
        next[ro]++;
        make_rec(rec, ro, k);
        TEXPECT_BYTES(g, rec, REC, p1 + (uint64_t)i * REC, t_fmt("record rank %d #%d", ro, k));
    }
    free(next);

    /* read_ordered from 0: each rank gets its own part-1 bytes */
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    uint8_t *rb = t_malloc(olen(r));
    memset(rb, 0xEE, olen(r));
    TCHK(MPI_File_read_ordered(fh, rb, (int)olen(r), MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)olen(r), "read_ordered count %d", t_count(&st));
    TEXPECT_BYTES(rb, ob, olen(r), ooff(r), "read_ordered");
    TCHK(MPI_File_get_position_shared(fh, &pos));
    TASSERT(pos == (MPI_Offset)p1, "shared position %lld after read_ordered, want %llu",
            (long long)pos, (unsigned long long)p1);

    MPI_Barrier(MPI_COMM_WORLD);

    /* read_shared of part 2: NREC records per rank, all records handed out once */
    int mine[NREC * 2];
    for (int k = 0; k < NREC; k++) {
        memset(rec, 0, REC);
        TCHK(MPI_File_read_shared(fh, rec, REC, MPI_BYTE, &st));
        TASSERT(t_count(&st) == REC, "read_shared count %d", t_count(&st));
        int ro = -1, kk = -1;
        if (sscanf((const char *)rec, "rank=%d rec=%d", &ro, &kk) != 2 || ro < 0 || ro >= P ||
            kk < 0 || kk >= NREC)
            TFAIL("read_shared returned a record without a valid header: '%.20s'", (char *)rec);
        uint8_t e[REC];
        make_rec(e, ro, kk);
        TEXPECT_BYTES(rec, e, REC, 0, "record from read_shared");
        mine[2 * k] = ro;
        mine[2 * k + 1] = kk;
    }
    int *got = t_malloc(sizeof(int) * 2 * NREC * (size_t)P);
    MPI_Allgather(mine, 2 * NREC, MPI_INT, got, 2 * NREC, MPI_INT, MPI_COMM_WORLD);
    int *seen = calloc((size_t)P * NREC, sizeof(int));
    for (int i = 0; i < P * NREC; i++)
        seen[got[2 * i] * NREC + got[2 * i + 1]]++;
    for (int i = 0; i < P * NREC; i++)
        TASSERT(seen[i] == 1, "read_shared handed out record (rank %d, #%d) %d times", i / NREC,
                i % NREC, seen[i]);
    /* at the end now: a further read_shared returns nothing */
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_read_shared(fh, rec, REC, MPI_BYTE, &st));
    TASSERT(t_count(&st) == 0, "read_shared at EOF returned %d bytes", t_count(&st));
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    free(ob), free(all), free(rb), free(got), free(seen);
    return t_finish(&t);
}
