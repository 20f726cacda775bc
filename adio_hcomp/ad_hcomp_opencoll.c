/*
 * OpenColl: plain files pass through. An existing regular file that is not an hcomp
 * file (hcomp_file_kind) is read and written exactly as ufs: would, and never
 * converted; `hcomp import` converts explicitly. This is what makes
 * ROMIO_FSTYPE_FORCE=hcomp: usable on programs that also open their inputs.
 *
 * The decision is made once per open, here, before any Open: the first aggregator
 * (the process ROMIO's create step uses) looks at the file and broadcasts the answer
 * over fd->comm, so every process agrees, those that never call Open (deferred open)
 * included. For a plain file the handle becomes a ufs: handle (fd->fns =
 * &ADIO_UFS_operations, fd->file_system = ADIO_UFS) before ADIOI_GEN_OpenColl opens
 * it, so every later call takes ufs:'s own path: reads, writes, two-phase collective
 * I/O, Fcntl (sizes, preallocate, atomic mode), Resize, Flush, byte-range locks, the
 * shared-file-pointer file (ADIO_Get_shared_fp opens it with fd->fns and
 * fd->file_system), deferred opens, Close and the delete of MPI_MODE_DELETE_ON_CLOSE
 * (ADIO_Delete goes through fd->fns). Nothing of hcomp stays on the handle: fd->fs_ptr
 * is freed (SetInfo keeps state there only to report a bad hint), the hcomp_* hints,
 * which do not apply to it, leave fd->info, romio_filesystem_type names UFS, and the
 * key hcomp_file_kind says "plain". (The alternative, every hcomp operation testing a
 * flag and calling the ufs: function, would spread the same decision over every file
 * of the driver, and miss the places where ROMIO calls fd->fns itself.)
 *
 * Which files: only regular files pass through. A missing file is created as an hcomp
 * file (ROMIO creates it in its first Open, after this decision), as before; a
 * directory, device or FIFO keeps hcomp's error (MPI_ERR_IO). A file hcomp creates is
 * never empty, not even for a moment (its mapping file is linked into place with its
 * header), so an empty file was made by a plain tool: it is plain like any existing
 * non-hcomp file, also when opened with MPI_MODE_CREATE (which must not turn an
 * existing file into another kind). A mapping file damaged in its first bytes is
 * hcomp to hcomp_file_kind, so its open fails as before, never reads as plain bytes.
 * If the kind cannot be told (no permission to read the file, say), the open takes
 * hcomp's path, which reports the cause. A bad hcomp_* hint fails the open whatever
 * the file is.
 */

#include "ad_hcomp.h"
#include <string.h>

#ifdef ROMIO_UFS
/* Turn the handle into a ufs: handle for a plain file (before any Open). */
static void pass_through(ADIO_File fd, int rank, int root)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0, stats = 0;

    if (fd->info != MPI_INFO_NULL) {
        ADIOI_Info_get(fd->info, "hcomp_stats", MPI_MAX_INFO_VAL, value, &flag);
        stats = flag && strcmp(value, "1") == 0;
        for (size_t i = 0; i < hcomp_options_count(); i++) {
            ADIOI_Info_get(fd->info, hcomp_options_key(i), MPI_MAX_INFO_VAL, value, &flag);
            if (flag)
                ADIOI_Info_delete(fd->info, hcomp_options_key(i));
        }
        ADIOI_Info_set(fd->info, "romio_filesystem_type", ADIO_UFS_operations.fsname);
        ADIOI_Info_set(fd->info, ADIOI_HCOMP_KIND_KEY, "plain");
    }
    if (fd->fs_ptr != NULL) {
        ADIOI_Free(fd->fs_ptr);
        fd->fs_ptr = NULL;
    }
    fd->fns = &ADIO_UFS_operations;
    fd->file_system = ADIO_UFS;
    /* the hcomp_stats report (printed at close for an hcomp file) says what happened */
    if (stats && rank == root)
        fprintf(stderr, "hcomp stats for %s (plain file): not an hcomp file, passed through "
                "unchanged as ufs: would; nothing compressed\n", fd->filename);
}
#endif

void ADIOI_HCOMP_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
#ifdef ROMIO_UFS
    int kind = -1;
    int root = fd->hints->ranklist[0];
    if (rank == root) {
        hcomp_error err;
        if (hcomp_file_kind(fd->filename, &kind, &err) != HCOMP_OK)
            kind = -1;          /* cannot tell: hcomp's open reports the cause */
    }
    MPI_Bcast(&kind, 1, MPI_INT, root, fd->comm);
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (kind == HCOMP_FILE_KIND_PLAIN && !(st != NULL && st->has_hint_error)) {
        pass_through(fd, rank, root);
        (*(fd->fns->ADIOI_xxx_OpenColl)) (fd, rank, access_mode, error_code);
        return;
    }
#endif
    if (fd->info != MPI_INFO_NULL)
        ADIOI_Info_set(fd->info, ADIOI_HCOMP_KIND_KEY, "hcomp");
    ADIOI_GEN_OpenColl(fd, rank, access_mode, error_code);
}
