/* libhcomp's plumbing for hcomp's own programs: the ROMIO driver (adio_hcomp/), the
 * tools and the tests. NOT A STABLE INTERFACE: what is here changes with the driver,
 * from one release to the next, without a change of HCOMP_VERSION_MAJOR; applications
 * and other tools use hcomp.h alone.
 *
 * Installed all the same (beside hcomp.h), because the driver is not built here: MPICH
 * compiles adio_hcomp/ inside its ROMIO against the installed headers and links the
 * installed libhcomp, which exports these functions for it. A driver and a library of
 * different releases are not meant to meet: build MPICH again after installing a new
 * libhcomp (scripts/setup does). docs/ARCHITECTURE.md, "The public API". */
#ifndef HCOMP_DRIVER_H
#define HCOMP_DRIVER_H

#include <stddef.h>
#include "hcomp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* More of hcomp_file_open's flags (enum hcomp_open_flags) */
enum hcomp_driver_open_flags {
    /* the opener's job has processes on several nodes (the driver tells): a writable open
     * of a file of format version 1 or 2, whose one log every writer appends to, is refused
     * (such appends tear on many distributed file systems: docs/DEPLOY.md) */
    HCOMP_O_NODES = 64
};

/* The same, with the replayed state of the file's log exported by another opener
 * (hcomp_file_export_state): only what was appended since is replayed here, and what
 * the handle holds is what a replay of the whole log would give. A state that is not
 * this file's (another file, a log replaced since by a compaction) or is damaged is
 * ignored: the log is then replayed here. The ROMIO driver uses it so that a collective
 * open replays the log once instead of once per process. */
HCOMP_API int hcomp_file_open_with_state(const char *path, int flags, mode_t perm, int sharers,
                                         const hcomp_options *opts, const void *state,
                                         size_t state_len, hcomp_file **out, hcomp_error *err);

/* Create the file at path as hcomp_file_open with HCOMP_O_CREAT (and HCOMP_O_EXCL if
 * flags has it) would, after the same checks of the options, the tier configuration
 * and its directories (and of a seed the options name), and return without a handle:
 * an existing file is left as it is and checked by the open that follows. For ROMIO's
 * create step, where one process creates the file and closes it before every process
 * opens it: a full open there would load the cost model for nothing, and the other
 * processes wait for it. */
HCOMP_API int hcomp_file_create(const char *path, int flags, mode_t perm,
                                const hcomp_options *opts, hcomp_error *err);

/* The replayed state of f's log, brought up to date first: *len bytes at *state (free
 * them with free()), to pass to hcomp_file_open_with_state in another process of the same
 * job (a state is not a file format: only the same build of the library takes it). */
HCOMP_API int hcomp_file_export_state(hcomp_file *f, void **state, size_t *len, hcomp_error *err);

/* The mapping file's descriptor (for fcntl byte-range locks by the caller). */
HCOMP_API int hcomp_file_fd(const hcomp_file *f);

/* This opener writes what the cost predictor learnt back to the seed at close (one
 * opener per file should: the driver picks the first rank). */
HCOMP_API void hcomp_file_set_model_owner(hcomp_file *f, int owner);

/* MPI's atomic mode (MPI_File_set_atomicity): every write of this opener is ordered
 * after every write it can see and made visible to the others before it returns (the
 * driver holds ROMIO's byte-range lock around it); every read sees the newest records. */
HCOMP_API void hcomp_file_set_atomic(hcomp_file *f, int on);
/* After a collective step that changed the file on another process (MPI_File_set_size's
 * first aggregator): this opener's records so far are made visible, and its later ones
 * are ordered after everything it can now see (format version 3's writer logs). */
HCOMP_API int hcomp_file_order(hcomp_file *f, hcomp_error *err);

/* If path is an empty regular file (not a symbolic link) that no one holds open through
 * hcomp, give it a mapping-file header in place, so it is an empty hcomp file (owner and
 * mode kept), and set *adopted to 1; else change nothing and set it to 0. For opens that
 * write a file a library or a script has emptied (PnetCDF truncates before it creates):
 * one process, before the others open. */
HCOMP_API int hcomp_file_adopt_empty(const char *path, int *adopted, hcomp_error *err);
/* The same test, changing nothing: *adoptable is 1 if hcomp_file_adopt_empty would adopt
 * the file now. The first writable hcomp_file_open of an empty file writes the header
 * (one header however many open it at once), after its configuration and tiers are
 * checked: so an open that fails on them leaves the file as it was. */
HCOMP_API int hcomp_file_adoptable_empty(const char *path, int *adoptable, hcomp_error *err);

#ifdef __cplusplus
}
#endif
#endif
