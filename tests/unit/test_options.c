/* Unit tests of the hcomp_* hints: defaults, set/get round trips, rejection of bad
 * values with a message that names the hint, and hcomp_options_is_hint. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcomp.h"
#include "file/options.h"

static void get(const hcomp_options *o, const char *key, char *buf, size_t n)
{
    assert_int_equal(hcomp_options_get(o, key, buf, n), HCOMP_OK);
}

static void assert_get(const hcomp_options *o, const char *key, const char *want)
{
    char buf[4096];
    get(o, key, buf, sizeof(buf));
    if (strcmp(buf, want) != 0)
        fail_msg("%s is \"%s\", want \"%s\"", key, buf, want);
}

static void test_defaults(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    assert_get(o, "hcomp_codec", "auto");
    assert_get(o, "hcomp_codecs", "all");
    assert_get(o, "hcomp_priority", "read_after_write");
    assert_get(o, "hcomp_weights", "0.3,0.3,0.4");
    assert_get(o, "hcomp_feedback_interval", "16");
    assert_get(o, "hcomp_piece_size", "1048576");
    assert_get(o, "hcomp_threads", "0");
    assert_get(o, "hcomp_node_writers", "0");
    assert_get(o, "hcomp_shuffle", "auto");
    assert_get(o, "hcomp_drain", "close");
    assert_get(o, "hcomp_flush_after", "1048576");
    /* hcomp_config: the environment, else the embedded configuration */
    char *saved = getenv("HCOMP_CONFIG") ? strdup(getenv("HCOMP_CONFIG")) : NULL;
    unsetenv("HCOMP_CONFIG");
    assert_get(o, "hcomp_config", "embedded");
    setenv("HCOMP_CONFIG", "/etc/hcomp/tiers.json", 1);
    assert_get(o, "hcomp_config", "/etc/hcomp/tiers.json");
    assert_int_equal(hcomp_options_set(o, "hcomp_config", "/mine.json", NULL), HCOMP_OK);
    assert_get(o, "hcomp_config", "/mine.json");     /* the hint beats the environment */
    if (saved) {
        setenv("HCOMP_CONFIG", saved, 1);
        free(saved);
    } else
        unsetenv("HCOMP_CONFIG");
    hcomp_options_free(o);
}

