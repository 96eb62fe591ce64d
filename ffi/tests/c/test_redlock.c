/*
 * The C test suite of libredlock, one case per run:  test_redlock CASE URL...
 *
 * Driven by ffi/tests/c_abi.rs, which starts real local masters, stops some of them for the
 * fault cases, and passes their URLs. Prints "ok CASE" and exits 0 when every check held;
 * prints each failed check (file:line) and exits 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, fork, waitpid, alarm */

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "redlock.h"

/* Test-only export of the `test-hooks` feature: panics inside the panic boundary. */
redlock_status redlock_test_panic(void);


/* Options of the test clients: quick retries, and a per-master timeout generous enough for
 * a run under valgrind (no case here depends on a master timing out). */
static redlock_options test_options(uint32_t fanout) {
    redlock_options opts = redlock_options_default();
    opts.fanout = fanout;
    opts.retry_count = 2;
    opts.retry_delay_ms = 20;
    opts.instance_timeout_ms = 2000;
    return opts;
}

/* A test client, connected to every master that is up. */
static redlock_client *client_with(uint32_t fanout) {
    redlock_options opts = test_options(fanout);
    return connected_client(&opts);
}

static redlock_vote last_vote(void) {
    redlock_vote vote;
    memset(&vote, 0, sizeof vote);
    CHECK_STATUS(redlock_last_vote(&vote), REDLOCK_OK);
    return vote;
}

static int is_hex_token(const char *token) {
    if (token == NULL || strlen(token) != 40) {
        return 0;
    }
    return strspn(token, "0123456789abcdef") == 40;
}

/* Acquire, inspect, extend, release; in both fan-out modes. */
static void round_trip(void) {
    const uint32_t fanouts[2] = {REDLOCK_FANOUT_SEQUENTIAL, REDLOCK_FANOUT_CONCURRENT};
    for (int f = 0; f < 2; f++) {
        redlock_client *client = client_with(fanouts[f]);
        redlock_client *other = client_with(fanouts[f]);
        redlock_lock *lock = NULL;
        CHECK_STATUS(redlock_acquire(client, "c:round-trip", 10000, &lock), REDLOCK_OK);
        CHECK(lock != NULL);
        CHECK(lock != NULL && strcmp(redlock_lock_resource(lock), "c:round-trip") == 0);
        CHECK(is_hex_token(redlock_lock_token(lock)));
        CHECK(redlock_lock_validity_ms(lock) > 9000 && redlock_lock_validity_ms(lock) < 10000);
        CHECK(redlock_lock_remaining_ms(lock) <= redlock_lock_validity_ms(lock));
        CHECK(redlock_lock_extensions(lock) == 0);

        redlock_vote vote;
        CHECK_STATUS(redlock_lock_vote(lock, &vote), REDLOCK_OK);
        /* The driver runs this case on 5 masters: the default quorum is their majority, 3. */
        CHECK(vote.n_masters == 5 && vote.quorum == 3);
        CHECK(vote.granted >= vote.quorum && vote.denied == 0 && vote.failed == 0);
        CHECK(vote.granted + vote.not_awaited == n_urls);
        CHECK(vote.verdict == REDLOCK_VERDICT_WON);
        CHECK(vote.validity_us > 9000000 && vote.validity_us < 10000000);
        CHECK(vote.elapsed_us < 10000000);
        for (size_t i = 0; i < vote.n_masters; i++) {
            if (vote.masters[i].outcome == REDLOCK_OUTCOME_GRANTED) {
                CHECK(vote.masters[i].round_trip_us >= 0);
                CHECK(vote.masters[i].failure == REDLOCK_FAILURE_NONE);
            }
        }
        redlock_vote same = last_vote(); /* the acquire's vote is also the thread's last */
        CHECK(same.granted == vote.granted && same.elapsed_us == vote.elapsed_us);

        /* Held: another client cannot take it. */
        redlock_lock *stolen = NULL;
        CHECK_STATUS(redlock_try_acquire(other, "c:round-trip", 10000, &stolen), REDLOCK_NOT_ACQUIRED);
        CHECK(stolen == NULL);

        CHECK_STATUS(redlock_extend(client, lock, 30000), REDLOCK_OK);
        CHECK(redlock_lock_validity_ms(lock) > 20000 && redlock_lock_validity_ms(lock) < 30000);
        CHECK(redlock_lock_extensions(lock) == 1);
        CHECK(last_vote().granted >= last_vote().quorum);

        CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
        /* Sequential set the key everywhere; concurrent may not have sent its not-awaited
         * requests, but at least the quorum that granted holds it. */
        redlock_vote released = last_vote();
        CHECK(released.granted == n_urls || (fanouts[f] == REDLOCK_FANOUT_CONCURRENT &&
                                             released.granted >= vote.quorum));
        CHECK(released.granted + released.denied == n_urls); /* release waits for every master */
        CHECK(strcmp(redlock_last_error_message(), "") == 0);

        /* Released: the other client gets it at once; releasing ours again releases nothing. */
        CHECK_STATUS(redlock_try_acquire(other, "c:round-trip", 10000, &stolen), REDLOCK_OK);
        CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
        CHECK(last_vote().granted == 0);
        CHECK_STATUS(redlock_extend(client, lock, 10000), REDLOCK_LOCK_LOST);
        CHECK_MESSAGE("c:round-trip");
        CHECK_STATUS(redlock_release(other, stolen), REDLOCK_OK);
        redlock_lock_free(stolen);
        redlock_lock_free(lock);
        redlock_client_free(other);
        redlock_client_free(client);
    }
}

