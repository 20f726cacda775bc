/* A tier directory vanishes (rm -rf) while a file is open for writing: the writes
 * that follow leave the tier out and succeed, what lives on the other tier reads
 * back, and reading bytes that lived on the vanished tier fails with an MPI error
 * that names the tier and the missing segment - never wrong bytes. hcomp targets only.
 *
 *   t_vanish TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * Pieces of 64 KiB of random data, two tiers "tier0" (vanishes) and "tier1"
 * (unlimited); tier0 has a capacity, so hcomp keeps a capacity ledger in it.
 *
 *  A. "a full tier vanishes": tier0 holds 1 MiB. Every rank writes 128 KiB
 *     independently, then 3 MiB are written collectively: tier0 fills, the rest goes
 *     to tier1. Rank 0 removes tier0's directory; at once every rank writes 256 KiB
 *     independently and 1 MiB collectively (new data, and overwrites of old). Then,
 *     in the same open and after reopening, every 64 KiB block is read on its own:
 *     it reads back exactly, or fails with MPI_ERR_NO_SUCH_FILE naming tier0 and the
 *     segment. Blocks stored on tier1 (found from the piece headers of its segments)
 *     and blocks written after the removal must read back.
 *  B. "a tier with room vanishes while the writer holds a short reservation": tier0's
 *     capacity makes each rank's first reservation 2.5 pieces, so after two pieces
 *     the next one needs more room from the ledger - in the tier that is gone. Every
 *     rank writes two pieces (on tier0), tier0 is removed, and every rank writes four
 *     pieces and a collective 1 MiB at once: all must succeed and read back; all the
 *     old pieces fail to read naming tier0.
 * Both end with a writable open, which must fail with MPI_ERR_NO_SUCH_FILE naming the
 * missing tier directory (a writable open checks every tier). */
#include "tfault.h"

#define BLK (64 * KiB)

typedef struct cover {
    uint8_t *must;
    int nblk;
    uint64_t size;
} cover;

/* blocks wholly inside the piece [start, start+raw) */
static void mark_piece(uint64_t start, uint32_t raw, void *arg)
{
    cover *c = arg;
    for (uint64_t k = (start + BLK - 1) / BLK; k < (uint64_t)c->nblk; k++) {
        uint64_t end = (k + 1) * BLK < c->size ? (k + 1) * BLK : c->size;
        if (end > start + raw)
            break;
        c->must[k] = 1;
    }
}

/* Read every BLK block independently (rank r reads blocks r, r+P, ...). A block reads
 * back exactly, or fails naming the vanished tier; blocks with must[k] have to read.
 * Returns the number of blocks that failed (over all ranks). */
static int scan(const tctx *t, MPI_File fh, const uint8_t *ref, uint64_t size, const char *tier0,
                const uint8_t *must, const char *when_)
{
    char when[256]; /* when_ may be t_fmt's buffer, which the checks below reuse */
    snprintf(when, sizeof when, "%s", when_);
    uint8_t *b = t_malloc(BLK);
    MPI_Status st;
    int failed = 0, nblk = (int)((size + BLK - 1) / BLK);
    for (int k = t->rank; k < nblk; k += t->nprocs) {
        uint64_t off = (uint64_t)k * BLK, n = size - off < BLK ? size - off : BLK;
        memset(b, 0xa5, BLK);
        int rc = MPI_File_read_at(fh, (MPI_Offset)off, b, (int)n, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS) {
            TASSERT(t_count(&st) == (int)n, "%s: block %d: read %d of %llu bytes", when, k,
                    t_count(&st), (unsigned long long)n);
            TEXPECT_BYTES(b, ref + off, n, off, t_fmt("%s: block %d", when, k));
            continue;
        }
        int cls = t_err_class(rc);
        const char *msg = t_err_text(rc);
        if (must[k])
            TFAIL("%s: block %d (on tier1, or written after tier0 vanished) cannot be read: %s",
                  when, k, t_errstr(rc));
        if (cls != MPI_ERR_NO_SUCH_FILE)
            TFAIL("%s: block %d: expected MPI_ERR_NO_SUCH_FILE, got %s", when, k, t_errstr(rc));
        if (!strstr(msg, tier0) || !strstr(msg, "\"tier0\"") || !strstr(msg, ".seg"))
            TFAIL("%s: block %d: the error does not name the vanished tier \"tier0\", its "
                  "directory %s and the segment: %s", when, k, tier0, msg);
        if (failed++ == 0)
            printf("  [%s] rank %d: %s: block %d on the vanished tier: %s: %.600s\n", t->test,
                   t->rank, when, k, t_class_name(cls), msg);
    }
    free(b);
    int total = 0;
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t_log(t, "%s: %d of %d blocks were on the vanished tier and fail to read", when, total, nblk);
    return total;
}