/* A priority replaces earlier weights; weights set after it replace the priority's. */
static void test_priority_and_weights(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    assert_int_equal(hcomp_options_set(o, "hcomp_weights", "1,0,1", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.5,0,0.5");
    assert_int_equal(hcomp_options_set(o, "hcomp_priority", "archival", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.01,0,0.99");
    assert_int_equal(hcomp_options_set(o, "hcomp_weights", "2,1,1", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.5,0.25,0.25");
    assert_get(o, "hcomp_priority", "archival");
    assert_int_equal(hcomp_options_set(o, "hcomp_weights", "", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.01,0,0.99");
    assert_int_equal(hcomp_options_set(o, "hcomp_priority", "read_bandwidth", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.01,0.495,0.495");
    assert_int_equal(hcomp_options_set(o, "hcomp_priority", "write_bandwidth", NULL), HCOMP_OK);
    assert_get(o, "hcomp_weights", "0.5,0,0.5");
    hcomp_options_free(o);
}

/* Every hint shown and set again, in the library's order (what the driver's Open does
 * with the file's info): the same options, and a priority stays in force (its block
 * sizes); weights other than the priority's still override it */
static void test_shown_options_reopen_alike(void **state)
{
    (void) state;
    static const char *prio[] = {"archival", "read_after_write", "read_bandwidth", "async",
                                 "write_bandwidth"};
    for (size_t p = 0; p < sizeof(prio) / sizeof(prio[0]) + 1; p++) {
        hcomp_options *o = hcomp_options_new(), *again = hcomp_options_new();
        assert_non_null(o);
        assert_non_null(again);
        if (p < sizeof(prio) / sizeof(prio[0]))
            assert_int_equal(hcomp_options_set(o, "hcomp_priority", prio[p], NULL), HCOMP_OK);
        else    /* explicit weights: they stay explicit */
            assert_int_equal(hcomp_options_set(o, "hcomp_weights", "1,1,1", NULL), HCOMP_OK);
        for (size_t i = 0; i < hcomp_options_count(); i++) {
            char v[512];
            assert_int_equal(hcomp_options_get(o, hcomp_options_key(i), v, sizeof(v)), HCOMP_OK);
            assert_int_equal(hcomp_options_set(again, hcomp_options_key(i), v, NULL), HCOMP_OK);
        }
        assert_int_equal(hcomp_options_block_size(again), hcomp_options_block_size(o));
        assert_int_equal(hcomp_options_block_size_bs(again), hcomp_options_block_size_bs(o));
        if (p == 0)
            assert_int_equal(hcomp_options_block_size(again), 1u << 20);
        if (p == 1)
            assert_int_equal(hcomp_options_block_size_bs(again), 65536);
        hcomp_options_free(o);
        hcomp_options_free(again);
    }
}

/* The listing functions describe the same options get() knows, with their defaults. */
static void test_listing(void **state)
{
    (void) state;
    size_t n = hcomp_options_count();
    assert_true(n >= 12);
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    int seen_codec = 0, seen_piece = 0, seen_config = 0;
    for (size_t i = 0; i < n; i++) {
        const char *key = hcomp_options_key(i), *def = hcomp_options_default(i);
        assert_non_null(key);
        assert_non_null(def);
        /* all hcomp_* but MPI's reserved access_style */
        assert_true(hcomp_options_is_hint(key) || strcmp(key, "access_style") == 0);
        char buf[4096];
        get(o, key, buf, sizeof(buf));
        /* these show what is in force: the environment's, the preset's */
        if (strcmp(key, "hcomp_config") == 0)
            seen_config = 1;
        else if (strcmp(key, "hcomp_seed") == 0 || strcmp(key, "hcomp_weights") == 0 ||
                 strcmp(key, "hcomp_stats") == 0)
            assert_true(buf[0] != '\0');
        else {
            assert_string_equal(buf, def);
            seen_codec |= strcmp(key, "hcomp_codec") == 0;
            seen_piece |= strcmp(key, "hcomp_piece_size") == 0;
        }
    }
    assert_true(seen_codec && seen_piece && seen_config);
    assert_null(hcomp_options_key(n));
    assert_null(hcomp_options_default(n));
    hcomp_options_free(o);
}

static void test_set_get_roundtrip(void **state)
{
    (void) state;
    static const struct { const char *key, *value, *shown; } cases[] = {
        {"hcomp_codec", "zstd:5", "zstd:5"},
        {"hcomp_codec", "zstd", "zstd"},
        {"hcomp_codec", "zstd:1", "zstd:1"},
        {"hcomp_codec", "zlib:9", "zlib:9"},
        {"hcomp_codec", "none", "none"},
        {"hcomp_codec", "lz4", "lz4"},
        {"hcomp_piece_size", "4096", "4096"},
        {"hcomp_piece_size", "8192", "8192"},
        {"hcomp_piece_size", "4MiB", "4194304"},
        {"hcomp_piece_size", "64MiB", "67108864"},
        {"hcomp_piece_size", "1048576", "1048576"},
        {"hcomp_config", "/some/where/tiers.json", "/some/where/tiers.json"},
        {"hcomp_codec", "auto", "auto"},
        {"hcomp_codecs", "lz4,zstd:3", "lz4,zstd:3"},
        {"hcomp_codecs", "all", "all"},
        {"hcomp_priority", "archival", "archival"},
        {"hcomp_priority", "async", "async"},
        {"hcomp_weights", "1,1,2", "0.25,0.25,0.5"},
        {"hcomp_weights", "0.3,0.3,0.4", "0.3,0.3,0.4"},
        {"hcomp_seed", "/x/seed.json", "/x/seed.json"},
        {"hcomp_feedback_interval", "0", "0"},
        {"hcomp_feedback_interval", "64", "64"},
        {"hcomp_threads", "2", "2"},
        {"hcomp_node_writers", "64", "64"},
        {"hcomp_shuffle", "off", "off"},
        {"hcomp_shuffle", "bytedelta", "bytedelta"},
        {"hcomp_shuffle", "delta", "delta"},
        {"hcomp_shuffle", "bit", "bit"},
        {"hcomp_shuffle", "byte", "byte"},
        {"hcomp_shuffle", "auto", "auto"},
        {"hcomp_codec", "blosc2-zstd:9", "blosc2-zstd:9"},
        {"hcomp_stats", "1", "1"},
        {"hcomp_drain", "never", "never"},
        {"hcomp_drain", "writeback", "writeback"},
        {"hcomp_drain_wait", "90s", "90"},
        {"hcomp_drain_wait", "0", "0"},
        {"hcomp_flush_after", "0", "0"},
        {"hcomp_flush_after", "256KiB", "262144"},
        {"hcomp_flush_after", "1GiB", "1073741824"},
        {"hcomp_read_ahead", "0", "0"},
        /* MPI's access_style: shown as given (MPICH's test/mpi/io/setinfo wants it back
         * verbatim), values hcomp does not know accepted and ignored */
        {"access_style", "write_once,random", "write_once,random"},
        {"access_style", "read_once", "read_once"},
        {"access_style", "random, not_a_style", "random, not_a_style"},
        {"access_style", "", ""},
    };
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_error err;
        int rc = hcomp_options_set(o, cases[i].key, cases[i].value, &err);
        if (rc != HCOMP_OK)
            fail_msg("set %s=%s: %s", cases[i].key, cases[i].value, err.msg);
        assert_get(o, cases[i].key, cases[i].shown);
        /* what get() shows is accepted by set() and means the same */
        char shown[4096];
        get(o, cases[i].key, shown, sizeof(shown));
        hcomp_options *o2 = hcomp_options_new();
        assert_non_null(o2);
        assert_int_equal(hcomp_options_set(o2, cases[i].key, shown, &err), HCOMP_OK);
        assert_get(o2, cases[i].key, cases[i].shown);
        hcomp_options_free(o2);
    }
    /* every registered codec by name */
    for (size_t i = 0; i < hcomp_codec_count(); i++) {
        const hcomp_codec *c = hcomp_codec_at(i);
        hcomp_error err;
        assert_int_equal(hcomp_options_set(o, "hcomp_codec", c->name, &err), HCOMP_OK);
        assert_get(o, "hcomp_codec", c->name);
    }
    hcomp_options_free(o);
}

static void test_dup_is_independent(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    assert_int_equal(hcomp_options_set(o, "hcomp_codec", "zstd:5", NULL), HCOMP_OK);
    hcomp_options *d = hcomp_options_dup(o);
    assert_non_null(d);
    assert_get(d, "hcomp_codec", "zstd:5");
    assert_int_equal(hcomp_options_set(d, "hcomp_codec", "zlib", NULL), HCOMP_OK);
    assert_int_equal(hcomp_options_set(d, "hcomp_piece_size", "8192", NULL), HCOMP_OK);
    assert_get(o, "hcomp_codec", "zstd:5");
    assert_get(o, "hcomp_piece_size", "1048576");
    assert_get(d, "hcomp_codec", "zlib");
    hcomp_options_free(d);
    hcomp_options_free(o);
}

static void test_invalid_values(void **state)
{
    (void) state;
    static const struct { const char *key, *value; } cases[] = {
        {"hcomp_piece_size", "1000"},       /* not a multiple of 4096 */
        {"hcomp_piece_size", "0"},
        {"hcomp_piece_size", "128MiB"},     /* above 64 MiB */
        {"hcomp_piece_size", "64MiB4"},
        {"hcomp_piece_size", "abc"},
        {"hcomp_piece_size", "-4096"},
        {"hcomp_piece_size", "-1"},
        {"hcomp_piece_size", ""},
        {"hcomp_piece_size", "4096 bananas"},
        {"hcomp_codec", "nosuch"},
        {"hcomp_codec", ""},
        {"hcomp_codec", "zstd:"},
        {"hcomp_codec", "zstd:abc"},
        {"hcomp_codec", "zstd:1000"},
        {"hcomp_codec", "lz4x"},
        {"hcomp_codc", "lz4"},              /* unknown key */
        {"hcomp_", "1"},
        {"hcomp_piecesize", "4096"},
        {"hcomp_codecs", ""},
        {"hcomp_codecs", "lz4,,nosuch"},
        {"hcomp_priority", "fastest"},
        {"hcomp_weights", "1,2"},
        {"hcomp_weights", "0,0,0"},
        {"hcomp_weights", "-1,1,1"},
        {"hcomp_weights", "a,b,c"},
        {"hcomp_weights", "1,1,1,1"},
        {"hcomp_weights", "1e308,1e308,1e308"},
        {"hcomp_feedback_interval", "-1"},
        {"hcomp_feedback_interval", "many"},
        {"hcomp_threads", "100000"},
        {"hcomp_node_writers", "-2"},
        {"hcomp_node_writers", "2000000"},
        {"hcomp_shuffle", "yes"},
        {"hcomp_stats", "maybe"},
        {"hcomp_drain", "sometimes"},
        {"hcomp_drain_wait", "-1"},
        {"hcomp_drain_wait", "forever"},
        {"hcomp_flush_after", "2GiB"},
        {"hcomp_flush_after", "-1"},
        {"hcomp_flush_after", "soon"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_options *o = hcomp_options_new();
        assert_non_null(o);
        assert_int_equal(hcomp_options_set(o, "hcomp_codec", "zstd:3", NULL), HCOMP_OK);
        assert_int_equal(hcomp_options_set(o, "hcomp_piece_size", "8192", NULL), HCOMP_OK);
        hcomp_error err;
        memset(&err, 0, sizeof(err));
        int rc = hcomp_options_set(o, cases[i].key, cases[i].value, &err);
        if (rc != HCOMP_E_INVAL)
            fail_msg("set %s=\"%s\" returned %s, want HCOMP_E_INVAL", cases[i].key,
                     cases[i].value, hcomp_code_name(rc));
        assert_int_equal(err.code, HCOMP_E_INVAL);
        if (strstr(err.msg, cases[i].key) == NULL)
            fail_msg("message for %s=\"%s\" does not name the key: %s", cases[i].key,
                     cases[i].value, err.msg);
        /* a rejected value leaves the options as they were */
        assert_get(o, "hcomp_codec", "zstd:3");
        assert_get(o, "hcomp_piece_size", "8192");
        /* and a NULL error pointer is allowed */
        assert_int_equal(hcomp_options_set(o, cases[i].key, cases[i].value, NULL), HCOMP_E_INVAL);
        hcomp_options_free(o);
    }
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    hcomp_error err;
    assert_int_equal(hcomp_options_set(o, NULL, "x", &err), HCOMP_E_INVAL);
    assert_int_equal(hcomp_options_set(o, "hcomp_codec", NULL, &err), HCOMP_E_INVAL);
    char buf[64];
    assert_int_equal(hcomp_options_get(o, "hcomp_codc", buf, sizeof(buf)), HCOMP_E_INVAL);
    hcomp_options_free(o);
}

/* access_style is parsed into what hcomp acts on: random unless a sequential style is there
 * too; unknown words, spaces and empty items do not hide a known one */
static void test_access_style(void **state)
{
    (void) state;
    static const struct { const char *value; int random; } cases[] = {
        {"random", 1}, {"write_once,random", 1}, {" random ,", 1}, {",,random", 1},
        {"bogus,random", 1}, {"random,sequential", 0}, {"reverse_sequential,random", 0},
        {"randomly", 0}, {"RANDOM", 0}, {"read_mostly", 0}, {"", 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_options *o = hcomp_options_new();
        hcomp_error err;
        assert_int_equal(hcomp_options_set(o, "access_style", cases[i].value, &err), HCOMP_OK);
        if (!!hcomp_options_access_random(o) != cases[i].random)
            fail_msg("access_style=\"%s\": random %d, want %d", cases[i].value,
                     hcomp_options_access_random(o), cases[i].random);
        assert_int_equal(hcomp_options_block_size(o), cases[i].random ? 8192u : 262144u);
        hcomp_options_free(o);
    }
    /* a value longer than MPI_MAX_INFO_VAL: taken, its meaning kept */
    char longv[3000];
    memset(longv, 'x', sizeof(longv));
    memcpy(longv, "random,", 7);
    longv[sizeof(longv) - 1] = '\0';
    hcomp_options *o = hcomp_options_new();
    assert_int_equal(hcomp_options_set(o, "access_style", longv, NULL), HCOMP_OK);
    assert_true(hcomp_options_access_random(o));
    hcomp_options_free(o);
}

/* A fixed codec and a transform it cannot carry do not go together (the open fails with
 * both named); every other pair does, and auto takes any. */
static void test_shuffle_fits_codec(void **state)
{
    (void) state;
    static const struct { const char *codec, *shuffle; int ok; } cases[] = {
        {"auto", "bytedelta", 1}, {"blosc2-zstd", "bytedelta", 1}, {"blosc2-lz4", "delta", 1},
        {"blosc2-lz4", "bit", 1}, {"blosc2-zstd:3", "byte", 1}, {"blosc-lz4", "bit", 1},
        {"blosc-zstd", "bytedelta", 0}, {"blosc-lz4", "delta", 0}, {"zstd", "byte", 1},
        {"zstd", "bit", 0}, {"lz4", "bytedelta", 0}, {"none", "byte", 0},
        {"zstd", "off", 1}, {"lz4", "auto", 1}};
    /* c-blosc2 would apply BLOSC_TYPESIZE over its chunks: a fixed blosc2 codec is refused,
     * naming the variable; other codecs are not */
    assert_int_equal(setenv("BLOSC_TYPESIZE", "2", 1), 0);
    for (int k = 0; k < 2; k++) {
        hcomp_options *o = hcomp_options_new();
        hcomp_error e;
        assert_int_equal(hcomp_options_set(o, "hcomp_codec", k ? "zstd" : "blosc2-zstd", &e),
                         HCOMP_OK);
        e.msg[0] = '\0';
        assert_int_equal(hcomp_options_check(o, &e), k ? HCOMP_OK : HCOMP_E_INVAL);
        if (!k)
            assert_non_null(strstr(e.msg, "BLOSC_TYPESIZE"));
        hcomp_options_free(o);
    }
    assert_int_equal(unsetenv("BLOSC_TYPESIZE"), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_options *o = hcomp_options_new();
        hcomp_error e;
        assert_int_equal(hcomp_options_set(o, "hcomp_codec", cases[i].codec, &e), HCOMP_OK);
        assert_int_equal(hcomp_options_set(o, "hcomp_shuffle", cases[i].shuffle, &e), HCOMP_OK);
        e.msg[0] = '\0';
        int rc = hcomp_options_check(o, &e);
        if ((rc == HCOMP_OK) != cases[i].ok)
            fail_msg("hcomp_codec=%s hcomp_shuffle=%s: check %d", cases[i].codec,
                     cases[i].shuffle, rc);
        if (!cases[i].ok)
            assert_non_null(strstr(e.msg, cases[i].shuffle));
        hcomp_options_free(o);
    }
}

static void test_is_hint(void **state)
{
    (void) state;
    static const struct { const char *key; int want; } cases[] = {
        {"hcomp_codec", 1}, {"hcomp_piece_size", 1}, {"hcomp_config", 1},
        {"hcomp_whatever", 1}, {"hcomp_", 1},
        {"hcomp", 0}, {"HCOMP_codec", 0}, {"cb_buffer_size", 0}, {"romio_cb_write", 0},
        {"xhcomp_codec", 0}, {"", 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!!hcomp_options_is_hint(cases[i].key) != cases[i].want)
            fail_msg("hcomp_options_is_hint(\"%s\") != %d", cases[i].key, cases[i].want);
    assert_false(hcomp_options_is_hint(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_priority_and_weights),
        cmocka_unit_test(test_shown_options_reopen_alike),
        cmocka_unit_test(test_set_get_roundtrip),
        cmocka_unit_test(test_dup_is_independent),
        cmocka_unit_test(test_invalid_values),
        cmocka_unit_test(test_access_style),
        cmocka_unit_test(test_is_hint),
        cmocka_unit_test(test_shuffle_fits_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
