/* A tier turns read-only. hcomp targets only; needs mount(2) (root): without it the
 * test prints SKIP. (chmod does not stop root, so the tier is made read-only by a
 * mount.)
 *
 *   t_rotier TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * Tiers: "tier0" with a capacity (hcomp keeps a capacity ledger in it), then "tier1",
 * unlimited; pieces of 64 KiB of random data, stored as they are.
 *  1. while the file is open for writing: every rank writes two pieces (on tier0);
 *     then tier0 becomes a read-only bind mount of itself. Every rank writes four
 *     more pieces and 1 MiB collectively at once: the writes succeed (no new segment
 *     can appear on tier0, and its ledger cannot be written: hcomp must leave it out),
 *     and everything - old pieces on the read-only tier too - reads back exactly, in
 *     the same open and after reopening read-only. A new writable open fails with
 *     MPI_ERR_READ_ONLY or MPI_ERR_ACCESS naming the tier and its directory, and a
 *     new file is not created.
 *  2. tier0 is a tmpfs; a file is written and closed, then the tmpfs is remounted
 *     read-only (mount -o remount,ro): the file opens read-only and reads back
 *     exactly; a writable open fails as above. */
#include "tfault.h"

#define BLK (64 * KiB)

/* every byte: a slice per rank collectively, and the whole file by the last rank */
static void verify(const tctx *t, MPI_File fh, const uint8_t *ref, uint64_t size, const char *what)
{
    MPI_Status st;
    uint8_t *b = t_malloc(size);
    TASSERT(t_get_size(fh) == (MPI_Offset)size, "%s: size %lld, want %llu", what,
            (long long)t_get_size(fh), (unsigned long long)size);
    uint64_t a = (uint64_t)t->rank * size / t->nprocs, e = (uint64_t)(t->rank + 1) * size / t->nprocs;
    memset(b, 0xa5, size);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, b + a, (int)(e - a), MPI_BYTE, &st));
    TEXPECT_BYTES(b + a, ref + a, e - a, a, what);
    if (t->rank == t->nprocs - 1) {
        memset(b, 0xa5, size);
        TCHK(MPI_File_read_at(fh, 0, b, (int)size, MPI_BYTE, &st));
        TASSERT(t_count(&st) == (int)size, "%s: whole file: read %d bytes", what, t_count(&st));
        TEXPECT_BYTES(b, ref, size, 0, what);
    }
    free(b);
}

/* rank 0: the directory must refuse a new file */
static void expect_readonly(const tctx *t, const char *dir)
{
    if (t->rank != 0)
        return;
    char p[4200];
    snprintf(p, sizeof p, "%s/probe", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        unlink(p);
        TFAIL("%s is still writable after the read-only mount", dir);
    }
    TASSERT(errno == EROFS, "creating %s: %s, expected EROFS", p, strerror(errno));
}

