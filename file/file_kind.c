/* What kind of file a path names, for the ROMIO driver's decision at open (and
 * MPI_File_delete) between an hcomp file and a plain file passed through as ufs:
 * would handle it. Read-only: the file is never changed.
 *
 * An hcomp file is recognised by its mapping-file header (tiers/mapfile.h). A mapping
 * file damaged in its first bytes must never be taken for a plain file (its log read
 * as data would be wrong bytes), so also counted as hcomp (its open then fails and
 * says why) are: a non-empty file shorter than the magic that is a prefix of it (cut
 * inside the magic); a file whose first 8 bytes differ from the magic in at most 2
 * (a damaged magic); and a file of at least a header whose header checksum matches
 * when the magic is put back (a magic damaged beyond that, the rest of the header
 * intact: a 1 in 2^32 coincidence for other data). Every other regular file, empty
 * ones included, is plain. */
#include "hcomp.h"
#include "common/util.h"
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *hcomp_file_kind_name(int kind)
{
    switch (kind) {
    case HCOMP_FILE_KIND_MISSING:
        return "missing";
    case HCOMP_FILE_KIND_HCOMP:
        return "hcomp";
    case HCOMP_FILE_KIND_PLAIN:
        return "plain";
    case HCOMP_FILE_KIND_NOT_REGULAR:
        return "not-regular";
    default:
        return "unknown";
    }
}

static int looks_like_mapping_file(const unsigned char *b, long long got)
{
    if (got <= 0)
        return 0;
    if (got < 8)
        return memcmp(b, HCOMP_MAP_MAGIC, (size_t) got) == 0;
    int differ = 0;
    for (int i = 0; i < 8; i++)
        differ += b[i] != (unsigned char) HCOMP_MAP_MAGIC[i];
    if (differ <= 2)
        return 1;
    if (got >= HCOMP_MAP_HEADER_SIZE) {
        unsigned char h[HCOMP_MAP_HEADER_SIZE];
        memcpy(h, b, sizeof(h));
        memcpy(h, HCOMP_MAP_MAGIC, 8);
        if (hcomp_get_u32(h + 60) == hcomp_crc32(h, 60))
            return 1;
    }
    return 0;
}

int hcomp_file_kind(const char *path, int *kind, hcomp_error *err)
{
    hcomp_ok(err);
    *kind = -1;
    if (path == NULL || path[0] == '\0')
        return hcomp_fail(err, HCOMP_E_INVAL, "empty file name");
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) {
            *kind = HCOMP_FILE_KIND_MISSING;
            return HCOMP_OK;
        }
        return hcomp_fail_errno(err, errno, "%s: cannot look at the file", path);
    }
    if (!S_ISREG(st.st_mode)) {
        *kind = HCOMP_FILE_KIND_NOT_REGULAR;
        return HCOMP_OK;
    }
    /* O_NONBLOCK: if the name became a FIFO since the stat, do not wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) {      /* removed since the stat */
            *kind = HCOMP_FILE_KIND_MISSING;
            return HCOMP_OK;
        }
        return hcomp_fail_errno(err, errno, "%s: cannot read the file to tell whether it is an "
                                "hcomp file", path);
    }
    int rc = hcomp_file_kind_fd(fd, kind, err);
    close(fd);
    if (rc != HCOMP_OK) {
        char msg[HCOMP_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        hcomp_fail(err, rc, "%s: %s", path, msg);
    }
    return rc;
}

int hcomp_file_kind_fd(int fd, int *kind, hcomp_error *err)
{
    hcomp_ok(err);
    *kind = -1;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "cannot look at the file");
    if (!S_ISREG(st.st_mode)) {
        *kind = HCOMP_FILE_KIND_NOT_REGULAR;
        return HCOMP_OK;
    }
    if (st.st_size == 0) {          /* the common case of a new file: no read needed */
        *kind = HCOMP_FILE_KIND_PLAIN;
        return HCOMP_OK;
    }
    unsigned char b[HCOMP_MAP_HEADER_SIZE];
    long long got = hcomp_pread_full(fd, b, sizeof(b), 0);
    if (got < 0)
        return hcomp_fail_errno(err, errno, "cannot read the file to tell whether it is an hcomp "
                                "file");
    *kind = looks_like_mapping_file(b, got) ? HCOMP_FILE_KIND_HCOMP : HCOMP_FILE_KIND_PLAIN;
    return HCOMP_OK;
}
