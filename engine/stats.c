/* Printing and serialising engine statistics. */
#include "stats.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* What the handle's reads did, and the advice given for them */
static void read_lines(FILE *out, const hcomp_file_stats *s)
{
    if (s->reads)
        fprintf(out, "  reads: %llu calls, %llu bytes in %.3f s; %llu stored bytes fetched from "
                "the tiers in %llu blocks or pieces, %llu bytes decoded (the rest stored as "
                "they are), %llu bytes from the block cache\n", (unsigned long long) s->reads,
                (unsigned long long) s->read_bytes, s->t_read,
                (unsigned long long) s->read_fetched, (unsigned long long) s->read_units,
                (unsigned long long) s->read_decoded, (unsigned long long) s->read_cached);
    if (s->readahead_bytes)
        fprintf(out, "  read ahead of sequential reads: %llu stored bytes\n",
                (unsigned long long) s->readahead_bytes);
    if (s->block_advice_bytes)
        fprintf(out, "  advised before their pieces' tables were read: %llu stored bytes\n",
                (unsigned long long) s->block_advice_bytes);
    if (s->advice_cached_bytes)
        fprintf(out, "  not advised, in the page cache already: %llu stored bytes\n",
                (unsigned long long) s->advice_cached_bytes);
}

void hcomp_stats_print_reads(FILE *out, const char *path, const hcomp_file_stats *s)
{
    fprintf(out, "hcomp stats for %s (hcomp file, read only by this handle):\n", path);
    read_lines(out, s);
}

void hcomp_stats_print(FILE *out, const char *path, const hcomp_file_stats *s,
                       const hcomp_tier_config *cfg)
{
    uint64_t stored = 0;
    for (int t = 0; t < cfg->ntiers; t++)
        stored += s->tier_stored[t];
    fprintf(out, "hcomp stats for %s (hcomp file): %llu tasks (%llu analysed in full, %llu "
            "analyses taken from other files of the process, %llu predicted, %llu planned by HCDP), %llu pieces, "
            "%llu bytes in, %llu stored (ratio %.3f), %llu pieces byte-shuffled\n", path,
            (unsigned long long) s->tasks, (unsigned long long) s->analyses,
            (unsigned long long) s->analyses_shared, (unsigned long long) s->predictions,
            (unsigned long long) s->plans,
            (unsigned long long) s->pieces, (unsigned long long) s->bytes_in,
            (unsigned long long) stored, stored ? (double) s->bytes_in / (double) stored : 0.0,
            (unsigned long long) s->shuffled_pieces);
    if (s->drained_bytes || s->drain_errors)
        fprintf(out, "  drained in the background: %llu bytes (%llu failed attempts)\n",
                (unsigned long long) s->drained_bytes, (unsigned long long) s->drain_errors);
    if (s->sync_moved_bytes)
        fprintf(out, "  moved off volatile tiers by sync: %llu bytes in %.3f s\n",
                (unsigned long long) s->sync_moved_bytes, s->t_sync_move);
    if (s->flush_behind_bytes)
        fprintf(out, "  sent to storage as written (hcomp_flush_after): %llu stored bytes\n",
                (unsigned long long) s->flush_behind_bytes);
    read_lines(out, s);
    if (s->overwritten_freed || s->t_punch > 0)
        fprintf(out, "  freed as writes overwrote pieces: %llu bytes in %.6f s\n",
                (unsigned long long) s->overwritten_freed, s->t_punch);
    if (s->reclaim_ran)
        fprintf(out, "  reclaimed at close: %llu bytes of dead pieces found, %llu bytes freed, "
                "%llu segments removed, %llu bytes of live pieces moved, mapping file %llu -> "
                "%llu bytes, in %.3f s\n", (unsigned long long) s->reclaim_dead,
                (unsigned long long) s->reclaim_freed, (unsigned long long) s->reclaim_segments,
                (unsigned long long) s->reclaim_moved, (unsigned long long) s->reclaim_log_before,
                (unsigned long long) s->reclaim_log_after, s->t_reclaim);
    if (s->coalesced_pieces)
        fprintf(out, "  small pieces written again as whole ones at close: %llu pieces, %llu "
                "bytes, in %.3f s\n", (unsigned long long) s->coalesced_pieces,
                (unsigned long long) s->coalesced_bytes, s->t_coalesce);
    if (s->reclaim_error[0])
        fprintf(out, "  reclaiming at close failed (the data is intact): %s\n", s->reclaim_error);
    for (int t = 0; t < cfg->ntiers; t++) {
        int best = 0;
        for (int c = 1; c < HCOMP_CODEC_COUNT; c++)
            if (s->tier_codec_raw[t][c] > s->tier_codec_raw[t][best])
                best = c;
        fprintf(out, "  tier %-10s %14llu in %14llu stored %8llu pieces  mostly %s\n",
                cfg->tier[t].name, (unsigned long long) s->tier_raw[t],
                (unsigned long long) s->tier_stored[t], (unsigned long long) s->tier_pieces[t],
                s->tier_raw[t] ? hcomp_codec_by_id((unsigned) best)->name : "-");
    }
    for (int c = 0; c < HCOMP_CODEC_COUNT; c++)
        if (s->codec_pieces[c])
            fprintf(out, "  codec %-8s %14llu in %14llu stored %8llu pieces\n",
                    hcomp_codec_by_id((unsigned) c)->name, (unsigned long long) s->codec_raw[c],
                    (unsigned long long) s->codec_stored[c], (unsigned long long) s->codec_pieces[c]);
    double engine = s->t_analysis + s->t_prediction + s->t_placement;
#define HCOMP_TIME_PRINT(name, desc)                                                   \
    fprintf(out, "  time %-28s %10.6f s  %6.3f%% of write time\n", desc, s->t_##name,    \
            s->t_write > 0 ? 100.0 * s->t_##name / s->t_write : 0.0);
    HCOMP_TIME_LIST(HCOMP_TIME_PRINT)
#undef HCOMP_TIME_PRINT
    fprintf(out, "  engine (analysis + prediction + placement): %.6f s, %.3f%% of %.6f s of "
            "writing\n", engine, s->t_write > 0 ? 100.0 * engine / s->t_write : 0.0, s->t_write);
}

char *hcomp_stats_json(const hcomp_file_stats *s, const hcomp_tier_config *cfg)
{
    /* the keys in the lists' order (jansson keeps insertion order): docs/FORMAT.md */
    json_t *o = json_object();
#define COUNTER_JSON(name, desc) json_object_set_new(o, #name, json_integer((json_int_t) s->name));
    HCOMP_RECORDED_COUNTERS(COUNTER_JSON)
#undef COUNTER_JSON
#define TIME_JSON(name, desc) json_object_set_new(o, #name "_seconds", json_real(s->t_##name));
    HCOMP_RECORDED_TIMES(TIME_JSON)
#undef TIME_JSON
    json_t *tiers = json_array();
    for (int t = 0; t < cfg->ntiers; t++) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(cfg->tier[t].name));
#define TIER_JSON(name, desc) json_object_set_new(e, #name, json_integer((json_int_t) s->tier_##name[t]));
        HCOMP_RECORDED_PARTS(TIER_JSON)
#undef TIER_JSON
        json_array_append_new(tiers, e);
    }
    json_object_set_new(o, "tiers", tiers);
    json_t *codecs = json_object();
    for (int c = 0; c < HCOMP_CODEC_COUNT; c++) {
        if (!s->codec_pieces[c])
            continue;
        json_t *e = json_object();
#define CODEC_JSON(name, desc) json_object_set_new(e, #name, json_integer((json_int_t) s->codec_##name[c]));
        HCOMP_RECORDED_PARTS(CODEC_JSON)
#undef CODEC_JSON
        json_object_set_new(codecs, hcomp_codec_by_id((unsigned) c)->name, e);
    }
    json_object_set_new(o, "codecs", codecs);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

