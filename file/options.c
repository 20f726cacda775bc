/* Parsing, defaults and listing of the hcomp_* hints. */
#include "options.h"
#include "tiers/piece_header.h"
#include "engine/filter.h"
#include "codecs/blosc2_env.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* weights of the priority presets: compression speed, decompression speed, ratio
 * (HCompress Table II; HReplica for the bandwidth presets) */
static const struct {
    const char *name;
    double wc, wd, wr;
} presets[HCOMP_PRIO_COUNT] = {
    {"async", 1, 0, 0},
    {"archival", 0.01, 0, 0.99},
    {"read_after_write", 0.3, 0.3, 0.4},
    {"read_bandwidth", 0.01, 0.495, 0.495},
    {"write_bandwidth", 0.5, 0, 0.5},
};

static int parse_uint(const char *v, unsigned long max, unsigned long *out)
{
    char *end;
    if (!isdigit((unsigned char) v[0]))
        return -1;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || *end || n > max)
        return -1;
    *out = n;
    return 0;
}

static int opt_parse_config(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strlen(v) >= sizeof(o->config))
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s: path longer than %zu characters", key,
                          sizeof(o->config) - 1);
    snprintf(o->config, sizeof(o->config), "%s", v);
    return HCOMP_OK;
}

static void opt_show_config(const hcomp_options *o, char *buf, size_t n)
{
    const char *env = getenv("HCOMP_CONFIG");
    snprintf(buf, n, "%s", o->config[0] ? o->config : env && env[0] ? env : "embedded");
}

static int opt_parse_codec(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    hcomp_error perr;
    if (strcmp(v, "auto") == 0) {
        o->codec = NULL;
        o->level = HCOMP_LEVEL_DEFAULT;
        return HCOMP_OK;
    }
    if (hcomp_codec_parse(v, &o->codec, &o->level, &perr) != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%s\": %s (or \"auto\": the engine "
                          "chooses)", key, v, perr.msg);
    return HCOMP_OK;
}

static void show_codec_level(const hcomp_codec *c, int level, char *buf, size_t n)
{
    if (level == HCOMP_LEVEL_DEFAULT || c->level_max == c->level_min)
        snprintf(buf, n, "%s", c->name);
    else
        snprintf(buf, n, "%s:%d", c->name, level);
}

static void opt_show_codec(const hcomp_options *o, char *buf, size_t n)
{
    if (o->codec == NULL)
        snprintf(buf, n, "auto");
    else
        show_codec_level(o->codec, o->level, buf, n);
}

static int opt_parse_codecs(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strcmp(v, "all") == 0) {
        o->nallowed = 0;
        return HCOMP_OK;
    }
    hcomp_allowed list[HCOMP_MAX_ALLOWED];
    int n = 0;
    char tmp[1024];
    if (strlen(v) >= sizeof(tmp) || v[0] == '\0')
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": give \"all\" or a comma "
                          "list such as \"lz4,zstd:3\"", key, v);
    snprintf(tmp, sizeof(tmp), "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        hcomp_error perr;
        if (n == HCOMP_MAX_ALLOWED)
            return hcomp_fail(err, HCOMP_E_INVAL, "hint %s: more than %d codecs", key,
                              HCOMP_MAX_ALLOWED);
        if (hcomp_codec_parse(tok, &list[n].codec, &list[n].level, &perr) != HCOMP_OK)
            return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": %s", key, v, perr.msg);
        n++;
    }
    if (n == 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": no codec named", key, v);
    memcpy(o->allowed, list, sizeof(list[0]) * (size_t) n);
    o->nallowed = n;
    return HCOMP_OK;
}

static void opt_show_codecs(const hcomp_options *o, char *buf, size_t n)
{
    if (o->nallowed == 0) {
        snprintf(buf, n, "all");
        return;
    }
    buf[0] = '\0';
    for (int i = 0; i < o->nallowed; i++) {
        char one[64];
        show_codec_level(o->allowed[i].codec, o->allowed[i].level, one, sizeof(one));
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", i ? "," : "", one);
    }
}

static void apply_preset(hcomp_options *o)
{
    o->wc = presets[o->priority].wc;
    o->wd = presets[o->priority].wd;
    o->wr = presets[o->priority].wr;
}