/* Two clients, one resource: the loser sees NOT_ACQUIRED and a vote with 0 granted. */
static void contention(void) {
    /* A sequential holder has its key on every master when its acquire returns (a concurrent
     * one may still have requests in flight to the masters it did not wait for). */
    redlock_client *holder = client_with(REDLOCK_FANOUT_SEQUENTIAL);
    redlock_client *loser = client_with(REDLOCK_FANOUT_SEQUENTIAL);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_acquire(holder, "c:contended", 10000, &lock), REDLOCK_OK);

    redlock_lock *lost = (redlock_lock *)&failures; /* sentinel: must stay untouched */
    CHECK_STATUS(redlock_try_acquire(loser, "c:contended", 10000, &lost), REDLOCK_NOT_ACQUIRED);
    CHECK(lost == (redlock_lock *)&failures);
    CHECK_MESSAGE("c:contended");
    CHECK_MESSAGE("not acquired after 1 attempt in ");
    CHECK_MESSAGE(" ms: another holder has it"); /* C's unit: milliseconds */
    redlock_vote vote = last_vote();
    CHECK_MESSAGE("not acquired"); /* reading the vote left the message alone */
    CHECK(vote.granted == 0 && vote.denied >= vote.quorum && vote.failed == 0);
    CHECK(vote.denied + vote.not_awaited == n_urls);
    CHECK(vote.granted + vote.denied + vote.failed + vote.not_awaited == vote.n_masters);
    CHECK(vote.verdict == REDLOCK_VERDICT_CLEAN_LOSS && vote.validity_us == -1);
    CHECK(vote.masters[0].outcome == REDLOCK_OUTCOME_DENIED); /* sequential: asked first */

    /* With retries too (2 retries of at most 20 ms). */
    CHECK_STATUS(redlock_acquire(loser, "c:contended", 10000, &lost), REDLOCK_NOT_ACQUIRED);
    CHECK(last_vote().granted == 0);
    CHECK_STATUS(redlock_acquire_within(loser, "c:contended", 10000, 50, &lost), REDLOCK_NOT_ACQUIRED);
    CHECK(lost == (redlock_lock *)&failures);
    CHECK(strcmp(redlock_status_str(REDLOCK_NOT_ACQUIRED), "REDLOCK_NOT_ACQUIRED") == 0);

    CHECK_STATUS(redlock_release(holder, lock), REDLOCK_OK);
    redlock_lock *won = NULL;
    CHECK_STATUS(redlock_acquire_within(loser, "c:contended", 10000, 1000, &won), REDLOCK_OK);
    CHECK_STATUS(redlock_release(loser, won), REDLOCK_OK);
    redlock_lock_free(won);
    redlock_lock_free(lock);
    redlock_client_free(loser);
    redlock_client_free(holder);
}

/* Run with masters 0 and 1 of 5 killed: the 3 others are still a quorum. */
static void two_masters_down(void) {
    const uint32_t fanouts[2] = {REDLOCK_FANOUT_SEQUENTIAL, REDLOCK_FANOUT_CONCURRENT};
    for (int f = 0; f < 2; f++) {
        redlock_client *client = client_with(fanouts[f]);
        redlock_lock *lock = NULL;
        CHECK_STATUS(redlock_acquire(client, "c:two-down", 10000, &lock), REDLOCK_OK);
        redlock_vote vote;
        CHECK_STATUS(redlock_lock_vote(lock, &vote), REDLOCK_OK);
        CHECK(vote.granted == 3);
        CHECK(vote.masters[0].outcome != REDLOCK_OUTCOME_GRANTED);
        CHECK(vote.masters[1].outcome != REDLOCK_OUTCOME_GRANTED);
        CHECK(vote.masters[0].outcome != REDLOCK_OUTCOME_FAILED ||
              vote.masters[0].failure == REDLOCK_FAILURE_CONNECTION);
        CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
        vote = last_vote();
        CHECK(vote.granted == 3 && vote.failed == 2);
        redlock_lock_free(lock);
        redlock_client_free(client);
    }
}

