/* Concurrency and soak: many ranks (run.sh runs it with 8, oversubscribed) write and
 * read one file in repeated open / write / close / read cycles for a bounded time,
 * with small and large tasks, independent and collective, overlapping earlier writes;
 * every byte is checked at the end of every cycle, and random ranges in between.
 * hcomp targets only.
 *
 *   t_soak TARGET [CONFIG]      time: $HCOMP_SOAK_SECONDS (default 30), at least 2 cycles
 *
 * A cycle opens the file (CREATE|RDWR; hcomp_piece_size, hcomp_codec, hcomp_block_size
 * and hcomp_read_ahead change from cycle to cycle), runs 6 phases in a random order, closes, reopens read-only and
 * checks every byte (a slice per rank collectively, and the whole file by one rank).
 * The file is kept for the next cycle every other time (so files mix pieces written
 * with other settings), else deleted. Every third cycle writes with
 * hcomp_write_buffer=0, and its phases are separated by MPI_Barrier only (hcomp then
 * makes a write visible to all as soon as it returns); the others gather small writes
 * (4 MiB or 64 KiB) and separate phases by sync-barrier-sync, which is what
 * MPI's non-atomic mode asks for (MPI-4.0 14.6.1). Phases:
 *   small   every rank: 40 writes of 100 B - 8 KiB at random places in its own span
 *           (spans: a random partition of the file, a new one each phase)
 *   large   half the ranks: 2 writes of 1 - 4 MiB each in its own span
 *   coll    MPI_File_write_at_all: a random window of 1 - 8 MiB cut at random places
 *           among the ranks (some get nothing)
 *   strided MPI_File_write_all through a vector view: blocks of 100 B - 8 KiB,
 *           rank r writes blocks r, r+P, r+2P, ... of a random window
 * Later phases overwrite earlier ones (and the previous cycle's data): newest wins.
 * Within a phase the ranks' ranges are disjoint and one rank's overlapping writes are
 * in program order, so the expected content is known exactly: every rank keeps, for
 * every byte, the id of the write that last covered it; the byte's value is a function
 * of (write id, offset): random, counter-like, text-like or smooth float32 by id. After
 * each phase every rank reads independently and checks: a sequential run of reads of
 * 1 B - 64 KiB over up to 2 MiB, 12 reads of one length (1 B - 16 KiB) at one stride, and
 * 3 random ranges (1 B - 256 KiB). */
#include "tfault.h"

#include <time.h>

#define F (16 * MiB)

static uint32_t *opid;  /* the write that last covered each byte; 0: never written */
static uint64_t fsize;  /* the file's size now */
static uint32_t next_op;
static int gathered;    /* this cycle's small writes may be gathered: sync-barrier-sync */

static inline uint8_t val(uint32_t op, uint64_t off)
{
    static const char text[] = "step=000042 T=301.25 p=101325.00 hcomp soak line\n";
    if (op == 0)
        return 0;
    if (op % 4 == 3) {  /* smooth float32 (the engine infers floating point: bit-shuffled
                         * forms, their own block size) */
        float f = (float)((off >> 2) % 65536) * 0.01f + (float)(op % 97);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return (uint8_t)(u >> (8 * (off & 3)));
    }
    switch (op % 3) {
    case 0:
        return (uint8_t)(t_mix64(((uint64_t)op << 40) ^ (off >> 3)) >> (8 * (off & 7)));
    case 1: {
        uint64_t v = (off >> 3) * 3 + (uint64_t)op * 1000003u;
        return (uint8_t)(v >> (8 * (off & 7)));
    }
    default:
        return (uint8_t)text[(off + op) % (sizeof text - 1)];
    }
}

static void gen(uint8_t *b, uint32_t op, uint64_t off, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        b[i] = val(op, off + i);
}

static void apply(uint32_t op, uint64_t off, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        opid[off + i] = op;
    if (len && off + len > fsize)
        fsize = off + len;
}

/* compare what was read at [off, off+n) with the expected content */
static void expect(const uint8_t *got, uint64_t off, uint64_t n, const char *what)
{
    for (uint64_t i = 0; i < n; i++)
        if (got[i] != val(opid[off + i], off + i)) {
            uint64_t bad = 0;
            for (uint64_t j = i; j < n; j++)
                bad += got[j] != val(opid[off + j], off + j);
            TFAIL("%s: %llu of %llu bytes differ; first at file offset %llu: got 0x%02x, want "
                  "0x%02x (last written by write #%u)", what, (unsigned long long)bad,
                  (unsigned long long)n, (unsigned long long)(off + i), got[i],
                  val(opid[off + i], off + i), opid[off + i]);
        }
}

