/* hcomp export / import / cat: the bytes of an hcomp file, in and out as plain bytes,
 * so that data is never locked into hcomp's format. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (16u << 20)   /* bytes per read or write: one task for the engine */
#define HOLE_BLOCK (64u << 10)  /* zeros in blocks this large stay holes, both ways */

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t) w;
    }
    return 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Write n bytes, seeking over blocks of zeros (they read back as zeros). */
static int write_sparse(int fd, const unsigned char *p, size_t n)
{
    for (size_t at = 0; at < n; at += HOLE_BLOCK) {
        size_t len = n - at < HOLE_BLOCK ? n - at : HOLE_BLOCK;
        if (all_zero(p + at, len) ? lseek(fd, (off_t) len, SEEK_CUR) < 0
                                  : write_all(fd, p + at, len) != 0)
            return -1;
    }
    return 0;
}

/* Logical bytes [off, off+len) of path to fd; with sparse, holes stay holes in a
 * regular output file. */
static int copy_out(const char *cmd, cli_common *c, const char *path, int fd, const char *out_name,
                    uint64_t off, uint64_t len, int whole, int sparse)
{
    hcomp_file *f;
    hcomp_error err;
    hcomp_options_set(c->opts, "hcomp_config", "embedded", NULL);  /* reading needs no tiers */
    if (hcomp_file_open(path, HCOMP_O_RDONLY, 0, 1, c->opts, &f, &err) != HCOMP_OK) {
        cli_error(cmd, "%s", err.msg);
        return CLI_FAILED;
    }
    uint64_t size;
    if (hcomp_file_size(f, &size, &err) != HCOMP_OK) {
        cli_error(cmd, "%s", err.msg);
        hcomp_file_close(f, NULL);
        return CLI_FAILED;
    }
    uint64_t end = whole || off + len > size || off + len < off ? size : off + len;
    struct stat st;
    int seekable = sparse && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    unsigned char *buf = malloc(CHUNK);
    int rc = buf ? CLI_OK : CLI_FAILED;
    if (buf == NULL)
        cli_error(cmd, "out of memory");
    for (uint64_t at = off; at < end && rc == CLI_OK;) {
        uint64_t want = end - at < CHUNK ? end - at : CHUNK, got;
        if (hcomp_file_pread(f, buf, want, at, &got, &err) != HCOMP_OK) {
            cli_error(cmd, "%s", err.msg);
            rc = CLI_FAILED;
            break;
        }
        if (got == 0)
            break;
        if (seekable ? write_sparse(fd, buf, got) != 0 : write_all(fd, buf, got) != 0) {
            cli_error(cmd, "writing %s: %s", out_name, strerror(errno));
            rc = CLI_FAILED;
        }
        at += got;
        cli_progress(c, cmd, at - off, end - off);
    }
    cli_progress_end(c);
    /* a trailing hole skipped by seeking still counts in the output's size */
    if (rc == CLI_OK && seekable && ftruncate(fd, lseek(fd, 0, SEEK_CUR)) != 0) {
        cli_error(cmd, "writing %s: %s", out_name, strerror(errno));
        rc = CLI_FAILED;
    }
    free(buf);
    hcomp_file_close(f, NULL);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("export", "f", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 2) {
        cli_error("export", "usage: hcomp export FILE OUT   (OUT \"-\": standard output)");
        rc = CLI_USAGE;
    }
    if (rc != CLI_OK) {
        cli_common_free(&c);
        return rc;
    }
    const char *out = c.argv[1];
    int fd = 1;
    if (strcmp(out, "-") != 0) {
        fd = open(out, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (c.force ? O_TRUNC : O_EXCL),
                  0666);
        if (fd < 0) {
            cli_error("export", "%s: %s%s", out, strerror(errno),
                      errno == EEXIST ? " (--force replaces it)" : "");
            cli_common_free(&c);
            return CLI_FAILED;
        }
    }
    rc = copy_out("export", &c, c.argv[0], fd, out, 0, 0, 1, fd != 1);
    if (fd != 1 && (fsync(fd) != 0 || close(fd) != 0) && rc == CLI_OK) {
        cli_error("export", "writing %s: %s", out, strerror(errno));
        rc = CLI_FAILED;
    }
    if (rc != CLI_OK && fd != 1)
        unlink(out);        /* no half-exported file that looks whole */
    cli_common_free(&c);
    return rc;
}

