/* Helpers shared by the unit tests. */
#ifndef HCOMP_TEST_TUTIL_H
#define HCOMP_TEST_TUTIL_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int tutil_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove the tree at path (a test's temporary directory), not following links. */
static inline int t_rm_tree(const char *path)
{
    return nftw(path, tutil_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
