/*
 * libhcomp errors as MPI error codes. The class tells the program what kind of
 * failure it was; the message (MPI_Error_string) names the file and the cause.
 */

#include "ad_hcomp.h"

int ADIOI_HCOMP_Error_class(int code)
{
    switch (code) {
        case HCOMP_E_INVAL:
            return MPI_ERR_INFO_VALUE;
        case HCOMP_E_NOENT:
            return MPI_ERR_NO_SUCH_FILE;
        case HCOMP_E_EXIST:
            return MPI_ERR_FILE_EXISTS;
        case HCOMP_E_ACCESS:
            return MPI_ERR_ACCESS;
        case HCOMP_E_NOSPC:
            return MPI_ERR_NO_SPACE;
        case HCOMP_E_NOMEM:
            return MPI_ERR_NO_MEM;
        case HCOMP_E_UNSUPPORTED:
            return MPI_ERR_UNSUPPORTED_OPERATION;
        case HCOMP_E_RDONLY:
            return MPI_ERR_READ_ONLY;
        case HCOMP_E_NAME:
            return MPI_ERR_BAD_FILE;
        case HCOMP_E_NOTHCOMP:
        case HCOMP_E_VERSION:
        case HCOMP_E_CORRUPT:
        case HCOMP_E_IO:
        default:
            return MPI_ERR_IO;
    }
}

int ADIOI_HCOMP_Error(const char *myname, const hcomp_error * err)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                ADIOI_HCOMP_Error_class(err->code), "**hcomp", "**hcomp %s", err->msg);
}

hcomp_file *ADIOI_HCOMP_File(ADIO_File fd, const char *myname, int *error_code)
{
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st == NULL || st->file == NULL) {
        hcomp_error err;
        err.code = HCOMP_E_IO;
        snprintf(err.msg, sizeof(err.msg), "%s: file is not open on this process", fd->filename);
        *error_code = ADIOI_HCOMP_Error(myname, &err);
        return NULL;
    }
    *error_code = MPI_SUCCESS;
    return st->file;
}
