/* Files opened on other communicators: one file per process on MPI_COMM_SELF
 * (written and read concurrently by all ranks), and one file per group of a
 * split communicator; each must hold exactly its own data.
 *
 *   t_fileperproc TARGET [CONFIG]      (files TARGET.rank<r> and TARGET.group<g>) */
#include "tcommon.h"

#define LEN (300 * KiB + 5)

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;
    uint8_t *w = t_malloc(LEN), *g = t_malloc(LEN);

    /* file per process */
    char name[4200], suffix[64];
    snprintf(suffix, sizeof suffix, ".rank%d", r);
    snprintf(name, sizeof name, "%s", t_name(&t, suffix));
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("open %s on MPI_COMM_SELF: %s", name, t_errstr(rc));
    t_fill(w, LEN, 0, 70 + (uint64_t)r);
    TCHK(MPI_File_write_at_all(fh, 0, w, LEN, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("reopen %s: %s", name, t_errstr(rc));
    TASSERT(t_get_size(fh) == (MPI_Offset)LEN, "%s: size %lld", name, (long long)t_get_size(fh));
    memset(g, 0, LEN);
    TCHK(MPI_File_read_at(fh, 0, g, LEN, MPI_BYTE, &st));
    TEXPECT_BYTES(g, w, LEN, 0, t_fmt("file per process %s", name));
    TCHK(MPI_File_close(&fh));
    TCHK(MPI_File_delete(name, info));

    /* file per group: ranks split into groups of two */
    MPI_Comm grp;
    int color = r / 2, gr, gn;
    MPI_Comm_split(MPI_COMM_WORLD, color, r, &grp);
    MPI_Comm_rank(grp, &gr);
    MPI_Comm_size(grp, &gn);
    snprintf(suffix, sizeof suffix, ".group%d", color);
    snprintf(name, sizeof name, "%s", t_name(&t, suffix));
    rc = MPI_File_open(grp, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("open %s on a split communicator: %s", name, t_errstr(rc));
    t_fill(w, LEN, (uint64_t)gr * LEN, 80 + (uint64_t)color);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)gr * LEN, w, LEN, MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(grp);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)((uint64_t)gn * LEN), "%s: size %lld, want %lld", name,
            (long long)t_get_size(fh), (long long)gn * LEN);
    int o = (gr + 1) % gn;
    t_fill(w, LEN, (uint64_t)o * LEN, 80 + (uint64_t)color);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)o * LEN, g, LEN, MPI_BYTE, &st));
    TEXPECT_BYTES(g, w, LEN, (uint64_t)o * LEN, t_fmt("group file %s", name));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(grp);
    if (gr == 0)
        TCHK(MPI_File_delete(name, info));
    MPI_Comm_free(&grp);

    MPI_Info_free(&info);
    free(w), free(g);
    return t_finish(&t);
}
