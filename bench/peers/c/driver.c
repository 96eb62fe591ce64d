/*
 * `make bench-peers` driver of this project's C ABI (libredlock, ffi/include/redlock.h).
 *
 * Same command line, workloads and JSON result line as the Rust drivers
 * (bench/peers/workload): W1 one thread, W2/W3 one pthread per task sharing one client.
 * W3 configures the client's own retry (100 retries, delay drawn from [10, 20] ms).
 * CPU: getrusage(RUSAGE_SELF) over the measured window only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "redlock.h"

enum workload { W1, W2, W3 };

struct args {
    const char *driver;
    enum workload workload;
    char *masters; /* comma-separated, split in place */
    long cycles;
    long tasks;
    double seconds;
    uint64_t ttl_ms;
};

struct samples {
    uint64_t *acquire_ns, *release_ns;
    size_t len, cap;
    uint64_t acquire_failed, release_failed;
    char error[256]; /* the first error message */
};

struct task {
    pthread_t thread;
    const struct args *args;
    redlock_client *client;
    pthread_barrier_t *barrier;
    const uint64_t *deadline_ns; /* W3 only; written before the barrier opens */
    char key[64];
    struct samples samples;
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_now(double *user, double *sys) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    *user = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6;
    *sys = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static const char *workload_name(enum workload w) {
    return w == W1 ? "w1" : w == W2 ? "w2" : "w3";
}

static void fail(const struct args *args, const char *what, const char *why) {
    printf("{\"driver\":");
    json_string(args->driver);
    printf(",\"workload\":\"%s\",\"failed\":", workload_name(args->workload));
    char reason[512];
    snprintf(reason, sizeof reason, "%s: %s", what, why);
    json_string(reason);
    printf("}\n");
    exit(2);
}

static void usage(const char *why) {
    fprintf(stderr, "c-driver: %s\n", why);
    exit(64);
}

static double positive(const char *flag, const char *value) {
    char *end;
    errno = 0;
    double n = strtod(value, &end);
    if (errno || *end || !(n > 0)) {
        fprintf(stderr, "c-driver: %s \"%s\": expected a positive number\n", flag, value);
        exit(64);
    }
    return n;
}

static struct args parse(int argc, char **argv) {
    struct args a = {"c", W1, NULL, 2000, 16, 10.0, 10000};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) usage("a flag is missing its value");
        const char *flag = argv[i], *value = argv[i + 1];
        if (!strcmp(flag, "--driver")) a.driver = value;
        else if (!strcmp(flag, "--library")) continue;
        else if (!strcmp(flag, "--workload")) {
            if (!strcmp(value, "w1")) a.workload = W1;
            else if (!strcmp(value, "w2")) a.workload = W2;
            else if (!strcmp(value, "w3")) a.workload = W3;
            else usage("--workload: expected w1, w2 or w3");
        } else if (!strcmp(flag, "--masters")) a.masters = argv[i + 1];
        else if (!strcmp(flag, "--cycles")) a.cycles = (long)positive(flag, value);
        else if (!strcmp(flag, "--tasks")) a.tasks = (long)positive(flag, value);
        else if (!strcmp(flag, "--seconds")) a.seconds = positive(flag, value);
        else if (!strcmp(flag, "--ttl")) a.ttl_ms = (uint64_t)(positive(flag, value) * 1000.0);
        else usage("unknown flag");
    }
    if (!a.masters) usage("--masters is required");
    if (a.workload == W1) a.tasks = 1;
    return a;
}

static void push(struct samples *s, uint64_t acquire, uint64_t release) {
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->acquire_ns = realloc(s->acquire_ns, s->cap * sizeof *s->acquire_ns);
        s->release_ns = realloc(s->release_ns, s->cap * sizeof *s->release_ns);
        if (!s->acquire_ns || !s->release_ns) abort();
    }
    s->acquire_ns[s->len] = acquire;
    s->release_ns[s->len] = release;
    s->len++;
}

static void note_error(struct samples *s) {
    if (!s->error[0]) snprintf(s->error, sizeof s->error, "%s", redlock_last_error_message());
}

static void *run_task(void *arg) {
    struct task *t = arg;
    const struct args *a = t->args;
    pthread_barrier_wait(t->barrier);
    for (long done = 0;; done++) {
        if (a->workload == W3 ? now_ns() >= *t->deadline_ns : done >= a->cycles) break;
        uint64_t began = now_ns();
        redlock_lock *lock = NULL;
        if (redlock_acquire(t->client, t->key, a->ttl_ms, &lock) != REDLOCK_OK) {
            t->samples.acquire_failed++;
            note_error(&t->samples);
            continue;
        }
        uint64_t acquired = now_ns();
        redlock_status released = redlock_release(t->client, lock);
        uint64_t done_at = now_ns();
        redlock_lock_free(lock);
        push(&t->samples, acquired - began, done_at - acquired);
        if (released != REDLOCK_OK) {
            t->samples.release_failed++;
            note_error(&t->samples);
        }
    }
    return NULL;
}

