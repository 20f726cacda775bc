/* hcomp info FILE...: what a file holds and where. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tiers/piece_header.h"

static int info_one(const char *path)
{
    hcomp_error err;
    hcomp_file_facts facts;
    if (hcomp_file_facts_path(path, &facts, &err) != HCOMP_OK) {
        cli_error("info", "%s", err.msg);
        return CLI_FAILED;
    }
    time_t created = (time_t) (facts.created_ns / 1000000000u);
    char when[64];
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&created));
    uint64_t map_bytes = facts.map_bytes, skipped = facts.damaged_bytes;
    uint64_t nsegs = facts.segments, npieces = facts.pieces;
    unsigned version = facts.version;
    const char *id = facts.id;

    hcomp_stats s;
    hcomp_frame_stats frame[HCOMP_STATS_FRAMES];
    if (hcomp_stat_path_frames(path, &s, frame, &err) != HCOMP_OK) {
        cli_error("info", "%s", err.msg);
        return CLI_FAILED;
    }
    char a[32], b[32];
    printf("%s\n", path);
    printf("  format        version %u; file id %s; created %s\n", version, id, when);
    printf("  mapping file  %s, %llu segments, %llu pieces recorded", cli_bytes(map_bytes, a),
           (unsigned long long) nsegs, (unsigned long long) npieces);
    if (skipped)
        printf(", %llu DAMAGED bytes (run hcomp fsck)", (unsigned long long) skipped);
    printf("\n  logical size  %s (%llu bytes); %s in holes\n", cli_bytes(s.logical_size, a),
           (unsigned long long) s.logical_size, cli_bytes(s.logical_size - s.live_bytes, b));
    printf("  stored        %s in %llu live pieces", cli_bytes(s.stored_bytes, a),
           (unsigned long long) s.pieces);
    if (s.stored_bytes)
        printf("; ratio %.2f", (double) s.live_bytes / (double) s.stored_bytes);
    printf("\n  tiers\n");
    for (size_t t = 0; t < s.ntiers; t++) {
        printf("    %-12s %-40s %10s data in %10s, %llu pieces\n", s.tier[t].name, s.tier[t].dir,
               cli_bytes(s.tier[t].raw_bytes, a), cli_bytes(s.tier[t].stored_bytes, b),
               (unsigned long long) s.tier[t].pieces);
    }
    hcomp_footprint fp;
    if (hcomp_footprint_path(path, &fp, &err) != HCOMP_OK) {
        cli_error("info", "%s", err.msg);
        return CLI_FAILED;
    }
    char d[32], m[32];
    uint64_t recorded = fp.live + fp.dead;
    printf("  on storage    %s allocated to %llu segment files + %s mapping file; %s of dead "
           "pieces (%.1f%% of %s recorded)", cli_bytes(fp.allocated, a),
           (unsigned long long) fp.segments, cli_bytes(fp.map_bytes, m), cli_bytes(fp.dead, d),
           recorded ? 100.0 * (double) fp.dead / (double) recorded : 0.0, cli_bytes(recorded, b));
    if (fp.segments_missing)
        printf("; %llu segment files with live data MISSING (run hcomp fsck)",
               (unsigned long long) fp.segments_missing);
    printf("\n");
    for (size_t t = 0; t < fp.ntiers; t++)
        printf("    %-12s %10s allocated, %10s live, %10s dead\n", fp.tier[t].name,
               cli_bytes(fp.tier[t].allocated, a), cli_bytes(fp.tier[t].live, b),
               cli_bytes(fp.tier[t].dead, d));
    if (fp.dead)
        printf("    (dead pieces are given back at the last close (hint hcomp_reclaim) or by "
               "hcomp compact)\n");
    printf("  codecs\n");
    for (size_t c = 0; c < s.ncodecs; c++) {
        if (s.codec[c].pieces == 0)
            continue;
        const hcomp_codec *codec = hcomp_codec_by_id((unsigned) c);
        printf("    %-12s %10s data in %10s, %llu pieces, ratio %.2f\n", codec ? codec->name : "?",
               cli_bytes(s.codec[c].raw_bytes, a), cli_bytes(s.codec[c].stored_bytes, b),
               (unsigned long long) s.codec[c].pieces,
               s.codec[c].stored_bytes ? (double) s.codec[c].raw_bytes / (double) s.codec[c].stored_bytes : 0.0);
    }
    /* the block sizes say what a small read of the file fetches (hcomp_block_size,
     * access_style=random); pieces stored as they are are in 4 KiB blocks */
    printf("  blocks\n");
    for (int k = 0; k < HCOMP_STATS_FRAMES; k++) {
        if (frame[k].pieces == 0)
            continue;
        char label[32];
        if (k == 0)
            snprintf(label, sizeof(label), "unframed");
        else
            cli_bytes(hcomp_frame_block_size((unsigned) k), label);
        printf("    %-12s %10s data in %10s, %llu pieces\n", label, cli_bytes(frame[k].raw_bytes, a),
               cli_bytes(frame[k].stored_bytes, b), (unsigned long long) frame[k].pieces);
    }
    /* what the writers' engines did, as they recorded it at close (every statistic of
     * engine/stats.h's recorded lists, by its name) */
    if (facts.stats_records) {
        printf("  recorded by its writers at close (%llu records, summed)\n",
               (unsigned long long) facts.stats_records);
        hcomp_stats_print_recorded(stdout, "    ", &facts.recorded);
    }
    return CLI_OK;
}

int cmd_info(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("info", "", argc, argv, &c);
    if (rc == CLI_OK && c.argc < 1) {
        cli_error("info", "which file? usage: hcomp info FILE...");
        rc = CLI_USAGE;
    }
    for (int i = 0; rc != CLI_USAGE && i < c.argc; i++)
        if (info_one(c.argv[i]) != CLI_OK)
            rc = CLI_FAILED;
    cli_common_free(&c);
    return rc;
}
