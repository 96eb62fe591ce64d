/*
 * redlock.hpp: header-only C++17 wrapper of redlock.h (libredlock).
 *
 *   redlock::Client client({"redis://127.0.0.1:7001", "redis://127.0.0.1:7002",
 *                           "redis://127.0.0.1:7003"});
 *   {
 *       redlock::Guard guard(client, "orders:42", std::chrono::seconds(10));
 *       // ... act as the owner while guard.lock().remaining() > 0 ...
 *       guard.release(); // throws REDLOCK_LOCK_LOST if the validity ran out before this
 *   }   // released here otherwise, also when an exception leaves the scope
 *
 *   // Like std::unique_lock(mutex, timeout): try for up to 2 s, no exception when busy.
 *   redlock::Guard maybe(client, "orders:43", 10s, std::try_to_lock, 2s);
 *   if (maybe) { ... }
 *
 * - Client, Lock and Guard own their C handle (RAII) and are move-only.
 * - Every failure throws redlock::Error, carrying the redlock_status, the library's message
 *   and, for an operation that asked the masters, its vote.
 * - A Client is safe to share between threads (const methods); a Lock or Guard is not.
 * - A Guard keeps the client's C handle: the Client must outlive its guards (moving the
 *   Client is fine).
 */
#ifndef REDLOCK_HPP
#define REDLOCK_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex> // std::try_to_lock
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redlock.h"

namespace redlock {

using Options = redlock_options;
using Vote = redlock_vote;
using Stats = redlock_stats;

/// The library's defaults (redlock_options_default()).
inline Options default_options() { return redlock_options_default(); }

/// A failed call: its status, the library's message and, when the operation asked the
/// masters, the vote (e.g. vote()->granted == 0 when someone else holds the lock).
class Error : public std::runtime_error {
public:
    Error(redlock_status status, const std::string &message, std::optional<Vote> vote = {})
        : std::runtime_error(message), status_(status), vote_(vote) {}

    redlock_status status() const noexcept { return status_; }
    /// The status's name, e.g. "REDLOCK_NOT_ACQUIRED".
    const char *status_name() const noexcept { return redlock_status_str(status_); }
    const std::optional<Vote> &vote() const noexcept { return vote_; }

private:
    redlock_status status_;
    std::optional<Vote> vote_;
};

namespace detail {

/// Throws the Error of a failed call (reads the thread's message and vote at once).
inline void check(redlock_status status, bool with_vote = false) {
    if (status == REDLOCK_OK) {
        return;
    }
    std::string message = redlock_last_error_message();
    std::optional<Vote> vote;
    if (with_vote) {
        Vote v{};
        if (redlock_last_vote(&v) == REDLOCK_OK) {
            vote = v;
        }
    }
    throw Error(status, message, vote);
}

inline std::uint64_t to_ms(std::chrono::milliseconds d) {
    return d.count() < 0 ? 0 : static_cast<std::uint64_t>(d.count());
}

/// A resource name as the C API takes it (NUL-terminated): a `std::string_view` need not be.
inline std::string c_string(std::string_view s) { return std::string(s); }

} // namespace detail

/// A held lock (owns a redlock_lock; frees it, without releasing, when destroyed).
class Lock {
public:
    Lock(Lock &&other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {}
    Lock &operator=(Lock &&other) noexcept {
        if (this != &other) {
            redlock_lock_free(lock_);
            lock_ = std::exchange(other.lock_, nullptr);
        }
        return *this;
    }
    Lock(const Lock &) = delete;
    Lock &operator=(const Lock &) = delete;
    ~Lock() { redlock_lock_free(lock_); }

    std::string_view resource() const { return view(redlock_lock_resource(lock_)); }
    /// The random token proving ownership (40 hex characters).
    std::string_view token() const { return view(redlock_lock_token(lock_)); }
    /// Validity computed at the acquire or last extend: ttl - elapsed - drift.
    std::chrono::milliseconds validity() const {
        return std::chrono::milliseconds(redlock_lock_validity_ms(lock_));
    }
    /// Validity left now; act as the owner only while it is above zero.
    std::chrono::milliseconds remaining() const {
        return std::chrono::milliseconds(redlock_lock_remaining_ms(lock_));
    }
    std::uint32_t extensions() const { return redlock_lock_extensions(lock_); }
    /// The fencing token (a client with options.fencing = 1), to send with every write to the
    /// protected resource; std::nullopt for a client without fencing.
    std::optional<std::uint64_t> fencing_token() const {
        std::uint64_t token = 0;
        if (redlock_lock_fencing_token(lock_, &token) != REDLOCK_OK) {
            return std::nullopt;
        }
        return token;
    }
    /// The vote that won the lock (its acquire or last extend).
    Vote vote() const {
        Vote v{};
        detail::check(redlock_lock_vote(lock_, &v));
        return v;
    }
    /// The C handle, still owned by this object.
    redlock_lock *get() const noexcept { return lock_; }

private:
    friend class Client;
    explicit Lock(redlock_lock *lock) noexcept : lock_(lock) {}
    static std::string_view view(const char *s) { return s ? std::string_view(s) : std::string_view(); }

    redlock_lock *lock_;
};

/// A Redlock client over N masters (owns a redlock_client).
class Client {
public:
    explicit Client(const std::vector<std::string> &urls, const Options &options = default_options()) {
        std::vector<const char *> c_urls;
        c_urls.reserve(urls.size());
        for (const auto &url : urls) {
            c_urls.push_back(url.c_str());
        }
        detail::check(redlock_client_new(c_urls.data(), c_urls.size(), &options, &client_));
    }
    Client(Client &&other) noexcept : client_(std::exchange(other.client_, nullptr)) {}
    Client &operator=(Client &&other) noexcept {
        if (this != &other) {
            redlock_client_free(client_);
            client_ = std::exchange(other.client_, nullptr);
        }
        return *this;
    }
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;
    ~Client() { redlock_client_free(client_); }

