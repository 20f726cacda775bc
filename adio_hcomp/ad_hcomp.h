/*
 * hcomp: compressed, tier-aware storage behind the "hcomp:" prefix.
 * The ROMIO glue only: all logic lives in libhcomp (hcomp.h).
 */
#ifndef AD_HCOMP_H_INCLUDED
#define AD_HCOMP_H_INCLUDED

#include "adio.h"
#include <hcomp.h>
#include <hcomp_driver.h>     /* the calls only the driver makes (not a stable API) */

/* Per-open state kept in fd->fs_ptr. ROMIO's ADIO_Open ignores what SetInfo
 * returns, so a hint rejected before the file is open is kept here and Open fails
 * with it. */
typedef struct ADIOI_HCOMP_State {
    hcomp_file *file;
    int coll_dtype;             /* element type of the collective/strided call in progress */
    int in_coll_read;           /* inside ADIOI_HCOMP_ReadStridedColl */
    int coll_read_error;        /* the first read error there (an MPI error code) */
    int in_coll_write;          /* inside ADIOI_HCOMP_WriteStridedColl */
    int coll_write_class;       /* the MPI error class of this process's first failed
                                 * write there (0: none) */
    int has_hint_error;
    hcomp_error hint_error;
    const void *replay_state;   /* during a collective open: the log's replayed state,
                                 * broadcast by one process (ad_hcomp_opencoll.c) */
    size_t replay_len;
    int create_step;            /* inside ADIOI_GEN_OpenColl: an Open with ADIO_CREATE is
                                 * its create step, closed at once (ad_hcomp_opencoll.c) */
    int several_nodes;          /* the open's communicator spans several nodes (a writable
                                 * open of a format-1 or -2 file is refused: HCOMP_O_NODES) */
} ADIOI_HCOMP_State;

/* The info key MPI_File_get_info reports the kind of file of a handle with: "hcomp",
 * or "plain" for an existing file that is not an hcomp file, passed through as ufs:
 * (ad_hcomp_opencoll.c). Reported, not a hint: a value given at open or set_info is
 * ignored. */
#define ADIOI_HCOMP_KIND_KEY "hcomp_file_kind"

/* Write out this process's buffered small writes (hcomp_write_buffer) before a call that
 * another process could serve or observe: 0, or the hcomp error code with err filled. */
int ADIOI_HCOMP_Flush_buffered(ADIO_File fd, hcomp_error * err);

int ADIOI_HCOMP_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                        ADIO_Offset len);

void ADIOI_HCOMP_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_HCOMP_Open(ADIO_File fd, int *error_code);
/* Opens this process has run (ad_hcomp_open.c): OpenColl tells from it whether an error
 * came from the create step of another process */
extern unsigned long ADIOI_HCOMP_open_calls;
void ADIOI_HCOMP_Close(ADIO_File fd, int *error_code);
void ADIOI_HCOMP_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_HCOMP_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_HCOMP_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_HCOMP_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_HCOMP_Flush(ADIO_File fd, int *error_code);
void ADIOI_HCOMP_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_HCOMP_Delete(const char *filename, int *error_code);

void ADIOI_HCOMP_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                 int *error_code);
void ADIOI_HCOMP_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                                  int *error_code);
void ADIOI_HCOMP_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Request * request, int *error_code);
void ADIOI_HCOMP_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type,
                                  ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_HCOMP_WriteStrided(ADIO_File fd, const void *buf, int count,
                              MPI_Datatype datatype, int file_ptr_type,
                              ADIO_Offset offset, ADIO_Status * status, int *error_code);
/* The hcomp element type (enum hcomp_dtype, -1: unknown) of an MPI datatype. */
int ADIOI_HCOMP_Dtype(MPI_Datatype t);
/* Tell libhcomp the element type of the write about to be made. */
void ADIOI_HCOMP_Announce(ADIO_File fd, hcomp_file * f, MPI_Datatype datatype);

/* Turn a libhcomp error into an MPI error code whose MPI_Error_string carries
 * the library's message (which names the file and the cause). */
int ADIOI_HCOMP_Error(const char *myname, const hcomp_error * err);
/* The MPI error class of a libhcomp error code. */
int ADIOI_HCOMP_Error_class(int code);
/* The open file, or NULL with *error_code set (deferred open, closed file). */
hcomp_file *ADIOI_HCOMP_File(ADIO_File fd, const char *myname, int *error_code);

#endif /* AD_HCOMP_H_INCLUDED */