/* Run with masters 0, 1 and 2 of 5 killed: no quorum, and the status says Redis is down. */
static void three_masters_down(void) {
    const uint32_t fanouts[2] = {REDLOCK_FANOUT_SEQUENTIAL, REDLOCK_FANOUT_CONCURRENT};
    for (int f = 0; f < 2; f++) {
        redlock_client *client = client_with(fanouts[f]);
        redlock_lock *lock = NULL;
        CHECK_STATUS(redlock_acquire(client, "c:three-down", 10000, &lock), REDLOCK_UNAVAILABLE);
        CHECK(lock == NULL);
        CHECK_MESSAGE("unavailable after 3 attempts in ");
        CHECK_MESSAGE(" ms: 3 of 5 masters could not be reached");
        redlock_vote vote = last_vote();
        CHECK(vote.failed >= 3 && vote.granted <= 2);
        /* An outage without contention: never a split vote or a clean loss. */
        CHECK(vote.denied == 0 && vote.verdict == REDLOCK_VERDICT_UNAVAILABLE);
        CHECK(vote.granted + vote.denied + vote.failed + vote.not_awaited == vote.n_masters);
        CHECK(vote.masters[0].outcome == REDLOCK_OUTCOME_FAILED ||
              vote.masters[0].outcome == REDLOCK_OUTCOME_NOT_AWAITED);
        redlock_client_free(client);
    }
}

/* NULL in every pointer argument of every function: INVALID_ARGUMENT (or the documented
 * NULL/0 of an accessor), outputs untouched, never a crash. */