static int opt_parse_priority(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    for (int p = 0; p < HCOMP_PRIO_COUNT; p++) {
        if (strcmp(v, presets[p].name) == 0) {
            o->priority = p;    /* a priority replaces earlier weights */
            o->weights_set = 0;
            apply_preset(o);
            return HCOMP_OK;
        }
    }
    return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": valid priorities are async, "
                      "archival, read_after_write, read_bandwidth, write_bandwidth", key, v);
}

static void opt_show_priority(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s", presets[o->priority].name);
}

static int opt_parse_weights(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (v[0] == '\0') {         /* back to the priority's weights */
        o->weights_set = 0;
        apply_preset(o);
        return HCOMP_OK;
    }
    double w[3];
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        w[i] = strtod(p, &end);
        if (end == p || errno || !isfinite(w[i]) || w[i] < 0 || w[i] > 1e6)
            goto bad;
        p = end;
        while (*p == ' ')
            p++;
        if (i < 2) {
            if (*p != ',')
                goto bad;
            p++;
        }
    }
    if (*p != '\0' || w[0] + w[1] + w[2] <= 0)
        goto bad;
    double sum = w[0] + w[1] + w[2];
    o->wc = w[0] / sum;
    o->wd = w[1] / sum;
    o->wr = w[2] / sum;
    /* the priority's own weights, as they are shown (MPI_File_get_info; the driver's Open
     * reads every hint back from the file's info), leave the priority in force: only
     * other weights override it (its block size) */
    o->weights_set = !(fabs(o->wc - presets[o->priority].wc) < 1e-4 &&
                       fabs(o->wd - presets[o->priority].wd) < 1e-4 &&
                       fabs(o->wr - presets[o->priority].wr) < 1e-4);
    return HCOMP_OK;
bad:
    return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": give three non-negative numbers "
                      "\"wc,wd,wr\" (compression speed, decompression speed, ratio), not all "
                      "zero, e.g. \"0.3,0.3,0.4\"", key, v);
}

static void opt_show_weights(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%.4g,%.4g,%.4g", o->wc, o->wd, o->wr);
}

static int opt_parse_seed(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strlen(v) >= sizeof(o->seed))
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s: path longer than %zu characters", key,
                          sizeof(o->seed) - 1);
    snprintf(o->seed, sizeof(o->seed), "%s", strcmp(v, "embedded") == 0 ? "" : v);
    return HCOMP_OK;
}

const char *hcomp_options_seed_path(const hcomp_options *o)
{
    const char *env = getenv("HCOMP_SEED");
    if (o->seed[0])
        return o->seed;
    return env && env[0] && strcmp(env, "embedded") != 0 ? env : "";
}

static void opt_show_seed(const hcomp_options *o, char *buf, size_t n)
{
    const char *p = hcomp_options_seed_path(o);
    snprintf(buf, n, "%s", p[0] ? p : "embedded");
}

static int opt_parse_feedback(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    unsigned long n;
    if (parse_uint(v, 1000000, &n) != 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": a whole number of operations "
                          "from 0 (no feedback) to 1000000", key, v);
    o->feedback_interval = (unsigned) n;
    return HCOMP_OK;
}

static void opt_show_feedback(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%u", o->feedback_interval);
}

static int opt_parse_piece_size(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    uint64_t n;
    if (hcomp_parse_size(v, &n) != 0 || n == 0 || n % HCOMP_PIECE_ALIGN != 0 ||
        n > HCOMP_PIECE_SIZE_MAX)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": must be a multiple of %u bytes "
                          "between 4KiB and 64MiB (e.g. 1048576 or 4MiB)", key, v,
                          HCOMP_PIECE_ALIGN);
    o->piece_size = (uint32_t) n;
    return HCOMP_OK;
}

static void opt_show_piece_size(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%u", (unsigned) o->piece_size);
}

static int opt_parse_open_replay(hcomp_options *o, const char *key, const char *v,
                                 hcomp_error *err)
{
    static const char *const names[] = {"auto", "shared", "each"};
    for (int i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0) {
            o->open_replay = i;
            return HCOMP_OK;
        }
    return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"shared\" (a collective open "
                      "replays the mapping log once, for all), \"each\" (every process replays "
                      "it) or \"auto\" (shared, but not on nodes with more processes than "
                      "cores)", key, v);
}

