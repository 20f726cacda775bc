/*
 * Close: frees the per-open state (ROMIO may open again; see ad_hcomp_open.c), but
 * for the create step's close during a collective open with a shared replay.
 *
 * With hcomp_drain=writeback the close returns while libhcomp goes on moving the
 * handle's pieces off node-local tiers; MPI_Finalize must wait for that. MPI deletes the
 * attributes of MPI_COMM_SELF first thing in MPI_Finalize, newest first (MPI-4.0,
 * "Allowing User Functions at Process Termination"; ROMIO's own end-of-job hook is one,
 * set at the first open): the first close that
 * leaves a drain behind sets one whose delete callback waits.
 */

#include "ad_hcomp.h"
#include <stdio.h>

static int HCOMP_Finalize_wait(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) attr;
    (void) extra;
    hcomp_error err;
    if (hcomp_writeback_wait(&err) != HCOMP_OK)
        fprintf(stderr, "hcomp: at MPI_Finalize: %s\n", err.msg);
    return MPI_SUCCESS;
}

static void finalize_waits(void)
{
    static int set = 0;
    int keyval;
    if (set || hcomp_writeback_pending() == 0)
        return;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, HCOMP_Finalize_wait, &keyval, NULL) !=
        MPI_SUCCESS)
        return;     /* the process's exit still waits (libhcomp's atexit) */
    if (MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) == MPI_SUCCESS)
        set = 1;
}

void ADIOI_HCOMP_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_CLOSE";
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    hcomp_error err;

    *error_code = MPI_SUCCESS;
    if (st == NULL)
        return;
    if (st->file != NULL && hcomp_file_close(st->file, &err) != HCOMP_OK)
        *error_code = ADIOI_HCOMP_Error(myname, &err);
    if (st->file != NULL)
        finalize_waits();
    if (st->file == NULL && st->replay_state != NULL)
        return;     /* the create step's: the open that follows starts from the state */
    ADIOI_Free(st);
    fd->fs_ptr = NULL;
    fd->fd_sys = -1;
}
