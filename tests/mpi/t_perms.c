/* Permissions of what hcomp creates: the mapping file and every segment file on
 * every tier get the MPI reserved hint file_perm (minus the umask), or 0666
 * minus the umask without it. hcomp targets only (ROMIO's ufs ignores file_perm).
 *
 *   t_perms TARGET [CONFIG]     (CONFIG is ignored: the test makes its own) */
#include "tcommon.h"

static mode_t want_mode;
static char bad_file[4096];
static unsigned bad_mode;
static long nsegs;

static int check_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_F) {
        nsegs++;
        if ((sb->st_mode & 07777) != want_mode && !bad_file[0]) {
            snprintf(bad_file, sizeof bad_file, "%s", p);
            bad_mode = sb->st_mode & 07777;
        }
    }
    return 0;
}

static void run(const tctx *t, const ttiers *tt, const char *perm, mode_t want)
{
    /* 16 KiB pieces: some land on the small first tier, the rest on the second */
    MPI_Info info = perm ? t_info(t, "file_perm", perm, "hcomp_piece_size", "16384", NULL)
                         : t_info(t, "hcomp_piece_size", "16384", NULL);
    MPI_Status st;
    static uint8_t buf[192 * 1024]; /* more than the first tier holds */
    t_fill_random(buf, sizeof buf, (uint64_t)t->rank);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, info);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)t->rank * (MPI_Offset)sizeof buf, buf,
                               (int)sizeof buf, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        struct stat sb;
        const char *what = perm ? perm : "(no file_perm)";
        if (stat(t->path, &sb) != 0)
            TFAIL("mapping file %s missing: %s", t->path, strerror(errno));
        TASSERT((sb.st_mode & 07777) == want, "file_perm %s: mapping file has mode %04o, want %04o",
                what, (unsigned)(sb.st_mode & 07777), (unsigned)want);
        want_mode = want;
        bad_file[0] = 0;
        nsegs = 0;
        for (int i = 0; i < tt->n; i++) {
            long before = nsegs;
            if (nftw(tt->dir[i], check_cb, 16, FTW_PHYS) != 0)
                TFAIL("cannot walk %s", tt->dir[i]);
            TASSERT(nsegs > before, "file_perm %s: no segment files on tier %d (%s)", what, i,
                    tt->dir[i]);
        }
        if (bad_file[0])
            TFAIL("file_perm %s: segment file %s has mode %04o, want %04o", what, bad_file,
                  bad_mode, (unsigned)want);
        t_log(t, "file_perm %s: mapping file and %ld segment files have mode %04o", what, nsegs,
              (unsigned)want);
    }
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_perms needs an hcomp: target");
    static const char *const caps[2] = {"128KiB", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    t.config = tt.cfg;
    t_delete_quiet(&t, t.target, MPI_INFO_NULL);

    mode_t mask = umask(022);
    umask(mask);
    run(&t, &tt, NULL, 0666 & ~mask);
    run(&t, &tt, "0600", 0600 & ~mask);
    run(&t, &tt, "0640", 0640 & ~mask);

    t_remove_tiers(&t, &tt);
    return t_finish(&t);
}
