// The C++ test suite of redlock.hpp, one case per run:  test_guard CASE URL...
// Driven by ffi/tests/c_abi.rs against real local masters; prints "ok CASE" on success.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "redlock.hpp"

using namespace std::chrono_literals;

static_assert(!std::is_copy_constructible_v<redlock::Client>, "Client is move-only");
static_assert(!std::is_copy_assignable_v<redlock::Client>, "Client is move-only");
static_assert(std::is_nothrow_move_constructible_v<redlock::Client>, "Client moves");
static_assert(!std::is_copy_constructible_v<redlock::Lock>, "Lock is move-only");
static_assert(!std::is_copy_constructible_v<redlock::Guard>, "Guard is move-only");
static_assert(std::is_nothrow_move_constructible_v<redlock::Guard>, "Guard moves");

static int failures = 0;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                  \
    } while (0)

static std::vector<std::string> urls;

// Sequential by default: when an acquire returns, its key is on every master that is up.
static redlock::Client connected_client(redlock_fanout fanout = REDLOCK_FANOUT_SEQUENTIAL) {
    redlock::Options options = redlock::default_options();
    options.fanout = fanout;
    options.retry_count = 2;
    options.retry_delay_ms = 20;
    options.instance_timeout_ms = 2000; // generous enough for a run under valgrind
    redlock::Client client(urls, options);
    client.wait_connected(5s);
    return client;
}

// Calls `f`, which must throw redlock::Error with `status`; returns the error's message.
static std::string expect_error(redlock_status status, const std::function<void()> &f) {
    try {
        f();
    } catch (const redlock::Error &e) {
        CHECK(e.status() == status);
        return e.what();
    }
    failures++;
    std::fprintf(stderr, "expected %s, nothing was thrown\n", redlock_status_str(status));
    return "";
}

// The guard holds the lock for its scope and releases it on exit, also on an exception.
static void guard_scope() {
    redlock::Client client = connected_client(REDLOCK_FANOUT_CONCURRENT);
    redlock::Client other = connected_client();
    {
        redlock::Guard guard(client, "cpp:scope", 10s);
        CHECK(guard.holds());
        CHECK(guard.lock().resource() == "cpp:scope");
        CHECK(guard.lock().token().size() == 40);
        CHECK(guard.lock().validity() > 9s && guard.lock().validity() < 10s);
        CHECK(guard.lock().vote().granted >= 3);
        CHECK(!other.try_acquire("cpp:scope", 1s).has_value());
        guard.extend(20s);
        CHECK(guard.lock().validity() > 19s && guard.lock().extensions() == 1);
    }
    auto after = other.try_acquire("cpp:scope", 1s);
    CHECK(after.has_value());
    CHECK(after && other.release(*after) == urls.size());

    try {
        redlock::Guard guard(client, "cpp:throw", 10s);
        throw std::runtime_error("work failed");
    } catch (const std::runtime_error &) {
    }
    auto thrown = other.try_acquire("cpp:throw", 1s); // it would be held for 10 s otherwise
    CHECK(thrown.has_value());
    CHECK(thrown && other.release(*thrown) == urls.size());

    // An acquire the core refuses (empty resource) counts as the `error` outcome.
    CHECK(expect_error(REDLOCK_INVALID_ARGUMENT, [&] { (void)other.try_acquire("", 1s); })
              .find("resource") != std::string::npos);

    // `other` lost one acquisition to the guard, then won and released two.
    redlock::Stats stats = other.stats();
    CHECK(stats.acquires_not_acquired == 1 && stats.acquires_acquired == 2);
    CHECK(stats.acquires_error == 1 && stats.acquires_unavailable == 0);
    CHECK(stats.releases == 2 && stats.locks_held == 0 && stats.n_masters == urls.size());
    CHECK(stats.acquire_max_ms > 0 && stats.acquire_p50_ms <= stats.acquire_max_ms);

    // Moving a guard moves the ownership: one release, by the guard that ends last.
    {
        redlock::Guard first(client, "cpp:moved", 10s);
        redlock::Guard second(std::move(first));
        CHECK(!first.holds() && second.holds());
        CHECK(second.release() >= 3); // 5 masters: at least their majority
        CHECK(!second.holds() && second.release() == 0);
    }
    // Moving the client keeps the guards' handle valid.
    redlock::Client moved(std::move(client));
    CHECK(expect_error(REDLOCK_INVALID_ARGUMENT, [&] { client.stats(); }).find("client is NULL") !=
          std::string::npos);
    redlock::Guard guard(moved, "cpp:moved-client", 10s);
    CHECK(guard.release() >= 3);
}

