/* A rank killed with SIGKILL in the middle of its writes: what was written before the
 * last MPI_File_close / MPI_File_sync is intact, the file opens without error, and the
 * writes that were under way read back whole or not at all - never garbage. hcomp
 * targets only. tests/mpi/run.sh drives it:
 *
 *   t_kill --write  TARGET [CONFIG]    phase 1 (np ranks): writes A collectively and
 *                                      closes; reopens, writes B independently and
 *                                      calls MPI_File_sync; then each rank creates
 *                                      TARGET-path.kill/ready.<rank> (holding its pid)
 *                                      and writes in a loop until it is killed (it
 *                                      fails after 120 s). run.sh waits for every
 *                                      ready file, lets the loop run 0.5 s, kills the
 *                                      last rank with SIGKILL (mpiexec then ends the
 *                                      job), removes the ready files.
 *   t_kill --verify [--delete] TARGET [CONFIG]
 *                                      phase 2 (a new mpiexec, any rank count): the
 *                                      file opens; A and B read back exactly; every
 *                                      4 KiB block of the loop's region is all zeros
 *                                      (never written, or its write was lost) or
 *                                      exactly one loop write's block (blocks describe
 *                                      themselves: writer, slot, iteration, index).
 *                                      Then a writable open appends C collectively,
 *                                      and after reopening A, B, C and the loop region
 *                                      (the same blocks as before) are checked again.
 *
 * Layout: A = [0, 2 MiB), its first 16 bytes say "HKILL001" and the writer rank count;
 * B = [2 MiB, 3 MiB); the loop region of writer w = 16 slots of 256 KiB from 4 MiB +
 * w * 4 MiB; iteration i of a writer rewrites all of slot i % 16 (slot k is
 * slot_len(k) bytes: 4 KiB to 250 KiB, not always a multiple of 4 KiB); C = 1 MiB
 * after the last writer's region. */
#include "tfault.h"

#include <time.h>

#define SA (2 * MiB)
#define SB (1 * MiB)
#define L0 (4 * MiB)
#define NSLOTS 16
#define SLOTMAX (256 * KiB)
#define REGION ((uint64_t)NSLOTS * SLOTMAX)
#define CB (1 * MiB)
#define BLKSZ 4096

static uint64_t slot_len(int k)
{
    return 4096 * (uint64_t)(1 + (k * 37 + 13) % 62) + (uint64_t)(k % 3) * 1000;
}

static uint64_t slot_off(int w, int k)
{
    return L0 + (uint64_t)w * REGION + (uint64_t)k * SLOTMAX;
}

/* block b of iteration i of writer w in slot k (n bytes of it) */
static void loop_block(uint8_t *out, int w, int k, uint64_t i, uint32_t b, uint32_t n)
{
    uint8_t blk[BLKSZ];
    memcpy(blk, "KILLBLK1", 8);
    uint32_t h[6] = {(uint32_t)w, (uint32_t)k, (uint32_t)i, (uint32_t)(i >> 32), b,
                     (uint32_t)slot_len(k)};
    memcpy(blk + 8, h, sizeof h);
    t_fill_random(blk + 32, BLKSZ - 32, ((uint64_t)w << 56) ^ (i << 20) ^ b);
    memcpy(out, blk, n);
}

static void fill_a(uint8_t *a, int np_writers)
{
    t_fill(a, SA, 0, 11);
    memcpy(a, "HKILL001", 8);
    uint64_t n = (uint64_t)np_writers;
    memcpy(a + 8, &n, 8);
}

/* ---- phase 1 -------------------------------------------------------------------------- */