/* rm -rf tier0 on rank 0 (between barriers) */
static void vanish(const tctx *t, const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        int err = t_rm_rf(dir);
        if (err)
            TFAIL("rm -rf %s: %s", dir, strerror(err));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* the end of both scenarios: scan, reopen, scan, writable open fails, clean up */
static void finish(tctx *t, ttiers *tt, const char *name, MPI_Info info, MPI_File fh,
                   const uint8_t *ref, uint64_t size, const uint8_t *must, int all_old_lost,
                   const char *what)
{
    int nblk = (int)((size + BLK - 1) / BLK), nmust = 0;
    for (int k = 0; k < nblk; k++)
        nmust += must[k];
    TASSERT(t_get_size(fh) == (MPI_Offset)size, "%s: size %lld, want %llu", what,
            (long long)t_get_size(fh), (unsigned long long)size);
    int lost = scan(t, fh, ref, size, tt->dir[0], must, t_fmt("%s, same open", what));
    TASSERT(lost > 0, "%s: no read failed, yet tier0 held data when it vanished", what);
    if (all_old_lost)
        TASSERT(lost == nblk - nmust, "%s: %d blocks fail to read, but all %d old blocks were "
                "on tier0", what, lost, nblk - nmust);
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        TASSERT(!t_exists(tt->dir[0]), "%s: tier0's directory %s came back", what, tt->dir[0]);
    fh = t_open(t, name, MPI_MODE_RDONLY, info);
    int lost2 = scan(t, fh, ref, size, tt->dir[0], must, t_fmt("%s, after reopening", what));
    TASSERT(lost2 >= lost, "%s: after reopening fewer blocks fail (%d) than before (%d)", what,
            lost2, lost);
    TCHK(MPI_File_close(&fh));
    t_open_fails(t, MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, MPI_ERR_NO_SUCH_FILE, -1,
                 t_fmt("%s: writable open with a vanished tier directory", what), "\"tier0\"",
                 tt->dir[0], NULL);
    /* the tier directory back (empty), then delete */
    t_mkdir(t, tt->dir[0]);
    t_delete(t, name, info);
    t_remove_tiers(t, tt);
}

static void scenario_a(tctx *t)
{
    const int r = t->rank, P = t->nprocs;
    const uint64_t SMALL = 128 * KiB, COLL1 = 3 * MiB, LATE = 256 * KiB, COLL2 = 1 * MiB;
    const uint64_t small0 = 0, coll1 = (uint64_t)P * SMALL, late0 = coll1 + COLL1;
    const uint64_t coll2 = coll1 + COLL1 / 2; /* overwrites the second half of coll1 */
    const uint64_t size = late0 + (uint64_t)P * LATE;
    static const char *const caps[2] = {"1MiB", "unlimited"};
    ttiers tt;
    t_make_tiers_tag(t, &tt, "va", 2, caps);
    const char *name = t_name(t, ".a");
    MPI_Info info = t_info(t, "hcomp_config", tt.cfg, "hcomp_piece_size", "65536", NULL);
    uint8_t *ref = t_malloc(size);
    t_fill_random(ref, size, 4711);
    cover c = {calloc((size_t)((size + BLK - 1) / BLK), 1), (int)((size + BLK - 1) / BLK), size};

    t_delete_quiet(t, name, info);
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    for (uint64_t k = 0; k < SMALL; k += BLK)
        write_ok(fh, small0 + (uint64_t)r * SMALL + k, ref, BLK, 0, "A, before");
    uint64_t a = coll1 + (uint64_t)r * COLL1 / P, b = coll1 + (uint64_t)(r + 1) * COLL1 / P;
    write_ok(fh, a, ref, b - a, 1, "A, before");
    sync_all(fh);
    if (r == 0) {
        uint64_t n0, n1, s0 = t_du(tt.dir[0], &n0), s1 = t_du(tt.dir[1], &n1);
        t_log(t, "A: before: tier0 %llu bytes in %llu files, tier1 %llu bytes in %llu files",
              (unsigned long long)s0, (unsigned long long)n0, (unsigned long long)s1,
              (unsigned long long)n1);
        TASSERT(s0 > 0 && s1 > 0, "A: the data should be on both tiers before tier0 vanishes");
        /* what is on tier1 must stay readable */
        int n = t_seg_pieces(tt.dir[1], mark_piece, &c);
        TASSERT(n > 0, "A: no pieces found in tier1's segments");
    }
    MPI_Bcast(c.must, c.nblk, MPI_BYTE, 0, MPI_COMM_WORLD);

    vanish(t, tt.dir[0]);
    t_fill_random(ref + coll2, COLL2, 4712);
    t_fill_random(ref + late0, (uint64_t)P * LATE, 4713);
    for (uint64_t k = 0; k < LATE; k += BLK)
        write_ok(fh, late0 + (uint64_t)r * LATE + k, ref, BLK, 0, "A, just after tier0 vanished");
    a = coll2 + (uint64_t)r * COLL2 / P, b = coll2 + (uint64_t)(r + 1) * COLL2 / P;
    write_ok(fh, a, ref, b - a, 1, "A, after tier0 vanished");
    sync_all(fh);
    for (uint64_t off = coll2; off < coll2 + COLL2; off += BLK)
        c.must[off / BLK] = 1;
    for (uint64_t off = late0; off < size; off += BLK)
        c.must[off / BLK] = 1;
    finish(t, &tt, name, info, fh, ref, size, c.must, 0, "A (a full tier vanishes)");
    MPI_Info_free(&info);
    free(ref), free(c.must);
}

static void scenario_b(tctx *t)
{
    const int r = t->rank, P = t->nprocs;
    const uint64_t PIECE_STORED = BLK + 16; /* a piece of random data, stored raw */
    const uint64_t OLD = 2 * BLK, NEW = 4 * BLK, COLL = 1 * MiB;
    const uint64_t per = OLD + NEW, coll0 = (uint64_t)P * per, size = coll0 + COLL;
    /* a writer's reservation is capacity / 8 / (ranks): 2.5 pieces */
    char cap[64];
    snprintf(cap, sizeof cap, "%llu", (unsigned long long)(20 * (uint64_t)P * PIECE_STORED));
    const char *caps[2] = {cap, "unlimited"};
    ttiers tt;
    t_make_tiers_tag(t, &tt, "vb", 2, caps);
    const char *name = t_name(t, ".b");
    MPI_Info info = t_info(t, "hcomp_config", tt.cfg, "hcomp_piece_size", "65536", "hcomp_codec",
                           "none", NULL);
    uint8_t *ref = t_malloc(size);
    t_fill_random(ref, size, 4714);
    int nblk = (int)(size / BLK);
    uint8_t *must = calloc((size_t)nblk, 1);

    t_delete_quiet(t, name, info);
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    const uint64_t mine = (uint64_t)r * per;
    for (uint64_t k = 0; k < OLD; k += BLK)
        write_ok(fh, mine + k, ref, BLK, 0, "B, before");
    sync_all(fh);
    if (r == 0) {
        uint64_t n0, n1, s0 = t_du(tt.dir[0], &n0), s1 = t_du(tt.dir[1], &n1);
        t_log(t, "B: before: tier0 %llu bytes in %llu files, tier1 %llu bytes", (unsigned long long)s0,
              (unsigned long long)n0, (unsigned long long)s1);
        cover none = {NULL, 0, 0};
        int n = t_seg_pieces(tt.dir[0], mark_piece, &none);
        TASSERT(n == 2 * P && s1 == 0, "B: all %d pieces should be on tier0 before it vanishes "
                "(found %d there, and %llu bytes on tier1)", 2 * P, n, (unsigned long long)s1);
    }
    vanish(t, tt.dir[0]);
    for (uint64_t k = OLD; k < per; k += BLK)
        write_ok(fh, mine + k, ref, BLK, 0, "B, just after tier0 vanished");
    uint64_t a = coll0 + (uint64_t)r * COLL / P, b = coll0 + (uint64_t)(r + 1) * COLL / P;
    write_ok(fh, a, ref, b - a, 1, "B, after tier0 vanished");
    sync_all(fh);
    for (int k = 0; k < nblk; k++)
        must[k] = (uint64_t)k * BLK >= coll0 || (uint64_t)k * BLK % per >= OLD;
    finish(t, &tt, name, info, fh, ref, size, must, 1,
           "B (a tier vanishes while a reservation is short)");
    MPI_Info_free(&info);
    free(ref), free(must);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_vanish needs an hcomp: target");
    scenario_a(&t);
    scenario_b(&t);
    return t_finish(&t);
}
