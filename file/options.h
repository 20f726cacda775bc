/* The hcomp_* hints, declared once (X-macro) so names, defaults, parsing, listing and
 * the user documentation (docs/HINTS.md) never drift apart. */
#ifndef HCOMP_OPTIONS_H
#define HCOMP_OPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "hcomp.h"
#include "engine/engine.h"

#define HCOMP_PIECE_ALIGN 4096u
#define HCOMP_PIECE_SIZE_MAX (64u << 20)
#define HCOMP_BLOCK_AUTO (256u << 10)     /* "auto" block size but for archival */
#define HCOMP_BLOCK_AUTO_BS (64u << 10)    /* and for floating-point data bit-shuffled when
                                             reads weigh (hcomp_options_block_size_bs) */
#define HCOMP_BLOCK_AUTO_RANDOM (8u << 10) /* "auto" when access_style says random */
#define HCOMP_ACCESS_STYLE_MAX 1024        /* MPICH's MPI_MAX_INFO_VAL */

/* hcomp_drain: where node-local pieces go, and when */
enum hcomp_drain_mode {
    HCOMP_DRAIN_NEVER = 0,
    HCOMP_DRAIN_CLOSE = 1,          /* before the close returns */
    HCOMP_DRAIN_BACKGROUND = 2,     /* while idle, and the close waits for the rest */
    HCOMP_DRAIN_WRITEBACK = 3,      /* while idle, and after the close (file/writeback.c) */
};

/* MPI's reserved hint access_style (MPI-4.0 14.2.8), the values hcomp knows */
enum hcomp_access_style {
    HCOMP_ACCESS_READ_ONCE = 1 << 0,
    HCOMP_ACCESS_WRITE_ONCE = 1 << 1,
    HCOMP_ACCESS_READ_MOSTLY = 1 << 2,
    HCOMP_ACCESS_WRITE_MOSTLY = 1 << 3,
    HCOMP_ACCESS_SEQUENTIAL = 1 << 4,
    HCOMP_ACCESS_REVERSE_SEQUENTIAL = 1 << 5,
    HCOMP_ACCESS_RANDOM = 1 << 6,
};

/*  X(hint name, default, parser, formatter, summary, text). All are hcomp_* keys but
 *  MPI's reserved access_style, which is shown as the user gave it and never refused (a
 *  program written for another MPI must run: values hcomp does not know are ignored).
 *  summary (one line) and text (Markdown) are the user's documentation: scripts/gen-hints
 *  writes docs/HINTS.md from them, and scripts/test checks that it is current. The
 *  compiled table (options.c) keeps neither. */
