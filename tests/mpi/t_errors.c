/* Error cases: each failing MPI_File_open must fail on every rank with the right
 * error class, leave no file behind and not damage existing files.
 *
 *   t_errors TARGET [CONFIG]
 *
 *   plain (non-hcomp) file opened with hcomp:        MPI_ERR_IO, message names it
 *   MPI_MODE_CREATE|MPI_MODE_EXCL on an existing file MPI_ERR_FILE_EXISTS
 *   missing file without MPI_MODE_CREATE              MPI_ERR_NO_SUCH_FILE
 *   unknown codec / bad level / bad piece size        MPI_ERR_INFO_VALUE
 *   missing config file, config naming a missing dir  MPI_ERR_NO_SUCH_FILE
 *   malformed config JSON, bad capacity               MPI_ERR_INFO_VALUE
 *   write to a read-only open                         MPI_ERR_READ_ONLY
 *   MPI_MODE_RDONLY|MPI_MODE_CREATE                   MPI_ERR_AMODE
 * Only the generic cases run for ufs targets. */
#include "tcommon.h"

/* MPI_File_open that must fail with class want; returns the error string */
static const char *open_fails(const tctx *t, const char *name, int amode, MPI_Info info,
                              int want, const char *what)
{
    static char msg[MPI_MAX_ERROR_STRING + 1];
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, name, amode, info, &fh);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
        TFAIL("%s: MPI_File_open(%s) succeeded, expected %s", what, name, t_class_name(want));
    }
    int cls = -1, len = 0;
    MPI_Error_class(rc, &cls);
    /* Only rank 0 asks for the text: ROMIO broadcasts some error codes from rank
     * 0, and other ranks' MPICH cannot render those (it prints "Invalid error
     * code"); their class is still right. */
    msg[0] = 0;
    if (t->rank == 0)
        MPI_Error_string(rc, msg, &len);
    if (cls != want)
        TFAIL("%s: MPI_File_open(%s) gave %s (class %d): %s, expected %s", what, name,
              t_class_name(cls), cls, msg, t_class_name(want));
    if (fh != MPI_FILE_NULL)
        TFAIL("%s: failed open did not leave MPI_FILE_NULL", what);
    if (t->rank == 0)
        printf("  [%s] %s: %s: %s\n", t->test, what, t_class_name(cls), msg);
    return msg;
}

static void expect_absent(const char *path, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_exists(path))
        TFAIL("%s: the failed open left %s behind", what, path);
}

