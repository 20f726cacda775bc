/*
 * ReadContig: libhcomp reads and decompresses only the pieces that overlap the
 * range; holes read as zeros, and a read past the end returns fewer bytes.
 */

#include "ad_hcomp.h"
#include <string.h>

void ADIOI_HCOMP_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_READCONTIG";
    MPI_Count datatype_size;
    uint64_t nread = 0;
    hcomp_error err;

    hcomp_file *f = ADIOI_HCOMP_File(fd, myname, error_code);
    if (f == NULL)
        return;
    MPI_Type_size_x(datatype, &datatype_size);
    ADIO_Offset len = (ADIO_Offset) datatype_size * (ADIO_Offset) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;

    if (len > 0 && hcomp_file_pread(f, buf, (uint64_t) len, (uint64_t) offset, &nread, &err)
        != HCOMP_OK) {
        fd->fp_sys_posn = -1;
        *error_code = ADIOI_HCOMP_Error(myname, &err);
        ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
        if (st && st->in_coll_read) {
            /* ROMIO's two-phase read returns at once when an aggregator's read fails,
             * leaving the other processes in the data exchange for ever: keep the error
             * for ADIOI_HCOMP_ReadStridedColl, which makes every process fail, and let
             * the exchange go on (with zeros, which nobody may use) */
            if (st->coll_read_error == MPI_SUCCESS)
                st->coll_read_error = *error_code;
            memset(buf, 0, (size_t) len);
            nread = (uint64_t) len;
            *error_code = MPI_SUCCESS;
        } else
            return;
    }
    fd->fp_sys_posn = offset + (ADIO_Offset) nread;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) nread;
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) nread);
#endif
    *error_code = MPI_SUCCESS;
}
