/* hcomp drain / rm / fsck / compact / orphans: moving, removing, checking, repairing and
 * compacting whole files, and finding what removed ones left. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_drain(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("drain", "ch", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 1) {
        cli_error("drain", "usage: hcomp drain FILE [--config C] [--hint K=V]...");
        rc = CLI_USAGE;
    }
    hcomp_file *f = NULL;
    hcomp_error err;
    /* nothing else to move at close: the tool moves everything itself */
    if (rc == CLI_OK)
        hcomp_options_set(c.opts, "hcomp_drain", "never", NULL);
    if (rc == CLI_OK && hcomp_file_open(c.argv[0], HCOMP_O_RDWR, 0, 1, c.opts, &f, &err) != HCOMP_OK) {
        cli_error("drain", "%s", err.msg);
        rc = CLI_FAILED;
    }
    if (rc == CLI_OK) {
        hcomp_tool_io io = cli_io(&c);
        hcomp_drain_result res;
        int drc = hcomp_drain_all(f, &io, &res, &err);
        cli_progress_end(&c);
        char a[32], b[32];
        printf("%s: moved %llu pieces to tier \"%s\" (%s stored before, %s after); removed %llu "
               "emptied segment files\n", c.argv[0], (unsigned long long) res.pieces,
               res.tier, cli_bytes(res.stored_before, a),
               cli_bytes(res.stored_after, b), (unsigned long long) res.segments_removed);
        if (res.elsewhere > 0)
            printf("%s: %llu pieces stay on node-local tiers of another node (%s): run `hcomp "
                   "drain %s` there\n", c.argv[0], (unsigned long long) res.elsewhere,
                   res.elsewhere_node, c.argv[0]);
        if (drc != HCOMP_OK) {
            cli_error("drain", "%s (what moved before is recorded; the rest stays where it was)",
                      err.msg);
            rc = CLI_FAILED;
        }
    }
    if (f && hcomp_file_close(f, &err) != HCOMP_OK && rc == CLI_OK) {
        cli_error("drain", "%s", err.msg);
        rc = CLI_FAILED;
    }
    cli_common_free(&c);
    return rc;
}

int cmd_rm(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("rm", "", argc, argv, &c);
    if (rc == CLI_OK && c.argc < 1) {
        cli_error("rm", "usage: hcomp rm FILE...");
        rc = CLI_USAGE;
    }
    for (int i = 0; rc != CLI_USAGE && i < c.argc; i++) {
        hcomp_error err;
        if (hcomp_file_delete(c.argv[i], &err) != HCOMP_OK) {
            int damaged = err.code == HCOMP_E_CORRUPT || err.code == HCOMP_E_NOTHCOMP;
            cli_error("rm", "%s%s", err.msg, damaged ? " (if its mapping file is damaged, "
                      "hcomp fsck --repair first)" : "");
            rc = CLI_FAILED;
        }
    }
    cli_common_free(&c);
    return rc;
}

int cmd_fsck(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("fsck", "cr", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 1) {
        cli_error("fsck", "usage: hcomp fsck FILE [--repair] [--config C]");
        rc = CLI_USAGE;
    }
    if (rc != CLI_OK) {
        cli_common_free(&c);
        return rc;
    }
    const char *path = c.argv[0];
    hcomp_tool_io io = cli_io(&c);
    hcomp_fsck_result r;
    hcomp_error err;
    int frc = hcomp_fsck(path, c.config, c.repair, &io, &r, &err);
    cli_progress_end(&c);
    if (frc != HCOMP_OK) {
        cli_error("fsck", "%s", err.msg);
        cli_common_free(&c);
        return frc == HCOMP_E_NOTHCOMP || frc == HCOMP_E_VERSION || frc == HCOMP_E_NOENT
            ? CLI_USAGE : CLI_FAILED;
    }
    char a[32], b[32];
    printf("%s: %llu records, %llu segments, %llu live pieces checked (%llu damaged, %llu on "
           "other nodes), %s logical, %s of it unreadable\n", path, (unsigned long long) r.records,
           (unsigned long long) r.segments, (unsigned long long) r.live_pieces,
           (unsigned long long) r.bad_pieces, (unsigned long long) r.remote_pieces,
           cli_bytes(r.logical_size, a), cli_bytes(r.unreadable_bytes, b));
    if (r.segments_missing)
        printf("%s: %llu segment files holding live data are missing\n", path,
               (unsigned long long) r.segments_missing);
    printf("%s: %s\n", path, r.problems ? (c.repair ? "problems remain (see above)"
                                                     : "PROBLEMS FOUND (see above)")
                                        : (r.rewritten || r.rebuilt ? "repaired" : "clean"));
    cli_common_free(&c);
    return r.problems ? CLI_FAILED : CLI_OK;
}

