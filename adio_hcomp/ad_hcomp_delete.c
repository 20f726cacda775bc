/*
 * Delete: every piece on every tier, then the mapping file. A plain file (an existing
 * regular file that is not an hcomp file: hcomp_file_kind) is deleted as ufs: deletes
 * it, as an open through hcomp: passes it through (ad_hcomp_opencoll.c); anything
 * else that is not an hcomp file (a directory, a device, a damaged mapping file) is
 * left alone and reported.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_DELETE";
    hcomp_error err;

#ifdef ROMIO_UFS
    int kind = -1;
    if (hcomp_file_kind(filename, &kind, &err) == HCOMP_OK && kind == HCOMP_FILE_KIND_PLAIN) {
        (*(ADIO_UFS_operations.ADIOI_xxx_Delete)) (filename, error_code);
        return;
    }
#endif
    if (hcomp_file_delete(filename, &err) != HCOMP_OK)
        *error_code = ADIOI_HCOMP_Error(myname, &err);
    else
        *error_code = MPI_SUCCESS;
}
