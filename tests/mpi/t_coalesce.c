/* Small independent writes gathered per handle (hint hcomp_write_buffer) keep MPI's
 * semantics. Regions of one file, each written by all ranks:
 *
 *   R1  records of REC bytes, record i written by rank i % P, in a shuffled order with
 *       MPI_File_write_at: every rank sees its own at once (reads of some right after
 *       writing them; MPI_File_get_size counts them), all of them after
 *       sync-barrier-sync, and after close and reopen.
 *   R2  atomic-mode switches: a block written in non-atomic mode is seen by another rank
 *       after MPI_File_set_atomicity(fh, 1) and a barrier (hcomp writes gathered writes
 *       out there); one written in atomic mode after a barrier alone; one written after
 *       switching back after sync-barrier-sync.
 *   R3  data sieving: small writes of every rank's own bytes, then each rank's strided
 *       write (a vector view, romio_ds_write=enable: ROMIO's read-modify-write under its
 *       lock) of other bytes of the same stretch, all at once: nothing is lost.
 *   R4  two-phase read-modify-write: small writes fill the bytes a collective write of
 *       a strided type leaves as holes (romio_cb_write=enable), then the collective
 *       write: its aggregators read the holes and must find those bytes.
 *   R5  a collective read (romio_cb_read=enable) right after small writes, without a
 *       sync: each rank gets its own writes back through the aggregators.
 *
 * Runs with the default (no gathering: each write a task at once), with
 * hcomp_write_buffer=4MiB and with 16KiB (written out often); ufs: targets are the
 * control.
 *
 *   t_coalesce TARGET [CONFIG] */
#include "tcommon.h"

#define REC 700
#define NREC 1500
#define R1 0
#define R1LEN ((uint64_t)NREC * REC)
#define BLK 4096
#define R2 (2 * MiB)
#define DS 100            /* R3: bytes per rank per stride */
#define DSK 400           /* R3: strides */
#define R3 (3 * MiB)
#define H4 64             /* R4: each rank's collective bytes, then its hole bytes */
#define K4 300
#define R5 (6 * MiB)
#define REC5 3000

static uint64_t r3len(int P) { return (uint64_t)DSK * DS * P * 2; }
static uint64_t r4off(int P) { return R3 + r3len(P) + 4096; }

/* R3: stride s of rank q is [R3 + (s*P + q) * 2*DS, +2*DS): the first DS bytes by its
 * small writes (seed 31), the next DS by its strided write (seed 32) */
static void r3_expect(uint8_t *exp, int P)
{
    for (int s = 0; s < DSK; s++)
        for (int q = 0; q < P; q++) {
            uint64_t o = R3 + ((uint64_t)s * P + q) * 2 * DS;
            t_fill(exp + o, DS, o, 31);
            t_fill(exp + o + DS, DS, o + DS, 32);
        }
}

/* R4: unit u of rank q is [r4off + (u*P + q) * 2*H4, +2*H4): the first H4 bytes by the
 * collective write (seed 42), the next H4 (holes of the collective) by small writes
 * (seed 41) */
static void r4_expect(uint8_t *exp, int P)
{
    for (int u = 0; u < K4; u++)
        for (int q = 0; q < P; q++) {
            uint64_t o = r4off(P) + ((uint64_t)u * P + q) * 2 * H4;
            t_fill(exp + o, H4, o, 42);
            t_fill(exp + o + H4, H4, o + H4, 41);
        }
}

static void check_all(const tctx *t, MPI_File fh, const uint8_t *exp, uint64_t size,
                      const char *when)
{
    uint8_t *all = t_malloc(size);
    MPI_Status st;
    memset(all, 0xEE, size);
    TCHK(MPI_File_read_at(fh, 0, all, (int)size, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)size, "%s: read %d of %llu bytes", when, t_count(&st),
            (unsigned long long)size);
    t_expect_bytes(__FILE__, __LINE__, all, exp, size, 0, t_fmt("%s: the whole file", when));
    (void)t;
    free(all);
}

