/* Collective I/O when the storage fails under one process: every rank must get an MPI
 * error, and none may hang. In ROMIO's two-phase I/O an aggregator reads or writes for
 * the others; when its hcomp call fails, the others must learn it too. hcomp targets
 * only.
 *
 *   t_collfail TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * One tier, pieces of 4 KiB, codec none; rank 0 writes 16 pieces; collective buffering
 * is forced (romio_cb_read/romio_cb_write=enable). A watchdog fails the test when a step
 * takes more than 30 s (a rank waits forever in the data exchange).
 *   1. a flipped payload byte in piece 5: MPI_File_read_at_all of the whole file by every
 *      rank, and MPI_File_read_all through a strided view (each rank every P-th KiB):
 *      MPI_ERR_IO on every rank
 *   2. the segment removed: the same reads fail with an error class on every rank
 *   3. a 256 KiB tier and 1 MiB written per rank with MPI_File_write_at_all, then with
 *      MPI_File_iwrite_at_all: MPI_ERR_NO_SPACE on every rank
 * (1 also with MPI_File_iread_at_all.) */
#include "tfault.h"

#include <signal.h>

#define PS 4096
#define NP 16

static const char *volatile step = "start";
static int my_rank;

static void watchdog(int sig)
{
    (void)sig;
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "FAIL t_collfail rank %d: %s: no answer after 30 s: a rank waits forever "
                     "(the collective did not fail on every rank)\n", my_rank, step);
    if (write(2, msg, (size_t)n) < 0) {
    }
    _exit(3);
}

static void arm(const char *what)
{
    step = what;
    alarm(30);
}

/* a collective read that must fail on every rank with class want (or, with want < 0,
 * any error class) */
static void coll_read_fails(const tctx *t, MPI_File fh, int strided, int want, const uint8_t *ref,
                            const char *what)
{
    uint8_t *b = t_malloc(NP * PS);
    MPI_Status st;
    int rc;
    arm(what);
    memset(b, 0xa5, NP * PS);
    if (strided) {
        /* rank r reads KiB r, r+P, r+2P, ... */
        MPI_Datatype v, vr;
        int nb = NP * PS / 1024 / t->nprocs;
        MPI_Type_vector(nb, 1024, 1024 * t->nprocs, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)NP * PS, &vr);
        MPI_Type_commit(&vr);
        TCHK(MPI_File_set_view(fh, (MPI_Offset)t->rank * 1024, MPI_BYTE, vr, "native",
                               MPI_INFO_NULL));
        rc = MPI_File_read_all(fh, b, nb * 1024, MPI_BYTE, &st);
        TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&vr);
        MPI_Type_free(&v);
    } else if (strided == 2) {
        /* the nonblocking form: the error comes from the start or from the wait */
        MPI_Request req;
        rc = MPI_File_iread_at_all(fh, 0, b, NP * PS, MPI_BYTE, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &st);
        if (rc == MPI_SUCCESS)
            TEXPECT_BYTES(b, ref, NP * PS, 0, t_fmt("%s: the read succeeded", what));
    } else {
        rc = MPI_File_read_at_all(fh, 0, b, NP * PS, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS)
            TEXPECT_BYTES(b, ref, NP * PS, 0, t_fmt("%s: the read succeeded", what));
    }
    alarm(0);
    int bad = rc == MPI_SUCCESS || (want >= 0 && t_err_class(rc) != want), nbad = 0;
    MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nbad)
        TFAIL("%s: %d rank(s) did not get %s (this rank: %s)", what, nbad,
              want >= 0 ? t_class_name(want) : "an error", rc ? t_errstr(rc) : "success");
    t_log(t, "%s: every rank got %s", what, t_class_name(t_err_class(rc)));
    free(b);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_collfail needs an hcomp: target");
    my_rank = t.rank;
    signal(SIGALRM, watchdog);
    static const char *const caps[1] = {"unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 1, caps);
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "4096", "hcomp_codec",
                           "none", "romio_cb_read", "enable", "romio_cb_write", "enable", NULL);
    static uint8_t ref[NP * PS];
    t_fill_random(ref, sizeof ref, 99);

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t.rank == 0) {
        MPI_Status st;
        TCHK(MPI_File_write_at(fh, 0, ref, NP * PS, MPI_BYTE, &st));
    }
    TCHK(MPI_File_close(&fh));
    static char seg[1][4096];
    int err = 0;
    if (t.rank == 0 && (t_find_files(tt.dir[0], ".seg", seg, 1) != 1 ||
                        t_flip_byte(seg[0], 5 * (PS + 16) + 16 + 7) != 0))
        err = 1;
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("cannot find or damage the segment");

    /* 1. a damaged piece */
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    coll_read_fails(&t, fh, 0, MPI_ERR_IO, ref, "read_at_all over a damaged piece");
    coll_read_fails(&t, fh, 1, MPI_ERR_IO, ref, "read_all (strided view) over a damaged piece");
    coll_read_fails(&t, fh, 2, MPI_ERR_IO, ref, "iread_at_all over a damaged piece");
    TCHK(MPI_File_close(&fh));

    /* 2. the segment gone */
    MPI_Barrier(MPI_COMM_WORLD);
    if (t.rank == 0)
        unlink(seg[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    coll_read_fails(&t, fh, 0, -1, ref, "read_at_all with the segment removed");
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);
    t_remove_tiers(&t, &tt);

    /* 3. every tier full during a collective write */
    static const char *const small[1] = {"256KiB"};
    t_make_tiers_tag(&t, &tt, "full", 1, small);
    MPI_Info_free(&info);
    info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_codec", "none", "romio_cb_write", "enable",
                  NULL);
    uint8_t *w = t_malloc(MiB);
    t_fill_random(w, MiB, 100 + (uint64_t)t.rank);
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    MPI_Status st;
    arm("write_at_all with every tier full");
    int rc = MPI_File_write_at_all(fh, (MPI_Offset)t.rank * MiB, w, (int)MiB, MPI_BYTE, &st);
    alarm(0);
    int bad = t_err_class(rc) != MPI_ERR_NO_SPACE, nbad = 0;
    MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nbad)
        TFAIL("write_at_all with every tier full: %d rank(s) did not get MPI_ERR_NO_SPACE "
              "(this rank: %s)", nbad, rc ? t_errstr(rc) : "success");
    t_log(&t, "write_at_all with every tier full: every rank got MPI_ERR_NO_SPACE");
    /* and the nonblocking form, further on in the file */
    MPI_Request req;
    arm("iwrite_at_all with every tier full");
    rc = MPI_File_iwrite_at_all(fh, (MPI_Offset)(t.nprocs + t.rank) * MiB, w, (int)MiB, MPI_BYTE,
                                &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, &st);
    alarm(0);
    bad = t_err_class(rc) != MPI_ERR_NO_SPACE;
    MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nbad)
        TFAIL("iwrite_at_all with every tier full: %d rank(s) did not get MPI_ERR_NO_SPACE "
              "(this rank: %s)", nbad, rc ? t_errstr(rc) : "success");
    t_log(&t, "iwrite_at_all with every tier full: every rank got MPI_ERR_NO_SPACE");
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);
    t_remove_tiers(&t, &tt);
    MPI_Info_free(&info);
    free(w);
    return t_finish(&t);
}
