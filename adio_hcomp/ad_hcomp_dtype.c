/*
 * The collective and strided entry points. They announce the element type of an
 * access, from its MPI datatype, for the engine's input analyzer (it picks byte shuffle
 * and its models by type): at a two-phase aggregator ROMIO passes MPI_BYTE, so the type
 * seen at the entry of the collective call is kept in the state while it runs. And
 * they make a collective call fail on every process when it fails on one.
 */

#include "ad_hcomp.h"
#include <hcomp_model.h>
#include <stdlib.h>

static int named_dtype(MPI_Datatype t)
{
    int size = 0;
    if (t == MPI_DOUBLE)
        return HCOMP_DTYPE_DOUBLE;
    if (t == MPI_FLOAT)
        return HCOMP_DTYPE_FLOAT;
    if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR)
        return HCOMP_DTYPE_BYTES;
    if (t == MPI_INT || t == MPI_UNSIGNED || t == MPI_LONG || t == MPI_UNSIGNED_LONG ||
        t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_INT32_T ||
        t == MPI_UINT32_T || t == MPI_INT64_T || t == MPI_UINT64_T || t == MPI_OFFSET ||
        t == MPI_AINT) {
        MPI_Type_size(t, &size);
        return size == 4 ? HCOMP_DTYPE_INT32 : size == 8 ? HCOMP_DTYPE_INT64 : -1;
    }
    return -1;  /* MPI_BYTE and the rest: the analyzer infers */
}

int ADIOI_HCOMP_Dtype(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return named_dtype(t);
    if (nd <= 0 || nd > 64)
        return -1;
    int *ints = ADIOI_Malloc(sizeof(int) * (size_t) (ni > 0 ? ni : 1));
    MPI_Aint *addrs = ADIOI_Malloc(sizeof(MPI_Aint) * (size_t) (na > 0 ? na : 1));
    MPI_Datatype *types = ADIOI_Malloc(sizeof(MPI_Datatype) * (size_t) nd);
    MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
    int result = -2;    /* -2: nothing seen yet */
    for (int i = 0; i < nd; i++) {
        int d = ADIOI_HCOMP_Dtype(types[i]);
        result = (result == -2 || result == d) ? d : -1;    /* mixed types: infer */
        int tni, tna, tnd, tc;
        MPI_Type_get_envelope(types[i], &tni, &tna, &tnd, &tc);
        if (tc != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    ADIOI_Free(ints);
    ADIOI_Free(addrs);
    ADIOI_Free(types);
    return result == -2 ? -1 : result;
}

/* The type to announce for a contiguous write of this datatype. */
static int access_dtype(ADIO_File fd, MPI_Datatype datatype)
{
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (datatype != MPI_BYTE)
        return ADIOI_HCOMP_Dtype(datatype);
    if (st && st->coll_dtype >= 0)
        return st->coll_dtype;
    return fd->etype != MPI_BYTE ? ADIOI_HCOMP_Dtype(fd->etype) : -1;
}

void ADIOI_HCOMP_Announce(ADIO_File fd, hcomp_file * f, MPI_Datatype datatype)
{
    hcomp_file_set_dtype(f, access_dtype(fd, datatype));
}

static int by_start(const void *a, const void *b)
{
    ADIO_Offset x = *(const ADIO_Offset *) a, y = *(const ADIO_Offset *) b;
    return x < y ? -1 : x > y;
}

/* Whether a collective read is better read by each process on its own: ROMIO reads
 * collectively when the processes' ranges overlap taken in rank order (its "rudimentary
 * check for interleaving", ad_read_coll.c), and so also when they do not overlap but lie in
 * another order (IOR's -C: each rank reads its neighbour's block). Its aggregators then read
 * whole collective buffers (16 MiB to use 1 MiB of it there), which through hcomp means
 * checking and decoding all of it. So the ranges are taken in offset order here; when they
 * overlap in rank order but in offset order they do not, the processes read on their own,
 * as ROMIO reads ranges that do not overlap in rank order. Only under romio_cb_read=automatic
 * (and not with deferred open, where only aggregators have the file open). */
static int read_alone(ADIO_File fd, int count, MPI_Datatype datatype, int file_ptr_type,
                      ADIO_Offset offset)
{
    if (fd->hints->cb_read != ADIOI_HINT_AUTO || fd->hints->cb_pfr != ADIOI_HINT_DISABLE ||
        fd->hints->deferred_open || fd->hints->no_indep_rw)
        return 0;
    int nprocs, i, in_rank_order = 1, apart = 1;
    MPI_Comm_size(fd->comm, &nprocs);
    ADIO_Offset se[2], *all = ADIOI_Malloc(2 * (size_t) nprocs * sizeof(ADIO_Offset));
    /* the first and last bytes only (no list of every piece of the view, which
     * ADIOI_GEN_ReadStridedColl builds anyway if the read stays collective) */
    ADIOI_Calc_bounds(fd, count, datatype, file_ptr_type, offset, &se[0], &se[1]);
    MPI_Allgather(se, 2, ADIO_OFFSET, all, 2, ADIO_OFFSET, fd->comm);
    /* ROMIO's test (an empty range, whose end is before its start, overlaps nothing) */
    for (i = 1; i < nprocs; i++)
        if (all[2 * i] < all[2 * i - 1] && all[2 * i] <= all[2 * i + 1])
            in_rank_order = 0;
    if (!in_rank_order) {       /* the non-empty ranges by start: no range reaches the next */
        int n = 0;
        for (i = 0; i < nprocs; i++)
            if (all[2 * i] <= all[2 * i + 1]) {
                all[2 * n] = all[2 * i];
                all[2 * n + 1] = all[2 * i + 1];
                n++;
            }
        qsort(all, (size_t) n, 2 * sizeof(ADIO_Offset), by_start);
        for (i = 1; i < n && apart; i++)
            apart = all[2 * i] > all[2 * i - 1];
    }
    ADIOI_Free(all);
    return !in_rank_order && apart;
}

/* A collective read fails on every process when it fails on one (see ReadContig). */
void ADIOI_HCOMP_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                 int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_READSTRIDEDCOLL";
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    hcomp_error ferr;
    if (st) {
        st->in_coll_read = 1;
        st->coll_read_error = MPI_SUCCESS;
        /* the aggregators that read for this process must see its own earlier writes */
        if (ADIOI_HCOMP_Flush_buffered(fd, &ferr) != HCOMP_OK)
            st->coll_read_error = ADIOI_HCOMP_Error(myname, &ferr);
    }
    if (read_alone(fd, count, datatype, file_ptr_type, offset)) {
        /* what ADIOI_GEN_ReadStridedColl does for ranges apart in rank order */
        int buf_contig, file_contig;
        ADIOI_Datatype_iscontig(datatype, &buf_contig);
        ADIOI_Datatype_iscontig(fd->filetype, &file_contig);
        if (buf_contig && file_contig) {
            if (file_ptr_type == ADIO_EXPLICIT_OFFSET)
                ADIO_ReadContig(fd, buf, count, datatype, ADIO_EXPLICIT_OFFSET,
                                fd->disp + (ADIO_Offset) fd->etype_size * offset, status,
                                error_code);
            else
                ADIO_ReadContig(fd, buf, count, datatype, ADIO_INDIVIDUAL, 0, status,
                                error_code);
        } else
            ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
    } else
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
    if (st) {
        st->in_coll_read = 0;
        if (*error_code == MPI_SUCCESS)
            *error_code = st->coll_read_error;
        st->coll_read_error = MPI_SUCCESS;
    }
    int mine = *error_code != MPI_SUCCESS, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, fd->comm);
    if (any && !mine) {
        hcomp_error err;
        err.code = HCOMP_E_IO;
        snprintf(err.msg, sizeof(err.msg), "%s: the collective read failed on another process "
                 "(its error names the damaged or missing data); this process's data is not "
                 "valid", fd->filename);
        *error_code = ADIOI_HCOMP_Error(myname, &err);
    }
}

