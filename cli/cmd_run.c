/* hcomp run PROGRAM [ARGS...]: PROGRAM with the POSIX read adapter (libhcomp_posix.so)
 * preloaded, so that it reads hcomp files in place (docs/TOOLS.md, "Reading hcomp files
 * with serial tools"; the adapter itself: docs/POSIX.md).
 *
 * The hcomp tool itself reads mapping files as they are, so it never keeps the
 * adapter: started with it preloaded (by a script run under `hcomp run`), it starts
 * itself again without it (cli_drop_adapter). */
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADAPTER "libhcomp_posix.so"

#ifndef HCOMP_LIBDIR
#define HCOMP_LIBDIR "/usr/local/lib"
#endif

static int is_adapter(const char *entry, size_t len)
{
    const char *base = entry;
    for (size_t i = 0; i < len; i++)
        if (entry[i] == '/')
            base = entry + i + 1;
    return (size_t) (entry + len - base) >= strlen("libhcomp_posix") &&
           strncmp(base, "libhcomp_posix", strlen("libhcomp_posix")) == 0;
}

/* LD_PRELOAD without the adapter (entries are separated by ':' or spaces) */
static char *without_adapter(const char *preload, int *found)
{
    char *out = malloc(strlen(preload) + 1);
    if (out == NULL)
        return NULL;
    size_t n = 0;
    *found = 0;
    for (const char *p = preload; *p;) {
        size_t len = strcspn(p, ": ");
        if (len > 0 && is_adapter(p, len))
            *found = 1;
        else if (len > 0) {
            if (n > 0)
                out[n++] = ':';
            memcpy(out + n, p, len);
            n += len;
        }
        p += len;
        if (*p)
            p++;
    }
    out[n] = '\0';
    return out;
}

void cli_drop_adapter(char **argv)
{
    const char *preload = getenv("LD_PRELOAD");
    int found = 0;
    char *rest = preload ? without_adapter(preload, &found) : NULL;
    if (found) {
        if (rest[0])
            setenv("LD_PRELOAD", rest, 1);
        else
            unsetenv("LD_PRELOAD");
        execv("/proc/self/exe", argv);
        fprintf(stderr, "hcomp: started with %s preloaded and cannot start again without it "
                "(%s); unset LD_PRELOAD\n", ADAPTER, strerror(errno));
        exit(CLI_FAILED);
    }
    free(rest);
}

/* $HCOMP_POSIX_LIB, else lib/ beside this program's bin/, else the configured libdir */
static int find_adapter(char *out, size_t n)
{
    const char *env = getenv("HCOMP_POSIX_LIB");
    if (env && env[0]) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len > 0) {
        self[len] = '\0';
        snprintf(out, n, "%s/../lib/" ADAPTER, dirname(self));
        if (access(out, R_OK) == 0)
            return 0;
    }
    snprintf(out, n, "%s/" ADAPTER, HCOMP_LIBDIR);
    return access(out, R_OK) == 0 ? 0 : -1;
}

int cmd_run(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--") == 0)
        first = 2;
    if (argc <= first || argv[first][0] == '-') {
        cli_error("run", "usage: hcomp run PROGRAM [ARGS...] (PROGRAM reads hcomp files as the "
                  "plain files they stand for)");
        return CLI_USAGE;
    }
    char lib[PATH_MAX + 32];
    if (find_adapter(lib, sizeof(lib)) != 0) {
        cli_error("run", "the POSIX read adapter was not found (%s; set HCOMP_POSIX_LIB to its path)",
                  lib);
        return CLI_FAILED;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(need);
    if (preload == NULL) {
        cli_error("run", "out of memory");
        return CLI_FAILED;
    }
    /* after what is there already: a sanitizer's runtime must stay first */
    snprintf(preload, need, "%s%s%s", old && old[0] ? old : "", old && old[0] ? ":" : "", lib);
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    execvp(argv[first], argv + first);
    cli_error("run", "%s: cannot run it (%s)", argv[first], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