// Failures are redlock::Error with the status, the message and, for operations, the vote.
static void errors() {
    redlock::Client holder = connected_client();
    redlock::Client loser = connected_client();
    redlock::Guard held(holder, "cpp:contended", 10s);
    try {
        loser.acquire("cpp:contended", 10s);
        failures++;
        std::fprintf(stderr, "acquire of a held resource did not throw\n");
    } catch (const redlock::Error &e) {
        CHECK(e.status() == REDLOCK_NOT_ACQUIRED);
        CHECK(std::strcmp(e.status_name(), "REDLOCK_NOT_ACQUIRED") == 0);
        CHECK(std::string(e.what()).find("cpp:contended") != std::string::npos);
        CHECK(e.vote().has_value() && e.vote()->granted == 0);
    }
    std::string message = expect_error(REDLOCK_INVALID_ARGUMENT, [] {
        redlock::Client bad(std::vector<std::string>{"redis://127.0.0.1:notaport"});
    });
    CHECK(message.find("notaport") != std::string::npos);
    message = expect_error(REDLOCK_INVALID_ARGUMENT, [&] { loser.acquire("cpp:ttl", 0ms); });
    CHECK(message.find("ttl_ms 0") != std::string::npos);
    expect_error(REDLOCK_INVALID_ARGUMENT, [] { redlock::Client none(std::vector<std::string>{}); });

    // A lock released behind the guard's back: extend reports LOCK_LOST.
    redlock::Guard guard(holder, "cpp:lost", 10s);
    std::size_t released = holder.release(guard.lock());
    if (released != urls.size()) {
        failures++;
        std::fprintf(stderr, "released on %zu masters, expected %zu\n", released, urls.size());
    }
    expect_error(REDLOCK_LOCK_LOST, [&] { guard.extend(10s); });
}

// Waiting: a Guard with a wait timeout throws when the resource stays busy; the
// std::try_to_lock one does not, and owns the lock once it is free. Resources are string_views.
static void guard_wait() {
    redlock::Client holder = connected_client();
    redlock::Client waiter = connected_client();
    const char buffer[] = "cpp:wait and more"; // not NUL-terminated where the view ends
    std::string_view resource(buffer, 8);
    std::optional<redlock::Lock> held = holder.try_acquire(resource, 10s);
    CHECK(held.has_value() && held->resource() == "cpp:wait");

    std::string message =
        expect_error(REDLOCK_NOT_ACQUIRED, [&] { redlock::Guard guard(waiter, resource, 5s, 100ms); });
    CHECK(message.find("cpp:wait") != std::string::npos);

    redlock::Guard busy(waiter, resource, 5s, std::try_to_lock, 100ms);
    CHECK(!busy.owns_lock() && !busy && busy.release() == 0);

    CHECK(held && holder.release(*held) == urls.size());
    redlock::Guard free_now(waiter, resource, 5s, std::try_to_lock);
    CHECK(free_now.owns_lock() && bool(free_now) && free_now.lock().resource() == "cpp:wait");
    CHECK(!holder.try_acquire("cpp:wait", 1s).has_value());
    CHECK(free_now.release() == urls.size());

    redlock::Guard waited(waiter, std::string_view("cpp:waited"), 5s, 1s);
    CHECK(waited.owns_lock() && waited.lock().resource() == "cpp:waited");
    CHECK(std::strcmp(redlock_status_str(REDLOCK_LOCK_LOST), "REDLOCK_LOCK_LOST") == 0);
}