static void write_check_file(const tctx *t, const char *name, MPI_Info info, int check)
{
    MPI_File fh = t_open(t, name, check ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY, info);
    uint8_t b[5000], e[5000];
    MPI_Status st;
    t_fill(e, sizeof e, (uint64_t)t->rank * 5000, 3);
    if (check) {
        TASSERT(t_get_size(fh) == 5000 * t->nprocs, "existing file: size %lld",
                (long long)t_get_size(fh));
        TCHK(MPI_File_read_at_all(fh, t->rank * 5000, b, 5000, MPI_BYTE, &st));
        TEXPECT_BYTES(b, e, 5000, (uint64_t)t->rank * 5000, "existing file after failed opens");
    } else {
        TCHK(MPI_File_write_at_all(fh, t->rank * 5000, e, 5000, MPI_BYTE, &st));
    }
    TCHK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    /* an existing, valid file */
    t_delete_quiet(&t, t.target, info);
    write_check_file(&t, t.target, info, 0);

    /* create + excl on it */
    open_fails(&t, t.target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info,
               MPI_ERR_FILE_EXISTS, "create+excl on an existing file");

    /* a missing file without create; it must not appear */
    open_fails(&t, t_name(&t, ".missing"), MPI_MODE_RDWR, info, MPI_ERR_NO_SUCH_FILE,
               "missing file");
    expect_absent(t_path(&t, ".missing"), "missing file");

    /* bad access modes (checked by MPI before any driver) */
    open_fails(&t, t_name(&t, ".amode"), MPI_MODE_RDONLY | MPI_MODE_CREATE, info, MPI_ERR_AMODE,
               "RDONLY|CREATE");
    expect_absent(t_path(&t, ".amode"), "RDONLY|CREATE");

    /* writing through a read-only handle */
    {
        MPI_File fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
        uint8_t x[10] = {0};
        TCHK_FAILS(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, x, 10, MPI_BYTE, &st));
        TCHK(MPI_File_close(&fh));
    }

    if (t.is_hcomp) {
        /* a plain file opened through hcomp: */
        const char *plain = t_path(&t, ".plain");
        char text[4096] = "";
        for (int i = 0; i < 40; i++)
            strcat(text, "plain bytes, not an hcomp file; 0123456789abcdef\n");
        t_write_text(&t, plain, text);
        char pname[4200];
        snprintf(pname, sizeof pname, "hcomp:%s", plain);
        const char *m = open_fails(&t, pname, MPI_MODE_RDONLY, info, MPI_ERR_IO, "plain file");
        if (t.rank == 0 && !strstr(m, plain))
            TFAIL("plain file: error string does not name the file %s: '%s'", plain, m);
        m = open_fails(&t, pname, MPI_MODE_RDWR | MPI_MODE_CREATE, info, MPI_ERR_IO,
                       "plain file, RDWR|CREATE");
        MPI_Barrier(MPI_COMM_WORLD);
        { /* the plain file must be untouched */
            FILE *f = fopen(plain, "r");
            char back[4096] = "";
            size_t n = f ? fread(back, 1, sizeof back - 1, f) : 0;
            if (f)
                fclose(f);
            back[n] = 0;
            if (strcmp(back, text) != 0)
                TFAIL("plain file was modified by the failed hcomp open (%zu bytes now)", n);
        }
        t_unlink(&t, plain);

        /* bad hint values, for a new file and for the existing one */
        static const char *const bad[][2] = {
            {"hcomp_codec", "nosuchcodec"}, {"hcomp_codec", "zstd:999"},
            {"hcomp_codec", ""},            {"hcomp_piece_size", "1000"},
            {"hcomp_piece_size", "0"},      {"hcomp_piece_size", "abc"},
            {"hcomp_piece_size", "4097"},   {"hcomp_piece_size", "-4096"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            MPI_Info bi = t_info(&t, bad[i][0], bad[i][1], NULL);
            const char *what = t_fmt("%s=%s", bad[i][0], bad[i][1]);
            char w[256];
            snprintf(w, sizeof w, "%s", what);
            open_fails(&t, t_name(&t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, bi,
                       MPI_ERR_INFO_VALUE, w);
            expect_absent(t_path(&t, ".new"), w);
            open_fails(&t, t.target, MPI_MODE_RDWR, bi, MPI_ERR_INFO_VALUE, w);
            MPI_Info_free(&bi);
        }

        /* configuration problems */
        const char *dir = t_dirname(t.path);
        char cfg_missing[4200], cfg_nodir[4200], cfg_bad[4200], cfg_cap[4200], json[9000];
        snprintf(cfg_missing, sizeof cfg_missing, "%s/no-such-config.json", dir);
        snprintf(cfg_nodir, sizeof cfg_nodir, "%s.cfg-nodir.json", t.path);
        snprintf(cfg_bad, sizeof cfg_bad, "%s.cfg-bad.json", t.path);
        snprintf(cfg_cap, sizeof cfg_cap, "%s.cfg-cap.json", t.path);
        snprintf(json, sizeof json,
                 "{\"version\":1,\"tiers\":[{\"name\":\"gone\",\"path\":\"%s/no-such-dir\","
                 "\"capacity\":\"1MiB\",\"scope\":\"node-local\"}]}\n", dir);
        t_write_text(&t, cfg_nodir, json);
        t_write_text(&t, cfg_bad, "{\"version\":1,\"tiers\":[{\"name\":\"x\",\"path\":");
        snprintf(json, sizeof json,
                 "{\"version\":1,\"tiers\":[{\"name\":\"x\",\"path\":\"%s\","
                 "\"capacity\":\"lots\",\"scope\":\"shared\"}]}\n", dir);
        t_write_text(&t, cfg_cap, json);
        static const struct {
            int cfg, cls;
            const char *what;
        } cases[] = {{0, MPI_ERR_NO_SUCH_FILE, "config file missing"},
                     {1, MPI_ERR_NO_SUCH_FILE, "config names a missing tier directory"},
                     {2, MPI_ERR_INFO_VALUE, "malformed config JSON"},
                     {3, MPI_ERR_INFO_VALUE, "config with capacity \"lots\""}};
        const char *paths[] = {cfg_missing, cfg_nodir, cfg_bad, cfg_cap};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            MPI_Info ci;
            MPI_Info_create(&ci);
            MPI_Info_set(ci, "hcomp_config", paths[cases[i].cfg]);
            open_fails(&t, t_name(&t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci, cases[i].cls,
                       cases[i].what);
            expect_absent(t_path(&t, ".new"), cases[i].what);
            MPI_Info_free(&ci);
        }
        t_unlink(&t, cfg_nodir);
        t_unlink(&t, cfg_bad);
        t_unlink(&t, cfg_cap);
    }

    /* the existing file survived all that */
    write_check_file(&t, t.target, info, 1);
    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    return t_finish(&t);
}
