/*
 * WriteContig: one contiguous write is one task for libhcomp. At a two-phase
 * aggregator this is the collective buffer (cb_buffer_size, 16 MiB by default).
 * An independent write outside atomic mode may be gathered with other small writes
 * (hcomp_file_pwrite_buffered, hint hcomp_write_buffer): MPI's non-atomic mode lets other
 * processes see it only after sync-barrier-sync or close/open, and every call that could
 * show it to anyone (a read of this process, a collective call, sync, close, set_size,
 * atomic mode, the release of any ROMIO lock: data sieving's read-modify-write, the
 * shared file pointer's file) writes it out first. Inside collective writes (other
 * processes' data), and once the handle has used its shared file pointer, writes are
 * immediate.
 */

#include "ad_hcomp.h"

void ADIOI_HCOMP_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_WRITECONTIG";
    MPI_Count datatype_size;
    hcomp_error err;

    hcomp_file *f = ADIOI_HCOMP_File(fd, myname, error_code);
    if (f == NULL)
        return;
    MPI_Type_size_x(datatype, &datatype_size);
    ADIO_Offset len = (ADIO_Offset) datatype_size * (ADIO_Offset) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;

    ADIOI_HCOMP_Announce(fd, f, datatype);
    ADIOI_HCOMP_State *st0 = (ADIOI_HCOMP_State *) fd->fs_ptr;
    /* not once the program uses the shared file pointer: its writes are read by others
     * through it (read_shared, read_ordered) with no sync between, as ROMIO's shared_fp
     * test does, and a write's offset comes from a lock this handle never takes */
    int gather = !fd->atomicity && st0 && !st0->in_coll_write &&
                 fd->shared_fp_fd == ADIO_FILE_NULL;
    int rc = len <= 0 ? HCOMP_OK
        : gather ? hcomp_file_pwrite_buffered(f, buf, (uint64_t) len, (uint64_t) offset, &err)
        : hcomp_file_pwrite(f, buf, (uint64_t) len, (uint64_t) offset, &err);
    if (rc != HCOMP_OK) {
        fd->fp_sys_posn = -1;
        *error_code = ADIOI_HCOMP_Error(myname, &err);
        ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
        if (st && st->in_coll_write && st->coll_write_class == 0)
            st->coll_write_class = ADIOI_HCOMP_Error_class(err.code);
        return;
    }
    fd->dirty_write = 1;
    fd->fp_sys_posn = offset + len;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += len;
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, len);
#endif
    *error_code = MPI_SUCCESS;
}
