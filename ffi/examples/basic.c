/*
 * basic.c: acquire a lock on N Redis masters, look at the vote, extend, release.
 *
 *   cc -Wall -Wextra -pedantic basic.c $(pkg-config --cflags --libs redlock) -o basic
 *   ./basic redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
 */
#include <stdio.h>

#include <redlock.h>

static int fail(const char *what, redlock_status status) {
    fprintf(stderr, "%s: %s: %s\n", what, redlock_status_str(status), redlock_last_error_message());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s redis://host:port [redis://host:port ...]\n", argv[0]);
        return 2;
    }
    const char *const *urls = (const char *const *)&argv[1];
    size_t n_urls = (size_t)(argc - 1);

    redlock_options opts = redlock_options_default();
    opts.fanout = REDLOCK_FANOUT_CONCURRENT;
    opts.retry_count = 3;

    redlock_client *client = NULL;
    redlock_status status = redlock_client_new(urls, n_urls, &opts, &client);
    if (status != REDLOCK_OK) {
        return fail("redlock_client_new", status);
    }

    redlock_lock *lock = NULL;
    status = redlock_acquire(client, "orders:42", 10000, &lock);
    if (status == REDLOCK_NOT_ACQUIRED) {
        printf("someone else holds orders:42\n");
    } else if (status != REDLOCK_OK) {
        redlock_client_free(client);
        return fail("redlock_acquire", status); /* e.g. REDLOCK_UNAVAILABLE: Redis is down */
    } else {
        redlock_vote vote;
        redlock_lock_vote(lock, &vote);
        printf("locked %s (token %s): %zu/%zu granted, valid for %llu ms\n",
               redlock_lock_resource(lock), redlock_lock_token(lock), vote.granted,
               vote.n_masters, (unsigned long long)redlock_lock_validity_ms(lock));
        for (size_t i = 0; i < vote.n_masters; i++) {
            printf("  master %zu: %s, round trip %lld us\n", i,
                   redlock_outcome_str(vote.masters[i].outcome),
                   (long long)vote.masters[i].round_trip_us);
        }

        /* ... do the work, while redlock_lock_remaining_ms(lock) > 0 ... */

        status = redlock_extend(client, lock, 20000);
        if (status != REDLOCK_OK) {
            fail("redlock_extend", status); /* the lock may be lost: stop acting as owner */
        } else {
            printf("extended: valid for %llu ms\n",
                   (unsigned long long)redlock_lock_validity_ms(lock));
        }

        status = redlock_release(client, lock);
        if (status == REDLOCK_OK) {
            redlock_last_vote(&vote);
            printf("released on %zu masters\n", vote.granted);
        }
        redlock_lock_free(lock); /* release does not free the handle */
    }
    redlock_client_free(client);
    return status == REDLOCK_OK ? 0 : 1;
}
