/* libhcomp: compressed, tier-aware storage of a logical byte file.
 *
 * A logical file is a mapping file (at the path the user names) plus pieces
 * stored in segment files on one or more tiers. This library knows nothing of MPI:
 * the ROMIO driver (adio_hcomp/) calls it, and so can tests and tools.
 * Formats: docs/FORMAT.md. Hints and tier configuration: README.md. */
#ifndef HCOMP_H
#define HCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hcomp_error.h"
#include "hcomp_codec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCOMP_VERSION_STRING "0.1.0"

/* ---- options (the hcomp_* hints, and MPI's reserved access_style) --------- */

typedef struct hcomp_options hcomp_options;

HCOMP_API hcomp_options *hcomp_options_new(void);
HCOMP_API hcomp_options *hcomp_options_dup(const hcomp_options *opts);
HCOMP_API void hcomp_options_free(hcomp_options *opts);
/* Set one option by its hint name ("hcomp_codec", ...). Unknown hcomp_ keys and
 * bad values are HCOMP_E_INVAL with a message naming the key and the value. */
HCOMP_API int hcomp_options_set(hcomp_options *opts, const char *key, const char *value,
                      hcomp_error *err);
/* Current value of an option as text (defaults included). HCOMP_E_INVAL if unknown. */
HCOMP_API int hcomp_options_get(const hcomp_options *opts, const char *key, char *buf, size_t buflen);
/* The option names, for listing them in MPI_File_get_info: the hcomp_* hints and MPI's
 * access_style (whose values hcomp does not know are ignored, never refused). */
HCOMP_API size_t hcomp_options_count(void);
HCOMP_API const char *hcomp_options_key(size_t index);
HCOMP_API const char *hcomp_options_default(size_t index);
/* True if key is one of ours (starts with "hcomp_"). */
HCOMP_API int hcomp_options_is_hint(const char *key);

/* ---- files ---------------------------------------------------------------- */

enum hcomp_open_flags {
    HCOMP_O_RDONLY = 1,
    HCOMP_O_WRONLY = 2,
    HCOMP_O_RDWR = 4,
    HCOMP_O_CREAT = 8,
    HCOMP_O_EXCL = 16,
    /* read-only: the mapping log is replayed by the first call that needs it (a read, a
     * size, an export of the state) instead of by the open, so that a process that never
     * reads (a collective read's non-aggregators) never replays it; with a write mode it
     * changes nothing */
    HCOMP_O_LAZY = 32,
    /* the opener's job has processes on several nodes (the driver tells): a writable open
     * of a file of format version 1 or 2, whose one log every writer appends to, is refused
     * (such appends tear on many distributed file systems: docs/DEPLOY.md) */
    HCOMP_O_NODES = 64
};

typedef struct hcomp_file hcomp_file;

/* Open or create the logical file at path. perm is the permission for a new
 * mapping file and its pieces (before umask). sharers is how many processes are
 * expected to write this file together: it sizes the chunks in which each reserves
 * capacity on a tier (capacity itself is shared by all writers through a ledger). */
HCOMP_API int hcomp_file_open(const char *path, int flags, mode_t perm, int sharers,
                    const hcomp_options *opts, hcomp_file **out, hcomp_error *err);
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
/* Write len bytes at logical offset off: one task, split into pieces, stored, and
 * made visible to every other opener of the file before this returns. */
HCOMP_API int hcomp_file_pwrite(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                      hcomp_error *err);
/* The same, except that a write smaller than the piece size and than the hint
 * hcomp_write_buffer (default 4 MiB; 0: off) may be kept in this handle's write-behind
 * buffer and written out later, together with other small writes, as one task: when the
 * buffer fills, and before this handle's next hcomp_file_pwrite, read, truncate, extend,
 * set_options, sync or close, or hcomp_file_flush. Until then other openers do not see
 * it (MPI's non-atomic mode allows that; the ROMIO driver uses this for independent
 * writes outside atomic mode). An error of a buffered write is reported by the call
 * that writes it out. */
HCOMP_API int hcomp_file_pwrite_buffered(hcomp_file *f, const void *buf, uint64_t len,
                                         uint64_t off, hcomp_error *err);
/* Write out the buffered writes, so that other openers see them (not durably: that is
 * hcomp_file_sync). */
HCOMP_API int hcomp_file_flush(hcomp_file *f, hcomp_error *err);
/* Read up to len bytes at off. *nread is less than len only at end of file. Holes
 * read as zeros. Only the pieces overlapping the range are read and decompressed. */
