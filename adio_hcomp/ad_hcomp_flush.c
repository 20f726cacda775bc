/*
 * Flush (MPI_File_sync): what this process wrote to volatile (RAM) tiers moves to
 * one that outlives the node (hcomp_sync=durable), then the pieces are synced, then
 * the mapping file, so a map record never points at data that is not durable.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_FLUSH";
    hcomp_error err;

    *error_code = MPI_SUCCESS;
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st == NULL || st->file == NULL)
        return;                 /* deferred open: nothing written here */
    if (hcomp_file_sync(st->file, &err) != HCOMP_OK)
        *error_code = ADIOI_HCOMP_Error(myname, &err);
}
