/*
 * Open: the options come from the hcomp_* keys that SetInfo validated into
 * fd->info, so a re-open (ROMIO opens twice when it creates) sees the same ones. The
 * first of those two, ROMIO's create step, only creates the file (hcomp_file_create;
 * ad_hcomp_opencoll.c says why and how it is told apart).
 */

#include "ad_hcomp.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static hcomp_options *options_from_info(MPI_Info info)
{
    hcomp_options *opts = hcomp_options_new();
    if (opts == NULL || info == MPI_INFO_NULL)
        return opts;
    char value[MPI_MAX_INFO_VAL + 1];
    for (size_t i = 0; i < hcomp_options_count(); i++) {
        int flag = 0;
        const char *key = hcomp_options_key(i);
        ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        if (flag) {
            hcomp_error err;
            /* already validated by SetInfo; a failure here leaves the default */
            (void) hcomp_options_set(opts, key, value, &err);
        }
    }
    return opts;
}

unsigned long ADIOI_HCOMP_open_calls;

void ADIOI_HCOMP_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_OPEN";
    ADIOI_HCOMP_open_calls++;
    int flags = 0, nprocs = 1;
    mode_t perm;
    hcomp_error err;

    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (fd->info != MPI_INFO_NULL)
        ADIOI_Info_get(fd->info, "file_perm", MPI_MAX_INFO_VAL, value, &flag);
    if (fd->perm == ADIO_PERM_NULL && flag) {
        perm = (mode_t) strtol(value, NULL, 8);    /* validated by SetInfo; open applies the umask */
    } else if (fd->perm == ADIO_PERM_NULL) {
        mode_t old_mask = umask(022);
        umask(old_mask);
        perm = old_mask ^ 0666;
    } else
        perm = (mode_t) fd->perm;

    if (fd->access_mode & ADIO_CREATE)
        flags |= HCOMP_O_CREAT;
    if (fd->access_mode & ADIO_EXCL)
        flags |= HCOMP_O_EXCL;
    if (fd->access_mode & ADIO_RDONLY)
        flags |= HCOMP_O_RDONLY;
    if (fd->access_mode & ADIO_WRONLY)
        flags |= HCOMP_O_WRONLY;
    if (fd->access_mode & ADIO_RDWR)
        flags |= HCOMP_O_RDWR;
    MPI_Comm_size(fd->comm, &nprocs);

    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st != NULL && st->has_hint_error) {
        /* kept (not freed): ADIOI_GEN_OpenColl retries a failed Open once */
        *error_code = ADIOI_HCOMP_Error(myname, &st->hint_error);
        fd->fd_sys = -1;
        return;
    }
    if (st == NULL)
        st = ADIOI_Calloc(1, sizeof(*st));
    st->coll_dtype = -1;
    hcomp_options *opts = options_from_info(fd->info);
    if (opts == NULL) {
        err.code = HCOMP_E_NOMEM;
        snprintf(err.msg, sizeof(err.msg), "%s: out of memory", fd->filename);
        ADIOI_Free(st);
        fd->fs_ptr = NULL;
        *error_code = ADIOI_HCOMP_Error(myname, &err);
        return;
    }
    /* compression threads: the cores shared by the ranks of this node; and the storage's
     * bandwidth shared by them too (no collective here: with deferred open only
     * aggregators open) */
    char shown[32];
    const char *local = getenv("MPI_LOCALNRANKS");
    long nlocal = local ? atol(local) : 1;
    if (nlocal < 1)
        nlocal = 1;
    if (opts != NULL && hcomp_options_get(opts, "hcomp_threads", shown, sizeof(shown)) == HCOMP_OK
        && strcmp(shown, "0") == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        char threads[32];
        snprintf(threads, sizeof(threads), "%ld", cores > nlocal ? cores / nlocal : 1);
        (void) hcomp_options_set(opts, "hcomp_threads", threads, &err);
    }
    if (opts != NULL && hcomp_options_get(opts, "hcomp_node_writers", shown, sizeof(shown)) == HCOMP_OK
        && strcmp(shown, "0") == 0) {
        char writers[32];
        snprintf(writers, sizeof(writers), "%ld", nlocal);
        (void) hcomp_options_set(opts, "hcomp_node_writers", writers, &err);
        if (fd->info != MPI_INFO_NULL)      /* MPI_File_get_info shows the value in use */
            ADIOI_Info_set(fd->info, "hcomp_node_writers", writers);
    }
    /* ROMIO's create step only creates the file: it is closed at once, before every
     * process opens it */
    int create_only = st->create_step && (flags & HCOMP_O_CREAT);
    st->create_step = 0;
    /* in a collective open, start from the state one process replayed for all; without
     * one, a reader replays the log when it first reads (a collective read's processes
     * that aggregate nothing never do) */
    if ((flags & HCOMP_O_RDONLY) && st->replay_state == NULL)
        flags |= HCOMP_O_LAZY;
    if (st->several_nodes && !(flags & HCOMP_O_RDONLY))
        flags |= HCOMP_O_NODES;
    int rc = create_only ? hcomp_file_create(fd->filename, flags, perm, opts, &err)
        : st->replay_state != NULL
        ? hcomp_file_open_with_state(fd->filename, flags, perm, nprocs, opts, st->replay_state,
                                     st->replay_len, &st->file, &err)
        : hcomp_file_open(fd->filename, flags, perm, nprocs, opts, &st->file, &err);
    hcomp_options_free(opts);
    if (rc != HCOMP_OK) {
        /* ADIOI_GEN_OpenColl tries a failed Open once more: the note that the job spans
         * several nodes must be there for it (kept, as a hint error is) */
        if (st->several_nodes) {
            st->file = NULL;
            fd->fs_ptr = st;
        } else {
            ADIOI_Free(st);
            fd->fs_ptr = NULL;
        }
        fd->fd_sys = -1;
        *error_code = ADIOI_HCOMP_Error(myname, &err);
        return;
    }
    fd->fs_ptr = st;
    fd->fd_direct = -1;
    if (create_only) {
        fd->fd_sys = -1;
        *error_code = MPI_SUCCESS;
        return;
    }
    int rank = 0;
    MPI_Comm_rank(fd->comm, &rank);
    hcomp_file_set_model_owner(st->file, rank == 0);
    /* ROMIO's byte-range locks (atomic mode, data sieving) go on the mapping file. */
    fd->fd_sys = hcomp_file_fd(st->file);

    if (fd->access_mode & ADIO_APPEND) {
        uint64_t size = 0;
        if (hcomp_file_size(st->file, &size, &err) != HCOMP_OK) {
            *error_code = ADIOI_HCOMP_Error(myname, &err);
            return;
        }
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) size;
    }
    *error_code = MPI_SUCCESS;
}