static int write_phase(tctx *t, MPI_Info info)
{
    const int r = t->rank, P = t->nprocs;
    MPI_Status st;
    uint8_t *a = t_malloc(SA), *b = t_malloc(SB);
    fill_a(a, P);
    t_fill(b, SB, SA, 12);

    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    uint64_t lo = (uint64_t)r * SA / P, hi = (uint64_t)(r + 1) * SA / P;
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)lo, a + lo, (int)(hi - lo), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));

    fh = t_open(t, t->target, MPI_MODE_RDWR, info);
    lo = (uint64_t)r * SB / P, hi = (uint64_t)(r + 1) * SB / P;
    for (uint64_t off = lo; off < hi; off += 100000) {
        uint64_t n = hi - off < 100000 ? hi - off : 100000;
        TCHK(MPI_File_write_at(fh, (MPI_Offset)(SA + off), b + off, (int)n, MPI_BYTE, &st));
    }
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);

    /* tell the driver we are in the loop */
    char dir[4200], ready[4300], tmp[4300];
    snprintf(dir, sizeof dir, "%s.kill", t->path);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        TFAIL("mkdir %s: %s", dir, strerror(errno));
    snprintf(ready, sizeof ready, "%s/ready.%d", dir, r);
    snprintf(tmp, sizeof tmp, "%s/.ready.%d", dir, r);
    FILE *fp = fopen(tmp, "w");
    if (!fp || fprintf(fp, "%ld\n", (long)getpid()) < 0 || fclose(fp) != 0 || rename(tmp, ready) != 0)
        TFAIL("cannot create %s: %s", ready, strerror(errno));
    printf("  [%s] rank %d (pid %ld) wrote A, closed, wrote B, synced; writing until killed\n",
           t->test, r, (long)getpid());
    fflush(stdout);

    uint8_t *s = t_malloc(SLOTMAX);
    double t0 = t_now();
    for (uint64_t i = 0;; i++) {
        int k = (int)(i % NSLOTS);
        uint64_t len = slot_len(k);
        for (uint32_t bl = 0; (uint64_t)bl * BLKSZ < len; bl++) {
            uint64_t o = (uint64_t)bl * BLKSZ;
            loop_block(s + o, r, k, i, bl, (uint32_t)(len - o < BLKSZ ? len - o : BLKSZ));
        }
        TCHK(MPI_File_write_at(fh, (MPI_Offset)slot_off(r, k), s, (int)len, MPI_BYTE, &st));
        usleep(300); /* about half the time in writes, and not gigabytes of pieces */
        if (t_now() - t0 > 120)
            TFAIL("still writing after 120 s: nobody killed rank %d", r);
    }
}

/* ---- phase 2 -------------------------------------------------------------------------- */

typedef struct loopstat {
    uint64_t present, absent, sum;
} loopstat;

/* Check the loop slots this rank owns; fill in what it found. */
static void check_loop(const tctx *t, MPI_File fh, int np_w, loopstat *ls, const char *when)
{
    uint8_t *buf = t_malloc(SLOTMAX), exp[BLKSZ];
    MPI_Status st;
    memset(ls, 0, sizeof *ls);
    for (int w = 0; w < np_w; w++)
        for (int k = 0; k < NSLOTS; k++) {
            if ((w * NSLOTS + k) % t->nprocs != t->rank)
                continue;
            uint64_t off = slot_off(w, k), len = slot_len(k);
            memset(buf, 0, SLOTMAX);
            int rc = MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)SLOTMAX, MPI_BYTE, &st);
            if (rc != MPI_SUCCESS)
                TFAIL("%s: reading slot %d of writer %d: %s", when, k, w, t_errstr(rc));
            uint64_t first_nz;
            if (!t_all_zero(buf + len, SLOTMAX - len, &first_nz))
                TFAIL("%s: slot %d of writer %d: byte %llu after the slot's end (%llu) is not "
                      "zero", when, k, w, (unsigned long long)(len + first_nz),
                      (unsigned long long)len);
            for (uint32_t bl = 0; (uint64_t)bl * BLKSZ < len; bl++) {
                uint64_t o = (uint64_t)bl * BLKSZ;
                uint32_t n = (uint32_t)(len - o < BLKSZ ? len - o : BLKSZ);
                const uint8_t *g = buf + o;
                for (uint32_t q = 0; q < n; q++)
                    ls->sum = ls->sum * 1099511628211ull + g[q];
                if (t_all_zero(g, n, NULL)) {
                    ls->absent++;
                    continue;
                }
                uint32_t h[6];
                memcpy(h, g + 8, sizeof h);
                uint64_t it = (uint64_t)h[2] | (uint64_t)h[3] << 32;
                if (memcmp(g, "KILLBLK1", 8) != 0 || h[0] != (uint32_t)w || h[1] != (uint32_t)k ||
                    it % NSLOTS != (uint64_t)k || h[4] != bl || h[5] != (uint32_t)len)
                    TFAIL("%s: writer %d slot %d block %u (file offset %llu) is garbage: it is "
                          "neither zeros nor a block this slot was written with", when, w, k, bl,
                          (unsigned long long)(off + o));
                loop_block(exp, w, k, it, bl, n);
                TEXPECT_BYTES(g, exp, n, off + o,
                              t_fmt("%s: writer %d slot %d block %u of iteration %llu", when, w, k,
                                    bl, (unsigned long long)it));
                ls->present++;
            }
        }
    free(buf);
}