#define HCOMP_OPTION_LIST(X)                                                        \
    X("hcomp_config", "", opt_parse_config, opt_show_config,                        \
      "tier configuration: a JSON file, or `embedded`; unset: `$HCOMP_CONFIG`, else embedded", \
      "Path of the tier configuration, a JSON file (docs/TIERS.md), or `embedded` for the " \
      "built-in one (a 64 MiB private RAM tier, then the file's own directory). Unset: the " \
      "environment variable `HCOMP_CONFIG`, else the embedded one. It cannot change while " \
      "the file is open (`MPI_ERR_UNSUPPORTED_OPERATION`).")                        \
    X("hcomp_codec", "auto", opt_parse_codec, opt_show_codec,                       \
      "`auto` (the engine chooses per piece) or one codec for every piece, e.g. `zstd:3`", \
      "`auto`: the engine chooses codec and tier per piece. Or one codec for every piece: " \
      "`none`, `lz4`, `zstd`, `zlib`, `bzip2`, `brotli`, `snappy`, `lzma`, `blosc-lz4`, " \
      "`blosc-zstd` (c-blosc chunks that bit-shuffle typed data: float and integer arrays), " \
      "`blosc2-lz4`, `blosc2-zstd` (c-blosc2 chunks: bitshuffle, or the transform of `hcomp_shuffle`), " \
      "optionally with `:level` (e.g. `zstd:3`, `blosc-zstd:5`).")                  \
    X("hcomp_codecs", "all", opt_parse_codecs, opt_show_codecs,                     \
      "the codecs the engine may choose from, e.g. `lz4,zstd:3`",                   \
      "The codecs the engine may choose from under `hcomp_codec=auto`, e.g. " \
      "`lz4,zstd:3`; a name alone allows every level the seed models. `all`: every codec " \
      "the seed models but the c-blosc 1 ones (`blosc-lz4`, `blosc-zstd`: `blosc2-lz4` and " \
      "`blosc2-zstd` supersede them, docs/ENGINE.md), which a list may name.")      \
    X("hcomp_priority", "read_after_write", opt_parse_priority, opt_show_priority,  \
      "weight preset: `read_after_write`, `read_bandwidth`, `write_bandwidth`, `async`, `archival`", \
      "A preset of the engine's weights (docs/ENGINE.md): `async`, `archival`, " \
      "`read_after_write`, `read_bandwidth`, `write_bandwidth`. The default, " \
      "`read_after_write`, prices each choice on the storage's measured speed; it weighs the " \
      "ratio most, so re-reads from the page cache run at about half of `ufs:`'s speed " \
      "(`hcomp_weights` trades footprint for them). `archival` also frames a piece in one " \
      "block (`hcomp_block_size`).")                                                \
    X("hcomp_weights", "", opt_parse_weights, opt_show_weights,                     \
      "`w_c,w_d,w_r`: weights of compression speed, decompression speed and ratio", \
      "Three weights, `w_c,w_d,w_r`: compression speed, decompression speed and ratio " \
      "(normalised). Weights other than the priority's override it, and its block sizes " \
      "(`hcomp_block_size`). Unset: the priority's. `MPI_File_get_info` shows the weights in " \
      "force, and giving those back changes nothing. `0.3,0.7,0` (no weight on the ratio) " \
      "makes warm re-reads faster for a few percent more footprint (BENCHMARKS.md, \"Reads " \
      "on real media\").")                                                          \
    X("hcomp_seed", "", opt_parse_seed, opt_show_seed,                              \
      "JSON seed of the cost predictor (`hcomp-profile`); unset: `$HCOMP_SEED`, else embedded", \
      "Path of the cost predictor's JSON seed, made by `hcomp-profile` (docs/SEED.md). What " \
      "the predictor learns while the program runs is written back to it at close. Unset: " \
      "`$HCOMP_SEED`, else the embedded seed, which is never rewritten.")           \
    X("hcomp_feedback_interval", "16", opt_parse_feedback, opt_show_feedback,       \
      "refit a codec's model after this many measured pieces; 0: no feedback",      \
      "Refit a codec's model after this many measured pieces (compression times from " \
      "writes, decompression times from reads; each measurement also corrects the " \
      "predictions for data like it at once). `0`: no feedback.")                   \
    X("hcomp_piece_size", "1048576", opt_parse_piece_size, opt_show_piece_size,     \
      "largest piece, in logical bytes (4 KiB multiples, up to 64 MiB)",            \
      "The largest piece, in logical bytes: a multiple of 4096 from 4 KiB to 64 MiB " \
      "(`4MiB` is accepted). A piece is one write's unit of placement (tier and codec) and " \
      "of the mapping file's records.")                                             \
    X("hcomp_block_size", "auto", opt_parse_block_size, opt_show_block_size,        \
      "compressed pieces are framed in blocks of this size; a read decodes only the blocks it touches", \
      "Pieces are framed in blocks of this many logical bytes, each compressed on its own: " \
      "a read fetches and decodes only the blocks it touches (on the worker pool, " \
      "`hcomp_threads`), and a handle keeps the last ones it decoded (32 MiB at most). " \
      "`auto`: 256 KiB; 8 KiB where MPI's `access_style` hint says `random`; under the " \
      "priorities that weigh reads (`read_after_write`, `read_bandwidth`) 64 KiB for " \
      "floating-point data a codec bit-shuffles (their ratio hardly changes); under " \
      "`hcomp_priority=archival` one block per piece (the largest power of two in " \
      "`hcomp_piece_size`: the footprint first). Else a power of two from 4 KiB to 64 MiB: " \
      "smaller blocks serve small scattered reads (a 4 KiB read fetches one block) at some " \
      "cost in ratio (docs/ENGINE.md, \"Blocks and reads\"). It applies to the pieces this " \
      "opener writes that compress; a piece stored as it is has 4 KiB blocks whatever the " \
      "hint (a small read fetches 4 KiB of it). Files of format version 1 keep unframed " \
      "pieces.")                      \
    X("hcomp_threads", "0", opt_parse_threads, opt_show_threads,                    \
      "compression threads per process; 0: the node's cores divided among its ranks", \
      "Compression (and decoding) threads per process. `0`: the node's cores divided among " \
      "its ranks.")                                                                 \
    X("hcomp_node_writers", "0", opt_parse_node_writers, opt_show_node_writers,     \
      "processes of this node that write at once, sharing its storage; 0: the job's ranks on the node", \
      "How many processes of this node write at once, sharing the storage's bandwidth: " \
      "the engine prices each tier at its speed (configured or probed, docs/ENGINE.md " \
      "\"Tier speeds\") divided by this, until this process's own durable writes there " \
      "were measured. `0`: under MPI, the job's ranks on this node (`MPI_LOCALNRANKS`); " \
      "through the C API, 1. Set it where other processes write too (a file per process " \
      "opened on `MPI_COMM_SELF` counts already; other jobs on the node do not). " \
      "`MPI_File_get_info` shows the number in use.")                              \
    X("hcomp_shuffle", "auto", opt_parse_shuffle, opt_show_shuffle,                 \
      "`auto`: a byte shuffle of 4- and 8-byte data is a candidate; `off`; or a fixed codec's transform", \
      "`auto`: a byte shuffle of 4- and 8-byte data is one of the engine's candidates; " \
      "`off`: never. With a fixed `hcomp_codec`, the element transform of its pieces of " \
      "4- and 8-byte data: `byte` (byte shuffle), `bit` (bitshuffle: `blosc-*` and " \
      "`blosc2-*` only), `bytedelta` (byte shuffle, then each byte plane delta-coded) or " \
      "`delta` (XOR against the chunk's first block, then byte shuffle), both `blosc2-*` " \
      "only; `auto` keeps a fixed codec's own (bitshuffle for " \
      "`blosc-*` and `blosc2-*`, none for the others). A transform the fixed codec cannot " \
      "carry fails the open. Under `hcomp_codec=auto` these act as `auto`.")        \
    X("hcomp_stats", "", opt_parse_stats, opt_show_stats,                           \
      "`1`: print the engine's and the reads' statistics at close (also `HCOMP_STATS=1`)", \
      "`1`: print the engine's statistics at close (also `HCOMP_STATS=1`): `hcomp stats " \
      "for FILE (hcomp file): ...`, with a line of what the handle's reads did (calls, " \
      "bytes and time, stored bytes fetched from the tiers, blocks or pieces fetched, bytes " \
      "decoded, bytes from the block cache) and the read-ahead advice. A handle that only " \
      "read prints `hcomp stats for FILE (hcomp file, read only by this handle):` and those " \
      "lines; a plain file passed through prints one line at open, `hcomp stats for FILE " \
      "(plain file): ...`. Unset: `$HCOMP_STATS`, else `0`.")                       \
    X("hcomp_drain", "close", opt_parse_drain, opt_show_drain,                      \
      "`close`: node-local data moves to a shared tier at close; `writeback`: after close, in the background; `background`; `never`", \
      "`close`: data on node-local tiers moves to a shared tier at close, so that it " \
      "outlives the node and other nodes can read it (the engine then writes to the shared " \
      "tier directly: a move is a second write); `writeback`: the node-local tiers absorb " \
      "the writes, as a burst buffer, and the close returns once it has recorded where " \
      "every piece is; the process moves them to a shared tier behind the application, " \
      "while the file is idle and after its close, and `MPI_Finalize` (or the process's " \
      "exit) waits for what is left; readers on other nodes wait for the move " \
      "(`hcomp_drain_wait`), readers on the writer's node read the fast tier " \
      "(docs/TIERS.md, \"Write-back\"); `background`: also while the file is idle, and the " \
      "close waits for the rest; `never`: data stays where it is (lost with the node; a " \
      "process on another node gets an error naming the node that holds it).") \
    X("hcomp_drain_wait", "600", opt_parse_drain_wait, opt_show_drain_wait,        \
      "seconds a read waits for another node's write-back of the pieces it needs", \
      "A read that needs pieces still on another node's node-local tier waits while that " \
      "node's processes are moving pieces of the file to a shared tier (`hcomp_drain=" \
      "writeback`), at most this long (a duration: `600`, `90s`, `500ms`); it then fails " \
      "with an error naming the node, the tier and the command that moves them (`hcomp " \
      "drain FILE` on that node). When no process is moving the file's pieces it fails at " \
      "once; `0` never waits.")                                                     \
    X("hcomp_sync", "durable", opt_parse_sync, opt_show_sync,                       \
      "`durable`: `MPI_File_sync` moves data off volatile tiers first; `tiers`: sync each tier as it is", \
      "`durable`: `MPI_File_sync` first copies what this process wrote to volatile tiers " \
      "(RAM) to the first tier that is not volatile, so that it survives the loss of the " \
      "node; `tiers`: sync each tier as it is (faster; data on a RAM tier is lost with the " \
      "node, and reads of it then fail naming the tier).")                          \
    X("hcomp_reclaim", "auto", opt_parse_reclaim, opt_show_reclaim,                 \
      "when the space of overwritten data comes back: `auto`, `close` or `never` (`hcomp compact`)", \
      "When the space of overwritten data comes back (docs/FORMAT.md, \"Openers and " \
      "reclaiming space\"). `auto`: when dead pieces still on storage hold a fifth of the " \
      "file's stored bytes, the last process to close the file (no other process has it " \
      "open) removes segments without live data, compacts mostly dead ones and punches out " \
      "the other dead pieces; it rewrites the mapping log when the log is more than half " \
      "again what the live pieces need (a rewrite costs two syncs). `close`: all of it " \
      "whenever anything is dead. `never`: only `hcomp compact` does it (set it where " \
      "byte-range locks are local to a node: docs/DEPLOY.md). With `auto` and `close`, the " \
      "last close of a handle opened for writing first writes runs of 16 or more " \
      "neighbouring pieces under 4 KiB again as whole pieces (tiny independent writes, such " \
      "as IOR's `-t 1k`, are a piece each; BENCHMARKS.md has what it gains), then syncs, " \
      "then reclaims; and a write punches out at once the pieces it leaves without a live " \
      "byte on tiers with a capacity, so their room serves the rest of a checkpoint. With " \
      "`hcomp_drain=background` the background thread also reclaims while the file is idle " \
      "and no other process has it open.")                                          \
    X("hcomp_write_buffer", "0", opt_parse_write_buffer, opt_show_write_buffer,     \
      "gather small independent writes per handle up to this many bytes (MPI's sync rules); 0: off", \
      "Small independent writes (each smaller than this and than `hcomp_piece_size`) " \
      "outside atomic mode are gathered per handle and written as one task when this many " \
      "bytes are gathered, and before the handle's next read, collective call, " \
      "`MPI_File_sync`, `set_size`, `preallocate`, `set_atomicity`, `set_info` or close " \
      "(docs/SEMANTICS.md). `0` writes every write at once, so that other processes see it " \
      "once it returns, as on a POSIX file system (parallel HDF5 relies on that); e.g. " \
      "`4MiB` for programs that follow MPI's sync-barrier-sync rule and make many small " \
      "independent writes.")                                                        \
    X("hcomp_read_ahead", "67108864", opt_parse_read_ahead, opt_show_read_ahead,    \
      "logical bytes read ahead of sequential and strided readers; 0: off",         \
      "A read that continues the handle's previous one (a sequential reader, a collective " \
      "read's aggregator) has the stored bytes of up to this many following logical bytes " \
      "read into the page cache while the caller goes on (`posix_fadvise(WILLNEED)`), and " \
      "so does a strided reader once three runs of its reads of one length at one stride " \
      "show the pattern (each rank's slab of array after array, IOR's segments), for the " \
      "rest of its run and its next runs (docs/ENGINE.md, \"Read-ahead\"). Each read also " \
      "hands the kernel all it will fetch at once, and a sequential reader of compressed " \
      "pieces takes up to 256 KiB past its read into the handle's block cache. `0` turns " \
      "all of this off.")                                                           \
    X("hcomp_flush_after", "1048576", opt_parse_flush_after, opt_show_flush_after,  \
      "start the write-back of a segment each time this many bytes were appended; 0: leave it to sync", \
      "Each time this many bytes were appended to one of the process's segments on a tier " \
      "that is not volatile, their write-back to storage is started without waiting for it " \
      "(`sync_file_range(SYNC_FILE_RANGE_WRITE)`, as PostgreSQL's " \
      "`checkpoint_flush_after`), so that `MPI_File_sync` finds little left to write and " \
      "the disk works while the job writes (docs/ENGINE.md, \"Durable writes\"). `0` leaves " \
      "the bytes to the sync and the kernel (faster when nothing is ever synced and the " \
      "data fits the page cache).")                                                 \
    X("hcomp_open_replay", "auto", opt_parse_open_replay, opt_show_open_replay,     \
      "who replays the mapping log in a collective open: `shared`, `each` or `auto`", \
      "`shared`: a collective `MPI_File_open` of an existing hcomp file has one process " \
      "replay its mapping log and send what it built to one process per node, which shares " \
      "it with the node's others in shared memory; every process then replays only what " \
      "was appended since (the log is read once per open instead of once per process). " \
      "`each`: every process replays the log itself, a read-only one when it first reads or " \
      "asks the size. `auto`: `shared`, but `each` when a node has more processes than " \
      "cores (the waiting processes would take the cores from the replay).")        \
    X("access_style", "", opt_parse_access_style, opt_show_access_style,            \
      "MPI's own hint (e.g. `random`): `random` gives 8 KiB blocks for small scattered reads", \
      "MPI's reserved hint (MPI-4.0 14.2.8), a list such as `write_once,random`, shown by " \
      "`MPI_File_get_info` as given and changed by `MPI_File_set_info`. Where it says " \
      "`random` (and not `sequential` or `reverse_sequential`), the `auto` block size of " \
      "what that opener writes is 8 KiB: a 4 KiB read then fetches about 8 KiB of a " \
      "compressed piece, at 2-12% of ratio on data that compresses about 2x, and more on " \
      "data that compresses far better (docs/ENGINE.md, \"Blocks and reads\"); a block " \
      "size given as a hint stays. Read-ahead stays on: it follows only the sequential and " \
      "strided patterns it sees. Other values, and ones hcomp does not know, are accepted " \
      "and change nothing.")                                                        \
    X("hcomp_format", "3", opt_parse_format, opt_show_format,                       \
      "format version of new files: `3` (a log per writer, many nodes) or `2` (one node)", \
      "The format version of files this opener creates: `3` (each writer appends to a log " \
      "of its own: safe with writers on many nodes) or `2` (one log every writer appends " \
      "to, readable by hcomp before version 3; only for writers on one node: appends of " \
      "several clients to one file tear on GlusterFS and NFS). Existing files keep their " \
      "version; `hcomp compact --hint hcomp_format=3 FILE` converts one.")

