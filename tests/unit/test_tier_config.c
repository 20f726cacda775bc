/* Unit tests of the tier configuration: JSON parsing with units and path expansion,
 * errors that name the source and the field, the embedded default, loading from a
 * file or $HCOMP_CONFIG, and the safety checks of private tier directories. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hcomp_error.h"
#include "tiers/tier_config.h"
#include "tiers/tier_space.h"
#include "tiers/probe_cache.h"

#include <linux/magic.h>
#include <sys/vfs.h>

/* ---- helpers ------------------------------------------------------------------------ */

static void rm_rf(const char *path)
{
    assert_int_equal(t_rm_tree(path), 0);
}

static int make_tmpdir(void **state)
{
    char *dir = strdup("/tmp/hcomp-test-tiercfg-XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    *state = dir;
    return 0;
}

static int remove_tmpdir(void **state)
{
    rm_rf(*state);
    free(*state);
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void assert_near(double got, double want)
{
    if (fabs(got - want) > fabs(want) * 1e-9)
        fail_msg("got %.17g, want %.17g", got, want);
}

/* Saves and restores one environment variable around a test. */
typedef struct saved_env {
    const char *name;
    char *value;
} saved_env;

static saved_env env_save(const char *name)
{
    saved_env s = {name, getenv(name) ? strdup(getenv(name)) : NULL};
    return s;
}

static void env_restore(saved_env *s)
{
    if (s->value) {
        setenv(s->name, s->value, 1);
        free(s->value);
    } else
        unsetenv(s->name);
}

/* ---- parsing -------------------------------------------------------------------------- */

static const char *const valid_json =
    "{\n"
    "  \"version\": 1,\n"
    "  \"tiers\": [\n"
    "    {\"name\": \"ram\", \"path\": \"/dev/shm/hcomp-$UID\", \"capacity\": \"64MiB\",\n"
    "     \"private\": true, \"bandwidth\": \"10GB/s\", \"latency\": \"20us\",\n"
    "     \"scope\": \"node-local\"},\n"
    "    {\"name\": \"nvme\", \"path\": \"${HOME}/nvme/${HCOMP_TEST_SUB}\", \"capacity\": 1073741824,\n"
    "     \"bandwidth\": 2000000000, \"latency\": 0.00002, \"scope\": \"shared\", \"private\": false},\n"
    "    {\"name\": \"burst\", \"path\": \"/burst/$USER/x\", \"capacity\": \"1.5GB\",\n"
    "     \"bandwidth\": \"500MiB/s\", \"latency\": \"4.16ms\"},\n"
    "    {\"name\": \"pfs\", \"path\": \"@filedir\", \"capacity\": \"unlimited\"}\n"
    "  ]\n"
    "}\n";

static void test_parse_valid(void **state)
{
    (void) state;
    saved_env home = env_save("HOME"), sub = env_save("HCOMP_TEST_SUB"), user = env_save("USER");
    setenv("HOME", "/home/tester", 1);
    setenv("HCOMP_TEST_SUB", "deep", 1);
    setenv("USER", "alice", 1);
    hcomp_tier_config cfg;
    hcomp_error err;
    int rc = hcomp_tier_config_parse(valid_json, "test.json", &cfg, &err);
    if (rc != HCOMP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(cfg.ntiers, 4);
    assert_string_equal(cfg.source, "test.json");

    char want[128];
    snprintf(want, sizeof(want), "/dev/shm/hcomp-%u", (unsigned) geteuid());
    assert_string_equal(cfg.tier[0].name, "ram");
    assert_string_equal(cfg.tier[0].path, want);
    assert_true(cfg.tier[0].capacity == UINT64_C(64) << 20);
    assert_near(cfg.tier[0].bandwidth, 10e9);
    assert_near(cfg.tier[0].latency, 20e-6);
    assert_int_equal(cfg.tier[0].node_local, 1);
    assert_int_equal(cfg.tier[0].private_dir, 1);

    assert_string_equal(cfg.tier[1].name, "nvme");
    assert_string_equal(cfg.tier[1].path, "/home/tester/nvme/deep");
    assert_true(cfg.tier[1].capacity == UINT64_C(1073741824));
    assert_near(cfg.tier[1].bandwidth, 2e9);
    assert_near(cfg.tier[1].latency, 2e-5);
    assert_int_equal(cfg.tier[1].node_local, 0);
    assert_int_equal(cfg.tier[1].private_dir, 0);

    assert_string_equal(cfg.tier[2].path, "/burst/alice/x");
    assert_true(cfg.tier[2].capacity == UINT64_C(1500000000));
    assert_near(cfg.tier[2].bandwidth, 500.0 * 1048576);
    assert_near(cfg.tier[2].latency, 4.16e-3);
    assert_int_equal(cfg.tier[2].node_local, 0);    /* shared by default */

    assert_string_equal(cfg.tier[3].name, "pfs");
    assert_string_equal(cfg.tier[3].path, HCOMP_FILEDIR);
    assert_true(cfg.tier[3].capacity == UINT64_MAX);
    assert_int_equal(cfg.tier[3].private_dir, 0);

    env_restore(&home);
    env_restore(&sub);
    env_restore(&user);
}

/* Fields left out take their defaults; the version is optional. */
static void test_parse_minimal(void **state)
{
    (void) state;
    hcomp_tier_config cfg;
    hcomp_error err;
    assert_int_equal(hcomp_tier_config_parse("{\"tiers\": [{\"name\": \"t\", \"path\": \"/x\"}]}",
                                             "min", &cfg, &err), HCOMP_OK);
    assert_int_equal(cfg.ntiers, 1);
    assert_string_equal(cfg.tier[0].path, "/x");
    assert_true(cfg.tier[0].capacity == UINT64_MAX);
    assert_true(cfg.tier[0].bandwidth == 0);
    assert_int_equal(cfg.tier[0].node_local, 0);
    assert_int_equal(cfg.tier[0].private_dir, 0);
    assert_int_equal(cfg.tier[0].measure, 1);      /* measured unless told otherwise */
    assert_int_equal(hcomp_tier_config_parse("{\"tiers\": [{\"name\": \"t\", \"path\": \"/x\", "
                                             "\"bandwidth\": \"1GB/s\", \"measure\": false}]}",
                                             "pinned", &cfg, &err), HCOMP_OK);
    assert_int_equal(cfg.tier[0].measure, 0);

    /* exactly 16 tiers is allowed */
    char json[4096] = "{\"version\": 1, \"tiers\": [";
    for (int i = 0; i < HCOMP_MAX_TIERS; i++) {
        size_t l = strlen(json);
        snprintf(json + l, sizeof(json) - l, "%s{\"name\": \"t%d\", \"path\": \"/d%d\"}",
                 i ? "," : "", i, i);
    }
    strcat(json, "]}");
    assert_int_equal(hcomp_tier_config_parse(json, "sixteen", &cfg, &err), HCOMP_OK);
    assert_int_equal(cfg.ntiers, HCOMP_MAX_TIERS);
    assert_string_equal(cfg.tier[15].name, "t15");
}

static void test_parse_errors(void **state)
{
    (void) state;
    char seventeen[4096] = "{\"version\": 1, \"tiers\": [";
    for (int i = 0; i <= HCOMP_MAX_TIERS; i++) {
        size_t l = strlen(seventeen);
        snprintf(seventeen + l, sizeof(seventeen) - l, "%s{\"name\": \"t%d\", \"path\": \"/d\"}",
                 i ? "," : "", i);
    }
    strcat(seventeen, "]}");
    unsetenv("HCOMP_TEST_SURELY_UNSET");

    static const char *const long_name =
        "{\"tiers\": [{\"name\": \"0123456789012345678901234567890123456789012345678901234567890123\","
        " \"path\": \"/x\"}]}";
    const struct { const char *what, *json, *field; } cases[] = {
        {"not JSON", "{\"tiers\": [", "JSON"},
        {"not JSON (text)", "tiers = ram", "JSON"},
        {"empty text", "", "JSON"},
        {"root not an object", "[{\"name\": \"a\", \"path\": \"/a\"}]", "tiers"},
        {"missing tiers", "{\"version\": 1}", "tiers"},
        {"tiers not an array", "{\"tiers\": {\"name\": \"a\"}}", "tiers"},
        {"empty tiers", "{\"version\": 1, \"tiers\": []}", "tiers"},
        {"tier not an object", "{\"tiers\": [\"ram\"]}", "tiers[0]"},
        {"unknown field", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"speed\": 1}]}",
         "speed"},
        {"measure not a boolean", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"measure\": \"yes\"}]}",
         "measure"},
        {"unknown field in 2nd", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\"}, {\"name\": \"b\","
         " \"path\": \"/b\", \"capacty\": \"1GiB\"}]}", "capacty"},
        {"duplicate names", "{\"tiers\": [{\"name\": \"fast\", \"path\": \"/a\"}, {\"name\": \"fast\","
         " \"path\": \"/b\"}]}", "\"fast\""},
        {"duplicate key", "{\"tiers\": [{\"name\": \"a\", \"name\": \"b\", \"path\": \"/a\"}]}",
         "duplicate"},
        {"missing name", "{\"tiers\": [{\"path\": \"/a\"}]}", "name"},
        {"empty name", "{\"tiers\": [{\"name\": \"\", \"path\": \"/a\"}]}", "name"},
        {"name too long", long_name, "name"},
        {"missing path", "{\"tiers\": [{\"name\": \"a\"}]}", "path"},
        {"relative path", "{\"tiers\": [{\"name\": \"a\", \"path\": \"scratch/hcomp\"}]}",
         "scratch/hcomp"},
        {"unset variable", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/x/$HCOMP_TEST_SURELY_UNSET\"}]}",
         "HCOMP_TEST_SURELY_UNSET"},
        {"bare dollar", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/x/$/y\"}]}", "/x/$/y"},
        {"unclosed brace", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/x/${HOME\"}]}", "${HOME"},
        {"bad capacity", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"capacity\": \"lots\"}]}",
         "capacity"},
        {"negative capacity", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"capacity\": -5}]}",
         "capacity"},
        {"capacity unit", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"capacity\": \"64MiB/s\"}]}",
         "capacity"},
        {"capacity bool", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"capacity\": true}]}",
         "capacity"},
        {"bad bandwidth", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"bandwidth\": \"fast\"}]}",
         "bandwidth"},
        {"bad latency", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"latency\": \"20 parsecs\"}]}",
         "latency"},
        {"bad scope", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"scope\": \"global\"}]}",
         "scope"},
        {"scope not a string", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"scope\": 1}]}",
         "scope"},
        {"private not boolean", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"private\": \"yes\"}]}",
         "private"},
        {"volatile not boolean", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"volatile\": 1}]}",
         "volatile"},
        {"17 tiers", seventeen, "17 tiers"},
        {"version 2", "{\"version\": 2, \"tiers\": [{\"name\": \"a\", \"path\": \"/a\"}]}", "version"},
        {"version as text", "{\"version\": \"1\", \"tiers\": [{\"name\": \"a\", \"path\": \"/a\"}]}",
         "version"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_tier_config cfg;
        hcomp_error err;
        memset(&err, 0, sizeof(err));
        const char *source = "/etc/hcomp/site-tiers.json";
        int rc = hcomp_tier_config_parse(cases[i].json, source, &cfg, &err);
        if (rc != HCOMP_E_INVAL)
            fail_msg("%s: returned %s, want HCOMP_E_INVAL", cases[i].what, hcomp_code_name(rc));
        assert_int_equal(err.code, HCOMP_E_INVAL);
        if (strstr(err.msg, source) == NULL)
            fail_msg("%s: message does not name the source: %s", cases[i].what, err.msg);
        if (strstr(err.msg, cases[i].field) == NULL)
            fail_msg("%s: message does not name \"%s\": %s", cases[i].what, cases[i].field,
                     err.msg);
    }
}

/* ---- the embedded default and loading -------------------------------------------------- */

static void check_default(const hcomp_tier_config *cfg)
{
    struct stat st;
    int shm = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
    assert_string_equal(cfg->source, "embedded default");
    assert_int_equal(cfg->ntiers, shm ? 2 : 1);
    const hcomp_tier *last = &cfg->tier[cfg->ntiers - 1];
    if (shm) {
        char want[64];
        snprintf(want, sizeof(want), "/dev/shm/hcomp-%u", (unsigned) geteuid());
        assert_string_equal(cfg->tier[0].path, want);
        assert_int_equal(cfg->tier[0].private_dir, 1);
        assert_int_equal(cfg->tier[0].node_local, 1);
        assert_true(cfg->tier[0].capacity == UINT64_C(64) << 20);
        assert_string_not_equal(cfg->tier[0].name, last->name);
    }
    assert_string_equal(last->path, HCOMP_FILEDIR);
    assert_true(last->capacity == UINT64_MAX);
    assert_int_equal(last->private_dir, 0);
}

static void test_embedded_default(void **state)
{
    (void) state;
    hcomp_tier_config cfg;
    hcomp_error err;
    assert_int_equal(hcomp_tier_config_default(&cfg, &err), HCOMP_OK);
    check_default(&cfg);

    saved_env env = env_save("HCOMP_CONFIG");
    unsetenv("HCOMP_CONFIG");
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(hcomp_tier_config_load(NULL, &cfg, &err), HCOMP_OK);
    check_default(&cfg);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(hcomp_tier_config_load("", &cfg, &err), HCOMP_OK);
    check_default(&cfg);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(hcomp_tier_config_load("embedded", &cfg, &err), HCOMP_OK);
    check_default(&cfg);
    env_restore(&env);
}

static void test_load_file(void **state)
{
    const char *dir = *state;
    char path[512], missing[512];
    snprintf(path, sizeof(path), "%s/tiers.json", dir);
    snprintf(missing, sizeof(missing), "%s/no-such.json", dir);
    write_file(path, "{\"version\": 1, \"tiers\": [{\"name\": \"only\", \"path\": \"/o\", "
               "\"capacity\": \"2KiB\"}]}");
    hcomp_tier_config cfg;
    hcomp_error err;
    assert_int_equal(hcomp_tier_config_load(path, &cfg, &err), HCOMP_OK);
    assert_int_equal(cfg.ntiers, 1);
    assert_true(cfg.tier[0].capacity == 2048);
    assert_string_equal(cfg.source, path);

    /* through $HCOMP_CONFIG when no path is given */
    saved_env env = env_save("HCOMP_CONFIG");
    setenv("HCOMP_CONFIG", path, 1);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(hcomp_tier_config_load(NULL, &cfg, &err), HCOMP_OK);
    assert_string_equal(cfg.tier[0].name, "only");

    /* a missing file names itself */
    setenv("HCOMP_CONFIG", missing, 1);
    assert_int_equal(hcomp_tier_config_load(NULL, &cfg, &err), HCOMP_E_NOENT);
    assert_non_null(strstr(err.msg, missing));
    env_restore(&env);
    assert_int_equal(hcomp_tier_config_load(missing, &cfg, &err), HCOMP_E_NOENT);
    assert_non_null(strstr(err.msg, missing));

    /* a parse error from a file names the file */
    write_file(path, "{\"tiers\": [{\"name\": \"a\", \"path\": \"/a\", \"scope\": \"galaxy\"}]}");
    assert_int_equal(hcomp_tier_config_load(path, &cfg, &err), HCOMP_E_INVAL);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "scope"));
}

/* ---- private directories ------------------------------------------------------------- */

static void test_private_dir(void **state)
{
    const char *dir = *state;
    char p[512], target[512], link[512], open_dir[512], file[512], orphan[512];
    hcomp_error err;
    struct stat st;

    /* created when missing, with mode 0700; accepted again when it exists */
    snprintf(p, sizeof(p), "%s/private", dir);
    assert_int_equal(hcomp_tier_ensure_private_dir(p, &err), HCOMP_OK);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(hcomp_tier_ensure_private_dir(p, &err), HCOMP_OK);

    /* a symbolic link, even to a good private directory */
    snprintf(target, sizeof(target), "%s/target", dir);
    snprintf(link, sizeof(link), "%s/link", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(hcomp_tier_ensure_private_dir(link, &err), HCOMP_E_ACCESS);
    assert_non_null(strstr(err.msg, link));
    assert_non_null(strstr(err.msg, "symbolic link"));
    /* a dangling link too (nothing may be created through it) */
    char dangling[512], dtarget[512];
    snprintf(dangling, sizeof(dangling), "%s/dangling", dir);
    snprintf(dtarget, sizeof(dtarget), "%s/dangling-target", dir);
    assert_int_equal(symlink(dtarget, dangling), 0);
    assert_int_not_equal(hcomp_tier_ensure_private_dir(dangling, &err), HCOMP_OK);
    assert_int_equal(lstat(dtarget, &st), -1);

    /* a directory others can enter */
    snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0755), 0);
    assert_int_equal(hcomp_tier_ensure_private_dir(open_dir, &err), HCOMP_E_ACCESS);
    assert_non_null(strstr(err.msg, open_dir));
    assert_int_equal(chmod(open_dir, 0701), 0);     /* even search permission only */
    assert_int_equal(hcomp_tier_ensure_private_dir(open_dir, &err), HCOMP_E_ACCESS);

    /* a regular file */
    snprintf(file, sizeof(file), "%s/plain", dir);
    write_file(file, "x");
    assert_int_equal(hcomp_tier_ensure_private_dir(file, &err), HCOMP_E_ACCESS);
    assert_non_null(strstr(err.msg, file));

    /* the parent does not exist */
    snprintf(orphan, sizeof(orphan), "%s/no/such/parent", dir);
    assert_int_equal(hcomp_tier_ensure_private_dir(orphan, &err), HCOMP_E_NOENT);
    assert_non_null(strstr(err.msg, orphan));

    /* someone else's directory (only root can make one to test with) */
    if (geteuid() == 0) {
        char foreign[512];
        snprintf(foreign, sizeof(foreign), "%s/foreign", dir);
        assert_int_equal(mkdir(foreign, 0700), 0);
        assert_int_equal(chown(foreign, 65534, 65534), 0);
        assert_int_equal(hcomp_tier_ensure_private_dir(foreign, &err), HCOMP_E_ACCESS);
        assert_non_null(strstr(err.msg, foreign));
    }
}

/* "volatile" as configured wins; without it, a tier on a RAM-backed file system is
 * volatile and one on a disk is not (where this machine has both). */
static void test_volatile(void **state)
{
    const char *disk = *state;
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"tiers\": [{\"name\": \"shm\", \"path\": \"/dev/shm\"},"
             " {\"name\": \"shm-said-not\", \"path\": \"/dev/shm\", \"volatile\": false},"
             " {\"name\": \"disk-said\", \"path\": \"%s\", \"volatile\": true},"
             " {\"name\": \"disk\", \"path\": \"%s\"}, {\"name\": \"here\", \"path\": \"@filedir\"}]}",
             disk, disk);
    hcomp_tier_config cfg;
    hcomp_error err;
    assert_int_equal(hcomp_tier_config_parse(json, "test", &cfg, &err), HCOMP_OK);
    assert_int_equal(cfg.tier[0].volatile_mode, -1);
    assert_int_equal(cfg.tier[1].volatile_mode, 0);
    assert_int_equal(cfg.tier[2].volatile_mode, 1);
    char file[PATH_MAX];
    snprintf(file, sizeof(file), "%s/f.dat", disk);
    assert_int_equal(hcomp_tier_volatile(&cfg.tier[1], file), 0);
    assert_int_equal(hcomp_tier_volatile(&cfg.tier[2], file), 1);
    struct statfs sf;
    if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC)
        assert_int_equal(hcomp_tier_volatile(&cfg.tier[0], file), 1);
    if (statfs(disk, &sf) == 0 && sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC) {
        assert_int_equal(hcomp_tier_volatile(&cfg.tier[3], file), 0);
        assert_int_equal(hcomp_tier_volatile(&cfg.tier[4], file), 0);   /* the file's directory */
    }
    hcomp_tier_config def;
    assert_int_equal(hcomp_tier_config_default(&def, &err), HCOMP_OK);
    for (int t = 0; t < def.ntiers; t++)
        assert_int_equal(def.tier[t].volatile_mode, -1);     /* detected, never assumed */
}

