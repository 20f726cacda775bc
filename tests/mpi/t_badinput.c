/* Bad input: every case is a clear MPI error (the right class, a message naming the file
 * and the cause), never a crash or a hang, and nothing is created or changed.
 * (t_errors covers the plain cases: malformed JSON, a bad capacity, missing
 * configuration or tier directory, bad hints; t_plain: plain files through hcomp:.)
 *
 *   t_badinput TARGET [CONFIG]
 *
 * hcomp: and ufs: (the semantics must match):
 *   a file name of NAME_MAX+1 bytes, a path of more than PATH_MAX bytes: open (create,
 *   read-only) and delete fail with MPI_ERR_BAD_FILE (the MPI standard's class for "path
 *   name too long", as ufs: gives); a name of exactly NAME_MAX bytes works
 * hcomp: only:
 *   a tier path that is a regular file, a device, or below a regular file (private
 *   tiers too): MPI_ERR_NO_SUCH_FILE or MPI_ERR_ACCESS naming the tier and the path
 *   a directory (MPI_ERR_BAD_FILE), /dev/null, a FIFO opened with hcomp: - MPI_ERR_IO naming the file, the
 *   file unchanged (a watchdog fails the test if an open hangs)
 *   random binary garbage is a plain file: opened with hcomp: it passes through
 *   (read-only, read-write, create) and reads back unchanged, and MPI_File_delete
 *   through hcomp: removes it, as ufs: would (t_plain tests the rest); an empty file
 *   reads nothing in every mode, and is an empty hcomp file after the writable opens
 *   hostile configuration files: 100000 nested arrays, nesting inside a tier, huge
 *   numbers (1e400, 2^64, 30 digits, "1e30TiB", "1e400GB/s"), wrong types (root array,
 *   tiers as a string / number / null, name as a number, path as an array, capacity as
 *   an object, version 1.5 / "1" / true, private "yes", scope 1), NUL bytes (raw, inside
 *   the JSON and after a valid document; "\u0000" in a name and in a path), invalid
 *   UTF-8, an empty file, 5 MiB of JSON, 100000 tiers, a 1 MB tier name, a tier path
 *   of 5000 bytes, a directory as the configuration: each MPI_ERR_INFO_VALUE naming the
 *   configuration file. */
#include "tfault.h"

#include <limits.h>
#include <signal.h>

static const char *volatile step = "start";
static int my_rank;

static void watchdog(int sig)
{
    (void)sig;
    char msg[600];
    int n = snprintf(msg, sizeof msg, "FAIL t_badinput rank %d: %s: no answer after 30 s (hung)\n",
                     my_rank, step);
    if (write(2, msg, (size_t)n) < 0) {
    }
    _exit(3);
}

static void fails(tctx *t, const char *name, int amode, MPI_Info info, int c1, int c2,
                  const char *what, const char *s1, const char *s2)
{
    step = what;
    alarm(30);
    t_open_fails(t, MPI_COMM_WORLD, name, amode, info, c1, c2, what, s1, s2, NULL);
    alarm(0);
}

/* ---- names too long --------------------------------------------------------------- */