// Waits (bounded) until the guard's lock has no validity left: a condition, not a fixed sleep.
static void wait_until_expired(const redlock::Guard &guard) {
    auto give_up = std::chrono::steady_clock::now() + 60s;
    while (guard.lock().remaining() > 0ms && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(20ms);
    }
    CHECK(guard.lock().remaining() == 0ms);
    // remaining() rounds down: at 0 ms up to 1 ms of validity may be left, which the core's
    // scope rule still counts as valid. Past this instant + 1 ms it has run out (both clocks
    // are monotonic).
    auto expired_by = std::chrono::steady_clock::now() + 1ms;
    while (std::chrono::steady_clock::now() < expired_by) {
        std::this_thread::sleep_for(1ms);
    }
}

// The scope rule: release() throws REDLOCK_LOCK_LOST when the validity ran out before it (the
// release is still made); the destructor cannot throw and swallows it; a lock released in
// time is no error.
static void guard_expiry() {
    redlock::Client client = connected_client(REDLOCK_FANOUT_CONCURRENT);
    {
        redlock::Guard in_time(client, "cpp:in-time", 10s);
        CHECK(in_time.release() == urls.size());
    }
    redlock::Guard guard(client, "cpp:expired", 1s);
    wait_until_expired(guard);
    try {
        guard.release();
        failures++;
        std::fprintf(stderr, "release after expiry did not throw\n");
    } catch (const redlock::Error &e) {
        CHECK(e.status() == REDLOCK_LOCK_LOST);
        CHECK(std::string(e.what()).find("cpp:expired") != std::string::npos);
        CHECK(std::string(e.what()).find("validity ran out") != std::string::npos);
        CHECK(e.vote().has_value()); // the release's vote: how many masters released
    }
    CHECK(!guard.owns_lock() && guard.release() == 0);
    {
        redlock::Guard quiet(client, "cpp:expired-quietly", 1s);
        wait_until_expired(quiet);
    } // the destructor swallows the report
    auto next = client.try_acquire("cpp:expired-quietly", 1s);
    CHECK(next.has_value());
    CHECK(next && client.release(*next) == urls.size());
}

// A fenced client's guards carry increasing tokens; an unfenced one's carry none.
static void guard_fencing() {
    redlock::Options options = redlock::default_options();
    options.fencing = 1;
    redlock::Client fenced(urls, options);
    fenced.wait_connected(5s);
    std::uint64_t previous = 0;
    for (int i = 0; i < 3; i++) {
        redlock::Guard guard(fenced, "cpp:fenced", 10s);
        std::optional<std::uint64_t> token = guard.fencing_token();
        CHECK(token.has_value() && *token > previous);
        CHECK(token == guard.lock().fencing_token());
        previous = token.value_or(previous);
    }
    redlock::Client plain = connected_client();
    redlock::Guard guard(plain, "cpp:unfenced", 10s);
    CHECK(!guard.fencing_token().has_value());
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s CASE URL...\n", argv[0]);
        return 2;
    }
    urls.assign(argv + 2, argv + argc);
    const std::map<std::string, void (*)()> cases = {
        {"guard_scope", guard_scope}, {"errors", errors}, {"guard_wait", guard_wait},
        {"guard_expiry", guard_expiry}, {"guard_fencing", guard_fencing}};
    auto found = cases.find(argv[1]);
    if (found == cases.end()) {
        std::fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    try {
        found->second();
    } catch (const std::exception &e) {
        failures++;
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    }
    if (failures > 0) {
        std::fprintf(stderr, "FAILED %s: %d check(s)\n", argv[1], failures);
        return 1;
    }
    std::printf("ok %s\n", argv[1]);
    return 0;
}