struct hcomp_options {
    char config[PATH_MAX];          /* "" : $HCOMP_CONFIG, else the embedded default */
    const hcomp_codec *codec;       /* NULL: "auto", the engine chooses */
    int level;                      /* HCOMP_LEVEL_DEFAULT or an explicit level */
    int nallowed;                   /* 0: all codecs the seed models */
    hcomp_allowed allowed[HCOMP_MAX_ALLOWED];
    int priority;                   /* enum hcomp_priority */
    int weights_set;                /* hcomp_weights other than the priority's: they override it */
    double wc, wd, wr;              /* effective, normalised */
    char seed[PATH_MAX];            /* "" : $HCOMP_SEED, else the embedded default */
    unsigned feedback_interval;
    uint32_t piece_size;            /* multiple of 4096 */
    uint32_t block_size;            /* pieces of format-2 files are framed in these;
                                       0: "auto" (hcomp_options_block_size) */
    unsigned threads;               /* 0: as many as the cores */
    unsigned node_writers;          /* processes of the node sharing its storage (0: 1) */
    int shuffle;                    /* 1: a candidate when the data type allows it */
    int shuffle_fixed;              /* a fixed codec's transform (enum hcomp_shuffle), -1: its own */
    int stats;                      /* -1: $HCOMP_STATS decides */
    int drain;                      /* enum hcomp_drain_mode */
    double drain_wait;              /* seconds a read waits for another node's write-back */
    int sync_tiers;                 /* 1: sync makes each tier durable as it is (volatile
                                       tiers too); 0: pieces leave volatile tiers first */
    int reclaim;                    /* enum hcomp_reclaim_mode */
    uint32_t write_buffer;          /* bytes of small writes a handle may gather (0: none) */
    uint32_t flush_after;           /* a segment's bytes are sent to storage (not waited
                                       for) each time this many were written (0: at
                                       sync only) */
    uint32_t read_ahead;            /* logical bytes a sequential reader's reads are ahead of
                                       it, at most (0: none; file/read_ahead.c) */
    int open_replay;                /* 0 auto, 1 shared, 2 each: who replays the log in a
                                       collective open (the driver reads it:
                                       ad_hcomp_opencoll.c) */
    unsigned access;                /* enum hcomp_access_style bits of access_style */
    char access_style[HCOMP_ACCESS_STYLE_MAX];  /* as given ("" none), for get_info */
    unsigned format;                /* the format version of files this opener creates: 3,
                                       or 2 for readers of hcomp before writer logs (one
                                       node's writers only: docs/FORMAT.md) */
};

