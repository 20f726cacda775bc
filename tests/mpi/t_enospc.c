/* A tier's file system fills up during a write (a real ENOSPC, not a configured
 * capacity): the pieces that do not fit spill to the next tier, every write succeeds
 * and every byte reads back. hcomp targets only; needs mount(2) (root): without it
 * the test prints SKIP.
 *
 *   t_enospc TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * Both cases use two tiers of capacity "unlimited", so hcomp learns that the first
 * is full only from the file system:
 *  1. a 1 MiB tmpfs mounted on the file's segment directory of the first tier. The
 *     tier directory itself (what hcomp's monitor measures with statvfs) has plenty
 *     of room, so the placement plans pieces there and the writes hit ENOSPC for sure.
 *  2. a 1 MiB tmpfs as the whole first tier; all ranks write 6 MiB of random data
 *     (collectively and independently) into a new file at the same time, then
 *     another file is written on the full tier.
 * After each: the data reads back in the same open and after reopening, the small
 * file system holds at most its size and the second tier holds the rest. */
#include "tfault.h"

#define SMALL (1 * MiB)
#define TOTAL (6 * MiB)

/* The first 16 hex digits of the file id in the mapping file header (docs/FORMAT.md). */
static void file_id16(const char *path, char out[17])
{
    unsigned char h[64];
    int fd = open(path, O_RDONLY);
    if (fd < 0 || pread(fd, h, 64, 0) != 64)
        TFAIL("cannot read the mapping file header of %s: %s", path, strerror(errno));
    close(fd);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", h[16 + i]);
}

/* Write TOTAL bytes of random data: the first half collectively (a slice per rank),
 * the second half independently in writes of 100 KiB - 1 MiB of each rank's part. */
static void write_all(const tctx *t, MPI_File fh, const uint8_t *all)
{
    MPI_Status st;
    uint64_t half = TOTAL / 2;
    uint64_t a = (uint64_t)t->rank * half / t->nprocs, b = (uint64_t)(t->rank + 1) * half / t->nprocs;
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, all + a, (int)(b - a), MPI_BYTE, &st));
    a = half + (uint64_t)t->rank * half / t->nprocs;
    b = half + (uint64_t)(t->rank + 1) * half / t->nprocs;
    for (uint64_t off = a, k = 0; off < b; k++) {
        uint64_t n = 100 * KiB + (k * 313 * KiB) % (900 * KiB);
        if (n > b - off)
            n = b - off;
        TCHK(MPI_File_write_at(fh, (MPI_Offset)off, all + off, (int)n, MPI_BYTE, &st));
        off += n;
    }
    /* what the others wrote is visible after sync, barrier, sync */
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
}

/* Every byte, read collectively by slices and by one rank whole. */
static void verify_all(const tctx *t, MPI_File fh, const uint8_t *all, const char *when)
{
    MPI_Status st;
    uint8_t *back = t_malloc(TOTAL);
    TASSERT(t_get_size(fh) == (MPI_Offset)TOTAL, "%s: size %lld", when, (long long)t_get_size(fh));
    uint64_t a = (uint64_t)t->rank * TOTAL / t->nprocs, b = (uint64_t)(t->rank + 1) * TOTAL / t->nprocs;
    memset(back, 0, TOTAL);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, back + a, (int)(b - a), MPI_BYTE, &st));
    TEXPECT_BYTES(back + a, all + a, b - a, a, t_fmt("%s: my slice", when));
    if (t->rank == t->nprocs - 1) {
        memset(back, 0, TOTAL);
        TCHK(MPI_File_read_at(fh, 0, back, TOTAL, MPI_BYTE, &st));
        TASSERT(t_count(&st) == (int)TOTAL, "%s: read %d bytes", when, t_count(&st));
        TEXPECT_BYTES(back, all, TOTAL, 0, t_fmt("%s: whole file", when));
    }
    free(back);
}

