/*
 * The checks the C test programs share. A failed check is counted in `failures` (atomic:
 * some cases check from several threads) and printed with its file, line and the library's
 * last error message; each program's main exits 1 when `failures` is not 0.
 */
#ifndef REDLOCK_TEST_CHECK_H
#define REDLOCK_TEST_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "redlock.h"

static atomic_int failures = 0;

/* `cond` holds. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,      \
                    __LINE__, #cond, redlock_last_error_message());                      \
        }                                                                                \
    } while (0)

/* `call` returns `expected`. */
#define CHECK_STATUS(call, expected)                                                     \
    do {                                                                                 \
        redlock_status got_ = (call);                                                    \
        if (got_ != (expected)) {                                                        \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n",     \
                    __FILE__, __LINE__, #call, redlock_status_str(got_),                 \
                    redlock_status_str(expected), redlock_last_error_message());         \
        }                                                                                \
    } while (0)

/* The last error message contains `needle`. */
#define CHECK_MESSAGE(needle)                                                            \
    do {                                                                                 \
        if (strstr(redlock_last_error_message(), (needle)) == NULL) {                    \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: last error %s does not contain %s\n", __FILE__,      \
                    __LINE__, redlock_last_error_message(), (needle));                   \
        }                                                                                \
    } while (0)

#endif