    /// Waits (at most `timeout`) until every master is connected or known down; returns how
    /// many are connected.
    std::size_t wait_connected(std::chrono::milliseconds timeout) const {
        std::size_t connected = 0;
        detail::check(redlock_client_wait_connected(client_, detail::to_ms(timeout), &connected));
        return connected;
    }
    /// Up to 1 + retry_count attempts; throws Error (REDLOCK_NOT_ACQUIRED, REDLOCK_UNAVAILABLE...).
    Lock acquire(std::string_view resource, std::chrono::milliseconds ttl) const {
        redlock_lock *lock = nullptr;
        detail::check(redlock_acquire(client_, detail::c_string(resource).c_str(), detail::to_ms(ttl), &lock),
                      true);
        return Lock(lock);
    }
    /// One attempt: std::nullopt when someone else holds the resource; throws on other errors.
    std::optional<Lock> try_acquire(std::string_view resource, std::chrono::milliseconds ttl) const {
        redlock_lock *lock = nullptr;
        redlock_status status =
            redlock_try_acquire(client_, detail::c_string(resource).c_str(), detail::to_ms(ttl), &lock);
        if (status == REDLOCK_NOT_ACQUIRED) {
            return std::nullopt;
        }
        detail::check(status, true);
        return Lock(lock);
    }
    /// Attempts for up to `wait`; throws Error when no attempt won.
    Lock acquire_within(std::string_view resource, std::chrono::milliseconds ttl,
                        std::chrono::milliseconds wait) const {
        redlock_lock *lock = nullptr;
        detail::check(redlock_acquire_within(client_, detail::c_string(resource).c_str(), detail::to_ms(ttl),
                                             detail::to_ms(wait), &lock),
                      true);
        return Lock(lock);
    }
    /// Attempts for up to `wait`: std::nullopt when someone else held the resource all along;
    /// throws on other errors (REDLOCK_UNAVAILABLE: Redis is down; bad arguments).
    std::optional<Lock> try_acquire_for(std::string_view resource, std::chrono::milliseconds ttl,
                                        std::chrono::milliseconds wait) const {
        redlock_lock *lock = nullptr;
        redlock_status status = redlock_acquire_within(client_, detail::c_string(resource).c_str(),
                                                       detail::to_ms(ttl), detail::to_ms(wait), &lock);
        if (status == REDLOCK_NOT_ACQUIRED) {
            return std::nullopt;
        }
        detail::check(status, true);
        return Lock(lock);
    }
    /// Renews the lock to `ttl`; throws Error (REDLOCK_LOCK_LOST...) when it could not.
    void extend(Lock &lock, std::chrono::milliseconds ttl) const {
        detail::check(redlock_extend(client_, lock.get(), detail::to_ms(ttl)), true);
    }
    /// Releases the lock on every master still holding it; returns how many released.
    std::size_t release(const Lock &lock) const {
        detail::check(redlock_release(client_, lock.get()), true);
        Vote vote{};
        return redlock_last_vote(&vote) == REDLOCK_OK ? vote.granted : 0;
    }
    /// The client's figures since it was created (redlock_client_stats()): acquisitions by
    /// outcome, attempts by result, requests per master, acquire latency quantiles (ms).
    Stats stats() const {
        Stats stats{};
        stats.struct_size = sizeof stats;
        detail::check(redlock_client_stats(client_, &stats));
        return stats;
    }
    /// The C handle, still owned by this object.
    redlock_client *get() const noexcept { return client_; }

private:
    redlock_client *client_ = nullptr;
};

/// Holds a lock for a scope: releases it when destroyed (errors on that path are swallowed;
/// call release() to see them).
///
/// The scope rule (the same as Python's `with` block): the scope acted as the owner until its
/// end only if the lock was still valid when it was released. release() reports otherwise by
/// throwing Error(REDLOCK_LOCK_LOST) (the release is still made on every master; the error's
/// vote says how many released). A destructor cannot throw, so a Guard that merely goes out
/// of scope swallows that report: end a scope whose work must not outlive the lock with
/// release().
///
/// Like std::unique_lock: the throwing constructors own the lock once built; the
/// std::try_to_lock one may not (check owns_lock() or `if (guard)`).
class Guard {
public:
    /// Acquires `resource` with up to 1 + retry_count attempts (throws Error when it cannot).
    Guard(const Client &client, std::string_view resource, std::chrono::milliseconds ttl)
        : client_(client.get()), lock_(client.acquire(resource, ttl)) {}
    /// Keeps attempting for up to `wait` (throws Error when no attempt won: REDLOCK_NOT_ACQUIRED
    /// if someone else held it all along).
    Guard(const Client &client, std::string_view resource, std::chrono::milliseconds ttl,
          std::chrono::milliseconds wait)
        : client_(client.get()), lock_(client.acquire_within(resource, ttl, wait)) {}
    /// try_lock_for: attempts for up to `wait` (0: one attempt) and does not throw when someone
    /// else holds the resource: owns_lock() is false then. Still throws Error when Redis is
    /// down (REDLOCK_UNAVAILABLE) or an argument is bad.
    Guard(const Client &client, std::string_view resource, std::chrono::milliseconds ttl, std::try_to_lock_t,
          std::chrono::milliseconds wait = std::chrono::milliseconds(0))
        : client_(client.get()), lock_(client.try_acquire_for(resource, ttl, wait)) {}
    /// Takes over a lock already held.
    Guard(const Client &client, Lock lock) : client_(client.get()), lock_(std::move(lock)) {}
    Guard(Guard &&other) noexcept : client_(other.client_), lock_(std::exchange(other.lock_, std::nullopt)) {}
    Guard &operator=(Guard &&) = delete;
    Guard(const Guard &) = delete;
    Guard &operator=(const Guard &) = delete;
    ~Guard() {
        if (lock_) {
            (void)redlock_release_checked(client_, lock_->get());
        }
    }

