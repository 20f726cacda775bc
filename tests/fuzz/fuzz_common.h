/* Shared by the libFuzzer targets in tests/fuzz/ (built and run by tests/fuzz/run.sh).
 * A failed CHECK prints what was expected and aborts: libFuzzer reports it as a
 * crash and saves the input. */
#ifndef HCOMP_FUZZ_COMMON_H
#define HCOMP_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: property violated: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