void ADIOI_HCOMP_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type,
                                  ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_WRITESTRIDEDCOLL";
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    hcomp_error ferr;
    int flush_error = MPI_SUCCESS;
    if (st) {
        st->coll_dtype = ADIOI_HCOMP_Dtype(datatype);
        st->in_coll_write = 1;
        st->coll_write_class = 0;
        /* this process's earlier small writes go first: the aggregators' writes of this
         * call come after them (and may overwrite them), and other processes' reads of
         * what the call wrote must not be overtaken by them later */
        if (ADIOI_HCOMP_Flush_buffered(fd, &ferr) != HCOMP_OK) {
            flush_error = ADIOI_HCOMP_Error(myname, &ferr);
            st->coll_write_class = ADIOI_HCOMP_Error_class(ferr.code);
        }
    }
    ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
    if (flush_error != MPI_SUCCESS && *error_code == MPI_SUCCESS)
        *error_code = flush_error;
    int mine = 0, any = 0;
    if (st) {
        st->coll_dtype = -1;
        st->in_coll_write = 0;
        mine = st->coll_write_class;
    }
    /* the aggregator whose write failed knows why (no space, no such tier, ...); ROMIO
     * tells the others only that something failed: give them the aggregator's class */
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, fd->comm);
    if (any != 0 && mine == 0)
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           any, "**hcomp", "**hcomp %s",
                                           "the collective write failed on another process "
                                           "(its error names the cause); what this process "
                                           "wrote is not all stored");
}

void ADIOI_HCOMP_WriteStrided(ADIO_File fd, const void *buf, int count,
                              MPI_Datatype datatype, int file_ptr_type,
                              ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    int outer = st ? st->coll_dtype : -1;
    if (st && outer < 0)
        st->coll_dtype = ADIOI_HCOMP_Dtype(datatype);
    ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    if (st)
        st->coll_dtype = outer;
}

/* Nonblocking collectives run as the blocking ones above, at once, and return a completed
 * request (as ROMIO's FAKE nonblocking calls do): ROMIO's own nonblocking two-phase would
 * leave the other processes waiting for ever when an aggregator's read fails, and could
 * not tell them why a write failed. */
static void complete(ADIO_File fd, MPI_Datatype datatype, ADIO_Status * status,
                     ADIO_Request * request, int *error_code)
{
    MPI_Offset nbytes = 0;
    if (*error_code == MPI_SUCCESS) {
        MPI_Count typesize;
        int n;
        MPI_Type_size_x(datatype, &typesize);
        MPI_Get_count(status, datatype, &n);
        nbytes = (MPI_Offset) n * typesize;
    }
    MPIO_Completed_request_create(&fd, nbytes, error_code, request);
}

void ADIOI_HCOMP_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                                  int *error_code)
{
    ADIO_Status status;
    ADIOI_HCOMP_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                error_code);
    complete(fd, datatype, &status, request, error_code);
}

void ADIOI_HCOMP_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Request * request, int *error_code)
{
    ADIO_Status status;
    ADIOI_HCOMP_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                 error_code);
    complete(fd, datatype, &status, request, error_code);
}
