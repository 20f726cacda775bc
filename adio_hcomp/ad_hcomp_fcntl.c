/*
 * Fcntl: the size is the logical size (other openers' writes included);
 * preallocation grows the logical size without storing zeros (holes read as
 * zeros); atomic mode works through ROMIO's locks on the mapping file, and writes out
 * the small writes this process gathered.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_FCNTL";
    hcomp_error err;
    uint64_t size;
    hcomp_file *f;

    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            if ((f = ADIOI_HCOMP_File(fd, myname, error_code)) == NULL)
                return;
            if (hcomp_file_size(f, &size, &err) != HCOMP_OK) {
                *error_code = ADIOI_HCOMP_Error(myname, &err);
                return;
            }
            fcntl_struct->fsize = (ADIO_Offset) size;
            *error_code = MPI_SUCCESS;
            break;

        case ADIO_FCNTL_SET_DISKSPACE:
            if ((f = ADIOI_HCOMP_File(fd, myname, error_code)) == NULL)
                return;
            if (fcntl_struct->diskspace < 0) {
                *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                                   __LINE__, MPI_ERR_ARG, "**iobadoffset", 0);
                return;
            }
            if (hcomp_file_extend(f, (uint64_t) fcntl_struct->diskspace, &err) != HCOMP_OK) {
                *error_code = ADIOI_HCOMP_Error(myname, &err);
                return;
            }
            *error_code = MPI_SUCCESS;
            break;

        case ADIO_FCNTL_SET_ATOMICITY:
            fd->atomicity = (fcntl_struct->atomicity == 0) ? 0 : 1;
            *error_code = MPI_SUCCESS;
            if ((f = ADIOI_HCOMP_File(fd, myname, error_code)) == NULL)
                return;
            hcomp_file_set_atomic(f, fd->atomicity);
            /* atomic mode: every write is seen at once, the gathered ones too */
            if (fd->atomicity && ADIOI_HCOMP_Flush_buffered(fd, &err) != HCOMP_OK)
                *error_code = ADIOI_HCOMP_Error(myname, &err);
            break;

        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d", flag);
    }
}