static void null_arguments(void) {
    redlock_client *const sentinel_client = (redlock_client *)&failures;
    redlock_lock *const sentinel_lock = (redlock_lock *)&failures;
    redlock_options opts = redlock_options_default();

    redlock_client *client = sentinel_client;
    CHECK_STATUS(redlock_client_new(NULL, n_urls, &opts, &client), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("urls is NULL");
    CHECK(client == sentinel_client);
    const char *with_null[3] = {urls[0], NULL, urls[1]};
    CHECK_STATUS(redlock_client_new(with_null, 3, &opts, &client), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("urls[1] is NULL");
    CHECK(client == sentinel_client);
    CHECK_STATUS(redlock_client_new(urls, n_urls, &opts, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("out is NULL");
    /* NULL options mean the defaults. */
    client = NULL;
    CHECK_STATUS(redlock_client_new(urls, n_urls, NULL, &client), REDLOCK_OK);
    CHECK(client != NULL);
    redlock_client_free(client);
    client = client_with(REDLOCK_FANOUT_CONCURRENT);

    size_t connected = 99;
    CHECK_STATUS(redlock_client_wait_connected(NULL, 10, &connected), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("client is NULL");
    CHECK_STATUS(redlock_client_wait_connected(client, 10, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("out_connected is NULL");
    CHECK(connected == 99);

    typedef redlock_status (*acquire_fn)(const redlock_client *, const char *, uint64_t, redlock_lock **);
    const acquire_fn acquires[2] = {redlock_acquire, redlock_try_acquire};
    for (int i = 0; i < 2; i++) {
        redlock_lock *lock = sentinel_lock;
        CHECK_STATUS(acquires[i](NULL, "c:null", 1000, &lock), REDLOCK_INVALID_ARGUMENT);
        CHECK_MESSAGE("client is NULL");
        CHECK_STATUS(acquires[i](client, NULL, 1000, &lock), REDLOCK_INVALID_ARGUMENT);
        CHECK_MESSAGE("resource is NULL");
        CHECK_STATUS(acquires[i](client, "c:null", 1000, NULL), REDLOCK_INVALID_ARGUMENT);
        CHECK_MESSAGE("out is NULL");
        CHECK(lock == sentinel_lock);
    }
    redlock_lock *lock = sentinel_lock;
    CHECK_STATUS(redlock_acquire_within(NULL, "c:null", 1000, 10, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_acquire_within(client, NULL, 1000, 10, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_acquire_within(client, "c:null", 1000, 10, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK(lock == sentinel_lock);
    /* No master was asked: there is no vote. */
    redlock_vote vote;
    CHECK_STATUS(redlock_last_vote(&vote), REDLOCK_NO_VOTE);
    CHECK_STATUS(redlock_last_vote(NULL), REDLOCK_INVALID_ARGUMENT);

    /* Nothing was left behind by the refused calls: the key is free. */
    lock = NULL;
    CHECK_STATUS(redlock_try_acquire(client, "c:null", 10000, &lock), REDLOCK_OK);
    CHECK_STATUS(redlock_extend(NULL, lock, 1000), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("client is NULL");
    CHECK_STATUS(redlock_extend(client, NULL, 1000), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("lock is NULL");
    CHECK_STATUS(redlock_release(NULL, lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_release(client, NULL), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("lock is NULL");
    CHECK_STATUS(redlock_lock_vote(NULL, &vote), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_lock_vote(lock, NULL), REDLOCK_INVALID_ARGUMENT);

    CHECK(redlock_lock_resource(NULL) == NULL);
    CHECK(redlock_lock_token(NULL) == NULL);
    CHECK(redlock_lock_validity_ms(NULL) == 0);
    CHECK(redlock_lock_remaining_ms(NULL) == 0);
    CHECK(redlock_lock_extensions(NULL) == 0);
    CHECK(redlock_last_error_message() != NULL);
    CHECK(redlock_version() != NULL);

    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_client_free(client);
}

/* Bad values: each refused with a message naming it. */
static void invalid_input(void) {
    redlock_client *client = client_with(REDLOCK_FANOUT_CONCURRENT);
    redlock_lock *lock = NULL;

    CHECK_STATUS(redlock_acquire(client, "c:\x80\xfe-bad", 1000, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("resource \"c:\\x80\\xfe-bad\" is not valid UTF-8");
    CHECK_STATUS(redlock_try_acquire(client, "c:ttl", 0, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("ttl_ms 0");
    CHECK_STATUS(redlock_acquire(client, "c:ttl", 1, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("ttl_ms 1: must be longer than the clock-drift allowance 2.01 ms");
    CHECK_STATUS(redlock_acquire(client, "", 1000, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("resource \"\"");
    CHECK_STATUS(redlock_acquire(client, "c:ttl", UINT64_MAX, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("larger than the maximum");
    CHECK(lock == NULL);

    CHECK_STATUS(redlock_try_acquire(client, "c:extend", 10000, &lock), REDLOCK_OK);
    CHECK_STATUS(redlock_extend(client, lock, 0), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("ttl_ms 0");
    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_client_free(client);

    redlock_client *refused = NULL;
    const char *bad_port[1] = {"redis://127.0.0.1:notaport"};
    CHECK_STATUS(redlock_client_new(bad_port, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("redis://127.0.0.1:notaport");
    const char *secret[1] = {"redis://user:s3cret@127.0.0.1:notaport"};
    CHECK_STATUS(redlock_client_new(secret, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK(strstr(redlock_last_error_message(), "s3cret") == NULL);
    const char *not_a_url[1] = {"localhost"};
    CHECK_STATUS(redlock_client_new(not_a_url, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("localhost");
    const char *bad_utf8[1] = {"redis://127.0.0.1:1/\xff"};
    CHECK_STATUS(redlock_client_new(bad_utf8, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("urls[0] \"redis://127.0.0.1:1/\\xff\" is not valid UTF-8");
    /* Passwords stay hidden in every message: not UTF-8, URL delimiters in the password. */
    const char *secret_bad_utf8[1] = {"redis://user:S3cretPass@127.0.0.1:1/\xff"};
    CHECK_STATUS(redlock_client_new(secret_bad_utf8, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("urls[0] \"redis://user:***@127.0.0.1:1/\\xff\" is not valid UTF-8");
    CHECK(strstr(redlock_last_error_message(), "S3cretPass") == NULL);
    const char *secret_delimiter[1] = {"redis://user:S3cretPass#x@127.0.0.1:1"};
    CHECK_STATUS(redlock_client_new(secret_delimiter, 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("user:***@127.0.0.1:1");
    CHECK(strstr(redlock_last_error_message(), "S3cretPass") == NULL);
    /* The same server twice would vote twice: refused, naming both positions. */
    const char *twice[3] = {urls[0], urls[1], urls[0]};
    CHECK_STATUS(redlock_client_new(twice, 3, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("master URL #2");
    CHECK_MESSAGE("same server");
    CHECK_MESSAGE("master URL #0");
    CHECK_STATUS(redlock_client_new(urls, 0, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("at least one master");
    const char *many[REDLOCK_MAX_MASTERS + 1];
    for (size_t i = 0; i <= REDLOCK_MAX_MASTERS; i++) {
        many[i] = urls[0];
    }
    CHECK_STATUS(redlock_client_new(many, REDLOCK_MAX_MASTERS + 1, NULL, &refused), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("n_urls 33");

    /* Options with one field out of range are refused, naming the field and its value. */
#define CHECK_OPTION_REFUSED(field, value, needle)                                        \
    do {                                                                                 \
        redlock_options opts_ = redlock_options_default();                               \
        opts_.field = (value);                                                           \
        CHECK_STATUS(redlock_client_new(urls, n_urls, &opts_, &refused),                 \
                     REDLOCK_INVALID_ARGUMENT);                                          \
        CHECK_MESSAGE(needle);                                                           \
    } while (0)
    CHECK_OPTION_REFUSED(fanout, 9, "fanout 9");
    CHECK_OPTION_REFUSED(quorum, 2, "quorum 2"); /* below the majority of 5 */
    CHECK_OPTION_REFUSED(drift_factor, 1.5, "drift_factor 1.5");
    CHECK_OPTION_REFUSED(instance_timeout_ms, 0, "instance_timeout_ms 0");
    CHECK_OPTION_REFUSED(disable_local_handoff, 2, "disable_local_handoff 2");
    CHECK_OPTION_REFUSED(fencing, 2, "fencing 2");
#undef CHECK_OPTION_REFUSED
    CHECK(refused == NULL);
}

static void double_free(void) {
    redlock_lock_free(NULL);
    redlock_lock_free(NULL);
    redlock_client_free(NULL);
    redlock_client_free(NULL);
    /* A client freed while one of its locks lives on: the lock handle stays readable. */
    redlock_client *client = client_with(REDLOCK_FANOUT_SEQUENTIAL);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_try_acquire(client, "c:outlives", 10000, &lock), REDLOCK_OK);
    redlock_client_free(client);
    CHECK(lock != NULL && strcmp(redlock_lock_resource(lock), "c:outlives") == 0);
    /* ... and any client over the same masters can still release it. */
    redlock_client *other = client_with(REDLOCK_FANOUT_SEQUENTIAL);
    CHECK_STATUS(redlock_release(other, lock), REDLOCK_OK);
    CHECK(last_vote().granted == n_urls);
    redlock_lock_free(lock);
    redlock_client_free(other);
}

/* 8 threads share one client and hammer one resource: never two holders at once. */
enum { THREADS = 8, CYCLES = 25 };
static redlock_client *shared_client;
static atomic_int holders;
static atomic_int overlaps;
static atomic_int won;
static atomic_int lost;
static atomic_int unexpected;

static void *hammer(void *arg) {
    (void)arg;
    for (int i = 0; i < CYCLES; i++) {
        redlock_lock *lock = NULL;
        redlock_status status = redlock_acquire(shared_client, "c:hammer", 5000, &lock);
        if (status == REDLOCK_NOT_ACQUIRED) {
            atomic_fetch_add(&lost, 1);
            continue;
        }
        if (status != REDLOCK_OK) {
            fprintf(stderr, "hammer: %s: %s\n", redlock_status_str(status), redlock_last_error_message());
            atomic_fetch_add(&unexpected, 1);
            continue;
        }
        atomic_fetch_add(&won, 1);
        if (atomic_fetch_add(&holders, 1) != 0) {
            atomic_fetch_add(&overlaps, 1);
        }
        struct timespec hold = {0, 200000}; /* the critical section: 0.2 ms */
        nanosleep(&hold, NULL);
        if (redlock_lock_remaining_ms(lock) == 0) { /* held past validity: not exclusive */
            atomic_fetch_add(&unexpected, 1);
        }
        atomic_fetch_sub(&holders, 1);
        if (redlock_release(shared_client, lock) != REDLOCK_OK) {
            atomic_fetch_add(&unexpected, 1);
        }
        redlock_lock_free(lock);
    }
    return NULL;
}

static void threads(void) {
    redlock_options opts = test_options(REDLOCK_FANOUT_CONCURRENT);
    opts.retry_count = 20;
    opts.retry_delay_ms = 10;
    CHECK_STATUS(redlock_client_new(urls, n_urls, &opts, &shared_client), REDLOCK_OK);
    size_t connected = 0;
    CHECK_STATUS(redlock_client_wait_connected(shared_client, 5000, &connected), REDLOCK_OK);
    pthread_t ids[THREADS];
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&ids[i], NULL, hammer, NULL) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(ids[i], NULL);
    }
    printf("threads: %d won, %d not acquired, %d overlaps\n", atomic_load(&won),
           atomic_load(&lost), atomic_load(&overlaps));
    CHECK(atomic_load(&overlaps) == 0);
    CHECK(atomic_load(&unexpected) == 0);
    CHECK(atomic_load(&won) + atomic_load(&lost) == THREADS * CYCLES);
    CHECK(atomic_load(&won) >= THREADS); /* every thread got through at least once on average */
    redlock_client_free(shared_client);
}

/* A panic inside the library becomes REDLOCK_PANIC; the library keeps working. */
static void panic_boundary(void) {
    CHECK_STATUS(redlock_test_panic(), REDLOCK_PANIC);
    CHECK_MESSAGE("redlock_test_panic: internal panic: test-only panic trigger");
    CHECK(strcmp(redlock_status_str(REDLOCK_PANIC), "REDLOCK_PANIC") == 0);
    redlock_client *client = client_with(REDLOCK_FANOUT_CONCURRENT);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_try_acquire(client, "c:after-panic", 1000, &lock), REDLOCK_OK);
    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_client_free(client);
}

/* redlock_options of other sizes: an older, shorter struct (allocated at exactly its size, so
 * ASan/valgrind catch a read past it) is accepted with the defaults for the fields it lacks;
 * a newer, longer one only when the fields this library does not know are 0. */
static void options_versions(void) {
    redlock_client *client = NULL;
    /* As if quorum and max_extensions came in a later version: their (bad) values are not read. */
    size_t older_size = offsetof(redlock_options, quorum);
    redlock_options *older = malloc(older_size);
    CHECK(older != NULL);
    CHECK_STATUS(redlock_options_init(older, older_size), REDLOCK_OK);
    CHECK(older->struct_size == older_size && older->retry_count == 3);
    older->retry_count = 1;
    CHECK_STATUS(redlock_client_new(urls, n_urls, older, &client), REDLOCK_OK);
    redlock_client_free(client);
    client = NULL;
    free(older);

    /* The smallest: struct_size and fanout only. */
    struct {
        size_t struct_size;
        uint32_t fanout;
    } first = {sizeof first, REDLOCK_FANOUT_SEQUENTIAL};
    CHECK_STATUS(redlock_client_new(urls, n_urls, (const redlock_options *)(const void *)&first, &client),
                 REDLOCK_OK);
    redlock_client_free(client);
    client = NULL;

    struct {
        redlock_options known;
        uint64_t added_later;
    } newer;
    CHECK_STATUS(redlock_options_init(&newer.known, sizeof newer), REDLOCK_OK);
    CHECK(newer.known.struct_size == sizeof newer && newer.added_later == 0);
    CHECK_STATUS(redlock_client_new(urls, n_urls, &newer.known, &client), REDLOCK_OK);
    redlock_client_free(client);
    client = NULL;
    newer.added_later = 7;
    CHECK_STATUS(redlock_client_new(urls, n_urls, &newer.known, &client), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("opts->struct_size");

    redlock_options zeroed;
    memset(&zeroed, 0, sizeof zeroed); /* not started from redlock_options_default() */
    CHECK_STATUS(redlock_client_new(urls, n_urls, &zeroed, &client), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("opts->struct_size 0");
    CHECK_STATUS(redlock_options_init(NULL, sizeof zeroed), REDLOCK_INVALID_ARGUMENT);
    CHECK_STATUS(redlock_options_init(&zeroed, 3), REDLOCK_INVALID_ARGUMENT);
    CHECK_MESSAGE("size 3");
    CHECK(client == NULL);
}

/* A 1 MiB resource that is not UTF-8: the message names it, shows its start, and stays short. */
static void huge_resource(void) {
    redlock_client *client = client_with(REDLOCK_FANOUT_CONCURRENT);
    size_t size = (size_t)1 << 20;
    char *resource = malloc(size + 1);
    CHECK(resource != NULL);
    memset(resource, 'r', size);
    resource[10] = (char)0xff;
    resource[size] = '\0';
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_acquire(client, resource, 1000, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK(strlen(redlock_last_error_message()) < 256);
    CHECK_MESSAGE("resource \"rrrrrrrrrr\\xff");
    CHECK_MESSAGE("bad byte at offset 10; 1048576 bytes in all");
    CHECK(lock == NULL);
    /* Valid UTF-8 but over the 64 KiB limit: refused before anything is sent, the message
     * naming the parameter and the limit, not echoing the name. */
    resource[10] = 'r';
    CHECK_STATUS(redlock_acquire(client, resource, 1000, &lock), REDLOCK_INVALID_ARGUMENT);
    CHECK(strlen(redlock_last_error_message()) < 512);
    CHECK_MESSAGE("resource \"rrrr");
    CHECK_MESSAGE("the maximum is 65536 bytes");
    CHECK(lock == NULL);
    /* At the limit: accepted. */
    resource[65536] = '\0';
    CHECK_STATUS(redlock_acquire(client, resource, 1000, &lock), REDLOCK_OK);
    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    redlock_lock_free(lock);
    free(resource);
    redlock_client_free(client);
}

/* A client used in a forked child fails at once with a clear message instead of waiting
 * forever for I/O threads that exist only in the parent; a new client in the child works. */
static void fork_child(void) {
    redlock_client *client = client_with(REDLOCK_FANOUT_CONCURRENT);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_try_acquire(client, "c:fork", 30000, &lock), REDLOCK_OK);
    /* The child reports its failed checks through a pipe: its exit status may be a memory
     * checker's, which counts what the parent's I/O threads own as lost there (they do not
     * exist in a forked child). */
    int report[2];
    CHECK(pipe(report) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(report[0]);
        alarm(20); /* a call that blocks forever fails the case instead of hanging it */
        redlock_lock *other = NULL;
        CHECK_STATUS(redlock_try_acquire(client, "c:fork-child", 10000, &other), REDLOCK_INVALID_ARGUMENT);
        CHECK_MESSAGE("after fork()");
        CHECK_MESSAGE("create a new client");
        CHECK(other == NULL);
        CHECK_STATUS(redlock_acquire(client, "c:fork-child", 10000, &other), REDLOCK_INVALID_ARGUMENT);
        CHECK_STATUS(redlock_extend(client, lock, 10000), REDLOCK_INVALID_ARGUMENT);
        CHECK_STATUS(redlock_release(client, lock), REDLOCK_INVALID_ARGUMENT);
        size_t connected = 0;
        CHECK_STATUS(redlock_client_wait_connected(client, 1000, &connected), REDLOCK_INVALID_ARGUMENT);
        CHECK(lock != NULL && strcmp(redlock_lock_resource(lock), "c:fork") == 0);
        redlock_client *fresh = client_with(REDLOCK_FANOUT_CONCURRENT);
        CHECK_STATUS(redlock_try_acquire(fresh, "c:fork-child", 10000, &other), REDLOCK_OK);
        CHECK_STATUS(redlock_release(fresh, other), REDLOCK_OK);
        redlock_lock_free(other);
        redlock_client_free(fresh);
        redlock_client_free(client); /* the inherited one: only forgotten, returns at once */
        unsigned char failed = failures > 255 ? 255 : (unsigned char)failures;
        _exit(write(report[1], &failed, 1) == 1 ? 0 : 1);
    }
    close(report[1]);
    unsigned char child_failures = 255;
    CHECK(read(report[0], &child_failures, 1) == 1); /* 0 bytes: the child died first */
    CHECK(child_failures == 0);
    close(report[0]);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "forked child killed by signal %d (blocked?)\n", WTERMSIG(status));
    }
    CHECK(WIFEXITED(status));
    /* The parent's client is untouched by the child. */
    CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
    CHECK(last_vote().granted >= last_vote().quorum);
    redlock_lock_free(lock);
    redlock_client_free(client);
}

/* Status names, defaults and version agree with the header. */
static void constants(void) {
    const char *names[8] = {"REDLOCK_OK", "REDLOCK_NOT_ACQUIRED", "REDLOCK_UNAVAILABLE",
                            "REDLOCK_LOCK_LOST", "REDLOCK_INVALID_ARGUMENT", "REDLOCK_INTERNAL",
                            "REDLOCK_PANIC", "REDLOCK_NO_VOTE"};
    for (int i = 0; i < 8; i++) {
        CHECK(strcmp(redlock_status_str(i), names[i]) == 0);
    }
    CHECK(strcmp(redlock_status_str(8), "REDLOCK_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(redlock_status_str(-1), "REDLOCK_UNKNOWN_STATUS") == 0);
    CHECK(REDLOCK_OK == 0 && REDLOCK_INVALID_ARGUMENT == 4 && REDLOCK_PANIC == 6);
    redlock_options opts = redlock_options_default();
    CHECK(opts.fanout == REDLOCK_FANOUT_CONCURRENT && opts.retry_count == 3);
    CHECK(opts.retry_delay_ms == 200 && opts.instance_timeout_ms == 50);
    CHECK(opts.drift_factor == 0.01 && opts.quorum == 0 && opts.max_extensions == 1000);
    CHECK(opts.disable_local_handoff == 0 && opts.fencing == 0);
    CHECK(opts.struct_size == sizeof(redlock_options));
    CHECK(strcmp(redlock_version(), REDLOCK_VERSION) == 0);
    CHECK(strcmp(redlock_outcome_str(REDLOCK_OUTCOME_NOT_AWAITED), "not_awaited") == 0);
    CHECK(strcmp(redlock_outcome_str((redlock_outcome)42), "unknown") == 0);
    CHECK(strcmp(redlock_verdict_str(REDLOCK_VERDICT_SPLIT_VOTE), "split_vote") == 0);
    CHECK(strcmp(redlock_verdict_str(REDLOCK_VERDICT_UNAVAILABLE), "unavailable") == 0);
    CHECK(REDLOCK_VERDICT_CLEAN_LOSS == 3 && REDLOCK_VERDICT_UNAVAILABLE == 4);
    /* The driver compares these with the Rust layouts. */
    printf("sizes: options %zu vote %zu master_vote %zu status %zu stats %zu\n",
           sizeof(redlock_options), sizeof(redlock_vote), sizeof(redlock_master_vote),
           sizeof(redlock_status), sizeof(redlock_stats));
}

/* 100 fresh clients, each locking at once (connections still opening): the lock reaches
 * every master, so the release after it deletes the key on all of them. The per-master
 * timeout (test_options) is far beyond any stall, so every release is awaited. */
static void fresh_clients(void) {
    for (int round = 0; round < 100; round++) {
        redlock_options opts = test_options(REDLOCK_FANOUT_CONCURRENT);
        redlock_client *client = NULL;
        CHECK_STATUS(redlock_client_new(urls, n_urls, &opts, &client), REDLOCK_OK);
        if (client == NULL) {
            return;
        }
        char resource[32];
        snprintf(resource, sizeof resource, "c:fresh:%d", round);
        redlock_lock *lock = NULL;
        CHECK_STATUS(redlock_acquire(client, resource, 10000, &lock), REDLOCK_OK);
        if (lock != NULL) {
            CHECK_STATUS(redlock_release(client, lock), REDLOCK_OK);
            redlock_vote vote = last_vote();
            if (vote.granted != n_urls) {
                failures++;
                fprintf(stderr, "round %d: released on %zu of %zu masters\n", round,
                        vote.granted, n_urls);
            }
            redlock_lock_free(lock);
        }
        redlock_client_free(client);
    }
}

/* Every master refuses us: the status is UNAVAILABLE, and the message and every master's
 * vote name the cause given in REDLOCK_EXPECT_FAILURE (a redlock_failure number) and
 * REDLOCK_EXPECT_WORDS (words of the server or socket error). */
static void failure_cause(void) {
    const char *failure = getenv("REDLOCK_EXPECT_FAILURE");
    const char *words = getenv("REDLOCK_EXPECT_WORDS");
    if (failure == NULL || words == NULL) {
        fprintf(stderr, "failure_cause needs REDLOCK_EXPECT_FAILURE and REDLOCK_EXPECT_WORDS\n");
        exit(2);
    }
    /* Sequential: every master is asked and answers (concurrent fan-out stops listening
     * once failures alone decide the round). */
    redlock_client *client = client_with(REDLOCK_FANOUT_SEQUENTIAL);
    redlock_lock *lock = NULL;
    CHECK_STATUS(redlock_acquire(client, "c:cause", 10000, &lock), REDLOCK_UNAVAILABLE);
    CHECK(lock == NULL);
    CHECK_MESSAGE(words);
    redlock_vote vote = last_vote();
    CHECK(vote.n_masters == n_urls && vote.failed == n_urls);
    for (size_t i = 0; i < vote.n_masters; i++) {
        CHECK(vote.masters[i].outcome == REDLOCK_OUTCOME_FAILED);
        CHECK((int)vote.masters[i].failure == atoi(failure));
        CHECK(strstr(vote.masters[i].error, words) != NULL);
        CHECK(strlen(vote.masters[i].error) < REDLOCK_MASTER_ERROR_LEN);
    }
    redlock_client_free(client);
}

int main(int argc, char **argv) {
    static const test_case cases[] = {
        {"round_trip", round_trip},
        {"contention", contention},
        {"two_masters_down", two_masters_down},
        {"three_masters_down", three_masters_down},
        {"null_arguments", null_arguments},
        {"invalid_input", invalid_input},
        {"double_free", double_free},
        {"threads", threads},
        {"panic_boundary", panic_boundary},
        {"constants", constants},
        {"options_versions", options_versions},
        {"huge_resource", huge_resource},
        {"fresh_clients", fresh_clients},
        {"failure_cause", failure_cause},
        {"fork_child", fork_child},
    };
    return run_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