typedef struct rng {
    uint64_t s;
} rng;
static uint64_t rnd(rng *r) { return t_mix64(r->s++); }
static uint64_t rndr(rng *r, uint64_t lo, uint64_t hi) { return lo + rnd(r) % (hi - lo + 1); }

/* a random partition of [0, total) into n spans: cut[0] = 0 ... cut[n] = total */
static void partition(rng *r, uint64_t total, int n, uint64_t *cut)
{
    cut[0] = 0;
    cut[n] = total;
    for (int i = 1; i < n; i++)
        cut[i] = rnd(r) % (total + 1);
    for (int i = 1; i < n; i++) /* insertion sort of the inner cuts */
        for (int j = i; j > 1 && cut[j] < cut[j - 1]; j--) {
            uint64_t x = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = x;
        }
}

static void wr(MPI_File fh, uint64_t off, const uint8_t *b, uint64_t len, const char *what)
{
    MPI_Status st;
    int rc = MPI_File_write_at(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS)
        TFAIL("%s: write of %llu bytes at %llu: %s", what, (unsigned long long)len,
              (unsigned long long)off, t_errstr(rc));
}

/* one read at off of len bytes, checked against the model (short at the end of the file) */
static void rd_check(MPI_File fh, uint64_t off, uint64_t len, uint8_t *buf, const char *what,
                     const char *kind)
{
    MPI_Status st;
    memset(buf, 0xa5, len);
    int rc = MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)len, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS)
        TFAIL("%s: %s read of %llu bytes at %llu: %s", what, kind, (unsigned long long)len,
              (unsigned long long)off, t_errstr(rc));
    uint64_t want = off >= fsize ? 0 : (fsize - off < len ? fsize - off : len);
    TASSERT((uint64_t)t_count(&st) == want, "%s: %s read at %llu: %d bytes, want %llu (size %llu)",
            what, kind, (unsigned long long)off, t_count(&st), (unsigned long long)want,
            (unsigned long long)fsize);
    expect(buf, off, want, t_fmt("%s: %s read after the phase", what, kind));
}

/* The read patterns that read-ahead follows (docs/ENGINE.md, "Read-ahead") and the block
 * cache serves: a sequential run of small reads of random sizes, and a strided run (reads
 * of one length at one stride, as BD-CATS-IO's subset and IOR's segments make). */
static void check_runs(MPI_File fh, rng *r, uint8_t *buf, const char *what, uint64_t *stat)
{
    uint64_t off = rnd(r) % F, end = off + rndr(r, 1, 2 * MiB);
    while (off < end) {
        uint64_t len = rndr(r, 1, 64 * KiB);
        rd_check(fh, off, len, buf, what, "sequential");
        off += len;
        stat[4]++;
    }
    uint64_t len = rndr(r, 1, 16 * KiB), stride = len + rndr(r, 0, 512 * KiB);
    off = rnd(r) % F;
    for (int k = 0; k < 12; k++, off += stride) {
        rd_check(fh, off, len, buf, what, "strided");
        stat[4]++;
    }
}

enum { SMALL, LARGE, COLL, STRIDED };
static const char *const phase_name[] = {"small", "large", "coll", "strided"};

