/* The hcomp_* hints, declared once (X-macro) so names, defaults, parsing and
 * listing never drift apart. README lists them for users. */
#ifndef HCOMP_OPTIONS_H
#define HCOMP_OPTIONS_H

#include <limits.h>
#include <stdint.h>
#include "hcomp.h"

#define HCOMP_PIECE_ALIGN 4096u
#define HCOMP_PIECE_SIZE_MAX (64u << 20)

/*  X(field, hint name, default, parser) */
#define HCOMP_OPTION_LIST(X)                                        \
    X(config, "hcomp_config", "", opt_parse_config)                 \
    X(codec, "hcomp_codec", "lz4", opt_parse_codec)                 \
    X(piece_size, "hcomp_piece_size", "1048576", opt_parse_piece_size)

struct hcomp_options {
    char config[PATH_MAX];          /* "" : $HCOMP_CONFIG, else the embedded default */
    const hcomp_codec *codec;
    int level;                      /* HCOMP_LEVEL_DEFAULT or an explicit level */
    uint32_t piece_size;            /* multiple of 4096 */
};

#endif