static void print_array(const char *name, struct task *tasks, long n, int acquire) {
    printf(",\"%s\":[", name);
    int first = 1;
    for (long i = 0; i < n; i++) {
        const struct samples *s = &tasks[i].samples;
        for (size_t j = 0; j < s->len; j++) {
            printf(first ? "%llu" : ",%llu",
                   (unsigned long long)(acquire ? s->acquire_ns[j] : s->release_ns[j]));
            first = 0;
        }
    }
    putchar(']');
}

int main(int argc, char **argv) {
    struct args a = parse(argc, argv);
    const char *urls[64];
    size_t n_urls = 0;
    for (char *url = strtok(a.masters, ","); url && n_urls < 64; url = strtok(NULL, ","))
        urls[n_urls++] = url;

    redlock_options opts = redlock_options_default();
    if (a.workload == W3) {
        opts.retry_count = 100;
        opts.retry_delay_ms = 20; /* the delay is drawn from [10, 20] ms */
    }
    redlock_client *client = NULL;
    if (redlock_client_new(urls, n_urls, &opts, &client) != REDLOCK_OK)
        fail(&a, "redlock_client_new", redlock_last_error_message());
    size_t connected = 0;
    redlock_client_wait_connected(client, 5000, &connected);

    redlock_lock *warm = NULL;
    if (redlock_acquire(client, "peers:warm-up", a.ttl_ms, &warm) != REDLOCK_OK)
        fail(&a, "warm-up cycle", redlock_last_error_message());
    redlock_release(client, warm);
    redlock_lock_free(warm);

    struct task *tasks = calloc((size_t)a.tasks, sizeof *tasks);
    pthread_barrier_t barrier;
    uint64_t deadline_ns = 0;
    if (!tasks || pthread_barrier_init(&barrier, NULL, (unsigned)a.tasks + 1))
        fail(&a, "setup", "out of memory");
    for (long i = 0; i < a.tasks; i++) {
        struct task *t = &tasks[i];
        t->args = &a;
        t->client = client;
        t->barrier = &barrier;
        t->deadline_ns = &deadline_ns;
        if (a.workload == W2) snprintf(t->key, sizeof t->key, "peers:w2:%ld", i);
        else snprintf(t->key, sizeof t->key, "peers:%s", workload_name(a.workload));
        if (pthread_create(&t->thread, NULL, run_task, t)) fail(&a, "pthread_create", "failed");
    }
    double user0, sys0, user1, sys1;
    cpu_now(&user0, &sys0);
    uint64_t start = now_ns();
    deadline_ns = start + (uint64_t)(a.seconds * 1e9);
    pthread_barrier_wait(&barrier);
    for (long i = 0; i < a.tasks; i++) pthread_join(tasks[i].thread, NULL);
    uint64_t wall = now_ns() - start;
    cpu_now(&user1, &sys1);

    size_t ok = 0;
    uint64_t acquire_failed = 0, release_failed = 0;
    const char *error = NULL;
    for (long i = 0; i < a.tasks; i++) {
        ok += tasks[i].samples.len;
        acquire_failed += tasks[i].samples.acquire_failed;
        release_failed += tasks[i].samples.release_failed;
        if (!error && tasks[i].samples.error[0]) error = tasks[i].samples.error;
    }
    printf("{\"driver\":");
    json_string(a.driver);
    printf(",\"library\":");
    char library[64];
    snprintf(library, sizeof library, "libredlock %s", redlock_version());
    json_string(library);
    printf(",\"workload\":\"%s\",\"tasks\":%ld,\"ok\":%zu", workload_name(a.workload), a.tasks, ok);
    printf(",\"acquire_failed\":%llu,\"release_failed\":%llu,\"errors\":[",
           (unsigned long long)acquire_failed, (unsigned long long)release_failed);
    if (error) json_string(error);
    printf("],\"wall_s\":%.9f,\"cpu_user_s\":%.6f,\"cpu_sys_s\":%.6f", (double)wall / 1e9,
           user1 - user0, sys1 - sys0);
    print_array("acquire_ns", tasks, a.tasks, 1);
    print_array("release_ns", tasks, a.tasks, 0);
    printf("}\n");
    redlock_client_free(client);
    return 0;
}