int cmd_cat(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("cat", "ol", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 1) {
        cli_error("cat", "usage: hcomp cat FILE [--offset N] [--length N]");
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK) {
        c.progress = 0;     /* the bytes go to the terminal too */
        rc = copy_out("cat", &c, c.argv[0], 1, "standard output", c.offset, c.length,
                      !c.have_length, 0);
    }
    cli_common_free(&c);
    return rc;
}

/* Write the runs of buf that are not whole blocks of zeros, one task per run. */
static int write_nonzero(hcomp_file *f, const unsigned char *buf, size_t n, uint64_t off,
                         hcomp_error *err)
{
    size_t at = 0;
    while (at < n) {
        size_t len = n - at < HOLE_BLOCK ? n - at : HOLE_BLOCK;
        if (all_zero(buf + at, len)) {
            at += len;
            continue;
        }
        size_t end = at + len;
        while (end < n) {
            size_t l = n - end < HOLE_BLOCK ? n - end : HOLE_BLOCK;
            if (all_zero(buf + end, l))
                break;
            end += l;
        }
        int rc = hcomp_file_pwrite(f, buf + at, end - at, off + at, err);
        if (rc != HCOMP_OK)
            return rc;
        at = end;
    }
    return HCOMP_OK;
}

int cmd_import(int argc, char **argv)
{
    cli_common c;
    int rc = cli_parse("import", "chf", argc, argv, &c);
    if (rc == CLI_OK && c.argc != 2) {
        cli_error("import", "usage: hcomp import IN FILE [--config C] [--hint K=V]... [--force]");
        rc = CLI_USAGE;
    }
    if (rc != CLI_OK) {
        cli_common_free(&c);
        return rc;
    }
    const char *in = c.argv[0], *path = c.argv[1];
    int fd = strcmp(in, "-") == 0 ? 0 : open(in, O_RDONLY | O_CLOEXEC);
    hcomp_error err;
    if (fd < 0) {
        cli_error("import", "%s: %s", in, strerror(errno));
        cli_common_free(&c);
        return CLI_FAILED;
    }
    struct stat st;
    uint64_t total = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t) st.st_size : 0;
    if (c.force && access(path, F_OK) == 0 && hcomp_file_delete(path, &err) != HCOMP_OK) {
        cli_error("import", "%s (not replaced)", err.msg);
        rc = CLI_FAILED;
    }
    hcomp_file *f = NULL;
    if (rc == CLI_OK && hcomp_file_open(path, HCOMP_O_WRONLY | HCOMP_O_CREAT | HCOMP_O_EXCL,
                                        0666, 1, c.opts, &f, &err) != HCOMP_OK) {
        cli_error("import", "%s%s", err.msg, err.code == HCOMP_E_EXIST ? " (--force replaces it)" : "");
        rc = CLI_FAILED;
    }
    unsigned char *buf = rc == CLI_OK ? malloc(CHUNK) : NULL;
    if (rc == CLI_OK && buf == NULL) {
        cli_error("import", "out of memory");
        rc = CLI_FAILED;
    }
    uint64_t at = 0;
    while (rc == CLI_OK) {
        size_t n = 0;       /* fill a whole chunk: one task per chunk, even from a pipe */
        while (n < CHUNK) {
            ssize_t r = read(fd, buf + n, CHUNK - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                cli_error("import", "reading %s: %s", in, strerror(errno));
                rc = CLI_FAILED;
            }
            if (r <= 0)
                break;
            n += (size_t) r;
        }
        if (rc != CLI_OK || n == 0)
            break;
        if (write_nonzero(f, buf, n, at, &err) != HCOMP_OK) {
            cli_error("import", "%s", err.msg);
            rc = CLI_FAILED;
        }
        at += n;
        cli_progress(&c, "import", at, total);
    }
    cli_progress_end(&c);
    /* zeros were left as holes: the size still covers them */
    if (rc == CLI_OK && hcomp_file_extend(f, at, &err) != HCOMP_OK) {
        cli_error("import", "%s", err.msg);
        rc = CLI_FAILED;
    }
    if (rc == CLI_OK && hcomp_file_sync(f, &err) != HCOMP_OK) {
        cli_error("import", "%s", err.msg);
        rc = CLI_FAILED;
    }
    if (f && hcomp_file_close(f, &err) != HCOMP_OK && rc == CLI_OK) {
        cli_error("import", "%s", err.msg);
        rc = CLI_FAILED;
    }
    if (f && rc != CLI_OK)
        hcomp_file_delete(path, &err);     /* nothing half-imported left behind */
    free(buf);
    if (fd != 0)
        close(fd);
    cli_common_free(&c);
    return rc;
}
