/*
 * Flush (MPI_File_sync): the small writes this process gathered (hcomp_write_buffer)
 * are written out, what it wrote to volatile (RAM) tiers moves to one that outlives the
 * node (hcomp_sync=durable), then the pieces are synced, then the mapping file, so a map
 * record never points at data that is not durable.
 *
 * Also the other places where gathered writes are written out without being made
 * durable: SetLock, at the release of any of ROMIO's byte-range locks on the mapping
 * file (atomic mode, data sieving's read-modify-write, the shared file pointer's file),
 * since the next holder must see what was written under the lock; and
 * ADIOI_HCOMP_Flush_buffered for the collective and atomic-mode entry points.
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

int ADIOI_HCOMP_Flush_buffered(ADIO_File fd, hcomp_error * err)
{
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st == NULL || st->file == NULL)
        return HCOMP_OK;
    return hcomp_file_flush(st->file, err);
}

int ADIOI_HCOMP_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                        ADIO_Offset len)
{
    static char myname[] = "ADIOI_HCOMP_SETLOCK";
    hcomp_error err;
    int flushed = type == F_UNLCK ? ADIOI_HCOMP_Flush_buffered(fd, &err) : HCOMP_OK;
    /* same choice as ad_ufs */
#if defined(F_SETLKW64)
    int rc = ADIOI_GEN_SetLock(fd, cmd, type, offset, whence, len);
#else
    int rc = ADIOI_GEN_SetLock64(fd, cmd, type, offset, whence, len);
#endif
    if (flushed != HCOMP_OK && rc == MPI_SUCCESS)
        rc = ADIOI_HCOMP_Error(myname, &err);
    return rc;
}
