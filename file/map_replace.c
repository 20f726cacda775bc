/* Replacing a mapping file whole (fsck's repair, reclaiming's snapshot of the live
 * state): a temporary file beside it, synced, renamed over it, the directory synced, so
 * that every opener and every crash sees the old file or the new one, never a mix. */
#include "file_internal.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hcomp_map_replace(const char *path, const unsigned char *hdr, const hcomp_bytes *recs,
                      mode_t mode, const char *tag, hcomp_error *err)
{
    char tmp[PATH_MAX];
    uint32_t r = 0;
    hcomp_random_bytes(&r, sizeof(r));
    if (snprintf(tmp, sizeof(tmp), "%s.%s-%08x", path, tag, r) >= (int) sizeof(tmp))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "%s: creating %s", path, tmp);
    int rc = HCOMP_OK;
    if (fchmod(fd, mode & 07777) != 0 || hcomp_write_full(fd, hdr, HCOMP_MAP_HEADER_SIZE) != 0 ||
        (recs->len && hcomp_write_full(fd, recs->p, recs->len) != 0) || fsync(fd) != 0)
        rc = hcomp_fail_errno(err, errno, "%s: writing %s", path, tmp);
    if (close(fd) != 0 && rc == HCOMP_OK)
        rc = hcomp_fail_errno(err, errno, "%s: writing %s", path, tmp);
    if (rc == HCOMP_OK && rename(tmp, path) != 0)
        rc = hcomp_fail_errno(err, errno, "%s: replacing it with %s", path, tmp);
    if (rc != HCOMP_OK) {
        unlink(tmp);
        return rc;
    }
    /* the rename itself survives a crash only once the directory is synced */
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void) fsync(dfd);
        close(dfd);
    }
    return HCOMP_OK;
}
