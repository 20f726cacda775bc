/* The tier model: an ordered list of tiers, fastest first, read from a JSON file
 * (docs/TIERS.md, "Tier configuration") or the embedded default. */
#ifndef HCOMP_TIER_CONFIG_H
#define HCOMP_TIER_CONFIG_H

#include <limits.h>
#include <stdint.h>
#include "hcomp_error.h"

#define HCOMP_MAX_TIERS 16
#define HCOMP_TIER_NAME_MAX 63
#define HCOMP_FILEDIR "@filedir"

typedef struct hcomp_tier {
    char name[HCOMP_TIER_NAME_MAX + 1];
    char path[PATH_MAX];     /* expanded; HCOMP_FILEDIR means the file's own directory */
    uint64_t capacity;       /* bytes hcomp may place there; UINT64_MAX: unlimited */
    double bandwidth;        /* bytes/s (0: unknown) */
    double latency;          /* seconds */
    int node_local;          /* 1: node-local (RAM, local NVMe), 0: shared */
    int private_dir;         /* 1: created per user, mode 0700, ownership checked */
    int emulate;             /* 1: I/O is slowed to bandwidth and latency (experiments) */
    int measure;             /* 1 (default): measured speeds replace bandwidth once known;
                                0: bandwidth is taken as given (emulated tiers: always) */
    int volatile_mode;       /* 1: lost with the node's memory, 0: not; -1: detect (a
                                RAM-backed file system is volatile), hcomp_tier_volatile */
} hcomp_tier;

typedef struct hcomp_tier_config {
    int ntiers;
    hcomp_tier tier[HCOMP_MAX_TIERS];
    char source[PATH_MAX];   /* file it came from, or "embedded default" */
} hcomp_tier_config;

/* Load the configuration named by path (NULL or "": HCOMP_CONFIG, else the embedded
 * default). Errors name the file and the offending field. */
int hcomp_tier_config_load(const char *path, hcomp_tier_config *cfg, hcomp_error *err);
/* Parse configuration text (JSON); source names it in messages. */
int hcomp_tier_config_parse(const char *json, const char *source, hcomp_tier_config *cfg,
                            hcomp_error *err);
/* The embedded default: a private per-user RAM tier in /dev/shm, then the file's
 * own directory. */
int hcomp_tier_config_default(hcomp_tier_config *cfg, hcomp_error *err);

/* Make sure a private tier directory exists, is a real directory (not a symlink),
 * is owned by this user and is not accessible to others. */
int hcomp_tier_ensure_private_dir(const char *path, hcomp_error *err);

#endif
