/*
 * Fencing tokens through the C ABI, one case per run:  test_fencing CASE URL...
 *
 * Driven by ffi/tests/c_abi.rs against 5 real local masters. Prints "ok CASE" and exits 0
 * when every check held; prints each failed check (file:line) and exits 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "redlock.h"

static redlock_client *client_with(uint32_t fencing, uint32_t fanout) {
    redlock_options opts = redlock_options_default();
    opts.fencing = fencing;
    opts.fanout = fanout;
    opts.retry_count = 2;
    opts.retry_delay_ms = 20;
    opts.instance_timeout_ms = 2000; /* generous enough for a run under the sanitizers */
    return connected_client(&opts);
}

/* 60 acquisitions of one resource taking turns across 3 clients: strictly increasing tokens,
 * in both fan-out modes; an unfenced lock has no token. */
static void turns(void) {
    const uint32_t fanouts[2] = {REDLOCK_FANOUT_SEQUENTIAL, REDLOCK_FANOUT_CONCURRENT};
    for (int f = 0; f < 2; f++) {
        redlock_client *clients[3];
        for (int c = 0; c < 3; c++) {
            clients[c] = client_with(1, fanouts[f]);
        }
        const char *resource = f == 0 ? "c:turns:sequential" : "c:turns:concurrent";
        uint64_t previous = 0;
        for (int turn = 0; turn < 60; turn++) {
            redlock_client *client = clients[turn % 3];
            /* ANCHOR: usage */
            redlock_lock *lock = NULL;
            CHECK_STATUS(redlock_acquire(client, resource, 10000, &lock), REDLOCK_OK);
            if (lock == NULL) {
                continue;
            }
            uint64_t token = 0;
            CHECK_STATUS(redlock_lock_fencing_token(lock, &token), REDLOCK_OK);
            /* ... send `token` with every write to the protected resource ... */
            /* ANCHOR_END: usage */
            CHECK(token > previous);
            previous = token;
            CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
            redlock_lock_free(lock);
        }
        CHECK(previous >= 60);
        for (int c = 0; c < 3; c++) {
            redlock_client_free(clients[c]);
        }
    }

    redlock_client *plain = client_with(0, REDLOCK_FANOUT_CONCURRENT);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_acquire(plain, "c:unfenced", 10000, &lock), REDLOCK_OK);
    uint64_t untouched = 12345;
    CHECK_STATUS(redlock_lock_fencing_token(lock, &untouched), REDLOCK_INVALID_ARGUMENT);
    CHECK(strstr(redlock_last_error_message(), "opts.fencing = 1") != NULL);
    CHECK(untouched == 12345);
    CHECK_STATUS(redlock_lock_fencing_token(NULL, &untouched), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_lock_fencing_token(lock, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK(untouched == 12345);
    CHECK_STATUS(redlock_release(plain, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_client_free(plain);
}

/* 8 threads on 2 clients contend for one resource for a bounded time: no token is returned
 * twice, and each is above every token returned before its acquire began. */
enum { THREADS = 8, MAX_TOKENS = 100000 };
static const double RUN_SECONDS = 3.0;
static redlock_client *contenders[2];
static pthread_mutex_t book = PTHREAD_MUTEX_INITIALIZER;
static uint64_t highest;
static uint64_t *returned;
static size_t n_returned;
static int below_earlier;
static int unexpected;

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *contend(void *arg) {
    redlock_client *client = contenders[(size_t)arg % 2];
    double until = now_seconds() + RUN_SECONDS;
    while (now_seconds() < until) {
        pthread_mutex_lock(&book);
        uint64_t before = highest;
        pthread_mutex_unlock(&book);
        redlock_lock *lock = NULL;
        redlock_status status = redlock_acquire(client, "c:contended", 10000, &lock);
        if (status == REDLOCK_NOT_ACQUIRED) {
            continue;
        }
        if (status != REDLOCK_OK) {
            fprintf(stderr, "contend: %s: %s\n", redlock_status_str(status),
                    redlock_last_error_message());
            pthread_mutex_lock(&book);
            unexpected++;
            pthread_mutex_unlock(&book);
            continue;
        }
        uint64_t token = 0;
        redlock_status read = redlock_lock_fencing_token(lock, &token);
        pthread_mutex_lock(&book);
        if (read != REDLOCK_OK) {
            unexpected++;
        } else {
            if (token <= before) {
                fprintf(stderr, "token %llu not above %llu, returned before its acquire began\n",
                        (unsigned long long)token, (unsigned long long)before);
                below_earlier++;
            }
            if (token > highest) {
                highest = token;
            }
            if (n_returned < MAX_TOKENS) {
                returned[n_returned++] = token;
            }
        }
        pthread_mutex_unlock(&book);
        if (redlock_release(client, lock) != REDLOCK_OK) {
            pthread_mutex_lock(&book);
            unexpected++;
            pthread_mutex_unlock(&book);
        }
        redlock_lock_free(lock);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void threads(void) {
    returned = calloc(MAX_TOKENS, sizeof *returned);
    CHECK(returned != NULL);
    for (int c = 0; c < 2; c++) {
        contenders[c] = client_with(1, REDLOCK_FANOUT_CONCURRENT);
    }
    pthread_t ids[THREADS];
    for (size_t i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&ids[i], NULL, contend, (void *)i) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(ids[i], NULL);
    }
    qsort(returned, n_returned, sizeof *returned, by_value);
    int twice = 0;
    for (size_t i = 1; i < n_returned; i++) {
        twice += returned[i] == returned[i - 1];
    }
    printf("threads: %zu tokens, highest %llu\n", n_returned, (unsigned long long)highest);
    CHECK(twice == 0);
    CHECK(below_earlier == 0);
    CHECK(unexpected == 0);
    CHECK(n_returned >= 2);
    for (int c = 0; c < 2; c++) {
        redlock_client_free(contenders[c]);
    }
    free(returned);
}

int main(int argc, char **argv) {
    static const test_case cases[] = {
        {"turns", turns},
        {"threads", threads},
    };
    return run_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
