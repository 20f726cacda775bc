/*
 * The hcomp ops table. Reads and writes of contiguous extents are ours; the strided,
 * collective and nonblocking paths are ROMIO's generic ones on top of them, which is
 * correct because every write is visible to every opener as soon as it returns
 * (the mapping file is an append-only log that readers refresh), exactly as on a
 * POSIX file system: ROMIO's locks (fcntl on the mapping file), data sieving and
 * two-phase read-modify-write keep their meaning. The exception, small independent
 * writes gathered in non-atomic mode (ad_hcomp_write.c), are written out before
 * anything could observe them: this process's reads, collective calls, sync, close,
 * atomic mode, and the release of any of ROMIO's locks (SetLock, ad_hcomp_flush.c). An existing file that is not an
 * hcomp file is handed to ROMIO's ufs: table at open (ad_hcomp_opencoll.c).
 */

#include "ad_hcomp.h"

struct ADIOI_Fns_struct ADIO_HCOMP_operations = {
    ADIOI_HCOMP_Open,           /* Open */
    ADIOI_HCOMP_OpenColl,       /* OpenColl: plain files become ufs: handles */
    ADIOI_HCOMP_ReadContig,     /* ReadContig */
    ADIOI_HCOMP_WriteContig,    /* WriteContig */
    ADIOI_HCOMP_ReadStridedColl,        /* ReadStridedColl */
    ADIOI_HCOMP_WriteStridedColl,       /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,   /* SeekIndividual */
    ADIOI_HCOMP_Fcntl,          /* Fcntl */
    ADIOI_HCOMP_SetInfo,        /* SetInfo */
    ADIOI_GEN_ReadStrided,      /* ReadStrided */
    ADIOI_HCOMP_WriteStrided,   /* WriteStrided */
    ADIOI_HCOMP_Close,          /* Close */
    /* fd_sys is the mapping file, not the data: never hand it to POSIX aio. */
    ADIOI_FAKE_IreadContig,     /* IreadContig */
    ADIOI_FAKE_IwriteContig,    /* IwriteContig */
    ADIOI_GEN_IODone,           /* ReadDone */
    ADIOI_GEN_IODone,           /* WriteDone */
    ADIOI_GEN_IOComplete,       /* ReadComplete */
    ADIOI_GEN_IOComplete,       /* WriteComplete */
    ADIOI_GEN_IreadStrided,     /* IreadStrided */
    ADIOI_GEN_IwriteStrided,    /* IwriteStrided */
    ADIOI_HCOMP_Flush,          /* Flush */
    ADIOI_HCOMP_Resize,         /* Resize */
    ADIOI_HCOMP_Delete,         /* Delete */
    ADIOI_GEN_Feature,          /* Features */
    "HCOMP: ROMIO driver for hcomp compressed multi-tier storage",
    ADIOI_HCOMP_IreadStridedColl,       /* IreadStridedColl */
    ADIOI_HCOMP_IwriteStridedColl,      /* IwriteStridedColl */
    ADIOI_HCOMP_SetLock         /* SetLock: ROMIO's, after buffered writes at an unlock */
};
