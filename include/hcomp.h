/* libhcomp: compressed, tier-aware storage of a logical byte file.
 *
 * A logical file is a mapping file (at the path the user names) plus pieces
 * stored in segment files on one or more tiers. This library knows nothing of MPI:
 * the ROMIO driver (adio_hcomp/) calls it, and so can applications, tests and tools.
 * This header is what they call, and its ABI only grows (see "version"); the driver's
 * own plumbing is in hcomp_driver.h, which is not a stable interface.
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

/* ---- version ---------------------------------------------------------------
 * The macros are the version of this header (what a caller was built against);
 * hcomp_version_number() is that of the library it runs on. The ABI of this header
 * only grows within a major version (0.x: within a minor one): functions are added,
 * structs that may grow say so and are filled to the size the caller passes. */
#define HCOMP_VERSION_MAJOR 0
#define HCOMP_VERSION_MINOR 2
#define HCOMP_VERSION_PATCH 0
#define HCOMP_VERSION_STRING "0.2.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH: 0.2.0 is 200, for #if and comparisons */
#define HCOMP_VERSION_NUMBER \
    (HCOMP_VERSION_MAJOR * 10000 + HCOMP_VERSION_MINOR * 100 + HCOMP_VERSION_PATCH)

/* The library's HCOMP_VERSION_NUMBER (it may be newer than the header's). */
HCOMP_API int hcomp_version_number(void);

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
    HCOMP_O_LAZY = 32
    /* 64 is HCOMP_O_NODES of hcomp_driver.h, set by the ROMIO driver */
};

typedef struct hcomp_file hcomp_file;

/* Open or create the logical file at path. perm is the permission for a new
 * mapping file and its pieces (before umask). sharers is how many processes are
 * expected to write this file together: it sizes the chunks in which each reserves
 * capacity on a tier (capacity itself is shared by all writers through a ledger). */
HCOMP_API int hcomp_file_open(const char *path, int flags, mode_t perm, int sharers,
                    const hcomp_options *opts, hcomp_file **out, hcomp_error *err);
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
/* Change options after open (MPI_File_set_info): codec and piece size take effect
 * for later writes; the tier configuration cannot change while open. */
HCOMP_API int hcomp_file_set_options(hcomp_file *f, const hcomp_options *opts, hcomp_error *err);

/* The element type of the data written next (enum hcomp_dtype of hcomp_model.h;
 * -1: let the engine infer it). The driver sets it from the MPI datatype. */
HCOMP_API void hcomp_file_set_dtype(hcomp_file *f, int dtype);


/* Remove the logical file: every piece on every tier, then the mapping file. */
HCOMP_API int hcomp_file_delete(const char *path, hcomp_error *err);

/* Write-back after close (hint hcomp_drain=writeback): a close returns while this
 * process goes on moving the handle's pieces off node-local tiers. hcomp_writeback_wait
 * returns once every such move of this process is done (MPI_Finalize and the process's
 * exit wait too), with an error when one failed (its pieces then stay where they were,
 * readable on this node; `hcomp drain FILE` here moves them). hcomp_writeback_pending:
 * how many closed handles are still moving. */
HCOMP_API int hcomp_writeback_wait(hcomp_error *err);
HCOMP_API int hcomp_writeback_pending(void);

/* ---- statistics ------------------------------------------------------------ */

/* hcomp_stats grows at its end only (new counters, a larger capacity for new codecs),
 * and the library fills as many bytes of it as the caller's build knows: the caller
 * passes sizeof its struct (the hcomp_stat_path macro below does), the library writes
 * no byte past it, and a library older than the caller's header zeroes the part it
 * does not know and says so in st->size. So a program built against this header keeps
 * working on later libraries, however many codecs they add (up to
 * HCOMP_STATS_MAX_CODECS, which is far from the 256 ids a piece can name). */
#define HCOMP_STATS_MAX_TIERS 16
#define HCOMP_STATS_MAX_CODECS 64

/* The counters of the whole file, of each tier and of each codec: X(name, description),
 * all uint64_t, for printing them by name. Frozen with the struct's layout (a new counter
 * goes in a new list, at the struct's end). */
#define HCOMP_STATS_FILE_COUNTERS(X)                                            \
    X(logical_size, "the file's size")                                         \
    X(live_bytes, "logical bytes backed by pieces (not holes)")                \
    X(stored_bytes, "bytes of pieces on tiers, headers included")              \
    X(pieces, "live pieces")
#define HCOMP_STATS_PART_COUNTERS(X)                                            \
    X(raw_bytes, "logical bytes held there")                                   \
    X(stored_bytes, "bytes of pieces there, headers included")                 \
    X(pieces, "live pieces there")

#define HCOMP_STATS_FIELD_(name, desc) uint64_t name;
typedef struct hcomp_stats {
    size_t size;                /* set by the library: the bytes of this struct it filled
                                   (the caller's size, or its own if that is smaller:
                                   fields beyond it are zero) */
    HCOMP_STATS_FILE_COUNTERS(HCOMP_STATS_FIELD_)
    size_t ntiers;              /* tier[0 .. ntiers) are filled */
    struct {
        char name[64];
        char dir[512];
        HCOMP_STATS_PART_COUNTERS(HCOMP_STATS_FIELD_)
    } tier[HCOMP_STATS_MAX_TIERS];
    size_t ncodecs;             /* codec[id] for the ids 0 .. ncodecs-1 (enum hcomp_codec_id;
                                   names from hcomp_codec_by_id); the library's codec count,
                                   or the capacity if that is smaller */
    struct {
        HCOMP_STATS_PART_COUNTERS(HCOMP_STATS_FIELD_)
    } codec[HCOMP_STATS_MAX_CODECS];
    /* later versions append fields here */
} hcomp_stats;
#undef HCOMP_STATS_FIELD_

/* Statistics of the live data of the file at path (all writers, as on disk), written
 * to the first st_size bytes of st (at least sizeof(size_t), for st->size; less is
 * HCOMP_E_INVAL). Call it through the macro, which passes your struct's size. */
HCOMP_API int hcomp_stat_path_sized(const char *path, hcomp_stats *st, size_t st_size,
                                    hcomp_error *err);
#define hcomp_stat_path(path, st, err) hcomp_stat_path_sized((path), (st), sizeof *(st), (err))

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

#ifdef __cplusplus
}
#endif
#endif