static int opt_parse_format(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strcmp(v, "3") == 0 || strcmp(v, "2") == 0) {
        o->format = (unsigned) (v[0] - '0');
        return HCOMP_OK;
    }
    return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"3\" (the default: a log per "
                      "writer, safe with writers on many nodes) or \"2\" (one shared log, "
                      "readable by hcomp before version 3; only for writers on one node)", key, v);
}

static void opt_show_format(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%u", o->format ? o->format : 3u);
}

static void opt_show_open_replay(const hcomp_options *o, char *buf, size_t n)
{
    static const char *const names[] = {"auto", "shared", "each"};
    snprintf(buf, n, "%s", names[o->open_replay]);
}

/* A size hint of at most max bytes (0 allowed), into *out; the message says what the
 * hint takes: its largest value, an example and what 0 does. */
static int parse_byte_count(const char *key, const char *v, uint32_t max, const char *say,
                            uint32_t *out, hcomp_error *err)
{
    uint64_t n;
    if (hcomp_parse_size(v, &n) != 0 || n > max)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": %s", key, v, say);
    *out = (uint32_t) n;
    return HCOMP_OK;
}

/* The parser and the formatter of a size hint held in field */
#define SIZE_HINT(name, field, max, say)                                                  \
    static int opt_parse_##name(hcomp_options *o, const char *key, const char *v,        \
                                hcomp_error *err)                                        \
    {                                                                                    \
        return parse_byte_count(key, v, max, say, &o->field, err);                       \
    }                                                                                    \
    static void opt_show_##name(const hcomp_options *o, char *buf, size_t n)             \
    {                                                                                    \
        snprintf(buf, n, "%u", (unsigned) o->field);                                     \
    }

SIZE_HINT(write_buffer, write_buffer, 256u << 20,
          "a size up to 256MiB (e.g. 4MiB), or 0 to write every write at once")
SIZE_HINT(flush_after, flush_after, 1u << 30,
          "a size up to 1GiB (e.g. 1MiB), or 0 to leave written bytes to the sync and the kernel")
SIZE_HINT(read_ahead, read_ahead, 1u << 30,
          "a size up to 1GiB (e.g. 16MiB), or 0 for no read-ahead")

int hcomp_options_access_random(const hcomp_options *o)
{
    return (o->access & HCOMP_ACCESS_RANDOM) &&
           !(o->access & (HCOMP_ACCESS_SEQUENTIAL | HCOMP_ACCESS_REVERSE_SEQUENTIAL));
}

/* MPI-4.0 14.2.8: a comma-separated list of read_once, write_once, read_mostly,
 * write_mostly, sequential, reverse_sequential, random. Never refused: a hint may be
 * ignored, and a program written for another MPI must open its files here too. */
static int opt_parse_access_style(hcomp_options *o, const char *key, const char *v,
                                  hcomp_error *err)
{
    static const struct {
        const char *name;
        unsigned bit;
    } styles[] = {
        {"read_once", HCOMP_ACCESS_READ_ONCE}, {"write_once", HCOMP_ACCESS_WRITE_ONCE},
        {"read_mostly", HCOMP_ACCESS_READ_MOSTLY}, {"write_mostly", HCOMP_ACCESS_WRITE_MOSTLY},
        {"sequential", HCOMP_ACCESS_SEQUENTIAL},
        {"reverse_sequential", HCOMP_ACCESS_REVERSE_SEQUENTIAL}, {"random", HCOMP_ACCESS_RANDOM},
    };
    (void) key;
    (void) err;
    unsigned bits = 0;
    for (const char *p = v; *p;) {
        while (*p == ',' || isspace((unsigned char) *p))
            p++;
        size_t len = strcspn(p, ",");
        size_t tl = len;
        while (tl > 0 && isspace((unsigned char) p[tl - 1]))
            tl--;
        for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
            if (strlen(styles[i].name) == tl && strncmp(p, styles[i].name, tl) == 0)
                bits |= styles[i].bit;
        p += len;
    }
    o->access = bits;
    /* a longer value than MPI's largest is kept for its meaning, shown cut */
    snprintf(o->access_style, sizeof(o->access_style), "%s", v);
    return HCOMP_OK;
}

