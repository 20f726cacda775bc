/*
 * Close: frees the per-open state (ROMIO may open again; see ad_hcomp_open.c), but
 * for the create step's close during a collective open with a shared replay.
 */

#include "ad_hcomp.h"

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
    if (st->file == NULL && st->replay_state != NULL)
        return;     /* the create step's: the open that follows starts from the state */
    ADIOI_Free(st);
    fd->fs_ptr = NULL;
    fd->fd_sys = -1;
}
