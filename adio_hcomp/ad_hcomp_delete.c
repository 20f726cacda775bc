/*
 * Delete: every piece on every tier, then the mapping file. A file that is not
 * an hcomp file is left alone and reported.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_DELETE";
    hcomp_error err;

    if (hcomp_file_delete(filename, &err) != HCOMP_OK)
        *error_code = ADIOI_HCOMP_Error(myname, &err);
    else
        *error_code = MPI_SUCCESS;
}
