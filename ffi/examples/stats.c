/*
 * stats.c: a client's figures since it was created (redlock_client_stats): acquisitions by
 * outcome, attempts by result, locks held, requests per master, acquire latency quantiles.
 *
 *   cc -Wall -Wextra -pedantic stats.c $(pkg-config --cflags --libs redlock) -o stats
 *   ./stats redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
 */
#include <stdio.h>

#include <redlock.h>

static void print_stats(const redlock_client *client) {
    /* struct_size says how much room the struct has; the library says how much it filled. */
    redlock_stats s = {.struct_size = sizeof s};
    redlock_status status = redlock_client_stats(client, &s);
    if (status != REDLOCK_OK) {
        fprintf(stderr, "redlock_client_stats: %s: %s\n", redlock_status_str(status),
                redlock_last_error_message());
        return;
    }
    printf("acquires: %llu acquired, %llu not acquired, %llu unavailable, %llu error\n",
           (unsigned long long)s.acquires_acquired, (unsigned long long)s.acquires_not_acquired,
           (unsigned long long)s.acquires_unavailable, (unsigned long long)s.acquires_error);
    printf("attempts: %llu won, %llu split, %llu clean loss, %llu expired, %llu unavailable\n",
           (unsigned long long)s.attempts_won, (unsigned long long)s.attempts_split,
           (unsigned long long)s.attempts_clean_loss, (unsigned long long)s.attempts_expired,
           (unsigned long long)s.attempts_unavailable);
    printf("locks: %lld held, %llu lost; %llu extends, %llu releases\n", (long long)s.locks_held,
           (unsigned long long)s.locks_lost, (unsigned long long)s.extends,
           (unsigned long long)s.releases);
    printf("acquire latency: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms\n",
           s.acquire_p50_ms, s.acquire_p90_ms, s.acquire_p99_ms, s.acquire_p999_ms,
           s.acquire_max_ms);
    printf("requests: %llu, %llu failed\n", (unsigned long long)s.master_requests,
           (unsigned long long)s.master_failures);
    for (size_t i = 0; i < s.n_masters; i++) {
        printf("  master %zu: %llu requests, %llu failed\n", i,
               (unsigned long long)s.masters[i].requests,
               (unsigned long long)s.masters[i].failures);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s redis://host:port [redis://host:port ...]\n", argv[0]);
        return 2;
    }
    redlock_options opts = redlock_options_default();
    redlock_client *client = NULL;
    redlock_status status =
        redlock_client_new((const char *const *)&argv[1], (size_t)(argc - 1), &opts, &client);
    if (status != REDLOCK_OK) {
        fprintf(stderr, "redlock_client_new: %s\n", redlock_last_error_message());
        return 1;
    }

    /* One acquisition that wins, and one that loses to it (the same resource, one attempt). */
    redlock_lock *lock = NULL, *second = NULL;
    status = redlock_acquire(client, "orders:42", 10000, &lock);
    if (status == REDLOCK_OK) {
        status = redlock_try_acquire(client, "orders:42", 10000, &second);
        printf("second acquire: %s\n", redlock_status_str(status));
        if (status == REDLOCK_OK) { /* not expected: the first still holds it */
            redlock_release(client, second);
            redlock_lock_free(second);
        }
        status = redlock_release(client, lock);
        redlock_lock_free(lock);
    } else {
        fprintf(stderr, "redlock_acquire: %s\n", redlock_last_error_message());
    }

    print_stats(client);
    redlock_client_free(client);
    return status == REDLOCK_OK ? 0 : 1;
}