/* Whether the command line gives --hint KEY=... (a hint's default is not a request). */
static int hint_given(int argc, char **argv, const char *key)
{
    size_t k = strlen(key);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--hint") == 0 && i + 1 < argc)
            a = argv[++i];
        else if (strncmp(a, "--hint=", 7) == 0)
            a += 7;
        else
            continue;
        if (strncmp(a, key, k) == 0 && a[k] == '=')
            return 1;
    }
    return 0;
}

int cmd_compact(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("compact", "ch", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 1) {
        cli_error("compact", "usage: hcomp compact FILE [--config C] [--hint hcomp_format=3]");
        rc = CLI_USAGE;
    }
    /* --hint hcomp_format=3: a file of an older version is made version 3 */
    char format[8] = "";
    unsigned version = 0;
    if (rc == CLI_OK && c.opts != NULL && hint_given(argc, argv, "hcomp_format") &&
        hcomp_options_get(c.opts, "hcomp_format", format, sizeof(format)) == HCOMP_OK)
        version = (unsigned) atoi(format);
    if (rc != CLI_OK) {
        cli_common_free(&c);
        return rc;
    }
    const char *path = c.argv[0];
    hcomp_tool_io io = cli_io(&c);
    hcomp_reclaim_result r;
    hcomp_error err;
    int crc = hcomp_compact_to(path, c.config, version, &io, &r, &err);
    cli_progress_end(&c);
    char a[32], b[32], d[32], m[32], n[32];
    if (r.coalesced_pieces)
        printf("%s: %llu small pieces (%s) written again as whole pieces\n", path,
               (unsigned long long) r.coalesced_pieces, cli_bytes(r.coalesced_bytes, a));
    if (r.ran)
        printf("%s: %s of dead pieces found; %s freed; %llu segment files removed; %llu live "
               "pieces (%s) moved out of mostly dead segments; mapping file %s -> %s%s\n", path,
               cli_bytes(r.dead_found, a), cli_bytes(r.bytes_freed, b),
               (unsigned long long) r.segments_removed, (unsigned long long) r.pieces_moved,
               cli_bytes(r.bytes_moved, d), cli_bytes(r.log_before, m),
               cli_bytes(r.log_rewritten ? r.log_after : r.log_before, n),
               r.log_kept ? " (kept: it has another owner or name, or a piece too scattered to "
               "list in one record)" : "");
    else if (!r.coalesced_pieces && crc == HCOMP_OK)
        printf("%s: nothing to reclaim\n", path);
    if (crc != HCOMP_OK) {
        cli_error("compact", "%s", err.msg);
        rc = crc == HCOMP_E_NOTHCOMP || crc == HCOMP_E_NOENT ? CLI_USAGE : CLI_FAILED;
    }
    cli_common_free(&c);
    return rc;
}

int cmd_orphans(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("orphans", "x", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 1) {
        cli_error("orphans", "usage: hcomp orphans DIR [--remove]");
        rc = CLI_USAGE;
    }
    if (rc != CLI_OK) {
        cli_common_free(&c);
        return rc;
    }
    const char *dir = c.argv[0];
    hcomp_tool_io io = cli_io(&c);
    hcomp_orphans_result r;
    hcomp_error err;
    int orc = hcomp_orphans(dir, c.remove, &io, &r, &err);
    if (orc != HCOMP_OK) {
        cli_error("orphans", "%s", err.msg);
        cli_common_free(&c);
        return CLI_FAILED;
    }
    char a[32], b[32];
    if (c.remove)
        printf("%s: %llu hcomp files; removed %llu segment directories no file here uses (%s), "
               "kept %llu\n", dir, (unsigned long long) r.files, (unsigned long long) r.removed,
               cli_bytes(r.removed_bytes, a), (unsigned long long) r.kept);
    else
        printf("%s: %llu hcomp files; %llu segment directories no file here uses (%s)%s\n", dir,
               (unsigned long long) r.files, (unsigned long long) r.orphans,
               cli_bytes(r.orphan_bytes, b),
               r.orphans ? ". A file moved to another directory with mv still uses those of its "
               "old name: if none was, hcomp orphans --remove removes them" : "");
    cli_common_free(&c);
    return c.remove && r.kept ? CLI_FAILED : CLI_OK;
}