/* ---- the node's cache of tier speed probes ---------------------------------------- */

static void write_probe(const char *cache, const char *dir, const char *text)
{
    struct stat st;
    char path[1024];
    assert_int_equal(stat(dir, &st), 0);
    snprintf(path, sizeof(path), "%s/probe-%llx", cache, (unsigned long long) st.st_dev);
    write_file(path, text);
}

/* The first process probes and stores; the next reads it while it is fresh, for any
 * directory of the same file system; a process that finds another probing leaves it for
 * later; stale, future or damaged entries are probed again; a cache directory others can
 * enter, a planted symbolic link or "off" mean no cache (every process probes, as without
 * it). */
static void test_probe_cache(void **state)
{
    const char *dir = *state;
    saved_env env = env_save("HCOMP_CACHE_DIR");
    char cache[512], tier[512], text[256], link[512];
    snprintf(cache, sizeof(cache), "%s/cache", dir);
    snprintf(tier, sizeof(tier), "%s/tier", dir);
    assert_int_equal(mkdir(tier, 0755), 0);
    setenv("HCOMP_CACHE_DIR", cache, 1);
    hcomp_probe_speeds p = {0, 0, 0, 0};
    const hcomp_probe_speeds found = {5e8, 1.25e9, 7e8, 2.5e9}, failed = {0, 0, 0, 0};
    int fd = -1, fd2 = -1;

    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_MINE);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(lstat(cache, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* meanwhile another process (another open file description) does not probe */
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd2), HCOMP_PROBE_BUSY);
    assert_int_equal(fd2, -1);
    hcomp_probe_cache_end(fd, &found);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_CACHED);
    assert_int_equal(fd, -1);
    assert_near(p.read_Bps, 5e8);
    assert_near(p.write_Bps, 1.25e9);
    assert_near(p.read_all_Bps, 7e8);
    assert_near(p.write_all_Bps, 2.5e9);
    /* read without the lock, as a process's first plan does */
    memset(&p, 0, sizeof(p));
    assert_int_equal(hcomp_probe_cache_peek(tier, &p), 1);
    assert_near(p.write_all_Bps, 2.5e9);
    /* another directory of the same file system (a new job's) takes the same figures */
    char other[600];
    snprintf(other, sizeof(other), "%s/other-job", dir);
    assert_int_equal(mkdir(other, 0755), 0);
    memset(&p, 0, sizeof(p));
    assert_int_equal(hcomp_probe_cache_begin(other, &p, &fd), HCOMP_PROBE_CACHED);
    assert_int_equal(fd, -1);
    assert_near(p.read_Bps, 5e8);
    assert_near(p.write_Bps, 1.25e9);
    /* a failed probe is not stored */
    write_probe(cache, tier, "");
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_MINE);
    hcomp_probe_cache_end(fd, &failed);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_MINE);
    hcomp_probe_cache_end(fd, &failed);

    /* stale (fifteen minutes: a probe stands for ten, HCOMP_PROBE_MAX_AGE; two hours),
     * from the future, damaged or of another version: probed again */
    double now = (double) time(NULL);
    const char *bad[] = {"hcomp-probe 2 5e8 1e9 0 0 %.0f\n", "hcomp-probe 2 5e8 1e9 0 0 %.0f\n",
                         "hcomp-probe 2 5e8 1e9 0 0 %.0f\n",
                         "hcomp-probe 2 nan 1e9 0 0 %.0f\n", "hcomp-probe 2 -5 1e9 0 0 %.0f\n",
                         "hcomp-probe 2 5e8 1e9 -1 0 %.0f\n",
                         "hcomp-probe 1 5e8 1e9 %.0f\n", "hcomp-probe 3 5e8 1e9 0 0 %.0f\n",
                         "garbage %.0f"};
    double when[] = {now - 900, now - 7200, now + 3600, now, now, now, now, now, now};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), bad[i], when[i]);
        write_probe(cache, tier, text);
        if (hcomp_probe_cache_begin(tier, &p, &fd) != HCOMP_PROBE_MINE)
            fail_msg("cache entry \"%s\" was taken as a fresh probe", text);
        if (hcomp_probe_cache_peek(tier, &p) != 0)
            fail_msg("cache entry \"%s\" was read as a fresh probe", text);
        hcomp_probe_cache_end(fd, &failed);
    }
    /* storing a probe removes entries older than a probe stands */
    char old_entry[1024];
    snprintf(old_entry, sizeof(old_entry), "%s/probe-1-2", cache);
    write_file(old_entry, "hcomp-probe 1 1 1 1\n");
    struct timespec ages[2] = {{(time_t) now - 7200, 0}, {(time_t) now - 7200, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old_entry, ages, 0), 0);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_MINE);
    hcomp_probe_cache_end(fd, &failed);
    assert_int_equal(access(old_entry, F_OK), -1);
    /* ... but not the stale entry that is being probed again: it takes the new probe */
    snprintf(text, sizeof(text), "hcomp-probe 2 5e8 1e9 0 0 %.0f\n", now - 7200);
    write_probe(cache, tier, text);
    char held[1024];
    assert_int_equal(stat(tier, &st), 0);
    snprintf(held, sizeof(held), "%s/probe-%llx", cache, (unsigned long long) st.st_dev);
    assert_int_equal(utimensat(AT_FDCWD, held, ages, 0), 0);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_MINE);
    const hcomp_probe_speeds again = {3e8, 4e8, 0, 0};
    hcomp_probe_cache_end(fd, &again);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_CACHED);
    assert_near(p.write_Bps, 4e8);
    assert_near(p.write_all_Bps, 0);
    snprintf(text, sizeof(text), "hcomp-probe 2 7e8 9e8 8e8 1.1e9 %.0f\n", now - 300);
    write_probe(cache, tier, text);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_CACHED);
    assert_near(p.write_Bps, 9e8);
    assert_near(p.write_all_Bps, 1.1e9);

    /* a planted symbolic link in place of the entry is not followed */
    char entry[1024], victim[512];
    assert_int_equal(stat(tier, &st), 0);
    snprintf(entry, sizeof(entry), "%s/probe-%llx", cache, (unsigned long long) st.st_dev);
    snprintf(victim, sizeof(victim), "%s/victim", dir);
    write_file(victim, "mine\n");
    assert_int_equal(unlink(entry), 0);
    assert_int_equal(symlink(victim, entry), 0);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_NO_CACHE);
    assert_int_equal(fd, -1);
    assert_int_equal(hcomp_probe_cache_peek(tier, &p), 0);
    FILE *v = fopen(victim, "r");
    assert_non_null(v);
    assert_non_null(fgets(text, sizeof(text), v));
    fclose(v);
    assert_string_equal(text, "mine\n");

    /* a cache directory others can enter, or a link to one, or "off": no cache */
    assert_int_equal(chmod(cache, 0755), 0);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_NO_CACHE);
    assert_int_equal(chmod(cache, 0700), 0);
    snprintf(link, sizeof(link), "%s/cache-link", dir);
    assert_int_equal(symlink(cache, link), 0);
    setenv("HCOMP_CACHE_DIR", link, 1);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_NO_CACHE);
    setenv("HCOMP_CACHE_DIR", "off", 1);
    assert_int_equal(hcomp_probe_cache_begin(tier, &p, &fd), HCOMP_PROBE_NO_CACHE);
    const hcomp_probe_speeds ones = {1, 1, 1, 1};
    hcomp_probe_cache_end(-1, &ones);        /* nothing held: nothing done */
    env_restore(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_parse_minimal),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_embedded_default),
        cmocka_unit_test_setup_teardown(test_volatile, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_load_file, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_private_dir, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_probe_cache, make_tmpdir, remove_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