static void phase(const tctx *t, MPI_File fh, int kind, uint64_t seed, uint8_t *buf, uint64_t *stat)
{
    const int P = t->nprocs, me = t->rank;
    rng r = {seed};
    uint64_t *cut = t_malloc(sizeof(uint64_t) * (size_t)(P + 1));
    char what[96];
    snprintf(what, sizeof what, "phase %s (seed %llu)", phase_name[kind], (unsigned long long)seed);
    MPI_Status st;
    if (kind == SMALL || kind == LARGE) {
        int writers[64], m = 0;
        for (int q = 0; q < P; q++)
            if (kind == SMALL || (q + (int)(seed % 2)) % 2 == 0)
                writers[m++] = q;
        if (m == 0)
            writers[m++] = 0;
        partition(&r, F, m, cut);
        for (int w = 0; w < m; w++) {
            int q = writers[w];
            uint64_t lo = cut[w], span = cut[w + 1] - cut[w];
            int nops = kind == SMALL ? 40 : 2;
            for (int k = 0; k < nops; k++) {
                uint64_t len = kind == SMALL ? rndr(&r, 100, 8192) : rndr(&r, MiB, 4 * MiB);
                if (len > span)
                    len = span;
                uint64_t off = lo + (span > len ? rnd(&r) % (span - len + 1) : 0);
                uint32_t op = ++next_op;
                if (len == 0)
                    continue;
                if (q == me) {
                    gen(buf, op, off, len);
                    wr(fh, off, buf, len, what);
                    stat[kind == SMALL ? 0 : 1]++;
                }
                apply(op, off, len);
            }
        }
    } else if (kind == COLL) {
        uint64_t w = rndr(&r, MiB, 8 * MiB), x = rnd(&r) % (F - w + 1);
        partition(&r, w, P, cut);
        uint32_t op0 = next_op + 1;
        next_op += (uint32_t)P;
        uint64_t lo = x + cut[me], len = cut[me + 1] - cut[me];
        gen(buf, op0 + (uint32_t)me, lo, len);
        int rc = MPI_File_write_at_all(fh, (MPI_Offset)lo, buf, (int)len, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            TFAIL("%s: write_at_all of %llu bytes at %llu: %s", what, (unsigned long long)len,
                  (unsigned long long)lo, t_errstr(rc));
        for (int q = 0; q < P; q++)
            apply(op0 + (uint32_t)q, x + cut[q], cut[q + 1] - cut[q]);
        stat[2]++;
    } else {
        uint64_t bs = rndr(&r, 100, 8192), maxnb = F / ((uint64_t)P * bs);
        uint64_t nb = rndr(&r, 1, maxnb < 96 ? maxnb : 96);
        uint64_t x = rnd(&r) % (F - (uint64_t)P * bs * nb + 1);
        uint32_t op0 = next_op + 1;
        next_op += (uint32_t)P;
        uint32_t op = op0 + (uint32_t)me;
        for (uint64_t j = 0; j < nb; j++) {
            uint64_t off = x + (j * (uint64_t)P + (uint64_t)me) * bs;
            gen(buf + j * bs, op, off, bs);
        }
        MPI_Datatype v;
        MPI_Type_vector((int)nb, (int)bs, (int)((uint64_t)P * bs), MPI_BYTE, &v);
        MPI_Type_commit(&v);
        TCHK(MPI_File_set_view(fh, (MPI_Offset)(x + (uint64_t)me * bs), MPI_BYTE, v, "native",
                               MPI_INFO_NULL));
        int rc = MPI_File_write_all(fh, buf, (int)(nb * bs), MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            TFAIL("%s: write_all of %llu blocks of %llu bytes: %s", what, (unsigned long long)nb,
                  (unsigned long long)bs, t_errstr(rc));
        TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&v);
        for (int q = 0; q < P; q++)
            for (uint64_t j = 0; j < nb; j++)
                apply(op0 + (uint32_t)q, x + (j * (uint64_t)P + (uint64_t)q) * bs, bs);
        stat[3]++;
    }
    free(cut);
    if (gathered)
        TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (gathered)
        TCHK(MPI_File_sync(fh));

    /* random reads of what everybody wrote */
    rng mine = {seed * 7919 + (uint64_t)me + 1};
    check_runs(fh, &mine, buf, what, stat);
    for (int k = 0; k < 3; k++) {
        uint64_t len = rndr(&mine, 1, 256 * KiB), off = rnd(&mine) % F;
        memset(buf, 0xa5, len);
        int rc = MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)len, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            TFAIL("%s: read of %llu bytes at %llu: %s", what, (unsigned long long)len,
                  (unsigned long long)off, t_errstr(rc));
        uint64_t want = off >= fsize ? 0 : (fsize - off < len ? fsize - off : len);
        TASSERT((uint64_t)t_count(&st) == want, "%s: read at %llu: %d bytes, want %llu (size %llu)",
                what, (unsigned long long)off, t_count(&st), (unsigned long long)want,
                (unsigned long long)fsize);
        expect(buf, off, want, t_fmt("%s: random read after the phase", what));
        stat[4]++;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody writes the next phase while others still read */
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_soak needs an hcomp: target");
    double seconds = 30;
    if (t.rank == 0 && getenv("HCOMP_SOAK_SECONDS"))
        seconds = atof(getenv("HCOMP_SOAK_SECONDS"));
    MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    opid = calloc(F, sizeof *opid);
    uint8_t *buf = t_malloc(F);
    if (!opid)
        TFAIL("out of memory");
    static const char *const pieces[] = {"65536", "1048576", "262144", "4096"};
    static const char *const codecs[] = {"auto", "lz4", "zstd", "auto", "none"};
    uint64_t stat[5] = {0};
    double t0 = t_now();
    int cycle = 0, go = 1;
    MPI_Info dinfo = t_info(&t, NULL);
    t_delete_quiet(&t, t.target, dinfo);
    while (go) {
        static const char *const buffers[] = {"0", "4194304", "65536"};
        static const char *const blocks[] = {"auto", "8KiB", "auto", "4KiB", "64KiB", "auto", "1MiB"};
        static const char *const aheads[] = {"67108864", "0", "1MiB"};
        gathered = cycle % 3 != 0;
        MPI_Info info = t_info(&t, "hcomp_piece_size", pieces[cycle % 4], "hcomp_codec",
                               codecs[cycle % 5], "hcomp_write_buffer", buffers[cycle % 3],
                               "hcomp_block_size", blocks[cycle % 7], "hcomp_read_ahead",
                               aheads[cycle % 3], NULL);
        MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
        TASSERT(t_get_size(fh) == (MPI_Offset)fsize, "cycle %d: size at open %lld, want %llu",
                cycle, (long long)t_get_size(fh), (unsigned long long)fsize);
        MPI_Barrier(MPI_COMM_WORLD);
        /* 6 phases in a random order */
        int order[6] = {SMALL, LARGE, COLL, STRIDED, SMALL, COLL};
        rng ro = {(uint64_t)cycle * 1000003u + 17};
        for (int i = 5; i > 0; i--) {
            int j = (int)(rnd(&ro) % (uint64_t)(i + 1)), x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        for (int p = 0; p < 6; p++)
            phase(&t, fh, order[p], (uint64_t)cycle * 100 + (uint64_t)p + 1, buf, stat);
        TCHK(MPI_File_close(&fh));

        /* every byte, after reopening */
        fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
        MPI_Status st;
        TASSERT(t_get_size(fh) == (MPI_Offset)fsize, "cycle %d: size after reopening %lld, want "
                "%llu", cycle, (long long)t_get_size(fh), (unsigned long long)fsize);
        uint64_t lo = (uint64_t)t.rank * fsize / t.nprocs, hi = (uint64_t)(t.rank + 1) * fsize / t.nprocs;
        memset(buf, 0xa5, hi - lo);
        TCHK(MPI_File_read_at_all(fh, (MPI_Offset)lo, buf, (int)(hi - lo), MPI_BYTE, &st));
        expect(buf, lo, hi - lo, t_fmt("cycle %d: my slice after reopening", cycle));
        if (t.rank == cycle % t.nprocs) {
            memset(buf, 0xa5, fsize);
            TCHK(MPI_File_read_at(fh, 0, buf, (int)fsize, MPI_BYTE, &st));
            TASSERT((uint64_t)t_count(&st) == fsize, "cycle %d: whole file: %d bytes", cycle,
                    t_count(&st));
            expect(buf, 0, fsize, t_fmt("cycle %d: whole file after reopening", cycle));
        }
        TCHK(MPI_File_close(&fh));
        if (cycle % 2 == 1) { /* start over with a new file */
            t_delete(&t, t.target, info);
            memset(opid, 0, F * sizeof *opid);
            fsize = 0;
        }
        MPI_Info_free(&info);
        cycle++;
        go = cycle < 2 || t_now() - t0 < seconds;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    t_delete_quiet(&t, t.target, dinfo);
    MPI_Info_free(&dinfo);
    uint64_t all[5];
    MPI_Reduce(stat, all, 5, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    t_log(&t, "%d cycles in %.1f s with %d ranks: %llu small and %llu large independent writes, "
          "%llu collective and %llu strided collective writes (per rank), %llu reads; "
          "every byte checked after each cycle", cycle, t_now() - t0, t.nprocs,
          (unsigned long long)all[0], (unsigned long long)all[1],
          (unsigned long long)all[2] / (uint64_t)t.nprocs,
          (unsigned long long)all[3] / (uint64_t)t.nprocs, (unsigned long long)all[4]);
    free(opid), free(buf);
    return t_finish(&t);
}
