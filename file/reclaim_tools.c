/* What `hcomp compact` and `hcomp info` ask about space: a full reclaim on demand, and
 * the footprint of a file as the file systems count it beside what its log says. */
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int hcomp_compact(const char *path, const char *config, const hcomp_tool_io *io,
                  hcomp_reclaim_result *res, hcomp_error *err)
{
    return hcomp_compact_to(path, config, 0, io, res, err);
}

int hcomp_compact_to(const char *path, const char *config, unsigned version,
                     const hcomp_tool_io *io, hcomp_reclaim_result *res, hcomp_error *err)
{
    memset(res, 0, sizeof(*res));
    hcomp_options *opts = hcomp_options_new();
    if (opts == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    int rc = HCOMP_OK;
    if (config && config[0])
        rc = hcomp_options_set(opts, "hcomp_config", config, err);
    if (rc == HCOMP_OK)
        rc = hcomp_options_set(opts, "hcomp_reclaim", "never", err);    /* this is it */
    hcomp_file *f = NULL;
    if (rc == HCOMP_OK)
        rc = hcomp_file_open(path, HCOMP_O_RDWR, 0, 1, opts, &f, err);
    hcomp_options_free(opts);
    if (rc != HCOMP_OK)
        return rc;
    if (version > f->hdr.version) {
        if (version > HCOMP_MAP_VERSION) {
            hcomp_file_close(f, NULL);
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: format version %u is newer than this "
                              "library's %d", path, version, HCOMP_MAP_VERSION);
        }
        f->upgrade_to = version;
    }
    if (!f->open_locked)
        rc = hcomp_fail(err, HCOMP_E_UNSUPPORTED, "%s: its file system has no byte-range locks, "
                        "so no one can tell whether another process has it open; nothing was "
                        "reclaimed", path);
    else if (hcomp_open_lock_exclusive(f->map_fd, 0) != 0)
        rc = hcomp_fail(err, HCOMP_E_IO, "%s is open in another process (a running job?); "
                        "compact it once that has closed it", path);
    uint64_t pieces = 0, bytes = 0;
    if (rc == HCOMP_OK)
        rc = hcomp_coalesce_small(f, &pieces, &bytes, err);
    if (rc == HCOMP_OK)
        rc = hcomp_reclaim(f, 1, io, res, err);
    res->coalesced_pieces = pieces;
    res->coalesced_bytes = bytes;
    if (rc == HCOMP_OK && res->damaged)
        rc = hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the mapping file is damaged; nothing was "
                        "reclaimed (run hcomp fsck --repair first)", path);
    hcomp_error cerr;
    int crc = hcomp_file_close(f, &cerr);
    if (rc == HCOMP_OK && crc != HCOMP_OK) {
        *err = cerr;
        rc = crc;
    }
    return rc;
}

static size_t tier_slot(hcomp_footprint *fp, const char *name)
{
    for (size_t i = 0; i < fp->ntiers; i++)
        if (strcmp(fp->tier[i].name, name) == 0)
            return i;
    size_t max = sizeof(fp->tier) / sizeof(fp->tier[0]);
    if (fp->ntiers == max)
        return max - 1;
    snprintf(fp->tier[fp->ntiers].name, sizeof(fp->tier[0].name), "%s", name);
    return fp->ntiers++;
}

int hcomp_footprint_path(const char *path, hcomp_footprint *fp, hcomp_error *err)
{
    memset(fp, 0, sizeof(*fp));
    hcomp_file *f;
    int rc = hcomp_file_open_replay(path, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    struct stat st;
    if (fstat(f->map_fd, &st) == 0)
        fp->map_bytes = (uint64_t) st.st_size + hcomp_wlog_bytes(f);     /* the writer logs too */
    hcomp_seg_use *use;
    unsigned char *live;
    if ((rc = hcomp_reclaim_survey(f, &use, &live, err)) != HCOMP_OK) {
        hcomp_file_close(f, NULL);
        return rc;
    }
    for (size_t s = 0; s < f->nsegs; s++) {
        const hcomp_segment *sg = &f->segs[s];
        size_t t = tier_slot(fp, sg->tier);
        fp->live += use[s].live;
        fp->tier[t].live += use[s].live;
        if (sg->path == NULL)
            continue;
        if (lstat(sg->path, &st) != 0) {
            /* removed by a reclaim (only dead pieces left in the log), or lost */
            if (use[s].live_pieces && use[s].reachable)
                fp->segments_missing++;
            continue;
        }
        fp->segments++;
        if (use[s].live_pieces == 0)
            fp->segments_dead++;
        fp->dead += use[s].recorded - use[s].live;
        fp->tier[t].dead += use[s].recorded - use[s].live;
        fp->allocated += (uint64_t) st.st_blocks * 512u;
        fp->tier[t].allocated += (uint64_t) st.st_blocks * 512u;
    }
    free(use);
    free(live);
    return hcomp_file_close(f, err);
}