static void opt_show_access_style(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s", o->access_style);
}

static int opt_parse_block_size(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    uint64_t n;
    if (strcmp(v, "auto") == 0) {
        o->block_size = 0;
        return HCOMP_OK;
    }
    if (hcomp_parse_size(v, &n) != 0 || n > HCOMP_BLOCK_MAX ||
        hcomp_frame_of_block_size((uint32_t) n) == 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": must be \"auto\" or a power "
                          "of two between 4KiB and 64MiB (e.g. 262144 or 64KiB)", key, v);
    o->block_size = (uint32_t) n;
    return HCOMP_OK;
}

static void opt_show_block_size(const hcomp_options *o, char *buf, size_t n)
{
    if (o->block_size == 0)
        snprintf(buf, n, "auto");
    else
        snprintf(buf, n, "%u", (unsigned) o->block_size);
}

uint32_t hcomp_options_block_size(const hcomp_options *o)
{
    if (o->block_size != 0)
        return o->block_size;
    if (hcomp_options_access_random(o))
        return HCOMP_BLOCK_AUTO_RANDOM;
    if (o->priority != HCOMP_PRIO_ARCHIVAL || o->weights_set)
        return HCOMP_BLOCK_AUTO;
    uint32_t b = HCOMP_BLOCK_AS_IS;     /* 4 KiB: a piece is a multiple of it */
    while (b < HCOMP_BLOCK_MAX && (uint64_t) b * 2 <= o->piece_size)
        b *= 2;
    return b;
}

uint32_t hcomp_options_block_size_bs(const hcomp_options *o)
{
    int reads = o->priority == HCOMP_PRIO_READ_AFTER_WRITE || o->priority == HCOMP_PRIO_READ_BANDWIDTH;
    if (o->block_size == 0 && reads && !o->weights_set && !hcomp_options_access_random(o))
        return HCOMP_BLOCK_AUTO_BS;
    return hcomp_options_block_size(o);
}

static int opt_parse_threads(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    unsigned long n;
    if (parse_uint(v, 1024, &n) != 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": 0 (as many as the cores) or "
                          "a number of compression threads up to 1024", key, v);
    o->threads = (unsigned) n;
    return HCOMP_OK;
}

static void opt_show_threads(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%u", o->threads);
}

static int opt_parse_node_writers(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    unsigned long n;
    if (parse_uint(v, 1u << 20, &n) != 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": 0 (the job's ranks on the node) "
                          "or a number of processes up to 1048576", key, v);
    o->node_writers = (unsigned) n;
    return HCOMP_OK;
}

static void opt_show_node_writers(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%u", o->node_writers);
}

/* the fixed transforms' names, by enum hcomp_shuffle */
static const char *const shuffle_names[] = {"none", "byte", "bit", "bytedelta", "delta"};

static int opt_parse_shuffle(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    o->shuffle_fixed = -1;
    if (strcmp(v, "auto") == 0) {
        o->shuffle = 1;
        return HCOMP_OK;
    }
    if (strcmp(v, "off") == 0) {
        o->shuffle = 0;
        return HCOMP_OK;
    }
    for (int s = HCOMP_SHUFFLE_BYTE; s <= HCOMP_SHUFFLE_DELTA; s++)
        if (strcmp(v, shuffle_names[s]) == 0) {
            o->shuffle = 1;
            o->shuffle_fixed = s;
            return HCOMP_OK;
        }
    return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"auto\" (the engine may "
                      "byte-shuffle typed data), \"off\", or a fixed codec's transform: "
                      "\"byte\", \"bit\", \"bytedelta\", \"delta\"", key, v);
}

static void opt_show_shuffle(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s", o->shuffle_fixed > 0 ? shuffle_names[o->shuffle_fixed]
                           : o->shuffle ? "auto" : "off");
}

static int opt_parse_stats(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (v[0] == '\0')
        o->stats = -1;
    else if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "enable") == 0)
        o->stats = 1;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "disable") == 0)
        o->stats = 0;
    else
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": 1/true or 0/false", key, v);
    return HCOMP_OK;
}

