/* hcomp_orphans: the segment directories in a directory that no hcomp file there uses
 * (left by rm, or by truncate(2) as PnetCDF's create does) are listed and, when asked,
 * removed; those of files in place, renamed within the directory or damaged are kept. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hcomp.h"
#include "hcomp_driver.h"   /* adopt_empty: a call of the driver's, tested */
#include "file/tools.h"

#define LEN 200000

typedef struct fixture {
    char base[256];
    char cfg[PATH_MAX];
    hcomp_options *opts;
    unsigned char data[LEN];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->base, sizeof(fx->base), "/tmp/hcomp-test-orphans-XXXXXX");
    assert_non_null(mkdtemp(fx->base));
    snprintf(fx->cfg, sizeof(fx->cfg), "%s/tiers.json", fx->base);
    FILE *f = fopen(fx->cfg, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"tiers\": [{\"name\": \"here\", \"path\": \"@filedir\", "
            "\"measure\": false}]}\n");
    assert_int_equal(fclose(f), 0);
    fx->opts = hcomp_options_new();
    assert_non_null(fx->opts);
    hcomp_error err;
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_config", fx->cfg, &err), HCOMP_OK);
    for (size_t i = 0; i < LEN; i++)
        fx->data[i] = (unsigned char) ((i / 7) % 251);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    assert_int_equal(t_rm_tree(fx->base), 0);
    hcomp_options_free(fx->opts);
    free(fx);
    return 0;
}

static void make_file(fixture *fx, const char *name)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", fx->base, name);
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(p, HCOMP_O_CREAT | HCOMP_O_RDWR, 0600, 1, fx->opts, &f,
                                     &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(f, fx->data, LEN, 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
}

static void expect_data(fixture *fx, const char *name)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", fx->base, name);
    hcomp_file *f;
    hcomp_error err;
    static unsigned char back[LEN];
    uint64_t got = 0;
    assert_int_equal(hcomp_file_open(p, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pread(f, back, LEN, 0, &got, &err), HCOMP_OK);
    assert_int_equal(got, LEN);
    assert_memory_equal(back, fx->data, LEN);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
}

/* how many ".NAME.*.hcd" directories there are beside the file NAME */
static int dirs_of(fixture *fx, const char *name)
{
    char prefix[300];
    snprintf(prefix, sizeof(prefix), ".%s.", name);
    DIR *d = opendir(fx->base);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
            strlen(e->d_name) == strlen(prefix) + 16 + 4;
    closedir(d);
    return n;
}

static void test_orphans(void **state)
{
    fixture *fx = *state;
    hcomp_error err;
    hcomp_orphans_result r;
    char p[PATH_MAX], q[PATH_MAX];
    make_file(fx, "kept.nc");
    make_file(fx, "old.nc");
    make_file(fx, "gone.nc");
    make_file(fx, "clobbered.nc");
    /* renamed within the directory: its records still name .old.nc.ID.hcd */
    snprintf(p, sizeof(p), "%s/old.nc", fx->base);
    snprintf(q, sizeof(q), "%s/new.nc", fx->base);
    assert_int_equal(rename(p, q), 0);
    snprintf(p, sizeof(p), "%s/gone.nc", fx->base);
    assert_int_equal(unlink(p), 0);
    snprintf(p, sizeof(p), "%s/clobbered.nc", fx->base);
    assert_int_equal(truncate(p, 0), 0);
    /* a symbolic link named like a segment directory is not one */
    snprintf(p, sizeof(p), "%s/.link.0123456789abcdef.hcd", fx->base);
    assert_int_equal(symlink(fx->base, p), 0);

    assert_int_equal(hcomp_orphans(fx->base, 0, NULL, &r, &err), HCOMP_OK);
    assert_int_equal(r.files, 2);          /* kept.nc, new.nc */
    assert_int_equal(r.orphans, 2);        /* gone.nc's, clobbered.nc's */
    assert_true(r.orphan_bytes > 0);
    assert_int_equal(r.removed, 0);
    assert_int_equal(dirs_of(fx, "gone.nc"), 1);

    /* the emptied file written anew (an hcomp file again, another id) */
    int adopted = 0;
    snprintf(p, sizeof(p), "%s/clobbered.nc", fx->base);
    assert_int_equal(hcomp_file_adopt_empty(p, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 1);
    make_file(fx, "clobbered.nc");
    assert_int_equal(dirs_of(fx, "clobbered.nc"), 2);

    assert_int_equal(hcomp_orphans(fx->base, 1, NULL, &r, &err), HCOMP_OK);
    assert_int_equal(r.files, 3);
    assert_int_equal(r.orphans, 2);
    assert_int_equal(r.removed, 2);
    assert_int_equal(r.kept, 0);
    assert_int_equal(r.removed_bytes, r.orphan_bytes);
    assert_int_equal(dirs_of(fx, "gone.nc"), 0);
    assert_int_equal(dirs_of(fx, "clobbered.nc"), 1);
    assert_int_equal(dirs_of(fx, "old.nc"), 1);
    expect_data(fx, "kept.nc");
    expect_data(fx, "new.nc");
    expect_data(fx, "clobbered.nc");
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    snprintf(p, sizeof(p), "%s/.link.0123456789abcdef.hcd", fx->base);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode));

    assert_int_equal(hcomp_orphans(fx->base, 1, NULL, &r, &err), HCOMP_OK);
    assert_int_equal(r.orphans, 0);
    /* hcomp files with no segment directory beside them (all their data on other tiers,
     * or none) are counted too */
    snprintf(q, sizeof(q), "%s/sub", fx->base);
    assert_int_equal(mkdir(q, 0700), 0);
    snprintf(p, sizeof(p), "%s/sub/empty.nc", fx->base);
    FILE *e = fopen(p, "w");
    assert_non_null(e);
    assert_int_equal(fclose(e), 0);
    assert_int_equal(hcomp_file_adopt_empty(p, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 1);
    assert_int_equal(hcomp_orphans(q, 0, NULL, &r, &err), HCOMP_OK);
    assert_int_equal(r.files, 1);
    assert_int_equal(r.orphans, 0);
    snprintf(p, sizeof(p), "%s/nowhere", fx->base);
    assert_int_not_equal(hcomp_orphans(p, 0, NULL, &r, &err), HCOMP_OK);
    assert_non_null(strstr(err.msg, "nowhere"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_orphans, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