static void writable_open_fails(tctx *t, const ttiers *tt, const char *name, MPI_Info info,
                                const char *what)
{
    t_open_fails(t, MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, MPI_ERR_READ_ONLY, MPI_ERR_ACCESS,
                 t_fmt("%s: writable open", what), "\"tier0\"", tt->dir[0], NULL);
    const char *fresh = t_name(t, ".fresh");
    t_open_fails(t, MPI_COMM_WORLD, fresh, MPI_MODE_RDWR | MPI_MODE_CREATE, info,
                 MPI_ERR_READ_ONLY, MPI_ERR_ACCESS, t_fmt("%s: creating a new file", what),
                 "\"tier0\"", NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        TASSERT(!t_exists(t_path(t, ".fresh")), "%s: the failed create left %s behind", what,
                t_path(t, ".fresh"));
}

static void count_piece(uint64_t start, uint32_t raw, void *arg)
{
    (void)start;
    (void)raw;
    (void)arg;
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_rotier needs an hcomp: target");
    const int r = t.rank, P = t.nprocs;

    /* can we mount at all? (a bind mount of a scratch directory) */
    const char *probe = t_path(&t, ".probe");
    t_mkdir(&t, probe);
    int err = t_mount(&t, probe, probe, NULL, MS_BIND, NULL);
    if (err) {
        t_rmdir(&t, probe);
        t_skip(&t, t_fmt("cannot bind-mount (%s); the test needs root (CAP_SYS_ADMIN)",
                         strerror(err)));
    }
    t_umount(&t, probe);
    t_rmdir(&t, probe);

    /* ---- 1. read-only bind mount while the file is open for writing */
    const uint64_t OLD = 2 * BLK, NEW = 4 * BLK, COLL = 1 * MiB;
    const uint64_t per = OLD + NEW, coll0 = (uint64_t)P * per, size = coll0 + COLL;
    char cap[64]; /* each writer's first reservation: 2.5 pieces (as in t_vanish) */
    snprintf(cap, sizeof cap, "%llu", (unsigned long long)(20 * (uint64_t)P * (BLK + 16)));
    const char *caps[2] = {cap, "unlimited"};
    ttiers tt;
    t_make_tiers_tag(&t, &tt, "ro1", 2, caps);
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "65536", "hcomp_codec",
                           "none", NULL);
    uint8_t *ref = t_malloc(size);
    t_fill_random(ref, size, 5150);

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    const uint64_t mine = (uint64_t)r * per;
    for (uint64_t k = 0; k < OLD; k += BLK)
        write_ok(fh, mine + k, ref, BLK, 0, "1, before");
    sync_all(fh);
    if (r == 0) {
        int n = t_seg_pieces(tt.dir[0], count_piece, NULL);
        TASSERT(n == 2 * P, "1: all %d pieces should be on tier0 before it turns read-only (found "
                "%d)", 2 * P, n);
    }
    /* hcomp's segments on tier0 stay open for writing through the original mount; a
     * bind mount of the directory on itself, remounted read-only, is what every path
     * lookup sees from now on (a read-only remount of the file system itself is refused
     * while files are open for writing on it) */
    MPI_Barrier(MPI_COMM_WORLD);
    err = t_mount(&t, tt.dir[0], tt.dir[0], NULL, MS_BIND, NULL);
    if (!err)
        err = t_mount(&t, NULL, tt.dir[0], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
    if (err)
        TFAIL("read-only bind mount of %s: %s", tt.dir[0], strerror(err));
    expect_readonly(&t, tt.dir[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    for (uint64_t k = OLD; k < per; k += BLK)
        write_ok(fh, mine + k, ref, BLK, 0, "1, just after tier0 turned read-only");
    uint64_t a = coll0 + (uint64_t)r * COLL / P, b = coll0 + (uint64_t)(r + 1) * COLL / P;
    write_ok(fh, a, ref, b - a, 1, "1, after tier0 turned read-only");
    sync_all(fh);
    verify(&t, fh, ref, size, "1: read-only tier0, same open");
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify(&t, fh, ref, size, "1: read-only tier0, after reopening");
    TCHK(MPI_File_close(&fh));
    if (r == 0) {
        uint64_t n1, s1 = t_du(tt.dir[1], &n1);
        t_log(&t, "1: after: %d pieces on tier0, %llu bytes in %llu files on tier1",
              t_seg_pieces(tt.dir[0], count_piece, NULL), (unsigned long long)s1,
              (unsigned long long)n1);
        TASSERT(s1 > 0, "1: nothing went to tier1 after tier0 turned read-only");
    }
    writable_open_fails(&t, &tt, t.target, info, "1: tier0 read-only");
    t_umount(&t, tt.dir[0]);
    t_delete(&t, t.target, info);
    /* the writers could not take their lines out of tier0's capacity ledger while it
     * was read-only; hcomp drops them when it finds their processes gone */
    t_unlink(&t, t_fmt("%s/.hcomp-ledger", tt.dir[0]));
    t_remove_tiers(&t, &tt);
    MPI_Info_free(&info);

    /* ---- 2. a tmpfs tier remounted read-only between runs */
    static const char *const caps2[2] = {"unlimited", "unlimited"};
    t_make_tiers_tag(&t, &tt, "ro2", 2, caps2);
    info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "65536", NULL);
    err = t_mount_tmpfs(&t, tt.dir[0], "64m");
    if (err)
        TFAIL("mount a tmpfs on %s: %s", tt.dir[0], strerror(err));
    t_fill_random(ref, size, 5151);
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    a = (uint64_t)r * size / P, b = (uint64_t)(r + 1) * size / P;
    write_ok(fh, a, ref, b - a, 1, "2, writing");
    TCHK(MPI_File_close(&fh));
    if (r == 0)
        TASSERT(t_seg_pieces(tt.dir[0], count_piece, NULL) > 0, "2: nothing on the tmpfs tier");
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has closed its segments */
    err = t_mount(&t, NULL, tt.dir[0], NULL, MS_REMOUNT | MS_RDONLY, "size=64m,mode=0700");
    if (err)
        TFAIL("remount %s read-only: %s", tt.dir[0], strerror(err));
    expect_readonly(&t, tt.dir[0]);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify(&t, fh, ref, size, "2: tmpfs tier remounted read-only");
    TCHK(MPI_File_close(&fh));
    writable_open_fails(&t, &tt, t.target, info, "2: tmpfs tier read-only");
    err = t_mount(&t, NULL, tt.dir[0], NULL, MS_REMOUNT, "size=64m,mode=0700");
    if (err)
        TFAIL("remount %s read-write: %s", tt.dir[0], strerror(err));
    t_delete(&t, t.target, info);
    if (r == 0)
        t_expect_empty_dir(tt.dir[0], "2: the tmpfs tier after the delete");
    t_umount(&t, tt.dir[0]);
    t_remove_tiers(&t, &tt);
    MPI_Info_free(&info);
    free(ref);
    return t_finish(&t);
}