static void long_names(tctx *t)
{
    static char name[8192], path[8192];
    const char *dir = t_dirname(t->path);
    MPI_Info info = t_info(t, NULL);
    for (int k = 0; k < 2; k++) {
        int n = snprintf(path, sizeof path, "%s/", dir);
        if (k == 0) { /* one component of NAME_MAX + 1 bytes */
            for (int i = 0; i < NAME_MAX + 1; i++)
                path[n++] = 'n';
            path[n] = 0;
        } else { /* more than PATH_MAX bytes in all */
            while (n < PATH_MAX + 100)
                n += snprintf(path + n, sizeof path - (size_t)n, "d123456789/");
            snprintf(path + n, sizeof path - (size_t)n, "f");
        }
        snprintf(name, sizeof name, "%s%s", t->prefix, path);
        const char *what = k == 0 ? "a file name of NAME_MAX+1 bytes" : "a path over PATH_MAX bytes";
        fails(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, MPI_ERR_BAD_FILE, -1,
              t_fmt("%s, create", what), NULL, NULL);
        fails(t, name, MPI_MODE_RDONLY, info, MPI_ERR_BAD_FILE, -1, t_fmt("%s, read-only", what),
              NULL, NULL);
        if (t->rank == 0) {
            int rc = MPI_File_delete(name, info);
            TASSERT(t_err_class(rc) == MPI_ERR_BAD_FILE, "%s: delete: %s", what,
                    rc ? t_errstr(rc) : "succeeded");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* exactly NAME_MAX bytes: works (hcomp's own names derived from it must fit too) */
    int n = snprintf(path, sizeof path, "%s/", dir);
    for (int i = 0; i < NAME_MAX; i++)
        path[n++] = 'm';
    path[n] = 0;
    snprintf(name, sizeof name, "%s%s", t->prefix, path);
    uint8_t w[10000], r[10000];
    MPI_Status st;
    t_fill(w, sizeof w, 0, 5);
    t_delete_quiet(t, name, info);
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t->rank == 0)
        TCHK(MPI_File_write_at(fh, 0, w, sizeof w, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, name, MPI_MODE_RDONLY, info);
    TCHK(MPI_File_read_at_all(fh, 0, r, sizeof r, MPI_BYTE, &st));
    TEXPECT_BYTES(r, w, sizeof w, 0, "a file name of NAME_MAX bytes");
    TCHK(MPI_File_close(&fh));
    t_delete(t, name, info);
    t_log(t, "a file name of exactly NAME_MAX bytes: written, read back, deleted");
    MPI_Info_free(&info);
}

/* ---- tier paths that are not directories ---------------------------------------------- */

static void bad_tier_paths(tctx *t)
{
    const char *plain = t_path(t, ".plainfile");
    char plain_c[4200], below[4300], json[9000], cfg[4200];
    snprintf(plain_c, sizeof plain_c, "%s", plain);
    snprintf(below, sizeof below, "%s/sub", plain_c);
    snprintf(cfg, sizeof cfg, "%s", t_path(t, ".tiers.json"));
    t_write_text(t, plain_c, "not a directory\n");
    const char *paths[3] = {plain_c, "/dev/null", below};
    const char *whats[3] = {"a regular file", "a device", "a path below a regular file"};
    for (int priv = 0; priv < 2; priv++)
        for (int i = 0; i < 3; i++) {
            snprintf(json, sizeof json,
                     "{\"version\":1,\"tiers\":[{\"name\":\"odd\",\"path\":\"%s\",\"capacity\":"
                     "\"1MiB\",\"private\":%s},{\"name\":\"rest\",\"path\":\"@filedir\"}]}\n",
                     paths[i], priv ? "true" : "false");
            t_write_text(t, cfg, json);
            MPI_Info ci = t_info(t, "hcomp_config", cfg, NULL);
            const char *what = t_fmt("%stier path that is %s", priv ? "private " : "", whats[i]);
            char w[200];
            snprintf(w, sizeof w, "%s", what);
            fails(t, t_name(t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci, MPI_ERR_NO_SUCH_FILE,
                  MPI_ERR_ACCESS, w, "\"odd\"", paths[i]);
            MPI_Barrier(MPI_COMM_WORLD);
            if (t->rank == 0)
                TASSERT(!t_exists(t_path(t, ".new")), "%s: the failed open created the file", w);
            MPI_Info_free(&ci);
        }
    t_unlink(t, cfg);
    t_unlink(t, plain_c);
}

/* ---- things that are not hcomp files -------------------------------------------------- */

static void not_hcomp_files(tctx *t)
{
    MPI_Info info = t_info(t, NULL);
    char garbage[4200], empty[4200], dir[4200], fifo[4200], name[4300];
    snprintf(garbage, sizeof garbage, "%s", t_path(t, ".garbage"));
    snprintf(empty, sizeof empty, "%s", t_path(t, ".empty"));
    snprintf(dir, sizeof dir, "%s", t_path(t, ".dir"));
    snprintf(fifo, sizeof fifo, "%s", t_path(t, ".fifo"));
    static uint8_t junk[65536];
    t_fill_random(junk, sizeof junk, 4242);
    int err = 0;
    if (t->rank == 0) {
        err = t_write_bytes(garbage, junk, sizeof junk, 0, 1);
        if (!err)
            err = t_write_bytes(empty, junk, 0, 0, 1);
        if (!err && mkdir(dir, 0700) != 0)
            err = errno;
        if (!err && mkfifo(fifo, 0600) != 0)
            err = errno;
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("making the bad files: %s", strerror(err));
    struct {
        const char *path, *what;
        int modes; /* 1 read-only, 2 read-write, 4 create */
        int cls;   /* a directory's name is a bad file name, as ufs: says */
    } cases[] = {
        {dir, "a directory", 7, MPI_ERR_BAD_FILE},
        {"/dev/null", "/dev/null", 3, MPI_ERR_IO},
        {fifo, "a FIFO", 7, MPI_ERR_IO},
    };
    static const int amode[3] = {MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_RDWR | MPI_MODE_CREATE};
    static const char *const mname[3] = {"read-only", "read-write", "create"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(name, sizeof name, "hcomp:%s", cases[c].path);
        for (int m = 0; m < 3; m++) {
            if (!(cases[c].modes & (1 << m)))
                continue;
            char what[200];
            snprintf(what, sizeof what, "%s opened with hcomp:, %s", cases[c].what, mname[m]);
            fails(t, name, amode[m], info, cases[c].cls, -1, what, cases[c].path, NULL);
        }
    }
    /* garbage is a plain file: it passes through, unchanged; so does an empty file opened
     * read-only, which the first writable open makes an empty hcomp file (docs/USING.md, "Plain
     * files pass through"): each open reads nothing from it */
    const char *plain[2] = {garbage, empty};
    const size_t plain_len[2] = {sizeof junk, 0};
    static uint8_t back[sizeof junk + 1];
    for (int c = 0; c < 2; c++) {
        snprintf(name, sizeof name, "hcomp:%s", plain[c]);
        for (int m = 0; m < 3; m++) {
            MPI_File fh = t_open(t, name, amode[m], info);
            MPI_Status st;
            memset(back, 0, sizeof back);
            /* independent: a collective read past the end reports the whole count on
             * ufs: (ROMIO's two-phase read), an independent one what was there */
            TCHK(MPI_File_read_at(fh, 0, back, (int)sizeof back, MPI_BYTE, &st));
            TASSERT(t_count(&st) == (int)plain_len[c] && memcmp(back, junk, plain_len[c]) == 0,
                    "%s through hcomp:, %s: read %d bytes, not its %zu", plain[c], mname[m],
                    t_count(&st), plain_len[c]);
            TCHK(MPI_File_close(&fh));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        size_t n;
        unsigned char *b = t_slurp(garbage, &n);
        TASSERT(b && n == sizeof junk && memcmp(b, junk, n) == 0,
                "the garbage file was changed by the opens through hcomp:");
        free(b);
        b = t_slurp(empty, &n);
        TASSERT(b && n == 64 && memcmp(b, "HCOMPMAP", 8) == 0,
                "the empty file opened read-write through hcomp: is not an empty hcomp file "
                "(%zu bytes)", b ? n : 0);
        free(b);
        TCHK(MPI_File_delete(t_fmt("hcomp:%s", empty), info));
        TASSERT(!t_exists(empty), "MPI_File_delete of an empty hcomp file left it");
        TASSERT(t_dir_entries(dir, NULL, 0) == 0, "the directory got entries");
        TCHK(MPI_File_delete(t_fmt("hcomp:%s", garbage), info));
        TASSERT(!t_exists(garbage), "MPI_File_delete of a plain file through hcomp: left it");
        int rc = MPI_File_delete(t_fmt("hcomp:%s", dir), info);
        TASSERT(t_err_class(rc) == MPI_ERR_BAD_FILE && t_exists(dir),     /* as ufs: */
                "MPI_File_delete of a directory through hcomp: %s", rc ? t_errstr(rc) : "succeeded");
    }
    t_unlink(t, empty);
    t_unlink(t, fifo);
    t_rmdir(t, dir);
    MPI_Info_free(&info);
}

/* ---- hostile configuration files ------------------------------------------------------ */

static char *repeat(const char *pre, const char *unit, size_t times, const char *post)
{
    size_t lu = strlen(unit), lp = strlen(pre), lq = strlen(post);
    char *s = t_malloc(lp + lu * times + lq + 1);
    memcpy(s, pre, lp);
    for (size_t i = 0; i < times; i++)
        memcpy(s + lp + i * lu, unit, lu);
    memcpy(s + lp + lu * times, post, lq + 1);
    return s;
}

static void hostile_configs(tctx *t)
{
    const char *dir = t_dirname(t->path);
    char cfg[4200], tier[4200];
    snprintf(cfg, sizeof cfg, "%s", t_path(t, ".hostile.json"));
    snprintf(tier, sizeof tier, "%s", dir);
    /* a valid tier, for the cases that damage something else */
    char ok[4400];
    snprintf(ok, sizeof ok, "{\"name\":\"a\",\"path\":\"%s\"}", tier);
    typedef struct {
        const char *what;
        char *text;
        size_t len; /* 0: strlen */
    } hcase;
    hcase cs[64];
    int n = 0;
#define ADD(w, s) (cs[n].what = (w), cs[n].text = (s), cs[n].len = 0, n++)
    ADD("100000 nested arrays", repeat("", "[", 100000, ""));
    {
        char *a = repeat("", "[", 50000, ""), *b = repeat("", "]", 50000, "");
        char *s = t_malloc(strlen(a) + strlen(b) + 400);
        sprintf(s, "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":\"%s\",\"capacity\":%s1%s}]}",
                tier, a, b);
        free(a), free(b);
        ADD("50000 nested arrays as a capacity", s);
    }
    static const char *const numbers[][2] = {
        {"capacity 1e400", "\"capacity\":1e400"},
        {"capacity 2^64", "\"capacity\":18446744073709551616"},
        {"capacity with 30 digits", "\"capacity\":123456789012345678901234567890"},
        {"capacity \"1e30TiB\"", "\"capacity\":\"1e30TiB\""},
        {"capacity \"18446744073709551616\"", "\"capacity\":\"18446744073709551616\""},
        {"capacity -1", "\"capacity\":-1"},
        {"capacity 0.5", "\"capacity\":0.5"},
        {"bandwidth \"1e400GB/s\"", "\"bandwidth\":\"1e400GB/s\""},
        {"latency -1e300", "\"latency\":-1e300"},
        {"capacity as an object", "\"capacity\":{\"a\":1}"},
        {"capacity as an array", "\"capacity\":[1]"},
        {"capacity null", "\"capacity\":null"},
        {"private \"yes\"", "\"private\":\"yes\""},
        {"scope 1", "\"scope\":1"},
        {"emulate 1", "\"emulate\":1"},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        char *s = t_malloc(5000);
        snprintf(s, 5000, "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":\"%s\",%s}]}", tier,
                 numbers[i][1]);
        ADD(numbers[i][0], s);
    }
    static const char *const shapes[][2] = {
        {"root is an array", "[{\"version\":1}]"},
        {"root is a string", "\"tiers\""},
        {"tiers is a string", "{\"version\":1,\"tiers\":\"ram\"}"},
        {"tiers is a number", "{\"version\":1,\"tiers\":5}"},
        {"tiers is null", "{\"version\":1,\"tiers\":null}"},
        {"a tier is an array", "{\"version\":1,\"tiers\":[[1,2]]}"},
        {"name is a number", "{\"version\":1,\"tiers\":[{\"name\":5,\"path\":\"/tmp\"}]}"},
        {"path is an array", "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":[\"/tmp\"]}]}"},
        {"path is an object", "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":{}}]}"},
        {"version 1.5", "{\"version\":1.5,\"tiers\":[TIER]}"},
        {"version \"1\"", "{\"version\":\"1\",\"tiers\":[TIER]}"},
        {"version true", "{\"version\":true,\"tiers\":[TIER]}"},
        {"version 1e308", "{\"version\":1e308,\"tiers\":[TIER]}"},
        {"version with 25 digits", "{\"version\":1000000000000000000000001,\"tiers\":[TIER]}"},
        {"\\u0000 in a tier name", "{\"version\":1,\"tiers\":[{\"name\":\"a\\u0000b\",\"path\":\"/tmp\"}]}"},
        {"\\u0000 in a tier path", "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":\"/tmp\\u0000/x\"}]}"},
        {"invalid UTF-8 in a name", "{\"version\":1,\"tiers\":[{\"name\":\"\xff\xfe\",\"path\":\"/tmp\"}]}"},
        {"trailing garbage", "{\"version\":1,\"tiers\":[TIER]} garbage"},
        {"an empty file", ""},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char *s = t_malloc(9000);
        const char *p = strstr(shapes[i][1], "TIER");
        if (p)
            snprintf(s, 9000, "%.*s%s%s", (int)(p - shapes[i][1]), shapes[i][1], ok, p + 4);
        else
            snprintf(s, 9000, "%s", shapes[i][1]);
        ADD(shapes[i][0], s);
    }
    { /* raw NUL bytes */
        char *s = t_malloc(9000);
        int l = snprintf(s, 9000, "{\"version\":1,\"tiers\":[%s]}", ok);
        memcpy(s + l, "\0garbage", 9);
        cs[n].what = "a NUL byte after a valid document";
        cs[n].text = s;
        cs[n].len = (size_t)l + 8;
        n++;
        char *u = t_malloc(9000);
        l = snprintf(u, 9000, "{\"version\":1,\"tiers\":[%s]}", ok);
        memmove(u + 12, u + 11, (size_t)l - 10);
        u[11] = 0; /* {"version":\0 1,... */
        cs[n].what = "a NUL byte inside the JSON";
        cs[n].text = u;
        cs[n].len = (size_t)l + 1;
        n++;
    }
    ADD("5 MiB of JSON", repeat("{\"version\":1,\"tiers\":[", " ", 5 * 1024 * 1024, "]}"));
    {
        char *s = repeat("{\"version\":1,\"tiers\":[", "{\"name\":\"a\",\"path\":\"/x\"},", 100000,
                         "{\"name\":\"z\",\"path\":\"/tmp\"}]}");
        ADD("100000 tiers", s);
    }
    {
        char *nm = repeat("", "n", 1000000, "");
        char *s = t_malloc(strlen(nm) + 200);
        sprintf(s, "{\"version\":1,\"tiers\":[{\"name\":\"%s\",\"path\":\"/tmp\"}]}", nm);
        free(nm);
        ADD("a tier name of 1 MB", s);
    }
    {
        char *pth = repeat("/tmp", "/x", 2500, "");
        char *s = t_malloc(strlen(pth) + 200);
        sprintf(s, "{\"version\":1,\"tiers\":[{\"name\":\"a\",\"path\":\"%s\"}]}", pth);
        free(pth);
        ADD("a tier path of 5000 bytes", s);
    }
#undef ADD
    for (int i = 0; i < n; i++) {
        int err = 0;
        if (t->rank == 0)
            err = t_write_bytes(cfg, cs[i].text, cs[i].len ? cs[i].len : strlen(cs[i].text), 0, 1);
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (err)
            TFAIL("writing %s: %s", cfg, strerror(err));
        MPI_Info ci = t_info(t, "hcomp_config", cfg, NULL);
        char what[160];
        snprintf(what, sizeof what, "configuration: %s", cs[i].what);
        fails(t, t_name(t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci, MPI_ERR_INFO_VALUE, -1,
              what, cfg, NULL);
        fails(t, t->target, MPI_MODE_RDONLY, ci, MPI_ERR_INFO_VALUE, -1,
              t_fmt("%s, read-only open of an existing file", what), cfg, NULL);
        /* an empty file opened to be written, which a good open makes an hcomp file: the
         * open fails on the configuration and leaves it empty */
        if (t->rank == 0)
            err = t_write_bytes(t_path(t, ".empty-cfg"), "", 0, 0, 1);
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (err)
            TFAIL("making %s: %s", t_path(t, ".empty-cfg"), strerror(err));
        fails(t, t_name(t, ".empty-cfg"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci, MPI_ERR_INFO_VALUE,
              -1, t_fmt("%s, writable open of an empty file", what), cfg, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t->rank == 0) {
            TASSERT(!t_exists(t_path(t, ".new")), "%s: the failed open created the file", what);
            struct stat sb;
            TASSERT(stat(t_path(t, ".empty-cfg"), &sb) == 0 && sb.st_size == 0,
                    "%s: the failed open of an empty file changed it (%lld bytes)", what,
                    (long long) sb.st_size);
        }
        MPI_Info_free(&ci);
        free(cs[i].text);
    }
    t_unlink(t, cfg);
    if (t->rank == 0)
        unlink(t_path(t, ".empty-cfg"));
    /* a directory as the configuration */
    MPI_Info ci = t_info(t, "hcomp_config", dir, NULL);
    fails(t, t_name(t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci, MPI_ERR_INFO_VALUE, -1,
          "configuration: a directory", dir, NULL);
    MPI_Info_free(&ci);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    my_rank = t.rank;
    signal(SIGALRM, watchdog);
    if (t.is_hcomp) {
        /* an existing hcomp file, for the read-only opens with a bad configuration */
        MPI_Info info = t_info(&t, NULL);
        t_delete_quiet(&t, t.target, info);
        MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
        TCHK(MPI_File_close(&fh));
        bad_tier_paths(&t);
        not_hcomp_files(&t);
        hostile_configs(&t);
        t_delete(&t, t.target, info);
        MPI_Info_free(&info);
    }
    long_names(&t);
    return t_finish(&t);
}
