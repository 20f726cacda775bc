/*
 * Resize (MPI_File_set_size, collective): the first aggregator records the new
 * size; every process returns the same result, with the same message.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_RESIZE";
    hcomp_error err;
    int rank;

    err.code = HCOMP_OK;
    err.msg[0] = '\0';
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0]) {
        hcomp_file *f = ADIOI_HCOMP_File(fd, myname, error_code);
        if (f == NULL) {
            err.code = HCOMP_E_IO;
            snprintf(err.msg, sizeof(err.msg), "%s: not open on the first aggregator",
                     fd->filename);
        } else if (size < 0) {
            err.code = HCOMP_E_INVAL;
            snprintf(err.msg, sizeof(err.msg), "%s: negative size %lld", fd->filename,
                     (long long) size);
        } else
            (void) hcomp_file_truncate(f, (uint64_t) size, &err);
    }
    MPI_Bcast(&err, (int) sizeof(err), MPI_BYTE, fd->hints->ranklist[0], fd->comm);
    /* what every process writes next comes after the new size (format 3's writer logs) */
    if (err.code == HCOMP_OK) {
        hcomp_file *f = ADIOI_HCOMP_File(fd, myname, error_code);
        if (f != NULL)
            (void) hcomp_file_order(f, &err);
    }
    *error_code = (err.code == HCOMP_OK) ? MPI_SUCCESS : ADIOI_HCOMP_Error(myname, &err);
}