static void check_ab(const tctx *t, MPI_File fh, const uint8_t *a, const uint8_t *b, const char *when)
{
    MPI_Status st;
    uint8_t *g = t_malloc(SA);
    uint64_t lo = (uint64_t)t->rank * SA / t->nprocs, hi = (uint64_t)(t->rank + 1) * SA / t->nprocs;
    memset(g, 0xa5, SA);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)lo, g, (int)(hi - lo), MPI_BYTE, &st));
    TEXPECT_BYTES(g, a + lo, hi - lo, lo, t_fmt("%s: A (closed before the kill)", when));
    lo = (uint64_t)t->rank * SB / t->nprocs, hi = (uint64_t)(t->rank + 1) * SB / t->nprocs;
    memset(g, 0xa5, SB);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)(SA + lo), g, (int)(hi - lo), MPI_BYTE, &st));
    TEXPECT_BYTES(g, b + lo, hi - lo, SA + lo, t_fmt("%s: B (synced before the kill)", when));
    free(g);
}

static int verify_phase(tctx *t, MPI_Info info)
{
    MPI_Status st;
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, t->target, MPI_MODE_RDONLY, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("the file does not open after the kill: %s", t_errstr(rc));
    uint8_t hdr[16];
    TCHK(MPI_File_read_at_all(fh, 0, hdr, 16, MPI_BYTE, &st));
    uint64_t npw = 0;
    memcpy(&npw, hdr + 8, 8);
    TASSERT(memcmp(hdr, "HKILL001", 8) == 0 && npw >= 1 && npw <= 64,
            "the header of A is damaged: %.8s, %llu writers", (const char *)hdr,
            (unsigned long long)npw);
    const int np_w = (int)npw;
    MPI_Offset size = t_get_size(fh);
    TASSERT(size >= (MPI_Offset)(SA + SB) && size <= (MPI_Offset)(L0 + np_w * REGION),
            "size after the kill: %lld", (long long)size);
    uint8_t *a = t_malloc(SA), *b = t_malloc(SB), *c = t_malloc(CB);
    fill_a(a, np_w);
    t_fill(b, SB, SA, 12);
    t_fill(c, CB, 0, 13);
    check_ab(t, fh, a, b, "after the kill");
    loopstat l1, l2;
    check_loop(t, fh, np_w, &l1, "after the kill");
    TCHK(MPI_File_close(&fh));
    uint64_t tot[2] = {l1.present, l1.absent}, all[2];
    MPI_Allreduce(tot, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    t_log(t, "after the kill (size %lld): A and B intact; loop region: %llu blocks from loop "
          "writes, %llu absent, no garbage", (long long)size, (unsigned long long)all[0],
          (unsigned long long)all[1]);
    TASSERT(all[0] > 0, "not one block of the loop's writes survived: did the loop run?");

    /* a new writer after the crash, then everything again */
    fh = t_open(t, t->target, MPI_MODE_RDWR, info);
    const uint64_t c0 = L0 + (uint64_t)np_w * REGION;
    uint64_t lo = (uint64_t)t->rank * CB / t->nprocs, hi = (uint64_t)(t->rank + 1) * CB / t->nprocs;
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)(c0 + lo), c + lo, (int)(hi - lo), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    TASSERT(t_get_size(fh) == (MPI_Offset)(c0 + CB), "size after appending C: %lld",
            (long long)t_get_size(fh));
    check_ab(t, fh, a, b, "after a new writer");
    uint8_t *g = t_malloc(CB);
    memset(g, 0xa5, CB);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)(c0 + lo), g, (int)(hi - lo), MPI_BYTE, &st));
    TEXPECT_BYTES(g, c + lo, hi - lo, c0 + lo, "C, written after the kill");
    check_loop(t, fh, np_w, &l2, "after a new writer");
    TASSERT(l2.present == l1.present && l2.absent == l1.absent && l2.sum == l1.sum,
            "the loop region changed when C was written (%llu/%llu blocks, was %llu/%llu)",
            (unsigned long long)l2.present, (unsigned long long)l2.absent,
            (unsigned long long)l1.present, (unsigned long long)l1.absent);
    TCHK(MPI_File_close(&fh));
    t_log(t, "a new writer appended C; A, B, C and the loop region read back");
    if (t_has_opt(t, "--delete"))
        t_delete(t, t->target, info);
    free(a), free(b), free(c), free(g);
    return t_finish(t);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_kill needs an hcomp: target");
    MPI_Info info = t_info(&t, "hcomp_piece_size", "65536", "hcomp_write_buffer", "4MiB", NULL);
    if (t_has_opt(&t, "--write"))
        return write_phase(&t, info);
    if (t_has_opt(&t, "--verify"))
        return verify_phase(&t, info);
    TFAIL("give --write or --verify");
}