/* When the space of dead pieces comes back (file/reclaim.c): at the last close, when it
 * pays (auto) or whenever anything is dead (close); or only by `hcomp compact`. */
enum hcomp_reclaim_mode { HCOMP_RECLAIM_AUTO = 0, HCOMP_RECLAIM_CLOSE, HCOMP_RECLAIM_NEVER };

enum hcomp_priority {
    HCOMP_PRIO_ASYNC = 0,
    HCOMP_PRIO_ARCHIVAL,
    HCOMP_PRIO_READ_AFTER_WRITE,
    HCOMP_PRIO_READ_BANDWIDTH,
    HCOMP_PRIO_WRITE_BANDWIDTH,
    HCOMP_PRIO_COUNT
};

/* Effective seed path ("" for the embedded default) and stats switch. */
const char *hcomp_options_seed_path(const hcomp_options *o);
/* The block size pieces are framed in: the hint's, or for "auto" HCOMP_BLOCK_AUTO_RANDOM
 * when access_style says random (a 4 KiB read then fetches about 8 KiB), else
 * HCOMP_BLOCK_AUTO, except under the archival priority (its preset weights): the largest
 * power of two that fits in a piece, so that each piece is one block (a compressor sees
 * the whole piece: 0.1-0.2% more ratio for bit-shuffled zstd on particles; reads fetch
 * whole pieces). */
uint32_t hcomp_options_block_size(const hcomp_options *o);
/* Those of pieces of floating-point data in a bit-shuffled form: HCOMP_BLOCK_AUTO_BS for
 * "auto" under the priorities that weigh reads (read_after_write, the default, and
 * read_bandwidth: a small read fetches a quarter of what it would for 0.1-0.5% of ratio
 * and 5-10% of blosc-lz4's compression speed), else the same (docs/ENGINE.md, "Blocks and
 * reads"). */
uint32_t hcomp_options_block_size_bs(const hcomp_options *o);
int hcomp_options_stats_on(const hcomp_options *o);
/* access_style says random (and neither sequential nor reverse_sequential): small reads
 * here and there, which "auto" answers with small blocks. */
int hcomp_options_access_random(const hcomp_options *o);
/* What the options ask of the engine. */
void hcomp_options_engine_settings(const hcomp_options *o, hcomp_engine_settings *set);
/* HCOMP_OK, or why the hints do not go together (a fixed codec and a transform it cannot
 * carry), as an error naming both. */
int hcomp_options_check(const hcomp_options *o, hcomp_error *err);

#endif