int hcomp_options_stats_on(const hcomp_options *o)
{
    if (o->stats >= 0)
        return o->stats;
    const char *env = getenv("HCOMP_STATS");
    return env && (strcmp(env, "1") == 0 || strcmp(env, "true") == 0);
}

static void opt_show_stats(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%d", hcomp_options_stats_on(o));
}

static int opt_parse_drain(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strcmp(v, "close") == 0)
        o->drain = HCOMP_DRAIN_CLOSE;
    else if (strcmp(v, "background") == 0)
        o->drain = HCOMP_DRAIN_BACKGROUND;
    else if (strcmp(v, "writeback") == 0)
        o->drain = HCOMP_DRAIN_WRITEBACK;
    else if (strcmp(v, "never") == 0)
        o->drain = HCOMP_DRAIN_NEVER;
    else
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"close\" (move node-local "
                          "data to a shared tier at close), \"writeback\" (after the close, "
                          "behind the application), \"background\" (also while the file is "
                          "idle) or \"never\" (keep it where it is)", key, v);
    return HCOMP_OK;
}

static void opt_show_drain(const hcomp_options *o, char *buf, size_t n)
{
    static const char *const names[] = {"never", "close", "background", "writeback"};
    snprintf(buf, n, "%s", names[o->drain]);
}

static int opt_parse_drain_wait(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    double s;
    if (hcomp_parse_duration(v, &s) != 0 || !(s >= 0) || s > 1e7)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": a duration of at most 10^7 "
                          "s, such as \"600\", \"90s\" or \"500ms\" (0: never wait)", key, v);
    o->drain_wait = s;
    return HCOMP_OK;
}

static void opt_show_drain_wait(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%g", o->drain_wait);
}

static int opt_parse_reclaim(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strcmp(v, "auto") == 0)
        o->reclaim = HCOMP_RECLAIM_AUTO;
    else if (strcmp(v, "close") == 0)
        o->reclaim = HCOMP_RECLAIM_CLOSE;
    else if (strcmp(v, "never") == 0)
        o->reclaim = HCOMP_RECLAIM_NEVER;
    else
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"auto\" (the last close "
                          "reclaims dead space when it pays), \"close\" (the last close reclaims "
                          "all of it) or \"never\" (only `hcomp compact` does)", key, v);
    return HCOMP_OK;
}

static void opt_show_reclaim(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s", o->reclaim == HCOMP_RECLAIM_CLOSE ? "close"
                           : o->reclaim == HCOMP_RECLAIM_NEVER ? "never" : "auto");
}

static int opt_parse_sync(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strcmp(v, "durable") == 0)
        o->sync_tiers = 0;
    else if (strcmp(v, "tiers") == 0)
        o->sync_tiers = 1;
    else
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%.200s\": \"durable\" (sync moves data "
                          "off volatile tiers first, so that it survives the node) or \"tiers\" "
                          "(sync each tier as it is: data on RAM tiers is lost with the node)",
                          key, v);
    return HCOMP_OK;
}

static void opt_show_sync(const hcomp_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s", o->sync_tiers ? "tiers" : "durable");
}

typedef int (*opt_parser)(hcomp_options *, const char *, const char *, hcomp_error *);
typedef void (*opt_shower)(const hcomp_options *, char *, size_t);

static const struct {
    const char *key, *def;
    opt_parser parse;
    opt_shower show;
} table[] = {
#define HCOMP_OPTION_ROW(key, def, parser, shower, summary, text) {key, def, parser, shower},
    HCOMP_OPTION_LIST(HCOMP_OPTION_ROW)
#undef HCOMP_OPTION_ROW
};
#define NOPTIONS (sizeof(table) / sizeof(table[0]))

size_t hcomp_options_count(void)
{
    return NOPTIONS;
}

const char *hcomp_options_key(size_t i)
{
    return i < NOPTIONS ? table[i].key : NULL;
}

const char *hcomp_options_default(size_t i)
{
    return i < NOPTIONS ? table[i].def : NULL;
}

int hcomp_options_is_hint(const char *key)
{
    return key != NULL && strncmp(key, "hcomp_", 6) == 0;
}