    /// The held lock. Only while owns_lock().
    const Lock &lock() const { return *lock_; }
    /// The held lock's fencing token (std::nullopt without fencing). Only while owns_lock().
    std::optional<std::uint64_t> fencing_token() const { return lock_->fencing_token(); }
    /// True while the guard holds the lock: acquired, and not released.
    bool owns_lock() const noexcept { return lock_.has_value(); }
    /// owns_lock().
    explicit operator bool() const noexcept { return owns_lock(); }
    /// owns_lock() (the earlier name).
    bool holds() const noexcept { return owns_lock(); }
    /// Renews the lock to `ttl`; throws Error (REDLOCK_LOCK_LOST...) when it could not.
    void extend(std::chrono::milliseconds ttl) {
        detail::check(redlock_extend(client_, lock_->get(), detail::to_ms(ttl)), true);
    }
    /// Releases now (the destructor then does nothing); returns how many masters released.
    /// Throws Error(REDLOCK_LOCK_LOST) when the lock's validity had run out before this
    /// release (see the scope rule above), Error(REDLOCK_UNAVAILABLE...) when it failed.
    std::size_t release() {
        if (!lock_) {
            return 0;
        }
        Lock lock = std::move(*lock_);
        lock_.reset();
        detail::check(redlock_release_checked(client_, lock.get()), true);
        Vote vote{};
        return redlock_last_vote(&vote) == REDLOCK_OK ? vote.granted : 0;
    }

private:
    redlock_client *client_;
    std::optional<Lock> lock_;
};

} // namespace redlock

#endif /* REDLOCK_HPP */
