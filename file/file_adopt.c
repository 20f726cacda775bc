/* An empty regular file opened for writing through hcomp: becomes an empty hcomp file.
 *
 * Libraries empty a file before they write it anew with POSIX calls on the bare path:
 * PnetCDF's ncmpi_create (NC_CLOBBER, its default) has rank 0 truncate(2) the file to 0
 * and then opens it with MPI_MODE_CREATE; scripts use `: > file` or touch(1). Passed
 * through as a plain file, every rewrite of such a checkpoint would be stored
 * uncompressed. An empty file holds nothing that can be lost, so it gets a mapping-file
 * header in place (its inode, owner and mode kept).
 *
 * The segment directories of an hcomp file emptied so (".NAME.ID.hcd" beside it) are not
 * removed here: nothing tells them from those of an hcomp file renamed away from NAME,
 * whose records name them by absolute path (docs/FORMAT.md, SEGMENT), so a rotation such
 * as `mv ckpt ckpt.old; touch ckpt` would lose ckpt.old's data.
 *
 * It is done only when nobody holds the file: not while an hcomp opener has it open (the
 * openers' lock) or one closes or deletes it (flock). The ROMIO driver's open decision
 * asks hcomp_file_adoptable_empty, once, and leaves the header to its opens
 * (file_open.c, load_header: the first writable one writes it, after the configuration
 * and the tiers are checked), so an open that fails on those leaves the file empty. */
#include "file_internal.h"
#include "common/util.h"
#include "common/clock.h"

#define ADOPT_WRITEBACK_WAIT_S 600.0     /* as hcomp_drain_wait's default */

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int adopt(const char *path, int write_header, int *adopted, hcomp_error *err)
{
    hcomp_ok(err);
    *adopted = 0;
    if (path == NULL || path[0] == '\0')
        return hcomp_fail(err, HCOMP_E_INVAL, "empty file name");
    /* O_NOFOLLOW: a symbolic link is left as it is (the file stays plain); O_NONBLOCK: a
     * FIFO put there since the caller looked must not wait for a writer */
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return HCOMP_OK;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) {
        close(fd);
        return HCOMP_OK;
    }
    int rc = HCOMP_OK;
    /* closed handles still moving the file's pieces (hcomp_drain=writeback) hold its locks
     * until they are done: this process's are waited for, and other processes' for as
     * long as they hold the write-back lock (a program that empties its checkpoint and
     * writes it anew right after closing it, as PnetCDF's ncmpi_create does) */
    hcomp_writeback_finish(path);
    double t0 = hcomp_now();
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            /* an hcomp opener of the (emptied) mapping file holds the openers' lock */
            if (hcomp_open_lock_exclusive(fd, 0) == 0 || errno == ENOLCK || errno == EINVAL ||
                errno == EOPNOTSUPP)
                break;
            flock(fd, LOCK_UN);
        }
        if (hcomp_drain_lock_held(fd) == 1 && hcomp_now() - t0 < ADOPT_WRITEBACK_WAIT_S) {
            struct timespec nap = {0, 20000000L};
            nanosleep(&nap, NULL);
            continue;
        }
        close(fd);
        return HCOMP_OK;       /* held by an opener: it stays as it is */
    }
    if (fstat(fd, &st) != 0 || st.st_size != 0)
        goto out;
    if (!write_header)
        *adopted = 1;
    else
        rc = hcomp_map_header_if_empty(fd, path, HCOMP_MAP_VERSION, adopted, err);
out:
    hcomp_open_unlock(fd);
    flock(fd, LOCK_UN);
    close(fd);
    return rc;
}

int hcomp_file_adopt_empty(const char *path, int *adopted, hcomp_error *err)
{
    return adopt(path, 1, adopted, err);
}

int hcomp_file_adoptable_empty(const char *path, int *adoptable, hcomp_error *err)
{
    return adopt(path, 0, adoptable, err);
}