void hcomp_stats_add_recorded(hcomp_file_stats *a, const hcomp_file_stats *b)
{
#define ADD_COUNTER(name, desc) a->name += b->name;
    HCOMP_RECORDED_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
#define ADD_TIME(name, desc) a->t_##name += b->t_##name;
    HCOMP_RECORDED_TIMES(ADD_TIME)
#undef ADD_TIME
}

void hcomp_stats_print_recorded(FILE *out, const char *indent, const hcomp_file_stats *s)
{
#define PRINT_COUNTER(name, desc)                                                      \
    fprintf(out, "%s%-22s %16llu    %s\n", indent, #name, (unsigned long long) s->name, desc);
    HCOMP_RECORDED_COUNTERS(PRINT_COUNTER)
#undef PRINT_COUNTER
#define PRINT_TIME(name, desc)                                                         \
    fprintf(out, "%s%-22s %14.6f s    %s\n", indent, #name "_seconds", s->t_##name, desc);
    HCOMP_RECORDED_TIMES(PRINT_TIME)
#undef PRINT_TIME
}

/* a key's non-negative integer, 0 if absent or of another type */
static uint64_t get_count(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t) json_integer_value(v) : 0;
}

int hcomp_stats_from_json(const char *json, size_t len, hcomp_file_stats *s,
                          char names[][HCOMP_TIER_NAME_MAX + 1], int *ntiers)
{
    memset(s, 0, sizeof(*s));
    if (ntiers)
        *ntiers = 0;
    json_t *o = json_loadb(json, len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
#define COUNTER_GET(name, desc) s->name = get_count(o, #name);
    HCOMP_RECORDED_COUNTERS(COUNTER_GET)
#undef COUNTER_GET
#define TIME_GET(name, desc) s->t_##name = json_number_value(json_object_get(o, #name "_seconds"));
    HCOMP_RECORDED_TIMES(TIME_GET)
#undef TIME_GET
    json_t *tiers = json_object_get(o, "tiers");
    size_t nt = json_is_array(tiers) ? json_array_size(tiers) : 0;
    if (nt > HCOMP_MAX_TIERS)
        nt = HCOMP_MAX_TIERS;
    for (size_t t = 0; t < nt; t++) {
        json_t *e = json_array_get(tiers, t);
#define TIER_GET(name, desc) s->tier_##name[t] = get_count(e, #name);
        HCOMP_RECORDED_PARTS(TIER_GET)
#undef TIER_GET
        if (names) {
            const char *n = json_string_value(json_object_get(e, "name"));
            snprintf(names[t], HCOMP_TIER_NAME_MAX + 1, "%s", n ? n : "");
        }
    }
    if (ntiers)
        *ntiers = (int) nt;
    const char *key;
    json_t *e;
    json_object_foreach(json_object_get(o, "codecs"), key, e) {
        const hcomp_codec *c = hcomp_codec_by_name(key);
        if (c == NULL || c->id >= HCOMP_CODEC_COUNT)
            continue;       /* a codec of a later library: not this one's to count */
#define CODEC_GET(name, desc) s->codec_##name[c->id] = get_count(e, #name);
        HCOMP_RECORDED_PARTS(CODEC_GET)
#undef CODEC_GET
    }
    json_decref(o);
    return 0;
}