hcomp_options *hcomp_options_new(void)
{
    hcomp_options *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (table[i].parse(o, table[i].key, table[i].def, NULL) != HCOMP_OK) {
            free(o);    /* a bad default is a bug; fail loudly rather than run with it */
            return NULL;
        }
    }
    return o;
}

hcomp_options *hcomp_options_dup(const hcomp_options *opts)
{
    hcomp_options *o = malloc(sizeof(*o));
    if (o)
        *o = *opts;
    return o;
}

void hcomp_options_free(hcomp_options *opts)
{
    free(opts);
}

int hcomp_options_set(hcomp_options *opts, const char *key, const char *value, hcomp_error *err)
{
    if (key == NULL || value == NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint with no key or no value");
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strcmp(key, table[i].key) == 0) {
            hcomp_options trial = *opts;    /* a rejected value changes nothing */
            int rc = table[i].parse(&trial, key, value, err);
            if (rc == HCOMP_OK)
                *opts = trial;
            return rc;
        }
    }
    char known[512] = "";
    for (size_t i = 0; i < NOPTIONS; i++) {
        strncat(known, table[i].key, sizeof(known) - strlen(known) - 1);
        if (i + 1 < NOPTIONS)
            strncat(known, ", ", sizeof(known) - strlen(known) - 1);
    }
    return hcomp_fail(err, HCOMP_E_INVAL, "unknown hcomp hint \"%.100s\" (known: %s)", key, known);
}

int hcomp_options_get(const hcomp_options *o, const char *key, char *buf, size_t n)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strcmp(key, table[i].key) == 0) {
            table[i].show(o, buf, n);
            return HCOMP_OK;
        }
    }
    return HCOMP_E_INVAL;
}

void hcomp_options_engine_settings(const hcomp_options *o, hcomp_engine_settings *set)
{
    memset(set, 0, sizeof(*set));
    set->codec = o->codec;
    set->level = o->level;
    set->nallowed = o->nallowed;
    memcpy(set->allowed, o->allowed, sizeof(set->allowed[0]) * (size_t) o->nallowed);
    set->wc = o->wc;
    set->wd = o->wd;
    set->wr = o->wr;
    set->feedback_interval = o->feedback_interval;
    set->piece_size = o->piece_size;
    set->block_size = hcomp_options_block_size(o);
    set->block_size_bs = hcomp_options_block_size_bs(o);
    set->shuffle = o->shuffle;
    set->shuffle_fixed = o->shuffle_fixed;
    set->drain_at_close = o->drain == HCOMP_DRAIN_CLOSE;
    set->node_writers = o->node_writers > 0 ? o->node_writers : 1;
    snprintf(set->seed, sizeof(set->seed), "%s", hcomp_options_seed_path(o));
}

int hcomp_options_check(const hcomp_options *o, hcomp_error *err)
{
    const char *env = hcomp_blosc2_env_override();
    if (o->codec != NULL && env != NULL &&
        (o->codec->id == HCOMP_CODEC_BLOSC2_LZ4 || o->codec->id == HCOMP_CODEC_BLOSC2_ZSTD))
        return hcomp_fail(err, HCOMP_E_INVAL, "hint hcomp_codec=%s: the environment sets %s, "
                          "which c-blosc2 applies over hcomp's settings of its chunks; unset it "
                          "(or choose another codec)", o->codec->name, env);
    if (o->codec == NULL || o->shuffle_fixed <= HCOMP_SHUFFLE_NONE)
        return HCOMP_OK;
    /* the transform of 8-byte elements stands for both sizes: they fit the same codecs */
    if (o->codec->id != HCOMP_CODEC_NONE &&
        hcomp_filter_fits(hcomp_filter_for(o->shuffle_fixed, 8), o->codec))
        return HCOMP_OK;
    return hcomp_fail(err, HCOMP_E_INVAL, "hints hcomp_codec=%s and hcomp_shuffle=%s do not go "
                      "together: %s cannot carry that transform (bit: blosc-* and blosc2-*; "
                      "bytedelta, delta: blosc2-*; byte: any codec but none)", o->codec->name,
                      shuffle_names[o->shuffle_fixed], o->codec->name);
}