HCOMP_API int hcomp_file_pread(hcomp_file *f, void *buf, uint64_t len, uint64_t off,
                     uint64_t *nread, hcomp_error *err);
/* Logical size, including writes by other openers and this handle's buffered ones. */
HCOMP_API int hcomp_file_size(hcomp_file *f, uint64_t *size, hcomp_error *err);
/* Set the logical size: data beyond it is dropped; growing adds a hole. */
HCOMP_API int hcomp_file_truncate(hcomp_file *f, uint64_t size, hcomp_error *err);
/* Grow the logical size to at least size (preallocate); never shrinks. */
HCOMP_API int hcomp_file_extend(hcomp_file *f, uint64_t size, hcomp_error *err);
/* Make everything written so far durable (pieces, then the map). */
HCOMP_API int hcomp_file_sync(hcomp_file *f, hcomp_error *err);
/* Close; frees f even on error. */
HCOMP_API int hcomp_file_close(hcomp_file *f, hcomp_error *err);
/* The mapping file's descriptor (for fcntl byte-range locks by the caller). */
HCOMP_API int hcomp_file_fd(const hcomp_file *f);
/* Change options after open (MPI_File_set_info): codec and piece size take effect
 * for later writes; the tier configuration cannot change while open. */
HCOMP_API int hcomp_file_set_options(hcomp_file *f, const hcomp_options *opts, hcomp_error *err);

/* The element type of the data written next (enum hcomp_dtype of hcomp_model.h;
 * -1: let the engine infer it). The driver sets it from the MPI datatype. */
HCOMP_API void hcomp_file_set_dtype(hcomp_file *f, int dtype);
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

/* Remove the logical file: every piece on every tier, then the mapping file. */
HCOMP_API int hcomp_file_delete(const char *path, hcomp_error *err);

/* ---- statistics ------------------------------------------------------------ */

#define HCOMP_STATS_MAX_TIERS 16

typedef struct hcomp_stats {
    uint64_t logical_size;      /* the file's size */
    uint64_t live_bytes;        /* logical bytes backed by pieces (not holes) */
    uint64_t stored_bytes;      /* bytes of pieces on tiers, headers included */
    uint64_t pieces;
    size_t ntiers;
    struct {
        char name[64];
        char dir[512];
        uint64_t raw_bytes;     /* logical bytes held there */
        uint64_t stored_bytes;
        uint64_t pieces;
    } tier[HCOMP_STATS_MAX_TIERS];
    struct {
        uint64_t raw_bytes;
        uint64_t stored_bytes;
        uint64_t pieces;
    } codec[HCOMP_CODEC_COUNT];
} hcomp_stats;

/* Statistics of the live data of the file at path (all writers, as on disk). */
HCOMP_API int hcomp_stat_path(const char *path, hcomp_stats *st, hcomp_error *err);

/* True if the file at path starts with the hcomp mapping-file magic. */
HCOMP_API int hcomp_is_hcomp_file(const char *path);

/* ---- what a path names --------------------------------------------------- */

enum hcomp_file_kinds {
    HCOMP_FILE_KIND_MISSING = 0,     /* no such file */
    HCOMP_FILE_KIND_HCOMP = 1,       /* an hcomp mapping file, also one damaged in its first
                                      * bytes (cut inside, or a damaged magic): opening it
                                      * fails and says why; it is never plain data */
    HCOMP_FILE_KIND_PLAIN = 2,       /* a regular file that is not an hcomp file (empty
                                      * files included) */
    HCOMP_FILE_KIND_NOT_REGULAR = 3  /* a directory, device, FIFO or socket */
};
/* Set *kind to what path names (symbolic links followed), reading at most its first
 * 64 bytes; the file is not changed. Fails (with *kind -1) only if the file cannot be
 * looked at: a path component that is no directory, no permission to read it, ... */
HCOMP_API int hcomp_file_kind(const char *path, int *kind, hcomp_error *err);
/* The same for a file already open for reading (reads its first 64 bytes with pread:
 * the descriptor's offset does not move). The message names no file: the caller's does. */
HCOMP_API int hcomp_file_kind_fd(int fd, int *kind, hcomp_error *err);
/* "missing", "hcomp", "plain", "not-regular" ("unknown" for other values). */
HCOMP_API const char *hcomp_file_kind_name(int kind);
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
