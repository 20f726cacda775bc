/* Error cases: each failing MPI_File_open must fail on every rank with the right
 * error class, leave no file behind and not damage existing files.
 *
 *   t_errors TARGET [CONFIG]
 *
 *   plain (non-hcomp) file opened with hcomp:        no error: passed through
 *                                                     unchanged (t_plain tests it all)
 *   MPI_File_delete of a plain file through hcomp:    deletes it, as ufs: does
 *   a damaged hcomp file (magic gone) through hcomp:  MPI_ERR_IO, message names it,
 *                                                     file left alone (delete too)
 *   MPI_MODE_CREATE|MPI_MODE_EXCL on an existing file MPI_ERR_FILE_EXISTS
 *   missing file without MPI_MODE_CREATE              MPI_ERR_NO_SUCH_FILE
 *   a directory's name (with or without create)       MPI_ERR_BAD_FILE, as ufs: says
 *   unknown codec / bad level / bad piece size        MPI_ERR_INFO_VALUE
 *   missing config file, config naming a missing dir  MPI_ERR_NO_SUCH_FILE
 *   malformed config JSON, bad capacity, bad file_perm MPI_ERR_INFO_VALUE
 *   unsafe "private" tier directory                   MPI_ERR_ACCESS
 *   every tier full                                   MPI_ERR_NO_SPACE (on the write)
 *   MPI_File_set_info changing hcomp_config           MPI_ERR_UNSUPPORTED_OPERATION
 *   MPI_File_set_info with a bad value                MPI_ERR_INFO_VALUE
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
    /* ufs: only rank 0 asks for the text: ROMIO's create step broadcasts the creating
     * process's error code, which other processes' MPICH cannot render (it prints
     * "Invalid error code" or another error's text); their class is still right. hcomp
     * gives every process a code of its own with the creator's message: each names the
     * cause as rank 0's does. */
    msg[0] = 0;
    if (t->rank == 0 || t->is_hcomp)
        MPI_Error_string(rc, msg, &len);
    if (t->is_hcomp) {
        char own[MPI_MAX_ERROR_STRING + 1] = "";
        const char *p = NULL;
        for (const char *q = strstr(msg, "hcomp: "); q != NULL; q = strstr(q + 1, "hcomp: "))
            p = q + 7;
        if (t->rank == 0 && p != NULL)
            snprintf(own, sizeof own, "%s", p);
        MPI_Bcast(own, (int)sizeof own, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (strstr(msg, "Invalid error code") != NULL || (own[0] && strstr(msg, own) == NULL))
            TFAIL("%s: rank %d's error string is not rank 0's cause ('%s'): '%s'", what, t->rank,
                  own, msg);
    }
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

    /* a directory's name is not a file's, whatever the mode; the directory stays */
    t_mkdir(&t, t_path(&t, ".dir"));
    open_fails(&t, t_name(&t, ".dir"), MPI_MODE_RDWR, info, MPI_ERR_BAD_FILE, "a directory");
    open_fails(&t, t_name(&t, ".dir"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, MPI_ERR_BAD_FILE,
               "a directory, with create");
    t_rmdir(&t, t_path(&t, ".dir"));

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
        /* a plain file opened through hcomp: passes through, read-only and with
         * RDWR|CREATE, and stays as it was (t_plain covers every path) */
        const char *plain = t_path(&t, ".plain");
        char text[4096] = "";
        for (int i = 0; i < 40; i++)
            strcat(text, "plain bytes, not an hcomp file; 0123456789abcdef\n");
        t_write_text(&t, plain, text);
        char pname[4200];
        snprintf(pname, sizeof pname, "hcomp:%s", plain);
        {
            char back[4096];
            MPI_File fh = t_open(&t, pname, MPI_MODE_RDONLY, info);
            memset(back, 0, sizeof back);
            TCHK(MPI_File_read_at_all(fh, 0, back, (int)strlen(text), MPI_BYTE, &st));
            if (strcmp(back, text) != 0)
                TFAIL("plain file read through hcomp: differs from its bytes");
            TCHK(MPI_File_close(&fh));
            fh = t_open(&t, pname, MPI_MODE_RDWR | MPI_MODE_CREATE, info);
            TCHK(MPI_File_close(&fh));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        { /* the plain file must be untouched */
            FILE *f = fopen(plain, "r");
            char back[4096] = "";
            size_t n = f ? fread(back, 1, sizeof back - 1, f) : 0;
            if (f)
                fclose(f);
            back[n] = 0;
            if (strcmp(back, text) != 0)
                TFAIL("plain file was modified by opens through hcomp: (%zu bytes now)", n);
        }
        /* MPI_File_delete through hcomp: deletes a plain file, as ufs: does */
        MPI_Barrier(MPI_COMM_WORLD);    /* every rank has checked it */
        if (t.rank == 0) {
            TCHK(MPI_File_delete(pname, info));
            if (t_exists(plain))
                TFAIL("MPI_File_delete(%s) left the plain file", pname);
            printf("  [%s] a plain file through hcomp: read, kept; MPI_File_delete removes it\n",
                   t.test);
        }
        MPI_Barrier(MPI_COMM_WORLD);

        /* a damaged hcomp file (its magic gone) is no plain file: MPI_ERR_IO naming it,
         * left alone by the opens and by MPI_File_delete */
        {
            MPI_File fh = t_open(&t, pname, MPI_MODE_RDWR | MPI_MODE_CREATE, info);
            uint8_t x[5000];
            memset(x, 'q', sizeof x);
            if (t.rank == 0)
                TCHK(MPI_File_write_at(fh, 0, x, (int)sizeof x, MPI_BYTE, &st));
            TCHK(MPI_File_close(&fh));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        long long before = -1;
        if (t.rank == 0) {
            FILE *f = fopen(plain, "r+");
            if (!f || fwrite("NOTHCOMP", 1, 8, f) != 8 || fclose(f) != 0)
                TFAIL("cannot damage %s", plain);
            struct stat sb;
            before = stat(plain, &sb) == 0 ? (long long)sb.st_size : -1;
        }
        MPI_Bcast(&before, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        const char *m = open_fails(&t, pname, MPI_MODE_RDONLY, info, MPI_ERR_IO,
                                   "damaged hcomp file");
        if (t.rank == 0 && !strstr(m, plain))
            TFAIL("damaged hcomp file: error string does not name the file %s: '%s'", plain, m);
        open_fails(&t, pname, MPI_MODE_RDWR | MPI_MODE_CREATE, info, MPI_ERR_IO,
                   "damaged hcomp file, RDWR|CREATE");
        if (t.rank == 0) {
            TCHK_FAILS(MPI_ERR_IO, MPI_File_delete(pname, info));
            struct stat sb;
            if (stat(plain, &sb) != 0 || (long long)sb.st_size != before)
                TFAIL("a damaged hcomp file was changed or removed through hcomp:");
            /* put the magic back so the test can delete it with its pieces */
            FILE *f = fopen(plain, "r+");
            if (!f || fwrite("HCOMPMAP", 1, 8, f) != 8 || fclose(f) != 0)
                TFAIL("cannot repair %s", plain);
        }
        t_delete(&t, pname, info);

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

        /* private tier directories that are unsafe: open to others, a symbolic
         * link, somebody else's (the last only when running as root) */
        {
            char top[4200], open_dir[4300], real[4300], link[4300], foreign[4300];
            char cfgp[4400], pjson[9000];
            snprintf(top, sizeof top, "%s.pv", t.path);
            snprintf(open_dir, sizeof open_dir, "%s/open", top);
            snprintf(real, sizeof real, "%s/real", top);
            snprintf(link, sizeof link, "%s/link", top);
            snprintf(foreign, sizeof foreign, "%s/foreign", top);
            snprintf(cfgp, sizeof cfgp, "%s/tiers.json", top);
            t_mkdir(&t, top);
            t_mkdir(&t, open_dir);
            t_mkdir(&t, real);
            t_mkdir(&t, foreign);
            int err = 0;
            if (t.rank == 0) {
                if (chmod(open_dir, 0755) != 0 || symlink(real, link) != 0)
                    err = errno;
                if (getuid() == 0 && chown(foreign, 65534, 65534) != 0)
                    err = errno;
            }
            MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (err)
                TFAIL("setting up unsafe tier directories: %s", strerror(err));
            const char *dirs[3] = {open_dir, link, foreign};
            const char *whats[3] = {"private tier directory with mode 0755",
                                    "private tier directory that is a symbolic link",
                                    "private tier directory owned by another user"};
            for (int i = 0; i < (getuid() == 0 ? 3 : 2); i++) {
                snprintf(pjson, sizeof pjson,
                         "{\"version\":1,\"tiers\":[{\"name\":\"ram\",\"path\":\"%s\","
                         "\"capacity\":\"1MiB\",\"private\":true,\"scope\":\"node-local\"}]}\n",
                         dirs[i]);
                t_write_text(&t, cfgp, pjson);
                MPI_Info ci;
                MPI_Info_create(&ci);
                MPI_Info_set(ci, "hcomp_config", cfgp);
                open_fails(&t, t_name(&t, ".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, ci,
                           MPI_ERR_ACCESS, whats[i]);
                expect_absent(t_path(&t, ".new"), whats[i]);
                MPI_Info_free(&ci);
            }
            t_unlink(&t, cfgp);
            t_unlink(&t, link);
            t_rmdir(&t, open_dir);
            t_rmdir(&t, real);
            t_rmdir(&t, foreign);
            t_rmdir(&t, top);
        }

        /* every tier full: MPI_ERR_NO_SPACE, and what was written stays readable (writes
         * not gathered: the error comes from the write itself) */
        {
            static const char *const caps[1] = {"64KiB"};
            ttiers tt;
            t_make_tiers_tag(&t, &tt, "nospc-tiers", 1, caps);
            MPI_Info ni = t_info(&t, "hcomp_config", tt.cfg, "hcomp_write_buffer", "0", NULL);
            const char *nname = t_name(&t, ".nospc");
            MPI_File fh = t_open(&t, nname, MPI_MODE_CREATE | MPI_MODE_RDWR, ni);
            if (t.rank == 0) {
                uint8_t *big = t_malloc(256 * KiB), small[8192], back[8192];
                t_fill_random(small, sizeof small, 1);
                t_fill_random(big, 256 * KiB, 2);
                TCHK(MPI_File_write_at(fh, 0, small, sizeof small, MPI_BYTE, &st));
                TCHK_FAILS(MPI_ERR_NO_SPACE,
                           MPI_File_write_at(fh, 8192, big, 256 * KiB, MPI_BYTE, &st));
                TCHK(MPI_File_read_at(fh, 0, back, sizeof back, MPI_BYTE, &st));
                TEXPECT_BYTES(back, small, sizeof small, 0, "data written before NO_SPACE");
                printf("  [%s] every tier full: MPI_ERR_NO_SPACE\n", t.test);
                free(big);
            }
            TCHK(MPI_File_close(&fh));
            t_delete(&t, nname, ni);
            MPI_Info_free(&ni);
            t_remove_tiers(&t, &tt);
        }

        /* the same with small writes gathered (hcomp_write_buffer): the write is taken, and
         * the call that writes it out says MPI_ERR_NO_SPACE: MPI_File_sync, then the close */
        {
            static const char *const caps[1] = {"64KiB"};
            ttiers tt;
            t_make_tiers_tag(&t, &tt, "nospc-gathered", 1, caps);
            MPI_Info ni = t_info(&t, "hcomp_config", tt.cfg, "hcomp_codec", "none",
                                 "hcomp_write_buffer", "4MiB", NULL);
            const char *nname = t_name(&t, ".nospc2");
            MPI_File fh = t_open(&t, nname, MPI_MODE_CREATE | MPI_MODE_RDWR, ni);
            int rc_close = MPI_SUCCESS;
            if (t.rank == 0) {
                uint8_t *big = t_malloc(256 * KiB);
                t_fill_random(big, 256 * KiB, 3);
                TCHK(MPI_File_write_at(fh, 0, big, 256 * KiB, MPI_BYTE, &st));
                TCHK_FAILS(MPI_ERR_NO_SPACE, MPI_File_sync(fh));
                printf("  [%s] every tier full, small writes gathered: MPI_ERR_NO_SPACE at sync\n",
                       t.test);
                free(big);
            } else {
                TCHK(MPI_File_sync(fh));
            }
            rc_close = MPI_File_close(&fh);
            int cls = MPI_SUCCESS;
            if (rc_close != MPI_SUCCESS)
                MPI_Error_class(rc_close, &cls);
            TASSERT(t.rank == 0 ? cls == MPI_ERR_NO_SPACE : rc_close == MPI_SUCCESS,
                    "close after a failed write-out: %s", t_errstr(rc_close));
            t_delete(&t, nname, ni);
            MPI_Info_free(&ni);
            t_remove_tiers(&t, &tt);
        }

        /* hcomp_config cannot change while the file is open */
        {
            MPI_File fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
            MPI_Info ci;
            MPI_Info_create(&ci);
            MPI_Info_set(ci, "hcomp_config", t_path(&t, ".other-config.json"));
            TCHK_FAILS(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_set_info(fh, ci));
            MPI_Info_free(&ci);
            TCHK(MPI_File_close(&fh));
        }

        /* MPI_File_set_info with a bad value fails and changes nothing */
        {
            MPI_File fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
            MPI_Info bi = t_info(&t, "hcomp_codec", "nosuchcodec", NULL);
            TCHK_FAILS(MPI_ERR_INFO_VALUE, MPI_File_set_info(fh, bi));
            MPI_Info_free(&bi);
            MPI_Info got;
            char v[MPI_MAX_INFO_VAL + 1] = "";
            int flag = 0;
            TCHK(MPI_File_get_info(fh, &got));
            MPI_Info_get(got, "hcomp_codec", MPI_MAX_INFO_VAL, v, &flag);
            MPI_Info_free(&got);
            TASSERT(flag && strcmp(v, "auto") == 0,
                    "after a rejected set_info, hcomp_codec is '%s'", flag ? v : "(missing)");
            TCHK(MPI_File_close(&fh));
        }

        /* bad hint values at open, for a new file and for the existing one */
        static const char *const bad[][2] = {
            {"hcomp_codec", "nosuchcodec"}, {"hcomp_codec", "zstd:999"},
            {"hcomp_codec", "lz4:x"},       {"hcomp_piece_size", "1000"},
            {"hcomp_piece_size", "0"},      {"hcomp_piece_size", "abc"},
            {"hcomp_piece_size", "4097"},   {"hcomp_piece_size", "-4096"},
            {"file_perm", "abc"},           {"file_perm", "0999"},
            {"hcomp_flush_after", "2GiB"},  {"hcomp_flush_after", "soon"},
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
    }

    /* the existing file survived all that */
    write_check_file(&t, t.target, info, 1);
    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    return t_finish(&t);
}
