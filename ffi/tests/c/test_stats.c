/*
 * Tests of redlock_client_stats, one case per run:  test_stats CASE URL...
 *
 * Driven by ffi/tests/c_abi.rs, which starts 5 real local masters (killing the first 3 for
 * the "unavailable" case) and passes their URLs. Prints "ok CASE" and exits 0 when every
 * check held; prints each failed check (file:line) and exits 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "redlock.h"

/* The histogram's stated relative error of a quantile (redlock_stats docs: 0.4 %). */
#define QUANTILE_ERROR (1.0 / 256)

/* A test client: sequential fan-out (every master it asks answers before the call returns,
 * so the counts below are settled), quick retries, and a per-master timeout generous enough
 * for a run under valgrind. */
static redlock_client *test_client(void) {
    redlock_options opts = redlock_options_default();
    opts.fanout = REDLOCK_FANOUT_SEQUENTIAL;
    opts.retry_count = 2;
    opts.retry_delay_ms = 20;
    opts.instance_timeout_ms = 2000;
    return connected_client(&opts);
}

static redlock_stats stats_of(const redlock_client *client) {
    redlock_stats stats;
    memset(&stats, 0xAB, sizeof stats);
    stats.struct_size = sizeof stats;
    CHECK_STATUS(redlock_client_stats(client, &stats), REDLOCK_OK);
    CHECK(stats.struct_size == sizeof stats);
    CHECK(stats.n_masters == n_urls);
    uint64_t requests = 0, failed = 0;
    for (size_t i = 0; i < REDLOCK_MAX_MASTERS; i++) {
        requests += stats.masters[i].requests;
        failed += stats.masters[i].failures;
        CHECK(stats.masters[i].failures <= stats.masters[i].requests);
    }
    CHECK(stats.master_requests == requests && stats.master_failures == failed);
    return stats;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The quantiles are ordered, and lie within the acquire calls' durations as this program
 * timed them from outside (`shortest_ms`, `longest_ms`), give or take the stated error. */
static void check_quantiles(const redlock_stats *s, double shortest_ms, double longest_ms) {
    CHECK(0 < s->acquire_p50_ms);
    CHECK(s->acquire_p50_ms <= s->acquire_p90_ms && s->acquire_p90_ms <= s->acquire_p99_ms);
    CHECK(s->acquire_p99_ms <= s->acquire_p999_ms && s->acquire_p999_ms <= s->acquire_max_ms);
    /* The library times the call from inside it: never longer than seen from outside (the
     * max is exact to the microsecond, so within 0.001 ms). */
    CHECK(s->acquire_max_ms <= longest_ms + 0.001);
    CHECK(s->acquire_p50_ms <= shortest_ms * (1 + QUANTILE_ERROR) + 0.001);
    if (failures > 0) {
        fprintf(stderr, "quantiles (ms): p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f; "
                        "calls took %.3f to %.3f\n",
                s->acquire_p50_ms, s->acquire_p90_ms, s->acquire_p99_ms, s->acquire_p999_ms,
                s->acquire_max_ms, shortest_ms, longest_ms);
    }
}

static double min2(double a, double b) { return a < b ? a : b; }
static double max2(double a, double b) { return a > b ? a : b; }

/* Two clients, one resource: the holder's figures show an acquisition won, extended and
 * released; the loser's two acquisitions lost to contention, one of them after 3 attempts. */
static void contention(void) {
    redlock_client *holder = test_client();
    redlock_client *loser = test_client();

    redlock_stats fresh = stats_of(holder);
    CHECK(fresh.acquires_acquired == 0 && fresh.attempts_won == 0 && fresh.locks_held == 0);
    CHECK(fresh.master_requests == 0 && fresh.acquire_p50_ms == 0 && fresh.acquire_max_ms == 0);

    redlock_lock *lock = NULL, *lost = NULL;
    double start = now_ms();
    CHECK_STATUS(redlock_acquire(holder, "c:stats", 10000, &lock), REDLOCK_OK);
    double won_ms = now_ms() - start;
    redlock_stats held = stats_of(holder);
    CHECK(held.acquires_acquired == 1 && held.locks_held == 1);

    start = now_ms();
    CHECK_STATUS(redlock_try_acquire(loser, "c:stats", 10000, &lost), REDLOCK_NOT_ACQUIRED);
    double one_attempt_ms = now_ms() - start;
    start = now_ms();
    CHECK_STATUS(redlock_acquire(loser, "c:stats", 10000, &lost), REDLOCK_NOT_ACQUIRED);
    double three_attempts_ms = now_ms() - start;

    CHECK_STATUS(redlock_extend(holder, lock, 10000), REDLOCK_OK);
    CHECK_STATUS(redlock_release(holder, lock), REDLOCK_OK);
    redlock_lock_free(lock);

    redlock_stats h = stats_of(holder);
    CHECK(h.acquires_acquired == 1 && h.acquires_not_acquired == 0);
    CHECK(h.acquires_unavailable == 0 && h.acquires_cancelled == 0);
    CHECK(h.attempts_won == 1 && h.attempts_split == 0 && h.attempts_clean_loss == 0);
    CHECK(h.attempts_expired == 0 && h.attempts_unavailable == 0);
    CHECK(h.extends == 1 && h.releases == 1 && h.locks_held == 0 && h.locks_lost == 0);
    /* Sequential: master 0 is asked first by the acquire, the extend and the release; every
     * round asks a quorum at least. */
    CHECK(h.masters[0].requests >= 3 && h.master_requests >= 9 && h.master_failures == 0);
    /* One acquire: every quantile is its duration (within the error), the max exactly. */
    check_quantiles(&h, won_ms, won_ms);
    CHECK(h.acquire_p50_ms >= h.acquire_max_ms * (1 - QUANTILE_ERROR));

    redlock_stats l = stats_of(loser);
    CHECK(l.acquires_acquired == 0 && l.acquires_not_acquired == 2);
    CHECK(l.acquires_unavailable == 0 && l.locks_held == 0 && l.releases == 0);
    /* The holder's key is on every master (sequential): each of the 1 + 3 attempts is a
     * clean loss, never a split vote or an outage. */
    CHECK(l.attempts_clean_loss == 4 && l.attempts_won == 0 && l.attempts_split == 0);
    CHECK(l.attempts_unavailable == 0 && l.attempts_expired == 0);
    CHECK(l.master_requests >= 4 * 3 && l.master_failures == 0);
    check_quantiles(&l, min2(one_attempt_ms, three_attempts_ms),
                    max2(one_attempt_ms, three_attempts_ms));
    /* Of two values, p90 and above are the larger: the call that waited two retry delays of
     * at least 10 ms each (drawn from [10, 20] ms). */
    CHECK(l.acquire_max_ms >= 20);
    CHECK(l.acquire_p90_ms >= 20 * (1 - QUANTILE_ERROR));

    redlock_client_free(loser);
    redlock_client_free(holder);
}

/* Run with masters 0, 1 and 2 of 5 killed: the acquisitions are unavailable, and the
 * failures are counted on those masters only. */
static void unavailable(void) {
    redlock_client *client = test_client();
    redlock_lock *lock = NULL;
    double start = now_ms();
    CHECK_STATUS(redlock_acquire(client, "c:stats:down", 10000, &lock), REDLOCK_UNAVAILABLE);
    double three_attempts_ms = now_ms() - start;
    start = now_ms();
    CHECK_STATUS(redlock_try_acquire(client, "c:stats:down", 10000, &lock), REDLOCK_UNAVAILABLE);
    double one_attempt_ms = now_ms() - start;

    redlock_stats s = stats_of(client);
    CHECK(s.acquires_unavailable == 2 && s.acquires_acquired == 0);
    CHECK(s.acquires_not_acquired == 0 && s.locks_held == 0);
    CHECK(s.attempts_unavailable == 4 && s.attempts_won == 0);
    CHECK(s.attempts_split == 0 && s.attempts_clean_loss == 0);
    /* Sequential: every attempt asked masters 0, 1 and 2 first, and each failed. */
    for (size_t i = 0; i < 3; i++) {
        CHECK(s.masters[i].failures >= 4);
    }
    CHECK(s.masters[3].failures == 0 && s.masters[4].failures == 0);
    CHECK(s.master_failures >= 12);
    check_quantiles(&s, min2(one_attempt_ms, three_attempts_ms),
                    max2(one_attempt_ms, three_attempts_ms));
    redlock_client_free(client);
}

/* Bad arguments are refused with a message naming them and leave the struct alone; a struct
 * of an older (shorter) or newer (longer) header is filled as far as both know. */
static void sizes(void) {
    redlock_client *client = test_client();
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_acquire(client, "c:stats:sizes", 10000, &lock), REDLOCK_OK);
    /* Two acquire calls the core refuses: counted with the `error` outcome, after `masters`. */
    redlock_lock *refused = NULL;
    CHECK_STATUS(redlock_acquire(client, "", 10000, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_acquire(client, "c:stats:zero", 0, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK(refused == NULL);
    redlock_stats counted = stats_of(client);
    CHECK(counted.acquires_error == 2 && counted.acquires_acquired == 1);
    CHECK(counted.acquires_not_acquired == 0 && counted.acquires_unavailable == 0);

    redlock_stats stats, before;
    memset(&stats, 0xAB, sizeof stats);
    stats.struct_size = sizeof stats;
    before = stats;
    CHECK_STATUS(redlock_client_stats(NULL, &stats), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("client is NULL");
    CHECK_STATUS(redlock_client_stats(client, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("out is NULL");
    const size_t bad_sizes[3] = {0, sizeof(size_t) - 1, (size_t)1 << 20};
    const char *named[3] = {"out->struct_size 0:", "out->struct_size 7:",
                            "out->struct_size 1048576:"};
    for (int i = 0; i < 3; i++) {
        stats.struct_size = bad_sizes[i];
        before.struct_size = bad_sizes[i];
        CHECK_STATUS(redlock_client_stats(client, &stats), REDLOCK_INVALID_ARGUMENT);
        CHECK_MESSAGE(named[i]);
        CHECK_MESSAGE("sizeof(redlock_stats)");
        CHECK(memcmp(&stats, &before, sizeof stats) == 0);
    }

    /* An older header whose struct ended before the quantiles, in a buffer of exactly that
     * size (AddressSanitizer catches a write past it). */
    size_t older = offsetof(redlock_stats, acquire_p50_ms);
    redlock_stats *short_one = malloc(older);
    CHECK(short_one != NULL);
    if (short_one != NULL) {
        short_one->struct_size = older;
        CHECK_STATUS(redlock_client_stats(client, short_one), REDLOCK_OK);
        CHECK(strcmp(redlock_last_error_message(), "") == 0);
        CHECK(short_one->struct_size == older);
        CHECK(short_one->acquires_acquired == 1 && short_one->master_failures == 0);
        free(short_one);
    }
    /* The header before `acquires_error` (it ended with `masters`): filled up to there. */
    size_t before_error = offsetof(redlock_stats, acquires_error);
    redlock_stats *no_error = malloc(before_error);
    CHECK(no_error != NULL);
    if (no_error != NULL) {
        no_error->struct_size = before_error;
        CHECK_STATUS(redlock_client_stats(client, no_error), REDLOCK_OK);
        CHECK(no_error->struct_size == before_error);
        CHECK(no_error->acquires_acquired == 1 && no_error->n_masters == n_urls);
        free(no_error);
    }
    /* A size that ends inside a field: the field is not written, its bytes are zeroed. */
    unsigned char *odd = malloc(12);
    CHECK(odd != NULL);
    if (odd != NULL) {
        memset(odd, 0xAB, 12);
        size_t twelve = 12;
        memcpy(odd, &twelve, sizeof twelve);
        CHECK_STATUS(redlock_client_stats(client, (redlock_stats *)(void *)odd), REDLOCK_OK);
        size_t filled;
        memcpy(&filled, odd, sizeof filled);
        CHECK(filled == 8);
        CHECK(odd[8] == 0 && odd[9] == 0 && odd[10] == 0 && odd[11] == 0);
        free(odd);
    }
    /* A newer header with fields this library does not know: they come back 0. */
    struct {
        redlock_stats known;
        uint64_t added[4];
    } newer;
    memset(&newer, 0xAB, sizeof newer);
    newer.known.struct_size = sizeof newer;
    CHECK_STATUS(redlock_client_stats(client, &newer.known), REDLOCK_OK);
    CHECK(newer.known.struct_size == sizeof(redlock_stats));
    CHECK(newer.known.acquires_acquired == 1 && newer.known.locks_held == 1);
    CHECK(newer.known.acquires_error == 2);
    CHECK(newer.added[0] == 0 && newer.added[3] == 0);

    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_client_free(client);
}

#define THREADS 4
#define CYCLES 25

static redlock_client *shared_client;

static void *cycles(void *arg) {
    int thread = *(const int *)arg;
    for (int i = 0; i < CYCLES; i++) {
        char resource[48];
        snprintf(resource, sizeof resource, "c:stats:thread:%d:%d", thread, i);
        redlock_lock *lock = NULL;
        CHECK_STATUS(redlock_acquire(shared_client, resource, 10000, &lock), REDLOCK_OK);
        if (lock != NULL) {
            CHECK_STATUS(redlock_release(shared_client, lock), REDLOCK_OK);
            redlock_lock_free(lock);
        }
        redlock_stats s; /* read while the other threads record */
        s.struct_size = sizeof s;
        CHECK_STATUS(redlock_client_stats(shared_client, &s), REDLOCK_OK);
    }
    return NULL;
}

/* Threads sharing one client: no count is lost. */
static void threads(void) {
    shared_client = test_client();
    pthread_t ids[THREADS];
    int numbers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        numbers[t] = t;
        CHECK(pthread_create(&ids[t], NULL, cycles, &numbers[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(ids[t], NULL);
    }
    redlock_stats s = stats_of(shared_client);
    CHECK(s.acquires_acquired == THREADS * CYCLES && s.releases == THREADS * CYCLES);
    CHECK(s.attempts_won == THREADS * CYCLES && s.locks_held == 0);
    CHECK(s.acquire_p50_ms <= s.acquire_p99_ms && s.acquire_p99_ms <= s.acquire_max_ms);
    redlock_client_free(shared_client);
}

int main(int argc, char **argv) {
    static const test_case cases[] = {
        {"contention", contention},
        {"unavailable", unavailable},
        {"sizes", sizes},
        {"threads", threads},
    };
    return run_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
