/* The codec registry: a table indexed by on-disk id, plus "name[:level]" parsing
 * for the hcomp_codec hint. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codecs_internal.h"

/* Position == id, so lookups by id are an index (tests check the invariant). */
static const hcomp_codec *const codecs[] = {
    &hcomp_codec_none,  &hcomp_codec_lz4,   &hcomp_codec_zstd,   &hcomp_codec_zlib,
    &hcomp_codec_bzip2, &hcomp_codec_brotli, &hcomp_codec_snappy, &hcomp_codec_lzma,
    &hcomp_codec_blosc_lz4, &hcomp_codec_blosc_zstd, &hcomp_codec_blosc2_lz4,
    &hcomp_codec_blosc2_zstd,
};
_Static_assert(sizeof codecs / sizeof codecs[0] == HCOMP_CODEC_COUNT,
               "one registry entry per enum hcomp_codec_id");

const hcomp_codec *hcomp_codec_by_id(unsigned id)
{
    return id < HCOMP_CODEC_COUNT ? codecs[id] : NULL;
}

const hcomp_codec *hcomp_codec_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < HCOMP_CODEC_COUNT; i++)
        if (strcmp(codecs[i]->name, name) == 0)
            return codecs[i];
    return NULL;
}

size_t hcomp_codec_count(void)
{
    return HCOMP_CODEC_COUNT;
}

const hcomp_codec *hcomp_codec_at(size_t index)
{
    return index < HCOMP_CODEC_COUNT ? codecs[index] : NULL;
}

/* Fill err (if any) with HCOMP_E_INVAL and a message; returns HCOMP_E_INVAL. */
static int parse_fail(hcomp_error *err, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = HCOMP_E_INVAL;
    }
    return HCOMP_E_INVAL;
}

int hcomp_codec_parse(const char *spec, const hcomp_codec **codec, int *level,
                      hcomp_error *err)
{
    if (spec == NULL)
        return parse_fail(err, "invalid codec spec: none given");
    const char *colon = strchr(spec, ':');
    size_t name_len = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    const hcomp_codec *c = NULL;
    for (size_t i = 0; i < HCOMP_CODEC_COUNT && c == NULL; i++)
        if (strncmp(codecs[i]->name, spec, name_len) == 0 &&
            codecs[i]->name[name_len] == '\0')
            c = codecs[i];
    if (c == NULL) {
        char names[160] = "";
        for (size_t i = 0; i < HCOMP_CODEC_COUNT; i++) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                     codecs[i]->name);
        }
        return parse_fail(err, "invalid codec spec \"%s\": unknown codec \"%.*s\" "
                          "(valid: %s, optionally followed by :level)",
                          spec, (int)name_len, spec, names);
    }
    int lvl = HCOMP_LEVEL_DEFAULT;
    if (colon != NULL) {
        const char *p = colon + 1;
        if (c->level_min == c->level_max)
            return parse_fail(err, "invalid codec spec \"%s\": codec %s takes no level",
                              spec, c->name);
        /* strtol alone would accept "", " 5" and "5x"; insist on [+-]digits. */
        const char *d = (*p == '+' || *p == '-') ? p + 1 : p;
        char *end = NULL;
        errno = 0;
        long v = (*d >= '0' && *d <= '9') ? strtol(p, &end, 10) : 0;
        if (end == NULL || *end != '\0')
            return parse_fail(err, "invalid codec spec \"%s\": level \"%s\" is not an "
                              "integer (%s levels are %d..%d)",
                              spec, p, c->name, c->level_min, c->level_max);
        if (errno == ERANGE || v < c->level_min || v > c->level_max)
            return parse_fail(err, "invalid codec spec \"%s\": level %s is outside %s's "
                              "range %d..%d", spec, p, c->name, c->level_min, c->level_max);
        lvl = (int)v;
    }
    if (codec != NULL)
        *codec = c;
    if (level != NULL)
        *level = lvl;
    return HCOMP_OK;
}
