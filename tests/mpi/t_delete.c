/* MPI_File_delete and MPI_MODE_DELETE_ON_CLOSE remove everything: the mapping
 * file and every piece on every tier.
 *
 *   t_delete TARGET [CONFIG]
 *
 * For hcomp targets the test ignores CONFIG and writes its own configuration
 * next to the target: two tier directories, the first one small (64 KiB) so that
 * the incompressible data lands on both. After each deletion both tier
 * directories must be empty and the mapping file gone. For ufs targets only the
 * disappearance of the file is checked. */
#include "tcommon.h"

#define LEN (300 * KiB) /* written in total, split over the ranks */

static ttiers tt;

static void write_data(MPI_File fh, const tctx *t, uint64_t seed)
{
    uint64_t a = (uint64_t)t->rank * LEN / t->nprocs, b = (uint64_t)(t->rank + 1) * LEN / t->nprocs;
    uint8_t *buf = t_malloc(b - a), *back = t_malloc(b - a);
    MPI_Status st;
    t_fill_random(buf, b - a, seed * 100 + (uint64_t)t->rank);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, buf, (int)(b - a), MPI_BYTE, &st));
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, back, (int)(b - a), MPI_BYTE, &st));
    TEXPECT_BYTES(back, buf, b - a, a, "read back before delete");
    free(buf), free(back);
}

/* the data really is on the tiers (so that "empty afterwards" means something) */
static void expect_stored(const tctx *t, const char *when)
{
    if (!t->is_hcomp || t->rank != 0)
        return;
    uint64_t n0, n1, s0 = t_du(tt.dir[0], &n0), s1 = t_du(tt.dir[1], &n1);
    TASSERT(s0 > 0 && s1 > 0, "%s: expected data on both tiers, have %llu bytes in %llu files "
            "on %s and %llu bytes in %llu files on %s", when, (unsigned long long)s0,
            (unsigned long long)n0, tt.dir[0], (unsigned long long)s1, (unsigned long long)n1,
            tt.dir[1]);
}

static void expect_gone(const tctx *t, const char *when)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_exists(t->path))
        TFAIL("%s: %s still exists", when, t->path);
    if (t->is_hcomp) {
        t_expect_empty_dir(tt.dir[0], when);
        t_expect_empty_dir(tt.dir[1], when);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    MPI_Status st;

    if (t.is_hcomp) {
        static const char *const caps[2] = {"64KiB", "unlimited"};
        t_make_tiers(&t, &tt, 2, caps);
        t.config = tt.cfg;
    }
    MPI_Info info = t_info(&t, NULL);

    /* 1. create, write, close, MPI_File_delete with the hints */
    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info);
    write_data(fh, &t, 1);
    TCHK(MPI_File_close(&fh));
    expect_stored(&t, "after write");
    t_delete(&t, t.target, info);
    expect_gone(&t, "after MPI_File_delete(name, info)");

    /* 2. the same with MPI_INFO_NULL: the file must know where its pieces are */
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info);
    write_data(fh, &t, 2);
    TCHK(MPI_File_close(&fh));
    expect_stored(&t, "after write");
    t_delete(&t, t.target, MPI_INFO_NULL);
    expect_gone(&t, "after MPI_File_delete(name, MPI_INFO_NULL)");

    /* 3. delete-on-close */
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info);
    write_data(fh, &t, 3);
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_stored(&t, "delete-on-close file before close");
    TCHK(MPI_File_close(&fh));
    expect_gone(&t, "after close with MPI_MODE_DELETE_ON_CLOSE");

    /* 4. deleting a missing file fails with MPI_ERR_NO_SUCH_FILE */
    if (t.rank == 0)
        TCHK_FAILS(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(t.target, info));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 5. the name is reusable and the new file starts empty */
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info);
    TASSERT(t_get_size(fh) == 0, "re-created file has size %lld", (long long)t_get_size(fh));
    uint8_t x[16];
    /* independent read: ROMIO's collective reads report the requested count */
    TCHK(MPI_File_read_at(fh, 0, x, 16, MPI_BYTE, &st));
    TASSERT(t_count(&st) == 0, "re-created file: read %d bytes at 0, want 0", t_count(&st));
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);
    expect_gone(&t, "after deleting the re-created file");

    MPI_Info_free(&info);
    if (t.is_hcomp)
        t_remove_tiers(&t, &tt);
    return t_finish(&t);
}
