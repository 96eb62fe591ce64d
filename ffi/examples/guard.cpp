// guard.cpp: a complete program that holds a Redlock lock for a scope with the C++ RAII
// wrapper (redlock.hpp), against the masters named on the command line or in REDLOCK_MASTERS.
//
//   c++ -std=c++17 -Wall -Wextra -pedantic guard.cpp $(pkg-config --cflags --libs redlock) -o guard
//   ./guard redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
//   REDLOCK_MASTERS=redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003 ./guard
//
// Local masters to try it with: `redlock-masters --until-signal > urls.txt &`, then
// `./guard $(cat urls.txt)` (see the book's "Local masters" page).
//
// Exit status: 0 done, 1 the lock is held by someone else (REDLOCK_NOT_ACQUIRED), 2 bad usage,
// 3 Redis is down or unreachable (REDLOCK_UNAVAILABLE), 4 any other error.
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <redlock.hpp>

namespace {

enum Exit { DONE = 0, HELD_BY_ANOTHER = 1, USAGE = 2, REDIS_DOWN = 3, OTHER_ERROR = 4 };

/// The master URLs: the arguments, else REDLOCK_MASTERS split at commas.
std::vector<std::string> master_urls(int argc, char **argv) {
    std::vector<std::string> urls(argv + 1, argv + argc);
    if (urls.empty()) {
        if (const char *listed = std::getenv("REDLOCK_MASTERS")) {
            std::istringstream words(listed);
            for (std::string url; std::getline(words, url, ',');) {
                if (!url.empty()) {
                    urls.push_back(url);
                }
            }
        }
    }
    return urls;
}

/// Exit status of a failed call: tell "someone else holds it" from "Redis is down".
int exit_status(const redlock::Error &e) {
    switch (e.status()) {
    case REDLOCK_NOT_ACQUIRED:
        return HELD_BY_ANOTHER;
    case REDLOCK_UNAVAILABLE:
        return REDIS_DOWN;
    default:
        return OTHER_ERROR;
    }
}

} // namespace

int main(int argc, char **argv) {
    const std::vector<std::string> urls = master_urls(argc, argv);
    if (urls.empty()) {
        std::cerr << "usage: " << argv[0] << " redis://host:port [redis://host:port ...]\n"
                  << "   or: REDLOCK_MASTERS=redis://host:port,redis://host:port,... " << argv[0] << "\n";
        return USAGE;
    }
    using namespace std::chrono_literals;
    try {
        redlock::Client client(urls);
        {
            redlock::Guard guard(client, "reports:nightly", 10s);
            std::cout << "locked " << guard.lock().resource() << " for " << guard.lock().validity().count()
                      << " ms (" << guard.lock().vote().granted << " of " << urls.size() << " masters)\n";
            // ... work while guard.lock().remaining() > 0ms; extend if it takes longer ...
            guard.extend(20s);
            std::cout << "extended: " << guard.lock().validity().count() << " ms\n";
        } // released here, even if the work threw

        if (auto lock = client.try_acquire("reports:nightly", 5s)) {
            std::cout << "free again: released on " << client.release(*lock) << " masters\n";
        }
        return DONE;
    } catch (const redlock::Error &e) {
        // e.what() says what happened, e.g. 'lock on "reports:nightly" not acquired after 4
        // attempts in 612.3 ms: another holder has it; ...'; e.vote() has every master's answer.
        std::cerr << "guard: " << e.status_name() << ": " << e.what() << "\n";
        return exit_status(e);
    } catch (const std::exception &e) {
        std::cerr << "guard: " << e.what() << "\n";
        return OTHER_ERROR;
    }
}