static void run(const tctx *t, const char *buffer)
{
    const int r = t->rank, P = t->nprocs;
    MPI_Info info = buffer ? t_info(t, "hcomp_write_buffer", buffer, "romio_ds_write", "enable",
                                    "romio_cb_write", "enable", "romio_cb_read", "enable", NULL)
                           : t_info(t, "romio_ds_write", "enable", "romio_cb_write", "enable",
                                    "romio_cb_read", "enable", NULL);
    const char *label = buffer ? buffer : "default";
    MPI_Status st;
    const uint64_t size = R5 + (uint64_t)P * REC5;
    uint8_t *exp = t_malloc(size);
    memset(exp, 0, size);

    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* R1: my records, shuffled; some read back at once */
    t_fill(exp + R1, R1LEN, R1, 11);
    int *mine = t_malloc(sizeof(int) * NREC), n = 0;
    for (int i = r; i < NREC; i += P)
        mine[n++] = i;
    t_shuffle(mine, n, (uint64_t)r);
    uint8_t back[REC];
    uint64_t my_end = 0;
    for (int k = 0; k < n; k++) {
        uint64_t off = R1 + (uint64_t)mine[k] * REC;
        TCHK(MPI_File_write_at(fh, (MPI_Offset)off, exp + off, REC, MPI_BYTE, &st));
        if (off + REC > my_end)
            my_end = off + REC;
        if (k % 97 == 0) {
            TASSERT(t_get_size(fh) >= (MPI_Offset)my_end, "[%s] size %lld before my write's end "
                    "%llu", label, (long long)t_get_size(fh), (unsigned long long)my_end);
            memset(back, 0, REC);
            TCHK(MPI_File_read_at(fh, (MPI_Offset)off, back, REC, MPI_BYTE, &st));
            TEXPECT_BYTES(back, exp + off, REC, off, t_fmt("[%s] my record read back at once",
                                                          label));
        }
    }
    for (int k = 0; k < n; k++) {
        uint64_t off = R1 + (uint64_t)mine[k] * REC;
        TCHK(MPI_File_read_at(fh, (MPI_Offset)off, back, REC, MPI_BYTE, &st));
        TEXPECT_BYTES(back, exp + off, REC, off, t_fmt("[%s] my records, before any sync", label));
    }

    /* R2: atomic-mode switches */
    uint8_t blk[BLK];
    uint64_t b0 = R2 + (uint64_t)r * BLK, peer0 = R2 + (uint64_t)((r + 1) % P) * BLK;
    t_fill(exp + R2, (uint64_t)3 * P * BLK, R2, 21);
    TCHK(MPI_File_write_at(fh, (MPI_Offset)b0, exp + b0, BLK, MPI_BYTE, &st));
    TCHK(MPI_File_set_atomicity(fh, 1));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)peer0, blk, BLK, MPI_BYTE, &st));
    TEXPECT_BYTES(blk, exp + peer0, BLK, peer0,
                  t_fmt("[%s] a non-atomic write, after set_atomicity(1) and a barrier", label));
    uint64_t b1 = b0 + (uint64_t)P * BLK, peer1 = peer0 + (uint64_t)P * BLK;
    TCHK(MPI_File_write_at(fh, (MPI_Offset)b1, exp + b1, BLK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)peer1, blk, BLK, MPI_BYTE, &st));
    TEXPECT_BYTES(blk, exp + peer1, BLK, peer1, t_fmt("[%s] an atomic write, after a barrier", label));
    TCHK(MPI_File_set_atomicity(fh, 0));
    uint64_t b2 = b1 + (uint64_t)P * BLK;
    TCHK(MPI_File_write_at(fh, (MPI_Offset)b2, exp + b2, BLK, MPI_BYTE, &st));

    /* R3: my small writes, then everybody's strided writes with data sieving at once */
    r3_expect(exp, P);
    for (int s = 0; s < DSK; s++) {
        uint64_t o = R3 + ((uint64_t)s * P + r) * 2 * DS;
        TCHK(MPI_File_write_at(fh, (MPI_Offset)o, exp + o, DS, MPI_BYTE, &st));
    }
    MPI_Datatype vec;
    MPI_Type_vector(DSK, DS, 2 * DS * P, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    uint8_t *sbuf = t_malloc((size_t)DSK * DS);
    for (int s = 0; s < DSK; s++) {
        uint64_t o = R3 + ((uint64_t)s * P + r) * 2 * DS + DS;
        memcpy(sbuf + (size_t)s * DS, exp + o, DS);
    }
    TCHK(MPI_File_set_view(fh, (MPI_Offset)(R3 + (uint64_t)r * 2 * DS + DS), MPI_BYTE, vec,
                           "native", info));
    TCHK(MPI_File_write_at(fh, 0, sbuf, DSK * DS, MPI_BYTE, &st));
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    MPI_Type_free(&vec);

    /* R4: small writes of the holes, then the collective write around them */
    r4_expect(exp, P);
    for (int u = 0; u < K4; u++) {
        uint64_t o = r4off(P) + ((uint64_t)u * P + r) * 2 * H4 + H4;
        TCHK(MPI_File_write_at(fh, (MPI_Offset)o, exp + o, H4, MPI_BYTE, &st));
    }
    MPI_Type_vector(K4, H4, 2 * H4 * P, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    uint8_t *cbuf = t_malloc((size_t)K4 * H4);
    for (int u = 0; u < K4; u++) {
        uint64_t o = r4off(P) + ((uint64_t)u * P + r) * 2 * H4;
        memcpy(cbuf + (size_t)u * H4, exp + o, H4);
    }
    TCHK(MPI_File_set_view(fh, (MPI_Offset)(r4off(P) + (uint64_t)r * 2 * H4), MPI_BYTE, vec,
                           "native", info));
    TCHK(MPI_File_write_at_all(fh, 0, cbuf, K4 * H4, MPI_BYTE, &st));
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    MPI_Type_free(&vec);

    /* R5: small writes, then a collective read of them, no sync */
    uint64_t o5 = R5 + (uint64_t)r * REC5;
    t_fill(exp + R5, (uint64_t)P * REC5, R5, 51);
    for (uint64_t o = o5; o < o5 + REC5; o += 500)
        TCHK(MPI_File_write_at(fh, (MPI_Offset)o, exp + o, 500, MPI_BYTE, &st));
    uint8_t got5[REC5];
    memset(got5, 0, sizeof(got5));
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)o5, got5, REC5, MPI_BYTE, &st));
    TEXPECT_BYTES(got5, exp + o5, REC5, o5, t_fmt("[%s] my small writes, through a collective "
                                                  "read", label));

    /* everything, by everybody: after sync-barrier-sync, and after close and reopen */
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)size, "[%s] size %lld, want %llu", label,
            (long long)t_get_size(fh), (unsigned long long)size);
    check_all(t, fh, exp, size, t_fmt("[%s] after sync-barrier-sync", label));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    check_all(t, fh, exp, size, t_fmt("[%s] after close and reopen", label));
    TCHK(MPI_File_close(&fh));
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(exp), free(mine), free(sbuf), free(cbuf);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    run(&t, NULL);
    run(&t, "4MiB");
    run(&t, "16KiB");
    return t_finish(&t);
}