/* Bytes stored in the small file system and on the second tier. */
static void check_placement(const tctx *t, const char *small_dir, const char *tier1, const char *what)
{
    if (t->rank != 0)
        return;
    uint64_t n0, n1, s0 = t_du(small_dir, &n0), s1 = t_du(tier1, &n1);
    /* what the small file system holds is its allocated blocks: a segment whose pieces were
     * punched out (moved off this volatile tmpfs by the durable MPI_File_sync, or
     * reclaimed) keeps its size, with holes in it */
    uint64_t a0 = t_du_blocks(small_dir, NULL);
    t_log(t, "%s: %llu bytes (%llu allocated) in %llu files on the full 1 MiB file system, "
          "%llu bytes in %llu files on the next tier", what, (unsigned long long)s0,
          (unsigned long long)a0, (unsigned long long)n0, (unsigned long long)s1,
          (unsigned long long)n1);
    TASSERT(s0 > 0, "%s: nothing was stored on the small file system %s", what, small_dir);
    TASSERT(a0 <= SMALL, "%s: %llu bytes allocated on a 1 MiB file system?", what,
            (unsigned long long)a0);
    TASSERT(s1 > 0, "%s: nothing spilled to the next tier %s", what, tier1);
    TASSERT(s0 + s1 >= TOTAL, "%s: only %llu bytes stored for %llu bytes of random data", what,
            (unsigned long long)(s0 + s1), (unsigned long long)TOTAL);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_enospc needs an hcomp: target");
    static const char *const caps[2] = {"unlimited", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    /* format 2: no fold at the last close, so no reclaim removes the segments the durable
     * sync emptied off the small tmpfs, which check_placement counts */
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "65536",
                           "hcomp_format", "2", NULL);
    uint8_t *all = t_malloc(TOTAL);
    t_fill_random(all, TOTAL, 777);

    /* ---- 1. the file's segment directory on the first tier is a full file system */
    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TCHK(MPI_File_close(&fh));
    char segdir[4300], id[17];
    file_id16(t.path, id);
    snprintf(segdir, sizeof segdir, "%s/%s.%s.hcd", tt.dir[0], strrchr(t.path, '/') + 1, id);
    t_mkdir(&t, segdir);
    int err = t_mount_tmpfs(&t, segdir, "1m");
    if (err) {
        t_rmdir(&t, segdir);
        t_delete(&t, t.target, info);
        t_remove_tiers(&t, &tt);
        t_skip(&t, t_fmt("cannot mount a tmpfs (%s); the test needs root (CAP_SYS_ADMIN)",
                         strerror(err)));
    }
    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    write_all(&t, fh, all);
    verify_all(&t, fh, all, "segment directory full, same open");
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify_all(&t, fh, all, "segment directory full, after reopening");
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_placement(&t, segdir, tt.dir[1], "segment directory full");
    /* hcomp cannot remove a mount point: unmount (the pieces on it go with it), then
     * delete the file */
    t_umount(&t, segdir);
    t_delete(&t, t.target, info);

    /* ---- 2. the first tier is a 1 MiB file system */
    err = t_mount_tmpfs(&t, tt.dir[0], "1m");
    if (err)
        TFAIL("mount a tmpfs on %s: %s (it worked a moment ago)", tt.dir[0], strerror(err));
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    write_all(&t, fh, all);
    verify_all(&t, fh, all, "first tier full, same open");
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify_all(&t, fh, all, "first tier full, after reopening");
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_placement(&t, tt.dir[0], tt.dir[1], "first tier full");

    /* a second file while the first tier is full: all of it goes to the next tier */
    const char *second = t_name(&t, ".second");
    uint8_t *two = t_malloc(TOTAL);
    t_fill_random(two, TOTAL, 778);
    fh = t_open(&t, second, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    write_all(&t, fh, two);
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, second, MPI_MODE_RDONLY, info);
    verify_all(&t, fh, two, "second file, first tier full");
    TCHK(MPI_File_close(&fh));
    /* and the first file is still intact */
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    verify_all(&t, fh, all, "first file, after the second was written");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, second, info);
    t_delete(&t, t.target, info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t.rank == 0)
        t_expect_empty_dir(tt.dir[0], "the small tier after deleting both files");
    t_umount(&t, tt.dir[0]);
    t_remove_tiers(&t, &tt);
    MPI_Info_free(&info);
    free(all), free(two);
    return t_finish(&t);
}
