/*
 * What the C test programs share: the checks (a failed check is counted in `failures`,
 * atomic because some cases check from several threads, and printed with its file, line and
 * the library's last error message), the masters' URLs, a connected test client, and the
 * `PROGRAM CASE URL...` entry point that runs one case.
 */
#ifndef REDLOCK_TEST_CHECK_H
#define REDLOCK_TEST_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The masters' URLs, from the command line. */
static const char *const *urls;
static size_t n_urls;

/* A client of every master with `opts`, connected to every one that is up (exits when the
 * client cannot be made at all: no case can run then). */
static inline redlock_client *connected_client(const redlock_options *opts) {
    redlock_client *client = NULL;
    CHECK_STATUS(redlock_client_new(urls, n_urls, opts, &client), REDLOCK_OK);
    if (client == NULL) {
        fprintf(stderr, "cannot create a client: %s\n", redlock_last_error_message());
        exit(1);
    }
    size_t connected = 0;
    CHECK_STATUS(redlock_client_wait_connected(client, 5000, &connected), REDLOCK_OK);
    return client;
}

typedef struct {
    const char *name;
    void (*run)(void);
} test_case;

/* `PROGRAM CASE URL...`: runs the case named CASE; prints "ok CASE" and returns 0 when every
 * check held, prints the count of failed checks and returns 1 otherwise, 2 on bad usage. */
static inline int run_case(int argc, char **argv, const test_case *cases, size_t n_cases) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CASE URL...\n", argv[0]);
        return 2;
    }
    urls = (const char *const *)&argv[2];
    n_urls = (size_t)(argc - 2);
    for (size_t i = 0; i < n_cases; i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].run();
            if (failures > 0) {
                fprintf(stderr, "FAILED %s: %d check(s)\n", argv[1], (int)failures);
                return 1;
            }
            printf("ok %s\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}

#endif
